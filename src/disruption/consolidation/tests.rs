//! One test per rule, each naming the Karpenter test it mirrors (`core v1.14.1:
//! pkg/controllers/disruption/*_test.go` unless stated).

use super::*;
use crate::disruption::budgets::DisruptionReason;
use crate::model::instance_type::{InstanceType, ON_DEMAND, SPOT};
use crate::model::nodepool::{ApiGeneration, Budget, NodePool};
use crate::model::pod::Pod;
use crate::model::selector::LabelSelector;
use crate::model::storage::Storage;
use crate::testing::{
    consolidation_input, instance_type, managed_node, node_pool, on_demand, spot, PodBuilder,
};

/// 2024-06-24T12:00:00Z, a Monday.
const NOW: i64 = 1_719_230_400;
const ZONE: &str = "test-zone-1";

fn od(name: &str, cpu: &str, price: f64) -> InstanceType {
    let cpus: f64 = cpu.parse().unwrap();
    instance_type(
        name,
        cpu,
        &format!("{}Gi", 2.0 * cpus),
        "110",
        on_demand(&[ZONE], price),
    )
}

/// small (2 cpu, $0.10), medium (4 cpu, $0.20), large (8 cpu, $0.40), on-demand.
fn types() -> Vec<InstanceType> {
    vec![
        od("small", "2", 0.10),
        od("medium", "4", 0.20),
        od("large", "8", 0.40),
    ]
}

fn it(name: &str) -> InstanceType {
    types().into_iter().find(|t| t.name == name).unwrap()
}

fn pod(name: &str, cpu: &str) -> Pod {
    PodBuilder::new(name).cpu(cpu).label("app", name).build()
}

fn node(name: &str, size: &str, pods: Vec<Pod>) -> NodeInput {
    managed_node(name, "default", &it(size), ZONE, ON_DEMAND, NOW, pods)
}

fn pool() -> NodePool {
    node_pool("default")
}

fn budget(nodes: &str) -> Budget {
    Budget {
        nodes: nodes.into(),
        ..Budget::default()
    }
}

fn input(nodes: Vec<NodeInput>) -> ConsolidationInput {
    consolidation_input(NOW, vec![(pool(), types())], nodes)
}

fn with_pool(p: NodePool, nodes: Vec<NodeInput>) -> ConsolidationInput {
    consolidation_input(NOW, vec![(p, types())], nodes)
}

fn find<'r>(r: &'r ConsolidationReport, name: &str) -> &'r NodeReport {
    r.nodes
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("{name} not in {:#?}", r.nodes))
}

fn reason<'r>(r: &'r ConsolidationReport, name: &str) -> &'r Reason {
    find(r, name)
        .reason
        .as_ref()
        .unwrap_or_else(|| panic!("{name} has no reason: {:#?}", find(r, name)))
}

/// Asserts `name`'s reason passes `ok`, showing it when not.
fn assert_reason(r: &ConsolidationReport, name: &str, ok: impl Fn(&Reason) -> bool) {
    let got = reason(r, name);
    assert!(ok(got), "{name}: {got:?}");
}

/// A node whose pods fill it: nothing to consolidate, whatever else happens.
fn full(name: &str) -> NodeInput {
    node(name, "small", vec![pod(&format!("{name}-fill"), "1800m")])
}

// ------------------------------------------------------------------------- emptiness

/// emptiness_test.go "can delete empty nodes".
#[test]
fn an_empty_node_is_deleted() {
    let r = evaluate(input(vec![node("empty", "large", vec![]), full("busy")]));
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    let a = &r.actions[0];
    assert_eq!(
        (a.pass, a.method, a.decision),
        (1, Method::Emptiness, Decision::Delete)
    );
    assert_eq!(a.nodes, ["empty"]);
    assert_eq!(a.savings_per_hour, 0.40);
    let e = find(&r, "empty");
    assert_eq!(
        (e.decision, e.method, e.pass),
        (NodeDecision::Delete, Some(Method::Emptiness), Some(1))
    );
    assert_eq!(r.savings_per_hour, 0.40);
    assert_eq!(r.karpenter_version, "v1.14.1");
    assert_eq!(r.now, "2024-06-24T12:00:00Z");
}

/// consolidation_test.go "should fire an event for ConsolidationDisabled when the NodePool has
/// consolidation set to WhenEmpty": an under-used node stays, the empty one goes.
#[test]
fn a_when_empty_pool_leaves_an_under_used_node() {
    let mut p = pool();
    p.disruption.consolidation_policy = "WhenEmpty".into();
    let r = with_pool(
        p,
        vec![
            node("used", "large", vec![pod("web", "1")]),
            node("empty", "large", vec![]),
        ],
    );
    let r = evaluate(r);
    assert_eq!(find(&r, "empty").decision, NodeDecision::Delete);
    assert_eq!(
        reason(&r, "used"),
        &Reason::WhenEmptyNotEmpty {
            pool: "default".into(),
            pods: 1
        }
    );
    assert_eq!(
        reason(&r, "used").to_string(),
        "NodePool default is WhenEmpty and the node has 1 pod"
    );
}

// ------------------------------------------------------------------------- consolidateAfter

/// consolidation_test.go "should wait for the node TTL for non-empty nodes before
/// consolidating", emptiness_test.go "should wait for the node TTL for empty nodes before
/// consolidating"; nodeclaim/disruption consolidation: from lastPodEventTime, else Initialized.
#[test]
fn consolidate_after_counts_from_the_last_pod_event_else_initialization() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("1h".into());
    let mut recent = node("recent", "large", vec![pod("web", "1")]);
    recent.claim.as_mut().unwrap().last_pod_event = Some(NOW - 600);
    let mut fresh = node("fresh-empty", "large", vec![]);
    let claim = fresh.claim.as_mut().unwrap();
    claim.initialized_at = Some(NOW - 3000);
    claim.last_pod_event = None;
    let r = evaluate(with_pool(p, vec![recent, fresh, full("busy")]));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert_eq!(
        reason(&r, "recent"),
        &Reason::ConsolidateAfter {
            after: 3600,
            left: 3000,
            since: WindowStart::LastPodEvent(NOW - 600)
        }
    );
    assert!(
        reason(&r, "recent").to_string().starts_with(
            "consolidateAfter 1h not reached (50m left), counted from the last pod event at "
        ),
        "{}",
        reason(&r, "recent")
    );
    assert_eq!(
        reason(&r, "fresh-empty"),
        &Reason::ConsolidateAfter {
            after: 3600,
            left: 600,
            since: WindowStart::Initialized(NOW - 3000)
        }
    );
}

/// consolidation_test.go "should fire an event for ConsolidationDisabled when the NodePool has
/// consolidateAfter set to 'Never'".
#[test]
fn consolidate_after_never_disables_emptiness_and_consolidation() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("Never".into());
    let r = evaluate(with_pool(
        p,
        vec![
            node("empty", "large", vec![]),
            node("used", "large", vec![pod("a", "1")]),
        ],
    ));
    assert!(r.actions.is_empty());
    for n in ["empty", "used"] {
        assert_eq!(
            reason(&r, n),
            &Reason::ConsolidationDisabled {
                pool: "default".into()
            }
        );
    }
}

// ------------------------------------------------------------------------- candidate filter

/// consolidation_test.go "can delete nodes, considers karpenter.sh/do-not-disrupt set to true on
/// nodes" / "… on pods"; emptiness_test.go "should delete nodes with the
/// karpenter.sh/do-not-disrupt annotation set to false".
#[test]
fn do_not_disrupt_on_the_node_or_a_pod_blocks() {
    let mut annotated = node("annotated", "large", vec![]);
    annotated
        .node
        .annotations
        .insert("karpenter.sh/do-not-disrupt".into(), "true".into());
    let mut falsy = node("falsy", "large", vec![]);
    falsy
        .node
        .annotations
        .insert("karpenter.sh/do-not-disrupt".into(), "false".into());
    let mut guarded = pod("guarded", "1");
    guarded.do_not_disrupt = Some("true".into());
    let r = evaluate(input(vec![
        annotated,
        falsy,
        node("with-pod", "large", vec![guarded]),
        full("busy"),
    ]));
    assert_eq!(
        reason(&r, "annotated"),
        &Reason::NodeDoNotDisrupt {
            value: "true".into()
        }
    );
    assert_eq!(find(&r, "falsy").decision, NodeDecision::Delete);
    assert_eq!(
        reason(&r, "with-pod"),
        &Reason::PodDoNotDisrupt {
            annotation: crate::model::labels::DO_NOT_DISRUPT,
            pod: "default/guarded".into(),
            value: "true".into()
        }
    );
}

/// A pod with `karpenter.sh/do-not-disrupt: value`, started at `started`.
fn guarded_pod(name: &str, cpu: &str, value: &str, started: &str) -> Pod {
    let mut p = pod(name, cpu);
    p.do_not_disrupt = Some(value.into());
    p.start_time = Some(started.into());
    p
}

/// consolidation_test.go "does not consolidate nodes with pods that have a duration-based
/// do-not-disrupt annotation that is still active" / "can consolidate nodes after
/// duration-based do-not-disrupt annotation expires".
#[test]
fn a_do_not_disrupt_duration_counts_from_the_pods_start() {
    let young = guarded_pod("young", "1", "1h", "2024-06-24T11:30:00Z");
    let old = guarded_pod("old", "1", "1h", "2024-06-24T10:30:00Z");
    let r = evaluate(input(vec![
        node("a", "large", vec![young]),
        node("b", "large", vec![old]),
    ]));
    assert_eq!(
        reason(&r, "a"),
        &Reason::PodDoNotDisrupt {
            annotation: crate::model::labels::DO_NOT_DISRUPT,
            pod: "default/young".into(),
            value: "1h".into()
        }
    );
    assert_ne!(find(&r, "b").decision, NodeDecision::None);
}

fn pdb(name: &str, app: &str, allowed: i32) -> PdbInput {
    PdbInput {
        namespace: "default".into(),
        name: name.into(),
        selector: Some(LabelSelector::eq(&[("app", app)])),
        min_available: None,
        max_unavailable: None,
        always_allow_unhealthy: false,
        disruptions_allowed: Some(allowed),
    }
}

/// consolidation_test.go "can delete nodes, considers PDB"; state: "eviction does not support
/// multiple PDBs" (`ValidatePodsDisruptable`).
#[test]
fn a_pdb_at_zero_or_two_pdbs_on_a_pod_block_and_are_named() {
    let mut i = input(vec![
        node("pdb", "large", vec![pod("web", "1")]),
        node("two", "large", vec![pod("db", "1")]),
        node("ok", "large", vec![pod("api", "1")]),
    ]);
    i.pdbs = vec![
        pdb("web", "web", 0),
        pdb("db-a", "db", 1),
        pdb("db-b", "db", 1),
        pdb("api", "api", 1),
    ];
    let r = evaluate(i);
    assert_eq!(
        reason(&r, "pdb"),
        &Reason::Pdb {
            pod: "default/web".into(),
            pdb: "default/web".into(),
            allowed: 0
        }
    );
    assert_eq!(
        reason(&r, "two"),
        &Reason::MultiplePdbs {
            pod: "default/db".into(),
            pdbs: vec!["default/db-a".into(), "default/db-b".into()]
        }
    );
    assert_ne!(find(&r, "ok").decision, NodeDecision::None);
}

/// v0.37 (`pdblimits.go`): two PDBs are no obstacle before v1, only one at zero is.
#[test]
fn two_pdbs_do_not_block_before_v1() {
    let mut p = pool();
    p.generation = Some(ApiGeneration::V1Beta1);
    p.disruption.consolidation_policy = "WhenUnderutilized".into();
    let mut i = with_pool(p, vec![node("two", "large", vec![pod("db", "1")])]);
    i.pdbs = vec![pdb("db-a", "db", 1), pdb("db-b", "db", 1)];
    let r = evaluate(i);
    assert_eq!(r.karpenter_version, "v0.37.7");
    assert_eq!(find(&r, "two").decision, NodeDecision::Replace);
}

/// A node that is not initialized is no candidate (state: `ValidateNodeDisruptable`).
#[test]
fn an_uninitialized_node_is_not_a_candidate() {
    let mut fresh = node("fresh", "large", vec![]);
    fresh.node.initialized = false;
    fresh.node.labels.remove("karpenter.sh/initialized");
    let r = evaluate(input(vec![fresh]));
    assert!(r.actions.is_empty());
    assert_eq!(reason(&r, "fresh"), &Reason::NotInitialized);
}

/// consolidation_test.go "can delete nodes, when non-Karpenter capacity can fit pods": an
/// unmanaged node takes the pods and is not in the report.
#[test]
fn unmanaged_nodes_are_capacity_but_not_reported() {
    let mut unmanaged = managed_node(
        "kubelet",
        "none",
        &it("large"),
        ZONE,
        ON_DEMAND,
        NOW,
        vec![],
    );
    unmanaged.claim = None;
    unmanaged.node.labels.remove(crate::model::labels::NODEPOOL);
    let r = evaluate(input(vec![
        node("a", "large", vec![pod("web", "1")]),
        unmanaged,
    ]));
    assert_eq!(r.nodes.len(), 1);
    let a = &r.actions[0];
    assert_eq!((a.method, a.decision), (Method::Single, Decision::Delete));
    assert_eq!(a.pods, ["default/web"]);
}

// ------------------------------------------------------------------------- budgets

fn empties(n: usize) -> Vec<NodeInput> {
    (0..n)
        .map(|i| node(&format!("empty-{i}"), "large", vec![]))
        .collect()
}

/// emptiness_test.go "should allow no empty nodes to be disrupted".
#[test]
fn a_budget_of_zero_blocks_and_says_so() {
    let mut p = pool();
    p.disruption.budgets = vec![budget("0")];
    let r = evaluate(with_pool(p, empties(3)));
    assert!(r.actions.is_empty());
    let want = Reason::Budget {
        pool: "default".into(),
        reason: Some(DisruptionReason::Empty),
        nodes: "0".into(),
        window: None,
        total: 0,
        counted: 3,
        disrupting: 0,
    };
    assert_eq!(reason(&r, "empty-0"), &want);
    assert_eq!(
        want.to_string(),
        "budget Empty of NodePool default: 0 of 0 now (0 of 3 nodes, 0 already disrupting)"
    );
}

/// Budgets bind per reason and only inside their windows (core v1.14.1 `nodepool.go
/// GetAllowedDisruptionsByReason`: no active budget for a reason = unlimited). Threads:
/// core#1718 (nodes deleted as Empty at 07:13 inside a "0 for Drifted, Underutilized from
/// 02:30 for 12h" window: "there is no budget that prevents disruption due to emptiness"),
/// aws#7026 (Underutilized consolidation in the day, when only the Empty budget's window is
/// open: "there is no budget for Underutilized … equivalent to 100%"), core#1939 (the
/// schedules seemed ignored). The reason names the window that binds.
#[test]
fn budgets_bind_per_reason_inside_their_windows_and_name_the_window() {
    let window = |nodes: &str, reasons: &[&str], schedule: &str, duration: &str| Budget {
        nodes: nodes.into(),
        schedule: Some(schedule.into()),
        duration: Some(duration.into()),
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
    };
    // core#1718 at 12:00, inside the window.
    let mut p = pool();
    p.disruption.budgets = vec![window(
        "0",
        &["Drifted", "Underutilized"],
        "30 2 * * *",
        "12h",
    )];
    let r = evaluate(with_pool(
        p,
        vec![
            node("empty", "large", vec![]),
            node("a", "large", vec![pod("w1", "1")]),
            node("b", "large", vec![pod("w2", "1")]),
        ],
    ));
    assert_eq!(find(&r, "empty").method, Some(Method::Emptiness));
    let blocked = reason(&r, "a");
    assert!(
        matches!(blocked, Reason::Budget { reason: Some(DisruptionReason::Underutilized), window: Some(w), .. } if &**w == "\"30 2 * * *\" for 12h"),
        "{blocked:?}"
    );
    assert_eq!(
        blocked.to_string(),
        "budget Underutilized of NodePool default: 0 of 0 now, in its window \"30 2 * * *\" for 12h (0 of 3 nodes, 1 already disrupting)"
    );
    // aws#7026 at 12:00: only the Empty budget's window (06:00 for 20h) is open.
    let mut p = pool();
    p.disruption.budgets = vec![
        window("20%", &["Empty"], "0 6 * * *", "20h"),
        window("20%", &["Underutilized", "Empty"], "0 2 * * *", "4h"),
    ];
    let r = evaluate(with_pool(
        p,
        vec![
            node("a", "large", vec![pod("w1", "1")]),
            node("b", "large", vec![pod("w2", "1")]),
            node("c", "large", vec![pod("w3", "1")]),
        ],
    ));
    let disrupted: usize = r.actions.iter().map(|a| a.nodes.len()).sum();
    // 20% of 3 would allow one; unlimited, multi-node takes all three.
    assert_eq!(
        disrupted, 3,
        "Underutilized is unlimited now: {:#?}",
        r.actions
    );
}

/// emptiness_test.go "should only allow 3 empty nodes to be disrupted": 30% of 10, rounded up;
/// the nodes deleted in pass 1 still count in pass 2.
#[test]
fn a_percentage_budget_rounds_up_and_in_flight_deletions_count() {
    let mut p = pool();
    p.disruption.budgets = vec![budget("25%")];
    let r = evaluate(with_pool(p, empties(10)));
    assert_eq!(r.actions.len(), 1);
    assert_eq!(r.actions[0].nodes.len(), 3, "ceil(25% of 10)");
    let blocked = r
        .nodes
        .iter()
        .find(|n| n.decision == NodeDecision::None)
        .unwrap();
    assert_eq!(
        blocked.reason,
        Some(Reason::Budget {
            pool: "default".into(),
            reason: Some(DisruptionReason::Empty),
            nodes: "25%".into(),
            window: None,
            total: 3,
            counted: 10,
            disrupting: 3,
        })
    );
}

/// nodepool budgets with a schedule (`Budget.IsActive`): a freeze from 12:00 for 1 h blocks
/// at noon and not at 13:30; budgets for other reasons do not apply.
#[test]
fn scheduled_budgets_apply_only_in_their_window_and_to_their_reasons() {
    let mut p = pool();
    p.disruption.budgets = vec![
        Budget {
            nodes: "0".into(),
            schedule: Some("0 12 * * *".into()),
            duration: Some("1h".into()),
            reasons: vec!["Empty".into()],
        },
        Budget {
            nodes: "0".into(),
            reasons: vec!["Drifted".into()],
            ..Budget::default()
        },
    ];
    let at_noon = evaluate(with_pool(p.clone(), empties(2)));
    assert!(at_noon.actions.is_empty());
    let mut later = with_pool(p, empties(2));
    later.now = NOW + 5400;
    let later = evaluate(later);
    assert_eq!(later.actions[0].nodes.len(), 2);
}

/// core#1719, aws#8247 (threads7): a pool whose only `Underutilized` budget is scheduled is
/// consolidated outside its window without limit (core v1.14.1 `pkg/apis/v1/nodepool.go`
/// `GetAllowedDisruptions`: an inactive budget allows `MaxInt32`), and the action says so; an
/// active budget, a pool without budgets for the reason, or another reason's budget says
/// nothing.
#[test]
fn an_action_outside_every_budget_window_for_its_reason_says_none_limits_it() {
    let weekend = Budget {
        nodes: "20%".into(),
        schedule: Some("30 18 * * 6,0".into()),
        duration: Some("7h".into()),
        reasons: vec!["Underutilized".into()],
    };
    let mut p = pool();
    p.disruption.budgets = vec![weekend.clone()];
    let nodes = || {
        vec![
            node("empty", "large", vec![]),
            node("a", "large", vec![pod("w1", "1")]),
            node("b", "large", vec![pod("w2", "1")]),
        ]
    };
    // Monday noon: the weekend window is closed.
    let r = evaluate(with_pool(p.clone(), nodes()));
    let acted = r
        .nodes
        .iter()
        .find(|n| matches!(n.method, Some(Method::Single | Method::Multi)))
        .unwrap_or_else(|| panic!("no consolidation: {:#?}", r.nodes));
    assert_eq!(
        acted.unlimited_budget,
        Some(UnlimitedBudget {
            reason: Some("Underutilized".into()),
            closed_windows: vec!["\"30 18 * * 6,0\" for 7h".into()],
        })
    );
    // The empty node's reason (Empty) has no budget at all: nothing to say.
    assert_eq!(find(&r, "empty").unlimited_budget, None);
    // Saturday 20:00, inside the window: the budget binds, no note.
    let mut inside = with_pool(p.clone(), nodes());
    inside.now = NOW + 5 * 86_400 + 8 * 3600;
    let inside = evaluate(inside);
    assert!(inside.nodes.iter().all(|n| n.unlimited_budget.is_none()));
    // An unscheduled budget for the reason as well: it is always active, no note.
    p.disruption.budgets.push(budget("100%"));
    let r = evaluate(with_pool(p, nodes()));
    assert!(r.nodes.iter().all(|n| n.unlimited_budget.is_none()));
}

// ------------------------------------------------------------------------- multi-node

/// consolidation_test.go "can merge 3 nodes into 1" (the delete case) and budgets
/// "should only allow 3 nodes to be deleted in multi node consolidation delete": the longest
/// prefix that can go at once is deleted in one action.
#[test]
fn multi_node_deletes_under_used_nodes_at_once_when_their_pods_fit() {
    let r = evaluate(input(vec![
        node("a", "large", vec![pod("a1", "900m")]),
        node("b", "large", vec![pod("b1", "900m")]),
        node(
            "c",
            "large",
            (0..5).map(|i| pod(&format!("c{i}"), "1")).collect(),
        ),
    ]));
    let a = &r.actions[0];
    assert_eq!(
        (a.pass, a.method, a.decision),
        (1, Method::Multi, Decision::Delete)
    );
    assert_eq!(a.nodes, ["a", "b"]);
    assert_eq!(a.pods, ["default/a1", "default/b1"]);
    assert_eq!(a.savings_per_hour, 0.8);
    assert_eq!(find(&r, "b").method, Some(Method::Multi));
    // c received their pods in pass 1: nominated from then on.
    assert_eq!(
        reason(&r, "c"),
        &Reason::ReceivesPods {
            pass: 1,
            from: vec!["a".into(), "b".into()]
        }
    );
}

/// consolidation_test.go "won't merge 2 nodes into 1 of the same type": replacing two nodes by
/// one of a type being removed, at least as expensive, is no better than deleting one.
#[test]
fn multi_node_drops_replacement_types_priced_like_a_removed_node() {
    // Two large nodes, 5 cpu of pods each: together they need a large (8 cpu is too little
    // for 10), so nothing; each alone fits a medium? No (5 > 3.9): a large, same price.
    let r = evaluate(input(vec![
        node(
            "a",
            "large",
            (0..3).map(|i| pod(&format!("a{i}"), "1500m")).collect(),
        ),
        node(
            "b",
            "large",
            (0..2).map(|i| pod(&format!("b{i}"), "1500m")).collect(),
        ),
    ]));
    // Together 7.5 cpu: only a large holds them, the type being removed at its own price.
    assert!(
        r.actions.iter().all(|a| a.method != Method::Multi),
        "{:#?}",
        r.actions
    );
}

// ------------------------------------------------------------------------- single-node

/// consolidation_test.go "can replace node" (on-demand).
#[test]
fn a_node_is_replaced_by_a_cheaper_type() {
    let r = evaluate(input(vec![node("big", "large", vec![pod("web", "1")])]));
    assert_eq!(r.actions.len(), 1);
    let a = &r.actions[0];
    assert_eq!((a.method, a.decision), (Method::Single, Decision::Replace));
    let rep = a.replacement.as_ref().unwrap();
    assert_eq!(rep.instance_type, "small");
    assert_eq!(rep.instance_types, ["small", "medium"]);
    assert_eq!(
        (rep.capacity_type.as_str(), rep.price_per_hour),
        (ON_DEMAND, 0.10)
    );
    assert_eq!(rep.zones, [ZONE]);
    assert!((a.savings_per_hour - 0.30).abs() < 1e-9);
    let n = find(&r, "big");
    assert_eq!(n.decision, NodeDecision::Replace);
    assert_eq!(n.replacement_type.as_deref(), Some("small"));
}

/// consolidation_test.go "won't replace on-demand node if on-demand replacement is more
/// expensive".
#[test]
fn no_replacement_when_no_cheaper_type_holds_the_pods() {
    let r = evaluate(input(vec![node(
        "small",
        "small",
        vec![pod("web", "1500m")],
    )]));
    assert!(r.actions.is_empty());
    assert_eq!(
        reason(&r, "small"),
        &Reason::NotCheaper {
            pods: vec![("default/web".into(), "cpu=1500m,pods=1".into())],
            moving: 1,
            price: 0.10,
            cheapest: Some(("small".into(), 0.10)),
            held_back: Vec::new(),
        }
    );
}

/// The "not cheaper" text counts every pod that fits on no other node, though it names only
/// the first (a public tensor-fusion configuration's nodes, four pods each without room
/// elsewhere, read "and 2 more", session 32). Same rule as consolidation_test.go "won't
/// replace on-demand node if on-demand replacement is more expensive"; the count is ours.
#[test]
fn the_not_cheaper_text_counts_every_pod_that_fits_nowhere() {
    let pods = (0..5).map(|i| pod(&format!("w{i}"), "300m")).collect();
    let r = evaluate(input(vec![node("small", "small", pods)]));
    assert!(r.actions.is_empty());
    let Reason::NotCheaper { pods, moving, .. } = reason(&r, "small") else {
        panic!("{:?}", reason(&r, "small"));
    };
    assert_eq!((pods.len(), *moving), (3, 5));
    let text = reason(&r, "small").to_string();
    assert!(text.contains(" and 4 more fit on no other node"), "{text}");
}

/// consolidation_test.go "won't replace node if any spot replacement is more expensive": the
/// price compared is the replacement's worst spot offering, not its cheapest.
#[test]
fn the_worst_launch_price_is_compared() {
    let current = instance_type(
        "current-on-demand",
        "8",
        "16Gi",
        "110",
        on_demand(&[ZONE], 0.5),
    );
    let mut offerings = spot(&["test-zone-1a"], 1.0);
    offerings.extend(spot(&["test-zone-1b"], 0.2));
    offerings.extend(spot(&["test-zone-1c"], 0.4));
    let replacement = instance_type("potential-spot-replacement", "8", "16Gi", "110", offerings);
    let n = managed_node(
        "n",
        "default",
        &current,
        ZONE,
        ON_DEMAND,
        NOW,
        vec![pod("w", "1")],
    );
    let r = evaluate(consolidation_input(
        NOW,
        vec![(pool(), vec![current, replacement])],
        vec![n],
    ));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert!(matches!(reason(&r, "n"), Reason::NotCheaper { .. }));
}

/// consolidation.go `computeConsolidation`: "Can't remove without creating 2 candidates" —
/// consolidation never turns one node into two, however cheap.
#[test]
fn consolidation_never_replaces_one_node_with_two() {
    let apart = |name: &str| {
        PodBuilder::new(name)
            .cpu("1")
            .label("app", "apart")
            .anti_affinity(crate::model::labels::HOSTNAME, &[("app", "apart")])
            .build()
    };
    let r = evaluate(input(vec![node(
        "big",
        "large",
        vec![apart("a"), apart("b")],
    )]));
    assert!(r.actions.is_empty());
    assert_eq!(
        reason(&r, "big"),
        &Reason::NeedsNodeClaims {
            count: 2,
            types: vec!["small".into(), "small".into()]
        }
    );
    assert_eq!(
        reason(&r, "big").to_string(),
        "replacing needs 2 NodeClaims (small, small)"
    );
}

// ------------------------------------------------------------------------- spot to spot

/// `count` spot types cheaper than the 8-cpu spot node ($0.40), each holding 1 cpu.
fn spot_types(count: usize) -> Vec<InstanceType> {
    let mut t: Vec<InstanceType> = (0..count)
        .map(|i| {
            instance_type(
                &format!("spot-{i:02}"),
                "2",
                "4Gi",
                "110",
                spot(&[ZONE], 0.10 + 0.01 * i as f64),
            )
        })
        .collect();
    t.push(instance_type(
        "big-spot",
        "8",
        "16Gi",
        "110",
        spot(&[ZONE], 0.40),
    ));
    t
}

fn spot_cluster(count: usize, gate: bool) -> ConsolidationReport {
    let types = spot_types(count);
    let big = types.last().unwrap().clone();
    let n = managed_node("s", "default", &big, ZONE, SPOT, NOW, vec![pod("w", "1")]);
    let mut i = consolidation_input(NOW, vec![(pool(), types)], vec![n]);
    i.feature_gates.spot_to_spot_consolidation = gate;
    evaluate(i)
}

/// consolidation_test.go "cannot replace spot with spot if the spotToSpotConsolidation is
/// disabled".
#[test]
fn spot_to_spot_needs_the_feature_gate() {
    let r = spot_cluster(20, false);
    assert!(r.actions.is_empty());
    assert_eq!(reason(&r, "s"), &Reason::SpotToSpotDisabled);
}

/// consolidation_test.go "cannot replace spot with spot if less than minimum InstanceTypes
/// flexibility" and "can replace node if the candidate is spot node": 15 cheaper types, and
/// only the 15 cheapest go to launch.
#[test]
fn spot_to_spot_needs_fifteen_cheaper_types_and_launches_the_fifteen_cheapest() {
    let few = spot_cluster(4, true);
    assert_eq!(
        reason(&few, "s"),
        &Reason::SpotToSpotTooFew {
            found: 4,
            needed: 15
        }
    );
    let many = spot_cluster(20, true);
    let rep = many.actions[0].replacement.as_ref().unwrap();
    assert_eq!(rep.instance_types.len(), 15);
    assert_eq!(rep.instance_type, "spot-00");
    assert_eq!(rep.capacity_type, SPOT);
}

// ------------------------------------------------------------------------- expiration

/// nodeclaim/expiration suite "should delete NodeClaims if the nodeClaim is expired but the
/// node isn't": v1 expiration is forceful — no budget, no do-not-disrupt or PDB check. But
/// the provisioner moves only the pods it can evict now (core#2033, v1.4.0:
/// `CurrentlyReschedulablePods`): a do-not-disrupt pod stays, and the drain waits for it —
/// core#1789, a node alive 77 days past `expireAfter: 720h` ("Failed to drain node, 8 pods are
/// waiting to be evicted"). We had sized a replacement for it.
#[test]
fn v1_expiration_is_forceful() {
    let mut guarded = pod("guarded", "1");
    guarded.do_not_disrupt = Some("true".into());
    let mut old = node("old", "large", vec![guarded, pod("w", "1")]);
    old.claim.as_mut().unwrap().expire_after = Some(3600);
    let mut p = pool();
    p.disruption.budgets = vec![budget("0")];
    let mut i = with_pool(p, vec![old, node("other", "large", vec![])]);
    i.pdbs = vec![pdb("g", "guarded", 0)];
    let r = evaluate(i);
    let a = &r.actions[0];
    assert_eq!(
        (a.pass, a.method, a.decision),
        (1, Method::Expiration, Decision::Delete)
    );
    assert_eq!(a.nodes, ["old"]);
    assert_eq!(a.pods, ["default/w"]);
    assert_eq!(find(&r, "old").method, Some(Method::Expiration));
    assert_eq!(find(&r, "old").drain_waits_for, ["default/guarded"]);
}

/// v0.37 expiration_test.go "should allow no empty nodes to be disrupted" and "should ignore
/// nodes that have pods with the karpenter.sh/do-not-disrupt annotation": graceful and
/// budgeted before v1.
#[test]
fn v1beta1_expiration_is_graceful_and_budgeted() {
    let mut p = pool();
    p.generation = Some(ApiGeneration::V1Beta1);
    p.disruption.consolidation_policy = "WhenEmpty".into();
    p.disruption.consolidate_after = Some("Never".into());
    p.expire_after = Some("1h".into());
    let mut guarded = pod("guarded", "1");
    guarded.do_not_disrupt = Some("true".into());
    let blocked = with_pool(
        {
            let mut q = p.clone();
            q.disruption.budgets = vec![budget("0")];
            q
        },
        vec![node("old", "large", vec![pod("w", "1")])],
    );
    let r = evaluate(blocked);
    assert_eq!(
        reason(&r, "old"),
        &Reason::Budget {
            pool: "default".into(),
            reason: None,
            nodes: "0".into(),
            window: None,
            total: 0,
            counted: 1,
            disrupting: 0,
        }
    );
    let r = evaluate(with_pool(
        p.clone(),
        vec![node("guarded", "large", vec![guarded])],
    ));
    assert!(matches!(
        reason(&r, "guarded"),
        Reason::PodDoNotDisrupt { .. }
    ));
    // Allowed: replaced first (graceful), by what its pods need.
    let r = evaluate(with_pool(
        p,
        vec![node("old", "large", vec![pod("w", "1")])],
    ));
    let a = &r.actions[0];
    assert_eq!(
        (a.method, a.decision),
        (Method::Expiration, Decision::Replace)
    );
    assert_eq!(a.replacement.as_ref().unwrap().instance_type, "small");
}

// ------------------------------------------------------------------------- ordering

/// consolidation_test.go "should consolidate the node with best savings ratio first": v1
/// sorts by price ÷ (1 + eviction costs); the budget lets one go.
#[test]
fn v1_candidates_go_by_savings_ratio() {
    let mut p = pool();
    p.disruption.budgets = vec![budget("1")];
    let r = evaluate(with_pool(
        p,
        vec![
            node(
                "many-pods",
                "large",
                (0..4).map(|i| pod(&format!("m{i}"), "100m")).collect(),
            ),
            node("one-pod", "large", vec![pod("o", "100m")]),
        ],
    ));
    assert_eq!(r.actions.len(), 1);
    assert_eq!(r.actions[0].nodes, ["one-pod"]);
    assert_eq!(r.actions[0].decision, Decision::Delete);
    assert!(matches!(
        reason(&r, "many-pods"),
        Reason::ReceivesPods { pass: 1, .. }
    ));
}

/// v0.37 consolidation_test.go "should consider node lifetime remaining when calculating
/// disruption cost": the node closer to expiry is cheaper to disrupt and goes first.
#[test]
fn before_v1_candidates_go_by_disruption_cost_with_lifetime() {
    let mut p = pool();
    p.generation = Some(ApiGeneration::V1Beta1);
    p.disruption.consolidation_policy = "WhenUnderutilized".into();
    p.expire_after = Some("720h".into());
    p.disruption.budgets = vec![budget("1")];
    let young = node("young", "large", vec![pod("y", "100m")]);
    let mut old = node("old", "large", vec![pod("o", "100m")]);
    old.claim.as_mut().unwrap().created = NOW - 600 * 3600;
    let r = evaluate(with_pool(p, vec![young, old]));
    assert_eq!(r.actions[0].nodes, ["old"]);
}

// ------------------------------------------------------------------------- passes

/// Successive passes: the action of pass 1 is in flight in pass 2 (its node counts against the
/// budget), and pass 3 finds the budget used up.
#[test]
fn later_passes_see_earlier_actions_in_flight() {
    let mut p = pool();
    p.disruption.budgets = vec![budget("2")];
    // Neither big node's pod fits beside the other's; each alone fits a cheaper "mid".
    let types = vec![od("mid", "6", 0.25), od("large", "8", 0.40)];
    let large = types[1].clone();
    let big = |name: &str, pods| managed_node(name, "default", &large, ZONE, ON_DEMAND, NOW, pods);
    let r = evaluate(consolidation_input(
        NOW,
        vec![(p, types)],
        vec![
            big("empty", vec![]),
            big("big-1", vec![pod("a", "4500m")]),
            big("big-2", vec![pod("b", "4500m")]),
        ],
    ));
    let summary: Vec<(u32, Method, Vec<String>)> = r
        .actions
        .iter()
        .map(|a| (a.pass, a.method, a.nodes.clone()))
        .collect();
    assert_eq!(
        summary[0],
        (1, Method::Emptiness, vec!["empty".to_string()])
    );
    assert_eq!(summary[1], (2, Method::Single, vec!["big-1".to_string()]));
    assert_eq!(
        r.actions[1].replacement.as_ref().unwrap().instance_type,
        "mid"
    );
    assert_eq!(r.actions.len(), 2, "{summary:?}");
    let left = r
        .nodes
        .iter()
        .find(|n| n.decision == NodeDecision::None)
        .unwrap();
    assert!(
        matches!(left.reason, Some(Reason::Budget { disrupting: 2, .. })),
        "{left:#?}"
    );
}

/// consolidation_test.go "should not consolidate pods onto a destination node that is under
/// its consolidateAfter window".
#[test]
fn candidate_pods_do_not_go_to_nodes_under_consolidate_after() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("1m".into());
    let mut dest = node("dest", "small", vec![pod("d", "100m")]);
    dest.claim.as_mut().unwrap().last_pod_event = Some(NOW - 10);
    let src = node("src", "small", vec![pod("s", "100m")]);
    let r = evaluate(with_pool(p.clone(), vec![dest.clone(), src.clone()]));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert!(matches!(reason(&r, "src"), Reason::NotCheaper { .. }));
    // Once the window has passed, src's pod moves to dest.
    dest.claim.as_mut().unwrap().last_pod_event = Some(NOW - 600);
    let r = evaluate(with_pool(p, vec![dest, src]));
    assert_eq!(r.actions[0].decision, Decision::Delete);
}

/// core#3225 (v1.14 `consolidateAfter` applies to destinations too; "should not consolidate
/// pods onto a destination node that is under its consolidateAfter window"): a node kept
/// because the node its pods would move to is within its own window says so, with the time left.
#[test]
fn a_kept_node_names_the_destination_its_consolidate_after_holds_back() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("1m".into());
    let mut dest = node("dest", "small", vec![pod("d", "100m")]);
    dest.claim.as_mut().unwrap().last_pod_event = Some(NOW - 10);
    let src = node("src", "small", vec![pod("s", "100m")]);
    let r = evaluate(with_pool(p, vec![dest, src]));
    let Reason::NotCheaper { held_back, .. } = reason(&r, "src") else {
        panic!("{:#?}", r.nodes);
    };
    assert_eq!(held_back, &[("dest".to_string(), 50)]);
    assert!(
        reason(&r, "src")
            .to_string()
            .ends_with("; dest has room for them but is itself within consolidateAfter for 50s"),
        "{}",
        reason(&r, "src")
    );
}

/// core#3225: a node replaced rather than deleted because the node that has room for its pods
/// is within its own `consolidateAfter` names that node and the time left.
#[test]
fn a_replaced_node_names_the_destination_its_consolidate_after_holds_back() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("1m".into());
    let mut dest = node("dest", "medium", vec![pod("d", "100m")]);
    dest.claim.as_mut().unwrap().last_pod_event = Some(NOW - 20);
    let src = node("src", "large", vec![pod("s", "500m")]);
    let r = evaluate(with_pool(p, vec![dest, src]));
    let s = find(&r, "src");
    assert_eq!(s.decision, NodeDecision::Replace, "{:#?}", r.nodes);
    assert_eq!(
        s.held_back_destinations,
        [HeldBackDestination {
            node: "dest".into(),
            consolidate_after_left_seconds: 40
        }]
    );
    assert!(find(&r, "dest").held_back_destinations.is_empty());
}

// ------------------------------------------------------------------------- drift

fn drifted(mut n: NodeInput, since: i64) -> NodeInput {
    n.claim.as_mut().unwrap().drifted = Some(Drifted {
        since,
        reason: "AMIDrift".into(),
    });
    n
}

/// drift_test.go "should drift empty nodes before non-empty nodes" and "should drift one
/// non-empty node at a time, starting with the earliest drift": one command per pass, empty
/// ones first, then by drift time; a drifted node's pods go to a replacement if need be.
#[test]
fn drift_goes_one_node_per_pass_empty_first_then_oldest() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("Never".into());
    let r = evaluate(with_pool(
        p,
        vec![
            drifted(node("late", "small", vec![pod("l", "1")]), NOW - 60),
            drifted(node("early", "small", vec![pod("e", "1")]), NOW - 600),
            drifted(node("empty", "small", vec![]), NOW - 30),
        ],
    ));
    let order: Vec<(u32, &str, Decision)> = r
        .actions
        .iter()
        .map(|a| (a.pass, a.nodes[0].as_str(), a.decision))
        .collect();
    assert_eq!(
        order,
        [
            (1, "empty", Decision::Delete),
            (2, "early", Decision::Replace),
            (3, "late", Decision::Replace),
        ]
    );
    assert!(r.actions.iter().all(|a| a.method == Method::Drift));
}

/// drift_test.go "should not create replacements for drifted nodes that have pods with the
/// karpenter.sh/do-not-disrupt annotation set to true when the NodePool's
/// TerminationGracePeriod is not nil": with a terminationGracePeriod drift goes ahead (class
/// eventual), and the pod it cannot evict is not simulated; without one the pod blocks.
#[test]
fn drift_with_a_termination_grace_period_ignores_pod_blocks() {
    let mut guarded = pod("guarded", "1");
    guarded.do_not_disrupt = Some("true".into());
    let mut with_tgp = drifted(node("tgp", "small", vec![guarded.clone()]), NOW - 60);
    with_tgp.claim.as_mut().unwrap().termination_grace_period = Some(300);
    guarded.name = "guarded-2".into();
    let without = drifted(node("no-tgp", "small", vec![guarded]), NOW - 60);
    let r = evaluate(input(vec![with_tgp, without]));
    let a = &r.actions[0];
    assert_eq!(
        (a.method, a.decision, a.nodes.as_slice()),
        (Method::Drift, Decision::Delete, &["tgp".to_string()][..])
    );
    assert!(a.replacement.is_none());
    // aws#7708 (AMIDrift replaced a node with do-not-disrupt pods; the maintainers' answer,
    // aws#7710: under a terminationGracePeriod the drain waits for them until it ends).
    assert_eq!(find(&r, "tgp").drain_waits_for, ["default/guarded"]);
    assert!(matches!(
        reason(&r, "no-tgp"),
        Reason::PodDoNotDisrupt { .. }
    ));
}

/// drift_test.go "should continue to the next drifted node if the first cannot reschedule all
/// pods": a pod that fits nowhere (no NodePool type holds it) blocks its node, named.
#[test]
fn a_drifted_node_whose_pod_fits_nowhere_is_left_with_the_pod_named() {
    let r = evaluate(input(vec![
        drifted(node("huge", "large", vec![pod("big", "9")]), NOW - 600),
        drifted(node("ok", "small", vec![pod("fine", "1")]), NOW - 60),
    ]));
    assert_eq!(r.actions[0].nodes, ["ok"]);
    match reason(&r, "huge") {
        Reason::PodFitsNowhere { pod, detail, .. } => {
            assert_eq!(pod, "default/big");
            assert!(detail.contains("NodePool default"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------------- v0.31, Balanced

fn v031_pool() -> NodePool {
    let mut p = pool();
    p.generation = Some(ApiGeneration::V1Alpha5);
    p.disruption.consolidation_policy = "WhenUnderutilized".into();
    p
}

/// v0.31 machine_consolidation_test.go "won't replace node if any spot replacement is more
/// expensive" and consolidation.go: v0.31 never replaces spot with spot, has no budgets, and
/// finishes each action before the next pass.
#[test]
fn v031_never_replaces_spot_with_spot_and_has_no_budgets() {
    let types = spot_types(20);
    let big = types.last().unwrap().clone();
    let n = managed_node("s", "default", &big, ZONE, SPOT, NOW, vec![pod("w", "1")]);
    let r = evaluate(consolidation_input(
        NOW,
        vec![(v031_pool(), types)],
        vec![n],
    ));
    assert_eq!(r.karpenter_version, "v0.31.4");
    assert_eq!(reason(&r, "s"), &Reason::SpotToSpotUnsupported);
    // Ten empty nodes go in one pass, with no budget to stop them.
    let r = evaluate(with_pool(v031_pool(), empties(10)));
    assert_eq!(r.actions.len(), 1);
    assert_eq!(r.actions[0].nodes.len(), 10);
}

/// balanced_test.go "should approve an oversized node consolidation", "should reject a
/// marginal move", "should reject a well-packed node with zero savings" (`ScoreMove` on the
/// RFC's example pool: $58.08/day, disruption 90).
#[test]
fn balanced_scores_savings_against_disruption() {
    let totals = engine::Totals {
        cost: 58.08,
        disruption: 90.0,
    };
    let score = engine::Engine::<sim::Reference>::score;
    let oversized = score(7.26, 4.0, totals);
    assert!((oversized - (7.26 / 58.08) / (4.0 / 90.0)).abs() < 1e-9);
    assert!(oversized >= 0.5);
    assert!(score(2.42, 9.0, totals) < 0.5);
    assert_eq!(score(0.0, 11.0, totals), 0.0);
}

/// Every `ScoreMove` It of core v1.14.1 balanced_test.go, the "should compute correct scores"
/// Entries of balanced_scoring_test.go and the scores its `EvaluateBalancedMove` Its expect: (savings, move disruption, pool cost, pool
/// disruption, k, approved). Approval is `score >= 1/k` (`ScoreResult.Approved`); the engine's k
/// is `BalancedK = 2`, the "threshold tuning" Its try 1 and 3.
#[test]
fn balanced_score_move_its() {
    let score = engine::Engine::<sim::Reference>::score;
    let rfc = (58.08, 90.0);
    // (It, savings, move disruption, (pool cost, pool disruption), k, approved)
    type Row = (&'static str, f64, f64, (f64, f64), f64, bool);
    let table: [Row; 22] = [
        ("oversized node", 7.26, 4.0, rfc, 2.0, true),
        ("spare capacity delete", 4.84, 5.0, rfc, 2.0, true),
        ("marginal move", 2.42, 9.0, rfc, 2.0, false),
        ("well-packed, zero savings", 0.0, 11.0, rfc, 2.0, false),
        ("uniform pool replace", 2.42, 9.0, (48.40, 90.0), 2.0, true),
        (
            "low-disruption node A",
            4.84,
            5.0,
            (58.08, 117.0),
            2.0,
            true,
        ),
        (
            "high-disruption node B",
            4.84,
            32.0,
            (58.08, 117.0),
            2.0,
            false,
        ),
        ("+Inf: zero move disruption", 4.84, 0.0, rfc, 2.0, true),
        ("zero savings and disruption", 0.0, 0.0, rfc, 2.0, false),
        ("zero pool cost", 4.84, 5.0, (0.0, 90.0), 2.0, false),
        ("k=2 marginal", 2.42, 9.0, rfc, 2.0, false),
        ("k=3 marginal", 2.42, 9.0, rfc, 3.0, true),
        ("k=1 marginal", 2.42, 9.0, rfc, 1.0, false),
        ("cross-pool on-demand", 4.84, 4.0, (48.40, 90.0), 2.0, true),
        (
            "high savings low disruption",
            20.0,
            5.0,
            (100.0, 100.0),
            2.0,
            true,
        ),
        ("equal fractions", 10.0, 10.0, (100.0, 100.0), 2.0, true),
        (
            "low savings high disruption",
            5.0,
            50.0,
            (100.0, 100.0),
            2.0,
            false,
        ),
        ("zero disruption cost", 10.0, 0.0, (100.0, 100.0), 2.0, true),
        ("zero savings", 0.0, 10.0, (100.0, 100.0), 2.0, false),
        ("negative savings", -5.0, 10.0, (100.0, 100.0), 2.0, false),
        // balanced_scoring_test.go "should approve a delete command for a single Balanced
        // NodePool" (one of ten $4.84 nodes with a pod each: 0.1 / 0.1) and the Balanced pool's
        // share in "should attribute savings proportionally in cross-NodePool scenarios" (half
        // of $9.68 against five such nodes).
        (
            "single Balanced pool delete",
            4.84,
            2.0,
            (48.40, 20.0),
            2.0,
            true,
        ),
        (
            "cross-pool Balanced share",
            4.84,
            2.0,
            (24.20, 10.0),
            2.0,
            true,
        ),
    ];
    for (it, savings, disruption, (cost, pool_disruption), k, approved) in table {
        let totals = engine::Totals {
            cost,
            disruption: pool_disruption,
        };
        let s = score(savings, disruption, totals);
        assert_eq!(s >= 1.0 / k, approved, "{it}: score {s}");
    }
    let t = |cost, disruption| engine::Totals { cost, disruption };
    assert!(score(4.84, 0.0, t(58.08, 90.0)).is_infinite());
    // "should produce the same score regardless of pool size" and "… identical scores for
    // proportionally equivalent moves" (on-demand $48.40 vs spot $14.50 pools).
    let (ten, hundred) = (
        score(7.26, 4.0, t(58.08, 90.0)),
        score(7.26, 4.0, t(580.8, 900.0)),
    );
    assert!((ten - hundred).abs() < 0.01 && (ten - 7.26 / 58.08 * 90.0 / 4.0).abs() < 1e-9);
    let (od, spot) = (
        score(4.84, 4.0, t(48.40, 90.0)),
        score(1.45, 4.0, t(14.50, 90.0)),
    );
    assert!((od - spot).abs() < 0.01);
    assert!((score(20.0, 5.0, t(100.0, 100.0)) - 4.0).abs() < 1e-9);
    assert!((score(5.0, 50.0, t(100.0, 100.0)) - 0.1).abs() < 1e-9);
}

/// balanced_test.go "should approve low-disruption nodes and reject high-disruption nodes", end
/// to end: in a Balanced pool a replacement saving little for many pods is refused, with the
/// score named.
#[test]
fn a_balanced_pool_refuses_a_move_that_saves_too_little_for_its_disruption() {
    let mut p = pool();
    p.disruption.consolidation_policy = "Balanced".into();
    let busy: Vec<Pod> = (0..12).map(|i| pod(&format!("b{i}"), "300m")).collect();
    let mut nodes = vec![node("busy", "medium", busy)];
    nodes.extend((0..6).map(|i| full(&format!("full-{i}"))));
    let r = evaluate(with_pool(p, nodes));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    match reason(&r, "busy") {
        Reason::BalancedScore { score, threshold } => assert!(score < threshold),
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------------- nodes deleting

/// A node whose NodeClaim is being deleted.
fn deleting(name: &str, size: &str, pods: Vec<Pod>) -> NodeInput {
    let mut n = node(name, size, pods);
    n.claim.as_mut().unwrap().deleting = true;
    n
}

/// `going` (large, deleting) holding `moving`, beside `other` (large) holding `pods`; nothing
/// is started.
fn beside_a_deleting_node(moving: Pod, other: &str, pods: Vec<Pod>) -> ConsolidationReport {
    let r = evaluate(input(vec![
        deleting("going", "large", vec![moving]),
        node(other, "large", pods),
    ]));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    r
}

/// helpers.go `SimulateScheduling`: pods of nodes already deleting are part of every
/// simulation; one that fits nowhere makes every consolidation fail, and is named.
#[test]
fn a_pod_of_a_deleting_node_that_fits_nowhere_blocks_consolidation() {
    let r = beside_a_deleting_node(pod("stuck", "9"), "under-used", vec![pod("w", "1")]);
    assert_eq!(reason(&r, "going"), &Reason::Deleting);
    assert!(
        matches!(reason(&r, "under-used"), Reason::PodFitsNowhere { pod, .. } if pod == "default/stuck")
    );
}

/// aws#7521 ("Cannot disrupt Node: state node is nominated for a pending pod"): a node that a
/// deleting node's pods will go to is nominated — Karpenter's provisioner schedules the
/// reschedulable pods of deleting nodes (core v1.14.1 `provisioner.go Schedule`,
/// `nodes.Deleting().CurrentlyReschedulablePods`) and `Results.Record` nominates the existing
/// nodes it puts them on (`scheduling/scheduler.go` → `cluster.NominateNodeForPod`), which
/// `NewCandidate` refuses (suite_test.go "should not consider candidates that are nominated").
/// We had moved the pod onto `fresh` and then replaced `fresh` by a cheaper node.
#[test]
fn a_node_receiving_a_deleting_nodes_pods_is_nominated() {
    let r = beside_a_deleting_node(pod("moving", "3"), "fresh", vec![pod("w", "500m")]);
    assert_eq!(
        reason(&r, "fresh"),
        &Reason::ReceivesPods {
            pass: 0,
            from: vec!["going".into()],
        }
    );
    assert_eq!(
        reason(&r, "fresh").to_string(),
        "receives pods from going (being deleted), which nominates it"
    );
}

/// aws#7521 as v1.14.1 has it (core#2033, v1.4.0: `pdb.go IsCurrentlyReschedulable`): a
/// do-not-disrupt pod, or one a PDB fully blocks, on a deleting node is not evicted, so the
/// provisioner places it nowhere and nominates no node; the empty node beside it goes.
#[test]
fn a_deleting_nodes_do_not_disrupt_pod_nominates_no_node() {
    let job = guarded_pod("job", "3", "true", "2024-06-24T10:00:00Z");
    let r = evaluate(input(vec![
        deleting("going", "large", vec![job]),
        node("fresh", "large", vec![]),
    ]));
    assert_eq!(
        find(&r, "fresh").method,
        Some(Method::Emptiness),
        "{:#?}",
        r.nodes
    );
}

// ------------------------------------------------------------------------- fast = reference

/// A random small cluster: managed and unmanaged nodes of five types in two zones, on-demand
/// and spot, some uninitialized, deleting, nominated, cordoned or tainted; pods of all kinds
/// (plain, pinned to a pool, zonal spread, hostname anti-affinity, DaemonSet, finished,
/// do-not-disrupt), PDBs, pending pods, DaemonSets, budgets, consolidateAfter, drift and
/// expiry; one of the three releases.
fn random_cluster(seed: u64) -> ConsolidationInput {
    use crate::model::taints::{Effect, Taint};
    use crate::testing::Rng;
    let mut rng = Rng::new(seed);
    let zones = ["zone-a", "zone-b"];
    let catalog: Vec<InstanceType> = [
        ("t1", "1", 0.05),
        ("t2", "2", 0.09),
        ("t4", "4", 0.17),
        ("t8", "8", 0.30),
        ("t16", "16", 0.62),
    ]
    .iter()
    .map(|(name, cpu, price)| {
        let mut offerings = on_demand(&zones, *price);
        offerings.extend(spot(&zones[..1], price * 0.4));
        offerings.extend(spot(&zones[1..], price * 0.45));
        let cpus: f64 = cpu.parse().unwrap();
        instance_type(name, cpu, &format!("{}Gi", 2.0 * cpus), "20", offerings)
    })
    .collect();
    let release = *rng.pick(&[
        Release::V1_14,
        Release::V1_14,
        Release::V0_37,
        Release::V0_31,
    ]);
    let generation = match release {
        Release::V1_14 => ApiGeneration::V1,
        Release::V0_37 => ApiGeneration::V1Beta1,
        Release::V0_31 => ApiGeneration::V1Alpha5,
    };
    let pool_names = ["alpha", "beta"];
    let pools: Vec<(NodePool, Vec<InstanceType>)> = pool_names
        .iter()
        .map(|name| {
            let mut p = node_pool(name);
            p.generation = Some(generation);
            p.disruption.consolidation_policy = match (release, rng.below(4)) {
                (_, 0) => "WhenEmpty",
                (Release::V1_14, 1) => "Balanced",
                (Release::V1_14, _) => "WhenEmptyOrUnderutilized",
                _ => "WhenUnderutilized",
            }
            .into();
            p.disruption.consolidate_after =
                match (p.disruption.consolidation_policy.as_str(), rng.below(4)) {
                    ("WhenUnderutilized", _) => None,
                    (_, 0) => Some("Never".into()),
                    (_, 1) => Some("10m".into()),
                    _ => Some("0s".into()),
                };
            if release != Release::V0_31 {
                p.disruption.budgets = match rng.below(4) {
                    0 => vec![],
                    1 => vec![budget("1")],
                    2 => vec![budget("50%")],
                    _ => vec![budget("3")],
                };
            }
            if release != Release::V1_14 && rng.below(3) == 0 {
                p.expire_after = Some("2h".into());
            }
            if rng.below(6) == 0 {
                p.taints
                    .push(Taint::new("soft", "", Effect::PreferNoSchedule));
            }
            (p, catalog.clone())
        })
        .collect();
    let mut pod_n = 0;
    let mut new_pod = |rng: &mut Rng, pool: &str| {
        pod_n += 1;
        let cpu = *rng.pick(&["100m", "300m", "700m", "1500m", "3"]);
        let app = format!("app-{}", rng.below(4));
        let mut b = PodBuilder::new(&format!("p{pod_n}"))
            .cpu(cpu)
            .label("app", &app);
        match rng.below(12) {
            0 => b = b.node_selector(crate::model::labels::NODEPOOL, pool),
            1 => b = b.spread(crate::model::labels::ZONE, 1, true, &[("app", &app)]),
            2 => {
                b = b
                    .label("solo", "yes")
                    .anti_affinity(crate::model::labels::HOSTNAME, &[("solo", "yes")])
            }
            3 => b = b.toleration("soft", "", Effect::PreferNoSchedule),
            _ => {}
        }
        let mut p = b.build();
        match rng.below(25) {
            0 => p.phase = Some("Succeeded".into()),
            1 => p.do_not_disrupt = Some("true".into()),
            2 => p.owner = Some(crate::model::pod::Owner::of("DaemonSet", "logs")),
            _ => {}
        }
        p
    };
    let mut nodes = Vec::new();
    for n in 0..(4 + rng.below(9)) {
        let pool = *rng.pick(&pool_names);
        let it = rng.pick(&catalog).clone();
        let ct = *rng.pick(&[ON_DEMAND, ON_DEMAND, SPOT]);
        let zone = *rng.pick(&zones);
        let count = rng.below(6);
        let pods: Vec<Pod> = (0..count).map(|_| new_pod(&mut rng, pool)).collect();
        let mut node = managed_node(&format!("n{n:02}"), pool, &it, zone, ct, NOW, pods);
        let claim = node.claim.as_mut().unwrap();
        match rng.below(14) {
            0 => node.claim = None,
            1 => node.node.initialized = false,
            2 => node.node.deleting = true,
            3 => node.nominated = true,
            4 => node.node.unschedulable = true,
            5 => claim.last_pod_event = Some(NOW - 120),
            6 => claim.expire_after = Some(3600),
            7 => claim.created = NOW - 3 * 3600,
            8 => {
                claim.drifted = Some(Drifted {
                    since: NOW - 60,
                    reason: "AMIDrift".into(),
                })
            }
            9 => node.node.ready = false,
            _ => {}
        }
        nodes.push(node);
    }
    let mut input = consolidation_input(NOW, pools, nodes);
    input.feature_gates.spot_to_spot_consolidation = rng.below(2) == 0;
    if rng.below(4) == 0 {
        input.pending_pods.push(new_pod(&mut rng, "alpha"));
    }
    if rng.below(4) == 0 {
        input.pdbs.push(pdb("guard", "app-1", rng.below(2) as i32));
    }
    if rng.below(3) == 0 {
        let mut d = PodBuilder::new("logs").cpu("100m").build();
        d.owner = Some(crate::model::pod::Owner::of("DaemonSet", "logs"));
        input.daemonsets.push(d);
    }
    input
}

/// The fast simulator (first fit for plain pods, reused failures across passes) decides
/// exactly as one full solve per simulation, on random clusters with a fixed seed.
#[test]
fn the_fast_evaluation_decides_as_the_reference_one() {
    let mut acted = 0;
    for seed in 0..400 {
        let input = random_cluster(seed);
        let fast = evaluate(input.clone());
        let reference = evaluate_reference(input);
        assert_eq!(fast, reference, "seed {seed}");
        acted += usize::from(!fast.actions.is_empty());
    }
    // The clusters exercise the decisions, not only the filters.
    assert!(acted > 150, "only {acted} clusters had an action");
}

/// The same under `MinValuesPolicy: BestEffort` with every pool asking more distinct instance
/// types than some NodeClaims can keep: relaxed replacements decide alike either way.
#[test]
fn the_fast_evaluation_decides_as_the_reference_one_when_min_values_relax() {
    use crate::model::requirements::{NodeSelectorRequirement, Operator};
    use crate::scheduling::MinValuesPolicy;
    let mut differ = 0;
    for seed in 0..120 {
        let mut input = random_cluster(seed);
        for (n, p) in input.pools.iter_mut().enumerate() {
            p.pool.requirements.push(NodeSelectorRequirement {
                min_values: Some(3 + ((seed as u32 + n as u32) % 4)),
                ..NodeSelectorRequirement::new(
                    crate::model::labels::INSTANCE_TYPE,
                    Operator::Exists,
                    &[],
                )
            });
        }
        let strict = evaluate(input.clone());
        input.min_values_policy = MinValuesPolicy::BestEffort;
        let fast = evaluate(input.clone());
        let reference = evaluate_reference(input);
        assert_eq!(fast, reference, "seed {seed}");
        differ += usize::from(fast != strict);
    }
    // The policy changes some decisions (half the clusters are v1, whose pools relax; most
    // relaxed replacements are then held to their lowered minValues by the price filter), so
    // relaxation is exercised.
    assert!(
        differ >= 5,
        "only {differ} clusters decided otherwise than under Strict"
    );
}

/// The fast simulator checked against a full solve on every simulation it answers itself.
#[derive(Default)]
struct Checked(fast::Fast);

impl sim::Simulator for Checked {
    fn simulate(
        &mut self,
        cluster: &mut cluster::Cluster,
        request: &sim::SimRequest,
    ) -> sim::SimResult {
        let fast = self.0.simulate(cluster, request);
        if matches!(fast.stamp, Some(sim::Stamp::Nodes { .. })) {
            let full = sim::full_solve(cluster, request);
            assert_eq!(
                sim::SimResult {
                    stamp: None,
                    ..fast.clone()
                },
                full,
                "{request:?}"
            );
        }
        fast
    }

    fn still_valid(&self, cluster: &cluster::Cluster, stamp: &sim::Stamp) -> bool {
        self.0.still_valid(cluster, stamp)
    }
}

/// Every simulation the fast path answers, it answers as the solver on the whole cluster.
#[test]
fn every_fast_simulation_matches_a_full_solve() {
    for seed in 0..400 {
        let input = random_cluster(seed);
        let checked =
            engine::Engine::new(cluster::Cluster::new(input.clone()), Checked::default()).run();
        assert_eq!(checked, evaluate(input), "seed {seed}");
    }
}

// ------------------------------------------------------------------------- disruption cost

/// suite_test.go "should have a standard disruptionCost for a pod with no priority or
/// disruptionCost specified", "should have a higher disruptionCost for a pod with a positive
/// deletion disruptionCost", "should have a lower disruptionCost for a pod with a positive
/// deletion disruptionCost" (-100), "should have higher costs for higher deletion costs", "should
/// have a higher disruptionCost for a pod with a higher priority", "should have a lower
/// disruptionCost for a pod with a lower priority" (`core: pkg/utils/disruption/disruption.go
/// EvictionCost`).
#[test]
fn eviction_cost_reads_the_deletion_cost_and_the_priority() {
    let cost = |deletion_cost: Option<f64>, priority: Option<i32>| {
        candidate::eviction_cost(&cluster::PodExtra {
            priority,
            deletion_cost,
            not_ready: false,
        })
    };
    assert_eq!(cost(None, None), 1.0);
    assert!(cost(Some(100.0), None) > 1.0);
    assert!(cost(Some(-100.0), None) < 1.0);
    assert!(cost(Some(101.0), None) > cost(Some(100.0), None));
    assert!(cost(Some(100.0), None) > cost(Some(99.0), None));
    assert!(cost(None, Some(1)) > 1.0);
    assert!(cost(None, Some(-1)) < 1.0);
    // Clamped to [-10, 10]: the extremes of both ranges.
    assert_eq!(cost(Some(f64::from(i32::MAX)), Some(1_000_000_000)), 10.0);
    assert_eq!(cost(Some(f64::from(i32::MIN)), Some(i32::MIN)), -10.0);
}

/// consolidation_test.go "should consolidate the node with best savings ratio first", with the
/// costs coming from the pods: two nodes alike but for one pod's priority (and another's
/// `controller.kubernetes.io/pod-deletion-cost`); the cheaper one to disrupt goes first
/// (`types.go SavingsRatio`: price ÷ (1 + Σ positive eviction costs)).
#[test]
fn a_pods_priority_or_deletion_cost_orders_candidates() {
    for (field, high) in [
        ("priority", (Some(1_000_000_000), None)),
        ("deletion cost", (None, Some(f64::from(i32::MAX)))),
    ] {
        let mut p = pool();
        p.disruption.budgets = vec![budget("1")];
        let mut precious = node("precious", "large", vec![pod("p", "100m")]);
        (precious.pods[0].priority, precious.pods[0].deletion_cost) = high;
        let plain = node("plain", "large", vec![pod("q", "100m")]);
        let r = evaluate(with_pool(p, vec![precious, plain]));
        assert_eq!(r.actions.len(), 1, "{field}: {:#?}", r.actions);
        assert_eq!(r.actions[0].nodes, ["plain"], "{field}");
    }
}

/// consolidation_test.go "can replace nodes, considers PDB policy": a PDB at zero (and fully
/// blocking, `maxUnavailable: 0`) with `unhealthyPodEvictionPolicy: AlwaysAllow` does not hold
/// pods whose Ready condition is False (`pdb.go isEvictable`); the same pods ready are held.
#[test]
fn an_always_allow_pdb_lets_unready_pods_go() {
    let run = |not_ready: bool| {
        let mut n = node(
            "guarded",
            "large",
            (0..3).map(|i| pod(&format!("web-{i}"), "100m")).collect(),
        );
        for (i, p) in n.pods.iter_mut().enumerate() {
            p.pod.labels.insert("app".into(), "web".into());
            p.pod.name = format!("web-{i}");
            p.not_ready = not_ready;
        }
        let mut i = input(vec![n, full("busy")]);
        i.pdbs = vec![PdbInput {
            max_unavailable: Some(IntOrPercent::Int(0)),
            always_allow_unhealthy: true,
            ..pdb("web", "web", 0)
        }];
        evaluate(i)
    };
    let r = run(true);
    assert_ne!(find(&r, "guarded").decision, NodeDecision::None, "{r:#?}");
    let r = run(false);
    assert_eq!(find(&r, "guarded").decision, NodeDecision::None);
    assert_reason(
        &r,
        "guarded",
        |x| matches!(x, Reason::Pdb { pdb, allowed: 0, .. } if pdb == "default/web"),
    );
}

/// `types.go Candidate.IsEmpty` (v1.14): "a node with running pods whose eviction costs all
/// clamp to zero is Empty" — emptiness deletes it; one ordinary pod keeps it non-empty.
#[test]
fn a_node_whose_pods_cost_nothing_to_evict_is_empty() {
    let mut cheap = node("cheap", "large", vec![pod("c", "100m")]);
    cheap.pods[0].deletion_cost = Some(-1_000_000_000.0);
    let r = evaluate(input(vec![cheap, full("busy")]));
    let a = &r.actions[0];
    assert_eq!(
        (a.method, a.decision, a.nodes.as_slice()),
        (
            Method::Emptiness,
            Decision::Delete,
            ["cheap".to_string()].as_slice()
        )
    );
}

// ------------------------------------------------------------------------- candidate table

/// Which pod and node states keep a node from being a (graceful) candidate, one row per
/// upstream test (suite_test.go unless stated; `statenode.go ValidateNodeDisruptable` /
/// `ValidatePodsDisruptable`, `pdb.go isEvictable`): `None` = a candidate, which goes here
/// (its pod needs no place, or fits on `roomy`).
#[test]
fn candidate_filter_table() {
    use crate::model::pod::Owner;
    type Edit = fn(&mut NodeInput);
    fn owned(n: &mut NodeInput, kind: &str) {
        n.pods[0].pod.owner = Some(Owner::of(kind, "owner"));
    }
    fn dnd(n: &mut NodeInput) {
        n.pods[0].pod.do_not_disrupt = Some("true".into());
    }
    fn zero_pdb(n: &mut NodeInput) {
        // Read by the runner: the row's pod is covered by a fully blocking PDB at zero.
        n.pods[0].pod.labels.insert("pdb".into(), "zero".into());
    }
    let blocked_pod = || Reason::PodDoNotDisrupt {
        annotation: crate::model::labels::DO_NOT_DISRUPT,
        pod: "default/p".into(),
        value: "true".into(),
    };
    let blocked_pdb = || Reason::Pdb {
        pod: "default/p".into(),
        pdb: "default/zero".into(),
        allowed: 0,
    };
    let rows: Vec<(&str, Edit, Option<Reason>)> = vec![
        (
            "should not consider candidates that have do-not-disrupt pods scheduled and no terminationGracePeriod",
            |n| dnd(n),
            Some(blocked_pod()),
        ),
        (
            "should not consider candidates that have do-not-disrupt mirror pods scheduled",
            |n| {
                owned(n, "Node");
                dnd(n)
            },
            Some(blocked_pod()),
        ),
        (
            "should not consider candidates that have do-not-disrupt daemonset pods scheduled",
            |n| {
                owned(n, "DaemonSet");
                dnd(n)
            },
            Some(blocked_pod()),
        ),
        (
            "should consider candidates that have do-not-disrupt terminating pods",
            |n| {
                n.pods[0].pod.terminating = true;
                dnd(n)
            },
            None,
        ),
        (
            "should consider candidates that have do-not-disrupt terminal pods",
            |n| {
                n.pods[0].pod.phase = Some("Succeeded".into());
                dnd(n)
            },
            None,
        ),
        (
            "consolidation_test.go: can delete nodes, considers invalid do-not-disrupt annotation format as not blocking",
            |n| n.pods[0].pod.do_not_disrupt = Some("invalid-format".into()),
            None,
        ),
        (
            "should not consider candidates that have fully blocking PDBs",
            |n| zero_pdb(n),
            Some(blocked_pdb()),
        ),
        (
            "should not consider candidates that have fully blocking PDBs on daemonset pods",
            |n| {
                owned(n, "DaemonSet");
                zero_pdb(n)
            },
            Some(blocked_pdb()),
        ),
        (
            "should consider candidates that have fully blocking PDBs on mirror pods",
            |n| {
                owned(n, "Node");
                zero_pdb(n)
            },
            None,
        ),
        (
            "should consider candidates that have fully blocking PDBs on terminal pods",
            |n| {
                n.pods[0].pod.phase = Some("Failed".into());
                zero_pdb(n)
            },
            None,
        ),
        (
            "should consider candidates that have fully blocking PDBs on terminating pods",
            |n| {
                n.pods[0].pod.terminating = true;
                zero_pdb(n)
            },
            None,
        ),
        (
            "should not consider candidates that have do-not-disrupt on nodes",
            |n| {
                n.node
                    .annotations
                    .insert("karpenter.sh/do-not-disrupt".into(), "true".into());
            },
            Some(Reason::NodeDoNotDisrupt {
                value: "true".into(),
            }),
        ),
        (
            "should not consider candidates that are nominated",
            |n| n.nominated = true,
            Some(Reason::Nominated),
        ),
        (
            "should not consider candidates that are deleting",
            |n| n.claim.as_mut().unwrap().deleting = true,
            Some(Reason::Deleting),
        ),
        (
            "should not consider candidates that aren't yet initialized",
            |n| n.node.initialized = false,
            Some(Reason::NotInitialized),
        ),
        (
            "should not consider candidates that are not owned by a NodePool (no karpenter.sh/nodepool label)",
            |n| {
                n.node.labels.remove("karpenter.sh/nodepool");
            },
            Some(Reason::NoNodePoolLabel),
        ),
    ];
    for (it, edit, want) in rows {
        let mut n = node("n", "large", vec![pod("p", "100m")]);
        edit(&mut n);
        let roomy = node("roomy", "large", vec![pod("r", "7")]);
        let mut i = input(vec![n, roomy]);
        i.pdbs = vec![PdbInput {
            max_unavailable: Some(IntOrPercent::Int(0)),
            ..pdb("zero", "zero", 0)
        }];
        i.pdbs[0].selector = Some(LabelSelector::eq(&[("pdb", "zero")]));
        let r = evaluate(i);
        match want {
            None => assert_eq!(find(&r, "n").decision, NodeDecision::Delete, "{it}: {r:#?}"),
            Some(want) => {
                let got = r
                    .nodes
                    .iter()
                    .find(|x| x.name == "n")
                    .and_then(|x| x.reason.clone());
                // A node without its NodePool label is no managed node: not reported at all.
                if want == Reason::NoNodePoolLabel && got.is_none() {
                    assert!(
                        r.actions
                            .iter()
                            .all(|a| !a.nodes.contains(&"n".to_string())),
                        "{it}"
                    );
                    continue;
                }
                assert_eq!(got.as_ref(), Some(&want), "{it}");
            }
        }
    }
}

// ------------------------------------------------------------------------- minValues

/// `count` types cheaper than the 8-cpu node ($0.40) and `pricier` types above it, each holding
/// 1 cpu, of capacity type `ct`; the pool asks `minValues` instance types.
fn min_values_cluster(
    count: usize,
    pricier: usize,
    min_values: u32,
    ct: &str,
) -> ConsolidationReport {
    use crate::model::requirements::{NodeSelectorRequirement, Operator};
    let offer = |price: f64| {
        if ct == SPOT {
            spot(&[ZONE], price)
        } else {
            on_demand(&[ZONE], price)
        }
    };
    let mut types: Vec<InstanceType> = (0..count + pricier)
        .map(|i| {
            let price = if i < count {
                0.10 + 0.01 * i as f64
            } else {
                0.50 + 0.01 * i as f64
            };
            instance_type(&format!("t-{i:02}"), "2", "4Gi", "110", offer(price))
        })
        .collect();
    types.push(instance_type("big", "8", "16Gi", "110", offer(0.40)));
    let big = types.last().unwrap().clone();
    let mut p = pool();
    p.requirements.push(NodeSelectorRequirement {
        min_values: Some(min_values),
        ..NodeSelectorRequirement::new("node.kubernetes.io/instance-type", Operator::Exists, &[])
    });
    let n = managed_node("n", "default", &big, ZONE, ct, NOW, vec![pod("w", "1")]);
    let mut i = consolidation_input(NOW, vec![(p, types)], vec![n]);
    i.feature_gates.spot_to_spot_consolidation = true;
    evaluate(i)
}

/// consolidation_test.go "spot to spot consolidation should consider the max of default and
/// minimum number of instanceTypeOptions from minValues in requirement for truncation if minimum
/// number of instanceTypeOptions from minValues in requirement is greater than 15." and "… the
/// default for truncation if minimum number … is less than 15." (`consolidation.go
/// computeSpotToSpotConsolidation`: keep max(15, SatisfiesMinValues) cheapest options).
#[test]
fn spot_to_spot_keeps_what_min_values_needs_beyond_fifteen() {
    for (min_values, kept) in [(18, 18), (5, 15)] {
        let r = min_values_cluster(20, 0, min_values, SPOT);
        let rep = r.actions[0]
            .replacement
            .as_ref()
            .unwrap_or_else(|| panic!("{r:#?}"));
        assert_eq!(rep.instance_types.len(), kept, "minValues {min_values}");
        assert_eq!(rep.instance_type, "t-00");
    }
}

/// consolidation_test.go DescribeTable "Consolidation should fail if filterByPrice breaks the
/// minimum requirement from the NodePools." (on-demand and spot entries): 30 types satisfy
/// `minValues: 25`, the 20 cheaper than the node do not (`RemoveInstanceTypeOptionsByPriceAndMinValues`).
#[test]
fn consolidation_fails_when_the_price_filter_breaks_min_values() {
    for ct in [ON_DEMAND, SPOT] {
        let r = min_values_cluster(20, 10, 25, ct);
        assert!(r.actions.is_empty(), "{ct}: {:#?}", r.actions);
        assert_reason(&r, "n", |x| matches!(x, Reason::MinValues { .. }));
    }
}

/// No type cheaper than the node, while the pricier ones meet `minValues`: the price filter
/// leaves nothing, which `SatisfiesMinValues` does not call a shortfall (it loops over no
/// option), so the node is left "not cheaper" — consolidation_test.go "won't replace on-demand
/// node if on-demand replacement is more expensive" with the pool's `minValues` (core v1.14.1
/// `cloudprovider/types.go` `SatisfiesMinValues`, `consolidation.go` `computeConsolidation`
/// "Can't replace with a cheaper node"). Seed 30222 of the consolidation fuzzer had read
/// "minValues: … needs 2, 0 left".
#[test]
fn nothing_cheaper_is_not_cheaper_even_with_min_values() {
    for ct in [ON_DEMAND, SPOT] {
        let r = min_values_cluster(0, 10, 2, ct);
        assert!(r.actions.is_empty(), "{ct}: {:#?}", r.actions);
        assert_reason(&r, "n", |x| matches!(x, Reason::NotCheaper { .. }));
    }
}

/// small, medium and large on-demand in `test-zone-1` and `test-zone-2`; the pool asks
/// `key In values` with `minValues: min`; node `n` (large, test-zone-1) holds a 1-cpu pod.
fn min_values_policy_cluster(
    key: &str,
    values: &[&str],
    min: u32,
    policy: crate::scheduling::MinValuesPolicy,
) -> ConsolidationReport {
    use crate::model::requirements::{NodeSelectorRequirement, Operator};
    let zones = [ZONE, "test-zone-2"];
    let t = |name: &str, cpu: &str, price: f64| {
        instance_type(name, cpu, "16Gi", "110", on_demand(&zones, price))
    };
    let types = vec![
        t("small", "2", 0.10),
        t("medium", "4", 0.20),
        t("large", "8", 0.40),
    ];
    let mut p = pool();
    p.requirements.push(NodeSelectorRequirement {
        min_values: Some(min),
        ..NodeSelectorRequirement::new(key, Operator::In, values)
    });
    let n = managed_node(
        "n",
        "default",
        &types[2],
        ZONE,
        ON_DEMAND,
        NOW,
        vec![pod("w", "1")],
    );
    let mut i = consolidation_input(NOW, vec![(p, types)], vec![n]);
    i.min_values_policy = policy;
    evaluate(i)
}

/// consolidation_test.go Context "MinValuesPolicy": "should not consolidate a node by relaxing
/// min values when policy is set to BestEffort". The replacement's `minValues: 4` on instance
/// types is relaxed to the 3 that hold the pod, then the price filter leaves the 2 cheaper than
/// the node, below the relaxed 3 (`RemoveInstanceTypeOptionsByPriceAndMinValues` checks the
/// replacement's own requirements): Unconsolidatable "minValues requirement is not met". Under
/// Strict no NodeClaim is made at all. A relaxed zone `minValues` (3 asked, 2 offered) that the
/// cheaper types still meet does not stand in the way: the node is replaced.
#[test]
fn best_effort_relaxed_replacements_are_held_to_their_relaxed_min_values() {
    use crate::scheduling::MinValuesPolicy::{BestEffort, Strict};
    let names = ["small", "medium", "large", "xlarge"];
    let r = min_values_policy_cluster(crate::model::labels::INSTANCE_TYPE, &names, 4, BestEffort);
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert_reason(&r, "n", |x| {
        matches!(x, Reason::MinValues { detail }
            if detail == "node.kubernetes.io/instance-type needs 3, 2 left")
    });
    let r = min_values_policy_cluster(crate::model::labels::INSTANCE_TYPE, &names, 4, Strict);
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert!(!matches!(reason(&r, "n"), Reason::MinValues { .. }));

    let zones = [ZONE, "test-zone-2", "test-zone-3"];
    let r = min_values_policy_cluster(crate::model::labels::ZONE, &zones, 3, Strict);
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    let r = min_values_policy_cluster(crate::model::labels::ZONE, &zones, 3, BestEffort);
    let [action] = &r.actions[..] else {
        panic!("{r:#?}")
    };
    let replacement = action.replacement.as_ref().expect("a replacement");
    assert_eq!(replacement.instance_type, "small");
}

// ------------------------------------------------------------------------- destinations

/// consolidation_test.go "won't delete node if it would require pods to schedule on an
/// uninitialized node" (`UninitializedNodeError`): the only room is on a node not yet
/// initialized, so the node stays (no cheaper type holds its 5-cpu pod either).
#[test]
fn pods_do_not_move_onto_an_uninitialized_node() {
    let mut fresh = node("fresh", "large", vec![]);
    fresh.node.initialized = false;
    let r = evaluate(input(vec![
        node("src", "large", vec![pod("big", "5")]),
        fresh,
    ]));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert_eq!(find(&r, "src").decision, NodeDecision::None);
    assert_reason(&r, "src", |x| {
        matches!(x, Reason::UninitializedDestination { .. })
    });
}

/// Drift through the same `SimulateScheduling` (core v1.14.1 `disruption/helpers.go`
/// `UninitializedNodeError`; `drift.go ComputeCommands` skips a candidate whose non-pending
/// pods do not all schedule): a drifted node whose pod's only room is on a node not yet
/// initialized is left for a later pass, the reason named. Mirrors consolidation_test.go "won't
/// delete node if it would require pods to schedule on an uninitialized node" for drift.
#[test]
fn a_drifted_node_is_not_replaced_onto_an_uninitialized_node() {
    let mut fresh = node("fresh", "large", vec![]);
    fresh.node.initialized = false;
    let mut p = pool();
    p.disruption.consolidate_after = Some("Never".into());
    let r = evaluate(with_pool(
        p,
        vec![
            drifted(node("src", "large", vec![pod("big", "5")]), NOW - 60),
            fresh,
        ],
    ));
    assert!(r.actions.is_empty(), "{:#?}", r.actions);
    assert_reason(&r, "src", |x| {
        matches!(x, Reason::UninitializedDestination { .. })
    });
}

/// consolidation_test.go DescribeTable "can replace nodes, PDB namespace must match": a PDB at
/// zero in another namespace does not hold the pod.
#[test]
fn a_pdb_of_another_namespace_does_not_hold_the_pod() {
    let mut i = input(vec![
        node("n", "large", vec![pod("web", "100m")]),
        full("busy"),
    ]);
    i.pdbs = vec![PdbInput {
        namespace: "other".into(),
        ..pdb("web", "web", 0)
    }];
    let r = evaluate(i);
    assert_ne!(find(&r, "n").decision, NodeDecision::None, "{r:#?}");
}

/// Storage holding claim `default/claim` bound to volume `pv`, whose node affinity is `key In
/// [value]` (`local`: a local volume).
fn bound_claim(claim: &str, pv: &str, (key, value): (&str, &str), local: bool) -> Storage {
    use crate::model::requirements::{NodeSelectorRequirement, Operator};
    use crate::model::storage::{PersistentVolume, PersistentVolumeClaim};
    let mut storage = Storage::default();
    storage.claims.insert(
        ("default".into(), claim.into()),
        PersistentVolumeClaim {
            namespace: "default".into(),
            name: claim.into(),
            volume_name: Some(pv.into()),
            bind_completed: true,
            ..Default::default()
        },
    );
    storage.volumes.insert(
        pv.into(),
        PersistentVolume {
            name: pv.into(),
            node_affinity: vec![vec![NodeSelectorRequirement {
                key: key.into(),
                operator: Operator::In,
                values: vec![value.into()],
                min_values: None,
            }]],
            local,
            ..Default::default()
        },
    );
    storage
}

/// `pod` with a volume `data` of claim `claim`.
fn with_claim(mut pod: Pod, claim: &str) -> Pod {
    use crate::model::pod::{ClaimSource, PodVolume};
    pod.volumes = vec![PodVolume {
        name: "data".into(),
        claim: ClaimSource::Named(claim.into()),
    }];
    pod
}

/// Volume topology in the simulation (`core v1.14.1: pkg/controllers/provisioning/
/// provisioner.go` `NewScheduler` → `getVolumeTopologyRequirements`, used by disruption's
/// `SimulateScheduling`): node `a` in zone 1 holds a pod whose volume lives in zone 1, node `b`
/// in zone 2 a pod without volume; both fit on either node. Without the volumes `a` would go
/// first (name order); with them its pod has nowhere to go, so `b` goes, its pod onto `a`. A
/// claim that is not in the input leaves its pod unconstrained (Karpenter logs the lookup
/// error and schedules the pod without volume requirements).
#[test]
fn a_pod_stays_in_its_volumes_zone() {
    const ZONE_2: &str = "test-zone-2";
    let small = instance_type("small", "2", "4Gi", "110", on_demand(&[ZONE, ZONE_2], 0.10));
    let at = |name: &str, zone: &str, pods: Vec<Pod>| {
        managed_node(name, "default", &small, zone, ON_DEMAND, NOW, pods)
    };
    let db = with_claim(pod("db", "500m"), "data");
    let cluster = |storage: Option<Storage>| {
        let mut i = consolidation_input(
            NOW,
            vec![(pool(), vec![small.clone()])],
            vec![
                at("a", ZONE, vec![db.clone()]),
                at("b", ZONE_2, vec![pod("web", "500m")]),
            ],
        );
        i.storage = storage.map(std::sync::Arc::new);
        i
    };
    let first_deleted = |r: &ConsolidationReport| r.actions.first().map(|a| a.nodes.clone());
    assert_eq!(
        first_deleted(&evaluate(cluster(None))),
        Some(vec!["a".to_string()])
    );

    let mut storage = bound_claim("data", "pv-data", (crate::model::labels::ZONE, ZONE), false);
    let r = evaluate(cluster(Some(storage.clone())));
    assert_eq!(
        first_deleted(&r),
        Some(vec!["b".to_string()]),
        "{:#?}",
        r.actions
    );
    assert_eq!(find(&r, "a").decision, NodeDecision::None, "{r:#?}");

    storage.claims.clear();
    let r = evaluate(cluster(Some(storage)));
    assert_eq!(
        first_deleted(&r),
        Some(vec!["a".to_string()]),
        "unconstrained: {:#?}",
        r.actions
    );
}

/// suite_test.go "can replace node with a local PV (ignoring hostname affinity)": the pod's
/// local volume is pinned to its node by hostname, which a new node cannot have; Karpenter drops
/// a local (or hostPath) volume's hostname requirement (`volumetopology.go`
/// `getPersistentVolumeRequirements`), so the node is still replaced by a cheaper one.
#[test]
fn a_local_volumes_hostname_does_not_pin_its_pod() {
    let db = with_claim(pod("db", "1"), "local-data");
    let storage = bound_claim(
        "local-data",
        "local-pv",
        (crate::model::labels::HOSTNAME, "big"),
        true,
    );
    let mut i = input(vec![node("big", "large", vec![db])]);
    i.storage = Some(std::sync::Arc::new(storage));
    let r = evaluate(i);
    assert_eq!(find(&r, "big").decision, NodeDecision::Replace, "{r:#?}");
    assert_eq!(find(&r, "big").replacement_type.as_deref(), Some("small"));
}

// ------------------------------------------------------------------------- emptiness pods

/// emptiness_test.go "will consider a node with a DaemonSet pod as empty", "will consider a
/// node with terminating Deployment pods as empty", "will not consider a node with a
/// terminating StatefulSet pod as empty" (`pod.IsReschedulable`).
#[test]
fn emptiness_ignores_daemonset_and_terminating_pods_but_not_a_terminating_statefulset_pod() {
    use crate::model::pod::Owner;
    let with_owner = |name: &str, kind: &str, terminating: bool| {
        let mut p = pod(name, "100m");
        p.owner = Some(Owner::of(kind, format!("{name}-owner")));
        p.terminating = terminating;
        p
    };
    let r = evaluate(input(vec![
        node("ds", "large", vec![with_owner("logs", "DaemonSet", false)]),
        node(
            "leaving",
            "large",
            vec![with_owner("web", "ReplicaSet", true)],
        ),
        node("sts", "large", vec![with_owner("db", "StatefulSet", true)]),
        full("busy"),
    ]));
    let emptied: Vec<&str> = r
        .actions
        .iter()
        .filter(|a| a.method == Method::Emptiness)
        .flat_map(|a| a.nodes.iter().map(String::as_str))
        .collect();
    assert!(emptied.contains(&"ds"), "{:#?}", r.actions);
    assert!(emptied.contains(&"leaving"), "{:#?}", r.actions);
    assert!(!emptied.contains(&"sts"), "{:#?}", r.actions);
}

/// drift_test.go "should delete drifted nodes when they are empty and consolidation is
/// disabled" and "should not drift nodes until the longest duration-based do-not-disrupt grace
/// period expires across multiple pods".
#[test]
fn drift_ignores_consolidation_settings_and_waits_for_the_longest_do_not_disrupt() {
    let mut p = pool();
    p.disruption.consolidate_after = Some("Never".into());
    p.disruption.consolidation_policy = "WhenEmpty".into();
    let short = guarded_pod("short", "100m", "30m", "2024-06-24T11:00:00Z");
    let long = guarded_pod("long", "100m", "2h", "2024-06-24T11:00:00Z");
    let r = evaluate(with_pool(
        p,
        vec![
            drifted(node("empty", "small", vec![]), NOW - 60),
            drifted(node("guarded", "small", vec![short, long]), NOW - 600),
        ],
    ));
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert_eq!(
        (r.actions[0].method, r.actions[0].nodes.as_slice()),
        (Method::Drift, ["empty".to_string()].as_slice())
    );
    assert_eq!(
        reason(&r, "guarded"),
        &Reason::PodDoNotDisrupt {
            annotation: crate::model::labels::DO_NOT_DISRUPT,
            pod: "default/long".into(),
            value: "2h".into()
        }
    );
}

/// consolidation_test.go and emptiness_test.go "should not consolidate static NodePool nodes",
/// drift_test.go "should not consider static nodepool for drift": a pool with `replicas`
/// keeps its nodes, empty, under-used or drifted.
#[test]
fn static_node_pool_nodes_are_left_alone() {
    let mut p = pool();
    p.replicas = Some(3);
    let r = evaluate(with_pool(
        p,
        vec![
            node("empty", "large", vec![]),
            node("used", "large", vec![pod("u", "100m")]),
            drifted(node("drifted", "large", vec![]), NOW - 60),
        ],
    ));
    // The drifted one is StaticDrift's (engine/static_drift/tests.rs), not consolidation's.
    assert!(
        r.actions.iter().all(|a| a.method == Method::StaticDrift),
        "{:#?}",
        r.actions
    );
    for n in ["empty", "used"] {
        assert_eq!(find(&r, n).decision, NodeDecision::None, "{n}");
    }
    assert_eq!(
        reason(&r, "empty"),
        &Reason::StaticNodePool {
            pool: "default".into()
        }
    );
}

/// emptiness_test.go / consolidation_test.go Budgets "should allow 2 nodes from each nodePool to
/// be deleted" and "should allow no nodes from each nodePool to be deleted": budgets are per
/// NodePool, so one emptiness action takes two nodes of each pool with room and none of a
/// pool at zero.
#[test]
fn budgets_count_per_node_pool() {
    let mut pools = Vec::new();
    let mut nodes = Vec::new();
    for (name, nodes_budget) in [("a", "2"), ("b", "2"), ("c", "0")] {
        let mut p = node_pool(name);
        p.disruption.budgets = vec![budget(nodes_budget)];
        pools.push((p, types()));
        for i in 0..4 {
            let n = format!("{name}-{i}");
            nodes.push(managed_node(
                &n,
                name,
                &it("large"),
                ZONE,
                ON_DEMAND,
                NOW,
                vec![],
            ));
        }
    }
    let r = evaluate(consolidation_input(NOW, pools, nodes));
    let a = &r.actions[0];
    assert_eq!(a.method, Method::Emptiness);
    let per_pool = |p: &str| a.nodes.iter().filter(|n| n.starts_with(p)).count();
    assert_eq!(
        (per_pool("a-"), per_pool("b-"), per_pool("c-")),
        (2, 2, 0),
        "{a:#?}"
    );
    assert!(matches!(reason(&r, "c-0"), Reason::Budget { nodes, .. } if &**nodes == "0"));
}

// ------------------------------------------------------------------------- certain failures

const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];

/// Types offered on-demand in three zones and as spot in the first two.
fn three_zone_types() -> Vec<InstanceType> {
    [("s", "2", 0.10), ("m", "4", 0.20), ("l", "8", 0.40)]
        .iter()
        .map(|(name, cpu, price)| {
            let mut offerings = on_demand(&ZONES, *price);
            offerings.extend(spot(&ZONES[..2], price * 0.4));
            let cpus: f64 = cpu.parse().unwrap();
            instance_type(name, cpu, &format!("{}Gi", 2.0 * cpus), "110", offerings)
        })
        .collect()
}

fn spot_pool() -> NodePool {
    let mut p = crate::testing::with_requirement(
        node_pool("spot"),
        crate::model::labels::CAPACITY_TYPE,
        crate::model::requirements::Operator::In,
        &[SPOT],
    );
    p.disruption.consolidation_policy = "WhenEmptyOrUnderutilized".into();
    p.disruption.consolidate_after = Some("0s".into());
    p
}

fn web(name: &str) -> Pod {
    PodBuilder::new(name)
        .cpu("200m")
        .label("app", "web")
        .node_selector(crate::model::labels::NODEPOOL, "spot")
        .spread(crate::model::labels::ZONE, 1, true, &[("app", "web")])
        .build()
}

/// The spot pool's cluster evaluated, then again simulating every candidate in full.
fn with_and_without_certain_failures(
    nodes: Vec<NodeInput>,
) -> (ConsolidationReport, ConsolidationReport) {
    let input = consolidation_input(NOW, vec![(spot_pool(), three_zone_types())], nodes);
    let without = engine::Engine::new(cluster::Cluster::new(input.clone()), fast::Fast::default())
        .without_certain_failures()
        .run();
    (evaluate(input), without)
}

/// The pod of node `name` certain to fit nowhere with the node gone, asked directly.
fn certain_pod(nodes: Vec<NodeInput>, name: &str) -> Option<String> {
    let input = consolidation_input(NOW, vec![(spot_pool(), three_zone_types())], nodes);
    let mut cluster = cluster::Cluster::new(input);
    let node = cluster.node_by_name[name];
    let moving = candidate::pod_facts(&cluster, node).sim_pods;
    let certain = certain::CertainFailures::default().of(
        &mut cluster,
        &mut fast::Fast::default(),
        node,
        &moving,
    )?;
    Some(certain.pod.pod(&cluster).key())
}

fn spot_node(name: &str, zone: &str, pods: Vec<Pod>) -> NodeInput {
    let it = three_zone_types()
        .into_iter()
        .find(|t| t.name == "m")
        .unwrap();
    managed_node(name, "spot", &it, zone, SPOT, NOW, pods)
}

/// A zone spread whose emptiest zone the pod's NodePool cannot launch in: with `a` gone, `web-1`
/// may only go to zone-c (counts 1/1/0), where spot is not offered — whatever else moves. The
/// decision is the full simulation's; the reason names the pod and the spread.
#[test]
fn a_pod_whose_spread_admits_only_zones_nothing_can_run_it_in_blocks_with_its_name() {
    let nodes = vec![
        spot_node("a", "zone-a", vec![web("web-1"), pod("filler", "300m")]),
        spot_node("b", "zone-a", vec![web("web-2"), pod("big-b", "3")]),
        spot_node("c", "zone-b", vec![web("web-3"), pod("big-c", "3")]),
    ];
    assert_eq!(
        certain_pod(nodes.clone(), "a").as_deref(),
        Some("default/web-1")
    );
    let (with, without) = with_and_without_certain_failures(nodes);
    assert_eq!(with.actions, without.actions);
    assert_eq!(find(&with, "a").decision, NodeDecision::None);
    assert_reason(
        &with,
        "a",
        |r| matches!(r, Reason::PodFitsNowhere { pod, .. } if pod == "default/web-1"),
    );
}

/// The same spread with zone-a's count at 0 once `a` is gone: zone-a is admitted too, so nothing
/// is certain and full simulations decide (`b`'s pod moves onto `a`).
#[test]
fn a_spread_with_an_admitted_zone_its_pool_can_run_is_simulated_in_full() {
    let nodes = vec![
        spot_node("a", "zone-a", vec![web("web-1"), pod("filler", "300m")]),
        spot_node("b", "zone-a", vec![pod("big-b", "3")]),
        spot_node("c", "zone-b", vec![web("web-3"), pod("big-c", "3")]),
    ];
    assert_eq!(certain_pod(nodes.clone(), "a"), None);
    let (with, without) = with_and_without_certain_failures(nodes);
    assert_eq!(with, without);
    assert_eq!(find(&with, "b").decision, NodeDecision::Delete, "{with:#?}");
}

/// Random clusters shaped for certain failures (zone spreads, a spot-only pool that cannot
/// launch in one of three zones, pending pods of the same deployments): asking first whether a
/// pod is certain to fit nowhere never changes an action or a decision, with the fast simulator
/// or the reference one.
#[test]
fn certain_failures_never_change_a_decision() {
    use crate::testing::Rng;
    const CPUS: [&str; 3] = ["100m", "300m", "900m"];
    let mut certain_seen = 0;
    for seed in 0..300 {
        let mut rng = Rng::new(seed);
        let mut pods = 0;
        let mut new_pod = |rng: &mut Rng, pool: &str| {
            pods += 1;
            let app = format!("app-{}", rng.below(3));
            let cpu: &&str = rng.pick(&CPUS);
            let mut b = PodBuilder::new(&format!("p{pods:03}"))
                .cpu(cpu)
                .label("app", &app)
                .node_selector(crate::model::labels::NODEPOOL, pool);
            if rng.below(2) == 0 {
                b = b.spread(
                    crate::model::labels::ZONE,
                    1,
                    rng.below(4) != 0,
                    &[("app", &app)],
                );
            }
            b.build()
        };
        let mut od_pool = node_pool("od");
        od_pool.disruption.consolidation_policy = "WhenEmptyOrUnderutilized".into();
        od_pool.disruption.consolidate_after = Some("0s".into());
        let pools = vec![
            (spot_pool(), three_zone_types()),
            (od_pool, three_zone_types()),
        ];
        let mut nodes = Vec::new();
        for n in 0..(4 + rng.below(8)) {
            let spot = rng.below(2) == 0;
            let (pool, ct, zone) = if spot {
                ("spot", SPOT, ZONES[rng.below(2)])
            } else {
                ("od", ON_DEMAND, ZONES[rng.below(3)])
            };
            let it = rng.pick(&three_zone_types()).clone();
            let count = 1 + rng.below(4);
            let node_pods = (0..count).map(|_| new_pod(&mut rng, pool)).collect();
            nodes.push(managed_node(
                &format!("n{n:02}"),
                pool,
                &it,
                zone,
                ct,
                NOW,
                node_pods,
            ));
        }
        let mut input = consolidation_input(NOW, pools, nodes);
        if rng.below(4) == 0 {
            input.pending_pods.push(new_pod(&mut rng, "spot"));
        }
        let with = evaluate(input.clone());
        let without =
            engine::Engine::new(cluster::Cluster::new(input.clone()), fast::Fast::default())
                .without_certain_failures()
                .run();
        assert_eq!(with.actions, without.actions, "seed {seed}");
        let decisions = |r: &ConsolidationReport| {
            r.nodes
                .iter()
                .map(|n| (n.name.clone(), n.decision))
                .collect::<Vec<_>>()
        };
        assert_eq!(decisions(&with), decisions(&without), "seed {seed}");
        assert_eq!(with, evaluate_reference(input), "seed {seed}");
        certain_seen += usize::from(with != without);
    }
    // The shape produces certain failures whose reasons differ from the full simulation's.
    assert!(certain_seen > 0, "no cluster had a certain failure");
}

/// emptiness_test.go "Buffer pod protection": "should not disrupt a node that hosts virtual buffer
/// pods", "should only protect the specific node with buffer pods, not others", "should protect
/// multiple nodes that each host buffer pods"; consolidation_test.go "Buffer Pods" "should not
/// empty-consolidate a node with only buffer pods", "should skip buffer-only nodes in single-node
/// consolidation but protect via emptiness" (`emptiness.go` `HasBufferPods`). "should disrupt a
/// node once buffer pods are cleared" / "should consolidate a buffer node once buffer pods are
/// cleared" is the same input without the buffer: `an_empty_node_is_deleted`.
#[test]
fn nodes_hosting_buffer_pods_are_not_empty() {
    let nodes = || {
        vec![
            node("buffered-a", "large", vec![]),
            node("buffered-b", "large", vec![]),
            node("empty", "large", vec![]),
        ]
    };
    let mut i = input(nodes());
    i.buffer_nodes = vec!["buffered-a".into(), "buffered-b".into()];
    let r = evaluate(i);
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert_eq!(r.actions[0].nodes, ["empty"]);
    for n in ["buffered-a", "buffered-b"] {
        assert_eq!(find(&r, n).decision, NodeDecision::None);
        assert_eq!(reason(&r, n), &Reason::BufferPods);
    }
    assert_eq!(Reason::BufferPods.kind(), "buffer-pods");
}

/// emptiness_test.go "should not consider a node with real pods AND buffer pods as empty";
/// consolidation_test.go "should allow consolidation of a node with real pods and buffer pods to
/// a cheaper instance": the buffer only guards emptiness; single-node consolidation replaces the
/// large node holding a 1-CPU pod with a small one (its simulation carries the virtual pods as
/// pending pods, `SimulateScheduling` → `GetPendingPods`; none here).
#[test]
fn buffer_pods_do_not_stop_consolidation_of_a_used_node() {
    let mut i = input(vec![node("used", "large", vec![pod("p", "1")])]);
    i.buffer_nodes = vec!["used".into()];
    let r = evaluate(i);
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert_eq!(r.actions[0].decision, Decision::Replace);
    assert_eq!(r.actions[0].nodes, ["used"]);
}

/// A node an action's simulation gives only CapacityBuffer virtual pods is not nominated (core
/// v1.14.1 `scheduling/scheduler.go` `Results.Record`: "Nominate nodes only for real pods …
/// Nomination blocks ALL disruption (drift, expiry)"), so drift_test.go "should drift one
/// non-empty node at a time, starting with the earliest drift" goes on to the second drifted
/// node in pass 2. Before, the virtual pod nominated it ("receives pods from early (pass 1)").
#[test]
fn a_node_given_only_virtual_buffer_pods_is_not_nominated() {
    let with_pending = |pending: Pod| {
        let mut p = pool();
        p.disruption.consolidate_after = Some("Never".into());
        p.disruption.budgets = vec![budget("100%")];
        let mut i = with_pool(
            p,
            vec![
                drifted(node("early", "small", vec![pod("e", "1800m")]), NOW - 600),
                drifted(node("late", "large", vec![pod("l", "6500m")]), NOW - 60),
            ],
        );
        i.pending_pods = vec![pending];
        evaluate(i)
    };
    let mut virtual_pod = pod("capacity-buffer-spare-0", "100m");
    virtual_pod.buffer = Some("default/spare".into());
    let r = with_pending(virtual_pod);
    let order: Vec<(u32, &str)> = r
        .actions
        .iter()
        .map(|a| (a.pass, a.nodes[0].as_str()))
        .collect();
    assert_eq!(order, [(1, "early"), (2, "late")], "{:#?}", r.nodes);
    // A real pending pod placed there still nominates it (`NominateNodeForPod`).
    let r = with_pending(pod("waiting", "100m"));
    assert_eq!(r.actions.len(), 1, "{:#?}", r.actions);
    assert!(matches!(
        reason(&r, "late"),
        Reason::ReceivesPods { pass: 1, .. }
    ));
}

mod line_by_line;
mod simulation;
