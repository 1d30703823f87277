//! Cluster state, in-flight capacity and the pods Karpenter sees, read line by line against core
//! v1.14.1 (`pkg/controllers/state/{cluster,statenode}.go`, `state/informer/`,
//! `provisioning/provisioner.go`, `utils/pod/scheduling.go`, `utils/disruption/disruption.go`;
//! docs/upstream-tests.md "Cluster state and in-flight capacity, line by line
//! (s29-linestate)"), replayed through the binary. Fixtures in `tests/fixtures/state-line-by-line/`
//! (our own manifests, the embedded catalog in us-east-1).

use crate::support::{consolidate_fixture, plan_fixture};

const NOW: &str = "2024-06-24T12:00:00Z";

/// The nodes `consolidate -f FIXTURE --region us-east-1 --now NOW -o json` removes, in order.
fn deleted(name: &str) -> Vec<String> {
    let doc = consolidate_fixture(&format!("state-line-by-line/{name}"), NOW);
    (doc["actions"].as_array().unwrap().iter())
        .flat_map(|a| a["nodes"].as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// No upstream test; Karpenter never reads a PriorityClass: `EvictionCost`
/// (`utils/disruption/disruption.go`) reads `spec.priority`, which the Priority admission plugin
/// fills from the class the pod names. `coredns` on `a` names the input's own class
/// `cluster-dns` (value 1e9) and costs 10 (clamped), `web` on `b` costs 1, so
/// `consolidation.go sortCandidates` tries `b` first and its pod takes the one place on `c`.
/// Before s29-linestate the class was skipped, both cost 1, the tie went by name and `a` went.
#[test]
fn a_pod_of_the_inputs_own_priority_class_makes_its_node_the_last_to_consolidate() {
    assert_eq!(deleted("own-priority-class.yaml"), ["b"]);
}

/// No upstream test; as above, with `coredns` naming no class under a `globalDefault` class of
/// value 1e9 (admission's `getDefaultPriorityClass`) and `web` naming `batch` (value 0): `b`
/// goes first. Before s29-linestate `a` was deleted.
#[test]
fn a_global_default_priority_class_gives_its_value_to_pods_naming_none() {
    assert_eq!(deleted("global-default-priority-class.yaml"), ["b"]);
}

/// No upstream test; `state/informer/nodeclaim.go` keeps only the NodeClaims
/// `nodeclaimutils.IsManaged` accepts (aws: `EC2NodeClass`), so node `c`, whose NodeClaim names
/// EKS Auto Mode's `NodeClass`, is a Node without a NodeClaim: capacity, never a candidate
/// (`statenode.go ValidateNodeDisruptable`). `a` and `b` are `do-not-disrupt`. Before
/// s29-linestate `c` was deleted (its pod fits on `b`).
#[test]
fn an_eks_auto_mode_node_is_never_a_candidate() {
    assert!(deleted("auto-mode-node.yaml").is_empty());
}

/// No upstream test; `scheduling/topology.go countDomains` l.378-382 skips state nodes without a
/// Node: NodeClaim `flight`, launched in us-east-1c (which the pool, narrowed to 1a/1b, no longer
/// offers) and not registered, is no zone domain. `web-0` runs in 1a; `web-1` and `web-2` (zone
/// spread, `maxSkew: 1`) get a NodeClaim in 1b and `one`. Before s29-linestate 1c was an empty
/// domain and `web-2` went onto `flight`.
#[test]
fn an_in_flight_nodeclaims_zone_is_no_spread_domain() {
    let p = plan_fixture("state-line-by-line/in-flight-zone-spread.yaml");
    assert_eq!(
        p["unschedulable"].as_array().map(Vec::len),
        Some(0),
        "{p:#}"
    );
    let on = |name: &str| -> usize {
        (p["existingNodes"].as_array().into_iter().flatten())
            .filter(|e| e["name"] == name)
            .map(|e| e["pods"].as_array().map_or(0, Vec::len))
            .sum()
    };
    assert_eq!((on("flight"), on("one")), (0, 1), "{p:#}");
}
