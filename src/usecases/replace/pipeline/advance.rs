//! Driving a started node through its steps: launch its replacement, wait until it is Ready,
//! drain (PDB-respecting), terminate, delete — or roll back.

use std::collections::{BTreeMap, BTreeSet};

use super::{replacement, roll_back, terminate, Job, Launchable, Pipeline};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::replace::machine::{
    adopted_readiness, after_launch, blocking_attachments, detach_next, launching_next, readiness,
    DetachNext, Detaching, Drain, Ending, LaunchingNext, Readiness, Replacement, State,
    DETACH_POLL,
};
use crate::disruption::replace::{Detail, Record, Status, Step};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::labels::INSTANCE_TYPE;
use crate::model::node::Node;
use crate::scheduling::Plan;
use crate::usecases::clock::Clock;
use crate::usecases::provisioning::{self, Launches};
use crate::usecases::replace::drain::{At, Passed};
use crate::usecases::replace::{drain, steps, Event, NodeStep};

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Pipeline<'_, '_, C, P, K> {
    /// Launches a marked node's replacements; it waits for them, or is rolled back.
    pub(super) fn launch(
        &mut self,
        snapshot: &Manifests,
        mut job: Job,
    ) -> Result<(), CommandError> {
        let (cluster, cloud) = (self.live.cluster, self.live.cloud);
        let Launchable { claims, input } = job.launch.take().unwrap_or(Launchable {
            claims: Vec::new(),
            input: None,
        });
        let Launches { launched, failed } = match &input {
            Some(input) if !claims.is_empty() => {
                let plan = Plan {
                    node_claims: claims,
                    ..Plan::default()
                };
                let events = &mut *self.events;
                self.live.launch_all(
                    &snapshot.node_classes,
                    &plan,
                    input,
                    &mut |e: provisioning::Event| events.emit(Event::Launch(e)),
                )?
            }
            _ => Launches::default(),
        };
        let instances: Vec<String> = launched.iter().map(|l| l.instance_id.clone()).collect();
        self.outcomes[job.outcome].replacements = launched
            .iter()
            .map(|l| format!("{} ({})", l.node_claim, l.instance_id))
            .collect();
        // An instance adopted by NodeClaim name must be this replacement's own (a run killed
        // mid-launch may have seen it register): never the node being replaced, never a node
        // that is itself leaving.
        let serving: BTreeMap<&str, &Node> = snapshot
            .nodes
            .iter()
            .filter_map(|n| n.instance_id().map(|id| (id, n)))
            .collect();
        let collides = instances.iter().any(|id| {
            serving
                .get(id.as_str())
                .is_some_and(|n| n.name == job.node.name || Record::of(n).is_some() || n.deleting)
        });
        if let Err(why) = after_launch(failed.first().map(|f| f.message()), collides) {
            // The record still says `marked`: if the rollback is cut short, a re-run plans and
            // launches again rather than draining onto missing capacity. Instances that back a
            // Node are never terminated here.
            let launched_here: Vec<String> = instances
                .into_iter()
                .filter(|id| !serving.contains_key(id.as_str()))
                .collect();
            let events = &mut *self.events;
            roll_back(
                cluster,
                cloud,
                events,
                &job.node,
                &job.pool,
                &job.record,
                &launched_here,
            )?;
            let o = &mut self.outcomes[job.outcome];
            o.status = Status::RolledBack;
            o.detail = why;
            return Ok(());
        }
        job.record.step = Step::Launched;
        job.record.instances = instances;
        steps::annotate(cluster, &job.node.name, &job.record)?;
        job.started = self.monotonic();
        self.wait_for(&mut job, launched.iter().map(replacement).collect());
        self.active.push(job);
        Ok(())
    }

    /// The node waits for `replacements` to be Ready and initialized ([`readiness`]).
    pub(super) fn wait_for(&self, job: &mut Job, replacements: Vec<Replacement>) {
        job.state = State::Launching {
            replacements,
            ready: BTreeSet::new(),
            since: self.monotonic(),
        };
    }

    /// Advances node `i` by the step that is due.
    pub(super) fn advance(
        &mut self,
        i: usize,
        nodes: &[Node],
        pdbs: &mut Option<steps::Pdbs>,
    ) -> Result<(), CommandError> {
        let (cluster, cloud) = (self.live.cluster, self.live.cloud);
        let mono = self.monotonic();
        let job = &mut self.active[i];
        let next = match &mut job.state {
            State::Launching {
                replacements,
                ready,
                since,
            } => {
                let mut seen = Vec::new();
                for r in replacements.iter() {
                    let node = nodes
                        .iter()
                        .find(|n| n.instance_id() == Some(r.instance_id.as_str()));
                    let mut state = if r.node_labels.is_empty() {
                        adopted_readiness(node, r)
                    } else {
                        readiness(node, r)
                    };
                    // Labelled as Karpenter's controllers would: registered once Ready, with
                    // the launched type's labels, or (adopted from a record) the catalog's for
                    // its type, once its Node names it; initialized once `Readiness::Ready`.
                    let type_known = !r.node_labels.is_empty()
                        || node.is_some_and(|n| n.labels.contains_key(INSTANCE_TYPE));
                    if let (Some(n), true) = (node, type_known) {
                        let labels = || {
                            if r.node_labels.is_empty() {
                                n.labels
                                    .get(INSTANCE_TYPE)
                                    .map(|t| self.live.type_labels(t))
                                    .unwrap_or_default()
                            } else {
                                r.node_labels.clone()
                            }
                        };
                        let taints: Vec<_> = r.taints.iter().chain(&r.startup_taints).collect();
                        let tainted = self.live.sync_registered(
                            n,
                            labels,
                            &r.node_annotations,
                            &taints,
                            state == Readiness::Ready,
                        )?;
                        if tainted && state == Readiness::Ready {
                            // Its startup taints were just put on: initializing again.
                            state = Readiness::Initializing;
                        }
                    }
                    if let (Readiness::Ready, Some(n)) = (state, node) {
                        if ready.insert(n.name.clone()) {
                            self.events.emit(Event::node(
                                &job.node.name,
                                NodeStep::ReplacementReady {
                                    replacement: n.name.clone(),
                                },
                            ));
                        }
                    }
                    seen.push(state);
                }
                let gone: Vec<String> = replacements
                    .iter()
                    .map(|r| &r.instance_id)
                    .filter(|id| self.gone_replacements.contains(*id))
                    .cloned()
                    .collect();
                let waited = mono.saturating_sub(*since);
                match launching_next(&seen, &gone, waited, self.settings.ready_timeout) {
                    LaunchingNext::Wait => None,
                    LaunchingNext::Drain => {
                        steps::exclude_from_load_balancers(cluster, &job.node)?;
                        Some(State::Draining(Drain::new(mono)))
                    }
                    LaunchingNext::RollBack(why) => {
                        // A command's replacement is its first node's to terminate.
                        let instances: Vec<String> = match job.follows {
                            Some(_) => Vec::new(),
                            None => replacements.iter().map(|r| r.instance_id.clone()).collect(),
                        };
                        let events = &mut *self.events;
                        roll_back(
                            cluster,
                            cloud,
                            events,
                            &job.node,
                            &job.pool,
                            &job.record,
                            &instances,
                        )?;
                        Some(State::Done(Ending::RolledBack(why)))
                    }
                }
            }
            State::Draining(progress) => {
                if !progress.due(mono) {
                    return Ok(());
                }
                if pdbs.is_none() {
                    *pdbs = Some(steps::pdbs(cluster)?);
                }
                let options = steps::drain_options(&job.pool, self.settings.force);
                let at = At {
                    unix: self.live.clock.now(),
                    monotonic: mono,
                };
                let passed = drain::pass(
                    cluster,
                    &mut *self.events,
                    &job.node,
                    progress,
                    pdbs.as_ref().map_or(&[][..], |p| &p.drain),
                    &options,
                    at,
                    self.settings.drain_timeout,
                )?;
                match passed {
                    Passed::Draining => None,
                    Passed::Drained => {
                        self.outcomes[job.outcome].evicted = progress.evicted().to_vec();
                        let grace = job.claim.as_ref().and_then(|c| c.termination_grace_period);
                        Some(State::Detaching(Detaching::new(
                            mono,
                            grace.map(|g| progress.started() + g),
                        )))
                    }
                    Passed::TimedOut(holding) => {
                        Some(State::Done(Ending::Failed(Detail::DrainTimedOut {
                            node: job.node.name.clone(),
                            after: self.settings.drain_timeout,
                            holding,
                        })))
                    }
                }
            }
            State::Detaching(wait) => {
                if mono < wait.next_look {
                    return Ok(());
                }
                wait.next_look = mono + DETACH_POLL;
                let blocking = match steps::volume_attachments(cluster, &job.node.name) {
                    Err(e) if matches!(e.status(), Some(403 | 404)) => {
                        if !self.attachments_unreadable {
                            self.attachments_unreadable = true;
                            self.events.emit(Event::Warning(format!(
                                "cannot list volumeattachments.storage.k8s.io ({e}): instances terminate without waiting for their volumes to detach (docs/security.md)"
                            )));
                        }
                        Vec::new()
                    }
                    Err(e) => return Err(e.into()),
                    Ok(attachments) if attachments.is_empty() => Vec::new(),
                    Ok(attachments) => {
                        let (pods, deleting) = steps::pods_on(cluster, &job.node.name)?;
                        let options = steps::drain_options(&job.pool, self.settings.force);
                        let now = self.live.clock.now();
                        let held = steps::held_volumes(cluster, &pods, &deleting, now, &options)?;
                        blocking_attachments(&attachments, &held)
                    }
                };
                match detach_next(wait, blocking, mono, self.settings.drain_timeout) {
                    DetachNext::Terminate => Some(State::Terminating),
                    DetachNext::Wait(blocking) => {
                        if blocking != wait.reported {
                            self.events.emit(Event::node(
                                &job.node.name,
                                NodeStep::AwaitingDetachment {
                                    attachments: blocking.clone(),
                                },
                            ));
                            wait.reported = blocking;
                        }
                        None
                    }
                    DetachNext::GraceElapsed(blocking) => {
                        self.events.emit(Event::Warning(format!(
                            "{}: its NodeClaim's terminationGracePeriod has run out with volume attachment(s) {} still there: its instance terminates regardless (as Karpenter's does)",
                            job.node.name,
                            blocking.join(", ")
                        )));
                        Some(State::Terminating)
                    }
                    DetachNext::TimedOut(attachments) => {
                        Some(State::Done(Ending::Failed(Detail::VolumesStillAttached {
                            node: job.node.name.clone(),
                            after: self.settings.drain_timeout,
                            attachments,
                        })))
                    }
                }
            }
            State::Planned | State::Marked | State::Terminating | State::Done(_) => None,
        };
        let was_draining = matches!(job.state, State::Draining(_));
        if let Some(next) = next {
            job.state = next;
        }
        if was_draining && matches!(job.state, State::Detaching(_)) {
            job.record.step = Step::Drained;
            steps::annotate(cluster, &job.node.name, &job.record)?;
        }
        if job.state == State::Terminating {
            terminate(cluster, cloud, &mut *self.events, job)?;
        }
        Ok(())
    }
}
