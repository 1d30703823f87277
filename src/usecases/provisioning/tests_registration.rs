//! Registration as `provision --wait` plays it on the nodes it launched (`core v1.14.1:
//! pkg/controllers/nodeclaim/lifecycle/registration_test.go`): the NodeClaim's labels, taints
//! and startup taints reach the Node once, unless it says `karpenter.sh/do-not-sync-taints`
//! (docs/upstream-tests.md "Node termination and NodeClaim lifecycle (s17-term)").

use std::time::Duration;

use serde_json::{json, Value};

use super::tests::all;
use super::*;
use crate::usecases::clock::Clock;
use crate::usecases::testing::{node_name, node_pool, World};

const DEDICATED: &str = "dedicated";
const AGENT: &str = "agent.example/not-ready";

/// A pool whose template has a taint, a startup taint and a label the kubelet may not set;
/// one pending pod that tolerates the taint; the kubelet registering its nodes after 20 s with
/// no taint at all (a Custom family's user data) and, when `label` is given, the
/// `karpenter.sh/do-not-sync-taints` label with that value. The agent removes its startup taint
/// once 60 s have passed. The Node's name and the wait's outcome after `first` and again after
/// ten minutes.
fn registered(label: Option<&str>, first: Duration) -> (World, String, Waited, Waited) {
    let world = World::new();
    world.cluster.put(node_pool(
        "default",
        json!({"template": {
            "metadata": {"labels": {"team": "a", "node-role.kubernetes.io/gpu": ""}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                "name": "default"},
                "taints": [{"key": DEDICATED, "value": "gpu", "effect": "NoSchedule"}],
                "startupTaints": [{"key": AGENT, "effect": "NoSchedule"}],
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                    "values": ["on-demand"]}]}}}),
    ));
    world.kubelet(Duration::from_secs(20));
    let (cluster, label) = (world.cluster.clone(), label.map(str::to_string));
    world.clock.on_tick(move |now| {
        for mut n in cluster.list("v1", "Node") {
            let mut changed = false;
            if let Some(v) = &label {
                if n["metadata"]["labels"]["karpenter.sh/do-not-sync-taints"] != v.as_str() {
                    n["metadata"]["labels"]["karpenter.sh/do-not-sync-taints"] = json!(v);
                    changed = true;
                }
            }
            let taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
            if now >= Duration::from_secs(60) && taints.iter().any(|t| t["key"] == AGENT) {
                let kept: Vec<Value> = taints.into_iter().filter(|t| t["key"] != AGENT).collect();
                n["spec"]["taints"] = json!(kept);
                changed = true;
            }
            if changed {
                cluster.put(n);
            }
        }
    });
    world.scheduler();
    world.pending("a", "1");
    world
        .cluster
        .update("v1", "Pod", Some("default"), "a", |p| {
            p["spec"]["tolerations"] =
                json!([{"key": DEDICATED, "operator": "Exists", "effect": "NoSchedule"}]);
        });
    let mut live = world.live();
    let launches = launch_pending(&mut live);
    let node = node_name(&launches.launched[0].instance_id);
    let early = live.wait(&launches.launched, first, &mut |_| {}).unwrap();
    let late = live
        .wait(&launches.launched, Duration::from_secs(600), &mut |_| {})
        .unwrap();
    drop(live);
    (world, node, early, late)
}

/// Plans the pending pods and launches the plan.
fn launch_pending(live: &mut crate::usecases::testing::TestLive<'_>) -> Launches {
    let round = live
        .plan_pending(&all(), &mut |_| {})
        .unwrap()
        .expect("pods pending");
    live.launch_all(&round.classes, &round.plan, &round.input, &mut |_| {})
        .unwrap()
}

fn taints_of(world: &World, node: &str) -> Vec<String> {
    let n = world.cluster.get("v1", "Node", None, node).unwrap();
    n["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| t["key"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn labels_of(world: &World, node: &str) -> Value {
    world.cluster.get("v1", "Node", None, node).unwrap()["metadata"]["labels"].clone()
}

/// "should sync the taints to the Node when the Node comes online, if node label do not sync
/// taints is not present", "should sync the startupTaints to the Node when the Node comes
/// online, if node label do not sync taints is not present", "should not re-sync the
/// startupTaints to the Node when the startupTaints are removed", "should sync the labels to
/// the Node when the Node comes online". **Differed, fixed (s17)**: a node whose kubelet
/// registered none of them (a Custom family's user data) kept none — pods not tolerating the
/// pool's taint could land there, it was labelled initialized at once, and it lacked template
/// labels the kubelet may not set (`node-role.kubernetes.io/*`).
#[test]
fn registration_puts_the_pools_taints_startup_taints_and_labels_on_the_node_once() {
    let (world, node, early, late) = registered(None, Duration::from_secs(40));
    assert!(matches!(early, Waited::TimedOut { .. }), "{early:?}");
    assert!(matches!(late, Waited::Ready(_)), "{late:?}");
    assert!(
        world.clock.monotonic() >= Duration::from_secs(60),
        "waited for the agent"
    );
    // The startup taint, put on at registration and removed by its agent, is not put back.
    assert_eq!(taints_of(&world, &node), [DEDICATED]);
    let labels = labels_of(&world, &node);
    assert_eq!(labels["node-role.kubernetes.io/gpu"], "");
    assert_eq!(labels["karpenter.sh/nodepool"], "default");
    assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "c6a");
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    let node_path = format!("/api/v1/nodes/{node}");
    let patches: Vec<Value> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == crate::k8s::Method::Patch && r.path == node_path)
        .map(|r| r.body)
        .collect();
    assert_eq!(
        patches.len(),
        3,
        "the taints, the registration, the initialization: {patches:?}"
    );
    assert_eq!(
        patches[0],
        json!([{"op": "add", "path": "/spec/taints", "value": [
            {"key": DEDICATED, "value": "gpu", "effect": "NoSchedule"},
            {"key": AGENT, "effect": "NoSchedule"}]}])
    );
    assert_eq!(
        patches[1]["metadata"]["labels"]["karpenter.sh/registered"],
        "true"
    );
    assert!(patches[1]["metadata"]["labels"]
        .get("karpenter.sh/initialized")
        .is_none());
    // The kubelet's own labels are left as it set them.
    assert!(patches[1]["metadata"]["labels"]
        .get("topology.kubernetes.io/zone")
        .is_none());
    assert_eq!(
        patches[2],
        json!({"metadata": {"labels": {"karpenter.sh/initialized": "true"}}})
    );
}

/// "should not sync the taints to the Node when the Node comes online, with node label do not
/// sync taints", "should not sync the startupTaints … with node label do not sync taints": the
/// kubelet says it registers them itself (every family's user data but Custom's).
#[test]
fn a_node_labelled_do_not_sync_taints_gets_none() {
    let (world, node, early, late) = registered(Some("true"), Duration::from_secs(40));
    assert!(matches!(early, Waited::Ready(_)), "{early:?}");
    assert!(matches!(late, Waited::Ready(_)), "{late:?}");
    assert!(taints_of(&world, &node).is_empty());
    assert_eq!(labels_of(&world, &node)["karpenter.sh/registered"], "true");
}

/// "should sync the taints to the Node when the Node comes online, if node label do not sync
/// taints is present but key is not true", and the same It for startupTaints.
#[test]
fn a_do_not_sync_taints_label_that_is_not_true_syncs_them() {
    let (world, node, _, late) = registered(Some("false"), Duration::from_secs(40));
    assert!(matches!(late, Waited::Ready(_)), "{late:?}");
    assert_eq!(taints_of(&world, &node), [DEDICATED]);
}

/// `aws v1.14.1: pkg/cloudprovider/registrationhooks/placementgrouphook_test.go`: a NodeClaim
/// launched into a partition placement group without a partition asked for carries the empty
/// partition label; registration fills it from the instance's `Placement.PartitionNumber`
/// (DescribeInstances). One asked for is kept without a call; an instance that names no
/// partition gets no label (upstream holds registration until it does). **Differed, fixed
/// (s18)**: the node got the group id but no partition label, so a spread over
/// `placement-group-partition` could not count it.
#[test]
fn registration_fills_the_partition_label_from_the_instance() {
    use crate::model::labels::{PLACEMENT_GROUP_ID, PLACEMENT_GROUP_PARTITION};
    let world = World::new();
    let picked = world.registered_node("default", "c6a.large");
    let asked = world.registered_node("default", "c6a.large");
    let unnamed = world.registered_node("default", "c6a.large");
    world.cloud.instances.borrow_mut()[0].partition = Some(3);
    world.cloud.instances.borrow_mut()[1].partition = Some(2);
    let live = world.live();
    let nodes = crate::usecases::replace::steps::live_nodes(&world.cluster).unwrap();
    let node = |name: &str| nodes.iter().find(|n| n.name == name).unwrap().clone();
    let labels = |partition: &'static str| {
        move || {
            [
                (PLACEMENT_GROUP_ID, "pg-0a1b"),
                (PLACEMENT_GROUP_PARTITION, partition),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        }
    };
    let none = Default::default();
    let described =
        || crate::cloud::types::Cloud::call_counts(&*world.cloud).get("EC2.DescribeInstances");
    live.sync_registered(&node(&picked), labels(""), &none, &[], false)
        .unwrap();
    assert_eq!(described(), 1);
    let before = described();
    live.sync_registered(&node(&asked), labels("2"), &none, &[], false)
        .unwrap();
    assert_eq!(described(), before, "asked for: no call");
    live.sync_registered(&node(&unnamed), labels(""), &none, &[], false)
        .unwrap();
    let label = |name: &str| {
        world.cluster.get("v1", "Node", None, name).unwrap()["metadata"]["labels"]
            [PLACEMENT_GROUP_PARTITION]
            .clone()
    };
    assert_eq!(label(&picked), "3");
    assert_eq!(label(&asked), "2");
    assert!(label(&unnamed).is_null(), "never the empty label");
    let registered = world.cluster.get("v1", "Node", None, &unnamed).unwrap();
    assert_eq!(
        registered["metadata"]["labels"][PLACEMENT_GROUP_ID],
        "pg-0a1b"
    );
    assert_eq!(
        registered["metadata"]["labels"]["karpenter.sh/registered"],
        "true"
    );
}

/// A kubelet registering with `karpenter.sh/unregistered:NoExecute` — a Custom class's userData
/// that follows `convert`'s advice (`--register-with-taints=karpenter.sh/unregistered:NoExecute`)
/// — with or without `karpenter.sh/do-not-sync-taints=true`: `--wait`'s outcome, the Node's
/// taints and labels at the end, and the JSON patches it got.
fn registered_with_the_unregistered_taint(
    do_not_sync: bool,
) -> (Waited, Vec<String>, Value, Vec<Value>) {
    let world = World::new();
    world.kubelet(Duration::from_secs(20));
    let cluster = world.cluster.clone();
    let mut tainted = std::collections::BTreeSet::new();
    world.clock.on_tick(move |_| {
        for mut n in cluster.list("v1", "Node") {
            let name = n["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if !tainted.insert(name) {
                continue;
            }
            n["spec"]["taints"] =
                json!([{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]);
            if do_not_sync {
                n["metadata"]["labels"]["karpenter.sh/do-not-sync-taints"] = json!("true");
            }
            cluster.put(n);
        }
    });
    world.scheduler();
    world.pending("a", "1");
    let mut live = world.live();
    let launches = launch_pending(&mut live);
    let node = node_name(&launches.launched[0].instance_id);
    let waited = live
        .wait(&launches.launched, Duration::from_secs(300), &mut |_| {})
        .unwrap();
    drop(live);
    let node_path = format!("/api/v1/nodes/{node}");
    let json_patches = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == crate::k8s::Method::Patch && r.path == node_path)
        .map(|r| r.body)
        .filter(Value::is_array)
        .collect();
    (
        waited,
        taints_of(&world, &node),
        labels_of(&world, &node),
        json_patches,
    )
}

/// "should sync the karpenter.sh/registered label to the Node and remove the
/// karpenter.sh/unregistered taint when the Node comes online" (`core v1.14.1:
/// pkg/controllers/nodeclaim/lifecycle/registration_test.go`; `registration.go Reconcile`
/// removes it whatever `do-not-sync-taints` says). **Differed, fixed (s29)**: the taint stayed,
/// and being a known ephemeral taint it kept the node uninitialized — `--wait` timed out on a
/// node that had joined.
#[test]
fn registration_takes_the_unregistered_taint_off_and_the_node_initializes() {
    for do_not_sync in [false, true] {
        let (waited, taints, labels, patches) = registered_with_the_unregistered_taint(do_not_sync);
        assert!(
            matches!(waited, Waited::Ready(_)),
            "{do_not_sync}: {waited:?}"
        );
        assert!(taints.is_empty(), "{do_not_sync}: {taints:?}");
        assert_eq!(labels["karpenter.sh/registered"], "true");
        assert_eq!(labels["karpenter.sh/initialized"], "true");
        assert_eq!(
            patches,
            [json!([
                {"op": "test", "path": "/spec/taints/0/key", "value": "karpenter.sh/unregistered"},
                {"op": "test", "path": "/spec/taints/0/effect", "value": "NoExecute"},
                {"op": "remove", "path": "/spec/taints/0"}])],
            "{do_not_sync}"
        );
    }
}
