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
use crate::error::CommandError;
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::scheduling::{
    apply_overlays, overlay_conflicts, ClaimAnnotations, ExistingNode, Input, Options, PoolInput,
    Unlaunched,
};

mod claims;
mod readiness;
mod sizing;

use claims::{in_flight_claims, launched_without_allocatable, with_claim_state, DeletingClaims};
use sizing::class_images;

pub use claims::{deleting_node_pods, reschedule_deleting};
pub use readiness::{not_ready, NotReady};
pub use sizing::CatalogSizing;

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
    drop_reservation_terms(manifests, selection.reserved_capacity_gate);
    if let Some(p) = selection.vm_memory_overhead_percent {
        sizing.vm_memory_overhead_percent = p;
    }
    if let Some(n) = selection.reserved_enis {
        sizing.reserved_enis = n;
    }
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
    // (`provisioner.go` `NewScheduler`, static pools: `static/provisioning/controller.go`);
    // kept, marked so, when its nodes still matter ([`Selection::keep_not_ready`]).
    let not_ready: Vec<(String, String)> = manifests
        .node_pools
        .iter()
        .filter(|p| !p.deleting)
        .filter_map(|p| {
            Some((
                p.name.clone(),
                not_ready(p, class_of(manifests, p))?.to_string(),
            ))
        })
        .collect();
    let consequence = if selection.keep_not_ready {
        "its nodes are still disruption candidates, but no replacement is launched for it"
    } else {
        "left out of the plan"
    };
    manifests
        .warnings
        .extend(not_ready.iter().map(|(name, why)| {
            format!(
            "NodePool/{name}: not Ready ({why}): Karpenter launches nothing for it; {consequence}"
        )
        }));
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
        .filter(|p| selection.keep_not_ready || !not_ready.iter().any(|(name, _)| name == &p.name))
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
    // Every pod, bound ones too: a deleting node's are planned again (`reschedule_deleting`).
    selection.preference_policy.apply(
        input.pods.iter_mut().chain(
            input
                .existing_nodes
                .iter_mut()
                .flat_map(|n| n.pods.iter_mut()),
        ),
    );
    for pool in &mut input.pools {
        pool.not_ready = not_ready
            .iter()
            .find(|(name, _)| name == &pool.pool.name)
            .map(|(_, why)| why.clone());
    }
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

/// With the `ReservedCapacity` gate off (`gate == Some(false)`), clears every class's
/// `capacityReservationSelectorTerms`, with a warning naming the classes: Karpenter v1.14.1 then
/// neither resolves them (`aws v1.14.1: pkg/controllers/nodeclass/controller.go` skips the
/// `CapacityReservation` reconciler) nor offers reserved capacity
/// (`pkg/providers/instancetype/offering/reserved_capacity_resolver.go` `ResolveOfferings`
/// returns the offerings unchanged), so no plan holds or launches into a reservation and
/// nothing is read from EC2 for them. The gate is on by default (`core v1.14.1:
/// pkg/operator/options/options.go`).
pub fn drop_reservation_terms(manifests: &mut Manifests, gate: Option<bool>) {
    if gate != Some(false) {
        return;
    }
    let names: Vec<String> = manifests
        .node_classes
        .iter_mut()
        .filter(|c| !c.capacity_reservation_selector_terms.is_empty())
        .map(|c| {
            c.capacity_reservation_selector_terms.clear();
            format!("EC2NodeClass/{}", c.name)
        })
        .collect();
    if names.is_empty() {
        return;
    }
    manifests.warnings.push(format!(
        "{}: capacityReservationSelectorTerms not used: the ReservedCapacity feature gate is off (FEATURE_GATES or --feature-gates), so Karpenter offers no reserved capacity and its launch templates carry no capacity reservation preference",
        names.join(", ")
    ));
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
            not_ready: None,
            unlaunched: unlaunched(&pool, &manifests.node_claims, &existing_nodes),
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
        // A deleting node's reschedulable pods were taken off it (`reschedule_deleting`).
        moving: Default::default(),
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

/// `pool`'s NodeClaims without a provider id that no node of the input stands for (this tool's
/// own launch in flight is one, named by its NodeClaim): a static pool's replicas count them
/// (`core v1.14.1: pkg/controllers/state/cluster.go` `UpdateNodeClaim`; the static provisioner
/// does not wait for them to resolve, `static/provisioning/controller.go` `Reconcile` checks
/// `Synced` only before the first sync).
fn unlaunched(pool: &NodePool, claims: &[NodeClaim], nodes: &[ExistingNode]) -> Unlaunched {
    let stands_for = |c: &NodeClaim| {
        nodes
            .iter()
            .any(|e| e.node.name == c.name || e.node.labels.get(labels::HOSTNAME) == Some(&c.name))
    };
    claims
        .iter()
        .filter(|c| c.nodepool.as_deref() == Some(pool.name.as_str()))
        .filter(|c| c.provider_id.as_deref().is_none_or(str::is_empty))
        .filter(|c| !stands_for(c))
        .fold(Unlaunched::default(), |mut u, c| {
            if c.deleting {
                u.deleting += 1;
            } else {
                u.active += 1;
            }
            u
        })
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

#[cfg(test)]
mod tests;
