//! `--watch`: keeps provisioning until Ctrl-C. Pending pods open Karpenter's batching window
//! (docs/karpenter.md §6.1: it closes after 1 s without new pods, or 10 s after it opened); the batch
//! is planned and launched for; nodes launched register and are labelled; nodes that stay empty
//! are removed ([`super::empty`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Event, Launch, Selection};
use crate::api::core;
use crate::cloud::types::Compute;
use crate::error::{CommandError, Exit};
use crate::k8s::{ops, Cluster};
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::Sink;

/// The batching window closes after this long without new pods…
pub const BATCH_IDLE: Duration = Duration::from_secs(1);
/// … or this long after it opened.
pub const BATCH_MAX: Duration = Duration::from_secs(10);
/// How often the open window looks for new pods.
const BATCH_POLL: Duration = Duration::from_millis(250);
/// A cheap LIST of unbound pods this often: a pending pod opens the batch window within that
/// (docs/performance.md B5: pending pod → CreateFleet ≤ 1.5 s with the 1 s idle window).
const IDLE_POLL: Duration = Duration::from_millis(200);
/// How often new nodes are labelled and empty nodes looked for.
const NODE_CHECK: Duration = Duration::from_secs(2);
/// How often static pools are scaled down to their replicas (a plan: a cluster read and an
/// EC2 DescribeInstances).
const SCALE_DOWN_CHECK: Duration = Duration::from_secs(10);

/// What the watch carries from one pass to the next.
#[derive(Default)]
struct WatchState {
    last_node_check: Option<Duration>,
    /// Launches whose Nodes have not registered yet (to label them when they do).
    awaiting: Vec<Launch>,
    /// Why each empty node whose time is up stayed at the last check.
    holds: super::empty::Holds,
    last_scale_down: Option<Duration>,
    /// When the CapacityBuffers were last planned without a pending pod.
    last_buffer_check: Option<Duration>,
    /// The nodes the last plan placed CapacityBuffer virtual pods on (`buffers.go`
    /// `bufferPodCountsFromResults`): emptiness keeps them.
    buffer_nodes: BTreeSet<String>,
    /// The existing nodes plans placed pending pods on: node → (a pod, nominated until this
    /// monotonic time). Emptiness keeps them meanwhile.
    nominated: BTreeMap<String, (String, Duration)>,
}

/// How long a node a plan placed a pending pod on stays nominated: Karpenter's
/// `nominationWindow`, max(2 × `BATCH_MAX_DURATION`, 10 s) (core v1.14.1
/// `state/statenode.go`), renewed by every plan that places a pod there again.
const NOMINATION: Duration = Duration::from_secs(2 * BATCH_MAX.as_secs());

/// A caveat about the cluster (a class selecting reservations, a pool left out) holds for every
/// batch: a watch tells each warning once, not once per batch.
struct WarnOnce<'e> {
    inner: &'e mut dyn Sink<Event>,
    told: BTreeSet<String>,
}

impl Sink<Event> for WarnOnce<'_> {
    fn emit(&mut self, event: Event) {
        match &event {
            Event::Warning(w) if !self.told.insert(w.clone()) => {}
            _ => self.inner.emit(event),
        }
    }
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Watches until the clock says stop (Ctrl-C): the step in flight finishes, nothing new
    /// starts. Everything done so far is recorded on the cluster and in EC2. A pass that fails
    /// (an API or AWS error) is told and watched past, as `drift replace --watch` does
    /// (`usecases::replace::watch`): the next pass reads the cluster again; the last such error
    /// is the result once stopped. Bad input, refusals and a closed stdout end the watch.
    pub fn watch(
        &mut self,
        selection: &Selection,
        events: &mut dyn Sink<Event>,
    ) -> Result<(), CommandError> {
        let mut state = WatchState::default();
        let mut failed: Option<CommandError> = None;
        let events = &mut WarnOnce {
            inner: events,
            told: BTreeSet::new(),
        };
        while !self.clock.stop_requested() {
            let pause = match self.watch_pass(selection, &mut state, events) {
                Ok(()) => IDLE_POLL,
                Err(e) if matches!(e.exit, Exit::Input | Exit::Refused | Exit::OutputClosed) => {
                    return Err(e)
                }
                Err(e) => {
                    let hint = e
                        .hint
                        .as_deref()
                        .map(|h| format!("; {h}"))
                        .unwrap_or_default();
                    // Told every time: each is a new failure.
                    events
                        .inner
                        .emit(Event::Warning(format!("{e} (still watching{hint})")));
                    failed = Some(e);
                    NODE_CHECK
                }
            };
            if !self.clock.sleep(pause) {
                break;
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// One look: pending pods batched, planned and launched for; every [`NODE_CHECK`], new
    /// nodes labelled and empty ones removed.
    fn watch_pass(
        &mut self,
        selection: &Selection,
        state: &mut WatchState,
        events: &mut dyn Sink<Event>,
    ) -> Result<(), CommandError> {
        let pending = pending_keys(self.cluster)?;
        // Behind the CapacityBuffer gate the buffers are planned for without a pending pod too
        // (Karpenter's buffer controller triggers the provisioner), every [`SCALE_DOWN_CHECK`].
        let now = self.clock.monotonic();
        let buffers_due = selection.capacity_buffer_gate == Some(true)
            && state
                .last_buffer_check
                .is_none_or(|last| now - last >= SCALE_DOWN_CHECK);
        if !pending.is_empty() || buffers_due {
            if !pending.is_empty() {
                self.batch(pending)?;
            }
            if self.clock.stop_requested() {
                return Ok(());
            }
            state.last_buffer_check = Some(self.clock.monotonic());
            let round = self.plan_pending(selection, events)?;
            state.buffer_nodes = round.as_ref().map(buffer_nodes).unwrap_or_default();
            if let Some(round) = &round {
                let until = self.clock.monotonic() + NOMINATION;
                for placed in &round.plan.existing_nodes {
                    if let Some(pod) = placed.pods.first() {
                        state
                            .nominated
                            .insert(placed.node.clone(), (pod.clone(), until));
                    }
                }
            }
            if let Some(round) = round {
                if !round.plan.node_claims.is_empty() {
                    // One batch launches the first round; the pods the NodePool limits left
                    // to later rounds stay pending and make the next batch, as in Karpenter.
                    let first = super::launch::first_round(&round.plan);
                    let launches = self.launch_all(&round.classes, &first, &round.input, events)?;
                    events.emit(Event::Batch {
                        // The pending pods this plan was made for (read after the window closed:
                        // pods bound meanwhile are not counted); virtual pods are told per buffer.
                        pods: round
                            .input
                            .pods
                            .iter()
                            .filter(|p| p.buffer.is_none())
                            .count(),
                        launched: launches.launched.len(),
                        failed: launches.failed.len(),
                        unschedulable: round.plan.unschedulable.len(),
                    });
                    state.awaiting.extend(launches.launched);
                }
                for u in round.plan.unschedulable {
                    events.emit(Event::StaysPending {
                        pod: u.pod,
                        reason: u.reason,
                    });
                }
            }
        }
        let now = self.clock.monotonic();
        if state
            .last_node_check
            .is_none_or(|last| now - last >= NODE_CHECK)
        {
            self.label_new_nodes(&mut state.awaiting)?;
            state.nominated.retain(|_, (_, until)| *until > now);
            let planned: BTreeMap<String, String> = state
                .nominated
                .iter()
                .map(|(node, (pod, _))| (node.clone(), pod.clone()))
                .collect();
            self.remove_empty_nodes(&mut state.holds, &state.buffer_nodes, &planned, events)?;
            state.last_node_check = Some(self.clock.monotonic());
        }
        if state
            .last_scale_down
            .is_none_or(|last| now - last >= SCALE_DOWN_CHECK)
        {
            self.scale_down(selection, None, events)?;
            state.last_scale_down = Some(self.clock.monotonic());
        }
        Ok(())
    }

    /// Karpenter's batching window, opened by `pending`: waits for the burst to settle (1 s
    /// without a change, 10 s at most, or Ctrl-C).
    fn batch(&self, pending: BTreeSet<String>) -> Result<(), CommandError> {
        let opened = self.clock.monotonic();
        let mut seen = pending;
        let mut changed = opened;
        loop {
            let now = self.clock.monotonic();
            if now - opened >= BATCH_MAX || now - changed >= BATCH_IDLE {
                break;
            }
            if !self.clock.sleep(BATCH_POLL) {
                break;
            }
            let now = pending_keys(self.cluster)?;
            if now != seen {
                seen = now;
                changed = self.clock.monotonic();
            }
        }
        Ok(())
    }

    /// Labels the Nodes of `awaiting` launches registered once Ready and initialized once they
    /// are (see [`Live::sync_registered`]), and drops the initialized ones from the list.
    fn label_new_nodes(&self, awaiting: &mut Vec<Launch>) -> Result<(), CommandError> {
        if awaiting.is_empty() {
            return Ok(());
        }
        // Dropped once labelled initialized: a label that failed is tried again at the next
        // check.
        let done = self.initialized_nodes(awaiting)?;
        awaiting.retain(|l| !done.contains_key(&l.instance_id));
        Ok(())
    }
}

/// The existing nodes a plan placed CapacityBuffer virtual pods on.
fn buffer_nodes(round: &super::plan::Round) -> BTreeSet<String> {
    let buffers = round.plan.buffers.iter();
    let placed = buffers.flat_map(|b| b.existing_nodes.iter());
    placed.map(|e| e.node.clone()).collect()
}

/// The keys of pods the scheduler marked unschedulable (cheap: unbound pods only).
fn pending_keys(c: &dyn Cluster) -> Result<BTreeSet<String>, CommandError> {
    let mut keys = BTreeSet::new();
    ops::list(
        c,
        "/api/v1/pods",
        &ops::ListQuery {
            field_selector: Some("spec.nodeName="),
            ..Default::default()
        },
        |p: core::Pod| {
            let status = p.status.unwrap_or_default();
            let unschedulable = status.conditions.iter().flatten().any(|c| {
                c.type_.as_deref() == Some("PodScheduled")
                    && c.status.as_deref() == Some("False")
                    && c.reason.as_deref() == Some("Unschedulable")
            });
            let owned_by_daemonset = p.metadata.owner_references.iter().flatten().any(|o| {
                // `IsOwnedByDaemonSet` compares the apiVersion too (`Owner::is`).
                o.api_version.as_deref() == Some("apps/v1")
                    && o.kind.as_deref() == Some("DaemonSet")
                    && o.controller == Some(true)
            });
            if unschedulable
                && !owned_by_daemonset
                && status.nominated_node_name.is_none_or(|n| n.is_empty())
            {
                keys.insert(format!(
                    "{}/{}",
                    p.metadata.namespace.unwrap_or_default(),
                    p.metadata.name.unwrap_or_default()
                ));
            }
        },
    )?;
    Ok(keys)
}
