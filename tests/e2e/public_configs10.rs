//! Public configurations swept in session 24 (docs/upstream-tests.md "Public configurations
//! swept (session 24)"), through the binary where the difference was in reading the files.

use crate::support::{fixture, karpenter};

/// A v1beta1 NodePool whose budgets carry v1 `reasons`: core v0.37.8's v1beta1 schema has no
/// such field (`karpenter.sh_nodepools.yaml`), so `kubectl apply` refuses it, and an apply that
/// does not validate stores the pool without it — the `nodes: "0"` budget then limits every
/// disruption. We read the field silently and `convert` carried it into the v1 pool, where the
/// `0` limited Underutilized only.
#[test]
fn v1beta1_budget_reasons_are_refused_or_pruned_as_the_api_server_does() {
    let file = fixture("sweep10/v1beta1-budget-reasons.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(&["provision", "--dry-run", "-q", "-f", &file], b"");
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("NodePool/ml-training: spec.disruption.budgets[0].reasons: unknown field"),
        "{}",
        run.stderr
    );
    let run = karpenter(&["convert", "--validate=warn", "-f", &file], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Said twice: a warning, and a note in the converted file.
    assert!(run.stderr.contains("budgets[1].reasons"), "{}", run.stderr);
    assert!(
        run.stdout.contains("budgets[1].reasons: dropped"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("budgets:\n    - nodes: \"0\"\n    - nodes: 100%\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("reasons:\n"), "{}", run.stdout);
}
