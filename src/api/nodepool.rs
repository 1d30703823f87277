//! The NodePool template pieces v1beta1 and v1 share: labels, annotations, taints, requirements
//! and the node class reference.

use super::error::{Ctx, InputError};
use super::meta::{Condition, NodeClassRefSpec, RequirementSpec, TaintSpec, TemplateMetadata};
use super::v1alpha5::{group_of, AWS_GROUP};
use super::validate;
use crate::model::nodepool::NodeClassRef;
use crate::model::requirements::{NodeSelectorRequirement, Operator};
use crate::model::taints::Taint;
use std::collections::BTreeMap;

/// The normalised template of a NodePool.
pub(crate) struct Template {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    pub requirements: Vec<NodeSelectorRequirement>,
}

/// Checks and converts `spec.template.metadata` and the scheduling half of `spec.template.spec`.
///
/// `well_known`: check the requirements' well-known values, a rule of v1.14.1's NodePool
/// validation controller (`validate::well_known_values`) that v0.37 did not have (`core
/// v0.37.7` has no `WellKnownValuesForRequirements`): a v1beta1 pool with `capacity-type In
/// [xspot]` was accepted there and its pods stayed pending.
pub(crate) fn template(
    ctx: &Ctx,
    metadata: Option<&TemplateMetadata>,
    taints: Option<&[TaintSpec]>,
    startup_taints: Option<&[TaintSpec]>,
    requirements: Option<&[RequirementSpec]>,
    operators: &[Operator],
    well_known: bool,
) -> Result<Template, InputError> {
    // The CRDs' `maxItems: 100` (v1beta1 and v1). (They also require the list — `required:
    // [nodeClassRef, requirements]` — read here as empty when absent: docs/upstream-tests.md
    // "CRD schemas and CEL rules, line by line", differs, left.)
    let requirements = requirements.unwrap_or_default();
    let count = requirements.len();
    validate::max_items(
        ctx,
        "spec.template.spec.requirements",
        count,
        100,
        "requirements",
    )?;
    let labels = metadata.and_then(|m| m.labels.clone()).unwrap_or_default();
    validate::label_map(ctx, "spec.template.metadata.labels", &labels, true)?;
    validate::cel_label_domains(ctx, "spec.template.metadata.labels", &labels)?;
    let requirements = validate::requirements(
        ctx,
        "spec.template.spec.requirements",
        requirements,
        operators,
        validate::RequirementRules::NodePool,
    )?;
    if well_known {
        validate::well_known_values(ctx, "spec.template.spec.requirements", &requirements)?;
    }
    let taints = validate::taints(ctx, "spec.template.spec.taints", taints.unwrap_or_default())?;
    let startup_taints = validate::taints(
        ctx,
        "spec.template.spec.startupTaints",
        startup_taints.unwrap_or_default(),
    )?;
    validate::unique_taints(ctx, "spec.template.spec", &taints, &startup_taints)?;
    Ok(Template {
        labels,
        annotations: metadata
            .and_then(|m| m.annotations.clone())
            .unwrap_or_default(),
        taints,
        startup_taints,
        requirements,
    })
}

/// `spec.template.spec.nodeClassRef`, required from v1beta1 on. Group and kind default to the
/// AWS provider's (`karpenter.k8s.aws`, `EC2NodeClass`); v1beta1 names the group through an
/// `apiVersion`. A v1 `group` written as an apiVersion (`karpenter.k8s.aws/v1`, as aws v1.14.1's
/// `examples/v1/windows-custom-userdata.yaml` writes it) is refused: the CRD's pattern on
/// `group` is `^[^/]*$` (core v1.14.1: pkg/apis/crds/karpenter.sh_nodepools.yaml; the
/// NodeClaim's is the same, nodeclaim_validation_cel_test.go "should fail for invalid group").
pub(crate) fn node_class_ref(
    ctx: &Ctx,
    spec: Option<&NodeClassRefSpec>,
) -> Result<NodeClassRef, InputError> {
    const PATH: &str = "spec.template.spec.nodeClassRef";
    let r = spec.ok_or_else(|| {
        ctx.invalid(PATH, "required: a NodePool must name its node class (e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default})")
    })?;
    let name = match r.name.as_deref() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => return Err(ctx.invalid(format!("{PATH}.name"), "required")),
    };
    let group = match (r.group.as_deref(), r.api_version.as_deref()) {
        (Some(g), _) if g.contains('/') => {
            return Err(ctx.invalid(
                format!("{PATH}.group"),
                format!(
                    "{g:?} is an apiVersion, not a group (write {})",
                    group_of(g)
                ),
            ))
        }
        (Some(g), _) if !g.is_empty() => g.to_string(),
        (_, Some(v)) if !v.is_empty() => group_of(v).to_string(),
        _ => AWS_GROUP.to_string(),
    };
    let kind = r
        .kind
        .clone()
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "EC2NodeClass".into());
    Ok(NodeClassRef { group, kind, name })
}

/// `status.conditions` as written (NodePool, EC2NodeClass): a condition without a `type` is
/// dropped; a `status` other than `True`/`False` reads as `Unknown`, as Kubernetes' condition
/// helpers read it.
pub(crate) fn conditions(list: Option<&[Condition]>) -> Vec<crate::model::nodepool::Condition> {
    use crate::model::nodepool::ConditionStatus;
    list.unwrap_or_default()
        .iter()
        .filter_map(|c| {
            Some(crate::model::nodepool::Condition {
                type_: c.type_.clone()?,
                status: match c.status.as_deref() {
                    Some("True") => ConditionStatus::True,
                    Some("False") => ConditionStatus::False,
                    _ => ConditionStatus::Unknown,
                },
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
                observed_generation: c.observed_generation,
            })
        })
        .collect()
}
