//! Upstream's "Existing Nodes" (`core v1.14.1: pkg/controllers/provisioning/scheduling/
//! suite_test.go`): pods go to the cluster's nodes before new NodeClaims, initialized nodes
//! first, only where they are compatible; a DaemonSet that would not run on a node reserves
//! nothing there. Each test names the It it mirrors.

use super::constraints::default_types;
use super::*;
use crate::model::resources::Resources;

/// An initialized, ready node named `name` with this allocatable and labels (besides its
/// hostname); managed by the `default` pool when `managed`.
fn node(name: &str, cpu: &str, memory: &str, managed: bool) -> ExistingNode {
    let mut labels = labels_of(&[(HOSTNAME, name)]);
    if managed {
        labels.insert("karpenter.sh/nodepool".into(), "default".into());
        labels.insert("karpenter.sh/initialized".into(), "true".into());
    }
    ExistingNode {
        node: Node {
            name: name.into(),
            labels,
            allocatable: Resources::from_pairs(&[
                ("cpu", cpu),
                ("memory", memory),
                ("pods", "110"),
            ]),
            ready: true,
            initialized: true,
            ..Default::default()
        },
        pods: vec![],
    }
}

fn with_nodes(pods: Vec<crate::model::pod::Pod>, nodes: Vec<ExistingNode>) -> Input {
    let mut inp = input(
        pods,
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = nodes;
    inp
}

/// "should schedule a pod to an existing node unowned by Karpenter", "should schedule multiple
/// pods to an existing node unowned by Karpenter" (100 pods of 10m on a 10-CPU node).
#[test]
fn pods_go_to_an_unowned_node_before_a_new_one() {
    for n in [1, 100] {
        let plan = solve(&with_nodes(
            pods(n, |i| PodBuilder::new(&format!("p{i:03}")).cpu("10m")),
            vec![node("unowned", "10", "100Gi", false)],
        ));
        assert!(plan.node_claims.is_empty(), "{n} pods");
        assert_eq!(plan.existing_nodes.len(), 1);
        assert_eq!(plan.existing_nodes[0].node, "unowned");
        assert_eq!(plan.existing_nodes[0].pods.len(), n);
    }
}

/// "should order initialized nodes for scheduling uninitialized nodes": of 100 nodes of the
/// pool only one (not the first by name) is initialized; the pod goes to it.
#[test]
fn the_initialized_node_is_tried_first() {
    let nodes = (0..100)
        .map(|i| {
            let mut n = node(&format!("node-{i:03}"), "4", "4Gi", true);
            if i != 57 {
                n.node.initialized = false;
                n.node.labels.remove("karpenter.sh/initialized");
            }
            n
        })
        .collect();
    let plan = solve(&with_nodes(vec![PodBuilder::new("p").build()], nodes));
    assert!(plan.node_claims.is_empty());
    assert_eq!(plan.existing_nodes.len(), 1);
    assert_eq!(plan.existing_nodes[0].node, "node-057");
}

/// "should consider a pod incompatible with an existing node but compatible with NodePool": the
/// node has no zone, the pod wants `test-zone-1`: pending without a pool, a new NodeClaim with
/// one.
#[test]
fn a_pod_the_node_cannot_take_gets_a_nodeclaim() {
    let pod = || {
        PodBuilder::new("p")
            .required_term(&[(ZONE, In, &["test-zone-1"])])
            .build()
    };
    let mut inp = with_nodes(vec![pod()], vec![node("n1", "10", "10Gi", true)]);
    inp.pools.clear();
    let plan = solve(&inp);
    assert!(plan.existing_nodes.iter().all(|e| e.pods.is_empty()));
    assert_eq!(plan.unschedulable.len(), 1);

    let plan = solve(&with_nodes(
        vec![pod()],
        vec![node("n1", "10", "10Gi", true)],
    ));
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].labels[ZONE], "test-zone-1");
}

/// "Existing Nodes › Daemonsets › should not subtract daemonset overhead that is not strictly
/// compatible with an existing node": a DaemonSet of 100 CPU / 100Gi wanting `test-zone-1`
/// reserves nothing on a 1-CPU node without a zone, so a 1-CPU pod fits there; the next pod
/// finds the node full, and every new NodeClaim (which could be in zone 1) would carry the
/// DaemonSet, so it stays pending.
#[test]
fn a_daemonset_that_would_not_run_on_the_node_reserves_nothing_there() {
    let ds = PodBuilder::new("ds")
        .cpu("100")
        .memory("100Gi")
        .required_term(&[(ZONE, In, &["test-zone-1"])])
        .daemonset("ds")
        .build();
    let pod = |name: &str| PodBuilder::new(name).cpu("1").memory("1Gi").build();
    let mut inp = with_nodes(vec![pod("p1")], vec![node("n1", "1", "1Gi", true)]);
    inp.daemonsets = vec![ds];
    let plan = solve(&inp);
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    assert_eq!(plan.existing_nodes[0].pods, ["default/p1"]);

    let mut next = inp.clone();
    next.existing_nodes[0].pods.push(
        PodBuilder::new("p1")
            .cpu("1")
            .memory("1Gi")
            .on_node("n1")
            .build(),
    );
    next.pods = vec![pod("p2")];
    let plan = solve(&next);
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    assert_eq!(plan.unschedulable.len(), 1);
}
