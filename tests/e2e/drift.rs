//! `drift check -f` offline: the built binary on manifests — the seed walkthrough's AMI drift,
//! upstream examples with `--ssm-param`, NodeClaim hash annotations, every output format,
//! filters, and bad input (exit 2, one line, never a panic).

use serde_json::Value;

use crate::support::{fixture, karpenter, write_temp, Run};

const SSM_AL2023_130: &str =
    "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id";

/// A Node manifest.
fn node(name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> String {
    let block = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| format!("    {k}: \"{v}\"\n"))
            .collect::<String>()
    };
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  creationTimestamp: \"2024-01-01T00:00:00Z\"\n  labels:\n{}  annotations:\n    x: \"y\"\n{}spec:\n  providerID: aws:///us-east-1a/i-{name}\n",
        block(labels),
        block(annotations)
    )
}

/// Seed 000: a Provisioner switched from AWSNodeTemplate `oldnode` (1.24 AMI) to `newnode`
/// (1.25 AMI); the node launched from `oldnode` runs the 1.24 AMI.
fn seed_000() -> String {
    let template = |name: &str, ami: &str, ami_name: &str| {
        format!(
            "---\napiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: {name}\nspec:\n  amiSelector:\n    aws::ids: {ami}\n  subnetSelector:\n    alpha.eksctl.io/cluster-name: demo\n  securityGroupSelector:\n    kubernetes.io/cluster/demo: owned\nstatus:\n  amis:\n  - id: {ami}\n    name: {ami_name}\n    requirements:\n    - key: kubernetes.io/arch\n      operator: In\n      values: [amd64]\n"
        )
    };
    let provisioner = "---\napiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: newnode\n  labels:\n    eks-immersion-team: my-team\n  requirements:\n  - key: karpenter.k8s.aws/instance-category\n    operator: In\n    values: [c, m, r]\n";
    let labels = [
        ("karpenter.sh/provisioner-name", "default"),
        ("eks-immersion-team", "my-team"),
        ("kubernetes.io/arch", "amd64"),
        ("node.kubernetes.io/instance-type", "c6a.2xlarge"),
    ];
    format!(
        "{}{}{provisioner}{}{}",
        template("oldnode", "ami-0aa", "amazon-eks-node-1.24-v20230703"),
        template("newnode", "ami-0bb", "amazon-eks-node-1.25-v20230711"),
        node(
            "old-node",
            &labels,
            &[("kubectl-karpenter.io/image-id", "ami-0aa")]
        ),
        node(
            "new-node",
            &labels,
            &[("kubectl-karpenter.io/image-id", "ami-0bb")]
        ),
    )
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
}

fn by_name<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}: {report:#}"))
}

#[test]
fn seed_000_old_node_has_ami_drift_naming_both_amis() {
    let run = karpenter(&["drift", "check", "-f", "-"], seed_000().as_bytes());
    assert_eq!(run.code, 1, "drift found exits 1: {}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert!(
        lines[0].starts_with("NODE") && lines[0].contains("DETAIL"),
        "{}",
        lines[0]
    );
    let old = lines.iter().find(|l| l.starts_with("old-node")).unwrap();
    assert!(old.contains("Drifted") && old.contains("AMIDrift"), "{old}");
    assert!(
        old.ends_with(
            "runs ami-0aa (amazon-eks-node-1.24-v20230703); newnode resolves amd64 → ami-0bb (amazon-eks-node-1.25-v20230711) via amiSelector aws::ids ami-0bb"
        ),
        "{old}"
    );
    let new = lines.iter().find(|l| l.starts_with("new-node")).unwrap();
    assert!(new.contains(" OK "), "{new}");

    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "json"],
        seed_000().as_bytes(),
    );
    assert_eq!(run.code, 1);
    let report = json(&run);
    assert_eq!(report["apiVersion"], "kubectl-karpenter/v1");
    assert_eq!(report["kind"], "DriftReport");
    assert_eq!(report["summary"]["drifted"], 1);
    let old = by_name(&report, "old-node");
    assert_eq!(old["drifted"], true);
    assert_eq!(old["reason"], "AMIDrift");
    assert_eq!(old["nodePool"], "default");
    assert_eq!(old["nodeClass"], "newnode");
    assert_eq!(old["imageId"], "ami-0aa");
    assert_eq!(old["expectedImageIds"], serde_json::json!(["ami-0bb"]));
    assert_eq!(old["instanceId"], "i-old-node");
    assert_eq!(by_name(&report, "new-node")["status"], "OK");
}

#[test]
fn seed_000_before_the_edit_nothing_drifted() {
    let before = seed_000().replace("name: newnode\n  labels", "name: oldnode\n  labels");
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "json"],
        before.as_bytes(),
    );
    assert_eq!(
        run.code, 1,
        "new-node now runs the newer AMI than oldnode gives"
    );
    let report = json(&run);
    assert_eq!(by_name(&report, "old-node")["status"], "OK");
    let run = karpenter(
        &["drift", "check", "-f", "-", "old-node"],
        before.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

/// The v1 general-purpose fixture (alias al2023@latest) with AMI facts from `--ssm-param`.
#[test]
fn v1_example_with_ssm_params() {
    let example = fixture("examples/v1/general-purpose.yaml");
    let labels = [
        ("karpenter.sh/nodepool", "general-purpose"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/os", "linux"),
        ("karpenter.sh/capacity-type", "on-demand"),
        ("karpenter.k8s.aws/instance-category", "c"),
        ("karpenter.k8s.aws/instance-generation", "6"),
        ("node.kubernetes.io/instance-type", "c6a.2xlarge"),
        ("topology.kubernetes.io/region", "us-east-1"),
    ];
    let nodes = node(
        "n1",
        &labels,
        &[("kubectl-karpenter.io/image-id", "ami-0old")],
    );
    let path = write_temp("drift-nodes-v1.yaml", nodes.as_bytes());
    let ssm = format!("{SSM_AL2023_130}=ami-0new");
    let args = [
        "drift",
        "check",
        "-f",
        example.to_str().unwrap(),
        "-f",
        path.to_str().unwrap(),
        "--ssm-param",
        &ssm,
        "-o",
        "json",
    ];
    let run = karpenter(&args, b"");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    assert_eq!(
        report["kubernetesVersion"], "1.30",
        "read from the --ssm-param path"
    );
    let n1 = by_name(&report, "n1");
    assert_eq!(n1["reason"], "AMIDrift");
    assert_eq!(
        n1["detail"],
        format!("runs ami-0old; default resolves amd64 → ami-0new via SSM {SSM_AL2023_130}")
    );
    // Without SSM facts the AMI cannot be judged: Unknown, exit 0, and the detail says what to pass.
    let run = karpenter(&args[..6], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Unknown"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("--ssm-param /aws/service/eks/optimized-ami/"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("assuming Kubernetes"), "{}", run.stderr);
}

#[test]
fn requirement_narrowing_and_a_custom_catalog() {
    let pool = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: r\n  amiFamily: AL2023\n  amiSelectorTerms: [{id: ami-1}]\n  subnetSelectorTerms: [{id: subnet-a}]\n  securityGroupSelectorTerms: [{id: sg-a}]\n";
    let labels = |cat: &'static str| {
        [
            ("karpenter.sh/nodepool", "default"),
            ("kubernetes.io/arch", "amd64"),
            ("node.kubernetes.io/instance-type", "c6a.large"),
            ("karpenter.k8s.aws/instance-category", cat),
        ]
    };
    let facts = [
        ("kubectl-karpenter.io/image-id", "ami-1"),
        ("kubectl-karpenter.io/subnet-id", "subnet-a"),
        ("kubectl-karpenter.io/security-group-ids", "sg-a,sg-b"),
    ];
    let text = format!(
        "{pool}{}{}",
        node("r-node", &labels("r"), &facts),
        node("c-node", &labels("c"), &facts[..2]),
    );
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    let rn = by_name(&report, "r-node");
    assert_eq!(rn["reason"], "RequirementsDrifted");
    assert_eq!(
        rn["detail"],
        "karpenter.k8s.aws/instance-category=r no longer matches karpenter.k8s.aws/instance-category In [c,m]"
    );
    let cn = by_name(&report, "c-node");
    assert_eq!(cn["status"], "OK");
    let not_checked = cn["notChecked"].as_array().unwrap();
    assert!(
        not_checked.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("SecurityGroupDrift: the instance's security groups are unknown")),
        "security groups unknown offline without the annotation: {cn:#}"
    );
    // A catalog that no longer has c6a.large: InstanceTypeNotFound for the node that was fine.
    let catalog = "instanceTypes:\n- name: m5.large\n  capacity: {cpu: \"2\", memory: 8Gi, pods: \"29\"}\n  offerings:\n  - {zone: us-east-1a, capacityType: on-demand, price: 0.096, available: true}\n";
    let path = write_temp("drift-catalog.yaml", catalog.as_bytes());
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            "-",
            "-o",
            "json",
            "--catalog",
            path.to_str().unwrap(),
            "c-node",
        ],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    let cn = by_name(&report, "c-node");
    assert_eq!(cn["reason"], "InstanceTypeNotFound");
    assert_eq!(
        cn["detail"],
        "instance type c6a.large is no longer offered to NodePool default (1 types are)"
    );
}

/// Issue #12 item 6, `CapacityReservationDrift`: a node launched into reservation `cr-0old`,
/// which the class's `capacityReservationSelectorTerms` no longer select, is drifted naming it;
/// one in a still-selected reservation is OK but lists the check offline without the class's
/// `status.capacityReservations` in `notChecked`; with the status it is checked.
#[test]
fn capacity_reservation_drift_names_the_reservation() {
    let class = |status: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: r\n  amiFamily: AL2023\n  amiSelectorTerms: [{{id: ami-1}}]\n  subnetSelectorTerms: [{{id: subnet-a}}]\n  securityGroupSelectorTerms: [{{id: sg-a}}]\n  capacityReservationSelectorTerms: [{{id: cr-0new}}]\n{status}"
        )
    };
    let reserved = |id: &'static str| {
        [
            ("karpenter.sh/nodepool", "default"),
            ("kubernetes.io/arch", "amd64"),
            ("node.kubernetes.io/instance-type", "m5.large"),
            ("karpenter.sh/capacity-type", "reserved"),
            ("karpenter.k8s.aws/capacity-reservation-id", id),
            ("karpenter.k8s.aws/capacity-reservation-type", "default"),
        ]
    };
    let facts = [
        ("kubectl-karpenter.io/image-id", "ami-1"),
        ("kubectl-karpenter.io/subnet-id", "subnet-a"),
        ("kubectl-karpenter.io/security-group-ids", "sg-a"),
    ];
    let nodes = format!(
        "{}{}",
        node("old-res", &reserved("cr-0old"), &facts),
        node("new-res", &reserved("cr-0new"), &facts),
    );
    let text = format!("{}{nodes}", class(""));
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    let old = by_name(&report, "old-res");
    assert_eq!(old["reason"], "CapacityReservationDrift");
    assert_eq!(
        old["detail"],
        "capacity reservation cr-0old is no longer selected by EC2NodeClass default's capacityReservationSelectorTerms (now: cr-0new)"
    );
    let new = by_name(&report, "new-res");
    assert_eq!(new["status"], "OK");
    assert!(
        new["notChecked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(
                "CapacityReservationDrift: whether capacity reservation cr-0new is still active needs"
            )),
        "{new:#}"
    );
    // With the class's status (the reservation is gone from it): drifted, naming it.
    let status = "status:\n  capacityReservations: []\n";
    let text = format!("{}{nodes}", class(status));
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "json", "new-res"],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    let new = by_name(&report, "new-res");
    assert_eq!(new["reason"], "CapacityReservationDrift");
    assert_eq!(
        new["detail"],
        "capacity reservation cr-0new is not in EC2NodeClass default status.capacityReservations (now: none): no longer selected or no longer active"
    );
    // A catalog offering m5.large only through the class's reservation still offers the type to
    // the pool (no InstanceTypeNotFound, which would come first).
    let catalog = "instanceTypes:\n- name: m5.large\n  capacity: {cpu: \"2\", memory: 8Gi}\n  offerings:\n  - {zone: us-east-1a, capacityType: reserved, reservationId: cr-0new, count: 1}\n";
    let path = write_temp("drift-reserved-catalog.yaml", catalog.as_bytes());
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            "-",
            "-o",
            "json",
            "--catalog",
            path.to_str().unwrap(),
            "new-res",
        ],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = json(&run);
    assert_eq!(
        by_name(&report, "new-res")["reason"],
        "CapacityReservationDrift"
    );
}

/// A v1 NodeClaim with Karpenter's hash annotations and `status.imageID`; the NodePool's hash moved.
#[test]
fn nodeclaim_hash_annotations_and_image_id() {
    let text = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  annotations:
    karpenter.sh/nodepool-hash: "222"
    karpenter.sh/nodepool-hash-version: v3
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: r
  amiFamily: AL2023
  amiSelectorTerms: [{id: ami-1}]
  subnetSelectorTerms: [{id: subnet-a}]
  securityGroupSelectorTerms: [{id: sg-a}]
status:
  securityGroups: [{id: sg-old, name: old}]
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
  labels: {karpenter.sh/nodepool: default, kubernetes.io/arch: amd64}
  annotations:
    karpenter.sh/nodepool-hash: "111"
    karpenter.sh/nodepool-hash-version: v3
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: []
status:
  nodeName: ip-1
  imageID: ami-1
---
apiVersion: v1
kind: Node
metadata:
  name: ip-1
  labels: {karpenter.sh/nodepool: default, kubernetes.io/arch: amd64}
"#;
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "yaml"],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("apiVersion: kubectl-karpenter/v1\nkind: DriftReport\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("reason: NodePoolDrifted"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("nodeClaim: default-x7k2p"),
        "{}",
        run.stdout
    );
    // The hash is computed from the NodePool's spec (v3), not read from its annotation, which
    // no controller refreshed: both are named.
    assert!(
        run.stdout.contains(
            "NodePool default template changed since launch: karpenter.sh/nodepool-hash 111 (NodeClaim) → "
        ) && run.stdout.contains("(computed from its spec, hash version v3); its own annotation still says 222"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("NodePool default: its karpenter.sh/nodepool-hash annotation (222) is stale"),
        "{}",
        run.stderr
    );
    // The written status disagrees with the selection's ids: a note on stderr says it is stale.
    assert!(
        run.stderr
            .contains("EC2NodeClass default: status.securityGroups (sg-old) is stale"),
        "{}",
        run.stderr
    );
}

#[test]
fn output_formats_and_filters() {
    let input = seed_000();
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "name"],
        input.as_bytes(),
    );
    assert_eq!((run.code, run.stdout.as_str()), (1, "node/old-node\n"));
    let run = karpenter(
        &["drift", "check", "-f", "-", "-o", "wide", "--no-headers"],
        input.as_bytes(),
    );
    assert!(!run.stdout.contains("NODE"), "{}", run.stdout);
    assert!(
        run.stdout.contains("i-old-node   c6a.2xlarge"),
        "{}",
        run.stdout
    );
    let run = karpenter(&["drift", "check", "-f", "-", "new-node"], input.as_bytes());
    assert_eq!(run.code, 0, "only the clean node was selected");
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            "-",
            "-l",
            "eks-immersion-team=other",
        ],
        input.as_bytes(),
    );
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.is_empty() && run.stderr.contains("no managed nodes selected"),
        "{}",
        run.stderr
    );
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            "-",
            "--nodepool",
            "default",
            "-l",
            "eks-immersion-team in (my-team)",
        ],
        input.as_bytes(),
    );
    assert_eq!(run.code, 1);
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let input = seed_000();
    let cases: &[(&[&str], &str)] = &[
        (
            &["drift", "check", "-f", "-", "--ssm-param", "nonsense"],
            "expected NAME=VALUE",
        ),
        (
            &["drift", "check", "-f", "-", "ghost"],
            "node \"ghost\" is not a managed node",
        ),
        (
            &["drift", "check", "-f", "-", "--nodepool", "nope"],
            "--nodepool nope",
        ),
        (&["drift", "check", "-f", "-", "-l", "a in (b"], "-l"),
        (&["drift", "check", "-f", "-", "--mark"], "--mark"),
        (
            &["drift", "check", "-f", "-", "--kubernetes-version", "one"],
            "--kubernetes-version",
        ),
    ];
    for (args, want) in cases {
        let run = karpenter(args, input.as_bytes());
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    // Without -f, drift check reads the cluster: a missing kubeconfig is a cluster error (3).
    let run = karpenter(
        &["drift", "check", "--kubeconfig", "/nonexistent/kubeconfig"],
        b"",
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("kubeconfig"), "{}", run.stderr);
    let no_nodes =
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: x}\nspec: {providerRef: {name: t}}\n";
    // Files without nodes are a what-if against the cluster: its nodes, their pools.
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            "-",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ],
        no_nodes.as_bytes(),
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("kubeconfig"), "{}", run.stderr);
    let run = karpenter(&["drift", "check", "-f", "-"], b"kind: [unclosed");
    assert_eq!(run.code, 2, "{}", run.stderr);
}
