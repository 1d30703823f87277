//! Round 2 (docs/upstream-tests/fuzzing.md "The mutating paths fuzzed, round 2
//! (s33-fuzzmut2)"): what round 1 left out. `drift replace --watch` and `consolidate --watch`
//! over several passes while the cluster changes under them (pods arriving, a node terminated
//! by someone else, a second operator's run killed half-way between two passes); expiration
//! (v1: forceful, unbudgeted — core v1.14.1 `pkg/controllers/nodeclaim/expiration`) with
//! `terminationGracePeriod` and do-not-disrupt pods; static NodePools (`spec.replicas`, core
//! `pkg/controllers/static/`: never consolidated, replaced on drift by a bare replica);
//! multi-node consolidation. [`step_case`] arms a fault on one given request and kills the
//! process right after it: swept over every request a case makes, then a clean re-run.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use super::faults::{self, Killable};
use super::invariants;
use super::scenarios::{self, UseCase};
use super::world::{self, Made, Shape};
use super::{twice, Case, Ran};
use serde_json::Value;

use crate::disruption::replace::REPLACEMENT;
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::Method;
use crate::model::labels::DO_NOT_DISRUPT;
use crate::testing::Rng;
use crate::usecases::replace::watch::{self, Passes};
use crate::usecases::replace::{verdict, NodeOutcome, Settings};
use crate::usecases::testing::{put_pending, World};

/// Round 2's use cases, in the order its cases cycle through them.
pub const ROUND2: [UseCase; 6] = [
    UseCase::ReplaceWatch,
    UseCase::ConsolidateWatch,
    UseCase::Expiration,
    UseCase::StaticDrift,
    UseCase::StaticConsolidate,
    UseCase::MultiNode,
];

/// Round 2's seeds draw other numbers than round 1's of the same value.
const SALT: u64 = 0x5333_f022_0000_0000;

/// The world `use_case` runs in.
fn shape(use_case: UseCase, rng: &mut Rng) -> Shape {
    let coin = |rng: &mut Rng| rng.below(2) == 0;
    match use_case {
        UseCase::ReplaceWatch => Shape {
            statik: rng.below(3) == 0,
            ..Shape::default()
        },
        UseCase::ConsolidateWatch => Shape {
            sparse: coin(rng),
            expiring: coin(rng),
            ..Shape::default()
        },
        UseCase::Expiration => Shape {
            sparse: coin(rng),
            expiring: true,
            ..Shape::default()
        },
        UseCase::StaticDrift | UseCase::StaticConsolidate => Shape {
            statik: true,
            ..Shape::default()
        },
        _ => Shape {
            sparse: true,
            expiring: rng.below(4) == 0,
            ..Shape::default()
        },
    }
}

fn watching(use_case: UseCase) -> bool {
    matches!(use_case, UseCase::ReplaceWatch | UseCase::ConsolidateWatch)
}

/// The cluster changing under the run while `on`: pods arriving pending at random times, and
/// perhaps a node's instance terminated by someone else (its Node then goes, the kubelet's
/// tick; its pods and NodeClaim are collected, as the pod GC and Karpenter's garbage
/// collection would). The nodes so terminated.
/// No pod arrives in a static pool's world: it launches nothing for them (its pods are
/// placed on its replicas or stay pending), which would read as pods lost.
pub(super) fn changes(
    rng: &mut Rng,
    world: &World,
    on: &Rc<Cell<bool>>,
    statik: bool,
) -> Rc<RefCell<BTreeSet<String>>> {
    let gone: Rc<RefCell<BTreeSet<String>>> = Rc::default();
    let mut arrivals: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(400) as u64).collect();
    if statik {
        arrivals.clear();
    }
    let kill_at = (rng.below(2) == 0).then(|| rng.below(300) as u64);
    let pick = rng.next_u64() as usize;
    let (cluster, cloud, on, terminated) = (
        world.cluster.clone(),
        world.cloud.clone(),
        on.clone(),
        gone.clone(),
    );
    let mut kill_at = kill_at;
    let mut next = 0;
    world.clock.on_tick(move |now| {
        let now = now.as_secs();
        if on.get() {
            arrivals.retain(|at| {
                if *at <= now {
                    put_pending(&cluster, &format!("change-{next}"), "1");
                    next += 1;
                }
                *at > now
            });
            if kill_at.is_some_and(|at| at <= now) {
                kill_at = None;
                let mut instances = cloud.instances.borrow_mut();
                let running: Vec<usize> = (0..instances.len())
                    .filter(|i| instances[*i].state == "running")
                    .collect();
                if !running.is_empty() {
                    let i = &mut instances[running[pick % running.len()]];
                    i.state = "terminated".into();
                    terminated
                        .borrow_mut()
                        .insert(crate::usecases::testing::node_name(&i.id));
                }
            }
        }
        // The collectors, once the Node is gone.
        for node in terminated.borrow().iter() {
            if cluster.get("v1", "Node", None, node).is_some() {
                continue;
            }
            for p in cluster.list("v1", "Pod") {
                if p["spec"]["nodeName"] == node.as_str() {
                    let name = p["metadata"]["name"].as_str().unwrap_or_default();
                    cluster.remove("v1", "Pod", Some("default"), name);
                }
            }
            for c in cluster.list("karpenter.sh/v1", "NodeClaim") {
                if c["status"]["nodeName"] == node.as_str() {
                    let name = c["metadata"]["name"].as_str().unwrap_or_default();
                    cluster.remove("karpenter.sh/v1", "NodeClaim", None, name);
                }
            }
        }
    });
    gone
}

/// A second operator's `drift replace` of one node, killed after `kill` requests: run before
/// the watch's pass number `at` (another attempt's record left on the node).
#[derive(Debug, Clone, Copy)]
struct Second {
    at: usize,
    kill: u64,
    node: usize,
}

/// `--watch`'s passes over the fuzzed cluster: each a whole run of the use case; the last
/// outcome of each node kept.
struct Watching<'a> {
    world: &'a World,
    made: &'a Made,
    cluster: &'a Killable,
    chosen: &'a [String],
    settings: &'a Settings,
    use_case: UseCase,
    second: Option<Second>,
    passes: usize,
    outcomes: BTreeMap<String, NodeOutcome>,
    /// The last pass that ended in an error (not a node's failure).
    error: Option<CommandError>,
    found: &'a invariants::Violations,
}

impl Passes for Watching<'_> {
    fn pass(&mut self) -> CommandResult {
        self.passes += 1;
        if let Some(s) = self.second.filter(|s| s.at == self.passes) {
            let other = Killable::new(self.world, Some(s.kill));
            let settings = Settings {
                attempt: "2023-11-14T22:20:00Z".into(),
                ..self.settings.clone()
            };
            let node = [self.chosen[s.node % self.chosen.len()].clone()];
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // The same command as ours: another operator's consolidation records are
                // consolidate's to resume, its drift records `drift replace`'s.
                let theirs = match self.use_case {
                    UseCase::ConsolidateWatch => UseCase::Consolidate,
                    _ => UseCase::StaticDrift,
                };
                scenarios::run(theirs, self.world, &other, self.made, &node, &settings)
            }));
            if let Err(p) = ran {
                self.found.borrow_mut().push(format!(
                    "panic in the second operator's run: {}",
                    super::panic_text(p)
                ));
            }
        }
        let done = scenarios::run(
            self.use_case,
            self.world,
            self.cluster,
            self.made,
            self.chosen,
            self.settings,
        )
        .inspect_err(|e| {
            self.error = Some(CommandError {
                exit: e.exit,
                message: e.message.clone(),
                hint: e.hint.clone(),
            })
        })?;
        for o in done {
            self.outcomes.insert(o.node.clone(), o);
        }
        let last: Vec<NodeOutcome> = self.outcomes.values().cloned().collect();
        verdict(&last)
    }

    fn failed(&mut self, _: &CommandError) {}
}

/// One run of a round-2 `use_case` over `cluster` (a watch until the clock's stop).
#[allow(clippy::too_many_arguments)]
fn run(
    use_case: UseCase,
    world: &World,
    made: &Made,
    cluster: &Killable,
    chosen: &[String],
    settings: &Settings,
    second: Option<Second>,
    found: &invariants::Violations,
) -> Result<Vec<NodeOutcome>, CommandError> {
    if !watching(use_case) {
        return scenarios::run(use_case, world, cluster, made, chosen, settings);
    }
    let mut passes = Watching {
        world,
        made,
        cluster,
        chosen,
        settings,
        use_case,
        second,
        passes: 0,
        outcomes: BTreeMap::new(),
        error: None,
        found,
    };
    let result = watch::watch(&world.clock, watch::INTERVAL, &mut passes);
    let outcomes = passes.outcomes.into_values().collect();
    match (result, passes.error) {
        // A pass that ended in an error (the faulty run's faults, or the clean re-run's: a
        // violation).
        (_, Some(e)) => Err(e),
        (Err(e), None) if !matches!(e.exit, Exit::Remote) => Err(e),
        // Nodes that failed (a drain held): their outcomes say so.
        _ => Ok(outcomes),
    }
}

/// Round 2's case `seed`.
pub fn case2(seed: u64) -> Case {
    case_with(seed, None)
}

/// Round 2's case `seed` with a fault on request `step` and the process killed right after it.
pub fn step_case(seed: u64, step: u64) -> Case {
    case_with(seed, Some(step))
}

/// How many requests round 2's case `seed` sends when nothing fails: the steps [`step_case`]
/// sweeps.
pub fn step_count(seed: u64) -> u64 {
    case_with(seed, Some(u64::MAX)).writes as u64
}

fn case_with(seed: u64, step: Option<u64>) -> Case {
    let mut rng = Rng::new(seed ^ SALT);
    let use_case = ROUND2[(seed % ROUND2.len() as u64) as usize];
    let shape = shape(use_case, &mut rng);
    let (world, made) = world::make_with(&mut rng, shape);
    let out = Case::new(use_case);
    let ran = Ran::new(&mut rng, &world, &made);
    let (found, chosen, settings, on) = (&ran.found, &ran.chosen, &ran.settings, &ran.on);
    let gone = changes(&mut rng, &world, on, shape.statik);
    let second = (watching(use_case) && rng.below(2) == 0).then(|| Second {
        at: 1 + rng.below(3),
        kill: 5 + rng.below(80) as u64,
        node: rng.below(4),
    });
    let stop = match watching(use_case) {
        true => Some(60 + rng.below(300) as u64),
        false => (rng.below(5) == 0).then(|| rng.below(200) as u64),
    };
    scenarios::stop_in(&world, stop.map(Duration::from_secs));
    faults::cloud_faults(&mut rng, &world.cloud);
    let cluster = match step {
        // Counting: no fault, no kill, the requests the case sends.
        Some(u64::MAX) => Killable::new(&world, None),
        Some(at) => {
            let c = Killable::new(&world, Some(at + 1));
            c.fail_at(at, &mut rng);
            c
        }
        None => {
            faults::between_read_and_write(&mut rng, &world.cluster, on);
            let kill = (rng.below(2) == 0).then(|| 3 + rng.below(120) as u64);
            let c = Killable::new(&world, kill);
            c.faults(&mut rng, 5);
            c
        }
    };
    let counting = step == Some(u64::MAX);
    // The second operator acts in the faulty run only (its kill would reach EC2 for ours).
    let run_it = |c: &Killable| {
        let second = second.filter(|_| on.get());
        run(use_case, &world, &made, c, chosen, settings, second, found)
    };
    let clean_for = watching(use_case).then_some(Duration::from_secs(120));
    let sent = cluster.sent();
    let mut out = twice(out, &ran, cluster, clean_for, &run_it);
    if counting {
        out.writes = sent.get() as usize;
        return out;
    }
    let gone = gone.borrow();
    // A node someone else terminated takes its pods with it: the PodDisruptionBudget counts
    // them unavailable, no fault of the run's (the fake's evictions still hold it).
    if !gone.is_empty() {
        out.violations.retain(|v| !v.starts_with("pdb: "));
    }
    out.violations
        .extend(round2_checks(&world, &made, use_case, &gone));
    let context = format!(
        " [{shape:?}, chosen {chosen:?}, someone else terminated {gone:?}, second {second:?}, stop {stop:?}]"
    );
    for v in &mut out.violations {
        v.push_str(&context);
    }
    out
}

/// What round 2 adds to the invariants: an expired node with a short grace period goes unless
/// held; a static pool keeps its replicas (unless someone else terminated one of its nodes),
/// and consolidation never touches one (core v1.14.1 `disruption/consolidation.go`
/// `ShouldDisrupt` and `emptiness.go`: `OwnedByStaticNodePool` candidates are skipped).
pub(super) fn round2_checks(
    world: &World,
    made: &Made,
    use_case: UseCase,
    gone: &BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    // A NodeClaim expired before the case, whose terminationGracePeriod is shorter than the
    // drain's timeout, is gone after the clean re-run — unless a do-not-disrupt pod or a
    // PodDisruptionBudget holds its drain: Karpenter would delete those pods once the grace
    // period runs out (core v1.14.1 `node/termination/terminator/terminator.go`
    // `DeleteExpiringPods`); we never delete around them (docs/karpenter.md §5.5 "Not followed",
    // docs/spec.md §6), so the node stays cordoned, Failed, resumable.
    let consolidating = matches!(
        use_case,
        UseCase::Expiration
            | UseCase::ConsolidateWatch
            | UseCase::MultiNode
            | UseCase::Mixed
            | UseCase::ConsolidateTouched
    );
    let pdbs = !world
        .cluster
        .list("policy/v1", "PodDisruptionBudget")
        .is_empty();
    for (node, at) in made.expires.iter().filter(|_| consolidating) {
        let short = made.grace.get(node).is_some_and(|g| *g <= 120);
        let there = world.cluster.get("v1", "Node", None, node);
        let Some(n) = there.filter(|_| *at <= 0 && short && !gone.contains(node)) else {
            continue;
        };
        let pods: Vec<Value> = world
            .cluster
            .list("v1", "Pod")
            .into_iter()
            .filter(|p| p["spec"]["nodeName"] == node.as_str())
            .collect();
        let held = pods.iter().any(|p| {
            p["metadata"]["annotations"][DO_NOT_DISRUPT].is_string()
                || (pdbs && p["metadata"]["labels"]["app"] == "db")
        });
        if !held {
            let names: Vec<&str> = pods
                .iter()
                .filter_map(|p| p["metadata"]["name"].as_str())
                .collect();
            out.push(format!(
                "grace: {node} expired, terminationGracePeriod 2m, still there after the clean re-run, nothing holding it (pods {names:?}, record {})",
                n["metadata"]["annotations"][REPLACEMENT]
            ));
        }
    }
    let Some(replicas) = made.static_replicas else {
        return out;
    };
    let have = world
        .nodes()
        .iter()
        .filter(|n| n["metadata"]["labels"]["karpenter.sh/nodepool"] == "default")
        .count();
    if gone.is_empty() && have < replicas {
        out.push(format!(
            "static: pool default runs {have} nodes after the clean re-run, replicas {replicas}"
        ));
    }
    if use_case == UseCase::StaticConsolidate {
        for r in world.cluster.requests() {
            let evicting = r.method == Method::Post && r.path.ends_with("/eviction");
            let deleting = r.method == Method::Delete && r.path.starts_with("/api/v1/nodes/");
            if evicting || deleting {
                out.push(format!(
                    "static: consolidation disrupted a static pool's node: {:?} {}",
                    r.method, r.path
                ));
                break;
            }
        }
    }
    out
}
