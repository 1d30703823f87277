//! NodeClaims (v1beta1, v1) and Machines (v1alpha5), normalised into the model's
//! [`NodeClaim`].

use super::error::{object_name, Ctx, InputError, Location};
use super::meta::{
    NodeClaimStatusSpec, NodeClassRefSpec, ObjectMeta, RequirementSpec, ResourceRequirementsSpec,
    TaintSpec,
};
use super::v1alpha5::{group_of, AWS_GROUP};
use super::validate::{self, NODEPOOL_OPERATORS_V1};
use super::{v1, v1alpha5, v1beta1};
use crate::model::labels;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{ApiGeneration, NodeClassRef, Origin, DEFAULT_EXPIRE_AFTER};

/// The parts every generation shares.
struct Parts<'a> {
    kind: &'static str,
    generation: ApiGeneration,
    metadata: &'a ObjectMeta,
    requirements: Option<&'a [RequirementSpec]>,
    taints: Option<&'a [TaintSpec]>,
    startup_taints: Option<&'a [TaintSpec]>,
    class_ref: Option<&'a NodeClassRefSpec>,
    default_class_kind: &'static str,
    status: Option<&'a NodeClaimStatusSpec>,
}

fn convert(at: &Location, origin: &Origin, p: Parts<'_>) -> Result<NodeClaim, InputError> {
    let name = p.metadata.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name(p.kind, None, Some(&name)));
    let labels_ = p.metadata.labels.clone().unwrap_or_default();
    let nodepool = labels_
        .get(labels::NODEPOOL)
        .or_else(|| labels_.get(labels::PROVISIONER_NAME))
        .cloned();
    // Requirements are Karpenter's own output here (they name the pool), so no label
    // restrictions; every operator the newest API knows is accepted.
    let requirements = validate::requirements(
        &ctx,
        "spec.requirements",
        p.requirements.unwrap_or_default(),
        NODEPOOL_OPERATORS_V1,
        validate::RequirementRules::Claim { min_values: true },
    )?;
    let node_class_ref = p.class_ref.and_then(|r| {
        let name = r.name.clone().filter(|n| !n.is_empty())?;
        let group = r
            .group
            .as_deref()
            .or(r.api_version.as_deref())
            .map(group_of)
            .unwrap_or(AWS_GROUP);
        Some(NodeClassRef {
            group: group.to_string(),
            kind: r
                .kind
                .clone()
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| p.default_class_kind.to_string()),
            name,
        })
    });
    let status = p.status.cloned().unwrap_or_default();
    Ok(NodeClaim {
        name,
        generation: Some(p.generation),
        origin: origin.clone(),
        nodepool,
        labels: labels_,
        annotations: p.metadata.annotations.clone().unwrap_or_default(),
        requirements,
        taints: validate::taints(&ctx, "spec.taints", p.taints.unwrap_or_default())?,
        startup_taints: validate::taints(
            &ctx,
            "spec.startupTaints",
            p.startup_taints.unwrap_or_default(),
        )?,
        node_class_ref,
        provider_id: status.provider_id.clone(),
        node_name: status.node_name.clone(),
        image_id: status.image_id.clone(),
        created: p.metadata.creation_timestamp.clone(),
        deleting: p.metadata.deletion_timestamp.is_some(),
        capacity: validate::resources(&ctx, "status.capacity", status.capacity.as_ref())?,
        allocatable: validate::resources(&ctx, "status.allocatable", status.allocatable.as_ref())?,
        conditions: status
            .conditions
            .iter()
            .flatten()
            .filter_map(|c| Some((c.type_.clone()?, c.status.clone().unwrap_or_default())))
            .collect(),
        expire_after: None,
        termination_grace_period: None,
        true_since: status
            .conditions
            .iter()
            .flatten()
            .filter(|c| c.status.as_deref() == Some("True"))
            .filter_map(|c| {
                let since = (c.last_transition_time.clone(), c.reason.clone());
                Some((c.type_.clone()?, since))
            })
            .collect(),
        last_pod_event: status.last_pod_event_time.clone(),
    })
}

/// What the NodeClaim CRDs (v1beta1, v1) check beyond what every generation's conversion does:
/// `requirements` and `nodeClassRef` required (`required: [nodeClassRef, requirements]`), at
/// most 100 requirements and their key rules ([`validate::claim_keys`]); the reference's
/// `name` required, in v1 its `group` and `kind` too, none of them empty (the CEL rules
/// `self != ''`); `resources.requests` quantities (the CRD's quantity pattern).
fn claim_crd_rules(
    ctx: &Ctx,
    (requirements, class_ref): (Option<&[RequirementSpec]>, Option<&NodeClassRefSpec>),
    resources: Option<&ResourceRequirementsSpec>,
    v1: bool,
) -> Result<(), InputError> {
    let specs = requirements
        .ok_or_else(|| ctx.invalid("spec.requirements", "required (an empty list is allowed)"))?;
    validate::max_items(ctx, "spec.requirements", specs.len(), 100, "requirements")?;
    let allowed: &[&str] = if v1 { &[labels::EC2NODECLASS] } else { &[] };
    validate::claim_keys(ctx, "spec.requirements", specs, allowed)?;
    let class_ref = class_ref.ok_or_else(|| ctx.invalid("spec.nodeClassRef", "required"))?;
    let mut fields = vec![("name", class_ref.name.as_deref())];
    if v1 {
        fields.extend([
            ("group", class_ref.group.as_deref()),
            ("kind", class_ref.kind.as_deref()),
        ]);
    }
    for (field, value) in fields {
        if value.is_none_or(str::is_empty) {
            return Err(ctx.invalid(
                format!("spec.nodeClassRef.{field}"),
                "required, and may not be empty",
            ));
        }
    }
    if let Some(requests) = resources.and_then(|r| r.requests.as_ref()) {
        validate::milli_map(ctx, "spec.resources.requests", requests)?;
    }
    Ok(())
}

impl v1::NodeClaim {
    /// Normalises a v1 NodeClaim.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClaim, InputError> {
        let spec = self.spec.clone().unwrap_or_default();
        let name = self.metadata.name.as_deref();
        let ctx = Ctx::new(at, object_name("NodeClaim", None, name));
        let parts = (spec.requirements.as_deref(), spec.node_class_ref.as_ref());
        claim_crd_rules(&ctx, parts, spec.resources.as_ref(), true)?;
        // The v1 CRD (core v1.14.1: pkg/apis/crds/karpenter.sh_nodeclaims.yaml): a group is no
        // apiVersion (`^[^/]*$`); expireAfter and terminationGracePeriod have the NodePool's
        // patterns (nodeclaim_validation_cel_test.go "should fail for invalid group", "should
        // fail on an invalid expireAfter", "… terminationGracePeriod").
        if let Some(g) = spec
            .node_class_ref
            .as_ref()
            .and_then(|r| r.group.as_deref())
        {
            if g.contains('/') {
                return Err(ctx.invalid(
                    "spec.nodeClassRef.group",
                    format!("{g:?} is an apiVersion, not a group (e.g. karpenter.k8s.aws)"),
                ));
            }
        }
        if let Some(d) = &spec.expire_after {
            validate::duration(&ctx, "spec.expireAfter", d, true)?;
        }
        if let Some(d) = &spec.termination_grace_period {
            validate::duration(&ctx, "spec.terminationGracePeriod", d, false)?;
        }
        let mut claim = convert(
            at,
            origin,
            Parts {
                kind: "NodeClaim",
                generation: ApiGeneration::V1,
                metadata: &self.metadata,
                requirements: spec.requirements.as_deref(),
                taints: spec.taints.as_deref(),
                startup_taints: spec.startup_taints.as_deref(),
                class_ref: spec.node_class_ref.as_ref(),
                default_class_kind: "EC2NodeClass",
                status: self.status.as_ref(),
            },
        )?;
        // The CRD defaults `expireAfter` to 720h (`+kubebuilder:default:="720h"` on
        // `NodeClaimSpec.ExpireAfter`): a NodeClaim applied without it is stored with it, and
        // the expiration controller reads that.
        claim.expire_after = Some(
            spec.expire_after
                .clone()
                .unwrap_or_else(|| DEFAULT_EXPIRE_AFTER.to_string()),
        );
        claim.termination_grace_period = spec.termination_grace_period.clone();
        Ok(claim)
    }
}

impl v1beta1::NodeClaim {
    /// Normalises a v1beta1 NodeClaim.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClaim, InputError> {
        let spec = self.spec.clone().unwrap_or_default();
        let ctx = Ctx::new(
            at,
            object_name("NodeClaim", None, self.metadata.name.as_deref()),
        );
        let parts = (spec.requirements.as_deref(), spec.node_class_ref.as_ref());
        claim_crd_rules(&ctx, parts, spec.resources.as_ref(), false)?;
        // The v1beta1 NodeClaim CRD's kubelet rules, and its webhook's taint pairs (`core
        // v0.37.7: pkg/apis/v1beta1/nodeclaim_validation.go` `NodeClaimSpec.validate`).
        if let Some(k) = &spec.kubelet {
            validate::kubelet_crd_rules(&ctx, "spec.kubelet", k, false)?;
        }
        let claim = convert(
            at,
            origin,
            Parts {
                kind: "NodeClaim",
                generation: ApiGeneration::V1Beta1,
                metadata: &self.metadata,
                requirements: spec.requirements.as_deref(),
                taints: spec.taints.as_deref(),
                startup_taints: spec.startup_taints.as_deref(),
                class_ref: spec.node_class_ref.as_ref(),
                default_class_kind: "EC2NodeClass",
                status: self.status.as_ref(),
            },
        )?;
        validate::unique_taints(&ctx, "spec", &claim.taints, &claim.startup_taints)?;
        Ok(claim)
    }
}

impl v1alpha5::Machine {
    /// Normalises a Machine.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<NodeClaim, InputError> {
        let spec = self.spec.clone().unwrap_or_default();
        convert(
            at,
            origin,
            Parts {
                kind: "Machine",
                generation: ApiGeneration::V1Alpha5,
                metadata: &self.metadata,
                requirements: spec.requirements.as_deref(),
                taints: spec.taints.as_deref(),
                startup_taints: spec.startup_taints.as_deref(),
                class_ref: spec.machine_template_ref.as_ref(),
                default_class_kind: "AWSNodeTemplate",
                status: self.status.as_ref(),
            },
        )
    }
}
