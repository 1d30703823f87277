//! Issue threads swept (session 32, s32-threads8; docs/upstream-tests.md "Issue threads swept
//! (session 32, s32-threads8)"): the reporters' inputs rebuilt as small manifests in
//! `tests/fixtures/threads8/` (our own, the embedded catalog in us-east-1 unless a catalog is
//! named) and replayed through the binary, where our output had to answer the thread's question.

use serde_json::Value;

use crate::support::{consolidate_fixture, fixture, run_fixture, Run};

const NOW: &str = "2026-06-02T12:00:00Z";

/// `kubectl-karpenter ARGS -f threads8/NAME --region us-east-1`.
fn run(name: &str, args: &[&str]) -> Run {
    run_fixture(&format!("threads8/{name}"), args)
}

/// Each of `lines` is in the output.
fn assert_says(out: &str, lines: &[&str]) {
    for line in lines {
        assert!(out.contains(line), "{line}\n{out}");
    }
}

/// The report's row of node `name`.
fn row<'d>(doc: &'d Value, name: &str) -> &'d Value {
    let nodes = doc["nodes"].as_array().unwrap();
    nodes.iter().find(|n| n["name"] == name).unwrap()
}

/// aws#7979: 12 of an ODCR's 15 c5.xlarge in use and 3 on-demand c5.xlarge of a
/// `[reserved, on-demand]` pool. Karpenter prices the reservation at on-demand / 10,000,000 (aws
/// v1.14.1 `pkg/providers/instancetype/offering`), so single-node consolidation replaces an
/// on-demand c5.xlarge by a reserved c5.xlarge (core v1.14.1 `consolidation.go`
/// `computeConsolidation`: the replacement is cheaper); the default 10% budget of 15 allows 2
/// now. The row said "replace → c5.xlarge" — the same type, with no why; it now names the
/// capacity type, and `-o json` adds `replacementCapacityType`.
#[test]
fn an_on_demand_node_replaced_into_its_reservation_says_reserved() {
    let catalog = fixture("threads8/reserved-odcr-catalog.yaml");
    let catalog = catalog.to_string_lossy().into_owned();
    let args = ["consolidate", "--now", NOW, "--catalog", catalog.as_str()];
    let table = run("reserved-odcr.yaml", &args);
    // Exit 1: the finding is positive (actions; docs/spec.md §2).
    assert_eq!(table.code, 1, "{}", table.stderr);
    assert_says(
        &table.stdout,
        &[
            "replace → c5.xlarge (reserved)   single   pass 1",
            "budget Underutilized of NodePool foo: 0 of 10% now (2 of 15 nodes, 2 already disrupting)",
        ],
    );
    let mut json_args = args.to_vec();
    json_args.extend(["-o", "json"]);
    let doc: Value = serde_json::from_str(&run("reserved-odcr.yaml", &json_args).stdout).unwrap();
    let od0 = row(&doc, "od0");
    assert_eq!(od0["replacementType"], "c5.xlarge");
    assert_eq!(od0["replacementCapacityType"], "reserved");
    assert_eq!(
        doc["actions"][0]["replacement"]["capacityReservationId"],
        "cr-0a1b2c3d4e5f60001"
    );
}

/// aws#9207: nodes "marking consolidatable" / "removing consolidatable" every `consolidateAfter`
/// (60 s) and never consolidated: every pod event restarts the window (core v1.14.1
/// `pkg/controllers/nodeclaim/disruption/consolidation.go` `Reconcile`: `lastPodEventTime`, else
/// the `Initialized` transition). The reason said "consolidateAfter 1m not reached (40s left)" on
/// day-old nodes; it now says what the window counts from.
#[test]
fn consolidate_after_names_the_pod_event_it_counts_from() {
    let doc = consolidate_fixture("threads8/pod-churn.yaml", NOW);
    assert!(doc["actions"].as_array().unwrap().is_empty(), "{doc}");
    assert_eq!(
        row(&doc, "n0")["reason"],
        "consolidateAfter 1m not reached (40s left), counted from the last pod event at \
         2026-06-02T11:59:40Z"
    );
}

/// core#2254: a WhenEmpty pool with `consolidateAfter: 10m` keeps two empty c6g.4xlarge
/// launched minutes ago — the window counts from initialization when no pod event came — and
/// the third is held by its `karpenter.sh/do-not-disrupt` pod.
#[test]
fn empty_nodes_wait_consolidate_after_from_their_initialization() {
    let table = run("empty-after-init.yaml", &["consolidate", "--now", NOW]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert_says(
        &table.stdout,
        &[
            "pod default/test-do-not-disrupt-0 is annotated karpenter.sh/do-not-disrupt=true",
            "consolidateAfter 10m not reached (4m30s left), counted from its initialization at \
             2026-06-02T11:54:30Z",
            "0 action(s)",
        ],
    );
}

/// aws#1649: a DaemonSet pod pending on a full node gets no capacity (core v1.14.1
/// `pkg/utils/pod/scheduling.go` `IsProvisionable`: `!IsOwnedByDaemonSet`). The plan said only
/// "No pending pods"; a warning now names the pod and why.
#[test]
fn a_pending_daemon_set_pod_is_named_not_provisioned_for() {
    let plan = run("daemonset-pod-pending.yaml", &["provision", "--dry-run"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert_says(&plan.stdout, &["No pending pods: nothing to launch."]);
    assert_says(
        &plan.stderr,
        &[
            "warning: 1 pending pod is owned by a DaemonSet (kube-system/sensor-abcde): \
           Karpenter provisions no capacity for it",
        ],
    );
}

/// aws#6507: a DaemonSet that requests a p5.48xlarge's 8 GPUs leaves none for an 8-GPU pod
/// (core v1.14.1 `scheduler.go` `buildDaemonOverheadGroups`, added to the pod's requests in
/// `nodeclaim.go` `filterInstanceTypesByRequirements`). The reason said
/// "largest available after overhead: 0" without saying whose overhead; it now says the
/// DaemonSets request 8.
#[test]
fn a_gpu_pod_left_out_by_a_gpu_daemon_set_says_so() {
    let plan = run("daemonset-gpus.yaml", &["provision", "--dry-run"]);
    assert_eq!(plan.code, 1, "{}", plan.stderr);
    assert_says(
        &plan.stdout,
        &[
            "default/llm-0       NodePool gpu-p5-48-llm: no instance type has nvidia.com/gpu 8 \
           (largest available after overhead: 0; the NodePool's DaemonSets request 8 of it)",
        ],
    );
}
