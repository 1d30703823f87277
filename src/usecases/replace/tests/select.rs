//! Which nodes a run takes, in which order — and `--watch`, pass after pass.

use std::collections::VecDeque;

use super::*;
use crate::drift::{DriftReason, Evaluation, Status as Verdict};
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::Method as Http;
use crate::usecases::replace::select::{check_named, select};
use crate::usecases::replace::watch::{watch, Passes};

pub(super) use crate::usecases::testing::verdict as verdict_of;

fn names(actions: &[Action]) -> Vec<&str> {
    actions.iter().map(|a| a.node.name.as_str()).collect()
}

#[test]
fn drifted_and_named_nodes_are_taken_resumed_first_then_empty_then_by_name() {
    let world = world();
    // n0 … n7, each with a pod.
    let n = drifted(&world, 8);
    // n1 has no pod to move; n4 has a replacement in progress; n5 too but is not selected;
    // n6's instance is shutting down; n7 is being deleted.
    world.cluster.remove("v1", "Pod", Some("default"), "p1");
    for (node, step) in [(&n[4], Step::Launched), (&n[5], Step::Marked)] {
        let record = Record {
            step,
            reason: "NodeClassDrift".into(),
            ..Record::default()
        };
        world.cluster.update("v1", "Node", None, node, |j| {
            j["metadata"]["annotations"] = json!({REPLACEMENT: record.format()});
        });
    }
    world.cloud.instances.borrow_mut()[6].state = "shutting-down".into();
    world.cluster.update("v1", "Node", None, &n[7], |j| {
        j["metadata"]["finalizers"] = json!(["example.com/hold"]);
    });
    crate::k8s::ops::delete(&world.cluster, &format!("/api/v1/nodes/{}", n[7]), None).unwrap();
    let m = read_cluster(&world.cluster).unwrap();
    let drift = snapshot_of(&world, &m);
    let evaluation = Evaluation {
        nodes: vec![
            verdict_of(&n[0], Verdict::Drifted, Some(DriftReason::AmiDrift)),
            verdict_of(
                &n[1],
                Verdict::Drifted,
                Some(DriftReason::RequirementsDrifted),
            ),
            verdict_of(&n[2], Verdict::Ok, None),
            verdict_of(&n[3], Verdict::Ok, None),
            verdict_of(&n[4], Verdict::Ok, None),
            verdict_of(&n[6], Verdict::Drifted, Some(DriftReason::AmiDrift)),
            verdict_of(&n[7], Verdict::Drifted, Some(DriftReason::AmiDrift)),
        ],
        notes: vec!["a note from the verdicts".into()],
        ..Evaluation::default()
    };
    let mut events = Vec::new();
    let named = vec![n[2].clone()];
    let actions = select(&m, &drift, &evaluation, &named, &mut |e| events.push(e));
    // Resumed first; then nodes without pods; then by name. n3 is OK and not named.
    assert_eq!(names(&actions), [&n[4], &n[1], &n[0], &n[2]]);
    let reasons: Vec<&str> = actions.iter().map(|a| a.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "NodeClassDrift",
            "RequirementsDrifted",
            "AMIDrift",
            "Requested"
        ]
    );
    assert!(actions
        .iter()
        .all(|a| a.method == Method::Drift && a.pool.name == "default"));
    assert_eq!(
        events,
        [
            Event::Warning("a note from the verdicts".into()),
            Event::NotSelected {
                node: n[5].clone(),
                record: Record {
                    step: Step::Marked,
                    reason: "NodeClassDrift".into(),
                    ..Record::default()
                }
                .format()
            },
        ]
    );
}

#[test]
fn a_name_that_is_not_a_managed_node_is_an_input_error() {
    let world = world();
    let n = drifted(&world, 1);
    let m = read_cluster(&world.cluster).unwrap();
    let drift = snapshot_of(&world, &m);
    assert!(check_named(&drift, &n).is_ok());
    let err = check_named(&drift, &["ip-10-0-0-1.ec2.internal".into()]).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert_eq!(
        err.message,
        "node \"ip-10-0-0-1.ec2.internal\" is not a managed node (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name, or launched by this tool)"
    );
}

/// Passes answering from a script; the failures reported.
struct Scripted {
    results: VecDeque<CommandResult>,
    failed: Vec<String>,
}

impl Passes for Scripted {
    fn pass(&mut self) -> CommandResult {
        self.results.pop_front().unwrap_or(Ok(Exit::Ok))
    }

    fn failed(&mut self, error: &CommandError) {
        self.failed.push(error.message.clone());
    }
}

#[test]
fn watch_goes_on_after_findings_and_failures_and_ends_with_the_worst_on_ctrl_c() {
    let world = World::new();
    world.clock.stop_after(secs(100));
    let mut passes = Scripted {
        results: VecDeque::from([
            Ok(Exit::Finding),
            Err(CommandError::remote("1 node(s) were not replaced")),
            Ok(Exit::Ok),
        ]),
        failed: Vec::new(),
    };
    let result = watch(&world.clock, secs(30), &mut passes);
    assert_eq!(result.unwrap_err().message, "1 node(s) were not replaced");
    assert_eq!(passes.failed, ["1 node(s) were not replaced"]);
    // Passes at 0, 30, 60 and 90 s; Ctrl-C at 100 s cuts the wait.
    assert!(passes.results.is_empty());
    assert_eq!(world.clock.monotonic(), secs(100));

    // Bad input does not go away by waiting.
    let world = World::new();
    let mut passes = Scripted {
        results: VecDeque::from([Ok(Exit::Ok), Err(CommandError::input("-l x: bad selector"))]),
        failed: Vec::new(),
    };
    let err = watch(&world.clock, secs(30), &mut passes).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert!(passes.failed.is_empty());
    assert_eq!(world.clock.monotonic(), secs(30));
}

/// Each pass replaces the nodes labelled drifted now.
struct Replacing<'w> {
    world: &'w World,
    passes: Vec<Vec<NodeOutcome>>,
}

impl Passes for Replacing<'_> {
    fn pass(&mut self) -> CommandResult {
        let m = read_cluster(&self.world.cluster)?;
        let drifted: Vec<String> = m
            .nodes
            .iter()
            .filter(|n| n.labels.contains_key("example.com/drifted"))
            .map(|n| n.name.clone())
            .collect();
        let run = replace(self.world, &drifted, &settings());
        let result = verdict(&run.outcomes);
        self.passes.push(run.outcomes);
        result
    }

    fn failed(&mut self, _: &CommandError) {}
}

#[test]
fn watch_replaces_a_node_that_drifts_between_passes() {
    let world = world();
    let n = drifted(&world, 1);
    // The node drifts 45 s in: the second pass (30 s) saw nothing, the third (60 s) takes it.
    let cluster = world.cluster.clone();
    let node = n[0].clone();
    world.clock.on_tick(move |now| {
        if now >= secs(45) && cluster.get("v1", "Node", None, &node).is_some() {
            cluster.update("v1", "Node", None, &node, |j| {
                j["metadata"]["labels"]["example.com/drifted"] = json!("true");
            });
        }
    });
    world.clock.stop_after(secs(200));
    let mut passes = Replacing {
        world: &world,
        passes: Vec::new(),
    };
    assert_eq!(
        watch(&world.clock, secs(30), &mut passes).unwrap(),
        Exit::Ok
    );
    let replaced: Vec<usize> = passes
        .passes
        .iter()
        .map(|p| p.iter().filter(|o| o.status == Status::Replaced).count())
        .collect();
    assert_eq!(replaced[..3], [0, 0, 1], "{replaced:?}");
    assert!(replaced[3..].iter().all(|r| *r == 0));
    assert!(node_json(&world, &n[0]).is_none());
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

/// A node whose drift went away while it waited for its turn (its NodePool reverted) is left,
/// `skipped`; the node before it, still drifted when it started, is replaced. Karpenter decides
/// its candidates again on every pass (core v1.14.1 `disruption/controller.go` `disrupt` →
/// `GetCandidates`; `drift.go` reads the NodeClaim's `Drifted` condition then, which
/// `nodeclaim/disruption/drift.go` removes once the drift is gone: `drift_test.go` "should
/// remove the status condition from the nodeClaim if the nodeClaim is no longer drifted").
#[test]
fn a_node_no_longer_drifted_when_its_turn_comes_is_left() {
    let world = world();
    budget(&world, "1");
    let old = drifted(&world, 2);
    let requirement = |values: Value| {
        move |p: &mut Value| {
            p["spec"]["template"]["spec"]["requirements"] =
                json!([{"key": "karpenter.sh/capacity-type", "operator": "In", "values": values}]);
        }
    };
    // Drifted: the pool asks for spot now.
    world.cluster.update(
        "karpenter.sh/v1",
        "NodePool",
        None,
        "default",
        requirement(json!(["spot"])),
    );
    let m = read_cluster(&world.cluster).unwrap();
    let mut drift = snapshot_of(&world, &m);
    drift.node_pools = m.node_pools.clone();
    drift.node_classes = m.node_classes.clone();
    let evaluation = crate::drift::evaluate(&drift);
    let actions = select(&m, &drift, &evaluation, &[], &mut |_| {});
    assert_eq!(names(&actions), [&old[0], &old[1]], "{evaluation:?}");
    // Reverted once the first node is marked.
    world.cluster.after(
        Http::Patch,
        &format!("/api/v1/nodes/{}", old[0]),
        move |c| {
            c.update(
                "karpenter.sh/v1",
                "NodePool",
                None,
                "default",
                requirement(json!(["on-demand"])),
            )
        },
    );
    let recheck = crate::usecases::replace::select::Recheck::new(drift, &actions, &[]);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings())
        .unwrap()
        .rechecking_drift(recheck);
    let outcomes = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap();
    assert_eq!(outcomes[0].status, Status::Replaced);
    assert_eq!(outcomes[1].status, Status::Skipped, "{outcomes:?}");
    // Unknown here (the world's class is not resolved): `select` would not take it either.
    let said = outcomes[1].detail.to_string();
    assert!(
        said.starts_with("no longer drifted: its RequirementsDrifted is gone (")
            && said.ends_with("); left"),
        "{said}"
    );
    assert!(record_of(&world, &old[1]).is_none(), "untouched");
    assert!(!cordoned(&world.cluster, &old[1]));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}
