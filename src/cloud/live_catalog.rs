//! The live instance-type catalog: DescribeInstanceTypes + DescribeInstanceTypeOfferings
//! (`LocationType=availability-zone`) for the adapter's region, reduced to the embedded
//! snapshot's schema ([`AwsSnapshot`]) and handed to [`Catalog::from_snapshot`], so planning
//! code sees the same kind of catalog whether it is live, cached or embedded.
//!
//! - **Calls**: a handful of paginated calls (one DescribeInstanceTypes page per 100 types, one
//!   offerings page per 1000 offerings, one spot-price page per 1000 prices), never one per
//!   type.
//! - **Prices**: EC2 does not give list prices. On-demand prices come from the AWS Pricing API
//!   (`pricing:GetProducts`, [`Cloud::on_demand_prices`]: the region's Linux list prices, as
//!   Karpenter's pricing controller loads them every 12 h): a type it prices takes the region's
//!   price, a type it does not keeps the embedded snapshot's (us-east-1 list prices), as
//!   Karpenter keeps its previous (initially static) price of a type missing from an answer
//!   (`aws v1.14.1: pkg/providers/pricing/pricing.go` `UpdateOnDemandPricing`: `lo.Assign` of
//!   the previous and the new prices). When the call fails (no `pricing:GetProducts`,
//!   unreachable, throttled) or answers no price, or in GovCloud (which the Pricing API does not
//!   serve; Karpenter does not ask there either), every type keeps the snapshot's price and
//!   [`LiveCatalog::price_warning`] says so once (an `assuming:` warning). The prices are cached
//!   with the catalog. Spot prices come from
//!   one DescribeSpotPriceHistory request (`StartTime = now`, Linux/UNIX; all its pages), the
//!   current price per (type, zone) as Karpenter's pricing provider reads them, stored in
//!   [`RegionFacts::spot_prices`]. That call is optional: when it fails (e.g. the identity
//!   lacks `ec2:DescribeSpotPriceHistory`) the catalog is still built, spot offerings keep the
//!   on-demand stand-in, and the snapshot's `source` (the first of [`Catalog::notes`]) says
//!   why. (moto answers it with one invented price, $0.00001, for every offering.)
//! - **Cache**: `$XDG_CACHE_HOME/kubectl-karpenter/catalog-<region>.json` (else
//!   `~/.cache/kubectl-karpenter/…`), valid for [`DEFAULT_TTL`]. A corrupt, foreign-region or
//!   future-dated cache is ignored and rewritten; a cache that cannot be written is only a
//!   warning ([`LiveCatalog::cache_warning`]).
//!
//! - **Capacity reservations** are not part of it (their instance counts move with every
//!   launch; a cache would hand out instances that are gone): each live plan reads them
//!   ([`crate::cloud::reservations::list`]) and plans with [`Catalog::with_reservations`] of this
//!   catalog, which adds the reserved offerings as a custom catalog's (`Live::planning_catalog`).
//!
//! How provision will use it (with the cluster issue): when a live cluster and AWS are
//! available and no `--catalog FILE` is given, `provision` calls [`load`] with the connected
//! [`Cloud`], the embedded catalog (for prices) and [`LiveOptions::default`] (or `refresh: true`
//! for a `--refresh-catalog` flag), then plans against [`LiveCatalog::catalog`]; offline
//! (`-f`) it keeps the embedded snapshot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::catalog::{AwsSnapshot, Catalog, CatalogError, RegionFacts, SNAPSHOT_SCHEMA_VERSION};
use super::types::{Cloud, CloudError};
use crate::model::time::format_rfc3339;

/// How long a cached catalog is used before it is fetched again.
pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The cache file's own format version (the snapshot inside has its schema version). 2: the
/// snapshot carries spot prices; a version-1 cache (without them) is fetched again. 3: each
/// type carries its `networkCards` and `enaSupport`; a version-2 cache, written before, would be
/// read without them until it expired — an EC2NodeClass's `networkInterfaces` then checked on
/// card 0 only, ENA not at all (`Catalog::checks_network_interfaces`) — so it is fetched again.
/// (A fetched type may still lack them when EC2 describes no network info: that is EC2's
/// answer, not a stale cache, so absent fields alone do not make a cache stale.)
/// 4: on-demand prices are the Pricing API's for the region; a version-3 cache holds the
/// us-east-1 list prices and is fetched again. 5: the priced region is a field
/// (`livePriceRegion`), no longer read from the `source` text.
const CACHE_VERSION: u32 = 5;

/// Where and how long to cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveOptions {
    /// Cache directory (`None`: no caching).
    pub cache_dir: Option<PathBuf>,
    /// Time to live of a cached catalog.
    pub ttl: Duration,
    /// Ignore a valid cache and fetch (a `--refresh-catalog` knob).
    pub refresh: bool,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            cache_dir: default_cache_dir(),
            ttl: DEFAULT_TTL,
            refresh: false,
        }
    }
}

/// `$XDG_CACHE_HOME/kubectl-karpenter`, else `$HOME/.cache/kubectl-karpenter` (a relative or
/// empty `XDG_CACHE_HOME` is ignored, as the XDG spec says).
pub fn default_cache_dir() -> Option<PathBuf> {
    cache_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`default_cache_dir`] from the two variables' values.
pub fn cache_dir_from(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let xdg = xdg_cache_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        home.filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("kubectl-karpenter"))
}

/// The cache file of `region` in `dir`.
pub fn cache_path(dir: &Path, region: &str) -> PathBuf {
    dir.join(format!("catalog-{region}.json"))
}

/// Where a live catalog came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A cache file younger than the TTL (no AWS calls).
    Cache,
    /// EC2, just now.
    Fetched,
}

/// A loaded live catalog.
#[derive(Debug, Clone)]
pub struct LiveCatalog {
    /// The catalog (AWS source, one region).
    pub catalog: Catalog,
    /// Cache or EC2.
    pub origin: Origin,
    /// The cache file used or written, if caching is on.
    pub cache_path: Option<PathBuf>,
    /// Why the cache was not used or could not be written, for `-v`.
    pub cache_warning: Option<String>,
    /// Why a fetched catalog has no spot prices (DescribeSpotPriceHistory failed), for `-v`.
    pub spot_warning: Option<String>,
    /// `assuming: …` when the on-demand prices are not the region's (the Pricing API failed,
    /// priced nothing, or is not asked in GovCloud), kept with the cache: said on every run
    /// that plans with them.
    pub price_warning: Option<String>,
}

/// A fetched snapshot, and the spot-price call's failure if it failed.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The snapshot.
    pub snapshot: AwsSnapshot,
    /// Why the snapshot has no spot prices.
    pub spot_error: Option<CloudError>,
    /// `assuming: …` when the on-demand prices are the embedded snapshot's, not the region's.
    pub price_warning: Option<String>,
}

/// Why no live catalog could be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LiveCatalogError {
    /// An EC2 call failed.
    #[error(transparent)]
    Cloud(#[from] CloudError),
    /// The fetched data did not make a catalog (a bug, or the embedded price source is not AWS).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    version: u32,
    region: String,
    /// Seconds since the Unix epoch.
    fetched_at: u64,
    snapshot: AwsSnapshot,
    /// [`LiveCatalog::price_warning`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    price_warning: Option<String>,
}

/// Whether the Pricing API is asked for `region`'s prices: not in GovCloud, which it does not
/// serve (`pricing.go` `UpdateOnDemandPricing`, `suite_test.go` "should return static
/// on-demand data when in an AWS GovCloud region").
pub fn asks_pricing_api(region: &str) -> bool {
    !region.starts_with("us-gov")
}

/// The on-demand prices of `region` from the Pricing API, or the `assuming:` warning saying why
/// the snapshot's are kept.
fn region_prices(cloud: &dyn Cloud, region: &str) -> Result<BTreeMap<String, f64>, String> {
    let keep = "assuming: on-demand prices are the embedded snapshot's us-east-1 list prices";
    if !asks_pricing_api(region) {
        return Err(format!(
            "{keep} (the AWS Pricing API does not serve {region}; Karpenter keeps its static prices there too)"
        ));
    }
    match cloud.on_demand_prices() {
        Ok(prices) if prices.is_empty() => Err(format!(
            "{keep} (Pricing GetProducts answered no on-demand price for {region})"
        )),
        Ok(prices) => Ok(prices),
        Err(e) => Err(format!("{keep} ({e})")),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Fetches the region's instance types, zonal offerings, on-demand prices (Pricing API) and
/// current spot prices and builds a snapshot; a type the Pricing API does not price takes its
/// on-demand price from `prices` (the embedded snapshot).
///
/// Only the first two calls are required: a failed DescribeSpotPriceHistory leaves the spot
/// prices empty (spot offerings then carry the on-demand stand-in) and is recorded in the
/// snapshot's `source`, which [`Catalog::notes`] shows (and the cache keeps), and in
/// [`Fetched::spot_error`]; a failed GetProducts keeps the snapshot's prices, in
/// [`Fetched::price_warning`] and the `source`.
pub fn fetch_snapshot(
    cloud: &dyn Cloud,
    prices: Option<&AwsSnapshot>,
    fetched_at: u64,
) -> Result<Fetched, CloudError> {
    let region = cloud.region();
    let mut types = cloud.describe_instance_types()?;
    let offerings = cloud.describe_instance_type_offerings()?;
    let price_of = |name: &str| {
        prices.and_then(|p| {
            p.instance_types
                .binary_search_by(|t| t.name.as_str().cmp(name))
                .ok()
                .and_then(|i| p.instance_types[i].on_demand_price)
        })
    };
    let live_prices = region_prices(cloud, &region);
    for t in &mut types {
        // In a live snapshot the field holds the region's price where the Pricing API gave one.
        t.on_demand_price = live_prices
            .as_ref()
            .ok()
            .and_then(|p| p.get(&t.name).copied())
            .or_else(|| price_of(&t.name));
    }
    types.sort_by(|a, b| a.name.cmp(&b.name));
    types.dedup_by(|a, b| a.name == b.name);
    let mut zones: Vec<String> = offerings.iter().map(|o| o.zone.clone()).collect();
    zones.sort();
    zones.dedup();
    let mut by_type: BTreeMap<String, Vec<String>> = Default::default();
    for o in &offerings {
        if types
            .binary_search_by(|t| t.name.as_str().cmp(&o.instance_type))
            .is_ok()
        {
            by_type
                .entry(o.instance_type.clone())
                .or_default()
                .push(o.zone.clone());
        }
    }
    for z in by_type.values_mut() {
        z.sort();
        z.dedup();
    }
    let spot = cloud.describe_spot_prices();
    let (spot_prices, spot_source) = match &spot {
        Ok(list) => {
            let mut spot: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
            for p in list {
                if types
                    .binary_search_by(|t| t.name.as_str().cmp(&p.instance_type))
                    .is_ok()
                {
                    spot.entry(p.instance_type.clone())
                        .or_default()
                        .insert(p.zone.clone(), p.price);
                }
            }
            let source = format!(
                "spot prices from DescribeSpotPriceHistory ({} types)",
                spot.len()
            );
            (spot, source)
        }
        Err(e) => (
            BTreeMap::new(),
            format!("no spot prices ({e}): spot offerings carry the on-demand price"),
        ),
    };
    let price_source = prices
        .map(|p| p.source.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("none");
    let on_demand_source = match &live_prices {
        Ok(live) => {
            let priced = types.iter().filter(|t| live.contains_key(&t.name)).count();
            format!(
                "on-demand prices from the Pricing API for {region} ({priced} types; the others from the embedded snapshot ({price_source}))"
            )
        }
        Err(_) => format!("on-demand prices from the embedded snapshot ({price_source})"),
    };
    let snapshot = AwsSnapshot {
        schema_version: SNAPSHOT_SCHEMA_VERSION,
        source: format!(
            "live DescribeInstanceTypes/DescribeInstanceTypeOfferings for {region}, fetched {}; \
             {on_demand_source}; {spot_source}",
            format_rfc3339(fetched_at as i64)
        ),
        live_price_region: live_prices.is_ok().then(|| region.clone()),
        instance_types: types,
        regions: [(
            region,
            RegionFacts {
                zones,
                offerings: by_type,
                spot_prices,
            },
        )]
        .into_iter()
        .collect(),
    };
    Ok(Fetched {
        snapshot,
        spot_error: spot.err(),
        price_warning: live_prices.err(),
    })
}

/// Reads a cache file; `Err` says why it is not usable.
fn read_cache(path: &Path, region: &str, ttl: Duration, now: u64) -> Result<CacheFile, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(String::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let file: CacheFile = serde_json::from_str(&text)
        .map_err(|e| format!("ignoring corrupt catalog cache {}: {e}", path.display()))?;
    if file.version != CACHE_VERSION
        || file.snapshot.schema_version != SNAPSHOT_SCHEMA_VERSION
        || file.region != region
        || !file.snapshot.regions.contains_key(region)
    {
        return Err(format!(
            "ignoring catalog cache {} (other version or region)",
            path.display()
        ));
    }
    if file.fetched_at > now {
        return Err(format!(
            "ignoring catalog cache {} (dated in the future)",
            path.display()
        ));
    }
    if Duration::from_secs(now - file.fetched_at) >= ttl {
        return Err(String::new());
    }
    Ok(file)
}

/// Writes the cache atomically (temp file + rename).
fn write_cache(path: &Path, file: &CacheFile) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let text = serde_json::to_string(file).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("catalog"),
        std::process::id()
    ));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write catalog cache {}: {e}", path.display())
        })
}

/// The live catalog of `cloud`'s region: from the cache when it is fresh, else fetched (and
/// cached). `embedded` supplies on-demand prices.
pub fn load(
    cloud: &dyn Cloud,
    embedded: &Catalog,
    options: &LiveOptions,
) -> Result<LiveCatalog, LiveCatalogError> {
    let region = cloud.region();
    let now = unix_now();
    let path = options
        .cache_dir
        .as_deref()
        .map(|dir| cache_path(dir, &region));
    let mut warning = None;
    if let (Some(path), false) = (&path, options.refresh) {
        match read_cache(path, &region, options.ttl, now) {
            Ok(file) => {
                if let Ok(catalog) = Catalog::from_snapshot(file.snapshot) {
                    return Ok(LiveCatalog {
                        catalog,
                        origin: Origin::Cache,
                        cache_path: Some(path.clone()),
                        cache_warning: None,
                        spot_warning: None,
                        price_warning: file.price_warning,
                    });
                }
            }
            Err(why) if !why.is_empty() => warning = Some(why),
            Err(_) => {}
        }
    }
    let Fetched {
        snapshot,
        spot_error,
        price_warning,
    } = fetch_snapshot(cloud, embedded.aws_snapshot(), now)?;
    let catalog = Catalog::from_snapshot(snapshot.clone())?;
    if let Some(path) = &path {
        let file = CacheFile {
            version: CACHE_VERSION,
            region: region.clone(),
            fetched_at: now,
            snapshot,
            price_warning: price_warning.clone(),
        };
        if let Err(e) = write_cache(path, &file) {
            warning = Some(e);
        }
    }
    Ok(LiveCatalog {
        catalog,
        origin: Origin::Fetched,
        cache_path: path,
        cache_warning: warning,
        spot_warning: spot_error
            .map(|e| format!("no spot prices ({e}): spot offerings carry the on-demand price")),
        price_warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::catalog::InstanceTypeContext;
    use crate::cloud::fake::FakeCloud;
    use crate::cloud::types::{SpotPrice, TypeOffering};
    use crate::model::instance_type::{ON_DEMAND, SPOT};

    fn fake() -> FakeCloud {
        let embedded = Catalog::embedded().unwrap();
        let snap = embedded.aws_snapshot().unwrap();
        let pick = |n: &str| {
            let mut f = snap
                .instance_types
                .iter()
                .find(|t| t.name == n)
                .unwrap()
                .clone();
            f.on_demand_price = None;
            f
        };
        let mut cloud = FakeCloud::new();
        cloud.instance_types = vec![pick("m5.large"), pick("c6a.2xlarge")];
        cloud.offerings = ["us-east-1a", "us-east-1b"]
            .iter()
            .flat_map(|z| {
                ["m5.large", "c6a.2xlarge", "x9.unknown"].map(|t| TypeOffering {
                    instance_type: t.into(),
                    zone: (*z).into(),
                })
            })
            .collect();
        cloud.spot_prices = vec![
            spot("m5.large", "us-east-1a", 0.0361),
            spot("m5.large", "us-east-1b", 0.0402),
            spot("c6a.2xlarge", "us-east-1b", 0.1123),
            spot("x9.unknown", "us-east-1a", 0.01),
        ];
        cloud
    }

    fn spot(t: &str, z: &str, price: f64) -> SpotPrice {
        SpotPrice {
            instance_type: t.into(),
            zone: z.into(),
            price,
        }
    }

    fn offering_price(catalog: &Catalog, t: &str, zone: &str, ct: &str) -> f64 {
        let types = catalog
            .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
            .unwrap();
        types
            .iter()
            .find(|x| x.name == t)
            .unwrap()
            .offerings
            .iter()
            .find(|o| o.zone == zone && o.capacity_type == ct)
            .unwrap()
            .price
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("kk-live-catalog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn fetches_prices_from_the_embedded_snapshot_and_zones_from_offerings() {
        let cloud = fake();
        let embedded = Catalog::embedded().unwrap();
        let snap = fetch_snapshot(&cloud, embedded.aws_snapshot(), 0)
            .unwrap()
            .snapshot;
        let region = &snap.regions["us-east-1"];
        assert_eq!(region.zones, ["us-east-1a", "us-east-1b"]);
        assert_eq!(
            region.offerings.keys().collect::<Vec<_>>(),
            ["c6a.2xlarge", "m5.large"],
            "offerings of unknown (unselected) types are dropped"
        );
        assert!(snap
            .instance_types
            .iter()
            .all(|t| t.on_demand_price.is_some()));
        assert_eq!(
            region.spot_prices.keys().collect::<Vec<_>>(),
            ["c6a.2xlarge", "m5.large"],
            "spot prices of unknown (unselected) types are dropped"
        );
        assert_eq!(region.spot_price("m5.large", "us-east-1b"), Some(0.0402));
        let catalog = Catalog::from_snapshot(snap).unwrap();
        assert!(catalog.notes()[0].starts_with("instance types: live "));
        assert!(
            catalog.notes()[0].contains("spot prices from DescribeSpotPriceHistory (2 types)"),
            "{:?}",
            catalog.notes()
        );
        assert!(catalog
            .notes()
            .iter()
            .any(|n| n.starts_with("spot: DescribeSpotPriceHistory prices (2 types)")));
        let types = catalog
            .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
            .unwrap();
        assert_eq!(types.len(), 2);
        // DescribeInstanceTypes has no branch ENIs: the live catalog takes pod-eni from the same
        // VPC-limits table as the embedded one (aws v1.14.1 `types.go` `awsPodENI`).
        let m5 = types.iter().find(|t| t.name == "m5.large").unwrap();
        assert_eq!(
            m5.capacity.get(crate::model::overhead::POD_ENI),
            9 * crate::model::quantity::ONE
        );
        assert_eq!(
            offering_price(&catalog, "m5.large", "us-east-1a", SPOT),
            0.0361
        );
        assert_eq!(
            offering_price(&catalog, "c6a.2xlarge", "us-east-1a", SPOT),
            0.0,
            "no spot price for that zone: unpriced (unavailable), as Karpenter's after a spot-price update"
        );
        assert_eq!(
            offering_price(&catalog, "m5.large", "us-east-1a", ON_DEMAND),
            0.096
        );
        let counts = cloud.call_counts();
        assert_eq!(counts.get("EC2.DescribeSpotPriceHistory"), 1);
        assert_eq!(counts.get("Pricing.GetProducts"), 1);
        assert_eq!(counts.total(), 4);
    }

    #[test]
    fn a_failing_spot_price_call_keeps_the_catalog_with_stand_ins() {
        let dir = temp_dir("spot-denied");
        let cloud = fake();
        cloud.fail(
            "EC2.DescribeSpotPriceHistory",
            CloudError::Api {
                service: "EC2".into(),
                operation: "DescribeSpotPriceHistory".into(),
                code: "UnauthorizedOperation".into(),
                message: "You are not authorized to perform this operation.".into(),
            },
        );
        let embedded = Catalog::embedded().unwrap();
        let opts = LiveOptions {
            cache_dir: Some(dir.clone()),
            ..LiveOptions::default()
        };
        let live = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(live.origin, Origin::Fetched);
        assert!(
            live.spot_warning.as_deref().is_some_and(|w| w.starts_with(
                "no spot prices (EC2 DescribeSpotPriceHistory: UnauthorizedOperation"
            )),
            "{:?}",
            live.spot_warning
        );
        let snap = live.catalog.aws_snapshot().unwrap();
        assert!(snap.regions["us-east-1"].spot_prices.is_empty());
        assert_eq!(
            offering_price(&live.catalog, "m5.large", "us-east-1a", SPOT),
            0.096,
            "the on-demand stand-in"
        );
        let notes = live.catalog.notes();
        assert!(
            notes[0]
                .contains("no spot prices (EC2 DescribeSpotPriceHistory: UnauthorizedOperation"),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("spot: no DescribeSpotPriceHistory prices")),
            "{notes:?}"
        );
        assert!(
            cache_path(&dir, "us-east-1").exists(),
            "the catalog is cached all the same"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cache_keeps_spot_prices_and_a_version_1_cache_is_refetched() {
        let (dir, embedded, cloud, opts) = caching("spot-cache");
        let fetched = load(&cloud, &embedded, &opts).unwrap();
        let cached = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(cached.origin, Origin::Cache);
        assert_eq!(
            cached.catalog.aws_snapshot().unwrap(),
            fetched.catalog.aws_snapshot().unwrap(),
            "spot prices survive the cache"
        );
        assert_eq!(
            offering_price(&cached.catalog, "m5.large", "us-east-1b", SPOT),
            0.0402
        );

        // A cache written before spot prices (version 1) is not used.
        edit_cache(&dir, |json| {
            json["version"] = 1.into();
            json["snapshot"]["regions"]["us-east-1"]
                .as_object_mut()
                .unwrap()
                .remove("spotPrices");
        });
        let again = refetched(&cloud, &embedded, &opts);
        assert!(!again.catalog.aws_snapshot().unwrap().regions["us-east-1"]
            .spot_prices
            .is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A cache written before the types' `networkCards` and `enaSupport` were recorded
    /// (version 2) is fetched again rather than read without them until it expires: with it,
    /// a class's `networkInterfaces` would check card 0 only and ENA not at all.
    #[test]
    fn a_version_2_cache_without_network_cards_is_refetched() {
        let (dir, embedded, cloud, opts) = caching("network-cache");
        let fetched = load(&cloud, &embedded, &opts).unwrap();
        assert!(fetched.catalog.checks_network_interfaces());
        let without_cards = |version: u32| {
            move |json: &mut serde_json::Value| {
                assert!(json["version"] == CACHE_VERSION || json["version"] == 2);
                json["version"] = version.into();
                for t in json["snapshot"]["instanceTypes"].as_array_mut().unwrap() {
                    let t = t.as_object_mut().unwrap();
                    t.remove("networkCards");
                    t.remove("enaSupport");
                }
            }
        };
        edit_cache(&dir, without_cards(2));
        let again = refetched(&cloud, &embedded, &opts);
        assert!(again.catalog.checks_network_interfaces());
        // The same file at the current version (the fields missing) would have been read
        // silently.
        edit_cache(&dir, without_cards(CACHE_VERSION));
        let stale = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(stale.origin, Origin::Cache);
        assert!(!stale.catalog.checks_network_interfaces());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A fresh cache directory named after `name`, the embedded catalog, the fake cloud and
    /// options caching in that directory.
    fn caching(name: &str) -> (PathBuf, Catalog, FakeCloud, LiveOptions) {
        let dir = temp_dir(name);
        let opts = LiveOptions {
            cache_dir: Some(dir.clone()),
            ..LiveOptions::default()
        };
        (dir, Catalog::embedded().unwrap(), fake(), opts)
    }

    /// Rewrites the cached us-east-1 catalog in `dir` through `edit`.
    fn edit_cache(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
        let path = cache_path(dir, "us-east-1");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        edit(&mut json);
        std::fs::write(&path, json.to_string()).unwrap();
    }

    /// Loads again, asserting the cache was ignored as another version and the catalog
    /// fetched (four calls).
    fn refetched(cloud: &FakeCloud, embedded: &Catalog, opts: &LiveOptions) -> LiveCatalog {
        let calls = cloud.call_counts().total();
        let again = load(cloud, embedded, opts).unwrap();
        assert_eq!(again.origin, Origin::Fetched);
        assert!(again
            .cache_warning
            .as_deref()
            .is_some_and(|w| w.contains("other version")));
        assert_eq!(cloud.call_counts().total(), calls + 4);
        again
    }

    /// `aws v1.14.1: pkg/controllers/providers/pricing/suite_test.go` "should update on-demand
    /// pricing with response from the pricing API" and "should maintain previous data when
    /// pricing API returns partial data" (on-demand): the region's prices win; a type missing
    /// from the answer keeps the price it had, the embedded snapshot's (`pricing.go`
    /// `UpdateOnDemandPricing` assigns the answer over the previous, initially static, prices).
    #[test]
    fn region_prices_win_and_a_type_the_answer_misses_keeps_the_snapshots() {
        let (dir, embedded, mut cloud, opts) = caching("region-prices");
        cloud.on_demand_prices = [("m5.large".to_string(), 0.107), ("x9.unknown".into(), 1.0)]
            .into_iter()
            .collect();
        let live = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(live.price_warning, None);
        assert_eq!(cloud.call_counts().get("Pricing.GetProducts"), 1);
        for catalog in [
            &live.catalog,
            &load(&cloud, &embedded, &opts).unwrap().catalog,
        ] {
            assert_eq!(
                offering_price(catalog, "m5.large", "us-east-1a", ON_DEMAND),
                0.107
            );
            assert_eq!(
                offering_price(catalog, "c6a.2xlarge", "us-east-1a", ON_DEMAND),
                0.306,
                "not in the answer: the snapshot's price"
            );
            let notes = catalog.notes();
            assert!(
                notes[0].contains("on-demand prices from the Pricing API for us-east-1 (1 types;"),
                "{notes:?}"
            );
            assert!(
                notes[1]
                    .starts_with("on-demand prices: us-east-1 list prices from the Pricing API"),
                "{notes:?}"
            );
        }
        assert_eq!(
            cloud.call_counts().get("Pricing.GetProducts"),
            1,
            "cached with the catalog"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// "should return static on-demand data if pricing API fails": a denied, unreachable or
    /// throttled GetProducts, or one answering no price ("no on-demand pricing found"), keeps
    /// the snapshot's prices and says so once per run, from the cache too.
    #[test]
    fn a_failing_or_empty_pricing_answer_keeps_the_snapshot_prices_and_says_so() {
        let denied = CloudError::Api {
            service: "Pricing".into(),
            operation: "GetProducts".into(),
            code: "AccessDeniedException".into(),
            message: "not authorized to perform: pricing:GetProducts".into(),
        };
        let unreachable = CloudError::Transport {
            service: "Pricing".into(),
            operation: "GetProducts".into(),
            message: "dispatch failure: connection refused".into(),
        };
        let throttled = CloudError::Api {
            service: "Pricing".into(),
            operation: "GetProducts".into(),
            code: "ThrottlingException".into(),
            message: "Rate exceeded".into(),
        };
        for (error, says) in [
            (Some(denied), "AccessDeniedException"),
            (Some(unreachable), "connection refused"),
            (Some(throttled), "ThrottlingException"),
            (None, "answered no on-demand price for us-east-1"),
        ] {
            let (dir, embedded, cloud, opts) = caching("pricing-fails");
            if let Some(e) = error {
                cloud.fail("Pricing.GetProducts", e);
            }
            let live = load(&cloud, &embedded, &opts).unwrap();
            let cached = load(&cloud, &embedded, &opts).unwrap();
            assert_eq!(cached.origin, Origin::Cache);
            for l in [&live, &cached] {
                let warning = l.price_warning.as_deref().unwrap_or_default();
                assert!(
                    warning.starts_with(
                        "assuming: on-demand prices are the embedded snapshot's us-east-1 list prices ("
                    ) && warning.contains(says),
                    "{warning}"
                );
                assert_eq!(
                    offering_price(&l.catalog, "m5.large", "us-east-1a", ON_DEMAND),
                    0.096
                );
                let notes = l.catalog.notes();
                assert!(notes[1].starts_with("on-demand prices: us-east-1 list prices;"));
                assert!(!notes[0].contains("Pricing API"), "{notes:?}");
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// "should return static on-demand data when in an AWS GovCloud region": the Pricing API
    /// is not asked there.
    #[test]
    fn govcloud_is_not_asked() {
        assert!(!asks_pricing_api("us-gov-west-1"));
        assert!(!asks_pricing_api("us-gov-east-1"));
        assert!(asks_pricing_api("eu-west-1"));
        assert!(asks_pricing_api("cn-north-1"));
    }

    #[test]
    fn cache_hit_expiry_refresh_and_corruption() {
        let dir = temp_dir("cache");
        let embedded = Catalog::embedded().unwrap();
        let cloud = fake();
        let opts = LiveOptions {
            cache_dir: Some(dir.clone()),
            ttl: DEFAULT_TTL,
            refresh: false,
        };
        let first = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(first.origin, Origin::Fetched);
        assert_eq!(first.cache_warning, None);
        let path = cache_path(&dir, "us-east-1");
        assert_eq!(first.cache_path.as_deref(), Some(path.as_path()));
        assert!(path.exists());
        assert_eq!(cloud.call_counts().total(), 4);

        let second = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(second.origin, Origin::Cache);
        assert_eq!(cloud.call_counts().total(), 4, "a cache hit makes no calls");

        let expired = LiveOptions {
            ttl: Duration::ZERO,
            ..opts.clone()
        };
        assert_eq!(
            load(&cloud, &embedded, &expired).unwrap().origin,
            Origin::Fetched
        );
        let refresh = LiveOptions {
            refresh: true,
            ..opts.clone()
        };
        assert_eq!(
            load(&cloud, &embedded, &refresh).unwrap().origin,
            Origin::Fetched
        );
        assert_eq!(cloud.call_counts().total(), 12);

        std::fs::write(&path, "{not json").unwrap();
        let corrupt = load(&cloud, &embedded, &opts).unwrap();
        assert_eq!(corrupt.origin, Origin::Fetched);
        assert!(corrupt
            .cache_warning
            .as_deref()
            .is_some_and(|w| w.contains("corrupt")));
        assert_eq!(
            load(&cloud, &embedded, &opts).unwrap().origin,
            Origin::Cache,
            "rewritten"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn errors_pass_through_and_nothing_is_cached() {
        let dir = temp_dir("errors");
        let cloud = fake();
        cloud.fail(
            "EC2.DescribeInstanceTypeOfferings",
            CloudError::Api {
                service: "EC2".into(),
                operation: "DescribeInstanceTypeOfferings".into(),
                code: "UnauthorizedOperation".into(),
                message: "no".into(),
            },
        );
        let opts = LiveOptions {
            cache_dir: Some(dir.clone()),
            ..LiveOptions::default()
        };
        let err = load(&cloud, &Catalog::embedded().unwrap(), &opts).unwrap_err();
        assert!(matches!(err, LiveCatalogError::Cloud(ref e) if e.is_permission()));
        assert!(!cache_path(&dir, "us-east-1").exists());
    }

    #[test]
    fn cache_dir_follows_xdg() {
        let dir =
            |x: Option<&str>, h: Option<&str>| cache_dir_from(x.map(Into::into), h.map(Into::into));
        assert_eq!(
            dir(Some("/x"), Some("/home/u")),
            Some(PathBuf::from("/x/kubectl-karpenter"))
        );
        assert_eq!(
            dir(Some("relative"), Some("/home/u")),
            Some(PathBuf::from("/home/u/.cache/kubectl-karpenter")),
            "a relative XDG_CACHE_HOME is ignored"
        );
        assert_eq!(
            dir(Some(""), Some("/home/u")),
            Some(PathBuf::from("/home/u/.cache/kubectl-karpenter"))
        );
        assert_eq!(dir(None, None), None);
        assert_eq!(
            cache_path(Path::new("/c/kubectl-karpenter"), "eu-west-1"),
            PathBuf::from("/c/kubectl-karpenter/catalog-eu-west-1.json")
        );
    }
}
