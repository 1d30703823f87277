//! What a document is, from its `apiVersion` and `kind`: a kind the tool reads (and which
//! serde type reads it), a List, an ordinary kind that cannot change a plan, or an error.

/// Kinds that commonly sit in a manifest directory but cannot change a plan. They are skipped
/// and listed, so `-f ./k8s/` works on a whole application directory.
const IGNORABLE_KINDS: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ControllerRevision",
    "CronJob",
    "CustomResourceDefinition",
    "EndpointSlice",
    "Endpoints",
    "Event",
    "FlowSchema",
    "HorizontalPodAutoscaler",
    "Ingress",
    "IngressClass",
    "Lease",
    "MutatingWebhookConfiguration",
    "NetworkPolicy",
    "PodSecurityPolicy",
    "PriorityLevelConfiguration",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VerticalPodAutoscaler",
    "VolumeAttachment",
    "VolumeSnapshotClass",
];

/// Dynamic Resource Allocation's API group (`ResourceClaim`, `DeviceClass`, …).
const DRA_GROUP: &str = "resource.k8s.io";
const KARPENTER_GROUP: &str = "karpenter.sh";
/// EKS Auto Mode's API group (`NodeClass`, …): EKS runs the Karpenter that reads them, so they
/// cannot change a plan of this tool; a NodePool naming one is reported as Auto Mode's.
const EKS_GROUP: &str = "eks.amazonaws.com";
const AWS_GROUP: &str = "karpenter.k8s.aws";
/// Cluster Autoscaler's API group, whose `CapacityBuffer` Karpenter v1.14.1 provisions for only
/// behind its `CapacityBuffer` feature gate, off by default (core v1.14.1
/// `pkg/operator/options/options.go`, `pkg/controllers/controllers.go`): read here always
/// (strictly), used by the commands only with the gate on (docs/karpenter.md §6.13).
const BUFFER_GROUP: &str = "autoscaling.x-k8s.io";

/// What a document is.
pub(crate) enum Class {
    Known(Kind),
    List,
    Ignored,
    UnknownVersion(String),
    Unsupported(String),
}

/// A kind the tool reads, at one API version.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Provisioner,
    Machine,
    AwsNodeTemplate,
    NodePoolV1Beta1,
    NodeClaimV1Beta1,
    Ec2NodeClassV1Beta1,
    NodePoolV1,
    NodeClaimV1,
    Ec2NodeClassV1,
    NodeOverlay,
    Pod,
    Workload,
    Node,
    Pdb,
    Namespace,
    RuntimeClass,
    LimitRange,
    PriorityClass,
    StorageClass,
    PersistentVolumeClaim,
    PersistentVolume,
    CsiNode,
    PodTemplate,
    CapacityBuffer,
}

/// The versions each Karpenter kind exists in, for "expected …" messages.
fn karpenter_versions(group: &str, kind: &str) -> Option<&'static str> {
    Some(match (group, kind) {
        (KARPENTER_GROUP, "Provisioner" | "Machine") => "karpenter.sh/v1alpha5",
        (KARPENTER_GROUP, "NodePool" | "NodeClaim") => "karpenter.sh/v1 or karpenter.sh/v1beta1",
        (KARPENTER_GROUP, "NodeOverlay") => "karpenter.sh/v1alpha1",
        (AWS_GROUP, "AWSNodeTemplate") => "karpenter.k8s.aws/v1alpha1",
        (AWS_GROUP, "EC2NodeClass") => "karpenter.k8s.aws/v1 or karpenter.k8s.aws/v1beta1",
        _ => return None,
    })
}

/// Classifies a document by its `apiVersion` and `kind`.
pub(crate) fn classify(api_version: &str, kind: &str) -> Class {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if group == EKS_GROUP {
        return Class::Ignored;
    }
    if group == BUFFER_GROUP && kind == "CapacityBuffer" {
        return if version == "v1beta1" {
            Class::Known(Kind::CapacityBuffer)
        } else {
            Class::UnknownVersion(format!("{BUFFER_GROUP}/v1beta1"))
        };
    }
    if group == KARPENTER_GROUP || group == AWS_GROUP {
        let known = match (group, version, kind) {
            (KARPENTER_GROUP, "v1alpha5", "Provisioner") => Some(Kind::Provisioner),
            (KARPENTER_GROUP, "v1alpha5", "Machine") => Some(Kind::Machine),
            (KARPENTER_GROUP, "v1beta1", "NodePool") => Some(Kind::NodePoolV1Beta1),
            (KARPENTER_GROUP, "v1beta1", "NodeClaim") => Some(Kind::NodeClaimV1Beta1),
            (KARPENTER_GROUP, "v1", "NodePool") => Some(Kind::NodePoolV1),
            (KARPENTER_GROUP, "v1", "NodeClaim") => Some(Kind::NodeClaimV1),
            (KARPENTER_GROUP, "v1alpha1", "NodeOverlay") => Some(Kind::NodeOverlay),
            (AWS_GROUP, "v1alpha1", "AWSNodeTemplate") => Some(Kind::AwsNodeTemplate),
            (AWS_GROUP, "v1beta1", "EC2NodeClass") => Some(Kind::Ec2NodeClassV1Beta1),
            (AWS_GROUP, "v1", "EC2NodeClass") => Some(Kind::Ec2NodeClassV1),
            _ => None,
        };
        if let Some(k) = known {
            return Class::Known(k);
        }
        let base = kind.strip_suffix("List").unwrap_or(kind);
        return match karpenter_versions(group, base) {
            Some(_) if kind.ends_with("List") => Class::List,
            Some(expected) => Class::UnknownVersion(expected.to_string()),
            None => Class::Unsupported(if group == KARPENTER_GROUP {
                "karpenter.sh has Provisioner and Machine (v1alpha5), NodePool and NodeClaim (v1beta1, v1), NodeOverlay (v1alpha1)".into()
            } else {
                "karpenter.k8s.aws has AWSNodeTemplate (v1alpha1) and EC2NodeClass (v1beta1, v1)"
                    .into()
            }),
        };
    }
    let core_kind = |expected_groups: &[&str], k: Kind, expected: &str| {
        if expected_groups.contains(&group) {
            Class::Known(k)
        } else {
            Class::UnknownVersion(expected.to_string())
        }
    };
    match kind {
        "List" if group.is_empty() => Class::List,
        "Pod" => core_kind(&[""], Kind::Pod, "v1"),
        "Node" => core_kind(&[""], Kind::Node, "v1"),
        "Namespace" => core_kind(&[""], Kind::Namespace, "v1"),
        "ReplicationController" => core_kind(&[""], Kind::Workload, "v1"),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => {
            core_kind(&["apps", "extensions"], Kind::Workload, "apps/v1")
        }
        "Job" => core_kind(&["batch"], Kind::Workload, "batch/v1"),
        "PodDisruptionBudget" => core_kind(&["policy"], Kind::Pdb, "policy/v1"),
        "RuntimeClass" => core_kind(&["node.k8s.io"], Kind::RuntimeClass, "node.k8s.io/v1"),
        "LimitRange" => core_kind(&[""], Kind::LimitRange, "v1"),
        "PriorityClass" => core_kind(
            &["scheduling.k8s.io"],
            Kind::PriorityClass,
            "scheduling.k8s.io/v1",
        ),
        "StorageClass" => core_kind(&["storage.k8s.io"], Kind::StorageClass, "storage.k8s.io/v1"),
        "CSINode" => core_kind(&["storage.k8s.io"], Kind::CsiNode, "storage.k8s.io/v1"),
        "PersistentVolumeClaim" => core_kind(&[""], Kind::PersistentVolumeClaim, "v1"),
        "PersistentVolume" => core_kind(&[""], Kind::PersistentVolume, "v1"),
        "PodTemplate" => core_kind(&[""], Kind::PodTemplate, "v1"),
        // Dynamic Resource Allocation: Karpenter v1.14.1 reads slices and allocated claims only
        // with `--ignore-dra-requests=false` (core `provisioner.go` `NewScheduler`, under
        // `!IgnoreDRARequests`); under the default it refuses the pods that claim devices (ours:
        // `Pod.dra`), so these objects cannot change a plan.
        "ResourceClaim" | "ResourceClaimTemplate" | "DeviceClass" | "ResourceSlice"
        | "DeviceTaintRule"
            if group == DRA_GROUP =>
        {
            Class::Ignored
        }
        k if IGNORABLE_KINDS.contains(&k) => Class::Ignored,
        k if k.ends_with("List") && k.len() > 4 => Class::List,
        _ => Class::Unsupported(
            "kubectl karpenter reads Pods, Deployments, ReplicaSets, StatefulSets, Jobs, DaemonSets, Nodes, \
             PodDisruptionBudgets, storage (StorageClasses, PersistentVolumeClaims, PersistentVolumes, \
             CSINodes) and Karpenter objects; remove it from the input or pass only the files that matter"
                .into(),
        ),
    }
}
