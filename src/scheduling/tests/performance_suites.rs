//! core v1.14.1 `test/suites/performance/host_name_spreading_test.go` and `basic_test.go`,
//! scaled down (the suites' outcome that holds offline: every pod is placed, and with
//! hostname spreading — `maxSkew: 1`, `DoNotSchedule`, `test.WithHostnameSpread` — no node
//! holds two pods of the spread deployment). The suites run 500 + 500 pods on KWOK types
//! smaller than size 32; here 40 + 40 pods on three types. The full-size runs through the
//! binary with the embedded catalog (docs/upstream-tests.md, session 19) agree: 1,000 pods
//! placed, 500 NodeClaims each holding one spread pod.

use super::*;
use crate::model::pod::Pod;

/// `test.CreateDeploymentOptions(name, n, cpu, memory)`, optionally spread on hostname.
fn deployment(name: &str, n: usize, cpu: &str, memory: &str, spread: bool) -> Vec<Pod> {
    pods(n, |i| {
        let p = PodBuilder::new(&format!("{name}-{i}"))
            .label("app", name)
            .cpu(cpu)
            .memory(memory);
        if spread {
            p.spread(HOSTNAME, 1, true, &[("app", name)])
        } else {
            p
        }
    })
}

fn types() -> Vec<crate::model::instance_type::InstanceType> {
    vec![
        instance_type("c-2x", "2", "4Gi", "110", on_demand(&["test-zone-1"], 0.1)),
        instance_type("m-8x", "8", "32Gi", "110", on_demand(&["test-zone-1"], 0.4)),
        instance_type(
            "r-32x",
            "32",
            "256Gi",
            "110",
            on_demand(&["test-zone-1"], 2.0),
        ),
    ]
}

fn plan(spread: bool) -> Plan {
    let mut all = deployment("small-resource-app", 40, "900m", "3100Mi", spread);
    all.extend(deployment("large-resource-app", 40, "3500m", "28Gi", false));
    solve(&input(all, vec![pool_input(node_pool("default"), types())]))
}

/// "should efficiently scale two deployments with host name topology spreading".
#[test]
fn hostname_spreading_places_every_pod_one_spread_pod_per_node() {
    let plan = plan(true);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum();
    assert_eq!(placed, 80);
    let spread_per_claim: Vec<usize> = plan
        .node_claims
        .iter()
        .map(|c| {
            c.pods
                .iter()
                .filter(|p| p.contains("small-resource-app"))
                .count()
        })
        .collect();
    assert!(
        spread_per_claim.iter().all(|&n| n <= 1),
        "{spread_per_claim:?}"
    );
    assert_eq!(spread_per_claim.iter().sum::<usize>(), 40);
}

/// "should efficiently scale two deployments with different resource profiles": without the
/// spread the same pods pack onto far fewer nodes.
#[test]
fn without_spreading_the_same_pods_pack_onto_fewer_nodes() {
    let packed = plan(false);
    assert!(packed.unschedulable.is_empty());
    assert!(packed.node_claims.len() < plan(true).node_claims.len());
}
