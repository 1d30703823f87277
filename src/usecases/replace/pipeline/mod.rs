//! Replacing many nodes at the budget's pace: every node is its own small state machine
//! (`disruption::replace::machine`), and one loop advances them all and starts the next node
//! the moment the NodePool's disruption budget (and `--max-parallel`) has room — so the budget
//! is kept full, never exceeded, with no wave boundaries (docs/performance.md B6).
//!
//! Each tick (200 ms): one drain pass per node whose pass is due; a Node LIST (readiness of
//! replacements, budget arithmetic) once a second or when a node finished or started; and —
//! only when a slot is free — one snapshot to plan the nodes that start. Nothing lives only in
//! memory that a re-run needs: every step is on the node's record.
//!
//! [`preview`] is the plan shown before anything changes; [`run`] carries it out. The nodes of a
//! multi-node command go as one ([`command`]).

mod command;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use self::command::{commands, leaving, planned_with};
use super::drain::{self, At, Passed};
use super::plan::{Intent, NodePlan, Planner};
use super::select::pods_to_move;
use super::steps::{self, Claim};
use super::{Event, NodeOutcome, NodeStep, Resume, Settings};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::budgets::TerminatingInstances;
use crate::disruption::replace::budget::{free_slots_for, method_of, pick, pools_of};
use crate::disruption::replace::machine::{
    adopted_readiness, after_launch, blocking_attachments, detach_next, entry, launching_next,
    readiness, DetachNext, Detaching, Drain, Ending, Entry, Failures, LaunchingNext, Readiness,
    Replacement, State, DETACH_POLL,
};
use crate::disruption::replace::{Action, Detail, Queued, Record, Status, Step};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::labels::INSTANCE_TYPE;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::scheduling::{Input, Plan, PlannedNodeClaim};
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::provisioning::{self, Launch, Launches};
use crate::usecases::Sink;

/// How often the loop looks again when nothing is due sooner.
const TICK: Duration = Duration::from_millis(200);

/// How soon a node held back by a PodDisruptionBudget at zero is looked at again.
pub const PDB_RETRY: Duration = Duration::from_secs(2);

/// How often the Nodes are listed at most, unless a node finished or started.
const NODE_POLL: Duration = Duration::from_secs(1);

/// The plan shown before anything changes: blocked nodes (the blockers named), the nodes that
/// start at once with their planned replacements (`planned`), the rest `queued` behind the
/// budgets — or `waiting-budget` when no node can start now.
#[derive(Debug, Clone)]
pub struct Preview {
    outcomes: Vec<NodeOutcome>,
    queue: Vec<Queued>,
    /// The nodes whose NodeClaim's instance is terminating, left out of the budgets.
    terminating: TerminatingInstances,
}

impl Preview {
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
    let mut slots = free_slots_for(
        &pools_of(&queue),
        &terminating.counted(&m.nodes),
        method_of(&queue),
        now,
    );
    let mut planner = Planner::new(
        m,
        &pdbs,
        &settings.gone_instances,
        Vec::new(),
        settings.force,
        now,
        settings.min_values_policy,
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
        if starting >= settings.max_parallel || !(resuming || slots.has_room(&pool.name)) {
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
    })
}

/// Replaces the nodes of `preview` (in order); returns every node's outcome when every node is
/// done, or when none is in progress and the budgets let no other start. Ctrl-C (the clock's
/// stop): the nodes in progress finish, no other starts.
pub fn run<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &mut Live<'_, C, P, K>,
    preview: Preview,
    settings: &Settings,
    events: &mut dyn Sink<Event>,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let Preview {
        outcomes,
        queue,
        terminating,
    } = preview;
    let mut pipeline = Pipeline {
        live,
        terminating,
        settings,
        events,
        outcomes,
        active: Vec::new(),
        replaced_into: settings.gone_instances.clone(),
        failures: Failures::default(),
        attachments_unreadable: false,
    };
    pipeline.run(queue)?;
    Ok(pipeline.outcomes)
}

/// One node in replacement.
struct Job {
    node: Node,
    /// Its NodeClaim (Machine), if Karpenter launched it: deleted with it.
    claim: Option<Claim>,
    pool: NodePool,
    record: Record,
    outcome: usize,
    state: State,
    /// When it started (monotonic).
    started: Duration,
    /// Its pods' places on existing nodes, held until it is drained.
    reserved: Vec<Pod>,
    /// What a planned node launches.
    launch: Option<Launchable>,
    /// A node of a command other than its first: the first's outcome. It launches nothing;
    /// it waits for the first's replacement.
    follows: Option<usize>,
}

/// What launching needs: the planned NodeClaims and the solver input they were made from.
struct Launchable {
    claims: Vec<PlannedNodeClaim>,
    input: Option<Box<Input>>,
}

impl Job {
    fn instances(&self) -> Vec<String> {
        match &self.state {
            State::Launching { replacements, .. } => {
                replacements.iter().map(|r| r.instance_id.clone()).collect()
            }
            _ => self.record.instances.clone(),
        }
    }
}

struct Pipeline<'p, 'a, C, P, K: ?Sized> {
    live: &'p mut Live<'a, C, P, K>,
    settings: &'p Settings,
    events: &'p mut dyn Sink<Event>,
    outcomes: Vec<NodeOutcome>,
    active: Vec<Job>,
    /// Instances of the nodes this run finished, old and new: not capacity for the nodes
    /// planned after them. The pods a replacement was launched for come back through their
    /// controllers a moment after the eviction — until then the replacement looks empty, and a
    /// later node's pods planned onto it would take their room and leave them pending. The old
    /// node's instance is terminating, but its kubelet, still running while the instance shuts
    /// down, may register the deleted Node again for a moment (Ready, empty, unmarked): pods
    /// planned onto it would be evicted onto a node about to vanish (found by the fault soak,
    /// docs/reliability.md).
    replaced_into: BTreeSet<String>,
    failures: Failures,
    /// The VolumeAttachments could not be listed (403/404): said once, not awaited.
    attachments_unreadable: bool,
    /// The nodes left out of the budgets ([`Preview`]'s).
    terminating: TerminatingInstances,
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Pipeline<'_, '_, C, P, K> {
    fn monotonic(&self) -> Duration {
        self.live.clock.monotonic()
    }

    fn run(&mut self, queue: Vec<Queued>) -> Result<(), CommandError> {
        let pools = pools_of(&queue);
        let method = method_of(&queue);
        let mut queue: VecDeque<Queued> = queue.into();
        let mut nodes = steps::live_nodes(self.live.cluster)?;
        let mut listed = self.monotonic();
        loop {
            // The Node LIST is the costly read on a big cluster: once a second (Karpenter polls
            // its replacements as often), and afresh whenever the budget arithmetic needs it.
            if self.monotonic().saturating_sub(listed) >= NODE_POLL {
                nodes = steps::live_nodes(self.live.cluster)?;
                listed = self.monotonic();
            }
            let before = self.active.len();
            // The PDBs, read at most once a tick, by the first drain pass that needs them.
            let mut pdbs: Option<steps::Pdbs> = None;
            for i in 0..self.active.len() {
                self.advance(i, &nodes, &mut pdbs)?;
            }
            self.settle();
            let stopping = self.live.clock.stop_requested() || self.failures.too_many();
            if !stopping && !queue.is_empty() && self.active.len() < self.settings.max_parallel {
                if self.active.len() < before {
                    nodes = steps::live_nodes(self.live.cluster)?;
                    listed = self.monotonic();
                }
                let counted = self.terminating.counted(&nodes);
                let slots = free_slots_for(&pools, &counted, method, self.live.clock.now());
                let room = self.settings.max_parallel - self.active.len();
                let picked = pick(&mut queue, slots, room, self.monotonic());
                if !picked.is_empty() {
                    let indices: Vec<usize> = picked.iter().map(|q| q.outcome).collect();
                    self.start(picked, &mut queue)?;
                    for i in indices {
                        let o = &self.outcomes[i];
                        self.failures.count(o.status, &o.detail);
                    }
                    // The slots just taken must show in the next count.
                    nodes = steps::live_nodes(self.live.cluster)?;
                    listed = self.monotonic();
                    // A node that turned out blocked frees its slot at once: look again now.
                    continue;
                }
            }
            // Nodes held back by a PDB wait (up to the drain timeout), even when nothing else
            // is in progress: the pods of the last node replaced may still be starting.
            let now = self.monotonic();
            let timeout = self.settings.drain_timeout;
            let (expired, waiting): (Vec<Queued>, Vec<Queued>) = queue
                .drain(..)
                .partition(|q| q.pdb_wait_expired(now, timeout));
            queue.extend(waiting);
            for q in expired {
                self.outcomes[q.outcome].pdb_wait_over();
            }
            let holding = !stopping && queue.iter().any(|q| q.pdb_wait.is_some());
            if self.active.is_empty() && !holding {
                let why = self.failures.why();
                for q in queue {
                    self.outcomes[q.outcome].left_in_queue(why.clone(), stopping, q.pool());
                }
                return Ok(());
            }
            self.live.clock.pause(TICK);
        }
    }

    /// Takes the finished nodes out, their endings into the outcomes and the failure count.
    fn settle(&mut self) {
        let (done, active): (Vec<Job>, Vec<Job>) = std::mem::take(&mut self.active)
            .into_iter()
            .partition(|j| matches!(j.state, State::Done(_)));
        self.active = active;
        for job in done {
            let State::Done(ending) = job.state else {
                continue;
            };
            if matches!(ending, Ending::Replaced) {
                self.replaced_into
                    .extend(job.record.instances.iter().cloned());
                self.replaced_into
                    .extend(job.node.instance_id().map(str::to_string));
            }
            let o = &mut self.outcomes[job.outcome];
            o.status = gone_as(ending.status(), &job.record);
            match ending {
                Ending::Replaced => {
                    o.seconds = seconds(self.live.clock.monotonic().saturating_sub(job.started))
                }
                Ending::RolledBack(detail) | Ending::Failed(detail) => o.detail = detail,
            }
            self.failures.count(o.status, &o.detail);
        }
    }

    /// Starts the picked nodes: one fresh snapshot, each node planned against it (after the
    /// nodes already in progress and the ones planned before it), all marked, then their
    /// replacements launched.
    fn start(
        &mut self,
        picked: Vec<Queued>,
        queue: &mut VecDeque<Queued>,
    ) -> Result<(), CommandError> {
        let snapshot = super::read_cluster(self.live.cluster)?;
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
            self.settings.min_values_policy,
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
        Ok(())
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
    fn enter(
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
        let pool = q.action.pool.clone();
        let record = Record::of(node);
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

    /// Launches a marked node's replacements; it waits for them, or is rolled back.
    fn launch(&mut self, snapshot: &Manifests, mut job: Job) -> Result<(), CommandError> {
        let (cluster, cloud) = (self.live.cluster, self.live.cloud);
        let Launchable { claims, input } = job.launch.take().unwrap_or(Launchable {
            claims: Vec::new(),
            input: None,
        });
        let Launches { launched, failed } = match &input {
            Some(input) if !claims.is_empty() => {
                let plan = Plan {
                    node_claims: claims,
                    ..Plan::default()
                };
                let events = &mut *self.events;
                self.live.launch_all(
                    &snapshot.node_classes,
                    &plan,
                    input,
                    &mut |e: provisioning::Event| events.emit(Event::Launch(e)),
                )?
            }
            _ => Launches::default(),
        };
        let instances: Vec<String> = launched.iter().map(|l| l.instance_id.clone()).collect();
        self.outcomes[job.outcome].replacements = launched
            .iter()
            .map(|l| format!("{} ({})", l.node_claim, l.instance_id))
            .collect();
        // An instance adopted by NodeClaim name must be this replacement's own (a run killed
        // mid-launch may have seen it register): never the node being replaced, never a node
        // that is itself leaving.
        let serving: BTreeMap<&str, &Node> = snapshot
            .nodes
            .iter()
            .filter_map(|n| n.instance_id().map(|id| (id, n)))
            .collect();
        let collides = instances.iter().any(|id| {
            serving
                .get(id.as_str())
                .is_some_and(|n| n.name == job.node.name || Record::of(n).is_some() || n.deleting)
        });
        if let Err(why) = after_launch(failed.first().map(|f| f.message()), collides) {
            // The record still says `marked`: if the rollback is cut short, a re-run plans and
            // launches again rather than draining onto missing capacity. Instances that back a
            // Node are never terminated here.
            let launched_here: Vec<String> = instances
                .into_iter()
                .filter(|id| !serving.contains_key(id.as_str()))
                .collect();
            let events = &mut *self.events;
            roll_back(
                cluster,
                cloud,
                events,
                &job.node,
                &job.pool,
                &job.record,
                &launched_here,
            )?;
            let o = &mut self.outcomes[job.outcome];
            o.status = Status::RolledBack;
            o.detail = why;
            return Ok(());
        }
        job.record.step = Step::Launched;
        job.record.instances = instances;
        steps::annotate(cluster, &job.node.name, &job.record)?;
        job.started = self.monotonic();
        self.wait_for(&mut job, launched.iter().map(replacement).collect());
        self.active.push(job);
        Ok(())
    }

    /// The node waits for `replacements` to be Ready and initialized ([`readiness`]).
    fn wait_for(&self, job: &mut Job, replacements: Vec<Replacement>) {
        job.state = State::Launching {
            replacements,
            ready: BTreeSet::new(),
            since: self.monotonic(),
        };
    }

    /// Advances node `i` by the step that is due.
    fn advance(
        &mut self,
        i: usize,
        nodes: &[Node],
        pdbs: &mut Option<steps::Pdbs>,
    ) -> Result<(), CommandError> {
        let (cluster, cloud) = (self.live.cluster, self.live.cloud);
        let mono = self.monotonic();
        let job = &mut self.active[i];
        let next = match &mut job.state {
            State::Launching {
                replacements,
                ready,
                since,
            } => {
                let mut seen = Vec::new();
                for r in replacements.iter() {
                    let node = nodes
                        .iter()
                        .find(|n| n.instance_id() == Some(r.instance_id.as_str()));
                    let mut state = if r.node_labels.is_empty() {
                        adopted_readiness(node, r)
                    } else {
                        readiness(node, r)
                    };
                    // Labelled as Karpenter's controllers would: registered once Ready, with
                    // the launched type's labels, or (adopted from a record) the catalog's for
                    // its type, once its Node names it; initialized once `Readiness::Ready`.
                    let type_known = !r.node_labels.is_empty()
                        || node.is_some_and(|n| n.labels.contains_key(INSTANCE_TYPE));
                    if let (Some(n), true) = (node, type_known) {
                        let labels = || {
                            if r.node_labels.is_empty() {
                                n.labels
                                    .get(INSTANCE_TYPE)
                                    .map(|t| self.live.type_labels(t))
                                    .unwrap_or_default()
                            } else {
                                r.node_labels.clone()
                            }
                        };
                        let taints: Vec<_> = r.taints.iter().chain(&r.startup_taints).collect();
                        let tainted = self.live.sync_registered(
                            n,
                            labels,
                            &r.node_annotations,
                            &taints,
                            state == Readiness::Ready,
                        )?;
                        if tainted && state == Readiness::Ready {
                            // Its startup taints were just put on: initializing again.
                            state = Readiness::Initializing;
                        }
                    }
                    if let (Readiness::Ready, Some(n)) = (state, node) {
                        if ready.insert(n.name.clone()) {
                            self.events.emit(Event::node(
                                &job.node.name,
                                NodeStep::ReplacementReady {
                                    replacement: n.name.clone(),
                                },
                            ));
                        }
                    }
                    seen.push(state);
                }
                let waited = mono.saturating_sub(*since);
                match launching_next(&seen, waited, self.settings.ready_timeout) {
                    LaunchingNext::Wait => None,
                    LaunchingNext::Drain => {
                        steps::exclude_from_load_balancers(cluster, &job.node)?;
                        Some(State::Draining(Drain::new(mono)))
                    }
                    LaunchingNext::RollBack(why) => {
                        // A command's replacement is its first node's to terminate.
                        let instances: Vec<String> = match job.follows {
                            Some(_) => Vec::new(),
                            None => replacements.iter().map(|r| r.instance_id.clone()).collect(),
                        };
                        let events = &mut *self.events;
                        roll_back(
                            cluster,
                            cloud,
                            events,
                            &job.node,
                            &job.pool,
                            &job.record,
                            &instances,
                        )?;
                        Some(State::Done(Ending::RolledBack(why)))
                    }
                }
            }
            State::Draining(progress) => {
                if !progress.due(mono) {
                    return Ok(());
                }
                if pdbs.is_none() {
                    *pdbs = Some(steps::pdbs(cluster)?);
                }
                let options = steps::drain_options(&job.pool, self.settings.force);
                let at = At {
                    unix: self.live.clock.now(),
                    monotonic: mono,
                };
                let passed = drain::pass(
                    cluster,
                    &mut *self.events,
                    &job.node,
                    progress,
                    pdbs.as_ref().map_or(&[][..], |p| &p.drain),
                    &options,
                    at,
                    self.settings.drain_timeout,
                )?;
                match passed {
                    Passed::Draining => None,
                    Passed::Drained => {
                        self.outcomes[job.outcome].evicted = progress.evicted();
                        let grace = job.claim.as_ref().and_then(|c| c.termination_grace_period);
                        Some(State::Detaching(Detaching::new(
                            mono,
                            grace.map(|g| progress.started() + g),
                        )))
                    }
                    Passed::TimedOut(holding) => {
                        Some(State::Done(Ending::Failed(Detail::DrainTimedOut {
                            node: job.node.name.clone(),
                            after: self.settings.drain_timeout,
                            holding,
                        })))
                    }
                }
            }
            State::Detaching(wait) => {
                if mono < wait.next_look {
                    return Ok(());
                }
                wait.next_look = mono + DETACH_POLL;
                let blocking = match steps::volume_attachments(cluster, &job.node.name) {
                    Err(e) if matches!(e.status(), Some(403 | 404)) => {
                        if !self.attachments_unreadable {
                            self.attachments_unreadable = true;
                            self.events.emit(Event::Warning(format!(
                                "cannot list volumeattachments.storage.k8s.io ({e}): instances terminate without waiting for their volumes to detach (docs/security.md)"
                            )));
                        }
                        Vec::new()
                    }
                    Err(e) => return Err(e.into()),
                    Ok(attachments) if attachments.is_empty() => Vec::new(),
                    Ok(attachments) => {
                        let (pods, deleting) = steps::pods_on(cluster, &job.node.name)?;
                        let options = steps::drain_options(&job.pool, self.settings.force);
                        let plan = crate::disruption::drain::plan_drain(
                            &job.node,
                            &pods,
                            &[],
                            &deleting,
                            self.live.clock.now(),
                            &options,
                        );
                        let held = steps::held_volumes(cluster, &pods, &plan.skipped)?;
                        blocking_attachments(&attachments, &held)
                    }
                };
                match detach_next(wait, blocking, mono, self.settings.drain_timeout) {
                    DetachNext::Terminate => Some(State::Terminating),
                    DetachNext::Wait(blocking) => {
                        if blocking != wait.reported {
                            self.events.emit(Event::node(
                                &job.node.name,
                                NodeStep::AwaitingDetachment {
                                    attachments: blocking.clone(),
                                },
                            ));
                            wait.reported = blocking;
                        }
                        None
                    }
                    DetachNext::GraceElapsed(blocking) => {
                        self.events.emit(Event::Warning(format!(
                            "{}: its NodeClaim's terminationGracePeriod has run out with volume attachment(s) {} still there: its instance terminates regardless (as Karpenter's does)",
                            job.node.name,
                            blocking.join(", ")
                        )));
                        Some(State::Terminating)
                    }
                    DetachNext::TimedOut(attachments) => {
                        Some(State::Done(Ending::Failed(Detail::VolumesStillAttached {
                            node: job.node.name.clone(),
                            after: self.settings.drain_timeout,
                            attachments,
                        })))
                    }
                }
            }
            State::Planned | State::Marked | State::Terminating | State::Done(_) => None,
        };
        let was_draining = matches!(job.state, State::Draining(_));
        if let Some(next) = next {
            job.state = next;
        }
        if was_draining && matches!(job.state, State::Detaching(_)) {
            job.record.step = Step::Drained;
            steps::annotate(cluster, &job.node.name, &job.record)?;
        }
        if job.state == State::Terminating {
            terminate(cluster, cloud, &mut *self.events, job)?;
        }
        Ok(())
    }
}

/// Terminates the node's instance and deletes it (its NodeClaim too): replaced.
fn terminate(
    cluster: &dyn Cluster,
    cloud: &impl Compute,
    events: &mut dyn Sink<Event>,
    job: &mut Job,
) -> Result<(), CommandError> {
    steps::terminate_and_delete(cluster, cloud, &job.node, job.claim.as_ref())?;
    events.emit(Event::node(
        &job.node.name,
        NodeStep::Deleted {
            instance: job.node.instance_id().map(str::to_string),
        },
    ));
    job.state = State::Done(Ending::Replaced);
    Ok(())
}

/// Rolls the node back (see [`steps::rollback`]) and says so.
fn roll_back(
    cluster: &dyn Cluster,
    cloud: &impl Compute,
    events: &mut dyn Sink<Event>,
    node: &Node,
    pool: &NodePool,
    record: &Record,
    instances: &[String],
) -> Result<(), CommandError> {
    if steps::rollback(cluster, cloud, node, pool, record, instances)? {
        events.emit(Event::node(
            &node.name,
            NodeStep::RolledBack {
                cordoned: record.cordoned_before,
                terminated: instances.to_vec(),
            },
        ));
    }
    Ok(())
}

/// A launched replacement, as the state machine keeps it.
fn replacement(l: &Launch) -> Replacement {
    Replacement {
        node_claim: l.node_claim.clone(),
        node_pool: l.node_pool.clone(),
        instance_id: l.instance_id.clone(),
        node_labels: l.node_labels.clone(),
        node_annotations: l.node_annotations.clone(),
        startup_taints: l.startup_taints.clone(),
        taints: l.taints.clone(),
        requests: l.requests.clone(),
    }
}

/// A node gone by a delete method is `deleted`, not `replaced`.
fn gone_as(status: Status, record: &Record) -> Status {
    match status {
        Status::Replaced if record.method.deletes() => Status::Deleted,
        other => other,
    }
}

/// A duration in seconds, to a tenth.
fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 10.0).round() / 10.0
}
