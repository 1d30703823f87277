//! Static NodePools (`spec.replicas`) in plans (`solve_rounds`), mirroring `core main:
//! pkg/controllers/static/provisioning/suite_test.go`.

use super::*;

fn static_pool(name: &str, replicas: i64) -> crate::model::nodepool::NodePool {
    let mut pool = node_pool(name);
    pool.replicas = Some(replicas);
    pool
}

/// A node of `pool` that exists already.
fn node_of(pool: &str, name: &str) -> ExistingNode {
    ExistingNode {
        node: Node {
            name: name.into(),
            labels: [(crate::model::labels::NODEPOOL, pool), (HOSTNAME, name)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            capacity: Resources::from_pairs(&[("cpu", "2"), ("memory", "4Gi"), ("pods", "10")]),
            allocatable: Resources::from_pairs(&[
                ("cpu", "1900m"),
                ("memory", "3Gi"),
                ("pods", "10"),
            ]),
            ..Node::default()
        },
        pods: vec![],
    }
}

use crate::model::resources::Resources;

/// "should create nodeclaims when current node count is less than desired replicas": 3 wanted,
/// 1 there → 2 NodeClaims, without pods, launched as the cheapest type; "should not create
/// additional nodeclaims" once 3 are there; "should handle zero replicas".
#[test]
fn a_static_pool_gets_the_nodeclaims_it_lacks() {
    let mut inp = input(
        vec![],
        vec![pool_input(static_pool("fixed", 3), small_catalog())],
    );
    inp.existing_nodes.push(node_of("fixed", "fixed-a"));
    let plan = solve_rounds(&inp);
    let names: Vec<&str> = plan.node_claims.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fixed-1", "fixed-2"]);
    for c in &plan.node_claims {
        assert!(c.pods.is_empty());
        assert_eq!(c.round, 1);
        assert_eq!(
            c.launch.instance_type, "small",
            "the bare template: the cheapest type"
        );
    }
    inp.existing_nodes.push(node_of("fixed", "fixed-b"));
    inp.existing_nodes.push(node_of("fixed", "fixed-c"));
    assert!(solve_rounds(&inp).node_claims.is_empty());
    let zero = input(
        vec![],
        vec![pool_input(static_pool("fixed", 0), small_catalog())],
    );
    assert!(solve_rounds(&zero).node_claims.is_empty());
}

/// `static/provisioning/controller.go` `Reconcile` returns early unless
/// `nodepoolutils.IsManaged(np, cloudProvider)`: a static pool whose `nodeClassRef` names EKS Auto
/// Mode's `NodeClass` (`eks.amazonaws.com`) gets no replica from this provider's controller —
/// EKS launches them. Scenario (session 19 sweep, a Terraform template of a static GPU pool,
/// code index id 54523067972): `replicas: 2`, `eks.amazonaws.com/instance-family In [g6e]` →
/// we planned two `t4g.nano` NodeClaims (the Auto Mode requirement names no label our catalog
/// has); now none.
#[test]
fn a_static_auto_mode_pool_gets_no_replicas() {
    let mut pool = static_pool("auto", 2);
    pool.node_class_ref = Some(crate::model::nodepool::NodeClassRef {
        group: "eks.amazonaws.com".into(),
        kind: "NodeClass".into(),
        name: "static".into(),
    });
    let plan = solve_rounds(&input(vec![], vec![pool_input(pool, small_catalog())]));
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
}

/// "should not create additional nodeclaims when node limits are reached": `limits.nodes: 2`
/// caps 5 replicas at 2.
#[test]
fn node_limits_cap_the_replicas() {
    let mut pool = static_pool("fixed", 5);
    pool.limits.insert("nodes".into(), 2000);
    let plan = solve_rounds(&input(vec![], vec![pool_input(pool, small_catalog())]));
    assert_eq!(plan.node_claims.len(), 2);
}

/// A static pool never opens a NodeClaim for a pending pod (`StaticNodePool`), but its replicas
/// are nodes about to exist: a pod that fits goes there rather than to a new NodeClaim.
#[test]
fn pending_pods_use_static_replicas_but_never_grow_the_pool() {
    let plan = solve_rounds(&input(
        pods(1, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(static_pool("fixed", 1), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods, ["default/p0"]);
    assert!(plan.unschedulable.is_empty());

    let plan = solve_rounds(&input(
        pods(1, |i| PodBuilder::new(&format!("p{i}")).cpu("4")),
        vec![pool_input(static_pool("fixed", 1), small_catalog())],
    ));
    assert_eq!(
        plan.node_claims.len(),
        1,
        "the replica, and nothing for the pod"
    );
    assert!(plan.node_claims[0].pods.is_empty());
    assert_eq!(
        plan.unschedulable[0].reason.code(),
        ReasonCode::StaticNodePool
    );
}

/// How many NodeClaims a plan launches for static pool `fixed` with `replicas`, `limits.nodes`
/// `limit` and `nodes` of its own (each one node of usage, as the input counts them).
fn launches(replicas: i64, limit: Option<i64>, nodes: Vec<ExistingNode>) -> usize {
    let mut pool = static_pool("fixed", replicas);
    if let Some(l) = limit {
        pool.limits.insert("nodes".into(), l * 1000);
    }
    let mut pi = pool_input(pool, small_catalog());
    // As `usecases/provisioning/input.rs pool_usage` sums it: deleting nodes left out.
    let counted = nodes.iter().filter(|n| !n.node.deleting).count();
    pi.usage.set("nodes", counted as i64 * 1000);
    let mut inp = input(vec![], vec![pi]);
    inp.existing_nodes = nodes;
    solve_rounds(&inp).node_claims.len()
}

/// `node_of` marked by a disruption that started on it (`karpenter.sh/disrupted:NoSchedule`).
fn pending_disruption(pool: &str, name: &str) -> ExistingNode {
    let mut n = node_of(pool, name);
    n.node.taints.push(crate::model::taints::Taint::new(
        crate::model::labels::DISRUPTED_TAINT,
        "",
        crate::model::taints::Effect::NoSchedule,
    ));
    n
}

/// `core v1.14.1: pkg/controllers/static/provisioning/controller.go` `Reconcile` with
/// `GetNodeCount`'s (active, deleting, pending disruption): nothing when active + pending
/// disruption reach the replicas ("should return early if current node count exceeds desired
/// replicas": 2 nodes, 1 replica), else replicas − active ("should create additional
/// nodeclaims to reach desired replicas": 3 − 1 = 2) — a node pending disruption holds the
/// gate but not the count; a deleting node counts for neither, but against `limits.nodes`
/// (`ReserveNodeCount`).
#[test]
fn pending_disruption_holds_the_gate_but_the_count_is_from_active_nodes() {
    let count = launches;
    let deleting = |name: &str| {
        let mut n = node_of("fixed", name);
        n.node.deleting = true;
        n
    };
    let a = || node_of("fixed", "a");
    let b = || node_of("fixed", "b");
    // (what, replicas, limit, nodes, launched)
    type Case = (&'static str, i64, Option<i64>, Vec<ExistingNode>, usize);
    let cases: Vec<Case> = vec![
        ("more nodes than replicas", 1, None, vec![a(), b()], 0),
        ("3 − 1 active", 3, None, vec![a()], 2),
        (
            "active + pending = replicas",
            3,
            None,
            vec![a(), b(), pending_disruption("fixed", "c")],
            0,
        ),
        (
            "active + pending < replicas: replicas − active",
            3,
            None,
            vec![a(), pending_disruption("fixed", "c")],
            2,
        ),
        (
            "a deleting node is replaced",
            2,
            None,
            vec![a(), deleting("d")],
            1,
        ),
        (
            "the limit counts every node",
            3,
            Some(3),
            vec![a(), pending_disruption("fixed", "c")],
            1,
        ),
        (
            "the limit counts deleting nodes",
            2,
            Some(2),
            vec![a(), deleting("d")],
            0,
        ),
    ];
    for (name, replicas, limit, nodes, launched) in cases {
        assert_eq!(count(replicas, limit, nodes), launched, "{name}");
    }
}

/// `core v1.14.1: pkg/controllers/state/statenodepool_test.go` "ReserveNodeCount":
/// `ReserveNodeCount(pool, limit, wanted)` grants `min(wanted, limit − active − deleting −
/// pending disruption − reserved)`, never below 0; the static provisioner asks for `replicas −
/// active`. Upstream's successive reservations are successive plans here: what an earlier one
/// reserved is in flight by the next (`n` nodes of the pool), so `wanted` = `replicas − n`.
/// "ReleaseNodeCount" (3 Its: release, release more than reserved, concurrent releases) and the
/// concurrency of "should be thread-safe with concurrent reservations" are n.a.: a reservation is
/// held between the controller's reconciles until the NodeClaim is active; one plan holds none
/// (its total, 10 goroutines × 1 against a limit of 5 = 5, is the "10 wanted" row).
#[test]
fn reserve_node_count_grants_what_the_limit_leaves() {
    let mine = |n: usize| -> Vec<ExistingNode> {
        (0..n).map(|i| node_of("fixed", &format!("n{i}"))).collect()
    };
    let deleting = || {
        let mut n = node_of("fixed", "d");
        n.node.deleting = true;
        n
    };
    // (It, replicas, limit, nodes, granted)
    type Case = (&'static str, i64, i64, Vec<ExistingNode>, usize);
    let cases: Vec<Case> = vec![
        (
            "should reserve requested capacity when available (3 of 5)",
            3,
            5,
            mine(0),
            3,
        ),
        ("… then the remaining 2", 5, 5, mine(3), 2),
        (
            "should grant partial capacity when requested exceeds available (4)",
            4,
            5,
            mine(0),
            4,
        ),
        ("… then 5 wanted, 1 left", 9, 5, mine(4), 1),
        (
            "should return zero when no capacity available (5)",
            5,
            5,
            mine(0),
            5,
        ),
        ("… then 1 wanted, 0 left", 6, 5, mine(5), 0),
        (
            "should account for running NodeClaims (4 of 5 − 1)",
            5,
            5,
            mine(1),
            4,
        ),
        ("… then none", 6, 5, mine(5), 0),
        (
            "should account for deleting NodeClaims",
            4,
            5,
            vec![deleting()],
            4,
        ),
        (
            "should be thread-safe with concurrent reservations (10 × 1, limit 5)",
            10,
            5,
            mine(0),
            5,
        ),
    ];
    for (name, replicas, limit, nodes, granted) in cases {
        assert_eq!(launches(replicas, Some(limit), nodes), granted, "{name}");
    }
}

/// `core v1.14.1: pkg/controllers/state/cluster.go` `UpdateNodeClaim` counts a NodeClaim in
/// `NodePoolState` from its creation, provider id or not, and `static/provisioning/controller.go`
/// `Reconcile` waits on `Synced` only before the first sync: a NodeClaim not launched yet is an
/// active replica (and a deleting one counts against `limits.nodes`, `ReserveNodeCount`).
/// Before s30-linestatic neither was counted: a static pool got a second NodeClaim for it.
#[test]
fn a_nodeclaim_not_launched_yet_is_a_static_pools_replica() {
    let count = |replicas: i64, limit: Option<i64>, unlaunched: Unlaunched| {
        let mut pool = static_pool("fixed", replicas);
        if let Some(l) = limit {
            pool.limits.insert("nodes".into(), l * 1000);
        }
        let mut pi = pool_input(pool, small_catalog());
        pi.unlaunched = unlaunched;
        let mut inp = input(vec![], vec![pi]);
        inp.existing_nodes = vec![node_of("fixed", "a")];
        solve_rounds(&inp).node_claims.len()
    };
    let u = |active, deleting| Unlaunched { active, deleting };
    // (what, replicas, limit, unlaunched, launched)
    let cases = [
        ("none: 3 − 1", 3, None, u(0, 0), 2),
        ("one launching: 3 − 2", 3, None, u(1, 0), 1),
        ("two launching: none", 3, None, u(2, 0), 0),
        ("a deleting one is no replica", 3, None, u(0, 1), 2),
        (
            "a deleting one takes a place under the limit",
            3,
            Some(3),
            u(0, 1),
            1,
        ),
    ];
    for (name, replicas, limit, unlaunched, launched) in cases {
        assert_eq!(count(replicas, limit, unlaunched), launched, "{name}");
    }
}
