//! Karpenter's termination controller, emulated (docs/karpenter.md §5.5, §2.5), so that tools which
//! delete NodeClaims / Machines / Nodes and leave the rest to "the running controller" can be
//! tested. It only acts on objects being deleted that carry the `karpenter.sh/termination`
//! finalizer; nothing else changes.
//!
//! - A deleting **NodeClaim** (`karpenter.sh` v1 or v1beta1) or **Machine** (v1alpha5): its Node
//!   (by `status.nodeName` or `status.providerID`) is deleted and waited for; then its instance
//!   (`status.providerID`) is terminated and waited for; then the finalizer goes.
//! - A deleting **Node**: its NodeClaims/Machines are deleted too (as Karpenter does); the Node
//!   is tainted with the disruption taint of the newest NodeClaim version served
//!   (`karpenter.sh/disrupted:NoSchedule` for v1, `karpenter.sh/disruption=disrupting:NoSchedule`
//!   for v1beta1) or cordoned (v1alpha5: `spec.unschedulable`); its pods are evicted through the
//!   Eviction API's own code (PDBs apply: a refusal is retried on a later pass and recorded as a
//!   `FailedDraining` event), non-critical pods before critical ones; DaemonSet pods, mirror
//!   pods, terminal pods, pods tolerating the taint and pods stuck terminating are left alone;
//!   `do-not-disrupt` / `do-not-evict` pods are waited for, not evicted. Once no pod is left to
//!   wait for, the instance is terminated and waited for, then the finalizer goes (so does the
//!   Node, and pod GC takes what was left on it).
//!
//! The EC2 side (TerminateInstances, instance states) is the EC2 kubelet's (`kubelet.rs`): this
//! controller runs under the store lock and cannot await, so the two talk through
//! [`Instances`] in the store. Without `--ec2-endpoint` there is no cloud and instances count
//! as gone at once. The drain does not wait Karpenter's 5 s `MinDrainTime` nor honour
//! termination deadlines: tests want it prompt.

use super::api::{self, DeleteOpts, Query};
use super::controllers::{emit_event, tolerates};
use super::resources::Resource;
use super::store::Store;
use super::util::{controller_ref, meta_str, now_secs, parse_rfc3339};
use super::Config;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

pub const FINALIZER: &str = "karpenter.sh/termination";

/// What the kubelet records for an instance EC2 says it does not know.
pub const NOT_FOUND: &str = "not-found";

/// Storage keys of the claim kinds, newest first.
const CLAIM_KEYS: [&str; 2] = ["karpenter.sh/nodeclaims", "karpenter.sh/machines"];

const COMPONENT: &str = "karpenter";

/// The controller's and the EC2 kubelet's shared view of instances.
#[derive(Debug, Default)]
pub struct Instances {
    /// Drained instances the kubelet is to call TerminateInstances for; it drops an id once
    /// EC2 reports it down.
    pub to_terminate: BTreeSet<String>,
    /// The last state EC2 reported per instance id (`running`, `shutting-down`, …, or
    /// [`NOT_FOUND`]).
    pub states: HashMap<String, String>,
}

impl Instances {
    /// EC2 said the instance is going or gone.
    pub fn is_down(&self, id: &str) -> bool {
        matches!(
            self.states.get(id).map(String::as_str),
            Some("shutting-down" | "terminated" | NOT_FOUND)
        )
    }

    /// Records a state; true when it is news (so the caller marks the store dirty).
    pub fn record(&mut self, id: &str, state: &str) -> bool {
        if self.states.get(id).map(String::as_str) == Some(state) {
            return false;
        }
        self.states.insert(id.to_string(), state.to_string());
        if self.is_down(id) {
            self.to_terminate.remove(id);
        }
        true
    }
}

/// `aws:///us-east-1a/i-0123…` → `i-0123…`.
pub fn instance_id(provider_id: &str) -> Option<&str> {
    provider_id
        .strip_prefix("aws://")?
        .rsplit('/')
        .next()
        .filter(|id| id.starts_with("i-"))
}

/// One pass. Returns when to look again while something is still in progress (a PDB may allow
/// the eviction later, EC2 may report the instance down later: neither writes to the store).
pub fn reconcile(st: &mut Store, config: &Config) -> Option<i64> {
    let mut waiting = false;
    for key in CLAIM_KEYS {
        waiting |= claims(st, config, key);
    }
    waiting |= nodes(st, config);
    waiting.then(|| now_secs() + 1)
}

fn deleting_with_finalizer(o: &Value) -> bool {
    o.pointer("/metadata/deletionTimestamp").is_some()
        && o.pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
}

fn str_at<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn nodes_resource(st: &Store) -> Resource {
    st.registry
        .find("", "v1", "nodes")
        .cloned()
        .expect("built-in resource")
}

fn log(config: &Config, msg: &str) {
    if config.log {
        eprintln!("termination controller: {msg}");
    }
}

/// Whether the instance behind `provider_id` is down (true without a cloud or an instance id).
fn instance_down(st: &Store, config: &Config, provider_id: &str) -> bool {
    match instance_id(provider_id) {
        Some(id) if config.ec2_endpoint.is_some() => st.instances.is_down(id),
        _ => true,
    }
}

/// `cloudProvider.Delete`: true once the instance is down, else asks the kubelet to terminate it.
fn terminate_instance(st: &mut Store, config: &Config, provider_id: &str) -> bool {
    if instance_down(st, config, provider_id) {
        return true;
    }
    if let Some(id) = instance_id(provider_id) {
        if st.instances.to_terminate.insert(id.to_string()) {
            log(config, &format!("terminating instance {id}"));
        }
    }
    false
}

/// Drops our finalizer from the stored object (it goes when no finalizer is left).
fn remove_finalizer(st: &mut Store, res: &Resource, name: &str, config: &Config) {
    let Some(old) = st.get(&res.key(), "", name).cloned() else {
        return;
    };
    let mut new = old.clone();
    if let Some(f) = new
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        f.retain(|x| x != FINALIZER);
    }
    log(config, &format!("{} {name}: finalizer removed", res.kind));
    let _ = api::commit(st, res, old, new, None, &Query::default());
}

/// Nodes a claim stands for: by `status.nodeName`, or by `status.providerID`.
fn claim_nodes(st: &Store, claim: &Value) -> Vec<Value> {
    let node_name = str_at(claim, "/status/nodeName");
    let provider_id = str_at(claim, "/status/providerID");
    st.list("/nodes", None)
        .filter(|n| {
            (!node_name.is_empty() && meta_str(n, "name") == node_name)
                || (!provider_id.is_empty() && str_at(n, "/spec/providerID") == provider_id)
        })
        .cloned()
        .collect()
}

/// Deleting NodeClaims or Machines (`key`). True while one is still waiting.
fn claims(st: &mut Store, config: &Config, key: &str) -> bool {
    let Some(res) = st.registry.by_key(key).cloned() else {
        return false;
    };
    let deleting: Vec<Value> = st
        .list(key, None)
        .filter(|c| deleting_with_finalizer(c))
        .cloned()
        .collect();
    let nodes = nodes_resource(st);
    let mut waiting = false;
    for claim in deleting {
        let name = meta_str(&claim, "name");
        let found = claim_nodes(st, &claim);
        if !found.is_empty() {
            // The Node's own finalizer (if any) drains it; the claim waits until it is gone.
            for n in found
                .iter()
                .filter(|n| n.pointer("/metadata/deletionTimestamp").is_none())
            {
                log(
                    config,
                    &format!("{} {name}: deleting node {}", res.kind, meta_str(n, "name")),
                );
                let _ = api::delete(st, &nodes, "", meta_str(n, "name"), &DeleteOpts::default());
            }
            waiting = true;
            continue;
        }
        if !terminate_instance(st, config, str_at(&claim, "/status/providerID")) {
            waiting = true;
            continue;
        }
        remove_finalizer(st, &res, name, config);
    }
    waiting
}

/// How this Karpenter generation keeps pods off a node it drains: a taint (v1, v1beta1), or
/// `None` for a cordon (v1alpha5).
fn disruption_taint(st: &Store) -> Option<Value> {
    if st
        .registry
        .find("karpenter.sh", "v1", "nodeclaims")
        .is_some()
    {
        Some(json!({"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}))
    } else if st
        .registry
        .find("karpenter.sh", "v1beta1", "nodeclaims")
        .is_some()
    {
        Some(
            json!({"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"}),
        )
    } else {
        None
    }
}

/// Deleting Nodes with the finalizer. True while one is still waiting.
fn nodes(st: &mut Store, config: &Config) -> bool {
    let deleting: Vec<Value> = st
        .list("/nodes", None)
        .filter(|n| deleting_with_finalizer(n))
        .cloned()
        .collect();
    if deleting.is_empty() {
        return false;
    }
    let taint = disruption_taint(st);
    let mut waiting = false;
    for node in deleting {
        waiting |= !terminate_node(st, config, &node, taint.as_ref());
    }
    waiting
}

/// Taint (or cordon), drain, terminate, release one Node. True when done.
fn terminate_node(st: &mut Store, config: &Config, node: &Value, taint: Option<&Value>) -> bool {
    let name = meta_str(node, "name").to_string();
    let provider_id = str_at(node, "/spec/providerID").to_string();
    delete_claims_of(st, config, node);
    // An instance EC2 reports gone took its pods with it: nothing to drain (§5.5 step 2).
    // Without a cloud there is nothing to report that, and the node is drained.
    let gone = config.ec2_endpoint.is_some()
        && instance_id(&provider_id).is_some_and(|id| st.instances.is_down(id));
    if !gone {
        keep_pods_off(st, config, node, taint);
        // The taint pods must tolerate to stay: the cordon's for v1alpha5.
        let unschedulable =
            json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"});
        if !drain(st, config, &name, taint.unwrap_or(&unschedulable)) {
            return false;
        }
        if !terminate_instance(st, config, &provider_id) {
            return false;
        }
    }
    let res = nodes_resource(st);
    remove_finalizer(st, &res, &name, config);
    true
}

/// A Node being terminated takes its NodeClaims/Machines with it.
fn delete_claims_of(st: &mut Store, config: &Config, node: &Value) {
    for key in CLAIM_KEYS {
        let Some(res) = st.registry.by_key(key).cloned() else {
            continue;
        };
        let names: Vec<String> = st
            .list(key, None)
            .filter(|c| c.pointer("/metadata/deletionTimestamp").is_none())
            .filter(|c| {
                claim_nodes(st, c)
                    .iter()
                    .any(|n| meta_str(n, "uid") == meta_str(node, "uid"))
            })
            .map(|c| meta_str(c, "name").to_string())
            .collect();
        for n in names {
            log(
                config,
                &format!("node {}: deleting {} {n}", meta_str(node, "name"), res.kind),
            );
            let _ = api::delete(st, &res, "", &n, &DeleteOpts::default());
        }
    }
}

/// Adds the disruption taint, or cordons, once.
fn keep_pods_off(st: &mut Store, config: &Config, node: &Value, taint: Option<&Value>) {
    let mut new = node.clone();
    match taint {
        Some(t) => {
            let same =
                |x: &Value| x.get("key") == t.get("key") && x.get("effect") == t.get("effect");
            let taints = super::util::obj_at(&mut new, &["spec"])
                .entry("taints")
                .or_insert_with(|| json!([]));
            let Some(list) = taints.as_array_mut() else {
                return;
            };
            if list.iter().any(same) {
                return;
            }
            list.push(t.clone());
        }
        None => {
            if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
                return;
            }
            new["spec"]["unschedulable"] = json!(true);
        }
    }
    log(
        config,
        &format!("node {}: tainted for disruption", meta_str(node, "name")),
    );
    st.replace("/nodes", new);
}

fn annotation_true(p: &Value, key: &str) -> bool {
    p.pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")))
        .and_then(Value::as_str)
        == Some("true")
}

fn is_critical(p: &Value) -> bool {
    matches!(
        str_at(p, "/spec/priorityClassName"),
        "system-cluster-critical" | "system-node-critical"
    )
}

/// Pods the drain neither evicts nor waits for.
fn ignored(p: &Value, taint: &Value, now: i64) -> bool {
    let terminal = matches!(str_at(p, "/status/phase"), "Succeeded" | "Failed");
    let mirror = p
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
        || p.pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|o| o["kind"] == "Node"));
    let daemon = controller_ref(p).is_some_and(|o| o["kind"] == "DaemonSet");
    let tolerant = p
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| tolerates(t, taint)));
    // Terminating for over a minute: Karpenter stops waiting for it.
    let stuck = p
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
        .is_some_and(|t| now > t + 60);
    terminal || mirror || daemon || tolerant || stuck
}

/// Evicts the node's pods, non-critical ones first. True when none is left to wait for.
fn drain(st: &mut Store, config: &Config, node: &str, taint: &Value) -> bool {
    let now = now_secs();
    let pods: Vec<Value> = st
        .list("/pods", None)
        .filter(|p| str_at(p, "/spec/nodeName") == node && !ignored(p, taint, now))
        .cloned()
        .collect();
    if pods.is_empty() {
        return true;
    }
    let (critical, normal): (Vec<Value>, Vec<Value>) = pods.into_iter().partition(is_critical);
    let tier = if normal.is_empty() { critical } else { normal };
    let pods_res = st
        .registry
        .find("", "v1", "pods")
        .cloned()
        .expect("built-in resource");
    let node_obj = st.get("/nodes", "", node).cloned().unwrap_or(Value::Null);
    for p in tier {
        // Already going: wait for the kubelet. Opted out of disruption: wait for the opt-out
        // to be lifted (or the pod to go by other means).
        if p.pointer("/metadata/deletionTimestamp").is_some()
            || annotation_true(&p, "karpenter.sh/do-not-disrupt")
            || annotation_true(&p, "karpenter.sh/do-not-evict")
        {
            continue;
        }
        let ns = meta_str(&p, "namespace");
        let name = meta_str(&p, "name");
        let body = json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": ns},
            "deleteOptions": {"preconditions": {"uid": meta_str(&p, "uid")}},
        });
        match api::evict(st, &pods_res, ns, name, body.to_string().as_bytes()) {
            Ok(_) => {
                log(config, &format!("node {node}: evicted pod {ns}/{name}"));
                emit_event(st, &p, "Normal", "Evicted", "Evicted pod", COMPONENT);
            }
            // A PDB says not now (429), or several PDBs match (500): try again later.
            Err(e) if e.code == 429 || e.code == 500 => {
                let why = e
                    .details
                    .as_ref()
                    .and_then(|d| d.pointer("/causes/0/message"))
                    .and_then(Value::as_str)
                    .unwrap_or(&e.message)
                    .to_string();
                let msg = format!("Failed to drain node, evicting pod {ns}/{name}: {why}");
                failed_draining(st, &node_obj, &msg);
            }
            // Gone, or replaced by another pod of the same name: nothing to evict.
            Err(_) => {}
        }
    }
    false
}

/// A `FailedDraining` warning on the node, once per distinct message: the drain retries every
/// second and a new event each time would flood `kubectl describe` (and keep the store dirty).
fn failed_draining(st: &mut Store, node: &Value, msg: &str) {
    let uid = meta_str(node, "uid");
    let seen = st.list("/events", Some("default")).any(|e| {
        e.pointer("/involvedObject/uid").and_then(Value::as_str) == Some(uid)
            && e["reason"] == "FailedDraining"
            && e["message"] == msg
    });
    if !seen {
        emit_event(st, node, "Warning", "FailedDraining", msg, COMPONENT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Store {
        let mut st = Store::new();
        api::seed(&mut st);
        st
    }

    fn create(st: &mut Store, plural: &str, ns: &str, obj: Value) {
        let group = if plural == "poddisruptionbudgets" {
            "policy"
        } else {
            ""
        };
        let res = st.registry.find(group, "v1", plural).cloned().unwrap();
        api::create(st, &res, ns, obj, &Query::default()).unwrap();
    }

    fn running_pod(name: &str, extra: Value) -> Value {
        let mut p = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "pause"}]},
        });
        super::super::patch::merge_patch(&mut p, &extra);
        p
    }

    fn pods(st: &Store) -> Vec<String> {
        st.list("/pods", Some("default"))
            .map(|p| meta_str(p, "name").to_string())
            .collect()
    }

    /// Reconciles until nothing changes (as the controller loop does).
    fn settle(st: &mut Store, config: &Config) {
        for _ in 0..20 {
            st.dirty = false;
            super::super::controllers::reconcile(st, config);
            if !st.dirty {
                break;
            }
        }
    }

    #[test]
    fn provider_ids() {
        assert_eq!(instance_id("aws:///us-east-1a/i-0abc"), Some("i-0abc"));
        assert_eq!(instance_id("kind://docker/n1"), None);
        assert_eq!(instance_id(""), None);
    }

    #[test]
    fn node_drain_order_skips_and_waits_without_a_cloud() {
        let config = Config::default();
        let mut st = cluster();
        create(
            &mut st,
            "nodes",
            "",
            json!({"metadata": {"name": "n1", "finalizers": [FINALIZER]},
                   "spec": {"providerID": "aws:///us-east-1a/i-1"},
                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}}),
        );
        create(&mut st, "pods", "default", running_pod("web", json!({})));
        create(
            &mut st,
            "pods",
            "default",
            running_pod(
                "dns",
                json!({"spec": {"priorityClassName": "system-cluster-critical"}}),
            ),
        );
        create(
            &mut st,
            "pods",
            "default",
            running_pod(
                "static",
                json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "abc"}}}),
            ),
        );
        create(
            &mut st,
            "pods",
            "default",
            running_pod(
                "pinned",
                json!({"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}}),
            ),
        );
        settle(&mut st, &config);
        let nodes = nodes_resource(&st);
        api::delete(&mut st, &nodes, "", "n1", &DeleteOpts::default()).unwrap();
        settle(&mut st, &config);
        // No NodeClaim CRD: a v1alpha5-style cordon. The critical pod waits for the pinned one.
        let n = st.get("/nodes", "", "n1").unwrap();
        assert_eq!(n["spec"]["unschedulable"], true);
        assert_eq!(pods(&st), ["dns", "pinned", "static"]);
        // Lifting the opt-out lets the critical tier go, then the node (the mirror pod with it).
        let pods_res = st.registry.find("", "v1", "pods").cloned().unwrap();
        let mut p = st.get("/pods", "default", "pinned").cloned().unwrap();
        p["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("false");
        api::update(
            &mut st,
            &pods_res,
            "default",
            "pinned",
            p,
            None,
            &Query::default(),
        )
        .unwrap();
        settle(&mut st, &config);
        assert!(st.get("/nodes", "", "n1").is_none(), "node released");
        assert!(pods(&st).is_empty(), "{:?}", pods(&st));
    }

    #[test]
    fn a_pdb_holds_the_drain_and_records_one_event() {
        let config = Config::default();
        let mut st = cluster();
        create(
            &mut st,
            "nodes",
            "",
            json!({"metadata": {"name": "n1", "finalizers": [FINALIZER]},
                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}}),
        );
        create(&mut st, "pods", "default", running_pod("web", json!({})));
        create(
            &mut st,
            "poddisruptionbudgets",
            "default",
            json!({"metadata": {"name": "web"}, "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}}),
        );
        settle(&mut st, &config);
        let nodes = nodes_resource(&st);
        api::delete(&mut st, &nodes, "", "n1", &DeleteOpts::default()).unwrap();
        for _ in 0..3 {
            settle(&mut st, &config);
        }
        assert!(st.get("/nodes", "", "n1").is_some());
        assert_eq!(pods(&st), ["web"]);
        let events: Vec<&Value> = st
            .list("/events", Some("default"))
            .filter(|e| e["reason"] == "FailedDraining")
            .collect();
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(
            events[0]["message"].as_str().unwrap().contains("web"),
            "{}",
            events[0]["message"]
        );
        let pdb = st
            .registry
            .find("policy", "v1", "poddisruptionbudgets")
            .cloned()
            .unwrap();
        api::delete(&mut st, &pdb, "default", "web", &DeleteOpts::default()).unwrap();
        settle(&mut st, &config);
        assert!(st.get("/nodes", "", "n1").is_none());
    }
}
