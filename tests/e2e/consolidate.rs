//! `consolidate` from manifests (docs/spec.md §9): the example cluster's empty node goes by
//! emptiness and one of its two half-used nodes by single-node consolidation; table, document
//! and exit codes.

use serde_json::Value;

use crate::support::{karpenter, root};

const EXAMPLE: &str = "examples/consolidate/cluster.yaml";
const NOW: &str = "2024-06-24T12:00:00Z";

#[test]
fn the_example_cluster_loses_its_empty_node_and_one_half_used_node() {
    let file = root().join(EXAMPLE);
    let file = file.to_string_lossy();
    let table = karpenter(&["consolidate", "-f", &file, "--now", NOW], b"");
    assert_eq!(table.code, 1, "actions found: exit 1\n{}", table.stderr);
    assert!(table.stdout.contains("emptiness"), "{}", table.stdout);
    assert!(
        table.stdout.contains("total savings $0.3840/hour"),
        "{}",
        table.stdout
    );

    let json = karpenter(
        &["consolidate", "-f", &file, "--now", NOW, "-o", "json"],
        b"",
    );
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["kind"], "ConsolidationReport");
    assert_eq!(doc["now"], NOW);
    let methods: Vec<&str> = doc["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["emptiness", "single"]);

    // Only the node asked about; an unknown node or a bad --now is bad input.
    let one = karpenter(&["consolidate", "-f", &file, "--now", NOW, "empty"], b"");
    assert_eq!(one.code, 1, "{}", one.stderr);
    assert!(!one.stdout.contains("under-used"), "{}", one.stdout);
    let unknown = karpenter(&["consolidate", "-f", &file, "--now", NOW, "nope"], b"");
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    let bad = karpenter(&["consolidate", "-f", &file, "--now", "yesterday"], b"");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
}
