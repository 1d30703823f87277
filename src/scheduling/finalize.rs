//! From packed NodeClaims to the plan: each NodeClaim's options ordered by price and truncated,
//! `minValues` re-checked, the capacity type, instance type and zone that would be launched, the
//! node's labels; then the plan's pods, existing-node placements and unschedulable pods.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/nodeclaim.go`
//! (`FinalizeScheduling`), `scheduler.go` (`Results.TruncateInstanceTypes`) and
//! `aws v1.14.1: pkg/providers/instance/instance.go` (`getCapacityType`) and
//! `instance/filter/filter.go` (`ExoticInstanceTypeFilter`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::instance_type::{InstanceType, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::overhead;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::reservation::{label_reserved, ReservationType, RESERVATION_LABELS};
use crate::model::resources::Resources;

use super::node_claim::{unmet_min_values, Claim};
use super::node_claim_template::{admitted_slots, cheapest_offer, Pool};
use super::reason::{PoolCause, PoolRefusal, Reason};
use super::scheduler::{Solver, HOSTNAME};
use super::{
    ExistingPlacement, Input, InstanceTypeOption, InstanceTypeRequirement, JoinedBeforeWeights,
    LaunchChoice, LaunchOffering, Plan, PlannedNodeClaim, UnschedulablePod,
};

/// `v1.WellKnownExoticResources` (`aws v1.14.1: pkg/apis/v1/labels.go`): a type with any of them
/// is exotic.
const EXOTIC_RESOURCES: [&str; 5] = [
    overhead::NVIDIA_GPU,
    overhead::AMD_GPU,
    overhead::AWS_NEURON,
    overhead::AWS_NEURON_CORE,
    overhead::HABANA_GAUDI,
];

/// Metal sizes and accelerated types: Karpenter only launches them when nothing else fits
/// (`ExoticInstanceTypeFilter`): an `instance-size` value *containing* `metal` (so
/// `c7i.metal-24xl` too), or a non-zero capacity of an exotic resource — not the GPU or
/// accelerator count labels (a dl2q's Qualcomm accelerators are none of them).
pub(super) fn is_exotic(it: &InstanceType) -> bool {
    let metal = it
        .requirements
        .get_ref(labels::INSTANCE_SIZE)
        .is_some_and(|r| {
            r.operator() == Operator::In && r.values().iter().any(|v| v.contains("metal"))
        });
    metal || EXOTIC_RESOURCES.iter().any(|r| it.capacity.get(r) != 0)
}

/// Orders a NodeClaim's options by price, truncates them, checks `minValues`, and works out
/// what would be launched (docs/karpenter.md §6.4 steps 5–6, §6.7 steps 2–3).
/// The option lists and instance-type requirements of the NodeClaims finalized so far, each
/// kept once: NodeClaims whose pods fit the same types list the same hundreds of options, so a
/// plan of thousands holds a handful of lists (BENCHMARKS.md, B1e).
#[derive(Default)]
pub(super) struct SharedLists {
    options: FxHashMap<Vec<(u64, u32)>, Arc<[InstanceTypeOption]>>,
    names: FxHashMap<Vec<u32>, Arc<[Arc<str>]>>,
    /// Each NodeClaim shape finalized so far, and its outcome.
    shapes: FxHashMap<Shape, Finalized>,
}

/// All that finalizing a NodeClaim depends on besides its pods and their requests: its types,
/// its requirements but the hostname, the reservations it holds, whether a `minValues` was
/// relaxed. NodeClaims packed alike share it (B1's 4,000 NodeClaims have 50 shapes), so each
/// shape is finalized once (BENCHMARKS.md, B1e).
type Shape = (Vec<u32>, Requirements, Vec<String>, bool);

/// A shape's NodeClaim without pods, and the smallest DaemonSet overhead among its options
/// (added to each NodeClaim's own requests); or why it cannot be launched.
type Finalized = Result<(PlannedNodeClaim, Resources), PoolRefusal>;

impl SharedLists {
    /// `options` (price, type of the pool) as `InstanceTypeOption`s, shared with every earlier
    /// NodeClaim of the same pool that had them.
    fn options(&mut self, pool: &Pool<'_>, options: &[(f64, u32)]) -> Arc<[InstanceTypeOption]> {
        let key: Vec<(u64, u32)> = options.iter().map(|&(p, t)| (p.to_bits(), t)).collect();
        self.options
            .entry(key)
            .or_insert_with(|| {
                options
                    .iter()
                    .map(|&(price, t)| InstanceTypeOption {
                        name: pool.names[t as usize].clone(),
                        price,
                    })
                    .collect()
            })
            .clone()
    }

    /// The names of `types` (of the pool, sorted by name), shared likewise.
    fn names(&mut self, pool: &Pool<'_>, types: Vec<u32>) -> Arc<[Arc<str>]> {
        self.names
            .entry(types)
            .or_insert_with_key(|types| {
                types
                    .iter()
                    .map(|&t| pool.names[t as usize].clone())
                    .collect()
            })
            .clone()
    }
}

pub(super) fn finalize(
    input: &Input,
    pool: &Pool<'_>,
    claim: &Claim,
    pods: Vec<String>,
    shared: &mut SharedLists,
) -> Result<PlannedNodeClaim, PoolRefusal> {
    let mut reqs = claim.reqs.clone();
    reqs.remove(HOSTNAME);
    let shape = (
        claim.types.clone(),
        reqs,
        claim.reserved.clone(),
        claim.min_values_relaxed,
    );
    let finalized = match shared.shapes.get(&shape) {
        Some(done) => done.clone(),
        None => {
            let done = finalize_shape(input, pool, claim, &shape.1, shared);
            shared.shapes.insert(shape, done.clone());
            done
        }
    };
    let (mut planned, min_overhead) = finalized?;
    planned.pods = pods;
    planned.requests = claim.requests.add(&min_overhead);
    Ok(planned)
}

/// [`finalize`] for a shape: everything but the pods and the requests.
fn finalize_shape(
    input: &Input,
    pool: &Pool<'_>,
    claim: &Claim,
    reqs: &Requirements,
    shared: &mut SharedLists,
) -> Finalized {
    let admitted = admitted_slots(pool, reqs);
    // A NodeClaim holding reservations is pinned to them (`FinalizeScheduling`: capacity type
    // `reserved`, reservation id among those held): only they are launched into. One holding
    // none launches into none: the reservations it could use were all held by others when it
    // took its pods, and launching into them would plan more instances than they have. (Static
    // NodeClaims are given the reservations with instances left, `statics.rs`.)
    let pinned = !claim.reserved.is_empty();
    let launch_admitted: Vec<bool> = admitted
        .iter()
        .zip(pool.slot_reservations.iter())
        .map(|(&a, id)| match id {
            Some(id) => a && claim.reserved.contains(id),
            None => a && !pinned,
        })
        .collect();
    let mut options: Vec<(f64, u32)> = claim
        .types
        .iter()
        .filter_map(|&t| cheapest_offer(pool, t, &admitted, None).map(|o| (o.price, t)))
        .collect();
    let rank = |t: u32| pool.name_rank[t as usize];
    options.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| rank(a.1).cmp(&rank(b.1))));
    options.truncate(input.options.max_instance_types.max(1));
    let kept: Vec<u32> = options.iter().map(|&(_, t)| t).collect();
    // `Truncate` checks `minValues` only under the Strict policy (`cloudprovider/types.go`).
    let strict = !input.options.min_values_policy.relaxes();
    if let Some(key) = unmet_min_values(pool, &kept, reqs).filter(|_| strict) {
        return Err(pool.refusal(PoolCause::MinValuesAfterTruncation {
            key,
            kept: kept.len(),
        }));
    }
    let mut zones = BTreeSet::new();
    let mut cts = BTreeSet::new();
    for &t in &kept {
        for &(slot, _) in &pool.offers[t as usize] {
            if launch_admitted[slot] {
                zones.insert(pool.slots[slot].0.clone());
                cts.insert(pool.slots[slot].1.clone());
            }
        }
    }
    let instance_type_requirement = instance_type_requirement(pool, &kept, reqs, shared);
    let mut out_reqs = reqs.clone();
    out_reqs.remove(labels::INSTANCE_TYPE);
    if pinned {
        // `FinalizeScheduling` replaces the capacity-type requirement (its `minValues` too).
        out_reqs.remove(labels::CAPACITY_TYPE);
        out_reqs.add(Requirement::single(labels::CAPACITY_TYPE, RESERVED));
    }
    out_reqs.add(Requirement::new(
        labels::CAPACITY_TYPE,
        Operator::In,
        cts.iter().cloned(),
    ));
    if pinned {
        out_reqs.add(Requirement::new(
            labels::CAPACITY_RESERVATION_ID,
            Operator::In,
            claim.reserved.iter().cloned(),
        ));
    }
    // The NodeClaim CRD refuses it, so its creation fails and its pods stay pending (static
    // NodeClaims carry the template's requirements, which the NodePool CRD already checked).
    if pool.input.pool.replicas.is_none() {
        if let Some(short) = short_of_min_values(&out_reqs, &instance_type_requirement) {
            return Err(pool.refusal(PoolCause::NodeClaimRefused(short)));
        }
    }
    let launch = launch_offerings(pool, &kept, &launch_admitted);
    let Some(&(_, launch_type, first)) = launch.offerings.first() else {
        if launch.imageless {
            let ids = pool.input.images.iter().map(|i| i.id.clone());
            return Err(pool.refusal(PoolCause::NoImage(ids.collect())));
        }
        return Err(pool.refusal(PoolCause::NoOffering));
    };
    let offering = &pool.types[launch_type as usize].offerings[first];
    let launch_it = pool.types[launch_type as usize];
    let zones: Vec<String> = zones.into_iter().collect();
    let mut reservations: Vec<crate::model::reservation::ReservedCapacity> = Vec::new();
    let launch_offerings: Vec<LaunchOffering> = launch
        .offerings
        .iter()
        .filter_map(|&(k, t, i)| {
            let o = &pool.types[t as usize].offerings[i];
            let zone = zones.binary_search(&o.zone).ok()? as u32;
            let reservation = o.reservation.as_ref().map(|c| {
                match reservations.iter().position(|r| r.id == c.id) {
                    Some(n) => n as u32,
                    None => {
                        reservations.push(c.clone());
                        (reservations.len() - 1) as u32
                    }
                }
            });
            Some(LaunchOffering {
                option: k,
                zone,
                price: o.price,
                reservation,
            })
        })
        .collect();
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
    // The reservation labels come from the reservation launched into, never from the type's
    // requirements (which list its reservations whatever the capacity type, `aws:
    // pkg/cloudprovider/cloudprovider.go` `instanceToNodeClaim`).
    for (k, v) in launch_it.requirements.single_value_labels() {
        if !RESERVATION_LABELS.contains(&k.as_str()) {
            node_labels.entry(k).or_insert(v);
        }
    }
    // A partition placement group's NodeClaim is labelled with the partition it asked for (the
    // first value of its requirement), else with the empty value the registration hook fills
    // from the instance (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go`
    // `instanceToNodeClaim`, `registrationhooks/placementgrouphook.go`).
    if launch_it
        .requirements
        .has(labels::PLACEMENT_GROUP_PARTITION)
    {
        let asked = reqs
            .get_ref(labels::PLACEMENT_GROUP_PARTITION)
            .filter(|r| r.operator() == Operator::In)
            .and_then(|r| r.values().iter().next().cloned());
        node_labels.insert(
            labels::PLACEMENT_GROUP_PARTITION.to_string(),
            asked.unwrap_or_default(),
        );
    }
    if let Some(c) = &offering.reservation {
        label_reserved(&mut node_labels, &c.id, c.reservation_type, c.interruptible);
    }
    // The AWS provider launches dedicated only when the NodeClaim allows dedicated but not
    // default (`aws v1.14.1: pkg/providers/instance/instance.go` `getTenancyType`) and labels the
    // node with the instance's tenancy (`cloudprovider.go` `instanceToNodeClaim`).
    if launch_it.requirements.has(labels::INSTANCE_TENANCY) {
        node_labels.insert(
            labels::INSTANCE_TENANCY.to_string(),
            crate::model::instance::Tenancy::of(reqs)
                .as_str()
                .to_string(),
        );
    }
    node_labels.insert(labels::ZONE.to_string(), offering.zone.clone());
    // The zone id of the launched offering's zone, when the node class's subnets give one (`aws
    // v1.14.1: pkg/cloudprovider/cloudprovider.go` `instanceToNodeClaim`; `cloudprovider/
    // suite_test.go` "should return availability zone ID as a label on the nodeClaim").
    // A zone the subnets give no id has the empty id: no label.
    match offering.zone_id.as_deref().filter(|id| !id.is_empty()) {
        Some(id) => {
            node_labels.insert(labels::ZONE_ID.to_string(), id.to_string());
        }
        None if node_labels
            .get(labels::ZONE_ID)
            .is_some_and(String::is_empty) =>
        {
            node_labels.remove(labels::ZONE_ID);
        }
        None => {}
    }
    node_labels.insert(
        labels::CAPACITY_TYPE.to_string(),
        launch.capacity_type.to_string(),
    );
    node_labels.insert(labels::INSTANCE_TYPE.to_string(), launch_it.name.clone());
    if let Some(class) = &np.node_class_ref {
        if np.generation != Some(crate::model::nodepool::ApiGeneration::V1Alpha5) {
            node_labels.insert(labels::EC2NODECLASS.to_string(), class.name.clone());
        }
    }
    let min_overhead =
        smallest_daemon_overhead(kept.iter().map(|&t| &pool.daemon_overhead[t as usize]));
    let planned = PlannedNodeClaim {
        name: String::new(),
        node_pool: np.name.clone(),
        node_class: pool.input.node_class.clone(),
        instance_types: shared.options(pool, &options),
        launch: LaunchChoice {
            instance_type: launch_it.name.clone(),
            capacity_type: launch.capacity_type.to_string(),
            zone: offering.zone.clone(),
            price: offering.price,
            reservation: offering.reservation_id().map(str::to_string),
            offerings: launch_offerings,
            reservations,
        },
        zones,
        capacity_types: cts.into_iter().collect(),
        pods: Vec::new(),
        requests: Resources::default(),
        requirements: out_reqs,
        instance_type_requirement,
        labels: node_labels,
        annotations: pool.input.claim_annotations.for_claim(
            &np.template_annotations,
            options.iter().map(|&(_, t)| &*pool.names[t as usize]),
            np.replicas.is_some(),
            claim.min_values_relaxed,
        ),
        taints: np.taints.clone(),
        startup_taints: np.startup_taints.clone(),
        round: 1,
        joined_before_weights: None,
    };
    Ok((planned, min_overhead))
}

/// The first `In` requirement of the NodeClaim with fewer values than its `minValues`, as
/// Karpenter would write it (`Display`), if any. The NodeClaim CRD refuses such a NodeClaim
/// ("requirements with 'minValues' must have at least that many values specified in the 'values'
/// field", core v1.14.1 `pkg/apis/v1/nodeclaim.go`). v1.14.1 counts a `minValues` against every
/// value the instance types offer (`SatisfiesMinValues`), so a pod that narrows a key each type
/// offers several values of (one zone of two) gets here: kubernetes-sigs/karpenter#2999, fixed
/// after v1.14.1 by #3170.
fn short_of_min_values(
    reqs: &Requirements,
    instance_types: &InstanceTypeRequirement,
) -> Option<String> {
    let short = reqs.iter().find(|r| {
        r.operator() == Operator::In && r.min_values.is_some_and(|m| r.values().len() < m as usize)
    });
    if let Some(r) = short {
        return Some(r.to_string());
    }
    let names = &instance_types.names;
    let min = instance_types
        .min_values
        .filter(|&m| names.len() < m as usize)?;
    let mut r = Requirement::new(
        labels::INSTANCE_TYPE,
        Operator::In,
        names.iter().map(|n| n.to_string()),
    );
    r.min_values = Some(min);
    Some(r.to_string())
}

/// The NodeClaim's `node.kubernetes.io/instance-type In [...]`: its options' names, intersected
/// with the key's requirement if the NodeClaim has one (as `Requirements::add` would).
fn instance_type_requirement(
    pool: &Pool<'_>,
    kept: &[u32],
    reqs: &Requirements,
    shared: &mut SharedLists,
) -> InstanceTypeRequirement {
    let existing = reqs.get_ref(labels::INSTANCE_TYPE);
    let mut by_name: Vec<u32> = kept.to_vec();
    by_name.sort_by_key(|&t| pool.name_rank[t as usize]);
    by_name.dedup_by_key(|t| pool.name_rank[*t as usize]);
    by_name.retain(|&t| existing.is_none_or(|r| r.has(&pool.names[t as usize])));
    InstanceTypeRequirement {
        names: shared.names(pool, by_name),
        min_values: existing.and_then(|r| r.min_values),
    }
}

/// What a launch of these options may use: the AWS provider's filters in its order (docs/karpenter.md
/// §6.7 step 2, `aws: pkg/providers/instance/instance.go` `filterInstanceTypes` and
/// `filter/filter.go`), then its capacity-type choice (`getCapacityType`).
pub(super) struct Launchable {
    /// `reserved`, `spot` or `on-demand`.
    pub(super) capacity_type: &'static str,
    /// (index into the options, type, index into its `offerings`), admitted, available and of
    /// `capacity_type`, cheapest first.
    pub(super) offerings: Vec<(u32, u32, usize)>,
    /// Offerings were left, but none of a type an AMI of the node class runs on.
    pub(super) imageless: bool,
}

/// The launch-time filters and choice, on a NodeClaim's options (`kept`, cheapest first):
///
/// 1. exotic types (metal, GPUs, accelerators) are dropped if anything else remains
///    (`ExoticInstanceTypeFilter`);
/// 2. when both spot and on-demand offerings remain, spot offerings priced above the cheapest
///    on-demand one are dropped, and types left with none go (`SpotOfferingFilter`; upstream
///    test "should filter out spot offerings that are more expensive than the cheapest
///    on-demand offering", `filter/filter_test.go`);
/// 3. the 60 cheapest types are kept (`Truncate(maxInstanceTypes)`);
/// 4. the capacity type is reserved, else spot, else on-demand, whichever still has an offering.
///
/// Both filters are skipped when the pool uses `minValues`, as upstream. Types no AMI of the node
/// class runs on get no launch template, so none of their offerings is asked for (`aws:
/// pkg/providers/amifamily/resolver.go` `Resolve` → `MapToInstanceTypes`). Upstream maps them
/// last, after the spot filter, the truncation and the capacity type (`instance.go` `Create`);
/// ours right after the exotic filter, so that the spot filter's cap is an on-demand price the
/// launch can use: with spot priced at on-demand offline (no spot prices), a cheaper type without
/// an AMI would otherwise remove every spot offering that has one and fail the launch
/// (docs/karpenter.md §6.7).
pub(super) fn launch_offerings(pool: &Pool<'_>, kept: &[u32], admitted: &[bool]) -> Launchable {
    let uses_min_values = !pool.min_values.is_empty();
    let ct_of = |slot: usize| pool.slots[slot].1.as_str();
    let price = |t: u32, i: usize| pool.types[t as usize].offerings[i].price;
    // A type's admitted offerings, cheapest first (`offers` is sorted by price).
    let admitted_offers = |t: u32| {
        pool.offers[t as usize]
            .iter()
            .copied()
            .filter(|&(slot, _)| admitted[slot])
    };
    // (index into `kept`, type).
    let mut types: Vec<(u32, u32)> = kept
        .iter()
        .enumerate()
        .map(|(k, &t)| (k as u32, t))
        .filter(|&(_, t)| admitted_offers(t).next().is_some())
        .collect();
    let exotic = |t: u32| pool.exotic[t as usize];
    if !uses_min_values && types.iter().any(|&(_, t)| !exotic(t)) {
        types.retain(|&(_, t)| !exotic(t));
    }
    let before = types.len();
    types.retain(|&(_, t)| pool.has_image[t as usize]);
    let imageless = before > 0 && types.is_empty();
    // The spot filter's cap: the cheapest on-demand price, when spot offerings remain too.
    let mut cap: Option<f64> = None;
    if !uses_min_values {
        let cheapest_on_demand = types
            .iter()
            .flat_map(|&(_, t)| {
                admitted_offers(t)
                    .filter(|&(slot, _)| ct_of(slot) == ON_DEMAND)
                    .map(move |(_, i)| price(t, i))
            })
            .min_by(f64::total_cmp);
        let any_spot = types
            .iter()
            .any(|&(_, t)| admitted_offers(t).any(|(slot, _)| ct_of(slot) == SPOT));
        if any_spot {
            cap = cheapest_on_demand;
        }
    }
    let survives = |t: u32, (slot, i): (usize, usize)| {
        ct_of(slot) != SPOT || cap.is_none_or(|c| price(t, i) <= c)
    };
    let cheapest = |t: u32| {
        admitted_offers(t)
            .find(|&o| survives(t, o))
            .map(|(_, i)| price(t, i))
    };
    // Each type's cheapest surviving price, found once (not once per comparison of the sort).
    let mut priced: Vec<(f64, u32, u32)> = types
        .iter()
        .filter_map(|&(k, t)| cheapest(t).map(|p| (p, k, t)))
        .collect();
    priced.sort_by(|&(pa, _, a), &(pb, _, b)| {
        pa.total_cmp(&pb)
            .then_with(|| pool.name_rank[a as usize].cmp(&pool.name_rank[b as usize]))
    });
    priced.truncate(super::LAUNCH_MAX_INSTANCE_TYPES);
    let types: Vec<(u32, u32)> = priced.into_iter().map(|(_, k, t)| (k, t)).collect();
    let capacity_type = [RESERVED, SPOT, ON_DEMAND]
        .into_iter()
        .find(|ct| {
            types
                .iter()
                .any(|&(_, t)| admitted_offers(t).any(|o| survives(t, o) && ct_of(o.0) == *ct))
        })
        .unwrap_or(ON_DEMAND);
    let mut offerings: Vec<(u32, u32, usize)> = types
        .iter()
        .flat_map(|&(k, t)| {
            admitted_offers(t)
                .filter(move |&o| survives(t, o) && pool.slots[o.0].1 == capacity_type)
                .map(move |(_, i)| (k, t, i))
        })
        .collect();
    offerings.sort_by(|&(_, a, i), &(_, b, j)| {
        let (oa, ob) = (
            &pool.types[a as usize].offerings[i],
            &pool.types[b as usize].offerings[j],
        );
        oa.price
            .total_cmp(&ob.price)
            .then_with(|| pool.name_rank[a as usize].cmp(&pool.name_rank[b as usize]))
            .then_with(|| oa.zone.cmp(&ob.zone))
    });
    if capacity_type == RESERVED {
        offerings = one_reservation_per_zone(pool, offerings);
    }
    Launchable {
        capacity_type,
        imageless,
        offerings,
    }
}

/// A reserved launch's CreateFleet limits, on its offerings (cheapest first): one market type
/// per request, so only the reservation-type partition with the cheapest offering stays (on a
/// tie ODCRs before capacity blocks before interruptible ODCRs; `CapacityReservationTypeFilter`),
/// and one offering per pool, so each type keeps, per zone, the reservation with the most
/// instances left (`ReservedOfferingFilter`, `aws: pkg/providers/instance/filter/filter.go`).
fn one_reservation_per_zone(
    pool: &Pool<'_>,
    offerings: Vec<(u32, u32, usize)>,
) -> Vec<(u32, u32, usize)> {
    let reservation = |&(_, t, i): &(u32, u32, usize)| {
        pool.types[t as usize].offerings[i]
            .reservation
            .as_ref()
            .map(|c| (c.reservation_type, c.interruptible, c.count))
    };
    let rank = |(kind, interruptible, _): (ReservationType, bool, u32)| match (kind, interruptible)
    {
        (ReservationType::Default, false) => 0,
        (ReservationType::CapacityBlock, _) => 1,
        (ReservationType::Default, true) => 2,
    };
    // Cheapest first, so the first offering's partition has the cheapest price; among the
    // offerings at that price the best-ranked partition wins.
    let Some(first) = offerings.first() else {
        return offerings;
    };
    let price = |&(_, t, i): &(u32, u32, usize)| pool.types[t as usize].offerings[i].price;
    let cheapest = price(first);
    let Some(chosen) = offerings
        .iter()
        .filter(|o| price(o) == cheapest)
        .filter_map(&reservation)
        .min_by_key(|r| rank(*r))
        .map(|(kind, interruptible, _)| (kind, interruptible))
    else {
        return offerings;
    };
    let mut best: BTreeMap<(u32, &str), (u32, usize)> = BTreeMap::new();
    for (n, o) in offerings.iter().enumerate() {
        let Some((kind, interruptible, count)) = reservation(o) else {
            continue;
        };
        if (kind, interruptible) != chosen {
            continue;
        }
        let zone = pool.types[o.1 as usize].offerings[o.2].zone.as_str();
        let entry = best.entry((o.1, zone)).or_insert((count, n));
        if count > entry.0 {
            *entry = (count, n);
        }
    }
    let keep: BTreeSet<usize> = best.values().map(|&(_, n)| n).collect();
    offerings
        .into_iter()
        .enumerate()
        .filter(|(n, _)| keep.contains(n))
        .map(|(_, o)| o)
        .collect()
}

impl<'a> Solver<'a> {
    pub(super) fn finish(
        self,
        failures: BTreeMap<usize, Reason>,
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
        let mut shared: Vec<SharedLists> =
            self.pools.iter().map(|_| SharedLists::default()).collect();
        let mut joined: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for &(c, s, q) in &self.joined_open {
            joined.entry(c).or_default().push((s, q));
        }
        for (c, claim) in self.claims.iter().enumerate() {
            let pool = &self.pools[claim.pool];
            let pods = claim.pods.iter().map(|&s| self.pod(s).key()).collect();
            match finalize(self.input, pool, claim, pods, &mut shared[claim.pool]) {
                Ok(mut planned) => {
                    let n = per_pool_index
                        .entry(pool.input.pool.name.clone())
                        .or_insert(0);
                    *n += 1;
                    planned.name = format!("{}-{}", pool.input.pool.name, n);
                    planned.joined_before_weights = joined
                        .get(&c)
                        .and_then(|j| self.joined_before_weights(c, j));
                    plan.node_claims.push(planned);
                }
                Err(refusal) => {
                    for &s in &claim.pods {
                        unschedulable.push(UnschedulablePod {
                            pod: self.pod(s).key(),
                            reason: Reason::NotLaunchable(refusal.clone()),
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

impl Solver<'_> {
    /// The note of NodeClaim `c` from its entries of [`Solver::joined_open`] (aws#6883), given
    /// as (pod, heavier pool) pairs grouped once per plan, not searched once per NodeClaim.
    fn joined_before_weights(
        &self,
        c: usize,
        joined: &[(usize, usize)],
    ) -> Option<JoinedBeforeWeights> {
        let q = joined.first()?.1;
        let pods = joined.iter().map(|&(s, _)| self.pod(s).key()).collect();
        let higher = &self.pools[q].input.pool;
        Some(JoinedBeforeWeights {
            pods,
            weight: self.pools[self.claims[c].pool].input.pool.weight,
            higher_node_pool: higher.name.clone(),
            higher_weight: higher.weight,
        })
    }
}

/// Orders names the way people count: `inflate-2` before `inflate-10`.
pub(super) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    pub(super) fn chunks(s: &str) -> Vec<(bool, &str)> {
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

/// The DaemonSet overhead a NodeClaim requests on top of its pods: per resource the smallest among
/// its instance types' (`core v1.14.1 pkg/controllers/provisioning/scheduling/nodeclaim.go`
/// `FinalizeScheduling`, `resources.MinResources`), not one type's whole list — a DaemonSet
/// resource only some types get must not be requested, or the node would never count as
/// initialized (`RequestedResourcesRegistered`). Like upstream, an empty running minimum is
/// replaced by the next list rather than kept.
fn smallest_daemon_overhead<'a>(lists: impl Iterator<Item = &'a Resources>) -> Resources {
    lists.fold(Resources::new(), |min, r| {
        if min.is_empty() {
            r.clone()
        } else {
            min.min_each(r)
        }
    })
}
