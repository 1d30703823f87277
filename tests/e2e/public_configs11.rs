//! Public configurations swept in session 25 (docs/upstream-tests.md "Public configurations
//! swept (session 25)"), through the binary where the difference was in reading the files.

use crate::support::{fixture, karpenter};

/// The JSON plan of a `tests/fixtures/sweep11` file (the run must succeed).
fn plan_of(name: &str) -> serde_json::Value {
    let file = fixture(&format!("sweep11/{name}"));
    let file = file.to_string_lossy();
    let run = karpenter(
        &["provision", "--dry-run", "-q", "-o", "json", "-f", &file],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// Pod-level limits over containers that request less: the API server defaults the pod-level
/// requests to the containers' aggregate (`k8s.io/kubernetes pkg/apis/core/v1/defaults.go`
/// `defaultPodRequests`) before Karpenter reads the pod, so it plans 500m / 50Mi — an
/// `m5.large`. We took the pod-level limits (4 CPUs / 8Gi) as requests: an `m5.2xlarge`.
#[test]
fn pod_level_limits_are_not_requests() {
    let plan = plan_of("pod-level-limits.yaml");
    let claim = &plan["nodeClaims"][0];
    assert_eq!(claim["instanceType"], "m5.large", "{plan:#}");
    assert_eq!(claim["requests"]["cpu"], "500m", "{plan:#}");
    assert_eq!(claim["requests"]["memory"], "50Mi", "{plan:#}");
}

/// A Node written without `status.allocatable` (a world written back from a plan): the API
/// server stores it with its capacity there (`SetDefaults_NodeStatus`), so Karpenter binds a
/// pending pod the node has room for to it. We read an empty allocatable and planned a new
/// NodeClaim (a `c6g.medium`).
#[test]
fn a_node_without_allocatable_takes_pods_up_to_its_capacity() {
    let plan = plan_of("node-without-allocatable.yaml");
    assert_eq!(plan["nodeClaims"], serde_json::json!([]), "{plan:#}");
    assert_eq!(
        plan["existingNodes"][0]["pods"],
        serde_json::json!(["batch/newpod"]),
        "{plan:#}"
    );
}
