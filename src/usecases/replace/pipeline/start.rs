//! Starting a node: a fresh snapshot, the budget's room checked again, its replacement planned,
//! the node marked — or, on a re-run, its recorded step taken up where it stopped.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::command::{commands, leaving, planned_with};
use super::{gone_as, roll_back, terminate, Job, Launchable, Pipeline, PDB_RETRY};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::replace::budget::{pools_of, QueueSlots};
use crate::disruption::replace::machine::{entry, Detaching, Drain, Entry, Replacement, State};
use crate::disruption::replace::{Detail, Queued, Record, Status, Step};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::scheduling::Plan;
use crate::usecases::clock::Clock;
use crate::usecases::replace::plan::{Intent, NodePlan, Planner};
use crate::usecases::replace::steps::Claim;
use crate::usecases::replace::{steps, Event, NodeStep, Resume};

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Pipeline<'_, '_, C, P, K> {
    /// Starts the picked nodes: one fresh snapshot, each node planned against it (after the
    /// nodes already in progress and the ones planned before it), all marked, then their
    /// replacements launched.
    pub(super) fn start(
        &mut self,
        picked: Vec<Queued>,
        queue: &mut VecDeque<Queued>,
    ) -> Result<Vec<NodePool>, CommandError> {
        let (snapshot, _) = crate::usecases::replace::read_cluster_with_buffers(
            self.live.cluster,
            self.settings.capacity_buffers,
            self.live.clock.now(),
        )?;
        let picked = self.within_budgets(&snapshot, picked, queue);
        if picked.is_empty() {
            return Ok(snapshot.node_pools);
        }
        let pdbs = steps::pdbs(self.live.cluster)?;
        let mut busy: BTreeSet<String> = self
            .active
            .iter()
            .flat_map(Job::instances)
            .chain(self.replaced_into.iter().cloned())
            .collect();
        busy.extend(self.launched_unrecorded(&snapshot)?);
        let reserved: Vec<Pod> = self
            .active
            .iter()
            .flat_map(|j| j.reserved.clone())
            .collect();
        let now = self.live.clock.now();
        let mut planner = Planner::new(
            &snapshot,
            &pdbs,
            &busy,
            reserved,
            self.settings.force,
            now,
            self.settings.policies,
        );
        planner.leaving(leaving(picked.iter().chain(queue.iter())));
        let (leads, followers) = commands(picked);
        let members = planned_with(followers.iter());
        let mut planned: Vec<Job> = Vec::new();
        let mut firsts = Vec::new();
        for q in leads {
            // The other nodes as read now (a blocker may have appeared on any of them).
            let with: Vec<&Node> = members
                .get(&q.action.command)
                .into_iter()
                .flatten()
                .filter(|n| n.name != q.action.node.name)
                .filter_map(|n| snapshot.nodes.iter().find(|s| s.name == n.name))
                .collect();
            firsts.push((
                q.action.command.clone(),
                q.outcome,
                q.action.node.name.clone(),
            ));
            if let Some(job) = self.enter(&snapshot, &mut planner, q, queue, &with)? {
                planned.push(job);
            }
        }
        // The other nodes of a command follow its first node: marked with it, waiting for
        // the replacement it launches, or blocked, held back or entering alone as it did.
        for q in followers {
            let Some((_, lead, lead_node)) = firsts.iter().find(|f| f.0 == q.action.command) else {
                continue;
            };
            if let Some(job) = self.follower(
                &snapshot,
                &mut planner,
                q,
                queue,
                (*lead, lead_node),
                &planned,
            )? {
                planned.push(job);
            }
        }
        // Every planned node is marked before any launch: a node takes its budget slot (and
        // stops taking pods) at once, not after the launches of the nodes before it.
        for job in &mut planned {
            steps::mark(self.live.cluster, &job.node, &job.pool, &job.record)?;
            self.events
                .emit(Event::node(&job.node.name, NodeStep::Marked));
            job.state = State::Marked;
        }
        let (following, launching): (Vec<Job>, Vec<Job>) =
            planned.into_iter().partition(|j| j.follows.is_some());
        for job in launching {
            self.launch(&snapshot, job)?;
        }
        for job in following {
            self.follow(job)?;
        }
        Ok(snapshot.node_pools)
    }

    /// The picked nodes the NodePools' budgets, as read in `snapshot`, still let start; the
    /// others go back to the front of `queue` (a command's nodes with its first). A budget
    /// lowered since the nodes were picked — an operator pausing a rollout with `nodes: "0"` —
    /// holds back what has not started (core v1.14.1 `disruption/validation.go`
    /// `validateCandidates`: the budget mapping is built again right before a command starts).
    fn within_budgets(
        &self,
        snapshot: &Manifests,
        picked: Vec<Queued>,
        queue: &mut VecDeque<Queued>,
    ) -> Vec<Queued> {
        let pools: Vec<NodePool> = pools_of(&picked)
            .into_iter()
            .map(|p| {
                let fresh = snapshot.node_pools.iter().find(|f| f.name == p.name);
                fresh.cloned().unwrap_or(p)
            })
            .collect();
        let counted = self.terminating.counted(&snapshot.nodes);
        let now = self.live.clock.now();
        let mut slots = QueueSlots::for_queue(&pools, &counted, &picked, now);
        let (mut kept, mut back): (Vec<Queued>, Vec<Queued>) = (Vec::new(), Vec::new());
        for q in picked {
            let resuming = q.record.is_some();
            let lead = |k: &Queued| q.action.in_command() && k.action.command == q.action.command;
            let fits = if q.action.in_command() && back.iter().any(lead) {
                false
            } else {
                resuming || kept.iter().any(lead) || slots.has_room(&q)
            };
            if !fits {
                back.push(q);
                continue;
            }
            if !resuming {
                slots.take(q.pool());
            }
            kept.push(q);
        }
        for q in back.into_iter().rev() {
            queue.push_front(q);
        }
        kept
    }

    /// The instances of nodes marked by a run killed after its launch went through but before
    /// its record named them: found by their NodeClaims' tags. Not capacity — once registered
    /// they are that node's replacements, adopted again by name when it is re-planned (else a
    /// re-plan would move its pods onto them as spare room, and nobody would label them).
    fn launched_unrecorded(&self, snapshot: &Manifests) -> Result<Vec<String>, CommandError> {
        let records: Vec<Record> = snapshot.nodes.iter().filter_map(Record::of).collect();
        let claims: Vec<&str> = records
            .iter()
            .filter(|r| r.step == Step::Marked && r.instances.is_empty())
            .flat_map(|r| r.node_claims.iter().map(String::as_str))
            .collect();
        let found = self.live.instances_of_claims(&claims)?;
        Ok(found.into_iter().map(|i| i.id).collect())
    }

    /// Where a picked node enters (its record read afresh): finished, re-drained or adopted
    /// at once, or planned — `Some` job then, to mark and launch — or blocked, or back in the
    /// queue behind a PDB at zero.
    pub(super) fn enter(
        &mut self,
        snapshot: &Manifests,
        planner: &mut Planner<'_>,
        mut q: Queued,
        queue: &mut VecDeque<Queued>,
        with: &[&Node],
    ) -> Result<Option<Job>, CommandError> {
        let (cluster, cloud) = (self.live.cluster, self.live.cloud);
        let mono = self.monotonic();
        let outcome = q.outcome;
        let Some(node) = snapshot.nodes.iter().find(|n| n.name == q.action.node.name) else {
            let o = &mut self.outcomes[outcome];
            o.status = Status::Gone;
            o.detail = Detail::LeftTheCluster;
            return Ok(None);
        };
        // Its NodePool as read now, not when the run began: a template, requirement or taint
        // changed meanwhile is what its replacement gets (core v1.14.1 `disruption/controller.go`
        // `disrupt` → `GetCandidates` each pass: commands come from the current NodePool).
        let pool = fresh_pool(snapshot, &q);
        let record = Record::of(node);
        if node.deleting && record.is_none() {
            // Someone else began deleting it since the run selected it: no candidate any more
            // (core v1.14.1 `disruption/validation.go` `validateCandidates` → `GetCandidates`
            // → `statenode.go` `ValidateNodeDisruptable`: "node is deleting or marked for deletion").
            // A node this tool marked is finished.
            let o = &mut self.outcomes[outcome];
            o.status = Status::Gone;
            o.detail = Detail::BeingDeleted;
            return Ok(None);
        }
        if record.is_none() {
            let now = self.live.clock.now();
            if let Some(verdict) = self
                .recheck
                .as_mut()
                .and_then(|r| r.no_longer_drifted(snapshot, node, now))
            {
                let o = &mut self.outcomes[outcome];
                o.status = Status::Skipped;
                o.detail = Detail::NoLongerDrifted {
                    was: q.action.reason.clone(),
                    now: verdict.detail,
                };
                return Ok(None);
            }
        }
        let job = |record: Record, state: State| Job {
            node: node.clone(),
            claim: Claim::of(snapshot, node),
            pool: pool.clone(),
            record,
            outcome,
            state,
            started: mono,
            reserved: Vec::new(),
            launch: None,
            follows: None,
        };
        match (entry(record.as_ref(), node), record.clone()) {
            (Entry::Finish, Some(r)) => {
                // Drained before and still cordoned (or its kubelet gone with its instance):
                // only the end is left — its volumes' detachment, then the termination. A node
                // whose kubelet is gone is terminated at once (`core v1.14.1:
                // node/termination/controller.go finalize`: a NotReady node whose instance is
                // gone skips the drain and the wait).
                let events = &mut *self.events;
                events.emit(Event::node(
                    &node.name,
                    NodeStep::Resuming(Resume::Finishing),
                ));
                if node.ready {
                    let mut finishing = job(r, State::Terminating);
                    let grace = finishing
                        .claim
                        .as_ref()
                        .and_then(|c| c.termination_grace_period);
                    finishing.state =
                        State::Detaching(Detaching::new(mono, grace.map(|g| mono + g)));
                    self.active.push(finishing);
                    return Ok(None);
                }
                self.outcomes[outcome].status = gone_as(Status::Replaced, &r);
                terminate(cluster, cloud, events, &mut job(r, State::Terminating))?;
                return Ok(None);
            }
            (Entry::Redrain, Some(r)) => {
                steps::mark(cluster, node, &pool, &r)?;
                self.events.emit(Event::node(
                    &node.name,
                    NodeStep::Resuming(Resume::Recordoned),
                ));
                steps::exclude_from_load_balancers(cluster, node)?;
                self.active.push(job(r, State::Draining(Drain::new(mono))));
                return Ok(None);
            }
            (Entry::Adopt, Some(r)) => {
                // Launched before: adopt what the record names, never launch again.
                let replacements: Vec<Replacement> = r
                    .instances
                    .iter()
                    .zip(
                        r.node_claims
                            .iter()
                            .chain(std::iter::repeat(&String::new())),
                    )
                    .map(|(id, claim)| Replacement {
                        node_claim: claim.clone(),
                        node_pool: pool.name.clone(),
                        instance_id: id.clone(),
                        node_labels: BTreeMap::new(),
                        // What its planned NodeClaim carried, as recorded at the mark (a
                        // record of an earlier version: the template's and the hash, now).
                        node_annotations: r.annotations.get(claim).cloned().unwrap_or_else(|| {
                            pool.template_annotations
                                .clone()
                                .into_iter()
                                .chain(crate::usecases::provisioning::input::hash_annotations(
                                    &pool,
                                ))
                                .collect()
                        }),
                        startup_taints: pool.startup_taints.clone(),
                        taints: pool.taints.clone(),
                        // The plan's requests are not recorded: Ready, the taints gone.
                        requests: Default::default(),
                    })
                    .collect();
                self.events.emit(Event::node(
                    &node.name,
                    NodeStep::Resuming(Resume::Adopting(r.step)),
                ));
                let mut adopted = job(r, State::Planned);
                self.wait_for(&mut adopted, replacements);
                self.active.push(adopted);
                return Ok(None);
            }
            _ => {}
        }
        let attempt = record
            .as_ref()
            .map_or_else(|| self.settings.attempt.clone(), |r| r.started_at.clone());
        let mut together = vec![node];
        together.extend(with.iter().copied());
        let (claims, input, reserved) = match planner.plan_together(
            self.live,
            &together,
            &pool,
            &attempt,
            record.as_ref(),
            Intent::of(&q.action),
        )? {
            NodePlan::Blocked { why, pdb_only } => {
                if q.waits_for_pdb(pdb_only, mono, self.settings.drain_timeout) {
                    // A budget at zero while this rollout's pods restart elsewhere frees up
                    // as they become healthy: look again in a moment (Karpenter retries
                    // each pass).
                    self.outcomes[outcome].detail = Detail::WaitingForPdb(Box::new(why));
                    q.not_before = Some(mono + PDB_RETRY);
                    queue.push_back(q);
                } else {
                    let o = &mut self.outcomes[outcome];
                    o.status = Status::Blocked;
                    o.detail = why;
                }
                return Ok(None);
            }
            NodePlan::Replace {
                claims,
                input,
                reserved,
                left_pending,
            } => {
                if !left_pending.is_empty() {
                    self.events.emit(Event::Warning(format!(
                        "{}: {} pod(s) fit nowhere and go pending when it drains ({})",
                        node.name,
                        left_pending.len(),
                        left_pending.join("; ")
                    )));
                }
                (claims, input, reserved)
            }
        };
        let annotations = claims
            .iter()
            .map(|c| (c.name.clone(), c.annotations.clone()))
            .collect();
        let marked = match &record {
            // Resumed: the first run saw the node before it cordoned it.
            Some(r) => Record {
                step: Step::Marked,
                node_claims: claims.iter().map(|c| c.name.clone()).collect(),
                instances: Vec::new(),
                started_at: attempt,
                annotations,
                ..r.clone()
            },
            None => Record {
                step: Step::Marked,
                method: q.action.method,
                node_claims: claims.iter().map(|c| c.name.clone()).collect(),
                instances: Vec::new(),
                reason: q.action.reason.clone(),
                started_at: attempt,
                cordoned_before: node.unschedulable,
                command: q.action.command.clone(),
                annotations,
            },
        };
        // Classes resolved before anything is marked: a class with no subnet, image or profile
        // leaves the node untouched (and says why).
        if let Some(input) = &input {
            let plan = Plan {
                node_claims: claims.clone(),
                ..Plan::default()
            };
            if let Err(e) = self
                .live
                .resolve_classes(&snapshot.node_classes, &plan, input)
            {
                let status = if record.is_some() {
                    // Marked by a killed run: not left cordoned behind a class error.
                    roll_back(cluster, cloud, &mut *self.events, node, &pool, &marked, &[])?;
                    Status::RolledBack
                } else {
                    Status::Blocked
                };
                let o = &mut self.outcomes[outcome];
                o.status = status;
                o.detail = Detail::ClassFailed(e.message);
                return Ok(None);
            }
        }
        let mut planned = job(marked, State::Planned);
        planned.reserved = reserved;
        planned.launch = Some(Launchable { claims, input });
        Ok(Some(planned))
    }
}

/// The node's NodePool as `snapshot` has it; as the run read it when it is gone.
pub(super) fn fresh_pool(snapshot: &Manifests, q: &Queued) -> NodePool {
    snapshot
        .node_pools
        .iter()
        .find(|p| p.name == q.action.pool.name)
        .unwrap_or(&q.action.pool)
        .clone()
}
