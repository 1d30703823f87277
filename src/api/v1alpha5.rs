//! `karpenter.sh/v1alpha5` Provisioner and Machine, and `karpenter.k8s.aws/v1alpha1`
//! AWSNodeTemplate (Karpenter v0.21–v0.32, docs/karpenter.md §1.1–§1.2).
//!
//! Provisioners get the AWS webhook's defaults here, because in that generation the cluster
//! stored them in the object: a Provisioner without an `arch` requirement really launched only
//! amd64, where a v1beta1/v1 NodePool without one launches any architecture.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::{Ctx, InputError, Location};
use super::launch_options::{self, MetadataCrd};
use super::meta::{
    BlockDeviceMappingSpec, Condition, KubeletConfiguration, NodeClaimStatusSpec, NodeClassRefSpec,
    NodeClassStatusSpec, ObjectMeta, RequirementSpec, ResourceList, ResourceRequirementsSpec,
    StringMap, TaintSpec,
};
use super::nodeclass;
use super::validate::{self, CLASSIC_OPERATORS};
use crate::model::labels;
use crate::model::legacy_selector::{is_ids_key, split_list};
use crate::model::nodepool::{
    AmiSelectorTerm, ApiGeneration, Disruption, NodeClass, NodeClassRef, NodePool, Origin,
    SelectorTerm,
};
use crate::model::requirements::{NodeSelectorRequirement, Operator};

/// The AWS provider's API group.
pub const AWS_GROUP: &str = "karpenter.k8s.aws";

/// A Provisioner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provisioner {
    /// `karpenter.sh/v1alpha5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Provisioner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ProvisionerSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ProvisionerStatus>,
}

/// `Provisioner.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionerSpec {
    /// Annotations applied to every node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<StringMap>,
    /// Labels applied to every node (and implied requirements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<StringMap>,
    /// Taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<TaintSpec>>,
    /// Startup taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_taints: Option<Vec<TaintSpec>>,
    /// Requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<RequirementSpec>>,
    /// Kubelet settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_configuration: Option<KubeletConfiguration>,
    /// Inline AWS provider (deprecated in favour of `providerRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AwsProvider>,
    /// Reference to an AWSNodeTemplate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_ref: Option<NodeClassRefSpec>,
    /// Seconds a node may stay empty before deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_empty: Option<i64>,
    /// Node lifetime in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_until_expired: Option<i64>,
    /// Limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ProvisionerLimits>,
    /// Weight (1–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
    /// Consolidation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation: Option<Consolidation>,
}

/// `spec.limits`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionerLimits {
    /// Ceiling on the sum of node capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceList>,
}

/// `spec.consolidation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consolidation {
    /// Whether consolidation is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `Provisioner.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionerStatus {
    /// Sum of the capacity of the Provisioner's nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceList>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Last scale time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<String>,
}

/// The AWS provider blob: the inline `spec.provider` of a Provisioner, and the spec of an
/// AWSNodeTemplate (which adds `amiSelector`, `userData`, `detailedMonitoring`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwsProvider {
    /// Inline providers may carry their own apiVersion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Inline providers may carry their own kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `AL2` (default), `Bottlerocket`, `Ubuntu`, `Windows2019`, `Windows2022`, `Custom`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_family: Option<String>,
    /// Map-form AMI selector (`aws::ids`, `aws::owners`, `aws::name`, tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ami_selector: Option<StringMap>,
    /// Map-form subnet selector (`aws-ids` or tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_selector: Option<StringMap>,
    /// Map-form security-group selector (`aws-ids` or tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_group_selector: Option<StringMap>,
    /// Instance profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_profile: Option<String>,
    /// Extra tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<StringMap>,
    /// A user launch template (disables AMI and SG management).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<String>,
    /// IMDS options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<serde_json::Value>,
    /// Block devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_device_mappings: Option<Vec<BlockDeviceMappingSpec>>,
    /// Security context (`context` field, passed to CreateFleet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// User data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// Detailed monitoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detailed_monitoring: Option<bool>,
}

/// An AWSNodeTemplate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwsNodeTemplate {
    /// `karpenter.k8s.aws/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `AWSNodeTemplate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<AwsProvider>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeClassStatusSpec>,
}

/// A Machine (v0.28–v0.32): the v1alpha5 precursor of a NodeClaim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// `karpenter.sh/v1alpha5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Machine`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<MachineSpec>,
    /// Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeClaimStatusSpec>,
}

/// `Machine.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// Taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<TaintSpec>>,
    /// Startup taints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_taints: Option<Vec<TaintSpec>>,
    /// Requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<RequirementSpec>>,
    /// Kubelet settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfiguration>,
    /// Resource requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirementsSpec>,
    /// Reference to the node template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_template_ref: Option<NodeClassRefSpec>,
}

/// AMI families an AWSNodeTemplate accepts.
const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "Bottlerocket",
    "Ubuntu",
    "Windows2019",
    "Windows2022",
    "Custom",
];

/// Keys whose absence triggers the instance-category/generation defaults.
const INSTANCE_SHAPE_KEYS: &[&str] = &[
    labels::INSTANCE_TYPE,
    labels::INSTANCE_FAMILY,
    labels::INSTANCE_CATEGORY,
    labels::INSTANCE_GENERATION,
];

/// The AWS webhook's Provisioner defaults (`aws v0.27.6: pkg/apis/v1alpha5/provisioner.go
/// SetDefaults`): each is appended only when neither a requirement nor a label constrains its key.
fn with_webhook_defaults(
    mut reqs: Vec<NodeSelectorRequirement>,
    labels_: &StringMap,
) -> Vec<NodeSelectorRequirement> {
    let constrained = |reqs: &[NodeSelectorRequirement], key: &str| {
        reqs.iter().any(|r| labels::normalize_key(&r.key) == key)
            || labels_.keys().any(|k| labels::normalize_key(k) == key)
    };
    for (key, value) in [
        (labels::OS, "linux"),
        (labels::ARCH, "amd64"),
        (labels::CAPACITY_TYPE, "on-demand"),
    ] {
        if !constrained(&reqs, key) {
            reqs.push(NodeSelectorRequirement::new(key, Operator::In, &[value]));
        }
    }
    if !INSTANCE_SHAPE_KEYS.iter().any(|k| constrained(&reqs, k)) {
        reqs.push(NodeSelectorRequirement::new(
            labels::INSTANCE_CATEGORY,
            Operator::In,
            &["c", "m", "r"],
        ));
        reqs.push(NodeSelectorRequirement::new(
            labels::INSTANCE_GENERATION,
            Operator::Gt,
            &["2"],
        ));
    }
    reqs
}

impl Provisioner {
    /// Normalises into a NodePool, plus the node class its inline `spec.provider` defines.
    pub fn to_model(
        &self,
        at: &Location,
        origin: &Origin,
    ) -> Result<(NodePool, Option<NodeClass>), InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(
            at,
            super::error::object_name("Provisioner", None, Some(&name)),
        );
        let empty = ProvisionerSpec::default();
        let spec = self.spec.as_ref().unwrap_or(&empty);

        let labels_ = spec.labels.clone().unwrap_or_default();
        validate::label_map(&ctx, "spec.labels", &labels_, true)?;
        let written = validate::requirements(
            &ctx,
            "spec.requirements",
            spec.requirements.as_deref().unwrap_or_default(),
            CLASSIC_OPERATORS,
            validate::RequirementRules::Provisioner,
        )?;
        let requirements = with_webhook_defaults(written, &labels_);
        let taints = validate::taints(
            &ctx,
            "spec.taints",
            spec.taints.as_deref().unwrap_or_default(),
        )?;
        let startup_taints = validate::taints(
            &ctx,
            "spec.startupTaints",
            spec.startup_taints.as_deref().unwrap_or_default(),
        )?;
        validate::unique_taints(&ctx, "spec", &taints, &startup_taints)?;
        let kubelet = spec
            .kubelet_configuration
            .as_ref()
            .map(|k| {
                validate::kubelet_crd_rules(&ctx, "spec.kubeletConfiguration", k, true)?;
                validate::kubelet(&ctx, "spec.kubeletConfiguration", k)
            })
            .transpose()?;
        let limits = match spec.limits.as_ref().and_then(|l| l.resources.as_ref()) {
            Some(list) => validate::milli_map(&ctx, "spec.limits.resources", list)?,
            None => BTreeMap::new(),
        };
        let weight = validate::weight(&ctx, "spec.weight", spec.weight)?;

        let consolidation = spec
            .consolidation
            .as_ref()
            .and_then(|c| c.enabled)
            .unwrap_or(false);
        let seconds = |field: &str, v: Option<i64>| match v {
            Some(n) if n < 0 => Err(ctx.invalid(field, format!("must not be negative, got {n}"))),
            _ => Ok(v),
        };
        let after_empty = seconds("spec.ttlSecondsAfterEmpty", spec.ttl_seconds_after_empty)?;
        let until_expired = seconds(
            "spec.ttlSecondsUntilExpired",
            spec.ttl_seconds_until_expired,
        )?;
        if consolidation && after_empty.is_some() {
            return Err(ctx.invalid(
                "spec.ttlSecondsAfterEmpty",
                "cannot be combined with consolidation.enabled: true (consolidation already removes empty nodes)",
            ));
        }
        // Consolidation replaces emptiness; without either, nodes are never removed for
        // emptiness, which v1 spells `WhenEmpty` + `Never` (what `karpenter-convert` writes).
        let disruption = if consolidation {
            Disruption {
                consolidation_policy: "WhenUnderutilized".into(),
                consolidate_after: None,
                budgets: vec![],
            }
        } else {
            Disruption {
                consolidation_policy: "WhenEmpty".into(),
                consolidate_after: Some(
                    after_empty.map_or_else(|| "Never".to_string(), |n| format!("{n}s")),
                ),
                budgets: vec![],
            }
        };

        if spec.provider.is_some() && spec.provider_ref.is_some() {
            return Err(ctx.invalid(
                "spec.provider",
                "cannot be set together with spec.providerRef (use one of them)",
            ));
        }
        let mut inline_class = None;
        let node_class_ref = if let Some(r) = &spec.provider_ref {
            let class_name = match r.name.as_deref() {
                Some(n) if !n.is_empty() => n.to_string(),
                _ => return Err(ctx.invalid("spec.providerRef.name", "required")),
            };
            Some(NodeClassRef {
                group: r
                    .api_version
                    .as_deref()
                    .map(group_of)
                    .unwrap_or(AWS_GROUP)
                    .to_string(),
                kind: r
                    .kind
                    .clone()
                    .filter(|k| !k.is_empty())
                    .unwrap_or_else(|| "AWSNodeTemplate".into()),
                name: class_name,
            })
        } else if let Some(provider) = &spec.provider {
            let mut class = provider_class(&ctx, "spec.provider", provider, origin)?;
            class.name = name.clone();
            class.kind = "Provisioner".into();
            inline_class = Some(class);
            Some(NodeClassRef {
                group: AWS_GROUP.into(),
                kind: "Provisioner".into(),
                name: name.clone(),
            })
        } else {
            // The v0.31 webhook's `validateProvider` (core v0.31.4
            // pkg/apis/v1alpha5/provisioner_validation.go): `ErrMissingOneOf`, so such a
            // Provisioner was never in a cluster.
            return Err(ctx.invalid(
                "spec.providerRef",
                "expected exactly one, got neither: spec.provider, spec.providerRef (name an AWSNodeTemplate, e.g. providerRef: {name: default})",
            ));
        };

        let status_resources = validate::resources(
            &ctx,
            "status.resources",
            self.status.as_ref().and_then(|s| s.resources.as_ref()),
        )?;
        let pool = NodePool {
            name,
            generation: Some(ApiGeneration::V1Alpha5),
            origin: origin.clone(),
            weight,
            labels: labels_,
            template_annotations: spec.annotations.clone().unwrap_or_default(),
            annotations: self.metadata.annotations.clone().unwrap_or_default(),
            taints,
            startup_taints,
            requirements,
            node_class_ref,
            kubelet,
            limits,
            disruption,
            expire_after: Some(
                until_expired.map_or_else(|| "Never".to_string(), |n| format!("{n}s")),
            ),
            termination_grace_period: None,
            status_resources,
            replicas: None,
            deleting: false,
            conditions: Vec::new(),
            raw_spec: None,
        };
        Ok((pool, inline_class))
    }
}

/// `karpenter.k8s.aws/v1alpha1` → `karpenter.k8s.aws`.
pub(crate) fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or(api_version, |(g, _)| g)
}

impl AwsNodeTemplate {
    /// Normalises into a node class of kind `AWSNodeTemplate`.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClass, InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(
            at,
            super::error::object_name("AWSNodeTemplate", None, Some(&name)),
        );
        let empty = AwsProvider::default();
        let mut class = provider_class(&ctx, "spec", self.spec.as_ref().unwrap_or(&empty), origin)?;
        class.name = name;
        class.kind = "AWSNodeTemplate".into();
        class.annotations = self.metadata.annotations.clone().unwrap_or_default();
        if let Some(status) = &self.status {
            class.status = nodeclass::status(&ctx, "status", status)?;
        }
        Ok(class)
    }
}

/// The node class of an AWS provider blob (name and kind are filled in by the caller).
fn provider_class(
    ctx: &Ctx,
    path: &str,
    p: &AwsProvider,
    origin: &Origin,
) -> Result<NodeClass, InputError> {
    let ami_family = p.ami_family.clone().unwrap_or_else(|| "AL2".into());
    if !AMI_FAMILIES.contains(&ami_family.as_str()) {
        return Err(ctx.invalid(
            format!("{path}.amiFamily"),
            format!(
                "unknown AMI family {ami_family:?} (expected {})",
                AMI_FAMILIES.join(", ")
            ),
        ));
    }
    let mut legacy = BTreeMap::new();
    let mut ami_terms = Vec::new();
    if let Some(sel) = &p.ami_selector {
        ami_terms = legacy_ami_terms(sel);
        legacy.insert("amiSelector".to_string(), sel.clone());
    }
    let mut subnet_terms = Vec::new();
    if let Some(sel) = &p.subnet_selector {
        subnet_terms = legacy_terms(sel);
        legacy.insert("subnetSelector".to_string(), sel.clone());
    }
    let mut sg_terms = Vec::new();
    if let Some(sel) = &p.security_group_selector {
        sg_terms = legacy_terms(sel);
        legacy.insert("securityGroupSelector".to_string(), sel.clone());
    }
    if ami_family == "Custom"
        && p.ami_selector.as_ref().is_none_or(|s| s.is_empty())
        && p.launch_template.is_none()
    {
        return Err(ctx.invalid(
            format!("{path}.amiSelector"),
            "required when amiFamily is Custom",
        ));
    }
    Ok(NodeClass {
        name: String::new(),
        kind: String::new(),
        generation: Some(ApiGeneration::V1Alpha5),
        origin: origin.clone(),
        annotations: BTreeMap::new(),
        ami_family: Some(ami_family),
        ami_selector_terms: ami_terms,
        subnet_selector_terms: subnet_terms,
        security_group_selector_terms: sg_terms,
        capacity_reservation_selector_terms: Vec::new(),
        legacy_selectors: legacy,
        role: None,
        instance_profile: p.instance_profile.clone(),
        user_data: p.user_data.clone(),
        tags: p.tags.clone().unwrap_or_default(),
        block_devices: nodeclass::block_devices(
            ctx,
            &format!("{path}.blockDeviceMappings"),
            p.block_device_mappings.as_deref(),
            false,
        )?,
        instance_store_policy: None,
        metadata_options: launch_options::metadata_options(
            ctx,
            &format!("{path}.metadataOptions"),
            p.metadata_options.as_ref(),
            MetadataCrd::AsWritten,
        )?,
        detailed_monitoring: p.detailed_monitoring,
        context: p.context.clone(),
        nested_virtualization: None,
        kubelet: None,
        launch_template: p.launch_template.clone(),
        status: Default::default(),
        deleting: false,
        metadata_generation: None,
        raw_spec: None,
    })
}

/// `amiSelector` → terms: ids become one term each (ids are exclusive); otherwise one term per
/// `aws::owners` entry, each carrying the `aws::name` and tag filters (docs/karpenter.md §1.2).
pub(crate) fn legacy_ami_terms(sel: &StringMap) -> Vec<AmiSelectorTerm> {
    if let Some((_, ids)) = sel.iter().find(|(k, _)| is_ids_key(k)) {
        return split_list(ids)
            .into_iter()
            .map(|id| AmiSelectorTerm {
                id: Some(id),
                ..AmiSelectorTerm::default()
            })
            .collect();
    }
    // One term per `aws::name` entry: v0.31/v0.32 split it at commas (`aws v0.32.10:
    // pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms`).
    let names: Vec<Option<String>> = match sel.get("aws::name").map(|n| split_list(n)) {
        Some(n) if !n.is_empty() => n.into_iter().map(Some).collect(),
        _ => vec![None],
    };
    let tags: BTreeMap<String, String> = sel
        .iter()
        .filter(|(k, _)| !k.starts_with("aws::"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let owners = sel
        .get("aws::owners")
        .map(|o| split_list(o))
        .unwrap_or_default();
    let owners: Vec<Option<String>> = if owners.is_empty() {
        if names == [None] && tags.is_empty() {
            return vec![];
        }
        vec![None]
    } else {
        owners.into_iter().map(Some).collect()
    };
    owners
        .iter()
        .flat_map(|owner| {
            names.iter().map(|name| AmiSelectorTerm {
                name: name.clone(),
                owner: owner.clone(),
                tags: tags.clone(),
                ..AmiSelectorTerm::default()
            })
        })
        .collect()
}

/// `subnetSelector` / `securityGroupSelector` → terms: ids one term each, otherwise one term
/// with every other key as a tag filter (`*` kept: it means "key exists").
pub(crate) fn legacy_terms(sel: &StringMap) -> Vec<SelectorTerm> {
    if let Some((_, ids)) = sel.iter().find(|(k, _)| is_ids_key(k)) {
        return split_list(ids)
            .into_iter()
            .map(|id| SelectorTerm {
                id: Some(id),
                ..SelectorTerm::default()
            })
            .collect();
    }
    if sel.is_empty() {
        return vec![];
    }
    vec![SelectorTerm {
        tags: sel.clone(),
        ..SelectorTerm::default()
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn legacy_ami_selector_to_terms() {
        let ids = legacy_ami_terms(&map(&[("aws::ids", "ami-1, ami-2")]));
        assert_eq!(
            ids.iter()
                .map(|t| t.id.clone().unwrap())
                .collect::<Vec<_>>(),
            ["ami-1", "ami-2"]
        );
        let owned = legacy_ami_terms(&map(&[
            ("aws::owners", "self,amazon"),
            ("aws::name", "eks-*"),
            ("team", "*"),
        ]));
        assert_eq!(owned.len(), 2);
        assert_eq!(owned[0].owner.as_deref(), Some("self"));
        assert_eq!(owned[1].owner.as_deref(), Some("amazon"));
        assert!(owned
            .iter()
            .all(|t| t.name.as_deref() == Some("eks-*") && t.tags["team"] == "*"));
        // A comma list of names: one term per name and owner (aws v0.32.10
        // pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms).
        let names = legacy_ami_terms(&map(&[
            ("aws::owners", "self,amazon"),
            ("aws::name", "eks-a-*, eks-b-*"),
        ]));
        let got: Vec<(Option<&str>, Option<&str>)> = names
            .iter()
            .map(|t| (t.owner.as_deref(), t.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some("self"), Some("eks-a-*")),
                (Some("self"), Some("eks-b-*")),
                (Some("amazon"), Some("eks-a-*")),
                (Some("amazon"), Some("eks-b-*")),
            ]
        );
        let tags = legacy_ami_terms(&map(&[("team", "a")]));
        assert_eq!(tags.len(), 1);
        assert_eq!(tags[0].owner, None);
        assert_eq!(
            legacy_terms(&map(&[("aws-ids", "subnet-1,subnet-2")])).len(),
            2
        );
        assert_eq!(
            legacy_terms(&map(&[("a", "*"), ("b", "x")]))[0].tags.len(),
            2
        );
    }

    #[test]
    fn webhook_defaults_respect_labels_and_shape_keys() {
        let got = with_webhook_defaults(vec![], &StringMap::new());
        let keys: Vec<_> = got.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                labels::OS,
                labels::ARCH,
                labels::CAPACITY_TYPE,
                labels::INSTANCE_CATEGORY,
                labels::INSTANCE_GENERATION
            ]
        );
        let family = vec![NodeSelectorRequirement::new(
            labels::INSTANCE_FAMILY,
            Operator::In,
            &["m5"],
        )];
        let got = with_webhook_defaults(family, &map(&[("kubernetes.io/arch", "arm64")]));
        let keys: Vec<_> = got.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(
            keys,
            [labels::INSTANCE_FAMILY, labels::OS, labels::CAPACITY_TYPE]
        );
    }
}
