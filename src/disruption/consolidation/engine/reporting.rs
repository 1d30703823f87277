//! The report: every action in order, and one decision per node with its most telling reason.

use super::Engine;
use crate::disruption::budgets::{window_text, DisruptionReason, ParsedBudget};
use crate::disruption::consolidation::input::Release;
use crate::disruption::consolidation::report::{
    Action, ConsolidationReport, Decision, HeldBackDestination, Method, NodeDecision, NodeReport,
    UnlimitedBudget,
};
use crate::disruption::consolidation::sim::Simulator;
use crate::model::time::format_rfc3339;

impl<S: Simulator> Engine<S> {
    pub(super) fn report(mut self, original: usize) -> ConsolidationReport {
        let actions: Vec<Action> = self
            .records
            .iter()
            .map(|r| {
                let mut replacements = r.replacements.clone();
                let first = (!replacements.is_empty()).then(|| replacements.remove(0));
                Action {
                    pass: r.pass,
                    method: r.method,
                    decision: if r.replace {
                        Decision::Replace
                    } else {
                        Decision::Delete
                    },
                    nodes: r
                        .nodes
                        .iter()
                        .map(|&n| self.c.node(n).name.clone())
                        .collect(),
                    replacement: first,
                    additional_replacements: replacements,
                    savings_per_hour: r.savings,
                    pods: r.moved.clone(),
                    pods_left_pending: r.left_pending.clone(),
                }
            })
            .collect();
        let mut nodes = Vec::new();
        for i in 0..original {
            let state = &self.c.nodes[i];
            if state.claim.is_none() {
                continue;
            }
            let node = self.c.node(i);
            let (it, _, ct) = self.c.offering_labels(i);
            let mut entry = NodeReport {
                name: node.name.clone(),
                node_pool: node.node_pool().unwrap_or_default().to_string(),
                instance_type: it.unwrap_or_default().to_string(),
                capacity_type: ct.unwrap_or_default().to_string(),
                price_per_hour: self.node_price(i),
                decision: NodeDecision::None,
                replacement_type: None,
                replacement_capacity_type: None,
                method: None,
                pass: None,
                reason: None,
                drain_waits_for: Vec::new(),
                unlimited_budget: None,
                held_back_destinations: Vec::new(),
            };
            match self.decided[i] {
                Some(a) => {
                    let action = &actions[a];
                    entry.decision = match action.decision {
                        Decision::Delete => NodeDecision::Delete,
                        Decision::Replace => NodeDecision::Replace,
                    };
                    if let (Decision::Replace, Some(r)) = (action.decision, &action.replacement) {
                        entry.replacement_type = Some(r.instance_type.clone());
                        entry.replacement_capacity_type = Some(r.capacity_type.clone());
                    }
                    entry.method = Some(action.method);
                    entry.pass = Some(action.pass);
                    entry.drain_waits_for = self.drain_waits.remove(&i).unwrap_or_default();
                    entry.unlimited_budget = self.unlimited_budget(i, action.method);
                    entry.held_back_destinations = self.records[a]
                        .held_back
                        .iter()
                        .map(|(node, left)| HeldBackDestination {
                            node: node.clone(),
                            consolidate_after_left_seconds: *left,
                        })
                        .collect();
                }
                None => {
                    entry.reason = self.notes[i].take_first();
                }
            }
            nodes.push(entry);
        }
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        ConsolidationReport {
            kind: "ConsolidationReport",
            karpenter_version: self.c.release.version().to_string(),
            now: format_rfc3339(self.c.now),
            savings_per_hour: actions.iter().map(|a| a.savings_per_hour).sum(),
            actions,
            nodes,
        }
    }
}

impl<S: Simulator> Engine<S> {
    /// Whether node `i`'s action is unlimited only because every budget of its pool for the
    /// method's reason is scheduled and out of its window now (core v1.14.1
    /// `pkg/apis/v1/nodepool.go` `GetAllowedDisruptions`: an inactive budget allows
    /// `MaxInt32`). A pool without budgets for the reason, or with one active, says nothing.
    fn unlimited_budget(&self, i: usize, method: Method) -> Option<UnlimitedBudget> {
        let reason = match method {
            Method::Emptiness => DisruptionReason::Empty,
            Method::Drift => DisruptionReason::Drifted,
            Method::Multi | Method::Single => DisruptionReason::Underutilized,
            Method::Expiration | Method::StaticDrift => return None,
        };
        if self.c.release == Release::V0_31 {
            return None;
        }
        let reason = (self.c.release == Release::V1_14).then_some(reason);
        let pool = self.c.pool(self.c.nodes[i].pool?);
        let mut closed_windows = Vec::new();
        for budget in &pool.disruption.budgets {
            let parsed = ParsedBudget::parse(budget).ok()?;
            if reason.is_some_and(|r| !parsed.applies_to(r)) {
                continue;
            }
            if parsed.active(self.c.now) {
                return None;
            }
            closed_windows.extend(window_text(budget, self.c.now));
        }
        (!closed_windows.is_empty()).then(|| UnlimitedBudget {
            reason: reason.map(|r| r.as_str().to_string()),
            closed_windows,
        })
    }
}
