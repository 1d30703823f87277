//! A pod's scheduling terms in the model's types: label selectors, node and pod (anti-)affinity,
//! tolerations, topology spread constraints — each checked as the API server checks it.

use std::collections::BTreeMap;

use crate::api::core::{
    LabelSelectorSpec, NodeSelectorTermSpec, PodAffinity, PodAffinityTermSpec, TolerationSpec,
    TopologySpreadConstraintSpec,
};
use crate::api::error::{Ctx, InputError};
use crate::api::validate;
use crate::api::validate::CLASSIC_OPERATORS;
use crate::model::pod::{
    NodeSelectorTerm, PodAffinityTerm, TopologySpread, Weighted, WhenUnsatisfiable,
};
use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};
use crate::model::taints::{Effect, Toleration, TolerationOperator};

pub(crate) fn label_selector(
    ctx: &Ctx,
    path: &str,
    s: &LabelSelectorSpec,
) -> Result<LabelSelector, InputError> {
    let match_expressions = s
        .match_expressions
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, e)| {
            let at = format!("{path}.matchExpressions[{i}]");
            let key = e
                .key
                .clone()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ctx.invalid(format!("{at}.key"), "required"))?;
            let op_text = e.operator.as_deref().unwrap_or("");
            let op = SelectorOp::parse(op_text).ok_or_else(|| {
                ctx.invalid(
                    format!("{at}.operator"),
                    format!(
                        "unknown operator {op_text:?} (expected In, NotIn, Exists, DoesNotExist)"
                    ),
                )
            })?;
            if let Some(problem) = validate::label_key_problem(&key) {
                return Err(ctx.invalid(format!("{at}.key"), problem));
            }
            let values = e.values.clone().unwrap_or_default();
            if let Some((j, problem)) = values
                .iter()
                .enumerate()
                .find_map(|(j, v)| validate::label_value_problem(v).map(|p| (j, p)))
            {
                return Err(ctx.invalid(format!("{at}.values[{j}]"), problem));
            }
            match op {
                SelectorOp::In | SelectorOp::NotIn if values.is_empty() => {
                    return Err(ctx.invalid(
                        format!("{at}.values"),
                        format!("operator {op_text} needs at least one value"),
                    ))
                }
                SelectorOp::Exists | SelectorOp::DoesNotExist if !values.is_empty() => {
                    return Err(ctx.invalid(
                        format!("{at}.values"),
                        format!("operator {op_text} takes no values"),
                    ))
                }
                _ => {}
            }
            Ok(SelectorExpr { key, op, values })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    // `apimachinery pkg/apis/meta/v1/validation` `ValidateLabelSelector`: labels' syntax.
    if let Some(labels) = &s.match_labels {
        validate::label_map(ctx, &format!("{path}.matchLabels"), labels, false)?;
    }
    Ok(LabelSelector {
        match_labels: s.match_labels.clone().unwrap_or_default(),
        match_expressions,
    })
}

/// Why Karpenter's `ValidateRequirement` (core v1.14.1 `pkg/apis/v1/nodeclaim_validation.go`)
/// refuses a node selector term the API server takes: it checks only the key, the operator and
/// the number of values (`k8s.io/kubernetes pkg/apis/core/validation`
/// `ValidateNodeSelectorRequirement`), Karpenter also that every value is a label value and that a
/// `Gt`/`Lt` value is a non-negative integer. `None`: nothing of that kind.
pub(super) fn karpenter_invalid(t: &NodeSelectorTermSpec) -> Option<String> {
    t.match_expressions.iter().flatten().find_map(|e| {
        let key = e.key.as_deref().unwrap_or_default();
        let op = e.operator.as_deref().unwrap_or_default();
        let values = e.values.as_deref().unwrap_or_default();
        if let Some(problem) = values.iter().find_map(|v| validate::label_value_problem(v)) {
            return Some(format!("key {key}: {problem}"));
        }
        let integer = |v: &String| v.parse::<i64>().is_ok_and(|n| n >= 0);
        match values {
            [v] if matches!(op, "Gt" | "Lt") && !integer(v) => Some(format!(
                "key {key} with operator {op} must have a single positive integer value, got {v:?}"
            )),
            _ => None,
        }
    })
}

/// `t` with every value replaced by one valid for any operator, for the API server's own checks
/// of a term [`karpenter_invalid`] refuses.
pub(super) fn with_placeholder_values(t: &NodeSelectorTermSpec) -> NodeSelectorTermSpec {
    let mut t = t.clone();
    for e in t.match_expressions.iter_mut().flatten() {
        for v in e.values.iter_mut().flatten() {
            *v = "0".into();
        }
    }
    t
}

/// Converts one node selector term; `None` when the term cannot be honoured (matchFields, or
/// empty, which matches no node), with the reason.
pub(super) fn node_term(
    ctx: &Ctx,
    path: &str,
    t: &NodeSelectorTermSpec,
) -> Result<Result<NodeSelectorTerm, String>, InputError> {
    if t.match_fields.as_ref().is_some_and(|f| !f.is_empty()) {
        return Ok(Err(format!("{path}.matchFields is not supported by Karpenter (use matchExpressions on node labels)")));
    }
    let exprs = t.match_expressions.as_deref().unwrap_or_default();
    if exprs.is_empty() {
        return Ok(Err(format!("{path} is empty and matches no node")));
    }
    Ok(Ok(validate::requirements(
        ctx,
        &format!("{path}.matchExpressions"),
        exprs,
        CLASSIC_OPERATORS,
        validate::RequirementRules::Core,
    )?))
}

pub(super) fn weight(ctx: &Ctx, path: &str, w: Option<i64>) -> Result<i32, InputError> {
    match w {
        Some(w) if (1..=100).contains(&w) => Ok(w as i32),
        Some(w) => Err(ctx.invalid(path, format!("must be between 1 and 100, got {w}"))),
        None => Err(ctx.invalid(path, "required (1-100)")),
    }
}

fn affinity_term(
    ctx: &Ctx,
    path: &str,
    t: &PodAffinityTermSpec,
    pod_labels: &BTreeMap<String, String>,
) -> Result<PodAffinityTerm, InputError> {
    let topology_key = t
        .topology_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ctx.invalid(format!("{path}.topologyKey"), "required"))?;
    // `validatePodAffinityTerm`: the key's syntax, each namespace a namespace's name.
    if let Some(problem) = validate::label_key_problem(&topology_key) {
        return Err(ctx.invalid(format!("{path}.topologyKey"), problem));
    }
    for (i, ns) in t.namespaces.iter().flatten().enumerate() {
        if let Some(problem) = validate::object_name_problem("Namespace", ns) {
            return Err(ctx.invalid(format!("{path}.namespaces[{i}]"), problem));
        }
    }
    let matching = t.match_label_keys.as_deref().unwrap_or_default();
    let mismatching = t.mismatch_label_keys.as_deref().unwrap_or_default();
    let has_selector = t.label_selector.is_some();
    label_keys(
        ctx,
        &format!("{path}.matchLabelKeys"),
        matching,
        has_selector,
    )?;
    label_keys(
        ctx,
        &format!("{path}.mismatchLabelKeys"),
        mismatching,
        has_selector,
    )?;
    if let Some((i, key)) = matching
        .iter()
        .enumerate()
        .find(|(_, k)| mismatching.contains(k))
    {
        return Err(ctx.invalid(
            format!("{path}.matchLabelKeys[{i}]"),
            format!("{key:?} exists in both matchLabelKeys and mismatchLabelKeys"),
        ));
    }
    let mut selector = t
        .label_selector
        .as_ref()
        .map(|s| label_selector(ctx, &format!("{path}.labelSelector"), s))
        .transpose()?;
    // The API server ANDs the pod's own values of these keys into the selector when it creates
    // the pod (`k8s.io/kubernetes pkg/registry/core/pod/strategy.go`
    // `applyMatchLabelKeysAndMismatchLabelKeys`, `MatchLabelKeysInPodAffinity`, on since 1.31),
    // and Karpenter reads the merged selector; a key the pod has no label for adds nothing. A
    // pod read back from a cluster already carries them: not added twice.
    if let Some(selector) = selector.as_mut() {
        for (keys, op) in [(matching, SelectorOp::In), (mismatching, SelectorOp::NotIn)] {
            for key in keys {
                let Some(value) = pod_labels.get(key) else {
                    continue;
                };
                let expr = SelectorExpr {
                    key: key.clone(),
                    op,
                    values: vec![value.clone()],
                };
                if !selector.match_expressions.contains(&expr) {
                    selector.match_expressions.push(expr);
                }
            }
        }
    }
    Ok(PodAffinityTerm {
        label_selector: selector,
        namespaces: t.namespaces.clone().unwrap_or_default(),
        namespace_selector: t
            .namespace_selector
            .as_ref()
            .map(|s| label_selector(ctx, &format!("{path}.namespaceSelector"), s))
            .transpose()?,
        topology_key,
    })
}

/// `matchLabelKeys` / `mismatchLabelKeys` of a pod affinity term or a topology spread, as the
/// API server checks them (`k8s.io/kubernetes pkg/apis/core/validation/validation.go`
/// `validateLabelKeys`): only beside a `labelSelector`, each a valid label key.
fn label_keys(
    ctx: &Ctx,
    path: &str,
    keys: &[String],
    has_selector: bool,
) -> Result<(), InputError> {
    if keys.is_empty() {
        return Ok(());
    }
    if !has_selector {
        return Err(ctx.invalid(path, "must not be specified when labelSelector is not set"));
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(problem) = validate::label_key_problem(key) {
            return Err(ctx.invalid(format!("{path}[{i}]"), problem));
        }
    }
    Ok(())
}

type AffinityTerms = (Vec<PodAffinityTerm>, Vec<Weighted<PodAffinityTerm>>);

pub(super) fn pod_affinity(
    ctx: &Ctx,
    path: &str,
    a: Option<&PodAffinity>,
    pod_labels: &BTreeMap<String, String>,
) -> Result<AffinityTerms, InputError> {
    let Some(a) = a else {
        return Ok((vec![], vec![]));
    };
    let required = a
        .required_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            affinity_term(
                ctx,
                &format!("{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"),
                t,
                pod_labels,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let preferred = a
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, w)| {
            let at = format!("{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            let term = w
                .pod_affinity_term
                .as_ref()
                .ok_or_else(|| ctx.invalid(format!("{at}.podAffinityTerm"), "required"))?;
            Ok(Weighted {
                weight: weight(ctx, &format!("{at}.weight"), w.weight)?,
                term: affinity_term(ctx, &format!("{at}.podAffinityTerm"), term, pod_labels)?,
            })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    Ok((required, preferred))
}

/// A list of tolerations at `path`.
pub(super) fn tolerations(
    ctx: &Ctx,
    path: &str,
    list: Option<&[TolerationSpec]>,
) -> Result<Vec<Toleration>, InputError> {
    list.into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| toleration(ctx, &format!("{path}[{i}]"), t))
        .collect()
}

/// One toleration, checked as `k8s.io/kubernetes pkg/apis/core/validation/validation.go`
/// `ValidateTolerations` does: the key's syntax, `tolerationSeconds` only with `NoExecute`, an
/// Equal toleration's value a label value (reported at `operator`, as the API server does).
fn toleration(ctx: &Ctx, path: &str, t: &TolerationSpec) -> Result<Toleration, InputError> {
    let key = t.key.clone().unwrap_or_default();
    if let Some(problem) = (!key.is_empty())
        .then(|| validate::label_key_problem(&key))
        .flatten()
    {
        return Err(ctx.invalid(format!("{path}.key"), problem));
    }
    let effect = match t.effect.as_deref() {
        None | Some("") => None,
        Some(e) => Some(validate::effect(ctx, &format!("{path}.effect"), Some(e))?),
    };
    if t.toleration_seconds.is_some() && effect != Some(Effect::NoExecute) {
        return Err(ctx.invalid(
            format!("{path}.effect"),
            "must be NoExecute when tolerationSeconds is set",
        ));
    }
    match t.operator.as_deref() {
        None | Some("Equal") => {
            if key.is_empty() {
                return Err(ctx.invalid(
                    format!("{path}.operator"),
                    "must be Exists when key is empty",
                ));
            }
            if let Some(problem) = validate::label_value_problem(t.value.as_deref().unwrap_or("")) {
                return Err(ctx.invalid(format!("{path}.operator"), problem));
            }
            Ok(Toleration::equal(
                &key,
                t.value.as_deref().unwrap_or(""),
                effect,
            ))
        }
        Some("Exists") => {
            if t.value.as_deref().is_some_and(|v| !v.is_empty()) {
                return Err(ctx.invalid(
                    format!("{path}.value"),
                    "must be empty when operator is Exists",
                ));
            }
            Ok(Toleration::exists(&key, effect))
        }
        // Kubernetes 1.35's numeric operators (alpha, `TaintTolerationComparisonOperators`):
        // the API server wants a key and a canonical integer (`validateTolerations`,
        // `content.IsDecimalInteger`); Karpenter v1.14.1 honours them.
        Some(op @ ("Lt" | "Gt")) => {
            if key.is_empty() {
                return Err(ctx.invalid(
                    format!("{path}.operator"),
                    "must be Exists when key is empty",
                ));
            }
            let value = t.value.as_deref().unwrap_or("");
            if crate::model::taints::decimal_integer(value).is_none() {
                return Err(ctx.invalid(
                    format!("{path}.value"),
                    format!("must be a valid decimal integer in canonical form for operator {op}, got {value:?}"),
                ));
            }
            let operator = match op {
                "Lt" => TolerationOperator::Lt,
                _ => TolerationOperator::Gt,
            };
            Ok(Toleration {
                key,
                operator,
                value: value.to_string(),
                effect,
            })
        }
        Some(op) => Err(ctx.invalid(
            format!("{path}.operator"),
            format!("unknown operator {op:?} (expected Equal, Exists, Lt or Gt)"),
        )),
    }
}

/// A pod's topology spread constraints at `path`; the API server refuses two with the same
/// `{topologyKey, whenUnsatisfiable}` (`validateTopologySpreadConstraints`, "Duplicate value").
pub(super) fn spreads(
    ctx: &Ctx,
    path: &str,
    list: Option<&[TopologySpreadConstraintSpec]>,
) -> Result<Vec<TopologySpread>, InputError> {
    let mut out: Vec<TopologySpread> = Vec::new();
    for (i, c) in list.into_iter().flatten().enumerate() {
        let s = spread(ctx, &format!("{path}[{i}]"), c)?;
        // Named at the first of the two, as `ValidateSpreadConstraintNotRepeat` does.
        if let Some(first) = out.iter().position(|o| {
            o.topology_key == s.topology_key && o.when_unsatisfiable == s.when_unsatisfiable
        }) {
            return Err(ctx.invalid(
                format!("{path}[{first}].{{topologyKey, whenUnsatisfiable}}"),
                format!(
                    "duplicate value {{{}, {:?}}}: another constraint has the same topologyKey and whenUnsatisfiable",
                    s.topology_key, s.when_unsatisfiable
                ),
            ));
        }
        out.push(s);
    }
    Ok(out)
}

/// One constraint, checked as `validateTopologySpreadConstraints` does: `maxSkew` ≥ 1, a
/// `topologyKey` (only required: `ValidateTopologyKey` does not check its syntax, unlike an
/// affinity term's), `minDomains` ≥ 1 and only with `DoNotSchedule`.
fn spread(
    ctx: &Ctx,
    path: &str,
    c: &TopologySpreadConstraintSpec,
) -> Result<TopologySpread, InputError> {
    let max_skew = match c.max_skew {
        Some(n) if n >= 1 && n <= i64::from(i32::MAX) => n as i32,
        Some(n) => {
            return Err(ctx.invalid(
                format!("{path}.maxSkew"),
                format!("must be at least 1, got {n}"),
            ))
        }
        None => return Err(ctx.invalid(format!("{path}.maxSkew"), "required")),
    };
    let topology_key = c
        .topology_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ctx.invalid(format!("{path}.topologyKey"), "required"))?;
    let when_unsatisfiable = match c.when_unsatisfiable.as_deref() {
        Some("DoNotSchedule") => WhenUnsatisfiable::DoNotSchedule,
        Some("ScheduleAnyway") => WhenUnsatisfiable::ScheduleAnyway,
        other => {
            return Err(ctx.invalid(
                format!("{path}.whenUnsatisfiable"),
                format!(
                    "{} (expected DoNotSchedule or ScheduleAnyway)",
                    other.map_or("required".to_string(), |o| format!("unknown value {o:?}"))
                ),
            ))
        }
    };
    let min_domains = match c.min_domains {
        None => None,
        Some(n) if n >= 1 && n <= i64::from(i32::MAX) => Some(n as i32),
        Some(n) => {
            return Err(ctx.invalid(
                format!("{path}.minDomains"),
                format!("must be at least 1, got {n}"),
            ))
        }
    };
    if min_domains.is_some() && when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule {
        return Err(ctx.invalid(
            format!("{path}.minDomains"),
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ));
    }
    let policy = |field: &str, v: Option<&str>, default_honor: bool| match v {
        None => Ok(default_honor),
        Some("Honor") => Ok(true),
        Some("Ignore") => Ok(false),
        Some(o) => Err(ctx.invalid(
            format!("{path}.{field}"),
            format!("unknown policy {o:?} (expected Honor or Ignore)"),
        )),
    };
    let match_label_keys = c.match_label_keys.clone().unwrap_or_default();
    label_keys(
        ctx,
        &format!("{path}.matchLabelKeys"),
        &match_label_keys,
        c.label_selector.is_some(),
    )?;
    Ok(TopologySpread {
        max_skew,
        topology_key,
        when_unsatisfiable,
        label_selector: c
            .label_selector
            .as_ref()
            .map(|s| label_selector(ctx, &format!("{path}.labelSelector"), s))
            .transpose()?,
        min_domains,
        match_label_keys,
        honor_taints: policy("nodeTaintsPolicy", c.node_taints_policy.as_deref(), false)?,
        ignore_node_affinity: !policy(
            "nodeAffinityPolicy",
            c.node_affinity_policy.as_deref(),
            true,
        )?,
    })
}
