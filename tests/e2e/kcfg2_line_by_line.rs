//! kubeconfig and client flags, part 2 (docs/upstream-tests.md "kubeconfig and client flags,
//! part 2 (s31-kcfg2)"; client-go v0.36.3 `tools/clientcmd`, `plugin/pkg/client/auth/exec`),
//! through the binary against the loopback cluster: what kubectl's `validateAuthInfo`/
//! `validateClusterInfo` refuse is refused naming the fields (never the values); `--cluster` and
//! `--user` connect without a current context; an exec plugin gets standard input only where
//! kubectl gives it; in a pod a kubeconfig naming no cluster gives way to the ServiceAccount.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::nodes::Kube;
use crate::support::{fixture, Run};
use crate::test_cluster::{tls, Config, TestCluster};

/// Every value planted here; none may appear in any output.
const PLANTED: &str = "planted-kcfg2";
const PASSWORD: &str = "planted-kcfg2-password";
const TOKEN: &str = "planted-kcfg2-token";
const STDIN: &str = "planted-kcfg2-stdin";

/// A loopback cluster with Karpenter's CRDs, and its kubeconfig.
fn cluster(test: &str) -> Kube {
    let k = Kube::start(&format!("kcfg2-{test}"));
    k.kubectl(&["apply", "-f", fixture("crds/v1").to_str().unwrap()]);
    k
}

/// `kubectl-karpenter nodes --no-aws ARGS` in `env` (no kubeconfig in HOME, no proxy), with
/// `stdin` piped in (not a terminal).
fn nodes_in(home: &Path, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"));
    command
        .args(["nodes", "--no-aws"])
        .args(args)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("AWS_REGION", "us-east-1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in [
        "KUBECONFIG",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "POD_NAMESPACE",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let mut child = command.spawn().expect("run kubectl-karpenter");
    // The plugin may or may not read it: a closed pipe is not an error here.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stdout.contains(PLANTED) && !run.stderr.contains(PLANTED),
        "a planted value was shown:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    run
}

/// The loopback kubeconfig with its user (`user: {}`) and cluster edited, written to `name`.
fn kubeconfig(k: &Kube, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let path = k.dir.join(name);
    std::fs::write(&path, edit(std::fs::read_to_string(&k.kubeconfig).unwrap())).unwrap();
    path
}

#[test]
fn what_kubectl_refuses_in_the_user_and_cluster_is_refused_naming_the_fields() {
    // client-go validation.go validateAuthInfo/validateClusterInfo, through ConfirmUsable.
    // kube-rs took basic auth over the token, and the data over the CA file, and connected.
    let k = cluster("refused");
    let with_user =
        |user: String| move |text: String| text.replace("  user: {}", &format!("  user: {user}"));
    let cases = [
        (
            kubeconfig(
                &k,
                "token-and-basic",
                with_user(format!("{{token: {TOKEN}, username: alice, password: {PASSWORD}}}")),
            ),
            "user \"test-cluster\": token and username/password are both set; only one authentication method is allowed",
        ),
        (
            kubeconfig(&k, "cert-no-key", with_user("{client-certificate-data: Q0U=}".into())),
            "user \"test-cluster\": a client certificate without client-key or client-key-data",
        ),
        (
            kubeconfig(&k, "two-cas", |text| {
                text.replace(
                    "    server: ",
                    "    certificate-authority: /nonexistent/ca.crt\n    certificate-authority-data: Q0E=\n    server: ",
                )
            }),
            "cluster \"test-cluster\": certificate-authority and certificate-authority-data are both set",
        ),
        (
            kubeconfig(
                &k,
                "exec-no-api-version",
                with_user("{exec: {command: /bin/true, interactiveMode: Never}}".into()),
            ),
            "user \"test-cluster\": exec.apiVersion is not set",
        ),
    ];
    for (path, expected) in cases {
        let run = nodes_in(&k.dir, &["--kubeconfig", path.to_str().unwrap()], &[], "");
        assert_eq!(run.code, 3, "{}: {}", path.display(), run.stderr);
        assert!(run.stderr.contains(expected), "{}", run.stderr);
        assert_eq!(
            run.stderr
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count(),
            1,
            "{}",
            run.stderr
        );
    }
}

#[test]
fn without_a_current_context_the_cluster_and_user_flags_connect() {
    // client-go DirectClientConfig.getContext: an empty context plus the overrides.
    let k = cluster("no-context");
    let path = kubeconfig(&k, "no-context", |text| {
        text.replace("current-context: test-cluster\n", "")
    });
    let path = path.to_str().unwrap();
    let run = nodes_in(
        &k.dir,
        &[
            "--kubeconfig",
            path,
            "--cluster",
            "test-cluster",
            "--user",
            "test-cluster",
        ],
        &[],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = nodes_in(&k.dir, &["--kubeconfig", path], &[], "");
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no current context (pass --context, or --cluster and --user)"),
        "{}",
        run.stderr
    );
}

/// A credential plugin that writes its `KUBERNETES_EXEC_INFO` to `dir/info` and prints a token.
fn recording_plugin(dir: &Path) -> PathBuf {
    let path = dir.join("plugin.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$1/info\"\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{PLANTED}-exec\"}}}}'\n"
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn an_exec_plugin_that_must_prompt_without_a_terminal_is_refused() {
    // client-go exec.go isInteractive: Always without a terminal is refused. IfAvailable (the
    // v1beta1 default) runs without our standard input, its error output on our stderr as under
    // kubectl (src/k8s/exec_credential.rs; tests/e2e/exec_once.rs checks both).
    let k = cluster("exec");
    let plugin = recording_plugin(&k.dir);
    let exec = |mode: &str| {
        let user = format!(
            "\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      args: [\"{}\"]\n{mode}",
            plugin.display(),
            k.dir.display()
        );
        move |text: String| text.replace("  user: {}", &format!("  user:{user}"))
    };
    for (name, mode) in [
        ("default", ""),
        ("if-available", "      interactiveMode: IfAvailable\n"),
    ] {
        let path = kubeconfig(&k, name, exec(mode));
        let run = nodes_in(
            &k.dir,
            &["--kubeconfig", path.to_str().unwrap()],
            &[],
            STDIN,
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(k.dir.join("info").exists(), "{name}: the plugin ran");
    }
    let path = kubeconfig(&k, "always", exec("      interactiveMode: Always\n"));
    let run = nodes_in(
        &k.dir,
        &["--kubeconfig", path.to_str().unwrap()],
        &[],
        STDIN,
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "user \"test-cluster\": exec.interactiveMode is Always, but standard input is not a terminal"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn in_a_pod_a_kubeconfig_naming_only_missing_files_gives_way_to_the_service_account() {
    // client-go DeferredLoadingClientConfig.ClientConfig: ErrEmptyConfig, in-cluster Possible().
    let cluster = TestCluster::start(Config {
        tls: true,
        ..Config::default()
    })
    .expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kcfg2-pod");
    let _ = std::fs::remove_dir_all(&dir);
    let account = dir.join("serviceaccount");
    std::fs::create_dir_all(&account).unwrap();
    std::fs::write(account.join("token"), format!("{PLANTED}-sa-token")).unwrap();
    std::fs::write(account.join("ca.crt"), tls::CA_PEM).unwrap();
    std::fs::write(account.join("namespace"), "kubectl-karpenter").unwrap();
    let admin = dir.join("admin.kubeconfig");
    cluster.write_kubeconfig(&admin).unwrap();
    let out = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
        .args(["apply", "-f", fixture("crds/v1").to_str().unwrap()])
        .env("KUBECONFIG", &admin)
        .env("HOME", &dir)
        .stdin(Stdio::null())
        .output()
        .expect("kubectl on PATH");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = cluster.addr.port().to_string();
    let missing = dir.join("missing.kubeconfig");
    let url = cluster.url();
    let run = nodes_in(
        &dir,
        &["--cluster-name", "pod-cluster", "--cluster-endpoint", &url],
        &[
            ("KUBECONFIG", missing.to_str().unwrap()),
            ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
            ("KUBERNETES_SERVICE_PORT", &port),
            (
                "KUBECTL_KARPENTER_SERVICEACCOUNT_DIR",
                account.to_str().unwrap(),
            ),
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}
