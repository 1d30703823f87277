//! Upstream's "In-Flight Nodes" (`core v1.14.1: pkg/controllers/provisioning/scheduling/
//! suite_test.go`): a second batch sees the first batch's NodeClaims as in-flight nodes of their
//! launched type, and uses them before launching more.

use super::constraints::default_types;
use super::*;
use crate::model::pod::Pod;

/// The first batch's plan for `first`, then the plan for `second` with the first batch's
/// NodeClaims in flight (renamed `node-N`, so the second batch's names cannot collide).
fn two_batches(
    pool: crate::model::nodepool::NodePool,
    first: Vec<Pod>,
    second: Vec<Pod>,
    before_second: impl FnOnce(&mut Input),
) -> (Plan, Input, Plan) {
    let inp = input(first, vec![pool_input(pool, default_types())]);
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut next = next_batch(&inp, &plan, second);
    before_second(&mut next);
    let second = solve(&next);
    (plan, next, second)
}

fn tiny(name: &str) -> PodBuilder {
    PodBuilder::new(name).cpu("10m")
}

/// Pods per domain of `key` over the in-flight nodes and the second plan, sorted.
fn per_domain(next: &Input, plan: &Plan, key: &str) -> Vec<usize> {
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for n in &next.existing_nodes {
        let added = plan
            .existing_nodes
            .iter()
            .find(|p| p.node == n.node.name)
            .map_or(0, |p| p.pods.len());
        *per.entry(n.node.labels[key].clone()).or_default() += n.pods.len() + added;
    }
    for c in &plan.node_claims {
        let domain = if key == HOSTNAME {
            c.name.clone()
        } else {
            c.labels[key].clone()
        };
        *per.entry(domain).or_default() += c.pods.len();
    }
    let mut v: Vec<usize> = per.into_values().filter(|n| *n > 0).collect();
    v.sort_unstable();
    v
}

/// "should not launch a second node if there is an in-flight node that can support the pod",
/// "… (node selectors)" (zone 2, then zones 1–2 on the same node, then zones 1–3: a new node),
/// "should launch a second node if a pod won't fit on the existingNodes node" (1001m on the
/// 2-CPU type, then 1 CPU), "… isn't compatible with the existingNodes node (node selector)"
/// (arm64), "should launch a second node if an in-flight node is terminating".
#[test]
fn a_second_batch_uses_the_in_flight_node_when_the_pod_fits_it() {
    let pool = || node_pool("default");
    let (_, _, second) = two_batches(
        pool(),
        vec![tiny("a").build()],
        vec![tiny("b").build()],
        |_| {},
    );
    assert!(second.node_claims.is_empty());
    assert_eq!(second.existing_nodes[0].pods, ["default/b"]);

    let zone2 = tiny("a")
        .required_term(&[(ZONE, In, &["test-zone-2"])])
        .build();
    let zones12 = tiny("b")
        .required_term(&[(ZONE, In, &["test-zone-1", "test-zone-2"])])
        .build();
    let (_, _, second) = two_batches(pool(), vec![zone2.clone()], vec![zones12], |_| {});
    assert!(second.node_claims.is_empty(), "zone 2 is in both");
    let zones13 = tiny("c")
        .required_term(&[(ZONE, In, &["test-zone-1", "test-zone-3"])])
        .build();
    let (_, _, second) = two_batches(pool(), vec![zone2], vec![zones13], |_| {});
    assert_eq!(second.node_claims.len(), 1, "the node is in zone 2");

    let (first, _, second) = two_batches(
        pool(),
        vec![PodBuilder::new("a").cpu("1001m").build()],
        vec![PodBuilder::new("b").cpu("1").build()],
        |_| {},
    );
    assert_eq!(
        first.node_claims[0].launch.instance_type,
        "small-instance-type"
    );
    assert_eq!(second.node_claims.len(), 1, "2 CPU hold 1001m, not 2001m");

    let arm = PodBuilder::new("b")
        .node_selector(crate::model::labels::ARCH, "arm64")
        .build();
    let (_, _, second) = two_batches(pool(), vec![tiny("a").build()], vec![arm], |_| {});
    assert_eq!(second.node_claims.len(), 1);

    let (_, _, second) = two_batches(
        pool(),
        vec![tiny("a").build()],
        vec![tiny("b").build()],
        |next| next.existing_nodes[0].node.deleting = true,
    );
    assert_eq!(
        second.node_claims.len(),
        1,
        "a terminating node takes nothing"
    );
}

/// "Topology › should balance pods across zones with in-flight nodes" (4 pods: 1, 1, 2; 5 more
/// fill the in-flight nodes to 3, 3, 3 without a new node) and "… across hostnames with in-flight
/// nodes" (4 pods on 4 nodes; 5 more go to 5 new nodes rather than doubling up).
#[test]
fn spreads_count_the_in_flight_nodes() {
    let spread = |key: &str, prefix: &str, n: usize| {
        pods(n, |i| {
            PodBuilder::new(&format!("{prefix}{i}"))
                .label("foo", "bar")
                .spread(key, 1, true, &[("foo", "bar")])
        })
    };
    let no_nodes = input(Vec::new(), Vec::new());
    let (plan, next, second) = two_batches(
        node_pool("default"),
        spread(ZONE, "p", 4),
        spread(ZONE, "second-p", 5),
        |_| {},
    );
    assert_eq!(per_domain(&no_nodes, &plan, ZONE), [1, 1, 2]);
    assert!(second.node_claims.is_empty(), "{:?}", second.node_claims);
    assert_eq!(per_domain(&next, &second, ZONE), [3, 3, 3]);

    let (plan, next, second) = two_batches(
        node_pool("default"),
        spread(HOSTNAME, "p", 4),
        spread(HOSTNAME, "second-p", 5),
        |_| {},
    );
    assert_eq!(plan.node_claims.len(), 4);
    assert_eq!(second.node_claims.len(), 5);
    assert_eq!(per_domain(&next, &second, HOSTNAME), [1; 9]);
}
