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
