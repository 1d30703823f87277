//! The custom catalog format (`--catalog FILE`, docs/spec.md §5.5): instance types written out by the
//! user as JSON or YAML, parsed with one-line errors naming the file and field path, and turned
//! into instance types for a node class (kubelet `maxPods`, AWS overhead formulas where the file
//! gives none, Windows relabelling, subnet zones).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::instance_type::{InstanceType, Offering, Overhead, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::nodepool::ApiGeneration;
use crate::model::overhead::{self, AmiFamily};
use crate::model::placement_group::{PlacementGroup, Strategy};
use crate::model::quantity::{parse_milli, QuantityError, ONE};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::reservation::{
    is_reservation_id, selected, Reservation, ReservationType, ReservedCapacity,
};
use crate::model::resources::{Resources, PODS};

use super::aws::{
    a1_on_al2023, network_interfaces_fit, put, put_opt, reservation_requirements, NetworkFacts,
};
use super::names::labels_from_name;
use super::snapshot::EnaSupport;
use super::{one_line, CatalogError, InstanceTypeContext, Result};

/// The kubelet's default `maxPods`, for custom catalog entries that give no `pods` capacity.
pub(super) const DEFAULT_CUSTOM_PODS: i64 = 110;

#[derive(Debug)]
pub(super) struct CustomCatalog {
    pub(super) file: String,
    pub(super) types: Vec<CustomType>,
    /// `placementGroups` (the available groups a class's `placementGroupSelector` resolves
    /// against, as DescribePlacementGroups answers live); `None` when the file has no such key.
    pub(super) placement_groups: Option<Vec<PlacementGroup>>,
}

#[derive(Debug)]
pub(super) struct CustomType {
    pub(super) name: String,
    pub(super) capacity: Resources,
    pub(super) overhead: Option<Resources>,
    /// Derived labels overlaid with the file's labels, keys normalised.
    pub(super) labels: BTreeMap<String, String>,
    /// Whether the file set `kubernetes.io/os` itself (Windows families otherwise relabel).
    pub(super) explicit_os: bool,
    pub(super) offerings: Vec<Offering>,
    /// Per offering: for a reserved one, what a node class's `capacityReservationSelectorTerms`
    /// match against (id, owner, tags, match criteria).
    pub(super) reservations: Vec<Option<Reservation>>,
    /// `network`: what a node class's `networkInterfaces` is checked against; `None`: not
    /// given (the check is skipped, and said, `Catalog::checks_network_interfaces`).
    pub(super) network: Option<CustomNetwork>,
}

/// A custom entry's `network` (DescribeInstanceTypes' `NetworkInfo`, reduced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CustomNetwork {
    /// `networkCards`: each card's `MaximumNetworkInterfaces`, at its index.
    pub(super) cards: Vec<i64>,
    /// `enaSupport`; `None`: not given (taken as supported).
    pub(super) ena: Option<EnaSupport>,
    /// `efaInterfaces`: `EfaInfo.MaximumEfaInterfaces` (default 0).
    pub(super) efas: i64,
}

impl CustomNetwork {
    fn facts(&self) -> NetworkFacts<'_> {
        NetworkFacts {
            cards: Some(&self.cards),
            card_0_interfaces: self.cards.first().copied().unwrap_or(0),
            efas: self.efas,
            ena: self.ena,
        }
    }
}

/// Karpenter prices a reserved offering at the type's on-demand price divided by this: "free",
/// yet ordered like on-demand for consolidation; 0 without an on-demand price (`aws:
/// pkg/providers/instancetype/offering/reserved_capacity_resolver.go`).
pub(super) const RESERVED_PRICE_DIVISOR: f64 = 10_000_000.0;

/// The offering fields only a reserved offering has.
const RESERVATION_FIELDS: [&str; 7] = [
    "reservationId",
    "count",
    "reservationType",
    "interruptible",
    "ownerId",
    "tags",
    "instanceMatchCriteria",
];

/// Label keys a custom catalog may not set: they come from `name` and `offerings`.
pub(super) const RESERVED_LABELS: [(&str, &str); 8] = [
    (
        labels::PLACEMENT_GROUP_ID,
        "placement groups come from `placementGroups` and the node class's placementGroupSelector",
    ),
    (
        labels::PLACEMENT_GROUP_PARTITION,
        "partitions come from `placementGroups[].partitionCount`",
    ),
    (
        labels::INSTANCE_TYPE,
        "the instance type is the entry's `name`",
    ),
    (labels::ZONE, "zones come from `offerings[].zone`"),
    (
        labels::CAPACITY_TYPE,
        "capacity types come from `offerings[].capacityType`",
    ),
    (
        labels::CAPACITY_RESERVATION_ID,
        "reservations come from reserved offerings (`offerings[].reservationId`)",
    ),
    (
        labels::CAPACITY_RESERVATION_TYPE,
        "reservations come from reserved offerings (`offerings[].reservationType`)",
    ),
    (
        labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
        "reservations come from reserved offerings (`offerings[].interruptible`)",
    ),
];

/// Resources whose presence makes a type a GPU type, for the GPU-count requirement.
pub(super) const GPU_RESOURCES: [&str; 3] = [
    overhead::NVIDIA_GPU,
    overhead::AMD_GPU,
    overhead::HABANA_GAUDI,
];

impl CustomCatalog {
    pub(super) fn parse(file: &str, text: &str) -> Result<CustomCatalog> {
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
            if !matches!(
                key.as_str(),
                "instanceTypes" | "placementGroups" | "apiVersion" | "kind"
            ) {
                return Err(p.invalid(
                    key,
                    "unknown field (expected instanceTypes, placementGroups)",
                ));
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
        // A reservation is one instance type in one zone: declared once in the whole catalog.
        let mut reservation_paths: BTreeMap<String, String> = BTreeMap::new();
        for (i, entry) in list.iter().enumerate() {
            let path = format!("instanceTypes[{i}]");
            let t = p.instance_type(&path, entry)?;
            for (j, o) in t.offerings.iter().enumerate() {
                let Some(id) = o.reservation_id() else {
                    continue;
                };
                let here = format!("{path}.offerings[{j}].reservationId");
                if let Some(first) = reservation_paths.insert(id.to_string(), here.clone()) {
                    return Err(p.invalid(
                        &here,
                        format!("capacity reservation {id} is declared twice (also {first})"),
                    ));
                }
            }
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
        let placement_groups = match root.get("placementGroups") {
            None | Some(Value::Null) => None,
            Some(v) => Some(p.placement_groups(v)?),
        };
        Ok(CustomCatalog {
            file: file.to_string(),
            types,
            placement_groups,
        })
    }

    pub(super) fn instance_types(&self, ctx: &InstanceTypeContext) -> Vec<InstanceType> {
        let family = ctx.family();
        self.types
            .iter()
            .filter_map(|t| {
                let arch = t.labels.get(labels::ARCH).map(String::as_str);
                if family.is_windows() && arch != Some("amd64") {
                    return None;
                }
                // A reserved offering exists only for a reservation the node class selects
                // (`status.capacityReservations` upstream, here resolved against the catalog).
                // One in a zone the class's subnets do not reach is kept, unavailable, as the
                // AWS provider lists it (`base_resolver.go` / `reserved_capacity_resolver.go`:
                // `itZones.Has(zone)`), so a node running there keeps its price.
                let mut offerings: Vec<Offering> = t
                    .offerings
                    .iter()
                    .zip(&t.reservations)
                    .filter(|(_, r)| {
                        r.as_ref()
                            .is_none_or(|r| selected(ctx.capacity_reservations, r))
                    })
                    .map(|(o, _)| {
                        let mut o = o.clone();
                        o.available &= ctx.zone_allowed(&o.zone);
                        o
                    })
                    .collect();
                if !offerings.iter().any(|o| ctx.zone_allowed(&o.zone)) {
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
                // The provider's `networkInterfaces` check (v1 only, `aws.rs`
                // `compatible_with_node_class`): a type that cannot take them keeps its
                // offerings, all unavailable.
                let v1 = ctx.generation.is_none_or(|g| g == ApiGeneration::V1);
                let network_fits = match (v1, ctx.network_interfaces, &t.network) {
                    (true, Some(nis), Some(network)) => {
                        network_interfaces_fit(&network.facts(), nis)
                    }
                    _ => true,
                };
                // `amiFamilyCheck` (`compatibility.go`): no `a1.*` type on AL2023 — its
                // reserved offerings included (`reserved_capacity_resolver.go`).
                let family_fits = !(v1 && a1_on_al2023(&t.name, family));
                if !(network_fits && family_fits) {
                    for o in &mut offerings {
                        o.available = false;
                    }
                }
                let overhead = match &t.overhead {
                    Some(total) => Overhead {
                        kube_reserved: total.clone(),
                        ..Overhead::default()
                    },
                    None => overhead::overhead_for_capacity(
                        &capacity,
                        ctx.kubelet,
                        ctx.counts_eviction_soft(),
                    ),
                };
                Some(InstanceType {
                    name: t.name.clone(),
                    requirements: t.requirements(family, &offerings, ctx),
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
    pub(super) fn requirements(
        &self,
        family: AmiFamily,
        offerings: &[Offering],
        ctx: &InstanceTypeContext,
    ) -> Requirements {
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
        // The zones the class's subnets reach (`types.go computeRequirements` `availableZones`).
        r.add(Requirement::new(
            labels::ZONE,
            Operator::In,
            (offerings.iter())
                .filter(|o| ctx.zone_allowed(&o.zone))
                .map(|o| o.zone.clone()),
        ));
        r.add(Requirement::new(
            labels::CAPACITY_TYPE,
            Operator::In,
            offerings.iter().map(|o| o.capacity_type.clone()),
        ));
        reservation_requirements(&mut r, offerings);
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
pub(super) struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    pub(super) fn invalid(&self, field: &str, message: impl Into<String>) -> CatalogError {
        CatalogError::Invalid {
            file: self.file.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn object<'v>(
        &self,
        path: &str,
        value: &'v Value,
    ) -> Result<&'v serde_json::Map<String, Value>> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(path, format!("expected a mapping, got {}", kind(value))))
    }

    pub(super) fn only_fields(
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

    pub(super) fn string(&self, path: &str, value: Option<&Value>) -> Result<String> {
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

    /// `placementGroups: [{id, name, strategy, partitionCount, spreadLevel}]` (docs/spec.md
    /// §5.5): ids and names unique; `partitionCount` (1–7, EC2's limit) only, and required, for
    /// `partition`; `spreadLevel` (`rack`, `host`) only for `spread`.
    fn placement_groups(&self, value: &Value) -> Result<Vec<PlacementGroup>> {
        const PATH: &str = "placementGroups";
        let Value::Array(list) = value else {
            return Err(self.invalid(PATH, format!("expected a list, got {}", kind(value))));
        };
        let mut out: Vec<PlacementGroup> = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let path = format!("{PATH}[{i}]");
            let map = self.object(&path, entry)?;
            self.only_fields(
                &path,
                map,
                &["id", "name", "strategy", "partitionCount", "spreadLevel"],
            )?;
            let id = self.string(&field(&path, "id"), map.get("id"))?;
            let name = self.string(&field(&path, "name"), map.get("name"))?;
            let spath = field(&path, "strategy");
            let text = self.string(&spath, map.get("strategy"))?;
            let strategy = Strategy::parse(&text).ok_or_else(|| {
                self.invalid(
                    &spath,
                    format!("unknown strategy {text:?} (expected cluster, partition, spread)"),
                )
            })?;
            let cpath = field(&path, "partitionCount");
            let partition_count = match (map.get("partitionCount"), strategy) {
                (None | Some(Value::Null), Strategy::Partition) => {
                    return Err(self.invalid(&cpath, "required for a partition group"))
                }
                (None | Some(Value::Null), _) => 0,
                (Some(_), s) if s != Strategy::Partition => {
                    return Err(self.invalid(&cpath, "only a partition group has partitions"))
                }
                (Some(v), _) => match v.as_u64().filter(|n| (1..=7).contains(n)) {
                    Some(n) => n as u32,
                    None => return Err(self.invalid(&cpath, "expected an integer from 1 to 7")),
                },
            };
            let lpath = field(&path, "spreadLevel");
            let spread_level = match map.get("spreadLevel") {
                None | Some(Value::Null) => None,
                Some(_) if strategy != Strategy::Spread => {
                    return Err(self.invalid(&lpath, "only a spread group has a spread level"))
                }
                v => {
                    let level = self.string(&lpath, v)?;
                    if !matches!(level.as_str(), "rack" | "host") {
                        return Err(self.invalid(&lpath, "expected rack or host"));
                    }
                    Some(level)
                }
            };
            for (j, g) in out.iter().enumerate() {
                if g.id == id || g.name == name {
                    let what = if g.id == id { "id" } else { "name" };
                    return Err(self.invalid(
                        &field(&path, what),
                        format!("duplicate placement group {what} (also {PATH}[{j}])"),
                    ));
                }
            }
            out.push(PlacementGroup {
                id,
                name,
                strategy,
                partition_count,
                spread_level,
            });
        }
        Ok(out)
    }

    pub(super) fn instance_type(&self, path: &str, value: &Value) -> Result<CustomType> {
        let map = self.object(path, value)?;
        self.only_fields(
            path,
            map,
            &[
                "name",
                "capacity",
                "overhead",
                "labels",
                "offerings",
                "network",
            ],
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
        let (offerings, reservations) =
            self.offerings(&format!("{path}.offerings"), map.get("offerings"))?;
        let network = match map.get("network") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.network(&format!("{path}.network"), v)?),
        };
        Ok(CustomType {
            network,
            name,
            capacity,
            overhead,
            labels,
            explicit_os,
            offerings,
            reservations,
        })
    }

    /// An entry's `network`: `networkCards` (required, a list of interface counts),
    /// `enaSupport` (`unsupported` | `supported` | `required`), `efaInterfaces`.
    fn network(&self, path: &str, value: &Value) -> Result<CustomNetwork> {
        let map = self.object(path, value)?;
        self.only_fields(path, map, &["networkCards", "enaSupport", "efaInterfaces"])?;
        let count = |p: &str, v: &Value| {
            v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                self.invalid(
                    p,
                    format!("expected a non-negative integer, got {}", kind(v)),
                )
            })
        };
        let cpath = format!("{path}.networkCards");
        let cards = match map.get("networkCards") {
            None | Some(Value::Null) => {
                return Err(self.invalid(&cpath, "required field is missing"))
            }
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, v)| count(&format!("{cpath}[{i}]"), v))
                .collect::<Result<Vec<i64>>>()?,
            Some(other) => {
                return Err(self.invalid(&cpath, format!("expected a list, got {}", kind(other))))
            }
        };
        let epath = format!("{path}.enaSupport");
        let ena = match map.get("enaSupport") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_str().and_then(EnaSupport::parse).ok_or_else(|| {
                self.invalid(&epath, "expected one of unsupported, supported, required")
            })?),
        };
        let efas = match map.get("efaInterfaces") {
            None | Some(Value::Null) => 0,
            Some(v) => count(&format!("{path}.efaInterfaces"), v)?,
        };
        Ok(CustomNetwork { cards, ena, efas })
    }

    pub(super) fn resources(&self, path: &str, value: &Value) -> Result<Resources> {
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

    /// The offerings of one entry, and for each reserved one the reservation it stands for.
    #[allow(clippy::type_complexity)]
    pub(super) fn offerings(
        &self,
        path: &str,
        value: Option<&Value>,
    ) -> Result<(Vec<Offering>, Vec<Option<Reservation>>)> {
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
        let mut reservations: Vec<Option<Reservation>> = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let opath = format!("{path}[{i}]");
            let map = self.object(&opath, entry)?;
            let mut allowed = vec!["zone", "capacityType", "price", "available"];
            allowed.extend(RESERVATION_FIELDS);
            self.only_fields(&opath, map, &allowed)?;
            let zone = self.string(&format!("{opath}.zone"), map.get("zone"))?;
            let ct_path = format!("{opath}.capacityType");
            let capacity_type = self.string(&ct_path, map.get("capacityType"))?;
            if ![ON_DEMAND, SPOT, RESERVED].contains(&capacity_type.as_str()) {
                return Err(self.invalid(
                    &ct_path,
                    format!("invalid capacity type {capacity_type:?} (expected on-demand, spot or reserved)"),
                ));
            }
            let reserved = capacity_type == RESERVED;
            let price_path = format!("{opath}.price");
            let price = match map.get("price") {
                None | Some(Value::Null) if reserved => 0.0,
                None | Some(Value::Null) => {
                    return Err(self.invalid(&price_path, "required field is missing"))
                }
                Some(_) if reserved => {
                    return Err(self.invalid(
                        &price_path,
                        "a reserved offering has no price of its own: Karpenter prices reserved capacity at the \
                         type's on-demand price / 10,000,000",
                    ))
                }
                Some(v) => self.price(&price_path, v)?,
            };
            let available = self.flag(&format!("{opath}.available"), map.get("available"), true)?;
            let (reservation, selection) = if reserved {
                let (r, sel) = self.reservation(&opath, map)?;
                (Some(r), Some(sel))
            } else {
                if let Some(k) = RESERVATION_FIELDS.iter().find(|k| map.contains_key(**k)) {
                    return Err(self.invalid(
                        &field(&opath, k),
                        "only a reserved offering (capacityType: reserved) names a capacity reservation",
                    ));
                }
                (None, None)
            };
            if let Some(j) = out.iter().position(|o| {
                o.zone == zone
                    && o.capacity_type == capacity_type
                    && o.reservation_id() == reservation.as_ref().map(|r| r.id.as_str())
            }) {
                return Err(self.invalid(
                    &opath,
                    format!("duplicate offering {zone}/{capacity_type} (also {path}[{j}])"),
                ));
            }
            out.push(Offering {
                zone,
                capacity_type,
                price,
                // Karpenter: a reservation with no instance left is not available.
                available: available && reservation.as_ref().is_none_or(|r| r.count > 0),
                reservation,
                zone_id: None,
            });
            reservations.push(selection);
        }
        let on_demand = out
            .iter()
            .filter(|o| o.capacity_type == ON_DEMAND)
            .map(|o| o.price)
            .min_by(f64::total_cmp);
        for o in out.iter_mut().filter(|o| o.reservation.is_some()) {
            o.price = on_demand.map_or(0.0, |p| p / RESERVED_PRICE_DIVISOR);
        }
        Ok((out, reservations))
    }

    /// A boolean field, `default` when absent.
    fn flag(&self, path: &str, value: Option<&Value>, default: bool) -> Result<bool> {
        match value {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.invalid(path, format!("expected true or false, got {}", kind(other))))
            }
        }
    }

    fn price(&self, path: &str, value: &Value) -> Result<f64> {
        match value {
            Value::Number(n) => n.as_f64().filter(|p| p.is_finite() && *p >= 0.0),
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0),
            other => {
                return Err(self.invalid(path, format!("expected a number, got {}", kind(other))))
            }
        }
        .ok_or_else(|| self.invalid(path, "expected a non-negative number of USD per hour"))
    }

    /// A reserved offering's reservation: `reservationId` and `count` are required (how many
    /// instances the reservation can still take decides how many NodeClaims Karpenter plans on
    /// it); the rest is optional and only matters to selector terms.
    fn reservation(
        &self,
        opath: &str,
        map: &serde_json::Map<String, Value>,
    ) -> Result<(ReservedCapacity, Reservation)> {
        let id_path = format!("{opath}.reservationId");
        let id = self.string(&id_path, map.get("reservationId"))?;
        if !is_reservation_id(&id) {
            return Err(self.invalid(
                &id_path,
                format!("{id:?} is not a capacity reservation id (cr-…)"),
            ));
        }
        let count_path = format!("{opath}.count");
        let count = match map.get("count") {
            None | Some(Value::Null) => {
                return Err(self.invalid(
                    &count_path,
                    "required for a reserved offering: how many instances the reservation can still take",
                ))
            }
            Some(Value::Number(n)) => n.as_u64().and_then(|c| u32::try_from(c).ok()),
            Some(_) => None,
        }
        .ok_or_else(|| self.invalid(&count_path, "expected a non-negative whole number of instances"))?;
        let type_path = format!("{opath}.reservationType");
        let reservation_type = match map.get("reservationType") {
            None | Some(Value::Null) => ReservationType::Default,
            Some(Value::String(s)) => ReservationType::parse(s).ok_or_else(|| {
                self.invalid(
                    &type_path,
                    format!("invalid reservation type {s:?} (expected default or capacity-block)"),
                )
            })?,
            Some(other) => {
                return Err(self.invalid(
                    &type_path,
                    format!("expected a string, got {}", kind(other)),
                ))
            }
        };
        let interruptible = self.flag(
            &format!("{opath}.interruptible"),
            map.get("interruptible"),
            false,
        )?;
        let optional = |key: &str| -> Result<Option<String>> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                v => self.string(&format!("{opath}.{key}"), v).map(Some),
            }
        };
        let owner_id = optional("ownerId")?;
        let instance_match_criteria = optional("instanceMatchCriteria")?;
        if let Some(c) = &instance_match_criteria {
            if c != "open" && c != "targeted" {
                return Err(self.invalid(
                    &format!("{opath}.instanceMatchCriteria"),
                    format!("invalid value {c:?} (expected open or targeted)"),
                ));
            }
        }
        let mut tags = BTreeMap::new();
        if let Some(v) = map.get("tags").filter(|v| !v.is_null()) {
            let tpath = format!("{opath}.tags");
            for (k, v) in self.object(&tpath, v)? {
                let Value::String(v) = v else {
                    return Err(self.invalid(
                        &field(&tpath, k),
                        format!("expected a string, got {}", kind(v)),
                    ));
                };
                tags.insert(k.clone(), v.clone());
            }
        }
        Ok((
            ReservedCapacity {
                id: id.clone(),
                reservation_type,
                interruptible,
                count,
            },
            Reservation {
                id,
                owner_id,
                tags,
                instance_match_criteria,
            },
        ))
    }
}

/// `path.key`, or `path["key"]` when the key has dots (resource and label names usually do).
pub(super) fn field(path: &str, key: &str) -> String {
    if key.contains(['.', '[', ']', ' ']) || key.is_empty() {
        format!("{path}[{key:?}]")
    } else {
        format!("{path}.{key}")
    }
}

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{find, label, values};
    use super::super::Catalog;
    use super::*;
    use crate::model::quantity::{GIB, MIB};
    use crate::model::reservation::CapacityReservationTerm;

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

    /// As the live catalog (`aws v1.14.1: offering/base_resolver.go ResolveOfferings`:
    /// `Available` needs `itZones.Has(zone)`): an offering in a zone the class's subnets do
    /// not reach stays listed, unavailable and priced, and the type's zones are the reached
    /// ones; a type with no offering in a reached zone is left out (s30-lineoffer; before, the
    /// offering was dropped and a node running there was priced 0).
    #[test]
    fn an_offering_outside_the_subnet_zones_stays_listed_unavailable() {
        let catalog = Catalog::from_custom_text("catalog.yaml", SPEC_EXAMPLE).unwrap();
        let zones = vec!["us-east-1a".to_string()];
        let mut ctx = InstanceTypeContext::new("anywhere", "AL2023");
        ctx.zones = Some(&zones);
        let types = catalog.instance_types(&ctx).unwrap();
        let g = find(&types, "m6g.large");
        assert_eq!(values(g, labels::ZONE), ["us-east-1a"]);
        assert_eq!(values(g, labels::CAPACITY_TYPE), ["on-demand", "spot"]);
        let b = g.offerings.iter().find(|o| o.zone == "us-east-1b").unwrap();
        assert!(!b.available);
        assert_eq!(b.price, 0.077);
        let zones = vec!["us-east-1b".to_string()];
        ctx.zones = Some(&zones);
        let types = catalog.instance_types(&ctx).unwrap();
        assert_eq!(
            types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["m6g.large"],
            "c6a.2xlarge has no offering in us-east-1b"
        );
    }

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

    /// An entry's optional `network` is what a v1 class's `networkInterfaces` is checked
    /// against (`aws v1.14.1: compatibility.go`, as for the snapshot): a type that cannot take
    /// them keeps its offerings, unavailable; an entry without `network` is not checked, and the
    /// catalog says it cannot check (`checks_network_interfaces`).
    #[test]
    fn custom_network_facts_check_a_classs_network_interfaces() {
        use crate::model::nodepool::NetworkInterface;
        let text = r#"
instanceTypes:
- name: m6idn.32xlarge
  capacity: {cpu: "128", memory: 512Gi}
  network: {networkCards: [8, 8], enaSupport: required, efaInterfaces: 2}
  offerings: [{zone: us-east-1a, capacityType: on-demand, price: 10.2}]
- name: t2.micro
  capacity: {cpu: "1", memory: 1Gi}
  network: {networkCards: [2], enaSupport: unsupported}
  offerings: [{zone: us-east-1a, capacityType: on-demand, price: 0.0116}]
"#;
        let catalog = Catalog::from_custom_text("catalog.yaml", text).unwrap();
        assert!(catalog.checks_network_interfaces());
        let available = |nis: &[NetworkInterface], generation| {
            let mut ctx = InstanceTypeContext::new("anywhere", "AL2023");
            ctx.network_interfaces = Some(nis);
            ctx.generation = generation;
            catalog
                .instance_types(&ctx)
                .unwrap()
                .into_iter()
                .filter(|t| t.offerings.iter().all(|o| o.available))
                .map(|t| t.name)
                .collect::<Vec<_>>()
        };
        let ni = |card, device, efa_only| NetworkInterface {
            network_card_index: card,
            device_index: device,
            efa_only,
        };
        let v1 = Some(ApiGeneration::V1);
        assert_eq!(
            available(&[ni(0, 0, false)], v1),
            ["m6idn.32xlarge"],
            "no ENA"
        );
        assert_eq!(available(&[ni(1, 7, true)], v1), ["m6idn.32xlarge"]);
        assert!(available(&[ni(2, 0, false)], v1).is_empty(), "no card 2");
        assert!(
            available(&[ni(0, 8, false)], v1).is_empty(),
            "card 0 takes 8"
        );
        let efas = [
            ni(0, 0, false),
            ni(0, 1, true),
            ni(1, 0, true),
            ni(1, 1, true),
        ];
        assert!(available(&efas, v1).is_empty(), "3 EFA-only > 2");
        assert_eq!(
            available(&[ni(0, 0, false)], Some(ApiGeneration::V1Beta1)).len(),
            2,
            "v0.37 has no such check"
        );

        let without = Catalog::from_custom_text("catalog.yaml", SPEC_EXAMPLE).unwrap();
        assert!(!without.checks_network_interfaces());
        for (bad, why) in [
            (
                "{enaSupport: required}",
                "network.networkCards: required field is missing",
            ),
            (
                "{networkCards: [-1]}",
                "network.networkCards[0]: expected a non-negative integer",
            ),
            (
                "{networkCards: [1], enaSupport: maybe}",
                "network.enaSupport: expected one of",
            ),
            (
                "{networkCards: [1], cards: 2}",
                "network.cards: unknown field",
            ),
        ] {
            let text = format!(
                "instanceTypes:\n- name: a.large\n  capacity: {{cpu: \"1\"}}\n  network: {bad}\n  offerings: [{{zone: z, capacityType: on-demand, price: 1}}]\n"
            );
            let err = Catalog::from_custom_text("catalog.yaml", &text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
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

    const RESERVED_EXAMPLE: &str = r#"
instanceTypes:
- name: m5.large
  capacity: {cpu: "2", memory: 8Gi}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.096}
  - {zone: us-east-1b, capacityType: on-demand, price: 0.1}
  - {zone: us-east-1a, capacityType: reserved, reservationId: cr-0a1, count: 2, ownerId: "123456789012", tags: {team: ml}}
  - {zone: us-east-1a, capacityType: reserved, reservationId: cr-0b2, count: 0, reservationType: capacity-block}
- name: c5.large
  capacity: {cpu: "2", memory: 4Gi}
  offerings:
  - {zone: us-east-1a, capacityType: reserved, reservationId: cr-0c3, count: 1, instanceMatchCriteria: targeted}
"#;

    fn reserved_types(terms: &[CapacityReservationTerm]) -> Vec<InstanceType> {
        let catalog = Catalog::from_custom_text("catalog.yaml", RESERVED_EXAMPLE).expect("loads");
        let mut ctx = InstanceTypeContext::new("anywhere", "AL2023");
        ctx.capacity_reservations = terms;
        catalog.instance_types(&ctx).unwrap()
    }

    fn term(id: Option<&str>, tags: &[(&str, &str)]) -> CapacityReservationTerm {
        CapacityReservationTerm {
            id: id.map(str::to_string),
            tags: tags
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..CapacityReservationTerm::default()
        }
    }

    /// Reserved offerings as the AWS provider builds them (`reserved_capacity_resolver.go`,
    /// `types.go` `computeRequirements`): one per reservation the class selects, priced at the
    /// on-demand price / 10,000,000, unavailable without instances left; the type's
    /// requirements list the reservations.
    #[test]
    fn reserved_offerings_follow_the_classes_selector_terms() {
        let none = reserved_types(&[]);
        let m5 = find(&none, "m5.large");
        assert!(m5.offerings.iter().all(|o| o.capacity_type == ON_DEMAND));
        assert_eq!(
            m5.requirements
                .get(labels::CAPACITY_RESERVATION_ID)
                .operator(),
            Operator::DoesNotExist
        );
        assert!(
            none.iter().all(|t| t.name != "c5.large"),
            "a type offered only through an unselected reservation is not offered"
        );

        let by_tag = reserved_types(&[term(None, &[("team", "*")])]);
        let m5 = find(&by_tag, "m5.large");
        let reserved: Vec<&Offering> = m5
            .offerings
            .iter()
            .filter(|o| o.reservation.is_some())
            .collect();
        assert_eq!(reserved.len(), 1);
        let o = reserved[0];
        assert_eq!(o.reservation_id(), Some("cr-0a1"));
        assert_eq!(o.reservation.as_ref().unwrap().count, 2);
        assert!(
            (o.price - 0.096 / 10_000_000.0).abs() < 1e-15,
            "{}",
            o.price
        );
        assert!(o.available);
        assert_eq!(
            values(m5, labels::CAPACITY_TYPE),
            vec!["on-demand", "reserved"]
        );
        assert_eq!(label(m5, labels::CAPACITY_RESERVATION_ID), "cr-0a1");
        assert_eq!(label(m5, labels::CAPACITY_RESERVATION_TYPE), "default");

        let all = reserved_types(&[
            term(Some("cr-0b2"), &[]),
            term(Some("cr-0c3"), &[]),
            term(None, &[("team", "ml")]),
        ]);
        let m5 = find(&all, "m5.large");
        let block = m5
            .offerings
            .iter()
            .find(|o| o.reservation_id() == Some("cr-0b2"))
            .unwrap();
        assert!(!block.available, "count 0: not available");
        let c5 = find(&all, "c5.large");
        assert_eq!(c5.offerings.len(), 1);
        assert_eq!(c5.offerings[0].price, 0.0, "no on-demand price: free");
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
                "catalog.yaml: instanceTypes[0].capcity: unknown field (expected one of name, capacity, overhead, labels, offerings, network)",
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
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].count: required for a reserved offering: how many instances the reservation can still take",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, count: 1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].reservationId: required field is missing",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: r-1, count: 1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].reservationId: \"r-1\" is not a capacity reservation id (cr-…)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1, count: -1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].count: expected a non-negative whole number of instances",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1, count: 1, price: 0.1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].price: a reserved offering has no price of its own: Karpenter prices reserved capacity at the type's on-demand price / 10,000,000",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: on-demand, price: 1, count: 1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].count: only a reserved offering (capacityType: reserved) names a capacity reservation",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1, count: 1, reservationType: odcr}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].reservationType: invalid reservation type \"odcr\" (expected default or capacity-block)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1, count: 1}]\n- name: b.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: reserved, reservationId: cr-1, count: 1}]\n",
                "catalog.yaml: instanceTypes[1].offerings[0].reservationId: capacity reservation cr-1 is declared twice (also instanceTypes[0].offerings[0].reservationId)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  labels: {karpenter.k8s.aws/capacity-reservation-id: cr-1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].labels[\"karpenter.k8s.aws/capacity-reservation-id\"]: cannot be set as a label: reservations come from reserved offerings (`offerings[].reservationId`)",
            ),
            ("types: []\n", "catalog.yaml: types: unknown field (expected instanceTypes, placementGroups)"),
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
}
