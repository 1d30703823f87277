//! `karpenter.sh/v1alpha1` NodeOverlay (`core main: pkg/apis/v1alpha1/nodeoverlay.go`, CRD
//! `tests/fixtures/crds/v1alpha1/karpenter.sh_nodeoverlays.yaml`): read and checked as the API
//! server and Karpenter's runtime validation would (`nodeoverlay_validation.go`), so an overlay
//! that would be refused, or left `ValidationSucceeded=False`, is an input error here.

use serde::{Deserialize, Serialize};

use super::error::{object_name, Ctx, InputError, Location};
use super::meta::{ObjectMeta, RequirementSpec, ResourceList};
use super::validate::{self, NODEPOOL_OPERATORS_V1};
use crate::model::nodepool::Origin;
use crate::model::overlay::{NodeOverlay as Overlay, PriceChange};
use crate::model::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// A NodeOverlay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlay {
    /// `karpenter.sh/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `NodeOverlay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodeOverlaySpec>,
    /// Status (conditions), not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

/// `NodeOverlay.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOverlaySpec {
    /// Which instance types and offerings it applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<RequirementSpec>>,
    /// `+0.5`, `-10%`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_adjustment: Option<String>,
    /// An absolute price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// Extended resources added to the capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<ResourceList>,
    /// 1–10000; higher wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
}

/// Resources an overlay may not set (the CRD's CEL rule and `validateCapacity`).
const WELL_KNOWN_RESOURCES: [&str; 4] = [CPU, MEMORY, EPHEMERAL_STORAGE, PODS];

impl NodeOverlay {
    /// Normalises and validates.
    pub fn to_model(&self, at: &Location, origin: &Origin) -> Result<Overlay, InputError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(at, object_name("NodeOverlay", None, Some(&name)));
        let spec = self
            .spec
            .as_ref()
            .ok_or_else(|| ctx.invalid("spec", "required"))?;
        // The CRD's `required: [requirements]` (an empty list is allowed).
        let specs = spec.requirements.as_deref().ok_or_else(|| {
            ctx.invalid("spec.requirements", "required (an empty list is allowed)")
        })?;
        validate::max_items(&ctx, "spec.requirements", specs.len(), 100, "requirements")?;
        // The CRD lets the node class label through, `ValidateRequirement` does not
        // (`nodeoverlay_validation.go RuntimeValidate`).
        validate::claim_keys(&ctx, "spec.requirements", specs, &[])?;
        // The CRD's rule "requirements with operator 'NotIn' must have a value defined"
        // (nodeoverlay_validation_test.go "should fail for no values for NotIn operator").
        if let Some(i) = specs.iter().position(|r| {
            r.operator.as_deref() == Some("NotIn") && r.values.as_ref().is_none_or(Vec::is_empty)
        }) {
            return Err(ctx.invalid(
                format!("spec.requirements[{i}]"),
                "requirements with operator 'NotIn' must have a value defined",
            ));
        }
        let requirements = validate::requirements(
            &ctx,
            "spec.requirements",
            specs,
            NODEPOOL_OPERATORS_V1,
            validate::RequirementRules::Claim { min_values: false },
        )?;
        let price = match (spec.price.as_deref(), spec.price_adjustment.as_deref()) {
            (Some(_), Some(_)) => {
                return Err(ctx.invalid("spec", "cannot set both 'price' and 'priceAdjustment'"))
            }
            (Some(p), None) => Some(PriceChange::parse_price(p).ok_or_else(|| {
                ctx.invalid(
                    "spec.price",
                    format!("{p:?} is not a price (a non-negative decimal such as \"0.25\")"),
                )
            })?),
            (None, Some(a)) => Some(PriceChange::parse_adjustment(a).ok_or_else(|| {
                ctx.invalid(
                    "spec.priceAdjustment",
                    format!(
                        "{a:?} is not a price adjustment (+0.5, -0.5, +10%, or -10% down to -100%)"
                    ),
                )
            })?),
            (None, None) => None,
        };
        let capacity = validate::resources(&ctx, "spec.capacity", spec.capacity.as_ref())?;
        if let Some(r) = spec
            .capacity
            .iter()
            .flatten()
            .map(|(k, _)| k)
            .find(|k| WELL_KNOWN_RESOURCES.contains(&k.as_str()))
        {
            return Err(ctx.invalid(
                validate::key_path("spec.capacity", r),
                "only extended resources can be added (cpu, memory, ephemeral-storage and pods are restricted)",
            ));
        }
        let weight = match spec.weight {
            None => 0,
            Some(w) if (1..=10_000).contains(&w) => w as i32,
            Some(w) => {
                return Err(ctx.invalid(
                    "spec.weight",
                    format!("must be between 1 and 10000, got {w}"),
                ))
            }
        };
        Ok(Overlay {
            name,
            origin: origin.clone(),
            weight,
            requirements,
            price,
            capacity,
        })
    }
}
