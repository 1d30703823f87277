//! Requirements, labels and taints read line by line against core v1.14.1 `pkg/scheduling/`
//! (`requirement.go`, `requirements.go`, `taints.go`, `hostportusage.go`), `pkg/apis/v1/labels.go`,
//! `pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go` and aws v1.14.1
//! `pkg/apis/v1/labels.go` (docs/upstream-tests.md "Requirements, labels and taints, line by line
//! (s31-linereq)"), replayed through the binary. Fixtures in `tests/fixtures/req-line-by-line/`
//! (our own manifests, the embedded catalog in us-east-1).

use serde_json::Value;

use crate::support::{fixture, karpenter, plan_fixture};

/// aws v1.14.1 `pkg/apis/v1/labels.go` (`karpenter.k8s.aws/ec2nodeclass` is not among the
/// well-known labels its `init` adds; its domain is restricted) and core `provisioner.go
/// validateNodeSelector` → `ValidateRequirement` → `IsRestrictedLabel`: a pod selecting the node
/// class label is ignored. Before s31-linereq we counted the key well known and gave the pod a
/// NodeClaim. The other pod's NodeClaim carries one value per custom requirement
/// (`nodeclaimtemplate.go resolveCustomLabelsFromRequirements`; provisioning `suite_test.go`
/// "should label nodes"): upstream's `Any()` picks at random, ours the smallest admitted value
/// (differs on purpose: plans are deterministic); `DoesNotExist` gives no label.
#[test]
fn a_pod_selecting_the_node_class_label_is_refused_and_custom_keys_get_a_value() {
    let plan = plan_fixture("req-line-by-line/node-class-selector.yaml");
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{plan:#}");
    assert!(pending[0]["pod"]
        .as_str()
        .unwrap()
        .starts_with("default/by-class-"));
    assert_eq!(pending[0]["reasonCode"], "RestrictedLabel", "{plan:#}");
    assert!(
        (pending[0]["reason"].as_str().unwrap()).contains("karpenter.k8s.aws/ec2nodeclass"),
        "{plan:#}"
    );
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{plan:#}");
    let labels = &claims[0]["labels"];
    for (key, value) in [
        ("example.com/team", "0"),
        ("example.com/tier", "gold"),
        ("example.com/gen", "7"),
        ("example.com/shard", "2"),
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ("karpenter.sh/nodepool", "default"),
    ] {
        assert_eq!(labels[key], value, "{key}: {labels:#}");
    }
    assert_eq!(labels["example.com/legacy"], Value::Null, "{labels:#}");
}

/// core v1.14.1 `nodepool_validation.go RuntimeValidate` → `ValidateRequirement` →
/// `IsRestrictedLabel`: a NodePool requiring the node class label never becomes ready (the v1
/// CRD's CEL list lets it through). Before s31-linereq we planned with it.
#[test]
fn a_pool_requiring_the_node_class_label_is_refused() {
    let file = fixture("req-line-by-line/pool-requires-node-class.yaml");
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &file.to_string_lossy(),
            "--region",
            "us-east-1",
        ],
        b"",
    );
    run.assert_refused_in_one_line(
        "a NodePool requiring karpenter.k8s.aws/ec2nodeclass",
        "spec.template.spec.requirements[0].key",
    );
}

/// core v1.14.1 `drift.go areRequirementsDrifted`: the pool's `Gt 6` + `Lt 9` on the instance
/// generation no longer admits the node's `5`: `RequirementsDrifted`, the rule said as the pool
/// writes it. Before s31-linereq we said `Gte 7, Lte 8` (the algebra's inclusive bounds; left by
/// s27-linesched). The NodeClaim carries the node class requirement v1 Karpenter writes, which
/// the v1 NodeClaim CRD accepts.
#[test]
fn requirement_drift_says_the_rule_as_the_pool_writes_it() {
    let file = fixture("req-line-by-line/generation-gt.yaml");
    let args = [
        "drift",
        "check",
        "-f",
        &file.to_string_lossy(),
        "-o",
        "json",
    ];
    let run = karpenter(&args, b"");
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    let node = &doc["nodes"][0];
    assert_eq!(node["reason"], "RequirementsDrifted", "{doc:#}");
    assert_eq!(
        node["detail"],
        "karpenter.k8s.aws/instance-generation=5 no longer matches \
         karpenter.k8s.aws/instance-generation Gt 6, Lt 9",
        "{doc:#}"
    );
}
