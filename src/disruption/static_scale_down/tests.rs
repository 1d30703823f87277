//! Table tests mirroring `core main: pkg/controllers/static/deprovisioning/suite_test.go`
//! ("Static Deprovisioning Controller"); each test names the `It` (or `Entry`) it mirrors. The
//! two "Helper Functions" Its (`HasNodePoolReplicaCountChanged`) are the controller's watch
//! predicate: this tool decides on every read, so there is no predicate to mirror.

use super::*;
use crate::model::nodepool::NodeClassRef;
use crate::model::pod::{Owner, PodFields};

const NOW: i64 = 1_800_000_000;

fn pool(replicas: Option<i64>) -> NodePool {
    NodePool {
        name: "fixed".into(),
        replicas,
        node_class_ref: Some(NodeClassRef {
            group: "karpenter.k8s.aws".into(),
            kind: "EC2NodeClass".into(),
            name: "default".into(),
        }),
        ..NodePool::default()
    }
}

fn node(name: &str, pods: Vec<Pod>) -> Member {
    Member {
        node: Some(name.into()),
        node_claim: Some(format!("{name}-claim")),
        instance: Some(format!("i-{name}")),
        resolved: true,
        pods,
        ..Member::default()
    }
}

fn nodes(n: usize) -> Vec<Member> {
    (0..n).map(|i| node(&format!("node-{i}"), vec![])).collect()
}

fn unresolved(name: &str) -> Member {
    Member {
        node_claim: Some(name.into()),
        ..Member::default()
    }
}

fn pod(name: &str, namespace: &str, owner: Option<&str>, dnd: Option<&str>) -> Pod {
    Pod::new(
        name,
        "",
        PodFields {
            namespace: namespace.into(),
            owner: owner.map(|kind| Owner::of(kind, format!("{name}-owner"))),
            do_not_disrupt: dnd.map(str::to_string),
            phase: Some("Running".into()),
            ..PodFields::default()
        },
    )
}

fn gone(pool: &NodePool, members: &[Member]) -> Vec<String> {
    decide(pool, members, NOW)
        .map(|d| {
            d.removals
                .iter()
                .map(|r| r.member.name().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// "should return early if nodepool is not managed by cloud provider"
#[test]
fn a_pool_of_another_provider_is_left_alone() {
    let mut p = pool(Some(1));
    p.node_class_ref.as_mut().unwrap().group = "test.group".into();
    assert_eq!(decide(&p, &nodes(2), NOW), None);
}

/// "should return early if nodepool replicas is nil"
#[test]
fn a_dynamic_pool_is_left_alone() {
    assert_eq!(decide(&pool(None), &nodes(2), NOW), None);
}

/// "should return early if nodepool is being deleted"
#[test]
fn a_pool_being_deleted_is_left_alone() {
    let mut p = pool(Some(1));
    p.deleting = true;
    assert_eq!(decide(&p, &nodes(2), NOW), None);
}

/// "should return early if current node count is less than or equal to desired replicas";
/// "should handle no active nodeclaims gracefully"
#[test]
fn nothing_goes_at_or_below_the_replicas() {
    assert_eq!(decide(&pool(Some(3)), &nodes(2), NOW), None);
    assert_eq!(decide(&pool(Some(2)), &nodes(2), NOW), None);
    assert_eq!(decide(&pool(Some(0)), &[], NOW), None);
}

/// "should only consider running nodeclaims and not deleting nodeclaims": 4 NodeClaims, 3 of
/// them being deleted, 1 replica → nothing more goes.
#[test]
fn nodeclaims_being_deleted_do_not_count() {
    let mut members = nodes(4);
    for m in &mut members[..3] {
        m.deleting = true;
    }
    assert_eq!(decide(&pool(Some(1)), &members, NOW), None);
}

/// "should terminate excess nodeclaims when current count exceeds desired replicas" (4 → 2);
/// "should handle zero replicas by terminating all nodeclaims" (3 → 0).
#[test]
fn the_surplus_goes() {
    let d = decide(&pool(Some(2)), &nodes(4), NOW).unwrap();
    assert_eq!((d.replicas, d.running, d.removals.len()), (2, 4, 2));
    assert!(d
        .removals
        .iter()
        .all(|r| r.why == Why::Empty { daemonset_pods: 0 }));
    assert_eq!(gone(&pool(Some(0)), &nodes(3)).len(), 3);
}

/// "should return error when nodeclaim deletion fails": the decision is the same; a failed
/// delete is the use case's (`usecases::provisioning::statics` tests), and the next read
/// decides again.
#[test]
fn the_decision_does_not_depend_on_earlier_attempts() {
    let members = nodes(3);
    assert_eq!(
        decide(&pool(Some(1)), &members, NOW),
        decide(&pool(Some(1)), &members, NOW)
    );
}

/// "should prioritize nodeclaims that have unresolved providerID": 2 launched + 2 unresolved,
/// 2 replicas → the unresolved go.
#[test]
fn unresolved_nodeclaims_go_first() {
    let mut members = nodes(2);
    members.push(unresolved("fixed-x"));
    members.push(unresolved("fixed-y"));
    let d = decide(&pool(Some(2)), &members, NOW).unwrap();
    assert_eq!(d.running, 4);
    let names: Vec<&str> = d.removals.iter().map(|r| r.member.name()).collect();
    assert_eq!(names, ["fixed-x", "fixed-y"]);
    assert!(d.removals.iter().all(|r| r.why == Why::Unresolved));
}

/// "should prioritize empty nodes (with only daemonset pods) for termination": nodes 0 and 2
/// hold a DaemonSet pod, 1 and 3 an ordinary pod; 2 replicas → 0 and 2 go.
#[test]
fn nodes_with_only_daemonset_pods_go_before_busy_ones() {
    let members: Vec<Member> = (0..4)
        .map(|i| {
            let ds = i % 2 == 0;
            let p = pod(
                &format!("p{i}"),
                if ds { "kube-system" } else { "default" },
                ds.then_some("DaemonSet"),
                None,
            );
            node(&format!("node-{i}"), vec![p])
        })
        .collect();
    let d = decide(&pool(Some(2)), &members, NOW).unwrap();
    let names: Vec<&str> = d.removals.iter().map(|r| r.member.name()).collect();
    assert_eq!(names, ["node-0", "node-2"]);
    assert_eq!(d.removals[0].why, Why::Empty { daemonset_pods: 1 });
}

/// "should terminate non-empty nodes when empty nodes are insufficient": pods on nodes 0 and
/// 2, 1 replica → 1 and 3 (empty), then the cheaper of 0 and 2 (a tie: by name).
#[test]
fn busy_nodes_go_when_empty_ones_are_not_enough() {
    let mut members = nodes(4);
    members[0].pods = vec![pod("a", "default", None, None)];
    members[2].pods = vec![pod("b", "default", None, None)];
    let d = decide(&pool(Some(1)), &members, NOW).unwrap();
    let names: Vec<&str> = d.removals.iter().map(|r| r.member.name()).collect();
    assert_eq!(names, ["node-1", "node-3", "node-0"]);
    assert_eq!(d.removals[2].why, Why::LowestCost { pods: 1, cost: 1.0 });
}

/// "disruption cost ordering" / "scales down in disruption cost order": two nodes each of
/// low (1 pod), high (2 pods), dnd (1 do-not-disrupt pod), ds (1 DaemonSet pod), 8 replicas
/// lowered to 6, 4, 2, 0 → what stays, by index: "to 6 (drops DS-only first)", "to 4 (drops
/// low next)", "to 2 (drops high next)", "to 0 (drops do-not-disrupt last)".
#[test]
fn scale_down_follows_disruption_cost() {
    let mut members = Vec::new();
    for i in 0..2 {
        for kind in ["low", "high", "dnd", "ds"] {
            let pods = match kind {
                "low" => vec![pod(&format!("system-low-{i}"), "kube-system", None, None)],
                "high" => vec![
                    pod(&format!("system-high-{i}"), "kube-system", None, None),
                    pod(&format!("app-high-{i}"), "default", None, None),
                ],
                "dnd" => vec![pod(&format!("app-dnd-{i}"), "default", None, Some("true"))],
                _ => vec![pod(
                    &format!("dmn-{i}"),
                    "kube-system",
                    Some("DaemonSet"),
                    None,
                )],
            };
            let index = members.len();
            members.push(node(&format!("n{index}"), pods));
        }
    }
    let table: [(i64, &[usize]); 4] = [
        (6, &[0, 1, 2, 4, 5, 6]),
        (4, &[1, 2, 5, 6]),
        (2, &[2, 6]),
        (0, &[]),
    ];
    for (replicas, stays) in table {
        let removed = gone(&pool(Some(replicas)), &members);
        let mut kept: Vec<usize> = (0..8)
            .filter(|i| !removed.contains(&format!("n{i}")))
            .collect();
        kept.sort();
        assert_eq!(kept, stays, "replicas {replicas}");
    }
    let d = decide(&pool(Some(0)), &members, NOW).unwrap();
    assert!(matches!(
        &d.removals[7].why,
        Why::DoNotDisrupt { pod, .. } if pod == "default/app-dnd-1"
    ));
}

/// `LifetimeRemaining`: of two nodes with the same pods, the one nearer its `expireAfter`
/// costs less and goes first (`pkg/utils/disruption/disruption.go`).
#[test]
fn a_node_nearer_expiry_costs_less() {
    let mut young = node("a-young", vec![pod("a", "default", None, None)]);
    let mut old = node("b-old", vec![pod("b", "default", None, None)]);
    young.expire_after = Some(1000);
    young.created = Some(NOW - 100);
    old.expire_after = Some(1000);
    old.created = Some(NOW - 750);
    let d = decide(&pool(Some(1)), &[young, old], NOW).unwrap();
    assert_eq!(d.removals[0].member.name(), "b-old");
    assert_eq!(
        d.removals[0].why,
        Why::LowestCost {
            pods: 1,
            cost: 0.25
        }
    );
}

/// A DaemonSet pod with an active do-not-disrupt makes its node non-empty
/// (`resolvedDeprovisioningCandidates`: `lo.NoneBy(pods, IsDoNotDisruptActive)`).
#[test]
fn a_do_not_disrupt_daemonset_pod_is_not_empty() {
    let members = vec![
        node(
            "a",
            vec![pod("ds", "kube-system", Some("DaemonSet"), Some("true"))],
        ),
        node("b", vec![pod("app", "default", None, None)]),
    ];
    assert_eq!(gone(&pool(Some(1)), &members), ["b"]);
}

/// `ReschedulingCost` sums the pods' `EvictionCost` (`core: pkg/utils/disruption/disruption.go`):
/// a node whose one pod has a high priority costs more than a node whose one pod has none, so
/// the other goes although it comes first by name.
#[test]
fn pod_priority_raises_a_nodes_cost() {
    let mut important = pod("important", "default", Some("ReplicaSet"), None);
    important.priority = Some(1_000_000_000);
    let members = vec![
        node("node-a", vec![important]),
        node(
            "node-b",
            vec![pod("plain", "default", Some("ReplicaSet"), None)],
        ),
    ];
    assert_eq!(gone(&pool(Some(1)), &members), ["node-b"]);
}
