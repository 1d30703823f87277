//! The unavailable-offerings cache through the binary (`aws v1.14.1:
//! pkg/cache/unavailableofferings.go`, `pkg/providers/instance/instance.go`
//! `updateUnavailableOfferingsCache`): moto answers `InsufficientInstanceCapacity` for c5.large
//! in every zone (`--fleet-ice c5.large`); one live `provision --yes` launches two NodeClaims
//! (hostname anti-affinity, types pinned to c5.large and c5.xlarge). The first CreateFleet asks
//! for c5.large, is told ICE and launches c5.xlarge; the second NodeClaim's CreateFleet does not
//! ask for c5.large again (no pool error), as Karpenter's launches within the cache's three
//! minutes do not.

use serde_json::Value;

use crate::provision_live::{one_pod_per_node_manifest, Walk};

#[test]
fn a_second_launch_of_the_run_does_not_ask_for_the_iced_type() {
    let walk = Walk::build(
        "ice-memory",
        &["--fleet-ice", "c5.large"],
        "crds/v1beta1",
        |_, c| c,
    );
    let manifest = one_pod_per_node_manifest().replace(
        "        - key: kubernetes.io/arch\n",
        "        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"c5.large\", \"c5.xlarge\"]\n        - key: kubernetes.io/arch\n",
    );
    walk.apply("ice.yaml", &manifest);
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);
    let run = walk.run(&["karpenter", "provision", "--yes", "-o", "json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let planned: Vec<&str> = doc["plan"]["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["instanceType"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(planned, ["c5.large", "c5.large"], "{doc:#}");
    let launched = doc["launched"].as_array().unwrap();
    assert_eq!(launched.len(), 2, "{doc:#}");
    let types: Vec<&str> = launched
        .iter()
        .map(|l| l["instanceType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["c5.xlarge", "c5.xlarge"], "{doc:#}");
    let errors = |l: &Value| -> Vec<String> {
        l["poolErrors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e.as_str().unwrap().to_string())
            .collect()
    };
    let first = errors(&launched[0]);
    assert!(!first.is_empty(), "{doc:#}");
    assert!(
        first
            .iter()
            .all(|e| e.starts_with("InsufficientInstanceCapacity c5.large/")),
        "{first:?}"
    );
    assert!(errors(&launched[1]).is_empty(), "{doc:#}");
    assert_eq!(walk.launched().len(), 2);
}
