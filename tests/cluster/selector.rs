//! Selectors: the label and field selectors are the library's (`k8s::fake::selector`, shared with
//! the in-memory fake); node selector terms (node affinity) are matched here.

use serde_json::Value;

pub use kubectl_karpenter::k8s::fake::selector::*;

/// `NodeSelectorTerm` matching (node affinity): `matchExpressions` on labels (In, NotIn,
/// Exists, DoesNotExist, Gt, Lt) and `matchFields` on `metadata.name`.
pub fn node_selector_term_matches(term: &Value, node: &Value) -> bool {
    let labels = super::util::labels(node);
    let exprs = term.get("matchExpressions").and_then(Value::as_array);
    let fields = term.get("matchFields").and_then(Value::as_array);
    if exprs.is_none_or(|e| e.is_empty()) && fields.is_none_or(|f| f.is_empty()) {
        // An empty term matches no objects.
        return false;
    }
    let check = |e: &Value, get: &dyn Fn(&str) -> Option<String>| -> bool {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<String> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let op = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => Op::In,
            "NotIn" => Op::NotIn,
            "Exists" => Op::Exists,
            "DoesNotExist" => Op::DoesNotExist,
            "Gt" => Op::Gt,
            "Lt" => Op::Lt,
            _ => return false,
        };
        requirement_matches(
            &Requirement {
                key: key.into(),
                op,
                values,
            },
            get,
        )
    };
    let label_get = |k: &str| labels.get(k).and_then(Value::as_str).map(str::to_string);
    let name = super::util::meta_str(node, "name").to_string();
    let field_get = |k: &str| (k == "metadata.name").then(|| name.clone());
    exprs.into_iter().flatten().all(|e| check(e, &label_get))
        && fields.into_iter().flatten().all(|e| check(e, &field_get))
}
