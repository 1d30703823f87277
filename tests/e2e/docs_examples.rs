//! The examples README.md and docs/consolidation.md show, run as documented against the repository's
//! own manifests: every line the docs print (but the elided `...`/`…` ones) is a line of the
//! output, and the exit code is the documented one (s30-docex).

use crate::support::{karpenter, root, write_temp};

/// The lines of the first fenced block after `marker` in the doc at `path` (repository-relative),
/// without the `$ command` line and the elided ones.
fn documented_lines(path: &str, marker: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let from = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in {path}"));
    let block = text[from..].split("```").nth(1).unwrap();
    block
        .lines()
        .skip(1)
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('$') && *l != "..." && *l != "…")
        .map(String::from)
        .collect()
}

fn assert_shown(doc_lines: &[String], stdout: &str) {
    let out: Vec<&str> = stdout.lines().map(str::trim_end).collect();
    for line in doc_lines {
        assert!(
            out.contains(&line.as_str()),
            "documented line {line:?} not printed:\n{stdout}"
        );
    }
}

#[test]
fn the_readme_quickstart_prints_the_documented_plan_and_its_two_assumptions() {
    let file = root().join("examples/manifests/quickstart.yaml");
    let run = karpenter(
        &["provision", "--dry-run", "-f", &file.to_string_lossy()],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_shown(
        &documented_lines("README.md", "The plan is one `c6a.2xlarge`"),
        &run.stdout,
    );
    assert_eq!(
        run.stderr.matches("warning: assuming: ").count(),
        2,
        "{}",
        run.stderr
    );
}

#[test]
fn the_readme_quickstart_at_twenty_replicas_names_the_cpu_limit_and_exits_one() {
    let text = std::fs::read_to_string(root().join("examples/manifests/quickstart.yaml")).unwrap();
    assert!(text.contains("replicas: 5"));
    let file = write_temp(
        "docex-quickstart-20.yaml",
        text.replace("replicas: 5", "replicas: 20").as_bytes(),
    );
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-q",
            "-f",
            &file.to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_shown(
        &documented_lines("README.md", "Scale it to 20 replicas"),
        &run.stdout,
    );
    // "an 8-vCPU and a 2-vCPU node"
    assert!(
        run.stdout.contains(" c6a.2xlarge ") && run.stdout.contains(" c6a.large "),
        "{}",
        run.stdout
    );
}

#[test]
fn the_consolidation_example_prints_the_documented_table_and_its_nodes_are_not_drifted() {
    let file = root().join("examples/consolidate/cluster.yaml");
    let file = file.to_string_lossy();
    let now = "2024-06-24T12:00:00Z";
    let run = karpenter(&["consolidate", "-f", &file, "--now", now], b"");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_shown(
        &documented_lines("docs/consolidation.md", "Try it on the example cluster"),
        &run.stdout,
    );
    // Its NodeClaims carry the labels a launched NodeClaim has: none is RequirementsDrifted.
    let drift = karpenter(&["drift", "check", "-q", "-f", &file], b"");
    assert_eq!(drift.code, 0, "{}\n{}", drift.stdout, drift.stderr);
    assert!(!drift.stdout.contains("Drifted"), "{}", drift.stdout);
}
