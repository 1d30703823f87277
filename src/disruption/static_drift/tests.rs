//! Table tests mirroring `core v1.14.1: pkg/controllers/disruption/staticdrift_test.go`
//! ("StaticDrift"); each test names the `It` it mirrors. Budgets are computed as the engine does
//! (`budgets::allowed_for_counts`, reason `Drifted`). The three "should ignore nodes …" Its are
//! candidate filters (the `Drifted` condition, `NewCandidate`'s do-not-disrupt): they are
//! mirrored where candidates are made (`consolidation/tests.rs`, `static_drift_*`), and here as
//! "no candidate, no command".

use super::*;
use crate::disruption::budgets::{allowed_for_counts, DisruptionReason};
use crate::model::nodepool::{Budget, Disruption, NodePool};

const NOW: i64 = 1_800_000_000;

/// A static pool of `replicas` running `running` NodeClaims, with one budget for `Drifted`.
fn pool(name: &str, replicas: i64, budget: &str, limit: Option<i64>, running: usize) -> PoolState {
    let np = NodePool {
        name: name.into(),
        replicas: Some(replicas),
        disruption: Disruption {
            budgets: vec![Budget {
                nodes: budget.into(),
                schedule: None,
                duration: None,
                reasons: vec!["Drifted".into()],
            }],
            ..Disruption::default()
        },
        ..NodePool::default()
    };
    let allowed = allowed_for_counts(&np, running as u32, 0, DisruptionReason::Drifted, NOW);
    PoolState {
        name: name.into(),
        replicas,
        node_limit: limit,
        running,
        deleting: 0,
        pending_disruption: 0,
        budget: allowed.allowed,
    }
}

fn drifted(pool: &str, n: usize) -> Vec<Drifted<String>> {
    (0..n)
        .map(|i| Drifted {
            key: format!("{pool}-{i}"),
            name: format!("{pool}-{i}"),
            pool: pool.into(),
        })
        .collect()
}

fn replaced(plan: &Plan<String>, pool: &str) -> usize {
    plan.replace.iter().filter(|c| c.pool == pool).count()
}

#[test]
fn should_respect_disruption_budgets_nodes_count_for_static_drift() {
    let plan = decide(&[pool("np", 5, "2", None, 5)], &drifted("np", 5));
    assert_eq!(plan.replace.len(), 2);
    assert_eq!(plan.replace[0].name, "np-0");
    assert_eq!(plan.replace[1].name, "np-1");
    assert_eq!(plan.held.len(), 3);
    assert_eq!(
        plan.held[0].1.to_string(),
        "budget Drifted of NodePool np: 2 of 5 drifted now"
    );
}

#[test]
fn should_respect_disruption_budgets_nodes_percentage_for_static_drift() {
    let plan = decide(&[pool("np", 5, "20%", None, 5)], &drifted("np", 5));
    assert_eq!(plan.replace.len(), 1);
    assert!(plan
        .held
        .iter()
        .all(|(_, h)| matches!(h, Hold::Budget { allowed: 1, .. })));
}

#[test]
fn should_respect_budgets_for_multiple_static_nodepools() {
    let pools = [
        pool("static-nodepool-1", 4, "1", None, 2),
        pool("static-nodepool-2", 3, "2", None, 2),
        pool("static-nodepool-3", 2, "100%", None, 2),
    ];
    let cands: Vec<_> = pools.iter().flat_map(|p| drifted(&p.name, 2)).collect();
    let plan = decide(&pools, &cands);
    assert_eq!(plan.replace.len(), 5);
    assert_eq!(replaced(&plan, "static-nodepool-1"), 1);
    assert_eq!(replaced(&plan, "static-nodepool-2"), 2);
    assert_eq!(replaced(&plan, "static-nodepool-3"), 2);
}

#[test]
fn should_not_drift_nodes_when_we_cannot_acquire_limits() {
    let plan = decide(&[pool("np", 5, "100%", Some(5), 5)], &drifted("np", 5));
    assert!(plan.replace.is_empty());
    assert_eq!(plan.held.len(), 5);
    assert_eq!(
        plan.held[0].1.to_string(),
        "limits.nodes 5 of NodePool np reached (5 NodeClaims, 0 replacements granted now)"
    );
    assert_eq!(plan.held[0].1.kind(), "static-node-limit");
}

#[test]
fn should_drift_nodes_when_we_can_acquire_limits() {
    let plan = decide(&[pool("np", 5, "100%", Some(5), 2)], &drifted("np", 2));
    assert_eq!(plan.replace.len(), 2);
    assert!(plan.held.is_empty());
}

#[test]
fn should_drift_partially_when_we_can_acquire_some_limits() {
    let plan = decide(&[pool("np", 5, "100%", Some(7), 5)], &drifted("np", 5));
    assert_eq!(plan.replace.len(), 2);
    assert!(plan
        .held
        .iter()
        .all(|(_, h)| matches!(h, Hold::NodeLimit { granted: 2, .. })));
}

#[test]
fn should_keep_drifting_partially_when_we_can_acquire_some_limits_for_each_reconcile() {
    // limit 6, replicas 5: one replacement at a time; while it is in flight (the drifted
    // NodeClaim deleting, its replacement running) nothing more, and never over 6 NodeClaims.
    let mut cands = drifted("np", 5);
    for round in 0..5 {
        let idle = pool("np", 5, "100%", Some(6), 5);
        let plan = decide(std::slice::from_ref(&idle), &cands);
        assert_eq!(plan.replace.len(), 1, "round {round}");
        assert_eq!(idle.running + plan.replace.len(), 6);
        let in_flight = PoolState {
            deleting: 1,
            ..idle.clone()
        };
        let gone = plan.replace[0].key.clone();
        cands.retain(|c| c.key != gone);
        let waiting = decide(std::slice::from_ref(&in_flight), &cands);
        assert!(waiting.replace.is_empty(), "round {round}");
    }
    assert!(cands.is_empty());
}

#[test]
fn should_wait_until_nodes_are_deprovisioned_when_we_are_overscaled() {
    let plan = decide(&[pool("np", 1, "100%", None, 2)], &drifted("np", 2));
    assert!(plan.replace.is_empty());
    assert_eq!(
        plan.held[0].1.to_string(),
        "NodePool np above replicas (2 running + 0 pending disruption > 1): scale-down first"
    );
    // The second NodeClaim deleted: the pool is at its replicas, the drifted one goes.
    let scaled = PoolState {
        running: 1,
        deleting: 1,
        ..pool("np", 1, "100%", None, 1)
    };
    let plan = decide(&[scaled], &drifted("np", 1));
    assert_eq!(plan.replace.len(), 1);
}

#[test]
fn pending_disruption_counts_toward_the_replicas() {
    // `running + pending disruption > replicas`: a NodeClaim of a command in flight counts.
    let busy = PoolState {
        running: 2,
        pending_disruption: 1,
        ..pool("np", 2, "100%", None, 2)
    };
    let plan = decide(&[busy], &drifted("np", 2));
    assert!(matches!(plan.held[0].1, Hold::AboveReplicas { .. }));
}

#[test]
fn should_handle_drift_for_multiple_static_nodepools_independently() {
    let pools = [
        pool("nodepool-1", 3, "100%", None, 2),
        pool("nodepool-2", 2, "100%", Some(2), 2),
        pool("nodepool-3", 2, "100%", None, 2),
    ];
    let cands: Vec<_> = pools.iter().flat_map(|p| drifted(&p.name, 2)).collect();
    let plan = decide(&pools, &cands);
    assert_eq!(plan.replace.len(), 4);
    assert_eq!(replaced(&plan, "nodepool-1"), 2);
    assert_eq!(replaced(&plan, "nodepool-2"), 0);
    assert_eq!(replaced(&plan, "nodepool-3"), 2);
}

#[test]
fn should_handle_zero_replicas() {
    let plan = decide(&[pool("np", 0, "100%", None, 1)], &drifted("np", 1));
    assert!(plan.replace.is_empty());
    assert_eq!(plan.held[0].1.kind(), "static-above-replicas");
}

#[test]
fn should_handle_missing_node_limits_gracefully() {
    let plan = decide(&[pool("np", 5, "100%", None, 5)], &drifted("np", 5));
    assert_eq!(plan.replace.len(), 5);
}

#[test]
fn should_ignore_nodes_without_the_drifted_status_condition() {
    // Also "… set to false" and "… with the karpenter.sh/do-not-disrupt annotation": the
    // caller makes no candidate of them.
    let plan = decide::<String>(&[pool("np", 1, "100%", None, 1)], &[]);
    assert!(plan.replace.is_empty() && plan.held.is_empty());
}

#[test]
fn a_budget_of_zero_holds_every_candidate_and_other_pools_are_ignored() {
    let plan = decide(
        &[pool("np", 2, "0", None, 2)],
        &[drifted("np", 2), drifted("dynamic", 1)].concat(),
    );
    assert!(plan.replace.is_empty());
    assert_eq!(plan.held.len(), 2);
    assert_eq!(
        plan.held[0].1.to_string(),
        "budget Drifted of NodePool np: 0 of 2 drifted now"
    );
}
