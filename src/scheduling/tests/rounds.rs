//! Scheduling rounds (`scheduling::solve_rounds`): pods a NodePool limit leaves over in one batch
//! are placed by the next against the launched capacity. Mirrors `core:
//! pkg/controllers/provisioning/suite_test.go` "Resource Limits".

use super::*;

/// Pods that each need their own node (hostname anti-affinity), 1 CPU each.
fn lonely(n: usize) -> Vec<crate::model::pod::Pod> {
    pods(n, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1")
            .label("app", "lonely")
            .anti_affinity(HOSTNAME, &[("app", "lonely")])
    })
}

fn limited(cpu: i64) -> crate::model::nodepool::NodePool {
    let mut pool = node_pool("default");
    pool.limits.insert("cpu".into(), cpu * 1000);
    pool
}

/// With `limits.cpu: 10` the first NodeClaim reserves its largest option (8 CPU) and the second
/// the 2 left, so one batch places 2 of 6 pods; launched as `small` (2 CPU) each, they leave 6
/// CPU for the next batch, and so on until the limit is really used: 5 small nodes, 3 rounds, the
/// sixth pod unschedulable.
#[test]
fn pods_left_by_the_limit_are_placed_in_later_rounds() {
    let inp = input(lonely(6), vec![pool_input(limited(10), small_catalog())]);
    let one = solve(&inp);
    assert_eq!(one.node_claims.len(), 2, "one batch");
    assert_eq!(one.unschedulable.len(), 4);

    let plan = solve_rounds(&inp);
    let rounds: Vec<(String, usize, String)> = plan
        .node_claims
        .iter()
        .map(|c| (c.name.clone(), c.round, c.launch.instance_type.clone()))
        .collect();
    let want: Vec<(String, usize, String)> = [
        ("default-1", 1),
        ("default-2", 1),
        ("default-3", 2),
        ("default-4", 2),
        ("default-5", 3),
    ]
    .into_iter()
    .map(|(n, r)| (n.to_string(), r, "small".to_string()))
    .collect();
    assert_eq!(rounds, want);
    assert_eq!(plan.unschedulable.len(), 1);
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::LimitReached);
    assert!(
        reason
            .to_string()
            .contains("limit cpu=10 reached (cpu=0 left"),
        "{reason}"
    );
    // Every pod once, and never more capacity than the limit.
    let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum();
    assert_eq!(placed + plan.unschedulable.len(), 6);
    assert_eq!(plan.node_claims.len() * 2, 10);
}

/// "should partially schedule if limits would be exceeded" (limit 3, two 1.5-CPU pods that
/// avoid each other) and "should not schedule to a nodepool after a scheduling round if limits
/// would be exceeded" (the second batch counts the first's launched 2 CPU): later rounds change
/// nothing when the launched capacity leaves no room.
#[test]
fn a_later_round_that_places_nothing_keeps_the_pod_unschedulable() {
    let avoid = |i: usize| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1.5")
            .label("app", "foo")
            .anti_affinity(HOSTNAME, &[("app", "foo")])
    };
    let plan = solve_rounds(&input(
        pods(2, avoid),
        vec![pool_input(limited(3), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].round, 1);
    assert_eq!(plan.unschedulable.len(), 1);

    let plan = solve_rounds(&input(
        pods(2, |i| PodBuilder::new(&format!("p{i}")).cpu("1.75")),
        vec![pool_input(limited(2), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.unschedulable.len(), 1);
    assert_eq!(
        plan.unschedulable[0].reason.code(),
        ReasonCode::LimitReached
    );
}

/// Without a limit one round places everything: the plan is `solve`'s.
#[test]
fn without_leftovers_the_plan_is_one_round() {
    let inp = input(
        lonely(4),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let plan = solve_rounds(&inp);
    assert_eq!(plan, solve(&inp));
    assert!(plan.node_claims.iter().all(|c| c.round == 1));
}

/// Later rounds see the earlier NodeClaims as nodes: pods spread over two zones (one per node,
/// 8 CPU allowed: 1 node in round 1, 2 in round 2, 1 in round 3) count the pods placed on the
/// earlier rounds' nodes, ending 2 and 2.
#[test]
fn later_rounds_count_earlier_placements() {
    let mut pool = limited(8);
    pool.requirements
        .push(crate::model::requirements::NodeSelectorRequirement::new(
            ZONE,
            In,
            &["test-zone-1", "test-zone-2"],
        ));
    let spread = |i: usize| {
        PodBuilder::new(&format!("s{i}"))
            .cpu("1")
            .label("app", "s")
            .anti_affinity(HOSTNAME, &[("app", "s")])
            .spread(ZONE, 1, true, &[("app", "s")])
    };
    let plan = solve_rounds(&input(
        pods(4, spread),
        vec![pool_input(pool, small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert!(plan.node_claims.iter().any(|c| c.round > 1));
    let mut per_zone: BTreeMap<String, usize> = BTreeMap::new();
    for c in &plan.node_claims {
        *per_zone.entry(c.launch.zone.clone()).or_default() += c.pods.len();
    }
    let counts: Vec<usize> = per_zone.values().copied().collect();
    assert_eq!(counts, [2, 2], "skew across rounds: {per_zone:?}");
}

/// The rest of upstream's "Resource Limits" (`core v1.14.1:
/// pkg/controllers/provisioning/suite_test.go`), against the fake provider's instance types:
/// "should not schedule when limits are exceeded" (a NodeClaim of the pool already has 100 CPU,
/// the limit is 20), "should schedule if limits would be met" (1.75 CPU under a 2-CPU limit: the
/// 2-CPU type), "should not schedule if limits would be exceeded" (2.1 CPU under 2), "… (GPU)"
/// (`limits.pods: 1`, and the one GPU type holds 5 pods), "… (node)" (`limits.nodes: 2`, three
/// pods that avoid each other: two nodes, the third pod left).
#[test]
fn limits_as_the_provisioning_suite_checks_them() {
    use super::constraints::default_types;
    let run = |pool: crate::model::nodepool::NodePool,
               usage: &[(&str, &str)],
               pods: Vec<crate::model::pod::Pod>| {
        let mut pool = pool_input(pool, default_types());
        pool.usage = crate::model::resources::Resources::from_pairs(usage);
        solve_rounds(&input(pods, vec![pool]))
    };
    let with_limit = |resource: &str, value: i64| {
        let mut pool = node_pool("default");
        pool.limits.insert(resource.into(), value * 1000);
        pool
    };
    let one = |cpu: &str| vec![PodBuilder::new("p").cpu(cpu).build()];

    let exceeded = run(with_limit("cpu", 20), &[("cpu", "100")], one("1"));
    assert!(exceeded.node_claims.is_empty());
    assert_eq!(
        exceeded.unschedulable[0].reason.code(),
        ReasonCode::LimitReached
    );

    let met = run(with_limit("cpu", 2), &[], one("1.75"));
    assert_eq!(met.node_claims.len(), 1);
    assert_eq!(
        met.node_claims[0].launch.instance_type,
        "small-instance-type"
    );

    let over = run(with_limit("cpu", 2), &[], one("2.1"));
    assert!(over.node_claims.is_empty());
    assert_eq!(over.unschedulable.len(), 1);

    let gpu = run(
        with_limit("pods", 1),
        &[],
        vec![PodBuilder::new("p")
            .request("fake.com/vendor-a", "1")
            .build()],
    );
    assert!(gpu.node_claims.is_empty());
    assert_eq!(gpu.unschedulable.len(), 1);

    let avoid = |i: usize| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1.5")
            .label("app", "foo")
            .anti_affinity(HOSTNAME, &[("app", "foo")])
    };
    let nodes = run(with_limit("nodes", 2), &[], pods(3, avoid));
    assert_eq!(nodes.node_claims.len(), 2);
    assert_eq!(nodes.unschedulable.len(), 1);
    assert_eq!(
        nodes.unschedulable[0].reason.code(),
        ReasonCode::LimitReached
    );
}
