//! Replacing nodes, the decisions (pure): what is recorded on a node in replacement and how a
//! re-run resumes from it ([`record`]), how many nodes the NodePools' budgets let go now
//! ([`budget`]), and each node's way through the pipeline as a state machine — where it enters,
//! when its replacements count as Ready, how its drain is paced, when it rolls back ([`machine`]).
//! The use case (`usecases::replace`) reads the cluster and the cloud, asks these functions what
//! comes next and does it.
//!
//! A caller hands the pipeline [`Action`]s: one node each, with the disruption [`Method`] that
//! chose it recorded on the node (drift; expiration; consolidation's deletes and its
//! one-NodeClaim replacement, [`Chosen`]) and, for the nodes of one multi-node command, the
//! command (`Action::command`). Every node ends with a [`Status`] and, where it says more, a
//! [`Detail`].

pub mod budget;
pub mod machine;
pub mod record;

#[cfg(test)]
mod tests;

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::disruption::budgets::DisruptionReason;
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
pub use machine::Holding;
pub use record::{claim_name, replacement_name, Record, Step, REPLACEMENT};

pub use crate::model::labels::TERMINATION_FINALIZER;

/// Why a node is disrupted, and so what the pipeline launches for it — recorded on the node
/// (docs/consolidation.md "Doing it"). Karpenter's disruption methods
/// (`pkg/controllers/disruption`) reach the pipeline as one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Drifted (or named on the command line): replacements planned by the solver.
    #[default]
    Drift,
    /// Empty (Karpenter's emptiness): deleted, nothing launched.
    EmptyDelete,
    /// Consolidation found its pods a place on the other nodes: deleted, nothing launched.
    ConsolidationDelete,
    /// Consolidation replaces it with exactly the one cheaper NodeClaim it chose.
    ConsolidationReplace,
    /// Its NodeClaim's `expireAfter` is reached: replaced by whatever its pods need (several
    /// NodeClaims if need be). Forceful for a v1 pool (no budget, nothing blocks the start),
    /// graceful and budgeted like drift for v1beta1/v1alpha5 ([`Method::is_forceful`]).
    Expiration,
    /// A static NodePool runs more NodeClaims than its `replicas` and this one goes
    /// (`disruption::static_scale_down`, docs/karpenter.md §6.11): forceful like v1 expiration
    /// — Karpenter deletes the NodeClaim outright, no budget, nothing blocks the start — and
    /// what its pods need is launched (in dynamic pools) before it drains, as Karpenter's
    /// provisioner would launch for them once evicted; the drain respects PDBs and waits for
    /// do-not-disrupt pods.
    StaticScaleDown,
    /// A drifted NodeClaim of a static NodePool (`spec.replicas`) is replaced by one bare
    /// NodeClaim of its pool's template — no pod is planned, they go where they are scheduled
    /// once evicted (`core v1.14.1: pkg/controllers/disruption/staticdrift.go`,
    /// [`crate::disruption::static_drift`]). Graceful and budgeted like drift.
    StaticDrift,
}

impl Method {
    /// The recorded spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Drift => "drift",
            Method::EmptyDelete => "empty-delete",
            Method::ConsolidationDelete => "consolidation-delete",
            Method::ConsolidationReplace => "consolidation-replace",
            Method::Expiration => "expiration",
            Method::StaticScaleDown => "static-scale-down",
            Method::StaticDrift => "static-drift",
        }
    }

    /// Whether the node is only deleted: nothing is launched for it, its pods must fit on the
    /// nodes that stay.
    pub fn is_delete(self) -> bool {
        matches!(self, Method::EmptyDelete | Method::ConsolidationDelete)
    }

    /// Whether a node it ends is reported `deleted` rather than `replaced`: the deletes, and a
    /// static pool's surplus (what is launched for its pods is not its replacement).
    pub fn deletes(self) -> bool {
        self.is_delete() || self == Method::StaticScaleDown
    }

    /// Whether, for a node of `pool`, it is carried out forcefully: v1 expiration
    /// (`core v1.x pkg/controllers/nodeclaim/expiration/controller.go` deletes the expired
    /// NodeClaim outright; test "should remove nodeclaims that are expired") — no budget, no
    /// do-not-disrupt or PDB check before it starts, and pods that fit nowhere go pending. Its
    /// drain still respects PDBs and waits for do-not-disrupt pods, as Karpenter's termination
    /// controller does (`node/termination/terminator/terminator.go Drain`). Before v1
    /// (`v0.37 pkg/controllers/disruption/expiration.go`) expiration is graceful: budgeted and
    /// blocked like drift.
    pub fn is_forceful(self, pool: &NodePool) -> bool {
        self == Method::StaticScaleDown
            || self == Method::Expiration
                && !matches!(
                    pool.generation,
                    Some(ApiGeneration::V1Beta1 | ApiGeneration::V1Alpha5)
                )
    }

    /// The disruption budget reason it counts against (v1 budgets per reason,
    /// docs/karpenter.md §5.2). Expiration has none in v1 (it is forceful, unbudgeted); a
    /// v1beta1 pool's budgets apply to every reason and v1alpha5 has none, so `Drifted` serves.
    pub fn budget_reason(self) -> DisruptionReason {
        match self {
            Method::Drift | Method::Expiration | Method::StaticScaleDown | Method::StaticDrift => {
                DisruptionReason::Drifted
            }
            Method::EmptyDelete => DisruptionReason::Empty,
            Method::ConsolidationDelete | Method::ConsolidationReplace => {
                DisruptionReason::Underutilized
            }
        }
    }
}

impl<'de> Deserialize<'de> for Method {
    /// A method this version does not know (a newer one wrote it) reads as drift: a re-run then
    /// plans replacements for the node's pods, the safe way to finish it.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok([
            Method::EmptyDelete,
            Method::ConsolidationDelete,
            Method::ConsolidationReplace,
            Method::Expiration,
            Method::StaticScaleDown,
            Method::StaticDrift,
        ]
        .into_iter()
        .find(|m| m.as_str() == text)
        .unwrap_or(Method::Drift))
    }
}

/// The one NodeClaim consolidation chose to replace a node with: the replacement planned for
/// the node's pods is narrowed to it, or the node is not started (the decision changed).
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// Its NodePool.
    pub node_pool: String,
    /// The instance types it may launch as, cheapest first.
    pub instance_types: Vec<String>,
    /// Its capacity type.
    pub capacity_type: String,
    /// The zones it may land in.
    pub zones: Vec<String>,
}

/// One node to take out of the cluster, and why: what a caller hands the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The node, as the caller's snapshot has it.
    pub node: Node,
    /// Its NodePool (Provisioner): its budgets, its generation's disruption taint.
    pub pool: NodePool,
    /// The disruption method, recorded on the node.
    pub method: Method,
    /// For [`Method::ConsolidationReplace`]: the NodeClaim chosen.
    pub chosen: Option<Chosen>,
    /// The reason shown and recorded (a drift reason, `Requested`; a resumed replacement's
    /// recorded one).
    pub reason: String,
    /// The nodes of the one command it belongs to, in order (Karpenter's multi-node
    /// consolidation: marked together, one launch — by the first — for all their pods, drained
    /// once it is Ready); empty when it goes alone.
    pub command: Vec<String>,
}

impl Action {
    /// Whether it is one of several nodes disrupted as one command.
    pub fn in_command(&self) -> bool {
        self.command.len() > 1
    }
}

/// An action waiting for its turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    /// The action.
    pub action: Action,
    /// A replacement already in progress on the node (a re-run resumes it).
    pub record: Option<Record>,
    /// Its entry in the run's outcomes.
    pub outcome: usize,
    /// Since when (the clock's monotonic time) a PodDisruptionBudget at zero holds it back: it
    /// waits up to the drain timeout for the pods that budget covers to be healthy again.
    pub pdb_wait: Option<Duration>,
    /// Not to be picked before then (monotonic).
    pub not_before: Option<Duration>,
}

impl Queued {
    /// A fresh entry for `action`, its record read from its node.
    pub fn new(action: Action, outcome: usize) -> Queued {
        Queued {
            record: Record::of(&action.node),
            action,
            outcome,
            pdb_wait: None,
            not_before: None,
        }
    }

    /// Its pool's name.
    pub fn pool(&self) -> &str {
        &self.action.pool.name
    }

    /// Whether a PodDisruptionBudget at zero that holds it back (`pdb_only`: nothing else
    /// does) is worth waiting for at `now`: the first time it is seen, until `timeout` has
    /// passed since.
    pub fn waits_for_pdb(&mut self, pdb_only: bool, now: Duration, timeout: Duration) -> bool {
        let since = *self.pdb_wait.get_or_insert(now);
        pdb_only && now.saturating_sub(since) < timeout
    }

    /// Whether its PDB wait is over (`timeout` passed): it is blocked then.
    pub fn pdb_wait_expired(&self, now: Duration, timeout: Duration) -> bool {
        self.pdb_wait
            .is_some_and(|since| now.saturating_sub(since) >= timeout)
    }
}

/// Where a node stands when a run ends (the `status` of the `ReplacementReport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Starts now (a dry run: would start).
    Planned,
    /// Behind the budgets, or not started (an interruption, failures before it).
    Queued,
    /// Cannot go: the blocker is named.
    Blocked,
    /// No budget now, and nothing in progress that would free one.
    WaitingBudget,
    /// Replaced: its replacements serve its pods, it is gone.
    Replaced,
    /// Deleted (a delete method): its pods moved to the other nodes, it is gone.
    Deleted,
    /// Undone: the node serves again, what was launched is terminated.
    RolledBack,
    /// Stopped midway (a drain timed out): cordoned, resumed by a re-run.
    Failed,
    /// Left the cluster before it started.
    Gone,
    /// Left alone when its turn came: the reason it was taken no longer holds (its drift
    /// went away meanwhile).
    Skipped,
}

impl Status {
    /// The report's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Planned => "planned",
            Status::Queued => "queued",
            Status::Blocked => "blocked",
            Status::WaitingBudget => "waiting-budget",
            Status::Replaced => "replaced",
            Status::Deleted => "deleted",
            Status::RolledBack => "rolled-back",
            Status::Failed => "failed",
            Status::Gone => "gone",
            Status::Skipped => "skipped",
        }
    }

    /// A replacement that did not succeed (exit 3).
    pub fn is_failure(self) -> bool {
        matches!(self, Status::RolledBack | Status::Failed)
    }

    /// The `outcome` of the `ReplacementReport` (docs/spec.md §5.6: replaced | blocked |
    /// skipped | failed), the coarse class of the status: gone (replaced or deleted), held
    /// (blocked, or no budget now), not acted on (planned or queued — a dry run changes
    /// nothing —, or the node left the cluster first), undone or stopped midway.
    pub fn outcome(self) -> Outcome {
        match self {
            Status::Replaced | Status::Deleted => Outcome::Replaced,
            Status::Blocked | Status::WaitingBudget => Outcome::Blocked,
            Status::Planned | Status::Queued | Status::Gone | Status::Skipped => Outcome::Skipped,
            Status::RolledBack | Status::Failed => Outcome::Failed,
        }
    }
}

/// A node's outcome as the `ReplacementReport` names it (docs/spec.md §5.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Replaced (or deleted): it is gone, its pods served elsewhere.
    Replaced,
    /// Held: `blockedBy` names what holds it.
    Blocked,
    /// Not acted on.
    Skipped,
    /// Rolled back or stopped midway.
    Failed,
}

impl Outcome {
    /// `replaced`, `blocked`, `skipped`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Replaced => "replaced",
            Outcome::Blocked => "blocked",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        }
    }
}

/// What a node's status says more (the report's `detail`). The words are the renderer's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Detail {
    /// Nothing more.
    #[default]
    None,
    /// What blocks its drain, named: PodDisruptionBudgets at zero, do-not-disrupt.
    Blocker(String),
    /// Pods that fit nowhere else (`namespace/name: why`).
    Unplaceable(Vec<String>),
    /// Its pods would land on an existing node that is not initialized yet: disruption never
    /// relies on such a node (core v1.14.1 `pkg/controllers/disruption/helpers.go`
    /// `SimulateScheduling`, `UninitializedNodeError`; drift skips the candidate this pass).
    /// It is looked at again by a later run (or pass of `--watch`).
    UninitializedDestination {
        /// The node not initialized.
        node: String,
        /// The pods that would land on it (`namespace/name`).
        pods: Vec<String>,
    },
    /// A PodDisruptionBudget at zero holds it back for now (the blocker); it is looked at
    /// again until the drain timeout.
    WaitingForPdb(Box<Detail>),
    /// Queued until its NodePool's budget (or `--max-parallel`) has room.
    StartsWhenRoom {
        /// The pool.
        pool: String,
    },
    /// Its NodePool's budget allows no more now.
    NoBudget {
        /// The pool.
        pool: String,
    },
    /// A delete whose pods no longer fit on the other nodes (they would need new NodeClaims
    /// of these types): decided again.
    NoLongerFits {
        /// The instance types the pods would need.
        would_launch: Vec<String>,
    },
    /// A consolidation replacement whose plan no longer matches the NodeClaim chosen (what
    /// the plan needs instead): decided again.
    DecisionChanged(String),
    /// Resumes a replacement a killed run left at this step.
    Resumes(Step),
    /// Judged again as its turn came, the node is no longer drifted (`was`: the reason it was
    /// taken for; `now`: the verdict's explanation): left.
    NoLongerDrifted {
        /// The drift reason it was selected for.
        was: String,
        /// What the verdict says now.
        now: String,
    },
    /// The node left the cluster before it started.
    LeftTheCluster,
    /// Someone else began deleting the node before it started: no candidate any more.
    BeingDeleted,
    /// Not started: the run was interrupted.
    Interrupted,
    /// Not started: replacements failed in a row before it.
    AfterFailures {
        /// How many in a row.
        in_a_row: usize,
        /// The last one's detail.
        last: Box<Detail>,
    },
    /// Rolled back: a replacement could not be launched.
    LaunchFailed(String),
    /// Rolled back: a replacement resolved to the instance of a node being replaced.
    InstanceCollision,
    /// Rolled back: the instances of these replacements went (shutting down or terminated: a
    /// spot reclaim, a failed boot) before their nodes served (`core v1.14.1:
    /// pkg/controllers/disruption/queue.go waitOrTerminate`, "replacement was deleted").
    ReplacementGone(Vec<String>),
    /// Rolled back: the replacements were not Ready in time.
    NotReady {
        /// The ready timeout.
        after: Duration,
    },
    /// A resumed node whose node class does not resolve now: rolled back, with the error.
    ClassFailed(String),
    /// The drain timed out; the node stays cordoned (a re-run resumes it).
    DrainTimedOut {
        /// The node.
        node: String,
        /// The drain timeout.
        after: Duration,
        /// What still holds it.
        holding: Holding,
    },
    /// Drained, but its volumes were still attached after the timeout; the node stays
    /// cordoned (a re-run resumes the wait).
    VolumesStillAttached {
        /// The node.
        node: String,
        /// The timeout.
        after: Duration,
        /// The VolumeAttachments still there.
        attachments: Vec<String>,
    },
    /// `--via-controller`: what is deleted to hand the node over.
    HandOver {
        /// `NodeClaim`, `Machine` or `Node`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// `--via-controller`: a kubectl-karpenter replacement is in progress on the node.
    ReplacementInProgress,
    /// `--via-controller`: its NodeClaim (Machine) is being deleted already.
    ClaimDeleting {
        /// `NodeClaim` or `Machine`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// `--via-controller`: no NodeClaim (Machine) owns the node and it lacks Karpenter's
    /// finalizer, so the controller would not drain it.
    NotTheControllers {
        /// `NodeClaim` or `Machine`: what would own it.
        owner: &'static str,
    },
    /// `--via-controller`: no handover after a node failed.
    AfterHandoverFailure {
        /// The node that failed.
        node: String,
    },
    /// `--via-controller`: the controller still drains the node after the drain timeout.
    ControllerStillDraining {
        /// The drain timeout.
        after: Duration,
    },
    /// `--via-controller`: the node's pods are still pending after the ready timeout.
    PodsStillPending {
        /// Workloads with pods pending.
        workloads: usize,
        /// The ready timeout.
        after: Duration,
    },
}
