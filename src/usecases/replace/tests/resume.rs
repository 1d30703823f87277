//! A run killed at each step, resumed from the record it left: nothing launched twice, nothing
//! left cordoned for good, no instance orphaned.

use super::*;
use crate::cloud::launch;
use crate::disruption::replace::replacement_name;
use crate::k8s::fake::{Fault, FaultAnswer};
use crate::k8s::Method as Http;
use crate::model::labels::{NODECLAIM as NODECLAIM_TAG, TOOL_TAG};
use crate::usecases::testing::CLUSTER;

/// When the killed run started.
const EARLIER: &str = "2023-11-14T20:00:00Z";

/// Leaves `name` as a run killed after recording `record` would: tainted, cordoned, recorded.
fn killed_at(world: &World, name: &str, record: &Record) {
    world.cluster.update("v1", "Node", None, name, |n| {
        n["metadata"]["annotations"] = json!({REPLACEMENT: record.format()});
        n["spec"]["unschedulable"] = json!(true);
        n["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    });
}

/// The name the killed run gave the node's first replacement.
fn earlier_claim(world: &World, name: &str) -> String {
    let node = actions(world, &[name.to_string()]).1.remove(0).node;
    replacement_name("default", 0, &node, EARLIER)
}

fn record(step: Step, claims: &[&str], instances: &[&str]) -> Record {
    Record {
        step,
        method: Method::Drift,
        node_claims: claims.iter().map(|c| c.to_string()).collect(),
        instances: instances.iter().map(|i| i.to_string()).collect(),
        reason: "AMIDrift".into(),
        started_at: EARLIER.into(),
        cordoned_before: false,
        command: Vec::new(),
        annotations: Default::default(),
    }
}

/// Tags the instance `id` with NodeClaim `claim`, as a launch for it does.
fn tag(world: &World, id: &str, claim: &str) {
    let mut instances = world.cloud.instances.borrow_mut();
    let i = instances.iter_mut().find(|i| i.id == id).unwrap();
    i.tags.insert(NODECLAIM_TAG.into(), claim.into());
    i.tags.insert(TOOL_TAG.into(), launch::TOOL_NAME.into());
    i.tags.insert("eks:eks-cluster-name".into(), CLUSTER.into());
}

/// One drifted node left by a run killed after its replacement launched (registered, recorded):
/// the node (in a list, as `replace` takes them) and its replacement.
fn killed_after_launch(world: &World) -> (Vec<String>, String) {
    let old = drifted(world, 1);
    let new = world.registered_node("default", "c6a.large");
    let new_id = instance_of(&new);
    killed_at(
        world,
        &old[0],
        &record(Step::Launched, &["default-0123456789"], &[&new_id]),
    );
    (old, new)
}

#[test]
fn marked_plans_again_under_the_recorded_name_and_adopts_what_the_killed_run_launched() {
    let world = world();
    let old = drifted(&world, 1);
    let claim = earlier_claim(&world, &old[0]);
    killed_at(&world, &old[0], &record(Step::Marked, &[&claim], &[]));
    // The killed run's launch went through (its Node has not registered yet), unrecorded.
    let launched = world.registered_node("default", "c6a.large");
    world.cluster.remove("v1", "Node", None, &launched);
    let launched_id = instance_of(&launched);
    tag(&world, &launched_id, &claim);

    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        0,
        "adopted, not launched again"
    );
    let [provisioning::Event::Launched(l)] = &run.launches()[..] else {
        panic!("{:?}", run.launches());
    };
    assert!(l.adopted);
    assert_eq!(
        (l.node_claim.as_str(), l.instance_id.as_str()),
        (claim.as_str(), launched_id.as_str())
    );
    let marked = world
        .cluster
        .requests()
        .into_iter()
        .find(|r| r.method == crate::k8s::Method::Patch && r.path.ends_with(&old[0]))
        .unwrap();
    let again = Record::parse(
        marked.body["metadata"]["annotations"][REPLACEMENT]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        again,
        Record {
            annotations: [(claim.clone(), planned_claim_annotations(&world))].into(),
            ..record(Step::Marked, &[&claim], &[])
        },
        "marked again as it was, with the planned NodeClaim's annotations"
    );
}

#[test]
fn launched_adopts_the_recorded_instances_and_labels_them_from_the_catalog() {
    let world = world();
    let (old, new) = killed_after_launch(&world);

    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(
        world.cluster.writes(),
        [
            format!("PATCH /api/v1/nodes/{new}"),
            // Out of external load balancers as the drain begins.
            format!("PATCH /api/v1/nodes/{}", old[0]),
            "POST /api/v1/namespaces/default/pods/p0/eviction".to_string(),
            format!("PATCH /api/v1/nodes/{}", old[0]),
            format!("DELETE /api/v1/nodes/{}", old[0]),
        ],
        "no mark, no launch: straight to the wait and the drain"
    );
    let labels = &node_json(&world, &new).unwrap()["metadata"]["labels"];
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "c6a");
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    assert_eq!(
        run.steps(&old[0])[0],
        NodeStep::Resuming(Resume::Adopting(Step::Launched))
    );
}

#[test]
fn an_adopted_replacement_waits_for_its_type_label_before_it_is_labelled() {
    let world = world();
    let old = drifted(&world, 1);
    let new = world.registered_node("default", "c6a.large");
    let new_id = instance_of(&new);
    // Ready, but its instance-type label comes a few seconds later (a cloud controller's).
    world.cluster.update("v1", "Node", None, &new, |n| {
        n["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("node.kubernetes.io/instance-type");
    });
    let (cluster, late) = (world.cluster.clone(), new.clone());
    world.clock.on_tick(move |now| {
        if now >= secs(10) {
            cluster.update("v1", "Node", None, &late, |n| {
                n["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("c6a.large");
            });
        }
    });
    killed_at(
        &world,
        &old[0],
        &record(Step::Launched, &["default-0123456789"], &[&new_id]),
    );
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let labels = &node_json(&world, &new).unwrap()["metadata"]["labels"];
    assert_eq!(
        labels["karpenter.k8s.aws/instance-family"], "c6a",
        "{labels}"
    );
    assert_eq!(labels["karpenter.sh/initialized"], "true");
}

#[test]
fn a_preview_of_a_resumed_replacement_shows_its_recorded_instances() {
    let world = world();
    let old = drifted(&world, 1);
    killed_at(
        &world,
        &old[0],
        &record(Step::Launched, &["default-0123456789"], &["i-0ff"]),
    );
    let (m, actions) = actions(&world, &old);
    let preview = replace_pipeline::preview(&world.live(), &m, actions, &settings()).unwrap();
    let o = &preview.outcomes()[0];
    assert_eq!(o.status, Status::Planned);
    assert_eq!(o.detail, Detail::Resumes(Step::Launched));
    assert_eq!(o.replacements, ["i-0ff"]);
}

#[test]
fn drained_and_cordoned_is_only_terminated_and_deleted() {
    let world = world();
    let old = drifted(&world, 1);
    world.cluster.remove("v1", "Pod", Some("default"), "p0");
    killed_at(
        &world,
        &old[0],
        &record(Step::Drained, &["default-0123456789"], &["i-0ff"]),
    );
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(
        world.cluster.writes(),
        [format!("DELETE /api/v1/nodes/{}", old[0])]
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 1);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert_eq!(
        instance_state(&world, &instance_of(&old[0])),
        "shutting-down"
    );
    assert_eq!(
        run.steps(&old[0]),
        [
            NodeStep::Resuming(Resume::Finishing),
            NodeStep::Deleted {
                instance: Some(instance_of(&old[0]))
            }
        ]
    );
}

#[test]
fn drained_but_uncordoned_since_is_cordoned_and_drained_again() {
    let world = world();
    let old = drifted(&world, 1);
    killed_at(
        &world,
        &old[0],
        &record(Step::Drained, &["default-0123456789"], &["i-0ff"]),
    );
    // Someone uncordoned it, and a pod landed on it again.
    world.cluster.update("v1", "Node", None, &old[0], |n| {
        n["spec"]["unschedulable"] = json!(false);
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let node = format!("/api/v1/nodes/{}", old[0]);
    assert_eq!(
        world.cluster.writes(),
        [
            format!("PATCH {node}"),
            // Out of external load balancers as the drain begins again.
            format!("PATCH {node}"),
            "POST /api/v1/namespaces/default/pods/p0/eviction".to_string(),
            format!("PATCH {node}"),
            format!("DELETE {node}"),
        ]
    );
    assert_eq!(
        run.steps(&old[0])[0],
        NodeStep::Resuming(Resume::Recordoned)
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn a_class_that_no_longer_resolves_rolls_a_resumed_node_back_and_blocks_a_fresh_one() {
    let world = world();
    let old = drifted(&world, 2);
    let claim = earlier_claim(&world, &old[0]);
    killed_at(&world, &old[0], &record(Step::Marked, &[&claim], &[]));
    world.cluster.update(
        "karpenter.k8s.aws/v1",
        "EC2NodeClass",
        None,
        "default",
        |c| {
            c["spec"]["subnetSelectorTerms"] = json!([{"tags": {"cluster": "elsewhere"}}]);
        },
    );
    let mut settings = settings();
    settings.max_parallel = 2;
    let run = replace(&world, &old, &settings);
    let resumed = run.outcome(&old[0]);
    assert_eq!(resumed.status, Status::RolledBack);
    assert!(
        matches!(&resumed.detail, Detail::ClassFailed(m) if m.contains("no subnet")),
        "{:?}",
        resumed.detail
    );
    let node = node_json(&world, &old[0]).unwrap();
    assert_eq!(node["spec"]["unschedulable"], false);
    assert_eq!(node["spec"]["taints"], json!([]));
    assert!(record_of(&world, &old[0]).is_none());
    let fresh = run.outcome(&old[1]);
    assert_eq!(fresh.status, Status::Blocked);
    assert!(matches!(&fresh.detail, Detail::ClassFailed(_)));
    assert_eq!(
        world.cluster.writes(),
        [format!("PATCH /api/v1/nodes/{}", old[0])],
        "the rollback only: the fresh node is untouched"
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn an_adopted_instance_that_backs_a_node_being_replaced_rolls_back_without_terminating_it() {
    let world = world();
    let old = drifted(&world, 1);
    let claim = earlier_claim(&world, &old[0]);
    killed_at(&world, &old[0], &record(Step::Marked, &[&claim], &[]));
    // The NodeClaim name resolves to the node's own instance.
    tag(&world, &instance_of(&old[0]), &claim);
    let run = replace(&world, &old, &settings());
    let o = run.outcome(&old[0]);
    assert_eq!(
        (o.status, &o.detail),
        (Status::RolledBack, &Detail::InstanceCollision)
    );
    assert_eq!(calls(&world, "EC2.TerminateInstances"), 0);
    assert_eq!(instance_state(&world, &instance_of(&old[0])), "running");
    assert_eq!(
        run.steps(&old[0]).last(),
        Some(&NodeStep::RolledBack {
            cordoned: false,
            terminated: Vec::new()
        })
    );
}

/// The flaky e2e `blocked_by_pdb_and_do_not_evict_then_killed_after_launch_resumes`: killed after
/// its launch went through but before the record said so, and the instance's Node registered
/// before the re-run read the cluster. That Node is the killed run's replacement, not spare
/// capacity: it is adopted and labelled like any replacement (else nobody ever labels it).
#[test]
fn marked_adopts_a_replacement_that_registered_before_the_rerun() {
    let world = world();
    let old = drifted(&world, 1);
    let claim = earlier_claim(&world, &old[0]);
    killed_at(&world, &old[0], &record(Step::Marked, &[&claim], &[]));
    let launched = world.registered_node("default", "c6a.large");
    let launched_id = instance_of(&launched);
    tag(&world, &launched_id, &claim);

    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0, "adopted, not launched");
    let labels = &node_json(&world, &launched).unwrap()["metadata"]["labels"];
    assert_eq!(
        labels["karpenter.k8s.aws/instance-family"], "c6a",
        "{labels}"
    );
    assert_eq!(labels["karpenter.sh/initialized"], "true");
}

/// A world whose `default` pool's NodeClaims carry annotations beyond the hash: its template's
/// (`example.com/owner`) and a NodeOverlay's (`karpenter.sh/price-overlay-applied`: every amd64
/// type priced 10% lower).
fn annotated_world() -> World {
    let world = world();
    let _ = world
        .cluster
        .clone()
        .serve("karpenter.sh/v1alpha1", &["nodeoverlays"]);
    world
        .cluster
        .update("karpenter.sh/v1", "NodePool", None, "default", |p| {
            p["spec"]["template"]["metadata"] =
                json!({"annotations": {"example.com/owner": "team-a"}});
        });
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "discount"},
        "spec": {"weight": 10, "priceAdjustment": "-10%",
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
    }));
    world
}

/// The annotations of the one Node of `world` other than `old` (its replacement).
fn replacement_annotations(world: &World, old: &str) -> Value {
    let nodes = world.cluster.list("v1", "Node");
    let [new] = &nodes[..] else {
        panic!("one replacement Node: {nodes:?}");
    };
    assert_ne!(new["metadata"]["name"], old);
    new["metadata"]["annotations"].clone()
}

/// A run killed after its launch was recorded (`launched`) and run again adopts the recorded
/// instance — and registers it exactly as a fresh launch does: the planned NodeClaim's
/// annotations (template, `karpenter.sh/nodepool-hash`/`-version`, NodeOverlay
/// `…-overlay-applied`: `scheduling::ClaimAnnotations`, core v1.14.1
/// `nodeclaimtemplate.go`) copied onto its Node as Karpenter's registration does
/// (`registration.go` `syncNode`). Before, an adopted replacement got the pool's template and
/// hash only, taken again at the re-run.
#[test]
fn a_replacement_adopted_after_a_kill_carries_its_planned_annotations() {
    let fresh = annotated_world();
    let old = drifted(&fresh, 1);
    let run = replace(&fresh, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let want = replacement_annotations(&fresh, &old[0]);
    assert_eq!(want["example.com/owner"], "team-a", "{want}");
    assert_eq!(want["karpenter.sh/price-overlay-applied"], "true", "{want}");
    assert!(want["karpenter.sh/nodepool-hash"].is_string(), "{want}");

    let world = annotated_world();
    let old = drifted(&world, 1);
    // Killed right after the record names the launched instance: nothing answers any more.
    let path = format!("/api/v1/nodes/{}", old[0]);
    let recorded = path.clone();
    world.cluster.after(Http::Patch, &path, move |c| {
        c.after(Http::Patch, &recorded, |c| {
            c.fail(Fault {
                method: None,
                path: "/".into(),
                times: u32::MAX,
                answer: FaultAnswer::NoAnswer("killed".into()),
            })
        })
    });
    let (m, acts) = actions(&world, &old);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, acts, &settings()).unwrap();
    assert!(replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).is_err());
    let record = record_of(&world, &old[0]).unwrap();
    assert_eq!((record.step, record.instances.len()), (Step::Launched, 1));
    world.cluster.clear_faults();

    let run = replace(&world, &old, &settings());
    resumed_by_adoption(&world, &run, &old[0]);
    assert_eq!(replacement_annotations(&world, &old[0]), want);
}

/// A node enters with its NodePool as read at its start, not as the run read it when it began:
/// a template changed meanwhile is what its (adopted) replacement carries — the template's
/// annotations and the pool's hash now (core v1.14.1 `disruption/controller.go` `disrupt` →
/// `GetCandidates` each pass: a command is computed from the current NodePool; the
/// `nodepool-hash` is the one Karpenter's `nodeclaim/disruption/drift.go` compares).
#[test]
fn a_node_enters_with_its_nodepool_as_read_at_its_start() {
    let world = world();
    let (old, new) = killed_after_launch(&world);
    let (m, acts) = actions(&world, &old);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, acts, &settings()).unwrap();
    // The template changes after the run read the cluster, before the node starts.
    world
        .cluster
        .update("karpenter.sh/v1", "NodePool", None, "default", |p| {
            p["spec"]["template"]["metadata"]["annotations"] = json!({"example.com/owner": "b"});
        });
    let outcomes = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap();
    assert_eq!(outcomes[0].status, Status::Replaced);
    let fresh = read_cluster(&world.cluster).unwrap().node_pools.remove(0);
    let hash = provisioning::input::hash_annotations(&fresh);
    let annotations = &node_json(&world, &new).unwrap()["metadata"]["annotations"];
    assert_eq!(annotations["example.com/owner"], "b", "{annotations}");
    for (key, value) in hash {
        assert_eq!(annotations[&key], json!(value), "{key}: {annotations}");
    }
}
