//! `--via-controller`: the operator-paced rollout for clusters where Karpenter runs (docs/spec.md §6).
//! Nothing is marked, launched or drained here: one budget's worth of drifted NodeClaims
//! (v1alpha5: Machines, or Nodes carrying Karpenter's termination finalizer) is deleted, and
//! the controller does what it does for any deleted NodeClaim — its finalizer taints and drains
//! the node (PDBs, do-not-disrupt, grace periods) and terminates the instance, and its
//! provisioner launches capacity for the pods that went pending. Each node is done when its
//! Node is gone and the pods that ran on it are bound again; the next node starts as soon as
//! the budget has room.
//!
//! A re-run resumes by itself: nodes already being deleted are the controller's, never
//! deleted twice, and count against the budgets.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use super::pipeline::PDB_RETRY;
use super::plan::{NodePlan, Planner};
use super::select::pods_to_move;
use super::steps::{self, is_reschedulable, Claim};
use super::{Event, NodeOutcome, NodeStep, Settings};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::budgets::TerminatingInstances;
use crate::disruption::drain;
use crate::disruption::replace::budget::{controller_free_slots, pools_of};
use crate::disruption::replace::{Action, Detail, Queued, Status, TERMINATION_FINALIZER};
use crate::error::CommandError;
use crate::k8s::{coexist, ops, Cluster};
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::Sink;

/// How often the controller's progress is looked at (as often as Karpenter polls its own).
const TICK: Duration = Duration::from_secs(1);

/// What is deleted to hand a node to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// `NodeClaim`, `Machine` or `Node`.
    kind: &'static str,
    name: String,
    path: String,
}

/// Pods are matched across their re-creation by their controller: namespace, kind, name.
type OwnerKey = (String, String, String);

/// The handover, planned: what is deleted for each node, which go at once.
#[derive(Debug, Clone)]
pub struct Handover {
    outcomes: Vec<NodeOutcome>,
    queue: Vec<(Queued, Target)>,
    /// The nodes whose NodeClaim's instance is terminating, left out of the budgets.
    terminating: TerminatingInstances,
}

impl Handover {
    /// Every node's outcome so far.
    pub fn outcomes(&self) -> &[NodeOutcome] {
        &self.outcomes
    }

    /// What is deleted at once (`NodeClaim name`, …).
    pub fn starting(&self) -> Vec<String> {
        self.queue
            .iter()
            .filter(|(q, _)| self.outcomes[q.outcome].status == Status::Planned)
            .map(|(_, t)| format!("{} {}", t.kind, t.name))
            .collect()
    }

    /// How many follow as the budgets allow.
    pub fn queued(&self) -> usize {
        self.queue.len() - self.starting().len()
    }

    /// The outcomes, nothing having been handed over.
    pub fn into_outcomes(self) -> Vec<NodeOutcome> {
        self.outcomes
    }
}

/// Plans handing the nodes of `actions` to the controller. Refuses (exit 4) when no controller
/// runs to act on what is deleted, unless `--force`.
pub fn prepare<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    m: &Manifests,
    actions: Vec<Action>,
    settings: &Settings,
    events: &mut dyn Sink<Event>,
) -> Result<Handover, CommandError> {
    require_controller(live.cluster, settings.force, events)?;
    let pdbs = steps::pdbs(live.cluster)?;
    let now = live.clock.now();
    let planner = Planner::new(
        m,
        &pdbs,
        &BTreeSet::new(),
        Vec::new(),
        settings.force,
        now,
        settings.policies,
    );
    let mut outcomes = Vec::new();
    let mut queue = Vec::new();
    for (i, action) in actions.into_iter().enumerate() {
        outcomes.push(NodeOutcome::queued(&action, pods_to_move(m, &action.node)));
        let q = Queued::new(action, i);
        let o = &mut outcomes[i];
        let (node, pool) = (&q.action.node, &q.action.pool);
        if q.record.is_some() {
            o.status = Status::Blocked;
            o.detail = Detail::ReplacementInProgress;
            continue;
        }
        let target = match target_of(live.cluster, m, node, pool)? {
            Ok(t) => t,
            Err(why) => {
                o.status = Status::Blocked;
                o.detail = why;
                continue;
            }
        };
        // The controller's drain would wait on these forever, with the node tainted.
        if let Some(NodePlan::Blocked { why, .. }) = planner.drain_blocker(node, pool) {
            o.status = Status::Blocked;
            o.detail = why;
            continue;
        }
        o.detail = Detail::HandOver {
            kind: target.kind,
            name: target.name.clone(),
        };
        queue.push((q, target));
    }
    // The first budget's worth starts at once; the rest follow as nodes finish.
    let pools = pools_of(queue.iter().map(|(q, _)| q));
    // Budgets leave out the nodes whose instance is already terminating (core v1.14.1:
    // `disruption/helpers.go BuildDisruptionBudgetMapping`).
    let terminating = TerminatingInstances::of(&m.node_claims);
    let mut slots = controller_free_slots(
        &pools,
        &terminating.counted(&m.nodes),
        &BTreeMap::new(),
        now,
    );
    let mut starting = 0;
    for (q, _) in &queue {
        let o = &mut outcomes[q.outcome];
        if starting < settings.max_parallel && slots.has_room(q.pool()) {
            slots.take(q.pool());
            starting += 1;
            o.status = Status::Planned;
        } else {
            o.status = Status::Queued;
        }
    }
    if starting == 0 {
        for (q, _) in &queue {
            outcomes[q.outcome].wait_for_budget(q.pool());
        }
        queue.clear();
    }
    Ok(Handover {
        outcomes,
        queue,
        terminating,
    })
}

/// Refuses (exit 4) when no controller would act on what is deleted, unless `force` (warned).
fn require_controller(
    cluster: &dyn Cluster,
    force: bool,
    events: &mut dyn Sink<Event>,
) -> Result<(), CommandError> {
    let running = coexist::find_controllers(cluster)?
        .into_iter()
        .any(|(c, _)| c.ready_replicas > 0);
    if running {
        return Ok(());
    }
    let what = "no Karpenter controller is running in the cluster (no controller Deployment with ready replicas): nothing would drain and replace what --via-controller deletes";
    if force {
        events.emit(Event::Warning(format!(
            "{what}; --force given, going ahead"
        )));
        return Ok(());
    }
    Err(CommandError::refused(what).with_hint(
        "run `drift replace` without --via-controller to replace the nodes with this tool",
    ))
}

/// The NodeClaim (Machine) of the node, or — for v1alpha5 before Machines — the Node itself
/// when Karpenter's finalizer is on it; `Err(why)` when the controller does not own the node.
fn target_of(
    cluster: &dyn Cluster,
    m: &Manifests,
    node: &Node,
    pool: &NodePool,
) -> Result<Result<Target, Detail>, CommandError> {
    if let Some(claim) = Claim::of(m, node) {
        if claim.deleting {
            return Ok(Err(Detail::ClaimDeleting {
                kind: claim.kind,
                name: claim.name,
            }));
        }
        return Ok(Ok(Target {
            kind: claim.kind,
            name: claim.name,
            path: claim.path,
        }));
    }
    let v1alpha5 = pool.generation == Some(ApiGeneration::V1Alpha5);
    if v1alpha5 {
        let path = format!("/api/v1/nodes/{}", node.name);
        let live: Option<serde_json::Value> = ops::get(cluster, &path)?;
        let finalized = live
            .as_ref()
            .and_then(|n| n.pointer("/metadata/finalizers"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x == TERMINATION_FINALIZER));
        if finalized {
            return Ok(Ok(Target {
                kind: "Node",
                name: node.name.clone(),
                path,
            }));
        }
    }
    Ok(Err(Detail::NotTheControllers {
        owner: if v1alpha5 { "Machine" } else { "NodeClaim" },
    }))
}

/// A node handed over.
enum Stage {
    /// Deleted; the controller drains and terminates the node.
    Deleting,
    /// The node is gone (since then); its pods are being placed again (by the controller's new
    /// capacity).
    Rescheduling(Duration),
}

struct Job {
    queued: Queued,
    owners: BTreeSet<OwnerKey>,
    stage: Stage,
    started: Duration,
}

/// Hands the nodes over at the budget's pace and follows each until it is replaced. Ctrl-C
/// (the clock's stop): the nodes handed over are followed to the end, no other goes. Neither
/// after a node failed: the controller is not keeping up (a PDB, limits, no capacity), and
/// handing it more nodes would strand more pods.
pub fn run<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    handover: Handover,
    settings: &Settings,
    events: &mut dyn Sink<Event>,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let Handover {
        mut outcomes,
        queue,
        terminating,
    } = handover;
    let cluster: &dyn Cluster = live.cluster;
    let clock = live.clock;
    let pools = pools_of(queue.iter().map(|(q, _)| q));
    let mut queue: VecDeque<(Queued, Target)> = queue.into();
    let mut active: Vec<Job> = Vec::new();
    let mut failed: Option<String> = None;
    loop {
        let nodes = steps::live_nodes(cluster)?;
        let unbound = if active
            .iter()
            .any(|j| matches!(j.stage, Stage::Rescheduling(_)))
        {
            unbound_owners(cluster)?
        } else {
            BTreeSet::new()
        };
        let mut i = 0;
        while i < active.len() {
            let job = &mut active[i];
            let name = job.queued.action.node.name.clone();
            let o = &mut outcomes[job.queued.outcome];
            let now = clock.monotonic();
            let finished = match job.stage {
                Stage::Deleting if nodes.iter().any(|n| n.name == name) => {
                    if now.saturating_sub(job.started) >= settings.drain_timeout {
                        o.status = Status::Failed;
                        o.detail = Detail::ControllerStillDraining {
                            after: settings.drain_timeout,
                        };
                        true
                    } else {
                        false
                    }
                }
                Stage::Deleting => {
                    events.emit(Event::node(&name, NodeStep::GoneByController));
                    job.stage = Stage::Rescheduling(now);
                    false
                }
                Stage::Rescheduling(since) => {
                    let waiting = job.owners.intersection(&unbound).count();
                    if waiting == 0 {
                        events.emit(Event::node(&name, NodeStep::PodsPlacedAgain));
                        o.status = Status::Replaced;
                        o.seconds =
                            (now.saturating_sub(job.started).as_secs_f64() * 10.0).round() / 10.0;
                        true
                    } else if now.saturating_sub(since) >= settings.ready_timeout {
                        o.status = Status::Failed;
                        o.detail = Detail::PodsStillPending {
                            workloads: waiting,
                            after: settings.ready_timeout,
                        };
                        true
                    } else {
                        false
                    }
                }
            };
            if finished {
                if o.status == Status::Failed {
                    failed = Some(name);
                }
                active.remove(i);
            } else {
                i += 1;
            }
        }
        let stopping = clock.stop_requested() || failed.is_some();
        if !stopping && !queue.is_empty() && active.len() < settings.max_parallel {
            let handed_over: BTreeMap<String, String> = active
                .iter()
                .map(|j| {
                    (
                        j.queued.action.node.name.clone(),
                        j.queued.pool().to_string(),
                    )
                })
                .collect();
            let counted = terminating.counted(&nodes);
            let mut slots = controller_free_slots(&pools, &counted, &handed_over, clock.now());
            let mut rest = VecDeque::new();
            for (mut q, target) in queue.drain(..) {
                let now = clock.monotonic();
                let due = q.not_before.is_none_or(|t| t <= now);
                if active.len() >= settings.max_parallel || !slots.has_room(q.pool()) || !due {
                    rest.push_back((q, target));
                    continue;
                }
                slots.take(q.pool());
                // Read again just before the handover (it cannot be undone): a pod that gained
                // do-not-disrupt, or a PDB at zero, would hold the controller's drain for ever.
                let (node, pool) = (&q.action.node, &q.action.pool);
                let (pods, deleting) = steps::pods_on(cluster, &node.name)?;
                let plan = drain::plan_drain(
                    node,
                    &pods,
                    &steps::pdbs(cluster)?.drain,
                    &deleting,
                    clock.now(),
                    &steps::drain_options(pool, settings.force),
                );
                if plan.is_blocked() {
                    slots.give_back(q.pool());
                    let why = Detail::Blocker(plan.explain_blockers());
                    let o = &mut outcomes[q.outcome];
                    if q.waits_for_pdb(plan.only_pdbs_block(), now, settings.drain_timeout) {
                        // The last node's pods may still be starting: wait for their budget.
                        o.detail = Detail::WaitingForPdb(Box::new(why));
                        q.not_before = Some(now + PDB_RETRY);
                        rest.push_back((q, target));
                    } else {
                        o.status = Status::Blocked;
                        o.detail = why;
                    }
                    continue;
                }
                match ops::delete(cluster, &target.path, None) {
                    Ok(_) => {}
                    Err(e) if e.status() == Some(404) => {}
                    Err(e) => return Err(e.into()),
                }
                events.emit(Event::node(
                    &node.name,
                    NodeStep::HandedOver {
                        kind: target.kind,
                        name: target.name.clone(),
                    },
                ));
                let owners = pods
                    .iter()
                    .filter(|p| is_reschedulable(p))
                    .filter_map(|p| {
                        p.owner
                            .as_ref()
                            .map(|o| (p.namespace.clone(), o.kind.clone(), o.name.clone()))
                    })
                    .collect();
                active.push(Job {
                    queued: q,
                    owners,
                    stage: Stage::Deleting,
                    started: now,
                });
            }
            queue = rest;
        }
        // Nodes held back by a PDB keep the loop going, up to the drain timeout each.
        let now = clock.monotonic();
        let (expired, waiting): (Vec<_>, Vec<_>) = queue
            .drain(..)
            .partition(|(q, _)| q.pdb_wait_expired(now, settings.drain_timeout));
        queue.extend(waiting);
        for (q, _) in expired {
            outcomes[q.outcome].pdb_wait_over();
        }
        let holding = !stopping && queue.iter().any(|(q, _)| q.pdb_wait.is_some());
        if active.is_empty() && !holding {
            let why = failed
                .as_ref()
                .map(|node| Detail::AfterHandoverFailure { node: node.clone() });
            for (q, _) in queue {
                outcomes[q.outcome].left_in_queue(why.clone(), stopping, q.pool());
            }
            return Ok(outcomes);
        }
        clock.pause(TICK);
    }
}

/// The controllers (namespace, kind, name) of the pods no node holds yet.
fn unbound_owners(cluster: &dyn Cluster) -> Result<BTreeSet<OwnerKey>, CommandError> {
    let mut owners = BTreeSet::new();
    ops::list(
        cluster,
        "/api/v1/pods",
        &ops::ListQuery {
            field_selector: Some("spec.nodeName="),
            ..Default::default()
        },
        |p: crate::api::core::Pod| {
            if let Ok(pod) = crate::api::live::live_pod(&p) {
                if let (Some(o), false) = (&pod.owner, pod.is_terminal()) {
                    owners.insert((pod.namespace.clone(), o.kind.clone(), o.name.clone()));
                }
            }
        },
    )?;
    Ok(owners)
}
