//! Drift read line by line against core v1.14.1 `pkg/controllers/nodeclaim/disruption/drift.go`
//! and aws v1.14.1 `pkg/cloudprovider/drift.go` (docs/upstream-tests.md "Drift, expiration and
//! NodeClaim conditions, line by line (s28-linedrift)"), replayed through the binary with
//! `drift check -f … -o json`. Fixtures in `tests/fixtures/drift-line-by-line/` (our own
//! manifests).

use std::time::{SystemTime, UNIX_EPOCH};

use kubectl_karpenter::model::time::format_rfc3339;
use serde_json::Value;

use crate::support::{fixture, karpenter, write_temp};

/// `drift check -f FILE -o json EXTRA…`: the exit code and the one node's verdict.
fn check(file: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["drift", "check", "-f", file, "-o", "json"];
    args.extend(extra);
    let run = karpenter(&args, b"");
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{doc}");
    (run.code, nodes[0].clone())
}

fn texts(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// aws v1.14.1 `drift.go isAMIDrifted`: the class resolves no AMI (its SSM parameter holds no AMI
/// id) — "no amis exist given constraints" — and `isNodeClassDrifted` returns the error before the
/// security-group check. Before s28-linedrift we said `SecurityGroupDrift` (exit 1).
#[test]
fn a_class_resolving_no_ami_gets_no_security_group_verdict() {
    let file = fixture("drift-line-by-line/no-ami.yaml");
    let (code, node) = check(
        &file.to_string_lossy(),
        &["--ssm-param", "/team/golden-ami=none"],
    );
    assert_eq!(code, 0, "{node}");
    assert_eq!(node["status"], "Unknown", "{node}");
    assert_eq!(node["reason"], Value::Null);
    assert_eq!(
        node["detail"],
        "AMI drift not checked: EC2NodeClass team resolves no AMI"
    );
    assert!(
        texts(&node["notChecked"]).contains(
            &"security-group, subnet, capacity-reservation and placement-group drift not \
              evaluated: EC2NodeClass team resolves no AMI (Karpenter's drift check fails at its \
              AMI check then)"
                .to_string()
        ),
        "{node}"
    );
}

/// aws v1.14.1 `drift.go isAMIDrifted` fails on a NodeClaim whose instance type
/// `GetInstanceTypes` no longer lists ("finding node instance type"), and core's
/// `InstanceTypeNotFound` waits until the NodeClaim is an hour old: a 30-minute-old node on an old
/// AMI with other security groups gets no reason. Before s28-linedrift we said `AMIDrift`.
#[test]
fn a_young_node_whose_type_is_gone_gets_no_provider_verdict() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let created = format!("\"{}\"", format_rfc3339(now - 30 * 60));
    let text = std::fs::read_to_string(fixture("drift-line-by-line/young-type-gone.yaml"))
        .unwrap()
        .replace("CREATED", &created);
    let file = write_temp("drift-line-by-line-young-type-gone.yaml", text.as_bytes());
    let catalog = fixture("drift-line-by-line/m5-only-catalog.yaml");
    let (code, node) = check(
        &file.to_string_lossy(),
        &["--catalog", &catalog.to_string_lossy()],
    );
    assert_eq!(code, 0, "{node}");
    assert_eq!(node["status"], "OK", "{node}");
    assert_eq!(
        texts(&node["notChecked"])[0],
        "AMI drift not checked: instance type c6a.large is not among NodePool team's instance \
         types now (Karpenter's drift check fails then; InstanceTypeNotFound judges the node once \
         it is an hour old)"
    );
    // An hour and more: InstanceTypeNotFound, before and after.
    let old = text.replace(&created, "\"2024-06-20T00:00:00Z\"");
    let file = write_temp("drift-line-by-line-old-type-gone.yaml", old.as_bytes());
    let (code, node) = check(
        &file.to_string_lossy(),
        &["--catalog", &catalog.to_string_lossy()],
    );
    assert_eq!(
        (code, &node["reason"]),
        (1, &Value::from("InstanceTypeNotFound"))
    );
}

/// aws v1.14.1 `cloudprovider.go resolveNodeClassFromNodePool` resolves an EC2NodeClass being
/// deleted as not found: `GetInstanceTypes` lists nothing, so core's `instanceTypeNotFound` drifts
/// the days-old NodeClaim, and `IsDrifted` gives no provider reason. Before s28-linedrift we judged
/// the class as any other and said `AMIDrift`.
#[test]
fn a_node_class_being_deleted_lists_no_instance_type() {
    let file = fixture("drift-line-by-line/deleting-class.yaml");
    let (code, node) = check(&file.to_string_lossy(), &[]);
    assert_eq!(code, 1, "{node}");
    assert_eq!(node["reason"], "InstanceTypeNotFound", "{node}");
    assert_eq!(
        node["detail"],
        "EC2NodeClass team is being deleted: Karpenter lists no instance type for NodePool team"
    );
}
