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
use crate::drift::{DriftSnapshot, Evaluation, NodeDrift, Status as Verdict};
use crate::error::CommandError;
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
    taken.sort_by(|(a_fresh, a_pods, a), (b_fresh, b_pods, b)| {
        (a_fresh, a_pods, &a.node.name).cmp(&(b_fresh, b_pods, &b.node.name))
    });
    taken.into_iter().map(|(_, _, action)| action).collect()
}

/// How many of the node's pods need a place elsewhere.
pub fn pods_to_move(m: &Manifests, node: &Node) -> usize {
    m.bound_pods
        .iter()
        .filter(|p| p.node_name.as_deref() == Some(node.name.as_str()) && is_reschedulable(p))
        .count()
}
