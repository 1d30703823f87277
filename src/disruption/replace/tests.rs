//! The replace pipeline's pure decisions: records (every earlier version's parse), names,
//! budget slots and picking, where a node enters, readiness, drain pacing, failures.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use super::budget::{controller_free_slots, free_slots, free_slots_for, pick, QueueSlots, Slots};
use super::machine::*;
use super::*;
use crate::disruption::budgets::DisruptionReason;
use crate::disruption::drain::{Blocker, DrainPlan};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, Budget};
use crate::model::taints::{Effect, Taint};

fn pool(name: &str, nodes: Option<&str>) -> NodePool {
    let mut p = NodePool {
        name: name.into(),
        generation: Some(ApiGeneration::V1),
        ..NodePool::default()
    };
    p.disruption.budgets = nodes
        .map(|n| {
            vec![Budget {
                nodes: n.into(),
                ..Budget::default()
            }]
        })
        .unwrap_or_default();
    p
}

fn node(name: &str, pool: &str, instance: &str) -> Node {
    Node {
        name: name.into(),
        labels: [(labels::NODEPOOL.to_string(), pool.to_string())]
            .into_iter()
            .collect(),
        ready: true,
        initialized: true,
        provider_id: Some(format!("aws:///us-east-1a/{instance}")),
        ..Node::default()
    }
}

fn with_record(mut n: Node, record: &Record) -> Node {
    n.annotations.insert(REPLACEMENT.into(), record.format());
    n
}

fn replacing(n: Node, instances: &[&str]) -> Node {
    let record = Record {
        step: Step::Launched,
        instances: instances.iter().map(|i| i.to_string()).collect(),
        ..Record::default()
    };
    with_record(n, &record)
}

/// Pool `default` (v1) with one budget per `(nodes, reason)`.
fn pool_with_reason_budgets(budgets: &[(&str, &str)]) -> NodePool {
    let mut p = pool("default", None);
    p.disruption.budgets = budgets
        .iter()
        .map(|(nodes, reason)| Budget {
            nodes: (*nodes).into(),
            reasons: vec![(*reason).into()],
            ..Budget::default()
        })
        .collect();
    p
}

fn cluster(count: usize) -> Vec<Node> {
    (0..count)
        .map(|i| node(&format!("n{i}"), "default", &format!("i-{i}")))
        .collect()
}

fn queued(name: &str, pool_name: &str, resuming: bool, outcome: usize) -> Queued {
    Queued {
        action: Action {
            node: node(name, pool_name, "i-x"),
            pool: pool(pool_name, Some("10%")),
            method: Method::Drift,
            chosen: None,
            reason: "Drifted".into(),
            command: Vec::new(),
        },
        record: resuming.then(Record::default),
        outcome,
        pdb_wait: None,
        not_before: None,
    }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn records_of_every_earlier_version_parse() {
    // The first version: no instances, no cordonedBefore, no method.
    let first = Record::parse(
        r#"{"step":"marked","nodeClaims":["default-1a2b3c4d5e"],"reason":"AMIDrift","startedAt":"2026-12-02T10:00:00Z"}"#,
    )
    .unwrap();
    assert_eq!(first.step, Step::Marked);
    assert_eq!(first.method, Method::Drift);
    assert!(first.instances.is_empty() && !first.cordoned_before);
    // Session 3: instances and cordonedBefore.
    let later = Record::parse(
        r#"{"step":"launched","nodeClaims":["default-1"],"instances":["i-1"],"reason":"Requested","startedAt":"t","cordonedBefore":true}"#,
    )
    .unwrap();
    assert_eq!(later.step, Step::Launched);
    assert!(later.cordoned_before && later.launched_all());
    // A step or method a newer version wrote reads as the safe `marked` / drift.
    let newer = Record::parse(
        r#"{"step":"terminating","method":"rebalance","nodeClaims":[],"reason":"x","startedAt":"t"}"#,
    )
    .unwrap();
    assert_eq!((newer.step, newer.method), (Step::Marked, Method::Drift));
    // Not a record: none (the node is not treated as in replacement).
    assert_eq!(Record::parse("not json"), None);
    assert_eq!(Record::parse(r#"{"step":"marked"}"#), None);
}

#[test]
fn a_record_is_written_with_its_method_and_reads_back() {
    let record = Record {
        step: Step::Drained,
        method: Method::ConsolidationReplace,
        node_claims: vec!["default-1".into()],
        instances: vec!["i-1".into()],
        reason: "Underutilized".into(),
        started_at: "2026-12-02T10:00:00Z".into(),
        cordoned_before: false,
        command: Vec::new(),
        annotations: Default::default(),
    };
    assert_eq!(
        record.format(),
        r#"{"step":"drained","method":"consolidation-replace","nodeClaims":["default-1"],"instances":["i-1"],"reason":"Underutilized","startedAt":"2026-12-02T10:00:00Z"}"#
    );
    assert_eq!(Record::parse(&record.format()), Some(record.clone()));
    let n = with_record(node("a", "default", "i-a"), &record);
    assert_eq!(Record::of(&n), Some(record));
}

#[test]
fn only_every_replacement_launched_is_adopted() {
    let mut r = Record {
        step: Step::Launched,
        node_claims: vec!["a".into(), "b".into()],
        instances: vec!["i-1".into()],
        ..Record::default()
    };
    assert!(!r.launched_all(), "one of two launched: launched again");
    r.instances.push("i-2".into());
    assert!(r.launched_all());
    r.step = Step::Marked;
    assert!(!r.launched_all());
    r.step = Step::Drained;
    r.instances.clear();
    assert!(r.launched_all(), "drained: nothing is launched again");
}

#[test]
fn replacement_names_differ_per_instance_and_attempt_and_repeat_on_resume() {
    let a = node("ip-10-0-1-23.ec2.internal", "default", "i-0aaa");
    let same_name_new_instance = node("ip-10-0-1-23.ec2.internal", "default", "i-0bbb");
    let t1 = "2026-12-02T10:00:00Z";
    let t2 = "2026-12-02T11:00:00Z";
    let first = replacement_name("default", 0, &a, t1);
    assert_eq!(first, replacement_name("default", 0, &a, t1), "resume");
    assert_eq!(first.len(), "default-".len() + 10);
    assert_ne!(
        first,
        replacement_name("default", 0, &a, t2),
        "a later attempt"
    );
    assert_ne!(
        first,
        replacement_name("default", 1, &a, t1),
        "the next claim"
    );
    assert_ne!(
        first,
        replacement_name("default", 0, &same_name_new_instance, t1),
        "a node name reused by another instance"
    );
}

#[test]
fn a_resumed_replacement_keeps_the_names_it_recorded_in_their_pool() {
    let a = node("a", "default", "i-a");
    let recorded = vec!["default-x".to_string(), "other-y".to_string()];
    assert_eq!(claim_name(&recorded, "default", 0, &a, "t"), "default-x");
    // Recorded for another pool (the plan changed): a fresh name.
    assert_eq!(
        claim_name(&recorded, "default", 1, &a, "t"),
        replacement_name("default", 1, &a, "t")
    );
    assert_eq!(
        claim_name(&[], "default", 0, &a, "t"),
        replacement_name("default", 0, &a, "t")
    );
}

#[test]
fn slots_are_the_budget_minus_the_nodes_in_replacement() {
    let p = pool("default", Some("10%"));
    let mut nodes = cluster(100);
    let pools = std::slice::from_ref(&p);
    assert_eq!(
        free_slots(pools, &nodes, DisruptionReason::Drifted, 0).free("default"),
        Some(10)
    );
    for n in nodes.iter_mut().take(3) {
        *n = replacing(n.clone(), &[]);
    }
    assert_eq!(
        free_slots(pools, &nodes, DisruptionReason::Drifted, 0).free("default"),
        Some(7)
    );
    // A node already being deleted counts once (as Karpenter's "disrupting").
    nodes[3].deleting = true;
    assert_eq!(
        free_slots(pools, &nodes, DisruptionReason::Drifted, 0).free("default"),
        Some(6)
    );
}

#[test]
fn replacements_in_progress_neither_grow_the_pool_nor_count_as_not_ready() {
    let p = pool("default", Some("10%"));
    let pools = std::slice::from_ref(&p);
    let mut nodes = cluster(100);
    // Ten in replacement, each with a replacement that joined (Ready) or is joining.
    for i in 0..10 {
        nodes[i] = replacing(nodes[i].clone(), &[&format!("i-new{i}")]);
        let mut new = node(&format!("new{i}"), "default", &format!("i-new{i}"));
        new.ready = i % 2 == 0;
        nodes.push(new);
    }
    // 110 Nodes, 5 NotReady: Karpenter's arithmetic would allow ceil(11) - 5 - 10 = 0 … or
    // more once they are Ready; here it is exactly 10 - 10.
    assert_eq!(
        free_slots(pools, &nodes, DisruptionReason::Drifted, 0).free("default"),
        Some(0)
    );
    // One finishes: its old node goes, its replacement is an ordinary node now.
    nodes.remove(0);
    assert_eq!(
        free_slots(pools, &nodes, DisruptionReason::Drifted, 0).free("default"),
        Some(1)
    );
}

#[test]
fn a_pool_without_an_active_budget_is_limited_by_max_parallel_only() {
    let slots = free_slots(
        &[pool("free", None)],
        &cluster(5),
        DisruptionReason::Drifted,
        0,
    );
    assert_eq!(slots.free("free"), None);
    assert!(slots.has_room("free"));
}

#[test]
fn the_controllers_slots_count_handed_over_nodes_and_its_own_disruptions() {
    let p = pool("default", Some("3"));
    let mut nodes = cluster(10);
    // The controller is replacing one itself (its taint, not deleting yet).
    nodes[9]
        .taints
        .push(Taint::new("karpenter.sh/disrupted", "", Effect::NoSchedule));
    let none = BTreeMap::new();
    let pools = std::slice::from_ref(&p);
    assert_eq!(
        controller_free_slots(pools, &nodes, &none, 0).free("default"),
        Some(2)
    );
    // One handed over by this run (deleting now): counted once, as ours.
    nodes[0].deleting = true;
    let ours: BTreeMap<String, String> = [("n0".to_string(), "default".to_string())].into();
    assert_eq!(
        controller_free_slots(pools, &nodes, &ours, 0).free("default"),
        Some(1)
    );
}

#[test]
fn slots_are_taken_and_given_back() {
    let mut slots = Slots::new([("a".to_string(), Some(1)), ("b".to_string(), None)]);
    assert!(slots.has_room("a"));
    slots.take("a");
    assert!(!slots.has_room("a"));
    slots.give_back("a");
    assert_eq!(slots.free("a"), Some(1));
    slots.take("b");
    assert!(slots.has_room("b"), "unlimited");
    assert!(slots.has_room("unknown"), "a pool not counted");
}

#[test]
fn pick_takes_in_order_within_slots_and_room_and_resumes_first() {
    let mut queue: VecDeque<Queued> = vec![
        queued("resumed", "a", true, 0),
        queued("a1", "a", false, 1),
        queued("a2", "a", false, 2),
        queued("b1", "b", false, 3),
    ]
    .into();
    let slots = Slots::new([("a".to_string(), Some(1)), ("b".to_string(), Some(0))]);
    let picked = pick(&mut queue, slots.clone(), 5, secs(0));
    let names: Vec<&str> = picked.iter().map(|q| q.action.node.name.as_str()).collect();
    // The resumed node is counted already; a1 takes pool a's slot; b has none.
    assert_eq!(names, ["resumed", "a1"]);
    let left: Vec<&str> = queue.iter().map(|q| q.action.node.name.as_str()).collect();
    assert_eq!(left, ["a2", "b1"]);
    // A node held back by a PDB is not picked before it is due.
    let mut held = queued("held", "a", false, 0);
    held.not_before = Some(secs(60));
    let mut queue: VecDeque<Queued> = vec![held].into();
    assert!(pick(&mut queue, slots.clone(), 5, secs(59)).is_empty());
    assert_eq!(pick(&mut queue, slots, 5, secs(60)).len(), 1);
    // --max-parallel room bounds it too.
    let mut queue: VecDeque<Queued> =
        vec![queued("a1", "a", false, 0), queued("a2", "a", false, 1)].into();
    let unlimited = Slots::new([("a".to_string(), None)]);
    assert_eq!(pick(&mut queue, unlimited, 1, secs(0)).len(), 1);
    assert_eq!(queue.len(), 1);
}

/// The nodes of one command (`core v1.14.1 disruption/queue.go StartCommand`: every candidate
/// of a command is marked at once) are picked together: with their first node, whatever the
/// room left, each taking its pool's slot — or not at all.
#[test]
fn pick_takes_the_nodes_of_a_command_together_or_not_at_all() {
    let in_command = |name: &str, outcome: usize| {
        let mut q = queued(name, "a", false, outcome);
        q.action.command = vec!["m1".into(), "m2".into()];
        q
    };
    // A follower met before its first node is taken with it too.
    let mut queue: VecDeque<Queued> = vec![
        in_command("m2", 0),
        queued("other", "b", false, 1),
        in_command("m1", 2),
    ]
    .into();
    let slots = Slots::new([("a".to_string(), Some(2)), ("b".to_string(), Some(1))]);
    let picked = pick(&mut queue, slots.clone(), 1, secs(0));
    let names: Vec<&str> = picked.iter().map(|q| q.action.node.name.as_str()).collect();
    assert_eq!(
        names,
        ["m2", "m1"],
        "room for one start: the command, whole"
    );
    assert_eq!(queue.len(), 1);
    // No slot for its first node: none of it starts.
    let mut queue: VecDeque<Queued> = vec![in_command("m1", 0), in_command("m2", 1)].into();
    let none = Slots::new([("a".to_string(), Some(0))]);
    assert!(pick(&mut queue, none, 5, secs(0)).is_empty());
    assert_eq!(queue.len(), 2);
}

#[test]
fn a_pdb_at_zero_is_waited_for_up_to_the_timeout_and_only_alone() {
    let mut q = queued("a", "default", false, 0);
    assert!(q.waits_for_pdb(true, secs(10), secs(60)));
    assert_eq!(q.pdb_wait, Some(secs(10)), "since the first time");
    assert!(q.waits_for_pdb(true, secs(69), secs(60)));
    assert!(!q.pdb_wait_expired(secs(69), secs(60)));
    assert!(!q.waits_for_pdb(true, secs(70), secs(60)));
    assert!(q.pdb_wait_expired(secs(70), secs(60)));
    // Something else blocks too (do-not-disrupt): no wait.
    assert!(!queued("b", "default", false, 0).waits_for_pdb(false, secs(0), secs(60)));
}

#[test]
fn a_node_enters_where_its_record_left_it() {
    let fresh = node("a", "default", "i-a");
    assert_eq!(entry(None, &fresh), Entry::Plan);
    let mut r = Record {
        step: Step::Marked,
        node_claims: vec!["default-1".into()],
        ..Record::default()
    };
    assert_eq!(entry(Some(&r), &fresh), Entry::Plan, "marked: plan again");
    r.step = Step::Launched;
    assert_eq!(entry(Some(&r), &fresh), Entry::Plan, "launched in part");
    r.instances = vec!["i-1".into()];
    assert_eq!(entry(Some(&r), &fresh), Entry::Adopt);
    r.step = Step::Drained;
    let mut cordoned = fresh.clone();
    cordoned.unschedulable = true;
    assert_eq!(entry(Some(&r), &cordoned), Entry::Finish);
    let mut gone_kubelet = fresh.clone();
    gone_kubelet.ready = false;
    assert_eq!(entry(Some(&r), &gone_kubelet), Entry::Finish);
    assert_eq!(
        entry(Some(&r), &fresh),
        Entry::Redrain,
        "uncordoned meanwhile"
    );
}

#[test]
fn a_launch_that_failed_or_collides_rolls_back() {
    assert_eq!(after_launch(None, false), Ok(()));
    assert_eq!(
        after_launch(Some("no capacity".into()), true),
        Err(Detail::LaunchFailed("no capacity".into()))
    );
    assert_eq!(after_launch(None, true), Err(Detail::InstanceCollision));
}

#[test]
fn replacements_must_be_ready_and_initialized_in_time() {
    let startup = Replacement {
        startup_taints: vec![Taint::new("agent.io/not-ready", "", Effect::NoSchedule)],
        requests: crate::model::resources::Resources::from_pairs(&[("example.com/dongle", "1")]),
        ..Replacement::default()
    };
    let mut n = node("new", "default", "i-new");
    n.allocatable.set("example.com/dongle", 1000);
    n.ready = false;
    assert_eq!(readiness(None, &startup), Readiness::Joining);
    assert_eq!(readiness(Some(&n), &startup), Readiness::Joining);
    n.ready = true;
    n.taints
        .push(Taint::new("agent.io/not-ready", "", Effect::NoSchedule));
    assert_eq!(readiness(Some(&n), &startup), Readiness::Initializing);
    n.taints.clear();
    assert_eq!(readiness(Some(&n), &startup), Readiness::Ready);
    // `initialization.go`: the known ephemeral taints gone too, and what the NodeClaim requested
    // allocatable (a device plugin registered it). Differed: we drained onto a node that a
    // `readiness.k8s.io/*` taint, or a missing `example.com/dongle`, kept uninitialized.
    n.taints
        .push(Taint::new("readiness.k8s.io/cni", "", Effect::NoSchedule));
    assert_eq!(readiness(Some(&n), &startup), Readiness::Initializing);
    n.taints.clear();
    n.allocatable.set("example.com/dongle", 0);
    assert_eq!(readiness(Some(&n), &startup), Readiness::Initializing);
    n.allocatable.set("example.com/dongle", 1000);
    assert_eq!(readiness(Some(&n), &startup), Readiness::Ready);
    // Adopted from a record: Ready is not enough until the type label is there.
    n.labels.insert(
        crate::model::labels::INSTANCE_TYPE.into(),
        "c6a.large".into(),
    );
    assert_eq!(adopted_readiness(Some(&n), &startup), Readiness::Ready);
    n.labels.remove(crate::model::labels::INSTANCE_TYPE);
    assert_eq!(
        adopted_readiness(Some(&n), &startup),
        Readiness::Initializing
    );

    let timeout = secs(600);
    let both = [Readiness::Ready, Readiness::Initializing];
    assert_eq!(
        launching_next(&both, &[], secs(599), timeout),
        LaunchingNext::Wait
    );
    assert_eq!(
        launching_next(&both, &[], secs(600), timeout),
        LaunchingNext::RollBack(Detail::NotReady { after: timeout })
    );
    assert_eq!(
        launching_next(&[Readiness::Ready; 2], &[], secs(600), timeout),
        LaunchingNext::Drain
    );
    assert_eq!(
        launching_next(&[], &[], secs(0), timeout),
        LaunchingNext::Drain
    );
    // A replacement's instance gone: rolled back at once, long before the timeout.
    let gone = vec!["i-2".to_string()];
    assert_eq!(
        launching_next(&both, &gone, secs(5), timeout),
        LaunchingNext::RollBack(Detail::ReplacementGone(gone.clone()))
    );
}

fn plan_evicting(pods: &[&str]) -> DrainPlan {
    let mut plan = DrainPlan::default();
    plan.tiers.insert(
        crate::disruption::drain::Tier::NonCritical,
        pods.iter().map(|p| p.to_string()).collect(),
    );
    plan
}

#[test]
fn a_drain_paces_its_passes_and_names_what_holds_it_at_the_timeout() {
    let timeout = secs(60);
    let mut drain = Drain::new(secs(0));
    assert!(drain.due(secs(0)));
    // An eviction goes through: the next pass comes quickly.
    let plan = plan_evicting(&["default/a"]);
    let pass = Drain::pass(&plan, &[]);
    assert!(!pass.drained());
    assert!(!drain.answered("default/a", &Eviction::Evicted));
    drain
        .end_pass(&pass, &plan, &[Eviction::Evicted], secs(0), timeout)
        .unwrap();
    assert_eq!(drain.evicted(), ["default/a"]);
    assert!(!drain.due(secs(0)) && drain.due(FIRST_BACKOFF));
    // A PDB refuses: reported once, then backed off exponentially up to the maximum.
    let refusal = Eviction::Refused("The disruption budget pdb needs more healthy pods".into());
    assert!(drain.answered("default/a", &refusal));
    assert!(
        !drain.answered("default/a", &refusal),
        "the same refusal is not reported again"
    );
    let mut now = secs(1);
    let mut waits = Vec::new();
    for _ in 0..6 {
        drain
            .end_pass(&pass, &plan, std::slice::from_ref(&refusal), now, timeout)
            .unwrap();
        let wait = (0..)
            .map(|ms| now + Duration::from_millis(ms * 100))
            .find(|t| drain.due(*t))
            .unwrap()
            - now;
        waits.push(wait.as_millis());
        now += wait;
    }
    assert_eq!(waits, [400, 800, 1600, 3200, 5000, 5000]);
    // Past the timeout: the last refusal names the PDB.
    assert_eq!(
        drain.end_pass(
            &pass,
            &plan,
            std::slice::from_ref(&refusal),
            secs(60),
            timeout
        ),
        Err(Holding::Named(
            "The disruption budget pdb needs more healthy pods".into()
        ))
    );
    // Without a refusal: the blockers of the plan, else the pods still terminating.
    let mut blocked = DrainPlan::default();
    blocked.blockers.push(Blocker::PodDoNotDisrupt {
        pod: "default/b".into(),
        annotation: "karpenter.sh/do-not-disrupt",
        value: "true".into(),
    });
    let waiting = Drain::pass(&blocked, &[]);
    assert!(waiting.waits_for_do_not_disrupt && !waiting.drained());
    assert_eq!(
        Drain::new(secs(0)).end_pass(&waiting, &blocked, &[], secs(60), timeout),
        Err(Holding::Named(blocked.explain_blockers()))
    );
    let terminating = Pass {
        evict: Vec::new(),
        terminating: 2,
        waits_for_do_not_disrupt: false,
    };
    assert_eq!(
        Drain::new(secs(0)).end_pass(&terminating, &DrainPlan::default(), &[], secs(60), timeout),
        Err(Holding::Terminating(2))
    );
    // While pods terminate: a steady second.
    let mut steady = Drain::new(secs(0));
    steady
        .end_pass(&terminating, &DrainPlan::default(), &[], secs(0), timeout)
        .unwrap();
    assert!(!steady.due(secs(0)) && steady.due(TERMINATING_POLL));
    assert!(Drain::pass(&DrainPlan::default(), &[]).drained());
}

#[test]
fn three_failures_in_a_row_stop_the_queue_and_a_success_resets() {
    let mut failures = Failures::default();
    let launch = Detail::LaunchFailed("no capacity".into());
    failures.count(Status::RolledBack, &launch);
    failures.count(Status::Blocked, &Detail::Blocker("x".into()));
    failures.count(Status::RolledBack, &launch);
    assert!(!failures.too_many());
    failures.count(Status::Replaced, &Detail::None);
    for _ in 0..FAILURES_IN_A_ROW {
        failures.count(Status::Failed, &launch);
    }
    assert!(failures.too_many());
    assert_eq!(
        failures.why(),
        Some(Detail::AfterFailures {
            in_a_row: 3,
            last: Box::new(launch)
        })
    );
}

#[test]
fn statuses_keep_their_report_spelling() {
    let all = [
        Status::Planned,
        Status::Queued,
        Status::Blocked,
        Status::WaitingBudget,
        Status::Replaced,
        Status::RolledBack,
        Status::Failed,
        Status::Gone,
        Status::Skipped,
    ];
    let spelled: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        spelled,
        [
            "planned",
            "queued",
            "blocked",
            "waiting-budget",
            "replaced",
            "rolled-back",
            "failed",
            "gone",
            "skipped"
        ]
    );
    assert!(Status::RolledBack.is_failure() && Status::Failed.is_failure());
    assert!(!Status::Blocked.is_failure());
}

#[test]
fn slots_follow_the_budget_of_the_method_s_reason() {
    let p = pool_with_reason_budgets(&[("0", "Underutilized"), ("2", "Empty")]);
    let pools = std::slice::from_ref(&p);
    let nodes = cluster(10);
    let free = |method: Method| free_slots_for(pools, &nodes, method, 0).free("default");
    assert_eq!(free(Method::EmptyDelete), Some(2));
    assert_eq!(free(Method::ConsolidationDelete), Some(0));
    assert_eq!(free(Method::ConsolidationReplace), Some(0));
    assert_eq!(
        free(Method::Drift),
        None,
        "no budget for Drifted: unlimited"
    );
    assert!(Method::EmptyDelete.is_delete() && !Method::ConsolidationReplace.is_delete());
}

/// `consolidate --yes` queues v1 expirations (no budget) beside consolidations (their reason's
/// budget, here `Empty: 1`, `Underutilized: 0`): each node is held to its own method's, and
/// an expiration that starts counts against the others' (core v1.14.1 `disruption/helpers.go`
/// `BuildDisruptionBudgetMapping`). Before, a run followed its first node's method, so an
/// expiration first left the consolidations unlimited (the mutating fuzzer's round 3, seeds
/// 332 and 388).
#[test]
fn a_queue_of_expirations_and_consolidations_holds_each_to_its_own_budget() {
    let p = pool_with_reason_budgets(&[("0", "Underutilized"), ("1", "Empty")]);
    let of = |name: &str, method: Method, outcome: usize| {
        let mut q = queued(name, "default", false, outcome);
        q.action.method = method;
        q.action.pool = p.clone();
        q
    };
    let nodes = cluster(10);
    let pools = std::slice::from_ref(&p);
    let mut queue: VecDeque<Queued> = vec![
        of("expired-1", Method::Expiration, 0),
        of("underused", Method::ConsolidationDelete, 1),
        of("expired-2", Method::Expiration, 2),
        of("empty", Method::EmptyDelete, 3),
    ]
    .into();
    let slots = QueueSlots::for_queue(pools, &nodes, &queue, 0);
    let picked = pick(&mut queue, slots, 10, secs(0));
    let names: Vec<&str> = picked.iter().map(|q| q.action.node.name.as_str()).collect();
    assert_eq!(
        names,
        ["expired-1", "expired-2"],
        "the expirations go; the first took the empty node's one slot too"
    );
    let left: Vec<&str> = queue.iter().map(|q| q.action.node.name.as_str()).collect();
    assert_eq!(left, ["underused", "empty"]);
    // Alone, the empty node has its slot.
    let mut queue: VecDeque<Queued> = vec![of("empty", Method::EmptyDelete, 0)].into();
    let slots = QueueSlots::for_queue(pools, &nodes, &queue, 0);
    assert_eq!(pick(&mut queue, slots, 10, secs(0)).len(), 1);
}

/// v1 expiration is forceful (`core v1.x pkg/controllers/nodeclaim/expiration/controller.go`,
/// suite_test "should remove nodeclaims that are expired": deleted with no budget consulted);
/// v1beta1 expiration is budgeted (`v0.37 pkg/controllers/disruption/expiration.go`,
/// expiration_test "should allow no empty nodes to be disrupted").
#[test]
fn v1_expiration_ignores_budgets_while_v1beta1_expiration_keeps_them() {
    let blocked = |generation| {
        let mut p = pool("default", None);
        p.generation = Some(generation);
        p.disruption.budgets = vec![Budget {
            nodes: "0".into(),
            ..Budget::default()
        }];
        p
    };
    let nodes = cluster(10);
    let v1 = blocked(ApiGeneration::V1);
    let v1beta1 = blocked(ApiGeneration::V1Beta1);
    assert!(Method::Expiration.is_forceful(&v1) && !Method::Expiration.is_forceful(&v1beta1));
    let free = |p: &NodePool, method| {
        free_slots_for(std::slice::from_ref(p), &nodes, method, 0).free("default")
    };
    assert_eq!(free(&v1, Method::Expiration), None, "v1: no budget");
    assert_eq!(free(&v1, Method::Drift), Some(0), "drift stays budgeted");
    assert_eq!(
        free(&v1beta1, Method::Expiration),
        Some(0),
        "v1beta1: budgeted"
    );
    assert!(!Method::Expiration.is_delete());
    assert_eq!(Method::Expiration.as_str(), "expiration");
    assert_eq!(
        serde_json::from_str::<Method>("\"expiration\"").unwrap(),
        Method::Expiration
    );
}

/// `core v1.14.1: node/termination/controller.go awaitVolumeDetachment`,
/// `filterVolumeAttachments`: an inline volume's attachment and one of a volume held by a pod
/// the drain leaves never block; the rest are waited for until the NodeClaim's grace period
/// (terminate regardless) or the timeout (stop).
#[test]
fn detaching_waits_for_the_attachments_of_drainable_volumes_only() {
    let a = |name: &str, pv: Option<&str>| Attachment {
        name: name.into(),
        volume: pv.map(str::to_string),
    };
    let held: BTreeSet<String> = ["pv-held".to_string()].into();
    let all = [
        a("csi-b", Some("pv-b")),
        a("csi-inline", None),
        a("csi-held", Some("pv-held")),
        a("csi-a", Some("pv-a")),
    ];
    assert_eq!(blocking_attachments(&all, &held), ["csi-a", "csi-b"]);
    let s = Duration::from_secs;
    let plain = Detaching::new(s(10), None);
    let graced = Detaching::new(s(10), Some(s(60)));
    let left = || vec!["csi-a".to_string()];
    assert_eq!(
        detach_next(&plain, vec![], s(10), s(100)),
        DetachNext::Terminate
    );
    assert_eq!(
        detach_next(&plain, left(), s(109), s(100)),
        DetachNext::Wait(left())
    );
    assert_eq!(
        detach_next(&plain, left(), s(110), s(100)),
        DetachNext::TimedOut(left())
    );
    assert_eq!(
        detach_next(&graced, left(), s(59), s(100)),
        DetachNext::Wait(left())
    );
    assert_eq!(
        detach_next(&graced, left(), s(60), s(100)),
        DetachNext::GraceElapsed(left())
    );
}

/// docs/spec.md §5.6: the `ReplacementReport`'s `outcome` is one of four words, every status
/// mapped — the finer status stays beside it.
#[test]
fn every_status_has_one_of_the_four_outcomes_the_contract_names() {
    let table = [
        (Status::Planned, "skipped"),
        (Status::Queued, "skipped"),
        (Status::Blocked, "blocked"),
        (Status::WaitingBudget, "blocked"),
        (Status::Replaced, "replaced"),
        (Status::Deleted, "replaced"),
        (Status::RolledBack, "failed"),
        (Status::Failed, "failed"),
        (Status::Gone, "skipped"),
        (Status::Skipped, "skipped"),
    ];
    for (status, want) in table {
        assert_eq!(status.outcome().as_str(), want, "{status:?}");
        assert_eq!(
            status.is_failure(),
            want == "failed",
            "{status:?}: a failure is the failed outcome"
        );
    }
}
