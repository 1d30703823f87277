//! Credentials never reach the terminal (docs/spec.md §6, issue #13): secrets are planted everywhere a
//! user has them — the AWS variables (access key id, secret key, session token), a bearer
//! token and a client key in the kubeconfig, an exec credential plugin's environment,
//! arguments, output and error output — and ALL of stdout and stderr is searched for them, at
//! every verbosity: `-q`, default, `-v`, `-vv`, `-vvv`, the `KUBECTL_KARPENTER_LOG` filters
//! the README suggests (kube-rs's and the AWS SDK's `debug` lines included), and the same as JSON
//! lines (`--log-format json`). The one exception is the plugin's own error output, which reaches
//! our stderr untouched as under kubectl (each run shows the plugin's line once, as it wrote it).

use std::path::{Path, PathBuf};

use crate::moto::{karpenter_command, run, Moto};
use crate::support::{root, Run};
use crate::test_cluster::{Config, TestCluster};

const ACCESS_KEY_ID: &str = "AKIAPLANTEDKEYID0001";
const SECRET_ACCESS_KEY: &str = "planted/Secret+Access+Key/0001";
const SESSION_TOKEN: &str = "planted-session-token-0001";
const BEARER: &str = "planted-bearer-token-0001";
const EXEC_TOKEN: &str = "planted-exec-token-0001";
const EXEC_GOOD_TOKEN: &str = "planted-exec-good-token-0001";
const EXEC_STDERR: &str = "planted-exec-stderr-0001";
const EXEC_ENV: &str = "planted-exec-env-0001";
const EXEC_ARG: &str = "planted-exec-arg-0001";

/// A throwaway P-256 key and its self-signed certificate (`openssl req -x509 -newkey ec`),
/// made for this test only.
const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgs9CzD3VPw4nzIRYB
r1bE2te4kFZvabNo1fNdyWRdZWihRANCAATl2d3T1Yaf6VhCi//dV3GDH0NfMqfD
fvLWGY7DUX+gPA/hckmNHqFmgOW1yqvAMT/R3kM9XphsGjWlWcPv5EQk
-----END PRIVATE KEY-----
";
const CLIENT_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBcjCCARigAwIBAgITX9xR0Hqn9j5LZfZrtE8kq1+XDzAKBggqhkjOPQQDAjAP
MQ0wCwYDVQQDDAR0ZXN0MB4XDTI2MTIwMzExMzkxM1oXDTM2MTEzMDExMzkxM1ow
DzENMAsGA1UEAwwEdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOXZ3dPV
hp/pWEKL/91XcYMfQ18yp8N+8tYZjsNRf6A8D+FySY0eoWaA5bXKq8AxP9HeQz1e
mGwaNaVZw+/kRCSjUzBRMB0GA1UdDgQWBBSe9izojWg4G66pVavCJFPLNTzwFTAf
BgNVHSMEGDAWgBSe9izojWg4G66pVavCJFPLNTzwFTAPBgNVHRMBAf8EBTADAQH/
MAoGCCqGSM49BAMCA0gAMEUCIBm5QVjoovhxv3Hdb13+/Q6znRe2AYUjT+4umNut
49uQAiEAirwLkjGVWnmcV7BFZzatkhAA18GQy1FTSsupfMVccXc=
-----END CERTIFICATE-----
";

/// Every verbosity: flags, and the `KUBECTL_KARPENTER_LOG` values (the README's first); the
/// last two as JSON lines (`--log-format json`, in-cluster).
const VERBOSITIES: [(&[&str], &str); 10] = [
    (&["-q"], ""),
    (&[], ""),
    (&["-v"], ""),
    (&["-vv"], ""),
    (&["-vvv"], ""),
    (
        &[],
        "kubectl_karpenter=debug,kube_client=debug,aws_smithy_runtime=debug",
    ),
    (&[], "debug"),
    (&["-q"], "trace"),
    (&["--log-format", "json", "-vv"], ""),
    (
        &["--log-format=json"],
        "kubectl_karpenter=debug,kube_client=debug,aws_smithy_runtime=debug",
    ),
];

fn base64(bytes: &[u8]) -> String {
    kubectl_karpenter::cloud::userdata::base64_encode(bytes)
}

/// The planted values, and the forms they take on the way (the key's base64 and body).
fn planted() -> Vec<String> {
    let mut all: Vec<String> = [
        ACCESS_KEY_ID,
        SECRET_ACCESS_KEY,
        SESSION_TOKEN,
        BEARER,
        EXEC_TOKEN,
        EXEC_GOOD_TOKEN,
        EXEC_STDERR,
        EXEC_ENV,
        EXEC_ARG,
    ]
    .map(str::to_string)
    .to_vec();
    all.push(base64(CLIENT_KEY.as_bytes()));
    all.extend(
        CLIENT_KEY
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .map(str::to_string),
    );
    all
}

fn kubeconfig(dir: &Path, name: &str, server: &str, user: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster: {{server: \"{server}\"}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user:\n{user}"
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// An exec plugin printing an ExecCredential with `token` and `stderr` on its error output,
/// exiting with `status`.
fn plugin(dir: &Path, name: &str, token: &str, status: u8) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'\necho \"{EXEC_STDERR} $SECRET_ENV\" >&2\nexit {status}\n"
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("755")
        .arg(&path)
        .status()
        .unwrap();
    path
}

fn exec_user(plugin: &Path) -> String {
    format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      args: [eks, get-token, --cluster-name, my-cluster, --role, {EXEC_ARG}]\n      env: [{{name: SECRET_ENV, value: {EXEC_ENV}}}]\n      interactiveMode: Never\n",
        plugin.display()
    )
}

fn karpenter(moto: &Moto, args: &[&str], flags: &[&str], log: &str) -> Run {
    let mut cmd = karpenter_command(args);
    cmd.args(flags)
        .env("AWS_ENDPOINT_URL", &moto.url)
        .env("AWS_REGION", moto.region())
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
        .env("AWS_SESSION_TOKEN", SESSION_TOKEN)
        .env("KUBECTL_KARPENTER_LOG", log);
    run(cmd)
}

#[test]
fn no_credential_reaches_the_terminal_at_any_verbosity() {
    let moto = Moto::shared();
    let cluster = TestCluster::start(Config::default()).expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("secrets");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = cluster.url();
    let with_key = kubeconfig(
        &dir,
        "token-and-key",
        &server,
        &format!(
            "    token: {BEARER}\n    client-certificate-data: {}\n    client-key-data: {}\n",
            base64(CLIENT_CERT.as_bytes()),
            base64(CLIENT_KEY.as_bytes())
        ),
    );
    let failing = kubeconfig(
        &dir,
        "exec-failing",
        &server,
        &exec_user(&plugin(&dir, "failing.sh", EXEC_TOKEN, 1)),
    );
    let working = kubeconfig(
        &dir,
        "exec-working",
        &server,
        &exec_user(&plugin(&dir, "working.sh", EXEC_GOOD_TOKEN, 0)),
    );
    let manifest = root().join("examples/manifests/quickstart.yaml");
    let manifest = manifest.to_string_lossy();
    let secrets = planted();
    let mut redacted_sdk_line = false;
    for (flags, log) in VERBOSITIES {
        let runs = [
            (
                "ami (AWS)",
                karpenter(moto, &["ami", "-f", &manifest], flags, log),
                0,
            ),
            (
                "nodes (bearer token, client key)",
                karpenter(
                    moto,
                    &["nodes", "--no-aws", "--kubeconfig", &with_key],
                    flags,
                    log,
                ),
                0,
            ),
            (
                "nodes (exec plugin)",
                karpenter(
                    moto,
                    &["nodes", "--no-aws", "--kubeconfig", &working],
                    flags,
                    log,
                ),
                0,
            ),
            (
                "nodes (failing exec plugin)",
                karpenter(
                    moto,
                    &["nodes", "--no-aws", "--kubeconfig", &failing],
                    flags,
                    log,
                ),
                3,
            ),
        ];
        for (what, out, code) in runs {
            // The plugin's own error output reaches our stderr as it is, as under kubectl
            // (client-go exec.go: `cmd.Stderr` is always ours): the plugin talking, not this
            // tool — once per run (the plugin runs once), a line of its own, and nowhere else.
            let own = format!("{EXEC_STDERR} {EXEC_ENV}\n");
            let expected = usize::from(what.contains("exec plugin"));
            assert_eq!(
                out.stderr.matches(&own).count(),
                expected,
                "{what} {flags:?} {log:?}: {}",
                out.stderr
            );
            let all = format!("{}{}", out.stdout, out.stderr.replacen(&own, "", 1));
            assert_eq!(out.code, code, "{what} {flags:?} {log:?}: {all}");
            for secret in &secrets {
                assert!(
                    !all.contains(secret.as_str()),
                    "{what} {flags:?} KUBECTL_KARPENTER_LOG={log:?} shows {secret:?}:\n{all}"
                );
            }
            if code == 3 {
                // (In a JSON line the quote is escaped.)
                assert!(
                    out.stderr.contains("failing.sh\" failed (exit status: 1)")
                        || out
                            .stderr
                            .contains("failing.sh\\\" failed (exit status: 1)"),
                    "the plugin and its status are named: {}",
                    out.stderr
                );
            }
            redacted_sdk_line |= what.starts_with("ami")
                && out.stderr.contains("aws_smithy_runtime")
                && out.stderr.contains("[redacted]");
        }
    }
    assert!(
        redacted_sdk_line,
        "the SDK's debug lines were shown, with the key id redacted"
    );
}
