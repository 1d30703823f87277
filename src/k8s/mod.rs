//! The Kubernetes edge: one narrow trait ([`Cluster`]: send one HTTP request, get status and
//! body back), its kube-rs implementation ([`client::KubeClient`]), and everything typed on top
//! of it as free functions ([`ops`], [`snapshot`], [`coexist`]).
//!
//! Why so narrow: the core never sees Kubernetes objects, only the slim model; and a raw
//! request/response seam lets the adapter decide per call whether a 429 may be retried (never
//! for evictions: a PDB refusal must reach the drain logic, not be hidden by kube-rs's default
//! retry layer), decode list pages straight into slim serde types (docs/performance.md B4), and keep one
//! error type whose message names the object.

pub mod buffers;
pub mod client;
pub mod coexist;
pub mod config;
mod decode;
pub mod exec_credential;
#[doc(hidden)]
pub mod fake;
pub mod ops;
pub mod proxy;
pub mod snapshot;
pub mod validation;

use std::fmt;
use std::sync::{Arc, Mutex};

/// HTTP methods the tool uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// GET.
    Get,
    /// POST (create, eviction).
    Post,
    /// PATCH.
    Patch,
    /// PUT.
    Put,
    /// DELETE.
    Delete,
}

impl Method {
    /// The verb as HTTP spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// One API request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method.
    pub method: Method,
    /// Path and query (`/api/v1/nodes?limit=500`).
    pub path: String,
    /// Body (JSON, or a patch document).
    pub body: Option<Vec<u8>>,
    /// Content type of the body.
    pub content_type: &'static str,
    /// Whether a 429/503/504 may be retried transparently. Off for evictions and writes whose
    /// refusal is information (a PDB), on for reads.
    pub retry_throttled: bool,
}

impl Request {
    /// A GET, retried on throttling.
    pub fn get(path: impl Into<String>) -> Request {
        Request {
            method: Method::Get,
            path: path.into(),
            body: None,
            content_type: "application/json",
            retry_throttled: true,
        }
    }

    /// A write with a JSON body, never retried on 429.
    pub fn write(method: Method, path: impl Into<String>, body: Option<Vec<u8>>) -> Request {
        Request {
            method,
            path: path.into(),
            body,
            content_type: "application/json",
            retry_throttled: false,
        }
    }
}

/// An API answer: status and body (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// The seam to a Kubernetes API server: one request, one answer. Implementations do transport
/// and authentication; statuses (404, 409, 429, …) are the caller's to interpret.
pub trait Cluster {
    /// Sends a request. `Err` only when no HTTP answer came (transport, authentication, timeout).
    fn send(&self, request: Request) -> Result<Response, ClusterError>;
    /// Requests sent so far (for `-v` and the docs/performance.md B3 budget).
    fn request_count(&self) -> u64;
}

/// What can go wrong talking to the cluster. Messages are one line and name the object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// No usable kubeconfig / context.
    #[error("kubeconfig: {0}")]
    Config(String),
    /// No answer (connection refused, TLS, credentials plugin, timeout).
    #[error("cannot reach the Kubernetes API at {server}: {message}")]
    Transport {
        /// API server URL.
        server: String,
        /// Cause.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{}", api_message(.method, .path, *.status, .message))]
    Api {
        /// Method.
        method: &'static str,
        /// Path.
        path: String,
        /// HTTP status.
        status: u16,
        /// `Status.reason` (`NotFound`, `Forbidden`, …).
        reason: String,
        /// `Status.message`.
        message: String,
    },
    /// Not sent: this run may no longer write (its operator lease was lost).
    #[error("{0}: nothing more is written (another run may be changing the cluster)")]
    WritesStopped(String),
    /// The answer was not what the API promises.
    #[error("unexpected answer from {path}: {message}")]
    Decode {
        /// Path.
        path: String,
        /// Cause.
        message: String,
    },
}

fn api_message(method: &str, path: &str, status: u16, message: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    format!("{method} {path}: {status} {message}")
}

impl ClusterError {
    /// The HTTP status, for API errors.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClusterError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
    /// 403: the identity lacks an RBAC permission.
    pub fn is_forbidden(&self) -> bool {
        self.status() == Some(403)
    }
    /// Builds the error for a non-2xx answer, reading the `Status` body when there is one.
    pub fn from_response(method: Method, path: &str, response: &Response) -> ClusterError {
        #[derive(serde::Deserialize, Default)]
        struct Status {
            #[serde(default)]
            reason: String,
            #[serde(default)]
            message: String,
            #[serde(default)]
            details: Details,
        }
        #[derive(serde::Deserialize, Default)]
        struct Details {
            #[serde(default)]
            causes: Vec<Cause>,
        }
        #[derive(serde::Deserialize, Default)]
        struct Cause {
            #[serde(default)]
            message: String,
        }
        let mut status: Status = serde_json::from_slice(&response.body).unwrap_or_default();
        // The causes carry what matters, e.g. which PDB refused an eviction ("The disruption
        // budget web-pdb needs 1 healthy pods and has 1 currently").
        let causes: Vec<&str> = status
            .details
            .causes
            .iter()
            .map(|c| c.message.as_str())
            .filter(|m| !m.is_empty() && !status.message.contains(*m))
            .collect();
        if !causes.is_empty() {
            status.message = format!("{} ({})", status.message, causes.join("; "));
        }
        let message = if status.message.is_empty() {
            String::from_utf8_lossy(&response.body)
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect()
        } else {
            status.message
        };
        ClusterError::Api {
            method: method.as_str(),
            path: path.to_string(),
            status: response.status,
            reason: status.reason,
            message,
        }
    }
}

impl From<ClusterError> for crate::error::CommandError {
    fn from(e: ClusterError) -> Self {
        let hint = match &e {
            ClusterError::Config(_) => {
                Some("pass --kubeconfig/--context, or set KUBECONFIG (in a pod: docs/in-cluster.md)".to_string())
            }
            ClusterError::Api { status: 403, .. } => Some(
                "the Kubernetes identity lacks an RBAC permission (deploy/rbac.yaml has the rules; docs/security.md lists them per command)"
                    .to_string(),
            ),
            ClusterError::Api { status: 401, .. } => {
                Some("the kubeconfig's credentials were rejected: refresh them (e.g. aws sso login)".to_string())
            }
            _ => None,
        };
        if let ClusterError::WritesStopped(_) = e {
            return crate::error::CommandError::refused(e);
        }
        let err = crate::error::CommandError::remote(e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    }
}

/// Closed, with the reason, once this run may no longer write (its operator lease was lost): a
/// client holding the gate refuses every write before it leaves (reads go on).
#[derive(Debug, Clone, Default)]
pub struct WriteGate(Arc<Mutex<Option<String>>>);

impl WriteGate {
    /// Stops writes from now on.
    pub fn close(&self, reason: String) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
    }
    /// Why writes stopped, if they did.
    pub fn closed(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// How the latest read from the API server went (`None` before the first), for the health
/// endpoint's readiness: a client holding it records every GET.
#[derive(Debug, Clone, Default)]
pub struct LastRead(Arc<Mutex<Option<Result<(), String>>>>);

impl LastRead {
    /// Records a GET's outcome: an answer is a success unless the server failed (5xx), refused
    /// us (401/403) or throttled us past the retries (429); a transport error is a failure.
    pub fn record(&self, result: &Result<Response, ClusterError>) {
        let outcome = match result {
            Ok(r) if r.status >= 500 || matches!(r.status, 401 | 403 | 429) => {
                Err(format!("HTTP {}", r.status))
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    }
    /// The latest outcome (`None`: nothing read yet).
    pub fn get(&self) -> Option<Result<(), String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
