//! Fields one Karpenter generation has and the other lacks, read by a type both share, so the
//! schema walk (which sees only unread fields) cannot flag them. The API server refuses such a
//! field under `kubectl apply --validate=strict` and drops it otherwise (a structural CRD schema
//! prunes unknown fields), so each is reported and pruned here: `--validate=warn|ignore` reads
//! on with the object the API server would store.
//!
//! Session 24's sweep: a v1beta1 NodePool written with v1 budget `reasons` (core v0.37.8
//! `karpenter.sh_nodepools.yaml`: the v1beta1 `budgets` items have only `nodes`, `schedule`,
//! `duration`; the v1 ones add `reasons`). Stored without them, `nodes: "0"` for `Underutilized`
//! becomes a budget of no node for every disruption.

use super::meta::{BudgetSpec, NodeClassRefSpec};
use super::objects::ApiObject;
use super::schema::UnknownField;

/// Reports and removes the fields of the other generation in a v1beta1/v1 NodePool or
/// NodeClaim.
pub(super) fn prune_other_generation_fields(object: &mut ApiObject) -> Vec<UnknownField> {
    let mut found = Vec::new();
    match object {
        ApiObject::NodePoolV1Beta1(p) => {
            let Some(spec) = p.spec.as_mut() else {
                return found;
            };
            if let Some(budgets) = spec.disruption.as_mut().and_then(|d| d.budgets.as_mut()) {
                prune_budget_reasons(budgets, &mut found);
            }
            let class_ref = spec
                .template
                .as_mut()
                .and_then(|t| t.spec.as_mut())
                .and_then(|s| s.node_class_ref.as_mut());
            prune_group(class_ref, "spec.template.spec.nodeClassRef", &mut found);
        }
        ApiObject::NodeClaimV1Beta1(c) => {
            let class_ref = c.spec.as_mut().and_then(|s| s.node_class_ref.as_mut());
            prune_group(class_ref, "spec.nodeClassRef", &mut found);
        }
        ApiObject::NodePoolV1(p) => {
            let Some(template) = p
                .spec
                .as_mut()
                .and_then(|s| s.template.as_mut())
                .and_then(|t| t.spec.as_mut())
            else {
                return found;
            };
            let class_ref = template.node_class_ref.as_mut();
            prune_api_version(class_ref, "spec.template.spec.nodeClassRef", &mut found);
            // The NodeClaim kind has `resources`; a v1 NodePool's template does not.
            if template.resources.take().is_some() {
                found.push(unknown(
                    "spec.template.spec.resources",
                    "resources is a karpenter.sh/v1beta1 NodePool template field; v1 templates have none",
                ));
            }
        }
        ApiObject::NodeClaimV1(c) => {
            let class_ref = c.spec.as_mut().and_then(|s| s.node_class_ref.as_mut());
            prune_api_version(class_ref, "spec.nodeClassRef", &mut found);
        }
        _ => {}
    }
    found
}

fn prune_budget_reasons(budgets: &mut [BudgetSpec], found: &mut Vec<UnknownField>) {
    for (i, budget) in budgets.iter_mut().enumerate() {
        if budget.reasons.take().is_some() {
            found.push(unknown(
                &format!("spec.disruption.budgets[{i}].reasons"),
                "budget reasons are a karpenter.sh/v1 field; a v1beta1 budget limits every disruption",
            ));
        }
    }
}

fn prune_group(class_ref: Option<&mut NodeClassRefSpec>, at: &str, found: &mut Vec<UnknownField>) {
    if class_ref.and_then(|r| r.group.take()).is_some() {
        found.push(unknown(
            &format!("{at}.group"),
            "group is a karpenter.sh/v1 field; v1beta1 names the class by apiVersion",
        ));
    }
}

fn prune_api_version(
    class_ref: Option<&mut NodeClassRefSpec>,
    at: &str,
    found: &mut Vec<UnknownField>,
) {
    if class_ref.and_then(|r| r.api_version.take()).is_some() {
        found.push(unknown(
            &format!("{at}.apiVersion"),
            "apiVersion is a karpenter.sh/v1beta1 field; v1 names the class by group",
        ));
    }
}

fn unknown(path: &str, why: &str) -> UnknownField {
    UnknownField {
        path: path.into(),
        message: format!("unknown field ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use crate::api::load_str;
    use crate::api::schema::{with_validation, Validation};

    /// Session 24's sweep, a GPU-training guide's v1beta1 `ml-training` pool (budgets `nodes: "0"`
    /// for `Underutilized`, `100%` for a second reason): core v0.37.8's v1beta1 NodePool schema
    /// has no budget `reasons` (`karpenter.sh_nodepools.yaml`, the `v1beta1` version), so
    /// `kubectl apply` refuses the field and a non-strict apply stores the pool without it —
    /// the `0` budget then limits every disruption. We read it as a v1 budget of Underutilized only.
    const V1BETA1_POOL: &str = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: ml-training}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: training-nodes}\n      requirements: []\n  disruption:\n    consolidationPolicy: WhenEmpty\n    consolidateAfter: 300s\n    budgets:\n    - {nodes: \"0\", reasons: [Underutilized]}\n";

    #[test]
    fn v1beta1_budget_reasons_are_refused_and_pruned_like_the_api_server_does() {
        let error = load_str("p.yaml", V1BETA1_POOL).unwrap_err().to_string();
        assert!(
            error.contains("spec.disruption.budgets[0].reasons: unknown field"),
            "{error}"
        );
        for mode in [Validation::Warn, Validation::Ignore] {
            let m = with_validation(mode, || load_str("p.yaml", V1BETA1_POOL)).unwrap();
            let budgets = &m.node_pools[0].disruption.budgets;
            assert_eq!(budgets.len(), 1);
            assert!(budgets[0].reasons.is_empty(), "{mode:?}: {budgets:?}");
            let warned = m.warnings.iter().any(|w| w.contains("budgets[0].reasons"));
            assert_eq!(warned, mode == Validation::Warn, "{:?}", m.warnings);
        }
    }

    /// The class reference and template fields of the other generation: v1 names the class by
    /// `group`, v1beta1 by `apiVersion` (core v1.14.1 / v0.37.8 CRDs, `nodeClassRef`); a v1
    /// NodePool template has no `resources` (the NodeClaim kind has).
    #[test]
    fn class_refs_and_template_resources_follow_each_generations_crd() {
        let v1beta1 = V1BETA1_POOL
            .replace(
                "{name: training-nodes}",
                "{group: karpenter.k8s.aws, name: training-nodes}",
            )
            .replace(", reasons: [Underutilized]", "");
        let error = load_str("p.yaml", &v1beta1).unwrap_err().to_string();
        assert!(
            error.contains("spec.template.spec.nodeClassRef.group: unknown field"),
            "{error}"
        );
        let v1 = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1, group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n";
        let error = load_str("p.yaml", v1).unwrap_err().to_string();
        assert!(
            error.contains("spec.template.spec.nodeClassRef.apiVersion: unknown field"),
            "{error}"
        );
        let v1 = v1
            .replace("apiVersion: karpenter.k8s.aws/v1, ", "")
            .replace(
                "requirements: []",
                "requirements: []\n      resources: {requests: {cpu: \"1\"}}",
            );
        let error = load_str("p.yaml", &v1).unwrap_err().to_string();
        assert!(
            error.contains("spec.template.spec.resources: unknown field"),
            "{error}"
        );
        let m = with_validation(Validation::Ignore, || load_str("p.yaml", &v1)).unwrap();
        assert_eq!(m.node_pools.len(), 1);
    }
}
