//! Replacing nodes against a live cluster, safely and at the operator's pace (`drift replace`;
//! docs/spec.md §4, §6; docs/karpenter.md §5). Per node, in this order, each step recorded on the node first
//! so that a killed run resumes instead of launching a second replacement:
//!
//! 1. plan: the node's reschedulable pods are simulated onto the other nodes plus new
//!    NodeClaims (the solver, [`plan`]); nodes whose pods cannot be placed, that carry
//!    do-not-disrupt (node or pod), or whose pods a PDB with no disruption left protects are
//!    *blocked* — the blocking object named — and skipped;
//! 2. mark: the generation's disruption taint and `spec.unschedulable` (`Ready,
//!    SchedulingDisabled`), and the record naming the replacement NodeClaims;
//! 3. launch the replacements (NodeClaim names derive from the node, so a resumed run adopts
//!    the same instances) and wait until their Nodes are Ready — otherwise roll back: untaint,
//!    uncordon, terminate what was launched;
//! 4. drain through the Eviction API in Karpenter's tiers, retrying 429s (the PDB named),
//!    honouring grace periods, bounded by the drain timeout;
//! 5. terminate its instance, then delete the Node (and its NodeClaim, finalizers released).
//!
//! NodePool budgets and `--max-parallel` bound how many nodes are in replacement at once; a
//! node starts as soon as one finishes ([`pipeline`]). [`via_controller`] instead lets a
//! running Karpenter do steps 2–5. [`watch`] repeats a pass until Ctrl-C.
//!
//! The decisions are the pure `disruption::replace`; this module reads and writes through the
//! seams and reports [`Event`]s as it goes. The pipeline takes [`Action`]s — drift's selection
//! ([`select`]), `consolidate --yes`'s expiration and consolidation actions alike — and returns a
//! [`NodeOutcome`] per node. The nodes of one multi-node command go as one: marked together,
//! one launch (by the first) for all their pods, drained once it is Ready, rolled back
//! together.

mod drain;
pub mod pipeline;
pub mod plan;
pub mod select;
pub mod steps;
pub mod via_controller;
pub mod watch;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::time::Duration;

pub use crate::disruption::replace::{Action, Detail, Method, Status, Step};

use crate::api::Manifests;
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::Cluster;
use crate::model::node::{ghost_instances, Listing};
use crate::usecases::provisioning;
use crate::usecases::provisioning::buffers;

/// How a run goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// At most this many nodes in replacement at once (`--max-parallel`).
    pub max_parallel: usize,
    /// `--force`: do-not-disrupt pods are evicted.
    pub force: bool,
    /// How long a drain may take per node (`--timeout`); also how long a node held back by a
    /// PodDisruptionBudget at zero waits.
    pub drain_timeout: Duration,
    /// How long replacements may take to be Ready (`--ready-timeout`).
    pub ready_timeout: Duration,
    /// When this run started (RFC 3339): the `startedAt` of the replacements it begins, and
    /// part of their NodeClaim names, so that the plan shown names what is launched.
    pub attempt: String,
    /// Instances EC2 said were going away when the run began ([`gone_instances`]): their
    /// Nodes — registered again for a moment by a kubelet still running while the instance
    /// shuts down — are no capacity for any node the run plans.
    pub gone_instances: BTreeSet<String>,
    /// The controller's `MinValuesPolicy` and `PreferencePolicy` the re-plans follow (a
    /// replacement only BestEffort allows is launched relaxed, as Karpenter's
    /// `SimulateScheduling` under that policy).
    pub policies: crate::scheduling::Policies,
    /// The `CapacityBuffer` gate (the controller's; `consolidate`'s flag): every snapshot a
    /// re-plan reads has the buffers' virtual pods among its pending pods, which take their room
    /// on existing nodes first, as pending pods do ([`read_cluster_with_buffers`]).
    pub capacity_buffers: bool,
}

/// The instances of a selection's drift snapshot (its nodes' instances, described through an
/// `instance-id` filter) whose Nodes are no capacity: the ghost rule ([`ghost_instances`], this
/// tool's own — upstream relies on NodeClaims), for [`Settings::gone_instances`] — shutting
/// down, terminated, or, since every node's instance was asked for, not described at all (EC2
/// forgot it: [`Listing::Described`], only for the nodes of the region asked). A snapshot whose
/// instances were not described (offline) tells only the states it has. No AWS call of its
/// own: the selection described the instances already (a failed description fails the run).
pub fn gone_instances(snapshot: &crate::drift::DriftSnapshot) -> BTreeSet<String> {
    let nodes: Vec<crate::model::node::Node> =
        snapshot.nodes.iter().map(|m| m.node.clone()).collect();
    let instances: Vec<crate::model::instance::Instance> = snapshot
        .nodes
        .iter()
        .filter_map(|m| m.instance.clone())
        .collect();
    let listing = match &snapshot.instances_described_in {
        Some(region) => Listing::Described { region },
        None => Listing::Partial,
    };
    ghost_instances(&nodes, &instances, listing)
}

/// One node's outcome (a row of the `ReplacementReport`).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeOutcome {
    /// The node.
    pub node: String,
    /// Its NodePool.
    pub node_pool: String,
    /// Why it is replaced.
    pub reason: String,
    /// Where it stands.
    pub status: Status,
    /// What the status says more.
    pub detail: Detail,
    /// Its replacements: `NodeClaim (type)` planned, `NodeClaim (instance)` launched.
    pub replacements: Vec<String>,
    /// Its pods that move.
    pub pods: usize,
    /// Pods evicted (`namespace/name`).
    pub evicted: Vec<String>,
    /// How long its replacement took, to a tenth of a second.
    pub seconds: f64,
}

impl NodeOutcome {
    /// A node not started yet, with `pods` to move.
    pub fn queued(action: &Action, pods: usize) -> NodeOutcome {
        NodeOutcome {
            node: action.node.name.clone(),
            node_pool: action.pool.name.clone(),
            reason: action.reason.clone(),
            status: Status::Queued,
            detail: Detail::None,
            replacements: Vec::new(),
            pods,
            evicted: Vec::new(),
            seconds: 0.0,
        }
    }

    /// No budget now, and nothing in progress that would free one.
    fn wait_for_budget(&mut self, pool: &str) {
        self.status = Status::WaitingBudget;
        self.detail = Detail::NoBudget { pool: pool.into() };
    }

    /// A node the run ends without starting: because of `why` (failures before it), an
    /// interruption, or else for lack of budget.
    fn left_in_queue(&mut self, why: Option<Detail>, interrupted: bool, pool: &str) {
        match why {
            Some(why) => self.detail = why,
            None if interrupted => self.detail = Detail::Interrupted,
            None => self.wait_for_budget(pool),
        }
    }

    /// A PodDisruptionBudget wait that ran out: blocked by what it waited for.
    fn pdb_wait_over(&mut self) {
        self.status = Status::Blocked;
        if let Detail::WaitingForPdb(why) = std::mem::take(&mut self.detail) {
            self.detail = *why;
        }
    }
}

/// How a resumed node picks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// Drained before and still cordoned: only terminate and delete are left.
    Finishing,
    /// Drained before but uncordoned since: cordoned again, drained again.
    Recordoned,
    /// Its recorded replacements are adopted (the record's step).
    Adopting(Step),
}

/// A step of one node's replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeStep {
    /// A replacement a killed run left is picked up.
    Resuming(Resume),
    /// Tainted and cordoned (`Ready,SchedulingDisabled`), recorded.
    Marked,
    /// A replacement's Node is Ready and initialized (and labelled).
    ReplacementReady {
        /// The replacement's Node.
        replacement: String,
    },
    /// A pod was evicted.
    Evicted {
        /// `namespace/name`.
        pod: String,
    },
    /// An eviction was refused (429), with the server's message naming the PDB (reported once
    /// per message).
    EvictionRefused {
        /// `namespace/name`.
        pod: String,
        /// The server's message.
        message: String,
    },
    /// Drained.
    Drained {
        /// Pods evicted.
        evicted: usize,
    },
    /// Drained: its instance terminates once these VolumeAttachments are gone (reported when
    /// the set changes).
    AwaitingDetachment {
        /// The VolumeAttachments awaited.
        attachments: Vec<String>,
    },
    /// Its instance is terminating and its Node deleted.
    Deleted {
        /// The instance, when the node had one.
        instance: Option<String>,
    },
    /// Rolled back: untainted, uncordoned (unless `cordoned` before), `terminated` what was
    /// launched.
    RolledBack {
        /// Left cordoned, as it was before the replacement.
        cordoned: bool,
        /// The instances terminated.
        terminated: Vec<String>,
    },
    /// `--via-controller`: handed over (its NodeClaim, Machine or Node deleted).
    HandedOver {
        /// `NodeClaim`, `Machine` or `Node`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// `--via-controller`: the controller drained and terminated it; the Node is gone.
    GoneByController,
    /// `--via-controller`: its pods are bound again.
    PodsPlacedAgain,
}

/// Progress of a run, in the order it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Something was taken with a caveat (notes of the drift verdicts, a forced handover).
    Warning(String),
    /// A node has a replacement in progress but is not selected: it is left alone.
    NotSelected {
        /// The node.
        node: String,
        /// Its record, as written.
        record: String,
    },
    /// A node a killed `drift replace` left in replacement, met by `consolidate`: left to
    /// `drift replace`, which resumes it when the node is selected.
    LeftToDriftReplace {
        /// The node.
        node: String,
        /// Its record, as written.
        record: String,
    },
    /// A replacement NodeClaim was launched or adopted, or could not be.
    Launch(provisioning::Event),
    /// A step of one node.
    Node {
        /// The node.
        node: String,
        /// The step.
        step: NodeStep,
    },
}

impl Event {
    fn node(node: &str, step: NodeStep) -> Event {
        Event::Node {
            node: node.into(),
            step,
        }
    }
}

/// The cluster as a replacement plans from it: nodes, pods, pools, classes, NodeClaims.
pub fn read_cluster(cluster: &dyn Cluster) -> Result<Manifests, CommandError> {
    Ok(snapshot::read(cluster, Scope::PODS)?.manifests)
}

/// [`read_cluster`] and, with the `CapacityBuffer` gate `on`, the cluster's buffers resolved
/// and their virtual pods among the pending pods (created `now`). The second value: what could
/// not be read and the buffers that provision nothing, one line each.
pub fn read_cluster_with_buffers(
    cluster: &dyn Cluster,
    on: bool,
    now: i64,
) -> Result<(Manifests, Vec<String>), CommandError> {
    let mut m = read_cluster(cluster)?;
    let mut said = buffers::read_live(cluster, on, &mut m)?;
    said.extend(buffers::apply_gate(&mut m, on, now));
    Ok((m, said))
}

/// The exit of a run that ended with `outcomes`: an error (exit 3) when a replacement failed or
/// was rolled back, a finding (exit 1) when nodes are blocked or wait for budget.
pub fn verdict(outcomes: &[NodeOutcome]) -> CommandResult {
    let bad = outcomes.iter().filter(|o| o.status.is_failure()).count();
    if bad > 0 {
        return Err(CommandError::remote(format!(
            "{bad} node(s) were not replaced (see the table); nothing was left half-done: rolled-back nodes serve again, failed drains stay cordoned and resume on re-run"
        )));
    }
    Ok(
        if outcomes
            .iter()
            .any(|o| matches!(o.status, Status::Blocked | Status::WaitingBudget))
        {
            Exit::Finding
        } else {
            Exit::Ok
        },
    )
}
