//! The differences the sweep meets that docs/commands.md documents, each pinned by a small
//! world so the harness's normalisation stays honest.

use serde_json::json;

use super::{paths, world};

/// A pending pod the scheduler has not tried yet (no `PodScheduled` condition) in an export:
/// offline a bare Pod without `nodeName` is pending whatever its status says (docs/spec.md §3,
/// docs/commands.md `provision`); live only pods marked `PodScheduled=False/Unschedulable` are,
/// as Karpenter's `IsProvisionable` (core v1.14.1 `pkg/utils/pod/scheduling.go`,
/// `FailedToSchedule`). The world generator therefore marks every pending pod.
#[test]
fn a_pod_the_scheduler_has_not_tried_is_pending_offline_only_as_documented() {
    let mut w = world::make(1);
    w.objects
        .retain(|o| o["kind"] != "Pod" || o["spec"]["nodeName"].is_string());
    w.objects.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "fresh", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
                 "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Pending"}}));
    let (cluster, text) = paths::both(&w);
    let (live, offline) = paths::provision(&w, &cluster, &text);
    let placed = |v: &serde_json::Value| v.to_string().contains("default/fresh");
    assert!(!placed(&live.unwrap()));
    assert!(placed(&offline.unwrap()));
}

/// The export the harness reads offline is what `kubectl get -o yaml` prints: one `List`, each
/// item with the server's `uid`, `resourceVersion`, `managedFields` and `status`, pods with the
/// defaulted tolerations and the service account's token volume.
#[test]
fn the_export_is_a_kubectl_list_with_server_fields() {
    let w = world::make(2);
    let (_, text) = paths::both(&w);
    for needle in [
        "kind: List",
        "managedFields:",
        "resourceVersion:",
        "uid:",
        "kubectl.kubernetes.io/last-applied-configuration",
        "node.kubernetes.io/not-ready",
        "kube-api-access-x1",
        "status:",
    ] {
        assert!(text.contains(needle), "{needle} not in the export");
    }
    assert!(paths::offline_manifests(&text).is_ok());
}

/// Image names are live's alone (DescribeImages): the drift comparison leaves them out.
#[test]
fn a_drift_detail_is_compared_without_image_names() {
    assert_eq!(
        super::drift_paths::unnamed(
            "runs ami-0old (al2023-old); default resolves amd64 → ami-0abc (x) via y"
        ),
        "runs ami-0old; default resolves amd64 → ami-0abc via y"
    );
}
