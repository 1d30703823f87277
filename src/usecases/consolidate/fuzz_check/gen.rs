//! Random small clusters as plain data ([`Spec`]) and as the manifests `consolidate -f` reads.
//! The checker reads the [`Spec`], never the engine's view of it.

/// The instant every cluster is evaluated at: Monday 2024-06-24T12:00:00Z.
pub const NOW: i64 = 1_719_230_400;

/// A seeded xorshift64* generator (deterministic, no dependency).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// The generation of the cluster's Karpenter objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gen {
    V1,
    V1Beta1,
    V1Alpha5,
}

/// Instance types nodes are made of: name, vCPUs, GiB.
pub const TYPES: &[(&str, u32, u32)] = &[
    ("m5.large", 2, 8),
    ("m5.xlarge", 4, 16),
    ("m5.2xlarge", 8, 32),
    ("c5.large", 2, 4),
    ("c5.xlarge", 4, 8),
    ("r5.large", 2, 16),
    ("t3.medium", 2, 4),
    ("t3.large", 2, 8),
];
/// More types for pools that select by family and size (a spot-to-spot single-node
/// replacement needs 15 cheaper options): name, vCPUs, GiB (at most 8 GiB a vCPU).
const MORE_TYPES: &[(&str, u32, u32)] = &[
    ("m5a.large", 2, 8),
    ("m5a.xlarge", 4, 16),
    ("m6i.large", 2, 8),
    ("m6i.xlarge", 4, 16),
    ("m6i.2xlarge", 8, 32),
    ("c5a.large", 2, 4),
    ("c6i.large", 2, 4),
    ("c6i.xlarge", 4, 8),
    ("c6i.2xlarge", 8, 16),
    ("r6i.large", 2, 16),
    ("r5.xlarge", 4, 32),
    ("c5.2xlarge", 8, 16),
];
pub const ZONES: &[&str] = &["us-east-1a", "us-east-1b", "us-east-1c"];

/// A budget window with its activity at [`NOW`] worked out by hand (core v1.14.1
/// `nodepool.go` `IsActive`: active when the schedule hits in `(now - duration, now]`).
pub const WINDOWS: &[(&str, &str, bool)] = &[
    ("0 12 * * *", "1h", true),
    ("0 11 * * *", "30m", false),
    ("@daily", "13h", true),
    ("30 9 * * 1", "4h", true),
    ("0 0 * * 6", "24h", false),
    ("0 12 * * 2", "2h", false),
    // Hit exactly `duration` ago: `Next(now - duration)` is strictly after it, so inactive.
    ("0 10 * * *", "2h", false),
];

#[derive(Debug, Clone)]
pub struct Budget {
    /// `nodes`: a percentage or a count.
    pub percent: bool,
    pub value: u32,
    /// v1 `reasons` (empty: every reason).
    pub reasons: Vec<&'static str>,
    pub window: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    WhenEmpty,
    Underutilized,
    Balanced,
}

#[derive(Debug, Clone)]
pub struct Pool {
    pub name: String,
    pub policy: Policy,
    /// Seconds; `None`: `Never` (v1alpha5: consolidation disabled, `ttlSecondsAfterEmpty`).
    pub consolidate_after: Option<i64>,
    pub budgets: Vec<Budget>,
    /// Seconds; `None`: `Never`.
    pub expire_after: Option<i64>,
    /// Instance types allowed; empty: the broad families `c`, `m`, `r`.
    pub types: Vec<&'static str>,
    pub capacity_types: Vec<&'static str>,
    pub tainted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    None,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
}

#[derive(Debug, Clone)]
pub struct PodSpec {
    pub name: String,
    pub app: String,
    pub cpu_m: u64,
    pub mem_mi: u64,
    pub owner: Owner,
    pub do_not_disrupt: bool,
    pub tolerates: bool,
    pub zone_selector: Option<&'static str>,
    pub high_priority: bool,
    pub spread: bool,
    pub anti_affinity: bool,
}

#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: String,
    pub pool: usize,
    pub itype: &'static str,
    pub capacity_type: &'static str,
    pub zone: &'static str,
    pub initialized: bool,
    pub ready: bool,
    /// Seconds since creation.
    pub age: i64,
    /// Seconds since the last pod event (v1), if any.
    pub last_pod_event_age: Option<i64>,
    pub drifted: bool,
    pub do_not_disrupt: bool,
    pub pods: Vec<PodSpec>,
}

impl NodeSpec {
    /// Allocatable millicores and MiB.
    pub fn allocatable(&self) -> (u64, u64) {
        let (_, cpu, gib) = TYPES.iter().find(|t| t.0 == self.itype).unwrap();
        (
            u64::from(*cpu) * 1000 - 80,
            u64::from(*gib) * 1024 * 9 / 10 - 300,
        )
    }
    pub fn init_at(&self) -> i64 {
        NOW - self.age + 60
    }
}

#[derive(Debug, Clone)]
pub struct Pdb {
    pub app: String,
    /// `minAvailable` (else `maxUnavailable`).
    pub min_available: bool,
    pub percent: bool,
    pub value: u32,
}

/// An offering of the catalog: zone, capacity type, price, available.
pub type Offering = (&'static str, &'static str, f64, bool);

#[derive(Debug, Clone)]
pub struct Spec {
    /// The `--catalog`: each type with its vCPUs, GiB and offerings.
    pub catalog: Vec<(&'static str, u32, u32, Vec<Offering>)>,
    pub gen: Gen,
    pub spot_to_spot: bool,
    pub pools: Vec<Pool>,
    pub nodes: Vec<NodeSpec>,
    pub pdbs: Vec<Pdb>,
}

fn pool(r: &mut Rng, gen: Gen, i: usize) -> Pool {
    let policy = match (gen, r.below(3)) {
        (_, 0) => Policy::WhenEmpty,
        (Gen::V1, 2) => Policy::Balanced,
        _ => Policy::Underutilized,
    };
    let consolidate_after = match r.below(5) {
        0 if gen != Gen::V1Beta1 || policy == Policy::WhenEmpty => None,
        1 => Some(600),
        2 => Some(3 * 3600),
        _ => Some(0),
    };
    let reasons_all: &[&str] = &["Empty", "Drifted", "Underutilized"];
    let budgets = (0..1 + r.below(3))
        .map(|_| Budget {
            percent: r.chance(50),
            value: if r.chance(50) {
                *r.pick(&[0, 10, 34, 50, 100])
            } else {
                r.below(4) as u32
            },
            reasons: if gen == Gen::V1 && r.chance(40) {
                reasons_all
                    .iter()
                    .copied()
                    .filter(|_| r.chance(50))
                    .collect()
            } else {
                Vec::new()
            },
            window: r.chance(35).then(|| r.below(WINDOWS.len())),
        })
        .collect();
    let types = if r.chance(15) {
        Vec::new()
    } else {
        TYPES.iter().map(|t| t.0).filter(|_| r.chance(60)).collect()
    };
    let capacity_types = match r.below(4) {
        0 => vec!["spot"],
        1 => vec!["spot", "on-demand"],
        _ => vec!["on-demand"],
    };
    Pool {
        name: format!("pool-{i}"),
        policy,
        consolidate_after,
        budgets,
        expire_after: *r.pick(&[None, Some(720 * 3600), Some(24 * 3600), Some(3600)]),
        types,
        capacity_types,
        tainted: r.chance(15),
    }
}

fn pod(r: &mut Rng, node: usize, k: usize, zone: &'static str) -> PodSpec {
    let owner = match r.below(10) {
        0 => Owner::None,
        1 => Owner::StatefulSet,
        2 | 3 => Owner::DaemonSet,
        _ => Owner::ReplicaSet,
    };
    let app = if owner == Owner::DaemonSet {
        "ds".to_string()
    } else {
        format!("app-{}", r.below(4))
    };
    PodSpec {
        name: format!("p{node}-{k}"),
        app,
        cpu_m: *r.pick(&[50, 100, 250, 500, 1000, 1500]),
        mem_mi: *r.pick(&[64, 128, 512, 1024, 2048]),
        owner,
        do_not_disrupt: owner != Owner::DaemonSet && r.chance(6),
        tolerates: r.chance(30),
        zone_selector: r.chance(10).then_some(zone),
        high_priority: r.chance(10),
        spread: r.chance(8),
        anti_affinity: r.chance(5),
    }
}

/// A random cluster of 1–3 pools and 1–7 nodes.
pub fn generate(r: &mut Rng) -> Spec {
    let gen = match r.below(10) {
        0 => Gen::V1Alpha5,
        1 | 2 => Gen::V1Beta1,
        _ => Gen::V1,
    };
    let pools: Vec<Pool> = (0..1 + r.below(3)).map(|i| pool(r, gen, i)).collect();
    let mut nodes = Vec::new();
    for n in 0..1 + r.below(7) {
        let p = r.below(pools.len());
        let itype = if pools[p].types.is_empty() || r.chance(10) {
            r.pick(TYPES).0
        } else {
            *r.pick(&pools[p].types)
        };
        let zone = *r.pick(ZONES);
        // The same draws as `r.pick`, only when not reserved.
        let capacity_type = if r.chance(3) {
            "reserved"
        } else {
            pools[p].capacity_types[r.below(pools[p].capacity_types.len())]
        };
        let mut node = NodeSpec {
            name: format!("node-{n}"),
            pool: p,
            itype,
            capacity_type,
            zone,
            initialized: r.chance(90),
            ready: r.chance(93),
            age: *r.pick(&[120, 1800, 7200, 90_000, 40 * 86_400]),
            last_pod_event_age: r.chance(50).then(|| *r.pick(&[30, 900, 20_000])),
            drifted: gen != Gen::V1Alpha5 && r.chance(12),
            do_not_disrupt: r.chance(6),
            pods: Vec::new(),
        };
        let (cpu, mem) = node.allocatable();
        let (mut used_cpu, mut used_mem) = (0, 0);
        for k in 0..r.below(6) {
            let p = pod(r, n, k, zone);
            if used_cpu + p.cpu_m <= cpu && used_mem + p.mem_mi <= mem {
                used_cpu += p.cpu_m;
                used_mem += p.mem_mi;
                node.pods.push(p);
            }
        }
        nodes.push(node);
    }
    let pdbs = (0..r.below(3))
        .map(|i| Pdb {
            app: format!("app-{i}"),
            min_available: r.chance(50),
            percent: r.chance(30),
            value: if r.chance(30) { 50 } else { r.below(3) as u32 },
        })
        .collect();
    let catalog = TYPES
        .iter()
        .chain(MORE_TYPES)
        .map(|&(name, cpu, gib)| {
            let base = f64::from(cpu) * 0.048 * (0.8 + r.below(40) as f64 / 100.0);
            let mut offerings = Vec::new();
            for zone in ZONES {
                offerings.push((*zone, "on-demand", base, !r.chance(3)));
                let spot = base * (0.25 + r.below(50) as f64 / 100.0);
                offerings.push((*zone, "spot", (spot * 1e4).round() / 1e4, !r.chance(8)));
            }
            (name, cpu, gib, offerings)
        })
        .collect();
    Spec {
        catalog,
        gen,
        spot_to_spot: r.chance(30),
        pools,
        nodes,
        pdbs,
    }
}

/// RFC 3339 of epoch seconds.
pub fn time(t: i64) -> String {
    crate::model::time::format_rfc3339(t)
}
