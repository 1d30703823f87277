//! The kubeconfig user's exec credential plugin (`aws eks get-token`, `aws-iam-authenticator`,
//! `kubelogin`…), run by us as kubectl runs it — once per process, not once per client piece.
//!
//! kube-rs 5 runs the plugin three times for every client it builds (the TLS connector, the
//! client's expiry, the auth layer: `Config::exec_identity_pem` twice and `Auth::try_from`), and
//! a command holding the operator lease builds two clients: up to six runs of a plugin that
//! takes half a second to a second each. client-go v0.36.3 (`7a46b3e8`, Apache-2.0)
//! `plugin/pkg/client/auth/exec/exec.go` keeps one `Authenticator` per exec config and cluster
//! in a process-wide cache (`globalCache`, `cacheKey`), runs the plugin when it has no
//! credential or the one it has expired (`getCreds`, `credsExpired`), and once more after a 401
//! (`roundTripper.RoundTrip` → `maybeRefreshCreds`). This module does the same:
//!
//! - [`ExecSource::shared`]: one source per exec config (and cluster info) for the whole
//!   process, shared by every client built from it (the command's and the lease keeper's);
//! - [`ExecSource::credential`]: the cached credential, else a run (`refreshCredsLocked`): the
//!   plugin with its `args`, its `env` over ours, and `KUBERNETES_EXEC_INFO` (`apiVersion`,
//!   `kind: ExecCredential`, `spec.interactive`, `spec.cluster` with `provideClusterInfo`);
//!   standard input ours only when interactive (`cmd.Stdin` is left nil otherwise: the null
//!   device), standard error always ours, standard output read as an `ExecCredential` of the
//!   configured `apiVersion` (another is refused). Kept in memory only, never on disk;
//! - [`BearerLayer`]: the tower layer that sets `Authorization: Bearer` from the source on each
//!   request that has none (`roundTripper.RoundTrip`), and forgets the credential on a 401 if it
//!   is still the one sent (`maybeRefreshCreds`), so the next request runs the plugin again.
//!
//! Errors never carry what the plugin printed, its environment or its arguments
//! (docs/security.md); `client.rs` words them.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use kube::config::{ExecAuthCluster, ExecConfig, ExecInteractiveMode};
use serde::{Deserialize, Serialize};

/// The `apiVersion`s client-go accepts for an exec plugin (`exec.go` `apiVersions`; v1alpha1
/// was removed in Kubernetes 1.24).
pub const API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1",
];

/// Why the plugin gave no credential. Its `Display` is generic on purpose: `client.rs`
/// `credential_error` names the plugin.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The plugin could not be started (`NotFound`: not installed).
    #[error("the credential plugin could not be started")]
    Start {
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
        /// The I/O error's text (the OS's, never the plugin's).
        message: String,
    },
    /// The plugin exited unsuccessfully.
    #[error("the credential plugin failed ({0})")]
    Exit(ExitStatus),
    /// Its output was no `ExecCredential` with a token or a certificate and key.
    #[error("the credential plugin printed no usable ExecCredential")]
    Unusable,
    /// Its `ExecCredential` had another `apiVersion` than `exec.apiVersion` (the configured one).
    #[error("the credential plugin returned an ExecCredential of another apiVersion than {0}")]
    OtherApiVersion(String),
    /// `exec.apiVersion` is none client-go supports.
    #[error("exec.apiVersion {0:?} is not supported (client.authentication.k8s.io/v1 or v1beta1)")]
    UnsupportedApiVersion(String),
}

/// What the plugin returned.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// `status.token`.
    pub token: Option<String>,
    /// `status.clientCertificateData` (PEM).
    pub client_certificate_data: Option<String>,
    /// `status.clientKeyData` (PEM).
    pub client_key_data: Option<String>,
    /// `status.expirationTimestamp`, in seconds since the epoch.
    pub expires: Option<i64>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field(
                "client_certificate",
                &self.client_certificate_data.is_some(),
            )
            .field("expires", &self.expires)
            .finish()
    }
}

/// How to run the plugin. No `Debug`: its `env` values and `args` may hold secrets.
#[derive(Clone)]
struct Plugin {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    api_version: String,
    interactive: bool,
    cluster: Option<ExecAuthCluster>,
}

/// One plugin's credential, shared by every client of the process.
pub struct ExecSource {
    plugin: Plugin,
    cached: Mutex<Option<Arc<Credential>>>,
    /// Milliseconds since the epoch (the system clock; tests set their own).
    now: fn() -> i64,
    runs: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for ExecSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecSource")
            .field("command", &self.plugin.command)
            .finish_non_exhaustive()
    }
}

fn system_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// client-go's `globalCache`: one source per exec config and cluster, for the process.
static SOURCES: Mutex<Option<HashMap<String, Arc<ExecSource>>>> = Mutex::new(None);

impl ExecSource {
    /// The process's source for `exec` (the kubeconfig user's, after
    /// `validation::arrange_user`: `interactiveMode` resolved, so `Never` means no standard
    /// input; `exec.cluster` is kube-rs's, filled in when `provideClusterInfo` is set).
    pub fn shared(exec: &ExecConfig) -> Result<Arc<ExecSource>, ExecError> {
        let key = format!(
            "{}\n{}",
            serde_json::to_string(exec).unwrap_or_default(),
            serde_json::to_string(&exec.cluster).unwrap_or_default()
        );
        let mut sources = SOURCES.lock().unwrap_or_else(|e| e.into_inner());
        let sources = sources.get_or_insert_with(HashMap::new);
        if let Some(source) = sources.get(&key) {
            return Ok(source.clone());
        }
        let source = Arc::new(ExecSource::new(exec, system_now)?);
        sources.insert(key, source.clone());
        Ok(source)
    }

    /// A source of its own (not shared), on the clock `now` (milliseconds since the epoch).
    pub fn new(exec: &ExecConfig, now: fn() -> i64) -> Result<ExecSource, ExecError> {
        let api_version = exec.api_version.clone().unwrap_or_default();
        if !API_VERSIONS.contains(&api_version.as_str()) {
            // newAuthenticator: "exec plugin: invalid apiVersion %q".
            return Err(ExecError::UnsupportedApiVersion(api_version));
        }
        let env = exec
            .env
            .iter()
            .flatten()
            .filter_map(|e| Some((e.get("name")?.clone(), e.get("value")?.clone())))
            .collect();
        Ok(ExecSource {
            plugin: Plugin {
                command: exec.command.clone().unwrap_or_default(),
                args: exec.args.clone().unwrap_or_default(),
                env,
                api_version,
                interactive: exec.interactive_mode != Some(ExecInteractiveMode::Never),
                cluster: exec.cluster.clone().filter(|_| exec.provide_cluster_info),
            },
            cached: Mutex::new(None),
            now,
            runs: Default::default(),
        })
    }

    /// The credential: the one held unless it has expired (`getCreds`), else the plugin's
    /// next. Runs the plugin under the lock, so two clients asking at once run it once.
    pub fn credential(&self) -> Result<Arc<Credential>, ExecError> {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(credential) = cached.as_ref() {
            // credsExpired: `now.After(exp)`.
            if credential.expires.is_none_or(|e| (self.now)() <= e * 1000) {
                return Ok(credential.clone());
            }
        }
        let fresh = Arc::new(self.run()?);
        *cached = Some(fresh.clone());
        Ok(fresh)
    }

    /// A 401 answered a request sent with `sent`: forgotten if it is still the one held
    /// (`maybeRefreshCreds`), so the next request runs the plugin again.
    pub fn unauthorized(&self, sent: &Arc<Credential>) {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if cached.as_ref().is_some_and(|c| Arc::ptr_eq(c, sent)) {
            *cached = None;
        }
    }

    /// How many times the plugin ran.
    pub fn runs(&self) -> u64 {
        self.runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// One run of the plugin (`refreshCredsLocked`).
    fn run(&self) -> Result<Credential, ExecError> {
        let plugin = &self.plugin;
        let info = ExecInfo {
            api_version: &plugin.api_version,
            kind: "ExecCredential",
            spec: Spec {
                interactive: plugin.interactive,
                cluster: plugin.cluster.as_ref(),
            },
        };
        let mut command = Command::new(&plugin.command);
        command
            .args(&plugin.args)
            .envs(plugin.env.iter().map(|(k, v)| (k, v)))
            .env(
                "KUBERNETES_EXEC_INFO",
                serde_json::to_string(&info).unwrap_or_default(),
            )
            .stdin(if plugin.interactive {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(
            command = plugin.command,
            interactive = plugin.interactive,
            "running the credential plugin"
        );
        let out = command.output().map_err(|e| ExecError::Start {
            kind: e.kind(),
            message: e.to_string(),
        })?;
        if !out.status.success() {
            return Err(ExecError::Exit(out.status));
        }
        let credential = parse(&out.stdout, &plugin.api_version)?;
        // Remembered for redaction, like the kubeconfig's own tokens.
        for secret in [&credential.token, &credential.client_key_data]
            .into_iter()
            .flatten()
        {
            crate::error::redact::remember(secret);
        }
        Ok(credential)
    }
}

/// `KUBERNETES_EXEC_INFO`.
#[derive(Serialize)]
struct ExecInfo<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'static str,
    spec: Spec<'a>,
}

#[derive(Serialize)]
struct Spec<'a> {
    interactive: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a ExecAuthCluster>,
}

/// The plugin's output (JSON, or YAML as client-go's decoder also takes).
#[derive(Deserialize)]
struct Printed {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    status: Option<Status>,
}

#[derive(Deserialize)]
struct Status {
    #[serde(rename = "expirationTimestamp")]
    expiration_timestamp: Option<String>,
    token: Option<String>,
    #[serde(rename = "clientCertificateData")]
    client_certificate_data: Option<String>,
    #[serde(rename = "clientKeyData")]
    client_key_data: Option<String>,
}

/// The credential in `stdout`, checked as `refreshCredsLocked` checks it: the configured
/// `apiVersion`, a status, a token or a certificate and key (both or neither).
fn parse(stdout: &[u8], api_version: &str) -> Result<Credential, ExecError> {
    let printed: Printed = serde_saphyr::from_slice(stdout).map_err(|_| ExecError::Unusable)?;
    if printed.kind != "ExecCredential" {
        return Err(ExecError::Unusable);
    }
    if printed.api_version != api_version {
        return Err(ExecError::OtherApiVersion(api_version.to_string()));
    }
    let status = printed.status.ok_or(ExecError::Unusable)?;
    let set = |v: Option<String>| v.filter(|v| !v.is_empty());
    let token = set(status.token);
    let cert = set(status.client_certificate_data);
    let key = set(status.client_key_data);
    if (token.is_none() && cert.is_none() && key.is_none()) || cert.is_some() != key.is_some() {
        return Err(ExecError::Unusable);
    }
    let expires = match status.expiration_timestamp.filter(|t| !t.is_empty()) {
        None => None,
        Some(t) => Some(crate::model::time::parse_rfc3339(&t).ok_or(ExecError::Unusable)?),
    };
    Ok(Credential {
        token,
        client_certificate_data: cert,
        client_key_data: key,
        expires,
    })
}

/// Errors of a request through [`Bearer`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Sets `Authorization: Bearer <token>` from a source on every request that has none.
#[derive(Clone)]
pub struct BearerLayer(pub Arc<ExecSource>);

impl<S> tower::Layer<S> for BearerLayer {
    type Service = Bearer<S>;

    fn layer(&self, inner: S) -> Bearer<S> {
        Bearer {
            inner,
            source: self.0.clone(),
        }
    }
}

/// [`BearerLayer`]'s service.
pub struct Bearer<S> {
    inner: S,
    source: Arc<ExecSource>,
}

type Answer<R> = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

impl<S, B, R> tower::Service<http::Request<B>> for Bearer<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<R>;
    type Error = BoxError;
    type Future = Answer<http::Response<R>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        if request.headers().contains_key(http::header::AUTHORIZATION) {
            let answer = self.inner.call(request);
            return Box::pin(async move { answer.await.map_err(Into::into) });
        }
        // Told as the request's error (a credential plugin that fails is the kubeconfig's
        // problem: client.rs never retries it).
        let credential = match self.source.credential() {
            Ok(c) => c,
            Err(e) => return Box::pin(std::future::ready(Err(Box::new(e) as BoxError))),
        };
        if let Some(token) = &credential.token {
            if let Ok(mut value) = http::HeaderValue::from_str(&format!("Bearer {token}")) {
                value.set_sensitive(true);
                request
                    .headers_mut()
                    .insert(http::header::AUTHORIZATION, value);
            }
        }
        let answer = self.inner.call(request);
        let source = self.source.clone();
        Box::pin(async move {
            let response = answer.await.map_err(Into::into)?;
            if response.status() == http::StatusCode::UNAUTHORIZED {
                source.unauthorized(&credential);
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
#[path = "exec_credential_tests.rs"]
mod tests;
