//! One node's way through the pipeline, as a state machine: [`State`] is where it stands, and
//! each function here says what comes next given what the cluster shows now — where a selected
//! node enters ([`entry`], from its record), whether its launches hold ([`after_launch`]),
//! whether its replacements are Ready ([`launching_next`]), how its drain goes ([`Drain`]).
//! Time is the clock's monotonic reading ([`Duration`] since the run began), so the use case's
//! fake clock drives every timeout in a unit test.
//!
//! ```text
//!            mark          launch            Ready            drained
//! Planned ─────────▶ Marked ───────▶ Launching ──────▶ Draining ───────▶ Detaching ──▶ Terminating ──▶ Done(Replaced)
//!                              │               │ timeout          │ timeout      │ timeout
//!                              ▼               ▼                  ▼              ▼
//!                      Done(RolledBack)  Done(RolledBack)   Done(Failed: cordoned, resumable)
//! ```
//!
//! `Detaching` waits for the node's VolumeAttachments to go before its instance terminates
//! ([`detach_next`]).
//!
//! A re-run enters at the step its record names ([`Entry`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Detail, Record, Status, Step};
use crate::disruption::drain::{Blocker, DrainPlan};
use crate::model::node::Node;
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::model::taints::Taint;

/// Where a node in replacement stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Its replacement is planned (the NodeClaims to launch, if any); nothing changed yet.
    Planned,
    /// Tainted, cordoned and recorded `marked`: its replacements launch next.
    Marked,
    /// Its replacements are launched and recorded: waiting (since `since`) for their Nodes to
    /// be Ready and initialized; `ready` are those seen so (and labelled).
    Launching {
        /// The replacements.
        replacements: Vec<Replacement>,
        /// Node names seen Ready.
        ready: BTreeSet<String>,
        /// When the wait began.
        since: Duration,
    },
    /// Its replacements serve: evicting, one pass at a time.
    Draining(Drain),
    /// Drained and recorded so: waiting for its volumes to detach ([`detach_next`]).
    Detaching(Detaching),
    /// Drained and recorded so: its instance is terminated, then its Node deleted.
    Terminating,
    /// Finished.
    Done(Ending),
}

/// A replacement launched, or adopted from a record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replacement {
    /// Its NodeClaim name.
    pub node_claim: String,
    /// Its NodePool (whose startup taints it must lose).
    pub node_pool: String,
    /// Its instance.
    pub instance_id: String,
    /// Its type's labels, written on its Node once Ready (as Karpenter copies them from the
    /// NodeClaim); empty for one adopted from a record, whose labels come from the catalog.
    pub node_labels: BTreeMap<String, String>,
    /// Its NodeClaim's annotations (the pool's template annotations), written on its Node with
    /// the labels, as Karpenter's registration copies them.
    pub node_annotations: BTreeMap<String, String>,
    /// Its NodeClaim's startup taints (its pool's), gone once it is initialized.
    pub startup_taints: Vec<Taint>,
    /// Its NodeClaim's taints (its pool's), put on its Node at registration with the startup
    /// taints when the Node lacks them and does not say it registers them itself
    /// (`karpenter.sh/do-not-sync-taints`).
    pub taints: Vec<Taint>,
    /// Its NodeClaim's resource requests, allocatable once it is initialized (empty for one
    /// adopted from a record: the plan is not at hand).
    pub requests: Resources,
}

/// How a node's replacement ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Replaced and gone.
    Replaced,
    /// Undone (the node serves again), and why.
    RolledBack(Detail),
    /// Stopped midway (cordoned, resumable), and why.
    Failed(Detail),
}

impl Ending {
    /// The report's status.
    pub fn status(&self) -> Status {
        match self {
            Ending::Replaced => Status::Replaced,
            Ending::RolledBack(_) => Status::RolledBack,
            Ending::Failed(_) => Status::Failed,
        }
    }
}

/// Where a selected node enters the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Planned: a fresh node, or one a killed run marked (or launched for only in part) —
    /// planned again under its recorded NodeClaim names, which adopts what was launched.
    Plan,
    /// Every replacement launched before: the recorded instances are adopted, never launched
    /// again; their readiness is awaited.
    Adopt,
    /// Drained before but uncordoned since: cordoned and drained again.
    Redrain,
    /// Drained before and still cordoned (or its kubelet gone with its instance): only the
    /// end is left.
    Finish,
}

/// Where the node enters, from its `record` and how it looks now.
pub fn entry(record: Option<&Record>, node: &Node) -> Entry {
    match record {
        Some(r) if r.step == Step::Drained && (node.unschedulable || !node.ready) => Entry::Finish,
        Some(r) if r.step == Step::Drained => Entry::Redrain,
        Some(r) if r.launched_all() => Entry::Adopt,
        _ => Entry::Plan,
    }
}

/// After the launches: `Err` rolls the node back — a NodeClaim that failed (`first_failure`,
/// its message), or an instance adopted by NodeClaim name that backs a node being replaced or
/// leaving (`collides`: never this replacement's own).
pub fn after_launch(first_failure: Option<String>, collides: bool) -> Result<(), Detail> {
    match (first_failure, collides) {
        (Some(message), _) => Err(Detail::LaunchFailed(message)),
        (None, true) => Err(Detail::InstanceCollision),
        (None, false) => Ok(()),
    }
}

/// How a replacement's Node looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Not registered (yet), or NotReady.
    Joining,
    /// Ready, but a startup taint of its pool is still on it (its agent has not run).
    Initializing,
    /// Ready and initialized: pods may move onto it.
    Ready,
}

/// [`readiness`] of a replacement adopted from a record: its labels come from its Node's
/// instance-type label, so until that is there it is still initializing (labelled earlier, it
/// would stay without its type's labels for good).
pub fn adopted_readiness(node: Option<&Node>, r: &Replacement) -> Readiness {
    match readiness(node, r) {
        Readiness::Ready
            if node
                .is_some_and(|n| !n.labels.contains_key(crate::model::labels::INSTANCE_TYPE)) =>
        {
            Readiness::Initializing
        }
        other => other,
    }
}

/// The readiness of replacement `r` whose Node is `node` (if registered): Ready, then
/// initialized as Karpenter's initialization controller decides it ([`Node::initialization`]:
/// its startup taints and the known ephemeral taints gone, the resources it requested
/// allocatable) — Karpenter waits for that before it drains (docs/karpenter.md §5.3).
pub fn readiness(node: Option<&Node>, r: &Replacement) -> Readiness {
    match node {
        Some(n) if n.ready => match n.initialization(&r.startup_taints, &r.requests) {
            Ok(()) => Readiness::Ready,
            Err(_) => Readiness::Initializing,
        },
        _ => Readiness::Joining,
    }
}

/// What a launching node does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchingNext {
    /// Its replacements are not all Ready: look again.
    Wait,
    /// All Ready: drain.
    Drain,
    /// Not all Ready after the ready timeout, or one gone: roll back.
    RollBack(Detail),
}

/// Decides from the replacements' readiness, the instances of those not Ready that are gone
/// (`gone`: shutting down or terminated — they never will be), and how long they have been
/// awaited. A replacement gone fails the node at once, as Karpenter fails a command whose
/// replacement NodeClaim was deleted (`core v1.14.1: pkg/controllers/disruption/queue.go
/// waitOrTerminate`, "replacement was deleted" is an `UnrecoverableError`).
pub fn launching_next(
    replacements: &[Readiness],
    gone: &[String],
    waited: Duration,
    ready_timeout: Duration,
) -> LaunchingNext {
    if !gone.is_empty() {
        LaunchingNext::RollBack(Detail::ReplacementGone(gone.to_vec()))
    } else if replacements.iter().all(|r| *r == Readiness::Ready) {
        LaunchingNext::Drain
    } else if waited >= ready_timeout {
        LaunchingNext::RollBack(Detail::NotReady {
            after: ready_timeout,
        })
    } else {
        LaunchingNext::Wait
    }
}

/// The first pass after an eviction went through comes this soon.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between passes while a PDB refuses (Karpenter's queue: 100 ms → 10 s).
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Passes while pods terminate (their grace period) come this often.
pub const TERMINATING_POLL: Duration = Duration::from_secs(1);

/// A drain in progress: evictions go out one pass at a time, tier by tier (docs/karpenter.md
/// §5.5), with a backoff between passes, so that one loop drains many nodes at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drain {
    started: Duration,
    /// The pods evicted so far (`namespace/name`, in eviction order).
    evicted: Vec<String>,
    backoff: Duration,
    next_pass: Duration,
    last_refusal: String,
}

/// What one pass does, from the node's pods and drain plan now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// The next tier's pods (`namespace/name`): evicted now.
    pub evict: Vec<String>,
    /// Pods terminating (their grace period runs).
    pub terminating: usize,
    /// A pod with an active do-not-disrupt is waited for (never evicted).
    pub waits_for_do_not_disrupt: bool,
}

impl Pass {
    /// Nothing left to evict, to wait for or to let terminate: the node is drained.
    pub fn drained(&self) -> bool {
        self.evict.is_empty() && self.terminating == 0 && !self.waits_for_do_not_disrupt
    }
}

/// The answer to one eviction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eviction {
    /// Accepted.
    Evicted,
    /// The pod is gone already.
    Gone,
    /// Refused (429): a PodDisruptionBudget, named in the message.
    Refused(String),
}

/// What still holds a drain that timed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// Named: the PDB of the last refusal, or the blockers of the plan (do-not-disrupt).
    Named(String),
    /// Pods still terminating (or still to evict).
    Terminating(usize),
}

impl Drain {
    /// A drain beginning at `now`; its first pass is due at once.
    pub fn new(now: Duration) -> Drain {
        Drain {
            started: now,
            evicted: Vec::new(),
            backoff: FIRST_BACKOFF,
            next_pass: now,
            last_refusal: String::new(),
        }
    }

    /// Whether the next pass is due at `now`.
    pub fn due(&self, now: Duration) -> bool {
        now >= self.next_pass
    }

    /// When the drain began.
    pub fn started(&self) -> Duration {
        self.started
    }

    /// Pods evicted so far (`namespace/name`): the `evicted[]` of the `ReplacementReport`.
    pub fn evicted(&self) -> &[String] {
        &self.evicted
    }

    /// What this pass does: the node's `pods` and their drain `plan`, read now.
    pub fn pass(plan: &DrainPlan, pods: &[Pod]) -> Pass {
        let terminating = pods
            .iter()
            .filter(|p| p.terminating && !plan.skipped.iter().any(|(k, _)| *k == p.key()))
            .count();
        Pass {
            evict: plan
                .next_tier()
                .map(|(_, pods)| pods.to_vec())
                .unwrap_or_default(),
            terminating,
            waits_for_do_not_disrupt: plan
                .blockers
                .iter()
                .any(|b| matches!(b, Blocker::PodDoNotDisrupt { .. })),
        }
    }

    /// Records the answer to `pod`'s eviction; `true` for a refusal whose message is new
    /// (worth reporting: the same PDB refusing again is not).
    pub fn answered(&mut self, pod: &str, answer: &Eviction) -> bool {
        match answer {
            Eviction::Evicted => {
                self.evicted.push(pod.to_string());
                false
            }
            Eviction::Gone => false,
            Eviction::Refused(message) => {
                let new = *message != self.last_refusal;
                self.last_refusal = message.clone();
                new
            }
        }
    }

    /// Ends a pass whose evictions were answered `answers`: the next pass's time — quick
    /// while pods go, a steady second while they terminate, an exponential backoff while a
    /// PDB refuses or do-not-disrupt is waited for — or, once `timeout` has passed since the
    /// drain began, what still holds it.
    pub fn end_pass(
        &mut self,
        pass: &Pass,
        plan: &DrainPlan,
        answers: &[Eviction],
        now: Duration,
        timeout: Duration,
    ) -> Result<(), Holding> {
        if now.saturating_sub(self.started) >= timeout {
            return Err(if !self.last_refusal.is_empty() {
                Holding::Named(self.last_refusal.clone())
            } else if plan.is_blocked() {
                Holding::Named(plan.explain_blockers())
            } else {
                Holding::Terminating(pass.terminating + pass.evict.len())
            });
        }
        let progressed = answers
            .iter()
            .any(|a| matches!(a, Eviction::Evicted | Eviction::Gone));
        let refused = answers.iter().any(|a| matches!(a, Eviction::Refused(_)));
        self.backoff = if progressed {
            FIRST_BACKOFF
        } else if refused || pass.waits_for_do_not_disrupt {
            (self.backoff * 2).min(MAX_BACKOFF)
        } else {
            TERMINATING_POLL
        };
        self.next_pass = now + self.backoff;
        Ok(())
    }
}

/// The node's VolumeAttachments are looked at this often while they are awaited.
pub const DETACH_POLL: Duration = Duration::from_secs(1);

/// A drained node waiting for its volumes to detach: `core v1.14.1:
/// pkg/controllers/node/termination/controller.go awaitVolumeDetachment` — after the drain and
/// before the instance terminates, so that a StatefulSet pod's volume detaches cleanly (the CSI
/// driver's detach, not EC2's on termination) and attaches on its new node at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detaching {
    /// When the wait began.
    pub since: Duration,
    /// When its NodeClaim's `terminationGracePeriod` runs out (counted from the drain's
    /// beginning), if it has one: the wait ends then and the instance terminates regardless.
    pub grace_ends: Option<Duration>,
    /// When the attachments are looked at next.
    pub next_look: Duration,
    /// The attachments already reported as awaited.
    pub reported: Vec<String>,
}

impl Detaching {
    /// A wait beginning at `now`, bounded by `grace_ends` if any; its first look is at once.
    pub fn new(now: Duration, grace_ends: Option<Duration>) -> Detaching {
        Detaching {
            since: now,
            grace_ends,
            next_look: now,
            reported: Vec::new(),
        }
    }
}

/// A VolumeAttachment of a node: its name and the PersistentVolume it attaches (none for an
/// inline volume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `metadata.name`.
    pub name: String,
    /// `spec.source.persistentVolumeName`.
    pub volume: Option<String>,
}

/// The attachments the instance's termination waits for: those of a PersistentVolume that no
/// pod the drain leaves on the node uses (`held`: the volumes of its mirror, stuck-terminating,
/// disruption-tolerating and DaemonSet pods — they stay attached until the end). An inline
/// volume's attachment never blocks. `core v1.14.1: pkg/controllers/node/termination/
/// controller.go filterVolumeAttachments` (`pod.IsDrainable`; the DaemonSet pods are this
/// tool's addition: its drain leaves them, `kubectl drain --ignore-daemonsets`), `suite_test.go`
/// "should only wait for volume attachments associated with drainable pods".
pub fn blocking_attachments(attachments: &[Attachment], held: &BTreeSet<String>) -> Vec<String> {
    let mut names: Vec<String> = attachments
        .iter()
        .filter(|a| a.volume.as_ref().is_some_and(|v| !held.contains(v)))
        .map(|a| a.name.clone())
        .collect();
    names.sort();
    names
}

/// What a detaching node does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetachNext {
    /// No attachment is left to wait for: terminate.
    Terminate,
    /// These attachments remain: look again.
    Wait(Vec<String>),
    /// Its NodeClaim's `terminationGracePeriod` has run out with these still attached:
    /// terminate regardless (EC2 detaches them with the instance), as Karpenter does.
    GraceElapsed(Vec<String>),
    /// `timeout` has passed with these still attached: stop (cordoned, drained, resumable).
    TimedOut(Vec<String>),
}

/// Decides from the attachments still `blocking` at `now`: `core v1.14.1: node/termination/
/// suite_test.go` "should wait for volume attachments", "should only wait for volume
/// attachments associated with drainable pods", "should wait for volume attachments until the
/// nodeclaim's termination grace period expires". Karpenter without a grace period waits for
/// ever; this tool waits until `timeout` (the drain's `--timeout`) and stops there.
pub fn detach_next(
    wait: &Detaching,
    blocking: Vec<String>,
    now: Duration,
    timeout: Duration,
) -> DetachNext {
    if blocking.is_empty() {
        DetachNext::Terminate
    } else if wait.grace_ends.is_some_and(|end| now >= end) {
        DetachNext::GraceElapsed(blocking)
    } else if now.saturating_sub(wait.since) >= timeout {
        DetachNext::TimedOut(blocking)
    } else {
        DetachNext::Wait(blocking)
    }
}

/// After this many replacements failed in a row no other node starts: the rest of the queue
/// would only fail the same way (a broken image, a missing permission, no capacity).
pub const FAILURES_IN_A_ROW: usize = 3;

/// Replacements that failed in a row (rolled back or failed), reset by one that succeeds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failures {
    in_a_row: usize,
    last: Detail,
}

impl Failures {
    /// Counts a node that ended (others are not counted).
    pub fn count(&mut self, status: Status, detail: &Detail) {
        match status {
            Status::Replaced | Status::Deleted => self.in_a_row = 0,
            Status::RolledBack | Status::Failed => {
                self.in_a_row += 1;
                self.last = detail.clone();
            }
            _ => {}
        }
    }

    /// Whether no other node may start.
    pub fn too_many(&self) -> bool {
        self.in_a_row >= FAILURES_IN_A_ROW
    }

    /// Why the nodes left in the queue did not start, when it is the failures.
    pub fn why(&self) -> Option<Detail> {
        self.too_many().then(|| Detail::AfterFailures {
            in_a_row: self.in_a_row,
            last: Box::new(self.last.clone()),
        })
    }
}
