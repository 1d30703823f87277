//! Serde types shared by every API generation: object metadata, requirements, taints,
//! quantities, kubelet settings, selector terms, block devices and status conditions.
//!
//! Every field is optional and unknown fields are ignored, so a manifest written for a newer or
//! older release still loads; validation with precise field paths happens afterwards, in the
//! normalisation code. Every type also serialises back (absent fields stay absent), so `convert`
//! can re-emit what it read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A `map[string]string` (labels, annotations, tags, selectors).
pub type StringMap = BTreeMap<String, String>;

/// A ResourceList (`cpu: 1`, `memory: 1Gi`): quantities as written.
pub type ResourceList = BTreeMap<String, IntOrString>;

/// A Kubernetes `IntOrString`, which is also how quantities arrive from YAML: `cpu: 1` is an
/// integer, `cpu: "1"` and `memory: 1Gi` are strings, `cpu: 0.5` is a float (kept as its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntOrString {
    /// An integer as written.
    Int(i64),
    /// A string (or a float, kept as its decimal text).
    String(String),
}

impl IntOrString {
    /// The value as text (`1`, `1Gi`, `80%`).
    pub fn as_text(&self) -> Cow<'_, str> {
        match self {
            IntOrString::Int(n) => Cow::Owned(n.to_string()),
            IntOrString::String(s) => Cow::Borrowed(s),
        }
    }
}

impl fmt::Display for IntOrString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_text())
    }
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(n) => serializer.serialize_i64(*n),
            IntOrString::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = IntOrString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrString, E> {
                Ok(IntOrString::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrString, E> {
                Ok(match i64::try_from(v) {
                    Ok(n) => IntOrString::Int(n),
                    Err(_) => IntOrString::String(v.to_string()),
                })
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<IntOrString, E> {
                // Debug keeps the exponent form (`1e99`, `1e-7`), which quantities accept and
                // which reads back as the user wrote it.
                Ok(IntOrString::String(format!("{v:?}")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v.to_string()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A field the API server types as a string but this tool keeps as [`IntOrString`] (a budget's
/// `nodes`, `"10%"` or `"5"`): a number there is refused ("must be of type string", which is
/// what `kubectl apply` reports), as every other string field refuses one (`api::scalars`);
/// a quoted number is text.
pub(crate) mod strict {
    use serde::de::{Deserialize, Deserializer};

    use super::IntOrString;

    /// An optional `string` kept as [`IntOrString`] (the type the rest of the code reads).
    pub(crate) fn text_as_int_or_string<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<IntOrString>, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.map(IntOrString::String))
    }
}

/// `metadata`, reduced to what planning, drift and conversion read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `generateName` (not supported offline: objects need a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// Namespace (`default` when absent, for namespaced kinds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<StringMap>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<StringMap>,
    /// UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// RFC 3339 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// RFC 3339 deletion time (set while the object is terminating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// Owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReference>>,
    /// `metadata.generation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

impl ObjectMeta {
    /// The namespace, `default` when absent or empty (as the API server defaults a namespaced
    /// object's).
    pub fn namespace_or_default(&self) -> String {
        self.namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into())
    }
}

/// An owner reference.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// Owner apiVersion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Owner kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Owner name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Owner UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Whether this owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
}

/// `{key, operator, values, minValues}` as written (NodePools, NodeClaims, pod node affinity).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementSpec {
    /// Label key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Operator (validated later, so an unknown one gets a precise message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Values (strings only: `values: [1]` is refused, as the API server refuses it, by
    /// `api::scalars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// `minValues` (v1beta1 and v1 NodePools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_values: Option<i64>,
}

/// A taint as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaintSpec {
    /// Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Effect (validated strictly later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// When the taint was added (Nodes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<String>,
}

/// Kubelet settings: v1alpha5 `kubeletConfiguration`, v1beta1 `template.spec.kubelet`, v1
/// `EC2NodeClass.spec.kubelet`. The same shape in every generation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfiguration {
    /// `clusterDNS`.
    #[serde(
        default,
        rename = "clusterDNS",
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_dns: Option<Vec<String>>,
    /// `containerRuntime` (v1alpha5 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_runtime: Option<String>,
    /// `maxPods`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i64>,
    /// `podsPerCore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_per_core: Option<i64>,
    /// `systemReserved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_reserved: Option<ResourceList>,
    /// `kubeReserved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<ResourceList>,
    /// `evictionHard` (`memory.available: 5%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_hard: Option<StringMap>,
    /// `evictionSoft`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft: Option<StringMap>,
    /// `evictionSoftGracePeriod`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_soft_grace_period: Option<StringMap>,
    /// `evictionMaxPodGracePeriod`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i64>,
    /// `imageGCHighThresholdPercent`.
    #[serde(
        default,
        rename = "imageGCHighThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_high_threshold_percent: Option<i64>,
    /// `imageGCLowThresholdPercent`.
    #[serde(
        default,
        rename = "imageGCLowThresholdPercent",
        skip_serializing_if = "Option::is_none"
    )]
    pub image_gc_low_threshold_percent: Option<i64>,
    /// `cpuCFSQuota`.
    #[serde(
        default,
        rename = "cpuCFSQuota",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cfs_quota: Option<bool>,
}

/// A subnet or security-group selector term (v1beta1/v1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectorTermSpec {
    /// Tag filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<StringMap>,
    /// Resource id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Name (security groups only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An AMI selector term (v1beta1/v1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmiSelectorTermSpec {
    /// `family@version` (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Tag filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<StringMap>,
    /// AMI id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Name filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Owner filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// SSM parameter holding an AMI id (newer v1 releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssm_parameter: Option<String>,
}

/// A block device mapping.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockDeviceMappingSpec {
    /// `/dev/xvda`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// The EBS volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebs: Option<EbsSpec>,
    /// Whether this is the root volume (v1beta1+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_volume: Option<bool>,
}

/// An EBS volume of a block device mapping.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EbsSpec {
    /// `deleteOnTermination`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_on_termination: Option<bool>,
    /// `encrypted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// `iops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i64>,
    /// `kmsKeyID`.
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// `snapshotID`.
    #[serde(
        default,
        rename = "snapshotID",
        skip_serializing_if = "Option::is_none"
    )]
    pub snapshot_id: Option<String>,
    /// `throughput`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<i64>,
    /// `volumeInitializationRate` (newer v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_initialization_rate: Option<i64>,
    /// `volumeSize` (a quantity; v1alpha1 also accepted a bare integer of GiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_size: Option<IntOrString>,
    /// `volumeType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_type: Option<String>,
}

/// A status condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type (`Ready`, `Drifted`, …).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// Generation observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// A subnet in a node class status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubnetStatus {
    /// Subnet id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Availability zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Zone id (v1).
    #[serde(default, rename = "zoneID", skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
}

/// A security group in a node class status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroupStatus {
    /// Group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An AMI in a node class status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmiStatusSpec {
    /// AMI id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// AMI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the AMI is deprecated (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// Instance requirements the AMI applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<RequirementSpec>>,
}

/// The status every node class generation writes (AWSNodeTemplate, EC2NodeClass v1beta1/v1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClassStatusSpec {
    /// Resolved subnets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnets: Option<Vec<SubnetStatus>>,
    /// Resolved security groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups: Option<Vec<SecurityGroupStatus>>,
    /// Resolved AMIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amis: Option<Vec<AmiStatusSpec>>,
    /// Instance profile (v1beta1+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// Conditions (v1beta1+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Capacity reservations (v1, passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservations: Option<serde_json::Value>,
}

/// The status of a NodeClaim (v1beta1/v1) or Machine (v1alpha5).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimStatusSpec {
    /// Node name once registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// `aws:///<zone>/<instance-id>`.
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
    /// AMI id (v1beta1+).
    #[serde(default, rename = "imageID", skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// Capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<ResourceList>,
    /// Allocatable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<ResourceList>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Last pod event (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pod_event_time: Option<String>,
}

/// `resources.requests` of a NodeClaim spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirementsSpec {
    /// Requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceList>,
    /// Limits (pods only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceList>,
    /// A container's Dynamic Resource Allocation claims (pods only; only their presence is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<serde_json::Value>>,
}

/// `template.metadata` of a NodePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMetadata {
    /// Labels put on every node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<StringMap>,
    /// Annotations put on every node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<StringMap>,
}

/// A disruption budget as written (v1beta1, v1; `reasons` is v1 only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetSpec {
    /// `"10%"` or `"5"` (default `10%`); a string in every generation's CRD, so `nodes: 10`
    /// is refused, as the API server refuses it.
    #[serde(
        default,
        deserialize_with = "strict::text_as_int_or_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub nodes: Option<IntOrString>,
    /// Cron schedule (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How long the budget applies after each schedule hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Disruption reasons it applies to (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<String>>,
}

/// `nodeClassRef`: v1beta1 writes `{apiVersion, kind, name}`, v1 `{group, kind, name}`;
/// v1alpha5 `providerRef` has the v1beta1 shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClassRefSpec {
    /// `karpenter.k8s.aws/v1beta1` (v1alpha5, v1beta1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `karpenter.k8s.aws` (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `EC2NodeClass`, `AWSNodeTemplate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_string_reads_every_scalar_and_writes_it_back() {
        let list: ResourceList =
            serde_saphyr::from_str("cpu: 1\nmemory: 1Gi\nhalf: 0.5\nq: \"2\"\n").unwrap();
        assert_eq!(list["cpu"], IntOrString::Int(1));
        assert_eq!(list["memory"].as_text(), "1Gi");
        assert_eq!(list["half"].as_text(), "0.5");
        assert_eq!(list["q"].as_text(), "2");
        let back = crate::api::yaml::to_string(&list).unwrap();
        assert!(back.contains("cpu: 1\n"), "{back}");
        assert!(back.contains("q: \"2\""), "{back}");
        assert!(serde_saphyr::from_str::<ResourceList>("cpu: [1]").is_err());
    }
}
