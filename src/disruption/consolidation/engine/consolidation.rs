//! Multi- and single-node consolidation: simulate, then delete or replace with one cheaper
//! NodeClaim, scored for the Balanced policy (`core v1.14.1: pkg/controllers/disruption/
//! consolidation.go`, `multinodeconsolidation.go`, `singlenodeconsolidation.go`, `balanced.go`).

use std::collections::BTreeMap;

use super::{Engine, Outcome, Slot, Totals, BALANCED_K, MULTI_NODE_MAX};
use crate::disruption::budgets::DisruptionReason;
use crate::disruption::consolidation::candidate::{self, Candidate, Class};
use crate::disruption::consolidation::cluster::Status;
use crate::disruption::consolidation::input::Release;
use crate::disruption::consolidation::price;
use crate::disruption::consolidation::reason::Reason;
use crate::disruption::consolidation::report::Method;
use crate::disruption::consolidation::sim::{SimResult, Simulator, Stamp};
use rustc_hash::FxHashMap;

impl<S: Simulator> Engine<S> {
    /// `computeConsolidation`: simulate, then delete when no NodeClaim is needed, else replace
    /// with one cheaper NodeClaim. A failure comes with what it depended on. `reasons`: whether
    /// the caller reads a failure's reason (the multi-node search does not).
    pub(super) fn consolidate(
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
    pub(super) fn totals(&self, all: &[Candidate]) -> Vec<Totals> {
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

    pub(super) fn balanced(&self, c: &Candidate) -> bool {
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
    pub(super) fn approve(
        &self,
        cands: &[Candidate],
        savings: f64,
        totals: &[Totals],
    ) -> Result<(), Reason> {
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

    pub(super) fn savings(&self, cands: &[Candidate], outcome: &Outcome) -> f64 {
        let source: f64 = cands.iter().map(Candidate::price_or_zero).sum();
        match outcome {
            Outcome::Delete(_) => source,
            Outcome::Replace(_, choice) => source - choice.price(&self.c),
        }
    }

    pub(super) fn multi(&mut self) -> bool {
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

    pub(super) fn single(&mut self) -> bool {
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
}
