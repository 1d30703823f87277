//! Capacity reservations read live: an EC2NodeClass's `capacityReservationSelectorTerms`
//! resolved through DescribeCapacityReservations the way Karpenter's AWS provider does, reduced
//! to the model the custom catalog already uses ([`Reservation`] for selection,
//! [`ReservedCapacity`] for the offering), and handed to the live catalog
//! ([`crate::cloud::Catalog::with_reservations`]), which adds one reserved offering per
//! reservation a class selects.
//!
//! Upstream (`aws v1.14.1`):
//! - `pkg/providers/capacityreservation/types.go` `QueriesFromSelectorTerms`: a term with an
//!   `id` is one query (`CapacityReservationIds`); a term with `tags` or
//!   `instanceMatchCriteria` another (filters `owner-id`, `tag:KEY`/`tag-key` for `*`,
//!   `instance-match-criteria`); a term with only `ownerID` none. Every query filters
//!   `state=active`.
//! - `provider.go` `List`: all pages of each query; a `NotFound` on an id query is no
//!   reservation, not an error; the results deduplicated by id and those whose `EndDate` is past
//!   dropped; `AvailableInstanceCount` is the reservation's availability.
//! - `pkg/apis/v1/ec2nodeclass_status.go` `CapacityReservationFromEC2`: an instance match
//!   criteria other than `open`/`targeted` or an unknown reservation type is skipped; a
//!   capacity block within 40 minutes of its end is `expiring`.
//! - `pkg/providers/instancetype/offering/reserved_capacity_resolver.go`: the offering is
//!   available when the reservation has instances left, is in one of the type's zones and is
//!   not expiring.
//! - `pkg/providers/instance/instance.go` `updateUnavailableOfferingsCache`: an ICE on a
//!   reserved pool marks its reservation unavailable (`MarkUnavailable`, count 0) until the
//!   next DescribeCapacityReservations.

use std::collections::{BTreeMap, BTreeSet};

use super::types::{CapacityReservation, Cloud, CloudError, Filter, ReservationQuery};
use crate::model::reservation::{
    CapacityReservationTerm, Reservation, ReservationType, ReservedCapacity,
};

/// How long before its end a capacity block stops taking launches
/// (`capacityReservationExpirationPeriod`).
pub const CAPACITY_BLOCK_EXPIRATION_SECONDS: i64 = 40 * 60;

/// One DescribeCapacityReservations query of a selector term (`Query`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Query {
    /// A term's `id`.
    Id(String),
    /// A term's `tags`/`instanceMatchCriteria`, narrowed by its `ownerID`.
    Filtered {
        /// `ownerID`.
        owner_id: Option<String>,
        /// `tags` (`*`: the key exists).
        tags: BTreeMap<String, String>,
        /// `instanceMatchCriteria`.
        instance_match_criteria: Option<String>,
    },
}

/// The queries of `terms` (`QueriesFromSelectorTerms`), in order.
pub fn queries(terms: &[CapacityReservationTerm]) -> Vec<Query> {
    let mut out = Vec::new();
    for t in terms {
        if let Some(id) = t.id.as_ref().filter(|id| !id.is_empty()) {
            out.push(Query::Id(id.clone()));
        }
        if !t.tags.is_empty() || t.instance_match_criteria.is_some() {
            out.push(Query::Filtered {
                owner_id: t.owner_id.clone(),
                tags: t.tags.clone(),
                instance_match_criteria: t.instance_match_criteria.clone(),
            });
        }
    }
    out
}

impl Query {
    /// The request (`DescribeCapacityReservationsInput`).
    pub fn request(&self) -> ReservationQuery {
        let mut filters = vec![Filter::new("state", ["active"])];
        match self {
            Query::Id(id) => ReservationQuery {
                ids: vec![id.clone()],
                filters,
            },
            Query::Filtered {
                owner_id,
                tags,
                instance_match_criteria,
            } => {
                if let Some(owner) = owner_id {
                    filters.push(Filter::new("owner-id", [owner.clone()]));
                }
                filters.extend(Filter::tags(tags, super::types::TagValues::Literal));
                if let Some(c) = instance_match_criteria {
                    filters.push(Filter::new("instance-match-criteria", [c.clone()]));
                }
                ReservationQuery {
                    ids: Vec::new(),
                    filters,
                }
            }
        }
    }
}

/// A reservation as a node class's status would hold it, with its availability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveReservation {
    /// What selector terms match (id, owner, tags, match criteria).
    pub reservation: Reservation,
    /// Instance type.
    pub instance_type: String,
    /// Zone.
    pub zone: String,
    /// The offering's reservation: type, interruptibility, instances left.
    pub capacity: ReservedCapacity,
    /// A capacity block within [`CAPACITY_BLOCK_EXPIRATION_SECONDS`] of its end: listed, not
    /// launched into.
    pub expiring: bool,
}

/// The reservations every queried term resolved to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reservations {
    /// Query → the ids it found (after Karpenter's filtering).
    by_query: BTreeMap<Query, Vec<String>>,
    /// Id → reservation.
    by_id: BTreeMap<String, LiveReservation>,
    /// Why reservations EC2 returned were skipped (one line each), for `-v`.
    pub skipped: Vec<String>,
}

impl Reservations {
    /// The reservations `terms` select: those their queries found, by id.
    pub fn selected(&self, terms: &[CapacityReservationTerm]) -> Vec<&LiveReservation> {
        let ids: BTreeSet<&String> = queries(terms)
            .iter()
            .filter_map(|q| self.by_query.get(q))
            .flatten()
            .collect();
        ids.into_iter()
            .filter_map(|id| self.by_id.get(id))
            .collect()
    }

    /// Every reservation found.
    pub fn all(&self) -> impl Iterator<Item = &LiveReservation> {
        self.by_id.values()
    }

    /// Whether no query found anything.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Marks reservations as having no instance left (`MarkUnavailable`): a launch into them
    /// answered insufficient capacity.
    pub fn mark_unavailable<'a>(&mut self, ids: impl IntoIterator<Item = &'a String>) {
        for id in ids {
            if let Some(r) = self.by_id.get_mut(id) {
                r.capacity.count = 0;
            }
        }
    }
}

/// Resolves the selector terms of every class (`classes`: each class's terms) with one
/// DescribeCapacityReservations per distinct query. `now`: Unix seconds.
pub fn list(
    cloud: &dyn Cloud,
    classes: &[&[CapacityReservationTerm]],
    now: i64,
) -> Result<Reservations, CloudError> {
    let mut out = Reservations::default();
    let distinct: BTreeSet<Query> = classes.iter().flat_map(|t| queries(t)).collect();
    for query in distinct {
        let found = match cloud.describe_capacity_reservations(&query.request()) {
            Ok(found) => found,
            Err(e) if matches!(query, Query::Id(_)) && is_not_found(&e) => Vec::new(),
            Err(e) => return Err(e),
        };
        let mut ids = Vec::new();
        for r in found {
            // `filterReservations`: a reservation whose end is past is gone.
            if r.end_date.is_some_and(|end| end <= now) {
                continue;
            }
            match from_ec2(&r, now) {
                Ok(live) => {
                    ids.push(live.reservation.id.clone());
                    out.by_id.insert(live.reservation.id.clone(), live);
                }
                Err(why) => out.skipped.push(why),
            }
        }
        ids.sort();
        ids.dedup();
        out.by_query.insert(query, ids);
    }
    out.skipped.sort();
    out.skipped.dedup();
    Ok(out)
}

/// EC2's "no such reservation" (`InvalidCapacityReservationId.NotFound`, `…Malformed`).
fn is_not_found(e: &CloudError) -> bool {
    e.code()
        .is_some_and(|c| c.starts_with("InvalidCapacityReservationId") || c.ends_with(".NotFound"))
}

/// `CapacityReservationFromEC2`.
pub fn from_ec2(r: &CapacityReservation, now: i64) -> Result<LiveReservation, String> {
    if !matches!(r.instance_match_criteria.as_str(), "open" | "targeted") {
        return Err(format!(
            "capacity reservation {}: unsupported instance match criteria {:?}",
            r.id, r.instance_match_criteria
        ));
    }
    let kind = if r.reservation_type.is_empty() {
        ReservationType::Default
    } else {
        ReservationType::parse(&r.reservation_type).ok_or_else(|| {
            format!(
                "capacity reservation {}: unsupported reservation type {:?}",
                r.id, r.reservation_type
            )
        })?
    };
    let expiring = kind == ReservationType::CapacityBlock
        && r.end_date
            .is_some_and(|end| now >= end - CAPACITY_BLOCK_EXPIRATION_SECONDS);
    Ok(LiveReservation {
        reservation: Reservation {
            id: r.id.clone(),
            owner_id: Some(r.owner_id.clone()),
            tags: r.tags.clone(),
            instance_match_criteria: Some(r.instance_match_criteria.clone()),
        },
        instance_type: r.instance_type.clone(),
        zone: r.zone.clone(),
        capacity: ReservedCapacity {
            id: r.id.clone(),
            reservation_type: kind,
            interruptible: r.interruptible,
            count: u32::try_from(r.available.max(0)).unwrap_or(u32::MAX),
        },
        expiring,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::fake::FakeCloud;

    fn ec2(id: &str, f: impl FnOnce(&mut CapacityReservation)) -> CapacityReservation {
        let mut r = CapacityReservation {
            id: id.into(),
            instance_type: "m5.large".into(),
            zone: "us-east-1a".into(),
            owner_id: "123456789012".into(),
            instance_match_criteria: "targeted".into(),
            reservation_type: "default".into(),
            available: 2,
            total: 2,
            state: "active".into(),
            ..CapacityReservation::default()
        };
        f(&mut r);
        r
    }

    fn term(f: impl FnOnce(&mut CapacityReservationTerm)) -> CapacityReservationTerm {
        let mut t = CapacityReservationTerm::default();
        f(&mut t);
        t
    }

    /// `aws v1.14.1: pkg/providers/capacityreservation/types.go` `QueriesFromSelectorTerms` and
    /// `DescribeCapacityReservationsInput`: the requests the terms become.
    #[test]
    fn terms_become_the_provider_queries() {
        let terms = [
            term(|t| t.id = Some("cr-1".into())),
            term(|t| {
                t.owner_id = Some("210987654321".into());
                t.tags.insert("team".into(), "ml".into());
                t.tags.insert("env".into(), "*".into());
                t.instance_match_criteria = Some("open".into());
            }),
            term(|t| t.owner_id = Some("123456789012".into())),
        ];
        let got: Vec<String> = queries(&terms)
            .iter()
            .map(|q| q.request().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "ids=[cr-1] state=active",
                "state=active owner-id=210987654321 tag-key=env tag:team=ml instance-match-criteria=open",
            ],
            "an ownerID alone is no query"
        );
    }

    /// `aws v1.14.1: pkg/controllers/nodeclass/capacityreservation_test.go` "should resolve
    /// capacity reservations by ID", "… by tags", "should exclude expired capacity
    /// reservations", "should discover capacity block reservations", "should mark capacity
    /// blocks as expiring 40 minutes prior to their endDate" (`provider.go` `List`: one call per
    /// query, deduplicated, a `NotFound` id ignored; `CapacityReservationFromEC2`: unsupported
    /// match criteria skipped).
    #[test]
    fn list_resolves_each_query_once_and_filters_like_the_provider() {
        let now = 1_000_000;
        let cloud = FakeCloud::new();
        *cloud.reservations.borrow_mut() = vec![
            ec2("cr-1", |r| {
                r.tags.insert("team".into(), "ml".into());
            }),
            ec2("cr-2", |r| {
                r.tags.insert("team".into(), "ml".into());
                r.end_date = Some(now - 1);
            }),
            ec2("cr-3", |r| {
                r.tags.insert("team".into(), "ml".into());
                r.instance_match_criteria = "future".into();
            }),
            ec2("cr-4", |r| {
                r.tags.insert("team".into(), "ml".into());
                r.reservation_type = "capacity-block".into();
                r.end_date = Some(now + 10 * 60);
            }),
            ec2("cr-5", |r| {
                r.tags.insert("team".into(), "ml".into());
                r.state = "cancelled".into();
            }),
            ec2("cr-6", |r| r.available = 0),
        ];
        let by_tag = [term(|t| {
            t.tags.insert("team".into(), "ml".into());
        })];
        let by_id = [
            term(|t| t.id = Some("cr-1".into())),
            term(|t| t.id = Some("cr-404".into())),
            term(|t| t.id = Some("cr-6".into())),
        ];
        let found = list(&cloud, &[&by_tag, &by_id, &by_tag], now).unwrap();
        assert_eq!(
            cloud.call_counts().get("EC2.DescribeCapacityReservations"),
            4,
            "one call per distinct query; the unknown id is not an error"
        );
        let ids = |terms: &[CapacityReservationTerm]| -> Vec<String> {
            found
                .selected(terms)
                .iter()
                .map(|r| r.reservation.id.clone())
                .collect()
        };
        assert_eq!(ids(&by_tag), ["cr-1", "cr-4"]);
        assert_eq!(ids(&by_id), ["cr-1", "cr-6"]);
        assert_eq!(ids(&[]), Vec::<String>::new());
        let cb = found.selected(&by_tag)[1];
        assert!(cb.expiring);
        assert_eq!(cb.capacity.reservation_type, ReservationType::CapacityBlock);
        assert!(!found.selected(&by_id)[0].expiring);
        assert_eq!(found.selected(&by_id)[1].capacity.count, 0);
        assert_eq!(
            found.skipped,
            ["capacity reservation cr-3: unsupported instance match criteria \"future\""]
        );
        let mut marked = found.clone();
        marked.mark_unavailable([&"cr-1".to_string()]);
        assert_eq!(marked.selected(&by_id)[0].capacity.count, 0);
    }

    #[test]
    fn other_errors_fail_the_listing() {
        let cloud = FakeCloud::new();
        cloud.fail(
            "EC2.DescribeCapacityReservations",
            CloudError::Api {
                service: "EC2".into(),
                operation: "DescribeCapacityReservations".into(),
                code: "UnauthorizedOperation".into(),
                message: "no".into(),
            },
        );
        let terms = [term(|t| t.id = Some("cr-1".into()))];
        let err = list(&cloud, &[&terms], 0).unwrap_err();
        assert!(err.is_permission());
    }
}
