//! An in-flight NodeClaim: the pods packed so far, its narrowed requirements and the instance
//! types that can still hold them all; whether one more pod can join; and the order in which
//! in-flight NodeClaims are tried (least loaded first).
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/nodeclaim.go`
//! (`NodeClaim.CanAdd`, `filterInstanceTypesByRequirements`).

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::model::go_sort;
use crate::model::labels;
use crate::model::pod::{HostPort, Pod};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::taints::first_untolerated;

use super::node_claim_template::{admitted_slots, Pool};
use super::podreqs::PodState;
use super::scheduler::Fail;
use super::topology::Topology;
use super::volumes::PodVolumes;

/// A NodeClaim being packed.
pub(super) struct Claim {
    pub(super) pool: usize,
    pub(super) reqs: Requirements,
    /// Indices into the pool's `types`.
    pub(super) types: Vec<u32>,
    /// Σ requests of the pods placed.
    pub(super) requests: Resources,
    pub(super) pods: Vec<usize>,
    pub(super) host_ports: Vec<HostPort>,
    /// Capacity reservations it holds (`reservations.rs`), sorted.
    pub(super) reserved: Vec<String>,
    /// `MinValuesPolicy: BestEffort` lowered one of its `minValues` when it was created
    /// (`karpenter.sh/nodeclaim-min-values-relaxed: "true"`).
    pub(super) min_values_relaxed: bool,
}

/// The outcome of a successful attempt on a NodeClaim, applied only if it is chosen.
pub(super) struct ClaimUpdate {
    pub(super) reqs: Option<Requirements>,
    pub(super) types: Vec<u32>,
    pub(super) requests: Resources,
    /// The reservations to hold from now on; `None`: unchanged (no reserved offerings).
    pub(super) reserved: Option<Vec<String>>,
    /// A `minValues` was lowered to what the types left provide (`MinValuesPolicy:
    /// BestEffort`, a new NodeClaim only).
    pub(super) min_values_relaxed: bool,
}

/// Whether `pod` can join `claim`, and the claim's state if it does (`NodeClaim.CanAdd`): each
/// of the pod's volume alternatives in turn (`tryVolumeAlternative`), the first that fits wins.
/// `relax_min_values`: `CanAdd`'s `relaxMinValues` — the policy is BestEffort and `claim` is a
/// new NodeClaim (`addToNewNodeClaim`; `addToInflightNode` never relaxes).
pub(super) fn try_claim(
    topology: &Topology,
    pool: &Pool<'_>,
    claim: &Claim,
    pod: &Pod,
    state: &PodState,
    volumes: Option<&PodVolumes>,
    relax_min_values: bool,
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
    let alternatives = volumes.map_or(&[][..], |v| v.alternatives.as_slice());
    if alternatives.is_empty() {
        let attempt = Attempt {
            new_reqs,
            changed,
            relax_min_values,
        };
        return try_alternative(topology, pool, claim, pod, state, attempt, None);
    }
    let mut last = Fail::Volume;
    for alt in alternatives {
        let attempt = Attempt {
            new_reqs: new_reqs.clone(),
            changed: changed.clone(),
            relax_min_values,
        };
        match try_alternative(topology, pool, claim, pod, state, attempt, Some(alt)) {
            Ok(update) => return Ok(update),
            Err(f) => last = f,
        }
    }
    Err(last)
}

/// The requirements the pod's topology (spread, affinity) adds on a new NodeClaim of `claim`'s
/// pool, as [`try_claim`] adds them (empty when they cannot be worked out): for explaining a
/// refusal in the terms Karpenter's `InstanceTypeFilterError` uses, whose requirements include
/// the topology's (core v1.14.1 `nodeclaim.go` `filterInstanceTypesByRequirements`).
pub(super) fn topology_requirements(
    topology: &Topology,
    pool: &Pool<'_>,
    claim: &Claim,
    pod: &Pod,
    state: &PodState,
) -> Vec<Requirement> {
    if topology.is_trivial_for(state) {
        return Vec::new();
    }
    let reachable = reachable_domains(topology, state, pool, &claim.types, &claim.reqs);
    topology
        .requirements_for(state, pod, &claim.reqs, reachable.as_ref())
        .unwrap_or_default()
}

/// The values the NodeClaim's instance types still provide for each key a group of the pod
/// constrains (hostname aside; for the zone, the zones of their admitted offerings), for the
/// topology's choice among equally good spread domains. Karpenter's universe of domains holds
/// values no type of the pool reaches (`buildDomainGroups`, see `scheduler::pool_domains`); it
/// picks one of a spread's minimal domains at random, and when the NodeClaim has no type there
/// the pod fails and is tried again with another pick (`Scheduler.Solve` requeues it), so among
/// tied minimal domains it ends up in a reachable one, while a unique minimal domain out of
/// reach fails it every time (thread kubernetes-sigs/karpenter#3272). `None`: nothing known.
fn reachable_domains(
    topology: &Topology,
    state: &PodState,
    pool: &Pool<'_>,
    types: &[u32],
    base: &Requirements,
) -> Option<Requirements> {
    let mut out: Option<Requirements> = None;
    let mut seen: Vec<&str> = Vec::new();
    let mut admitted: Option<Vec<bool>> = None;
    for key in topology.keys_for(state) {
        if key == labels::HOSTNAME || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let current = base.get_ref(key);
        if current.is_some_and(|r| r.operator() == Operator::In && r.values().len() == 1) {
            continue;
        }
        let mut values: BTreeSet<&str> = BTreeSet::new();
        let mut every_type_tells = true;
        if key == labels::ZONE {
            // The offering slots any type reaches, marked first: many types share a few
            // zones, and a flag per slot costs no string comparison.
            let admitted = admitted.get_or_insert_with(|| admitted_slots(pool, base));
            let mut reached = vec![false; pool.slots.len()];
            for &t in types {
                for (slot, _) in pool.offers[t as usize].iter() {
                    reached[*slot] |= admitted[*slot];
                }
            }
            values.extend(
                reached
                    .iter()
                    .zip(pool.slots.iter())
                    .filter(|(hit, _)| **hit)
                    .map(|(_, (zone, _))| zone.as_str()),
            );
        } else {
            for &t in types {
                match pool.types[t as usize].requirements.get_ref(key) {
                    Some(r) if r.operator() == Operator::In => {
                        values.extend(r.values().iter().map(String::as_str));
                    }
                    _ => {
                        every_type_tells = false;
                        break;
                    }
                }
            }
        }
        if !every_type_tells {
            continue;
        }
        let target = out.get_or_insert_with(|| base.clone());
        target.add(Requirement::new(key, Operator::In, values));
    }
    out
}

/// What an attempt starts from: the NodeClaim's requirements narrowed by the pod's (`None`:
/// unchanged), the keys that narrowing changed, and whether unmet `minValues` are relaxed.
struct Attempt {
    new_reqs: Option<Requirements>,
    changed: Vec<String>,
    relax_min_values: bool,
}

/// One volume alternative (or none): the NodeClaim narrowed by it (well-known labels may be
/// undefined, as for the pod's own requirements), then by topology, then its instance types.
fn try_alternative(
    topology: &Topology,
    pool: &Pool<'_>,
    claim: &Claim,
    pod: &Pod,
    state: &PodState,
    attempt: Attempt,
    volume: Option<&Requirements>,
) -> Result<ClaimUpdate, Fail> {
    let Attempt {
        mut new_reqs,
        mut changed,
        relax_min_values,
    } = attempt;
    if let Some(alt) = volume.filter(|a| !a.is_empty()) {
        let base = new_reqs.get_or_insert_with(|| claim.reqs.clone());
        if !base.is_compatible(alt, labels::is_well_known) {
            return Err(Fail::Volume);
        }
        let before = base.clone();
        base.add_all(alt);
        changed.extend(
            alt.iter()
                .filter(|q| base.get_ref(&q.key) != before.get_ref(&q.key))
                .map(|q| q.key.clone()),
        );
    }
    if !topology.is_trivial_for(state) {
        let extra = {
            let base = new_reqs.as_ref().unwrap_or(&claim.reqs);
            let reachable = reachable_domains(topology, state, pool, &claim.types, base);
            topology
                .requirements_for(state, pod, base, reachable.as_ref())
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
    let offerings_changed = changed.iter().any(|k| {
        k == labels::ZONE
            || k == labels::ZONE_ID
            || k == labels::CAPACITY_TYPE
            || k == labels::CAPACITY_RESERVATION_ID
    });
    let admitted = offerings_changed.then(|| admitted_slots(pool, reqs));
    let compatible: Vec<Rc<[bool]>> = changed
        .iter()
        .filter_map(|k| reqs.get_ref(k))
        .map(|r| pool.types_compatible_with(r))
        .collect();
    let types: Vec<u32> = claim
        .types
        .iter()
        .copied()
        .filter(|&t| {
            requests.fits_in(&pool.effective_allocatable[t as usize])
                && host_port_conflict(&pool.daemon_host_ports[t as usize], &pod.host_ports)
                    .is_none()
                && compatible.iter().all(|c| c[t as usize])
                && admitted
                    .as_ref()
                    .is_none_or(|a| pool.offers[t as usize].iter().any(|(slot, _)| a[*slot]))
        })
        .collect();
    if types.is_empty() {
        // Every type left binds one of the pod's host ports through a DaemonSet: say so.
        let daemon_port = claim.types.iter().find_map(|&t| {
            host_port_conflict(&pool.daemon_host_ports[t as usize], &pod.host_ports)
        });
        return Err(daemon_port.map_or(Fail::NoInstanceType, Fail::HostPort));
    }
    let mut min_values_relaxed = false;
    if let Some(key) = unmet_min_values(pool, &types, reqs) {
        if !relax_min_values {
            return Err(Fail::MinValues(key));
        }
        // BestEffort (`tryVolumeAlternative`): every unmet `minValues` becomes the number of
        // values the types left provide (`SatisfiesMinValues`' unsatisfiable keys).
        let short = min_values_shortfalls(pool, &types, reqs);
        let target = new_reqs.get_or_insert_with(|| claim.reqs.clone());
        for (key, left) in short {
            let mut r = target.get(&key);
            r.min_values = Some(left);
            target.remove(&key);
            target.add(r);
        }
        min_values_relaxed = true;
    }
    Ok(ClaimUpdate {
        reqs: new_reqs,
        types,
        requests,
        reserved: None,
        min_values_relaxed,
    })
}

/// The single zone a NodeClaim is pinned to, if its zone requirement has one value.
pub(super) fn zone_pin(reqs: &Requirements) -> Option<String> {
    reqs.get_ref(labels::ZONE)
        .filter(|z| z.operator() == Operator::In && z.values().len() == 1)
        .and_then(|z| z.values().iter().next().cloned())
}

/// An in-flight NodeClaim as the queue yields it: (its position in the queue, its index).
pub(super) type ClaimSlot = (usize, usize);

/// What changed in the claim queue since Karpenter's last sort.
#[derive(Default, Clone, Copy)]
enum Disorder {
    /// Nothing: Go leaves a sorted list as it is (checked in `model::go_sort`'s tests).
    #[default]
    Sorted,
    /// One claim, at this position, gained a pod or joined: the list is sorted but for it.
    One(usize),
    /// More than one change (not reached: Karpenter sorts before every pod's claim search).
    Many,
}

/// In-flight NodeClaims in the order Karpenter tries them. Karpenter keeps them in a list that
/// new claims join at the end, and before each pod that no existing node took it sorts that list
/// in place by pod count (core v1.14.1 `scheduler.go` `add`: `sort.Slice(s.newNodeClaims, …
/// len(Pods) …)`). Go's sort is an insertion sort up to 12 claims and a pdqsort beyond, not
/// stable but a fixed function of the list: `go_sort` reproduces it, ties included.
#[derive(Default)]
pub(super) struct ClaimQueue {
    /// Karpenter's `s.newNodeClaims`, as claim indices.
    order: Vec<usize>,
    /// Each claim's pod count, by claim index.
    pods: Vec<usize>,
    /// The zone each claim is pinned to (an index into `zones`), by claim index.
    pins: Vec<Option<u32>>,
    /// The zones claims are pinned to, so a restriction is checked with integers.
    zones: Vec<String>,
    disorder: Disorder,
}

impl ClaimQueue {
    /// A new NodeClaim with its first pod, appended as Karpenter appends it.
    pub(super) fn insert_new(&mut self, claim: usize, pin: Option<String>) {
        if self.pods.len() <= claim {
            self.pods.resize(claim + 1, 0);
            self.pins.resize(claim + 1, None);
        }
        self.pods[claim] = 1;
        self.pins[claim] = self.zone_id(pin);
        self.changed(self.order.len());
        self.order.push(claim);
    }

    /// A NodeClaim that took one more pod; its zone pin may have narrowed.
    pub(super) fn bump(&mut self, (at, claim): ClaimSlot, pin: Option<String>) {
        self.pods[claim] += 1;
        self.pins[claim] = self.zone_id(pin);
        self.changed(at);
    }

    fn zone_id(&mut self, zone: Option<String>) -> Option<u32> {
        let zone = zone?;
        let id = match self.zones.iter().position(|z| *z == zone) {
            Some(id) => id,
            None => {
                self.zones.push(zone);
                self.zones.len() - 1
            }
        };
        Some(id as u32)
    }

    fn changed(&mut self, at: usize) {
        self.disorder = match self.disorder {
            Disorder::Sorted => Disorder::One(at),
            Disorder::One(_) | Disorder::Many => Disorder::Many,
        };
    }

    /// Karpenter's sort by pod count, run where it runs: after the existing nodes refused the pod.
    pub(super) fn sort(&mut self) {
        let pods = &self.pods;
        let less = |a: &usize, b: &usize| pods[*a] < pods[*b];
        match std::mem::take(&mut self.disorder) {
            Disorder::Sorted => {}
            Disorder::One(at) => go_sort::resort_changed(&mut self.order, at, less),
            Disorder::Many => go_sort::sort_slice(&mut self.order, less),
        }
    }

    /// Claims in order; with a zone restriction, only unpinned claims and those pinned to an
    /// allowed zone.
    pub(super) fn candidates(
        &self,
        zones: Option<&Requirement>,
    ) -> impl Iterator<Item = ClaimSlot> + '_ {
        let allowed: Option<Vec<u32>> = zones.map(|r| {
            (0..self.zones.len() as u32)
                .filter(|&z| r.values().contains(&self.zones[z as usize]))
                .collect()
        });
        self.order
            .iter()
            .copied()
            .enumerate()
            .filter(move |&(_, c)| match (&allowed, self.pins[c]) {
                (Some(allowed), Some(pin)) => allowed.contains(&pin),
                _ => true,
            })
    }
}

pub(super) fn host_port_conflict(used: &[HostPort], wanted: &[HostPort]) -> Option<i32> {
    wanted
        .iter()
        .find(|w| used.iter().any(|u| u.conflicts(w)))
        .map(|w| w.port)
}

/// The first `minValues` requirement the remaining types no longer satisfy. The `minValues` is
/// the NodeClaim's (`reqs`): the pool's, or what BestEffort relaxed it to.
pub(super) fn unmet_min_values(
    pool: &Pool<'_>,
    types: &[u32],
    reqs: &Requirements,
) -> Option<String> {
    for (key, pool_min) in &pool.min_values {
        let min = claim_min_values(reqs, key, *pool_min);
        let left = distinct_values(pool, types, key);
        if left < min as usize {
            return Some(format!("{key} (needs {min}, {left} left)"));
        }
    }
    None
}

/// Every `minValues` key the types no longer satisfy, with the number of values they provide.
fn min_values_shortfalls(
    pool: &Pool<'_>,
    types: &[u32],
    reqs: &Requirements,
) -> Vec<(String, u32)> {
    pool.min_values
        .iter()
        .filter_map(|(key, pool_min)| {
            let left = distinct_values(pool, types, key);
            (left < claim_min_values(reqs, key, *pool_min) as usize)
                .then(|| (key.clone(), left as u32))
        })
        .collect()
}

/// The NodeClaim's `minValues` on `key`, the pool's when its requirements carry none.
fn claim_min_values(reqs: &Requirements, key: &str, pool_min: u32) -> u32 {
    reqs.get_ref(key)
        .and_then(|r| r.min_values)
        .unwrap_or(pool_min)
}

/// How many distinct values of `key` the types provide: every value of their own requirement on
/// it, whether or not the NodeClaim's requirement admits it (`SatisfiesMinValues` collects
/// `it.Requirements.Get(key).Values()`) — a pod pinned to one zone still counts every zone its
/// NodeClaim's types are offered in towards a zone `minValues`.
fn distinct_values(pool: &Pool<'_>, types: &[u32], key: &str) -> usize {
    let mut values: BTreeSet<&str> = BTreeSet::new();
    for &t in types {
        if let Some(r) = pool.types[t as usize].requirements.get_ref(key) {
            if r.operator() == Operator::In {
                values.extend(r.values().iter().map(String::as_str));
            }
        }
    }
    values.len()
}
