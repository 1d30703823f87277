//! Emptiness as `provision --watch` applies it (docs/karpenter.md §5.4): which empty nodes may
//! go now, which must wait, and what holds the rest back. Karpenter's rules, with the file each
//! comes from (`core v1.9.1`):
//!
//! * a candidate is a managed node that is initialized, not being deleted, not nominated for a
//!   pending pod, not annotated `karpenter.sh/do-not-disrupt: "true"`, with a NodePool label
//!   whose pool exists (`pkg/controllers/state/statenode.go ValidateNodeDisruptable`), and no
//!   active pod annotated do-not-disrupt — DaemonSet and mirror pods included
//!   (`ValidatePodsDisruptable`, `pkg/utils/pod/scheduling.go IsDisruptable`);
//! * a static pool's nodes (`spec.replicas`) are never empty candidates, and a pool whose
//!   `consolidateAfter` is `Never` has emptiness off (`pkg/controllers/disruption/emptiness.go
//!   ShouldDisrupt`);
//! * empty = no reschedulable pod (`IsReschedulable`: active, not DaemonSet-, not Node-owned);
//! * it goes once empty for `consolidateAfter` — Karpenter's `Consolidatable` condition, from the
//!   NodeClaim's `lastPodEventTime`, which nobody updates with the controller scaled away; this
//!   tool keeps its own clock in the node's `kubectl-karpenter.io/empty-since` annotation;
//! * at most the pool's `Empty` budget at once, counted down as nodes are taken in one pass
//!   (`emptiness.go ComputeCommands`, `disruption/helpers.go BuildDisruptionBudgetMapping`).
//!
//! Tests mirror `pkg/controllers/disruption/emptiness_test.go` and `suite_test.go`.

use std::collections::{BTreeMap, BTreeSet};

use super::budgets::{allowed_for_counts, DisruptionReason};
use super::consolidation::{evaluate_pdbs, first_eviction_refused, Pdb, PdbBlock, PdbInput};
use super::drain::{disruption_taint, do_not_disrupt_active};
use crate::model::labels::{DO_NOT_DISRUPT, EMPTY_SINCE};
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::model::taints::is_known_ephemeral;
use crate::model::time::parse_rfc3339;

/// What to do about one managed node of a pool whose emptiness is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Emptiness {
    /// Pods that need a place run here: its clock (if any) stops.
    Busy,
    /// Found empty just now: its clock starts.
    StartClock,
    /// Empty for `for_secs` of the `ttl_secs` its pool asks.
    Waiting { for_secs: i64, ttl_secs: i64 },
    /// Empty long enough and allowed now: remove it.
    Remove { empty_for: i64 },
    /// Empty long enough, but not allowed to go.
    Held(Hold),
}

/// Why an empty node whose time is up stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// Karpenter has not initialized it.
    NotInitialized,
    /// It is being deleted already.
    Deleting,
    /// The node carries `karpenter.sh/do-not-disrupt: "true"`.
    NodeDoNotDisrupt,
    /// This pod (namespace/name) is annotated do-not-disrupt.
    PodDoNotDisrupt(String),
    /// This pending pod (namespace/name) is nominated to it.
    Nominated(String),
    /// The pool's `Empty` budget allows no more now (`allowed` in all, none left).
    Budget { pool: String, allowed: u32 },
    /// The provisioner's last pass placed CapacityBuffer virtual pods on it (core v1.14.1
    /// `emptiness.go` `ShouldDisrupt` → `cluster.go` `HasBufferPods`, event "has buffer pods").
    BufferPods,
    /// A pod of the node that would be evicted (a DaemonSet's too) is held by its
    /// PodDisruptionBudget at zero disruptions, or covered by several (core v1.14.1
    /// `statenode.go ValidatePodsDisruptable` → `pdb.go CanEvictPods`).
    Pdb {
        /// The pod (`namespace/name`).
        pod: String,
        /// The PDB at zero (one), or the PDBs covering the pod (several).
        pdbs: Vec<String>,
    },
}

impl std::fmt::Display for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hold::NotInitialized => f.write_str("not initialized"),
            Hold::Deleting => f.write_str("being deleted"),
            Hold::NodeDoNotDisrupt => write!(f, "node annotated {DO_NOT_DISRUPT}"),
            Hold::PodDoNotDisrupt(p) => write!(f, "pod {p} annotated {DO_NOT_DISRUPT}"),
            Hold::Nominated(p) => write!(f, "pending pod {p} is nominated to it"),
            Hold::BufferPods => f.write_str("it holds CapacityBuffer virtual pods"),
            Hold::Pdb { pod, pdbs } if pdbs.len() == 1 => write!(
                f,
                "PodDisruptionBudget {} allows no disruption of pod {pod}",
                pdbs[0]
            ),
            Hold::Pdb { pod, pdbs } => write!(
                f,
                "pod {pod} is covered by several PodDisruptionBudgets ({}), which eviction refuses",
                pdbs.join(", ")
            ),
            Hold::Budget { pool, allowed } => {
                write!(
                    f,
                    "NodePool {pool} allows {allowed} empty node(s) to go at once"
                )
            }
        }
    }
}

/// How long a pool's empty nodes may stay, in seconds: `None` when emptiness never removes
/// them (a policy without emptiness, `consolidateAfter: Never`, a static pool). Every v1
/// policy has emptiness, `Balanced` included (core v1.14.1 `disruption/controller.go
/// NewMethods`, `emptiness.go ShouldDisrupt` reads no policy).
pub fn empty_ttl(pool: &NodePool) -> Option<i64> {
    if pool.replicas.is_some() {
        return None;
    }
    let policy = pool.disruption.consolidation_policy.as_str();
    if !matches!(
        policy,
        "WhenEmpty" | "WhenEmptyOrUnderutilized" | "Balanced" | "WhenUnderutilized"
    ) {
        return None;
    }
    let after = pool.disruption.consolidate_after.as_deref().unwrap_or("0s");
    if after == "Never" {
        return None;
    }
    super::time::parse_duration(after).ok().map(i64::abs)
}

/// Decides every managed node of a pool with emptiness on, in node-name order: `nodes` and
/// `pods` (those bound to a node, and pending ones for nominations) as read now, at `now`
/// (epoch seconds). Nodes of other pools, unmanaged nodes and nodes without an instance are
/// left out. `buffer_nodes`: the nodes the last provisioning pass placed CapacityBuffer virtual
/// pods on, held ([`Hold::BufferPods`]). `planned`: the nodes a provisioning plan of the last
/// nomination window placed a pending pod on (node → the pod), nominated as Karpenter's
/// provisioner nominates them (`provisioning/scheduling/scheduler.go Results.Record` →
/// `NominateNodeForPod`; `statenode.go ValidateNodeDisruptable` refuses a nominated node).
/// `pdbs`: the PodDisruptionBudgets, which hold a node a pod of which they keep from eviction
/// ([`Hold::Pdb`]; the caller may read them only when some node would go).
pub fn decide<'a>(
    nodes: &'a [Node],
    pods: &[Pod],
    pools: &[NodePool],
    buffer_nodes: &BTreeSet<String>,
    planned: &BTreeMap<String, String>,
    pdbs: &[PdbInput],
    now: i64,
) -> Vec<(&'a Node, Emptiness)> {
    let pdbs = held_by_pdbs(pdbs, pods);
    let mut busy: BTreeSet<&str> = BTreeSet::new();
    let mut blocking_pod: BTreeMap<&str, Hold> = planned
        .iter()
        .map(|(node, pod)| (node.as_str(), Hold::Nominated(pod.clone())))
        .collect();
    for p in pods {
        let Some(node) = p.node_name.as_deref().or(p.nominated_node_name.as_deref()) else {
            continue;
        };
        if p.node_name.is_none() {
            blocking_pod
                .entry(node)
                .or_insert_with(|| Hold::Nominated(p.key()));
            continue;
        }
        if p.is_terminal() {
            continue;
        }
        if !p.terminating && do_not_disrupt_active(p, now) {
            blocking_pod
                .entry(node)
                .or_insert_with(|| Hold::PodDoNotDisrupt(p.key()));
        }
        let active = !p.terminating;
        if (active || p.is_statefulset_pod()) && !p.is_daemonset_pod() && !p.is_mirror() {
            busy.insert(node);
        }
    }
    let mut left: BTreeMap<&str, (Option<u32>, Option<u32>)> = BTreeMap::new();
    let mut managed: Vec<&Node> = nodes.iter().filter(|n| n.instance_id().is_some()).collect();
    managed.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    for node in managed {
        let Some(pool) = node
            .node_pool()
            .and_then(|name| pools.iter().find(|p| p.name == name))
        else {
            continue;
        };
        let Some(ttl) = empty_ttl(pool) else {
            continue;
        };
        if busy.contains(node.name.as_str()) {
            out.push((node, Emptiness::Busy));
            continue;
        }
        let Some(since) = node
            .annotations
            .get(EMPTY_SINCE)
            .and_then(|s| parse_rfc3339(s))
        else {
            out.push((node, Emptiness::StartClock));
            continue;
        };
        let empty_for = now - since;
        if empty_for < ttl {
            out.push((
                node,
                Emptiness::Waiting {
                    for_secs: empty_for.max(0),
                    ttl_secs: ttl,
                },
            ));
            continue;
        }
        let hold = if !is_up(node, pool) {
            Some(Hold::NotInitialized)
        } else if node.deleting {
            Some(Hold::Deleting)
        } else if node.annotations.get(DO_NOT_DISRUPT).map(String::as_str) == Some("true") {
            Some(Hold::NodeDoNotDisrupt)
        } else if buffer_nodes.contains(&node.name) {
            Some(Hold::BufferPods)
        } else {
            blocking_pod
                .get(node.name.as_str())
                .cloned()
                .or_else(|| pdbs.hold(node, pool, pods, now))
        };
        if let Some(hold) = hold {
            out.push((node, Emptiness::Held(hold)));
            continue;
        }
        // The pool's budget at the start of the pass, and what is left of it.
        let (allowed, remaining) = left.entry(pool.name.as_str()).or_insert_with(|| {
            let allowed = budget_for(pool, nodes, now);
            (allowed, allowed)
        });
        match remaining {
            Some(0) => out.push((
                node,
                Emptiness::Held(Hold::Budget {
                    pool: pool.name.clone(),
                    allowed: allowed.unwrap_or(0),
                }),
            )),
            Some(n) => {
                *n -= 1;
                out.push((node, Emptiness::Remove { empty_for }));
            }
            None => out.push((node, Emptiness::Remove { empty_for })),
        }
    }
    out
}

/// The PDBs with their allowance (`status.disruptionsAllowed`, else worked out from `pods`).
struct HeldByPdbs(Vec<Pdb>);

fn held_by_pdbs(pdbs: &[PdbInput], pods: &[Pod]) -> HeldByPdbs {
    if pdbs.is_empty() {
        return HeldByPdbs(Vec::new());
    }
    let health: Vec<(&Pod, bool)> = pods
        .iter()
        .map(|p| (p, p.node_name.is_some() && !p.not_ready && !p.terminating))
        .collect();
    HeldByPdbs(evaluate_pdbs(pdbs.to_vec(), &health))
}

impl HeldByPdbs {
    /// Whether a pod bound to `node` is one the PDBs keep from eviction.
    fn hold(&self, node: &Node, pool: &NodePool, pods: &[Pod], now: i64) -> Option<Hold> {
        if self.0.is_empty() {
            return None;
        }
        let on_node = pods
            .iter()
            .filter(|p| p.node_name.as_deref() == Some(node.name.as_str()));
        let taint = disruption_taint(pool.generation);
        first_eviction_refused(&self.0, on_node, &taint, now).map(|(pod, block)| Hold::Pdb {
            pod,
            pdbs: match block {
                PdbBlock::Zero { pdb, .. } => vec![pdb],
                PdbBlock::Several { pdbs } => pdbs,
            },
        })
    }
}

/// The pool's `Empty` budget at `now` (`None`: unlimited), counting its nodes that are up as
/// [`is_up`] says — the initialized ones Karpenter counts (`core v1.9.1
/// pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping`).
fn budget_for(pool: &NodePool, nodes: &[Node], now: i64) -> Option<u32> {
    let (mut counted, mut disrupting) = (0, 0);
    for n in nodes
        .iter()
        .filter(|n| n.node_pool() == Some(pool.name.as_str()))
    {
        if is_up(n, pool) {
            counted += 1;
            if !n.ready || n.deleting {
                disrupting += 1;
            }
        }
    }
    allowed_for_counts(pool, counted, disrupting, DisruptionReason::Empty, now).allowed
}

/// Initialized as Karpenter means it: its `karpenter.sh/initialized` label — or, for a node
/// nobody labelled because the controller is away, what the controller would have checked
/// before labelling it (`core pkg/controllers/nodeclaim/lifecycle/initialization.go`): Ready,
/// with neither the pool's startup taints nor a known ephemeral taint left.
fn is_up(node: &Node, pool: &NodePool) -> bool {
    node.initialized
        || (node.ready
            && !node.taints.iter().any(|t| {
                is_known_ephemeral(t)
                    || pool.startup_taints.iter().any(|s| s.matches(t))
                    || node.startup_taints.iter().any(|s| s.matches(t))
            }))
}

/// Whether a pod found on a node after it was tainted means it is not empty after all
/// (Karpenter's validator abandons the command on such churn: `disruption/validation.go`).
pub fn keeps_node(pod: &Pod, now: i64) -> bool {
    if pod.is_terminal() {
        return false;
    }
    let reschedulable = (!pod.terminating || pod.is_statefulset_pod())
        && !pod.is_daemonset_pod()
        && !pod.is_mirror();
    reschedulable || (!pod.terminating && do_not_disrupt_active(pod, now))
}

#[cfg(test)]
mod tests;
