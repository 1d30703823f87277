//! [`Cluster`] over kube-rs: kubeconfig auth (tokens, client certificates, exec plugins such as
//! `aws eks get-token`), TLS with rustls + ring, blocking calls on a private runtime.
//!
//! Retries are ours ([`ReadRetry`]), not kube-rs's: its retry layer covers 429/503/504 only, not
//! a 500, a 502 or a reset connection, and backs off up to 15 times for as long as 1000 s. Ours
//! retries idempotent reads (GET) on 429, 5xx and no answer, with exponential backoff and the
//! server's `Retry-After`, a handful of times; writes are sent once — an eviction's 429 is a PDB
//! saying no, which the drain must see and report, and a write whose answer was lost may have
//! been applied: the use cases re-read and re-plan (resourceVersion preconditions turn a stale
//! write into a 409) instead of sending it blind again. A backoff is cut short when the run is
//! asked to stop (Ctrl-C, SIGTERM: [`KubeClient::interrupt_backoff_with`]); the read is then
//! not retried and its last answer returned, so the command ends at once and releases its lease.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use kube::client::AuthError;

use super::config::ClusterTarget;
use super::exec_credential::{BearerLayer, ExecError, ExecSource};
use super::{Cluster, ClusterError, LastRead, Method, Request, Response, WriteGate};

/// A connected cluster.
pub struct KubeClient {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    retry: ReadRetry,
    server: String,
    credential_plugin: Option<String>,
    install_hint: Option<String>,
    requests: AtomicU64,
    gate: Option<WriteGate>,
    last_read: Option<LastRead>,
    backoff: Backoff,
}

/// How a retry waits out its backoff: `false` when the run was asked to stop meanwhile (the
/// retry is then given up).
pub type Backoff = fn(Duration) -> bool;

/// Sleeps the whole backoff, whatever happens meanwhile.
pub fn sleep_through(d: Duration) -> bool {
    std::thread::sleep(d);
    true
}

impl KubeClient {
    /// Builds the clients (no request is sent yet; an exec credential plugin runs now unless this
    /// process already holds its credential — [`take_exec`] —, and again when its token expires).
    pub fn connect(target: &ClusterTarget) -> Result<KubeClient, ClusterError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Config(format!("cannot start the I/O runtime: {e}")))?;
        let mut config = runtime
            .block_on(kube::Config::from_custom_kubeconfig(
                target.kubeconfig.clone(),
                &target.options,
            ))
            .map_err(|e| ClusterError::Config(one_line(&e)))?;
        config.default_namespace = target.namespace.clone();
        // kubectl's proxy choice, not kube-rs's (src/k8s/proxy.rs).
        config.proxy_url = match target.proxy.as_deref().map(str::parse::<http::Uri>) {
            None => None,
            Some(Ok(uri)) => Some(uri),
            Some(Err(e)) => return Err(ClusterError::Config(format!("proxy: {e}"))),
        };
        config.read_timeout = target.request_timeout;
        if target.request_timeout.is_some() {
            config.reset_reader_on_write = true;
        }
        let server = config.cluster_url.to_string();
        config.default_retry = false;
        let bearer = take_exec(&mut config).map_err(|e| ClusterError::Transport {
            server: server.clone(),
            message: credential_error(&e, &target.plugin()),
        })?;
        let client = {
            // kube's Client spawns its connection tasks on the current runtime.
            let _guard = runtime.enter();
            let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| {
                ClusterError::Transport {
                    server: server.clone(),
                    message: describe(&e, &target.plugin()),
                }
            })?;
            match bearer {
                Some(source) => builder.with_layer(&BearerLayer(source)).build(),
                None => builder.build(),
            }
        };
        Ok(KubeClient {
            runtime,
            client,
            retry: ReadRetry::DEFAULT,
            server,
            credential_plugin: target.credential_plugin.clone(),
            install_hint: target.install_hint.clone(),
            requests: AtomicU64::new(0),
            gate: None,
            last_read: None,
            backoff: sleep_through,
        })
    }

    /// From now on, writes are refused once `gate` closes (the operator lease is lost).
    pub fn gate_writes(&mut self, gate: WriteGate) {
        self.gate = Some(gate);
    }

    /// From now on, every read's outcome is recorded in `last_read` (the health endpoint).
    pub fn record_reads(&mut self, last_read: LastRead) {
        self.last_read = Some(last_read);
    }

    /// From now on, a read's backoff before a retry is waited with `backoff`: a stop requested
    /// meanwhile ends it and the retry (the commands give the clock's Ctrl-C-aware sleep). The
    /// lease keeper's client keeps sleeping through: its release must still get through.
    pub fn interrupt_backoff_with(&mut self, backoff: Backoff) {
        self.backoff = backoff;
    }

    /// The API server URL.
    pub fn server(&self) -> &str {
        &self.server
    }
}

impl Cluster for KubeClient {
    fn send(&self, request: Request) -> Result<Response, ClusterError> {
        if request.method != Method::Get {
            if let Some(reason) = self.gate.as_ref().and_then(WriteGate::closed) {
                return Err(ClusterError::WritesStopped(reason));
            }
        }
        self.retry
            .send(request, |r| self.send_once(r), self.backoff)
    }

    fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

impl KubeClient {
    /// One attempt: one HTTP request, one answer (or none).
    fn send_once(&self, request: Request) -> Result<Response, ClusterError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let started = std::time::Instant::now();
        // Logged: method, path (with its query) and status; never headers, tokens or bodies.
        let path = request.path.clone();
        let method = match request.method {
            Method::Get => http::Method::GET,
            Method::Post => http::Method::POST,
            Method::Patch => http::Method::PATCH,
            Method::Put => http::Method::PUT,
            Method::Delete => http::Method::DELETE,
        };
        let verb = method.clone();
        let mut builder = http::Request::builder()
            .method(method)
            .uri(&request.path)
            .header(http::header::ACCEPT, "application/json");
        if request.body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, request.content_type);
        }
        let http_request = builder
            .body(kube::client::Body::from(request.body.unwrap_or_default()))
            .map_err(|e| ClusterError::Decode {
                path: request.path.clone(),
                message: e.to_string(),
            })?;
        let client = &self.client;
        // A credential plugin that fails is the kubeconfig's problem, not the network's: told
        // as such, and never retried (running it again would fail the same way).
        let transport = |e: kube::Error| {
            let plugin = Plugin {
                command: self.credential_plugin.as_deref(),
                install_hint: self.install_hint.as_deref(),
            };
            let message = describe(&e, &plugin);
            if auth_error(&e).is_some() {
                ClusterError::Config(message)
            } else {
                ClusterError::Transport {
                    server: self.server.clone(),
                    message,
                }
            }
        };
        let result = self.runtime.block_on(async {
            let response = client.send(http_request).await.map_err(transport)?;
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect_bytes()
                .await
                .map_err(transport)?;
            Ok(Response {
                status,
                body: body.to_vec(),
            })
        });
        let ms = started.elapsed().as_millis() as u64;
        if let (Some(last_read), true) = (&self.last_read, verb == http::Method::GET) {
            last_read.record(&result);
        }
        match &result {
            // Refusals and server errors at info (-v): a 403 names the verb and path an RBAC
            // rule is missing for. (404s are mostly discovery probes; they stay at debug.)
            Ok(r) if matches!(r.status, 401 | 403) || r.status >= 500 => {
                tracing::info!(method = %verb, path, status = r.status, ms, "Kubernetes request failed")
            }
            Ok(r) => {
                tracing::debug!(method = %verb, path, status = r.status, bytes = r.body.len(), ms, "Kubernetes request")
            }
            Err(e) => {
                tracing::info!(method = %verb, path, ms, error = %e, "Kubernetes request failed")
            }
        }
        result
    }
}

/// How idempotent reads are retried: on 429, 500, 502, 503, 504 and no answer (a reset or
/// refused connection, a timeout), up to `attempts` sends in all, waiting `first_backoff`,
/// doubling up to `max_backoff` — or what the server asked for (`Status.details.retryAfterSeconds`,
/// which the API server sends with its `Retry-After` header), up to `max_retry_after`.
/// Everything but a GET is sent once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRetry {
    /// Sends in all, the first included.
    pub attempts: u32,
    /// The wait before the first retry.
    pub first_backoff: Duration,
    /// The longest wait between two sends.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured (a server asking for more gets this).
    pub max_retry_after: Duration,
}

impl ReadRetry {
    /// client-go's order of magnitude: five sends within about 10 s of backoff.
    pub const DEFAULT: ReadRetry = ReadRetry {
        attempts: 5,
        first_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(4),
        max_retry_after: Duration::from_secs(10),
    };

    /// Sends `request` through `send`, again after `sleep` while the answer is transient and the
    /// request an idempotent read. The last answer (or error) is returned as it came — also when
    /// `sleep` says a stop was requested during the backoff.
    pub fn send(
        &self,
        request: Request,
        mut send: impl FnMut(Request) -> Result<Response, ClusterError>,
        mut sleep: impl FnMut(Duration) -> bool,
    ) -> Result<Response, ClusterError> {
        let idempotent = request.method == Method::Get && request.retry_throttled;
        let mut backoff = self.first_backoff;
        let mut attempt = 1;
        loop {
            let result = send(request.clone());
            let Some(asked) = transient(&result) else {
                return result;
            };
            if !idempotent || attempt >= self.attempts {
                return result;
            }
            let wait = asked.map_or(backoff, |a| a.min(self.max_retry_after).max(backoff));
            tracing::info!(
                method = request.method.as_str(),
                path = request.path,
                attempt,
                wait_ms = wait.as_millis() as u64,
                "Kubernetes read retried"
            );
            if !sleep(wait) {
                tracing::info!(
                    method = request.method.as_str(),
                    path = request.path,
                    "Kubernetes read not retried: stop requested"
                );
                return result;
            }
            backoff = (backoff * 2).min(self.max_backoff);
            attempt += 1;
        }
    }
}

/// `Some(retry-after asked for, if any)` when `result` is worth another try.
fn transient(result: &Result<Response, ClusterError>) -> Option<Option<Duration>> {
    match result {
        Ok(r) if matches!(r.status, 429 | 500 | 502 | 503 | 504) => Some(retry_after(&r.body)),
        Ok(_) => None,
        Err(ClusterError::Transport { .. }) => Some(None),
        Err(_) => None,
    }
}

/// A `Status` body's `details.retryAfterSeconds`.
fn retry_after(body: &[u8]) -> Option<Duration> {
    let status: serde_json::Value = serde_json::from_slice(body).ok()?;
    let seconds = status["details"]["retryAfterSeconds"].as_u64()?;
    (seconds > 0).then(|| Duration::from_secs(seconds))
}

/// The user's exec credential plugin, run by us (src/k8s/exec_credential.rs) when client-go
/// would run it (`validation::runs_exec`), so that kube-rs never runs it — it would run it three
/// times per client. The process's shared source runs it once (or not at all, when another
/// client of this process already holds its credential); kube-rs gets the config without
/// `exec`, and:
///
/// - a token: `Some(source)`, for the [`BearerLayer`] that sends it and runs the plugin again
///   when it expires or after a 401;
/// - a client certificate and key: handed to kube-rs as `client-certificate-data` and
///   `client-key-data` for the TLS handshake — what kube-rs made of the plugin's certificate too;
///   like kube-rs's, a client keeps its certificate until it ends (client-go's `GetCert`
///   callback would take a fresh one for new connections after expiry).
fn take_exec(config: &mut kube::Config) -> Result<Option<Arc<ExecSource>>, ExecError> {
    if !super::validation::runs_exec(&config.auth_info) {
        return Ok(None);
    }
    let Some(exec) = config.auth_info.exec.take() else {
        return Ok(None);
    };
    let source = ExecSource::shared(&exec)?;
    let credential = source.credential()?;
    if let (Some(cert), Some(key)) = (
        &credential.client_certificate_data,
        &credential.client_key_data,
    ) {
        let encode = |pem: &str| BASE64_STANDARD.encode(pem.as_bytes());
        let identity: kube::config::AuthInfo = serde_json::from_value(serde_json::json!({
            "client-certificate-data": encode(cert),
            "client-key-data": encode(key),
        }))
        .map_err(|_| ExecError::Unusable)?;
        config.auth_info.client_certificate_data = identity.client_certificate_data;
        config.auth_info.client_key_data = identity.client_key_data;
    }
    Ok(credential.token.is_some().then_some(source))
}

/// An error and its sources on one line.
pub(crate) fn one_line(e: &dyn std::error::Error) -> String {
    crate::error::error_chain(e).replace('\n', " ")
}

/// A kube error on one line. A credential plugin's failure is told by its command and exit
/// status only: kube-rs's own message quotes the plugin's environment and arguments and
/// everything it printed — the token too.
fn describe(e: &kube::Error, plugin: &Plugin) -> String {
    match auth_error(e) {
        Some(AuthFailure::Exec(exec)) => credential_error(exec, plugin),
        Some(AuthFailure::Kube(auth)) => kube_credential_error(auth, plugin),
        None => one_line(e),
    }
}

/// A credential failure: our exec runner's, or kube-rs's.
enum AuthFailure<'e> {
    Exec(&'e ExecError),
    Kube(&'e AuthError),
}

/// The credential failure in `e`'s chain, if that is what `e` is.
fn auth_error(e: &kube::Error) -> Option<AuthFailure<'_>> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(exec) = s.downcast_ref::<ExecError>() {
            return Some(AuthFailure::Exec(exec));
        }
        if let Some(auth) = s.downcast_ref::<AuthError>() {
            return Some(AuthFailure::Kube(auth));
        }
        source = s.source();
    }
    None
}

/// The kubeconfig user's exec credential plugin, as its errors name it.
#[derive(Default)]
pub(crate) struct Plugin<'a> {
    /// `exec.command`.
    pub command: Option<&'a str>,
    /// `exec.installHint`.
    pub install_hint: Option<&'a str>,
}

impl Plugin<'_> {
    /// `credential plugin "aws"`.
    fn name(&self) -> String {
        self.command.map_or_else(
            || "the kubeconfig's credential plugin".to_string(),
            |command| format!("credential plugin {command:?}"),
        )
    }
}

impl ClusterTarget {
    fn plugin(&self) -> Plugin<'_> {
        Plugin {
            command: self.credential_plugin.as_deref(),
            install_hint: self.install_hint.as_deref(),
        }
    }
}

const UNSHOWN: &str =
    "what it printed is not shown, as it may hold credentials: run it yourself to see why";

fn credential_error(e: &ExecError, plugin: &Plugin) -> String {
    let hint = plugin.install_hint;
    let plugin = plugin.name();
    match e {
        ExecError::Exit(status) => format!("{plugin} failed ({status}); {UNSHOWN}"),
        // Not installed: the kubeconfig's `installHint` says how to get it, as kubectl shows it
        // (client-go `plugin/pkg/client/auth/exec/exec.go` `refreshCredsLocked`: on
        // `exec.ErrNotFound` the hint follows; `cleanANSIEscapeCodes` — here every control
        // character and line break becomes a space). The hint is the kubeconfig author's text,
        // not a credential.
        ExecError::Start { kind, message } => {
            match hint.filter(|_| *kind == std::io::ErrorKind::NotFound) {
                Some(hint) => {
                    let hint: String = hint
                        .chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect();
                    let hint = hint.split_whitespace().collect::<Vec<_>>().join(" ");
                    format!("cannot run {plugin}: {message}; {hint}")
                }
                None => format!("cannot run {plugin}: {message}"),
            }
        }
        ExecError::Unusable => format!("{plugin} printed no usable ExecCredential; {UNSHOWN}"),
        // "exec plugin is configured to use API version %s, plugin returned version %s"
        ExecError::OtherApiVersion(configured) => format!(
            "{plugin} printed an ExecCredential of another apiVersion than its exec.apiVersion {configured} (kubectl refuses it too); {UNSHOWN}"
        ),
        ExecError::UnsupportedApiVersion(_) => format!("{plugin}: {e}"),
    }
}

/// kube-rs's own credential failures (an auth-provider, a token file; kube-rs no longer runs
/// exec plugins: [`take_exec`]), its exec ones worded as ours.
fn kube_credential_error(e: &AuthError, plugin: &Plugin) -> String {
    let ours = match e {
        AuthError::AuthExecRun { out, .. } => ExecError::Exit(out.status),
        AuthError::AuthExecStart(io) => ExecError::Start {
            kind: io.kind(),
            message: io.to_string(),
        },
        AuthError::AuthExecParse(_) | AuthError::ExecPluginFailed => ExecError::Unusable,
        AuthError::AuthExec(_) | AuthError::AuthExecSerialize(_) => {
            return format!("{} failed; {UNSHOWN}", plugin.name());
        }
        other => return one_line(other),
    };
    credential_error(&ours, plugin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeCluster, Fault, FaultAnswer};

    const NODES: &str = "/api/v1/nodes";

    /// Sends `request` to `fake` through the default policy; the waits it slept.
    fn through(
        fake: &FakeCluster,
        request: Request,
    ) -> (Result<Response, ClusterError>, Vec<Duration>) {
        let mut waits = Vec::new();
        let result = ReadRetry::DEFAULT.send(
            request,
            |r| fake.send(r),
            |d| {
                waits.push(d);
                true
            },
        );
        (result, waits)
    }

    fn sent(fake: &FakeCluster) -> usize {
        fake.requests().len()
    }

    #[test]
    fn a_read_is_retried_on_each_transient_answer_with_growing_backoff() {
        for status in [429, 500, 502, 503, 504] {
            let fake = FakeCluster::new();
            fake.fail_with(Method::Get, NODES, 2, status, "injected");
            let (result, waits) = through(&fake, Request::get(NODES));
            assert_eq!(
                result.unwrap().status,
                200,
                "{status} retried until it passes"
            );
            assert_eq!(sent(&fake), 3);
            assert_eq!(waits, [Duration::from_millis(500), Duration::from_secs(1)]);
        }
    }

    #[test]
    fn a_read_without_an_answer_is_retried() {
        let fake = FakeCluster::new();
        fake.fail(Fault {
            method: Some(Method::Get),
            path: NODES.into(),
            times: 1,
            answer: FaultAnswer::NoAnswer("connection reset by peer".into()),
        });
        let (result, waits) = through(&fake, Request::get(NODES));
        assert!(result.unwrap().ok());
        assert_eq!(waits.len(), 1);
    }

    #[test]
    fn a_read_gives_up_after_its_attempts_with_the_last_answer() {
        let fake = FakeCluster::new();
        fake.fail_with(Method::Get, NODES, 100, 503, "still down");
        let (result, waits) = through(&fake, Request::get(NODES));
        assert_eq!(
            result.unwrap().status,
            503,
            "the caller sees the last answer"
        );
        assert_eq!(sent(&fake), 5);
        assert_eq!(
            waits,
            [500, 1000, 2000, 4000].map(Duration::from_millis),
            "doubling, capped at max_backoff"
        );
        let fake = FakeCluster::new();
        fake.fail(Fault {
            method: None,
            path: NODES.into(),
            times: 100,
            answer: FaultAnswer::NoAnswer("timed out".into()),
        });
        let (result, _) = through(&fake, Request::get(NODES));
        assert!(matches!(result, Err(ClusterError::Transport { .. })));
        assert_eq!(sent(&fake), 5);
    }

    #[test]
    fn a_stop_during_the_backoff_ends_the_retry_with_the_last_answer() {
        let fake = FakeCluster::new();
        fake.fail_with(Method::Get, NODES, 100, 503, "still down");
        let mut waits = Vec::new();
        let result = ReadRetry::DEFAULT.send(
            Request::get(NODES),
            |r| fake.send(r),
            |d| {
                waits.push(d);
                false
            },
        );
        assert_eq!(result.unwrap().status, 503, "the last answer, at once");
        assert_eq!((sent(&fake), waits.len()), (1, 1), "no second send");
    }

    #[test]
    fn the_servers_retry_after_is_honoured_within_a_cap() {
        for (asked, waited) in [(3, 3), (600, 10)] {
            let fake = FakeCluster::new();
            let mut first = true;
            let mut waits = Vec::new();
            let throttled = Response {
                status: 429,
                body: format!(
                    r#"{{"kind":"Status","code":429,"details":{{"retryAfterSeconds":{asked}}}}}"#
                )
                .into_bytes(),
            };
            let result = ReadRetry::DEFAULT.send(
                Request::get(NODES),
                |r| {
                    if std::mem::take(&mut first) {
                        Ok(throttled.clone())
                    } else {
                        fake.send(r)
                    }
                },
                |d| {
                    waits.push(d);
                    true
                },
            );
            assert!(result.unwrap().ok());
            assert_eq!(waits, [Duration::from_secs(waited)]);
        }
    }

    #[test]
    fn writes_and_final_answers_are_sent_once() {
        let fake = FakeCluster::new();
        let patch = || Request::write(Method::Patch, "/api/v1/nodes/a", Some(b"{}".to_vec()));
        for status in [429, 500, 503] {
            fake.clear_requests();
            fake.fail_with(Method::Patch, "/api/v1/nodes/a", 1, status, "injected");
            let (result, waits) = through(&fake, patch());
            assert_eq!(
                result.unwrap().status,
                status,
                "a write's {status} is the caller's"
            );
            assert_eq!((sent(&fake), waits.len()), (1, 0));
        }
        fake.clear_requests();
        fake.fail(Fault {
            method: Some(Method::Post),
            path: "/eviction".into(),
            times: 1,
            answer: FaultAnswer::NoAnswer("connection reset by peer".into()),
        });
        let evict = Request::write(
            Method::Post,
            "/api/v1/namespaces/default/pods/p/eviction",
            Some(b"{}".to_vec()),
        );
        let (result, _) = through(&fake, evict);
        assert!(
            result.is_err(),
            "a write whose answer was lost is not sent blind again"
        );
        assert_eq!(sent(&fake), 1);
        let mut sends = 0;
        let failing_plugin = ReadRetry::DEFAULT.send(
            Request::get(NODES),
            |_| {
                sends += 1;
                Err(ClusterError::Config(
                    "credential plugin \"aws\" failed".into(),
                ))
            },
            |_| panic!("a credential plugin that fails is not waited for"),
        );
        assert!(failing_plugin.is_err());
        assert_eq!(sends, 1, "nor run again");
        for status in [404, 409, 403] {
            fake.clear_requests();
            fake.fail_with(Method::Get, NODES, 1, status, "final");
            let (result, waits) = through(&fake, Request::get(NODES));
            assert_eq!(result.unwrap().status, status);
            assert_eq!((sent(&fake), waits.len()), (1, 0), "{status} is an answer");
        }
    }

    #[test]
    fn a_failing_credential_plugin_is_told_without_its_output() {
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                "echo '{\"token\":\"planted-token\"}'; echo planted-stderr >&2; exit 3",
            ])
            .output()
            .unwrap();
        let e = kube::Error::Auth(AuthError::AuthExecRun {
            cmd: "SECRET_ENV=\"planted-env\" \"aws\" \"--planted-arg\"".into(),
            out: Box::new(out),
        });
        assert!(one_line(&e).contains("planted-token"), "kube-rs quotes it");
        assert!(
            auth_error(&e).is_some(),
            "told as the kubeconfig's, never retried"
        );
        let aws = Plugin {
            command: Some("aws"),
            install_hint: Some("planted hint"),
        };
        let got = describe(&e, &aws);
        assert_eq!(
            got,
            format!("credential plugin \"aws\" failed (exit status: 3); what it printed is not shown, as it may hold credentials: run it yourself to see why")
        );
        let missing = kube::Error::Auth(AuthError::AuthExecStart(std::io::Error::from(
            std::io::ErrorKind::NotFound,
        )));
        assert_eq!(
            describe(&missing, &Plugin::default()),
            "cannot run the kubeconfig's credential plugin: entity not found"
        );
    }

    /// A throwaway P-256 key and its self-signed certificate (also tests/e2e/secrets.rs's).
    const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgs9CzD3VPw4nzIRYB\nr1bE2te4kFZvabNo1fNdyWRdZWihRANCAATl2d3T1Yaf6VhCi//dV3GDH0NfMqfD\nfvLWGY7DUX+gPA/hckmNHqFmgOW1yqvAMT/R3kM9XphsGjWlWcPv5EQk\n-----END PRIVATE KEY-----\n";
    const CLIENT_CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBcjCCARigAwIBAgITX9xR0Hqn9j5LZfZrtE8kq1+XDzAKBggqhkjOPQQDAjAP\nMQ0wCwYDVQQDDAR0ZXN0MB4XDTI2MTIwMzExMzkxM1oXDTM2MTEzMDExMzkxM1ow\nDzENMAsGA1UEAwwEdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOXZ3dPV\nhp/pWEKL/91XcYMfQ18yp8N+8tYZjsNRf6A8D+FySY0eoWaA5bXKq8AxP9HeQz1e\nmGwaNaVZw+/kRCSjUzBRMB0GA1UdDgQWBBSe9izojWg4G66pVavCJFPLNTzwFTAf\nBgNVHSMEGDAWgBSe9izojWg4G66pVavCJFPLNTzwFTAPBgNVHRMBAf8EBTADAQH/\nMAoGCCqGSM49BAMCA0gAMEUCIBm5QVjoovhxv3Hdb13+/Q6znRe2AYUjT+4umNut\n49uQAiEAirwLkjGVWnmcV7BFZzatkhAA18GQy1FTSsupfMVccXc=\n-----END CERTIFICATE-----\n";

    /// A kube-rs config whose user runs a plugin printing `status` (JSON).
    fn config_with_plugin(test: &str, status: &str) -> kube::Config {
        let dir = std::env::temp_dir().join(format!(
            "kubectl-karpenter-take-exec-{}-{test}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let plugin = dir.join("plugin.sh");
        let printed = serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "kind": "ExecCredential",
            "status": serde_json::from_str::<serde_json::Value>(status).unwrap(),
        });
        std::fs::write(&plugin, format!("#!/bin/sh\ncat <<'EOF'\n{printed}\nEOF\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
        config.auth_info = serde_saphyr::from_str(&format!(
            "exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: {}, interactiveMode: Never}}\n",
            plugin.display()
        ))
        .unwrap();
        config
    }

    #[test]
    fn kube_rs_gets_the_plugins_token_through_the_layer_or_its_certificate_as_data() {
        use kube::client::ConfigExt;
        let mut token = config_with_plugin("token", r#"{"token":"tok"}"#);
        let source = take_exec(&mut token).unwrap().expect("a token: the layer");
        assert!(token.auth_info.exec.is_none(), "kube-rs never runs it");
        assert_eq!(source.runs(), 1);
        let json =
            serde_json::json!({"clientCertificateData": CLIENT_CERT, "clientKeyData": CLIENT_KEY});
        let mut cert = config_with_plugin("cert", &json.to_string());
        assert!(
            take_exec(&mut cert).unwrap().is_none(),
            "no token: no layer"
        );
        assert!(cert.auth_info.exec.is_none());
        assert_eq!(
            cert.auth_info.client_certificate_data.as_deref(),
            Some(BASE64_STANDARD.encode(CLIENT_CERT.as_bytes()).as_str())
        );
        cert.rustls_client_config()
            .expect("kube-rs takes the certificate and key for its TLS identity");
        // A token already there: client-go never runs the plugin (HasTokenAuth).
        let mut both = config_with_plugin("with-token", r#"{"token":"tok"}"#);
        both.auth_info.token = Some("kubeconfig-token".to_string().into());
        assert!(take_exec(&mut both).unwrap().is_none());
        assert!(
            both.auth_info.exec.is_some(),
            "left to kube-rs, which prefers the token"
        );
    }

    #[test]
    fn our_runners_failures_are_worded_as_kube_rs_ones_were() {
        let aws = Plugin {
            command: Some("aws"),
            install_hint: Some("brew install awscli"),
        };
        let status = std::process::Command::new("sh")
            .args(["-c", "exit 255"])
            .status()
            .unwrap();
        // As the bearer layer reports it: a request's error, told as the kubeconfig's.
        let failed = kube::Error::Service(Box::new(ExecError::Exit(status)));
        assert!(matches!(auth_error(&failed), Some(AuthFailure::Exec(_))));
        assert_eq!(
            describe(&failed, &aws),
            "credential plugin \"aws\" failed (exit status: 255); what it printed is not shown, as it may hold credentials: run it yourself to see why"
        );
        let missing = ExecError::Start {
            kind: std::io::ErrorKind::NotFound,
            message: "No such file or directory (os error 2)".into(),
        };
        assert_eq!(
            credential_error(&missing, &aws),
            "cannot run credential plugin \"aws\": No such file or directory (os error 2); brew install awscli"
        );
        let other = ExecError::OtherApiVersion("client.authentication.k8s.io/v1beta1".into());
        assert!(credential_error(&other, &aws).starts_with(
            "credential plugin \"aws\" printed an ExecCredential of another apiVersion than its exec.apiVersion client.authentication.k8s.io/v1beta1 (kubectl refuses it too)"
        ));
    }

    #[test]
    fn a_credential_plugin_that_is_not_installed_is_told_with_its_install_hint() {
        // client-go exec.go `refreshCredsLocked`: on exec.ErrNotFound the installHint follows.
        let missing = || {
            kube::Error::Auth(AuthError::AuthExecStart(std::io::Error::from(
                std::io::ErrorKind::NotFound,
            )))
        };
        let plugin = Plugin {
            command: Some("aws-iam-authenticator"),
            install_hint: Some("\u{1b}[1mInstall it:\n  brew install aws-iam-authenticator\n"),
        };
        assert_eq!(
            describe(&missing(), &plugin),
            "cannot run credential plugin \"aws-iam-authenticator\": entity not found; [1mInstall it: brew install aws-iam-authenticator"
        );
        let denied = kube::Error::Auth(AuthError::AuthExecStart(std::io::Error::from(
            std::io::ErrorKind::PermissionDenied,
        )));
        assert!(
            !describe(&denied, &plugin).contains("brew"),
            "only when it is missing"
        );
    }
}
