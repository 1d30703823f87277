//! `RequirementsDrifted` (docs/karpenter.md §4.2 step 2): are the node's labels still compatible
//! with the NodePool's requirements, with **no** "allow undefined" keys (drift passes none,
//! unlike the scheduler)?
//!
//! The node side is one `In [value]` per label, so Karpenter's
//! `labels.Compatible(poolRequirements)` reduces to, for every pool requirement:
//!
//! | node label | requirement                         | drifted |
//! |------------|-------------------------------------|---------|
//! | absent     | `NotIn` / `DoesNotExist`            | no      |
//! | absent     | `In` / `Exists` / `Gt` / `Lt`       | yes ("label does not have known values") |
//! | present v  | admits v (In ∋ v, NotIn ∌ v, Exists, Gt/Lt bound holds as an integer) | no |
//! | present v  | does not admit v (narrowed, `DoesNotExist`, non-integer under Gt/Lt) | yes |
//!
//! so widening a requirement never drifts and narrowing it past the node's value does.

use std::collections::BTreeMap;

use crate::model::labels::normalize_key;
use crate::model::requirements::{NodeSelectorRequirement, Operator, Requirements};

/// One requirement the node no longer satisfies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequirementViolation {
    /// The (normalised) label key.
    pub key: String,
    /// The node's value, if it has the label.
    pub node_value: Option<String>,
    /// The requirement now, e.g. `In [c,m]`.
    pub requirement: String,
}

impl RequirementViolation {
    /// People's text: `karpenter.k8s.aws/instance-category=r is not in In [c,m]`; `holder` names
    /// whose labels were read (`NodeClaim` or `node`), so a missing label is looked for where it
    /// is missing — Karpenter reads the NodeClaim's (`drift.go areRequirementsDrifted`).
    pub fn explain(&self, holder: &str) -> String {
        match &self.node_value {
            Some(v) => format!(
                "{}={v} no longer matches {} {}",
                self.key, self.key, self.requirement
            ),
            None => format!(
                "{holder} has no {} label but the NodePool now requires {} {}",
                self.key, self.key, self.requirement
            ),
        }
    }
}

/// The pool's requirements on `key` as it writes them (`Gt 6`, `In [c,m]`, `DoesNotExist`;
/// several joined by `, `, aliases of the key included), not as the algebra keeps them (`Gt 6`
/// is `Gte 7` there, `core v1.14.1: pkg/scheduling/requirement.go`).
fn written(key: &str, pool_requirements: &[NodeSelectorRequirement]) -> String {
    let parts: Vec<String> = pool_requirements
        .iter()
        .filter(|sel| normalize_key(&sel.key) == key)
        .map(|sel| match (sel.operator, sel.values.as_slice()) {
            (Operator::Exists | Operator::DoesNotExist, _) => sel.operator.to_string(),
            (Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte, [one]) => {
                format!("{} {one}", sel.operator)
            }
            (op, values) => format!("{op} [{}]", values.join(",")),
        })
        .collect();
    parts.join(", ")
}

/// Every pool requirement the labels violate, in key order (empty: not drifted).
pub fn violations(
    node_labels: &BTreeMap<String, String>,
    pool_requirements: &[NodeSelectorRequirement],
) -> Vec<RequirementViolation> {
    let labels: BTreeMap<&str, &str> = node_labels
        .iter()
        .map(|(k, v)| (normalize_key(k), v.as_str()))
        .collect();
    let reqs = Requirements::from_selectors(pool_requirements);
    let mut out = Vec::new();
    for req in reqs.iter() {
        let value = labels.get(req.key.as_str()).copied();
        let ok = match value {
            None => req.operator().is_negative(),
            Some(v) => req.has(v),
        };
        if !ok {
            out.push(RequirementViolation {
                key: req.key.clone(),
                node_value: value.map(str::to_string),
                requirement: written(&req.key, pool_requirements),
            });
        }
    }
    out
}
