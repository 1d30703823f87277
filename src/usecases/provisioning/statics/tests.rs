//! Static NodePools scaled down live, against the fake cluster, cloud and clock. Each test
//! names the `It` of `core main: pkg/controllers/static/deprovisioning/suite_test.go` it
//! plays end to end (the decision's own table is `disruption::static_scale_down::tests`).

use serde_json::json;

use super::super::tests::all;
use super::*;
use crate::disruption::static_scale_down::Why;
use crate::k8s::Method as Http;
use crate::usecases::testing::{node_pool, put_bound, World};

/// The `fixed` static pool with `n` registered nodes of `instance_type` (their names), then
/// lowered to `replicas`.
fn fixed_with(world: &World, n: usize, instance_type: &str, replicas: i64) -> Vec<String> {
    fixed(world, n as i64);
    let nodes = (0..n)
        .map(|_| world.registered_node("fixed", instance_type))
        .collect();
    fixed(world, replicas);
    nodes
}

/// The `fixed` static pool with `replicas`.
fn fixed(world: &World, replicas: i64) {
    world.cluster.put(node_pool(
        "fixed",
        json!({"replicas": replicas, "limits": {"nodes": "10"}}),
    ));
}

/// The plan's scale-down for the cluster as it is.
fn decided(world: &World) -> Vec<StaticScaleDown> {
    world
        .live()
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .map(|r| r.plan.static_scale_down)
        .unwrap_or_default()
}

fn node_names(world: &World) -> Vec<String> {
    world
        .nodes()
        .iter()
        .map(|n| {
            n["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// "should terminate excess nodeclaims when current count exceeds desired replicas" (3 → 1,
/// like the e2e story): the plan names two empty nodes; carried out, their instances are
/// terminated and their Nodes deleted, nothing is launched, one node stays; a re-run finds
/// nothing to do ("should return early if current node count is less than or equal to
/// desired replicas").
#[test]
fn a_static_pool_lowered_from_3_to_1_loses_two_empty_nodes() {
    let world = World::new();
    let nodes = fixed_with(&world, 3, "c6a.large", 3);
    assert!(decided(&world).is_empty());
    fixed(&world, 1);
    let plan = decided(&world);
    assert_eq!(plan.len(), 1);
    assert_eq!((plan[0].running, plan[0].replicas), (3, 1));
    let gone: Vec<&str> = plan[0].removals.iter().map(|r| r.member.name()).collect();
    assert_eq!(gone, [nodes[0].as_str(), nodes[1].as_str()]);
    assert!(plan[0]
        .removals
        .iter()
        .all(|r| r.why == Why::Empty { daemonset_pods: 0 }));

    let mut live = world.live();
    let outcomes = live.scale_down(&all(), Some(&plan), &mut |_| {}).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert!(
        outcomes.iter().all(|o| o.status == Status::Deleted),
        "{outcomes:?}"
    );
    assert_eq!(node_names(&world), [nodes[2].clone()]);
    assert_eq!(world.running().len(), 1);
    assert_eq!(world.cloud.instances.borrow().len(), 3, "nothing launched");
    assert!(decided(&world).is_empty());
}

/// `static/deprovisioning/controller.go Reconcile` returns early unless `nodepoolutils.IsManaged`:
/// the same three nodes in a static pool whose `nodeClassRef` is EKS Auto Mode's `NodeClass`,
/// lowered to 1, are EKS's to scale down — no decision here (the pool's nodes are not this
/// provider's, so they are no members; guards the rule the plan's static replicas now follow).
#[test]
fn an_auto_mode_static_pool_is_not_scaled_down() {
    let world = World::new();
    fixed_with(&world, 3, "c6a.large", 1);
    let mut pool = node_pool("fixed", json!({"replicas": 1, "limits": {"nodes": "10"}}));
    pool["spec"]["template"]["spec"]["nodeClassRef"] =
        json!({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"});
    world.cluster.put(pool);
    assert!(decided(&world).is_empty());
}

/// `static/deprovisioning/controller.go Reconcile` counts only the running NodeClaims
/// (`GetNodeCount`'s active; "To avoid race conditions between deprovisioning and the
/// disruption controller"): a node Karpenter's disruption has tainted `karpenter.sh/disrupted`
/// is pending disruption, so 3 nodes, one of them tainted, lowered to 2 is no surplus.
#[test]
fn a_node_pending_disruption_is_not_running_for_a_scale_down() {
    let world = World::new();
    let nodes = fixed_with(&world, 3, "c6a.large", 2);
    world.cluster.update("v1", "Node", None, &nodes[0], |n| {
        n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    });
    assert!(decided(&world).is_empty());
}

/// "should terminate non-empty nodes when empty nodes are insufficient": the busy node goes
/// last, drained through the Eviction API (its pod goes to a node launched for it in the
/// dynamic pool, or to the node that stays).
#[test]
fn a_busy_node_goes_after_the_empty_ones_and_is_drained() {
    let world = World::new();
    let nodes = fixed_with(&world, 3, "c6a.xlarge", 1);
    put_bound(&world.cluster, "busy", &nodes[0]);
    let plan = decided(&world);
    let gone: Vec<&str> = plan[0].removals.iter().map(|r| r.member.name()).collect();
    assert_eq!(gone, [nodes[1].as_str(), nodes[2].as_str()]);
    fixed(&world, 0);
    let plan = decided(&world);
    let last = &plan[0].removals[2];
    assert_eq!(last.member.name(), nodes[0]);
    assert_eq!(last.why, Why::LowestCost { pods: 1, cost: 1.0 });
    world.kubelet(std::time::Duration::from_secs(5));
    let outcomes = world
        .live()
        .scale_down(&all(), Some(&plan), &mut |_| {})
        .unwrap();
    assert!(
        outcomes.iter().all(|o| o.status == Status::Deleted),
        "{outcomes:?}"
    );
    let busy = outcomes.iter().find(|o| o.node == nodes[0]).unwrap();
    assert_eq!(busy.evicted.len(), 1);
    assert!(world
        .cluster
        .writes()
        .iter()
        .any(|w| w.contains("/pods/busy/eviction")));
    assert!(!node_names(&world).iter().any(|n| nodes.contains(n)));
}

/// "should prioritize nodeclaims that have unresolved providerID": a NodeClaim that never
/// launched goes first, by deleting it; no instance is terminated.
#[test]
fn an_unresolved_nodeclaim_goes_first() {
    let world = World::new();
    let nodes = fixed_with(&world, 2, "c6a.large", 2);
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "fixed-unlaunched", "labels": {"karpenter.sh/nodepool": "fixed"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
    }));
    let plan = decided(&world);
    assert_eq!(plan[0].running, 3);
    assert_eq!(plan[0].removals.len(), 1);
    assert_eq!(plan[0].removals[0].why, Why::Unresolved);
    let outcomes = world
        .live()
        .scale_down(&all(), Some(&plan), &mut |_| {})
        .unwrap();
    assert_eq!(outcomes[0].node, "fixed-unlaunched");
    assert!(world
        .cluster
        .get("karpenter.sh/v1", "NodeClaim", None, "fixed-unlaunched")
        .is_none());
    assert_eq!(world.running().len(), 2);
    assert_eq!(node_names(&world).len(), nodes.len());
}

/// Re-read before acting: the replicas were raised again after the plan was confirmed, so
/// nothing goes ("should return early if current node count is less than or equal to desired
/// replicas", on the fresh read).
#[test]
fn nothing_goes_when_the_replicas_were_raised_meanwhile() {
    let world = World::new();
    fixed_with(&world, 3, "c6a.large", 1);
    let plan = decided(&world);
    fixed(&world, 3);
    let outcomes = world
        .live()
        .scale_down(&all(), Some(&plan), &mut |_| {})
        .unwrap();
    assert!(outcomes.is_empty());
    assert_eq!(world.nodes().len(), 3);
    assert!(
        world.cluster.writes().is_empty(),
        "{:?}",
        world.cluster.writes()
    );
}

/// "should return error when nodeclaim deletion fails": the NodeClaim's delete fails, the
/// error is the run's; the next run decides again and removes it.
#[test]
fn a_failed_nodeclaim_delete_is_an_error_and_the_next_run_finishes() {
    let world = World::new();
    fixed(&world, 0);
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "fixed-unlaunched", "labels": {"karpenter.sh/nodepool": "fixed"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
    }));
    world.cluster.fail_with(
        Http::Delete,
        "/nodeclaims/fixed-unlaunched",
        1,
        500,
        "simulated",
    );
    let plan = decided(&world);
    assert!(world
        .live()
        .scale_down(&all(), Some(&plan), &mut |_| {})
        .is_err());
    assert!(world
        .cluster
        .get("karpenter.sh/v1", "NodeClaim", None, "fixed-unlaunched")
        .is_some());
    let outcomes = world.live().scale_down(&all(), None, &mut |_| {}).unwrap();
    assert_eq!(outcomes.len(), 1);
}
