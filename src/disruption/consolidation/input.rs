//! What the consolidation decision reads: the cluster at one instant, as plain structs. The
//! caller (manifests or the live cluster) fills them in; nothing here reads a clock or an API.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::node::Node;
use crate::model::nodepool::ApiGeneration;
use crate::model::pod::Pod;
use crate::model::selector::LabelSelector;
use crate::model::storage::Storage;
use crate::scheduling::{MinValuesPolicy, PoolInput, PreferencePolicy};

/// The Karpenter release whose disruption controller is simulated (docs/spec.md §9: each API generation
/// follows its last release; live, the installed controller's version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Release {
    /// v1.14.1 (`karpenter.sh/v1`): emptiness, drift, multi-node, single-node; forceful
    /// expiration outside the loop; budgets per reason; the `Balanced` policy.
    V1_14,
    /// v0.37.7 (`karpenter.sh/v1beta1`): graceful, budgeted expiration first; one budget for
    /// every reason.
    V0_37,
    /// v0.31.4 (`karpenter.sh/v1alpha5` Provisioners and Machines): no budgets, one action at a
    /// time, each finished before the next pass.
    V0_31,
}

impl Release {
    /// The release a generation's objects were last served by.
    pub fn for_generation(generation: ApiGeneration) -> Release {
        match generation {
            ApiGeneration::V1 => Release::V1_14,
            ApiGeneration::V1Beta1 => Release::V0_37,
            ApiGeneration::V1Alpha5 => Release::V0_31,
        }
    }

    /// The newest release among the pools' generations (one controller runs per cluster; a
    /// cluster mixing generations is evaluated with the newest), v1.14 when there is none.
    pub fn for_pools(pools: &[PoolInput]) -> Release {
        pools
            .iter()
            .filter_map(|p| p.pool.generation)
            .map(Release::for_generation)
            .min()
            .unwrap_or(Release::V1_14)
    }

    /// The version string, e.g. `v1.14.1`.
    pub fn version(self) -> &'static str {
        match self {
            Release::V1_14 => "v1.14.1",
            Release::V0_37 => "v0.37.7",
            Release::V0_31 => "v0.31.4",
        }
    }
}

/// Feature gates that change decisions (`FEATURE_GATES`; v0.31: `featureGates.driftEnabled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    /// `SpotToSpotConsolidation` (off by default since it exists, v0.34).
    pub spot_to_spot_consolidation: bool,
    /// `Drift` (v0.31: off by default; v0.33–v0.37: on; v1: always on).
    pub drift: bool,
}

impl FeatureGates {
    /// The release's defaults.
    pub fn defaults(release: Release) -> FeatureGates {
        FeatureGates {
            spot_to_spot_consolidation: false,
            drift: release != Release::V0_31,
        }
    }
}

/// Why the caller's drift evaluation found a NodeClaim drifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drifted {
    /// When the `Drifted` condition became true (epoch seconds): drift candidates go oldest first.
    pub since: i64,
    /// The drift reason, e.g. `AMIDrift`.
    pub reason: String,
}

/// What Karpenter knows of a node from its NodeClaim (v1alpha5: Machine).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaimFacts {
    /// NodeClaim (Machine) name.
    pub name: String,
    /// `metadata.creationTimestamp`, epoch seconds.
    pub created: i64,
    /// When the `Initialized` condition became true, if it is.
    pub initialized_at: Option<i64>,
    /// `status.lastPodEventTime` (v1).
    pub last_pod_event: Option<i64>,
    /// When the node became empty: the v1beta1 `Empty` condition, or the v1alpha5
    /// `karpenter.sh/emptiness-timestamp` annotation. Absent on an empty node: empty from now.
    pub empty_since: Option<i64>,
    /// `spec.expireAfter` of a v1 NodeClaim in seconds (`None`: `Never`). Earlier generations
    /// take it from the pool.
    pub expire_after: Option<i64>,
    /// `spec.terminationGracePeriod` of a v1 NodeClaim in seconds.
    pub termination_grace_period: Option<i64>,
    /// The NodeClaim is being deleted (or its instance is terminating).
    pub deleting: bool,
    /// Its instance is gone or going, as EC2 described it live (`model::node::gone_nodes`):
    /// no capacity and no candidate, as a NodeClaim Karpenter's garbage collection deletes.
    pub gone: Option<crate::model::node::GoneInstance>,
    /// Drifted, as the caller's drift evaluation found.
    pub drifted: Option<Drifted>,
    /// v1: the NodeClaim carries `Consolidatable: False`. The disruption controller reads the
    /// condition (`emptiness.go` / `consolidation.go` `ShouldDisrupt`: `IsTrue()`); v1.14's
    /// nodeclaim controller only sets it True or removes it, which `consolidateAfter` decides
    /// here from the same times, so only an explicit False is taken as written
    /// (emptiness_test.go "should ignore nodes with the consolidatable status condition set to
    /// false").
    pub consolidatable_false: bool,
    /// v1: the NodeClaim's `InstanceTerminating` condition is True (its instance was deleted):
    /// the budgets count it neither among the pool's nodes nor as disrupting
    /// (`helpers.go BuildDisruptionBudgetMapping`; suite_test.go "should not consider nodes that
    /// have the terminating status condition as part of disruption count").
    pub instance_terminating: bool,
}

/// A pod bound to a node, with the facts disruption reads beyond the slim pod.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPod {
    /// The pod.
    pub pod: Pod,
    /// `spec.priority`.
    pub priority: Option<i32>,
    /// `controller.kubernetes.io/pod-deletion-cost`, when it parses.
    pub deletion_cost: Option<f64>,
    /// The `Ready` condition is `False` (a PDB with `unhealthyPodEvictionPolicy: AlwaysAllow`
    /// lets such a pod go).
    pub not_ready: bool,
}

impl BoundPod {
    /// A pod with no priority, no deletion cost, ready.
    pub fn new(pod: Pod) -> BoundPod {
        BoundPod {
            pod,
            priority: None,
            deletion_cost: None,
            not_ready: false,
        }
    }
}

/// A node with its NodeClaim (if Karpenter manages it) and its pods.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInput {
    /// The node: labels (NodePool, instance type, zone, capacity type), annotations
    /// (`karpenter.sh/do-not-disrupt`), taints, allocatable, readiness, initialized, deleting.
    pub node: Node,
    /// The NodeClaim; `None` for a node Karpenter does not manage.
    pub claim: Option<ClaimFacts>,
    /// Pods bound to the node, DaemonSet pods included.
    pub pods: Vec<BoundPod>,
    /// Nominated by a recent provisioning pass for a pending pod.
    pub nominated: bool,
}

/// `minAvailable` / `maxUnavailable` of a PodDisruptionBudget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    /// A pod count.
    Int(i32),
    /// A percentage, 0–100.
    Percent(u32),
}

/// A PodDisruptionBudget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdbInput {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.selector` (`None` selects nothing, an empty one every pod of the namespace).
    pub selector: Option<LabelSelector>,
    /// `spec.minAvailable`.
    pub min_available: Option<IntOrPercent>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<IntOrPercent>,
    /// `spec.unhealthyPodEvictionPolicy: AlwaysAllow`.
    pub always_allow_unhealthy: bool,
    /// `status.disruptionsAllowed`; computed from the spec and the pods when absent (a manifest).
    pub disruptions_allowed: Option<i32>,
}

/// Everything the decision reads.
#[derive(Debug, Clone)]
pub struct ConsolidationInput {
    /// The instant evaluated (epoch seconds).
    pub now: i64,
    /// The Karpenter release simulated.
    pub release: Release,
    /// Feature gates.
    pub feature_gates: FeatureGates,
    /// The controller's `MinValuesPolicy` (v1 only; earlier releases have none, Strict):
    /// disruption simulations schedule with it (core v1.14.1: `disruption/helpers.go`
    /// `SimulateScheduling`).
    pub min_values_policy: MinValuesPolicy,
    /// The controller's `PreferencePolicy` (v1.4 and later; earlier releases honour
    /// preferences): disruption simulations schedule with it (`SimulateScheduling`).
    pub preference_policy: PreferencePolicy,
    /// Every node of the cluster (managed or not) with its pods.
    pub nodes: Vec<NodeInput>,
    /// Pods waiting for capacity (provisionable), CapacityBuffer virtual pods included (with
    /// the gate on): every simulation must fit them too (`disruption/helpers.go`
    /// `SimulateScheduling` → `GetPendingPods`).
    pub pending_pods: Vec<Pod>,
    /// Nodes the provisioner's pass places CapacityBuffer virtual pods on: not empty for
    /// emptiness (`provisioning/buffers.go` `bufferPodCountsFromResults`, `emptiness.go`).
    pub buffer_nodes: Vec<String>,
    /// PodDisruptionBudgets.
    pub pdbs: Vec<PdbInput>,
    /// NodePools with their sized instance types (offerings with prices). `usage` is ignored:
    /// each simulation counts the nodes that remain.
    pub pools: Vec<PoolInput>,
    /// DaemonSet pod templates.
    pub daemonsets: Vec<Pod>,
    /// Namespace labels, for `namespaceSelector` in pod affinity.
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// StorageClasses, claims, volumes and CSI attach limits: a moved pod's volumes keep it in
    /// their zones, as in Karpenter's simulations (`scheduling::Options::disruption_volumes`).
    /// `None`: volumes are not looked at.
    pub storage: Option<Arc<Storage>>,
}
