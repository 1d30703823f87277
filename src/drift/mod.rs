//! Drift, decided purely: `evaluate(snapshot) → DriftReport` (docs/spec.md §4, docs/karpenter.md §4).
//!
//! Gatherers (offline manifests in `commands::drift`, later the cluster + EC2) build a
//! [`DriftSnapshot`] — managed nodes paired with their NodeClaim, EC2 instance facts and launch
//! record, the pools and classes, and what each class resolves to *now* ([`facts`]) — and
//! [`evaluate`] decides per node `Drifted` / `OK` / `Unknown` with the **first** reason in
//! Karpenter's order (docs/karpenter.md §4.2) and an explanation that names what changed.
//!
//! No I/O here: no files, no clock (the snapshot carries `now`), no cloud or cluster client.

pub mod facts;
pub mod hash;
pub mod record;
pub mod requirements;

mod reasons;
mod static_hash;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::model::instance::Instance;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};

pub use facts::{class_key, ClassFacts, ExpectedImage, Fact, IdSet};
pub use reasons::of_another_provider;
pub use record::{TemplateChange, TemplateRecord};

/// Karpenter's drift reasons, in the order they are checked (docs/karpenter.md §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum DriftReason {
    /// The NodePool template changed (hash annotations, or this tool's launch record).
    NodePoolDrifted,
    /// The node's labels no longer satisfy the NodePool's requirements.
    RequirementsDrifted,
    /// The node's instance type is no longer offered to the pool (v1.1+).
    InstanceTypeNotFound,
    /// The node class spec changed (hash annotations).
    NodeClassDrift,
    /// The node's AMI is not the newest compatible one of its class.
    #[serde(rename = "AMIDrift")]
    AmiDrift,
    /// The instance's security groups differ from the class's selection.
    SecurityGroupDrift,
    /// The instance's subnet left the class's selection.
    SubnetDrift,
    /// The instance runs in a capacity reservation the class no longer selects (or that is gone).
    CapacityReservationDrift,
    /// The node's placement group (its `karpenter.k8s.aws/placement-group-id` label) is not the
    /// one the class resolves to now: the selector was added, removed or changed (v1.14).
    PlacementGroupDrift,
}

impl DriftReason {
    /// Karpenter's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftReason::NodePoolDrifted => "NodePoolDrifted",
            DriftReason::RequirementsDrifted => "RequirementsDrifted",
            DriftReason::InstanceTypeNotFound => "InstanceTypeNotFound",
            DriftReason::NodeClassDrift => "NodeClassDrift",
            DriftReason::AmiDrift => "AMIDrift",
            DriftReason::SecurityGroupDrift => "SecurityGroupDrift",
            DriftReason::SubnetDrift => "SubnetDrift",
            DriftReason::CapacityReservationDrift => "CapacityReservationDrift",
            DriftReason::PlacementGroupDrift => "PlacementGroupDrift",
        }
    }
}

impl fmt::Display for DriftReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A node's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Status {
    /// A reason applies.
    Drifted,
    /// Every check that could run found nothing.
    #[serde(rename = "OK")]
    Ok,
    /// Nothing found, but a deciding fact was missing (no pool, no AMI facts, no image id).
    Unknown,
}

impl Status {
    /// `Drifted`, `OK`, `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Drifted => "Drifted",
            Status::Ok => "OK",
            Status::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One managed node and everything known about it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManagedNode {
    /// The Node.
    pub node: Node,
    /// Its NodeClaim (or Machine), when there is one.
    pub node_claim: Option<NodeClaim>,
    /// Its EC2 instance (DescribeInstances), when known (live).
    pub instance: Option<Instance>,
}

impl ManagedNode {
    /// The launch record: from the instance's tag, else (offline) the node's annotation.
    pub fn launch_record(&self) -> Option<&str> {
        self.instance
            .as_ref()
            .and_then(|i| i.tags.get(labels::TEMPLATE_RECORD_TAG))
            .or_else(|| self.node.annotations.get(labels::TEMPLATE_RECORD_TAG))
            .map(String::as_str)
    }

    /// Launched by this tool (tool tag, or a launch record).
    pub fn launched_by_tool(&self) -> bool {
        self.instance
            .as_ref()
            .is_some_and(|i| i.tags.contains_key(labels::TOOL_TAG))
            || self.launch_record().is_some()
    }

    /// The owning NodePool/Provisioner: node label, NodeClaim label, instance tag.
    pub fn pool_name(&self) -> Option<&str> {
        self.node
            .node_pool()
            .or_else(|| self.node_claim.as_ref().and_then(|c| c.nodepool.as_deref()))
            .or_else(|| {
                self.instance.as_ref().and_then(|i| {
                    i.tags
                        .get(labels::NODEPOOL)
                        .or_else(|| i.tags.get(labels::PROVISIONER_NAME))
                        .map(String::as_str)
                })
            })
    }

    /// Labels drift reads: the NodeClaim's when there is one (Karpenter evaluates the
    /// NodeClaim), else the Node's.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        match &self.node_claim {
            Some(c) if !c.labels.is_empty() => &c.labels,
            _ => &self.node.labels,
        }
    }

    /// An annotation of the NodeClaim, else of the Node (hash annotations are copied).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.node_claim
            .as_ref()
            .and_then(|c| c.annotations.get(key))
            .or_else(|| self.node.annotations.get(key))
            .map(String::as_str)
    }

    /// The instance type: label, else instance facts.
    pub fn instance_type(&self) -> Option<&str> {
        self.labels()
            .get(labels::INSTANCE_TYPE)
            .or_else(|| self.node.labels.get(labels::INSTANCE_TYPE))
            .map(String::as_str)
            .or_else(|| {
                self.instance
                    .as_ref()
                    .map(|i| i.instance_type.as_str())
                    .filter(|t| !t.is_empty())
            })
    }

    /// The zone: label, else instance facts.
    pub fn zone(&self) -> Option<&str> {
        self.node
            .labels
            .get(labels::ZONE)
            .map(String::as_str)
            .or_else(|| {
                self.instance
                    .as_ref()
                    .map(|i| i.zone.as_str())
                    .filter(|z| !z.is_empty())
            })
    }

    /// The instance id: instance facts, else the provider id (Node, then NodeClaim).
    pub fn instance_id(&self) -> Option<String> {
        if let Some(i) = &self.instance {
            return Some(i.id.clone());
        }
        self.node.instance_id().map(str::to_string).or_else(|| {
            self.node_claim
                .as_ref()
                .and_then(|c| c.provider_id.as_deref())
                .and_then(|p| p.rsplit('/').next())
                .filter(|s| s.starts_with("i-"))
                .map(str::to_string)
        })
    }

    /// The AMI the node runs: the instance's `ImageId`, else the NodeClaim's `status.imageID`
    /// (what Karpenter v1.7+ reads), else the offline annotation [`labels::IMAGE_ID_ANNOTATION`].
    pub fn image_id(&self) -> Option<&str> {
        self.instance
            .as_ref()
            .map(|i| i.image_id.as_str())
            .filter(|s| !s.is_empty())
            .or_else(|| self.node_claim.as_ref().and_then(|c| c.image_id.as_deref()))
            .or_else(|| {
                self.node
                    .annotations
                    .get(labels::IMAGE_ID_ANNOTATION)
                    .map(String::as_str)
            })
            .filter(|s| !s.is_empty())
    }

    /// The AMI drift compares, for a node of a pool of `generation`: a v1 NodeClaim's
    /// `status.imageID` first — what the provider reads since v1.7 (`aws v1.14.1:
    /// pkg/cloudprovider/drift.go` `isAMIDrifted`; `pkg/cloudprovider/suite_test.go` "should
    /// return drifted if the AMI is not valid" changes only the NodeClaim's) — else
    /// [`Self::image_id`] (the instance's `ImageId`, what v0.37 and v1.0–v1.6 read).
    pub fn drift_image_id(&self, generation: Option<ApiGeneration>) -> Option<&str> {
        let claims = self
            .node_claim
            .as_ref()
            .and_then(|c| c.image_id.as_deref())
            .filter(|s| !s.is_empty());
        match generation {
            Some(ApiGeneration::V1) => claims.or_else(|| self.image_id()),
            _ => self.image_id(),
        }
    }

    /// Creation time (RFC 3339): NodeClaim, else Node.
    pub fn created(&self) -> Option<&str> {
        self.node_claim
            .as_ref()
            .and_then(|c| c.created.as_deref())
            .or(self.node.creation_timestamp.as_deref())
    }
}

/// Pairs nodes with their NodeClaims (by `status.nodeName`, else provider id) and instances (by
/// id), keeping only managed nodes: labelled with a NodePool/Provisioner, or launched by this
/// tool. Returns the managed nodes (sorted by name) and how many nodes were not managed.
pub fn pair_nodes(
    nodes: &[Node],
    node_claims: &[NodeClaim],
    instances: &[Instance],
) -> (Vec<ManagedNode>, usize) {
    let by_id: BTreeMap<&str, &Instance> = instances.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut out = Vec::new();
    let mut unmanaged = 0;
    for node in nodes {
        let claim = node_claims
            .iter()
            .find(|c| c.node_name.as_deref() == Some(node.name.as_str()))
            .or_else(|| {
                node_claims
                    .iter()
                    .find(|c| c.provider_id.is_some() && c.provider_id == node.provider_id)
            });
        let instance = node.instance_id().and_then(|id| by_id.get(id)).copied();
        let managed = ManagedNode {
            node: node.clone(),
            node_claim: claim.cloned(),
            instance: instance.cloned(),
        };
        if managed.pool_name().is_some() || managed.launched_by_tool() {
            out.push(managed);
        } else {
            unmanaged += 1;
        }
    }
    out.sort_by(|a, b| a.node.name.cmp(&b.node.name));
    (out, unmanaged)
}

/// Everything [`evaluate`] reads.
#[derive(Debug, Clone, Default)]
pub struct DriftSnapshot {
    /// Managed nodes (see [`pair_nodes`]).
    pub nodes: Vec<ManagedNode>,
    /// NodePools and Provisioners.
    pub node_pools: Vec<NodePool>,
    /// Node classes.
    pub node_classes: Vec<NodeClass>,
    /// What each class resolves to now, keyed by [`class_key`] (`EC2NodeClass/default`).
    pub class_facts: BTreeMap<String, ClassFacts>,
    /// Instance types each pool can use now (`GetInstanceTypes`), keyed by pool name; a pool
    /// missing here is not checked for `InstanceTypeNotFound`.
    pub instance_types: BTreeMap<String, BTreeSet<String>>,
    /// The offerings' requirements of each of those types (pool → type → offerings), when
    /// known: a NodeClaim none of whose type's offerings fits its labels is drifted too.
    pub offerings:
        BTreeMap<String, BTreeMap<String, Vec<crate::model::requirements::Requirements>>>,
    /// AMI names known from anywhere (any class's status or resolution), to name the image a
    /// node runs.
    pub image_names: BTreeMap<String, String>,
    /// Seconds since the epoch (ages, the 1 h `InstanceTypeNotFound` rule).
    pub now: i64,
    /// Notes gathered with the facts (stale statuses, assumptions), passed through to the report.
    pub notes: Vec<String>,
    /// The cluster's CA bundle (base64, from `kube-root-ca.crt`), which EC2NodeClass hash `v5`
    /// mixes in; confirmed against the classes' own annotations before use.
    pub ca_bundle: Option<String>,
    /// Live: the AWS region whose EC2 described every node's instance, through an
    /// `instance-id` filter — a node of that region without [`ManagedNode::instance`] has one
    /// EC2 no longer knows (terminated about an hour ago or more). `None` where no instance
    /// was described (offline).
    pub instances_described_in: Option<String>,
}

/// A before/after pair behind a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// `image`, `nodeClassRef`, `labels`, `securityGroups`, `subnet`, a requirement key, …
    pub field: String,
    /// What the node has (or was launched with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// What the pool/class says now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

/// The verdict for one node (one entry of `DriftReport.nodes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDrift {
    /// Node name.
    pub name: String,
    /// Owning NodePool/Provisioner.
    pub node_pool: Option<String>,
    /// Its node class (from the pool now).
    pub node_class: Option<String>,
    /// NodeClaim/Machine name.
    pub node_claim: Option<String>,
    /// EC2 instance id.
    pub instance_id: Option<String>,
    /// Instance type.
    pub instance_type: Option<String>,
    /// Zone.
    pub zone: Option<String>,
    /// RFC 3339 creation time.
    pub created: Option<String>,
    /// Age in seconds at evaluation time.
    pub age_seconds: Option<i64>,
    /// `karpenter` or `kubectl-karpenter`.
    pub launched_by: &'static str,
    /// Verdict.
    pub status: Status,
    /// `status == Drifted`.
    pub drifted: bool,
    /// The first reason, in Karpenter's order.
    pub reason: Option<DriftReason>,
    /// Human explanation naming what changed (or, for Unknown, what is missing).
    pub detail: String,
    /// The AMI the node runs, when known.
    pub image_id: Option<String>,
    /// The AMIs the class would give this node's instance type now.
    pub expected_image_ids: Vec<String>,
    /// Before/after evidence of the reason.
    pub changes: Vec<Change>,
    /// Checks that could not run, and why (they do not change the verdict unless deciding).
    pub not_checked: Vec<String>,
}

/// Verdict counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    /// Nodes evaluated.
    pub total: usize,
    /// Drifted.
    pub drifted: usize,
    /// OK.
    pub ok: usize,
    /// Unknown.
    pub unknown: usize,
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Evaluation {
    /// Per node, sorted by name.
    pub nodes: Vec<NodeDrift>,
    /// Counts.
    pub summary: Summary,
    /// Notes from the snapshot plus any raised while evaluating (deduplicated, in order).
    pub notes: Vec<String>,
}

impl Evaluation {
    /// Whether any node drifted (exit 1 for `drift check`).
    pub fn any_drifted(&self) -> bool {
        self.summary.drifted > 0
    }
}

/// The verdict on one node of `snapshot` (or paired like one: [`pair_nodes`]), as
/// [`evaluate`] gives it — for a node judged again just before it is replaced.
pub fn evaluate_one(snapshot: &DriftSnapshot, node: &ManagedNode) -> NodeDrift {
    let ca = hash::confirm_ca_term(&snapshot.node_classes, snapshot.ca_bundle.as_deref());
    reasons::evaluate_node(snapshot, node, &ca)
}

/// Decides drift for every node of the snapshot.
pub fn evaluate(snapshot: &DriftSnapshot) -> Evaluation {
    let ca = hash::confirm_ca_term(&snapshot.node_classes, snapshot.ca_bundle.as_deref());
    let mut nodes: Vec<NodeDrift> = snapshot
        .nodes
        .iter()
        .map(|n| reasons::evaluate_node(snapshot, n, &ca))
        .collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let mut summary = Summary {
        total: nodes.len(),
        ..Summary::default()
    };
    for n in &nodes {
        match n.status {
            Status::Drifted => summary.drifted += 1,
            Status::Ok => summary.ok += 1,
            Status::Unknown => summary.unknown += 1,
        }
    }
    let mut notes = Vec::new();
    for note in snapshot
        .notes
        .iter()
        .chain(&static_hash::stale_annotation_notes(snapshot, &ca))
    {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    Evaluation {
        nodes,
        summary,
        notes,
    }
}
