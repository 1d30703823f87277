//! `consolidate --yes` against the fake cluster, cloud and clock: every way a decision is
//! carried out (empty node deleted, under-used node replaced by the one cheaper NodeClaim chosen,
//! under-used node deleted when its pods fit elsewhere), what stops it (a PDB at zero, named; a
//! budget per reason; a do-not-disrupt appearing between the decision and the action) and a run
//! killed at each step, resumed without launching twice.
//!
//! The world (`usecases::testing`): the kubelet registers a Ready Node 30 s after an instance
//! runs, the scheduler binds pending pods, and here a ReplicaSet makes evicted `app` pods again.
//! Types: c6a.large (2 CPU, $0.0765/h) … c6a.4xlarge; pods of 1 CPU.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::cloud::types::Cloud;
use crate::disruption::consolidation::Reason;
use crate::disruption::replace::REPLACEMENT;
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::usecases::replace;
use crate::usecases::replace::{Detail, NodeStep};
use crate::usecases::testing::{node_pool, on_demand_template, put_pending, World};

const ATTEMPT: &str = "2023-11-14T22:13:20Z";

fn settings() -> Settings {
    Settings {
        max_parallel: 100,
        force: false,
        drain_timeout: Duration::from_secs(900),
        ready_timeout: Duration::from_secs(600),
        attempt: ATTEMPT.into(),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    }
}

/// A world with the kubelet, the scheduler and the `app` ReplicaSet keeping `replicas` pods,
/// and pool `default` consolidating at once with `budgets`.
fn world(replicas: usize, budgets: Value) -> World {
    let world = World::new();
    world.kubelet(Duration::from_secs(30));
    world.scheduler();
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "0s", "budgets": budgets}}),
    ));
    world.replica_set(replicas);
    world
}

/// [`World::managed_node`].
fn managed(world: &World, instance_type: &str, pods: &[&str]) -> String {
    world.managed_node(instance_type, pods)
}

/// What a run returned and reported.
struct Run {
    outcomes: Vec<NodeOutcome>,
    events: Vec<Event>,
    rounds: Vec<Vec<String>>,
}

impl Run {
    fn status(&self, node: &str) -> Status {
        self.outcome(node).status
    }

    fn outcome(&self, node: &str) -> &NodeOutcome {
        self.outcomes
            .iter()
            .find(|o| o.node == node)
            .unwrap_or_else(|| panic!("no outcome for {node}: {:#?}", self.outcomes))
    }
}

/// Runs `consolidate --yes`; `between` runs after each round is decided, before it is carried
/// out (the cluster may change meanwhile).
fn run_with(world: &World, config: &Config, between: impl FnMut(&World)) -> Run {
    let deciding = Deciding {
        config: config.clone(),
        controller: None,
    };
    run_deciding(world, &deciding, between)
}

/// [`run_with`], deciding as `deciding` says (a running controller's gates).
fn run_deciding(world: &World, deciding: &Deciding, mut between: impl FnMut(&World)) -> Run {
    let mut live = world.live();
    deciding.prepare(&mut live);
    let events: Rc<RefCell<Vec<Event>>> = Rc::default();
    let keep = events.clone();
    let mut sink = move |e| keep.borrow_mut().push(e);
    let mut rounds = Vec::new();
    let mut proceed = |_: &Round, preview: &Preview| {
        rounds.push(
            preview
                .outcomes()
                .iter()
                .map(|o| o.node.clone())
                .collect::<Vec<_>>(),
        );
        between(world);
        Ok(true)
    };
    let records = &mut Default::default();
    let outcomes = execute(
        &mut live,
        deciding,
        &settings(),
        records,
        &mut sink,
        &mut proceed,
    )
    .unwrap();
    // A moment later every pod the ReplicaSet made again is bound.
    world.clock.sleep(Duration::from_secs(2));
    let events = events.borrow().clone();
    Run {
        outcomes,
        events,
        rounds,
    }
}

fn run(world: &World) -> Run {
    run_with(world, &Config::default(), |_| {})
}

fn calls(world: &World, operation: &str) -> u64 {
    world.cloud.call_counts().get(operation)
}

fn present(cluster: &FakeCluster, name: &str) -> bool {
    cluster.get("v1", "Node", None, name).is_some()
}

/// Pods not bound to a node.
fn pending(world: &World) -> Vec<String> {
    world
        .cluster
        .list("v1", "Pod")
        .iter()
        .filter(|p| p["spec"]["nodeName"].is_null())
        .map(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The records written on `node`, in order.
fn records(world: &World, node: &str) -> Vec<Record> {
    world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == crate::k8s::Method::Patch && r.path.ends_with(node))
        .filter_map(|r| {
            r.body["metadata"]["annotations"][REPLACEMENT]
                .as_str()
                .and_then(Record::parse)
        })
        .collect()
}

/// The methods recorded on `node`, in the order its records were written.
fn recorded_methods(world: &World, node: &str) -> Vec<Method> {
    records(world, node).into_iter().map(|r| r.method).collect()
}

/// A node of `instance_type` registered as a replacement a killed run launched: its name and
/// its instance.
fn launched_before(world: &World, instance_type: &str) -> (String, String) {
    let node = world.registered_node("default", instance_type);
    let id = world
        .running()
        .into_iter()
        .find(|i| crate::usecases::testing::node_name(&i.id) == node)
        .unwrap()
        .id;
    (node, id)
}

/// Why the engine, deciding now, leaves `node` alone.
fn why_not(world: &World, node: &str) -> Reason {
    let live = world.live();
    let round = decide(&live, &Deciding::default()).unwrap();
    round
        .report
        .unwrap()
        .nodes
        .into_iter()
        .find(|n| n.name == node)
        .and_then(|n| n.reason)
        .unwrap_or_else(|| panic!("no reason for {node}"))
}

fn instance_types_launched(world: &World) -> Vec<String> {
    world
        .running()
        .iter()
        .filter(|i| i.tags.contains_key(crate::model::labels::NODECLAIM))
        .map(|i| i.instance_type.clone())
        .collect()
}

#[test]
fn the_empty_node_is_deleted_then_the_under_used_one_replaced_by_the_cheaper_type_chosen() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let empty = managed(&world, "c6a.large", &[]);
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);

    let run = run(&world);
    assert_eq!(
        run.rounds,
        [vec![empty.clone()], vec![under_used.clone()]],
        "one action per round, decided again after each"
    );
    assert_eq!(run.status(&empty), Status::Deleted);
    assert_eq!(recorded_methods(&world, &empty)[0], Method::EmptyDelete);
    assert_eq!(run.status(&under_used), Status::Replaced);
    assert_eq!(
        recorded_methods(&world, &under_used)[0],
        Method::ConsolidationReplace
    );
    assert!(
        run.outcome(&under_used)
            .reason
            .starts_with("single: replace with c6a.large"),
        "{}",
        run.outcome(&under_used).reason
    );
    // One launch — the type the engine chose — and both old instances terminated.
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    assert_eq!(instance_types_launched(&world), ["c6a.large"]);
    assert!(!present(&world.cluster, &empty) && !present(&world.cluster, &under_used));
    assert_eq!(pending(&world), Vec::<String>::new(), "no pod left pending");
    assert_eq!(replace::verdict(&run.outcomes).unwrap(), Exit::Ok);
}

/// With the `CapacityBuffer` gate on, every round reads the buffers as the report does; what
/// that read has to say (here: the cluster serves no CapacityBuffer CRD) is told once per run,
/// not once per round.
#[test]
fn what_the_buffer_read_says_is_told_once_over_the_rounds() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let empty = managed(&world, "c6a.large", &[]);
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    let config = Config {
        capacity_buffer: Some(true),
        ..Config::default()
    };
    let run = run_with(&world, &config, |_| {});
    assert_eq!(run.rounds, [vec![empty], vec![under_used]]);
    let warnings: Vec<&String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Warning(w) if w.contains("CapacityBuffer") => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("serves no autoscaling.x-k8s.io/v1beta1 CapacityBuffers"),
        "{warnings:?}"
    );
}

#[test]
fn an_under_used_node_whose_pods_fit_elsewhere_is_deleted_without_a_launch() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let a = managed(&world, "c6a.xlarge", &["p0"]);
    let b = managed(&world, "c6a.xlarge", &["p1"]);

    let run = run(&world);
    let deleted: Vec<&String> = [&a, &b]
        .into_iter()
        .filter(|n| run.outcomes.iter().any(|o| &&o.node == n))
        .collect();
    assert_eq!(deleted.len(), 1, "{:#?}", run.outcomes);
    assert_eq!(run.status(deleted[0]), Status::Deleted);
    assert_eq!(
        recorded_methods(&world, deleted[0])[0],
        Method::ConsolidationDelete
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0, "nothing launched");
    assert_eq!(pending(&world), Vec::<String>::new(), "the pod moved over");
}

#[test]
fn a_multi_node_delete_takes_its_nodes_together_and_packs_their_pods_on_the_one_that_stays() {
    let world = world(3, json!([{"nodes": "100%"}]));
    let nodes: Vec<String> = (0..3)
        .map(|i| managed(&world, "c6a.xlarge", &[&format!("p{i}")]))
        .collect();
    let run = run(&world);
    assert_eq!(run.rounds.len(), 1, "{:?}", run.rounds);
    assert_eq!(run.rounds[0].len(), 2, "two nodes in one action");
    for o in &run.outcomes {
        assert_eq!(o.status, Status::Deleted, "{o:?}");
        assert!(
            o.reason.starts_with("multi: delete (2 nodes together)"),
            "{}",
            o.reason
        );
    }
    let stays: Vec<&String> = nodes
        .iter()
        .filter(|n| present(&world.cluster, n))
        .collect();
    assert_eq!(stays.len(), 1);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(pending(&world), Vec::<String>::new());
    let on_it = world
        .cluster
        .list("v1", "Pod")
        .iter()
        .filter(|p| p["spec"]["nodeName"] == stays[0].as_str())
        .count();
    assert_eq!(on_it, 3, "every pod on the node that stays");
}

#[test]
fn a_pdb_at_zero_keeps_its_node_and_is_named_while_the_empty_node_goes() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let empty = managed(&world, "c6a.large", &[]);
    let guarded = managed(&world, "c6a.2xlarge", &["p0"]);
    world.cluster.put(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "app"}}},
        "status": {"disruptionsAllowed": 0}
    }));

    let live = world.live();
    let round = decide(&live, &Deciding::default()).unwrap();
    let report = round.report.unwrap();
    let reason = report
        .nodes
        .iter()
        .find(|n| n.name == guarded)
        .and_then(|n| n.reason.clone())
        .unwrap();
    assert!(matches!(&reason, Reason::Pdb { pdb, allowed: 0, .. } if pdb == "default/app"));
    assert!(reason.to_string().contains("default/app"), "{reason}");

    let run = run(&world);
    assert_eq!(run.status(&empty), Status::Deleted);
    assert!(run.outcomes.iter().all(|o| o.node != guarded));
    assert!(present(&world.cluster, &guarded));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn budgets_are_kept_per_reason_and_never_exceeded() {
    // Empty: one at a time; Underutilized: none.
    let world = world(
        1,
        json!([{"nodes": "1", "reasons": ["Empty"]}, {"nodes": "0", "reasons": ["Underutilized"]}]),
    );
    let empties: Vec<String> = (0..3).map(|_| managed(&world, "c6a.large", &[])).collect();
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    let peak = Rc::new(RefCell::new(0usize));
    let (keep, cluster) = (peak.clone(), world.cluster.clone());
    world.clock.on_tick(move |_| {
        let marked = cluster
            .list("v1", "Node")
            .iter()
            .filter(|n| n["metadata"]["annotations"][REPLACEMENT].is_string())
            .count();
        let mut p = keep.borrow_mut();
        *p = (*p).max(marked);
    });

    let run = run(&world);
    for e in &empties {
        assert_eq!(run.status(e), Status::Deleted);
    }
    assert_eq!(
        run.rounds.len(),
        3,
        "one empty node per round: {:?}",
        run.rounds
    );
    assert_eq!(
        *peak.borrow(),
        1,
        "the Empty budget of one is never exceeded"
    );
    assert!(run.outcomes.iter().all(|o| o.node != under_used));
    assert!(present(&world.cluster, &under_used));
    let reason = why_not(&world, &under_used);
    assert!(matches!(reason, Reason::Budget { .. }), "{reason:?}");
}

#[test]
fn a_do_not_disrupt_appearing_between_decision_and_action_aborts_that_node() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    let mut once = true;
    let run = run_with(&world, &Config::default(), |w| {
        if std::mem::take(&mut once) {
            w.cluster.update("v1", "Node", None, &under_used, |n| {
                n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
            });
        }
    });
    let o = run.outcome(&under_used);
    assert_eq!(o.status, Status::Blocked);
    assert!(
        matches!(&o.detail, Detail::Blocker(why) if why.contains("do-not-disrupt")),
        "{:?}",
        o.detail
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    let node = world.cluster.get("v1", "Node", None, &under_used).unwrap();
    assert!(node["spec"]["unschedulable"].is_null(), "never cordoned");
    assert_eq!(run.rounds.len(), 1, "decided again: nothing else to do");
    assert_eq!(replace::verdict(&run.outcomes).unwrap(), Exit::Finding);
}

#[test]
fn a_replacement_that_no_longer_matches_the_choice_is_not_started() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    let mut once = true;
    // A pod of 6 CPU lands on the node after the decision: no type cheaper than the node's
    // (the options chosen) holds its pods now.
    let run = run_with(&world, &Config::default(), |w| {
        if std::mem::take(&mut once) {
            put_pending(&w.cluster, "late", "6");
            w.cluster.update("v1", "Pod", Some("default"), "late", |p| {
                p["spec"]["nodeName"] = json!(under_used);
                p["status"] = json!({"phase": "Running",
                    "conditions": [{"type": "PodScheduled", "status": "True"}]});
            });
        }
    });
    let o = run.outcome(&under_used);
    assert_eq!(o.status, Status::Blocked, "{o:?}");
    assert!(
        matches!(o.detail, Detail::DecisionChanged(_)),
        "{:?}",
        o.detail
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    let _ = run.events;
}

#[test]
fn only_selected_nodes_are_acted_on() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let kept = managed(&world, "c6a.large", &[]);
    let chosen = managed(&world, "c6a.large", &[]);
    let config = Config {
        nodes: vec![chosen.clone()],
        ..Config::default()
    };
    let run = run_with(&world, &config, |_| {});
    assert_eq!(run.status(&chosen), Status::Deleted);
    assert!(present(&world.cluster, &kept));
    let unknown = Config {
        nodes: vec!["nope".into()],
        ..Config::default()
    };
    let live = world.live();
    let unknown = Deciding {
        config: unknown,
        controller: None,
    };
    let e = decide(&live, &unknown).unwrap_err();
    assert_eq!(e.exit, Exit::Input);
}

/// Leaves `name` as a run killed right after recording `record` would.
fn killed_at(world: &World, name: &str, record: &Record) {
    world.cluster.update("v1", "Node", None, name, |n| {
        n["metadata"]["annotations"] = json!({REPLACEMENT: record.format()});
        n["spec"]["unschedulable"] = json!(true);
        n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    });
}

fn record(step: Step, method: Method, claims: &[String], instances: &[String]) -> Record {
    Record {
        step,
        method,
        node_claims: claims.to_vec(),
        instances: instances.to_vec(),
        reason: "single: replace with c6a.large, saves $0.2295/h".into(),
        started_at: "2023-11-14T20:00:00Z".into(),
        cordoned_before: false,
        command: Vec::new(),
        annotations: Default::default(),
    }
}

#[test]
fn killed_after_marking_a_replacement_it_launches_once_on_resume() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let node = managed(&world, "c6a.2xlarge", &["p0"]);
    let claim = "default-0123456789".to_string();
    killed_at(
        &world,
        &node,
        &record(Step::Marked, Method::ConsolidationReplace, &[claim], &[]),
    );
    let run = run(&world);
    assert_eq!(run.status(&node), Status::Replaced);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    // A second run finds nothing left to do: nothing launched again.
    let again = run_with(&world, &Config::default(), |_| {});
    assert!(again.outcomes.is_empty(), "{:#?}", again.outcomes);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn killed_after_launching_it_adopts_the_recorded_instance() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let node = managed(&world, "c6a.2xlarge", &["p0"]);
    let (_, id) = launched_before(&world, "c6a.large");
    killed_at(
        &world,
        &node,
        &record(
            Step::Launched,
            Method::ConsolidationReplace,
            &["default-0123456789".into()],
            &[id],
        ),
    );
    let run = run(&world);
    assert_eq!(run.status(&node), Status::Replaced);
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        0,
        "adopted, never launched again"
    );
    assert!(run.events.iter().any(|e| matches!(
        e,
        Event::Node {
            step: NodeStep::Resuming(_),
            ..
        }
    )));
    assert_eq!(pending(&world), Vec::<String>::new());
}

#[test]
fn killed_after_draining_a_delete_it_only_finishes() {
    let world = world(0, json!([{"nodes": "100%"}]));
    let node = managed(&world, "c6a.large", &[]);
    killed_at(
        &world,
        &node,
        &record(Step::Drained, Method::EmptyDelete, &[], &[]),
    );
    let run = run(&world);
    assert_eq!(run.status(&node), Status::Deleted);
    assert!(!present(&world.cluster, &node));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn killed_after_marking_a_delete_it_deletes_without_a_launch() {
    let world = world(2, json!([{"nodes": "100%"}]));
    let keep = managed(&world, "c6a.xlarge", &["p0"]);
    let node = managed(&world, "c6a.xlarge", &["p1"]);
    killed_at(
        &world,
        &node,
        &record(Step::Marked, Method::ConsolidationDelete, &[], &[]),
    );
    let run = run(&world);
    assert_eq!(run.status(&node), Status::Deleted);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert!(present(&world.cluster, &keep));
    assert_eq!(pending(&world), Vec::<String>::new());
}

/// A node a killed `drift replace` left marked (its record, method `drift`).
fn killed_drift_replace() -> (World, String) {
    let world = world(1, json!([{"nodes": "100%"}]));
    let drifting = managed(&world, "c6a.large", &[]);
    killed_at(
        &world,
        &drifting,
        &record(Step::Marked, Method::Drift, &[], &[]),
    );
    (world, drifting)
}

#[test]
fn a_node_in_drift_replacement_is_not_consolidated() {
    let (world, drifting) = killed_drift_replace();
    let run = run(&world);
    assert!(run.outcomes.is_empty(), "{:#?}", run.outcomes);
    assert!(present(&world.cluster, &drifting));
    // Left to `drift replace`, and said so once: the node and its record, for the command
    // that resumes it (docs/consolidation.md "Resumable").
    let told: Vec<&Event> = run
        .events
        .iter()
        .filter(|e| matches!(e, Event::LeftToDriftReplace { .. }))
        .collect();
    match told.as_slice() {
        [Event::LeftToDriftReplace { node, record }] => {
            assert_eq!(node, &drifting);
            assert!(record.contains("\"drift\""), "{record}");
        }
        other => panic!("{other:#?}"),
    }
}

/// `consolidate --watch` keeps what it told across its passes: a record a killed `drift
/// replace` left is said once while it stays as written (not on every pass), again when it
/// changes, and a new run says it afresh (docs/consolidation.md "Resumable").
#[test]
fn a_drift_record_is_told_once_across_watch_passes_and_again_when_it_changes() {
    let (world, drifting) = killed_drift_replace();
    let mut live = world.live();
    let deciding = Deciding::default();
    deciding.prepare(&mut live);
    let mut watched = ToldRecords::default();
    let mut pass = |records: &mut ToldRecords| {
        let mut told = Vec::new();
        let mut sink = |e: Event| {
            if let Event::LeftToDriftReplace { node, .. } = e {
                told.push(node);
            }
        };
        let outcomes = execute(
            &mut live,
            &deciding,
            &settings(),
            records,
            &mut sink,
            &mut |_, _| Ok(true),
        )
        .unwrap();
        assert!(outcomes.is_empty(), "{outcomes:#?}");
        told
    };
    assert_eq!(pass(&mut watched), std::slice::from_ref(&drifting));
    assert!(pass(&mut watched).is_empty(), "said again on the next pass");
    // Another attempt rewrote the record: said again, once.
    killed_at(
        &world,
        &drifting,
        &record(Step::Drained, Method::Drift, &[], &[]),
    );
    assert_eq!(pass(&mut watched), std::slice::from_ref(&drifting));
    assert!(pass(&mut watched).is_empty());
    // A new run (not a watch pass) says it.
    assert_eq!(pass(&mut ToldRecords::default()), [drifting]);
}

mod commands;
mod expiration;
mod ghosts;

/// A pool whose class selects an ODCR of one c6a.xlarge in us-east-1a, and an under-used
/// c6a.2xlarge node of it running `p0`.
fn under_used_beside_a_reservation() -> (World, String) {
    let world = world(1, json!([{"nodes": "100%"}]));
    world.reserved_pool(
        json!([{"id": "cr-0a1"}]),
        json!({"consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]}),
        vec![crate::usecases::testing::odcr(
            "cr-0a1",
            "c6a.xlarge",
            "us-east-1a",
            1,
        )],
    );
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    (world, under_used)
}

/// Reservations in the decision (docs/karpenter.md §6.12): the class selects an ODCR of one
/// c6a.xlarge, which Karpenter prices at on-demand / 10,000,000 — so the under-used c6a.2xlarge
/// is replaced into the reservation (a launch template targeting it), not by the cheapest
/// on-demand type the plain catalog would offer.
#[test]
fn an_under_used_node_is_replaced_into_a_capacity_reservation() {
    let (world, under_used) = under_used_beside_a_reservation();

    let run = run(&world);
    assert_eq!(
        run.status(&under_used),
        Status::Replaced,
        "{:#?}",
        run.outcomes
    );
    assert_eq!(instance_types_launched(&world), ["c6a.xlarge"]);
    let templates = world.cloud.templates.borrow();
    let requests = world.cloud.fleet_requests.borrow();
    let template = &templates[&requests[0].configs[0].0];
    assert_eq!(
        template.reservation.as_ref().map(|r| r.id.as_str()),
        Some("cr-0a1")
    );
    assert_eq!(world.cloud.reservations.borrow()[0].available, 0);
}

/// s27-lineaws — the same world, the controller's `ReservedCapacity` gate off: Karpenter's
/// simulation offers no reserved capacity (`aws v1.14.1: pkg/providers/instancetype/offering/
/// reserved_capacity_resolver.go`) and its templates say no capacity reservation preference
/// (`launchtemplate/types.go`), so the under-used node is replaced by the cheapest on-demand
/// type, launched from a template without a `CapacityReservationSpecification`.
#[test]
fn with_the_reserved_capacity_gate_off_the_replacement_ignores_the_reservation() {
    let (world, under_used) = under_used_beside_a_reservation();
    replaced_under(
        &world,
        &under_used,
        crate::usecases::consolidate::Controller {
            reserved_capacity: Some(false),
            ..Default::default()
        },
    );
    assert_eq!(instance_types_launched(&world), ["c6a.large"]);
    let templates = world.cloud.templates.borrow();
    let requests = world.cloud.fleet_requests.borrow();
    let template = &templates[&requests[0].configs[0].0];
    assert_eq!(template.reservation_preference(), None);
    assert_eq!(world.cloud.reservations.borrow()[0].available, 1);
}

/// Under a controller with `VM_MEMORY_OVERHEAD_PERCENT` at 30 % (`aws v1.14.1:
/// pkg/providers/instancetype/types.go` `memory`) a c6a.large (4 GiB) no longer holds the 2500Mi
/// pod: the decision chooses the c6a.xlarge and the pipeline carries that choice out (the
/// re-plan's own sizing is shown by `replace::tests::pipeline::the_replacement_is_sized_with_the_controllers_type_settings`).
#[test]
fn the_replacement_re_plan_sizes_types_with_the_controllers_settings() {
    let (world, under_used) = under_used_with_a_2500mi_pod();
    replaced_under(
        &world,
        &under_used,
        crate::usecases::consolidate::Controller {
            vm_memory_overhead_percent: Some(0.3),
            ..Default::default()
        },
    );
    assert_eq!(instance_types_launched(&world), ["c6a.xlarge"]);
}

/// The flags win over the running controller: `--feature-gates ReservedCapacity=false` beside
/// a controller with the gate on launches in the open mode past the reservation, and
/// `--vm-memory-overhead-percent 0.3` beside one with the default sizes the replacement for the
/// 2500Mi pod as a controller started with it would (aws v1.14.1 `pkg/operator/options/
/// options.go`; the two tests above, by the flag).
#[test]
fn the_flags_win_over_the_controllers_reserved_capacity_gate_and_type_settings() {
    let (reserved, under_used) = under_used_beside_a_reservation();
    let config = Config {
        reserved_capacity: Some(false),
        ..Config::default()
    };
    let gate_on = crate::usecases::consolidate::Controller {
        reserved_capacity: Some(true),
        ..Default::default()
    };
    replaced_deciding(&reserved, &under_used, config, gate_on);
    assert_eq!(instance_types_launched(&reserved), ["c6a.large"]);
    assert_eq!(reserved.cloud.reservations.borrow()[0].available, 1);
    assert_eq!(calls(&reserved, "DescribeCapacityReservations"), 0);

    let (sized, under_used) = under_used_with_a_2500mi_pod();
    let config = Config {
        type_settings: crate::usecases::live::TypeSettings {
            vm_memory_overhead_percent: Some(0.3),
            reserved_enis: None,
        },
        ..Config::default()
    };
    replaced_deciding(&sized, &under_used, config, Default::default());
    assert_eq!(instance_types_launched(&sized), ["c6a.xlarge"]);
}

/// A c6a.2xlarge holding one 2500Mi pod: a c6a.large replaces it at the default memory
/// overhead, a c6a.xlarge at 30 %.
fn under_used_with_a_2500mi_pod() -> (World, String) {
    let world = world(1, json!([{"nodes": "100%"}]));
    let under_used = managed(&world, "c6a.2xlarge", &["p0"]);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["memory"] = json!("2500Mi");
        });
    (world, under_used)
}

/// Runs `consolidate --yes` under a running `controller` (the default configuration) and
/// checks `node` was replaced.
fn replaced_under(world: &World, node: &str, controller: crate::usecases::consolidate::Controller) {
    replaced_deciding(world, node, Config::default(), controller);
}

/// Runs `consolidate --yes` with `config` under a running `controller` and checks `node` was
/// replaced.
fn replaced_deciding(
    world: &World,
    node: &str,
    config: Config,
    controller: crate::usecases::consolidate::Controller,
) {
    let deciding = Deciding {
        config,
        controller: Some(controller),
    };
    let run = run_deciding(world, &deciding, |_| {});
    assert_eq!(run.status(node), Status::Replaced, "{:#?}", run.outcomes);
}
