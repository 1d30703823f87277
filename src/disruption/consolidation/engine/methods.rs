//! Time-based eligibility and the methods that never buy capacity: v1 expiration (forceful,
//! unbudgeted), v0.37/v0.31 expiration, drift, emptiness and empty-node consolidation
//! (`core v1.14.1: pkg/controllers/nodeclaim/expiration/controller.go`, `disruption/drift.go`,
//! `disruption/emptiness.go`; `pkg/controllers/nodeclaim/disruption/consolidation.go`).

use super::{Engine, Slot, Step};
use crate::disruption::budgets::DisruptionReason;
use crate::disruption::consolidation::candidate::{self, Candidate, Class};
use crate::disruption::consolidation::cluster::{After, Status};
use crate::disruption::consolidation::input::Release;
use crate::disruption::consolidation::price::Choice;
use crate::disruption::consolidation::reason::{Reason, WindowStart};
use crate::disruption::consolidation::report::Method;
use crate::disruption::consolidation::sim::{PodRef, SimRequest, Simulator};

impl<S: Simulator> Engine<S> {
    /// The candidate's pool's `consolidateAfter` in seconds (0 when unset); `Never` disables it.
    fn consolidate_after(&self, c: &Candidate) -> Result<i64, Reason> {
        match self.c.pools[c.pool].consolidate_after {
            After::Never => Err(Reason::ConsolidationDisabled {
                pool: self.c.pool(c.pool).name.clone(),
            }),
            After::Unset => Ok(0),
            After::Seconds(s) => Ok(s),
        }
    }

    /// v1 `Consolidatable`: `consolidateAfter` elapsed since the last pod event, else since
    /// initialization (the creation time when the caller has neither).
    fn consolidatable(&self, c: &Candidate) -> Result<(), Reason> {
        let after = self.consolidate_after(c)?;
        let claim = self.c.nodes[c.node].claim.as_ref().expect("managed");
        if claim.consolidatable_false && self.c.release == Release::V1_14 {
            return Err(Reason::NotConsolidatable {
                claim: claim.name.clone(),
            });
        }
        let since = match (claim.last_pod_event, claim.initialized_at) {
            (Some(t), _) => WindowStart::LastPodEvent(t),
            (None, Some(t)) => WindowStart::Initialized(t),
            (None, None) => WindowStart::Created(claim.created),
        };
        let left = after - (self.c.now - since.at());
        if after > 0 && left > 0 {
            return Err(Reason::ConsolidateAfter { after, left, since });
        }
        Ok(())
    }

    /// Pre-v1 emptiness: the `Empty` condition's age against `consolidateAfter`
    /// (`ttlSecondsAfterEmpty`); an empty node without one became empty now.
    fn empty_long_enough(&self, c: &Candidate) -> Result<(), Reason> {
        let after = self.consolidate_after(c)?;
        let claim = self.c.nodes[c.node].claim.as_ref().expect("managed");
        let since = claim.empty_since.unwrap_or(self.c.now);
        let left = after - (self.c.now - since);
        if left > 0 {
            return Err(Reason::EmptyFor { after, left });
        }
        Ok(())
    }

    // ---------------------------------------------------------------- the methods

    pub(super) fn step(&mut self, step: Step) -> bool {
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
    pub(super) fn expire_v1(&mut self) {
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
        let left = result.unschedulable_pods();
        let choices = (0..result.claims.len())
            .map(|k| Choice::from_claim(&self.c, &result.claims[k], k))
            .collect();
        self.apply(Method::Expiration, &expired, Some(result), choices, left);
    }

    /// Pre-v1 graceful expiration: budgeted; all empty expired nodes at once, else the first
    /// whose pods reschedule, replaced by as many NodeClaims as that takes.
    pub(super) fn expiration(&mut self) -> bool {
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
    pub(super) fn drift(&mut self) -> bool {
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
    pub(super) fn consolidation_candidates(&mut self, all: Vec<Candidate>) -> Vec<Candidate> {
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
    pub(super) fn consolidation_eligible(&self, c: &Candidate) -> Result<bool, Reason> {
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
                candidate::offering_labels_present(zone, ct)?;
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
    pub(super) fn emptiness(&mut self) -> bool {
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
                    } else if self.c.nodes[c.node].buffer_pods {
                        Err(Reason::BufferPods)
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
}
