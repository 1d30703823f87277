//! The slim pod the core works on: only what scheduling, drift and draining read.
//!
//! Adapters (manifests, the Kubernetes API) build these at the edge, so a 150k-pod cluster is
//! held as a few hundred bytes per pod rather than full API objects, and the replicas of one
//! workload share everything but their names.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::requirements::NodeSelectorRequirement;
use super::resources::Resources;
use super::selector::LabelSelector;
use super::taints::Toleration;

/// A required node-affinity term: its requirements are ANDed; terms are ORed.
pub type NodeSelectorTerm = Vec<NodeSelectorRequirement>;

/// `whenUnsatisfiable` of a topology spread constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WhenUnsatisfiable {
    /// Hard constraint.
    DoNotSchedule,
    /// Soft constraint: Karpenter treats it as hard until relaxed.
    ScheduleAnyway,
}

/// A topology spread constraint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopologySpread {
    /// Maximum allowed difference between domain counts.
    pub max_skew: i32,
    /// The label whose values are the domains.
    pub topology_key: String,
    /// Hard or soft.
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// Pods counted (absent selects nothing, as in Kubernetes).
    pub label_selector: Option<LabelSelector>,
    /// Minimum number of domains before the global minimum counts as 0.
    pub min_domains: Option<i32>,
    /// `matchLabelKeys`: pod label keys whose values are ANDed into the selector.
    pub match_label_keys: Vec<String>,
    /// `nodeTaintsPolicy: Honor`: only count nodes whose taints the pod tolerates.
    pub honor_taints: bool,
    /// `nodeAffinityPolicy: Ignore` (default Honor): count nodes regardless of node affinity.
    pub ignore_node_affinity: bool,
}

/// A pod (anti-)affinity term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodAffinityTerm {
    /// Selects the pods this term is about.
    pub label_selector: Option<LabelSelector>,
    /// Namespaces the selector applies to (empty with no namespace selector = the pod's own).
    pub namespaces: Vec<String>,
    /// Namespaces by label (`Some(empty)` = all namespaces).
    pub namespace_selector: Option<LabelSelector>,
    /// The topology domain (`kubernetes.io/hostname`, `topology.kubernetes.io/zone`, …).
    pub topology_key: String,
}

/// A weighted preference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Weighted<T> {
    /// 1–100.
    pub weight: i32,
    /// The preferred term.
    pub term: T,
}

/// A host port a container binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPort {
    /// Host IP (`0.0.0.0` when unset).
    pub ip: String,
    /// Port number.
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
}

impl HostPort {
    /// Whether two bindings collide (Karpenter's `HostPort.Matches`, `core v1.14.1:
    /// pkg/scheduling/hostportusage.go`): same port and protocol, and the same address or either
    /// unspecified (`0.0.0.0` or `::`). Addresses compare as Go's `net.IP.Equal`: an
    /// IPv4-mapped IPv6 address is its IPv4 address; text that is no address is Go's nil `IP`,
    /// equal to any other such text.
    pub fn conflicts(&self, other: &HostPort) -> bool {
        if self.port != other.port || self.protocol != other.protocol {
            return false;
        }
        match (parse_ip(&self.ip), parse_ip(&other.ip)) {
            (Some(a), Some(b)) => a == b || a.is_unspecified() || b.is_unspecified(),
            (Some(a), None) => a.is_unspecified(),
            (None, Some(b)) => b.is_unspecified(),
            // Go's `net.IP.Equal` of two nil addresses.
            (None, None) => true,
        }
    }
}

/// An address as Go's `net.ParseIP` reads it, IPv4-mapped IPv6 folded to IPv4.
fn parse_ip(text: &str) -> Option<std::net::IpAddr> {
    let ip: std::net::IpAddr = text.parse().ok()?;
    Some(ip.to_canonical())
}

/// Karpenter's `HostPort.String()`: `IP=10.0.0.0 Port=4443 Proto=TCP`.
impl std::fmt::Display for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "IP={} Port={} Proto={}",
            self.ip, self.port, self.protocol
        )
    }
}

/// Where the claim behind a pod volume comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ClaimSource {
    /// `persistentVolumeClaim.claimName`.
    Named(String),
    /// A generic ephemeral volume (`ephemeral.volumeClaimTemplate`): the claim is
    /// `<pod>-<volume>`, created from the template by the ephemeral-volume controller.
    Ephemeral {
        /// The template's `storageClassName` (`None` when absent).
        storage_class: Option<String>,
    },
    /// A StatefulSet `volumeClaimTemplates` entry: the claim is `<template>-<pod>`, created by
    /// the StatefulSet controller (only offline: live pods name their claims).
    StatefulSet {
        /// The template's `storageClassName` (`None` when absent).
        storage_class: Option<String>,
    },
}

/// A pod volume backed by a PersistentVolumeClaim (other volume kinds do not constrain
/// scheduling and are not kept).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodVolume {
    /// The volume's name in the pod spec (for a StatefulSet template, the template's name).
    pub name: String,
    /// Its claim.
    pub claim: ClaimSource,
}

impl PodVolume {
    /// The name of the claim for the pod named `pod`.
    pub fn claim_name(&self, pod: &str) -> String {
        match &self.claim {
            ClaimSource::Named(n) => n.clone(),
            ClaimSource::Ephemeral { .. } => format!("{pod}-{}", self.name),
            ClaimSource::StatefulSet { .. } => format!("{}-{pod}", self.name),
        }
    }
}

/// The owner of a pod, as far as classification needs it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// `ReplicaSet`, `DaemonSet`, `StatefulSet`, `Job`, `Node`, …
    pub kind: String,
    /// Owner name.
    pub name: String,
    /// The reference's `apiVersion` is the one Kubernetes serves the kind at (`apps/v1` for
    /// the workloads, `batch/v1` for Jobs, `v1` for Nodes and ReplicationControllers): not a
    /// look-alike of another group such as OpenKruise's `apps.kruise.io` DaemonSet. A flag, not
    /// the text: one per pod, and nothing else reads the version.
    pub builtin: bool,
}

impl Owner {
    /// The `apiVersion` Kubernetes serves a built-in owner kind at.
    fn builtin_api_version(kind: &str) -> Option<&'static str> {
        match kind {
            "DaemonSet" | "StatefulSet" | "ReplicaSet" | "Deployment" => Some("apps/v1"),
            "Job" | "CronJob" => Some("batch/v1"),
            "Node" | "ReplicationController" => Some("v1"),
            _ => None,
        }
    }

    /// An owner of a built-in kind at Kubernetes' own `apiVersion`.
    pub fn of(kind: &str, name: impl Into<String>) -> Owner {
        Owner {
            kind: kind.to_string(),
            name: name.into(),
            builtin: Owner::builtin_api_version(kind).is_some(),
        }
    }

    /// An owner reference as written.
    pub fn from_reference(kind: &str, name: impl Into<String>, api_version: &str) -> Owner {
        Owner {
            kind: kind.to_string(),
            name: name.into(),
            builtin: Owner::builtin_api_version(kind) == Some(api_version),
        }
    }

    /// Karpenter's `IsOwnedBy` (core v1.14.1 `pkg/utils/pod/scheduling.go`; v0.37.7 and
    /// v0.31.4 alike): the reference's `apiVersion` and `kind` both match the built-in kind's.
    fn is(&self, kind: &str) -> bool {
        self.builtin && self.kind == kind
    }

    /// An `apps/v1` DaemonSet (`IsOwnedByDaemonSet`).
    pub fn is_daemonset(&self) -> bool {
        self.is("DaemonSet")
    }
}

/// The slim pod: its name and UID, and everything else in [`PodFields`] behind an `Arc`
/// (reached through `Deref`), so the replicas expanded from one workload template share one
/// copy: a million replicas cost a million names, not a million pods. Writing a field copies
/// the shared ones first if another pod still holds them (`DerefMut` is `Arc::make_mut`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pod {
    /// Name.
    pub name: String,
    /// UID (synthesised for manifest pods).
    pub uid: String,
    fields: Arc<PodFields>,
}

impl Pod {
    /// The pod-deletion-cost annotation parsed as Karpenter does (`strconv.ParseFloat`); a value
    /// that does not parse, or is not finite, is ignored.
    pub fn deletion_cost_value(&self) -> Option<f64> {
        self.deletion_cost
            .as_deref()
            .and_then(|c| c.parse::<f64>().ok())
            .filter(|c| c.is_finite())
    }

    /// A pod named `name` with `fields`.
    pub fn new(name: impl Into<String>, uid: impl Into<String>, fields: PodFields) -> Self {
        Pod {
            name: name.into(),
            uid: uid.into(),
            fields: Arc::new(fields),
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether two pods share their fields (replicas of one template): then they differ at
    /// most in name and UID.
    pub fn shares_fields_with(&self, other: &Pod) -> bool {
        Arc::ptr_eq(&self.fields, &other.fields)
    }
}

/// Karpenter's `PreferencePolicy: Ignore` (core v1.14.1 `pkg/operator/options/options.go`,
/// `provisioning/scheduling/scheduler.go` `IgnorePreferences`): the scheduler reads a pod with its
/// required node affinity only (`NewStrictPodRequirements`), without `ScheduleAnyway` spreads
/// (`topology.go newForTopologies`) and without preferred pod affinity or anti-affinity
/// (`newForAffinities`). Taking those off the pods is the same; the replicas of a template
/// keep sharing one copy.
pub fn ignore_preferences<'a>(pods: impl IntoIterator<Item = &'a mut Pod>) {
    // Keyed by the shared fields' address; the original is kept so the address is not reused.
    let mut stripped: std::collections::HashMap<
        *const PodFields,
        (Arc<PodFields>, Arc<PodFields>),
    > = std::collections::HashMap::new();
    for pod in pods {
        if !pod.fields.has_preferences() {
            continue;
        }
        let (_, without) = stripped.entry(Arc::as_ptr(&pod.fields)).or_insert_with(|| {
            let mut fields = (*pod.fields).clone();
            fields.drop_preferences();
            (pod.fields.clone(), Arc::new(fields))
        });
        pod.fields = without.clone();
    }
}

impl PodFields {
    /// Why Karpenter cannot consider this pod at all ([`PodRefusal::Unsupported`]).
    pub fn unsupported(&self) -> Option<&str> {
        match self.refusal.as_deref() {
            Some(PodRefusal::Unsupported(why)) => Some(why),
            _ => None,
        }
    }

    /// The required term Karpenter refuses ([`PodRefusal::InvalidRequirement`]).
    pub fn invalid_requirement(&self) -> Option<&str> {
        match self.refusal.as_deref() {
            Some(PodRefusal::InvalidRequirement(why)) => Some(why),
            _ => None,
        }
    }

    /// Whether the pod states a preference the scheduler may ignore.
    fn has_preferences(&self) -> bool {
        !self.preferred_node_affinity.is_empty()
            || !self.preferred_pod_affinity.is_empty()
            || !self.preferred_pod_anti_affinity.is_empty()
            || self
                .topology_spread
                .iter()
                .any(|c| c.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway)
    }

    fn drop_preferences(&mut self) {
        self.preferred_node_affinity.clear();
        self.preferred_pod_affinity.clear();
        self.preferred_pod_anti_affinity.clear();
        self.topology_spread
            .retain(|c| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule);
    }
}

impl Deref for Pod {
    type Target = PodFields;
    fn deref(&self) -> &PodFields {
        &self.fields
    }
}

impl DerefMut for Pod {
    fn deref_mut(&mut self) -> &mut PodFields {
        Arc::make_mut(&mut self.fields)
    }
}

/// Why Karpenter would not consider a pod, as read from its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodRefusal {
    /// Karpenter cannot consider it at all (e.g. node affinity with `matchFields`).
    Unsupported(String),
    /// A required node-affinity term the API server takes but Karpenter's `ValidateRequirement`
    /// refuses (a value that is no label value, a `Gt`/`Lt` value that is no non-negative
    /// integer): a pending pod with one is ignored (core v1.14.1 `provisioner.go`
    /// `validateAffinity`).
    InvalidRequirement(String),
}

/// Everything about a pod but its name and UID.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodFields {
    /// Namespace.
    pub namespace: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Effective requests: max(Σ containers + sidecars, largest init) + runtime overhead,
    /// plus `pods: 1` (docs/karpenter.md §6.3).
    pub requests: Resources,
    /// `spec.nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// Required node-affinity terms (ORed).
    pub required_node_affinity: Vec<NodeSelectorTerm>,
    /// Preferred node-affinity terms.
    pub preferred_node_affinity: Vec<Weighted<NodeSelectorTerm>>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
    /// Topology spread constraints.
    pub topology_spread: Vec<TopologySpread>,
    /// Required pod affinity.
    pub pod_affinity: Vec<PodAffinityTerm>,
    /// Preferred pod affinity.
    pub preferred_pod_affinity: Vec<Weighted<PodAffinityTerm>>,
    /// Required pod anti-affinity.
    pub pod_anti_affinity: Vec<PodAffinityTerm>,
    /// Preferred pod anti-affinity.
    pub preferred_pod_anti_affinity: Vec<Weighted<PodAffinityTerm>>,
    /// Host ports bound by any container.
    pub host_ports: Vec<HostPort>,
    /// Volumes backed by PersistentVolumeClaims.
    pub volumes: Vec<PodVolume>,
    /// Controller owner.
    pub owner: Option<Owner>,
    /// `spec.nodeName`.
    pub node_name: Option<String>,
    /// `status.nominatedNodeName`.
    pub nominated_node_name: Option<String>,
    /// `status.phase`.
    pub phase: Option<String>,
    /// The `PodScheduled` condition: (status, reason).
    pub scheduled_condition: Option<(String, String)>,
    /// `spec.schedulingGates` is not empty: the scheduler leaves the pod alone (reason
    /// `SchedulingGated`) until every gate is removed.
    pub scheduling_gated: bool,
    /// `spec.priorityClassName`.
    pub priority_class_name: Option<String>,
    /// RFC 3339 creation time (sorts lexicographically).
    pub creation_timestamp: Option<String>,
    /// RFC 3339 `status.startTime` (when the kubelet accepted the pod): a do-not-disrupt
    /// duration counts from it (`core: pkg/utils/pod/scheduling.go IsDoNotDisruptActive`).
    pub start_time: Option<String>,
    /// Whether `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// `karpenter.sh/do-not-disrupt` as written.
    pub do_not_disrupt: Option<String>,
    /// `karpenter.sh/do-not-evict: "true"`, v1alpha5's key: Karpenter v0.31–v0.37 honour it
    /// beside do-not-disrupt (`pkg/utils/pod/scheduling.go HasDoNotDisrupt`), v1 no longer reads
    /// it (core v1.14.1 has no such key).
    pub do_not_evict: bool,
    /// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`: Cluster Autoscaler's way to
    /// keep a node; Karpenter does not read it (thread aws/karpenter-provider-aws#6394).
    pub ca_not_safe_to_evict: bool,
    /// `spec.terminationGracePeriodSeconds`.
    pub termination_grace_period_seconds: Option<i64>,
    /// `spec.priority` (resolved by admission from the priority class). Disruption reads it
    /// for a pod's eviction cost (`core: pkg/utils/disruption/disruption.go EvictionCost`).
    pub priority: Option<i32>,
    /// The `controller.kubernetes.io/pod-deletion-cost` annotation as written (Karpenter parses
    /// it as a float for the eviction cost; a value that does not parse is ignored).
    pub deletion_cost: Option<String>,
    /// The `Ready` condition is `False` (not merely absent or `Unknown`): a PDB with
    /// `unhealthyPodEvictionPolicy: AlwaysAllow` lets such a pod go (`core: pkg/utils/pdb/pdb.go
    /// isEvictable`).
    pub not_ready: bool,
    /// Why Karpenter would not consider this pod, set by the manifest/API adapters (rare, so
    /// boxed: every pod's fields carry the slot); the planner reports it as the unschedulable
    /// reason. Read through [`PodFields::unsupported`] and [`PodFields::invalid_requirement`].
    pub refusal: Option<Box<PodRefusal>>,
    /// The pod has Dynamic Resource Allocation requirements: a pod-level `spec.resourceClaims`
    /// entry or a container's / init container's `resources.claims` (`core v1.14.1:
    /// pkg/utils/pod/scheduling.go` `HasDRARequirements`). With Karpenter's default
    /// `--ignore-dra-requests=true` the scheduler refuses such a pod (`scheduler.go add`, a
    /// `DRAError`, never relaxed) and leaves such DaemonSet pods out of node overhead.
    pub dra: bool,
    /// A CapacityBuffer's virtual pod: the buffer's `namespace/name` (the pod's
    /// `karpenter.sh/capacity-buffer-*` annotations, `core v1.14.1: provisioning/buffers.go`
    /// `IsVirtualPod`). Planned for capacity, never bound, never nominating a node.
    pub buffer: Option<String>,
}

impl PodFields {
    /// Owned by an `apps/v1` DaemonSet (`IsOwnedByDaemonSet`; a DaemonSet of another group,
    /// such as OpenKruise's Advanced DaemonSet, is an ordinary owner to Karpenter: its pods
    /// need a place when their node goes, and a node holding one is not empty).
    pub fn is_daemonset_pod(&self) -> bool {
        self.owner.as_ref().is_some_and(Owner::is_daemonset)
    }

    /// Owned by a StatefulSet (whose terminating pods Karpenter still counts as needing a place:
    /// their replacement cannot start until they are gone).
    /// `apps/v1` only (`IsOwnedByStatefulSet`).
    pub fn is_statefulset_pod(&self) -> bool {
        self.owner.as_ref().is_some_and(|o| o.is("StatefulSet"))
    }

    /// A static (mirror) pod, owned by its Node (`IsOwnedByNode`: `apiVersion: v1`).
    pub fn is_mirror(&self) -> bool {
        self.owner.as_ref().is_some_and(|o| o.is("Node"))
    }

    /// Succeeded or Failed.
    pub fn is_terminal(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Succeeded") | Some("Failed"))
    }

    /// Neither Succeeded/Failed nor terminating (`core v1.14.1 pkg/utils/pod/scheduling.go IsActive`).
    pub fn is_active(&self) -> bool {
        !self.is_terminal() && !self.terminating
    }

    /// Needs a place elsewhere when its node goes (`IsReschedulable`, docs/karpenter.md §5.6):
    /// active, or a terminating StatefulSet pod (its replacement waits for it); not a
    /// DaemonSet's, not a mirror pod. A terminating pod of any other owner is already going.
    pub fn is_reschedulable(&self) -> bool {
        (self.is_active() || (self.is_statefulset_pod() && self.terminating))
            && !self.is_daemonset_pod()
            && !self.is_mirror()
    }

    /// Karpenter's "provisionable" predicate (docs/karpenter.md §5.6): marked unschedulable by the
    /// scheduler, not bound, not nominated, not DaemonSet- or Node-owned.
    pub fn is_provisionable(&self) -> bool {
        self.waits_for_capacity() && !self.is_daemonset_pod() && !self.is_mirror()
    }

    /// The provisionable predicate but for its owner clauses (`IsProvisionable` without
    /// `!IsOwnedByDaemonSet` and `!IsOwnedByNode`): marked unschedulable by the scheduler
    /// (`FailedToSchedule`), not bound, not nominated.
    pub fn waits_for_capacity(&self) -> bool {
        let unschedulable = self
            .scheduled_condition
            .as_ref()
            .is_some_and(|(status, reason)| status == "False" && reason == "Unschedulable");
        unschedulable && self.node_name.is_none() && self.nominated_node_name.is_none()
    }
}
