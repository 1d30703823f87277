//! The operator lease end to end (docs/spec.md §10) on the loopback cluster + moto: a run is
//! refused while another holds the lease (exit 4, the holder named), waits for it with
//! `--wait-for-lease`, takes over a lease whose holder stopped renewing, releases it at the end;
//! two `provision --yes` started together launch one set of instances.

use std::time::{SystemTime, UNIX_EPOCH};

use kubectl_karpenter::model::time::format_rfc3339;
use serde_json::Value;

use crate::provision_live::{walkthrough_manifest, Walk};

fn micro_time(seconds_ago: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    format_rfc3339(now - seconds_ago).replace('Z', ".000000Z")
}

/// Alice's run holds the lease, last renewed `seconds_ago`.
fn alices_lease(seconds_ago: i64) -> String {
    format!(
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: kubectl-karpenter\n  namespace: kube-system\n  annotations:\n    kubectl-karpenter.io/command: drift replace\nspec:\n  holderIdentity: alice@laptop pid 4242\n  leaseDurationSeconds: 30\n  renewTime: \"{}\"\n",
        micro_time(seconds_ago)
    )
}

/// The Lease, as kubectl shows it.
pub(crate) fn lease(walk: &Walk) -> Value {
    walk.json(&[
        "get",
        "lease",
        "-n",
        "kube-system",
        "kubectl-karpenter",
        "-o",
        "json",
    ])
}

#[test]
fn a_held_lease_refuses_waits_expires_and_is_released() {
    let walk = Walk::new_v1beta1("lease-held");
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.apply(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n",
    );
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);

    walk.apply("lease.yaml", &alices_lease(0));
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("held by alice@laptop pid 4242, renewed 0 s ago, drift replace")
            || out
                .stderr
                .contains("held by alice@laptop pid 4242, renewed 1 s ago, drift replace"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--wait-for-lease"), "{}", out.stderr);
    assert!(walk.launched().is_empty(), "nothing launched when refused");

    // Waiting runs out while alice is still (recently) renewed.
    walk.apply("lease.yaml", &alices_lease(0));
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait-for-lease=3s"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("--wait-for-lease ran out"),
        "{}",
        out.stderr
    );

    // Read-only and --dry-run runs never take it.
    let out = walk.run(&["karpenter", "provision", "--dry-run"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        lease(&walk)["spec"]["holderIdentity"],
        "alice@laptop pid 4242"
    );

    // Alice's run was killed: two minutes without renewal, so the lease is taken over.
    walk.apply("lease.yaml", &alices_lease(120));
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(walk.launched().len(), 1);
    // Released at the end: the next run takes it at once.
    let after = lease(&walk);
    assert_eq!(after["spec"].get("holderIdentity"), None, "{after}");
    assert_eq!(
        after["metadata"]["annotations"].get("kubectl-karpenter.io/command"),
        None
    );
}

#[test]
fn two_provisions_at_once_launch_one_set_of_instances() {
    let walk = Walk::new_v1beta1("lease-race");
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.apply(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n",
    );
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);
    // Both wait for the lease: the second runs after the first and finds nothing to launch.
    let args = ["karpenter", "provision", "--yes", "--wait-for-lease=2m"];
    let first = walk.spawn(&args);
    let second = walk.spawn(&args);
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        walk.launched().len(),
        1,
        "one run launched, the other found it"
    );
}
