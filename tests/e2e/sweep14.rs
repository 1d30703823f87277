//! Public configurations swept in session 29 (docs/upstream-tests.md "Public configurations
//! swept (session 29)"), through the binary where the difference was in reading the files.

use crate::support::{fixture, karpenter};

/// A Dynamic Resource Allocation walkthrough's manifests (a `DeviceClass`, a
/// `ResourceClaimTemplate`, the Deployment claiming from it) beside an ordinary Deployment:
/// Karpenter v1.14.1 under its default `--ignore-dra-requests=true` reads no DRA object (core
/// `provisioner.go` `NewScheduler`) and refuses only the claiming pod (`scheduler.go` `add`,
/// `DRAError`). We refused the whole input (exit 2, "unsupported kind").
#[test]
fn dra_objects_are_skipped_and_only_the_claiming_pod_is_refused() {
    let file = fixture("sweep14/dra-claim-template.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(&["provision", "--dry-run", "-f", &file, "-o", "json"], b"");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let unschedulable = plan["unschedulable"].as_array().unwrap();
    assert_eq!(unschedulable.len(), 1, "{plan:#}");
    assert_eq!(unschedulable[0]["pod"], "default/pytorch-cuda-check-0");
    let reason = unschedulable[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("Dynamic Resource Allocation"), "{reason}");
    let placed: usize = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pods"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(placed, 2, "{plan:#}");
}
