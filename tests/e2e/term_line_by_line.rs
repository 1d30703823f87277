//! Node termination, drain and eviction, line by line (s29-lineterm; docs/upstream-tests.md
//! "Node termination, drain and eviction, line by line"): the scenarios of core v1.14.1
//! `pkg/controllers/node/termination/` that show through `drift replace --yes`, against the
//! loopback cluster + moto. Fixtures: `tests/fixtures/term-line-by-line/` (our own manifests).

use crate::drift_live::{narrow_to_category_m, one_provisioned_node, tool_instances};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/term-line-by-line"
);

/// A finished pod that tolerates every taint keeps a claim whose VolumeAttachment stays:
/// Karpenter's `filterVolumeAttachments` (`node/termination/controller.go`) leaves out the
/// volumes of pods `!IsDrainable` (tolerating the disruption taint) whatever their phase, so
/// the old instance terminates without waiting for it. Before s29 `drift replace` waited for it
/// until `--timeout` and stopped the node, cordoned.
#[test]
fn a_finished_pod_tolerating_the_disruption_taint_holds_its_volume() {
    let (walk, old, instance) = one_provisioned_node("term-line-finished-volume");
    let manifests =
        std::fs::read_to_string(format!("{FIXTURES}/finished-tolerating-pod.yaml")).unwrap();
    walk.apply("setup.yaml", &manifests.replace("NODE", &old));
    walk.ok(&[
        "patch",
        "pod",
        "setup",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Succeeded"}}"#,
    ]);
    narrow_to_category_m(&walk);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes", "--timeout", "45s"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        !out.stderr
            .contains("waiting for volume attachment(s) csi-setup"),
        "{}",
        out.stderr
    );
    let state = tool_instances(&walk)
        .into_iter()
        .find(|(id, _, _)| *id == instance)
        .map(|(_, s, _)| s)
        .unwrap_or_default();
    assert!(
        matches!(state.as_str(), "shutting-down" | "terminated"),
        "{state}"
    );
}
