//! The order in-flight NodeClaims are tried in (core v1.14.1 `pkg/controllers/provisioning/
//! scheduling/scheduler.go` `add`): before each pod, `sort.Slice` by pod count — for up to 12
//! claims an insertion sort, so stable, beyond a pdqsort reproduced by `model::go_sort` — then
//! the first claim that takes the pod.

use super::*;

/// Session 24's sweep (a FinOps guide's both-arch pool: four arm64 pods, three amd64 pods, two
/// small pods without a selector): the small pods went to the claim created first on ties of
/// pod count; Karpenter's stable sort keeps the claim that just took a pod ahead of the claims
/// that had that count already. Here a 3-pod zone-1 claim (created first, 3600m on `medium`)
/// and a 2-pod zone-2 claim: the first 500m pod goes to the 2-pod claim (3 vs 3 now), and the
/// second to it again (it stands first) — two `medium`s. Trying the first-created claim on the
/// tie put the second pod there: 4100m, a `large`.
#[test]
fn on_a_tie_of_pod_count_the_claim_that_took_the_last_pod_comes_first() {
    let zonal = |name: &str, cpu: &str, zone: &str| {
        PodBuilder::new(name)
            .cpu(cpu)
            .required_term(&[(ZONE, In, &[zone])])
            .build()
    };
    let mut all = vec![
        zonal("a0", "1200m", "test-zone-1"),
        zonal("a1", "1200m", "test-zone-1"),
        zonal("a2", "1200m", "test-zone-1"),
        zonal("b0", "1000m", "test-zone-2"),
        zonal("b1", "1000m", "test-zone-2"),
    ];
    all.extend(pods(2, |i| PodBuilder::new(&format!("f{i}")).cpu("500m")));
    let plan = solve(&input(
        all,
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let by_zone: Vec<(&str, &str, Vec<&str>)> = plan
        .node_claims
        .iter()
        .map(|c| {
            let mut pods: Vec<&str> = c.pods.iter().map(|p| &p[8..]).collect();
            pods.sort_unstable();
            (&*c.launch.zone, &*c.launch.instance_type, pods)
        })
        .collect();
    assert_eq!(
        by_zone,
        [
            ("test-zone-1", "medium", vec!["a0", "a1", "a2"]),
            ("test-zone-2", "medium", vec!["b0", "b1", "f0", "f1"]),
        ]
    );
}

/// Beyond 12 in-flight claims Go's `sort.Slice` is a pdqsort: not stable, but a fixed function
/// of the list (core v1.14.1 `scheduler.go` `add`, `sort.Slice(s.newNodeClaims, …)`). Twenty
/// hostname-anti-affine pods open twenty one-pod claims; forty small pods then each join the
/// first claim of the sorted list. The claims they join, in order, are what Go 1.19's
/// `sort.Slice` gives on that list (a Go simulation of the queue, docs/upstream-tests.md
/// "Go's sort order (s26-gosort)"); a stable order would give 0, 1, 2, … 19, 19, 18, … 0.
#[test]
fn beyond_twelve_claims_the_order_is_gos_pdqsort() {
    let mut all = pods(20, |i| {
        PodBuilder::new(&format!("a{i:02}"))
            .cpu("1")
            .label("app", "solo")
            .anti_affinity(HOSTNAME, &[("app", "solo")])
    });
    all.extend(pods(40, |i| {
        PodBuilder::new(&format!("f{i:02}")).cpu("100m")
    }));
    let plan = solve(&input(
        all,
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 20);
    // Which anti-affine pod (so which claim, in creation order) each small pod joined.
    let mut joined = [usize::MAX; 40];
    for c in &plan.node_claims {
        let names: Vec<&str> = c.pods.iter().map(|p| &p[8..]).collect();
        let solo = names
            .iter()
            .find(|n| n.starts_with('a'))
            .expect("an anti-affine pod");
        let claim: usize = solo[1..].parse().unwrap();
        for f in names.iter().filter(|n| n.starts_with('f')) {
            joined[f[1..].parse::<usize>().unwrap()] = claim;
        }
    }
    let go = [
        0, 10, 7, 8, 19, 18, 17, 9, 16, 15, 14, 11, 12, 1, 6, 5, 4, 3, 2, 13, 13, 4, 11, 14, 2, 0,
        16, 5, 10, 7, 8, 18, 17, 3, 12, 1, 6, 9, 15, 19,
    ];
    assert_eq!(joined, go);
}

/// The queue on its own, with the claims Go's `sort.Slice` would put first each time taking
/// the pod, against `tests/fixtures/go-sort/claim-queue/main.go` run on Go 1.19: 20 claims
/// (pdqsort, a full sort each time) and 60 (from 50 claims the partial insertion sort, which
/// the queue shortcuts).
#[test]
fn the_claim_queue_follows_go_for_20_and_60_claims() {
    use super::super::node_claim::ClaimQueue;
    let joins = |claims: usize, pods: usize| {
        let mut queue = ClaimQueue::default();
        for c in 0..claims {
            queue.sort();
            queue.insert_new(c, None);
        }
        (0..pods)
            .map(|_| {
                queue.sort();
                let first = queue.candidates(None).next().unwrap();
                queue.bump(first, None);
                first.1
            })
            .collect::<Vec<_>>()
    };
    let go_20 = [
        0, 10, 7, 8, 19, 18, 17, 9, 16, 15, 14, 11, 12, 1, 6, 5, 4, 3, 2, 13, 13, 4, 11, 14, 2, 0,
        16, 5, 10, 7, 8, 18, 17, 3, 12, 1, 6, 9, 15, 19,
    ];
    assert_eq!(joins(20, 40), go_20);
    let go_60: Vec<usize> = (0..60).chain((30..60).rev()).collect();
    assert_eq!(joins(60, 90), go_60);
}
