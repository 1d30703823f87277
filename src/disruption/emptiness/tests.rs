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
    decide(
        nodes,
        pods,
        pools,
        &BTreeSet::new(),
        &BTreeMap::new(),
        &[],
        NOW,
    )
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
    let got: Vec<_> = decide(&nodes, &[], &pools, &buffers, &BTreeMap::new(), &[], NOW)
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

/// core v1.14.1 `disruption/controller.go NewMethods` ("Delete empty nodes across all
/// consolidation policies (WhenEmpty, WhenEmptyOrUnderutilized, Balanced)") and
/// `emptiness.go ShouldDisrupt`, which reads no policy: a `Balanced` pool's empty node goes
/// like any other once `consolidateAfter` has passed.
#[test]
fn a_balanced_pools_empty_node_is_removed_as_any_other() {
    let mut balanced = pool("default", "30s", "10");
    balanced.disruption.consolidation_policy = "Balanced".into();
    let got = decisions(&[node("a", "default", Some(60))], &[], &[balanced.clone()]);
    assert_eq!(got, vec![("a".into(), Emptiness::Remove { empty_for: 60 })]);
    assert_eq!(empty_ttl(&balanced), Some(30));
}

/// A PDB over `app=agent` in `kube-system`, allowing `allowed` disruptions.
fn agent_pdb(name: &str, allowed: i32) -> PdbInput {
    PdbInput {
        namespace: "kube-system".into(),
        name: name.into(),
        selector: Some(crate::model::selector::LabelSelector::eq(&[(
            "app", "agent",
        )])),
        min_available: None,
        max_unavailable: Some(crate::disruption::consolidation::IntOrPercent::Int(1)),
        always_allow_unhealthy: false,
        disruptions_allowed: Some(allowed),
    }
}

/// core v1.14.1 `statenode.go ValidatePodsDisruptable` → `pdb.go CanEvictPods` (`isEvictable`,
/// `zeroDisruptions`), which `NewCandidate` asks before emptiness sees a node: a pod that would
/// be evicted — a DaemonSet's too — held by its PDB at zero disruptions, or covered by two
/// PDBs, keeps the empty node; a pod tolerating the disruption taint, or a not-Ready pod under
/// `unhealthyPodEvictionPolicy: AlwaysAllow`, is no obstacle. `--watch` removed the node.
#[test]
fn a_pod_its_pdb_keeps_from_eviction_holds_the_empty_node() {
    let agent = PodBuilder::new("agent-1")
        .namespace("kube-system")
        .label("app", "agent")
        .daemonset("agent")
        .on_node("a")
        .build();
    let nodes = [node("a", "default", Some(60))];
    let pools = [pool("default", "30s", "10")];
    let run = |pod: &Pod, pdbs: &[PdbInput]| {
        decide(
            &nodes,
            std::slice::from_ref(pod),
            &pools,
            &BTreeSet::new(),
            &BTreeMap::new(),
            pdbs,
            NOW,
        )
        .pop()
        .unwrap()
        .1
    };
    let held = Emptiness::Held(Hold::Pdb {
        pod: "kube-system/agent-1".into(),
        pdbs: vec!["kube-system/agent".into()],
    });
    assert_eq!(run(&agent, &[agent_pdb("agent", 0)]), held);
    assert_eq!(
        held_text(&held),
        "PodDisruptionBudget kube-system/agent allows no disruption of pod kube-system/agent-1"
    );
    assert_eq!(
        run(&agent, &[agent_pdb("agent", 1)]),
        Emptiness::Remove { empty_for: 60 }
    );
    assert_eq!(
        run(&agent, &[agent_pdb("agent", 1), agent_pdb("agent-b", 1)]),
        Emptiness::Held(Hold::Pdb {
            pod: "kube-system/agent-1".into(),
            pdbs: vec!["kube-system/agent".into(), "kube-system/agent-b".into()],
        })
    );
    let mut tolerating = agent.clone();
    tolerating
        .tolerations
        .push(crate::model::taints::Toleration::exists("", None));
    assert_eq!(
        run(&tolerating, &[agent_pdb("agent", 0)]),
        Emptiness::Remove { empty_for: 60 }
    );
    let mut unhealthy = agent.clone();
    unhealthy.not_ready = true;
    let mut always = agent_pdb("agent", 0);
    always.always_allow_unhealthy = true;
    assert_eq!(
        run(&unhealthy, &[always]),
        Emptiness::Remove { empty_for: 60 }
    );
}

fn held_text(e: &Emptiness) -> String {
    match e {
        Emptiness::Held(h) => h.to_string(),
        other => panic!("not held: {other:?}"),
    }
}

/// core v1.14.1 `provisioning/scheduling/scheduler.go Results.Record` nominates every existing
/// node a provisioning pass places a pending pod on (`NominateNodeForPod`, for max(2 ×
/// `BATCH_MAX_DURATION`, 10 s)), and `statenode.go ValidateNodeDisruptable` refuses a nominated
/// node as a candidate: an empty node the watch's last plan put a pending pod on stays, the
/// budget untouched for the others. `--watch` removed it under the pod about to bind.
#[test]
fn a_node_the_last_plan_put_a_pending_pod_on_is_nominated_and_stays() {
    let nodes = [
        node("a", "default", Some(60)),
        node("b", "default", Some(60)),
    ];
    let planned: BTreeMap<String, String> = [("a".to_string(), "default/web".to_string())].into();
    let got: Vec<_> = decide(
        &nodes,
        &[],
        &[pool("default", "30s", "1")],
        &BTreeSet::new(),
        &planned,
        &[],
        NOW,
    )
    .into_iter()
    .map(|(n, e)| (n.name.clone(), e))
    .collect();
    assert_eq!(
        got,
        vec![
            (
                "a".into(),
                Emptiness::Held(Hold::Nominated("default/web".into()))
            ),
            ("b".into(), Emptiness::Remove { empty_for: 60 }),
        ]
    );
}
