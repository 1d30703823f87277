//! Field-level checks and conversions shared by every generation: requirements, labels,
//! taints, quantities, durations, kubelet settings and budgets. Each returns the model value or
//! an [`InputError`] naming the exact field, so a typo is reported where it was made instead of
//! surfacing later as a puzzling plan.

use std::collections::BTreeMap;

use super::error::{Ctx, InputError};
use super::meta::{
    BudgetSpec, IntOrString, KubeletConfiguration, ObjectMeta, RequirementSpec, ResourceList,
    StringMap, TaintSpec,
};
use crate::model::labels;
use crate::model::nodepool::{Budget, KubeletConfig};
use crate::model::quantity::parse_milli;
use crate::model::requirements::{NodeSelectorRequirement, Operator};
use crate::model::resources::Resources;
use crate::model::taints::{Effect, Taint};

/// The operators an API accepts, in the order the API documents them.
pub(crate) const NODEPOOL_OPERATORS_V1: &[Operator] = &[
    Operator::In,
    Operator::NotIn,
    Operator::Exists,
    Operator::DoesNotExist,
    Operator::Gt,
    Operator::Lt,
    Operator::Gte,
    Operator::Lte,
];

/// v1alpha5, v1beta1 and pods: no `Gte`/`Lte`.
pub(crate) const CLASSIC_OPERATORS: &[Operator] = &[
    Operator::In,
    Operator::NotIn,
    Operator::Exists,
    Operator::DoesNotExist,
    Operator::Gt,
    Operator::Lt,
];

fn operator_list(allowed: &[Operator]) -> String {
    allowed
        .iter()
        .map(|o| o.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `path.key` for plain keys, `path[key]` for keys with dots or slashes (label keys, extended
/// resource names), so the path stays unambiguous.
pub(crate) fn key_path(path: &str, key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!("{path}.{key}")
    } else {
        format!("{path}[{key}]")
    }
}

/// The name part of a qualified name / label value: alphanumerics, `-`, `_`, `.`, starting and
/// ending with an alphanumeric, at most 63 characters.
fn valid_name_segment(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS subdomain: lowercase alphanumerics, `-`, `.`, at most 253 characters.
fn valid_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Why `name` cannot name an object of `kind`, as the API server says it
/// (`apimachinery pkg/api/validation NameIsDNSSubdomain`, `NameIsDNSLabel` for Namespaces).
pub(crate) fn object_name_problem(kind: &str, name: &str) -> Option<String> {
    let label = kind == "Namespace";
    let ok = valid_dns_subdomain(name) && !(label && name.contains('.'));
    (!ok).then(|| {
        format!(
            "{name:?} is not a valid name: lowercase letters, digits and '-'{}, starting and ending with a letter or digit, at most {} characters",
            if label { "" } else { " ('.' between parts)" },
            if label { 63 } else { 253 }
        )
    })
}

/// The first of an object's metadata fields the API server refuses on create, with why: its
/// name and namespace, its labels' keys and values and its annotations' keys
/// (`apimachinery pkg/api/validation/objectmeta.go` `ValidateObjectMeta`: `ValidateLabels`,
/// `ValidateAnnotations`, which lower-cases a key before `IsQualifiedName`).
pub(crate) fn object_meta_problem(kind: &str, meta: &ObjectMeta) -> Option<(String, String)> {
    let names = [
        ("metadata.name", kind, meta.name.as_deref()),
        ("metadata.namespace", "Namespace", meta.namespace.as_deref()),
    ];
    let name = names.into_iter().find_map(|(field, k, v)| {
        v.and_then(|v| object_name_problem(k, v))
            .map(|m| (field.to_string(), m))
    });
    let labels = || {
        meta.labels.iter().flatten().find_map(|(k, v)| {
            label_key_problem(k)
                .or_else(|| label_value_problem(v))
                .map(|m| (key_path("metadata.labels", k), m))
        })
    };
    let annotations = || {
        meta.annotations.iter().flatten().find_map(|(k, _)| {
            label_key_problem(&k.to_ascii_lowercase()).map(|m| {
                let why = m.replacen("invalid label key", "invalid annotation key", 1);
                (key_path("metadata.annotations", k), why)
            })
        })
    };
    // `ValidatePodSpecificAnnotations` (a Pod's and a pod template's): the deletion cost must be
    // an int32 written plainly, so Karpenter's `EvictionCost` only ever parses one of those.
    let deletion_cost = || {
        let v = meta.annotations.as_ref()?.get(labels::POD_DELETION_COST)?;
        (kind == "Pod" && !is_valid_deletion_cost(v)).then(|| {
            (
                key_path("metadata.annotations", labels::POD_DELETION_COST),
                format!("invalid value {v:?}: must be a 32bit integer"),
            )
        })
    };
    name.or_else(labels)
        .or_else(annotations)
        .or_else(deletion_cost)
}

/// `k8s.io/kubernetes pkg/apis/core/helper GetDeletionCostFromPodAnnotations`: no leading `+`
/// nor leading zero (`0` alone is fine), and an `int32`.
fn is_valid_deletion_cost(v: &str) -> bool {
    let first_ok = match v.as_bytes().first() {
        Some(b'-') => true,
        Some(b'0') => v == "0",
        Some(c) => c.is_ascii_digit(),
        None => false,
    };
    first_ok && v.parse::<i32>().is_ok()
}

/// A required node selector needs a term (`k8s.io/kubernetes pkg/apis/core/validation`
/// `ValidateNodeSelector`: "must have at least one node selector term"), for a pod's required
/// node affinity and a PersistentVolume's `nodeAffinity.required`.
pub(crate) fn node_selector_terms<T>(
    ctx: &Ctx,
    path: &str,
    terms: Option<&[T]>,
) -> Result<(), InputError> {
    if terms.is_none_or(<[T]>::is_empty) {
        return Err(ctx.invalid(path, "must have at least one node selector term"));
    }
    Ok(())
}

/// Why `key` is not a valid label key (Kubernetes' `IsQualifiedName`).
pub(crate) fn label_key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if !valid_dns_subdomain(p) {
            return Some(format!(
                "invalid label key {key:?}: the prefix must be a DNS subdomain (lowercase letters, digits, '-', '.')"
            ));
        }
    }
    if !valid_name_segment(name) {
        return Some(format!(
            "invalid label key {key:?}: the name must be 1-63 characters of letters, digits, '-', '_', '.', starting and ending with a letter or digit"
        ));
    }
    None
}

/// Why `value` is not a valid label value (empty is valid).
pub(crate) fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() || valid_name_segment(value) {
        None
    } else {
        Some(format!(
            "invalid label value {value:?}: at most 63 characters of letters, digits, '-', '_', '.', starting and ending with a letter or digit"
        ))
    }
}

/// Whose rules a requirement list follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequirementRules {
    /// Kubernetes' node selector rules (a PersistentVolume's node affinity; `ValidateNodeSelectorRequirement`:
    /// `Exists`/`DoesNotExist` take no values) and lists Karpenter writes itself (an
    /// EC2NodeClass's status): no label restrictions, no `minValues`.
    Core,
    /// A v1alpha5 Provisioner's: its webhook's label restrictions (docs/karpenter.md §1.5), no
    /// `minValues` (the API server would prune it).
    Provisioner,
    /// A v1beta1 or v1 NodePool's: the label restrictions with the CRD's CEL domain rule, and
    /// `minValues`.
    NodePool,
    /// A NodeClaim's or NodeOverlay's (their keys are checked by [`claim_keys`]); `min_values`:
    /// whether the kind has the field.
    Claim { min_values: bool },
}

impl RequirementRules {
    /// Whether `Exists`/`DoesNotExist` may carry values. Karpenter's CRDs have no such rule and
    /// its `ValidateRequirement` (`core v1.14.1: pkg/apis/v1/nodeclaim_validation.go`) has none
    /// either; the values are ignored (`scheduling.NewRequirement`). Kubernetes refuses them on
    /// its own kinds.
    fn values_on_exists(self) -> bool {
        matches!(self, Self::NodePool | Self::Claim { .. })
    }
}

/// Converts and checks a requirement list (`path` is the list's field path) by `rules`.
pub(crate) fn requirements(
    ctx: &Ctx,
    path: &str,
    specs: &[RequirementSpec],
    allowed: &[Operator],
    rules: RequirementRules,
) -> Result<Vec<NodeSelectorRequirement>, InputError> {
    let restricted = matches!(
        rules,
        RequirementRules::Provisioner | RequirementRules::NodePool
    );
    let min_values = matches!(
        rules,
        RequirementRules::NodePool | RequirementRules::Claim { min_values: true }
    );
    let mut out = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let key = match spec.key.as_deref() {
            Some(k) if !k.is_empty() => k,
            _ => return Err(ctx.invalid(format!("{at}.key"), "required")),
        };
        if let Some(problem) = label_key_problem(key) {
            return Err(ctx.invalid(format!("{at}.key"), problem));
        }
        if restricted {
            let cel = (rules == RequirementRules::NodePool)
                .then(|| labels::cel_domain_reason(key))
                .flatten();
            if let Some(why) = labels::restricted_reason(key).or(cel) {
                return Err(ctx.invalid(
                    format!("{at}.key"),
                    format!("label {key:?} is restricted: {why}"),
                ));
            }
        }
        let operator = parse_operator(
            ctx,
            &format!("{at}.operator"),
            spec.operator.as_deref(),
            allowed,
        )?;
        let values = spec.values.clone().unwrap_or_default();
        for (j, v) in values.iter().enumerate() {
            if let Some(problem) = label_value_problem(v) {
                return Err(ctx.invalid(format!("{at}.values[{j}]"), problem));
            }
        }
        let min = match (min_values, spec.min_values) {
            (true, Some(n)) => Some(
                u32::try_from(n)
                    .ok()
                    .filter(|n| (1..=50).contains(n))
                    .ok_or_else(|| {
                        ctx.invalid(
                            format!("{at}.minValues"),
                            format!("must be between 1 and 50, got {n}"),
                        )
                    })?,
            ),
            _ => None,
        };
        let req = NodeSelectorRequirement {
            key: key.to_string(),
            operator,
            values,
            min_values: min,
        };
        let checked = if rules.values_on_exists()
            && !req.values.is_empty()
            && matches!(req.operator, Operator::Exists | Operator::DoesNotExist)
        {
            NodeSelectorRequirement {
                values: Vec::new(),
                ..req.clone()
            }
            .validate()
        } else {
            req.validate()
        };
        checked.map_err(|e| ctx.invalid(at.clone(), e))?;
        out.push(req);
    }
    Ok(out)
}

/// `RuntimeValidate`'s well-known values (`core v1.14.1: pkg/apis/v1/nodeclaim_validation.go`
/// `validateWellKnownValues`; `pkg/controllers/nodepool/validation/suite_test.go`): an `In` on a
/// key with known values that names none of them, or fewer than its `minValues`, leaves the
/// NodePool `ValidationSucceeded=False` (never used); unknown values beside a known one are only
/// logged by Karpenter, and never match an offering.
pub(crate) fn well_known_values(
    ctx: &Ctx,
    path: &str,
    reqs: &[NodeSelectorRequirement],
) -> Result<(), InputError> {
    for (i, r) in reqs.iter().enumerate() {
        let Some(known) = labels::known_values(&r.key) else {
            continue;
        };
        if r.operator != Operator::In {
            continue;
        }
        let valid = r
            .values
            .iter()
            .filter(|v| known.contains(&v.as_str()))
            .count();
        let problem = if valid == 0 {
            "no valid values found".to_string()
        } else if let Some(min) = r.min_values.filter(|m| valid < *m as usize) {
            format!("not enough valid values (at least {min}) found")
        } else {
            continue;
        };
        return Err(ctx.invalid(
            format!("{path}[{i}].values"),
            format!(
                "{problem} in {:?} for {}, expected one of: {} (the NodePool would not become ready)",
                r.values,
                r.key,
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The key rules of the NodeClaim and NodeOverlay CRDs (`core v1.14.1:
/// pkg/apis/crds/karpenter.sh_nodeclaims.yaml`, `karpenter.sh_nodeoverlays.yaml`; v1beta1's
/// NodeClaim has the same, its `karpenter.k8s.aws` list a subset): a NodePool's restrictions
/// but for `karpenter.sh/nodepool`, which Karpenter writes into every NodeClaim it creates, and
/// the keys in `allowed` (a v1 NodeClaim's: [`labels::EC2NODECLASS`], which v1 Karpenter writes
/// too — the template's labels become requirements, `nodeclaimtemplate.go
/// NewNodeClaimTemplate` — and only the v1 CRD's list names).
/// Tests: `nodeclaim_validation_cel_test.go` / `nodeoverlay_validation_test.go` "should fail
/// for restricted domains".
pub(crate) fn claim_keys(
    ctx: &Ctx,
    path: &str,
    specs: &[RequirementSpec],
    allowed: &[&str],
) -> Result<(), InputError> {
    for (i, spec) in specs.iter().enumerate() {
        let Some(key) =
            (spec.key.as_deref()).filter(|k| *k != labels::NODEPOOL && !allowed.contains(k))
        else {
            continue;
        };
        if let Some(why) = labels::restricted_reason(key).or_else(|| labels::cel_domain_reason(key))
        {
            return Err(ctx.invalid(
                format!("{path}[{i}].key"),
                format!("label {key:?} is restricted: {why}"),
            ));
        }
    }
    Ok(())
}

/// A list's `maxItems` in the CRDs.
pub(crate) fn max_items(
    ctx: &Ctx,
    path: &str,
    len: usize,
    max: usize,
    what: &str,
) -> Result<(), InputError> {
    if len > max {
        return Err(ctx.invalid(path, format!("at most {max} {what}, got {len}")));
    }
    Ok(())
}

/// Parses an operator, naming the expected ones when it is missing or unknown.
pub(crate) fn parse_operator(
    ctx: &Ctx,
    path: &str,
    text: Option<&str>,
    allowed: &[Operator],
) -> Result<Operator, InputError> {
    let expected = operator_list(allowed);
    let text = text.ok_or_else(|| ctx.invalid(path, format!("required (expected {expected})")))?;
    match Operator::parse(text) {
        Some(op) if allowed.contains(&op) => Ok(op),
        _ => Err(ctx.invalid(
            path,
            format!("unknown operator {text:?} (expected {expected})"),
        )),
    }
}

/// Checks a label map (`restricted` applies the NodePool restrictions).
pub(crate) fn label_map(
    ctx: &Ctx,
    path: &str,
    map: &StringMap,
    restricted: bool,
) -> Result<(), InputError> {
    for (k, v) in map {
        let at = key_path(path, k);
        if let Some(problem) = label_key_problem(k) {
            return Err(ctx.invalid(at, problem));
        }
        if let Some(problem) = label_value_problem(v) {
            return Err(ctx.invalid(at, problem));
        }
        if restricted {
            if let Some(why) = labels::restricted_reason(k) {
                return Err(ctx.invalid(at, format!("label {k:?} is restricted: {why}")));
            }
        }
    }
    Ok(())
}

/// The CRDs' CEL domain rule on a NodePool template's label keys ([`labels::cel_domain_reason`]).
pub(crate) fn cel_label_domains(ctx: &Ctx, path: &str, map: &StringMap) -> Result<(), InputError> {
    for k in map.keys() {
        if let Some(why) = labels::cel_domain_reason(k) {
            return Err(ctx.invalid(
                key_path(path, k),
                format!("label {k:?} is restricted: {why}"),
            ));
        }
    }
    Ok(())
}

/// A NodePool's taints and startup taints share no key/effect pair (`core v1.14.1:
/// pkg/apis/v1/nodeclaim_validation.go validateTaints`, one set over both lists, part of
/// `RuntimeValidate`: such a NodePool is never ready; the v1beta1 and v1alpha5 webhooks refuse
/// it on NodePools, NodeClaims and Provisioners, `core v0.37.7: pkg/apis/v1beta1/
/// nodeclaim_validation.go`, `v0.31.5: pkg/apis/v1alpha5/provisioner_validation.go`
/// `validateTaints`). Named at the repeat; `path` holds both lists.
pub(crate) fn unique_taints(
    ctx: &Ctx,
    path: &str,
    taints: &[Taint],
    startup: &[Taint],
) -> Result<(), InputError> {
    let all = taints
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("{path}.taints[{i}]"), t))
        .chain(
            startup
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("{path}.startupTaints[{i}]"), t)),
        );
    let mut seen = std::collections::HashSet::new();
    for (at, t) in all {
        if !seen.insert((t.key.as_str(), t.effect)) {
            return Err(ctx.invalid(
                at,
                format!(
                    "duplicate taint Key/Effect pair {}={}",
                    t.key,
                    t.effect.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// Parses a taint effect strictly.
pub(crate) fn effect(ctx: &Ctx, path: &str, text: Option<&str>) -> Result<Effect, InputError> {
    const EXPECTED: &str = "expected NoSchedule, PreferNoSchedule or NoExecute";
    match text {
        None | Some("") => Err(ctx.invalid(path, format!("required ({EXPECTED})"))),
        Some(t) => Effect::parse(t)
            .ok_or_else(|| ctx.invalid(path, format!("unknown taint effect {t:?} ({EXPECTED})"))),
    }
}

/// Converts a taint list.
pub(crate) fn taints(ctx: &Ctx, path: &str, specs: &[TaintSpec]) -> Result<Vec<Taint>, InputError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("{path}[{i}]");
            let key = match t.key.as_deref() {
                Some(k) if !k.is_empty() => k,
                _ => return Err(ctx.invalid(format!("{at}.key"), "required")),
            };
            if let Some(problem) = label_key_problem(key) {
                return Err(ctx.invalid(
                    format!("{at}.key"),
                    problem.replace("label key", "taint key"),
                ));
            }
            // A value has a key's shape (the CRDs' pattern on `value`; `IsQualifiedName` in
            // core v1.14.1: pkg/apis/v1/nodeclaim_validation.go `validateTaintsField`, and in
            // the v1alpha5 webhook): `???` or `a b` are refused.
            let value = t.value.as_deref().unwrap_or("");
            if let Some(problem) = (!value.is_empty())
                .then(|| label_key_problem(value))
                .flatten()
            {
                return Err(ctx.invalid(
                    format!("{at}.value"),
                    problem.replace("invalid label key", "invalid taint value"),
                ));
            }
            let effect = effect(ctx, &format!("{at}.effect"), t.effect.as_deref())?;
            // `timeAdded` is a `date-time` (the CRDs' `format`; a Node's is a `metav1.Time`).
            if let Some(time) = t
                .time_added
                .as_deref()
                .filter(|s| crate::model::time::parse_rfc3339(s).is_none())
            {
                return Err(ctx.invalid(
                    format!("{at}.timeAdded"),
                    format!("invalid date-time {time:?} (RFC 3339, such as 2024-01-01T00:00:00Z)"),
                ));
            }
            Ok(Taint::new(key, value, effect))
        })
        .collect()
}

/// Parses one quantity.
pub(crate) fn quantity(ctx: &Ctx, path: &str, text: &str) -> Result<i64, InputError> {
    parse_milli(text).map_err(|e| ctx.invalid(path, e.to_string()))
}

/// A ResourceList as milli-units per resource name (NodePool limits keep unknown names).
pub(crate) fn milli_map(
    ctx: &Ctx,
    path: &str,
    list: &ResourceList,
) -> Result<BTreeMap<String, i64>, InputError> {
    list.iter()
        .map(|(name, q)| {
            Ok((
                name.clone(),
                quantity(ctx, &key_path(path, name), &q.as_text())?,
            ))
        })
        .collect()
}

/// A ResourceList as [`Resources`].
pub(crate) fn resources(
    ctx: &Ctx,
    path: &str,
    list: Option<&ResourceList>,
) -> Result<Resources, InputError> {
    let mut out = Resources::new();
    for (name, q) in list.into_iter().flatten() {
        out.set(name, quantity(ctx, &key_path(path, name), &q.as_text())?);
    }
    Ok(out)
}

/// Whether `text` matches `^([0-9]+(s|m|h))+$` (Karpenter's duration pattern).
fn is_duration(text: &str) -> bool {
    let mut digits = 0usize;
    let mut parts = 0usize;
    for c in text.chars() {
        match c {
            '0'..='9' => digits += 1,
            's' | 'm' | 'h' if digits > 0 => {
                digits = 0;
                parts += 1;
            }
            _ => return false,
        }
    }
    digits == 0 && parts > 0
}

/// Checks a duration field; `never` allows the literal `Never`.
pub(crate) fn duration(
    ctx: &Ctx,
    path: &str,
    text: &str,
    never: bool,
) -> Result<String, InputError> {
    if is_duration(text) || (never && text == "Never") {
        Ok(text.to_string())
    } else {
        let expected = if never {
            "a duration such as 30s, 10m, 720h or 1h30m, or Never"
        } else {
            "a duration such as 30s, 10m or 1h30m"
        };
        Err(ctx.invalid(
            path,
            format!("invalid duration {text:?} (expected {expected})"),
        ))
    }
}

/// Converts kubelet settings.
pub(crate) fn kubelet(
    ctx: &Ctx,
    path: &str,
    k: &KubeletConfiguration,
) -> Result<KubeletConfig, InputError> {
    let non_negative = |field: &str, v: Option<i64>| match v {
        Some(n) if n < 0 => Err(ctx.invalid(
            format!("{path}.{field}"),
            format!("must not be negative, got {n}"),
        )),
        _ => Ok(v),
    };
    Ok(KubeletConfig {
        max_pods: non_negative("maxPods", k.max_pods)?,
        pods_per_core: non_negative("podsPerCore", k.pods_per_core)?,
        system_reserved: reserved(
            ctx,
            &format!("{path}.systemReserved"),
            k.system_reserved.as_ref(),
        )?,
        kube_reserved: reserved(
            ctx,
            &format!("{path}.kubeReserved"),
            k.kube_reserved.as_ref(),
        )?,
        kube_reserved_zero: k
            .kube_reserved
            .iter()
            .flatten()
            .filter(|(_, q)| parse_milli(&q.as_text()).is_ok_and(|v| v == 0))
            .map(|(name, _)| name.clone())
            .collect(),
        eviction_hard: k.eviction_hard.clone().unwrap_or_default(),
        eviction_soft: k.eviction_soft.clone().unwrap_or_default(),
        cluster_dns: k.cluster_dns.clone().unwrap_or_default(),
    })
}

/// The kubelet CEL rules and value patterns of the v1beta1 NodePool (v0.37.8) and v1
/// EC2NodeClass (`aws v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`) CRDs, which
/// the API server applies before Karpenter sees the object: eviction signals only from the six
/// the kubelet knows, threshold values a percentage (at most `100%`) or a quantity (or empty),
/// the image GC percentages within 0–100 and `imageGCHighThresholdPercent` above
/// `imageGCLowThresholdPercent`, and `evictionSoft` /
/// `evictionSoftGracePeriod` with the same keys. `webhook` reads instead the v1alpha5
/// Provisioner's webhook (`core v0.31.5: pkg/apis/v1alpha5/provisioner_validation.go`
/// `validateKubeletConfiguration`), which differs in three ways: reservations may be numbers
/// (`v1.ResourceList`), a percentage is any number from 0 to 100 (`strconv.ParseFloat`) and an
/// empty threshold is not a quantity, and `imageGCHighThresholdPercent` equal to the low one passes
/// (only `high < low` fails); its CRD keeps the 0–100 range.
pub(crate) fn kubelet_crd_rules(
    ctx: &Ctx,
    path: &str,
    k: &KubeletConfiguration,
    webhook: bool,
) -> Result<(), InputError> {
    const SIGNALS: [&str; 6] = [
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
        "pid.available",
    ];
    // v1beta1 and v1 type the reservations `map[string]string` (v1alpha5 took int-or-string
    // quantities), so `cpu: 1` fails there as any number where text is expected (a float such
    // as `1.5` is kept as its text when read, and passes: docs/commands.md "Input").
    for (field, map) in [
        ("kubeReserved", &k.kube_reserved),
        ("systemReserved", &k.system_reserved),
    ] {
        for (key, value) in map.iter().flatten().filter(|_| !webhook) {
            if let IntOrString::Int(n) = value {
                return Err(ctx.invalid(
                    key_path(&format!("{path}.{field}"), key),
                    format!("invalid type: integer `{n}`, expected a string"),
                ));
            }
        }
    }
    let maps = [
        ("evictionHard", k.eviction_hard.as_ref(), true),
        ("evictionSoft", k.eviction_soft.as_ref(), true),
        (
            "evictionSoftGracePeriod",
            k.eviction_soft_grace_period.as_ref(),
            false,
        ),
    ];
    for (field, map, thresholds) in maps {
        for (key, value) in map.into_iter().flatten() {
            let at = key_path(&format!("{path}.{field}"), key);
            if !SIGNALS.contains(&key.as_str()) {
                return Err(ctx.invalid(
                    at,
                    format!("valid keys for {field} are {}", SIGNALS.join(", ")),
                ));
            }
            let valid = if webhook {
                is_webhook_threshold(value)
            } else {
                is_threshold(value)
            };
            if thresholds && !valid {
                return Err(ctx.invalid(
                    at,
                    format!("invalid threshold {value:?} (expected a percentage up to 100% or a quantity)"),
                ));
            }
        }
    }
    // `minimum: 0`, `maximum: 100` on both (integration/validation_test.go "should error if
    // imageGCHighThresholdPercent or imageGCLowThresholdPercent is negative").
    for (field, value) in [
        (
            "imageGCHighThresholdPercent",
            k.image_gc_high_threshold_percent,
        ),
        (
            "imageGCLowThresholdPercent",
            k.image_gc_low_threshold_percent,
        ),
    ] {
        if let Some(v) = value.filter(|v| !(0..=100).contains(v)) {
            return Err(ctx.invalid(
                format!("{path}.{field}"),
                format!("must be between 0 and 100, got {v}"),
            ));
        }
    }
    if let (Some(high), Some(low)) = (
        k.image_gc_high_threshold_percent,
        k.image_gc_low_threshold_percent,
    ) {
        if high < low || (high == low && !webhook) {
            return Err(ctx.invalid(
                path,
                "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
            ));
        }
    }
    for (field, map, other, other_map) in [
        (
            "evictionSoft",
            &k.eviction_soft,
            "evictionSoftGracePeriod",
            &k.eviction_soft_grace_period,
        ),
        (
            "evictionSoftGracePeriod",
            &k.eviction_soft_grace_period,
            "evictionSoft",
            &k.eviction_soft,
        ),
    ] {
        for key in map.iter().flat_map(|m| m.keys()) {
            if !other_map.as_ref().is_some_and(|o| o.contains_key(key)) {
                return Err(ctx.invalid(
                    key_path(&format!("{path}.{field}"), key),
                    format!("{field} OwnerKey does not have a matching {other}"),
                ));
            }
        }
    }
    Ok(())
}

/// The CRD's threshold pattern: `^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||<quantity>)$`.
fn is_threshold(value: &str) -> bool {
    let Some(pct) = value.strip_suffix('%') else {
        return value.is_empty() || parse_milli(value).is_ok();
    };
    let (int, frac) = pct.split_once('.').unwrap_or((pct, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let frac_ok = !pct.contains('.') || (1..=2).contains(&frac.len()) && digits(frac);
    if int == "100" {
        return frac_ok && frac.chars().all(|c| c == '0');
    }
    (1..=2).contains(&int.len()) && digits(int) && frac_ok
}

/// The v1alpha5 webhook's threshold (`validateEvictionThresholds`): a `%` suffix on a number
/// from 0 to 100 (Go's `ParseFloat`, so `5.555%` and `1e1%` pass, and `NaN%`, neither below 0
/// nor above 100), else a quantity.
fn is_webhook_threshold(value: &str) -> bool {
    match value.strip_suffix('%') {
        Some(pct) => pct
            .trim_matches('%')
            .parse::<f64>()
            .is_ok_and(|p| p.is_nan() || (0.0..=100.0).contains(&p)),
        None => parse_milli(value).is_ok(),
    }
}

/// `kubeReserved` / `systemReserved`: the CRDs' rules (`aws: pkg/apis/v1/ec2nodeclass.go`
/// KubeletConfiguration validations) — only `cpu`, `memory`, `ephemeral-storage` and `pid`, and
/// no negative quantity.
fn reserved(ctx: &Ctx, path: &str, list: Option<&ResourceList>) -> Result<Resources, InputError> {
    const KEYS: [&str; 4] = ["cpu", "memory", "ephemeral-storage", "pid"];
    for (name, q) in list.into_iter().flatten() {
        let field = key_path(path, name);
        if !KEYS.contains(&name.as_str()) {
            return Err(ctx.invalid(
                field,
                format!(
                    "unknown resource {name:?} (expected one of {})",
                    KEYS.join(", ")
                ),
            ));
        }
        if quantity(ctx, &field, &q.as_text())? < 0 {
            return Err(ctx.invalid(field, format!("must not be negative, got {}", q.as_text())));
        }
    }
    resources(ctx, path, list)
}

/// Whether `nodes` matches `^((100|[0-9]{1,2})%|[0-9]+)$`.
fn is_budget_nodes(text: &str) -> bool {
    match text.strip_suffix('%') {
        Some(pct) => {
            !pct.is_empty()
                && pct.len() <= 3
                && pct.chars().all(|c| c.is_ascii_digit())
                && pct.parse::<u32>().is_ok_and(|n| n <= 100)
        }
        None => !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Whether a budget's `duration` matches the v1 and v1beta1 CRDs' pattern
/// `^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$` (core v1.14.1: `pkg/apis/v1/nodepool.go`
/// `Budget.Duration`): whole hours and/or minutes — `30s` or `1h30m15s` are refused.
fn is_budget_duration(text: &str) -> bool {
    let hours_minutes = |t: &str| {
        let number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        let (hours, minutes) = match t.split_once('h') {
            Some((h, rest)) => (Some(h), rest),
            None => (None, t),
        };
        hours.is_none_or(number)
            && match minutes.strip_suffix('m') {
                Some(m) => number(m),
                None => minutes.is_empty() && hours.is_some(),
            }
    };
    hours_minutes(text) || text.strip_suffix("0s").is_some_and(hours_minutes)
}

/// Whether a budget's `schedule` matches the CRDs' pattern
/// `^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
/// (core v1.14.1: `pkg/apis/v1/nodepool.go` `Budget.Schedule`): a macro (the first branch is
/// anchored only at the start), or five fields at the end of the text. Text with a line break is
/// left to the cron reader.
fn is_budget_schedule(text: &str) -> bool {
    const MACROS: [&str; 7] = [
        "annually", "yearly", "monthly", "weekly", "daily", "midnight", "hourly",
    ];
    if text
        .strip_prefix('@')
        .is_some_and(|m| MACROS.iter().any(|name| m.starts_with(name)))
    {
        return true;
    }
    if text.contains('\n') {
        return true;
    }
    // Four separators, each with a character before it since the last one, and one after.
    let mut separators = 0;
    let mut since = 0;
    for c in text.chars() {
        if separators < 4 && c.is_whitespace() && since > 0 {
            separators += 1;
            since = 0;
        } else {
            since += 1;
        }
    }
    separators == 4 && since > 0
}

/// Converts budgets; an absent list gets the API default `[{nodes: 10%}]`. `reasons_are_a_set`:
/// the v1 CRD's `reasons` is `x-kubernetes-list-type: set`, a repeated reason is refused.
pub(crate) fn budgets(
    ctx: &Ctx,
    path: &str,
    specs: Option<&[BudgetSpec]>,
    reasons_are_a_set: bool,
) -> Result<Vec<Budget>, InputError> {
    let Some(specs) = specs else {
        return Ok(vec![Budget {
            nodes: "10%".into(),
            ..Budget::default()
        }]);
    };
    // The v1beta1 and v1 CRDs' `maxItems: 50`.
    max_items(ctx, path, specs.len(), 50, "budgets")?;
    specs
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let at = format!("{path}[{i}]");
            let nodes = b.nodes.as_ref().map(|n| n.as_text().into_owned()).unwrap_or_else(|| "10%".into());
            if !is_budget_nodes(&nodes) {
                return Err(ctx.invalid(format!("{at}.nodes"), format!("invalid value {nodes:?} (expected a percentage such as 10% or a node count such as 5)")));
            }
            if b.schedule.is_some() != b.duration.is_some() {
                return Err(ctx.invalid(at, "schedule and duration must be set together"));
            }
            if let Some(d) = &b.duration {
                duration(ctx, &format!("{at}.duration"), d, false)?;
                if !is_budget_duration(d) {
                    return Err(ctx.invalid(format!("{at}.duration"), format!("invalid value {d:?} (whole hours and/or minutes, such as 8h, 30m or 1h30m)")));
                }
            }
            if let Some(s) = b.schedule.as_deref().filter(|s| !is_budget_schedule(s)) {
                return Err(ctx.invalid(format!("{at}.schedule"), format!("invalid value {s:?} (a cron expression of five fields, such as \"0 9 * * mon-fri\", or @annually, @yearly, @monthly, @weekly, @daily, @midnight or @hourly)")));
            }
            let reasons = b.reasons.clone().unwrap_or_default();
            for (j, r) in reasons.iter().enumerate() {
                if !matches!(r.as_str(), "Underutilized" | "Empty" | "Drifted") {
                    return Err(ctx.invalid(format!("{at}.reasons[{j}]"), format!("unknown reason {r:?} (expected Underutilized, Empty or Drifted)")));
                }
                // The v1 CRD's `x-kubernetes-list-type: set` (not in v1beta1's).
                if reasons_are_a_set && reasons[..j].contains(r) {
                    return Err(ctx.invalid(format!("{at}.reasons[{j}]"), format!("duplicate value {r:?}")));
                }
            }
            // `reasons: []` is kept by the API server and decoded as an empty, non-nil slice;
            // Karpenter applies a budget when `Reasons == nil || lo.Contains(Reasons, reason)`
            // (core v1.14.1: pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason), so such a
            // budget limits no reason at all: it is left out (ours treat empty as "every reason").
            if b.reasons.as_ref().is_some_and(|r| r.is_empty()) {
                return Ok(None);
            }
            Ok(Some(Budget { nodes, schedule: b.schedule.clone(), duration: b.duration.clone(), reasons }))
        })
        .filter_map(Result::transpose)
        .collect()
}

/// Checks a NodePool weight (1–100 when set).
pub(crate) fn weight(ctx: &Ctx, path: &str, weight: Option<i64>) -> Result<i32, InputError> {
    match weight {
        None => Ok(0),
        Some(w) if (1..=100).contains(&w) => Ok(w as i32),
        Some(w) => Err(ctx.invalid(path, format!("must be between 1 and 100, got {w}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::error::Location;

    fn ctx() -> Ctx {
        Ctx::new(&Location::file("f.yaml"), "NodePool/default".into())
    }

    #[test]
    fn label_syntax() {
        assert!(label_key_problem("eks-immersion-team").is_none());
        assert!(label_key_problem("karpenter.k8s.aws/instance-category").is_none());
        assert!(label_key_problem("Bad_Prefix.io/x").is_some());
        assert!(label_key_problem("a/").is_some());
        assert!(label_key_problem("-a").is_some());
        assert!(label_value_problem("").is_none());
        assert!(label_value_problem("c,m,r").is_some());
        assert!(label_value_problem(&"a".repeat(64)).is_some());
    }

    #[test]
    fn durations_and_budgets() {
        let c = ctx();
        for ok in ["30s", "720h", "1h30m", "0s"] {
            assert!(duration(&c, "p", ok, false).is_ok(), "{ok}");
        }
        assert!(duration(&c, "p", "Never", true).is_ok());
        for bad in ["Never", "30", "1d", "h", "", "1.5h"] {
            assert!(duration(&c, "p", bad, false).is_err(), "{bad}");
        }
        for ok in ["10%", "100%", "0", "5", "0%"] {
            assert!(is_budget_nodes(ok), "{ok}");
        }
        for bad in ["101%", "%", "ten", "1000%", "-1"] {
            assert!(!is_budget_nodes(bad), "{bad}");
        }
        assert_eq!(budgets(&c, "b", None, true).unwrap()[0].nodes, "10%");
        // The budget's own patterns (v1 and v1beta1 CRDs), beyond a Go duration and a cron.
        for ok in ["8h", "30m", "1h30m", "10m0s", "1h0s", "24h"] {
            assert!(is_budget_duration(ok), "{ok}");
        }
        for bad in ["30s", "1h30m15s", "0s", "h", "1m30h", "1.5h", "1d", "m"] {
            assert!(!is_budget_duration(bad), "{bad}");
        }
        for ok in [
            "@daily",
            "@hourly",
            "0 9 * * mon-fri",
            "*/5 * * * *",
            "0 0 1 1 * extra",
        ] {
            assert!(is_budget_schedule(ok), "{ok}");
        }
        for bad in ["@every 1h", "0 9 * *", "@reboot", "", "0  9 * *"] {
            assert!(!is_budget_schedule(bad), "{bad}");
        }
    }

    /// Session 21's sweep: a pool with `budgets: [{nodes: "1", reasons: []}]`. The API server keeps
    /// the empty list (no `minItems`), Go decodes it non-nil, and `GetAllowedDisruptionsByReason`
    /// (core v1.14.1: pkg/apis/v1/nodepool.go) applies a budget only when `Reasons == nil` or it
    /// names the reason, so the budget limits nothing; `reasons` absent or null limits every reason.
    #[test]
    fn a_budget_with_an_empty_reasons_list_limits_no_reason() {
        let c = ctx();
        let spec = |reasons: Option<Vec<String>>| BudgetSpec {
            nodes: Some(IntOrString::String("1".into())),
            reasons,
            ..BudgetSpec::default()
        };
        let got = budgets(&c, "b", Some(&[spec(Some(vec![])), spec(None)]), true).unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].reasons.is_empty(), "{got:?}");
        let only = budgets(&c, "b", Some(&[spec(Some(vec![]))]), true).unwrap();
        assert!(
            only.is_empty(),
            "no budget left, as `budgets: []`: {only:?}"
        );
    }

    #[test]
    fn requirement_errors_name_the_field() {
        let c = ctx();
        let spec = |op: &str, values: &[&str]| RequirementSpec {
            key: Some("kubernetes.io/arch".into()),
            operator: Some(op.into()),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
            min_values: None,
        };
        let e = requirements(
            &c,
            "spec.r",
            &[spec("In", &["amd64"]), spec("Inn", &["x"])],
            NODEPOOL_OPERATORS_V1,
            RequirementRules::NodePool,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "f.yaml: NodePool/default: spec.r[1].operator: unknown operator \"Inn\" (expected In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte)"
        );
        let e = requirements(
            &c,
            "spec.r",
            &[spec("Gte", &["1"])],
            CLASSIC_OPERATORS,
            RequirementRules::NodePool,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                "unknown operator \"Gte\" (expected In, NotIn, Exists, DoesNotExist, Gt, Lt)"
            ),
            "{e}"
        );
        let e = requirements(
            &c,
            "spec.r",
            &[spec("In", &[])],
            CLASSIC_OPERATORS,
            RequirementRules::NodePool,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                "spec.r[0]: requirement kubernetes.io/arch: operator In needs at least one value"
            ),
            "{e}"
        );
        let e = requirements(
            &c,
            "spec.r",
            &[spec("Gt", &["x"])],
            CLASSIC_OPERATORS,
            RequirementRules::NodePool,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("spec.r[0].values[0]") || e.contains("non-negative integer"),
            "{e}"
        );
        let mut host = spec("In", &["a"]);
        host.key = Some("kubernetes.io/hostname".into());
        let e = requirements(
            &c,
            "spec.r",
            &[host],
            CLASSIC_OPERATORS,
            RequirementRules::NodePool,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("spec.r[0].key: label \"kubernetes.io/hostname\" is restricted"),
            "{e}"
        );
    }
}
