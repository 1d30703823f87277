//! The embedded instance-type snapshot and its schema: EC2's DescribeInstanceTypes /
//! DescribeInstanceTypeOfferings facts reduced to what Karpenter's AWS provider reads, plus
//! us-east-1 on-demand list prices (`catalog/aws-snapshot.json`, written by
//! `scripts/gen_catalog.py`; the live catalog caches the same structure), and the notes on what
//! such data approximates.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The embedded snapshot. Parsed on first use only: most commands never plan.
pub(super) const EMBEDDED_SNAPSHOT: &str = include_str!("../../../catalog/aws-snapshot.json");
/// The snapshot schema this code understands.
pub const SNAPSHOT_SCHEMA_VERSION: u32 = 1;
/// The region whose list prices the snapshot carries.
pub const PRICE_REGION: &str = "us-east-1";

/// The snapshot file: EC2 facts reduced to what Karpenter's AWS provider reads. The live AWS
/// adapter can produce (and cache) the same structure from DescribeInstanceTypes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AwsSnapshot {
    /// Schema version (1).
    pub schema_version: u32,
    /// Where the data came from, for `notes()`.
    #[serde(default)]
    pub source: String,
    /// The region whose list prices [`InstanceFacts::on_demand_price`] holds where the Pricing
    /// API gave one (a live snapshot); absent: [`PRICE_REGION`]'s list prices throughout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_price_region: Option<String>,
    /// Instance types, sorted by name.
    pub instance_types: Vec<InstanceFacts>,
    /// Per-region zones and offerings.
    pub regions: BTreeMap<String, RegionFacts>,
}

/// One instance type's facts (a reduced `InstanceTypeInfo`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceFacts {
    /// e.g. `m5.large`.
    pub name: String,
    /// `VCpuInfo.DefaultVCpus`.
    pub vcpu: i64,
    /// `MemoryInfo.SizeInMiB`.
    #[serde(rename = "memoryMiB")]
    pub memory_mib: i64,
    /// Kubernetes architecture names (`amd64`, `arm64`), in EC2's order.
    pub architectures: Vec<String>,
    /// `nitro`, `xen`; absent on bare metal.
    #[serde(default)]
    pub hypervisor: Option<String>,
    /// `BareMetal`.
    #[serde(default)]
    pub bare_metal: bool,
    /// `CurrentGeneration`.
    #[serde(default)]
    pub current_generation: bool,
    /// ENIs on the default network card.
    pub max_enis: i64,
    /// `Ipv4AddressesPerInterface`.
    pub ipv4_per_eni: i64,
    /// `EfaInfo.MaximumEfaInterfaces` (0 without EFA).
    #[serde(default)]
    pub efa_max_interfaces: i64,
    /// `NetworkInfo.NetworkCards[].MaximumNetworkInterfaces`, at each card's
    /// `NetworkCardIndex` (EC2 numbers them 0..n-1). `None` in catalogs written before it was
    /// recorded: the card-count and other-card checks of `networkInterfaces` are then skipped
    /// (`aws.rs` `compatible_with_node_class`, said by `Catalog::checks_network_interfaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_cards: Option<Vec<i64>>,
    /// `NetworkInfo.EnaSupport`; `None`: not recorded (the ENA check is skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ena_support: Option<EnaSupport>,
    /// `PlacementGroupInfo.SupportedStrategies` (`cluster`, `partition`, `spread`); `None`: not
    /// recorded (catalogs written before it), the placement-group strategy check is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group_strategies: Option<Vec<String>>,
    /// `ProcessorInfo.SupportedFeatures` (`nested-virtualization`, …); `None`: not recorded
    /// (catalogs written before it), the nested-virtualization check is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_features: Option<Vec<String>>,
    /// The single GPU model, if exactly one.
    #[serde(default)]
    pub gpu: Option<GpuFacts>,
    /// The single accelerator model (Neuron devices first), if exactly one.
    #[serde(default)]
    pub accelerator: Option<AcceleratorFacts>,
    /// `InstanceStorageInfo.TotalSizeInGB` (0 without instance storage).
    #[serde(rename = "localStorageGB", default)]
    pub local_storage_gb: i64,
    /// Whether the instance storage is NVMe.
    #[serde(default)]
    pub local_nvme: bool,
    /// Lower-kebab processor manufacturer (`intel`, `amd`, `aws`).
    #[serde(default)]
    pub cpu_manufacturer: Option<String>,
    /// Sustained clock speed in MHz.
    #[serde(default)]
    pub sustained_clock_speed_mhz: Option<i64>,
    /// Maximum EBS bandwidth (only when EBS-optimized by default).
    #[serde(default)]
    pub ebs_bandwidth_mbps: Option<i64>,
    /// EC2's baseline network bandwidth (the per-card baselines, or the fixed total its
    /// `NetworkPerformance` states). Not a label source: Karpenter's
    /// `instance-network-bandwidth` is its compiled table's (`network_bandwidth.rs`).
    #[serde(default)]
    pub network_bandwidth_mbps: Option<i64>,
    /// `EncryptionInTransitSupported`.
    #[serde(default)]
    pub encryption_in_transit: bool,
    /// `on-demand` and/or `spot`.
    #[serde(default)]
    pub usage_classes: Vec<String>,
    /// On-demand list price, USD/hour: [`PRICE_REGION`]'s in the embedded snapshot, the
    /// snapshot's [`AwsSnapshot::live_price_region`] where the Pricing API priced the type.
    /// (`onDemandPriceUsEast1` is the name older caches and catalogs used.)
    #[serde(default, alias = "onDemandPriceUsEast1")]
    pub on_demand_price: Option<f64>,
}

/// `NetworkInfo.EnaSupport`: whether the type supports Elastic Network Adapter interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EnaSupport {
    /// No ENA: the provider's `networkInterfaces` check refuses the type.
    Unsupported,
    /// ENA available.
    Supported,
    /// ENA required.
    Required,
}

impl EnaSupport {
    /// EC2's value (`unsupported`, `supported`, `required`); `None` for anything else.
    pub fn parse(value: &str) -> Option<EnaSupport> {
        match value {
            "unsupported" => Some(EnaSupport::Unsupported),
            "supported" => Some(EnaSupport::Supported),
            "required" => Some(EnaSupport::Required),
            _ => None,
        }
    }
}

/// A GPU model of an instance type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuFacts {
    /// Lower-kebab name (`t4`, `a10g`).
    pub name: String,
    /// Lower-kebab manufacturer (`nvidia`, `amd`, `habana`).
    pub manufacturer: String,
    /// GPUs per instance.
    pub count: i64,
    /// Memory per GPU, MiB.
    #[serde(rename = "memoryMiB", default)]
    pub memory_mib: Option<i64>,
}

/// An accelerator model (Neuron device or inference accelerator).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceleratorFacts {
    /// Lower-kebab name (`inferentia2`, `trainium`).
    pub name: String,
    /// Lower-kebab manufacturer (`aws` for Neuron devices).
    pub manufacturer: String,
    /// Devices per instance.
    pub count: i64,
    /// NeuronCores per device (`NeuronInfo.NeuronDevices[].CoreInfo.Count`); absent in the
    /// embedded snapshot, where the device's name gives it ([`AcceleratorFacts::neuron_cores`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<i64>,
}

impl AcceleratorFacts {
    /// `aws.amazon.com/neuroncore` of the instance: devices × cores per device (aws v1.14.1
    /// `pkg/providers/instancetype/types.go` `awsNeuronCores`). Without `cores`, the Neuron
    /// devices' published core counts: Inferentia 4, Inferentia2 and Trainium 2, Trainium2 8
    /// (aws v1.14.1 `pkg/fake/zz_generated.describe_instance_types.go` for inf2 and trn1).
    /// 0 for other accelerators.
    pub fn neuron_cores(&self) -> i64 {
        if self.manufacturer != "aws" {
            return 0;
        }
        let per_device = self.cores.unwrap_or(match self.name.as_str() {
            "inferentia" => 4,
            "inferentia2" | "trainium" => 2,
            "trainium2" => 8,
            _ => 0,
        });
        self.count * per_device
    }
}

/// A region's zones, which instance types each zone offers and, in a live catalog, the current
/// spot prices.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", from = "RegionFile")]
pub struct RegionFacts {
    /// Every zone of the region.
    pub zones: Vec<String>,
    /// Instance type → zones that offer it.
    pub offerings: BTreeMap<String, Vec<String>>,
    /// Instance type → zone → current spot price (USD/h), from DescribeSpotPriceHistory. Only
    /// a live catalog has them (the embedded snapshot has none: spot prices move too fast to
    /// ship). A region without any carries the on-demand price on its spot offerings as a
    /// stand-in; in a region with some, a (type, zone) without one offers no spot (`aws.rs`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spot_prices: BTreeMap<String, BTreeMap<String, f64>>,
}

/// [`RegionFacts`] as a file writes it: a type's zones either named, or — the embedded snapshot,
/// where every zone of a region is the region's name and one letter — as those letters
/// (`"m5.large":"abcdf"`), which keeps thirty regions' offerings small.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RegionFile {
    zones: Vec<String>,
    offerings: BTreeMap<String, ZoneList>,
    #[serde(default)]
    spot_prices: BTreeMap<String, BTreeMap<String, f64>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ZoneList {
    Names(Vec<String>),
    Letters(String),
}

impl From<RegionFile> for RegionFacts {
    fn from(file: RegionFile) -> RegionFacts {
        // A letter names the region's zone ending in it (`a` → `eu-west-1a`); the generator
        // writes letters only when every zone is the region's name and one letter.
        let width = file.zones.first().map_or(0, String::len);
        let zone_of = |letter: char| {
            file.zones
                .iter()
                .find(|z| z.ends_with(letter) && z.len() == width)
                .cloned()
        };
        let offerings = file
            .offerings
            .into_iter()
            .map(|(name, zones)| {
                let zones = match zones {
                    ZoneList::Names(names) => names,
                    ZoneList::Letters(letters) => letters.chars().filter_map(zone_of).collect(),
                };
                (name, zones)
            })
            .collect();
        RegionFacts {
            zones: file.zones,
            offerings,
            spot_prices: file.spot_prices,
        }
    }
}

impl RegionFacts {
    /// The spot price of `instance_type` in `zone`, when known.
    pub fn spot_price(&self, instance_type: &str, zone: &str) -> Option<f64> {
        self.spot_prices.get(instance_type)?.get(zone).copied()
    }
}

impl AwsSnapshot {
    /// The region whose list prices the on-demand prices are: a live snapshot's own region
    /// when the Pricing API priced it (types it did not price keep [`PRICE_REGION`]'s), else
    /// [`PRICE_REGION`].
    pub fn on_demand_price_region(&self) -> &str {
        self.live_price_region.as_deref().unwrap_or(PRICE_REGION)
    }
}

pub(super) fn aws_notes(snapshot: &AwsSnapshot) -> Vec<String> {
    let spot_priced: BTreeSet<&str> = snapshot
        .regions
        .values()
        .flat_map(|r| r.spot_prices.iter())
        .filter(|(_, zones)| !zones.is_empty())
        .map(|(name, _)| name.as_str())
        .collect();
    let unpriced: Vec<&str> = snapshot
        .instance_types
        .iter()
        .filter(|t| t.on_demand_price.is_none() && !spot_priced.contains(t.name.as_str()))
        .map(|t| t.name.as_str())
        .collect();
    let live = snapshot.source.starts_with("live ");
    let mut notes = vec![
        if live {
            format!("instance types: {}", snapshot.source)
        } else {
            format!("instance types: embedded snapshot ({})", snapshot.source)
        },
        match snapshot.on_demand_price_region() {
            region if snapshot.live_price_region.is_none() => format!(
                "on-demand prices: {region} list prices; in other regions they are used as an estimate"
            ),
            region => format!(
                "on-demand prices: {region} list prices from the Pricing API (a type it did not price: \
                 the {PRICE_REGION} list price, as an estimate)"
            ),
        },
        if !spot_priced.is_empty() {
            format!(
                "spot: DescribeSpotPriceHistory prices ({} types); a type and zone without one offer no spot, as in \
                 Karpenter once it has loaded spot prices",
                spot_priced.len()
            )
        } else if live {
            "spot: no DescribeSpotPriceHistory prices (see the source above); spot offerings carry the \
             on-demand price (an upper bound), so plans never count on spot savings"
                .to_string()
        } else {
            "spot: no spot prices offline; spot offerings carry the on-demand price (an upper bound), so plans \
             never count on spot savings"
                .to_string()
        },
    ];
    if !unpriced.is_empty() {
        let shown: Vec<&str> = unpriced.iter().take(5).copied().collect();
        let more = if unpriced.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        notes.push(format!(
            "{} instance types have no known price; their offerings are unavailable and never chosen ({}{more})",
            unpriced.len(),
            shown.join(", ")
        ));
    }
    notes.push(
        "not modelled offline: zone IDs, capacity reservations; RESERVED_ENIS and VM_MEMORY_OVERHEAD_PERCENT are \
         Karpenter's defaults (0, 0.075) unless --reserved-enis / --vm-memory-overhead-percent say otherwise; memory \
         is the VM-overhead estimate unless a registered node of the type, its NodeClaim and the class's status.amis are in the input (Karpenter's \
         discovered-capacity cache also remembers nodes deleted in the last 60 days)"
            .to_string(),
    );
    notes
}
