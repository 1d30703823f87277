//! The mutating use cases as their commands drive them, over a cluster that may be killed:
//! `provision --yes --wait`, `provision --watch`, `drift replace` (and `--via-controller`),
//! `consolidate --yes`.

use std::time::Duration;

use super::faults::Killable;
use super::world::Made;
use crate::drift::{DriftReason, DriftSnapshot, Evaluation, NodeDrift, Status as Verdict};
use crate::error::CommandError;
use crate::usecases::clock::Clock;
use crate::usecases::consolidate::execute::{execute, Deciding};
use crate::usecases::provisioning::Selection;
use crate::usecases::replace::select::select;
use crate::usecases::replace::{
    pipeline, read_cluster, via_controller, Action, Method, NodeOutcome, Settings,
};
use crate::usecases::testing::World;

/// Which use case a case drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UseCase {
    /// `provision --yes --wait`.
    Provision,
    /// `provision --watch` (batching, launching, empty-node removal), stopped by Ctrl-C.
    Watch,
    /// `drift replace` of some nodes.
    Replace,
    /// `drift replace --via-controller` with a Karpenter controller playing its part.
    ViaController,
    /// `consolidate --yes`.
    Consolidate,
    /// The operator lease, two operators.
    Lease,
    /// Round 2: `drift replace --watch` of some nodes (a pass: the nodes selected as
    /// drifted, `select`'s method) while the cluster changes under it.
    ReplaceWatch,
    /// Round 2: `consolidate --watch` while the cluster changes under it.
    ConsolidateWatch,
    /// Round 2: `consolidate --yes` with expired NodeClaims (forceful in v1), some with a
    /// `terminationGracePeriod`.
    Expiration,
    /// Round 2: `drift replace` of a static pool's nodes (`static-drift`).
    StaticDrift,
    /// Round 2: `consolidate --yes` over a static pool (never consolidated).
    StaticConsolidate,
    /// Round 2: `consolidate --yes` over several nearly empty nodes (multi-node).
    MultiNode,
    /// Round 3: `drift replace` of some nodes, then `consolidate --yes` (expiration among
    /// them) in one world.
    Mixed,
    /// Round 3: `drift replace` while someone else binds pods, taints nodes, sets the budget
    /// to 0 between a read and a write, and deletes a draining node's NodeClaim.
    ReplaceTouched,
    /// Round 3: `consolidate --yes` likewise.
    ConsolidateTouched,
    /// Round 3: `drift replace` holding the operator lease; a second operator takes it over
    /// once it expires and finishes the work.
    Takeover,
}

/// Every use case, in the order cases cycle through them.
pub const ALL: [UseCase; 6] = [
    UseCase::Provision,
    UseCase::Watch,
    UseCase::Replace,
    UseCase::ViaController,
    UseCase::Consolidate,
    UseCase::Lease,
];

/// Every pool, up to 60 types a NodeClaim (the command's default).
pub fn selection() -> Selection {
    Selection {
        max_instance_types: 60,
        ..Selection::default()
    }
}

/// The pipeline's settings of a case.
pub fn settings(max_parallel: usize) -> Settings {
    Settings {
        max_parallel,
        force: false,
        drain_timeout: Duration::from_secs(300),
        ready_timeout: Duration::from_secs(300),
        attempt: "2023-11-14T22:13:20Z".into(),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    }
}

/// One run of `use_case`; the nodes' outcomes where it has them.
pub fn run(
    use_case: UseCase,
    world: &World,
    cluster: &Killable,
    made: &Made,
    chosen: &[String],
    settings: &Settings,
) -> Result<Vec<NodeOutcome>, CommandError> {
    match use_case {
        UseCase::Provision => {
            let mut live = world.live_over(cluster);
            let Some(round) = live.plan_pending(&selection(), &mut |_| {})? else {
                return Ok(Vec::new());
            };
            let launches = live.launch_in_rounds(&selection(), &round, &mut |_| {})?;
            live.wait(&launches.launched, Duration::from_secs(300), &mut |_| {})?;
            Ok(Vec::new())
        }
        UseCase::Watch => {
            world.live_over(cluster).watch(&selection(), &mut |_| {})?;
            Ok(Vec::new())
        }
        UseCase::ReplaceWatch | UseCase::StaticDrift => {
            drift_pass(world, cluster, chosen, settings)
        }
        UseCase::Mixed => {
            let mut done = drift_pass(world, cluster, chosen, settings)?;
            done.extend(run(
                UseCase::Consolidate,
                world,
                cluster,
                made,
                chosen,
                settings,
            )?);
            Ok(done)
        }
        UseCase::Replace | UseCase::ViaController | UseCase::ReplaceTouched | UseCase::Takeover => {
            let m = read_cluster(cluster)?;
            let actions: Vec<Action> = chosen
                .iter()
                .filter_map(|name| m.nodes.iter().find(|n| &n.name == name))
                .map(|node| Action {
                    node: node.clone(),
                    pool: m.node_pools[0].clone(),
                    method: Method::Drift,
                    chosen: None,
                    reason: "AMIDrift".into(),
                    command: Vec::new(),
                })
                .collect();
            let mut live = world.live_over(cluster);
            if use_case == UseCase::ViaController {
                let handover = via_controller::prepare(&live, &m, actions, settings, &mut |_| {})?;
                return via_controller::run(&live, handover, settings, &mut |_| {});
            }
            let preview = pipeline::preview(&live, &m, actions, settings)?;
            pipeline::run(&mut live, preview, settings, &mut |_| {})
        }
        UseCase::Consolidate
        | UseCase::ConsolidateWatch
        | UseCase::Expiration
        | UseCase::StaticConsolidate
        | UseCase::MultiNode
        | UseCase::ConsolidateTouched => {
            let _ = made;
            let mut live = world.live_over(cluster);
            let deciding = Deciding::default();
            deciding.prepare(&mut live);
            let mut proceed = |_: &_, _: &_| Ok(true);
            execute(
                &mut live,
                &deciding,
                settings,
                &mut Default::default(),
                &mut |_| {},
                &mut proceed,
            )
        }
        UseCase::Lease => Ok(Vec::new()),
    }
}

/// One `drift replace` of the `chosen` nodes still there, judged drifted, as the command
/// selects them (`select`: a static pool's node gets `static-drift`).
fn drift_pass(
    world: &World,
    cluster: &Killable,
    chosen: &[String],
    settings: &Settings,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let m = read_cluster(cluster)?;
    let evaluation = Evaluation {
        nodes: m
            .nodes
            .iter()
            .filter(|n| chosen.contains(&n.name))
            .map(|n| drifted(&n.name))
            .collect(),
        ..Evaluation::default()
    };
    let actions = select(&m, &DriftSnapshot::default(), &evaluation, &[], &mut |_| {});
    if actions.is_empty() {
        return Ok(Vec::new());
    }
    let mut live = world.live_over(cluster);
    let preview = pipeline::preview(&live, &m, actions, settings)?;
    pipeline::run(&mut live, preview, settings, &mut |_| {})
}

/// `drift check`'s verdict on a node of pool `default`: drifted, its AMI.
fn drifted(name: &str) -> NodeDrift {
    crate::usecases::testing::verdict(name, Verdict::Drifted, Some(DriftReason::AmiDrift))
}

/// Lets the world settle after a run: the kubelet registers what launched, the scheduler
/// binds, the ReplicaSets make evicted pods again.
pub fn settle(world: &World) {
    for _ in 0..12 {
        world.clock.advance(Duration::from_secs(5));
    }
}

/// The pending pods a provisioning plan of the cluster now cannot place (pods lost count
/// against what it was before the case).
pub fn unplaceable(world: &World) -> i64 {
    match world.live().plan_pending(&selection(), &mut |_| {}) {
        Ok(Some(r)) => r.plan.unschedulable.len() as i64,
        _ => 0,
    }
}

/// The clock's Ctrl-C, `after` from now (never: `None`).
pub fn stop_in(world: &World, after: Option<Duration>) {
    let now = world.clock.monotonic();
    world
        .clock
        .stop_after(after.map_or(Duration::MAX, |a| now + a));
}
