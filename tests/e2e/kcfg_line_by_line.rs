//! kubeconfig and client flags taken as kubectl takes them (docs/upstream-tests.md, "kubeconfig and
//! client flags, line by line (s30-linekcfg)"; client-go v0.36.3 `tools/clientcmd`), through the
//! binary against the loopback cluster: a proxy in the environment is passed by for a loopback
//! server, empty flags and an empty `current-context` are values not given, and `--user` must
//! name a user.

use std::process::{Command, Stdio};

use crate::nodes::Kube;
use crate::support::{fixture, Run};

/// A loopback cluster with Karpenter's CRDs, and its kubeconfig.
fn cluster(test: &str) -> Kube {
    let k = Kube::start(&format!("kcfg-{test}"));
    k.kubectl(&["apply", "-f", fixture("crds/v1").to_str().unwrap()]);
    k
}

/// `kubectl-karpenter nodes --no-aws ARGS` with `env` set (and no kubeconfig in HOME).
fn nodes(k: &Kube, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"));
    command
        .args(["nodes", "--no-aws"])
        .args(args)
        .env("HOME", &k.dir)
        .env("NO_COLOR", "1")
        .env("AWS_REGION", "us-east-1")
        .stdin(Stdio::null());
    let proxies = [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_PROXY",
        "no_proxy",
    ];
    for name in std::iter::once("KUBECONFIG").chain(proxies) {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let out = command.output().expect("run kubectl-karpenter");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_proxy_in_the_environment_is_passed_by_for_a_loopback_server() {
    // Go's httpproxy `useProxy`: never for localhost or a loopback address; kube-rs alone took
    // HTTPS_PROXY for every server and then could not connect at all (kube/http-proxy was off).
    let k = cluster("proxy");
    let closed = "http://127.0.0.1:9";
    let kubeconfig = k.kubeconfig.to_str().unwrap();
    let run = nodes(
        &k,
        &["--kubeconfig", kubeconfig],
        &[("HTTPS_PROXY", closed), ("HTTP_PROXY", closed)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("http-proxy"), "{}", run.stderr);
}

#[test]
fn empty_flags_and_an_empty_current_context_are_values_not_given() {
    // client-go: `--kubeconfig ""`/`--context ""`/`-n ""` are tested with len(…) != 0, and the
    // first KUBECONFIG file to *set* current-context wins.
    let k = cluster("empty");
    let list = std::env::join_paths([
        fixture("kcfg-line-by-line/empty-current-context.yaml"),
        k.kubeconfig.clone(),
    ])
    .unwrap();
    let list = list.to_str().unwrap();
    let run = nodes(
        &k,
        &["--kubeconfig", "", "--context", "", "-n", "", "-o", "json"],
        &[("KUBECONFIG", list)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_user_flag_naming_no_user_is_refused() {
    // client-go `getAuthInfo`: "auth info \"typo\" does not exist"; kube-rs connected anonymously.
    let k = cluster("user");
    let kubeconfig = k.kubeconfig.to_str().unwrap();
    let run = nodes(&k, &["--kubeconfig", kubeconfig, "--user", "typo"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("user \"typo\" (--user) is not in the kubeconfig"),
        "{}",
        run.stderr
    );
    let run = nodes(
        &k,
        &["--kubeconfig", kubeconfig, "--user", "test-cluster"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}
