//! More drift on a live cluster (test cluster + moto, the real `kubectl`, the plugin on `PATH`),
//! each driven as a user would:
//!
//! - `drift check --mark` writes the verdict where the installed generation shows drift and
//!   takes it back once the drift is undone: v1alpha5 Provisioner nodes get the v0.2x
//!   annotation `karpenter.sh/voluntary-disruption=drifted`; v1beta1 NodePool nodes the
//!   tool's label `kubectl-karpenter.io/drifted=<reason>` (selectable with `kubectl get nodes
//!   -l`). Nodes that did not drift are left alone; exit 1 while drifted, 0 when not.
//! - `drift replace --watch --yes` replaces a node that drifts while it watches, and stops
//!   cleanly (exit 0) on Ctrl-C, even while sleeping between passes.
//! - `drift replace --via-controller` on v1alpha5 nodes without Machines: the Node carrying
//!   Karpenter's `karpenter.sh/termination` finalizer is what is deleted (the controller's
//!   termination drains it); without the finalizer the node is reported blocked, named.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kubectl_karpenter::model::labels::{
    DRIFTED_LABEL, TERMINATION_FINALIZER, VOLUNTARY_DISRUPTION,
};
use serde_json::Value;

use crate::drift_live::{
    image_of, install_controller, node_template, old_node, settle_team_nodes, stand_in_controller,
    switch_to_new, team_nodes, tool_instances, AMI_124, AMI_125, PROVISIONER_AND_INFLATE,
};
use crate::provision_live::{running_on, Walk, Watching};

/// The instance profile `provision` needs for v1alpha5 when no controller is installed.
const PROFILE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karpenter\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: karpenter-global-settings\n  namespace: karpenter\ndata:\n  aws.defaultInstanceProfile: KarpenterNodeInstanceProfile-my-cluster\n";

/// A v1alpha5 walk (Provisioner/AWSNodeTemplate CRDs, the EC2 kubelet).
fn v1alpha5(test: &str) -> Walk {
    Walk::with(test, true, "crds/v1alpha5", |_| Vec::new())
}

fn name_of(node: &Value) -> String {
    node["metadata"]["name"].as_str().unwrap().to_string()
}

fn node(walk: &Walk, name: &str) -> Value {
    walk.json(&["get", "node", name, "-o", "json"])
}

/// Waits until `n` pods matching `selector` are marked unschedulable by the scheduler.
fn wait_pending(walk: &Walk, selector: &str, n: usize) {
    walk.eventually(30, &format!("{n} unschedulable pod(s) {selector}"), || {
        let pending = walk
            .items(&["get", "pods", "-l", selector])
            .into_iter()
            .filter(|p| {
                p["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
            })
            .count();
        (pending >= n).then_some(())
    });
}

/// The one node carrying `label` (`key=value`).
fn only_node(walk: &Walk, label: &str) -> Value {
    let nodes = walk.items(&["get", "nodes", "-l", label]);
    assert_eq!(nodes.len(), 1, "one node {label}: {nodes:?}");
    nodes.into_iter().next().unwrap()
}

/// Names of the nodes `kubectl get nodes -l selector` selects.
fn selected(walk: &Walk, selector: &str) -> Vec<String> {
    walk.items(&["get", "nodes", "-l", selector])
        .iter()
        .map(name_of)
        .collect()
}

/// Runs `kubectl karpenter drift check --mark -v`; asserts the exit code and how many nodes
/// `--mark` says it updated.
fn mark(walk: &Walk, code: i32, updated: usize) -> String {
    let out = walk.run(&["karpenter", "drift", "check", "--mark", "-v"]);
    assert_eq!(out.code, code, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains(&format!("--mark: {updated} node(s) updated")),
        "{updated} updated: {}",
        out.stderr
    );
    out.stdout
}

/// SIGINT to `child` (Ctrl-C), then its exit code and how long it took to exit; fails after
/// `secs`.
fn interrupt(child: &mut Child, secs: u64) -> (Option<i32>, Duration) {
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), sent.elapsed());
        }
        if sent.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {secs}s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A second Provisioner (`steady`, on its own AWSNodeTemplate pinned to the same 1.24 AMI) and
/// a Deployment for it: a node next to the walkthrough's that never drifts.
const STEADY_PROVISIONER: &str = "apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: steady
spec:
  providerRef:
    name: steadynode
  labels:
    eks-immersion-team: steady-team
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
  name: steady
spec:
  replicas: 1
  selector:
    matchLabels:
      app: steady
  template:
    metadata:
      labels:
        app: steady
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: steady
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources:
          requests:
            cpu: 1
      nodeSelector:
        eks-immersion-team: steady-team
";

/// docs/spec.md §4 `--mark`, v0.2x generation: the drifted Provisioner node gets
/// `karpenter.sh/voluntary-disruption=drifted`, the steady one nothing; a re-run changes
/// nothing; once the Provisioner is switched back to the old template the annotation goes.
#[test]
fn mark_v1alpha5_annotates_drifted_nodes_and_clears_when_undone() {
    let walk = v1alpha5("mark-v1alpha5");
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.apply("profile.yaml", PROFILE);
    walk.apply("oldnode.yaml", &node_template("oldnode", &old));
    walk.apply("steadynode.yaml", &node_template("steadynode", &old));
    walk.apply("provisioner.yaml", PROVISIONER_AND_INFLATE);
    walk.apply("steady.yaml", STEADY_PROVISIONER);
    wait_pending(&walk, "app=inflate", 1);
    wait_pending(&walk, "app=steady", 1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let drifting = name_of(&only_node(&walk, "eks-immersion-team=my-team"));
    let steady = name_of(&only_node(&walk, "eks-immersion-team=steady-team"));
    let annotation = |name: &str| {
        node(&walk, name)["metadata"]["annotations"][VOLUNTARY_DISRUPTION]
            .as_str()
            .map(str::to_string)
    };
    let untouched = |name: &str| {
        let n = node(&walk, name);
        assert!(
            n["metadata"]["annotations"][VOLUNTARY_DISRUPTION].is_null()
                && n["metadata"]["labels"][DRIFTED_LABEL].is_null(),
            "{name} carries no drift marker: {n}"
        );
    };

    // Nothing drifted: nothing written.
    mark(&walk, 0, 0);
    untouched(&drifting);
    untouched(&steady);

    switch_to_new(&walk, &new);
    let stdout = mark(&walk, 1, 1);
    assert!(
        stdout.contains(&drifting) && stdout.contains("AMIDrift"),
        "{stdout}"
    );
    assert_eq!(annotation(&drifting).as_deref(), Some("drifted"));
    assert!(
        node(&walk, &drifting)["metadata"]["labels"][DRIFTED_LABEL].is_null(),
        "v0.2x nodes get Karpenter's annotation, not the tool's label"
    );
    untouched(&steady);
    // Idempotent: the marker is there already.
    mark(&walk, 1, 0);
    assert_eq!(annotation(&drifting).as_deref(), Some("drifted"));

    // Drift undone: the Provisioner back on the 1.24 template.
    walk.ok(&[
        "patch",
        "provisioner",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"providerRef":{"name":"oldnode"}}}"#,
    ]);
    mark(&walk, 0, 1);
    untouched(&drifting);
    untouched(&steady);
}

/// Two NodePools (`a`, `b`) of c 2xlarge nodes on one EC2NodeClass, one 6-CPU pod each.
const TWO_POOLS: &str = "apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole-my-cluster
  securityGroupSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
  subnetSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: a
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    expireAfter: Never
  template:
    metadata:
      labels: {team: a}
    spec:
      nodeClassRef: {name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [2xlarge]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: b
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    expireAfter: Never
  template:
    metadata:
      labels: {team: b}
    spec:
      nodeClassRef: {name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [2xlarge]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: work-a
spec:
  replicas: 1
  selector:
    matchLabels: {app: work-a}
  template:
    metadata:
      labels: {app: work-a}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: work
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {requests: {cpu: \"6\"}}
      nodeSelector: {team: a}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: work-b
spec:
  replicas: 1
  selector:
    matchLabels: {app: work-b}
  template:
    metadata:
      labels: {app: work-b}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: work
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {requests: {cpu: \"6\"}}
      nodeSelector: {team: b}
";

/// docs/spec.md §4 `--mark`, v1beta1: the node of the NodePool whose requirements changed gets the
/// tool's label `kubectl-karpenter.io/drifted=RequirementsDrifted` (so `kubectl get nodes -l`
/// selects it), the other pool's node nothing; reverting the edit removes the label.
#[test]
fn mark_v1beta1_labels_drifted_nodes_selectably_and_clears_when_undone() {
    let walk = Walk::new_v1beta1("mark-v1beta1");
    walk.apply("pools.yaml", TWO_POOLS);
    wait_pending(&walk, "app=work-a", 1);
    wait_pending(&walk, "app=work-b", 1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let a = name_of(&only_node(&walk, "team=a"));
    let b = name_of(&only_node(&walk, "team=b"));
    let untouched = |name: &str| {
        let n = node(&walk, name);
        assert!(
            n["metadata"]["labels"][DRIFTED_LABEL].is_null()
                && n["metadata"]["annotations"][VOLUNTARY_DISRUPTION].is_null(),
            "{name} carries no drift marker: {n}"
        );
    };
    let requirement = |category: &str| {
        walk.ok(&[
            "patch",
            "nodepool",
            "a",
            "--type",
            "json",
            "-p",
            &format!(
                r#"[{{"op":"replace","path":"/spec/template/spec/requirements/0/values","value":["{category}"]}}]"#
            ),
        ]);
    };

    mark(&walk, 0, 0);
    assert!(selected(&walk, DRIFTED_LABEL).is_empty());

    // Pool a narrowed to m: its c node drifts (RequirementsDrifted); b's does not.
    requirement("m");
    let stdout = mark(&walk, 1, 1);
    assert!(stdout.contains("RequirementsDrifted"), "{stdout}");
    assert_eq!(selected(&walk, DRIFTED_LABEL), vec![a.clone()]);
    assert_eq!(
        selected(&walk, &format!("{DRIFTED_LABEL}=RequirementsDrifted")),
        vec![a.clone()]
    );
    assert!(
        node(&walk, &a)["metadata"]["annotations"][VOLUNTARY_DISRUPTION].is_null(),
        "v1beta1 nodes get the tool's label, not the v0.2x annotation"
    );
    untouched(&b);
    mark(&walk, 1, 0);

    // The edit reverted: nothing drifted, the label removed.
    requirement("c");
    mark(&walk, 0, 1);
    assert!(selected(&walk, DRIFTED_LABEL).is_empty());
    untouched(&a);
    untouched(&b);
}

/// docs/spec.md §4 `--watch`: "keeps replacing as nodes drift". A pass with nothing drifted, then the
/// Provisioner switched to the 1.25 template while the watch sleeps: a later pass replaces the
/// node (old node and instance gone, `inflate` Running on a 1.25 node, one replacement), and
/// Ctrl-C during the 30 s sleep stops it promptly with exit 0.
#[test]
fn replace_watch_replaces_a_node_that_drifts_and_stops_on_ctrl_c() {
    let walk = v1alpha5("replace-watch");
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.apply("profile.yaml", PROFILE);
    let old_name = old_node(&walk, &old);
    let old_instance = node(&walk, &old_name)["spec"]["providerID"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();

    let mut guard =
        Watching(walk.spawn(&["karpenter", "drift", "replace", "--watch", "--yes", "-v"]));
    let watch = &mut guard.0;
    let stderr = watch.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let lines = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        })
    };
    let mut stdout = watch.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    // Each pass reads the cluster and AWS first (the `-v` note ends that); once the first
    // pass has read, nothing it saw was drifted.
    let passes = |lines: &Arc<Mutex<Vec<String>>>| {
        lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("Kubernetes requests; AWS:"))
            .count()
    };
    walk.eventually(60, "the watch's first pass", || {
        (passes(&lines) >= 1).then_some(())
    });
    switch_to_new(&walk, &new);

    let started = Instant::now();
    let new_name = walk.eventually(120, "the drifted node replaced by the watch", || {
        let nodes = team_nodes(&walk);
        let fresh = nodes.iter().find(|n| name_of(n) != old_name)?;
        let name = name_of(fresh);
        (nodes.len() == 1 && running_on(&walk, &name) == 1).then_some(name)
    });
    eprintln!(
        "watch: replaced {:.1} s after the drift",
        started.elapsed().as_secs_f64()
    );
    let nodes = settle_team_nodes(&walk, 1);
    assert_eq!(name_of(&nodes[0]), new_name);
    assert_eq!(image_of(&walk, &nodes[0]), new, "the new node runs 1.25");
    assert!(
        passes(&lines) >= 2,
        "replaced by a later pass than the first: {:?}",
        lines.lock().unwrap()
    );
    // The pass that replaced it has finished (its summary table is printed) before the
    // interrupt, so the Ctrl-C lands in the sleep or in a pass with nothing to do.
    walk.eventually(60, "the replacing pass done", || {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(&format!("{old_name}: deleted; instance")))
            .then_some(())
    });

    let (code, took) = interrupt(watch, 20);
    reader.join().unwrap();
    let stdout = stdout.join().unwrap();
    let stderr = lines.lock().unwrap().join("\n");
    eprintln!("watch: exited {took:?} after SIGINT");
    assert_eq!(code, Some(0), "clean stop on SIGINT:\n{stdout}\n{stderr}");
    assert!(
        took < Duration::from_secs(10),
        "Ctrl-C interrupts the 30 s sleep: took {took:?}"
    );
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stdout.contains(&old_name) && stdout.contains("1 replaced"),
        "the pass's summary: {stdout}"
    );
    let instances = tool_instances(&walk);
    assert_eq!(instances.len(), 2, "exactly one replacement: {instances:?}");
    assert!(
        instances
            .iter()
            .any(|(id, s, _)| id == &old_instance && (s == "terminated" || s == "shutting-down")),
        "the old instance is terminated: {instances:?}"
    );
}

/// docs/spec.md §6 `--via-controller` with a v0.2x controller and no Machines (v1alpha5 nodes only):
/// without Karpenter's termination finalizer the node is blocked, the finalizer named; with
/// it, the Node itself is deleted and the (emulated) termination controller cordons, drains
/// and terminates it while a provisioner (`provision --watch`, standing in for Karpenter's)
/// brings up a 1.25 node for `inflate`.
#[test]
fn via_controller_deletes_finalized_v1alpha5_nodes_without_machines() {
    let walk = v1alpha5("via-controller-v1alpha5");
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    install_controller(&walk);
    let old_name = old_node(&walk, &old);
    let old_instance = node(&walk, &old_name)["spec"]["providerID"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    switch_to_new(&walk, &new);

    // No Machine and no finalizer: the controller would never drain it.
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--via-controller",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(out.code, 1, "blocked: {}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["blocked"], 1, "{doc}");
    assert_eq!(doc["nodes"][0]["node"], old_name.as_str(), "{doc}");
    assert_eq!(doc["nodes"][0]["status"], "blocked", "{doc}");
    let detail = doc["nodes"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains(TERMINATION_FINALIZER) && detail.contains("no Machine owns this node"),
        "{detail}"
    );
    assert!(
        node(&walk, &old_name)["metadata"]["deletionTimestamp"].is_null(),
        "a dry run deletes nothing"
    );

    walk.ok(&[
        "patch",
        "node",
        &old_name,
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"metadata":{{"finalizers":["{TERMINATION_FINALIZER}"]}}}}"#),
    ]);
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--via-controller",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["nodes"][0]["status"], "planned", "{doc}");
    assert_eq!(
        doc["nodes"][0]["detail"],
        format!("delete Node {old_name}").as_str(),
        "{doc}"
    );

    let mut provisioner = stand_in_controller(&walk);
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--via-controller",
        "--yes",
        "-o",
        "json",
    ]);
    let (code, _) = interrupt(&mut provisioner, 60);
    assert_eq!(code, Some(0), "the provisioner stops cleanly");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 1, "{doc}");
    assert!(
        out.stderr.contains(&format!("deleted Node {old_name}")),
        "{}",
        out.stderr
    );

    let nodes = settle_team_nodes(&walk, 1);
    let new_name = name_of(&nodes[0]);
    assert_ne!(new_name, old_name, "the old node is gone");
    assert_eq!(image_of(&walk, &nodes[0]), new, "the new node runs 1.25");
    let instances = tool_instances(&walk);
    assert!(
        instances
            .iter()
            .any(|(id, s, _)| id == &old_instance && (s == "terminated" || s == "shutting-down")),
        "the old instance is terminated: {instances:?}"
    );
    assert_eq!(instances.len(), 2, "one replacement: {instances:?}");
    walk.eventually(30, "inflate Running on the new node", || {
        (running_on(&walk, &new_name) == 1).then_some(())
    });
}
