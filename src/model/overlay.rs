//! NodeOverlays (`karpenter.sh/v1alpha1`): prices and extended-resource capacity laid over the
//! instance types they select, by weight (docs/karpenter.md §6.10). The rule that applies them is
//! `scheduling::overlay`; here is the object and its price arithmetic.

use std::collections::BTreeMap;

use super::labels::INSTANCE_TYPE;
use super::nodepool::Origin;
use super::requirements::{NodeSelectorRequirement, Operator};
use super::resources::Resources;

/// How an overlay changes an offering's price (`spec.price` or `spec.priceAdjustment`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PriceChange {
    /// `price: "0.5"`: the price, whatever it was.
    Set(f64),
    /// `priceAdjustment: "+0.5"` / `"-0.5"`: added to the price.
    Add(f64),
    /// `priceAdjustment: "+10%"` / `"-15%"`: the price scaled by 1 + p/100.
    Percent(f64),
}

impl PriceChange {
    /// Reads `spec.price` (`^\d+(\.\d+)?$`, the CRD's pattern).
    pub fn parse_price(text: &str) -> Option<PriceChange> {
        let (int, frac) = text.split_once('.').unwrap_or((text, "1"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(int) && digits(frac))
            .then(|| text.parse().ok().map(PriceChange::Set))
            .flatten()
    }

    /// Reads `spec.priceAdjustment`: a signed number, or a signed percentage — any increase, a
    /// decrease of at most 100% (the CRD's pattern
    /// `^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`).
    pub fn parse_adjustment(text: &str) -> Option<PriceChange> {
        let sign = text.chars().next().filter(|c| *c == '+' || *c == '-')?;
        let body = &text[1..];
        let number = |s: &str| -> Option<f64> {
            let (int, frac) = match s.split_once('.') {
                Some((i, f)) => (i, Some(f)),
                None => (s, None),
            };
            let ok = int.bytes().all(|b| b.is_ascii_digit())
                && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                && (!int.is_empty() || frac.is_some());
            ok.then(|| s.parse().ok()).flatten()
        };
        let signed = |v: f64| if sign == '-' { -v } else { v };
        match body.strip_suffix('%') {
            Some(p) => {
                let v = number(p)?;
                let int = p.split('.').next().unwrap_or_default();
                let allowed = sign == '+' || p == "100" || (!int.is_empty() && int.len() <= 2);
                allowed.then_some(PriceChange::Percent(signed(v)))
            }
            None => number(body).map(|v| PriceChange::Add(signed(v))),
        }
    }

    /// The new price (`core: pkg/cloudprovider/types.go` `AdjustedPrice`): never below zero.
    pub fn apply(self, price: f64) -> f64 {
        let adjusted = match self {
            PriceChange::Set(p) => return p,
            PriceChange::Add(d) => price + d,
            PriceChange::Percent(p) => price * (1.0 + p / 100.0),
        };
        adjusted.max(0.0)
    }
}

/// A NodeOverlay, normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeOverlay {
    /// Name.
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// `spec.weight` (0 when unset): higher wins.
    pub weight: i32,
    /// `spec.requirements`: which instance types (and offerings) it applies to; they may name
    /// well-known labels, `karpenter.sh/nodepool` and the pools' template labels.
    pub requirements: Vec<NodeSelectorRequirement>,
    /// `spec.price` or `spec.priceAdjustment`.
    pub price: Option<PriceChange>,
    /// `spec.capacity`: extended resources added to the capacity.
    pub capacity: Resources,
}

/// The prices the AWS provider itself takes from NodeOverlays, for instance types it has no price
/// for (`aws v1.14.1: pkg/providers/instancetype/offering/offering.go` `GetOverlayPrice`, used by
/// `base_resolver.go`: an offering without a price takes it and becomes available). Only an
/// overlay whose requirements are exactly one `node.kubernetes.io/instance-type In [...]` and
/// which sets `price` (not `priceAdjustment`) counts. Where two name the same type the later by
/// name wins (upstream: the later in the API list).
pub fn provider_prices(overlays: &[NodeOverlay]) -> BTreeMap<String, f64> {
    let mut ordered: Vec<&NodeOverlay> = overlays.iter().collect();
    ordered.sort_by(|a, b| a.name.cmp(&b.name));
    let mut prices = BTreeMap::new();
    for overlay in ordered {
        let (Some(PriceChange::Set(price)), [only]) =
            (overlay.price, overlay.requirements.as_slice())
        else {
            continue;
        };
        if only.key != INSTANCE_TYPE || only.operator != Operator::In {
            continue;
        }
        for name in &only.values {
            prices.insert(name.clone(), price);
        }
    }
    prices
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `core: pkg/cloudprovider/suite_test.go` "AdjustedPrice": every entry.
    #[test]
    fn adjusted_prices_match_karpenters_table() {
        let cases: [(&str, f64, f64); 16] = [
            ("-10%", 10.0, 9.0),
            ("+10%", 10.0, 11.0),
            ("-50%", 10.0, 5.0),
            ("+100%", 10.0, 20.0),
            ("-100%", 10.0, 0.0),
            ("+0", 10.0, 10.0),
            ("+5", 10.0, 15.0),
            ("-2.5", 10.0, 7.5),
            ("-10", 10.0, 0.0),
            ("-15", 10.0, 0.0),
            ("+0.75", 1.25, 2.0),
            ("+100", 0.001, 100.001),
            ("+0.0001", 0.0001, 0.0002),
            ("-25%", 1.5, 1.125),
            ("+.5", 1.0, 1.5),
            ("-99.5%", 10.0, 0.05),
        ];
        for (change, base, want) in cases {
            let got = PriceChange::parse_adjustment(change)
                .unwrap_or_else(|| panic!("{change} parses"))
                .apply(base);
            assert!((got - want).abs() < 1e-9, "{change} on {base}: {got}");
        }
        // "should override price"
        assert_eq!(
            PriceChange::parse_price("80.0").unwrap().apply(82781.0),
            80.0
        );
    }

    /// `aws v1.14.1: pkg/providers/instancetype/offering/offering.go` `GetOverlayPrice` (suite
    /// "NodeOverlay Preview Instance Pricing"): only `price` overlays with exactly one
    /// `instance-type In` requirement price the provider's unpriced types.
    #[test]
    fn only_a_single_instance_type_in_with_a_price_gives_the_provider_a_price() {
        let it =
            |values: &[&str]| NodeSelectorRequirement::new(INSTANCE_TYPE, Operator::In, values);
        let overlay =
            |name: &str, price: &str, requirements: Vec<NodeSelectorRequirement>| NodeOverlay {
                name: name.into(),
                price: PriceChange::parse_price(price)
                    .or_else(|| PriceChange::parse_adjustment(price)),
                requirements,
                ..Default::default()
            };
        let zone = NodeSelectorRequirement::new(super::super::labels::ZONE, Operator::In, &["z"]);
        let overlays = [
            overlay(
                "b-preview",
                "98.32",
                vec![it(&["p5e.48xlarge", "p6.48xlarge"])],
            ),
            overlay("a-earlier", "1", vec![it(&["p6.48xlarge"])]),
            overlay("adjustment", "+10", vec![it(&["x.large"])]),
            overlay("two-requirements", "5", vec![it(&["y.large"]), zone]),
            overlay(
                "not-in",
                "5",
                vec![NodeSelectorRequirement::new(
                    INSTANCE_TYPE,
                    Operator::NotIn,
                    &["z.large"],
                )],
            ),
        ];
        let prices = provider_prices(&overlays);
        assert_eq!(
            prices,
            BTreeMap::from([
                ("p5e.48xlarge".to_string(), 98.32),
                ("p6.48xlarge".to_string(), 98.32),
            ])
        );
    }

    /// The CRD's patterns: what the API server would reject is not read.
    #[test]
    fn price_texts_outside_the_crd_patterns_are_refused() {
        for bad in ["", "1.", ".5", "-1", "+1", "1e3", "abc", "1.2.3"] {
            assert_eq!(PriceChange::parse_price(bad), None, "price {bad:?}");
        }
        for bad in [
            "", "5", "+", "-", "-200%", "-100.5%", "+5%%", "+1e3", "+1.", "*5",
        ] {
            assert_eq!(
                PriceChange::parse_adjustment(bad),
                None,
                "adjustment {bad:?}"
            );
        }
        assert_eq!(
            PriceChange::parse_adjustment("+250%"),
            Some(PriceChange::Percent(250.0))
        );
    }
}
