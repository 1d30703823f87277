//! Emptiness (docs/karpenter.md §5.4): nodes of a pool whose policy removes empty nodes, with no pod
//! but DaemonSet/mirror/finished ones, are removed once they have been empty for
//! `consolidateAfter` (v1alpha5: `ttlSecondsAfterEmpty`). The clock is the node's
//! [`EMPTY_SINCE`] annotation, so it survives restarts.

use std::collections::BTreeSet;
use std::time::Duration;

use super::Event;
use crate::cloud::launch;
use crate::cloud::types::Compute;
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::{ops, Cluster};
use crate::model::labels::{DISRUPTED_TAINT, EMPTY_SINCE};
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::usecases::clock::Clock;
use crate::usecases::live::{aws_error, Live};
use crate::usecases::Sink;

/// How long a pool's empty nodes may stay: `None` when emptiness never removes them.
pub fn empty_ttl(pool: &NodePool) -> Option<Duration> {
    let policy = pool.disruption.consolidation_policy.as_str();
    if !matches!(
        policy,
        "WhenEmpty" | "WhenEmptyOrUnderutilized" | "WhenUnderutilized"
    ) {
        return None;
    }
    let after = pool.disruption.consolidate_after.as_deref().unwrap_or("0s");
    if after == "Never" {
        return None;
    }
    crate::disruption::time::parse_duration(after)
        .ok()
        .map(|s| Duration::from_secs(s.unsigned_abs()))
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Starts the emptiness clock of nodes found empty, stops it on nodes that are busy again,
    /// and removes the nodes empty for longer than their pool allows.
    pub fn remove_empty_nodes(&self, events: &mut dyn Sink<Event>) -> Result<(), CommandError> {
        let snapshot = snapshot::read(self.cluster, Scope::PODS)?;
        let m = &snapshot.manifests;
        let now = self.clock.now();
        let now_text = crate::model::time::format_rfc3339(now.max(0));
        let mut busy: BTreeSet<&str> = BTreeSet::new();
        for p in &m.bound_pods {
            if !p.is_daemonset_pod() && !p.is_mirror() && !p.is_terminal() {
                if let Some(n) = &p.node_name {
                    busy.insert(n);
                }
            }
        }
        for node in &m.nodes {
            let Some(pool) = node
                .node_pool()
                .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
            else {
                continue;
            };
            let Some(ttl) = empty_ttl(pool) else {
                continue;
            };
            let Some(instance) = node.instance_id().filter(|_| !node.deleting) else {
                continue;
            };
            let path = format!("/api/v1/nodes/{}", node.name);
            let since = node.annotations.get(EMPTY_SINCE);
            if busy.contains(node.name.as_str()) {
                if since.is_some() {
                    ops::merge_patch(
                        self.cluster,
                        &path,
                        &serde_json::json!({"metadata": {"annotations": {EMPTY_SINCE: null}}}),
                    )?;
                }
                continue;
            }
            let Some(since) = since else {
                ops::merge_patch(
                    self.cluster,
                    &path,
                    &serde_json::json!({"metadata": {"annotations": {EMPTY_SINCE: now_text}}}),
                )?;
                events.emit(Event::NodeEmpty {
                    node: node.name.clone(),
                    ttl,
                });
                continue;
            };
            let Some(started) = crate::model::time::parse_rfc3339(since) else {
                continue;
            };
            if now - started < ttl.as_secs() as i64 {
                continue;
            }
            self.remove_node(node, instance)?;
            events.emit(Event::NodeRemoved {
                node: node.name.clone(),
                instance: instance.to_string(),
                empty_for: now - started,
            });
        }
        Ok(())
    }

    /// Removes a node: taint and cordon it (nothing new lands), terminate its `instance`,
    /// delete the Node.
    fn remove_node(&self, node: &Node, instance: &str) -> Result<(), CommandError> {
        let path = format!("/api/v1/nodes/{}", node.name);
        let mut taints: Vec<serde_json::Value> = node
            .taints
            .iter()
            .filter(|t| t.key != DISRUPTED_TAINT)
            .map(|t| serde_json::json!({"key": t.key, "value": t.value, "effect": t.effect.as_str()}))
            .collect();
        taints.push(serde_json::json!({"key": DISRUPTED_TAINT, "effect": "NoSchedule"}));
        ops::merge_patch(
            self.cluster,
            &path,
            &serde_json::json!({"spec": {"unschedulable": true, "taints": taints}}),
        )?;
        // Instance first, then the Node: a run killed in between leaves a node to find again.
        launch::terminate_all(self.cloud, &[instance.to_string()]).map_err(aws_error)?;
        ops::delete(self.cluster, &path, None)?;
        Ok(())
    }
}
