//! An exec credential plugin runs once, as kubectl runs it (docs/upstream-tests.md "An exec
//! credential plugin run once (s31-exec)"; client-go v0.36.3
//! `plugin/pkg/client/auth/exec/exec.go`): through the binary against the loopback cluster, a
//! plugin that counts its runs is run once by `nodes` and once by `provision --yes` (which
//! builds a second client for the operator lease); a token already expired runs it again; the
//! plugin gets no standard input when ours is a pipe, `interactive: false`, and what it writes to
//! its standard error reaches ours; the token it prints is what the server sees.

use std::path::{Path, PathBuf};

use crate::nodes::Kube;
use crate::provision_live::Walk;
use crate::support::Run;
use crate::test_cluster::{Config, TestCluster};

const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";
/// What the plugin writes to its standard error.
const PLUGIN_SAYS: &str = "exec-once: the plugin speaking on its stderr";

/// A plugin that appends a line to `dir/runs` on each run, records its standard input and
/// `KUBERNETES_EXEC_INFO`, says [`PLUGIN_SAYS`] on its standard error and prints a token
/// (`expires`: its `expirationTimestamp`, if any).
fn counting_plugin(dir: &Path, token: &str, expires: Option<&str>) -> PathBuf {
    let path = dir.join("count.sh");
    let expiry = expires
        .map(|e| format!(",\"expirationTimestamp\":\"{e}\""))
        .unwrap_or_default();
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho run >> \"{d}/runs\"\nreadlink /proc/self/fd/0 > \"{d}/stdin\"\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"{d}/info\"\necho '{PLUGIN_SAYS}' >&2\necho '{{\"apiVersion\":\"{V1BETA1}\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"{expiry}}}}}'\n",
            d = dir.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// `kubeconfig` with its user (`user: {}`) replaced by `plugin` in the default `interactiveMode`
/// (v1beta1: `IfAvailable`).
fn with_plugin(kubeconfig: &Path, plugin: &Path) {
    let text = std::fs::read_to_string(kubeconfig).unwrap();
    assert!(text.contains("  user: {}"), "{text}");
    let user = format!(
        "  user:\n    exec:\n      apiVersion: {V1BETA1}\n      command: {}\n      args: [eks, get-token]\n",
        plugin.display()
    );
    std::fs::write(kubeconfig, text.replace("  user: {}", &user)).unwrap();
}

/// `kubectl-karpenter nodes --no-aws --kubeconfig PATH` with standard input a pipe (not a
/// terminal) that has something in it.
fn nodes(kubeconfig: &Path) -> Run {
    crate::support::karpenter(
        &[
            "nodes",
            "--no-aws",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ],
        b"not for the plugin\n",
    )
}

#[test]
fn a_read_only_command_runs_the_plugin_once_without_stdin_and_shows_its_stderr() {
    let k = Kube::start("exec-once");
    let plugin = counting_plugin(&k.dir, "exec-once-token", Some("2099-01-01T00:00:00Z"));
    with_plugin(&k.kubeconfig, &plugin);
    let run = nodes(&k.kubeconfig);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(runs(&k.dir), 1, "kube-rs ran it three times per client");
    // isInteractive: IfAvailable, stdin not a terminal → not interactive: the null device.
    let read = |f: &str| std::fs::read_to_string(k.dir.join(f)).unwrap();
    assert_eq!(read("stdin").trim(), "/dev/null");
    let info: serde_json::Value = serde_json::from_str(&read("info")).unwrap();
    assert_eq!(
        info,
        serde_json::json!({"apiVersion": V1BETA1, "kind": "ExecCredential", "spec": {"interactive": false}})
    );
    // cmd.Stderr is always ours.
    assert_eq!(
        run.stderr.matches(PLUGIN_SAYS).count(),
        1,
        "the plugin's own stderr, once: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("exec-once-token"), "{}", run.stderr);
}

#[test]
fn an_expired_token_runs_the_plugin_again() {
    // exec.go getCreds: credsExpired → refreshCredsLocked, before the next request.
    let k = Kube::start("exec-expired");
    let plugin = counting_plugin(&k.dir, "exec-expired-token", Some("2000-01-01T00:00:00Z"));
    with_plugin(&k.kubeconfig, &plugin);
    let run = nodes(&k.kubeconfig);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        runs(&k.dir) >= 2,
        "run at connect, and again for the requests: {}",
        runs(&k.dir)
    );
}

#[test]
fn the_plugins_token_is_what_the_server_sees() {
    // With RBAC the loopback server answers an unknown bearer token with 401; without the
    // token it would take the request as the admin's and list the nodes.
    let cluster = TestCluster::start(Config {
        rbac: true,
        ..Config::default()
    })
    .expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-once-rbac");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    cluster.write_kubeconfig(&kubeconfig).unwrap();
    let plugin = counting_plugin(&dir, "exec-once-unknown-token", None);
    with_plugin(&kubeconfig, &plugin);
    let run = nodes(&kubeconfig);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("401") || run.stderr.contains("Unauthorized"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("exec-once-unknown-token"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_command_holding_the_lease_runs_the_plugin_once_for_both_clients() {
    let walk = Walk::new_v1beta1("exec-once-lease");
    let plugin = counting_plugin(
        &walk.dir,
        "exec-once-lease-token",
        Some("2099-01-01T00:00:00Z"),
    );
    // After the walk's own kubectl setup (kubectl would run the plugin too).
    with_plugin(&walk.kubeconfig, &plugin);
    let out = walk.run(&["karpenter", "provision", "--yes", "-v"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("operator lease"),
        "the lease was taken (a second client): {}",
        out.stderr
    );
    assert_eq!(runs(&walk.dir), 1, "{}", out.stderr);
}
