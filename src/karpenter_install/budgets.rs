//! v1 has no drift gate: what paces drift is each NodePool's disruption budgets that apply to
//! `Drifted`, which is what the gate commands show instead.

use serde::{Deserialize, Serialize};

use crate::disruption::budgets::{DisruptionReason, ParsedBudget};

/// One budget of a NodePool, as written, and whether it applies now.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DriftedBudget {
    /// `nodes`.
    #[serde(default)]
    pub nodes: String,
    /// Schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Reasons (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Whether it is active now (invalid budgets: false).
    #[serde(default, skip_deserializing)]
    pub active: bool,
}

/// The budgets of a pool that apply to `Drifted`, each marked active or not at `now`; `None`
/// (no `budgets` field) is the CRD default `nodes: 10%`.
pub fn drifted_budgets(budgets: Option<Vec<DriftedBudget>>, now: i64) -> Vec<DriftedBudget> {
    let budgets = budgets.unwrap_or_else(|| {
        vec![DriftedBudget {
            nodes: "10%".into(),
            ..DriftedBudget::default()
        }]
    });
    budgets
        .into_iter()
        .filter(|b| b.reasons.is_empty() || b.reasons.iter().any(|r| r == "Drifted"))
        .map(|mut b| {
            let model = crate::model::nodepool::Budget {
                nodes: b.nodes.clone(),
                schedule: b.schedule.clone(),
                duration: b.duration.clone(),
                reasons: b.reasons.clone(),
            };
            b.active = ParsedBudget::parse(&model)
                .is_ok_and(|p| p.applies_to(DisruptionReason::Drifted) && p.active(now));
            b
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(nodes: &str, reasons: &[&str]) -> DriftedBudget {
        DriftedBudget {
            nodes: nodes.into(),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            ..DriftedBudget::default()
        }
    }

    #[test]
    fn budgets_for_drifted() {
        let out = drifted_budgets(None, 0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].nodes, "10%");
        assert!(out[0].active);
        let out = drifted_budgets(
            Some(vec![
                b("5", &["Empty"]),
                b("0", &["Drifted", "Underutilized"]),
                b("20%", &[]),
            ]),
            0,
        );
        assert_eq!(
            out.iter().map(|b| b.nodes.as_str()).collect::<Vec<_>>(),
            ["0", "20%"]
        );
        assert!(drifted_budgets(Some(vec![]), 0).is_empty());
        // A scheduled budget outside its window is shown inactive.
        let mut scheduled = b("0", &[]);
        scheduled.schedule = Some("0 9 * * *".into());
        scheduled.duration = Some("1h".into());
        // 1970-01-01T00:00:00Z is outside 09:00-10:00.
        assert!(!drifted_budgets(Some(vec![scheduled.clone()]), 0)[0].active);
        assert!(drifted_budgets(Some(vec![scheduled]), 9 * 3600 + 60)[0].active);
        // An invalid budget is shown, never active.
        assert!(!drifted_budgets(Some(vec![b("lots", &[])]), 0)[0].active);
    }
}
