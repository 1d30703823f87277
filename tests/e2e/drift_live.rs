//! Drift on a live cluster (issue #5's "Must show"), on the local test cluster + moto with the
//! real `kubectl` and the plugin found on `PATH`:
//!
//! - the walkthrough `000_9d09da5d9b52b6f7.txt` end to end: a v0.2x controller and its
//!   `karpenter-global-settings`, `enable-drift`, a Provisioner on an AWSNodeTemplate pinned to
//!   the 1.24 AMI, a node on it, the template switched to the 1.25 AMI → `drift check` exits 1
//!   with `AMIDrift` and both ids → `drift replace` cordons (`Ready,SchedulingDisabled`), brings
//!   up a 1.25 node, moves `inflate`, removes the old node and instance → `disable-drift`;
//! - replace safety: a PDB with `maxUnavailable: 0` and a do-not-disrupt pod block (named),
//!   a replacement that never becomes Ready is rolled back, and a run killed at each step
//!   resumes without a second replacement;
//! - pace (docs/performance.md B6): a budget of two kept full, never exceeded;
//! - `--via-controller`: NodeClaims handed to (the test cluster's emulation of) Karpenter's
//!   termination controller one budget's worth at a time.

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::provision_live::{running_on, Walk};
use kubectl_karpenter::cloud::types::{Compute, Filter, InstanceQuery};
use kubectl_karpenter::model::labels::TERMINATION_FINALIZER;

pub(crate) const AMI_124: &str =
    "/aws/service/eks/optimized-ami/1.24/amazon-linux-2/recommended/image_id";
pub(crate) const AMI_125: &str =
    "/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id";

pub(crate) fn node_template(name: &str, ami: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: {name}
spec:
  amiSelector:
    aws::ids: {ami}
  subnetSelector:
    alpha.eksctl.io/cluster-name: my-cluster
  securityGroupSelector:
    kubernetes.io/cluster/my-cluster: owned
  tags:
    managed-by: \"karpenter\"
    intent: \"apps\"
"
    )
}

pub(crate) const PROVISIONER_AND_INFLATE: &str = "apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  providerRef:
    name: oldnode
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
  limits:
    resources:
      cpu: \"1000\"
      memory: 1000Gi
  consolidation:
    enabled: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 1
  selector:
    matchLabels:
      app: inflate
  template:
    metadata:
      labels:
        app: inflate
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources:
          requests:
            cpu: 1
      nodeSelector:
        eks-immersion-team: my-team
";

/// The controller's provisioner, played by this tool (`provision --watch`). It is not an
/// operator: it holds its own lease, beside an operator's `drift replace`.
pub(crate) fn stand_in_controller(walk: &Walk) -> std::process::Child {
    walk.spawn(&[
        "karpenter",
        "provision",
        "--watch",
        "--yes",
        "--force",
        "--lease-namespace",
        "default",
    ])
}

/// A v0.27 controller (pinned to a system node) and its settings, as the walkthrough has.
pub(crate) fn install_controller(walk: &Walk) {
    walk.apply(
        "system-node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: system-0\n  labels:\n    role: system\nstatus:\n  capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n",
    );
    walk.ok(&["create", "namespace", "karpenter"]);
    walk.apply(
        "controller.yaml",
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: karpenter-global-settings
  namespace: karpenter
data:
  aws.clusterName: my-cluster
  aws.defaultInstanceProfile: KarpenterNodeInstanceProfile-my-cluster
  featureGates.driftEnabled: \"false\"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: karpenter
  namespace: karpenter
  labels:
    app.kubernetes.io/name: karpenter
    app.kubernetes.io/version: 0.27.6
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: karpenter}
  template:
    metadata:
      labels: {app.kubernetes.io/name: karpenter}
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector: {role: system}
      containers:
      - name: controller
        image: public.ecr.aws/karpenter/controller:v0.27.6
        resources: {requests: {cpu: 100m}}
",
    );
    walk.eventually(30, "the controller ready", || {
        let d = walk.json(&[
            "get",
            "deployment",
            "-n",
            "karpenter",
            "karpenter",
            "-o",
            "json",
        ]);
        (d["status"]["readyReplicas"].as_i64() == Some(1)).then_some(())
    });
}

/// The `karpenter` namespace and a v0.2x controller's `karpenter-global-settings` naming the
/// default instance profile (what `drift replace` launches v1alpha5 replacements with).
const PROFILE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karpenter\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: karpenter-global-settings\n  namespace: karpenter\ndata:\n  aws.defaultInstanceProfile: KarpenterNodeInstanceProfile-my-cluster\n";

pub(crate) fn drift_enabled(walk: &Walk) -> String {
    let cm = walk.json(&[
        "get",
        "configmap",
        "-n",
        "karpenter",
        "karpenter-global-settings",
        "-o",
        "json",
    ]);
    cm["data"]["featureGates.driftEnabled"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Every instance this tool ever launched, with its state and image.
pub(crate) fn tool_instances(walk: &Walk) -> Vec<(String, String, String)> {
    walk.moto
        .cloud()
        .describe_instances(&InstanceQuery::Filters(vec![Filter::new(
            "tag:kubectl-karpenter.io/launched-by",
            ["kubectl-karpenter"],
        )]))
        .unwrap()
        .into_iter()
        .map(|i| (i.id, i.state, i.image_id))
        .collect()
}

pub(crate) fn team_nodes(walk: &Walk) -> Vec<Value> {
    walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"])
}

/// The team nodes once they number `n`. A Node deleted right after its instance was terminated
/// can be re-registered for a moment by a kubelet working from a stale instance list (the test
/// cluster's, like a real one); it goes again once the kubelet sees the instance gone.
pub(crate) fn settle_team_nodes(walk: &Walk, n: usize) -> Vec<Value> {
    let mut last = Vec::new();
    let settled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        walk.eventually(30, &format!("{n} team node(s)"), || {
            let nodes = team_nodes(walk);
            last = nodes
                .iter()
                .map(|n| n["metadata"]["name"].as_str().unwrap_or("?").to_string())
                .collect();
            (nodes.len() == n).then_some(nodes)
        })
    }));
    settled.unwrap_or_else(|_| {
        panic!(
            "{n} team node(s) expected, still {last:?}; instances: {:?}",
            tool_instances(walk)
        )
    })
}

pub(crate) fn image_of(walk: &Walk, node: &Value) -> String {
    let provider = node["spec"]["providerID"].as_str().unwrap();
    let id = provider.rsplit('/').next().unwrap();
    tool_instances(walk)
        .into_iter()
        .find(|(i, _, _)| i == id)
        .map(|(_, _, image)| image)
        .unwrap_or_default()
}

/// The walkthrough's first half: a node on the 1.24 AMI running `inflate`.
pub(crate) fn old_node(walk: &Walk, old: &str) -> String {
    walk.apply("oldnode.yaml", &node_template("oldnode", old));
    walk.apply("provisioner.yaml", PROVISIONER_AND_INFLATE);
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait", "--force"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let nodes = team_nodes(walk);
    assert_eq!(nodes.len(), 1);
    assert_eq!(image_of(walk, &nodes[0]), old, "the node runs the 1.24 AMI");
    nodes[0]["metadata"]["name"].as_str().unwrap().to_string()
}

/// The template switched to the 1.25 AMI.
pub(crate) fn switch_to_new(walk: &Walk, new: &str) {
    walk.apply("newnode.yaml", &node_template("newnode", new));
    walk.ok(&[
        "patch",
        "provisioner",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"providerRef":{"name":"newnode"}}}"#,
    ]);
}

#[test]
fn walkthrough_000_enable_drift_check_replace_disable() {
    let walk = Walk::with("walkthrough-000", true, "crds/v1alpha5", |_| Vec::new());
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    install_controller(&walk);

    let out = walk.run(&["karpenter", "enable-drift", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(drift_enabled(&walk), "true");
    let d = walk.json(&[
        "get",
        "deployment",
        "-n",
        "karpenter",
        "karpenter",
        "-o",
        "json",
    ]);
    assert!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .is_string(),
        "the controller was restarted"
    );

    let old_name = old_node(&walk, &old);
    switch_to_new(&walk, &new);

    let check = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(
        check.code, 1,
        "drift found: {}\n{}",
        check.stdout, check.stderr
    );
    assert!(check.stdout.contains(&old_name), "{}", check.stdout);
    assert!(check.stdout.contains("AMIDrift"), "{}", check.stdout);
    assert!(
        check.stdout.contains(&old) && check.stdout.contains(&new),
        "{}",
        check.stdout
    );

    // Watch the node list while replacing, like the walkthrough's `kubectl get nodes`.
    let mut watch = walk.spawn(&["get", "nodes", "-l", "eks-immersion-team=my-team", "-w"]);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes", "--force"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    std::thread::sleep(Duration::from_millis(500));
    let _ = watch.kill();
    let seen = String::from_utf8_lossy(&watch.wait_with_output().unwrap().stdout).into_owned();
    assert!(
        seen.lines()
            .any(|l| l.contains(&old_name) && l.contains("Ready,SchedulingDisabled")),
        "the old node was cordoned first:\n{seen}"
    );

    let nodes = settle_team_nodes(&walk, 1);
    let new_name = nodes[0]["metadata"]["name"].as_str().unwrap().to_string();
    assert_ne!(new_name, old_name);
    assert_eq!(
        image_of(&walk, &nodes[0]),
        new,
        "the new node runs the 1.25 AMI"
    );
    walk.eventually(30, "inflate Running on the new node", || {
        (running_on(&walk, &new_name) == 1).then_some(())
    });
    let states: Vec<(String, String, String)> = tool_instances(&walk);
    assert_eq!(
        states.len(),
        2,
        "exactly one replacement launched: {states:?}"
    );
    assert!(
        states
            .iter()
            .any(|(_, s, image)| image == &old && (s == "terminated" || s == "shutting-down")),
        "the old instance is gone: {states:?}"
    );
    let again = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(again.code, 0, "nothing drifted any more: {}", again.stdout);

    let out = walk.run(&["karpenter", "disable-drift", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(drift_enabled(&walk), "false");
}

#[test]
fn blocked_by_pdb_and_do_not_evict_then_killed_after_launch_resumes() {
    let walk = Walk::with("replace-faults", true, "crds/v1alpha5", |_| Vec::new());
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.apply("profile.yaml", PROFILE);
    let old_name = old_node(&walk, &old);
    switch_to_new(&walk, &new);
    let cordoned = |walk: &Walk| {
        walk.json(&["get", "node", &old_name, "-o", "json"])["spec"]["unschedulable"] == true
    };

    // A PDB that allows no disruption: blocked, named, nothing changed.
    inflate_pdb_at_zero(&walk);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes"]);
    assert_eq!(out.code, 1, "blocked: {}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("blocked")
            && out
                .stdout
                .contains("PodDisruptionBudget default/inflate-pdb"),
        "{}",
        out.stdout
    );
    assert!(!cordoned(&walk), "nothing changed");
    assert_eq!(tool_instances(&walk).len(), 1, "nothing launched");
    // Without --yes and without a terminal: nothing to ask (nothing can start), so the report
    // and the exit code say why — usable as a CI gate.
    let out = walk.run(&["karpenter", "drift", "replace", "-o", "json"]);
    assert_eq!(
        out.code, 1,
        "{}
{}",
        out.stdout, out.stderr
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["blocked"], 1, "{doc}");
    walk.ok(&["delete", "pdb", "inflate-pdb"]);

    // A pod annotated do-not-evict (v1alpha5) blocks too, named.
    let pod = walk.items(&["get", "pods", "-l", "app=inflate"])[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    walk.ok(&["annotate", "pod", &pod, "karpenter.sh/do-not-evict=true"]);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!("default/{pod}")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("do-not-evict"), "{}", out.stdout);
    assert!(!cordoned(&walk));
    walk.ok(&["annotate", "pod", &pod, "karpenter.sh/do-not-evict-"]);

    // Killed right after launching the replacement: the re-run finds it (registered by now, or
    // in flight), launches nothing more, and finishes the replacement.
    kill_at_and_resume(&walk, &old_name, "launched NodeClaim");
}

/// A PodDisruptionBudget `inflate-pdb` over the one `inflate` pod that allows no disruption,
/// once the cluster's disruption controller has counted it.
pub(crate) fn inflate_pdb_at_zero(walk: &Walk) {
    walk.apply(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: inflate-pdb\nspec:\n  maxUnavailable: 0\n  selector:\n    matchLabels: {app: inflate}\n",
    );
    walk.eventually(30, "the PDB's status", || {
        let p = walk.json(&["get", "pdb", "inflate-pdb", "-o", "json"]);
        (p["status"]["disruptionsAllowed"].as_i64() == Some(0)
            && p["status"]["expectedPods"].as_i64() == Some(1))
        .then_some(())
    });
}

/// Runs `args`, SIGKILLs it when its progress (stderr) prints `milestone`.
pub(crate) fn kill_at(walk: &Walk, args: &[&str], milestone: &str) {
    let mut child = walk.spawn(args);
    let stderr = child.stderr.take().unwrap();
    let mut killed = false;
    for line in BufReader::new(stderr).lines() {
        if line.unwrap().contains(milestone) {
            Command::new("kill")
                .args(["-KILL", &child.id().to_string()])
                .status()
                .unwrap();
            killed = true;
            break;
        }
    }
    let _ = child.wait();
    assert!(killed, "the run reached {milestone:?}");
}

/// Runs `drift replace`, SIGKILLs it when its progress prints `milestone`, re-runs it, and
/// checks the outcome is as if nothing had happened: one replacement, the old node and its
/// instance gone, the pod Running on the new node.
pub(crate) fn kill_at_and_resume(walk: &Walk, old_name: &str, milestone: &str) {
    let before = tool_instances(walk).len();
    kill_at(walk, &["karpenter", "drift", "replace", "--yes"], milestone);
    if milestone == "launched NodeClaim" {
        // The replacement registers before the re-run reads the cluster (whether or not the
        // killed run recorded it): it must be adopted and labelled, not taken as spare room.
        walk.eventually(60, "the replacement's Node", || {
            (team_nodes(walk).len() == 2).then_some(())
        });
    }
    let resumed = walk.run(&["karpenter", "drift", "replace", "--yes"]);
    assert_eq!(
        resumed.code, 0,
        "killed at {milestone:?}: {}\n{}",
        resumed.stdout, resumed.stderr
    );
    let all = tool_instances(walk);
    assert_eq!(
        all.len(),
        before + 1,
        "killed at {milestone:?}: exactly one replacement: {all:?}"
    );
    let nodes = settle_team_nodes(walk, 1);
    let new_name = nodes[0]["metadata"]["name"].as_str().unwrap().to_string();
    assert_ne!(new_name, old_name, "killed at {milestone:?}");
    // Labelled like any launched node (its type's labels), however the run was cut.
    walk.eventually(30, "the replacement's type labels", || {
        let node = walk.json(&["get", "node", &new_name, "-o", "json"]);
        node["metadata"]["labels"]["karpenter.k8s.aws/instance-category"]
            .as_str()
            .map(|_| ())
    });
    walk.eventually(30, "inflate Running on the new node", || {
        (running_on(walk, &new_name) == 1).then_some(())
    });
    let old_instance_gone = all
        .iter()
        .filter(|(id, _, _)| {
            nodes[0]["spec"]["providerID"]
                .as_str()
                .is_some_and(|p| !p.ends_with(id.as_str()))
        })
        .all(|(_, state, _)| state == "terminated" || state == "shutting-down");
    assert!(
        old_instance_gone,
        "killed at {milestone:?}: no orphaned instance: {all:?}"
    );
}

/// The run killed once its old node is drained, then re-run: no double launch, no lost pod, no
/// orphaned instance. Killed after the launch: `blocked_by_pdb_and_do_not_evict_then_killed_after_launch_resumes`;
/// every other recorded step is resumed against the fakes (`usecases::replace::tests::resume`)
/// and killed at random in `fault_soak`.
#[test]
fn killed_once_drained_resumes_without_a_second_replacement() {
    let walk = Walk::with("replace-kill-drained", true, "crds/v1alpha5", |_| {
        Vec::new()
    });
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.apply("profile.yaml", PROFILE);
    let old_name = old_node(&walk, &old);
    switch_to_new(&walk, &new);
    kill_at_and_resume(&walk, &old_name, "drained (");
}

#[test]
fn replacement_never_ready_is_rolled_back() {
    // Instances of the 1.25 AMI never join: the replacement never becomes Ready.
    let walk = Walk::with("replace-rollback", true, "crds/v1alpha5", |moto| {
        vec![moto.param(AMI_125)]
    });
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.apply("profile.yaml", PROFILE);
    let old_name = old_node(&walk, &old);
    switch_to_new(&walk, &new);
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--yes",
        "--ready-timeout",
        "5s",
        "-o",
        "json",
    ]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["kind"], "ReplacementReport");
    assert_eq!(doc["nodes"][0]["status"], "rolled-back", "{doc}");
    let node = walk.json(&["get", "node", &old_name, "-o", "json"]);
    assert_ne!(node["spec"]["unschedulable"], true, "uncordoned: {node}");
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        !taints.iter().any(
            |t| t["key"].as_str().unwrap_or("").starts_with("karpenter.sh/")
                || t["key"] == "node.kubernetes.io/unschedulable"
        ),
        "untainted: {taints:?}"
    );
    assert!(
        node["metadata"]["annotations"]["kubectl-karpenter.io/replacement"].is_null(),
        "the record is cleared"
    );
    let launched: Vec<(String, String, String)> = tool_instances(&walk);
    assert!(
        launched
            .iter()
            .filter(|(_, _, image)| image == &new)
            .all(|(_, s, _)| s == "terminated" || s == "shutting-down"),
        "what was launched is terminated: {launched:?}"
    );
    walk.eventually(10, "inflate still Running on the old node", || {
        (running_on(&walk, &old_name) == 1).then_some(())
    });
}

/// Narrows NodePool `default` (of [`one_pod_per_node`]) from category `c` to `m`: every node
/// it launched drifts (RequirementsDrifted).
pub(crate) fn narrow_to_category_m(walk: &Walk) {
    set_category(walk, "m");
}

/// Sets the instance category NodePool `default` (of [`one_pod_per_node`]) allows.
pub(crate) fn set_category(walk: &Walk, category: &str) {
    walk.ok(&[
        "patch",
        "nodepool",
        "default",
        "--type",
        "json",
        "-p",
        &format!(
            r#"[{{"op":"replace","path":"/spec/template/spec/requirements/0/values","value":["{category}"]}}]"#
        ),
    ]);
}

/// A NodePool of c 2xlarge on-demand nodes with one disruption budget, its EC2NodeClass, and
/// `replicas` pods of 6 CPU (one per node).
pub(crate) fn one_pod_per_node(budget: &str, replicas: usize) -> String {
    format!(
        "apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    expireAfter: Never
    budgets:
    - nodes: \"{budget}\"
  limits:
    cpu: \"1000\"
  template:
    metadata:
      labels:
        eks-immersion-team: my-team
    spec:
      nodeClassRef:
        name: default
      requirements:
      - {{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}}
      - {{key: karpenter.k8s.aws/instance-size, operator: In, values: [2xlarge]}}
      - {{key: kubernetes.io/arch, operator: In, values: [amd64]}}
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole-my-cluster
  securityGroupSelectorTerms:
  - tags: {{alpha.eksctl.io/cluster-name: my-cluster}}
  subnetSelectorTerms:
  - tags: {{alpha.eksctl.io/cluster-name: my-cluster}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: inflate}}
  template:
    metadata:
      labels: {{app: inflate}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {{requests: {{cpu: \"6\"}}}}
      nodeSelector: {{eks-immersion-team: my-team}}
"
    )
}

/// [`one_pod_per_node`] applied, its pods pending, and provisioned (`provision --yes --wait`).
fn provision_one_pod_per_node(walk: &Walk, budget: &str, replicas: usize) {
    walk.apply("pool.yaml", &one_pod_per_node(budget, replicas));
    walk.wait_unschedulable(replicas);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A walk (`test`) with one node provisioned by [`one_pod_per_node`] (budget `1`), settled: the
/// walk, the node's name and its instance id.
pub(crate) fn one_provisioned_node(test: &str) -> (Walk, String, String) {
    let walk = Walk::new_v1beta1(test);
    provision_one_pod_per_node(&walk, "1", 1);
    let nodes = settle_team_nodes(&walk, 1);
    let name = nodes[0]["metadata"]["name"].as_str().unwrap().to_string();
    let instance = nodes[0]["spec"]["providerID"]
        .as_str()
        .and_then(|p| p.rsplit('/').next())
        .unwrap()
        .to_string();
    (walk, name, instance)
}

/// docs/performance.md B6: four drifted nodes, a budget of `nodes: "2"` and `--max-parallel 10`: two at
/// a time, the next starting as one finishes — the budget kept full, never exceeded.
#[test]
fn budget_of_two_is_kept_full_and_never_exceeded() {
    let walk = Walk::new_v1beta1("replace-budget");
    provision_one_pod_per_node(&walk, "2", 4);
    assert_eq!(team_nodes(&walk).len(), 4);
    // Freshly launched nodes satisfy their pool: nothing drifted.
    let fresh = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(fresh.code, 0, "{}\n{}", fresh.stdout, fresh.stderr);
    // What-if: the narrowed pool from a file, not applied — every node would drift, two at a
    // time at the budget of 2, and the cluster is left as it was.
    let narrowed = crate::support::write_temp(
        "what-if-narrowed.yaml",
        one_pod_per_node("2", 4)
            .replace("values: [c]", "values: [m]")
            .as_bytes(),
    );
    let what_if = walk.run(&[
        "karpenter",
        "drift",
        "check",
        "-f",
        &narrowed.to_string_lossy(),
    ]);
    assert_eq!(what_if.code, 1, "{}\n{}", what_if.stdout, what_if.stderr);
    assert_eq!(
        what_if.stdout.matches("RequirementsDrifted").count(),
        4,
        "{}",
        what_if.stdout
    );
    assert!(
        what_if.stdout.contains(
            "what-if: NodePool default: 4 of 4 node(s) would drift; its Drifted budget replaces 2 at a time: 2 round(s) of replacement"
        ),
        "{}",
        what_if.stdout
    );
    let unchanged = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(
        unchanged.code, 0,
        "{}\n{}",
        unchanged.stdout, unchanged.stderr
    );
    // Narrow the requirements: every node drifts (RequirementsDrifted).
    narrow_to_category_m(&walk);
    let check = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert_eq!(
        check.stdout.matches("RequirementsDrifted").count(),
        4,
        "{}",
        check.stdout
    );

    let mut watch = walk.spawn(&[
        "get",
        "nodes",
        "-l",
        "eks-immersion-team=my-team",
        "-w",
        "--output-watch-events",
        "--no-headers",
    ]);
    let started = std::time::Instant::now();
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--yes",
        "--max-parallel",
        "10",
        "-o",
        "json",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    std::thread::sleep(Duration::from_millis(500));
    let _ = watch.kill();
    let seen = String::from_utf8_lossy(&watch.wait_with_output().unwrap().stdout).into_owned();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 4, "{doc}");
    // Replay the watch: how many nodes were disrupted (cordoned, not yet deleted) at once.
    let mut disrupted = std::collections::BTreeSet::new();
    let mut peak = 0;
    for line in seen.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 3 {
            continue;
        }
        let (event, name, status) = (cols[0], cols[1], cols[2]);
        if event == "DELETED" || !status.contains("SchedulingDisabled") {
            disrupted.remove(name);
        } else {
            disrupted.insert(name.to_string());
        }
        peak = peak.max(disrupted.len());
    }
    assert_eq!(
        peak, 2,
        "the budget is used in full and never exceeded:\n{seen}"
    );
    eprintln!("B6: 4 drifted nodes, budget 2: peak 2 disrupted at once, {seconds:.1} s in all");
    let nodes = settle_team_nodes(&walk, 4);
    assert!(nodes.iter().all(
        |n| n["metadata"]["labels"]["karpenter.k8s.aws/instance-category"] != "c"
            || n["metadata"]["labels"]["node.kubernetes.io/instance-type"]
                .as_str()
                .is_some_and(|t| t.starts_with('m'))
    ));
}

/// Makes a node look Karpenter-launched: its finalizer, and a v1beta1 NodeClaim pointing at it
/// (status is a subresource, patched in after the create).
pub(crate) fn hand_to_karpenter(walk: &Walk, node: &Value, claim: &str) {
    let name = node["metadata"]["name"].as_str().unwrap();
    let provider_id = node["spec"]["providerID"].as_str().unwrap();
    walk.ok(&[
        "patch",
        "node",
        name,
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"metadata":{{"finalizers":["{TERMINATION_FINALIZER}"]}}}}"#),
    ]);
    walk.apply(
        &format!("{claim}.yaml"),
        &format!(
            "apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: {claim}
  labels: {{karpenter.sh/nodepool: default}}
  finalizers: [{TERMINATION_FINALIZER}]
spec:
  nodeClassRef: {{name: default}}
  requirements:
  - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
"
        ),
    );
    walk.ok(&[
        "patch",
        "nodeclaim",
        claim,
        "--subresource=status",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"status":{{"nodeName":"{name}","providerID":"{provider_id}"}}}}"#),
    ]);
}

/// `drift replace --via-controller` (docs/spec.md §6) with a budget of one: the controller's nodes
/// are handed over one at a time — the NodeClaim deleted, the test cluster's emulation of
/// Karpenter's termination controller drains and terminates the node, a provisioner (this
/// tool's `provision --watch`, standing in for the controller's) launches for the pods that
/// went pending — and the next only once the first is replaced. Without a controller it
/// refuses; nodes no NodeClaim owns are reported, not deleted.
#[test]
fn via_controller_hands_over_one_budget_at_a_time() {
    let walk = Walk::new_v1beta1("replace-via-controller");
    provision_one_pod_per_node(&walk, "1", 2);
    narrow_to_category_m(&walk);
    let old = team_nodes(&walk);
    assert_eq!(old.len(), 2);

    // No controller: nothing would replace what is deleted.
    let out = walk.run(&["karpenter", "drift", "replace", "--via-controller", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no Karpenter controller is running"),
        "{}",
        out.stderr
    );
    install_controller(&walk);
    // Nodes this tool launched are not the controller's to replace.
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--via-controller",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["blocked"], 2, "{doc}");
    assert!(doc["nodes"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("no NodeClaim owns this node"));

    for (i, node) in old.iter().enumerate() {
        hand_to_karpenter(&walk, node, &format!("default-via0{i}"));
    }
    // Without --via-controller the running controller makes it refuse, pointing here.
    let out = walk.run(&["karpenter", "drift", "replace", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("--via-controller"), "{}", out.stderr);
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--via-controller",
        "--dry-run",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches("planned").count(), 1, "{}", out.stdout);
    assert_eq!(out.stdout.matches("queued").count(), 1, "{}", out.stdout);

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
    Command::new("kill")
        .args(["-INT", &provisioner.id().to_string()])
        .status()
        .unwrap();
    let _ = provisioner.wait();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 2, "{doc}");
    eprintln!("{}", out.stderr);
    // One at a time: the second NodeClaim is deleted only once the first node is replaced.
    let lines: Vec<&str> = out.stderr.lines().collect();
    let position = |needle: &str| lines.iter().position(|l| l.contains(needle));
    let first_done = position("its pods are placed again").expect("a node replaced");
    let deletions: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("deleted NodeClaim default-via0"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(deletions.len(), 2, "{}", out.stderr);
    assert!(
        deletions[0] < first_done && first_done < deletions[1],
        "budget 1: {}",
        out.stderr
    );
    // The controller's work: NodeClaims and old nodes gone, old instances terminated; the pods
    // Running on new nodes.
    assert!(walk.items(&["get", "nodeclaims"]).is_empty());
    let old_names: Vec<&str> = old
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    let now = settle_team_nodes(&walk, 2);
    assert!(now
        .iter()
        .all(|n| !old_names.contains(&n["metadata"]["name"].as_str().unwrap())));
    let old_ids: Vec<&str> = old
        .iter()
        .map(|n| {
            n["spec"]["providerID"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
        })
        .collect();
    let instances = tool_instances(&walk);
    assert!(
        instances
            .iter()
            .filter(|(id, _, _)| old_ids.contains(&id.as_str()))
            .all(|(_, state, _)| state == "terminated" || state == "shutting-down"),
        "{instances:?}"
    );
    walk.eventually(30, "inflate Running on the new nodes", || {
        now.iter()
            .all(|n| running_on(&walk, n["metadata"]["name"].as_str().unwrap()) == 1)
            .then_some(())
    });
}

/// Nodes Karpenter launched (a NodeClaim and its finalizer), replaced by the tool itself with
/// the controller scaled away (none runs here): the NodeClaims go with their nodes — nothing is
/// left Terminating or orphaned to hold the budget.
#[test]
fn direct_replace_of_karpenter_nodes_removes_their_nodeclaims() {
    let walk = Walk::new_v1beta1("replace-karpenter-nodes");
    provision_one_pod_per_node(&walk, "1", 2);
    let old = team_nodes(&walk);
    for (i, node) in old.iter().enumerate() {
        hand_to_karpenter(&walk, node, &format!("default-own0{i}"));
    }
    narrow_to_category_m(&walk);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 2, "{doc}");
    walk.eventually(30, "the NodeClaims gone", || {
        walk.items(&["get", "nodeclaims"]).is_empty().then_some(())
    });
    let now = settle_team_nodes(&walk, 2);
    let old_names: Vec<&str> = old
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(now
        .iter()
        .all(|n| !old_names.contains(&n["metadata"]["name"].as_str().unwrap())));
}

/// A PDB allowing one pod down at a time over pods on two drifted nodes replaced together:
/// while the first node's pod restarts on its replacement the budget is at zero, and the second
/// node's eviction (refused, 429) is retried until it is not — both replaced, no PDB violated.
/// (A node that reaches its start while such a budget is at zero waits the same way, up to
/// `--timeout`, instead of being reported blocked.)
#[test]
fn a_pdb_at_zero_during_the_rollout_is_waited_for_not_violated() {
    let walk = Walk::new_v1beta1("replace-pdb-dip");
    provision_one_pod_per_node(&walk, "2", 2);
    walk.apply(
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: inflate-pdb\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels: {app: inflate}\n",
    );
    walk.eventually(30, "the PDB allows one", || {
        let p = walk.json(&["get", "pdb", "inflate-pdb", "-o", "json"]);
        (p["status"]["disruptionsAllowed"].as_i64() == Some(1)).then_some(())
    });
    narrow_to_category_m(&walk);
    // Two at a time: the second node starts while the first one's pod is down.
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--yes",
        "--max-parallel",
        "2",
        "-o",
        "json",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 2, "{doc}");
    settle_team_nodes(&walk, 2);
}

/// `core v1.14.1: node/termination/suite_test.go` "should wait for volume attachments",
/// through the binary on the loopback cluster + moto: the old node has a VolumeAttachment
/// (`storage.k8s.io/v1`, as the CSI attacher leaves it until the volume detaches); `drift
/// replace --yes` drains it, records it drained, and keeps its instance running while the
/// attachment is there; once it is deleted the instance terminates and the node goes.
#[test]
fn drift_replace_terminates_the_old_instance_only_once_its_volume_attachment_is_gone() {
    let (walk, old, instance) = one_provisioned_node("replace-volume-detach");
    walk.apply(
        "attachment.yaml",
        &format!(
            "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata:\n  name: csi-data\nspec:\n  attacher: ebs.csi.aws.com\n  nodeName: {old}\n  source:\n    persistentVolumeName: pv-data\n"
        ),
    );
    narrow_to_category_m(&walk);
    let replace = walk.spawn(&[
        "karpenter",
        "drift",
        "replace",
        "--yes",
        "--timeout",
        "300s",
    ]);
    walk.eventually(240, "the old node drained (recorded)", || {
        let n = walk.json(&["get", "node", &old, "-o", "json"]);
        n["metadata"]["annotations"][kubectl_karpenter::model::labels::REPLACEMENT]
            .as_str()
            .is_some_and(|r| r.contains("\"drained\""))
            .then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    let state = |walk: &Walk| {
        tool_instances(walk)
            .into_iter()
            .find(|(id, _, _)| *id == instance)
            .map(|(_, s, _)| s)
            .unwrap_or_default()
    };
    assert_eq!(state(&walk), "running", "still running while attached");
    assert!(
        walk.run(&["get", "node", &old]).code == 0,
        "the old node is still there"
    );
    walk.ok(&["delete", "volumeattachment", "csi-data"]);
    let out = replace.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("waiting for volume attachment(s) csi-data"),
        "{stderr}"
    );
    assert!(
        matches!(state(&walk).as_str(), "shutting-down" | "terminated"),
        "{}",
        state(&walk)
    );
    settle_team_nodes(&walk, 1);
}
