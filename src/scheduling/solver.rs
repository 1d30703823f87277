//! The scheduling loop (Karpenter's `Scheduler.Solve`), see the module docs in `mod.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::FxHashMap;

use crate::model::instance_type::{InstanceType, Offering, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::node::Node;
use crate::model::pod::{HostPort, Pod};
use crate::model::quantity::format_milli;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::taints::{first_untolerated, Effect, Taint};

use super::podreqs::{validation_error, PodState};
use super::topology::{BoundPod, Topology, TopologyFailure};
use super::{
    ExistingPlacement, Input, InstanceTypeOption, LaunchChoice, Plan, PlannedNodeClaim, PoolInput,
    UnschedulablePod,
};

/// The label key of a NodeClaim's placeholder hostname while it is being packed.
const HOSTNAME: &str = labels::HOSTNAME;

/// Why a placement attempt failed. Cheap to build: attempts fail millions of times in big solves,
/// and only the last failure of a pod that stays pending is turned into text.
#[derive(Debug, Clone)]
enum Fail {
    Taint(Taint),
    HostPort(i32),
    Requirements,
    Topology(TopologyFailure),
    NoInstanceType,
    MinValues(String),
}

/// A NodePool prepared for packing.
struct Pool<'a> {
    input: &'a PoolInput,
    reqs: Requirements,
    /// Instance types compatible with the pool and with an available compatible offering.
    types: Vec<&'a InstanceType>,
    /// Allocatable minus the DaemonSet overhead expected on each type.
    effective_allocatable: Vec<Resources>,
    daemon_overhead: Vec<Resources>,
    /// Host ports the pool's DaemonSets bind on every new node.
    daemon_host_ports: Vec<HostPort>,
    /// Limits left, per limited resource; `None` when the pool has no limits.
    remaining: Option<BTreeMap<String, i64>>,
    min_values: Vec<(String, u32)>,
    claims_created: usize,
    /// Distinct (zone, capacity type) pairs of the pool's offerings: a NodeClaim's zone and
    /// capacity-type requirements are evaluated once per pair, not once per offering.
    slots: Vec<(String, String)>,
    /// Per type: available offerings as (slot, index into `offerings`), cheapest first.
    offers: Vec<Vec<(usize, usize)>>,
    /// Why the pool can take nothing at all, if so.
    unusable: Option<String>,
}

/// A NodeClaim being packed.
struct Claim {
    pool: usize,
    reqs: Requirements,
    /// Indices into the pool's `types`.
    types: Vec<u32>,
    /// Σ requests of the pods placed.
    requests: Resources,
    pods: Vec<usize>,
    host_ports: Vec<HostPort>,
}

/// An existing node being filled.
struct Existing<'a> {
    node: &'a Node,
    reqs: Requirements,
    taints: Vec<Taint>,
    available: Resources,
    requests: Resources,
    placed: Vec<usize>,
    host_ports: Vec<HostPort>,
}

/// The outcome of a successful attempt on a NodeClaim, applied only if it is chosen.
struct ClaimUpdate {
    reqs: Option<Requirements>,
    types: Vec<u32>,
    requests: Resources,
}

struct Solver<'a> {
    input: &'a Input,
    states: Vec<PodState>,
    pools: Vec<Pool<'a>>,
    existing: Vec<Existing<'a>>,
    claims: Vec<Claim>,
    /// Claims ordered by (pod count, creation order): Karpenter tries the least loaded first.
    claim_order: ClaimQueue,
    topology: Topology,
    any_prefer_no_schedule: bool,
}

/// Places the input's pods. See the module documentation.
pub fn solve(input: &Input) -> Plan {
    let mut unschedulable = Vec::new();
    let mut states = Vec::new();
    for (i, pod) in input.pods.iter().enumerate() {
        match validation_error(pod) {
            Some(reason) => unschedulable.push(UnschedulablePod {
                pod: pod.key(),
                reason,
            }),
            None => states.push(PodState::new(i, pod)),
        }
    }
    let pools = prepare_pools(input);
    let existing = prepare_existing(input);
    let bound: Vec<BoundPod<'_>> = input
        .existing_nodes
        .iter()
        .filter(|n| !n.node.deleting)
        .flat_map(|n| {
            n.pods
                .iter()
                .filter(|p| !p.is_terminal())
                .map(move |p| BoundPod {
                    pod: p,
                    node_name: &n.node.name,
                    node_labels: &n.node.labels,
                })
        })
        .collect();
    let domains = domain_universe(input, &pools);
    let topology = Topology::new(
        domains,
        input.namespace_labels.clone(),
        &input.pods,
        &states,
        &bound,
    );
    let any_prefer_no_schedule = pools.iter().any(|p| {
        p.input
            .pool
            .taints
            .iter()
            .any(|t| t.effect == Effect::PreferNoSchedule)
    }) || existing.iter().any(|e| {
        e.taints
            .iter()
            .any(|t| t.effect == Effect::PreferNoSchedule)
    });
    let mut solver = Solver {
        input,
        states,
        pools,
        existing,
        claims: Vec::new(),
        claim_order: ClaimQueue::default(),
        topology,
        any_prefer_no_schedule,
    };
    let failures = solver.run();
    solver.finish(failures, unschedulable)
}

fn prepare_pools(input: &Input) -> Vec<Pool<'_>> {
    let mut order: Vec<&PoolInput> = input.pools.iter().collect();
    // Weight descending, then name descending (Karpenter's OrderByWeight).
    order.sort_by(|a, b| {
        b.pool
            .weight
            .cmp(&a.pool.weight)
            .then_with(|| b.pool.name.cmp(&a.pool.name))
    });
    order
        .into_iter()
        .map(|pi| {
            let reqs = pi.pool.scheduling_requirements();
            let types: Vec<&InstanceType> = pi
                .instance_types
                .iter()
                .filter(|it| it.requirements.intersects_ok(&reqs) && has_offering(it, &reqs))
                .collect();
            let daemons = pool_daemons(input, pi, &reqs);
            let daemon_host_ports: Vec<HostPort> = daemons
                .iter()
                .flat_map(|(d, _)| d.host_ports.iter().cloned())
                .collect();
            let daemon_overhead: Vec<Resources> = types
                .iter()
                .map(|it| daemon_overhead(&daemons, it))
                .collect();
            let effective_allocatable = types
                .iter()
                .zip(&daemon_overhead)
                .map(|(it, d)| it.allocatable().sub(d))
                .collect();
            let remaining = (!pi.pool.limits.is_empty()).then(|| {
                pi.pool
                    .limits
                    .iter()
                    .map(|(k, v)| (k.clone(), v - usage_of(&pi.usage, k)))
                    .collect()
            });
            let min_values = reqs
                .iter()
                .filter_map(|r| r.min_values.map(|m| (r.key.clone(), m)))
                .collect();
            let unusable = if pi.pool.replicas.is_some() {
                Some(format!(
                    "NodePool {} is static (spec.replicas) and not used for provisioning",
                    pi.pool.name
                ))
            } else if types.is_empty() {
                Some(format!(
                    "NodePool {} has no instance type compatible with its requirements ({})",
                    pi.pool.name,
                    describe_requirements(&reqs)
                ))
            } else {
                None
            };
            let (slots, offers) = offering_slots(&types);
            Pool {
                daemon_host_ports,
                slots,
                offers,
                input: pi,
                reqs,
                types,
                effective_allocatable,
                daemon_overhead,
                remaining,
                min_values,
                claims_created: 0,
                unusable,
            }
        })
        .collect()
}

/// Current usage of a limited resource; `nodes` counts nodes (v1 `limits.nodes`).
fn usage_of(usage: &Resources, key: &str) -> i64 {
    usage.get(key)
}

/// What one node of this type consumes of a limited resource.
fn capacity_of(it: &InstanceType, key: &str) -> i64 {
    if key == "nodes" {
        1000
    } else {
        it.capacity.get(key)
    }
}

/// Interns each type's available offerings into (zone, capacity type) slots, cheapest first.
#[allow(clippy::type_complexity)]
fn offering_slots(types: &[&InstanceType]) -> (Vec<(String, String)>, Vec<Vec<(usize, usize)>>) {
    let mut slots: Vec<(String, String)> = Vec::new();
    let mut index: FxHashMap<(String, String), usize> = FxHashMap::default();
    let offers = types
        .iter()
        .map(|it| {
            let mut list: Vec<(usize, usize)> = it
                .offerings
                .iter()
                .enumerate()
                .filter(|(_, o)| o.available)
                .map(|(i, o)| {
                    let key = (o.zone.clone(), o.capacity_type.clone());
                    let slot = *index.entry(key.clone()).or_insert_with(|| {
                        slots.push(key);
                        slots.len() - 1
                    });
                    (slot, i)
                })
                .collect();
            list.sort_by(|a, b| {
                let (oa, ob) = (&it.offerings[a.1], &it.offerings[b.1]);
                oa.price
                    .total_cmp(&ob.price)
                    .then_with(|| oa.zone.cmp(&ob.zone))
            });
            list
        })
        .collect();
    (slots, offers)
}

/// Which of a pool's offering slots a NodeClaim's requirements admit.
fn admitted_slots(pool: &Pool<'_>, reqs: &Requirements) -> Vec<bool> {
    let filter = OfferingFilter::new(reqs);
    pool.slots
        .iter()
        .map(|(zone, ct)| {
            filter.zone.is_none_or(|z| z.has(zone))
                && filter.capacity_type.is_none_or(|c| c.has(ct))
        })
        .collect()
}

/// The cheapest admitted offering of type `t`, optionally of one capacity type.
fn cheapest_offer<'p>(
    pool: &Pool<'p>,
    t: u32,
    admitted: &[bool],
    capacity_type: Option<&str>,
) -> Option<&'p Offering> {
    let it = pool.types[t as usize];
    pool.offers[t as usize]
        .iter()
        .find(|(slot, _)| admitted[*slot] && capacity_type.is_none_or(|c| pool.slots[*slot].1 == c))
        .map(|&(_, i)| &it.offerings[i])
}

fn has_offering(it: &InstanceType, reqs: &Requirements) -> bool {
    let filter = OfferingFilter::new(reqs);
    it.offerings.iter().any(|o| o.available && filter.admits(o))
}

/// The zone and capacity-type requirements of a NodeClaim, looked up once.
#[derive(Clone, Copy)]
struct OfferingFilter<'r> {
    zone: Option<&'r Requirement>,
    capacity_type: Option<&'r Requirement>,
}

impl<'r> OfferingFilter<'r> {
    fn new(reqs: &'r Requirements) -> Self {
        OfferingFilter {
            zone: reqs.get_ref(labels::ZONE),
            capacity_type: reqs.get_ref(labels::CAPACITY_TYPE),
        }
    }
    fn admits(&self, o: &Offering) -> bool {
        self.zone.is_none_or(|z| z.has(&o.zone))
            && self.capacity_type.is_none_or(|c| c.has(&o.capacity_type))
    }
}

/// The DaemonSets that would run on this pool's nodes (KARPENTER.md §6.3): they tolerate the
/// pool's taints (a PreferNoSchedule toleration is implied) and their strict node requirements
/// are compatible with the pool's. Returned with those requirements, for the per-type check.
fn pool_daemons<'i>(
    input: &'i Input,
    pi: &PoolInput,
    pool_reqs: &Requirements,
) -> Vec<(&'i Pod, Requirements)> {
    input
        .daemonsets
        .iter()
        .filter_map(|d| {
            let mut tolerations = d.tolerations.clone();
            tolerations.push(crate::model::taints::Toleration::exists(
                "",
                Some(Effect::PreferNoSchedule),
            ));
            if first_untolerated(&pi.pool.taints, &tolerations).is_some() {
                return None;
            }
            let strict = PodState::new(0, d).strict_requirements;
            pool_reqs
                .is_compatible(&strict, labels::is_well_known)
                .then_some((d, strict))
        })
        .collect()
}

/// What those DaemonSets take on a node of this type: the ones whose requirements also
/// intersect the type's (e.g. an arm64-only agent adds nothing to amd64 types).
fn daemon_overhead(daemons: &[(&Pod, Requirements)], it: &InstanceType) -> Resources {
    let mut total = Resources::new();
    for (d, strict) in daemons {
        if it.requirements.intersects_ok(strict) {
            total.add_assign(&d.requests);
        }
    }
    total
}

fn node_requirements(node: &Node) -> Requirements {
    let mut reqs = Requirements::from_labels(node.labels.iter());
    if !node.labels.contains_key(HOSTNAME) {
        reqs.add(Requirement::single(HOSTNAME, &node.name));
    }
    reqs
}

fn prepare_existing(input: &Input) -> Vec<Existing<'_>> {
    let mut nodes: Vec<Existing<'_>> = input
        .existing_nodes
        .iter()
        .filter(|n| !n.node.deleting)
        .map(|n| {
            let mut taints = n.node.taints.clone();
            let cordon = Taint::new("node.kubernetes.io/unschedulable", "", Effect::NoSchedule);
            if n.node.unschedulable && !taints.iter().any(|t| t.key == cordon.key) {
                taints.push(cordon);
            }
            let reqs = node_requirements(&n.node);
            let mut used = Resources::new();
            let mut host_ports = Vec::new();
            for p in n.pods.iter().filter(|p| !p.is_terminal()) {
                used.add_assign(&p.requests);
                host_ports.extend(p.host_ports.iter().cloned());
            }
            // DaemonSets that will run here but have no pod yet still take their share.
            for d in &input.daemonsets {
                let daemon = d.owner.as_ref().map(|o| o.name.as_str());
                let present = n.pods.iter().any(|p| {
                    p.is_daemonset_pod() && p.owner.as_ref().map(|o| o.name.as_str()) == daemon
                });
                let state = PodState::new(0, d);
                if !present
                    && first_untolerated(&taints, &d.tolerations).is_none()
                    && reqs.is_compatible(&state.strict_requirements, |_| false)
                {
                    used.add_assign(&d.requests);
                    host_ports.extend(d.host_ports.iter().cloned());
                }
            }
            Existing {
                node: &n.node,
                reqs,
                taints,
                available: n.node.allocatable.sub(&used),
                requests: Resources::new(),
                placed: Vec::new(),
                host_ports,
            }
        })
        .collect();
    // Initialized nodes first, then by name.
    nodes.sort_by(|a, b| {
        b.node
            .initialized
            .cmp(&a.node.initialized)
            .then_with(|| a.node.name.cmp(&b.node.name))
    });
    nodes
}

/// The known values of every topology key: pool requirements narrowed by each instance type,
/// and the labels of existing nodes (Karpenter's "universe of domains").
fn domain_universe(input: &Input, pools: &[Pool<'_>]) -> FxHashMap<String, BTreeSet<String>> {
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for pod in &input.pods {
        keys.extend(
            pod.topology_spread
                .iter()
                .map(|c| labels::normalize_key(&c.topology_key).to_string()),
        );
        let terms = pod
            .pod_affinity
            .iter()
            .chain(&pod.pod_anti_affinity)
            .chain(pod.preferred_pod_affinity.iter().map(|w| &w.term))
            .chain(pod.preferred_pod_anti_affinity.iter().map(|w| &w.term));
        keys.extend(terms.map(|t| labels::normalize_key(&t.topology_key).to_string()));
    }
    for n in &input.existing_nodes {
        for p in &n.pods {
            keys.extend(
                p.pod_anti_affinity
                    .iter()
                    .map(|t| labels::normalize_key(&t.topology_key).to_string()),
            );
        }
    }
    let mut domains: FxHashMap<String, BTreeSet<String>> = FxHashMap::default();
    for key in &keys {
        let set = domains.entry(key.clone()).or_default();
        for pool in pools.iter().filter(|p| p.unusable.is_none()) {
            let pool_req = pool.reqs.get_ref(key);
            for it in &pool.types {
                let narrowed = match (pool_req, it.requirements.get_ref(key)) {
                    (Some(a), Some(b)) => a.intersection(b),
                    (Some(a), None) => a.clone(),
                    (None, Some(b)) => b.clone(),
                    (None, None) => continue,
                };
                if narrowed.operator() == Operator::In {
                    set.extend(narrowed.values().iter().cloned());
                }
            }
        }
        for n in &input.existing_nodes {
            if let Some(v) = n.node.labels.get(key) {
                set.insert(v.clone());
            }
        }
    }
    domains
}

impl<'a> Solver<'a> {
    fn pod(&self, state: usize) -> &'a Pod {
        &self.input.pods[self.states[state].index]
    }

    /// Karpenter's queue: largest pods first; a pod that fails goes to the back; the loop ends
    /// when a whole cycle makes no progress. Returns the last failure of each pod left.
    fn run(&mut self) -> BTreeMap<usize, String> {
        let mut order: Vec<usize> = (0..self.states.len()).collect();
        order.sort_by(|&a, &b| {
            let (pa, pb) = (self.pod(a), self.pod(b));
            pb.requests
                .cpu
                .cmp(&pa.requests.cpu)
                .then(pb.requests.memory.cmp(&pa.requests.memory))
                .then_with(|| pa.creation_timestamp.cmp(&pb.creation_timestamp))
                .then_with(|| pa.uid.cmp(&pb.uid))
                .then_with(|| pa.key().cmp(&pb.key()))
        });
        let mut queue: VecDeque<usize> = order.into();
        let mut last_len: FxHashMap<usize, usize> = FxHashMap::default();
        let mut failures: BTreeMap<usize, String> = BTreeMap::new();
        while let Some(&s) = queue.front() {
            if last_len.get(&s) == Some(&queue.len()) {
                break;
            }
            queue.pop_front();
            match self.add(s) {
                Ok(()) => {
                    failures.remove(&s);
                }
                Err(reason) => {
                    failures.insert(s, reason);
                    let pod = self.pod(s);
                    let relaxed = self.states[s]
                        .relax(pod, self.any_prefer_no_schedule)
                        .is_some();
                    queue.push_back(s);
                    if relaxed {
                        last_len.clear();
                        let bound = Vec::new();
                        let state = self.states[s].clone();
                        self.topology.update(pod, &state, &bound);
                    } else {
                        last_len.insert(s, queue.len());
                    }
                }
            }
        }
        queue
            .into_iter()
            .filter_map(|s| failures.remove(&s).map(|r| (s, r)))
            .collect()
    }

    /// Tries existing nodes, then in-flight NodeClaims (fewest pods first), then a new NodeClaim
    /// from each pool in order.
    fn add(&mut self, s: usize) -> Result<(), String> {
        let pod = self.pod(s);
        for e in 0..self.existing.len() {
            if self.try_existing(e, s).is_ok() {
                return Ok(());
            }
        }
        // Least-loaded claims first. Claims pinned to a zone the pod cannot use are skipped
        // without trying them, and a pod whose hostname anti-affinity has no empty hostname left
        // skips them all: in both cases trying would fail the same way, only later.
        let found = if self.topology.no_free_hostname(&self.states[s]) {
            None
        } else {
            let zones = self.topology.zone_restriction(&self.states[s]);
            self.claim_order.candidates(zones.as_ref()).find_map(|key| {
                let claim = &self.claims[key.1];
                try_claim(
                    &self.topology,
                    &self.pools[claim.pool],
                    claim,
                    pod,
                    &self.states[s],
                )
                .ok()
                .map(|update| (key, update))
            })
        };
        if let Some(((count, c), update)) = found {
            self.claim_order.remove((count, c));
            self.commit(c, s, update);
            let pin = zone_pin(&self.claims[c].reqs);
            self.claim_order.insert((count + 1, c), pin);
            return Ok(());
        }
        let mut reasons = Vec::new();
        for p in 0..self.pools.len() {
            match self.new_claim(p, s) {
                Ok(()) => return Ok(()),
                Err(r) => reasons.push(r),
            }
        }
        if reasons.is_empty() {
            reasons.push("no NodePool to create a node from".to_string());
        }
        if !self.existing.is_empty() {
            reasons.insert(
                0,
                format!("does not fit any of {} existing nodes", self.existing.len()),
            );
        }
        Err(reasons.join("; "))
    }

    fn try_existing(&mut self, e: usize, s: usize) -> Result<(), Fail> {
        let pod = self.pod(s);
        let state = &self.states[s];
        let node = &self.existing[e];
        if let Some(t) = first_untolerated(&node.taints, &state.tolerations) {
            return Err(Fail::Taint(t.clone()));
        }
        let requests = node.requests.add(&pod.requests);
        if !requests.fits_in(&node.available) {
            return Err(Fail::NoInstanceType);
        }
        if !node.reqs.is_compatible(&state.requirements, |_| false) {
            return Err(Fail::Requirements);
        }
        if let Some(p) = host_port_conflict(&node.host_ports, &pod.host_ports) {
            return Err(Fail::HostPort(p));
        }
        if !self.topology.is_trivial_for(state) {
            let extra = self
                .topology
                .requirements_for(state, pod, &node.reqs)
                .map_err(Fail::Topology)?;
            for r in extra {
                if !node.reqs.get_ref(&r.key).is_some_and(|n| n.intersects(&r)) {
                    return Err(Fail::Requirements);
                }
            }
        }
        let node = &mut self.existing[e];
        node.requests = requests;
        node.placed.push(s);
        node.host_ports.extend(pod.host_ports.iter().cloned());
        let reqs = node.reqs.clone();
        self.topology.record(&self.states[s], pod, &reqs);
        Ok(())
    }

    fn commit(&mut self, c: usize, s: usize, update: ClaimUpdate) {
        let pod = self.pod(s);
        let claim = &mut self.claims[c];
        if let Some(r) = update.reqs {
            claim.reqs = r;
        }
        claim.types = update.types;
        claim.requests = update.requests;
        claim.pods.push(s);
        claim.host_ports.extend(pod.host_ports.iter().cloned());
        let reqs = claim.reqs.clone();
        self.topology.record(&self.states[s], pod, &reqs);
    }

    /// Opens a new NodeClaim from pool `p` for pod `s`, or says precisely why it cannot.
    fn new_claim(&mut self, p: usize, s: usize) -> Result<(), String> {
        let pool = &self.pools[p];
        let name = &pool.input.pool.name;
        let kind = pool.input.pool.kind();
        if let Some(why) = &pool.unusable {
            return Err(why.clone());
        }
        let mut types: Vec<u32> = (0..pool.types.len() as u32).collect();
        if let Some(remaining) = &pool.remaining {
            types.retain(|&t| {
                remaining
                    .iter()
                    .all(|(k, left)| capacity_of(pool.types[t as usize], k) <= *left)
            });
            if types.is_empty() {
                return Err(limit_reason(pool));
            }
        }
        let hostname = format!("hostname-placeholder-{}-{}", name, pool.claims_created);
        let mut reqs = pool.reqs.clone();
        reqs.add(Requirement::single(HOSTNAME, &hostname));
        let claim = Claim {
            pool: p,
            reqs,
            types,
            requests: Resources::new(),
            pods: Vec::new(),
            host_ports: pool.daemon_host_ports.clone(),
        };
        self.topology.register(HOSTNAME, &hostname);
        let pod = self.pod(s);
        match try_claim(&self.topology, &self.pools[p], &claim, pod, &self.states[s]) {
            Ok(update) => {
                let c = self.claims.len();
                self.claims.push(claim);
                self.commit(c, s, update);
                let pin = zone_pin(&self.claims[c].reqs);
                self.claim_order.insert((1, c), pin);
                let pool = &mut self.pools[p];
                pool.claims_created += 1;
                if let Some(remaining) = pool.remaining.as_mut() {
                    // Pessimistic: the NodeClaim may launch as its largest option.
                    for (k, left) in remaining.iter_mut() {
                        let max = self.claims[c]
                            .types
                            .iter()
                            .map(|&t| capacity_of(pool.types[t as usize], k))
                            .max()
                            .unwrap_or(0);
                        *left -= max;
                    }
                }
                Ok(())
            }
            Err(fail) => {
                self.topology.unregister(HOSTNAME, &hostname);
                Err(format!(
                    "{kind} {name}: {}",
                    self.explain(p, s, &claim, fail)
                ))
            }
        }
    }

    /// Turns a failure to open a NodeClaim into a sentence.
    fn explain(&self, p: usize, s: usize, claim: &Claim, fail: Fail) -> String {
        let pool = &self.pools[p];
        let pod = self.pod(s);
        let state = &self.states[s];
        match fail {
            Fail::Taint(t) => format!("taint {t} not tolerated"),
            Fail::HostPort(port) => format!("host port {port} already in use"),
            Fail::Topology(f) => self.topology.describe(&f),
            Fail::MinValues(key) => {
                format!("minValues for {key} cannot be met by the instance types left")
            }
            Fail::Requirements => match claim
                .reqs
                .compatible(&state.requirements, labels::is_well_known)
            {
                Err(inc) => format!("incompatible requirements: {inc}"),
                Ok(()) => "topology domain not available to this NodePool".to_string(),
            },
            Fail::NoInstanceType => {
                let mut reqs = claim.reqs.clone();
                reqs.add_all(&state.requirements);
                let compatible: Vec<u32> = claim
                    .types
                    .iter()
                    .copied()
                    .filter(|&t| {
                        let it = pool.types[t as usize];
                        it.requirements.intersects_ok(&reqs) && has_offering(it, &reqs)
                    })
                    .collect();
                if compatible.is_empty() {
                    return format!(
                        "no instance type satisfies the pod's requirements ({})",
                        describe_requirements(&state.requirements)
                    );
                }
                let mut largest = Resources::new();
                for &t in &compatible {
                    largest = largest.max(&pool.effective_allocatable[t as usize]);
                }
                let short: Vec<String> = pod
                    .requests
                    .exceeded(&largest)
                    .into_iter()
                    .map(|r| {
                        format!(
                            "{r} {} (largest available after overhead: {})",
                            format_milli(&r, pod.requests.get(&r)),
                            format_milli(&r, largest.get(&r))
                        )
                    })
                    .collect();
                if short.is_empty() {
                    format!("no single instance type fits requests {}", pod.requests)
                } else {
                    let limited = if pool.remaining.is_some() && compatible.len() < pool.types.len()
                    {
                        " within its remaining limits"
                    } else {
                        ""
                    };
                    format!("no instance type{limited} has {}", short.join(", "))
                }
            }
        }
    }

    fn finish(
        self,
        failures: BTreeMap<usize, String>,
        mut unschedulable: Vec<UnschedulablePod>,
    ) -> Plan {
        let mut plan = Plan::default();
        for (s, reason) in failures {
            unschedulable.push(UnschedulablePod {
                pod: self.pod(s).key(),
                reason,
            });
        }
        let mut per_pool_index: BTreeMap<String, usize> = BTreeMap::new();
        for claim in &self.claims {
            let pool = &self.pools[claim.pool];
            let pods = claim.pods.iter().map(|&s| self.pod(s).key()).collect();
            match finalize(self.input, pool, claim, pods) {
                Ok(mut planned) => {
                    let n = per_pool_index
                        .entry(pool.input.pool.name.clone())
                        .or_insert(0);
                    *n += 1;
                    planned.name = format!("{}-{}", pool.input.pool.name, n);
                    plan.node_claims.push(planned);
                }
                Err(reason) => {
                    for &s in &claim.pods {
                        unschedulable.push(UnschedulablePod {
                            pod: self.pod(s).key(),
                            reason: reason.clone(),
                        });
                    }
                }
            }
        }
        for e in &self.existing {
            if !e.placed.is_empty() {
                let mut pods: Vec<String> = e.placed.iter().map(|&s| self.pod(s).key()).collect();
                pods.sort();
                plan.existing_nodes.push(ExistingPlacement {
                    node: e.node.name.clone(),
                    pods,
                });
            }
        }
        plan.existing_nodes.sort_by(|a, b| a.node.cmp(&b.node));
        unschedulable.sort_by(|a, b| natural_cmp(&a.pod, &b.pod));
        plan.unschedulable = unschedulable;
        plan
    }
}

/// Whether `pod` can join `claim`, and the claim's state if it does (`NodeClaim.Add`).
fn try_claim(
    topology: &Topology,
    pool: &Pool<'_>,
    claim: &Claim,
    pod: &Pod,
    state: &PodState,
) -> Result<ClaimUpdate, Fail> {
    if let Some(t) = first_untolerated(&pool.input.pool.taints, &state.tolerations) {
        return Err(Fail::Taint(t.clone()));
    }
    if let Some(p) = host_port_conflict(&claim.host_ports, &pod.host_ports) {
        return Err(Fail::HostPort(p));
    }
    let mut changed: Vec<String> = Vec::new();
    let mut new_reqs: Option<Requirements> = None;
    if !state.requirements.is_empty() {
        if !claim
            .reqs
            .is_compatible(&state.requirements, labels::is_well_known)
        {
            return Err(Fail::Requirements);
        }
        let mut r = claim.reqs.clone();
        r.add_all(&state.requirements);
        changed.extend(
            state
                .requirements
                .iter()
                .filter(|q| r.get_ref(&q.key) != claim.reqs.get_ref(&q.key))
                .map(|q| q.key.clone()),
        );
        new_reqs = Some(r);
    }
    if !topology.is_trivial_for(state) {
        let extra = {
            let base = new_reqs.as_ref().unwrap_or(&claim.reqs);
            topology
                .requirements_for(state, pod, base)
                .map_err(Fail::Topology)?
        };
        for r in extra {
            let target = new_reqs.get_or_insert_with(|| claim.reqs.clone());
            let defined = target.has(&r.key) || labels::is_well_known(&r.key);
            if !defined || target.get_ref(&r.key).is_some_and(|b| !b.intersects(&r)) {
                return Err(Fail::Requirements);
            }
            let key = r.key.clone();
            let before = target.get_ref(&key).cloned();
            target.add(r);
            if target.get_ref(&key) != before.as_ref() {
                changed.push(key);
            }
        }
    }
    let requests = claim.requests.add(&pod.requests);
    let reqs = new_reqs.as_ref().unwrap_or(&claim.reqs);
    let offerings_changed = changed
        .iter()
        .any(|k| k == labels::ZONE || k == labels::CAPACITY_TYPE);
    let admitted = offerings_changed.then(|| admitted_slots(pool, reqs));
    let types: Vec<u32> = claim
        .types
        .iter()
        .copied()
        .filter(|&t| {
            let it = pool.types[t as usize];
            requests.fits_in(&pool.effective_allocatable[t as usize])
                && changed.iter().all(|k| {
                    it.requirements
                        .get_ref(k)
                        .is_none_or(|ir| reqs.get_ref(k).is_none_or(|r| ir.intersects(r)))
                })
                && admitted
                    .as_ref()
                    .is_none_or(|a| pool.offers[t as usize].iter().any(|(slot, _)| a[*slot]))
        })
        .collect();
    if types.is_empty() {
        return Err(Fail::NoInstanceType);
    }
    if let Some(key) = unmet_min_values(pool, &types, reqs) {
        return Err(Fail::MinValues(key));
    }
    Ok(ClaimUpdate {
        reqs: new_reqs,
        types,
        requests,
    })
}

/// The single zone a NodeClaim is pinned to, if its zone requirement has one value.
fn zone_pin(reqs: &Requirements) -> Option<String> {
    reqs.get_ref(labels::ZONE)
        .filter(|z| z.operator() == Operator::In && z.values().len() == 1)
        .and_then(|z| z.values().iter().next().cloned())
}

/// In-flight NodeClaims keyed by (pod count, creation order) — the order Karpenter tries them —
/// and indexed by the zone each is pinned to.
#[derive(Default)]
struct ClaimQueue {
    all: BTreeSet<(usize, usize)>,
    unpinned: BTreeSet<(usize, usize)>,
    by_zone: FxHashMap<String, BTreeSet<(usize, usize)>>,
    pins: FxHashMap<usize, String>,
}

impl ClaimQueue {
    fn insert(&mut self, key: (usize, usize), pin: Option<String>) {
        self.all.insert(key);
        match pin {
            Some(zone) => {
                self.by_zone.entry(zone.clone()).or_default().insert(key);
                self.pins.insert(key.1, zone);
            }
            None => {
                self.unpinned.insert(key);
            }
        }
    }

    fn remove(&mut self, key: (usize, usize)) {
        self.all.remove(&key);
        match self.pins.remove(&key.1) {
            Some(zone) => {
                if let Some(set) = self.by_zone.get_mut(&zone) {
                    set.remove(&key);
                }
            }
            None => {
                self.unpinned.remove(&key);
            }
        }
    }

    /// Claims in order; with a zone restriction, only unpinned claims and those pinned to an
    /// allowed zone (a merge of the per-zone orders).
    fn candidates<'q>(
        &'q self,
        zones: Option<&Requirement>,
    ) -> Box<dyn Iterator<Item = (usize, usize)> + 'q> {
        let Some(zones) = zones else {
            return Box::new(self.all.iter().copied());
        };
        let mut heads: Vec<
            std::iter::Peekable<std::collections::btree_set::Iter<'q, (usize, usize)>>,
        > = vec![self.unpinned.iter().peekable()];
        for z in zones.values() {
            if let Some(set) = self.by_zone.get(z) {
                heads.push(set.iter().peekable());
            }
        }
        Box::new(std::iter::from_fn(move || {
            let (best, _) = heads
                .iter_mut()
                .enumerate()
                .filter_map(|(i, h)| h.peek().map(|k| (i, **k)))
                .min_by_key(|(_, k)| *k)?;
            heads[best].next().copied()
        }))
    }
}

/// Orders names the way people count: `inflate-2` before `inflate-10`.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, xa), (db, xb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            ta.len()
                .cmp(&tb.len())
                .then_with(|| ta.cmp(tb))
                .then_with(|| xa.len().cmp(&xb.len()))
        } else {
            xa.cmp(xb)
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

fn host_port_conflict(used: &[HostPort], wanted: &[HostPort]) -> Option<i32> {
    wanted
        .iter()
        .find(|w| used.iter().any(|u| u.conflicts(w)))
        .map(|w| w.port)
}

/// The first `minValues` requirement the remaining types no longer satisfy.
fn unmet_min_values(pool: &Pool<'_>, types: &[u32], reqs: &Requirements) -> Option<String> {
    for (key, min) in &pool.min_values {
        let allowed = reqs.get_ref(key);
        let mut values: BTreeSet<&str> = BTreeSet::new();
        for &t in types {
            if let Some(r) = pool.types[t as usize].requirements.get_ref(key) {
                if r.operator() == Operator::In {
                    values.extend(
                        r.values()
                            .iter()
                            .filter(|v| allowed.is_none_or(|a| a.has(v)))
                            .map(String::as_str),
                    );
                }
            }
        }
        if values.len() < *min as usize {
            return Some(format!("{key} (needs {min}, {} left)", values.len()));
        }
    }
    None
}

fn limit_reason(pool: &Pool<'_>) -> String {
    let name = &pool.input.pool.name;
    let kind = pool.input.pool.kind();
    let remaining = pool.remaining.as_ref();
    let mut parts = Vec::new();
    for (key, limit) in &pool.input.pool.limits {
        let left = remaining
            .and_then(|r| r.get(key))
            .copied()
            .unwrap_or(*limit);
        let smallest = pool
            .types
            .iter()
            .map(|it| capacity_of(it, key))
            .min()
            .unwrap_or(0);
        if smallest > left {
            parts.push(format!(
                "limit {key}={} reached ({key}={} left; the smallest instance type has {key}={})",
                format_milli(key, *limit),
                format_milli(key, left.max(0)),
                format_milli(key, smallest)
            ));
        }
    }
    if parts.is_empty() {
        parts.push("every instance type exceeds the remaining limits".to_string());
    }
    format!("{kind} {name}: {}", parts.join(", "))
}

fn describe_requirements(reqs: &Requirements) -> String {
    if reqs.is_empty() {
        "none".to_string()
    } else {
        reqs.to_string()
    }
}

/// Metal sizes and accelerated types: Karpenter only launches them when nothing else fits.
fn is_exotic(it: &InstanceType) -> bool {
    let has = |key: &str| {
        it.requirements
            .get_ref(key)
            .is_some_and(|r| r.operator() == Operator::In)
    };
    it.requirements
        .get_ref(labels::INSTANCE_SIZE)
        .is_some_and(|r| r.has("metal"))
        || has(labels::INSTANCE_GPU_COUNT)
        || has(labels::INSTANCE_ACCELERATOR_COUNT)
}

/// Orders a NodeClaim's options by price, truncates them, checks `minValues`, and works out
/// what would be launched (KARPENTER.md §6.4 steps 5–6, §6.7 steps 2–3).
fn finalize(
    input: &Input,
    pool: &Pool<'_>,
    claim: &Claim,
    pods: Vec<String>,
) -> Result<PlannedNodeClaim, String> {
    let mut reqs = claim.reqs.clone();
    reqs.remove(HOSTNAME);
    let admitted = admitted_slots(pool, &reqs);
    let mut options: Vec<(f64, u32)> = claim
        .types
        .iter()
        .filter_map(|&t| cheapest_offer(pool, t, &admitted, None).map(|o| (o.price, t)))
        .collect();
    options.sort_by(|a, b| {
        a.0.total_cmp(&b.0).then_with(|| {
            pool.types[a.1 as usize]
                .name
                .cmp(&pool.types[b.1 as usize].name)
        })
    });
    options.truncate(input.options.max_instance_types.max(1));
    let kept: Vec<u32> = options.iter().map(|&(_, t)| t).collect();
    if let Some(key) = unmet_min_values(pool, &kept, &reqs) {
        return Err(format!(
            "{} {}: minValues for {key} cannot be met by the {} cheapest instance types",
            pool.input.pool.kind(),
            pool.input.pool.name,
            kept.len()
        ));
    }
    // Capacity type: reserved, then spot, then on-demand — whichever is allowed and available.
    let available_ct = |ct: &str| {
        kept.iter()
            .any(|&t| cheapest_offer(pool, t, &admitted, Some(ct)).is_some())
    };
    let capacity_type = [RESERVED, SPOT, ON_DEMAND]
        .into_iter()
        .find(|ct| available_ct(ct))
        .unwrap_or(ON_DEMAND);
    // Exotic filter: skip metal and accelerated types if anything else can be launched.
    let uses_min_values = !pool.min_values.is_empty();
    let launchable: Vec<u32> = {
        let plain: Vec<u32> = kept
            .iter()
            .copied()
            .filter(|&t| !is_exotic(pool.types[t as usize]))
            .filter(|&t| cheapest_offer(pool, t, &admitted, Some(capacity_type)).is_some())
            .collect();
        if plain.is_empty() || uses_min_values {
            kept.clone()
        } else {
            plain
        }
    };
    let (launch_type, offering) = launchable
        .iter()
        .filter_map(|&t| cheapest_offer(pool, t, &admitted, Some(capacity_type)).map(|o| (t, o)))
        .min_by(|a, b| {
            a.1.price.total_cmp(&b.1.price).then_with(|| {
                pool.types[a.0 as usize]
                    .name
                    .cmp(&pool.types[b.0 as usize].name)
            })
        })
        .ok_or_else(|| {
            format!(
                "{} {}: no offering left to launch",
                pool.input.pool.kind(),
                pool.input.pool.name
            )
        })?;
    let launch_it = pool.types[launch_type as usize];
    let mut zones = BTreeSet::new();
    let mut cts = BTreeSet::new();
    for &t in &kept {
        for &(slot, _) in &pool.offers[t as usize] {
            if admitted[slot] {
                zones.insert(pool.slots[slot].0.clone());
                cts.insert(pool.slots[slot].1.clone());
            }
        }
    }
    let names: Vec<String> = kept
        .iter()
        .map(|&t| pool.types[t as usize].name.clone())
        .collect();
    let mut out_reqs = reqs.clone();
    out_reqs.add(Requirement::new(
        labels::INSTANCE_TYPE,
        Operator::In,
        names.iter().cloned(),
    ));
    out_reqs.add(Requirement::new(
        labels::CAPACITY_TYPE,
        Operator::In,
        cts.iter().cloned(),
    ));
    // Labels: the template's, the owner's, one value for every custom requirement key, then the
    // launched instance type's own labels.
    let np = &pool.input.pool;
    let mut node_labels = np.labels.clone();
    node_labels.insert(np.owner_label().to_string(), np.name.clone());
    for r in reqs.iter() {
        if labels::is_well_known(&r.key) || labels::restricted_reason(&r.key).is_some() {
            continue;
        }
        if let Some(v) = r.any() {
            node_labels.entry(r.key.clone()).or_insert(v);
        }
    }
    for (k, v) in launch_it.requirements.single_value_labels() {
        node_labels.entry(k).or_insert(v);
    }
    node_labels.insert(labels::ZONE.to_string(), offering.zone.clone());
    node_labels.insert(labels::CAPACITY_TYPE.to_string(), capacity_type.to_string());
    node_labels.insert(labels::INSTANCE_TYPE.to_string(), launch_it.name.clone());
    if let Some(class) = &np.node_class_ref {
        if np.generation != Some(crate::model::nodepool::ApiGeneration::V1Alpha5) {
            node_labels.insert(labels::EC2NODECLASS.to_string(), class.name.clone());
        }
    }
    let min_overhead = kept
        .iter()
        .map(|&t| &pool.daemon_overhead[t as usize])
        .min_by_key(|r| (r.cpu, r.memory))
        .cloned()
        .unwrap_or_default();
    Ok(PlannedNodeClaim {
        name: String::new(),
        node_pool: np.name.clone(),
        node_class: pool.input.node_class.clone(),
        instance_types: options
            .iter()
            .map(|&(price, t)| InstanceTypeOption {
                name: pool.types[t as usize].name.clone(),
                price,
            })
            .collect(),
        launch: LaunchChoice {
            instance_type: launch_it.name.clone(),
            capacity_type: capacity_type.to_string(),
            zone: offering.zone.clone(),
            price: offering.price,
        },
        zones: zones.into_iter().collect(),
        capacity_types: cts.into_iter().collect(),
        pods,
        requests: claim.requests.add(&min_overhead),
        requirements: out_reqs,
        labels: node_labels,
        taints: np.taints.clone(),
        startup_taints: np.startup_taints.clone(),
    })
}
