//! Certain failures: a candidate's pod that could go nowhere at all, whatever else moves.
//!
//! On a big cluster most consolidation simulations fail the same way pass after pass: a pod
//! whose topology spread admits only domains where no node and no NodePool can run it (a zone
//! spread whose emptiest zone its NodePool cannot launch in). A full simulation per candidate per
//! pass re-proves it each time (docs/performance.md B7). Here the question is asked of the pod
//! alone with the solver's [`Options::possibility`](crate::scheduling::Options::possibility):
//! existing nodes offer their whole allocatable and a spread admits every domain within
//! `maxSkew`. If even so the pod goes nowhere, it goes nowhere in the candidate's simulation:
//! its own constraints are all it brings, nothing else in the simulation counts for its spread
//! groups (checked: no other pod that moves, pending or stuck is selected by them), free room only
//! shrinks as other pods are placed, and any NodeClaim they open is one it could have opened
//! itself within the domains it admits. The decision is the full simulation's; the reason names
//! this pod (docs/consolidation.md "Why a node stays").
//!
//! The answer depends only on the pod's spread counts, the nodes and the NodePools, so it is kept
//! until one of those changes: [`Entry::holds`].

use rustc_hash::FxHashMap;

use super::cluster::{Cluster, Status};
use super::sim::{Counted, PodRef, Simulator};
use crate::model::labels;
use crate::model::pod::Pod;

/// What asking one pod found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Possible {
    /// It could go to this existing node.
    Node(usize),
    /// It could go to a new NodeClaim (the pools do not change).
    NodeClaim,
    /// It goes nowhere: the solver's reason.
    Nowhere(String),
}

/// One pod asked, with what its answer depends on besides the nodes and pools.
#[derive(Debug, Clone)]
struct Asked {
    pod: usize,
    counted: Vec<Counted>,
    answer: Possible,
}

/// The answer for one candidate: its eligible pods in name order, asked up to the first that
/// goes nowhere.
#[derive(Debug, Clone)]
struct Entry {
    version: u64,
    node_count: usize,
    pending: usize,
    stuck: usize,
    asked: Vec<Asked>,
}

/// A pod of a candidate certain to fit nowhere.
#[derive(Debug, Clone)]
pub(crate) struct Certain {
    pub pod: PodRef,
    pub detail: String,
    /// The pods its spread constraints count (their nodes tell whether another candidate of a
    /// batch holds one).
    counted: Vec<Counted>,
}

impl Entry {
    fn holds(&self, cluster: &Cluster, node: usize) -> bool {
        self.version == cluster.nodes[node].version
            && self.node_count == cluster.nodes.len()
            && self.pending == cluster.pending.len()
            && self.stuck == cluster.stuck.len()
            && self.asked.iter().all(|a| {
                let witness = match a.answer {
                    Possible::Node(n) => cluster.nodes[n].status == Status::Active,
                    Possible::NodeClaim | Possible::Nowhere(_) => true,
                };
                witness && a.counted.iter().all(|c| c.holds(cluster))
            })
    }

    fn certain(&self, node: usize) -> Option<Certain> {
        let last = self.asked.last()?;
        match &last.answer {
            Possible::Nowhere(detail) => Some(Certain {
                pod: PodRef::Bound {
                    node,
                    pod: last.pod,
                },
                detail: detail.clone(),
                counted: last.counted.clone(),
            }),
            _ => None,
        }
    }
}

/// The kept answers, by candidate node.
#[derive(Debug, Default)]
pub(crate) struct CertainFailures {
    entries: FxHashMap<usize, Entry>,
}

/// Whether the question can be asked of `pod` at all: a pod whose only constraints beyond its
/// own node requirements are spreads on keys whose domains are all known before the simulation
/// (not the hostname, which new NodeClaims add), each counting pods found by a required label.
fn eligible(pod: &Pod) -> bool {
    !pod.topology_spread.is_empty()
        && pod.topology_spread.iter().all(|c| {
            c.topology_key != labels::HOSTNAME
                && c.label_selector
                    .as_ref()
                    .is_some_and(|s| s.required_pairs().next().is_some())
        })
        && pod.pod_affinity.is_empty()
        && pod.pod_anti_affinity.is_empty()
        && pod.preferred_pod_affinity.is_empty()
        && pod.preferred_pod_anti_affinity.is_empty()
        && pod.host_ports.is_empty()
        && pod.volumes.is_empty()
        && pod.unsupported().is_none()
        && !pod.dra
}

/// Whether one of `pod`'s spreads selects `other` (then placing `other` could change its counts).
fn selects(pod: &Pod, other: &Pod) -> bool {
    other.namespace == pod.namespace
        && pod.topology_spread.iter().any(|c| {
            c.label_selector
                .as_ref()
                .is_some_and(|s| s.matches(&other.labels))
        })
}

impl CertainFailures {
    /// The first pod of candidate `node`, in name order, certain to fit nowhere with the node
    /// gone (alone in the batch), if any.
    pub(crate) fn of<S: Simulator>(
        &mut self,
        cluster: &mut Cluster,
        sim: &mut S,
        node: usize,
        moving: &[usize],
    ) -> Option<Certain> {
        if sim.reuses() {
            if let Some(e) = self.entries.get(&node) {
                if e.holds(cluster, node) {
                    return e.certain(node);
                }
            }
        }
        let entry = Self::ask(cluster, sim, node, moving);
        let certain = entry.certain(node);
        self.entries.insert(node, entry);
        certain
    }

    fn ask<S: Simulator>(
        cluster: &mut Cluster,
        sim: &mut S,
        node: usize,
        moving: &[usize],
    ) -> Entry {
        let mut entry = Entry {
            version: cluster.nodes[node].version,
            node_count: cluster.nodes.len(),
            pending: cluster.pending.len(),
            stuck: cluster.stuck.len(),
            asked: Vec::new(),
        };
        // A static pool's replicas count its running nodes, which no answer here names.
        if (0..cluster.pools.len()).any(|p| cluster.pool(p).replicas.is_some()) {
            return entry;
        }
        let pods = cluster.pods(node);
        let mut order: Vec<usize> = moving
            .iter()
            .copied()
            .filter(|&p| eligible(&pods[p]))
            .collect();
        order.sort_by_cached_key(|&p| pods[p].key());
        for p in order {
            let pods = cluster.pods(node);
            let pod = &pods[p];
            let alone = moving
                .iter()
                .filter(|&&o| o != p)
                .map(|&o| &pods[o])
                .chain(cluster.pending.iter())
                .chain(cluster.stuck.iter())
                .all(|other| !selects(pod, other));
            if !alone {
                continue;
            }
            let Some(counted) = pod
                .topology_spread
                .iter()
                .filter_map(|c| c.label_selector.as_ref())
                .map(|s| Counted::now(cluster, &pod.namespace, s))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let answer = sim.possible(cluster, node, p, moving);
            let nowhere = matches!(answer, Possible::Nowhere(_));
            entry.asked.push(Asked {
                pod: p,
                counted,
                answer,
            });
            if nowhere {
                break;
            }
        }
        entry
    }

    /// Whether a batch of candidates certainly fails: one of them holds a pod certain to fit
    /// nowhere that no other candidate of the batch holds pods its spreads count.
    pub(crate) fn batch_fails<S: Simulator>(
        &mut self,
        cluster: &mut Cluster,
        sim: &mut S,
        batch: &[(usize, &[usize])],
    ) -> bool {
        for &(node, moving) in batch {
            let Some(certain) = self.of(cluster, sim, node, moving) else {
                continue;
            };
            let others_hold_counted = certain.counted.iter().any(|c| {
                c.pods.iter().any(|&(n, _, _)| {
                    let n = n as usize;
                    n != node && batch.iter().any(|&(b, _)| b == n)
                })
            });
            if !others_hold_counted {
                return true;
            }
        }
        false
    }
}
