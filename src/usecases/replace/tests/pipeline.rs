//! The pipeline: plan, mark, launch, wait, drain, terminate and delete — and every way a node
//! leaves it early — and the budgets' pace.

use super::*;
use crate::disruption::replace::{replacement_name, Holding};
use crate::error::Exit;
use crate::k8s::Method as Http;
use crate::model::labels::NODECLAIM as NODECLAIM_TAG;

/// The refusal the fake's Eviction API answers while a PDB allows nothing.
const REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

#[test]
fn a_drifted_node_is_marked_replaced_drained_and_deleted_in_that_order() {
    let world = world();
    replica_set(&world, 1);
    let old = drifted(&world, 1);
    let claim = replacement_name("default", 0, &actions(&world, &old).1[0].node, ATTEMPT);
    let run = replace(&world, &old, &settings());

    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::Replaced, "{o:?}");
    assert_eq!((o.pods, o.evicted.len()), (1, 1));
    let new_instance = world.running()[0].id.clone();
    let new_node = crate::usecases::testing::node_name(&new_instance);
    assert_eq!(o.replacements, [format!("{claim} ({new_instance})")]);
    assert_eq!(
        world.cloud.instances.borrow()[1].tags[NODECLAIM_TAG],
        claim,
        "the replacement is tagged with the recorded NodeClaim name"
    );
    // Mark, record the launch, label the replacement, take the node out of load balancers,
    // evict, record the drain, delete.
    assert_eq!(
        world.cluster.writes(),
        [
            format!("PATCH /api/v1/nodes/{}", old[0]),
            format!("PATCH /api/v1/nodes/{}", old[0]),
            format!("PATCH /api/v1/nodes/{new_node}"),
            // Out of external load balancers as the drain begins (s17).
            format!("PATCH /api/v1/nodes/{}", old[0]),
            "POST /api/v1/namespaces/default/pods/p0/eviction".to_string(),
            format!("PATCH /api/v1/nodes/{}", old[0]),
            format!("DELETE /api/v1/nodes/{}", old[0]),
        ]
    );
    let patches: Vec<Value> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == Http::Patch && r.path.ends_with(&old[0]))
        .map(|r| r.body)
        .filter(|b| b["metadata"]["annotations"][REPLACEMENT].is_string())
        .collect();
    let steps: Vec<Step> = patches
        .iter()
        .map(|p| {
            Record::parse(p["metadata"]["annotations"][REPLACEMENT].as_str().unwrap())
                .unwrap()
                .step
        })
        .collect();
    assert_eq!(steps, [Step::Marked, Step::Launched, Step::Drained]);
    let mark = &patches[0];
    assert_eq!(mark["spec"]["unschedulable"], true);
    assert_eq!(
        mark["spec"]["taints"],
        json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
    );
    assert!(mark["metadata"]["resourceVersion"].is_string(), "{mark}");
    let marked = Record::parse(
        mark["metadata"]["annotations"][REPLACEMENT]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        marked,
        Record {
            step: Step::Marked,
            method: Method::Drift,
            node_claims: vec![claim.clone()],
            instances: Vec::new(),
            reason: "AMIDrift".into(),
            started_at: ATTEMPT.into(),
            cordoned_before: false,
            command: Vec::new(),
            // The planned NodeClaim's: the pool's hash and min-values-relaxed (no template
            // annotations, no overlay).
            annotations: [(claim.clone(), planned_claim_annotations(&world))].into(),
        }
    );
    assert_eq!(
        (
            calls(&world, "EC2.CreateFleet"),
            calls(&world, "EC2.TerminateInstances")
        ),
        (1, 1)
    );
    assert_eq!(
        instance_state(&world, &instance_of(&old[0])),
        "shutting-down"
    );
    assert!(node_json(&world, &old[0]).is_none());
    // The replacement carries its type's labels and serves the pod made again.
    let labels = &node_json(&world, &new_node).unwrap()["metadata"]["labels"];
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "c6a");
    world.clock.sleep(secs(1));
    let pods = world.cluster.list("v1", "Pod");
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["spec"]["nodeName"], new_node.as_str());
    assert_eq!(
        run.steps(&old[0]),
        [
            NodeStep::Marked,
            NodeStep::ReplacementReady {
                replacement: new_node.clone()
            },
            NodeStep::Evicted {
                pod: "default/p0".into()
            },
            NodeStep::Drained { evicted: 1 },
            NodeStep::Deleted {
                instance: Some(instance_of(&old[0]))
            },
        ]
    );
    assert!(matches!(
        run.launches()[..],
        [provisioning::Event::Launched(_)]
    ));
    // Launched at once, Ready once the kubelet registered it (30 s and a tick later).
    let ready = run.when(&old[0], |s| matches!(s, NodeStep::ReplacementReady { .. }));
    assert!(ready >= secs(30) && ready <= secs(32), "{ready:?}");
    // Timed from the launch to the delete.
    let took = run.when(&old[0], |s| matches!(s, NodeStep::Deleted { .. }))
        - run.when(&old[0], |s| *s == NodeStep::Marked);
    assert_eq!(o.seconds, (took.as_secs_f64() * 10.0).round() / 10.0);
    assert_eq!(verdict(&run.outcomes).unwrap(), Exit::Ok);
}

#[test]
fn the_preview_changes_nothing_and_names_the_replacements_it_would_launch() {
    let world = world();
    let old = drifted(&world, 3);
    budget(&world, "2");
    let (m, actions) = actions(&world, &old);
    let node0 = actions[0].node.clone();
    let preview = replace_pipeline::preview(&world.live(), &m, actions, &settings()).unwrap();
    assert_eq!(preview.starting(), [old[0].as_str()], "--max-parallel 1");
    assert_eq!(preview.queued(), 2);
    let o = &preview.outcomes()[0];
    assert_eq!(o.status, Status::Planned);
    assert_eq!(
        o.replacements,
        [format!(
            "{} (c6a.large)",
            replacement_name("default", 0, &node0, ATTEMPT)
        )]
    );
    assert_eq!(
        preview.outcomes()[1].detail,
        Detail::StartsWhenRoom {
            pool: "default".into()
        }
    );
    assert!(world.cluster.writes().is_empty());
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    // No budget at all: nothing starts, every node waits for budget.
    budget(&world, "0");
    let (m, actions) = super::actions(&world, &old);
    let preview = replace_pipeline::preview(&world.live(), &m, actions, &settings()).unwrap();
    assert!(preview.starting().is_empty());
    assert!(preview
        .outcomes()
        .iter()
        .all(|o| o.status == Status::WaitingBudget
            && o.detail
                == Detail::NoBudget {
                    pool: "default".into()
                }));
    assert_eq!(verdict(preview.outcomes()).unwrap(), Exit::Finding);
}

#[test]
fn nodes_whose_pods_fit_nowhere_or_that_do_not_disrupt_or_sit_behind_a_pdb_at_zero_are_blocked() {
    let world = world();
    let old = drifted(&world, 3);
    // p0 asks for more than any type has.
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("20");
        });
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p1", |p| {
            p["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
            p["metadata"]["labels"]["app"] = json!("quiet");
        });
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p2", |p| {
            p["metadata"]["labels"]["app"] = json!("guarded");
        });
    world.cluster.put(pdb("guarded", "guarded", 0, 0));
    let mut settings = settings();
    settings.max_parallel = 3;
    let run = replace(&world, &old, &settings);
    let details: Vec<(Status, String)> = run
        .outcomes
        .iter()
        .map(|o| (o.status, format!("{:?}", o.detail)))
        .collect();
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Blocked),
        "{details:?}"
    );
    assert!(
        matches!(&run.outcome(&old[0]).detail, Detail::Unplaceable(pods) if pods[0].starts_with("default/p0: ")),
        "{details:?}"
    );
    assert_eq!(
        run.outcome(&old[1]).detail,
        Detail::Blocker("pod default/p1 is annotated karpenter.sh/do-not-disrupt=true".into())
    );
    assert_eq!(
        run.outcome(&old[2]).detail,
        Detail::Blocker(
            "PodDisruptionBudget default/guarded allows 0 disruptions (pod default/p2)".into()
        )
    );
    assert!(world.cluster.writes().is_empty(), "nothing changed");
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(verdict(&run.outcomes).unwrap(), Exit::Finding);
}

#[test]
fn a_conflict_on_mark_is_read_again_and_retried_keeping_a_taint_added_meanwhile() {
    let world = world();
    let old = drifted(&world, 1);
    let (m, actions) = actions(&world, &old);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
    // Another actor taints the node after the snapshot; the first mark conflicts.
    world.cluster.update("v1", "Node", None, &old[0], |n| {
        n["spec"]["taints"] =
            json!([{"key": "aws.amazon.com/spot-interruption", "effect": "NoSchedule"}]);
    });
    world.cluster.fail_with(
        Http::Patch,
        &format!("/api/v1/nodes/{}", old[0]),
        1,
        409,
        "conflict",
    );
    let outcomes = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap();
    assert_eq!(outcomes[0].status, Status::Replaced);
    let marks: Vec<Value> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == Http::Patch && r.path.ends_with(&old[0]))
        .take(2)
        .map(|r| r.body)
        .collect();
    assert_eq!(marks[0], marks[1], "the same mark, read again and retried");
    assert_eq!(
        marks[1]["spec"]["taints"],
        json!([
            {"key": "aws.amazon.com/spot-interruption", "effect": "NoSchedule"},
            {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
        ])
    );
    let gets = world
        .cluster
        .requests()
        .iter()
        .filter(|r| r.method == Http::Get && r.path == format!("/api/v1/nodes/{}", old[0]))
        .count();
    assert!(gets >= 2, "read before each attempt");
}

#[test]
fn a_launch_that_fails_rolls_the_node_back_and_it_serves_again() {
    let world = world();
    let old = drifted(&world, 1);
    for t in ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"] {
        world.cloud.insufficient_capacity(t, "*");
    }
    let run = replace(&world, &old, &settings());
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::RolledBack);
    assert!(
        matches!(&o.detail, Detail::LaunchFailed(m) if m.contains("InsufficientInstanceCapacity")),
        "{:?}",
        o.detail
    );
    let path = format!("/api/v1/nodes/{}", old[0]);
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH {path}"), format!("PATCH {path}")],
        "marked, then rolled back"
    );
    let node = node_json(&world, &old[0]).unwrap();
    assert_eq!(node["spec"]["unschedulable"], false);
    assert_eq!(node["spec"]["taints"], json!([]));
    assert!(
        record_of(&world, &old[0]).is_none(),
        "the record is cleared"
    );
    assert_eq!(
        calls(&world, "EC2.TerminateInstances"),
        0,
        "nothing was launched"
    );
    assert_eq!(
        run.steps(&old[0]),
        [
            NodeStep::Marked,
            NodeStep::RolledBack {
                cordoned: false,
                terminated: Vec::new()
            }
        ]
    );
    assert!(matches!(
        run.launches()[..],
        [provisioning::Event::LaunchFailed(_)]
    ));
    assert_eq!(verdict(&run.outcomes).unwrap_err().exit, Exit::Remote);
}

#[test]
fn a_replacement_falls_back_on_another_type_when_the_cheapest_has_no_capacity() {
    let world = world();
    let old = drifted(&world, 1);
    world.cloud.insufficient_capacity("c6a.large", "*");
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    // One fleet request naming more types than the cheapest (as `provision` plans).
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    let types: Vec<String> = world
        .running()
        .into_iter()
        .map(|i| i.instance_type)
        .collect();
    assert_eq!(types, ["c6a.xlarge"]);
}

#[test]
fn replacements_never_ready_are_terminated_and_the_nodes_rolled_back_as_they_were() {
    // No kubelet: nothing ever registers.
    let world = World::new();
    budget(&world, "2");
    let old = drifted(&world, 2);
    // The second node was cordoned before the replacement began: it stays so.
    world.cluster.update("v1", "Node", None, &old[1], |n| {
        n["spec"]["unschedulable"] = json!(true);
    });
    let mut settings = settings();
    settings.max_parallel = 2;
    settings.ready_timeout = secs(60);
    let run = replace(&world, &old, &settings);
    for (name, cordoned) in [(&old[0], false), (&old[1], true)] {
        let o = run.outcome(name);
        assert_eq!(o.status, Status::RolledBack, "{o:?}");
        assert_eq!(o.detail, Detail::NotReady { after: secs(60) });
        let node = node_json(&world, name).unwrap();
        assert_eq!(node["spec"]["unschedulable"], cordoned);
        assert!(record_of(&world, name).is_none());
        let rolled = run.when(name, |s| matches!(s, NodeStep::RolledBack { .. }));
        assert!(rolled >= secs(60) && rolled < secs(62), "{rolled:?}");
    }
    // What was launched is terminated; the old instances serve on.
    let states: Vec<(String, String)> = world
        .cloud
        .instances
        .borrow()
        .iter()
        .map(|i| (i.id.clone(), i.state.clone()))
        .collect();
    assert_eq!(
        states.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>(),
        ["running", "running", "shutting-down", "shutting-down"],
        "{states:?}"
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 2);
}

/// A replacement whose instance goes (a spot reclaim, a failed boot) before its node serves
/// rolls the node back at once, not after `--ready-timeout`: `core v1.14.1:
/// pkg/controllers/disruption/queue.go waitOrTerminate` — a replacement NodeClaim that is gone
/// is an `UnrecoverableError` ("replacement was deleted"): the command fails and `Reconcile`
/// untaints its candidates, without waiting out the command's timeout.
#[test]
fn a_replacement_whose_instance_goes_before_it_serves_rolls_the_node_back_at_once() {
    // No kubelet: the replacement never registers.
    let world = World::new();
    let old = drifted(&world, 1);
    let originals: Vec<String> = world
        .cloud
        .instances
        .borrow()
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let cloud = world.cloud.clone();
    world.clock.on_tick(move |now| {
        if now >= secs(20) {
            for i in cloud.instances.borrow_mut().iter_mut() {
                if !originals.contains(&i.id) {
                    i.state = "terminated".into();
                }
            }
        }
    });
    let run = replace(&world, &old, &settings());
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::RolledBack, "{o:?}");
    assert!(
        matches!(&o.detail, Detail::ReplacementGone(ids) if ids.len() == 1),
        "{o:?}"
    );
    let rolled = run.when(&old[0], |s| matches!(s, NodeStep::RolledBack { .. }));
    assert!(rolled >= secs(20) && rolled < secs(30), "{rolled:?}");
    let node = node_json(&world, &old[0]).unwrap();
    assert_eq!(node["spec"]["unschedulable"], false);
    assert!(record_of(&world, &old[0]).is_none());
}

/// A consolidation replace whose node's pods now fit without the chosen NodeClaim (here: its
/// pods are gone) is refused and decided again, not carried out as a delete under the replace's
/// reason: `core v1.14.1: pkg/controllers/disruption/validation.go validateCommand` — no new
/// NodeClaim while the command has a replacement is "scheduling simulation produced new
/// results".
#[test]
fn a_chosen_replacement_no_longer_needed_is_decided_again() {
    let world = world();
    let name = world.registered_node("default", "c6a.xlarge");
    world.cluster.update("v1", "Node", None, &name, |n| {
        n["metadata"]["labels"]["karpenter.sh/initialized"] = json!("true");
    });
    let (m, mut actions) = actions(&world, std::slice::from_ref(&name));
    actions[0].method = Method::ConsolidationReplace;
    actions[0].reason = "single: replace with c6a.large".into();
    actions[0].chosen = Some(crate::disruption::replace::Chosen {
        node_pool: "default".into(),
        instance_types: vec!["c6a.large".into()],
        capacity_type: "on-demand".into(),
        zones: vec!["us-east-1a".into(), "us-east-1b".into()],
    });
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
    let outcomes = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap();
    let o = &outcomes[0];
    assert_eq!(o.status, Status::Blocked, "{o:?}");
    assert_eq!(
        o.detail,
        Detail::DecisionChanged(
            "its pods now fit on the other nodes: no replacement is needed".into()
        )
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert!(record_of(&world, &name).is_none(), "the node is not marked");
    assert_eq!(
        node_json(&world, &name).unwrap()["spec"]["unschedulable"],
        Value::Null
    );
}

#[test]
fn an_eviction_a_pdb_refuses_is_retried_with_backoff_until_it_goes_through() {
    let world = world();
    let old = drifted(&world, 1);
    evictions_answer(&world, 429, REFUSED, 3);
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let evictions = evictions(&world);
    assert_eq!(evictions, 4, "three refusals, then through");
    let steps = run.steps(&old[0]);
    let refusals: Vec<&NodeStep> = steps
        .iter()
        .filter(|s| matches!(s, NodeStep::EvictionRefused { .. }))
        .collect();
    assert_eq!(refusals.len(), 1, "the same refusal is reported once");
    assert!(matches!(
        refusals[0],
        NodeStep::EvictionRefused { pod, message } if pod == "default/p0" && message.contains("disruption budget")
    ));
    // Backed off: 200 ms, 400 ms, 800 ms between the passes.
    let refused = run.when(&old[0], |s| matches!(s, NodeStep::EvictionRefused { .. }));
    let evicted = run.when(&old[0], |s| matches!(s, NodeStep::Evicted { .. }));
    let waited = evicted - refused;
    assert!(waited >= Duration::from_millis(1400), "{waited:?}");
}

#[test]
fn a_drain_waits_for_a_do_not_disrupt_pod_and_never_evicts_it() {
    let world = world();
    let old = drifted(&world, 1);
    // The pod gains do-not-disrupt once its node is cordoned, and loses it after 5 minutes.
    let cluster = world.cluster.clone();
    let node = old[0].clone();
    world.clock.on_tick(move |now| {
        let cordoned = cordoned(&cluster, &node);
        let Some(pod) = cluster.get("v1", "Pod", Some("default"), "p0") else {
            return;
        };
        let annotated = pod["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true";
        if cordoned && !annotated && now < secs(300) {
            cluster.update("v1", "Pod", Some("default"), "p0", |p| {
                p["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
            });
        }
        if annotated && now >= secs(300) {
            cluster.update("v1", "Pod", Some("default"), "p0", |p| {
                p["metadata"]["annotations"] = json!({});
            });
        }
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let evicted = run.when(&old[0], |s| matches!(s, NodeStep::Evicted { .. }));
    assert!(
        evicted >= secs(300),
        "evicted only once allowed: {evicted:?}"
    );
    let evictions = evictions(&world);
    assert_eq!(evictions, 1, "never tried while annotated");
}

#[test]
fn a_drain_that_times_out_stays_cordoned_and_a_rerun_finishes_it() {
    let world = world();
    let old = drifted(&world, 1);
    // A PDB at zero appears once the node is cordoned (after it was planned).
    let cluster = world.cluster.clone();
    let node = old[0].clone();
    world.clock.on_tick(move |_| {
        let cordoned = cordoned(&cluster, &node);
        if cordoned && cluster.list("policy/v1", "PodDisruptionBudget").is_empty() {
            cluster.put(pdb("app", "app", 0, 0));
        }
    });
    let mut short = settings();
    short.drain_timeout = secs(120);
    let run = replace(&world, &old, &short);
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::Failed);
    let Detail::DrainTimedOut {
        node,
        after,
        holding: Holding::Named(why),
    } = &o.detail
    else {
        panic!("{:?}", o.detail);
    };
    assert_eq!((node.as_str(), *after), (old[0].as_str(), secs(120)));
    assert!(why.contains("disruption budget"), "{why}");
    assert_eq!(verdict(&run.outcomes).unwrap_err().exit, Exit::Remote);
    // Cordoned, recorded `launched`, its replacement kept.
    let node = node_json(&world, &old[0]).unwrap();
    assert_eq!(node["spec"]["unschedulable"], true);
    let record = record_of(&world, &old[0]).unwrap();
    assert_eq!(record.step, Step::Launched);
    assert_eq!(instance_state(&world, &record.instances[0]), "running");

    // The PDB goes; a re-run adopts the replacement and finishes.
    world
        .cluster
        .remove("policy/v1", "PodDisruptionBudget", Some("default"), "app");
    world.cluster.put(pdb("app", "app", 1, 1));
    let again = replace(&world, &old, &settings());
    resumed_by_adoption(&world, &again, &old[0]);
    assert!(node_json(&world, &old[0]).is_none());
}

/// core v1.14.1 `disruption/helpers.go BuildDisruptionBudgetMapping`: a node whose NodeClaim
/// is `InstanceTerminating=True` is left out of the budget count — neither counted nor
/// disrupting. 10 drifted nodes, `nodes: 50%`, one terminating (its Node NotReady and being
/// deleted): ceil(9 × 50%) = 5 start, not ceil(10 × 50%) − 1 = 4.
#[test]
fn a_node_whose_instance_is_terminating_is_left_out_of_the_budget() {
    let world = world();
    budget(&world, "50%");
    let old = drifted(&world, 10);
    let gone = &old[9];
    world.cluster.update("v1", "Node", None, gone, |n| {
        n["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
        n["status"]["conditions"] = json!([{"type": "Ready", "status": "Unknown"}]);
    });
    let node = world.cluster.get("v1", "Node", None, gone).unwrap();
    let claim = |status: &str| {
        json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": format!("claim-{gone}"),
                "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                "name": "default"}, "requirements": []},
            "status": {"nodeName": gone, "providerID": node["spec"]["providerID"],
                "conditions": [{"type": "InstanceTerminating", "status": status,
                    "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
        })
    };
    let mut wide = settings();
    wide.max_parallel = 10;
    let starting = |status: &str| {
        world.cluster.put(claim(status));
        let (m, actions) = actions(&world, &old[..9]);
        let preview = replace_pipeline::preview(&world.live(), &m, actions, &wide).unwrap();
        preview.starting().len()
    };
    assert_eq!(starting("True"), 5, "9 counted, none disrupting");
    assert_eq!(starting("False"), 4, "10 counted, 1 disrupting");
}

/// Replaces `count` drifted nodes of a pool whose budget is `nodes`, with `--max-parallel`
/// `max_parallel`; the evicted pods come back and fill the replacements, so every node needs
/// its own. The run, and how many nodes were in replacement (of those left) at each tick.
fn rollout(nodes: &str, count: usize, max_parallel: usize) -> (World, Run, Vec<(usize, usize)>) {
    let world = world();
    budget(&world, nodes);
    let old = drifted(&world, count);
    replica_set(&world, count);
    let seen = observe(&world, &old);
    let mut settings = settings();
    settings.max_parallel = max_parallel;
    let run = replace(&world, &old, &settings);
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Replaced),
        "{:?}",
        run.outcomes
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), count as u64);
    let seen = seen.borrow().clone();
    (world, run, seen)
}

#[test]
fn budgets_are_kept_full_and_never_exceeded() {
    let (world, _, seen) = rollout("3", 7, 10);
    let peak = seen.iter().map(|(n, _)| *n).max().unwrap();
    assert_eq!(peak, 3, "never more than the budget");
    // At every tick, as many in replacement as the budget allows of those left: no idle slot.
    for (in_replacement, left) in &seen {
        assert_eq!(*in_replacement, (*left).min(3), "{seen:?}");
    }
    // The pods made again while later nodes were planned kept their room on the replacements
    // (pending when those were planned): each node launched its own, none is left pending.
    world.clock.sleep(secs(1));
    let pending: Vec<Value> = world
        .cluster
        .list("v1", "Pod")
        .into_iter()
        .filter(|p| p["spec"]["nodeName"].is_null())
        .collect();
    assert!(pending.is_empty(), "{pending:?}");
}

#[test]
fn max_parallel_bounds_the_nodes_in_replacement() {
    // A budget wider than --max-parallel (the default 10% of 4 nodes is 1).
    let (_, _, seen) = rollout("4", 4, 2);
    assert_eq!(seen.iter().map(|(n, _)| *n).max(), Some(2));
}

#[test]
fn ctrl_c_finishes_the_node_in_flight_and_starts_no_other() {
    let world = world();
    let old = drifted(&world, 3);
    // Interrupted while the first replacement boots.
    world.clock.stop_after(secs(10));
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    for name in &old[1..] {
        let o = run.outcome(name);
        assert_eq!(
            (o.status, &o.detail),
            (Status::Queued, &Detail::Interrupted)
        );
        assert!(record_of(&world, name).is_none(), "untouched");
    }
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn after_three_failures_in_a_row_no_other_node_starts() {
    let world = world();
    let old = drifted(&world, 5);
    // Pools failing with a code that is not about capacity: nothing is remembered as
    // unavailable, so every replacement is planned and launched (and fails).
    for t in ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"] {
        world
            .cloud
            .answer_pools_with(t, "*", "InvalidParameterValue");
    }
    let run = replace(&world, &old, &settings());
    let statuses: Vec<Status> = run.outcomes.iter().map(|o| o.status).collect();
    assert_eq!(
        statuses,
        [
            Status::RolledBack,
            Status::RolledBack,
            Status::RolledBack,
            Status::Queued,
            Status::Queued
        ]
    );
    assert!(matches!(
        &run.outcome(&old[4]).detail,
        Detail::AfterFailures { in_a_row: 3, last } if matches!(**last, Detail::LaunchFailed(_))
    ));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 3);
}

/// The unavailable-offerings cache through `drift replace` (`aws v1.14.1:
/// pkg/cache/unavailableofferings.go`, `pkg/providers/instance/instance.go`
/// `updateUnavailableOfferingsCache`): the first replacement's CreateFleet finds every offering
/// without capacity and is rolled back; for three minutes those offerings are unavailable, so
/// the later nodes' replacements cannot be planned (Karpenter does not disrupt a node it cannot
/// replace) and no CreateFleet asks for them again.
#[test]
fn offerings_found_without_capacity_are_not_asked_for_by_later_replacements() {
    let world = world();
    let old = drifted(&world, 5);
    for t in ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"] {
        world.cloud.insufficient_capacity(t, "*");
    }
    let run = replace(&world, &old, &settings());
    let statuses: Vec<Status> = run.outcomes.iter().map(|o| o.status).collect();
    assert_eq!(statuses[0], Status::RolledBack);
    for o in &run.outcomes[1..] {
        assert_eq!(o.status, Status::Blocked, "{:?}", o.detail);
        assert!(matches!(o.detail, Detail::Unplaceable(_)), "{:?}", o.detail);
    }
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn a_node_that_left_before_its_turn_is_reported_gone() {
    let world = world();
    let old = drifted(&world, 2);
    let (m, actions) = actions(&world, &old);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
    // Its instance went, and its Node with it.
    world.cloud.instances.borrow_mut()[1].state = "terminated".into();
    world.cluster.remove("v1", "Node", None, &old[1]);
    let outcomes = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap();
    assert_eq!(outcomes[0].status, Status::Replaced);
    assert_eq!(
        (outcomes[1].status, &outcomes[1].detail),
        (Status::Gone, &Detail::LeftTheCluster)
    );
}

/// Someone else began deleting a node (`kubectl delete node`, held by a finalizer) after the
/// run selected it and before its turn: it is no candidate any more — nothing launched for it,
/// nothing written on it (core v1.14.1 `disruption/validation.go` `validateCandidates` →
/// `GetCandidates` → `statenode.go` `ValidateNodeDisruptable`; `disruption/suite_test.go`
/// "should not consider candidates that are deleting").
#[test]
fn a_node_someone_began_deleting_before_its_turn_is_left_to_them() {
    let world = world();
    // Room for both: a deleting node takes a slot of its own (it counts as disrupting).
    budget(&world, "100%");
    let old = drifted(&world, 2);
    let second = old[1].clone();
    world.cluster.after(
        Http::Patch,
        &format!("/api/v1/nodes/{}", old[0]),
        move |c| {
            c.update("v1", "Node", None, &second, |n| {
                n["metadata"]["finalizers"] = json!(["example.com/hold"]);
                n["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            });
        },
    );
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let o = run.outcome(&old[1]);
    assert_eq!((o.status, &o.detail), (Status::Gone, &Detail::BeingDeleted));
    assert!(record_of(&world, &old[1]).is_none(), "not marked");
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1, "one replacement only");
    assert!(
        !world
            .cluster
            .writes()
            .iter()
            .any(|w| w.ends_with(&format!("/nodes/{}", old[1]))),
        "{:?}",
        world.cluster.writes()
    );
}

#[test]
fn a_karpenter_node_loses_its_node_claim_and_both_their_finalizers() {
    let world = world();
    let old = drifted(&world, 1);
    let instance = instance_of(&old[0]);
    world.cluster.update("v1", "Node", None, &old[0], |n| {
        n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    });
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-abcde", "labels": {"karpenter.sh/nodepool": "default"},
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
        "status": {"nodeName": old[0], "providerID": format!("aws:///us-east-1a/{instance}")},
    }));
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let writes = world.cluster.writes();
    let claim = "/apis/karpenter.sh/v1/nodeclaims/default-abcde";
    let node = format!("/api/v1/nodes/{}", old[0]);
    // After the drain (recorded), the claim then the Node: each deleted, then its finalizer
    // released (the instance is terminating by then).
    assert_eq!(
        writes[writes.len() - 5..],
        [
            format!("PATCH {node}"),
            format!("DELETE {claim}"),
            format!("PATCH {claim}"),
            format!("DELETE {node}"),
            format!("PATCH {node}"),
        ]
    );
    assert_eq!(instance_state(&world, &instance), "shutting-down");
    assert!(world
        .cluster
        .get("karpenter.sh/v1", "NodeClaim", None, "default-abcde")
        .is_none());
    assert!(
        node_json(&world, &old[0]).is_none(),
        "nothing left Terminating"
    );
}

/// Two drifted nodes, the second one's pod guarded by the PDB `guarded` (once put).
fn second_guarded() -> (World, Vec<String>) {
    let world = world();
    let old = drifted(&world, 2);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p1", |p| {
            p["metadata"]["labels"]["app"] = json!("guarded");
        });
    (world, old)
}

#[test]
fn a_pdb_at_zero_when_a_node_starts_is_waited_for_then_it_goes() {
    let (world, old) = second_guarded();
    // Zero from the moment the first node is cordoned until 5 minutes in.
    let cluster = world.cluster.clone();
    let first = old[0].clone();
    world.clock.on_tick(move |now| {
        let cordoned = !present(&cluster, &first) || cordoned(&cluster, &first);
        let allowed = if cordoned && now < secs(300) { 0 } else { 1 };
        cluster.put(pdb("guarded", "guarded", 1, allowed));
    });
    let run = replace(&world, &old, &settings());
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Replaced),
        "{:?}",
        run.outcomes
    );
    let marked = run.when(&old[1], |s| *s == NodeStep::Marked);
    assert!(
        marked >= secs(300),
        "held back until the budget allowed: {marked:?}"
    );
}

#[test]
fn a_pdb_held_at_zero_past_the_drain_timeout_blocks_the_node_and_names_the_pdb() {
    let (world, old) = second_guarded();
    let cluster = world.cluster.clone();
    let first = old[0].clone();
    world.clock.on_tick(move |_| {
        if !present(&cluster, &first) || cordoned(&cluster, &first) {
            cluster.put(pdb("guarded", "guarded", 1, 0));
        }
    });
    let mut short = settings();
    short.drain_timeout = secs(120);
    let run = replace(&world, &old, &short);
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let o = run.outcome(&old[1]);
    assert_eq!(o.status, Status::Blocked);
    assert_eq!(
        o.detail,
        Detail::Blocker(
            "PodDisruptionBudget default/guarded allows 0 disruptions (pod default/p1)".into()
        )
    );
    assert!(record_of(&world, &old[1]).is_none(), "never marked");
}

#[test]
fn a_finished_replacement_keeps_the_room_of_pods_not_made_again_yet() {
    // One pod per node (1 CPU on c6a.large). The ReplicaSet makes evicted pods again only a
    // minute later, so when the second node is planned the first one's pod exists nowhere and
    // its replacement looks empty: planned onto it, the second node's pod would take that room
    // and leave the first one's pending for ever. Each node gets its own replacement.
    let world = world();
    budget(&world, "1");
    let old = drifted(&world, 2);
    let cluster = world.cluster.clone();
    let short_since: Rc<RefCell<Option<Duration>>> = Rc::default();
    let mut next = 0;
    world.clock.on_tick(move |now| {
        let have = cluster
            .list("v1", "Pod")
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "app")
            .count();
        let mut since = short_since.borrow_mut();
        if have >= 2 {
            *since = None;
            return;
        }
        let first = *since.get_or_insert(now);
        if now >= first + secs(60) {
            for _ in have..2 {
                put_pending(&cluster, &format!("app-new-{next}"), "1");
                next += 1;
            }
            *since = None;
        }
    });
    let run = replace(&world, &old, &settings());
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Replaced),
        "{:?}",
        run.outcomes
    );
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        2,
        "each node its own replacement: {:?}",
        run.outcomes
    );
}

#[test]
fn a_node_registered_again_by_its_terminating_kubelet_is_no_capacity() {
    // Found by the fault soak (docs/reliability.md): the first node is drained, its instance
    // terminated and its Node deleted — and its kubelet, still running while the instance shuts
    // down, registers the Node again for a moment, Ready, empty, unmarked. Planned onto it, the
    // second node's pod launches nothing and is evicted onto a node about to vanish: pending
    // for ever. Each node gets its own replacement.
    let world = world();
    budget(&world, "1");
    let old = drifted(&world, 2);
    let ghost = node_json(&world, &old[0]).unwrap();
    world.cluster.after(
        Http::Delete,
        &format!("/api/v1/nodes/{}", old[0]),
        move |c| c.put(ghost),
    );
    let run = replace(&world, &old, &settings());
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Replaced),
        "{:?}",
        run.outcomes
    );
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        2,
        "each node its own replacement: {:?}",
        run.outcomes
    );
}

/// docs/reliability.md, the ghost node, for a *new* run: an earlier run terminated a node's
/// instance, and its kubelet registered the Node again (Ready, empty, unmarked, no NodeClaim).
/// The selection described its instance (`gone_instances`, no AWS call of its own): the drifted
/// node's pod is not planned onto the ghost — its replacement is launched. Without it the ghost
/// took the pod (nothing launched, the pod evicted onto a node about to vanish).
#[test]
fn a_ghost_registered_before_a_new_run_is_no_capacity() {
    let world = world();
    budget(&world, "1");
    let ghost = world.registered_node("default", "c6a.large");
    let ghost_instance = instance_of(&ghost);
    for i in world.cloud.instances.borrow_mut().iter_mut() {
        if i.id == ghost_instance {
            i.state = "terminated".into();
        }
    }
    let old = drifted(&world, 1);
    let m = read_cluster(&world.cluster).unwrap();
    let mut settings = settings();
    settings.gone_instances = gone_instances(&snapshot_of(&world, &m));
    assert_eq!(settings.gone_instances, [ghost_instance].into());
    // Without the rule, the preview plans the pod onto the ghost: nothing to launch.
    let (m, acts) = actions(&world, &old);
    let blind = replace_pipeline::preview(&world.live(), &m, acts, &super::settings()).unwrap();
    assert!(
        blind.outcomes()[0].replacements.is_empty(),
        "{:?}",
        blind.outcomes()
    );
    replaced_with_one_launch(&world, &old, &settings);
}

/// `old` replaced by a run with `settings`, one replacement launched.
fn replaced_with_one_launch(world: &World, old: &[String], settings: &Settings) {
    let run = replace(world, old, settings);
    assert_eq!(
        run.outcome(&old[0]).status,
        Status::Replaced,
        "{:?}",
        run.outcomes
    );
    assert_eq!(calls(world, "EC2.CreateFleet"), 1);
}

/// The selection's snapshot, gathered live (`drift_check::gather`: the nodes' instances
/// described through an `instance-id` filter, as EC2 and the fake answer it).
fn gathered(world: &World) -> crate::drift::DriftSnapshot {
    let m = read_cluster(&world.cluster).unwrap();
    let version = crate::cloud::ami::KubeVersion::new(1, 29);
    crate::usecases::drift_check::gather(&m, &*world.cloud, version, 0, &mut |_| {
        Ok(crate::cloud::Catalog::embedded().unwrap())
    })
    .unwrap()
}

/// docs/reliability.md, "an instance EC2 forgot": the ghost's instance was terminated long
/// enough ago that EC2 no longer describes it (about an hour), its Node still registered
/// (claimless, of a NodePool). The selection described every node's instance through an
/// `instance-id` filter, so one missing from the answer is one EC2 forgot: the ghost is no
/// capacity, the drifted node's replacement is launched — as `consolidate` and `nodes` take it
/// (`InstanceGone::NotFound`). Before, a missing instance was "not known" and the pod was
/// planned onto a node that does not exist.
#[test]
fn a_ghost_whose_instance_ec2_forgot_is_no_capacity() {
    let world = world();
    budget(&world, "1");
    let old = drifted(&world, 1);
    let ghost = world.registered_node("default", "c6a.large");
    let ghost_instance = instance_of(&ghost);
    world
        .cloud
        .instances
        .borrow_mut()
        .retain(|i| i.id != ghost_instance);
    let mut settings = settings();
    settings.gone_instances = gone_instances(&gathered(&world));
    assert_eq!(settings.gone_instances, [ghost_instance].into());
    replaced_with_one_launch(&world, &old, &settings);
}

/// A node whose instance is missing from a listing for another reason than EC2 forgetting it
/// is still capacity: one of another region (its provider id's zone; EC2 was asked in
/// `us-east-1` only), and any node of a snapshot whose instances were not described
/// (`instances_described_in` unset). A failed description fails the selection instead.
#[test]
fn an_instance_missing_for_another_reason_is_not_forgotten() {
    let world = world();
    let elsewhere = world.registered_node("default", "c6a.large");
    let instance = instance_of(&elsewhere);
    world.cluster.update("v1", "Node", None, &elsewhere, |n| {
        n["spec"]["providerID"] = json!(format!("aws:///eu-west-1a/{instance}"));
    });
    let home = world.registered_node("default", "c6a.large");
    world.cloud.instances.borrow_mut().clear();
    let gathered = gathered(&world);
    assert_eq!(gone_instances(&gathered), [instance_of(&home)].into());
    let m = read_cluster(&world.cluster).unwrap();
    assert!(gone_instances(&snapshot_of(&world, &m)).is_empty());
}

/// A replacement plan covers its node's pods only: the pods of another node being deleted
/// (one whose replacement the pipeline launched before draining it, or one someone else is
/// deleting — `provision` plans those) are not planned again here, which would launch twice.
#[test]
fn a_replacement_is_planned_for_its_own_pods_not_a_deleting_nodes() {
    let world = world();
    budget(&world, "10");
    let nodes = drifted(&world, 2);
    // Deleted through its NodeClaim: the Node itself has no deletionTimestamp yet.
    let instance = instance_of(&nodes[1]);
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-abcde", "labels": {"karpenter.sh/nodepool": "default"},
            "finalizers": ["karpenter.sh/termination"],
            "deletionTimestamp": "2026-12-04T00:00:00Z"},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
        "status": {"nodeName": nodes[1], "providerID": format!("aws:///us-east-1a/{instance}")},
    }));
    let run = replace(&world, &nodes[..1], &settings());
    let launched: Vec<Vec<String>> = run
        .launches()
        .into_iter()
        .filter_map(|e| match e {
            provisioning::Event::Launched(l) => Some(l.pods.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(launched, [vec!["default/p0".to_string()]]);
}

/// Disruption never relies on a node that is not initialized: a drifted node whose pod would
/// land on one waits (blocked this run, named), nothing written or launched; once the node is
/// initialized the pod goes there. Mirrors core v1.14.1
/// `pkg/controllers/disruption/consolidation_test.go` "won't delete node if it would require
/// pods to schedule on an uninitialized node" — the same `SimulateScheduling`
/// (`UninitializedNodeError` in `helpers.go`) that drift's `ComputeCommands` skips a candidate
/// on (`drift.go`: `!results.AllNonPendingPodsScheduled()`).
#[test]
fn a_drifted_node_whose_pods_would_land_on_an_uninitialized_node_waits() {
    let world = world();
    let old = drifted(&world, 1);
    // Registered, Ready, empty, with room for p0, Karpenter's (a NodeClaim) — but not
    // initialized yet.
    let fresh = world.registered_node("default", "c6a.large");
    let provider = node_json(&world, &fresh).unwrap()["spec"]["providerID"].clone();
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "fresh-claim", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
        "status": {"nodeName": fresh, "providerID": provider}
    }));
    let run = replace(&world, &old, &settings());
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::Blocked, "{o:?}");
    assert_eq!(
        o.detail,
        Detail::UninitializedDestination {
            node: fresh.clone(),
            pods: vec!["default/p0".into()],
        }
    );
    assert_eq!(
        o.detail.to_string(),
        format!("waits: its pods would land on uninitialized node {fresh} (default/p0)")
    );
    assert!(world.cluster.writes().is_empty(), "nothing changed");
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);

    // Initialized: relied on now, nothing launched.
    world.cluster.update("v1", "Node", None, &fresh, |n| {
        n["metadata"]["labels"]["karpenter.sh/initialized"] = json!("true");
    });
    replaced_onto_an_existing_node(&world, &old, &fresh);
}

/// `old`'s single node is replaced, its pod going to `node`: nothing launched.
fn replaced_onto_an_existing_node(world: &World, old: &[String], node: &str) {
    let run = replace(world, old, &settings());
    assert_eq!(
        run.outcome(&old[0]).status,
        Status::Replaced,
        "{:?}",
        run.outcomes
    );
    assert_eq!(calls(world, "EC2.CreateFleet"), 0, "p0 went to {node}");
}

/// A node without a NodeClaim (one `provision` launched, which no controller will ever label
/// initialized) is not Karpenter's: upstream's `StateNode.Initialized()` is true for it
/// (`pkg/controllers/state/statenode.go`, `Managed()` is having a NodeClaim), so pods may move
/// onto it. Found by the least-privilege e2e: a node `provision --yes` launched blocked the
/// next `drift replace` for good.
#[test]
fn a_node_without_a_nodeclaim_is_not_managed_and_counts_as_initialized() {
    let world = world();
    let old = drifted(&world, 1);
    let launched = world.registered_node("default", "c6a.large");
    replaced_onto_an_existing_node(&world, &old, &launched);
}

/// The re-plan follows the controller's `MinValuesPolicy` (`Settings::policies`; core
/// v1.14.1 `disruption/helpers.go` `SimulateScheduling` schedules under the operator's policy):
/// a pool asking `minValues: 3` of three instance types, two of them with the CPUs it allows, gets no replacement under Strict (the
/// node is blocked, its pods fit nowhere new) and one relaxed NodeClaim under BestEffort.
#[test]
fn the_replacement_follows_the_min_values_policy() {
    use crate::scheduling::MinValuesPolicy;
    for (policy, relaxed) in [
        (MinValuesPolicy::Strict, None),
        (MinValuesPolicy::BestEffort, Some("true")),
    ] {
        let world = world();
        world.cluster.put(node_pool(
            "default",
            json!({"template": on_demand_template(json!([
                {"key": "karpenter.k8s.aws/instance-cpu", "operator": "In", "values": ["2", "4"]},
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                    "values": ["c6a.large", "c6a.xlarge", "c6a.2xlarge"], "minValues": 3}]))}),
        ));
        let old = drifted(&world, 1);
        let settings = Settings {
            policies: crate::scheduling::Policies {
                min_values: policy,
                ..Default::default()
            },
            ..settings()
        };
        let run = replace(&world, &old, &settings);
        let launched: Vec<String> = run
            .events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Launch(crate::usecases::provisioning::Event::Launched(l)) => l
                    .node_annotations
                    .get(crate::model::labels::NODECLAIM_MIN_VALUES_RELAXED)
                    .cloned(),
                _ => None,
            })
            .collect();
        assert_eq!(
            launched.first().map(String::as_str),
            relaxed,
            "{policy:?}: {:#?}",
            run.outcomes
        );
        let status = run.outcome(&old[0]).status;
        match relaxed {
            Some(_) => assert_eq!(status, Status::Replaced, "{policy:?}"),
            None => assert_eq!(status, Status::Blocked, "{policy:?}"),
        }
    }
}

/// `core v1.14.1 pkg/utils/pod/scheduling.go IsReschedulable` as drift's candidates use it
/// (`pkg/controllers/disruption/types.go NewCandidate`): a terminating pod that a StatefulSet
/// does not own is already going and needs no place. A drifted node whose only pod (20 CPU, more
/// than any type has) is being deleted by its rollout is replaced by nothing, not blocked as
/// unplaceable; once it is a StatefulSet's, its replacement must wait for it, so it needs room.
/// **Differed, fixed (s24-audit-state)**: every terminating pod was planned for.
#[test]
fn a_terminating_pod_needs_no_place_unless_a_statefulset_owns_it() {
    let world = world();
    let old = drifted(&world, 1);
    let deleted_at = crate::model::time::format_rfc3339(world.clock.now() + 120);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["metadata"]["deletionTimestamp"] = json!(deleted_at);
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("20");
        });
    let (m, actions) = super::actions(&world, &old);
    assert_eq!(
        crate::usecases::replace::select::pods_to_move(&m, &m.nodes[0]),
        0
    );
    let preview = replace_pipeline::preview(&world.live(), &m, actions, &settings()).unwrap();
    let o = &preview.outcomes()[0];
    assert_eq!(
        (o.status, o.replacements.len()),
        (Status::Planned, 0),
        "{:?}",
        o.detail
    );
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["metadata"]["ownerReferences"][0]["kind"] = json!("StatefulSet");
        });
    let (m, actions) = super::actions(&world, &old);
    let preview = replace_pipeline::preview(&world.live(), &m, actions, &settings()).unwrap();
    let o = &preview.outcomes()[0];
    assert_eq!(o.status, Status::Blocked, "{:?}", o.detail);
    assert!(matches!(&o.detail, Detail::Unplaceable(pods) if pods[0].starts_with("default/p0: ")));
}

/// The session's type settings (the controller's `VM_MEMORY_OVERHEAD_PERCENT`, `aws v1.14.1:
/// pkg/providers/instancetype/types.go` `memory`) size the replacement as they size
/// `provision`'s plans: at 30 % a c6a.large (4 GiB) no longer holds the 2500Mi pod.
#[test]
fn the_replacement_is_sized_with_the_controllers_type_settings() {
    for (overhead, launched) in [(None, "c6a.large"), (Some(0.3), "c6a.xlarge")] {
        let world = world();
        let old = drifted(&world, 1);
        world
            .cluster
            .update("v1", "Pod", Some("default"), "p0", |p| {
                p["spec"]["containers"][0]["resources"]["requests"]["memory"] = json!("2500Mi");
            });
        let (m, actions) = actions(&world, &old);
        let mut live = world.live();
        live.type_settings.vm_memory_overhead_percent = overhead;
        let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
        let outcomes =
            replace_pipeline::run(&mut live, preview, &settings(), &mut |_: Event| {}).unwrap();
        assert_eq!(outcomes[0].status, Status::Replaced, "{overhead:?}");
        let types: Vec<String> = world
            .running()
            .into_iter()
            .map(|i| i.instance_type)
            .collect();
        assert_eq!(types, [launched], "{overhead:?}");
    }
}

/// A budget lowered to `0` mid-rollout (an operator pausing it) holds back every node not
/// started yet; the one in flight finishes (core v1.14.1 `disruption/validation.go`
/// `validateCandidates`: the budget mapping is built again before a command starts). Found by
/// the mutating fuzzer, round 3 (`fuzz_mutating::tests::round_3_a_budget_lowered_mid_run_holds_back_what_has_not_started`).
#[test]
fn a_budget_lowered_to_zero_mid_rollout_starts_no_other_node() {
    let world = world();
    budget(&world, "1");
    let old = drifted(&world, 3);
    world
        .cluster
        .after(Http::Patch, &format!("/api/v1/nodes/{}", old[0]), |c| {
            c.update("karpenter.sh/v1", "NodePool", None, "default", |p| {
                p["spec"]["disruption"]["budgets"] = json!([{"nodes": "0"}]);
            })
        });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    for name in &old[1..] {
        assert_eq!(run.outcome(name).status, Status::WaitingBudget, "{name}");
        assert!(record_of(&world, name).is_none(), "{name} untouched");
    }
}
