//! A small live world for use-case tests: a [`FakeCluster`] serving Karpenter v1 with one
//! NodePool (`default`, `WhenEmpty` after 30 s, at most 100 CPU) and its EC2NodeClass; a
//! [`FakeCloud`] that resolves the class (an AL2023 image, two zonal subnets, a security group,
//! a role with an instance profile) and launches; a [`FakeClock`]; a catalog of four AMD types.
//!
//! The world moves as the clock ticks: [`World::kubelet`] registers a Ready Node for each
//! running instance once it has booted and deletes the Nodes whose instance stopped, like the
//! EC2 kubelet of the loopback test cluster; [`World::scheduler`] binds pending pods to Ready
//! nodes with room, like kube-scheduler. Both are opt-in, so a test can also play a run that
//! was interrupted before any node registered.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};

use super::clock::FakeClock;
use super::live::Live;
use crate::cloud::ami::KubeVersion;
use crate::cloud::catalog::{AwsSnapshot, InstanceFacts, RegionFacts};
use crate::cloud::fake::{FakeCloud, FAKE_ACCOUNT};
use crate::cloud::launch::{self, ClusterInfo};
use crate::cloud::types::{Image, Instance, SecurityGroup, Subnet};
use crate::cloud::Catalog;
use crate::k8s::fake::FakeCluster;
use crate::model::quantity::parse_milli;

/// The cluster's name (the instances' `eks:eks-cluster-name` tag).
pub const CLUSTER: &str = "test-cluster";
/// When the clock starts (2023-11-14T22:13:20Z).
pub const START: i64 = 1_700_000_000;
/// The zones of the subnets.
pub const ZONES: [&str; 2] = ["us-east-1a", "us-east-1b"];

/// A cluster, a cloud and a clock (see the module documentation).
pub struct World {
    /// The cluster.
    pub cluster: FakeCluster,
    /// The cloud (shared with the ticks).
    pub cloud: Rc<FakeCloud>,
    /// The clock.
    pub clock: FakeClock,
    /// The catalog live runs size types from.
    pub catalog: Catalog,
}

/// The live environment over a world.
pub type TestLive<'w> = Live<'w, FakeCluster, FakeCloud, FakeClock>;

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

/// The `default` EC2NodeClass every [`World`] starts with: AL2023, the cluster's subnets and
/// security groups.
pub fn default_node_class() -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"id": "ami-al2023"}],
            "role": "NodeRole",
            "subnetSelectorTerms": [{"tags": {"cluster": CLUSTER}}],
            "securityGroupSelectorTerms": [{"tags": {"cluster": CLUSTER}}],
        }
    })
}

impl World {
    /// The world with the `default` NodePool and EC2NodeClass, nothing pending, no node.
    pub fn new() -> World {
        let cluster = FakeCluster::new().karpenter_v1();
        cluster.put(node_pool("default", json!({})));
        cluster.put(default_node_class());
        World {
            cluster,
            cloud: Rc::new(cloud()),
            clock: FakeClock::at(START).with_limit(Duration::from_secs(3600)),
            catalog: catalog(),
        }
    }

    /// The use cases' environment.
    pub fn live(&self) -> TestLive<'_> {
        self.live_over(&self.cluster)
    }

    /// The use cases' environment talking to the cluster through `cluster` (a wrapper of
    /// [`World::cluster`] that fails or stops requests, as the mutating fuzzer's does).
    pub fn live_over<'w, C: crate::k8s::Cluster>(
        &'w self,
        cluster: &'w C,
    ) -> Live<'w, C, FakeCloud, FakeClock> {
        Live::new(
            cluster,
            &*self.cloud,
            &self.clock,
            ClusterInfo {
                name: CLUSTER.into(),
                endpoint: "https://api.test-cluster.example".into(),
                ca_bundle: "Q0E=".into(),
                ..ClusterInfo::default()
            },
            KubeVersion {
                major: 1,
                minor: 29,
            },
            self.catalog.clone(),
        )
    }

    /// Puts a pending pod (see [`put_pending`]): what `provision` plans for.
    pub fn pending(&self, name: &str, cpu: &str) {
        put_pending(&self.cluster, name, cpu);
    }

    /// Adds `count` pending pods named `<prefix>-<i>` whenever the clock passes one of `times`
    /// (since it started): a burst of work arriving while the code under test runs.
    pub fn pods_arrive(&self, times: &[Duration], prefix: &str, count: usize) {
        let cluster = self.cluster.clone();
        let mut due: Vec<Duration> = times.to_vec();
        let prefix = prefix.to_string();
        let mut next = 0;
        self.clock.on_tick(move |now| {
            while due.first().is_some_and(|t| *t <= now) {
                due.remove(0);
                for _ in 0..count {
                    put_pending(&cluster, &format!("{prefix}-{next}"), "1");
                    next += 1;
                }
            }
        });
    }

    /// Plays the kubelet: each running instance registers a Ready Node `boot` after the first
    /// tick that saw it; a Node whose instance stopped running is deleted.
    pub fn kubelet(&self, boot: Duration) {
        let cluster = self.cluster.clone();
        let cloud = self.cloud.clone();
        let seen: RefCell<BTreeMap<String, Duration>> = RefCell::new(BTreeMap::new());
        self.clock.on_tick(move |now| {
            let instances = cloud.instances.borrow().clone();
            let mut seen = seen.borrow_mut();
            for i in &instances {
                let first = *seen.entry(i.id.clone()).or_insert(now);
                let name = node_name(&i.id);
                let registered = cluster.get("v1", "Node", None, &name).is_some();
                if i.state == "running" && now >= first + boot && !registered {
                    cluster.put(node_of(i));
                }
                if i.state != "running" && registered {
                    cluster.remove("v1", "Node", None, &name);
                }
            }
        });
    }

    /// Plays kube-scheduler: binds each unbound pod to the first Ready, schedulable, untainted
    /// (NoSchedule/NoExecute) node with enough CPU left.
    pub fn scheduler(&self) {
        let cluster = self.cluster.clone();
        self.clock.on_tick(move |_| bind_pending(&cluster));
    }

    /// Plays the `app` ReplicaSet: pods evicted are created again (pending, 1 CPU), as many as
    /// `desired`.
    pub fn replica_set(&self, desired: usize) {
        let cluster = self.cluster.clone();
        let mut next = 0;
        self.clock.on_tick(move |_| {
            let have = cluster
                .list("v1", "Pod")
                .iter()
                .filter(|p| p["metadata"]["labels"]["app"] == "app")
                .count();
            for _ in have..desired {
                put_pending(&cluster, &format!("app-new-{next}"), "1");
                next += 1;
            }
        });
    }

    /// A running instance of `pool` whose Ready Node has registered, as an earlier run left
    /// it; the Node's name.
    pub fn registered_node(&self, pool: &str, instance_type: &str) -> String {
        let mut instances = self.cloud.instances.borrow_mut();
        let instance = Instance {
            id: format!("i-{:017x}", instances.len() + 1),
            instance_type: instance_type.into(),
            zone: ZONES[0].into(),
            subnet_id: Some("subnet-0".into()),
            image_id: "ami-al2023".into(),
            state: "running".into(),
            capacity_type: "on-demand".into(),
            security_group_ids: vec!["sg-nodes".into()],
            tags: [
                (crate::model::labels::TOOL_TAG, launch::TOOL_NAME),
                ("eks:eks-cluster-name", CLUSTER),
                ("karpenter.sh/nodepool", pool),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            partition: None,
        };
        self.cluster.put(node_of(&instance));
        instances.push(instance.clone());
        node_name(&instance.id)
    }

    /// A Ready, initialized node of pool `default` and `instance_type` with its v1 NodeClaim
    /// (initialized an hour before the clock's start), running `pods` pods of 1 CPU; its name.
    pub fn managed_node(&self, instance_type: &str, pods: &[&str]) -> String {
        self.managed_node_of("karpenter.sh/v1", instance_type, pods)
    }

    /// [`World::managed_node`] with a NodeClaim of `api_version` (`karpenter.sh/v1` or
    /// `karpenter.sh/v1beta1`, whose `nodeClassRef` has only a name).
    pub fn managed_node_of(&self, api_version: &str, instance_type: &str, pods: &[&str]) -> String {
        let name = self.registered_node("default", instance_type);
        let earlier = crate::model::time::format_rfc3339(START - 3600);
        self.cluster.update("v1", "Node", None, &name, |n| {
            n["metadata"]["labels"]["karpenter.sh/initialized"] = json!("true");
            n["metadata"]["labels"]["karpenter.sh/registered"] = json!("true");
            n["metadata"]["creationTimestamp"] = json!(earlier);
        });
        let node = self.cluster.get("v1", "Node", None, &name).unwrap();
        let class_ref = if api_version == "karpenter.sh/v1" {
            json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"})
        } else {
            json!({"name": "default"})
        };
        self.cluster.put(json!({
            "apiVersion": api_version, "kind": "NodeClaim",
            "metadata": {"name": format!("claim-{name}"), "creationTimestamp": earlier,
                "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {"nodeClassRef": class_ref, "requirements": []},
            "status": {"nodeName": name, "providerID": node["spec"]["providerID"],
                "conditions": [{"type": "Initialized", "status": "True",
                    "lastTransitionTime": earlier}]}
        }));
        for pod in pods {
            put_bound(&self.cluster, pod, &name);
        }
        name
    }

    /// The `default` class selecting capacity reservations by `terms` (none when null) and
    /// pool `default` taking reserved or on-demand capacity, with `disruption` (when not null);
    /// EC2 has `reservations`.
    pub fn reserved_pool(
        &self,
        terms: Value,
        disruption: Value,
        reservations: Vec<crate::cloud::types::CapacityReservation>,
    ) {
        let mut class = default_node_class();
        if !terms.is_null() {
            class["spec"]["capacityReservationSelectorTerms"] = terms;
        }
        self.cluster.put(class);
        let mut spec = json!({"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                "values": ["reserved", "on-demand"]}]}}});
        if !disruption.is_null() {
            spec["disruption"] = disruption;
        }
        self.cluster.put(node_pool("default", spec));
        *self.cloud.reservations.borrow_mut() = reservations;
    }

    /// The Nodes, by name.
    pub fn nodes(&self) -> Vec<Value> {
        self.cluster.list("v1", "Node")
    }

    /// The instances that are running.
    pub fn running(&self) -> Vec<Instance> {
        self.cloud
            .instances
            .borrow()
            .iter()
            .filter(|i| i.state == "running")
            .cloned()
            .collect()
    }
}

/// A v1 NodePool of the `default` class for on-demand AMD nodes labelled `team: a`, emptied
/// after 30 s, at most 100 CPU; `spec` entries replace the defaults.
pub fn node_pool(name: &str, spec: Value) -> Value {
    let mut pool = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                        "name": "default"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                        "values": ["on-demand"]}],
                }
            },
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"},
            "limits": {"cpu": "100"},
        }
    });
    if let (Some(spec), Value::Object(extra)) = (pool["spec"].as_object_mut(), spec) {
        spec.extend(extra);
    }
    pool
}

/// A NodePool `spec.template` whose on-demand NodeClaims use the `default` EC2NodeClass, with
/// `requirements` besides the capacity type.
pub fn on_demand_template(requirements: Value) -> Value {
    let mut all = vec![
        json!({"key": "karpenter.sh/capacity-type", "operator": "In",
        "values": ["on-demand"]}),
    ];
    all.extend(requirements.as_array().cloned().unwrap_or_default());
    json!({"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": all,
    }})
}

/// The name the kubelet registers an instance's Node under.
pub fn node_name(instance: &str) -> String {
    format!("ip-{}.ec2.internal", instance.trim_start_matches("i-"))
}

/// Puts a pending pod of the `app` Deployment asking for `cpu`, marked unschedulable by the
/// scheduler.
pub fn put_pending(cluster: &FakeCluster, name: &str, cpu: &str) {
    cluster.put(pending_pod(name, cpu));
}

/// The pending pod [`put_pending`] adds.
pub fn pending_pod(name: &str, cpu: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "app"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": "app-1", "uid": "rs-1", "controller": true}]},
        "spec": {"containers": [{"name": "c", "image": "pause",
            "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable"}]}
    })
}

/// A Ready Node for an instance, labelled as the kubelet and the user data would (pool from the
/// instance's tag); capacity from the catalog's facts.
pub fn node_of(i: &Instance) -> Value {
    let facts = types()
        .into_iter()
        .find(|t| t.name == i.instance_type)
        .expect("a catalog type");
    let pool = i
        .tags
        .get("karpenter.sh/nodepool")
        .cloned()
        .unwrap_or_default();
    let name = node_name(&i.id);
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": i.instance_type,
            "topology.kubernetes.io/zone": i.zone,
            "karpenter.sh/capacity-type": i.capacity_type,
            "karpenter.sh/nodepool": pool,
            "team": "a",
        }},
        "spec": {"providerID": format!("aws:///{}/{}", i.zone, i.id)},
        "status": {
            "capacity": {"cpu": facts.vcpu.to_string(),
                "memory": format!("{}Mi", facts.memory_mib), "pods": "58"},
            "allocatable": {"cpu": format!("{}m", facts.vcpu * 1000 - 100),
                "memory": format!("{}Mi", facts.memory_mib - 800), "pods": "58"},
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    })
}

fn bind_pending(cluster: &FakeCluster) {
    let pods = cluster.list("v1", "Pod");
    let mut used: BTreeMap<String, i64> = BTreeMap::new();
    for p in &pods {
        if let Some(node) = p["spec"]["nodeName"].as_str() {
            *used.entry(node.to_string()).or_default() += cpu_of(p);
        }
    }
    let ready: Vec<(String, i64)> = cluster
        .list("v1", "Node")
        .iter()
        .filter(|n| {
            n["spec"]["unschedulable"] != true && n["metadata"]["deletionTimestamp"].is_null()
        })
        // The pods here tolerate nothing: kube-scheduler's TaintToleration filter keeps them
        // off a node with a NoSchedule or NoExecute taint (a disruption taint, a startup taint).
        .filter(|n| {
            !n["spec"]["taints"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["effect"] == "NoSchedule" || t["effect"] == "NoExecute")
        })
        .filter(|n| {
            n["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
        .map(|n| {
            let cpu = n["status"]["allocatable"]["cpu"].as_str().unwrap_or("0");
            (
                n["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                parse_milli(cpu).unwrap_or(0),
            )
        })
        .collect();
    for p in pods.iter().filter(|p| p["spec"]["nodeName"].is_null()) {
        let want = cpu_of(p);
        let Some((node, _)) = ready
            .iter()
            .find(|(n, cpu)| used.get(n).copied().unwrap_or(0) + want <= *cpu)
        else {
            continue;
        };
        *used.entry(node.clone()).or_default() += want;
        let name = p["metadata"]["name"].as_str().unwrap_or_default();
        cluster.update("v1", "Pod", Some("default"), name, |p| bind(p, node));
    }
}

/// Puts a running pod of the `app` Deployment (1 CPU) bound to `node`.
pub fn put_bound(cluster: &FakeCluster, name: &str, node: &str) {
    put_pending(cluster, name, "1");
    cluster.update("v1", "Pod", Some("default"), name, |p| bind(p, node));
}

fn bind(pod: &mut Value, node: &str) {
    pod["spec"]["nodeName"] = json!(node);
    pod["status"] = json!({"phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}]});
}

fn cpu_of(pod: &Value) -> i64 {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["resources"]["requests"]["cpu"].as_str())
        .map(|q| parse_milli(q).unwrap_or(0))
        .sum()
}

fn cloud() -> FakeCloud {
    let mut cloud = FakeCloud::new().image(
        Image {
            id: "ami-al2023".into(),
            name: Some("al2023-x86_64-standard".into()),
            architecture: "x86_64".into(),
            creation_date: Some("2023-10-01T00:00:00Z".into()),
            owner_id: Some(FAKE_ACCOUNT.into()),
            ..Image::default()
        },
        None,
    );
    let tags: BTreeMap<String, String> = [("cluster".to_string(), CLUSTER.to_string())].into();
    for (i, zone) in ZONES.iter().enumerate() {
        cloud.subnets.push(Subnet {
            id: format!("subnet-{i}"),
            zone: zone.to_string(),
            available_ips: 100,
            tags: tags.clone(),
            ..Subnet::default()
        });
    }
    cloud.security_groups.push(SecurityGroup {
        id: "sg-nodes".into(),
        name: "nodes".into(),
        tags,
        ..SecurityGroup::default()
    });
    cloud
        .roles
        .insert("NodeRole".into(), vec!["NodeProfile".into()]);
    cloud
}

/// c6a.large (2 CPU, $0.0765/h) to c6a.4xlarge (16 CPU), in both zones.
fn types() -> Vec<InstanceFacts> {
    [("large", 2), ("xlarge", 4), ("2xlarge", 8), ("4xlarge", 16)]
        .into_iter()
        .map(|(size, vcpu)| InstanceFacts {
            name: format!("c6a.{size}"),
            vcpu,
            memory_mib: vcpu * 2048,
            architectures: vec!["amd64".into()],
            hypervisor: Some("nitro".into()),
            bare_metal: false,
            current_generation: true,
            max_enis: 4,
            ipv4_per_eni: 15,
            efa_max_interfaces: 0,
            network_cards: Some(vec![4]),
            ena_support: Some(crate::cloud::catalog::EnaSupport::Required),
            placement_group_strategies: Some(vec![
                "cluster".into(),
                "partition".into(),
                "spread".into(),
            ]),
            processor_features: Some(Vec::new()),
            gpu: None,
            accelerator: None,
            local_storage_gb: 0,
            local_nvme: false,
            cpu_manufacturer: Some("amd".into()),
            sustained_clock_speed_mhz: Some(3600),
            ebs_bandwidth_mbps: Some(10_000),
            network_bandwidth_mbps: Some(12_500),
            encryption_in_transit: true,
            usage_classes: vec!["on-demand".into(), "spot".into()],
            on_demand_price: Some(0.03825 * vcpu as f64),
        })
        .collect()
}

fn catalog() -> Catalog {
    catalog_in_zones(&ZONES)
}

/// The catalog of [`World`]'s types, offered in `zones` (some perhaps without a subnet).
pub fn catalog_in_zones(zones: &[&str]) -> Catalog {
    let types = types();
    let zones: Vec<String> = zones.iter().map(|z| z.to_string()).collect();
    let offerings = types
        .iter()
        .map(|t| (t.name.clone(), zones.clone()))
        .collect();
    Catalog::from_snapshot(AwsSnapshot {
        schema_version: 1,
        source: "use-case tests".into(),
        live_price_region: None,
        instance_types: types,
        regions: [(
            "us-east-1".to_string(),
            RegionFacts {
                zones,
                offerings,
                spot_prices: BTreeMap::new(),
            },
        )]
        .into(),
    })
    .expect("a valid snapshot")
}

/// An active targeted ODCR tagged `team=ml` with `available` instances left.
pub fn odcr(
    id: &str,
    instance_type: &str,
    zone: &str,
    available: i64,
) -> crate::cloud::types::CapacityReservation {
    crate::cloud::types::CapacityReservation {
        id: id.into(),
        instance_type: instance_type.into(),
        zone: zone.into(),
        owner_id: crate::cloud::fake::FAKE_ACCOUNT.into(),
        instance_match_criteria: "targeted".into(),
        reservation_type: "default".into(),
        available,
        total: available,
        state: "active".into(),
        tags: [("team".to_string(), "ml".to_string())].into(),
        ..Default::default()
    }
}

/// `drift check`'s verdict on node `name` of pool `default` (nothing else known): what
/// `drift replace` and the fuzzers select from.
pub fn verdict(
    name: &str,
    status: crate::drift::Status,
    reason: Option<crate::drift::DriftReason>,
) -> crate::drift::NodeDrift {
    crate::drift::NodeDrift {
        name: name.into(),
        node_pool: Some("default".into()),
        node_class: None,
        node_claim: None,
        instance_id: None,
        instance_type: None,
        zone: None,
        created: None,
        age_seconds: None,
        launched_by: "kubectl-karpenter",
        status,
        drifted: status == crate::drift::Status::Drifted,
        reason,
        detail: String::new(),
        image_id: None,
        expected_image_ids: Vec::new(),
        changes: Vec::new(),
        not_checked: Vec::new(),
    }
}
