//! EC2NodeClass status reconcilers read line by line against aws v1.14.1
//! `pkg/controllers/nodeclass/` (docs/upstream-tests.md "EC2NodeClass status reconcilers, line by
//! line (s29-linestatus)"), replayed through the binary. Fixtures in
//! `tests/fixtures/status-line-by-line/` (our own manifests, the embedded catalog in us-east-1).

use crate::support::plan_fixture;

/// aws v1.14.1 `pkg/apis/v1/ec2nodeclass_status.go` `StatusConditions` (`Ready` is the root of
/// AMIsReady, SubnetsReady, SecurityGroupsReady, InstanceProfileReady, ValidationSucceeded,
/// PlacementGroupReady) and cloudprovider/suite_test.go "should return NodeClassNotReady error on
/// creation if NodeClass is not ready": the heavier pool's class lists `InstanceProfileReady=False`
/// and no `Ready`, which the controller would have written `Ready=False`; the pod goes to the
/// fallback pool. Before: the class read as ready and the heavier pool launched.
#[test]
fn a_class_whose_dependent_condition_is_false_launches_nothing() {
    let plan = plan_fixture("status-line-by-line/dependent-not-ready.yaml");
    let pools: Vec<&str> = (plan["nodeClaims"].as_array().unwrap().iter())
        .map(|c| c["nodePool"].as_str().unwrap())
        .collect();
    assert_eq!(pools, ["fallback"], "{plan:#}");
}
