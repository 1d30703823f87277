//! What `consolidate`'s simulations count for topology, through the binary (docs/upstream-tests.md
//! "Consolidation simulations, line by line (s26-simulate)"): every bound pod but those the
//! simulation places again, as Karpenter's `SimulateScheduling` hands exactly those to the
//! scheduler (`core v1.14.1 pkg/controllers/disruption/helpers.go`, `scheduling/topology.go
//! countDomains` skipping `excludedPods`). Fixtures in `tests/fixtures/consolidate-simulation/`
//! (our own manifests, the embedded catalog in us-east-1).

use serde_json::Value;

use crate::support::consolidate_fixture;

const NOW: &str = "2024-06-24T12:00:00Z";

/// `consolidate -f FIXTURE --now NOW -o json`: the report.
fn report(name: &str) -> Value {
    consolidate_fixture(&format!("consolidate-simulation/{name}"), NOW)
}

/// (decision, nodes, replacement zones) of each action.
fn actions(doc: &Value) -> Vec<(String, Vec<String>, Vec<String>)> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    doc["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["decision"].as_str().unwrap().to_string(),
                strings(&a["nodes"]),
                strings(&a["replacement"]["zones"]),
            )
        })
        .collect()
}

/// No upstream test; helpers.go line 90 (a candidate hands only its reschedulable pods to the
/// scheduler) and topology.go `countDomains`: the DaemonSet's logger pod stays on candidate `a`
/// and meets `web`'s zone affinity in us-east-1a, so `web` moves to `room` and `a` is deleted.
/// Before s26-simulate no pod of `a` counted: `web` fitted nowhere and `a` stayed.
#[test]
fn a_daemonset_pod_staying_on_the_candidate_meets_a_zone_affinity() {
    let doc = report("daemonset-affinity.yaml");
    assert_eq!(
        actions(&doc),
        [("delete".to_string(), vec!["a".to_string()], vec![])]
    );
}

/// No upstream test; helpers.go line 98 (a deleting node hands only its currently reschedulable
/// pods to the scheduler: not a `do-not-disrupt` one) and topology.go `countDomains`: `web-1`
/// stays on deleting `going` (us-east-1a) and counts for the `app=web` zone spread, so `web-2`
/// of `a` (us-east-1b) cannot go to `room` in us-east-1a and `a` is replaced in us-east-1b.
/// Before s26-simulate `web-1` did not count and `a` was deleted.
#[test]
fn a_do_not_disrupt_replica_on_a_deleting_node_counts_for_a_zone_spread() {
    let doc = report("deleting-spread.yaml");
    assert_eq!(
        actions(&doc),
        [(
            "replace".to_string(),
            vec!["a".to_string()],
            vec!["us-east-1b".to_string()]
        )]
    );
}
