//! CapacityBuffers read live, through the binary, against the loopback cluster and moto
//! (docs/karpenter.md §6.13, s26-capbuffer2): the vendored CRD installed, a buffer of two
//! replicas of the walkthrough's `inflate` Deployment (1 CPU each, scaled to 0), nothing
//! pending. Karpenter v1.14.1 with its `CapacityBuffer` gate on launches a NodeClaim for the
//! virtual pods (`provisioning/provisioner.go` `Reconcile` → `CreateNodeClaims`), once.

use serde_json::Value;

use crate::provision_live::{walkthrough_manifest, Walk};
use crate::support::fixture;

const BUFFER: &str = "apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: spare, namespace: default}
spec:
  scalableRef: {kind: Deployment, name: inflate}
  replicas: 2
";

#[test]
fn live_provision_launches_for_a_buffer_only_behind_the_gate() {
    let walk = Walk::with("capacity-buffer-live", false, "crds/v1beta1", |_| {
        Vec::new()
    });
    walk.apply("quickstart.yaml", &walkthrough_manifest());
    let crd = fixture("crds/autoscaling");
    walk.ok(&["apply", "-f", &crd.to_string_lossy()]);
    walk.apply("buffer.yaml", BUFFER);
    // Gate off (the default): nothing is read, nothing pending (unit tests:
    // `tests_buffers::with_the_gate_off_no_buffer_is_read_or_planned`).
    let gate = ["--feature-gates", "CapacityBuffer=true"];
    let on = walk.run(
        &[
            &["karpenter", "provision", "--yes", "-o", "json"][..],
            &gate,
        ]
        .concat(),
    );
    assert_eq!(on.code, 0, "{}{}", on.stdout, on.stderr);
    let doc: Value = serde_json::from_str(&on.stdout).unwrap();
    let buffers = &doc["plan"]["capacityBuffers"];
    assert_eq!(buffers[0]["name"], "default/spare", "{doc:#}");
    assert_eq!(buffers[0]["replicas"], 2, "{doc:#}");
    let launched = doc["launched"].as_array().unwrap();
    assert_eq!(launched.len(), 1, "{doc:#}");
    assert!(
        launched[0]["pods"].as_array().is_none_or(|p| p.is_empty()),
        "{doc:#}"
    );
    // Again: the buffer's capacity is in flight (the node never registers here): nothing new.
    let again = walk.run(
        &[
            &["karpenter", "provision", "--yes", "-o", "json"][..],
            &gate,
        ]
        .concat(),
    );
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(walk.launched().len(), 1, "{}", again.stdout);
}
