//! Capacity reservations and capacity blocks read line by line against aws v1.14.1
//! (`pkg/providers/capacityreservation/`, `pkg/providers/instancetype/offering/`,
//! `pkg/providers/instance/`) and core v1.14.1 (`provisioning/scheduling/nodeclaim.go`,
//! `reservationmanager.go`) — docs/upstream-tests.md "Capacity reservations and capacity blocks,
//! line by line (s30-linecapres)" — replayed through the binary. Fixtures in
//! `tests/fixtures/capres-line-by-line/` (our own manifests and custom catalog, us-east-1a).

use serde_json::Value;

use crate::support::{fixture, plan_fixture_with};

/// `provision --dry-run -f FIXTURE --catalog catalog.yaml --region us-east-1 -o json`.
fn plan(name: &str) -> Value {
    let catalog = fixture("capres-line-by-line/catalog.yaml");
    plan_fixture_with(
        &format!("capres-line-by-line/{name}"),
        &["--catalog", &catalog.to_string_lossy()],
    )
}

/// (round, instance type, capacity type, reservation) of each planned NodeClaim.
fn launches(plan: &Value) -> Vec<(i64, String, String, Option<String>)> {
    (plan["nodeClaims"].as_array().into_iter().flatten())
        .map(|c| {
            (
                c["round"].as_i64().unwrap_or_default(),
                c["instanceType"].as_str().unwrap_or_default().to_string(),
                c["capacityType"].as_str().unwrap_or_default().to_string(),
                c["capacityReservationId"].as_str().map(str::to_string),
            )
        })
        .collect()
}

const CR: &str = "cr-0a1a1a1a1a1a10001";

/// aws v1.14.1 `offering/reserved_capacity_resolver.go` `ResolveOfferings`: a reserved offering
/// is available only if `compatibility.IsCompatibleWithNodeClass` (here `amiFamilyCheck`: no
/// `a1.*` on AL2023): the AL2023 class's pod gets an on-demand m6g.large, not the a1.large
/// reservation. Before s30-linecapres it was planned into the reservation.
#[test]
fn a_reservation_for_a_type_the_class_cannot_run_is_not_used() {
    let plan = plan("a1-reservation-al2023.yaml");
    assert_eq!(
        launches(&plan),
        [(1, "m6g.large".to_string(), "on-demand".to_string(), None)],
        "{plan:#}"
    );
}

/// aws v1.14.1 `offering/base_resolver.go` (on-demand and spot offerings require
/// `karpenter.k8s.aws/capacity-reservation-type` `DoesNotExist`) and core `nodeclaim.go`
/// (`filterInstanceTypesByRequirements` needs a compatible available offering): five pods
/// requiring `capacity-reservation-type: default` take the reservation's three instances and the
/// other two stay pending. Before s30-linecapres they went on-demand in round 2.
#[test]
fn pods_requiring_a_reservation_type_do_not_go_on_demand() {
    let plan = plan("reservation-type-pods.yaml");
    let reserved = (
        1,
        "a1.large".to_string(),
        "reserved".to_string(),
        Some(CR.to_string()),
    );
    assert_eq!(
        launches(&plan),
        [reserved.clone(), reserved.clone(), reserved],
        "{plan:#}"
    );
    assert_eq!(
        plan["unschedulable"].as_array().map(Vec::len),
        Some(2),
        "{plan:#}"
    );
}
