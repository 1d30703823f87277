//! The AWS provider's Create path read line by line against Karpenter v1.14.1 (s27-lineaws,
//! docs/upstream-tests.md "AWS Create path, line by line"): each difference found and fixed,
//! replayed through the binary (offline `provision --dry-run -o json`).

use serde_json::Value;

use crate::plans::dry_run_with;
use crate::support::{fixture, karpenter, Run};

/// `provision --dry-run -o json` with `args`.
fn dry_run(args: &[&str]) -> (Run, Value) {
    dry_run_with(args, b"")
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

/// `t3-large.yaml` with `replicas` pods of `memory`, planned with `flags`: the NodeClaims and
/// the pods left pending.
fn t3_plan(replicas: usize, memory: &str, flags: &[&str]) -> (usize, usize) {
    t3_plan_of(t3_text(replicas, memory, "10m"), flags)
}

/// `t3-large.yaml` with `replicas` pods of `memory` and `cpu`.
fn t3_text(replicas: usize, memory: &str, cpu: &str) -> String {
    std::fs::read_to_string(path("aws-line-by-line/t3-large.yaml"))
        .unwrap()
        .replace("REPLICAS", &replicas.to_string())
        .replace("MEMORY", memory)
        .replace("cpu: 10m", &format!("cpu: {cpu}"))
}

/// The NodeClaims and pending pods of the manifests `text` planned with `flags`.
fn t3_plan_of(text: String, flags: &[&str]) -> (usize, usize) {
    let (run, plan) = dry_run_with(&[&["-f", "-"], flags].concat(), text.as_bytes());
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let count = |key: &str| plan[key].as_array().map_or(0, Vec::len);
    (count("nodeClaims"), count("unschedulable"))
}

/// **Differs, fixed** — the AWS controller's `RESERVED_ENIS` and `VM_MEMORY_OVERHEAD_PERCENT`
/// (`aws v1.14.1: pkg/operator/options/options.go`; `pkg/providers/instancetype/types.go`
/// `pods`, `memory`; instancetype/suite_test.go "should reserve ENIs when aws.reservedENIs is
/// set and use it in max-pods calculation") through `--reserved-enis` /
/// `--vm-memory-overhead-percent`: 30 small pods fit one t3.large (35 pods) but need two with
/// one reserved ENI (24); a 7000Mi pod does not fit t3.large's 6837Mi allocatable at 7.5 %
/// overhead but fits its 7452Mi at 0. We planned with 0 and 0.075 whatever the controller ran
/// with.
#[test]
fn the_controllers_reserved_enis_and_vm_memory_overhead_reach_the_plan() {
    assert_eq!(t3_plan(30, "10Mi", &[]), (1, 0));
    assert_eq!(t3_plan(30, "10Mi", &["--reserved-enis", "1"]), (2, 0));
    assert_eq!(t3_plan(1, "7000Mi", &[]), (0, 1));
    assert_eq!(
        t3_plan(1, "7000Mi", &["--vm-memory-overhead-percent", "0"]),
        (1, 0)
    );
    let bad = karpenter(
        &["provision", "--dry-run", "-f", "-", "--reserved-enis", "-1"],
        b"",
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// **Differs, fixed** — an EC2NodeClass with `kubelet.kubeReserved: {cpu: "0"}` and a t3.large
/// pool, one pod of 1950m → `aws v1.14.1: pkg/providers/instancetype/types.go`
/// `kubeReservedResources` assigns the written 0, so the allocatable CPU is the whole 2000m and
/// the pod is planned; we kept the computed 70m (a zero was "unset"), 1930m allocatable, the pod
/// pending.
#[test]
fn a_kube_reserved_written_as_zero_reserves_nothing() {
    let text = t3_text(1, "10Mi", "1950m");
    assert_eq!(t3_plan_of(text.clone(), &[]), (0, 1));
    let zero = text.replace(
        "  role: fixture-node-role\n",
        "  role: fixture-node-role\n  kubelet: {kubeReserved: {cpu: \"0\"}}\n",
    );
    assert_eq!(t3_plan_of(zero, &[]), (1, 0));
}
