//! The engine's StaticDrift method, end to end through `evaluate` (`core v1.14.1:
//! pkg/controllers/disruption/staticdrift_test.go`, `controller.go`'s method order). The
//! decision's table tests are in `disruption/static_drift/tests.rs`.

use crate::disruption::consolidation::{
    evaluate, ConsolidationInput, ConsolidationReport, Decision, Drifted, Method, NodeDecision,
    NodeInput, Reason,
};
use crate::model::instance_type::{InstanceType, ON_DEMAND};
use crate::model::nodepool::{Budget, NodePool};
use crate::model::pod::Pod;
use crate::testing::PodBuilder;
use crate::testing::{consolidation_input, instance_type, managed_node, node_pool, on_demand};

const NOW: i64 = 1_719_230_400;
const ZONE: &str = "test-zone-1";

fn types() -> Vec<InstanceType> {
    [
        ("small", "2", 0.10),
        ("medium", "4", 0.20),
        ("large", "8", 0.40),
    ]
    .into_iter()
    .map(|(n, cpu, price)| {
        let cpus: f64 = cpu.parse().unwrap();
        instance_type(
            n,
            cpu,
            &format!("{}Gi", 2.0 * cpus),
            "110",
            on_demand(&[ZONE], price),
        )
    })
    .collect()
}

fn node(name: &str, pool: &str, pods: Vec<Pod>) -> NodeInput {
    let large = types().into_iter().find(|t| t.name == "large").unwrap();
    managed_node(name, pool, &large, ZONE, ON_DEMAND, NOW, pods)
}

fn drifted(mut n: NodeInput) -> NodeInput {
    n.claim.as_mut().unwrap().drifted = Some(Drifted {
        since: NOW - 60,
        reason: "AMIDrift".into(),
    });
    n
}

/// A static pool of `replicas`, budget 100% for every reason, consolidation off (so only
/// drift acts), `limits.nodes` if given.
fn static_pool(name: &str, replicas: i64, limit: Option<i64>) -> NodePool {
    let mut p = node_pool(name);
    p.replicas = Some(replicas);
    p.disruption.consolidate_after = Some("Never".into());
    p.disruption.budgets = vec![Budget {
        nodes: "100%".into(),
        ..Budget::default()
    }];
    if let Some(l) = limit {
        p.limits.insert("nodes".into(), l * 1000);
    }
    p
}

fn run(pools: Vec<NodePool>, nodes: Vec<NodeInput>) -> ConsolidationReport {
    let input: ConsolidationInput = consolidation_input(
        NOW,
        pools.into_iter().map(|p| (p, types())).collect(),
        nodes,
    );
    evaluate(input)
}

fn reason<'r>(r: &'r ConsolidationReport, name: &str) -> Option<&'r Reason> {
    r.nodes.iter().find(|n| n.name == name)?.reason.as_ref()
}

/// "should handle missing node limits gracefully" (and the replacement's shape): every drifted
/// NodeClaim of the pool is replaced, one action each, by the bare template — the cheapest
/// compatible type as `instanceType`, every option in `instanceTypes` — whatever its pods.
#[test]
fn drifted_static_nodes_are_replaced_by_bare_replicas_one_action_each() {
    let pod = PodBuilder::new("web").cpu("1").build();
    let r = run(
        vec![static_pool("fixed", 2, None)],
        vec![
            drifted(node("a", "fixed", vec![pod])),
            drifted(node("b", "fixed", vec![])),
        ],
    );
    assert_eq!(r.actions.len(), 2, "{:#?}", r.actions);
    for (a, n) in r.actions.iter().zip(["a", "b"]) {
        assert_eq!(
            (a.pass, a.method, a.decision),
            (1, Method::StaticDrift, Decision::Replace)
        );
        assert_eq!(a.nodes, vec![n.to_string()]);
        let rep = a.replacement.as_ref().unwrap();
        assert_eq!(rep.node_pool, "fixed");
        assert_eq!(rep.instance_type, "small");
        assert_eq!(rep.instance_types, vec!["small", "medium", "large"]);
        assert!(a.additional_replacements.is_empty());
    }
    assert_eq!(r.actions[0].pods, vec!["default/web".to_string()]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["actions"][0]["method"], "static-drift");
    let a = r.nodes.iter().find(|n| n.name == "a").unwrap();
    assert_eq!(
        (a.decision, a.method),
        (NodeDecision::Replace, Some(Method::StaticDrift))
    );
}

/// controller.go: Emptiness, StaticDrift, Drift. A pass stops at the first method that acts:
/// the static pool's drifted node goes in pass 1, the dynamic pool's in pass 2 (Drift takes no
/// static pool's node: `drift.go ShouldDisrupt`).
#[test]
fn static_drift_comes_before_drift_and_drift_leaves_static_pools_alone() {
    let mut dynamic = node_pool("dyn");
    dynamic.disruption.consolidate_after = Some("Never".into());
    // (A pod of `d` would wait: the scheduler would put it on the uninitialized replica.)
    let r = run(
        vec![static_pool("fixed", 1, None), dynamic],
        vec![
            drifted(node("s", "fixed", vec![])),
            drifted(node("d", "dyn", vec![])),
        ],
    );
    let summary: Vec<_> = r
        .actions
        .iter()
        .map(|a| (a.pass, a.method, a.nodes.clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, Method::StaticDrift, vec!["s".to_string()]),
            (2, Method::Drift, vec!["d".to_string()]),
        ]
    );
}

/// "should wait until nodes are deprovisioned when we are overscaled" and "should handle zero
/// replicas": above its replicas the pool's drifted nodes wait for scale-down.
#[test]
fn a_pool_above_its_replicas_waits_for_scale_down() {
    let r = run(
        vec![static_pool("fixed", 1, None)],
        vec![
            drifted(node("a", "fixed", vec![])),
            node("b", "fixed", vec![]),
        ],
    );
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert_eq!(
        reason(&r, "a").map(Reason::kind),
        Some("static-above-replicas")
    );
    let r = run(
        vec![static_pool("fixed", 0, None)],
        vec![drifted(node("a", "fixed", vec![]))],
    );
    assert!(r.actions.is_empty());
}

/// "should keep drifting partially when we can acquire some limits for each reconcile": with
/// `limits.nodes` one above the replicas, one replacement at a time — in the next pass the
/// first is in flight (its drifted node deleting, its replica running) and the limit is full.
#[test]
fn limits_nodes_caps_the_replacements_in_flight() {
    let nodes = (0..3)
        .map(|i| drifted(node(&format!("n{i}"), "fixed", vec![])))
        .collect();
    let r = run(vec![static_pool("fixed", 3, Some(4))], nodes);
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert_eq!(r.actions[0].nodes, vec!["n0".to_string()]);
    assert_eq!(
        reason(&r, "n1").map(Reason::kind),
        Some("static-node-limit")
    );
    // "should not drift nodes when we cannot acquire limits".
    let nodes = (0..3)
        .map(|i| drifted(node(&format!("n{i}"), "fixed", vec![])))
        .collect();
    let r = run(vec![static_pool("fixed", 3, Some(3))], nodes);
    assert!(r.actions.is_empty());
}

/// "should respect disruption budgets (Nodes Count) for static drift": the `Drifted` budget
/// caps the pass; its reason is the budget's.
#[test]
fn the_drifted_budget_caps_static_drift() {
    let mut p = static_pool("fixed", 3, None);
    p.disruption.budgets = vec![Budget {
        nodes: "1".into(),
        reasons: vec!["Drifted".into()],
        ..Budget::default()
    }];
    let nodes = (0..3)
        .map(|i| drifted(node(&format!("n{i}"), "fixed", vec![])))
        .collect();
    let r = run(vec![p], nodes);
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert!(
        matches!(reason(&r, "n2"), Some(Reason::Budget { .. })),
        "{:?}",
        reason(&r, "n2")
    );
}

/// "should ignore nodes without the drifted status condition" and "should ignore nodes with
/// the karpenter.sh/do-not-disrupt annotation": no candidate, no action.
#[test]
fn undrifted_or_do_not_disrupt_nodes_are_not_candidates() {
    let mut guarded = drifted(node("guarded", "fixed", vec![]));
    guarded
        .node
        .annotations
        .insert("karpenter.sh/do-not-disrupt".into(), "true".into());
    let r = run(
        vec![static_pool("fixed", 2, None)],
        vec![guarded, node("plain", "fixed", vec![])],
    );
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
}

/// A replica smaller than the drifted node: its pods land on it while they fit, the rest go
/// pending (the provisioner's), listed with the action.
#[test]
fn pods_beyond_the_replicas_room_go_pending() {
    let pods = (0..3)
        .map(|i| PodBuilder::new(&format!("p{i}")).cpu("900m").build())
        .collect();
    let r = run(
        vec![static_pool("fixed", 1, None)],
        vec![drifted(node("a", "fixed", pods))],
    );
    let a = &r.actions[0];
    assert_eq!(a.replacement.as_ref().unwrap().instance_type, "small");
    assert_eq!(
        a.pods,
        vec!["default/p0".to_string(), "default/p1".to_string()]
    );
    assert_eq!(a.pods_left_pending, vec!["default/p2".to_string()]);
}
