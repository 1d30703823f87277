//! On-demand list prices from the AWS Price List Query API (`pricing:GetProducts`), asked as
//! Karpenter's pricing provider asks (`aws v1.14.1: pkg/providers/pricing/pricing.go`
//! `NewAPI`, `UpdateOnDemandPricing`, `fetchOnDemandPricing`, `onDemandPage`):
//!
//! - **Endpoint**: the API is served in a few regions only: `ap-*` regions ask `ap-south-1`,
//!   `cn-*` ask `cn-northwest-1`, `eu-*` ask `eu-central-1`, every other region `us-east-1`.
//!   The products asked for are always the cluster region's (`regionCode`).
//! - **Filters** (all `TERM_MATCH`): `regionCode` = the region, `serviceCode` = `AmazonEC2`,
//!   `preInstalledSw` = `NA`, `operatingSystem` = `Linux`, `capacitystatus` = `Used`,
//!   `marketoption` = `OnDemand`, and two queries: `tenancy` = `Shared` with
//!   `productFamily` = `Compute Instance`, then `tenancy` = `Dedicated` with
//!   `productFamily` = `Compute Instance (bare metal)`. `MaxResults` 100, every page.
//! - **Parsing**: each price-list entry is a JSON document; its
//!   `product.attributes.instanceType` is priced by any `terms.OnDemand.*.priceDimensions.*
//!   .pricePerUnit[currency]` that parses to a non-zero number (currency `CNY` in `cn-*`
//!   regions, else `USD`). An entry without an instance type, or that does not parse, is
//!   skipped.
//! - **Nothing answered**: either query answering no price makes the whole answer empty
//!   (Karpenter: "no on-demand pricing found", its previous prices kept); the caller keeps the
//!   snapshot's prices then.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The region whose Pricing API endpoint serves `region` (`pricing.go` `NewAPI`).
pub fn endpoint_region(region: &str) -> &'static str {
    if region.starts_with("ap-") {
        "ap-south-1"
    } else if region.starts_with("cn-") {
        "cn-northwest-1"
    } else if region.starts_with("eu-") {
        "eu-central-1"
    } else {
        "us-east-1"
    }
}

/// The currency the price list of `region` is read in (`onDemandPage`).
pub fn currency(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "CNY"
    } else {
        "USD"
    }
}

/// The `(field, value)` TERM_MATCH filters of the two queries for `region`: common filters
/// first, then the query's tenancy and product family.
pub fn queries(region: &str) -> [Vec<(&'static str, String)>; 2] {
    let common = |tenancy: &str, family: &str| {
        vec![
            ("regionCode", region.to_string()),
            ("serviceCode", "AmazonEC2".to_string()),
            ("preInstalledSw", "NA".to_string()),
            ("operatingSystem", "Linux".to_string()),
            ("capacitystatus", "Used".to_string()),
            ("marketoption", "OnDemand".to_string()),
            ("tenancy", tenancy.to_string()),
            ("productFamily", family.to_string()),
        ]
    };
    [
        common("Shared", "Compute Instance"),
        common("Dedicated", "Compute Instance (bare metal)"),
    ]
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PriceItem {
    product: Product,
    terms: Terms,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Product {
    attributes: Attributes,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Attributes {
    instance_type: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Terms {
    #[serde(rename = "OnDemand")]
    on_demand: BTreeMap<String, Term>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Term {
    price_dimensions: BTreeMap<String, Dimension>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Dimension {
    price_per_unit: BTreeMap<String, String>,
}

/// Adds the prices of one page of price-list entries to `prices` (`onDemandPage`): a later
/// entry of the same type wins.
pub fn add_page<'a>(
    prices: &mut BTreeMap<String, f64>,
    entries: impl IntoIterator<Item = &'a str>,
    currency: &str,
) {
    for entry in entries {
        let Ok(item) = serde_json::from_str::<PriceItem>(entry) else {
            continue;
        };
        let name = item.product.attributes.instance_type;
        if name.is_empty() {
            continue;
        }
        for term in item.terms.on_demand.values() {
            for dimension in term.price_dimensions.values() {
                let Some(Ok(price)) = dimension
                    .price_per_unit
                    .get(currency)
                    .map(|p| p.trim().parse::<f64>())
                else {
                    continue;
                };
                if price.is_finite() && price > 0.0 {
                    prices.insert(name.clone(), price);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One price-list entry as the Pricing API writes it (`aws v1.14.1: pkg/fake/pricingapi.go`
    /// `NewOnDemandPriceWithCurrency` has the same shape).
    fn entry(instance_type: &str, price: &str, currency: &str) -> String {
        serde_json::json!({
            "product": {"productFamily": "Compute Instance",
                        "attributes": {"instanceType": instance_type, "regionCode": "eu-west-1"}},
            "serviceCode": "AmazonEC2",
            "terms": {"OnDemand": {"JRTCKXETXF.T1": {"offerTermCode": "JRTCKXETXF",
                "priceDimensions": {"JRTCKXETXF.T1.6YS6EN2CT7": {
                    "unit": "Hrs", "pricePerUnit": {currency: price}}}}}},
            "version": "20260101000000"
        })
        .to_string()
    }

    /// `pkg/controllers/providers/pricing/suite_test.go` "should update on-demand pricing with
    /// response from the pricing API" (and "… when in the CN partition": the currency).
    #[test]
    fn entries_price_their_instance_type_in_the_regions_currency() {
        let mut prices = BTreeMap::new();
        let page = [
            entry("c98.large", "1.2000000000", "USD"),
            entry("c99.large", "1.23", "USD"),
            entry("c97.large", "9.9", "CNY"),
            entry("", "1.0", "USD"),
            entry("c96.large", "0.0000000000", "USD"),
            entry("c95.large", "n/a", "USD"),
            "{not json".to_string(),
        ];
        add_page(&mut prices, page.iter().map(String::as_str), "USD");
        assert_eq!(
            prices,
            BTreeMap::from([("c98.large".into(), 1.2), ("c99.large".into(), 1.23)]),
            "no type, a zero price, an unparsable price, another currency: skipped"
        );
        let mut cny = BTreeMap::new();
        add_page(
            &mut cny,
            page.iter().map(String::as_str),
            currency("cn-north-1"),
        );
        assert_eq!(cny, BTreeMap::from([("c97.large".into(), 9.9)]));
    }

    /// "should update pricing when we make multiple paginated calls to the on-demand pricing
    /// API": pages add up.
    #[test]
    fn pages_add_up() {
        let mut prices = BTreeMap::new();
        for page in [
            [
                entry("c94.large", "1.10", "USD"),
                entry("c95.large", "1.20", "USD"),
            ],
            [
                entry("c96.large", "1.30", "USD"),
                entry("c97.large", "1.40", "USD"),
            ],
        ] {
            add_page(&mut prices, page.iter().map(String::as_str), "USD");
        }
        assert_eq!(prices.len(), 4);
        assert_eq!(prices["c96.large"], 1.3);
    }

    /// `pricing.go` `NewAPI` and `fetchOnDemandPricing`'s filters.
    #[test]
    fn endpoint_and_filters_follow_karpenter() {
        assert_eq!(endpoint_region("eu-west-1"), "eu-central-1");
        assert_eq!(endpoint_region("ap-northeast-1"), "ap-south-1");
        assert_eq!(endpoint_region("cn-north-1"), "cn-northwest-1");
        assert_eq!(endpoint_region("us-west-2"), "us-east-1");
        assert_eq!(endpoint_region("ca-central-1"), "us-east-1");
        let [shared, metal] = queries("eu-west-1");
        assert_eq!(shared[0], ("regionCode", "eu-west-1".to_string()));
        assert!(shared.contains(&("capacitystatus", "Used".to_string())));
        assert!(shared.contains(&("preInstalledSw", "NA".to_string())));
        assert!(shared.contains(&("operatingSystem", "Linux".to_string())));
        assert!(shared.contains(&("marketoption", "OnDemand".to_string())));
        assert_eq!(
            &shared[6..],
            [
                ("tenancy", "Shared".to_string()),
                ("productFamily", "Compute Instance".to_string())
            ]
        );
        assert_eq!(
            &metal[6..],
            [
                ("tenancy", "Dedicated".to_string()),
                ("productFamily", "Compute Instance (bare metal)".to_string())
            ]
        );
    }
}
