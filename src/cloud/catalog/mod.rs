//! The instance-type catalog: what Karpenter's AWS provider would offer a node class, computed
//! offline.
//!
//! Two sources feed the same [`InstanceType`] model:
//! * the **embedded snapshot** (`catalog/aws-snapshot.json`, written by `scripts/gen_catalog.py`
//!   from the EC2 API's DescribeInstanceTypes / DescribeInstanceTypeOfferings responses, plus
//!   us-east-1 on-demand list prices). Requirements, capacity and overhead are derived from those
//!   facts exactly as `aws v1.14.1: pkg/providers/instancetype/types.go` does (docs/karpenter.md §2.2,
//!   §6.3) for a given region, AMI family and kubelet configuration;
//! * a **custom catalog** (`--catalog FILE`, docs/spec.md §5.5): instance types written out by the
//!   user, for what-if analysis, other clouds' shapes and tests.
//!
//! Module layout: `snapshot` holds the embedded snapshot and its schema, `aws` Karpenter's AWS
//! instance-type rules (requirements, capacity, offerings), `names` what an instance type's name
//! implies, `custom` the `--catalog FILE` format; this file the catalog itself and its errors.
//!
//! Offline data is necessarily approximate; every approximation is listed by [`Catalog::notes`]
//! so the CLI can print it under `-v` instead of letting a plan look more certain than it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::model::instance_type::{InstanceType, ON_DEMAND, SPOT};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, BlockDevice, KubeletConfig, NetworkInterface};
use crate::model::overhead::{self, AmiFamily};
use crate::model::placement_group::PlacementGroup;
use crate::model::requirements::{Operator, Requirement};
use crate::model::reservation::CapacityReservationTerm;

mod aws;
mod custom;
mod names;
mod network_bandwidth;
mod snapshot;
pub(crate) mod vpc_limits;

pub use names::{arch_from_name, category_and_generation, labels_from_name};
pub use snapshot::{
    AcceleratorFacts, AwsSnapshot, EnaSupport, GpuFacts, InstanceFacts, RegionFacts, PRICE_REGION,
    SNAPSHOT_SCHEMA_VERSION,
};

use crate::cloud::reservations::Reservations;
use aws::{add_reserved_offerings, aws_instance_types};
use custom::CustomCatalog;
use snapshot::{aws_notes, EMBEDDED_SNAPSHOT};

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
    /// `RESERVED_ENIS` (default 0): ENIs the VPC CNI may not give pods.
    pub reserved_enis: i64,
    /// Zones of the node class's subnets; `None` = every zone of the region.
    pub zones: Option<&'a [String]>,
    /// Zone name → zone id (`use1-az4`) from the node class's `status.subnets[].zoneID`; empty
    /// when the status gives none (then offerings have no `topology.k8s.aws/zone-id`).
    pub zone_ids: &'a BTreeMap<String, String>,
    /// The node class's `capacityReservationSelectorTerms`: a custom catalog's reserved
    /// offerings are kept only for the reservations they select (none: no reserved capacity).
    pub capacity_reservations: &'a [CapacityReservationTerm],
    /// The API generation of the NodePool (`None`: v1), i.e. which controller's rules apply:
    /// the node-class compatibility check is v1's only.
    pub generation: Option<ApiGeneration>,
    /// Prices NodeOverlays give instance types the AWS provider has no price for
    /// (`model::overlay::provider_prices`): such a type's offerings take them and are available.
    pub overlay_prices: &'a BTreeMap<String, f64>,
    /// The node class's `spec.networkInterfaces` (`None`: unset): EFA capacity, ENI-limited pods
    /// and which types the class can run (`aws.rs` `compatible_with_node_class`).
    pub network_interfaces: Option<&'a [NetworkInterface]>,
    /// Instance type → the memory capacity registered nodes of the type report with the class's
    /// current AMI (milli-bytes; the smallest seen): it replaces the VM-overhead estimate, as the
    /// AWS provider's discovered-capacity cache does (`aws v1.14.1: pkg/providers/instancetype/
    /// instancetype.go` `get`, `UpdateInstanceTypeCapacityFromNode`). AWS catalogs only: a
    /// custom catalog's capacity is what its entry states.
    pub discovered_memory: &'a BTreeMap<String, i64>,
    /// The placement group the class's `placementGroupSelector` resolved to (`None`: unset or
    /// not resolved): every type's requirements name it and its partitions, and a type whose
    /// `PlacementGroupInfo` lacks its strategy is unavailable.
    pub placement_group: Option<&'a PlacementGroup>,
    /// `cpuOptions.nestedVirtualization: enabled` (v1): a type whose processor does not
    /// support it is unavailable.
    pub nested_virtualization: bool,
    /// `connectionTracking` is set (v1): a type not on the nitro hypervisor is unavailable.
    pub connection_tracking: bool,
}

/// No NodeOverlay prices.
static NO_OVERLAY_PRICES: BTreeMap<String, f64> = BTreeMap::new();
/// No zone ids.
static NO_ZONE_IDS: BTreeMap<String, String> = BTreeMap::new();
/// No discovered memory.
static NO_DISCOVERED_MEMORY: BTreeMap<String, i64> = BTreeMap::new();

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
            reserved_enis: 0,
            zones: None,
            zone_ids: &NO_ZONE_IDS,
            capacity_reservations: &[],
            generation: None,
            overlay_prices: &NO_OVERLAY_PRICES,
            network_interfaces: None,
            discovered_memory: &NO_DISCOVERED_MEMORY,
            placement_group: None,
            nested_virtualization: false,
            connection_tracking: false,
        }
    }

    pub(super) fn family(&self) -> AmiFamily {
        AmiFamily::parse_or_default(self.ami_family)
    }

    /// Whether the controller of the pool's generation counts `evictionSoft` in the eviction
    /// threshold: those of the older generations (aws v0.31.5, v0.32.10, v0.37.7) did, except on
    /// Bottlerocket (`EvictionSoftEnabled`); v1.14.1 does not (`types.go` `evictionThreshold`).
    pub(super) fn counts_eviction_soft(&self) -> bool {
        self.generation.is_some_and(|g| g != ApiGeneration::V1)
            && self.family().eviction_soft_counted()
    }

    pub(super) fn zone_allowed(&self, zone: &str) -> bool {
        self.zones
            .is_none_or(|zones| zones.iter().any(|z| z == zone))
    }
}

/// Gives each offering its zone's id and each type a `topology.k8s.aws/zone-id` requirement
/// listing the ids of its zones, as the AWS provider does from the node class's subnets
/// (`aws v1.14.1: pkg/providers/instancetype/offering/base_resolver.go` `ResolveOfferings`:
/// `zone-id In [id]` on an offering whose zone has zone info; `types.go` `computeRequirements`:
/// the ids of the type's available zones, and no requirement at all when there are none). A zone
/// the subnets give no id while others have one gets the empty id, as upstream's `ZoneInfo`
/// groups it (so a pod selecting a zone id never lands there). An offering in a zone the
/// subnets do not reach has no zone id (`zonefound` false), and only the type's own zones
/// (`availableZones`: offered and reached) bring their ids to its requirement.
fn add_zone_ids(types: &mut [InstanceType], ctx: &InstanceTypeContext) {
    let zone_ids = ctx.zone_ids;
    if zone_ids.is_empty() {
        return;
    }
    for t in types.iter_mut() {
        let mut ids = BTreeSet::new();
        let zones = t.requirements.get(labels::ZONE);
        for o in &mut t.offerings {
            if !ctx.zone_allowed(&o.zone) {
                continue;
            }
            let id = zone_ids.get(&o.zone).cloned().unwrap_or_default();
            if zones.has(&o.zone) {
                ids.insert(id.clone());
            }
            o.zone_id = Some(id);
        }
        if !ids.is_empty() {
            t.requirements.remove(labels::ZONE_ID);
            t.requirements
                .add(Requirement::new(labels::ZONE_ID, Operator::In, ids));
        }
    }
}

// -------------------------------------------------------------------------------- catalog

/// An instance-type catalog. Cheap to clone (shared, immutable).
#[derive(Debug, Clone)]
pub struct Catalog {
    inner: Arc<Source>,
    /// Capacity reservations read live ([`Catalog::with_reservations`]): AWS data only.
    reservations: Option<Arc<Reservations>>,
    /// Placement groups read live ([`Catalog::with_placement_groups`]): AWS data only.
    placement_groups: Option<Arc<Vec<PlacementGroup>>>,
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
            reservations: None,
            placement_groups: None,
        })
    }

    /// A `--catalog FILE` (docs/spec.md §5.5). JSON when the name ends in `.json`, YAML otherwise.
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
            reservations: None,
            placement_groups: None,
        })
    }

    /// This catalog with the capacity reservations read live (`cloud::reservations::list`):
    /// each node class's instance types get a reserved offering per reservation its
    /// `capacityReservationSelectorTerms` select, as a custom catalog's declared ones. A custom
    /// catalog keeps its own reservations and ignores these.
    pub fn with_reservations(&self, reservations: Reservations) -> Catalog {
        Catalog {
            inner: self.inner.clone(),
            reservations: Some(Arc::new(reservations)),
            placement_groups: self.placement_groups.clone(),
        }
    }

    /// This catalog with the placement groups read live (DescribePlacementGroups of the
    /// classes' selectors, `cloud::placement_groups::list`). A custom catalog keeps its own.
    pub fn with_placement_groups(&self, groups: Vec<PlacementGroup>) -> Catalog {
        Catalog {
            inner: self.inner.clone(),
            reservations: self.reservations.clone(),
            placement_groups: Some(Arc::new(groups)),
        }
    }

    /// The available placement groups a class's `placementGroupSelector` resolves against: a
    /// custom catalog's `placementGroups`, or those read live; `None` when the catalog has
    /// none to tell (the embedded snapshot offline, a custom catalog without the key).
    pub fn placement_groups(&self) -> Option<&[PlacementGroup]> {
        match &*self.inner {
            Source::Custom(c) => c.placement_groups.as_deref(),
            Source::Aws(_) => self.placement_groups.as_deref().map(Vec::as_slice),
        }
    }

    /// Whether every instance type records what the nested-virtualization and placement-group
    /// compatibility checks read (`ProcessorInfo.SupportedFeatures`,
    /// `PlacementGroupInfo.SupportedStrategies`): the embedded snapshot and a live catalog do;
    /// an older snapshot or a custom catalog does not, and the checks are skipped there.
    pub fn checks_processor_and_placement(&self) -> bool {
        match &*self.inner {
            Source::Aws(snapshot) => snapshot
                .instance_types
                .iter()
                .all(|t| t.processor_features.is_some() && t.placement_group_strategies.is_some()),
            Source::Custom(_) => false,
        }
    }

    /// The reservations read live, if any were given.
    pub fn live_reservations(&self) -> Option<&Reservations> {
        self.reservations.as_deref()
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
            Source::Aws(snapshot) => {
                let mut types = aws_instance_types(snapshot, ctx)?;
                if let Some(r) = &self.reservations {
                    add_reserved_offerings(&mut types, snapshot, r, ctx);
                }
                types
            }
            Source::Custom(custom) => custom.instance_types(ctx),
        };
        add_zone_ids(&mut out, ctx);
        // `offering.go` `InjectOfferings`: the resolved group's id and partitions join every
        // type's requirements. Offerings are not expanded one per partition
        // (`placement_group_resolver.go`): each copy keeps its offering's price and
        // availability, so a NodeClaim's partition requirement is met by any offering alike.
        if let Some(pg) = ctx.placement_group {
            for t in &mut out {
                pg.constrain(&mut t.requirements);
            }
        }
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
                    .and_then(|t| t.on_demand_price)
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

    /// Whether spot offerings carry real spot prices: a custom catalog's own, or a snapshot
    /// with DescribeSpotPriceHistory prices. Otherwise spot is priced at on-demand.
    pub fn has_spot_prices(&self) -> bool {
        match &*self.inner {
            Source::Aws(s) => s.regions.values().any(|r| !r.spot_prices.is_empty()),
            Source::Custom(_) => true,
        }
    }

    /// Whether the catalog has capacity reservations: a custom catalog's declared ones, or
    /// reservations read live.
    pub fn has_reservations(&self) -> bool {
        match &*self.inner {
            Source::Aws(_) => self.reservations.as_ref().is_some_and(|r| !r.is_empty()),
            Source::Custom(c) => c
                .types
                .iter()
                .any(|t| t.offerings.iter().any(|o| o.reservation.is_some())),
        }
    }

    /// Whether every instance type records what the provider's `networkInterfaces`
    /// compatibility check reads beyond card 0 and EFAs — its network cards and ENA support
    /// (`aws.rs` `network_interfaces_fit`). The embedded snapshot and a live catalog do; a
    /// snapshot written before they were recorded, or a custom catalog (which records no
    /// network facts, so a class's `networkInterfaces` checks nothing there), does not.
    pub fn checks_network_interfaces(&self) -> bool {
        match &*self.inner {
            Source::Aws(snapshot) => snapshot
                .instance_types
                .iter()
                .all(|t| t.network_cards.is_some() && t.ena_support.is_some()),
            Source::Custom(custom) => custom
                .types
                .iter()
                .all(|t| t.network.as_ref().is_some_and(|n| n.ena.is_some())),
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

pub(super) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
