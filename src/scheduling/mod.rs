//! `solve(input) → Plan`: where Karpenter would put each pending pod — on existing nodes, or on
//! new NodeClaims from the NodePools — and why the others cannot go anywhere (docs/karpenter.md §6).
//!
//! Pure: no clock, no I/O, deterministic for a given input. The algorithm is Karpenter's greedy
//! first-fit-decreasing (`scheduler.go`): pods largest-first; existing nodes, then the least
//! loaded in-flight NodeClaim, then a new NodeClaim from the highest-weight NodePool; a NodeClaim
//! keeps every instance type that can still hold all its pods, and only at the end does price pick
//! the one to launch. Where Karpenter breaks ties at random we break them by name.

mod buffers;
pub use buffers::{split_buffers, BufferCapacity, Provisioning};
mod existing_node;
mod moving;
pub use moving::MovingPods;
mod finalize;
mod node_claim;
mod node_claim_template;
mod overlay;
mod podreqs;
mod queue;
mod reason;
mod reservations;
mod rounds;
mod scheduler;
mod shapes;
mod statics;
pub use statics::{is_pending_disruption, template_claim, unlaunchable_static_pools};
mod topology;
mod topology_group;
mod volumes;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::storage::Storage;
use crate::model::taints::Taint;

pub use existing_node::SolveMemo;
pub use overlay::{apply_overlays, overlay_conflicts};
pub use reason::{
    ExhaustedLimit, LargestType, PoolCause, PoolRefusal, Reason, ReasonCode, Shortfall,
    VolumeProblem,
};
pub use rounds::solve_rounds;
pub use scheduler::{solve, solve_with};

/// Karpenter's `MaxInstanceTypes` since v1.7: a NodeClaim keeps at most this many options.
pub const DEFAULT_MAX_INSTANCE_TYPES: usize = 600;

/// The AWS provider's `maxInstanceTypes`: a launch considers at most this many of a NodeClaim's
/// options, the cheapest after its filters (`aws: pkg/providers/instance/instance.go`).
pub const LAUNCH_MAX_INSTANCE_TYPES: usize = 60;

/// A NodePool and the instance types its node class makes available.
#[derive(Debug, Clone)]
pub struct PoolInput {
    /// The pool.
    pub pool: NodePool,
    /// Its node class name, for output.
    pub node_class: Option<String>,
    /// Instance types sized for the pool's node class (capacity, overhead, offerings).
    pub instance_types: Vec<InstanceType>,
    /// Sum of the capacity of the pool's current nodes (what `limits` are counted against).
    pub usage: Resources,
    /// What Karpenter writes on each NodeClaim of the pool beyond the template's annotations.
    pub claim_annotations: ClaimAnnotations,
    /// The node class's AMIs (`status.amis`), when known: a launch leaves out the types none of
    /// them runs on. Empty when not known (offline without a status): every type launches.
    pub images: Vec<PoolImage>,
    /// Why the pool is not Ready, when it is kept for its nodes only
    /// ([`PoolCause::NotReady`]): no NodeClaim is created for it.
    pub not_ready: Option<String>,
    /// Its NodeClaims not launched yet (no provider id, so neither a node nor capacity in flight),
    /// which a static pool's replicas count nonetheless.
    pub unlaunched: Unlaunched,
}

/// A pool's NodeClaims without a provider id: Karpenter's cluster state counts each from its
/// creation (`core v1.14.1: pkg/controllers/state/cluster.go` `UpdateNodeClaim` →
/// `statenodepool.go` `UpdateNodeClaim`), so the static provisioner neither launches another for
/// it nor exceeds `limits.nodes` while it resolves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unlaunched {
    /// Not being deleted: active.
    pub active: i64,
    /// Being deleted: counted against `limits.nodes` only.
    pub deleting: i64,
}

/// One of a node class's AMIs and what it runs on (`status.amis[]`). A launch maps each type to
/// the first image, in order, whose requirements its own meet, and types left without one get
/// no launch template and no CreateFleet override (`aws: pkg/providers/amifamily/ami.go`
/// `MapToInstanceTypes`, `resolver.go` `Resolve`: "no instance types satisfy requirements of
/// amis" when none is left; docs/karpenter.md §6.7).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolImage {
    /// The AMI id.
    pub id: String,
    /// Its requirements (architecture, GPU/accelerator variants).
    pub requirements: Requirements,
}

impl PoolImage {
    /// Whether `it` can run this image (core `Requirements.Compatible` without undefined keys
    /// allowed, as `MapToInstanceTypes` calls it).
    pub fn runs_on(&self, it: &InstanceType) -> bool {
        it.requirements
            .compatible(&self.requirements, |_| false)
            .is_ok()
    }
}

/// The annotations Karpenter adds to a NodeClaim it creates, beyond its template's (core
/// v1.14.1: `pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimAnnotations {
    /// `karpenter.sh/nodepool-hash` and `karpenter.sh/nodepool-hash-version`, on every
    /// NodeClaim of the pool (`NewNodeClaimTemplate`); the caller computes them
    /// (`drift::hash`), empty where it cannot.
    pub hash: BTreeMap<String, String>,
    /// Types with an offering a NodeOverlay priced (`IsPricingOverlayApplied`); set by
    /// [`apply_overlays`].
    pub price_overlaid: std::collections::BTreeSet<String>,
    /// Types whose capacity a NodeOverlay changed (`IsCapacityOverlayApplied`); set by
    /// [`apply_overlays`].
    pub capacity_overlaid: std::collections::BTreeSet<String>,
    /// The pool's controller writes `karpenter.sh/nodeclaim-min-values-relaxed` on each
    /// NodeClaim its scheduler creates (core v1.14.1: `scheduling/scheduler.go`
    /// `addToNewNodeClaim`: `"true"` when [`MinValuesPolicy::BestEffort`] relaxed a `minValues`
    /// of the NodeClaim, else `"false"`; static NodeClaims are created without it). v1 pools; a
    /// v1beta1 pool's v0.37 did not.
    pub records_min_values: bool,
}

/// `karpenter.sh/price-overlay-applied` (core v1.14.1: `pkg/apis/v1alpha1/labels.go`).
pub const PRICE_OVERLAY_APPLIED: &str = "karpenter.sh/price-overlay-applied";
/// `karpenter.sh/capacity-overlay-applied`.
pub const CAPACITY_OVERLAY_APPLIED: &str = "karpenter.sh/capacity-overlay-applied";

impl ClaimAnnotations {
    /// A NodeClaim's annotations: the template's, the hash, and — for a NodeClaim of a
    /// dynamic pool whose options (`ToNodeClaim`: the cheapest `MaxInstanceTypes`) include a
    /// type a NodeOverlay priced or resized — `…-overlay-applied: "true"`.
    /// `min_values_relaxed`: whether the scheduler relaxed one of its `minValues`.
    pub fn for_claim<'n>(
        &self,
        template: &BTreeMap<String, String>,
        options: impl IntoIterator<Item = &'n str>,
        is_static: bool,
        min_values_relaxed: bool,
    ) -> BTreeMap<String, String> {
        let mut out = template.clone();
        out.extend(self.hash.clone());
        if self.records_min_values && !is_static {
            out.insert(
                labels::NODECLAIM_MIN_VALUES_RELAXED.to_string(),
                min_values_relaxed.to_string(),
            );
        }
        if is_static || (self.price_overlaid.is_empty() && self.capacity_overlaid.is_empty()) {
            return out;
        }
        let (mut price, mut capacity) = (false, false);
        for name in options {
            price |= self.price_overlaid.contains(name);
            capacity |= self.capacity_overlaid.contains(name);
        }
        for (on, key) in [
            (price, PRICE_OVERLAY_APPLIED),
            (capacity, CAPACITY_OVERLAY_APPLIED),
        ] {
            if on {
                out.insert(key.to_string(), "true".to_string());
            }
        }
        out
    }
}

/// A node that already exists (or a NodeClaim in flight), with the pods bound to it.
#[derive(Debug, Clone)]
pub struct ExistingNode {
    /// The node.
    pub node: Node,
    /// Pods bound to it (DaemonSet pods included).
    pub pods: Vec<Pod>,
}

/// Karpenter's `--min-values-policy` / `MIN_VALUES_POLICY` (core v1.14.1:
/// `pkg/operator/options/options.go`): what the scheduler does when the instance types left for
/// a new NodeClaim cannot meet a `minValues`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MinValuesPolicy {
    /// The default: the NodeClaim cannot take the pod (`filterInstanceTypesByRequirements`
    /// leaves no type), and a truncation that breaks `minValues` drops the NodeClaim.
    #[default]
    Strict,
    /// A new NodeClaim's unmet `minValues` are lowered to what its types provide
    /// (`tryVolumeAlternative`), the NodeClaim is annotated `…min-values-relaxed: "true"`, and
    /// truncation no longer checks `minValues` (`cloudprovider/types.go` `Truncate`). Pods
    /// joining a NodeClaim already made are held to its (relaxed) `minValues` strictly
    /// (`addToInflightNode` passes `relaxMinValues=false`).
    BestEffort,
}

impl MinValuesPolicy {
    /// The option's value, exactly as Karpenter accepts it (`Strict`, `BestEffort`).
    pub fn parse(text: &str) -> Option<MinValuesPolicy> {
        match text {
            "Strict" => Some(MinValuesPolicy::Strict),
            "BestEffort" => Some(MinValuesPolicy::BestEffort),
            _ => None,
        }
    }

    /// As written in the option.
    pub fn as_str(self) -> &'static str {
        match self {
            MinValuesPolicy::Strict => "Strict",
            MinValuesPolicy::BestEffort => "BestEffort",
        }
    }

    /// Whether unmet `minValues` are relaxed.
    pub fn relaxes(self) -> bool {
        self == MinValuesPolicy::BestEffort
    }
}

/// Karpenter's `--preference-policy` / `PREFERENCE_POLICY` (core v1.14.1:
/// `pkg/operator/options/options.go`): whether the scheduler honours pods' preferences —
/// preferred node and pod (anti-)affinity, `ScheduleAnyway` spreads — as constraints it relaxes
/// one at a time, or ignores them ([`crate::model::pod::ignore_preferences`]). Provisioning and
/// the disruption simulations alike (`provisioner.go Schedule`, `disruption/helpers.go
/// SimulateScheduling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreferencePolicy {
    /// The default: preferences are required at first and relaxed when a pod fits nowhere.
    #[default]
    Respect,
    /// Preferences are left out of scheduling.
    Ignore,
}

impl PreferencePolicy {
    /// The option's value, exactly as Karpenter accepts it (`Respect`, `Ignore`).
    pub fn parse(text: &str) -> Option<PreferencePolicy> {
        match text {
            "Respect" => Some(PreferencePolicy::Respect),
            "Ignore" => Some(PreferencePolicy::Ignore),
            _ => None,
        }
    }

    /// As written in the option.
    pub fn as_str(self) -> &'static str {
        match self {
            PreferencePolicy::Respect => "Respect",
            PreferencePolicy::Ignore => "Ignore",
        }
    }

    /// Takes the preferences off `pods` when the policy ignores them.
    pub fn apply<'a>(self, pods: impl IntoIterator<Item = &'a mut Pod>) {
        if self == PreferencePolicy::Ignore {
            crate::model::pod::ignore_preferences(pods);
        }
    }
}

/// The controller options a scheduling decision follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policies {
    /// `MinValuesPolicy`.
    pub min_values: MinValuesPolicy,
    /// `PreferencePolicy`.
    pub preferences: PreferencePolicy,
}

/// Tunables.
#[derive(Debug, Clone)]
pub struct Options {
    /// Cap on instance types kept per NodeClaim (cheapest first).
    pub max_instance_types: usize,
    /// Try every existing node and in-flight NodeClaim for every pod, as Karpenter does,
    /// instead of skipping those known to refuse it (identical pods, full hostnames, zone
    /// pins, nodes of a domain topology refuses), and put every refusal into words at once
    /// rather than only those of pods left unschedulable. The plan is the same, only slower:
    /// tests compare the two.
    pub exhaustive: bool,
    /// Reserved capacity in fallback mode, as Karpenter's disruption simulations run it: a pod
    /// whose reservations are all held goes to on-demand/spot in the same simulation. Off (the
    /// provisioner's strict mode): it waits for the next round (`reservations.rs`).
    pub reserved_fallback: bool,
    /// Volumes as Karpenter's disruption simulations read them (`volumes.rs` `for_disruption`):
    /// claims are not validated, and a pod whose claim, volume or class is not found is placed
    /// without volume requirements. Off (the provisioner's mode): such a pod is not considered.
    pub disruption_volumes: bool,
    /// Leave out of an unschedulable pod's reason the NodePool refusals that take work to put
    /// into words (`Solver::explain`: walking a pool's instance types to name a shortfall), for
    /// a caller that reads only whether every pod was placed — consolidation's multi-node search,
    /// whose failed simulations are thousands of refusals of a pod that fits nowhere, each
    /// explained and thrown away. Placements are the same either way.
    pub unexplained: bool,
    /// Ask only whether a pod could go anywhere at all, whatever else is placed around it:
    /// existing nodes offer their whole allocatable (their pods still count for topology, not
    /// for room), and a spread constraint narrows a NodeClaim to every domain within `maxSkew`
    /// rather than to the one minimal domain Karpenter picks. A pod this leaves unschedulable is
    /// unschedulable in any solve with the same topology counts, nodes and pools — the
    /// consolidation engine's certain failures (`disruption/consolidation/certain.rs`). Not a
    /// plan: placements are only witnesses.
    pub possibility: bool,
    /// The controller's `MinValuesPolicy`.
    pub min_values_policy: MinValuesPolicy,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_instance_types: DEFAULT_MAX_INSTANCE_TYPES,
            exhaustive: false,
            reserved_fallback: false,
            disruption_volumes: false,
            unexplained: false,
            possibility: false,
            min_values_policy: MinValuesPolicy::Strict,
        }
    }
}

/// Everything the solver looks at.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Pods to place (already filtered to the provisionable ones).
    pub pods: Vec<Pod>,
    /// Nodes that exist, with their pods.
    pub existing_nodes: Vec<ExistingNode>,
    /// NodePools with their instance types.
    pub pools: Vec<PoolInput>,
    /// DaemonSet pod templates (overhead on new nodes).
    pub daemonsets: Vec<Pod>,
    /// Namespace labels, for `namespaceSelector` in pod affinity.
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// StorageClasses, claims, volumes and CSI attach limits: pods' volumes are resolved against
    /// them (volume topology, attach limits on existing nodes, docs/karpenter.md §6.9). `None`:
    /// volumes are not looked at (a simulation that has no storage view).
    pub storage: Option<Arc<Storage>>,
    /// Bound pods that `pods` places again (a disruption simulation's candidates and deleting
    /// nodes keep listing the pods that move): topology skips them where they are, and counts
    /// every other bound pod, those staying on a deleting node included (`do-not-disrupt`, held
    /// by a PDB, DaemonSet and mirror pods) — Karpenter's `excludedPods` (`core v1.14.1
    /// pkg/controllers/provisioning/scheduling/topology.go countDomains`). The provisioner takes
    /// a deleting node's reschedulable pods off it instead
    /// (`usecases::provisioning::input::reschedule_deleting`), so its set is empty.
    pub moving: MovingPods,
    /// Tunables.
    pub options: Options,
}

/// An instance type a NodeClaim may launch as.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceTypeOption {
    /// Name, shared with every NodeClaim of the pool that lists the type: a plan of thousands
    /// of NodeClaims lists hundreds of types each (BENCHMARKS.md, B1e).
    pub name: Arc<str>,
    /// Cheapest compatible available offering's price (USD/h).
    pub price: f64,
}

/// What would be launched for a NodeClaim: the cheapest compatible available offering of the
/// cheapest type after Karpenter's launch-time filters.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchChoice {
    /// Instance type.
    pub instance_type: String,
    /// `on-demand`, `spot` or `reserved`.
    pub capacity_type: String,
    /// Zone.
    pub zone: String,
    /// USD per hour.
    pub price: f64,
    /// For `reserved`: the capacity reservation launched into.
    pub reservation: Option<String>,
    /// Every offering the launch may use after the provider's filters (exotic types, spot
    /// priced above on-demand, the 60 cheapest types), all of `capacity_type`, cheapest first:
    /// the CreateFleet overrides. The first is the one above.
    pub offerings: Vec<LaunchOffering>,
    /// The reservations reserved offerings launch into ([`LaunchOffering::reservation`]
    /// indexes it), one per (type, zone) after the provider's reserved-launch filters.
    pub reservations: Vec<crate::model::reservation::ReservedCapacity>,
}

/// One offering a launch may use, compactly: a NodeClaim can have hundreds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchOffering {
    /// Index into the NodeClaim's `instance_types`.
    pub option: u32,
    /// Index into the NodeClaim's `zones`.
    pub zone: u32,
    /// USD per hour.
    pub price: f64,
    /// For a reserved offering: index into the launch's `reservations`.
    pub reservation: Option<u32>,
}

/// A NodeClaim the plan would create.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedNodeClaim {
    /// Deterministic name, `<nodepool>-<n>`.
    pub name: String,
    /// NodePool (or Provisioner).
    pub node_pool: String,
    /// Node class.
    pub node_class: Option<String>,
    /// Compatible instance types, cheapest first (truncated to the options' cap). Shared with
    /// the other NodeClaims of the plan that have the same options.
    pub instance_types: Arc<[InstanceTypeOption]>,
    /// What would be launched.
    pub launch: LaunchChoice,
    /// Zones the NodeClaim may land in.
    pub zones: Vec<String>,
    /// Capacity types allowed.
    pub capacity_types: Vec<String>,
    /// Pods placed, `namespace/name`.
    pub pods: Vec<String>,
    /// Σ pod requests + DaemonSet overhead.
    pub requests: Resources,
    /// Narrowed requirements incl. `karpenter.sh/capacity-type In [...]`, but not the
    /// instance-type one: that is `instance_type_requirement` ([`Self::all_requirements`] has
    /// both).
    pub requirements: Requirements,
    /// `node.kubernetes.io/instance-type In [...]`: the options' names, kept apart from
    /// `requirements` so that hundreds of names per NodeClaim are shared, not copied.
    pub instance_type_requirement: InstanceTypeRequirement,
    /// Labels the node gets.
    pub labels: BTreeMap<String, String>,
    /// Annotations: the template's (`spec.template.metadata.annotations`), which Karpenter puts
    /// on the NodeClaim (`core v1.14.1: pkg/controllers/provisioning/scheduling/
    /// nodeclaimtemplate.go`) and registration copies onto the Node (`nodeclaim/lifecycle/
    /// registration.go` `syncNode`).
    pub annotations: BTreeMap<String, String>,
    /// Taints the node gets.
    pub taints: Vec<Taint>,
    /// Startup taints.
    pub startup_taints: Vec<Taint>,
    /// The scheduling round that creates it (1 = the first batch; later rounds place what the
    /// NodePool limits left over once the earlier rounds' NodeClaims are launched).
    pub round: usize,
    /// Pods that joined it, opened earlier in the round, though a higher-weight NodePool takes
    /// them too (Karpenter fills open NodeClaims before opening new ones by weight; aws#6883).
    pub joined_before_weights: Option<JoinedBeforeWeights>,
}

/// Why a lower-weight NodePool's NodeClaim holds pods a higher-weight one also takes: core
/// v1.14.1 `scheduling/scheduler.go` `add` tries existing nodes, then the NodeClaims opened
/// earlier in the round, then new NodeClaims by pool weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinedBeforeWeights {
    /// Those pods, `namespace/name`.
    pub pods: Vec<String>,
    /// The NodeClaim's NodePool weight.
    pub weight: i32,
    /// The heaviest NodePool whose template also takes the first of them, and its weight.
    pub higher_node_pool: String,
    /// Its weight.
    pub higher_weight: i32,
}

/// A planned NodeClaim's `node.kubernetes.io/instance-type In [...]` requirement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InstanceTypeRequirement {
    /// The names admitted, sorted and distinct (shared with the other NodeClaims of the plan
    /// that admit the same). Empty: none (the requirement reads `DoesNotExist`, as an empty `In`
    /// does).
    pub names: Arc<[Arc<str>]>,
    /// `minValues` on the key (the pool's or a pod's).
    pub min_values: Option<u32>,
}

impl InstanceTypeRequirement {
    /// As a [`Requirement`].
    pub fn to_requirement(&self) -> Requirement {
        let mut r = Requirement::new(
            labels::INSTANCE_TYPE,
            Operator::In,
            self.names.iter().map(|n| n.to_string()),
        );
        r.min_values = self.min_values;
        r
    }
}

impl PlannedNodeClaim {
    /// Every requirement, the instance-type one included.
    pub fn all_requirements(&self) -> Requirements {
        let mut all = self.requirements.clone();
        all.add(self.instance_type_requirement.to_requirement());
        all
    }

    /// The offerings a launch may use, as (instance type, zone, USD/h), cheapest first.
    pub fn launch_offerings(&self) -> impl Iterator<Item = (&str, &str, f64)> + '_ {
        self.launch.offerings.iter().filter_map(|o| {
            let it = self.instance_types.get(o.option as usize)?;
            let zone = self.zones.get(o.zone as usize)?;
            Some((&*it.name, zone.as_str(), o.price))
        })
    }

    /// [`PlannedNodeClaim::launch_offerings`] with, for a reserved offering, its reservation.
    pub fn launch_pools(
        &self,
    ) -> impl Iterator<
        Item = (
            &str,
            &str,
            f64,
            Option<&crate::model::reservation::ReservedCapacity>,
        ),
    > + '_ {
        self.launch.offerings.iter().filter_map(|o| {
            let it = self.instance_types.get(o.option as usize)?;
            let zone = self.zones.get(o.zone as usize)?;
            let reservation = o
                .reservation
                .and_then(|r| self.launch.reservations.get(r as usize));
            Some((&*it.name, zone.as_str(), o.price, reservation))
        })
    }
}

/// Pods placed on an existing node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingPlacement {
    /// Node name.
    pub node: String,
    /// Pods, `namespace/name`.
    pub pods: Vec<String>,
}

/// A pod left pending, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct UnschedulablePod {
    /// `namespace/name`.
    pub pod: String,
    /// Why: a stable [`Reason::code`], and a precise message (its `Display`).
    pub reason: Reason,
}

/// The solver's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// New NodeClaims, in creation order.
    pub node_claims: Vec<PlannedNodeClaim>,
    /// Pods placed on existing nodes, by node name.
    pub existing_nodes: Vec<ExistingPlacement>,
    /// Pods that stay pending.
    pub unschedulable: Vec<UnschedulablePod>,
    /// Static pools running more NodeClaims than their replicas, and which go (set by the
    /// caller: `disruption::static_scale_down`, docs/karpenter.md §6.11).
    pub static_scale_down: Vec<crate::disruption::static_scale_down::StaticScaleDown>,
    /// The pods of nodes being deleted that were planned again with the pending pods, by node
    /// (set by the caller: `usecases::provisioning::input::reschedule_deleting`).
    pub from_deleting_nodes: Vec<ExistingPlacement>,
    /// CapacityBuffers' virtual pods, per buffer, taken out of the lists above (set by the
    /// caller: [`split_buffers`], docs/karpenter.md §6.13).
    pub buffers: Vec<BufferCapacity>,
}

impl Plan {
    /// Total hourly price of the new NodeClaims.
    pub fn price_per_hour(&self) -> f64 {
        // Summed from 0.0: an empty f64 sum is -0.0, which would print as `-0`.
        self.node_claims
            .iter()
            .fold(0.0, |total, c| total + c.launch.price)
    }
}

#[cfg(test)]
mod fuzz_check;
#[cfg(test)]
mod tests;
