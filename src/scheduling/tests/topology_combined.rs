//! Karpenter's combined-constraint cases of `core v1.14.1:
//! pkg/controllers/provisioning/scheduling/topology_test.go` — "Combined Hostname and Zonal
//! Topology", "Combined Zonal and Capacity Type Topology", "Combined Hostname, Zonal, and
//! Capacity Type Topology", "Combined Zonal Topology and Node Affinity", "Combined Capacity Type
//! Topology and Node Affinity" — each citing its `It`, against the fake provider's default
//! instance types.
//!
//! Upstream calls `ExpectProvisioned` several times in one `It`: each batch's NodeClaims become
//! nodes holding their pods before the next batch. [`Cluster::provision`] does the same with
//! the planner's in-flight nodes (`rounds::after_round`), and [`Cluster::skew`] is upstream's
//! `ExpectSkew` over everything placed so far.

use super::constraints::default_types;
use super::*;
use crate::model::instance_type::InstanceType;
use crate::model::nodepool::NodePool;
use std::collections::BTreeSet;

const APP: (&str, &str) = ("test", "test");

/// What upstream's cluster holds between `ExpectProvisioned` calls.
struct Cluster {
    state: Input,
    batch: usize,
}

impl Cluster {
    fn new(pools: Vec<NodePool>, types: Vec<InstanceType>) -> Self {
        let pools = pools
            .into_iter()
            .map(|p| pool_input(p, types.clone()))
            .collect();
        Cluster {
            state: input(Vec::new(), pools),
            batch: 0,
        }
    }

    /// Plans `n` pods from `pod` (named per batch), then keeps every NodeClaim as a node with
    /// its pods; returns the batch's plan.
    fn provision(&mut self, n: usize, pod: impl Fn(&str) -> PodBuilder) -> Plan {
        let batch = self.batch + 1;
        self.provision_pods(pods(n, |i| pod(&format!("b{batch}-p{i}"))))
    }

    /// Plans `batch` (one `ExpectProvisioned`), then keeps every NodeClaim as a node.
    fn provision_pods(&mut self, batch: Vec<crate::model::pod::Pod>) -> Plan {
        self.batch += 1;
        let batch_no = self.batch;
        self.state.pods = batch;
        let plan = solve(&self.state);
        let mut next = crate::scheduling::rounds::after_round(
            &self.state,
            Some(&BTreeSet::new()),
            &plan.existing_nodes,
            &plan.node_claims,
        );
        let known = self.state.existing_nodes.len();
        for (i, n) in next.existing_nodes.iter_mut().enumerate().skip(known) {
            n.node.name = format!("node-{batch_no}-{i}");
            n.node.labels.insert(HOSTNAME.into(), n.node.name.clone());
        }
        self.state = next;
        plan
    }

    /// Pods labelled `APP` per value of `key` over every node (0 for a domain without any).
    fn per_domain(&self, key: &str) -> BTreeMap<String, usize> {
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for n in &self.state.existing_nodes {
            let count = n
                .pods
                .iter()
                .filter(|p| p.labels.get(APP.0).map(String::as_str) == Some(APP.1))
                .count();
            *per.entry(n.node.labels[key].clone()).or_default() += count;
        }
        per
    }

    /// Upstream's `ExpectSkew`: the non-zero counts per domain of `key`, sorted descending
    /// (order-free, like `ConsistOf`).
    fn skew(&self, key: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .per_domain(key)
            .into_values()
            .filter(|&c| c > 0)
            .collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    /// Upstream's `ExpectMaxSkew`: the largest count of a domain minus the smallest, over the
    /// domains the nodes have.
    fn max_skew(&self, key: &str) -> usize {
        let per = self.per_domain(key);
        let max = per.values().max().copied().unwrap_or(0);
        let min = per.values().min().copied().unwrap_or(0);
        max - min
    }
}

/// A pod labelled `APP`, spread by `APP` on each `(key, max skew, hard)`.
fn spread(name: &str, constraints: &[(&str, i32, bool)]) -> PodBuilder {
    let mut b = PodBuilder::new(name).label(APP.0, APP.1);
    for (key, max_skew, hard) in constraints {
        b = b.spread(key, *max_skew, *hard, &[APP]);
    }
    b
}

fn all_placed(plan: &Plan) {
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
}

/// "Combined Hostname and Zonal Topology" › "should spread pods while respecting both
/// constraints (hostname and zonal)": zone max skew 1, hostname max skew 3; batches of 2, 3, 5
/// and 11 pods give 1/1, 2/2/1, 4/3/3, 7/7/7 per zone, never more than 3 per node.
#[test]
fn zone_and_hostname_over_batches() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    let constraints = [(ZONE, 1, true), (HOSTNAME, 3, true)];
    for (n, want) in [
        (2, vec![1, 1]),
        (3, vec![2, 2, 1]),
        (5, vec![4, 3, 3]),
        (11, vec![7, 7, 7]),
    ] {
        all_placed(&cluster.provision(n, |name| spread(name, &constraints)));
        assert_eq!(cluster.skew(ZONE), want, "after {n}");
        assert!(cluster.skew(HOSTNAME).iter().all(|&c| c <= 3), "after {n}");
    }
}

/// "Combined Hostname and Zonal Topology" › "should balance pods across NodePool
/// requirements": a spot pool reaching `capacity.spread.4-1` values 2–5 and an on-demand pool
/// reaching value 1; 20 pods spread on that key go 4 per value, so 16 spot and 4 on-demand.
#[test]
fn a_spread_across_pools_splits_capacity_types() {
    const KEY: &str = "capacity.spread.4-1";
    let spot = with_requirement(
        with_requirement(node_pool("spot"), CAPACITY_TYPE, In, &[SPOT]),
        KEY,
        In,
        &["2", "3", "4", "5"],
    );
    let on_demand = with_requirement(
        with_requirement(node_pool("on-demand"), CAPACITY_TYPE, In, &[ON_DEMAND]),
        KEY,
        In,
        &["1"],
    );
    let mut cluster = Cluster::new(vec![spot, on_demand], default_types());
    all_placed(&cluster.provision(20, |name| spread(name, &[(KEY, 1, true)])));
    assert_eq!(cluster.skew(KEY), [4, 4, 4, 4, 4]);
    assert_eq!(cluster.skew(CAPACITY_TYPE), [16, 4]);
}

/// "Combined Hostname and Zonal Topology" › "should spread pods while respecting both
/// constraints" (zonal DoNotSchedule, hostname ScheduleAnyway): the pool reaches zones 1–2; a
/// second pool reaches zone 3 but its CPU limit is 0. Zone 3 is still a domain (at 0), so of 10
/// pods one goes to each reachable zone, one per node, and the rest stay pending.
#[test]
fn a_zone_only_a_pool_at_its_limit_reaches_still_counts() {
    let pool = with_requirement(
        node_pool("default"),
        ZONE,
        In,
        &["test-zone-1", "test-zone-2"],
    );
    let mut disabled = with_requirement(node_pool("b"), ZONE, In, &["test-zone-3"]);
    disabled.limits.insert("cpu".into(), 0);
    let mut cluster = Cluster::new(vec![pool, disabled], default_types());
    let plan = cluster.provision(10, |name| {
        spread(name, &[(ZONE, 1, true), (HOSTNAME, 1, false)])
    });
    assert_eq!(cluster.skew(ZONE), [1, 1]);
    assert_eq!(cluster.skew(HOSTNAME), [1, 1]);
    assert_eq!(plan.unschedulable.len(), 8);
}

/// "Combined Hostname and Zonal Topology" › "should spread pods while respecting both
/// constraints" (capacity type max skew 1, hostname max skew 3): batches of 2, 3, 5 and 11 give
/// 1/1, 3/2, 5/5, 11/10 per capacity type, never more than 3 per node.
#[test]
fn capacity_type_and_hostname_over_batches() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    let constraints = [(CAPACITY_TYPE, 1, true), (HOSTNAME, 3, true)];
    for (n, want) in [
        (2, vec![1, 1]),
        (3, vec![3, 2]),
        (5, vec![5, 5]),
        (11, vec![11, 10]),
    ] {
        all_placed(&cluster.provision(n, |name| spread(name, &constraints)));
        assert_eq!(cluster.skew(CAPACITY_TYPE), want, "after {n}");
        assert!(cluster.skew(HOSTNAME).iter().all(|&c| c <= 3), "after {n}");
    }
}

/// "Combined Zonal and Capacity Type Topology" › "should spread pods while respecting both
/// constraints": capacity type and zone, max skew 1 each; batches of 2, 3, 3, 11 keep every
/// domain within upstream's bounds (capacity type ≤ 1, 3, 5, 11; zone ≤ 1, 2, 4, 7). Upstream
/// does not expect every pod scheduled, and not all are: each spread picks its own least-used
/// domain (`topologygroup.go` `nextDomainTopologySpread`), and the fake offers no spot in zone 3.
#[test]
fn zone_and_capacity_type_over_batches() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    let constraints = [(CAPACITY_TYPE, 1, true), (ZONE, 1, true)];
    for (n, capacity_bound, zone_bound) in [(2, 1, 1), (3, 3, 2), (3, 5, 4), (11, 11, 7)] {
        cluster.provision(n, |name| spread(name, &constraints));
        let (by_capacity, by_zone) = (cluster.skew(CAPACITY_TYPE), cluster.skew(ZONE));
        assert!(
            by_capacity.iter().all(|&c| c <= capacity_bound),
            "{by_capacity:?}"
        );
        assert!(by_zone.iter().all(|&c| c <= zone_bound), "{by_zone:?}");
    }
}

/// "Combined Hostname, Zonal, and Capacity Type Topology" › "should spread pods while respecting
/// all constraints": against `fake.InstanceTypesAssorted()`-like types (one per zone and
/// capacity type), batches of 1 to 14 pods all schedule with the skews within 1 (capacity
/// type), 2 (zone) and 3 (hostname).
#[test]
fn hostname_zone_and_capacity_type_over_batches() {
    let types: Vec<InstanceType> = FAKE_ZONES
        .iter()
        .flat_map(|zone| {
            [(SPOT, 0.1), (ON_DEMAND, 0.2)].map(|(ct, price)| {
                let mut t = instance_type(
                    &format!("4-cpu-{zone}-{ct}"),
                    "4",
                    "8Gi",
                    "20",
                    vec![offer(zone, ct, price)],
                );
                t.name = format!("4-cpu-{zone}-{ct}");
                t
            })
        })
        .collect();
    let mut cluster = Cluster::new(vec![node_pool("default")], types);
    let constraints = [
        (CAPACITY_TYPE, 1, true),
        (ZONE, 2, true),
        (HOSTNAME, 3, true),
    ];
    for n in 1..15 {
        all_placed(&cluster.provision(n, |name| spread(name, &constraints)));
        assert!(cluster.max_skew(CAPACITY_TYPE) <= 1, "after {n}");
        assert!(cluster.max_skew(ZONE) <= 2, "after {n}");
        assert!(cluster.max_skew(HOSTNAME) <= 3, "after {n}");
    }
}

/// "Combined Zonal Topology and Node Affinity" › "should limit spread options by required node
/// affinity": 6 pods limited to zones 1–2 go 3/3; one pod limited to zones 2–3 takes the empty
/// zone 3 (it lowers the skew, though the skew is above 1); 5 unconstrained pods then even it
/// out to 4/4/4.
#[test]
fn required_node_affinity_limits_the_domains_batch_by_batch() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    let zonal = [(ZONE, 1, true)];
    let plan = cluster.provision(6, |name| {
        spread(name, &zonal).required_term(&[(ZONE, In, &["test-zone-1", "test-zone-2"])])
    });
    all_placed(&plan);
    assert_eq!(cluster.skew(ZONE), [3, 3]);
    let plan = cluster.provision(1, |name| {
        spread(name, &zonal).required_term(&[(ZONE, In, &["test-zone-2", "test-zone-3"])])
    });
    all_placed(&plan);
    assert_eq!(cluster.skew(ZONE), [3, 3, 1]);
    all_placed(&cluster.provision(5, |name| spread(name, &zonal)));
    assert_eq!(cluster.skew(ZONE), [4, 4, 4]);
}

/// "Combined Zonal Topology and Node Affinity" › "should not limit spread options by preferred
/// node affinity": a preference for zones 1–2 does not narrow the domains: 6 pods go 2/2/2.
#[test]
fn preferred_node_affinity_does_not_limit_the_domains() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    all_placed(&cluster.provision(6, |name| {
        spread(name, &[(ZONE, 1, true)])
            .preferred_term(1, &[(ZONE, In, &["test-zone-1", "test-zone-2"])])
    }));
    assert_eq!(cluster.skew(ZONE), [2, 2, 2]);
}

/// "Combined Zonal Topology and Node Affinity" › "should limit spread options by nodeSelector"
/// (5 pods selecting zone 1, 10 zone 2, DoNotSchedule: 5/10) and "Combined Capacity Type
/// Topology and Node Affinity" › "should limit spread options by nodeSelector" (5 spot, 5
/// on-demand, ScheduleAnyway: 5/5): each pod's only domain is the one it selects.
#[test]
fn node_selectors_give_each_pod_its_only_domain() {
    for (key, first, second, hard, want) in [
        (ZONE, ("test-zone-1", 5), ("test-zone-2", 10), true, [10, 5]),
        (CAPACITY_TYPE, (SPOT, 5), (ON_DEMAND, 5), false, [5, 5]),
    ] {
        let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
        let mut batch = Vec::new();
        for (value, n) in [first, second] {
            batch.extend(pods(n, |i| {
                spread(&format!("{value}-{i}"), &[(key, 1, hard)]).node_selector(key, value)
            }));
        }
        all_placed(&cluster.provision_pods(batch));
        assert_eq!(cluster.skew(key), want, "{key}");
    }
}

/// "Combined Capacity Type Topology and Node Affinity" › "should limit spread options by node
/// affinity (capacity type)": 3 pods limited to spot go there (3); one pod allowed both takes
/// the empty on-demand domain (3/1); 5 unconstrained pods then give 5/4.
#[test]
fn capacity_type_affinity_limits_the_domains_batch_by_batch() {
    let mut cluster = Cluster::new(vec![node_pool("default")], default_types());
    let by_capacity = [(CAPACITY_TYPE, 1, true)];
    all_placed(&cluster.provision(3, |name| {
        spread(name, &by_capacity).required_term(&[(CAPACITY_TYPE, In, &[SPOT])])
    }));
    assert_eq!(cluster.skew(CAPACITY_TYPE), [3]);
    all_placed(&cluster.provision(1, |name| {
        spread(name, &by_capacity).required_term(&[(CAPACITY_TYPE, In, &[ON_DEMAND, SPOT])])
    }));
    assert_eq!(cluster.skew(CAPACITY_TYPE), [3, 1]);
    all_placed(&cluster.provision(5, |name| spread(name, &by_capacity)));
    assert_eq!(cluster.skew(CAPACITY_TYPE), [5, 4]);
}
