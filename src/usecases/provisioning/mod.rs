//! Provisioning against a live cluster: pending pods → a plan → EC2 instances → Ready nodes,
//! once, or as a watch that batches pending pods like Karpenter and removes nodes that stay
//! empty. Step by step:
//!
//! - [`input`]: manifests → the solver's input (also the offline plan's);
//! - [`plan`]: the cluster's snapshot plus the capacity this tool launched that has not
//!   registered yet → a plan whose NodeClaims are named after their pods;
//! - [`launch`]: node classes resolved before anything launches, then one fleet per NodeClaim;
//! - [`wait`]: until the launched nodes are Ready (labelled as Karpenter's controller does) and
//!   the pods bound;
//! - [`watch`]: Karpenter's batching window, launch, label, and [`empty`]-node removal.
//!
//! Nothing is kept only in memory (docs/spec.md §3): instances this tool launched carry their NodeClaim
//! name and pool in their tags, and until their Node registers they are read back from EC2 as
//! in-flight capacity, so a re-run after a crash places the same pods on them instead of
//! launching again. NodeClaim names derive from the pods they carry (`<pool>-<hash>`), so an
//! identical retry also finds the same instance by its tag. Emptiness clocks live on the Node
//! (`kubectl-karpenter.io/empty-since`).
//!
//! Progress is reported as [`Event`]s through a [`Sink`](super::Sink); results are the typed
//! outcomes below. Errors are [`CommandError`](crate::error::CommandError)s (exit class, one
//! line, hint).

pub mod assumptions;
pub mod buffers;
pub mod empty;
pub mod input;
pub mod launch;
pub mod plan;
pub mod set_aside;
pub mod statics;
pub mod wait;
pub mod watch;

#[cfg(test)]
mod soak;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_buffers;
#[cfg(test)]
mod tests_controller_gates;
#[cfg(test)]
mod tests_registration;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cloud::launch::{LaunchError, PoolError};
use crate::scheduling::Reason;

/// The `ReservedCapacity` gate's name in `--feature-gates` / `FEATURE_GATES`.
pub const RESERVED_CAPACITY_GATE: &str = "ReservedCapacity";

/// Which pools may launch, how many instance types a NodeClaim keeps, what an unmet
/// `minValues` does and whether preferences count (`--nodepool`, `--max-instance-types`,
/// `--min-values-policy`, `--preference-policy`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Only these NodePools (or Provisioners); all when empty.
    pub nodepools: Vec<String>,
    /// Instance types kept per NodeClaim (at least 1).
    pub max_instance_types: usize,
    /// The controller's `MinValuesPolicy` the plan follows.
    pub min_values_policy: crate::scheduling::MinValuesPolicy,
    /// The controller's `PreferencePolicy` the plan follows.
    pub preference_policy: crate::scheduling::PreferencePolicy,
    /// The running controller's `NodeOverlay` feature gate: `Some(false)` leaves the input's
    /// NodeOverlays out ([`input::drop_ignored_overlays`]); `None` (no controller read) applies
    /// them.
    pub node_overlay_gate: Option<bool>,
    /// The running controller's `StaticCapacity` feature gate: `Some(false)` leaves static
    /// pools (`spec.replicas`) out, neither brought to their replicas nor scaled down; `None`
    /// (no controller read) keeps them.
    pub static_capacity_gate: Option<bool>,
    /// The `CapacityBuffer` gate (`--feature-gates`, else the running controller's): `Some(true)`
    /// reads the cluster's CapacityBuffers and plans their virtual pods ([`buffers`]); off or
    /// unknown, none is read (Karpenter's default is off).
    pub capacity_buffer_gate: Option<bool>,
    /// The `ReservedCapacity` gate (`--feature-gates`, else the running controller's):
    /// `Some(false)` plans and launches as Karpenter v1.14.1 does with it off — no class's
    /// `capacityReservationSelectorTerms` resolved, so no reserved offering
    /// (`aws v1.14.1: pkg/providers/instancetype/offering/reserved_capacity_resolver.go`), and
    /// launch templates without a `CapacityReservationSpecification`
    /// (`launchtemplate/types.go`, open launch mode). `None`: on, its default (`core v1.14.1:
    /// pkg/operator/options/options.go`).
    pub reserved_capacity_gate: Option<bool>,
    /// The AWS controller's `VM_MEMORY_OVERHEAD_PERCENT` (`--vm-memory-overhead-percent`, else
    /// the running controller's); `None`: its default, 0.075.
    pub vm_memory_overhead_percent: Option<f64>,
    /// The AWS controller's `RESERVED_ENIS` (`--reserved-enis`, else the running
    /// controller's): fewer ENI-limited pods, kube-reserved unchanged (`aws v1.14.1:
    /// pkg/providers/instancetype/types.go` `pods`); `None`: its default, 0.
    pub reserved_enis: Option<i64>,
    /// Keep NodePools that are not Ready, marked as launching nothing, instead of leaving them
    /// out: the disruption controller still takes their nodes as candidates (`core v1.14.1:
    /// pkg/controllers/disruption/helpers.go` `BuildNodePoolMap` lists every managed pool)
    /// while its scheduling simulation, like the provisioner's, creates no NodeClaim for them
    /// (`provisioner.go` `NewScheduler`).
    pub keep_not_ready: bool,
}

/// One launched (or adopted) NodeClaim.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launch {
    /// NodeClaim name.
    pub node_claim: String,
    /// Its pool.
    pub node_pool: String,
    /// The instance.
    pub instance_id: String,
    /// Its type.
    pub instance_type: String,
    /// Its zone.
    pub zone: String,
    /// `on-demand`, `spot` or `reserved`.
    pub capacity_type: String,
    /// For `reserved`: the capacity reservation it launched into.
    pub capacity_reservation_id: Option<String>,
    /// It existed already (a retry) and was adopted.
    pub adopted: bool,
    /// The pods planned onto it (`namespace/name`).
    pub pods: Vec<String>,
    /// Pools CreateFleet refused before one launched (ICE, …).
    pub pool_errors: Vec<PoolError>,
    /// The NodeClaim's labels as launched, written on the Node once it registers, as Karpenter's
    /// registration copies them from the NodeClaim: its pool's and requirements' labels but those
    /// the kubelet owns (zone, instance type, arch, os, hostname) and the AWS type labels
    /// of the planned type, replaced by the launched type's (`karpenter.k8s.aws/instance-*`, …)
    /// and its capacity type ([`registration_labels`](launch::registration_labels)).
    pub node_labels: BTreeMap<String, String>,
    /// The NodeClaim's annotations (its pool's `spec.template.metadata.annotations`), written
    /// on the Node with the labels, as Karpenter's registration copies the NodeClaim's
    /// (`core v1.14.1: pkg/controllers/nodeclaim/lifecycle/registration.go` `syncNode`).
    pub node_annotations: BTreeMap<String, String>,
    /// The NodeClaim's startup taints (its pool's): the node is not initialized while one is on
    /// it (`Node::initialization`).
    pub startup_taints: Vec<crate::model::taints::Taint>,
    /// The NodeClaim's taints (its pool's): put on the Node at registration with the startup
    /// taints when it lacks them (`Live::sync_registered`).
    pub taints: Vec<crate::model::taints::Taint>,
    /// The NodeClaim's resource requests: the node is not initialized until each is
    /// allocatable (`Node::initialization`).
    pub requests: crate::model::resources::Resources,
}

/// A NodeClaim that could not be launched.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchFailure {
    /// NodeClaim name.
    pub node_claim: String,
    /// Its pool.
    pub node_pool: String,
    /// Why.
    pub error: LaunchError,
}

impl LaunchFailure {
    /// The error as reported (a missing permission said so).
    pub fn message(&self) -> String {
        if self.is_permission() {
            format!("{} (the AWS identity lacks a permission)", self.error)
        } else {
            self.error.to_string()
        }
    }

    /// Whether the AWS identity lacks a permission.
    pub fn is_permission(&self) -> bool {
        self.error.is_permission()
    }
}

/// What launching a plan did: a NodeClaim that fails does not stop the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launches {
    /// Launched or adopted, in plan order.
    pub launched: Vec<Launch>,
    /// Failed, in plan order.
    pub failed: Vec<LaunchFailure>,
}

/// What a wait sees at one poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitStatus {
    /// Launched instances with a Ready Node.
    pub ready: usize,
    /// Launched instances.
    pub nodes: usize,
    /// Planned pods bound.
    pub bound: usize,
    /// Planned pods.
    pub pods: usize,
}

/// A wait that ended with everything Ready and bound.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitReport {
    /// Instance id → Node name.
    pub nodes: BTreeMap<String, String>,
    /// Planned pods bound.
    pub pods_bound: usize,
    /// Planned pods.
    pub pods: usize,
    /// How long it took, to a tenth of a second.
    pub seconds: f64,
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// Every node Ready, every planned pod bound.
    Ready(WaitReport),
    /// The timeout passed first (the instances stay).
    TimedOut {
        /// The timeout.
        after: Duration,
        /// What was seen last.
        status: WaitStatus,
        /// The launches whose Node never registered: (NodeClaim, instance).
        unregistered: Vec<(String, String)>,
    },
    /// Ctrl-C.
    Stopped(WaitStatus),
}

/// Progress of a live run, in the order it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// An object in the cluster was accepted with a caveat.
    Warning(String),
    /// A NodeClaim was launched (or adopted).
    Launched(Box<Launch>),
    /// A NodeClaim could not be launched.
    LaunchFailed(LaunchFailure),
    /// A wait began.
    WaitStarted,
    /// What the wait sees now (every poll).
    Waiting(WaitStatus),
    /// The wait is over: everything Ready and bound.
    WaitDone(WaitStatus),
    /// Watch: a batch of pending pods was planned and launched for.
    Batch {
        /// Pending pods the plan was made for (read after the batching window closed; virtual pods
        /// of CapacityBuffers not counted).
        pods: usize,
        /// NodeClaims launched (or adopted).
        launched: usize,
        /// NodeClaims that failed.
        failed: usize,
        /// Pods no pool can take.
        unschedulable: usize,
    },
    /// Watch: a pod no pool can take stays pending.
    StaysPending {
        /// `namespace/name`.
        pod: String,
        /// Why.
        reason: Reason,
    },
    /// Watch: a node was found empty; it is removed if it stays so for `ttl`.
    NodeEmpty {
        /// Node name.
        node: String,
        /// `consolidateAfter` (`ttlSecondsAfterEmpty`).
        ttl: Duration,
    },
    /// Watch: an empty node whose time is up stays, and why (said once per reason).
    NodeHeld {
        /// Node name.
        node: String,
        /// What holds it.
        hold: crate::disruption::emptiness::Hold,
    },
    /// Watch: a pod arrived on an empty node after it was tainted; the taint is off again.
    NodeKept {
        /// Node name.
        node: String,
        /// The pod (`namespace/name`).
        pod: String,
    },
    /// A step of a static pool's scale-down (`statics`): a node drained and removed through
    /// the replace pipeline, or a NodeClaim that never registered removed.
    ScaleDown(Box<crate::usecases::replace::Event>),
    /// Watch: a node that stayed empty was removed (instance terminated, Node deleted).
    NodeRemoved {
        /// Node name.
        node: String,
        /// Its instance.
        instance: String,
        /// How long it had been empty, in seconds.
        empty_for: i64,
    },
}
