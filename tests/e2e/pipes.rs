//! A closed pipe (`kubectl karpenter … | head -1`): every command that writes a document or a
//! table stops quietly — no `error:` line, no panic — with one exit code, 141 (128 + SIGPIPE,
//! what a shell shows for kubectl itself), whatever it writes and however it fails to.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::moto::{karpenter_command, Moto};
use crate::support::{root, write_temp};
use crate::test_cluster::{Config, TestCluster};

/// Runs `cmd` with stdout a pipe nobody reads (its reading end closed before the start).
fn with_closed_stdout(mut cmd: Command) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = cmd
        .stdout(writer)
        .stderr(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .expect("run kubectl-karpenter");
    drop(child.stdin.take().map(|mut s| s.write_all(b"")));
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A v1alpha5 Provisioner, its AWSNodeTemplate (with resolved AMIs) and 40 nodes on another
/// AMI: `drift check -f` has a long report to print.
fn drifted_nodes() -> String {
    let mut doc = String::from(
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: newnode\n---\napiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: newnode\nspec:\n  amiSelector:\n    aws::ids: ami-0000000000000new\n  subnetSelector:\n    alpha.eksctl.io/cluster-name: demo\n  securityGroupSelector:\n    kubernetes.io/cluster/demo: owned\nstatus:\n  amis:\n  - id: ami-0000000000000new\n    name: new\n    requirements:\n    - key: kubernetes.io/arch\n      operator: In\n      values: [amd64]\n",
    );
    for i in 0..40 {
        doc.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i}\n  creationTimestamp: \"2024-01-01T00:00:00Z\"\n  labels:\n    karpenter.sh/provisioner-name: default\n    kubernetes.io/arch: amd64\n    node.kubernetes.io/instance-type: c6a.2xlarge\n  annotations:\n    kubectl-karpenter.io/image-id: ami-0000000000000old\nspec:\n  providerID: aws:///us-east-1a/i-{i:017}\n"
        ));
    }
    doc
}

#[test]
fn every_command_stops_quietly_with_141_when_stdout_is_closed() {
    let moto = Moto::shared();
    let cluster = TestCluster::start(Config::default()).expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pipes");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    cluster.write_kubeconfig(&kubeconfig).unwrap();
    cluster.with_store(|st| {
        let nodes = st.registry.find("", "v1", "nodes").unwrap().clone();
        for i in 0..40 {
            st.insert(
                &nodes,
                serde_json::json!({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": format!("node-{i}"), "uid": format!("pipes-{i}"),
                                 "creationTimestamp": "2024-01-01T00:00:00Z",
                                 "labels": {"karpenter.sh/nodepool": "default"}},
                    "spec": {"providerID": format!("aws:///us-east-1a/i-{i:017}")},
                }),
            );
        }
    });
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let manifest = root().join("examples/manifests/quickstart.yaml");
    let manifest = manifest.to_string_lossy().into_owned();
    let nodes = write_temp("pipes-drifted.yaml", drifted_nodes().as_bytes());
    let nodes = nodes.to_string_lossy().into_owned();
    let mut commands: Vec<Vec<&str>> = Vec::new();
    for output in ["table", "wide", "json", "yaml", "name"] {
        commands.push(vec![
            "provision",
            "--dry-run",
            "-f",
            &manifest,
            "-o",
            output,
        ]);
        commands.push(vec!["drift", "check", "-f", &nodes, "-o", output]);
        commands.push(vec!["ami", "-f", &manifest, "-o", output]);
        commands.push(vec![
            "nodes",
            "--no-aws",
            "--kubeconfig",
            &kubeconfig,
            "-o",
            output,
        ]);
    }
    commands.push(vec!["convert", "-f", &manifest]);
    commands.push(vec!["completion", "bash"]);
    commands.push(vec!["version"]);
    commands.push(vec!["--help"]);
    for args in commands {
        let mut cmd = karpenter_command(&args);
        cmd.env("AWS_ENDPOINT_URL", &moto.url)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", moto.region());
        let (code, stderr) = with_closed_stdout(cmd);
        assert_eq!(code, 141, "{args:?}: {stderr}");
        assert!(
            !stderr.contains("error:") && !stderr.contains("panicked"),
            "{args:?} stops quietly: {stderr}"
        );
    }
}
