//! The faults a case scripts: API answers (409, 429, 500, 503, no answer, an answer lost after
//! the request took effect) on the requests the
//! mutating paths make, EC2 refusing capacity or losing a CreateFleet answer, another actor
//! changing an object between the code's read and its write, and the run killed after a random
//! number of requests ([`Killable`]: from then on nothing the process would send arrives).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::json;

use crate::cloud::fake::FakeCloud;
use crate::cloud::types::CloudError;
use crate::k8s::fake::{FakeCluster, Fault, FaultAnswer};
use crate::k8s::{Cluster, ClusterError, Method, Request, Response};
use crate::model::labels::DO_NOT_DISRUPT;
use crate::testing::Rng;
use crate::usecases::testing::{pending_pod, World};

/// The EC2 operations a killed process no longer reaches.
const EC2: [&str; 4] = [
    "EC2.CreateFleet",
    "EC2.TerminateInstances",
    "EC2.DescribeInstances",
    "EC2.CreateLaunchTemplate",
];

/// The cluster as a process that may be killed sees it: after `left` requests every request,
/// and every EC2 call, fails as if the process had died (its later steps never happen). Faults
/// are armed after a random number of requests, so that they meet the steps deep in a run
/// and not only its first read.
#[derive(Clone)]
pub struct Killable {
    /// The cluster.
    pub inner: FakeCluster,
    cloud: Rc<FakeCloud>,
    left: Rc<Cell<Option<u64>>>,
    sent: Rc<Cell<u64>>,
    armed: Rc<RefCell<Vec<(u64, Fault)>>>,
    pick: Rc<Cell<Option<(u64, u64)>>>,
    /// The run's write gate (its operator lease lost): closed, writes are refused before they
    /// leave, as `KubeClient` does (`k8s::WriteGate`).
    pub gate: Rc<Cell<bool>>,
    /// Another operator holds the lease now: every write of ours that still reaches the
    /// cluster is counted in `overlaps` (two writers at once).
    pub rival: Rc<Cell<bool>>,
    /// The writes sent while `rival` held the lease.
    pub overlaps: Rc<RefCell<Vec<String>>>,
}

impl Killable {
    /// `world`'s cluster, killed after `after` requests (never when `None`).
    pub fn new(world: &World, after: Option<u64>) -> Killable {
        Killable {
            inner: world.cluster.clone(),
            cloud: world.cloud.clone(),
            left: Rc::new(Cell::new(after)),
            sent: Rc::default(),
            armed: Rc::default(),
            pick: Rc::default(),
            gate: Rc::default(),
            rival: Rc::default(),
            overlaps: Rc::default(),
        }
    }

    /// Scripts up to `most` API faults at random, each armed after a random number of this
    /// cluster's requests.
    pub fn faults(&self, rng: &mut Rng, most: usize) {
        for _ in 0..rng.below(most + 1) {
            let at = rng.below(150) as u64;
            self.armed.borrow_mut().push((at, fault(rng)));
        }
    }

    /// Arms one fault on request number `at` (counted from 0), whatever it is: a write
    /// refused with 409 (its resourceVersion moved on), 500, or applied with its answer lost;
    /// an eviction refused with 429 (a PDB) or 500; a read answered 500, 503 or nothing.
    pub fn fail_at(&self, at: u64, rng: &mut Rng) {
        self.pick.set(Some((at, rng.next_u64())));
    }

    /// The requests sent so far (shared: it goes on counting).
    pub fn sent(&self) -> Rc<Cell<u64>> {
        self.sent.clone()
    }

    /// Whether the kill happened.
    pub fn killed(&self) -> bool {
        self.left.get() == Some(0)
    }
}

impl Cluster for Killable {
    fn send(&self, request: Request) -> Result<Response, ClusterError> {
        if request.method != Method::Get && self.gate.get() {
            return Err(ClusterError::WritesStopped(
                "the operator lease was lost".into(),
            ));
        }
        match self.left.get() {
            Some(0) => {
                return Err(ClusterError::Transport {
                    server: "fake".into(),
                    message: "the process was killed".into(),
                })
            }
            Some(n) => {
                self.left.set(Some(n - 1));
                if n == 1 {
                    for op in EC2 {
                        self.cloud.fail(
                            op,
                            CloudError::Transport {
                                service: "EC2".into(),
                                operation: op.into(),
                                message: "the process was killed".into(),
                            },
                        );
                    }
                }
            }
            None => {}
        }
        if request.method != Method::Get && self.rival.get() {
            let line = format!("{} {}", request.method, request.path);
            self.overlaps.borrow_mut().push(line);
        }
        let sent = self.sent.get();
        self.sent.set(sent + 1);
        if let Some((_, draw)) = self.pick.get().filter(|(at, _)| *at == sent) {
            self.inner.fail(fault_on(&request, draw));
        }
        self.armed.borrow_mut().retain(|(at, f)| {
            if *at <= sent {
                self.inner.fail(f.clone());
            }
            *at > sent
        });
        self.inner.send(request)
    }

    fn request_count(&self) -> u64 {
        self.inner.request_count()
    }
}

/// The requests faults are scripted on.
const TARGETS: [(Method, &str); 14] = [
    (Method::Get, "/api/v1/nodes"),
    (Method::Patch, "/api/v1/nodes"),
    (Method::Delete, "/api/v1/nodes"),
    (Method::Get, "/api/v1/pods"),
    (Method::Post, "/eviction"),
    (Method::Get, "/poddisruptionbudgets"),
    (Method::Get, "/nodeclaims"),
    (Method::Patch, "/nodeclaims"),
    (Method::Delete, "/nodeclaims"),
    (Method::Get, "/nodepools"),
    (Method::Get, "/ec2nodeclasses"),
    (Method::Get, "/leases"),
    (Method::Patch, "/leases"),
    (Method::Post, "/leases"),
];

/// A random fault on one of the [`TARGETS`].
fn fault(rng: &mut Rng) -> Fault {
    let (method, path) = *rng.pick(&TARGETS);
    let answer = match rng.below(6) {
        0 => FaultAnswer::Status(409, "the object has been modified".into()),
        1 => FaultAnswer::Status(429, "too many requests".into()),
        2 => FaultAnswer::Status(500, "internal error".into()),
        3 => FaultAnswer::Status(503, "unavailable".into()),
        4 => FaultAnswer::LostAnswer("connection reset after the write".into()),
        _ => FaultAnswer::NoAnswer("timeout".into()),
    };
    Fault {
        method: Some(method),
        path: path.into(),
        times: 1 + rng.below(3) as u32,
        answer,
    }
}

/// A fault on `request` itself, once (see [`Killable::fail_at`]); `draw` picks which.
fn fault_on(request: &Request, draw: u64) -> Fault {
    let status = |code: u16, why: &str| FaultAnswer::Status(code, why.into());
    let evicting = request.path.ends_with("/eviction");
    let answers = match request.method {
        Method::Get => vec![
            status(500, "internal error"),
            status(503, "unavailable"),
            FaultAnswer::NoAnswer("timeout".into()),
        ],
        _ if evicting => vec![
            status(
                429,
                "Cannot evict pod as it would violate the pod's disruption budget",
            ),
            status(500, "internal error"),
            FaultAnswer::LostAnswer("connection reset after the write".into()),
        ],
        _ => vec![
            status(
                409,
                "the object has been modified; please apply your changes to the latest version",
            ),
            status(500, "internal error"),
            FaultAnswer::LostAnswer("connection reset after the write".into()),
        ],
    };
    let path = request.path.split('?').next().unwrap_or_default();
    Fault {
        method: Some(request.method),
        path: path.into(),
        times: 1,
        answer: answers[(draw % answers.len() as u64) as usize].clone(),
    }
}

/// Scripts up to `most` API faults at random, armed at once.
pub fn api_faults(rng: &mut Rng, cluster: &FakeCluster, most: usize) {
    for _ in 0..rng.below(most + 1) {
        cluster.fail(fault(rng));
    }
}

/// EC2 at random: insufficient capacity for a type (sometimes every type), a CreateFleet whose
/// instance launched but whose answer was lost.
pub fn cloud_faults(rng: &mut Rng, cloud: &FakeCloud) {
    let types = ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"];
    match rng.below(6) {
        0 => {
            let t = types[rng.below(types.len())];
            cloud.insufficient_capacity(t, "*");
        }
        1 => {
            for t in types {
                cloud.insufficient_capacity(t, "*");
            }
        }
        2 => cloud.lose_fleet_answers.set(1),
        _ => {}
    }
}

/// The world changing between a read and the write after it (once, right after a random read
/// of Nodes or Pods): a node's resourceVersion moves on, a pod arrives on a node, the operator
/// uncordons a node, a node gets do-not-disrupt, a pod arrives pending. `on` off: it does not
/// happen (the clean re-run).
pub fn between_read_and_write(rng: &mut Rng, cluster: &FakeCluster, on: &Rc<Cell<bool>>) {
    for _ in 0..rng.below(3) {
        let path = *rng.pick(&["/api/v1/nodes", "/api/v1/pods"]);
        let what = rng.below(5);
        let pick = rng.next_u64() as usize;
        let on = on.clone();
        cluster.after(Method::Get, path, move |c| {
            if !on.get() {
                return;
            }
            let nodes = c.list("v1", "Node");
            if nodes.is_empty() {
                return;
            }
            let node = nodes[pick % nodes.len()]["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            match what {
                0 => c.update("v1", "Node", None, &node, |_| {}),
                1 => {
                    let mut pod = pending_pod(&format!("late-{pick}"), "100m");
                    pod["spec"]["nodeName"] = json!(node);
                    pod["status"] = json!({"phase": "Running"});
                    c.put(pod);
                }
                2 => c.update("v1", "Node", None, &node, |n| {
                    n["spec"]["unschedulable"] = json!(false);
                }),
                3 => c.update("v1", "Node", None, &node, |n| {
                    n["metadata"]["annotations"][DO_NOT_DISRUPT] = json!("true");
                }),
                _ => c.put(pending_pod(&format!("arriving-{pick}"), "1")),
            }
        });
    }
}

/// Everything a clean re-run must not meet: faults spent, EC2 back, no kill.
pub fn clear(world: &World, on: &Rc<Cell<bool>>) {
    on.set(false);
    world.cluster.clear_faults();
    world.cloud.capacity_back();
    world.cloud.errors.borrow_mut().clear();
    world.cloud.lose_fleet_answers.set(0);
}
