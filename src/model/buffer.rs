//! Cluster Autoscaler's `CapacityBuffer` (`autoscaling.x-k8s.io/v1beta1`) as Karpenter v1.14.1
//! provisions for it behind its `CapacityBuffer` feature gate: the buffer controller resolves
//! the pod template and the number of replicas (`core v1.14.1: pkg/controllers/capacitybuffer/
//! {controller,helpers}.go`, `pkg/utils/apps/resolve.go`), and the provisioner adds that many
//! virtual pods to its pending pods (`pkg/state/virtualpods/utilities.go` `BuildVirtualPods`,
//! `provisioning/provisioner.go` `GetPendingPods`). docs/karpenter.md §6.13.

use crate::model::pod::Pod;
use crate::model::resources::{Resources, PODS};

/// `karpenter.sh/capacity-buffer-fake-pod: "true"` marks a virtual pod (`v1beta1/constants.go`).
pub const FAKE_POD_ANNOTATION: &str = "karpenter.sh/capacity-buffer-fake-pod";
/// The owning buffer's name, on each virtual pod.
pub const BUFFER_NAME_ANNOTATION: &str = "karpenter.sh/capacity-buffer-name";
/// The owning buffer's namespace, on each virtual pod.
pub const BUFFER_NAMESPACE_ANNOTATION: &str = "karpenter.sh/capacity-buffer-namespace";
/// A virtual pod's priority (`VirtualPodPriority = math.MinInt32`).
pub const VIRTUAL_POD_PRIORITY: i32 = i32::MIN;
/// The API group a `scalableRef` without `apiGroup` means (`resolve.go` `ResolveScalableRef`).
pub const DEFAULT_SCALABLE_GROUP: &str = "apps";

/// A CapacityBuffer's spec, as the API server admitted it (the CRD's rules hold).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapacityBuffer {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID (synthesised for manifests): the virtual pods' UIDs are `<uid>-<i>`.
    pub uid: String,
    /// `spec.provisioningStrategy` (defaulted by the CRD to `buffer.x-k8s.io/active-capacity`;
    /// Karpenter copies it to the status and does not otherwise read it).
    pub provisioning_strategy: String,
    /// What the buffer's pods look like.
    pub reference: BufferRef,
    /// `spec.replicas`.
    pub replicas: Option<i32>,
    /// `spec.percentage` (of a `scalableRef`'s replicas).
    pub percentage: Option<i32>,
    /// `spec.limits`, as listed (milli-units; a listed zero counts).
    pub limits: Vec<(String, i64)>,
}

impl CapacityBuffer {
    /// `namespace/name`, what a virtual pod's annotations name (`buffers.go` `bufferKeyOf`).
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// `spec.podTemplateRef` or `spec.scalableRef` (the CRD allows not both; neither is allowed
/// and left not ready by the controller).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BufferRef {
    /// Neither is set.
    #[default]
    None,
    /// A PodTemplate of the buffer's namespace.
    PodTemplate(String),
    /// A workload of the buffer's namespace.
    Scalable {
        /// `apiGroup` (empty: `apps`).
        api_group: String,
        /// `kind`.
        kind: String,
        /// `name`.
        name: String,
    },
}

/// What resolving a buffer's reference found (`apps.ResolveCapacityBuffer`).
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// The pod template, as a pod with its requests and scheduling constraints; for a
    /// `scalableRef`, the workload's `spec.replicas` (1 when unset).
    Found {
        /// The template as a pod (no name, no admission: virtual pods never pass admission).
        template: Pod,
        /// `Some` for a `scalableRef` workload.
        scalable_replicas: Option<i32>,
    },
    /// The PodTemplate or workload does not exist (a NotFound error).
    NotFound,
    /// The reference cannot be resolved (`unsupported kind "Job"`, `unsupported scalableRef API
    /// group "batch"`): Karpenter's reconcile returns the error.
    Failed(String),
}

/// Why a buffer is or is not ready for provisioning: the `ReadyForProvisioning` condition's
/// reason (`capacitybuffer/constants.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadyReason {
    /// `Resolved`: the template was found.
    Resolved,
    /// `PodTemplateNotFound`.
    PodTemplateNotFound,
    /// `ScalableRefNotFound`.
    ScalableRefNotFound,
    /// `ResolutionFailed`, with the controller's message.
    ResolutionFailed(String),
}

impl ReadyReason {
    /// The condition's reason, as the controller writes it.
    pub fn code(&self) -> &'static str {
        match self {
            ReadyReason::Resolved => "Resolved",
            ReadyReason::PodTemplateNotFound => "PodTemplateNotFound",
            ReadyReason::ScalableRefNotFound => "ScalableRefNotFound",
            ReadyReason::ResolutionFailed(_) => "ResolutionFailed",
        }
    }
}

/// The status the buffer controller writes (`controller.go` `resolveAndUpdateStatus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferStatus {
    /// `ReadyForProvisioning` is True only for [`ReadyReason::Resolved`].
    pub ready: ReadyReason,
    /// `status.replicas` (set only when resolved).
    pub replicas: Option<i32>,
    /// `status.podTemplateRef.name` (a `podTemplateRef` buffer, resolved).
    pub pod_template: Option<String>,
}

impl BufferStatus {
    /// `isBufferReadyForProvisioning` (`virtualpods/utilities.go`): ready, more than zero
    /// replicas, a reference set.
    pub fn provisions(&self) -> bool {
        self.ready == ReadyReason::Resolved && self.replicas.is_some_and(|r| r > 0)
    }
}

/// The controller's reconcile of one buffer: its status from what its reference resolved to.
pub fn status(buffer: &CapacityBuffer, resolution: &Resolution) -> BufferStatus {
    let not_ready = |ready| BufferStatus {
        ready,
        replicas: None,
        pod_template: None,
    };
    if buffer.reference == BufferRef::None {
        return not_ready(ReadyReason::ResolutionFailed(
            "Neither podTemplateRef nor scalableRef is set".into(),
        ));
    }
    let uses_template = matches!(buffer.reference, BufferRef::PodTemplate(_));
    let (template, scalable_replicas) = match resolution {
        Resolution::Found {
            template,
            scalable_replicas,
        } => (template, *scalable_replicas),
        Resolution::NotFound if uses_template => {
            return not_ready(ReadyReason::PodTemplateNotFound)
        }
        Resolution::NotFound => return not_ready(ReadyReason::ScalableRefNotFound),
        Resolution::Failed(why) => return not_ready(ReadyReason::ResolutionFailed(why.clone())),
    };
    // A percentage counts only for a scalableRef whose workload has replicas.
    let mut candidates = Vec::new();
    if let (false, Some(pct), Some(n)) = (uses_template, buffer.percentage, scalable_replicas) {
        if n > 0 {
            candidates.push(percentage_replicas(n, pct));
        }
    }
    BufferStatus {
        ready: ReadyReason::Resolved,
        replicas: Some(replicas(buffer, &template.requests, candidates)),
        pod_template: match &buffer.reference {
            BufferRef::PodTemplate(name) => Some(name.clone()),
            _ => None,
        },
    }
}

/// `computeReplicas`: the largest of `spec.replicas` and the percentage's, capped by what the
/// limits hold; only the limits' count when neither is set; 0 when nothing says.
pub fn replicas(buffer: &CapacityBuffer, requests: &Resources, mut candidates: Vec<i32>) -> i32 {
    candidates.extend(buffer.replicas);
    let desired = candidates.iter().copied().max();
    match (limit_replicas(&buffer.limits, requests), desired) {
        (Some(by_limits), Some(d)) => d.min(by_limits),
        (Some(by_limits), None) => by_limits,
        (None, d) => d.unwrap_or(0),
    }
}

/// `calculateLimitReplicas`: how many pods of `requests` the limits hold, the smallest over
/// the limited resources the pod requests (floor of milli-values); `None` when the pod
/// requests none of them. The pod count is not a request (`RequestsForSpec`).
pub fn limit_replicas(limits: &[(String, i64)], requests: &Resources) -> Option<i32> {
    limits
        .iter()
        .filter(|(name, _)| name != PODS)
        .filter_map(|(name, limit)| {
            let request = requests.get(name);
            (request != 0).then(|| {
                let n = (*limit as f64 / request as f64).floor();
                n.min(f64::from(i32::MAX)) as i32
            })
        })
        .min()
}

/// `calculatePercentageReplicas`: `ceil(replicas × percentage / 100)`, at least 1 when both are
/// above zero.
pub fn percentage_replicas(scalable_replicas: i32, percentage: i32) -> i32 {
    let n = (f64::from(scalable_replicas) * f64::from(percentage) / 100.0).ceil() as i32;
    if n < 1 && percentage > 0 && scalable_replicas > 0 {
        1
    } else {
        n
    }
}

/// `BuildVirtualPods`: `replicas` copies of the template named `capacity-buffer-<name>-<i>`
/// (from 1), UID `<buffer uid>-<i>`, the template's labels, marked as the buffer's, priority
/// `MinInt32`, unschedulable (so provisionable), created `created` (Karpenter stamps them
/// `time.Now()`: after every real pod in the queue's tie-break), without the template's
/// `nodeName` nor its PVC-backed and ephemeral volumes (`sanitizeVirtualPodSpec`).
pub fn virtual_pods(
    buffer: &CapacityBuffer,
    template: &Pod,
    replicas: i32,
    created: &str,
) -> Vec<Pod> {
    let mut shape = template.clone();
    shape.namespace = buffer.namespace.clone();
    shape.node_name = None;
    shape.nominated_node_name = None;
    shape.volumes.clear();
    shape.owner = None;
    shape.priority = Some(VIRTUAL_POD_PRIORITY);
    shape.scheduled_condition = Some(("False".into(), "Unschedulable".into()));
    shape.creation_timestamp = Some(created.to_string());
    // A gated template's schedulingGates stay on the virtual pods, but they are injected after
    // the provisionable filter that reads them (`GetPendingPods`).
    shape.scheduling_gated = false;
    shape.buffer = Some(buffer.key());
    (1..=replicas.max(0))
        .map(|i| {
            let mut pod = shape.clone();
            pod.name = format!("capacity-buffer-{}-{i}", buffer.name);
            pod.uid = format!("{}-{i}", buffer.uid);
            pod
        })
        .collect()
}

#[cfg(test)]
mod tests;
