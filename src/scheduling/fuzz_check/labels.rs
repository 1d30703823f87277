//! Kubernetes label semantics, written again for the checker: a node-selector requirement
//! against the labels a node may get, a toleration against a taint, a label selector against
//! a pod. Nothing here calls the planner's own matching.

use std::collections::BTreeMap;

use crate::model::pod::Pod;
use crate::model::requirements::{NodeSelectorRequirement, Operator, Requirement};
use crate::model::selector::LabelSelector;
use crate::model::taints::{Effect, Taint, TolerationOperator};

/// What a node may have under one key.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Label {
    /// No label.
    Absent,
    /// Exactly this value.
    Is(String),
    /// One of these values, not known which (a NodeClaim's `In` on a custom key: Karpenter's
    /// `Requirements.Labels` writes `Any()` of it).
    OneOf(Vec<String>),
    /// Some value outside these (`Exists`/`NotIn` on a custom key: `Any()` of a complement).
    Outside(Vec<String>),
}

/// A label from a NodeClaim requirement on a key no fixed label gives (Karpenter: the node gets
/// the requirement's `Any()`; `DoesNotExist` gives none).
pub(super) fn from_requirement(r: Option<&Requirement>) -> Label {
    let Some(r) = r else {
        return Label::Absent;
    };
    let values: Vec<String> = r.values().iter().cloned().collect();
    match (r.is_complement(), values.len()) {
        (false, 0) => Label::Absent,
        (false, 1) => Label::Is(values[0].clone()),
        (false, _) => Label::OneOf(values),
        (true, _) => Label::Outside(values),
    }
}

/// `op values` on one concrete label value (Kubernetes `NodeSelectorRequirement` semantics).
pub(super) fn holds(op: Operator, values: &[String], label: Option<&str>) -> bool {
    let int = |s: &str| s.parse::<i64>().ok();
    match (op, label) {
        (Operator::In, Some(v)) => values.iter().any(|x| x == v),
        (Operator::In, None) => false,
        (Operator::NotIn, Some(v)) => !values.iter().any(|x| x == v),
        (Operator::NotIn, None) => true,
        (Operator::Exists, l) => l.is_some(),
        (Operator::DoesNotExist, l) => l.is_none(),
        (Operator::Gt, Some(v)) => {
            matches!((int(v), values.first().and_then(|x| int(x))), (Some(a), Some(b)) if a > b)
        }
        (Operator::Lt, Some(v)) => {
            matches!((int(v), values.first().and_then(|x| int(x))), (Some(a), Some(b)) if a < b)
        }
        (Operator::Gte, Some(v)) => {
            matches!((int(v), values.first().and_then(|x| int(x))), (Some(a), Some(b)) if a >= b)
        }
        (Operator::Lte, Some(v)) => {
            matches!((int(v), values.first().and_then(|x| int(x))), (Some(a), Some(b)) if a <= b)
        }
        (Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte, None) => false,
    }
}

/// Whether `req` holds for every value the node may have.
pub(super) fn holds_surely(req: &NodeSelectorRequirement, label: &Label) -> bool {
    let v = &req.values;
    match label {
        Label::Absent => holds(req.operator, v, None),
        Label::Is(x) => holds(req.operator, v, Some(x)),
        Label::OneOf(xs) => xs.iter().all(|x| holds(req.operator, v, Some(x))),
        Label::Outside(excluded) => match req.operator {
            Operator::Exists => true,
            Operator::NotIn => v.iter().all(|x| excluded.contains(x)),
            _ => false,
        },
    }
}

/// Whether `req` holds for some value the node may get (a fresh NodeClaim can narrow its
/// custom keys to the pod's).
pub(super) fn holds_possibly(req: &NodeSelectorRequirement, label: &Label) -> bool {
    match label {
        Label::OneOf(xs) => xs.iter().any(|x| holds(req.operator, &req.values, Some(x))),
        Label::Outside(excluded) => match req.operator {
            Operator::In => req.values.iter().any(|x| !excluded.contains(x)),
            Operator::DoesNotExist => false,
            _ => true,
        },
        other => holds_surely(req, other),
    }
}

/// A pod's hard node constraints as Karpenter reads them (`NewStrictPodRequirements`): each
/// required term (ORed; none = one empty term) with the `nodeSelector` added. Requirements on one
/// key are intersected, and an intersection left empty is `DoesNotExist` (core v1.14.1
/// `pkg/scheduling/requirement.go` `Intersection`, `Operator`: an empty `In` reads as
/// `DoesNotExist`), which a node without the label satisfies: a term such as `tier In [silver]`
/// and `tier DoesNotExist` never matches in kube-scheduler, yet Karpenter places the pod on a
/// node without `tier` — a Karpenter quirk the planner matches on purpose (fuzzing.md, s32-fuzzplan).
/// With `preferences`, also each required term with one preferred term added (`newPodRequirements`
/// adds the heaviest preference not relaxed yet to the first required term left): the same
/// collapse happens across the two (`tier In [gold]` required, `tier In [gold]` and `tier In
/// [silver]` preferred).
pub(super) fn node_terms(pod: &Pod, preferences: bool) -> Vec<Vec<NodeSelectorRequirement>> {
    let selector = pod
        .node_selector
        .iter()
        .map(|(k, v)| NodeSelectorRequirement::new(k, Operator::In, &[v.as_str()]));
    let mut required = pod.required_node_affinity.clone();
    if required.is_empty() {
        required.push(Vec::new());
    }
    let mut terms = required.clone();
    if preferences {
        for r in &required {
            for p in &pod.preferred_node_affinity {
                terms.push(r.iter().chain(&p.term).cloned().collect());
            }
        }
    }
    terms
        .into_iter()
        .map(|mut t| {
            t.extend(selector.clone());
            let mut keys: Vec<&str> = t.iter().map(|r| r.key.as_str()).collect();
            keys.sort_unstable();
            keys.dedup();
            let empty: Vec<String> = keys
                .into_iter()
                .filter(|k| {
                    let mut on_key = t
                        .iter()
                        .filter(|r| r.key == *k)
                        .map(Requirement::from_selector);
                    let first = on_key.next().expect("a key of the term");
                    let all = on_key.fold(first, |a, r| a.intersection(&r));
                    !all.is_complement() && all.values().is_empty()
                })
                .map(str::to_string)
                .collect();
            t.retain(|r| !empty.contains(&r.key));
            t.extend(
                empty.iter().map(|k| {
                    NodeSelectorRequirement::new(k, Operator::DoesNotExist, &[] as &[&str])
                }),
            );
            t
        })
        .collect()
}

/// Whether the pod's nodeSelector and one of its required terms hold on a node whose labels
/// are `label(key)`, surely (`possibly` = some value of an open custom key will do).
pub(super) fn pod_fits_labels(pod: &Pod, label: &dyn Fn(&str) -> Label, possibly: bool) -> bool {
    fits_terms(&node_terms(pod, false), label, possibly)
}

/// Whether one of `terms` holds (see [`pod_fits_labels`]).
pub(super) fn fits_terms(
    terms: &[Vec<NodeSelectorRequirement>],
    label: &dyn Fn(&str) -> Label,
    possibly: bool,
) -> bool {
    let one = |r: &NodeSelectorRequirement| {
        let l = label(&r.key);
        if possibly {
            holds_possibly(r, &l)
        } else {
            holds_surely(r, &l)
        }
    };
    terms.iter().any(|t| t.iter().all(one))
}

/// Kubernetes `ToleratesTaint`, for the hard effects (`PreferNoSchedule` never blocks).
pub(super) fn tolerated(pod: &Pod, taint: &Taint) -> bool {
    if taint.effect == Effect::PreferNoSchedule {
        return true;
    }
    pod.tolerations.iter().any(|t| {
        t.effect.is_none_or(|e| e == taint.effect)
            && (t.key.is_empty() || t.key == taint.key)
            && match t.operator {
                TolerationOperator::Exists => true,
                TolerationOperator::Equal => t.value == taint.value,
                _ => false,
            }
    })
}

/// The first of `taints` the pod does not tolerate.
pub(super) fn untolerated<'t>(pod: &Pod, taints: &'t [Taint]) -> Option<&'t Taint> {
    taints.iter().find(|t| !tolerated(pod, t))
}

/// `matchLabels` only (what the generator writes).
pub(super) fn selects(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    selector.is_some_and(|s| {
        assert!(
            s.match_expressions.is_empty(),
            "the generator writes matchLabels only"
        );
        s.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
    })
}
