//! The order in-flight NodeClaims are tried in (core v1.14.1 `pkg/controllers/provisioning/
//! scheduling/scheduler.go` `add`): before each pod, `sort.Slice` by pod count — for up to 12
//! claims an insertion sort, so stable — then the first claim that takes the pod.

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
