//! Slim serde types of the core Kubernetes objects the tool reads: Pod, the workload
//! controllers (Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, ReplicationController),
//! Node, PodDisruptionBudget, Namespace, RuntimeClass, and the storage objects scheduling reads
//! (StorageClass, PersistentVolumeClaim, PersistentVolume, CSINode).
//!
//! Only the fields scheduling, drift and draining look at are declared; everything else is
//! skipped while parsing, which keeps a large cluster dump cheap to hold (docs/architecture.md:
//! no full `k8s_openapi` objects).

use serde::{Deserialize, Serialize};

use super::meta::{
    Condition, IntOrString, ObjectMeta, RequirementSpec, ResourceList, ResourceRequirementsSpec,
    StringMap, TaintSpec,
};

/// A Pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Pod`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodStatus>,
}

/// `Pod.spec` (and a pod template's spec).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// The node the pod is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Node selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<StringMap>,
    /// Affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Tolerations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<TolerationSpec>>,
    /// Topology spread constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraintSpec>>,
    /// App containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<Container>>,
    /// Init containers (sidecars have `restartPolicy: Always`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<Container>>,
    /// Runtime-class overhead (filled by admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<ResourceList>,
    /// Pod-level resources (newer Kubernetes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// Priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Resolved priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Runtime class (its overhead applies when `overhead` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    /// Host networking: container ports become host ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    /// `restartPolicy` (only checked: Always, OnFailure, Never; a template's by its kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// Scheduler name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// Volumes (only claims matter to scheduling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Vec<Volume>>,
    /// Pod-level Dynamic Resource Allocation claims (only their presence is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claims: Option<Vec<serde_json::Value>>,
    /// `schedulingGates` (only whether there is one is read: a gated pod is never tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_gates: Option<Vec<serde_json::Value>>,
}

/// A pod volume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A claim by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimVolumeSource>,
    /// A generic ephemeral volume (a claim made from a template for this pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<EphemeralVolumeSource>,
}

/// `volumes[].persistentVolumeClaim`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVolumeSource {
    /// The claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_name: Option<String>,
    /// Read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// `volumes[].ephemeral`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralVolumeSource {
    /// The claim template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claim_template: Option<ClaimTemplate>,
}

/// A claim template (`ephemeral.volumeClaimTemplate`, a StatefulSet's `volumeClaimTemplates[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimTemplate {
    /// Metadata (a StatefulSet template's name names its claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// The claim's spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PersistentVolumeClaimSpec>,
}

/// A container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Requests and limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// Ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ContainerPort>>,
    /// `Always` on an init container makes it a sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
}

/// A container port.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Container port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_port: Option<i64>,
    /// Host port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_port: Option<i64>,
    /// `TCP` (default), `UDP`, `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Host IP (default `0.0.0.0`).
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
    /// Port name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `spec.affinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    /// Node affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<NodeAffinity>,
    /// Pod affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_affinity: Option<PodAffinity>,
    /// Pod anti-affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_anti_affinity: Option<PodAffinity>,
}

/// Node affinity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinity {
    /// Required terms (ORed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    /// Weighted preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<PreferredSchedulingTerm>>,
}

/// `{nodeSelectorTerms: [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    /// Terms (ORed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector_terms: Option<Vec<NodeSelectorTermSpec>>,
}

/// A node selector term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTermSpec {
    /// Label requirements (ANDed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<RequirementSpec>>,
    /// Field requirements (unsupported by Karpenter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_fields: Option<Vec<RequirementSpec>>,
}

/// A weighted node preference.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    /// 1–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
    /// The preferred term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<NodeSelectorTermSpec>,
}

/// Pod affinity or anti-affinity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinity {
    /// Required terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<Vec<PodAffinityTermSpec>>,
    /// Weighted preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<WeightedPodAffinityTerm>>,
}

/// A pod (anti-)affinity term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTermSpec {
    /// Selected pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelectorSpec>,
    /// Namespaces searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// Namespaces searched, by label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelectorSpec>,
    /// Topology key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_key: Option<String>,
    /// Pod label keys whose values are ANDed into the selector as `In` at pod creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_label_keys: Option<Vec<String>>,
    /// Pod label keys whose values are ANDed into the selector as `NotIn` at pod creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch_label_keys: Option<Vec<String>>,
}

/// A weighted pod (anti-)affinity term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightedPodAffinityTerm {
    /// 1–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
    /// The term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_affinity_term: Option<PodAffinityTermSpec>,
}

/// A label selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorSpec {
    /// Exact matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<StringMap>,
    /// Expressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<RequirementSpec>>,
}

/// A toleration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TolerationSpec {
    /// Key (empty with `Exists` = every taint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Equal` (default) or `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Effect (empty = all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// Seconds a NoExecute taint is tolerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// A topology spread constraint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraintSpec {
    /// Maximum skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_skew: Option<i64>,
    /// Domain label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_key: Option<String>,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_unsatisfiable: Option<String>,
    /// Counted pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelectorSpec>,
    /// Minimum domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_domains: Option<i64>,
    /// Pod label keys ANDed into the selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_label_keys: Option<Vec<String>>,
    /// `Honor` (default) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity_policy: Option<String>,
    /// `Ignore` (default) or `Honor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_taints_policy: Option<String>,
}

/// `Pod.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// Phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Conditions (`PodScheduled` among them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Node nominated by preemption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<String>,
    /// When the kubelet accepted the pod (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// The app containers' statuses (what the kubelet holds for each during a resize).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    /// The init containers' statuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_container_statuses: Option<Vec<ContainerStatus>>,
}

/// A container's status, as far as its resources go (in-place pod resize).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    /// The container's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resources the container runs with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// The resources the kubelet allocated to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_resources: Option<ResourceList>,
}

/// A pod template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateSpec {
    /// Labels and annotations of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Pod spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
}

/// A pod controller: Deployment, ReplicaSet, StatefulSet, ReplicationController, Job or
/// DaemonSet. They differ only in which count field they read, so one type serves them all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    /// `apps/v1`, `batch/v1`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The controller kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<WorkloadSpec>,
}

/// A controller's spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpec {
    /// Replicas (Deployment, ReplicaSet, StatefulSet, ReplicationController; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// Parallelism (Job; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i64>,
    /// Completions (Job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<i64>,
    /// Suspended (Job): no pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Pod selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<serde_json::Value>,
    /// Pod template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
    /// A StatefulSet's claim templates: one claim per template and replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claim_templates: Option<Vec<ClaimTemplate>>,
}

/// A Deployment.
pub type Deployment = Workload;
/// A ReplicaSet.
pub type ReplicaSet = Workload;
/// A StatefulSet.
pub type StatefulSet = Workload;
/// A Job.
pub type Job = Workload;
/// A DaemonSet.
pub type DaemonSet = Workload;

/// A Node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodeSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeStatus>,
}

/// `Node.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// Taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<TaintSpec>>,
    /// Cordoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable: Option<bool>,
    /// `aws:///<zone>/<instance-id>`.
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
}

/// `Node.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<ResourceList>,
    /// Allocatable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<ResourceList>,
    /// Conditions (`Ready` among them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// A PodDisruptionBudget (parsed so a malformed one is reported; `drift replace` reads PDBs
/// from the cluster).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudget {
    /// `policy/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `PodDisruptionBudget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodDisruptionBudgetSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodDisruptionBudgetStatus>,
}

/// `PodDisruptionBudget.status`: what the disruption controller counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    /// `disruptionsAllowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruptions_allowed: Option<i32>,
}

/// `PodDisruptionBudget.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetSpec {
    /// `minAvailable` (count or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    /// `maxUnavailable` (count or percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Selected pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelectorSpec>,
    /// `IfHealthyBudget` (default) or `AlwaysAllow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

/// A Namespace (its labels feed pod-affinity `namespaceSelector`s).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}

/// A RuntimeClass (its fixed overhead is added to pods that name it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClass {
    /// `node.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `RuntimeClass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    /// Overhead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<RuntimeClassOverhead>,
    /// Scheduling: what RuntimeClass admission merges into the pods naming the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<RuntimeClassScheduling>,
}

/// A PriorityClass (`scheduling.k8s.io/v1`): the Priority admission plugin writes its `value`
/// into the `spec.priority` of pods naming it, and a `globalDefault` one's into pods naming none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriorityClass {
    /// `scheduling.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `PriorityClass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `value` (required by the API server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    /// `globalDefault`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_default: Option<bool>,
}

/// A LimitRange (`v1`): admission's `LimitRanger` fills the requests a container of its
/// namespace leaves unset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRange {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `LimitRange`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<LimitRangeSpec>,
}

/// `LimitRange.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRangeSpec {
    /// Limits per object type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Vec<LimitRangeItem>>,
}

/// One `LimitRange.spec.limits[]` entry (the fields its defaulting reads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitRangeItem {
    /// `Container`, `Pod` or `PersistentVolumeClaim`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Default limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<ResourceList>,
    /// Default requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_request: Option<ResourceList>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<ResourceList>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<ResourceList>,
}

/// `RuntimeClass.scheduling`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassScheduling {
    /// Labels every pod of the class selects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<StringMap>,
    /// Tolerations added to every pod of the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<TolerationSpec>>,
}

/// `RuntimeClass.overhead`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassOverhead {
    /// Fixed per-pod overhead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_fixed: Option<ResourceList>,
}

/// A StorageClass (`storage.k8s.io/v1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageClass {
    /// `storage.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `StorageClass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Provisioner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioner: Option<String>,
    /// `Immediate` (default) or `WaitForFirstConsumer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_binding_mode: Option<String>,
    /// Where volumes may be provisioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_topologies: Option<Vec<TopologySelectorTerm>>,
    /// `Delete` (default) or `Retain` (only checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_policy: Option<String>,
}

/// A StorageClass `allowedTopologies` term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySelectorTerm {
    /// `key In values` requirements (ANDed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_label_expressions: Option<Vec<TopologySelectorLabelRequirement>>,
}

/// `{key, values}` of an `allowedTopologies` term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySelectorLabelRequirement {
    /// Label key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// A PersistentVolumeClaim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaim {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `PersistentVolumeClaim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PersistentVolumeClaimSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PersistentVolumeClaimStatus>,
}

/// `PersistentVolumeClaim.spec` (and a claim template's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimSpec {
    /// StorageClass (absent: the default class; `""`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// The volume it is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_name: Option<String>,
    /// Access modes (only checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_modes: Option<Vec<String>>,
    /// `Filesystem` or `Block` (only checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
    /// `requests.storage` (only checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
}

/// `PersistentVolumeClaim.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimStatus {
    /// `Pending`, `Bound` or `Lost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// A PersistentVolume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolume {
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `PersistentVolume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PersistentVolumeSpec>,
}

/// `PersistentVolume.spec`: the sources scheduling tells apart, and the node affinity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeSpec {
    /// Which nodes can reach the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<VolumeNodeAffinity>,
    /// A CSI volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csi: Option<CsiVolumeSource>,
    /// An in-tree EBS volume (counted against `ebs.csi.aws.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_elastic_block_store: Option<serde_json::Value>,
    /// A local volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<serde_json::Value>,
    /// A host path volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<serde_json::Value>,
    /// StorageClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
}

/// `PersistentVolume.spec.nodeAffinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeNodeAffinity {
    /// Required terms (ORed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<NodeSelector>,
}

/// `PersistentVolume.spec.csi`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsiVolumeSource {
    /// Driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Volume handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_handle: Option<String>,
}

/// A CSINode (`storage.k8s.io/v1`): the CSI drivers of a node and how many volumes each can
/// attach.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsiNode {
    /// `storage.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `CSINode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata (named after its Node).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<CsiNodeSpec>,
}

/// `CSINode.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsiNodeSpec {
    /// Drivers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drivers: Option<Vec<CsiNodeDriver>>,
}

/// `CSINode.spec.drivers[]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsiNodeDriver {
    /// Driver name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Node id.
    #[serde(default, rename = "nodeID", skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Attach limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<VolumeNodeResources>,
}

/// `CSINode.spec.drivers[].allocatable`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeNodeResources {
    /// How many volumes of the driver the node can attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
}
