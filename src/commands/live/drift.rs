//! The live facts of `drift check` and `drift replace`: connect to the cluster and AWS, read
//! the cluster, and let [`drift_check::gather`] resolve every class live.

use crate::cloud::ami::KubeVersion;
use crate::cloud::types::Cloud;
use crate::commands::live;
use crate::commands::Context;
use crate::drift::DriftSnapshot;
use crate::error::CommandError;
use crate::k8s::client::KubeClient;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::Cluster;
use crate::usecases::drift_check::{self, Config};

/// Reads the cluster and AWS into a [`DriftSnapshot`]; the Kubernetes version is the flag's,
/// else the API server's.
pub fn gather(
    ctx: &mut Context<'_>,
    config: &Config,
) -> Result<(DriftSnapshot, KubeVersion, KubeClient), CommandError> {
    gather_what_if(ctx, config, None)
}

/// [`gather`], with the NodePools and node classes of `files` in place of the cluster's
/// (what-if, [`drift_check::what_if`]).
pub fn gather_what_if(
    ctx: &mut Context<'_>,
    config: &Config,
    files: Option<&crate::api::Manifests>,
) -> Result<(DriftSnapshot, KubeVersion, KubeClient), CommandError> {
    let cluster = live::connect_cluster(ctx)?;
    let version = match config.kubernetes_version {
        Some((v, _)) => v,
        None => live::kubernetes_version(ctx, &cluster)?,
    };
    let mut read = snapshot::read(&cluster.client, Scope::default())?;
    if let Some(files) = files {
        drift_check::what_if(&mut read.manifests, files)?;
    }
    let cloud = live::connect_aws(ctx)?;
    let mut snapshot = drift_check::gather(
        &read.manifests,
        &cloud,
        version,
        crate::commands::unix_now(),
        &mut |cloud| live::catalog(ctx, cloud, config.catalog.as_deref()),
    )?;
    snapshot.ca_bundle = match drift_check::ca_bundle(&cluster.client) {
        Ok(bundle) => bundle,
        Err(forbidden) => {
            ctx.warn(&format!(
                "the cluster CA bundle is not read ({forbidden}): EC2NodeClass hashes of version v5 cannot be checked"
            ));
            None
        }
    };
    ctx.note(&format!(
        "{} Kubernetes requests; AWS: {}",
        cluster.client.request_count(),
        cloud.call_counts().summary()
    ));
    Ok((snapshot, version, cluster.client))
}
