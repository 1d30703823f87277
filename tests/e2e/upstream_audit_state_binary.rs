//! The state-side Its no earlier pass replayed, through the built binary (docs/upstream-tests.md,
//! "State, lifecycle and pod predicates, audited (s24-audit-state)"): which bound pods count for
//! topology. A terminating pod is left out of affinity and spread counts (core v1.14.1
//! `pkg/controllers/provisioning/scheduling/topology.go` `IgnoredForTopology`), while its
//! required anti-affinity still repels (`pkg/controllers/state/cluster.go` `UpdatePod` keeps the
//! binding until the pod is terminal; `pkg/controllers/state/suite_test.go` "Pod Anti-Affinity").
//! `provision -f - --catalog … -o json` on the scenarios, with the s19 helpers.

use serde_json::{json, Value};

use crate::upstream_scheduling_binary::{pod, pod_affinity, sched, unowned_node, Plan, HOSTNAME};

/// A Running pod bound to `existing`, labelled `labels`, terminating or not, with `patch`.
fn bound(name: &str, labels: Value, terminating: bool, patch: Value) -> Value {
    let mut p = pod(name, json!({"metadata": {"labels": labels}}));
    crate::support::merge(&mut p, patch);
    p["spec"]["nodeName"] = json!("existing");
    p["status"] = json!({"phase": "Running"});
    if terminating {
        p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    p
}

/// An existing node with room, `resident`, and the pending pod `web`.
fn with_resident(resident: Value, web: Value) -> Plan {
    sched(
        json!({}),
        vec![
            unowned_node(
                "existing",
                json!({"cpu": "4", "memory": "8Gi", "pods": "110"}),
            ),
            resident,
            web,
        ],
    )
}

fn on_existing(p: &Plan) -> Vec<String> {
    p.json["existingNodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["pods"].as_array().cloned().unwrap_or_default())
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// A pod requiring hostname affinity to `app: cache` joins the node of a running cache pod, and
/// stays pending when the only one is terminating. **Differed, fixed**: the terminating pod
/// counted and `web` went to its node.
#[test]
fn a_terminating_pod_is_no_affinity_target() {
    let cache = json!({"app": "cache"});
    let web = || pod("web", pod_affinity("podAffinity", cache.clone(), HOSTNAME));
    let running = with_resident(bound("cache", cache.clone(), false, json!({})), web());
    running.assert_pending(&[]);
    assert_eq!(on_existing(&running), ["default/web"], "{:#}", running.json);
    let going = with_resident(bound("cache", cache.clone(), true, json!({})), web());
    going.assert_pending(&["web"]);
    assert!(going.claims().is_empty(), "{:#}", going.json);
}

/// A terminating pod's required hostname anti-affinity to `app: web` keeps `web` off its node
/// (agree: a new NodeClaim).
#[test]
fn a_terminating_pods_required_anti_affinity_still_repels() {
    let loner = bound(
        "loner",
        json!({"app": "loner"}),
        true,
        pod_affinity("podAntiAffinity", json!({"app": "web"}), HOSTNAME),
    );
    let p = with_resident(
        loner,
        pod("web", json!({"metadata": {"labels": {"app": "web"}}})),
    );
    p.assert_pending(&[]);
    assert!(on_existing(&p).is_empty(), "{:#}", p.json);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}
