//! [`Cluster`] over kube-rs: kubeconfig auth (tokens, client certificates, exec plugins such as
//! `aws eks get-token`), TLS with rustls + ring, blocking calls on a private runtime.
//!
//! Two kube clients share the configuration: one with kube-rs's default retry layer (429/503/504
//! retried with backoff) for reads, one without for writes — an eviction's 429 is a PDB saying
//! no, which the drain must see and report, not a transient error to hide.

use std::sync::atomic::{AtomicU64, Ordering};

use kube::client::AuthError;

use super::config::ClusterTarget;
use super::{Cluster, ClusterError, LastRead, Method, Request, Response, WriteGate};

/// A connected cluster.
pub struct KubeClient {
    runtime: tokio::runtime::Runtime,
    reads: kube::Client,
    writes: kube::Client,
    server: String,
    credential_plugin: Option<String>,
    requests: AtomicU64,
    gate: Option<WriteGate>,
    last_read: Option<LastRead>,
}

impl KubeClient {
    /// Builds the clients (no request is sent yet; an exec credential plugin runs now, and again
    /// when its token expires).
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
        config.read_timeout = target.request_timeout;
        if target.request_timeout.is_some() {
            config.reset_reader_on_write = true;
        }
        let server = config.cluster_url.to_string();
        let build = |retry: bool| {
            let mut c = config.clone();
            c.default_retry = retry;
            // kube's Client spawns its connection tasks on the current runtime.
            let _guard = runtime.enter();
            kube::Client::try_from(c).map_err(|e| ClusterError::Transport {
                server: server.clone(),
                message: describe(&e, target.credential_plugin.as_deref()),
            })
        };
        let reads = build(true)?;
        let writes = build(false)?;
        Ok(KubeClient {
            runtime,
            reads,
            writes,
            server,
            credential_plugin: target.credential_plugin.clone(),
            requests: AtomicU64::new(0),
            gate: None,
            last_read: None,
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
        let client = if request.retry_throttled {
            &self.reads
        } else {
            &self.writes
        };
        let transport = |e: kube::Error| ClusterError::Transport {
            server: self.server.clone(),
            message: describe(&e, self.credential_plugin.as_deref()),
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

    fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// An error and its sources on one line.
pub(crate) fn one_line(e: &dyn std::error::Error) -> String {
    crate::error::error_chain(e).replace('\n', " ")
}

/// A kube error on one line. A credential plugin's failure is told by its command and exit
/// status only: kube-rs's own message quotes the plugin's environment and arguments and
/// everything it printed — the token too.
fn describe(e: &kube::Error, plugin: Option<&str>) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(auth) = s.downcast_ref::<AuthError>() {
            return credential_error(auth, plugin);
        }
        source = s.source();
    }
    one_line(e)
}

fn credential_error(e: &AuthError, plugin: Option<&str>) -> String {
    let plugin = plugin.map_or_else(
        || "the kubeconfig's credential plugin".to_string(),
        |command| format!("credential plugin {command:?}"),
    );
    const UNSHOWN: &str =
        "what it printed is not shown, as it may hold credentials: run it yourself to see why";
    match e {
        AuthError::AuthExecRun { out, .. } => {
            format!("{plugin} failed ({}); {UNSHOWN}", out.status)
        }
        AuthError::AuthExecStart(io) => format!("cannot run {plugin}: {io}"),
        AuthError::AuthExecParse(_) | AuthError::ExecPluginFailed => {
            format!("{plugin} printed no usable ExecCredential; {UNSHOWN}")
        }
        AuthError::AuthExec(_) | AuthError::AuthExecSerialize(_) => {
            format!("{plugin} failed; {UNSHOWN}")
        }
        other => one_line(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let got = describe(&e, Some("aws"));
        assert_eq!(
            got,
            format!("credential plugin \"aws\" failed (exit status: 3); what it printed is not shown, as it may hold credentials: run it yourself to see why")
        );
        let missing = kube::Error::Auth(AuthError::AuthExecStart(std::io::Error::from(
            std::io::ErrorKind::NotFound,
        )));
        assert_eq!(
            describe(&missing, None),
            "cannot run the kubeconfig's credential plugin: entity not found"
        );
    }
}
