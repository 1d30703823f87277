//! Static NodePools drifted (`spec.replicas`): which drifted NodeClaims of a static pool are
//! replaced now by a bare NodeClaim of the pool's template, and why each other one waits
//! (docs/karpenter.md §6.11).
//!
//! Mirrors `core v1.14.1: pkg/controllers/disruption/staticdrift.go` (`StaticDrift`), tests
//! `staticdrift_test.go`, with `pkg/controllers/state/statenodepool.go` (`GetNodeCount`,
//! `ReserveNodeCount`) and `controller.go` (methods: Emptiness, StaticDrift, Drift, MultiNode,
//! SingleNode):
//!
//! - a candidate is a drifted NodeClaim (`Drifted=True`) of a static pool that passes
//!   `NewCandidate` for the eventual class (the caller filters; the regular Drift method takes
//!   no static pool's node, `drift.go ShouldDisrupt`);
//! - per pool: nothing while the pool's `Drifted` budget allows 0;
//! - nothing while the pool runs more than its replicas — `running + pending disruption >
//!   replicas`: scale-down goes first (NodeClaims being deleted are not counted);
//! - `min(budget, candidates)` wanted, granted against `limits.nodes` (`ReserveNodeCount`:
//!   `limit − (running + deleting + pending disruption)`, never below 0; no limit: unbounded),
//!   so the replacement launched before the drifted node goes never bursts over the limit;
//! - the first `granted` candidates are replaced, each by its own command with one bare
//!   NodeClaim (`scheduling.NewNodeClaimTemplate(np)`: no pod is simulated, the pods are
//!   evicted and go where the provisioner puts them).
//!
//! Order: Karpenter's candidates come from `cluster.DeepCopyNodes()` (`lo.Values` of a map) and
//! its pools from ranging over a `lo.GroupBy` map, so which `npCandidates[:n]` it takes is
//! random. Here pools go by name and a pool's candidates by name, so a run is repeatable.
//! A reservation is held only until the replacement is created (`ReleaseNodeCount` in
//! `provisioner.CreateNodeClaims`): between decisions none is outstanding, so none is an input.

use std::collections::BTreeMap;
use std::fmt;

/// A static pool as StaticDrift reads it (`NodePoolState.GetNodeCount` and the spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolState {
    /// The pool.
    pub name: String,
    /// `spec.replicas`.
    pub replicas: i64,
    /// `spec.limits.nodes`, if set.
    pub node_limit: Option<i64>,
    /// NodeClaims running (launched or launching, not being deleted, not pending disruption).
    pub running: usize,
    /// NodeClaims being deleted.
    pub deleting: usize,
    /// NodeClaims of a disruption command in flight, not deleted yet.
    pub pending_disruption: usize,
    /// What its `Drifted` budget allows now (`None`: no limit).
    pub budget: Option<u32>,
}

/// A drifted NodeClaim of a static pool that passed `NewCandidate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drifted<K> {
    /// The caller's handle.
    pub key: K,
    /// Its node's (else NodeClaim's) name, for the order.
    pub name: String,
    /// Its pool.
    pub pool: String,
}

/// Why a drifted static NodeClaim is left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// The pool's `Drifted` budget is used up (`allowed` of it this round, `candidates` drifted).
    Budget {
        /// The pool.
        pool: String,
        /// What the budget allowed this round.
        allowed: u32,
        /// The pool's drifted candidates.
        candidates: usize,
    },
    /// The pool runs more NodeClaims than its replicas: scale-down goes first.
    AboveReplicas {
        /// The pool.
        pool: String,
        /// Running NodeClaims.
        running: usize,
        /// NodeClaims pending disruption.
        pending_disruption: usize,
        /// `spec.replicas`.
        replicas: i64,
    },
    /// `limits.nodes` leaves no room for another replacement.
    NodeLimit {
        /// The pool.
        pool: String,
        /// `limits.nodes`.
        limit: i64,
        /// NodeClaims counted against it (running, deleting, pending disruption).
        counted: usize,
        /// Replacements granted this round.
        granted: i64,
    },
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hold::Budget {
                pool,
                allowed,
                candidates,
            } => write!(
                f,
                "budget Drifted of NodePool {pool}: {allowed} of {candidates} drifted now"
            ),
            Hold::AboveReplicas {
                pool,
                running,
                pending_disruption,
                replicas,
            } => write!(
                f,
                "NodePool {pool} above replicas ({running} running + {pending_disruption} \
                 pending disruption > {replicas}): scale-down first"
            ),
            Hold::NodeLimit {
                pool,
                limit,
                counted,
                granted,
            } => write!(
                f,
                "limits.nodes {limit} of NodePool {pool} reached ({counted} NodeClaims, \
                 {granted} replacements granted now)"
            ),
        }
    }
}

impl Hold {
    /// A stable kind, for JSON and filters.
    pub fn kind(&self) -> &'static str {
        match self {
            Hold::Budget { .. } => "budget",
            Hold::AboveReplicas { .. } => "static-above-replicas",
            Hold::NodeLimit { .. } => "static-node-limit",
        }
    }
}

/// What StaticDrift does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<K> {
    /// Replaced, one command each, pools by name, each pool's candidates by name.
    pub replace: Vec<Drifted<K>>,
    /// Left alone, and why.
    pub held: Vec<(Drifted<K>, Hold)>,
}

/// `StaticDrift.ComputeCommands` over `candidates`; a candidate whose pool is not in `pools` is
/// not a static pool's and is ignored.
pub fn decide<K: Clone>(pools: &[PoolState], candidates: &[Drifted<K>]) -> Plan<K> {
    let mut by_pool: BTreeMap<&str, Vec<&Drifted<K>>> = BTreeMap::new();
    for c in candidates {
        by_pool.entry(c.pool.as_str()).or_default().push(c);
    }
    let mut plan = Plan {
        replace: Vec::new(),
        held: Vec::new(),
    };
    for (name, mut cands) in by_pool {
        let Some(pool) = pools.iter().find(|p| p.name == name) else {
            continue;
        };
        cands.sort_by(|a, b| a.name.cmp(&b.name));
        let hold_all = |plan: &mut Plan<K>, cands: &[&Drifted<K>], hold: Hold| {
            plan.held
                .extend(cands.iter().map(|c| ((*c).clone(), hold.clone())));
        };
        let budget = |allowed: u32| Hold::Budget {
            pool: pool.name.clone(),
            allowed,
            candidates: cands.len(),
        };
        if pool.budget == Some(0) {
            hold_all(&mut plan, &cands, budget(0));
            continue;
        }
        if (pool.running + pool.pending_disruption) as i64 > pool.replicas {
            let hold = Hold::AboveReplicas {
                pool: pool.name.clone(),
                running: pool.running,
                pending_disruption: pool.pending_disruption,
                replicas: pool.replicas,
            };
            hold_all(&mut plan, &cands, hold);
            continue;
        }
        let wanted = pool
            .budget
            .map_or(cands.len(), |b| cands.len().min(b as usize)) as i64;
        let counted = pool.running + pool.deleting + pool.pending_disruption;
        let granted = match pool.node_limit {
            None => wanted,
            Some(limit) => (limit - counted as i64).clamp(0, wanted),
        };
        let taken = granted as usize;
        plan.replace
            .extend(cands[..taken].iter().map(|c| (*c).clone()));
        let hold = if granted < wanted {
            Hold::NodeLimit {
                pool: pool.name.clone(),
                limit: pool.node_limit.unwrap_or_default(),
                counted,
                granted,
            }
        } else {
            budget(pool.budget.unwrap_or_default())
        };
        hold_all(&mut plan, &cands[taken..], hold);
    }
    plan
}

#[cfg(test)]
mod tests;
