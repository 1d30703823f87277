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
                evicted: drain.evicted().len(),
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
        let answer = match ops::evict(cluster, namespace, name, uid) {
            Ok(ops::Eviction::Evicted) => Eviction::Evicted,
            Ok(ops::Eviction::Gone) => Eviction::Gone,
            Ok(ops::Eviction::Blocked(message)) => Eviction::Refused(message),
            // The pod's namespace is being deleted: its pods go with it (the next pass finds it
            // terminating and waits), so the 403 is retried, not the run's end — `core
            // v1.14.1: terminator/eviction.go Reconcile` requeues every answer but 404/409, and
            // `kubectl drain` retries this cause (docs/conventions.md §2.3). Before s29 it ended
            // the run like a missing permission.
            Ok(ops::Eviction::NamespaceTerminating(message)) => Eviction::Refused(message),
            // A 5xx — the server's "more than one PodDisruptionBudget" (500), a webhook or
            // etcd failing for a moment — is retried with the drain's backoff like a 429, and
            // named if the drain times out: `core v1.14.1: pkg/controllers/node/termination/
            // terminator/eviction.go Reconcile` requeues every answer but 404/409 (the
            // multiple-PDB 500 as a PDB refusal, `terminator/suite_test.go` "should return a
            // NodeDrainError event when two PDBs refer to the same pod"). Before s17 a 500
            // ended the whole run. A 4xx (403: a missing permission) still ends it.
            Err(e) if e.status().is_some_and(|s| s >= 500) => Eviction::Refused(match &e {
                crate::k8s::ClusterError::Api { message, .. } if !message.is_empty() => {
                    message.clone()
                }
                other => other.to_string(),
            }),
            Err(e) => return Err(e.into()),
        };
        let new_refusal = drain.answered(key, &answer);
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
