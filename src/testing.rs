//! Builders for pods, NodePools and fake instance types, shared by unit tests, integration tests
//! and benchmarks (like Karpenter's `test` package and its `fake.InstanceTypes`).
//!
//! Not part of the CLI; public so `benches/` can use it.

use std::collections::BTreeMap;

use crate::model::instance_type::{InstanceType, Offering, Overhead, ON_DEMAND, SPOT};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClassRef, NodePool};
use crate::model::pod::{
    HostPort, Owner, Pod, PodAffinityTerm, PodFields, TopologySpread, Weighted, WhenUnsatisfiable,
};
use crate::model::quantity::parse_milli;
use crate::model::requirements::{NodeSelectorRequirement, Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::selector::LabelSelector;
use crate::model::taints::{Effect, Taint, Toleration};

/// The deprecated label keys Karpenter normalises (`NormalizedLabels`) and what they become,
/// for the "should normalize labels" tests (`core: pkg/scheduling/requirement_test.go`).
pub const BETA_LABEL_KEYS: [(&str, &str); 5] = [
    ("failure-domain.beta.kubernetes.io/zone", labels::ZONE),
    ("failure-domain.beta.kubernetes.io/region", labels::REGION),
    ("beta.kubernetes.io/arch", labels::ARCH),
    ("beta.kubernetes.io/os", labels::OS),
    ("beta.kubernetes.io/instance-type", labels::INSTANCE_TYPE),
];

/// A launch that may use every one of `types` (name, USD/h) in each of `zones` zones, cheapest
/// first (ties by type name, then zone): for hand-made `PlannedNodeClaim`s.
pub fn offerings_everywhere(
    types: &[(&str, f64)],
    zones: usize,
) -> Vec<crate::scheduling::LaunchOffering> {
    let mut out: Vec<crate::scheduling::LaunchOffering> = (0..types.len())
        .flat_map(|t| {
            (0..zones).map(move |z| crate::scheduling::LaunchOffering {
                option: t as u32,
                zone: z as u32,
                price: types[t].1,
                reservation: None,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        a.price
            .total_cmp(&b.price)
            .then_with(|| types[a.option as usize].0.cmp(types[b.option as usize].0))
            .then_with(|| a.zone.cmp(&b.zone))
    });
    out
}

/// The zones of the fake catalog.
pub const FAKE_ZONES: [&str; 3] = ["test-zone-1", "test-zone-2", "test-zone-3"];

/// Karpenter's benchmark catalog (`fake.InstanceTypes(n)`): type *i* has *i+1* vCPU,
/// *2(i+1)* GiB, *10(i+1)* pods, kube-reserved 100m CPU + 10Mi, spot offerings in zones 1–2 and
/// on-demand in zones 1–3, priced `0.1 × vCPU + 0.1 × GiB`.
pub fn fake_instance_types(n: usize) -> Vec<InstanceType> {
    (0..n)
        .map(|i| {
            let cpu = (i + 1) as i64;
            let gib = 2 * cpu;
            let price = 0.1 * cpu as f64 + 0.1 * gib as f64;
            let mut offerings = Vec::new();
            for zone in &FAKE_ZONES[..2] {
                offerings.push(Offering {
                    zone: zone.to_string(),
                    capacity_type: SPOT.into(),
                    price,
                    available: true,
                    reservation: None,
                    zone_id: None,
                });
            }
            for zone in &FAKE_ZONES {
                offerings.push(Offering {
                    zone: zone.to_string(),
                    capacity_type: ON_DEMAND.into(),
                    price,
                    available: true,
                    reservation: None,
                    zone_id: None,
                });
            }
            instance_type(
                &format!("fake-it-{i}"),
                &cpu.to_string(),
                &format!("{gib}Gi"),
                &(10 * cpu).to_string(),
                offerings,
            )
        })
        .collect()
}

/// [`fake_instance_types`] as a custom catalog file (`--catalog`, docs/commands.md), for the
/// benchmarks that run the command on files (`examples/b1_manifests.rs`, `b7_manifests.rs`).
pub fn fake_catalog_yaml(types: &[InstanceType]) -> String {
    use std::fmt::Write as _;
    let mut catalog = String::from("instanceTypes:\n");
    for it in types {
        let cpu = it.capacity.cpu / 1000;
        writeln!(
            catalog,
            "- name: {}\n  capacity: {{cpu: \"{cpu}\", memory: {}Gi, pods: \"{}\"}}\n  overhead: {{cpu: 100m, memory: 10Mi}}\n  offerings:",
            it.name,
            2 * cpu,
            10 * cpu
        )
        .expect("writing to a String");
        for o in &it.offerings {
            writeln!(
                catalog,
                "  - {{zone: {}, capacityType: {}, price: {}, available: true}}",
                o.zone, o.capacity_type, o.price
            )
            .expect("writing to a String");
        }
    }
    catalog
}

/// An amd64 Linux instance type with the given capacity and offerings; kube-reserved 100m/10Mi.
pub fn instance_type(
    name: &str,
    cpu: &str,
    memory: &str,
    pods: &str,
    offerings: Vec<Offering>,
) -> InstanceType {
    let mut reqs = Requirements::new();
    reqs.add(Requirement::single(labels::INSTANCE_TYPE, name));
    reqs.add(Requirement::single(labels::ARCH, "amd64"));
    reqs.add(Requirement::single(labels::OS, "linux"));
    reqs.add(Requirement::new(
        labels::ZONE,
        Operator::In,
        offerings.iter().map(|o| o.zone.clone()),
    ));
    reqs.add(Requirement::new(
        labels::CAPACITY_TYPE,
        Operator::In,
        offerings.iter().map(|o| o.capacity_type.clone()),
    ));
    InstanceType {
        name: name.to_string(),
        requirements: reqs,
        capacity: Resources::from_pairs(&[("cpu", cpu), ("memory", memory), ("pods", pods)]),
        overhead: Overhead {
            kube_reserved: Resources::from_pairs(&[("cpu", "100m"), ("memory", "10Mi")]),
            ..Default::default()
        },
        offerings,
    }
}

/// On-demand offerings at one price in the given zones.
pub fn on_demand(zones: &[&str], price: f64) -> Vec<Offering> {
    zones
        .iter()
        .map(|z| Offering {
            zone: z.to_string(),
            capacity_type: ON_DEMAND.into(),
            price,
            available: true,
            reservation: None,
            zone_id: None,
        })
        .collect()
}

/// A v1 NodePool referencing EC2NodeClass `default`, with no requirements.
pub fn node_pool(name: &str) -> NodePool {
    NodePool {
        name: name.to_string(),
        generation: Some(ApiGeneration::V1),
        node_class_ref: Some(NodeClassRef {
            group: "karpenter.k8s.aws".into(),
            kind: "EC2NodeClass".into(),
            name: "default".into(),
        }),
        ..Default::default()
    }
}

/// Adds a requirement to a NodePool.
pub fn with_requirement(mut pool: NodePool, key: &str, op: Operator, values: &[&str]) -> NodePool {
    pool.requirements
        .push(NodeSelectorRequirement::new(key, op, values));
    pool
}

/// A builder for pending pods: `PodBuilder::new("web-1").cpu("500m").memory("1Gi").build()`.
#[derive(Debug, Clone)]
pub struct PodBuilder {
    pod: Pod,
}

impl PodBuilder {
    /// A pending pod in namespace `default` with no requests but `pods: 1`.
    pub fn new(name: &str) -> Self {
        let pod = Pod::new(
            name,
            format!("uid-{name}"),
            PodFields {
                namespace: "default".into(),
                requests: Resources::from_pairs(&[("pods", "1")]),
                scheduled_condition: Some(("False".into(), "Unschedulable".into())),
                ..Default::default()
            },
        );
        PodBuilder { pod }
    }
    /// Continues building `pod`.
    pub fn from_pod(pod: Pod) -> Self {
        PodBuilder { pod }
    }
    /// Sets the namespace.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.pod.namespace = ns.to_string();
        self
    }
    /// Requests CPU.
    pub fn cpu(self, q: &str) -> Self {
        self.request("cpu", q)
    }
    /// Requests memory.
    pub fn memory(self, q: &str) -> Self {
        self.request("memory", q)
    }
    /// Requests any resource.
    pub fn request(mut self, name: &str, q: &str) -> Self {
        self.pod
            .requests
            .set(name, parse_milli(q).expect("literal quantity"));
        self
    }
    /// Adds a label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.pod.labels.insert(k.to_string(), v.to_string());
        self
    }
    /// Adds a nodeSelector entry.
    pub fn node_selector(mut self, k: &str, v: &str) -> Self {
        self.pod.node_selector.insert(k.to_string(), v.to_string());
        self
    }
    /// Adds a required node-affinity term (terms are ORed).
    pub fn required_term(mut self, reqs: &[(&str, Operator, &[&str])]) -> Self {
        self.pod.required_node_affinity.push(
            reqs.iter()
                .map(|(k, op, v)| NodeSelectorRequirement::new(k, *op, v))
                .collect(),
        );
        self
    }
    /// Adds a preferred node-affinity term.
    pub fn preferred_term(mut self, weight: i32, reqs: &[(&str, Operator, &[&str])]) -> Self {
        self.pod.preferred_node_affinity.push(Weighted {
            weight,
            term: reqs
                .iter()
                .map(|(k, op, v)| NodeSelectorRequirement::new(k, *op, v))
                .collect(),
        });
        self
    }
    /// Tolerates `key=value:effect`.
    pub fn toleration(mut self, key: &str, value: &str, effect: Effect) -> Self {
        self.pod
            .tolerations
            .push(Toleration::equal(key, value, Some(effect)));
        self
    }
    /// A topology spread constraint over pods with `selector` labels.
    pub fn spread(
        mut self,
        key: &str,
        max_skew: i32,
        hard: bool,
        selector: &[(&str, &str)],
    ) -> Self {
        self.pod.topology_spread.push(TopologySpread {
            max_skew,
            topology_key: key.to_string(),
            when_unsatisfiable: if hard {
                WhenUnsatisfiable::DoNotSchedule
            } else {
                WhenUnsatisfiable::ScheduleAnyway
            },
            label_selector: Some(LabelSelector::eq(selector)),
            min_domains: None,
            match_label_keys: vec![],
            honor_taints: false,
            ignore_node_affinity: false,
        });
        self
    }
    /// Sets `nodeTaintsPolicy` (Honor when `honor_taints`) and, when given, `nodeAffinityPolicy`
    /// (Ignore when `Some(true)`) on the last topology spread constraint.
    pub fn spread_policies(mut self, honor_taints: bool, ignore_affinity: Option<bool>) -> Self {
        if let Some(c) = self.pod.topology_spread.last_mut() {
            c.honor_taints = honor_taints;
            if let Some(ignore) = ignore_affinity {
                c.ignore_node_affinity = ignore;
            }
        }
        self
    }
    /// Sets `minDomains` on the last topology spread constraint.
    pub fn min_domains(mut self, n: Option<i32>) -> Self {
        if let Some(c) = self.pod.topology_spread.last_mut() {
            c.min_domains = n;
        }
        self
    }
    /// Required pod affinity to pods with `selector` labels on `key`.
    pub fn affinity(mut self, key: &str, selector: &[(&str, &str)]) -> Self {
        self.pod.pod_affinity.push(term(key, selector));
        self
    }
    /// Required pod anti-affinity to pods with `selector` labels on `key`.
    pub fn anti_affinity(mut self, key: &str, selector: &[(&str, &str)]) -> Self {
        self.pod.pod_anti_affinity.push(term(key, selector));
        self
    }
    /// Preferred pod affinity.
    pub fn preferred_affinity(mut self, weight: i32, key: &str, selector: &[(&str, &str)]) -> Self {
        self.pod.preferred_pod_affinity.push(Weighted {
            weight,
            term: term(key, selector),
        });
        self
    }
    /// Preferred pod anti-affinity.
    pub fn preferred_anti_affinity(
        mut self,
        weight: i32,
        key: &str,
        selector: &[(&str, &str)],
    ) -> Self {
        self.pod.preferred_pod_anti_affinity.push(Weighted {
            weight,
            term: term(key, selector),
        });
        self
    }
    /// Binds a host port.
    pub fn host_port(mut self, port: i32) -> Self {
        self.pod.host_ports.push(HostPort {
            ip: "0.0.0.0".into(),
            port,
            protocol: "TCP".into(),
        });
        self
    }
    /// Owned by a DaemonSet.
    pub fn daemonset(mut self, name: &str) -> Self {
        self.pod.owner = Some(Owner::of("DaemonSet", name.to_string()));
        self
    }
    /// Binds the pod to a node.
    pub fn on_node(mut self, node: &str) -> Self {
        self.pod.node_name = Some(node.to_string());
        self.pod.scheduled_condition = Some(("True".into(), String::new()));
        self
    }
    /// The pod.
    pub fn build(self) -> Pod {
        self.pod
    }
}

fn term(key: &str, selector: &[(&str, &str)]) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(LabelSelector::eq(selector)),
        namespaces: vec![],
        namespace_selector: None,
        topology_key: key.to_string(),
    }
}

/// A taint.
pub fn taint(key: &str, value: &str, effect: Effect) -> Taint {
    Taint::new(key, value, effect)
}

/// Labels from pairs.
pub fn labels_of(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A small deterministic generator (SplitMix64): fixtures must not depend on a `rand` crate's
/// stream staying the same across versions.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// One element of a slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Karpenter's "diverse" benchmark pods (docs/performance.md B1, `scheduling_benchmark_test.go`): a fifth
/// each of generic pods, zonal topology spread (maxSkew 1, DoNotSchedule), hostname spread, zonal
/// self-affinity and hostname anti-affinity (the anti-affinity fifth shares `app=nginx`, so each
/// needs a node of its own); CPU from {100m, 250m, 500m, 1, 1.5}, memory from
/// {100Mi, 256Mi, 512Mi, 1Gi, 2Gi, 4Gi}; fixed seed.
pub fn diverse_pods(count: usize, seed: u64) -> Vec<Pod> {
    const VALUES: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];
    const CPU: [&str; 5] = ["100m", "250m", "500m", "1", "1500m"];
    const MEMORY: [&str; 6] = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"];
    let mut rng = Rng::new(seed);
    let per_kind = count / 5;
    let mut pods = Vec::with_capacity(count);
    for i in 0..count {
        let kind = if i < 5 * per_kind {
            i / per_kind.max(1)
        } else {
            0
        };
        let mut b = PodBuilder::new(&format!("pod-{i:06}"))
            .cpu(rng.pick::<&str>(&CPU))
            .memory(rng.pick::<&str>(&MEMORY));
        b = match kind {
            1 => {
                let own = *rng.pick(&VALUES);
                let sel = *rng.pick(&VALUES);
                b.label("my-label", own)
                    .spread(labels::ZONE, 1, true, &[("my-label", sel)])
            }
            2 => {
                let own = *rng.pick(&VALUES);
                let sel = *rng.pick(&VALUES);
                b.label("my-label", own)
                    .spread(labels::HOSTNAME, 1, true, &[("my-label", sel)])
            }
            3 => {
                let v = *rng.pick(&VALUES);
                b.label("my-affinity", v)
                    .affinity(labels::ZONE, &[("my-affinity", v)])
            }
            4 => b
                .label("app", "nginx")
                .anti_affinity(labels::HOSTNAME, &[("app", "nginx")]),
            _ => {
                let own = *rng.pick(&VALUES);
                b.label("my-label", own)
            }
        };
        pods.push(b.build());
    }
    pods
}

/// The whole B1 input: `count` diverse pods, one unlimited NodePool, 400 fake instance types.
pub fn b1_input(count: usize) -> crate::scheduling::Input {
    crate::scheduling::Input {
        pods: diverse_pods(count, 42),
        pools: vec![crate::scheduling::PoolInput {
            pool: node_pool("default"),
            node_class: Some("default".into()),
            instance_types: fake_instance_types(400),
            usage: Resources::new(),
            claim_annotations: Default::default(),
            images: Vec::new(),
            not_ready: None,
            unlaunched: Default::default(),
        }],
        ..Default::default()
    }
}

/// Spot offerings at one price in the given zones.
pub fn spot(zones: &[&str], price: f64) -> Vec<Offering> {
    zones
        .iter()
        .map(|z| Offering {
            zone: z.to_string(),
            capacity_type: SPOT.into(),
            price,
            available: true,
            reservation: None,
            zone_id: None,
        })
        .collect()
}

/// A node Karpenter manages (NodePool, instance-type, zone and capacity-type labels, initialized,
/// Ready), sized as `it`, created and initialized a day before `now`, with `pods` bound to it.
pub fn managed_node(
    name: &str,
    pool: &str,
    it: &InstanceType,
    zone: &str,
    capacity_type: &str,
    now: i64,
    pods: Vec<Pod>,
) -> crate::disruption::consolidation::NodeInput {
    use crate::disruption::consolidation::{BoundPod, ClaimFacts, NodeInput};
    let node = crate::model::node::Node {
        name: name.to_string(),
        labels: labels_of(&[
            (labels::NODEPOOL, pool),
            (labels::INSTANCE_TYPE, &it.name),
            (labels::ZONE, zone),
            (labels::CAPACITY_TYPE, capacity_type),
            (labels::HOSTNAME, name),
            ("karpenter.sh/initialized", "true"),
        ]),
        capacity: it.capacity.clone(),
        allocatable: it.allocatable(),
        ready: true,
        initialized: true,
        ..Default::default()
    };
    NodeInput {
        node,
        claim: Some(ClaimFacts {
            name: format!("{name}-claim"),
            created: now - 86_400,
            initialized_at: Some(now - 86_400),
            ..Default::default()
        }),
        pods: pods
            .into_iter()
            .map(|mut p| {
                p.node_name = Some(name.to_string());
                p.scheduled_condition = Some(("True".into(), String::new()));
                BoundPod::new(p)
            })
            .collect(),
        nominated: false,
    }
}

/// A consolidation input at `now` over `pools` (each with its instance types) and `nodes`; the
/// release follows the pools' generation, feature gates are the release's defaults.
pub fn consolidation_input(
    now: i64,
    pools: Vec<(NodePool, Vec<InstanceType>)>,
    nodes: Vec<crate::disruption::consolidation::NodeInput>,
) -> crate::disruption::consolidation::ConsolidationInput {
    use crate::disruption::consolidation::{ConsolidationInput, FeatureGates, Release};
    let pools: Vec<crate::scheduling::PoolInput> = pools
        .into_iter()
        .map(|(pool, instance_types)| crate::scheduling::PoolInput {
            pool,
            node_class: Some("default".into()),
            instance_types,
            usage: Resources::new(),
            claim_annotations: Default::default(),
            images: Vec::new(),
            not_ready: None,
            unlaunched: Default::default(),
        })
        .collect();
    let release = Release::for_pools(&pools);
    ConsolidationInput {
        now,
        release,
        feature_gates: FeatureGates::defaults(release),
        min_values_policy: Default::default(),
        preference_policy: Default::default(),
        nodes,
        pending_pods: Vec::new(),
        buffer_nodes: Vec::new(),
        pdbs: Vec::new(),
        pools,
        daemonsets: Vec::new(),
        namespace_labels: BTreeMap::new(),
        storage: None,
    }
}

/// docs/performance.md B7's cluster: `nodes` nodes over three v1 NodePools (`on-demand`, `spot`, `mixed`,
/// default budgets of 10%) sized from the 400-type fake catalog (8 to 32 vCPU), about
/// `pods_per_node` bound pods each (30: 150,000 pods on 5,000 nodes, the B4 shape) from deployments
/// of five shapes averaging 0.4 vCPU, filled to 30–90% of their CPU as after a scale-in (at most
/// twice `pods_per_node`); `constrained_percent` of the deployments spread over zones
/// (maxSkew 1, DoNotSchedule). Deterministic for a seed.
pub fn b7_input(
    nodes: usize,
    pods_per_node: usize,
    constrained_percent: usize,
    seed: u64,
) -> crate::disruption::consolidation::ConsolidationInput {
    const CPU: [&str; 5] = ["100m", "200m", "300m", "500m", "900m"];
    const MEMORY: [&str; 5] = ["128Mi", "256Mi", "512Mi", "768Mi", "1Gi"];
    let now = 1_767_225_600; // 2026-01-01T00:00:00Z
    let mut rng = Rng::new(seed);
    let catalog = fake_instance_types(400);
    let pools = [("on-demand", ON_DEMAND), ("spot", SPOT), ("mixed", "")];
    let pool_inputs: Vec<(NodePool, Vec<InstanceType>)> = pools
        .iter()
        .map(|(name, ct)| {
            let mut p = node_pool(name);
            if !ct.is_empty() {
                p = with_requirement(p, labels::CAPACITY_TYPE, Operator::In, &[ct]);
            }
            p.disruption.consolidation_policy = "WhenEmptyOrUnderutilized".into();
            p.disruption.consolidate_after = Some("0s".into());
            p.disruption.budgets = vec![crate::model::nodepool::Budget {
                nodes: "10%".into(),
                ..Default::default()
            }];
            (p, catalog.clone())
        })
        .collect();
    let deployments = (nodes * pods_per_node / 20).max(1);
    let mut out = Vec::with_capacity(nodes);
    let mut pod_index = 0usize;
    for n in 0..nodes {
        let (pool, ct) = pools[n % pools.len()];
        let ct = if ct.is_empty() {
            *rng.pick(&[ON_DEMAND, SPOT])
        } else {
            ct
        };
        let zone = FAKE_ZONES[if ct == SPOT {
            rng.below(2)
        } else {
            rng.below(3)
        }];
        let it = &catalog[7 + rng.below(25)];
        let name = format!("node-{n:05}");
        let allocatable = it.allocatable();
        let target = allocatable.cpu * (30 + rng.below(61) as i64) / 100;
        let mut used = Resources::new();
        let mut pods = Vec::new();
        while pods.len() < 2 * pods_per_node {
            let d = rng.below(deployments);
            let shape = d % CPU.len();
            let mut b = PodBuilder::new(&format!("pod-{pod_index:07}"))
                .cpu(CPU[shape])
                .memory(MEMORY[shape])
                .label("app", &format!("deploy-{d}"))
                .node_selector(labels::NODEPOOL, pool);
            if d % 100 < constrained_percent {
                let app = format!("deploy-{d}");
                b = b.spread(labels::ZONE, 1, true, &[("app", &app)]);
            }
            let p = b.build();
            let after = used.add(&p.requests);
            if after.cpu > target || !after.fits_in(&allocatable) {
                break;
            }
            used = after;
            pod_index += 1;
            pods.push(p);
        }
        out.push(managed_node(&name, pool, it, zone, ct, now, pods));
    }
    consolidation_input(now, pool_inputs, out)
}

/// A number from the environment, else `default`: the seeds and counts of the ignored fuzz runs
/// (`scheduling::fuzz_check`, whose pure layer may not read the environment itself;
/// `usecases::consolidate::fuzz_check`; `usecases::fuzz_mutating`).
pub fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A string from the environment, for the same ignored runs.
pub fn env_text(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// The panic hook taken by [`quiet_panics`], put back when dropped.
pub struct QuietPanics(Option<PanicHook>);

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// For the long fuzz runs (`cli::fuzz_live`, the e2e `fuzz_inputs`), when `quiet`: panics are
/// recorded, not printed — each one's location (` at FILE:LINE`) goes to `at` for the run that
/// caught it. The hook is process-wide, so only a long run alone in its process asks for it;
/// the previous hook is back when the returned guard drops.
pub fn quiet_panics(quiet: bool, at: &'static std::sync::Mutex<String>) -> QuietPanics {
    QuietPanics(quiet.then(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                *at.lock().unwrap_or_else(|e| e.into_inner()) =
                    format!(" at {}:{}", l.file(), l.line());
            }
        }));
        previous
    }))
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if let Some(previous) = self.0.take() {
            std::panic::set_hook(previous);
        }
    }
}

/// The paths where two JSON documents differ, each `PATH: live A / offline B` (`.a.b[2]`; a key
/// one side lacks is null there; arrays of different lengths differ whole): the offline/live
/// checks (`usecases::offline_live_check`, the e2e `offline_live`).
pub fn json_differences(live: &serde_json::Value, offline: &serde_json::Value) -> Vec<String> {
    fn walk(
        path: &str,
        live: &serde_json::Value,
        offline: &serde_json::Value,
        out: &mut Vec<String>,
    ) {
        use serde_json::Value;
        match (live, offline) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let (l, r) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    walk(&format!("{path}.{k}"), l, r, out);
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (l, r)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), l, r, out);
                }
            }
            _ if live != offline => out.push(format!("{path}: live {live} / offline {offline}")),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", live, offline, &mut out);
    out
}

/// A fuzz sweep's failing seeds, each with its violations (lines).
pub type SeedFailures = Vec<(u64, Vec<String>)>;

/// Runs `run_one` on `n` seeds from `seed` and keeps the failing ones. With `tell_every`, each
/// failure is printed as it comes and progress every that many seeds, so a run cut short still
/// says how far it got (the long `--ignored` sweeps of `usecases::consolidate::fuzz_check` and
/// `usecases::offline_live_check`).
pub fn sweep_seeds(
    seed: u64,
    n: u64,
    tell_every: Option<u64>,
    mut run_one: impl FnMut(u64) -> Vec<String>,
) -> SeedFailures {
    let mut failures = Vec::new();
    for s in seed..seed + n {
        let v = run_one(s);
        if !v.is_empty() {
            if tell_every.is_some() {
                eprintln!("seed {s}:\n  {}", v.join("\n  "));
            }
            failures.push((s, v));
        }
        if tell_every.is_some_and(|every| (s - seed + 1).is_multiple_of(every)) {
            eprintln!("checked seeds {seed}..={s}: {} failing", failures.len());
        }
    }
    failures
}

/// The first 20 failing seeds of a sweep, each with its violations: a failed assertion's text.
pub fn describe_failures(failures: &[(u64, Vec<String>)]) -> String {
    failures
        .iter()
        .take(20)
        .map(|(s, v)| format!("seed {s}:\n  {}", v.join("\n  ")))
        .collect::<Vec<_>>()
        .join("\n")
}
