//! The offerings this run's launches found without capacity (`aws v1.14.1:
//! pkg/cache/unavailableofferings.go`, filled by `pkg/providers/instance/instance.go`
//! `updateUnavailableOfferingsCache`; tests `pkg/cache/suite_test.go`,
//! `pkg/providers/instance/suite_test.go`, `pkg/cloudprovider/suite_test.go`).
//!
//! A CreateFleet pool answering an unfulfillable-capacity code ([`UNFULFILLABLE_CAPACITY_CODES`]:
//! `InsufficientInstanceCapacity`, `InsufficientFreeAddressesInSubnet`, …) marks its (capacity
//! type, instance type, zone) unavailable for [`UNAVAILABLE_OFFERINGS_TTL_SECONDS`] (three
//! minutes, `pkg/cache/cache.go` `UnavailableOfferingsTTL`; marking again restarts the clock,
//! `SetDefault`). The capacity type is the launch's (`on-demand` or `spot`); a reserved launch
//! marks its reservations instead (`LaunchError::exhausted_reservations`, `MarkUnavailable` of
//! the capacity-reservation provider). `AuthFailure.ServiceLinkedRoleCreationNotPermitted`
//! marks all of spot unavailable (`MarkCapacityTypeUnavailable`).
//!
//! Karpenter's instance-type provider then lists those offerings as unavailable: the scheduler
//! does not plan them ([`UnavailableOfferings::mark_offerings`]) and a launch does not ask for
//! them ([`UnavailableOfferings::filter_claim`]; `cloudprovider.go` `Create` filters the
//! NodeClaim's types to available offerings and, with none left, fails with "all requested
//! instance types were unavailable during launch" before any CreateFleet).
//!
//! Not modelled: the placement-group scoping of entries (`WithPlacementGroup`, the spread
//! group's 7-per-zone limit marking every type of the zone): ours are never scoped.

use std::borrow::Cow;

use super::*;
use crate::model::instance_type::InstanceType;

/// How long an offering stays unavailable after an insufficient-capacity answer (`aws v1.14.1:
/// pkg/cache/cache.go` `UnavailableOfferingsTTL`).
pub const UNAVAILABLE_OFFERINGS_TTL_SECONDS: i64 = 180;

/// The fleet error code that makes all of spot unavailable (`aws v1.14.1: pkg/errors/errors.go`
/// `ServiceLinkedRoleCreationNotPermittedErrorCode`).
pub const SPOT_SERVICE_LINKED_ROLE_NOT_PERMITTED: &str =
    "AuthFailure.ServiceLinkedRoleCreationNotPermitted";

/// Offerings (and capacity types) found without capacity, with when (Unix seconds) and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnavailableOfferings {
    /// (capacity type, instance type, zone) → (marked at, error code).
    offerings: BTreeMap<(String, String, String), (i64, String)>,
    /// Capacity type → (marked at, error code).
    capacity_types: BTreeMap<String, (i64, String)>,
}

impl UnavailableOfferings {
    /// Records the pool errors of a launch of `capacity_type` (whether it launched or not:
    /// Karpenter reads `CreateFleetOutput.Errors` either way). Reserved launches mark nothing
    /// here.
    pub fn record(&mut self, capacity_type: &str, errors: &[PoolError], now: i64) {
        if capacity_type == RESERVED {
            return;
        }
        for e in errors {
            if UNFULFILLABLE_CAPACITY_CODES.contains(&e.code.as_str())
                && !e.instance_type.is_empty()
                && !e.zone.is_empty()
            {
                self.offerings.insert(
                    (
                        capacity_type.to_string(),
                        e.instance_type.clone(),
                        e.zone.clone(),
                    ),
                    (now, e.code.clone()),
                );
            }
            if e.code == SPOT_SERVICE_LINKED_ROLE_NOT_PERMITTED {
                self.capacity_types
                    .insert("spot".to_string(), (now, e.code.clone()));
            }
        }
    }

    /// Why (the error code) an offering is unavailable at `now`, if it is.
    pub fn reason(
        &self,
        capacity_type: &str,
        instance_type: &str,
        zone: &str,
        now: i64,
    ) -> Option<&str> {
        fn live(entry: &(i64, String), now: i64) -> Option<&str> {
            (now - entry.0 < UNAVAILABLE_OFFERINGS_TTL_SECONDS).then_some(entry.1.as_str())
        }
        self.capacity_types
            .get(capacity_type)
            .and_then(|e| live(e, now))
            .or_else(|| {
                self.offerings
                    .get(&(
                        capacity_type.to_string(),
                        instance_type.to_string(),
                        zone.to_string(),
                    ))
                    .and_then(|e| live(e, now))
            })
    }

    /// How many offerings and capacity types were ever marked this run (expired ones too): a
    /// number that only grows, for telling whether a launch found something new.
    pub fn marked(&self) -> usize {
        self.offerings.len() + self.capacity_types.len()
    }

    /// How many offerings (capacity types counted as one) are unavailable at `now`, and when
    /// the last of them is available again (Unix seconds); `None` when none is.
    pub fn held_at(&self, now: i64) -> Option<(usize, i64)> {
        let until: Vec<i64> = self
            .offerings
            .values()
            .chain(self.capacity_types.values())
            .map(|(at, _)| at + UNAVAILABLE_OFFERINGS_TTL_SECONDS)
            .filter(|until| *until > now)
            .collect();
        Some((until.len(), until.into_iter().max()?))
    }

    /// Whether nothing is unavailable at `now`.
    pub fn is_empty_at(&self, now: i64) -> bool {
        let live = |(at, _): &(i64, String)| now - at < UNAVAILABLE_OFFERINGS_TTL_SECONDS;
        !self.offerings.values().any(live) && !self.capacity_types.values().any(live)
    }

    /// Marks the unavailable offerings of `types` so (`Offering::available = false`): what the
    /// instance-type provider lists after an ICE, so the next plan does not choose them.
    pub fn mark_offerings(&self, types: &mut [InstanceType], now: i64) {
        if self.is_empty_at(now) {
            return;
        }
        for t in types {
            for o in &mut t.offerings {
                if o.reservation.is_none()
                    && self
                        .reason(&o.capacity_type, &t.name, &o.zone, now)
                        .is_some()
                {
                    o.available = false;
                }
            }
        }
    }

    /// `claim` without the launch offerings unavailable at `now` (unchanged when none is), and
    /// the offerings left out as pool errors naming the code that made them unavailable. A
    /// reserved launch is left alone (its reservations are planned around instead).
    pub fn filter_claim<'c>(
        &self,
        claim: &'c PlannedNodeClaim,
        now: i64,
    ) -> (Cow<'c, PlannedNodeClaim>, Vec<PoolError>) {
        let capacity = capacity_type(claim);
        if capacity == RESERVED || self.is_empty_at(now) {
            return (Cow::Borrowed(claim), Vec::new());
        }
        let mut dropped = Vec::new();
        let mut kept = Vec::new();
        for o in &claim.launch.offerings {
            let (Some(it), Some(zone)) = (
                claim.instance_types.get(o.option as usize),
                claim.zones.get(o.zone as usize),
            ) else {
                kept.push(*o);
                continue;
            };
            let instance_type = &*it.name;
            match self.reason(capacity, instance_type, zone, now) {
                Some(code) => dropped.push(PoolError {
                    instance_type: instance_type.to_string(),
                    zone: zone.to_string(),
                    subnet_id: String::new(),
                    capacity_type: capacity.to_string(),
                    reservation: None,
                    code: code.to_string(),
                    message: format!(
                        "{capacity} {instance_type} in {zone} answered {code} earlier in this run: \
                         left out for {UNAVAILABLE_OFFERINGS_TTL_SECONDS}s"
                    ),
                }),
                None => kept.push(*o),
            }
        }
        if dropped.is_empty() {
            return (Cow::Borrowed(claim), Vec::new());
        }
        let mut out = claim.clone();
        if let Some(first) = kept.first() {
            if let (Some(it), Some(zone)) = (
                claim.instance_types.get(first.option as usize),
                claim.zones.get(first.zone as usize),
            ) {
                out.launch.instance_type = it.name.to_string();
                out.launch.zone = zone.clone();
                out.launch.price = first.price;
            }
        }
        out.launch.offerings = kept;
        (Cow::Owned(out), dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::instance_type::Offering;
    use crate::model::requirements::Requirements;
    use crate::model::resources::Resources;

    fn ice(instance_type: &str, zone: &str, code: &str) -> PoolError {
        PoolError {
            instance_type: instance_type.into(),
            zone: zone.into(),
            subnet_id: "subnet-1".into(),
            capacity_type: String::new(),
            reservation: None,
            code: code.into(),
            message: String::new(),
        }
    }

    /// `aws v1.14.1: pkg/providers/instance/suite_test.go` "should return an ICE error when all
    /// attempted instance types return an ICE error": a spot launch whose m5.xlarge pools in
    /// zones 1a and 1b answer `InsufficientInstanceCapacity` marks those spot offerings, not the
    /// on-demand ones; the on-demand launch that follows marks the on-demand ones too.
    /// `pkg/cache/suite_test.go` (`UnavailableOfferingsTTL`): an entry lasts three minutes from
    /// its last mark.
    #[test]
    fn an_ice_marks_the_launch_capacity_type_for_three_minutes() {
        let mut u = UnavailableOfferings::default();
        let errors = [
            ice("m5.xlarge", "test-zone-1a", "InsufficientInstanceCapacity"),
            ice("m5.xlarge", "test-zone-1b", "InsufficientInstanceCapacity"),
        ];
        u.record("spot", &errors, 1000);
        for zone in ["test-zone-1a", "test-zone-1b"] {
            assert_eq!(
                u.reason("spot", "m5.xlarge", zone, 1000),
                Some("InsufficientInstanceCapacity")
            );
            assert_eq!(u.reason("on-demand", "m5.xlarge", zone, 1000), None);
        }
        assert_eq!(u.reason("spot", "m5.large", "test-zone-1a", 1000), None);
        u.record("on-demand", &errors, 1010);
        // (capacity type, zone, at) → whether m5.xlarge is unavailable then.
        let marked = |u: &UnavailableOfferings, capacity: &str, zone: &str, at: i64| {
            u.reason(capacity, "m5.xlarge", zone, at).is_some()
        };
        assert!(marked(&u, "on-demand", "test-zone-1a", 1010));
        // Three minutes from the mark: gone; marking again restarts the clock.
        assert!(marked(&u, "spot", "test-zone-1a", 1179));
        assert!(!marked(&u, "spot", "test-zone-1a", 1180));
        u.record("spot", &errors[..1], 1180);
        assert!(marked(&u, "spot", "test-zone-1a", 1300));
        assert!(!marked(&u, "spot", "test-zone-1b", 1300));
        assert!(!u.is_empty_at(1300));
        assert!(u.is_empty_at(1360));
        assert_eq!(u.marked(), 4);
    }

    /// "should return an ICE error when spot instances are used and SpotSLR can't be created":
    /// `AuthFailure.ServiceLinkedRoleCreationNotPermitted` makes every spot offering unavailable
    /// (m5.large too, never asked for), on-demand untouched (`MarkCapacityTypeUnavailable`).
    /// "should return an ICE error when max fleet count is reached": `MaxFleetCountExceeded` is
    /// an unfulfillable-capacity code like the others.
    #[test]
    fn a_spot_service_linked_role_error_makes_all_of_spot_unavailable() {
        let mut u = UnavailableOfferings::default();
        u.record(
            "spot",
            &[ice(
                "m5.xlarge",
                "test-zone-1a",
                SPOT_SERVICE_LINKED_ROLE_NOT_PERMITTED,
            )],
            0,
        );
        assert!(u.reason("spot", "m5.large", "test-zone-1b", 0).is_some());
        assert!(u
            .reason("on-demand", "m5.xlarge", "test-zone-1a", 0)
            .is_none());
        u.record(
            "on-demand",
            &[ice("m5.xlarge", "test-zone-1a", "MaxFleetCountExceeded")],
            0,
        );
        assert!(u
            .reason("on-demand", "m5.xlarge", "test-zone-1a", 0)
            .is_some());
    }

    /// `pkg/providers/instance/suite_test.go` "should not mark capacity reservations unavailable
    /// for RequestLimitExceeded CreateFleet errors" (aws 6613010f5): only unfulfillable-capacity
    /// codes mark anything; and a reserved launch marks its reservations, not offerings
    /// (`updateUnavailableOfferingsCache` returns before them for other capacity types).
    #[test]
    fn other_errors_and_reserved_launches_mark_no_offering() {
        let mut u = UnavailableOfferings::default();
        u.record(
            "on-demand",
            &[
                ice("m5.xlarge", "test-zone-1a", "RequestLimitExceeded"),
                ice("m5.xlarge", "test-zone-1a", "UnauthorizedOperation"),
                ice("", "", "InsufficientInstanceCapacity"),
            ],
            0,
        );
        u.record(
            RESERVED,
            &[ice(
                "m5.xlarge",
                "test-zone-1a",
                "InsufficientInstanceCapacity",
            )],
            0,
        );
        assert_eq!(u.marked(), 0);
        assert!(u.is_empty_at(0));
    }

    /// What the next plan sees (`instancetype.go` offerings built with `IsUnavailable`): the
    /// ICE'd (capacity type, type, zone) offering unavailable, the same type's others and the
    /// reserved ones (planned through their reservations) as they were.
    #[test]
    fn the_next_plan_lists_the_iced_offering_unavailable() {
        let offering = |zone: &str, capacity_type: &str| Offering {
            zone: zone.into(),
            capacity_type: capacity_type.into(),
            price: 0.1,
            available: true,
            reservation: None,
            zone_id: None,
        };
        let mut types = vec![InstanceType {
            name: "c6a.large".into(),
            requirements: Requirements::new(),
            capacity: Resources::new(),
            overhead: Default::default(),
            offerings: vec![
                offering("us-east-1a", "on-demand"),
                offering("us-east-1a", "spot"),
                offering("us-east-1b", "on-demand"),
            ],
        }];
        let mut u = UnavailableOfferings::default();
        u.record(
            "on-demand",
            &[ice(
                "c6a.large",
                "us-east-1a",
                "InsufficientInstanceCapacity",
            )],
            50,
        );
        u.mark_offerings(&mut types, 60);
        let available: Vec<bool> = types[0].offerings.iter().map(|o| o.available).collect();
        assert_eq!(available, [false, true, true]);
    }
}
