//! The instance-type catalog: what Karpenter's AWS provider would offer a node class, computed
//! offline.
//!
//! Two sources feed the same [`InstanceType`] model:
//! * the **embedded snapshot** (`catalog/aws-snapshot.json`, written by `scripts/gen_catalog.py`
//!   from the EC2 API's DescribeInstanceTypes / DescribeInstanceTypeOfferings responses, plus
//!   us-east-1 on-demand list prices). Requirements, capacity and overhead are derived from those
//!   facts exactly as `aws v1.14.1: pkg/providers/instancetype/types.go` does (KARPENTER.md §2.2,
//!   §6.3) for a given region, AMI family and kubelet configuration;
//! * a **custom catalog** (`--catalog FILE`, SPEC.md §5.5): instance types written out by the
//!   user, for what-if analysis, other clouds' shapes and tests.
//!
//! Offline data is necessarily approximate; every approximation is listed by [`Catalog::notes`]
//! so the CLI can print it under `-v` instead of letting a plan look more certain than it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::instance_type::{InstanceType, Offering, Overhead, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::nodepool::{BlockDevice, KubeletConfig};
use crate::model::overhead::{self, AmiFamily, InstanceShape, NodeSettings};
use crate::model::quantity::{parse_milli, QuantityError, ONE};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::{Resources, PODS};

/// The embedded snapshot. Parsed on first use only: most commands never plan.
const EMBEDDED_SNAPSHOT: &str = include_str!("../../catalog/aws-snapshot.json");
/// The snapshot schema this code understands.
pub const SNAPSHOT_SCHEMA_VERSION: u32 = 1;
/// The region whose list prices the snapshot carries.
pub const PRICE_REGION: &str = "us-east-1";
/// The kubelet's default `maxPods`, for custom catalog entries that give no `pods` capacity.
const DEFAULT_CUSTOM_PODS: i64 = 110;

// AWS well-known label keys not already named in `model::labels`.
const INSTANCE_CPU: &str = "karpenter.k8s.aws/instance-cpu";
const INSTANCE_CPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-cpu-manufacturer";
const INSTANCE_CPU_CLOCK: &str = "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz";
const INSTANCE_MEMORY: &str = "karpenter.k8s.aws/instance-memory";
const INSTANCE_EBS_BANDWIDTH: &str = "karpenter.k8s.aws/instance-ebs-bandwidth";
const INSTANCE_NETWORK_BANDWIDTH: &str = "karpenter.k8s.aws/instance-network-bandwidth";
const INSTANCE_LOCAL_NVME: &str = "karpenter.k8s.aws/instance-local-nvme";
const INSTANCE_CAPABILITY_FLEX: &str = "karpenter.k8s.aws/instance-capability-flex";
const INSTANCE_GPU_NAME: &str = "karpenter.k8s.aws/instance-gpu-name";
const INSTANCE_GPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-gpu-manufacturer";
const INSTANCE_GPU_MEMORY: &str = "karpenter.k8s.aws/instance-gpu-memory";
const INSTANCE_ACCELERATOR_NAME: &str = "karpenter.k8s.aws/instance-accelerator-name";
const INSTANCE_ACCELERATOR_MANUFACTURER: &str =
    "karpenter.k8s.aws/instance-accelerator-manufacturer";
const INSTANCE_HYPERVISOR: &str = "karpenter.k8s.aws/instance-hypervisor";
const INSTANCE_ENCRYPTION_IN_TRANSIT: &str =
    "karpenter.k8s.aws/instance-encryption-in-transit-supported";
const INSTANCE_TENANCY: &str = "karpenter.k8s.aws/instance-tenancy";
const CAPACITY_RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";
const CAPACITY_RESERVATION_TYPE: &str = "karpenter.k8s.aws/capacity-reservation-type";

// ------------------------------------------------------------------------------------ errors

/// Why a catalog cannot be loaded or used. Every message is one line naming the file and, for
/// content errors, the field path, so a user can fix the file without a debugger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The path as given.
        file: String,
        /// The I/O error.
        message: String,
    },
    /// The file is not valid JSON/YAML, or not a mapping.
    #[error("{file}: {message}")]
    Syntax {
        /// The path as given.
        file: String,
        /// The parser's message, with its line and column.
        message: String,
    },
    /// A field has a wrong or missing value.
    #[error("{file}: {field}: {message}")]
    Invalid {
        /// The path as given.
        file: String,
        /// Field path, e.g. `instanceTypes[3].capacity.memory`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The embedded snapshot has no data for the region.
    #[error("unknown region {region:?}: the embedded catalog covers {} (use --catalog FILE for other regions)", known.join(", "))]
    UnknownRegion {
        /// The region asked for.
        region: String,
        /// The regions the snapshot covers.
        known: Vec<String>,
    },
    /// The embedded (or cached) snapshot does not match the expected schema: a build problem.
    #[error("instance-type snapshot is invalid: {0}")]
    Snapshot(String),
}

/// `Result` with a [`CatalogError`].
pub type Result<T, E = CatalogError> = std::result::Result<T, E>;

// --------------------------------------------------------------------------- the snapshot

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
    /// Baseline network bandwidth.
    #[serde(default)]
    pub network_bandwidth_mbps: Option<i64>,
    /// `EncryptionInTransitSupported`.
    #[serde(default)]
    pub encryption_in_transit: bool,
    /// `on-demand` and/or `spot`.
    #[serde(default)]
    pub usage_classes: Vec<String>,
    /// us-east-1 on-demand list price, USD/hour.
    #[serde(default)]
    pub on_demand_price_us_east1: Option<f64>,
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
}

/// A region's zones, which instance types each zone offers and, in a live catalog, the current
/// spot prices.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionFacts {
    /// Every zone of the region.
    pub zones: Vec<String>,
    /// Instance type → zones that offer it.
    pub offerings: BTreeMap<String, Vec<String>>,
    /// Instance type → zone → current spot price (USD/h), from DescribeSpotPriceHistory. Only
    /// a live catalog has them (the embedded snapshot has none: spot prices move too fast to
    /// ship); a spot offering without one carries the on-demand price as a stand-in.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spot_prices: BTreeMap<String, BTreeMap<String, f64>>,
}

impl RegionFacts {
    /// The spot price of `instance_type` in `zone`, when known.
    pub fn spot_price(&self, instance_type: &str, zone: &str) -> Option<f64> {
        self.spot_prices.get(instance_type)?.get(zone).copied()
    }
}

// -------------------------------------------------------------------------------- context

/// What the AWS provider's instance types depend on besides EC2's facts: the region, the node
/// class (AMI family, kubelet, disks, subnet zones) and the controller's memory-overhead
/// setting. One catalog serves every node class through different contexts.
#[derive(Debug, Clone, Copy)]
pub struct InstanceTypeContext<'a> {
    /// AWS region.
    pub region: &'a str,
    /// `AL2`, `AL2023`, `Bottlerocket`, `Windows2019`/`2022`/`2025`, `Custom`, `Ubuntu`;
    /// anything else is treated as AL2, as Karpenter does.
    pub ami_family: &'a str,
    /// Kubelet configuration of the node class (v1) or NodePool (older generations).
    pub kubelet: Option<&'a KubeletConfig>,
    /// The node class's block device mappings.
    pub block_devices: &'a [BlockDevice],
    /// `instanceStorePolicy` (`RAID0`).
    pub instance_store_policy: Option<&'a str>,
    /// `VM_MEMORY_OVERHEAD_PERCENT` (default 0.075).
    pub vm_memory_overhead_percent: f64,
    /// Zones of the node class's subnets; `None` = every zone of the region.
    pub zones: Option<&'a [String]>,
}

impl<'a> InstanceTypeContext<'a> {
    /// Karpenter's defaults for everything but the region and AMI family.
    pub fn new(region: &'a str, ami_family: &'a str) -> Self {
        InstanceTypeContext {
            region,
            ami_family,
            kubelet: None,
            block_devices: &[],
            instance_store_policy: None,
            vm_memory_overhead_percent: overhead::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
            zones: None,
        }
    }

    fn family(&self) -> AmiFamily {
        AmiFamily::parse_or_default(self.ami_family)
    }

    fn zone_allowed(&self, zone: &str) -> bool {
        self.zones
            .is_none_or(|zones| zones.iter().any(|z| z == zone))
    }
}

// -------------------------------------------------------------------------------- catalog

/// An instance-type catalog. Cheap to clone (shared, immutable).
#[derive(Debug, Clone)]
pub struct Catalog {
    inner: Arc<Source>,
}

#[derive(Debug)]
enum Source {
    Aws(AwsSnapshot),
    Custom(CustomCatalog),
}

impl Catalog {
    /// The snapshot compiled into the binary, parsed once per process.
    pub fn embedded() -> Result<Catalog> {
        static EMBEDDED: OnceLock<Result<Catalog>> = OnceLock::new();
        EMBEDDED
            .get_or_init(|| Catalog::from_snapshot_json(EMBEDDED_SNAPSHOT))
            .clone()
    }

    /// A snapshot in the embedded schema (e.g. a cached live DescribeInstanceTypes result).
    pub fn from_snapshot_json(text: &str) -> Result<Catalog> {
        let snapshot: AwsSnapshot = serde_json::from_str(text)
            .map_err(|e| CatalogError::Snapshot(one_line(&e.to_string())))?;
        Catalog::from_snapshot(snapshot)
    }

    /// Wraps snapshot data after checking its schema version.
    pub fn from_snapshot(snapshot: AwsSnapshot) -> Result<Catalog> {
        if snapshot.schema_version != SNAPSHOT_SCHEMA_VERSION {
            return Err(CatalogError::Snapshot(format!(
                "schemaVersion {} is not supported (expected {SNAPSHOT_SCHEMA_VERSION})",
                snapshot.schema_version
            )));
        }
        Ok(Catalog {
            inner: Arc::new(Source::Aws(snapshot)),
        })
    }

    /// A `--catalog FILE` (SPEC.md §5.5). JSON when the name ends in `.json`, YAML otherwise.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Catalog> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| CatalogError::Read {
            file: file.clone(),
            message: one_line(&e.to_string()),
        })?;
        Catalog::from_custom_text(&file, &text)
    }

    /// A custom catalog from text; `file` names it in errors and picks the format.
    pub fn from_custom_text(file: &str, text: &str) -> Result<Catalog> {
        let custom = CustomCatalog::parse(file, text)?;
        Ok(Catalog {
            inner: Arc::new(Source::Custom(custom)),
        })
    }

    /// Whether this is a `--catalog FILE` rather than AWS data.
    pub fn is_custom(&self) -> bool {
        matches!(*self.inner, Source::Custom(_))
    }

    /// The AWS snapshot behind this catalog (`None` for a `--catalog FILE`): the live catalog
    /// takes its on-demand prices from the embedded one.
    pub fn aws_snapshot(&self) -> Option<&AwsSnapshot> {
        match &*self.inner {
            Source::Aws(s) => Some(s),
            Source::Custom(_) => None,
        }
    }

    /// Regions with offerings data (empty for custom catalogs, which ignore the region).
    pub fn regions(&self) -> Vec<&str> {
        match &*self.inner {
            Source::Aws(s) => s.regions.keys().map(String::as_str).collect(),
            Source::Custom(_) => Vec::new(),
        }
    }

    /// The instance types a node class would see, sorted by name.
    ///
    /// For AWS data: every type offered in at least one allowed zone of the region (types the
    /// region or the subnets do not offer are left out; so are arm64 types for Windows families,
    /// whose `kubernetes.io/os` requirement would be empty). For a custom catalog: every entry
    /// with an offering in an allowed zone; the region is not checked.
    pub fn instance_types(&self, ctx: &InstanceTypeContext) -> Result<Vec<InstanceType>> {
        let mut out = match &*self.inner {
            Source::Aws(snapshot) => aws_instance_types(snapshot, ctx)?,
            Source::Custom(custom) => custom.instance_types(ctx),
        };
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The hourly price (USD) of a running instance of `instance_type` bought as
    /// `capacity_type` in `zone`, or `None` when the catalog does not know it.
    ///
    /// AWS data: on-demand is the list price (us-east-1's, the estimate used in every region,
    /// as [`Catalog::instance_types`] does); spot is the zone's DescribeSpotPriceHistory price
    /// when the catalog is live and has one, else `None` (the spot offering only carries the
    /// on-demand price as a planning stand-in, which is not what the instance costs); reserved
    /// is `None`. A custom catalog answers with the price of the offering for exactly that
    /// zone and capacity type.
    pub fn hourly_price(
        &self,
        instance_type: &str,
        zone: &str,
        capacity_type: &str,
    ) -> Option<f64> {
        match &*self.inner {
            Source::Aws(s) => {
                if capacity_type == SPOT {
                    // Zone names are unique across regions.
                    return s
                        .regions
                        .values()
                        .find_map(|r| r.spot_price(instance_type, zone));
                }
                if capacity_type != ON_DEMAND {
                    return None;
                }
                s.instance_types
                    .iter()
                    .find(|t| t.name == instance_type)
                    .and_then(|t| t.on_demand_price_us_east1)
            }
            Source::Custom(c) => c
                .types
                .iter()
                .find(|t| t.name == instance_type)?
                .offerings
                .iter()
                .find(|o| o.zone == zone && o.capacity_type == capacity_type)
                .map(|o| o.price),
        }
    }

    /// Human notes on where the data comes from and what is approximated, for `-v`.
    pub fn notes(&self) -> Vec<String> {
        match &*self.inner {
            Source::Aws(snapshot) => aws_notes(snapshot),
            Source::Custom(custom) => vec![
                format!("instance types: {} ({} types)", custom.file, custom.types.len()),
                "entries without `overhead` use the AWS formulas (kube-reserved from CPU and pods, eviction 100Mi \
                 and 10% of ephemeral storage); entries without `pods` capacity get the kubelet's maxPods or 110"
                    .to_string(),
                "custom catalogs ignore the region; zones come from each entry's offerings".to_string(),
            ],
        }
    }
}

// ---------------------------------------------------------------------- AWS instance types

/// Builds every instance type of the snapshot for `ctx`.
///
/// Offerings: one per allowed offered zone and capacity type (`SupportedUsageClasses`
/// ∩ {on-demand, spot}).
/// * **On-demand prices** are the us-east-1 list prices, used as the estimate in every region.
/// * **Spot** offerings take the region's spot price of their (type, zone)
///   ([`RegionFacts::spot_prices`], DescribeSpotPriceHistory in a live catalog). Without one
///   (the embedded snapshot, a failed or partial DescribeSpotPriceHistory) they carry the
///   on-demand price: a conservative stand-in (real spot prices are lower) that keeps
///   cheapest-first ordering meaningful without inventing numbers.
/// * An offering with **no known price** (no on-demand price, and for spot no spot price
///   either) has `available: false` (price 0): like Karpenter without a price, it is listed
///   but never launched.
fn aws_instance_types(
    snapshot: &AwsSnapshot,
    ctx: &InstanceTypeContext,
) -> Result<Vec<InstanceType>> {
    let region = snapshot
        .regions
        .get(ctx.region)
        .ok_or_else(|| CatalogError::UnknownRegion {
            region: ctx.region.to_string(),
            known: snapshot.regions.keys().cloned().collect(),
        })?;
    let family = ctx.family();
    let settings = NodeSettings {
        family,
        kubelet: ctx.kubelet,
        block_devices: ctx.block_devices,
        instance_store_policy: ctx.instance_store_policy,
        vm_memory_overhead_percent: ctx.vm_memory_overhead_percent,
        reserved_enis: 0,
    };
    let mut out = Vec::new();
    for facts in &snapshot.instance_types {
        let Some(arch) = facts.architectures.first() else {
            continue;
        };
        if family.is_windows() && arch != "amd64" {
            continue;
        }
        let zones: BTreeSet<&str> = region
            .offerings
            .get(&facts.name)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|z| ctx.zone_allowed(z))
            .collect();
        let capacity_types: Vec<&str> = [ON_DEMAND, SPOT]
            .into_iter()
            .filter(|ct| facts.usage_classes.iter().any(|u| u == ct))
            .collect();
        if zones.is_empty() || capacity_types.is_empty() {
            continue;
        }
        out.push(aws_instance_type(
            facts,
            arch,
            ctx.region,
            &zones,
            &capacity_types,
            &settings,
            region.spot_prices.get(&facts.name),
        ));
    }
    Ok(out)
}

fn aws_instance_type(
    facts: &InstanceFacts,
    arch: &str,
    region: &str,
    zones: &BTreeSet<&str>,
    capacity_types: &[&str],
    settings: &NodeSettings,
    spot_prices: Option<&BTreeMap<String, f64>>,
) -> InstanceType {
    let family = settings.family;
    let shape = InstanceShape {
        vcpu: facts.vcpu,
        memory_mib: facts.memory_mib,
        arm64: arch == "arm64",
        max_enis: facts.max_enis,
        ipv4_per_eni: facts.ipv4_per_eni,
        instance_store_gb: facts.local_storage_gb,
    };
    let (mut capacity, overhead) = overhead::capacity_and_overhead(&shape, settings);
    for (resource, count) in extended_resources(facts, family) {
        capacity.set(resource, count * ONE);
    }

    let on_demand = facts.on_demand_price_us_east1;
    let offerings = zones
        .iter()
        .flat_map(|zone| {
            capacity_types.iter().map(move |ct| {
                // Spot: the zone's spot price, else the on-demand stand-in.
                let price = match *ct {
                    SPOT => spot_prices
                        .and_then(|p| p.get(*zone).copied())
                        .or(on_demand),
                    _ => on_demand,
                };
                Offering {
                    zone: zone.to_string(),
                    capacity_type: ct.to_string(),
                    price: price.unwrap_or(0.0),
                    available: price.is_some(),
                }
            })
        })
        .collect();

    InstanceType {
        name: facts.name.clone(),
        requirements: aws_requirements(facts, arch, region, zones, capacity_types, family),
        capacity,
        overhead,
        offerings,
    }
}

/// Device-plugin and VPC resources from the GPU/accelerator/network facts (`computeCapacity`).
/// Not modelled: `vpc.amazonaws.com/pod-eni` (needs the VPC resource controller's trunking
/// table) and `aws.amazon.com/neuroncore` (needs cores per Neuron device).
fn extended_resources(facts: &InstanceFacts, family: AmiFamily) -> Vec<(&'static str, i64)> {
    let mut out = Vec::new();
    if let Some(gpu) = &facts.gpu {
        match gpu.manufacturer.as_str() {
            "nvidia" => out.push((overhead::NVIDIA_GPU, gpu.count)),
            "amd" => out.push((overhead::AMD_GPU, gpu.count)),
            "habana" => out.push((overhead::HABANA_GAUDI, gpu.count)),
            _ => {}
        }
    }
    if let Some(acc) = facts
        .accelerator
        .as_ref()
        .filter(|a| a.manufacturer == "aws")
    {
        out.push((overhead::AWS_NEURON, acc.count));
    }
    if facts.efa_max_interfaces > 0 {
        out.push((overhead::EFA, facts.efa_max_interfaces));
    }
    // Windows pods get secondary IPs from the VPC resource controller: one per address but the
    // primary on the primary ENI.
    if family.is_windows() {
        out.push((overhead::PRIVATE_IPV4_ADDRESS, facts.ipv4_per_eni - 1));
    }
    out
}

/// `computeRequirements`: one requirement per AWS well-known key; facts the type lacks are
/// `DoesNotExist`, so e.g. an AMI variant requiring `instance-gpu-count Exists` skips it.
fn aws_requirements(
    facts: &InstanceFacts,
    arch: &str,
    region: &str,
    zones: &BTreeSet<&str>,
    capacity_types: &[&str],
    family: AmiFamily,
) -> Requirements {
    let mut r = Requirements::new();
    put(&mut r, labels::INSTANCE_TYPE, &facts.name);
    put(&mut r, labels::ARCH, arch);
    put(
        &mut r,
        labels::OS,
        if family.is_windows() {
            "windows"
        } else {
            "linux"
        },
    );
    r.add(Requirement::new(
        labels::ZONE,
        Operator::In,
        zones.iter().copied(),
    ));
    put(&mut r, labels::REGION, region);
    put_opt(&mut r, labels::WINDOWS_BUILD, family.windows_build());
    r.add(Requirement::new(
        labels::CAPACITY_TYPE,
        Operator::In,
        capacity_types.iter().copied(),
    ));

    put(&mut r, INSTANCE_CPU, &facts.vcpu.to_string());
    put_opt(
        &mut r,
        INSTANCE_CPU_MANUFACTURER,
        facts.cpu_manufacturer.as_deref(),
    );
    // Karpenter inserts round(GHz × 1000) even when EC2 gives no clock speed, i.e. "0".
    put(
        &mut r,
        INSTANCE_CPU_CLOCK,
        &facts.sustained_clock_speed_mhz.unwrap_or(0).to_string(),
    );
    put(&mut r, INSTANCE_MEMORY, &facts.memory_mib.to_string());
    put_opt(
        &mut r,
        INSTANCE_EBS_BANDWIDTH,
        facts.ebs_bandwidth_mbps.map(|v| v.to_string()).as_deref(),
    );
    put_opt(
        &mut r,
        INSTANCE_NETWORK_BANDWIDTH,
        facts
            .network_bandwidth_mbps
            .map(|v| v.to_string())
            .as_deref(),
    );
    let nvme = facts.local_nvme.then(|| facts.local_storage_gb.to_string());
    put_opt(&mut r, INSTANCE_LOCAL_NVME, nvme.as_deref());

    let (category, generation) = match category_and_generation(&facts.name) {
        Some((c, g)) => (Some(c), Some(g)),
        None => (None, None),
    };
    put_opt(&mut r, labels::INSTANCE_CATEGORY, category);
    put_opt(&mut r, labels::INSTANCE_GENERATION, generation);
    let (type_family, size) = match facts.name.split_once('.') {
        Some((f, s)) if !s.contains('.') => (Some(f), Some(s)),
        _ => (None, None),
    };
    put_opt(&mut r, labels::INSTANCE_FAMILY, type_family);
    put_opt(&mut r, labels::INSTANCE_SIZE, size);
    let flex = facts.name.split('.').next().unwrap_or("").contains("-flex");
    put(
        &mut r,
        INSTANCE_CAPABILITY_FLEX,
        if flex { "true" } else { "false" },
    );

    let gpu = facts.gpu.as_ref();
    put_opt(&mut r, INSTANCE_GPU_NAME, gpu.map(|g| g.name.as_str()));
    put_opt(
        &mut r,
        INSTANCE_GPU_MANUFACTURER,
        gpu.map(|g| g.manufacturer.as_str()),
    );
    put_opt(
        &mut r,
        labels::INSTANCE_GPU_COUNT,
        gpu.map(|g| g.count.to_string()).as_deref(),
    );
    put_opt(
        &mut r,
        INSTANCE_GPU_MEMORY,
        gpu.and_then(|g| g.memory_mib)
            .map(|m| m.to_string())
            .as_deref(),
    );
    let acc = facts.accelerator.as_ref();
    put_opt(
        &mut r,
        INSTANCE_ACCELERATOR_NAME,
        acc.map(|a| a.name.as_str()),
    );
    put_opt(
        &mut r,
        INSTANCE_ACCELERATOR_MANUFACTURER,
        acc.map(|a| a.manufacturer.as_str()),
    );
    put_opt(
        &mut r,
        labels::INSTANCE_ACCELERATOR_COUNT,
        acc.map(|a| a.count.to_string()).as_deref(),
    );

    // Bare-metal types have no hypervisor: Karpenter's label value is then the empty string.
    put(
        &mut r,
        INSTANCE_HYPERVISOR,
        facts.hypervisor.as_deref().unwrap_or(""),
    );
    put(
        &mut r,
        INSTANCE_ENCRYPTION_IN_TRANSIT,
        if facts.encryption_in_transit {
            "true"
        } else {
            "false"
        },
    );
    r.add(Requirement::new(
        INSTANCE_TENANCY,
        Operator::In,
        ["default", "dedicated"],
    ));
    // No capacity reservations offline.
    put_opt(&mut r, CAPACITY_RESERVATION_ID, None);
    put_opt(&mut r, CAPACITY_RESERVATION_TYPE, None);
    r
}

fn put(r: &mut Requirements, key: &str, value: &str) {
    r.add(Requirement::single(key, value));
}

/// `In [value]`, or `DoesNotExist` when there is no value.
fn put_opt(r: &mut Requirements, key: &str, value: Option<&str>) {
    match value {
        Some(v) => put(r, key, v),
        None => r.add(Requirement::new(
            key,
            Operator::DoesNotExist,
            std::iter::empty::<String>(),
        )),
    }
}

fn aws_notes(snapshot: &AwsSnapshot) -> Vec<String> {
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
        .filter(|t| t.on_demand_price_us_east1.is_none() && !spot_priced.contains(t.name.as_str()))
        .map(|t| t.name.as_str())
        .collect();
    let live = snapshot.source.starts_with("live ");
    let mut notes = vec![
        if live {
            format!("instance types: {}", snapshot.source)
        } else {
            format!("instance types: embedded snapshot ({})", snapshot.source)
        },
        format!(
            "on-demand prices: {PRICE_REGION} list prices; in other regions they are used as an estimate"
        ),
        if !spot_priced.is_empty() {
            format!(
                "spot: DescribeSpotPriceHistory prices ({} types); a spot offering without one carries the \
                 on-demand price (an upper bound)",
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
        "not modelled offline: vpc.amazonaws.com/pod-eni and aws.amazon.com/neuroncore capacity, zone IDs, \
         capacity reservations, RESERVED_ENIS, and Karpenter's discovered-capacity cache (memory is the \
         VM-overhead estimate)"
            .to_string(),
    );
    notes
}

// ---------------------------------------------------------------- labels from the name

/// Karpenter's `instanceTypeScheme` `(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`: the category
/// (group 1) and generation (group 3) of an instance type name, e.g. `("m", "5")` for
/// `m5.large`, `("u", "1")` for `u-6tb1.metal`.
pub fn category_and_generation(name: &str) -> Option<(&str, &str)> {
    let letters = name.bytes().take_while(u8::is_ascii_lowercase).count();
    if letters == 0 {
        return None;
    }
    let rest = &name[letters..];
    // The optional `-<n>tb` group is tried first, as the regex does.
    let with_tb = rest.strip_prefix('-').and_then(|s| {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0)
            .then(|| s[digits..].strip_prefix("tb"))
            .flatten()
    });
    for candidate in with_tb.into_iter().chain([rest]) {
        let digits = candidate.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && candidate[digits..].contains('.') {
            return Some((&name[..letters], &candidate[..digits]));
        }
    }
    None
}

/// The architecture an AWS instance type name implies: arm64 for Graviton families (a `g` among
/// the attribute letters after the generation: `m6g`, `c7gn`, `r8gd`, `is4gen`), `a1` and the
/// Apple-silicon `mac2` Macs; amd64 otherwise.
pub fn arch_from_name(name: &str) -> &'static str {
    let family = name.split('.').next().unwrap_or(name);
    if family == "a1" || family.starts_with("mac2") {
        return "arm64";
    }
    let attributes = category_and_generation(name).and_then(|(_, generation)| {
        let at = family.find(generation).map(|i| i + generation.len())?;
        Some(family[at..].split('-').next().unwrap_or(""))
    });
    if attributes.is_some_and(|a| a.contains('g')) {
        "arm64"
    } else {
        "amd64"
    }
}

/// The labels an AWS-style name implies (for custom catalogs): instance type, arch, os `linux`,
/// category, generation, family, size and capability-flex where the name has that shape.
pub fn labels_from_name(name: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: &str| {
        out.insert(k.to_string(), v.to_string());
    };
    put(labels::INSTANCE_TYPE, name);
    put(labels::ARCH, arch_from_name(name));
    put(labels::OS, "linux");
    if let Some((category, generation)) = category_and_generation(name) {
        put(labels::INSTANCE_CATEGORY, category);
        put(labels::INSTANCE_GENERATION, generation);
    }
    if let Some((family, size)) = name.split_once('.').filter(|(_, s)| !s.contains('.')) {
        put(labels::INSTANCE_FAMILY, family);
        put(labels::INSTANCE_SIZE, size);
        put(
            INSTANCE_CAPABILITY_FLEX,
            if family.contains("-flex") {
                "true"
            } else {
                "false"
            },
        );
    }
    out
}

// ------------------------------------------------------------------------ custom catalogs

#[derive(Debug)]
struct CustomCatalog {
    file: String,
    types: Vec<CustomType>,
}

#[derive(Debug)]
struct CustomType {
    name: String,
    capacity: Resources,
    overhead: Option<Resources>,
    /// Derived labels overlaid with the file's labels, keys normalised.
    labels: BTreeMap<String, String>,
    /// Whether the file set `kubernetes.io/os` itself (Windows families otherwise relabel).
    explicit_os: bool,
    offerings: Vec<Offering>,
}

/// Label keys a custom catalog may not set: they come from `name` and `offerings`.
const RESERVED_LABELS: [(&str, &str); 3] = [
    (
        labels::INSTANCE_TYPE,
        "the instance type is the entry's `name`",
    ),
    (labels::ZONE, "zones come from `offerings[].zone`"),
    (
        labels::CAPACITY_TYPE,
        "capacity types come from `offerings[].capacityType`",
    ),
];

/// Resources whose presence makes a type a GPU type, for the GPU-count requirement.
const GPU_RESOURCES: [&str; 3] = [
    overhead::NVIDIA_GPU,
    overhead::AMD_GPU,
    overhead::HABANA_GAUDI,
];

impl CustomCatalog {
    fn parse(file: &str, text: &str) -> Result<CustomCatalog> {
        let syntax = |message: String| CatalogError::Syntax {
            file: file.to_string(),
            message: one_line(&message),
        };
        let doc: Value = if file.ends_with(".json") {
            serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?
        } else {
            serde_saphyr::from_str_with_options(
                text,
                serde_saphyr::options! { with_snippet: false },
            )
            .map_err(|e| syntax(e.to_string()))?
        };
        let p = Parser { file };
        let Value::Object(root) = doc else {
            return Err(syntax(
                "expected a mapping with an `instanceTypes` list".to_string(),
            ));
        };
        for key in root.keys() {
            if !matches!(key.as_str(), "instanceTypes" | "apiVersion" | "kind") {
                return Err(p.invalid(key, "unknown field (expected instanceTypes)"));
            }
        }
        let list = match root.get("instanceTypes") {
            None => return Err(p.invalid("instanceTypes", "required field is missing")),
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(p.invalid(
                    "instanceTypes",
                    format!("expected a list, got {}", kind(other)),
                ))
            }
        };
        let mut types: Vec<CustomType> = Vec::with_capacity(list.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, entry) in list.iter().enumerate() {
            let path = format!("instanceTypes[{i}]");
            let t = p.instance_type(&path, entry)?;
            if let Some(first) = seen.insert(t.name.clone(), i) {
                return Err(p.invalid(
                    &format!("{path}.name"),
                    format!(
                        "duplicate instance type {:?} (also instanceTypes[{first}])",
                        t.name
                    ),
                ));
            }
            types.push(t);
        }
        Ok(CustomCatalog {
            file: file.to_string(),
            types,
        })
    }

    fn instance_types(&self, ctx: &InstanceTypeContext) -> Vec<InstanceType> {
        let family = ctx.family();
        self.types
            .iter()
            .filter_map(|t| {
                let arch = t.labels.get(labels::ARCH).map(String::as_str);
                if family.is_windows() && arch != Some("amd64") {
                    return None;
                }
                let offerings: Vec<Offering> = t
                    .offerings
                    .iter()
                    .filter(|o| ctx.zone_allowed(&o.zone))
                    .cloned()
                    .collect();
                if offerings.is_empty() {
                    return None;
                }
                let mut capacity = t.capacity.clone();
                if !capacity.contains(PODS) {
                    let pods = ctx
                        .kubelet
                        .and_then(|k| k.max_pods)
                        .unwrap_or(DEFAULT_CUSTOM_PODS);
                    capacity.set(PODS, pods * ONE);
                }
                let overhead = match &t.overhead {
                    Some(total) => Overhead {
                        kube_reserved: total.clone(),
                        ..Overhead::default()
                    },
                    None => overhead::overhead_for_capacity(&capacity, ctx.kubelet),
                };
                Some(InstanceType {
                    name: t.name.clone(),
                    requirements: t.requirements(family, &offerings),
                    capacity,
                    overhead,
                    offerings,
                })
            })
            .collect()
    }
}

impl CustomType {
    /// Labels as `In [value]`, zone and capacity type from the offerings, and — as for AWS
    /// types — `DoesNotExist` for GPU/accelerator counts the type does not have, so AMI
    /// variants and pods that avoid accelerators still match.
    fn requirements(&self, family: AmiFamily, offerings: &[Offering]) -> Requirements {
        let mut r = Requirements::new();
        for (k, v) in &self.labels {
            if family.is_windows() && k == labels::OS && !self.explicit_os {
                put(&mut r, k, "windows");
            } else {
                put(&mut r, k, v);
            }
        }
        if !self.labels.contains_key(labels::WINDOWS_BUILD) {
            put_opt(&mut r, labels::WINDOWS_BUILD, family.windows_build());
        }
        r.add(Requirement::new(
            labels::ZONE,
            Operator::In,
            offerings.iter().map(|o| o.zone.clone()),
        ));
        r.add(Requirement::new(
            labels::CAPACITY_TYPE,
            Operator::In,
            offerings.iter().map(|o| o.capacity_type.clone()),
        ));
        if !self.labels.contains_key(labels::INSTANCE_GPU_COUNT) {
            let gpus: i64 = GPU_RESOURCES.iter().map(|g| self.capacity.get(g)).sum();
            let count = (gpus > 0).then(|| (gpus / ONE).to_string());
            put_opt(&mut r, labels::INSTANCE_GPU_COUNT, count.as_deref());
        }
        if !self.labels.contains_key(labels::INSTANCE_ACCELERATOR_COUNT) {
            let neurons = self.capacity.get(overhead::AWS_NEURON);
            let count = (neurons > 0).then(|| (neurons / ONE).to_string());
            put_opt(&mut r, labels::INSTANCE_ACCELERATOR_COUNT, count.as_deref());
        }
        r
    }
}

/// Walks the parsed document, turning every problem into a one-line error with its field path.
struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    fn invalid(&self, field: &str, message: impl Into<String>) -> CatalogError {
        CatalogError::Invalid {
            file: self.file.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn object<'v>(
        &self,
        path: &str,
        value: &'v Value,
    ) -> Result<&'v serde_json::Map<String, Value>> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(path, format!("expected a mapping, got {}", kind(value))))
    }

    fn only_fields(
        &self,
        path: &str,
        map: &serde_json::Map<String, Value>,
        allowed: &[&str],
    ) -> Result<()> {
        match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(self.invalid(
                &field(path, k),
                format!("unknown field (expected one of {})", allowed.join(", ")),
            )),
        }
    }

    fn string(&self, path: &str, value: Option<&Value>) -> Result<String> {
        match value {
            None | Some(Value::Null) => Err(self.invalid(path, "required field is missing")),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(self.invalid(path, "must not be empty"))
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => {
                Err(self.invalid(path, format!("expected a string, got {}", kind(other))))
            }
        }
    }

    fn instance_type(&self, path: &str, value: &Value) -> Result<CustomType> {
        let map = self.object(path, value)?;
        self.only_fields(
            path,
            map,
            &["name", "capacity", "overhead", "labels", "offerings"],
        )?;
        let name = self.string(&format!("{path}.name"), map.get("name"))?;
        let capacity = match map.get("capacity") {
            None | Some(Value::Null) => {
                return Err(self.invalid(&format!("{path}.capacity"), "required field is missing"))
            }
            Some(v) => self.resources(&format!("{path}.capacity"), v)?,
        };
        let overhead = match map.get("overhead") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.resources(&format!("{path}.overhead"), v)?),
        };
        let mut labels = labels_from_name(&name);
        let mut explicit_os = false;
        if let Some(v) = map.get("labels").filter(|v| !v.is_null()) {
            let lpath = format!("{path}.labels");
            for (key, value) in self.object(&lpath, v)? {
                let kpath = field(&lpath, key);
                let key = labels::normalize_key(key.trim());
                if key.is_empty() {
                    return Err(self.invalid(&kpath, "label keys must not be empty"));
                }
                if let Some((_, why)) = RESERVED_LABELS.iter().find(|(k, _)| *k == key) {
                    return Err(self.invalid(&kpath, format!("cannot be set as a label: {why}")));
                }
                let value = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(
                            self.invalid(&kpath, format!("expected a string, got {}", kind(other)))
                        )
                    }
                };
                explicit_os |= key == labels::OS;
                labels.insert(key.to_string(), value);
            }
        }
        let offerings = self.offerings(&format!("{path}.offerings"), map.get("offerings"))?;
        Ok(CustomType {
            name,
            capacity,
            overhead,
            labels,
            explicit_os,
            offerings,
        })
    }

    fn resources(&self, path: &str, value: &Value) -> Result<Resources> {
        let mut out = Resources::new();
        for (name, v) in self.object(path, value)? {
            let rpath = field(path, name);
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(self.invalid(
                        &rpath,
                        format!(
                            "expected a quantity such as \"4\" or \"16Gi\", got {}",
                            kind(other)
                        ),
                    ))
                }
            };
            let milli = parse_milli(&text).map_err(|e| match e {
                QuantityError::Syntax(_) => {
                    self.invalid(&rpath, format!("invalid quantity {text:?}"))
                }
                QuantityError::Overflow(_) => {
                    self.invalid(&rpath, format!("quantity {text:?} is too large"))
                }
            })?;
            if milli < 0 {
                return Err(self.invalid(&rpath, format!("quantity {text:?} is negative")));
            }
            out.set(name, milli);
        }
        Ok(out)
    }

    fn offerings(&self, path: &str, value: Option<&Value>) -> Result<Vec<Offering>> {
        let list = match value {
            None | Some(Value::Null) => return Err(self.invalid(path, "required field is missing")),
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(self.invalid(path, format!("expected a list, got {}", kind(other))))
            }
        };
        if list.is_empty() {
            return Err(self.invalid(path, "at least one offering is required"));
        }
        let mut out: Vec<Offering> = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let opath = format!("{path}[{i}]");
            let map = self.object(&opath, entry)?;
            self.only_fields(&opath, map, &["zone", "capacityType", "price", "available"])?;
            let zone = self.string(&format!("{opath}.zone"), map.get("zone"))?;
            let ct_path = format!("{opath}.capacityType");
            let capacity_type = self.string(&ct_path, map.get("capacityType"))?;
            if ![ON_DEMAND, SPOT, RESERVED].contains(&capacity_type.as_str()) {
                return Err(self.invalid(
                    &ct_path,
                    format!("invalid capacity type {capacity_type:?} (expected on-demand, spot or reserved)"),
                ));
            }
            let price_path = format!("{opath}.price");
            let price = match map.get("price") {
                None | Some(Value::Null) => {
                    return Err(self.invalid(&price_path, "required field is missing"))
                }
                Some(Value::Number(n)) => n.as_f64().filter(|p| p.is_finite() && *p >= 0.0),
                Some(Value::String(s)) => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && *p >= 0.0),
                Some(other) => {
                    return Err(self.invalid(
                        &price_path,
                        format!("expected a number, got {}", kind(other)),
                    ))
                }
            }
            .ok_or_else(|| {
                self.invalid(
                    &price_path,
                    "expected a non-negative number of USD per hour",
                )
            })?;
            let available = match map.get("available") {
                None | Some(Value::Null) => true,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(self.invalid(
                        &format!("{opath}.available"),
                        format!("expected true or false, got {}", kind(other)),
                    ))
                }
            };
            if let Some(j) = out
                .iter()
                .position(|o| o.zone == zone && o.capacity_type == capacity_type)
            {
                return Err(self.invalid(
                    &opath,
                    format!("duplicate offering {zone}/{capacity_type} (also {path}[{j}])"),
                ));
            }
            out.push(Offering {
                zone,
                capacity_type,
                price,
                available,
            });
        }
        Ok(out)
    }
}

/// `path.key`, or `path["key"]` when the key has dots (resource and label names usually do).
fn field(path: &str, key: &str) -> String {
    if key.contains(['.', '[', ']', ' ']) || key.is_empty() {
        format!("{path}[{key:?}]")
    } else {
        format!("{path}.{key}")
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::quantity::{GIB, MIB};

    fn embedded_types(ctx: &InstanceTypeContext) -> Vec<InstanceType> {
        Catalog::embedded()
            .expect("embedded snapshot parses")
            .instance_types(ctx)
            .expect("known region")
    }

    fn find<'a>(types: &'a [InstanceType], name: &str) -> &'a InstanceType {
        types
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    fn values(t: &InstanceType, key: &str) -> Vec<String> {
        t.requirements.get(key).values().iter().cloned().collect()
    }

    fn label(t: &InstanceType, key: &str) -> String {
        let r = t.requirements.get(key);
        assert_eq!(r.operator(), Operator::In, "{key} on {}", t.name);
        assert_eq!(r.values().len(), 1, "{key} on {}", t.name);
        r.values().iter().next().cloned().unwrap_or_default()
    }

    #[test]
    fn c6a_2xlarge_in_us_east_1_on_al2() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2"));
        let t = find(&types, "c6a.2xlarge");
        assert_eq!(t.capacity.cpu, 8000);
        assert_eq!(t.capacity.pods, 58 * ONE);
        assert_eq!(
            t.capacity.memory,
            (16384 - 1229) * MIB,
            "16384 − ceil(16384 × 0.075)"
        );
        assert_eq!(t.allocatable().cpu, 7910);
        assert_eq!(label(t, labels::INSTANCE_CATEGORY), "c");
        assert_eq!(label(t, labels::INSTANCE_FAMILY), "c6a");
        assert_eq!(label(t, labels::INSTANCE_GENERATION), "6");
        assert_eq!(label(t, labels::INSTANCE_SIZE), "2xlarge");
        assert_eq!(label(t, labels::ARCH), "amd64");
        assert_eq!(label(t, labels::OS), "linux");
        assert_eq!(label(t, labels::REGION), "us-east-1");
        assert_eq!(label(t, INSTANCE_CPU), "8");
        assert_eq!(label(t, INSTANCE_MEMORY), "16384");
        assert_eq!(label(t, INSTANCE_CPU_MANUFACTURER), "amd");
        assert_eq!(label(t, INSTANCE_CAPABILITY_FLEX), "false");
        assert_eq!(
            t.requirements.get(labels::WINDOWS_BUILD).operator(),
            Operator::DoesNotExist
        );
        assert_eq!(values(t, labels::CAPACITY_TYPE), vec!["on-demand", "spot"]);
        let zones = values(t, labels::ZONE);
        assert!(!zones.is_empty());
        for zone in &zones {
            let od = t
                .offerings
                .iter()
                .find(|o| &o.zone == zone && o.capacity_type == ON_DEMAND)
                .unwrap_or_else(|| panic!("on-demand offering in {zone}"));
            assert_eq!(od.price, 0.306);
            assert!(od.available);
            let spot = t
                .offerings
                .iter()
                .find(|o| &o.zone == zone && o.capacity_type == SPOT);
            assert_eq!(
                spot.map(|o| o.price),
                Some(0.306),
                "spot stands in at the on-demand price"
            );
        }
        assert_eq!(t.offerings.len(), zones.len() * 2);
    }

    #[test]
    fn m5_large_matches_the_worked_example_on_al2023() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
        let t = find(&types, "m5.large");
        assert_eq!(t.capacity.memory, 7577 * MIB);
        let alloc = t.allocatable();
        assert_eq!(alloc.cpu, 1930);
        assert_eq!(alloc.memory, 6903 * MIB);
        assert_eq!(alloc.pods, 29 * ONE);
        assert_eq!(alloc.ephemeral_storage, 17 * GIB);
        for (name, pods) in [("t3.large", 35), ("m5.xlarge", 58), ("m6idn.32xlarge", 394)] {
            assert_eq!(find(&types, name).capacity.pods, pods * ONE, "{name}");
        }
    }

    #[test]
    fn gpu_and_accelerator_facts_become_capacity_and_requirements() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
        let g = find(&types, "g4dn.xlarge");
        assert_eq!(g.capacity.get(overhead::NVIDIA_GPU), ONE);
        assert_eq!(values(g, labels::INSTANCE_GPU_COUNT), vec!["1"]);
        assert_eq!(label(g, INSTANCE_GPU_NAME), "t4");
        assert_eq!(label(g, INSTANCE_GPU_MANUFACTURER), "nvidia");
        assert_eq!(label(g, INSTANCE_GPU_MEMORY), "16384");
        assert_eq!(label(g, INSTANCE_LOCAL_NVME), "125");
        assert_eq!(
            g.requirements
                .get(labels::INSTANCE_ACCELERATOR_COUNT)
                .operator(),
            Operator::DoesNotExist
        );

        let plain = find(&types, "m5.large");
        assert_eq!(
            plain
                .requirements
                .get(labels::INSTANCE_GPU_COUNT)
                .operator(),
            Operator::DoesNotExist
        );
        assert_eq!(
            plain.requirements.get(INSTANCE_LOCAL_NVME).operator(),
            Operator::DoesNotExist
        );
        assert!(!plain.capacity.contains(overhead::NVIDIA_GPU));

        let inf = find(&types, "inf2.xlarge");
        assert_eq!(inf.capacity.get(overhead::AWS_NEURON), ONE);
        assert_eq!(label(inf, INSTANCE_ACCELERATOR_NAME), "inferentia2");
        assert_eq!(label(inf, INSTANCE_ACCELERATOR_MANUFACTURER), "aws");
        assert_eq!(
            inf.requirements.get(labels::INSTANCE_GPU_COUNT).operator(),
            Operator::DoesNotExist
        );

        let efa = find(&types, "m6idn.32xlarge");
        assert_eq!(efa.capacity.get(overhead::EFA), 2 * ONE);
        assert_eq!(label(efa, INSTANCE_ENCRYPTION_IN_TRANSIT), "true");

        // An AMI variant for GPUs (`gpu-count Exists`) matches g4dn only.
        let mut gpu_ami = Requirements::new();
        gpu_ami.add(Requirement::exists(labels::INSTANCE_GPU_COUNT));
        assert!(g.requirements.compatible(&gpu_ami, |_| false).is_ok());
        assert!(plain.requirements.compatible(&gpu_ami, |_| false).is_err());
    }

    #[test]
    fn graviton_memory_and_flex_labels() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
        let t = find(&types, "m6g.large");
        assert_eq!(label(t, labels::ARCH), "arm64");
        assert_eq!(
            t.capacity.memory,
            7518 * MIB,
            "(8192 − 64) − ceil(8128 × 0.075)"
        );
        assert_eq!(
            label(find(&types, "m7i-flex.large"), INSTANCE_CAPABILITY_FLEX),
            "true"
        );
        assert_eq!(
            label(find(&types, "m7i-flex.large"), labels::INSTANCE_FAMILY),
            "m7i-flex"
        );
        let metal = find(&types, "a1.metal");
        assert_eq!(
            label(metal, INSTANCE_HYPERVISOR),
            "",
            "bare metal has no hypervisor"
        );
    }

    #[test]
    fn bottlerocket_ephemeral_storage_and_pod_overhead() {
        let kubelet = KubeletConfig {
            max_pods: Some(110),
            ..KubeletConfig::default()
        };
        let devices = [
            BlockDevice {
                device_name: Some("/dev/xvda".into()),
                root_volume: false,
                volume_size: Some(4 * GIB),
            },
            BlockDevice {
                device_name: Some("/dev/xvdb".into()),
                root_volume: false,
                volume_size: Some(100 * GIB),
            },
        ];
        let mut ctx = InstanceTypeContext::new("us-east-1", "Bottlerocket");
        let t = find(&embedded_types(&ctx), "m5.large").clone();
        assert_eq!(
            t.capacity.ephemeral_storage,
            20 * GIB,
            "the 20Gi data volume"
        );
        ctx.kubelet = Some(&kubelet);
        ctx.block_devices = &devices;
        let t = find(&embedded_types(&ctx), "m5.large").clone();
        assert_eq!(t.capacity.ephemeral_storage, 100 * GIB, "/dev/xvdb mapping");
        assert_eq!(t.capacity.pods, 110 * ONE);
        assert_eq!(
            t.overhead.kube_reserved.memory,
            (11 * 110 + 255) * MIB,
            "effective pods on Bottlerocket"
        );
        assert_eq!(t.overhead.eviction_threshold.ephemeral_storage, 10 * GIB);
    }

    #[test]
    fn raid0_uses_instance_storage() {
        let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
        ctx.instance_store_policy = Some("RAID0");
        let t = find(&embedded_types(&ctx), "g4dn.xlarge").clone();
        assert_eq!(t.capacity.ephemeral_storage, 125_000_000_000 * ONE);
    }

    #[test]
    fn windows_families_have_only_amd64_types_labelled_windows() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "Windows2022"));
        assert!(!types.is_empty());
        assert!(types.iter().all(|t| label(t, labels::ARCH) == "amd64"));
        assert!(types.iter().all(|t| label(t, labels::OS) == "windows"));
        assert!(types.iter().all(|t| t.name != "m6g.large"));
        let t = find(&types, "m5.large");
        assert_eq!(label(t, labels::WINDOWS_BUILD), "10.0.20348");
        assert_eq!(t.capacity.pods, 110 * ONE);
        assert_eq!(t.capacity.ephemeral_storage, 50 * GIB);
        assert_eq!(t.capacity.get(overhead::PRIVATE_IPV4_ADDRESS), 9 * ONE);
    }

    #[test]
    fn zones_region_and_prices() {
        let subnets = vec!["us-east-1a".to_string(), "us-east-1b".to_string()];
        let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
        ctx.zones = Some(&subnets);
        let types = embedded_types(&ctx);
        assert!(
            types.windows(2).all(|w| w[0].name < w[1].name),
            "sorted by name"
        );
        let t = find(&types, "c6a.2xlarge");
        assert_eq!(values(t, labels::ZONE), subnets);
        assert!(t.offerings.iter().all(|o| subnets.contains(&o.zone)));

        let other = embedded_types(&InstanceTypeContext::new("us-west-2", "AL2023"));
        let t = find(&other, "c6a.2xlarge");
        assert_eq!(label(t, labels::REGION), "us-west-2");
        assert!(
            t.offerings.iter().all(|o| o.price == 0.306),
            "us-east-1 price as the estimate"
        );

        let err = Catalog::embedded()
            .unwrap()
            .instance_types(&InstanceTypeContext::new("mars-1", "AL2"))
            .unwrap_err();
        assert!(matches!(err, CatalogError::UnknownRegion { .. }));
        assert!(err.to_string().contains("us-east-1"), "{err}");

        // Types without a price are listed but can never be chosen.
        let snapshot = Catalog::embedded().unwrap();
        let all = snapshot
            .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
            .unwrap();
        let unpriced: Vec<&InstanceType> = all
            .iter()
            .filter(|t| t.offerings.iter().all(|o| !o.available))
            .collect();
        assert!(unpriced
            .iter()
            .all(|t| t.cheapest_offering(&Requirements::new()).is_none()));
        assert!(snapshot.notes().iter().any(|n| n.contains("spot")));
    }

    /// The embedded snapshot with spot prices for c6a.2xlarge in us-east-1a (0.1) and for
    /// m5.large (whose on-demand price is removed) in us-east-1a (0.04).
    fn with_spot_prices() -> Catalog {
        let mut snap = Catalog::embedded().unwrap().aws_snapshot().unwrap().clone();
        let m5 = snap
            .instance_types
            .iter_mut()
            .find(|t| t.name == "m5.large")
            .unwrap();
        m5.on_demand_price_us_east1 = None;
        let region = snap.regions.get_mut("us-east-1").unwrap();
        for (t, p) in [("c6a.2xlarge", 0.1), ("m5.large", 0.04)] {
            region
                .spot_prices
                .entry(t.to_string())
                .or_default()
                .insert("us-east-1a".to_string(), p);
        }
        snap.source = "live test".into();
        Catalog::from_snapshot(snap).unwrap()
    }

    #[test]
    fn spot_offerings_take_the_zone_spot_price_else_the_on_demand_stand_in() {
        let catalog = with_spot_prices();
        let types = catalog
            .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
            .unwrap();
        let offering = |t: &InstanceType, zone: &str, ct: &str| {
            t.offerings
                .iter()
                .find(|o| o.zone == zone && o.capacity_type == ct)
                .cloned()
                .unwrap_or_else(|| panic!("{} {zone} {ct}", t.name))
        };
        let c6a = find(&types, "c6a.2xlarge");
        let spot = offering(c6a, "us-east-1a", SPOT);
        assert_eq!((spot.price, spot.available), (0.1, true), "the spot price");
        let spot_b = offering(c6a, "us-east-1b", SPOT);
        assert_eq!(
            (spot_b.price, spot_b.available),
            (0.306, true),
            "no spot price in that zone: the on-demand stand-in"
        );
        assert_eq!(offering(c6a, "us-east-1a", ON_DEMAND).price, 0.306);

        let m5 = find(&types, "m5.large");
        let spot = offering(m5, "us-east-1a", SPOT);
        assert_eq!(
            (spot.price, spot.available),
            (0.04, true),
            "a spot price makes the spot offering available without an on-demand price"
        );
        assert!(!offering(m5, "us-east-1b", SPOT).available);
        assert!(!offering(m5, "us-east-1a", ON_DEMAND).available);

        // Other regions have no spot prices: stand-ins everywhere.
        let west = catalog
            .instance_types(&InstanceTypeContext::new("us-west-2", "AL2023"))
            .unwrap();
        let c6a = find(&west, "c6a.2xlarge");
        assert!(c6a
            .offerings
            .iter()
            .all(|o| o.price == 0.306 && o.available));

        assert_eq!(
            catalog.hourly_price("c6a.2xlarge", "us-east-1a", SPOT),
            Some(0.1)
        );
        assert_eq!(
            catalog.hourly_price("c6a.2xlarge", "us-east-1b", SPOT),
            None
        );
        assert_eq!(
            catalog.hourly_price("c6a.2xlarge", "us-east-1b", ON_DEMAND),
            Some(0.306)
        );

        let notes = catalog.notes();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("spot: DescribeSpotPriceHistory prices (2 types)")),
            "{notes:?}"
        );
        assert!(!notes
            .iter()
            .any(|n| n.contains("never count on spot savings")));
    }

    #[test]
    fn without_spot_prices_the_notes_say_spot_is_a_stand_in() {
        let embedded = Catalog::embedded().unwrap();
        let notes = embedded.notes();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("spot: no spot prices offline")),
            "{notes:?}"
        );
        let mut snap = embedded.aws_snapshot().unwrap().clone();
        snap.source = "live DescribeInstanceTypes/DescribeInstanceTypeOfferings for us-east-1; \
                       no spot prices (denied)"
            .into();
        let live = Catalog::from_snapshot(snap).unwrap();
        let notes = live.notes();
        assert!(notes[0].contains("no spot prices (denied)"), "{notes:?}");
        assert!(
            notes.iter().any(
                |n| n.starts_with("spot: no DescribeSpotPriceHistory prices")
                    && n.contains("on-demand price")
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn spot_prices_serialize_only_when_present() {
        let empty = RegionFacts {
            zones: vec!["z1".into()],
            ..RegionFacts::default()
        };
        let text = serde_json::to_string(&empty).unwrap();
        assert_eq!(text, r#"{"zones":["z1"],"offerings":{}}"#);
        assert_eq!(serde_json::from_str::<RegionFacts>(&text).unwrap(), empty);
        let mut priced = empty.clone();
        priced
            .spot_prices
            .entry("m5.large".into())
            .or_default()
            .insert("z1".into(), 0.0361);
        let text = serde_json::to_string(&priced).unwrap();
        assert!(
            text.contains(r#""spotPrices":{"m5.large":{"z1":0.0361}}"#),
            "{text}"
        );
        let back: RegionFacts = serde_json::from_str(&text).unwrap();
        assert_eq!(back.spot_price("m5.large", "z1"), Some(0.0361));
        assert_eq!(back.spot_price("m5.large", "z2"), None);
    }

    #[test]
    fn on_demand_only_types_have_no_spot_offering() {
        let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
        let Some(t) = types.iter().find(|t| t.name == "t2.nano") else {
            return;
        };
        assert!(t.offerings.iter().all(|o| o.capacity_type == ON_DEMAND));
        assert_eq!(values(t, labels::CAPACITY_TYPE), vec!["on-demand"]);
    }

    #[test]
    fn names_imply_category_generation_and_arch() {
        assert_eq!(category_and_generation("m5.large"), Some(("m", "5")));
        assert_eq!(category_and_generation("g4dn.8xlarge"), Some(("g", "4")));
        assert_eq!(category_and_generation("u-6tb1.metal"), Some(("u", "1")));
        assert_eq!(
            category_and_generation("u7i-12tb.224xlarge"),
            Some(("u", "7"))
        );
        assert_eq!(category_and_generation("m7i-flex.large"), Some(("m", "7")));
        assert_eq!(category_and_generation("x2iezn.2xlarge"), Some(("x", "2")));
        assert_eq!(category_and_generation("Standard_D4s_v5"), None);
        assert_eq!(category_and_generation("m5"), None, "the regex needs a dot");
        for (name, arch) in [
            ("m6g.large", "arm64"),
            ("c7gn.xlarge", "arm64"),
            ("r8gd.medium", "arm64"),
            ("is4gen.large", "arm64"),
            ("g5g.xlarge", "arm64"),
            ("t4g.nano", "arm64"),
            ("a1.large", "arm64"),
            ("mac2.metal", "arm64"),
            ("g4dn.xlarge", "amd64"),
            ("m5.large", "amd64"),
            ("mac1.metal", "amd64"),
            ("u7in-16tb.224xlarge", "amd64"),
            ("n2-standard-4", "amd64"),
        ] {
            assert_eq!(arch_from_name(name), arch, "{name}");
        }
        // The rule agrees with EC2 on every type of the snapshot.
        let Source::Aws(snapshot) = &*Catalog::embedded().unwrap().inner else {
            unreachable!()
        };
        for t in &snapshot.instance_types {
            assert_eq!(arch_from_name(&t.name), t.architectures[0], "{}", t.name);
        }
    }

    const SPEC_EXAMPLE: &str = r#"
instanceTypes:
- name: c6a.2xlarge
  capacity: {cpu: "8", memory: 16Gi, pods: "58", ephemeral-storage: 20Gi}
  overhead: {cpu: 90m, memory: 893Mi}
  labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.k8s.aws/instance-category: c}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.306, available: true}
- name: m6g.large
  capacity: {cpu: 2, memory: 8Gi, nvidia.com/gpu: 1}
  offerings:
  - {zone: us-east-1a, capacityType: spot, price: 0.03}
  - {zone: us-east-1b, capacityType: on-demand, price: "0.077", available: false}
"#;

    #[test]
    fn custom_catalog_in_the_spec_format_loads() {
        let catalog = Catalog::from_custom_text("catalog.yaml", SPEC_EXAMPLE).expect("loads");
        assert!(catalog.is_custom());
        let types = catalog
            .instance_types(&InstanceTypeContext::new("anywhere", "AL2023"))
            .unwrap();
        assert_eq!(types.len(), 2);
        let c = find(&types, "c6a.2xlarge");
        assert_eq!(c.capacity.cpu, 8000);
        assert_eq!(c.capacity.memory, 16 * GIB);
        assert_eq!(c.allocatable().cpu, 7910);
        assert_eq!(c.allocatable().memory, 16 * GIB - 893 * MIB);
        assert_eq!(label(c, labels::INSTANCE_FAMILY), "c6a");
        assert_eq!(label(c, labels::ZONE), "us-east-1a");
        assert_eq!(label(c, labels::CAPACITY_TYPE), "on-demand");
        assert_eq!(c.offerings[0].price, 0.306);
        assert_eq!(
            c.requirements.get(labels::INSTANCE_GPU_COUNT).operator(),
            Operator::DoesNotExist
        );

        let g = find(&types, "m6g.large");
        assert_eq!(label(g, labels::ARCH), "arm64");
        assert_eq!(label(g, labels::INSTANCE_CATEGORY), "m");
        assert_eq!(label(g, labels::INSTANCE_GENERATION), "6");
        assert_eq!(label(g, labels::INSTANCE_GPU_COUNT), "1");
        assert_eq!(
            g.capacity.pods,
            110 * ONE,
            "kubelet default when pods are not given"
        );
        // No overhead in the file: the AWS formulas, for the resources the entry has.
        assert_eq!(g.overhead.kube_reserved.cpu, 70);
        assert_eq!(g.overhead.kube_reserved.memory, (11 * 110 + 255) * MIB);
        assert_eq!(g.overhead.eviction_threshold.memory, 100 * MIB);
        assert_eq!(
            g.allocatable().ephemeral_storage,
            0,
            "nothing reserved from an absent resource"
        );
        assert_eq!(values(g, labels::CAPACITY_TYPE), vec!["on-demand", "spot"]);
        assert!(!g.offerings[1].available);

        // Subnet zones filter offerings; types left with none disappear.
        let zones = vec!["us-east-1b".to_string()];
        let mut ctx = InstanceTypeContext::new("anywhere", "AL2023");
        ctx.zones = Some(&zones);
        let names: Vec<String> = catalog
            .instance_types(&ctx)
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, vec!["m6g.large"]);
    }

    #[test]
    fn custom_catalog_as_json() {
        let json = r#"{"instanceTypes":[{"name":"n2-standard-4","capacity":{"cpu":"4","memory":"16Gi","pods":"110",
            "ephemeral-storage":"100Gi"},"labels":{"kubernetes.io/arch":"amd64","team":"a"},
            "offerings":[{"zone":"z1","capacityType":"spot","price":0.05}]}]}"#;
        let catalog = Catalog::from_custom_text("shapes.json", json).unwrap();
        let t = &catalog
            .instance_types(&InstanceTypeContext::new("r", "AL2"))
            .unwrap()[0];
        assert_eq!(label(t, "team"), "a");
        assert!(
            !t.requirements.has(labels::INSTANCE_FAMILY),
            "not an AWS-shaped name"
        );
        assert_eq!(t.overhead.eviction_threshold.ephemeral_storage, 10 * GIB);
        assert_eq!(t.overhead.kube_reserved.ephemeral_storage, GIB);
    }

    #[test]
    fn custom_catalog_errors_are_one_line_with_the_field_path() {
        let cases = [
            (
                "instanceTypes:\n- name: a.large\n  capacity: {memory: 16Gx}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].capacity.memory: invalid quantity \"16Gx\"",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n- capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[1].name: required field is missing",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spt, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].capacityType: invalid capacity type \"spt\" (expected on-demand, spot or reserved)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {nvidia.com/gpu: x}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].capacity[\"nvidia.com/gpu\"]: invalid quantity \"x\"",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capcity: {cpu: 1}\n",
                "catalog.yaml: instanceTypes[0].capcity: unknown field (expected one of name, capacity, overhead, labels, offerings)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: -1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].price: expected a non-negative number of USD per hour",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: []\n",
                "catalog.yaml: instanceTypes[0].offerings: at least one offering is required",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  labels: {topology.kubernetes.io/zone: z}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].labels[\"topology.kubernetes.io/zone\"]: cannot be set as a label: zones come from `offerings[].zone`",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[1].name: duplicate instance type \"a.large\" (also instanceTypes[0])",
            ),
            ("types: []\n", "catalog.yaml: types: unknown field (expected instanceTypes)"),
            ("", "catalog.yaml: expected a mapping with an `instanceTypes` list"),
        ];
        for (text, want) in cases {
            let err = Catalog::from_custom_text("catalog.yaml", text)
                .unwrap_err()
                .to_string();
            assert_eq!(err, want);
            assert!(!err.contains('\n'));
        }
        let err = Catalog::from_custom_text("catalog.yaml", "instanceTypes: [\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("catalog.yaml: ") && !err.contains('\n'),
            "{err}"
        );
        let err = Catalog::from_file("/nonexistent/catalog.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/nonexistent/catalog.yaml: cannot read: "),
            "{err}"
        );
    }

    #[test]
    fn snapshot_schema_is_checked() {
        let err =
            Catalog::from_snapshot_json(r#"{"schemaVersion":2,"instanceTypes":[],"regions":{}}"#)
                .unwrap_err();
        assert!(matches!(err, CatalogError::Snapshot(_)), "{err}");
        assert!(Catalog::from_snapshot_json("{}").is_err());
    }

    #[test]
    fn hourly_prices_of_running_instances() {
        let aws = Catalog::embedded().unwrap();
        assert_eq!(
            aws.hourly_price("m5.large", "us-east-1a", ON_DEMAND),
            Some(0.096)
        );
        assert_eq!(
            aws.hourly_price("m5.large", "eu-west-1b", ON_DEMAND),
            Some(0.096),
            "us-east-1 list prices are the estimate everywhere"
        );
        assert_eq!(
            aws.hourly_price("m5.large", "us-east-1a", SPOT),
            None,
            "no spot prices offline"
        );
        assert_eq!(aws.hourly_price("no.such", "us-east-1a", ON_DEMAND), None);
        let json = r#"{"instanceTypes":[{"name":"n2","capacity":{"cpu":"4","memory":"16Gi"},
            "offerings":[{"zone":"z1","capacityType":"spot","price":0.05},
                         {"zone":"z1","capacityType":"on-demand","price":0.2}]}]}"#;
        let custom = Catalog::from_custom_text("shapes.json", json).unwrap();
        assert_eq!(custom.hourly_price("n2", "z1", SPOT), Some(0.05));
        assert_eq!(custom.hourly_price("n2", "z1", ON_DEMAND), Some(0.2));
        assert_eq!(custom.hourly_price("n2", "z2", SPOT), None);
    }
}
