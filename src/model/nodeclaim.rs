//! A NodeClaim (v1beta1, v1) or v1alpha5 Machine, normalised into one small struct: what drift
//! and replacement read of an in-flight or registered claim (`api` converts every generation
//! into it).

use std::collections::BTreeMap;

use super::nodepool::{ApiGeneration, NodeClassRef, Origin};
use super::requirements::NodeSelectorRequirement;
use super::resources::Resources;
use super::taints::Taint;

/// A NodeClaim (or v1alpha5 Machine), normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeClaim {
    /// Name.
    pub name: String,
    /// Generation of the source object.
    pub generation: Option<ApiGeneration>,
    /// Where it came from.
    pub origin: Origin,
    /// Owning NodePool (`karpenter.sh/nodepool`) or Provisioner (`karpenter.sh/provisioner-name`).
    pub nodepool: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations (hash annotations among them).
    pub annotations: BTreeMap<String, String>,
    /// Requirements the claim was launched with.
    pub requirements: Vec<NodeSelectorRequirement>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Startup taints.
    pub startup_taints: Vec<Taint>,
    /// Node class reference (`machineTemplateRef` for Machines).
    pub node_class_ref: Option<NodeClassRef>,
    /// `status.providerID`.
    pub provider_id: Option<String>,
    /// `status.nodeName`.
    pub node_name: Option<String>,
    /// `status.imageID` (v1beta1+).
    pub image_id: Option<String>,
    /// RFC 3339 creation time.
    pub created: Option<String>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `status.capacity`.
    pub capacity: Resources,
    /// `status.allocatable`.
    pub allocatable: Resources,
    /// Condition type → status (`Drifted` → `True`, …).
    pub conditions: BTreeMap<String, String>,
    /// `spec.expireAfter` (v1).
    pub expire_after: Option<String>,
    /// `spec.terminationGracePeriod` (v1).
    pub termination_grace_period: Option<String>,
    /// Condition type → (`lastTransitionTime`, `reason`) of each condition that is `True`
    /// (disruption orders drift by its time and waits on `Initialized`/`Empty` since when).
    pub true_since: BTreeMap<String, (Option<String>, Option<String>)>,
    /// `status.lastPodEventTime` (v1): `consolidateAfter` counts from it.
    pub last_pod_event: Option<String>,
}
