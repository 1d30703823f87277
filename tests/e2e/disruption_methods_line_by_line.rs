//! Disruption methods read line by line against core v1.14.1 (docs/upstream-tests.md "Disruption
//! methods and validation, line by line (s28-linemethods)"): the differences visible through the
//! binary. Fixtures in `tests/fixtures/disruption-methods-line-by-line/` (our own manifests).

use std::process::Command;

use crate::drift_live::team_nodes;
use crate::provision_live::{Walk, Watching};
use crate::support::fixture;

/// core v1.14.1 `pkg/controllers/disruption/controller.go NewMethods` ("Delete empty nodes
/// across all consolidation policies (WhenEmpty, WhenEmptyOrUnderutilized, Balanced)") and
/// `emptiness.go ShouldDisrupt`, which reads no policy: `provision --watch`, standing in for the
/// controller, removes a `Balanced` pool's empty node once `consolidateAfter` (0s) has passed.
/// Before, it left every node of a `Balanced` pool alone.
#[test]
fn provision_watch_removes_a_balanced_pools_empty_node() {
    let walk = Walk::with("linemethods-balanced", true, "crds/v1", |_| Vec::new());
    let manifest = std::fs::read_to_string(fixture(
        "disruption-methods-line-by-line/balanced-pool.yaml",
    ))
    .unwrap();
    walk.apply("balanced-pool.yaml", &manifest);
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(team_nodes(&walk).len(), 1, "one node for the pod");

    walk.ok(&["scale", "deployment", "inflate", "--replicas", "0"]);
    walk.eventually(30, "inflate gone", || {
        walk.items(&["get", "pods", "-l", "app=inflate"])
            .is_empty()
            .then_some(())
    });
    let mut watch = Watching(walk.spawn(&["karpenter", "provision", "--watch", "--yes"]));
    walk.eventually(60, "the Balanced pool's empty node removed", || {
        team_nodes(&walk).is_empty().then_some(())
    });
    assert!(walk.launched().is_empty(), "its instance is terminated");
    Command::new("kill")
        .args(["-INT", &watch.0.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(
        watch.0.wait().unwrap().code(),
        Some(0),
        "clean stop on SIGINT"
    );
}
