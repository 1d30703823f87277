//! `consolidate` (docs/spec.md §9): what Karpenter's disruption controller would do to the nodes that
//! exist, and why not for each node it leaves alone. Three steps with plain values between them:
//!
//! 1. gather the objects — offline from `-f` manifests, or live ([`gather_live`]: a cluster
//!    snapshot with PDBs, and the controller's release and `FEATURE_GATES` when one runs);
//! 2. [`build_input`]: pair nodes with their NodeClaims, size each pool's instance types from
//!    the catalog, turn PDBs and NodeClaim status into the engine's [`ConsolidationInput`];
//! 3. [`evaluate`]: run the pure [`consolidation`] engine on the whole cluster and keep the
//!    selected nodes in the report.
//!
//! [`execute`] carries the decisions out (`--yes`, `--dry-run`, `--watch`) through the replace
//! pipeline. Rendering is the CLI's (`cli::render::consolidate`).

pub mod execute;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::api::core::PodDisruptionBudget;
use crate::api::meta::IntOrString;
use crate::api::Manifests;
use crate::cloud::launch::describe_by_filter;
use crate::cloud::types::Compute;
use crate::cloud::Catalog;
use crate::disruption::consolidation::{
    self, BoundPod, ClaimFacts, ConsolidationInput, ConsolidationReport, Drifted, FeatureGates,
    IntOrPercent, NodeInput, PdbInput, Release,
};
use crate::disruption::drain;
use crate::disruption::time::parse_duration;
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::{coexist, Cluster};
use crate::karpenter_install::release::Version;
use crate::karpenter_install::{
    MIN_VALUES_POLICY_ENV, PREFERENCE_POLICY_ENV, RESERVED_ENIS_ENV, VM_MEMORY_OVERHEAD_PERCENT_ENV,
};
use crate::model::labels;
use crate::model::node::{gone_nodes, managed_instance_ids, GoneInstance, Node};
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{NodeClass, NodeClassRef};
use crate::model::pod::Pod;
use crate::model::time::parse_rfc3339;
use crate::scheduling::{MinValuesPolicy, Policies, PreferencePolicy, DEFAULT_MAX_INSTANCE_TYPES};
use crate::usecases::drift_gate;
use crate::usecases::live::{aws_error, catalog_with_reservations, TypeSettings};
use crate::usecases::provisioning::buffers;
use crate::usecases::provisioning::input::{build_input as solver_input, CatalogSizing};
use crate::usecases::provisioning::Selection;

/// The plain configuration `consolidate` runs on.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Only these nodes in the report (empty: every managed node).
    pub nodes: Vec<String>,
    /// Only nodes of these pools in the report.
    pub nodepools: Vec<String>,
    /// The instant evaluated (epoch seconds).
    pub now: i64,
    /// `--feature-gates SpotToSpotConsolidation=…`: wins over the controller's.
    pub spot_to_spot: Option<bool>,
    /// `--feature-gates CapacityBuffer=…`: wins over the controller's (default off).
    pub capacity_buffer: Option<bool>,
    /// `--feature-gates ReservedCapacity=…`: wins over the controller's (default on).
    pub reserved_capacity: Option<bool>,
    /// `--vm-memory-overhead-percent` / `--reserved-enis`: each wins over the controller's.
    pub type_settings: TypeSettings,
    /// `--min-values-policy`: wins over the controller's.
    pub min_values_policy: Option<MinValuesPolicy>,
    /// `--preference-policy`: wins over the controller's.
    pub preference_policy: Option<PreferencePolicy>,
}

/// The Karpenter controller running in the cluster, as far as its decisions depend on it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Controller {
    /// The release, when its version label or image tag parses.
    pub version: Option<Version>,
    /// `SpotToSpotConsolidation` in its `FEATURE_GATES`, when set.
    pub spot_to_spot: Option<bool>,
    /// `Drift` in its `FEATURE_GATES`, when set.
    pub drift: Option<bool>,
    /// Its `--min-values-policy` / `MIN_VALUES_POLICY`, when set.
    pub min_values_policy: Option<MinValuesPolicy>,
    /// Its `--preference-policy` / `PREFERENCE_POLICY`, when set.
    pub preference_policy: Option<PreferencePolicy>,
    /// Its `NodeOverlay` gate (`false` unless its gates turn it on: the default in v1.14.1,
    /// `pkg/operator/options/options.go`); `None`: no controller was read.
    pub node_overlay: Option<bool>,
    /// Its `StaticCapacity` gate (off unless its gates turn it on), as `node_overlay`.
    pub static_capacity: Option<bool>,
    /// Its `CapacityBuffer` gate (off unless its gates turn it on), as `node_overlay`.
    pub capacity_buffer: Option<bool>,
    /// Its `ReservedCapacity` gate (on unless its gates turn it off), as `node_overlay`.
    pub reserved_capacity: Option<bool>,
    /// Its `--vm-memory-overhead-percent` / `VM_MEMORY_OVERHEAD_PERCENT`, when set.
    pub vm_memory_overhead_percent: Option<f64>,
    /// Its `--reserved-enis` / `RESERVED_ENIS`, when set.
    pub reserved_enis: Option<i64>,
}

/// The release a controller version runs: v1.x follows v1.14, v0.32–v0.37 (v1beta1) v0.37,
/// earlier v0.31.
pub fn release_of(version: Version) -> Release {
    match (version.major, version.minor) {
        (0, m) if m < 32 => Release::V0_31,
        (0, _) => Release::V0_37,
        _ => Release::V1_14,
    }
}

/// The `ReservedCapacity` gate a decision follows: `--feature-gates`, else the controller's;
/// `None`: the default (on).
pub fn reserved_capacity_gate(config: &Config, controller: Option<&Controller>) -> Option<bool> {
    config
        .reserved_capacity
        .or(controller.and_then(|c| c.reserved_capacity))
}

/// The AWS instance-type settings a decision sizes types with: each flag, else the
/// controller's (`None`: Karpenter's default).
pub fn type_settings(config: &Config, controller: Option<&Controller>) -> TypeSettings {
    config.type_settings.or(TypeSettings::of(controller))
}

/// Reads the cluster: the snapshot with pods and PDBs, and the controller when one runs.
pub fn gather_live(cluster: &dyn Cluster) -> Result<(Manifests, Option<Controller>), CommandError> {
    let manifests = read_with_pdbs(cluster)?;
    Ok((manifests, controller(cluster)?))
}

/// The `CapacityBuffer` gate a decision follows: `--feature-gates`, else the controller's,
/// else off (Karpenter's default).
pub fn buffer_gate(config: &Config, controller: Option<&Controller>) -> bool {
    config
        .capacity_buffer
        .or(controller.and_then(|c| c.capacity_buffer))
        .unwrap_or(false)
}

/// Live, with the [`buffer_gate`] on: the cluster's CapacityBuffers into `manifests`, so the
/// decision simulates their virtual pods as the report's does (`disruption/helpers.go`
/// `SimulateScheduling` → `GetPendingPods`); returns the lines to tell (what could not be read,
/// the buffers that provision nothing).
pub fn read_live_buffers(
    cluster: &dyn Cluster,
    config: &Config,
    controller: Option<&Controller>,
    manifests: &mut Manifests,
) -> Result<Vec<String>, CommandError> {
    buffers::read_live_telling(cluster, buffer_gate(config, controller), manifests)
}

/// The Karpenter controller running in the cluster, if one does: its release and gates.
pub fn controller(cluster: &dyn Cluster) -> Result<Option<Controller>, CommandError> {
    if coexist::find_controllers(cluster)?.is_empty() {
        return Ok(None);
    }
    let install = drift_gate::installed(cluster, None)?;
    let gates = install.feature_gates();
    Ok(Some(Controller {
        version: install.version,
        spot_to_spot: gates.get("SpotToSpotConsolidation").and_then(Result::ok),
        drift: gates.get("Drift").and_then(Result::ok),
        min_values_policy: controller_option(
            &install,
            install.min_values_policy(),
            MinValuesPolicy::parse,
            (
                MIN_VALUES_POLICY_ENV,
                "Strict or BestEffort",
                "--min-values-policy",
            ),
        )?,
        preference_policy: controller_option(
            &install,
            install.preference_policy(),
            PreferencePolicy::parse,
            (
                PREFERENCE_POLICY_ENV,
                "Respect or Ignore",
                "--preference-policy",
            ),
        )?,
        node_overlay: Some(
            gates
                .get("NodeOverlay")
                .and_then(Result::ok)
                .unwrap_or(false),
        ),
        static_capacity: Some(
            gates
                .get("StaticCapacity")
                .and_then(Result::ok)
                .unwrap_or(false),
        ),
        capacity_buffer: Some(
            gates
                .get(crate::usecases::provisioning::buffers::GATE)
                .and_then(Result::ok)
                .unwrap_or(false),
        ),
        reserved_capacity: Some(
            gates
                .get(crate::usecases::provisioning::RESERVED_CAPACITY_GATE)
                .and_then(Result::ok)
                .unwrap_or(true),
        ),
        vm_memory_overhead_percent: controller_option(
            &install,
            install.vm_memory_overhead_percent(),
            crate::model::overhead::parse_vm_memory_overhead_percent,
            (
                VM_MEMORY_OVERHEAD_PERCENT_ENV,
                "a non-negative number",
                "--vm-memory-overhead-percent",
            ),
        )?,
        reserved_enis: controller_option(
            &install,
            install.reserved_enis(),
            crate::model::overhead::parse_reserved_enis,
            (
                RESERVED_ENIS_ENV,
                "a non-negative integer",
                "--reserved-enis",
            ),
        )?,
    }))
}

/// The `MinValuesPolicy` a decision follows: `--min-values-policy`, else the running
/// controller's, else Strict (Karpenter's default).
pub fn min_values_policy(config: &Config, controller: Option<&Controller>) -> MinValuesPolicy {
    config
        .min_values_policy
        .or(controller.and_then(|c| c.min_values_policy))
        .unwrap_or_default()
}

/// The controller options a decision follows, each the flag's, else the running controller's.
pub fn policies(config: &Config, controller: Option<&Controller>) -> Policies {
    Policies {
        min_values: min_values_policy(config, controller),
        preferences: preference_policy(config, controller),
    }
}

/// The `PreferencePolicy` a decision follows: `--preference-policy`, else the running
/// controller's, else Respect (Karpenter's default).
pub fn preference_policy(config: &Config, controller: Option<&Controller>) -> PreferencePolicy {
    config
        .preference_policy
        .or(controller.and_then(|c| c.preference_policy))
        .unwrap_or_default()
}

/// A controller option its container sets (`raw`: the flag's value, else the env var's), parsed
/// by `parse`; a value Karpenter would refuse to start with (`options.go` `Validate`) is bad
/// input naming `env`, the values it takes and the flag that decides without it.
fn controller_option<T>(
    install: &drift_gate::Install,
    raw: Option<&str>,
    parse: fn(&str) -> Option<T>,
    (env, values, flag): (&str, &str, &str),
) -> Result<Option<T>, CommandError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    parse(raw).map(Some).ok_or_else(|| {
        CommandError::input(format!(
            "Deployment {} container {}: {env} {raw:?} is not {values} (Karpenter would not start; pass {flag} to decide without it)",
            install.controller.key(),
            install.deployment.container
        ))
    })
}

/// The cluster with its pods and PodDisruptionBudgets: what the engine reads.
pub fn read_with_pdbs(cluster: &dyn Cluster) -> Result<Manifests, CommandError> {
    let read = snapshot::read(
        cluster,
        Scope {
            pods: true,
            pdbs: true,
        },
    )?;
    let mut manifests = read.manifests;
    manifests.pdbs = read.pdbs;
    Ok(manifests)
}

/// The catalog consolidation decides with, live — one path for `consolidate`'s report and for
/// `nodes`' CONSOLIDATION column, so both say the same: `base` (the live instance-type
/// catalog, `--catalog`, or the embedded snapshot) with the capacity reservations the node
/// classes select, read now through `cloud` ([`catalog_with_reservations`]: a reserved node's
/// price and a replacement into a reservation are Karpenter's). Without `cloud` (AWS left out
/// or unreachable), or with the `ReservedCapacity` `gate` off (no reservation is read: aws
/// v1.14.1 `nodeclass/controller.go` runs no capacity-reservation reconciler), `base` as it is.
/// The second value: warnings.
pub fn decision_catalog<P: Compute>(
    cloud: Option<&P>,
    base: Catalog,
    classes: &[NodeClass],
    now: i64,
    gate: Option<bool>,
) -> Result<(Catalog, Vec<String>), CommandError> {
    match cloud {
        Some(cloud) if gate != Some(false) => {
            catalog_with_reservations(cloud, &base, classes, now, [])
        }
        _ => Ok((base, Vec::new())),
    }
}

/// The managed nodes whose instance is gone or going (`model::node::gone_nodes`), by node name:
/// their instances described by id — one DescribeInstances per 200 nodes, through an
/// `instance-id` filter (`cloud::launch::describe_by_filter`), so an id EC2 forgot is missing
/// rather than an error, as Karpenter's
/// `cloudprovider.Get` turns `NotFound` into `NodeClaimNotFoundError`. Only the nodes of the
/// cloud's region (their provider id's zone): an instance described in the wrong region would
/// look gone. Live only
/// (`ec2:DescribeInstances`, docs/security.md); none described, no call.
pub fn gone_instances<P: Compute>(
    cloud: &P,
    manifests: &Manifests,
) -> Result<BTreeMap<String, GoneInstance>, CommandError> {
    let region = cloud.region();
    let ids = managed_instance_ids(&manifests.nodes, &region);
    let described = describe_by_filter(cloud, &ids).map_err(aws_error)?;
    Ok(gone_nodes(&manifests.nodes, &described, &region))
}

/// Leaves the nodes whose instance is gone ([`gone_instances`]) out of `input` as capacity and
/// as candidates: deleting, as the NodeClaim Karpenter's garbage collection deletes (its
/// pods need a place, as a deleting node's do); a managed node's row names the instance
/// (`Reason::InstanceGone`).
pub fn leave_out_gone(input: &mut ConsolidationInput, gone: &BTreeMap<String, GoneInstance>) {
    for n in &mut input.nodes {
        if let Some(g) = gone.get(&n.node.name) {
            n.node.deleting = true;
            if let Some(claim) = &mut n.claim {
                claim.gone = Some(g.clone());
            }
        }
    }
}

/// The instances of `gone`, for the replace pipeline's re-plans (`Settings::gone_instances`).
pub fn gone_ids(gone: &BTreeMap<String, GoneInstance>) -> BTreeSet<String> {
    gone.values().map(|g| g.instance.clone()).collect()
}

/// Offline (`-f`) no instance is described: says that every node's instance is taken to be
/// running, when there is a managed node.
pub fn assume_instances_running(manifests: &mut Manifests) {
    // Any region ("" starts every zone): offline the region is only assumed.
    if managed_instance_ids(&manifests.nodes, "").is_empty() {
        return;
    }
    manifests.warnings.push(
        "assuming: every node's EC2 instance is running (offline, no instance is described; live, a node whose instance is shutting down, terminated or gone is neither capacity nor a candidate)".into(),
    );
}

/// The engine's input: every node (managed or not) with its pods and NodeClaim facts, every
/// pool sized by `sizing`, the PDBs, the release (the controller's, else the pools'
/// generation's) and the feature gates (the flag, else the controller's, else the release's
/// defaults). The bound pods are moved out of `manifests`.
pub fn build_input(
    manifests: &mut Manifests,
    sizing: &mut CatalogSizing<'_>,
    config: &Config,
    controller: Option<&Controller>,
) -> Result<ConsolidationInput, CommandError> {
    let pdbs = manifests
        .pdbs
        .iter()
        .map(pdb_input)
        .collect::<Result<Vec<_>, _>>()?;
    let unsynced = crate::usecases::provisioning::input::unsynced_warning(manifests, "disrupts");
    manifests.warnings.extend(unsynced);
    // The discovered-capacity cache reads the NodeClaims' images, which are taken next.
    sizing.discover_memory(manifests);
    let mut claims = std::mem::take(&mut manifests.node_claims);
    // A NodeClaim of another provider's node class is not this Karpenter's (core v1.14.1
    // `state/informer/nodeclaim.go` and the expiration and nodeclaim disruption controllers skip
    // what `nodeclaimutils.IsManaged` rejects): its Node is capacity, not a candidate, and it
    // never expires here (expiration/suite_test.go "should ignore expired NodeClaims that are
    // not managed by this Karpenter instance"). EKS Auto Mode's `NodeClass` is not the AWS
    // provider's either: EKS disrupts its nodes (s29-linestate).
    claims.retain(|c| {
        c.node_class_ref
            .as_ref()
            .is_none_or(NodeClassRef::is_managed_here)
    });
    let registered = manifests.nodes.len();
    // The simulations schedule the buffers' virtual pods with the pending pods (the gate on).
    let buffer_warnings =
        buffers::apply_gate(manifests, buffer_gate(config, controller), config.now);
    manifests.warnings.extend(buffer_warnings);
    let settings = type_settings(config, controller);
    let mut solver = solver_input(
        manifests,
        &Selection {
            max_instance_types: DEFAULT_MAX_INSTANCE_TYPES,
            node_overlay_gate: controller.and_then(|c| c.node_overlay),
            // The `ReservedCapacity` gate and AWS instance-type settings (the flags', else the
            // controller's) size the replacements as its provisioner would (s27-lineaws).
            reserved_capacity_gate: reserved_capacity_gate(config, controller),
            vm_memory_overhead_percent: settings.vm_memory_overhead_percent,
            reserved_enis: settings.reserved_enis,
            keep_not_ready: true,
            ..Selection::default()
        },
        sizing,
    )?;
    let release = match controller.and_then(|c| c.version) {
        Some(v) => release_of(v),
        None => Release::for_pools(&solver.pools),
    };
    let mut feature_gates = FeatureGates::defaults(release);
    if let Some(c) = controller {
        feature_gates.spot_to_spot_consolidation = c
            .spot_to_spot
            .unwrap_or(feature_gates.spot_to_spot_consolidation);
        feature_gates.drift = c.drift.unwrap_or(feature_gates.drift);
    }
    if let Some(on) = config.spot_to_spot {
        feature_gates.spot_to_spot_consolidation = on;
    }
    let min_values_policy = min_values_policy(config, controller);
    // The option came with v1.4 (`options.go`): earlier releases honour preferences.
    let preference_policy = match release {
        Release::V1_14 => preference_policy(config, controller),
        Release::V0_37 | Release::V0_31 => PreferencePolicy::Respect,
    };
    // The provisioner's view (`nominated_nodes`) schedules with the policy too.
    preference_policy.apply(
        solver.pods.iter_mut().chain(
            solver
                .existing_nodes
                .iter_mut()
                .flat_map(|n| n.pods.iter_mut()),
        ),
    );
    if let Some(storage) = solver.storage.as_deref() {
        let unknown = solver
            .existing_nodes
            .iter()
            .flat_map(|e| &e.pods)
            .filter(|p| !p.volumes.is_empty() && storage.claims_of(p).is_none())
            .count();
        if unknown > 0 {
            manifests.warnings.push(format!(
                "assuming: {unknown} bound pod(s) have volumes whose PersistentVolumeClaim, PersistentVolume or StorageClass is not in the input: they may move to any zone, as Karpenter does when it cannot look a volume up (add pvc,pv,storageclass to the input)"
            ));
        }
    }
    if release == Release::V1_14 {
        let pods = solver.existing_nodes.iter().take(registered);
        let unread = drain::unread_do_not_evict(pods.flat_map(|e| &e.pods));
        manifests.warnings.extend(do_not_evict_warning(&unread));
    }
    let pods = solver.existing_nodes.iter().take(registered);
    let unread = drain::unread_safe_to_evict(pods.flat_map(|e| &e.pods));
    manifests.warnings.extend(safe_to_evict_warning(&unread));
    let (nominated, buffer_nodes) = nominated_nodes(&solver, &manifests.pdbs, config.now)?;
    let by_node = claims_by_node(&claims);
    // The solver's existing nodes are the registered nodes, then NodeClaims still launching;
    // consolidation only disrupts the former.
    let nodes = solver
        .existing_nodes
        .into_iter()
        .take(registered)
        .map(|mut e| {
            let claim = by_node
                .get(e.node.name.as_str())
                .or_else(|| e.node.provider_id.as_deref().and_then(|p| by_node.get(p)));
            // Not initialized yet: what its NodeClaim reports stands for what the Node does
            // not list yet (`statenode.go` `Allocatable()`), as in a plan.
            if let Some(c) = claim.filter(|_| !e.node.initialized) {
                e.node.fill_from_claim(&c.capacity, &c.allocatable);
            }
            NodeInput {
                claim: claim.map(|c| claim_facts(c, &e.node)),
                pods: e.pods.into_iter().map(bound_pod).collect(),
                nominated: nominated.contains(&e.node.name),
                node: e.node,
            }
        })
        .collect();
    Ok(ConsolidationInput {
        now: config.now,
        release,
        feature_gates,
        min_values_policy,
        preference_policy,
        nodes,
        pending_pods: solver.pods,
        buffer_nodes,
        pdbs,
        pools: solver.pools,
        daemonsets: solver.daemonsets,
        namespace_labels: solver.namespace_labels,
        storage: solver.storage,
    })
}

/// The warning for pods whose `karpenter.sh/do-not-evict` Karpenter v1 no longer reads
/// ([`drain::unread_do_not_evict`]; thread aws/karpenter-provider-aws#6861: nodes with such pods
/// were consolidated after the upgrade to v1.0). None for none.
fn do_not_evict_warning(pods: &[String]) -> Option<String> {
    let who = pods_who(pods)?;
    Some(format!(
        "{who} karpenter.sh/do-not-evict, which Karpenter v1 no longer reads (v0.31–v0.37 did): it does not hold the node from Karpenter's disruption (karpenter.sh/do-not-disrupt does); this tool's own drain (--yes) still waits for such a pod"
    ))
}

/// The warning for pods that keep their node only by Cluster Autoscaler's
/// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`, which no Karpenter release reads
/// ([`drain::unread_safe_to_evict`]; thread aws/karpenter-provider-aws#6394). None for none.
fn safe_to_evict_warning(pods: &[String]) -> Option<String> {
    let who = pods_who(pods)?;
    Some(format!(
        "{who} cluster-autoscaler.kubernetes.io/safe-to-evict=false, which Karpenter does not read: it does not hold the node from Karpenter's disruption (karpenter.sh/do-not-disrupt: \"true\" does)"
    ))
}

/// A warning's subject: `pod ns/a has`, `3 pods (ns/a, …) have`; None for no pod.
fn pods_who(pods: &[String]) -> Option<String> {
    let first = pods.first()?;
    Some(match pods.len() {
        1 => format!("pod {first} has"),
        n => format!("{n} pods ({first}, …) have"),
    })
}

/// A bound pod with the facts disruption reads beyond scheduling: its priority, its
/// `controller.kubernetes.io/pod-deletion-cost` parsed as Karpenter does (`strconv.ParseFloat`;
/// a value that does not parse is ignored) and whether its Ready condition is False.
fn bound_pod(pod: Pod) -> BoundPod {
    BoundPod {
        priority: pod.priority,
        deletion_cost: pod.deletion_cost_value(),
        not_ready: pod.not_ready,
        pod,
    }
}

/// Evaluates the whole cluster and keeps the selected nodes, with the actions that touch
/// them and their savings; unknown nodes and pools are input errors.
pub fn evaluate(
    config: &Config,
    input: ConsolidationInput,
) -> Result<ConsolidationReport, CommandError> {
    for name in &config.nodepools {
        if !input.pools.iter().any(|p| &p.pool.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    let mut report = consolidation::evaluate(input);
    for name in &config.nodes {
        if !report.nodes.iter().any(|n| &n.name == name) {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node with a NodeClaim in the input (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name)"
            )));
        }
    }
    if config.nodes.is_empty() && config.nodepools.is_empty() {
        return Ok(report);
    }
    report.nodes.retain(|n| {
        (config.nodes.is_empty() || config.nodes.contains(&n.name))
            && (config.nodepools.is_empty() || config.nodepools.contains(&n.node_pool))
    });
    let kept: Vec<&str> = report.nodes.iter().map(|n| n.name.as_str()).collect();
    report
        .actions
        .retain(|a| a.nodes.iter().any(|n| kept.contains(&n.as_str())));
    report.savings_per_hour = report.actions.iter().map(|a| a.savings_per_hour).sum();
    Ok(report)
}

/// Each NodeClaim by its node's name and by its provider id.
/// The existing nodes Karpenter's provisioner would place a pending pod on — or a pod of a
/// deleting node it schedules again — in this snapshot: it nominates them, and a nominated node
/// is no candidate for any disruption for the nomination window (`core v1.14.1:
/// pkg/controllers/provisioning/scheduling/scheduler.go` `Solve` → `NominateNodeForPod`,
/// `state/statenode.go` `Nominated`, `ValidateNodeDisruptable` "node is nominated for a pending
/// pod"; `state/suite_test.go` "should nominate the node until the nomination time passes").
/// The provisioner runs every batch while such a pod is pending, so the nomination lasts as
/// long as the snapshot's pod does. One solve, only when there is such a pod. CapacityBuffer
/// virtual pods nominate nothing (`scheduler.go` `Record`); the nodes they are placed on are
/// the second set, which emptiness leaves alone (`buffers.go` `bufferPodCountsFromResults`).
fn nominated_nodes(
    solver: &crate::scheduling::Input,
    pdbs: &[PodDisruptionBudget],
    now: i64,
) -> Result<(std::collections::HashSet<String>, Vec<String>), CommandError> {
    let deleting = solver
        .existing_nodes
        .iter()
        .any(|n| n.node.deleting && !n.pods.is_empty());
    if solver.pods.is_empty() && !deleting {
        return Ok(Default::default());
    }
    // Only a deleting node's pods are added: without one, the snapshot's input is solved as it
    // is, not copied (the whole cluster's nodes and pods).
    let mut plan = if deleting {
        let mut input = solver.clone();
        crate::usecases::provisioning::input::reschedule_deleting(&mut input, pdbs, now)?;
        if input.pods.is_empty() {
            return Ok(Default::default());
        }
        crate::scheduling::solve(&input)
    } else {
        crate::scheduling::solve(solver)
    };
    crate::scheduling::split_buffers(&mut plan, &solver.pods);
    let buffer_nodes = plan
        .buffers
        .iter()
        .flat_map(|b| b.existing_nodes.iter().map(|e| e.node.clone()))
        .collect();
    let nominated = plan
        .existing_nodes
        .into_iter()
        .filter(|e| !e.pods.is_empty())
        .map(|e| e.node)
        .collect();
    Ok((nominated, buffer_nodes))
}

fn claims_by_node(claims: &[NodeClaim]) -> HashMap<&str, &NodeClaim> {
    let mut by = HashMap::new();
    for c in claims {
        if let Some(n) = &c.node_name {
            by.insert(n.as_str(), c);
        }
        if let Some(p) = &c.provider_id {
            by.insert(p.as_str(), c);
        }
    }
    by
}

/// What the disruption controller reads of a NodeClaim (and, for v1alpha5, its node).
fn claim_facts(claim: &NodeClaim, node: &Node) -> ClaimFacts {
    let time = |t: Option<&String>| t.and_then(|t| parse_rfc3339(t));
    let since = |condition: &str| time(claim.true_since.get(condition).and_then(|s| s.0.as_ref()));
    let created_at =
        time(claim.created.as_ref()).or_else(|| time(node.creation_timestamp.as_ref()));
    let created = created_at.unwrap_or_default();
    // Machines and early NodeClaims have no Initialized condition: the node's label says it.
    let initialized_at = since("Initialized").or_else(|| {
        (node.initialized || node.labels.contains_key(labels::INITIALIZED)).then_some(created)
    });
    let seconds = |d: Option<&String>| {
        d.filter(|d| d.as_str() != "Never")
            .and_then(|d| parse_duration(d).ok())
    };
    ClaimFacts {
        name: claim.name.clone(),
        created,
        initialized_at,
        last_pod_event: time(claim.last_pod_event.as_ref()),
        empty_since: since("Empty")
            .or_else(|| time(node.annotations.get(labels::EMPTINESS_TIMESTAMP))),
        // Without a creation time the API server would stamp on apply, the expiry is unknown:
        // not expired (rather than 720h after 1970).
        expire_after: created_at.and(seconds(claim.expire_after.as_ref())),
        termination_grace_period: seconds(claim.termination_grace_period.as_ref()),
        deleting: claim.deleting || node.deleting,
        gone: None,
        drifted: claim.true_since.get("Drifted").map(|(at, reason)| Drifted {
            since: time(at.as_ref()).unwrap_or(created),
            reason: reason.clone().unwrap_or_else(|| "Drifted".into()),
        }),
        consolidatable_false: claim.conditions.get("Consolidatable").map(String::as_str)
            == Some("False"),
        instance_terminating: claim.true_since.contains_key("InstanceTerminating"),
    }
}

/// A PDB as the engine reads it; `status.disruptionsAllowed` when the cluster counted it.
pub(crate) fn pdb_input(pdb: &PodDisruptionBudget) -> Result<PdbInput, CommandError> {
    // `namespace: ""` is the default namespace too, as for pods (`ObjectMeta::namespace_or_default`).
    let namespace = pdb
        .metadata
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".into());
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let spec = pdb.spec.clone().unwrap_or_default();
    let count = |field: &str,
                 v: &Option<IntOrString>|
     -> Result<Option<IntOrPercent>, CommandError> {
        let bad = |text: &str| {
            CommandError::input(format!(
                "PodDisruptionBudget {namespace}/{name}: spec.{field} {text:?} is neither a count nor a percentage"
            ))
        };
        Ok(match v {
            None => None,
            Some(IntOrString::Int(i)) => Some(IntOrPercent::Int(
                i32::try_from(*i).map_err(|_| bad(&i.to_string()))?,
            )),
            Some(IntOrString::String(s)) => Some(match s.strip_suffix('%') {
                Some(p) => IntOrPercent::Percent(p.trim().parse().map_err(|_| bad(s))?),
                None => IntOrPercent::Int(s.trim().parse().map_err(|_| bad(s))?),
            }),
        })
    };
    Ok(PdbInput {
        selector: crate::api::live::pdb_selector(pdb)?,
        min_available: count("minAvailable", &spec.min_available)?,
        max_unavailable: count("maxUnavailable", &spec.max_unavailable)?,
        always_allow_unhealthy: spec.unhealthy_pod_eviction_policy.as_deref()
            == Some("AlwaysAllow"),
        disruptions_allowed: pdb.status.as_ref().and_then(|s| s.disruptions_allowed),
        namespace,
        name,
    })
}

#[cfg(test)]
pub(crate) mod fuzz_check;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_controller_settings;
