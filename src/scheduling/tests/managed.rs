//! NodePools whose `nodeClassRef` names a node class of another group than the AWS provider's
//! (`karpenter.k8s.aws`) or EKS Auto Mode's: core v1.14.1 `pkg/utils/nodepool/nodepool.go`
//! `IsManaged` compares the ref's group and kind with the provider's `GetSupportedNodeClasses`
//! (aws: `EC2NodeClass` of `karpenter.k8s.aws`), and `provisioner.go` `NewScheduler` and
//! `static/provisioning/controller.go` `Reconcile` pass over a pool that is not managed.

use super::*;
use crate::model::nodepool::NodeClassRef;
use crate::scheduling::reason::ReasonCode;

/// A pool naming `karpenter.sh` as its class's group (session 30 sweep: a Terraform "EKS GitOps
/// Blueprint", index id 71190193166, writes `nodeClassRef = { group = "karpenter.sh", kind =
/// "EC2NodeClass", name = "default" }`).
fn pool_of_group(name: &str, group: &str) -> crate::model::nodepool::NodePool {
    let mut pool = node_pool(name);
    pool.node_class_ref = Some(NodeClassRef {
        group: group.into(),
        kind: "EC2NodeClass".into(),
        name: "default".into(),
    });
    pool
}

/// The pool is not the provider's, so Karpenter schedules nothing on it: the pods stay pending
/// with a reason naming the group. We matched the class by kind and name and planned a node.
#[test]
fn a_pool_naming_another_group_than_karpenter_k8s_aws_takes_no_pod() {
    let plan = solve_rounds(&input(
        pods(2, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(
            pool_of_group("default", "karpenter.sh"),
            small_catalog(),
        )],
    ));
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    assert_eq!(plan.unschedulable.len(), 2);
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::NodePoolNotManaged);
    let text = reason.to_string();
    assert!(text.contains("karpenter.sh"), "{text}");
}

/// Beside it, a pool of the provider's group takes the pods.
#[test]
fn a_pool_of_the_providers_group_beside_it_takes_the_pods() {
    let plan = solve_rounds(&input(
        pods(2, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![
            pool_input(pool_of_group("wrong", "karpenter.sh"), small_catalog()),
            pool_input(pool_of_group("right", "karpenter.k8s.aws"), small_catalog()),
        ],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert!(plan.node_claims.iter().all(|c| c.node_pool == "right"));
}

/// `static/provisioning/controller.go` `Reconcile` returns early for a pool that is not
/// managed: no replica (kOps' static scenario written with the wrong group).
#[test]
fn a_static_pool_naming_another_group_gets_no_replicas() {
    let mut pool = pool_of_group("fixed", "karpenter.sh");
    pool.replicas = Some(2);
    let plan = solve_rounds(&input(vec![], vec![pool_input(pool, small_catalog())]));
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
}
