//! A PodDisruptionBudget read from a manifest, checked as the API server checks it on create
//! (`k8s.io/kubernetes pkg/apis/policy/validation/validation.go`
//! `ValidatePodDisruptionBudgetSpec`): consolidation and `drift replace` count its budget, so a
//! budget the cluster would never hold must not shape a plan.

use super::core::PodDisruptionBudget;
use super::error::{object_name, Ctx, InputError, Location};
use super::meta::IntOrString;

/// `unhealthyPodEvictionPolicy`'s values.
const EVICTION_POLICIES: [&str; 2] = ["IfHealthyBudget", "AlwaysAllow"];

/// Refuses what `kubectl apply` would: both counts set, a count that is neither a non-negative
/// integer nor a percentage `N%` of at most 100, an unknown eviction policy, a malformed
/// selector.
pub(super) fn check(pdb: &PodDisruptionBudget, at: &Location) -> Result<(), InputError> {
    let meta = &pdb.metadata;
    let ctx = Ctx::new(
        at,
        object_name(
            "PodDisruptionBudget",
            meta.namespace.as_deref(),
            meta.name.as_deref(),
        ),
    );
    let Some(spec) = &pdb.spec else {
        return Ok(());
    };
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        return Err(ctx.invalid("spec", "minAvailable and maxUnavailable cannot be both set"));
    }
    for (field, value) in [
        ("spec.minAvailable", &spec.min_available),
        ("spec.maxUnavailable", &spec.max_unavailable),
    ] {
        if let Some(problem) = value.as_ref().and_then(count_problem) {
            return Err(ctx.invalid(field, problem));
        }
    }
    if let Some(policy) = spec.unhealthy_pod_eviction_policy.as_deref() {
        if !EVICTION_POLICIES.contains(&policy) {
            return Err(ctx.invalid(
                "spec.unhealthyPodEvictionPolicy",
                format!("unsupported value {policy:?} (expected IfHealthyBudget or AlwaysAllow)"),
            ));
        }
    }
    if let Some(selector) = &spec.selector {
        super::pods::label_selector(&ctx, "spec.selector", selector)?;
    }
    Ok(())
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` (`pkg/apis/apps/validation`).
fn count_problem(value: &IntOrString) -> Option<String> {
    match value {
        IntOrString::Int(n) if *n < 0 => {
            Some(format!("must be greater than or equal to 0, got {n}"))
        }
        IntOrString::Int(_) => None,
        IntOrString::String(text) => {
            let digits = text
                .strip_suffix('%')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits.map(|d| d.parse::<u64>()) {
                None => Some(format!(
                    "{text:?} must be an integer or a percentage (a number followed by '%', e.g. \"10%\")"
                )),
                Some(Ok(p)) if p <= 100 => None,
                Some(_) => Some(format!("must not be greater than 100%, got {text:?}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k8s.io/kubernetes pkg/apis/policy/validation/validation_test.go`
    /// `TestValidateMinAvailablePodDisruptionBudgetSpec`, `TestValidatePodDisruptionBudgetSpec`,
    /// `TestValidateUnhealthyPodEvictionPolicyDisruptionBudgetSpec`: what each count may be.
    #[test]
    fn counts_are_non_negative_integers_or_percentages_up_to_100() {
        let int = IntOrString::Int;
        let text = |s: &str| IntOrString::String(s.into());
        for ok in [int(0), int(3), text("0%"), text("55%"), text("100%")] {
            assert_eq!(count_problem(&ok), None, "{ok:?}");
        }
        for bad in [
            int(-1),
            text("1"),
            text("-5%"),
            text("1.5%"),
            text("x%"),
            text("%"),
            text("150%"),
            text("10 %"),
        ] {
            assert!(count_problem(&bad).is_some(), "{bad:?}");
        }
    }
}
