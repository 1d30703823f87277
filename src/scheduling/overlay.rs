//! NodeOverlays applied to each pool's instance types before scheduling (docs/karpenter.md §6.10).
//!
//! Mirrors `core main: pkg/controllers/nodeoverlay/controller.go` (`Reconcile`,
//! `getOverlaidOfferings`, the conflict checks) and `store.go` (`updateInstanceTypeOffering`,
//! `updateInstanceTypeCapacity`, `apply`), which Karpenter's scheduler reads through
//! `pkg/cloudprovider/overlay/cloudprovider.go`:
//!
//! - overlays are taken by weight, highest first, then by name, later in the alphabet first;
//! - an overlay selects, in each pool, the instance types whose requirements — with the pool's
//!   `karpenter.sh/nodepool` label and its template labels — are compatible with its own
//!   (every key it names must be defined, as `Requirements.IsCompatible` without undefined keys),
//!   and of those the offerings whose own requirements (zone, capacity type, zone id, reservation
//!   id, type and interruptibility) are compatible with its (`Offerings.Compatible`);
//! - a price (`price` or `priceAdjustment`) goes to each selected offering no heavier overlay has
//!   priced; capacity adds each extended resource no heavier overlay has set;
//! - an overlay of the same weight as one that already changed the same offering's price, or the
//!   same resource of the same type, conflicts and is not applied at all, in any pool (the
//!   upstream `ValidationSucceeded=False` "Conflict");
//! - a static pool's types (`spec.replicas`) count for conflicts and get the added capacity but
//!   keep their prices: its NodeClaims carry no `price-overlay-applied`, so EC2 picks among
//!   them at its own prices.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::nodepool::NodePool;
use crate::model::overlay::{NodeOverlay, PriceChange};
use crate::model::requirements::{Requirement, Requirements};
use crate::model::resources::Resources;

use super::PoolInput;

/// What overlays changed on one instance type of one pool.
#[derive(Default)]
struct TypeUpdate {
    /// Per offering index: the price change and the weight of the last overlay that selected it.
    prices: BTreeMap<usize, (PriceChange, i32)>,
    /// Resources set, and the weight and resources of the last overlay that set any.
    capacity: Resources,
    capacity_last: Option<(i32, BTreeSet<String>)>,
}

/// Applies `overlays` to the instance types of `pools` (see the module documentation). Returns
/// the names of the overlays not applied because they conflict with another of the same weight.
pub fn apply_overlays(pools: &mut [PoolInput], overlays: &[NodeOverlay]) -> Vec<String> {
    let view: Vec<(&NodePool, &[InstanceType])> = pools
        .iter()
        .map(|p| (&p.pool, p.instance_types.as_slice()))
        .collect();
    let (updates, conflicts) = resolve(&view, overlays);
    for ((p, t), update) in updates {
        let pool = &mut pools[p];
        // A static pool's NodeClaim is the bare template: `ToNodeClaim` adds no overlay-ordered
        // type list nor overlay annotation to it (`core v1.14.1: scheduling/nodeclaimtemplate.go`),
        // so the AWS provider's `Create` launches it `lowest-price` at EC2's own prices
        // (`aws v1.14.1: pkg/providers/instance/instance.go` l.376: prioritized only with
        // `price-overlay-applied`). `Create` does apply the overlays to the types it launches
        // from (`pkg/cloudprovider/cloudprovider.go` l.131: any NodeClaim with a NodePool
        // label), and `instanceToNodeClaim` writes the overlaid capacity into the NodeClaim's
        // status: a static pool keeps its prices and gets the added capacity, unannotated. Its
        // types count for conflicts (`resolve`) either way, as the controller's.
        let it = &mut pool.instance_types[t];
        for (name, quantity) in update.capacity.iter() {
            it.capacity.set(name, quantity);
        }
        if pool.pool.replicas.is_some() {
            continue;
        }
        for (o, (change, _)) in &update.prices {
            it.offerings[*o].price = change.apply(it.offerings[*o].price);
        }
        // Recorded for the NodeClaims' `…-overlay-applied` annotations (`ClaimAnnotations`).
        if !update.prices.is_empty() {
            pool.claim_annotations
                .price_overlaid
                .insert(it.name.clone());
        }
        if !update.capacity.is_empty() {
            pool.claim_annotations
                .capacity_overlaid
                .insert(it.name.clone());
        }
    }
    conflicts
}

/// The overlays that conflict with another of the same weight on `pools` (each a pool with its
/// instance types), which [`apply_overlays`] leaves out. Upstream marks them
/// `ValidationSucceeded=False`, and the AWS provider then takes no price from them for its
/// unpriced types either (`aws v1.14.1: pkg/providers/instancetype/offering/offering.go`
/// `GetOverlayPrice` reads validated overlays only). A type's offerings count whether priced or
/// not, as upstream's (listed, unavailable), so the answer does not depend on those prices.
pub fn overlay_conflicts(
    pools: &[(&NodePool, &[InstanceType])],
    overlays: &[NodeOverlay],
) -> Vec<String> {
    resolve(pools, overlays).1
}

/// Per (pool, type), what the overlays change; and the overlays left out for a conflict.
fn resolve(
    pools: &[(&NodePool, &[InstanceType])],
    overlays: &[NodeOverlay],
) -> (BTreeMap<(usize, usize), TypeUpdate>, Vec<String>) {
    if overlays.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    let mut ordered: Vec<&NodeOverlay> = overlays.iter().collect();
    ordered.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| b.name.cmp(&a.name)));
    // (pool, type) → updates.
    let mut updates: BTreeMap<(usize, usize), TypeUpdate> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for overlay in ordered {
        let reqs = Requirements::from_selectors(&overlay.requirements);
        let selected = selections(pools, &reqs);
        let conflicting = selected.iter().any(|((p, t), offerings)| {
            let Some(update) = updates.get(&(*p, *t)) else {
                return false;
            };
            let price = overlay.price.is_some()
                && offerings.iter().any(|o| {
                    update
                        .prices
                        .get(o)
                        .is_some_and(|(_, w)| *w == overlay.weight)
                });
            let capacity = update.capacity_last.as_ref().is_some_and(|(w, resources)| {
                *w == overlay.weight && overlay.capacity.iter().any(|(r, _)| resources.contains(r))
            });
            price || capacity
        });
        if conflicting {
            conflicts.push(overlay.name.clone());
            continue;
        }
        for ((p, t), offerings) in selected {
            let update = updates.entry((p, t)).or_default();
            if let Some(change) = overlay.price {
                for o in offerings {
                    update
                        .prices
                        .entry(o)
                        .and_modify(|(_, w)| *w = overlay.weight)
                        .or_insert((change, overlay.weight));
                }
            }
            if !overlay.capacity.is_empty() {
                for (name, quantity) in overlay.capacity.iter() {
                    if !update.capacity.contains(name) {
                        update.capacity.set(name, quantity);
                    }
                }
                update.capacity_last = Some((
                    overlay.weight,
                    overlay
                        .capacity
                        .iter()
                        .map(|(name, _)| name.to_string())
                        .collect(),
                ));
            }
        }
    }
    (updates, conflicts)
}

/// The (pool, type) pairs an overlay selects, each with the offerings it selects.
fn selections(
    pools: &[(&NodePool, &[InstanceType])],
    reqs: &Requirements,
) -> Vec<((usize, usize), Vec<usize>)> {
    let mut out = Vec::new();
    for (p, (pool, types)) in pools.iter().enumerate() {
        let mut pool_labels = Requirements::new();
        pool_labels.add(Requirement::single(labels::NODEPOOL, &pool.name));
        for (k, v) in &pool.labels {
            pool_labels.add(Requirement::single(k, v));
        }
        for (t, it) in types.iter().enumerate() {
            let mut type_reqs = pool_labels.clone();
            type_reqs.add_all(&it.requirements);
            if !type_reqs.is_compatible(reqs, |_| false) {
                continue;
            }
            let offerings: Vec<usize> = it
                .offerings
                .iter()
                .enumerate()
                // `Offerings.Compatible`: every label of the offering — zone, capacity type,
                // zone id, reservation id / type / interruptibility — against the overlay's.
                .filter(|(_, o)| reqs.is_compatible(&o.requirements(), labels::is_well_known))
                .map(|(i, _)| i)
                .collect();
            if !offerings.is_empty() {
                out.push(((p, t), offerings));
            }
        }
    }
    out
}
