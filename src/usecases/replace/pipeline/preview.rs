//! The plan shown before anything changes: each node blocked (its blockers named), starting at
//! once with its planned replacements, or queued behind the budgets.

use std::collections::BTreeMap;

use super::command::{leaving, planned_with};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::budgets::TerminatingInstances;
use crate::disruption::replace::budget::{pools_of, QueueSlots};
use crate::disruption::replace::{Action, Detail, Queued, Status};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::replace::plan::{Intent, NodePlan, Planner};
use crate::usecases::replace::select::{pods_to_move, Recheck};
use crate::usecases::replace::{steps, NodeOutcome, Settings};

/// The plan shown before anything changes: blocked nodes (the blockers named), the nodes that
/// start at once with their planned replacements (`planned`), the rest `queued` behind the
/// budgets — or `waiting-budget` when no node can start now.
#[derive(Debug, Clone)]
pub struct Preview {
    pub(super) outcomes: Vec<NodeOutcome>,
    pub(super) queue: Vec<Queued>,
    /// The nodes whose NodeClaim's instance is terminating, left out of the budgets.
    pub(super) terminating: TerminatingInstances,
    /// Drift judged again as each node starts (`drift replace`).
    pub(super) recheck: Option<Recheck>,
}

impl Preview {
    /// Judges drift again as each node starts: a node no longer drifted is left
    /// ([`Recheck`]).
    pub fn rechecking_drift(self, recheck: Recheck) -> Preview {
        Preview {
            recheck: Some(recheck),
            ..self
        }
    }

    /// Every node's outcome so far.
    pub fn outcomes(&self) -> &[NodeOutcome] {
        &self.outcomes
    }

    /// The nodes that start at once.
    pub fn starting(&self) -> Vec<&str> {
        self.outcomes
            .iter()
            .filter(|o| o.status == Status::Planned)
            .map(|o| o.node.as_str())
            .collect()
    }

    /// How many follow as the budgets allow.
    pub fn queued(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status == Status::Queued)
            .count()
    }

    /// The outcomes, nothing having started.
    pub fn into_outcomes(self) -> Vec<NodeOutcome> {
        self.outcomes
    }
}

/// Previews replacing the nodes of `actions` (in order) from the cluster as `m` has it.
pub fn preview<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    m: &Manifests,
    actions: Vec<Action>,
    settings: &Settings,
) -> Result<Preview, CommandError> {
    let pdbs = steps::pdbs(live.cluster)?;
    let mut outcomes = Vec::new();
    let mut queue = Vec::new();
    for (i, action) in actions.into_iter().enumerate() {
        outcomes.push(NodeOutcome::queued(&action, pods_to_move(m, &action.node)));
        queue.push(Queued::new(action, i));
    }
    let now = live.clock.now();
    // Budgets leave out the nodes whose instance is already terminating (core v1.14.1:
    // `disruption/helpers.go BuildDisruptionBudgetMapping`). Read once: the flag is final, and
    // the nodes this run terminates itself are its replacements, counted apart.
    let terminating = TerminatingInstances::of(&m.node_claims);
    let mut slots = QueueSlots::for_queue(
        &pools_of(&queue),
        &terminating.counted(&m.nodes),
        &queue,
        now,
    );
    let mut planner = Planner::new(
        m,
        &pdbs,
        &settings.gone_instances,
        Vec::new(),
        settings.force,
        now,
        settings.policies,
    );
    planner.leaving(leaving(&queue));
    let mut starting = 0;
    let mut kept = Vec::new();
    let members = planned_with(&queue);
    // A command's first node stands for it: the others follow its outcome.
    let mut leads: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for q in queue {
        if let Some(&lead) = leads.get(&q.action.command) {
            let (status, detail, replacements) = {
                let l = &outcomes[lead];
                (l.status, l.detail.clone(), l.replacements.clone())
            };
            let o = &mut outcomes[q.outcome];
            (o.status, o.detail, o.replacements) = (status, detail, replacements);
            if status == Status::Planned {
                slots.take(q.pool());
                starting += 1;
            }
            if matches!(status, Status::Planned | Status::Queued) {
                kept.push(q);
            }
            continue;
        }
        if q.action.in_command() {
            leads.insert(q.action.command.clone(), q.outcome);
        }
        let o = &mut outcomes[q.outcome];
        let (node, pool) = (&q.action.node, &q.action.pool);
        let intent = Intent::of(&q.action);
        if q.record.is_none() && intent.checks_blockers() {
            // Before anything starts, a PDB at zero blocks (nothing of this run will free it).
            if let Some(NodePlan::Blocked { why, .. }) = planner.drain_blocker(node, pool) {
                o.status = Status::Blocked;
                o.detail = why;
                continue;
            }
        }
        let resuming = q.record.is_some();
        if starting >= settings.max_parallel || !(resuming || slots.has_room(&q)) {
            o.detail = Detail::StartsWhenRoom {
                pool: pool.name.clone(),
            };
            kept.push(q);
            continue;
        }
        if let Some(r) = q.record.as_ref().filter(|r| r.launched_all()) {
            // Resumed past its launch: the recorded instances are adopted, nothing is planned.
            o.status = Status::Planned;
            o.detail = Detail::Resumes(r.step);
            o.replacements = r.instances.clone();
            starting += 1;
            kept.push(q);
            continue;
        }
        let attempt = q
            .record
            .as_ref()
            .map_or(settings.attempt.as_str(), |r| r.started_at.as_str());
        let mut together = vec![node];
        together.extend(
            members
                .get(&q.action.command)
                .into_iter()
                .flatten()
                .filter(|n| n.name != node.name),
        );
        match planner.plan_together(live, &together, pool, attempt, q.record.as_ref(), intent)? {
            NodePlan::Blocked { why, .. } => {
                o.status = Status::Blocked;
                o.detail = why;
                continue;
            }
            NodePlan::Replace { claims, .. } => {
                o.status = Status::Planned;
                o.replacements = claims
                    .iter()
                    .map(|nc| format!("{} ({})", nc.name, nc.launch.instance_type))
                    .collect();
            }
        }
        if !resuming {
            slots.take(&pool.name);
        }
        starting += 1;
        kept.push(q);
    }
    if starting == 0 {
        for q in &kept {
            outcomes[q.outcome].wait_for_budget(q.pool());
        }
        kept.clear();
    }
    Ok(Preview {
        outcomes,
        queue: kept,
        terminating,
        recheck: None,
    })
}
