//! Which nodes `drift replace` takes, in which order: the drifted (or named) managed nodes of
//! the selection, and every selected node with a replacement in progress (a re-run resumes
//! it) — first, then nodes without pods to move (as Karpenter tries empty candidates first,
//! docs/karpenter.md §5.3), then by name (Karpenter sorts by the time its `Drifted` condition
//! appeared, which nodes this tool judges do not have).

use std::collections::{BTreeMap, BTreeSet};

use super::steps::is_reschedulable;
use super::Event;
use crate::api::Manifests;
use crate::disruption::replace::{Action, Method, Record, Step, REPLACEMENT};
use crate::disruption::static_drift::{decide, Drifted, Hold, PoolState};
use crate::drift::{DriftSnapshot, Evaluation, NodeDrift, Status as Verdict};
use crate::error::CommandError;
use crate::model::instance::Instance;
use crate::model::node::Node;
use crate::usecases::Sink;

/// Fails (input) when a node named on the command line is not a managed node of `drift`.
pub fn check_named(drift: &DriftSnapshot, named: &[String]) -> Result<(), CommandError> {
    for name in named {
        if !drift.nodes.iter().any(|n| &n.node.name == name) {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name, or launched by this tool)"
            )));
        }
    }
    Ok(())
}

/// The actions for the nodes of `m` the selected drift verdicts (`drift`, `evaluation`) and
/// the `named` nodes call for, in order. Nodes whose instance is shutting down or gone are on
/// their way out (the cloud node lifecycle removes them) and never taken, even if a kubelet
/// re-registered them — unless drained by a run killed before it deleted the Node (finished
/// then).
pub fn select(
    m: &Manifests,
    drift: &DriftSnapshot,
    evaluation: &Evaluation,
    named: &[String],
    events: &mut dyn Sink<Event>,
) -> Vec<Action> {
    for note in &evaluation.notes {
        events.emit(Event::Warning(note.clone()));
    }
    let leaving_instances: BTreeSet<&str> = drift
        .nodes
        .iter()
        .filter_map(|n| n.instance.as_ref())
        .filter(|i| !matches!(i.state.as_str(), "pending" | "running"))
        .map(|i| i.id.as_str())
        .collect();
    let verdicts: BTreeMap<&str, &NodeDrift> = evaluation
        .nodes
        .iter()
        .map(|v| (v.name.as_str(), v))
        .collect();
    let mut taken: Vec<(bool, bool, Action)> = Vec::new();
    for node in &m.nodes {
        let record = Record::of(node);
        let verdict = verdicts.get(node.name.as_str());
        let (method, reason) = match (&record, verdict) {
            // A replacement in progress is finished when its node is selected (never
            // otherwise: no node the user did not select is touched).
            (Some(r), Some(_)) => (r.method, r.reason.clone()),
            (Some(_), None) => {
                events.emit(Event::NotSelected {
                    node: node.name.clone(),
                    record: node
                        .annotations
                        .get(REPLACEMENT)
                        .cloned()
                        .unwrap_or_default(),
                });
                continue;
            }
            (None, Some(v)) if named.contains(&node.name) => (
                Method::Drift,
                v.reason
                    .map_or_else(|| "Requested".to_string(), |r| r.as_str().to_string()),
            ),
            (None, Some(v)) if v.status == Verdict::Drifted => (
                Method::Drift,
                v.reason.map(|r| r.as_str().to_string()).unwrap_or_default(),
            ),
            _ => continue,
        };
        let finishing = record.as_ref().is_some_and(|r| r.step == Step::Drained);
        let leaving = node
            .instance_id()
            .is_some_and(|id| leaving_instances.contains(id));
        if !finishing && (node.deleting || leaving) {
            continue;
        }
        let Some(pool) = node
            .node_pool()
            .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
        else {
            continue;
        };
        // A static pool's drifted node is StaticDrift's: a bare replica replaces it.
        let method = match method {
            Method::Drift if record.is_none() && pool.replicas.is_some() => Method::StaticDrift,
            m => m,
        };
        taken.push((
            record.is_none(),
            pods_to_move(m, node) > 0,
            Action {
                node: node.clone(),
                pool: pool.clone(),
                method,
                chosen: None,
                reason,
                command: Vec::new(),
            },
        ));
    }
    let held = static_drift_held(m, &taken);
    taken.retain(|(_, _, a)| {
        let hold = held.iter().find(|(node, _)| *node == a.node.name);
        if let Some((node, hold)) = hold {
            events.emit(Event::Warning(format!("{node}: left alone: {hold}")));
        }
        hold.is_none()
    });
    taken.sort_by(|(a_fresh, a_pods, a), (b_fresh, b_pods, b)| {
        (a_fresh, a_pods, &a.node.name).cmp(&(b_fresh, b_pods, &b.node.name))
    });
    taken.into_iter().map(|(_, _, action)| action).collect()
}

/// The fresh StaticDrift nodes of `taken` that Karpenter's StaticDrift leaves alone now, and
/// why (`disruption::static_drift`): their pool above its replicas (scale-down first) or at
/// its `limits.nodes`. A pool's NodeClaims are its nodes: deleting, pending disruption (in a
/// replacement of this tool) or running. The `Drifted` budget is the pipeline's slots'.
fn static_drift_held(m: &Manifests, taken: &[(bool, bool, Action)]) -> Vec<(String, Hold)> {
    let fresh: Vec<&Action> = taken
        .iter()
        .filter(|(fresh, _, a)| *fresh && a.method == Method::StaticDrift)
        .map(|(_, _, a)| a)
        .collect();
    let mut pools: Vec<PoolState> = Vec::new();
    for a in &fresh {
        let (Some(replicas), name) = (a.pool.replicas, &a.pool.name) else {
            continue;
        };
        if pools.iter().any(|p| &p.name == name) {
            continue;
        }
        let mut state = PoolState {
            name: name.clone(),
            replicas,
            node_limit: a.pool.limits.get("nodes").map(|milli| milli / 1000),
            running: 0,
            deleting: 0,
            pending_disruption: 0,
            budget: None,
        };
        for n in m
            .nodes
            .iter()
            .filter(|n| n.node_pool() == Some(name.as_str()))
        {
            if n.deleting {
                state.deleting += 1;
            } else if Record::of(n).is_some() {
                state.pending_disruption += 1;
            } else {
                state.running += 1;
            }
        }
        pools.push(state);
    }
    let candidates: Vec<Drifted<String>> = fresh
        .iter()
        .map(|a| Drifted {
            key: a.node.name.clone(),
            name: a.node.name.clone(),
            pool: a.pool.name.clone(),
        })
        .collect();
    decide(&pools, &candidates)
        .held
        .into_iter()
        .map(|(d, hold)| (d.key, hold))
        .collect()
}

/// How many of the node's pods need a place elsewhere.
pub fn pods_to_move(m: &Manifests, node: &Node) -> usize {
    m.bound_pods
        .iter()
        .filter(|p| p.node_name.as_deref() == Some(node.name.as_str()) && is_reschedulable(p))
        .count()
}

/// Drift judged again as each node's turn comes: a rollout takes a while, and a node whose
/// drift went away meanwhile (its NodePool or class reverted) is left, as Karpenter decides
/// its candidates again on every disruption pass (core v1.14.1 `disruption/controller.go`
/// `disrupt` → `GetCandidates`; `drift.go` `ShouldDisrupt` reads the NodeClaim's `Drifted`
/// condition then, which `nodeclaim/disruption/drift.go` removes once the drift is gone). The
/// node, its NodeClaim, the NodePools and classes are the start's fresh ones; what EC2 and SSM
/// said (instances, what classes resolve to, instance types) is the run's.
#[derive(Debug, Clone)]
pub struct Recheck {
    /// The run's facts; their nodes, pools and classes replaced by the fresh ones each time.
    facts: DriftSnapshot,
    /// Each node's instance, as the run described it.
    instances: BTreeMap<String, Instance>,
    /// The nodes taken for their verdict alone: not named, not resumed.
    judged: BTreeSet<String>,
}

impl Recheck {
    /// For the `actions` selected from `drift`; the `named` nodes are replaced whatever their
    /// verdict, and a node with a replacement in progress is finished.
    pub fn new(mut drift: DriftSnapshot, actions: &[Action], named: &[String]) -> Recheck {
        let instances = std::mem::take(&mut drift.nodes)
            .into_iter()
            .filter_map(|m| Some((m.node.name, m.instance?)))
            .collect();
        let judged = actions
            .iter()
            .filter(|a| !named.contains(&a.node.name) && Record::of(&a.node).is_none())
            .filter(|a| matches!(a.method, Method::Drift | Method::StaticDrift))
            .map(|a| a.node.name.clone())
            .collect();
        Recheck {
            facts: drift,
            instances,
            judged,
        }
    }

    /// The verdict on `node` as `fresh` has it (at `now`), when it is no longer drifted (OK, or
    /// Unknown: [`select`] would not take it now); `None` when it still is, or is not judged
    /// again (named, resumed, or no longer a managed node).
    pub fn no_longer_drifted(
        &mut self,
        fresh: &Manifests,
        node: &Node,
        now: i64,
    ) -> Option<NodeDrift> {
        if !self.judged.contains(&node.name) {
            return None;
        }
        let instance: Vec<Instance> = self
            .instances
            .get(&node.name)
            .cloned()
            .into_iter()
            .collect();
        let (paired, _) =
            crate::drift::pair_nodes(std::slice::from_ref(node), &fresh.node_claims, &instance);
        let managed = paired.into_iter().next()?;
        self.facts.node_pools.clone_from(&fresh.node_pools);
        self.facts.node_classes.clone_from(&fresh.node_classes);
        self.facts.now = now;
        let verdict = crate::drift::evaluate_one(&self.facts, &managed);
        // Taken only when drifted (`select`): not drifted now, or unknown, it would not be.
        (verdict.status != Verdict::Drifted).then_some(verdict)
    }
}
