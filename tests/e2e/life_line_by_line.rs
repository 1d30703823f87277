//! NodeClaim lifecycle and garbage collection read line by line against core and aws v1.14.1
//! (docs/upstream-tests.md "NodeClaim lifecycle and garbage collection, line by line
//! (s29-linelife)"): the differences visible through the binary. Fixtures in
//! `tests/fixtures/life-line-by-line/` (our own manifests).

use crate::drift_live::team_nodes;
use crate::provision_live::Walk;
use crate::support::fixture;

/// core v1.14.1 `pkg/controllers/nodeclaim/lifecycle/registration.go Reconcile` removes
/// `karpenter.sh/unregistered:NoExecute` when it registers the node (`registration_test.go`
/// "should sync the karpenter.sh/registered label to the Node and remove the
/// karpenter.sh/unregistered taint when the Node comes online"). A Custom class whose userData
/// registers with it, as `convert` advises: `provision --yes --wait` takes it off, so the node
/// initializes and the pod runs there. Before, the taint stayed (a known ephemeral taint: never
/// initialized) and the wait timed out with exit 3.
#[test]
fn provision_wait_takes_the_unregistered_taint_off_a_custom_node() {
    let walk = Walk::with("linelife-unregistered", true, "crds/v1", |_| Vec::new());
    let manifest =
        std::fs::read_to_string(fixture("life-line-by-line/custom-unregistered.yaml")).unwrap();
    walk.apply("custom-unregistered.yaml", &manifest);
    walk.wait_unschedulable(1);
    let out = walk.run(&[
        "karpenter",
        "provision",
        "--yes",
        "--wait",
        "--timeout",
        "60s",
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let nodes = team_nodes(&walk);
    assert_eq!(nodes.len(), 1, "one node for the pod");
    let node = &nodes[0];
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        !taints
            .iter()
            .any(|t| t["key"] == "karpenter.sh/unregistered"),
        "{taints:?}"
    );
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/registered"],
        "true"
    );
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/initialized"],
        "true"
    );
}
