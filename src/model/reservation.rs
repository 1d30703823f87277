//! EC2 capacity reservations (On-Demand Capacity Reservations and capacity blocks) as Karpenter
//! sees them (AWS provider v1.3+, core feature gate `ReservedCapacity`): which reservations a node
//! class selects, and the reserved capacity an offering stands for.
//!
//! Upstream: `aws: pkg/apis/v1/ec2nodeclass.go` (`CapacityReservationSelectorTerm`),
//! `ec2nodeclass_status.go` (`CapacityReservation`), `pkg/providers/capacityreservation/types.go`
//! (`QueriesFromSelectorTerms`, `DescribeCapacityReservationsInput`: the filters a term becomes).

use std::collections::BTreeMap;
use std::fmt;

use super::labels;

/// `reservationType`: an ordinary ODCR or a capacity block (ML capacity for a fixed window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ReservationType {
    /// `default`: an On-Demand Capacity Reservation.
    #[default]
    Default,
    /// `capacity-block`.
    CapacityBlock,
}

impl ReservationType {
    /// The API spelling, also the value of `karpenter.k8s.aws/capacity-reservation-type`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationType::Default => "default",
            ReservationType::CapacityBlock => "capacity-block",
        }
    }

    /// Parses the API spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(ReservationType::Default),
            "capacity-block" => Some(ReservationType::CapacityBlock),
            _ => None,
        }
    }
}

impl fmt::Display for ReservationType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an offering of capacity type `reserved` launches into: one reservation and how many
/// instances it can still take (`Offering.ReservationCapacity`, from the reservation's
/// `AvailableInstanceCount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservedCapacity {
    /// `cr-…`.
    pub id: String,
    /// Its type.
    pub reservation_type: ReservationType,
    /// Whether EC2 may interrupt it (interruptible ODCRs).
    pub interruptible: bool,
    /// Instances it can still take. Karpenter never plans more NodeClaims on it in one
    /// scheduling simulation (`ReservationManager`).
    pub count: u32,
}

/// A reservation as EC2 describes it (or a custom catalog declares it): what selector terms
/// match against.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reservation {
    /// `cr-…`.
    pub id: String,
    /// Owning account, when known.
    pub owner_id: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// `open` or `targeted`, when known.
    pub instance_match_criteria: Option<String>,
}

/// One `spec.capacityReservationSelectorTerms` entry. Terms are ORed; within a term every
/// given field must match (an `id` term has nothing else, the CRD enforces it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapacityReservationTerm {
    /// `cr-…`.
    pub id: Option<String>,
    /// Owning account (12 digits); narrows a `tags`/`instanceMatchCriteria` term.
    pub owner_id: Option<String>,
    /// Tag filters: `*` selects any value of the key.
    pub tags: BTreeMap<String, String>,
    /// `open` or `targeted`.
    pub instance_match_criteria: Option<String>,
}

impl CapacityReservationTerm {
    /// Whether this term selects `r`, as the DescribeCapacityReservations queries it becomes
    /// would (`QueriesFromSelectorTerms`): an `id` is one query, `tags`/`instanceMatchCriteria`
    /// (narrowed by `ownerID`) another, and the term selects what either finds. A term with only
    /// `ownerID` becomes no query at all, so it selects nothing.
    pub fn selects(&self, r: &Reservation) -> bool {
        if self.id.as_ref().is_some_and(|id| *id == r.id) {
            return true;
        }
        if self.tags.is_empty() && self.instance_match_criteria.is_none() {
            return false;
        }
        let owner = self
            .owner_id
            .as_ref()
            .is_none_or(|o| r.owner_id.as_ref() == Some(o));
        let tags = self.tags.iter().all(|(k, v)| match r.tags.get(k) {
            Some(have) => v == "*" || have == v,
            None => false,
        });
        let criteria = self
            .instance_match_criteria
            .as_ref()
            .is_none_or(|c| r.instance_match_criteria.as_ref() == Some(c));
        owner && tags && criteria
    }
}

/// Whether `id` is a capacity reservation id, `^cr-[0-9a-z]+$` (the CRD's pattern).
pub fn is_reservation_id(id: &str) -> bool {
    id.strip_prefix("cr-").is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}

/// The labels naming the capacity reservation a node launched into (`aws v1.14.1:
/// pkg/cloudprovider/cloudprovider.go` `instanceToNodeClaim` sets them from the instance's
/// reservation; the AWS provider's well-known labels). A type's requirements list its
/// reservations whatever the node launched as, so these never come from them.
pub const RESERVATION_LABELS: [&str; 3] = [
    labels::CAPACITY_RESERVATION_ID,
    labels::CAPACITY_RESERVATION_TYPE,
    labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
];

/// Labels `node_labels` as a node launched into reservation `id` (of `reservation_type`,
/// interruptible or not): its id, type and interruptibility, in place of any such label it had.
/// The one rule for a reserved offering's labels — the plan's NodeClaim (`scheduling::finalize`)
/// and the launch template's user data (`cloud::launch`) both use it.
pub fn label_reserved(
    node_labels: &mut BTreeMap<String, String>,
    id: &str,
    reservation_type: ReservationType,
    interruptible: bool,
) {
    node_labels.insert(labels::CAPACITY_RESERVATION_ID.to_string(), id.to_string());
    node_labels.insert(
        labels::CAPACITY_RESERVATION_TYPE.to_string(),
        reservation_type.as_str().to_string(),
    );
    node_labels.insert(
        labels::CAPACITY_RESERVATION_INTERRUPTIBLE.to_string(),
        interruptible.to_string(),
    );
}

/// Whether any of `terms` selects `r` (no terms: nothing is selected).
pub fn selected(terms: &[CapacityReservationTerm], r: &Reservation) -> bool {
    terms.iter().any(|t| t.selects(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reserved node's labels: id, type and interruptibility, replacing stale ones.
    #[test]
    fn a_reserved_node_is_labelled_with_its_reservation() {
        let mut l = BTreeMap::from([
            (
                labels::CAPACITY_RESERVATION_ID.to_string(),
                "cr-old".to_string(),
            ),
            ("team".to_string(), "a".to_string()),
        ]);
        label_reserved(&mut l, "cr-0a1", ReservationType::CapacityBlock, true);
        assert_eq!(l[labels::CAPACITY_RESERVATION_ID], "cr-0a1");
        assert_eq!(l[labels::CAPACITY_RESERVATION_TYPE], "capacity-block");
        assert_eq!(l[labels::CAPACITY_RESERVATION_INTERRUPTIBLE], "true");
        assert_eq!(l["team"], "a");
        assert!(RESERVATION_LABELS.iter().all(|k| l.contains_key(*k)));
    }

    fn reservation() -> Reservation {
        Reservation {
            id: "cr-0a1".into(),
            owner_id: Some("123456789012".into()),
            tags: [("team".to_string(), "ml".to_string())].into(),
            instance_match_criteria: Some("targeted".into()),
        }
    }

    fn term(f: impl FnOnce(&mut CapacityReservationTerm)) -> CapacityReservationTerm {
        let mut t = CapacityReservationTerm::default();
        f(&mut t);
        t
    }

    /// The selection rules of `aws: pkg/providers/capacityreservation/types.go` (id query, or
    /// owner/tag/match-criteria filters with `*` as `tag-key`), as the provider's suite tests
    /// `pkg/providers/capacityreservation/suite_test.go` select by id and by tags.
    #[test]
    fn selector_terms_select_like_the_describe_filters() {
        let r = reservation();
        let cases: Vec<(&str, CapacityReservationTerm, bool)> = vec![
            ("id", term(|t| t.id = Some("cr-0a1".into())), true),
            ("other id", term(|t| t.id = Some("cr-0b2".into())), false),
            (
                "tag",
                term(|t| {
                    t.tags.insert("team".into(), "ml".into());
                }),
                true,
            ),
            (
                "tag wildcard",
                term(|t| {
                    t.tags.insert("team".into(), "*".into());
                }),
                true,
            ),
            (
                "tag value differs",
                term(|t| {
                    t.tags.insert("team".into(), "web".into());
                }),
                false,
            ),
            (
                "tag missing",
                term(|t| {
                    t.tags.insert("env".into(), "*".into());
                }),
                false,
            ),
            (
                "tag and owner",
                term(|t| {
                    t.tags.insert("team".into(), "ml".into());
                    t.owner_id = Some("123456789012".into());
                }),
                true,
            ),
            (
                "tag and other owner",
                term(|t| {
                    t.tags.insert("team".into(), "ml".into());
                    t.owner_id = Some("210987654321".into());
                }),
                false,
            ),
            (
                "owner alone is no query",
                term(|t| t.owner_id = Some("123456789012".into())),
                false,
            ),
            (
                "match criteria",
                term(|t| t.instance_match_criteria = Some("targeted".into())),
                true,
            ),
            (
                "other match criteria",
                term(|t| t.instance_match_criteria = Some("open".into())),
                false,
            ),
        ];
        for (name, t, want) in cases {
            assert_eq!(t.selects(&r), want, "{name}");
        }
        assert!(!selected(&[], &r), "no terms select nothing");
    }
}
