//! Public configurations swept in session 35 (docs/upstream-tests.md "Public configurations
//! swept (session 35)"), through the binary. Fixtures: `tests/fixtures/public/s35/`, each with
//! its source in its first comment (and `SOURCES.md`).

use crate::support::{claims_launched as claims, fixture, fixture_json, karpenter};

fn path(file: &str) -> String {
    fixture(&format!("public/s35/{file}"))
        .to_string_lossy()
        .into_owned()
}

/// A JupyterHub platform's Bottlerocket class maps only a 30Gi `/dev/xvda` (the OS volume), so
/// every type has the default 20Gi of ephemeral storage (aws `types.go` `ephemeralStorage`): two
/// 10Gi notebooks take a node each and a 25Gi one fits no type. Its reason names no limits:
/// the pool's 1000-CPU limit left out types, but none of them would hold 25Gi either (core
/// `scheduler.go` `addToNewNodeClaim` names limits only when they are why).
#[test]
fn a_bottlerocket_class_mapping_only_xvda_leaves_twenty_gi_and_names_no_limit() {
    let (run, plan) = fixture_json(
        &["provision", "--dry-run"],
        "public/s35/jupyter-bottlerocket-xvda.yaml",
    );
    // 1: a pod is left pending (docs/spec.md §2).
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(claims(&plan).len(), 2);
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    let reason = pending[0]["reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("NodePool jupyter-nodepool: no instance type has ephemeral-storage 25Gi"),
        "{reason}"
    );
}

/// Four sources refused in one line each, as the API server of their version would: a v1
/// EC2NodeClass without `amiSelectorTerms` (FinOps guide; v1.14.1 CRD `required`), a v1.14.1
/// class with a future `enclaveOptions` field (strict field validation), a v1beta1 class without
/// `amiFamily` (v0.37.7 CRD `required`), a v1 pool with v1beta1's `disruption.expireAfter`.
#[test]
fn four_public_manifests_are_refused_in_one_line_naming_the_field() {
    for (file, want) in [
        (
            "finops-bottlerocket-as-written.yaml",
            "EC2NodeClass/general: spec.amiSelectorTerms: Required value",
        ),
        (
            "enclave-overlay.yaml",
            "EC2NodeClass/enclave-enabled: spec.enclaveOptions: unknown field",
        ),
        (
            "golden-ami-v1beta1.yaml",
            "EC2NodeClass/golden-ami-node-class: spec.amiFamily: Required value",
        ),
        (
            "cost-guide-ko-v1-as-written.yaml",
            "NodePool/default: spec.disruption.expireAfter: unknown field",
        ),
    ] {
        karpenter(&["provision", "--dry-run", "-f", &path(file)], b"")
            .assert_refused_in_one_line(file, want);
    }
}
