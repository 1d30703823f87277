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
    // Round 2 (s33-fuzzcons2): enough `c`/`m`/`r` types that a broad pool has 15 spot types
    // cheaper than a bigger spot node (core v1.14.1 `consolidation.go`
    // `MinInstanceTypesForSpotToSpotConsolidation`).
    ("m6a.large", 2, 8),
    ("m6a.xlarge", 4, 16),
    ("c6a.large", 2, 4),
    ("c6a.xlarge", 4, 8),
    ("r6a.large", 2, 16),
    ("m7i.large", 2, 8),
    ("m7i.xlarge", 4, 16),
    ("c7i.large", 2, 4),
    ("c7i.xlarge", 4, 8),
    ("r7i.large", 2, 16),
    ("m5n.large", 2, 8),
    ("c5n.large", 2, 5),
    ("r5n.large", 2, 16),
    ("m5d.large", 2, 8),
    ("c5d.large", 2, 4),
    ("r5d.large", 2, 16),
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
    /// `minValues` on one requirement (v1, v1beta1).
    pub min_values: Option<(MinKey, u32)>,
}

/// The requirement a pool's `minValues` is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinKey {
    /// `node.kubernetes.io/instance-type` (the pool's `In` list, or `Exists` for a broad pool).
    InstanceType,
    /// `karpenter.k8s.aws/instance-family` `Exists`.
    Family,
}

impl MinKey {
    pub fn label(self) -> &'static str {
        match self {
            MinKey::InstanceType => "node.kubernetes.io/instance-type",
            MinKey::Family => "karpenter.k8s.aws/instance-family",
        }
    }
    /// A type's value for the key.
    pub fn value(self, itype: &str) -> &str {
        match self {
            MinKey::InstanceType => itype,
            MinKey::Family => itype.split('.').next().unwrap_or(itype),
        }
    }
}

/// A capacity reservation of the catalog (v1): its type, zone and instances left; `selected`
/// when the node class's `capacityReservationSelectorTerms` name it.
#[derive(Debug, Clone)]
pub struct Reservation {
    pub id: String,
    pub itype: &'static str,
    pub zone: &'static str,
    pub count: u32,
    pub selected: bool,
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
    /// `karpenter.k8s.aws/capacity-reservation-id` of a `reserved` node.
    pub reservation: Option<String>,
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
    /// The `ReservedCapacity` gate (`--feature-gates`).
    pub reserved_gate: bool,
    pub reservations: Vec<Reservation>,
    /// `--min-values-policy BestEffort` (else Strict).
    pub best_effort: bool,
    pub pools: Vec<Pool>,
    pub nodes: Vec<NodeSpec>,
    pub pdbs: Vec<Pdb>,
}

/// One pool. `x` draws what round 2 added, so the draws of round 1 stay as they were.
fn pool(r: &mut Rng, x: &mut Rng, gen: Gen, i: usize) -> Pool {
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
    let mut types: Vec<&'static str> = if r.chance(15) {
        Vec::new()
    } else {
        TYPES.iter().map(|t| t.0).filter(|_| r.chance(60)).collect()
    };
    if gen != Gen::V1Alpha5 && x.chance(25) {
        types.clear();
    }
    let mut capacity_types = match r.below(4) {
        0 => vec!["spot"],
        1 => vec!["spot", "on-demand"],
        _ => vec!["on-demand"],
    };
    if gen == Gen::V1 && x.chance(30) {
        capacity_types.insert(0, "reserved");
    }
    let min_values = (gen != Gen::V1Alpha5 && x.chance(30)).then(|| {
        // The CRD refuses more than an `In` list gives; a broad pool's key is `Exists`.
        if !types.is_empty() && x.chance(50) {
            (MinKey::InstanceType, 1 + x.below(types.len()) as u32)
        } else if types.is_empty() && x.chance(50) {
            (MinKey::InstanceType, *x.pick(&[2, 5, 12, 18]))
        } else {
            (MinKey::Family, *x.pick(&[2, 3, 6, 9]))
        }
    });
    Pool {
        name: format!("pool-{i}"),
        policy,
        consolidate_after,
        budgets,
        expire_after: *r.pick(&[None, Some(720 * 3600), Some(24 * 3600), Some(3600)]),
        types,
        capacity_types,
        tainted: r.chance(15),
        min_values,
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
    let mut x = Rng(r.0.rotate_left(17) | 1);
    let pools: Vec<Pool> = (0..1 + r.below(3))
        .map(|i| pool(r, &mut x, gen, i))
        .collect();
    let reservations: Vec<Reservation> = if gen == Gen::V1 {
        (0..x.below(4))
            .map(|i| Reservation {
                id: format!("cr-0000{i}"),
                itype: x.pick(TYPES).0,
                zone: ZONES[x.below(ZONES.len())],
                count: x.below(3) as u32,
                selected: x.chance(80),
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut nodes = Vec::new();
    for n in 0..1 + r.below(7) {
        let p = r.below(pools.len());
        let mut itype = if pools[p].types.is_empty() || r.chance(10) {
            r.pick(TYPES).0
        } else {
            *r.pick(&pools[p].types)
        };
        let mut zone = *r.pick(ZONES);
        // The same draws as `r.pick`, only when not reserved.
        let capacity_type = if r.chance(3) || (!reservations.is_empty() && x.chance(10)) {
            "reserved"
        } else {
            pools[p].capacity_types[r.below(pools[p].capacity_types.len())]
        };
        // A reserved node runs in a reservation of the catalog, or (round 1) one it lacks.
        let reservation = (capacity_type == "reserved").then(|| {
            match (!reservations.is_empty() && x.chance(75)).then(|| x.pick(&reservations)) {
                Some(res) => {
                    itype = res.itype;
                    zone = res.zone;
                    res.id.clone()
                }
                None => "cr-0123".to_string(),
            }
        });
        let mut node = NodeSpec {
            name: format!("node-{n}"),
            pool: p,
            itype,
            capacity_type,
            zone,
            reservation,
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
    let spot_to_spot = r.chance(30) || x.chance(30);
    let mut spec = Spec {
        catalog,
        gen,
        spot_to_spot,
        reserved_gate: x.chance(80),
        reservations,
        best_effort: false,
        pools,
        nodes,
        pdbs,
    };
    if gen != Gen::V1Alpha5 {
        match x.below(100) {
            0..15 => toward(&mut spec, &mut x, "spot"),
            15..25 if gen == Gen::V1 => toward(&mut spec, &mut x, "reserved"),
            _ => {}
        }
    }
    // Round 3, drawn last so the earlier draws stay: `--min-values-policy BestEffort` in 40 %
    // of the clusters with a `minValues`.
    spec.best_effort = spec.pools.iter().any(|p| p.min_values.is_some()) && x.chance(40);
    spec
}

/// The types a steered cluster's reservation is of: cheaper than the nodes steered beside it.
const CHEAP: [&str; 4] = ["c5.large", "t3.medium", "m5.large", "c5.xlarge"];

/// Steers a cluster toward a round-2 path: pool-0 broad, consolidating at once, no budget in
/// the way, its nodes initialized, the biggest of [`TYPES`] and `spot` (spot-to-spot,
/// consolidation.go "Spot to Spot"), or on-demand/spot next to a cheap selected reservation
/// (consolidation_test.go "Reserved Capacity": "can consolidate into reserved capacity").
fn toward(s: &mut Spec, x: &mut Rng, path: &str) {
    let p = &mut s.pools[0];
    p.types.clear();
    p.policy = Policy::Underutilized;
    p.consolidate_after = Some(0);
    p.budgets = vec![Budget {
        percent: true,
        value: 100,
        reasons: Vec::new(),
        window: None,
    }];
    p.tainted = false;
    if let Some((MinKey::InstanceType, m)) = p.min_values {
        p.min_values = Some((MinKey::InstanceType, m.min(18)));
    }
    if path == "spot" {
        p.capacity_types = if x.chance(70) {
            vec!["spot"]
        } else {
            vec!["spot", "on-demand"]
        };
        s.spot_to_spot = x.chance(80);
    } else {
        p.capacity_types = if x.chance(40) {
            vec!["reserved", "spot", "on-demand"]
        } else {
            vec!["reserved", "on-demand"]
        };
        s.reserved_gate = x.chance(85);
        s.reservations.push(Reservation {
            id: "cr-00009".into(),
            itype: CHEAP[x.below(CHEAP.len())],
            zone: ZONES[x.below(ZONES.len())],
            count: 1 + x.below(2) as u32,
            selected: true,
        });
    }
    let spot_ok = s.pools[0].capacity_types.contains(&"spot");
    for n in s.nodes.iter_mut().filter(|n| n.pool == 0) {
        n.initialized = true;
        n.ready = true;
        n.do_not_disrupt = false;
        if n.reservation.is_some() {
            continue;
        }
        // A type that still holds the node's pods (m5.2xlarge holds any).
        let (cpu, mem) = n
            .pods
            .iter()
            .fold((0, 0), |(c, m), p| (c + p.cpu_m, m + p.mem_mi));
        let pick = *x.pick(&["m5.2xlarge", "m5.xlarge", "r5.large"]);
        n.itype = pick;
        let (c, m) = n.allocatable();
        if c < cpu || m < mem {
            n.itype = "m5.2xlarge";
        }
        n.capacity_type = if spot_ok && (path == "spot" || x.chance(40)) {
            "spot"
        } else {
            "on-demand"
        };
    }
}

/// RFC 3339 of epoch seconds.
pub fn time(t: i64) -> String {
    crate::model::time::format_rfc3339(t)
}
