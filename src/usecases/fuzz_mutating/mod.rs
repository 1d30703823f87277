//! The mutating paths fuzzed (docs/upstream-tests/fuzzing.md "The mutating paths fuzzed
//! (s32-fuzzmut)"; how to run it: docs/testing.md "Input fuzzing"). A seeded, deterministic
//! fuzzer that drives the real use cases that change a cluster — live `provision` (launch,
//! in-flight adoption, wait; `--watch` batching and empty-node removal), `drift replace` (and
//! `--via-controller`), `consolidate --yes` and the operator lease — against the in-memory
//! cluster, cloud and clock, in random small worlds ([`world`]) with random faults
//! ([`faults`]: 409, 429, 500, 503, no answer, insufficient capacity, a lost CreateFleet answer,
//! objects changing between a read and the write after it, the process killed after a random
//! request or stopped by Ctrl-C at a random time). Each case runs once with its faults, then
//! again cleanly (what an operator does after a failure), and the world settles; the
//! [`invariants`] must hold throughout and after: at most one instance per NodeClaim, no
//! instance without its Node, no pod lost, no PodDisruptionBudget or NodePool budget exceeded,
//! do-not-disrupt kept, no node left tainted or cordoned after a finished run, the lease free
//! once released, no panic, every failure a typed error (exit 3 or 4).
//!
//! `cargo test --lib fuzz_mutating` runs a small fixed sample; the ignored
//! `fuzz_mutating::tests::sweep` runs `FUZZ_MUT_SEEDS=FROM..TO` and prints the figures.

mod faults;
mod invariants;
mod lease;
mod round2;
mod round3;
mod scenarios;
mod world;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;

use crate::error::{CommandError, Exit};
use crate::testing::Rng;
use crate::usecases::replace::{NodeOutcome, Settings, Status};
use crate::usecases::testing::World;
use faults::Killable;
use invariants::Violations;
use scenarios::UseCase;

/// What one case did and found.
#[derive(Debug)]
pub struct Case {
    /// The use case driven.
    pub use_case: UseCase,
    /// The faulty run ended in an error (else it finished, or was stopped).
    pub failed: bool,
    /// The faulty run was killed.
    pub killed: bool,
    /// Writes sent to the cluster (both runs and the world's own), and EC2 CreateFleet calls:
    /// how deep the case went.
    pub writes: usize,
    /// Nodes the clean re-run replaced or deleted.
    pub done: usize,
    /// The invariants broken, one line each.
    pub violations: Vec<String>,
}

impl Case {
    /// A case of `use_case` that has not run yet.
    fn new(use_case: UseCase) -> Case {
        Case {
            use_case,
            failed: false,
            killed: false,
            writes: 0,
            done: 0,
            violations: Vec::new(),
        }
    }
}

/// A running Karpenter controller Deployment, and its termination controller: a NodeClaim
/// being deleted has its node's pods evicted (through the Eviction API: PDBs hold), then its
/// instance terminated, Node and NodeClaim removed (core v1.14.1
/// `pkg/controllers/node/termination/controller.go`, simplified).
fn karpenter(world: &World) {
    world.cluster.put(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system",
            "labels": {"app.kubernetes.io/name": "karpenter"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "controller", "image": "public.ecr.aws/karpenter/controller:1.14.1"}]}}},
        "status": {"readyReplicas": 1, "replicas": 1},
    }));
    let (cluster, cloud) = (world.cluster.clone(), world.cloud.clone());
    world.clock.on_tick(move |_| {
        for claim in cluster.list("karpenter.sh/v1", "NodeClaim") {
            if claim["metadata"]["deletionTimestamp"].is_null() {
                continue;
            }
            let node = claim["status"]["nodeName"].as_str().unwrap_or_default();
            let mut left = 0;
            for pod in cluster.list("v1", "Pod") {
                if pod["spec"]["nodeName"] != node {
                    continue;
                }
                let name = pod["metadata"]["name"].as_str().unwrap_or_default();
                if !pod["metadata"]["annotations"][crate::model::labels::DO_NOT_DISRUPT].is_null() {
                    left += 1;
                    continue;
                }
                let evicted = crate::k8s::ops::evict(&cluster, "default", name, None);
                left += usize::from(!matches!(evicted, Ok(crate::k8s::ops::Eviction::Evicted)));
            }
            if left > 0 {
                continue;
            }
            for i in cloud.instances.borrow_mut().iter_mut() {
                if crate::usecases::testing::node_name(&i.id) == node {
                    i.state = "shutting-down".into();
                }
            }
            cluster.remove("v1", "Node", None, node);
            let name = claim["metadata"]["name"].as_str().unwrap_or_default();
            cluster.remove("karpenter.sh/v1", "NodeClaim", None, name);
        }
    });
}

/// A failure of the faulty run is typed: the cluster's or the cloud's error (3) or a refusal
/// (4); never bad input, never a finding passed off as an error.
fn typed(e: &CommandError) -> bool {
    matches!(e.exit, Exit::Remote | Exit::Refused)
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs one case.
pub fn case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let use_case = scenarios::ALL[(seed % scenarios::ALL.len() as u64) as usize];
    let mut out = Case::new(use_case);
    if use_case == UseCase::Lease {
        out.violations = lease::case(&mut rng);
        return out;
    }
    let (world, made) = world::make(&mut rng);
    if use_case == UseCase::ViaController {
        karpenter(&world);
    }
    let ran = Ran::new(&mut rng, &world, &made);
    faults::cloud_faults(&mut rng, &world.cloud);
    faults::between_read_and_write(&mut rng, &world.cluster, &ran.on);
    if use_case == UseCase::Watch {
        let at = Duration::from_secs(1 + rng.below(60) as u64);
        world.pods_arrive(&[at], "burst", 1 + rng.below(4));
    }
    let kill = (rng.below(2) == 0).then(|| 3 + rng.below(120) as u64);
    let stop = match use_case {
        UseCase::Watch => Some(20 + rng.below(200) as u64),
        _ => (rng.below(5) == 0).then(|| rng.below(200) as u64),
    };
    scenarios::stop_in(&world, stop.map(Duration::from_secs));
    let cluster = Killable::new(&world, kill);
    cluster.faults(&mut rng, 5);
    let run = |c: &Killable| scenarios::run(use_case, &world, c, &made, &ran.chosen, &ran.settings);
    // The clean re-run of a watch runs two minutes and is stopped.
    let watch = (use_case == UseCase::Watch).then_some(Duration::from_secs(120));
    twice(out, &ran, cluster, watch, &run)
}

/// The nodes a case's `drift replace` names: each at random, at least one.
fn choose(rng: &mut Rng, made: &world::Made) -> Vec<String> {
    let mut chosen: Vec<String> = made
        .nodes
        .iter()
        .filter(|_| rng.below(2) == 0)
        .cloned()
        .collect();
    if chosen.is_empty() {
        chosen.push(made.nodes[0].clone());
    }
    chosen
}

/// A case's world as its faults were armed.
struct Ran<'a> {
    world: &'a World,
    made: &'a world::Made,
    found: Violations,
    /// [`scenarios::unplaceable`] before the case.
    before: i64,
    /// The nodes the case's `drift replace` names.
    chosen: Vec<String>,
    settings: Settings,
    /// Whether the world still changes under the run (off for the clean re-run).
    on: Rc<Cell<bool>>,
}

impl<'a> Ran<'a> {
    /// What every round's case sets up once its world is made, in this order (the seed's
    /// draws): the invariants watched, the pods unplaceable before, the nodes chosen, the
    /// settings; the world changing.
    fn new(rng: &mut Rng, world: &'a World, made: &'a world::Made) -> Self {
        let found: Violations = Rc::default();
        invariants::watch(world, made, &found);
        Ran {
            world,
            made,
            found,
            before: scenarios::unplaceable(world),
            chosen: choose(rng, made),
            settings: scenarios::settings(1 + rng.below(3)),
            on: Rc::new(Cell::new(true)),
        }
    }
}

/// One use case's run over a cluster that may be killed.
type Runner<'a> = dyn Fn(&Killable) -> Result<Vec<NodeOutcome>, CommandError> + 'a;

/// Runs `run` with its faults over `cluster`, then cleanly (for `clean_for`, a watch; else to
/// its end), lets the world settle and checks the invariants.
fn twice(
    mut out: Case,
    ran: &Ran<'_>,
    cluster: Killable,
    clean_for: Option<Duration>,
    run: &Runner<'_>,
) -> Case {
    let world = ran.world;
    let first = catch_unwind(AssertUnwindSafe(|| run(&cluster)));
    out.killed = cluster.killed();
    match first {
        Err(p) => {
            out.violations
                .push(format!("panic in the faulty run: {}", panic_text(p)));
            return out;
        }
        Ok(Err(e)) => {
            out.failed = true;
            if !typed(&e) && !out.killed {
                out.violations
                    .push(format!("untyped failure: exit {:?}: {}", e.exit, e.message));
            }
        }
        Ok(Ok(_)) => {}
    }
    faults::clear(world, &ran.on);
    scenarios::settle(world);
    scenarios::stop_in(world, clean_for);
    let clean = Killable::new(world, None);
    let second = catch_unwind(AssertUnwindSafe(|| run(&clean)));
    let outcomes: Vec<NodeOutcome> = match second {
        Err(p) => {
            out.violations
                .push(format!("panic in the clean re-run: {}", panic_text(p)));
            return out;
        }
        Ok(Err(e)) => {
            out.violations.push(format!(
                "the clean re-run failed: exit {:?}: {}",
                e.exit, e.message
            ));
            Vec::new()
        }
        Ok(Ok(o)) => o,
    };
    scenarios::stop_in(world, None);
    scenarios::settle(world);
    // A static pool launches nothing for pending pods (core v1.14.1 `provisioning/
    // scheduling`: static NodePools are left out; a drifted node's bare replica takes what fits):
    // pods pending there are no pods lost by the run.
    let lost = match ran.made.static_replicas {
        Some(_) => 0,
        None => scenarios::unplaceable(world) - ran.before,
    };
    invariants::check(world, ran.made, &outcomes, lost, &ran.found);
    out.writes = world.cluster.writes().len();
    out.done = outcomes
        .iter()
        .filter(|o| matches!(o.status, Status::Replaced | Status::Deleted))
        .count();
    out.violations.extend(ran.found.borrow().iter().cloned());
    out
}

#[cfg(test)]
mod tests;
