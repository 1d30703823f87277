//! A fault injector in front of the real peers the end-to-end tests use — moto (EC2/SSM's Query
//! API) and the loopback cluster (the Kubernetes API) — for the soak in `fault_soak.rs`
//! (docs/reliability.md).
//!
//! [`FaultProxy`] is a plain HTTP/1.1 proxy on 127.0.0.1: the tool is pointed at it the way the
//! tests point it at the peers (a kubeconfig whose server is the proxy; `AWS_ENDPOINT_URL` the
//! proxy in front of moto). Each request is either passed through or, by a seeded draw per
//! request, answered with a fault of the kinds its peer can have ([`Fault`]). Every request
//! travels on a connection of its own (`Connection: close` both ways), so a fault never spills
//! onto another request.
//!
//! What it cannot do: HTTPS (the peers speak plain HTTP), chunked request bodies (neither
//! client sends them: kube-rs and the AWS SDK send a `Content-Length`).

mod http;
mod plan;

pub(crate) use plan::{Fault, FaultPlan, Peer, Rng};

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running proxy; dropped, it stops.
pub(crate) struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the proxy's tasks share with the test: the plan, and what was injected.
pub(crate) struct Shared {
    pub(crate) plan: FaultPlan,
    /// Faults injected so far, with the request they answered (`POST /api/v1/...`).
    pub(crate) injected: Vec<(Fault, String)>,
    /// Requests seen so far.
    pub(crate) requests: u64,
}

impl FaultProxy {
    /// A proxy for `peer` in front of `upstream` (`http://127.0.0.1:port`), injecting by `plan`.
    pub(crate) fn start(peer: Peer, upstream: &str, plan: FaultPlan) -> FaultProxy {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap_or_else(|e| panic!("fault proxy: upstream {upstream:?}: {e}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fault proxy");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Mutex::new(Shared {
            plan,
            injected: Vec::new(),
            requests: 0,
        }));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let st = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fault-proxy".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    tokio::select! {
                        _ = accept(listener, upstream, peer, st) => {}
                        _ = rx => {}
                    }
                });
                rt.shutdown_timeout(Duration::from_millis(100));
            })
            .expect("spawn the fault proxy");
        FaultProxy {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:port`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Replaces the plan (e.g. [`FaultPlan::none`] for the clean re-run).
    pub(crate) fn set_plan(&self, plan: FaultPlan) {
        self.shared.lock().unwrap().plan = plan;
    }

    /// The faults injected since the last call.
    pub(crate) fn take_injected(&self) -> Vec<(Fault, String)> {
        std::mem::take(&mut self.shared.lock().unwrap().injected)
    }

    /// Requests seen so far.
    pub(crate) fn requests(&self) -> u64 {
        self.shared.lock().unwrap().requests
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept(
    listener: tokio::net::TcpListener,
    upstream: SocketAddr,
    peer: Peer,
    shared: Arc<Mutex<Shared>>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            // A failure here is the client or the peer going away (a killed tool): nothing to
            // report, the connection is simply over.
            let _ = http::serve(client, upstream, peer, shared).await;
        });
    }
}
