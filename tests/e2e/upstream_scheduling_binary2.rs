//! Part 2 of Karpenter's scheduling and provisioning suites through the binary (core v1.14.1
//! `pkg/controllers/provisioning/scheduling/suite_test.go`, `instance_selection_test.go`,
//! `pkg/controllers/provisioning/suite_test.go`): the Its part 1
//! (`upstream_scheduling_binary.rs`, whose helpers these share) did not replay. An It's earlier
//! rounds — what Karpenter launched before, its NodeClaims and Nodes, initialized or not, tainted,
//! terminating, with pods or DaemonSet pods bound — are written as the manifests a cluster would
//! hold, and the round under test is `provision --dry-run -f - -o json --catalog` on them.
//! docs/upstream-tests.md "Scheduling suites through the binary, part 2 (s21-bsched2)" maps each
//! It to its test.

use serde_json::{json, Value};

use crate::support::{merge, provision_json};
use crate::upstream_scheduling_binary::{
    any_capacity, both, class, cpu_mem, daemonset, plan, plan_on, pod, pod_affinity, pool, prov,
    req, required, sched, selector, sized, spread, Plan, ARCH, CAPACITY_TYPE, CPUS, HOSTNAME,
    INSTANCE_TYPE, SIZE, ZONE,
};

const NODEPOOL: &str = "karpenter.sh/nodepool";
const INITIALIZED: &str = "karpenter.sh/initialized";
const REGISTERED: &str = "karpenter.sh/registered";
const OS: &str = "kubernetes.io/os";

/// A type of the fake catalog (`tests/fixtures/s19-bsched/fake-catalog.yaml`): name, CPUs,
/// memory GiB, pods, arch.
struct FakeType {
    name: &'static str,
    cpu: u32,
    mem_gi: u32,
    pods: u32,
    arch: &'static str,
}

const SMALL: FakeType = FakeType {
    name: "small-instance-type",
    cpu: 2,
    mem_gi: 2,
    pods: 5,
    arch: "amd64",
};
const DEFAULT: FakeType = FakeType {
    name: "default-instance-type",
    cpu: 4,
    mem_gi: 4,
    pods: 5,
    arch: "amd64",
};
const ARM: FakeType = FakeType {
    name: "arm-instance-type",
    cpu: 16,
    mem_gi: 128,
    pods: 5,
    arch: "arm64",
};

impl FakeType {
    fn capacity(&self) -> Value {
        json!({"cpu": self.cpu.to_string(), "memory": format!("{}Gi", self.mem_gi),
               "pods": self.pods.to_string()})
    }

    /// Capacity less the fake's kube-reserved 100m / 10Mi.
    fn allocatable(&self) -> Value {
        json!({"cpu": format!("{}m", self.cpu * 1000 - 100),
               "memory": format!("{}Mi", self.mem_gi * 1024 - 10), "pods": self.pods.to_string()})
    }
}

/// What became of a NodeClaim Karpenter launched in an earlier round.
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    /// Launched, no Node yet (`ExpectProvisionedNoBinding`, `ExpectNodeClaimDeployedNoNode`).
    NoNode,
    /// Its Node registered, not initialized (`ExpectProvisioned`'s binding).
    Registered,
    /// Node and NodeClaim initialized (`ExpectMakeNodesInitialized`).
    Initialized,
}

/// The NodeClaim `name` of the pool `default` on `it` in `zone` (on-demand), and its Node unless
/// `stage` is `NoNode`; `node_patch` is merged into the Node (taints, labels, status), `claim_patch`
/// into the NodeClaim.
fn launched(
    name: &str,
    it: &FakeType,
    zone: &str,
    stage: Stage,
    node_patch: Value,
    claim_patch: Value,
) -> Vec<Value> {
    let provider_id = format!("aws:///{zone}/i-{name}");
    let labels = json!({NODEPOOL: "default", INSTANCE_TYPE: it.name, ZONE: zone,
        CAPACITY_TYPE: "on-demand", ARCH: it.arch, OS: "linux"});
    let mut conditions = vec![json!({"type": "Launched", "status": "True"})];
    if stage != Stage::NoNode {
        conditions.push(json!({"type": "Registered", "status": "True"}));
    }
    if stage == Stage::Initialized {
        conditions.push(json!({"type": "Initialized", "status": "True"}));
    }
    let mut claim = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [req(INSTANCE_TYPE, "In", &[it.name]), req(ZONE, "In", &[zone]),
                             req(CAPACITY_TYPE, "In", &["on-demand"])]},
        "status": {"providerID": provider_id, "capacity": it.capacity(),
            "allocatable": it.allocatable(), "conditions": conditions}});
    if stage == Stage::NoNode {
        merge(&mut claim, claim_patch);
        return vec![claim];
    }
    claim["status"]["nodeName"] = json!(name);
    merge(&mut claim, claim_patch);
    let mut node_labels = labels;
    node_labels[HOSTNAME] = json!(name);
    node_labels[REGISTERED] = json!("true");
    if stage == Stage::Initialized {
        node_labels[INITIALIZED] = json!("true");
    }
    let mut node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": node_labels},
        "spec": {"providerID": provider_id},
        "status": {"capacity": it.capacity(), "allocatable": it.allocatable(),
            "conditions": [{"type": "Ready", "status": "True"}]}});
    merge(&mut node, node_patch);
    vec![claim, node]
}

/// `launched` at `stage` with no patch.
fn plain(name: &str, it: &FakeType, zone: &str, stage: Stage) -> Vec<Value> {
    launched(name, it, zone, stage, json!({}), json!({}))
}

/// A Running pod bound to `node` requesting `requests`.
fn running(name: &str, node: &str, requests: Value, patch: Value) -> Value {
    sized(
        name,
        requests,
        both(
            json!({"spec": {"nodeName": node}, "status": {"phase": "Running"}}),
            patch,
        ),
    )
}

fn limits(cpu: &str) -> Value {
    json!({"spec": {"containers": [{"name": "app", "image": "i",
        "resources": {"limits": {"cpu": cpu}}}]}})
}

/// A pending pod whose only container has CPU limits `cpu` (requests default to them).
fn limited(name: &str, cpu: &str, patch: Value) -> Value {
    pod(name, both(limits(cpu), patch))
}

fn taint(key: &str, value: Option<&str>, effect: &str) -> Value {
    match value {
        Some(v) => json!({"key": key, "value": v, "effect": effect}),
        None => json!({"key": key, "effect": effect}),
    }
}

/// A pod patch: labelled `app: <app>`, required anti-affinity to those pods over `key`.
fn anti_affine(app: &str, key: &str) -> Value {
    both(
        json!({"metadata": {"labels": {"app": app}}}),
        pod_affinity("podAntiAffinity", json!({ "app": app }), key),
    )
}

/// The existing node `pod` was placed on, if any.
fn existing_of(p: &Plan, pod: &str) -> Option<String> {
    let name = format!("default/{pod}");
    p.json["existingNodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["pods"].as_array().unwrap().iter().any(|q| q == &name))
        .map(|n| n["name"].as_str().unwrap().to_string())
}

/// Plans `objects` with the scheduling suite's pool and checks that pod `second` got a new
/// NodeClaim, the only one, rather than an existing node.
fn assert_second_gets_a_new_node(objects: Vec<Value>) {
    let p = sched_with(objects);
    p.assert_pending(&[]);
    assert_eq!(existing_of(&p, "second"), None, "{:#}", p.json);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}

/// Plans `objects` with the scheduling suite's pool and checks that pod `second` went to the
/// existing node `n1` and nothing launched.
fn assert_second_joins_n1(objects: Vec<Value>) {
    let p = sched_with(objects);
    p.assert_pending(&[]);
    assert_eq!(
        existing_of(&p, "second").as_deref(),
        Some("n1"),
        "{:#}",
        p.json
    );
    assert!(p.claims().is_empty(), "{:#}", p.json);
}

/// The scheduling suite's pool and `objects`.
fn sched_with(objects: Vec<Value>) -> Plan {
    sched(json!({}), objects)
}

// ---- scheduling/suite_test.go › In-Flight Nodes ----

/// "should not launch a second node if there is an in-flight node that can support the pod",
/// "… (node selectors)" (the node in test-zone-2 takes a pod of zones 1–2, not one of 1–3),
/// "should launch a second node if a pod won't fit on the existingNodes node" (1001m bound,
/// then 1 CPU on the 2-CPU type), "… isn't compatible with the existingNodes node (node
/// selector)" (arm64).
/// Upstream It: "should launch a second node if a pod isn't compatible with the existingNodes node (node selector)".
#[test]
fn in_flight_nodes_take_what_fits_and_matches() {
    let mut objects = plain("n1", &SMALL, "test-zone-2", Stage::Registered);
    objects.push(running("first", "n1", json!({"cpu": "10m"}), json!({})));
    objects.extend([
        limited("fits", "10m", json!({})),
        limited(
            "zones-1-2",
            "10m",
            required(vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])]),
        ),
        limited(
            "zones-1-3",
            "10m",
            required(vec![req(ZONE, "In", &["test-zone-1", "test-zone-3"])]),
        ),
        pod("arm", selector(&[(ARCH, "arm64")])),
    ]);
    let p = sched_with(objects);
    p.assert_pending(&[]);
    assert_eq!(
        existing_of(&p, "fits").as_deref(),
        Some("n1"),
        "{:#}",
        p.json
    );
    assert_eq!(existing_of(&p, "zones-1-2").as_deref(), Some("n1"));
    assert_eq!(existing_of(&p, "zones-1-3"), None);
    assert_eq!(existing_of(&p, "arm"), None);
    assert_eq!(p.label("arm", ARCH), Some("arm64"));
    // Won't fit: 1001m is bound on the 2-CPU type (1900m allocatable), a 1-CPU pod opens a node.
    let mut objects = plain("n1", &SMALL, "test-zone-1", Stage::Registered);
    objects.push(running("first", "n1", json!({"cpu": "1001m"}), json!({})));
    objects.push(limited("second", "1", json!({})));
    assert_second_gets_a_new_node(objects);
}

/// "should launch a second node if an in-flight node is terminating": the NodeClaim and Node
/// carry a `deletionTimestamp`, so the pod gets a new NodeClaim.
#[test]
fn a_terminating_in_flight_node_takes_no_pod() {
    let gone = json!({"metadata": {"deletionTimestamp": "2026-12-01T00:00:00Z",
        "finalizers": ["karpenter.sh/termination"]}});
    let mut objects = launched(
        "n1",
        &SMALL,
        "test-zone-1",
        Stage::Registered,
        gone.clone(),
        gone,
    );
    objects.push(limited("second", "10m", json!({})));
    assert_second_gets_a_new_node(objects);
}

/// "should not launch a second node if there is an in-flight node that can support the pod
/// (#2011)" and No Pre-Binding "should not bind pods to nodes": a NodeClaim without a Node yet
/// takes the pod; no second NodeClaim.
#[test]
fn a_nodeclaim_without_a_node_takes_the_pod() {
    let mut objects = plain("c1", &SMALL, "test-zone-1", Stage::NoNode);
    objects.push(limited("second", "10m", json!({})));
    let p = sched_with(objects);
    p.assert_pending(&[]);
    assert!(p.claims().is_empty(), "{:#}", p.json);
    assert_eq!(existing_of(&p, "second").as_deref(), Some("c1"));
}

/// In-Flight Nodes › Topology "should balance pods across zones with in-flight nodes" (round 1's
/// 1/1/2 on three in-flight nodes; 5 more pods go 3/3/3 with no new node) and "… across
/// hostnames …" (4 in-flight nodes with 1 pod each; 5 more pods get 5 new nodes).
/// Upstream It: "should balance pods across hostnames with in-flight nodes".
#[test]
fn in_flight_nodes_count_in_spreads() {
    let labels = json!({"test": "test"});
    let spread_pod = |name: &str, key: &str| {
        pod(
            name,
            json!({"metadata": {"labels": labels},
                "spec": {"topologySpreadConstraints": [spread(key, 1)]}}),
        )
    };
    // In-flight nodes `(zone, matching pods bound)`, then 5 pending pods spread over `key`.
    let world = |nodes: &[(&str, usize)], key: &str| {
        let mut objects = Vec::new();
        for (i, (zone, bound)) in nodes.iter().enumerate() {
            let node = format!("n{i}");
            objects.extend(plain(&node, &DEFAULT, zone, Stage::Registered));
            for j in 0..*bound {
                let old = format!("old-{i}-{j}");
                let patch = json!({"metadata": {"labels": labels}});
                objects.push(running(&old, &node, json!({}), patch));
            }
        }
        for i in 0..5 {
            objects.push(spread_pod(&format!("p{i}"), key));
        }
        sched_with(objects)
    };
    let p = world(
        &[("test-zone-1", 1), ("test-zone-2", 1), ("test-zone-3", 2)],
        ZONE,
    );
    p.assert_pending(&[]);
    assert!(p.claims().is_empty(), "{:#}", p.json);
    let mut per_node: Vec<usize> = p.json["existingNodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["pods"].as_array().unwrap().len())
        .collect();
    per_node.sort_unstable();
    // 1 + 2, 1 + 2, 2 + 1 → 3/3/3.
    assert_eq!(per_node, vec![1, 2, 2], "{:#}", p.json);

    let p = world(&[("test-zone-1", 1); 4], HOSTNAME);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 5, "{:#}", p.json);
    assert!(p
        .claims()
        .iter()
        .all(|c| c["pods"].as_array().unwrap().len() == 1));
}

// ---- In-Flight Nodes › Taints ----

/// "should assume pod will schedule to a tainted node with no taints" (an uninitialized node
/// with no taints), "… with ephemeral taint node.kubernetes.io/not-ready:NoExecute when the node
/// is uninitialized" (both halves: uninitialized → the node, initialized → a new NodeClaim),
/// "should not assume pod will schedule to a tainted node" (initialized, `foo.com/taint`),
/// "… with a custom startup taint" (the pool's startup taint and not-ready on an uninitialized
/// node) and "should not assume pod will schedule to a node with startup taints after
/// initialization".
#[test]
fn in_flight_taints_from_the_manifest() {
    let not_ready_exec = taint("node.kubernetes.io/not-ready", None, "NoExecute");
    let custom = taint("foo.com/taint", Some("tainted"), "NoSchedule");
    let startup = taint("ignore-me", Some("nothing-to-see-here"), "NoSchedule");
    let cases: Vec<(&str, Stage, Value, Value, bool)> = vec![
        ("no taints", Stage::Registered, json!([]), json!({}), true),
        (
            "not-ready NoExecute, uninitialized",
            Stage::Registered,
            json!([not_ready_exec.clone()]),
            json!({}),
            true,
        ),
        (
            "not-ready NoExecute, initialized",
            Stage::Initialized,
            json!([not_ready_exec]),
            json!({}),
            false,
        ),
        (
            "tainted, initialized",
            Stage::Initialized,
            json!([custom.clone()]),
            json!({}),
            false,
        ),
        (
            "custom startup taint, uninitialized",
            Stage::Registered,
            json!([
                custom.clone(),
                taint("node.kubernetes.io/not-ready", None, "NoSchedule")
            ]),
            json!({"spec": {"startupTaints": [custom]}}),
            true,
        ),
        (
            "startup taint after initialization",
            Stage::Initialized,
            json!([startup.clone()]),
            json!({"spec": {"startupTaints": [startup]}}),
            false,
        ),
    ];
    for (what, stage, node_taints, template, on_node) in cases {
        let mut objects = vec![pool("default", vec![any_capacity()], template.clone())];
        let claim_patch = if template["spec"]["startupTaints"].is_array() {
            json!({"spec": {"startupTaints": template["spec"]["startupTaints"]}})
        } else {
            json!({})
        };
        objects.extend(launched(
            "n1",
            &ARM,
            "test-zone-1",
            stage,
            json!({"spec": {"taints": node_taints}}),
            claim_patch,
        ));
        objects.push(pod("second", json!({})));
        let p = plan(objects);
        p.assert_pending(&[]);
        assert_eq!(
            existing_of(&p, "second").is_some(),
            on_node,
            "{what}: {:#}",
            p.json
        );
    }
}

// ---- In-Flight Nodes › Daemonsets ----

/// "should track daemonset usage separately so we know how many DS resources are remaining to
/// be scheduled": the 16-CPU node (15.9 allocatable) runs the DaemonSet's pod (1 CPU / 2Gi), so
/// nothing of the DaemonSet is left to reserve and a 14.9-CPU pod fits it. "should handle
/// unexpected daemonset pods binding to the node": a DaemonSet selecting `my-node-label`,
/// which appeared on the node, runs its pod there (1 CPU); a 15.5-CPU pod does not fit what is
/// left and gets a new node.
/// Upstream It: "should handle unexpected daemonset pods binding to the node".
#[test]
fn in_flight_daemonset_pods_are_counted_once() {
    let ds_owner = |ds: &str| {
        json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
            "name": ds, "uid": format!("uid-{ds}"), "controller": true}]}})
    };
    let ds = daemonset("ds", cpu_mem("1", "1Gi"), json!({}));
    let mut objects = vec![ds];
    objects.extend(plain("n1", &ARM, "test-zone-1", Stage::Registered));
    objects.push(running("ds-pod", "n1", cpu_mem("1", "2Gi"), ds_owner("ds")));
    objects.push(limited("second", "14.9", json!({})));
    assert_second_joins_n1(objects);

    let ds1 = daemonset(
        "ds1",
        cpu_mem("1", "1Gi"),
        json!({"nodeSelector": {"my-node-label": "value"}}),
    );
    let ds2 = daemonset("ds2", json!({"cpu": "1m"}), json!({}));
    let mut objects = vec![ds1, ds2];
    objects.extend(launched(
        "n1",
        &ARM,
        "test-zone-1",
        Stage::Registered,
        json!({"metadata": {"labels": {"my-node-label": "value"}}}),
        json!({}),
    ));
    objects.push(running(
        "ds-pod",
        "n1",
        cpu_mem("1", "2Gi"),
        both(
            ds_owner("ds1"),
            json!({"spec": {"nodeSelector": {"my-node-label": "value"}}}),
        ),
    ));
    objects.push(limited("second", "15.5", json!({})));
    assert_second_gets_a_new_node(objects);
}

/// "should order initialized nodes for scheduling uninitialized nodes when all other nodes are
/// inflight" (NodeClaims without Nodes and one initialized node) and Existing Nodes "should
/// order initialized nodes for scheduling uninitialized nodes" (registered, uninitialized
/// nodes and one initialized): the pod goes to the initialized node. 30 in place of 100.
#[test]
fn the_initialized_node_is_tried_first() {
    for others in [Stage::NoNode, Stage::Registered] {
        for elem in [0, 17, 29] {
            let mut objects = Vec::new();
            for i in 0..30 {
                let stage = if i == elem {
                    Stage::Initialized
                } else {
                    others
                };
                objects.extend(plain(&format!("n{i:02}"), &DEFAULT, "test-zone-1", stage));
            }
            objects.push(pod("p", json!({})));
            let p = sched_with(objects);
            p.assert_pending(&[]);
            assert_eq!(
                existing_of(&p, "p"),
                Some(format!("n{elem:02}")),
                "{:#}",
                p.json
            );
        }
    }
}

/// In-Flight Nodes "should schedule pods with the same host port to different nodes".
#[test]
fn pods_with_the_same_host_port_get_different_nodes() {
    let port = json!({"spec": {"containers": [{"name": "app", "image": "i",
        "ports": [{"containerPort": 8080, "hostPort": 8080}]}]}});
    let p = sched_with(vec![pod("a", port.clone()), pod("b", port)]);
    p.assert_pending(&[]);
    assert_ne!(p.claim("a")["name"], p.claim("b")["name"], "{:#}", p.json);
}

/// Existing Nodes "should consider a pod incompatible with an existing node but compatible with
/// NodePool": a pod requiring test-zone-1 does not fit a node without that zone; with no
/// NodePool it stays pending, with one it gets a NodeClaim.
#[test]
fn a_pod_the_existing_node_refuses_gets_a_nodeclaim() {
    let objects = |with_pool: bool| {
        let mut o = Vec::new();
        if with_pool {
            o.push(pool("default", vec![any_capacity()], json!({})));
        }
        let mut n = plain("n1", &ARM, "test-zone-2", Stage::Initialized);
        o.append(&mut n);
        o.push(pod("p", required(vec![req(ZONE, "In", &["test-zone-1"])])));
        o
    };
    let p = plan(objects(false));
    p.assert_pending(&["p"]);
    let p = plan(objects(true));
    p.assert_pending(&[]);
    assert_eq!(p.label("p", ZONE), Some("test-zone-1"));
}

/// Existing Nodes › Daemonsets "should not subtract daemonset overhead that is not strictly
/// compatible with an existing node": a 100-CPU DaemonSet requiring test-zone-1 does not reserve
/// room on a node in test-zone-2, which takes the 1-CPU pod; a second pod stays pending (the
/// DaemonSet fills every new node).
#[test]
fn an_incompatible_daemonset_reserves_nothing_on_an_existing_node() {
    let ds = daemonset(
        "ds",
        cpu_mem("100", "100Gi"),
        required(vec![req(ZONE, "In", &["test-zone-1"])])["spec"].clone(),
    );
    let mut objects = vec![ds.clone()];
    objects.extend(launched(
        "n1",
        &SMALL,
        "test-zone-2",
        Stage::Initialized,
        json!({"status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}}),
        json!({"status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}}),
    ));
    let mut first = objects.clone();
    first.push(sized("p", cpu_mem("1", "1Gi"), json!({})));
    let p = sched_with(first);
    p.assert_pending(&[]);
    assert_eq!(existing_of(&p, "p").as_deref(), Some("n1"), "{:#}", p.json);
    objects.push(running("p", "n1", cpu_mem("1", "1Gi"), json!({})));
    objects.push(sized("p2", cpu_mem("1", "1Gi"), json!({})));
    let p = sched_with(objects);
    p.assert_pending(&["p2"]);
}

// ---- scheduling/suite_test.go › Instance Type Compatibility, Binpacking ----

/// Instance Type Compatibility "should exclude instance types that are not supported by the pod
/// constraints (node affinity/operating system)" (`kubernetes.io/os In [ios]` on an amd64 pool:
/// pending), "should launch pods with resources that aren't on any single instance type on
/// different instances" (the fake's vendor-a and vendor-b GPU types: two nodes), "should fail
/// to schedule a pod with resources requests that aren't on a single instance type" (both
/// GPUs: pending).
#[test]
fn os_and_resources_no_single_type_has() {
    let gpu = |name: &str, resources: Value| {
        pod(
            name,
            json!({"spec": {"containers": [{"name": "app", "image": "i",
                "resources": {"limits": resources}}]}}),
        )
    };
    let mut objects = vec![pool(
        "default",
        vec![req(ARCH, "In", &["amd64"])],
        json!({}),
    )];
    objects.extend([
        pod("ios", required(vec![req(OS, "In", &["ios"])])),
        gpu("a", json!({"fake.com/vendor-a": "1"})),
        gpu("b", json!({"fake.com/vendor-b": "1"})),
        gpu(
            "ab",
            json!({"fake.com/vendor-a": "1", "fake.com/vendor-b": "1"}),
        ),
    ]);
    let p = plan(objects);
    p.assert_pending(&["ios", "ab"]);
    let types = [p.label("a", INSTANCE_TYPE), p.label("b", INSTANCE_TYPE)];
    let want = ["gpu-vendor-instance-type", "gpu-vendor-b-instance-type"];
    assert_eq!(types, want.map(Some), "{:#}", p.json);
}

/// The fake cloud provider's five offerings of each type (`fake/cloudprovider.go`
/// `GetInstanceTypes`): spot in test-zone-1/2, on-demand in test-zone-1/2/3, as (zone, capacity
/// type).
pub(crate) const FAKE_OFFERINGS: [(&str, &str); 5] = [
    ("test-zone-1", "spot"),
    ("test-zone-2", "spot"),
    ("test-zone-1", "on-demand"),
    ("test-zone-2", "on-demand"),
    ("test-zone-3", "on-demand"),
];

/// [`FAKE_OFFERINGS`] at `price`, as catalog lines.
fn fake_offerings(price: f64) -> String {
    FAKE_OFFERINGS
        .iter()
        .map(|(zone, ct)| format!("  - {{zone: {zone}, capacityType: {ct}, price: {price}}}\n"))
        .collect()
}

/// `fake.InstanceTypes(5)`: fake-it-0…4 with i+1 CPUs, 2(i+1) GiB, 10(i+1) pods; fake-it-4 (5
/// CPUs, 10Gi) is the only `large` one and the only one with the fake's optional `special`
/// label (the fake's other types have `special DoesNotExist`), played by
/// `karpenter.k8s.aws/instance-gpu-count`: a `--catalog` type without it gets `DoesNotExist`
/// as an AWS type does (a well-known key a catalog type leaves out otherwise stays undefined,
/// which admits `Exists`, as upstream's `Compatible` does for a key the type does not define).
/// Written to `file` (each test its own: tests run in parallel).
fn five_types_catalog(file: &str) -> std::path::PathBuf {
    let mut text = String::from("instanceTypes:\n");
    for i in 0..5u32 {
        let (cpu, mem) = (i + 1, 2 * (i + 1));
        let price = 0.1 * f64::from(cpu) + 0.1 * f64::from(mem) * 1_073_741_824.0 / 1e9;
        let (size, extra) = if i == 4 {
            ("large", ", karpenter.k8s.aws/instance-gpu-count: \"1\"")
        } else {
            ("small", "")
        };
        text.push_str(&format!(
            "- name: fake-it-{i}\n  capacity: {{cpu: \"{cpu}\", memory: {mem}Gi, pods: \"{}\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: amd64, kubernetes.io/os: linux, \
             {SIZE}: {size}, {CPUS}: \"{cpu}\"{extra}}}\n  offerings:\n",
            10 * (i + 1)
        ));
        text.push_str(&fake_offerings(price));
    }
    crate::support::write_temp(file, text.as_bytes())
}

/// Instance Type Compatibility › Provider Specific Labels (4): "should filter instance types
/// that match labels" (large → fake-it-4, small → fake-it-0), "should not schedule with
/// incompatible labels", "should schedule optional labels" (Exists → fake-it-4), "should
/// schedule without optional labels if disallowed" (DoesNotExist); Binpacking "should pack
/// nodes tightly" (4.5 CPUs and 1 CPU get different types).
#[test]
fn provider_labels_and_tight_packing_on_five_types() {
    let catalog = five_types_catalog("five-types-labels.yaml");
    let special = "karpenter.k8s.aws/instance-gpu-count";
    let mut objects = vec![pool("default", vec![any_capacity()], json!({}))];
    objects.extend([
        pod("large", selector(&[(SIZE, "large")])),
        pod("small", selector(&[(SIZE, "small")])),
        pod(
            "large-it0",
            selector(&[(SIZE, "large"), (INSTANCE_TYPE, "fake-it-0")]),
        ),
        pod(
            "small-it4",
            selector(&[(SIZE, "small"), (INSTANCE_TYPE, "fake-it-4")]),
        ),
        pod("optional", required(vec![req(special, "Exists", &[])])),
        pod("without", required(vec![req(special, "DoesNotExist", &[])])),
    ]);
    let p = plan_on(&catalog, objects);
    p.assert_pending(&["large-it0", "small-it4"]);
    assert_eq!(
        p.label("large", INSTANCE_TYPE),
        Some("fake-it-4"),
        "{:#}",
        p.json
    );
    assert_eq!(p.label("small", INSTANCE_TYPE), Some("fake-it-0"));
    assert_eq!(p.label("optional", INSTANCE_TYPE), Some("fake-it-4"));
    assert!(p.claim("optional")["labels"][special].is_string());
    assert!(
        p.claim("without")["labels"].get(special).is_none(),
        "{:#}",
        p.json
    );

    let p = plan_on(
        &catalog,
        vec![
            pool("default", vec![any_capacity()], json!({})),
            sized("big", json!({"cpu": "4.5"}), json!({})),
            sized("one", json!({"cpu": "1"}), json!({})),
        ],
    );
    p.assert_pending(&[]);
    assert_ne!(p.claim("big")["name"], p.claim("one")["name"]);
    assert_ne!(
        p.label("big", INSTANCE_TYPE),
        p.label("one", INSTANCE_TYPE),
        "{:#}",
        p.json
    );
}

/// Binpacking "should select for valid instance types, regardless of price": medium (2 CPU,
/// $3), small (1 CPU, $2), large (4 CPU, $1), all on-demand in test-zone-1a → large launches
/// and all three are options.
#[test]
fn every_valid_type_is_an_option_and_the_cheapest_launches() {
    let mut text = String::from("instanceTypes:\n");
    for (name, cpu, price) in [("medium", 2, 3.0), ("small", 1, 2.0), ("large", 4, 1.0)] {
        text.push_str(&format!(
            "- name: {name}\n  capacity: {{cpu: \"{cpu}\", memory: {cpu}Gi, pods: \"110\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n  \
             offerings:\n  - {{zone: test-zone-1a, capacityType: on-demand, price: {price}}}\n"
        ));
    }
    let catalog = crate::support::write_temp("regardless-of-price.yaml", text.as_bytes());
    let p = plan_on(
        &catalog,
        vec![
            pool("default", vec![any_capacity()], json!({})),
            pod(
                "p",
                json!({"spec": {"containers": [{"name": "app", "image": "i",
                    "resources": {"limits": {"cpu": "1m", "memory": "1Mi"}}}]}}),
            ),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("p", INSTANCE_TYPE), Some("large"), "{:#}", p.json);
    let mut options: Vec<&str> = p.claim("p")["instanceTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().or_else(|| t.as_str()).unwrap())
        .collect();
    options.sort_unstable();
    assert_eq!(options, ["large", "medium", "small"], "{:#}", p.json);
}

// ---- scheduling/suite_test.go › NodePool requirements instance filtering ----

/// The four Its: an instance type that does not exist (a 32 CPU / 256Gi pod), an arch that
/// does not exist (three pods), `arch In [amd64]` and `arch In [arm64]` together, zones that do
/// not exist → every pod pending with "nodepool requirements filtered out all available
/// instance types".
/// Upstream It: "should return appropriate pod error when no available instance types exist".
/// Upstream It: "should handle multiple pods when requirements filter out all instance types".
/// Upstream It: "should handle conflicting requirements that eliminate all instance types".
/// Upstream It: "should handle zone requirements that filter out all instance types".
#[test]
fn nodepool_requirements_that_filter_out_every_type() {
    let cases: Vec<(&str, Vec<Value>, usize)> = vec![
        (
            "instance type",
            vec![req(INSTANCE_TYPE, "In", &["non-existent-instance-type"])],
            1,
        ),
        ("arch", vec![req(ARCH, "In", &["non-existent-arch"])], 3),
        (
            "conflicting arch",
            vec![req(ARCH, "In", &["amd64"]), req(ARCH, "In", &["arm64"])],
            1,
        ),
        (
            "zones",
            vec![req(
                ZONE,
                "In",
                &["non-existent-zone-1", "non-existent-zone-2"],
            )],
            1,
        ),
    ];
    for (what, extra, n) in cases {
        let mut reqs = vec![any_capacity()];
        reqs.extend(extra);
        let mut objects = vec![pool("default", reqs, json!({}))];
        let names: Vec<String> = (0..n).map(|i| format!("pod-{i}")).collect();
        for name in &names {
            objects.push(sized(name, cpu_mem("32", "256Gi"), json!({})));
        }
        let p = plan(objects);
        let want: Vec<&str> = names.iter().map(String::as_str).collect();
        p.assert_pending(&want);
        // Upstream's error text is "nodepool requirements filtered out all available instance
        // types"; ours names the pool and its requirements under the same code.
        for u in p.json["unschedulable"].as_array().unwrap() {
            assert_eq!(
                u["reasonCode"], "NodePoolHasNoInstanceTypes",
                "{what}: {:#}",
                p.json
            );
        }
    }
}

// ---- provisioning/suite_test.go ----

/// "should ignore NodePools that are deleting" and "should mark pod as unschedulable if there
/// are no valid nodepools": the only pool has a `deletionTimestamp`. StaticNodePool "should not
/// create NodeClaims for StaticNodePool" (`replicas: 2`) and "should still provision dynamic
/// NodeClaims when there are both Static and Dynamic NodePools" (`replicas: 1` and a dynamic
/// pool): no NodeClaim is opened from a static pool for the pod — **differs, left** (design,
/// docs/karpenter.md §6.11): a plan is the static controller's replicas, then the provisioner
/// with those as in-flight nodes, so the pod is placed on replica `static-1`; upstream's Its run
/// the provisioner alone (no static controller), leaving the pod pending / on a dynamic node.
/// Upstream It: "should mark pod as unschedulable if there are no valid nodepools".
#[test]
fn deleting_and_static_pools_take_no_pod() {
    let deleting = json!({"metadata": {"deletionTimestamp": "2026-12-01T00:00:00Z",
        "finalizers": ["karpenter.sh/termination"]}});
    let mut gone = pool("default", vec![], json!({}));
    merge(&mut gone, deleting);
    let p = plan(vec![gone, pod("p", json!({}))]);
    p.assert_pending(&["p"]);
    assert!(p.claims().is_empty(), "{:#}", p.json);

    let fixed = |replicas: u32| {
        let mut f = pool("static", vec![], json!({}));
        f["spec"]["replicas"] = json!(replicas);
        f["spec"]["limits"] = json!({"nodes": "10"});
        f
    };
    let p = plan(vec![fixed(2), pod("p", json!({}))]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 2, "the replicas only: {:#}", p.json);
    assert_eq!(p.claim("p")["name"], "static-1");
    let p = plan(vec![
        fixed(1),
        pool("default", vec![], json!({})),
        pod("p", json!({})),
    ]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(p.label("p", NODEPOOL), Some("static"));
}

/// Resource Limits: "should not schedule when limits are exceeded" (a NodeClaim of the pool
/// with 100 CPUs against `cpu: 20`), "should not schedule to a nodepool after a scheduling round
/// if limits would be exceeded" (a 2-CPU node launched under `cpu: 2`: the next 1.75-CPU pod
/// stays pending), "should not schedule if limits would be exceeded (node)" (`nodes: 2`, two
/// anti-affine pods on two nodes: the third stays pending).
#[test]
fn limits_count_what_the_pool_already_launched() {
    let limited = |limits: Value| pool("default", vec![], json!({"pool": {"limits": limits}}));
    let mut big = launched(
        "c1",
        &ARM,
        "test-zone-1",
        Stage::NoNode,
        json!({}),
        // `cluster.UpdateNodeClaim` of a NodeClaim whose status has capacity only: nothing
        // allocatable, so it takes no pod itself.
        json!({"status": {"capacity": {"cpu": "100"}, "allocatable": null}}),
    );
    big.insert(0, limited(json!({"cpu": "20"})));
    big.push(pod("p", json!({})));
    let p = plan(big);
    p.assert_pending(&["p"]);

    let mut round2 = vec![limited(json!({"cpu": "2"}))];
    round2.extend(plain("n1", &SMALL, "test-zone-1", Stage::Registered));
    round2.push(running("first", "n1", json!({"cpu": "1.75"}), json!({})));
    round2.push(sized("second", json!({"cpu": "1.75"}), json!({})));
    let p = plan(round2);
    p.assert_pending(&["second"]);

    let anti = anti_affine("foo", HOSTNAME);
    let mut objects = vec![limited(json!({"nodes": "2"}))];
    for i in 0..2 {
        let name = format!("n{i}");
        objects.extend(plain(&name, &SMALL, "test-zone-1", Stage::Registered));
        objects.push(running(
            &format!("old-{i}"),
            &name,
            json!({"cpu": "1.5"}),
            anti.clone(),
        ));
    }
    objects.push(sized("third", json!({"cpu": "1.5"}), anti));
    let p = plan(objects);
    p.assert_pending(&["third"]);
}

/// Taints "should schedule pods that tolerate taints": `nvidia.com/gpu=true:NoSchedule` on the
/// pool, tolerated by Equal, Exists with effect, Exists without effect, and an empty-key Exists.
#[test]
fn every_toleration_form_tolerates_the_pools_taint() {
    let gpu_taint =
        json!({"spec": {"taints": [taint("nvidia.com/gpu", Some("true"), "NoSchedule")]}});
    let tolerating =
        |name: &str, toleration: Value| pod(name, json!({"spec": {"tolerations": [toleration]}}));
    let p = prov(
        gpu_taint,
        vec![
            tolerating(
                "equal",
                json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}),
            ),
            tolerating(
                "exists-effect",
                json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}),
            ),
            tolerating(
                "exists",
                json!({"key": "nvidia.com/gpu", "operator": "Exists"}),
            ),
            tolerating("everything", json!({"operator": "Exists"})),
            pod("intolerant", json!({})),
        ],
    );
    p.assert_pending(&["intolerant"]);
}

/// The requirements of a planned NodeClaim named `key`.
fn requirement<'a>(claim: &'a Value, key: &str) -> Option<&'a Value> {
    claim["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
}

fn values(r: Option<&Value>) -> Vec<String> {
    let mut v: Vec<String> = r.map_or(vec![], |r| {
        r["values"].as_array().map_or(vec![], |a| {
            a.iter().map(|x| x.as_str().unwrap().to_string()).collect()
        })
    });
    v.sort();
    v
}

/// NodeClaim Creation: "should create a nodeclaim request with expected requirements" (every
/// type of the catalog, the pool's name), "… with additional expected requirements" (two custom
/// keys), "… restricting instance types on architecture" (arm64 → the arm type), "… based on pod
/// resource requests" (vendor-a → its GPU type), "… propagating the nodeClass reference".
/// Upstream It: "should create a nodeclaim request with additional expected requirements".
/// Upstream It: "should create a nodeclaim request restricting instance types on architecture".
/// Upstream It: "should create a nodeclaim request restricting instance types based on pod resource requests".
/// Upstream It: "should create a nodeclaim request propagating the nodeClass reference".
#[test]
fn nodeclaim_requirements_from_the_manifest() {
    let p = prov(json!({}), vec![pod("p", json!({}))]);
    let c = p.claim("p");
    assert_eq!(
        values(requirement(c, INSTANCE_TYPE)),
        [
            "arm-instance-type",
            "default-instance-type",
            "gpu-vendor-b-instance-type",
            "gpu-vendor-instance-type",
            "single-pod-instance-type",
            "small-instance-type"
        ],
        "{:#}",
        p.json
    );
    assert_eq!(values(requirement(c, NODEPOOL)), ["default"]);
    assert_eq!(c["nodeClass"], "default");

    let custom = vec![
        req("custom-requirement-key", "In", &["value"]),
        req("custom-requirement-key2", "In", &["value"]),
    ];
    let mut objects = vec![pool("default", custom, json!({}))];
    objects.push(pod("p", json!({})));
    let p = plan(objects);
    let c = p.claim("p");
    assert_eq!(values(requirement(c, "custom-requirement-key")), ["value"]);
    assert_eq!(values(requirement(c, "custom-requirement-key2")), ["value"]);
    assert_eq!(values(requirement(c, INSTANCE_TYPE)).len(), 6);

    let p = plan(vec![
        pool("default", vec![req(ARCH, "In", &["arm64"])], json!({})),
        pod("p", json!({})),
    ]);
    let c = p.claim("p");
    assert_eq!(values(requirement(c, ARCH)), ["arm64"]);
    assert_eq!(values(requirement(c, INSTANCE_TYPE)), ["arm-instance-type"]);

    let p = prov(
        json!({}),
        vec![pod(
            "p",
            json!({"spec": {"containers": [{"name": "app", "image": "i",
                "resources": {"requests": {"fake.com/vendor-a": "1"}, "limits": {"fake.com/vendor-a": "1"}}}]}}),
        )],
    );
    assert_eq!(
        values(requirement(p.claim("p"), INSTANCE_TYPE)),
        ["gpu-vendor-instance-type"]
    );
}

/// Plans `objects` (and the default EC2NodeClass) against `catalog` with `args`.
fn plan_with(catalog: &std::path::Path, args: &[&str], mut objects: Vec<Value>) -> Plan {
    objects.push(class());
    let mut all = vec!["--catalog", catalog.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, json) = provision_json(&all, objects);
    Plan { code, json }
}

/// MinValuesPolicy's two arm64 spot types (4 CPU / 4Gi, $0.52) in test-zone-1-spot and
/// test-zone-2-spot; `one_type_two_zones` puts instance-type-1 alone in test-zone-1 and 2.
fn min_values_catalog(one_type_two_zones: bool) -> std::path::PathBuf {
    let mut text = String::from("instanceTypes:\n");
    let types: Vec<(&str, Vec<&str>)> = if one_type_two_zones {
        vec![("instance-type-1", vec!["test-zone-1", "test-zone-2"])]
    } else {
        vec![
            ("instance-type-1", vec!["test-zone-1-spot"]),
            ("instance-type-2", vec!["test-zone-2-spot"]),
        ]
    };
    for (name, zones) in types {
        text.push_str(&format!(
            "- name: {name}\n  capacity: {{cpu: \"4\", memory: 4Gi, pods: \"110\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: arm64, kubernetes.io/os: linux}}\n  \
             offerings:\n"
        ));
        for z in zones {
            text.push_str(&format!(
                "  - {{zone: {z}, capacityType: spot, price: 0.52}}\n"
            ));
        }
    }
    crate::support::write_temp(
        if one_type_two_zones {
            "min-values-zones.yaml"
        } else {
            "min-values-types.yaml"
        },
        text.as_bytes(),
    )
}

/// MinValuesPolicy › with instance type requirements: Strict "should not schedule when
/// minValues requirement is not met" (3 of 2 types); BestEffort "should schedule even when …"
/// (instance-type-1, relaxed annotation `true`, the requirement kept at minValues 2), "should
/// relax minValues before falling back to other nodepools" (a weight-10 pool without minValues
/// is not used), "should choose nodepool with higher weight when relaxing minValues"; with zone
/// requirements: Strict pending, BestEffort scheduled in zone 1 or 2 with zone minValues 2;
/// with both: BestEffort instance-type minValues 1, zone 2.
/// Upstream It: "should not schedule when minValues requirement is not met".
/// Upstream It: "should not schedule when zone minValues requirement is not met".
/// Upstream It: "should schedule when minValues requirement is not met".
#[test]
fn min_values_policy_from_the_flag() {
    let types = min_values_catalog(false);
    let three = ["instance-type-1", "instance-type-2", "instance-type-3"];
    let weighted =
        |name: &str, weight: u32, r: Vec<Value>| pool(name, r, json!({"pool": {"weight": weight}}));
    let small = || sized("p", cpu_mem("0.9", "0.9Gi"), json!({}));
    let p = plan_with(
        &types,
        &["--min-values-policy", "Strict"],
        vec![
            weighted(
                "default",
                100,
                vec![with_min_op_in(INSTANCE_TYPE, &three, 3)],
            ),
            small(),
        ],
    );
    p.assert_pending(&["p"]);
    for other in [
        None,
        Some(vec![req(INSTANCE_TYPE, "In", &three)]),
        Some(vec![with_min_op_in(INSTANCE_TYPE, &three, 3)]),
    ] {
        let mut objects = vec![weighted(
            "default",
            100,
            vec![with_min_op_in(INSTANCE_TYPE, &three, 3)],
        )];
        if let Some(r) = other.clone() {
            objects.push(weighted("lower", 10, r));
        }
        objects.push(small());
        let p = plan_with(&types, &["--min-values-policy", "BestEffort"], objects);
        p.assert_pending(&[]);
        let c = p.claim("p");
        assert_eq!(
            p.label("p", INSTANCE_TYPE),
            Some("instance-type-1"),
            "{:#}",
            p.json
        );
        assert_eq!(p.label("p", NODEPOOL), Some("default"));
        assert_eq!(
            c["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"], "true",
            "{:#}",
            p.json
        );
        let r = requirement(c, INSTANCE_TYPE).unwrap();
        assert_eq!(values(Some(r)), ["instance-type-1", "instance-type-2"]);
        assert_eq!(r["minValues"], 2, "{:#}", p.json);
    }

    let zones = min_values_catalog(true);
    let all_zones = ["test-zone-1", "test-zone-2", "test-zone-3"];
    let p = plan_with(
        &zones,
        &["--min-values-policy", "Strict"],
        vec![
            pool(
                "default",
                vec![with_min_op_in(ZONE, &all_zones, 3)],
                json!({}),
            ),
            small(),
        ],
    );
    p.assert_pending(&["p"]);
    for both_keys in [false, true] {
        let mut r = vec![with_min_op_in(ZONE, &all_zones, 3)];
        if both_keys {
            r.insert(0, with_min_op_in(INSTANCE_TYPE, &three, 3));
        }
        let p = plan_with(
            &zones,
            &["--min-values-policy", "BestEffort"],
            vec![weighted("default", 100, r), small()],
        );
        p.assert_pending(&[]);
        let c = p.claim("p");
        assert_eq!(p.label("p", INSTANCE_TYPE), Some("instance-type-1"));
        assert!(
            matches!(p.label("p", ZONE), Some("test-zone-1" | "test-zone-2")),
            "{:#}",
            p.json
        );
        assert_eq!(
            c["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"],
            "true"
        );
        let z = requirement(c, ZONE).unwrap();
        assert_eq!(z["minValues"], 2, "{:#}", p.json);
        assert_eq!(values(Some(z)), all_zones, "{:#}", p.json);
        if both_keys {
            let t = requirement(c, INSTANCE_TYPE).unwrap();
            assert_eq!(values(Some(t)), ["instance-type-1"]);
            assert_eq!(t["minValues"], 1, "{:#}", p.json);
        }
    }
}

// ---- Volumes: provisioning/suite_test.go › Volume Topology Requirements, scheduling/
// suite_test.go › VolumeUsage ----

/// `test.StorageClass`: `terms` are its `allowedTopologies` (each a list of `(key, values)`).
fn storage_class(name: &str, provisioner: &str, terms: &[&[(&str, &[&str])]]) -> Value {
    let topologies: Vec<Value> = terms
        .iter()
        .map(|t| {
            let exprs: Vec<Value> = t
                .iter()
                .map(|(k, v)| json!({"key": k, "values": v}))
                .collect();
            json!({ "matchLabelExpressions": exprs })
        })
        .collect();
    let mut sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name}, "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer"});
    if !topologies.is_empty() {
        sc["allowedTopologies"] = json!(topologies);
    }
    sc
}

/// `test.PersistentVolumeClaim`: `class` None leaves `storageClassName` out; a `volume` binds
/// it (with the `pv.kubernetes.io/bind-completed` annotation the helper adds; no `status`,
/// as the helper writes none).
fn claim(name: &str, class: Option<&str>, volume: Option<&str>) -> Value {
    let mut c = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    if let Some(sc) = class {
        c["spec"]["storageClassName"] = json!(sc);
    }
    if let Some(v) = volume {
        c["spec"]["volumeName"] = json!(v);
        c["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
    }
    c
}

/// `test.PersistentVolume`: `source` is its volume source (`csi`, `local`, `hostPath`, `nfs`),
/// `terms` its node affinity's terms (each a list of `(key, values)` with `In`).
fn volume(name: &str, class: &str, source: Value, terms: &[&[(&str, &[&str])]]) -> Value {
    let mut pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "100Gi"}}});
    merge(&mut pv["spec"], source);
    if !terms.is_empty() {
        let terms: Vec<Value> = terms
            .iter()
            .map(|t| {
                let exprs: Vec<Value> = t.iter().map(|(k, v)| req(k, "In", v)).collect();
                json!({ "matchExpressions": exprs })
            })
            .collect();
        pv["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": terms}});
    }
    pv
}

fn csi(driver: &str) -> Value {
    json!({"csi": {"driver": driver, "volumeHandle": "test-handle"}})
}

/// A pod patch mounting the claims `names`.
fn claims(names: &[&str]) -> Value {
    let volumes: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"name": format!("v{i}"), "persistentVolumeClaim": {"claimName": n}}))
        .collect();
    json!({"spec": {"volumes": volumes}})
}

/// A pod patch with one generic ephemeral volume `v0` of class `class`: its claim is
/// `<pod>-v0`.
fn ephemeral(class: &str) -> Value {
    json!({"spec": {"volumes": [{"name": "v0", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "storageClassName": class, "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}}}}]}})
}

/// Volume Topology Requirements (the suite's class allows test-zone-2 and test-zone-3):
/// "should not schedule if invalid pvc", "should schedule / not schedule with an empty storage
/// class if the pvc is bound / not bound", "… with a missing storage class …", "should schedule
/// valid pods when a pod with an invalid pvc is encountered (pvc / storage class / volume
/// name)", "should schedule to volume zones if volume already bound" (+ ephemeral), "should not
/// schedule if volume zones are incompatible" (+ ephemeral), "should not relax an added volume
/// topology zone node-selector away".
/// Upstream It: "should schedule with an empty storage class if the pvc is bound".
/// Upstream It: "should not schedule with an empty storage class if the pvc is not bound".
/// Upstream It: "should not schedule with a missing storage class if the pvc is not bound".
/// Upstream It: "should schedule valid pods when a pod with an invalid pvc is encountered (pvc)".
/// Upstream It: "should schedule valid pods when a pod with an invalid pvc is encountered (storage class)".
/// Upstream It: "should schedule valid pods when a pod with an invalid pvc is encountered (volume name)".
/// Upstream It: "should schedule to volume zones if volume already bound (ephemeral volume)".
/// Upstream It: "should not schedule if volume zones are incompatible".
/// Upstream It: "should not schedule if volume zones are incompatible (ephemeral volume)".
#[test]
fn volume_topology_from_the_manifest() {
    let zonal: &[&[(&str, &[&str])]] = &[&[(ZONE, &["test-zone-2", "test-zone-3"])]];
    let mut objects = vec![
        storage_class("zonal", "test-provisioner", zonal),
        volume("pv-empty", "", csi("test.driver"), &[]),
        claim("empty-bound", Some(""), Some("pv-empty")),
        claim("empty-unbound", Some(""), None),
        volume(
            "pv-missing",
            "missing-storage-class",
            csi("test.driver"),
            &[],
        ),
        claim(
            "missing-bound",
            Some("missing-storage-class"),
            Some("pv-missing"),
        ),
        claim("missing-unbound", Some("missing-storage-class"), None),
        claim("invalid-class", Some("invalid-storage-class"), None),
        claim("invalid-volume", None, Some("invalid-volume-name")),
    ];
    // Claims bound to volumes in test-zone-3 (the ephemeral ones named `<pod>-v0`).
    for name in [
        "zone-3",
        "eph-bound-v0",
        "zone-3-pinned",
        "eph-zone-1-v0",
        "relaxed",
    ] {
        let pv = format!("pv-{name}");
        objects.push(volume(
            &pv,
            "zonal",
            csi("test.driver"),
            &[&[(ZONE, &["test-zone-3"])]],
        ));
        objects.push(claim(name, Some("zonal"), Some(&pv)));
    }
    let zone_1 = required(vec![req(ZONE, "In", &["test-zone-1"])]);
    objects.extend([
        pod("no-claim", claims(&["invalid"])),
        pod("empty-bound", claims(&["empty-bound"])),
        pod("empty-unbound", claims(&["empty-unbound"])),
        pod("missing-bound", claims(&["missing-bound"])),
        pod("missing-unbound", claims(&["missing-unbound"])),
        pod("invalid-class", claims(&["invalid-class"])),
        pod("invalid-volume", claims(&["invalid-volume"])),
        pod("valid", json!({})),
        pod("zone-3", claims(&["zone-3"])),
        pod("eph-bound", ephemeral("zonal")),
        pod("zone-3-pinned", both(claims(&["zone-3-pinned"]), zone_1.clone())),
        pod("eph-zone-1", both(ephemeral("zonal"), zone_1)),
        pod(
            "relaxed",
            both(
                claims(&["relaxed"]),
                json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [
                        {"matchExpressions": [req("example.com/label", "In", &["unsupported"])]},
                        {"matchExpressions": [req(CAPACITY_TYPE, "In", &["on-demand"])]}]}}}}}),
            ),
        ),
    ]);
    let p = prov(json!({}), objects);
    p.assert_pending(&[
        "no-claim",
        "empty-unbound",
        "missing-unbound",
        "invalid-class",
        "invalid-volume",
        "zone-3-pinned",
        "eph-zone-1",
    ]);
    for placed in ["zone-3", "eph-bound", "relaxed"] {
        assert_eq!(
            p.label(placed, ZONE),
            Some("test-zone-3"),
            "{placed}: {:#}",
            p.json
        );
    }
}

/// "should ignore hostname affinity scheduling when using local path volumes" (local and
/// hostPath, + the ephemeral table) and "should not ignore hostname affinity when using
/// non-local path volumes"; VolumeUsage "should preserve unconstrained PV alternatives after
/// ignoring hostname affinity" (local and hostPath: a hostname term or an invalid zone).
/// Upstream It: "should not ignore hostname affinity when using non-local path volumes".
#[test]
fn hostname_affinity_of_local_volumes_is_ignored() {
    let host: &[(&str, &[&str])] = &[(HOSTNAME, &["some-random-node"])];
    let local = json!({"local": {"path": "/mnt/local-disks"}});
    let host_path = json!({"hostPath": {"path": "/mnt/local-disks"}});
    let mut objects = vec![storage_class(
        "local-path",
        "kubernetes.io/no-provisioner",
        &[],
    )];
    for (kind, source) in [("local", &local), ("hostpath", &host_path)] {
        objects.extend([
            volume(&format!("pv-{kind}"), "local-path", source.clone(), &[host]),
            claim(kind, Some("local-path"), Some(&format!("pv-{kind}"))),
            pod(kind, claims(&[kind])),
            volume(
                &format!("pv-eph-{kind}"),
                "local-path",
                source.clone(),
                &[host],
            ),
            claim(
                &format!("eph-{kind}-v0"),
                Some("local-path"),
                Some(&format!("pv-eph-{kind}")),
            ),
            pod(&format!("eph-{kind}"), ephemeral("local-path")),
            volume(
                &format!("pv-alt-{kind}"),
                "",
                source.clone(),
                &[
                    &[(HOSTNAME, &["existing-host"])],
                    &[(ZONE, &["invalid-zone"])],
                ],
            ),
            claim(
                &format!("alt-{kind}"),
                None,
                Some(&format!("pv-alt-{kind}")),
            ),
            pod(&format!("alt-{kind}"), claims(&[&format!("alt-{kind}")])),
        ]);
    }
    objects.extend([
        volume("pv-csi", "zonal", csi("test.driver"), &[host]),
        claim("csi", Some("zonal"), Some("pv-csi")),
        pod("csi", claims(&["csi"])),
    ]);
    let p = sched_with(objects);
    p.assert_pending(&["csi"]);
}

/// VolumeUsage "should schedule pods using a PV with multiple zones" (PV terms zone 1 OR zone
/// 2) and "… a StorageClass with multiple zones in AllowedTopologies": two zonally anti-affine
/// pods land in test-zone-1 and test-zone-2, one each. "should not fail for NFS volumes" (5
/// pods mounting one NFS claim twice: one node) and "should launch a single node if all pods
/// use the same PVC" (100 pods of one claim bound to a zone-1 volume: one node).
/// Upstream It: "should schedule pods using a StorageClass with multiple zones in AllowedTopologies".
#[test]
fn multi_zone_volumes_and_shared_claims() {
    let anti = |app: &str| anti_affine(app, ZONE);
    let either: &[&[(&str, &[&str])]] = &[&[(ZONE, &["test-zone-1"])], &[(ZONE, &["test-zone-2"])]];
    let mut objects = vec![storage_class("multi-zone-sc", "test-provisioner", either)];
    for i in 0..2 {
        objects.extend([
            volume(
                &format!("multi-zone-pv-{i}"),
                "",
                csi("test.driver"),
                either,
            ),
            claim(
                &format!("multi-zone-pvc-{i}"),
                None,
                Some(&format!("multi-zone-pv-{i}")),
            ),
            pod(
                &format!("pv-pod-{i}"),
                both(claims(&[&format!("multi-zone-pvc-{i}")]), anti("pv")),
            ),
            claim(&format!("sc-pvc-{i}"), Some("multi-zone-sc"), None),
            pod(
                &format!("sc-pod-{i}"),
                both(claims(&[&format!("sc-pvc-{i}")]), anti("sc")),
            ),
        ]);
    }
    let p = sched_with(objects);
    p.assert_pending(&[]);
    for prefix in ["pv-pod", "sc-pod"] {
        let mut zones: Vec<&str> = (0..2)
            .map(|i| p.label(&format!("{prefix}-{i}"), ZONE).unwrap())
            .collect();
        zones.sort_unstable();
        assert_eq!(
            zones,
            ["test-zone-1", "test-zone-2"],
            "{prefix}: {:#}",
            p.json
        );
    }

    let mut objects = vec![
        volume(
            "my-volume",
            "nfs",
            json!({"nfs": {"server": "fake.server", "path": "/some/path"}}),
            &[&[(ZONE, &["test-zone-1"])]],
        ),
        claim("my-claim", Some(""), Some("my-volume")),
    ];
    for i in 0..5 {
        objects.push(pod(&format!("nfs-{i}"), claims(&["my-claim", "my-claim"])));
    }
    let p = sched_with(objects);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}

/// VolumeUsage's type: 1024 CPUs and pods.
fn big_type_catalog() -> std::path::PathBuf {
    let text = "instanceTypes:\n- name: instance-type\n  capacity: {cpu: \"1024\", memory: 1024Gi, pods: \"1024\"}\n  \
        overhead: {cpu: 100m, memory: 10Mi}\n  labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux}\n  offerings:\n  \
        - {zone: test-zone-1, capacityType: on-demand, price: 1}\n  - {zone: test-zone-2, capacityType: on-demand, price: 1}\n";
    crate::support::write_temp("volume-usage.yaml", text.as_bytes())
}

/// VolumeUsage "should launch multiple nodes if required due to volume limits": the in-flight
/// node's CSINode allows 10 volumes of `fake.csi.provider`; 6 pods of 2 new claims each → 5 on
/// it, the sixth on a new node. "should launch a single node if all pods use the same PVC"
/// (100 pods of one bound claim: all on the in-flight node).
#[test]
fn csinode_volume_limits_from_the_manifest() {
    let catalog = big_type_catalog();
    let it = FakeType {
        name: "instance-type",
        cpu: 1024,
        mem_gi: 1024,
        pods: 1024,
        arch: "amd64",
    };
    let base = || {
        // The Describe's `nodePool.Spec.Limits = nil`.
        let unlimited = json!({"pool": {"limits": null}});
        let mut o = vec![pool("default", vec![any_capacity()], unlimited)];
        o.extend(plain("n1", &it, "test-zone-1", Stage::Registered));
        o.push(running("initial", "n1", json!({}), json!({})));
        o.push(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
            "spec": {"drivers": [{"name": "fake.csi.provider", "nodeID": "fake-node-id",
                "allocatable": {"count": 10}}]}}),
        );
        o.push(storage_class(
            "my-storage-class",
            "fake.csi.provider",
            &[&[(ZONE, &["test-zone-1"])]],
        ));
        o
    };
    let mut objects = base();
    for i in 0..6 {
        let (a, b) = (format!("my-claim-a-{i}"), format!("my-claim-b-{i}"));
        objects.push(claim(&a, Some("my-storage-class"), None));
        objects.push(claim(&b, Some("my-storage-class"), None));
        objects.push(pod(&format!("p{i}"), claims(&[&a, &b])));
    }
    let p = plan_on(&catalog, objects);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(
        p.json["existingNodes"][0]["pods"].as_array().unwrap().len(),
        5
    );

    let mut objects = base();
    objects.push(volume(
        "my-volume",
        "my-storage-class",
        csi("fake.csi.provider"),
        &[&[(ZONE, &["test-zone-1"])]],
    ));
    objects.push(claim(
        "my-claim",
        Some("my-storage-class"),
        Some("my-volume"),
    ));
    for i in 0..100 {
        objects.push(pod(&format!("p{i}"), claims(&["my-claim"])));
    }
    let p = plan_on(&catalog, objects);
    p.assert_pending(&[]);
    assert!(p.claims().is_empty(), "{:#}", p.json);
}

// ---- scheduling/suite_test.go › Reserved Instance Types ----

/// The Describe's types: large (6 CPU), medium (3), small (2) with the fake's five offerings,
/// medium and small also reserved in test-zone-1 (one instance each, reservations
/// `r-<type>`, here `cr-small` and `cr-medium`: EC2 reservation ids).
fn reserved_catalog(second_small: bool, file: &str) -> std::path::PathBuf {
    let mut text = String::from("instanceTypes:\n");
    for (name, cpu, reserved) in [
        ("large-instance-type", 6u32, false),
        ("medium-instance-type", 3, true),
        ("small-instance-type", 2, true),
    ] {
        let price = 0.1 * f64::from(cpu) + 0.1 * f64::from(cpu) * 1_073_741_824.0 / 1e9;
        text.push_str(&format!(
            "- name: {name}\n  capacity: {{cpu: \"{cpu}\", memory: {cpu}Gi, pods: \"110\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n  offerings:\n"
        ));
        text.push_str(&fake_offerings(price));
        if reserved {
            text.push_str(&format!(
                "  - {{zone: test-zone-1, capacityType: reserved, reservationId: cr-{}, count: 1}}\n",
                name.trim_end_matches("-instance-type")
            ));
        }
        if second_small && name == "small-instance-type" {
            text.push_str(
                "  - {zone: test-zone-1, capacityType: reserved, reservationId: cr-small2, count: 2}\n",
            );
        }
    }
    crate::support::write_temp(file, text.as_bytes())
}

const RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";

/// Plans `objects` against the reserved catalog (with small's second reservation `cr-small2`
/// of 2 instances when `second_small`) and a class selecting every reservation.
fn plan_reserved(second_small: bool, objects: Vec<Value>) -> Plan {
    let mut all = objects;
    let mut c = class();
    c["spec"]["capacityReservationSelectorTerms"] =
        json!([{"id": "cr-medium"}, {"id": "cr-small"}, {"id": "cr-small2"}]);
    all.push(c);
    let catalog = reserved_catalog(
        second_small,
        if second_small {
            "reserved-two.yaml"
        } else {
            "reserved.yaml"
        },
    );
    let (code, json) = provision_json(&["--catalog", catalog.to_str().unwrap()], all);
    Plan { code, json }
}

/// `(round, instance type, capacity type, reservation id)` of each NodeClaim, in plan order.
fn launches(p: &Plan) -> Vec<(u64, String, String, String)> {
    p.claims()
        .iter()
        .map(|c| {
            let l = |k: &str| c["labels"][k].as_str().unwrap_or("").to_string();
            (
                c["round"].as_u64().unwrap(),
                l(INSTANCE_TYPE),
                l(CAPACITY_TYPE),
                l(RESERVATION_ID),
            )
        })
        .collect()
}

/// "shouldn't fallback to on-demand or spot when compatible reserved offerings are available":
/// three 1800m pods take, one loop each, the small reservation, the medium one, then a small
/// on-demand or spot instance. "should correctly track reservations shared across nodepools":
/// two pools share the small reservation; two anti-affine pods, one per pool → one reserved,
/// the other on-demand/spot in the next loop.
#[test]
fn reservations_are_used_before_falling_back_one_loop_at_a_time() {
    let mut objects = vec![pool("default", vec![any_capacity()], json!({}))];
    for i in 0..3 {
        objects.push(sized(&format!("p{i}"), json!({"cpu": "1800m"}), json!({})));
    }
    let p = plan_reserved(false, objects);
    p.assert_pending(&[]);
    let l = launches(&p);
    assert_eq!(l.len(), 3, "{:#}", p.json);
    assert_eq!(
        (l[0].0, l[0].1.as_str(), l[0].2.as_str(), l[0].3.as_str()),
        (1, "small-instance-type", "reserved", "cr-small"),
        "{:#}",
        p.json
    );
    assert_eq!(
        (l[1].0, l[1].1.as_str(), l[1].2.as_str(), l[1].3.as_str()),
        (2, "medium-instance-type", "reserved", "cr-medium"),
        "{:#}",
        p.json
    );
    assert_eq!((l[2].0, l[2].1.as_str()), (3, "small-instance-type"));
    assert_ne!(l[2].2, "reserved");
    assert_eq!(l[2].3, "");

    let mut objects = vec![
        pool("np-1", vec![any_capacity()], json!({})),
        pool("np-2", vec![any_capacity()], json!({})),
    ];
    for i in 1..=2 {
        objects.push(pod(
            &format!("p{i}"),
            both(
                anti_affine("test", HOSTNAME),
                required(vec![
                    req(INSTANCE_TYPE, "In", &["small-instance-type"]),
                    req(NODEPOOL, "In", &[&format!("np-{i}")]),
                ]),
            ),
        ));
    }
    let p = plan_reserved(false, objects);
    p.assert_pending(&[]);
    let l = launches(&p);
    assert_eq!(l.len(), 2, "{:#}", p.json);
    assert_eq!(
        (l[0].0, l[0].2.as_str(), l[0].3.as_str()),
        (1, "reserved", "cr-small")
    );
    assert_eq!(l[1].0, 2, "{:#}", p.json);
    assert_ne!(l[1].2, "reserved");
    assert_eq!(l[1].1, "small-instance-type");
}

/// "should correctly track multiple reservations for the same instance pool": small has a
/// second reservation of 2 instances; four anti-affine pods requiring small → two reserved in
/// the first loop, one in the second (one instance left, the pessimistic count defers the
/// last pod), the last on-demand or spot in the third.
#[test]
fn two_reservations_of_one_type_are_tracked_together() {
    let mut objects = vec![pool("default", vec![any_capacity()], json!({}))];
    for i in 0..4 {
        objects.push(pod(
            &format!("p{i}"),
            both(
                anti_affine("test", HOSTNAME),
                required(vec![req(INSTANCE_TYPE, "In", &["small-instance-type"])]),
            ),
        ));
    }
    let p = plan_reserved(true, objects);
    p.assert_pending(&[]);
    let l = launches(&p);
    let rounds: Vec<(u64, bool)> = l.iter().map(|c| (c.0, c.2 == "reserved")).collect();
    assert_eq!(
        rounds,
        [(1, true), (1, true), (2, true), (3, false)],
        "{:#}",
        p.json
    );
}

// ---- scheduling/instance_selection_test.go › MinValues (the rest), cheaper on-demand ----

/// A catalog of spot types `instance-type-<i>` in test-zone-1-spot from `spec`: one
/// `cpu/price/arch[/n]` per type, space-separated (memory GiB = CPUs; `n` is the
/// `karpenter/numerical-value` label).
fn numbered_catalog(file: &str, spec: &str) -> std::path::PathBuf {
    let mut text = String::from("instanceTypes:\n");
    for (i, t) in spec.split_whitespace().enumerate() {
        let f: Vec<&str> = t.split('/').collect();
        let (cpu, price, arch) = (f[0], f[1], f[2]);
        let label = f.get(3).map_or(String::new(), |n| {
            format!(", karpenter/numerical-value: \"{n}\"")
        });
        text.push_str(&format!(
            "- name: instance-type-{}\n  capacity: {{cpu: \"{cpu}\", memory: {cpu}Gi, pods: \"110\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: {arch}, kubernetes.io/os: linux{label}}}\n  \
             offerings:\n  - {{zone: test-zone-1-spot, capacityType: spot, price: {price}}}\n",
            i + 1
        ));
    }
    crate::support::write_temp(file, text.as_bytes())
}

/// `In` with `minValues`.
fn with_min_op_in(key: &str, values: &[&str], min: u32) -> Value {
    with_min_op(key, "In", values, min)
}

/// `(what, types, pool requirements, pod patch, flags, placed)`.
type MinValuesCase<'a> = (&'a str, &'a str, Vec<Value>, Value, &'a [&'a str], bool);

/// A requirement with `minValues`.
fn with_min_op(key: &str, op: &str, values: &[&str], min: u32) -> Value {
    let mut r = req(key, op, values);
    r["minValues"] = json!(min);
    r
}

/// MinValues: "should schedule respecting the minValues in Gt operator", "scheduler should fail
/// if the minValues in Gt operator is not satisfied" (the pool's `Exists` minValues 2, the pods'
/// `Gt 2` leaves one type), "… in Lt operator" (+ fails), "should schedule considering the max
/// of the minValues of In and NotIn operators", "… of Gt and Lt operators", "should schedule and
/// pick the max of minValues of InstanceTypes if multiple operators are used for the same
/// requirement", "should schedule and respect multiple requirement keys with minValues" (arch
/// `Exists` minValues 2 over an arm64 and an amd64 type), "schedule should fail if minimum
/// number of InstanceTypes is not met … after truncation" (`--max-instance-types 1` for
/// `MaxInstanceTypes = 1`): two 0.9-CPU pods on two NodeClaims of ≥ 2 options, or both pending.
/// Upstream It: "should schedule respecting the minValues in Lt operator".
/// Upstream It: "scheduler should fail if the minValues in Lt operator is not satisfied".
/// Upstream It: "should schedule considering the max of the minValues of In and NotIn operators in the instance-type requirements".
/// Upstream It: "should schedule considering the max of the minValues of Gt and Lt operators.".
/// Upstream It: "should schedule and pick the max of minValues of InstanceTypes if multiple operators are used for the same requirement.".
#[test]
fn min_values_over_operators_and_keys() {
    const NUM: &str = "karpenter/numerical-value";
    let types12 = ["instance-type-1", "instance-type-2"];
    let types123 = ["instance-type-1", "instance-type-2", "instance-type-3"];
    let gt_pod = required(vec![req(NUM, "Gt", &["2"])]);
    // (what, types, pool requirements, pod patch, flags, placed)
    #[rustfmt::skip]
    let cases: Vec<MinValuesCase> = vec![
        ("Gt", "1/0.52/arm64/2 1/1.0/arm64/3 4/1.2/arm64/4",
            vec![with_min_op(NUM, "Gt", &["2"], 2)], json!({}), &[], true),
        ("Gt unmet", "1/0.52/arm64/2 4/1.0/arm64/3",
            vec![with_min_op(NUM, "Exists", &[], 2)], gt_pod, &[], false),
        ("Lt", "1/0.52/arm64/2 2/1.0/arm64/3 4/1.2/arm64/4",
            vec![with_min_op(NUM, "Lt", &["4"], 2)], json!({}), &[], true),
        ("Lt unmet", "2/0.52/arm64/2 4/1.2/arm64/4",
            vec![with_min_op(NUM, "Lt", &["4"], 2)], json!({}), &[], false),
        ("In and NotIn", "1/0.52/arm64 2/1.0/arm64 4/1.2/arm64",
            vec![with_min_op(INSTANCE_TYPE, "In", &types123, 1),
                 with_min_op(INSTANCE_TYPE, "NotIn", &["instance-type-3"], 2)], json!({}), &[], true),
        ("Gt and Lt", "1/0.52/arm64/2 1/1.0/arm64/3 4/1.2/arm64/4 4/1.2/arm64/5",
            vec![with_min_op(NUM, "Gt", &["2"], 1), with_min_op(NUM, "Lt", &["5"], 2)], json!({}), &[], true),
        ("Exists and In on one key", "1/0.52/arm64 4/1.0/arm64",
            vec![with_min_op(INSTANCE_TYPE, "Exists", &[], 1),
                 with_min_op(INSTANCE_TYPE, "In", &types12, 2)], json!({}), &[], true),
        ("two keys", "1/0.52/arm64 4/1.0/amd64",
            vec![with_min_op(ARCH, "Exists", &[], 2), with_min_op(INSTANCE_TYPE, "In", &types12, 1)],
            json!({}), &[], true),
        ("after truncation", "1/0.52/arm64 4/1.0/arm64",
            vec![with_min_op(INSTANCE_TYPE, "In", &types12, 2)], json!({}),
            &["--max-instance-types", "1"], false),
    ];
    for (i, (what, types, reqs, patch, args, placed)) in cases.into_iter().enumerate() {
        let catalog = numbered_catalog(&format!("min-values-{i}.yaml"), types);
        let small = |name: &str| sized(name, cpu_mem("0.9", "0.9Gi"), patch.clone());
        let p = plan_with(
            &catalog,
            args,
            vec![pool("default", reqs, json!({})), small("a"), small("b")],
        );
        if placed {
            p.assert_pending(&[]);
            assert_ne!(
                p.claim("a")["name"],
                p.claim("b")["name"],
                "{what}: {:#}",
                p.json
            );
            let options = p.claims()[0]["instanceTypes"].as_array().unwrap().len();
            assert!(options >= 2, "{what}: {:#}", p.json);
        } else {
            p.assert_pending(&["a", "b"]);
        }
    }
}

/// "should schedule on cheaper on-demand instance even when spot price ordering would place
/// other instance types first": on-demand only → test-instance1 ($1.0 on-demand, though its spot
/// is dearer than test-instance2's).
#[test]
fn the_on_demand_price_decides_an_on_demand_pool() {
    let text = "instanceTypes:\n\
        - {name: test-instance1, capacity: {cpu: \"1\", memory: 1Gi, pods: \"110\"}, overhead: {cpu: 100m, memory: 10Mi},\n   labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux},\n   \
           offerings: [{zone: test-zone-1a, capacityType: on-demand, price: 1.0}, {zone: test-zone-1a, capacityType: spot, price: 0.2}]}\n\
        - {name: test-instance2, capacity: {cpu: \"1\", memory: 1Gi, pods: \"110\"}, overhead: {cpu: 100m, memory: 10Mi},\n   labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux},\n   \
           offerings: [{zone: test-zone-1a, capacityType: on-demand, price: 1.3}, {zone: test-zone-1a, capacityType: spot, price: 0.1}]}\n";
    let catalog = crate::support::write_temp("cheaper-on-demand.yaml", text.as_bytes());
    let p = plan_on(
        &catalog,
        vec![
            pool(
                "default",
                vec![req(CAPACITY_TYPE, "In", &["on-demand"])],
                json!({}),
            ),
            pod("p", json!({})),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(
        p.label("p", INSTANCE_TYPE),
        Some("test-instance1"),
        "{:#}",
        p.json
    );
}

/// No Pre-Binding "should handle resource zeroing of extended resources by kubelet" (issue
/// #1459): the registered, uninitialized node of the vendor-a GPU type reports
/// `capacity: {vendor-a: 0}`, `allocatable: {vendor-b: 0}` (kubelet zeroing at startup); its
/// NodeClaim's numbers stand in, so a second 10m + 1 GPU pod goes to it, no second node.
/// "should respect self pod affinity without pod binding (zone)" (issue #1975): a pod with
/// zonal self-affinity goes to the in-flight node (here in test-zone-2, not the cheapest
/// zone's first) rather than opening a node elsewhere.
#[test]
fn in_flight_nodes_without_binding() {
    let gpu = FakeType {
        name: "gpu-vendor-instance-type",
        cpu: 4,
        mem_gi: 4,
        pods: 5,
        arch: "amd64",
    };
    let mut claim_status =
        json!({"status": {"capacity": gpu.capacity(), "allocatable": gpu.allocatable()}});
    claim_status["status"]["capacity"]["fake.com/vendor-a"] = json!("2");
    claim_status["status"]["allocatable"]["fake.com/vendor-a"] = json!("2");
    let mut objects = launched(
        "n1",
        &gpu,
        "test-zone-1",
        Stage::Registered,
        json!({"status": {"capacity": {"fake.com/vendor-a": "0"}, "allocatable": {"fake.com/vendor-b": "0"}}}),
        claim_status,
    );
    let gpu_pod = |name: &str| {
        pod(
            name,
            json!({"spec": {"containers": [{"name": "app", "image": "i",
                "resources": {"limits": {"cpu": "10m", "fake.com/vendor-a": "1"}}}]}}),
        )
    };
    objects.push(gpu_pod("second"));
    assert_second_joins_n1(objects);

    let affine = json!({"metadata": {"labels": {"security": "s2"}},
        "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"security": "s2"}}}]}}}});
    let mut objects = plain("n1", &SMALL, "test-zone-2", Stage::Registered);
    objects.push(pod("second", affine));
    assert_second_joins_n1(objects);
}

/// VolumeUsage "should launch nodes for pods with ephemeral volume using the specified storage
/// class name", "… using a default storage class", "… using the newest storage class" (two
/// default classes, the newer one's driver counts): the in-flight node's CSINode allows one
/// volume of `fake.csi.provider` (ten of `other-provider`), its pod's ephemeral claim uses it, so
/// the next pod's ephemeral volume of the same driver needs a new node.
/// Upstream It: "should launch nodes for pods with ephemeral volume using a default storage class".
#[test]
fn ephemeral_volumes_count_against_the_csinode_limit() {
    let default_class = |name: &str, provisioner: &str, created: &str| {
        let mut sc = storage_class(name, provisioner, &[&[(ZONE, &["test-zone-1"])]]);
        sc["metadata"]["annotations"] =
            json!({"storageclass.kubernetes.io/is-default-class": "true"});
        sc["metadata"]["creationTimestamp"] = json!(created);
        sc
    };
    let cases: Vec<(&str, Vec<Value>, Option<&str>)> = vec![
        (
            "specified",
            vec![
                storage_class(
                    "my-storage-class",
                    "fake.csi.provider",
                    &[&[(ZONE, &["test-zone-1"])]],
                ),
                default_class(
                    "default-storage-class",
                    "other-provider",
                    "2026-01-01T00:00:00Z",
                ),
            ],
            Some("my-storage-class"),
        ),
        (
            "default",
            vec![default_class(
                "default-storage-class",
                "fake.csi.provider",
                "2026-01-01T00:00:00Z",
            )],
            None,
        ),
        (
            "newest",
            vec![
                default_class(
                    "default-storage-class",
                    "other-provider",
                    "2026-01-01T00:00:00Z",
                ),
                default_class(
                    "newer-default-storage-class",
                    "fake.csi.provider",
                    "2026-01-01T00:00:05Z",
                ),
            ],
            None,
        ),
    ];
    for (what, classes, class_name) in cases {
        let eph = match class_name {
            Some(c) => ephemeral(c),
            None => {
                json!({"spec": {"volumes": [{"name": "v0", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]}})
            }
        };
        let mut objects = classes;
        objects.extend(plain("n1", &ARM, "test-zone-1", Stage::Registered));
        objects.push(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
            "spec": {"drivers": [
                {"name": "fake.csi.provider", "nodeID": "n1", "allocatable": {"count": 1}},
                {"name": "other-provider", "nodeID": "n1", "allocatable": {"count": 10}}]}}),
        );
        objects.push(running("initial", "n1", json!({}), eph.clone()));
        objects.push(claim("initial-v0", class_name, None));
        objects.push(claim("second-v0", class_name, None));
        objects.push(pod("second", eph));
        eprintln!("{what}");
        assert_second_gets_a_new_node(objects);
    }
}

/// A pod patch with one generic ephemeral volume `tmp-ephemeral`, of class `class` when given
/// (its claim is `<pod>-tmp-ephemeral`).
fn ephemeral_named(class: Option<&str>) -> Value {
    let mut spec =
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
    if let Some(c) = class {
        spec["storageClassName"] = json!(c);
    }
    json!({"spec": {"volumes": [{"name": "tmp-ephemeral",
        "ephemeral": {"volumeClaimTemplate": {"spec": spec}}}]}})
}

/// VolumeUsage's negatives and bound claims (`other-provider` classes in test-zone-1): "should
/// not launch nodes for pod with unbound volume for volumeBindingMode immediate", "… with
/// deleting persistentVolumeClaim", "… with bound persistentVolume that is marked for
/// deletion", "… with Lost persistentVolumeClaim", "should handle pods with PVCs with defined
/// volumeName" (bind-completed missing: pending; present: scheduled), "should launch nodes for
/// pods with ephemeral volume without a storage class when the PVC is bound" (non-existent and
/// empty class) and "should not launch nodes … when the PVC is unbound" (both).
/// Upstream It: "should not launch nodes for pod with unbound volume for volumeBindingMode immediate".
/// Upstream It: "should not launch nodes for pod with deleting persistentVolumeClaim".
/// Upstream It: "should not launch nodes for pod with bound persistentVolume that is marked for deletion".
/// Upstream It: "should not launch nodes for pod with Lost persistentVolumeClaim".
#[test]
fn volume_claims_that_block_or_allow_a_launch() {
    let zone_1: &[&[(&str, &[&str])]] = &[&[(ZONE, &["test-zone-1"])]];
    let mut immediate = storage_class("immediate", "other-provider", zone_1);
    immediate["volumeBindingMode"] = json!("Immediate");
    let mut deleting_claim = claim("deleting", Some("default-storage-class"), None);
    deleting_claim["metadata"]["deletionTimestamp"] = json!("2026-12-01T00:00:00Z");
    deleting_claim["metadata"]["finalizers"] = json!(["kubernetes.io/pvc-protection"]);
    let mut deleting_volume = volume("pv-deleting", "", csi("other-provider"), &[]);
    deleting_volume["metadata"]["deletionTimestamp"] = json!("2026-12-01T00:00:00Z");
    deleting_volume["metadata"]["finalizers"] = json!(["kubernetes.io/pv-protection"]);
    let mut lost = claim("lost", Some("default-storage-class"), None);
    lost["status"] = json!({"phase": "Lost"});
    let mut unannotated = claim("unannotated", Some("default-storage-class"), Some("pv-b"));
    unannotated["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    let mut objects = vec![
        storage_class("default-storage-class", "other-provider", zone_1),
        immediate,
        claim("immediate", Some("immediate"), None),
        deleting_claim,
        deleting_volume,
        claim("marked-tmp-ephemeral", None, Some("pv-deleting")),
        lost,
        volume("pv-a", "", csi("other-provider"), &[]),
        claim("annotated", Some("default-storage-class"), Some("pv-a")),
        volume("pv-b", "", csi("other-provider"), &[]),
        unannotated,
        pod("immediate", claims(&["immediate"])),
        pod("deleting", claims(&["deleting"])),
        pod("marked", ephemeral_named(None)),
        pod("lost", claims(&["lost"])),
        pod("annotated", claims(&["annotated"])),
        pod("unannotated", claims(&["unannotated"])),
    ];
    for (i, class) in ["non-existent", ""].into_iter().enumerate() {
        let pv = format!("test-pv-{i}");
        objects.extend([
            volume(&pv, "", csi("test.driver"), &[]),
            claim(&format!("bound-{i}-tmp-ephemeral"), Some(class), Some(&pv)),
            pod(&format!("bound-{i}"), ephemeral_named(Some(class))),
            pod(&format!("unbound-{i}"), ephemeral_named(Some(class))),
        ]);
    }
    let p = sched_with(objects);
    p.assert_pending(&[
        "immediate",
        "deleting",
        "marked",
        "lost",
        "unannotated",
        "unbound-0",
        "unbound-1",
    ]);
}

/// Plans `objects` against the reserved catalog with small's second reservation `cr-small2`,
/// and a class per `(name, reservation ids)`.
fn plan_reserved_classes(objects: Vec<Value>, classes: &[(&str, &[&str])]) -> Plan {
    let mut all = objects;
    for (name, ids) in classes {
        let mut c = class();
        c["metadata"]["name"] = json!(name);
        let terms: Vec<Value> = ids.iter().map(|id| json!({ "id": id })).collect();
        c["spec"]["capacityReservationSelectorTerms"] = json!(terms);
        all.push(c);
    }
    let catalog = reserved_catalog(true, "reserved-classes.yaml");
    let (code, json) = provision_json(&["--catalog", catalog.to_str().unwrap()], all);
    Plan { code, json }
}

/// A pool of class `class` (weight `weight`).
fn pool_of_class(name: &str, class: &str, weight: u32) -> Value {
    let mut p = pool(
        name,
        vec![any_capacity()],
        json!({"pool": {"weight": weight}}),
    );
    p["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!(class);
    p
}

/// Two hostname-anti-affine pods requiring small-instance-type, `extra` merged into each.
fn anti_affine_small(extra: impl Fn(usize) -> Value) -> Vec<Value> {
    (0..2)
        .map(|i| {
            pod(
                &format!("p{i}"),
                both(
                    both(
                        anti_affine("test", HOSTNAME),
                        required(vec![req(INSTANCE_TYPE, "In", &["small-instance-type"])]),
                    ),
                    extra(i),
                ),
            )
        })
        .collect()
}

/// `(round, pool, capacity type)` of each NodeClaim, in plan order.
fn pool_launches(p: &Plan) -> Vec<(u64, String, String)> {
    p.claims()
        .iter()
        .map(|c| {
            let l = |k: &str| c["labels"][k].as_str().unwrap().to_string();
            (c["round"].as_u64().unwrap(), l(NODEPOOL), l(CAPACITY_TYPE))
        })
        .collect()
}

/// Reserved Instance Types, with a pool per EC2NodeClass selecting its own reservation of
/// small-instance-type (the fake's per-pool instance types): "should correctly track
/// reservations for multiple nodepools with distinct reservations for the same instance pool"
/// (both pods reserved in one loop, distinct reservations); "shouldn't fallback to a lower
/// weight NodePool if a reserved offering is available" (one pod reserved on np-primary, the
/// other deferred, then on-demand/spot on np-primary); "shouldn't relax preferences when a pod
/// fails to schedule due to a reserved offering error" (both prefer np-1: one reserved there,
/// the other deferred, then on-demand/spot on np-1); "should handle multiple pods on reserved
/// nodes" (two zonally self-affine pods requiring reserved small in test-zone-1: one node).
#[test]
fn reservations_per_class_weights_and_preferences() {
    let classes: &[(&str, &[&str])] = &[("default", &["cr-small"]), ("other", &["cr-small2"])];
    // Distinct reservations: both pods reserved in round 1.
    let mut objects = vec![
        pool_of_class("np-1", "default", 1),
        pool_of_class("np-2", "other", 1),
    ];
    objects.extend(anti_affine_small(
        |i| json!({"spec": {"nodeSelector": {NODEPOOL: format!("np-{}", i + 1)}}}),
    ));
    let p = plan_reserved_classes(objects, classes);
    p.assert_pending(&[]);
    let l = launches(&p);
    assert_eq!(l.len(), 2, "{:#}", p.json);
    assert!(
        l.iter().all(|c| c.0 == 1 && c.2 == "reserved"),
        "{:#}",
        p.json
    );
    assert_ne!(l[0].3, l[1].3);

    // Lower-weight fallback.
    let mut objects = vec![
        pool_of_class("np-primary", "default", 100),
        pool_of_class("np-fallback", "other", 50),
    ];
    objects.extend(anti_affine_small(|_| json!({})));
    let p = plan_reserved_classes(objects, classes);
    p.assert_pending(&[]);
    let pools = pool_launches(&p);
    assert_eq!(pools.len(), 2, "{:#}", p.json);
    assert_eq!(
        pools[0],
        (1, "np-primary".into(), "reserved".into()),
        "{:#}",
        p.json
    );
    assert_eq!(
        (pools[1].0, pools[1].1.as_str()),
        (2, "np-primary"),
        "{:#}",
        p.json
    );
    assert_ne!(pools[1].2, "reserved");

    // Preferences are not relaxed on a reservation error.
    let mut objects = vec![
        pool_of_class("np-1", "default", 1),
        pool_of_class("np-2", "other", 1),
    ];
    objects.extend(anti_affine_small(|_| {
        json!({"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
            [{"weight": 1, "preference": {"matchExpressions": [req(NODEPOOL, "In", &["np-1"])]}}]}}}})
    }));
    let p = plan_reserved_classes(objects, classes);
    p.assert_pending(&[]);
    let l = pool_launches(&p);
    assert_eq!(l.len(), 2, "{:#}", p.json);
    assert_eq!(l[0], (1, "np-1".into(), "reserved".into()), "{:#}", p.json);
    assert_eq!((l[1].0, l[1].1.as_str()), (2, "np-1"), "{:#}", p.json);
    assert_ne!(l[1].2, "reserved");

    // Multiple pods on one reserved node.
    let affine = json!({"metadata": {"labels": {"app": "test"}},
        "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "test"}}}]}}}});
    let needs = required(vec![
        req(INSTANCE_TYPE, "In", &["small-instance-type"]),
        req(NODEPOOL, "In", &["np-1"]),
        req(CAPACITY_TYPE, "In", &["reserved"]),
        req(ZONE, "In", &["test-zone-1"]),
    ]);
    let mut objects = vec![pool_of_class("np-1", "default", 1)];
    for i in 0..2 {
        objects.push(pod(&format!("p{i}"), both(affine.clone(), needs.clone())));
    }
    let p = plan_reserved_classes(objects, classes);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(p.label("p0", CAPACITY_TYPE), Some("reserved"));
}

/// VolumeUsage › CSIMigration "should launch nodes for pods with non-dynamic PVC using a
/// migrated PVC/PV" and "… with ephemeral volume using a migrated PVC/PV": the default class's
/// in-tree provisioner `kubernetes.io/aws-ebs` counts as `ebs.csi.aws.com`, whose CSINode
/// allows one volume on the in-flight node, used by its pod; the next pod needs a new node.
/// Upstream It: "should launch nodes for pods with non-dynamic PVC using a migrated PVC/PV".
/// Upstream It: "should launch nodes for pods with ephemeral volume using a migrated PVC/PV".
#[test]
fn in_tree_ebs_volumes_count_as_the_csi_driver() {
    for ephemeral_volume in [false, true] {
        let mut sc = storage_class(
            "in-tree-storage-class",
            "kubernetes.io/aws-ebs",
            &[&[(ZONE, &["test-zone-1"])]],
        );
        sc["metadata"]["annotations"] =
            json!({"storageclass.kubernetes.io/is-default-class": "true"});
        let mut objects = vec![sc];
        objects.extend(plain("n1", &ARM, "test-zone-1", Stage::Registered));
        objects.push(json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "fake-node-id", "allocatable": {"count": 1}}]}}));
        let (first, second) = if ephemeral_volume {
            objects.push(claim(
                "initial-tmp-ephemeral",
                Some("in-tree-storage-class"),
                None,
            ));
            objects.push(claim(
                "second-tmp-ephemeral",
                Some("in-tree-storage-class"),
                None,
            ));
            (
                ephemeral_named(Some("in-tree-storage-class")),
                ephemeral_named(Some("in-tree-storage-class")),
            )
        } else {
            objects.push(volume(
                "my-volume",
                "in-tree-storage-class",
                json!({"awsElasticBlockStore": {"volumeID": "vol-0123", "fsType": "ext4"}}),
                &[&[(ZONE, &["test-zone-1"])]],
            ));
            objects.push(claim(
                "pvc-1",
                Some("in-tree-storage-class"),
                Some("my-volume"),
            ));
            objects.push(claim("pvc-2", Some("in-tree-storage-class"), None));
            (claims(&["pvc-1"]), claims(&["pvc-2"]))
        };
        objects.push(running("initial", "n1", json!({}), first));
        objects.push(pod("second", second));
        assert_second_gets_a_new_node(objects);
    }
}

/// VolumeUsage "should schedule pods when a valid multi-volume topology alternative remains
/// after pruning disjoint branches" on `fake.InstanceTypes(5)`: class A allows `special`
/// required OR optional, class B (zone 1 AND optional) OR (zone 2 AND required); only
/// fake-it-4 has `special` (optional), so the pod lands in test-zone-1 on it. `special` is
/// played by `instance-gpu-count` as in `provider_labels_and_tight_packing_on_five_types`:
/// optional = "1", required = "2" (no type has it).
#[test]
fn multi_volume_topology_keeps_the_alternative_left() {
    const SPECIAL: &str = "karpenter.k8s.aws/instance-gpu-count";
    let objects = vec![
        pool("default", vec![any_capacity()], json!({})),
        storage_class(
            "pruned-overlap-a",
            "test-provisioner",
            &[&[(SPECIAL, &["2"])], &[(SPECIAL, &["1"])]],
        ),
        storage_class(
            "pruned-overlap-b",
            "test-provisioner",
            &[
                &[(ZONE, &["test-zone-1"]), (SPECIAL, &["1"])],
                &[(ZONE, &["test-zone-2"]), (SPECIAL, &["2"])],
            ],
        ),
        claim("pvc-a", Some("pruned-overlap-a"), None),
        claim("pvc-b", Some("pruned-overlap-b"), None),
        pod("p", claims(&["pvc-a", "pvc-b"])),
    ];
    let p = plan_on(&five_types_catalog("five-types-volumes.yaml"), objects);
    p.assert_pending(&[]);
    assert_eq!(p.label("p", ZONE), Some("test-zone-1"), "{:#}", p.json);
    assert_eq!(p.label("p", SPECIAL), Some("1"));
    assert_eq!(p.label("p", INSTANCE_TYPE), Some("fake-it-4"));
}

/// provisioning suite › Daemonsets "should remove daemonset node hostname affinity when
/// considering daemonset schedulability": the DaemonSet (4 CPU / 4Gi, requiring `foo In
/// [bar]`, which the pool's template labels) has a pending pod of 2 CPU / 2Gi (a LimitRange's
/// override) pinned to one node by name; its requests with the DaemonSet's own affinity make the
/// overhead, so a 1-CPU pod selecting `foo: bar` launches the 4 CPU / 4Gi type (2Gi: the
/// DaemonSet ignored; the 16-CPU type: the template's requests).
#[test]
fn a_daemonsets_pinned_pod_gives_its_requests_not_its_node_affinity() {
    let ds = daemonset(
        "ds",
        cpu_mem("4", "4Gi"),
        required(vec![req("foo", "In", &["bar"])])["spec"].clone(),
    );
    let ds_pod = sized(
        "ds-pod",
        cpu_mem("2", "2Gi"),
        both(
            json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                "name": "ds", "uid": "uid-ds", "controller": true}]}}),
            required(vec![req("metadata.name", "In", &["node-name"])]),
        ),
    );
    let p = prov(
        json!({"metadata": {"labels": {"foo": "bar"}}}),
        vec![
            ds,
            ds_pod,
            sized("p", cpu_mem("1", "1Gi"), selector(&[("foo", "bar")])),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(
        p.label("p", INSTANCE_TYPE),
        Some("default-instance-type"),
        "{:#}",
        p.json
    );
}
