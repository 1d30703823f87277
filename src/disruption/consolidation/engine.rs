//! The disruption controller's passes: each pass tries the release's methods in order and stops
//! at the first that starts an action; passes repeat until one starts nothing. An action's
//! nodes stay marked for deletion in later passes (counted against budgets), the pods it moves
//! are where its simulation put them (nominating those nodes), and its replacements are nodes
//! that are not initialized yet. v0.31 waited for each action to finish: its nodes are gone and
//! its replacements ready in the next pass.
//!
//! Upstream: `core v1.14.1: pkg/controllers/disruption/controller.go` (method order, one
//! method per pass), `emptiness.go`, `drift.go`, `multinodeconsolidation.go`,
//! `singlenodeconsolidation.go`, `consolidation.go`, `balanced.go`, `helpers.go`
//! (`BuildDisruptionBudgetMapping`), `queue.go StartCommand` (mark for deletion, nominate);
//! `pkg/controllers/nodeclaim/expiration/controller.go` (v1 forceful expiration),
//! `pkg/controllers/nodeclaim/disruption/consolidation.go` (`Consolidatable`);
//! `core v0.37.7: pkg/controllers/disruption/{controller,expiration,drift,emptiness,
//! emptynodeconsolidation,multinodeconsolidation,singlenodeconsolidation,consolidation}.go`;
//! `core v0.31.4: pkg/controllers/deprovisioning/*.go`.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::candidate::{self, Candidate, Class, PodFacts};
use super::certain::CertainFailures;
use super::cluster::{Cluster, Status};
use super::input::Release;
use super::price::Choice;
use super::reason::Reason;
use super::report::{ConsolidationReport, Method, Replacement};
use super::sim::{Failure, SimRequest, SimResult, Simulator, Stamp};
use crate::disruption::budgets::{allowed_for_counts, DisruptionReason, NodesValue};
use rustc_hash::FxHashMap;

mod consolidation;
mod methods;
mod reporting;
mod state;
mod static_drift;

/// The multi-node batch cap (`maxParallel`).
const MULTI_NODE_MAX: usize = 100;
/// `v1.BalancedK`: a Balanced move passes when its score is at least 1/k.
const BALANCED_K: f64 = 2.0;

/// Where a reason was found, most telling first when a node has several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Slot {
    Expiration,
    Drift,
    Emptiness,
    Consolidation,
    Filter,
}

/// A node's reasons of one pass, one per [`Slot`]. Every node's are cleared and noted again in
/// every pass (thousands of nodes, hundreds of passes): a fixed array keeps that free of the
/// container's own allocations.
#[derive(Debug, Clone, Default)]
struct Notes([Option<Reason>; 5]);

impl Notes {
    fn insert(&mut self, slot: Slot, reason: Reason) {
        self.0[slot as usize] = Some(reason);
    }

    fn clear(&mut self) {
        self.0 = Default::default();
    }

    /// The most telling reason (the first slot holding one).
    fn take_first(&mut self) -> Option<Reason> {
        self.0.iter_mut().find_map(Option::take)
    }
}

/// The release's methods, in the controller's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Expiration,
    StaticDrift,
    Drift,
    Emptiness,
    EmptyConsolidation,
    Multi,
    Single,
}

fn steps(release: Release) -> &'static [Step] {
    match release {
        Release::V1_14 => &[
            Step::Emptiness,
            Step::StaticDrift,
            Step::Drift,
            Step::Multi,
            Step::Single,
        ],
        Release::V0_37 | Release::V0_31 => &[
            Step::Expiration,
            Step::Drift,
            Step::Emptiness,
            Step::EmptyConsolidation,
            Step::Multi,
            Step::Single,
        ],
    }
}

/// An action, as recorded.
struct Record {
    pass: u32,
    method: Method,
    nodes: Vec<usize>,
    replace: bool,
    savings: f64,
    moved: Vec<String>,
    left_pending: Vec<String>,
    replacements: Vec<Replacement>,
    /// Destinations held back by their own `consolidateAfter` that had room (core#3225).
    held_back: Vec<(String, i64)>,
}

/// What a consolidation attempt found.
enum Outcome {
    Delete(SimResult),
    Replace(SimResult, Box<Choice>),
}

/// A NodePool's remaining budget for one pass and method.
#[derive(Clone)]
struct PoolBudget {
    left: Option<u32>,
    blocked: Option<Reason>,
}

/// Pool totals for Balanced scoring (`NodePoolTotals`).
#[derive(Clone, Copy, Default)]
pub(crate) struct Totals {
    pub cost: f64,
    pub disruption: f64,
}

/// A node's graceful candidacy as last worked out.
struct GracefulNode {
    version: u64,
    receives_from: Option<usize>,
    candidate: Result<Candidate, Reason>,
    /// `consolidation_eligible`, once asked.
    eligible: Option<Result<bool, Reason>>,
}

/// Runs the passes and builds the report.
pub(crate) struct Engine<S: Simulator> {
    c: Cluster,
    sim: S,
    facts: Vec<Option<(u64, Rc<PodFacts>)>>,
    records: Vec<Record>,
    decided: Vec<Option<usize>>,
    notes: Vec<Notes>,
    /// Per node disrupted (v1): the pods its drain waits for (`namespace/name`).
    drain_waits: BTreeMap<usize, Vec<String>>,
    pass: u32,
    launched: usize,
    /// Simulations that failed in an earlier pass and may still hold, by method and node, with
    /// the node's version then (its pods are what was simulated).
    failed: FxHashMap<(Slot, usize), (u64, Stamp, Reason)>,
    /// Stop after this many passes (`None`: until one starts nothing).
    max_passes: Option<u32>,
    /// The graceful candidates as last built, with the pass and cluster epoch they were built
    /// at: the methods of one pass see the same candidates while nothing has changed.
    graceful: Option<(u32, u64, Vec<Candidate>)>,
    /// Per node: its graceful candidate (or why not) and whether consolidation takes it, at the
    /// node's version and nomination (what they read of the node changes only with those; the
    /// pools, the clock and the labels do not change during a run).
    graceful_nodes: Vec<Option<GracefulNode>>,
    /// Candidates' pods certain to fit nowhere, kept while what they depend on holds; `None`
    /// to simulate every candidate in full (tests check the decisions are the same).
    certain: Option<CertainFailures>,
}

impl<S: Simulator> Engine<S> {
    /// Stops after `passes` passes: what the controller would start now is pass 1.
    pub fn passes(mut self, passes: u32) -> Self {
        self.max_passes = Some(passes);
        self
    }

    /// Simulates every candidate in full, without asking first whether one of its pods is
    /// certain to fit nowhere (the decisions are the same; reasons may name another pod).
    #[cfg(test)]
    pub fn without_certain_failures(mut self) -> Self {
        self.certain = None;
        self
    }

    pub fn new(cluster: Cluster, sim: S) -> Self {
        let n = cluster.nodes.len();
        Engine {
            c: cluster,
            sim,
            facts: vec![None; n],
            records: Vec::new(),
            decided: vec![None; n],
            drain_waits: BTreeMap::new(),
            notes: vec![Notes::default(); n],
            pass: 1,
            launched: 0,
            failed: FxHashMap::default(),
            max_passes: None,
            graceful: None,
            certain: Some(CertainFailures::default()),
            graceful_nodes: Vec::new(),
        }
    }

    pub fn run(mut self) -> ConsolidationReport {
        let original = self.c.nodes.len();
        self.settle_deleting();
        if self.c.release == Release::V1_14 {
            self.expire_v1();
        }
        loop {
            for n in &mut self.notes {
                n.clear();
            }
            let acted = steps(self.c.release).iter().any(|&s| self.step(s));
            // Every action takes at least one node away, so this ends.
            let last = self.max_passes.is_some_and(|m| self.pass >= m);
            if !acted || last || self.pass as usize > original + 1 {
                break;
            }
            self.pass += 1;
        }
        self.report(original)
    }

    // ---------------------------------------------------------------- bookkeeping

    fn facts(&mut self, i: usize) -> Rc<PodFacts> {
        let version = self.c.nodes[i].version;
        if let Some((v, f)) = &self.facts[i] {
            if *v == version {
                return f.clone();
            }
        }
        let f = Rc::new(candidate::pod_facts(&self.c, i));
        self.facts[i] = Some((version, f.clone()));
        f
    }

    fn note(&mut self, i: usize, slot: Slot, reason: Reason) {
        let reason = match reason {
            Reason::ReceivesPods { .. } => match self.c.nodes[i].receives_from {
                Some(a) => {
                    let r = &self.records[a];
                    Reason::ReceivesPods {
                        pass: r.pass,
                        from: r
                            .nodes
                            .iter()
                            .map(|&n| self.c.node(n).name.clone())
                            .collect(),
                    }
                }
                // Pass 0: nodes already deleting in the input.
                None => Reason::ReceivesPods {
                    pass: 0,
                    from: self.c.nodes[i]
                        .receives_from_deleting
                        .iter()
                        .map(|&n| self.c.node(n).name.clone())
                        .collect(),
                },
            },
            other => other,
        };
        self.notes[i].insert(slot, reason);
    }

    fn managed(&self) -> Vec<usize> {
        (0..self.c.nodes.len())
            .filter(|&i| self.c.nodes[i].claim.is_some() && self.c.nodes[i].status != Status::Gone)
            .collect()
    }

    /// Every node that passes `NewCandidate`; the others' reasons are noted (graceful class).
    /// The graceful ones are built once per pass while the cluster does not change (every
    /// change touches a node and so moves the epoch); their reasons were noted the first time.
    fn candidates(&mut self, class: Class) -> Vec<Candidate> {
        if class == Class::Graceful {
            if let Some((pass, epoch, cands)) = &self.graceful {
                if *pass == self.pass && *epoch == self.c.epoch {
                    return cands.clone();
                }
            }
            let cands = self.build_candidates(class);
            self.graceful = Some((self.pass, self.c.epoch, cands.clone()));
            return cands;
        }
        self.build_candidates(class)
    }

    fn build_candidates(&mut self, class: Class) -> Vec<Candidate> {
        let mut out = Vec::new();
        for i in self.managed() {
            if class == Class::Graceful {
                match self.graceful_node(i).candidate.clone() {
                    Ok(c) => out.push(c),
                    Err(r) => self.note(i, Slot::Filter, r),
                }
                continue;
            }
            let facts = self.facts(i);
            if let Ok(c) = candidate::candidate(&self.c, i, &facts, class) {
                out.push(c);
            }
        }
        out
    }

    /// Whether node `i`'s graceful candidacy as kept is up to date.
    fn graceful_node_fresh(&self, i: usize) -> bool {
        let state = &self.c.nodes[i];
        self.graceful_nodes
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|g| g.version == state.version && g.receives_from == state.receives_from)
    }

    /// Node `i`'s graceful candidacy, worked out again only when the node changed.
    fn graceful_node(&mut self, i: usize) -> &mut GracefulNode {
        if self.graceful_nodes.len() <= i {
            self.graceful_nodes.resize_with(self.c.nodes.len(), || None);
        }
        if !self.graceful_node_fresh(i) {
            let state = &self.c.nodes[i];
            let (version, receives_from) = (state.version, state.receives_from);
            let facts = self.facts(i);
            self.graceful_nodes[i] = Some(GracefulNode {
                version,
                receives_from,
                candidate: candidate::candidate(&self.c, i, &facts, Class::Graceful),
                eligible: None,
            });
        }
        self.graceful_nodes[i].as_mut().expect("just filled")
    }

    fn name(&self, i: usize) -> &str {
        &self.c.node(i).name
    }

    fn pool_policy(&self, c: &Candidate) -> &str {
        &self.c.pool(c.pool).disruption.consolidation_policy
    }

    fn static_pool(&self, c: &Candidate) -> bool {
        self.c.pool(c.pool).replicas.is_some()
    }

    /// `BuildDisruptionBudgetMapping`: per pool, what the budgets allow minus the pool's nodes
    /// already disrupting. v0.31 has no budgets.
    fn budgets(&self, reason: Option<DisruptionReason>) -> Vec<PoolBudget> {
        let pools = self.c.pools.len();
        if self.c.release == Release::V0_31 {
            return vec![
                PoolBudget {
                    left: None,
                    blocked: None
                };
                pools
            ];
        }
        let mut counted = vec![0u32; pools];
        let mut disrupting = vec![0u32; pools];
        for (i, n) in self.c.nodes.iter().enumerate() {
            let (Some(p), Some(claim)) = (n.pool, &n.claim) else {
                continue;
            };
            let node = self.c.node(i);
            if !node.initialized || n.status == Status::Gone || claim.instance_terminating {
                continue;
            }
            counted[p] += 1;
            if !node.ready || n.status == Status::Deleting {
                disrupting[p] += 1;
            }
        }
        (0..pools)
            .map(|p| {
                let pool = self.c.pool(p);
                let a = allowed_for_counts(
                    pool,
                    counted[p],
                    disrupting[p],
                    reason.unwrap_or(DisruptionReason::Underutilized),
                    self.c.now,
                );
                let blocked = if let Some((_, e)) = &a.invalid {
                    Some(Reason::InvalidBudget {
                        pool: pool.name.clone(),
                        problem: e.to_string(),
                    })
                } else {
                    a.limiting_budget.map(|b| {
                        let budget = &pool.disruption.budgets[b];
                        Reason::Budget {
                            pool: pool.name.as_str().into(),
                            reason,
                            total: NodesValue::parse(&budget.nodes)
                                .map_or(0, |v| v.scaled(counted[p])),
                            nodes: budget.nodes.as_str().into(),
                            window: crate::disruption::budgets::window_text(budget, self.c.now)
                                .map(Into::into),
                            counted: counted[p],
                            disrupting: disrupting[p],
                        }
                    })
                };
                PoolBudget {
                    left: a.allowed,
                    blocked,
                }
            })
            .collect()
    }

    fn budget_reason(&self, release_reason: DisruptionReason) -> Option<DisruptionReason> {
        (self.c.release == Release::V1_14).then_some(release_reason)
    }

    /// Takes one from the pool's budget, or says why not.
    fn take(budgets: &mut [PoolBudget], pool: usize) -> Result<(), Reason> {
        let b = &mut budgets[pool];
        match b.left {
            None => Ok(()),
            Some(n) if n > 0 => {
                b.left = Some(n - 1);
                Ok(())
            }
            Some(_) => Err(b.blocked.clone().expect("a limit comes from a budget")),
        }
    }

    fn has_room(budgets: &[PoolBudget], pool: usize) -> Result<(), Reason> {
        match budgets[pool].left {
            Some(0) => Err(budgets[pool]
                .blocked
                .clone()
                .expect("a limit comes from a budget")),
            _ => Ok(()),
        }
    }

    /// `reasons`: whether a failure's reason is read (see [`SimRequest::reasons`]).
    fn simulate(&mut self, cands: &[Candidate], consolidation: bool, reasons: bool) -> SimResult {
        let mut candidates: Vec<usize> = cands.iter().map(|c| c.node).collect();
        candidates.sort_unstable();
        let pods = cands
            .iter()
            .flat_map(|c| c.facts.sim_pods.iter().map(move |&p| (c.node, p)))
            .collect();
        let request = SimRequest {
            candidates,
            pods,
            consolidation,
            with_pending: true,
            reasons,
        };
        self.sim.simulate(&mut self.c, &request)
    }

    /// A pod of the candidate certain to fit nowhere, whatever its simulation would place
    /// around it (`certain.rs`): the simulation would fail, and this pod is the reason given.
    fn certain_failure(&mut self, c: &Candidate) -> Option<Reason> {
        let certain =
            self.certain
                .as_mut()?
                .of(&mut self.c, &mut self.sim, c.node, &c.facts.sim_pods)?;
        let p = certain.pod.pod(&self.c);
        Some(Reason::PodFitsNowhere {
            pod: p.key(),
            requests: p.requests.to_string(),
            detail: certain.detail,
        })
    }

    /// A failure of an earlier pass that still holds for `node` under `slot`.
    fn known_failure(&self, slot: Slot, node: usize) -> Option<Reason> {
        let (version, stamp, reason) = self.failed.get(&(slot, node))?;
        (*version == self.c.nodes[node].version && self.sim.still_valid(&self.c, stamp))
            .then(|| reason.clone())
    }

    fn remember_failure(&mut self, slot: Slot, node: usize, stamp: Option<Stamp>, reason: &Reason) {
        if let Some(stamp) = stamp {
            let version = self.c.nodes[node].version;
            self.failed
                .insert((slot, node), (version, stamp, reason.clone()));
        }
    }

    fn failure_reason(&self, f: &Failure) -> Reason {
        match f {
            Failure::Unschedulable { pod, detail } => {
                let p = pod.pod(&self.c);
                Reason::PodFitsNowhere {
                    pod: p.key(),
                    requests: p.requests.to_string(),
                    detail: detail.clone(),
                }
            }
            Failure::Uninitialized { pod, node } => Reason::UninitializedDestination {
                pod: pod.pod(&self.c).key(),
                node: self.name(*node).to_string(),
            },
        }
    }
}
