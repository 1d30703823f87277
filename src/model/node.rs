//! The slim node: what scheduling, drift and replacement read of a Kubernetes Node.

use std::collections::BTreeMap;

use super::resources::Resources;
use super::taints::Taint;

/// A node (or an in-flight NodeClaim that has not registered yet).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// Name.
    pub name: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations this tool reads (hashes, drift markers, launch records).
    pub annotations: BTreeMap<String, String>,
    /// Taints, including the cordon taint's equivalent when `unschedulable`.
    pub taints: Vec<Taint>,
    /// The startup taints of its NodeClaim (or, without one, of its NodePool): while the node is
    /// not initialized, scheduling ignores them (docs/karpenter.md §6.4 step 3a).
    pub startup_taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// Capacity.
    pub capacity: Resources,
    /// Allocatable.
    pub allocatable: Resources,
    /// `spec.providerID`, e.g. `aws:///us-east-1a/i-0123`.
    pub provider_id: Option<String>,
    /// `Ready=True`.
    pub ready: bool,
    /// Karpenter's `karpenter.sh/initialized=true` label, or true for unmanaged nodes.
    pub initialized: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// RFC 3339 creation time.
    pub creation_timestamp: Option<String>,
}

impl Node {
    /// The EC2 instance id from the provider id.
    pub fn instance_id(&self) -> Option<&str> {
        self.provider_id
            .as_deref()
            .and_then(|p| p.rsplit('/').next())
            .filter(|s| s.starts_with("i-"))
    }

    /// The taints scheduling holds against pods (`StateNode.Taints`): all of them on an
    /// initialized (or unmanaged) node; on a managed node not initialized yet, not the known
    /// ephemeral taints nor its startup taints — pods are expected to land there once it is up.
    pub fn scheduling_taints(&self) -> Vec<Taint> {
        if self.initialized {
            return self.taints.clone();
        }
        self.taints
            .iter()
            .filter(|t| {
                !super::taints::is_known_ephemeral(t)
                    && !self.startup_taints.iter().any(|s| s.matches(t))
            })
            .cloned()
            .collect()
    }

    /// The NodePool (or Provisioner) that owns the node, if Karpenter manages it.
    pub fn node_pool(&self) -> Option<&str> {
        self.labels
            .get(super::labels::NODEPOOL)
            .or_else(|| self.labels.get(super::labels::PROVISIONER_NAME))
            .map(String::as_str)
    }
}
