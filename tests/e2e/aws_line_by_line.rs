//! The AWS provider's Create path read line by line against Karpenter v1.14.1 (s27-lineaws,
//! docs/upstream-tests.md "AWS Create path, line by line"): each difference found and fixed,
//! replayed through the binary (offline `provision --dry-run -o json`).

use serde_json::Value;

use crate::support::{fixture, karpenter, Run};

/// `provision --dry-run -o json` with `args`.
fn dry_run(args: &[&str]) -> (Run, Value) {
    let mut all = vec!["provision", "--dry-run", "-o", "json"];
    all.extend_from_slice(args);
    let run = karpenter(&all, b"");
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

fn path(file: &str) -> String {
    fixture(file).to_string_lossy().into_owned()
}

/// Each NodeClaim's capacity type and reservation.
fn capacity(plan: &Value) -> Vec<(String, Option<String>)> {
    plan["nodeClaims"]
        .as_array()
        .expect("nodeClaims")
        .iter()
        .map(|c| {
            (
                c["capacityType"].as_str().unwrap_or_default().to_string(),
                c["capacityReservationId"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// **Differs, fixed** — the `ReservedCapacity` gate off (`--feature-gates
/// ReservedCapacity=false`), a class selecting an ODCR with 2 instances left and three pods each
/// needing a node → Karpenter v1.14.1 adds no reserved offering (`aws v1.14.1:
/// pkg/providers/instancetype/offering/reserved_capacity_resolver.go` `ResolveOfferings` returns
/// the offerings unchanged) and its scheduler reserves nothing (`core v1.14.1:
/// pkg/controllers/provisioning/scheduling/nodeclaim.go` `offeringsToReserve`): three on-demand
/// NodeClaims in one round. We planned two into the reservation. With the gate on (its default)
/// the plan is unchanged (`tests/e2e/plans.rs` `capacity_reservations_are_used_up_then_on_demand`).
#[test]
fn with_the_reserved_capacity_gate_off_no_claim_is_planned_into_a_reservation() {
    let args = [
        "-f",
        &path("plans/capacity-reservations.yaml"),
        "--catalog",
        &path("plans/capacity-reservations-catalog.yaml"),
    ];
    let (run, plan) =
        dry_run(&[&args[..], &["--feature-gates", "ReservedCapacity=false"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        capacity(&plan),
        vec![("on-demand".to_string(), None); 3],
        "{plan:#}"
    );
    assert!(
        run.stderr
            .contains("capacityReservationSelectorTerms not used"),
        "{}",
        run.stderr
    );
    let (run, plan) = dry_run(&[&args[..], &["--feature-gates", "ReservedCapacity=true"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reserved = capacity(&plan)
        .into_iter()
        .filter(|(t, _)| t == "reserved")
        .count();
    assert_eq!(reserved, 2, "{plan:#}");
}
