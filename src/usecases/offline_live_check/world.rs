//! One world from a seed: the consolidation fuzzer's cluster (`consolidate::fuzz_check::gen`,
//! every API generation, its `--catalog`), with what a real cluster adds — the API server's
//! defaults, the controllers' status (pools and classes Ready, the classes' subnets, the
//! NodeClaims' lifecycle) — and pending pods the scheduler marked unschedulable.

use serde_json::{json, Value};

use crate::testing::Rng;
use crate::usecases::consolidate::fuzz_check::gen::{self, Gen, ZONES};
use crate::usecases::consolidate::fuzz_check::manifests;

/// A world: its objects as the API server holds them (defaults and status in), the catalog
/// both sides size with, and its API generation.
#[derive(Debug, Clone)]
pub struct World {
    /// The objects, as stored.
    pub objects: Vec<Value>,
    /// The `--catalog` document.
    pub catalog: String,
    /// The generation of its Karpenter objects.
    pub gen: Gen,
    /// The consolidation fuzzer's `--feature-gates SpotToSpotConsolidation`.
    pub spot_to_spot: bool,
    /// Its `ReservedCapacity` gate.
    pub reserved_gate: bool,
}

/// The subnet every class selects (`subnetSelectorTerms: [{id: subnet-a}]`), in the first zone.
pub const SUBNET: (&str, &str, &str) = ("subnet-a", "us-east-1a", "use1-az1");

/// The world of `seed`.
pub fn make(seed: u64) -> World {
    let spec = gen::generate(&mut gen::Rng::new(seed));
    let mut objects = manifests::objects(&spec);
    // Another stream for what this harness adds: the fuzzer's worlds stay as they are.
    let mut rng = Rng::new(seed ^ 0x0FF1_1FE0);
    for i in 0..rng.below(4) {
        objects.push(pending_pod(&mut rng, i));
    }
    let objects = objects
        .into_iter()
        // The PriorityClass is neither exported nor read live (pods carry their priority).
        .filter(|o| o["kind"] != "PriorityClass")
        .map(|o| with_server_state(o, spec.gen))
        .collect();
    World {
        objects,
        catalog: manifests::catalog(&spec),
        gen: spec.gen,
        spot_to_spot: spec.spot_to_spot,
        reserved_gate: spec.reserved_gate,
    }
}

fn pending_pod(rng: &mut Rng, i: usize) -> Value {
    let cpu = 100 * (1 + rng.below(30));
    let mem = 128 * (1 + rng.below(24));
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pending-{i}"), "namespace": "default", "labels": {"app": "pending"},
                     "creationTimestamp": gen::time(gen::NOW - 60)},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": format!("{cpu}m"), "memory": format!("{mem}Mi")}}}]},
        // Marked by the scheduler: a pod it has not tried yet is pending offline only, as
        // documented (docs/spec.md §3, "whatever its status says"; [`super::tests`]).
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/3 nodes are available"}]}});
    if rng.below(4) == 0 {
        pod["spec"]["nodeSelector"] = json!({"topology.kubernetes.io/zone": ZONES[rng.below(3)]});
    }
    if rng.below(5) == 0 {
        pod["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
    }
    pod
}

/// What the API server and the controllers add to an applied object: the last-applied
/// annotation (of the object as written), the server's defaults, and status.
fn with_server_state(mut o: Value, gen: Gen) -> Value {
    let applied = serde_json::to_string(&without_status(&o)).unwrap();
    let meta = &mut o["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json!(applied);
    match o["kind"].as_str().unwrap_or_default() {
        "Pod" => pod_defaults(&mut o),
        "NodePool" | "Provisioner" => {
            o["status"] = json!({"conditions": ready(&["ValidationSucceeded", "NodeClassReady"]),
                "resources": {"cpu": "0", "memory": "0", "nodes": "0", "pods": "0"}});
        }
        "EC2NodeClass" | "AWSNodeTemplate" => {
            let (id, zone, zone_id) = SUBNET;
            o["status"] = json!({
                "subnets": [{"id": id, "zone": zone, "zoneID": zone_id}],
                "securityGroups": [{"id": "sg-a", "name": "nodes"}],
                "amis": [{"id": "ami-0abc", "name": "al2023-ami",
                          "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}],
                "instanceProfile": "KarpenterNodeRole-profile"});
            if gen != Gen::V1Alpha5 {
                o["status"]["conditions"] =
                    ready(&["AMIsReady", "SubnetsReady", "SecurityGroupsReady"]);
            }
        }
        "NodeClaim" | "Machine" => {
            let conditions = o["status"]["conditions"].as_array_mut().unwrap();
            for t in ["Launched", "Registered"] {
                conditions.push(json!({"type": t, "status": "True", "lastTransitionTime": gen::time(gen::NOW - 3600)}));
            }
            o["status"]["imageID"] = json!("ami-0abc");
        }
        "Node" => {
            o["status"]["nodeInfo"] = json!({"architecture": "amd64", "kubeletVersion": "v1.29.3-eks-ae9a62a",
                "operatingSystem": "linux", "containerRuntimeVersion": "containerd://1.7.11"});
            o["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"] = json!("0");
        }
        _ => {}
    }
    o
}

fn ready(others: &[&str]) -> Value {
    let at = gen::time(gen::NOW - 7200);
    let mut out: Vec<Value> = others
        .iter()
        .map(|t| json!({"type": t, "status": "True", "reason": t, "lastTransitionTime": at}))
        .collect();
    out.push(
        json!({"type": "Ready", "status": "True", "reason": "Ready", "lastTransitionTime": at}),
    );
    json!(out)
}

fn without_status(o: &Value) -> Value {
    let mut o = o.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("status");
    }
    o
}

/// A pod as the API server stores it: the service account's token volume, the default
/// tolerations (`DefaultTolerationSeconds`), the scheduler, priority, DNS and restart policy.
fn pod_defaults(o: &mut Value) {
    let spec = &mut o["spec"];
    for (k, v) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
        ("securityContext", json!({})),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("priority", json!(0)),
    ] {
        if spec.get(k).is_none() {
            spec[k] = v;
        }
    }
    if !spec["tolerations"].is_array() {
        spec["tolerations"] = json!([]);
    }
    let tolerations = spec["tolerations"].as_array_mut().unwrap();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        tolerations.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
    }
    spec["volumes"] = json!([{"name": "kube-api-access-x1", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]);
    for c in spec["containers"].as_array_mut().into_iter().flatten() {
        c["imagePullPolicy"] = json!("Always");
        c["terminationMessagePath"] = json!("/dev/termination-log");
        c["terminationMessagePolicy"] = json!("File");
        c["volumeMounts"] = json!([{"name": "kube-api-access-x1", "readOnly": true,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]);
    }
    o["status"]["qosClass"] = json!("Burstable");
}
