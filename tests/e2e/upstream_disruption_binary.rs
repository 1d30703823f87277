//! Karpenter's disruption unit tests (core v1.14.1 `pkg/controllers/disruption/*_test.go`,
//! `pkg/controllers/nodeclaim/expiration/suite_test.go`, `pkg/apis/v1/nodepool_budgets_test.go`)
//! replayed through the built binary from manifests: `consolidate -f - --now T -o json
//! --catalog FILE`. Where docs/upstream-tests.md mirrors an It by an engine-level test (the model
//! built directly), this one goes the whole way: Node/NodeClaim/Pod/PDB parsing, conditions,
//! annotations, owner references, budgets from YAML, the report's rendering.
//!
//! The catalog is upstream's `fake.InstanceTypesAssorted()` (`pkg/cloudprovider/fake/
//! instancetype.go`): 7 CPU sizes × 8 memory sizes × 3 zones × spot/on-demand, one offering
//! each, priced `0.1 × cpu + 0.1 × memory GB`, 5 pods, 100m/10Mi kube-reserved — its
//! linux/amd64 quarter: the windows and arm64 copies cost the same and no It's pod selects
//! them, so they change no decision, only the time each run takes. Nodes are `test.NodeClaimAndNode`'s: the NodeClaim's labels and
//! `status.allocatable` (32 CPU, 100 pods) on both, initialized, `Consolidatable` set as the It
//! sets it. Each test names its upstream file and It; the ledger is docs/upstream-tests.md
//! "Disruption Its through the binary (s19-bdisr)".

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::support::{karpenter, manifest_stream, write_temp};

/// The report clock.
pub(crate) const NOW: &str = "2024-06-24T12:00:00Z";
/// When the nodes were launched and initialized (an hour before [`NOW`]).
pub(crate) const EARLIER: &str = "2024-06-24T11:00:00Z";

/// `mostExpensiveInstance` / `mostExpensiveSpotInstance` / `leastExpensiveInstance` /
/// `leastExpensiveSpotInstance` of the assorted catalog (ties broken by the first generated).
pub(crate) const MOST: &str = "64-cpu-128-mem-amd64-linux-test-zone-1-on-demand";
pub(crate) const MOST_SPOT: &str = "64-cpu-128-mem-amd64-linux-test-zone-1-spot";
pub(crate) const LEAST: &str = "1-cpu-1-mem-amd64-linux-test-zone-1-on-demand";
pub(crate) const LEAST_SPOT: &str = "1-cpu-1-mem-amd64-linux-test-zone-1-spot";

/// `fake.PriceFromResources`.
pub(crate) fn fake_price(cpu: u32, mem_gi: u32) -> f64 {
    0.1 * f64::from(cpu) + 0.1 * f64::from(mem_gi) * 1_073_741_824.0 / 1e9
}

/// `fake.InstanceTypesAssorted()` (its linux/amd64 quarter) as a `--catalog` document.
pub(crate) fn assorted() -> Value {
    let mut types = Vec::new();
    for cpu in [1, 2, 4, 8, 16, 32, 64] {
        for mem in [1, 2, 4, 8, 16, 32, 64, 128] {
            for zone in ["test-zone-1", "test-zone-2", "test-zone-3"] {
                for ct in ["spot", "on-demand"] {
                    types.push(fake_type(
                        &format!("{cpu}-cpu-{mem}-mem-amd64-linux-{zone}-{ct}"),
                        cpu,
                        mem,
                        vec![offering(zone, ct, fake_price(cpu, mem), true)],
                    ));
                }
            }
        }
    }
    json!({ "instanceTypes": types })
}

/// One `fake.NewInstanceType` (amd64, linux): its resources, 5 pods, 100m/10Mi kube-reserved.
pub(crate) fn fake_type(name: &str, cpu: u32, mem_gi: u32, offerings: Vec<Value>) -> Value {
    json!({"name": name,
           "capacity": {"cpu": cpu.to_string(), "memory": format!("{mem_gi}Gi"), "pods": "5"},
           "overhead": {"cpu": "100m", "memory": "10Mi"},
           "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
           "offerings": offerings})
}

pub(crate) fn offering(zone: &str, ct: &str, price: f64, available: bool) -> Value {
    json!({"zone": zone, "capacityType": ct, "price": price, "available": available})
}

/// The assorted catalog, written once.
pub(crate) fn assorted_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        write_temp(
            "s19-bdisr-assorted.json",
            serde_json::to_string(&assorted()).unwrap().as_bytes(),
        )
    })
    .clone()
}

/// `test.NodePool` as the disruption suites set it: WhenEmptyOrUnderutilized, consolidateAfter
/// 0s, one budget of 100 %.
pub(crate) fn pool(name: &str) -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
                                "budgets": [{"nodes": "100%"}]},
                 "template": {"spec": {"requirements": [],
                     "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}})
}

pub(crate) fn class() -> Value {
    json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                 "subnetSelectorTerms": [{"id": "subnet-a"}], "securityGroupSelectorTerms": [{"id": "sg-a"}]}})
}

/// A type name's zone and capacity type (`…-test-zone-1-on-demand`).
pub(crate) fn zone_and_ct(it: &str) -> (String, String) {
    let (rest, ct) = if let Some(r) = it.strip_suffix("-on-demand") {
        (r, "on-demand")
    } else {
        (it.strip_suffix("-spot").unwrap_or(it), "spot")
    };
    let zone = rest
        .rfind("test-zone-")
        .map(|i| rest[i..].to_string())
        .unwrap_or_else(|| "test-zone-1".into());
    (zone, ct.to_string())
}

/// One scenario's cluster and flags.
#[derive(Clone)]
pub(crate) struct Sc {
    pub(crate) objects: Vec<Value>,
    pub(crate) catalog: Option<Value>,
    pub(crate) flags: Vec<String>,
    pub(crate) now: String,
}

impl Sc {
    /// The default pool, its class; the `SpotToSpotConsolidation` gate on as consolidation_test.go's
    /// BeforeEach sets it.
    pub(crate) fn new() -> Sc {
        Sc {
            objects: vec![pool("default"), class()],
            catalog: None,
            flags: vec![
                "--feature-gates".into(),
                "SpotToSpotConsolidation=true".into(),
            ],
            now: NOW.into(),
        }
    }

    pub(crate) fn gate_off(mut self) -> Sc {
        self.flags = vec![
            "--feature-gates".into(),
            "SpotToSpotConsolidation=false".into(),
        ];
        self
    }

    pub(crate) fn find(&mut self, kind: &str, name: &str) -> &mut Value {
        self.objects
            .iter_mut()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    pub(crate) fn pool(&mut self, name: &str) -> &mut Value {
        self.find("NodePool", name)
    }

    pub(crate) fn disruption(&mut self, name: &str) -> &mut Value {
        &mut self.pool(name)["spec"]["disruption"]
    }

    pub(crate) fn node_obj(&mut self, name: &str) -> &mut Value {
        self.find("Node", name)
    }

    pub(crate) fn claim(&mut self, node: &str) -> &mut Value {
        self.find("NodeClaim", &format!("{node}-claim"))
    }

    pub(crate) fn push(&mut self, o: Value) -> &mut Sc {
        self.objects.push(o);
        self
    }

    /// `test.NodeClaimAndNode` of pool `default`, type `it`, 32 CPU and 100 pods allocatable,
    /// initialized an hour ago, `Consolidatable=True`.
    pub(crate) fn node(&mut self, name: &str, it: &str) -> &mut Sc {
        self.node_with(name, "default", it, &[("cpu", "32"), ("pods", "100")])
    }

    pub(crate) fn node_with(
        &mut self,
        name: &str,
        pool: &str,
        it: &str,
        alloc: &[(&str, &str)],
    ) -> &mut Sc {
        let (zone, ct) = zone_and_ct(it);
        let alloc: serde_json::Map<String, Value> =
            alloc.iter().map(|(k, v)| ((*k).into(), json!(v))).collect();
        let labels = json!({"karpenter.sh/nodepool": pool, "node.kubernetes.io/instance-type": it,
            "karpenter.sh/capacity-type": ct, "topology.kubernetes.io/zone": zone,
            "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
            "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"});
        let provider = format!("aws:///{zone}/i-{name}");
        self.objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": EARLIER, "labels": labels, "annotations": {}},
            "spec": {"providerID": provider},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "capacity": alloc, "allocatable": alloc}}));
        self.objects.push(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": format!("{name}-claim"), "creationTimestamp": EARLIER,
                         "labels": labels, "annotations": {}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                     "requirements": [], "expireAfter": "Never"},
            "status": {"nodeName": name, "providerID": provider, "capacity": alloc, "allocatable": alloc,
                       "conditions": [
                           {"type": "Launched", "status": "True", "lastTransitionTime": EARLIER},
                           {"type": "Registered", "status": "True", "lastTransitionTime": EARLIER},
                           {"type": "Initialized", "status": "True", "lastTransitionTime": EARLIER},
                           {"type": "Consolidatable", "status": "True", "lastTransitionTime": EARLIER}]}}));
        self
    }

    /// `count` nodes `n0`… of type `it`.
    pub(crate) fn nodes(&mut self, count: usize, it: &str) -> &mut Sc {
        for i in 0..count {
            self.node(&format!("n{i}"), it);
        }
        self
    }

    /// Sets a condition on the node's NodeClaim (replacing one of that type).
    pub(crate) fn condition(&mut self, node: &str, kind: &str, status: &str, at: &str) -> &mut Sc {
        let conditions = self.claim(node)["status"]["conditions"]
            .as_array_mut()
            .unwrap();
        conditions.retain(|c| c["type"] != kind);
        conditions.push(
            json!({"type": kind, "status": status, "lastTransitionTime": at,
                               "reason": kind, "message": ""}),
        );
        self
    }

    pub(crate) fn drop_condition(&mut self, node: &str, kind: &str) -> &mut Sc {
        self.claim(node)["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["type"] != kind);
        self
    }

    /// The node's NodeClaim is being deleted (a deletion timestamp, Karpenter's finalizer).
    pub(crate) fn deleting(&mut self, node: &str) -> &mut Sc {
        let meta = &mut self.claim(node)["metadata"];
        meta["deletionTimestamp"] = json!(NOW);
        meta["finalizers"] = json!(["karpenter.sh/termination"]);
        self
    }

    /// Registered, not initialized: no `Initialized` condition, no `karpenter.sh/initialized`.
    pub(crate) fn uninitialized(&mut self, node: &str) -> &mut Sc {
        self.drop_condition(node, "Initialized");
        self.drop_condition(node, "Consolidatable");
        self.unlabel(node, "karpenter.sh/initialized")
    }

    /// Drifted=True since `at` (and no `Consolidatable`, as drift_test.go's BeforeEach).
    pub(crate) fn drifted(&mut self, node: &str, at: &str) -> &mut Sc {
        self.drop_condition(node, "Consolidatable");
        self.condition(node, "Drifted", "True", at)
    }

    pub(crate) fn annotate_node(&mut self, node: &str, key: &str, value: &str) -> &mut Sc {
        self.node_obj(node)["metadata"]["annotations"][key] = json!(value);
        self
    }

    /// A label removed from the node and its NodeClaim.
    pub(crate) fn unlabel(&mut self, node: &str, key: &str) -> &mut Sc {
        self.node_obj(node)["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove(key);
        self.claim(node)["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove(key);
        self
    }

    /// A Running, Ready pod of ReplicaSet `rs` (`test.Pod` with an owner reference), bound
    /// to `node`, requesting `cpu` ("" for none: `test.Pod`'s default).
    pub(crate) fn pod(&mut self, name: &str, node: &str, cpu: &str) -> &mut Sc {
        let p = pod_value(name, Some(node), cpu, Some(("ReplicaSet", "rs")));
        self.push(p)
    }

    /// `count` pods `{prefix}0…` on `node`.
    pub(crate) fn pods(&mut self, prefix: &str, count: usize, node: &str, cpu: &str) -> &mut Sc {
        for i in 0..count {
            self.pod(&format!("{prefix}{i}"), node, cpu);
        }
        self
    }

    /// `karpenter.sh/do-not-disrupt: value` on the pod, started now (a duration counts from
    /// the pod's start).
    pub(crate) fn dnd(&mut self, pod: &str, value: &str) -> &mut Sc {
        let p = self.pod_mut(pod);
        p["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!(value);
        p["status"]["startTime"] = json!(NOW);
        self
    }

    pub(crate) fn pod_mut(&mut self, name: &str) -> &mut Value {
        self.find("Pod", name)
    }

    pub(crate) fn catalog(mut self, c: Value) -> Sc {
        self.catalog = Some(c);
        self
    }

    pub(crate) fn at(mut self, now: &str) -> Sc {
        self.now = now.into();
        self
    }

    pub(crate) fn yaml(&self) -> String {
        manifest_stream(&self.objects)
    }

    pub(crate) fn catalog_path(&self, tag: &str) -> PathBuf {
        match &self.catalog {
            None => assorted_path(),
            Some(c) => write_temp(
                &format!("s19-bdisr-{tag}.json"),
                serde_json::to_string(c).unwrap().as_bytes(),
            ),
        }
    }

    /// `nodes -f - --now NOW --catalog … -o json` and `flags` (exit 0): the view of the same
    /// scenario, its CONSOLIDATION column deciding as `consolidate -f` does.
    pub(crate) fn nodes_doc(&self, tag: &str, flags: &[&str]) -> Value {
        let catalog = self.catalog_path(tag);
        let catalog = catalog.to_string_lossy();
        let mut args = vec![
            "nodes",
            "-f",
            "-",
            "--now",
            &self.now,
            "--catalog",
            &catalog,
            "-o",
            "json",
        ];
        args.extend(flags);
        let run = karpenter(&args, self.yaml().as_bytes());
        assert_eq!(run.code, 0, "{tag} {flags:?}: {}", run.stderr);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{tag}: not JSON ({e}): {}\n{}", run.stdout, run.stderr))
    }

    /// `consolidate -f - --now NOW -o json --catalog …` (exit 0 or 1).
    pub(crate) fn run(&self, tag: &str) -> Report {
        let catalog = self.catalog_path(tag);
        let catalog = catalog.to_string_lossy();
        let mut args: Vec<&str> = vec![
            "consolidate",
            "-f",
            "-",
            "--now",
            &self.now,
            "-o",
            "json",
            "--catalog",
            &catalog,
        ];
        args.extend(self.flags.iter().map(String::as_str));
        // Kept beside the catalog for a failing scenario's reader.
        write_temp(&format!("s19-bdisr-{tag}.yaml"), self.yaml().as_bytes());
        let run = karpenter(&args, self.yaml().as_bytes());
        assert!(
            run.code == 0 || run.code == 1,
            "{tag}: exit {}\n{}",
            run.code,
            run.stderr
        );
        let doc: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{tag}: not JSON ({e}): {}\n{}", run.stdout, run.stderr));
        assert_eq!(
            run.code,
            i32::from(!doc["actions"].as_array().unwrap().is_empty()),
            "{tag}: exit code says whether there are actions"
        );
        Report {
            tag: tag.into(),
            doc,
        }
    }
}

/// A pod (`owner`: kind and name of its controller, `None` for a bare pod).
pub(crate) fn pod_value(
    name: &str,
    node: Option<&str>,
    cpu: &str,
    owner: Option<(&str, &str)>,
) -> Value {
    let resources = if cpu.is_empty() {
        json!({})
    } else {
        json!({"requests": {"cpu": cpu}})
    };
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "test"},
                     "creationTimestamp": EARLIER, "annotations": {}},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": resources}]},
        "status": {"phase": "Running", "startTime": EARLIER,
                   "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]}});
    if let Some(node) = node {
        p["spec"]["nodeName"] = json!(node);
    } else {
        p["status"] = json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]});
    }
    if let Some((kind, owner)) = owner {
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": owner,
            "uid": format!("uid-{owner}"), "controller": true, "blockOwnerDeletion": true}]);
    }
    p
}

/// `test.PodDisruptionBudget` selecting `app: test`, `maxUnavailable: 0`, with the status the
/// It gives it (`disruptionsAllowed: 0`) when `status`.
pub(crate) fn pdb(name: &str, namespace: &str, status: bool) -> Value {
    let mut p = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "test"}}}});
    if status {
        p["status"] = json!({"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1,
                             "desiredHealthy": 1, "expectedPods": 1});
    }
    p
}

pub(crate) struct Report {
    pub(crate) tag: String,
    pub(crate) doc: Value,
}

impl Report {
    pub(crate) fn row(&self, node: &str) -> &Value {
        self.doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == node)
            .unwrap_or_else(|| panic!("{}: no row {node}\n{:#}", self.tag, self.doc))
    }

    /// `decision/method` of a node (`none` alone when left).
    pub(crate) fn of(&self, node: &str) -> String {
        let r = self.row(node);
        match r["method"].as_str() {
            Some(m) => format!("{}/{m}", r["decision"].as_str().unwrap()),
            None => r["decision"].as_str().unwrap().to_string(),
        }
    }

    pub(crate) fn reason(&self, node: &str) -> String {
        self.row(node)["reason"].as_str().unwrap_or("").to_string()
    }

    /// Asserts each node's `decision/method`.
    pub(crate) fn expect(&self, want: &[(&str, &str)]) -> &Report {
        for (node, d) in want {
            assert_eq!(
                self.of(node),
                *d,
                "{}: node {node}\n{:#}",
                self.tag,
                self.doc
            );
        }
        self
    }

    /// Asserts the node is left and its reason contains every `part`.
    pub(crate) fn left_because(&self, node: &str, parts: &[&str]) -> &Report {
        assert_eq!(
            self.of(node),
            "none",
            "{}: node {node}\n{:#}",
            self.tag,
            self.doc
        );
        let why = self.reason(node);
        for p in parts {
            assert!(
                why.contains(p),
                "{}: {node}'s reason {why:?} lacks {p:?}",
                self.tag
            );
        }
        self
    }

    pub(crate) fn actions(&self) -> &Vec<Value> {
        self.doc["actions"].as_array().unwrap()
    }

    /// How many nodes are disrupted (any method).
    pub(crate) fn disrupted(&self) -> usize {
        self.doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["decision"] != "none")
            .count()
    }

    /// The first action's replacement types.
    pub(crate) fn replacement_types(&self, node: &str) -> Vec<String> {
        let a = self
            .actions()
            .iter()
            .find(|a| a["nodes"].as_array().unwrap().iter().any(|n| n == node))
            .unwrap_or_else(|| panic!("{}: no action for {node}", self.tag));
        a["replacement"]["instanceTypes"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no replacement: {a:#}", self.tag))
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// consolidation_test.go › Events (the events are the rows' reasons here)
// ---------------------------------------------------------------------------------------------

/// "should not fire an event for ConsolidationDisabled when the NodePool has consolidation set
/// to WhenEmptyOrUnderutilized" (the node is empty: emptiness takes it) and "should fire an
/// event for ConsolidationDisabled when the NodePool has consolidation set to WhenEmpty"
/// (consolidateAfter 1m, a pod) and "… consolidateAfter set to 'Never'".
#[test]
fn events_consolidation_disabled() {
    let mut sc = Sc::new();
    sc.node("n0", MOST);
    sc.run("ev-enabled").expect(&[("n0", "delete/emptiness")]);

    let mut sc = Sc::new();
    sc.node("n0", MOST).pod("p0", "n0", "");
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
    sc.disruption("default")["consolidateAfter"] = json!("1m");
    sc.run("ev-when-empty").left_because("n0", &["WhenEmpty"]);

    let mut sc = Sc::new();
    sc.node("n0", MOST).pod("p0", "n0", "");
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    sc.run("ev-never").left_because("n0", &["Never"]);
}

/// "should fire an event when a candidate does not have a resolvable instance type", "… the
/// capacity type label", "… the zone label": the label gone from node and NodeClaim.
#[test]
fn events_a_candidate_without_type_capacity_type_or_zone_label() {
    for (tag, key) in [
        ("ev-no-type", "node.kubernetes.io/instance-type"),
        ("ev-no-ct", "karpenter.sh/capacity-type"),
        ("ev-no-zone", "topology.kubernetes.io/zone"),
    ] {
        let mut sc = Sc::new();
        sc.node("n0", MOST).pod("p0", "n0", "").unlabel("n0", key);
        let r = sc.run(tag);
        assert_eq!(r.of("n0"), "none", "{tag}: {:#}", r.doc);
        assert!(!r.reason("n0").is_empty(), "{tag}: a reason");
    }
}

// ---------------------------------------------------------------------------------------------
// consolidation_test.go › Budgets (10 nodes of the most expensive type, 32 CPU, 100 pods)
// ---------------------------------------------------------------------------------------------

pub(crate) fn ten_nodes(budget: &str) -> Sc {
    let mut sc = Sc::new();
    sc.nodes(10, MOST);
    sc.disruption("default")["budgets"] = json!([{ "nodes": budget }]);
    sc
}

/// "should only allow 3 empty nodes to be disrupted" (30 %), "should allow all empty nodes to
/// be disrupted" (100 %), "should allow no empty nodes to be disrupted" (0 %).
#[test]
fn budgets_cap_empty_nodes() {
    let r = ten_nodes("30%").run("bud-30");
    assert_eq!(r.disrupted(), 3, "{:#}", r.doc);
    assert_eq!(r.actions().len(), 1, "one command");
    assert_eq!(r.actions()[0]["method"], "emptiness");
    let left: Vec<_> = (0..10)
        .map(|i| format!("n{i}"))
        .filter(|n| r.of(n) == "none")
        .collect();
    assert!(
        r.reason(&left[0]).contains("budget"),
        "{}",
        r.reason(&left[0])
    );

    let r = ten_nodes("100%").run("bud-100");
    assert_eq!(r.disrupted(), 10);
    assert_eq!(r.actions().len(), 1, "one command");

    let r = ten_nodes("0%").run("bud-0");
    assert_eq!(r.disrupted(), 0);
    r.left_because("n0", &["budget"]);
}

/// "should only allow 3 nodes to be deleted in multi node consolidation delete": a 100m pod on
/// each, all fit on one node; the budget lets 3 go.
#[test]
fn budgets_cap_multi_node_delete() {
    let mut sc = ten_nodes("30%");
    for i in 0..10 {
        sc.pod(&format!("p{i}"), &format!("n{i}"), "100m");
    }
    let r = sc.run("bud-multi");
    assert_eq!(r.disrupted(), 3, "{:#}", r.doc);
    assert_eq!(r.actions()[0]["method"], "multi");
    assert_eq!(r.actions()[0]["decision"], "delete");
}

/// "should only allow 3 nodes to be deleted in single node consolidation delete": 15-CPU pods,
/// two fit a node: multi-node fails, single-node deletes one per pass, 3 in all.
#[test]
fn budgets_cap_single_node_delete() {
    let mut sc = ten_nodes("30%");
    for i in 0..10 {
        sc.pod(&format!("p{i}"), &format!("n{i}"), "15");
    }
    let r = sc.run("bud-single");
    assert_eq!(r.disrupted(), 3, "{:#}", r.doc);
    for a in r.actions() {
        assert_eq!(a["decision"], "delete", "{a:#}");
    }
}

/// "should allow 2 nodes from each nodePool to be deleted" (10 pools × 3 empty nodes, 50 %:
/// 1.5 rounds up to 2), "… all nodes from each nodePool" (100 %), "… no nodes" (0 %).
#[test]
fn budgets_count_per_nodepool() {
    for (budget, per_pool) in [("50%", 2), ("100%", 3), ("0%", 0)] {
        let mut sc = Sc::new();
        sc.objects.retain(|o| o["kind"] != "NodePool");
        for p in 0..10 {
            let name = format!("pool-{p}");
            let mut np = pool(&name);
            np["spec"]["disruption"]["budgets"] = json!([{ "nodes": budget }]);
            sc.push(np);
            for n in 0..3 {
                sc.node_with(
                    &format!("p{p}-n{n}"),
                    &name,
                    MOST,
                    &[("cpu", "32"), ("pods", "100")],
                );
            }
        }
        let r = sc.run(&format!("bud-pools-{budget}"));
        for p in 0..10 {
            let gone = (0..3)
                .filter(|n| r.of(&format!("p{p}-n{n}")) != "none")
                .count();
            assert_eq!(gone, per_pool, "budget {budget}, pool-{p}: {:#}", r.doc);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// consolidation_test.go › Replace
// ---------------------------------------------------------------------------------------------

/// DescribeTable "can replace node" (on-demand and spot Entries): one pod on the most
/// expensive node; a cheaper NodeClaim holds it, not of the most expensive type.
#[test]
fn replace_can_replace_node() {
    for (tag, it) in [("rep-od", MOST), ("rep-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        sc.node("n0", it).pod("p0", "n0", "");
        let r = sc.run(tag);
        r.expect(&[("n0", "replace/single")]);
        let types = r.replacement_types("n0");
        assert!(!types.contains(&it.to_string()), "{tag}: {types:?}");
    }
}

/// "cannot replace spot with spot if the spotToSpotConsolidation is disabled".
#[test]
fn replace_spot_to_spot_needs_the_gate() {
    let mut sc = Sc::new().gate_off();
    sc.node("n0", MOST_SPOT).pod("p0", "n0", "");
    let r = sc.run("rep-s2s-off");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
}

/// "cannot replace spot with spot if less than minimum InstanceTypes flexibility": the pool
/// allows the current type and a cheaper one only (spot).
#[test]
fn replace_spot_to_spot_needs_fifteen_cheaper_types() {
    let mut sc = Sc::new();
    let cheaper = "32-cpu-64-mem-amd64-linux-test-zone-1-spot";
    sc.node("n0", MOST_SPOT).pod("p0", "n0", "");
    sc.pool("default")["spec"]["template"]["spec"]["requirements"] = json!([
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [MOST_SPOT, cheaper]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]);
    sc.run("rep-s2s-15").left_because("n0", &["15"]);
}

/// DescribeTable "can replace nodes, considers PDB" (both Entries): 3 pods behind a PDB at 0
/// (status `disruptionsAllowed: 0`).
#[test]
fn replace_considers_pdb() {
    for (tag, it) in [("rep-pdb-od", MOST), ("rep-pdb-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        sc.node("n0", it)
            .pods("p", 3, "n0", "")
            .push(pdb("pdb", "default", true));
        sc.run(tag).left_because("n0", &["PDB default/pdb"]);
    }
}

/// DescribeTable "can replace nodes, considers PDB policy": the PDB is at 0 but
/// `unhealthyPodEvictionPolicy: AlwaysAllow` and every pod is unready: replaced.
#[test]
fn replace_considers_pdb_policy() {
    for (tag, it) in [("rep-pdbpol-od", MOST), ("rep-pdbpol-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        let mut budget = pdb("pdb", "default", true);
        budget["spec"]["unhealthyPodEvictionPolicy"] = json!("AlwaysAllow");
        sc.node("n0", it).pods("p", 3, "n0", "").push(budget);
        for i in 0..3 {
            sc.pod_mut(&format!("p{i}"))["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}]);
        }
        sc.run(tag).expect(&[("n0", "replace/single")]);
    }
}

/// DescribeTable "can replace nodes, PDB namespace must match": the PDB is in another
/// namespace.
#[test]
fn replace_pdb_namespace_must_match() {
    for (tag, it) in [("rep-pdbns-od", MOST), ("rep-pdbns-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        sc.node("n0", it)
            .pod("p0", "n0", "")
            .push(pdb("pdb", "other", true));
        sc.run(tag).expect(&[("n0", "replace/single")]);
    }
}

/// DescribeTables "can replace nodes, considers karpenter.sh/do-not-disrupt set to true on
/// nodes" and "… on pods".
#[test]
fn replace_considers_do_not_disrupt() {
    for (tag, it) in [("rep-dnd-od", MOST), ("rep-dnd-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        sc.node("n0", it).pod("p0", "n0", "");
        sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "true");
        sc.run(tag).left_because("n0", &["do-not-disrupt"]);

        let mut sc = Sc::new();
        sc.node("n0", it).pod("p0", "n0", "");
        sc.pod_mut("p0")["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("true");
        sc.run(&format!("{tag}-pod"))
            .left_because("n0", &["do-not-disrupt", "default/p0"]);
    }
}

/// The two instance types of "won't replace … if … replacement is more expensive":
/// `current-on-demand` (price 0.5, its one offering unavailable) and the replacement.
fn current_and(replacement: Value) -> Value {
    json!({"instanceTypes": [
        fake_type("current-on-demand", 4, 4, vec![offering("test-zone-1a", "on-demand", 0.5, false)]),
        replacement]})
}

/// "won't replace node if any spot replacement is more expensive" (spot offerings at 1.0, 0.2
/// and 0.4: the worst is above 0.5) and "won't replace on-demand node if on-demand replacement
/// is more expensive" (on-demand at 0.6).
#[test]
fn replace_compares_the_worst_launch_price() {
    let spot = fake_type(
        "potential-spot-replacement",
        4,
        4,
        vec![
            offering("test-zone-1a", "spot", 1.0, true),
            offering("test-zone-1b", "spot", 0.2, true),
            offering("test-zone-1c", "spot", 0.4, true),
        ],
    );
    let od = fake_type(
        "on-demand-replacement",
        4,
        4,
        vec![
            offering("test-zone-1a", "on-demand", 0.6, true),
            offering("test-zone-1b", "on-demand", 0.6, true),
            offering("test-zone-1b", "spot", 0.2, true),
            offering("test-zone-1c", "spot", 0.3, true),
        ],
    );
    for (tag, replacement) in [("rep-worse-spot", spot), ("rep-worse-od", od)] {
        let mut sc = Sc::new().catalog(current_and(replacement));
        sc.node("n0", "current-on-demand");
        sc.node_obj("n0")["metadata"]["labels"]["topology.kubernetes.io/zone"] =
            json!("test-zone-1a");
        sc.claim("n0")["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("test-zone-1a");
        sc.node_obj("n0")["metadata"]["labels"]["karpenter.sh/capacity-type"] = json!("on-demand");
        sc.claim("n0")["metadata"]["labels"]["karpenter.sh/capacity-type"] = json!("on-demand");
        sc.pod("p0", "n0", "");
        if tag == "rep-worse-od" {
            // "nodePool should require on-demand instance for this test case".
            sc.pool("default")["spec"]["template"]["spec"]["requirements"] = json!([
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]);
        }
        let r = sc.run(tag);
        assert_eq!(r.of("n0"), "none", "{tag}: {:#}", r.doc);
        assert!(
            r.reason("n0").contains("0.5"),
            "{tag}: the node's price named: {}",
            r.reason("n0")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// consolidation_test.go › Delete (two nodes of the least expensive type, 32 CPU, 100 pods)
// ---------------------------------------------------------------------------------------------

/// Two pods on n0, one on n1.
pub(crate) fn two_nodes_three_pods() -> Sc {
    let mut sc = Sc::new();
    sc.nodes(2, LEAST)
        .pod("p0", "n0", "")
        .pod("p1", "n0", "")
        .pod("p2", "n1", "");
    sc
}

/// "can delete nodes": n1 (one pod, the cheaper to disrupt) goes. Multi-node finds nothing
/// (both nodes → one NodeClaim of the cheapest type is dropped by `filterOutSameInstanceType`:
/// every option costs at least the removed type), so single-node deletes.
#[test]
fn delete_can_delete_nodes() {
    let r = two_nodes_three_pods().run("del");
    assert_eq!(r.disrupted(), 1, "{:#}", r.doc);
    r.expect(&[("n1", "delete/single"), ("n0", "none")]);
    assert!(
        r.reason("n0").contains("receives pods from n1"),
        "{}",
        r.reason("n0")
    );
}

/// "can delete nodes while an invalid node pool exists": a second pool whose node class does
/// not exist (no instance types) changes nothing. ("… if another nodePool has no node
/// template" never applies its pool; a v1 NodePool without `nodeClassRef` is refused by the CRD
/// and is bad input here.)
#[test]
fn delete_beside_a_pool_without_a_node_class() {
    let mut sc = two_nodes_three_pods();
    let mut other = pool("bad-nodepool");
    other["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!("non-existent");
    sc.push(other);
    let r = sc.run("del-other-pool");
    assert_eq!(r.disrupted(), 1, "{:#}", r.doc);
    assert_eq!(r.of("n1"), "delete/single", "{:#}", r.doc);
}

/// "can delete nodes, when non-Karpenter capacity can fit pods": the three pods on n0, an
/// unmanaged node of 32 CPU beside it.
#[test]
fn delete_onto_non_karpenter_capacity() {
    let mut sc = Sc::new();
    sc.node("n0", LEAST).pods("p", 3, "n0", "");
    sc.push(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "unmanaged", "creationTimestamp": EARLIER,
                     "labels": {"kubernetes.io/hostname": "unmanaged", "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64"}},
        "spec": {"providerID": "aws:///test-zone-1/i-unmanaged"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "allocatable": {"cpu": "32", "pods": "100"}, "capacity": {"cpu": "32", "pods": "100"}}}));
    let r = sc.run("del-unmanaged");
    assert_eq!(
        r.doc["nodes"].as_array().unwrap().len(),
        1,
        "only managed rows"
    );
    assert_ne!(r.of("n0"), "none", "{:#}", r.doc);
    assert_eq!(r.row("n0")["decision"], "delete");
}

/// "can delete nodes, considers PDB": n1's pod is behind a PDB at 0, so n0 goes.
#[test]
fn delete_considers_pdb() {
    let mut sc = Sc::new();
    sc.nodes(2, LEAST)
        .pod("p0", "n0", "")
        .pod("p1", "n0", "")
        .pod("p2", "n1", "");
    for p in ["p0", "p1"] {
        sc.pod_mut(p)["metadata"]["labels"] = json!({"app": "other"});
    }
    sc.push(pdb("pdb", "default", true));
    let r = sc.run("del-pdb");
    r.left_because("n1", &["PDB default/pdb"]);
    assert_eq!(r.row("n0")["decision"], "delete", "{:#}", r.doc);
}

/// "can delete nodes, considers karpenter.sh/do-not-disrupt set to true on nodes" / "… on
/// pods": n1 is protected, n0 goes.
#[test]
fn delete_considers_do_not_disrupt() {
    let mut sc = two_nodes_three_pods();
    sc.annotate_node("n1", "karpenter.sh/do-not-disrupt", "true");
    let r = sc.run("del-dnd-node");
    r.left_because("n1", &["do-not-disrupt"]);
    assert_eq!(r.row("n0")["decision"], "delete", "{:#}", r.doc);

    let mut sc = two_nodes_three_pods();
    sc.pod_mut("p2")["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("true");
    let r = sc.run("del-dnd-pod");
    r.left_because("n1", &["do-not-disrupt"]);
    assert_eq!(r.row("n0")["decision"], "delete", "{:#}", r.doc);
}

/// "does not consolidate nodes with karpenter.sh/do-not-disrupt set to true on pods when the
/// NodePool's TerminationGracePeriod is not nil" and "… with pods with blocking PDBs …":
/// consolidation is graceful, the grace period does not open it.
#[test]
fn delete_termination_grace_period_does_not_open_consolidation() {
    let mut sc = Sc::new();
    sc.node("n0", LEAST).pod("p0", "n0", "");
    sc.claim("n0")["spec"]["terminationGracePeriod"] = json!("5m");
    sc.pod_mut("p0")["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!("true");
    sc.run("del-tgp-dnd")
        .left_because("n0", &["do-not-disrupt"]);

    let mut sc = Sc::new();
    sc.node("n0", LEAST)
        .pod("p0", "n0", "")
        .push(pdb("pdb", "default", false));
    sc.claim("n0")["spec"]["terminationGracePeriod"] = json!("5m");
    sc.run("del-tgp-pdb")
        .left_because("n0", &["PDB default/pdb"]);
}

/// "does not consolidate nodes with pods that have a duration-based do-not-disrupt annotation
/// that is still active" (5m, started now), "can consolidate nodes after duration-based
/// do-not-disrupt annotation expires" (5m, started 10m ago), "can delete nodes, considers
/// invalid do-not-disrupt annotation format as not blocking".
#[test]
fn delete_duration_based_do_not_disrupt() {
    for (tag, value, started, blocked) in [
        ("del-dnd-active", "5m", NOW, true),
        ("del-dnd-expired", "5m", "2024-06-24T11:50:00Z", false),
        ("del-dnd-invalid", "invalid-format", NOW, false),
    ] {
        let mut sc = two_nodes_three_pods();
        let p = sc.pod_mut("p2");
        p["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!(value);
        p["status"]["startTime"] = json!(started);
        let r = sc.run(tag);
        if blocked {
            r.left_because("n1", &["do-not-disrupt"]);
        } else {
            assert_eq!(r.row("n1")["decision"], "delete", "{tag}: {:#}", r.doc);
        }
    }
}

/// "can delete nodes, evicts pods without an ownerRef".
#[test]
fn delete_evicts_pods_without_an_owner() {
    let mut sc = Sc::new();
    sc.nodes(2, LEAST);
    for (p, n) in [("p0", "n0"), ("p1", "n0"), ("p2", "n1")] {
        sc.push(pod_value(p, Some(n), "", None));
    }
    let r = sc.run("del-no-owner");
    assert_eq!(r.row("n1")["decision"], "delete", "{:#}", r.doc);
}

/// "won't delete node if it would require pods to schedule on an uninitialized node": n0 is
/// registered but not initialized.
#[test]
fn delete_not_onto_an_uninitialized_node() {
    let mut sc = two_nodes_three_pods();
    sc.uninitialized("n0");
    let r = sc.run("del-uninit");
    assert_eq!(r.disrupted(), 0, "{:#}", r.doc);
    assert_eq!(r.of("n1"), "none");
}

/// "should not consolidate pods onto a destination node that is under its consolidateAfter
/// window": consolidateAfter 1m, the nodes just initialized: nothing; two minutes later n1 goes.
#[test]
fn delete_waits_for_consolidate_after() {
    let mut sc = two_nodes_three_pods();
    sc.disruption("default")["consolidateAfter"] = json!("1m");
    for n in ["n0", "n1"] {
        sc.condition(n, "Initialized", "True", NOW);
        // Under its window v1.14's nodeclaim controller removes the condition.
        sc.drop_condition(n, "Consolidatable");
    }
    let r = sc.clone().run("del-ttl-now");
    assert_eq!(r.disrupted(), 0, "{:#}", r.doc);
    let later = sc.at("2024-06-24T12:02:00Z").run("del-ttl-later");
    assert_eq!(later.row("n1")["decision"], "delete", "{:#}", later.doc);
    assert_eq!(later.of("n0"), "none");
}

/// "should consolidate pods onto a destination node with consolidateAfter set to Never": the
/// destination's pool never consolidates, the candidate's does.
#[test]
fn delete_onto_a_destination_whose_pool_never_consolidates() {
    let mut sc = Sc::new();
    let mut dest = pool("destination");
    dest["spec"]["disruption"]["consolidateAfter"] = json!("Never");
    sc.push(dest);
    sc.node_with(
        "n0",
        "destination",
        LEAST,
        &[("cpu", "32"), ("pods", "100")],
    );
    sc.node("n1", LEAST);
    sc.pod("p0", "n0", "")
        .pod("p1", "n0", "")
        .pod("p2", "n1", "");
    let r = sc.run("del-dest-never");
    assert_eq!(r.row("n1")["decision"], "delete", "{:#}", r.doc);
    assert_eq!(r.of("n0"), "none");
}

/// "can delete nodes with a permanently pending pod": a pending pod no type holds does not stop
/// n1 going.
#[test]
fn delete_with_a_permanently_pending_pod() {
    let mut sc = two_nodes_three_pods();
    let mut pending = pod_value("pending", None, "", Some(("ReplicaSet", "rs")));
    pending["spec"]["nodeSelector"] = json!({"this-label": "does-not-exist"});
    sc.push(pending);
    let r = sc.run("del-pending");
    assert_eq!(r.row("n1")["decision"], "delete", "{:#}", r.doc);
}

/// "won't delete nodes if it would make a non-pending pod go pending": n1's pod selects a label
/// only n1 has.
#[test]
fn delete_not_if_a_pod_would_go_pending() {
    let mut sc = two_nodes_three_pods();
    sc.node_obj("n1")["metadata"]["labels"]["only"] = json!("n1");
    sc.pod_mut("p2")["spec"]["nodeSelector"] = json!({"only": "n1"});
    let r = sc.run("del-would-pend");
    assert_eq!(r.of("n1"), "none", "{:#}", r.doc);
}

/// "should replace a node with a cheaper one even when consolidateAfter has not expired" is
/// about the replacement's own window: here the candidate's window has passed and it is
/// replaced by a cheaper NodeClaim though every other node is under its window.
#[test]
fn replace_when_the_others_are_under_consolidate_after() {
    let mut sc = Sc::new();
    sc.disruption("default")["consolidateAfter"] = json!("30m");
    sc.node("n0", MOST).pod("p0", "n0", "4");
    let r = sc.run("rep-ttl");
    r.expect(&[("n0", "replace/single")]);
}

// ---------------------------------------------------------------------------------------------
// consolidation_test.go › Multi-NodeClaim, Node Lifetime, Topology, Static
// ---------------------------------------------------------------------------------------------

/// DescribeTable "can merge 3 nodes into 1" (both Entries): three most-expensive nodes, one pod
/// each: one cheaper NodeClaim replaces all three.
#[test]
fn multi_merges_three_nodes_into_one() {
    for (tag, it) in [("multi-od", MOST), ("multi-spot", MOST_SPOT)] {
        let mut sc = Sc::new();
        sc.nodes(3, it);
        for i in 0..3 {
            sc.pod(&format!("p{i}"), &format!("n{i}"), "");
        }
        let r = sc.run(tag);
        assert_eq!(r.actions()[0]["method"], "multi", "{tag}: {:#}", r.doc);
        assert_eq!(
            r.actions()[0]["nodes"].as_array().unwrap().len(),
            3,
            "{tag}"
        );
        // Three pods need no replacement at all: two go where one stays, or one NodeClaim.
        assert_eq!(r.disrupted(), 3, "{tag}");
    }
}

/// "can merge 3 nodes into 1 if the candidates have both spot and on-demand".
#[test]
fn multi_merges_spot_and_on_demand() {
    let mut sc = Sc::new();
    sc.node("n0", MOST).node("n1", MOST_SPOT).node("n2", MOST);
    for i in 0..3 {
        sc.pod(&format!("p{i}"), &format!("n{i}"), "");
    }
    let r = sc.run("multi-mixed");
    assert_eq!(r.actions()[0]["method"], "multi", "{:#}", r.doc);
    assert_eq!(r.disrupted(), 3);
}

/// DescribeTable "won't merge 2 nodes into 1 of the same type" (both Entries): two nodes of
/// the least expensive type, one pod on n0 and two on n1: not both replaced by one NodeClaim of
/// that type — n0 (fewest pods) is deleted, n1 left.
#[test]
fn multi_wont_merge_into_the_same_type() {
    for (tag, it) in [("multi-same-od", LEAST), ("multi-same-spot", LEAST_SPOT)] {
        let mut sc = Sc::new();
        sc.nodes(2, it)
            .pod("p0", "n0", "")
            .pod("p1", "n1", "")
            .pod("p2", "n1", "");
        let r = sc.run(tag);
        assert_eq!(r.disrupted(), 1, "{tag}: {:#}", r.doc);
        assert_eq!(r.row("n0")["decision"], "delete", "{tag}: {:#}", r.doc);
        assert_eq!(r.of("n1"), "none", "{tag}");
    }
}

/// DescribeTable "should consolidate multiple empty nodes via multi-nodeclaim consolidation":
/// here emptiness runs first and takes both in one command, as Karpenter's controller does
/// (emptiness before multi-node in `controller.go`'s methods).
#[test]
fn multiple_empty_nodes_go_at_once() {
    let mut sc = Sc::new();
    sc.nodes(2, MOST);
    let r = sc.run("multi-empty");
    assert_eq!(r.actions().len(), 1, "{:#}", r.doc);
    assert_eq!(r.disrupted(), 2);
}

/// "should consolidate the node with best savings ratio first" (Node Lifetime Consideration:
/// `expireAfter: 3s` on the NodeClaims, n0 created two seconds before n1, neither expired):
/// two pods on n0, one on n1; n1 has the better savings ratio and goes.
#[test]
fn best_savings_ratio_first() {
    let mut sc = two_nodes_three_pods();
    for (n, created) in [("n0", "2024-06-24T11:59:58Z"), ("n1", NOW)] {
        sc.claim(n)["spec"]["expireAfter"] = json!("3s");
        sc.claim(n)["metadata"]["creationTimestamp"] = json!(created);
        sc.node_obj(n)["metadata"]["creationTimestamp"] = json!(created);
    }
    let r = sc.run("ratio");
    assert_eq!(r.actions()[0]["nodes"], json!(["n1"]), "{:#}", r.doc);
    r.expect(&[("n1", "delete/single"), ("n0", "none")]);
}

/// "won't delete node if it would violate pod anti-affinity": two nodes, each a pod with
/// required hostname anti-affinity to the other: no delete (a replacement would be a node of
/// its own, allowed only if cheaper).
#[test]
fn topology_anti_affinity_blocks_a_delete() {
    let mut sc = Sc::new();
    sc.nodes(2, LEAST).pod("p0", "n0", "").pod("p1", "n1", "");
    for p in ["p0", "p1"] {
        sc.pod_mut(p)["spec"]["affinity"] = json!({"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "test"}},
                "topologyKey": "kubernetes.io/hostname"}]}});
    }
    let r = sc.run("anti");
    for n in ["n0", "n1"] {
        assert_ne!(r.row(n)["decision"], "delete", "{:#}", r.doc);
    }
}

/// "can replace node maintaining zonal topology spread": three nodes of 1 CPU in three zones
/// (the least expensive type in zones 1 and 3, the most expensive in zone 2), a 1-CPU pod with
/// a zone spread on each: the zone-2 node is replaced, in zone 2, by the cheapest type there
/// (on-demand → spot: launched as spot); the others are already the cheapest.
#[test]
fn topology_replacement_keeps_the_zone_spread() {
    let mut sc = Sc::new();
    let one = [("cpu", "1")];
    sc.node_with("z1", "default", LEAST, &one);
    sc.node_with(
        "z2",
        "default",
        "64-cpu-128-mem-amd64-linux-test-zone-2-on-demand",
        &one,
    );
    sc.node_with(
        "z3",
        "default",
        "1-cpu-1-mem-amd64-linux-test-zone-3-on-demand",
        &one,
    );
    for (p, n) in [("p1", "z1"), ("p2", "z2"), ("p3", "z3")] {
        sc.pod(p, n, "1");
        let p = sc.pod_mut(p);
        p["metadata"]["labels"] = json!({"app": "test-zonal-spread"});
        p["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "test-zonal-spread"}}}]);
    }
    let r = sc.run("spread");
    r.expect(&[("z2", "replace/single"), ("z1", "none"), ("z3", "none")]);
    assert_eq!(r.actions().len(), 1, "{:#}", r.doc);
    let replacement = &r.actions()[0]["replacement"];
    assert_eq!(replacement["zones"], json!(["test-zone-2"]), "{:#}", r.doc);
    // The option launched: the cheapest with a spot offering in zone 2 that holds 1 CPU beside
    // the 100m kube-reserved. **Differed, fixed**: the first option (2-cpu-1-mem on-demand) has
    // no spot offering, and the report showed `instanceType: ""`, `capacityType: ""`, `$0`.
    assert_eq!(replacement["capacityType"], "spot", "{replacement:#}");
    assert_eq!(
        replacement["instanceType"], "2-cpu-1-mem-amd64-linux-test-zone-2-spot",
        "{replacement:#}"
    );
    assert!(
        (replacement["pricePerHour"].as_f64().unwrap() - fake_price(2, 1)).abs() < 1e-9,
        "{replacement:#}"
    );
}

/// "should not consolidate static NodePool nodes" (consolidation_test.go and
/// emptiness_test.go): a pool with `replicas`.
#[test]
fn static_pool_nodes_are_not_consolidated() {
    let mut sc = Sc::new();
    sc.pool("default")["spec"]["replicas"] = json!(2);
    sc.nodes(2, MOST);
    let r = sc.run("static");
    assert_eq!(r.disrupted(), 0, "{:#}", r.doc);
}

// ---------------------------------------------------------------------------------------------
// emptiness_test.go (WhenEmpty, two nodes of the least expensive spot type)
// ---------------------------------------------------------------------------------------------

pub(crate) fn when_empty() -> Sc {
    let mut sc = Sc::new();
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
    sc.node("n0", LEAST_SPOT);
    sc
}

/// "can delete empty nodes", "can delete empty and drifted nodes", "should delete nodes with
/// the karpenter.sh/do-not-disrupt annotation set to false".
#[test]
fn emptiness_deletes_empty_nodes() {
    when_empty()
        .run("empty")
        .expect(&[("n0", "delete/emptiness")]);

    let mut sc = when_empty();
    sc.condition("n0", "Drifted", "True", EARLIER);
    let r = sc.run("empty-drifted");
    assert_eq!(r.row("n0")["decision"], "delete", "{:#}", r.doc);

    let mut sc = when_empty();
    sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "false");
    sc.run("empty-dnd-false")
        .expect(&[("n0", "delete/emptiness")]);
}

/// "should ignore nodes with the karpenter.sh/do-not-disrupt annotation", "should ignore nodes
/// that have pods".
#[test]
fn emptiness_ignores_protected_and_busy_nodes() {
    let mut sc = when_empty();
    sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "true");
    sc.run("empty-dnd").left_because("n0", &["do-not-disrupt"]);

    let mut sc = when_empty();
    sc.pod("p0", "n0", "");
    sc.run("empty-pods").left_because("n0", &["WhenEmpty"]);
}

/// "should ignore nodes with the consolidatable status condition set to false": the
/// disruption controller reads the condition (`emptiness.go ShouldDisrupt`). **Differed,
/// fixed**: the report recomputed it from the times and deleted the node.
///
/// "should ignore nodes without the consolidatable status condition": **differs, left** — a
/// missing condition is recomputed from `consolidateAfter` and the times, as v1.14's nodeclaim
/// controller (`nodeclaim/disruption/consolidation.go`) sets it (True once the window has
/// passed, removed before), so that manifests written by hand, v1beta1 NodeClaims (which have
/// no such condition) and a later `--now` work; a snapshot whose initialized node is past its
/// window without the condition is one that controller corrects at its next reconcile.
#[test]
fn emptiness_reads_the_consolidatable_condition() {
    let mut sc = when_empty();
    sc.condition("n0", "Consolidatable", "False", NOW);
    let r = sc.run("empty-cons-false");
    r.left_because("n0", &["n0-claim", "Consolidatable=False"]);

    let mut sc = when_empty();
    sc.drop_condition("n0", "Consolidatable");
    sc.run("empty-cons-absent")
        .expect(&[("n0", "delete/emptiness")]);
}

/// "can delete multiple empty nodes".
#[test]
fn emptiness_deletes_several_in_one_command() {
    let mut sc = when_empty();
    sc.node("n1", LEAST_SPOT);
    let r = sc.run("empty-two");
    assert_eq!(r.actions().len(), 1, "{:#}", r.doc);
    r.expect(&[("n0", "delete/emptiness"), ("n1", "delete/emptiness")]);
}

/// "will consider a node with a DaemonSet pod as empty", "will consider a node with terminating
/// Deployment pods as empty", "will not consider a node with a terminating StatefulSet pod as
/// empty".
#[test]
fn emptiness_daemonset_and_terminating_pods() {
    let mut sc = when_empty();
    sc.push(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "default", "uid": "uid-ds"},
        "spec": {"selector": {"matchLabels": {"app": "ds"}},
                 "template": {"metadata": {"labels": {"app": "ds"}},
                              "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}));
    sc.push(pod_value(
        "ds-pod",
        Some("n0"),
        "",
        Some(("DaemonSet", "ds")),
    ));
    sc.run("empty-ds").expect(&[("n0", "delete/emptiness")]);

    let mut sc = when_empty();
    for i in 0..3 {
        let mut p = pod_value(&format!("p{i}"), Some("n0"), "", Some(("ReplicaSet", "rs")));
        p["metadata"]["deletionTimestamp"] = json!(NOW);
        sc.push(p);
    }
    sc.run("empty-terminating")
        .expect(&[("n0", "delete/emptiness")]);

    let mut sc = when_empty();
    let mut p = pod_value("ss-0", Some("n0"), "", Some(("StatefulSet", "ss")));
    p["metadata"]["deletionTimestamp"] = json!(NOW);
    sc.push(p);
    let r = sc.run("empty-sts");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
}

/// "considers pending pods when consolidating": a WhenEmpty pool, the node holds a pod and a
/// 62-CPU pod is pending: kept.
#[test]
fn emptiness_considers_pending_pods() {
    let large = "64-cpu-1-mem-amd64-linux-test-zone-1-on-demand";
    let mut sc = Sc::new();
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
    sc.node_with("n0", "default", large, &[("cpu", "64"), ("pods", "5")]);
    sc.pod("p0", "n0", "1");
    sc.push(pod_value("unsched", None, "62", Some(("ReplicaSet", "rs"))));
    let r = sc.run("empty-pending");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
}

/// when_empty()'s node under `budgets`: left for a budget when `blocked`, else deleted.
pub(crate) fn empty_node_under(tag: &str, budgets: Value, blocked: bool) -> Report {
    let mut sc = when_empty();
    sc.disruption("default")["budgets"] = budgets;
    let r = sc.run(tag);
    if blocked {
        r.left_because("n0", &["budget"]);
    } else {
        r.expect(&[("n0", "delete/emptiness")]);
    }
    r
}

/// emptiness_test.go Budgets: "should only allow 3 empty nodes to be disrupted" (30 % of 10),
/// "should allow 2 nodes from each nodePool to be deleted" covered above; here a schedule
/// (nodepool_budgets_test.go "should return 0 for all reasons if a budget is active for all
/// reasons"): a budget of 0 whose cron window is open now blocks, one whose window is closed
/// does not.
#[test]
fn budgets_with_schedules_from_yaml() {
    // NOW is 12:00 UTC on a Monday; "0 12 * * *" opened the window now, "0 9 * * *" with 1h
    // closed at 10:00.
    for (tag, schedule, duration, blocked) in [
        ("bud-sched-open", "0 12 * * *", "1h", true),
        ("bud-sched-closed", "0 9 * * *", "1h", false),
        ("bud-sched-long", "0 0 * * *", "13h", true),
    ] {
        let budgets = json!([
            {"nodes": "100%"},
            {"nodes": "0", "schedule": schedule, "duration": duration}]);
        empty_node_under(tag, budgets, blocked);
    }
}

/// nodepool_budgets_test.go "should ignore reason-defined budgets when inactive", "should
/// return the budget for all disruption reasons if undefined" and "should get the minimum
/// budget for each reason": budgets by reason from YAML.
#[test]
fn budgets_by_reason_from_yaml() {
    for (tag, budgets, blocked) in [
        (
            "bud-reason-other",
            json!([{"nodes": "0", "reasons": ["Drifted", "Underutilized"]}]),
            false,
        ),
        (
            "bud-reason-empty",
            json!([{"nodes": "0", "reasons": ["Empty"]}]),
            true,
        ),
        (
            "bud-reason-min",
            json!([{"nodes": "5"}, {"nodes": "0", "reasons": ["Empty"]}]),
            true,
        ),
        (
            "bud-reason-inactive",
            json!([{"nodes": "0", "reasons": ["Empty"], "schedule": "0 9 * * *", "duration": "1h"}]),
            false,
        ),
    ] {
        empty_node_under(tag, budgets, blocked);
    }
}

/// nodepool_budgets_test.go "should return zero values if a schedule is invalid" / "… if a
/// nodes value is invalid": Karpenter's CRD refuses both (the cron and `nodes` patterns), so from
/// a file they are bad input: exit 2, one line naming the object and field.
#[test]
fn budgets_invalid_from_yaml() {
    let catalog = assorted_path();
    let catalog = catalog.to_string_lossy();
    for (budget, field) in [
        (
            json!({"nodes": "10", "schedule": "@wrongly", "duration": "1h"}),
            "budgets[0].schedule",
        ),
        (json!({"nodes": "ten"}), "budgets[0].nodes"),
    ] {
        let mut sc = when_empty();
        sc.disruption("default")["budgets"] = json!([budget]);
        let run = karpenter(
            &[
                "consolidate",
                "-f",
                "-",
                "--now",
                NOW,
                "-o",
                "json",
                "--catalog",
                &catalog,
            ],
            sc.yaml().as_bytes(),
        );
        assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("NodePool/default"), "{}", run.stderr);
        assert!(run.stderr.contains(field), "{}", run.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// drift_test.go (consolidateAfter 1h, the most expensive type, Drifted=True)
// ---------------------------------------------------------------------------------------------

pub(crate) fn drift_pool() -> Sc {
    let mut sc = Sc::new();
    sc.disruption("default")["consolidateAfter"] = json!("1h");
    sc
}

/// "should continue to the next drifted node if the first cannot reschedule all pods": n0's
/// 150-CPU pod fits nowhere; n1 (1 CPU, a 1-CPU pod) is replaced.
#[test]
fn drift_continues_past_a_node_whose_pods_fit_nowhere() {
    let mut sc = drift_pool();
    sc.node("n0", MOST).pod("big", "n0", "150");
    sc.node_with("n1", "default", MOST, &[("cpu", "1"), ("pods", "100")]);
    sc.pod("small", "n1", "1");
    sc.drifted("n0", EARLIER).drifted("n1", EARLIER);
    let r = sc.run("drift-continue");
    r.left_because("n0", &["default/big"]);
    assert_eq!(r.row("n1")["method"], "drift", "{:#}", r.doc);
}

/// "should ignore nodes without the drifted status condition", "… set to false".
#[test]
fn drift_needs_drifted_true() {
    let mut sc = drift_pool();
    sc.node("n0", MOST).pod("p0", "n0", "");
    sc.drop_condition("n0", "Consolidatable");
    let r = sc.run("drift-none");
    assert_ne!(r.row("n0")["method"], "drift", "{:#}", r.doc);

    let mut sc = drift_pool();
    sc.node("n0", MOST).pod("p0", "n0", "");
    sc.drop_condition("n0", "Consolidatable");
    sc.condition("n0", "Drifted", "False", EARLIER);
    let r = sc.run("drift-false");
    assert_ne!(r.row("n0")["method"], "drift", "{:#}", r.doc);
}

/// "should ignore nodes with the karpenter.sh/do-not-disrupt annotation set to true", "should
/// delete drifted nodes with the karpenter.sh/do-not-disrupt annotation set to false".
#[test]
fn drift_do_not_disrupt_on_the_node() {
    let mut sc = drift_pool();
    sc.node("n0", MOST).drifted("n0", EARLIER);
    sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "true");
    sc.run("drift-dnd").left_because("n0", &["do-not-disrupt"]);

    let mut sc = drift_pool();
    sc.node("n0", MOST).drifted("n0", EARLIER);
    sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "false");
    let r = sc.run("drift-dnd-false");
    assert_eq!(r.row("n0")["decision"], "delete", "{:#}", r.doc);
}

/// "should not create replacements for drifted nodes that have pods with the
/// karpenter.sh/do-not-disrupt annotation set to true", "… duration-based do-not-disrupt
/// annotation that is still active" (2m, started now; 3 minutes later it drifts), "should drift
/// nodes with pods that have an invalid do-not-disrupt annotation format", "should not drift
/// nodes until the longest duration-based do-not-disrupt grace period expires across multiple
/// pods" (1m and 3m: blocked at +2m, drifts at +4m).
#[test]
fn drift_pod_do_not_disrupt() {
    // n0 drifted with pods p0 (and p1) carrying `values`.
    let drifted = |values: &[&str]| {
        let mut sc = drift_pool();
        sc.node("n0", MOST).node("n1", MOST).drifted("n0", EARLIER);
        for (i, v) in values.iter().enumerate() {
            let p = format!("p{i}");
            sc.pod(&p, "n0", "").dnd(&p, v);
        }
        sc
    };
    drifted(&["true"])
        .run("drift-pod-dnd")
        .left_because("n0", &["do-not-disrupt"]);

    let sc = drifted(&["2m"]);
    sc.run("drift-dur-active")
        .left_because("n0", &["do-not-disrupt"]);
    let r = sc.at("2024-06-24T12:03:00Z").run("drift-dur-expired");
    assert_eq!(r.row("n0")["method"], "drift", "{:#}", r.doc);

    let r = drifted(&["invalid-format"]).run("drift-invalid");
    assert_eq!(r.row("n0")["method"], "drift", "{:#}", r.doc);

    let sc = drifted(&["1m", "3m"]);
    sc.clone()
        .at("2024-06-24T12:02:00Z")
        .run("drift-longest-2m")
        .left_because("n0", &["do-not-disrupt", "default/p1"]);
    let r = sc.at("2024-06-24T12:04:00Z").run("drift-longest-4m");
    assert_eq!(r.row("n0")["method"], "drift", "{:#}", r.doc);
}

/// "should not create replacements for drifted nodes that have pods with the blocking PDBs
/// when the NodePool's TerminationGracePeriod is not nil": with a grace period drift is
/// eventual — the PDB-held pod is not planned for, so no replacement is made.
#[test]
fn drift_with_a_grace_period_makes_no_replacement_for_a_pdb_held_pod() {
    let mut sc = drift_pool();
    sc.node("n0", MOST)
        .drifted("n0", EARLIER)
        .pod("p0", "n0", "");
    sc.claim("n0")["spec"]["terminationGracePeriod"] = json!("300s");
    sc.push(pdb("pdb", "default", false));
    let r = sc.run("drift-tgp-pdb");
    let row = r.row("n0");
    assert!(
        row["decision"] == "none" || row["decision"] == "delete",
        "no replacement: {:#}",
        r.doc
    );
}

/// "should replace drifted nodes", "should delete drifted nodes" (its pod fits on another
/// node), "should delete drifted nodes when they are empty and consolidation is disabled".
#[test]
fn drift_replaces_or_deletes() {
    let mut sc = drift_pool();
    sc.node("n0", MOST)
        .drifted("n0", EARLIER)
        .pod("p0", "n0", "");
    let r = sc.run("drift-replace");
    r.expect(&[("n0", "replace/drift")]);

    let mut sc = drift_pool();
    sc.node("n0", MOST)
        .node("n1", MOST)
        .drifted("n0", EARLIER)
        .pod("p0", "n0", "");
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    let r = sc.run("drift-delete");
    r.expect(&[("n0", "delete/drift")]);

    let mut sc = drift_pool();
    sc.node("n0", MOST).drifted("n0", EARLIER);
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
    let r = sc.run("drift-empty-disabled");
    r.expect(&[("n0", "delete/drift")]);
}

/// "should drift empty nodes before non-empty nodes" and "should drift one non-empty node at a
/// time, starting with the earliest drift".
#[test]
fn drift_order_empty_first_then_oldest() {
    let mut sc = drift_pool();
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    sc.nodes(3, MOST).pod("p1", "n1", "").pod("p2", "n2", "");
    sc.drifted("n0", "2024-06-24T11:50:00Z")
        .drifted("n1", "2024-06-24T11:40:00Z")
        .drifted("n2", "2024-06-24T11:30:00Z");
    let r = sc.run("drift-order");
    let first: Vec<_> = r
        .actions()
        .iter()
        .map(|a| a["nodes"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(first.first().map(String::as_str), Some("n0"), "{:#}", r.doc);
    assert_eq!(
        first.get(1).map(String::as_str),
        Some("n2"),
        "oldest drift next: {:#}",
        r.doc
    );
}

/// drift_test.go Budgets "should only consider 3 nodes allowed to be disrupted because of
/// budgets": 10 drifted nodes, a budget of 30 %.
#[test]
fn drift_budget_caps_drifted_nodes() {
    let mut sc = drift_pool();
    sc.disruption("default")["budgets"] = json!([{ "nodes": "30%" }]);
    sc.nodes(10, MOST);
    for i in 0..10 {
        sc.drifted(&format!("n{i}"), EARLIER);
        sc.pod(&format!("p{i}"), &format!("n{i}"), "");
    }
    let r = sc.run("drift-budget");
    let drifting = r.doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["method"] == "drift")
        .count();
    assert_eq!(drifting, 3, "{:#}", r.doc);
}

/// "should not consider static nodepool for drift".
#[test]
fn drift_leaves_static_pools_to_static_drift() {
    let mut sc = drift_pool();
    sc.pool("default")["spec"]["replicas"] = json!(1);
    sc.node("n0", MOST)
        .drifted("n0", EARLIER)
        .pod("p0", "n0", "");
    let r = sc.run("drift-static");
    assert_ne!(r.row("n0")["method"], "drift", "{:#}", r.doc);
}

// ---------------------------------------------------------------------------------------------
// nodeclaim/expiration/suite_test.go (v1: forceful)
// ---------------------------------------------------------------------------------------------

/// "should remove nodeclaims that are expired" (expireAfter 30s, created an hour ago), "should
/// not remove non-expired NodeClaims" (200s from now), "should not remove the NodeClaims when
/// expiration is disabled" (Never), and forceful: do-not-disrupt on the node does not hold it.
#[test]
fn expiration_from_the_nodeclaims_expire_after() {
    for (tag, after, expired) in [
        ("exp-expired", "30s", true),
        ("exp-not-yet", "2h", false),
        ("exp-never", "Never", false),
    ] {
        let mut sc = Sc::new();
        sc.disruption("default")["consolidateAfter"] = json!("Never");
        sc.node("n0", MOST).pod("p0", "n0", "");
        sc.claim("n0")["spec"]["expireAfter"] = json!(after);
        let r = sc.run(tag);
        if expired {
            assert_eq!(r.row("n0")["method"], "expiration", "{tag}: {:#}", r.doc);
        } else {
            assert_eq!(r.of("n0"), "none", "{tag}: {:#}", r.doc);
        }
    }
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] = json!([{ "nodes": "0" }]);
    sc.node("n0", MOST).pod("p0", "n0", "");
    sc.claim("n0")["spec"]["expireAfter"] = json!("30s");
    sc.annotate_node("n0", "karpenter.sh/do-not-disrupt", "true");
    let r = sc.run("exp-forceful");
    assert_eq!(r.row("n0")["method"], "expiration", "{:#}", r.doc);
}

// ---------------------------------------------------------------------------------------------
// suite_test.go (candidates)
// ---------------------------------------------------------------------------------------------

/// One node of the most expensive type holding `objects` (pods, PDBs).
pub(crate) fn one_node_with(objects: Vec<Value>) -> Sc {
    let mut sc = Sc::new();
    sc.node("n0", MOST);
    for o in objects {
        sc.push(o);
    }
    sc
}

/// A pod of `owner` (kind, name; a Node owner makes it a mirror pod) bound to n0, with
/// `annotations`, in `phase`, terminating when `deleting`.
pub(crate) fn n0_pod(
    name: &str,
    owner: (&str, &str),
    annotations: Value,
    phase: &str,
    deleting: bool,
) -> Value {
    let mut p = pod_value(name, Some("n0"), "", None);
    let api = if owner.0 == "Node" { "v1" } else { "apps/v1" };
    p["metadata"]["ownerReferences"] = json!([{"apiVersion": api, "kind": owner.0, "name": owner.1,
        "uid": format!("uid-{}", owner.1), "controller": true}]);
    p["metadata"]["annotations"] = annotations;
    p["status"]["phase"] = json!(phase);
    if deleting {
        p["metadata"]["deletionTimestamp"] = json!(NOW);
    }
    p
}

/// "should not consider candidates that are deleting" / "… that aren't yet initialized",
/// "should not consider candidates that have do-not-disrupt mirror pods scheduled" / "…
/// daemonset pods scheduled" (the annotation blocks whatever owns the pod), "should consider
/// candidates that have do-not-disrupt terminating pods" / "… terminal pods".
#[test]
fn candidates_filters_from_manifests() {
    let mut sc = one_node_with(vec![]);
    sc.deleting("n0");
    assert_eq!(sc.run("cand-deleting").disrupted(), 0);

    let mut sc = one_node_with(vec![]);
    sc.uninitialized("n0");
    assert_eq!(sc.run("cand-uninit").disrupted(), 0);

    let dnd = json!({"karpenter.sh/do-not-disrupt": "true"});
    for (tag, owner, phase, deleting, blocked) in [
        ("cand-dnd-mirror", ("Node", "n0"), "Running", false, true),
        ("cand-dnd-ds", ("DaemonSet", "ds"), "Running", false, true),
        (
            "cand-dnd-terminating",
            ("ReplicaSet", "rs"),
            "Running",
            true,
            false,
        ),
        (
            "cand-dnd-terminal",
            ("ReplicaSet", "rs"),
            "Succeeded",
            false,
            false,
        ),
    ] {
        let sc = one_node_with(vec![n0_pod("p", owner, dnd.clone(), phase, deleting)]);
        let r = sc.run(tag);
        if blocked {
            r.left_because("n0", &["default/p", "do-not-disrupt"]);
        } else {
            assert_eq!(r.row("n0")["decision"], "delete", "{tag}: {:#}", r.doc);
        }
    }
}

/// suite_test.go "should not consider candidates that have fully blocking PDBs on daemonset
/// pods", "should consider candidates that have fully blocking PDBs on mirror pods", "… on
/// terminal pods", and "should not consider candidates that have multiple PDBs on the same pod".
#[test]
fn candidates_pdbs_on_daemonset_pods_and_multiple_pdbs() {
    for (tag, owner, phase, blocked) in [
        ("cand-pdb-ds", ("DaemonSet", "ds"), "Running", true),
        ("cand-pdb-mirror", ("Node", "n0"), "Running", false),
        ("cand-pdb-terminal", ("ReplicaSet", "rs"), "Failed", false),
    ] {
        let pod = n0_pod("p", owner, json!({}), phase, false);
        let r = one_node_with(vec![pod, pdb("pdb", "default", true)]).run(tag);
        if blocked {
            r.left_because("n0", &["PDB default/pdb", "default/p"]);
        } else {
            assert_eq!(r.row("n0")["decision"], "delete", "{tag}: {:#}", r.doc);
        }
    }

    let mut a = pdb("a", "default", false);
    a["spec"] = json!({"maxUnavailable": 1, "selector": {"matchLabels": {"app": "test"}}});
    let mut b = a.clone();
    b["metadata"]["name"] = json!("b");
    let pod = n0_pod("p", ("ReplicaSet", "rs"), json!({}), "Running", false);
    let r = one_node_with(vec![pod, a, b]).run("cand-two-pdbs");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
}

// ---------------------------------------------------------------------------------------------
// suite_test.go › disruption count (BuildDisruptionBudgetMapping), seen through emptiness
// ---------------------------------------------------------------------------------------------

/// Ten empty nodes of a pool whose one budget is `budget`, initialized now (under no window).
pub(crate) fn ten_empty(budget: &str) -> Sc {
    let mut sc = ten_nodes(budget);
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
    sc
}

/// How many nodes the first pass's emptiness command deletes (the budget mapping of one
/// reconcile; later passes count those as disrupting).
pub(crate) fn deleted(r: &Report) -> usize {
    r.actions()
        .iter()
        .filter(|a| a["pass"] == 1 && a["method"] == "emptiness")
        .map(|a| a["nodes"].as_array().unwrap().len())
        .sum()
}

/// "should not consider nodes that are not managed as part of disruption count" (an unmanaged
/// node beside ten: 50 % is still 5), "… not initialized …" (an eleventh node, not initialized:
/// still 5, and it is no candidate), "should consider not ready nodes to the disruption count"
/// (two NotReady: 5 − 2 = 3), "should consider nodes with a deletion timestamp set … to the
/// disruption count" (one deleting: 5 − 1 = 4), "should not consider nodes that have the
/// terminating status condition as part of disruption count" (one deleting with
/// `InstanceTerminating`: 9 counted, ⌈4.5⌉ = 5, none disrupting).
#[test]
fn budgets_count_what_karpenter_counts() {
    let mut sc = ten_empty("50%");
    sc.push(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "unmanaged", "labels": {"kubernetes.io/hostname": "unmanaged"}},
        "spec": {"providerID": "aws:///test-zone-1/i-unmanaged"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "allocatable": {"cpu": "32", "pods": "100"}}}));
    assert_eq!(deleted(&sc.run("count-unmanaged")), 5);

    let mut sc = ten_empty("50%");
    sc.node("n10", MOST).uninitialized("n10");
    let r = sc.run("count-uninit");
    assert_eq!(deleted(&r), 5, "{:#}", r.doc);
    assert_eq!(r.of("n10"), "none");

    let mut sc = ten_empty("50%");
    for n in ["n0", "n1"] {
        sc.node_obj(n)["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}]);
    }
    let r = sc.run("count-not-ready");
    assert_eq!(deleted(&r), 3, "{:#}", r.doc);

    let mut sc = ten_empty("50%");
    sc.deleting("n0");
    let r = sc.run("count-deleting");
    assert_eq!(deleted(&r), 4, "{:#}", r.doc);

    let mut sc = ten_empty("50%");
    sc.deleting("n0");
    sc.condition("n0", "InstanceTerminating", "True", NOW);
    let r = sc.run("count-terminating");
    assert_eq!(deleted(&r), 5, "{:#}", r.doc);
}

/// drift_test.go "should disrupt 3 nodes, taking into account commands in progress": ten nodes,
/// the first five drifted with a 1-CPU pod, a 30 % budget: three drift, one per pass, each
/// counting against the next.
#[test]
fn drift_budget_counts_commands_in_progress() {
    let mut sc = drift_pool();
    sc.disruption("default")["budgets"] = json!([{ "nodes": "30%" }]);
    sc.nodes(10, MOST);
    for i in 0..10 {
        let n = format!("n{i}");
        // Initialized now: under the pool's consolidateAfter (1h), no emptiness.
        sc.condition(&n, "Initialized", "True", NOW);
        sc.drop_condition(&n, "Consolidatable");
        if i < 5 {
            sc.drifted(&n, EARLIER);
            sc.pod(&format!("p{i}"), &n, "1");
        }
    }
    let r = sc.run("drift-in-progress");
    let drifting: Vec<_> = r
        .actions()
        .iter()
        .filter(|a| a["method"] == "drift")
        .collect();
    assert_eq!(drifting.len(), 3, "{:#}", r.doc);
    assert_eq!(r.disrupted(), 3, "{:#}", r.doc);
    let passes: Vec<_> = drifting
        .iter()
        .map(|a| a["pass"].as_i64().unwrap())
        .collect();
    assert_eq!(passes, [1, 2, 3], "one command per pass");
}

/// consolidation_test.go "does not delete nodes with pod churn, deletes nodes without pod
/// churn" (`WithEmptinessChurn`): consolidateAfter 30s; n0's NodeClaim had a pod event 10 s
/// ago (`status.lastPodEventTime`), n1's none since initialization: only n1 goes.
#[test]
fn emptiness_waits_out_pod_churn() {
    let mut sc = Sc::new();
    sc.disruption("default")["consolidateAfter"] = json!("30s");
    sc.nodes(2, LEAST);
    sc.claim("n0")["status"]["lastPodEventTime"] = json!("2024-06-24T11:59:50Z");
    sc.drop_condition("n0", "Consolidatable");
    let r = sc.run("churn");
    r.expect(&[("n1", "delete/emptiness")]);
    r.left_because("n0", &["consolidateAfter 30s", "20s left"]);
}

/// singlenodeconsolidation_test.go "should sort candidates by savings ratio with different
/// disruption costs", from manifests (`controller.kubernetes.io/pod-deletion-cost`, pod
/// priority): three nodes of one type, the pool held to it, a 10-CPU pod each; the two cheapest
/// to disrupt go (their pods fit on the third), the costliest stays.
#[test]
fn candidates_go_by_disruption_cost_from_pod_annotations() {
    let mut sc = Sc::new();
    sc.pool("default")["spec"]["template"]["spec"]["requirements"] = json!([
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [MOST]}]);
    sc.nodes(3, MOST);
    for (i, cost, priority) in [(0, "1000000000", 1_000_000), (1, "0", 0), (2, "-1000", 0)] {
        sc.pod(&format!("p{i}"), &format!("n{i}"), "10");
        let p = sc.pod_mut(&format!("p{i}"));
        p["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] = json!(cost);
        p["spec"]["priority"] = json!(priority);
    }
    let r = sc.run("cost-order");
    r.expect(&[
        ("n2", "delete/multi"),
        ("n1", "delete/multi"),
        ("n0", "none"),
    ]);
    assert_eq!(r.actions()[0]["nodes"], json!(["n2", "n1"]), "{:#}", r.doc);
}

/// consolidation_test.go "cannot replace spot with spot if it is part of the 15 cheapest
/// instance types.": the first 20 assorted types (1 CPU, 1 GiB), the first made spot at
/// 0.001; the node is the second spot type: one cheaper option only.
#[test]
fn replace_spot_to_spot_not_for_one_of_the_fifteen_cheapest() {
    let mut types = Vec::new();
    for (zone, ct) in [
        ("test-zone-1", "spot"),
        ("test-zone-1", "on-demand"),
        ("test-zone-2", "spot"),
        ("test-zone-2", "on-demand"),
        ("test-zone-3", "spot"),
    ] {
        for os_arch in [
            "amd64-linux",
            "arm64-linux",
            "amd64-windows",
            "arm64-windows",
        ] {
            types.push(fake_type(
                &format!("1-cpu-1-mem-{os_arch}-{zone}-{ct}"),
                1,
                1,
                vec![offering(zone, ct, fake_price(1, 1), true)],
            ));
        }
    }
    types[0]["offerings"][0]["price"] = json!(0.001);
    let node_type = "1-cpu-1-mem-arm64-linux-test-zone-1-spot";
    let mut sc = Sc::new().catalog(json!({ "instanceTypes": types }));
    sc.node("n0", node_type).pod("p0", "n0", "");
    sc.run("s2s-cheapest").left_because("n0", &["15"]);
}

/// consolidation_test.go DescribeTable "can replace nodes if another nodePool returns no
/// instance types" (both Entries): a second pool that no type satisfies.
#[test]
fn replace_beside_a_pool_without_instance_types() {
    for (tag, it) in [
        ("rep-empty-pool-od", MOST),
        ("rep-empty-pool-spot", MOST_SPOT),
    ] {
        let mut sc = Sc::new();
        let mut other = pool("no-types");
        other["spec"]["template"]["spec"]["requirements"] = json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["no-such-type"]}]);
        sc.push(other);
        sc.node("n0", it).pod("p0", "n0", "");
        sc.run(tag).expect(&[("n0", "replace/single")]);
    }
}

/// nodepool_budgets_test.go IsActive: "should return that a schedule is active when the
/// schedule hit is in the middle of a duration" (weekly, Monday 00:00 for 13h; NOW is Monday
/// 12:00), "… when the duration is longer than the recurrence" (hourly for 2h), "should return
/// that a schedule is inactive when the schedule hit is after the duration" (@daily for 11h),
/// and a macro (`@hourly` for 30m: opened at 12:00).
#[test]
fn budget_schedules_weekly_hourly_and_macros() {
    for (tag, schedule, duration, blocked) in [
        ("sched-weekly", "0 0 * * 1", "13h", true),
        ("sched-longer", "0 * * * *", "2h", true),
        ("sched-after", "@daily", "11h", false),
        ("sched-hourly", "@hourly", "30m", true),
        ("sched-sunday", "0 0 * * SUN", "13h", false),
    ] {
        let budgets = json!([{"nodes": "0", "schedule": schedule, "duration": duration}]);
        let r = empty_node_under(tag, budgets, blocked);
        if blocked {
            r.left_because("n0", &[schedule]);
        }
    }
}

/// The scenario's pool and class rewritten as v1beta1 (Karpenter v0.37.7) with `disruption`, its
/// NodeClaims v1beta1 (no `Consolidatable` condition then).
pub(crate) fn as_v1beta1(sc: &mut Sc, disruption: Value) {
    *sc.pool("default") = json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"disruption": disruption,
                 "template": {"spec": {"requirements": [],
                     "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "default"}}}}});
    *sc.find("EC2NodeClass", "default") = json!({"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {"amiFamily": "AL2", "role": "KarpenterNodeRole",
                 "subnetSelectorTerms": [{"id": "subnet-a"}], "securityGroupSelectorTerms": [{"id": "sg-a"}]}});
    for o in sc.objects.iter_mut().filter(|o| o["kind"] == "NodeClaim") {
        o["apiVersion"] = json!("karpenter.sh/v1beta1");
        o["spec"] = json!({"nodeClassRef": {"name": "default"}, "requirements": []});
        o["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["type"] != "Consolidatable");
    }
}

/// A v1beta1 NodePool (v0.37 semantics: `WhenUnderutilized`, `expireAfter` on the pool, the
/// `Empty` condition for emptiness) read from YAML: emptiness_test.go "can delete empty nodes"
/// and consolidation_test.go "can delete nodes" as that release decides them.
#[test]
fn v1beta1_pool_from_yaml() {
    let mut sc = two_nodes_three_pods();
    sc.node("n2", LEAST);
    as_v1beta1(
        &mut sc,
        json!({"consolidationPolicy": "WhenUnderutilized", "expireAfter": "Never",
               "budgets": [{"nodes": "100%"}]}),
    );
    sc.condition("n2", "Empty", "True", EARLIER);
    let r = sc.run("v1beta1");
    assert_eq!(
        r.doc["karpenterVersion"].as_str().unwrap().get(..5),
        Some("v0.37"),
        "{:#}",
        r.doc
    );
    r.expect(&[("n2", "delete/emptiness")]);
    assert_eq!(r.row("n1")["decision"], "delete", "{:#}", r.doc);
    assert_eq!(r.of("n0"), "none");
}

/// suite_test.go "should not consider candidates that are nominated" (a pending pod the
/// provisioner places on the empty node nominates it) and consolidation_test.go "should not
/// consolidate a node that is launched for pods on a deleting node" (the pods of a NodeClaim being
/// deleted go to the empty node, which they nominate).
#[test]
fn nominated_nodes_are_not_candidates() {
    let mut sc = Sc::new();
    sc.node("n0", MOST);
    sc.push(pod_value("pending", None, "1", Some(("ReplicaSet", "rs"))));
    sc.run("nominated-pending")
        .left_because("n0", &["nominate"]);

    let mut sc = Sc::new();
    sc.node("old", MOST).node("new", MOST);
    sc.pods("p", 3, "old", "1");
    sc.deleting("old");
    let r = sc.run("nominated-deleting");
    r.left_because("new", &["old"]);
    assert_eq!(r.disrupted(), 0, "{:#}", r.doc);
}

/// `nodes -f` (offline): its CONSOLIDATION column decides as `consolidate -f` does
/// (emptiness_test.go "can delete empty nodes", consolidation_test.go "can delete nodes,
/// considers PDB").
#[test]
fn nodes_from_manifests_shows_the_same_decisions() {
    let mut sc = Sc::new();
    sc.nodes(2, LEAST)
        .pod("p0", "n0", "")
        .push(pdb("pdb", "default", true));
    sc.node("n2", LEAST);
    let report = sc.run("nodes-col");
    let doc = sc.nodes_doc("nodes-col", &[]);
    for n in ["n0", "n1", "n2"] {
        let item = doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == n)
            .unwrap_or_else(|| panic!("{n} not listed: {doc:#}"));
        assert_eq!(item["ageSeconds"], 3600, "--now is the clock");
        let c = &item["consolidation"];
        assert_eq!(c["decision"], report.row(n)["decision"], "{n}: {c:#}");
        assert_eq!(c["method"], report.row(n)["method"], "{n}: {c:#}");
    }
    let bad = karpenter(&["nodes", "-f", "-", "--now", "yesterday"], b"");
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// core 6a9532040 "fix: Don't schedule a pod with DRA requirements (#2384)" in disruption:
/// under Karpenter's default `--ignore-dra-requests=true` the consolidation simulation refuses a
/// pod with a ResourceClaim (`scheduler.go add`, `DRAError`), so the node running it cannot be
/// emptied. `two_nodes_three_pods` with n1's pod claiming a device: n1 stays (upstream's
/// simulation leaves the pod unschedulable) and n0, the next candidate, is deleted onto it;
/// without the claim n1 is deleted (`delete_can_delete_nodes`). A pod-level claim alone counts
/// (0a96b78cb, #3124).
#[test]
fn delete_leaves_a_node_whose_pod_has_a_dra_claim() {
    let mut sc = two_nodes_three_pods();
    sc.pod_mut("p2")["spec"]["resourceClaims"] =
        json!([{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]);
    let r = sc.run("del-dra");
    // n1 (one pod, first in disruption cost) cannot be emptied; n0's two pods move onto it.
    r.expect(&[("n0", "delete/single"), ("n1", "none")]);
}
