//! Identical pods solved as one problem give the plan of solving them one by one: mixed
//! inputs (replicas of a few shapes interleaved with one-off pods, pods that fit nowhere,
//! limits, taints, host ports, zones, existing nodes, topology) are solved both ways.

use std::collections::BTreeSet;

use super::*;
use crate::model::resources::Resources;

/// A random mix: Deployments of identical replicas, one-off pods, pods no pool can take, pods
/// pinned to a zone, host ports, tolerations, a hostname spread, an anti-affinity and a
/// preferred zone; two pools (one with a CPU limit tried first, one tainted) and a few existing
/// nodes.
fn mixed_input(seed: u64) -> Input {
    let mut rng = Rng::new(seed);
    const CPU: [&str; 4] = ["100m", "250m", "500m", "3"];
    const MEMORY: [&str; 3] = ["256Mi", "1Gi", "6Gi"];
    let mut pods = Vec::new();
    for d in 0..6 {
        let cpu = *rng.pick(&CPU);
        let memory = *rng.pick(&MEMORY);
        let kind = rng.below(8);
        for r in 0..(3 + rng.below(20)) {
            let mut b = PodBuilder::new(&format!("deploy{d}-{r}"))
                .cpu(cpu)
                .memory(memory)
                .label("app", &format!("deploy{d}"));
            b = match kind {
                0 => b.request("nvidia.com/gpu", "1"),
                1 => b.node_selector(ZONE, "test-zone-2"),
                2 => b.host_port(8080),
                3 => b.toleration("dedicated", "batch", Effect::NoSchedule),
                4 => b.spread(HOSTNAME, 2, true, &[("app", &format!("deploy{d}"))]),
                5 => b.preferred_term(10, &[(ZONE, In, &["test-zone-3"])]),
                6 => b.anti_affinity(HOSTNAME, &[("app", &format!("deploy{d}"))]),
                _ => b,
            };
            pods.push(b.build());
        }
    }
    for i in 0..40 {
        let b = PodBuilder::new(&format!("single-{i}"))
            .cpu(rng.pick::<&str>(&CPU))
            .memory(rng.pick::<&str>(&MEMORY));
        pods.push(match rng.below(4) {
            0 => b.request("example.com/fpga", "1").build(),
            1 => b.node_selector(ZONE, "test-zone-1").build(),
            _ => b.build(),
        });
    }
    // Interleave the Deployments' pods as a cluster lists them.
    for i in (1..pods.len()).rev() {
        pods.swap(i, rng.below(i + 1));
    }
    let mut limited = node_pool("limited");
    limited.limits.insert("cpu".into(), 160_000);
    limited.weight = 10;
    let mut batch = node_pool("batch");
    batch
        .taints
        .push(taint("dedicated", "batch", Effect::NoSchedule));
    let mut inp = input(
        pods,
        vec![
            pool_input(limited, small_catalog()),
            pool_input(batch, small_catalog()),
        ],
    );
    for n in 0..(rng.below(9)) {
        let name = format!("node-{n}");
        let zone = FAKE_ZONES[n % 3];
        let mut node = Node {
            name: name.clone(),
            labels: labels_of(&[(HOSTNAME, &name), (ZONE, zone)]),
            allocatable: Resources::from_pairs(&[("cpu", "4"), ("memory", "8Gi"), ("pods", "20")]),
            ready: true,
            initialized: true,
            ..Default::default()
        };
        if n == 2 {
            node.taints
                .push(taint("dedicated", "batch", Effect::NoSchedule));
        }
        let pods = vec![PodBuilder::new(&format!("bound-{n}"))
            .cpu("1")
            .label("app", "deploy0")
            .on_node(&name)
            .build()];
        inp.existing_nodes.push(ExistingNode { node, pods });
    }
    inp
}

#[test]
fn grouped_and_ungrouped_solving_give_the_same_plan_on_mixed_inputs() {
    let mut codes = BTreeSet::new();
    for seed in 0..40 {
        let inp = mixed_input(seed);
        let grouped = super::super::solve(&inp);
        let mut one_by_one = inp.clone();
        one_by_one.options.exhaustive = true;
        assert_eq!(
            grouped,
            super::super::solve(&one_by_one),
            "seed {seed}: grouping changed the plan"
        );
        assert!(!grouped.node_claims.is_empty(), "seed {seed}");
        codes.extend(grouped.unschedulable.iter().map(|u| u.reason.code()));
    }
    let both = [ReasonCode::LimitReached, ReasonCode::NoInstanceTypeFits];
    assert!(both.iter().all(|c| codes.contains(c)), "{codes:?}");
}

#[test]
fn a_fits_nowhere_verdict_is_not_reused_once_a_node_claim_changed_the_limits() {
    // The GPU replicas fail first (no type has a GPU), then the web replicas use up the limit,
    // and the GPU replicas' second turn must say so rather than repeat the first verdict.
    let mut pool = node_pool("default");
    pool.limits.insert("cpu".into(), 16_000);
    let mut pods: Vec<crate::model::pod::Pod> = (0..50)
        .map(|i| {
            PodBuilder::new(&format!("gpu-{i}"))
                .cpu("3")
                .request("nvidia.com/gpu", "1")
                .build()
        })
        .collect();
    pods.extend((0..10).map(|i| PodBuilder::new(&format!("web-{i}")).cpu("3").build()));
    let plan = solve(&input(pods, vec![pool_input(pool, small_catalog())]));
    assert_eq!(
        plan.unschedulable.len(),
        50 + 6,
        "4 web replicas fit the limit"
    );
    let codes: BTreeSet<ReasonCode> = plan.unschedulable.iter().map(|u| u.reason.code()).collect();
    assert_eq!(codes, [ReasonCode::LimitReached].into());
}

#[test]
fn replicas_fill_nodes_in_karpenter_order() {
    // 2 existing nodes with room for 3 and 1 replicas, then new NodeClaims: identical pods
    // skip the nodes that refused one of them, and land exactly where one-by-one would put them.
    let node = |name: &str, cpu: &str| ExistingNode {
        node: Node {
            name: name.into(),
            labels: labels_of(&[(HOSTNAME, name), (ZONE, "test-zone-1")]),
            allocatable: Resources::from_pairs(&[("cpu", cpu), ("memory", "8Gi"), ("pods", "20")]),
            ready: true,
            initialized: true,
            ..Default::default()
        },
        pods: vec![],
    };
    let mut inp = input(
        pods(30, |i| PodBuilder::new(&format!("web-{i}")).cpu("1")),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes = vec![node("a", "3"), node("b", "1")];
    let plan = solve(&inp);
    let on_existing: Vec<usize> = plan.existing_nodes.iter().map(|e| e.pods.len()).collect();
    assert_eq!(on_existing, [3, 1]);
    let per_claim: Vec<usize> = plan.node_claims.iter().map(|c| c.pods.len()).collect();
    assert_eq!(per_claim.iter().sum::<usize>(), 26);
    assert!(plan.unschedulable.is_empty());
}
