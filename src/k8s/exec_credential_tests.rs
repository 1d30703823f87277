//! The runner against small shell-script plugins (client-go v0.36.3
//! `plugin/pkg/client/auth/exec/exec_test.go`: `TestRefreshCreds`, `TestRoundTripper`,
//! `TestAuthenticatorWithInteractive`-style cases, our own scripts).

use super::*;
use std::path::{Path, PathBuf};

const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

/// A fresh directory for one test.
fn dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kubectl-karpenter-exec-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plugin that appends a line to `dir/runs` and prints `body` (a shell heredoc).
fn plugin(dir: &Path, body: &str) -> String {
    let path = dir.join("plugin.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho run >> \"{}/runs\"\ncat <<'EOF'\n{body}\nEOF\n",
            dir.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.to_string_lossy().into_owned()
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn exec(command: &str, extra: &str) -> ExecConfig {
    serde_saphyr::from_str(&format!(
        "apiVersion: {V1BETA1}\ncommand: {command}\ninteractiveMode: Never\n{extra}"
    ))
    .unwrap()
}

fn credential(status: &str) -> String {
    format!(r#"{{"apiVersion":"{V1BETA1}","kind":"ExecCredential","status":{status}}}"#)
}

#[test]
fn a_token_is_read_and_kept_until_it_expires() {
    let d = dir("cached");
    let cmd = plugin(
        &d,
        &credential(r#"{"token":"tok-1","expirationTimestamp":"2099-01-01T00:00:00Z"}"#),
    );
    let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
    let first = source.credential().unwrap();
    assert_eq!(first.token.as_deref(), Some("tok-1"));
    assert_eq!(
        first.expires,
        crate::model::time::parse_rfc3339("2099-01-01T00:00:00Z")
    );
    for _ in 0..3 {
        assert!(Arc::ptr_eq(&source.credential().unwrap(), &first));
    }
    assert_eq!((runs(&d), source.runs()), (1, 1), "not expired: cached");
    // Without an expiry: kept for the process (credsExpired: a zero exp never expires).
    let d = dir("no-expiry");
    let cmd = plugin(&d, &credential(r#"{"token":"tok-2"}"#));
    let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
    source.credential().unwrap();
    source.credential().unwrap();
    assert_eq!(runs(&d), 1);
}

#[test]
fn an_expired_token_runs_the_plugin_again() {
    let d = dir("expired");
    let cmd = plugin(
        &d,
        &credential(r#"{"token":"tok","expirationTimestamp":"2000-01-01T00:00:00Z"}"#),
    );
    let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
    source.credential().unwrap();
    source.credential().unwrap();
    source.credential().unwrap();
    assert_eq!(runs(&d), 3, "expired each time: run each time");
    // now.After(exp): at the expiry itself the credential still holds.
    fn at_expiry() -> i64 {
        946_684_800_000
    }
    let d = dir("at-expiry");
    let cmd = plugin(
        &d,
        &credential(r#"{"token":"tok","expirationTimestamp":"2000-01-01T00:00:00Z"}"#),
    );
    let source = ExecSource::new(&exec(&cmd, ""), at_expiry).unwrap();
    source.credential().unwrap();
    source.credential().unwrap();
    assert_eq!(runs(&d), 1);
}

#[test]
fn a_401_forgets_the_credential_it_was_sent_with() {
    // roundTripper.RoundTrip → maybeRefreshCreds: only if it is still the one held.
    let d = dir("unauthorized");
    let cmd = plugin(&d, &credential(r#"{"token":"tok"}"#));
    let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
    let sent = source.credential().unwrap();
    source.unauthorized(&sent);
    let fresh = source.credential().unwrap();
    assert_eq!(runs(&d), 2);
    source.unauthorized(&sent);
    assert!(Arc::ptr_eq(&source.credential().unwrap(), &fresh));
    assert_eq!(runs(&d), 2, "an older credential's 401 changes nothing");
}

#[test]
fn output_kubectl_refuses_is_refused_without_quoting_it() {
    let cases = [
        // exec.go: "exec plugin is configured to use API version %s, plugin returned version %s".
        (
            r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"planted-tok"}}"#,
            "another apiVersion",
        ),
        (
            r#"{"kind":"ExecCredential","status":{"token":"planted-tok"}}"#,
            "another apiVersion",
        ),
        ("planted-garbage", "no usable"),
        (
            r#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"}"#,
            "no usable",
        ),
        (&credential("{}"), "no usable"),
        (
            &credential(r#"{"clientCertificateData":"planted-cert"}"#),
            "no usable",
        ),
        (
            &credential(r#"{"token":"planted-tok","expirationTimestamp":"soon"}"#),
            "no usable",
        ),
    ];
    for (i, (printed, expected)) in cases.into_iter().enumerate() {
        let d = dir(&format!("refused-{i}"));
        let cmd = plugin(&d, printed);
        let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
        let err = source.credential().unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(text.contains(expected), "{printed}: {text}");
        assert!(!text.contains("planted"), "{text}");
    }
    // YAML is an ExecCredential too (client-go's decoder takes it).
    let d = dir("yaml");
    let cmd = plugin(
        &d,
        &format!("apiVersion: {V1BETA1}\nkind: ExecCredential\nstatus:\n  token: tok\n"),
    );
    let source = ExecSource::new(&exec(&cmd, ""), system_now).unwrap();
    assert_eq!(source.credential().unwrap().token.as_deref(), Some("tok"));
    // A certificate and key, no token.
    let d = dir("cert");
    let cmd = plugin(
        &d,
        &credential(r#"{"clientCertificateData":"CERT","clientKeyData":"KEY"}"#),
    );
    let got = ExecSource::new(&exec(&cmd, ""), system_now)
        .unwrap()
        .credential()
        .unwrap();
    assert_eq!(
        (
            got.token.as_deref(),
            got.client_certificate_data.as_deref(),
            got.client_key_data.as_deref()
        ),
        (None, Some("CERT"), Some("KEY"))
    );
}

#[test]
fn an_unsupported_api_version_is_refused_before_running() {
    // newAuthenticator: only v1beta1 and v1 (v1alpha1 is gone since Kubernetes 1.24).
    let mut config = exec("/bin/true", "");
    config.api_version = Some("client.authentication.k8s.io/v1alpha1".into());
    let err = ExecSource::new(&config, system_now).unwrap_err();
    assert!(err.to_string().contains("v1alpha1"), "{err}");
}

#[test]
fn a_failing_or_missing_plugin_is_told_by_status_or_io_error() {
    let d = dir("failing");
    let path = d.join("fail.sh");
    std::fs::write(&path, "#!/bin/sh\necho planted-out\nexit 3\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let source = ExecSource::new(&exec(path.to_str().unwrap(), ""), system_now).unwrap();
    match source.credential() {
        Err(ExecError::Exit(status)) => assert_eq!(status.code(), Some(3)),
        other => panic!("{other:?}"),
    }
    let source = ExecSource::new(&exec("/nonexistent/plugin", ""), system_now).unwrap();
    match source.credential() {
        Err(ExecError::Start { kind, .. }) => assert_eq!(kind, std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_plugin_gets_its_args_env_exec_info_and_no_stdin_unless_interactive() {
    let d = dir("info");
    let path = d.join("info.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"{0}/info\"\nreadlink /proc/self/fd/0 > \"{0}/stdin\"\nprintf '%s %s' \"$1\" \"$EXTRA\" > \"{0}/args\"\necho '{1}'\n",
            d.display(),
            credential(r#"{"token":"tok"}"#)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = exec(
        path.to_str().unwrap(),
        "args: [first]\nenv: [{name: EXTRA, value: extra-value}]\nprovideClusterInfo: true\n",
    );
    config.cluster = Some(ExecAuthCluster {
        server: Some("https://k.example".into()),
        ..Default::default()
    });
    ExecSource::new(&config, system_now)
        .unwrap()
        .credential()
        .unwrap();
    let read = |f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    let info: serde_json::Value = serde_json::from_str(&read("info")).unwrap();
    assert_eq!(
        info,
        serde_json::json!({
            "apiVersion": V1BETA1,
            "kind": "ExecCredential",
            "spec": {"interactive": false, "cluster": {"server": "https://k.example"}},
        })
    );
    assert_eq!(
        read("stdin").trim(),
        "/dev/null",
        "not interactive: no stdin"
    );
    assert_eq!(read("args"), "first extra-value");
    // Without provideClusterInfo: no cluster; interactive (IfAvailable on a terminal): true.
    config.provide_cluster_info = false;
    config.interactive_mode = Some(ExecInteractiveMode::IfAvailable);
    ExecSource::new(&config, system_now)
        .unwrap()
        .credential()
        .unwrap();
    let info: serde_json::Value = serde_json::from_str(&read("info")).unwrap();
    assert_eq!(info["spec"], serde_json::json!({"interactive": true}));
}

#[test]
fn one_source_per_exec_config_for_the_process() {
    let d = dir("shared");
    let cmd = plugin(&d, &credential(r#"{"token":"tok"}"#));
    let a = ExecSource::shared(&exec(&cmd, "")).unwrap();
    let b = ExecSource::shared(&exec(&cmd, "")).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let other = ExecSource::shared(&exec(&cmd, "args: [x]\n")).unwrap();
    assert!(!Arc::ptr_eq(&a, &other));
    a.credential().unwrap();
    b.credential().unwrap();
    assert_eq!(runs(&d), 1);
}

#[test]
fn the_layer_sets_the_bearer_token_and_refreshes_after_a_401() {
    use tower::Service;
    let d = dir("layer");
    let cmd = plugin(&d, &credential(r#"{"token":"tok-l"}"#));
    let source = Arc::new(ExecSource::new(&exec(&cmd, ""), system_now).unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let status = Arc::new(Mutex::new(200u16));
    #[derive(Clone)]
    struct Echo(Arc<Mutex<Vec<Option<String>>>>, Arc<Mutex<u16>>);
    impl tower::Service<http::Request<()>> for Echo {
        type Response = http::Response<()>;
        type Error = BoxError;
        type Future = std::future::Ready<Result<http::Response<()>, BoxError>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, r: http::Request<()>) -> Self::Future {
            let auth = r.headers().get(http::header::AUTHORIZATION);
            self.0
                .lock()
                .unwrap()
                .push(auth.map(|v| v.to_str().unwrap().to_string()));
            let status = *self.1.lock().unwrap();
            std::future::ready(Ok(http::Response::builder()
                .status(status)
                .body(())
                .unwrap()))
        }
    }
    let mut service = tower::Layer::layer(
        &BearerLayer(source.clone()),
        Echo(seen.clone(), status.clone()),
    );
    let send = |service: &mut Bearer<Echo>, r: http::Request<()>| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(service.call(r)).unwrap().status().as_u16()
    };
    let request = || http::Request::builder().uri("/api").body(()).unwrap();
    assert_eq!(send(&mut service, request()), 200);
    assert_eq!(send(&mut service, request()), 200);
    assert_eq!(runs(&d), 1);
    *status.lock().unwrap() = 401;
    assert_eq!(send(&mut service, request()), 401);
    *status.lock().unwrap() = 200;
    send(&mut service, request());
    assert_eq!(runs(&d), 2, "run once more after the 401");
    let own = http::Request::builder()
        .header(http::header::AUTHORIZATION, "Basic x")
        .body(())
        .unwrap();
    send(&mut service, own);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            Some("Bearer tok-l".to_string()),
            Some("Bearer tok-l".into()),
            Some("Bearer tok-l".into()),
            Some("Bearer tok-l".into()),
            Some("Basic x".into()),
        ]
    );
}
