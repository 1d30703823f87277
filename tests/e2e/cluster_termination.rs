//! The test cluster's emulation of Karpenter's termination controller (`tests/cluster/karpenter.rs`),
//! driven through the real `kubectl` against the test cluster + moto: a node launched by
//! `kubectl karpenter provision`, given the `karpenter.sh/termination` finalizer (and, for
//! v1beta1, a NodeClaim that stands for it), then deleted as `drift replace --via-controller`
//! would delete it.
//!
//! - NodeClaim deleted → the Node is tainted `karpenter.sh/disruption=disrupting:NoSchedule`,
//!   `inflate` is evicted (its replacement Pending: nothing provisions), the DaemonSet pod is
//!   left alone, the instance is terminated, Node and NodeClaim are gone and stay gone;
//! - a PDB with `maxUnavailable: 0` holds the drain (Node, NodeClaim, pod and instance stay,
//!   with a `FailedDraining` event) until it is deleted;
//! - v1alpha5, Node deleted directly: cordoned, a `do-not-evict` pod is waited for until the
//!   annotation is lifted, then drained and terminated.

use std::process::Child;
use std::time::{Duration, Instant};

use kubectl_karpenter::cloud::types::{Compute, InstanceQuery};
use serde_json::Value;

use crate::provision_live::Walk;
use crate::support::root;

const FINALIZER: &str = "karpenter.sh/termination";

/// The seed's NodePool, EC2NodeClass and `inflate` (examples/manifests/quickstart.yaml), with
/// one replica and the node role moto seeds an instance profile for.
fn quickstart() -> String {
    std::fs::read_to_string(root().join("examples/manifests/quickstart.yaml"))
        .unwrap()
        .replace(
            "karpenterNodeRole-my-cluster",
            "KarpenterNodeRole-my-cluster",
        )
        .replace("replicas: 5", "replicas: 1")
}

/// A Provisioner and AWSNodeTemplate (v1alpha5) for the same nodes and `inflate`, its pod
/// annotated `karpenter.sh/do-not-evict`.
const PROVISIONER_AND_PINNED_INFLATE: &str = "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: default
spec:
  instanceProfile: KarpenterNodeInstanceProfile-my-cluster
  subnetSelector:
    alpha.eksctl.io/cluster-name: my-cluster
  securityGroupSelector:
    alpha.eksctl.io/cluster-name: my-cluster
---
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  providerRef:
    name: default
  labels:
    eks-immersion-team: my-team
  requirements:
  - key: karpenter.k8s.aws/instance-category
    operator: In
    values: [c, m, r]
  - key: kubernetes.io/arch
    operator: In
    values: [amd64]
  - key: karpenter.sh/capacity-type
    operator: In
    values: [on-demand]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 1
  selector:
    matchLabels: {app: inflate}
  template:
    metadata:
      labels: {app: inflate}
      annotations: {karpenter.sh/do-not-evict: \"true\"}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources:
          requests: {cpu: 1}
      nodeSelector: {eks-immersion-team: my-team}
";

/// A DaemonSet on the team's nodes (the drain must leave its pod alone).
const DAEMONSET: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector: {eks-immersion-team: my-team}
      containers:
      - name: agent
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
";

/// The provisioned node: name, providerID and instance id.
struct Launched {
    node: String,
    provider_id: String,
    instance: String,
}

/// `inflate` pending, then `kubectl karpenter provision --yes --wait`: one node with the pod
/// Running on it.
fn provision(walk: &Walk) -> Launched {
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let nodes = team_nodes(walk);
    assert_eq!(nodes.len(), 1, "one node");
    let node = nodes[0]["metadata"]["name"].as_str().unwrap().to_string();
    let provider_id = nodes[0]["spec"]["providerID"].as_str().unwrap().to_string();
    let instance = provider_id.rsplit('/').next().unwrap().to_string();
    walk.eventually(30, "inflate Running on the node", || {
        inflate_on(walk, &node)
            .iter()
            .any(|p| p["status"]["phase"] == "Running")
            .then_some(())
    });
    Launched {
        node,
        provider_id,
        instance,
    }
}

fn team_nodes(walk: &Walk) -> Vec<Value> {
    walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"])
}

fn inflate_on(walk: &Walk, node: &str) -> Vec<Value> {
    walk.items(&["get", "pods", "-l", "app=inflate"])
        .into_iter()
        .filter(|p| p["spec"]["nodeName"] == node)
        .collect()
}

/// What Karpenter puts on the Nodes it registers.
fn add_finalizer(walk: &Walk, node: &str) {
    walk.ok(&[
        "patch",
        "node",
        node,
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"metadata":{{"finalizers":["{FINALIZER}"]}}}}"#),
    ]);
}

/// A v1beta1 NodeClaim for the node, as Karpenter would have created it. `status` is a
/// subresource of the CRD: written on create it is dropped, so it is patched in after.
fn create_nodeclaim(walk: &Walk, name: &str, l: &Launched) {
    walk.apply(
        "nodeclaim.yaml",
        &format!(
            "apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: {name}
  labels: {{karpenter.sh/nodepool: default}}
  finalizers: [{FINALIZER}]
spec:
  nodeClassRef: {{name: default}}
  requirements:
  - key: karpenter.sh/capacity-type
    operator: In
    values: [on-demand]
"
        ),
    );
    walk.ok(&[
        "patch",
        "nodeclaim",
        name,
        "--subresource=status",
        "--type",
        "merge",
        "-p",
        &format!(
            r#"{{"status":{{"nodeName":"{}","providerID":"{}"}}}}"#,
            l.node, l.provider_id
        ),
    ]);
    let claim = walk.json(&["get", "nodeclaim", name, "-o", "json"]);
    assert_eq!(claim["status"]["nodeName"], l.node.as_str(), "{claim}");
}

fn instance_state(walk: &Walk, id: &str) -> String {
    walk.moto
        .cloud()
        .describe_instances(&InstanceQuery::Ids(vec![id.to_string()]))
        .unwrap()
        .into_iter()
        .next()
        .map(|i| i.state)
        .unwrap_or_default()
}

fn exists(walk: &Walk, kind: &str, name: &str) -> bool {
    !walk
        .ok(&["get", kind, "--ignore-not-found", "-o", "name", name])
        .trim()
        .is_empty()
}

/// Waits for the node to go, its instance to be down, and checks the kubelet does not bring
/// the node back from a stale instance list.
fn wait_terminated(walk: &Walk, l: &Launched) {
    walk.eventually(30, "the node gone", || {
        (!exists(walk, "node", &l.node)).then_some(())
    });
    let state = instance_state(walk, &l.instance);
    assert!(
        state == "terminated" || state == "shutting-down",
        "instance {}: {state}",
        l.instance
    );
    // A few kubelet passes (one a second): the node stays gone.
    std::thread::sleep(Duration::from_secs(3));
    assert!(team_nodes(walk).is_empty(), "the node came back");
}

/// `kubectl get node -w -o json` until it is stopped: every version of the node.
fn watch_node(walk: &Walk, node: &str) -> Child {
    walk.spawn(&["get", "node", node, "--watch", "-o", "json"])
}

fn watched(mut child: Child) -> Vec<Value> {
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .map(|v| v.unwrap())
        .collect()
}

fn has_taint(node: &Value, key: &str, value: &str, effect: &str) -> bool {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| {
            t["key"] == key && t["effect"] == effect && t["value"].as_str().unwrap_or("") == value
        })
}

/// Events with this reason, as `(involved object name, message)`.
fn events(walk: &Walk, reason: &str) -> Vec<(String, String)> {
    walk.items(&["get", "events", "-A"])
        .into_iter()
        .filter(|e| e["reason"] == reason)
        .map(|e| {
            (
                e["involvedObject"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn deleting_a_nodeclaim_drains_and_terminates_its_node() {
    let walk = Walk::new_v1beta1("termination-nodeclaim");
    walk.apply("basic.yaml", &quickstart());
    walk.apply("agent.yaml", DAEMONSET);
    let l = provision(&walk);
    let pod = inflate_on(&walk, &l.node)[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    walk.eventually(30, "the agent pod Running on the node", || {
        walk.items(&["get", "pods", "-l", "app=agent"])
            .iter()
            .any(|p| p["spec"]["nodeName"] == l.node.as_str() && p["status"]["phase"] == "Running")
            .then_some(())
    });
    add_finalizer(&walk, &l.node);
    create_nodeclaim(&walk, "default-abcde", &l);

    let watch = watch_node(&walk, &l.node);
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    walk.ok(&["delete", "nodeclaim", "default-abcde", "--wait=false"]);
    walk.eventually(30, "the NodeClaim gone", || {
        (!exists(&walk, "nodeclaim", "default-abcde")).then_some(())
    });
    // Taint, evict, terminate, release: each step is picked up within a second or so (the
    // kubelet polls EC2 every second), not at some slow resync.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "took {took:?}");
    wait_terminated(&walk, &l);

    let versions = watched(watch);
    assert!(
        versions.iter().any(|n| has_taint(
            n,
            "karpenter.sh/disruption",
            "disrupting",
            "NoSchedule"
        )),
        "the node was tainted: {versions:?}"
    );
    // Evicted, recreated by the ReplicaSet, and Pending: the only node that fitted is gone.
    let pods = walk.items(&["get", "pods", "-l", "app=inflate"]);
    assert_eq!(pods.len(), 1);
    assert_ne!(pods[0]["metadata"]["name"], pod.as_str());
    assert_eq!(pods[0]["status"]["phase"], "Pending");
    let evicted = events(&walk, "Evicted");
    assert_eq!(evicted, [(pod, "Evicted pod".to_string())], "only inflate");
}

#[test]
fn a_pdb_holds_the_drain_until_it_is_deleted() {
    let walk = Walk::new_v1beta1("termination-pdb");
    walk.apply("basic.yaml", &quickstart());
    let l = provision(&walk);
    walk.apply(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: inflate\nspec:\n  maxUnavailable: 0\n  selector:\n    matchLabels: {app: inflate}\n",
    );
    walk.eventually(30, "the PDB's status", || {
        let p = walk.json(&["get", "pdb", "inflate", "-o", "json"]);
        (p["status"]["currentHealthy"].as_i64() == Some(1)).then_some(())
    });
    add_finalizer(&walk, &l.node);
    create_nodeclaim(&walk, "default-pdb01", &l);
    walk.ok(&["delete", "nodeclaim", "default-pdb01", "--wait=false"]);

    let node = walk.eventually(30, "the node tainted", || {
        let n = walk.json(&["get", "node", &l.node, "-o", "json"]);
        has_taint(&n, "karpenter.sh/disruption", "disrupting", "NoSchedule").then_some(n)
    });
    assert!(node["metadata"]["deletionTimestamp"].is_string());
    walk.eventually(30, "a FailedDraining event naming the pod", || {
        events(&walk, "FailedDraining")
            .iter()
            .any(|(n, m)| n == &l.node && m.contains("inflate"))
            .then_some(())
    });
    // Several retries later, everything is still in place.
    std::thread::sleep(Duration::from_secs(3));
    assert!(exists(&walk, "node", &l.node));
    let claim = walk.json(&["get", "nodeclaim", "default-pdb01", "-o", "json"]);
    assert!(claim["metadata"]["deletionTimestamp"].is_string());
    let pods = inflate_on(&walk, &l.node);
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Running");
    assert_eq!(instance_state(&walk, &l.instance), "running");
    assert_eq!(
        events(&walk, "FailedDraining").len(),
        1,
        "one event, not one per retry"
    );

    walk.ok(&["delete", "pdb", "inflate"]);
    walk.eventually(30, "the NodeClaim gone", || {
        (!exists(&walk, "nodeclaim", "default-pdb01")).then_some(())
    });
    wait_terminated(&walk, &l);
    let pods = walk.items(&["get", "pods", "-l", "app=inflate"]);
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Pending");
}

#[test]
fn deleting_a_v1alpha5_node_cordons_waits_for_do_not_evict_and_terminates() {
    let walk = Walk::with("termination-v1alpha5", true, "crds/v1alpha5", |_| {
        Vec::new()
    });
    walk.apply("provisioner.yaml", PROVISIONER_AND_PINNED_INFLATE);
    let l = provision(&walk);
    add_finalizer(&walk, &l.node);
    walk.ok(&["delete", "node", &l.node, "--wait=false"]);

    let node = walk.eventually(30, "the node cordoned", || {
        let n = walk.json(&["get", "node", &l.node, "-o", "json"]);
        (n["spec"]["unschedulable"] == true).then_some(n)
    });
    assert!(
        !has_taint(&node, "karpenter.sh/disruption", "disrupting", "NoSchedule"),
        "v1alpha5 cordons, it does not taint"
    );
    // The do-not-evict pod is waited for, not evicted.
    std::thread::sleep(Duration::from_secs(3));
    assert!(exists(&walk, "node", &l.node));
    let pods = inflate_on(&walk, &l.node);
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Running");
    assert_eq!(instance_state(&walk, &l.instance), "running");
    let pod = pods[0]["metadata"]["name"].as_str().unwrap().to_string();

    walk.ok(&[
        "annotate",
        "pod",
        &pod,
        "karpenter.sh/do-not-evict=false",
        "--overwrite",
    ]);
    wait_terminated(&walk, &l);
    assert_eq!(events(&walk, "Evicted"), [(pod, "Evicted pod".to_string())]);
}
