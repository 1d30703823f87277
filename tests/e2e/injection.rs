//! Terminal injection (issue #13): names and values from manifests or the cluster reach the
//! terminal escaped and bounded. A NodePool (manifest) and a Node (cluster) named with an
//! escape sequence and a newline followed by `error: forged line`, and a 100 KB label value:
//! the output holds no raw control byte, no forged line, and stays small — in error lines,
//! tables and `-o name`.
//!
//! The loopback cluster serves the Node the way a compromised server or a proxy could: a real
//! API server refuses such a Node name, but annotations, container images and status messages
//! it does not check, and this tool must not rely on either.

use std::path::Path;

use crate::support::{karpenter, root, write_temp, Run};
use crate::test_cluster::{Config, TestCluster};

const EVIL: &str = "evil\u{1b}[31mred\nerror: forged line";
/// The same as a YAML double-quoted scalar.
const EVIL_YAML: &str = "\"evil\\e[31mred\\nerror: forged line\"";

/// No control character but newlines; no line that starts like the forged one; not long.
fn assert_safe(what: &str, run: &Run) {
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        !all.chars().any(|c| c != '\n' && c.is_control()),
        "{what}: a raw control character:\n{all:?}"
    );
    assert!(
        !all.lines().any(|l| l.starts_with("error: forged")),
        "{what}: a forged line:\n{all}"
    );
    assert!(
        all.len() < 8 * 1024,
        "{what}: {} bytes for a 100 KB value",
        all.len()
    );
    assert!(all.contains("evil\\u{1b}[31mred\\nerror: forged line") || all.contains("…("));
}

fn quickstart() -> String {
    std::fs::read_to_string(root().join("examples/manifests/quickstart.yaml")).unwrap()
}

#[test]
fn manifest_names_and_values_are_escaped_and_cut() {
    let named = quickstart().replacen(
        "  name: default\nspec:\n  disruption",
        &format!("  name: {EVIL_YAML}\nspec:\n  disruption"),
        1,
    );
    let huge = named.replacen(
        "eks-immersion-team: my-team\n    spec:",
        &format!(
            "eks-immersion-team: my-team\n        big: \"{}\"\n    spec:",
            "x".repeat(100 * 1024)
        ),
        1,
    );
    let named = write_temp("injection-named.yaml", named.as_bytes());
    let huge = write_temp("injection-huge.yaml", huge.as_bytes());
    let (named, huge) = (named.to_string_lossy(), huge.to_string_lossy());
    // An invalid name is refused first — escaped, on one line…
    let run = karpenter(&["provision", "--dry-run", "-f", &named], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_safe("strict", &run);
    assert!(run.stderr.contains("is not a valid name"), "{}", run.stderr);
    // … and read past with --validate=ignore, to see where else it is echoed.
    for args in [
        vec!["provision", "--dry-run", "--validate=ignore", "-f", &huge],
        vec!["drift", "check", "--validate=ignore", "-f", &huge],
        vec!["convert", "-f", &huge],
    ] {
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_safe(&format!("{args:?}"), &run);
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "one error line: {}",
            run.stderr
        );
        assert!(run.stderr.contains("xxx…(1024"), "{}", run.stderr);
    }
    for args in [
        vec!["provision", "--dry-run", "--validate=ignore", "-f", &named],
        vec![
            "provision",
            "--dry-run",
            "--validate=ignore",
            "-f",
            &named,
            "-o",
            "name",
        ],
        vec![
            "provision",
            "--dry-run",
            "--validate=ignore",
            "-f",
            &named,
            "-o",
            "wide",
        ],
    ] {
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert_safe(&format!("{args:?}"), &run);
    }
}

#[test]
fn cluster_names_and_values_are_escaped_and_cut() {
    let cluster = TestCluster::start(Config::default()).expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("injection");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    cluster.write_kubeconfig(&kubeconfig).unwrap();
    let node = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": EVIL,
            "uid": "0b7e1c9e-injection",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {
                "karpenter.sh/nodepool": "x".repeat(100 * 1024),
                "node.kubernetes.io/instance-type": "m5.large",
                "topology.kubernetes.io/zone": "us-east-1a",
            },
        },
        "spec": {"providerID": "aws:///us-east-1a/i-0123456789abcdef0"},
        "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
                   "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "29"}},
    });
    // Stored directly: the API server (like a real one) refuses such a name, but what it
    // serves must not be trusted to have been validated (annotations, images and messages
    // are not, and a proxy or a compromised server can serve anything).
    cluster.with_store(|st| {
        let nodes = st.registry.find("", "v1", "nodes").unwrap().clone();
        st.insert(&nodes, node)
    });
    let kubeconfig = kubeconfig.to_string_lossy();
    for output in ["wide", "name", "table"] {
        let run = karpenter(
            &[
                "nodes",
                "--no-aws",
                "--kubeconfig",
                &kubeconfig,
                "-o",
                output,
            ],
            b"",
        );
        assert_eq!(run.code, 0, "nodes -o {output}: {}", run.stderr);
        assert_safe(&format!("nodes -o {output}"), &run);
        assert!(
            run.stdout
                .contains("evil\\u{1b}[31mred\\nerror: forged line"),
            "{}",
            run.stdout
        );
    }
}
