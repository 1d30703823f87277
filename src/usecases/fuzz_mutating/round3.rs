//! Round 3 (docs/upstream-tests/fuzzing.md "The mutating paths fuzzed, round 3
//! (s34-fuzzmut3)"): what rounds 1 and 2 did not generate.
//!
//! - **Someone else between a decision's read and its write** — on the k-th read of Nodes or
//!   Pods (so deep in a run, not only its first look): kube-scheduler binds a pending pod to a
//!   schedulable node, an operator taints a node `example.com/maintenance:NoSchedule`, the
//!   NodePool's budget goes to `0`. The writes after must not overwrite the change (a merge
//!   patch replaces the whole taint list: the write names the resourceVersion it read, a 409
//!   reads again — core v1.14.1 `state/statenode.go` `RequireNoScheduleTaint`,
//!   `MergeFromWithOptimisticLock`), and no node is newly marked for disruption once the pool
//!   was read again with budget 0 (`disruption/validation.go` `validateCandidates`: budgets
//!   checked again before a command starts).
//! - **A draining node's NodeClaim deleted by someone else** (`kubectl delete nodeclaim`, the
//!   finalizer holding it, or removed outright).
//! - **Drift, consolidation and expiration in one world**: `drift replace` of some nodes then
//!   `consolidate --yes` over NodeClaims some of which expired.
//! - **Two operators, the lease taken over after it expired mid-run**: operator A runs `drift
//!   replace` holding the lease, renewing it on the clock as its keeper does
//!   (`usecases::lease` `keep`: the write gate closes once `LEASE_SECONDS − RENEW_EVERY` passed
//!   without a renewal); its lease traffic may fail and the process be killed; operator B looks
//!   every 2 s (`--wait-for-lease`), takes the lease once it expired (client-go
//!   `leaderelection.go` `tryAcquireOrRenew`) and runs the clean re-run. Never two writers:
//!   no write of A's reaches the cluster once B holds the lease, B never takes it before A's
//!   last renewal + `LEASE_SECONDS`, and B has it once A is gone.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};

use super::faults::{self, Killable};
use super::invariants::{disrupting, name};
use super::round2::{changes, round2_checks};
use super::scenarios::{self, UseCase};
use super::world::{self, Made, Shape};
use super::{twice, Case, Ran};
use crate::k8s::fake::FakeCluster;
use crate::k8s::{ops, Method};
use crate::testing::Rng;
use crate::usecases::clock::Clock;
use crate::usecases::lease::{
    acquire, read, release, renew, Held, Identity, LeaseConfig, LEASE_NAME, LEASE_SECONDS,
    RENEW_EVERY,
};
use crate::usecases::testing::World;

/// Round 3's use cases, in the order its cases cycle through them.
pub const ROUND3: [UseCase; 4] = [
    UseCase::Mixed,
    UseCase::ReplaceTouched,
    UseCase::ConsolidateTouched,
    UseCase::Takeover,
];

/// Round 3's seeds draw other numbers than rounds 1 and 2's of the same value.
const SALT: u64 = 0x5334_f033_0000_0000;

/// The taint someone else puts on a node between a read and a write.
pub const FOREIGN_TAINT: &str = "example.com/maintenance";

/// What the third party did, for the checks after.
#[derive(Debug, Default)]
pub struct Touched {
    /// Nodes given [`FOREIGN_TAINT`].
    pub tainted: BTreeSet<String>,
    /// The requests served when the budget went to 0, and the nodes in disruption then.
    pub budget_zeroed: Option<(usize, BTreeSet<String>)>,
    /// NodeClaims deleted by someone else (`name`, outright or not).
    pub claims_deleted: Vec<(String, bool)>,
    /// Pods kube-scheduler bound between a read and a write (`pod` → `node`).
    pub bound: Vec<(String, String)>,
}

type Shared = Rc<RefCell<Touched>>;

/// Runs `run` right after the `n`-th GET (from 1) whose path holds `path`.
fn on_nth_get(
    cluster: &FakeCluster,
    path: &'static str,
    n: u64,
    run: Box<dyn FnOnce(&FakeCluster)>,
) {
    if n <= 1 {
        cluster.after(Method::Get, path, run);
        return;
    }
    cluster.after(Method::Get, path, move |c| on_nth_get(c, path, n - 1, run));
}

/// Up to three changes by someone else, each right after a random read of Nodes or Pods
/// while `on`.
fn touch(rng: &mut Rng, world: &World, on: &Rc<Cell<bool>>, touched: &Shared) {
    for _ in 0..1 + rng.below(3) {
        let path = *rng.pick(&["/api/v1/nodes", "/api/v1/pods"]);
        let n = 1 + rng.below(8) as u64;
        let what = rng.below(3);
        let pick = rng.next_u64() as usize;
        let (on, touched) = (on.clone(), touched.clone());
        let run = move |c: &FakeCluster| {
            if !on.get() {
                return;
            }
            let nodes = c.list("v1", "Node");
            match what {
                // kube-scheduler: a pending pod onto a Ready, schedulable, untainted node.
                0 => {
                    let open: Vec<&Value> = nodes
                        .iter()
                        .filter(|n| n["spec"]["unschedulable"] != true)
                        .filter(|n| n["spec"]["taints"].as_array().is_none_or(|t| t.is_empty()))
                        .filter(|n| n["metadata"]["deletionTimestamp"].is_null())
                        .collect();
                    let pending: Vec<Value> = c
                        .list("v1", "Pod")
                        .into_iter()
                        .filter(|p| p["spec"]["nodeName"].is_null())
                        .collect();
                    if open.is_empty() || pending.is_empty() {
                        return;
                    }
                    let node = name(open[pick % open.len()]);
                    let pod = name(&pending[pick % pending.len()]);
                    c.update("v1", "Pod", Some("default"), &pod, |p| {
                        p["spec"]["nodeName"] = json!(node);
                        p["status"] = json!({"phase": "Running",
                            "conditions": [{"type": "PodScheduled", "status": "True"}]});
                    });
                    touched.borrow_mut().bound.push((pod, node));
                }
                1 => {
                    if nodes.is_empty() {
                        return;
                    }
                    let node = name(&nodes[pick % nodes.len()]);
                    c.update("v1", "Node", None, &node, |n| {
                        let mut taints =
                            n["spec"]["taints"].as_array().cloned().unwrap_or_default();
                        taints.push(
                            json!({"key": FOREIGN_TAINT, "value": "true", "effect": "NoSchedule"}),
                        );
                        n["spec"]["taints"] = json!(taints);
                    });
                    touched.borrow_mut().tainted.insert(node);
                }
                _ => {
                    c.update("karpenter.sh/v1", "NodePool", None, "default", |p| {
                        p["spec"]["disruption"]["budgets"] = json!([{"nodes": "0"}]);
                    });
                    let busy = nodes.iter().filter(|n| disrupting(n)).map(name).collect();
                    let mut t = touched.borrow_mut();
                    if t.budget_zeroed.is_none() {
                        t.budget_zeroed = Some((c.requests().len(), busy));
                    }
                }
            }
        };
        on_nth_get(&world.cluster, path, n, Box::new(run));
    }
}

/// Someone else deletes the NodeClaim of a node in disruption, once, from `at` seconds on
/// while `on`: through the API (its finalizer holds it, deleting) or removed outright.
fn delete_a_claim(rng: &mut Rng, world: &World, on: &Rc<Cell<bool>>, touched: &Shared) {
    let at = rng.below(400) as u64;
    let outright = rng.below(3) == 0;
    let pick = rng.next_u64() as usize;
    let (cluster, on, touched) = (world.cluster.clone(), on.clone(), touched.clone());
    let done = Cell::new(false);
    world.clock.on_tick(move |now| {
        if done.get() || !on.get() || now.as_secs() < at {
            return;
        }
        let draining: Vec<String> = cluster
            .list("v1", "Node")
            .iter()
            .filter(|n| disrupting(n))
            .map(name)
            .collect();
        let claims: Vec<String> = cluster
            .list("karpenter.sh/v1", "NodeClaim")
            .iter()
            .filter(|c| c["metadata"]["deletionTimestamp"].is_null())
            .filter(|c| {
                c["status"]["nodeName"]
                    .as_str()
                    .is_some_and(|n| draining.iter().any(|d| d == n))
            })
            .map(name)
            .collect();
        if claims.is_empty() {
            return;
        }
        done.set(true);
        let claim = claims[pick % claims.len()].clone();
        if outright {
            cluster.remove("karpenter.sh/v1", "NodeClaim", None, &claim);
        } else {
            let path = format!("/apis/karpenter.sh/v1/nodeclaims/{claim}");
            let _ = ops::delete(&cluster, &path, None);
        }
        touched.borrow_mut().claims_deleted.push((claim, outright));
    });
}

/// Round 3's checks: the foreign taint kept; no node newly marked once the pool was read again
/// with budget 0 (an expired node excepted: v1 expiration is forceful).
fn round3_checks(world: &World, made: &Made, touched: &Touched) -> Vec<String> {
    let mut out = Vec::new();
    for node in &touched.tainted {
        let Some(n) = world.cluster.get("v1", "Node", None, node) else {
            continue;
        };
        let kept = n["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["key"] == FOREIGN_TAINT);
        if !kept {
            out.push(format!(
                "overwrite: {node} lost the taint {FOREIGN_TAINT} someone else added between a read and a write"
            ));
        }
    }
    let Some((at, busy)) = &touched.budget_zeroed else {
        return out;
    };
    let requests = world.cluster.requests();
    let Some(read_again) = requests
        .iter()
        .enumerate()
        .skip(*at)
        .find(|(_, r)| r.method == Method::Get && r.path.contains("/nodepools"))
        .map(|(i, _)| i)
    else {
        return out;
    };
    let now = world.clock.monotonic().as_secs() as i64;
    let marked = |r: &crate::k8s::fake::Recorded| {
        let node = r.path.strip_prefix("/api/v1/nodes/")?;
        let marks = r.method == Method::Patch
            && r.body["spec"]["taints"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["key"] == "karpenter.sh/disrupted");
        marks.then(|| node.to_string())
    };
    // Marked before the pool was read again (the decision read before the change): started.
    let mut busy = busy.clone();
    busy.extend(requests.iter().take(read_again).filter_map(marked));
    for node in requests.iter().skip(read_again + 1).filter_map(marked) {
        let node = node.as_str();
        let expired = made.expires.get(node).is_some_and(|e| *e <= now);
        if !busy.contains(node) && !expired {
            out.push(format!(
                "budget: {node} marked for disruption after the pool was read again with budget 0"
            ));
            break;
        }
    }
    out
}

/// The world `use_case` runs in.
fn shape(use_case: UseCase, rng: &mut Rng) -> Shape {
    match use_case {
        UseCase::Mixed => Shape {
            sparse: rng.below(2) == 0,
            expiring: true,
            ..Shape::default()
        },
        UseCase::ConsolidateTouched => Shape {
            sparse: rng.below(2) == 0,
            expiring: rng.below(3) == 0,
            ..Shape::default()
        },
        _ => Shape::default(),
    }
}

/// Round 3's case `seed`.
pub fn case3(seed: u64) -> Case {
    let mut rng = Rng::new(seed ^ SALT);
    let use_case = ROUND3[(seed % ROUND3.len() as u64) as usize];
    let shape = shape(use_case, &mut rng);
    let (world, made) = world::make_with(&mut rng, shape);
    let ran = Ran::new(&mut rng, &world, &made);
    let (chosen, settings, on) = (&ran.chosen, &ran.settings, &ran.on);
    let touched: Shared = Rc::default();
    let gone = match use_case {
        UseCase::Mixed if rng.below(2) == 0 => changes(&mut rng, &world, on, false),
        _ => Rc::default(),
    };
    if use_case != UseCase::Takeover {
        touch(&mut rng, &world, on, &touched);
        delete_a_claim(&mut rng, &world, on, &touched);
    }
    let stop = (rng.below(5) == 0).then(|| rng.below(200) as u64);
    scenarios::stop_in(&world, stop.map(Duration::from_secs));
    faults::cloud_faults(&mut rng, &world.cloud);
    let kill = (rng.below(2) == 0).then(|| 3 + rng.below(120) as u64);
    let cluster = Killable::new(&world, kill);
    cluster.faults(&mut rng, 5);
    let run = |c: &Killable| scenarios::run(use_case, &world, c, &made, chosen, settings);
    let mut out = match use_case {
        UseCase::Takeover => takeover(&mut rng, &ran, cluster, &run),
        _ => twice(Case::new(use_case), &ran, cluster, None, &run),
    };
    let gone = gone.borrow();
    if !gone.is_empty() {
        out.violations.retain(|v| !v.starts_with("pdb: "));
    }
    out.violations
        .extend(round2_checks(&world, &made, use_case, &gone));
    let touched = touched.borrow();
    out.violations
        .extend(round3_checks(&world, &made, &touched));
    let context = format!(
        " [{shape:?}, chosen {chosen:?}, touched {touched:?}, someone else terminated {gone:?}, stop {stop:?}, kill {kill:?}]"
    );
    for v in &mut out.violations {
        v.push_str(&context);
    }
    out
}

fn config(who: &str) -> LeaseConfig {
    LeaseConfig {
        namespace: "kube-system".into(),
        identity: Identity {
            holder: format!("{who}@host pid 1"),
            command: "drift replace".into(),
        },
        wait: None,
    }
}

/// Operator A's lease as its keeper holds it.
#[derive(Default)]
struct KeeperA {
    held: Option<Held>,
    /// The last successful renewal (unix seconds).
    last: i64,
    /// The last attempt (unix seconds).
    tried: i64,
    /// A's run still going (its keeper renews).
    alive: bool,
}

/// Operator B, waiting for the lease.
#[derive(Default)]
struct WaiterB {
    held: Option<Held>,
    tried: i64,
}

/// The takeover case: A's faulty run under the lease, B taking it once expired and running the
/// clean re-run.
fn takeover(rng: &mut Rng, ran: &Ran<'_>, cluster: Killable, run: &super::Runner<'_>) -> Case {
    let world = ran.world;
    let a_cfg = config("opA");
    let Ok(held) = acquire(&world.cluster, &world.clock, &a_cfg, &|_| false) else {
        let mut out = Case::new(UseCase::Takeover);
        out.violations
            .push("takeover: A could not take a free lease".into());
        return out;
    };
    let now = world.clock.now();
    let a = Rc::new(RefCell::new(KeeperA {
        held: Some(held),
        last: now,
        tried: now,
        alive: true,
    }));
    let b: Rc<RefCell<WaiterB>> = Rc::default();
    let found = ran.found.clone();
    // A's lease traffic fails from a random time on for a while (a partition of its keeper).
    let cut = (rng.below(2) == 0).then(|| {
        let from = rng.below(200) as i64;
        (from, from + 10 + rng.below(60) as i64)
    });
    {
        let (a, b, gate, rival) = (
            a.clone(),
            b.clone(),
            cluster.gate.clone(),
            cluster.rival.clone(),
        );
        let keeper = cluster.clone();
        let (w, clock) = (world.cluster.clone(), world.clock.clone());
        let start = now;
        let a_name = a_cfg.identity.holder.clone();
        world.clock.on_tick(move |_| {
            let now = clock.now();
            // A's keeper (`usecases::lease` `keep`): renew every RENEW_EVERY; lost (gate closed)
            // when taken, or once a taker could be waiting for expiry.
            let mut ka = a.borrow_mut();
            if ka.alive && !gate.get() && now - ka.tried >= RENEW_EVERY.as_secs() as i64 {
                ka.tried = now;
                let cut_off = cut.is_some_and(|(f, t)| (f..t).contains(&(now - start)));
                let mut held = ka.held.take();
                let result = match (cut_off, held.as_mut()) {
                    (false, Some(h)) => Some(renew(&keeper, &clock, h)),
                    _ => None,
                };
                ka.held = held;
                match result {
                    Some(Ok(Ok(()))) => ka.last = now,
                    Some(Err(_)) => gate.set(true),
                    _ => {
                        if now - ka.last + RENEW_EVERY.as_secs() as i64 >= LEASE_SECONDS {
                            gate.set(true);
                        }
                    }
                }
            }
            let last = ka.last;
            drop(ka);
            // B looks every 2 s.
            let mut wb = b.borrow_mut();
            if wb.held.is_none() && now - wb.tried >= 2 {
                wb.tried = now;
                // Who holds it as stored (no request): a lease A released (client-go
                // `ReleaseOnCancel` clears the holder) is free at once.
                let a_holds = w
                    .get(
                        "coordination.k8s.io/v1",
                        "Lease",
                        Some("kube-system"),
                        LEASE_NAME,
                    )
                    .is_some_and(|l| l["spec"]["holderIdentity"] == a_name.as_str());
                if let Ok(h) = acquire(&w, &clock, &config("opB"), &|_| false) {
                    if a_holds && now < last + LEASE_SECONDS {
                        found.borrow_mut().push(format!(
                            "takeover: B took the lease at {now}, A renewed it at {last}"
                        ));
                    }
                    wb.held = Some(h);
                    rival.set(true);
                }
            }
        });
    }
    let calls = Cell::new(0);
    let (a2, b2, found2) = (a.clone(), b.clone(), ran.found.clone());
    let w = world.cluster.clone();
    let wrapped = |c: &Killable| {
        calls.set(calls.get() + 1);
        if calls.get() == 1 {
            let done = run(c);
            // A's run ends: its keeper stops and, unless killed or lost, releases (`Keeper`'s
            // drop).
            let mut ka = a2.borrow_mut();
            ka.alive = false;
            if !c.killed() && !c.gate.get() {
                if let Some(h) = ka.held.take() {
                    let _ = release(&w, &h);
                }
            }
            return done;
        }
        if b2.borrow().held.is_none() {
            let last = a2.borrow().last;
            found2.borrow_mut().push(format!(
                "takeover: B does not hold the lease after A stopped (A renewed at {last}, now {})",
                world.clock.now()
            ));
        }
        let done = run(c);
        if let Some(h) = b2.borrow_mut().held.take() {
            if release(&w, &h).is_err() {
                found2
                    .borrow_mut()
                    .push("takeover: B's release failed without faults".into());
            }
            if let Ok(Some(l)) = read(&w, "kube-system") {
                if l.holder.is_some_and(|h| !h.is_empty()) {
                    found2
                        .borrow_mut()
                        .push("takeover: the lease still held after B released it".into());
                }
            }
        }
        done
    };
    let overlaps = cluster.overlaps.clone();
    let out = twice(Case::new(UseCase::Takeover), ran, cluster, None, &wrapped);
    let mut out = out;
    for w in overlaps.borrow().iter().take(1) {
        out.violations.push(format!(
            "takeover: A wrote after B took the lease: {w} ({} writes)",
            overlaps.borrow().len()
        ));
    }
    out
}
