//! Topology spread and pod (anti-)affinity, case by case.

use std::collections::BTreeSet;

use super::*;
use crate::model::pod::Pod;
use crate::model::taints::Taint;

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
    let node = roomy_node("node-a");
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
}

/// Upstream `topology_test.go` "should ignore unknown topology keys": despite its name, the pod
/// whose DoNotSchedule spread is on a key nothing defines is NOT scheduled (the group has no
/// domain), and the pod without it is; a ScheduleAnyway spread on such a key is relaxed away.
#[test]
fn a_hard_spread_on_a_key_without_domains_keeps_the_pod_pending() {
    let plan = solve(&input(
        vec![
            PodBuilder::new("spread")
                .cpu("1")
                .label("app", "x")
                .spread("example.com/rack", 1, true, &[("app", "x")])
                .build(),
            PodBuilder::new("plain").cpu("1").build(),
        ],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods, ["default/plain"]);
    assert_eq!(plan.unschedulable.len(), 1);
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::NoTopologyDomains);
    assert_eq!(
        reason.to_string(),
        "NodePool default: topology spread on example.com/rack (maxSkew 1, pods app=x) cannot be \
         satisfied: no NodePool, instance type or node has a value for its key"
    );
    let plan = solve(&input(
        vec![PodBuilder::new("soft")
            .cpu("1")
            .label("app", "x")
            .spread("example.com/rack", 1, false, &[("app", "x")])
            .build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    // A node that has the key gives the group a domain: the pod can go there (and only there).
    let mut inp = input(
        vec![PodBuilder::new("spread")
            .cpu("1")
            .label("app", "x")
            .spread("example.com/rack", 1, true, &[("app", "x")])
            .build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let mut rack_node = node("rack-node", &[("example.com/rack", "r1")], &[]);
    rack_node.allocatable.cpu = 4000;
    inp.existing_nodes.push(ExistingNode {
        node: rack_node,
        pods: vec![],
    });
    let plan = solve(&inp);
    assert_eq!(plan.existing_nodes.len(), 1, "{:?}", plan.unschedulable);
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

fn node(name: &str, extra: &[(&str, &str)], taints: &[Taint]) -> Node {
    let mut labels = labels_of(&[(HOSTNAME, name)]);
    labels.extend(labels_of(extra));
    Node {
        name: name.into(),
        labels,
        taints: taints.to_vec(),
        allocatable: crate::model::resources::Resources::from_pairs(&[
            ("cpu", "100m"),
            ("memory", "1Gi"),
            ("pods", "10"),
        ]),
        ready: true,
        initialized: true,
        ..Default::default()
    }
}

fn spread_pods(n: usize, honor_taints: bool, f: impl Fn(PodBuilder) -> PodBuilder) -> Vec<Pod> {
    pods(n, |i| {
        let mut b = f(PodBuilder::new(&format!("p{i}"))
            .cpu("1")
            .label("app", "web")
            .spread("fake-label", 1, true, &[("app", "web")]));
        b = b.spread_policies(honor_taints, None);
        b
    })
}

fn per_label(plan: &Plan) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for c in &plan.node_claims {
        *out.entry(c.labels.get("fake-label").cloned().unwrap_or_default())
            .or_default() += c.pods.len();
    }
    out
}

/// Upstream `topology_test.go` "should balance pods across a label (NodeTaintsPolicy=ignore)"
/// and "(NodeTaintsPolicy=honor)": two tainted nodes (tiny, full) bring domains foo and bar; the
/// pool brings baz. Ignoring taints, all three count and only one pod fits the skew; honouring
/// them, the tainted nodes' domains are left out and every pod goes to baz.
#[test]
fn node_taints_policy_decides_whether_tainted_nodes_domains_count() {
    let tainted = [taint("taintname", "taintvalue", Effect::NoSchedule)];
    let build = |honor: bool| {
        let mut pool = node_pool("default");
        pool.labels = labels_of(&[("fake-label", "baz")]);
        let mut inp = input(
            spread_pods(5, honor, |b| b),
            vec![pool_input(pool, small_catalog())],
        );
        for (name, v) in [("node-1", "foo"), ("node-2", "bar")] {
            inp.existing_nodes.push(ExistingNode {
                node: node(name, &[("fake-label", v)], &tainted),
                pods: vec![],
            });
        }
        inp
    };
    let plan = solve(&build(false));
    assert_eq!(per_label(&plan).values().sum::<usize>(), 1, "{plan:?}");
    assert_eq!(plan.unschedulable.len(), 4);
    let plan = solve(&build(true));
    assert_eq!(per_label(&plan)["baz"], 5, "{:?}", plan.unschedulable);
    assert!(plan.unschedulable.is_empty());
}

/// Upstream "should balance pods across a label when discovered from the nodepool
/// (NodeTaintsPolicy=ignore|honor)": a tainted pool the pods do not tolerate brings domain bar.
#[test]
fn node_taints_policy_leaves_out_domains_of_pools_the_pod_does_not_tolerate() {
    let build = |honor: bool| {
        let plain = with_requirement(node_pool("a-plain"), "fake-label", In, &["foo"]);
        let mut tainted = with_requirement(node_pool("b-tainted"), "fake-label", In, &["bar"]);
        tainted
            .taints
            .push(taint("taint-key", "taint-value", Effect::NoSchedule));
        input(
            spread_pods(2, honor, |b| b),
            vec![
                pool_input(plain, small_catalog()),
                pool_input(tainted, small_catalog()),
            ],
        )
    };
    let plan = solve(&build(false));
    assert_eq!(per_label(&plan), BTreeMap::from([("foo".to_string(), 1)]));
    assert_eq!(plan.unschedulable.len(), 1);
    assert_eq!(
        plan.unschedulable[0].reason.code(),
        ReasonCode::TaintNotTolerated,
        "{}",
        plan.unschedulable[0].reason
    );
    let plan = solve(&build(true));
    assert_eq!(per_label(&plan), BTreeMap::from([("foo".to_string(), 2)]));
    assert!(plan.unschedulable.is_empty());
}

/// Upstream "should balance pods across a label when mutually exclusive NodePools (by taints)
/// share domains (NodeTaintsPolicy=honor)": pools {foo, bar} and {foo, baz}, each tainted; two
/// pods tolerate the first, four the second. Each group only sees its pools' domains: skew
/// foo 2, bar 1, baz 3.
#[test]
fn node_taints_policy_with_pools_sharing_a_domain() {
    let pool = |name: &str, domains: &[&str], value: &str| {
        let mut p = with_requirement(node_pool(name), "fake-label", In, domains);
        p.taints.push(taint("taint-key", value, Effect::NoSchedule));
        pool_input(p, small_catalog())
    };
    let mut all = Vec::new();
    for (count, value) in [(2, "nodepool-0"), (4, "nodepool-1")] {
        for i in 0..count {
            all.push(
                PodBuilder::new(&format!("{value}-{i}"))
                    .cpu("1")
                    .label("app", "web")
                    .spread("fake-label", 1, true, &[("app", "web")])
                    .spread_policies(true, None)
                    .toleration("taint-key", value, Effect::NoSchedule)
                    .build(),
            );
        }
    }
    let plan = solve(&input(
        all,
        vec![
            pool("np-0", &["foo", "bar"], "nodepool-0"),
            pool("np-1", &["foo", "baz"], "nodepool-1"),
        ],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut counts: Vec<usize> = per_label(&plan).into_values().collect();
    counts.sort();
    assert_eq!(counts, [1, 2, 3], "{:?}", per_label(&plan));
}

/// Upstream "should balance pods across a label (NodeAffinityPolicy=ignore|honor)": nodes foo
/// and bar do not match the pods' node selector. Honour (the default) leaves their domains out,
/// so all five pods go to the pool's baz; Ignore counts them, and only one pod fits the skew.
#[test]
fn node_affinity_policy_decides_whether_unselected_nodes_domains_count() {
    let build = |ignore_affinity: bool| {
        let mut pool = node_pool("default");
        pool.labels = labels_of(&[("fake-label", "baz"), ("selector", "value")]);
        let mut inp = input(
            spread_pods(5, false, |b| {
                b.node_selector("selector", "value")
                    .spread_policies(false, Some(ignore_affinity))
            }),
            vec![pool_input(pool, small_catalog())],
        );
        for (name, v) in [("node-1", "foo"), ("node-2", "bar")] {
            inp.existing_nodes.push(ExistingNode {
                node: node(name, &[("fake-label", v), ("selector", "mismatch")], &[]),
                pods: vec![],
            });
        }
        inp
    };
    let plan = solve(&build(false));
    assert_eq!(per_label(&plan)["baz"], 5, "{:?}", plan.unschedulable);
    let plan = solve(&build(true));
    assert_eq!(per_label(&plan).values().sum::<usize>(), 1);
    assert_eq!(plan.unschedulable.len(), 4);
}

/// A pool admitting only `small` (zones 1-2) whose class also has `legacy`, offered in zone 3:
/// Karpenter's universe of zones holds zone 3 (`buildDomainGroups`).
fn small_only_pool_with_legacy_in_zone_3() -> (
    Vec<crate::model::instance_type::InstanceType>,
    crate::model::nodepool::NodePool,
) {
    let mut types = small_catalog();
    for t in &mut types {
        t.offerings.retain(|o| o.zone != "test-zone-3");
        t.requirements
            .add(Requirement::new(ZONE, In, ["test-zone-1", "test-zone-2"]));
    }
    types.push(instance_type(
        "legacy",
        "2",
        "4Gi",
        "10",
        on_demand(&["test-zone-3"], 0.05),
    ));
    let only_small = with_requirement(
        node_pool("default"),
        crate::model::labels::INSTANCE_TYPE,
        In,
        &["small"],
    );
    (types, only_small)
}

/// The pods such a spread leaves pending are refused in Karpenter's terms: the NodeClaim's
/// requirements with the spread's zone (`topology.kubernetes.io/zone In [<unreachable>]`) match
/// no instance type — "no instance type met the scheduling requirements" (core v1.14.1
/// `nodeclaim.go` `filterInstanceTypesByRequirements`, `InstanceTypeFilterError`), not a lack of
/// resources. Session 34's Saramin pool (three types in five zones): we said "no single instance
/// type fits requests cpu=1,memory=2Gi,pods=1".
#[test]
fn a_pod_held_by_an_unreachable_zone_is_refused_naming_that_zone() {
    let (types, only_small) = small_only_pool_with_legacy_in_zone_3();
    let spread = pods(3, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1")
            .label("app", "web")
            .spread(ZONE, 1, true, &[("app", "web")])
    });
    let plan = solve(&input(spread, vec![pool_input(only_small, types)]));
    assert_eq!(plan.unschedulable.len(), 1);
    let reason = plan.unschedulable[0].reason.to_string();
    assert!(
        reason.contains("no instance type satisfies the pod's requirements")
            && reason.contains("topology.kubernetes.io/zone In [test-zone-3]"),
        "{reason}"
    );
}

/// Karpenter's universe of zones is every zone any instance type of a pool's node class is
/// offered in (narrowed by the pool's zone requirement), plus the pool's own `In` zones, offered
/// or not (`core: pkg/controllers/provisioning/scheduling/topology.go` `buildDomainGroups`). A
/// zone no pool can reach holds the spread's minimum at 0, so a `DoNotSchedule` zone spread
/// places one pod per reachable zone and leaves the rest pending. Threads:
/// kubernetes-sigs/karpenter#3272 (a pool with `zone In [eu-west-2z]` beside the default pool:
/// the default pool's pods get "topology.kubernetes.io/zone In [eu-west-2z]" and stay pending),
/// aws/karpenter-provider-aws#8637 (a misconfigured pool's zone breaks unrelated spreads). We
/// took the zones of the types each pool admits only, and spread 8 pods over 3 zones.
#[test]
fn unreachable_zones_of_the_universe_hold_the_spread_minimum_at_zero() {
    let spread_pods = || {
        pods(8, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("1")
                .label("app", "web")
                .spread(ZONE, 1, true, &[("app", "web")])
        })
    };
    let placed = |plan: &Plan| plan.node_claims.iter().map(|c| c.pods.len()).sum::<usize>();
    // The pool admits only `small` (zones 1-2); `legacy`, of the same class, is offered in zone 3.
    let (mut types, only_small) = small_only_pool_with_legacy_in_zone_3();
    let plan = solve(&input(
        spread_pods(),
        vec![pool_input(only_small.clone(), types.clone())],
    ));
    assert_eq!(placed(&plan), 2, "one pod in each of zones 1 and 2");
    assert_eq!(plan.unschedulable.len(), 6);
    // The unreachable zone sorts first: among the tied minimal zones a reachable one is chosen
    // (Karpenter picks at random and picks again when the NodeClaim cannot go there).
    let first_out = vec![
        instance_type("small", "2", "4Gi", "10", on_demand(&FAKE_ZONES[1..], 0.1)),
        instance_type(
            "legacy",
            "2",
            "4Gi",
            "10",
            on_demand(&FAKE_ZONES[..1], 0.05),
        ),
    ];
    let plan = solve(&input(
        spread_pods(),
        vec![pool_input(only_small.clone(), first_out)],
    ));
    assert_eq!(placed(&plan), 2, "one pod in each of zones 2 and 3");
    assert!(plan.node_claims.iter().all(|c| c.zones[0] != "test-zone-1"));
    // Without `legacy` in the class, zone 3 is nobody's: 4 and 4.
    types.pop();
    let plan = solve(&input(spread_pods(), vec![pool_input(only_small, types)]));
    assert_eq!(placed(&plan), 8);
    // A second pool whose zone no type is offered in (#3272).
    let misconfigured =
        with_requirement(node_pool("non-existent-zone"), ZONE, In, &["test-zone-9"]);
    let plan = solve(&input(
        spread_pods(),
        vec![
            pool_input(node_pool("default"), small_catalog()),
            pool_input(misconfigured, small_catalog()),
        ],
    ));
    assert_eq!(placed(&plan), 3, "one pod in each reachable zone");
    assert_eq!(plan.unschedulable.len(), 5);
}
