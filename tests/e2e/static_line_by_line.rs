//! Static NodePools and NodeOverlays read line by line against core v1.14.1
//! (`pkg/controllers/static/{provisioning,deprovisioning}/controller.go`,
//! `state/statenodepool.go`, `disruption/staticdrift.go`, `nodeoverlay/controller.go`;
//! docs/upstream-tests.md "Static NodePools and NodeOverlays, line by line (s30-linestatic)"),
//! replayed through the binary. Fixtures in `tests/fixtures/static-line-by-line/` (our own
//! manifests, the embedded catalog in us-east-1).

use crate::support::plan_fixture;

/// The NodeClaims `provision --dry-run -f FIXTURE` plans, by name.
fn planned(name: &str) -> Vec<String> {
    let p = plan_fixture(&format!("static-line-by-line/{name}"));
    (p["nodeClaims"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// No upstream It; `static/provisioning/controller.go Reconcile` asks `ReserveNodeCount` for
/// replicas − active = 1, which grants limit − (active + deleting + pending disruption) =
/// 2 − 2 = 0 ("nodepool node limit reached"): `fixed` (replicas 2, `limits.nodes: 2`) with
/// `running` and `leaving` (deletionTimestamp set) launches nothing until `leaving` is gone.
/// Before s30-linestatic the limit was read from the pool's usage, which leaves deleting nodes
/// out, and `fixed-1` was planned.
#[test]
fn a_deleting_node_still_counts_against_a_static_pools_node_limit() {
    assert!(planned("limit-counts-deleting.yaml").is_empty());
}

/// No upstream It; `state/cluster.go UpdateNodeClaim` counts NodeClaim `fixed-abcde` (no
/// `status.providerID` yet) as an active NodeClaim of `fixed` (replicas 2) from its creation,
/// and `static/provisioning/controller.go Reconcile` does not wait for it to resolve (it checks
/// `Synced` only before the first sync): 2 − 1 = 1 NodeClaim. Before s30-linestatic it was not
/// counted and `fixed-1` and `fixed-2` were planned.
#[test]
fn a_nodeclaim_not_launched_yet_is_one_of_a_static_pools_replicas() {
    assert_eq!(planned("unresolved-claim-counts.yaml"), ["fixed-1"]);
}

/// No upstream It; a static NodeClaim launches through `cloudprovider.Create`, which the
/// overlay store does not decorate (`cloudprovider/overlay/cloudprovider.go`), without
/// `karpenter.sh/price-overlay-applied` (`scheduling/nodeclaimtemplate.go ToNodeClaim`): the
/// AWS provider's `lowest-price` fleet takes c6a.large at EC2's $0.0765/h, not c7a.large, which
/// NodeOverlay `c7a-commitment` prices at $0.0616/h. Before s30-linestatic `fixed-1` was
/// planned on c7a.large.
#[test]
fn a_static_nodeclaim_is_not_priced_by_a_node_overlay() {
    let p = plan_fixture("static-line-by-line/price-overlay-static.yaml");
    let claim = &p["nodeClaims"][0];
    assert_eq!(claim["instanceType"], "c6a.large");
    assert!((claim["pricePerHour"].as_f64().unwrap() - 0.0765).abs() < 1e-9);
    assert!(claim["annotations"]
        .get("karpenter.sh/price-overlay-applied")
        .is_none());
}
