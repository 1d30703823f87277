//! Instance types and their offerings, as the solver sees them: requirements (labels), capacity,
//! overhead and priced offerings per zone and capacity type.

use super::labels;
use super::requirements::{Operator, Requirement, Requirements};
use super::reservation::ReservedCapacity;
use super::resources::Resources;

/// `on-demand`.
pub const ON_DEMAND: &str = "on-demand";
/// `spot`.
pub const SPOT: &str = "spot";
/// `reserved`.
pub const RESERVED: &str = "reserved";

/// Where and how an instance type can be bought.
#[derive(Debug, Clone, PartialEq)]
pub struct Offering {
    /// Availability zone.
    pub zone: String,
    /// `on-demand`, `spot` or `reserved`.
    pub capacity_type: String,
    /// USD per hour.
    pub price: f64,
    /// Whether it can be launched now (false after an ICE, or when unpriced).
    pub available: bool,
    /// For `reserved`: the reservation it launches into (each reservation is its own offering).
    pub reservation: Option<ReservedCapacity>,
}

impl Offering {
    /// The offering's own requirements: zone, capacity type and — as the AWS provider builds
    /// them — the reservation's id, type and interruptibility, which on-demand and spot
    /// offerings do not have (`DoesNotExist`; `aws: pkg/providers/instancetype/offering/
    /// base_resolver.go`, `reserved_capacity_resolver.go`).
    pub fn requirements(&self) -> Requirements {
        let mut r = Requirements::new();
        r.add(Requirement::single(labels::ZONE, &self.zone));
        r.add(Requirement::single(
            labels::CAPACITY_TYPE,
            &self.capacity_type,
        ));
        let none = || std::iter::empty::<String>();
        match &self.reservation {
            Some(c) => {
                r.add(Requirement::single(labels::CAPACITY_RESERVATION_ID, &c.id));
                r.add(Requirement::single(
                    labels::CAPACITY_RESERVATION_TYPE,
                    c.reservation_type.as_str(),
                ));
                r.add(Requirement::single(
                    labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
                    if c.interruptible { "true" } else { "false" },
                ));
            }
            None => {
                for key in [
                    labels::CAPACITY_RESERVATION_ID,
                    labels::CAPACITY_RESERVATION_TYPE,
                    labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
                ] {
                    r.add(Requirement::new(key, Operator::DoesNotExist, none()));
                }
            }
        }
        r
    }

    /// The reservation id, for a reserved offering.
    pub fn reservation_id(&self) -> Option<&str> {
        self.reservation.as_ref().map(|c| c.id.as_str())
    }
}

/// What the node reserves for itself: subtracted from capacity to get allocatable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overhead {
    /// kube-reserved.
    pub kube_reserved: Resources,
    /// system-reserved.
    pub system_reserved: Resources,
    /// Hard eviction thresholds.
    pub eviction_threshold: Resources,
}

impl Overhead {
    /// The sum of all three.
    pub fn total(&self) -> Resources {
        self.kube_reserved
            .add(&self.system_reserved)
            .add(&self.eviction_threshold)
    }
}

/// An instance type, priced and sized for one node class.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceType {
    /// Name, e.g. `c6a.2xlarge`.
    pub name: String,
    /// Labels as requirements; zone and capacity type list every offering's values.
    pub requirements: Requirements,
    /// Capacity (what the node reports; limits count this).
    pub capacity: Resources,
    /// Overhead.
    pub overhead: Overhead,
    /// Offerings.
    pub offerings: Vec<Offering>,
}

impl InstanceType {
    /// `capacity - overhead` (Karpenter's `computeAllocatable`, hugepages aside).
    pub fn allocatable(&self) -> Resources {
        self.capacity.sub(&self.overhead.total())
    }

    /// The cheapest available offering compatible with `reqs` (zone / capacity type), if any.
    pub fn cheapest_offering(&self, reqs: &Requirements) -> Option<&Offering> {
        let zone = reqs.get_ref(labels::ZONE);
        let ct = reqs.get_ref(labels::CAPACITY_TYPE);
        self.offerings
            .iter()
            .filter(|o| o.available)
            .filter(|o| zone.is_none_or(|z| z.has(&o.zone)))
            .filter(|o| ct.is_none_or(|c| c.has(&o.capacity_type)))
            .min_by(|a, b| {
                a.price
                    .total_cmp(&b.price)
                    .then_with(|| a.zone.cmp(&b.zone))
            })
    }
}
