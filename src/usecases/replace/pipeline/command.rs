//! The nodes of one command (Karpenter's multi-node consolidation, `queue.go StartCommand`,
//! `waitOrTerminate`): picked together, the first planning and launching for all their pods,
//! the others following it — marked with it, waiting for its replacement, rolled back with it,
//! or blocked and held back as it is.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{roll_back, Job, Pipeline};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::replace::machine::State;
use crate::disruption::replace::{Queued, Record, Status, Step};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::node::Node;
use crate::usecases::clock::Clock;
use crate::usecases::replace::plan::Planner;
use crate::usecases::replace::steps::{self, Claim};

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Pipeline<'_, '_, C, P, K> {
    /// Where a node of a command other than its first enters, once the first (`lead`: its
    /// outcome and node) has: a job following it when it is planned or waiting for its
    /// replacement, the first's blocker, back in the queue with it — or alone, as any node,
    /// when the first is past its launch or gone.
    pub(super) fn follower(
        &mut self,
        snapshot: &Manifests,
        planner: &mut Planner<'_>,
        q: Queued,
        queue: &mut VecDeque<Queued>,
        (lead, lead_node): (usize, &str),
        planned: &[Job],
    ) -> Result<Option<Job>, CommandError> {
        let launching =
            |j: &&Job| j.node.name == lead_node && matches!(j.state, State::Launching { .. });
        let first = planned
            .iter()
            .find(|j| j.node.name == lead_node)
            .or_else(|| self.active.iter().find(launching));
        let own = q.record.as_ref().filter(|r| r.launched_all());
        let node = snapshot.nodes.iter().find(|n| n.name == q.action.node.name);
        if let (Some(first), None, Some(node)) = (first, own, node) {
            let record = Record {
                step: Step::Marked,
                method: q.action.method,
                node_claims: first.record.node_claims.clone(),
                instances: Vec::new(),
                reason: q.action.reason.clone(),
                started_at: first.record.started_at.clone(),
                cordoned_before: q
                    .record
                    .as_ref()
                    .map_or(node.unschedulable, |r| r.cordoned_before),
                command: q.action.command.clone(),
                annotations: first.record.annotations.clone(),
            };
            let mut job = self.job(snapshot, node, &q, record, State::Planned);
            job.follows = Some(lead);
            return Ok(Some(job));
        }
        if let Some(back) = queue.iter().find(|b| b.outcome == lead) {
            let (pdb_wait, not_before) = (back.pdb_wait, back.not_before);
            self.outcomes[q.outcome].detail = self.outcomes[lead].detail.clone();
            queue.push_back(Queued {
                pdb_wait,
                not_before,
                ..q
            });
            return Ok(None);
        }
        if own.is_none() && self.outcomes[lead].status == Status::Blocked {
            let detail = self.outcomes[lead].detail.clone();
            let o = &mut self.outcomes[q.outcome];
            o.status = Status::Blocked;
            o.detail = detail;
            return Ok(None);
        }
        self.enter(snapshot, planner, q, queue, &[])
    }

    /// A node of a command once its first node launched: it waits for the same replacement
    /// (recorded as launched), or — the launch rolled back — is rolled back too (it launched
    /// nothing of its own).
    pub(super) fn follow(&mut self, mut job: Job) -> Result<(), CommandError> {
        let lead = job.follows.unwrap_or(job.outcome);
        let replacements = self.active.iter().find_map(|j| match &j.state {
            State::Launching { replacements, .. } if j.outcome == lead => {
                Some(replacements.clone())
            }
            _ => None,
        });
        let Some(replacements) = replacements else {
            let events = &mut *self.events;
            roll_back(
                self.live.cluster,
                self.live.cloud,
                events,
                &job.node,
                &job.pool,
                &job.record,
                &[],
            )?;
            let detail = self.outcomes[lead].detail.clone();
            let o = &mut self.outcomes[job.outcome];
            o.status = Status::RolledBack;
            o.detail = detail;
            return Ok(());
        };
        job.record.step = Step::Launched;
        job.record.instances = replacements.iter().map(|r| r.instance_id.clone()).collect();
        steps::annotate(self.live.cluster, &job.node.name, &job.record)?;
        self.outcomes[job.outcome].replacements = self.outcomes[lead].replacements.clone();
        job.started = self.monotonic();
        self.wait_for(&mut job, replacements);
        self.active.push(job);
        Ok(())
    }

    /// A job for `node`, entering at `state` with `record`.
    fn job(
        &self,
        snapshot: &Manifests,
        node: &Node,
        q: &Queued,
        record: Record,
        state: State,
    ) -> Job {
        Job {
            node: node.clone(),
            claim: Claim::of(snapshot, node),
            pool: super::start::fresh_pool(snapshot, q),
            record,
            outcome: q.outcome,
            state,
            started: self.monotonic(),
            reserved: Vec::new(),
            launch: None,
            follows: None,
        }
    }
}

/// The nodes of `queue` that leave whatever their turn: deleted (a delete method), in a
/// command, or forcefully expired — never capacity for the others' pods.
pub(super) fn leaving<'q>(queue: impl IntoIterator<Item = &'q Queued>) -> Vec<String> {
    queue
        .into_iter()
        .filter(|q| {
            let a = &q.action;
            a.method.is_delete() || a.in_command() || a.method.is_forceful(&a.pool)
        })
        .map(|q| q.action.node.name.clone())
        .collect()
}

/// Splits the picked nodes into those that enter by themselves — alone, or first of their
/// command — and the other nodes of a command (which follow its first).
pub(super) fn commands(picked: Vec<Queued>) -> (Vec<Queued>, Vec<Queued>) {
    let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
    picked
        .into_iter()
        .partition(|q| !q.action.in_command() || seen.insert(q.action.command.clone()))
}

/// The nodes of each command planned with its first: those not past their launch (a node
/// that is adopts its own record).
pub(super) fn planned_with<'q>(
    queue: impl IntoIterator<Item = &'q Queued>,
) -> BTreeMap<Vec<String>, Vec<Node>> {
    let mut out: BTreeMap<Vec<String>, Vec<Node>> = BTreeMap::new();
    for q in queue {
        if q.action.in_command() && !q.record.as_ref().is_some_and(Record::launched_all) {
            out.entry(q.action.command.clone())
                .or_default()
                .push(q.action.node.clone());
        }
    }
    out
}
