//! `--via-controller`: NodeClaims handed to a running Karpenter one budget's worth at a time,
//! each followed until its pods are bound again; a failure stops further handovers.

use super::*;
use crate::error::Exit;
use crate::usecases::replace::via_controller::{self, Handover};

/// A running Karpenter controller Deployment.
fn controller(world: &World) {
    world.cluster.put(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system",
            "labels": {"app.kubernetes.io/name": "karpenter"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "controller", "image": "public.ecr.aws/karpenter/controller:1.0.0"}]}}},
        "status": {"readyReplicas": 1, "replicas": 1},
    }));
}

/// A NodeClaim with Karpenter's finalizer owning `node`; its name.
fn claim_of(world: &World, node: &str) -> String {
    let name = format!("default-{}", &instance_of(node)[14..]);
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"},
            "finalizers": ["karpenter.sh/termination"]},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": []},
        "status": {"nodeName": node,
            "providerID": format!("aws:///us-east-1a/{}", instance_of(node))},
    }));
    name
}

/// Plays Karpenter's termination controller: a NodeClaim being deleted (except `stuck` ones)
/// has its node's pods sent back to pending, its Node removed and its instance terminated
/// `drain` after the deletion was seen; then the NodeClaim goes.
fn karpenter(world: &World, drain: Duration, stuck: &[String]) {
    let handle = world_handle(world);
    let stuck = stuck.to_vec();
    let mut seen: std::collections::BTreeMap<String, Duration> = Default::default();
    world.clock.on_tick(move |now| {
        for claim in handle.cluster.list("karpenter.sh/v1", "NodeClaim") {
            let name = claim["metadata"]["name"].as_str().unwrap().to_string();
            if claim["metadata"]["deletionTimestamp"].is_null() || stuck.contains(&name) {
                continue;
            }
            let since = *seen.entry(name.clone()).or_insert(now);
            if now < since + drain {
                continue;
            }
            let node = claim["status"]["nodeName"].as_str().unwrap().to_string();
            for pod in handle.cluster.list("v1", "Pod") {
                if pod["spec"]["nodeName"] == node.as_str() {
                    let pod_name = pod["metadata"]["name"].as_str().unwrap();
                    handle
                        .cluster
                        .update("v1", "Pod", Some("default"), pod_name, |p| {
                            p["spec"]["nodeName"] = Value::Null;
                            p["status"] = json!({"phase": "Pending"});
                        });
                }
            }
            handle.cluster.remove("v1", "Node", None, &node);
            for i in handle.cloud.instances.borrow_mut().iter_mut() {
                if i.id == instance_of(&node) {
                    i.state = "shutting-down".into();
                }
            }
            handle
                .cluster
                .remove("karpenter.sh/v1", "NodeClaim", None, &name);
        }
    });
}

fn prepare(
    world: &World,
    names: &[String],
    settings: &Settings,
) -> Result<Handover, crate::error::CommandError> {
    let (m, actions) = actions(world, names);
    via_controller::prepare(&world.live(), &m, actions, settings, &mut |_| {})
}

fn hand_over(world: &World, names: &[String], settings: &Settings) -> Run {
    let (m, actions) = actions(world, names);
    let live = world.live();
    let log: Rc<RefCell<Vec<(Duration, Event)>>> = Rc::default();
    let (keep, clock) = (log.clone(), world.clock.clone());
    let mut sink = move |e| keep.borrow_mut().push((clock.monotonic(), e));
    let handover = via_controller::prepare(&live, &m, actions, settings, &mut sink).unwrap();
    let outcomes = via_controller::run(&live, handover, settings, &mut sink).unwrap();
    let events = log.borrow().clone();
    Run { outcomes, events }
}

/// Two drifted Karpenter nodes and a spare node with room for their pods; a budget of one.
fn two_karpenter_nodes(world: &World) -> (Vec<String>, Vec<String>) {
    controller(world);
    budget(world, "1");
    let old = drifted(world, 2);
    let claims = old.iter().map(|n| claim_of(world, n)).collect();
    let spare = world.registered_node("default", "c6a.xlarge");
    claim_of(world, &spare);
    (old, claims)
}

#[test]
fn without_a_running_controller_it_refuses_unless_forced() {
    let world = world();
    let old = drifted(&world, 1);
    let err = prepare(&world, &old, &settings()).unwrap_err();
    assert_eq!(err.exit, Exit::Refused);
    assert!(
        err.message
            .starts_with("no Karpenter controller is running"),
        "{}",
        err.message
    );
    assert!(err.hint.is_some());
    let mut forced = settings();
    forced.force = true;
    let (m, actions) = actions(&world, &old);
    let mut events = Vec::new();
    via_controller::prepare(&world.live(), &m, actions, &forced, &mut |e| events.push(e)).unwrap();
    assert!(
        matches!(&events[..], [Event::Warning(w)] if w.ends_with("--force given, going ahead"))
    );
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn nodes_the_controller_would_not_replace_are_blocked_and_named() {
    let world = world();
    controller(&world);
    let old = drifted(&world, 3);
    // old[0]: launched by this tool, no NodeClaim. old[1]: its NodeClaim is being deleted.
    // old[2]: a kubectl-karpenter replacement in progress.
    let claim = claim_of(&world, &old[1]);
    crate::k8s::ops::delete(
        &world.cluster,
        &format!("/apis/karpenter.sh/v1/nodeclaims/{claim}"),
        None,
    )
    .unwrap();
    world.cluster.update("v1", "Node", None, &old[2], |n| {
        n["metadata"]["annotations"] = json!({REPLACEMENT: Record::default().format()});
    });
    world.cluster.clear_requests();
    let handover = prepare(&world, &old, &settings()).unwrap();
    let details: Vec<(Status, Detail)> = handover
        .outcomes()
        .iter()
        .map(|o| (o.status, o.detail.clone()))
        .collect();
    assert_eq!(
        details,
        [
            (
                Status::Blocked,
                Detail::NotTheControllers { owner: "NodeClaim" }
            ),
            (
                Status::Blocked,
                Detail::ClaimDeleting {
                    kind: "NodeClaim",
                    name: claim
                }
            ),
            (Status::Blocked, Detail::ReplacementInProgress),
        ]
    );
    assert!(handover.starting().is_empty());
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn node_claims_are_handed_over_one_budget_at_a_time_each_followed_until_its_pods_run_again() {
    let world = world();
    let (old, claims) = two_karpenter_nodes(&world);
    karpenter(&world, secs(20), &[]);
    let handover = prepare(&world, &old, &settings()).unwrap();
    assert_eq!(handover.starting(), [format!("NodeClaim {}", claims[0])]);
    assert_eq!(handover.queued(), 1);
    assert_eq!(
        handover.outcomes()[0].detail,
        Detail::HandOver {
            kind: "NodeClaim",
            name: claims[0].clone()
        }
    );

    let run = hand_over(&world, &old, &settings());
    assert!(
        run.outcomes.iter().all(|o| o.status == Status::Replaced),
        "{:?}",
        run.outcomes
    );
    let deletes: Vec<String> = world
        .cluster
        .writes()
        .into_iter()
        .filter(|w| w.starts_with("DELETE"))
        .collect();
    assert_eq!(
        deletes,
        claims
            .iter()
            .map(|c| format!("DELETE /apis/karpenter.sh/v1/nodeclaims/{c}"))
            .collect::<Vec<_>>(),
        "only the NodeClaims: the controller does the rest"
    );
    // The second goes only once the first node's pods run again.
    let placed = run.when(&old[0], |s| *s == NodeStep::PodsPlacedAgain);
    let second = run.when(&old[1], |s| matches!(s, NodeStep::HandedOver { .. }));
    assert!(run.when(&old[0], |s| *s == NodeStep::GoneByController) <= placed);
    assert!(placed <= second, "{placed:?} {second:?}");
    assert_eq!(
        run.steps(&old[1]),
        [
            NodeStep::HandedOver {
                kind: "NodeClaim",
                name: claims[1].clone()
            },
            NodeStep::GoneByController,
            NodeStep::PodsPlacedAgain
        ]
    );
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        0,
        "nothing launched by this tool"
    );
}

#[test]
fn a_node_the_controller_does_not_drain_fails_and_nothing_more_is_handed_over() {
    let world = world();
    let (old, claims) = two_karpenter_nodes(&world);
    karpenter(&world, secs(20), &claims[..1]);
    let mut short = settings();
    short.drain_timeout = secs(120);
    let run = hand_over(&world, &old, &short);
    let first = run.outcome(&old[0]);
    assert_eq!(
        (first.status, &first.detail),
        (
            Status::Failed,
            &Detail::ControllerStillDraining { after: secs(120) }
        )
    );
    let second = run.outcome(&old[1]);
    assert_eq!(
        (second.status, &second.detail),
        (
            Status::Queued,
            &Detail::AfterHandoverFailure {
                node: old[0].clone()
            }
        )
    );
    let deletes = world
        .cluster
        .writes()
        .into_iter()
        .filter(|w| w.starts_with("DELETE"))
        .count();
    assert_eq!(deletes, 1);
    assert_eq!(verdict(&run.outcomes).unwrap_err().exit, Exit::Remote);
}
