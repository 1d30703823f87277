//! Emptiness rules, each mirroring Karpenter's tests (`core v1.9.1
//! pkg/controllers/disruption/emptiness_test.go`, `suite_test.go`).

use super::*;
use crate::model::labels::{INITIALIZED, NODEPOOL};
use crate::model::nodepool::{ApiGeneration, Budget};
use crate::model::pod::Owner;
use crate::testing::PodBuilder;

const NOW: i64 = 1_700_000_000;

fn pool(name: &str, after: &str, budget: &str) -> NodePool {
    let mut p = NodePool {
        name: name.into(),
        generation: Some(ApiGeneration::V1),
        ..NodePool::default()
    };
    p.disruption.consolidation_policy = "WhenEmpty".into();
    p.disruption.consolidate_after = Some(after.into());
    p.disruption.budgets = vec![Budget {
        nodes: budget.into(),
        ..Budget::default()
    }];
    p
}

/// A node of `pool`, empty since `empty_for` seconds ago (no clock when `None`).
fn node(name: &str, pool: &str, empty_for: Option<i64>) -> Node {
    let mut n = Node {
        name: name.into(),
        labels: [(NODEPOOL, pool), (INITIALIZED, "true")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ready: true,
        initialized: true,
        provider_id: Some(format!("aws:///us-east-1a/i-{name}")),
        ..Node::default()
    };
    if let Some(s) = empty_for {
        n.annotations.insert(
            EMPTY_SINCE.into(),
            crate::model::time::format_rfc3339(NOW - s),
        );
    }
    n
}

fn decisions(nodes: &[Node], pods: &[Pod], pools: &[NodePool]) -> Vec<(String, Emptiness)> {
    decide(nodes, pods, pools, &BTreeSet::new(), NOW)
        .into_iter()
        .map(|(n, e)| (n.name.clone(), e))
        .collect()
}

fn one(n: Node, pods: &[Pod]) -> Emptiness {
    decisions(&[n], pods, &[pool("default", "30s", "10")])
        .pop()
        .unwrap()
        .1
}

// emptiness_test.go "should ignore nodes without the consolidatable status condition" /
// "should consider the consolidateAfter": the clock starts, then the node waits its time.
#[test]
fn an_empty_node_starts_its_clock_then_waits_consolidate_after() {
    assert_eq!(one(node("a", "default", None), &[]), Emptiness::StartClock);
    assert_eq!(
        one(node("a", "default", Some(10)), &[]),
        Emptiness::Waiting {
            for_secs: 10,
            ttl_secs: 30
        }
    );
    assert_eq!(
        one(node("a", "default", Some(30)), &[]),
        Emptiness::Remove { empty_for: 30 }
    );
}

// emptiness_test.go "should not delete nodes with reschedulable pods"; DaemonSet, mirror and
// finished pods do not make a node busy (pod/scheduling.go IsReschedulable).
#[test]
fn only_reschedulable_pods_make_a_node_busy() {
    let web = PodBuilder::new("web").on_node("a").build();
    assert_eq!(one(node("a", "default", Some(60)), &[web]), Emptiness::Busy);

    let ds = PodBuilder::new("ds")
        .daemonset("agent")
        .on_node("a")
        .build();
    let mut mirror = PodBuilder::new("static").on_node("a").build();
    mirror.owner = Some(Owner::of("Node", "a"));
    let mut done = PodBuilder::new("job").on_node("a").build();
    done.phase = Some("Succeeded".into());
    let mut leaving = PodBuilder::new("old").on_node("a").build();
    leaving.terminating = true;
    assert_eq!(
        one(node("a", "default", Some(60)), &[ds, mirror, done, leaving]),
        Emptiness::Remove { empty_for: 60 }
    );

    // A terminating StatefulSet pod still needs its place (IsReschedulable).
    let mut sts = PodBuilder::new("db-0").on_node("a").build();
    sts.terminating = true;
    sts.owner = Some(Owner::of("StatefulSet", "db"));
    assert_eq!(one(node("a", "default", Some(60)), &[sts]), Emptiness::Busy);
}

// suite_test.go "should not consider candidates that have do-not-disrupt pods scheduled" —
// DaemonSet pods included — and "… do-not-disrupt annotation on the node"; statenode.go
// ValidateNodeDisruptable: not initialized, deleting, nominated.
#[test]
fn an_empty_node_is_held_by_what_karpenter_checks_before_disrupting() {
    let mut ds = PodBuilder::new("ds")
        .daemonset("agent")
        .on_node("a")
        .build();
    ds.do_not_disrupt = Some("true".into());
    assert_eq!(
        one(node("a", "default", Some(60)), &[ds]),
        Emptiness::Held(Hold::PodDoNotDisrupt("default/ds".into()))
    );

    let mut annotated = node("a", "default", Some(60));
    annotated
        .annotations
        .insert(DO_NOT_DISRUPT.into(), "true".into());
    assert_eq!(one(annotated, &[]), Emptiness::Held(Hold::NodeDoNotDisrupt));

    // Not initialized: not Ready yet, or a startup taint still on. A Ready node without the
    // label and without those taints is what the (absent) controller would have initialized.
    let mut fresh = node("a", "default", Some(60));
    fresh.initialized = false;
    fresh.ready = false;
    assert_eq!(
        one(fresh.clone(), &[]),
        Emptiness::Held(Hold::NotInitialized)
    );
    fresh.ready = true;
    fresh.taints = vec![crate::testing::taint(
        "node.cloudprovider.kubernetes.io/uninitialized",
        "true",
        crate::model::taints::Effect::NoSchedule,
    )];
    assert_eq!(
        one(fresh.clone(), &[]),
        Emptiness::Held(Hold::NotInitialized)
    );
    fresh.taints.clear();
    assert_eq!(one(fresh, &[]), Emptiness::Remove { empty_for: 60 });

    let mut deleting = node("a", "default", Some(60));
    deleting.deleting = true;
    assert_eq!(one(deleting, &[]), Emptiness::Held(Hold::Deleting));

    let mut pending = PodBuilder::new("next").build();
    pending.nominated_node_name = Some("a".into());
    assert_eq!(
        one(node("a", "default", Some(60)), &[pending]),
        Emptiness::Held(Hold::Nominated("default/next".into()))
    );
}

// A do-not-disrupt duration (v1.x) holds only until it has passed since the pod's start.
#[test]
fn a_do_not_disrupt_duration_holds_only_while_it_lasts() {
    let mut ds = PodBuilder::new("ds")
        .daemonset("agent")
        .on_node("a")
        .build();
    ds.do_not_disrupt = Some("1h".into());
    ds.start_time = Some(crate::model::time::format_rfc3339(NOW - 7200));
    assert_eq!(
        one(node("a", "default", Some(60)), &[ds]),
        Emptiness::Remove { empty_for: 60 }
    );
}

// emptiness_test.go "should only allow 3 empty nodes to be disrupted" (budgets count down in
// one pass) and "should not allow emptiness if the budget is fully blocking".
#[test]
fn the_empty_budget_counts_down_across_one_pass() {
    let nodes: Vec<Node> = ["a", "b", "c"]
        .iter()
        .map(|n| node(n, "default", Some(60)))
        .collect();
    let got = decisions(&nodes, &[], &[pool("default", "30s", "2")]);
    assert_eq!(
        got,
        [
            ("a".to_string(), Emptiness::Remove { empty_for: 60 }),
            ("b".to_string(), Emptiness::Remove { empty_for: 60 }),
            (
                "c".to_string(),
                Emptiness::Held(Hold::Budget {
                    pool: "default".into(),
                    allowed: 2
                })
            ),
        ]
    );
    let blocked = decisions(&nodes, &[], &[pool("default", "30s", "0")]);
    assert!(blocked
        .iter()
        .all(|(_, e)| matches!(e, Emptiness::Held(Hold::Budget { allowed: 0, .. }))));
}

// A budget that names only other reasons does not limit emptiness (nodepool.go
// GetAllowedDisruptionsByReason); a node already being deleted takes from the budget.
#[test]
fn budgets_apply_by_reason_and_count_nodes_already_leaving() {
    let mut p = pool("default", "30s", "0");
    p.disruption.budgets[0].reasons = vec!["Drifted".into()];
    let nodes = [node("a", "default", Some(60))];
    assert_eq!(
        decisions(&nodes, &[], &[p]),
        [("a".to_string(), Emptiness::Remove { empty_for: 60 })]
    );

    let mut leaving = node("b", "default", Some(60));
    leaving.deleting = true;
    let nodes = [node("a", "default", Some(60)), leaving];
    let got = decisions(&nodes, &[], &[pool("default", "30s", "1")]);
    assert_eq!(
        got[0],
        (
            "a".to_string(),
            Emptiness::Held(Hold::Budget {
                pool: "default".into(),
                allowed: 0
            })
        )
    );
}

// emptiness.go ShouldDisrupt: consolidateAfter Never turns emptiness off; a static pool's
// nodes are never candidates; a pool without emptiness in its policy is left alone.
#[test]
fn pools_without_emptiness_are_left_out() {
    let nodes = [node("a", "default", Some(600))];
    assert!(decisions(&nodes, &[], &[pool("default", "Never", "10")]).is_empty());
    let mut fixed = pool("default", "30s", "10");
    fixed.replicas = Some(3);
    assert!(decisions(&nodes, &[], &[fixed]).is_empty());
    let mut off = pool("default", "30s", "10");
    off.disruption.consolidation_policy = "None".into();
    assert!(decisions(&nodes, &[], &[off]).is_empty());
    // A node whose pool is not in the input, or without an instance, is not ours to remove.
    assert!(decisions(&nodes, &[], &[pool("other", "30s", "10")]).is_empty());
    let mut unmanaged = node("a", "default", Some(600));
    unmanaged.provider_id = None;
    assert!(decisions(&[unmanaged], &[], &[pool("default", "30s", "10")]).is_empty());
}

#[test]
fn a_pod_found_after_tainting_keeps_the_node_unless_it_needs_no_place() {
    let web = PodBuilder::new("web").on_node("a").build();
    assert!(keeps_node(&web, NOW));
    let ds = PodBuilder::new("ds")
        .daemonset("agent")
        .on_node("a")
        .build();
    assert!(!keeps_node(&ds, NOW));
    let mut guarded = ds.clone();
    guarded.do_not_disrupt = Some("true".into());
    assert!(keeps_node(&guarded, NOW));
}

/// core v1.14.1 `disruption/emptiness_test.go` "Buffer pod protection": a node the
/// provisioner's last pass placed buffer (virtual) pods on is not disrupted as empty; the other
/// empty nodes are, and a node without buffer pods any more is again.
#[test]
fn nodes_hosting_buffer_pods_are_held() {
    let nodes = [
        node("a", "default", Some(60)),
        node("b", "default", Some(60)),
    ];
    let pools = [pool("default", "30s", "10")];
    let buffers: BTreeSet<String> = ["a".to_string()].into();
    let got: Vec<_> = decide(&nodes, &[], &pools, &buffers, NOW)
        .into_iter()
        .map(|(n, e)| (n.name.clone(), e))
        .collect();
    assert_eq!(got[0], ("a".into(), Emptiness::Held(Hold::BufferPods)));
    assert!(matches!(got[1].1, Emptiness::Remove { .. }), "{got:?}");
    assert!(matches!(
        decisions(&nodes[..1], &[], &pools)[0].1,
        Emptiness::Remove { .. }
    ));
}
