//! `aws v1.14.1: pkg/providers/instancetype/suite_test.go` "Tenancy": every AWS type admits
//! `karpenter.k8s.aws/instance-tenancy In [default, dedicated]` (`types.go`
//! `computeRequirements`); the instance is dedicated only when the NodeClaim allows dedicated but
//! not default (`instance.go` `getTenancyType`), and the node is labelled with it
//! (`cloudprovider.go` `instanceToNodeClaim`). Each test names the It it mirrors.

use super::*;
use crate::model::labels::INSTANCE_TENANCY;
use crate::model::requirements::Requirement;

/// The small catalog with the AWS tenancy requirement on every type.
fn aws_types() -> Vec<crate::model::instance_type::InstanceType> {
    let mut types = small_catalog();
    for t in &mut types {
        t.requirements.add(Requirement::new(
            INSTANCE_TENANCY,
            In,
            ["default", "dedicated"],
        ));
    }
    types
}

/// The tenancy label of the single NodeClaim planned for `pod` in `pool`, or `None` when the
/// pod stays pending.
fn tenancy(pool: crate::model::nodepool::NodePool, pod: PodBuilder) -> Option<String> {
    let plan = solve(&input(
        vec![pod.build()],
        vec![pool_input(pool, aws_types())],
    ));
    let claim = plan.node_claims.first()?;
    assert!(plan.unschedulable.is_empty());
    Some(claim.labels[INSTANCE_TENANCY].clone())
}

fn pod() -> PodBuilder {
    PodBuilder::new("p").cpu("1")
}

/// "Should use default tenancy when no requirement is given for tenancy", "Should use default
/// tenancy if tenancy requirement specifies both default and dedicated tenancies", "Should
/// launch with default tenancy when required", "Should launch with dedicated tenancy when
/// required".
#[test]
fn the_node_is_dedicated_only_when_default_is_excluded() {
    assert_eq!(
        tenancy(node_pool("default"), pod()).as_deref(),
        Some("default")
    );
    let both = with_requirement(
        node_pool("default"),
        INSTANCE_TENANCY,
        In,
        &["default", "dedicated"],
    );
    assert_eq!(tenancy(both, pod()).as_deref(), Some("default"));
    let wants = |v: &str| pod().node_selector(INSTANCE_TENANCY, v);
    assert_eq!(
        tenancy(node_pool("default"), wants("default")).as_deref(),
        Some("default")
    );
    assert_eq!(
        tenancy(node_pool("default"), wants("dedicated")).as_deref(),
        Some("dedicated")
    );
}

/// DescribeTable "does not allow tenancy violations": "dedicated np" (pod wants default),
/// "default np" (pod wants dedicated).
#[test]
fn a_pool_of_one_tenancy_refuses_pods_wanting_the_other() {
    for (pool, wanted) in [("dedicated", "default"), ("default", "dedicated")] {
        let np = with_requirement(node_pool("default"), INSTANCE_TENANCY, In, &[pool]);
        assert_eq!(
            tenancy(np, pod().node_selector(INSTANCE_TENANCY, wanted)),
            None,
            "{pool} pool, pod wants {wanted}"
        );
    }
}

/// The label is the node's: a later batch's pod asking for the default tenancy fits the
/// in-flight node (as upstream, whose in-flight NodeClaim carries the instance's labels).
#[test]
fn a_later_pod_wanting_default_tenancy_uses_the_in_flight_node() {
    let inp = input(
        vec![pod().build()],
        vec![pool_input(node_pool("default"), aws_types())],
    );
    let plan = solve(&inp);
    let next = next_batch(
        &inp,
        &plan,
        vec![PodBuilder::new("q")
            .cpu("100m")
            .node_selector(INSTANCE_TENANCY, "default")
            .build()],
    );
    let second = solve(&next);
    assert!(second.node_claims.is_empty(), "{:?}", second.node_claims);
    assert_eq!(second.existing_nodes[0].pods, ["default/q"]);
}
