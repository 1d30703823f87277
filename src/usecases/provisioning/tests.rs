//! Every branch of live provisioning against the fake cluster, cloud and clock, asserting the
//! exact calls: cluster writes ([`FakeCluster::writes`](crate::k8s::fake::FakeCluster::writes)),
//! cloud calls and instances, and the events with the (fake) time they happened at.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;

use super::plan::Round;
use super::*;
use crate::cloud::launch::LaunchError;
use crate::cloud::types::CapacityReservation;
use crate::cloud::types::Cloud;
use crate::disruption::emptiness::empty_ttl;
use crate::error::Exit;
use crate::k8s::coexist;
use crate::k8s::fake::FakeCluster;
use crate::model::labels::{EMPTY_SINCE, NODECLAIM};
use crate::model::nodepool::NodePool;
use crate::usecases::clock::Clock;
use crate::usecases::testing::{node_name, node_pool, odcr, put_bound, TestLive, World};

type Log = Rc<RefCell<Vec<(Duration, Event)>>>;

/// Every pool, up to 60 instance types per NodeClaim (what `provision` passes by default).
pub(super) fn all() -> Selection {
    Selection {
        max_instance_types: 60,
        ..Selection::default()
    }
}

/// A sink that keeps each event with the time it was reported at.
fn recorder(world: &World) -> (Log, impl FnMut(Event)) {
    let log: Log = Rc::default();
    let (keep, clock) = (log.clone(), world.clock.clone());
    (log, move |e| keep.borrow_mut().push((clock.monotonic(), e)))
}

fn events(log: &Log) -> Vec<Event> {
    log.borrow().iter().map(|(_, e)| e.clone()).collect()
}

fn calls(world: &World, operation: &str) -> u64 {
    world.cloud.call_counts().get(operation)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Plans for the pending pods and launches the plan.
fn provision(
    live: &mut TestLive<'_>,
    sink: &mut dyn crate::usecases::Sink<Event>,
) -> (Round, Launches) {
    let round = live
        .plan_pending(&all(), sink)
        .unwrap()
        .expect("pods pending");
    let launches = live
        .launch_all(&round.classes, &round.plan, &round.input, sink)
        .unwrap();
    (round, launches)
}

#[test]
fn nothing_pending_plans_nothing_and_calls_nothing() {
    let world = World::new();
    let (log, mut sink) = recorder(&world);
    let round = world.live().plan_pending(&all(), &mut sink).unwrap();
    assert!(round.is_none());
    assert!(world.cluster.writes().is_empty());
    assert_eq!(world.cloud.call_counts().total(), 0);
    assert!(log.borrow().is_empty());
}

/// aws#1649: a DaemonSet pod the scheduler marked unschedulable gets no capacity (core v1.14.1
/// `pkg/utils/pod/scheduling.go` `IsProvisionable`: `!IsOwnedByDaemonSet`, and `FailedToSchedule`
/// for the scheduler's mark): live planning names it by default, even with nothing else
/// pending; one the scheduler has not tried yet is not named.
#[test]
fn a_pending_daemon_set_pod_is_named_live_and_not_planned() {
    let world = World::new();
    let mut unschedulable = crate::usecases::testing::pending_pod("agent-x", "1");
    unschedulable["metadata"]["namespace"] = json!("kube-system");
    unschedulable["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
        "kind": "DaemonSet", "name": "agent", "uid": "ds-1", "controller": true}]);
    let mut untried = unschedulable.clone();
    untried["metadata"]["name"] = json!("agent-y");
    untried["status"] = json!({"phase": "Pending"});
    world.cluster.put(unschedulable);
    world.cluster.put(untried);
    let (log, mut sink) = recorder(&world);
    let round = world.live().plan_pending(&all(), &mut sink).unwrap();
    assert!(round.is_none(), "nothing to launch for");
    assert_eq!(
        events(&log),
        [Event::Warning(
            "1 pending pod is owned by a DaemonSet (kube-system/agent-x): Karpenter provisions no capacity for it; a DaemonSet pod runs on nodes launched for other pods, which are sized with its requests".into()
        )]
    );
    assert!(world.cluster.writes().is_empty());
    assert_eq!(world.cloud.call_counts().total(), 0);
}

#[test]
fn without_karpenter_crds_there_is_nothing_to_launch_for() {
    let world = World {
        cluster: FakeCluster::new(),
        ..World::new()
    };
    world.pending("a", "1");
    let err = world.live().plan_pending(&all(), &mut |_| {}).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(err.message.contains("no Karpenter CRDs"), "{}", err.message);
    assert!(err.hint.is_some());
}

#[test]
fn an_unknown_nodepool_is_an_input_error() {
    let world = World::new();
    world.pending("a", "1");
    let selection = Selection {
        nodepools: vec!["nope".into()],
        ..all()
    };
    let err = world
        .live()
        .plan_pending(&selection, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert_eq!(
        err.message,
        "--nodepool nope: no such NodePool or Provisioner in the input"
    );
}

#[test]
fn a_plan_is_launched_as_confirmed_only_while_the_cluster_still_asks_for_it() {
    let world = World::new();
    world.pending("big-0", "12");
    world.pending("big-1", "12");
    let live = world.live();
    let asked = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    // Nothing changed during the question: the same launches.
    let fresh = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    assert!(asked.same_launches(&fresh));
    // A third pod arrived meanwhile: what would be launched differs, so it is asked again.
    world.pending("big-2", "12");
    let fresh = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    assert!(!asked.same_launches(&fresh));
    assert!(world.cluster.writes().is_empty());
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn each_planned_node_claim_launches_one_instance_tagged_with_its_name() {
    let world = World::new();
    // 12 CPU each: no type holds both.
    world.pending("big-0", "12");
    world.pending("big-1", "12");
    let (log, mut sink) = recorder(&world);
    let (round, launches) = provision(&mut world.live(), &mut sink);
    assert_eq!(round.plan.node_claims.len(), 2);
    assert!(launches.failed.is_empty());
    assert_eq!(calls(&world, "EC2.CreateFleet"), 2);
    // Both claims share one (AMI, max-pods) template.
    assert_eq!(world.cloud.templates.borrow().len(), 1);
    let instances = world.running();
    assert_eq!(instances.len(), 2);
    for (claim, launch) in round.plan.node_claims.iter().zip(&launches.launched) {
        assert_eq!(launch.node_claim, claim.name);
        assert!(claim.name.starts_with("default-"), "{}", claim.name);
        assert_eq!(launch.pods, claim.pods);
        assert!(!launch.adopted);
        let instance = instances
            .iter()
            .find(|i| i.id == launch.instance_id)
            .unwrap();
        assert_eq!(instance.tags[NODECLAIM], claim.name);
        assert_eq!(instance.tags["karpenter.sh/nodepool"], "default");
        assert_eq!(launch.instance_type, "c6a.4xlarge");
        assert_eq!(
            launch.node_labels["karpenter.k8s.aws/instance-family"],
            "c6a"
        );
    }
    assert_eq!(
        events(&log),
        launches
            .launched
            .iter()
            .cloned()
            .map(|l| Event::Launched(Box::new(l)))
            .collect::<Vec<_>>()
    );
    // Launching writes nothing to the cluster: the instances are the record.
    assert!(world.cluster.writes().is_empty());
}

/// `--instance-profile` (docs/spec.md §5.2) names the nodes' profile for every class: the
/// templates carry it, and the class's role is not looked up.
#[test]
fn the_instance_profile_flag_is_the_templates_profile_and_spares_the_iam_lookup() {
    let world = World::new();
    world.pending("web-0", "1");
    let (_, mut sink) = recorder(&world);
    let mut live = world.live();
    provision(&mut live, &mut sink);
    let templates = |w: &World| -> Vec<Option<String>> {
        w.cloud
            .templates
            .borrow()
            .values()
            .map(|t| t.instance_profile.clone())
            .collect()
    };
    assert_eq!(templates(&world), [Some("NodeProfile".to_string())]);
    assert_eq!(calls(&world, "IAM.ListInstanceProfilesForRole"), 1);

    let world = World::new();
    world.pending("web-0", "1");
    let mut live = world
        .live()
        .with_instance_profile(Some("OperatorProfile".into()));
    provision(&mut live, &mut sink);
    assert_eq!(templates(&world), [Some("OperatorProfile".to_string())]);
    assert_eq!(calls(&world, "IAM.ListInstanceProfilesForRole"), 0);
}

#[test]
fn an_instance_launched_but_not_registered_is_capacity_for_the_next_run() {
    let world = World::new();
    world.pending("a", "1");
    provision(&mut world.live(), &mut |_| {});
    // Nothing registered (a run killed after launching): the re-run plans onto the instance.
    let again = world
        .live()
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .unwrap();
    assert!(again.plan.node_claims.is_empty());
    assert!(again.plan.unschedulable.is_empty());
    let placed = &again.plan.existing_nodes[0];
    let id = &world.running()[0].id;
    assert!(
        placed.node.ends_with(&format!("(launching {id})")),
        "{}",
        placed.node
    );
    assert_eq!(placed.pods, ["default/a"]);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn a_retried_launch_adopts_the_instance_of_its_node_claim() {
    let world = World::new();
    world.pending("a", "1");
    let mut live = world.live();
    let (round, first) = provision(&mut live, &mut |_| {});
    let again = live
        .launch_all(&round.classes, &round.plan, &round.input, &mut |_| {})
        .unwrap();
    assert!(again.launched[0].adopted);
    assert_eq!(again.launched[0].instance_id, first.launched[0].instance_id);
    assert_eq!(world.running().len(), 1);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn a_node_claim_name_whose_instance_registered_long_ago_is_not_adopted_again() {
    // The first run's node registered and the scheduler bound other pods there; the pods that
    // plan was made for are pending again. Their NodeClaim would get the same name: the
    // registered instance must not be adopted for them (they would stay pending for ever).
    let world = World::new();
    world.pending("a", "1");
    let mut live = world.live();
    let (first_round, first) = provision(&mut live, &mut |_| {});
    let first_id = first.launched[0].instance_id.clone();
    let node = node_name(&first_id);
    let instance = world.running()[0].clone();
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node, "labels": {"karpenter.sh/nodepool": "default",
            "node.kubernetes.io/instance-type": instance.instance_type}},
        "spec": {"providerID": format!("aws:///{}/{}", instance.zone, first_id),
            "taints": [{"key": "full", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "29"},
            "conditions": [{"type": "Ready", "status": "True"}]},
    }));
    let (round, again) = provision(&mut live, &mut |_| {});
    assert_ne!(
        round.plan.node_claims[0].name,
        first_round.plan.node_claims[0].name
    );
    assert_eq!(round.plan.node_claims[0].name.len(), "default-".len() + 16);
    assert!(!again.launched[0].adopted);
    assert_ne!(again.launched[0].instance_id, first_id);
    assert_eq!(world.running().len(), 2);
}

#[test]
fn a_lost_create_fleet_answer_adopts_the_instance_it_launched() {
    let world = World::new();
    world.pending("a", "1");
    world.cloud.lose_fleet_answers.set(1);
    let (_, launches) = provision(&mut world.live(), &mut |_| {});
    assert!(launches.launched[0].adopted);
    assert_eq!(world.running().len(), 1);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn insufficient_capacity_in_the_cheapest_pool_launches_in_the_next() {
    let world = World::new();
    world.pending("a", "1");
    world.cloud.insufficient_capacity("c6a.large", "us-east-1a");
    let (round, launches) = provision(&mut world.live(), &mut |_| {});
    let planned = &round.plan.node_claims[0].launch;
    assert_eq!(
        (planned.instance_type.as_str(), planned.zone.as_str()),
        ("c6a.large", "us-east-1a")
    );
    let l = &launches.launched[0];
    assert_eq!(
        (l.instance_type.as_str(), l.zone.as_str()),
        ("c6a.large", "us-east-1b")
    );
    assert_eq!(l.pool_errors.len(), 1);
    assert_eq!(l.pool_errors[0].code, "InsufficientInstanceCapacity");
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
}

#[test]
fn a_node_claim_whose_every_pool_fails_is_reported_and_leaves_nothing() {
    let world = World::new();
    world.pending("a", "1");
    for t in ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"] {
        world.cloud.insufficient_capacity(t, "*");
    }
    let (log, mut sink) = recorder(&world);
    let (round, launches) = provision(&mut world.live(), &mut sink);
    assert!(launches.launched.is_empty());
    let failure = &launches.failed[0];
    assert_eq!(failure.node_claim, round.plan.node_claims[0].name);
    assert!(matches!(
        failure.error,
        LaunchError::InsufficientCapacity { .. }
    ));
    assert!(
        failure.message().contains("no capacity"),
        "{}",
        failure.message()
    );
    assert_eq!(events(&log), [Event::LaunchFailed(failure.clone())]);
    assert!(world.cloud.instances.borrow().is_empty());
}

#[test]
fn a_class_that_does_not_resolve_fails_before_anything_launches() {
    let mut world = World::new();
    Rc::get_mut(&mut world.cloud).unwrap().subnets.clear();
    world.pending("a", "1");
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let err = live
        .launch_all(&round.classes, &round.plan, &round.input, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert_eq!(
        err.message,
        "EC2NodeClass/default: no subnet matches the subnet selector"
    );
    assert_eq!(calls(&world, "EC2.CreateLaunchTemplate"), 0);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn wait_ends_when_the_node_is_ready_and_the_pods_bound_and_labels_the_node() {
    let world = World::new();
    world.kubelet(Duration::from_secs(20));
    world.scheduler();
    world.pending("a", "1");
    world.pending("b", "1");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    let (log, mut sink) = recorder(&world);
    let waited = live
        .wait(&launches.launched, Duration::from_secs(600), &mut sink)
        .unwrap();
    let node = node_name(&launches.launched[0].instance_id);
    // The kubelet saw the instance at the first poll (1 s) and registered it 20 s later.
    assert_eq!(
        waited,
        Waited::Ready(WaitReport {
            nodes: [(launches.launched[0].instance_id.clone(), node.clone())].into(),
            pods_bound: 2,
            pods: 2,
            seconds: 21.0,
        })
    );
    let done = WaitStatus {
        ready: 1,
        nodes: 1,
        bound: 2,
        pods: 2,
    };
    let seen = events(&log);
    assert_eq!(seen.first(), Some(&Event::WaitStarted));
    assert_eq!(seen.last(), Some(&Event::WaitDone(done)));
    // Labelled once, as Karpenter's controller does when the node registers.
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH /api/v1/nodes/{node}")]
    );
    let labels = &world.cluster.get("v1", "Node", None, &node).unwrap()["metadata"]["labels"];
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    assert_eq!(labels["karpenter.sh/registered"], "true");
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "c6a");
}

/// `core v1.14.1: pkg/controllers/nodeclaim/lifecycle/initialization_test.go` live: "should not
/// consider the Node to be initialized when all startupTaints aren't removed", "… once the
/// startupTaints are removed", "should add the initialization label to the node when the nodeClaim
/// is initialized" (the rule itself: `model::node::tests::initialization_table`). **Differed,
/// fixed** — scenario: a pool with `startupTaints: [agent.example/not-ready:NoSchedule]`, one pod;
/// the launched node registers Ready at 21 s with the startup taint, its agent removes it at 40 s
/// → upstream labels it `karpenter.sh/registered` at registration and `karpenter.sh/initialized`
/// only at 40 s; `provision --wait` labelled it initialized at 21 s (on Ready alone), so the next
/// plan held the startup taint against pods. Now the type labels and `registered` are written
/// when the node is Ready, `initialized` once `Node::initialization` holds, and the wait ends
/// there.
#[test]
fn wait_labels_the_node_initialized_only_once_its_startup_taints_are_gone() {
    let world = World::new();
    world.cluster.put(crate::usecases::testing::node_pool(
        "default",
        json!({"template": {
            "metadata": {"labels": {"team": "a"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                "name": "default"},
                "startupTaints": [{"key": "agent.example/not-ready", "effect": "NoSchedule"}],
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                    "values": ["on-demand"]}]}}}),
    ));
    world.kubelet(Duration::from_secs(20));
    // The kubelet registers with the startup taint (`--register-with-taints`); the agent
    // removes it at 40 s.
    let cluster = world.cluster.clone();
    world.clock.on_tick(move |now| {
        for mut n in cluster.list("v1", "Node") {
            let want = if now < Duration::from_secs(40) {
                json!([{"key": "agent.example/not-ready", "effect": "NoSchedule"}])
            } else {
                json!([])
            };
            if n["spec"]["taints"] != want {
                n["spec"]["taints"] = want;
                cluster.put(n);
            }
        }
    });
    world.scheduler();
    world.pending("a", "1");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    let node = node_name(&launches.launched[0].instance_id);
    let labels =
        || world.cluster.get("v1", "Node", None, &node).unwrap()["metadata"]["labels"].clone();

    let waited = live
        .wait(&launches.launched, Duration::from_secs(30), &mut |_| {})
        .unwrap();
    assert!(matches!(waited, Waited::TimedOut { .. }), "{waited:?}");
    assert_eq!(labels()["karpenter.sh/registered"], "true");
    assert_eq!(labels()["karpenter.k8s.aws/instance-family"], "c6a");
    assert!(
        labels().get("karpenter.sh/initialized").is_none(),
        "{}",
        labels()
    );

    let waited = live
        .wait(&launches.launched, Duration::from_secs(600), &mut |_| {})
        .unwrap();
    assert!(matches!(waited, Waited::Ready(_)), "{waited:?}");
    assert!(world.clock.monotonic() >= Duration::from_secs(40));
    assert_eq!(labels()["karpenter.sh/initialized"], "true");
    assert_eq!(
        world.cluster.writes(),
        [
            format!("PATCH /api/v1/nodes/{node}"),
            format!("PATCH /api/v1/nodes/{node}")
        ],
        "registered once, initialized once"
    );
}

/// "Annotations › should annotate nodes" (`core v1.14.1: pkg/controllers/provisioning/
/// suite_test.go`) live: the pool's template annotation is on the planned NodeClaim and, once the
/// node registers, on the Node — with the labels, in the one patch (`nodeclaim/lifecycle/
/// registration_test.go` "should sync the annotations to the Node when the Node comes online").
#[test]
fn the_templates_annotations_reach_the_launched_node() {
    let world = World::new();
    world.cluster.put(crate::usecases::testing::node_pool(
        "default",
        json!({"template": {
            "metadata": {"labels": {"team": "a"},
                "annotations": {"karpenter.sh/do-not-disrupt": "true"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                    "values": ["on-demand"]}]}}}),
    ));
    world.kubelet(Duration::from_secs(20));
    world.scheduler();
    world.pending("a", "1");
    let mut live = world.live();
    let (round, launches) = provision(&mut live, &mut |_| {});
    // With the pool's nodepool-hash and its version, as `NewNodeClaimTemplate` writes them
    // (`provisioning/suite_test.go` "should not use a different NodePool hash on the
    // NodeClaim…"): the value `drift check` computes for the pool.
    let read = crate::k8s::snapshot::read(&world.cluster, Default::default()).unwrap();
    let hash = crate::drift::hash::node_pool_hash(&read.manifests.node_pools[0], "v3").unwrap();
    assert_eq!(
        round.plan.node_claims[0].annotations,
        BTreeMap::from([
            (
                "karpenter.sh/do-not-disrupt".to_string(),
                "true".to_string()
            ),
            ("karpenter.sh/nodepool-hash".to_string(), hash.clone()),
            (
                "karpenter.sh/nodepool-hash-version".to_string(),
                "v3".to_string()
            ),
            (
                "karpenter.sh/nodeclaim-min-values-relaxed".to_string(),
                "false".to_string()
            ),
        ])
    );
    live.wait(&launches.launched, Duration::from_secs(600), &mut |_| {})
        .unwrap();
    let node = node_name(&launches.launched[0].instance_id);
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH /api/v1/nodes/{node}")]
    );
    let meta = &world.cluster.get("v1", "Node", None, &node).unwrap()["metadata"];
    assert_eq!(meta["annotations"]["karpenter.sh/do-not-disrupt"], "true");
    assert_eq!(meta["annotations"]["karpenter.sh/nodepool-hash"], hash);
    assert_eq!(
        meta["annotations"]["karpenter.sh/nodepool-hash-version"],
        "v3"
    );
    assert_eq!(
        meta["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"],
        "false"
    );
    assert_eq!(meta["labels"]["karpenter.sh/registered"], "true");
}

#[test]
fn wait_gives_up_at_the_timeout_and_the_instance_stays() {
    let world = World::new();
    world.pending("a", "1");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    let waited = live
        .wait(&launches.launched, Duration::from_secs(30), &mut |_| {})
        .unwrap();
    assert_eq!(
        waited,
        Waited::TimedOut {
            after: Duration::from_secs(30),
            status: WaitStatus {
                ready: 0,
                nodes: 1,
                bound: 0,
                pods: 1
            },
            unregistered: vec![(
                launches.launched[0].node_claim.clone(),
                launches.launched[0].instance_id.clone()
            )],
        }
    );
    assert_eq!(world.clock.monotonic(), Duration::from_secs(30));
    assert!(world.cluster.writes().is_empty());
    assert_eq!(world.running().len(), 1);
}

#[test]
fn ctrl_c_ends_a_wait() {
    let world = World::new();
    world.pending("a", "1");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    world.clock.stop_after(Duration::from_secs(5));
    let waited = live
        .wait(&launches.launched, Duration::from_secs(600), &mut |_| {})
        .unwrap();
    assert!(matches!(waited, Waited::Stopped(_)), "{waited:?}");
    assert_eq!(world.clock.monotonic(), Duration::from_secs(5));
}

#[test]
fn watch_launches_for_a_burst_once_it_has_been_quiet_for_a_second() {
    let world = World::new();
    world.pending("first", "1");
    // A second pod while the window is open (seen at the 0.75 s look) keeps it open.
    world.pods_arrive(&[secs(0.6)], "late", 1);
    world.clock.stop_after(secs(3.0));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let batches: Vec<(Duration, Event)> = log
        .borrow()
        .iter()
        .filter(|(_, e)| matches!(e, Event::Batch { .. }))
        .cloned()
        .collect();
    assert_eq!(
        batches,
        [(
            secs(1.75),
            Event::Batch {
                pods: 2,
                launched: 1,
                failed: 0,
                unschedulable: 0
            }
        )]
    );
    // One NodeClaim for both pods; the next window planned them onto it (in flight).
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    let launched: Vec<Launch> = events(&log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Launched(l) => Some(*l),
            _ => None,
        })
        .collect();
    assert_eq!(launched.len(), 1);
    assert_eq!(launched[0].pods, ["default/first", "default/late-0"]);
}

#[test]
fn watch_closes_the_window_ten_seconds_after_it_opened_while_pods_keep_coming() {
    let world = World::new();
    world.pending("first", "1");
    let every_half_second: Vec<Duration> = (1..=40).map(|i| secs(0.5 * i as f64)).collect();
    world.pods_arrive(&every_half_second, "more", 1);
    world.clock.stop_after(secs(10.1));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let first_batch = log.borrow().iter().find_map(|(t, e)| match e {
        Event::Batch { pods, .. } => Some((*t, *pods)),
        _ => None,
    });
    // The first pod and the 20 that came by 10 s.
    assert_eq!(first_batch, Some((secs(10.0), 21)));
}

#[test]
fn ctrl_c_while_the_window_is_open_launches_nothing() {
    let world = World::new();
    world.pending("a", "1");
    world.clock.stop_after(secs(0.5));
    world.live().watch(&all(), &mut |_| {}).unwrap();
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(calls(&world, "EC2.DescribeInstances"), 0);
    assert!(world.cluster.writes().is_empty());
}

#[test]
fn watch_labels_its_nodes_once_they_register() {
    let world = World::new();
    world.kubelet(Duration::from_secs(5));
    world.scheduler();
    world.pending("a", "1");
    world.clock.stop_after(Duration::from_secs(15));
    world.live().watch(&all(), &mut |_| {}).unwrap();
    let node = node_name(&world.running()[0].id);
    // Labelled (the pod bound to it, so it is not empty): the only write.
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH /api/v1/nodes/{node}")]
    );
    let labels = &world.cluster.get("v1", "Node", None, &node).unwrap()["metadata"]["labels"];
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    assert_eq!(labels["karpenter.k8s.aws/instance-size"], "large");
}

/// Found by the fault soak (docs/reliability.md): one failed write ended the watcher (exit 3).
/// Now the failed pass is told, the watch goes on, and the label is written at the next check;
/// the error is the result once stopped, as for `drift replace --watch`.
#[test]
fn a_failed_pass_is_told_and_watched_past() {
    let world = World::new();
    world.kubelet(Duration::from_secs(5));
    world.scheduler();
    world.pending("a", "1");
    world.cluster.fail_with(
        crate::k8s::Method::Patch,
        "/api/v1/nodes/",
        1,
        500,
        "injected",
    );
    world.clock.stop_after(Duration::from_secs(20));
    let (log, mut sink) = recorder(&world);
    let result = world.live().watch(&all(), &mut sink);
    assert_eq!(result.unwrap_err().exit, Exit::Remote);
    let told = events(&log)
        .into_iter()
        .filter(|e| matches!(e, Event::Warning(w) if w.contains("500") && w.ends_with("(still watching)")))
        .count();
    assert_eq!(told, 1);
    let node = node_name(&world.running()[0].id);
    let labels = &world.cluster.get("v1", "Node", None, &node).unwrap()["metadata"]["labels"];
    assert_eq!(
        labels["karpenter.sh/initialized"], "true",
        "labelled at the next check"
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1, "launched once");
}

#[test]
fn an_empty_node_is_removed_once_it_stayed_empty_for_consolidate_after() {
    let world = World::new();
    world.kubelet(Duration::ZERO);
    let node = world.registered_node("default", "c6a.large");
    world.clock.stop_after(Duration::from_secs(40));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let path = format!("/api/v1/nodes/{node}");
    assert_eq!(
        log.borrow().clone(),
        [
            (
                Duration::ZERO,
                Event::NodeEmpty {
                    node: node.clone(),
                    ttl: Duration::from_secs(30)
                }
            ),
            // Checked every 2 s: removed at the first check 30 s after it was found empty.
            (
                Duration::from_secs(30),
                Event::NodeRemoved {
                    node: node.clone(),
                    instance: world.cloud.instances.borrow()[0].id.clone(),
                    empty_for: 30
                }
            ),
        ]
    );
    // Clock started, then tainted and cordoned as read (its resourceVersion), then (after the
    // instance) the Node deleted.
    assert_eq!(
        world.cluster.writes(),
        [
            format!("PATCH {path}"),
            format!("PATCH {path}"),
            format!("DELETE {path}")
        ]
    );
    let requests = world.cluster.requests();
    let patches: Vec<&serde_json::Value> = requests
        .iter()
        .filter(|r| r.path == path && r.method == crate::k8s::Method::Patch)
        .map(|r| &r.body)
        .collect();
    assert_eq!(
        patches[0],
        &json!({"metadata": {"annotations": {EMPTY_SINCE: "2023-11-14T22:13:20Z"}}})
    );
    assert_eq!(
        patches[1],
        &json!({"metadata": {"resourceVersion": "4"}, "spec": {"unschedulable": true,
            "taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]}})
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 1);
    assert!(world.running().is_empty());
    assert!(world.nodes().is_empty());
}

#[test]
fn a_node_that_gets_a_pod_again_stops_its_emptiness_clock() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    let (cluster, busy) = (world.cluster.clone(), node.clone());
    world.clock.on_tick(move |now| {
        if now >= Duration::from_secs(10) && cluster.list("v1", "Pod").is_empty() {
            put_bound(&cluster, "web", &busy);
        }
    });
    world.clock.stop_after(Duration::from_secs(45));
    world.live().watch(&all(), &mut |_| {}).unwrap();
    let path = format!("/api/v1/nodes/{node}");
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH {path}"), format!("PATCH {path}")]
    );
    let node = world.cluster.get("v1", "Node", None, &node).unwrap();
    assert!(
        node["metadata"]["annotations"].get(EMPTY_SINCE).is_none(),
        "{node}"
    );
    assert_eq!(world.running().len(), 1);
}

#[test]
fn nodes_of_a_pool_that_never_removes_empty_nodes_stay() {
    let world = World::new();
    world.cluster.put(node_pool(
        "kept",
        json!({"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}}),
    ));
    world.registered_node("kept", "c6a.large");
    world.clock.stop_after(Duration::from_secs(40));
    world.live().watch(&all(), &mut |_| {}).unwrap();
    assert!(world.cluster.writes().is_empty());
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
}

/// core v1.14.1 `disruption/controller.go NewMethods`: emptiness runs "across all consolidation
/// policies (WhenEmpty, WhenEmptyOrUnderutilized, Balanced)" — `--watch` removed no empty node
/// of a `Balanced` pool.
#[test]
fn a_balanced_pools_empty_node_is_removed_after_consolidate_after() {
    let world = World::new();
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "Balanced", "consolidateAfter": "30s"}}),
    ));
    let node = world.registered_node("default", "c6a.large");
    world.clock.stop_after(Duration::from_secs(40));
    world.live().watch(&all(), &mut |_| {}).unwrap();
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 1);
    assert!(world.nodes().is_empty(), "{node} removed");
}

#[test]
fn emptiness_follows_the_pool_policy() {
    let pool = |policy: &str, after: Option<&str>| {
        let mut p = NodePool::default();
        p.disruption.consolidation_policy = policy.into();
        p.disruption.consolidate_after = after.map(str::to_string);
        p
    };
    let thirty = Some(30);
    assert_eq!(empty_ttl(&pool("WhenEmpty", Some("30s"))), thirty);
    assert_eq!(
        empty_ttl(&pool("WhenEmptyOrUnderutilized", Some("30s"))),
        thirty
    );
    assert_eq!(empty_ttl(&pool("WhenUnderutilized", None)), Some(0));
    // v1alpha5 without ttlSecondsAfterEmpty converts to `Never`.
    assert_eq!(empty_ttl(&pool("WhenEmpty", Some("Never"))), None);
    assert_eq!(empty_ttl(&pool("None", Some("30s"))), None);
    let provisioner = |spec: &str| {
        let text = format!("apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {{name: p}}\nspec: {spec}\n");
        crate::api::load_str("p.yaml", &text)
            .unwrap()
            .node_pools
            .remove(0)
    };
    assert_eq!(
        empty_ttl(&provisioner(
            "{providerRef: {name: t}, ttlSecondsAfterEmpty: 45}"
        )),
        Some(45)
    );
    assert_eq!(empty_ttl(&provisioner("{providerRef: {name: t}}")), None);
}

#[test]
fn a_running_karpenter_controller_refuses_unless_forced() {
    let cluster = FakeCluster::new().karpenter_v1();
    cluster.put(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "karpenter",
            "labels": {"app.kubernetes.io/name": "karpenter"}},
        "spec": {"template": {"spec": {"containers": [{"name": "controller",
            "image": "public.ecr.aws/karpenter/controller:1.0.0"}]}}},
        "status": {"readyReplicas": 1}
    }));
    let err = coexist::check(&cluster, "provision", false).unwrap_err();
    assert_eq!(err.exit, Exit::Refused);
    assert!(
        err.message.contains("karpenter/karpenter"),
        "{}",
        err.message
    );
    assert!(err.hint.unwrap().contains("--force"));
    let warning = coexist::check(&cluster, "provision", true).unwrap();
    assert!(warning.unwrap().contains("--force given"));
    assert!(cluster.writes().is_empty());
}

/// Runs the watch for 40 s (an empty node's time is up at 30 s) and returns what it said held
/// an empty node.
fn holds_over_40s(world: &World) -> Vec<Event> {
    world.clock.stop_after(Duration::from_secs(40));
    let (log, mut sink) = recorder(world);
    world.live().watch(&all(), &mut sink).unwrap();
    events(&log)
        .into_iter()
        .filter(|e| matches!(e, Event::NodeHeld { .. }))
        .collect()
}

/// Puts a DaemonSet pod (`app: agent`) bound to `node`, annotated do-not-disrupt when `guarded`.
fn put_daemon_pod(world: &World, name: &str, node: &str, guarded: bool) {
    let mut annotations = json!({});
    if guarded {
        annotations["karpenter.sh/do-not-disrupt"] = json!("true");
    }
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "kube-system", "annotations": annotations,
            "labels": {"app": "agent"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                "uid": "ds-1", "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "agent"}]},
        "status": {"phase": "Running"},
    }));
}

#[test]
fn empty_nodes_go_one_at_a_time_under_a_budget_of_one() {
    let world = World::new();
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
            "budgets": [{"nodes": "1"}]}}),
    ));
    let first = world.registered_node("default", "c6a.large");
    let second = world.registered_node("default", "c6a.large");
    world.clock.stop_after(Duration::from_secs(40));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let removed: Vec<(Duration, String)> = log
        .borrow()
        .iter()
        .filter_map(|(at, e)| match e {
            Event::NodeRemoved { node, .. } => Some((*at, node.clone())),
            _ => None,
        })
        .collect();
    // emptiness_test.go "should only allow N empty nodes to be disrupted": the second waits
    // for the next check, never two at once.
    assert_eq!(
        removed,
        [
            (Duration::from_secs(30), first),
            (Duration::from_secs(32), second)
        ]
    );
}

#[test]
fn an_empty_node_held_by_a_do_not_disrupt_daemon_pod_stays_and_says_so_once() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    put_daemon_pod(&world, "agent-1", &node, true);
    let held = holds_over_40s(&world);
    assert_eq!(
        held,
        [Event::NodeHeld {
            node: node.clone(),
            hold: crate::disruption::emptiness::Hold::PodDoNotDisrupt("kube-system/agent-1".into()),
        }]
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    assert_eq!(world.running().len(), 1);
}

/// core v1.14.1 `statenode.go ValidatePodsDisruptable` → `pdb.go CanEvictPods`: an empty
/// node's DaemonSet pod (it does not tolerate the disruption taint, so it would be evicted)
/// held by its PDB at zero keeps the node, said once. PDBs are read only at the checks where a
/// node would go, not while it waits out `consolidateAfter`.
#[test]
fn an_empty_node_whose_daemon_pod_a_pdb_holds_stays_and_pdbs_are_read_only_when_it_would_go() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    put_daemon_pod(&world, "agent-1", &node, false);
    world.cluster.put(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "agent"}}},
        "status": {"disruptionsAllowed": 0},
    }));
    let held = holds_over_40s(&world);
    assert_eq!(
        held,
        [Event::NodeHeld {
            node: node.clone(),
            hold: crate::disruption::emptiness::Hold::Pdb {
                pod: "kube-system/agent-1".into(),
                pdbs: vec!["kube-system/agent".into()],
            },
        }]
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    assert_eq!(world.running().len(), 1);
    // Checked every 2 s, from 30 s (its time up) until the clock stops: five reads, none before.
    let pdb_reads = world
        .cluster
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/apis/policy/v1/poddisruptionbudgets"))
        .count();
    assert_eq!(pdb_reads, 5);

    // Without the permission to list them: said once, and the node goes as before.
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    put_daemon_pod(&world, "agent-1", &node, false);
    world.cluster.fail(crate::k8s::fake::Fault {
        method: None,
        path: "/apis/policy/v1/poddisruptionbudgets".into(),
        times: 1,
        answer: crate::k8s::fake::FaultAnswer::Status(403, "forbidden".into()),
    });
    world.clock.stop_after(Duration::from_secs(40));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let warned = events(&log)
        .into_iter()
        .filter(
            |e| matches!(e, Event::Warning(w) if w.starts_with("cannot list poddisruptionbudgets")),
        )
        .count();
    assert_eq!(warned, 1);
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 1);
}

/// core v1.14.1 `scheduler.go Results.Record` → `NominateNodeForPod` (the nomination window,
/// `statenode.go nominationWindow`, renewed by every pass) and `ValidateNodeDisruptable`: an
/// empty node each plan puts a pending pod on stays nominated, so emptiness leaves it; nothing is
/// launched for the pod either. `--watch` removed it at 30 s and the pod then needed a launch.
#[test]
fn an_empty_node_the_plan_puts_a_pending_pod_on_is_nominated_and_stays() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    world.pending("web", "1");
    let held = holds_over_40s(&world);
    assert_eq!(
        held,
        [Event::NodeHeld {
            node: node.clone(),
            hold: crate::disruption::emptiness::Hold::Nominated("default/web".into()),
        }]
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0, "the pod has its place");
    assert_eq!(world.running().len(), 1);
}

#[test]
fn a_pod_that_binds_after_the_taint_keeps_the_node_and_takes_the_taint_off() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    let path = format!("/api/v1/nodes/{node}");
    world.clock.stop_after(Duration::from_secs(31));
    // The taint is the second PATCH of the node (the first starts the clock).
    let (late, target) = (world.cluster.clone(), node.clone());
    world
        .cluster
        .after(crate::k8s::Method::Patch, &path, move |_| {
            late.after(
                crate::k8s::Method::Patch,
                &format!("/api/v1/nodes/{target}"),
                {
                    let (c, n) = (late.clone(), target.clone());
                    move |_| put_bound(&c, "late", &n)
                },
            );
        });
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    assert!(events(&log).contains(&Event::NodeKept {
        node: node.clone(),
        pod: "default/late".into()
    }));
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    let live = world.cluster.get("v1", "Node", None, &node).unwrap();
    assert_eq!(live["spec"]["unschedulable"], false, "{live}");
    assert_eq!(live["spec"]["taints"], json!([]), "{live}");
    assert!(live["metadata"]["annotations"].get(EMPTY_SINCE).is_none());
}

/// After its taint an empty node whose pods cannot be read again, or whose instance EC2 refuses
/// to terminate (a lost lease, a missing permission), is untainted and uncordoned again (its
/// emptiness clock kept: still empty, tried on the next check) — never left tainted while the
/// watch goes on. Karpenter's queue undoes its taint when a command fails (core v1.14.1
/// `disruption/queue.go` `Reconcile` → `RequireNoScheduleTaint(…, false, …)` on a failed
/// command; `disruption/queue_test.go` "should untaint nodes when a command times out").
#[test]
fn a_failed_removal_after_the_taint_takes_the_taint_off_again() {
    for failing in ["pods", "terminate"] {
        let world = World::new();
        let node = world.registered_node("default", "c6a.large");
        let path = format!("/api/v1/nodes/{node}");
        world.clock.stop_after(Duration::from_secs(31));
        match failing {
            // The taint is the second PATCH of the node (the first starts the clock): the
            // pods' read right after it fails.
            "pods" => {
                let late = world.cluster.clone();
                let p = path.clone();
                world
                    .cluster
                    .after(crate::k8s::Method::Patch, &path, move |_| {
                        late.after(crate::k8s::Method::Patch, &p, |c| {
                            c.fail_with(crate::k8s::Method::Get, "/api/v1/pods", 1, 503, "down")
                        });
                    });
            }
            _ => world.cloud.fail(
                "EC2.TerminateInstances",
                crate::cloud::CloudError::Api {
                    service: "EC2".into(),
                    operation: "TerminateInstances".into(),
                    code: "UnauthorizedOperation".into(),
                    message: "denied".into(),
                },
            ),
        }
        let (log, mut sink) = recorder(&world);
        let result = world.live().watch(&all(), &mut sink);
        assert!(result.is_err(), "{failing}: the failure is said");
        assert!(
            !events(&log)
                .iter()
                .any(|e| matches!(e, Event::NodeRemoved { .. })),
            "{failing}"
        );
        let live = world.cluster.get("v1", "Node", None, &node).unwrap();
        assert_eq!(live["spec"]["unschedulable"], false, "{failing}: {live}");
        assert_eq!(live["spec"]["taints"], json!([]), "{failing}: {live}");
        assert!(
            live["metadata"]["annotations"].get(EMPTY_SINCE).is_some(),
            "{failing}: still empty, its clock kept: {live}"
        );
    }
}

#[test]
fn a_node_changed_since_it_was_read_is_decided_again_not_overwritten() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    let path = format!("/api/v1/nodes/{node}");
    world.clock.stop_after(Duration::from_secs(40));
    // Clock start, then the taint: a 409 (someone changed the node meanwhile).
    world.cluster.after(crate::k8s::Method::Patch, &path, {
        let (c, p) = (world.cluster.clone(), path.clone());
        move |_| c.fail_with(crate::k8s::Method::Patch, &p, 1, 409, "conflict")
    });
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let removed: Vec<Duration> = log
        .borrow()
        .iter()
        .filter(|(_, e)| matches!(e, Event::NodeRemoved { .. }))
        .map(|(at, _)| *at)
        .collect();
    // Not at 30 s (the conflict), but at the next check.
    assert_eq!(removed, [Duration::from_secs(32)]);
    let taint_patches = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.path == path && r.method == crate::k8s::Method::Patch)
        .filter(|r| r.body.pointer("/spec/taints").is_some())
        .inspect(|r| assert!(r.body.pointer("/metadata/resourceVersion").is_some()))
        .count();
    assert_eq!(taint_patches, 2);
}

/// A pending pod of the `app` Deployment with one volume (`spec.volumes[0]`).
fn put_pending_with_volume(world: &World, name: &str, volume: serde_json::Value) {
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "app"}},
        "spec": {"containers": [{"name": "c", "image": "pause",
            "resources": {"requests": {"cpu": "1"}}}],
            "volumes": [volume]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable"}]}
    }));
}

/// Volume topology from the live cluster (upstream `provisioning/suite_test.go` "should schedule
/// to storage class zones if volume does not exist" and "... (ephemeral volume)"): the
/// StorageClass, claims and volumes are read from the API; the claim's class allows only
/// us-east-1b, so the NodeClaim is planned and launched there; an ephemeral volume whose claim the
/// controller has not created yet keeps its pod pending (`VolumeNotFound`), as in Karpenter.
#[test]
fn live_volume_topology_places_the_node_where_the_volume_can_attach() {
    let world = World::new();
    world.cluster.put(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "gp3-1b"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [
            {"key": "topology.ebs.csi.aws.com/zone", "values": ["us-east-1b"]}]}]
    }));
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"storageClassName": "gp3-1b", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}}}
    }));
    put_pending_with_volume(
        &world,
        "db",
        json!({"name": "data", "persistentVolumeClaim": {"claimName": "data"}}),
    );
    put_pending_with_volume(
        &world,
        "scratch",
        json!({"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "storageClassName": "gp3-1b", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}}}),
    );
    let (round, launches) = provision(&mut world.live(), &mut |_| {});
    assert_eq!(round.plan.node_claims.len(), 1, "{:?}", round.plan);
    let claim = &round.plan.node_claims[0];
    assert_eq!(claim.pods, ["default/db"]);
    assert_eq!(claim.zones, ["us-east-1b"]);
    assert_eq!(launches.launched[0].zone, "us-east-1b");
    assert_eq!(round.plan.unschedulable.len(), 1);
    let pending = &round.plan.unschedulable[0];
    assert_eq!(pending.pod, "default/scratch");
    assert_eq!(
        pending.reason.code(),
        crate::scheduling::ReasonCode::VolumeNotFound
    );
    // The lists it read, besides the pods and nodes.
    let paths: Vec<String> = world
        .cluster
        .requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    for path in [
        "/apis/storage.k8s.io/v1/storageclasses",
        "/api/v1/persistentvolumeclaims",
        "/api/v1/persistentvolumes",
        "/apis/storage.k8s.io/v1/csinodes",
    ] {
        assert!(
            paths.iter().any(|p| p == path),
            "{path} not read: {paths:?}"
        );
    }
}

/// An identity that may not list CSINodes (RBAC) still plans: the list is left empty and a
/// warning says what is not known.
#[test]
fn a_storage_list_refused_by_rbac_is_a_warning() {
    let world = World::new();
    world.pending("a", "1");
    world.cluster.fail_with(
        crate::k8s::Method::Get,
        "/apis/storage.k8s.io/v1/csinodes",
        1,
        403,
        "csinodes.storage.k8s.io is forbidden",
    );
    let (log, mut sink) = recorder(&world);
    let round = world
        .live()
        .plan_pending(&all(), &mut sink)
        .unwrap()
        .unwrap();
    assert_eq!(round.plan.node_claims.len(), 1);
    let warnings = warnings(&log);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("cannot list csinodes (GET /apis/storage.k8s.io/v1/csinodes: 403"),
        "{}",
        warnings[0]
    );
}

/// The warnings among the recorded events.
fn warnings(log: &Log) -> Vec<String> {
    events(log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Warning(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// A world whose class selects reservations tagged `team=ml` and whose pool takes reserved or
/// on-demand capacity; EC2 has `reservations`.
fn reserved_world(reservations: Vec<CapacityReservation>) -> World {
    let world = World::new();
    world.reserved_pool(
        json!([{"tags": {"team": "ml"}}]),
        serde_json::Value::Null,
        reservations,
    );
    world
}

/// Capacity reservations live (docs/karpenter.md §6.12): the class's terms are resolved with
/// DescribeCapacityReservations, the plan prefers the reservation (priced at on-demand /
/// 10,000,000), and the NodeClaim launches into it as Karpenter's provider does: a launch
/// template targeting it (`capacity-reservations-only`), CreateFleet on-demand, the node
/// labelled `reserved` with the reservation's id. Mirrors `aws v1.14.1:
/// pkg/providers/launchtemplate/suite_test.go` "should generate a unique launch template per
/// capacity reservation" and `pkg/providers/capacityreservation/suite_test.go` "should sync
/// availability cache when listing reservations".
#[test]
fn a_class_selecting_reservations_plans_and_launches_into_them_live() {
    let world = reserved_world(vec![odcr("cr-0a1", "c6a.xlarge", "us-east-1b", 1)]);
    world.pending("a", "1");
    let (log, mut sink) = recorder(&world);
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut sink).unwrap().unwrap();
    assert!(warnings(&log).is_empty(), "{:?}", warnings(&log));
    let claim = &round.plan.node_claims[0];
    assert_eq!(
        (
            claim.launch.capacity_type.as_str(),
            claim.launch.instance_type.as_str(),
            claim.launch.zone.as_str(),
            claim.launch.reservation.as_deref()
        ),
        ("reserved", "c6a.xlarge", "us-east-1b", Some("cr-0a1")),
        "the reservation is preferred over a cheaper on-demand c6a.large"
    );
    assert_eq!(calls(&world, "EC2.DescribeCapacityReservations"), 1);

    let launches = live.launch_in_rounds(&all(), &round, &mut sink).unwrap();
    assert!(launches.failed.is_empty(), "{:?}", launches.failed);
    assert_eq!(launches.launched[0].capacity_type, "reserved");
    assert_eq!(
        launches.launched[0].capacity_reservation_id.as_deref(),
        Some("cr-0a1")
    );
    let requests = world.cloud.fleet_requests.borrow();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].capacity_type, "on-demand",
        "an ODCR is on-demand capacity"
    );
    let overrides: Vec<(String, String)> = requests[0]
        .configs
        .iter()
        .flat_map(|(_, o)| o.iter().map(|o| (o.instance_type.clone(), o.zone.clone())))
        .collect();
    assert_eq!(
        overrides,
        [("c6a.xlarge".to_string(), "us-east-1b".to_string())]
    );
    let templates = world.cloud.templates.borrow();
    let template = &templates[&requests[0].configs[0].0];
    assert_eq!(
        template.reservation.as_ref().map(|r| r.id.as_str()),
        Some("cr-0a1")
    );
    assert!(template
        .user_data
        .contains("karpenter.sh/capacity-type=reserved"));
    assert!(template
        .user_data
        .contains("karpenter.k8s.aws/capacity-reservation-id=cr-0a1"));
    assert_eq!(
        world.cloud.reservations.borrow()[0].available,
        0,
        "EC2 counted it"
    );
}

/// **Differs, fixed** (s27-lineaws) — scenario: the same class and ODCR, the controller's
/// `ReservedCapacity` gate off (`FEATURE_GATES=ReservedCapacity=false`, or `--feature-gates`) →
/// Karpenter v1.14.1 resolves no reservation (`aws v1.14.1: pkg/controllers/nodeclass/
/// controller.go` skips the `CapacityReservation` reconciler), offers no reserved capacity
/// (`pkg/providers/instancetype/offering/reserved_capacity_resolver.go` `ResolveOfferings`
/// returns early) and builds its templates in the open launch mode, without a
/// `CapacityReservationSpecification` (`pkg/providers/launchtemplate/types.go`; launchtemplate/
/// suite_test.go DescribeTable "should set the capacity reservation specification according to
/// the capacity reservation feature flag", Entry "disabled"). The plan held the reservation and
/// launched into it. Now: no DescribeCapacityReservations, the cheapest on-demand type, a
/// template with no preference, and a warning naming the class.
#[test]
fn with_the_reserved_capacity_gate_off_reservations_are_neither_planned_nor_targeted() {
    let world = reserved_world(vec![odcr("cr-0a1", "c6a.xlarge", "us-east-1b", 1)]);
    world.pending("a", "1");
    let (log, mut sink) = recorder(&world);
    let mut live = world.live();
    live.launch_mode = crate::cloud::types::LaunchMode::Open;
    let selection = Selection {
        reserved_capacity_gate: Some(false),
        ..all()
    };
    let round = live.plan_pending(&selection, &mut sink).unwrap().unwrap();
    let claim = &round.plan.node_claims[0];
    assert_eq!(
        (
            claim.launch.capacity_type.as_str(),
            claim.launch.instance_type.as_str(),
            claim.launch.reservation.as_deref()
        ),
        ("on-demand", "c6a.large", None)
    );
    assert_eq!(calls(&world, "EC2.DescribeCapacityReservations"), 0);
    let said = warnings(&log);
    assert!(
        said.iter()
            .any(|w| w.contains("capacityReservationSelectorTerms not used")
                && w.contains("ReservedCapacity feature gate is off")),
        "{said:?}"
    );
    let launches = live
        .launch_in_rounds(&selection, &round, &mut sink)
        .unwrap();
    assert_eq!(launches.launched[0].capacity_type, "on-demand");
    let requests = world.cloud.fleet_requests.borrow();
    let templates = world.cloud.templates.borrow();
    let template = &templates[&requests[0].configs[0].0];
    assert_eq!(template.reservation_preference(), None);
}

/// A reserved pool answering insufficient capacity marks its reservation unavailable and the
/// NodeClaim is planned again in the same run, on-demand (`aws v1.14.1:
/// pkg/providers/instance/instance.go` `updateUnavailableOfferingsCache` → `MarkUnavailable`;
/// `pkg/providers/instance/suite_test.go` "should return an ICE error when all attempted
/// instance types return a ReservedCapacityReservation error", which then marks it unavailable).
#[test]
fn an_exhausted_reservation_falls_back_to_on_demand_in_the_same_run() {
    let world = reserved_world(vec![odcr("cr-0a1", "c6a.xlarge", "us-east-1b", 1)]);
    world
        .cloud
        .insufficient_capacity("c6a.xlarge", "us-east-1b");
    world.pending("a", "1");
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    assert_eq!(round.plan.node_claims[0].launch.capacity_type, "reserved");
    let launches = live.launch_in_rounds(&all(), &round, &mut |_| {}).unwrap();
    assert!(launches.failed.is_empty(), "{:?}", launches.failed);
    assert_eq!(launches.launched.len(), 1);
    assert_eq!(launches.launched[0].capacity_type, "on-demand");
    assert_eq!(launches.launched[0].instance_type, "c6a.large");
    assert!(live.unavailable_reservations.contains_key("cr-0a1"));
    let requests = world.cloud.fleet_requests.borrow();
    assert_eq!(requests.len(), 2);
    assert_ne!(
        requests[0].client_token, requests[1].client_token,
        "the on-demand retry is not an idempotent replay of the reserved request"
    );
    assert_eq!(
        calls(&world, "EC2.DescribeCapacityReservations"),
        2,
        "read again for the second plan"
    );
}

/// A class whose terms find no active reservation is said so, once per watch.
#[test]
fn a_class_whose_reservations_are_not_found_is_a_warning() {
    let world = reserved_world(Vec::new());
    world.pending("a", "1");
    let (log, mut sink) = recorder(&world);
    let round = world
        .live()
        .plan_pending(&all(), &mut sink)
        .unwrap()
        .unwrap();
    assert_eq!(round.plan.node_claims[0].launch.capacity_type, "on-demand");
    assert_eq!(
        warnings(&log),
        ["EC2NodeClass default selects capacity reservations, but DescribeCapacityReservations found no active one: the plan uses no reserved capacity for it"]
    );
}

/// The same caveat holds for every batch of a watch: told once, not once per batch.
#[test]
fn a_watch_tells_a_warning_once_however_many_batches_it_plans() {
    let world = reserved_world(Vec::new());
    // No scheduler binds it: the pod stays pending and every pass plans it again.
    world.pending("a", "1");
    world.clock.stop_after(secs(10.0));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    let reservations = warnings(&log)
        .into_iter()
        .filter(|w| w.contains("capacity reservations"))
        .count();
    assert_eq!(reservations, 1);
}

/// A pending pod of the `lonely` Deployment (1 CPU) that wants a node of its own.
fn put_lonely(world: &World, name: &str) {
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "lonely"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": "lonely-1", "uid": "rs-2", "controller": true}]},
        "spec": {
            "containers": [{"name": "c", "image": "pause",
                "resources": {"requests": {"cpu": "1"}}}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "lonely"}}}]}}
        },
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable"}]}
    }));
}

/// Scheduling rounds for real (docs/karpenter.md §6.6): with `limits.cpu: 10` the first batch
/// reserves its NodeClaims' largest options (8 + 2 CPU) and places 2 of 4 pods that each want
/// their own node; they launch as c6a.large (2 CPU), so the next batch — the run plans again,
/// the launched instances in flight with their pods — launches the other two. One run, four
/// instances, 8 CPU within the limit, nothing launched twice.
#[test]
fn pods_a_limit_leaves_to_a_later_round_are_launched_in_the_same_run() {
    let world = World::new();
    world
        .cluster
        .put(node_pool("default", json!({"limits": {"cpu": "10"}})));
    for i in 0..4 {
        put_lonely(&world, &format!("lonely-{i}"));
    }
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let rounds: Vec<usize> = round.plan.node_claims.iter().map(|c| c.round).collect();
    assert_eq!(rounds, [1, 1, 2, 2], "{:?}", round.plan);
    assert!(round.plan.unschedulable.is_empty());

    let (log, mut sink) = recorder(&world);
    let launches = live.launch_in_rounds(&all(), &round, &mut sink).unwrap();
    assert!(launches.failed.is_empty());
    assert_eq!(launches.launched.len(), 4);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 4);
    let running = world.running();
    assert_eq!(running.len(), 4);
    assert!(running.iter().all(|i| i.instance_type == "c6a.large"));
    let mut pods: Vec<String> = launches
        .launched
        .iter()
        .flat_map(|l| l.pods.clone())
        .collect();
    pods.sort();
    assert_eq!(
        pods,
        [
            "default/lonely-0",
            "default/lonely-1",
            "default/lonely-2",
            "default/lonely-3"
        ]
    );
    assert_eq!(events(&log).len(), 4, "one Launched event each");

    // A re-run launches nothing: every pod has its instance in flight.
    let again = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    assert!(again.plan.node_claims.is_empty(), "{:?}", again.plan);
    assert!(again.plan.unschedulable.is_empty());
}

/// A plan of one round launches once and reads nothing again (the one-shot run as before).
#[test]
fn a_plan_without_later_rounds_launches_once() {
    let world = World::new();
    world.pending("a", "1");
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let describes = calls(&world, "EC2.DescribeInstances");
    let launches = live.launch_in_rounds(&all(), &round, &mut |_| {}).unwrap();
    assert_eq!(launches.launched.len(), 1);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    assert!(
        calls(&world, "EC2.DescribeInstances") <= describes + 2,
        "no re-plan after the only round"
    );
}

/// A cluster serving NodeOverlays, whose overlay `xlarge-discount` makes c6a.xlarge (-90%)
/// undercut c6a.large, with one 1-CPU pod pending.
pub(super) fn world_with_an_overlay() -> World {
    let world = World {
        cluster: FakeCluster::new()
            .karpenter_v1()
            .serve("karpenter.sh/v1alpha1", &["nodeoverlays"]),
        ..World::new()
    };
    for o in World::new().cluster.list("karpenter.sh/v1", "NodePool") {
        world.cluster.put(o);
    }
    for o in World::new()
        .cluster
        .list("karpenter.k8s.aws/v1", "EC2NodeClass")
    {
        world.cluster.put(o);
    }
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "xlarge-discount"},
        "spec": {"weight": 10, "priceAdjustment": "-90%",
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                "values": ["c6a.xlarge"]}]}
    }));
    world.pending("a", "1");
    world
}

/// NodeOverlays live (docs/karpenter.md §6.9): read from the cluster when their CRD is served,
/// applied to the pools' types before planning, and what the fleet launches follows the
/// overlaid price (c6a.xlarge at -90% undercuts c6a.large).
#[test]
fn node_overlays_in_the_cluster_change_what_is_launched() {
    let world = world_with_an_overlay();
    let (round, launches) = provision(&mut world.live(), &mut |_| {});
    let claim = &round.plan.node_claims[0];
    assert_eq!(claim.launch.instance_type, "c6a.xlarge");
    assert!(
        (claim.launch.price - 0.0153).abs() < 1e-9,
        "{}",
        claim.launch.price
    );
    assert_eq!(launches.launched[0].instance_type, "c6a.xlarge");
}

/// Static NodePools live (docs/karpenter.md §6.10): with no pod pending, a run launches the
/// replicas the pool lacks, each under its own NodeClaim name; a re-run, the instances in flight,
/// launches nothing; one more replica asked for launches one more.
#[test]
fn a_static_pool_is_brought_to_its_replicas_without_pending_pods() {
    let world = World::new();
    world.cluster.put(node_pool(
        "fixed",
        json!({"replicas": 2, "limits": {"nodes": "5"}}),
    ));
    let mut live = world.live();
    let round = live
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("a plan");
    assert_eq!(round.plan.node_claims.len(), 2);
    let names: Vec<&str> = round
        .plan
        .node_claims
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_ne!(names[0], names[1]);
    let launches = live
        .launch_all(&round.classes, &round.plan, &round.input, &mut |_| {})
        .unwrap();
    assert_eq!(launches.launched.len(), 2);
    assert!(launches
        .launched
        .iter()
        .all(|l| !l.adopted && l.pods.is_empty()));
    assert_eq!(world.running().len(), 2);

    let again = live
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("a plan");
    assert!(again.plan.node_claims.is_empty(), "{:?}", again.plan);

    world.cluster.put(node_pool(
        "fixed",
        json!({"replicas": 3, "limits": {"nodes": "5"}}),
    ));
    let more = live
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("a plan");
    assert_eq!(more.plan.node_claims.len(), 1);
    assert!(!names.contains(&more.plan.node_claims[0].name.as_str()));
    live.launch_all(&more.classes, &more.plan, &more.input, &mut |_| {})
        .unwrap();
    assert_eq!(world.running().len(), 3);
}

/// Live, as offline: the pods of a node being deleted are planned again with the pending pods
/// (core v1.14.1 `provisioner.go` `Schedule`), even when no pod is pending, and the plan says
/// where they come from.
#[test]
fn the_pods_of_a_deleting_node_are_planned_again_live() {
    let world = World::new();
    let node = world.registered_node("default", "c6a.large");
    put_bound(&world.cluster, "web-0", &node);
    world.cluster.update("v1", "Node", None, &node, |n| {
        n["metadata"]["deletionTimestamp"] = json!("2026-12-04T00:00:00Z");
        n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    });
    let round = world
        .live()
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("the deleting node's pod is planned");
    assert_eq!(round.plan.node_claims.len(), 1);
    assert_eq!(round.plan.node_claims[0].pods, ["default/web-0"]);
    assert_eq!(round.plan.from_deleting_nodes.len(), 1);
    assert_eq!(round.plan.from_deleting_nodes[0].node, node);
    assert!(world.cluster.writes().is_empty());
}

/// A registered node being deleted, running `web-0` (labelled `app: app`); its name.
fn deleting_node_with_web_0(world: &World) -> String {
    let node = world.registered_node("default", "c6a.large");
    put_bound(&world.cluster, "web-0", &node);
    world.cluster.update("v1", "Node", None, &node, |n| {
        n["metadata"]["deletionTimestamp"] = json!("2026-12-04T00:00:00Z");
        n["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    });
    node
}

/// Live `provision` reads the PodDisruptionBudgets when a node being deleted has pods: a pod
/// one fully blocks (`maxUnavailable: 0`) is not planned again, as Karpenter's
/// `Deleting().CurrentlyReschedulablePods` (core v1.14.1 `provisioner.go Schedule`,
/// `pkg/utils/pdb/pdb.go`; the offline rule is mirrored by `input::tests::
/// pods_of_a_deleting_node_are_planned_again_when_currently_reschedulable`, its fully blocking
/// PDB row). Without a deleting node no PDB is read; without the permission, it says so and
/// plans them.
#[test]
fn live_provision_reads_pdbs_only_for_the_pods_of_deleting_nodes() {
    let pdb_path = "/apis/policy/v1/poddisruptionbudgets";
    let pdb_reads = |world: &World| {
        world
            .cluster
            .requests()
            .iter()
            .filter(|r| r.path.starts_with(pdb_path))
            .count()
    };
    // No deleting node: nothing read.
    let world = World::new();
    world.pending("p", "1");
    world.live().plan_pending(&all(), &mut |_| {}).unwrap();
    assert_eq!(pdb_reads(&world), 0);

    // A PDB at zero over web-0: not planned again.
    let world = World::new();
    deleting_node_with_web_0(&world);
    world.cluster.put(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "app"}}},
        "status": {"disruptionsAllowed": 0},
    }));
    let round = world
        .live()
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("a plan");
    assert_eq!(pdb_reads(&world), 1);
    assert!(
        round.plan.node_claims.is_empty(),
        "{:?}",
        round.plan.node_claims
    );
    assert!(round.plan.from_deleting_nodes.is_empty());

    // Forbidden: a warning, and web-0 planned as if no PDB blocked it.
    let world = World::new();
    deleting_node_with_web_0(&world);
    world.cluster.fail(crate::k8s::fake::Fault {
        method: None,
        path: pdb_path.into(),
        times: 1,
        answer: crate::k8s::fake::FaultAnswer::Status(403, "forbidden".into()),
    });
    let mut warnings = Vec::new();
    let round = world
        .live()
        .plan_pending(&all(), &mut |e| {
            if let Event::Warning(w) = e {
                warnings.push(w);
            }
        })
        .unwrap()
        .expect("a plan");
    assert_eq!(round.plan.node_claims[0].pods, ["default/web-0"]);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("cannot list poddisruptionbudgets")),
        "{warnings:?}"
    );
}

/// docs/reliability.md, the ghost node, for a new `provision` run: a Node this tool launched
/// (no NodeClaim) whose instance is shutting down, terminated or — the tool's full listing at
/// hand — not listed at all is no capacity, though Ready and empty: the pending pod gets a new
/// NodeClaim. A live instance's Node takes it.
#[test]
fn a_node_whose_instance_is_going_is_no_capacity_for_a_new_run() {
    let plan_for = |state: Option<&str>| {
        let world = World::new();
        let node = world.registered_node("default", "c6a.xlarge");
        {
            let mut instances = world.cloud.instances.borrow_mut();
            match state {
                Some(state) => instances[0].state = state.into(),
                None => instances.clear(),
            }
        }
        world.pending("a", "1");
        let round = world
            .live()
            .plan_pending(&all(), &mut |_| {})
            .unwrap()
            .unwrap();
        let on_node = round
            .plan
            .existing_nodes
            .iter()
            .any(|p| p.node == node && p.pods == ["default/a"]);
        (on_node, round.plan.node_claims.len())
    };
    assert_eq!(plan_for(Some("running")), (true, 0));
    assert_eq!(plan_for(Some("shutting-down")), (false, 1));
    assert_eq!(plan_for(Some("terminated")), (false, 1));
    assert_eq!(plan_for(None), (false, 1));
}

/// An instance launched but not registered is labelled with its zone's id from the class's
/// `status.subnets[].zoneID` (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go`
/// `instanceToNodeClaim`): a later pod selecting that id fits it instead of a new NodeClaim.
#[test]
fn an_in_flight_instance_carries_its_zones_id() {
    let world = World::new();
    let mut class = crate::usecases::testing::default_node_class();
    class["status"] = json!({"subnets": [
        {"id": "subnet-0", "zone": crate::usecases::testing::ZONES[0], "zoneID": "use1-az6"},
        {"id": "subnet-1", "zone": crate::usecases::testing::ZONES[1], "zoneID": "use1-az1"},
    ]});
    world.cluster.put(class);
    world.pending("a", "100m");
    provision(&mut world.live(), &mut |_| {});
    let zone = world.running()[0].zone.clone();
    let id = if zone == crate::usecases::testing::ZONES[0] {
        "use1-az6"
    } else {
        "use1-az1"
    };
    let mut pod = crate::usecases::testing::pending_pod("b", "100m");
    pod["spec"]["nodeSelector"] = json!({"topology.k8s.aws/zone-id": id});
    world.cluster.put(pod);
    let again = world
        .live()
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .unwrap();
    assert!(
        again.plan.node_claims.is_empty(),
        "{:?}",
        again.plan.node_claims
    );
    assert!(again.plan.unschedulable.is_empty());
    let placed = &again.plan.existing_nodes[0];
    assert_eq!(placed.pods, ["default/a", "default/b"]);
}

/// A world whose first zone has a second subnet, `subnet-9`, with 99 free IPs (`subnet-0` has
/// 100).
fn world_with_a_second_subnet_in_zone_a() -> World {
    let mut world = World::new();
    let extra = crate::cloud::types::Subnet {
        id: "subnet-9".into(),
        available_ips: 99,
        ..world.cloud.subnets[0].clone()
    };
    Rc::get_mut(&mut world.cloud)
        .expect("the cloud is not shared yet")
        .subnets
        .push(extra);
    world
}

/// `aws v1.14.1: pkg/cloudprovider/suite_test.go` "should launch instances into subnet with the
/// most available IP addresses in-between cache refreshes": the launches of one run share the
/// in-flight IP counts (`Live::inflight_ips`), so a second NodeClaim in the zone takes the
/// subnet the first one left with the most free IPs.
#[test]
fn launches_of_one_run_share_the_in_flight_ips_of_their_subnets() {
    let world = world_with_a_second_subnet_in_zone_a();
    // Two pods needing a 16-CPU node each: two NodeClaims.
    world.pending("a", "15");
    world.pending("b", "15");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    assert_eq!(launches.launched.len(), 2);
    let zone = crate::usecases::testing::ZONES[0];
    let requests = world.cloud.fleet_requests.borrow();
    let subnet_in_zone: Vec<String> = requests
        .iter()
        .map(|r| {
            r.configs
                .iter()
                .flat_map(|(_, o)| o.iter())
                .find(|o| o.zone == zone)
                .map(|o| o.subnet_id.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(subnet_in_zone, ["subnet-0", "subnet-9"]);
    assert!(live.inflight_ips.free("subnet-0").is_some_and(|n| n < 99));
}

/// `aws v1.14.1: pkg/providers/instance/suite_test.go` "should deprioritize subnets on
/// subsequent launches after subnet IP exhaustion" and "should handle subnet IP exhaustion
/// correctly" through a run's launches: the first NodeClaim's CreateFleet finds `subnet-0` (zone
/// a's 100-IP subnet) and `subnet-1` (zone b's only one) without a free address and fails. The
/// subnets are full for the run (`UpdateICEdSubnet`, `MarkSubnetUnavailable`), and
/// `InsufficientFreeAddressesInSubnet` being an unfulfillable-capacity code, every (on-demand,
/// type, zone) the fleet asked for is unavailable for three minutes (`instance.go`
/// `updateUnavailableOfferingsCache`): the second NodeClaim, planned with the same offerings,
/// fails without a CreateFleet (`cloudprovider.go` `Create`: "all requested instance types
/// were unavailable during launch"), and the run's next plan has nothing left to launch. (The
/// upstream It hands the instance provider the types listed before the ICE, bypassing that
/// filter, so its second launch reaches zone a's other subnet; `cloud::launch` tests
/// `a_subnet_found_full_is_launched_into_no_more` covers that subnet choice.)
#[test]
fn a_subnet_found_full_is_left_for_the_rest_of_the_run() {
    let world = world_with_a_second_subnet_in_zone_a();
    world.cloud.subnet_full("subnet-0");
    world.cloud.subnet_full("subnet-1");
    world.pending("a", "15");
    world.pending("b", "15");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    assert_eq!((launches.failed.len(), launches.launched.len()), (2, 0));
    let requests = world.cloud.fleet_requests.borrow();
    assert_eq!(requests.len(), 1);
    let mut subnets: Vec<String> = requests[0]
        .configs
        .iter()
        .flat_map(|(_, o)| o.iter().map(|o| o.subnet_id.clone()))
        .collect();
    subnets.sort();
    subnets.dedup();
    assert_eq!(subnets, ["subnet-0", "subnet-1"]);
    let remembered = launches.failed[1].error.pool_errors();
    assert!(!remembered.is_empty());
    assert!(remembered
        .iter()
        .all(|e| e.code == "InsufficientFreeAddressesInSubnet"
            && e.message.contains("earlier in this run")));
    assert_eq!(live.inflight_ips.free("subnet-1"), Some(0));
}

/// The (type, zone) pools of each CreateFleet the cloud was sent.
fn fleet_pools(world: &World) -> Vec<Vec<(String, String)>> {
    world
        .cloud
        .fleet_requests
        .borrow()
        .iter()
        .map(|r| {
            r.configs
                .iter()
                .flat_map(|(_, o)| o.iter().map(|o| (o.instance_type.clone(), o.zone.clone())))
                .collect()
        })
        .collect()
}

/// The unavailable-offerings cache across a run's launches (`aws v1.14.1:
/// pkg/cache/unavailableofferings.go`; `pkg/providers/instance/instance.go`
/// `updateUnavailableOfferingsCache`; `pkg/cloudprovider/suite_test.go` "should not launch
/// instance types that are unavailable" style): the first NodeClaim's CreateFleet finds
/// c6a.4xlarge without capacity in us-east-1a and launches in us-east-1b; the second
/// NodeClaim of the run, planned with the same offerings, does not ask for
/// (c6a.4xlarge, us-east-1a) again. Three minutes later (`UnavailableOfferingsTTL`) it is
/// asked for again.
#[test]
fn a_later_launch_of_the_run_does_not_ask_for_an_offering_found_without_capacity() {
    let world = World::new();
    world.pending("a", "15");
    world.pending("b", "15");
    world
        .cloud
        .insufficient_capacity("c6a.4xlarge", "us-east-1a");
    let mut live = world.live();
    let (_, launches) = provision(&mut live, &mut |_| {});
    assert_eq!((launches.failed.len(), launches.launched.len()), (0, 2));
    let iced = ("c6a.4xlarge".to_string(), "us-east-1a".to_string());
    let pools = fleet_pools(&world);
    assert_eq!(pools.len(), 2);
    assert!(pools[0].contains(&iced), "{pools:?}");
    assert!(!pools[1].contains(&iced), "{pools:?}");
    assert!(pools[1].contains(&("c6a.4xlarge".to_string(), "us-east-1b".to_string())));
    assert_eq!(
        world.cloud.fleet_requests.borrow()[1].capacity_type,
        "on-demand"
    );
    let now = world.clock.now();
    assert_eq!(
        live.unavailable_offerings
            .reason("on-demand", "c6a.4xlarge", "us-east-1a", now),
        Some("InsufficientInstanceCapacity")
    );
    // The run's next plan lists the offering unavailable.
    world.pending("c", "15");
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let offered = round.input.pools[0]
        .instance_types
        .iter()
        .find(|t| t.name == "c6a.4xlarge")
        .unwrap()
        .offerings
        .iter()
        .find(|o| o.zone == "us-east-1a" && o.capacity_type == "on-demand")
        .unwrap()
        .available;
    assert!(!offered);
    // Three minutes on, capacity back: the offering is asked for (and launched) again.
    world.clock.sleep(std::time::Duration::from_secs(180));
    world.cloud.capacity_back();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let launches = live
        .launch_all(&round.classes, &round.plan, &round.input, &mut |_| {})
        .unwrap();
    assert_eq!(launches.launched.len(), 1);
    let pools = fleet_pools(&world);
    assert!(pools.last().unwrap().contains(&iced), "{pools:?}");
}

/// The kube-dns Service of the cluster the tests put.
fn kube_dns(cluster_ip: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system"},
        "spec": {"clusterIP": cluster_ip}})
}

/// Provisions two 15-CPU pods; the warnings said, and the templates made.
fn provision_two(world: &World) -> (TestLive<'_>, Vec<String>) {
    world.pending("a", "15");
    world.pending("b", "15");
    let mut live = world.live();
    let mut warnings = Vec::new();
    let (_, launches) = provision(&mut live, &mut |e| {
        if let Event::Warning(w) = e {
            warnings.push(w);
        }
    });
    assert_eq!(launches.launched.len(), 2);
    (live, warnings)
}

/// `aws v1.14.1: pkg/operator/operator.go` `KubeDNSIP` (read once at start) with
/// `pkg/providers/launchtemplate/suite_test.go` "should specify clusterDNS when running in an
/// ipv6 cluster", "Networking › should set Primary IPv6 as true and provision a IPv6 address" and
/// "should select correct ipFamily based on DNS ip" (DNS has ipv6 address): a live run reads
/// `kube-system/kube-dns` once, before its first launch; its IPv6 ClusterIP is the nodes' cluster
/// DNS and makes every template's primary interface IPv6 (a primary IPv6, one IPv6 address).
#[test]
fn an_ipv6_kube_dns_makes_the_launches_ipv6() {
    let world = World::new();
    world.cluster.put(kube_dns("fd01:99f0:d47b::a"));
    let (live, warnings) = provision_two(&world);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(live.info.cluster_dns.as_deref(), Some("fd01:99f0:d47b::a"));
    let templates = world.cloud.templates.borrow();
    assert!(!templates.is_empty());
    for t in templates.values() {
        let primary = &t.network_interfaces[0];
        assert_eq!(
            (primary.primary_ipv6, primary.ipv6_address_count),
            (Some(true), Some(1)),
            "{}",
            t.name
        );
        assert!(t
            .user_data
            .contains("      clusterDNS:\n      - fd01:99f0:d47b::a\n"));
        assert!(t.user_data.contains("    cidr: fd01:99f0:d47b::/108\n"));
    }
    let reads = world
        .cluster
        .requests()
        .iter()
        .filter(|r| r.path == crate::k8s::ops::KUBE_DNS_PATH)
        .count();
    assert_eq!(reads, 1, "read once per run");
}

/// The same with an IPv4 kube-dns ("should specify clusterDNS when running in an ipv4
/// cluster", "DNS has ipv4 address"), without the Service (Karpenter goes on without an IP: no
/// cluster DNS, IPv4), and with the Service unreadable (the same, said once).
#[test]
fn an_ipv4_absent_or_unreadable_kube_dns_launches_ipv4() {
    let ipv4 = |world: &World| {
        for t in world.cloud.templates.borrow().values() {
            let primary = &t.network_interfaces[0];
            assert_eq!(
                (primary.primary_ipv6, primary.ipv6_address_count),
                (None, None)
            );
        }
    };
    let world = World::new();
    world.cluster.put(kube_dns("10.100.0.10"));
    let (live, warnings) = provision_two(&world);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(live.info.cluster_dns.as_deref(), Some("10.100.0.10"));
    ipv4(&world);
    for t in world.cloud.templates.borrow().values() {
        assert!(t
            .user_data
            .contains("      clusterDNS:\n      - 10.100.0.10\n"));
        // nodeadm refuses a NodeConfig without the service CIDR (s29: derived from kube-dns).
        assert!(
            t.user_data.contains("    cidr: 10.100.0.0/16\n"),
            "{}",
            t.user_data
        );
    }

    let world = World::new();
    world.cluster.put(kube_dns("None"));
    let (live, warnings) = provision_two(&world);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(live.info.cluster_dns, None, "a headless Service has no IP");
    ipv4(&world);

    let world = World::new();
    let (live, warnings) = provision_two(&world);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(live.info.cluster_dns, None);
    ipv4(&world);
    for t in world.cloud.templates.borrow().values() {
        assert!(!t.user_data.contains("clusterDNS"));
    }

    let world = World::new();
    world.cluster.put(kube_dns("fd01:99f0:d47b::a"));
    world.cluster.fail_with(
        crate::k8s::Method::Get,
        crate::k8s::ops::KUBE_DNS_PATH,
        1,
        403,
        "services \"kube-dns\" is forbidden: User \"operator\" cannot get resource \"services\" in API group \"\" in the namespace \"kube-system\"",
    );
    let (live, warnings) = provision_two(&world);
    assert_eq!(live.info.cluster_dns, None);
    ipv4(&world);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("the cluster DNS service kube-system/kube-dns could not be read (GET /api/v1/namespaces/kube-system/services/kube-dns: 403 services \"kube-dns\" is forbidden"),
        "{}",
        warnings[0]
    );
}

/// A type is offered only in the zones of its class's subnets (`aws v1.14.1:
/// pkg/providers/instancetype/offering/provider.go` `createOfferings` over
/// `nodeClass.Status.Subnets`, which `pkg/controllers/nodeclass/subnet.go` fills from the
/// selector). With the controller scaled away no status says so: the run lists the class's
/// subnets itself. Scenario (the fault soak's, session 25): the catalog offers zones a, b and c,
/// the class has subnets in a and b only; every offering of a and b runs out of capacity. The
/// plan never picked zone c, and after the ICE the pod stays pending for the ICE's three minutes
/// (`unavailableofferings.go`) — it is not planned in zone c, where no launch can go ("no
/// compatible instance type has both an image for its architecture and a subnet" on every
/// retry) — then launches once capacity is back.
#[test]
fn plans_offer_only_the_zones_of_the_class_subnets_also_after_an_ice() {
    let mut world = World::new();
    world.catalog =
        crate::usecases::testing::catalog_in_zones(&["us-east-1a", "us-east-1b", "us-east-1c"]);
    world.pending("a", "6");
    let mut live = world.live();
    let round = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    let claim = &round.plan.node_claims[0];
    assert_eq!(claim.zones, ["us-east-1a", "us-east-1b"]);
    assert_eq!(claim.launch.instance_type, "c6a.2xlarge");
    world.cloud.insufficient_capacity("c6a.2xlarge", "*");
    world.cloud.insufficient_capacity("c6a.4xlarge", "*");
    let mut log = Vec::new();
    let launches = live
        .launch_in_rounds(&all(), &round, &mut |e| log.push(e))
        .unwrap();
    assert!(launches.launched.is_empty());
    assert_eq!(launches.failed.len(), 1);
    assert!(
        matches!(
            launches.failed[0].error,
            LaunchError::InsufficientCapacity { .. }
        ),
        "{:?}",
        launches.failed[0].error
    );
    // One CreateFleet, in the subnets' zones; the fallback plan found nothing to launch.
    let pools = fleet_pools(&world);
    assert_eq!(pools.len(), 1);
    assert!(pools[0].iter().all(|(_, zone)| zone != "us-east-1c"));
    let again = live.plan_pending(&all(), &mut |_| {}).unwrap().unwrap();
    assert!(again.plan.node_claims.is_empty(), "{:?}", again.plan);
    assert_eq!(again.plan.unschedulable.len(), 1);
    // As Karpenter's template, which lists only types with an available offering ("no
    // instance type has enough resources"); a warning says the offerings are held back.
    let reason = &again.plan.unschedulable[0].reason;
    assert_eq!(
        reason.code(),
        crate::scheduling::ReasonCode::NoInstanceTypeFits
    );
    let mut said = Vec::new();
    live.plan_pending(&all(), &mut |e| said.push(e)).unwrap();
    assert!(
        said.iter().any(|e| matches!(e, Event::Warning(w)
            if w.starts_with("4 offering(s) this run found without capacity are left out of plans for 180s more"))),
        "{said:?}"
    );
    // Three minutes on, capacity back: launched in a zone with a subnet.
    world.clock.sleep(Duration::from_secs(180));
    world.cloud.capacity_back();
    let (_, launches) = provision(&mut live, &mut |_| {});
    assert_eq!(launches.launched.len(), 1);
    assert_ne!(launches.launched[0].zone, "us-east-1c");
    // The subnets were listed once a minute at most: the plans of one minute share a listing.
    assert!(calls(&world, "EC2.DescribeSubnets") <= 3);
}

/// [`crate::usecases::live::fill_subnet_zones`], the mechanism behind every live plan's zones:
/// a class with no status gets its selector's subnets, listed once a minute; a status the
/// controller wrote is kept; a class whose subnets cannot be read keeps every zone, and a
/// warning names it.
#[test]
fn subnet_zones_fill_only_a_missing_status_once_a_minute_and_say_what_failed() {
    use crate::usecases::live::{fill_subnet_zones, SubnetZones};
    let world = World::new();
    let read = || {
        crate::k8s::snapshot::read(&world.cluster, crate::k8s::snapshot::Scope::PODS)
            .unwrap()
            .manifests
    };
    let manifests = read();
    let (pools, now) = (&manifests.node_pools, world.clock.now());
    let mut cache = SubnetZones::new();
    let mut classes = manifests.node_classes.clone();
    let said = fill_subnet_zones(&*world.cloud, &mut classes, pools, now, &mut cache);
    assert!(said.is_empty(), "{said:?}");
    let zones: Vec<&str> = classes[0]
        .status
        .subnets
        .iter()
        .map(|s| s.zone.as_str())
        .collect();
    assert_eq!(zones, crate::usecases::testing::ZONES);
    // Within the minute the listing is reused; a written status is never replaced.
    let mut again = manifests.node_classes.clone();
    fill_subnet_zones(&*world.cloud, &mut again, pools, now + 59, &mut cache);
    assert_eq!(calls(&world, "EC2.DescribeSubnets"), 1);
    assert_eq!(again[0].status.subnets, classes[0].status.subnets);
    let mut written = classes.clone();
    written[0].status.subnets.truncate(1);
    fill_subnet_zones(&*world.cloud, &mut written, pools, now + 600, &mut cache);
    assert_eq!(written[0].status.subnets.len(), 1);
    // A minute on the subnets are listed again; a failure keeps every zone and says so.
    world.cloud.fail(
        "EC2.DescribeSubnets",
        crate::cloud::CloudError::Api {
            service: "EC2".into(),
            operation: "DescribeSubnets".into(),
            code: "UnauthorizedOperation".into(),
            message: "denied".into(),
        },
    );
    let mut denied = manifests.node_classes.clone();
    let said = fill_subnet_zones(&*world.cloud, &mut denied, pools, now + 60, &mut cache);
    assert!(denied[0].status.subnets.is_empty());
    assert_eq!(said.len(), 1);
    assert!(
        said[0].contains("default: its subnets could not be read")
            && said[0].contains("UnauthorizedOperation"),
        "{said:?}"
    );
}

/// Issue 13 ("`--watch` removes empty nodes without re-checking"): a node an operator annotates
/// `karpenter.sh/do-not-disrupt` after the check read the cluster (here while the check lists
/// the PDBs, after deciding the node goes) is neither tainted nor terminated; the next check
/// says why it stays. Karpenter validates a candidate again on the live objects before acting
/// (core v1.14.1 `disruption/validation.go validateCandidates` → `GetCandidates`;
/// `statenode.go ValidateNodeDisruptable`: "disruption is blocked through the
/// karpenter.sh/do-not-disrupt annotation").
#[test]
fn a_node_annotated_do_not_disrupt_after_the_check_read_it_is_not_removed() {
    let world = World::new();
    world.kubelet(Duration::ZERO);
    let node = world.registered_node("default", "c6a.large");
    let guarded = node.clone();
    world.cluster.after(
        crate::k8s::Method::Get,
        "poddisruptionbudgets",
        move |c: &FakeCluster| {
            c.update("v1", "Node", None, &guarded, |n| {
                n["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("true");
            });
        },
    );
    world.clock.stop_after(Duration::from_secs(33));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    assert_eq!(world.running().len(), 1);
    let path = format!("/api/v1/nodes/{node}");
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH {path}")],
        "only the emptiness clock: no taint"
    );
    let held: Vec<(Duration, Event)> = log
        .borrow()
        .iter()
        .filter(|(_, e)| matches!(e, Event::NodeHeld { .. }))
        .cloned()
        .collect();
    assert_eq!(
        held,
        [(
            Duration::from_secs(32),
            Event::NodeHeld {
                node,
                hold: crate::disruption::emptiness::Hold::NodeDoNotDisrupt,
            }
        )],
        "decided to go at 30 s, found annotated before the taint, held from the next check"
    );
}

/// Issue 13: a pod bound to an empty node between its taint and the re-read takes the taint
/// off again — also when that write first meets a conflict (a kubelet's status update): it is
/// read again and retried, never left cordoned and tainted with the error ending the watch.
#[test]
fn the_taint_comes_off_again_through_a_conflict_when_a_pod_arrives() {
    let world = World::new();
    world.kubelet(Duration::ZERO);
    let node = world.registered_node("default", "c6a.large");
    let busy = node.clone();
    let path = format!("/api/v1/nodes/{node}");
    let conflict_path = path.clone();
    // The taint is the second PATCH (the first starts the clock): a pod binds right after it,
    // and the undo's first attempt answers 409.
    world
        .cluster
        .after(crate::k8s::Method::Patch, &path, move |c: &FakeCluster| {
            c.after(
                crate::k8s::Method::Patch,
                &conflict_path,
                move |c: &FakeCluster| {
                    put_bound(c, "web", &busy);
                    c.fail_with(
                        crate::k8s::Method::Patch,
                        &format!("/api/v1/nodes/{}", busy),
                        1,
                        409,
                        "the object has been modified",
                    );
                },
            );
        });
    world.clock.stop_after(Duration::from_secs(31));
    let (log, mut sink) = recorder(&world);
    world.live().watch(&all(), &mut sink).unwrap();
    assert!(
        events(&log)
            .iter()
            .any(|e| matches!(e, Event::NodeKept { pod, .. } if pod == "default/web")),
        "{:?}",
        events(&log)
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    let live = world.cluster.get("v1", "Node", None, &node).unwrap();
    assert_eq!(live["spec"]["unschedulable"], json!(false), "{live}");
    assert_eq!(live["spec"]["taints"], json!([]), "{live}");
    assert!(live["metadata"]["annotations"].get(EMPTY_SINCE).is_none());
}
