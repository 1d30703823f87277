//! Which bound pods count for topology (s24-audit-state): a terminating pod is left out of spread
//! and affinity counts (`core v1.14.1 pkg/controllers/provisioning/scheduling/topology.go`
//! `IgnoredForTopology`), while its required anti-affinity still repels (cluster state keeps
//! the pod bound until it is terminal or gone: `pkg/controllers/state/cluster.go` `UpdatePod`,
//! `ForPodsWithAntiAffinity`; `pkg/controllers/state/suite_test.go` "Pod Anti-Affinity" ›
//! "should track pods with required anti-affinity").

use super::*;
use crate::model::pod::Pod;

fn terminating(builder: PodBuilder) -> Pod {
    let mut pod = builder.build();
    pod.terminating = true;
    pod
}

fn with_nodes(pending: Vec<Pod>, nodes: Vec<(Node, Vec<Pod>)>) -> crate::scheduling::Plan {
    let mut inp = input(
        pending,
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    for (node, pods) in nodes {
        inp.existing_nodes.push(ExistingNode { node, pods });
    }
    solve(&inp)
}

#[test]
fn a_terminating_pods_required_anti_affinity_still_repels() {
    let loner = terminating(
        PodBuilder::new("loner")
            .cpu("100m")
            .anti_affinity(HOSTNAME, &[("app", "web")])
            .on_node("node-a"),
    );
    let plan = with_nodes(
        pods(1, |_| {
            PodBuilder::new("web").cpu("100m").label("app", "web")
        }),
        vec![(roomy_node("node-a"), vec![loner])],
    );
    assert!(plan.existing_nodes.is_empty(), "{:?}", plan.existing_nodes);
    assert_eq!(plan.node_claims.len(), 1);
}

#[test]
fn a_terminating_pod_is_no_affinity_target() {
    let cache = terminating(
        PodBuilder::new("cache")
            .cpu("100m")
            .label("app", "cache")
            .on_node("node-a"),
    );
    let plan = with_nodes(
        pods(1, |_| {
            PodBuilder::new("web")
                .cpu("100m")
                .affinity(HOSTNAME, &[("app", "cache")])
        }),
        vec![(roomy_node("node-a"), vec![cache])],
    );
    assert!(plan.existing_nodes.is_empty(), "{:?}", plan.existing_nodes);
    assert!(plan.node_claims.is_empty());
    assert_eq!(plan.unschedulable.len(), 1, "no running cache pod to join");
}

#[test]
fn terminating_pods_do_not_count_in_a_spread() {
    let old = |i: usize| {
        terminating(
            PodBuilder::new(&format!("old-{i}"))
                .cpu("100m")
                .label("app", "web")
                .on_node("node-a"),
        )
    };
    let plan = with_nodes(
        pods(1, |_| {
            PodBuilder::new("web")
                .cpu("100m")
                .label("app", "web")
                .spread(HOSTNAME, 1, true, &[("app", "web")])
        }),
        vec![(roomy_node("node-a"), vec![old(0), old(1)])],
    );
    // Counted, node-a's two would leave room only on a new node (skew 3 − 0 > 1).
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims.len());
    assert_eq!(plan.existing_nodes.len(), 1, "{:?}", plan.existing_nodes);
    assert_eq!(plan.existing_nodes[0].node, "node-a");
}

/// `core v1.14.1 pkg/utils/resources/suite_test.go` "MinResources" as the provisioner uses it
/// (`nodeclaim.go FinalizeScheduling`): a NodeClaim requests its pods plus, per resource, the
/// smallest DaemonSet overhead of its instance types. A DaemonSet asking a device only the GPU type
/// has leaves the device out; the CPU is the smaller of 100m and 200m.
#[test]
fn a_nodeclaim_requests_the_per_resource_minimum_of_its_types_daemon_overhead() {
    use crate::model::labels::INSTANCE_TYPE;
    use crate::model::requirements::{NodeSelectorRequirement, Operator::NotIn};
    const GPU: &str = "gpu-vendor-instance-type";
    let on_gpu = PodBuilder::new("agent")
        .cpu("100m")
        .request("fake.com/vendor-a", "1")
        .daemonset("agent")
        .node_selector(INSTANCE_TYPE, GPU)
        .build();
    let mut elsewhere = PodBuilder::new("logs")
        .cpu("200m")
        .daemonset("logs")
        .build();
    elsewhere.required_node_affinity = vec![vec![NodeSelectorRequirement::new(
        INSTANCE_TYPE,
        NotIn,
        &[GPU],
    )]];
    let mut inp = input(
        vec![PodBuilder::new("p").cpu("1").memory("1Gi").build()],
        vec![pool_input(
            node_pool("default"),
            super::constraints::default_types(),
        )],
    );
    inp.daemonsets = vec![on_gpu, elsewhere];
    let plan = solve(&inp);
    let claim = &plan.node_claims[0];
    assert!(
        claim.instance_types.iter().any(|t| &*t.name == GPU) && claim.instance_types.len() > 1,
        "{:?}",
        claim.instance_types
    );
    assert_eq!(
        claim.requests.get("fake.com/vendor-a"),
        0,
        "{:?}",
        claim.requests
    );
    assert_eq!(claim.requests.cpu, 1100, "{:?}", claim.requests);
}
