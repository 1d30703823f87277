//! One drain pass through the cluster: the node's pods read now, planned (`disruption::drain`),
//! the next tier evicted through the Eviction API, and the pass ended by the pure
//! [`Drain`](crate::disruption::replace::machine::Drain) — which paces the next one or says the
//! timeout has passed.

use std::time::Duration;

use super::steps::pods_on;
use super::{Event, NodeStep};
use crate::disruption::drain::{self, DrainOptions, Pdb};
use crate::disruption::replace::machine::{Drain, Eviction, Holding};
use crate::error::CommandError;
use crate::k8s::{ops, Cluster};
use crate::model::node::Node;
use crate::usecases::Sink;

/// How a pass ended.
pub enum Passed {
    /// Pods are still going.
    Draining,
    /// Nothing left to move.
    Drained,
    /// The drain timeout passed, and what still holds the node.
    TimedOut(Holding),
}

/// The moments a pass is taken at: the wall clock (do-not-disrupt durations, stuck pods) and
/// the monotonic one (pacing, timeout).
pub struct At {
    /// Seconds since the epoch.
    pub unix: i64,
    /// Since the run began.
    pub monotonic: Duration,
}

/// One pass over `node`'s pods.
#[allow(clippy::too_many_arguments)]
pub fn pass(
    cluster: &dyn Cluster,
    events: &mut dyn Sink<Event>,
    node: &Node,
    drain: &mut Drain,
    pdbs: &[Pdb],
    options: &DrainOptions,
    at: At,
    timeout: Duration,
) -> Result<Passed, CommandError> {
    let (pods, deleting) = pods_on(cluster, &node.name)?;
    let plan = drain::plan_drain(node, &pods, pdbs, &deleting, at.unix, options);
    let pass = Drain::pass(&plan, &pods);
    if pass.drained() {
        events.emit(Event::node(
            &node.name,
            NodeStep::Drained {
                evicted: drain.evicted(),
            },
        ));
        return Ok(Passed::Drained);
    }
    let mut answers = Vec::new();
    for key in &pass.evict {
        let (namespace, name) = key.split_once('/').unwrap_or(("default", key));
        let uid = pods
            .iter()
            .find(|p| &p.key() == key)
            .map(|p| p.uid.as_str());
        let answer = match ops::evict(cluster, namespace, name, uid)? {
            ops::Eviction::Evicted => Eviction::Evicted,
            ops::Eviction::Gone => Eviction::Gone,
            ops::Eviction::Blocked(message) => Eviction::Refused(message),
        };
        let new_refusal = drain.answered(&answer);
        match &answer {
            Eviction::Evicted => events.emit(Event::node(
                &node.name,
                NodeStep::Evicted { pod: key.clone() },
            )),
            Eviction::Refused(message) if new_refusal => events.emit(Event::node(
                &node.name,
                NodeStep::EvictionRefused {
                    pod: key.clone(),
                    message: message.clone(),
                },
            )),
            _ => {}
        }
        answers.push(answer);
    }
    Ok(
        match drain.end_pass(&pass, &plan, &answers, at.monotonic, timeout) {
            Ok(()) => Passed::Draining,
            Err(holding) => Passed::TimedOut(holding),
        },
    )
}
