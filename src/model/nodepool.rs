//! NodePools and node classes of every API generation, normalised into one model.
//!
//! `api/` converts v1alpha5 Provisioners, v1beta1 and v1 NodePools (and AWSNodeTemplates /
//! EC2NodeClasses) into these structs, applying each generation's defaults, so the core never
//! branches on the API version except where Karpenter itself behaves differently (recorded in
//! [`ApiGeneration`]).

use std::collections::BTreeMap;
use std::fmt;

use super::requirements::{NodeSelectorRequirement, Requirement, Requirements};
use super::reservation::CapacityReservationTerm;
use super::resources::Resources;
use super::taints::Taint;

/// `expireAfter` when a v1 NodePool template or NodeClaim (or a v1beta1 NodePool) leaves it
/// out: the CRDs' `+kubebuilder:default:="720h"`.
pub const DEFAULT_EXPIRE_AFTER: &str = "720h";

/// Which Karpenter API generation an object came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiGeneration {
    /// `karpenter.sh/v1alpha5` Provisioner + `karpenter.k8s.aws/v1alpha1` AWSNodeTemplate.
    V1Alpha5,
    /// `karpenter.sh/v1beta1` NodePool + `karpenter.k8s.aws/v1beta1` EC2NodeClass.
    V1Beta1,
    /// `karpenter.sh/v1` NodePool + `karpenter.k8s.aws/v1` EC2NodeClass.
    V1,
}

impl fmt::Display for ApiGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApiGeneration::V1Alpha5 => "v1alpha5",
            ApiGeneration::V1Beta1 => "v1beta1",
            ApiGeneration::V1 => "v1",
        })
    }
}

/// Where an object was read from, for error messages (`file.yaml: NodePool/default`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// File path (or `-` for stdin, or `cluster`).
    pub source: String,
    /// Zero-based document index in a multi-document file.
    pub document: usize,
}

/// `nodeClassRef`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NodeClassRef {
    /// API group (`karpenter.k8s.aws`).
    pub group: String,
    /// Kind (`EC2NodeClass`, `AWSNodeTemplate`).
    pub kind: String,
    /// Name.
    pub name: String,
}

impl NodeClassRef {
    /// The API group of EKS Auto Mode's `NodeClass` (`eks.amazonaws.com/v1`).
    pub const EKS_AUTO_MODE_GROUP: &'static str = "eks.amazonaws.com";

    /// Whether it names an EKS Auto Mode `NodeClass`: EKS runs the Karpenter that provisions for
    /// such a pool (docs/karpenter.md §1.5, "EKS Auto Mode").
    pub fn is_eks_auto_mode(&self) -> bool {
        self.group == Self::EKS_AUTO_MODE_GROUP
    }

    /// Whether the AWS provider's Karpenter manages a NodeClaim naming this class (core v1.14.1
    /// `pkg/utils/nodeclaim/nodeclaim.go` `IsManaged`: aws `GetSupportedNodeClasses` is
    /// `EC2NodeClass`; `state/informer/nodeclaim.go` keeps no other): `karpenter.k8s.aws`, or an
    /// empty group (v1beta1 `apiVersion`-less refs, hand-written manifests). Not EKS Auto Mode's
    /// `NodeClass`, whose nodes EKS provisions and disrupts.
    pub fn is_managed_here(&self) -> bool {
        self.group.is_empty() || self.group == "karpenter.k8s.aws"
    }

    /// Whether it names a class of neither the AWS provider nor EKS Auto Mode (e.g. `group:
    /// karpenter.sh`): core v1.14.1 `pkg/utils/nodepool/nodepool.go` `IsManaged` finds its group
    /// among no provider's `GetSupportedNodeClasses`, so Karpenter passes over the pool
    /// (`provisioner.go` `NewScheduler`, `static/provisioning/controller.go` `Reconcile`).
    pub fn is_another_providers(&self) -> bool {
        !self.is_managed_here() && !self.is_eks_auto_mode()
    }
}

/// Kubelet settings that change capacity or that drift compares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KubeletConfig {
    /// `maxPods`.
    pub max_pods: Option<i64>,
    /// `podsPerCore`.
    pub pods_per_core: Option<i64>,
    /// `systemReserved`.
    pub system_reserved: Resources,
    /// `kubeReserved` (overrides the computed defaults key by key).
    pub kube_reserved: Resources,
    /// The `kubeReserved` keys written as zero (`cpu: "0"`): they override the computed default
    /// with 0, which [`Resources`] cannot hold apart from "unset".
    pub kube_reserved_zero: Vec<String>,
    /// `evictionHard` (e.g. `memory.available: 5%`).
    pub eviction_hard: BTreeMap<String, String>,
    /// `evictionSoft` (ignored for capacity, as in Karpenter).
    pub eviction_soft: BTreeMap<String, String>,
    /// `clusterDNS`.
    pub cluster_dns: Vec<String>,
}

/// A disruption budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Budget {
    /// `"10%"` or `"5"`.
    pub nodes: String,
    /// Cron schedule (UTC), with `duration`.
    pub schedule: Option<String>,
    /// How long the budget is active after each schedule hit.
    pub duration: Option<String>,
    /// Reasons it applies to (empty = all).
    pub reasons: Vec<String>,
}

impl Budget {
    /// Its window for people, `"0 9 * * mon-fri" for 8h`, when it has a schedule and a duration.
    pub fn window(&self) -> Option<String> {
        match (&self.schedule, &self.duration) {
            (Some(schedule), Some(duration)) => Some(format!("{schedule:?} for {duration}")),
            _ => None,
        }
    }
}

/// `spec.disruption`, normalised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Disruption {
    /// `WhenEmpty`, `WhenUnderutilized` (v1beta1), `WhenEmptyOrUnderutilized` (v1), or
    /// `Consolidation`/`None` for v1alpha5's `consolidation.enabled`.
    pub consolidation_policy: String,
    /// Duration or `Never`; v1alpha5 `ttlSecondsAfterEmpty` becomes `"<n>s"`.
    pub consolidate_after: Option<String>,
    /// Budgets (default `[{nodes: 10%}]` from v1beta1 on).
    pub budgets: Vec<Budget>,
}

/// A NodePool (or Provisioner), normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodePool {
    /// Name.
    pub name: String,
    /// Generation of the source object.
    pub generation: Option<ApiGeneration>,
    /// Where it came from.
    pub origin: Origin,
    /// Weight (higher first; 0 when unset).
    pub weight: i32,
    /// `template.metadata.labels` (v1alpha5 `spec.labels`).
    pub labels: BTreeMap<String, String>,
    /// `template.metadata.annotations`.
    pub template_annotations: BTreeMap<String, String>,
    /// The object's own annotations (hash annotations among them).
    pub annotations: BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Startup taints (ignored for scheduling).
    pub startup_taints: Vec<Taint>,
    /// Requirements as written, plus the generation's defaults.
    pub requirements: Vec<NodeSelectorRequirement>,
    /// Node class reference (v1alpha5: `providerRef`, or an inline provider named after the
    /// Provisioner).
    pub node_class_ref: Option<NodeClassRef>,
    /// Kubelet configuration (v1alpha5/v1beta1 carry it on the pool; v1 on the class).
    pub kubelet: Option<KubeletConfig>,
    /// `limits`, milli-units per listed resource.
    pub limits: BTreeMap<String, i64>,
    /// Disruption settings.
    pub disruption: Disruption,
    /// Node lifetime (`expireAfter`, v1alpha5 `ttlSecondsUntilExpired`), or `Never`.
    pub expire_after: Option<String>,
    /// `terminationGracePeriod` (v1).
    pub termination_grace_period: Option<String>,
    /// `status.resources` (v1alpha5 limit accounting).
    pub status_resources: Resources,
    /// v1 `spec.replicas` (static pool, ignored by the provisioner).
    pub replicas: Option<i64>,
    /// `metadata.deletionTimestamp` is set: a static pool being deleted is not scaled down.
    pub deleting: bool,
    /// `status.conditions` (v1/v1beta1) as a controller last wrote them; empty when the input
    /// has no status (a manifest from git).
    pub conditions: Vec<Condition>,
    /// `spec` as read (v1/v1beta1; the typed fields, round-tripped to JSON): what Karpenter's
    /// `nodepool-hash` is computed from (`drift::hash`).
    pub raw_spec: Option<serde_json::Value>,
}

impl NodePool {
    /// The pool's scheduling requirements: written requirements, template labels as `In`, and
    /// the pool's own label (`karpenter.sh/nodepool` or `karpenter.sh/provisioner-name`), plus
    /// the node class label (docs/karpenter.md §6.2).
    pub fn scheduling_requirements(&self) -> Requirements {
        let mut reqs = Requirements::from_selectors(&self.requirements);
        for (k, v) in &self.labels {
            reqs.add(Requirement::single(k, v));
        }
        reqs.add(Requirement::single(self.owner_label(), &self.name));
        if let Some(class) = &self.node_class_ref {
            if self.generation != Some(ApiGeneration::V1Alpha5) {
                reqs.add(Requirement::single(
                    super::labels::EC2NODECLASS,
                    &class.name,
                ));
            }
        }
        reqs
    }

    /// The label Karpenter puts on this pool's nodes to name it.
    pub fn owner_label(&self) -> &'static str {
        if self.generation == Some(ApiGeneration::V1Alpha5) {
            super::labels::PROVISIONER_NAME
        } else {
            super::labels::NODEPOOL
        }
    }

    /// `Provisioner` for v1alpha5, `NodePool` otherwise.
    pub fn kind(&self) -> &'static str {
        if self.generation == Some(ApiGeneration::V1Alpha5) {
            "Provisioner"
        } else {
            "NodePool"
        }
    }
}

/// An AMI selector term (v1beta1/v1; v1alpha1 `amiSelector` is converted to terms).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AmiSelectorTerm {
    /// `family@version` (v1).
    pub alias: Option<String>,
    /// AMI id.
    pub id: Option<String>,
    /// Name filter.
    pub name: Option<String>,
    /// Owner filter.
    pub owner: Option<String>,
    /// Tag filters (`*` = key exists).
    pub tags: BTreeMap<String, String>,
    /// SSM parameter holding an AMI id.
    pub ssm_parameter: Option<String>,
}

/// A subnet or security-group selector term.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectorTerm {
    /// Resource id.
    pub id: Option<String>,
    /// Security-group name.
    pub name: Option<String>,
    /// Tag filters (`*` = key exists).
    pub tags: BTreeMap<String, String>,
}

/// One block device mapping: what capacity needs (root flag, size) and what the launch
/// template carries (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go`
/// `blockDeviceMappings`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockDevice {
    /// `/dev/xvda`, …
    pub device_name: Option<String>,
    /// `rootVolume: true`.
    pub root_volume: bool,
    /// Volume size in milli-bytes.
    pub volume_size: Option<i64>,
    /// The rest of its `ebs`.
    pub ebs: EbsVolume,
}

impl BlockDevice {
    /// The launch template's `VolumeSize`: GiB, rounded up (`launchtemplate.go` `volumeSize`).
    pub fn volume_size_gib(&self) -> Option<i64> {
        const GIB_MILLI: i64 = 1000 << 30;
        self.volume_size
            .map(|m| (m + GIB_MILLI - 1).div_euclid(GIB_MILLI))
    }
}

/// A block device's EBS settings other than its size, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EbsVolume {
    /// `deleteOnTermination`.
    pub delete_on_termination: Option<bool>,
    /// `encrypted`.
    pub encrypted: Option<bool>,
    /// `iops`.
    pub iops: Option<i64>,
    /// `kmsKeyID`.
    pub kms_key_id: Option<String>,
    /// `snapshotID`.
    pub snapshot_id: Option<String>,
    /// `throughput`.
    pub throughput: Option<i64>,
    /// `volumeInitializationRate`.
    pub volume_initialization_rate: Option<i64>,
    /// `volumeType`.
    pub volume_type: Option<String>,
}

/// `metadataOptions` (IMDS), after the CRD's defaults where the CRD has them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataOptions {
    /// `httpEndpoint`.
    pub http_endpoint: Option<String>,
    /// `httpProtocolIPv6`.
    pub http_protocol_ipv6: Option<String>,
    /// `httpPutResponseHopLimit`.
    pub http_put_response_hop_limit: Option<i64>,
    /// `httpTokens`.
    pub http_tokens: Option<String>,
}

/// An AMI in a node class's status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AmiStatus {
    /// AMI id.
    pub id: String,
    /// AMI name.
    pub name: Option<String>,
    /// Requirements the AMI applies to.
    pub requirements: Vec<NodeSelectorRequirement>,
    /// Deprecated flag (v1).
    pub deprecated: bool,
}

/// A subnet of a node class status (`status.subnets[]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusSubnet {
    /// Subnet id.
    pub id: String,
    /// Availability zone name.
    pub zone: String,
    /// Availability zone id (`use1-az4`), when the status gives one (`zoneID`, v1beta1 and v1).
    pub zone_id: Option<String>,
}

/// A node class status: what the controller last resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeClassStatus {
    /// `status.subnets`.
    pub subnets: Vec<StatusSubnet>,
    /// `(group id, name)`.
    pub security_groups: Vec<(String, String)>,
    /// Resolved AMIs.
    pub amis: Vec<AmiStatus>,
    /// Instance profile.
    pub instance_profile: Option<String>,
    /// `status.capacityReservations` (v1): what the controller last resolved the class's
    /// `capacityReservationSelectorTerms` to. `None` when the status does not have the field
    /// (no controller wrote it, or a manifest from git), which is not the same as `[]`.
    pub capacity_reservations: Option<Vec<ReservationStatus>>,
    /// `status.conditions` (v1beta1/v1; `Ready` among them).
    pub conditions: Vec<Condition>,
}

/// A status condition (`status.conditions[]`) as a controller wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Condition {
    /// `type` (`Ready`, `NodeClassReady`, …).
    pub type_: String,
    /// `status`.
    pub status: ConditionStatus,
    /// `reason` (empty when absent).
    pub reason: String,
    /// `message` (empty when absent).
    pub message: String,
    /// `observedGeneration`: the object generation the controller judged (absent when the
    /// manifest does not say).
    pub observed_generation: Option<i64>,
}

/// A condition's `status`: `True`, `False`, or anything else (`Unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`, or a value Kubernetes does not define.
    #[default]
    Unknown,
}

/// One entry of `EC2NodeClass.status.capacityReservations`, as far as drift needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReservationStatus {
    /// `cr-…`.
    pub id: String,
    /// Instance type.
    pub instance_type: String,
    /// Zone.
    pub zone: String,
}

/// An EC2NodeClass, AWSNodeTemplate or inline `spec.provider`, normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeClass {
    /// Name (for an inline provider: the Provisioner's name).
    pub name: String,
    /// `EC2NodeClass`, `AWSNodeTemplate`, or `Provisioner` for an inline provider.
    pub kind: String,
    /// Generation.
    pub generation: Option<ApiGeneration>,
    /// Where it came from.
    pub origin: Origin,
    /// Annotations (hash annotations among them).
    pub annotations: BTreeMap<String, String>,
    /// `amiFamily` (defaulted: v1alpha1 AL2; v1 from the alias).
    pub ami_family: Option<String>,
    /// AMI selector terms.
    pub ami_selector_terms: Vec<AmiSelectorTerm>,
    /// Subnet selector terms.
    pub subnet_selector_terms: Vec<SelectorTerm>,
    /// Security-group selector terms.
    pub security_group_selector_terms: Vec<SelectorTerm>,
    /// `capacityReservationSelectorTerms` (v1, AWS provider v1.3+): the reservations whose
    /// capacity the class may launch into. Empty: no reserved capacity.
    pub capacity_reservation_selector_terms: Vec<CapacityReservationTerm>,
    /// v1alpha1 map-form selectors as written (`amiSelector`, `subnetSelector`,
    /// `securityGroupSelector`), kept because their comma-splitting rules differ from v1's.
    pub legacy_selectors: BTreeMap<String, BTreeMap<String, String>>,
    /// IAM role.
    pub role: Option<String>,
    /// Instance profile.
    pub instance_profile: Option<String>,
    /// User data.
    pub user_data: Option<String>,
    /// Extra tags.
    pub tags: BTreeMap<String, String>,
    /// Block device mappings.
    pub block_devices: Vec<BlockDevice>,
    /// `instanceStorePolicy` (`RAID0`).
    pub instance_store_policy: Option<String>,
    /// `metadataOptions`: v1beta1/v1 with the CRD's per-field defaults, v1alpha1 as written
    /// (`None` when absent).
    pub metadata_options: Option<MetadataOptions>,
    /// `detailedMonitoring`.
    pub detailed_monitoring: Option<bool>,
    /// `context`: the EC2 Context sent with CreateFleet (`aws v1.14.1:
    /// pkg/providers/instance/instance.go` `launchInstance`).
    pub context: Option<String>,
    /// `cpuOptions.nestedVirtualization` (v1): `enabled` / `disabled`.
    pub nested_virtualization: Option<String>,
    /// Kubelet settings (v1).
    pub kubelet: Option<KubeletConfig>,
    /// User launch template name (v1alpha1/v1beta1 compat): disables AMI/SG drift.
    pub launch_template: Option<String>,
    /// Status as last written by a controller.
    pub status: NodeClassStatus,
    /// `metadata.deletionTimestamp` is set: its NodePools are not ready
    /// (`NodeClassReady=False`, reason `NodeClassTerminating`).
    pub deleting: bool,
    /// `metadata.generation` (v1; absent when the manifest does not say): with its `Ready`
    /// condition's `observedGeneration`, whether the status was reconciled against this spec.
    pub metadata_generation: Option<i64>,
    /// `spec` as read (the typed fields, round-tripped to JSON): what Karpenter's
    /// `ec2nodeclass-hash` is computed from (`drift::hash`).
    pub raw_spec: Option<serde_json::Value>,
}

/// One entry of an EC2NodeClass's `spec.networkInterfaces` (v1; `aws v1.14.1:
/// pkg/apis/v1/ec2nodeclass.go` `NetworkInterface`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkInterface {
    /// `networkCardIndex`.
    pub network_card_index: i64,
    /// `deviceIndex`.
    pub device_index: i64,
    /// `interfaceType: efa-only` (else `interface`).
    pub efa_only: bool,
}

impl NodeClass {
    /// `spec.networkInterfaces`, when the class sets it (`None`: unset, the AWS default of one
    /// interface per instance).
    pub fn network_interfaces(&self) -> Option<Vec<NetworkInterface>> {
        let list = self
            .raw_spec
            .as_ref()?
            .get("networkInterfaces")?
            .as_array()?;
        Some(
            list.iter()
                .map(|n| NetworkInterface {
                    network_card_index: n
                        .get("networkCardIndex")
                        .and_then(|v| v.as_i64())
                        .unwrap_or(0),
                    device_index: n.get("deviceIndex").and_then(|v| v.as_i64()).unwrap_or(0),
                    efa_only: n.get("interfaceType").and_then(|v| v.as_str()) == Some("efa-only"),
                })
                .collect(),
        )
    }
}
