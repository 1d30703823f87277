//! Random small worlds for the plan checker: NodePools, instance types with offerings, existing
//! nodes with their pods, DaemonSets, volumes and pending pods, all from one seed.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::instance_type::{InstanceType, Offering, Overhead, ON_DEMAND, SPOT};
use crate::model::labels::{
    ARCH, CAPACITY_TYPE, HOSTNAME, INSTANCE_CPU, INSTANCE_TYPE, NODEPOOL, OS, ZONE,
};
use crate::model::node::Node;
use crate::model::pod::{ClaimSource, Pod, PodVolume};
use crate::model::requirements::Operator::{self, *};
use crate::model::requirements::{NodeSelectorRequirement, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::storage::{
    PersistentVolume, PersistentVolumeClaim, Storage, StorageClass, VolumeBindingMode,
};
use crate::model::taints::{Effect, Taint, Toleration};
use crate::scheduling::{ExistingNode, Input, PoolInput};
use crate::testing::{node_pool, PodBuilder, Rng};

pub(super) const ZONES: [&str; 3] = ["z-a", "z-b", "z-c"];
const CTS: [&str; 2] = [ON_DEMAND, SPOT];
/// A pool-level custom key (not an instance-type label).
pub(super) const TIER: &str = "example.com/tier";
const TEAM: &str = "example.com/team";
pub(super) const GPU: &str = "example.com/gpu";

fn chance(rng: &mut Rng, percent: usize) -> bool {
    rng.below(100) < percent
}

fn one<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

fn subset<'a>(rng: &mut Rng, items: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = items.iter().copied().filter(|_| chance(rng, 50)).collect();
    if out.is_empty() {
        out.push(*rng.pick(items));
    }
    out
}

fn res(cpu_milli: i64, mem_mi: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_milli);
    r.set("memory", mem_mi * 1024 * 1024 * 1000);
    r
}

fn instance_types(rng: &mut Rng) -> Vec<InstanceType> {
    let n = 2 + rng.below(4);
    (0..n)
        .map(|i| {
            let cpu = *rng.pick(&[1i64, 2, 4, 8, 16]);
            let mut capacity = res(cpu * 1000, cpu * 1024 * *rng.pick(&[2i64, 4]));
            capacity.set("pods", *rng.pick(&[3i64, 8, 16, 32]) * 1000);
            if chance(rng, 20) {
                capacity.set(GPU, 1000 * *rng.pick(&[1i64, 2]));
            }
            let mut offerings = Vec::new();
            for zone in ZONES {
                for ct in CTS {
                    if chance(rng, 55) {
                        let base = cpu as f64 * if ct == SPOT { 0.02 } else { 0.05 };
                        offerings.push(Offering {
                            zone: zone.into(),
                            capacity_type: ct.into(),
                            price: base * (0.8 + rng.below(40) as f64 / 100.0),
                            available: chance(rng, 90),
                            reservation: None,
                            zone_id: None,
                        });
                    }
                }
            }
            if offerings.is_empty() {
                offerings.push(Offering {
                    zone: ZONES[i % 3].into(),
                    capacity_type: ON_DEMAND.into(),
                    price: cpu as f64 * 0.05,
                    available: true,
                    reservation: None,
                    zone_id: None,
                });
            }
            let name = format!("t{i}-{cpu}c");
            let mut reqs = Requirements::new();
            reqs.add(Requirement::single(INSTANCE_TYPE, &name));
            reqs.add(Requirement::single(
                ARCH,
                one(rng, &["amd64", "amd64", "arm64"]),
            ));
            reqs.add(Requirement::single(OS, "linux"));
            reqs.add(Requirement::single(INSTANCE_CPU, &cpu.to_string()));
            for (key, of) in [(ZONE, 0), (CAPACITY_TYPE, 1)] {
                let values = offerings.iter().map(|o| {
                    if of == 0 {
                        o.zone.clone()
                    } else {
                        o.capacity_type.clone()
                    }
                });
                reqs.add(Requirement::new(key, In, values));
            }
            InstanceType {
                name,
                requirements: reqs,
                capacity,
                overhead: Overhead {
                    kube_reserved: res(100 * rng.below(3) as i64, 100 + 100 * rng.below(3) as i64),
                    ..Default::default()
                },
                offerings,
            }
        })
        .collect()
}

fn nsr(key: &str, op: Operator, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement::new(key, op, values)
}

fn pools(rng: &mut Rng, types: &[InstanceType]) -> Vec<PoolInput> {
    (0..1 + rng.below(3))
        .map(|i| {
            let mut pool = node_pool(&format!("p{i}"));
            pool.weight = *rng.pick(&[0, 0, 1, 5, 10]);
            let r = &mut pool.requirements;
            if chance(rng, 40) {
                r.push(nsr(CAPACITY_TYPE, In, &subset(rng, &CTS)));
            }
            if chance(rng, 30) {
                let op = if chance(rng, 50) { In } else { NotIn };
                r.push(nsr(ZONE, op, &subset(rng, &ZONES)));
            }
            if chance(rng, 25) {
                let op = if chance(rng, 50) { Gt } else { Lt };
                r.push(nsr(INSTANCE_CPU, op, &[one(rng, &["1", "2", "4", "8"])]));
            }
            if chance(rng, 15) {
                r.push(nsr(ARCH, In, &[one(rng, &["amd64", "arm64"])]));
            }
            match rng.below(10) {
                0 => r.push(nsr(TIER, In, &subset(rng, &["gold", "silver"]))),
                1 => r.push(nsr(TIER, Exists, &[])),
                _ => {}
            }
            if chance(rng, 15) {
                let mut m = nsr(INSTANCE_TYPE, Exists, &[]);
                m.min_values = Some(2);
                r.push(m);
            }
            if chance(rng, 30) {
                pool.labels
                    .insert(TEAM.into(), format!("team{}", rng.below(2)));
            }
            if chance(rng, 30) {
                pool.taints.push(Taint::new(
                    "dedicated",
                    &format!("p{i}"),
                    Effect::NoSchedule,
                ));
            }
            if chance(rng, 25) {
                pool.startup_taints
                    .push(Taint::new("startup", "x", Effect::NoSchedule));
            }
            if chance(rng, 30) {
                pool.limits
                    .insert("cpu".into(), 1000 * *rng.pick(&[2i64, 4, 8, 16, 32]));
            }
            PoolInput {
                pool,
                node_class: Some("default".into()),
                instance_types: types.to_vec(),
                usage: Resources::new(),
                claim_annotations: Default::default(),
                images: Vec::new(),
                not_ready: None,
                unlaunched: Default::default(),
            }
        })
        .collect()
}

/// One pending pod's shape, shared by the replicas of an app (so a spread or anti-affinity
/// constraint holds for every pod its selector counts).
fn app_template(rng: &mut Rng, app: &str, pools: &[PoolInput]) -> PodBuilder {
    let cpu = one(rng, &["100m", "250m", "500m", "1", "1500m", "3", "6"]);
    let mut b = PodBuilder::new(app)
        .label("app", app)
        .cpu(cpu)
        .memory(one(rng, &["128Mi", "512Mi", "1Gi", "3Gi"]));
    if chance(rng, 8) {
        b = b.request(GPU, "1");
    }
    match rng.below(12) {
        0 => b = b.node_selector(ZONE, one(rng, &ZONES)),
        1 => b = b.node_selector(TEAM, &format!("team{}", rng.below(2))),
        2 => b = b.node_selector(ARCH, one(rng, &["amd64", "arm64"])),
        3 => b = b.node_selector(CAPACITY_TYPE, one(rng, &CTS)),
        _ => {}
    }
    for _ in 0..rng.below(3).saturating_sub(rng.below(2)) {
        let mut term: Vec<(&str, Operator, Vec<&str>)> = Vec::new();
        for _ in 0..1 + rng.below(2) {
            term.push(match rng.below(7) {
                0 => (ZONE, In, subset(rng, &ZONES)),
                1 => (ZONE, NotIn, vec![one(rng, &ZONES)]),
                2 => (INSTANCE_CPU, Gt, vec![one(rng, &["1", "2", "4"])]),
                3 => (INSTANCE_CPU, Lt, vec![one(rng, &["2", "4", "8", "16"])]),
                4 => (CAPACITY_TYPE, NotIn, vec![one(rng, &CTS)]),
                5 => (TIER, *rng.pick(&[Exists, DoesNotExist]), vec![]),
                _ => (TIER, In, vec![one(rng, &["gold", "silver"])]),
            });
        }
        let term: Vec<(&str, Operator, &[&str])> = term
            .iter()
            .map(|(k, o, v)| (*k, *o, v.as_slice()))
            .collect();
        b = if chance(rng, 60) {
            b.required_term(&term)
        } else {
            b.preferred_term(1 + rng.below(50) as i32, &term)
        };
    }
    for p in pools {
        if !p.pool.taints.is_empty() && chance(rng, 50) {
            b = b.toleration("dedicated", &p.pool.name, Effect::NoSchedule);
        }
    }
    if chance(rng, 10) {
        let mut pod = b.build();
        pod.tolerations.push(Toleration::exists("", None));
        b = PodBuilder::from_pod(pod);
    }
    if chance(rng, 35) {
        let key = *rng.pick(&[ZONE, ZONE, HOSTNAME, CAPACITY_TYPE]);
        b = b
            .spread(
                key,
                1 + rng.below(2) as i32,
                chance(rng, 75),
                &[("app", app)],
            )
            .spread_policies(chance(rng, 30), Some(chance(rng, 20)));
        if chance(rng, 20) {
            b = b.min_domains(Some(2 + rng.below(2) as i32));
        }
    }
    match rng.below(10) {
        0 => b = b.anti_affinity(HOSTNAME, &[("app", app)]),
        1 => b = b.anti_affinity(ZONE, &[("app", app)]),
        2 => b = b.affinity(ZONE, &[("app", app)]),
        3 => b = b.preferred_anti_affinity(10, HOSTNAME, &[("app", app)]),
        _ => {}
    }
    if chance(rng, 10) {
        b = b.host_port(8080);
    }
    b
}

fn storage(rng: &mut Rng) -> Storage {
    let mut s = Storage::default();
    s.classes.insert(
        "wait".into(),
        StorageClass {
            name: "wait".into(),
            provisioner: "ebs.csi.aws.com".into(),
            binding_mode: VolumeBindingMode::WaitForFirstConsumer,
            allowed_topologies: if chance(rng, 50) {
                vec![vec![nsr(ZONE, In, &subset(rng, &ZONES))]]
            } else {
                vec![]
            },
            ..Default::default()
        },
    );
    s
}

/// A claim for `pod`: bound to a zonal volume, or unbound of the WaitForFirstConsumer class.
fn add_claim(rng: &mut Rng, s: &mut Storage, pod: &mut Pod) {
    let name = format!("data-{}", pod.name);
    let bound = chance(rng, 50);
    if bound {
        s.volumes.insert(
            format!("pv-{name}"),
            PersistentVolume {
                name: format!("pv-{name}"),
                node_affinity: vec![vec![nsr(ZONE, In, &[one(rng, &ZONES)])]],
                csi_driver: Some("ebs.csi.aws.com".into()),
                ..Default::default()
            },
        );
    }
    s.claims.insert(
        (pod.namespace.clone(), name.clone()),
        PersistentVolumeClaim {
            namespace: pod.namespace.clone(),
            name: name.clone(),
            storage_class: Some("wait".into()),
            volume_name: bound.then(|| format!("pv-{name}")),
            bind_completed: bound,
            ..Default::default()
        },
    );
    pod.volumes.push(PodVolume {
        name: "data".into(),
        claim: ClaimSource::Named(name),
    });
}

fn existing_nodes(rng: &mut Rng, pools: &mut [PoolInput]) -> Vec<ExistingNode> {
    (0..rng.below(4))
        .map(|i| {
            let p = rng.below(pools.len());
            let it = rng.pick(&pools[p].instance_types).clone();
            let o = rng.pick(&it.offerings).clone();
            let pool = &pools[p].pool;
            let name = format!("n{i}");
            let mut labels = pool.labels.clone();
            for r in it.requirements.iter() {
                if let Some(v) = r.values().iter().next().filter(|_| r.values().len() == 1) {
                    labels.insert(r.key.clone(), v.clone());
                }
            }
            labels.insert(ZONE.into(), o.zone.clone());
            labels.insert(CAPACITY_TYPE.into(), o.capacity_type.clone());
            labels.insert(HOSTNAME.into(), name.clone());
            labels.insert(NODEPOOL.into(), pool.name.clone());
            let initialized = chance(rng, 80);
            let mut taints = pool.taints.clone();
            if !initialized {
                taints.extend(pool.startup_taints.iter().cloned());
                if chance(rng, 50) {
                    taints.push(Taint::new(
                        "node.kubernetes.io/not-ready",
                        "",
                        Effect::NoSchedule,
                    ));
                }
            }
            let node = Node {
                name: name.clone(),
                labels,
                taints,
                startup_taints: pool.startup_taints.clone(),
                capacity: it.capacity.clone(),
                allocatable: it.allocatable(),
                ready: initialized,
                initialized,
                ..Default::default()
            };
            pools[p].usage.add_assign(&it.capacity);
            let pods = (0..rng.below(4))
                .map(|j| {
                    let app = format!("a{}", rng.below(3));
                    let mut b = PodBuilder::new(&format!("{name}-b{j}"))
                        .label("app", &app)
                        .cpu(one(rng, &["100m", "250m", "500m"]))
                        .on_node(&name);
                    if chance(rng, 15) {
                        b = b.host_port(8080);
                    }
                    b.build()
                })
                .collect();
            ExistingNode { node, pods }
        })
        .collect()
}

fn daemonsets(rng: &mut Rng) -> Vec<Pod> {
    (0..rng.below(3))
        .map(|i| {
            let mut b = PodBuilder::new(&format!("ds{i}"))
                .cpu(one(rng, &["100m", "200m"]))
                .memory("64Mi")
                .daemonset(&format!("ds{i}"));
            if chance(rng, 20) {
                b = b.node_selector(ARCH, "amd64");
            }
            if chance(rng, 20) {
                b = b.host_port(9100);
            }
            let mut pod = b.build();
            if chance(rng, 30) {
                pod.tolerations.push(Toleration::exists("", None));
            }
            pod
        })
        .collect()
}

/// Round 2's additions (s33-fuzzplan2), drawn from a second stream so the first round's worlds
/// keep their shape: spreads with `matchLabelKeys: [rev]` over pods of two revisions, more
/// `minDomains` (up to 4, more than the zones), more volumes, and bound pods with required
/// anti-affinity to their own app (the inverse anti-affinity Karpenter tracks from the cluster).
struct Widen {
    rng: Rng,
}

impl Widen {
    fn app(&mut self, pod: &Pod) -> (bool, Option<i32>, bool) {
        let spread = !pod.topology_spread.is_empty();
        let keys = spread && chance(&mut self.rng, 40);
        let min = (spread && chance(&mut self.rng, 25)).then(|| 2 + self.rng.below(3) as i32);
        (keys, min, chance(&mut self.rng, 15))
    }

    fn pod(&mut self, pod: &mut Pod, (keys, min, _): (bool, Option<i32>, bool)) {
        pod.labels
            .insert("rev".into(), format!("r{}", self.rng.below(2)));
        for c in &mut pod.topology_spread {
            if keys {
                c.match_label_keys = vec!["rev".into()];
            }
            if min.is_some() {
                c.min_domains = min;
            }
        }
    }

    fn bound(&mut self, nodes: &mut [ExistingNode]) {
        for pod in nodes.iter_mut().flat_map(|n| n.pods.iter_mut()) {
            if chance(&mut self.rng, 12) {
                let app = pod.labels.get("app").cloned().unwrap_or_default();
                let key = *self.rng.pick(&[ZONE, HOSTNAME]);
                *pod = PodBuilder::from_pod(pod.clone())
                    .anti_affinity(key, &[("app", &app)])
                    .build();
            }
        }
    }
}

/// The world of `seed`, with at most `max_pending` pending pods.
pub(super) fn world(seed: u64, max_pending: usize) -> Input {
    let mut rng = Rng::new(seed);
    let mut widen = Widen {
        rng: Rng::new(seed ^ 0x5eed_0033),
    };
    let types = instance_types(&mut rng);
    let mut pools = pools(&mut rng, &types);
    let mut existing_nodes = existing_nodes(&mut rng, &mut pools);
    widen.bound(&mut existing_nodes);
    let daemonsets = daemonsets(&mut rng);
    let mut storage = storage(&mut rng);
    let apps: Vec<String> = (0..1 + rng.below(3)).map(|a| format!("a{a}")).collect();
    let templates: Vec<PodBuilder> = apps
        .iter()
        .map(|a| app_template(&mut rng, a, &pools))
        .collect();
    let with_claims: Vec<bool> = apps.iter().map(|_| chance(&mut rng, 10)).collect();
    let widened: Vec<(bool, Option<i32>, bool)> = templates
        .iter()
        .map(|t| widen.app(&t.clone().build()))
        .collect();
    let mut pods = Vec::new();
    for i in 0..1 + rng.below(max_pending) {
        let a = rng.below(apps.len());
        let mut pod = templates[a].clone().build();
        pod.name = format!("{}-{i}", apps[a]);
        pod.uid = format!("uid-{}", pod.name);
        widen.pod(&mut pod, widened[a]);
        if with_claims[a] {
            add_claim(&mut rng, &mut storage, &mut pod);
        } else if widened[a].2 {
            add_claim(&mut widen.rng, &mut storage, &mut pod);
        }
        pods.push(pod);
    }
    Input {
        pods,
        existing_nodes,
        pools,
        daemonsets,
        namespace_labels: BTreeMap::new(),
        storage: Some(Arc::new(storage)),
        ..Default::default()
    }
}
