//! Capacity reservations live (docs/karpenter.md §6.12): moto seeded with an ODCR
//! (`tests/moto/server.py --capacity-reservation`, which answers DescribeCapacityReservations
//! and honours a launch template's reservation target), the loopback cluster with a v1
//! EC2NodeClass selecting it by tag (consolidate's story otherwise), and `provision --yes`: the plan prefers the reservation,
//! one NodeClaim launches into it (labelled `reserved` with its id), the next — the reservation
//! has one instance — on-demand.

use serde_json::json;

use kubectl_karpenter::cloud::reservations::{self, Query};
use kubectl_karpenter::cloud::types::Cloud;
use kubectl_karpenter::model::reservation::{CapacityReservationTerm, ReservationType};

use crate::moto::Moto;
use crate::provision_live::Walk;
use crate::test_cluster::Config;

/// The ODCR: one c5.xlarge in us-east-1b, tagged for the class's selector term.
const RESERVATION: &str = "cr-0a1b2c3d4e5f60001";

/// consolidate's story (`consolidate_commands::CLUSTER`) with reserved capacity: its NodePool
/// also takes `reserved` capacity, its class selects reservations by `term` (YAML of one
/// selector term), and `inflate` has `replicas` pods of `cpu` CPUs, each needing its own node.
pub(crate) fn manifest(term: &str, replicas: usize, cpu: &str) -> String {
    let story = crate::consolidate_commands::CLUSTER;
    let (pool_and_class, deployment) = story.split_once("---\napiVersion: apps/v1").unwrap();
    format!(
        "{}  capacityReservationSelectorTerms:\n  - {term}\n---\napiVersion: apps/v1{}",
        pool_and_class.replace("values: [on-demand]", "values: [reserved, on-demand]"),
        deployment
            .replace("replicas: 3", &format!("replicas: {replicas}"))
            .replace("cpu: \"7\"", &format!("cpu: \"{cpu}\""))
    )
}

/// The moto flag seeding the reservation.
fn reservation_flag() -> String {
    json!({
        "id": RESERVATION,
        "instanceType": "c5.xlarge",
        "zone": "us-east-1b",
        "available": 1,
        "tags": {"team": "ml"},
    })
    .to_string()
}

#[test]
fn provision_launches_a_reserved_node_claim_into_a_seeded_reservation() {
    let flag = reservation_flag();
    let walk = Walk::build(
        "capacity-reservations",
        &["--capacity-reservation", &flag],
        "crds/v1",
        |moto, config| Config {
            ec2_endpoint: Some(moto.url.clone()),
            ..config
        },
    );
    // Two pods of 3 CPUs: a node each, c-family xlarge or 2xlarge.
    walk.apply("reserved.yaml", &manifest("tags: {team: ml}", 2, "3"));
    walk.wait_unschedulable(2);

    // The plan prefers the reservation, for one NodeClaim: it has one instance.
    let plan = walk.json(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    let claims = plan["nodeClaims"].as_array().expect("nodeClaims");
    assert_eq!(claims.len(), 2, "{plan:#}");
    let reserved: Vec<_> = claims
        .iter()
        .filter(|c| c["capacityType"] == "reserved")
        .collect();
    assert_eq!(reserved.len(), 1, "{plan:#}");
    assert_eq!(reserved[0]["instanceType"], "c5.xlarge", "{plan:#}");
    assert_eq!(reserved[0]["zone"], "us-east-1b", "{plan:#}");
    assert_eq!(
        reserved[0]["capacityReservationId"], RESERVATION,
        "{plan:#}"
    );

    let out = walk.run(&["karpenter", "provision", "--yes", "--wait", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let result: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let launched = result["launched"].as_array().expect("launched");
    assert_eq!(launched.len(), 2, "{result:#}");
    let mut types: Vec<(String, String)> = launched
        .iter()
        .map(|l| {
            (
                l["capacityType"].as_str().unwrap_or_default().to_string(),
                l["instanceType"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    types.sort();
    assert_eq!(
        types[1],
        ("reserved".into(), "c5.xlarge".into()),
        "{result:#}"
    );
    assert_eq!(types[0].0, "on-demand", "{result:#}");
    let into: Vec<&serde_json::Value> = launched
        .iter()
        .filter_map(|l| l.get("capacityReservationId"))
        .collect();
    assert_eq!(into, [RESERVATION], "{result:#}");

    // The node of the reservation says so (labels from its launch template's user data).
    let nodes = walk.items(&[
        "get",
        "nodes",
        "-l",
        &format!("karpenter.k8s.aws/capacity-reservation-id={RESERVATION}"),
    ]);
    assert_eq!(nodes.len(), 1, "one node in the reservation");
    let labels = &nodes[0]["metadata"]["labels"];
    assert_eq!(labels["karpenter.sh/capacity-type"], "reserved");
    assert_eq!(
        labels["karpenter.k8s.aws/capacity-reservation-type"],
        "default"
    );
    assert_eq!(labels["node.kubernetes.io/instance-type"], "c5.xlarge");
    assert_eq!(labels["topology.kubernetes.io/zone"], "us-east-1b");

    // Used up: a re-plan has nothing to launch, and nothing plans into it any more.
    let again = walk.json(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    assert!(
        again["nodeClaims"].as_array().is_none_or(|c| c.is_empty()),
        "{again:#}"
    );
}

/// The adapter against moto's DescribeCapacityReservations: by id (an unknown one is no
/// reservation), by tags, and EC2's fields (type, end date, counts) as `cloud::reservations`
/// reads them (`aws v1.14.1: pkg/controllers/nodeclass/capacityreservation_test.go` "should
/// resolve capacity reservations by ID", "… by tags", "should discover capacity block
/// reservations").
#[test]
fn the_adapter_reads_reservations_from_moto_by_id_and_by_tags() {
    let block = json!({
        "id": "cr-0b", "instanceType": "p5.48xlarge", "zone": "us-east-1a", "available": 2,
        "reservationType": "capacity-block", "endDate": "2099-01-01T00:00:00Z",
        "tags": {"team": "ml"},
    })
    .to_string();
    let other = json!({
        "id": "cr-0c", "instanceType": "m5.large", "zone": "us-east-1b", "available": 0,
        "instanceMatchCriteria": "open", "tags": {"team": "web"},
    })
    .to_string();
    let moto = Moto::start(&[
        "--capacity-reservation",
        &block,
        "--capacity-reservation",
        &other,
    ]);
    let cloud = moto.cloud();
    let by_id = Query::Id("cr-0c".into()).request();
    let found = cloud.describe_capacity_reservations(&by_id).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (
            found[0].instance_type.as_str(),
            found[0].zone.as_str(),
            found[0].available,
            found[0].instance_match_criteria.as_str(),
            found[0].owner_id.as_str(),
        ),
        ("m5.large", "us-east-1b", 0, "open", "123456789012")
    );
    let unknown = cloud
        .describe_capacity_reservations(&Query::Id("cr-404".into()).request())
        .unwrap_err();
    assert_eq!(
        unknown.code(),
        Some("InvalidCapacityReservationId.NotFound")
    );

    let terms = [
        CapacityReservationTerm {
            tags: [("team".to_string(), "ml".to_string())].into(),
            ..CapacityReservationTerm::default()
        },
        CapacityReservationTerm {
            id: Some("cr-404".into()),
            ..CapacityReservationTerm::default()
        },
    ];
    let now = 1_900_000_000;
    let listed = reservations::list(&cloud, &[&terms], now).unwrap();
    let selected = listed.selected(&terms);
    assert_eq!(selected.len(), 1, "the unknown id is no reservation");
    let r = selected[0];
    assert_eq!(r.reservation.id, "cr-0b");
    assert_eq!(r.capacity.reservation_type, ReservationType::CapacityBlock);
    assert_eq!(r.capacity.count, 2);
    assert!(!r.expiring, "ends in 2099");
    assert_eq!(
        cloud.call_counts().get("EC2.DescribeCapacityReservations"),
        4
    );
}
