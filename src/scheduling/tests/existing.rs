//! Existing nodes that are not initialized yet: the taints scheduling holds against pods
//! (`core v1.14.1: pkg/controllers/state/statenode.go` `Taints()`). Each test names the upstream
//! test it mirrors (`pkg/controllers/provisioning/scheduling/suite_test.go`, "Taints").

use super::*;

fn managed(initialized: bool, taints: Vec<crate::model::taints::Taint>) -> ExistingNode {
    let mut labels = labels_of(&[
        (HOSTNAME, "node-a"),
        (ZONE, "test-zone-1"),
        ("karpenter.sh/nodepool", "default"),
    ]);
    if initialized {
        labels.insert("karpenter.sh/initialized".into(), "true".into());
    }
    ExistingNode {
        node: Node {
            name: "node-a".into(),
            labels,
            taints,
            startup_taints: vec![taint("foo.com/taint", "tainted", Effect::NoSchedule)],
            allocatable: crate::model::resources::Resources::from_pairs(&[
                ("cpu", "8"),
                ("memory", "16Gi"),
                ("pods", "10"),
            ]),
            initialized,
            ..Default::default()
        },
        pods: vec![],
    }
}

fn lands_on_node_a(node: ExistingNode) -> bool {
    let mut inp = input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(node);
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    !plan.existing_nodes.is_empty()
}

/// "should assume pod will schedule to a node with ephemeral taint
/// node.kubernetes.io/not-ready:NoExecute when the node is uninitialized" — and not once it is.
#[test]
fn known_ephemeral_taints_are_ignored_until_the_node_is_initialized() {
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "readiness.k8s.io/network-ready",
    ] {
        let t = taint(key, "true", Effect::NoSchedule);
        assert!(lands_on_node_a(managed(false, vec![t.clone()])), "{key}");
        assert!(!lands_on_node_a(managed(true, vec![t])), "{key}");
    }
    let not_ready = taint("node.kubernetes.io/not-ready", "", Effect::NoExecute);
    assert!(lands_on_node_a(managed(false, vec![not_ready.clone()])));
    assert!(!lands_on_node_a(managed(true, vec![not_ready])));
    let unregistered = taint("karpenter.sh/unregistered", "", Effect::NoExecute);
    assert!(lands_on_node_a(managed(false, vec![unregistered])));
    // Matched by key and effect: unreachable:NoExecute is not in the list.
    let other = taint("node.kubernetes.io/unreachable", "", Effect::NoExecute);
    assert!(!lands_on_node_a(managed(false, vec![other])));
    // Nor is network-unavailable.
    let network = taint(
        "node.kubernetes.io/network-unavailable",
        "",
        Effect::NoSchedule,
    );
    assert!(!lands_on_node_a(managed(false, vec![network])));
}

/// "should assume pod will schedule to a tainted node with a custom startup taint" and "should
/// not assume pod will schedule to a node with startup taints after initialization".
#[test]
fn startup_taints_are_ignored_until_the_node_is_initialized() {
    let startup = taint("foo.com/taint", "tainted", Effect::NoSchedule);
    assert!(lands_on_node_a(managed(false, vec![startup.clone()])));
    assert!(!lands_on_node_a(managed(true, vec![startup])));
    // Any other taint still repels ("should not assume pod will schedule to a tainted node").
    let other = taint("bar.com/taint", "x", Effect::NoSchedule);
    assert!(!lands_on_node_a(managed(false, vec![other])));
}

/// An unmanaged node (no NodePool) has no initialization to wait for: all its taints hold.
#[test]
fn unmanaged_nodes_keep_every_taint() {
    let mut node = managed(
        true,
        vec![taint(
            "node.kubernetes.io/not-ready",
            "",
            Effect::NoSchedule,
        )],
    );
    node.node.labels.remove("karpenter.sh/nodepool");
    assert!(!lands_on_node_a(node));
}

/// A tracking memo (what the consolidation engine solves with) answers as a fresh one while
/// nodes gain pods, start deleting and join, each change reported with `SolveMemo::changed`.
#[test]
fn a_tracking_memo_solves_as_a_fresh_one_as_the_cluster_changes() {
    use crate::scheduling::{solve_with, SolveMemo};
    let node = |i: usize| {
        let name = format!("node-{i}");
        let zone = format!("test-zone-{}", 1 + i % 3);
        let mut n = managed(true, vec![]);
        n.node.name = name.clone();
        n.node.labels.insert(HOSTNAME.into(), name);
        n.node.labels.insert(ZONE.into(), zone);
        n.pods = (0..i % 4)
            .map(|p| {
                PodBuilder::new(&format!("bound-{i}-{p}"))
                    .cpu("1")
                    .label("app", if p % 2 == 0 { "web" } else { "db" })
                    .build()
            })
            .collect();
        n
    };
    let pending = |round: usize| -> Vec<crate::model::pod::Pod> {
        (0..6)
            .map(|p| {
                let b = PodBuilder::new(&format!("new-{round}-{p}")).cpu("2");
                match p % 3 {
                    0 => b
                        .label("app", "web")
                        .spread(ZONE, 1, true, &[("app", "web")]),
                    1 => b
                        .label("app", "db")
                        .anti_affinity(HOSTNAME, &[("app", "db")]),
                    _ => b.node_selector(ZONE, "test-zone-2"),
                }
                .build()
            })
            .collect()
    };
    let mut inp = input(
        pending(0),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes = (0..9).map(node).collect();
    let mut memo = SolveMemo::tracking();
    let check = |inp: &Input, memo: &mut SolveMemo, step: &str| {
        assert_eq!(solve_with(inp, memo), solve(inp), "{step}");
    };
    check(&inp, &mut memo, "first solve");
    check(&inp, &mut memo, "again");
    inp.existing_nodes[2].pods.push(
        PodBuilder::new("moved")
            .cpu("5")
            .label("app", "web")
            .build(),
    );
    memo.changed(2);
    inp.pods = pending(1);
    check(&inp, &mut memo, "pods added to a node");
    inp.existing_nodes[4].node.deleting = true;
    check(&inp, &mut memo, "a node deleting");
    inp.existing_nodes.push(node(10));
    memo.changed(9);
    inp.pods = pending(2);
    check(&inp, &mut memo, "a node joined");
}
