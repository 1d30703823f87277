//! Plans of Karpenter rules through `-f` manifests (offline `provision --dry-run -o json`), one
//! fixture of `tests/fixtures/plans/` each: the launch-time spot filter, NodePool limits across
//! scheduling rounds, and EKS Auto Mode pools.

use serde_json::Value;

use crate::support::{fixture, karpenter, Run};

fn dry_run(args: &[&str]) -> (Run, Value) {
    dry_run_with(args, b"")
}

/// `provision --dry-run -o json` on the manifest `text` (stdin).
fn dry_run_stdin(text: &str) -> (Run, Value) {
    dry_run_with(&["-f", "-"], text.as_bytes())
}

pub(crate) fn dry_run_with(args: &[&str], stdin: &[u8]) -> (Run, Value) {
    let mut all = vec!["provision", "--dry-run", "-o", "json"];
    all.extend_from_slice(args);
    let run = karpenter(&all, stdin);
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

fn path(name: &str) -> String {
    fixture(&format!("plans/{name}"))
        .to_string_lossy()
        .into_owned()
}

/// Issue #12 item 4: spot offerings priced above the cheapest on-demand offering are not
/// launched (aws `SpotOfferingFilter`): the plan launches c6a.large on-demand at $0.0765/h, not
/// c6a.xlarge spot at $0.09/h; the NodeClaim still lists both types and capacity types.
#[test]
fn spot_priced_above_on_demand_is_not_planned() {
    let (run, plan) = dry_run(&[
        "-f",
        &path("spot-above-on-demand.yaml"),
        "--catalog",
        &path("spot-above-on-demand-catalog.yaml"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claim = &plan["nodeClaims"][0];
    assert_eq!(claim["instanceType"], "c6a.large");
    assert_eq!(claim["capacityType"], "on-demand");
    assert_eq!(claim["pricePerHour"], 0.0765);
    assert_eq!(claim["labels"]["karpenter.sh/capacity-type"], "on-demand");
    assert_eq!(
        claim["instanceTypes"],
        serde_json::json!(["c6a.large", "c6a.xlarge"])
    );
    let capacity_types = claim["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "karpenter.sh/capacity-type")
        .unwrap();
    assert_eq!(
        capacity_types["values"],
        serde_json::json!(["on-demand", "spot"])
    );
}

/// Issue #12 item 5: six pods that each need their own node under `limits.cpu: 10` take three
/// rounds; each NodeClaim says its round, the table shows a ROUND column, and only the pod no
/// round places is unschedulable (exit 1), with the limit as its reason.
#[test]
fn limits_leave_pods_to_later_rounds_not_to_unschedulable() {
    let (run, plan) = dry_run(&["-f", &path("limit-rounds.yaml")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    let rounds: Vec<i64> = claims
        .iter()
        .map(|c| c["round"].as_i64().unwrap())
        .collect();
    assert_eq!(rounds, [1, 1, 2, 2, 3], "{plan:#}");
    let vcpus: i64 = claims
        .iter()
        .map(|c| {
            c["labels"]["karpenter.k8s.aws/instance-cpu"]
                .as_str()
                .unwrap()
                .parse::<i64>()
                .unwrap()
        })
        .sum();
    assert!(vcpus <= 10, "{vcpus} vCPU planned under a 10 CPU limit");
    let unschedulable = plan["unschedulable"].as_array().unwrap();
    assert_eq!(unschedulable.len(), 1);
    assert_eq!(unschedulable[0]["reasonCode"], "LimitReached");
    assert_eq!(
        unschedulable[0]["reason"],
        "NodePool default: limit cpu=10 reached (cpu=0 left; the smallest instance type has cpu=1)"
    );

    let table = karpenter(
        &["provision", "--dry-run", "-f", &path("limit-rounds.yaml")],
        b"",
    );
    let header = table.stdout.lines().next().unwrap();
    assert!(header.ends_with("$/HOUR   ROUND"), "{}", table.stdout);
    assert!(
        table.stdout.contains("5 new NodeClaim(s)"),
        "{}",
        table.stdout
    );
}

/// Issue #12 item 6: a NodePool naming an EKS Auto Mode `NodeClass` is planned as a pool EKS
/// manages (reason code `AutoModeNodePool`), not as a missing class; the NodeClass document
/// itself is skipped, and the other pool takes the pods.
#[test]
fn auto_mode_pools_are_named_as_managed_by_eks() {
    let (run, plan) = dry_run(&["-f", &path("auto-mode.yaml")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(plan["nodeClaims"][0]["nodePool"], "self-managed");

    let (run, plan) = dry_run(&[
        "-f",
        &path("auto-mode.yaml"),
        "--nodepool",
        "general-purpose",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let u = &plan["unschedulable"][0];
    assert_eq!(u["reasonCode"], "AutoModeNodePool");
    assert_eq!(
        u["reason"],
        "NodePool general-purpose uses EKS Auto Mode NodeClass \"default\" (eks.amazonaws.com): Auto Mode is managed by EKS, which provisions its nodes itself"
    );
    assert!(!run.stderr.contains("not in the input"), "{}", run.stderr);
}

/// The fixture's text without its NodeOverlay documents.
fn without_overlays(text: &str) -> String {
    text.split("\n---\n")
        .filter(|doc| !doc.contains("kind: NodeOverlay"))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// Issue #12 item 6: NodeOverlays from `-f` — a capacity overlay makes pods that request an
/// extended resource schedulable on the types it selects, a price overlay changes the price and
/// the type launched; without the overlays the same pods are unschedulable, and pods without the
/// resource go to c6a.large.
#[test]
fn node_overlays_change_capacity_and_prices() {
    let text = std::fs::read_to_string(path("node-overlay.yaml")).unwrap();
    let (run, plan) = dry_run_stdin(&text);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claim = &plan["nodeClaims"][0];
    assert_eq!(claim["instanceType"], "c7a.large");
    assert_eq!(claim["pricePerHour"].as_f64().unwrap(), 0.10264 * 0.6);
    assert!(claim["instanceTypes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.as_str().unwrap().starts_with("c7a.")));

    let (run, plan) = dry_run_stdin(&without_overlays(&text));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(plan["unschedulable"][0]["reasonCode"], "NoInstanceTypeFits");

    let plain = text
        .replace(
            "requests: {cpu: 500m, smarter-devices/fuse: \"1\"}",
            "requests: {cpu: 500m}",
        )
        .replace("            limits: {smarter-devices/fuse: \"1\"}\n", "");
    let (_, plan) = dry_run_stdin(&plain);
    assert_eq!(plan["nodeClaims"][0]["instanceType"], "c7a.large");
    let (_, plan) = dry_run_stdin(&without_overlays(&plain));
    assert_eq!(plan["nodeClaims"][0]["instanceType"], "c6a.large");
}

/// Two overlays of one weight on the same offerings conflict: the one later in Karpenter's order
/// is not applied, and a warning says so.
#[test]
fn conflicting_node_overlays_are_left_out_with_a_warning() {
    let text = std::fs::read_to_string(path("node-overlay.yaml"))
        .unwrap()
        .replace(
            "priceAdjustment: \"-40%\"",
            "priceAdjustment: \"-40%\"\n  capacity:\n    smarter-devices/fuse: \"5\"",
        );
    let (run, _) = dry_run_stdin(&text);
    assert!(
        run.stderr.contains("NodeOverlay/c7a-commitment: not applied: it conflicts with another NodeOverlay of the same weight"),
        "{}",
        run.stderr
    );
}

/// Issue #12 item 6: a static NodePool is planned up to its replicas (3 wanted, 1 Node there: 2
/// NodeClaims without pods), whatever is pending; the pending pods go to the dynamic pool.
#[test]
fn static_pools_are_planned_up_to_their_replicas() {
    let (run, plan) = dry_run(&["-f", &path("static-pool.yaml")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    let baseline: Vec<&Value> = claims
        .iter()
        .filter(|c| c["nodePool"] == "baseline")
        .collect();
    assert_eq!(baseline.len(), 2, "{plan:#}");
    for c in &baseline {
        assert_eq!(c["instanceType"], "m5.large");
        assert!(c["pods"].as_array().unwrap().is_empty());
        assert_eq!(c["taints"][0]["key"], "dedicated");
    }
    let default: Vec<&Value> = claims
        .iter()
        .filter(|c| c["nodePool"] == "default")
        .collect();
    assert_eq!(default.len(), 1);
    assert_eq!(default[0]["pods"].as_array().unwrap().len(), 2);

    let without_node = std::fs::read_to_string(path("static-pool.yaml"))
        .unwrap()
        .replace("kind: Node\n", "kind: ConfigMap\n");
    let (_, plan) = dry_run_stdin(&without_node);
    let baseline = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["nodePool"] == "baseline")
        .count();
    assert_eq!(baseline, 3);
}

/// Issue #12 item 6: capacity reservations from a custom catalog. The class selects one ODCR
/// with 2 instances left: two NodeClaims are planned into it (`capacityType: reserved`, its id),
/// the third pod waits for the next round and falls back to on-demand; the reservation the class
/// does not select is never used.
#[test]
fn capacity_reservations_are_used_up_then_on_demand() {
    let catalog = path("capacity-reservations-catalog.yaml");
    let (run, plan) = dry_run(&[
        "-f",
        &path("capacity-reservations.yaml"),
        "--catalog",
        &catalog,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    let got: Vec<(i64, &str, Option<&str>, &str)> = claims
        .iter()
        .map(|c| {
            (
                c["round"].as_i64().unwrap(),
                c["capacityType"].as_str().unwrap(),
                c["capacityReservationId"].as_str(),
                c["zone"].as_str().unwrap(),
            )
        })
        .collect();
    let id = Some("cr-0a1b2c3d4e5f60001");
    assert_eq!(
        got,
        [
            (1, "reserved", id, "us-east-1a"),
            (1, "reserved", id, "us-east-1a"),
            (2, "on-demand", None, "us-east-1a"),
        ],
        "{plan:#}"
    );
    assert_eq!(
        claims[0]["labels"]["karpenter.k8s.aws/capacity-reservation-id"],
        "cr-0a1b2c3d4e5f60001"
    );
    assert!(claims[2]["labels"]
        .get("karpenter.k8s.aws/capacity-reservation-id")
        .is_none());
    // The table names the reservation.
    let table = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &path("capacity-reservations.yaml"),
            "--catalog",
            &catalog,
        ],
        b"",
    );
    assert!(
        table.stdout.contains("reserved (cr-0a1b2c3d4e5f60001)"),
        "{}",
        table.stdout
    );

    // A class whose terms select nothing in the catalog gets no reserved capacity.
    let text = std::fs::read_to_string(path("capacity-reservations.yaml"))
        .unwrap()
        .replace("[{id: cr-0a1b2c3d4e5f60001}]", "[{tags: {team: ml}}]");
    let (run, plan) = dry_run_with(&["-f", "-", "--catalog", &catalog], text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let types: Vec<&str> = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["capacityType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["on-demand"; 3]);
}

/// A reserved offering without a count is a one-line input error naming the file and field
/// (exit 2).
#[test]
fn a_reserved_offering_needs_a_count() {
    let catalog = crate::support::write_temp(
        "reserved-no-count.yaml",
        b"instanceTypes:\n- name: m5.large\n  capacity: {cpu: \"2\", memory: 8Gi}\n  offerings:\n  - {zone: us-east-1a, capacityType: reserved, reservationId: cr-0a1}\n",
    );
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &path("capacity-reservations.yaml"),
            "--catalog",
            catalog.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        line.ends_with("reserved-no-count.yaml: instanceTypes[0].offerings[0].count: required for a reserved offering: how many instances the reservation can still take"),
        "{}",
        run.stderr
    );
}

/// Issue #12 item 6: a static NodePool lowered below what runs is scaled down in the plan:
/// `replicas: 0` with one (empty) Node → that Node goes, reason `empty`, and nothing is planned
/// for the pool (`core main: pkg/controllers/static/deprovisioning/suite_test.go` "should
/// handle zero replicas by terminating all nodeclaims").
#[test]
fn static_pools_above_their_replicas_are_scaled_down_in_the_plan() {
    let text = std::fs::read_to_string(path("static-pool.yaml"))
        .unwrap()
        .replace("replicas: 3", "replicas: 0");
    let (run, plan) = dry_run_stdin(&text);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let down = &plan["staticScaleDown"][0];
    assert_eq!(down["nodePool"], "baseline", "{plan:#}");
    assert_eq!(down["running"], 1);
    assert_eq!(down["replicas"], 0);
    assert_eq!(down["remove"][0]["node"], "ip-10-0-1-10.ec2.internal");
    assert_eq!(down["remove"][0]["reason"], "empty");
    assert!(!plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["nodePool"] == "baseline"));
}

/// `core v1.14.1: pkg/controllers/provisioning/suite_test.go` "should ignore NodePools that are
/// deleting": a NodePool with a deletionTimestamp takes no pod, even at a higher weight; the plan
/// says so once on stderr.
#[test]
fn a_nodepool_being_deleted_is_left_out() {
    let pool = |name: &str, weight: u32, deleting: &str| weighted_pool(name, weight, deleting, "");
    let text = format!(
        "{}{}apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: default}}\nspec:\n  role: r\n  amiSelectorTerms: [{{alias: al2023@latest}}]\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\n",
        pool("going", 100, "  deletionTimestamp: \"2026-12-04T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n"),
        pool("staying", 10, ""),
    );
    let (run, plan) = dry_run_stdin(&text);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pools = claim_pools(&plan);
    assert_eq!(pools, ["staying"]);
    assert!(
        run.stderr.contains("NodePool/going: being deleted"),
        "{}",
        run.stderr
    );
}

/// A v1 NodePool `name` of `weight` on EC2NodeClass `default`, with `meta` (indented lines) in
/// its metadata and `status` (a top-level block) after its spec, ending in `---`.
fn weighted_pool(name: &str, weight: u32, meta: &str, status: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\n{meta}spec:\n  weight: {weight}\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements: []\n{status}---\n"
    )
}

/// The pools of the plan's NodeClaims, in order.
fn claim_pools(plan: &Value) -> Vec<&str> {
    plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["nodePool"].as_str().unwrap())
        .collect()
}

/// Scheduling suite "should not schedule pods with nodePool which is not ready" (core v1.14.1:
/// `provisioner.go` `NewScheduler`): a NodePool whose `Ready` is False takes nothing, said with
/// its reason and message; the pod stays pending when no other pool is ready.
#[test]
fn a_nodepool_that_is_not_ready_is_left_out() {
    let pool = |name: &str, weight: u32, status: &str| weighted_pool(name, weight, "", status);
    let rest = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n";
    let not_ready = "status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: NodePoolNotReady, message: Node Pool Not Ready}\n";
    let text = format!("{}{}{rest}", pool("a", 100, not_ready), pool("b", 10, ""));
    let (run, plan) = dry_run_stdin(&text);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pools = claim_pools(&plan);
    assert_eq!(pools, ["b"]);
    assert!(
        run.stderr
            .contains("NodePool/a: not Ready (Ready=False, NodePoolNotReady: Node Pool Not Ready)"),
        "{}",
        run.stderr
    );
    // A pool without status is taken as Ready, which is said only with -v: nearly every
    // manifest in git has none.
    assert!(
        !run.stderr.contains("no Ready status condition"),
        "{}",
        run.stderr
    );
    // Alone, the pool leaves the pod pending (exit 1).
    let (run, plan) = dry_run_stdin(&format!("{}{rest}", pool("a", 100, not_ready)));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(plan["unschedulable"][0]["pod"], "default/p");
}

/// Karpenter schedules the pods of a deleting node with the pending pods, never back onto
/// that node (core v1.14.1: `provisioner.go` `Schedule`, `nodes.Deleting()
/// .CurrentlyReschedulablePods`; provisioning suite "should schedule all pods on one inflight
/// node when node is in deleting state", scheduling suite "Deleting Nodes"). The plan lists them
/// under `deletingNodes`; a DaemonSet's pod there is not planned again.
#[test]
fn pods_of_a_deleting_node_are_planned_again() {
    let text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  deletionTimestamp: \"2026-12-04T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n  labels: {karpenter.sh/nodepool: default, karpenter.sh/initialized: \"true\", karpenter.sh/registered: \"true\", node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1a}\nspec: {providerID: \"aws:///us-east-1a/i-1\"}\nstatus: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"29\"}, capacity: {cpu: \"2\", memory: 8Gi, pods: \"29\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: default}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: daemon\n  namespace: default\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\nspec:\n  nodeName: n1\n  containers: [{name: c, image: i}]\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pending, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n";
    let (run, plan) = dry_run_stdin(text);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{plan}");
    let mut pods: Vec<&str> = claims[0]["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    pods.sort();
    assert_eq!(pods, ["default/pending", "default/running"]);
    assert_eq!(plan["existingNodes"], serde_json::json!([]));
    assert_eq!(
        plan["deletingNodes"],
        serde_json::json!([{"name": "n1", "pods": ["default/running"]}])
    );
    // The table says it too.
    let table = karpenter(&["provision", "--dry-run", "-f", "-"], text.as_bytes());
    assert!(table.stdout.contains("DELETING-NODE"), "{}", table.stdout);
    assert!(table.stdout.contains("default/running"), "{}", table.stdout);
}

/// Placement groups (docs/upstream-tests.md "Placement groups (s17-pg)"; aws v1.14.1
/// `offering/offering.go` `InjectOfferings`, `cloudprovider.go` `instanceToNodeClaim`,
/// `nodeclass/placementgroup.go`): a partition group of 3 resolved from the catalog's
/// `placementGroups`, three pods spread over `placement-group-partition` (minDomains 3) → three
/// NodeClaims, one per partition, each labelled with the group. A selector no group matches
/// makes the class not Ready: nothing launches, said once.
#[test]
fn a_partition_placement_group_spreads_over_its_partitions() {
    let (run, plan) = dry_run(&[
        "-f",
        &path("placement-group.yaml"),
        "--catalog",
        &path("placement-group-catalog.yaml"),
    ]);
    assert_eq!(run.code, 0, "{}\n{plan:#}", run.stderr);
    assert!(
        !run.stderr.contains("placementGroupSelector"),
        "{}",
        run.stderr
    );
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 3, "{plan:#}");
    let mut partitions: Vec<&str> = claims
        .iter()
        .map(|c| {
            assert_eq!(
                c["labels"]["karpenter.k8s.aws/placement-group-id"],
                "pg-0a1"
            );
            c["labels"]["karpenter.k8s.aws/placement-group-partition"]
                .as_str()
                .unwrap()
        })
        .collect();
    partitions.sort();
    assert_eq!(partitions, ["1", "2", "3"], "{plan:#}");

    let text = std::fs::read_to_string(path("placement-group.yaml"))
        .unwrap()
        .replace(
            "placementGroupSelector: {name: analytics}",
            "placementGroupSelector: {name: gone}",
        );
    let catalog = path("placement-group-catalog.yaml");
    let (run, plan) = dry_run_with(&["-f", "-", "--catalog", &catalog], text.as_bytes());
    assert_eq!(run.code, 1, "{}\n{plan:#}", run.stderr);
    assert!(
        plan["nodeClaims"].as_array().unwrap().is_empty(),
        "{plan:#}"
    );
    assert_eq!(
        run.stderr
            .matches("Placement group \"gone\" not found")
            .count(),
        1,
        "{}",
        run.stderr
    );
}
