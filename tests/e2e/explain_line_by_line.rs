//! Explanations that answer the reporter's question (s30-explain, docs/upstream-tests.md): the
//! decisions already agree with Karpenter v1.14.1; these check that the output says why.
//! Fixtures: `tests/fixtures/explain-line-by-line/` (our own manifests, embedded catalog).

use serde_json::Value;

use crate::support::{fixture, karpenter};

const NOW: &str = "2024-06-24T12:00:00Z";

fn run(args: &[&str], name: &str, json: bool) -> String {
    let file = fixture(&format!("explain-line-by-line/{name}"));
    let file = file.to_string_lossy();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-f", &file, "--region", "us-east-1"]);
    if json {
        all.extend(["-o", "json"]);
    }
    let run = karpenter(&all, b"");
    assert!(
        run.stderr.contains("warning") || run.stderr.is_empty(),
        "{}",
        run.stderr
    );
    run.stdout
}

/// core#3225 (v1.14 `consolidateAfter` also applies to destinations; consolidation_test.go
/// "should not consolidate pods onto a destination node that is under its consolidateAfter
/// window"): `src` is replaced, not deleted, because `dest` (room for its pod) had a pod event
/// 2m ago under a 5m `consolidateAfter` — the row and the document name `dest` and the 3m left.
#[test]
fn a_replacement_names_the_destination_its_consolidate_after_holds_back() {
    let text = run(
        &["consolidate", "--now", NOW],
        "held-back-destination.yaml",
        false,
    );
    let row = text.lines().find(|l| l.starts_with("src ")).unwrap();
    assert!(
        row.contains("replace → m5.large")
            && row.contains(
                "dest has room for its pods but is itself within consolidateAfter for 3m"
            ),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&run(
        &["consolidate", "--now", NOW],
        "held-back-destination.yaml",
        true,
    ))
    .unwrap();
    let src = (doc["nodes"].as_array().unwrap().iter())
        .find(|n| n["name"] == "src")
        .unwrap();
    assert_eq!(
        src["heldBackDestinations"],
        serde_json::json!([{"node": "dest", "consolidateAfterLeftSeconds": 180}]),
        "{doc:#}"
    );
}

/// aws#6883 (core v1.14.1 `scheduling/scheduler.go` `add`: existing nodes, then the NodeClaims
/// opened this round, then new ones by weight): `batch-job` selects the weight-10 pool `batch`
/// and opens its NodeClaim; `web` selects nothing and joins it although `preferred` (weight
/// 100) takes it too. The plan says so, in the text and the document.
#[test]
fn a_pod_joining_a_lighter_pools_open_nodeclaim_is_explained() {
    let text = run(
        &["provision", "--dry-run"],
        "weights-open-nodeclaim.yaml",
        false,
    );
    assert!(
        text.contains(
            "note: default/web joined NodeClaim batch-1 (NodePool batch, weight 10) though \
             NodePool preferred (weight 100) takes it too: Karpenter fills the NodeClaims opened \
             earlier in the round before opening new ones by weight"
        ),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&run(
        &["provision", "--dry-run"],
        "weights-open-nodeclaim.yaml",
        true,
    ))
    .unwrap();
    let claims = doc["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{doc:#}");
    let joined = &claims[0]["joinedBeforeWeights"];
    assert_eq!(
        joined["pods"],
        serde_json::json!(["default/web"]),
        "{doc:#}"
    );
    assert_eq!(
        (
            &joined["weight"],
            &joined["higherNodePool"],
            &joined["higherWeight"]
        ),
        (
            &serde_json::json!(10),
            &serde_json::json!("preferred"),
            &serde_json::json!(100)
        )
    );
}
