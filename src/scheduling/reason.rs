//! Why a pod stays pending: a typed [`Reason`] with a stable [`ReasonCode`] for machines and a
//! message for people (its `Display`).
//!
//! Karpenter reports the same causes as event and log text (`scheduler.go` `Results.Record`,
//! `nodeclaim.go` `InstanceTypeFilterError`, `provisioner.go` `Validate`); the codes name them.

use std::fmt;

use crate::model::quantity::{format_milli, format_milli_readable};
use crate::model::requirements::Requirements;
use crate::model::resources::Resources;
use crate::model::taints::Taint;

/// The stable code of a [`Reason`], `reasonCode` in `provision -o json|yaml`.
///
/// | code | meaning |
/// | --- | --- |
/// | `Unsupported` | the pod uses something Karpenter cannot schedule (node affinity with `matchFields`, Dynamic Resource Allocation claims) |
/// | `OptsOutOfKarpenter` | the pod requires `karpenter.sh/nodepool DoesNotExist` |
/// | `SelectsSpecificNode` | the pod selects a node by `kubernetes.io/hostname` |
/// | `RestrictedLabel` | the pod requires a label Karpenter reserves for itself |
/// | `InvalidRequirement` | a node-affinity requirement is malformed (e.g. `In` without values) |
/// | `NoNodePool` | there is no NodePool to create a node from |
/// | `StaticNodePool` | the NodePool is static (`spec.replicas`) and not used for provisioning |
/// | `NodePoolNotReady` | the NodePool is not Ready (its own or its node class's status): nothing is launched for it |
/// | `AutoModeNodePool` | the NodePool uses an EKS Auto Mode `NodeClass` (`eks.amazonaws.com`): EKS provisions for it |
/// | `NodePoolNotManaged` | the NodePool's `nodeClassRef` names a group that is not the AWS provider's (`karpenter.k8s.aws`): Karpenter passes over it |
/// | `NodePoolHasNoInstanceTypes` | no instance type is compatible with the NodePool's requirements |
/// | `LimitReached` | the NodePool's `limits` leave no room for another node |
/// | `TaintNotTolerated` | the pod does not tolerate a taint of the NodePool |
/// | `HostPortConflict` | a host port the pod binds is already taken on the node |
/// | `TopologyUnsatisfiable` | a topology spread or pod (anti-)affinity cannot be satisfied |
/// | `IncompatibleRequirements` | the pod's node requirements conflict with the NodePool's |
/// | `NoInstanceTypeMatches` | no instance type has the labels the pod requires |
/// | `NoInstanceTypeFits` | no instance type has the resources the pod requests |
/// | `MinValuesUnmet` | the NodePool's `minValues` cannot be met by the instance types left |
/// | `NoOffering` | no available offering is left to launch the NodeClaim |
/// | `NoImage` | none of the instance types a launch would ask for runs an AMI of the node class (`status.amis`) |
/// | `VolumeNotFound` | a PersistentVolumeClaim of the pod, its PersistentVolume or its StorageClass does not exist |
/// | `VolumeNotReady` | a claim of the pod cannot be used yet (unbound with `Immediate` binding or without a class, being deleted, `Lost`, bind not completed) |
/// | `VolumeTopologyConflict` | the topology the pod's volumes allow (PV node affinity, StorageClass `allowedTopologies`) conflicts with the pod's or the NodePool's |
/// | `NoTopologyDomains` | a `DoNotSchedule` topology spread is on a key for which no domain is known |
/// | `ReservedCapacityHeld` | the capacity reservations the pod could use are all held by NodeClaims planned before it: Karpenter defers it to its next scheduling simulation (a later round falls back to on-demand/spot) |
///
/// A pod no NodePool can take gets the code of the first NodePool tried (the highest weight),
/// unless reserved capacity stopped the search (`ReservedCapacityHeld`, the last one tried);
/// the message lists every NodePool's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReasonCode {
    /// See the table above.
    Unsupported,
    /// See the table above.
    OptsOutOfKarpenter,
    /// See the table above.
    SelectsSpecificNode,
    /// See the table above.
    RestrictedLabel,
    /// See the table above.
    InvalidRequirement,
    /// See the table above.
    NoNodePool,
    /// See the table above.
    StaticNodePool,
    /// See the table above.
    NodePoolNotReady,
    /// See the table above.
    AutoModeNodePool,
    /// See the table above.
    NodePoolNotManaged,
    /// See the table above.
    NodePoolHasNoInstanceTypes,
    /// See the table above.
    LimitReached,
    /// See the table above.
    TaintNotTolerated,
    /// See the table above.
    HostPortConflict,
    /// See the table above.
    TopologyUnsatisfiable,
    /// See the table above.
    IncompatibleRequirements,
    /// See the table above.
    NoInstanceTypeMatches,
    /// See the table above.
    NoInstanceTypeFits,
    /// See the table above.
    MinValuesUnmet,
    /// See the table above.
    NoOffering,
    /// See the table above.
    NoImage,
    /// See the table above.
    VolumeNotFound,
    /// See the table above.
    VolumeNotReady,
    /// See the table above.
    VolumeTopologyConflict,
    /// See the table above.
    NoTopologyDomains,
    /// See the table above.
    ReservedCapacityHeld,
}

impl ReasonCode {
    /// The code as written in JSON/YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Unsupported => "Unsupported",
            ReasonCode::OptsOutOfKarpenter => "OptsOutOfKarpenter",
            ReasonCode::SelectsSpecificNode => "SelectsSpecificNode",
            ReasonCode::RestrictedLabel => "RestrictedLabel",
            ReasonCode::InvalidRequirement => "InvalidRequirement",
            ReasonCode::NoNodePool => "NoNodePool",
            ReasonCode::StaticNodePool => "StaticNodePool",
            ReasonCode::NodePoolNotReady => "NodePoolNotReady",
            ReasonCode::AutoModeNodePool => "AutoModeNodePool",
            ReasonCode::NodePoolNotManaged => "NodePoolNotManaged",
            ReasonCode::NodePoolHasNoInstanceTypes => "NodePoolHasNoInstanceTypes",
            ReasonCode::LimitReached => "LimitReached",
            ReasonCode::TaintNotTolerated => "TaintNotTolerated",
            ReasonCode::HostPortConflict => "HostPortConflict",
            ReasonCode::TopologyUnsatisfiable => "TopologyUnsatisfiable",
            ReasonCode::IncompatibleRequirements => "IncompatibleRequirements",
            ReasonCode::NoInstanceTypeMatches => "NoInstanceTypeMatches",
            ReasonCode::NoInstanceTypeFits => "NoInstanceTypeFits",
            ReasonCode::MinValuesUnmet => "MinValuesUnmet",
            ReasonCode::NoOffering => "NoOffering",
            ReasonCode::NoImage => "NoImage",
            ReasonCode::VolumeNotFound => "VolumeNotFound",
            ReasonCode::VolumeNotReady => "VolumeNotReady",
            ReasonCode::VolumeTopologyConflict => "VolumeTopologyConflict",
            ReasonCode::NoTopologyDomains => "NoTopologyDomains",
            ReasonCode::ReservedCapacityHeld => "ReservedCapacityHeld",
        }
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is wrong with a pod's claim (Karpenter's `ValidatePersistentVolumeClaims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VolumeProblem {
    /// The claim, its volume or its class does not exist.
    NotFound,
    /// The claim exists but cannot be used yet.
    NotReady,
}

/// Why a pod stays pending.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// Set by the manifest/API adapters: the pod uses something Karpenter cannot consider.
    Unsupported(String),
    /// The pod requires `key DoesNotExist` on the NodePool label.
    OptsOutOfKarpenter {
        /// The label key.
        key: String,
        /// The weight of the preferred node-affinity term that says so, when only a preference
        /// does (Karpenter reads the heaviest preference as required here).
        preferred_weight: Option<i32>,
    },
    /// The pod selects a node by hostname.
    SelectsSpecificNode {
        /// The label key.
        key: String,
    },
    /// The pod requires a label Karpenter reserves.
    RestrictedLabel {
        /// The label key.
        key: String,
        /// Why it is reserved.
        why: &'static str,
    },
    /// A node-affinity requirement is malformed (the validation message).
    InvalidRequirement(String),
    /// A volume of the pod cannot be resolved: Karpenter does not provision for the pod.
    Volume {
        /// The pod's volume name.
        volume: String,
        /// Its claim, `namespace/name`.
        claim: String,
        /// Missing, or not usable yet.
        problem: VolumeProblem,
        /// What exactly.
        why: String,
    },
    /// No existing node took the pod, and no NodePool could create a node for it.
    NoPlacement {
        /// How many existing nodes were tried.
        existing_nodes: usize,
        /// Each NodePool's refusal, in the order they were tried.
        refusals: Vec<PoolRefusal>,
    },
    /// The pod was packed on a NodeClaim that cannot be launched.
    NotLaunchable(PoolRefusal),
}

impl Reason {
    /// The stable code.
    pub fn code(&self) -> ReasonCode {
        match self {
            Reason::Unsupported(_) => ReasonCode::Unsupported,
            Reason::OptsOutOfKarpenter { .. } => ReasonCode::OptsOutOfKarpenter,
            Reason::SelectsSpecificNode { .. } => ReasonCode::SelectsSpecificNode,
            Reason::RestrictedLabel { .. } => ReasonCode::RestrictedLabel,
            Reason::InvalidRequirement(_) => ReasonCode::InvalidRequirement,
            Reason::Volume { problem, .. } => match problem {
                VolumeProblem::NotFound => ReasonCode::VolumeNotFound,
                VolumeProblem::NotReady => ReasonCode::VolumeNotReady,
            },
            Reason::NoPlacement { .. } if self.is_reserved_deferral() => {
                ReasonCode::ReservedCapacityHeld
            }
            Reason::NoPlacement { refusals, .. } => refusals
                .first()
                .map_or(ReasonCode::NoNodePool, |r| r.cause.code()),
            Reason::NotLaunchable(refusal) => refusal.cause.code(),
        }
    }

    /// Whether reserved capacity stopped the search (Karpenter's `ReservedOfferingError`): the
    /// pod waits for the next simulation instead of being unschedulable.
    pub fn is_reserved_deferral(&self) -> bool {
        matches!(self, Reason::NoPlacement { refusals, .. }
            if refusals.last().is_some_and(|r| r.cause.is_reserved()))
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Unsupported(why) => f.write_str(why),
            Reason::OptsOutOfKarpenter {
                key,
                preferred_weight: None,
            } => {
                write!(f, "opts out of Karpenter nodes ({key} DoesNotExist)")
            }
            Reason::OptsOutOfKarpenter {
                key,
                preferred_weight: Some(weight),
            } => write!(
                f,
                "opts out of Karpenter nodes ({key} DoesNotExist in its heaviest preferred node \
                 affinity term, weight {weight}: Karpenter reads that preference as required and \
                 ignores the pod)"
            ),
            Reason::SelectsSpecificNode { key } => write!(
                f,
                "selects a specific node by {key}, which Karpenter cannot create"
            ),
            Reason::RestrictedLabel { key, why } => write!(f, "label {key} is restricted: {why}"),
            Reason::InvalidRequirement(why) => f.write_str(why),
            Reason::Volume { volume, why, .. } => write!(
                f,
                "volume {volume}: {why}; Karpenter does not provision for the pod until that changes"
            ),
            Reason::NoPlacement {
                existing_nodes,
                refusals,
            } => {
                let mut parts = Vec::with_capacity(refusals.len() + 1);
                if *existing_nodes > 0 {
                    parts.push(format!(
                        "does not fit any of {existing_nodes} existing nodes"
                    ));
                }
                if refusals.is_empty() {
                    parts.push("no NodePool to create a node from".to_string());
                }
                parts.extend(refusals.iter().map(PoolRefusal::to_string));
                f.write_str(&parts.join("; "))
            }
            Reason::NotLaunchable(refusal) => refusal.fmt(f),
        }
    }
}

/// Why one NodePool (or Provisioner) cannot take a pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRefusal {
    /// `NodePool` or `Provisioner`.
    pub kind: &'static str,
    /// Its name.
    pub pool: String,
    /// Why.
    pub cause: PoolCause,
}

impl fmt::Display for PoolRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name, cause) = (self.kind, &self.pool, &self.cause);
        match cause {
            // A pool unusable as a whole is the subject of the sentence (always a NodePool).
            PoolCause::Static
            | PoolCause::AutoMode { .. }
            | PoolCause::NotManaged { .. }
            | PoolCause::NotReady(_)
            | PoolCause::NoInstanceTypes { .. } => {
                write!(f, "NodePool {name} {cause}")
            }
            _ => write!(f, "{kind} {name}: {cause}"),
        }
    }
}

/// What stops a NodePool from taking a pod.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolCause {
    /// Static pool (`spec.replicas`).
    Static,
    /// The pool is not Ready (why, as the readiness controller says it): kept for its nodes,
    /// which stay disruption candidates, but nothing is launched for it.
    NotReady(String),
    /// The pool's node class is an EKS Auto Mode `NodeClass` (`eks.amazonaws.com`): EKS runs the
    /// Karpenter that provisions for it, not the user, so this tool neither plans nor launches it.
    AutoMode {
        /// The node class's name.
        class: String,
    },
    /// The pool's `nodeClassRef` names a group that is neither the AWS provider's
    /// (`karpenter.k8s.aws`) nor EKS Auto Mode's: Karpenter passes over the pool (core v1.14.1
    /// `nodepool.go` `IsManaged`).
    NotManaged {
        /// The ref's group, kind and name as written.
        group: String,
        /// Its kind.
        kind: String,
        /// Its name.
        class: String,
    },
    /// No instance type is compatible with the pool's requirements.
    NoInstanceTypes {
        /// The pool's requirements.
        requirements: Requirements,
        /// When the pool's zone requirement is the cause: the zones its instance types are
        /// offered in (the node class's subnets' zones), none of which it allows. Empty otherwise.
        offered_zones: Vec<String>,
    },
    /// Every instance type would exceed the pool's remaining limits; the limits the smallest
    /// type no longer fits (empty when only the combination is exceeded).
    LimitReached(Vec<ExhaustedLimit>),
    /// A taint of the pool is not tolerated.
    TaintNotTolerated(Taint),
    /// A host port is already bound on the node.
    HostPortConflict(i32),
    /// A topology group refuses the placement (its description).
    Topology(String),
    /// A topology domain the pod needs is not one the pool can provide.
    TopologyDomainUnavailable,
    /// A `DoNotSchedule` spread on a key no NodePool, instance type or node has a value for
    /// (the group's description).
    TopologyNoDomains(String),
    /// The topology the pod's volumes allow cannot be met by this pool (what conflicts).
    VolumeTopology(String),
    /// The pod's requirements conflict with the pool's (the conflict).
    IncompatibleRequirements(String),
    /// No instance type satisfies the pod's requirements.
    NoInstanceTypeMatches {
        /// The pod's requirements.
        requirements: Requirements,
    },
    /// Each request fits some instance type, but no single type fits them all.
    NoSingleInstanceTypeFits {
        /// The pod's requests.
        requests: Resources,
    },
    /// Requests larger than any compatible instance type offers.
    RequestsExceedInstanceTypes {
        /// Whether the pool's remaining limits are what rules out larger types.
        within_limits: bool,
        /// The resources short.
        shortfalls: Vec<Shortfall>,
    },
    /// `minValues` of a key cannot be met by the instance types left (`key (needs n, m left)`).
    MinValues(String),
    /// `minValues` cannot be met once the options are truncated to the cheapest.
    MinValuesAfterTruncation {
        /// `key (needs n, m left)`.
        key: String,
        /// How many types were kept.
        kept: usize,
    },
    /// The NodeClaim CRD would refuse the NodeClaim: an `In` requirement (as written, e.g.
    /// `topology.kubernetes.io/zone In [us-east-1b] minValues 2`) has fewer values than its
    /// `minValues`.
    NodeClaimRefused(String),
    /// No available offering is left to launch.
    NoOffering,
    /// None of the types a launch would ask for runs an AMI of the node class (the AMI ids).
    NoImage(Vec<String>),
    /// The capacity reservations the pod could use (their ids) are all held by NodeClaims
    /// planned before it.
    ReservedCapacityHeld(Vec<String>),
    /// Adding the pod would leave a NodeClaim none of the reservations it holds (their ids).
    ReservedCapacityLost(Vec<String>),
}

impl PoolCause {
    /// The stable code.
    pub fn code(&self) -> ReasonCode {
        match self {
            PoolCause::Static => ReasonCode::StaticNodePool,
            PoolCause::NotReady(_) => ReasonCode::NodePoolNotReady,
            PoolCause::AutoMode { .. } => ReasonCode::AutoModeNodePool,
            PoolCause::NotManaged { .. } => ReasonCode::NodePoolNotManaged,
            PoolCause::NoInstanceTypes { .. } => ReasonCode::NodePoolHasNoInstanceTypes,
            PoolCause::LimitReached(_) => ReasonCode::LimitReached,
            PoolCause::TaintNotTolerated(_) => ReasonCode::TaintNotTolerated,
            PoolCause::HostPortConflict(_) => ReasonCode::HostPortConflict,
            PoolCause::Topology(_) | PoolCause::TopologyDomainUnavailable => {
                ReasonCode::TopologyUnsatisfiable
            }
            PoolCause::TopologyNoDomains(_) => ReasonCode::NoTopologyDomains,
            PoolCause::VolumeTopology(_) => ReasonCode::VolumeTopologyConflict,
            PoolCause::IncompatibleRequirements(_) => ReasonCode::IncompatibleRequirements,
            PoolCause::NoInstanceTypeMatches { .. } => ReasonCode::NoInstanceTypeMatches,
            PoolCause::NoSingleInstanceTypeFits { .. }
            | PoolCause::RequestsExceedInstanceTypes { .. } => ReasonCode::NoInstanceTypeFits,
            PoolCause::MinValues(_)
            | PoolCause::MinValuesAfterTruncation { .. }
            | PoolCause::NodeClaimRefused(_) => ReasonCode::MinValuesUnmet,
            PoolCause::NoOffering => ReasonCode::NoOffering,
            PoolCause::NoImage(_) => ReasonCode::NoImage,
            PoolCause::ReservedCapacityHeld(_) | PoolCause::ReservedCapacityLost(_) => {
                ReasonCode::ReservedCapacityHeld
            }
        }
    }

    /// A refusal for reserved capacity (strict mode).
    pub fn is_reserved(&self) -> bool {
        matches!(
            self,
            PoolCause::ReservedCapacityHeld(_) | PoolCause::ReservedCapacityLost(_)
        )
    }
}

impl fmt::Display for PoolCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolCause::Static => {
                f.write_str("is static (spec.replicas) and not used for provisioning")
            }
            PoolCause::NotReady(why) => write!(f, "is not Ready ({why}): nothing is launched for it"),
            PoolCause::AutoMode { class } => write!(
                f,
                "uses EKS Auto Mode NodeClass {class:?} (eks.amazonaws.com): Auto Mode is managed by EKS, which provisions its nodes itself"
            ),
            PoolCause::NotManaged { group, kind, class } => write!(
                f,
                "names node class {kind} {class:?} of group {group:?}, not the AWS provider's (karpenter.k8s.aws): Karpenter passes over it"
            ),
            PoolCause::NoInstanceTypes {
                requirements,
                offered_zones,
            } => {
                write!(
                    f,
                    "has no instance type compatible with its requirements ({})",
                    describe_requirements(requirements)
                )?;
                if !offered_zones.is_empty() {
                    write!(
                        f,
                        ": its instance types are offered only in zones [{}] (its node class's subnets), none of which it allows",
                        offered_zones.join(" ")
                    )?;
                }
                Ok(())
            }
            PoolCause::LimitReached(limits) if limits.is_empty() => {
                f.write_str("every instance type exceeds the remaining limits")
            }
            PoolCause::LimitReached(limits) => {
                let parts: Vec<String> = limits.iter().map(ExhaustedLimit::to_string).collect();
                f.write_str(&parts.join(", "))
            }
            PoolCause::TaintNotTolerated(t) => write!(f, "taint {t} not tolerated"),
            PoolCause::HostPortConflict(port) => write!(f, "host port {port} already in use"),
            PoolCause::Topology(group) => f.write_str(group),
            PoolCause::TopologyDomainUnavailable => {
                f.write_str("topology domain not available to this NodePool")
            }
            PoolCause::TopologyNoDomains(group) => write!(
                f,
                "{group} cannot be satisfied: no NodePool, instance type or node has a value for its key"
            ),
            PoolCause::VolumeTopology(what) => write!(f, "volume topology: {what}"),
            PoolCause::IncompatibleRequirements(conflict) => {
                write!(f, "incompatible requirements: {conflict}")
            }
            PoolCause::NoInstanceTypeMatches { requirements } => write!(
                f,
                "no instance type satisfies the pod's requirements ({})",
                describe_requirements(requirements)
            ),
            PoolCause::NoSingleInstanceTypeFits { requests } => {
                write!(f, "no single instance type fits requests {requests}")
            }
            PoolCause::RequestsExceedInstanceTypes {
                within_limits,
                shortfalls,
            } => {
                let limited = if *within_limits {
                    " within its remaining limits"
                } else {
                    ""
                };
                let parts: Vec<String> = shortfalls.iter().map(Shortfall::to_string).collect();
                write!(f, "no instance type{limited} has {}", parts.join(", "))
            }
            PoolCause::MinValues(key) => {
                write!(
                    f,
                    "minValues for {key} cannot be met by the instance types left"
                )
            }
            PoolCause::MinValuesAfterTruncation { key, kept } => write!(
                f,
                "minValues for {key} cannot be met by the {kept} cheapest instance types"
            ),
            PoolCause::NodeClaimRefused(requirement) => write!(
                f,
                "the NodeClaim would be refused by the API server: {requirement} has fewer \
                 values than its minValues (\"requirements with 'minValues' must have at least \
                 that many values specified in the 'values' field\")"
            ),
            PoolCause::NoOffering => f.write_str("no offering left to launch"),
            PoolCause::NoImage(ids) => write!(
                f,
                "no instance type a launch would ask for runs the node class's AMIs ({}): \
                 the launch fails (\"no instance types satisfy requirements of amis\")",
                ids.join(", ")
            ),
            PoolCause::ReservedCapacityHeld(ids) => write!(
                f,
                "capacity reservation{} {} {} held by the NodeClaims planned before it; \
                 Karpenter defers the pod to its next scheduling simulation",
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", "),
                if ids.len() == 1 { "is" } else { "are all" },
            ),
            PoolCause::ReservedCapacityLost(ids) => write!(
                f,
                "the pod would leave the NodeClaim none of its capacity reservations ({})",
                ids.join(", ")
            ),
        }
    }
}

/// A limit the smallest instance type no longer fits under (milli-units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExhaustedLimit {
    /// The limited resource (`cpu`, `memory`, `nodes`, …).
    pub resource: String,
    /// The limit.
    pub limit: i64,
    /// What is left of it.
    pub left: i64,
    /// What the smallest instance type has of it.
    pub smallest: i64,
}

impl fmt::Display for ExhaustedLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = &self.resource;
        write!(
            f,
            "limit {key}={} reached ({key}={} left; the smallest instance type has {key}={})",
            format_milli(key, self.limit),
            format_milli(key, self.left.max(0)),
            format_milli(key, self.smallest)
        )
    }
}

/// A resource a pod requests more of than the largest compatible instance type has (milli-units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// The resource.
    pub resource: String,
    /// What the pod requests.
    pub requested: i64,
    /// The largest allocatable (after overhead) among the compatible types.
    pub largest: i64,
    /// The most the pool's DaemonSets request of it on one of those types (0: none): core v1.14.1
    /// `scheduler.go` `buildDaemonOverheadGroups`, added to the pod's requests in `nodeclaim.go`
    /// `filterInstanceTypesByRequirements`. aws#6507 asked why a GPU pod did not fit a
    /// p5.48xlarge when a DaemonSet requested its GPUs (the thread's release printed
    /// `daemonset overhead=`; v1.14.1's error no longer does).
    pub daemon_overhead: i64,
    /// Where the largest figure comes from, when the type reserves some of the resource: users
    /// asked "where is my ~9Gi?" (aws#3872, core#1212, core#1088, aws#5676: a pod that fits the
    /// type's advertised memory but not Karpenter's estimate of its allocatable, aws v1.14.1
    /// `pkg/providers/instancetype/types.go` `memory`, `kubeReservedResources`,
    /// `evictionThreshold`; core `pkg/cloudprovider/types.go` `computeAllocatable`).
    pub largest_on: Option<LargestType>,
}

/// The instance type with the largest allocatable of a resource, and how its capacity is
/// reduced to it (milli-units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargestType {
    /// Instance type.
    pub name: String,
    /// Its capacity of the resource (for memory, after the provider's VM overhead).
    pub capacity: i64,
    /// The type's advertised size of the resource when larger than its capacity (memory:
    /// `karpenter.k8s.aws/instance-memory`, which loses `VM_MEMORY_OVERHEAD_PERCENT`).
    pub advertised: Option<i64>,
    /// kube-reserved.
    pub kube_reserved: i64,
    /// system-reserved.
    pub system_reserved: i64,
    /// The hard eviction threshold.
    pub eviction: i64,
}

impl LargestType {
    /// `on c4.4xlarge: capacity 28416Mi (30Gi less 7.5% for the VM) less kube-reserved 2829Mi
    /// and eviction threshold 100Mi`.
    fn describe(&self, r: &str) -> String {
        let q = |v| format_milli_readable(r, v);
        let mut out = format!("on {}: capacity {}", self.name, q(self.capacity));
        if let Some(adv) = self.advertised.filter(|&a| a > self.capacity) {
            // One decimal, as VM_MEMORY_OVERHEAD_PERCENT is written (0.075).
            let tenths = ((adv - self.capacity) as f64 * 1000.0 / adv as f64).round() as i64;
            out.push_str(&format!(
                " ({} less {}.{}% for the VM)",
                q(adv),
                tenths / 10,
                tenths % 10
            ));
        }
        let parts: Vec<String> = [
            ("kube-reserved", self.kube_reserved),
            ("system-reserved", self.system_reserved),
            ("eviction threshold", self.eviction),
        ]
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(what, v)| format!("{what} {}", q(*v)))
        .collect();
        if let Some((last, rest)) = parts.split_last() {
            out.push_str(" less ");
            if !rest.is_empty() {
                out.push_str(&rest.join(", "));
                out.push_str(" and ");
            }
            out.push_str(last);
        }
        out
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.resource;
        write!(
            f,
            "{r} {} (largest available after overhead: {}",
            format_milli_readable(r, self.requested),
            format_milli_readable(r, self.largest)
        )?;
        if let Some(on) = &self.largest_on {
            write!(f, ", {}", on.describe(r))?;
        }
        if self.daemon_overhead > 0 {
            write!(
                f,
                "; the NodePool's DaemonSets request {} of it",
                format_milli_readable(r, self.daemon_overhead)
            )?;
        }
        f.write_str(")")
    }
}

/// Requirements as text, `none` when empty.
pub(super) fn describe_requirements(reqs: &Requirements) -> String {
    if reqs.is_empty() {
        "none".to_string()
    } else {
        reqs.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::quantity::GIB;
    use crate::model::requirements::Requirement;
    use crate::model::taints::Effect;

    fn refusal(kind: &'static str, cause: PoolCause) -> PoolRefusal {
        PoolRefusal {
            kind,
            pool: "default".into(),
            cause,
        }
    }

    /// Every message, word for word as the solver wrote it before reasons were typed, and its
    /// code.
    #[test]
    fn messages_and_codes() {
        let mut reqs = Requirements::new();
        reqs.add(Requirement::single("team", "a"));
        let cpu = |requested, largest| Shortfall {
            resource: "cpu".into(),
            requested,
            largest,
            daemon_overhead: 0,
            largest_on: None,
        };
        let cases: Vec<(Reason, ReasonCode, &str)> = vec![
            (
                Reason::Unsupported("uses matchFields".into()),
                ReasonCode::Unsupported,
                "uses matchFields",
            ),
            (
                Reason::OptsOutOfKarpenter {
                    key: "karpenter.sh/nodepool".into(),
                    preferred_weight: None,
                },
                ReasonCode::OptsOutOfKarpenter,
                "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist)",
            ),
            (
                Reason::OptsOutOfKarpenter {
                    key: "karpenter.sh/nodepool".into(),
                    preferred_weight: Some(100),
                },
                ReasonCode::OptsOutOfKarpenter,
                "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist in its heaviest \
                 preferred node affinity term, weight 100: Karpenter reads that preference as \
                 required and ignores the pod)",
            ),
            (
                Reason::SelectsSpecificNode {
                    key: "kubernetes.io/hostname".into(),
                },
                ReasonCode::SelectsSpecificNode,
                "selects a specific node by kubernetes.io/hostname, which Karpenter cannot create",
            ),
            (
                Reason::RestrictedLabel {
                    key: "karpenter.sh/x".into(),
                    why: "reserved",
                },
                ReasonCode::RestrictedLabel,
                "label karpenter.sh/x is restricted: reserved",
            ),
            (
                Reason::InvalidRequirement("requirement a: bad".into()),
                ReasonCode::InvalidRequirement,
                "requirement a: bad",
            ),
            (
                Reason::NoPlacement {
                    existing_nodes: 0,
                    refusals: vec![],
                },
                ReasonCode::NoNodePool,
                "no NodePool to create a node from",
            ),
            (
                Reason::NoPlacement {
                    existing_nodes: 3,
                    refusals: vec![],
                },
                ReasonCode::NoNodePool,
                "does not fit any of 3 existing nodes; no NodePool to create a node from",
            ),
            (
                Reason::NoPlacement {
                    existing_nodes: 2,
                    refusals: vec![
                        refusal("NodePool", PoolCause::Static),
                        refusal(
                            "Provisioner",
                            PoolCause::TaintNotTolerated(Taint::new("gpu", "", Effect::NoSchedule)),
                        ),
                    ],
                },
                ReasonCode::StaticNodePool,
                "does not fit any of 2 existing nodes; NodePool default is static (spec.replicas) \
                 and not used for provisioning; Provisioner default: taint gpu:NoSchedule not tolerated",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NotReady("Ready=False, NodeClassNotReady: no subnets".into()),
                )),
                ReasonCode::NodePoolNotReady,
                "NodePool default is not Ready (Ready=False, NodeClassNotReady: no subnets): nothing is launched for it",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NoInstanceTypes {
                        requirements: Requirements::new(),
                        offered_zones: vec![],
                    },
                )),
                ReasonCode::NodePoolHasNoInstanceTypes,
                "NodePool default has no instance type compatible with its requirements (none)",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NoInstanceTypes {
                        requirements: Requirements::new(),
                        offered_zones: vec!["us-east-1a".into(), "us-east-1c".into()],
                    },
                )),
                ReasonCode::NodePoolHasNoInstanceTypes,
                "NodePool default has no instance type compatible with its requirements (none): its instance types are offered only in zones [us-east-1a us-east-1c] (its node class's subnets), none of which it allows",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::LimitReached(vec![
                        ExhaustedLimit {
                            resource: "cpu".into(),
                            limit: 10_000,
                            left: -500,
                            smallest: 2000,
                        },
                        ExhaustedLimit {
                            resource: "memory".into(),
                            limit: GIB,
                            left: 0,
                            smallest: GIB,
                        },
                    ]),
                )),
                ReasonCode::LimitReached,
                "NodePool default: limit cpu=10 reached (cpu=0 left; the smallest instance type \
                 has cpu=2), limit memory=1Gi reached (memory=0 left; the smallest instance type \
                 has memory=1Gi)",
            ),
            (
                Reason::NotLaunchable(refusal("NodePool", PoolCause::LimitReached(vec![]))),
                ReasonCode::LimitReached,
                "NodePool default: every instance type exceeds the remaining limits",
            ),
            (
                Reason::NotLaunchable(refusal("NodePool", PoolCause::HostPortConflict(9100))),
                ReasonCode::HostPortConflict,
                "NodePool default: host port 9100 already in use",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::Topology("pod anti-affinity cannot be satisfied".into()),
                )),
                ReasonCode::TopologyUnsatisfiable,
                "NodePool default: pod anti-affinity cannot be satisfied",
            ),
            (
                Reason::NotLaunchable(refusal("NodePool", PoolCause::TopologyDomainUnavailable)),
                ReasonCode::TopologyUnsatisfiable,
                "NodePool default: topology domain not available to this NodePool",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::IncompatibleRequirements("team In [b] conflicts".into()),
                )),
                ReasonCode::IncompatibleRequirements,
                "NodePool default: incompatible requirements: team In [b] conflicts",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NoInstanceTypeMatches {
                        requirements: reqs.clone(),
                    },
                )),
                ReasonCode::NoInstanceTypeMatches,
                "NodePool default: no instance type satisfies the pod's requirements (team In [a])",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NoSingleInstanceTypeFits {
                        requests: Resources::from_pairs(&[("cpu", "2"), ("memory", "1Gi")]),
                    },
                )),
                ReasonCode::NoInstanceTypeFits,
                "NodePool default: no single instance type fits requests cpu=2,memory=1Gi",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::RequestsExceedInstanceTypes {
                        within_limits: true,
                        shortfalls: vec![cpu(96_000, 7900), cpu(1, 0)],
                    },
                )),
                ReasonCode::NoInstanceTypeFits,
                "NodePool default: no instance type within its remaining limits has cpu 96 \
                 (largest available after overhead: 7900m), cpu 1m (largest available after \
                 overhead: 0)",
            ),
            // aws#6507: a DaemonSet takes the GPUs the pod asks for.
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::RequestsExceedInstanceTypes {
                        within_limits: false,
                        shortfalls: vec![Shortfall {
                            resource: "nvidia.com/gpu".into(),
                            requested: 8000,
                            largest: 0,
                            daemon_overhead: 8000,
                            largest_on: None,
                        }],
                    },
                )),
                ReasonCode::NoInstanceTypeFits,
                "NodePool default: no instance type has nvidia.com/gpu 8 (largest available \
                 after overhead: 0; the NodePool's DaemonSets request 8 of it)",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::MinValues("instance-type (needs 3, 1 left)".into()),
                )),
                ReasonCode::MinValuesUnmet,
                "NodePool default: minValues for instance-type (needs 3, 1 left) cannot be met \
                 by the instance types left",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "Provisioner",
                    PoolCause::MinValuesAfterTruncation {
                        key: "instance-type (needs 3, 1 left)".into(),
                        kept: 1,
                    },
                )),
                ReasonCode::MinValuesUnmet,
                "Provisioner default: minValues for instance-type (needs 3, 1 left) cannot be \
                 met by the 1 cheapest instance types",
            ),
            (
                Reason::NotLaunchable(refusal(
                    "NodePool",
                    PoolCause::NodeClaimRefused(
                        "topology.kubernetes.io/zone In [us-east-1b] minValues 2".into(),
                    ),
                )),
                ReasonCode::MinValuesUnmet,
                "NodePool default: the NodeClaim would be refused by the API server: \
                 topology.kubernetes.io/zone In [us-east-1b] minValues 2 has fewer values than \
                 its minValues (\"requirements with 'minValues' must have at least that many \
                 values specified in the 'values' field\")",
            ),
            (
                Reason::NotLaunchable(refusal("NodePool", PoolCause::NoOffering)),
                ReasonCode::NoOffering,
                "NodePool default: no offering left to launch",
            ),
        ];
        for (reason, code, text) in cases {
            assert_eq!(reason.to_string(), text);
            assert_eq!(reason.code(), code, "{text}");
        }
    }
}
