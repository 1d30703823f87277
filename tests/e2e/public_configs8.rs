//! Public configurations swept in session 23 (docs/upstream-tests.md "Public configurations
//! swept (session 23)"), through the binary where the difference was in reading the files.

use serde_json::Value;

use crate::support::{fixture, karpenter};

/// karpenter-blueprints `disruption-budgets` with its plan written back as NodeClaims that leave
/// out `spec.expireAfter`: the NodeClaim CRD defaults it to 720h (core v1.14.1
/// `pkg/apis/v1/nodeclaim.go`), and `nodeclaim/expiration/controller.go` deletes an expired
/// claim whatever the budgets say. Inside the 720h the all-day `nodes: "0"` budget holds both
/// nodes; on 2024-07-02 both expire (we used to read the absent field as "never").
#[test]
fn nodeclaims_without_expire_after_expire_after_the_crd_default_past_a_zero_budget() {
    let file = fixture("sweep8/disruption-budgets-no-expire-after.yaml");
    let file = file.to_string_lossy();
    let methods = |now: &str| -> Vec<String> {
        let run = karpenter(
            &["consolidate", "-f", &file, "--now", now, "-o", "json"],
            b"",
        );
        let doc: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}\n{}", run.stdout, run.stderr));
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["method"].as_str().unwrap_or("none").to_string())
            .collect()
    };
    assert_eq!(methods("2024-06-24T12:00:00Z"), ["none", "none"]);
    assert_eq!(
        methods("2024-07-02T12:00:00Z"),
        ["expiration", "expiration"]
    );
}

/// A pod with `spec.schedulingGates` is `SchedulingGated`, never `Unschedulable`, so Karpenter
/// (core v1.14.1 `pkg/utils/pod/scheduling.go` `FailedToSchedule`) launches nothing for it: only
/// its ungated copy gets a NodeClaim, and the gated one is named as set aside (we used to plan
/// a 4-GPU node for each).
#[test]
fn a_pod_with_scheduling_gates_gets_no_nodeclaim() {
    let file = fixture("sweep8/gated-training-pod.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(
        &["provision", "--dry-run", "-v", "-f", &file, "-o", "json"],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let claims = doc["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{}", run.stdout);
    assert_eq!(
        claims[0]["pods"],
        serde_json::json!(["default/ml-training-job-ungated"])
    );
    assert!(
        run.stderr.contains("Pod/ml-training-job (")
            && run.stderr.contains("gated by spec.schedulingGates"),
        "{}",
        run.stderr
    );
    // Without -v the plan still says why a pending pod got nothing, in one line.
    let quiet = karpenter(&["provision", "--dry-run", "-f", &file], b"");
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert!(
        quiet.stderr.contains(
            "warning: 1 pending pod is held back by spec.schedulingGates: Karpenter provisions nothing for them"
        ),
        "{}",
        quiet.stderr
    );
}
