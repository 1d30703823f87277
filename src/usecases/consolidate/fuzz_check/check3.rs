//! Round 3: multi-node consolidation's candidate order redone from the spec (core v1.14.1
//! `disruption/multinodeconsolidation.go` `ComputeCommands`, `firstNConsolidationOption`;
//! `consolidation.go` `sortCandidates`; `types.go` `SavingsRatio`,
//! `computeRescheduleDisruptionCost`; `utils/disruption/disruption.go` `EvictionCost`).
//!
//! Without a scheduler the checker cannot say which prefix the binary search stops at, but it
//! can say which nodes a prefix is made of: the candidates sorted by savings ratio (price over
//! 1 + the eviction costs of the reschedulable pods), highest first, each kept only while its
//! pool's Underutilized budget has room, at most 100 + 1 of them. An action of the first pass
//! of a v1 cluster, when nothing came before it, must be such a prefix, of two nodes or more.

use std::collections::BTreeSet;

use super::check::{allowed, pdb_blocked};
use super::gen::{Gen, NodeSpec, Owner, Policy, Spec, NOW};
use crate::disruption::consolidation::{ConsolidationReport, Method};

/// `EvictionCost` of a generated pod (no deletion cost; a `high` PriorityClass is 1000),
/// clamped to [-10, 10]; negative costs count as 0 in the sum.
fn eviction_cost(high_priority: bool) -> f64 {
    let priority = if high_priority { 1000.0 } else { 0.0 };
    (1.0 + priority / 2f64.powi(25)).clamp(-10.0, 10.0)
}

/// `SavingsRatio`: the node's price (from its row; 0 unknown) over its reschedule cost.
fn savings_ratio(n: &NodeSpec, price: f64) -> f64 {
    let cost: f64 = 1.0
        + n.pods
            .iter()
            .filter(|p| p.owner != Owner::DaemonSet)
            .map(|p| eviction_cost(p.high_priority).max(0.0))
            .sum::<f64>();
    price / cost
}

/// A v1 node multi-node consolidation may take in the first pass (`NewCandidate`,
/// `ValidateNodeDisruptable`, `ValidatePodsDisruptable`, `ShouldDisrupt`).
fn candidate(s: &Spec, n: &NodeSpec) -> bool {
    let pool = &s.pools[n.pool];
    let settled = pool.consolidate_after.is_some_and(|after| {
        let since = n.last_pod_event_age.map_or(n.init_at(), |age| NOW - age);
        NOW - since >= after
    });
    pool.policy != Policy::WhenEmpty
        && settled
        && n.initialized
        && !n.do_not_disrupt
        && !n.pods.iter().any(|p| p.do_not_disrupt)
        && !pdb_blocked(s, n)
}

/// v1: a consolidation replacement costs less than its candidates' prices summed, a price
/// Karpenter cannot resolve counted as 0 (core v1.14.1 `disruption/types.go`
/// `resolveNodePrice`, `consolidation.go` `sumCandidatePrices`): a reserved node without a
/// reserved offering (the gate off, or its reservation not selected) is never replaced.
fn unknown_price_is_zero(s: &Spec, report: &ConsolidationReport, v: &mut Vec<String>) {
    if s.gen != Gen::V1 {
        return;
    }
    for a in &report.actions {
        let Some(rep) = &a.replacement else { continue };
        if !matches!(a.method, Method::Single | Method::Multi) {
            continue;
        }
        let total: f64 = report
            .nodes
            .iter()
            .filter(|n| a.nodes.contains(&n.name))
            .map(|n| n.price_per_hour.unwrap_or(0.0))
            .sum();
        if rep.price_per_hour >= total {
            v.push(format!(
                "{:?}: replacement ${} not below the candidates' ${total} (unknown prices 0)",
                a.nodes, rep.price_per_hour
            ));
        }
    }
}

/// The first-pass multi-node action is a prefix of the budget-filtered candidate order.
pub fn check(s: &Spec, report: &ConsolidationReport, v: &mut Vec<String>) {
    unknown_price_is_zero(s, report, v);
    let Some(a) = report.actions.first() else {
        return;
    };
    if s.gen != Gen::V1 || a.method != Method::Multi || a.pass != 1 {
        return;
    }
    if a.nodes.len() < 2 || a.nodes.len() > 101 {
        v.push(format!(
            "multi-node action of {} nodes (2..=101)",
            a.nodes.len()
        ));
    }
    let price = |name: &str| {
        report
            .nodes
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.price_per_hour)
    };
    // Sorted by ratio, highest first; ties by name (Go's sort leaves them in any order).
    let mut cands: Vec<(f64, &NodeSpec)> = s
        .nodes
        .iter()
        .filter(|n| candidate(s, n))
        .map(|n| (savings_ratio(n, price(&n.name).unwrap_or(0.0)), n))
        .collect();
    cands.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    // `ComputeCommands`: in order, a candidate whose pool has no disruption left is skipped.
    let mut left: Vec<u64> = (0..s.pools.len())
        .map(|p| {
            let members: Vec<&NodeSpec> = s
                .nodes
                .iter()
                .filter(|n| n.pool == p && n.initialized)
                .collect();
            let not_ready = members.iter().filter(|n| !n.ready).count() as u64;
            allowed(s, p, "Underutilized", members.len() as u64).saturating_sub(not_ready)
        })
        .collect();
    let mut order: Vec<(f64, &str)> = Vec::new();
    for (ratio, n) in cands {
        if left[n.pool] > 0 {
            left[n.pool] -= 1;
            order.push((ratio, n.name.as_str()));
        }
    }
    let chosen: BTreeSet<&str> = a.nodes.iter().map(String::as_str).collect();
    let ratio_of = |name: &str| order.iter().find(|o| o.1 == name).map(|o| o.0);
    for name in &chosen {
        if ratio_of(name).is_none() {
            v.push(format!(
                "multi-node {:?}: {name} is no candidate with budget room in pass 1",
                a.nodes
            ));
        }
    }
    let prefix: BTreeSet<&str> = order.iter().take(chosen.len()).map(|o| o.1).collect();
    // A node of the prefix left out is a fault only if it ranks strictly above a chosen one
    // that is not in the prefix (equal ratios may come in either order).
    let lowest_outside = chosen
        .difference(&prefix)
        .filter_map(|n| ratio_of(n))
        .fold(f64::INFINITY, f64::min);
    for name in prefix.difference(&chosen) {
        let r = ratio_of(name).unwrap_or(0.0);
        if r > lowest_outside * (1.0 + 1e-9) {
            v.push(format!(
                "multi-node {:?}: not a prefix of the candidates by savings ratio ({name} at {r} ranks above a chosen node at {lowest_outside})",
                a.nodes
            ));
        }
    }
}
