//! The live catalog against moto: DescribeInstanceTypes + DescribeInstanceTypeOfferings for
//! the region, reduced like the generator, so it agrees with the embedded snapshot (which
//! `scripts/gen_catalog.py` builds from the same moto data); the XDG cache and its TTL.

use std::path::PathBuf;
use std::time::Duration;

use kubectl_karpenter::cloud::catalog::InstanceTypeContext;
use kubectl_karpenter::cloud::live_catalog::{self, LiveOptions, Origin};
use kubectl_karpenter::cloud::{Catalog, Cloud};

use crate::moto::Moto;

fn temp_cache(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xdg-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Laid out as $XDG_CACHE_HOME would be.
    live_catalog::cache_dir_from(Some(dir.into_os_string()), None).unwrap()
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
    assert_eq!(l.offerings, e.offerings, "zones and prices");
    let zones: Vec<&str> = l
        .offerings
        .iter()
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
    // The whole region agrees, not just one type.
    assert_eq!(
        live_types.iter().map(|t| &t.name).collect::<Vec<_>>(),
        embedded_types.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert!(live.catalog.notes()[0].contains("live DescribeInstanceTypes"));
    let region = |c: &Catalog| c.aws_snapshot().unwrap().regions["us-east-1"].clone();
    assert_eq!(
        region(&live.catalog),
        region(&embedded),
        "zones and offerings"
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
        counts.total(),
        counts.get("EC2.DescribeInstanceTypes") + counts.get("EC2.DescribeInstanceTypeOfferings")
    );
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
