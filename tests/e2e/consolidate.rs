//! `consolidate` from manifests (docs/spec.md §9): the example cluster's empty node goes by
//! emptiness and one of its two half-used nodes by single-node consolidation; table, document
//! and exit codes. And live on the loopback cluster + moto: `consolidate --yes` carrying the
//! decisions out through the replace pipeline, resumed after a kill, refused beside a controller.

use serde_json::Value;

use crate::drift_live::{
    hand_to_karpenter, install_controller, kill_at, one_pod_per_node, settle_team_nodes,
    team_nodes, tool_instances,
};
use crate::provision_live::Walk;
use crate::support::{karpenter, root, write_temp};

const EXAMPLE: &str = "examples/consolidate/cluster.yaml";
const NOW: &str = "2024-06-24T12:00:00Z";

#[test]
fn the_example_cluster_loses_its_empty_node_and_one_half_used_node() {
    let file = root().join(EXAMPLE);
    let file = file.to_string_lossy();
    let table = karpenter(&["consolidate", "-f", &file, "--now", NOW], b"");
    assert_eq!(table.code, 1, "actions found: exit 1\n{}", table.stderr);
    assert!(table.stdout.contains("emptiness"), "{}", table.stdout);
    assert!(
        table.stdout.contains("total savings $0.3840/hour"),
        "{}",
        table.stdout
    );

    let json = karpenter(
        &["consolidate", "-f", &file, "--now", NOW, "-o", "json"],
        b"",
    );
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["kind"], "ConsolidationReport");
    assert_eq!(doc["now"], NOW);
    assert_eq!(action_methods(&doc), ["emptiness", "single"]);

    // Only the node asked about; an unknown node or a bad --now is bad input.
    let one = karpenter(&["consolidate", "-f", &file, "--now", NOW, "empty"], b"");
    assert_eq!(one.code, 1, "{}", one.stderr);
    assert!(!one.stdout.contains("under-used"), "{}", one.stdout);
    let unknown = karpenter(&["consolidate", "-f", &file, "--now", NOW, "nope"], b"");
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    let bad = karpenter(&["consolidate", "-f", &file, "--now", "yesterday"], b"");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
}

/// The method of each action of a `ConsolidationReport`, in order.
fn action_methods(doc: &Value) -> Vec<&str> {
    doc["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["method"].as_str().unwrap())
        .collect()
}

/// The example cluster with its NodePool's `Ready` False: Karpenter still disrupts the pool's
/// nodes (core v1.14.1 `disruption/helpers.go` `BuildNodePoolMap`) but launches nothing for it
/// (`provisioner.go` `NewScheduler`): the same two deletes, the warning says so.
#[test]
fn a_not_ready_pools_nodes_are_still_consolidated() {
    let example = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let (pool, rest) = example.split_once('\n').unwrap();
    let status = r#", "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "NodeClassNotReady", "message": "no subnets"}]}}"#;
    let pool = format!("{}{status}", pool.strip_suffix('}').unwrap());
    let file = write_temp("not-ready-pool.yaml", format!("{pool}\n{rest}").as_bytes());
    let file = file.to_string_lossy();
    let run = karpenter(
        &["consolidate", "-f", &file, "--now", NOW, "-o", "json"],
        b"",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("NodePool/default: not Ready (Ready=False, NodeClassNotReady: no subnets): Karpenter launches nothing for it; its nodes are still disruption candidates"),
        "{}",
        run.stderr
    );
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        action_methods(&doc),
        ["emptiness", "single"],
        "{}",
        run.stdout
    );
}

/// `drift replace`'s pool (c 2xlarge on-demand, two pods of 6 CPU: one node each, a budget of one
/// node) consolidating under-used nodes, and allowed c large as well.
fn pool() -> String {
    let pool = one_pod_per_node("1", 2)
        .replace(
            "consolidationPolicy: WhenEmpty\n    consolidateAfter: 10m",
            "consolidationPolicy: WhenUnderutilized",
        )
        .replace("values: [2xlarge]", "values: [large, 2xlarge]");
    assert!(pool.contains("WhenUnderutilized") && pool.contains("[large, 2xlarge]"));
    pool
}

/// One pod of 1 CPU, behind a PDB that allows no disruption.
pub(crate) const SMALL: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: small
spec:
  replicas: 1
  selector:
    matchLabels: {app: small}
  template:
    metadata:
      labels: {app: small}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: small
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {requests: {cpu: \"1\"}}
      nodeSelector: {eks-immersion-team: my-team}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: small
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: small}
";

fn name_of(v: &Value) -> String {
    v["metadata"]["name"].as_str().unwrap().to_string()
}

fn pending_pods(walk: &Walk) -> Vec<String> {
    walk.items(&["get", "pods"])
        .iter()
        .filter(|p| p["spec"]["nodeName"].is_null())
        .map(name_of)
        .collect()
}

/// Issue #14's "Must show", live (the loopback cluster + moto, no controller running): two
/// Karpenter nodes (NodeClaims), one emptied and one left with a small pod behind a PDB at zero.
/// `consolidate` finds both, naming the PDB; `consolidate --yes` deletes the empty node and
/// leaves the guarded one; with the PDB gone, a run killed once the node is cordoned and run
/// again replaces it by the one cheaper NodeClaim chosen (c large) — launched once, no pod left
/// pending, the budget of one never exceeded.
#[test]
fn consolidate_yes_deletes_the_empty_node_and_replaces_the_under_used_one() {
    let walk = Walk::new_v1beta1("consolidate-live");
    walk.apply("pool.yaml", &pool());
    walk.wait_unschedulable(2);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let nodes = team_nodes(&walk);
    assert_eq!(nodes.len(), 2);
    for (i, node) in nodes.iter().enumerate() {
        hand_to_karpenter(&walk, node, &format!("default-cons{i}"));
    }
    // inflate goes, `small` lands on one of the two nodes: the other is empty.
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "0"]);
    walk.apply("small.yaml", SMALL);
    let busy = walk.eventually(30, "small Running", || {
        walk.items(&["get", "pods", "-l", "app=small"])
            .first()
            .filter(|p| p["status"]["phase"] == "Running")
            .and_then(|p| p["spec"]["nodeName"].as_str().map(str::to_string))
    });
    walk.eventually(30, "inflate gone", || {
        walk.items(&["get", "pods", "-l", "app=inflate"])
            .is_empty()
            .then_some(())
    });
    let empty = nodes.iter().map(name_of).find(|n| *n != busy).unwrap();
    walk.eventually(30, "the PDB at zero", || {
        let p = walk.json(&["get", "pdb", "small", "-o", "json"]);
        (p["status"]["disruptionsAllowed"].as_i64() == Some(0)).then_some(())
    });

    // Found: the empty node goes, the other is held by the PDB, named.
    let report = walk.run(&["karpenter", "consolidate", "-o", "json"]);
    assert_eq!(report.code, 1, "{}\n{}", report.stdout, report.stderr);
    let doc: Value = serde_json::from_str(&report.stdout).unwrap();
    let decision = |name: &str| {
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(decision(&empty)["decision"], "delete", "{doc}");
    assert_eq!(decision(&busy)["decision"], "none", "{doc}");
    let why = decision(&busy)["reason"].as_str().unwrap().to_string();
    assert!(why.contains("default/small"), "the PDB named: {why}");

    // --dry-run: what would be done, nothing changed.
    let dry = walk.run(&["karpenter", "consolidate", "--dry-run"]);
    assert_eq!(dry.code, 1, "{}\n{}", dry.stdout, dry.stderr);
    assert!(dry.stdout.contains(&empty), "{}", dry.stdout);
    assert_eq!(team_nodes(&walk).len(), 2);

    let out = walk.run(&["karpenter", "consolidate", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["deleted"], 1, "{doc}");
    assert_eq!(doc["nodes"][0]["node"], empty.as_str());
    settle_team_nodes(&walk, 1);
    let before = tool_instances(&walk).len();

    // The PDB gone: replaced by the cheaper type. Killed once cordoned, then run again.
    walk.ok(&["delete", "pdb", "small"]);
    kill_at(
        &walk,
        &["karpenter", "consolidate", "--yes"],
        "tainted and cordoned",
    );
    let out = walk.run(&["karpenter", "consolidate", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["replaced"], 1, "{doc}");
    assert!(
        doc["nodes"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("replace with c"),
        "{doc}"
    );
    assert_eq!(
        tool_instances(&walk).len(),
        before + 1,
        "one replacement, launched once"
    );
    let now = settle_team_nodes(&walk, 1);
    assert_ne!(name_of(&now[0]), busy);
    assert!(
        now[0]["metadata"]["labels"]["node.kubernetes.io/instance-type"]
            .as_str()
            .unwrap()
            .ends_with(".large")
    );
    walk.eventually(30, "small Running on the new node", || {
        walk.items(&["get", "pods", "-l", "app=small"])
            .first()
            .filter(|p| {
                p["status"]["phase"] == "Running"
                    && p["spec"]["nodeName"] == now[0]["metadata"]["name"]
            })
            .map(|_| ())
    });
    assert_eq!(pending_pods(&walk), Vec::<String>::new());
    // Nothing more to do: a new node without a NodeClaim is no candidate.
    let again = walk.run(&["karpenter", "consolidate", "--yes"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(tool_instances(&walk).len(), before + 1);
}

/// Beside a running Karpenter controller `consolidate --yes` refuses (exit 4) unless --force.
#[test]
fn consolidate_yes_refuses_beside_a_running_controller() {
    let walk = Walk::new_v1beta1("consolidate-controller");
    install_controller(&walk);
    let out = walk.run(&["karpenter", "consolidate", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("controller"), "{}", out.stderr);
    // --watch without --yes asks, and there is no terminal here.
    let out = walk.run(&["karpenter", "consolidate", "--watch"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("terminal"), "{}", out.stderr);
    let out = walk.run(&["karpenter", "consolidate", "--yes", "-f", "x.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}
