//! Reserved capacity in one scheduling simulation: Karpenter's `ReservationManager` and
//! `NodeClaim.offeringsToReserve` (`core v1.14.1: pkg/controllers/provisioning/scheduling/
//! reservationmanager.go`, `nodeclaim.go`).
//!
//! A reservation can take `count` more instances. Each in-flight NodeClaim holds one unit of
//! *every* reservation it could still launch into (pessimistically: it launches into only one,
//! but which is decided at launch), so no more NodeClaims than `count` are ever planned on a
//! reservation in one simulation. Holding is per NodeClaim and idempotent; a NodeClaim that
//! narrows (a pod adds requirements) releases what it can no longer use.
//!
//! The provisioner runs the scheduler in *strict* mode (`DisableReservedCapacityFallback`,
//! `provisioner.go`): a pod compatible with a reservation that is all held by earlier NodeClaims
//! is not sent to on-demand or spot, nor to a lower-weight NodePool; its decision is deferred to
//! the next simulation, when the launched NodeClaims have used up the reservation and its
//! offering is no longer available — then it falls back (`rounds.rs`). A NodeClaim that holds
//! reservations is pinned to them when finalized (`capacity-type In [reserved]`,
//! `capacity-reservation-id In [...]`, `FinalizeScheduling`).

use rustc_hash::FxHashMap;

use crate::model::instance_type::RESERVED;
use crate::model::labels;
use crate::model::requirements::Requirements;
use crate::model::reservation::ReservedCapacity;

use super::node_claim::{Claim, ClaimUpdate};
use super::node_claim_template::{admitted_slots, Pool};
use super::scheduler::Fail;

/// What is left of each reservation in this simulation.
#[derive(Debug, Default)]
pub(super) struct Reservations {
    left: FxHashMap<String, u32>,
}

/// Why a NodeClaim cannot take a pod because of reserved capacity (`ReservedOfferingError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ReservedFail {
    /// Compatible reservations exist but earlier NodeClaims hold all of them (their ids).
    AllHeld(Vec<String>),
    /// The pod would narrow a NodeClaim that holds reservations so that it can use none of them.
    WouldLoseReservations(Vec<String>),
}

impl Reservations {
    /// Every reservation the pools' offerings name, with its count. Several pools (or types)
    /// naming one reservation keep the smallest count, as upstream (`NewReservationManager`).
    pub(super) fn new(pools: &[Pool<'_>]) -> Self {
        let mut left: FxHashMap<String, u32> = FxHashMap::default();
        for pool in pools {
            for it in &pool.types {
                for c in it.offerings.iter().filter_map(|o| o.reservation.as_ref()) {
                    left.entry(c.id.clone())
                        .and_modify(|n| *n = (*n).min(c.count))
                        .or_insert(c.count);
                }
            }
        }
        Reservations { left }
    }

    /// Whether there is any reservation at all (most plans have none).
    pub(super) fn is_empty(&self) -> bool {
        self.left.is_empty()
    }

    /// `CanReserve`: a NodeClaim that holds `id` keeps it; otherwise a unit must be left.
    fn can_hold(&self, held: &[String], id: &str) -> bool {
        held.iter().any(|h| h == id) || self.left.get(id).is_some_and(|n| *n > 0)
    }

    /// One instance of `id` launched outside the simulation's holding (a static NodeClaim).
    pub(super) fn use_one(&mut self, id: &str) {
        if let Some(n) = self.left.get_mut(id) {
            *n = n.saturating_sub(1);
        }
    }

    /// `Reserve` + `releaseReservedOfferings`: the NodeClaim now holds exactly `next`.
    pub(super) fn hold(&mut self, held: &mut Vec<String>, next: Vec<String>) {
        for id in &next {
            if !held.contains(id) {
                if let Some(n) = self.left.get_mut(id) {
                    *n = n.saturating_sub(1);
                }
            }
        }
        for id in held.iter() {
            if !next.contains(id) {
                if let Some(n) = self.left.get_mut(id) {
                    *n += 1;
                }
            }
        }
        *held = next;
    }

    /// A successful attempt of `claim` (from `pool`) completed with the reservations it would
    /// hold, or refused for reserved capacity (strict mode). Without reserved offerings the
    /// update is returned as it is.
    pub(super) fn complete(
        &self,
        pool: &Pool<'_>,
        claim: &Claim,
        mut update: ClaimUpdate,
        strict: bool,
    ) -> Result<ClaimUpdate, Fail> {
        if self.is_empty() {
            return Ok(update);
        }
        let reqs = update.reqs.as_ref().unwrap_or(&claim.reqs);
        match self.to_hold(pool, &update.types, reqs, &claim.reserved, strict) {
            Ok(next) => {
                update.reserved = next;
                Ok(update)
            }
            Err(fail) => Err(Fail::Reserved(fail)),
        }
    }

    /// `offeringsToReserve`: the reservations a NodeClaim of `pool` with options `types` and
    /// requirements `reqs` would hold, given it holds `held` now: every compatible available
    /// reserved offering it can hold. Strict mode refuses when compatible reservations exist but
    /// none can be held, or when the NodeClaim would lose all it holds. `Ok(None)` when the pool
    /// has no reserved offering at all.
    pub(super) fn to_hold(
        &self,
        pool: &Pool<'_>,
        types: &[u32],
        reqs: &Requirements,
        held: &[String],
        strict: bool,
    ) -> Result<Option<Vec<String>>, ReservedFail> {
        if !pool.slot_reservations.iter().any(Option::is_some) {
            return Ok(None);
        }
        let admitted = admitted_slots(pool, reqs);
        let mut compatible: Vec<String> = Vec::new();
        let mut next: Vec<String> = Vec::new();
        for &t in types {
            for &(slot, i) in &pool.offers[t as usize] {
                let Some(id) = &pool.slot_reservations[slot] else {
                    continue;
                };
                if !admitted[slot] || pool.slots[slot].1 != RESERVED || compatible.contains(id) {
                    continue;
                }
                // The offering's other labels: a pod may require a reservation type, or
                // (non-)interruptible capacity.
                let offering = &pool.types[t as usize].offerings[i];
                if !offering
                    .reservation
                    .as_ref()
                    .is_some_and(|c| labels_admit(reqs, c))
                {
                    continue;
                }
                compatible.push(id.clone());
                if self.can_hold(held, id) {
                    next.push(id.clone());
                }
            }
        }
        next.sort();
        if !strict {
            // Fallback mode (disruption's simulations): whatever is left, nothing refused.
            return Ok(Some(next));
        }
        if !compatible.is_empty() && next.is_empty() {
            compatible.sort();
            return Err(ReservedFail::AllHeld(compatible));
        }
        if !held.is_empty() && next.is_empty() {
            return Err(ReservedFail::WouldLoseReservations(held.to_vec()));
        }
        Ok(Some(next))
    }
}

/// Whether `reqs` admit the reservation's type and interruptibility labels.
fn labels_admit(reqs: &Requirements, c: &ReservedCapacity) -> bool {
    let interruptible = if c.interruptible { "true" } else { "false" };
    reqs.get_ref(labels::CAPACITY_RESERVATION_TYPE)
        .is_none_or(|r| r.has(c.reservation_type.as_str()))
        && reqs
            .get_ref(labels::CAPACITY_RESERVATION_INTERRUPTIBLE)
            .is_none_or(|r| r.has(interruptible))
}
