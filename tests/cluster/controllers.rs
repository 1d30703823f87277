//! The simulated control plane, kwok-style: Deployment, ReplicaSet, DaemonSet, scheduler,
//! kubelet (pod start, node status, graceful termination), node lifecycle (unschedulable
//! taint), disruption (PDB status), pod GC, namespace deletion and garbage collection. All
//! run in one loop under the store lock, woken by writes and by due timers.

use super::api::{self, DeleteOpts, Query};
use super::kinds::{self, pod_ready, set_condition};
use super::resources::Resource;
use super::selector::node_selector_term_matches;
use super::store::Store;
use super::util::{
    controller_ref, labels, meta_str, new_uid, now_rfc3339, now_secs, parse_rfc3339, random_u64,
    rfc3339, scaled_value, template_hash,
};
use super::{Config, State};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Runs the controllers until the task is dropped.
pub async fn run(state: Arc<State>) {
    let mut next_due: Option<i64> = None;
    loop {
        let wait = match next_due {
            Some(t) => Duration::from_millis(((t - now_secs()).max(0) as u64) * 1000 + 50)
                .min(Duration::from_millis(1000)),
            None => Duration::from_millis(1000),
        };
        tokio::select! {
            _ = state.kick.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        // Let a burst of writes land first.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut st = state.store.lock().unwrap();
        let due = next_due.is_some_and(|t| now_secs() >= t);
        if !st.dirty && !due {
            continue;
        }
        next_due = None;
        for _ in 0..8 {
            st.dirty = false;
            let d = reconcile(&mut st, &state.config);
            next_due = match (next_due, d) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if !st.dirty {
                break;
            }
        }
    }
}

fn res(st: &Store, group: &str, plural: &str) -> Resource {
    let version = "v1";
    st.registry
        .find(group, version, plural)
        .cloned()
        .expect("built-in resource")
}

/// Writes `new` when it differs from the stored object.
fn put(st: &mut Store, key: &str, new: Value) {
    let ns = meta_str(&new, "namespace").to_string();
    let name = meta_str(&new, "name").to_string();
    if st.get(key, &ns, &name) != Some(&new) {
        st.replace(key, new);
    }
}

/// One pass of every controller. Returns when something time-based is next due.
pub fn reconcile(st: &mut Store, config: &Config) -> Option<i64> {
    let mut due: Option<i64> = None;
    let mut at = |t: i64| {
        due = Some(due.map_or(t, |d: i64| d.min(t)));
    };
    namespaces(st);
    garbage_collect(st);
    node_lifecycle(st, config);
    // Before the workload controllers, so evicted pods are replaced in the same pass.
    if let Some(t) = super::karpenter::reconcile(st, config) {
        at(t);
    }
    deployments(st);
    replicasets(st);
    daemonsets(st);
    schedule(st);
    if let Some(t) = kubelet(st, config) {
        at(t);
    }
    if let Some(t) = disruption(st) {
        at(t);
    }
    due
}

fn namespaces(st: &mut Store) {
    let terminating: Vec<String> = st
        .list("/namespaces", None)
        .filter(|n| n.pointer("/metadata/deletionTimestamp").is_some())
        .map(|n| meta_str(n, "name").to_string())
        .collect();
    for ns in terminating {
        let mut remaining = 0;
        let namespaced: Vec<Resource> = st
            .registry
            .resources
            .iter()
            .filter(|r| r.namespaced)
            .cloned()
            .collect();
        let mut seen = HashSet::new();
        for r in namespaced {
            if !seen.insert(r.key()) {
                continue;
            }
            let names: Vec<(String, bool)> = st
                .list(&r.key(), Some(&ns))
                .map(|o| {
                    (
                        meta_str(o, "name").to_string(),
                        o.pointer("/metadata/deletionTimestamp").is_some(),
                    )
                })
                .collect();
            remaining += names.len();
            for (name, deleting) in names {
                if !deleting {
                    let _ = api::delete(st, &r, &ns, &name, &DeleteOpts::default());
                }
            }
        }
        if remaining == 0 {
            st.remove("/namespaces", "", &ns);
        }
    }
}

/// Background/foreground deletion of dependents whose owners are gone.
fn garbage_collect(st: &mut Store) {
    let mut orphans: Vec<(String, String, String)> = Vec::new();
    let mut foreground_owners: HashSet<String> = HashSet::new();
    let mut has_dependents: HashSet<String> = HashSet::new();
    for (key, objs) in &st.objects {
        for o in objs.values() {
            let Some(refs) = o
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
            else {
                continue;
            };
            if refs.is_empty() {
                continue;
            }
            let mut all_gone = true;
            for r in refs {
                let uid = r.get("uid").and_then(Value::as_str).unwrap_or("");
                if let Some(owner) = st.get_by_uid(uid) {
                    {
                        has_dependents.insert(uid.to_string());
                        let fg = owner
                            .pointer("/metadata/finalizers")
                            .and_then(Value::as_array)
                            .is_some_and(|f| f.iter().any(|x| x == "foregroundDeletion"));
                        if fg && owner.pointer("/metadata/deletionTimestamp").is_some() {
                            foreground_owners.insert(uid.to_string());
                            if o.pointer("/metadata/deletionTimestamp").is_none() {
                                orphans.push((
                                    key.clone(),
                                    meta_str(o, "namespace").into(),
                                    meta_str(o, "name").into(),
                                ));
                            }
                        } else {
                            all_gone = false;
                        }
                    }
                }
            }
            if all_gone && o.pointer("/metadata/deletionTimestamp").is_none() {
                orphans.push((
                    key.clone(),
                    meta_str(o, "namespace").into(),
                    meta_str(o, "name").into(),
                ));
            }
        }
    }
    orphans.sort();
    orphans.dedup();
    for (key, ns, name) in orphans {
        if let Some(r) = st.registry.by_key(&key).cloned() {
            let _ = api::delete(st, &r, &ns, &name, &DeleteOpts::default());
        }
    }
    // Foreground owners without dependents left lose their finalizer (and go).
    let owners: Vec<(String, Value)> = st
        .objects
        .iter()
        .flat_map(|(k, m)| m.values().map(move |o| (k.clone(), o)))
        .filter(|(_, o)| {
            o.pointer("/metadata/deletionTimestamp").is_some()
                && o.pointer("/metadata/finalizers")
                    .and_then(Value::as_array)
                    .is_some_and(|f| f.iter().any(|x| x == "foregroundDeletion"))
        })
        .map(|(k, o)| (k, o.clone()))
        .collect();
    for (key, o) in owners {
        let uid = meta_str(&o, "uid").to_string();
        if has_dependents.contains(&uid) {
            continue;
        }
        let mut n = o.clone();
        if let Some(f) = n
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|x| x != "foregroundDeletion");
        }
        if let Some(r) = st.registry.by_key(&key).cloned() {
            let _ = api::commit(st, &r, o, n, None, &Query::default());
        }
    }
}

const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Node lifecycle: the unschedulable taint follows `spec.unschedulable`; nodes created through
/// the API without a status get a Ready one (kwok-style kubelet).
fn node_lifecycle(st: &mut Store, config: &Config) {
    let nodes: Vec<Value> = st.list("/nodes", None).cloned().collect();
    for node in nodes {
        let mut n = node.clone();
        let cordoned = n.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true);
        let taints = n
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let has = taints
            .iter()
            .any(|t| t.get("key").and_then(Value::as_str) == Some(UNSCHEDULABLE_TAINT));
        if cordoned && !has {
            let mut t = taints.clone();
            t.push(json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": now_rfc3339()}));
            n["spec"]["taints"] = Value::Array(t);
        } else if !cordoned && has {
            let t: Vec<Value> = taints
                .into_iter()
                .filter(|t| t.get("key").and_then(Value::as_str) != Some(UNSCHEDULABLE_TAINT))
                .collect();
            if t.is_empty() {
                n["spec"].as_object_mut().unwrap().remove("taints");
            } else {
                n["spec"]["taints"] = Value::Array(t);
            }
        }
        if kinds::condition_status(&n, "Ready").is_none() {
            fill_node_status(&mut n, config);
        }
        put(st, "/nodes", n);
    }
}

/// The status a kubelet reports for a node that has none.
pub fn fill_node_status(n: &mut Value, config: &Config) {
    let now = now_rfc3339();
    let arch = labels(n)
        .get("kubernetes.io/arch")
        .and_then(Value::as_str)
        .unwrap_or("amd64")
        .to_string();
    let status = super::util::obj_at(n, &["status"]);
    if !status.contains_key("capacity") {
        status.insert(
            "capacity".into(),
            json!({"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "20Gi"}),
        );
    }
    if !status.contains_key("allocatable") {
        let cap = status["capacity"].clone();
        status.insert("allocatable".into(), cap);
    }
    let cond = |t: &str, s: &str, reason: &str, msg: &str| json!({"type": t, "status": s, "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": reason, "message": msg});
    let mut conds: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    conds.retain(|c| c.get("type").and_then(Value::as_str) != Some("Ready"));
    for (t, reason, msg) in [
        (
            "MemoryPressure",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        (
            "DiskPressure",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        (
            "PIDPressure",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
    ] {
        if !conds
            .iter()
            .any(|c| c.get("type").and_then(Value::as_str) == Some(t))
        {
            conds.push(cond(t, "False", reason, msg));
        }
    }
    conds.push(cond(
        "Ready",
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
    ));
    status.insert("conditions".into(), Value::Array(conds));
    let v = config.kubernetes_version.trim_start_matches('v');
    let kubelet = if v.matches('.').count() >= 2 {
        format!("v{v}")
    } else {
        format!("v{v}.0")
    };
    let info = status.entry("nodeInfo").or_insert_with(|| json!({}));
    if let Some(info) = info.as_object_mut() {
        for (k, val) in [
            ("kubeletVersion", kubelet.clone()),
            ("kubeProxyVersion", kubelet.clone()),
            ("osImage", "Amazon Linux 2".into()),
            ("kernelVersion", "5.10.210-201.852.amzn2.x86_64".into()),
            ("containerRuntimeVersion", "containerd://1.7.11".into()),
            ("operatingSystem", "linux".into()),
            ("architecture", arch.clone()),
            ("machineID", format!("{:032x}", random_u64() as u128 * 7919)),
            ("systemUUID", new_uid()),
            ("bootID", new_uid()),
        ] {
            info.entry(k).or_insert(json!(val));
        }
    }
    if !status.contains_key("addresses") {
        let r = random_u64();
        status.insert(
            "addresses".into(),
            json!([{"type": "InternalIP", "address": format!("192.168.{}.{}", (r >> 8) % 256, r % 254 + 1)}]),
        );
    }
    status.insert(
        "daemonEndpoints".into(),
        json!({"kubeletEndpoint": {"Port": 10250}}),
    );
}

fn owned_by<'a>(
    st: &'a Store,
    key: &str,
    ns: &'a str,
    uid: &'a str,
) -> impl Iterator<Item = &'a Value> + 'a {
    st.list(key, Some(ns)).filter(move |o| {
        controller_ref(o)
            .and_then(|r| r.get("uid"))
            .and_then(Value::as_str)
            == Some(uid)
    })
}

fn active(p: &Value) -> bool {
    let phase = p
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    p.pointer("/metadata/deletionTimestamp").is_none() && phase != "Succeeded" && phase != "Failed"
}

fn owner_ref(kind: &str, obj: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": meta_str(obj, "name"),
        "uid": meta_str(obj, "uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Template without the hash labels, for comparing a Deployment's template with its sets'.
fn template_sans_hash(t: Option<&Value>) -> Value {
    let mut t = t.cloned().unwrap_or(Value::Null);
    if let Some(l) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        l.remove("pod-template-hash");
    }
    super::util::canonical(&t)
}

fn revision(o: &Value) -> i64 {
    o.pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn spec_replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn status_i(o: &Value, f: &str) -> i64 {
    o.pointer(&format!("/status/{f}"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn set_rs_replicas(st: &mut Store, rs: &Value, n: i64, dep: &Value) {
    let mut new = rs.clone();
    new["spec"]["replicas"] = json!(n);
    let ann = super::util::obj_at(&mut new, &["metadata", "annotations"]);
    ann.insert(
        "deployment.kubernetes.io/desired-replicas".into(),
        json!(spec_replicas(dep).to_string()),
    );
    let surge = dep
        .pointer("/spec/strategy/rollingUpdate/maxSurge")
        .map(|v| scaled_value(v, spec_replicas(dep), true).unwrap_or(0))
        .unwrap_or(0);
    ann.insert(
        "deployment.kubernetes.io/max-replicas".into(),
        json!((spec_replicas(dep) + surge).to_string()),
    );
    put(st, "apps/replicasets", new);
}

fn deployments(st: &mut Store) {
    let deps: Vec<Value> = st
        .list("apps/deployments", None)
        .filter(|d| d.pointer("/metadata/deletionTimestamp").is_none())
        .cloned()
        .collect();
    let rs_res = res(st, "apps", "replicasets");
    for dep in deps {
        let ns = meta_str(&dep, "namespace").to_string();
        let uid = meta_str(&dep, "uid").to_string();
        let name = meta_str(&dep, "name").to_string();
        let replicas = spec_replicas(&dep);
        let paused = dep.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);
        let want = template_sans_hash(dep.pointer("/spec/template"));
        let mut sets: Vec<Value> = owned_by(st, "apps/replicasets", &ns, &uid)
            .cloned()
            .collect();
        sets.sort_by_key(|r| (revision(r), meta_str(r, "creationTimestamp").to_string()));
        let max_rev = sets.iter().map(revision).max().unwrap_or(0);
        let mut new_rs = sets
            .iter()
            .find(|r| template_sans_hash(r.pointer("/spec/template")) == want)
            .cloned();
        let recreate =
            dep.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate");
        let surge = if recreate {
            0
        } else {
            dep.pointer("/spec/strategy/rollingUpdate/maxSurge")
                .and_then(|v| scaled_value(v, replicas, true))
                .unwrap_or(0)
        };
        let mut unavailable = if recreate {
            0
        } else {
            dep.pointer("/spec/strategy/rollingUpdate/maxUnavailable")
                .and_then(|v| scaled_value(v, replicas, false))
                .unwrap_or(0)
        };
        if !recreate && surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        if new_rs.is_none() && !paused {
            let hash = template_hash(dep.pointer("/spec/template").unwrap_or(&Value::Null));
            let mut template = dep.pointer("/spec/template").cloned().unwrap_or(json!({}));
            super::util::obj_at(&mut template, &["metadata", "labels"])
                .insert("pod-template-hash".into(), json!(hash));
            let mut selector = dep.pointer("/spec/selector").cloned().unwrap_or(json!({}));
            super::util::obj_at(&mut selector, &["matchLabels"])
                .insert("pod-template-hash".into(), json!(hash));
            let mut lbls = template
                .pointer("/metadata/labels")
                .cloned()
                .unwrap_or(json!({}));
            lbls["pod-template-hash"] = json!(hash);
            let current: i64 = sets.iter().map(spec_replicas).sum();
            let initial = if recreate {
                if current > 0 {
                    0
                } else {
                    replicas
                }
            } else if sets.is_empty() {
                replicas
            } else {
                (replicas + surge - current).clamp(0, replicas)
            };
            let mut ann = Map::new();
            ann.insert(
                "deployment.kubernetes.io/revision".into(),
                json!((max_rev + 1).to_string()),
            );
            ann.insert(
                "deployment.kubernetes.io/desired-replicas".into(),
                json!(replicas.to_string()),
            );
            ann.insert(
                "deployment.kubernetes.io/max-replicas".into(),
                json!((replicas + surge).to_string()),
            );
            let rs = json!({
                "metadata": {
                    "name": format!("{name}-{hash}"),
                    "namespace": ns,
                    "labels": lbls,
                    "annotations": ann,
                    "ownerReferences": [owner_ref("Deployment", &dep)],
                },
                "spec": {"replicas": initial, "minReadySeconds": dep.pointer("/spec/minReadySeconds").cloned().unwrap_or(json!(0)), "selector": selector, "template": template},
            });
            if let Ok(w) = api::create(st, &rs_res, &ns, rs, &Query::default()) {
                new_rs = Some(w.object.clone());
                sets.push(w.object);
            }
        } else if let Some(r) = &new_rs {
            if revision(r) < max_rev && !paused {
                // Rolled back to an older template: it becomes the newest revision.
                let mut n = r.clone();
                super::util::obj_at(&mut n, &["metadata", "annotations"]).insert(
                    "deployment.kubernetes.io/revision".into(),
                    json!((max_rev + 1).to_string()),
                );
                put(st, "apps/replicasets", n.clone());
                new_rs = st
                    .get("apps/replicasets", &ns, meta_str(&n, "name"))
                    .cloned();
            }
        }
        let new_name = new_rs
            .as_ref()
            .map(|r| meta_str(r, "name").to_string())
            .unwrap_or_default();
        let olds: Vec<Value> = sets
            .iter()
            .filter(|r| meta_str(r, "name") != new_name)
            .cloned()
            .collect();
        if let Some(nrs) = &new_rs {
            if paused {
                // Scaling only: proportional scaling is approximated by the newest set.
                let total: i64 = sets.iter().map(spec_replicas).sum();
                if total != replicas {
                    let n = (spec_replicas(nrs) + replicas - total).max(0);
                    set_rs_replicas(st, nrs, n, &dep);
                }
            } else if recreate {
                let old_active: i64 = olds
                    .iter()
                    .map(|o| owned_by(st, "/pods", &ns, meta_str(o, "uid")).count() as i64)
                    .sum();
                for o in &olds {
                    if spec_replicas(o) != 0 {
                        set_rs_replicas(st, o, 0, &dep);
                    }
                }
                if old_active == 0 && spec_replicas(nrs) != replicas {
                    set_rs_replicas(st, nrs, replicas, &dep);
                }
            } else {
                // Rolling update: scale the new set up within maxSurge…
                let all: i64 = sets.iter().map(spec_replicas).sum();
                let new_count = spec_replicas(nrs);
                if new_count > replicas {
                    set_rs_replicas(st, nrs, replicas, &dep);
                } else if new_count < replicas {
                    let max_total = replicas + surge;
                    if all < max_total {
                        let up = (max_total - all).min(replicas - new_count);
                        set_rs_replicas(st, nrs, new_count + up, &dep);
                    }
                } else if spec_replicas(nrs) == replicas {
                    // desired-replicas annotation follows the deployment
                    set_rs_replicas(st, nrs, replicas, &dep);
                }
                // …and the old ones down within maxUnavailable.
                let nrs_now = st
                    .get("apps/replicasets", &ns, &new_name)
                    .cloned()
                    .unwrap_or(nrs.clone());
                let old_count: i64 = olds.iter().map(spec_replicas).sum();
                if old_count > 0 {
                    let all: i64 = spec_replicas(&nrs_now) + old_count;
                    let min_available = replicas - unavailable;
                    let new_unavailable =
                        spec_replicas(&nrs_now) - status_i(&nrs_now, "availableReplicas");
                    let max_down = all - min_available - new_unavailable;
                    // Old sets' unhealthy replicas go first.
                    let mut budget = max_down.max(0);
                    let mut olds_sorted = olds.clone();
                    olds_sorted.sort_by_key(|o| meta_str(o, "creationTimestamp").to_string());
                    let available_all: i64 = status_i(&nrs_now, "availableReplicas")
                        + olds
                            .iter()
                            .map(|o| status_i(o, "availableReplicas"))
                            .sum::<i64>();
                    let mut total_down = (available_all - min_available).max(0);
                    for o in &olds_sorted {
                        let cur = spec_replicas(o);
                        if cur == 0 {
                            continue;
                        }
                        let unhealthy = (cur - status_i(o, "availableReplicas")).max(0);
                        let down_unhealthy = unhealthy.min(budget);
                        budget -= down_unhealthy;
                        let rest = cur - down_unhealthy;
                        let down_healthy = rest.min(total_down).min(budget.max(0));
                        total_down -= down_healthy;
                        budget -= down_healthy;
                        let target = cur - down_unhealthy - down_healthy;
                        if target != cur {
                            set_rs_replicas(st, o, target, &dep);
                        }
                    }
                }
            }
        }
        // History cleanup.
        let limit = dep
            .pointer("/spec/revisionHistoryLimit")
            .and_then(Value::as_i64)
            .unwrap_or(10);
        let mut dead: Vec<Value> = owned_by(st, "apps/replicasets", &ns, &uid)
            .filter(|r| {
                meta_str(r, "name") != new_name
                    && spec_replicas(r) == 0
                    && status_i(r, "replicas") == 0
            })
            .cloned()
            .collect();
        dead.sort_by_key(revision);
        let excess = dead.len() as i64 - limit;
        for r in dead.iter().take(excess.max(0) as usize) {
            let _ = api::delete(
                st,
                &rs_res,
                &ns,
                meta_str(r, "name"),
                &DeleteOpts::default(),
            );
        }
        // Status.
        let sets: Vec<Value> = owned_by(st, "apps/replicasets", &ns, &uid)
            .cloned()
            .collect();
        let nrs = sets.iter().find(|r| meta_str(r, "name") == new_name);
        let sum = |f: &str| sets.iter().map(|r| status_i(r, f)).sum::<i64>();
        let total_spec: i64 = sets.iter().map(spec_replicas).sum();
        let updated = nrs.map_or(0, |r| status_i(r, "replicas"));
        let available = sum("availableReplicas");
        let mut status = json!({
            "observedGeneration": dep.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
            "replicas": sum("replicas"),
            "updatedReplicas": updated,
            "readyReplicas": sum("readyReplicas"),
            "availableReplicas": available,
            "unavailableReplicas": (total_spec - available).max(0),
            "conditions": dep.pointer("/status/conditions").cloned().unwrap_or(json!([])),
        });
        let obj = status.as_object_mut().unwrap();
        for k in [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ] {
            if obj[k] == json!(0) {
                obj.remove(k);
            }
        }
        let mut holder = json!({"status": status});
        if available >= replicas - unavailable {
            deployment_condition(
                &mut holder,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            );
        } else {
            deployment_condition(
                &mut holder,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            );
        }
        if !new_name.is_empty() {
            let complete =
                updated == replicas && available == replicas && sum("replicas") == replicas;
            if complete {
                deployment_condition(
                    &mut holder,
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    &format!("ReplicaSet \"{new_name}\" has successfully progressed."),
                );
            } else {
                deployment_condition(
                    &mut holder,
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    &format!("ReplicaSet \"{new_name}\" is progressing."),
                );
            }
        }
        let mut new = st
            .get("apps/deployments", &ns, &name)
            .cloned()
            .unwrap_or(dep.clone());
        new["status"] = holder["status"].take();
        if let Some(r) = nrs {
            super::util::obj_at(&mut new, &["metadata", "annotations"]).insert(
                "deployment.kubernetes.io/revision".into(),
                json!(revision(r).to_string()),
            );
        }
        put(st, "apps/deployments", new);
    }
}

/// Deployment conditions carry `lastUpdateTime`, refreshed only when reason/message change.
fn deployment_condition(holder: &mut Value, t: &str, s: &str, reason: &str, msg: &str) {
    let now = now_rfc3339();
    let conds = holder["status"]["conditions"].as_array_mut().unwrap();
    let mut c = json!({"type": t, "status": s, "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": msg});
    if let Some(e) = conds
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
    {
        if e.get("status").and_then(Value::as_str) == Some(s) {
            c["lastTransitionTime"] = e["lastTransitionTime"].clone();
            if e.get("reason").and_then(Value::as_str) == Some(reason)
                && e.get("message").and_then(Value::as_str) == Some(msg)
            {
                c["lastUpdateTime"] = e["lastUpdateTime"].clone();
            }
        }
        *e = c;
    } else {
        conds.push(c);
    }
}

/// Which pods a controller deletes first when scaling down (unscheduled, pending, not ready,
/// newest).
fn deletion_rank(p: &Value) -> (u8, u8, u8, std::cmp::Reverse<String>) {
    let bound = p
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let running = p.pointer("/status/phase").and_then(Value::as_str) == Some("Running");
    (
        bound as u8,
        running as u8,
        pod_ready(p) as u8,
        std::cmp::Reverse(meta_str(p, "creationTimestamp").to_string() + meta_str(p, "name")),
    )
}

fn pod_from_template(owner_kind: &str, owner: &Value, template: &Value, generate: &str) -> Value {
    let ns = meta_str(owner, "namespace");
    let mut meta = json!({
        "generateName": generate,
        "namespace": ns,
        "ownerReferences": [owner_ref(owner_kind, owner)],
    });
    if let Some(l) = template.pointer("/metadata/labels") {
        meta["labels"] = l.clone();
    }
    if let Some(a) = template.pointer("/metadata/annotations") {
        meta["annotations"] = a.clone();
    }
    if let Some(f) = template.pointer("/metadata/finalizers") {
        meta["finalizers"] = f.clone();
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template.get("spec").cloned().unwrap_or(json!({}))})
}

fn replicasets(st: &mut Store) {
    let sets: Vec<Value> = st
        .list("apps/replicasets", None)
        .filter(|d| d.pointer("/metadata/deletionTimestamp").is_none())
        .cloned()
        .collect();
    let pods_res = res(st, "", "pods");
    for rs in sets {
        let ns = meta_str(&rs, "namespace").to_string();
        let uid = meta_str(&rs, "uid").to_string();
        let name = meta_str(&rs, "name").to_string();
        let replicas = spec_replicas(&rs);
        let mut act: Vec<Value> = owned_by(st, "/pods", &ns, &uid)
            .filter(|p| active(p))
            .cloned()
            .collect();
        let diff = act.len() as i64 - replicas;
        let template = rs.pointer("/spec/template").cloned().unwrap_or(json!({}));
        if diff < 0 {
            for _ in 0..(-diff).min(500) {
                let pod = pod_from_template("ReplicaSet", &rs, &template, &format!("{name}-"));
                match api::create(st, &pods_res, &ns, pod, &Query::default()) {
                    Ok(w) => act.push(w.object),
                    Err(_) => break,
                }
            }
        } else if diff > 0 {
            act.sort_by_key(deletion_rank);
            let victims: Vec<String> = act
                .iter()
                .take(diff as usize)
                .map(|p| meta_str(p, "name").to_string())
                .collect();
            for v in victims {
                let _ = api::delete(st, &pods_res, &ns, &v, &DeleteOpts::default());
            }
        }
        let act: Vec<Value> = owned_by(st, "/pods", &ns, &uid)
            .filter(|p| active(p))
            .cloned()
            .collect();
        let tl = template
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let fully = act
            .iter()
            .filter(|p| {
                let l = labels(p);
                tl.iter().all(|(k, v)| l.get(k) == Some(v))
            })
            .count();
        let ready = act.iter().filter(|p| pod_ready(p)).count();
        let min_ready = rs
            .pointer("/spec/minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let now = now_secs();
        let available = act
            .iter()
            .filter(|p| pod_ready(p) && ready_since(p).is_some_and(|t| now - t >= min_ready))
            .count();
        let mut status = json!({
            "replicas": act.len(),
            "fullyLabeledReplicas": fully,
            "readyReplicas": ready,
            "availableReplicas": available,
            "observedGeneration": rs.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        });
        let m = status.as_object_mut().unwrap();
        for k in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
            if m[k] == json!(0) {
                m.remove(k);
            }
        }
        let mut new = st
            .get("apps/replicasets", &ns, &name)
            .cloned()
            .unwrap_or(rs.clone());
        new["status"] = status;
        put(st, "apps/replicasets", new);
    }
}

fn ready_since(p: &Value) -> Option<i64> {
    p.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))?
        .get("lastTransitionTime")?
        .as_str()
        .and_then(parse_rfc3339)
}

/// The tolerations the DaemonSet controller adds to its pods.
fn daemon_tolerations(spec: &mut Value) {
    let m = spec.as_object_mut().unwrap();
    let host_network = m.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    let tols = m.entry("tolerations").or_insert_with(|| json!([]));
    let Some(tols) = tols.as_array_mut() else {
        return;
    };
    let mut add = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        add.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    for (k, e) in add {
        if !tols.iter().any(|t| {
            t.get("key").and_then(Value::as_str) == Some(k)
                && t.get("effect").and_then(Value::as_str) == Some(e)
        }) {
            tols.push(json!({"key": k, "operator": "Exists", "effect": e}));
        }
    }
}

/// A toleration tolerates a taint (`Toleration.ToleratesTaint`).
pub fn tolerates(tol: &Value, taint: &Value) -> bool {
    let te = tol.get("effect").and_then(Value::as_str).unwrap_or("");
    let ke = taint.get("effect").and_then(Value::as_str).unwrap_or("");
    if !te.is_empty() && te != ke {
        return false;
    }
    let tk = tol.get("key").and_then(Value::as_str).unwrap_or("");
    let kk = taint.get("key").and_then(Value::as_str).unwrap_or("");
    let op = tol
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or("Equal");
    if tk.is_empty() {
        return op == "Exists";
    }
    if tk != kk {
        return false;
    }
    match op {
        "Exists" => true,
        _ => {
            tol.get("value").and_then(Value::as_str).unwrap_or("")
                == taint.get("value").and_then(Value::as_str).unwrap_or("")
        }
    }
}

/// The first NoSchedule/NoExecute taint of the node the pod does not tolerate.
fn untolerated_taint(spec: &Value, node: &Value) -> Option<Value> {
    let tols = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut taints = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if kinds::condition_status(node, "Ready") != Some("True")
        && !taints
            .iter()
            .any(|t| t.get("key").and_then(Value::as_str) == Some("node.kubernetes.io/not-ready"))
    {
        taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
    }
    taints.into_iter().find(|t| {
        let e = t.get("effect").and_then(Value::as_str).unwrap_or("");
        (e == "NoSchedule" || e == "NoExecute") && !tols.iter().any(|tol| tolerates(tol, t))
    })
}

/// nodeSelector and required node affinity.
fn node_matches(spec: &Value, node: &Value) -> bool {
    let l = labels(node);
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        if !sel.iter().all(|(k, v)| l.get(k) == Some(v)) {
            return false;
        }
    }
    if let Some(terms) = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)
    {
        if !terms.iter().any(|t| node_selector_term_matches(t, node)) {
            return false;
        }
    }
    true
}

fn daemonsets(st: &mut Store) {
    let sets: Vec<Value> = st
        .list("apps/daemonsets", None)
        .filter(|d| d.pointer("/metadata/deletionTimestamp").is_none())
        .cloned()
        .collect();
    if sets.is_empty() {
        return;
    }
    let pods_res = res(st, "", "pods");
    let nodes: Vec<Value> = st.list("/nodes", None).cloned().collect();
    for ds in sets {
        let ns = meta_str(&ds, "namespace").to_string();
        let uid = meta_str(&ds, "uid").to_string();
        let name = meta_str(&ds, "name").to_string();
        let template = ds.pointer("/spec/template").cloned().unwrap_or(json!({}));
        let hash = template_hash(&template);
        let mut spec = template.get("spec").cloned().unwrap_or(json!({}));
        daemon_tolerations(&mut spec);
        let eligible: Vec<&Value> = nodes
            .iter()
            .filter(|n| {
                node_matches(&spec, n)
                    && untolerated_taint(&spec, n).is_none_or(|t| {
                        // Not-ready is tolerated by the daemon tolerations for NoExecute only; the
                        // scheduler taint for readiness does not keep daemons away.
                        t.get("key").and_then(Value::as_str) == Some("node.kubernetes.io/not-ready")
                    })
            })
            .collect();
        let eligible_names: HashSet<&str> = eligible.iter().map(|n| meta_str(n, "name")).collect();
        let pods: Vec<Value> = owned_by(st, "/pods", &ns, &uid)
            .filter(|p| active(p))
            .cloned()
            .collect();
        let target = |p: &Value| -> String {
            p.pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .or_else(|| {
                    p.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields/0/values/0")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_default()
        };
        let mut by_node: HashMap<String, Vec<Value>> = HashMap::new();
        for p in &pods {
            by_node.entry(target(p)).or_default().push(p.clone());
        }
        for n in &eligible {
            let nn = meta_str(n, "name");
            if by_node.contains_key(nn) {
                continue;
            }
            let mut t = template.clone();
            let mut s = spec.clone();
            s["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nn]}]}]}}});
            t["spec"] = s;
            super::util::obj_at(&mut t, &["metadata", "labels"])
                .insert("controller-revision-hash".into(), json!(hash));
            let pod = pod_from_template("DaemonSet", &ds, &t, &format!("{name}-"));
            let _ = api::create(st, &pods_res, &ns, pod, &Query::default());
        }
        // Pods on nodes no longer eligible, and duplicates.
        let mut misscheduled = 0;
        for (node, ps) in &by_node {
            if !eligible_names.contains(node.as_str()) {
                misscheduled += ps.len();
                for p in ps {
                    let _ = api::delete(
                        st,
                        &pods_res,
                        &ns,
                        meta_str(p, "name"),
                        &DeleteOpts::default(),
                    );
                }
            } else if ps.len() > 1 {
                for p in &ps[1..] {
                    let _ = api::delete(
                        st,
                        &pods_res,
                        &ns,
                        meta_str(p, "name"),
                        &DeleteOpts::default(),
                    );
                }
            }
        }
        // Rolling update: replace outdated pods, maxUnavailable at a time.
        let max_unavailable = ds
            .pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable")
            .and_then(|v| scaled_value(v, eligible.len() as i64, true))
            .unwrap_or(1)
            .max(1);
        let on_delete = ds
            .pointer("/spec/updateStrategy/type")
            .and_then(Value::as_str)
            == Some("OnDelete");
        let pods: Vec<Value> = owned_by(st, "/pods", &ns, &uid)
            .filter(|p| active(p))
            .cloned()
            .collect();
        let unavailable =
            eligible.len() as i64 - pods.iter().filter(|p| pod_ready(p)).count() as i64;
        if !on_delete {
            let mut budget = max_unavailable - unavailable.max(0);
            for p in &pods {
                if budget <= 0 {
                    break;
                }
                let ph = labels(p)
                    .get("controller-revision-hash")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if ph != hash {
                    let _ = api::delete(
                        st,
                        &pods_res,
                        &ns,
                        meta_str(p, "name"),
                        &DeleteOpts::default(),
                    );
                    budget -= 1;
                }
            }
        }
        let pods: Vec<Value> = owned_by(st, "/pods", &ns, &uid)
            .filter(|p| active(p))
            .cloned()
            .collect();
        let scheduled = pods
            .iter()
            .filter(|p| {
                eligible_names.contains(target(p).as_str()) && p.pointer("/spec/nodeName").is_some()
            })
            .count();
        let ready = pods.iter().filter(|p| pod_ready(p)).count();
        let updated = pods
            .iter()
            .filter(|p| {
                labels(p)
                    .get("controller-revision-hash")
                    .and_then(Value::as_str)
                    == Some(hash.as_str())
            })
            .count();
        let mut status = json!({
            "currentNumberScheduled": scheduled,
            "desiredNumberScheduled": eligible.len(),
            "numberMisscheduled": misscheduled,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": updated,
            "numberUnavailable": (eligible.len() as i64 - ready as i64).max(0),
            "observedGeneration": ds.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        });
        let m = status.as_object_mut().unwrap();
        for k in [
            "numberAvailable",
            "numberUnavailable",
            "updatedNumberScheduled",
        ] {
            if m[k] == json!(0) {
                m.remove(k);
            }
        }
        let mut new = st
            .get("apps/daemonsets", &ns, &name)
            .cloned()
            .unwrap_or(ds.clone());
        new["status"] = status;
        put(st, "apps/daemonsets", new);
    }
}

/// Resources a node offers and has in use.
struct NodeFit {
    name: String,
    node: Value,
    allocatable: BTreeMap<String, f64>,
    used: BTreeMap<String, f64>,
    pods: i64,
}

fn quantity_map(v: Option<&Value>) -> BTreeMap<String, f64> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, q)| kinds::parse_quantity(q).map(|f| (k.clone(), f)))
                .collect()
        })
        .unwrap_or_default()
}

fn pod_resources(p: &Value) -> BTreeMap<String, f64> {
    let mut names: HashSet<String> = HashSet::new();
    for key in ["containers", "initContainers"] {
        for c in p
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for part in ["requests", "limits"] {
                if let Some(m) = c
                    .pointer(&format!("/resources/{part}"))
                    .and_then(Value::as_object)
                {
                    names.extend(m.keys().cloned());
                }
            }
        }
    }
    names
        .into_iter()
        .map(|n| (n.clone(), kinds::pod_request(p, &n)))
        .collect()
}

/// The default scheduler: filters (unschedulable, taints, node affinity/selector, resources)
/// and a least-allocated score; unfit pods get `PodScheduled=False/Unschedulable`.
fn schedule(st: &mut Store) {
    let mut pending: Vec<Value> = st
        .list("/pods", None)
        .filter(|p| {
            p.pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                && p.pointer("/metadata/deletionTimestamp").is_none()
                && p.pointer("/status/phase")
                    .and_then(Value::as_str)
                    .is_none_or(|ph| ph == "Pending")
                && p.pointer("/spec/schedulerName")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s == "default-scheduler")
                && p.pointer("/spec/schedulingGates")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
        })
        .cloned()
        .collect();
    if pending.is_empty() {
        return;
    }
    let mut fits: Vec<NodeFit> = st
        .list("/nodes", None)
        .filter(|n| n.pointer("/metadata/deletionTimestamp").is_none())
        .map(|n| NodeFit {
            name: meta_str(n, "name").to_string(),
            node: n.clone(),
            allocatable: quantity_map(n.pointer("/status/allocatable")),
            used: BTreeMap::new(),
            pods: 0,
        })
        .collect();
    let index: HashMap<String, usize> = fits
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), i))
        .collect();
    for p in st.list("/pods", None) {
        let Some(n) = p.pointer("/spec/nodeName").and_then(Value::as_str) else {
            continue;
        };
        let phase = p
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        if phase == "Succeeded" || phase == "Failed" {
            continue;
        }
        if let Some(&i) = index.get(n) {
            for (k, v) in pod_resources(p) {
                *fits[i].used.entry(k).or_default() += v;
            }
            fits[i].pods += 1;
        }
    }
    pending.sort_by_key(|p| {
        (
            std::cmp::Reverse(
                p.pointer("/spec/priority")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            ),
            meta_str(p, "creationTimestamp").to_string(),
            meta_str(p, "name").to_string(),
        )
    });
    for pod in pending {
        let spec = pod.get("spec").cloned().unwrap_or(json!({}));
        let req = pod_resources(&pod);
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut best: Option<(f64, usize)> = None;
        for (i, f) in fits.iter().enumerate() {
            let unsched_tol = spec
                .get("tolerations")
                .and_then(Value::as_array)
                .is_some_and(|ts| {
                    ts.iter().any(|t| {
                        tolerates(
                            t,
                            &json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}),
                        )
                    })
                });
            if f.node
                .pointer("/spec/unschedulable")
                .and_then(Value::as_bool)
                == Some(true)
                && !unsched_tol
            {
                *reasons
                    .entry("node(s) were unschedulable".into())
                    .or_default() += 1;
                continue;
            }
            if let Some(t) = untolerated_taint(&spec, &f.node) {
                let k = t.get("key").and_then(Value::as_str).unwrap_or("");
                let v = t.get("value").and_then(Value::as_str).unwrap_or("");
                *reasons
                    .entry(format!("node(s) had untolerated taint {{{k}: {v}}}"))
                    .or_default() += 1;
                continue;
            }
            if !node_matches(&spec, &f.node) {
                *reasons
                    .entry("node(s) didn't match Pod's node affinity/selector".into())
                    .or_default() += 1;
                continue;
            }
            let mut ok = true;
            let max_pods = f.allocatable.get("pods").copied().unwrap_or(110.0);
            if f.pods as f64 + 1.0 > max_pods {
                *reasons.entry("Too many pods".into()).or_default() += 1;
                ok = false;
            }
            for (r, amount) in &req {
                if *amount <= 0.0 || r == "pods" {
                    continue;
                }
                let alloc = f.allocatable.get(r).copied().unwrap_or(0.0);
                let used = f.used.get(r).copied().unwrap_or(0.0);
                if used + amount > alloc + 1e-9 {
                    *reasons.entry(format!("Insufficient {r}")).or_default() += 1;
                    ok = false;
                }
            }
            if !ok {
                continue;
            }
            let frac = |r: &str| {
                let a = f.allocatable.get(r).copied().unwrap_or(0.0);
                if a <= 0.0 {
                    0.0
                } else {
                    1.0 - (f.used.get(r).copied().unwrap_or(0.0)
                        + req.get(r).copied().unwrap_or(0.0))
                        / a
                }
            };
            let score = (frac("cpu") + frac("memory")) / 2.0;
            if best.is_none_or(|(s, _)| score > s + 1e-12) {
                best = Some((score, i));
            }
        }
        let ns = meta_str(&pod, "namespace").to_string();
        let name = meta_str(&pod, "name").to_string();
        let mut new = pod.clone();
        match best {
            Some((_, i)) => {
                new["spec"]["nodeName"] = json!(fits[i].name);
                set_condition(&mut new, "PodScheduled", "True", "", "");
                for (k, v) in &req {
                    *fits[i].used.entry(k.clone()).or_default() += v;
                }
                fits[i].pods += 1;
            }
            None => {
                let total = fits.len();
                let msg = if total == 0 {
                    "no nodes available to schedule pods".to_string()
                } else {
                    let parts: Vec<String> =
                        reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
                    format!(
                        "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling.",
                        parts.join(", ")
                    )
                };
                let same = pod
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| {
                        cs.iter().any(|c| {
                            c.get("type").and_then(Value::as_str) == Some("PodScheduled")
                                && c.get("reason").and_then(Value::as_str) == Some("Unschedulable")
                                && c.get("message").and_then(Value::as_str) == Some(msg.as_str())
                        })
                    });
                if same {
                    continue;
                }
                set_condition(&mut new, "PodScheduled", "False", "Unschedulable", &msg);
                emit_event(
                    st,
                    &pod,
                    "Warning",
                    "FailedScheduling",
                    &msg,
                    "default-scheduler",
                );
            }
        }
        let _ = (ns, name);
        put(st, "/pods", new);
    }
}

/// Records a core/v1 Event about `obj` (what `kubectl describe` shows).
pub fn emit_event(
    st: &mut Store,
    obj: &Value,
    etype: &str,
    reason: &str,
    msg: &str,
    component: &str,
) {
    let Some(ev_res) = st.registry.find("", "v1", "events").cloned() else {
        return;
    };
    let ns = match meta_str(obj, "namespace") {
        "" => "default".to_string(),
        n => n.to_string(),
    };
    let now = now_rfc3339();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let ev = json!({
        "metadata": {"generateName": format!("{}.", meta_str(obj, "name")), "namespace": ns},
        "involvedObject": {
            "kind": kind,
            "namespace": meta_str(obj, "namespace"),
            "name": meta_str(obj, "name"),
            "uid": meta_str(obj, "uid"),
            "apiVersion": obj.get("apiVersion").cloned().unwrap_or(json!("v1")),
            "resourceVersion": meta_str(obj, "resourceVersion"),
        },
        "reason": reason,
        "message": msg,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": etype,
        "reportingComponent": component,
        "reportingInstance": "",
    });
    let _ = api::create(st, &ev_res, &ns, ev, &Query::default());
}

/// Kubelet: bound pods on Ready nodes start (Running, Ready); terminating pods go when their
/// grace period ends; pods of vanished nodes are collected.
fn kubelet(st: &mut Store, config: &Config) -> Option<i64> {
    let now = now_secs();
    let mut due: Option<i64> = None;
    let node_ips: HashMap<String, (String, bool)> = st
        .list("/nodes", None)
        .map(|n| {
            let ip = n
                .pointer("/status/addresses")
                .and_then(Value::as_array)
                .and_then(|a| {
                    a.iter()
                        .find(|x| x.get("type").and_then(Value::as_str) == Some("InternalIP"))
                })
                .and_then(|x| x.get("address").and_then(Value::as_str))
                .unwrap_or("192.168.0.1")
                .to_string();
            (
                meta_str(n, "name").to_string(),
                (ip, kinds::condition_status(n, "Ready") == Some("True")),
            )
        })
        .collect();
    let pods: Vec<Value> = st
        .list("/pods", None)
        .filter(|p| {
            p.pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty())
        })
        .cloned()
        .collect();
    for p in pods {
        let ns = meta_str(&p, "namespace").to_string();
        let name = meta_str(&p, "name").to_string();
        let node = p
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if let Some(dt) = p
            .pointer("/metadata/deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(parse_rfc3339)
        {
            let grace = p
                .pointer("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let mut end = dt;
            if let Some(cap) = config.max_grace {
                end = end.min(dt - grace + cap.as_secs() as i64);
            }
            let no_finalizers = p
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if now >= end || !node_ips.contains_key(&node) {
                if no_finalizers {
                    st.remove("/pods", &ns, &name);
                }
            } else {
                due = Some(due.map_or(end, |d| d.min(end)));
            }
            continue;
        }
        let Some((ip, ready)) = node_ips.get(&node) else {
            // Pod GC: the node is gone.
            st.remove("/pods", &ns, &name);
            continue;
        };
        let phase = p
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        if phase != "Pending" || !ready {
            continue;
        }
        let mut new = p.clone();
        let started = rfc3339(now);
        let statuses: Vec<Value> = p
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let image = c.get("image").and_then(Value::as_str).unwrap_or("");
                json!({
                    "name": c.get("name").cloned().unwrap_or(json!("")),
                    "state": {"running": {"startedAt": started}},
                    "lastState": {},
                    "ready": true,
                    "restartCount": 0,
                    "image": image,
                    "imageID": format!("{image}@sha256:{:016x}{:016x}", random_u64(), random_u64()),
                    "containerID": format!("containerd://{:016x}{:016x}", random_u64(), random_u64()),
                    "started": true,
                })
            })
            .collect();
        let r = random_u64();
        let pod_ip = if p.pointer("/spec/hostNetwork").and_then(Value::as_bool) == Some(true) {
            ip.clone()
        } else {
            format!("10.0.{}.{}", (r >> 8) % 256, r % 254 + 1)
        };
        let st_obj = super::util::obj_at(&mut new, &["status"]);
        st_obj.insert("phase".into(), json!("Running"));
        st_obj.insert("hostIP".into(), json!(ip));
        st_obj.insert("hostIPs".into(), json!([{"ip": ip}]));
        st_obj.insert("podIP".into(), json!(pod_ip));
        st_obj.insert("podIPs".into(), json!([{"ip": pod_ip}]));
        st_obj.insert("startTime".into(), json!(started));
        st_obj.insert("containerStatuses".into(), Value::Array(statuses));
        for t in ["Initialized", "Ready", "ContainersReady", "PodScheduled"] {
            set_condition(&mut new, t, "True", "", "");
        }
        // Kubelet's order of conditions.
        if let Some(cs) = new
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut)
        {
            let order = [
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled",
            ];
            cs.sort_by_key(|c| {
                order
                    .iter()
                    .position(|o| c.get("type").and_then(Value::as_str) == Some(*o))
                    .unwrap_or(9)
            });
        }
        put(st, "/pods", new);
    }
    due
}

/// PodDisruptionBudget status (`disruptionsAllowed` …).
fn disruption(st: &mut Store) -> Option<i64> {
    let pdbs: Vec<Value> = st
        .list("policy/poddisruptionbudgets", None)
        .cloned()
        .collect();
    let mut due = None;
    for p in pdbs {
        let status = super::pdb::compute_status(st, &p);
        if let Some(dp) = status.get("disruptedPods").and_then(Value::as_object) {
            for t in dp
                .values()
                .filter_map(Value::as_str)
                .filter_map(parse_rfc3339)
            {
                let end = t + 120;
                due = Some(due.map_or(end, |d: i64| d.min(end)));
            }
        }
        let mut new = p.clone();
        new["status"] = status;
        put(st, "policy/poddisruptionbudgets", new);
    }
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toleration_rules() {
        let taint = json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"});
        assert!(tolerates(
            &json!({"key": "dedicated", "operator": "Equal", "value": "gpu"}),
            &taint
        ));
        assert!(tolerates(&json!({"operator": "Exists"}), &taint));
        assert!(!tolerates(
            &json!({"key": "dedicated", "value": "cpu"}),
            &taint
        ));
        assert!(!tolerates(
            &json!({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}),
            &taint
        ));
    }
}
