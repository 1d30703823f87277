//! Which nodes are disruption candidates, what Karpenter knows about each, and in what order it
//! tries them.
//!
//! Upstream: `core v1.14.1: pkg/controllers/disruption/types.go NewCandidate`,
//! `pkg/controllers/state/statenode.go ValidateNodeDisruptable / ValidatePodsDisruptable`,
//! `pkg/utils/pod/scheduling.go` (reschedulable, evictable, do-not-disrupt),
//! `pkg/utils/disruption/disruption.go` (eviction cost, lifetime remaining);
//! `core v0.37.7: pkg/controllers/disruption/types.go NewCandidate`;
//! `core v0.31.4: pkg/controllers/deprovisioning/types.go NewCandidate, helpers.go
//! filterCandidates`.

use std::cmp::Ordering;
use std::rc::Rc;

use super::cluster::{Cluster, PodExtra, Status};
use super::input::Release;
use super::pdb::{self, PdbBlock};
use super::reason::Reason;
use crate::disruption::drain::{self, disruption_taint};
use crate::model::labels;
use crate::model::labels::DO_NOT_DISRUPT;
use crate::model::nodepool::ApiGeneration;
use crate::model::pod::Pod;

/// `karpenter.sh/do-not-consolidate` (v1alpha5 node annotation, honoured until v0.37).
const DO_NOT_CONSOLIDATE: &str = "karpenter.sh/do-not-consolidate";

/// `GracefulDisruptionClass` respects pod-level blocks; `EventualDisruptionClass` (drift) does
/// not when the NodeClaim has a `terminationGracePeriod` (v1 `types.go NewCandidate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Graceful,
    Eventual,
}

/// What a node's pods mean for disruption (depends on its pods only).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PodFacts {
    /// The first pod with an active do-not-disrupt.
    pub do_not_disrupt: Option<Reason>,
    /// The first pod a PDB keeps from eviction.
    pub pdb: Option<Reason>,
    /// Pods that need a new home when the node goes.
    pub reschedulable: Vec<usize>,
    /// Pods a simulation moves (v1: the currently reschedulable ones).
    pub sim_pods: Vec<usize>,
    /// v1: 1 + Σ max(0, eviction cost) of the reschedulable pods (`RescheduleDisruptionCost`).
    pub reschedule_cost: f64,
    /// Σ eviction cost of the pods Karpenter counts (before v1 the sort key, with lifetime).
    pub eviction_cost: f64,
}

/// A candidate for some method.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub node: usize,
    pub pool: usize,
    /// Instance type index in the pool's types.
    pub instance_type: Option<usize>,
    /// Its offering's price (v1: 0 when unknown).
    pub price: Option<f64>,
    /// Shared: candidate lists are copied for each method of a pass.
    pub capacity_type: Option<Rc<str>>,
    /// v1 sort key: price ÷ reschedule cost, higher first.
    pub savings_ratio: f64,
    /// Pre-v1 sort key: eviction cost × lifetime remaining, lower first.
    pub disruption_cost: f64,
    pub reschedule_cost: f64,
    /// Reschedulable pods.
    pub reschedulable: usize,
    /// Its pods' facts (the pods a simulation moves among them).
    pub facts: Rc<PodFacts>,
}

impl Candidate {
    /// v1 `IsEmpty`: no pod contributes a positive eviction cost. Before v1: no reschedulable
    /// pod.
    pub fn is_empty(&self, release: Release) -> bool {
        match release {
            Release::V1_14 => self.reschedule_cost <= 1.0,
            Release::V0_37 | Release::V0_31 => self.reschedulable == 0,
        }
    }

    pub fn price_or_zero(&self) -> f64 {
        self.price.unwrap_or(0.0)
    }
}

/// `EvictionCost`: 1, plus pod-deletion-cost / 2²⁷, plus priority / 2²⁵, clamped to [-10, 10].
pub(crate) fn eviction_cost(extra: &PodExtra) -> f64 {
    let mut cost = 1.0;
    if let Some(c) = extra.deletion_cost {
        cost += c / 2f64.powi(27);
    }
    if let Some(p) = extra.priority {
        cost += f64::from(p) / 2f64.powi(25);
    }
    cost.clamp(-10.0, 10.0)
}

/// [`eviction_cost`] of a pod read straight from the model (its deletion cost parsed as
/// `strconv.ParseFloat` does; a value that does not parse is ignored).
pub(crate) fn pod_eviction_cost(pod: &Pod) -> f64 {
    eviction_cost(&PodExtra {
        priority: pod.priority,
        deletion_cost: pod.deletion_cost_value(),
        not_ready: pod.not_ready,
    })
}

fn active(pod: &Pod) -> bool {
    pod.is_active()
}

/// Whether a do-not-disrupt annotation is active: v1 takes `"true"` or a positive duration
/// from the pod's start (no start known: active, as Karpenter fails safe —
/// [`drain::do_not_disrupt_active`]) and knows no `karpenter.sh/do-not-evict`; earlier releases
/// only `"true"`, of either key (v0.37.7 / v0.31.4 `pkg/utils/pod/scheduling.go
/// HasDoNotDisrupt`).
fn do_not_disrupt(pod: &Pod, now: i64, release: Release) -> bool {
    match release {
        Release::V1_14 => drain::do_not_disrupt_active(pod, now),
        Release::V0_37 | Release::V0_31 => {
            pod.do_not_disrupt.as_deref() == Some("true") || pod.do_not_evict
        }
    }
}

fn generation(release: Release) -> ApiGeneration {
    match release {
        Release::V1_14 => ApiGeneration::V1,
        Release::V0_37 => ApiGeneration::V1Beta1,
        Release::V0_31 => ApiGeneration::V1Alpha5,
    }
}

/// The facts of node `i`'s pods.
pub(crate) fn pod_facts(cluster: &Cluster, i: usize) -> PodFacts {
    let release = cluster.release;
    let pods = cluster.pods(i);
    let extras = &cluster.nodes[i].extras;
    let taint = disruption_taint(Some(generation(release)));
    let mut order: Vec<usize> = (0..pods.len()).collect();
    order.sort_by_key(|&p| pods[p].key());
    // v0.31 only ever looks at pods that would move (`GetNodePods`).
    let v031_pod =
        |p: &Pod| !p.is_mirror() && !p.is_daemonset_pod() && !p.is_terminal() && !p.terminating;
    let considered = |p: &Pod| release != Release::V0_31 || v031_pod(p);
    let mut facts = PodFacts {
        do_not_disrupt: None,
        pdb: None,
        reschedulable: Vec::new(),
        sim_pods: Vec::new(),
        reschedule_cost: 1.0,
        eviction_cost: 0.0,
    };
    for &p in &order {
        let pod = &pods[p];
        if !considered(pod) {
            continue;
        }
        facts.eviction_cost += eviction_cost(&extras[p]);
        let dnd = active(pod) && do_not_disrupt(pod, cluster.now, release);
        if dnd && facts.do_not_disrupt.is_none() {
            let evict = pod.do_not_evict && pod.do_not_disrupt.as_deref() != Some("true");
            facts.do_not_disrupt = Some(Reason::PodDoNotDisrupt {
                pod: pod.key(),
                annotation: if evict {
                    labels::DO_NOT_EVICT
                } else {
                    labels::DO_NOT_DISRUPT
                },
                value: if evict {
                    "true".into()
                } else {
                    pod.do_not_disrupt.clone().unwrap_or_default()
                },
            });
        }
        // v1 does not evict a pod whose do-not-disrupt is active; earlier releases do not ask.
        let dnd_blocks_eviction = release == Release::V1_14 && dnd;
        let evictable = active(pod)
            && !pod.is_mirror()
            && !pod.tolerations.iter().any(|t| t.tolerates(&taint))
            && !dnd_blocks_eviction;
        let pdbs = cluster.pdbs_for(&pod.namespace);
        if evictable && facts.pdb.is_none() {
            facts.pdb = pdb::blocks(&pdbs, pod, extras[p].not_ready, release).map(|b| match b {
                PdbBlock::Zero { pdb, allowed } => Reason::Pdb {
                    pod: pod.key(),
                    pdb,
                    allowed,
                },
                PdbBlock::Several { pdbs } => Reason::MultiplePdbs {
                    pod: pod.key(),
                    pdbs,
                },
            });
        }
        let reschedulable = match release {
            Release::V0_31 => true,
            Release::V1_14 | Release::V0_37 => pod.is_reschedulable(),
        };
        if !reschedulable {
            continue;
        }
        facts.reschedulable.push(p);
        facts.reschedule_cost += eviction_cost(&extras[p]).max(0.0);
        // v1 simulates only pods it can move now (`IsCurrentlyReschedulable`).
        let currently = release != Release::V1_14
            || !(dnd || (evictable && pdb::fully_blocks(&pdbs, pod, extras[p].not_ready)));
        if currently {
            facts.sim_pods.push(p);
        }
    }
    facts
}

/// The fraction of the node's lifetime left, [0, 1] (`LifetimeRemaining`).
fn lifetime_remaining(cluster: &Cluster, i: usize, pool: usize) -> f64 {
    let claim = cluster.nodes[i].claim.as_ref();
    let expire_after = match cluster.release {
        Release::V1_14 => claim.and_then(|c| c.expire_after),
        Release::V0_37 | Release::V0_31 => cluster.pools[pool].expire_after,
    };
    match (expire_after, claim) {
        (Some(total), Some(c)) if total > 0 => {
            let age = (cluster.now - c.created) as f64;
            ((total as f64 - age) / total as f64).clamp(0.0, 1.0)
        }
        _ => 1.0,
    }
}

/// The labels a node's offering is priced by, capacity type first (core v1.14.1
/// `pkg/controllers/disruption/consolidation.go` `ShouldDisrupt`: "Node does not have label …").
pub(crate) fn offering_labels_present(
    zone: Option<&str>,
    capacity_type: Option<&str>,
) -> Result<(), Reason> {
    if capacity_type.is_none() {
        return Err(Reason::MissingLabel {
            label: labels::CAPACITY_TYPE,
        });
    }
    if zone.is_none() {
        return Err(Reason::MissingLabel {
            label: labels::ZONE,
        });
    }
    Ok(())
}

/// Why node `i` is not a candidate of `class`, or the candidate. `facts` are its pods' facts.
/// The checks run in the release's order, so the first obstacle is Karpenter's.
pub(crate) fn candidate(
    cluster: &Cluster,
    i: usize,
    facts: &Rc<PodFacts>,
    class: Class,
) -> Result<Candidate, Reason> {
    let release = cluster.release;
    let state = &cluster.nodes[i];
    let node = cluster.node(i);
    let deleting = state.status != Status::Active || node.deleting;
    // A NodeClaim whose instance is gone is deleted by Karpenter's garbage collection: named.
    let deleting_reason = || match state.claim.as_ref().and_then(|c| c.gone.clone()) {
        Some(gone) => Reason::InstanceGone(gone),
        None => Reason::Deleting,
    };
    let nominated = || {
        if state.nominated {
            Err(Reason::Nominated)
        } else {
            Ok(())
        }
    };
    let dnd = node.annotations.get(DO_NOT_DISRUPT);
    let (it_label, zone, ct) = cluster.offering_labels(i);
    let pool_name = node.labels.get(labels::NODEPOOL).map(String::as_str);
    let owner = match release {
        Release::V1_14 | Release::V0_37 => pool_name,
        Release::V0_31 => node.node_pool(),
    };
    let pool = || {
        let name = owner.ok_or(Reason::NoNodePoolLabel)?;
        state
            .pool
            .filter(|&p| !cluster.sched.pools[p].instance_types.is_empty())
            .ok_or_else(|| Reason::UnknownNodePool {
                pool: name.to_string(),
            })
    };
    let instance_type =
        |pool: usize| it_label.and_then(|t| cluster.pools[pool].types.get(t).copied());
    let pod_blocks = |class: Class| {
        let tgp = state
            .claim
            .as_ref()
            .is_some_and(|c| c.termination_grace_period.is_some());
        if class == Class::Eventual && tgp {
            return Ok(());
        }
        let (first, second) = match release {
            Release::V0_31 => (&facts.pdb, &facts.do_not_disrupt),
            Release::V1_14 | Release::V0_37 => (&facts.do_not_disrupt, &facts.pdb),
        };
        match first.as_ref().or(second.as_ref()) {
            Some(r) => Err(r.clone()),
            None => Ok(()),
        }
    };
    let pool = match release {
        Release::V1_14 => {
            if !node.initialized {
                return Err(Reason::NotInitialized);
            }
            if deleting {
                return Err(deleting_reason());
            }
            nominated()?;
            if let Some(v) = dnd.filter(|v| *v == "true") {
                return Err(Reason::NodeDoNotDisrupt { value: v.clone() });
            }
            let pool = pool()?;
            pod_blocks(class)?;
            pool
        }
        Release::V0_37 | Release::V0_31 => {
            if deleting {
                return Err(deleting_reason());
            }
            if !node.initialized {
                return Err(Reason::NotInitialized);
            }
            if let Some(v) = dnd {
                return Err(Reason::NodeDoNotDisrupt { value: v.clone() });
            }
            offering_labels_present(zone, ct)?;
            let pool = pool()?;
            if instance_type(pool).is_none() {
                return Err(Reason::UnknownInstanceType {
                    instance_type: it_label.unwrap_or_default().to_string(),
                });
            }
            nominated()?;
            if release == Release::V0_37 {
                pod_blocks(class)?;
            }
            pool
        }
    };
    // A node that an earlier action of this report nominates is checked last (Karpenter checks
    // nominations early), so the reason shown is the lasting one when there is one.
    if state.receives_from.is_some() || !state.receives_from_deleting.is_empty() {
        // Filled in by the engine, which knows the action.
        return Err(Reason::ReceivesPods {
            pass: 0,
            from: Vec::new(),
        });
    }
    let it = instance_type(pool);
    let price = it.and_then(|t| {
        let offerings = &cluster.sched.pools[pool].instance_types[t].offerings;
        offerings
            .iter()
            .find(|o| Some(o.zone.as_str()) == zone && Some(o.capacity_type.as_str()) == ct)
            .map(|o| o.price)
    });
    let price_for_ratio = price.unwrap_or(0.0);
    Ok(Candidate {
        node: i,
        pool,
        instance_type: it,
        price,
        capacity_type: ct.map(Rc::from),
        savings_ratio: price_for_ratio / facts.reschedule_cost,
        disruption_cost: facts.eviction_cost * lifetime_remaining(cluster, i, pool),
        reschedule_cost: facts.reschedule_cost,
        reschedulable: facts.reschedulable.len(),
        facts: facts.clone(),
    })
}

/// v0.31's `filterCandidates` for expiration, drift and consolidation: a PDB or a
/// do-not-evict pod blocks.
pub(crate) fn v031_filter(facts: &PodFacts) -> Result<(), Reason> {
    match facts.pdb.as_ref().or(facts.do_not_disrupt.as_ref()) {
        Some(r) => Err(r.clone()),
        None => Ok(()),
    }
}

/// v0.31/v0.37: `karpenter.sh/do-not-consolidate: "true"` keeps a node out of consolidation.
pub(crate) fn do_not_consolidate(cluster: &Cluster, i: usize) -> bool {
    cluster.release != Release::V1_14
        && cluster
            .node(i)
            .annotations
            .get(DO_NOT_CONSOLIDATE)
            .is_some_and(|v| v == "true")
}

/// The consolidation order: v1 by savings ratio, highest first (`consolidation.go
/// sortCandidates`); before v1 by disruption cost, lowest first. Go's `sort.Slice` leaves ties
/// in any order; we break them by node name.
pub(crate) fn sort_for_consolidation(cluster: &Cluster, candidates: &mut [Candidate]) {
    let name = |c: &Candidate| cluster.name_rank[c.node];
    candidates.sort_by(|a, b| {
        let primary = match cluster.release {
            Release::V1_14 => b.savings_ratio.total_cmp(&a.savings_ratio),
            Release::V0_37 | Release::V0_31 => a.disruption_cost.total_cmp(&b.disruption_cost),
        };
        if primary == Ordering::Equal {
            name(a).cmp(&name(b))
        } else {
            primary
        }
    });
}
