//! `drift replace`'s output: the plan and the final table, the `ReplacementReport` document,
//! the questions asked before anything changes, and each node's progress on stderr
//! (`<node>: <step>`, hidden by `-q`).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

use serde::Serialize;

use super::plan::EventPrinter;
use super::{status, warn};
use crate::cli::output::{shown, write_document, Table, API_VERSION};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::disruption::replace::{Holding, Outcome, REPLACEMENT, TERMINATION_FINALIZER};
use crate::usecases::replace::{Detail, Event, NodeOutcome, NodeStep, Resume, Status};
use crate::usecases::Sink;

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::None => Ok(()),
            Detail::Blocker(why) | Detail::ClassFailed(why) => f.write_str(why),
            Detail::Unplaceable(pods) => {
                write!(f, "pods cannot be placed elsewhere: {}", pods.join("; "))
            }
            Detail::UninitializedDestination { node, pods } => write!(
                f,
                "waits: its pods would land on uninitialized node {node} ({})",
                pods.join(", ")
            ),
            Detail::WaitingForPdb(why) => write!(f, "waiting: {why}"),
            Detail::StartsWhenRoom { pool } => write!(
                f,
                "starts when NodePool {pool}'s disruption budget (or --max-parallel) has room"
            ),
            Detail::NoBudget { pool } => write!(
                f,
                "NodePool {pool} disruption budget allows no more disruptions now"
            ),
            Detail::NoLongerFits { would_launch } => write!(
                f,
                "its pods no longer fit on the other nodes (they would need {}): decided again",
                would_launch.join(", ")
            ),
            Detail::DecisionChanged(what) => write!(f, "{what}: decided again"),
            Detail::Resumes(step) => write!(f, "resumes a replacement ({} before)", step.as_str()),
            Detail::NoLongerDrifted { was, now } => {
                write!(f, "no longer drifted: its {was} is gone")?;
                if !now.is_empty() {
                    write!(f, " ({now})")?;
                }
                f.write_str("; left")
            }
            Detail::LeftTheCluster => f.write_str("the node left the cluster meanwhile"),
            Detail::BeingDeleted => {
                f.write_str("someone else began deleting the node meanwhile; left to them")
            }
            Detail::Interrupted => f.write_str("not started: interrupted"),
            Detail::AfterFailures { in_a_row, last } => write!(
                f,
                "not started: {in_a_row} replacements failed in a row (the last: {last})"
            ),
            Detail::LaunchFailed(message) => {
                write!(f, "launch failed: {message}; the node is serving again")
            }
            Detail::InstanceCollision => f.write_str(
                "a replacement resolved to the instance of a node being replaced; the node is serving again",
            ),
            Detail::ReplacementGone(instances) => write!(
                f,
                "replacement instance {} terminated before it served; the node is serving again",
                instances.join(", ")
            ),
            Detail::NotReady { after } => write!(
                f,
                "replacement not Ready after {}s; the node is serving again",
                after.as_secs()
            ),
            Detail::DrainTimedOut {
                node,
                after,
                holding,
            } => {
                write!(f, "drain of {node} timed out after {}s: ", after.as_secs())?;
                match holding {
                    Holding::Named(why) => f.write_str(why)?,
                    Holding::Terminating(n) => write!(f, "{n} pod(s) still terminating")?,
                }
                f.write_str("; the node stays cordoned, re-run to resume")
            }
            Detail::VolumesStillAttached {
                node,
                after,
                attachments,
            } => write!(
                f,
                "{node} drained, but volume attachment(s) {} still there after {}s (its instance terminates once they are gone); the node stays cordoned, re-run to resume",
                attachments.join(", "),
                after.as_secs()
            ),
            Detail::HandOver { kind, name } => write!(f, "delete {kind} {name}"),
            Detail::ReplacementInProgress => write!(
                f,
                "a kubectl-karpenter replacement is in progress on this node (annotation {REPLACEMENT}): finish it with `drift replace` without --via-controller"
            ),
            Detail::ClaimDeleting { kind, name } => write!(
                f,
                "its {kind} {name} is being deleted already: the controller has it"
            ),
            Detail::NotTheControllers { owner } => write!(
                f,
                "no {owner} owns this node and it lacks Karpenter's {TERMINATION_FINALIZER} finalizer, so the controller would not drain or replace it (launched by kubectl-karpenter?): replace it without --via-controller"
            ),
            Detail::AfterHandoverFailure { node } => write!(f, "not handed over: {node} failed"),
            Detail::ControllerStillDraining { after } => write!(
                f,
                "still being drained by the controller after {}s (a PDB or a do-not-disrupt pod?); the controller goes on without us",
                after.as_secs()
            ),
            Detail::PodsStillPending { workloads, after } => write!(
                f,
                "pods of {workloads} workload(s) still pending {}s after the node went: is the controller provisioning?",
                after.as_secs()
            ),
        }
    }
}

/// A node's step, as its progress line says it.
fn step_text(step: &NodeStep) -> String {
    match step {
        NodeStep::Resuming(Resume::Finishing) => "resuming (drained before)".into(),
        NodeStep::Resuming(Resume::Recordoned) => {
            "resuming (drained before; cordoned again)".into()
        }
        NodeStep::Resuming(Resume::Adopting(step)) => {
            format!("resuming ({} before)", step.as_str())
        }
        NodeStep::Marked => "tainted and cordoned (Ready,SchedulingDisabled)".into(),
        NodeStep::ReplacementReady { replacement } => format!("replacement {replacement} Ready"),
        NodeStep::Evicted { pod } => format!("evicted {pod}"),
        NodeStep::EvictionRefused { pod, message } => {
            format!("eviction of {pod} refused: {message}")
        }
        NodeStep::Drained { evicted } => format!("drained ({evicted} pod(s) evicted)"),
        NodeStep::AwaitingDetachment { attachments } => format!(
            "waiting for volume attachment(s) {} to go before its instance terminates",
            attachments.join(", ")
        ),
        NodeStep::Deleted { instance: Some(id) } => format!("deleted; instance {id} terminating"),
        NodeStep::Deleted { instance: None } => "deleted".into(),
        NodeStep::RolledBack {
            cordoned,
            terminated,
        } => format!(
            "rolled back: {}, untainted; terminated {}",
            if *cordoned {
                "left cordoned as it was"
            } else {
                "uncordoned"
            },
            if terminated.is_empty() {
                "nothing".into()
            } else {
                terminated.join(", ")
            }
        ),
        NodeStep::HandedOver { kind, name } => {
            format!("deleted {kind} {name}: the controller drains and terminates it")
        }
        NodeStep::GoneByController => "gone (drained and terminated by the controller)".into(),
        NodeStep::PodsPlacedAgain => "its pods are placed again".into(),
    }
}

/// Prints a run's events on stderr as they come.
pub struct ReplacePrinter<'a> {
    global: &'a GlobalArgs,
    err: &'a mut dyn Write,
}

impl<'a> ReplacePrinter<'a> {
    /// A printer to `err`.
    pub fn new(global: &'a GlobalArgs, err: &'a mut dyn Write) -> Self {
        ReplacePrinter { global, err }
    }
}

impl Sink<Event> for ReplacePrinter<'_> {
    fn emit(&mut self, event: Event) {
        let (global, err) = (self.global, &mut *self.err);
        match event {
            Event::Warning(text) => warn(global, err, &text),
            Event::NotSelected { node, record } => warn(
                global,
                err,
                &format!(
                    "node {node} has a replacement in progress ({REPLACEMENT} {record}) but is not selected: select it to finish it"
                ),
            ),
            Event::LeftToDriftReplace { node, record } => warn(
                global,
                err,
                &format!(
                    "node {node} has a `drift replace` replacement in progress ({REPLACEMENT} {record}), left to it: resume it with `kubectl karpenter drift replace {node} --yes`"
                ),
            ),
            Event::Launch(e) => EventPrinter::new(global, err).emit(e),
            Event::Node { node, step } => {
                status(global, err, &format!("{node}: {}", step_text(&step)))
            }
        }
    }
}

/// Whether the plan is shown as a table before the run (`-o table|wide`); the documents and
/// `-o name` come at the end only.
pub fn tables(global: &GlobalArgs) -> bool {
    matches!(global.output, OutputFormat::Table | OutputFormat::Wide)
}

/// The plan (and, after a run, the outcome) as a table; a line when there is nothing.
pub fn table(out: &mut dyn Write, headers: bool, outcomes: &[NodeOutcome]) -> io::Result<()> {
    if outcomes.is_empty() {
        return writeln!(out, "No drifted nodes: nothing to replace.");
    }
    let mut t = Table::new(&[
        "NODE",
        "NODEPOOL",
        "REASON",
        "PODS",
        "REPLACEMENT",
        "STATUS",
    ]);
    for o in outcomes {
        let detail = o.detail.to_string();
        t.row(vec![
            o.node.clone(),
            o.node_pool.clone(),
            o.reason.clone(),
            o.pods.to_string(),
            if o.replacements.is_empty() {
                "-".into()
            } else {
                o.replacements.join(",")
            },
            if detail.is_empty() {
                o.status.as_str().to_string()
            } else {
                format!("{}: {detail}", o.status.as_str())
            },
        ]);
    }
    t.write(out, headers)
}

/// The `ReplacementReport` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    api_version: &'static str,
    kind: &'static str,
    dry_run: bool,
    nodes: Vec<NodeDoc>,
    summary: BTreeMap<&'static str, usize>,
}

/// One node's outcome in a document (`ReplacementReport.nodes`, `ProvisioningResult.scaledDown`):
/// docs/spec.md §5.6's fields (`name`, `outcome`, `blockedBy`, `replacements[]`, `evicted[]`,
/// `durationSeconds`) and ours beside them (`node` = `name`, the finer `status` and its
/// `detail`, `pods`, `seconds` = `durationSeconds`, kept for the scripts written against them).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeDoc {
    name: String,
    outcome: &'static str,
    /// What holds it (the blocking object named), when `outcome` is `blocked`; else null.
    blocked_by: Option<String>,
    node: String,
    node_pool: String,
    reason: String,
    status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    detail: String,
    replacements: Vec<String>,
    pods: usize,
    evicted: Vec<String>,
    duration_seconds: f64,
    seconds: f64,
}

impl From<&NodeOutcome> for NodeDoc {
    fn from(o: &NodeOutcome) -> Self {
        let outcome = o.status.outcome();
        let detail = o.detail.to_string();
        NodeDoc {
            name: o.node.clone(),
            outcome: outcome.as_str(),
            blocked_by: (outcome == Outcome::Blocked && !detail.is_empty()).then(|| detail.clone()),
            node: o.node.clone(),
            node_pool: o.node_pool.clone(),
            reason: o.reason.clone(),
            status: o.status.as_str(),
            detail,
            replacements: o.replacements.clone(),
            pods: o.pods,
            evicted: o.evicted.clone(),
            duration_seconds: o.seconds,
            seconds: o.seconds,
        }
    }
}

/// Nodes per status.
fn summary(outcomes: &[NodeOutcome]) -> BTreeMap<&'static str, usize> {
    let mut summary = BTreeMap::new();
    for o in outcomes {
        *summary.entry(o.status.as_str()).or_default() += 1;
    }
    summary
}

/// What a run ends with on stdout: the `ReplacementReport` document (`-o json|yaml`), or —
/// after a run that changed something — the table and a summary line (`2 replaced, 1 blocked`).
pub fn report(
    out: &mut dyn Write,
    global: &GlobalArgs,
    outcomes: &[NodeOutcome],
    dry_run: bool,
) -> io::Result<()> {
    if global.output == OutputFormat::Name {
        // `node/<name>` of each node replaced (a dry run: that would be), for `xargs`.
        let acted = |o: &&NodeOutcome| match dry_run {
            true => matches!(o.status, Status::Planned | Status::Queued),
            false => o.status.outcome() == Outcome::Replaced,
        };
        for o in outcomes.iter().filter(acted) {
            writeln!(out, "node/{}", shown(&o.node))?;
        }
        return Ok(());
    }
    if matches!(global.output, OutputFormat::Json | OutputFormat::Yaml) {
        let doc = Report {
            api_version: API_VERSION,
            kind: "ReplacementReport",
            dry_run,
            nodes: outcomes.iter().map(NodeDoc::from).collect(),
            summary: summary(outcomes),
        };
        return write_document(out, global.output, &doc);
    }
    if dry_run || outcomes.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    table(out, !global.no_headers, outcomes)?;
    let line: Vec<String> = summary(outcomes)
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    writeln!(out, "\n{}", line.join(", "))
}

/// The question before nodes are replaced.
pub fn replace_question(starting: &[&str], queued: usize, cluster: &str) -> String {
    format!(
        "Replace {} node(s) now ({}){} in cluster {cluster}?",
        starting.len(),
        starting.join(", "),
        if queued > 0 {
            format!(", then {queued} more as the disruption budgets allow,")
        } else {
            String::new()
        }
    )
}

/// The question before nodes are handed to the controller (`targets`: `NodeClaim name`, …).
pub fn handover_question(targets: &[String], queued: usize, cluster: &str) -> String {
    format!(
        "Delete {} drifted node(s) now ({}) and let the Karpenter controller drain and replace them{}, in cluster {cluster}?",
        targets.len(),
        targets.join(", "),
        if queued > 0 {
            format!(", then {queued} more as the disruption budgets allow")
        } else {
            String::new()
        }
    )
}
