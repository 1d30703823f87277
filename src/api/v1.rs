//! `karpenter.sh/v1` NodePool/NodeClaim and `karpenter.k8s.aws/v1` EC2NodeClass (Karpenter
//! v1.0 and later, docs/karpenter.md §1.5).
//!
//! Defaults are the CRD's: `consolidationPolicy: WhenEmptyOrUnderutilized`,
//! `consolidateAfter: 0s`, `expireAfter: 720h` (moved into the template), budgets
//! `[{nodes: 10%}]`. `amiFamily` may be omitted when an alias names the family.

use serde::{Deserialize, Serialize};

use super::error::{object_name, Ctx, InputError, Location};
use super::launch_options::{self, MetadataCrd};
use super::meta::{
    AmiSelectorTermSpec, BlockDeviceMappingSpec, BudgetSpec, Condition, KubeletConfiguration,
    NodeClaimStatusSpec, NodeClassRefSpec, NodeClassStatusSpec, ObjectMeta, RequirementSpec,
    ResourceList, ResourceRequirementsSpec, SelectorTermSpec, StringMap, TaintSpec,
    TemplateMetadata,
};
use super::v1beta1::{exactly_one_identity, instance_store_policy, required_terms};
use super::validate::{self, NODEPOOL_OPERATORS_V1};
use super::{nodeclass, nodepool};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, Disruption, NodeClass, Origin, DEFAULT_EXPIRE_AFTER};

/// Most NodeClaims one static NodePool's `spec.replicas` may ask for: far above any real cluster,
/// low enough that a typo like `replicas: 1000000` fails fast (s30-fuzz2: a million static
/// replicas planned for minutes and took 17 GB) instead of eating the machine's memory, as
/// `MAX_EXPANDED_PODS` caps workloads.
pub const MAX_STATIC_REPLICAS: i64 = 100_000;

/// A v1 NodePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// `karpenter.sh/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `NodePool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodePoolSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodePoolStatus>,
}

/// `NodePool.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSpec {
    /// The NodeClaim template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<NodeClaimTemplate>,
    /// Disruption settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption: Option<DisruptionSpec>,
    /// Ceiling on the sum of node capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceList>,
    /// Weight (1–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
    /// Static node count (newer releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
}

/// `spec.template`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplate {
    /// Labels and annotations for the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMetadata>,
    /// The NodeClaim spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodeClaimSpec>,
}

/// A v1 NodeClaim spec (also the NodePool template's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimSpec {
    /// Taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<TaintSpec>>,
    /// Startup taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_taints: Option<Vec<TaintSpec>>,
    /// Requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<RequirementSpec>>,
    /// Resource requests (NodeClaims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// `{group, kind, name}` of the node class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassRefSpec>,
    /// Node lifetime (default `720h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<String>,
    /// Drain deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period: Option<String>,
}

/// `spec.disruption`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisruptionSpec {
    /// `WhenEmptyOrUnderutilized` (default), `WhenEmpty`, `Balanced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation_policy: Option<String>,
    /// Duration or `Never` (default `0s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidate_after: Option<String>,
    /// Budgets (default `[{nodes: 10%}]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<BudgetSpec>>,
}

/// `NodePool.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// Sum of the capacity of the pool's nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceList>,
    /// Node count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<i64>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// A v1 NodeClaim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaim {
    /// `karpenter.sh/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `NodeClaim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodeClaimSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeClaimStatusSpec>,
}

/// A v1 EC2NodeClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2NodeClass {
    /// `karpenter.k8s.aws/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `EC2NodeClass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Ec2NodeClassSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeClassStatusSpec>,
}

/// `EC2NodeClass.spec` (v1). Fields this tool does not interpret are kept as JSON so they
/// survive a round trip.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2NodeClassSpec {
    /// Subnet terms (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_selector_terms: Option<Vec<SelectorTermSpec>>,
    /// Security-group terms (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_selector_terms: Option<Vec<SelectorTermSpec>>,
    /// AMI terms (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_selector_terms: Option<Vec<AmiSelectorTermSpec>>,
    /// AMI family (optional with an alias).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_family: Option<String>,
    /// User data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// IAM role (exclusive with `instanceProfile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Instance profile (exclusive with `role`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// Extra tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<StringMap>,
    /// Kubelet settings (moved here from the NodePool in v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// Block devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_device_mappings: Option<Vec<BlockDeviceMappingSpec>>,
    /// `RAID0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_store_policy: Option<String>,
    /// Detailed monitoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detailed_monitoring: Option<bool>,
    /// Public IP association.
    #[serde(
        default,
        rename = "associatePublicIPAddress",
        skip_serializing_if = "Option::is_none"
    )]
    pub associate_public_ip_address: Option<bool>,
    /// IMDS options (default `{enabled, disabled, hop limit 1, required}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<serde_json::Value>,
    /// Security context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Network interfaces (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_interfaces: Option<serde_json::Value>,
    /// Capacity reservation terms (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_selector_terms: Option<serde_json::Value>,
    /// Placement group (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group_selector: Option<serde_json::Value>,
    /// IP prefix count (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_prefix_count: Option<serde_json::Value>,
    /// Connection tracking (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_tracking: Option<serde_json::Value>,
    /// CPU options (passed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_options: Option<serde_json::Value>,
}

const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Custom",
    "Windows2019",
    "Windows2022",
    "Windows2025",
];
const RESTRICTED_TAGS: &[&str] = &[
    labels::EKS_CLUSTER_NAME_TAG,
    labels::NODEPOOL,
    labels::NODECLAIM,
    labels::EC2NODECLASS,
];

impl NodePool {
    /// Normalises with the v1 defaults.
    pub fn to_model(
        &self,
        at: &Location,
        origin: &Origin,
    ) -> Result<crate::model::nodepool::NodePool, InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(at, object_name("NodePool", None, Some(&name)));
        let spec = self.spec.clone().unwrap_or_default();
        let template = spec
            .template
            .as_ref()
            .ok_or_else(|| ctx.invalid("spec.template", "required"))?;
        let tspec = template.spec.clone().unwrap_or_default();
        let t = nodepool::template(
            &ctx,
            template.metadata.as_ref(),
            tspec.taints.as_deref(),
            tspec.startup_taints.as_deref(),
            tspec.requirements.as_deref(),
            NODEPOOL_OPERATORS_V1,
            true,
        )?;
        // v1 requires all three (the CRD's `required: [group, kind, name]`); v1beta1 defaulted
        // the kind and read the group from an optional apiVersion.
        if let Some(r) = &tspec.node_class_ref {
            for (field, value) in [("group", &r.group), ("kind", &r.kind)] {
                if value.as_deref().is_none_or(str::is_empty) {
                    return Err(ctx.invalid(
                        format!("spec.template.spec.nodeClassRef.{field}"),
                        "required in karpenter.sh/v1 (e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default})",
                    ));
                }
            }
        }
        let node_class_ref = nodepool::node_class_ref(&ctx, tspec.node_class_ref.as_ref())?;
        let expire_after = validate::duration(
            &ctx,
            "spec.template.spec.expireAfter",
            tspec
                .expire_after
                .as_deref()
                .unwrap_or(DEFAULT_EXPIRE_AFTER),
            true,
        )?;
        let termination_grace_period = tspec
            .termination_grace_period
            .as_deref()
            .map(|d| {
                validate::duration(&ctx, "spec.template.spec.terminationGracePeriod", d, false)
            })
            .transpose()?;

        let d = spec.disruption.clone().unwrap_or_default();
        let policy = d
            .consolidation_policy
            .clone()
            .unwrap_or_else(|| "WhenEmptyOrUnderutilized".into());
        if !matches!(
            policy.as_str(),
            "WhenEmpty" | "WhenEmptyOrUnderutilized" | "Balanced"
        ) {
            return Err(ctx.invalid(
                "spec.disruption.consolidationPolicy",
                format!("unknown policy {policy:?} (expected WhenEmpty, WhenEmptyOrUnderutilized or Balanced)"),
            ));
        }
        let budgets =
            validate::budgets(&ctx, "spec.disruption.budgets", d.budgets.as_deref(), true)?;
        // Checked after the fields written, whose errors come first. The CRD defaults
        // `disruption` to `{consolidateAfter: 0s}` only when it is absent; a
        // written `disruption` must name `consolidateAfter` (`required: [consolidateAfter]`,
        // core v1.14.1: pkg/apis/crds/karpenter.sh_nodepools.yaml).
        let consolidate_after = match (&spec.disruption, d.consolidate_after.as_deref()) {
            (Some(_), None) => {
                return Err(ctx.invalid(
                    "spec.disruption.consolidateAfter",
                    "required when spec.disruption is written (e.g. consolidateAfter: 0s)",
                ))
            }
            (_, after) => validate::duration(
                &ctx,
                "spec.disruption.consolidateAfter",
                after.unwrap_or("0s"),
                true,
            )?,
        };
        let limits = match &spec.limits {
            Some(l) => validate::milli_map(&ctx, "spec.limits", l)?,
            None => Default::default(),
        };
        if let Some(r) = spec.replicas {
            if r < 0 {
                return Err(ctx.invalid("spec.replicas", format!("must not be negative, got {r}")));
            }
            if r > MAX_STATIC_REPLICAS {
                return Err(ctx.invalid(
                    "spec.replicas",
                    format!(
                        "{r} NodeClaims is more than this tool plans for one static NodePool ({})",
                        MAX_STATIC_REPLICAS
                    ),
                ));
            }
            if spec.weight.is_some() {
                return Err(ctx.invalid(
                    "spec.weight",
                    "not supported on static NodePools (spec.replicas is set)",
                ));
            }
            if let Some(k) = limits.keys().find(|k| *k != "nodes") {
                return Err(ctx.invalid(
                    validate::key_path("spec.limits", k),
                    "only limits.nodes is supported on static NodePools (spec.replicas is set)",
                ));
            }
        }
        Ok(crate::model::nodepool::NodePool {
            name,
            generation: Some(ApiGeneration::V1),
            origin: origin.clone(),
            weight: validate::weight(&ctx, "spec.weight", spec.weight)?,
            labels: t.labels,
            template_annotations: t.annotations,
            annotations: self.metadata.annotations.clone().unwrap_or_default(),
            taints: t.taints,
            startup_taints: t.startup_taints,
            requirements: t.requirements,
            node_class_ref: Some(node_class_ref),
            kubelet: None,
            limits,
            disruption: Disruption {
                consolidation_policy: policy,
                consolidate_after: Some(consolidate_after),
                budgets,
            },
            expire_after: Some(expire_after),
            termination_grace_period,
            status_resources: validate::resources(
                &ctx,
                "status.resources",
                self.status.as_ref().and_then(|s| s.resources.as_ref()),
            )?,
            replicas: spec.replicas,
            deleting: self.metadata.deletion_timestamp.is_some(),
            conditions: super::nodepool::conditions(
                self.status.as_ref().and_then(|s| s.conditions.as_deref()),
            ),
            raw_spec: serde_json::to_value(&spec).ok(),
        })
    }
}

impl Ec2NodeClass {
    /// Normalises a v1 EC2NodeClass, deriving `amiFamily` from an alias when absent.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClass, InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(at, object_name("EC2NodeClass", None, Some(&name)));
        let spec = self.spec.clone().unwrap_or_default();
        let ami_terms = match spec.ami_selector_terms.as_deref() {
            Some(t) if !t.is_empty() => {
                nodeclass::ami_terms(&ctx, "spec.amiSelectorTerms", t, true)?
            }
            _ => {
                return Err(ctx.invalid(
                    "spec.amiSelectorTerms",
                    "required: at least one term (e.g. - alias: al2023@latest)",
                ))
            }
        };
        let alias_family = ami_terms
            .iter()
            .find_map(|t| t.alias.as_deref())
            .and_then(nodeclass::alias_family);
        let family = match (spec.ami_family.as_deref(), alias_family) {
            (Some(f), alias) => {
                nodeclass::check_family(&ctx, "spec.amiFamily", f, AMI_FAMILIES)?;
                if let Some(a) = alias {
                    if f != a && f != "Custom" {
                        return Err(ctx.invalid(
                            "spec.amiFamily",
                            format!("{f:?} conflicts with the alias family {a:?} (use {a:?}, Custom, or omit amiFamily)"),
                        ));
                    }
                }
                f.to_string()
            }
            (None, Some(a)) => a.to_string(),
            (None, None) => {
                return Err(ctx.invalid(
                    "spec.amiFamily",
                    format!(
                        "required when amiSelectorTerms has no alias (expected {})",
                        AMI_FAMILIES.join(", ")
                    ),
                ))
            }
        };
        let (subnets, groups) = required_terms(
            &ctx,
            &spec.subnet_selector_terms,
            &spec.security_group_selector_terms,
        )?;
        exactly_one_identity(&ctx, &spec.role, &spec.instance_profile)?;
        let tags = spec.tags.clone().unwrap_or_default();
        nodeclass::check_tags(&ctx, "spec.tags", &tags, RESTRICTED_TAGS)?;
        let metadata_options = launch_options::metadata_options(
            &ctx,
            "spec.metadataOptions",
            spec.metadata_options.as_ref(),
            MetadataCrd::Checked { hop_limit: 1 },
        )?;
        launch_options::v1(
            &ctx,
            spec.network_interfaces.as_ref(),
            spec.connection_tracking.as_ref(),
            spec.cpu_options.as_ref(),
            spec.placement_group_selector.as_ref(),
            spec.ip_prefix_count.as_ref(),
        )?;
        Ok(NodeClass {
            name,
            kind: "EC2NodeClass".into(),
            generation: Some(ApiGeneration::V1),
            origin: origin.clone(),
            annotations: self.metadata.annotations.clone().unwrap_or_default(),
            ami_family: Some(family),
            ami_selector_terms: ami_terms,
            subnet_selector_terms: subnets,
            security_group_selector_terms: groups,
            capacity_reservation_selector_terms: super::reservation::terms(
                &ctx,
                "spec.capacityReservationSelectorTerms",
                spec.capacity_reservation_selector_terms.as_ref(),
            )?,
            legacy_selectors: Default::default(),
            role: spec.role.clone(),
            instance_profile: spec.instance_profile.clone(),
            user_data: spec.user_data.clone(),
            tags,
            block_devices: nodeclass::block_devices(
                &ctx,
                "spec.blockDeviceMappings",
                spec.block_device_mappings.as_deref(),
                true,
            )?,
            instance_store_policy: instance_store_policy(
                &ctx,
                spec.instance_store_policy.as_deref(),
            )?,
            metadata_options,
            detailed_monitoring: spec.detailed_monitoring,
            context: spec.context.clone(),
            nested_virtualization: spec
                .cpu_options
                .as_ref()
                .and_then(|c| c.get("nestedVirtualization"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            kubelet: spec
                .kubelet
                .as_ref()
                .map(|k| {
                    validate::kubelet_crd_rules(&ctx, "spec.kubelet", k, false)?;
                    validate::kubelet(&ctx, "spec.kubelet", k)
                })
                .transpose()?,
            launch_template: None,
            status: match &self.status {
                Some(s) => nodeclass::status(&ctx, "status", s)?,
                None => Default::default(),
            },
            deleting: self.metadata.deletion_timestamp.is_some(),
            metadata_generation: self.metadata.generation,
            raw_spec: serde_json::to_value(&spec).ok(),
        })
    }
}
