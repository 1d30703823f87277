//! Disruption candidates, budgets and cost read line by line against core v1.14.1
//! (`pkg/controllers/disruption/types.go`, `helpers.go`, `state/statenode.go`,
//! `utils/pod/scheduling.go`, `utils/pdb/pdb.go`, `utils/disruption/disruption.go`;
//! docs/upstream-tests.md "Disruption candidates, budgets and cost, line by line
//! (s28-linecand)"), replayed through the binary. Fixtures in
//! `tests/fixtures/disruption-candidates-line-by-line/` (our own manifests, the embedded
//! catalog in us-east-1).

use serde_json::Value;

use crate::support::{consolidate_fixture, fixture, karpenter};

const NOW: &str = "2024-06-24T12:00:00Z";

/// `consolidate -f FIXTURE --region us-east-1 --now NOW -o json`.
fn consolidate(name: &str) -> Value {
    consolidate_fixture(&format!("disruption-candidates-line-by-line/{name}"), NOW)
}

/// (method, nodes) of each action.
fn actions(doc: &Value) -> Vec<(String, Vec<String>)> {
    (doc["actions"].as_array().unwrap().iter())
        .map(|a| {
            let nodes = a["nodes"].as_array().unwrap();
            (
                a["method"].as_str().unwrap_or("").to_string(),
                nodes
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

/// No upstream test; `utils/pod/scheduling.go IsOwnedBy` compares `apiVersion` and `kind`, so
/// the pod of an OpenKruise Advanced DaemonSet (`apps.kruise.io/v1alpha1`) on `a` is
/// reschedulable (`IsReschedulable`) and `a` is not empty (`types.go IsEmpty`): it stays (its
/// pod needs a place and no cheaper type exists), while `b`, holding an `apps/v1` DaemonSet's
/// pod, goes for emptiness. Before s28-linecand both were deleted as empty.
#[test]
fn a_daemonset_of_another_api_group_keeps_its_node_from_being_empty() {
    let doc = consolidate("foreign-daemonset-owner.yaml");
    assert_eq!(
        actions(&doc),
        [("emptiness".to_string(), vec!["b".to_string()])],
        "{doc:#}"
    );
}

/// No upstream test; `k8s.io/kubernetes pkg/apis/core/validation ValidatePodSpecificAnnotations`
/// refuses a pod whose `controller.kubernetes.io/pod-deletion-cost` is not a plain int32, so
/// Karpenter's `EvictionCost` (`utils/disruption/disruption.go`) never reads `"1.5"`. Before
/// s28-linecand the manifest was read and the pod's eviction cost took the fraction.
#[test]
fn a_pod_deletion_cost_that_is_no_int32_is_refused() {
    let file = fixture("disruption-candidates-line-by-line/fractional-deletion-cost.yaml");
    let run = karpenter(
        &[
            "consolidate",
            "-f",
            &file.to_string_lossy(),
            "--region",
            "us-east-1",
            "--now",
            NOW,
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("Pod/p")
            && run.stderr.contains(
                "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: invalid value \"1.5\": must be a 32bit integer"
            ),
        "{}",
        run.stderr
    );
}

/// No upstream test; `utils/disruption/disruption.go EvictionCost` reads `spec.priority`, which
/// admission fills from `priorityClassName`: `coredns` on `a` (`system-cluster-critical`, written
/// without `spec.priority`) costs 10, `web` on `b` costs 1, so `consolidation.go sortCandidates`
/// (price ÷ `RescheduleDisruptionCost`, highest first) tries `b` first and its pod takes the one
/// place on `c`. Before s28-linecand both cost 1, the tie went by name and `a` was deleted.
#[test]
fn a_system_critical_pod_makes_its_node_the_last_to_consolidate() {
    let doc = consolidate("system-priority-class.yaml");
    let deleted: Vec<String> = actions(&doc).into_iter().flat_map(|(_, n)| n).collect();
    assert_eq!(deleted, ["b"], "{doc:#}");
}
