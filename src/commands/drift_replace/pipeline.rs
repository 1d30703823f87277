//! Replacing many nodes at the budget's pace: every node is its own small state machine
//! (launching its replacement → draining → done), and one loop advances them all and starts
//! the next node the moment the NodePool's disruption budget (and `--max-parallel`) has room —
//! so the budget is kept full, never exceeded, with no wave boundaries (PERF.md B6).
//!
//! Each tick (200 ms): one drain pass per node whose pass is due; a Node LIST (readiness of
//! replacements, budget arithmetic) once a second or when a node finished or started; and —
//! only when a slot is free — one snapshot to plan the nodes that start. Nothing lives only in memory that a re-run needs: every step is on the node's record.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use super::planning::{NodePlan, Planner};
use super::steps::{self, Claim, Drain, DrainStatus, Record};
use super::{Candidate, NodeOutcome};
use crate::cli::render::plan::EventPrinter;
use crate::commands::live::Session;
use crate::commands::{unix_now, Context};
use crate::disruption::budgets::{allowed_disruptions, DisruptionReason};
use crate::disruption::drain::Pdb;
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::scheduling::Plan;
use crate::usecases::clock::Clock;
use crate::usecases::provisioning::{Launch, Launches};

/// How the pipeline runs.
pub struct Settings {
    pub max_parallel: usize,
    pub force: bool,
    pub drain_timeout: Duration,
    pub ready_timeout: Duration,
    /// When this run started (RFC 3339): the `startedAt` of the replacements it begins, and
    /// part of their NodeClaim names, so that the plan shown names what is launched.
    pub attempt: String,
}

/// How often the loop looks again when nothing is due sooner.
const TICK: Duration = Duration::from_millis(200);

/// How soon a node held back by a PodDisruptionBudget at zero is looked at again.
const PDB_RETRY: Duration = Duration::from_secs(2);

/// How often the Nodes are listed at most, unless a node finished or started.
const NODE_POLL: Duration = Duration::from_secs(1);

enum Stage {
    /// Replacements launched; waiting for their Nodes to be Ready (then labelled, as
    /// Karpenter's controller would).
    Launching {
        launched: Vec<Launch>,
        labelled: BTreeSet<String>,
        since: Instant,
    },
    Draining(Drain),
}

/// One node in replacement.
struct Job {
    node: Node,
    /// Its NodeClaim (Machine), if Karpenter launched it: deleted with it.
    claim: Option<Claim>,
    pool: NodePool,
    record: Record,
    outcome: usize,
    stage: Stage,
    started: Instant,
    /// The startup taints of its replacements' pools: gone once they are initialized.
    startup_taints: BTreeSet<String>,
    /// Its pods' places on existing nodes, held until it is drained.
    reserved: Vec<Pod>,
}

impl Job {
    /// A node whose replacements are `launched`: waiting for them to be Ready.
    fn launching(
        snapshot: &crate::api::Manifests,
        node: Node,
        pool: NodePool,
        record: Record,
        outcome: usize,
        launched: Vec<Launch>,
        reserved: Vec<Pod>,
    ) -> Job {
        Job {
            claim: Claim::of(snapshot, &node),
            startup_taints: startup_taints(&snapshot.node_pools, &launched),
            node,
            pool,
            record,
            outcome,
            stage: Stage::Launching {
                launched,
                labelled: BTreeSet::new(),
                since: Instant::now(),
            },
            started: Instant::now(),
            reserved,
        }
    }

    fn instances(&self) -> Vec<String> {
        match &self.stage {
            Stage::Launching { launched, .. } => {
                launched.iter().map(|l| l.instance_id.clone()).collect()
            }
            Stage::Draining(_) => self.record.instances.clone(),
        }
    }
}

/// How many more nodes of each pool may start now: the pool's budget for `Drifted`
/// (KARPENTER.md §5.2) minus the nodes already in replacement. One replacement in progress is
/// one disruption: the nodes launched to replace it neither grow the pool's count nor count as
/// NotReady while they join (Karpenter would count both; a rollout should not change its own
/// pace — the one place we knowingly differ).
pub fn free_slots(pools: &[NodePool], nodes: &[Node], now: i64) -> BTreeMap<String, Option<u32>> {
    let replacements: BTreeSet<String> = nodes
        .iter()
        .filter_map(Record::of)
        .flat_map(|r| r.instances)
        .collect();
    let counted: Vec<&Node> = nodes
        .iter()
        .filter(|n| !n.instance_id().is_some_and(|id| replacements.contains(id)))
        .collect();
    pools
        .iter()
        .map(|pool| {
            let allowance = allowed_disruptions(
                pool,
                counted.iter().copied(),
                DisruptionReason::Drifted,
                now,
            );
            let in_progress = nodes
                .iter()
                .filter(|n| {
                    n.node_pool() == Some(pool.name.as_str())
                        && !n.deleting
                        && Record::of(n).is_some()
                })
                .count() as u32;
            (
                pool.name.clone(),
                allowance.allowed.map(|n| n.saturating_sub(in_progress)),
            )
        })
        .collect()
}

/// Replaces the `queue` (in order), filling in `outcomes`; returns when every node is done,
/// or when none is in progress and the budgets let no other start.
pub fn run(
    ctx: &mut Context<'_>,
    session: &mut Session,
    queue: Vec<Candidate>,
    outcomes: &mut [NodeOutcome],
    settings: &Settings,
) -> Result<(), CommandError> {
    let pools = super::pools_of(&queue);
    let mut queue: VecDeque<Candidate> = queue.into();
    let mut active: Vec<Job> = Vec::new();
    let mut nodes = steps::live_nodes(session)?;
    let mut listed = Instant::now();
    let mut failures = Failures::default();
    loop {
        // The Node LIST is the costly read on a big cluster: once a second (Karpenter polls its
        // replacements as often), and afresh whenever the budget arithmetic needs it.
        if listed.elapsed() >= NODE_POLL {
            nodes = steps::live_nodes(session)?;
            listed = Instant::now();
        }
        let before = active.len();
        // The PDBs, read at most once a tick, by the first drain pass that needs them.
        let mut pdbs: Option<Vec<Pdb>> = None;
        let mut i = 0;
        while i < active.len() {
            if advance(
                ctx,
                session,
                &mut active[i],
                &nodes,
                &mut pdbs,
                outcomes,
                settings,
            )? {
                let job = active.remove(i);
                failures.count(&outcomes[job.outcome]);
            } else {
                i += 1;
            }
        }
        // Ctrl-C (under --watch): the nodes in progress finish, no other starts. Neither after
        // replacements failed several times in a row (a broken AMI, a missing permission, no
        // capacity): the rest of the queue would only fail the same way.
        let stopping = session.clock.stop_requested() || failures.too_many();
        if !stopping && !queue.is_empty() && active.len() < settings.max_parallel {
            if active.len() < before {
                nodes = steps::live_nodes(session)?;
                listed = Instant::now();
            }
            let slots = free_slots(&pools, &nodes, unix_now());
            let picked = pick(&mut queue, slots, settings.max_parallel - active.len());
            if !picked.is_empty() {
                let indices: Vec<usize> = picked.iter().map(|c| c.outcome).collect();
                start(
                    ctx,
                    session,
                    picked,
                    &mut queue,
                    &mut active,
                    outcomes,
                    settings,
                )?;
                for i in indices {
                    failures.count(&outcomes[i]);
                }
                // The slots just taken must show in the next count.
                nodes = steps::live_nodes(session)?;
                listed = Instant::now();
                // A node that turned out blocked frees its slot at once: look again now.
                continue;
            }
        }
        // Nodes held back by a PDB wait (up to --timeout), even when nothing else is in
        // progress: the pods of the last node replaced may still be starting.
        let (timed_out, waiting): (Vec<Candidate>, Vec<Candidate>) =
            queue.drain(..).partition(|c| {
                c.pdb_wait
                    .is_some_and(|t| t.elapsed() >= settings.drain_timeout)
            });
        queue.extend(waiting);
        for c in timed_out {
            let o = &mut outcomes[c.outcome];
            o.status = "blocked".into();
            o.detail = o.detail.trim_start_matches("waiting: ").to_string();
        }
        let holding = !stopping && queue.iter().any(|c| c.pdb_wait.is_some());
        if active.is_empty() && !holding {
            let why = failures.why().map(|w| format!("not started: {w}"));
            for c in queue {
                outcomes[c.outcome].left_in_queue(why.as_deref(), stopping, &c.pool.name);
            }
            return Ok(());
        }
        std::thread::sleep(TICK);
    }
}

/// Replacements that failed in a row (rolled back or failed), reset by one that succeeds.
#[derive(Default)]
struct Failures {
    in_a_row: usize,
    last: String,
}

/// After this many failures in a row no other node starts.
const FAILURES_IN_A_ROW: usize = 3;

impl Failures {
    fn count(&mut self, outcome: &NodeOutcome) {
        match outcome.status.as_str() {
            "replaced" => self.in_a_row = 0,
            "rolled-back" | "failed" => {
                self.in_a_row += 1;
                self.last = outcome.detail.clone();
            }
            _ => {}
        }
    }

    fn too_many(&self) -> bool {
        self.in_a_row >= FAILURES_IN_A_ROW
    }

    fn why(&self) -> Option<String> {
        self.too_many().then(|| {
            format!(
                "{} replacements failed in a row (the last: {})",
                self.in_a_row, self.last
            )
        })
    }
}

/// Takes from the queue, in order, the nodes that may start: up to `room`, within their
/// pool's free slots. A node resuming a replacement is already counted in its pool.
fn pick(
    queue: &mut VecDeque<Candidate>,
    mut slots: BTreeMap<String, Option<u32>>,
    room: usize,
) -> Vec<Candidate> {
    let mut picked = Vec::new();
    let mut rest = VecDeque::new();
    let now = Instant::now();
    for c in queue.drain(..) {
        let slot = slots.get_mut(&c.pool.name).and_then(|s| s.as_mut());
        let fits = c.record.is_some() || slot.as_ref().is_none_or(|n| **n > 0);
        let due = c.not_before.is_none_or(|t| t <= now);
        if picked.len() < room && fits && due {
            if c.record.is_none() {
                if let Some(n) = slot {
                    *n -= 1;
                }
            }
            picked.push(c);
        } else {
            rest.push_back(c);
        }
    }
    *queue = rest;
    picked
}

/// A node planned to start, not yet marked.
struct Planned {
    node: Node,
    candidate: Candidate,
    record: Record,
    claims: Vec<crate::scheduling::PlannedNodeClaim>,
    input: Option<crate::scheduling::Input>,
    reserved: Vec<Pod>,
}

/// Starts the picked nodes: one fresh snapshot, each node planned against it (after the
/// nodes already in progress and the ones planned before it), all marked, then their
/// replacements launched.
fn start(
    ctx: &mut Context<'_>,
    session: &mut Session,
    picked: Vec<Candidate>,
    queue: &mut VecDeque<Candidate>,
    active: &mut Vec<Job>,
    outcomes: &mut [NodeOutcome],
    settings: &Settings,
) -> Result<(), CommandError> {
    let snap = snapshot::read(session.cluster, Scope::PODS)?;
    let pdbs = steps::pdbs(session)?;
    let busy: BTreeSet<String> = active.iter().flat_map(Job::instances).collect();
    let reserved: Vec<Pod> = active.iter().flat_map(|j| j.reserved.clone()).collect();
    let now = unix_now();
    let mut planner = Planner::new(&snap.manifests, &pdbs, &busy, reserved, settings.force, now);
    let mut planned: Vec<Planned> = Vec::new();
    for c in picked {
        let Some(node) = snap.manifests.nodes.iter().find(|n| n.name == c.node.name) else {
            let o = &mut outcomes[c.outcome];
            o.status = "gone".into();
            o.detail = "the node left the cluster meanwhile".into();
            continue;
        };
        let record = Record::of(node);
        if record.as_ref().is_some_and(|r| r.step == "drained")
            && (node.unschedulable || !node.ready)
        {
            // Drained before and still cordoned (or its kubelet gone with its instance): only
            // the end is left. (Uncordoned meanwhile, it is drained again below.)
            steps::progress(ctx, &node.name, "resuming (drained before)");
            let claim = Claim::of(&snap.manifests, node);
            steps::terminate_and_delete(ctx, session, node, claim.as_ref())?;
            outcomes[c.outcome].status = "replaced".into();
            continue;
        }
        if let Some(r) = record.as_ref().filter(|r| r.step == "drained") {
            steps::mark(session, node, &c.pool, r)?;
            steps::progress(ctx, &node.name, "resuming (drained before; cordoned again)");
            active.push(Job {
                node: node.clone(),
                claim: Claim::of(&snap.manifests, node),
                pool: c.pool.clone(),
                record: r.clone(),
                outcome: c.outcome,
                stage: Stage::Draining(Drain::new()),
                started: Instant::now(),
                startup_taints: BTreeSet::new(),
                reserved: Vec::new(),
            });
            continue;
        }
        if let Some(r) = record.as_ref().filter(|r| r.launched_all()) {
            // Launched before: adopt what the record names, never launch again.
            let launched: Vec<Launch> = r
                .instances
                .iter()
                .zip(
                    r.node_claims
                        .iter()
                        .chain(std::iter::repeat(&String::new())),
                )
                .map(|(id, claim)| Launch {
                    node_claim: claim.clone(),
                    node_pool: c.pool.name.clone(),
                    instance_id: id.clone(),
                    ..Launch::default()
                })
                .collect();
            steps::progress(ctx, &node.name, &format!("resuming ({} before)", r.step));
            active.push(Job::launching(
                &snap.manifests,
                node.clone(),
                c.pool.clone(),
                r.clone(),
                c.outcome,
                launched,
                Vec::new(),
            ));
            continue;
        }
        let attempt = record
            .as_ref()
            .map_or_else(|| settings.attempt.clone(), |r| r.started_at.clone());
        match planner.plan(session, node, &c.pool, &attempt, record.as_ref())? {
            NodePlan::Blocked { why, pdb_only } => {
                let since = c.pdb_wait.unwrap_or_else(Instant::now);
                if pdb_only && since.elapsed() < settings.drain_timeout {
                    // A budget at zero while this rollout's pods restart elsewhere frees up as
                    // they become healthy: look again in a moment (Karpenter retries each pass).
                    outcomes[c.outcome].detail = format!("waiting: {why}");
                    let mut c = c;
                    c.pdb_wait = Some(since);
                    c.not_before = Some(Instant::now() + PDB_RETRY);
                    queue.push_back(c);
                    continue;
                }
                let o = &mut outcomes[c.outcome];
                o.status = "blocked".into();
                o.detail = why;
            }
            NodePlan::Replace {
                claims,
                input,
                reserved,
            } => {
                let resumed = record.is_some();
                let record = Record {
                    step: "marked".into(),
                    node_claims: claims.iter().map(|c| c.name.clone()).collect(),
                    instances: Vec::new(),
                    reason: record
                        .as_ref()
                        .map_or_else(|| c.reason.clone(), |r| r.reason.clone()),
                    started_at: attempt,
                    // Resumed: the first run saw the node before it cordoned it.
                    cordoned_before: record.map_or(node.unschedulable, |r| r.cordoned_before),
                };
                // Classes resolved before anything is marked: a class with no subnet, image or
                // profile leaves the node untouched (and says why).
                if let Some(input) = &input {
                    let plan = Plan {
                        node_claims: claims.clone(),
                        ..Plan::default()
                    };
                    if let Err(e) =
                        session.resolve_classes(&snap.manifests.node_classes, &plan, input)
                    {
                        if resumed {
                            // Marked by a killed run: not left cordoned behind a class error.
                            steps::rollback(ctx, session, node, &c.pool, &record, &[])?;
                        }
                        let o = &mut outcomes[c.outcome];
                        o.status = if resumed { "rolled-back" } else { "blocked" }.into();
                        o.detail = e.message;
                        continue;
                    }
                }
                planned.push(Planned {
                    node: node.clone(),
                    candidate: c,
                    record,
                    claims,
                    input,
                    reserved,
                });
            }
        }
    }
    // Every planned node is marked before any launch: a node takes its budget slot (and stops
    // taking pods) at once, not after the launches of the nodes before it.
    for p in &planned {
        steps::mark(session, &p.node, &p.candidate.pool, &p.record)?;
        steps::progress(
            ctx,
            &p.node.name,
            "tainted and cordoned (Ready,SchedulingDisabled)",
        );
    }
    for p in planned {
        let Planned {
            node,
            candidate: c,
            mut record,
            claims,
            input,
            reserved,
        } = p;
        let Launches { launched, failed } = match &input {
            Some(input) if !claims.is_empty() => {
                let plan = Plan {
                    node_claims: claims,
                    ..Plan::default()
                };
                let mut events = EventPrinter::new(ctx.global, ctx.err);
                session.launch_all(&snap.manifests.node_classes, &plan, input, &mut events)?
            }
            _ => Launches::default(),
        };
        let instances: Vec<String> = launched.iter().map(|l| l.instance_id.clone()).collect();
        outcomes[c.outcome].replacements = launched
            .iter()
            .map(|l| format!("{} ({})", l.node_claim, l.instance_id))
            .collect();
        // An instance adopted by NodeClaim name must be this replacement's own (a run killed
        // mid-launch may have seen it register): never the node being replaced, never a node
        // that is itself leaving.
        let serving: BTreeMap<&str, &Node> = snap
            .manifests
            .nodes
            .iter()
            .filter_map(|n| n.instance_id().map(|id| (id, n)))
            .collect();
        let collides = instances.iter().any(|id| {
            serving
                .get(id.as_str())
                .is_some_and(|n| n.name == node.name || Record::of(n).is_some() || n.deleting)
        });
        let failure = if let Some(f) = failed.first() {
            Some(format!("launch failed: {}", f.message()))
        } else if collides {
            Some("a replacement resolved to the instance of a node being replaced".to_string())
        } else {
            None
        };
        if let Some(why) = failure {
            // The record still says `marked`: if the rollback is cut short, a re-run plans and
            // launches again rather than draining onto missing capacity. Instances that back a
            // Node are never terminated here.
            let launched_here: Vec<String> = instances
                .into_iter()
                .filter(|id| !serving.contains_key(id.as_str()))
                .collect();
            steps::rollback(ctx, session, &node, &c.pool, &record, &launched_here)?;
            let o = &mut outcomes[c.outcome];
            o.status = "rolled-back".into();
            o.detail = format!("{why}; the node is serving again");
            continue;
        }
        record.step = "launched".into();
        record.instances = instances;
        steps::annotate(session, &node.name, Some(&record))?;
        active.push(Job::launching(
            &snap.manifests,
            node,
            c.pool,
            record,
            c.outcome,
            launched,
            reserved,
        ));
    }
    Ok(())
}

/// The startup taint keys of the pools the replacements were launched in.
fn startup_taints(pools: &[NodePool], launched: &[Launch]) -> BTreeSet<String> {
    launched
        .iter()
        .filter_map(|l| pools.iter().find(|p| p.name == l.node_pool))
        .flat_map(|p| p.startup_taints.iter().map(|t| t.key.clone()))
        .collect()
}

/// Advances one node by the step that is due; `true` when it is finished (replaced, rolled
/// back or failed).
fn advance(
    ctx: &mut Context<'_>,
    session: &Session,
    job: &mut Job,
    nodes: &[Node],
    pdbs: &mut Option<Vec<Pdb>>,
    outcomes: &mut [NodeOutcome],
    settings: &Settings,
) -> Result<bool, CommandError> {
    match &mut job.stage {
        Stage::Launching {
            launched,
            labelled,
            since,
        } => {
            let mut all_ready = true;
            for l in launched.iter() {
                match nodes
                    .iter()
                    .find(|n| n.instance_id() == Some(l.instance_id.as_str()))
                {
                    // Ready and initialized: the pool's startup taints are gone (their agents
                    // ran), as Karpenter waits for before it drains (KARPENTER.md §5.3).
                    Some(n)
                        if n.ready
                            && !n.taints.iter().any(|t| job.startup_taints.contains(&t.key)) =>
                    {
                        if labelled.insert(n.name.clone()) {
                            if l.node_labels.is_empty() {
                                // Adopted from a record: its type's labels from the catalog.
                                let mut doc = l.clone();
                                doc.node_labels = n
                                    .labels
                                    .get(crate::model::labels::INSTANCE_TYPE)
                                    .map(|t| session.type_labels(t))
                                    .unwrap_or_default();
                                session.label_registered(&n.name, &doc.node_labels)?;
                            } else {
                                session.label_registered(&n.name, &l.node_labels)?;
                            }
                            steps::progress(
                                ctx,
                                &job.node.name,
                                &format!("replacement {} Ready", n.name),
                            );
                        }
                    }
                    _ => all_ready = false,
                }
            }
            if all_ready {
                job.stage = Stage::Draining(Drain::new());
                return Ok(false);
            }
            if since.elapsed() >= settings.ready_timeout {
                let instances: Vec<String> =
                    launched.iter().map(|l| l.instance_id.clone()).collect();
                steps::rollback(ctx, session, &job.node, &job.pool, &job.record, &instances)?;
                let o = &mut outcomes[job.outcome];
                o.status = "rolled-back".into();
                o.detail = format!(
                    "replacement not Ready after {}s; the node is serving again",
                    settings.ready_timeout.as_secs()
                );
                return Ok(true);
            }
            Ok(false)
        }
        Stage::Draining(drain) => {
            if !drain.due() {
                return Ok(false);
            }
            let options = steps::drain_options(&job.pool, settings.force);
            if pdbs.is_none() {
                *pdbs = Some(steps::pdbs(session)?);
            }
            let pdbs = pdbs.as_deref().unwrap_or_default();
            let o = &mut outcomes[job.outcome];
            match drain.pass(
                ctx,
                session,
                &job.node,
                pdbs,
                &options,
                settings.drain_timeout,
            ) {
                Ok(DrainStatus::Draining) => Ok(false),
                Ok(DrainStatus::Drained(evicted)) => {
                    o.evicted = evicted;
                    job.record.step = "drained".into();
                    steps::annotate(session, &job.node.name, Some(&job.record))?;
                    steps::terminate_and_delete(ctx, session, &job.node, job.claim.as_ref())?;
                    let o = &mut outcomes[job.outcome];
                    o.status = "replaced".into();
                    o.seconds = (job.started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
                    Ok(true)
                }
                Err(e) => {
                    o.status = "failed".into();
                    o.detail = format!("{}; the node stays cordoned, re-run to resume", e.message);
                    Ok(true)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels;
    use crate::model::nodepool::Budget;

    fn pool(name: &str, nodes: Option<&str>) -> NodePool {
        let mut p = NodePool {
            name: name.into(),
            generation: Some(crate::model::nodepool::ApiGeneration::V1),
            ..NodePool::default()
        };
        p.disruption.budgets = nodes
            .map(|n| {
                vec![Budget {
                    nodes: n.into(),
                    ..Budget::default()
                }]
            })
            .unwrap_or_default();
        p
    }

    fn node(name: &str, pool: &str, instance: &str) -> Node {
        Node {
            name: name.into(),
            labels: [(labels::NODEPOOL.to_string(), pool.to_string())]
                .into_iter()
                .collect(),
            ready: true,
            initialized: true,
            provider_id: Some(format!("aws:///us-east-1a/{instance}")),
            ..Node::default()
        }
    }

    fn replacing(mut n: Node, instances: &[&str]) -> Node {
        let record = Record {
            step: "launched".into(),
            instances: instances.iter().map(|i| i.to_string()).collect(),
            ..Record::default()
        };
        n.annotations.insert(
            labels::REPLACEMENT.into(),
            serde_json::to_string(&record).unwrap(),
        );
        n
    }

    fn cluster(count: usize) -> Vec<Node> {
        (0..count)
            .map(|i| node(&format!("n{i}"), "default", &format!("i-{i}")))
            .collect()
    }

    fn candidate(name: &str, pool_name: &str, resuming: bool, outcome: usize) -> Candidate {
        Candidate {
            node: node(name, pool_name, "i-x"),
            pool: pool(pool_name, Some("10%")),
            reason: "Drifted".into(),
            record: resuming.then(Record::default),
            outcome,
            pdb_wait: None,
            not_before: None,
        }
    }

    #[test]
    fn slots_are_the_budget_minus_the_nodes_in_replacement() {
        let p = pool("default", Some("10%"));
        let mut nodes = cluster(100);
        assert_eq!(
            free_slots(std::slice::from_ref(&p), &nodes, 0)["default"],
            Some(10)
        );
        for n in nodes.iter_mut().take(3) {
            *n = replacing(n.clone(), &[]);
        }
        assert_eq!(
            free_slots(std::slice::from_ref(&p), &nodes, 0)["default"],
            Some(7)
        );
        // A node already being deleted counts once (as Karpenter's "disrupting").
        nodes[3].deleting = true;
        assert_eq!(
            free_slots(std::slice::from_ref(&p), &nodes, 0)["default"],
            Some(6)
        );
    }

    #[test]
    fn replacements_in_progress_neither_grow_the_pool_nor_count_as_not_ready() {
        let p = pool("default", Some("10%"));
        let mut nodes = cluster(100);
        // Ten in replacement, each with a replacement that joined (Ready) or is joining.
        for i in 0..10 {
            nodes[i] = replacing(nodes[i].clone(), &[&format!("i-new{i}")]);
            let mut new = node(&format!("new{i}"), "default", &format!("i-new{i}"));
            new.ready = i % 2 == 0;
            nodes.push(new);
        }
        // 110 Nodes, 5 NotReady: Karpenter's arithmetic would allow ceil(11) - 5 - 10 = 0 … or
        // more once they are Ready; here it is exactly 10 - 10.
        assert_eq!(
            free_slots(std::slice::from_ref(&p), &nodes, 0)["default"],
            Some(0)
        );
        // One finishes: its old node goes, its replacement is an ordinary node now.
        nodes.remove(0);
        assert_eq!(
            free_slots(std::slice::from_ref(&p), &nodes, 0)["default"],
            Some(1)
        );
    }

    #[test]
    fn a_pool_without_an_active_budget_is_limited_by_max_parallel_only() {
        let none = pool("free", None);
        assert_eq!(free_slots(&[none], &cluster(5), 0)["free"], None);
    }

    #[test]
    fn pick_takes_in_order_within_slots_and_room_and_resumes_first() {
        let mut queue: VecDeque<Candidate> = vec![
            candidate("resumed", "a", true, 0),
            candidate("a1", "a", false, 1),
            candidate("a2", "a", false, 2),
            candidate("b1", "b", false, 3),
        ]
        .into();
        let slots: BTreeMap<String, Option<u32>> =
            [("a".to_string(), Some(1)), ("b".to_string(), Some(0))]
                .into_iter()
                .collect();
        let picked = pick(&mut queue, slots.clone(), 5);
        let names: Vec<&str> = picked.iter().map(|c| c.node.name.as_str()).collect();
        // The resumed node is counted already; a1 takes pool a's slot; b has none.
        assert_eq!(names, ["resumed", "a1"]);
        let left: Vec<&str> = queue.iter().map(|c| c.node.name.as_str()).collect();
        assert_eq!(left, ["a2", "b1"]);
        // A node held back by a PDB is not picked before it is due.
        let mut held = candidate("held", "a", false, 0);
        held.not_before = Some(Instant::now() + Duration::from_secs(60));
        let mut queue: VecDeque<Candidate> = vec![held].into();
        assert!(pick(&mut queue, slots.clone(), 5).is_empty());
        assert_eq!(queue.len(), 1);
        // --max-parallel room bounds it too.
        let mut queue: VecDeque<Candidate> = vec![
            candidate("a1", "a", false, 0),
            candidate("a2", "a", false, 1),
        ]
        .into();
        let unlimited: BTreeMap<String, Option<u32>> =
            [("a".to_string(), None)].into_iter().collect();
        assert_eq!(pick(&mut queue, unlimited, 1).len(), 1);
        assert_eq!(queue.len(), 1);
    }
}
