//! Launching a planned NodeClaim on EC2 (docs/spec.md §5.3, docs/karpenter.md §6.7): planned purely
//! ([`plan`]) and sent through [`Compute`] ([`launch`]).
//!
//! - One launch template per (AMI, max-pods) group, named by a hash of its content
//!   (`kubectl-karpenter/<hash>`), so identical groups reuse one template across launches.
//! - One CreateFleet `instant` per NodeClaim, one override per offering the solver's launch
//!   filters kept (`PlannedNodeClaim::launch_offerings`: exotic types and spot priced above
//!   on-demand dropped, the capacity type's offerings only), cheapest first, at most
//!   [`MAX_OVERRIDES`]; the subnet of a zone is the one with the most free IPs, after the
//!   IPs this run's earlier launches took ([`InflightIps`]).
//! - Network interfaces ([`template_network_interfaces`]): every template has them — the class's
//!   security groups, public-IP choice, prefixes, connection tracking, EFA interfaces or the
//!   class's `networkInterfaces` — as Karpenter's (`aws v1.14.1:
//!   pkg/providers/launchtemplate/launchtemplate.go` `generateNetworkInterfaces`).
//! - Capacity type: the solver's choice. A NodeClaim planned into capacity reservations
//!   (`reserved`) is launched as Karpenter's provider does (`aws v1.14.1:
//!   pkg/providers/instance/instance.go`, `launchtemplate/types.go`, `amifamily/resolver.go`):
//!   one launch template per reservation, targeting it (`capacity-reservations-only`; a
//!   capacity block or an interruptible ODCR also sets the template's market type), one
//!   override per (type, zone) with the reservation the solver chose there, and CreateFleet's
//!   `DefaultTargetCapacityType` of the reservations' kind (`on-demand` for an ODCR). The node
//!   is labelled `karpenter.sh/capacity-type=reserved` and with its reservation's id, type and
//!   interruptibility. A reserved pool answering insufficient capacity names its reservation
//!   ([`LaunchError::exhausted_reservations`]): the caller marks it unavailable and plans again
//!   (`updateUnavailableOfferingsCache` → `MarkUnavailable`).
//! - Tenancy: every template carries the NodeClaim's (`Placement.Tenancy`: `dedicated` when its
//!   `karpenter.k8s.aws/instance-tenancy` requirement admits dedicated but not default, `aws
//!   v1.14.1: pkg/providers/instance/instance.go` `getTenancyType`, `launchtemplate/types.go`
//!   `buildPlacement`); a dedicated template is named apart from the default one.
//! - Tags (§2.6, v1): class tags ∪ the static ones (static keys win), the NodeClaim's name and
//!   this tool's marker, all in the CreateFleet call; each template also tags its instances with
//!   a compact record of itself ([`labels::TEMPLATE_TAG`]) for drift, and its network interfaces
//!   (and a spot template its spot requests) with the launch tags but the NodeClaim's name.
//! - Idempotency: a deterministic ClientToken from (cluster, NodeClaim), and — because moto and
//!   Karpenter's own practice do not rely on it — a lookup of the NodeClaim's tag before
//!   CreateFleet and after a CreateFleet whose answer was lost: an instance found is adopted.
//! - Fleet errors are grouped per pool (type, zone, capacity type); the failed pools are removed
//!   and the rest retried; extra instances (never expected) are terminated. The pools that
//!   answered an unfulfillable-capacity code are unavailable to the run's later plans and launches
//!   for three minutes ([`UnavailableOfferings`], `aws v1.14.1: pkg/cache/unavailableofferings.go`).
//! - A capacity-block launch has one override: the cheapest available compatible block offering
//!   (`aws v1.14.1: pkg/providers/instance/filter/filter.go` `capacityBlockFilter`).

use std::collections::{BTreeMap, BTreeSet};

use crate::cloud::ami::ResolvedImage;
use crate::cloud::types::{
    is_permission_code, CloudError, Compute, ConnectionTracking, Filter, FleetAllocation,
    FleetOverride, FleetRequest, Instance, InstanceQuery, LaunchMode, LaunchTemplateRequest,
    Subnet, TargetedReservation, TemplateNetworkInterface, INSTANCE_BATCH,
};
use crate::cloud::userdata::{self, Bootstrap, Family, UserDataError};
pub use crate::model::digest::digest;
use crate::model::instance::Tenancy;
use crate::model::instance_type::RESERVED;
use crate::model::labels::{self, NODECLAIM};
use crate::model::nodepool::{
    ApiGeneration, BlockDevice, EbsVolume, MetadataOptions, NetworkInterface, NodeClass,
};
use crate::model::overhead::{AmiFamily, EFA};
use crate::model::quantity::GIB;
use crate::model::requirements::Operator;
use crate::model::reservation::{
    label_reserved, ReservationType, ReservedCapacity, RESERVATION_LABELS,
};
use crate::scheduling::PlannedNodeClaim;

mod fleet;
mod network;
mod subnets;
mod template;
#[cfg(test)]
mod tests;
mod unavailable;

pub use fleet::*;
pub use network::*;
pub use subnets::*;
pub use template::*;
pub use unavailable::*;

/// The resource whose request enables Nitro Enclaves on a template (`aws v1.14.1:
/// pkg/apis/v1/labels.go` `ResourceNIPSlots`).
pub const NIP_SLOTS: &str = "eks.amazonaws.com/nip-slots";

/// Karpenter's `maxInstanceTypes`: overrides per CreateFleet.
pub const MAX_OVERRIDES: usize = 60;
/// Its value.
pub const TOOL_NAME: &str = "kubectl-karpenter";

/// The cluster a node joins (from the kubeconfig).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterInfo {
    /// Cluster name.
    pub name: String,
    /// API server endpoint.
    pub endpoint: String,
    /// CA bundle, base64.
    pub ca_bundle: String,
    /// Service CIDR, when known.
    pub service_cidr: Option<String>,
    /// Cluster DNS IP, when known.
    pub cluster_dns: Option<String>,
}

/// The cluster's service CIDR, derived from its DNS Service's ClusterIP: EKS gives `kube-dns`
/// the tenth address of the service range (`10.100.0.10`, `172.20.0.10`, `<prefix>::a`). An
/// AL2023 node's `NodeConfig` must carry a CIDR — nodeadm refuses one without ("CIDR is missing
/// in cluster configuration") — and reads only its address (the IP family, and the DNS default
/// `.10` that the user data sets explicitly anyway). Karpenter asks EKS instead (`aws v1.14.1:
/// pkg/providers/launchtemplate/launchtemplate.go ResolveClusterCIDR`, `DescribeCluster`'s
/// `serviceIpv4Cidr`/`serviceIpv6Cidr`); this needs no EKS permission. The prefix is EKS's
/// default size (/16, IPv6 /108), /24 when the range does not start at a /16 boundary.
pub fn service_cidr_of_dns(dns: std::net::IpAddr) -> Option<String> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    match dns {
        IpAddr::V4(ip) => {
            let network = u32::from(ip).checked_sub(10)?;
            let prefix = if network & 0xffff == 0 { 16 } else { 24 };
            Some(format!("{}/{prefix}", Ipv4Addr::from(network)))
        }
        IpAddr::V6(ip) => {
            let network = u128::from(ip).checked_sub(10)?;
            Some(format!("{}/108", Ipv6Addr::from(network)))
        }
    }
}

/// What launch needs of an instance type beyond the solver's name and price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeFacts {
    /// Kubernetes architecture (`amd64`, `arm64`).
    pub architecture: String,
    /// ENI-limited max pods (used unless the class sets `kubelet.maxPods`).
    pub max_pods: i64,
    /// Its `vpc.amazonaws.com/efa` capacity (0: none).
    pub efa: i64,
}

/// Everything [`plan`] reads: the NodeClaim, its class resolved (images, subnets, groups).
#[derive(Debug, Clone)]
pub struct LaunchInput<'a> {
    /// The cluster.
    pub cluster: &'a ClusterInfo,
    /// The node class.
    pub class: &'a NodeClass,
    /// The NodeClaim (instance types cheapest first).
    pub claim: &'a PlannedNodeClaim,
    /// User-data family.
    pub family: Family,
    /// The class's images (`status.amis`, best first).
    pub images: &'a [ResolvedImage],
    /// The class's subnets.
    pub subnets: &'a [Subnet],
    /// The class's security groups.
    pub security_group_ids: &'a [String],
    /// Facts per instance type.
    pub types: &'a BTreeMap<String, TypeFacts>,
    /// The region (`us-iso*` regions get no IMDS IPv6 setting).
    pub region: &'a str,
    /// The templates' launch mode (the `ReservedCapacity` gate).
    pub launch_mode: LaunchMode,
}

/// One (type × zonal subnet) pool of a plan, in preference order.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// Instance type.
    pub instance_type: String,
    /// Zone.
    pub zone: String,
    /// Subnet.
    pub subnet_id: String,
    /// Index of its template in [`LaunchPlan::templates`].
    pub template: usize,
    /// USD/h.
    pub price: f64,
    /// The reservation a reserved pool launches into (its template targets it).
    pub reservation: Option<TargetedReservation>,
}

/// A launch, planned.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    /// NodeClaim name.
    pub nodeclaim: String,
    /// Cluster name.
    pub cluster: String,
    /// Deterministic ClientToken.
    pub client_token: String,
    /// `on-demand`, `spot` or `reserved` (the node's `karpenter.sh/capacity-type`).
    pub capacity_type: String,
    /// Templates, one per (AMI, max pods).
    pub templates: Vec<LaunchTemplateRequest>,
    /// Pools, cheapest first, at most [`MAX_OVERRIDES`].
    pub pools: Vec<Pool>,
    /// Tags of the fleet call (instance, volume, fleet).
    pub tags: BTreeMap<String, String>,
    /// The fleet's EC2 `Context` ([`fleet_context`]).
    pub context: Option<String>,
    /// The fleet's allocation strategy ([`fleet_allocation`]).
    pub allocation: FleetAllocation,
}

/// The class's `context` goes with the NodeClaim's CreateFleet, except when the scheduler relaxed
/// its `minValues` (`aws v1.14.1: pkg/providers/instance/instance.go` `launchInstance`;
/// cloudprovider/suite_test.go "EC2 Context").
pub fn fleet_context(class: &NodeClass, claim: &PlannedNodeClaim) -> Option<String> {
    let relaxed = claim
        .annotations
        .get(labels::NODECLAIM_MIN_VALUES_RELAXED)
        .is_some_and(|v| v == "true");
    class.context.clone().filter(|_| !relaxed)
}

/// Prioritized by the overrides' prices when a NodeOverlay priced one of the NodeClaim's options
/// (its `karpenter.sh/price-overlay-applied` annotation, `launchInstance` → `WithOverlay`).
pub fn fleet_allocation(claim: &PlannedNodeClaim) -> FleetAllocation {
    if claim
        .annotations
        .contains_key(crate::scheduling::PRICE_OVERLAY_APPLIED)
    {
        FleetAllocation::Priority
    } else {
        FleetAllocation::Price
    }
}

/// Why a launch could not be planned or did not produce an instance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaunchError {
    /// No (type × zonal subnet) pool has an image and a subnet.
    #[error("NodeClaim {0}: no compatible instance type has both an image for its architecture and a subnet in an allowed zone")]
    NoPools(String),
    /// User data.
    #[error(transparent)]
    UserData(#[from] UserDataError),
    /// Every pool failed.
    #[error("NodeClaim {nodeclaim}: no capacity: {}", summarize(errors))]
    InsufficientCapacity {
        /// NodeClaim.
        nodeclaim: String,
        /// Errors per pool.
        errors: Vec<PoolError>,
    },
    /// An AWS call failed.
    #[error(transparent)]
    Cloud(#[from] CloudError),
}

/// A CreateFleet error for one pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolError {
    /// Instance type.
    pub instance_type: String,
    /// Zone.
    pub zone: String,
    /// Subnet (empty for an error naming no pool).
    pub subnet_id: String,
    /// Capacity type.
    pub capacity_type: String,
    /// The reservation of a reserved pool.
    pub reservation: Option<String>,
    /// EC2 error code.
    pub code: String,
    /// Message.
    pub message: String,
}

/// The fleet error code of a subnet without a free address (`aws v1.14.1: pkg/errors/errors.go`
/// `InsufficientFreeAddressesInSubnetErrorCode`).
pub const SUBNET_FULL: &str = "InsufficientFreeAddressesInSubnet";

/// The fleet error codes that mean "no capacity now" (`aws v1.14.1: pkg/errors/errors.go`
/// `unfulfillableCapacityErrorCodes`).
pub const UNFULFILLABLE_CAPACITY_CODES: [&str; 8] = [
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
    "VcpuLimitExceeded",
    "UnfulfillableCapacity",
    "Unsupported",
    SUBNET_FULL,
    "MaxFleetCountExceeded",
    "ReservationCapacityExceeded",
];

impl LaunchError {
    /// Whether the identity lacks a permission: the call's, or every pool's (what CreateFleet
    /// authorizes on the caller's behalf: RunInstances, CreateTags, PassRole).
    pub fn is_permission(&self) -> bool {
        match self {
            LaunchError::Cloud(c) => c.is_permission(),
            LaunchError::InsufficientCapacity { errors, .. } => {
                !errors.is_empty() && errors.iter().all(|e| is_permission_code(&e.code))
            }
            _ => false,
        }
    }

    /// The pool errors of a launch that found no capacity (none for other errors).
    pub fn pool_errors(&self) -> &[PoolError] {
        match self {
            LaunchError::InsufficientCapacity { errors, .. } => errors,
            _ => &[],
        }
    }

    /// The reservations whose pools answered insufficient capacity: Karpenter marks them
    /// unavailable until it next reads them (`MarkUnavailable`), so the next plan falls back to
    /// other capacity.
    pub fn exhausted_reservations(&self) -> Vec<String> {
        let LaunchError::InsufficientCapacity { errors, .. } = self else {
            return Vec::new();
        };
        let mut ids: Vec<String> = errors
            .iter()
            .filter(|e| UNFULFILLABLE_CAPACITY_CODES.contains(&e.code.as_str()))
            .filter_map(|e| e.reservation.clone())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// The pools by error code; a missing permission shows its first message, which names the
/// action (the pools it hit are counted, not listed: they all fail alike).
fn summarize(errors: &[PoolError]) -> String {
    let mut by_code: BTreeMap<&str, Vec<&PoolError>> = BTreeMap::new();
    for e in errors {
        by_code.entry(&e.code).or_default().push(e);
    }
    if by_code.is_empty() {
        return "CreateFleet returned no instance and no error".into();
    }
    by_code
        .into_iter()
        .map(|(code, errors)| {
            if is_permission_code(code) {
                return format!("{code} ({} pools): {}", errors.len(), errors[0].message);
            }
            let pools: Vec<String> = errors
                .iter()
                .map(|e| format!("{}/{}/{}", e.instance_type, e.zone, e.capacity_type))
                .collect();
            format!("{code} [{}]", pools.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The ClientToken of a NodeClaim: the same (cluster, NodeClaim) always yields the same token
/// (≤ 64 ASCII characters, as EC2 requires).
pub fn client_token(cluster: &str, nodeclaim: &str) -> String {
    format!("kk-{}", digest(&["client-token", cluster, nodeclaim]))
}

/// The launch tags (docs/karpenter.md §2.6, v1): class tags, then the static keys over them.
pub fn tags(
    cluster: &str,
    class: &NodeClass,
    claim: &PlannedNodeClaim,
) -> BTreeMap<String, String> {
    let mut tags = class.tags.clone();
    let legacy = class.generation == Some(ApiGeneration::V1Alpha5);
    let pool_key = if legacy {
        labels::PROVISIONER_NAME
    } else {
        labels::NODEPOOL
    };
    let fixed = [
        (labels::cluster_tag(cluster), "owned".to_string()),
        (pool_key.to_string(), claim.node_pool.clone()),
        (
            labels::EC2NODECLASS.to_string(),
            claim
                .node_class
                .clone()
                .unwrap_or_else(|| class.name.clone()),
        ),
        (
            labels::EKS_CLUSTER_NAME_TAG.to_string(),
            cluster.to_string(),
        ),
        (labels::NODECLAIM.to_string(), claim.name.clone()),
        (labels::TOOL_TAG.to_string(), TOOL_NAME.to_string()),
    ];
    tags.extend(fixed);
    tags
}

/// [`tags`] plus the NodePool template record ([`labels::TEMPLATE_RECORD_TAG`], see
/// [`crate::drift::record`]): what a launch for
/// `pool` should carry so `drift check` can name the fields that changed.
pub fn tags_for_pool(
    cluster: &str,
    class: &NodeClass,
    claim: &PlannedNodeClaim,
    pool: &crate::model::nodepool::NodePool,
) -> BTreeMap<String, String> {
    let mut out = tags(cluster, class, claim);
    let (key, value) = crate::drift::record::record_tag(pool);
    out.insert(key, value);
    out
}

/// [`plan`], with the fleet tags of [`tags_for_pool`]: live provision and `drift replace` call
/// this so every instance they launch records its template.
pub fn plan_for_pool(
    input: &LaunchInput<'_>,
    pool: &crate::model::nodepool::NodePool,
) -> Result<LaunchPlan, LaunchError> {
    let with_kubelet = class_with_pool_kubelet(input.class, pool);
    let input = &LaunchInput {
        class: with_kubelet.as_ref().unwrap_or(input.class),
        ..*input
    };
    let mut planned = plan(input)?;
    planned.tags = tags_for_pool(&input.cluster.name, input.class, input.claim, pool);
    Ok(planned)
}

/// The class a launch for `pool` writes its kubelet settings from: a v1beta1 NodePool or a
/// v1alpha5 Provisioner carries them itself (`spec.template.spec.kubelet`,
/// `spec.kubeletConfiguration`), and Karpenter of those generations wrote the pool's into the
/// user data (`aws v0.37.0: pkg/providers/amifamily/resolver.go` `Resolve`: the NodeClaim's
/// `spec.kubelet`, copied from its pool). The planner sizes nodes from the same settings
/// (`usecases::provisioning::input` `kubelet_of`), so the launched kubelet's max pods and
/// reservations are the planned ones. `None`: the class's own (v1, or a pool without any).
fn class_with_pool_kubelet(
    class: &NodeClass,
    pool: &crate::model::nodepool::NodePool,
) -> Option<NodeClass> {
    if pool.generation == Some(ApiGeneration::V1) {
        return None;
    }
    let kubelet = pool.kubelet.as_ref()?;
    // v1beta1 keeps the pool's spec as read; a Provisioner's is rebuilt from what was read.
    let raw = pool
        .raw_spec
        .as_ref()
        .and_then(|s| s.pointer("/template/spec/kubelet"))
        .cloned()
        .unwrap_or_else(|| {
            let mut k = serde_json::Map::new();
            let mut put = |key: &str, v: serde_json::Value| {
                k.insert(key.to_string(), v);
            };
            if let Some(n) = kubelet.pods_per_core {
                put("podsPerCore", n.into());
            }
            for (key, list) in [
                ("systemReserved", &kubelet.system_reserved),
                ("kubeReserved", &kubelet.kube_reserved),
            ] {
                if !list.is_empty() {
                    put(key, serde_json::json!(list.to_strings()));
                }
            }
            for (key, map) in [
                ("evictionHard", &kubelet.eviction_hard),
                ("evictionSoft", &kubelet.eviction_soft),
            ] {
                if !map.is_empty() {
                    put(key, serde_json::json!(map));
                }
            }
            serde_json::Value::Object(k)
        });
    let mut with = class.clone();
    with.kubelet = Some(kubelet.clone());
    let spec = with
        .raw_spec
        .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("kubelet".into(), raw);
    }
    Some(with)
}

/// The capacity type of a launch (the node's `karpenter.sh/capacity-type`): `spot`, `reserved`
/// for a NodeClaim planned into reservations, else `on-demand`.
pub fn capacity_type(claim: &PlannedNodeClaim) -> &'static str {
    match claim.launch.capacity_type.as_str() {
        "spot" => "spot",
        RESERVED
            if claim
                .launch
                .offerings
                .iter()
                .any(|o| o.reservation.is_some()) =>
        {
            RESERVED
        }
        _ => "on-demand",
    }
}

fn targeted(c: &ReservedCapacity) -> TargetedReservation {
    TargetedReservation {
        id: c.id.clone(),
        reservation_type: c.reservation_type,
        interruptible: c.interruptible,
    }
}

/// The best image for an architecture: images are best first; a standard (non-accelerator)
/// variant — one without an `Exists` requirement — is preferred.
pub fn image_for<'a>(images: &'a [ResolvedImage], architecture: &str) -> Option<&'a ResolvedImage> {
    let candidates = images.iter().filter(|i| i.architecture == architecture);
    let standard = |i: &&ResolvedImage| {
        !i.requirements
            .iter()
            .any(|r| r.operator == Operator::Exists)
    };
    candidates
        .clone()
        .find(standard)
        .or_else(|| candidates.clone().next())
}

/// Plans a launch.
pub fn plan(input: &LaunchInput<'_>) -> Result<LaunchPlan, LaunchError> {
    let claim = input.claim;
    let class = input.class;
    let cluster = &input.cluster.name;
    let capacity = capacity_type(claim);
    let subnets = subnet_per_zone(input.subnets);

    // Instance-type labels (`karpenter.k8s.aws/instance-cpu`, …) describe the plan's cheapest
    // type; the fleet may launch another, so only those the NodeClaim pins to one value go into
    // the shared user data.
    let pinned = claim.requirements.single_value_labels();
    let mut labels: BTreeMap<String, String> = claim
        .labels
        .iter()
        .filter(|(k, _)| userdata::kubelet_may_set(k))
        .filter(|(k, _)| {
            // The zone id is the planned offering's zone's: like the zone, the fleet may launch
            // elsewhere unless the NodeClaim pins it.
            (!crate::model::labels::AWS_WELL_KNOWN.contains(&k.as_str())
                && *k != crate::model::labels::ZONE_ID)
                || pinned.contains_key(*k)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let legacy = class.generation == Some(ApiGeneration::V1Alpha5);
    labels.insert(
        if legacy {
            labels::PROVISIONER_NAME
        } else {
            labels::NODEPOOL
        }
        .to_string(),
        claim.node_pool.clone(),
    );
    labels.insert(labels::CAPACITY_TYPE.into(), capacity.to_string());
    // The kubelet registers the taints itself: the node says so, and Karpenter's registration
    // then leaves them alone (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go`
    // `InjectDoNotSyncTaintsLabel`, every family but Custom, v1.6+; `core v1.14.1:
    // pkg/controllers/nodeclaim/lifecycle/registration.go` `syncNode`).
    if class.generation == Some(ApiGeneration::V1) && input.family != Family::Custom {
        labels.insert(labels::DO_NOT_SYNC_TAINTS.into(), "true".into());
    }
    let mut taints = claim.taints.clone();
    for t in &claim.startup_taints {
        if !taints.contains(t) {
            taints.push(t.clone());
        }
    }

    let mut sgs = input.security_group_ids.to_vec();
    sgs.sort();
    sgs.dedup();
    let reserved = capacity == RESERVED;
    let mut templates: Vec<LaunchTemplateRequest> = Vec::new();
    let mut groups: BTreeMap<TemplateKey, usize> = BTreeMap::new();
    let mut pools = Vec::new();
    // Per (instance type, reservation), its template (None: no facts or no image for its
    // architecture).
    let mut template_of: BTreeMap<(&str, Option<&str>), Option<usize>> = BTreeMap::new();
    for (instance_type, zone, price, reservation) in claim.launch_pools() {
        if pools.len() == MAX_OVERRIDES {
            break;
        }
        // A reserved launch has only reserved offerings (one reservation per type and zone).
        if reserved != reservation.is_some() {
            continue;
        }
        let Some(subnet) = subnets.get(zone) else {
            continue;
        };
        let key = (instance_type, reservation.map(|c| c.id.as_str()));
        let reservation = reservation.map(targeted);
        let template = match template_of.get(&key) {
            Some(known) => *known,
            None => {
                let made = match input.types.get(instance_type) {
                    Some(facts) => template_for(
                        input,
                        facts,
                        reservation.as_ref(),
                        &labels,
                        &taints,
                        &sgs,
                        &mut templates,
                        &mut groups,
                    )?,
                    None => None,
                };
                template_of.insert(key, made);
                made
            }
        };
        let Some(template) = template else {
            continue;
        };
        pools.push(Pool {
            instance_type: instance_type.to_string(),
            zone: zone.to_string(),
            subnet_id: subnet.id.clone(),
            template,
            price,
            reservation,
        });
    }
    if pools.is_empty() {
        return Err(LaunchError::NoPools(claim.name.clone()));
    }
    // A capacity block is launched into alone: the one cheapest available, compatible
    // capacity-block offering of all the NodeClaim's types (`aws v1.14.1:
    // pkg/providers/instance/filter/filter.go` `capacityBlockFilter`; the offerings here are
    // the available compatible ones, cheapest first).
    if pools.first().is_some_and(|p| {
        p.reservation
            .as_ref()
            .is_some_and(|r| r.reservation_type == ReservationType::CapacityBlock)
    }) {
        pools.truncate(1);
    }
    // Templates no pool uses (cut by the cap) are not created.
    let used: BTreeSet<usize> = pools.iter().map(|p| p.template).collect();
    let mut remap = BTreeMap::new();
    let mut kept = Vec::new();
    for (i, t) in templates.into_iter().enumerate() {
        if used.contains(&i) {
            remap.insert(i, kept.len());
            kept.push(t);
        }
    }
    for p in &mut pools {
        p.template = remap[&p.template];
    }
    // A reserved launch has a token of its own: when its reservations are exhausted, the
    // NodeClaim planned again for the same pods (same name) launches on-demand or spot, which
    // EC2 must not take for a retry of this request (`IdempotentParameterMismatch`).
    let mut reserved_ids: Vec<&str> = pools
        .iter()
        .filter_map(|p| p.reservation.as_ref().map(|r| r.id.as_str()))
        .collect();
    reserved_ids.sort();
    reserved_ids.dedup();
    let token = if reserved_ids.is_empty() {
        client_token(cluster, &claim.name)
    } else {
        let mut parts = vec![
            "client-token",
            cluster.as_str(),
            claim.name.as_str(),
            RESERVED,
        ];
        parts.extend(reserved_ids);
        format!("kk-{}", digest(&parts))
    };
    Ok(LaunchPlan {
        nodeclaim: claim.name.clone(),
        cluster: cluster.clone(),
        client_token: token,
        capacity_type: capacity.to_string(),
        templates: kept,
        pools,
        tags: tags(cluster, class, claim),
        context: fleet_context(class, claim),
        allocation: fleet_allocation(claim),
    })
}
