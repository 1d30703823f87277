//! Karpenter's AWS instance-type rules, applied to snapshot facts: which types a node class sees
//! (region and subnet zones, Windows on amd64 only), their offerings and prices, their capacity
//! (device-plugin resources; overhead, ENI-limited max pods and memory via `model::overhead`),
//! and one requirement per AWS well-known label.
//!
//! Mirrors `aws v1.14.1: pkg/providers/instancetype/types.go` (`NewInstanceType`,
//! `computeRequirements`, `computeCapacity`) and `offering/offering.go` (`InjectOfferings`).

use std::collections::{BTreeMap, BTreeSet};

use crate::cloud::reservations::Reservations;
use crate::model::instance_type::{InstanceType, Offering, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NetworkInterface};
use crate::model::overhead::{self, AmiFamily, InstanceShape, NodeSettings};
use crate::model::quantity::ONE;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::reservation::ReservedCapacity;

use super::custom::RESERVED_PRICE_DIVISOR;
use super::names::category_and_generation;
use super::network_bandwidth::network_bandwidth_mbps;
use super::snapshot::{AwsSnapshot, EnaSupport, InstanceFacts};
use super::vpc_limits::vpc_limits;
use super::{CatalogError, InstanceTypeContext, Result};

// AWS well-known label keys not already named in `model::labels`.
pub(super) const INSTANCE_CPU: &str = "karpenter.k8s.aws/instance-cpu";
pub(super) const INSTANCE_CPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-cpu-manufacturer";
pub(super) const INSTANCE_CPU_CLOCK: &str =
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz";
pub(super) const INSTANCE_MEMORY: &str = "karpenter.k8s.aws/instance-memory";
pub(super) const INSTANCE_EBS_BANDWIDTH: &str = "karpenter.k8s.aws/instance-ebs-bandwidth";
pub(super) const INSTANCE_NETWORK_BANDWIDTH: &str = "karpenter.k8s.aws/instance-network-bandwidth";
pub(super) const INSTANCE_LOCAL_NVME: &str = "karpenter.k8s.aws/instance-local-nvme";
pub(super) const INSTANCE_CAPABILITY_FLEX: &str = "karpenter.k8s.aws/instance-capability-flex";
pub(super) const INSTANCE_GPU_NAME: &str = "karpenter.k8s.aws/instance-gpu-name";
pub(super) const INSTANCE_GPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-gpu-manufacturer";
pub(super) const INSTANCE_GPU_MEMORY: &str = "karpenter.k8s.aws/instance-gpu-memory";
pub(super) const INSTANCE_ACCELERATOR_NAME: &str = "karpenter.k8s.aws/instance-accelerator-name";
pub(super) const INSTANCE_ACCELERATOR_MANUFACTURER: &str =
    "karpenter.k8s.aws/instance-accelerator-manufacturer";
pub(super) const INSTANCE_HYPERVISOR: &str = "karpenter.k8s.aws/instance-hypervisor";
pub(super) const INSTANCE_ENCRYPTION_IN_TRANSIT: &str =
    "karpenter.k8s.aws/instance-encryption-in-transit-supported";
pub(super) const INSTANCE_TENANCY: &str = "karpenter.k8s.aws/instance-tenancy";
pub(super) const CAPACITY_RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";
pub(super) const CAPACITY_RESERVATION_TYPE: &str = "karpenter.k8s.aws/capacity-reservation-type";

/// Builds every instance type of the snapshot for `ctx`.
///
/// Offerings: one per zone of the region and capacity type (`SupportedUsageClasses`
/// ∩ {on-demand, spot}), available only in the type's zones — offered there, and reached by
/// the class's subnets (`offering/base_resolver.go` `ResolveOfferings`: `allZones`,
/// `itZones.Has(zone)`); the others keep their price, which prices a node running there.
/// * **On-demand prices** are the snapshot's: the us-east-1 list prices, used as the estimate in
///   every region; in a live catalog, the region's from the Pricing API where it priced the type.
/// * **Spot** offerings take the region's spot price of their (type, zone)
///   ([`RegionFacts::spot_prices`], DescribeSpotPriceHistory in a live catalog). While the
///   region has no spot prices at all (the embedded snapshot, a failed DescribeSpotPriceHistory)
///   they carry the on-demand price, as Karpenter's before its first spot-price update
///   (`aws v1.14.1: pkg/providers/pricing/pricing.go` `Reset`, `SpotPrice`): a conservative
///   stand-in (real spot prices are lower). Once the region has spot prices, a (type, zone)
///   without one has no spot price (`SpotPrice` answers false once `spotPricingUpdated`).
/// * An offering with **no known price** (no on-demand price, and for spot no spot price
///   either) takes the price a NodeOverlay gives its type ([`InstanceTypeContext::overlay_prices`],
///   `offering/offering.go` `GetOverlayPrice`); without one it has `available: false` (price 0):
///   like Karpenter without a price, it is listed but never launched.
/// * A type the node class cannot run (`compatibility.IsCompatibleWithNodeClass`, the checks
///   `compatible_with_node_class` models) keeps its offerings, all unavailable.
/// * With the class's `networkInterfaces` set, EFA capacity is its EFA-only interface count and
///   each EFA-only interface on card 0 takes an ENI from the ENI-limited pods.
pub(super) fn aws_instance_types(
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
        reserved_enis: ctx.reserved_enis,
        // "EFA-only interfaces consume an ENI and don't support IP networking": those on
        // network card 0 leave the VPC CNI fewer interfaces (`types.go` `ENILimitedPods`).
        efa_only_enis: ctx
            .network_interfaces
            .unwrap_or_default()
            .iter()
            .filter(|n| n.network_card_index == 0 && n.efa_only)
            .count() as i64,
        eviction_soft: ctx.counts_eviction_soft(),
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
        let offers = OfferingFacts {
            zones: &zones,
            region_zones: &region.zones,
            capacity_types: &capacity_types,
            spot_prices: region.spot_prices.get(&facts.name),
            spot_priced_region: !region.spot_prices.is_empty(),
            overlay_price: ctx.overlay_prices.get(&facts.name).copied(),
            compatible: compatible_with_node_class(facts, ctx),
        };
        let mut it = aws_instance_type(facts, arch, ctx.region, &offers, &settings);
        // With `networkInterfaces` set, the EFA capacity is the class's EFA-only interfaces
        // (`types.go` `efas`), not the type's maximum.
        if let Some(nis) = ctx.network_interfaces {
            let efas = nis.iter().filter(|n| n.efa_only).count() as i64;
            it.capacity.set(overhead::EFA, efas * ONE);
        }
        // A registered node's reported memory replaces the estimate (`instancetype.go` `get`);
        // the overhead keeps the estimate's eviction threshold, as upstream's does.
        if let Some(memory) = ctx.discovered_memory.get(&facts.name) {
            it.capacity.memory = *memory;
        }
        out.push(it);
    }
    Ok(out)
}

/// Where and at what price a type is offered (`aws v1.14.1:
/// pkg/providers/instancetype/offering/base_resolver.go` `ResolveOfferings`).
pub(super) struct OfferingFacts<'a> {
    /// The allowed zones offering the type.
    pub(super) zones: &'a BTreeSet<&'a str>,
    /// Every zone of the region (`allZones`: the zones any type is offered in): the type has an
    /// on-demand and a spot offering in each, available only in `zones`.
    pub(super) region_zones: &'a [String],
    /// `on-demand` and/or `spot`.
    pub(super) capacity_types: &'a [&'a str],
    /// The region's spot prices of the type, by zone.
    pub(super) spot_prices: Option<&'a BTreeMap<String, f64>>,
    /// Whether the region has spot prices at all (then a zone without one has no spot price;
    /// else spot carries the on-demand price).
    pub(super) spot_priced_region: bool,
    /// A NodeOverlay's price for the type, used where it has no price of its own.
    pub(super) overlay_price: Option<f64>,
    /// Whether the node class can run the type; if not, no offering is available.
    pub(super) compatible: bool,
}

/// `compatibility.IsCompatibleWithNodeClass` (`aws v1.14.1:
/// pkg/providers/instancetype/compatibility/compatibility.go`, since v1.12), the checks this tool
/// can see:
/// * "a1 instance types are not supported with al2023s";
/// * the class's `networkInterfaces` ([`network_interfaces_fit`]).
///
/// * `nestedVirtualizationCompatibility`: with `cpuOptions.nestedVirtualization: enabled`, the
///   processor's `SupportedFeatures` must include `nested-virtualization`;
/// * `placementGroupCompatibility`: with a resolved placement group, the type's
///   `PlacementGroupInfo.SupportedStrategies` must include the group's strategy;
/// * `connectionTrackingCompatibility`: with `connectionTracking` set, the hypervisor must be
///   `nitro`.
///
/// A catalog that does not record the processor features or strategies (written before them)
/// skips those checks. v1beta1 and v1alpha5 controllers (v0.37, v0.31) have no such check.
pub(super) fn compatible_with_node_class(facts: &InstanceFacts, ctx: &InstanceTypeContext) -> bool {
    if ctx.generation.is_some_and(|g| g != ApiGeneration::V1) {
        return true;
    }
    if a1_on_al2023(&facts.name, ctx.family()) {
        return false;
    }
    if ctx.nested_virtualization
        && facts
            .processor_features
            .as_ref()
            .is_some_and(|f| !f.iter().any(|f| f == "nested-virtualization"))
    {
        return false;
    }
    if let (Some(pg), Some(strategies)) = (ctx.placement_group, &facts.placement_group_strategies) {
        if !strategies.iter().any(|s| s == pg.strategy.as_str()) {
            return false;
        }
    }
    if ctx.connection_tracking && facts.hypervisor.as_deref() != Some("nitro") {
        return false;
    }
    ctx.network_interfaces
        .is_none_or(|nis| network_interfaces_fit(&facts.network(), nis))
}

/// `amiFamilyCheck` (`aws v1.14.1: pkg/providers/instancetype/compatibility/compatibility.go`):
/// AL2023 does not run on `a1.*` types.
pub(super) fn a1_on_al2023(instance_type: &str, family: AmiFamily) -> bool {
    family == AmiFamily::Al2023 && instance_type.starts_with("a1.")
}

/// What the `networkInterfaces` check reads of a type (from a snapshot or a custom catalog).
#[derive(Debug, Clone, Copy)]
pub(super) struct NetworkFacts<'a> {
    /// Each card's interface limit at its index; `None`: not recorded.
    pub(super) cards: Option<&'a [i64]>,
    /// The interfaces of card 0 (used when `cards` is not recorded).
    pub(super) card_0_interfaces: i64,
    /// `EfaInfo.MaximumEfaInterfaces`.
    pub(super) efas: i64,
    /// `EnaSupport`; `None`: not recorded.
    pub(super) ena: Option<EnaSupport>,
}

impl InstanceFacts {
    pub(super) fn network(&self) -> NetworkFacts<'_> {
        NetworkFacts {
            cards: self.network_cards.as_deref(),
            card_0_interfaces: self.max_enis,
            efas: self.efa_max_interfaces,
            ena: self.ena_support,
        }
    }
}

/// `networkInterfaceCheck.compatibleCheck` (`compatibility.go`; tests `compatibility/suite_test.go`
/// "NetworkInterfaceCompatibility"): the type can take the class's `networkInterfaces` unless
/// (1) it does not support ENA, (2) an interface names a network card it does not have (or it
/// has none), (3) a device index is not below its card's interface limit, or (5) the class has
/// more EFA-only interfaces than the type's EFAs. (4), secondary IP counts, never refuses in
/// v1.14.1: `amifamily.ResolveNetworkInterfaces` does not carry them to the check.
///
/// A catalog that does not record the cards (`InstanceFacts::network_cards`, catalogs written
/// before it) checks device indices on card 0 only, against `max_enis`, and takes other cards as
/// present; one that does not record ENA support skips (1). `Catalog::checks_network_interfaces`
/// says so, and the offline plan warns.
pub(super) fn network_interfaces_fit(facts: &NetworkFacts<'_>, nis: &[NetworkInterface]) -> bool {
    if facts.ena == Some(EnaSupport::Unsupported) {
        return false;
    }
    let cards_fit = match facts.cards {
        Some(cards) => {
            !cards.is_empty()
                && nis.iter().all(|n| {
                    usize::try_from(n.network_card_index)
                        .ok()
                        .and_then(|i| cards.get(i))
                        .is_some_and(|max| n.device_index < *max)
                })
        }
        None => !nis
            .iter()
            .any(|n| n.network_card_index == 0 && n.device_index >= facts.card_0_interfaces),
    };
    let efas = nis.iter().filter(|n| n.efa_only).count() as i64;
    cards_fit && (efas == 0 || efas <= facts.efas)
}

pub(super) fn aws_instance_type(
    facts: &InstanceFacts,
    arch: &str,
    region: &str,
    offers: &OfferingFacts<'_>,
    settings: &NodeSettings,
) -> InstanceType {
    let OfferingFacts {
        zones,
        region_zones,
        capacity_types,
        spot_prices,
        spot_priced_region,
        overlay_price,
        compatible,
    } = *offers;
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

    let on_demand = facts.on_demand_price;
    // `base_resolver.go ResolveOfferings` l.96: an offering in every zone of `allZones`, available
    // only in the type's zones (`itZones.Has(zone)`, the offered zones the subnets reach); the
    // others still carry their price, which prices a node running there (`disruption/types.go
    // resolveNodePrice`) and keeps it from `InstanceTypeNotFound` drift (`HasCompatible`).
    let all_zones = region_zones.iter().map(String::as_str).chain(
        // A snapshot whose `zones` miss an offered zone (a custom-written one): still offered.
        zones
            .iter()
            .copied()
            .filter(|z| !region_zones.iter().any(|r| r == z)),
    );
    let offerings = all_zones
        .flat_map(|zone| {
            let offered = zones.contains(zone);
            capacity_types.iter().map(move |ct| {
                // Spot: the zone's spot price once the region has spot prices, else the
                // on-demand stand-in; without a price, a NodeOverlay's (`GetOverlayPrice`).
                let price = match *ct {
                    SPOT if spot_priced_region => spot_prices.and_then(|p| p.get(zone).copied()),
                    _ => on_demand,
                }
                .or(overlay_price);
                Offering {
                    zone: zone.to_string(),
                    capacity_type: ct.to_string(),
                    price: price.unwrap_or(0.0),
                    available: compatible && offered && price.is_some(),
                    reservation: None,
                    zone_id: None,
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

/// Device-plugin and VPC resources from the GPU/accelerator/network facts and the VPC resource
/// controller's table ([`vpc_limits`]): `computeCapacity` and, on Windows, `NewInstanceType`.
pub(super) fn extended_resources(
    facts: &InstanceFacts,
    family: AmiFamily,
) -> Vec<(&'static str, i64)> {
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
        let cores = acc.neuron_cores();
        if cores > 0 {
            out.push((overhead::AWS_NEURON_CORE, cores));
        }
    }
    if facts.efa_max_interfaces > 0 {
        out.push((overhead::EFA, facts.efa_max_interfaces));
    }
    let limits = vpc_limits(&facts.name);
    // Security groups for pods: one branch ENI per pod, on trunking-compatible types only
    // (`types.go` `awsPodENI`; provider suite "should launch vpc.amazonaws.com/pod-eni on a
    // compatible instance type").
    if let Some(l) = limits.filter(|l| l.branch_enis > 0) {
        out.push((overhead::POD_ENI, l.branch_enis));
    }
    // Windows pods get secondary IPs from the VPC resource controller: one per address of the
    // table's row but the primary; none for a type the table lacks (`privateIPv4Address`,
    // provider suite "should not launch instance type for vpc.amazonaws.com/PrivateIPv4Address
    // if VPC resource controller doesn't advertise it").
    if family.is_windows() {
        if let Some(l) = limits.filter(|l| l.ipv4_per_interface > 1) {
            out.push((overhead::PRIVATE_IPV4_ADDRESS, l.ipv4_per_interface - 1));
        }
    }
    out
}

/// `computeRequirements`: one requirement per AWS well-known key; facts the type lacks are
/// `DoesNotExist`, so e.g. an AMI variant requiring `instance-gpu-count Exists` skips it.
pub(super) fn aws_requirements(
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
    // The provider's compiled table, not EC2's figures (`types.go` l.267:
    // `InstanceTypeBandwidthMegabits[name]`): a type it does not list has no label.
    put_opt(
        &mut r,
        INSTANCE_NETWORK_BANDWIDTH,
        network_bandwidth_mbps(&facts.name)
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

/// As the AWS provider's `computeRequirements`: the ids, types and interruptibility of the
/// reservations of `offerings` when it has reserved ones, else `DoesNotExist`.
pub(super) fn reservation_requirements(r: &mut Requirements, offerings: &[Offering]) {
    let reserved: Vec<&ReservedCapacity> = offerings
        .iter()
        .filter_map(|o| o.reservation.as_ref())
        .collect();
    let values = |f: fn(&ReservedCapacity) -> String| -> Vec<String> {
        reserved.iter().map(|c| f(c)).collect()
    };
    let keys = [
        (labels::CAPACITY_RESERVATION_ID, values(|c| c.id.clone())),
        (
            labels::CAPACITY_RESERVATION_TYPE,
            values(|c| c.reservation_type.as_str().to_string()),
        ),
        (
            labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
            values(|c| c.interruptible.to_string()),
        ),
    ];
    for (key, values) in keys {
        r.remove(key);
        if values.is_empty() {
            put_opt(r, key, None);
        } else {
            r.add(Requirement::new(key, Operator::In, values));
        }
    }
}

/// The reserved offerings of the live reservations `ctx`'s selector terms select, added to the
/// types they are for, as `aws v1.14.1: pkg/providers/instancetype/offering/
/// reserved_capacity_resolver.go` does: priced at the on-demand price divided by
/// [`RESERVED_PRICE_DIVISOR`], available while the class can run the type
/// ([`compatible_with_node_class`]), the reservation has instances left, is in one of the type's
/// zones and is not expiring; the type's requirements then admit capacity type
/// `reserved` and name the reservations (`computeRequirements`). A reservation for a type the
/// class does not see (not offered in its zones) adds nothing.
pub(super) fn add_reserved_offerings(
    types: &mut [InstanceType],
    facts: &AwsSnapshot,
    reservations: &Reservations,
    ctx: &InstanceTypeContext,
) {
    let selected = reservations.selected(ctx.capacity_reservations);
    if selected.is_empty() {
        return;
    }
    for t in types.iter_mut() {
        let mine: Vec<_> = selected
            .iter()
            .filter(|r| r.instance_type == t.name)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let info = facts
            .instance_types
            .binary_search_by(|f| f.name.as_str().cmp(&t.name))
            .ok()
            .map(|i| &facts.instance_types[i]);
        let on_demand = info.and_then(|f| f.on_demand_price);
        // `reserved_capacity_resolver.go` l.85: `isCompatibleWithNodeClass && …`.
        let compatible = info.is_none_or(|f| compatible_with_node_class(f, ctx));
        // `itZones`: the type's zones (its offerings also cover the region's other zones).
        let zones = t.requirements.get(labels::ZONE);
        for r in mine {
            t.offerings.push(Offering {
                zone: r.zone.clone(),
                capacity_type: RESERVED.to_string(),
                price: on_demand.map_or(0.0, |p| p / RESERVED_PRICE_DIVISOR),
                available: compatible && r.capacity.count > 0 && zones.has(&r.zone) && !r.expiring,
                reservation: Some(r.capacity.clone()),
                zone_id: None,
            });
        }
        let mut capacity_types = t.requirements.get(labels::CAPACITY_TYPE);
        if !capacity_types.has(RESERVED) {
            let mut values: Vec<String> = capacity_types.values().iter().cloned().collect();
            values.push(RESERVED.to_string());
            capacity_types = Requirement::new(labels::CAPACITY_TYPE, Operator::In, values);
            t.requirements.remove(labels::CAPACITY_TYPE);
            t.requirements.add(capacity_types);
        }
        reservation_requirements(&mut t.requirements, &t.offerings);
    }
}

pub(super) fn put(r: &mut Requirements, key: &str, value: &str) {
    r.add(Requirement::single(key, value));
}

/// `In [value]`, or `DoesNotExist` when there is no value.
pub(super) fn put_opt(r: &mut Requirements, key: &str, value: Option<&str>) {
    match value {
        Some(v) => put(r, key, v),
        None => r.add(Requirement::new(
            key,
            Operator::DoesNotExist,
            std::iter::empty::<String>(),
        )),
    }
}
