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
    let doc = sc.nodes_doc("gates", &["--feature-gates", gates]);
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

/// `consolidate -f` and `nodes -f` on the fixture with `extra` flags: the `big` node's decision
/// in each.
fn t3_decisions(extra: &[&str]) -> (String, String) {
    let fixture = crate::support::fixture("decision-gates/t3-memory.yaml");
    let fixture = fixture.to_string_lossy();
    let mut decisions = Vec::new();
    for command in ["consolidate", "nodes"] {
        let mut args = vec![command, "-f", &fixture, "--now", "2024-06-24T12:00:00Z"];
        args.extend(["-o", "json"]);
        args.extend(extra);
        let run = karpenter(&args, b"");
        assert!(run.code <= 1, "{command} {extra:?}: {}", run.stderr);
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        let node = &doc["nodes"].as_array().unwrap()[0];
        let decision = match command {
            "nodes" => &node["consolidation"]["decision"],
            _ => &node["decision"],
        };
        decisions.push(decision.as_str().unwrap().to_string());
    }
    (decisions.remove(0), decisions.remove(0))
}

/// `--vm-memory-overhead-percent` / `--reserved-enis` on `consolidate` and `nodes`, as on
/// `provision` (aws v1.14.1 `pkg/operator/options/options.go`, `instancetype/types.go`
/// `memory`): a t3.large's allocatable holds the 7000Mi pod only at 0 % overhead, so only then
/// is the t3.xlarge replaced by one. Before, these commands followed only the controller's.
#[test]
fn consolidate_and_nodes_size_types_with_the_aws_settings_flags() {
    let (report, column) = t3_decisions(&[]);
    assert_eq!((report.as_str(), column.as_str()), ("none", "none"));
    let (report, column) = t3_decisions(&["--vm-memory-overhead-percent", "0"]);
    assert_eq!((report.as_str(), column.as_str()), ("replace", "replace"));
    let fixture = crate::support::fixture("decision-gates/t3-memory.yaml");
    let fixture = fixture.to_string_lossy();
    for command in ["consolidate", "nodes"] {
        let run = karpenter(&[command, "-f", &fixture, "--reserved-enis", "-1"], b"");
        assert_eq!(run.code, 2, "{command}: {}", run.stderr);
    }
}
