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
use super::cluster::{After, Cluster, PodExtra, Status};
use super::input::{ClaimFacts, Release};
use super::price::{self, Choice};
use super::reason::Reason;
use super::report::{
    Action, ConsolidationReport, Decision, Method, NodeDecision, NodeReport, Replacement,
};
use super::sim::{Failure, PodRef, SimRequest, SimResult, Simulator, Stamp};
use crate::disruption::budgets::{allowed_for_counts, DisruptionReason, NodesValue};
use crate::model::labels;
use crate::model::node::Node;
use crate::model::time::format_rfc3339;
use rustc_hash::FxHashMap;

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
                            window: budget.window().map(Into::into),
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

    // ---------------------------------------------------------------- time-based eligibility

    /// v1 `Consolidatable`: `consolidateAfter` elapsed since the last pod event, else since
    /// initialization (the creation time when the caller has neither).
    fn consolidatable(&self, c: &Candidate) -> Result<(), Reason> {
        let after = match self.c.pools[c.pool].consolidate_after {
            After::Never => {
                return Err(Reason::ConsolidationDisabled {
                    pool: self.c.pool(c.pool).name.clone(),
                })
            }
            After::Unset => 0,
            After::Seconds(s) => s,
        };
        let claim = self.c.nodes[c.node].claim.as_ref().expect("managed");
        if claim.consolidatable_false && self.c.release == Release::V1_14 {
            return Err(Reason::NotConsolidatable {
                claim: claim.name.clone(),
            });
        }
        let since = claim
            .last_pod_event
            .or(claim.initialized_at)
            .unwrap_or(claim.created);
        let left = after - (self.c.now - since);
        if after > 0 && left > 0 {
            return Err(Reason::ConsolidateAfter { after, left });
        }
        Ok(())
    }

    /// Pre-v1 emptiness: the `Empty` condition's age against `consolidateAfter`
    /// (`ttlSecondsAfterEmpty`); an empty node without one became empty now.
    fn empty_long_enough(&self, c: &Candidate) -> Result<(), Reason> {
        let after = match self.c.pools[c.pool].consolidate_after {
            After::Never => {
                return Err(Reason::ConsolidationDisabled {
                    pool: self.c.pool(c.pool).name.clone(),
                })
            }
            After::Unset => 0,
            After::Seconds(s) => s,
        };
        let claim = self.c.nodes[c.node].claim.as_ref().expect("managed");
        let since = claim.empty_since.unwrap_or(self.c.now);
        let left = after - (self.c.now - since);
        if left > 0 {
            return Err(Reason::EmptyFor { after, left });
        }
        Ok(())
    }

    // ---------------------------------------------------------------- methods

    fn step(&mut self, step: Step) -> bool {
        match step {
            Step::Expiration => self.expiration(),
            Step::StaticDrift => self.static_drift(),
            Step::Drift => self.drift(),
            Step::Emptiness => self.emptiness(),
            Step::EmptyConsolidation => self.empty_consolidation(),
            Step::Multi => self.multi(),
            Step::Single => self.single(),
        }
    }

    /// v1: expired NodeClaims are deleted outright, outside the disruption loop — no budget,
    /// no do-not-disrupt or PDB check; their pods go where the provisioner puts them, new
    /// NodeClaims if need be, or stay pending (`nodeclaim/expiration/controller.go`).
    fn expire_v1(&mut self) {
        let now = self.c.now;
        let expired: Vec<usize> = self
            .managed()
            .into_iter()
            .filter(|&i| {
                let n = &self.c.nodes[i];
                let claim = n.claim.as_ref().expect("managed");
                n.status == Status::Active
                    && !self.c.node(i).deleting
                    && claim.expire_after.is_some_and(|d| now >= claim.created + d)
            })
            .collect();
        if expired.is_empty() {
            return;
        }
        // The provisioner places only the pods it can move now (`provisioner.go Schedule`:
        // `nodes.Deleting().CurrentlyReschedulablePods`, core#2033): a do-not-disrupt pod or
        // one a PDB fully blocks stays, and the drain waits for it (core#1789).
        let mut pods = Vec::new();
        for &i in &expired {
            let facts = self.facts(i);
            pods.extend(facts.sim_pods.iter().map(|&p| (i, p)));
        }
        let request = SimRequest {
            candidates: expired.clone(),
            pods,
            consolidation: false,
            with_pending: false,
            reasons: true,
        };
        let result = self.sim.simulate(&mut self.c, &request);
        let left: Vec<PodRef> = result
            .failures
            .iter()
            .filter_map(|f| match f {
                Failure::Unschedulable { pod, .. } => Some(*pod),
                Failure::Uninitialized { .. } => None,
            })
            .collect();
        let choices = (0..result.claims.len())
            .map(|k| Choice::from_claim(&self.c, &result.claims[k], k))
            .collect();
        self.apply(Method::Expiration, &expired, Some(result), choices, left);
    }

    /// Pre-v1 graceful expiration: budgeted; all empty expired nodes at once, else the first
    /// whose pods reschedule, replaced by as many NodeClaims as that takes.
    fn expiration(&mut self) -> bool {
        let now = self.c.now;
        let mut cands: Vec<Candidate> = self
            .candidates(Class::Graceful)
            .into_iter()
            .filter(|c| {
                let claim = self.c.nodes[c.node].claim.as_ref().expect("managed");
                self.c.pools[c.pool]
                    .expire_after
                    .is_some_and(|d| now >= claim.created + d)
            })
            .collect();
        if self.c.release == Release::V0_31 {
            cands = self.v031_filtered(cands, Slot::Expiration);
        }
        let key = |e: &Self, c: &Candidate| {
            let claim = e.c.nodes[c.node].claim.as_ref().expect("managed");
            claim.created + e.c.pools[c.pool].expire_after.unwrap_or(0)
        };
        cands.sort_by(|a, b| {
            key(self, a)
                .cmp(&key(self, b))
                .then_with(|| self.name(a.node).cmp(self.name(b.node)))
        });
        self.one_at_a_time(cands, Method::Expiration, Slot::Expiration, None)
    }

    /// v0.31: `filterCandidates` (a blocking PDB or do-not-evict pod) for the methods that
    /// use it.
    fn v031_filtered(&mut self, cands: Vec<Candidate>, slot: Slot) -> Vec<Candidate> {
        let mut out = Vec::new();
        for c in cands {
            let facts = self.facts(c.node);
            match candidate::v031_filter(&facts) {
                Ok(()) => out.push(c),
                Err(r) => self.note(c.node, slot, r),
            }
        }
        out
    }

    /// Drift: oldest drift first, empty nodes before the others; v1 takes one node per pass,
    /// replaced by as many NodeClaims as its pods need.
    fn drift(&mut self) -> bool {
        if !self.c.gates.drift {
            for i in self.managed() {
                let drifted = self.c.nodes[i]
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.drifted.is_some());
                if drifted {
                    self.note(i, Slot::Drift, Reason::DriftDisabled);
                }
            }
            return false;
        }
        let class = match self.c.release {
            Release::V1_14 => Class::Eventual,
            Release::V0_37 | Release::V0_31 => Class::Graceful,
        };
        // Cheap first: most passes have no drifted node, and eventual candidates note nothing.
        if class == Class::Eventual
            && !self.managed().into_iter().any(|i| {
                self.c.nodes[i]
                    .claim
                    .as_ref()
                    .is_some_and(|c| c.drifted.is_some())
            })
        {
            return false;
        }
        let drift_of = |e: &Self, c: &Candidate| {
            e.c.nodes[c.node]
                .claim
                .as_ref()
                .and_then(|cl| cl.drifted.as_ref().map(|d| d.since))
        };
        let mut cands: Vec<Candidate> = self
            .candidates(class)
            .into_iter()
            .filter(|c| drift_of(self, c).is_some() && !self.static_pool(c))
            .collect();
        if self.c.release == Release::V0_31 {
            cands = self.v031_filtered(cands, Slot::Drift);
        }
        cands.sort_by(|a, b| {
            drift_of(self, a)
                .cmp(&drift_of(self, b))
                .then_with(|| self.name(a.node).cmp(self.name(b.node)))
        });
        self.one_at_a_time(
            cands,
            Method::Drift,
            Slot::Drift,
            self.budget_reason(DisruptionReason::Drifted),
        )
    }

    /// Expiration and drift: v1 tries empty candidates first, one per pass; earlier releases
    /// take every empty candidate the budget allows in one action, else the first candidate
    /// whose pods reschedule.
    fn one_at_a_time(
        &mut self,
        cands: Vec<Candidate>,
        method: Method,
        slot: Slot,
        reason: Option<DisruptionReason>,
    ) -> bool {
        if cands.is_empty() {
            return false;
        }
        let mut budgets = self.budgets(reason);
        let (empty, busy): (Vec<Candidate>, Vec<Candidate>) =
            cands.iter().cloned().partition(|c| c.reschedulable == 0);
        let order: Vec<Candidate> = if self.c.release == Release::V1_14 {
            empty.into_iter().chain(busy).collect()
        } else {
            let mut chosen = Vec::new();
            for c in &empty {
                match Self::take(&mut budgets, c.pool) {
                    Ok(()) => chosen.push(c.node),
                    Err(r) => self.note(c.node, slot, r),
                }
            }
            if !chosen.is_empty() {
                self.apply(method, &chosen, None, Vec::new(), Vec::new());
                return true;
            }
            cands
        };
        for c in order {
            if let Err(r) = Self::has_room(&budgets, c.pool) {
                self.note(c.node, slot, r);
                continue;
            }
            if let Some(r) = self.known_failure(slot, c.node) {
                self.note(c.node, slot, r);
                continue;
            }
            let result = self.simulate(std::slice::from_ref(&c), false, true);
            if let Some(f) = result.failures.first() {
                let r = self.failure_reason(f);
                self.remember_failure(slot, c.node, result.stamp.clone(), &r);
                self.note(c.node, slot, r);
                continue;
            }
            let choices = (0..result.claims.len())
                .map(|k| Choice::from_claim(&self.c, &result.claims[k], k))
                .collect();
            self.apply(method, &[c.node], Some(result), choices, Vec::new());
            return true;
        }
        false
    }

    /// Consolidation's `ShouldDisrupt` over `NewCandidate`'s survivors, noting why a node is
    /// left out.
    fn consolidation_candidates(&mut self, all: Vec<Candidate>) -> Vec<Candidate> {
        let release = self.c.release;
        let mut out = Vec::new();
        for c in all {
            let eligible = match self.graceful_node(c.node).eligible.clone() {
                Some(e) => e,
                None => {
                    let e = self.consolidation_eligible(&c);
                    self.graceful_node(c.node).eligible = Some(e.clone());
                    e
                }
            };
            match eligible {
                Ok(true) => out.push(c),
                Ok(false) => {}
                Err(r) => self.note(c.node, Slot::Consolidation, r),
            }
        }
        if release == Release::V0_31 {
            out = self.v031_filtered(out, Slot::Consolidation);
        }
        out
    }

    /// `Ok(false)`: not consolidation's to decide (an empty v1 node is emptiness's).
    fn consolidation_eligible(&self, c: &Candidate) -> Result<bool, Reason> {
        let pool = self.c.pool(c.pool).name.clone();
        let policy = self.pool_policy(c).to_string();
        let when_empty = || Reason::WhenEmptyNotEmpty {
            pool: pool.clone(),
            pods: c.reschedulable,
        };
        match self.c.release {
            Release::V1_14 => {
                if self.static_pool(c) {
                    return Err(Reason::StaticNodePool { pool });
                }
                let (it, zone, ct) = self.c.offering_labels(c.node);
                if c.instance_type.is_none() {
                    return Err(Reason::UnknownInstanceType {
                        instance_type: it.unwrap_or_default().to_string(),
                    });
                }
                if ct.is_none() {
                    return Err(Reason::MissingLabel {
                        label: labels::CAPACITY_TYPE,
                    });
                }
                if zone.is_none() {
                    return Err(Reason::MissingLabel {
                        label: labels::ZONE,
                    });
                }
                if self.c.pools[c.pool].consolidate_after == After::Never {
                    return Err(Reason::ConsolidationDisabled { pool });
                }
                if c.is_empty(Release::V1_14) {
                    return Ok(false);
                }
                if policy == "WhenEmpty" {
                    return Err(when_empty());
                }
                self.consolidatable(c)?;
                Ok(true)
            }
            Release::V0_37 | Release::V0_31 => {
                if candidate::do_not_consolidate(&self.c, c.node) {
                    return Err(Reason::NodeDoNotConsolidate);
                }
                if self.c.pools[c.pool].consolidate_after == After::Never
                    && policy == "WhenUnderutilized"
                {
                    return Err(Reason::ConsolidationDisabled { pool });
                }
                if policy != "WhenUnderutilized" {
                    // Emptiness decides empty nodes of WhenEmpty pools.
                    return if c.reschedulable == 0 {
                        Ok(false)
                    } else {
                        Err(when_empty())
                    };
                }
                Ok(true)
            }
        }
    }

    /// v1 emptiness: every empty, consolidatable candidate the `Empty` budget allows, deleted in
    /// one action, whatever the policy. Pre-v1: `WhenEmpty` pools only.
    fn emptiness(&mut self) -> bool {
        let release = self.c.release;
        let mut eligible = Vec::new();
        for c in self.candidates(Class::Graceful) {
            let pool = self.c.pool(c.pool).name.clone();
            let verdict = match release {
                Release::V1_14 => {
                    if !c.is_empty(release) {
                        continue;
                    }
                    if self.static_pool(&c) {
                        Err(Reason::StaticNodePool { pool })
                    } else {
                        self.consolidatable(&c)
                    }
                }
                Release::V0_37 | Release::V0_31 => {
                    if self.pool_policy(&c) != "WhenEmpty" {
                        continue;
                    }
                    if self.c.pools[c.pool].consolidate_after == After::Never {
                        Err(Reason::ConsolidationDisabled { pool })
                    } else if c.reschedulable != 0 {
                        Err(Reason::WhenEmptyNotEmpty {
                            pool,
                            pods: c.reschedulable,
                        })
                    } else {
                        self.empty_long_enough(&c)
                    }
                }
            };
            match verdict {
                Ok(()) => eligible.push(c),
                Err(r) => {
                    let slot = if matches!(r, Reason::WhenEmptyNotEmpty { .. }) {
                        Slot::Consolidation
                    } else {
                        Slot::Emptiness
                    };
                    self.note(c.node, slot, r);
                }
            }
        }
        if release == Release::V1_14 {
            candidate::sort_for_consolidation(&self.c, &mut eligible);
        } else {
            eligible.sort_by(|a, b| self.name(a.node).cmp(self.name(b.node)));
        }
        self.delete_empty(eligible, self.budget_reason(DisruptionReason::Empty))
    }

    /// v0.31/v0.37 `WhenUnderutilized`: empty candidates, cheapest to disrupt first, deleted
    /// together within budget.
    fn empty_consolidation(&mut self) -> bool {
        let all = self.candidates(Class::Graceful);
        let mut cands: Vec<Candidate> = self
            .consolidation_candidates(all)
            .into_iter()
            .filter(|c| c.reschedulable == 0)
            .collect();
        candidate::sort_for_consolidation(&self.c, &mut cands);
        self.delete_empty(cands, None)
    }

    fn delete_empty(&mut self, cands: Vec<Candidate>, reason: Option<DisruptionReason>) -> bool {
        if cands.is_empty() {
            return false;
        }
        let mut budgets = self.budgets(reason);
        let mut chosen = Vec::new();
        for c in &cands {
            match Self::take(&mut budgets, c.pool) {
                Ok(()) => chosen.push(c.node),
                Err(r) => self.note(c.node, Slot::Emptiness, r),
            }
        }
        if chosen.is_empty() {
            return false;
        }
        // v1 "empty" nodes may still run pods whose eviction costs nothing: they go pending.
        let mut evicted = Vec::new();
        if self.c.release == Release::V1_14 {
            for &i in &chosen {
                let facts = self.facts(i);
                evicted.extend(
                    facts
                        .reschedulable
                        .iter()
                        .map(|&p| PodRef::Bound { node: i, pod: p }),
                );
            }
        }
        self.apply(Method::Emptiness, &chosen, None, Vec::new(), evicted);
        true
    }

    // ---------------------------------------------------------------- consolidation

    /// `computeConsolidation`: simulate, then delete when no NodeClaim is needed, else replace
    /// with one cheaper NodeClaim. A failure comes with what it depended on. `reasons`: whether
    /// the caller reads a failure's reason (the multi-node search does not).
    fn consolidate(
        &mut self,
        cands: &[Candidate],
        reasons: bool,
    ) -> (Result<Outcome, Reason>, Option<Stamp>) {
        let result = self.simulate(cands, true, reasons);
        let stamp = result.stamp.clone();
        (self.judge(cands, result), stamp)
    }

    fn judge(&self, cands: &[Candidate], result: SimResult) -> Result<Outcome, Reason> {
        if let Some(f) = result.failures.first() {
            return Err(self.failure_reason(f));
        }
        match result.claims.len() {
            0 => Ok(Outcome::Delete(result)),
            1 => {
                let choice =
                    price::consolidation_replacement(&self.c, cands, &result.claims[0], 0)?;
                Ok(Outcome::Replace(result, Box::new(choice)))
            }
            n => Err(Reason::NeedsNodeClaims {
                count: n,
                types: result
                    .claims
                    .iter()
                    .map(|c| c.planned.launch.instance_type.clone())
                    .collect(),
            }),
        }
    }

    /// Balanced pools' totals: every node of the pool's price and disruption cost.
    fn totals(&self, all: &[Candidate]) -> Vec<Totals> {
        let mut totals = vec![Totals::default(); self.c.pools.len()];
        let balanced = |p: usize| self.c.pool(p).disruption.consolidation_policy == "Balanced";
        if self.c.release != Release::V1_14 || !(0..self.c.pools.len()).any(balanced) {
            return totals;
        }
        let mut fallback = vec![0.0; self.c.pools.len()];
        let mut candidate_cost: FxHashMap<usize, f64> = FxHashMap::default();
        for c in all {
            fallback[c.pool] += c.price_or_zero();
            candidate_cost.insert(c.node, c.reschedule_cost);
        }
        for i in 0..self.c.nodes.len() {
            let state = &self.c.nodes[i];
            let Some(p) = state.pool else { continue };
            if state.status == Status::Gone || state.claim.is_none() {
                continue;
            }
            totals[p].cost += self.node_price(i).unwrap_or(0.0);
            totals[p].disruption += match candidate_cost.get(&i) {
                Some(&c) => c,
                None => {
                    let pods = &self.c.pods(i)[..state.original_pods];
                    1.0 + pods
                        .iter()
                        .zip(&state.extras)
                        .filter(|(p, _)| !p.is_daemonset_pod() && !p.is_terminal())
                        .map(|(_, e)| candidate::eviction_cost(e).max(0.0))
                        .sum::<f64>()
                }
            };
        }
        for (t, f) in totals.iter_mut().zip(fallback) {
            if t.cost <= 0.0 {
                t.cost = f;
            }
        }
        totals
    }

    fn balanced(&self, c: &Candidate) -> bool {
        self.c.release == Release::V1_14 && self.pool_policy(c) == "Balanced"
    }

    /// `ScoreMove`: (savings / pool cost) / (disruption / pool disruption) ≥ 1/k.
    pub(crate) fn score(savings: f64, disruption: f64, totals: Totals) -> f64 {
        if totals.cost <= 0.0 || totals.disruption <= 0.0 {
            return 0.0;
        }
        let saving = savings / totals.cost;
        let disrupt = disruption / totals.disruption;
        if saving <= 0.0 {
            0.0
        } else if disrupt == 0.0 {
            f64::INFINITY
        } else {
            saving / disrupt
        }
    }

    /// `EvaluateBalancedMove`: every Balanced pool of the move must approve its share.
    fn approve(&self, cands: &[Candidate], savings: f64, totals: &[Totals]) -> Result<(), Reason> {
        let source: f64 = cands.iter().map(Candidate::price_or_zero).sum();
        let mut pools: Vec<usize> = cands.iter().map(|c| c.pool).collect();
        pools.sort_unstable();
        pools.dedup();
        for &p in &pools {
            let mine: Vec<&Candidate> = cands.iter().filter(|c| c.pool == p).collect();
            if !self.balanced(mine[0]) {
                continue;
            }
            let cost: f64 = mine.iter().map(|c| c.price_or_zero()).sum();
            let share = if source > 0.0 && pools.len() > 1 {
                savings * (cost / source)
            } else {
                savings
            };
            let disruption: f64 = mine.iter().map(|c| c.reschedule_cost).sum();
            let score = Self::score(share, disruption, totals[p]);
            if score < 1.0 / BALANCED_K {
                return Err(Reason::BalancedScore {
                    score,
                    threshold: 1.0 / BALANCED_K,
                });
            }
        }
        Ok(())
    }

    fn savings(&self, cands: &[Candidate], outcome: &Outcome) -> f64 {
        let source: f64 = cands.iter().map(Candidate::price_or_zero).sum();
        match outcome {
            Outcome::Delete(_) => source,
            Outcome::Replace(_, choice) => source - choice.price(&self.c),
        }
    }

    fn multi(&mut self) -> bool {
        let release = self.c.release;
        let all = self.candidates(Class::Graceful);
        let totals = self.totals(&all);
        let mut cands = self.consolidation_candidates(all);
        candidate::sort_for_consolidation(&self.c, &mut cands);
        let mut budgets = self.budgets(self.budget_reason(DisruptionReason::Underutilized));
        let mut batch = Vec::new();
        for c in cands {
            match Self::take(&mut budgets, c.pool) {
                Ok(()) => batch.push(c),
                Err(r) => self.note(c.node, Slot::Consolidation, r),
            }
        }
        if batch.len() < 2 {
            return false;
        }
        // `firstNConsolidationOption`: binary search for the longest prefix (at least two
        // nodes, at most 100 + 1) that can go at once.
        let mut lo = 1;
        let mut hi = batch.len().min(MULTI_NODE_MAX);
        if batch.len() <= hi {
            hi = batch.len() - 1;
        }
        let mut best: Option<(usize, Outcome)> = None;
        while lo <= hi {
            let mid = (lo + hi) / 2;
            let prefix = &batch[..=mid];
            let nodes: Vec<(usize, &[usize])> = prefix
                .iter()
                .map(|c| (c.node, c.facts.sim_pods.as_slice()))
                .collect();
            if let Some(certain) = self.certain.as_mut() {
                if certain.batch_fails(&mut self.c, &mut self.sim, &nodes) {
                    hi = mid - 1;
                    continue;
                }
            }
            // The reason of a failed prefix is never shown: its refusals go unexplained.
            let valid = match self.consolidate(prefix, false).0 {
                Ok(Outcome::Delete(r)) => Some(Outcome::Delete(r)),
                Ok(Outcome::Replace(r, choice)) => {
                    price::without_same_type(&self.c, prefix, *choice)
                        .map(|choice| Outcome::Replace(r, Box::new(choice)))
                }
                Err(_) => None,
            };
            let valid = valid.filter(|o| {
                release != Release::V1_14
                    || self
                        .approve(prefix, self.savings(prefix, o), &totals)
                        .is_ok()
            });
            match valid {
                Some(o) => {
                    best = Some((mid, o));
                    lo = mid + 1;
                }
                None => hi = mid - 1,
            }
        }
        let Some((mid, outcome)) = best else {
            return false;
        };
        let prefix: Vec<Candidate> = batch[..=mid].to_vec();
        self.apply_outcome(Method::Multi, &prefix, outcome);
        true
    }

    fn single(&mut self) -> bool {
        let release = self.c.release;
        let all = self.candidates(Class::Graceful);
        let totals = self.totals(&all);
        let mut cands = self.consolidation_candidates(all);
        candidate::sort_for_consolidation(&self.c, &mut cands);
        if release == Release::V1_14 {
            cands = self.interweave(cands);
        }
        let budgets = self.budgets(self.budget_reason(DisruptionReason::Underutilized));
        for c in cands {
            if let Err(r) = Self::has_room(&budgets, c.pool) {
                self.note(c.node, Slot::Consolidation, r);
                continue;
            }
            let one = std::slice::from_ref(&c);
            // `CanPassThreshold`: if even deleting it scores too low, no replacement will do.
            if self.balanced(&c) {
                if let Err(r) = self.approve(one, c.price_or_zero(), &totals) {
                    self.note(c.node, Slot::Consolidation, r);
                    continue;
                }
            }
            if let Some(r) = self.certain_failure(&c) {
                self.note(c.node, Slot::Consolidation, r);
                continue;
            }
            if let Some(r) = self.known_failure(Slot::Consolidation, c.node) {
                self.note(c.node, Slot::Consolidation, r);
                continue;
            }
            let outcome = match self.consolidate(one, true) {
                (Ok(o), _) => o,
                (Err(r), stamp) => {
                    self.remember_failure(Slot::Consolidation, c.node, stamp, &r);
                    self.note(c.node, Slot::Consolidation, r);
                    continue;
                }
            };
            if release == Release::V1_14 {
                if let Err(r) = self.approve(one, self.savings(one, &outcome), &totals) {
                    self.note(c.node, Slot::Consolidation, r);
                    continue;
                }
            }
            self.apply_outcome(Method::Single, one, outcome);
            return true;
        }
        false
    }

    /// v1 single-node: one candidate of each NodePool in turn (`shuffleCandidates`; pools by
    /// name where Go iterates a map).
    fn interweave(&self, cands: Vec<Candidate>) -> Vec<Candidate> {
        let mut by_pool: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
        for c in cands {
            by_pool
                .entry(self.c.pool(c.pool).name.clone())
                .or_default()
                .push(c);
        }
        let longest = by_pool.values().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::new();
        for i in 0..longest {
            for list in by_pool.values() {
                if let Some(c) = list.get(i) {
                    out.push(c.clone());
                }
            }
        }
        out
    }

    fn apply_outcome(&mut self, method: Method, cands: &[Candidate], outcome: Outcome) {
        let nodes: Vec<usize> = cands.iter().map(|c| c.node).collect();
        match outcome {
            Outcome::Delete(r) => self.apply(method, &nodes, Some(r), Vec::new(), Vec::new()),
            Outcome::Replace(r, choice) => {
                self.apply(method, &nodes, Some(r), vec![*choice], Vec::new())
            }
        }
    }

    // ---------------------------------------------------------------- state changes

    /// Pods of nodes already deleting in the input are placed once, as the provisioner would
    /// (new NodeClaims included); those that fit nowhere stay in every later simulation,
    /// where they fail it as Karpenter's would.
    fn settle_deleting(&mut self) {
        let deleting: Vec<usize> = (0..self.c.nodes.len())
            .filter(|&i| self.c.nodes[i].status == Status::Deleting)
            .collect();
        let mut pods = Vec::new();
        for &i in &deleting {
            let facts = self.facts(i);
            pods.extend(facts.sim_pods.iter().map(|&p| (i, p)));
        }
        if pods.is_empty() {
            return;
        }
        let request = SimRequest {
            candidates: Vec::new(),
            pods,
            consolidation: false,
            with_pending: false,
            reasons: true,
        };
        let result = self.sim.simulate(&mut self.c, &request);
        let stuck: Vec<PodRef> = result
            .failures
            .iter()
            .filter_map(|f| match f {
                Failure::Unschedulable { pod, .. } => Some(*pod),
                Failure::Uninitialized { .. } => None,
            })
            .collect();
        self.commit(&result, None);
        // The provisioner nominates the existing nodes it places these pods on.
        for (node, placed) in &result.placements {
            let mut from: Vec<usize> = placed
                .iter()
                .filter_map(|r| match r {
                    PodRef::Bound { node, .. } => Some(*node),
                    PodRef::Pending(_) | PodRef::Stuck(_) => None,
                })
                .collect();
            from.sort_unstable();
            from.dedup();
            self.c.nodes[*node].receives_from_deleting = from;
        }
        for (k, claim) in result.claims.iter().enumerate() {
            let choice = Choice::from_claim(&self.c, claim, k);
            self.launch(&choice, &result, None);
        }
        self.c.stuck = stuck.iter().map(|r| r.pod(&self.c).clone()).collect();
    }

    /// Moves the simulated pods that are not pending onto their existing destinations.
    fn commit(&mut self, result: &SimResult, action: Option<usize>) {
        for (node, pods) in &result.placements {
            for &r in pods {
                if let Some((pod, extra)) = self.moved_pod(r) {
                    self.c.add_pod(*node, pod, extra);
                }
            }
            if self.c.release != Release::V0_31 {
                if let Some(a) = action {
                    self.c.nodes[*node].receives_from = Some(a);
                }
            }
        }
    }

    fn moved_pod(&self, r: PodRef) -> Option<(crate::model::pod::Pod, PodExtra)> {
        match r {
            PodRef::Bound { node, pod } => Some((
                self.c.pods(node)[pod].clone(),
                self.c.nodes[node].extras[pod],
            )),
            PodRef::Stuck(i) => Some((
                self.c.stuck[i].clone(),
                PodExtra {
                    priority: None,
                    deletion_cost: None,
                    not_ready: false,
                },
            )),
            PodRef::Pending(_) => None,
        }
    }

    /// Adds a replacement NodeClaim as a node holding the pods its simulation gave it.
    fn launch(&mut self, choice: &Choice, result: &SimResult, action: Option<usize>) {
        let claim = &result.claims[choice.claim];
        let finished = self.c.release == Release::V0_31;
        let (it, offering) = match choice.launch(&self.c) {
            Some((it, o)) => (it.clone(), Some(o.clone())),
            None => (
                self.c.sched.pools[choice.pool].instance_types[choice.options[0]].clone(),
                None,
            ),
        };
        self.launched += 1;
        let name = match action {
            Some(a) => format!(
                "{}-replacement-{}-{}",
                claim.planned.node_pool,
                a + 1,
                self.launched
            ),
            None => format!("{}-provisioned-{}", claim.planned.node_pool, self.launched),
        };
        let mut node_labels = claim.planned.labels.clone();
        node_labels.insert(labels::INSTANCE_TYPE.to_string(), it.name.clone());
        node_labels.insert(labels::HOSTNAME.to_string(), name.clone());
        if let Some(o) = &offering {
            node_labels.insert(labels::ZONE.to_string(), o.zone.clone());
            node_labels.insert(labels::CAPACITY_TYPE.to_string(), o.capacity_type.clone());
        }
        if finished {
            node_labels.insert("karpenter.sh/initialized".to_string(), "true".to_string());
        }
        let node = Node {
            name: name.clone(),
            labels: node_labels,
            taints: claim.planned.taints.clone(),
            capacity: it.capacity.clone(),
            allocatable: it.allocatable(),
            ready: finished,
            initialized: finished,
            ..Node::default()
        };
        let facts = ClaimFacts {
            name,
            created: self.c.now,
            initialized_at: finished.then_some(self.c.now),
            ..ClaimFacts::default()
        };
        let i = self.c.add_node(node, facts, choice.pool);
        self.facts.push(None);
        self.decided.push(None);
        self.notes.push(Notes::default());
        for &r in &claim.pods {
            if let Some((pod, extra)) = self.moved_pod(r) {
                self.c.add_pod(i, pod, extra);
            }
        }
    }

    /// Starts an action: its nodes go (deleting; v0.31: gone), its pods move, its
    /// replacements join.
    fn apply(
        &mut self,
        method: Method,
        nodes: &[usize],
        result: Option<SimResult>,
        choices: Vec<Choice>,
        left_pending: Vec<PodRef>,
    ) {
        let a = self.records.len();
        let forceful = method == Method::Expiration && self.c.release == Release::V1_14;
        let source: f64 = nodes
            .iter()
            .map(|&i| self.node_price(i).unwrap_or(0.0))
            .sum();
        let replacements: Vec<_> = choices.iter().map(|c| c.report(&self.c)).collect();
        let savings = source - choices.iter().map(|c| c.price(&self.c)).sum::<f64>();
        let mut moved: Vec<String> = Vec::new();
        if let Some(r) = &result {
            let placed = r.placements.iter().flat_map(|(_, pods)| pods);
            let launched = r.claims.iter().flat_map(|c| &c.pods);
            moved = placed
                .chain(launched)
                .filter(|p| !p.is_pending())
                .map(|p| p.pod(&self.c).key())
                .collect();
            moved.sort();
        }
        let pending_names: Vec<String> =
            left_pending.iter().map(|r| r.pod(&self.c).key()).collect();
        let pending_pods: Vec<_> = left_pending
            .iter()
            .map(|r| {
                let mut p = r.pod(&self.c).clone();
                p.node_name = None;
                p
            })
            .collect();
        self.records.push(Record {
            pass: self.pass,
            method,
            nodes: nodes.to_vec(),
            // v1 expiration is forceful: deleted first, the provisioner launches afterwards.
            replace: !choices.is_empty() && !forceful,
            savings,
            moved,
            left_pending: pending_names,
            replacements,
        });
        if let Some(r) = &result {
            self.commit(r, Some(a));
            for choice in &choices {
                self.launch(choice, r, Some(a));
            }
            // Every stuck pod had to find a place for the action to be possible.
            if r.failures.is_empty() && !self.c.stuck.is_empty() {
                self.c.stuck.clear();
            }
        }
        // v1 moves only the pods it can evict now; the drain waits for the others (forceful
        // expiration, and drift under a terminationGracePeriod: eventual disruption).
        if self.c.release == Release::V1_14 {
            for &i in nodes {
                let facts = self.facts(i);
                let held: Vec<String> = facts
                    .reschedulable
                    .iter()
                    .filter(|p| !facts.sim_pods.contains(p))
                    .map(|&p| self.c.pods(i)[p].key())
                    .collect();
                if !held.is_empty() {
                    self.drain_waits.insert(i, held);
                }
            }
        }
        let status = if self.c.release == Release::V0_31 {
            Status::Gone
        } else {
            Status::Deleting
        };
        for &i in nodes {
            self.c.remove(i, status);
            self.decided[i] = Some(a);
        }
        self.c.pending.extend(pending_pods);
    }

    fn node_price(&self, i: usize) -> Option<f64> {
        let p = self.c.nodes[i].pool?;
        let (it, zone, ct) = self.c.offering_labels(i);
        self.c
            .instance_type(p, it?)?
            .offerings
            .iter()
            .find(|o| Some(o.zone.as_str()) == zone && Some(o.capacity_type.as_str()) == ct)
            .map(|o| o.price)
    }

    // ---------------------------------------------------------------- report

    fn report(mut self, original: usize) -> ConsolidationReport {
        let actions: Vec<Action> = self
            .records
            .iter()
            .map(|r| {
                let mut replacements = r.replacements.clone();
                let first = (!replacements.is_empty()).then(|| replacements.remove(0));
                Action {
                    pass: r.pass,
                    method: r.method,
                    decision: if r.replace {
                        Decision::Replace
                    } else {
                        Decision::Delete
                    },
                    nodes: r
                        .nodes
                        .iter()
                        .map(|&n| self.c.node(n).name.clone())
                        .collect(),
                    replacement: first,
                    additional_replacements: replacements,
                    savings_per_hour: r.savings,
                    pods: r.moved.clone(),
                    pods_left_pending: r.left_pending.clone(),
                }
            })
            .collect();
        let mut nodes = Vec::new();
        for i in 0..original {
            let state = &self.c.nodes[i];
            if state.claim.is_none() {
                continue;
            }
            let node = self.c.node(i);
            let (it, _, ct) = self.c.offering_labels(i);
            let mut entry = NodeReport {
                name: node.name.clone(),
                node_pool: node.node_pool().unwrap_or_default().to_string(),
                instance_type: it.unwrap_or_default().to_string(),
                capacity_type: ct.unwrap_or_default().to_string(),
                price_per_hour: self.node_price(i),
                decision: NodeDecision::None,
                replacement_type: None,
                method: None,
                pass: None,
                reason: None,
                drain_waits_for: Vec::new(),
            };
            match self.decided[i] {
                Some(a) => {
                    let action = &actions[a];
                    entry.decision = match action.decision {
                        Decision::Delete => NodeDecision::Delete,
                        Decision::Replace => NodeDecision::Replace,
                    };
                    if action.decision == Decision::Replace {
                        entry.replacement_type =
                            action.replacement.as_ref().map(|r| r.instance_type.clone());
                    }
                    entry.method = Some(action.method);
                    entry.pass = Some(action.pass);
                    entry.drain_waits_for = self.drain_waits.remove(&i).unwrap_or_default();
                }
                None => {
                    entry.reason = self.notes[i].take_first();
                }
            }
            nodes.push(entry);
        }
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        ConsolidationReport {
            kind: "ConsolidationReport",
            karpenter_version: self.c.release.version().to_string(),
            now: format_rfc3339(self.c.now),
            savings_per_hour: actions.iter().map(|a| a.savings_per_hour).sum(),
            actions,
            nodes,
        }
    }
}
