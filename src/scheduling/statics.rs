//! Static NodePools (`spec.replicas`): the NodeClaims that bring a static pool up to its replica
//! count, whether or not pods are pending (docs/karpenter.md §6.11).
//!
//! Mirrors `core v1.14.1: pkg/controllers/static/provisioning/controller.go` (`Reconcile`): the
//! pool's nodes (registered or in flight) not being deleted are *active* or *pending
//! disruption* (`state/statenodepool.go` `GetNodeCount`); none is launched when active +
//! pending disruption reach `replicas`, else `replicas` − active, capped by what `limits.nodes`
//! leaves (`ReserveNodeCount`: the limit minus every node, deleting ones included); each NodeClaim is the bare template
//! (`NewNodeClaimTemplate`, no pods, no resource requests), so the launch takes the cheapest
//! offering of any type the pool's requirements allow (`aws: cloudprovider.go` `Create` →
//! `resolveInstanceTypes`, then §6.7's filters). Upstream tests
//! (`static/provisioning/suite_test.go`): "should create nodeclaims when current node count is
//! less than desired replicas", "should not create additional nodeclaims", "should not create
//! additional nodeclaims when node limits are reached", "should handle zero replicas".
//! Static pools take no pending pod (`PoolCause::Static`); their nodes, once there, are ordinary
//! capacity. An EKS Auto Mode pool is not the provider's (`IsManaged`): no replica is planned. A static pool allowed reserved capacity launches into its reservations while they
//! have instances left, one per replica, then on-demand/spot (the provider's launch, not the
//! scheduler's `ReservationManager`, decides for static NodeClaims).

use crate::model::labels::DISRUPTED_TAINT;
use crate::model::resources::Resources;
use crate::model::taints::Effect;

use super::finalize::{finalize, SharedLists};
use super::node_claim::Claim;
use super::node_claim_template::{prepare_pools, Pool};
use super::reservations::Reservations;
use super::{Input, PlannedNodeClaim};

/// The NodeClaims that would bring every static pool of `input` up to its replicas, named
/// `<pool>-<n>`.
pub(super) fn static_claims(input: &Input) -> Vec<PlannedNodeClaim> {
    if input.pools.iter().all(|p| p.pool.replicas.is_none()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let pools = prepare_pools(input);
    let mut reservations = Reservations::new(&pools);
    for (p, pool) in pools.iter().enumerate() {
        let Some(replicas) = pool.input.pool.replicas else {
            continue;
        };
        let np = &pool.input.pool;
        let missing = missing_replicas(input, pool, replicas);
        if missing <= 0 || pool.types.is_empty() {
            continue;
        }
        let mut shared = SharedLists::default();
        let mut claim = bare_claim(p, pool);
        for n in 1..=missing {
            // Each launch takes reserved capacity while the pool's reservations have instances
            // left (`getCapacityType`, then `MarkLaunched`), so with reservations every replica
            // is its own launch; without, they are all alike.
            claim.reserved = reservations
                .to_hold(pool, &claim.types, &claim.reqs, &[], false)
                .ok()
                .flatten()
                .unwrap_or_default();
            let Ok(mut planned) = finalize(input, pool, &claim, Vec::new(), &mut shared) else {
                break;
            };
            if let Some(id) = &planned.launch.reservation {
                reservations.use_one(id);
            }
            planned.name = format!("{}-{n}", np.name);
            out.push(planned);
        }
    }
    out
}

/// How many NodeClaims `Reconcile` creates for the static `pool` of `replicas` (0 when none).
fn missing_replicas(input: &Input, pool: &Pool<'_>, replicas: i64) -> i64 {
    let np = &pool.input.pool;
    // `Reconcile` skips a pool that is not the provider's (`nodepoolutils.IsManaged`): an
    // EKS Auto Mode pool's replicas are EKS's to launch, as its pending pods are; a pool naming
    // another group's class (`group: karpenter.sh`) is nobody's.
    if np
        .node_class_ref
        .as_ref()
        .is_some_and(|r| r.is_eks_auto_mode() || r.is_another_providers())
    {
        return 0;
    }
    let (mut active, mut pending_disruption, mut deleting) = (0i64, 0i64, 0i64);
    for n in input
        .existing_nodes
        .iter()
        .filter(|n| n.node.labels.get(np.owner_label()) == Some(&np.name))
    {
        if n.node.deleting {
            deleting += 1;
        } else if is_pending_disruption(&n.node) {
            pending_disruption += 1;
        } else {
            active += 1;
        }
    }
    // NodeClaims not launched yet are active (or deleting) too: no node stands for them.
    active += pool.input.unlaunched.active;
    deleting += pool.input.unlaunched.deleting;
    // `GetNodeCount`: nodes pending disruption count toward the replicas (their
    // replacements are on the way), but what is launched is counted from the active ones.
    if active + pending_disruption >= replicas {
        return 0;
    }
    let mut missing = replicas - active;
    // `ReserveNodeCount`: the limit less every NodeClaim of the pool, deleting ones included
    // (the pool's `usage` leaves those out, as the scheduler's `NodePoolResourcesFor` does).
    if let Some(limit) = np.limits.get("nodes") {
        let left = limit / 1000 - (active + pending_disruption + deleting);
        missing = missing.min(left);
    }
    missing.max(0)
}

/// The static pools short of replicas for which no NodeClaim can be planned — no instance type
/// satisfies the pool's requirements (with its `minValues`) and has an available offering —,
/// each with how many `Reconcile` would create. Karpenter creates them anyway (`core v1.14.1:
/// static/provisioning/controller.go` builds them from the template, with no instance type
/// check; suite_test.go "should respect nodepool template specifications" creates 4 for
/// requirements no fake type meets) and each launch then fails (`aws: cloudprovider.go`
/// `Create`: no compatible instance types, an insufficient-capacity error), over and over: the
/// plan says so instead of planning nothing silently.
pub fn unlaunchable_static_pools(input: &Input) -> Vec<(String, i64)> {
    if input.pools.iter().all(|p| p.pool.replicas.is_none()) {
        return Vec::new();
    }
    let pools = prepare_pools(input);
    let mut out = Vec::new();
    for (p, pool) in pools.iter().enumerate() {
        let Some(replicas) = pool.input.pool.replicas else {
            continue;
        };
        let missing = missing_replicas(input, pool, replicas);
        if missing <= 0 {
            continue;
        }
        let launchable = !pool.types.is_empty()
            && finalize(
                input,
                pool,
                &bare_claim(p, pool),
                Vec::new(),
                &mut SharedLists::default(),
            )
            .is_ok();
        if !launchable {
            out.push((pool.input.pool.name.clone(), missing));
        }
    }
    out
}

/// Whether a static pool's node is *pending disruption* (`NodePoolState.PendingDisruption`:
/// a disruption command has started on it — the queue's `markDisrupted` taints it
/// `karpenter.sh/disrupted:NoSchedule` and marks the NodeClaim so): tainted, not deleting. From
/// outside the controller this also covers a node Karpenter has marked for deletion in memory
/// (the same taint), whose replacement is then already counted; this tool's own replacements
/// taint their node the same way. Neither counts as running for a scale-down either
/// (`static/deprovisioning/controller.go`: only `GetNodeCount`'s active ones).
pub fn is_pending_disruption(node: &crate::model::node::Node) -> bool {
    node.taints
        .iter()
        .any(|t| t.key == DISRUPTED_TAINT && t.effect == Effect::NoSchedule)
}

/// The bare NodeClaim of `pool_name`'s template (`scheduling.NewNodeClaimTemplate(np)`: no pod,
/// no request, reserved capacity not held), as StaticDrift launches one to replace a drifted
/// static NodeClaim (`core v1.14.1: pkg/controllers/disruption/staticdrift.go`); `None` when the
/// pool is unknown or none of its types has an available offering.
pub fn template_claim(input: &Input, pool_name: &str) -> Option<PlannedNodeClaim> {
    let pools = prepare_pools(input);
    let (p, pool) = pools
        .iter()
        .enumerate()
        .find(|(_, p)| p.input.pool.name == pool_name)?;
    if pool.types.is_empty() {
        return None;
    }
    let claim = bare_claim(p, pool);
    let mut planned =
        finalize(input, pool, &claim, Vec::new(), &mut SharedLists::default()).ok()?;
    planned.name = format!("{pool_name}-replica");
    Some(planned)
}

/// `NewNodeClaimTemplate(np)` as a claim: the pool's requirements and every type, no pod.
fn bare_claim(p: usize, pool: &Pool<'_>) -> Claim {
    Claim {
        pool: p,
        reqs: pool.reqs.clone(),
        types: (0..pool.types.len() as u32).collect(),
        requests: Resources::new(),
        pods: Vec::new(),
        host_ports: Vec::new(),
        reserved: Vec::new(),
        min_values_relaxed: false,
    }
}
