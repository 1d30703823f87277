//! Connecting a live command: the cluster (kubeconfig flags), the operator lease of mutating
//! runs, the running-controller guard, the Kubernetes version, AWS and the catalog — the
//! concrete adapters the use cases' [`Live`] environment borrows.

use super::Context;
use crate::cli::health::{self, Beating, Health};
use crate::cloud::ami::KubeVersion;
use crate::cloud::aws::{AwsCloud, AwsOptions};
use crate::cloud::live_catalog::{self, LiveOptions};
use crate::cloud::types::Cloud;
use crate::cloud::Catalog;
use crate::error::CommandError;
use crate::k8s::client::KubeClient;
use crate::k8s::coexist;
use crate::k8s::config::ClusterTarget;
use crate::k8s::WriteGate;
use crate::usecases::clock::{Clock, SystemClock};
use crate::usecases::live::Live;

mod controller;
pub mod drift;

pub use super::lease::{take_lease, OperatorLease};
pub use controller::{controller_policies, follow_controller};

pub use crate::usecases::live::aws_error;

/// A connected cluster.
pub struct LiveCluster {
    /// Flags and kubeconfig, resolved.
    pub target: ClusterTarget,
    /// The client.
    pub client: KubeClient,
}

/// Connects to the cluster the kubeconfig flags select.
pub fn connect_cluster(ctx: &mut Context<'_>) -> Result<LiveCluster, CommandError> {
    let target = ClusterTarget::from_flags(&ctx.global.kube_flags())?;
    let mut client = KubeClient::connect(&target)?;
    // Ctrl-C during a read's backoff ends the run at once (the lease has a client of its own).
    client.interrupt_backoff_with(SystemClock::backoff);
    ctx.note(&format!(
        "cluster {} (context {}, API {})",
        target.info.name,
        target.context,
        client.server()
    ));
    Ok(LiveCluster { target, client })
}

/// `--kubernetes-version`, else the API server's `/version`.
pub fn kubernetes_version(
    ctx: &Context<'_>,
    cluster: &LiveCluster,
) -> Result<KubeVersion, CommandError> {
    if let Some(v) = super::kubernetes_version_flag(ctx.global)? {
        return Ok(v);
    }
    crate::usecases::ami::server_version(&cluster.client)
}

/// Connects to AWS (region from `--region`, the AWS chain, else a hint from the kubeconfig).
pub fn connect_aws(ctx: &mut Context<'_>) -> Result<AwsCloud, CommandError> {
    let mut cloud = AwsCloud::connect(&AwsOptions {
        region: ctx.global.region.clone(),
        profile: ctx.global.profile.clone(),
        region_hint: crate::cli::kubeconfig::region_hint(ctx.global),
        ..AwsOptions::default()
    })
    .map_err(aws_error)?;
    cloud.interrupt_backoff_with(SystemClock::backoff);
    ctx.note(&format!(
        "AWS region {}{}",
        cloud.region(),
        cloud
            .endpoint()
            .map(|e| format!(", endpoint {e}"))
            .unwrap_or_default()
    ));
    Ok(cloud)
}

/// The catalog: `--catalog`, else the live one (cached), else the embedded snapshot (warned).
pub fn catalog(
    ctx: &mut Context<'_>,
    cloud: &dyn Cloud,
    file: Option<&str>,
) -> Result<Catalog, CommandError> {
    catalog_telling(ctx, cloud, file, true)
}

/// [`catalog`], the live catalog's failure a warning or (`warn` false) a note — `nodes`: AWS
/// is optional there, the embedded snapshot its default, and an unreachable AWS warned once.
pub fn catalog_telling(
    ctx: &mut Context<'_>,
    cloud: &dyn Cloud,
    file: Option<&str>,
    warn: bool,
) -> Result<Catalog, CommandError> {
    if let Some(path) = file {
        return Ok(Catalog::from_file(path)?);
    }
    let embedded = Catalog::embedded()?;
    match live_catalog::load(cloud, &embedded, &LiveOptions::default()) {
        Ok(live) => {
            for w in [&live.cache_warning, &live.spot_warning]
                .into_iter()
                .flatten()
            {
                ctx.note(w);
            }
            if let Some(w) = &live.price_warning {
                if warn {
                    ctx.warn(w);
                } else {
                    ctx.note(w);
                }
            }
            Ok(live.catalog)
        }
        Err(e) => {
            let text = format!(
                "live instance-type catalog unavailable ({e}): using the embedded snapshot"
            );
            if warn {
                ctx.warn(&text);
            } else {
                ctx.note(&text);
            }
            Ok(embedded)
        }
    }
}

/// Everything a live run connects to.
pub struct Connection {
    /// The cluster.
    pub cluster: LiveCluster,
    /// AWS.
    pub cloud: AwsCloud,
    /// The catalog.
    pub catalog: Catalog,
    /// The cluster's Kubernetes version.
    pub version: KubeVersion,
    /// `--instance-profile`.
    pub instance_profile: Option<String>,
}

/// A live environment over the real adapters and the system clock (beating the health
/// endpoint's heart when there is one).
pub type Session<'a> = Live<'a, KubeClient, AwsCloud, Beating>;

/// The health endpoint of `--watch` (`--health-addr`), served from now on; without an address
/// the state is kept and nobody asks.
pub fn health(ctx: &mut Context<'_>, addr: Option<&str>) -> Result<Health, CommandError> {
    let state = Health::default();
    if let Some(addr) = addr {
        let bound = health::serve(addr, state.clone()).map_err(CommandError::input)?;
        ctx.note(&format!(
            "health endpoint on http://{bound} (/healthz, /readyz)"
        ));
    }
    Ok(state)
}

/// Connects to the cluster and AWS; `guard` (`(command, --force)`) refuses (exit 4) when an
/// in-cluster Karpenter controller runs (docs/spec.md §6), before AWS is asked anything. With
/// `lease`, the cluster client stops writing the moment the lease is lost.
pub fn connect(
    ctx: &mut Context<'_>,
    catalog_file: Option<&str>,
    guard: Option<(&str, bool)>,
    lease: Option<&OperatorLease>,
) -> Result<Connection, CommandError> {
    let mut cluster = connect_cluster(ctx)?;
    if let Some(lease) = lease {
        cluster.client.gate_writes(lease.keeper.gate());
        cluster.client.record_reads(lease.health.last_read());
    }
    if let Some((command, force)) = guard {
        if let Some(warning) = coexist::check(&cluster.client, command, force)? {
            ctx.warn(&warning);
        }
    }
    let version = kubernetes_version(ctx, &cluster)?;
    let mut cloud = connect_aws(ctx)?;
    if let Some(lease) = lease {
        // No launch or termination once the lease is lost, as no cluster write (§10).
        let gate = lease.keeper.gate();
        cloud.gate_writes(std::sync::Arc::new(move || gate.closed()));
    }
    let catalog = catalog(ctx, &cloud, catalog_file)?;
    Ok(Connection {
        cluster,
        cloud,
        catalog,
        version,
        instance_profile: ctx.global.instance_profile.clone(),
    })
}

impl Connection {
    /// The use cases' environment over this connection.
    pub fn live<'a, K: Clock>(&'a self, clock: &'a K) -> Live<'a, KubeClient, AwsCloud, K> {
        Live::new(
            &self.cluster.client,
            &self.cloud,
            clock,
            self.cluster.target.info.clone(),
            self.version,
            self.catalog.clone(),
        )
        .with_instance_profile(self.instance_profile.clone())
    }
}

/// The run's `result`, unless the lease was lost on the way: then the loss is the run's error
/// (exit 4, docs/spec.md §10), not what the run made of the refused writes and the stop it
/// caused — a launch that "failed", a wait "interrupted", nodes "not started: interrupted" (a
/// client-go leader that lost its lease ends in `OnStoppedLeading`, whatever it was doing).
pub fn unless_lost<T>(
    lease: Option<&OperatorLease>,
    result: Result<T, CommandError>,
) -> Result<T, CommandError> {
    after(lease.map(|l| l.keeper.gate()).as_ref(), result)
}

/// [`unless_lost`]'s rule, over the lease's gate.
pub(super) fn after<T>(
    gate: Option<&WriteGate>,
    result: Result<T, CommandError>,
) -> Result<T, CommandError> {
    match gate.and_then(super::lease::lost_through) {
        Some(lost) => Err(lost),
        None => result,
    }
}
