//! Nodes → slim model nodes.

use super::core;
use super::error::{object_name, Ctx, InputError, Location};
use super::validate;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::taints::{Effect, Taint};

/// Converts a Node.
pub fn convert_node(node: &core::Node, at: &Location) -> Result<Node, InputError> {
    let meta = &node.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name("Node", None, Some(&name)));
    let spec = node.spec.clone().unwrap_or_default();
    let status = node.status.clone().unwrap_or_default();
    let node_labels = meta.labels.clone().unwrap_or_default();
    let mut taints = validate::taints(
        &ctx,
        "spec.taints",
        spec.taints.as_deref().unwrap_or_default(),
    )?;
    let unschedulable = spec.unschedulable == Some(true);
    if unschedulable
        && !taints
            .iter()
            .any(|t| t.key == labels::UNSCHEDULABLE_TAINT && t.effect == Effect::NoSchedule)
    {
        taints.push(Taint::new(
            labels::UNSCHEDULABLE_TAINT,
            "",
            Effect::NoSchedule,
        ));
    }
    // The label fact: nodes no pool owns have no initialization step to wait for. Whether a
    // NodeClaim stands for the node (upstream's `Managed()`, which makes it initialized whatever
    // its labels) is known only with the claims: `Manifests` marks it (`Node::claimless`).
    let managed = node_labels.contains_key(labels::NODEPOOL)
        || node_labels.contains_key(labels::PROVISIONER_NAME);
    let initialized = !managed
        || node_labels
            .get(labels::INITIALIZED)
            .is_some_and(|v| v == "true");
    let ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_.as_deref() == Some("Ready") && c.status.as_deref() == Some("True"));
    Ok(Node {
        name,
        labels: node_labels,
        annotations: meta.annotations.clone().unwrap_or_default(),
        taints,
        startup_taints: Vec::new(),
        unschedulable,
        capacity: validate::resources(&ctx, "status.capacity", status.capacity.as_ref())?,
        // The API server stores a Node without `allocatable` with its capacity there
        // (`k8s.io/kubernetes pkg/apis/core/v1/defaults.go` `SetDefaults_NodeStatus`).
        allocatable: match status.allocatable.as_ref() {
            Some(a) => validate::resources(&ctx, "status.allocatable", Some(a))?,
            None => validate::resources(&ctx, "status.capacity", status.capacity.as_ref())?,
        },
        provider_id: spec.provider_id.filter(|p| !p.is_empty()),
        ready,
        initialized,
        claimless: false,
        deleting: meta.deletion_timestamp.is_some(),
        in_flight: false,
        creation_timestamp: meta.creation_timestamp.clone(),
    })
}
