//! Prices and offerings read line by line against aws v1.14.1
//! (`pkg/providers/pricing/pricing.go`, `pkg/providers/instancetype/offering/`) and core v1.14.1
//! (`pkg/cloudprovider/types.go`, `pkg/controllers/disruption/`; docs/upstream-tests.md "Prices
//! and offerings, line by line (s30-lineoffer)"), replayed through the binary. Fixtures in
//! `tests/fixtures/offer-line-by-line/` (our own manifests, the embedded catalog in us-east-1).

use crate::support::consolidate_fixture;

const NOW: &str = "2024-06-24T12:00:00Z";

/// No upstream test; `aws: offering/base_resolver.go ResolveOfferings` gives m5.xlarge an
/// on-demand offering in every zone of the region (`allZones`), unavailable where the class's
/// subnets (zones a and b) do not reach but priced at $0.192; core's `disruption/types.go
/// resolveNodePrice` prices node `x`, running in us-east-1c, from it, and consolidation
/// replaces it with an m5.large ($0.096) in a or b. Before s30-lineoffer zone c had no offering,
/// `x` was priced $0 and nothing was cheaper.
#[test]
fn a_node_in_a_zone_the_subnets_left_is_priced_and_replaced() {
    let doc = consolidate_fixture("offer-line-by-line/zone-without-subnet.yaml", NOW);
    let actions = doc["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{doc:#}");
    let action = &actions[0];
    assert_eq!(action["decision"], "replace", "{doc:#}");
    assert_eq!(action["nodes"], serde_json::json!(["x"]), "{doc:#}");
    let replacement = &action["replacement"];
    assert_eq!(replacement["instanceType"], "m5.large", "{doc:#}");
    assert_eq!(
        replacement["zones"],
        serde_json::json!(["us-east-1a", "us-east-1b"]),
        "{doc:#}"
    );
    let savings = action["savingsPerHour"].as_f64().unwrap_or_default();
    assert!((savings - 0.096).abs() < 1e-9, "{doc:#}");
    assert_eq!(doc["nodes"][0]["pricePerHour"], 0.192, "{doc:#}");
}
