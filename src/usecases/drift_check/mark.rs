//! `--mark`: the verdict written where the installed generation shows drift — the v0.2x node
//! annotation `karpenter.sh/voluntary-disruption=drifted` for Provisioner nodes (docs/karpenter.md
//! §4.1), else the label `kubectl-karpenter.io/drifted=<reason>` (selectable with
//! `kubectl get nodes -l`); both are removed from nodes no longer drifted.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::drift::{self, DriftSnapshot, ManagedNode, Status};
use crate::error::CommandError;
use crate::k8s::{ops, Cluster};
use crate::model::labels;

use crate::model::labels::{DRIFTED_LABEL, VOLUNTARY_DISRUPTION};

/// Writes (and clears) the drift markers on the nodes of `snapshot` (the selected ones);
/// returns the nodes updated, by name. `dry_run` (`drift check --mark --dry-run`, docs/spec.md
/// §6 "`--dry-run` everywhere"): the nodes that would be updated, nothing written.
pub fn mark(
    cluster: &dyn Cluster,
    snapshot: &DriftSnapshot,
    dry_run: bool,
) -> Result<Vec<String>, CommandError> {
    let evaluation = drift::evaluate(snapshot);
    let by_name: BTreeMap<&str, &ManagedNode> = snapshot
        .nodes
        .iter()
        .map(|n| (n.node.name.as_str(), n))
        .collect();
    let mut updated = Vec::new();
    for verdict in &evaluation.nodes {
        let Some(managed) = by_name.get(verdict.name.as_str()) else {
            continue;
        };
        let drifted = verdict.status == Status::Drifted;
        let reason = verdict.reason.map(|r| r.as_str()).filter(|_| drifted);
        if let Some(patch) = marker_patch(managed, reason) {
            if !dry_run {
                let path = format!("/api/v1/nodes/{}", managed.node.name);
                ops::merge_patch(cluster, &path, &patch)?;
            }
            updated.push(managed.node.name.clone());
        }
    }
    Ok(updated)
}

/// What `--mark` says when it wrote (or cleared) Karpenter's v0.2x annotation on Provisioner
/// nodes (`updated`, by name; `None` for none): the annotation is Karpenter's own state, so it
/// means what this tool says only until a controller reconciles the node. Karpenter v0.21–v0.29
/// act on it only with `featureGates.driftEnabled` (core v0.29.0
/// `pkg/controllers/deprovisioning/drift.go` `ShouldDeprovision`), and their node controller sets
/// and removes it by their own verdict, removing it with the gate off (`pkg/controllers/node/
/// drift.go` `Reconcile`); v0.30–v0.32 read the Machine's `Drifted` condition instead (v0.30.0
/// `deprovisioning/drift.go`) and ignore it.
pub fn provisioner_mark_warning(snapshot: &DriftSnapshot, updated: &[String]) -> Option<String> {
    let count = snapshot
        .nodes
        .iter()
        .filter(|n| n.node.labels.contains_key(labels::PROVISIONER_NAME))
        .filter(|n| updated.contains(&n.node.name))
        .count();
    (count > 0).then(|| format!(
        "--mark: {VOLUNTARY_DISRUPTION} on {count} Provisioner node(s) is Karpenter v0.21–v0.29's own marker: read only with featureGates.driftEnabled, and set or removed by their node controller on its own verdict (removed with the gate off); v0.30–v0.32 read the Machine's Drifted condition and ignore it"
    ))
}

/// The merge patch that makes a node's marker say `drifted` (its reason; `None`: not drifted),
/// `None` when it already does.
fn marker_patch(managed: &ManagedNode, drifted: Option<&str>) -> Option<Value> {
    let node = &managed.node;
    if node.labels.contains_key(labels::PROVISIONER_NAME) {
        let current = node
            .annotations
            .get(VOLUNTARY_DISRUPTION)
            .map(String::as_str);
        return match (drifted.is_some(), current) {
            // Another marker (e.g. `expired`) is Karpenter's: left alone, as it does.
            (true, Some(_)) => None,
            (true, None) => {
                Some(json!({"metadata": {"annotations": {VOLUNTARY_DISRUPTION: "drifted"}}}))
            }
            (false, Some("drifted")) => {
                Some(json!({"metadata": {"annotations": {VOLUNTARY_DISRUPTION: null}}}))
            }
            (false, _) => None,
        };
    }
    let current = node.labels.get(DRIFTED_LABEL).map(String::as_str);
    (drifted != current).then(|| json!({"metadata": {"labels": {DRIFTED_LABEL: drifted}}}))
}
