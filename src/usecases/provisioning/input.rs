//! Manifests → the solver's [`Input`]: the selected pools with their instance types sized for
//! their class, the existing nodes with their pods, the NodeClaims launched but not registered
//! yet (in-flight capacity), the DaemonSets and the pending pods.
//!
//! [`assemble`] is the pure part (no catalog, no IO): it only needs the normalised objects and
//! each pool's instance types, so it can move into `scheduling` once `Manifests` lives in the
//! model. [`CatalogSizing`] sizes a pool's types from the catalog.

use std::collections::{BTreeMap, HashMap};

use super::Selection;
use crate::api::Manifests;
use crate::cloud::{Catalog, CatalogError, InstanceTypeContext};
use crate::error::CommandError;
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{ApiGeneration, Condition, ConditionStatus, NodeClass, NodePool};
use crate::model::placement_group::PlacementGroupSelector;
use crate::model::pod::Pod;
use crate::model::requirements::Requirements;
use crate::model::resources::Resources;
use crate::scheduling::{
    apply_overlays, overlay_conflicts, ClaimAnnotations, ExistingNode, ExistingPlacement, Input,
    Options, PoolImage, PoolInput,
};

/// Builds the solver input: the pools `selection` names (all when it names none), sized by
/// `sizing`, with the NodeOverlays applied (a conflicting one is left out, with a warning in
/// `manifests.warnings`). The pending pods and the bound pods (into their nodes) are *moved* out of
/// `manifests` (on a 150k-pod cluster a copy would double the memory, docs/performance.md B4); everything
/// else is left in place.
pub fn build_input(
    manifests: &mut Manifests,
    selection: &Selection,
    sizing: &mut CatalogSizing<'_>,
) -> Result<Input, CommandError> {
    for name in &selection.nodepools {
        if !manifests.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner in the input"
            )));
        }
    }
    drop_ignored_overlays(manifests, selection.node_overlay_gate);
    // A NodePool being deleted takes no new capacity (`core v1.14.1:
    // pkg/controllers/provisioning/provisioner.go` `GetNodePools`; suite_test.go "should ignore
    // NodePools that are deleting"), static ones included (`static/provisioning/controller.go`).
    let deleting: Vec<String> = manifests
        .node_pools
        .iter()
        .filter(|p| p.deleting)
        .map(|p| format!("{}/{}: being deleted (metadata.deletionTimestamp): Karpenter launches nothing for it; left out of the plan", p.kind(), p.name))
        .collect();
    manifests.warnings.extend(deleting);
    manifests
        .warnings
        .extend(unsynced_warning(manifests, "provisions"));
    // A v1 NodePool whose `Ready` condition is not true takes no new capacity either
    // (`provisioner.go` `NewScheduler`, static pools: `static/provisioning/controller.go`).
    let not_ready: Vec<(String, String)> = manifests
        .node_pools
        .iter()
        .filter(|p| !p.deleting)
        .filter_map(|p| {
            let why = not_ready(p, class_of(manifests, p))?;
            Some((p.name.clone(), format!("{}/{}: not Ready ({why}): Karpenter launches nothing for it; left out of the plan", p.kind(), p.name)))
        })
        .collect();
    manifests
        .warnings
        .extend(not_ready.iter().map(|(_, w)| w.clone()));
    // Static pools are kept at their replicas only behind the controller's `StaticCapacity`
    // gate (`core v1.14.1: pkg/controllers/controllers.go`; off by default), and the dynamic
    // provisioner never uses them (`provisioner.go`): with the gate off nothing launches.
    let static_off = selection.static_capacity_gate == Some(false);
    let gated: Vec<String> = manifests
        .node_pools
        .iter()
        .filter(|p| static_off && !p.deleting && p.replicas.is_some())
        .map(|p| format!("{}/{}: static (spec.replicas), but the running Karpenter controller has the StaticCapacity feature gate off (its default): Karpenter launches nothing for it; left out of the plan", p.kind(), p.name))
        .collect();
    manifests.warnings.extend(gated);
    let selected: Vec<(&NodePool, Option<&NodeClass>)> = manifests
        .node_pools
        .iter()
        .filter(|p| !p.deleting)
        .filter(|p| !(static_off && p.replicas.is_some()))
        .filter(|p| !not_ready.iter().any(|(name, _)| name == &p.name))
        .filter(|p| selection.nodepools.is_empty() || selection.nodepools.contains(&p.name))
        .map(|p| (p, class_of(manifests, p)))
        .collect();
    // Types without a price take a NodeOverlay's, as the AWS provider's offerings do — but
    // never a conflicting overlay's (`GetOverlayPrice` reads validated overlays only, and the
    // conflict check sees every type, priced or not): when one would give a price, the pools
    // are sized again without it.
    sizing.discover_memory(manifests);
    let overlays = &manifests.node_overlays;
    sizing.overlay_prices = crate::model::overlay::provider_prices(overlays);
    let mut pools = sizing.size_all(&selected)?;
    // Karpenter validates the overlays against every NodePool whose instance types resolve
    // (`core v1.14.1: pkg/controllers/nodeoverlay/controller.go` `Reconcile` lists them all:
    // deleting, not Ready, static and unselected ones too; the AWS provider resolves any pool
    // whose EC2NodeClass exists and is not being deleted), so a conflict found in a pool this
    // plan leaves out still keeps the overlay off every pool.
    let others = if overlays.is_empty() {
        Vec::new()
    } else {
        let others: Vec<(&NodePool, Option<&NodeClass>)> = manifests
            .node_pools
            .iter()
            .filter(|p| !selected.iter().any(|(s, _)| s.name == p.name))
            .map(|p| (p, class_of(manifests, p)))
            .filter(|(_, c)| c.is_some_and(|c| !c.deleting))
            .collect();
        // A pool whose types cannot be sized is not evaluated, as upstream's on an error.
        others
            .iter()
            .filter_map(|one| sizing.size_all(std::slice::from_ref(one)).ok())
            .flatten()
            .collect()
    };
    let view: Vec<(&NodePool, &[InstanceType])> = pools
        .iter()
        .chain(others.iter())
        .map(|(p, t)| (p, t.as_slice()))
        .collect();
    let conflicts = overlay_conflicts(&view, overlays);
    // The overlays Karpenter validates: the only ones priced for the provider and applied.
    let valid: Vec<_> = overlays
        .iter()
        .filter(|o| !conflicts.contains(&o.name))
        .cloned()
        .collect();
    if !conflicts.is_empty() {
        let prices = crate::model::overlay::provider_prices(&valid);
        if prices != sizing.overlay_prices {
            sizing.overlay_prices = prices;
            pools = sizing.size_all(&selected)?;
        }
    }
    let mut input = assemble(
        manifests,
        pools,
        Options {
            max_instance_types: selection.max_instance_types,
            min_values_policy: selection.min_values_policy,
            ..Options::default()
        },
    );
    // NodeOverlays change the types' prices and capacity before anything is scheduled
    // (docs/karpenter.md §6.10); one that conflicts with another of its weight is not applied.
    let mut left_out = conflicts;
    left_out.extend(apply_overlays(&mut input.pools, &valid));
    for name in left_out {
        manifests.warnings.push(format!(
            "NodeOverlay/{name}: not applied: it conflicts with another NodeOverlay of the same weight on the same instance types (Karpenter marks it ValidationSucceeded=False, reason Conflict)"
        ));
    }
    // A static pool short of replicas that nothing can launch for: Karpenter still creates the
    // NodeClaims, and their launches fail (`scheduling::unlaunchable_static_pools`).
    for (pool, missing) in crate::scheduling::unlaunchable_static_pools(&input) {
        manifests.warnings.push(format!(
            "NodePool/{pool}: static, {missing} replica(s) short, but no instance type satisfies its requirements with an available offering: none is planned (Karpenter creates the NodeClaims and each launch fails for lack of a compatible instance type)"
        ));
    }
    Ok(input)
}

/// Leaves the NodeOverlays out, with a warning naming them, when the running controller's
/// `NodeOverlay` feature gate is off (`gate == Some(false)`): Karpenter then neither
/// validates nor applies any (`core v1.14.1: pkg/controllers/controllers.go`, the overlay
/// controller only `if FeatureGates.NodeOverlay`; `cloudprovider/overlay/cloudprovider.go`
/// returns the provider's types unchanged without it). The gate is off by default
/// (`options.go` `DefaultFeatureGates`).
pub fn drop_ignored_overlays(manifests: &mut Manifests, gate: Option<bool>) {
    if gate != Some(false) || manifests.node_overlays.is_empty() {
        return;
    }
    let names: Vec<String> = manifests
        .node_overlays
        .iter()
        .map(|o| format!("NodeOverlay/{}", o.name))
        .collect();
    manifests.warnings.push(format!(
        "{}: not applied: the running Karpenter controller has the NodeOverlay feature gate off (its default; FEATURE_GATES or --feature-gates NodeOverlay=true turns it on), so it ignores NodeOverlays",
        names.join(", ")
    ));
    manifests.node_overlays.clear();
}

/// The `karpenter.sh/nodepool-hash` and `karpenter.sh/nodepool-hash-version` the controller of
/// `pool`'s generation writes on each NodeClaim it creates (core v1.14.1:
/// `scheduling/nodeclaimtemplate.go` `NewNodeClaimTemplate`, `NodePoolHashVersion` v3; v0.37.x:
/// v2), computed as `drift check` computes the pool's side (`drift::hash::node_pool_hash`), so
/// a node this tool launched is compared as Karpenter's are. Empty for a v1alpha5 Provisioner
/// (whose Machines carry no such hash) or where the hash cannot be computed (no spec kept).
pub fn hash_annotations(pool: &NodePool) -> BTreeMap<String, String> {
    let version = match pool.generation {
        Some(ApiGeneration::V1) => "v3",
        Some(ApiGeneration::V1Beta1) => "v2",
        _ => return BTreeMap::new(),
    };
    match crate::drift::hash::node_pool_hash(pool, version) {
        Ok(hash) => BTreeMap::from([
            (labels::NODEPOOL_HASH.to_string(), hash),
            (
                labels::NODEPOOL_HASH_VERSION.to_string(),
                version.to_string(),
            ),
        ]),
        Err(_) => BTreeMap::new(),
    }
}

/// The warning for a snapshot in which Karpenter would not act yet: a NodeClaim has not
/// resolved its launch ([`crate::model::node::unsynced_claims`]). `acts` says what Karpenter
/// waits to do ("provisions", "disrupts").
pub fn unsynced_warning(manifests: &Manifests, acts: &str) -> Option<String> {
    let names = crate::model::node::unsynced_claims(&manifests.node_claims);
    let first = names.first()?;
    let more = match names.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(format!(
        "NodeClaim/{first}{more}: no status.providerID yet (its instance is being launched): Karpenter's cluster state is not synced until it resolves, and Karpenter {acts} nothing meanwhile; this run decides anyway, without that NodeClaim's capacity"
    ))
}

/// The pure assembly (see the module documentation): `pools` are the selected pools with their
/// instance types. A pool's usage counts the capacity of its nodes that are not being deleted
/// and of its in-flight NodeClaims ([`pool_usage`]).
pub fn assemble(
    manifests: &mut Manifests,
    pools: Vec<(NodePool, Vec<InstanceType>)>,
    options: Options,
) -> Input {
    let in_flight = in_flight_claims(manifests);
    let reported = launched_without_allocatable(manifests);
    let mut by_node: HashMap<String, Vec<Pod>> = HashMap::new();
    for pod in std::mem::take(&mut manifests.bound_pods) {
        if let Some(node) = pod.node_name.clone() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    let deleting = DeletingClaims::of(manifests);
    let mut existing_nodes: Vec<ExistingNode> = manifests
        .nodes
        .iter()
        .map(|n| {
            let mut node = with_claim_state(manifests, n.clone());
            node.deleting = deleting.marks(&node);
            ExistingNode {
                node,
                pods: by_node.remove(&n.name).unwrap_or_default(),
            }
        })
        .collect();
    existing_nodes.extend(in_flight);
    let pools = pools
        .into_iter()
        .map(|(pool, instance_types)| PoolInput {
            node_class: pool.node_class_ref.as_ref().map(|r| r.name.clone()),
            instance_types,
            usage: pool_usage(&pool, existing_nodes.iter().chain(&reported)),
            claim_annotations: ClaimAnnotations {
                hash: hash_annotations(&pool),
                records_min_values: pool.generation == Some(ApiGeneration::V1),
                ..ClaimAnnotations::default()
            },
            images: class_images(&pool, &manifests.node_classes),
            pool,
        })
        .collect();
    Input {
        pods: std::mem::take(&mut manifests.pods),
        existing_nodes,
        pools,
        daemonsets: manifests.daemonsets.clone(),
        namespace_labels: manifests.namespace_labels.clone(),
        storage: Some(std::sync::Arc::new(manifests.storage.clone())),
        options,
    }
}

/// What counts against `pool`'s limits: the capacity (plus `nodes: 1`) of each of its nodes and
/// in-flight NodeClaims not being deleted, as Karpenter's cluster state sums it (`core v1.14.1:
/// pkg/controllers/state/cluster.go` `NodePoolResourcesFor`; the scheduler subtracts the
/// `Capacity()` of the active state nodes, `scheduler.go` `updateRemainingResources`;
/// `state/suite_test.go` "NodePool Resources": a node marked for deletion or terminating no
/// longer counts). The pool's `status.resources` is that same sum as the counter controller
/// last wrote it: v1 never reads it for limits, so adding it counted every node twice. v1beta1
/// and v1alpha5 (`v0.37.7` / `v0.27.6` `provisioner.go` `Create` / `Launch`) refused a pool
/// whose `status.resources` exceeds its limits: that gate is kept as a floor, per resource.
fn pool_usage<'n>(pool: &NodePool, nodes: impl Iterator<Item = &'n ExistingNode>) -> Resources {
    let usage = nodes
        .filter(|e| !e.node.deleting)
        .filter(|e| e.node.labels.get(pool.owner_label()) == Some(&pool.name))
        .fold(Resources::new(), |acc, e| {
            acc.add(&with_node_count(&e.node.capacity))
        });
    if pool.generation == Some(ApiGeneration::V1) {
        usage
    } else {
        usage.max(&pool.status_resources)
    }
}

/// A Node with what its NodeClaim says about its taints (`core v1.14.1:
/// pkg/controllers/state/statenode.go` `Taints()`) and, until it is initialized, its resources
/// ([`Node::fill_from_claim`]): the startup taints scheduling ignores until
/// it is initialized — its NodeClaim's, or, when the input has no NodeClaim for it, its
/// NodePool's (the template its NodeClaim was made from) — and, while a managed node has not
/// registered (`karpenter.sh/registered` not `true`), the NodeClaim's taints instead of the
/// Node's.
fn with_claim_state(manifests: &Manifests, mut node: Node) -> Node {
    if node.initialized {
        return node;
    }
    match claim_of(manifests, &node) {
        Some(c) => {
            node.startup_taints = c.startup_taints.clone();
            node.fill_from_claim(&c.capacity, &c.allocatable);
            let registered = node
                .labels
                .get(labels::REGISTERED)
                .is_some_and(|v| v == "true");
            if !registered {
                let cordon = node
                    .taints
                    .iter()
                    .find(|t| t.key == labels::UNSCHEDULABLE_TAINT)
                    .cloned();
                node.taints = c.taints.clone();
                node.taints.extend(cordon.filter(|_| node.unschedulable));
            }
        }
        None => {
            let pool = node
                .node_pool()
                .and_then(|name| manifests.node_pools.iter().find(|p| p.name == name));
            if let Some(p) = pool {
                node.startup_taints = p.startup_taints.clone();
            }
        }
    }
    node
}

/// Why a NodePool is not `Ready`, if it is not: Karpenter's provisioner leaves such a pool out
/// (`core v1.14.1: pkg/controllers/provisioning/provisioner.go` `NewScheduler`:
/// `StatusConditions().IsTrue(Ready)`; scheduling suite "should not schedule pods with nodePool
/// which is not ready"). Only v1 has the filter (v0.37 and v0.31 schedule with any pool).
///
/// The pool's `Ready` condition decides when a controller wrote it. Without it (a manifest from
/// git) the pool is taken as ready — `IsTrue` would read an absent condition as not ready, which
/// would leave every offline plan empty — unless what the readiness controllers would write
/// says otherwise: the pool's own `ValidationSucceeded` or `NodeClassReady` not true, or its
/// node class, when in the input, being deleted or not `Ready`
/// (`pkg/controllers/nodepool/readiness/controller.go`: `NodeClassTerminating`, the class's
/// `Ready` reason and message, `NodeClassReadinessUnknown`). A class absent from the input, or
/// one without status, counts as ready.
pub fn not_ready(pool: &NodePool, class: Option<&NodeClass>) -> Option<NotReady> {
    if pool.generation != Some(ApiGeneration::V1) {
        return None;
    }
    let find = |list: &'_ [Condition], t: &str| list.iter().find(|c| c.type_ == t).cloned();
    if let Some(ready) = find(&pool.conditions, "Ready") {
        return (ready.status != ConditionStatus::True).then_some(NotReady::Pool(ready));
    }
    for t in ["ValidationSucceeded", "NodeClassReady"] {
        if let Some(c) = find(&pool.conditions, t).filter(|c| c.status != ConditionStatus::True) {
            return Some(NotReady::Pool(c));
        }
    }
    let class = class?;
    let (kind, name) = (class.kind.clone(), class.name.clone());
    if class.deleting {
        return Some(NotReady::ClassTerminating { kind, name });
    }
    let ready = find(&class.status.conditions, "Ready")?;
    match ready.status {
        ConditionStatus::True => None,
        ConditionStatus::Unknown => Some(NotReady::ClassReadinessUnknown { kind, name }),
        ConditionStatus::False => Some(NotReady::ClassNotReady { kind, name, ready }),
    }
}

/// Why a v1 NodePool takes no new capacity ([`not_ready`]): the readiness controller's
/// reasons (`core v1.14.1: pkg/controllers/nodepool/readiness/controller.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// The pool's own condition that is not True: `Ready`, or without one
    /// `ValidationSucceeded` or `NodeClassReady`.
    Pool(Condition),
    /// Its node class is being deleted (`NodeClassReady=False`, `NodeClassTerminating`).
    ClassTerminating {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
    },
    /// Its node class reports `Ready=Unknown` (`NodeClassReadinessUnknown`).
    ClassReadinessUnknown {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
    },
    /// Its node class is not Ready (`NodeClassReady=False` with the class's reason and
    /// message).
    ClassNotReady {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
        /// The class's `Ready` condition.
        ready: Condition,
    },
}

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotReady::Pool(c) => f.write_str(&explain(c)),
            NotReady::ClassTerminating { kind, name } => write!(
                f,
                "NodeClassReady=False, NodeClassTerminating: {kind}/{name} is being deleted"
            ),
            NotReady::ClassReadinessUnknown { kind, name } => write!(
                f,
                "NodeClassReady=False, NodeClassReadinessUnknown: {kind}/{name} reports Ready=Unknown"
            ),
            NotReady::ClassNotReady { kind, name, ready } => write!(
                f,
                "NodeClassReady=False, {kind}/{name} is not Ready: {}",
                explain(ready)
            ),
        }
    }
}

/// `Type=Status, Reason: message`, leaving out what is empty.
fn explain(c: &Condition) -> String {
    let status = match c.status {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    };
    let mut out = format!("{}={status}", c.type_);
    if !c.reason.is_empty() {
        out.push_str(&format!(", {}", c.reason));
    }
    if !c.message.is_empty() {
        out.push_str(&format!(": {}", c.message));
    }
    out
}

/// The NodeClaim of `node` in the input, if any (by node name or provider id).
fn claim_of<'m>(
    manifests: &'m Manifests,
    node: &Node,
) -> Option<&'m crate::model::nodeclaim::NodeClaim> {
    manifests.node_claims.iter().find(|c| {
        c.node_name.as_deref() == Some(node.name.as_str())
            || (node.provider_id.is_some() && c.provider_id == node.provider_id)
    })
}

/// The NodeClaims being deleted, by the node name and provider id they name: `core v1.14.1:
/// pkg/controllers/state/statenode.go` `Deleted()` — a NodeClaim with a `deletionTimestamp` or
/// `InstanceTerminating=True` marks its Node deleting (a Node without a NodeClaim: its own
/// `deletionTimestamp`, already read). Such a node takes no pods and its pods are scheduled
/// again ([`reschedule_deleting`]). Built once per input: few claims are ever deleting, and a
/// search of every claim per node is quadratic on a big cluster.
struct DeletingClaims<'m> {
    nodes: std::collections::HashSet<&'m str>,
    provider_ids: std::collections::HashSet<&'m str>,
}

impl<'m> DeletingClaims<'m> {
    fn of(manifests: &'m Manifests) -> Self {
        let deleting = manifests.node_claims.iter().filter(|c| {
            c.deleting
                || c.conditions
                    .get("InstanceTerminating")
                    .is_some_and(|s| s == "True")
        });
        let mut claims = DeletingClaims {
            nodes: Default::default(),
            provider_ids: Default::default(),
        };
        for c in deleting {
            claims.nodes.extend(c.node_name.as_deref());
            claims.provider_ids.extend(c.provider_id.as_deref());
        }
        claims
    }

    /// Whether `node` is deleting, by itself or through its NodeClaim.
    fn marks(&self, node: &Node) -> bool {
        node.deleting
            || self.nodes.contains(node.name.as_str())
            || node
                .provider_id
                .as_deref()
                .is_some_and(|p| self.provider_ids.contains(p))
    }
}

/// Whether a pod is bound to a node being deleted (its NodeClaim's deletion counts): what
/// [`reschedule_deleting`] may plan again even when no pod is pending.
pub fn deleting_node_pods(manifests: &Manifests) -> bool {
    let claims = DeletingClaims::of(manifests);
    let deleting: std::collections::BTreeSet<&str> = manifests
        .nodes
        .iter()
        .filter(|n| claims.marks(n))
        .map(|n| n.name.as_str())
        .collect();
    !deleting.is_empty()
        && manifests
            .bound_pods
            .iter()
            .any(|p| p.node_name.as_deref().is_some_and(|n| deleting.contains(n)))
}

/// Moves the pods of the nodes being deleted that Karpenter schedules again into the pods to
/// place, and says which they were, by node (`core v1.14.1:
/// pkg/controllers/provisioning/provisioner.go` `Schedule`: `nodes.Deleting()
/// .CurrentlyReschedulablePods`, scheduled with the pending pods against the active nodes only;
/// which pods: [`crate::disruption::consolidation::currently_reschedulable`]). `now`: Unix
/// seconds, for do-not-disrupt durations.
pub fn reschedule_deleting(
    input: &mut Input,
    pdbs: &[crate::api::core::PodDisruptionBudget],
    now: i64,
) -> Result<Vec<ExistingPlacement>, CommandError> {
    if !input.existing_nodes.iter().any(|n| n.node.deleting) {
        return Ok(Vec::new());
    }
    // Read as consolidation reads them (`maxUnavailable: "0"` included, AlwaysAllow for a pod
    // whose Ready is False), and only when a node is being deleted.
    let pdbs = pdbs
        .iter()
        .map(crate::usecases::consolidate::pdb_input)
        .collect::<Result<Vec<_>, _>>()?;
    let mut moved = Vec::new();
    for node in input.existing_nodes.iter_mut().filter(|n| n.node.deleting) {
        let (go, stay): (Vec<Pod>, Vec<Pod>) =
            std::mem::take(&mut node.pods).into_iter().partition(|pod| {
                crate::disruption::consolidation::currently_reschedulable(pod, &pdbs, now)
            });
        node.pods = stay;
        if !go.is_empty() {
            moved.push(ExistingPlacement {
                node: node.node.name.clone(),
                pods: go.iter().map(Pod::key).collect(),
            });
            input.pods.extend(go);
        }
    }
    Ok(moved)
}

/// A node's capacity plus `nodes: 1`, for `limits.nodes`.
pub fn with_node_count(capacity: &Resources) -> Resources {
    let mut r = capacity.clone();
    r.set("nodes", 1000);
    r
}

/// The node class a pool refers to, if it is in the input.
fn class_of<'m>(manifests: &'m Manifests, pool: &NodePool) -> Option<&'m NodeClass> {
    let r = pool.node_class_ref.as_ref()?;
    manifests
        .node_classes
        .iter()
        .find(|c| c.name == r.name && (r.kind.is_empty() || c.kind == r.kind))
}

/// NodeClaims launched but not registered as Nodes yet: capacity the scheduler fills first, like
/// Karpenter's in-flight nodes (labels from the NodeClaim, its taints, its reported allocatable).
fn in_flight_claims(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| !c.deleting)
        // A launched NodeClaim that reports no allocatable yet takes no pod, but a static pool's
        // still counts toward its replicas: Karpenter's state tracks it (`state/statenodepool.go`
        // `GetNodeCount`; `static/provisioning/suite_test.go` "should not create additional
        // nodeclaims": one NodeClaim with only a providerID counts). One without a provider id
        // is the scale-down's `unresolved` member (`usecases/provisioning/statics.rs`). Other
        // pools' are counted against their limits only ([`launched_without_allocatable`]).
        .filter(|c| !c.allocatable.is_empty() || launched_static_claim(manifests, c))
        .filter(|c| !has_node(manifests, c))
        .map(|c| {
            let mut labels = claim_labels(c);
            for (k, v) in Requirements::from_selectors(&c.requirements).single_value_labels() {
                labels.entry(k).or_insert(v);
            }
            ExistingNode {
                node: Node {
                    name: c.node_name.clone().unwrap_or_else(|| c.name.clone()),
                    labels,
                    annotations: c.annotations.clone(),
                    taints: c.taints.clone(),
                    startup_taints: c.startup_taints.clone(),
                    capacity: c.capacity.clone(),
                    allocatable: c.allocatable.clone(),
                    provider_id: c.provider_id.clone(),
                    ..Default::default()
                },
                pods: Vec::new(),
            }
        })
        .collect()
}

/// NodeClaims launched (a `status.providerID`), with no Node and no `status.allocatable` yet:
/// no capacity to schedule on, but Karpenter's cluster state already holds them as state nodes
/// whose `Capacity()` is the NodeClaim's, which the scheduler subtracts from their pool's limits
/// (`core v1.14.1: pkg/controllers/state/cluster.go` `UpdateNodeClaim`, `scheduling/
/// scheduler.go` `updateRemainingResources`; provisioning suite "Resource Limits › should not
/// schedule when limits are exceeded": a NodeClaim of 100 CPUs under `cpu: 20`). Counted in
/// [`pool_usage`] only.
fn launched_without_allocatable(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| c.provider_id.is_some() && c.allocatable.is_empty())
        .filter(|c| !launched_static_claim(manifests, c))
        .filter(|c| !has_node(manifests, c))
        .map(|c| ExistingNode {
            node: Node {
                name: c.name.clone(),
                labels: claim_labels(c),
                capacity: c.capacity.clone(),
                deleting: c.deleting,
                ..Default::default()
            },
            pods: Vec::new(),
        })
        .collect()
}

/// A NodeClaim's labels, with `karpenter.sh/nodepool` from its pool when it lacks the label.
fn claim_labels(c: &NodeClaim) -> BTreeMap<String, String> {
    let mut labels = c.labels.clone();
    if let Some(pool) = &c.nodepool {
        labels
            .entry(labels::NODEPOOL.to_string())
            .or_insert_with(|| pool.clone());
    }
    labels
}

/// A launched NodeClaim (a provider ID) of a static pool: one of its replicas, held by
/// [`in_flight_claims`] whether it reports allocatable yet or not.
fn launched_static_claim(manifests: &Manifests, claim: &NodeClaim) -> bool {
    claim.provider_id.is_some()
        && manifests
            .node_pools
            .iter()
            .any(|p| p.replicas.is_some() && claim.nodepool.as_deref() == Some(p.name.as_str()))
}

/// Whether a Node of the input is `claim`'s (its `status.nodeName` or provider ID).
fn has_node(manifests: &Manifests, claim: &NodeClaim) -> bool {
    manifests.nodes.iter().any(|n| {
        Some(&n.name) == claim.node_name.as_ref()
            || (n.provider_id.is_some() && n.provider_id == claim.provider_id)
    })
}

/// Sizes a pool's instance types from the catalog for its class (AMI family, kubelet, block
/// devices, subnet zones). Pools sharing a class (and no kubelet override) share one sizing;
/// the cached list is cloned for all but its last user, which takes it (one copy per class, not
/// two).
pub struct CatalogSizing<'c> {
    catalog: &'c Catalog,
    region: &'c str,
    /// Cache key → users left.
    uses: BTreeMap<String, usize>,
    sized: BTreeMap<String, Vec<InstanceType>>,
    /// NodeOverlay prices for types the catalog has none for (`InstanceTypeContext::overlay_prices`).
    overlay_prices: BTreeMap<String, f64>,
    /// Node class name → instance type → discovered memory capacity
    /// (`InstanceTypeContext::discovered_memory`, [`CatalogSizing::discover_memory`]).
    discovered_memory: BTreeMap<String, BTreeMap<String, i64>>,
}

impl<'c> CatalogSizing<'c> {
    /// Sizing from `catalog` for `region`.
    pub fn new(catalog: &'c Catalog, region: &'c str) -> Self {
        CatalogSizing {
            catalog,
            region,
            uses: BTreeMap::new(),
            sized: BTreeMap::new(),
            overlay_prices: BTreeMap::new(),
            discovered_memory: BTreeMap::new(),
        }
    }

    /// Records the memory capacity the registered nodes of `manifests` report, as the AWS
    /// provider's discovered-capacity cache does (`aws v1.14.1:
    /// pkg/controllers/providers/instancetype/capacity/controller.go`, `pkg/providers/instancetype/
    /// instancetype.go` `UpdateInstanceTypeCapacityFromNode`): a node labelled
    /// `karpenter.sh/registered: "true"` whose NodeClaim's `status.imageID` is the AMI its class's
    /// `status.amis` map its instance type to (the first AMI, in order, whose requirements its
    /// labels meet: `amifamily.MapToInstanceTypes`) gives its `status.capacity.memory` for that
    /// type and class; the smallest seen wins. A class whose AMIs changed since the node launched
    /// gets nothing from it (upstream keys the cache by the AMIs' hash). Upstream's cache also
    /// remembers nodes deleted in the last 60 days; only the nodes of the input are seen here.
    /// Several calls add up (consolidation records before it takes the NodeClaims away).
    pub fn discover_memory(&mut self, manifests: &Manifests) {
        if manifests
            .node_classes
            .iter()
            .all(|c| c.status.amis.is_empty())
        {
            return;
        }
        // NodeClaims by node name and provider id: one look-up per node, not a search.
        let mut claims: HashMap<&str, &crate::model::nodeclaim::NodeClaim> = HashMap::new();
        for c in &manifests.node_claims {
            for key in [c.node_name.as_deref(), c.provider_id.as_deref()]
                .into_iter()
                .flatten()
            {
                claims.entry(key).or_insert(c);
            }
        }
        for node in &manifests.nodes {
            if node.labels.get(labels::REGISTERED).map(String::as_str) != Some("true")
                || node.capacity.memory <= 0
            {
                continue;
            }
            let Some(instance_type) = node.labels.get(labels::INSTANCE_TYPE) else {
                continue;
            };
            let by_provider_id = || node.provider_id.as_deref().and_then(|p| claims.get(p));
            let Some(claim) = claims.get(node.name.as_str()).or_else(by_provider_id) else {
                continue;
            };
            let (Some(image), Some(class_ref)) = (&claim.image_id, &claim.node_class_ref) else {
                continue;
            };
            let Some(class) = manifests.node_classes.iter().find(|c| {
                c.name == class_ref.name && (class_ref.kind.is_empty() || c.kind == class_ref.kind)
            }) else {
                continue;
            };
            if current_ami(&node.labels, class) != Some(image.as_str()) {
                continue;
            }
            let memory = self
                .discovered_memory
                .entry(class.name.clone())
                .or_default()
                .entry(instance_type.clone())
                .or_insert(node.capacity.memory);
            *memory = (*memory).min(node.capacity.memory);
        }
    }

    /// Each of `selected` with its instance types.
    fn size_all(
        &mut self,
        selected: &[(&NodePool, Option<&NodeClass>)],
    ) -> Result<Vec<(NodePool, Vec<InstanceType>)>, CatalogError> {
        self.expect(selected);
        let mut pools = Vec::with_capacity(selected.len());
        for (pool, class) in selected {
            pools.push(((*pool).clone(), self.instance_types(pool, *class)?));
        }
        Ok(pools)
    }

    /// Counts the users of each shareable sizing among the pools about to be sized.
    fn expect(&mut self, pools: &[(&NodePool, Option<&NodeClass>)]) {
        for (pool, class) in pools {
            let kubelet = pool.kubelet.is_some() || class.is_some_and(|c| c.kubelet.is_some());
            if !kubelet {
                *self.uses.entry(cache_key(pool, *class)).or_default() += 1;
            }
        }
    }

    /// The instance types of `pool` with `class`.
    fn instance_types(
        &mut self,
        pool: &NodePool,
        class: Option<&NodeClass>,
    ) -> Result<Vec<InstanceType>, CatalogError> {
        let kubelet = kubelet_of(pool, class);
        let key = cache_key(pool, class);
        let shared = kubelet.is_none() && self.uses.contains_key(&key);
        if shared {
            if let Some(types) = self.take_cached(&key) {
                return Ok(types);
            }
        }
        let family = class
            .and_then(|c| c.ami_family.clone())
            .unwrap_or_else(|| "AL2".to_string());
        let zones: Vec<String> = class
            .map(|c| c.status.subnets.iter().map(|s| s.zone.clone()).collect())
            .unwrap_or_default();
        // `status.subnets[].zoneID`: the offerings' `topology.k8s.aws/zone-id`.
        let zone_ids: BTreeMap<String, String> = class
            .into_iter()
            .flat_map(|c| &c.status.subnets)
            .filter_map(|s| Some((s.zone.clone(), s.zone_id.clone()?)))
            .collect();
        let network_interfaces = class.and_then(NodeClass::network_interfaces);
        // The class's placement group, resolved against the catalog's (`Catalog::
        // placement_groups`; unresolved: the plan assumes none, `assumptions.rs`).
        let placement_group = class
            .and_then(PlacementGroupSelector::of)
            .and_then(|s| s.resolve(self.catalog.placement_groups()?).cloned());
        let mut ctx = InstanceTypeContext::new(self.region, &family);
        ctx.network_interfaces = network_interfaces.as_deref();
        ctx.placement_group = placement_group.as_ref();
        if let Some(c) = class.filter(|c| c.generation.is_none_or(|g| g == ApiGeneration::V1)) {
            ctx.nested_virtualization = c.nested_virtualization.as_deref() == Some("enabled");
            ctx.connection_tracking = c
                .raw_spec
                .as_ref()
                .and_then(|s| s.get("connectionTracking"))
                .is_some_and(|v| !v.is_null());
        }
        ctx.kubelet = kubelet;
        ctx.generation = pool.generation;
        ctx.overlay_prices = &self.overlay_prices;
        if let Some(c) = class {
            ctx.block_devices = &c.block_devices;
            ctx.instance_store_policy = c.instance_store_policy.as_deref();
            ctx.capacity_reservations = &c.capacity_reservation_selector_terms;
        }
        if !zones.is_empty() {
            ctx.zones = Some(&zones);
        }
        ctx.zone_ids = &zone_ids;
        if let Some(memory) = class.and_then(|c| self.discovered_memory.get(&c.name)) {
            ctx.discovered_memory = memory;
        }
        let types = self.catalog.instance_types(&ctx)?;
        if shared {
            if let Some(n) = self.uses.get_mut(&key) {
                *n -= 1;
                if *n > 0 {
                    self.sized.insert(key, types.clone());
                }
            }
        }
        Ok(types)
    }

    /// A cached sizing: cloned while other users are left, taken by the last.
    fn take_cached(&mut self, key: &str) -> Option<Vec<InstanceType>> {
        if !self.sized.contains_key(key) {
            return None;
        }
        let n = self.uses.get_mut(key)?;
        *n -= 1;
        if *n == 0 {
            self.sized.remove(key)
        } else {
            self.sized.get(key).cloned()
        }
    }
}

/// The AMIs `pool`'s node class lists in its status, in order (empty when it lists none: offline
/// without a status every type is assumed to have one, as the family's aliases cover both
/// architectures).
fn class_images(pool: &NodePool, classes: &[NodeClass]) -> Vec<PoolImage> {
    let Some(class_ref) = pool.node_class_ref.as_ref() else {
        return Vec::new();
    };
    classes
        .iter()
        .find(|c| {
            c.name == class_ref.name && (class_ref.kind.is_empty() || c.kind == class_ref.kind)
        })
        .map(|class| {
            class
                .status
                .amis
                .iter()
                .map(|ami| PoolImage {
                    id: ami.id.clone(),
                    requirements: Requirements::from_selectors(&ami.requirements),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `amifamily.MapToInstanceTypes` for a node: the id of the first of `class`'s `status.amis`
/// whose requirements the node's labels meet (a key the labels lack meets only `DoesNotExist` /
/// `NotIn`, as for upstream's `NewLabelRequirements(node.Labels)`).
fn current_ami<'c>(
    node_labels: &BTreeMap<String, String>,
    class: &'c NodeClass,
) -> Option<&'c str> {
    let mut node = Requirements::new();
    for (key, value) in node_labels {
        node.add(crate::model::requirements::Requirement::single(
            labels::normalize_key(key),
            value,
        ));
    }
    class
        .status
        .amis
        .iter()
        .find(|ami| {
            node.compatible(&Requirements::from_selectors(&ami.requirements), |_| false)
                .is_ok()
        })
        .map(|ami| ami.id.as_str())
}

/// Kubelet settings live on the class from v1 on, on the pool before.
fn kubelet_of<'a>(
    pool: &'a NodePool,
    class: Option<&'a NodeClass>,
) -> Option<&'a crate::model::nodepool::KubeletConfig> {
    if pool.generation == Some(ApiGeneration::V1) {
        class.and_then(|c| c.kubelet.as_ref())
    } else {
        pool.kubelet
            .as_ref()
            .or_else(|| class.and_then(|c| c.kubelet.as_ref()))
    }
}

fn cache_key(pool: &NodePool, class: Option<&NodeClass>) -> String {
    format!(
        "{}/{}",
        class.map(|c| c.name.as_str()).unwrap_or("-"),
        pool.generation.map(|g| g.to_string()).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::taints::Effect;

    const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      startupTaints: [{key: pool.example/agent, effect: NoSchedule}]\n";

    fn node(labels: &str, taints: &str) -> String {
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {{karpenter.sh/nodepool: default{labels}}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n  taints: {taints}\n"
        )
    }

    const CLAIM: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-x}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\n  taints: [{key: claim.example/t, effect: NoSchedule}]\n  startupTaints: [{key: claim.example/agent, effect: NoSchedule}]\nstatus: {nodeName: n1, providerID: aws:///us-east-1a/i-1}\n";

    fn existing(text: &str) -> Node {
        let mut m = crate::api::load_str("in.yaml", text).unwrap();
        let input = assemble(&mut m, Vec::new(), Options::default());
        input.existing_nodes[0].node.clone()
    }

    fn keys(taints: &[crate::model::taints::Taint]) -> Vec<&str> {
        taints.iter().map(|t| t.key.as_str()).collect()
    }

    /// `statenode.go` `Taints()`: a node not initialized ignores its NodeClaim's startup taints
    /// (its pool's without a NodeClaim); before registration the NodeClaim's taints stand for the
    /// Node's.
    #[test]
    fn an_uninitialized_node_gets_its_claims_or_pools_startup_taints() {
        let taints =
            "[{key: claim.example/agent, effect: NoSchedule}, {key: other, effect: NoSchedule}]";
        let registered = ", karpenter.sh/registered: \"true\"";
        let n = existing(&format!("{POOL}{}{CLAIM}", node(registered, taints)));
        assert_eq!(keys(&n.startup_taints), ["claim.example/agent"]);
        assert_eq!(keys(&n.scheduling_taints()), ["other"]);
        // Not registered: the NodeClaim's taints.
        let n = existing(&format!("{POOL}{}{CLAIM}", node("", taints)));
        assert_eq!(keys(&n.scheduling_taints()), ["claim.example/t"]);
        // No NodeClaim in the input: the pool's startup taints.
        let n = existing(&format!(
            "{POOL}{}",
            node(
                registered,
                "[{key: pool.example/agent, effect: NoSchedule}]"
            )
        ));
        assert_eq!(keys(&n.startup_taints), ["pool.example/agent"]);
        assert!(n.scheduling_taints().is_empty());
        // Initialized: every taint holds.
        let n = existing(&format!(
            "{POOL}{}{CLAIM}",
            node(", karpenter.sh/initialized: \"true\"", taints)
        ));
        assert_eq!(n.scheduling_taints().len(), 2);
        assert_eq!(n.taints[0].effect, Effect::NoSchedule);
    }

    /// `core v1.14.1: pkg/controllers/state/suite_test.go` "StateNode Capacity" ("… for
    /// uninitialized node with NodeClaim") and `statenode.go` `Allocatable()`: a registered node
    /// not initialized yet offers what its NodeClaim reports for each resource its Node lists as
    /// zero or not at all — a GPU whose device plugin has not started counts, so a GPU pod waits
    /// for it rather than launching another node; the Node's own non-zero numbers stay. Once
    /// initialized, only the Node's numbers hold.
    #[test]
    fn an_uninitialized_node_offers_what_its_nodeclaim_reports() {
        let claim = CLAIM.replace(
            "status: {",
            "status: {capacity: {cpu: \"8\", nvidia.com/gpu: \"1\"}, allocatable: {cpu: 7900m, memory: 30Gi, nvidia.com/gpu: \"1\"}, ",
        );
        let node_status = "status:\n  capacity: {cpu: \"8\", nvidia.com/gpu: \"0\"}\n  allocatable: {cpu: 7800m, nvidia.com/gpu: \"0\"}\n";
        let with =
            |labels: &str| existing(&format!("{POOL}{}{node_status}{claim}", node(labels, "[]")));
        let n = with(", karpenter.sh/registered: \"true\"");
        assert_eq!(n.allocatable.get("nvidia.com/gpu"), 1000);
        assert_eq!(n.capacity.get("nvidia.com/gpu"), 1000);
        assert_eq!(n.allocatable.get("memory"), 30 * 1024 * 1024 * 1024 * 1000);
        assert_eq!(
            n.allocatable.get("cpu"),
            7800,
            "the Node's own number stays"
        );
        let n = with(", karpenter.sh/initialized: \"true\"");
        assert_eq!(n.allocatable.get("nvidia.com/gpu"), 0);
        assert_eq!(n.allocatable.get("memory"), 0);
    }

    /// `core v1.14.1: pkg/controllers/state/suite_test.go` "NodePool Resources" — what counts
    /// against a pool's limits is the capacity of its nodes, once each, plus `nodes: 1`
    /// ("should calculate nodepool resources for multiple nodepools"); a node terminating
    /// ("… when node is terminating (deletionTimestamp set)") or whose NodeClaim is deleting
    /// ("… marked/unmarked for deletion", "should not double subtract …") no longer counts; a
    /// NodeClaim without a Node counts its own capacity ("… when node inside of the state node
    /// is removed"). **Differs, fixed**: a v1 pool's `status.resources` (the counter
    /// controller's copy of that sum) was added on top, so a live pool with 8 CPU of nodes and
    /// `limits.cpu: 10` was taken as using 16. v1beta1 keeps `status.resources` as a floor (its
    /// `Create` refused a pool whose status exceeds the limits).
    #[test]
    fn a_pools_usage_counts_its_live_nodes_once() {
        let pool = format!("{POOL}status:\n  resources: {{cpu: \"8\", nodes: \"1\"}}\n");
        let node = |name: &str, extra_meta: &str| {
            format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/initialized: \"true\"}}\n{extra_meta}spec: {{providerID: aws:///us-east-1a/i-{name}}}\nstatus:\n  capacity: {{cpu: \"8\", memory: 16Gi}}\n")
        };
        let claim = |name: &str, node: &str, extra_meta: &str, status: &str| {
            format!("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default}}\n{extra_meta}spec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{providerID: aws:///us-east-1a/i-{node}{status}}}\n")
        };
        let usage = |text: String| {
            let mut m = crate::api::load_str("in.yaml", &text).unwrap();
            let pool = m.node_pools[0].clone();
            let input = assemble(&mut m, vec![(pool, Vec::new())], Options::default());
            let u = &input.pools[0].usage;
            (u.get("cpu") / 1000, u.get("nodes") / 1000)
        };
        assert_eq!(usage(format!("{pool}{}", node("a", ""))), (8, 1));
        let deleting = "  deletionTimestamp: \"2026-12-01T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n";
        assert_eq!(
            usage(format!("{pool}{}{}", node("a", ""), node("b", deleting))),
            (8, 1)
        );
        assert_eq!(
            usage(format!(
                "{pool}{}{}{}",
                node("a", ""),
                node("b", ""),
                claim("b", "b", deleting, ", nodeName: b")
            )),
            (8, 1)
        );
        // A NodeClaim launched, its Node not registered yet: its own capacity.
        let in_flight = claim(
            "c",
            "c",
            "",
            ", capacity: {cpu: \"4\"}, allocatable: {cpu: 3900m}",
        );
        assert_eq!(
            usage(format!("{pool}{}{in_flight}", node("a", ""))),
            (12, 2)
        );
        // Launched, capacity reported, no allocatable yet (provisioning suite "Resource Limits ›
        // should not schedule when limits are exceeded"): counted all the same; deleting, not.
        let reported = claim("d", "d", "", ", capacity: {cpu: \"100\"}");
        assert_eq!(
            usage(format!("{pool}{}{reported}", node("a", ""))),
            (108, 2)
        );
        let gone = claim("d", "d", deleting, ", capacity: {cpu: \"100\"}");
        assert_eq!(usage(format!("{pool}{}{gone}", node("a", ""))), (8, 1));
        // v1beta1: `status.resources` is a floor.
        let beta = format!("{pool}{}", node("a", ""))
            .replace(
                "karpenter.sh/v1\nkind: NodePool",
                "karpenter.sh/v1beta1\nkind: NodePool",
            )
            .replace(
                "group: karpenter.k8s.aws",
                "apiVersion: karpenter.k8s.aws/v1beta1",
            )
            .replace("cpu: \"8\", nodes", "cpu: \"12\", nodes");
        assert_eq!(usage(beta), (12, 1));
    }

    const V1_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n";
    const V1_CLASS: &str = "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n";

    /// Loads a pool `a` (with `pool_status` appended) and the class `default` (with
    /// `class_extra` appended) and says why the pool is not ready.
    fn readiness(pool_status: &str, class_extra: &str) -> Option<String> {
        let text = format!("{V1_POOL}{pool_status}{V1_CLASS}{class_extra}");
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        not_ready(&m.node_pools[0], class_of(&m, &m.node_pools[0])).map(|r| r.to_string())
    }

    /// Scheduling suite "should not schedule pods with nodePool which is not ready"
    /// (`core v1.14.1: pkg/controllers/provisioning/scheduling/suite_test.go`): a pool whose
    /// `Ready` is False is left out; an absent status reads as ready offline; the readiness
    /// controller's rules stand in for a missing `Ready` (`nodepool/readiness/controller.go`).
    #[test]
    fn a_pool_that_is_not_ready_is_left_out() {
        let status = |ready: &str| {
            format!("status:\n  conditions:\n  - {{type: Ready, status: \"{ready}\", reason: NodePoolNotReady, message: Node Pool Not Ready}}\n")
        };
        assert_eq!(
            readiness(&status("False"), "").as_deref(),
            Some("Ready=False, NodePoolNotReady: Node Pool Not Ready")
        );
        assert!(readiness(&status("Unknown"), "").is_some());
        assert_eq!(readiness(&status("True"), ""), None);
        // No status: ready (offline assumption).
        assert_eq!(readiness("", ""), None);
        // The pool's Ready decides over its class when a controller wrote it.
        let class_false = "status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: SubnetsNotFound, message: SubnetSelector did not match any Subnets}\n";
        assert_eq!(readiness(&status("True"), class_false), None);
        // Without it: the class's Ready False (its reason and message), Unknown, or deletion.
        assert_eq!(
            readiness("", class_false).as_deref(),
            Some("NodeClassReady=False, EC2NodeClass/default is not Ready: Ready=False, SubnetsNotFound: SubnetSelector did not match any Subnets")
        );
        let unknown = "status:\n  conditions:\n  - {type: Ready, status: Unknown}\n";
        assert!(readiness("", unknown)
            .unwrap()
            .contains("NodeClassReadinessUnknown"));
        let text = format!("{V1_POOL}{}", V1_CLASS.replace("metadata: {name: default}", "metadata: {name: default, deletionTimestamp: \"2026-12-01T00:00:00Z\", finalizers: [x]}"));
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        assert_eq!(
            not_ready(&m.node_pools[0], class_of(&m, &m.node_pools[0])),
            Some(NotReady::ClassTerminating {
                kind: "EC2NodeClass".into(),
                name: "default".into()
            })
        );
        // The pool's own sub-conditions without a Ready.
        let invalid = "status:\n  conditions:\n  - {type: ValidationSucceeded, status: \"False\", reason: NodePoolValidationFailed}\n";
        assert_eq!(
            readiness(invalid, "").as_deref(),
            Some("ValidationSucceeded=False, NodePoolValidationFailed")
        );
    }

    /// Pool `a` of `V1_POOL` allowing only the instance types `types` (comma-separated).
    fn pool_of(types: &str) -> String {
        V1_POOL.replace(
            "requirements: []",
            &format!("requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]"),
        )
    }

    /// A pending pod of 100m.
    const POD: &str = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n";

    /// The plan of `text` (manifests) against the embedded catalog in us-east-1.
    fn offline_plan(text: String) -> crate::scheduling::Plan {
        let catalog = Catalog::embedded().unwrap();
        let mut m = crate::api::load_str("in.yaml", &text).unwrap();
        let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
        let selection = Selection {
            max_instance_types: 60,
            ..Selection::default()
        };
        crate::scheduling::solve(&build_input(&mut m, &selection, &mut sizing).unwrap())
    }

    /// `aws v1.14.1: pkg/providers/instancetype/suite_test.go` "NodeOverlay Preview Instance
    /// Pricing" through the plan's input: r9g.medium has no price in the embedded snapshot, so a
    /// pool of it leaves the pod pending; a NodeOverlay pricing it (one `instance-type In`
    /// requirement, `price`) makes its offerings available at that price. An AL2023 class leaves
    /// a1 types unavailable (`compatibility.go`).
    #[test]
    fn overlay_prices_and_class_compatibility_reach_the_sized_types() {
        let pool = pool_of("r9g.medium, a1.medium");
        let overlay = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: preview-price}\nspec:\n  price: \"98.32\"\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [r9g.medium]}]\n";
        let without = offline_plan(format!("{pool}{V1_CLASS}{POD}"));
        assert!(without.node_claims.is_empty(), "{:?}", without.node_claims);
        assert_eq!(without.unschedulable.len(), 1);
        let with = offline_plan(format!("{pool}{V1_CLASS}{POD}{overlay}"));
        assert_eq!(with.node_claims.len(), 1, "{:?}", with.unschedulable);
        assert_eq!(with.node_claims[0].launch.instance_type, "r9g.medium");
        assert_eq!(with.node_claims[0].launch.price, 98.32);
    }

    /// Swept from public EC2NodeClasses (docs/upstream-tests.md, session 13): `pid` is a valid
    /// `kubeReserved` / `systemReserved` key (`aws v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`),
    /// and Karpenter's allocatable is `resources.Subtract(capacity, overhead)` over the capacity's
    /// resources only (`core v1.14.1: pkg/cloudprovider/types.go` `computeAllocatable`), so it
    /// reserves nothing a pod asks for. We took it off an absent capacity: allocatable pid went
    /// negative and every pod was "no single instance type fits".
    #[test]
    fn a_pid_reservation_leaves_the_pods_schedulable() {
        for field in ["kubeReserved", "systemReserved"] {
            let class =
                format!("{V1_CLASS}  kubelet:\n    {field}: {{cpu: 100m, pid: \"1000\"}}\n");
            let plan = offline_plan(format!("{}{class}{POD}", pool_of("m5.large")));
            assert_eq!(
                plan.node_claims.len(),
                1,
                "{field}: {:?}",
                plan.unschedulable
            );
            assert_eq!(plan.node_claims[0].launch.instance_type, "m5.large");
        }
    }

    /// Public configurations swept in session 22: two Deployments sharing `app: web` (a stable
    /// and a canary release), each spread over hosts with `matchLabelKeys: [pod-template-hash]`,
    /// the Kubernetes docs' pattern. Their ReplicaSets give the pods different hashes, the API
    /// server merges each pod's own into the selector, and Karpenter (core v1.14.1
    /// `pkg/controllers/provisioning/scheduling/topology.go` `newForTopologies`) counts each
    /// Deployment apart: the canary pod shares a node with a stable one, 3 NodeClaims. Our pods
    /// had no `pod-template-hash`, so one group spanned both: 4 NodeClaims.
    #[test]
    fn pod_template_hash_keeps_two_deployments_spreads_apart() {
        let deployment = |name: &str, replicas: u32| {
            format!("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web, track: {name}}}}}\n  template:\n    metadata: {{labels: {{app: web, track: {name}}}}}\n    spec:\n      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}, matchLabelKeys: [pod-template-hash]}}\n      containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]\n")
        };
        let manifests = format!(
            "{}{V1_CLASS}{}{}",
            pool_of("m5.large"),
            deployment("stable", 3),
            deployment("canary", 1)
        );
        let plan = offline_plan(manifests.clone());
        assert_eq!(plan.node_claims.len(), 3, "{:?}", plan.unschedulable);
        let joint = manifests.replace(", matchLabelKeys: [pod-template-hash]", "");
        assert_eq!(
            offline_plan(joint).node_claims.len(),
            4,
            "without the key: one group"
        );
    }

    /// Public configurations swept in session 17 (terraform-aws-modules/terraform-aws-eks
    /// `examples/karpenter/main.tf` before v20, msfidelis/eks-karpenter-autonomous-cluster
    /// `examples/spots/*/provision.yml`, aws-samples/aws-do-eks `provisioner-deploy-*.sh`): a
    /// v1alpha5 Provisioner's workload selects it by `karpenter.sh/provisioner-name`, a
    /// well-known label in v0.31 (`core v0.31.4: pkg/apis/v1alpha5/labels.go`
    /// `WellKnownLabels`; `provisioner.go` `validateProvisionerNameCanExist` opts a pod requiring
    /// it `DoesNotExist` out). We refused every such pod as "restricted" (v1.14.1's rule); a v1
    /// pool's pod selecting the old key is still refused so.
    #[test]
    fn a_provisioners_pods_may_select_the_provisioner_name() {
        let legacy = "---\napiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\nspec:\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n  providerRef: {name: default}\n---\napiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: default}\nspec:\n  subnetSelector: {a: b}\n  securityGroupSelector: {a: b}\n";
        let selecting = POD.replace(
            "spec:\n",
            "spec:\n  nodeSelector: {karpenter.sh/provisioner-name: default}\n",
        );
        let plan = offline_plan(format!("{legacy}{selecting}"));
        assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
        assert_eq!(plan.node_claims[0].launch.instance_type, "m5.large");
        let other = selecting.replace("provisioner-name: default", "provisioner-name: other");
        let plan = offline_plan(format!("{legacy}{other}"));
        assert!(plan.node_claims.is_empty());
        let opting_out = POD.replace("spec:\n", "spec:\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/provisioner-name, operator: DoesNotExist}]}]}}}\n");
        let plan = offline_plan(format!("{legacy}{opting_out}"));
        assert!(
            plan.unschedulable[0]
                .reason
                .to_string()
                .contains("opts out"),
            "{:?}",
            plan.unschedulable
        );
        let plan = offline_plan(format!("{}{V1_CLASS}{selecting}", pool_of("m5.large")));
        assert!(plan.node_claims.is_empty());
        assert!(
            plan.unschedulable[0]
                .reason
                .to_string()
                .contains("is restricted"),
            "{:?}",
            plan.unschedulable
        );
    }

    /// A NodeOverlay adding `hugepages-2Mi` capacity (the nodeoverlays concept page's example)
    /// takes it off the type's allocatable memory (`core v1.14.1: pkg/cloudprovider/types.go`
    /// `computeAllocatable`): m5.large (6903Mi allocatable) with 4Gi of hugepages no longer holds
    /// a 4Gi pod, which we used to plan onto it.
    #[test]
    fn overlay_hugepages_come_off_allocatable_memory() {
        let pod = POD.replace("cpu: 100m", "cpu: 100m, memory: 4Gi");
        let overlay = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: huge}\nspec:\n  capacity: {hugepages-2Mi: 4Gi}\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n";
        let without = offline_plan(format!("{}{V1_CLASS}{pod}", pool_of("m5.large")));
        assert_eq!(without.node_claims.len(), 1, "{:?}", without.unschedulable);
        let with = offline_plan(format!("{}{V1_CLASS}{pod}{overlay}", pool_of("m5.large")));
        assert!(with.node_claims.is_empty(), "{:?}", with.node_claims);
        assert_eq!(with.unschedulable.len(), 1);
    }

    /// core v1.14.1 `provisioning/suite_test.go` "should not use a different NodePool hash on
    /// the NodeClaim if the NodePool changes during scheduling" (`nodeclaimtemplate.go`
    /// `NewNodeClaimTemplate`): each planned NodeClaim carries its pool's nodepool-hash — the
    /// value `drift check` computes for the pool, so a node launched from it is not drifted —
    /// and `nodepool-hash-version: v3`; a template change moves the hash. `ToNodeClaim`:
    /// `karpenter.sh/price-overlay-applied` / `capacity-overlay-applied: "true"` only on a
    /// NodeClaim whose options include a type an overlay priced / resized (nodeoverlay
    /// suite_test.go `IsPricingOverlayApplied`).
    #[test]
    fn planned_nodeclaims_carry_the_nodepool_hash_and_the_overlays_applied() {
        let pool_text = pool_of("c6a.large, m5.large");
        let m = crate::api::load_str("in.yaml", &format!("{pool_text}{V1_CLASS}")).unwrap();
        let hash = crate::drift::hash::node_pool_hash(&m.node_pools[0], "v3").unwrap();
        let plan = offline_plan(format!("{pool_text}{V1_CLASS}{POD}"));
        let a = &plan.node_claims[0].annotations;
        assert_eq!(a.get(labels::NODEPOOL_HASH), Some(&hash));
        assert_eq!(
            a.get(labels::NODEPOOL_HASH_VERSION).map(String::as_str),
            Some("v3")
        );
        assert!(!a.contains_key(crate::scheduling::PRICE_OVERLAY_APPLIED));
        let labelled = pool_text.replace(
            "  template:\n",
            "  template:\n    metadata: {labels: {new-label: new-value}}\n",
        );
        let moved = offline_plan(format!("{labelled}{V1_CLASS}{POD}"));
        assert_ne!(
            moved.node_claims[0].annotations.get(labels::NODEPOOL_HASH),
            Some(&hash),
            "{labelled}"
        );

        let overlay = |name: &str, spec: &str, types: &str| {
            format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: {name}}}\nspec:\n  {spec}\n  requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]\n")
        };
        // (price-overlay-applied, capacity-overlay-applied) of the plan with `overlay`; its
        // NodeClaim keeps the hash.
        let applied = |overlay: String| {
            let plan = offline_plan(format!("{pool_text}{V1_CLASS}{POD}{overlay}"));
            let a = &plan.node_claims[0].annotations;
            assert_eq!(a.get(labels::NODEPOOL_HASH), Some(&hash));
            let on = |key| a.get(key).map(String::as_str) == Some("true");
            (
                on(crate::scheduling::PRICE_OVERLAY_APPLIED),
                on(crate::scheduling::CAPACITY_OVERLAY_APPLIED),
            )
        };
        let cheaper = "priceAdjustment: \"-10%\"";
        assert_eq!(
            applied(overlay("cheaper", cheaper, "m5.large")),
            (true, false)
        );
        // An overlay on a type none of the NodeClaim's options is: no annotation.
        assert_eq!(
            applied(overlay("elsewhere", cheaper, "r5.large")),
            (false, false)
        );
        let widget = "capacity: {example.com/widget: \"1\"}";
        assert_eq!(applied(overlay("gpus", widget, "c6a.large")), (false, true));
    }

    /// A conflicting overlay prices nothing, unpriced types included: upstream's conflict check
    /// (`core v1.14.1: pkg/controllers/nodeoverlay/controller.go`, suite_test.go "should fail
    /// with conflicting pricing updates overlays with overlapping requirements") marks the
    /// lighter-ordered of two equal-weight overlays on one type `ValidationSucceeded=False`,
    /// and the AWS provider prices unpriced types only from validated overlays (`aws v1.14.1:
    /// pkg/providers/instancetype/offering/offering.go` `GetOverlayPrice`). Here `b` (weight
    /// 10) wins over `a` (weight 10, earlier by name) on r9g.medium, so `a` also gives
    /// r9g.large (no price in the snapshot) no price, and a pool of r9g.large leaves the pod
    /// pending. With different weights ("… mutually exclusive weights") nothing conflicts and
    /// `a` prices r9g.large.
    #[test]
    fn a_conflicting_overlay_prices_no_unpriced_type() {
        let pool = pool_of("r9g.large");
        let overlay = |name: &str, weight: u32, price: &str, types: &str| {
            format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  price: \"{price}\"\n  requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]\n")
        };
        let conflicting = format!(
            "{}{}",
            overlay("a", 10, "1.5", "r9g.medium, r9g.large"),
            overlay("b", 10, "2", "r9g.medium")
        );
        let mut both = pool_of("r9g.medium, r9g.large");
        both.push_str(&format!("{V1_CLASS}{POD}{conflicting}"));
        let plan = offline_plan(both);
        assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
        assert_eq!(
            (
                plan.node_claims[0].launch.instance_type.as_str(),
                plan.node_claims[0].launch.price
            ),
            ("r9g.medium", 2.0),
            "b prices r9g.medium; a (in conflict) prices nothing"
        );
        let plan = offline_plan(format!("{pool}{V1_CLASS}{POD}{conflicting}"));
        assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
        let exclusive = format!(
            "{}{}",
            overlay("a", 10, "1.5", "r9g.medium, r9g.large"),
            overlay("b", 20, "2", "r9g.medium")
        );
        let plan = offline_plan(format!("{pool}{V1_CLASS}{POD}{exclusive}"));
        assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
        assert_eq!(plan.node_claims[0].launch.price, 1.5);
    }

    /// A class whose only AMI is amd64 and an on-demand pool of both architectures: the scheduler
    /// keeps the arm64 types among the NodeClaim's options, but the launch asks only for types an
    /// AMI runs on, so the cheapest amd64 one is launched (aws v1.14.1 `amifamily/resolver.go`
    /// `Resolve` → `MapToInstanceTypes`; `launchtemplate/suite_test.go` "should create multiple
    /// launch templates when multiple amis are discovered with non-equivalent requirements"); with
    /// an arm64-only pool nothing is left and the pod stays pending (`NoImage`; "should fail if no
    /// instanceType matches ami requirements.").
    #[test]
    fn a_launch_asks_only_for_types_an_ami_of_the_class_runs_on() {
        let amd64_only = format!(
            "{V1_CLASS}status:\n  amis: [{{id: ami-amd, name: custom, requirements: [{{key: kubernetes.io/arch, operator: In, values: [amd64]}}]}}]\n"
        );
        let pool = |arches: &str| {
            V1_POOL.replace(
                "requirements: []",
                &format!("requirements: [{{key: kubernetes.io/arch, operator: In, values: [{arches}]}}, {{key: node.kubernetes.io/instance-type, operator: In, values: [t4g.medium, t3a.medium]}}, {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}]"),
            )
        };
        let both = offline_plan(format!("{}{amd64_only}{POD}", pool("amd64, arm64")));
        assert_eq!(both.node_claims.len(), 1, "{:?}", both.unschedulable);
        let claim = &both.node_claims[0];
        assert_eq!(claim.launch.instance_type, "t3a.medium");
        assert!(
            claim
                .instance_types
                .iter()
                .any(|o| &*o.name == "t4g.medium"),
            "the scheduler keeps the arm64 option"
        );
        // Spot allowed too, priced at on-demand offline: the spot filter's cap is the cheapest
        // on-demand offering a launch can use (t3a.medium's), not t4g.medium's.
        let spot_too =
            pool("amd64, arm64").replace("values: [on-demand]", "values: [spot, on-demand]");
        let spot_too = offline_plan(format!("{spot_too}{amd64_only}{POD}"));
        assert_eq!(
            (
                spot_too.node_claims[0].launch.instance_type.as_str(),
                spot_too.node_claims[0].launch.capacity_type.as_str()
            ),
            ("t3a.medium", "spot")
        );
        let without_status = offline_plan(format!("{}{V1_CLASS}{POD}", pool("amd64, arm64")));
        assert_eq!(
            without_status.node_claims[0].launch.instance_type, "t4g.medium",
            "no status.amis: the alias covers both architectures"
        );
        let arm = offline_plan(format!("{}{amd64_only}{POD}", pool("arm64")));
        assert!(arm.node_claims.is_empty());
        assert_eq!(
            arm.unschedulable[0].reason.code(),
            crate::scheduling::ReasonCode::NoImage
        );
    }

    /// A class whose `status.amis` are upstream's capacity suite's `nvidiaAMI` (GPU types) then
    /// `standardAMI` (`ami_order` reverses them), a registered t3.medium node reporting
    /// `memory` and its NodeClaim launched from `image`.
    fn discovered(image: &str, memory: &str, ami_order: &[usize]) -> String {
        let amis = [
            "{id: ami-nvidia-test, name: nvidia-ami, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-gpu-count, operator: Exists}]}",
            "{id: ami-standard-test, name: standard-ami, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}]}",
        ];
        let amis: Vec<&str> = ami_order.iter().map(|i| amis[*i]).collect();
        format!(
            "{V1_CLASS}status:\n  amis: [{}]\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: test-node\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", karpenter.k8s.aws/ec2nodeclass: default, node.kubernetes.io/instance-type: t3.medium, kubernetes.io/arch: amd64}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n  unschedulable: true\nstatus:\n  capacity: {{memory: {memory}}}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: test-nodeclaim}}\nspec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{nodeName: test-node, providerID: aws:///us-east-1a/i-1, imageID: {image}}}\n",
            amis.join(", ")
        )
    }

    /// t3.medium's memory capacity as sized for the class of `text`.
    fn t3_medium_memory(text: &str) -> i64 {
        let catalog = Catalog::embedded().unwrap();
        let m = crate::api::load_str("in.yaml", &format!("{V1_POOL}{text}")).unwrap();
        let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
        sizing.discover_memory(&m);
        let types = sizing
            .instance_types(&m.node_pools[0], class_of(&m, &m.node_pools[0]))
            .unwrap();
        types
            .iter()
            .find(|t| t.name == "t3.medium")
            .unwrap()
            .capacity
            .memory
    }

    /// aws v1.14.1 `pkg/controllers/providers/instancetype/capacity/suite_test.go`:
    /// "should update discovered capacity based on existing nodes" (a registered t3.medium
    /// reporting 3840Mi, launched from the class's current AMI: the type's memory is 3840Mi),
    /// "should use VM_MEMORY_OVERHEAD_PERCENT calculation after AMI update" (the NodeClaim's image
    /// is no longer the class's: the estimate, 4096Mi − ceil(4096 × 0.075) = 3788Mi) and "should
    /// properly update discovered capacity when matching AMI is not the first in the list" (the
    /// GPU AMI listed first: the standard AMI still maps to t3.medium). The smallest report wins.
    #[test]
    fn registered_nodes_memory_replaces_the_estimate_for_their_type() {
        let mib = crate::model::quantity::MIB;
        // (the NodeClaim's image, the node's memory, the order of the class's AMIs, the type's
        // memory); a node launched from the GPU AMI, which the class maps to GPU types only, is
        // not recorded.
        let cases: [(&str, &str, &[usize], i64); 4] = [
            ("ami-standard-test", "3840Mi", &[1, 0], 3840),
            ("ami-new-test-id", "3840Mi", &[1, 0], 3788),
            ("ami-standard-test", "4Gi", &[0, 1], 4096),
            ("ami-nvidia-test", "3840Mi", &[0, 1], 3788),
        ];
        for (image, memory, order, want) in cases {
            let got = t3_medium_memory(&discovered(image, memory, order));
            assert_eq!(got, want * mib, "{image} {memory} {order:?}");
        }
        // Two nodes of the type: the smaller report.
        let second = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n  labels: {karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", node.kubernetes.io/instance-type: t3.medium, kubernetes.io/arch: amd64}\nspec: {providerID: aws:///us-east-1a/i-2}\nstatus:\n  capacity: {memory: 3700Mi}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c2}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\nstatus: {nodeName: n2, providerID: aws:///us-east-1a/i-2, imageID: ami-standard-test}\n";
        let two = format!(
            "{}{second}",
            discovered("ami-standard-test", "3840Mi", &[1, 0])
        );
        assert_eq!(t3_medium_memory(&two), 3700 * mib);
    }

    /// The rule changes the plan: with a registered t3.medium reporting 3943Mi, a pod of 3300Mi
    /// fits a new t3.medium (allocatable 3943 − 442 kube-reserved − 100 eviction = 3401Mi), as
    /// Karpenter's discovered capacity has it; on the estimate (3246Mi) it took a t3.large.
    #[test]
    fn discovered_memory_lets_a_pod_fit_the_smaller_type() {
        let pool = pool_of("t3.medium, t3.large");
        let pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m, memory: 3300Mi}}}]\n";
        let with = offline_plan(format!(
            "{pool}{}{pod}",
            discovered("ami-standard-test", "3943Mi", &[1, 0])
        ));
        assert_eq!(with.node_claims.len(), 1, "{:?}", with.unschedulable);
        assert_eq!(with.node_claims[0].launch.instance_type, "t3.medium");
        let without = offline_plan(format!(
            "{pool}{}{pod}",
            discovered("ami-new-test-id", "3943Mi", &[1, 0])
        ));
        assert_eq!(without.node_claims[0].launch.instance_type, "t3.large");
    }

    /// An EC2NodeClass's `spec.networkInterfaces` reaches the sizing: 3 EFA-only interfaces are
    /// more than m6idn.32xlarge has (2), so a pool of it leaves the pod pending
    /// (`compatibility.go`; catalog test `network_interfaces_decide_efa_capacity_max_pods_and_availability`).
    #[test]
    fn the_classs_network_interfaces_reach_the_sized_types() {
        let pool = pool_of("m6idn.32xlarge");
        let nis = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}\n  - {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}\n  - {networkCardIndex: 2, deviceIndex: 0, interfaceType: efa-only}\n";
        assert_eq!(
            offline_plan(format!("{pool}{V1_CLASS}{POD}"))
                .node_claims
                .len(),
            1
        );
        let class = format!("{V1_CLASS}{nis}");
        let m = crate::api::load_str("in.yaml", &class[4..]).unwrap();
        assert_eq!(
            m.node_classes[0].network_interfaces().map(|n| n.len()),
            Some(4)
        );
        let with = offline_plan(format!("{pool}{class}{POD}"));
        assert!(with.node_claims.is_empty(), "{:?}", with.node_claims);
        // The checks the snapshot's card and ENA facts allow (`compatibility.go` (1), (2)):
        // m6idn.32xlarge has 2 network cards, so an interface on card 2 does not fit; t2.micro
        // has no ENA, so any `networkInterfaces` leaves it out.
        let card_2 = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 2, deviceIndex: 0, interfaceType: interface}\n";
        let on_card_2 = offline_plan(format!("{pool}{V1_CLASS}{card_2}{POD}"));
        assert!(
            on_card_2.node_claims.is_empty(),
            "{:?}",
            on_card_2.node_claims
        );
        let card_1 = card_2.replace("networkCardIndex: 2", "networkCardIndex: 1");
        let on_card_1 = offline_plan(format!("{pool}{V1_CLASS}{card_1}{POD}"));
        assert_eq!(
            on_card_1.node_claims.len(),
            1,
            "{:?}",
            on_card_1.unschedulable
        );
        let one = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n";
        let t2 = pool_of("t2.micro");
        assert_eq!(
            offline_plan(format!("{t2}{V1_CLASS}{POD}"))
                .node_claims
                .len(),
            1
        );
        let no_ena = offline_plan(format!("{t2}{V1_CLASS}{one}{POD}"));
        assert!(no_ena.node_claims.is_empty(), "{:?}", no_ena.node_claims);
    }

    /// `topology.k8s.aws/zone-id`: the class's `status.subnets[].zoneID` pins a pod selecting a
    /// zone id to that zone (`aws v1.14.1: pkg/providers/instancetype/offering/
    /// base_resolver.go`, `types.go` `computeRequirements`; `instancetype/suite_test.go` "should
    /// support individual instance type labels", `cloudprovider/suite_test.go` "should return
    /// availability zone ID as a label on the nodeClaim"). Without zone ids (no status) the pod
    /// is planned in any zone, as upstream with no zone info.
    #[test]
    fn a_pod_selecting_a_zone_id_is_planned_in_its_zone() {
        let pool = pool_of("m5.large");
        let status = "status:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b, zoneID: use1-az1}\n  - {id: subnet-c, zone: us-east-1c, zoneID: use1-az4}\n";
        let pod = |id: &str| {
            POD.replace(
                "spec:\n",
                &format!("spec:\n  nodeSelector: {{topology.k8s.aws/zone-id: {id}}}\n"),
            )
        };
        for (id, zone) in [("use1-az4", "us-east-1c"), ("use1-az1", "us-east-1b")] {
            let plan = offline_plan(format!("{pool}{V1_CLASS}{status}{}", pod(id)));
            assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
            let c = &plan.node_claims[0];
            assert_eq!(c.launch.zone, zone);
            assert_eq!(c.zones, vec![zone.to_string()]);
            assert!(c.launch_offerings().all(|(_, z, _)| z == zone));
            assert_eq!(c.labels.get(labels::ZONE_ID).map(String::as_str), Some(id));
            assert_eq!(c.labels.get(labels::ZONE).map(String::as_str), Some(zone));
        }
        // No subnet with that id: pending.
        let none = offline_plan(format!("{pool}{V1_CLASS}{status}{}", pod("use1-az2")));
        assert!(none.node_claims.is_empty(), "{:?}", none.node_claims);
        // An unselecting pod still gets its zone's id as a label.
        let any = offline_plan(format!("{pool}{V1_CLASS}{status}{POD}"));
        let c = &any.node_claims[0];
        let want = match c.launch.zone.as_str() {
            "us-east-1a" => "use1-az6",
            "us-east-1b" => "use1-az1",
            _ => "use1-az4",
        };
        assert_eq!(
            c.labels.get(labels::ZONE_ID).map(String::as_str),
            Some(want)
        );
        // The status without zoneID (and no status at all): no zone-id requirement, so the pod
        // is planned (in any zone) and the NodeClaim has no zone-id label.
        let no_ids = status
            .replace(", zoneID: use1-az6", "")
            .replace(", zoneID: use1-az1", "")
            .replace(", zoneID: use1-az4", "");
        for extra in [no_ids.as_str(), ""] {
            let plan = offline_plan(format!("{pool}{V1_CLASS}{extra}{}", pod("use1-az4")));
            assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
            assert!(!plan.node_claims[0].labels.contains_key(labels::ZONE_ID));
        }
    }

    /// A topology spread over `topology.k8s.aws/zone-id`: its domains are the types' zone ids
    /// (`types.go` `computeRequirements`), and each NodeClaim narrowed to one id launches in
    /// that id's zone.
    #[test]
    fn a_spread_over_zone_ids_puts_one_pod_in_each_zone() {
        let pool = pool_of("m5.large");
        let status = "status:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b, zoneID: use1-az1}\n  - {id: subnet-c, zone: us-east-1c, zoneID: use1-az4}\n";
        let pods: String = (0..3)
            .map(|i| {
                format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {{app: s}}}}\nspec:\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: topology.k8s.aws/zone-id, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: s}}}}}}]\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\n")
            })
            .collect();
        let plan = offline_plan(format!("{pool}{V1_CLASS}{status}{pods}"));
        assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
        let mut got: Vec<(String, String)> = plan
            .node_claims
            .iter()
            .map(|c| {
                assert_eq!(c.pods.len(), 1);
                (c.launch.zone.clone(), c.labels[labels::ZONE_ID].clone())
            })
            .collect();
        got.sort();
        let want: Vec<(String, String)> = [
            ("us-east-1a", "use1-az6"),
            ("us-east-1b", "use1-az1"),
            ("us-east-1c", "use1-az4"),
        ]
        .iter()
        .map(|(z, id)| (z.to_string(), id.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    /// `status.subnets[].zoneID` is read from v1beta1 EC2NodeClasses too (the v0.37 CRD has it,
    /// `tests/fixtures/crds/v1beta1`).
    #[test]
    fn v1beta1_status_subnets_carry_the_zone_id() {
        let class = "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  amiFamily: AL2\n  role: r\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\nstatus:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b}\n";
        let m = crate::api::load_str("in.yaml", class).unwrap();
        let ids: Vec<Option<&str>> = m.node_classes[0]
            .status
            .subnets
            .iter()
            .map(|s| s.zone_id.as_deref())
            .collect();
        assert_eq!(ids, vec![Some("use1-az6"), None]);
    }

    /// v1beta1 (v0.37) and v1alpha5 (v0.31) schedule with any pool: `provisioner.go` there has
    /// no readiness filter.
    #[test]
    fn older_generations_have_no_readiness_filter() {
        let text = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: default}\nstatus:\n  conditions:\n  - {type: Ready, status: \"False\"}\n";
        let m = crate::api::load_str("in.yaml", text).unwrap();
        assert_eq!(not_ready(&m.node_pools[0], None), None);
    }

    /// A node `n1` (deleting when `deleting`), NodeClaim `c1` for it (deleting when
    /// `claim_deleting`), and one pod `p` bound to it with `pod_extra` appended to its
    /// metadata, plus `extra` documents.
    fn deleting_world(
        deleting: bool,
        claim_deleting: bool,
        pod_meta: &str,
        pod_status: &str,
        extra: &str,
    ) -> Vec<String> {
        let gone = "deletionTimestamp: \"2026-12-04T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n  ";
        let text = format!(
            "{POOL}---\napiVersion: v1\nkind: Node\nmetadata:\n  {}name: n1\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", karpenter.sh/initialized: \"true\"}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  {}name: c1\nspec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{nodeName: n1, providerID: aws:///us-east-1a/i-1}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n  labels: {{app: a}}\n{pod_meta}spec:\n  nodeName: n1\n  containers: [{{name: c, image: i}}]\nstatus: {{phase: {pod_status}}}\n{extra}",
            if deleting { gone } else { "" },
            if claim_deleting { gone } else { "" },
        );
        let mut m = crate::api::load_str("in.yaml", &text).unwrap();
        let mut input = assemble(&mut m, Vec::new(), Options::default());
        let moved = reschedule_deleting(&mut input, &m.pdbs, 1_800_000_000).unwrap();
        assert_eq!(
            input.existing_nodes[0].node.deleting,
            deleting || claim_deleting
        );
        let keys: Vec<String> = input.pods.iter().map(Pod::key).collect();
        assert_eq!(
            moved
                .iter()
                .flat_map(|e| e.pods.clone())
                .collect::<Vec<_>>(),
            keys
        );
        keys
    }

    /// Scheduling suite "Deleting Nodes" (`core v1.14.1:
    /// pkg/controllers/provisioning/scheduling/suite_test.go`) and `provisioner.go` `Schedule`
    /// (`nodes.Deleting().CurrentlyReschedulablePods`): which pods of a deleting node are
    /// planned again.
    #[test]
    fn pods_of_a_deleting_node_are_planned_again_when_currently_reschedulable() {
        let p = vec!["default/p".to_string()];
        let none: Vec<String> = Vec::new();
        let terminating = "  deletionTimestamp: \"2026-12-04T00:00:00Z\"\n";
        let owner = |kind: &str| {
            format!("  ownerReferences: [{{apiVersion: apps/v1, kind: {kind}, name: o, uid: u, controller: true}}]\n")
        };
        let pdb = |spec: &str, name: &str| {
            format!("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: default}}\nspec: {{selector: {{matchLabels: {{app: a}}}}, {spec}}}\n")
        };
        // (It, pods planned again, node deleting, NodeClaim deleting, pod metadata, phase, more objects)
        type Case<'a> = (&'a str, Vec<String>, bool, bool, String, &'a str, String);
        let cases: Vec<Case> = vec![
            ("should re-schedule pods from a deleting node when pods are active", p.clone(), true, false, String::new(), "Running", String::new()),
            ("a node not deleting keeps its pods", none.clone(), false, false, String::new(), "Running", String::new()),
            ("statenode.go Deleted(): the NodeClaim deleting marks its node", p.clone(), false, true, String::new(), "Running", String::new()),
            ("should not re-schedule pods from a deleting node when pods are not active (terminal)", none.clone(), true, false, String::new(), "Succeeded", String::new()),
            ("should not re-schedule ... not active and they are owned by a ReplicaSet", none.clone(), true, false, format!("{terminating}{}", owner("ReplicaSet")), "Running", String::new()),
            ("should reschedule ... not active and they are owned by a StatefulSet", p.clone(), true, false, format!("{terminating}{}", owner("StatefulSet")), "Running", String::new()),
            ("should not re-schedule pods from a deleting node when pods are owned by a DaemonSet", none.clone(), true, false, owner("DaemonSet"), "Running", String::new()),
            ("do-not-disrupt (IsDisruptable)", none.clone(), true, false, "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n".into(), "Running", String::new()),
            ("a fully blocking PDB (maxUnavailable: 0)", none.clone(), true, false, String::new(), "Running", pdb("maxUnavailable: 0", "b")),
            ("a fully blocking PDB (minAvailable: 100%)", none.clone(), true, false, String::new(), "Running", pdb("minAvailable: \"100%\"", "b")),
            ("a PDB that is not fully blocking", p.clone(), true, false, String::new(), "Running", pdb("maxUnavailable: 1", "b")),
            ("several PDBs match the pod", none.clone(), true, false, String::new(), "Running", format!("{}{}", pdb("maxUnavailable: 1", "b"), pdb("maxUnavailable: 2", "c"))),
        ];
        for (name, want, deleting, claim_deleting, meta, phase, extra) in cases {
            assert_eq!(
                deleting_world(deleting, claim_deleting, &meta, phase, &extra),
                want,
                "{name}"
            );
        }
    }
}
