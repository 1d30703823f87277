//! CapacityBuffer (`autoscaling.x-k8s.io/v1beta1`) through the binary: core designs/
//! capacity-buffers.md's four examples (`tests/fixtures/capacity-buffer/design-examples.yaml`)
//! planned as Karpenter v1.14.1 does with its `CapacityBuffer` feature gate on (core
//! `pkg/controllers/capacitybuffer`, `pkg/state/virtualpods`, `provisioning/buffers.go`), and
//! nothing of them with the gate off (its default, `pkg/operator/options/options.go`).

use serde_json::{json, Value};

use crate::support::{fixture, karpenter, Run};

/// `provision --dry-run -o json -v` on the examples, with `extra` flags.
fn plan(extra: &[&str]) -> (Run, Value) {
    let examples = fixture("capacity-buffer/design-examples.yaml");
    let mut args = vec![
        "provision",
        "--dry-run",
        "-o",
        "json",
        "-v",
        "--region",
        "us-east-1",
    ];
    args.extend_from_slice(extra);
    args.extend(["-f", examples.to_str().unwrap()]);
    let run = karpenter(&args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = serde_json::from_str(&run.stdout).unwrap();
    (run, plan)
}

/// Gate on: each buffer's virtual pods are planned with the 62 real pods, as capacity per
/// buffer (`capacityBuffers`), never among the pods to bind; Example 2 follows the code
/// (`controller.go` `computeReplicas`: the larger of `replicas` 10 and 20% of 60 = 12), not the
/// document's "cap at 10"; Example 4's limits hold 10 chunks; the batch chunks land on the
/// `batch` pool; the buffer whose Deployment is missing is named in a warning.
#[test]
fn the_design_examples_are_planned_behind_the_gate() {
    let (run, plan) = plan(&["--feature-gates", "CapacityBuffer=true"]);
    let buffers = plan["capacityBuffers"].as_array().unwrap();
    let replicas: Vec<(&str, u64, &str)> = buffers
        .iter()
        .map(|b| {
            (
                b["name"].as_str().unwrap(),
                b["replicas"].as_u64().unwrap(),
                b["provisioning"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        replicas,
        [
            (
                "batch-workloads/batch-job-capacity",
                5,
                "RequiresNewCapacity"
            ),
            ("production/api-service-buffer", 12, "RequiresNewCapacity"),
            ("production/web-app-buffer", 5, "RequiresNewCapacity"),
            ("workers/worker-buffer", 10, "RequiresNewCapacity"),
        ]
    );
    let claims = plan["nodeClaims"].as_array().unwrap();
    let real: usize = claims
        .iter()
        .map(|c| c["pods"].as_array().unwrap().len())
        .sum();
    assert_eq!(real, 62, "{plan:#}");
    assert!(claims
        .iter()
        .flat_map(|c| c["pods"].as_array().unwrap())
        .all(|p| !p.as_str().unwrap().contains("capacity-buffer-")));
    let batch = &buffers[0];
    let placed: usize = batch["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pods"].as_array().unwrap().len())
        .sum();
    assert_eq!(placed, 5);
    for c in batch["nodeClaims"].as_array().unwrap() {
        let claim = claims.iter().find(|x| x["name"] == c["name"]).unwrap();
        assert_eq!(claim["nodePool"], "batch");
    }
    assert_eq!(
        batch["nodeClaims"][0]["pods"][0],
        json!("batch-workloads/capacity-buffer-batch-job-capacity-1")
    );
    assert!(
        run.stderr.contains("CapacityBuffer/production/orphan")
            && run.stderr.contains("ScalableRefNotFound"),
        "{}",
        run.stderr
    );
}

/// Gate off (the default): the same input plans the real pods alone, and `-v` lists each buffer
/// as ignored, naming the gate.
#[test]
fn the_design_examples_change_nothing_with_the_default_gates() {
    let (run, plan) = plan(&[]);
    assert!(plan.get("capacityBuffers").is_none(), "{plan:#}");
    let real: usize = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pods"].as_array().unwrap().len())
        .sum();
    assert_eq!(real, 62);
    assert!(
        run.stderr
            .contains("CapacityBuffer/batch-workloads/batch-job-capacity")
            && run
                .stderr
                .contains("CapacityBuffer feature gate (off by default"),
        "{}",
        run.stderr
    );
}
