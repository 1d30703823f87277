//! NodePools prepared for packing: their requirements, the instance types they can launch, the
//! DaemonSet overhead per type, their offerings interned per (zone, capacity type), and what is
//! left of their limits.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go`
//! (`NewNodeClaimTemplate`) and, from `scheduler.go`, `buildDaemonOverheadGroups`,
//! `filterByRemainingResources` and `subtractMax`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::instance_type::{zone_id_admits, InstanceType, Offering};
use crate::model::labels;
use crate::model::pod::{HostPort, Pod};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::reservation::ReservationType;
use crate::model::resources::Resources;
use crate::model::taints::{first_untolerated, Effect};

use super::finalize::is_exotic;
use super::reason::{ExhaustedLimit, PoolCause, PoolRefusal};
use super::{Input, PoolInput};

/// A NodePool prepared for packing.
pub(super) struct Pool<'a> {
    pub(super) input: &'a PoolInput,
    pub(super) reqs: Requirements,
    /// Instance types compatible with the pool and with an available compatible offering.
    pub(super) types: Vec<&'a InstanceType>,
    /// Per type: its name, shared by every planned NodeClaim that lists it.
    pub(super) names: Arc<[Arc<str>]>,
    /// Per type: its place among `types` ordered by name, so that ties are broken by name
    /// without comparing strings.
    pub(super) name_rank: Arc<[u32]>,
    /// Per type: metal or accelerated (`finalize::is_exotic`).
    pub(super) exotic: Arc<[bool]>,
    /// Per type: whether an AMI of the node class runs on it (all true when the AMIs are not
    /// known; `PoolInput::images`).
    pub(super) has_image: Arc<[bool]>,
    /// Allocatable minus the DaemonSet overhead expected on each type.
    pub(super) effective_allocatable: Arc<[Resources]>,
    pub(super) daemon_overhead: Arc<[Resources]>,
    /// Per type: host ports the pool's DaemonSets that run on it bind (Karpenter's
    /// `DaemonOverheadGroup.HostPortUsage`: a pod's port only rules out the types whose
    /// DaemonSets bind it, `provisioning/suite_test.go` "should not account for daemonset
    /// hostports when daemonset would not schedule on selected node").
    pub(super) daemon_host_ports: Arc<[Vec<HostPort>]>,
    /// Limits left, per limited resource; `None` when the pool has no limits.
    pub(super) remaining: Option<BTreeMap<String, i64>>,
    pub(super) min_values: Vec<(String, u32)>,
    pub(super) claims_created: usize,
    /// Distinct (zone, capacity type) pairs of the pool's offerings: a NodeClaim's zone and
    /// capacity-type requirements are evaluated once per pair, not once per offering. Reserved
    /// offerings get a slot per reservation.
    pub(super) slots: Arc<[(String, String)]>,
    /// Per slot: the capacity reservation of a reserved slot.
    pub(super) slot_reservations: Arc<[Option<String>]>,
    /// Per slot: a reserved slot's reservation type and interruptibility (its offerings'
    /// `karpenter.k8s.aws/capacity-reservation-type` / `-interruptible`).
    pub(super) slot_kinds: Arc<[Option<(ReservationType, bool)>]>,
    /// Per slot: its offerings' zone id (`topology.k8s.aws/zone-id`), when known.
    pub(super) slot_zone_ids: Arc<[Option<String>]>,
    /// Per type: available offerings as (slot, index into `offerings`), cheapest first.
    pub(super) offers: Arc<[Vec<(usize, usize)>]>,
    /// Why the pool can take nothing at all, if so.
    pub(super) unusable: Option<PoolCause>,
    /// Per requirement a NodeClaim was narrowed to: which types it leaves (see
    /// `types_compatible_with`). Shared with the prepared pool a tracking memo keeps, so the
    /// verdicts outlive one solve (a consolidation evaluation asks the same ones thousands of
    /// times; the pool's types do not change between its solves).
    compatible: Compatible,
}

/// Per requirement: which of a pool's types it leaves.
type Compatible = Rc<RefCell<FxHashMap<Requirement, Rc<[bool]>>>>;

impl Pool<'_> {
    /// Per type: whether its own requirement on `r`'s key (if it has one) intersects `r`.
    /// Remembered, because NodeClaims are narrowed to the same few requirements (a zone, a
    /// capacity type) over and over, and each narrowing re-checks hundreds of types.
    pub(super) fn types_compatible_with(&self, r: &Requirement) -> Rc<[bool]> {
        if let Some(known) = self.compatible.borrow().get(r) {
            return known.clone();
        }
        let verdicts: Rc<[bool]> = self
            .types
            .iter()
            .map(|it| {
                it.requirements
                    .get_ref(&r.key)
                    .is_none_or(|ir| ir.intersects(r))
            })
            .collect();
        self.compatible
            .borrow_mut()
            .insert(r.clone(), verdicts.clone());
        verdicts
    }

    /// This pool refusing a pod for `cause`.
    pub(super) fn refusal(&self, cause: PoolCause) -> PoolRefusal {
        PoolRefusal {
            kind: self.input.pool.kind(),
            pool: self.input.pool.name.clone(),
            cause,
        }
    }
}

pub(super) fn prepare_pools(input: &Input) -> Vec<Pool<'_>> {
    prepare_pools_with(input, None)
}

/// What preparing a pool derives from the input's pools, instance types and DaemonSets alone —
/// everything but the limits left. A tracking memo keeps it between the solves of one cluster
/// (whose pools change only in usage): deriving it walks every type's offerings, and a
/// consolidation evaluation solves thousands of times.
#[derive(Debug, Clone)]
pub(crate) struct PreparedPool {
    /// The pool's position in `input.pools`.
    position: usize,
    reqs: Requirements,
    /// Positions in the pool's `instance_types`.
    types: Vec<u32>,
    names: Arc<[Arc<str>]>,
    name_rank: Arc<[u32]>,
    exotic: Arc<[bool]>,
    has_image: Arc<[bool]>,
    effective_allocatable: Arc<[Resources]>,
    daemon_overhead: Arc<[Resources]>,
    daemon_host_ports: Arc<[Vec<HostPort>]>,
    min_values: Vec<(String, u32)>,
    slots: Arc<[(String, String)]>,
    slot_reservations: Arc<[Option<String>]>,
    slot_kinds: Arc<[Option<(ReservationType, bool)>]>,
    slot_zone_ids: Arc<[Option<String>]>,
    offers: Arc<[Vec<(usize, usize)>]>,
    unusable: Option<PoolCause>,
    compatible: Compatible,
}

/// The pools in packing order; `kept`: a tracking memo's prepared pools (filled on first use).
pub(super) fn prepare_pools_with<'a>(
    input: &'a Input,
    kept: Option<&mut Vec<PreparedPool>>,
) -> Vec<Pool<'a>> {
    let fresh;
    let prepared: &[PreparedPool] = match kept {
        Some(kept) => {
            if kept.is_empty() {
                *kept = prepare(input);
            }
            kept
        }
        None => {
            fresh = prepare(input);
            &fresh
        }
    };
    prepared
        .iter()
        .map(|p| {
            let pi = &input.pools[p.position];
            let remaining = (!pi.pool.limits.is_empty()).then(|| {
                pi.pool
                    .limits
                    .iter()
                    .map(|(k, v)| (k.clone(), v - usage_of(&pi.usage, k)))
                    .collect()
            });
            Pool {
                input: pi,
                reqs: p.reqs.clone(),
                types: p
                    .types
                    .iter()
                    .map(|&t| &pi.instance_types[t as usize])
                    .collect(),
                names: p.names.clone(),
                name_rank: p.name_rank.clone(),
                exotic: p.exotic.clone(),
                has_image: p.has_image.clone(),
                effective_allocatable: p.effective_allocatable.clone(),
                daemon_overhead: p.daemon_overhead.clone(),
                daemon_host_ports: p.daemon_host_ports.clone(),
                remaining,
                min_values: p.min_values.clone(),
                claims_created: 0,
                slots: p.slots.clone(),
                slot_reservations: p.slot_reservations.clone(),
                slot_kinds: p.slot_kinds.clone(),
                slot_zone_ids: p.slot_zone_ids.clone(),
                offers: p.offers.clone(),
                unusable: p.unusable.clone(),
                compatible: p.compatible.clone(),
            }
        })
        .collect()
}

fn prepare(input: &Input) -> Vec<PreparedPool> {
    let mut order: Vec<usize> = (0..input.pools.len()).collect();
    // Weight descending, then name descending (Karpenter's OrderByWeight).
    order.sort_by(|&a, &b| {
        let (a, b) = (&input.pools[a].pool, &input.pools[b].pool);
        b.weight.cmp(&a.weight).then_with(|| b.name.cmp(&a.name))
    });
    order
        .into_iter()
        .map(|position| {
            let pi = &input.pools[position];
            let reqs = pi.pool.scheduling_requirements();
            let positions: Vec<u32> = pi
                .instance_types
                .iter()
                .enumerate()
                .filter(|(_, it)| it.requirements.intersects_ok(&reqs) && has_offering(it, &reqs))
                .map(|(t, _)| t as u32)
                .collect();
            let types: Vec<&InstanceType> = positions
                .iter()
                .map(|&t| &pi.instance_types[t as usize])
                .collect();
            let daemons = pool_daemons(input, pi, &reqs);
            let daemon_host_ports: Vec<Vec<HostPort>> = types
                .iter()
                .map(|it| daemon_host_ports(&daemons, it))
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
            let min_values = reqs
                .iter()
                .filter_map(|r| r.min_values.map(|m| (r.key.clone(), m)))
                .collect();
            let auto_mode = pi
                .pool
                .node_class_ref
                .as_ref()
                .filter(|r| r.is_eks_auto_mode());
            let unusable = if pi.pool.replicas.is_some() {
                Some(PoolCause::Static)
            } else if let Some(r) = auto_mode {
                Some(PoolCause::AutoMode {
                    class: r.name.clone(),
                })
            } else if let Some(r) =
                (pi.pool.node_class_ref.as_ref()).filter(|r| r.is_another_providers())
            {
                Some(PoolCause::NotManaged {
                    group: r.group.clone(),
                    kind: r.kind.clone(),
                    class: r.name.clone(),
                })
            } else if let Some(why) = &pi.not_ready {
                Some(PoolCause::NotReady(why.clone()))
            } else if types.is_empty() {
                Some(PoolCause::NoInstanceTypes {
                    requirements: reqs.clone(),
                    offered_zones: zones_ruled_out(&pi.instance_types, &reqs),
                })
            } else {
                None
            };
            let OfferingSlots {
                slots,
                offers,
                reservations: slot_reservations,
                kinds: slot_kinds,
                zone_ids: slot_zone_ids,
            } = offering_slots(&types);
            let names: Vec<Arc<str>> = types.iter().map(|it| Arc::from(it.name.as_str())).collect();
            let mut by_name: Vec<u32> = (0..types.len() as u32).collect();
            by_name.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
            // Equal names share a rank, so that ties stay ties.
            let mut name_rank = vec![0; types.len()];
            for (n, &t) in by_name.iter().enumerate() {
                let same_as_previous = n > 0 && names[by_name[n - 1] as usize] == names[t as usize];
                name_rank[t as usize] = if same_as_previous {
                    name_rank[by_name[n - 1] as usize]
                } else {
                    n as u32
                };
            }
            let exotic = types.iter().map(|it| is_exotic(it)).collect();
            let images = &pi.images;
            let has_image = types
                .iter()
                .map(|it| images.is_empty() || images.iter().any(|i| i.runs_on(it)))
                .collect();
            PreparedPool {
                position,
                reqs,
                types: positions,
                names: names.into(),
                name_rank: name_rank.into(),
                exotic,
                has_image,
                effective_allocatable,
                daemon_overhead: daemon_overhead.into(),
                daemon_host_ports: daemon_host_ports.into(),
                min_values,
                slots: slots.into(),
                slot_reservations: slot_reservations.into(),
                slot_kinds: slot_kinds.into(),
                slot_zone_ids: slot_zone_ids.into(),
                offers: offers.into(),
                unusable,
                compatible: Compatible::default(),
            }
        })
        .collect()
}

/// Current usage of a limited resource; `nodes` counts nodes (v1 `limits.nodes`).
pub(super) fn usage_of(usage: &Resources, key: &str) -> i64 {
    usage.get(key)
}

/// What one node of this type consumes of a limited resource.
pub(super) fn capacity_of(it: &InstanceType, key: &str) -> i64 {
    if key == "nodes" {
        1000
    } else {
        it.capacity.get(key)
    }
}

/// A pool's offerings interned into slots ([`offering_slots`]).
pub(super) struct OfferingSlots {
    /// (zone, capacity type) per slot.
    pub(super) slots: Vec<(String, String)>,
    /// Per type: available offerings as (slot, index into `offerings`), cheapest first.
    pub(super) offers: Vec<Vec<(usize, usize)>>,
    /// Per slot: the capacity reservation of a reserved slot.
    pub(super) reservations: Vec<Option<String>>,
    /// Per slot: a reserved slot's reservation type and interruptibility.
    pub(super) kinds: Vec<Option<(ReservationType, bool)>>,
    /// Per slot: the zone id, when known.
    pub(super) zone_ids: Vec<Option<String>>,
}

/// Interns each type's available offerings into (zone, capacity type) slots — one per
/// reservation for reserved offerings — cheapest first; with each slot's reservation and zone
/// id.
pub(super) fn offering_slots(types: &[&InstanceType]) -> OfferingSlots {
    let mut slots: Vec<(String, String)> = Vec::new();
    let mut reservations: Vec<Option<String>> = Vec::new();
    let mut kinds: Vec<Option<(ReservationType, bool)>> = Vec::new();
    let mut zone_ids: Vec<Option<String>> = Vec::new();
    // Keyed by the offerings' own strings: a slot's key is copied once, not once per offering.
    type Key<'k> = (&'k str, &'k str, Option<&'k str>, Option<&'k str>);
    let mut index: FxHashMap<Key<'_>, usize> = FxHashMap::default();
    let offers = types
        .iter()
        .map(|it| {
            let mut list: Vec<(usize, usize)> = it
                .offerings
                .iter()
                .enumerate()
                .filter(|(_, o)| o.available)
                .map(|(i, o)| {
                    let key = (
                        o.zone.as_str(),
                        o.capacity_type.as_str(),
                        o.reservation_id(),
                        o.zone_id.as_deref(),
                    );
                    let slot = *index.entry(key).or_insert_with(|| {
                        slots.push((o.zone.clone(), o.capacity_type.clone()));
                        reservations.push(key.2.map(str::to_string));
                        kinds.push(
                            o.reservation
                                .as_ref()
                                .map(|c| (c.reservation_type, c.interruptible)),
                        );
                        zone_ids.push(o.zone_id.clone());
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
                    .then_with(|| oa.reservation_id().cmp(&ob.reservation_id()))
            });
            list
        })
        .collect();
    OfferingSlots {
        slots,
        offers,
        reservations,
        kinds,
        zone_ids,
    }
}

/// Which of a pool's offering slots a NodeClaim's requirements admit: zone, zone id (of a slot
/// that has one), capacity type and, when the requirements name them, the capacity reservation,
/// its type and interruptibility (an on-demand or spot offering has none of the three labels:
/// only `NotIn`/`DoesNotExist` admit it, as upstream's `DoesNotExist` offering requirements,
/// `aws v1.14.1: pkg/providers/instancetype/offering/base_resolver.go`).
pub(super) fn admitted_slots(pool: &Pool<'_>, reqs: &Requirements) -> Vec<bool> {
    let filter = OfferingFilter::new(reqs);
    pool.slots
        .iter()
        .zip(pool.slot_reservations.iter())
        .zip(pool.slot_kinds.iter())
        .zip(pool.slot_zone_ids.iter())
        .map(|((((zone, ct), id), kind), zone_id)| {
            filter.zone.is_none_or(|z| z.has(zone))
                && zone_id_admits(filter.zone_id, zone_id.as_deref())
                && filter.capacity_type.is_none_or(|c| c.has(ct))
                && filter.reservation_admits(id.as_deref().zip(*kind))
        })
        .collect()
}

/// The cheapest admitted offering of type `t`, optionally of one capacity type.
pub(super) fn cheapest_offer<'p>(
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

/// The zones `types` are offered in when the pool's zone requirement allows none of them —
/// the pool asks for zones its node class has no subnets in (aws#3211; Karpenter's
/// "no instance type met the scheduling requirements or had a required offering") — else none.
fn zones_ruled_out(types: &[InstanceType], reqs: &Requirements) -> Vec<String> {
    let Some(wanted) = reqs.get_ref(labels::ZONE) else {
        return Vec::new();
    };
    let offered: BTreeSet<&str> = types
        .iter()
        .flat_map(|it| it.offerings.iter().map(|o| o.zone.as_str()))
        .collect();
    if offered.is_empty() || offered.iter().any(|z| wanted.has(z)) {
        return Vec::new();
    }
    offered.into_iter().map(str::to_string).collect()
}

pub(super) fn has_offering(it: &InstanceType, reqs: &Requirements) -> bool {
    let filter = OfferingFilter::new(reqs);
    it.offerings.iter().any(|o| o.available && filter.admits(o))
}

/// The zone, zone-id, capacity-type and capacity-reservation requirements of a NodeClaim,
/// looked up once.
#[derive(Clone, Copy)]
pub(super) struct OfferingFilter<'r> {
    pub(super) zone: Option<&'r Requirement>,
    pub(super) zone_id: Option<&'r Requirement>,
    pub(super) capacity_type: Option<&'r Requirement>,
    reservation_id: Option<&'r Requirement>,
    reservation_type: Option<&'r Requirement>,
    interruptible: Option<&'r Requirement>,
}

impl<'r> OfferingFilter<'r> {
    pub(super) fn new(reqs: &'r Requirements) -> Self {
        OfferingFilter {
            zone: reqs.get_ref(labels::ZONE),
            zone_id: reqs.get_ref(labels::ZONE_ID),
            capacity_type: reqs.get_ref(labels::CAPACITY_TYPE),
            reservation_id: reqs.get_ref(labels::CAPACITY_RESERVATION_ID),
            reservation_type: reqs.get_ref(labels::CAPACITY_RESERVATION_TYPE),
            interruptible: reqs.get_ref(labels::CAPACITY_RESERVATION_INTERRUPTIBLE),
        }
    }
    pub(super) fn admits(&self, o: &Offering) -> bool {
        self.zone.is_none_or(|z| z.has(&o.zone))
            && o.zone_id_admitted(self.zone_id)
            && self.capacity_type.is_none_or(|c| c.has(&o.capacity_type))
            && self.reservation_admits(
                o.reservation
                    .as_ref()
                    .map(|c| (c.id.as_str(), (c.reservation_type, c.interruptible))),
            )
    }

    /// Whether the reservation labels admit an offering of `reservation` (id, type,
    /// interruptibility; `None`: on-demand or spot, whose offerings require the three labels
    /// `DoesNotExist`, so only `NotIn` / `DoesNotExist` admit them — `Requirements.IsCompatible`).
    pub(super) fn reservation_admits(
        &self,
        reservation: Option<(&str, (ReservationType, bool))>,
    ) -> bool {
        let admit = |r: Option<&Requirement>, value: Option<&str>| {
            r.is_none_or(|r| match value {
                Some(v) => r.has(v),
                None => matches!(r.operator(), Operator::NotIn | Operator::DoesNotExist),
            })
        };
        let (id, kind) = reservation.unzip();
        admit(self.reservation_id, id)
            && admit(self.reservation_type, kind.map(|(t, _)| t.as_str()))
            && admit(
                self.interruptible,
                kind.map(|(_, i)| if i { "true" } else { "false" }),
            )
    }
}

/// The DaemonSets that would run on this pool's nodes (docs/karpenter.md §6.3): they tolerate the
/// pool's taints (a PreferNoSchedule toleration is implied) and their strict node requirements
/// are compatible with the pool's. Returned with those requirements, for the per-type check:
/// one set per required node-affinity term that the pool admits, in order (Karpenter's
/// `isDaemonPodCompatible`, `core: pkg/controllers/provisioning/scheduling/scheduler.go`, drops
/// the first term until one suits both the template and the type; `provisioning/suite_test.go`
/// "should consider a daemonset schedulable with multiple node affinity terms").
///
/// The pool's requirements are taken with `karpenter.sh/registered In [true]` and
/// `karpenter.sh/initialized In [true]` added, for this check only: the node will carry both
/// labels, so a DaemonSet selecting them runs there (`core: pkg/controllers/provisioning/
/// scheduling/nodeclaimtemplate.go` `NewNodeClaimTemplate`, kept off the NodeClaim's labels and
/// requirements; `scheduling/suite_test.go` "Should properly handle DaemonSet resources with Node
/// Affinity for `karpenter.sh/initialized` and `karpenter.sh/registered`"; the thread
/// kubernetes-sigs/karpenter#2161).
pub(super) fn pool_daemons<'i>(
    input: &'i Input,
    pi: &PoolInput,
    pool_reqs: &Requirements,
) -> Vec<(&'i Pod, Vec<Requirements>)> {
    let mut pool_reqs = pool_reqs.clone();
    pool_reqs.add(Requirement::single(labels::REGISTERED, "true"));
    pool_reqs.add(Requirement::single(labels::INITIALIZED, "true"));
    let pool_reqs = &pool_reqs;
    input
        .daemonsets
        .iter()
        .filter_map(|d| {
            // DaemonSet pods with DRA claims add no overhead (`scheduler.go`
            // `buildDaemonOverheadGroups` under `--ignore-dra-requests=true`).
            if d.dra {
                return None;
            }
            let mut tolerations = d.tolerations.clone();
            tolerations.push(crate::model::taints::Toleration::exists(
                "",
                Some(Effect::PreferNoSchedule),
            ));
            if first_untolerated(&pi.pool.taints, &tolerations).is_some() {
                return None;
            }
            let selector = Requirements::from_labels(d.node_selector.iter());
            let terms: Vec<Requirements> = if d.required_node_affinity.is_empty() {
                vec![selector]
            } else {
                d.required_node_affinity
                    .iter()
                    .map(|term| {
                        let mut r = selector.clone();
                        r.add_all(&Requirements::from_selectors(term));
                        r
                    })
                    .collect()
            };
            let terms: Vec<Requirements> = terms
                .into_iter()
                .filter(|strict| pool_reqs.is_compatible(strict, labels::is_well_known))
                .collect();
            (!terms.is_empty()).then_some((d, terms))
        })
        .collect()
}

/// What those DaemonSets take on a node of this type: the ones with a term whose requirements
/// also intersect the type's (e.g. an arm64-only agent adds nothing to amd64 types).
pub(super) fn daemon_overhead(
    daemons: &[(&Pod, Vec<Requirements>)],
    it: &InstanceType,
) -> Resources {
    let mut total = Resources::new();
    for (d, terms) in daemons {
        if terms
            .iter()
            .any(|strict| it.requirements.intersects_ok(strict))
        {
            total.add_assign(&d.requests);
        }
    }
    total
}

/// The host ports those DaemonSets bind on a node of this type.
fn daemon_host_ports(daemons: &[(&Pod, Vec<Requirements>)], it: &InstanceType) -> Vec<HostPort> {
    daemons
        .iter()
        .filter(|(_, terms)| {
            terms
                .iter()
                .any(|strict| it.requirements.intersects_ok(strict))
        })
        .flat_map(|(d, _)| d.host_ports.iter().cloned())
        .collect()
}

pub(super) fn limit_reason(pool: &Pool<'_>) -> PoolCause {
    let remaining = pool.remaining.as_ref();
    let mut exhausted = Vec::new();
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
            exhausted.push(ExhaustedLimit {
                resource: key.clone(),
                limit: *limit,
                left,
                smallest,
            });
        }
    }
    PoolCause::LimitReached(exhausted)
}
