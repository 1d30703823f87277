//! The fake answers the typed operations (`k8s::ops`) the way the API server does.

use serde_json::{json, Value};

use super::*;
use crate::k8s::ops::{self, Eviction, ListQuery};
use crate::k8s::snapshot::Installed;

fn node(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
}

fn pod(name: &str, node: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {"nodeName": node}, "status": {"phase": "Running"}})
}

fn names(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn lists_page_by_page_with_label_and_field_selectors() {
    let c = FakeCluster::new();
    for i in 0..1203 {
        c.put(pod(
            &format!("p{i:04}"),
            if i % 2 == 0 { "a" } else { "b" },
            "web",
        ));
    }
    let on_a: Vec<Value> = ops::list_all(
        &c,
        "/api/v1/pods",
        &ListQuery {
            field_selector: Some("spec.nodeName=a"),
            label_selector: Some("app in (web,db)"),
        },
    )
    .unwrap();
    assert_eq!(on_a.len(), 602);
    // 602 matching pods in pages of 500: two LISTs.
    assert_eq!(c.requests().len(), 2);
    assert_eq!(
        c.requests()[1].query.split('&').next_back(),
        Some("continue=500")
    );
}

#[test]
fn discovery_tells_which_karpenter_is_installed() {
    let c = FakeCluster::new().karpenter_v1beta1();
    let installed = Installed::detect(&c).unwrap();
    assert_eq!(installed.node_pools, Some("v1beta1"));
    assert_eq!(installed.node_classes, Some("v1beta1"));
    assert!(!installed.provisioners);
    assert_eq!(ops::server_version(&c).unwrap(), "v1.29.0");
    // Resources not served answer 404, like a missing CRD.
    assert!(ops::get::<Value>(&c, "/apis/karpenter.sh/v1/nodepools/x")
        .unwrap()
        .is_none());
}

#[test]
fn a_write_naming_a_stale_resource_version_conflicts() {
    let c = FakeCluster::new();
    c.put(node("a", json!({})));
    let seen = c.get("v1", "Node", None, "a").unwrap();
    let rv = seen["metadata"]["resourceVersion"].clone();
    // Someone else changes the node meanwhile.
    c.update("v1", "Node", None, "a", |n| {
        n["spec"] = json!({"unschedulable": true})
    });
    let patch = json!({"metadata": {"resourceVersion": rv, "labels": {"x": "y"}}});
    let e = ops::merge_patch(&c, "/api/v1/nodes/a", &patch).unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    // Without a precondition it merges.
    ops::merge_patch(
        &c,
        "/api/v1/nodes/a",
        &json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .unwrap();
    let n = c.get("v1", "Node", None, "a").unwrap();
    assert_eq!(n["metadata"]["labels"]["x"], "y");
    assert_eq!(n["spec"]["unschedulable"], true);
}

#[test]
fn a_failed_json_patch_test_is_rejected_and_changes_nothing() {
    let c = FakeCluster::new();
    c.put(node("a", json!({"k": "v"})));
    let ops_ = json!([{"op": "test", "path": "/metadata/labels/k", "value": "other"},
        {"op": "remove", "path": "/metadata/labels/k"}]);
    let e = ops::json_patch(&c, "/api/v1/nodes/a", &ops_).unwrap_err();
    assert_eq!(e.status(), Some(422));
    assert_eq!(
        c.get("v1", "Node", None, "a").unwrap()["metadata"]["labels"]["k"],
        "v"
    );
}

#[test]
fn finalizers_hold_a_deletion_until_released() {
    let c = FakeCluster::new().karpenter_v1();
    c.put(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "nc", "finalizers": ["karpenter.sh/termination"]}}));
    assert!(ops::delete(&c, "/apis/karpenter.sh/v1/nodeclaims/nc", None).unwrap());
    let held = c.get("karpenter.sh/v1", "NodeClaim", None, "nc").unwrap();
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    ops::merge_patch(
        &c,
        "/apis/karpenter.sh/v1/nodeclaims/nc",
        &json!({"metadata": {"finalizers": null}}),
    )
    .unwrap();
    assert!(c.get("karpenter.sh/v1", "NodeClaim", None, "nc").is_none());
    // Deleting what is gone is not an error.
    assert!(!ops::delete(&c, "/apis/karpenter.sh/v1/nodeclaims/nc", None).unwrap());
}

#[test]
fn evictions_follow_the_disruption_budget() {
    let c = FakeCluster::new();
    c.put(pod("web-1", "a", "web"));
    c.put(pod("web-2", "a", "web"));
    c.put(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    assert_eq!(
        ops::evict(&c, "default", "web-1", None).unwrap(),
        Eviction::Evicted
    );
    match ops::evict(&c, "default", "web-2", None).unwrap() {
        Eviction::Blocked(why) => assert!(why.contains("disruption budget web"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(c.get("v1", "Pod", Some("default"), "web-2").is_some());
    // A UID precondition that no longer holds: the pod is another one now.
    assert_eq!(
        ops::evict(&c, "default", "web-2", Some("other")).unwrap(),
        Eviction::Gone
    );
    assert_eq!(
        ops::evict(&c, "default", "gone", None).unwrap(),
        Eviction::Gone
    );
}

#[test]
fn scripted_faults_answer_instead_of_the_store_then_are_spent() {
    let c = FakeCluster::new();
    c.put(node("a", json!({})));
    c.fail_with(Method::Patch, "/api/v1/nodes/a", 1, 500, "etcd is sad");
    c.fail(Fault {
        method: Some(Method::Get),
        path: "/api/v1/nodes".into(),
        times: 1,
        answer: FaultAnswer::NoAnswer("timed out".into()),
    });
    let e = ops::merge_patch(&c, "/api/v1/nodes/a", &json!({"spec": {}})).unwrap_err();
    assert_eq!(e.to_string(), "PATCH /api/v1/nodes/a: 500 etcd is sad");
    assert!(matches!(
        ops::get::<Value>(&c, "/api/v1/nodes/a"),
        Err(ClusterError::Transport { .. })
    ));
    ops::merge_patch(&c, "/api/v1/nodes/a", &json!({"spec": {}})).unwrap();
    assert!(ops::get::<Value>(&c, "/api/v1/nodes/a").unwrap().is_some());
    assert_eq!(
        c.writes(),
        ["PATCH /api/v1/nodes/a", "PATCH /api/v1/nodes/a"]
    );
}

#[test]
fn a_lost_answer_is_no_answer_to_the_client_but_the_write_took_effect() {
    let c = FakeCluster::new();
    c.put(node("a", json!({})));
    c.fail(Fault {
        method: Some(Method::Patch),
        path: "/api/v1/nodes/a".into(),
        times: 1,
        answer: FaultAnswer::LostAnswer("connection reset".into()),
    });
    let patch = json!({"spec": {"unschedulable": true}});
    assert!(matches!(
        ops::merge_patch(&c, "/api/v1/nodes/a", &patch),
        Err(ClusterError::Transport { .. })
    ));
    assert_eq!(
        c.get("v1", "Node", None, "a").unwrap()["spec"]["unschedulable"],
        true
    );
}

#[test]
fn create_names_from_generate_name_and_refuses_duplicates() {
    let c = FakeCluster::new();
    let made = ops::create(
        &c,
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        &json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "kubectl-karpenter"}, "spec": {"holderIdentity": "a"}}),
    )
    .unwrap();
    assert_eq!(made["metadata"]["namespace"], "kube-system");
    let again = ops::create(
        &c,
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        &json!({"metadata": {"name": "kubectl-karpenter"}}),
    )
    .unwrap_err();
    assert_eq!(again.status(), Some(409));
    assert_eq!(
        names(&c.list("coordination.k8s.io/v1", "Lease")),
        ["kubectl-karpenter"]
    );
}

#[test]
fn kinds_map_to_their_resources() {
    for (kind, resource) in [
        ("EC2NodeClass", "ec2nodeclasses"),
        ("NodePool", "nodepools"),
        ("PodDisruptionBudget", "poddisruptionbudgets"),
        ("StorageClass", "storageclasses"),
        ("NodeOverlay", "nodeoverlays"),
        ("NetworkPolicy", "networkpolicies"),
    ] {
        assert_eq!(plural(kind), resource);
    }
}
