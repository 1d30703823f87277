//! Topology spread and pod (anti-)affinity cases from Karpenter's
//! `core: pkg/controllers/provisioning/scheduling/topology_test.go` ("Topology"), against the
//! fake provider's default instance types. Upstream's `ExpectSkew` counts the selected pods per
//! domain of the constraint's key; [`skew`] does the same over the plan and the existing nodes.

use super::constraints::default_types;
use super::*;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::model::selector::LabelSelector;

const APP: (&str, &str) = ("test", "test");

/// Pods matching `APP` per value of `key`, sorted descending (order-free like `ConsistOf`).
pub(super) fn skew(inp: &Input, plan: &Plan, key: &str) -> Vec<usize> {
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    let selected = |name: &str, pods: &[Pod]| {
        pods.iter().any(|p| {
            format!("{}/{}", p.namespace, p.name) == name
                && p.labels.get(APP.0).map(String::as_str) == Some(APP.1)
        })
    };
    for c in &plan.node_claims {
        let n = c.pods.iter().filter(|p| selected(p, &inp.pods)).count();
        if n > 0 {
            let domain = if key == HOSTNAME {
                c.name.clone()
            } else {
                c.labels[key].clone()
            };
            *per.entry(domain).or_default() += n;
        }
    }
    for e in &inp.existing_nodes {
        let placed = plan.existing_nodes.iter().find(|p| p.node == e.node.name);
        let new = placed.map_or(0, |p| {
            p.pods.iter().filter(|n| selected(n, &inp.pods)).count()
        });
        let old = e
            .pods
            .iter()
            .filter(|p| p.labels.get(APP.0).map(String::as_str) == Some(APP.1))
            .count();
        if new + old > 0 {
            *per.entry(e.node.labels[key].clone()).or_default() += new + old;
        }
    }
    let mut v: Vec<usize> = per.into_values().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

fn spread_pod(name: &str, key: &str, max_skew: i32, min_domains: Option<i32>) -> PodBuilder {
    PodBuilder::new(name)
        .label(APP.0, APP.1)
        .spread(key, max_skew, true, &[APP])
        .min_domains(min_domains)
}

fn run(pods: Vec<Pod>, pool: NodePool) -> (Input, Plan) {
    let inp = input(pods, vec![pool_input(pool, default_types())]);
    let plan = solve(&inp);
    (inp, plan)
}

fn zones(z: &[&str]) -> NodePool {
    with_requirement(node_pool("default"), ZONE, In, z)
}

/// A node in `zone` holding `n` pods that match the spread selector.
fn zone_node(name: &str, zone: &str, n: usize) -> ExistingNode {
    let pods = (0..n)
        .map(|i| {
            PodBuilder::new(&format!("{name}-{i}"))
                .label(APP.0, APP.1)
                .on_node(name)
                .build()
        })
        .collect();
    node_with(name, zone, ON_DEMAND, pods)
}

/// A ready, initialized node `name` in `zone` of `capacity_type` (1 CPU, 1Gi, 10 pods
/// allocatable) holding `pods`.
pub(super) fn node_with(
    name: &str,
    zone: &str,
    capacity_type: &str,
    pods: Vec<Pod>,
) -> ExistingNode {
    ExistingNode {
        node: crate::model::node::Node {
            name: name.into(),
            labels: labels_of(&[
                (HOSTNAME, name),
                (ZONE, zone),
                (CAPACITY_TYPE, capacity_type),
            ]),
            allocatable: crate::model::resources::Resources::from_pairs(&[
                ("cpu", "1"),
                ("memory", "1Gi"),
                ("pods", "10"),
            ]),
            ready: true,
            initialized: true,
            ..Default::default()
        },
        pods,
    }
}

/// Upstream "Zonal": "should respect minDomains constraints" (two zones, minDomains 3: the
/// global minimum counts as 0, so only one pod per zone), "satisfied minDomains constraints
/// (equal) should allow expected pod scheduling" and "… (greater than minimum) …".
#[test]
fn min_domains() {
    let (inp, plan) = run(
        pods(3, |i| spread_pod(&format!("p{i}"), ZONE, 1, Some(3))),
        zones(&["test-zone-1", "test-zone-2"]),
    );
    assert_eq!(skew(&inp, &plan, ZONE), [1, 1]);
    assert_eq!(plan.unschedulable.len(), 1);
    for min in [3, 2] {
        let (inp, plan) = run(
            pods(11, |i| spread_pod(&format!("p{i}"), ZONE, 1, Some(min))),
            zones(&FAKE_ZONES),
        );
        assert_eq!(skew(&inp, &plan, ZONE), [4, 4, 3], "minDomains {min}");
    }
}

/// Upstream "Zonal" › "should schedule to the non-minimum domain if its all that's available":
/// zones 1 and 2 hold one pod each; the pool only reaches zone 3; max skew 5 admits 6 there.
#[test]
fn the_only_reachable_domain_takes_pods_up_to_max_skew() {
    let mut inp = input(
        pods(10, |i| {
            spread_pod(&format!("p{i}"), ZONE, 5, None).cpu("1100m")
        }),
        vec![pool_input(zones(&["test-zone-3"]), default_types())],
    );
    inp.pools.push(pool_input(
        {
            let mut p = zones(&["test-zone-1", "test-zone-2"]);
            p.name = "elsewhere".into();
            // Present only so that zones 1 and 2 are domains; its pods are all placed already.
            p.limits.insert("cpu".into(), 0);
            p
        },
        default_types(),
    ));
    inp.existing_nodes = vec![
        zone_node("n1", "test-zone-1", 1),
        zone_node("n2", "test-zone-2", 1),
    ];
    for e in &mut inp.existing_nodes {
        e.node.allocatable.cpu = 0;
    }
    let plan = solve(&inp);
    assert_eq!(skew(&inp, &plan, ZONE), [6, 1, 1]);
    assert_eq!(plan.unschedulable.len(), 4);
}

/// Many existing nodes per zone: where a spread pod may go is worked out once per zone and
/// reused for the zone's other nodes (`existing_node::TopologyVerdicts`), and worked out again
/// after each placement changes the counts. Nine pods, three nodes in each zone, room for one
/// pod per node: one pod per node, three per zone, no NodeClaim.
#[test]
fn existing_nodes_of_one_zone_share_the_verdict_until_the_counts_change() {
    let mut inp = input(
        pods(9, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).cpu("600m")
        }),
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = (0..9)
        .map(|i| zone_node(&format!("n{i}"), FAKE_ZONES[i / 3], 0))
        .collect();
    let plan = solve(&inp);
    assert_eq!(skew(&inp, &plan, ZONE), [3, 3, 3]);
    assert!(plan.node_claims.is_empty());
    assert!(plan.existing_nodes.iter().all(|e| e.pods.len() == 1));
    assert_eq!(plan.existing_nodes.len(), 9);
}

/// A zone topology refuses is skipped node by node no longer than it refuses
/// (`Solver::first_fit_existing`): zone 1's two nodes come first and hold two pods, so the
/// first four pods skip them for zones 2 and 3 (two each, filling those nodes); then the counts
/// are 2/2/2 and the fifth pod goes to zone 1's first node, not to a new NodeClaim. The same
/// input solved twice with one tracking memo (the nodes' domain classes kept) plans the same.
#[test]
fn a_zone_skipped_while_refused_is_tried_again_once_the_counts_admit_it() {
    let mut inp = input(
        pods(5, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).cpu("400m")
        }),
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = vec![
        zone_node("a0", "test-zone-1", 1),
        zone_node("a1", "test-zone-1", 1),
        zone_node("b0", "test-zone-2", 0),
        zone_node("c0", "test-zone-3", 0),
    ];
    let plan = solve(&inp);
    assert!(plan.node_claims.is_empty(), "{plan:?}");
    let placed: Vec<(&str, usize)> = plan
        .existing_nodes
        .iter()
        .map(|e| (e.node.as_str(), e.pods.len()))
        .collect();
    assert_eq!(placed, [("a0", 1), ("b0", 2), ("c0", 2)]);
    assert_eq!(skew(&inp, &plan, ZONE), [3, 2, 2]);
    let mut memo = crate::scheduling::SolveMemo::tracking();
    let first = crate::scheduling::solve_with(&inp, &mut memo);
    assert_eq!(first, plan);
    assert_eq!(crate::scheduling::solve_with(&inp, &mut memo), plan);
}

/// A spread pod that fits nowhere is tried in every cycle of the queue; its pool's refusal for
/// lack of an instance type is put into words once, at the end (`scheduler::Deferred`), and
/// says the same as when explained at every try (`solve` compares with `Options::exhaustive`,
/// which explains at once): here the CPU short of the largest type.
#[test]
fn a_spread_pod_that_fits_nowhere_is_explained_as_at_its_last_try() {
    let inp = input(
        vec![
            spread_pod("huge", ZONE, 1, None).cpu("1000").build(),
            spread_pod("small", ZONE, 1, None).cpu("1").build(),
        ],
        vec![pool_input(node_pool("default"), default_types())],
    );
    let plan = solve(&inp);
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.unschedulable.len(), 1);
    let Reason::NoPlacement { refusals, .. } = &plan.unschedulable[0].reason else {
        panic!("{:?}", plan.unschedulable[0].reason);
    };
    assert!(
        matches!(
            refusals[0].cause,
            PoolCause::RequestsExceedInstanceTypes { .. }
        ),
        "{refusals:?}"
    );
}

/// Upstream "Zonal" › "should only schedule to minimum domains if already violating max skew":
/// zone 1 holds 3 pods, the others none; 3 more pods go to zones 2 and 3 only.
#[test]
fn a_violated_skew_only_admits_the_minimum_domains() {
    let mut inp = input(
        pods(3, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).cpu("1100m")
        }),
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = vec![zone_node("n1", "test-zone-1", 3)];
    let plan = solve(&inp);
    assert_eq!(skew(&inp, &plan, ZONE), [3, 2, 1]);
    assert!(plan.existing_nodes.iter().all(|e| e.pods.is_empty()));
}

/// Upstream "Zonal" › "should only count running/scheduled pods with matching labels scheduled
/// to nodes with a corresponding domain": pods of other labels and pods on nodes without the
/// zone label are not counted.
#[test]
fn only_matching_pods_on_nodes_with_the_domain_count() {
    let mut inp = input(
        pods(6, |i| spread_pod(&format!("p{i}"), ZONE, 1, None).cpu("1")),
        vec![pool_input(node_pool("default"), default_types())],
    );
    let mut other = zone_node("n1", "test-zone-1", 0);
    other.pods.push(
        PodBuilder::new("other")
            .label("test", "other")
            .on_node("n1")
            .build(),
    );
    let mut no_zone = zone_node("n2", "test-zone-2", 2);
    no_zone.node.labels.remove(ZONE);
    inp.existing_nodes = vec![other, no_zone];
    for e in &mut inp.existing_nodes {
        e.node.allocatable.cpu = 0;
    }
    let plan = solve(&inp);
    let mut per: Vec<usize> = FAKE_ZONES
        .iter()
        .map(|z| {
            plan.node_claims
                .iter()
                .filter(|c| c.labels[ZONE] == *z)
                .map(|c| c.pods.len())
                .sum()
        })
        .collect();
    per.sort_unstable();
    assert_eq!(per, [2, 2, 2]);
}

/// Upstream "Hostname": "should balance pods across nodes" (max skew 1: one pod per node) and
/// "should balance pods on the same hostname up to maxskew" (max skew 4: four pods, one node).
#[test]
fn hostname_spread() {
    let (inp, plan) = run(
        pods(4, |i| spread_pod(&format!("p{i}"), HOSTNAME, 1, None)),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, HOSTNAME), [1, 1, 1, 1]);
    let (inp, plan) = run(
        pods(4, |i| spread_pod(&format!("p{i}"), HOSTNAME, 4, None)),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, HOSTNAME), [4]);
}

/// Upstream "CapacityType": "should balance pods across capacity types" (2 and 2) and "should
/// respect NodePool capacity type constraints" (spot only: all four on spot).
#[test]
fn capacity_type_spread() {
    let (inp, plan) = run(
        pods(4, |i| spread_pod(&format!("p{i}"), CAPACITY_TYPE, 1, None)),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, CAPACITY_TYPE), [2, 2]);
    let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &[SPOT]);
    let (inp, plan) = run(
        pods(4, |i| spread_pod(&format!("p{i}"), CAPACITY_TYPE, 1, None)),
        pool,
    );
    assert_eq!(skew(&inp, &plan, CAPACITY_TYPE), [4]);
}

/// Upstream "MatchLabelKeys": "should support matchLabelKeys" (two "deployments" by label
/// value spread independently: two nodes of two pods) and "should ignore unknown labels
/// specified in matchLabelKeys" (four nodes of one pod).
#[test]
fn match_label_keys() {
    let with_key = |name: &str, value: Option<&str>| {
        let mut b = spread_pod(name, HOSTNAME, 1, None);
        if let Some(v) = value {
            b = b.label("test-label", v);
        }
        let mut pod = b.build();
        pod.topology_spread[0].match_label_keys = vec!["test-label".into()];
        pod
    };
    let mut ps: Vec<Pod> = (0..2)
        .map(|i| with_key(&format!("a{i}"), Some("value-a")))
        .collect();
    ps.extend((0..2).map(|i| with_key(&format!("b{i}"), Some("value-b"))));
    let (inp, plan) = run(ps, node_pool("default"));
    assert_eq!(skew(&inp, &plan, HOSTNAME), [2, 2]);
    let ps: Vec<Pod> = (0..4).map(|i| with_key(&format!("p{i}"), None)).collect();
    let (inp, plan) = run(ps, node_pool("default"));
    assert_eq!(skew(&inp, &plan, HOSTNAME), [1, 1, 1, 1]);
}

/// Upstream "Combined Hostname and Zonal Topology" › "should spread pods while respecting both
/// constraints (hostname and zonal)": zone max skew 1 and hostname max skew 3 over 3 zones.
#[test]
fn hostname_and_zonal_spread_together() {
    let (inp, plan) = run(
        pods(6, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).spread(HOSTNAME, 3, true, &[APP])
        }),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, ZONE), [2, 2, 2]);
    assert!(skew(&inp, &plan, HOSTNAME).iter().all(|&n| n <= 3));
}

/// Upstream "Combined Zonal Topology and Node Affinity" › "should limit spread options by
/// nodeSelector" (zone 1 only: all pods there) and "should limit spread options by node
/// requirements" (zones 1 and 2: balanced over those).
#[test]
fn node_affinity_limits_the_spread_domains() {
    let (inp, plan) = run(
        pods(5, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).node_selector(ZONE, "test-zone-1")
        }),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, ZONE), [5]);
    let (inp, plan) = run(
        pods(10, |i| {
            spread_pod(&format!("p{i}"), ZONE, 1, None).required_term(&[(
                ZONE,
                In,
                &["test-zone-1", "test-zone-2"],
            )])
        }),
        node_pool("default"),
    );
    assert_eq!(skew(&inp, &plan, ZONE), [5, 5]);
}

/// Upstream "Pod Affinity/Anti-Affinity" › "should filter pod affinity topologies by
/// namespace, no matching pods" / "… matching pods namespace list" / "… empty namespace
/// selector": a target in another namespace is only seen when the term names its namespace or
/// has an empty namespace selector.
#[test]
fn pod_affinity_is_filtered_by_namespace() {
    let target = || {
        PodBuilder::new("target")
            .namespace("other-ns")
            .label("security", "s2")
            .build()
    };
    let follower = |namespaces: Vec<String>, selector: Option<LabelSelector>| {
        let mut p = PodBuilder::new("follower")
            .affinity(HOSTNAME, &[("security", "s2")])
            .build();
        p.pod_affinity[0].namespaces = namespaces;
        p.pod_affinity[0].namespace_selector = selector;
        p
    };
    let cases = [
        ("no matching pods", follower(vec![], None), false),
        (
            "namespace list",
            follower(vec!["other-ns".into()], None),
            true,
        ),
        (
            "empty namespace selector",
            follower(vec![], Some(LabelSelector::default())),
            true,
        ),
    ];
    for (case, f, together) in cases {
        let mut inp = input(
            vec![target(), f],
            vec![pool_input(node_pool("default"), default_types())],
        );
        inp.namespace_labels
            .insert("other-ns".into(), labels_of(&[("foo", "bar")]));
        let plan = solve(&inp);
        let with_target = plan
            .node_claims
            .iter()
            .find(|c| c.pods.contains(&"other-ns/target".to_string()));
        assert!(with_target.is_some(), "{case}: the target schedules");
        let follower_placed = plan
            .node_claims
            .iter()
            .find(|c| c.pods.contains(&"default/follower".to_string()));
        if together {
            assert_eq!(
                follower_placed.map(|c| &c.name),
                with_target.map(|c| &c.name),
                "{case}"
            );
        } else {
            assert!(follower_placed.is_none(), "{case}");
        }
    }
}

/// Upstream "Pod Affinity/Anti-Affinity" › "should not schedule pods with affinity to a
/// non-existent pod" and "should respect self pod affinity (hostname)": three pods that select
/// themselves share one node.
#[test]
fn pod_affinity_to_nothing_or_to_itself() {
    let (_, plan) = run(
        vec![PodBuilder::new("p")
            .affinity(HOSTNAME, &[("security", "s2")])
            .build()],
        node_pool("default"),
    );
    assert!(plan.node_claims.is_empty());
    let (_, plan) = run(
        pods(3, |i| {
            PodBuilder::new(&format!("p{i}"))
                .label("security", "s2")
                .affinity(HOSTNAME, &[("security", "s2")])
        }),
        node_pool("default"),
    );
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods.len(), 3);
}

/// Upstream "Pod Affinity/Anti-Affinity" › "should separate nodes using simple pod
/// anti-affinity on hostname", "should not violate pod anti-affinity on zone" (the three larger
/// zone-pinned pods schedule first, one per zone, so the anti-affinity pod has no zone left) and
/// "… (other schedules first)" (the target's zone is not known until launch, so no zone is safe).
#[test]
fn pod_anti_affinity_on_hostname_and_zone() {
    let (_, plan) = run(
        pods(2, |i| {
            PodBuilder::new(&format!("p{i}"))
                .label("security", "s2")
                .anti_affinity(HOSTNAME, &[("security", "s2")])
        }),
        node_pool("default"),
    );
    assert_eq!(plan.node_claims.len(), 2);
    let mut ps: Vec<Pod> = FAKE_ZONES
        .iter()
        .map(|z| {
            PodBuilder::new(z)
                .cpu("2")
                .label("security", "s2")
                .node_selector(ZONE, z)
                .build()
        })
        .collect();
    ps.push(
        PodBuilder::new("avoid")
            .anti_affinity(ZONE, &[("security", "s2")])
            .build(),
    );
    let (_, plan) = run(ps, node_pool("default"));
    assert_eq!(plan.node_claims.len(), 3);
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/avoid"]);
    let (_, plan) = run(
        vec![
            PodBuilder::new("target")
                .cpu("2")
                .label("security", "s2")
                .build(),
            PodBuilder::new("avoid")
                .anti_affinity(ZONE, &[("security", "s2")])
                .build(),
        ],
        node_pool("default"),
    );
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/avoid"], "other schedules first");
}
