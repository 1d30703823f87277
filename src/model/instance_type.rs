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
    /// The zone's id (`use1-az4`, `topology.k8s.aws/zone-id`) from the node class's
    /// `status.subnets[].zoneID`; `None` when the class does not say (no requirement then).
    pub zone_id: Option<String>,
}

impl Offering {
    /// The offering's own requirements: zone, capacity type and — as the AWS provider builds
    /// them — the reservation's id, type and interruptibility, which on-demand and spot
    /// offerings do not have (`DoesNotExist`; `aws: pkg/providers/instancetype/offering/
    /// base_resolver.go`, `reserved_capacity_resolver.go`), and the zone id when the node
    /// class's subnets give one (`base_resolver.go`: only when the zone has zone info).
    pub fn requirements(&self) -> Requirements {
        let mut r = Requirements::new();
        r.add(Requirement::single(labels::ZONE, &self.zone));
        if let Some(id) = &self.zone_id {
            r.add(Requirement::single(labels::ZONE_ID, id));
        }
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

    /// Whether a `topology.k8s.aws/zone-id` requirement (if any) admits this offering: one
    /// without a zone id has no requirement on the key, so admits any (upstream's
    /// `Requirements.Intersects` only checks keys both sides define).
    pub fn zone_id_admitted(&self, zone_ids: Option<&Requirement>) -> bool {
        zone_id_admits(zone_ids, self.zone_id.as_deref())
    }
}

/// Whether a `topology.k8s.aws/zone-id` requirement admits an offering with `zone_id`
/// ([`Offering::zone_id_admitted`]; `None`: no requirement on either side, admitted).
pub fn zone_id_admits(r: Option<&Requirement>, zone_id: Option<&str>) -> bool {
    match (r, zone_id) {
        (Some(r), Some(id)) => r.has(id),
        _ => true,
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
    /// Karpenter's `computeAllocatable` (`core v1.14.1: pkg/cloudprovider/types.go`):
    /// `resources.Subtract(capacity, overhead)` — only the resources the capacity lists, so a
    /// `pid` in `kubeReserved` / `systemReserved` (valid keys of the EC2NodeClass CRD) reserves
    /// nothing a pod can ask for — then memory loses the capacity's hugepages, floored at 0
    /// (NodeOverlays can add `hugepages-*` capacity).
    pub fn allocatable(&self) -> Resources {
        let mut out = self.capacity.subtract_listed(&self.overhead.total());
        let huge = self
            .capacity
            .extended
            .iter()
            .filter(|(n, _)| n.starts_with("hugepages-"))
            .fold(None, |acc: Option<i64>, (_, v)| {
                Some(acc.unwrap_or(0).saturating_add(*v))
            });
        if let Some(huge) = huge {
            out.memory = out.memory.saturating_sub(huge).max(0);
        }
        out
    }

    /// The cheapest available offering compatible with `reqs` (zone, zone id, capacity type), if
    /// any.
    pub fn cheapest_offering(&self, reqs: &Requirements) -> Option<&Offering> {
        let zone = reqs.get_ref(labels::ZONE);
        let zone_id = reqs.get_ref(labels::ZONE_ID);
        let ct = reqs.get_ref(labels::CAPACITY_TYPE);
        self.offerings
            .iter()
            .filter(|o| o.available)
            .filter(|o| zone.is_none_or(|z| z.has(&o.zone)))
            .filter(|o| o.zone_id_admitted(zone_id))
            .filter(|o| ct.is_none_or(|c| c.has(&o.capacity_type)))
            .min_by(|a, b| {
                a.price
                    .total_cmp(&b.price)
                    .then_with(|| a.zone.cmp(&b.zone))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(capacity: &[(&str, &str)], kube_reserved: &[(&str, &str)]) -> InstanceType {
        InstanceType {
            name: "m5.large".into(),
            requirements: Requirements::default(),
            capacity: Resources::from_pairs(capacity),
            overhead: Overhead {
                kube_reserved: Resources::from_pairs(kube_reserved),
                system_reserved: Resources::from_pairs(&[("pid", "100")]),
                eviction_threshold: Resources::from_pairs(&[("memory", "100Mi")]),
            },
            offerings: vec![],
        }
    }

    /// `core v1.14.1: pkg/cloudprovider/types.go` `computeAllocatable` (`resources.Subtract`, then
    /// hugepages off memory); scenario from a swept EC2NodeClass with `kubeReserved.pid` /
    /// `systemReserved.pid`: Karpenter plans the pod, we found no type ("no single instance type
    /// fits") because allocatable pid went negative.
    #[test]
    fn allocatable_ignores_reserved_resources_the_capacity_lacks_and_takes_hugepages_off_memory() {
        let it = sized(
            &[("cpu", "2"), ("memory", "8Gi"), ("pods", "29")],
            &[("cpu", "70m"), ("memory", "574Mi"), ("pid", "1000")],
        );
        let a = it.allocatable();
        assert_eq!(a.get("pid"), 0);
        assert_eq!(a.get("memory"), (8192 - 574 - 100) * 1024 * 1024 * 1000);
        assert!(Resources::from_pairs(&[("cpu", "1"), ("pods", "1")]).fits_in(&a));

        let huge = sized(
            &[
                ("cpu", "2"),
                ("memory", "8Gi"),
                ("pods", "29"),
                ("hugepages-2Mi", "1Gi"),
                ("hugepages-1Gi", "2Gi"),
            ],
            &[("memory", "574Mi")],
        );
        assert_eq!(
            huge.allocatable().get("memory"),
            (8192 - 574 - 100 - 3072) * 1024 * 1024 * 1000
        );
        assert_eq!(
            huge.allocatable().get("hugepages-2Mi"),
            1024 * 1024 * 1024 * 1000
        );
        let all_huge = sized(&[("memory", "1Gi"), ("hugepages-2Mi", "2Gi")], &[]);
        assert_eq!(all_huge.allocatable().get("memory"), 0, "floored at 0");
    }
}
