//! A loopback Kubernetes API server for tests and demos: enough of kube-apiserver, the
//! controllers, the scheduler and the kubelet that the real `kubectl` and `kubectl karpenter`
//! can be pointed at it (docs/testing.md §4). No container engine, no etcd: one process, objects in
//! memory, plain HTTP on 127.0.0.1.
//!
//! # Running it standalone
//!
//! ```text
//! cargo run --example test-cluster -- --listen 127.0.0.1:8080 --kubernetes-version 1.25 \
//!     --write-kubeconfig /tmp/test-cluster.kubeconfig [--ec2-endpoint http://127.0.0.1:5000 --region us-east-1] [--log]
//! KUBECONFIG=/tmp/test-cluster.kubeconfig kubectl get nodes
//! ```
//!
//! It serves until killed. The kubeconfig's current context (`test-cluster`, namespace
//! `default`) points at `http://<listen>` (`https://` with `--tls`, the test CA in the
//! kubeconfig; see `tls.rs`); no credentials.
//!
//! # What it implements
//!
//! - **Discovery**: `/version` (the `--kubernetes-version` given), `/api`, `/apis`, `/api/v1`,
//!   `/apis/<group>/<version>` with verbs, scope, kinds, short names, categories and
//!   subresources (`pods/eviction`, `pods/binding`, `*/status`, `*/scale`) for core/v1
//!   (namespaces, nodes, pods, configmaps, secrets, services, endpoints, events, …), apps/v1,
//!   batch/v1, policy/v1, apiextensions.k8s.io/v1, coordination.k8s.io/v1, scheduling and
//!   storage. Legacy (unaggregated) discovery only; clients fall back to it.
//! - **CustomResourceDefinitions** created through the API become served resources (status
//!   `Established`), with structural pruning of unknown fields, schema `default`s, `required`
//!   and `enum` checks, `fieldValidation=Strict`, printer columns and `/status` + `/scale`.
//!   A CRD converting between versions with a **conversion webhook** (Karpenter v0.33–v0.37:
//!   v1beta1 storage + v1) is served **only at its storage version**: nothing here runs the
//!   webhook, so the other version is absent from discovery, its URLs answer 404 with a message
//!   saying so, and creating the CRD returns that message as a `Warning` (kubectl prints it).
//! - **CRUD** for any resource: JSON objects; `Table` (server-side printing, with the columns of
//!   the real printers for pods, nodes — `Ready,SchedulingDisabled` when cordoned —,
//!   deployments, replica sets, daemon sets, PDBs, namespaces, services, config maps, events,
//!   and `additionalPrinterColumns` for custom resources) and `PartialObjectMetadata`;
//!   `labelSelector` (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`), `fieldSelector`
//!   (`metadata.name`, `metadata.namespace`, pods' `spec.nodeName`, `status.phase`, …);
//!   `limit`/`continue`; a global `resourceVersion` with 409 Conflict on stale writes; create
//!   with `generateName`, uid, `creationTimestamp`, `generation`; replace; patch (JSON merge,
//!   JSON patch, strategic merge with the merge keys of the built-in lists, and server-side
//!   apply approximated as a merge); `/status` and `/scale`; delete with preconditions,
//!   finalizers, `deletionTimestamp`, pod grace periods and propagation (background,
//!   foreground, orphan; a garbage collector follows owner references); `dryRun=All`;
//!   `Status` errors shaped like the real server's (NotFound, AlreadyExists, Conflict, Invalid,
//!   BadRequest, Forbidden, TooManyRequests, InternalError, MethodNotAllowed).
//! - **Defaulting and admission** of the built-in kinds that matter here: pods (restart policy,
//!   grace period, scheduler name, service account, priority, the not-ready/unreachable
//!   tolerations, QoS class), deployments/replica sets/daemon sets (strategies, history
//!   limits, selector-matches-template validation, immutable selectors), PDBs, namespaces,
//!   services (a cluster IP).
//! - **Watch** (`?watch=true` and `/watch/` URLs) from a `resourceVersion` (history replay,
//!   `410 Expired` when too old), selectors with ADDED/DELETED on selector transitions,
//!   `timeoutSeconds`, bookmarks, `sendInitialEvents`.
//! - **`pods/eviction`** (policy/v1): PDB arithmetic (minAvailable / maxUnavailable, ints and
//!   percentages of the owning controllers' scale, healthy = Ready) with the disruption
//!   controller maintaining `status` (`disruptionsAllowed`, `currentHealthy`,
//!   `desiredHealthy`, `expectedPods`, `disruptedPods`, `observedGeneration`, condition
//!   `DisruptionAllowed`); 429 with the real message and cause when disallowed, 500 when several
//!   PDBs match, unhealthy-pod policy `IfHealthyBudget`/`AlwaysAllow`.
//! - **Controllers** (in-process, kwok-like): Deployment → ReplicaSet (rolling update with
//!   maxSurge/maxUnavailable, `Recreate`, `kubectl.kubernetes.io/restartedAt` rollouts,
//!   revisions, history cleanup, status and conditions `rollout status` reads), ReplicaSet →
//!   Pods, DaemonSet (one pod per eligible node, pinned with node affinity like the real
//!   controller), a scheduler (resources incl. pod count, nodeSelector, required node affinity,
//!   taints/tolerations, cordon; `PodScheduled=False/Unschedulable` with the real message
//!   otherwise), a kubelet that makes bound pods Running/Ready and gives created Nodes a Ready
//!   status, graceful termination (removal when the grace period ends, at once for 0), the
//!   node controller's `node.kubernetes.io/unschedulable` taint, pod GC for pods of vanished
//!   nodes, namespace deletion, and the garbage collector.
//! - **EC2 kubelet** (`--ec2-endpoint`): see `kubelet.rs` — registers a Node for each running
//!   instance it finds through the EC2 Query API, and removes it when the instance is gone.
//! - **Karpenter's termination controller** (always on; see `karpenter.rs`), for objects being
//!   deleted that carry the `karpenter.sh/termination` finalizer: a NodeClaim (v1/v1beta1) or
//!   Machine (v1alpha5) deletes its Node (by `status.nodeName` / `status.providerID`) and waits
//!   for it and for its instance to be terminated before dropping the finalizer; a Node is
//!   tainted (`karpenter.sh/disrupted:NoSchedule` when NodeClaim v1 is served,
//!   `karpenter.sh/disruption=disrupting:NoSchedule` for v1beta1) or cordoned (v1alpha5), then
//!   drained through the Eviction API's PDB checks (refusals retried every second and recorded
//!   as `FailedDraining` events; non-critical pods first; DaemonSet, mirror and terminal pods
//!   skipped; `do-not-disrupt`/`do-not-evict` pods waited for), then its instance is terminated
//!   (by the EC2 kubelet, which never re-registers it) and the finalizer dropped. Evicted pods
//!   come back through their ReplicaSets and stay Pending if they fit nowhere: there is no
//!   provisioner.
//!
//! - **RBAC** (`Config::rbac`, `--rbac`): ServiceAccount bearer tokens from the TokenRequest
//!   API (`kubectl create token`), Roles/ClusterRoles and their bindings (verbs, apiGroups,
//!   resources/subresources, resourceNames, nonResourceURLs), the bootstrap roles
//!   (`cluster-admin`, `system:discovery`, `system:basic-user`), 403s worded like the real
//!   server's, and `SelfSubjectAccessReview` (`kubectl auth can-i`); see `rbac.rs`. Off (the
//!   default), everything is allowed.
//!
//! # What it does not implement
//!
//! Authentication other than ServiceAccount tokens, authorization other than RBAC (and
//! without `--rbac` everything is allowed), aggregated ClusterRoles, `escalate`/`bind`
//! checks, `SelfSubjectRulesReview` (`kubectl auth can-i --list`), TLS client certificates and
//! HTTP/2 over TLS (`--tls` serves HTTP/1.1 with a fixed test certificate), protobuf, HTTP/2, aggregated
//! discovery, OpenAPI schemas (`/openapi/v3` only lists PATCH operations so kubectl delegates
//! field validation to the server; `kubectl explain` does not work), `/openapi/v2`, CEL
//! validation rules and type checking of custom resources, conversion webhooks, admission
//! webhooks, field managers / real server-side apply conflict detection, StatefulSet, Job and
//! CronJob controllers (they are stored, not run), Services/Endpoints behaviour, logs/exec/
//! port-forward, consistent-snapshot pagination (a `continue` token resumes from the current
//! state, not from a snapshot), the aggregation layer, and Karpenter's other controllers
//! (provisioning, disruption, NodeClaim lifecycle: only termination is emulated).

#![allow(dead_code)]

mod api;
mod controllers;
mod http;
mod karpenter;
mod kinds;
mod kubelet;
mod openapi;
use kubectl_karpenter::k8s::fake::patch;
mod pdb;
mod protobuf;
pub mod rbac;
mod resources;
mod schema;
mod selector;
mod store;
mod table;
pub mod tls;
pub mod util;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// How the cluster is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// What `/version` and node `kubeletVersion`s say (`1.25`, `1.25.16`, `v1.29.3-eks-1`).
    pub kubernetes_version: String,
    /// moto's (or EC2's) endpoint for the simulated kubelet; `None`: no EC2-backed nodes.
    pub ec2_endpoint: Option<String>,
    pub region: String,
    /// Caps pod termination grace periods (kwok-style speed-up); `None` honours them.
    pub max_grace: Option<Duration>,
    /// Logs every request to stderr.
    pub log: bool,
    /// AMIs whose instances never register (a broken image: the node never joins), for
    /// rollback tests.
    pub broken_images: Vec<String>,
    /// Authenticate bearer tokens and authorize with RBAC (`rbac.rs`); off: everything is
    /// allowed.
    pub rbac: bool,
    /// Serve HTTPS with the test certificate (`tls.rs`) instead of plain HTTP.
    pub tls: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kubernetes_version: "1.29".into(),
            ec2_endpoint: None,
            region: "us-east-1".into(),
            max_grace: None,
            log: std::env::var_os("TEST_CLUSTER_LOG").is_some(),
            broken_images: Vec::new(),
            rbac: false,
            tls: false,
        }
    }
}

/// Shared server state.
pub struct State {
    pub store: Mutex<store::Store>,
    pub config: Config,
    pub addr: SocketAddr,
    /// Wakes the controllers after a write.
    pub kick: Notify,
    /// Issued tokens and authorization decisions (RBAC).
    pub auth: Mutex<rbac::Auth>,
}

/// A running test cluster; stops when dropped.
pub struct TestCluster {
    pub addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestCluster {
    /// Starts a cluster on a free loopback port, on its own thread and runtime.
    pub fn start(config: Config) -> std::io::Result<TestCluster> {
        Self::start_on("127.0.0.1:0".parse().unwrap(), config)
    }

    pub fn start_on(listen: SocketAddr, config: Config) -> std::io::Result<TestCluster> {
        let listener = std::net::TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let state = new_state(config, addr);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name("test-cluster".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    tokio::select! {
                        _ = serve(listener, st) => {}
                        _ = rx => {}
                    }
                });
                rt.shutdown_timeout(Duration::from_millis(100));
            })?;
        Ok(TestCluster {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        let scheme = if self.state.config.tls {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// Writes a kubeconfig whose current context points at this cluster (trusting the test CA
    /// when it serves TLS).
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        write_kubeconfig(path, &self.url())?;
        if !self.state.config.tls {
            return Ok(());
        }
        // Over HTTPS kubectl asks for a user name when the user has no credentials at all: a
        // basic-auth pair, which the server takes as the anonymous admin (no bearer token).
        let text = std::fs::read_to_string(path)?
            .replace(
                &format!("    server: {}\n", self.url()),
                &format!(
                    "    server: {}\n    certificate-authority-data: {}\n",
                    self.url(),
                    tls::ca_data()
                ),
            )
            .replace("  user: {}", "  user: {username: admin, password: admin}");
        std::fs::write(path, text)
    }

    /// A token for a ServiceAccount, as the TokenRequest API (`kubectl create token`) issues it.
    pub fn token(&self, namespace: &str, name: &str) -> String {
        let st = self.state.store.lock().unwrap();
        let mut auth = self.state.auth.lock().unwrap();
        let answer = rbac::token_request(&st, &mut auth, namespace, name)
            .unwrap_or_else(|e| panic!("token for {namespace}/{name}: {}", e.message));
        answer["status"]["token"].as_str().unwrap().to_string()
    }

    /// The RBAC decisions made since the last call (and forgets them).
    pub fn take_decisions(&self) -> Vec<rbac::Decision> {
        std::mem::take(&mut self.state.auth.lock().unwrap().decisions)
    }

    /// Runs `f` on the store (tests inspect or seed state directly with it).
    pub fn with_store<R>(&self, f: impl FnOnce(&mut store::Store) -> R) -> R {
        let mut st = self.state.store.lock().unwrap();
        let r = f(&mut st);
        self.state.kick.notify_one();
        r
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn new_state(config: Config, addr: SocketAddr) -> Arc<State> {
    let mut st = store::Store::new();
    api::seed(&mut st);
    if config.rbac {
        rbac::bootstrap(&mut st);
    }
    Arc::new(State {
        store: Mutex::new(st),
        config,
        addr,
        kick: Notify::new(),
        auth: Mutex::new(rbac::Auth::default()),
    })
}

/// Accepts connections (over TLS when configured) and runs the controllers until the future is
/// dropped.
pub async fn serve(listener: tokio::net::TcpListener, state: Arc<State>) {
    let tls = match state.config.tls {
        false => None,
        true => Some(tls::acceptor().expect("the test certificate in tests/fixtures/tls")),
    };
    let ctrl = tokio::spawn(controllers::run(state.clone()));
    let kubelet = state
        .config
        .ec2_endpoint
        .clone()
        .map(|ep| tokio::spawn(kubelet::run(state.clone(), ep)));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let st = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_connection(stream, st).await,
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve_connection(stream, st).await
                    }
                }
            }
        });
        if ctrl.is_finished() {
            break;
        }
    }
    if let Some(k) = kubelet {
        k.abort();
    }
}

/// Serves HTTP/1.1 requests on one connection until it closes.
async fn serve_connection<I>(io: I, state: Arc<State>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = hyper_util::rt::TokioIo::new(io);
    let svc = hyper::service::service_fn(move |req| http::handle(state.clone(), req));
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, svc)
        .await;
}

/// A kubeconfig with one cluster/context/user named `test-cluster`.
pub fn write_kubeconfig(path: &Path, server: &str) -> std::io::Result<()> {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test-cluster\n  cluster:\n    server: {server}\ncontexts:\n- name: test-cluster\n  context:\n    cluster: test-cluster\n    user: test-cluster\n    namespace: default\ncurrent-context: test-cluster\nusers:\n- name: test-cluster\n  user: {{}}\npreferences: {{}}\n"
    );
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    std::fs::write(path, text)
}

const USAGE: &str = "usage: test-cluster --listen 127.0.0.1:PORT [--kubernetes-version 1.25] [--write-kubeconfig PATH] [--ec2-endpoint URL] [--region REGION] [--max-grace-seconds N] [--rbac] [--tls] [--log]";

/// The standalone server (`examples/test-cluster.rs`): parses arguments, serves until killed.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let mut config = Config::default();
    let mut listen: Option<SocketAddr> = None;
    let mut kubeconfig: Option<String> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next());
        match flag.as_str() {
            "--listen" => match value().and_then(|v| v.parse().ok()) {
                Some(a) => listen = Some(a),
                None => {
                    eprintln!("--listen needs HOST:PORT\n{USAGE}");
                    return 2;
                }
            },
            "--kubernetes-version" => config.kubernetes_version = value().unwrap_or_default(),
            "--write-kubeconfig" => kubeconfig = value(),
            "--ec2-endpoint" => config.ec2_endpoint = value(),
            "--region" => config.region = value().unwrap_or_default(),
            "--max-grace-seconds" => {
                config.max_grace = value()
                    .and_then(|v| v.parse().ok())
                    .map(Duration::from_secs)
            }
            "--log" => config.log = true,
            "--rbac" => config.rbac = true,
            "--tls" => config.tls = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            other => {
                eprintln!("unknown argument {other:?}\n{USAGE}");
                return 2;
            }
        }
    }
    let listen = listen.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap());
    let cluster = match TestCluster::start_on(listen, config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot listen on {listen}: {e}");
            return 1;
        }
    };
    if let Some(p) = kubeconfig {
        if let Err(e) = cluster.write_kubeconfig(Path::new(&p)) {
            eprintln!("cannot write kubeconfig {p}: {e}");
            return 1;
        }
        eprintln!("kubeconfig written to {p}");
    }
    eprintln!("test cluster serving on {}", cluster.url());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
