//! Static NodePools scaled down (`spec.replicas` lowered): which of a static pool's NodeClaims
//! go when it runs more than its replicas, and why each one (docs/karpenter.md §6.11).
//!
//! Mirrors `core main: pkg/controllers/static/deprovisioning/controller.go` (`Reconcile`,
//! `getDeprovisioningCandidates`, `unresolvedDeprovisioningCandidates`,
//! `resolvedDeprovisioningCandidates`), tests `static/deprovisioning/suite_test.go`:
//!
//! - nothing for a pool that is not the cloud provider's (`IsManaged`: an `EC2NodeClass` of
//!   `karpenter.k8s.aws`), has no `replicas`, or is being deleted;
//! - the surplus is the pool's *running* NodeClaims minus `replicas`: NodeClaims being deleted
//!   or pending disruption (here: in a replacement of this tool, or tainted
//!   `karpenter.sh/disrupted` — `scheduling::is_pending_disruption`) are not counted, so a
//!   scale-down racing a replacement never goes below the replicas;
//! - first the unresolved NodeClaims (no provider id: not launched yet, or their launch
//!   failed), in list (name) order;
//! - then the empty nodes — no pod, or only DaemonSet pods none of which has an active
//!   `karpenter.sh/do-not-disrupt` — a NodeClaim without a Node counting as empty;
//! - then the others, those without an active do-not-disrupt pod first, each group by
//!   disruption cost: Σ eviction cost of its pods (`ReschedulingCost`, every pod bound to it,
//!   DaemonSet pods included) × the fraction of its lifetime left (`LifetimeRemaining`:
//!   NodeClaim `expireAfter` from its creation; 1 without one).
//!
//! Where Karpenter's order is a map's (nodes) or an unstable sort's (equal costs), ties go by
//! name. No disruption budget limits it: the controller deletes the NodeClaims outright and the
//! termination controller drains them (PDBs respected, do-not-disrupt pods waited for). A pod's
//! eviction cost is consolidation's (`spec.priority` and `controller.kubernetes.io/pod-deletion-cost`
//! read, `pkg/utils/disruption/disruption.go EvictionCost`).

use crate::disruption::consolidation::pod_eviction_cost;
use crate::disruption::drain::do_not_disrupt_active;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;

/// The node class group of the AWS provider: a pool naming another is not this provider's
/// (`nodepoolutils.IsManaged`).
const AWS_GROUP: &str = "karpenter.k8s.aws";

/// One NodeClaim (or node) of a static pool, as the decision reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Member {
    /// Its Node's name (registered, or this tool's instance in flight), if it has one.
    pub node: Option<String>,
    /// Its NodeClaim's name, if Karpenter (or this tool's launch tag) names one.
    pub node_claim: Option<String>,
    /// Its instance, when it is known (the provider id's).
    pub instance: Option<String>,
    /// It has a provider id (launched); `false`: an unresolved NodeClaim.
    pub resolved: bool,
    /// Being deleted, or in a replacement (pending disruption): not running.
    pub deleting: bool,
    /// The pods bound to it.
    pub pods: Vec<Pod>,
    /// Created at (epoch seconds), for the lifetime left.
    pub created: Option<i64>,
    /// Its `expireAfter` in seconds (`None`: `Never`).
    pub expire_after: Option<i64>,
}

impl Member {
    /// The name it is shown by: its node's, else its NodeClaim's.
    pub fn name(&self) -> &str {
        self.node
            .as_deref()
            .or(self.node_claim.as_deref())
            .unwrap_or_default()
    }
}

/// Why a NodeClaim was chosen to go.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// No provider id: never launched (or its launch failed).
    Unresolved,
    /// No pod, or only DaemonSet pods (this many) without do-not-disrupt.
    Empty {
        /// Its DaemonSet pods.
        daemonset_pods: usize,
    },
    /// The lowest disruption cost left.
    LowestCost {
        /// Pods bound to it.
        pods: usize,
        /// Σ eviction cost × lifetime left.
        cost: f64,
    },
    /// Every node left has a pod with an active do-not-disrupt: the lowest cost of those
    /// (its drain waits for that pod).
    DoNotDisrupt {
        /// Pods bound to it.
        pods: usize,
        /// Σ eviction cost × lifetime left.
        cost: f64,
        /// The first such pod (`namespace/name`).
        pod: String,
    },
}

/// One NodeClaim that goes, and why that one.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    /// What goes.
    pub member: Member,
    /// Why it was chosen.
    pub why: Why,
}

/// A static pool running more NodeClaims than its replicas, and which go.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticScaleDown {
    /// The pool.
    pub node_pool: String,
    /// Its `spec.replicas`.
    pub replicas: i64,
    /// Its running NodeClaims (not being deleted, not in a replacement).
    pub running: usize,
    /// What goes, in Karpenter's order: `running − replicas` of them.
    pub removals: Vec<Removal>,
}

/// What scaling `pool` down to its replicas removes, at `now`; `None` when nothing goes.
/// `members` are the pool's NodeClaims (and nodes), in any order.
pub fn decide(pool: &NodePool, members: &[Member], now: i64) -> Option<StaticScaleDown> {
    let replicas = pool.replicas?;
    let managed = pool
        .node_class_ref
        .as_ref()
        .is_some_and(|r| r.group == AWS_GROUP);
    if !managed || pool.deleting {
        return None;
    }
    let mut running: Vec<&Member> = members.iter().filter(|m| !m.deleting).collect();
    running.sort_by(|a, b| a.name().cmp(b.name()));
    let surplus = running.len() as i64 - replicas;
    if surplus <= 0 {
        return None;
    }
    let count = surplus as usize;
    let mut removals: Vec<Removal> = running
        .iter()
        .filter(|m| !m.resolved)
        .take(count)
        .map(|m| Removal {
            member: (*m).clone(),
            why: Why::Unresolved,
        })
        .collect();
    let resolved: Vec<&Member> = running.iter().copied().filter(|m| m.resolved).collect();
    let (empty, busy): (Vec<&Member>, Vec<&Member>) =
        resolved.into_iter().partition(|m| is_empty(&m.pods, now));
    for m in empty {
        if removals.len() == count {
            break;
        }
        removals.push(Removal {
            member: m.clone(),
            why: Why::Empty {
                daemonset_pods: m.pods.len(),
            },
        });
    }
    let mut costed: Vec<(Option<String>, f64, &Member)> = busy
        .into_iter()
        .map(|m| {
            let dnd = m
                .pods
                .iter()
                .find(|p| do_not_disrupt_active(p, now))
                .map(Pod::key);
            (dnd, disruption_cost(m, now), m)
        })
        .collect();
    // Stable: equal keys keep the name order.
    costed.sort_by(|a, b| a.0.is_some().cmp(&b.0.is_some()).then(a.1.total_cmp(&b.1)));
    for (dnd, cost, m) in costed {
        if removals.len() == count {
            break;
        }
        let pods = m.pods.len();
        let why = match dnd {
            Some(pod) => Why::DoNotDisrupt { pods, cost, pod },
            None => Why::LowestCost { pods, cost },
        };
        removals.push(Removal {
            member: m.clone(),
            why,
        });
    }
    Some(StaticScaleDown {
        node_pool: pool.name.clone(),
        replicas,
        running: running.len(),
        removals,
    })
}

/// Empty as the static controller sees it: no pod, or only DaemonSet pods none of which has an
/// active do-not-disrupt.
fn is_empty(pods: &[Pod], now: i64) -> bool {
    pods.iter()
        .all(|p| p.is_daemonset_pod() && !do_not_disrupt_active(p, now))
}

/// `ReschedulingCost(pods) × LifetimeRemaining`: the pods' eviction costs (consolidation's, which
/// read priority and pod-deletion-cost), scaled by the fraction of the NodeClaim's `expireAfter`
/// left.
fn disruption_cost(m: &Member, now: i64) -> f64 {
    let cost: f64 = m.pods.iter().map(pod_eviction_cost).sum();
    let remaining = match (m.expire_after, m.created) {
        (Some(total), Some(created)) if total > 0 => {
            ((total - (now - created)) as f64 / total as f64).clamp(0.0, 1.0)
        }
        _ => 1.0,
    };
    cost * remaining
}

#[cfg(test)]
mod tests;
