//! Issue threads swept (session 30, s30-threads7; docs/upstream-tests.md "Issue threads swept
//! (session 30, s30-threads7)"): the reporters' inputs rebuilt as small manifests in
//! `tests/fixtures/threads7/` (our own, the embedded catalog in us-east-1) and replayed
//! through the binary, where our explanation had to answer the thread's question.

use serde_json::{json, Value};

use crate::support::{consolidate_fixture, run_fixture, Run};

/// `kubectl-karpenter ARGS -f threads7/NAME --region us-east-1`, as a table.
fn table(name: &str, args: &[&str]) -> Run {
    run_fixture(&format!("threads7/{name}"), args)
}

/// Each of `lines` is in the table.
fn assert_says(run: &Run, lines: &[&str]) {
    for line in lines {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
}

/// The report's row of node `name`.
fn row<'d>(doc: &'d Value, name: &str) -> &'d Value {
    let nodes = doc["nodes"].as_array().unwrap();
    nodes.iter().find(|n| n["name"] == name).unwrap()
}

/// aws#2298 / aws#2797: `ephemeral-storage: 17Gi` fits the default 20Gi root volume (17Gi
/// allocatable after kube-reserved and the 10% nodefs eviction threshold, aws v1.14.1
/// `pkg/providers/instancetype/types.go`), `100G` does not — and the reason says `100G`, as
/// the pod wrote it (main said `97656250Ki`).
#[test]
fn an_ephemeral_storage_request_in_decimal_units_is_named_as_written() {
    let run = table("ephemeral-storage.yaml", &["provision", "--dry-run"]);
    // Exit 1: a pod is left unschedulable.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_says(
        &run,
        &[
            "default/cron-100g   NodePool default: no instance type has ephemeral-storage 100G \
             (largest available after overhead: 17Gi, on m5d.24xlarge: capacity 20Gi less \
             kube-reserved 1Gi and eviction threshold 2Gi)",
            "1 pod(s) placed, 1 unschedulable",
        ],
    );
}

/// core#1719 / aws#8247: the pool's only `Underutilized` budget is open on weekend evenings;
/// on a Tuesday the under-used node is consolidated anyway (core v1.14.1
/// `pkg/apis/v1/nodepool.go` `GetAllowedDisruptions`: an inactive budget allows `MaxInt32`),
/// and the report says no budget is in its window (main said only "pass 2"). On Saturday
/// evening the budget binds and names its window.
#[test]
fn a_consolidation_outside_its_budget_window_says_no_budget_limits_it() {
    let tuesday = consolidate_fixture("threads7/budget-window.yaml", "2026-06-02T11:00:00Z");
    let n1 = row(&tuesday, "n1");
    assert_eq!(n1["method"], "single", "{n1}");
    let window = "\"30 18 * * 6,0\" for 7h";
    assert_eq!(
        n1["unlimitedBudget"],
        json!({"reason": "Underutilized", "closedWindows": [window]})
    );
    assert!(row(&tuesday, "n0").get("unlimitedBudget").is_none());
    let run = table(
        "budget-window.yaml",
        &["consolidate", "--now", "2026-06-02T11:00:00Z"],
    );
    assert_says(
        &run,
        &[&format!(
            "pass 2; no budget for Underutilized is in its window now ({window}), so none limits it"
        )],
    );
    let saturday = consolidate_fixture("threads7/budget-window.yaml", "2026-06-06T20:00:00Z");
    assert_eq!(row(&saturday, "n1")["decision"], "none");
    assert!(row(&saturday, "n1")["reason"]
        .to_string()
        .contains("30 18 * * 6,0"));
}
