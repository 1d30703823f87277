//! The health endpoint of the `--watch` commands in a pod (`--health-addr`, docs/in-cluster.md),
//! for the kubelet's probes:
//!
//! * `/healthz` — live: the process answers and its loop ran within [`STALL_AFTER`] (the watch
//!   loops sleep through a [`Beating`] clock, so every sleep — and every look for Ctrl-C —
//!   is a heartbeat; a loop stuck in a call that never returns stops beating and the kubelet
//!   restarts the container);
//! * `/readyz` — ready: this replica holds the operator lease (docs/spec.md §10) and its last
//!   read of the cluster succeeded. A standby replica waiting for the lease is live, not ready:
//!   `kubectl get pods` shows which replica leads.
//!
//! A few lines of hyper on a thread of its own (hyper and tokio are already linked for kube-rs
//! and the AWS SDK): no web framework, nothing but these two paths.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Response, StatusCode};

use crate::k8s::{LastRead, WriteGate};
use crate::usecases::clock::{Clock, SystemClock};

/// A loop that has not slept nor looked for Ctrl-C for this long is stuck (a pass's longest
/// legitimate stretch without either is a call that AWS retries for a few minutes).
pub const STALL_AFTER: Duration = Duration::from_secs(300);
/// A long sleep beats at least this often.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// Why `/healthz` fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unhealthy {
    /// The loop has not beaten for this long.
    Stalled(Duration),
}

impl std::fmt::Display for Unhealthy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unhealthy::Stalled(d) => write!(f, "the loop has not run for {} s", d.as_secs()),
        }
    }
}

/// Why `/readyz` fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unready {
    /// Waiting for the operator lease (a standby replica).
    Standby,
    /// The lease was held and lost (the process is about to stop).
    LeaseLost(String),
    /// Leading, and nothing read from the cluster yet.
    NotReadYet,
    /// Leading, and the last read failed.
    ReadFailed(String),
}

impl std::fmt::Display for Unready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unready::Standby => f.write_str("standby: waiting for the operator lease"),
            Unready::LeaseLost(why) => write!(f, "not leading: {why}"),
            Unready::NotReadYet => f.write_str("leading, the cluster not read yet"),
            Unready::ReadFailed(why) => write!(f, "leading, the last cluster read failed: {why}"),
        }
    }
}

struct State {
    last_beat: Mutex<Instant>,
    lease: Mutex<Option<WriteGate>>,
    last_read: LastRead,
}

/// What the endpoint reports, shared by the loop that feeds it and the thread that serves it.
#[derive(Clone)]
pub struct Health(Arc<State>);

impl Default for Health {
    fn default() -> Self {
        Health(Arc::new(State {
            last_beat: Mutex::new(Instant::now()),
            lease: Mutex::new(None),
            last_read: LastRead::default(),
        }))
    }
}

impl Health {
    /// The loop is running.
    pub fn beat(&self) {
        *self.0.last_beat.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// The operator lease is held; `gate` closes when it is lost.
    pub fn leading(&self, gate: WriteGate) {
        *self.0.lease.lock().unwrap_or_else(|e| e.into_inner()) = Some(gate);
    }

    /// Whether the operator lease was held and is lost: the loop must stop.
    pub fn lease_lost(&self) -> bool {
        let lease = self.0.lease.lock().unwrap_or_else(|e| e.into_inner());
        lease.as_ref().is_some_and(|gate| gate.closed().is_some())
    }

    /// Where the cluster client records its reads.
    pub fn last_read(&self) -> LastRead {
        self.0.last_read.clone()
    }

    /// A clock whose sleeps beat this heart.
    pub fn clock(&self) -> Beating {
        Beating {
            inner: SystemClock::new(),
            health: self.clone(),
        }
    }

    /// `/healthz` at `now`.
    pub fn live_at(&self, now: Instant) -> Result<(), Unhealthy> {
        let last = *self.0.last_beat.lock().unwrap_or_else(|e| e.into_inner());
        let quiet = now.saturating_duration_since(last);
        if quiet > STALL_AFTER {
            return Err(Unhealthy::Stalled(quiet));
        }
        Ok(())
    }

    /// `/readyz`.
    pub fn ready(&self) -> Result<(), Unready> {
        let lease = self.0.lease.lock().unwrap_or_else(|e| e.into_inner());
        match lease.as_ref().map(WriteGate::closed) {
            None => return Err(Unready::Standby),
            Some(Some(why)) => return Err(Unready::LeaseLost(why)),
            Some(None) => {}
        }
        match self.0.last_read.get() {
            None => Err(Unready::NotReadYet),
            Some(Err(why)) => Err(Unready::ReadFailed(why)),
            Some(Ok(())) => Ok(()),
        }
    }

    /// The answer to `method path`: status and a one-line body.
    pub fn answer(&self, method: &Method, path: &str) -> (StatusCode, String) {
        let verdict = |result: Result<(), String>| match result {
            Ok(()) => (StatusCode::OK, "ok\n".to_string()),
            Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
        };
        if method != Method::GET && method != Method::HEAD {
            return (StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
        }
        match path {
            "/healthz" | "/livez" => {
                verdict(self.live_at(Instant::now()).map_err(|e| e.to_string()))
            }
            "/readyz" => verdict(self.ready().map_err(|e| e.to_string())),
            _ => (StatusCode::NOT_FOUND, "/healthz or /readyz\n".into()),
        }
    }
}

/// The system clock, beating [`Health`] whenever the loop using it sleeps, pauses or looks for
/// Ctrl-C; a long sleep beats every second. A lost operator lease is a stop request, like
/// Ctrl-C: the step in flight ends (its writes are refused by the client's gate) and nothing new
/// starts.
#[derive(Clone)]
pub struct Beating {
    inner: SystemClock,
    health: Health,
}

impl Clock for Beating {
    fn now(&self) -> i64 {
        self.inner.now()
    }

    fn monotonic(&self) -> Duration {
        self.inner.monotonic()
    }

    fn sleep(&self, d: Duration) -> bool {
        let end = self.inner.monotonic() + d;
        loop {
            self.health.beat();
            let left = end.saturating_sub(self.inner.monotonic());
            if self.health.lease_lost() || !self.inner.sleep(left.min(BEAT_EVERY)) {
                return false;
            }
            if left <= BEAT_EVERY {
                self.health.beat();
                return true;
            }
        }
    }

    fn pause(&self, d: Duration) {
        let end = self.inner.monotonic() + d;
        loop {
            self.health.beat();
            let left = end.saturating_sub(self.inner.monotonic());
            self.inner.pause(left.min(BEAT_EVERY));
            if left <= BEAT_EVERY {
                self.health.beat();
                return;
            }
        }
    }

    fn stop_requested(&self) -> bool {
        self.health.beat();
        self.inner.stop_requested() || self.health.lease_lost()
    }
}

/// `--health-addr` as given: `HOST:PORT`, or `:PORT` for every interface (Go's spelling, as in
/// Karpenter's `--health-probe-port` manifests).
fn listen_address(text: &str) -> Result<SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_string(),
    };
    full.parse()
        .map_err(|_| format!("--health-addr {text:?}: expected HOST:PORT or :PORT"))
}

/// Serves `health` on `addr` from a thread of its own for the rest of the process; the address
/// bound (port 0 picks one).
pub fn serve(addr: &str, health: Health) -> Result<SocketAddr, String> {
    let wanted = listen_address(addr)?;
    let bound = |e: std::io::Error| format!("--health-addr {addr}: {e}");
    let listener = std::net::TcpListener::bind(wanted).map_err(bound)?;
    listener.set_nonblocking(true).map_err(bound)?;
    let local = listener.local_addr().map_err(bound)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(bound)?;
    std::thread::Builder::new()
        .name("health".into())
        .spawn(move || runtime.block_on(accept(listener, health)))
        .map_err(bound)?;
    Ok(local)
}

async fn accept(listener: std::net::TcpListener, health: Health) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let health = health.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let (status, body) = health.answer(request.method(), request.uri().path());
                let mut response = Response::new(Full::new(Bytes::from(body)));
                *response.status_mut() = status;
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_while_the_loop_beats_stalled_after_five_minutes() {
        let health = Health::default();
        let now = Instant::now();
        health.beat();
        assert_eq!(health.live_at(now), Ok(()));
        let later = Instant::now() + STALL_AFTER + Duration::from_secs(1);
        assert!(matches!(
            health.live_at(later),
            Err(Unhealthy::Stalled(d)) if d > STALL_AFTER
        ));
        let (status, _) = health.answer(&Method::GET, "/healthz");
        assert_eq!(status, StatusCode::OK);
    }

    #[test]
    fn ready_only_while_leading_and_reading() {
        let health = Health::default();
        assert_eq!(
            health.ready(),
            Err(Unready::Standby),
            "waiting for the lease"
        );
        let (status, body) = health.answer(&Method::GET, "/readyz");
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body, "standby: waiting for the operator lease\n");
        assert_eq!(health.answer(&Method::GET, "/healthz").0, StatusCode::OK);

        let gate = WriteGate::default();
        health.leading(gate.clone());
        assert_eq!(health.ready(), Err(Unready::NotReadYet));
        let ok = Ok(crate::k8s::Response {
            status: 404,
            body: Vec::new(),
        });
        health.last_read().record(&ok);
        assert_eq!(health.ready(), Ok(()), "a 404 is an answer");
        assert_eq!(
            health.answer(&Method::GET, "/readyz"),
            (StatusCode::OK, "ok\n".into())
        );
        health.last_read().record(&Ok(crate::k8s::Response {
            status: 503,
            body: Vec::new(),
        }));
        assert_eq!(health.ready(), Err(Unready::ReadFailed("HTTP 503".into())));
        health
            .last_read()
            .record(&Err(crate::k8s::ClusterError::Transport {
                server: "https://10.100.0.1:443".into(),
                message: "connection refused".into(),
            }));
        assert!(
            matches!(health.ready(), Err(Unready::ReadFailed(why)) if why.contains("connection refused"))
        );
        health.last_read().record(&ok);
        gate.close("the operator lease was taken over by b@pod-b pid 1".into());
        assert_eq!(
            health.ready(),
            Err(Unready::LeaseLost(
                "the operator lease was taken over by b@pod-b pid 1".into()
            ))
        );
    }

    #[test]
    fn only_the_two_paths_and_get() {
        let health = Health::default();
        assert_eq!(health.answer(&Method::GET, "/").0, StatusCode::NOT_FOUND);
        assert_eq!(
            health.answer(&Method::POST, "/healthz").0,
            StatusCode::METHOD_NOT_ALLOWED
        );
        assert_eq!(health.answer(&Method::HEAD, "/livez").0, StatusCode::OK);
    }

    #[test]
    fn the_address_is_host_port_or_port() {
        assert_eq!(
            listen_address(":8081").unwrap(),
            "0.0.0.0:8081".parse().unwrap()
        );
        assert_eq!(
            listen_address("127.0.0.1:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert!(listen_address("8081").unwrap_err().contains("HOST:PORT"));
    }

    #[test]
    fn serves_over_http() {
        use std::io::{Read, Write};
        let health = Health::default();
        let addr = serve("127.0.0.1:0", health.clone()).unwrap();
        let get = |path: &str| {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            write!(
                stream,
                "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut text = String::new();
            stream.read_to_string(&mut text).unwrap();
            text
        };
        assert!(get("/healthz").starts_with("HTTP/1.1 200"));
        let standby = get("/readyz");
        assert!(standby.starts_with("HTTP/1.1 503"), "{standby}");
        assert!(standby.ends_with("standby: waiting for the operator lease\n"));
    }

    #[test]
    fn a_beating_clock_beats_through_long_sleeps() {
        let health = Health::default();
        let clock = health.clock();
        if let Some(long_ago) = Instant::now().checked_sub(STALL_AFTER * 2) {
            *health.0.last_beat.lock().unwrap() = long_ago;
            assert!(health.live_at(Instant::now()).is_err());
        }
        assert!(clock.sleep(Duration::from_millis(20)));
        assert_eq!(health.live_at(Instant::now()), Ok(()));
        assert!(!clock.stop_requested());
    }

    #[test]
    fn a_lost_lease_stops_the_loop() {
        let health = Health::default();
        let clock = health.clock();
        let gate = WriteGate::default();
        health.leading(gate.clone());
        assert!(!clock.stop_requested());
        gate.close("the operator lease was deleted".into());
        assert!(clock.stop_requested());
        assert!(!clock.sleep(Duration::from_secs(30)), "cut short at once");
    }
}
