//! More cases of Karpenter's `core v1.14.1: pkg/controllers/provisioning/scheduling/topology_test.go`
//! ("Topology"), each citing its `It`, against the fake provider's default instance types: the
//! Zonal subset / discover-domains / interdependent-selector cases, Hostname with several
//! deployments, CapacityType (ScheduleAnyway, counting, arch), and Pod Affinity/Anti-Affinity
//! (inverse, Schrödinger, arch, dependent affinities).

use super::constraints::default_types;
use super::spread::{node_with, skew};
use super::*;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;

const APP: (&str, &str) = ("test", "test");

fn zonal(name: &str) -> PodBuilder {
    PodBuilder::new(name)
        .label(APP.0, APP.1)
        .spread(ZONE, 1, true, &[APP])
}

/// `n` pods labelled `APP` of `cpu`, spread on `key` by `APP` with max skew 1 (`hard`:
/// DoNotSchedule).
fn spread_pods(n: usize, cpu: &str, key: &str, hard: bool) -> Vec<Pod> {
    pods(n, |i| {
        PodBuilder::new(&format!("p{i}"))
            .label(APP.0, APP.1)
            .cpu(cpu)
            .spread(key, 1, hard, &[APP])
    })
}

fn solve_for(pods: Vec<Pod>, pools: Vec<NodePool>) -> (Input, Plan) {
    let inp = input(
        pods,
        pools
            .into_iter()
            .map(|p| pool_input(p, default_types()))
            .collect(),
    );
    let plan = solve(&inp);
    (inp, plan)
}

/// Pool `default` limited to zones 1 and 2.
fn zones_1_and_2() -> NodePool {
    with_requirement(
        node_pool("default"),
        ZONE,
        In,
        &["test-zone-1", "test-zone-2"],
    )
}

fn labelled(mut pool: NodePool, key: &str, value: &str) -> NodePool {
    pool.labels.insert(key.into(), value.into());
    pool
}

/// A pod labelled `APP` of `cpu`, bound to node `n1`.
fn bound_on_n1(cpu: &str) -> Pod {
    PodBuilder::new("old")
        .label(APP.0, APP.1)
        .cpu(cpu)
        .on_node("n1")
        .build()
}

/// An on-demand node in `zone` with `pods` (bound there), 1 CPU allocatable.
fn node_in(name: &str, zone: &str, pods: Vec<Pod>) -> ExistingNode {
    node_with(name, zone, ON_DEMAND, pods)
}

/// "Zonal" › "should respect NodePool zonal constraints (subset) with requirements": the pool
/// reaches two zones, which are the only domains: 2/2.
#[test]
fn zonal_subset_with_requirements() {
    let pool = zones_1_and_2();
    let (inp, plan) = solve_for(pods(4, |i| zonal(&format!("p{i}"))), vec![pool]);
    assert_eq!(skew(&inp, &plan, ZONE), [2, 2]);
    assert!(plan.unschedulable.is_empty());
}

/// "Zonal" › "… (subset) with labels" and "… (subset) with requirements and labels": a pool
/// labelled with one zone has that single domain: all 4 there.
#[test]
fn zonal_subset_with_labels() {
    let labels_only = labelled(node_pool("default"), ZONE, "test-zone-1");
    let both = labelled(zones_1_and_2(), ZONE, "test-zone-1");
    for (name, pool) in [("labels", labels_only), ("requirements and labels", both)] {
        let (inp, plan) = solve_for(pods(4, |i| zonal(&format!("p{i}"))), vec![pool]);
        assert_eq!(skew(&inp, &plan, ZONE), [4], "{name}");
        assert!(plan.unschedulable.is_empty(), "{name}");
    }
}

/// "Zonal" › "… (subset) with labels across NodePools": one pool labelled zone-1 (and limited
/// to zones 1–2), another labelled zone-2: the domains are the two labels, 2/2.
#[test]
fn zonal_subset_with_labels_across_pools() {
    let first = labelled(zones_1_and_2(), ZONE, "test-zone-1");
    let second = labelled(node_pool("second"), ZONE, "test-zone-2");
    let (inp, plan) = solve_for(pods(4, |i| zonal(&format!("p{i}"))), vec![first, second]);
    assert_eq!(skew(&inp, &plan, ZONE), [2, 2]);
    assert!(plan.unschedulable.is_empty());
}

/// "Zonal" › "should respect NodePool zonal constraints (existing pod)", "should not violate
/// max-skew when unsat = do not schedule" and "… (discover domains)": a matching pod already
/// runs in zone 3 (resp. 1), which the pool no longer reaches; 1.1-CPU pods each need a node.
/// The existing pod's zone is a domain (at 1), so the reachable zones take 2 each and the rest
/// stays pending: 1/2/2.
#[test]
fn an_existing_pod_in_an_unreachable_zone_is_a_domain() {
    for (existing_zone, reachable) in [
        ("test-zone-3", ["test-zone-1", "test-zone-2"]),
        ("test-zone-1", ["test-zone-2", "test-zone-3"]),
    ] {
        let pool = with_requirement(node_pool("default"), ZONE, In, &reachable);
        let bound = bound_on_n1("1.1");
        let mut inp = input(
            pods(10, |i| zonal(&format!("p{i}")).cpu("1.1")),
            vec![pool_input(pool, default_types())],
        );
        inp.existing_nodes = vec![node_in("n1", existing_zone, vec![bound])];
        let plan = solve(&inp);
        assert_eq!(
            skew(&inp, &plan, ZONE),
            [2, 2, 1],
            "existing in {existing_zone}"
        );
        assert_eq!(plan.unschedulable.len(), 6, "existing in {existing_zone}");
    }
}

/// "Zonal" › "should match all pods when labelSelector is not specified": a constraint without
/// a selector does not keep its pod from scheduling.
#[test]
fn a_spread_without_selector_schedules() {
    let mut pod = PodBuilder::new("p").spread(ZONE, 1, true, &[]).build();
    pod.topology_spread[0].label_selector = None;
    let (_, plan) = solve_for(vec![pod], vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.node_claims.len(), 1);
}

/// "Zonal" › "should handle interdependent selectors": pods whose hostname spread selects
/// other pods (none exist) add nothing to the skew: all 5 share one node.
#[test]
fn interdependent_selectors_pack_onto_one_node() {
    let (_, plan) = solve_for(
        pods(5, |i| {
            PodBuilder::new(&format!("p{i}")).spread(HOSTNAME, 1, true, &[APP])
        }),
        vec![node_pool("default")],
    );
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods.len(), 5);
}

/// "Hostname" › "balance multiple deployments with hostname topology spread" (issue #1425):
/// two deployments each spread on hostname by their own label fit on two nodes.
#[test]
fn two_deployments_spread_by_hostname_share_two_nodes() {
    let spread = |name: &str, app: &str| {
        PodBuilder::new(name)
            .label("app", app)
            .spread(HOSTNAME, 1, true, &[("app", app)])
            .build()
    };
    let (_, plan) = solve_for(
        vec![
            spread("a1", "app1"),
            spread("a2", "app1"),
            spread("b1", "app2"),
            spread("b2", "app2"),
        ],
        vec![node_pool("default")],
    );
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.node_claims.len(), 2);
}

/// "CapacityType" › "should not violate max-skew when unsat = do not schedule (capacity
/// type)" and "should violate max-skew when unsat = schedule anyway (capacity type)": one
/// matching pod runs on spot; the pool now only launches on-demand; five 1.1-CPU pods. Hard:
/// on-demand takes 2 (skew 1), 3 stay pending. ScheduleAnyway: all 5 go on-demand.
#[test]
fn capacity_type_skew_hard_and_schedule_anyway() {
    for (hard, want, pending) in [(true, vec![2, 1], 3), (false, vec![5, 1], 0)] {
        let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &[ON_DEMAND]);
        let bound = bound_on_n1("1.1");
        let mut inp = input(
            spread_pods(5, "1.1", CAPACITY_TYPE, hard),
            vec![pool_input(pool, default_types())],
        );
        inp.existing_nodes = vec![node_with("n1", "test-zone-1", SPOT, vec![bound])];
        let plan = solve(&inp);
        assert_eq!(skew(&inp, &plan, CAPACITY_TYPE), want, "hard {hard}");
        assert_eq!(plan.unschedulable.len(), pending, "hard {hard}");
    }
}

/// "CapacityType" › "should only count running/scheduled pods with matching labels scheduled
/// to nodes with a corresponding domain": on spot two matching running pods (plus ones not
/// counted: unlabelled, other namespace, Failed, Succeeded), on-demand one, a node without the
/// label one: the two pending pods both go on-demand (2/3 … upstream `ConsistOf(2, 3)`).
#[test]
fn capacity_type_counts_only_matching_running_pods_on_labelled_nodes() {
    let app = |name: &str, node: &str| PodBuilder::new(name).label(APP.0, APP.1).on_node(node);
    let mut failed = app("failed", "spot").build();
    failed.phase = Some("Failed".into());
    let mut succeeded = app("succeeded", "spot").build();
    succeeded.phase = Some("Succeeded".into());
    let spot = vec![
        PodBuilder::new("unlabelled").on_node("spot").build(),
        app("other-ns", "spot").namespace("elsewhere").build(),
        failed,
        succeeded,
        app("s1", "spot").build(),
        app("s2", "spot").build(),
    ];
    let mut bare = node_with(
        "bare",
        "test-zone-1",
        ON_DEMAND,
        vec![app("b1", "bare").build()],
    );
    bare.node.labels.remove(CAPACITY_TYPE);
    let mut inp = input(
        pods(2, |i| {
            PodBuilder::new(&format!("p{i}"))
                .label(APP.0, APP.1)
                .spread(CAPACITY_TYPE, 1, true, &[APP])
        }),
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = vec![
        node_with("spot", "test-zone-1", SPOT, spot),
        node_with(
            "od",
            "test-zone-1",
            ON_DEMAND,
            vec![app("o1", "od").build()],
        ),
        bare,
    ];
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty());
    // The pending pods land on on-demand capacity (new or the existing node).
    let on_demand: usize = plan
        .node_claims
        .iter()
        .filter(|c| c.labels.get(CAPACITY_TYPE).map(String::as_str) == Some(ON_DEMAND))
        .map(|c| c.pods.len())
        .sum::<usize>()
        + plan
            .existing_nodes
            .iter()
            .filter(|e| e.node == "od")
            .map(|e| e.pods.len())
            .sum::<usize>();
    assert_eq!(on_demand, 2, "{plan:?}");
}

const S2: (&str, &str) = ("security", "s2");

/// Three 2-CPU pods, one per zone (by node selector), each with (required or preferred)
/// anti-affinity on zone to `security: s2`, and one pod labelled `s2`.
fn inverse_pods(required: bool) -> Vec<Pod> {
    let mut out: Vec<Pod> = FAKE_ZONES
        .iter()
        .enumerate()
        .map(|(i, zone)| {
            let p = PodBuilder::new(&format!("zone{i}"))
                .cpu("2")
                .node_selector(ZONE, zone);
            if required {
                p.anti_affinity(ZONE, &[S2]).build()
            } else {
                p.preferred_anti_affinity(10, ZONE, &[S2]).build()
            }
        })
        .collect();
    out.push(PodBuilder::new("aff").label(S2.0, S2.1).build());
    out
}

/// "Pod Affinity/Anti-Affinity" › "should not violate pod anti-affinity on zone (inverse)":
/// the anti-affinity pods go first (bigger) and hold every zone: the `s2` pod, which has no
/// rule of its own, stays pending. "… should violate preferred pod anti-affinity on zone
/// (inverse)": a preference does not keep it out.
#[test]
fn inverse_anti_affinity_on_zone() {
    let (_, plan) = solve_for(inverse_pods(true), vec![node_pool("default")]);
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/aff"]);
    assert_eq!(plan.node_claims.len(), 3);
    let (_, plan) = solve_for(inverse_pods(false), vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
}

/// "… should not violate pod anti-affinity on zone (Schrödinger)": the anti-affinity pod may
/// land in any zone, so within the batch the `s2` pod fits nowhere; the next batch (the first
/// NodeClaim launched into one zone) places it in another.
#[test]
fn schroedinger_anti_affinity_on_zone() {
    let pods = vec![
        PodBuilder::new("anywhere")
            .cpu("2")
            .anti_affinity(ZONE, &[S2])
            .build(),
        PodBuilder::new("aff").label(S2.0, S2.1).build(),
    ];
    let (inp, plan) = solve_for(pods, vec![node_pool("default")]);
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/aff"]);
    // Across rounds (`solve_rounds`: the next batch sees the first NodeClaim at its launched
    // zone) it is placed, in another zone.
    let all = crate::scheduling::solve_rounds(&inp);
    assert!(all.unschedulable.is_empty(), "{:?}", all.unschedulable);
    let zone_of = |pod: &str| {
        all.node_claims
            .iter()
            .find(|c| c.pods.iter().any(|p| p == pod))
            .map(|c| c.launch.zone.clone())
            .unwrap()
    };
    assert_ne!(zone_of("default/anywhere"), zone_of("default/aff"));
}

/// "… should handle multiple dependent affinities": db ← web ← cache ← ui, each with hostname
/// affinity to the previous: all four schedule. "… should fail to schedule pods with
/// unsatisfiable dependencies": affinity to a pod that does not exist leaves it pending.
#[test]
fn dependent_affinities() {
    let tier = |name: &str, after: Option<&str>| {
        let p = PodBuilder::new(name)
            .label("type", name)
            .label("spread", "spread");
        match after {
            Some(a) => p.affinity(HOSTNAME, &[("type", a)]).build(),
            None => p.build(),
        }
    };
    let (_, plan) = solve_for(
        vec![
            tier("db", None),
            tier("web", Some("db")),
            tier("cache", Some("web")),
            tier("ui", Some("cache")),
        ],
        vec![node_pool("default")],
    );
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let (_, plan) = solve_for(vec![tier("db", Some("web"))], vec![node_pool("default")]);
    assert_eq!(plan.unschedulable.len(), 1);
}

const ARCH: &str = "kubernetes.io/arch";

/// "… should respect pod affinity (arch)" and "… should not violate pod anti-affinity
/// (arch)": a 2-CPU arm64 pod `s2` and a 1-CPU `s2` pod with required affinity (resp.
/// anti-affinity) on arch to `s2`, both spread on hostname: two nodes, of the same arch (resp.
/// different arches).
#[test]
fn pod_affinity_and_anti_affinity_on_arch() {
    for same in [true, false] {
        let first = PodBuilder::new("first")
            .label(S2.0, S2.1)
            .cpu("2")
            .node_selector(ARCH, "arm64")
            .spread(HOSTNAME, 1, true, &[S2])
            .build();
        let second =
            PodBuilder::new("second")
                .label(S2.0, S2.1)
                .cpu("1")
                .spread(HOSTNAME, 1, true, &[S2]);
        let second = if same {
            second.affinity(ARCH, &[S2]).build()
        } else {
            second.anti_affinity(ARCH, &[S2]).build()
        };
        let (_, plan) = solve_for(vec![first, second], vec![node_pool("default")]);
        assert!(
            plan.unschedulable.is_empty(),
            "same {same}: {:?}",
            plan.unschedulable
        );
        assert_eq!(plan.node_claims.len(), 2, "same {same}");
        let arch = |pod: &str| {
            let c = plan
                .node_claims
                .iter()
                .find(|c| c.pods.iter().any(|p| p == pod))
                .unwrap();
            c.labels[ARCH].clone()
        };
        assert_eq!(
            arch("default/first") == arch("default/second"),
            same,
            "same {same}"
        );
    }
}

/// "Hostname" › "balance multiple deployments with hostname topology spread & varying arch"
/// (issue #1425): the same two deployments, one amd64 and one arm64 by required affinity, need
/// four nodes.
#[test]
fn two_deployments_of_different_arches_need_four_nodes() {
    let spread = |name: &str, app: &str, arch: &str| {
        PodBuilder::new(name)
            .label("app", app)
            .required_term(&[(ARCH, In, &[arch])])
            .spread(HOSTNAME, 1, true, &[("app", app)])
            .build()
    };
    let (_, plan) = solve_for(
        vec![
            spread("a1", "app1", "amd64"),
            spread("a2", "app1", "amd64"),
            spread("b1", "app2", "arm64"),
            spread("b2", "app2", "arm64"),
        ],
        vec![node_pool("default")],
    );
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 4);
}

/// A node labelled `key=value` (and the node's zone and capacity type) holding one `APP` pod.
fn node_labelled(key: &str, value: &str) -> ExistingNode {
    let mut n = node_with("n1", "test-zone-1", ON_DEMAND, vec![bound_on_n1("2")]);
    n.node.labels.insert(key.into(), value.into());
    n
}

/// "CapacityType" › "should balance pods across capacity-types (no constraints)" and
/// "should balance pods across arch (no constraints)": one matching pod on an on-demand
/// (resp. amd64) node; the pool now launches only spot (resp. arm64); five 2-CPU pods spread
/// on the key without node constraints see the existing domain: 2 placed, 1/2.
#[test]
fn an_existing_domain_the_pool_cannot_reach_still_counts() {
    for (key, existing, launched) in [(CAPACITY_TYPE, ON_DEMAND, SPOT), (ARCH, "amd64", "arm64")] {
        let pool = with_requirement(node_pool("default"), key, In, &[launched]);
        let mut inp = input(
            spread_pods(5, "2", key, true),
            vec![pool_input(pool, default_types())],
        );
        inp.existing_nodes = vec![node_labelled(key, existing)];
        let plan = solve(&inp);
        assert_eq!(skew(&inp, &plan, key), [2, 1], "{key}");
        assert_eq!(plan.unschedulable.len(), 3, "{key}");
    }
}

/// "CapacityType" › "should balance pods across capacity-types (node required affinity
/// constrained)": an on-demand pod in zone 1; five pods required into zone 2 on spot: their
/// node affinity excludes the on-demand node from the count, so all five go spot: 5/1.
#[test]
fn node_affinity_excludes_other_capacity_types_from_the_count() {
    let mut inp = input(
        pods(5, |i| {
            PodBuilder::new(&format!("p{i}"))
                .label(APP.0, APP.1)
                .required_term(&[(ZONE, In, &["test-zone-2"]), (CAPACITY_TYPE, In, &[SPOT])])
                .spread(CAPACITY_TYPE, 1, true, &[APP])
        }),
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.existing_nodes = vec![node_labelled(CAPACITY_TYPE, ON_DEMAND)];
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(skew(&inp, &plan, CAPACITY_TYPE), [5, 1]);
}

/// "… should not violate pod anti-affinity on zone (inverse w/existing nodes)" and "… should
/// violate preferred pod anti-affinity on zone (inverse w/existing nodes)": one node per zone,
/// each running a pod with (required / preferred) anti-affinity on zone to `s2`: the `s2` pod
/// fits nowhere when it is required, and schedules when it is preferred.
#[test]
fn inverse_anti_affinity_of_existing_pods() {
    for required in [true, false] {
        let mut inp = input(
            vec![PodBuilder::new("aff").label(S2.0, S2.1).build()],
            vec![pool_input(node_pool("default"), default_types())],
        );
        inp.existing_nodes = FAKE_ZONES
            .iter()
            .enumerate()
            .map(|(i, zone)| {
                let name = format!("n{i}");
                let p = PodBuilder::new(&format!("zone{i}")).on_node(&name);
                let p = if required {
                    p.anti_affinity(ZONE, &[S2])
                } else {
                    p.preferred_anti_affinity(10, ZONE, &[S2])
                };
                node_in(&name, zone, vec![p.build()])
            })
            .collect();
        let plan = solve(&inp);
        assert_eq!(
            plan.unschedulable.len(),
            usize::from(required),
            "required {required}"
        );
    }
}

/// "Zonal" › "should balance pods across zones (match labels)", "… (match expressions)" and
/// "should respect NodePool zonal constraints" (the three zones named): 4 pods, 2/1/1.
#[test]
fn four_pods_balance_over_three_zones() {
    use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};
    let expressions = LabelSelector {
        match_expressions: vec![SelectorExpr {
            key: APP.0.into(),
            op: SelectorOp::In,
            values: vec![APP.1.into()],
        }],
        ..Default::default()
    };
    for (name, by_expression, pool) in [
        ("match labels", false, node_pool("default")),
        ("match expressions", true, node_pool("default")),
        (
            "NodePool zonal constraints",
            false,
            with_requirement(node_pool("default"), ZONE, In, &FAKE_ZONES),
        ),
    ] {
        let mut pending = pods(4, |i| zonal(&format!("p{i}")));
        if by_expression {
            for p in &mut pending {
                p.topology_spread[0].label_selector = Some(expressions.clone());
            }
        }
        let (inp, plan) = solve_for(pending, vec![pool]);
        assert_eq!(skew(&inp, &plan, ZONE), [2, 1, 1], "{name}");
    }
}

/// The zones of the plan's NodeClaims, one per pod placed.
fn pod_zones(plan: &Plan) -> BTreeMap<String, usize> {
    let mut per = BTreeMap::new();
    for c in &plan.node_claims {
        *per.entry(c.launch.zone.clone()).or_default() += c.pods.len();
    }
    per
}

/// "… should not violate pod anti-affinity on zone (other schedules first)": the 2-CPU `s2`
/// pod schedules first, its zone still open, so the pod with anti-affinity to it fits nowhere
/// in the batch.
#[test]
fn anti_affinity_to_a_pod_whose_zone_is_open() {
    let pods = vec![
        PodBuilder::new("target").label(S2.0, S2.1).cpu("2").build(),
        PodBuilder::new("aff").anti_affinity(ZONE, &[S2]).build(),
    ];
    let (_, plan) = solve_for(pods, vec![node_pool("default")]);
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/aff"]);
}

/// "… should support pod affinity with zone topology (unconstrained target)": ten pods with
/// zone affinity to an `s2` pod whose zone is open stay pending in the batch; the next batch
/// (rounds) places them all in its zone: 11. "… (constrained target)": the target is required
/// into zone 1, so all 11 go there in one batch.
#[test]
fn zone_affinity_to_an_unconstrained_and_a_constrained_target() {
    let followers = || {
        pods(10, |i| {
            PodBuilder::new(&format!("f{i}")).affinity(ZONE, &[S2])
        })
    };
    let mut open = followers();
    open.push(PodBuilder::new("target").label(S2.0, S2.1).build());
    let (inp, plan) = solve_for(open, vec![node_pool("default")]);
    assert_eq!(plan.unschedulable.len(), 10);
    let all = crate::scheduling::solve_rounds(&inp);
    assert!(all.unschedulable.is_empty(), "{:?}", all.unschedulable);
    assert_eq!(pod_zones(&all).into_values().collect::<Vec<_>>(), [11]);

    let mut constrained = followers();
    constrained.push(
        PodBuilder::new("target")
            .label(S2.0, S2.1)
            .required_term(&[(ZONE, In, &["test-zone-1"])])
            .build(),
    );
    let (_, plan) = solve_for(constrained, vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let zones = pod_zones(&plan);
    assert_eq!(zones.len(), 1);
    assert_eq!(zones.get("test-zone-1"), Some(&11));
}

/// A pod labelled `S2` with required self-affinity on `key`.
fn self_affine(name: &str, key: &str) -> PodBuilder {
    PodBuilder::new(name).label(S2.0, S2.1).affinity(key, &[S2])
}

/// The NodeClaims' pods per zone of `plan`, and the pending pods' names.
fn placed_and_pending(plan: &Plan) -> (Vec<(String, usize)>, Vec<String>) {
    let placed = plan
        .node_claims
        .iter()
        .map(|c| (c.launch.zone.clone(), c.pods.len()))
        .collect();
    let pending = plan.unschedulable.iter().map(|u| u.pod.clone()).collect();
    (placed, pending)
}

/// "Pod Affinity/Anti-Affinity" › "should respect self pod affinity for first empty topology
/// domain only (hostname)": ten pods with hostname self-affinity; a node holds 5 pods (the
/// fake types' `pods: 5`), so one NodeClaim takes 5 and 5 stay pending — no second empty
/// host is opened. A second batch of ten, with that NodeClaim in flight (full), schedules
/// none.
#[test]
fn self_affinity_on_hostname_fills_only_the_first_empty_domain() {
    let batch = |prefix: &str| pods(10, |i| self_affine(&format!("{prefix}{i}"), HOSTNAME));
    let (inp, plan) = solve_for(batch("a"), vec![node_pool("default")]);
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.node_claims);
    assert_eq!(plan.node_claims[0].pods.len(), 5);
    assert_eq!(plan.unschedulable.len(), 5);

    let second = solve(&next_batch(&inp, &plan, batch("b")));
    assert!(second.node_claims.is_empty(), "{:?}", second.node_claims);
    assert!(second.existing_nodes.iter().all(|p| p.pods.is_empty()));
    assert_eq!(second.unschedulable.len(), 10);
}

/// "… should respect self pod affinity for first empty topology domain only (hostname/
/// constrained zones)": one self-affine pod placed in zone 1 first; ten more, required into
/// zones 2–3, have a matching pod on a host (the first one's) they cannot reach — the domain
/// is no longer empty, so none schedules (node selectors limit spread counting, not
/// affinity).
#[test]
fn self_affinity_with_a_matching_pod_in_an_unreachable_host_schedules_none() {
    let first = self_affine("first", HOSTNAME)
        .node_selector(ZONE, "test-zone-1")
        .build();
    let (inp, plan) = solve_for(vec![first], vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let constrained = pods(10, |i| {
        self_affine(&format!("p{i}"), HOSTNAME).required_term(&[(
            ZONE,
            In,
            &["test-zone-2", "test-zone-3"],
        )])
    });
    let second = solve(&next_batch(&inp, &plan, constrained));
    assert!(second.node_claims.is_empty(), "{:?}", second.node_claims);
    assert_eq!(second.unschedulable.len(), 10);
}

/// "… should allow two nodes to be created when two pods with matching affinities have
/// incompatible selectors": two `s1` pods with zone self-affinity, one required into zone 2,
/// the other into zone 3: each gets its own node in its zone.
#[test]
fn matching_affinities_with_incompatible_zones_get_two_nodes() {
    const S1: (&str, &str) = ("security", "s1");
    let pod = |name: &str, zone: &str| {
        PodBuilder::new(name)
            .label(S1.0, S1.1)
            .affinity(ZONE, &[S1])
            .required_term(&[(ZONE, In, &[zone])])
            .build()
    };
    let (_, plan) = solve_for(
        vec![pod("p1", "test-zone-2"), pod("p2", "test-zone-3")],
        vec![node_pool("default")],
    );
    let (mut placed, pending) = placed_and_pending(&plan);
    placed.sort();
    assert!(pending.is_empty(), "{pending:?}");
    assert_eq!(
        placed,
        [
            ("test-zone-2".to_string(), 1),
            ("test-zone-3".to_string(), 1)
        ]
    );
}

/// "… should allow violation of a pod affinity preference with a conflicting required
/// constraint": three `APP` pods one per host (hard hostname spread) prefer the host of an
/// `s2` pod; the preference is dropped where the spread forbids it: all four schedule, the
/// spread 1/1/1.
#[test]
fn a_pod_affinity_preference_yields_to_a_required_spread() {
    let mut all = pods(3, |i| {
        PodBuilder::new(&format!("p{i}"))
            .label(APP.0, APP.1)
            .spread(HOSTNAME, 1, true, &[APP])
            .preferred_affinity(50, HOSTNAME, &[S2])
    });
    all.push(PodBuilder::new("s2").label(S2.0, S2.1).build());
    let (inp, plan) = solve_for(all, vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(skew(&inp, &plan, HOSTNAME), [1, 1, 1]);
}

/// "CapacityType" › "should match all pods when labelSelector is not specified": a capacity
/// type spread without a selector does not keep its pod from scheduling: one pod, one node.
#[test]
fn a_capacity_type_spread_without_selector_schedules() {
    let mut pod = PodBuilder::new("p")
        .spread(CAPACITY_TYPE, 1, true, &[])
        .build();
    pod.topology_spread[0].label_selector = None;
    let (_, plan) = solve_for(vec![pod], vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 1);
}

/// "CapacityType" › "should handle interdependent selectors": five pods spread on hostname by
/// a selector none of them matches (the upstream It's capacity-type context, its constraint on
/// hostname): they add nothing to the skew, so all five share one node. The pool allows any
/// capacity type (upstream's BeforeEach: `capacity-type Exists`).
#[test]
fn interdependent_selectors_in_a_capacity_type_pool_pack_onto_one_node() {
    let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, Exists, &[]);
    let (_, plan) = solve_for(
        pods(5, |i| {
            PodBuilder::new(&format!("p{i}")).spread(HOSTNAME, 1, true, &[APP])
        }),
        vec![pool],
    );
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods.len(), 5);
}

/// "… should schedule a pod with empty pod affinity and anti-affinity": no terms, scheduled.
#[test]
fn empty_pod_affinity_and_anti_affinity_schedule() {
    let (_, plan) = solve_for(
        vec![PodBuilder::new("p").build()],
        vec![node_pool("default")],
    );
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.node_claims.len(), 1);
}

/// The NodeClaim `pod` is placed on, by name.
fn claim_of<'p>(plan: &'p Plan, pod: &str) -> &'p str {
    plan.node_claims
        .iter()
        .find(|c| c.pods.iter().any(|p| p == pod))
        .map(|c| c.name.as_str())
        .unwrap_or_else(|| panic!("{pod} not on a NodeClaim: {plan:?}"))
}

/// "… should respect pod affinity (hostname)": ten `APP` pods one per host, an `s2` pod and a
/// pod with hostname affinity to it: the last two share a node.
#[test]
fn hostname_affinity_among_spread_pods() {
    let mut all = spread_pods(10, "10m", HOSTNAME, true);
    all.push(PodBuilder::new("aff1").label(S2.0, S2.1).build());
    all.push(PodBuilder::new("aff2").affinity(HOSTNAME, &[S2]).build());
    let (_, plan) = solve_for(all, vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(
        claim_of(&plan, "default/aff1"),
        claim_of(&plan, "default/aff2")
    );
}

/// "… should respect self pod affinity (zone)" and "… (zone w/ constraint)": three pods with
/// zone self-affinity share one node (required into zone 3: there).
#[test]
fn self_affinity_on_zone_shares_one_node() {
    for zone in [None, Some("test-zone-3")] {
        let (_, plan) = solve_for(
            pods(3, |i| {
                let p = self_affine(&format!("p{i}"), ZONE);
                match zone {
                    Some(z) => p.required_term(&[(ZONE, In, &[z])]),
                    None => p,
                }
            }),
            vec![node_pool("default")],
        );
        assert!(
            plan.unschedulable.is_empty(),
            "{zone:?}: {:?}",
            plan.unschedulable
        );
        assert_eq!(plan.node_claims.len(), 1, "{zone:?}");
        if let Some(z) = zone {
            assert_eq!(plan.node_claims[0].launch.zone, z);
        }
    }
}

/// "… should allow violation of preferred pod affinity": ten `APP` pods one per host, and a
/// pod preferring the host of an `s2` pod that does not exist: scheduled.
/// "… should allow violation of preferred pod anti-affinity": three `APP` pods spread on zone
/// and ten pods preferring zones without `APP` pods: all ten scheduled.
#[test]
fn preferred_pod_affinity_and_anti_affinity_may_be_violated() {
    let mut all = spread_pods(10, "10m", HOSTNAME, true);
    all.push(
        PodBuilder::new("aff")
            .preferred_affinity(50, HOSTNAME, &[S2])
            .build(),
    );
    let (_, plan) = solve_for(all, vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);

    let mut all = spread_pods(3, "10m", ZONE, true);
    all.extend(pods(10, |i| {
        PodBuilder::new(&format!("anti{i}")).preferred_anti_affinity(50, ZONE, &[APP])
    }));
    let (_, plan) = solve_for(all, vec![node_pool("default")]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
}

/// "… should support pod anti-affinity with a zone topology": three `s2` pods with zone
/// anti-affinity to `s2`. Each batch places one (its zone is not known until launch, so the
/// others wait); the next batch, with the earlier NodeClaims in flight, places one in a new
/// zone: 1, then 1/1, then 1/1/1, then nothing more.
#[test]
fn zonal_anti_affinity_opens_one_zone_per_batch() {
    let batch = |round: usize| {
        pods(3, |i| {
            PodBuilder::new(&format!("r{round}-{i}"))
                .label(S2.0, S2.1)
                .anti_affinity(ZONE, &[S2])
        })
    };
    let mut inp = input(
        batch(0),
        vec![pool_input(node_pool("default"), default_types())],
    );
    let mut zones: Vec<String> = Vec::new();
    for round in 1..=4 {
        let plan = solve(&inp);
        let placed: Vec<String> = plan
            .node_claims
            .iter()
            .flat_map(|c| c.pods.iter().map(move |_| c.launch.zone.clone()))
            .collect();
        assert_eq!(
            placed.len(),
            usize::from(round < 4),
            "round {round}: {placed:?}"
        );
        assert!(
            placed.iter().all(|z| !zones.contains(z)),
            "round {round}: a new zone"
        );
        zones.extend(placed);
        inp = next_batch(&inp, &plan, batch(round));
    }
    zones.sort();
    assert_eq!(zones, ["test-zone-1", "test-zone-2", "test-zone-3"]);
}
