//! Disruption candidates, budgets and cost read line by line against core v1.14.1
//! (`pkg/controllers/disruption/types.go NewCandidate`, `helpers.go`, `state/statenode.go`,
//! `utils/pod/scheduling.go`, `utils/pdb/pdb.go`, `utils/disruption/disruption.go`;
//! docs/upstream-tests.md "Disruption candidates, budgets and cost, line by line
//! (s28-linecand)"). No upstream test covers these cases; each test names the lines.

use super::*;
use crate::model::pod::Owner;

/// A pod owned by `owner`.
fn owned_pod(name: &str, owner: Owner) -> Pod {
    let mut p = pod(name, "100m");
    p.owner = Some(owner);
    p
}

/// `utils/pod/scheduling.go IsOwnedBy` compares the owner reference's `apiVersion` and `kind`:
/// a pod of OpenKruise's Advanced DaemonSet (`apps.kruise.io/v1alpha1`, kind `DaemonSet`) is
/// no DaemonSet pod to Karpenter (`IsReschedulable`), so `types.go NewCandidate` counts it in
/// `RescheduleDisruptionCost` and the node is not empty (`IsEmpty`); a node holding only an
/// `apps/v1` DaemonSet's pod is. Here `a` (the foreign one) stays — its pod needs a place and
/// no cheaper one exists — while `b` goes for emptiness. Before s28-linecand both went.
#[test]
fn a_daemonset_of_another_api_group_is_an_ordinary_owner() {
    let foreign = Owner::from_reference("DaemonSet", "kruise-agent", "apps.kruise.io/v1alpha1");
    let r = evaluate(input(vec![
        node("a", "small", vec![owned_pod("kruise-agent-a", foreign)]),
        node(
            "b",
            "small",
            vec![owned_pod("agent-b", Owner::of("DaemonSet", "agent"))],
        ),
    ]));
    let deleted: Vec<&str> = r
        .actions
        .iter()
        .flat_map(|a| a.nodes.iter().map(String::as_str))
        .collect();
    assert_eq!(deleted, ["b"], "{:#?}", r.actions);
    assert_eq!(r.actions[0].method, Method::Emptiness);
    assert_ne!(find(&r, "a").decision, NodeDecision::Delete);
}

/// The same rule for the other owners Karpenter asks about: a StatefulSet of another group is
/// not `IsOwnedByStatefulSet` (its terminating pod needs no place), a `Node` owner only with
/// `apiVersion: v1` makes a mirror pod (`IsOwnedByNode`).
#[test]
fn the_owner_predicates_compare_the_api_version_too() {
    let with = |kind: &str, api_version: &str| {
        let mut p = pod("p", "100m");
        p.owner = Some(Owner::from_reference(kind, "o", api_version));
        p
    };
    assert!(with("DaemonSet", "apps/v1").is_daemonset_pod());
    assert!(!with("DaemonSet", "apps.kruise.io/v1alpha1").is_daemonset_pod());
    assert!(with("StatefulSet", "apps/v1").is_statefulset_pod());
    assert!(!with("StatefulSet", "apps.kruise.io/v1beta1").is_statefulset_pod());
    assert!(with("Node", "v1").is_mirror());
    assert!(!with("Node", "example.com/v1").is_mirror());
    let mut terminating = with("StatefulSet", "apps.kruise.io/v1beta1");
    terminating.terminating = true;
    assert!(!terminating.is_reschedulable());
    let foreign_ds = with("DaemonSet", "apps.kruise.io/v1alpha1");
    assert!(foreign_ds.is_reschedulable());
}
