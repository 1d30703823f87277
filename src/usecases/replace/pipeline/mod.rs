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

mod advance;
mod command;
mod preview;
mod start;

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use super::steps::{self, Claim};
use super::{Event, NodeOutcome, NodeStep, Settings};
use crate::cloud::launch;
use crate::cloud::types::Compute;
use crate::disruption::budgets::TerminatingInstances;
use crate::disruption::replace::budget::{pick, pools_of, QueueSlots};
use crate::disruption::replace::machine::{Ending, Failures, Replacement, State};
use crate::disruption::replace::{Queued, Record, Status};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::node::{InstanceGone, Node};
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::scheduling::{Input, PlannedNodeClaim};
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::provisioning::Launch;
use crate::usecases::Sink;

pub use preview::{preview, Preview};

/// How often the loop looks again when nothing is due sooner.
const TICK: Duration = Duration::from_millis(200);

/// How soon a node held back by a PodDisruptionBudget at zero is looked at again.
pub const PDB_RETRY: Duration = Duration::from_secs(2);

/// How often the Nodes are listed at most, unless a node finished or started.
const NODE_POLL: Duration = Duration::from_secs(1);

/// How often the instances of the replacements not Ready yet are looked up, to stop waiting
/// for one that is gone (Karpenter polls its replacement NodeClaims every second, from its
/// cache; this is a DescribeInstances call).
const REPLACEMENT_POLL: Duration = Duration::from_secs(5);

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
        recheck,
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
        gone_replacements: BTreeSet::new(),
        replacements_looked: None,
        recheck,
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
    /// Instances of awaited replacements seen shutting down or terminated.
    gone_replacements: BTreeSet<String>,
    /// When they were last looked up.
    replacements_looked: Option<Duration>,
    /// Drift judged again as each node starts (`drift replace`).
    recheck: Option<super::select::Recheck>,
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Pipeline<'_, '_, C, P, K> {
    fn monotonic(&self) -> Duration {
        self.live.clock.monotonic()
    }

    fn run(&mut self, queue: Vec<Queued>) -> Result<(), CommandError> {
        let mut pools = pools_of(&queue);
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
            self.look_for_gone_replacements(&nodes);
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
                let slots = QueueSlots::for_queue(&pools, &counted, &queue, self.live.clock.now());
                let room = self.settings.max_parallel - self.active.len();
                let picked = pick(&mut queue, slots, room, self.monotonic());
                if !picked.is_empty() {
                    let indices: Vec<usize> = picked.iter().map(|q| q.outcome).collect();
                    let waiting = queue.len();
                    // The budgets from then on as the start read them (a lowered one holds).
                    let fresh = self.start(picked, &mut queue)?;
                    for p in pools.iter_mut() {
                        if let Some(f) = fresh.iter().find(|f| f.name == p.name) {
                            *p = f.clone();
                        }
                    }
                    let started = indices.len() - (queue.len() - waiting);
                    for i in indices {
                        let o = &self.outcomes[i];
                        self.failures.count(o.status, &o.detail);
                    }
                    // The slots just taken must show in the next count.
                    nodes = steps::live_nodes(self.live.cluster)?;
                    listed = self.monotonic();
                    // A node that turned out blocked frees its slot at once: look again now
                    // (unless the budgets held every picked node back: wait a tick).
                    if started > 0 {
                        continue;
                    }
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

    /// Looks up (every [`REPLACEMENT_POLL`]) the instances of the awaited replacements whose
    /// Node is not Ready, and keeps those shutting down or terminated: their nodes roll back
    /// at once (`machine::launching_next`). An unreadable answer is let go: the ready timeout
    /// still bounds the wait.
    fn look_for_gone_replacements(&mut self, nodes: &[Node]) {
        let now = self.monotonic();
        if self
            .replacements_looked
            .is_some_and(|t| now.saturating_sub(t) < REPLACEMENT_POLL)
        {
            return;
        }
        let ready: BTreeSet<&str> = nodes
            .iter()
            .filter(|n| n.ready)
            .filter_map(Node::instance_id)
            .collect();
        let awaited: Vec<String> = self
            .active
            .iter()
            .filter_map(|j| match &j.state {
                State::Launching { replacements, .. } => Some(replacements),
                _ => None,
            })
            .flatten()
            .map(|r| r.instance_id.as_str())
            .filter(|id| !ready.contains(id) && !self.gone_replacements.contains(*id))
            .collect::<BTreeSet<&str>>()
            .into_iter()
            .map(str::to_string)
            .collect();
        if awaited.is_empty() {
            return;
        }
        self.replacements_looked = Some(now);
        // An instance not described (EC2 is eventually consistent just after a launch) is not
        // taken as gone: only the states say so.
        if let Ok(found) = launch::describe_by_filter(self.live.cloud, &awaited) {
            self.gone_replacements.extend(
                found
                    .into_iter()
                    .filter(|i| InstanceGone::of_state(&i.state).is_some())
                    .map(|i| i.id),
            );
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
