//! core v1.14.1 `pkg/controllers/nodepool/hash/suite_test.go` ("Static Drift Hash"): which
//! NodePool fields move `karpenter.sh/nodepool-hash` (v3). The controller writes
//! `NodePool.Hash()`, which hashes `spec.template` with the requirements tagged
//! `hash:"ignore"` (`pkg/apis/v1/nodepool.go`); limits, disruption and weight sit outside the
//! template.

use serde_json::{json, Value};

use super::node_pool_hash;
use super::tests::pool;

/// The suite's `BeforeEach` NodePool.
fn base() -> Value {
    json!({
        "template": {
            "metadata": {
                "annotations": {"keyAnnotation": "valueAnnotation", "keyAnnotation2": "valueAnnotation2"},
                "labels": {"keyLabel": "valueLabel"}
            },
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [],
                "taints": [{"key": "key", "effect": "NoExecute"}],
                "startupTaints": [{"key": "key", "effect": "NoExecute"}],
                "expireAfter": "5m",
                "terminationGracePeriod": "5m"
            }
        },
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}
    })
}

fn hash(spec: Value) -> String {
    node_pool_hash(&pool(spec), "v3").unwrap()
}

/// "should update the drift hash when NodePool static field is updated": new template labels
/// (the annotations re-ordered only) give another hash.
#[test]
fn a_static_template_field_moves_the_nodepool_hash() {
    let mut changed = base();
    changed["template"]["metadata"]["labels"] = json!({"keyLabeltest": "valueLabeltest"});
    changed["template"]["metadata"]["annotations"] =
        json!({"keyAnnotation2": "valueAnnotation2", "keyAnnotation": "valueAnnotation"});
    assert_ne!(hash(changed), hash(base()));
}

/// "should not update the drift hash when NodePool behavior field is updated": limits,
/// consolidation policy and delay, the template's requirements and the weight leave it.
#[test]
fn behaviour_fields_leave_the_nodepool_hash() {
    let mut changed = base();
    changed["limits"] = json!({"cpu": "16"});
    changed["disruption"] = json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"});
    changed["template"]["spec"]["requirements"] = json!([
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test"]},
        {"key": "topology.kubernetes.io/zone", "operator": "Gt", "values": ["1"]},
        {"key": "topology.kubernetes.io/zone", "operator": "Lt", "values": ["1"]}
    ]);
    changed["weight"] = json!(80);
    assert_eq!(hash(changed), hash(base()));
}
