//! The disruption controller's arithmetic: a PodDisruptionBudget's status from the pods it
//! selects and the scale of their controllers (`pkg/controller/disruption`).

use super::kinds::{pod_ready, set_condition};
use super::selector::LabelSelector;
use super::store::Store;
use super::util::{controller_ref, labels, meta_str, now_secs, parse_rfc3339, scaled_value};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// How long an eviction stays in `disruptedPods` waiting for the pod to go.
const DELETION_TIMEOUT_SECS: i64 = 120;

/// The scale of the controller owning a pod (Deployment through its ReplicaSet, ReplicaSet,
/// StatefulSet, ReplicationController), keyed by uid.
fn controller_scale(st: &Store, pod: &Value) -> Option<(String, i64)> {
    let r = controller_ref(pod)?;
    let uid = r.get("uid").and_then(Value::as_str)?;
    let owner = st.get_by_uid(uid)?;
    let kind = owner.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind == "ReplicaSet" {
        if let Some(dref) = controller_ref(owner) {
            if dref.get("kind").and_then(Value::as_str) == Some("Deployment") {
                let duid = dref.get("uid").and_then(Value::as_str)?;
                let dep = st.get_by_uid(duid)?;
                return Some((
                    duid.to_string(),
                    dep.pointer("/spec/replicas")
                        .and_then(Value::as_i64)
                        .unwrap_or(1),
                ));
            }
        }
    }
    match kind {
        "ReplicaSet" | "StatefulSet" | "ReplicationController" | "Deployment" => Some((
            uid.to_string(),
            owner
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1),
        )),
        _ => None,
    }
}

/// The status a PDB should have now.
pub fn compute_status(st: &Store, pdb: &Value) -> Value {
    let ns = meta_str(pdb, "namespace");
    let sel = LabelSelector::from_object(pdb.pointer("/spec/selector")).unwrap_or(LabelSelector {
        reqs: vec![],
        nothing: true,
    });
    let pods: Vec<&Value> = st
        .list("/pods", Some(ns))
        .filter(|p| sel.matches(&labels(p)))
        .collect();
    let min_av = pdb.pointer("/spec/minAvailable").filter(|v| !v.is_null());
    let max_un = pdb.pointer("/spec/maxUnavailable").filter(|v| !v.is_null());
    let needs_scale = max_un.is_some()
        || min_av.is_some_and(Value::is_string)
            && min_av
                .and_then(Value::as_str)
                .is_some_and(|s| s.ends_with('%'));
    let mut error: Option<String> = None;
    let expected: i64;
    let desired: i64;
    if needs_scale {
        let mut seen = BTreeSet::new();
        let mut total = 0;
        for p in &pods {
            match controller_scale(st, p) {
                Some((uid, n)) => {
                    if seen.insert(uid) {
                        total += n;
                    }
                }
                None => {
                    error = Some(format!(
                        "found no controllers for pod {:?}",
                        meta_str(p, "name")
                    ));
                    break;
                }
            }
        }
        expected = total;
        desired = match (max_un, min_av) {
            (Some(mu), _) => (expected - scaled_value(mu, expected, true).unwrap_or(0)).max(0),
            (None, Some(ma)) => scaled_value(ma, expected, true).unwrap_or(0),
            _ => 0,
        };
    } else {
        expected = pods.len() as i64;
        desired = min_av
            .and_then(|v| scaled_value(v, expected, true))
            .unwrap_or(0);
    }
    // Evictions not yet reflected by the pod going away.
    let now = now_secs();
    let mut disrupted = Map::new();
    if let Some(dp) = pdb
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
    {
        for (name, t) in dp {
            let fresh = t
                .as_str()
                .and_then(parse_rfc3339)
                .is_some_and(|t| now - t < DELETION_TIMEOUT_SECS);
            let pod = st.get("/pods", ns, name);
            if fresh && pod.is_some_and(|p| p.pointer("/metadata/deletionTimestamp").is_none()) {
                disrupted.insert(name.clone(), t.clone());
            }
        }
    }
    let healthy = pods
        .iter()
        .filter(|p| {
            p.pointer("/metadata/deletionTimestamp").is_none()
                && pod_ready(p)
                && !disrupted.contains_key(meta_str(p, "name"))
        })
        .count() as i64;
    let allowed = if error.is_some() || expected <= 0 {
        0
    } else {
        (healthy - desired).max(0)
    };
    let mut out = json!({
        "observedGeneration": pdb.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": pdb.pointer("/status/conditions").cloned().unwrap_or(json!([])),
    });
    if !disrupted.is_empty() {
        out["disruptedPods"] = Value::Object(disrupted);
    }
    let mut holder = json!({"status": out});
    match (&error, allowed > 0) {
        (Some(e), _) => set_condition(&mut holder, "DisruptionAllowed", "False", "SyncFailed", e),
        (None, true) => set_condition(
            &mut holder,
            "DisruptionAllowed",
            "True",
            "SufficientPods",
            "",
        ),
        (None, false) => set_condition(
            &mut holder,
            "DisruptionAllowed",
            "False",
            "InsufficientPods",
            "",
        ),
    }
    let mut status = holder["status"].take();
    if let Some(conds) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in conds {
            if let Some(m) = c.as_object_mut() {
                m.remove("lastProbeTime");
                m.entry("message").or_insert(json!(""));
                m.insert(
                    "observedGeneration".into(),
                    pdb.pointer("/metadata/generation")
                        .cloned()
                        .unwrap_or(json!(1)),
                );
            }
        }
    }
    status
}
