//! `karpenter.sh/v1beta1` NodePool/NodeClaim and `karpenter.k8s.aws/v1beta1` EC2NodeClass
//! (Karpenter v0.32–v0.37, docs/karpenter.md §1.3–§1.4).
//!
//! Defaults are the CRD's: `consolidationPolicy: WhenUnderutilized`, `expireAfter: 720h`,
//! budgets `[{nodes: 10%}]`. There are no requirement defaults in this generation: an empty list
//! means every architecture, OS and capacity type.

use serde::{Deserialize, Serialize};

use super::error::{object_name, Ctx, InputError, Location};
use super::launch_options::{self, MetadataCrd};
use super::meta::{
    AmiSelectorTermSpec, BlockDeviceMappingSpec, BudgetSpec, Condition, KubeletConfiguration,
    NodeClaimStatusSpec, NodeClassRefSpec, NodeClassStatusSpec, ObjectMeta, RequirementSpec,
    ResourceList, ResourceRequirementsSpec, SelectorTermSpec, StringMap, TaintSpec,
    TemplateMetadata,
};
use super::validate::{self, CLASSIC_OPERATORS};
use super::{nodeclass, nodepool};
use crate::disruption::time::Schedule;
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, Disruption, NodeClass, Origin, DEFAULT_EXPIRE_AFTER};

/// A v1beta1 NodePool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// `karpenter.sh/v1beta1`.
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

/// A v1beta1 NodeClaim spec (also the NodePool template's).
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
    /// Resource requests (unused on NodePools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// Kubelet settings (moved to the EC2NodeClass in v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// `{apiVersion, kind, name}` of the node class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassRefSpec>,
}

/// `spec.disruption`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisruptionSpec {
    /// `WhenEmpty` or `WhenUnderutilized` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation_policy: Option<String>,
    /// Duration or `Never`; only with `WhenEmpty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidate_after: Option<String>,
    /// Node lifetime (default `720h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<String>,
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
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// A v1beta1 NodeClaim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaim {
    /// `karpenter.sh/v1beta1`.
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

/// A v1beta1 EC2NodeClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2NodeClass {
    /// `karpenter.k8s.aws/v1beta1`.
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

/// `EC2NodeClass.spec` (v1beta1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2NodeClassSpec {
    /// Subnet terms (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_selector_terms: Option<Vec<SelectorTermSpec>>,
    /// Security-group terms (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_selector_terms: Option<Vec<SelectorTermSpec>>,
    /// AMI terms (optional; required for `Custom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_selector_terms: Option<Vec<AmiSelectorTermSpec>>,
    /// AMI family (required).
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
    /// IMDS options (default `{enabled, disabled, hop limit 2, required}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<serde_json::Value>,
    /// Security context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Ubuntu",
    "Custom",
    "Windows2019",
    "Windows2022",
];
const RESTRICTED_TAGS: &[&str] = &[
    labels::MANAGED_BY,
    labels::NODEPOOL,
    labels::NODECLAIM,
    labels::EC2NODECLASS,
];

impl NodePool {
    /// Normalises with the v1beta1 defaults.
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
        // The v1beta1 CRD's `resources: {maxProperties: 0}` (core v0.37.7
        // pkg/apis/crds/karpenter.sh_nodepools.yaml; the webhook's `NodeClaimTemplate.validate`
        // refuses it too, `ErrDisallowedFields`): such a pool was never in a cluster. Fields the
        // CRD does not know (`limits`) are pruned before the count, as the API server does.
        if tspec
            .resources
            .as_ref()
            .is_some_and(|r| r.requests.is_some())
        {
            return Err(ctx.invalid(
                "spec.template.spec.resources",
                "Too many: 1: must have at most 0 items (a v1beta1 NodePool's template takes no resources)",
            ));
        }
        let t = nodepool::template(
            &ctx,
            template.metadata.as_ref(),
            tspec.taints.as_deref(),
            tspec.startup_taints.as_deref(),
            tspec.requirements.as_deref(),
            CLASSIC_OPERATORS,
            false,
        )?;
        let node_class_ref = nodepool::node_class_ref(&ctx, tspec.node_class_ref.as_ref())?;
        let kubelet = tspec
            .kubelet
            .as_ref()
            .map(|k| {
                validate::kubelet_crd_rules(&ctx, "spec.template.spec.kubelet", k, false)?;
                validate::kubelet(&ctx, "spec.template.spec.kubelet", k)
            })
            .transpose()?;

        let d = spec.disruption.clone().unwrap_or_default();
        let policy = d
            .consolidation_policy
            .clone()
            .unwrap_or_else(|| "WhenUnderutilized".into());
        if !matches!(policy.as_str(), "WhenEmpty" | "WhenUnderutilized") {
            return Err(ctx.invalid(
                "spec.disruption.consolidationPolicy",
                format!("unknown policy {policy:?} (expected WhenEmpty or WhenUnderutilized)"),
            ));
        }
        let consolidate_after = d
            .consolidate_after
            .as_deref()
            .map(|c| validate::duration(&ctx, "spec.disruption.consolidateAfter", c, true))
            .transpose()?;
        match (policy.as_str(), consolidate_after.as_deref()) {
            ("WhenEmpty", None) => {
                return Err(ctx.invalid(
                    "spec.disruption.consolidateAfter",
                    "required with consolidationPolicy: WhenEmpty",
                ))
            }
            ("WhenUnderutilized", Some(c)) if c != "Never" => {
                return Err(ctx.invalid(
                    "spec.disruption.consolidateAfter",
                    "cannot be combined with consolidationPolicy: WhenUnderutilized",
                ))
            }
            _ => {}
        }
        let expire_after = validate::duration(
            &ctx,
            "spec.disruption.expireAfter",
            d.expire_after.as_deref().unwrap_or(DEFAULT_EXPIRE_AFTER),
            true,
        )?;
        let budgets =
            validate::budgets(&ctx, "spec.disruption.budgets", d.budgets.as_deref(), false)?;
        // The v1beta1 webhook parses each schedule (`core v0.37.7: pkg/apis/v1beta1/
        // nodepool_validation.go` `Budget.validate`, `cron.ParseStandard`): `@dailyfoo`, six
        // fields or a minute of 61 pass the CRD's pattern and are refused there. A `TZ=` or
        // `CRON_TZ=` prefix, which robfig reads and `disruption::time` does not, is left to it.
        for (i, b) in d.budgets.iter().flatten().enumerate() {
            let zoned = |t: &str| t.starts_with("TZ=") || t.starts_with("CRON_TZ=");
            if let Some(text) = b.schedule.as_deref().filter(|t| !zoned(t)) {
                Schedule::parse(text).map_err(|e| {
                    ctx.invalid(
                        format!("spec.disruption.budgets[{i}].schedule"),
                        e.to_string(),
                    )
                })?;
            }
        }
        let limits = match &spec.limits {
            Some(l) => validate::milli_map(&ctx, "spec.limits", l)?,
            None => Default::default(),
        };
        Ok(crate::model::nodepool::NodePool {
            name,
            generation: Some(ApiGeneration::V1Beta1),
            origin: origin.clone(),
            weight: validate::weight(&ctx, "spec.weight", spec.weight)?,
            labels: t.labels,
            template_annotations: t.annotations,
            annotations: self.metadata.annotations.clone().unwrap_or_default(),
            taints: t.taints,
            startup_taints: t.startup_taints,
            requirements: t.requirements,
            node_class_ref: Some(node_class_ref),
            kubelet,
            limits,
            disruption: Disruption {
                consolidation_policy: policy,
                consolidate_after,
                budgets,
            },
            expire_after: Some(expire_after),
            termination_grace_period: None,
            status_resources: validate::resources(
                &ctx,
                "status.resources",
                self.status.as_ref().and_then(|s| s.resources.as_ref()),
            )?,
            replicas: None,
            deleting: self.metadata.deletion_timestamp.is_some(),
            conditions: super::nodepool::conditions(
                self.status.as_ref().and_then(|s| s.conditions.as_deref()),
            ),
            raw_spec: serde_json::to_value(&spec).ok(),
        })
    }
}

impl Ec2NodeClass {
    /// Normalises a v1beta1 EC2NodeClass.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClass, InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(at, object_name("EC2NodeClass", None, Some(&name)));
        let spec = self.spec.clone().unwrap_or_default();
        let family = spec.ami_family.clone().ok_or_else(|| {
            ctx.invalid(
                "spec.amiFamily",
                format!("required (expected {})", AMI_FAMILIES.join(", ")),
            )
        })?;
        nodeclass::check_family(&ctx, "spec.amiFamily", &family, AMI_FAMILIES)?;
        let ami_terms = nodeclass::ami_terms(
            &ctx,
            "spec.amiSelectorTerms",
            spec.ami_selector_terms.as_deref().unwrap_or_default(),
            false,
        )?;
        if family == "Custom" && ami_terms.is_empty() {
            return Err(ctx.invalid("spec.amiSelectorTerms", "required when amiFamily is Custom"));
        }
        let (subnets, groups) = required_terms(
            &ctx,
            &spec.subnet_selector_terms,
            &spec.security_group_selector_terms,
        )?;
        exactly_one_identity(&ctx, &spec.role, &spec.instance_profile)?;
        let tags = spec.tags.clone().unwrap_or_default();
        nodeclass::check_tags(&ctx, "spec.tags", &tags, RESTRICTED_TAGS)?;
        // The same enums and hop-limit range in v0.37.8's CRD.
        let metadata_options = launch_options::metadata_options(
            &ctx,
            "spec.metadataOptions",
            spec.metadata_options.as_ref(),
            MetadataCrd::Checked { hop_limit: 2 },
        )?;
        Ok(NodeClass {
            name,
            kind: "EC2NodeClass".into(),
            generation: Some(ApiGeneration::V1Beta1),
            origin: origin.clone(),
            annotations: self.metadata.annotations.clone().unwrap_or_default(),
            ami_family: Some(family),
            ami_selector_terms: ami_terms,
            subnet_selector_terms: subnets,
            security_group_selector_terms: groups,
            capacity_reservation_selector_terms: Vec::new(),
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
            nested_virtualization: None,
            kubelet: None,
            launch_template: None,
            status: match &self.status {
                Some(s) => nodeclass::status(&ctx, "status", s)?,
                None => Default::default(),
            },
            deleting: self.metadata.deletion_timestamp.is_some(),
            metadata_generation: None,
            raw_spec: serde_json::to_value(&spec).ok(),
        })
    }
}

/// Subnet and security-group terms, both required and non-empty from v1beta1 on.
pub(crate) fn required_terms(
    ctx: &Ctx,
    subnets: &Option<Vec<SelectorTermSpec>>,
    groups: &Option<Vec<SelectorTermSpec>>,
) -> Result<
    (
        Vec<crate::model::nodepool::SelectorTerm>,
        Vec<crate::model::nodepool::SelectorTerm>,
    ),
    InputError,
> {
    let get = |path: &str, terms: &Option<Vec<SelectorTermSpec>>| match terms.as_deref() {
        Some(t) if !t.is_empty() => nodeclass::selector_terms(ctx, path, t),
        _ => Err(ctx.invalid(path, "required: at least one term")),
    };
    Ok((
        get("spec.subnetSelectorTerms", subnets)?,
        get("spec.securityGroupSelectorTerms", groups)?,
    ))
}

/// Exactly one of `role` and `instanceProfile`.
pub(crate) fn exactly_one_identity(
    ctx: &Ctx,
    role: &Option<String>,
    profile: &Option<String>,
) -> Result<(), InputError> {
    match (role.as_deref(), profile.as_deref()) {
        (Some(""), _) => Err(ctx.invalid("spec.role", "cannot be empty")),
        (_, Some("")) => Err(ctx.invalid("spec.instanceProfile", "cannot be empty")),
        (Some(_), Some(_)) => Err(ctx.invalid("spec", "set only one of role and instanceProfile")),
        (None, None) => Err(ctx.invalid("spec", "one of role or instanceProfile is required")),
        _ => Ok(()),
    }
}

/// `instanceStorePolicy` is `RAID0` or absent.
pub(crate) fn instance_store_policy(
    ctx: &Ctx,
    policy: Option<&str>,
) -> Result<Option<String>, InputError> {
    match policy {
        None => Ok(None),
        Some("RAID0") => Ok(Some("RAID0".into())),
        Some(p) => Err(ctx.invalid(
            "spec.instanceStorePolicy",
            format!("unknown policy {p:?} (expected RAID0)"),
        )),
    }
}
