//! On-demand prices from the AWS Pricing API (`pricing:GetProducts`), against moto with
//! `tests/moto/server.py`'s price list (`tests/moto/pricing.json`: us-east-1 at the embedded
//! snapshot's prices, eu-west-1 ordering c5.large below c6a.large, the snapshot the other way).
//! Mirrors `aws v1.14.1: pkg/controllers/providers/pricing/suite_test.go` "should update
//! on-demand pricing with response from the pricing API" and "should update pricing when we
//! make multiple paginated calls to the on-demand pricing API" end to end.

use kubectl_karpenter::cloud::Cloud;
use serde_json::Value;

use crate::moto::Moto;
use crate::provision_live::{walkthrough_manifest, Walk};

/// The adapter asks both of Karpenter's queries (shared tenancy, bare metal) with every page
/// (the fixture pages by two), keeps Linux without pre-installed software only, and reads the
/// USD price of each entry.
#[test]
fn get_products_reads_every_page_of_both_queries() {
    let moto = Moto::shared();
    let cloud = moto.cloud();
    let prices = cloud.on_demand_prices().unwrap();
    let expected = [
        ("c5.large", 0.085),
        ("c6a.2xlarge", 0.306),
        ("c6a.large", 0.0765),
        ("m5.large", 0.096),
        ("m5.metal", 4.608),
    ];
    assert_eq!(
        prices
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        expected,
        "the Windows m5.large (0.188) is filtered out"
    );
    let counts = cloud.call_counts();
    assert_eq!(
        counts.get("Pricing.GetProducts"),
        3,
        "two pages of shared tenancy, one of bare metal: {}",
        counts.summary()
    );
}

/// A live `provision --dry-run` in eu-west-1, a pool allowing c5.large and c6a.large: the
/// region's prices make c5.large the cheaper (the embedded us-east-1 list makes it c6a.large),
/// and Karpenter, pricing by its region's GetProducts answer, launches c5.large; so does the
/// plan, at the region's price, assuming nothing about prices.
#[test]
fn live_dry_run_in_eu_west_1_picks_the_regions_cheaper_type() {
    let walk = Walk::build(
        "pricing-eu-west-1",
        &["--region", "eu-west-1"],
        "crds/v1beta1",
        |_, c| c,
    );
    let manifest = walkthrough_manifest().replace(
        "        - key: karpenter.k8s.aws/instance-category\n          operator: In\n          values: [\"c\", \"m\", \"r\"]",
        "        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"c5.large\", \"c6a.large\"]",
    );
    assert!(manifest.contains("c6a.large"));
    walk.apply("pool.yaml", &manifest);
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "1"]);
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--dry-run", "-v", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let claims = doc["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{doc}");
    assert_eq!(claims[0]["instanceType"], "c5.large", "{doc}");
    assert_eq!(
        claims[0]["pricePerHour"].as_f64(),
        Some(0.0712),
        "the region's price: {doc}"
    );
    assert!(
        !out.stderr.contains("assuming: on-demand"),
        "{}",
        out.stderr
    );
}
