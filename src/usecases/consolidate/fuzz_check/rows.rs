//! The report's rows and totals against its actions: the JSON document's `savingsPerHour` is
//! the sum of its actions', each action's savings its nodes' prices minus its launches', each
//! disrupted node's row names its action, and every node left alone says why (docs/spec.md §9).

use std::collections::BTreeMap;

use serde_json::Value;

use super::gen::Spec;
use crate::disruption::consolidation::{
    Action, ConsolidationReport, Decision, Method, NodeDecision,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * (1.0 + a.abs().max(b.abs()))
}

/// The JSON document's totals and rows agree with its actions; every node left alone says why.
pub fn totals(s: &Spec, r: &ConsolidationReport, v: &mut Vec<String>) {
    let doc: Value = serde_json::to_value(r).unwrap();
    let sum: f64 = doc["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["savingsPerHour"].as_f64().unwrap())
        .sum();
    if !close(doc["savingsPerHour"].as_f64().unwrap(), sum) {
        v.push(format!(
            "savingsPerHour {} is not the sum of the actions' {sum}",
            doc["savingsPerHour"]
        ));
    }
    if r.nodes.len() != s.nodes.len() {
        v.push(format!(
            "{} node rows for {} managed nodes",
            r.nodes.len(),
            s.nodes.len()
        ));
    }
    let price: BTreeMap<&str, Option<f64>> = r
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.price_per_hour))
        .collect();
    let mut acted: BTreeMap<&str, (usize, &Action)> = BTreeMap::new();
    for (k, a) in r.actions.iter().enumerate() {
        for n in &a.nodes {
            if acted.insert(n.as_str(), (k, a)).is_some() {
                v.push(format!("node {n} is in two actions"));
            }
        }
        let prices: Option<f64> = a
            .nodes
            .iter()
            .map(|n| price.get(n.as_str()).copied().flatten())
            .sum();
        let launched: f64 = a
            .replacement
            .iter()
            .chain(&a.additional_replacements)
            .map(|r| r.price_per_hour)
            .sum();
        if let Some(p) = prices {
            if !close(a.savings_per_hour, p - launched) {
                v.push(format!(
                    "action {k}: savings {} ≠ nodes {p} − replacements {launched}",
                    a.savings_per_hour
                ));
            }
        }
        // v1 expiration deletes the NodeClaim and the provisioner launches for its pods: a
        // `delete` that names what would launch (docs/spec.md §9).
        let launches_ok = a.decision == Decision::Replace || a.method == Method::Expiration;
        if (a.decision == Decision::Replace && a.replacement.is_none())
            || (a.replacement.is_some() && !launches_ok)
        {
            v.push(format!(
                "action {k}: decision {:?} with replacement {:?}",
                a.decision, a.replacement
            ));
        }
    }
    for row in &r.nodes {
        match (acted.get(row.name.as_str()), row.decision) {
            (None, NodeDecision::None) => {
                if row
                    .reason
                    .as_ref()
                    .is_none_or(|r| r.to_string().trim().is_empty())
                    || row.method.is_some()
                {
                    v.push(format!(
                        "node {} left alone without a reason ({:?})",
                        row.name, row.reason
                    ));
                }
            }
            (Some((_, a)), d) => {
                let want = match a.decision {
                    Decision::Delete => NodeDecision::Delete,
                    Decision::Replace => NodeDecision::Replace,
                };
                if d != want || row.method != Some(a.method) || row.pass != Some(a.pass) {
                    v.push(format!(
                        "node {} row {d:?}/{:?}/{:?} differs from its action",
                        row.name, row.method, row.pass
                    ));
                }
            }
            (None, d) => v.push(format!("node {} is {d:?} with no action", row.name)),
        }
    }
}
