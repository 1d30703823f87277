//! `consolidate --yes` carrying out expiration and a multi-node consolidation on the loopback
//! cluster + moto, with v1 (Karpenter v1.x) objects and no controller running (docs/consolidation.md
//! "Doing it"): an expired NodeClaim's node goes whatever its pool's budget (v1 expiration is
//! forceful), its pod's replacement launched and Ready before it drains; then two under-used
//! nodes are replaced as ONE command by one cheaper node — the run killed once they are marked
//! and run again, nothing launched twice, no pod left pending.

use serde_json::Value;

use crate::drift_live::{kill_at, settle_team_nodes, team_nodes, tool_instances};
use crate::provision_live::Walk;

/// A v1 NodePool of c xlarge/2xlarge on-demand nodes, consolidating at once, with a budget of
/// zero; its EC2NodeClass; `inflate`, three pods of 7 CPU (one per 2xlarge node).
pub(crate) const CLUSTER: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
    - nodes: \"0\"
  limits:
    cpu: \"1000\"
  template:
    metadata:
      labels:
        eks-immersion-team: my-team
    spec:
      expireAfter: Never
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [xlarge, 2xlarge]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
  - alias: al2@latest
  role: KarpenterNodeRole-my-cluster
  securityGroupSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
  subnetSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 3
  selector:
    matchLabels: {app: inflate}
  template:
    metadata:
      labels: {app: inflate}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {requests: {cpu: \"7\"}}
      nodeSelector: {eks-immersion-team: my-team}
";

/// A Deployment `name` of one pod of 1 CPU on the team's nodes.
fn small(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: small
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {{requests: {{cpu: \"1\"}}}}
      nodeSelector: {{eks-immersion-team: my-team}}
"
    )
}

fn name_of(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap().to_string()
}

/// The node the one pod of `app` runs on, once it runs.
fn running_on(walk: &Walk, app: &str) -> String {
    walk.eventually(30, &format!("{app} Running"), || {
        walk.items(&["get", "pods", "-l", &format!("app={app}")])
            .into_iter()
            .find(|p| {
                p["status"]["phase"] == "Running" && p["metadata"]["deletionTimestamp"].is_null()
            })
            .and_then(|p| p["spec"]["nodeName"].as_str().map(str::to_string))
    })
}

/// Makes `node` a Karpenter node: a v1 NodeClaim `claim` (initialized, expiring after
/// `expire_after`) naming it, and Karpenter's termination finalizer.
fn hand_to_karpenter_v1(walk: &Walk, node: &Value, claim: &str, expire_after: &str) {
    let name = name_of(node);
    let provider_id = node["spec"]["providerID"].as_str().unwrap();
    walk.ok(&[
        "patch",
        "node",
        &name,
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":["karpenter.sh/termination"]}}"#,
    ]);
    walk.apply(
        &format!("{claim}.yaml"),
        &format!(
            "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: {claim}
  labels: {{karpenter.sh/nodepool: default}}
  finalizers: [karpenter.sh/termination]
spec:
  expireAfter: {expire_after}
  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
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
        &format!(
            r#"{{"status":{{"nodeName":"{name}","providerID":"{provider_id}","conditions":[{{"type":"Initialized","status":"True","reason":"Initialized","message":"","lastTransitionTime":"2024-01-01T00:00:00Z"}}]}}}}"#
        ),
    ]);
}

#[test]
fn consolidate_yes_expires_a_node_then_replaces_two_nodes_as_one_command() {
    let walk = Walk::with("consolidate-commands", true, "crds/v1", |_| Vec::new());
    walk.apply("cluster.yaml", CLUSTER);
    walk.wait_unschedulable(3);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let mut nodes = team_nodes(&walk);
    assert_eq!(nodes.len(), 3, "one 2xlarge node per inflate pod");
    nodes.sort_by_key(name_of);
    let [n0, n1, n2] = [0, 1, 2].map(|i| name_of(&nodes[i]));

    // One inflate pod (7 CPU) on n0, one small pod on each of n1 and n2.
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "0"]);
    walk.eventually(30, "inflate gone", || {
        walk.items(&["get", "pods", "-l", "app=inflate"])
            .is_empty()
            .then_some(())
    });
    walk.ok(&["cordon", &n1, &n2]);
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "1"]);
    assert_eq!(running_on(&walk, "inflate"), n0);
    walk.ok(&["uncordon", &n1]);
    walk.apply("small-a.yaml", &small("small-a"));
    assert_eq!(running_on(&walk, "small-a"), n1);
    walk.ok(&["cordon", &n1]);
    walk.ok(&["uncordon", &n2]);
    walk.apply("small-b.yaml", &small("small-b"));
    assert_eq!(running_on(&walk, "small-b"), n2);
    walk.ok(&["uncordon", &n1]);

    // n0's NodeClaim expires after a second; the others never.
    hand_to_karpenter_v1(&walk, &nodes[0], "default-exp00", "1s");
    hand_to_karpenter_v1(&walk, &nodes[1], "default-mul01", "Never");
    hand_to_karpenter_v1(&walk, &nodes[2], "default-mul02", "Never");
    std::thread::sleep(std::time::Duration::from_secs(2));

    // Found: n0 expires (no budget applies); n1 and n2 wait for the Underutilized budget.
    let report = walk.run(&["karpenter", "consolidate", "-o", "json"]);
    assert_eq!(report.code, 1, "{}\n{}", report.stdout, report.stderr);
    let doc: Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(doc["actions"][0]["method"], "expiration", "{doc}");
    assert_eq!(doc["actions"][0]["nodes"][0], n0.as_str(), "{doc}");

    // --yes: n0 replaced (its pod's node launched and Ready first), the budget of zero kept
    // for the others.
    let before = tool_instances(&walk).len();
    let out = walk.run(&["karpenter", "consolidate", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 1, "{doc}");
    assert_eq!(doc["nodes"][0]["node"], n0.as_str(), "{doc}");
    assert!(
        doc["nodes"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("expiration"),
        "{doc}"
    );
    assert_eq!(tool_instances(&walk).len(), before + 1);
    settle_team_nodes(&walk, 3);
    let inflate_on = running_on(&walk, "inflate");
    assert!(![&n0, &n1, &n2].contains(&&inflate_on), "{inflate_on}");

    // The budget opened: n1 and n2 go as one command, replaced by one cheaper node. Killed once
    // they are marked, then run again: one launch in all.
    walk.ok(&[
        "patch",
        "nodepool",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"disruption":{"budgets":[{"nodes":"100%"}]}}}"#,
    ]);
    let before = tool_instances(&walk).len();
    kill_at(
        &walk,
        &["karpenter", "consolidate", "--yes"],
        "tainted and cordoned",
    );
    let out = walk.run(&["karpenter", "consolidate", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 2, "{doc}");
    assert_eq!(
        tool_instances(&walk).len(),
        before + 1,
        "one replacement for both, launched once"
    );
    let now = settle_team_nodes(&walk, 2);
    assert!(now.iter().all(|n| ![&n1, &n2].contains(&&name_of(n))));
    let (a, b) = (running_on(&walk, "small-a"), running_on(&walk, "small-b"));
    assert_eq!(a, b, "both small pods on the one new node");
    let pending: Vec<String> = walk
        .items(&["get", "pods"])
        .iter()
        .filter(|p| p["spec"]["nodeName"].is_null())
        .map(name_of)
        .collect();
    assert_eq!(pending, Vec::<String>::new());
}
