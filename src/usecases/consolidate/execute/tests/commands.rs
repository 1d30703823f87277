//! A multi-node consolidation carried out as one command, as Karpenter's queue does
//! (`core v1.14.1 pkg/controllers/disruption/queue.go StartCommand`, `waitOrTerminate`,
//! `Reconcile`; `controller.go disrupt`): every node marked before the launch, ONE replacement
//! NodeClaim for all their pods (consolidation_test "can merge 3 nodes into 1 if the candidates
//! have both spot and on-demand"), Ready before any drain (queue_test "should only finish a
//! command when all replacements are initialized"); a replacement that never becomes Ready rolls
//! every node back (queue_test "should untaint nodes when a command times out"); a killed run
//! resumes the command, launching nothing twice.

use super::*;

/// Two c6a.2xlarge nodes with one 1-CPU pod each: the engine replaces both with one cheaper
/// NodeClaim (multi-node consolidation).
fn two_under_used(world: &World) -> [String; 2] {
    [
        managed(world, "c6a.2xlarge", &["p0"]),
        managed(world, "c6a.2xlarge", &["p1"]),
    ]
}

/// The index in the request log of the first record on `node` at `step`.
fn recorded_at(world: &World, node: &str, step: Step) -> usize {
    world
        .cluster
        .requests()
        .iter()
        .position(|r| {
            r.method == crate::k8s::Method::Patch
                && r.path.ends_with(node)
                && r.body["metadata"]["annotations"][REPLACEMENT]
                    .as_str()
                    .and_then(Record::parse)
                    .is_some_and(|rec| rec.step == step)
        })
        .unwrap_or_else(|| panic!("{node} never recorded {step:?}"))
}

#[test]
fn a_multi_node_replacement_marks_all_launches_one_and_drains_all_once_it_is_ready() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let [a, b] = two_under_used(&world);
    let run = run(&world);
    assert_eq!(
        run.rounds,
        [vec![a.clone(), b.clone()]],
        "{:#?}",
        run.outcomes
    );
    for n in [&a, &b] {
        let o = run.outcome(n);
        assert_eq!(o.status, Status::Replaced, "{o:?}");
        assert!(
            o.reason.starts_with("multi: replace with") && o.reason.contains("2 nodes together"),
            "{}",
            o.reason
        );
    }
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1, "one launch for both");
    assert_eq!(instance_types_launched(&world).len(), 1);
    // Both marked before the launch, the same NodeClaim and instance recorded on both.
    let launched = recorded_at(&world, &a, Step::Launched);
    assert!(recorded_at(&world, &b, Step::Marked) < launched);
    let (ra, rb) = (records(&world, &a), records(&world, &b));
    assert_eq!(ra[0].command, [a.clone(), b.clone()]);
    assert_eq!(ra[0].node_claims, rb[0].node_claims);
    let last = |r: &[Record]| {
        r.iter()
            .find(|r| r.step == Step::Launched)
            .cloned()
            .unwrap()
    };
    assert_eq!(last(&ra).instances, last(&rb).instances);
    assert_eq!(last(&ra).instances.len(), 1);
    assert_eq!(rb[0].method, Method::ConsolidationReplace);
    assert!(!present(&world.cluster, &a) && !present(&world.cluster, &b));
    assert_eq!(
        pending(&world),
        Vec::<String>::new(),
        "both pods on the new node"
    );
    assert_eq!(replace::verdict(&run.outcomes).unwrap(), Exit::Ok);
}

#[test]
fn a_multi_node_replacement_never_ready_rolls_every_node_back_and_terminates_it_once() {
    // No kubelet: the replacement never registers.
    let world = World::new();
    world.scheduler();
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]}}),
    ));
    world.replica_set(2);
    let [a, b] = two_under_used(&world);
    let deciding = Deciding::default();
    let mut settings = settings();
    settings.ready_timeout = Duration::from_secs(60);
    let mut live = world.live();
    let mut sink = |_| {};
    let records = &mut Default::default();
    let outcomes = execute(
        &mut live,
        &deciding,
        &settings,
        records,
        &mut sink,
        &mut |_, _| Ok(true),
    )
    .unwrap();
    for n in [&a, &b] {
        let o = outcomes.iter().find(|o| &o.node == n).unwrap();
        assert_eq!(o.status, Status::RolledBack, "{o:?}");
        assert_eq!(
            o.detail,
            Detail::NotReady {
                after: Duration::from_secs(60)
            }
        );
        let node = world.cluster.get("v1", "Node", None, n).unwrap();
        assert!(node["spec"]["unschedulable"].is_null() || node["spec"]["unschedulable"] == false);
        assert!(node["metadata"]["annotations"][REPLACEMENT].is_null());
        assert!(!node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["key"] == "karpenter.sh/disrupted"));
    }
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    assert_eq!(
        calls(&world, "EC2.TerminateInstances"),
        1,
        "the one replacement"
    );
    assert_eq!(pending(&world), Vec::<String>::new(), "no pod moved");
    assert_eq!(replace::verdict(&outcomes).unwrap_err().exit, Exit::Remote);
}

/// Leaves both nodes as a run killed after marking them as one command would.
fn killed_after_marking(world: &World, a: &str, b: &str) -> String {
    let claim = "default-0123456789".to_string();
    for n in [a, b] {
        let mut r = record(
            Step::Marked,
            Method::ConsolidationReplace,
            std::slice::from_ref(&claim),
            &[],
        );
        r.command = vec![a.to_string(), b.to_string()];
        killed_at(world, n, &r);
    }
    claim
}

#[test]
fn killed_after_marking_a_command_it_launches_once_for_both_on_resume() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let [a, b] = two_under_used(&world);
    killed_after_marking(&world, &a, &b);
    let run = run(&world);
    assert_eq!(run.status(&a), Status::Replaced, "{:#?}", run.outcomes);
    assert_eq!(run.status(&b), Status::Replaced);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1, "one launch for both");
    assert_eq!(pending(&world), Vec::<String>::new());
    let again = run_with(&world, &Config::default(), |_| {});
    assert!(again.outcomes.is_empty(), "{:#?}", again.outcomes);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn killed_after_the_command_launched_the_others_follow_the_adopted_replacement() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let [a, b] = two_under_used(&world);
    let claim = killed_after_marking(&world, &a, &b);
    let (launched, id) = launched_before(&world, "c6a.xlarge");
    // The first node recorded the launch; the run died before the second did.
    let mut r = record(
        Step::Launched,
        Method::ConsolidationReplace,
        &[claim],
        std::slice::from_ref(&id),
    );
    r.command = vec![a.clone(), b.clone()];
    killed_at(&world, &a, &r);
    let run = run(&world);
    assert_eq!(run.status(&a), Status::Replaced, "{:#?}", run.outcomes);
    assert_eq!(run.status(&b), Status::Replaced);
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        0,
        "adopted, never launched again"
    );
    let rb = records(&world, &b);
    assert!(rb
        .iter()
        .any(|r| r.step == Step::Launched && r.instances == [id.clone()]));
    assert_eq!(pending(&world), Vec::<String>::new());
    let on_it = world
        .cluster
        .list("v1", "Pod")
        .iter()
        .filter(|p| p["spec"]["nodeName"] == launched.as_str())
        .count();
    assert_eq!(on_it, 2, "both pods on the adopted replacement");
}

#[test]
fn killed_between_the_marks_of_a_command_the_unmarked_node_joins_it_on_resume() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let [a, b] = two_under_used(&world);
    let mut r = record(
        Step::Marked,
        Method::ConsolidationReplace,
        &["default-0123456789".into()],
        &[],
    );
    r.command = vec![a.clone(), b.clone()];
    killed_at(&world, &a, &r);
    let run = run(&world);
    assert_eq!(run.rounds.len(), 1, "{:?}", run.rounds);
    assert_eq!(run.status(&a), Status::Replaced, "{:#?}", run.outcomes);
    assert_eq!(run.status(&b), Status::Replaced);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1, "one launch for both");
    assert_eq!(records(&world, &b)[0].command, [a.clone(), b.clone()]);
    assert_eq!(pending(&world), Vec::<String>::new());
}

#[test]
fn a_blocker_on_any_node_of_a_command_stops_the_whole_command() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let [a, b] = two_under_used(&world);
    let mut once = true;
    let run = run_with(&world, &Config::default(), |w| {
        if std::mem::take(&mut once) {
            w.cluster.update("v1", "Node", None, &b, |n| {
                n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
            });
        }
    });
    for n in [&a, &b] {
        let o = run.outcome(n);
        assert_eq!(o.status, Status::Blocked, "{o:?}");
        assert!(
            matches!(&o.detail, Detail::Blocker(why) if why.contains(b.as_str())),
            "{:?}",
            o.detail
        );
        let node = world.cluster.get("v1", "Node", None, n).unwrap();
        assert!(node["spec"]["unschedulable"].is_null(), "never cordoned");
    }
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(replace::verdict(&run.outcomes).unwrap(), Exit::Finding);
}
