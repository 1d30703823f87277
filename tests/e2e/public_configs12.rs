//! Public configurations swept in session 26 (docs/upstream-tests.md "Public configurations
//! swept (session 26)"), through the binary where the difference was in reading the files.

use crate::support::{fixture, karpenter};

/// A Drifted-only weekend budget written `0 0 * * 6,7`: Karpenter parses schedules with
/// robfig/cron v3, whose day of week is 0-6, so the budget errors and
/// `MustGetAllowedDisruptions` allows 0 for every reason (core v1.14.1 `pkg/apis/v1/nodepool.go`)
/// — the empty node stays. We read `7` as Sunday and deleted it.
#[test]
fn a_day_of_week_seven_holds_every_disruption() {
    let file = fixture("sweep12/weekend-budget-day-seven.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(
        &[
            "consolidate",
            "-f",
            &file,
            "--now",
            "2024-06-05T02:00:00Z",
            "-o",
            "json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["actions"], serde_json::json!([]), "{report:#}");
    let reason = report["nodes"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("7 is outside 0-6"), "{report:#}");
}
