//! `kubectl karpenter provision` against a live cluster: plan from the live snapshot, confirm,
//! launch each NodeClaim on EC2, optionally wait for the nodes and pods; `--watch` keeps doing
//! it with Karpenter's batching window and removes nodes that stay empty for
//! `consolidateAfter`.
//!
//! Nothing is kept only in memory (SPEC §3): instances this tool launched carry their NodeClaim
//! name and pool in their tags, and until their Node registers they are read back from EC2 as
//! in-flight capacity, so a re-run after a crash places the same pods on them instead of
//! launching again. NodeClaim names derive from the pods they carry (`<pool>-<hash>`), so an
//! identical retry also finds the same instance by its tag. Emptiness clocks live on the Node
//! (`kubectl-karpenter.io/empty-since`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::live::{self, LiveCluster, ResolvedClass};
use super::provision::{build_input, plan_document, render, PlanDoc};
use super::Context;
use crate::cli::output::{write_document, Table, API_VERSION};
use crate::cli::progress::Progress;
use crate::cli::{OutputFormat, ProvisionArgs};
use crate::cloud::ami::KubeVersion;
use crate::cloud::aws::AwsCloud;
use crate::cloud::launch::{self, LaunchError, LaunchInput, NODECLAIM_TAG};
use crate::cloud::types::{Cloud, Instance};
use crate::cloud::Catalog;
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::snapshot::{self, LiveSnapshot, Scope};
use crate::k8s::{coexist, ops};
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::taints::{Effect, Taint};
use crate::scheduling::{self, ExistingNode, Input, Plan, PlannedNodeClaim};

/// The annotation holding when a node was first seen empty (RFC 3339), so the emptiness clock
/// survives restarts.
pub const EMPTY_SINCE: &str = "kubectl-karpenter.io/empty-since";
/// Karpenter's batching window (KARPENTER.md §6.1): closes after 1 s without new pods…
const BATCH_IDLE: Duration = Duration::from_secs(1);
/// … or 10 s after it opened.
const BATCH_MAX: Duration = Duration::from_secs(10);
/// Default for `--timeout` of `--wait`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// Everything a live run holds between steps (shared with `drift replace`).
pub(crate) struct Session {
    pub(crate) live: LiveCluster,
    pub(crate) cloud: AwsCloud,
    pub(crate) catalog: Catalog,
    pub(crate) version: KubeVersion,
    classes: BTreeMap<String, ResolvedClass>,
    /// `aws.defaultInstanceProfile` of `karpenter-global-settings`, once read.
    default_profile: Option<Option<String>>,
}

/// One launched (or adopted) NodeClaim.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchDoc {
    pub(crate) node_claim: String,
    pub(crate) node_pool: String,
    pub(crate) instance_id: String,
    instance_type: String,
    zone: String,
    capacity_type: String,
    /// It existed already (a retry) and was adopted.
    adopted: bool,
    pub(crate) pods: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pool_errors: Vec<String>,
    /// The launched type's labels (`karpenter.k8s.aws/instance-*`, …), written on the Node once
    /// it registers, as Karpenter's controller copies them from the NodeClaim.
    #[serde(skip)]
    pub(crate) node_labels: BTreeMap<String, String>,
}

/// A NodeClaim that could not be launched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureDoc {
    pub(crate) node_claim: String,
    pub(crate) node_pool: String,
    pub(crate) error: String,
}

/// The `ProvisioningResult` document: the plan and what was done about it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultDoc {
    api_version: &'static str,
    kind: &'static str,
    plan: PlanDoc,
    launched: Vec<LaunchDoc>,
    failed: Vec<FailureDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait: Option<WaitDoc>,
}

/// What `--wait` saw.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitDoc {
    nodes: BTreeMap<String, String>,
    pods_bound: usize,
    pods: usize,
    seconds: f64,
}

/// Runs live `provision`.
pub fn run(ctx: &mut Context<'_>, args: &ProvisionArgs) -> CommandResult {
    let timeout = match &args.timeout {
        None => DEFAULT_WAIT,
        Some(t) => crate::cli::parse_duration_flag(t).ok_or_else(|| {
            CommandError::input(format!("--timeout {t:?}: expected a duration such as 10m"))
        })?,
    };
    if args.watch && args.dry_run {
        return Err(CommandError::input(
            "--watch and --dry-run cannot be combined",
        ));
    }
    let guard = (!args.dry_run).then_some(("provision", args.force));
    let mut session = Session::connect(ctx, args.catalog.as_deref(), guard)?;
    if args.watch {
        return watch(ctx, &mut session, args);
    }
    let mut snapshot = snapshot::read(&session.live.client, Scope::PODS)?;
    let round = session.plan(ctx, &mut snapshot, args)?;
    let Some((plan, input)) = round else {
        if matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml) {
            write_document(
                ctx.out,
                ctx.global.output,
                &plan_document(&Plan::default(), &session.cloud.region()),
            )
            .map_err(io)?;
        } else {
            writeln!(ctx.out, "No pending pods: nothing to launch.").map_err(io)?;
        }
        return Ok(Exit::Ok);
    };
    let machine = matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml);
    if !machine {
        render(ctx, &plan, &session.cloud.region())?;
    }
    let finding = if plan.unschedulable.is_empty() {
        Exit::Ok
    } else {
        Exit::Finding
    };
    if args.dry_run || plan.node_claims.is_empty() {
        if machine {
            render(ctx, &plan, &session.cloud.region())?;
        }
        return Ok(finding);
    }
    let question = format!(
        "Launch {} EC2 instance(s) for {} pod(s) in cluster {}?",
        plan.node_claims.len(),
        plan.node_claims.iter().map(|c| c.pods.len()).sum::<usize>(),
        session.live.target.info.name
    );
    // The plan must be on screen before the question (stdout may be buffered).
    let _ = ctx.out.flush();
    if !crate::cli::confirm::confirm(&question, args.yes)? {
        writeln!(ctx.err, "Nothing launched.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    let (launched, failed) =
        session.launch_all(ctx, &snapshot.manifests.node_classes, &plan, &input)?;
    let wait = if args.wait && !launched.is_empty() {
        Some(session.wait(ctx, &launched, timeout)?)
    } else {
        None
    };
    if machine {
        let doc = ResultDoc {
            api_version: API_VERSION,
            kind: "ProvisioningResult",
            plan: plan_document(&plan, &session.cloud.region()),
            launched: launched.clone(),
            failed: failed.clone(),
            wait,
        };
        write_document(ctx.out, ctx.global.output, &doc).map_err(io)?;
    } else {
        render_launches(ctx, &launched, &failed)?;
    }
    ctx.note(&format!(
        "{} Kubernetes requests; AWS: {}",
        crate::k8s::Cluster::request_count(&session.live.client),
        session.cloud.call_counts().summary()
    ));
    if let Some(first) = failed.first() {
        return Err(CommandError::remote(format!(
            "{} of {} NodeClaim(s) could not be launched; first: {}: {}",
            failed.len(),
            failed.len() + launched.len(),
            first.node_claim,
            first.error
        )));
    }
    Ok(finding)
}

fn io(e: std::io::Error) -> CommandError {
    CommandError::remote(format!("writing output: {e}"))
}

/// A NodeClaim name that is the same for the same (cluster, pool, pods) — so an identical
/// retry adopts the instance by its tag — and different otherwise: `<pool>-<5 hex>`.
fn claim_name(cluster: &str, claim: &PlannedNodeClaim) -> String {
    let mut pods = claim.pods.clone();
    pods.sort();
    let mut parts: Vec<&str> = vec!["nodeclaim", cluster, &claim.node_pool];
    parts.extend(pods.iter().map(String::as_str));
    let digest = launch::digest(&parts);
    format!("{}-{}", claim.node_pool, &digest[..5])
}

/// Capacity launched by this tool whose Node has not registered yet, as existing nodes the
/// solver fills first (what makes a re-run launch nothing twice).
fn in_flight(
    instances: &[Instance],
    registered: &BTreeSet<String>,
    input: &Input,
) -> Vec<ExistingNode> {
    let mut out = Vec::new();
    for instance in instances {
        if registered.contains(instance.id.as_str()) {
            continue;
        }
        let pool_name = instance
            .tags
            .get(labels::NODEPOOL)
            .or_else(|| instance.tags.get(labels::PROVISIONER_NAME));
        let Some(pool) = pool_name.and_then(|p| input.pools.iter().find(|i| &i.pool.name == p))
        else {
            continue;
        };
        let Some(t) = pool
            .instance_types
            .iter()
            .find(|t| t.name == instance.instance_type)
        else {
            continue;
        };
        let mut node_labels = t.requirements.single_value_labels();
        node_labels.extend(pool.pool.labels.clone());
        node_labels.insert(pool.pool.owner_label().to_string(), pool.pool.name.clone());
        node_labels.insert(labels::INSTANCE_TYPE.into(), instance.instance_type.clone());
        node_labels.insert(labels::ZONE.into(), instance.zone.clone());
        node_labels.insert(labels::CAPACITY_TYPE.into(), instance.capacity_type.clone());
        let name = instance
            .tags
            .get(NODECLAIM_TAG)
            .cloned()
            .unwrap_or_else(|| instance.id.clone());
        node_labels.insert(labels::HOSTNAME.into(), name.clone());
        let mut taints = pool.pool.taints.clone();
        taints.extend(pool.pool.startup_taints.iter().cloned());
        out.push(ExistingNode {
            node: Node {
                name: format!("{name} (launching {})", instance.id),
                labels: node_labels,
                taints,
                capacity: t.capacity.clone(),
                allocatable: t.allocatable(),
                provider_id: Some(format!("aws:///{}/{}", instance.zone, instance.id)),
                ..Node::default()
            },
            pods: Vec::new(),
        });
    }
    out
}

/// The instance ids behind `nodes` (their providerIDs).
pub(crate) fn registered_instances(nodes: &[Node]) -> BTreeSet<String> {
    nodes
        .iter()
        .filter_map(Node::instance_id)
        .map(str::to_string)
        .collect()
}

impl Session {
    /// Connects to the cluster and AWS; `guard` (`(command, --force)`) refuses when an
    /// in-cluster Karpenter controller runs (SPEC §6).
    pub(crate) fn connect(
        ctx: &mut Context<'_>,
        catalog_file: Option<&str>,
        guard: Option<(&str, bool)>,
    ) -> Result<Session, CommandError> {
        let live = live::connect_cluster(ctx)?;
        if let Some((command, force)) = guard {
            if let Some(warning) = coexist::check(&live.client, command, force)? {
                ctx.warn(&warning);
            }
        }
        let version = live::kubernetes_version(ctx, &live)?;
        let cloud = live::connect_aws(ctx)?;
        let catalog = live::catalog(ctx, &cloud, catalog_file)?;
        Ok(Session {
            live,
            cloud,
            catalog,
            version,
            classes: BTreeMap::new(),
            default_profile: None,
        })
    }

    /// Plans from a snapshot; `None` when nothing is pending.
    fn plan(
        &mut self,
        ctx: &mut Context<'_>,
        snapshot: &mut LiveSnapshot,
        args: &ProvisionArgs,
    ) -> Result<Option<(Plan, Input)>, CommandError> {
        let manifests = &snapshot.manifests;
        for warning in &manifests.warnings {
            ctx.warn(warning);
        }
        if !snapshot.installed.any() {
            return Err(CommandError::remote(
                "no Karpenter CRDs are installed in the cluster: there is no NodePool to launch for",
            )
            .with_hint("install Karpenter's CRDs and create a NodePool (or plan offline with --dry-run -f)"));
        }
        if manifests.pods.is_empty() {
            return Ok(None);
        }
        let registered = registered_instances(&manifests.nodes);
        self.plan_manifests(&mut snapshot.manifests, &registered, args)
            .map(Some)
    }

    /// Plans for `manifests` (pending pods, nodes, pools…) plus the capacity this tool
    /// launched that has not registered yet; NodeClaims named `<pool>-<hash of their pods>`.
    /// `registered` are the instance ids of every Node of the cluster (also those left out of
    /// `manifests`, like nodes being replaced): those instances are not in flight. The bound
    /// pods are moved out of `manifests` (see [`build_input`]).
    pub(crate) fn plan_manifests(
        &mut self,
        manifests: &mut crate::api::Manifests,
        registered: &BTreeSet<String>,
        args: &ProvisionArgs,
    ) -> Result<(Plan, Input), CommandError> {
        let instances = live::launched_instances(&self.cloud, &self.live.target.info.name)?;
        self.plan_with_instances(manifests, registered, &instances, args)
    }

    /// [`Session::plan_manifests`] with the in-flight candidates given: `instances` this tool
    /// launched (those not in `registered` count as capacity on its way).
    pub(crate) fn plan_with_instances(
        &mut self,
        manifests: &mut crate::api::Manifests,
        registered: &BTreeSet<String>,
        instances: &[Instance],
        args: &ProvisionArgs,
    ) -> Result<(Plan, Input), CommandError> {
        let region = self.cloud.region();
        let mut input = build_input(manifests, &self.catalog, &region, args)?;
        let pending = in_flight(instances, registered, &input);
        for node in &pending {
            if let Some(pool) = node.node.node_pool() {
                if let Some(p) = input.pools.iter_mut().find(|p| p.pool.name == pool) {
                    let mut capacity = node.node.capacity.clone();
                    capacity.set("nodes", 1000);
                    p.usage = p.usage.add(&capacity);
                }
            }
        }
        input.existing_nodes.extend(pending);
        let mut plan = scheduling::solve(&input);
        let cluster = self.live.target.info.name.clone();
        for claim in &mut plan.node_claims {
            claim.name = claim_name(&cluster, claim);
        }
        Ok((plan, input))
    }

    fn resolved(
        &mut self,
        classes: &[crate::model::nodepool::NodeClass],
        pool: &NodePool,
    ) -> Result<&ResolvedClass, CommandError> {
        let Some(reference) = &pool.node_class_ref else {
            return Err(CommandError::remote(format!(
                "{}/{} has no node class",
                pool.kind(),
                pool.name
            )));
        };
        if !self.classes.contains_key(&reference.name) {
            let class = classes
                .iter()
                .find(|c| c.name == reference.name)
                .ok_or_else(|| {
                    CommandError::remote(format!(
                        "{}/{} refers to {} {:?}, which is not in the cluster",
                        pool.kind(),
                        pool.name,
                        reference.kind,
                        reference.name
                    ))
                })?;
            if self.default_profile.is_none() {
                self.default_profile = Some(live::default_instance_profile(&self.live.client)?);
            }
            let fallback = self.default_profile.clone().flatten();
            let resolved =
                live::resolve_class(&self.cloud, class, self.version, fallback.as_deref())?;
            self.classes.insert(reference.name.clone(), resolved);
        }
        Ok(&self.classes[&reference.name])
    }

    /// Resolves the node class of every planned NodeClaim (AMIs, subnets, security groups,
    /// profile; cached): called before anything launches (or is marked), so a class with no
    /// subnet, image or profile fails with nothing changed (SPEC §6).
    pub(crate) fn resolve_classes(
        &mut self,
        classes: &[crate::model::nodepool::NodeClass],
        plan: &Plan,
        input: &Input,
    ) -> Result<(), CommandError> {
        for claim in &plan.node_claims {
            if let Some(pool_input) = input.pools.iter().find(|p| p.pool.name == claim.node_pool) {
                self.resolved(classes, &pool_input.pool)?;
            }
        }
        Ok(())
    }

    /// Launches every planned NodeClaim; a NodeClaim that fails does not stop the others.
    pub(crate) fn launch_all(
        &mut self,
        ctx: &mut Context<'_>,
        classes: &[crate::model::nodepool::NodeClass],
        plan: &Plan,
        input: &Input,
    ) -> Result<(Vec<LaunchDoc>, Vec<FailureDoc>), CommandError> {
        let mut launched = Vec::new();
        let mut failed = Vec::new();
        self.resolve_classes(classes, plan, input)?;
        for claim in &plan.node_claims {
            let Some(pool_input) = input.pools.iter().find(|p| p.pool.name == claim.node_pool)
            else {
                continue;
            };
            let resolved = self.resolved(classes, &pool_input.pool)?.clone();
            let types = live::type_facts(&pool_input.instance_types);
            let result = launch::plan_for_pool(
                &LaunchInput {
                    cluster: &self.live.target.info,
                    class: &resolved.class,
                    claim,
                    family: resolved.family,
                    images: &resolved.images,
                    subnets: &resolved.subnets,
                    security_group_ids: &resolved.security_group_ids,
                    types: &types,
                },
                &pool_input.pool,
            )
            .and_then(|p| launch::launch(&self.cloud, &p));
            match result {
                Ok(done) => {
                    let i = &done.instance;
                    if !ctx.global.quiet {
                        let _ = writeln!(
                            ctx.err,
                            "{} NodeClaim {}: {} {} ({}, {}) for {} pod(s)",
                            if done.adopted { "adopted" } else { "launched" },
                            claim.name,
                            i.id,
                            i.instance_type,
                            i.zone,
                            i.capacity_type,
                            claim.pods.len()
                        );
                    }
                    launched.push(LaunchDoc {
                        node_claim: claim.name.clone(),
                        node_pool: claim.node_pool.clone(),
                        instance_id: i.id.clone(),
                        instance_type: i.instance_type.clone(),
                        zone: i.zone.clone(),
                        capacity_type: i.capacity_type.clone(),
                        adopted: done.adopted,
                        pods: claim.pods.clone(),
                        pool_errors: done
                            .pool_errors
                            .iter()
                            .map(|e| {
                                format!("{} {}/{}: {}", e.code, e.instance_type, e.zone, e.message)
                            })
                            .collect(),
                        node_labels: pool_input
                            .instance_types
                            .iter()
                            .find(|t| t.name == i.instance_type)
                            .map(|t| t.requirements.single_value_labels())
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|(k, _)| {
                                crate::model::labels::AWS_WELL_KNOWN.contains(&k.as_str())
                            })
                            .collect(),
                    });
                }
                Err(e) => {
                    let error = match &e {
                        LaunchError::Cloud(c) if c.is_permission() => {
                            format!("{e} (the AWS identity lacks a permission)")
                        }
                        _ => e.to_string(),
                    };
                    ctx.warn(&format!("NodeClaim {}: {error}", claim.name));
                    failed.push(FailureDoc {
                        node_claim: claim.name.clone(),
                        node_pool: claim.node_pool.clone(),
                        error,
                    });
                }
            }
        }
        Ok((launched, failed))
    }

    /// The labels a node of `instance_type` gets from its type (`karpenter.k8s.aws/instance-*`,
    /// …), from the catalog: for replacements adopted from a record, whose launch is not at
    /// hand. Empty when the type is unknown.
    pub(crate) fn type_labels(&self, instance_type: &str) -> BTreeMap<String, String> {
        let region = self.cloud.region();
        let context = crate::cloud::InstanceTypeContext::new(&region, "AL2");
        self.catalog
            .instance_types(&context)
            .ok()
            .and_then(|types| types.into_iter().find(|t| t.name == instance_type))
            .map(|t| t.requirements.single_value_labels())
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| crate::model::labels::AWS_WELL_KNOWN.contains(&k.as_str()))
            .collect()
    }

    /// What Karpenter's controller does once a launched node is Ready: copies the NodeClaim's
    /// labels (the launched type's `karpenter.k8s.aws/instance-*`, …) onto it and marks it
    /// initialized, so budgets, drift and later commands treat it like any managed node.
    pub(crate) fn label_registered(
        &self,
        node: &str,
        launched: &LaunchDoc,
    ) -> Result<(), CommandError> {
        let mut node_labels = launched.node_labels.clone();
        node_labels.insert("karpenter.sh/initialized".into(), "true".into());
        node_labels.insert("karpenter.sh/registered".into(), "true".into());
        ops::merge_patch(
            &self.live.client,
            &format!("/api/v1/nodes/{node}"),
            &serde_json::json!({"metadata": {"labels": node_labels}}),
        )?;
        Ok(())
    }

    /// Labels the Nodes of `awaiting` launches that have registered Ready (see
    /// [`Session::label_registered`]) and drops them from the list.
    fn label_new_nodes(&self, awaiting: &mut Vec<LaunchDoc>) -> Result<(), CommandError> {
        if awaiting.is_empty() {
            return Ok(());
        }
        let mut ready: Vec<(String, String)> = Vec::new();
        ops::list(
            &self.live.client,
            "/api/v1/nodes",
            &ops::ListQuery::default(),
            |n: crate::api::core::Node| {
                if let Ok(node) =
                    crate::api::convert_node(&n, &crate::api::Location::file("cluster"))
                {
                    if let (true, Some(id)) = (node.ready, node.instance_id()) {
                        ready.push((id.to_string(), node.name.clone()));
                    }
                }
            },
        )?;
        for (id, name) in ready {
            if let Some(i) = awaiting.iter().position(|l| l.instance_id == id) {
                let doc = awaiting.remove(i);
                self.label_registered(&name, &doc)?;
            }
        }
        Ok(())
    }

    /// Waits until every launched instance has a Ready Node and the planned pods are bound.
    pub(crate) fn wait(
        &self,
        ctx: &mut Context<'_>,
        launched: &[LaunchDoc],
        timeout: Duration,
    ) -> Result<WaitDoc, CommandError> {
        let started = Instant::now();
        let pods: Vec<(String, String)> = launched
            .iter()
            .flat_map(|l| l.pods.iter())
            .filter_map(|p| p.split_once('/'))
            .map(|(ns, name)| (ns.to_string(), name.to_string()))
            .collect();
        let ids: BTreeSet<&str> = launched.iter().map(|l| l.instance_id.as_str()).collect();
        // A bar on a terminal; elsewhere the same `waiting: …` lines as ever, once per change.
        let mut progress = Progress::new(ctx.global, "waiting: nodes to register");
        let mut initialized: BTreeSet<String> = BTreeSet::new();
        loop {
            let mut ready: BTreeMap<String, String> = BTreeMap::new();
            ops::list(
                &self.live.client,
                "/api/v1/nodes",
                &ops::ListQuery::default(),
                |n: crate::api::core::Node| {
                    let Ok(node) =
                        crate::api::convert_node(&n, &crate::api::Location::file("cluster"))
                    else {
                        return;
                    };
                    if let Some(id) = node.instance_id() {
                        if ids.contains(id) && node.ready {
                            ready.insert(id.to_string(), node.name.clone());
                        }
                    }
                },
            )?;
            // The scheduler may bind other pending pods than the ones planned to a new node
            // (they are interchangeable replicas), so the wait is over when the planned pods
            // are bound anywhere, or the new nodes hold as many pods as were planned.
            let mut bound_planned = 0;
            for (ns, name) in &pods {
                let pod: Option<crate::api::core::Pod> = ops::get(
                    &self.live.client,
                    &format!("/api/v1/namespaces/{ns}/pods/{name}"),
                )?;
                let is_bound = pod.as_ref().is_some_and(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_some_and(|n| !n.is_empty())
                });
                if is_bound {
                    bound_planned += 1;
                }
            }
            let mut on_new_nodes = 0;
            for node in ready.values() {
                ops::list(
                    &self.live.client,
                    "/api/v1/pods",
                    &ops::ListQuery {
                        field_selector: Some(&format!("spec.nodeName={node}")),
                        ..Default::default()
                    },
                    |p: crate::api::core::Pod| {
                        let daemon = p
                            .metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .any(|o| o.kind.as_deref() == Some("DaemonSet"));
                        if !daemon {
                            on_new_nodes += 1;
                        }
                    },
                )?;
            }
            let bound = bound_planned.max(on_new_nodes).min(pods.len());
            let status = format!(
                "{}/{} node(s) Ready, {}/{} pod(s) bound",
                ready.len(),
                ids.len(),
                bound,
                pods.len()
            );
            progress.set_length((ids.len() + pods.len()) as u64);
            progress.set_position((ready.len() + bound) as u64);
            progress.set_message(ctx.err, &format!("waiting: {status}"));
            // What Karpenter's controller does once a node is Ready: mark it initialized,
            // so budgets and later commands count it like any managed node.
            // It also copies the launched type's labels onto the Node (they could not be in
            // the user data, which every type of the fleet shares).
            for (id, name) in &ready {
                if initialized.insert(name.clone()) {
                    if let Some(doc) = launched.iter().find(|l| &l.instance_id == id) {
                        self.label_registered(name, doc)?;
                    }
                }
            }
            if ready.len() == ids.len() && bound == pods.len() {
                progress.finish_with_message(ctx.err, &format!("waiting: {status}"));
                return Ok(WaitDoc {
                    nodes: ready,
                    pods_bound: bound,
                    pods: pods.len(),
                    seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
                });
            }
            if started.elapsed() >= timeout {
                return Err(CommandError::remote(format!(
                    "timed out after {}s waiting: {status}",
                    timeout.as_secs()
                ))
                .with_hint("the instances are launched and stay; re-run with --wait to keep waiting (nothing is launched twice)"));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

fn render_launches(
    ctx: &mut Context<'_>,
    launched: &[LaunchDoc],
    failed: &[FailureDoc],
) -> Result<(), CommandError> {
    if launched.is_empty() && failed.is_empty() {
        return Ok(());
    }
    writeln!(ctx.out).map_err(io)?;
    let mut table = Table::new(&[
        "NODECLAIM",
        "INSTANCE",
        "TYPE",
        "ZONE",
        "CAPACITY",
        "PODS",
        "STATUS",
    ]);
    for l in launched {
        table.row(vec![
            l.node_claim.clone(),
            l.instance_id.clone(),
            l.instance_type.clone(),
            l.zone.clone(),
            l.capacity_type.clone(),
            l.pods.len().to_string(),
            if l.adopted { "adopted" } else { "launched" }.to_string(),
        ]);
    }
    for f in failed {
        table.row(vec![
            f.node_claim.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            format!("failed: {}", f.error),
        ]);
    }
    table.write(ctx.out, !ctx.global.no_headers).map_err(io)
}

/// Set by Ctrl-C: stop after the step in flight.
static STOP: AtomicBool = AtomicBool::new(false);

pub(crate) fn install_interrupt_handler() {
    static PRESSES: AtomicUsize = AtomicUsize::new(0);
    let _ = ctrlc::set_handler(|| {
        if PRESSES.fetch_add(1, Ordering::SeqCst) > 0 {
            // A second Ctrl-C: the user means it. Everything done so far is on the cluster
            // and in EC2, so a restart resumes.
            std::process::exit(130);
        }
        STOP.store(true, Ordering::SeqCst);
        eprintln!("interrupted: stopping after the step in flight (Ctrl-C again to quit now)");
    });
}

/// Whether Ctrl-C asked to stop (after the step in flight).
pub(crate) fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

pub(crate) fn sleep_unless_stopped(d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if STOP.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100).min(end - Instant::now()));
    }
    !STOP.load(Ordering::SeqCst)
}

/// The keys of pods the scheduler marked unschedulable (cheap: unbound pods only).
fn pending_keys(c: &dyn crate::k8s::Cluster) -> Result<BTreeSet<String>, CommandError> {
    let mut keys = BTreeSet::new();
    ops::list(
        c,
        "/api/v1/pods",
        &ops::ListQuery {
            field_selector: Some("spec.nodeName="),
            ..Default::default()
        },
        |p: crate::api::core::Pod| {
            let status = p.status.unwrap_or_default();
            let unschedulable = status.conditions.iter().flatten().any(|c| {
                c.type_.as_deref() == Some("PodScheduled")
                    && c.status.as_deref() == Some("False")
                    && c.reason.as_deref() == Some("Unschedulable")
            });
            let owned_by_daemonset = p
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind.as_deref() == Some("DaemonSet") && o.controller == Some(true));
            if unschedulable
                && !owned_by_daemonset
                && status.nominated_node_name.is_none_or(|n| n.is_empty())
            {
                keys.insert(format!(
                    "{}/{}",
                    p.metadata.namespace.unwrap_or_default(),
                    p.metadata.name.unwrap_or_default()
                ));
            }
        },
    )?;
    Ok(keys)
}

fn watch(ctx: &mut Context<'_>, session: &mut Session, args: &ProvisionArgs) -> CommandResult {
    // The plan must be on screen before the question (stdout may be buffered).
    let _ = ctx.out.flush();
    if !crate::cli::confirm::confirm(
        &format!(
            "Watch cluster {}: launch capacity for pending pods and remove empty nodes, without asking again?",
            session.live.target.info.name
        ),
        args.yes,
    )? {
        writeln!(ctx.err, "Nothing done.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    install_interrupt_handler();
    if !ctx.global.quiet {
        let _ = writeln!(
            ctx.err,
            "watching cluster {} (Ctrl-C stops after the step in flight)",
            session.live.target.info.name
        );
    }
    let mut last_empty_check = Instant::now() - Duration::from_secs(60);
    // Launches whose Nodes have not registered yet (to label them when they do).
    let mut awaiting: Vec<LaunchDoc> = Vec::new();
    while !STOP.load(Ordering::SeqCst) {
        let pending = pending_keys(&session.live.client)?;
        if !pending.is_empty() {
            // Karpenter's batching window: wait for the burst to settle (1 s idle, 10 s max).
            let opened = Instant::now();
            let mut seen = pending;
            let mut changed = Instant::now();
            while opened.elapsed() < BATCH_MAX && changed.elapsed() < BATCH_IDLE {
                if !sleep_unless_stopped(Duration::from_millis(250)) {
                    break;
                }
                let now = pending_keys(&session.live.client)?;
                if now != seen {
                    seen = now;
                    changed = Instant::now();
                }
            }
            if STOP.load(Ordering::SeqCst) {
                break;
            }
            let mut snapshot = snapshot::read(&session.live.client, Scope::PODS)?;
            if let Some((plan, input)) = session.plan(ctx, &mut snapshot, args)? {
                if !plan.node_claims.is_empty() {
                    let (launched, failed) =
                        session.launch_all(ctx, &snapshot.manifests.node_classes, &plan, &input)?;
                    awaiting.extend(launched.iter().cloned());
                    if !ctx.global.quiet {
                        let _ = writeln!(
                            ctx.err,
                            "batch of {} pod(s): {} launched, {} failed, {} unschedulable",
                            seen.len(),
                            launched.len(),
                            failed.len(),
                            plan.unschedulable.len()
                        );
                    }
                }
                for u in &plan.unschedulable {
                    ctx.note(&format!("{} stays pending: {}", u.pod, u.reason));
                }
            }
        }
        if last_empty_check.elapsed() >= Duration::from_secs(2) {
            session.label_new_nodes(&mut awaiting)?;
            remove_empty_nodes(ctx, session)?;
            last_empty_check = Instant::now();
        }
        // A cheap LIST of unbound pods every 200 ms: a pending pod opens the batch window
        // within that (PERF.md B5: pending pod → CreateFleet ≤ 1.5 s with the 1 s idle window).
        if !sleep_unless_stopped(Duration::from_millis(200)) {
            break;
        }
    }
    if !ctx.global.quiet {
        let _ = writeln!(
            ctx.err,
            "stopped; everything done so far is recorded on the cluster and in EC2"
        );
    }
    Ok(Exit::Ok)
}

fn now_rfc3339() -> (i64, String) {
    let secs = super::unix_now();
    (
        secs,
        crate::cloud::live_catalog::rfc3339(secs.max(0) as u64),
    )
}

/// How long a pool's empty nodes may stay: `None` when emptiness never removes them.
fn empty_ttl(pool: &NodePool) -> Option<Duration> {
    let policy = pool.disruption.consolidation_policy.as_str();
    if !matches!(
        policy,
        "WhenEmpty" | "WhenEmptyOrUnderutilized" | "WhenUnderutilized"
    ) {
        return None;
    }
    let after = pool.disruption.consolidate_after.as_deref().unwrap_or("0s");
    if after == "Never" {
        return None;
    }
    crate::disruption::time::parse_duration(after)
        .ok()
        .map(|s| Duration::from_secs(s.unsigned_abs()))
}

/// Emptiness (KARPENTER.md §5.4): nodes of a pool whose policy removes empty nodes, with no
/// pod but DaemonSet/mirror/finished ones, are removed once they have been empty for
/// `consolidateAfter` (the clock is the node's `empty-since` annotation).
fn remove_empty_nodes(ctx: &mut Context<'_>, session: &mut Session) -> Result<(), CommandError> {
    let snapshot = snapshot::read(&session.live.client, Scope::PODS)?;
    let m = &snapshot.manifests;
    let (now, now_text) = now_rfc3339();
    let mut busy: BTreeSet<&str> = BTreeSet::new();
    for p in &m.bound_pods {
        if !p.is_daemonset_pod() && !p.is_mirror() && !p.is_terminal() {
            if let Some(n) = &p.node_name {
                busy.insert(n);
            }
        }
    }
    for node in &m.nodes {
        let Some(pool) = node
            .node_pool()
            .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
        else {
            continue;
        };
        let Some(ttl) = empty_ttl(pool) else {
            continue;
        };
        if node.deleting || node.instance_id().is_none() {
            continue;
        }
        let path = format!("/api/v1/nodes/{}", node.name);
        let since = node.annotations.get(EMPTY_SINCE);
        if busy.contains(node.name.as_str()) {
            if since.is_some() {
                ops::merge_patch(
                    &session.live.client,
                    &path,
                    &serde_json::json!({"metadata": {"annotations": {EMPTY_SINCE: null}}}),
                )?;
            }
            continue;
        }
        let Some(since) = since else {
            ops::merge_patch(
                &session.live.client,
                &path,
                &serde_json::json!({"metadata": {"annotations": {EMPTY_SINCE: now_text}}}),
            )?;
            ctx.note(&format!(
                "node {} is empty; removed after {}s if it stays so",
                node.name,
                ttl.as_secs()
            ));
            continue;
        };
        let Some(started) = crate::cloud::ami::parse_rfc3339(since) else {
            continue;
        };
        if now - started < ttl.as_secs() as i64 {
            continue;
        }
        remove_node(ctx, session, node, &format!("empty for {}s", now - started))?;
    }
    Ok(())
}

/// Removes a node: taint and cordon (nothing new lands), terminate the instance, delete the
/// Node.
fn remove_node(
    ctx: &mut Context<'_>,
    session: &mut Session,
    node: &Node,
    why: &str,
) -> Result<(), CommandError> {
    let Some(instance) = node.instance_id().map(str::to_string) else {
        return Ok(());
    };
    let path = format!("/api/v1/nodes/{}", node.name);
    let disrupted = Taint {
        key: "karpenter.sh/disrupted".into(),
        value: String::new(),
        effect: Effect::NoSchedule,
    };
    let mut taints: Vec<serde_json::Value> = node
        .taints
        .iter()
        .filter(|t| t.key != disrupted.key)
        .map(|t| serde_json::json!({"key": t.key, "value": t.value, "effect": t.effect.as_str()}))
        .collect();
    taints.push(serde_json::json!({"key": disrupted.key, "effect": "NoSchedule"}));
    ops::merge_patch(
        &session.live.client,
        &path,
        &serde_json::json!({"spec": {"unschedulable": true, "taints": taints}}),
    )?;
    // Instance first, then the Node: a run killed in between leaves a node to find again.
    launch::terminate_all(&session.cloud, std::slice::from_ref(&instance))
        .map_err(live::aws_error)?;
    ops::delete(&session.live.client, &path, None)?;
    if !ctx.global.quiet {
        let _ = writeln!(ctx.err, "removed node {} ({instance}): {why}", node.name);
    }
    Ok(())
}
