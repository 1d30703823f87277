//! The scheduling loop: `solve`, the solver's state, and placing one pod —
//! existing nodes first, then in-flight NodeClaims, then a new NodeClaim from each NodePool.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/scheduler.go` (`Solve`,
//! `add`, `addToInflightNode`, `addToNewNodeClaim`).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::labels;
use crate::model::nodepool::ApiGeneration;
use crate::model::pod::Pod;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::taints::{first_untolerated, Effect, Taint};

use super::existing_node::{
    prepare_existing, CompatCache, DomainClasses, Existing, KeyDomains, NodeFacts, SolveMemo,
    TopologyVerdicts,
};
use super::node_claim::{self, try_claim, zone_pin, Claim, ClaimQueue, ClaimUpdate};
use super::node_claim_template::{
    capacity_of, has_offering, limit_reason, prepare_pools_with, Pool,
};
use super::podreqs::{validation_error, PodState};
use super::queue::Queue;
use super::reason::{LargestType, PoolCause, PoolRefusal, Reason, Shortfall};
use super::reservations::{Reservations, ReservedFail};
use super::shapes::Shapes;
use super::topology::{BoundPods, DomainSources, PodIndex, Topology, TopologyFailure};
use super::volumes::{self, PodVolumes};
use super::{Input, Plan, UnschedulablePod};

/// A state's requirements (kept alive, so the address identifies them) and their id in the
/// compatibility cache.
pub(super) type CompatId = (Arc<Requirements>, u32);

/// The label key of a NodeClaim's placeholder hostname while it is being packed.
pub(super) const HOSTNAME: &str = labels::HOSTNAME;

/// Why a placement attempt failed. Cheap to build: attempts fail millions of times in big solves,
/// and only the last failure of a pod that stays pending is turned into text.
#[derive(Debug, Clone)]
pub(super) enum Fail {
    Taint(Taint),
    HostPort(i32),
    Requirements,
    Topology(TopologyFailure),
    NoInstanceType,
    MinValues(String),
    /// No volume alternative is compatible with the node (or NodeClaim).
    Volume,
    /// An existing node's CSI attach limit for this driver would be exceeded.
    VolumeLimit,
    /// Reserved capacity refuses it (strict mode, `reservations.rs`).
    Reserved(ReservedFail),
}

/// A pool's refusal to open a NodeClaim for a pod: explained at once when that is cheap, else
/// kept with what [`Solver::explain`] needs, since most refusals are never shown.
pub(super) enum Refused {
    Explained(PoolRefusal),
    Unexplained {
        pool: usize,
        fail: Fail,
        claim: Box<Claim>,
    },
}

impl Refused {
    /// Reserved capacity held or lost (what stops the fall back to lower pools).
    fn is_reserved(&self) -> bool {
        match self {
            Refused::Explained(r) => r.cause.is_reserved(),
            Refused::Unexplained { fail, .. } => matches!(fail, Fail::Reserved(_)),
        }
    }
}

/// A NodePool's refusal of a pod for lack of an instance type, kept unexplained: a pod that
/// fits nowhere is tried again in every cycle of the queue, and putting the refusal into words
/// walks the pool's instance types each time, though only the last failure's reason is kept.
/// The words are worked out at the end of the solve for the pods left, from what they read as
/// it was at the refusal: the claim tried (kept here), the pod's requirements then (its state
/// may be relaxed since), and what does not change within a solve (the pool's types, their
/// allocatable, whether it has limits; the pod and its volumes). So the reason is the same.
pub(super) struct Deferred {
    /// Its position in the reason's refusals.
    at: usize,
    pool: usize,
    claim: Box<Claim>,
    requirements: Arc<Requirements>,
}

pub(super) struct Solver<'a> {
    pub(super) input: &'a Input,
    pub(super) states: Vec<PodState>,
    /// Per state: the pod's volumes, when it has any that matter.
    pub(super) volumes: Vec<Option<PodVolumes>>,
    pub(super) pools: Vec<Pool<'a>>,
    pub(super) existing: Vec<Existing<'a>>,
    pub(super) claims: Vec<Claim>,
    /// Claims ordered by (pod count, creation order): Karpenter tries the least loaded first.
    pub(super) claim_order: ClaimQueue,
    pub(super) topology: Topology,
    pub(super) any_prefer_no_schedule: bool,
    /// What is known to refuse pods no topology group constrains, per shape.
    pub(super) shapes: Shapes,
    /// What is left of each capacity reservation (Karpenter's `ReservationManager`).
    pub(super) reservations: Reservations,
    /// Which existing nodes admit which requirements (kept by a tracking memo between solves).
    pub(super) compat: RefCell<CompatCache>,
    /// Per state: its requirements' id in `compat`, with the requirements it was taken for.
    pub(super) compat_ids: RefCell<Vec<Option<CompatId>>>,
    /// The topology verdicts of the pod being tried on existing nodes, by the nodes' domains.
    pub(super) topology_verdicts: RefCell<TopologyVerdicts>,
    /// Per pod: the refusals of its last failure still to be put into words.
    pub(super) deferred: FxHashMap<usize, Vec<Deferred>>,
    /// Which existing nodes share their topology domains (kept by a tracking memo).
    pub(super) domain_classes: RefCell<DomainClasses>,
    /// (claim, pod, pool): a pod that joined a NodeClaim opened earlier in the round though a
    /// higher-weight pool's template takes it too (aws#6883), for the plan's note.
    pub(super) joined_open: Vec<(usize, usize, usize)>,
}

/// Places the input's pods. See the module documentation.
pub fn solve(input: &Input) -> Plan {
    solve_with(input, &mut SolveMemo::default())
}

/// [`solve`], keeping what it derives from the existing nodes in `memo` for the next solve of
/// the same cluster (the consolidation simulations).
pub fn solve_with(input: &Input, memo: &mut SolveMemo) -> Plan {
    let facts = memo.facts(input);
    let mut unschedulable = Vec::new();
    let mut states: Vec<PodState> = Vec::new();
    let mut pod_volumes: Vec<Option<PodVolumes>> = Vec::new();
    // Replicas of one template (consecutive, sharing their fields) share one verdict and one
    // initial state: the first replica's.
    let mut template: Option<(&Pod, Result<usize, Reason>)> = None;
    let provisioners = input
        .pools
        .iter()
        .any(|p| p.pool.generation == Some(ApiGeneration::V1Alpha5));
    for (i, pod) in input.pods.iter().enumerate() {
        let verdict = match template.as_ref() {
            Some((first, verdict)) if first.shares_fields_with(pod) => verdict.clone(),
            _ => {
                let verdict = match validation_error(pod, provisioners) {
                    Some(reason) => Err(reason),
                    None => Ok(states.len()),
                };
                template = Some((pod, verdict.clone()));
                verdict
            }
        };
        // Volumes are the pod's own (a StatefulSet's replicas have a claim each).
        let verdict = verdict.and_then(|first| match input.storage.as_deref() {
            Some(storage) if !pod.volumes.is_empty() && input.options.disruption_volumes => {
                Ok((first, volumes::for_disruption(pod, storage)))
            }
            Some(storage) if !pod.volumes.is_empty() => {
                volumes::resolve(pod, storage).map(|v| (first, (!v.is_empty()).then_some(v)))
            }
            _ => Ok((first, None)),
        });
        match verdict {
            Err(reason) => unschedulable.push(UnschedulablePod {
                pod: pod.key(),
                reason,
            }),
            Ok((first, v)) => {
                if first < states.len() {
                    states.push(states[first].for_replica(i));
                } else {
                    states.push(PodState::new(i, pod));
                }
                pod_volumes.push(v);
            }
        }
    }
    let pools = prepare_pools_with(input, memo.tracked().map(|t| &mut t.pools));
    // A tracking memo keeps the pod index, the key domains and the spread universes between
    // solves; otherwise they are derived for this solve alone.
    let mut fresh_index = PodIndex::default();
    let mut tracked = memo.tracked();
    let existing = prepare_existing(input, &facts, tracked.as_deref_mut());
    // The nodes the scheduler is not given (`deleting`: being deleted or simulated away), read
    // off the prepared ones rather than walking every node again.
    let mut active = vec![false; input.existing_nodes.len()];
    existing.iter().for_each(|e| active[e.position] = true);
    let removed: Vec<usize> = (0..active.len()).filter(|&i| !active[i]).collect();
    // Nodes that register no domain but their hostname: the removed ones and the NodeClaims
    // without a Node (`countDomains` l.378-382 skips `n.Node == nil`).
    let no_domain = {
        let mut v: Vec<usize> = (existing.iter())
            .map(|e| e.position)
            .filter(|&i| input.existing_nodes[i].node.in_flight)
            .collect();
        if v.is_empty() {
            removed.clone()
        } else {
            v.extend(&removed);
            v.sort_unstable();
            v
        }
    };
    let removed = Removed {
        all: &removed,
        no_domain: &no_domain,
    };
    let (domains, sources, universes, compat, domain_classes) = match tracked {
        Some(t) => {
            t.pods.update(&input.existing_nodes);
            let (d, s) = domain_universe(
                input,
                &pools,
                &facts,
                &t.pods,
                removed,
                Some(&mut t.domains),
            );
            let compat = std::mem::take(&mut t.compat);
            let classes = std::mem::take(&mut t.domain_classes);
            (d, s, std::mem::take(&mut t.universes), compat, classes)
        }
        None => {
            fresh_index.update(&input.existing_nodes);
            let (d, s) = domain_universe(input, &pools, &facts, &fresh_index, removed, None);
            let fresh = (FxHashMap::default(), CompatCache::default());
            (d, s, fresh.0, fresh.1, DomainClasses::default())
        }
    };
    let state_count = states.len();
    let index = match memo.tracked() {
        Some(t) => &t.pods,
        None => &fresh_index,
    };
    let mut topology = Topology::new(
        domains,
        sources,
        input.namespace_labels.clone(),
        &input.pods,
        &states,
        BoundPods::new(&input.existing_nodes, index, &input.moving),
        universes,
    );
    topology.every_admissible_domain = input.options.possibility;
    // Only the taints of the pools the scheduler is given (not static, not another
    // provisioner's, Ready; a pool without instance types still counts) make the
    // PreferNoSchedule toleration a relaxation step — an existing node's do not (core v1.14.1
    // `scheduler.go` `NewScheduler`: `toleratePreferNoSchedule` from the templates' taints;
    // `provisioner.go NewScheduler` filters the pools).
    let any_prefer_no_schedule = pools.iter().any(|p| {
        let given = !matches!(
            p.unusable,
            Some(
                PoolCause::Static
                    | PoolCause::AutoMode { .. }
                    | PoolCause::NotManaged { .. }
                    | PoolCause::NotReady(_)
            )
        );
        given && (p.input.pool.taints.iter()).any(|t| t.effect == Effect::PreferNoSchedule)
    });
    let mut solver = Solver {
        input,
        states,
        volumes: pod_volumes,
        pools,
        existing,
        claims: Vec::new(),
        claim_order: ClaimQueue::default(),
        topology,
        any_prefer_no_schedule,
        shapes: Shapes::default(),
        reservations: Reservations::default(),
        compat: RefCell::new(compat),
        compat_ids: RefCell::new(vec![None; state_count]),
        topology_verdicts: RefCell::default(),
        domain_classes: RefCell::new(domain_classes),
        deferred: FxHashMap::default(),
        joined_open: Vec::new(),
    };
    solver.reservations = Reservations::new(&solver.pools);
    let failures = solver.run();
    if let Some(t) = memo.tracked() {
        t.universes = std::mem::take(&mut solver.topology.universes);
        t.compat = solver.compat.take();
        t.domain_classes = solver.domain_classes.take();
    }
    solver.finish(failures, unschedulable)
}

/// Positions of the existing nodes that bring no domain: `all` the scheduler is not given
/// (ascending), and `no_domain`, those plus the NodeClaims without a Node (ascending), which
/// bring their hostname only.
#[derive(Clone, Copy)]
pub(super) struct Removed<'a> {
    pub all: &'a [usize],
    pub no_domain: &'a [usize],
}

/// The known values of every topology key: pool requirements narrowed by each instance type,
/// and the labels of existing nodes (Karpenter's "universe of domains", `buildDomainGroups`);
/// with where each came from when a topology spread filters nodes (`nodeTaintsPolicy: Honor`, or
/// `nodeAffinityPolicy: Honor` with a node selector or required node affinity).
pub(super) fn domain_universe(
    input: &Input,
    pools: &[Pool<'_>],
    facts: &[Arc<NodeFacts>],
    index: &PodIndex,
    removed: Removed<'_>,
    mut kept: Option<&mut FxHashMap<String, KeyDomains>>,
) -> (FxHashMap<String, BTreeSet<String>>, DomainSources) {
    let filtered = input.pods.iter().any(|p| {
        p.topology_spread.iter().any(|c| {
            c.honor_taints
                || (!c.ignore_node_affinity
                    && (!p.node_selector.is_empty() || !p.required_node_affinity.is_empty()))
        })
    });
    // Inverse anti-affinity groups read the pools' domains with their taints too.
    let anti_affinity = input.pods.iter().any(|p| !p.pod_anti_affinity.is_empty())
        || index
            .anti_affinity_pods(&input.existing_nodes)
            .next()
            .is_some();
    let mut sources = DomainSources::default();
    if filtered {
        sources.nodes = input
            .existing_nodes
            .iter()
            .zip(facts)
            .map(|(n, f)| (f.clone(), n.node.taints.clone()))
            .collect();
        // A filtering spread is never on hostnames (`universe_for`).
        sources.removed = removed.no_domain.to_vec();
    }
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for pod in &input.pods {
        keys.extend(pod.topology_spread.iter().map(|c| c.topology_key.clone()));
        let terms = pod
            .pod_affinity
            .iter()
            .chain(&pod.pod_anti_affinity)
            .chain(pod.preferred_pod_affinity.iter().map(|w| &w.term))
            .chain(pod.preferred_pod_anti_affinity.iter().map(|w| &w.term));
        keys.extend(terms.map(|t| t.topology_key.clone()));
    }
    // Every existing pod's required anti-affinity, on any node (deleting ones included).
    for pod in index.anti_affinity_pods(&input.existing_nodes) {
        keys.extend(pod.pod_anti_affinity.iter().map(|t| t.topology_key.clone()));
    }
    let mut domains: FxHashMap<String, BTreeSet<String>> = FxHashMap::default();
    for key in &keys {
        let mut fresh = KeyDomains::default();
        let known = match kept.as_deref_mut() {
            Some(kept) => kept.entry(key.clone()).or_insert_with(|| KeyDomains {
                pools: pool_domains(pools, key),
                ..KeyDomains::default()
            }),
            None => {
                fresh.pools = pool_domains(pools, key);
                &mut fresh
            }
        };
        // Nodes only join and their labels do not change (a tracking memo's promise): index
        // the nodes not seen yet. Every existing node registers `StateNode.HostName()`: its
        // hostname label, else its name (`existingnode.go` l.72).
        let seen = known.nodes.seen(input.existing_nodes.len());
        for n in &input.existing_nodes[seen..] {
            known.nodes.push(match n.node.labels.get(key) {
                None if key == HOSTNAME => Some(&n.node.name),
                label => label,
            });
        }
        let set = domains.entry(key.clone()).or_default();
        for (v, taints) in &known.pools {
            set.insert(v.clone());
            if filtered || anti_affinity {
                sources.insert_pool_domain(key, v, taints);
            }
        }
        // Only the nodes the scheduler is given register their domains (`countDomains` walks
        // `stateNodes`: `nodes.Active()` when provisioning, minus the candidates in a
        // consolidation simulation, `disruption/helpers.go SimulateScheduling`); a node being
        // removed still brings its domain when a pod counted there is recorded.
        let skip = if *key == HOSTNAME {
            removed.all
        } else {
            removed.no_domain
        };
        known.nodes.extend_present(skip, set);
    }
    (domains, sources)
}

/// The values of `key` Karpenter's universe of domains gives each pool (`core:
/// pkg/controllers/provisioning/scheduling/topology.go` `buildDomainGroups`), with the pool's
/// taints, in the order found:
///
/// 1. for every instance type of the pool's node class — all of them, not only those the pool
///    admits — the pool's requirement on `key` narrowed by the type's: a pool of `c7g` types
///    offered in five zones still brings the sixth zone where another type of its class is
///    offered;
/// 2. the pool's own `In` values on `key` (its requirements and template labels), offered or
///    not: a pool with `zone In [us-east-1z]` adds `us-east-1z`.
///
/// Static pools and EKS Auto Mode pools are not Karpenter's to schedule and add nothing, nor
/// do a pool that is not Ready or whose class has no instance types (`provisioner.go`
/// `NewScheduler` skips them).
/// A domain no pool can reach still counts in a spread's minimum, so a `DoNotSchedule` zone
/// spread stops at one pod per reachable zone (threads kubernetes-sigs/karpenter#3272,
/// aws/karpenter-provider-aws#8637).
fn pool_domains(pools: &[Pool<'_>], key: &str) -> Vec<(String, Vec<Taint>)> {
    let mut out: Vec<(String, Vec<Taint>)> = Vec::new();
    let scheduled = |p: &&Pool<'_>| {
        !matches!(
            p.unusable,
            Some(
                PoolCause::Static
                    | PoolCause::AutoMode { .. }
                    | PoolCause::NotManaged { .. }
                    | PoolCause::NotReady(_)
            )
        ) && !p.input.instance_types.is_empty()
    };
    for pool in pools.iter().filter(scheduled) {
        let taints = &pool.input.pool.taints;
        let mut push = |v: &String| {
            if !out.iter().any(|(d, t)| d == v && t == taints) {
                out.push((v.clone(), taints.clone()));
            }
        };
        let pool_req = pool.reqs.get_ref(key);
        for it in &pool.input.instance_types {
            let narrowed = match (pool_req, it.requirements.get_ref(key)) {
                (Some(a), Some(b)) => a.intersection(b),
                (Some(a), None) => a.clone(),
                (None, Some(b)) => b.clone(),
                (None, None) => continue,
            };
            if narrowed.operator() == Operator::In {
                narrowed.values().iter().for_each(&mut push);
            }
        }
        if let Some(r) = pool_req.filter(|r| r.operator() == Operator::In) {
            r.values().iter().for_each(&mut push);
        }
    }
    out
}

impl<'a> Solver<'a> {
    /// Strict reserved capacity (the provisioner's), unless the options ask for fallback.
    pub(super) fn strict(&self) -> bool {
        !self.input.options.reserved_fallback
    }

    pub(super) fn pod(&self, state: usize) -> &'a Pod {
        &self.input.pods[self.states[state].index]
    }

    /// The volume alternatives of pod `s` (none when its volumes do not constrain topology).
    pub(super) fn volume_alternatives(&self, s: usize) -> &[Requirements] {
        self.volumes[s]
            .as_ref()
            .map_or(&[][..], |v| v.alternatives.as_slice())
    }

    /// The reason's text when pod `s`'s volumes cannot share a node
    /// ([`volumes::PodVolumes::apart`]), else `None`.
    fn volumes_apart(&self, s: usize) -> Option<PoolCause> {
        let v = self.volumes[s].as_ref().filter(|v| !v.apart.is_empty())?;
        Some(PoolCause::VolumeTopology(volumes::describe_apart(
            &v.apart,
            &v.alternatives,
        )))
    }

    /// Karpenter's `Solve` loop: pods are taken from the queue until a whole cycle makes no
    /// progress. Each pod is relaxed all the way at once (`trySchedule`: one preference dropped
    /// after each failed attempt, retried at once); a pod that still fails goes to the back with
    /// its preferences restored, to be tried whole again next cycle (core v1.14.1
    /// `scheduler.go` `Solve`: "We relax the pod all the way the first time we see it"). Returns
    /// the last failure of each pod left.
    pub(super) fn run(&mut self) -> BTreeMap<usize, Reason> {
        let mut queue = Queue::new(self.states.len(), |s| self.pod(s));
        let mut failures: BTreeMap<usize, Reason> = BTreeMap::new();
        while let Some(s) = queue.pop() {
            match self.try_schedule(s) {
                Ok(()) => {
                    failures.remove(&s);
                }
                Err(reason) => {
                    failures.insert(s, reason);
                    queue.push(s);
                }
            }
        }
        let mut left: BTreeMap<usize, Reason> = queue
            .into_remaining()
            .filter_map(|s| failures.remove(&s).map(|r| (s, r)))
            .collect();
        // The refusals left unexplained at each pod's last failure, put into words now that
        // the pod is known to stay unschedulable (see [`Deferred`]).
        for (s, reason) in &mut left {
            let (Some(list), Reason::NoPlacement { refusals, .. }) = (self.deferred.get(s), reason)
            else {
                continue;
            };
            for d in list {
                refusals[d.at].cause =
                    self.explain_no_instance_type(d.pool, *s, &d.claim, &d.requirements);
            }
        }
        left
    }

    /// `trySchedule`: places pod `s`, dropping one preference after each failure until it fits
    /// or nothing is left to relax. A pod waiting for reserved capacity keeps its preferences:
    /// it may fit once a reservation is released, or in the next simulation ("shouldn't relax
    /// preferences when a pod fails to schedule due to a reserved offering error"). A pod that
    /// still fails gets its preferences back: the queued pod is the one `Solve` deep-copied
    /// for `trySchedule`, tried whole again next cycle.
    fn try_schedule(&mut self, s: usize) -> Result<(), Reason> {
        let mut original: Option<PodState> = None;
        let reason = loop {
            let reason = match self.add(s) {
                Ok(()) => return Ok(()),
                Err(reason) => reason,
            };
            if reason.is_reserved_deferral() {
                break reason;
            }
            let before = original.is_none().then(|| self.states[s].clone());
            let pod = self.pod(s);
            if self.states[s]
                .relax(pod, self.any_prefer_no_schedule)
                .is_none()
            {
                break reason;
            }
            original = original.or(before);
            let state = self.states[s].clone();
            self.topology.update(pod, &state);
        };
        if let Some(original) = original {
            self.states[s] = original;
            let state = self.states[s].clone();
            self.topology.update(self.pod(s), &state);
        }
        Err(reason)
    }

    /// Tries existing nodes, then in-flight NodeClaims (fewest pods first), then a new NodeClaim
    /// from each pool in order. Unless the options ask for exhaustive search, what is known to
    /// refuse the pod is skipped (see `shapes.rs` and the comments below): the outcome is the same.
    pub(super) fn add(&mut self, s: usize) -> Result<(), Reason> {
        self.deferred.remove(&s);
        let pod = self.pod(s);
        let exhaustive = self.input.options.exhaustive;
        // Pods with volumes are not shapes: their claims (zones, attach counts) differ per pod.
        // Nor are pods when reservations exist: a claim that refused a shape may take it once
        // another claim releases a reservation.
        let shape = (!exhaustive
            && self.reservations.is_empty()
            && self.volumes[s].is_none()
            && self.topology.is_trivial_for(&self.states[s]))
        .then(|| self.shapes.id(pod, &self.states[s]));
        let known = shape.map(|id| self.shapes.get(id));
        if let Some((claims, reason)) = known.and_then(|k| k.nowhere.as_ref()) {
            if *claims == self.claims.len() {
                return Err(reason.clone());
            }
        }
        let first_existing = known.map_or(0, |k| k.existing_refused);
        let first_claim = known.map_or(0, |k| k.claims_refused);
        let placed = self.first_fit_existing(first_existing, s);
        if let Some(id) = shape {
            self.shapes.get_mut(id).existing_refused = placed.unwrap_or(self.existing.len());
        }
        if placed.is_some() {
            return Ok(());
        }
        self.claim_order.sort();
        // Least-loaded claims first. Claims pinned to a zone the pod cannot use are skipped
        // without trying them, and a pod whose hostname anti-affinity or spread has no hostname
        // left skips them all: in both cases trying would fail the same way, only later.
        let found = if !exhaustive && self.topology.no_free_hostname(&self.states[s], pod) {
            None
        } else {
            let zones = if exhaustive {
                None
            } else {
                self.topology.zone_restriction(&self.states[s])
            };
            self.claim_order
                .candidates(zones.as_ref())
                .filter(|&(_, c)| c >= first_claim)
                .find_map(|key| {
                    let claim = &self.claims[key.1];
                    let pool = &self.pools[claim.pool];
                    try_claim(
                        &self.topology,
                        pool,
                        claim,
                        pod,
                        &self.states[s],
                        self.volumes[s].as_ref(),
                        false,
                    )
                    .and_then(|u| self.reservations.complete(pool, claim, u, self.strict()))
                    .ok()
                    .map(|update| (key, update))
                })
        };
        if let Some((key, update)) = found {
            let c = key.1;
            self.note_joined_open(c, s);
            self.commit(c, s, update);
            let pin = zone_pin(&self.claims[c].reqs);
            self.claim_order.bump(key, pin);
            return Ok(());
        }
        if let Some(id) = shape {
            self.shapes.get_mut(id).claims_refused = self.claims.len();
        }
        let mut refused = Vec::new();
        for p in 0..self.pools.len() {
            match self.new_claim(p, s) {
                Ok(()) => return Ok(()),
                Err(r) => {
                    // A pod compatible with a pool's reserved capacity does not fall back to a
                    // lower-weight pool (`addToNewNodeClaim`).
                    let reserved = r.is_reserved();
                    refused.push(r);
                    if reserved {
                        break;
                    }
                }
            }
        }
        // Explained only now that no pool took the pod: nothing changed since each refusal
        // (a refused claim leaves no trace), and most refusals are followed by another pool's
        // yes — a pod selecting one pool is refused by every other first.
        // `Options::unexplained`: the caller reads no reason, so only what is already in words.
        // A refusal for lack of an instance type is put into words only if the pod stays
        // unschedulable ([`Deferred`]), unless identical pods share this reason (`shape`);
        // `Options::exhaustive` explains at once, and the tests compare the reasons.
        let unexplained = self.input.options.unexplained;
        let defer = shape.is_none() && !unexplained && !exhaustive;
        let mut deferred = Vec::new();
        let refusals = refused
            .into_iter()
            .enumerate()
            .filter_map(|(at, r)| match r {
                Refused::Explained(r) => Some(r),
                Refused::Unexplained { .. } if unexplained => None,
                Refused::Unexplained {
                    pool,
                    fail: Fail::NoInstanceType,
                    claim,
                } if defer => {
                    deferred.push(Deferred {
                        at,
                        pool,
                        claim,
                        requirements: self.states[s].requirements.clone(),
                    });
                    // Replaced by the words at the end of the solve.
                    Some(self.pools[pool].refusal(PoolCause::NoOffering))
                }
                Refused::Unexplained { pool, fail, claim } => {
                    Some(self.pools[pool].refusal(self.explain(pool, s, &claim, fail)))
                }
            })
            .collect();
        if !deferred.is_empty() {
            self.deferred.insert(s, deferred);
        }
        let reason = Reason::NoPlacement {
            existing_nodes: self.existing.len(),
            refusals,
        };
        if let Some(id) = shape {
            self.shapes.get_mut(id).nowhere = Some((self.claims.len(), reason.clone()));
        }
        Err(reason)
    }

    /// core v1.14.1 `scheduling/scheduler.go` `add`: a pod tries the NodeClaims already opened
    /// this round before any new one by pool weight, so it may join a lower-weight pool's
    /// NodeClaim that a higher-weight pool's template would also take (aws#6883: read as
    /// "weights ignored"). Recorded to say so; a template check only (taints, requirements), no
    /// solve, and only for pods joining a NodeClaim of a pool below a heavier one.
    fn note_joined_open(&mut self, c: usize, s: usize) {
        let own = self.claims[c].pool;
        let weight = self.pools[own].input.pool.weight;
        let state = &self.states[s];
        let heavier = self.pools[..own].iter().position(|p| {
            p.input.pool.weight > weight
                && p.unusable.is_none()
                && first_untolerated(&p.input.pool.taints, &state.tolerations).is_none()
                && p.reqs
                    .is_compatible(&state.requirements, labels::is_well_known)
        });
        if let Some(q) = heavier {
            self.joined_open.push((c, s, q));
        }
    }

    pub(super) fn commit(&mut self, c: usize, s: usize, update: ClaimUpdate) {
        let pod = self.pod(s);
        let claim = &mut self.claims[c];
        if let Some(r) = update.reqs {
            claim.reqs = r;
        }
        claim.types = update.types;
        // Collected by filtering, the list may have twice the room it needs; thousands of
        // NodeClaims keep theirs to the end (`spread 10000`: 80 MB, BENCHMARKS.md).
        claim.types.shrink_to_fit();
        claim.requests = update.requests;
        claim.min_values_relaxed |= update.min_values_relaxed;
        claim.pods.push(s);
        claim.host_ports.extend(pod.host_ports.iter().cloned());
        if let Some(next) = update.reserved {
            self.reservations.hold(&mut claim.reserved, next);
        }
        let reqs = claim.reqs.clone();
        let taints = &self.pools[claim.pool].input.pool.taints;
        self.topology.record(&self.states[s], pod, &reqs, taints);
    }

    /// Opens a new NodeClaim from pool `p` for pod `s`, or says why it cannot (the sentence is
    /// made by [`Solver::explain`] when the caller needs it).
    pub(super) fn new_claim(&mut self, p: usize, s: usize) -> Result<(), Refused> {
        let pool = &self.pools[p];
        let name = &pool.input.pool.name;
        if let Some(why) = &pool.unusable {
            return Err(Refused::Explained(pool.refusal(why.clone())));
        }
        let mut types: Vec<u32> = (0..pool.types.len() as u32).collect();
        if let Some(remaining) = &pool.remaining {
            types.retain(|&t| {
                remaining
                    .iter()
                    .all(|(k, left)| capacity_of(pool.types[t as usize], k) <= *left)
            });
            if types.is_empty() {
                return Err(Refused::Explained(pool.refusal(limit_reason(pool))));
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
            host_ports: Vec::new(),
            reserved: Vec::new(),
            min_values_relaxed: false,
        };
        self.topology.register(HOSTNAME, &hostname);
        let pod = self.pod(s);
        let attempt = try_claim(
            &self.topology,
            &self.pools[p],
            &claim,
            pod,
            &self.states[s],
            self.volumes[s].as_ref(),
            self.input.options.min_values_policy.relaxes(),
        )
        .and_then(|u| {
            self.reservations
                .complete(&self.pools[p], &claim, u, self.strict())
        });
        match attempt {
            Ok(update) => {
                let c = self.claims.len();
                self.claims.push(claim);
                self.commit(c, s, update);
                let pin = zone_pin(&self.claims[c].reqs);
                self.claim_order.insert_new(c, pin);
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
                Err(Refused::Unexplained {
                    pool: p,
                    fail,
                    claim: Box::new(claim),
                })
            }
        }
    }

    /// Turns a failure to open a NodeClaim into a sentence.
    pub(super) fn explain(&self, p: usize, s: usize, claim: &Claim, fail: Fail) -> PoolCause {
        let state = &self.states[s];
        match fail {
            Fail::Taint(t) => PoolCause::TaintNotTolerated(t),
            Fail::HostPort(port) => PoolCause::HostPortConflict(port),
            Fail::Topology(f) => match self.topology.describe_no_domains(&f) {
                Some(group) => PoolCause::TopologyNoDomains(group),
                None => {
                    let mut text = self.topology.describe(&f);
                    let daemons = self
                        .topology
                        .daemonsets_selected(&f, &self.input.daemonsets);
                    if !daemons.is_empty() {
                        text.push_str(&format!(
                            ": the pods it selects are DaemonSet {}'s, which Karpenter counts only on existing nodes (a new node runs them once it has joined)",
                            daemons.join(", ")
                        ));
                    }
                    PoolCause::Topology(text)
                }
            },
            Fail::MinValues(key) => PoolCause::MinValues(key),
            Fail::Reserved(ReservedFail::AllHeld(ids)) => PoolCause::ReservedCapacityHeld(ids),
            Fail::Reserved(ReservedFail::WouldLoseReservations(ids)) => {
                PoolCause::ReservedCapacityLost(ids)
            }
            Fail::Volume | Fail::VolumeLimit => {
                if let Some(apart) = self.volumes_apart(s) {
                    return apart;
                }
                let alternatives = self.volume_alternatives(s);
                let mut base = claim.reqs.clone();
                base.add_all(&state.requirements);
                let conflict = alternatives
                    .iter()
                    .find_map(|alt| base.compatible(alt, labels::is_well_known).err())
                    .map_or_else(String::new, |inc| match base.get_ref(&inc.key) {
                        // A non-local volume's hostname pins the pod to that node: a new node
                        // gets a hostname of its own (core v1.14.1 `volumetopology.go`
                        // `getPersistentVolumeRequirements` drops it for Local/HostPath only).
                        Some(_) if inc.key == labels::HOSTNAME => {
                            "; a new node has a hostname of its own, so only that node can take \
                             the pod"
                                .to_string()
                        }
                        Some(allowed) => format!("; the pod and the NodePool allow {allowed}"),
                        None => format!("; the NodePool's nodes have no {} label", inc.key),
                    });
                PoolCause::VolumeTopology(format!(
                    "the pod's volumes need {}{conflict}",
                    volumes::describe(alternatives)
                ))
            }
            Fail::Requirements => match claim
                .reqs
                .compatible(&state.requirements, labels::is_well_known)
            {
                Err(inc) => PoolCause::IncompatibleRequirements(inc.to_string()),
                Ok(()) => PoolCause::TopologyDomainUnavailable,
            },
            Fail::NoInstanceType => self.explain_no_instance_type(p, s, claim, &state.requirements),
        }
    }

    /// [`Solver::explain`] of a refusal for lack of an instance type, with the pod's
    /// requirements as they were at the refusal.
    fn explain_no_instance_type(
        &self,
        p: usize,
        s: usize,
        claim: &Claim,
        requirements: &Requirements,
    ) -> PoolCause {
        let pool = &self.pools[p];
        let pod = self.pod(s);
        let mut reqs = claim.reqs.clone();
        reqs.add_all(requirements);
        let compatible_with = |reqs: &Requirements| -> Vec<u32> {
            claim
                .types
                .iter()
                .copied()
                .filter(|&t| {
                    let it = pool.types[t as usize];
                    it.requirements.intersects_ok(reqs) && has_offering(it, reqs)
                })
                .collect()
        };
        let compatible = compatible_with(&reqs);
        if compatible.is_empty() {
            return PoolCause::NoInstanceTypeMatches {
                requirements: requirements.clone(),
            };
        }
        // A spread's or an affinity's domain (a zone no type of the pool is offered in, which
        // Karpenter's universe of domains still holds) is a requirement too: name it, as
        // Karpenter's "no instance type met the scheduling requirements" lists it (core v1.14.1
        // `nodeclaim.go` `filterInstanceTypesByRequirements`, `InstanceTypeFilterError`).
        let extra =
            node_claim::topology_requirements(&self.topology, pool, claim, pod, &self.states[s]);
        if !extra.is_empty() {
            let mut with = reqs.clone();
            let mut named = requirements.clone();
            for r in extra {
                with.add(r.clone());
                named.add(r);
            }
            if compatible_with(&with).is_empty() {
                return PoolCause::NoInstanceTypeMatches {
                    requirements: named,
                };
            }
        }
        let alternatives = self.volume_alternatives(s);
        let where_volumes_are = alternatives.iter().any(|alt| {
            let mut with = reqs.clone();
            with.add_all(alt);
            compatible.iter().any(|&t| {
                let it = pool.types[t as usize];
                it.requirements.intersects_ok(&with) && has_offering(it, &with)
            })
        });
        if !alternatives.is_empty() && !where_volumes_are {
            if let Some(apart) = self.volumes_apart(s) {
                return apart;
            }
            return PoolCause::VolumeTopology(format!(
                "no instance type of the NodePool is offered where the pod's volumes are ({})",
                volumes::describe(alternatives)
            ));
        }
        let largest_of = |types: &[u32]| {
            let mut largest = Resources::new();
            for &t in types {
                largest = largest.max(&pool.effective_allocatable[t as usize]);
            }
            largest
        };
        let mut considered = compatible;
        let mut largest = largest_of(&considered);
        // The remaining limits are named only when they are why: a type they left out would
        // have held what the pod asks. Otherwise the largest of all the pool's types is said,
        // as Karpenter's "no instance type which had enough resources" does not name limits
        // (core v1.14.1 `scheduler.go` `addToNewNodeClaim`: "all available instance types
        // exceed limits" only when the limits leave none).
        let mut within_limits = false;
        if pool.remaining.is_some() && claim.types.len() < pool.types.len() {
            let unlimited: Vec<u32> = (0..pool.types.len() as u32)
                .filter(|&t| {
                    let it = pool.types[t as usize];
                    it.requirements.intersects_ok(&reqs) && has_offering(it, &reqs)
                })
                .collect();
            let all = largest_of(&unlimited);
            if pod.requests.exceeded(&all).len() < pod.requests.exceeded(&largest).len() {
                within_limits = true;
            } else {
                (considered, largest) = (unlimited, all);
            }
        }
        let shortfalls: Vec<Shortfall> = pod
            .requests
            .exceeded(&largest)
            .into_iter()
            .map(|r| Shortfall {
                requested: pod.requests.get(&r),
                largest: largest.get(&r),
                daemon_overhead: considered
                    .iter()
                    .map(|&t| pool.daemon_overhead[t as usize].get(&r))
                    .max()
                    .unwrap_or(0),
                largest_on: largest_type(pool, &considered, &r),
                resource: r,
            })
            .collect();
        if shortfalls.is_empty() {
            PoolCause::NoSingleInstanceTypeFits {
                requests: pod.requests.clone(),
            }
        } else {
            PoolCause::RequestsExceedInstanceTypes {
                within_limits,
                shortfalls,
            }
        }
    }
}

/// The compatible type with the largest allocatable of `resource` (the first such, in the
/// pool's order), and how its capacity shrinks to it, when it reserves some of the resource
/// or advertises more memory than its capacity: what a shortfall names (aws#3872, core#1212).
fn largest_type(pool: &Pool<'_>, compatible: &[u32], resource: &str) -> Option<LargestType> {
    let &t = compatible
        .iter()
        .rev()
        .max_by_key(|&&t| pool.effective_allocatable[t as usize].get(resource))?;
    let it = pool.types[t as usize];
    let advertised = (resource == "memory")
        .then(|| it.requirements.get_ref(labels::INSTANCE_MEMORY))
        .flatten()
        .and_then(|r| r.values().iter().next().and_then(|v| v.parse::<i64>().ok()))
        .map(|mib| mib.saturating_mul(1024 * 1024 * 1000));
    let on = LargestType {
        name: it.name.clone(),
        capacity: it.capacity.get(resource),
        advertised,
        kube_reserved: it.overhead.kube_reserved.get(resource),
        system_reserved: it.overhead.system_reserved.get(resource),
        eviction: it.overhead.eviction_threshold.get(resource),
    };
    let reduced = on.kube_reserved + on.system_reserved + on.eviction > 0
        || advertised.is_some_and(|a| a > on.capacity);
    reduced.then_some(on)
}
