//! Empty-node removal in `--watch`: Karpenter's emptiness rules ([`emptiness`],
//! docs/karpenter.md §5.4) applied to the cluster as read now. The clock is the node's
//! [`EMPTY_SINCE`] annotation, so it survives restarts. A node whose time is up is tainted with
//! its resourceVersion (a change since the read is a 409: the node is decided again on the next
//! check), its pods are read again, and only then is its instance terminated — a pod that
//! arrived meanwhile takes the taint off again (Karpenter's validator abandons the command on
//! such churn: `core v1.9.1 pkg/controllers/disruption/validation.go`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::Event;
use crate::cloud::launch;
use crate::cloud::types::Compute;
use crate::disruption::consolidation::PdbInput;
use crate::disruption::drain::disruption_taint;
use crate::disruption::emptiness::{self, keeps_node, Emptiness, Hold};
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::{ops, Cluster};
use crate::model::labels::{DO_NOT_DISRUPT, EMPTY_SINCE};
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::usecases::clock::Clock;
use crate::usecases::live::{aws_error, Live};
use crate::usecases::replace::steps::{patch_current, pods_on, set_annotation, taints_json};
use crate::usecases::Sink;

/// Why the last check left each empty node whose time was up (so each hold is said once).
pub type Holds = BTreeMap<String, Hold>;

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Starts the emptiness clock of nodes found empty, stops it on nodes that are busy again,
    /// and removes the nodes empty for longer than their pool allows, as far as the pools'
    /// `Empty` budgets and do-not-disrupt allow. `buffer_nodes`: the nodes the last plan placed
    /// CapacityBuffer virtual pods on (kept, as Karpenter's emptiness keeps them).
    pub fn remove_empty_nodes(
        &self,
        holds: &mut Holds,
        buffer_nodes: &BTreeSet<String>,
        planned: &BTreeMap<String, String>,
        events: &mut dyn Sink<Event>,
    ) -> Result<(), CommandError> {
        let snapshot = snapshot::read(self.cluster, Scope::PODS)?;
        let m = &snapshot.manifests;
        let now = self.clock.now();
        let now_text = crate::model::time::format_rfc3339(now.max(0));
        let mut pods = m.bound_pods.clone();
        pods.extend(m.pods.iter().cloned());
        let mut still_held = Holds::new();
        let decide = |pdbs: &[PdbInput]| {
            emptiness::decide(
                &m.nodes,
                &pods,
                &m.node_pools,
                buffer_nodes,
                planned,
                pdbs,
                now,
            )
        };
        let mut decisions = decide(&[]);
        // PDBs only when a node would go: a pod of it they keep from eviction holds it, as
        // Karpenter's candidacy check does (core v1.14.1 `statenode.go ValidatePodsDisruptable`).
        if decisions
            .iter()
            .any(|(_, d)| matches!(d, Emptiness::Remove { .. }))
        {
            let pdbs = self.read_pdbs_for_emptiness(events)?;
            if !pdbs.is_empty() {
                decisions = decide(&pdbs);
            }
        }
        for (node, decision) in decisions {
            match decision {
                Emptiness::Busy if node.annotations.contains_key(EMPTY_SINCE) => {
                    set_annotation(self.cluster, &node.name, EMPTY_SINCE, Value::Null)?;
                }
                Emptiness::Busy | Emptiness::Waiting { .. } => {}
                Emptiness::StartClock => {
                    set_annotation(
                        self.cluster,
                        &node.name,
                        EMPTY_SINCE,
                        now_text.clone().into(),
                    )?;
                    let ttl = node
                        .node_pool()
                        .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
                        .and_then(emptiness::empty_ttl)
                        .unwrap_or(0);
                    events.emit(Event::NodeEmpty {
                        node: node.name.clone(),
                        ttl: std::time::Duration::from_secs(ttl.unsigned_abs()),
                    });
                }
                Emptiness::Held(hold) => {
                    if holds.get(&node.name) != Some(&hold) {
                        events.emit(Event::NodeHeld {
                            node: node.name.clone(),
                            hold: hold.clone(),
                        });
                    }
                    still_held.insert(node.name.clone(), hold);
                }
                Emptiness::Remove { empty_for } => {
                    let pool = node
                        .node_pool()
                        .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
                        .expect("decide only returns nodes of a known pool");
                    let instance = node.instance_id().expect("decide only returns instances");
                    match self.remove_node(node, pool, instance, now)? {
                        Removal::Removed => events.emit(Event::NodeRemoved {
                            node: node.name.clone(),
                            instance: instance.to_string(),
                            empty_for,
                        }),
                        Removal::PodArrived(pod) => events.emit(Event::NodeKept {
                            node: node.name.clone(),
                            pod,
                        }),
                        Removal::Changed => {}
                    }
                }
            }
        }
        *holds = still_held;
        Ok(())
    }

    /// The PodDisruptionBudgets, read as consolidation reads them; without permission to list
    /// them, said so and none (the node goes as if no PDB held its pods).
    fn read_pdbs_for_emptiness(
        &self,
        events: &mut dyn Sink<Event>,
    ) -> Result<Vec<PdbInput>, CommandError> {
        match snapshot::read_pdbs(self.cluster) {
            Ok(pdbs) => pdbs
                .iter()
                .map(crate::usecases::consolidate::pdb_input)
                .collect(),
            Err(e) if e.is_forbidden() => {
                events.emit(Event::Warning(format!(
                    "cannot list poddisruptionbudgets ({e}): empty nodes are removed as if no PodDisruptionBudget held their pods"
                )));
                Ok(Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes an empty node: taints and cordons it as read now (resourceVersion), reads its
    /// pods again, then terminates its `instance` and deletes the Node.
    fn remove_node(
        &self,
        node: &Node,
        pool: &NodePool,
        instance: &str,
        now: i64,
    ) -> Result<Removal, CommandError> {
        let path = format!("/api/v1/nodes/{}", node.name);
        let Some(live) = ops::get::<Value>(self.cluster, &path)? else {
            return Ok(Removal::Changed);
        };
        if !still_the_same(&live, node, instance) {
            return Ok(Removal::Changed);
        }
        let taint = disruption_taint(pool.generation);
        let was_cordoned = live.pointer("/spec/unschedulable") == Some(&Value::Bool(true));
        let taints = taints_json(&live, Some(&taint), &taint.key);
        let patch = json!({
            "metadata": {"resourceVersion": live.pointer("/metadata/resourceVersion")},
            "spec": {"unschedulable": true, "taints": taints},
        });
        match ops::merge_patch(self.cluster, &path, &patch) {
            Ok(_) => {}
            // Changed since it was read (or gone): decided again on the next check.
            Err(e) if matches!(e.status(), Some(409) | Some(404)) => return Ok(Removal::Changed),
            Err(e) => return Err(e.into()),
        }
        // The taint off again, `busy`: its emptiness clock stopped too. Read again and retried
        // on a conflict (a kubelet's status write): a failed undo would leave a serving node
        // cordoned and tainted.
        let untaint = |busy: bool| {
            patch_current(self.cluster, &node.name, |live| {
                let mut patch = json!({
                    "spec": {"unschedulable": was_cordoned, "taints": taints_json(live, None, &taint.key)},
                });
                if busy {
                    patch["metadata"] = json!({"annotations": {EMPTY_SINCE: null}});
                }
                patch
            })
        };
        let pods = match pods_on(self.cluster, &node.name) {
            Ok((pods, _)) => pods,
            Err(e) => return Err(undone(e, untaint(false))),
        };
        if let Some(pod) = pods.iter().find(|p| keeps_node(p, now)) {
            untaint(true)?;
            return Ok(Removal::PodArrived(pod.key()));
        }
        // Instance first, then the Node: a run killed in between leaves a node to find again.
        // Refused (a missing permission, a lost lease): the node serves again, still empty, and
        // is tried again on the next check (Karpenter untaints the candidates of a failed
        // command: core v1.14.1 `disruption/queue.go` `Reconcile` → `RequireNoScheduleTaint`).
        if let Err(e) = launch::terminate_all(self.cloud, &[instance.to_string()]) {
            return Err(undone(aws_error(e), untaint(false)));
        }
        ops::delete(self.cluster, &path, None)?;
        Ok(Removal::Removed)
    }
}

/// Whether the Node as read now is still the one decided on: the same instance, not being
/// deleted, not annotated `karpenter.sh/do-not-disrupt` and empty since the same time. Karpenter
/// validates its candidates again on the live objects before acting (`core v1.14.1
/// pkg/controllers/disruption/validation.go validateCandidates` → `GetCandidates`, whose
/// `statenode.go ValidateNodeDisruptable` refuses a do-not-disrupt node); an operator's
/// annotation made after the check read the cluster must hold the node (issue 13).
fn still_the_same(live: &Value, node: &Node, instance: &str) -> bool {
    let annotation = |key: &str| {
        live.pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    };
    let provider = live
        .pointer("/spec/providerID")
        .and_then(Value::as_str)
        .unwrap_or_default();
    provider.rsplit('/').next() == Some(instance)
        && live.pointer("/metadata/deletionTimestamp").is_none()
        && annotation(DO_NOT_DISRUPT) != Some("true")
        && annotation(EMPTY_SINCE) == node.annotations.get(EMPTY_SINCE).map(String::as_str)
}

/// The error that stopped a removal after the taint, once the taint is off again (best effort:
/// an undo that fails too is named beside it).
fn undone(error: CommandError, undo: Result<bool, CommandError>) -> CommandError {
    match undo {
        Ok(_) => error,
        Err(u) => CommandError {
            message: format!(
                "{}; the taint could not be taken off again: {}",
                error.message, u.message
            ),
            ..error
        },
    }
}

/// How an attempt to remove an empty node ended.
enum Removal {
    Removed,
    /// This pod (namespace/name) was found on it after the taint: the taint is off again.
    PodArrived(String),
    /// The node changed (or went) since it was read: decided again next time.
    Changed,
}
