//! What a planned NodeClaim asks for, as upstream's "NodeClaim Creation" context checks it
//! (`core v1.14.1: pkg/controllers/provisioning/suite_test.go`), against the fake provider's
//! instance types: its requirements (every type the pod fits, the pool's name, the pool's own
//! requirements) and its resource requests (the pods', the DaemonSets' overhead once, `pods`).

use super::constraints::default_types;
use super::*;
use crate::model::resources::Resources;

fn plan_one(inp: &Input) -> PlannedNodeClaim {
    let plan = solve(inp);
    assert_eq!(plan.node_claims.len(), 1, "one CreateCall: {plan:?}");
    assert!(plan.unschedulable.is_empty());
    plan.node_claims.into_iter().next().unwrap()
}

fn values(claim: &PlannedNodeClaim, key: &str) -> Vec<String> {
    if key == crate::model::labels::INSTANCE_TYPE {
        // Kept apart from the other requirements, shared between NodeClaims.
        return claim
            .instance_type_requirement
            .names
            .iter()
            .map(|n| n.to_string())
            .collect();
    }
    claim
        .requirements
        .get(key)
        .values()
        .iter()
        .cloned()
        .collect()
}

/// "should create a nodeclaim request with expected requirements" and "… with additional
/// expected requirements": `node.kubernetes.io/instance-type In` every fake type (a pod without
/// requests fits them all), `karpenter.sh/nodepool In [pool]`, and the pool's custom keys.
#[test]
fn a_nodeclaim_carries_its_types_its_pool_and_the_pools_requirements() {
    let every: Vec<String> = {
        let mut v: Vec<String> = default_types().into_iter().map(|t| t.name).collect();
        v.sort();
        v
    };
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(node_pool("default"), default_types())],
    ));
    assert_eq!(values(&claim, crate::model::labels::INSTANCE_TYPE), every);
    assert_eq!(values(&claim, crate::model::labels::NODEPOOL), ["default"]);

    let mut pool = node_pool("default");
    for key in ["custom-requirement-key", "custom-requirement-key2"] {
        pool.requirements
            .push(crate::model::requirements::NodeSelectorRequirement::new(
                key,
                In,
                &["value"],
            ));
    }
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, default_types())],
    ));
    assert_eq!(values(&claim, crate::model::labels::INSTANCE_TYPE), every);
    assert_eq!(values(&claim, crate::model::labels::NODEPOOL), ["default"]);
    for key in ["custom-requirement-key", "custom-requirement-key2"] {
        assert_eq!(values(&claim, key), ["value"], "{key}");
    }
}

/// "should create a nodeclaim with resource requests" (cpu, memory, the GPU and `pods: 1`),
/// "… with daemon overhead" (a DaemonSet of 1 CPU / 1Mi: 2 CPU, 2Mi, 2 pods) and "should not
/// double-count daemon overhead when multiple pods are scheduled to the same nodeclaim" (two
/// pods and the DaemonSet: 3, 3Mi, 3 pods, not 4).
#[test]
fn a_nodeclaim_requests_its_pods_and_the_daemon_overhead_once() {
    let claim = plan_one(&input(
        vec![PodBuilder::new("p")
            .cpu("1")
            .memory("1Mi")
            .request("fake.com/vendor-a", "1")
            .build()],
        vec![pool_input(node_pool("default"), default_types())],
    ));
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[
            ("cpu", "1"),
            ("memory", "1Mi"),
            ("fake.com/vendor-a", "1"),
            ("pods", "1")
        ])
    );

    let small = |name: &str| PodBuilder::new(name).cpu("1").memory("1Mi");
    let mut inp = input(
        vec![small("p").build()],
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.daemonsets.push(small("ds").daemonset("logs").build());
    let claim = plan_one(&inp);
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[("cpu", "2"), ("memory", "2Mi"), ("pods", "2")])
    );

    inp.pods = vec![small("p1").build(), small("p2").build()];
    let claim = plan_one(&inp);
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[("cpu", "3"), ("memory", "3Mi"), ("pods", "3")])
    );
}
