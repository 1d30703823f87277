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

/// The fake's PDB arithmetic, as Kubernetes' disruption controller does it
/// (`k8s.io/kubernetes pkg/controller/disruption/disruption.go` `getExpectedPodCount`,
/// `getExpectedScale`, `updatePdbStatus`; its tests `TestMaxUnavailable`,
/// `TestReplicaSetScaleDown`, `TestUnmanagedPodsWithPercentage`...): the expected pods are the
/// controllers' `spec.replicas`, each controller once (a Deployment's for its ReplicaSet's pods),
/// not the pods present; an integer `minAvailable` counts only healthy pods; a pod with no
/// controller is not expected; nothing is allowed while nothing is expected. Each row: the
/// owners put, the pods (name, controller, Running), the PDB spec → evictions allowed.
#[test]
fn pdb_disruptions_allowed_follow_the_controllers_scale() {
    let rs = |name: &str, replicas: i64, deployment: Option<&str>| {
        let owners: Vec<Value> = deployment
            .map(|d| json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": d, "controller": true}))
            .into_iter()
            .collect();
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owners},
            "spec": {"replicas": replicas}})
    };
    let deployment = |name: &str, replicas: i64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas}})
    };
    let sts = |name: &str, replicas: i64| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas}})
    };
    type Pods = &'static [(&'static str, Option<(&'static str, &'static str)>, bool)];
    let rs_a3 = || vec![rs("a", 3, None)];
    let cases: Vec<(&str, Vec<Value>, Pods, Value, i64)> = vec![
        (
            "maxUnavailable 1 of a ReplicaSet of 3, one pod gone: the gone one is unavailable",
            rs_a3(),
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
            ],
            json!({"maxUnavailable": 1}),
            0,
        ),
        (
            "maxUnavailable 1 of a ReplicaSet of 3, all there",
            rs_a3(),
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
                ("a-3", Some(("ReplicaSet", "a")), true),
            ],
            json!({"maxUnavailable": 1}),
            1,
        ),
        (
            "minAvailable 50% of 4 replicas (2, rounded up), 3 healthy of 3 present",
            vec![sts("db", 4)],
            &[
                ("db-0", Some(("StatefulSet", "db")), true),
                ("db-1", Some(("StatefulSet", "db")), true),
                ("db-2", Some(("StatefulSet", "db")), true),
            ],
            json!({"minAvailable": "50%"}),
            1,
        ),
        (
            "maxUnavailable 30% of 4 (2, rounded up), one not Running",
            vec![sts("db", 4)],
            &[
                ("db-0", Some(("StatefulSet", "db")), true),
                ("db-1", Some(("StatefulSet", "db")), true),
                ("db-2", Some(("StatefulSet", "db")), true),
                ("db-3", Some(("StatefulSet", "db")), false),
            ],
            json!({"maxUnavailable": "30%"}),
            1,
        ),
        (
            "integer minAvailable: the pods present, not the scale (getExpectedPodCount)",
            rs_a3(),
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
            ],
            json!({"minAvailable": 1}),
            1,
        ),
        (
            "a ReplicaSet a Deployment controls is counted at the Deployment's replicas",
            vec![rs("web-7d", 2, Some("web")), deployment("web", 3)],
            &[
                ("web-1", Some(("ReplicaSet", "web-7d")), true),
                ("web-2", Some(("ReplicaSet", "web-7d")), true),
            ],
            json!({"maxUnavailable": 1}),
            0,
        ),
        (
            "two controllers: their scales add up, each once",
            vec![rs("a", 2, None), sts("db", 2)],
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
                ("db-0", Some(("StatefulSet", "db")), true),
            ],
            json!({"maxUnavailable": 1}),
            0,
        ),
        (
            "unmanaged pods only: nothing expected, nothing allowed (updatePdbStatus)",
            vec![],
            &[("bare-1", None, true), ("bare-2", None, true)],
            json!({"maxUnavailable": 1}),
            0,
        ),
        (
            "an unmanaged pod beside a ReplicaSet's: healthy, not expected",
            vec![rs("a", 2, None)],
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
                ("bare", None, true),
            ],
            json!({"maxUnavailable": 1}),
            2,
        ),
        (
            "a controller the fake does not hold: the pod counts for itself",
            vec![],
            &[
                ("a-1", Some(("ReplicaSet", "a")), true),
                ("a-2", Some(("ReplicaSet", "a")), true),
            ],
            json!({"maxUnavailable": 1}),
            1,
        ),
    ];
    for (scenario, owners, pods, spec, want) in cases {
        let c = FakeCluster::new();
        c.put_all(owners);
        for (name, owner, running) in pods {
            let mut p = pod(name, "n", "app");
            if let Some((kind, owner)) = owner {
                p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
                    "kind": kind, "name": owner, "controller": true}]);
            }
            if !running {
                p["status"]["phase"] = json!("Pending");
            }
            c.put(p);
        }
        let mut pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "app"}}}});
        pdb["spec"]
            .as_object_mut()
            .unwrap()
            .extend(spec.as_object().unwrap().clone());
        c.put(pdb.clone());
        let allowed = c.state.borrow().disruptions_allowed(&pdb);
        assert_eq!(allowed, want, "{scenario}");
    }
}
