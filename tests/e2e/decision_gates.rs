//! `--feature-gates` on `nodes` decides its CONSOLIDATION column as it decides `consolidate`'s
//! report: one spot node whose only move is a spot→spot replacement, which Karpenter makes only
//! behind `SpotToSpotConsolidation` (`core v1.14.1 pkg/controllers/disruption/consolidation.go`
//! `computeSpotToSpotConsolidation`; consolidation_test.go "cannot replace spot with spot if the
//! spotToSpotConsolidation is disabled").

use serde_json::Value;

use crate::support::karpenter;
use crate::upstream_disruption_binary::{Sc, MOST_SPOT};

/// `nodes -f - … -o json` with `gates`: the node's decision.
fn nodes_decision(sc: &Sc, gates: &str) -> String {
    let catalog = sc.catalog_path("gates");
    let catalog = catalog.to_string_lossy();
    let args = [
        "nodes",
        "-f",
        "-",
        "--now",
        &sc.now,
        "-o",
        "json",
        "--catalog",
        &catalog,
        "--feature-gates",
        gates,
    ];
    let run = karpenter(&args, sc.yaml().as_bytes());
    assert_eq!(run.code, 0, "{gates}: {}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let node = doc["nodes"].as_array().unwrap()[0].clone();
    node["consolidation"]["decision"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_nodes_column_follows_the_feature_gates_as_consolidate_does() {
    let mut sc = Sc::new();
    sc.node("n0", MOST_SPOT).pod("p0", "n0", "");
    assert_eq!(sc.run("gates-on").of("n0"), "replace/single");
    assert_eq!(
        nodes_decision(&sc, "SpotToSpotConsolidation=true"),
        "replace"
    );
    assert_eq!(sc.clone().gate_off().run("gates-off").of("n0"), "none");
    assert_eq!(nodes_decision(&sc, "SpotToSpotConsolidation=false"), "none");
    // Not a Go boolean: bad input naming the gate, as `consolidate` says it.
    let run = karpenter(
        &["nodes", "-f", "-", "--feature-gates", "CapacityBuffer=yes"],
        sc.yaml().as_bytes(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("CapacityBuffer=yes"), "{}", run.stderr);
}

/// `drift replace --feature-gates` is read before anything else: a value that is not a Go
/// boolean is bad input naming the gate, with no cluster asked (none is configured here).
#[test]
fn drift_replace_refuses_a_gate_that_is_not_a_boolean_before_connecting() {
    for gates in ["ReservedCapacity=maybe", "CapacityBuffer=1x"] {
        let run = karpenter(
            &["drift", "replace", "--dry-run", "--feature-gates", gates],
            b"",
        );
        assert_eq!(run.code, 2, "{gates}: {}", run.stderr);
        assert!(run.stderr.contains(gates), "{gates}: {}", run.stderr);
    }
}
