//! Topology spread and pod (anti-)affinity, case by case.

use std::collections::BTreeSet;

use super::*;

#[test]
fn zonal_spread_balances_domains() {
    let plan = solve(&input(
        pods(6, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("1")
                .label("app", "web")
                .spread(ZONE, 1, true, &[("app", "web")])
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut per_zone: BTreeMap<String, usize> = BTreeMap::new();
    for c in &plan.node_claims {
        assert_eq!(c.zones.len(), 1, "each NodeClaim is pinned to a zone");
        *per_zone.entry(c.zones[0].clone()).or_default() += c.pods.len();
    }
    assert_eq!(per_zone.values().copied().collect::<Vec<_>>(), [2, 2, 2]);
}

#[test]
fn hostname_spread_and_anti_affinity_force_separate_nodes() {
    let plan = solve(&input(
        pods(3, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("100m")
                .label("app", "db")
                .anti_affinity(HOSTNAME, &[("app", "db")])
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 3);
    let plan = solve(&input(
        pods(4, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("100m")
                .label("app", "web")
                .spread(HOSTNAME, 1, true, &[("app", "web")])
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 4);
}

#[test]
fn existing_anti_affinity_repels_new_pods() {
    let node = Node {
        name: "node-a".into(),
        labels: labels_of(&[(HOSTNAME, "node-a")]),
        allocatable: crate::model::resources::Resources::from_pairs(&[
            ("cpu", "8"),
            ("memory", "16Gi"),
            ("pods", "10"),
        ]),
        ready: true,
        initialized: true,
        ..Default::default()
    };
    let loner = PodBuilder::new("loner")
        .cpu("100m")
        .anti_affinity(HOSTNAME, &[("app", "web")])
        .on_node("node-a")
        .build();
    let mut inp = input(
        pods(1, |_| {
            PodBuilder::new("web").cpu("100m").label("app", "web")
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(ExistingNode {
        node,
        pods: vec![loner],
    });
    let plan = solve(&inp);
    assert!(
        plan.existing_nodes.is_empty(),
        "inverse anti-affinity keeps web off node-a"
    );
    assert_eq!(plan.node_claims.len(), 1);
}

#[test]
fn pod_affinity_collocates_in_a_zone() {
    let plan = solve(&input(
        pods(6, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("3")
                .label("app", "cache")
                .affinity(ZONE, &[("app", "cache")])
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let zones: BTreeSet<&String> = plan.node_claims.iter().flat_map(|c| &c.zones).collect();
    assert_eq!(zones.len(), 1, "all in one zone: {zones:?}");
}

#[test]
fn spread_works_on_any_known_key() {
    // Capacity type is a domain like any other: spot and on-demand alternate.
    let plan = solve(&input(
        pods(4, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("1")
                .label("app", "web")
                .spread(CAPACITY_TYPE, 1, true, &[("app", "web")])
                .anti_affinity(HOSTNAME, &[("app", "web")])
        }),
        vec![pool_input(node_pool("default"), fake_instance_types(8))],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut per_type: BTreeMap<String, usize> = BTreeMap::new();
    for c in &plan.node_claims {
        *per_type.entry(c.launch.capacity_type.clone()).or_default() += 1;
    }
    assert_eq!(per_type.get("spot"), Some(&2), "{per_type:?}");
    assert_eq!(per_type.get("on-demand"), Some(&2), "{per_type:?}");
    // A key no NodePool, instance type or node defines has no domains: the constraint is ignored.
    let plan = solve(&input(
        vec![PodBuilder::new("p")
            .cpu("1")
            .label("app", "x")
            .spread("example.com/rack", 1, true, &[("app", "x")])
            .build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 1);
}

#[test]
fn spread_over_a_custom_nodepool_label() {
    let pool = with_requirement(node_pool("default"), "example.com/rack", In, &["r1", "r2"]);
    let plan = solve(&input(
        pods(4, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("3")
                .label("app", "db")
                .spread("example.com/rack", 1, true, &[("app", "db")])
        }),
        vec![pool_input(pool, small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut per_rack: BTreeMap<String, usize> = BTreeMap::new();
    for c in &plan.node_claims {
        *per_rack
            .entry(c.labels["example.com/rack"].clone())
            .or_default() += c.pods.len();
    }
    assert_eq!(
        per_rack.values().copied().collect::<Vec<_>>(),
        [2, 2],
        "{per_rack:?}"
    );
}

#[test]
fn hostname_spread_allows_max_skew_replicas_per_node() {
    let plan = solve(&input(
        pods(30, |i| {
            PodBuilder::new(&format!("web-{i}"))
                .cpu("500m")
                .label("app", "web")
                .spread(HOSTNAME, 2, true, &[("app", "web")])
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    let per_claim: BTreeSet<usize> = plan.node_claims.iter().map(|c| c.pods.len()).collect();
    assert_eq!(
        per_claim,
        [2].into(),
        "{} NodeClaims",
        plan.node_claims.len()
    );
    assert_eq!(plan.node_claims.len(), 15);
}
