//! Every branch of the replace pipeline against the fake cluster, cloud and clock, asserting
//! the exact calls: the cluster's writes (`FakeCluster::writes`, bodies where they matter), the
//! cloud's calls and instances, the events and the outcomes.
//!
//! The world (`usecases::testing`) registers a Ready Node for each instance 30 s after it runs
//! and binds pending pods; the drifted nodes here are c6a.large nodes of pool `default` with
//! one pod of 1 CPU each (no room for a second one), so each needs one replacement.

mod pipeline;
mod resume;
mod select;
mod static_drift;
mod termination;
mod via_controller;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};

use super::pipeline as replace_pipeline;
use super::*;
use crate::api::Manifests;
use crate::cloud::types::Cloud;
use crate::disruption::replace::{Record, REPLACEMENT};
use crate::k8s::fake::FakeCluster;
use crate::usecases::clock::Clock;
use crate::usecases::testing::{node_pool, on_demand_template, put_bound, put_pending, World};

/// The run's start, as the record's `startedAt` and the replacement names have it.
const ATTEMPT: &str = "2023-11-14T22:13:20Z";

fn settings() -> Settings {
    Settings {
        max_parallel: 1,
        force: false,
        drain_timeout: Duration::from_secs(900),
        ready_timeout: Duration::from_secs(600),
        attempt: ATTEMPT.into(),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    }
}

/// The annotations a plan gives a NodeClaim of the world's (first) pool when its template has
/// none and no overlay applies: the pool's hash and `nodeclaim-min-values-relaxed: "false"`
/// (`scheduling::ClaimAnnotations`).
fn planned_claim_annotations(world: &World) -> std::collections::BTreeMap<String, String> {
    let mut a =
        provisioning::input::hash_annotations(&read_cluster(&world.cluster).unwrap().node_pools[0]);
    a.insert(
        crate::model::labels::NODECLAIM_MIN_VALUES_RELAXED.into(),
        "false".into(),
    );
    a
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A world whose kubelet registers instances 30 s after they run and whose scheduler binds
/// pending pods.
fn world() -> World {
    let world = World::new();
    world.kubelet(secs(30));
    world.scheduler();
    world
}

/// `count` Ready, initialized c6a.large nodes of pool `default`, each running one pod of the
/// `app` ReplicaSet (`p<i>`); their names.
fn drifted(world: &World, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let name = world.registered_node("default", "c6a.large");
            world.cluster.update("v1", "Node", None, &name, |n| {
                n["metadata"]["labels"]["karpenter.sh/initialized"] = json!("true");
            });
            put_bound(&world.cluster, &format!("p{i}"), &name);
            name
        })
        .collect()
}

/// The `default` pool with a disruption budget of `nodes`.
fn budget(world: &World, nodes: &str) {
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
            "budgets": [{"nodes": nodes}]}}),
    ));
}

/// Plays the `app` ReplicaSet (see [`World::replica_set`]).
fn replica_set(world: &World, desired: usize) {
    world.replica_set(desired);
}

/// The actions for `names` (drift), from the cluster as it is now.
fn actions(world: &World, names: &[String]) -> (Manifests, Vec<Action>) {
    let m = read_cluster(&world.cluster).unwrap();
    let actions = names
        .iter()
        .map(|name| {
            let node = m.nodes.iter().find(|n| &n.name == name).unwrap().clone();
            let pool = m
                .node_pools
                .iter()
                .find(|p| Some(p.name.as_str()) == node.node_pool())
                .unwrap()
                .clone();
            Action {
                node,
                pool,
                method: Method::Drift,
                chosen: None,
                reason: "AMIDrift".into(),
                command: Vec::new(),
            }
        })
        .collect();
    (m, actions)
}

/// The drift snapshot of the cluster's nodes, their instances as the cloud has them.
fn snapshot_of(world: &World, m: &Manifests) -> crate::drift::DriftSnapshot {
    let instances = world.cloud.instances.borrow();
    crate::drift::DriftSnapshot {
        nodes: m
            .nodes
            .iter()
            .map(|n| crate::drift::ManagedNode {
                node: n.clone(),
                node_claim: None,
                instance: instances
                    .iter()
                    .find(|i| Some(i.id.as_str()) == n.instance_id())
                    .cloned(),
            })
            .collect(),
        ..crate::drift::DriftSnapshot::default()
    }
}

/// What a run reported and returned.
struct Run {
    outcomes: Vec<NodeOutcome>,
    /// With the (fake) time each was reported at.
    events: Vec<(Duration, Event)>,
}

impl Run {
    fn outcome(&self, node: &str) -> &NodeOutcome {
        self.outcomes.iter().find(|o| o.node == node).unwrap()
    }

    /// The steps of `node`, in order.
    fn steps(&self, node: &str) -> Vec<NodeStep> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Node { node: n, step } if n == node => Some(step.clone()),
                _ => None,
            })
            .collect()
    }

    /// When `node` reported `step` first.
    fn when(&self, node: &str, step: impl Fn(&NodeStep) -> bool) -> Duration {
        self.events
            .iter()
            .find_map(|(t, e)| match e {
                Event::Node { node: n, step: s } if n == node && step(s) => Some(*t),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{node} never reached the step: {:?}", self.events))
    }

    fn launches(&self) -> Vec<&provisioning::Event> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Launch(l) => Some(l),
                _ => None,
            })
            .collect()
    }
}

/// Previews and replaces `names` with `settings`.
fn replace(world: &World, names: &[String], settings: &Settings) -> Run {
    let (m, actions) = actions(world, names);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, settings).unwrap();
    let log: Rc<RefCell<Vec<(Duration, Event)>>> = Rc::default();
    let (keep, clock) = (log.clone(), world.clock.clone());
    let mut sink = move |e| keep.borrow_mut().push((clock.monotonic(), e));
    let outcomes = replace_pipeline::run(&mut live, preview, settings, &mut sink).unwrap();
    let events = log.borrow().clone();
    Run { outcomes, events }
}

/// `node` replaced by a run that resumed it adopting the replacement its record names: one
/// fleet launched in all, never a second.
fn resumed_by_adoption(world: &World, run: &Run, node: &str) {
    assert_eq!(run.outcome(node).status, Status::Replaced);
    assert_eq!(
        run.steps(node)[0],
        NodeStep::Resuming(Resume::Adopting(Step::Launched))
    );
    assert_eq!(
        calls(world, "EC2.CreateFleet"),
        1,
        "adopted, not launched again"
    );
}

fn calls(world: &World, operation: &str) -> u64 {
    world.cloud.call_counts().get(operation)
}

fn node_json(world: &World, name: &str) -> Option<Value> {
    world.cluster.get("v1", "Node", None, name)
}

/// The record on the node, if any.
fn record_of(world: &World, name: &str) -> Option<Record> {
    node_json(world, name)?["metadata"]["annotations"][REPLACEMENT]
        .as_str()
        .and_then(Record::parse)
}

/// The instance state of `id`.
fn instance_state(world: &World, id: &str) -> String {
    world
        .cloud
        .instances
        .borrow()
        .iter()
        .find(|i| i.id == id)
        .map(|i| i.state.clone())
        .unwrap_or_default()
}

fn instance_of(name: &str) -> String {
    format!(
        "i-{}",
        name.trim_start_matches("ip-")
            .trim_end_matches(".ec2.internal")
    )
}

/// The nodes of `names` still there and in replacement (a record on them), and still there.
fn in_flight(world: &World, names: &[String]) -> (usize, usize) {
    let present: Vec<Value> = names.iter().filter_map(|n| node_json(world, n)).collect();
    let recorded = present
        .iter()
        .filter(|n| n["metadata"]["annotations"][REPLACEMENT].is_string())
        .count();
    (recorded, present.len())
}

/// Watches how many of `names` are in replacement at each tick: `(in replacement, left)`.
fn observe(world: &World, names: &[String]) -> Rc<RefCell<Vec<(usize, usize)>>> {
    let seen: Rc<RefCell<Vec<(usize, usize)>>> = Rc::default();
    let (keep, observer, names) = (seen.clone(), world_handle(world), names.to_vec());
    world
        .clock
        .on_tick(move |_| keep.borrow_mut().push(in_flight(&observer, &names)));
    seen
}

/// A world sharing `world`'s cluster, cloud and clock (for ticks).
fn world_handle(world: &World) -> World {
    World {
        cluster: world.cluster.clone(),
        cloud: world.cloud.clone(),
        clock: world.clock.clone(),
        catalog: world.catalog.clone(),
    }
}

/// Whether the Node `name` is there.
fn present(cluster: &FakeCluster, name: &str) -> bool {
    cluster.get("v1", "Node", None, name).is_some()
}

/// Whether the Node `name` is there and cordoned.
fn cordoned(cluster: &FakeCluster, name: &str) -> bool {
    cluster
        .get("v1", "Node", None, name)
        .is_some_and(|n| n["spec"]["unschedulable"] == true)
}

/// The evictions asked for.
fn evictions(world: &World) -> usize {
    world
        .cluster
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/eviction"))
        .count()
}

/// The next `times` evictions asked for are answered `status` with `message` instead.
fn evictions_answer(world: &World, status: u16, message: &str, times: u32) {
    world.cluster.fail(crate::k8s::fake::Fault {
        method: Some(crate::k8s::Method::Post),
        path: "/eviction".into(),
        times,
        answer: crate::k8s::fake::FaultAnswer::Status(status, message.into()),
    });
}

/// A PodDisruptionBudget `name` over the pods labelled `app`, allowing `allowed` disruptions.
fn pdb(name: &str, app: &str, max_unavailable: u32, allowed: i64) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    })
}
