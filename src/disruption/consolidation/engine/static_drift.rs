//! The engine's StaticDrift method (v1.14, between Emptiness and Drift): the decision is
//! [`crate::disruption::static_drift`]; here the engine's candidates, counts and budgets go in,
//! and each replaced node becomes its own action with one bare NodeClaim of its pool's template
//! (`core v1.14.1: pkg/controllers/disruption/staticdrift.go`).
//!
//! No pod is simulated (Karpenter's command has no scheduling results): the node's
//! reschedulable pods are evicted once its replica is initialized and go where the
//! provisioner puts them. Here they are taken to land on the replica (the same template) as
//! far as its allocatable holds them, in order (DaemonSet overhead not counted); the rest go
//! pending (`podsLeftPending`), so later passes still count every pod.

use super::{Engine, Slot};
use crate::disruption::budgets::DisruptionReason;
use crate::disruption::consolidation::candidate::{Candidate, Class};
use crate::disruption::consolidation::cluster::Status;
use crate::disruption::consolidation::price::Choice;
use crate::disruption::consolidation::reason::Reason;
use crate::disruption::consolidation::report::Method;
use crate::disruption::consolidation::sim::{Claim, PodRef, SimResult, Simulator};
use crate::disruption::static_drift::{decide, Drifted, Hold, PoolState};
use crate::model::resources::Resources;
use crate::scheduling::template_claim;

impl<S: Simulator> Engine<S> {
    /// `StaticDrift`: drifted NodeClaims of static pools, replaced by bare replicas.
    pub(super) fn static_drift(&mut self) -> bool {
        // Cheap first: most clusters have no drifted node in a static pool.
        let any = self.managed().into_iter().any(|i| {
            let n = &self.c.nodes[i];
            n.pool.is_some_and(|p| self.c.pool(p).replicas.is_some())
                && n.claim.as_ref().is_some_and(|cl| cl.drifted.is_some())
        });
        if !self.c.gates.drift || !any {
            return false;
        }
        let cands: Vec<Candidate> = self
            .candidates(Class::Eventual)
            .into_iter()
            .filter(|c| {
                self.static_pool(c)
                    && self.c.nodes[c.node]
                        .claim
                        .as_ref()
                        .is_some_and(|cl| cl.drifted.is_some())
            })
            .collect();
        if cands.is_empty() {
            return false;
        }
        let budgets = self.budgets(Some(DisruptionReason::Drifted));
        let pools: Vec<PoolState> = (0..self.c.pools.len())
            .filter_map(|p| self.static_pool_state(p, budgets[p].left))
            .collect();
        let drifted: Vec<Drifted<usize>> = cands
            .iter()
            .map(|c| Drifted {
                key: c.node,
                name: self.name(c.node).to_string(),
                pool: self.c.pool(c.pool).name.clone(),
            })
            .collect();
        let plan = decide(&pools, &drifted);
        for (d, hold) in plan.held {
            let pool = cands.iter().find(|c| c.node == d.key).map(|c| c.pool);
            let reason = match (&hold, pool.and_then(|p| budgets[p].blocked.clone())) {
                (Hold::Budget { .. }, Some(budget)) => budget,
                _ => Reason::StaticDrift(hold),
            };
            self.note(d.key, Slot::Drift, reason);
        }
        let mut acted = false;
        for d in plan.replace {
            let c = cands.iter().find(|c| c.node == d.key).expect("a candidate");
            let Some(planned) = template_claim(&self.c.sched, &d.pool) else {
                self.note(
                    c.node,
                    Slot::Drift,
                    Reason::UnknownNodePool {
                        pool: d.pool.clone(),
                    },
                );
                continue;
            };
            let mut result = SimResult {
                claims: vec![Claim {
                    pool: c.pool,
                    planned,
                    pods: Vec::new(),
                }],
                ..SimResult::default()
            };
            let choice = Choice::from_claim(&self.c, &result.claims[0], 0);
            let (fit, pending) = self.onto_replica(c, &choice);
            result.claims[0].pods = fit;
            self.apply(
                Method::StaticDrift,
                &[c.node],
                Some(result),
                vec![choice],
                pending,
            );
            acted = true;
        }
        acted
    }

    /// The candidate's reschedulable pods split into those the replica's allocatable holds, in
    /// order, and the rest, which go pending (the provisioner's to place).
    fn onto_replica(&self, c: &Candidate, choice: &Choice) -> (Vec<PodRef>, Vec<PodRef>) {
        let room = choice
            .launch(&self.c)
            .map_or_else(Resources::new, |(it, _)| it.allocatable());
        let mut used = Resources::new();
        c.facts
            .reschedulable
            .iter()
            .map(|&pod| PodRef::Bound { node: c.node, pod })
            .partition(|r| {
                let with = used.add(&r.pod(&self.c).requests);
                let fits = with.fits_in(&room);
                if fits {
                    used = with;
                }
                fits
            })
    }

    /// `NodePoolState.GetNodeCount` of static pool `p` (`None`: not static): its NodeClaims
    /// running (replacements in flight included) and deleting (the input's, and the nodes of
    /// earlier passes' actions, which Karpenter marks for deletion when a command starts).
    fn static_pool_state(&self, p: usize, budget: Option<u32>) -> Option<PoolState> {
        let pool = self.c.pool(p);
        let replicas = pool.replicas?;
        let (mut running, mut deleting) = (0, 0);
        for (i, n) in self.c.nodes.iter().enumerate() {
            if n.pool != Some(p) || n.claim.is_none() || n.status == Status::Gone {
                continue;
            }
            if n.status == Status::Deleting || self.c.node(i).deleting {
                deleting += 1;
            } else {
                running += 1;
            }
        }
        Some(PoolState {
            name: pool.name.clone(),
            replicas,
            node_limit: pool.limits.get("nodes").map(|m| m / 1000),
            running,
            deleting,
            pending_disruption: 0,
            budget,
        })
    }
}

#[cfg(test)]
mod tests;
