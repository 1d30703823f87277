//! The live catalog against moto: DescribeInstanceTypes + DescribeInstanceTypeOfferings for
//! the region, reduced like the generator, so it agrees with the embedded snapshot (which
//! `scripts/gen_catalog.py` builds from the same moto data); spot prices from one
//! DescribeSpotPriceHistory (moto 5.2.5 answers $0.00001 for every offering of the region);
//! the XDG cache and its TTL.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use kubectl_karpenter::cloud::catalog::InstanceTypeContext;
use kubectl_karpenter::cloud::live_catalog::{self, LiveOptions, Origin};
use kubectl_karpenter::cloud::{Catalog, Cloud};

use crate::moto::Moto;
use crate::support;

/// moto's own answer, asked with boto3 (not our adapter): the newest spot price of
/// `instance_type` in `zone` for Linux/UNIX, as a string.
fn moto_spot_price(moto: &Moto, instance_type: &str, zone: &str) -> String {
    let script = r#"
import sys, boto3, datetime
url, region, itype, zone = sys.argv[1:5]
ec2 = boto3.client("ec2", endpoint_url=url, region_name=region,
                   aws_access_key_id="testing", aws_secret_access_key="testing")
h = ec2.describe_spot_price_history(
    InstanceTypes=[itype], StartTime=datetime.datetime.now(datetime.timezone.utc),
    ProductDescriptions=["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
    Filters=[{"Name": "availability-zone", "Values": [zone]}])["SpotPriceHistory"]
h.sort(key=lambda p: p["Timestamp"], reverse=True)
print(h[0]["SpotPrice"] if h else "")
"#;
    let out = Command::new(support::python())
        .args(["-c", script, &moto.url, moto.region(), instance_type, zone])
        .output()
        .expect("run boto3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn temp_cache(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xdg-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Laid out as $XDG_CACHE_HOME would be.
    live_catalog::cache_dir_from(Some(dir.into_os_string()), None).unwrap()
}

/// The names in catalog/supplement-instance-types.json: types the embedded snapshot adds to
/// moto's data (`scripts/gen_catalog.py`), so a live catalog read from moto lacks them.
fn supplement_types() -> std::collections::BTreeSet<String> {
    let text =
        std::fs::read_to_string(support::root().join("catalog/supplement-instance-types.json"))
            .expect("read the supplement");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("supplement JSON");
    doc["instanceTypes"]
        .as_object()
        .expect("instanceTypes")
        .keys()
        .cloned()
        .collect()
}

fn options(dir: &std::path::Path) -> LiveOptions {
    LiveOptions {
        cache_dir: Some(dir.to_path_buf()),
        ttl: live_catalog::DEFAULT_TTL,
        refresh: false,
    }
}

#[test]
fn live_catalog_matches_the_embedded_one_in_a_few_paginated_calls() {
    let moto = Moto::shared();
    assert_eq!(moto.region(), "us-east-1");
    let cloud = moto.cloud();
    let embedded = Catalog::embedded().unwrap();
    let dir = temp_cache("match");
    let live = live_catalog::load(&cloud, &embedded, &options(&dir)).unwrap();
    assert_eq!(live.origin, Origin::Fetched);
    assert_eq!(live.cache_warning, None);

    let ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    let live_types = live.catalog.instance_types(&ctx).unwrap();
    let embedded_types = embedded.instance_types(&ctx).unwrap();
    let find = |types: &[kubectl_karpenter::model::instance_type::InstanceType], n: &str| {
        types
            .iter()
            .find(|t| t.name == n)
            .unwrap_or_else(|| panic!("{n} missing"))
            .clone()
    };
    let (l, e) = (
        find(&live_types, "c6a.2xlarge"),
        find(&embedded_types, "c6a.2xlarge"),
    );
    assert_eq!(l.capacity, e.capacity);
    assert_eq!(l.allocatable(), e.allocatable());
    assert_eq!(l.requirements, e.requirements, "labels");
    let on_demand = |t: &kubectl_karpenter::model::instance_type::InstanceType| {
        t.offerings
            .iter()
            .filter(|o| o.capacity_type == "on-demand")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(on_demand(&l), on_demand(&e), "zones and on-demand prices");
    assert_eq!(
        l.offerings.len(),
        e.offerings.len(),
        "zones × capacity types"
    );
    // The type's own zones: its offerings in the region's other zones are unavailable.
    let zones: Vec<&str> = l
        .offerings
        .iter()
        .filter(|o| o.available)
        .map(|o| o.zone.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        zones,
        [
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1f"
        ]
    );
    // The whole region agrees, not just one type, but for the embedded catalog's supplement
    // types (g4ad, dl1), which moto does not serve.
    let supplement = supplement_types();
    assert_eq!(
        live_types.iter().map(|t| &t.name).collect::<Vec<_>>(),
        embedded_types
            .iter()
            .map(|t| &t.name)
            .filter(|n| !supplement.contains(*n))
            .collect::<Vec<_>>()
    );
    assert!(live.catalog.notes()[0].contains("live DescribeInstanceTypes"));
    let region = |c: &Catalog| c.aws_snapshot().unwrap().regions["us-east-1"].clone();
    let (lr, mut er) = (region(&live.catalog), region(&embedded));
    assert_eq!(lr.zones, er.zones, "zones");
    er.offerings.retain(|name, _| !supplement.contains(name));
    assert_eq!(lr.offerings, er.offerings, "offerings");
    assert!(
        er.spot_prices.is_empty(),
        "the embedded snapshot has no spot prices"
    );

    let counts = cloud.call_counts();
    assert!(live_types.len() > 500, "{} types", live_types.len());
    assert!(
        (1..=10).contains(&counts.get("EC2.DescribeInstanceTypes")),
        "{}",
        counts.summary()
    );
    assert!(
        (1..=20).contains(&counts.get("EC2.DescribeInstanceTypeOfferings")),
        "{}",
        counts.summary()
    );
    assert_eq!(
        counts.get("EC2.DescribeSpotPriceHistory"),
        1,
        "{}",
        counts.summary()
    );
    // The on-demand prices: both GetProducts queries, every page (tests/moto/pricing.json
    // pages by two: two pages of shared tenancy, one of bare metal).
    assert_eq!(counts.get("Pricing.GetProducts"), 3, "{}", counts.summary());
    assert_eq!(
        counts.total(),
        counts.get("EC2.DescribeInstanceTypes")
            + counts.get("EC2.DescribeInstanceTypeOfferings")
            + counts.get("EC2.DescribeSpotPriceHistory")
            + counts.get("Pricing.GetProducts")
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn live_catalog_spot_offerings_take_describe_spot_price_history_prices() {
    let moto = Moto::shared();
    let cloud = moto.cloud();
    let embedded = Catalog::embedded().unwrap();
    let dir = temp_cache("spot");
    let live = live_catalog::load(&cloud, &embedded, &options(&dir)).unwrap();
    assert_eq!(live.origin, Origin::Fetched);
    let counts = cloud.call_counts();
    assert_eq!(
        counts.get("EC2.DescribeSpotPriceHistory"),
        1,
        "one request for the whole region: {}",
        counts.summary()
    );

    let spot = &live.catalog.aws_snapshot().unwrap().regions["us-east-1"].spot_prices;
    assert!(spot.len() > 100, "{} types have spot prices", spot.len());
    let notes = live.catalog.notes();
    assert!(
        notes.iter().any(|n| n.starts_with(&format!(
            "spot: DescribeSpotPriceHistory prices ({} types)",
            spot.len()
        ))),
        "{notes:?}"
    );

    let ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    let types = live.catalog.instance_types(&ctx).unwrap();
    for (name, zone) in [("c6a.2xlarge", "us-east-1a"), ("m5.large", "us-east-1b")] {
        let answer = moto_spot_price(moto, name, zone);
        assert!(
            !answer.is_empty(),
            "moto has a spot price for {name} in {zone}"
        );
        let expected: f64 = answer.parse().unwrap();
        let t = types.iter().find(|t| t.name == name).unwrap();
        let offering = t
            .offerings
            .iter()
            .find(|o| o.zone == zone && o.capacity_type == "spot")
            .unwrap_or_else(|| panic!("{name} spot offering in {zone}"));
        assert_eq!(
            offering.price, expected,
            "{name} in {zone}: moto says {answer}"
        );
        assert!(offering.available);
        assert_eq!(
            live.catalog.hourly_price(name, zone, "spot"),
            Some(expected)
        );
        // On-demand keeps the list price.
        let od = t
            .offerings
            .iter()
            .find(|o| o.zone == zone && o.capacity_type == "on-demand")
            .unwrap();
        assert_eq!(
            Some(od.price),
            embedded.hourly_price(name, zone, "on-demand")
        );
        assert_ne!(od.price, expected);
    }

    // The adapter's own view of the same call agrees, one (type, zone) each, sorted.
    let direct = moto.cloud();
    let prices = direct.describe_spot_prices().unwrap();
    assert_eq!(direct.call_counts().get("EC2.DescribeSpotPriceHistory"), 1);
    assert!(prices
        .windows(2)
        .all(|w| (&w[0].instance_type, &w[0].zone) < (&w[1].instance_type, &w[1].zone)));
    let c6a = prices
        .iter()
        .find(|p| p.instance_type == "c6a.2xlarge" && p.zone == "us-east-1a")
        .unwrap();
    assert_eq!(
        Some(c6a.price),
        spot["c6a.2xlarge"].get("us-east-1a").copied()
    );

    // The cache carries them.
    let again = moto.cloud();
    let cached = live_catalog::load(&again, &embedded, &options(&dir)).unwrap();
    assert_eq!(cached.origin, Origin::Cache);
    assert_eq!(again.call_counts().total(), 0);
    assert_eq!(cached.catalog.instance_types(&ctx).unwrap(), types);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn live_catalog_cache_hit_makes_no_calls_and_expiry_refetches() {
    let moto = Moto::shared();
    let embedded = Catalog::embedded().unwrap();
    let dir = temp_cache("ttl");
    let opts = options(&dir);

    let first = moto.cloud();
    let fetched = live_catalog::load(&first, &embedded, &opts).unwrap();
    assert_eq!(fetched.origin, Origin::Fetched);
    let path = dir.join("catalog-us-east-1.json");
    assert_eq!(fetched.cache_path.as_deref(), Some(path.as_path()));
    assert!(path.exists());

    let second = moto.cloud();
    let cached = live_catalog::load(&second, &embedded, &opts).unwrap();
    assert_eq!(cached.origin, Origin::Cache);
    assert_eq!(
        second.call_counts().total(),
        0,
        "{}",
        second.call_counts().summary()
    );
    let ctx = InstanceTypeContext::new("us-east-1", "AL2");
    assert_eq!(
        cached.catalog.instance_types(&ctx).unwrap(),
        fetched.catalog.instance_types(&ctx).unwrap()
    );

    let third = moto.cloud();
    let expired = LiveOptions {
        ttl: Duration::ZERO,
        ..opts.clone()
    };
    let refetched = live_catalog::load(&third, &embedded, &expired).unwrap();
    assert_eq!(refetched.origin, Origin::Fetched);
    assert!(third.call_counts().get("EC2.DescribeInstanceTypes") >= 1);

    // A corrupt cache is ignored and rewritten.
    std::fs::write(&path, b"\x00garbage").unwrap();
    let fourth = moto.cloud();
    let repaired = live_catalog::load(&fourth, &embedded, &opts).unwrap();
    assert_eq!(repaired.origin, Origin::Fetched);
    assert!(repaired.cache_warning.unwrap().contains("corrupt"));
    let fifth = moto.cloud();
    assert_eq!(
        live_catalog::load(&fifth, &embedded, &opts).unwrap().origin,
        Origin::Cache
    );
    assert_eq!(fifth.call_counts().total(), 0);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}
