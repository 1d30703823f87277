//! `kubectl karpenter drift replace`: replace drifted (or named) nodes safely and at the
//! operator's pace (SPEC §4, §6; KARPENTER.md §5).
//!
//! Per node, in this order, each step recorded on the node first so that a killed run resumes
//! instead of launching a second replacement:
//!
//! 1. plan: the node's reschedulable pods are simulated onto the other nodes plus new
//!    NodeClaims (the solver; [`planning`]); nodes whose pods cannot be placed, that carry
//!    do-not-disrupt (node or pod), or whose pods a PDB with no disruption left protects, are
//!    *blocked* — the blocking object named — and skipped;
//! 2. mark: the generation's disruption taint and `spec.unschedulable` (`Ready,
//!    SchedulingDisabled`), and the annotation [`labels::REPLACEMENT`] naming the replacement
//!    NodeClaims;
//! 3. launch the replacements (NodeClaim names derive from the node, so a resumed run adopts
//!    the same instances) and wait until their Nodes are Ready — otherwise roll back: untaint,
//!    uncordon, terminate what was launched;
//! 4. drain through the Eviction API in Karpenter's tiers, retrying 429s (the PDB named),
//!    honouring grace periods, bounded by `--timeout`;
//! 5. terminate its instance, then delete the Node.
//!
//! NodePool budgets for reason `Drifted` and `--max-parallel` bound how many nodes are in
//! replacement at once; a node starts as soon as one finishes ([`pipeline`]).
//! `--via-controller` instead lets a running Karpenter do steps 2–5 ([`via_controller`]).

mod pipeline;
mod planning;
mod steps;
mod via_controller;

use steps::Record;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use super::live::Session;
use super::{unix_now, Context};
use crate::cli::output::{write_document, Table, API_VERSION};
use crate::cli::{DriftReplaceArgs, OutputFormat};
use crate::drift::{self, Status};
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::snapshot::{self, Scope};
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::usecases::clock::{Clock, SystemClock};
use crate::usecases::drift_check::{self as drift_cmd, Config as CheckConfig};
use planning::{NodePlan, Planner};
use steps::is_reschedulable;

/// One node's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOutcome {
    node: String,
    node_pool: String,
    reason: String,
    /// Dry run: `planned`, `queued`, `blocked`, `waiting-budget`. After a run: `replaced`,
    /// `blocked`, `waiting-budget`, `rolled-back`, `failed`, `gone`, and `queued` for nodes not
    /// started (Ctrl-C, or after failures; the detail says which).
    status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    detail: String,
    replacements: Vec<String>,
    pods: usize,
    evicted: usize,
    seconds: f64,
}

impl NodeOutcome {
    /// A node the run ends without starting: because of `why` (failures before it), an
    /// interruption, or else for lack of budget.
    fn left_in_queue(&mut self, why: Option<&str>, interrupted: bool, pool: &str) {
        match why {
            Some(why) => self.detail = why.to_string(),
            None if interrupted => self.detail = "not started: interrupted".into(),
            None => self.wait_for_budget(pool),
        }
    }

    /// No budget now, and nothing in progress that would free one.
    fn wait_for_budget(&mut self, pool: &str) {
        self.status = "waiting-budget".into();
        self.detail = format!("NodePool {pool} disruption budget allows no more drifted nodes now");
    }
}

/// The distinct NodePools of `candidates`, in order.
fn pools_of<'a>(candidates: impl IntoIterator<Item = &'a Candidate>) -> Vec<NodePool> {
    let mut pools: Vec<NodePool> = Vec::new();
    for c in candidates {
        if !pools.iter().any(|p| p.name == c.pool.name) {
            pools.push(c.pool.clone());
        }
    }
    pools
}

/// Whether this run may change the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Consent {
    /// `--yes`, or a `--watch` confirmed once.
    Given,
    /// Ask on the terminal before the first change.
    Ask,
    /// Asked, and the answer was no.
    Declined,
}

/// Asks on the terminal unless consent is given already (after the plan is flushed: stdout
/// may be buffered); records the answer.
fn ask(ctx: &mut Context<'_>, question: &str, consent: &mut Consent) -> Result<bool, CommandError> {
    if *consent == Consent::Ask {
        let _ = ctx.out.flush();
        *consent = if crate::cli::confirm::confirm(question, false)? {
            Consent::Given
        } else {
            Consent::Declined
        };
    }
    Ok(*consent == Consent::Given)
}

/// The `ReplacementReport` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    api_version: &'static str,
    kind: &'static str,
    dry_run: bool,
    nodes: Vec<NodeOutcome>,
    summary: BTreeMap<String, usize>,
}

/// A node to replace.
pub(crate) struct Candidate {
    node: Node,
    pool: NodePool,
    reason: String,
    /// A replacement already in progress (a re-run resumes it).
    record: Option<Record>,
    /// Its entry in the outcomes.
    outcome: usize,
    /// Since when a PodDisruptionBudget at zero holds it back (the run waits, up to
    /// `--timeout`, for the pods that budget covers to be healthy again).
    pdb_wait: Option<std::time::Instant>,
    /// Not to be picked before then.
    not_before: Option<std::time::Instant>,
}

/// The nodes to replace, in order, and the outcome of every node considered.
pub(crate) struct Selection {
    candidates: Vec<Candidate>,
    outcomes: Vec<NodeOutcome>,
}

fn io(e: std::io::Error) -> CommandError {
    CommandError::remote(format!("writing output: {e}"))
}

fn duration_flag(name: &str, text: &str) -> Result<Duration, CommandError> {
    crate::disruption::time::parse_duration_flag(text).ok_or_else(|| {
        CommandError::input(format!("{name} {text:?}: expected a duration such as 10m"))
    })
}

/// Runs `drift replace`.
pub fn run(ctx: &mut Context<'_>, args: &DriftReplaceArgs) -> CommandResult {
    if args.max_parallel == 0 {
        return Err(CommandError::input("--max-parallel must be at least 1"));
    }
    let mut settings = pipeline::Settings {
        max_parallel: args.max_parallel,
        force: args.force,
        drain_timeout: duration_flag("--timeout", &args.timeout)?,
        ready_timeout: duration_flag("--ready-timeout", &args.ready_timeout)?,
        attempt: String::new(),
    };
    let check = CheckConfig {
        nodes: args.nodes.clone(),
        nodepools: args.nodepools.clone(),
        selector: super::selector_flag(args.selector.as_deref())?,
        catalog: args.catalog.clone(),
        ..CheckConfig::default()
    };
    let machine = matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml);
    if args.watch {
        // The plan must be on screen before the question (stdout may be buffered).
        let _ = ctx.out.flush();
        if !crate::cli::confirm::confirm(
            "Watch for drifted nodes and replace them as they drift, without asking again?",
            args.yes,
        )? {
            return Ok(Exit::Ok);
        }
        SystemClock::handle_interrupts();
        let mut worst: CommandResult = Ok(Exit::Ok);
        loop {
            // A pass that fails (a rollback, a drain that timed out, an API error) is reported
            // and the watch goes on; the worst outcome is the exit code after Ctrl-C.
            let pass = once(ctx, args, &check, &mut settings, &mut Consent::Given)
                .and_then(|outcomes| finish(ctx, outcomes, false, machine));
            match pass {
                Ok(Exit::Ok) => {}
                Ok(exit) => {
                    if matches!(worst, Ok(Exit::Ok)) {
                        worst = Ok(exit);
                    }
                }
                // Bad input and refusals do not go away by waiting.
                Err(e) if matches!(e.exit, Exit::Input | Exit::Refused) => return Err(e),
                Err(e) => {
                    let _ = writeln!(ctx.err, "error: {} (still watching)", e.message);
                    worst = Err(e);
                }
            }
            if !SystemClock::new().sleep(Duration::from_secs(30)) {
                return worst;
            }
        }
    }
    let mut consent = if args.yes {
        Consent::Given
    } else {
        Consent::Ask
    };
    let outcomes = once(ctx, args, &check, &mut settings, &mut consent)?;
    if consent == Consent::Declined {
        writeln!(ctx.err, "Nothing changed.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    finish(ctx, outcomes, args.dry_run, machine)
}

/// One run: the drifted (or named) nodes, the plan, the question (unless consent is given),
/// then every node replaced at the budget's pace.
fn once(
    ctx: &mut Context<'_>,
    args: &DriftReplaceArgs,
    check: &CheckConfig,
    settings: &mut pipeline::Settings,
    consent: &mut Consent,
) -> Result<Vec<NodeOutcome>, CommandError> {
    settings.attempt = crate::model::time::format_rfc3339(unix_now().max(0));
    let guard = (!args.dry_run && !args.via_controller).then_some(("drift replace", args.force));
    let connection = super::live::connect(ctx, args.catalog.as_deref(), guard)?;
    let clock = SystemClock::new();
    let mut session = connection.live(&clock);
    let snap = snapshot::read(session.cluster, Scope::PODS)?;
    let selection = select(ctx, args, check, &snap.manifests)?;
    if args.via_controller {
        return via_controller::run(
            ctx,
            &session,
            args,
            &snap.manifests,
            selection,
            settings,
            consent,
        );
    }
    let Selection {
        candidates,
        mut outcomes,
    } = selection;
    let pdbs = steps::pdbs(&session)?;
    let queue = preview(
        &mut session,
        &snap.manifests,
        &pdbs,
        candidates,
        &mut outcomes,
        settings,
    )?;

    let machine = matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml);
    if !machine {
        render_plan(ctx, &outcomes)?;
    }
    let starting = outcomes.iter().filter(|o| o.status == "planned").count();
    if args.dry_run || starting == 0 {
        return Ok(outcomes);
    }
    if *consent != Consent::Given {
        let queued = outcomes.iter().filter(|o| o.status == "queued").count();
        let question = format!(
            "Replace {starting} node(s) now ({}){} in cluster {}?",
            outcomes
                .iter()
                .filter(|o| o.status == "planned")
                .map(|o| o.node.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if queued > 0 {
                format!(", then {queued} more as the disruption budgets allow,")
            } else {
                String::new()
            },
            session.info.name
        );
        if !ask(ctx, &question, consent)? {
            return Ok(outcomes);
        }
    }
    pipeline::run(ctx, &mut session, queue, &mut outcomes, settings)?;
    Ok(outcomes)
}

/// The nodes to replace, in order: replacements in progress first (resume), then nodes without
/// pods to move (as Karpenter tries empty candidates first, KARPENTER.md §5.3), then by name
/// (Karpenter sorts by the time its `Drifted` condition appeared, which nodes this tool judges
/// do not have); each with its outcome entry.
fn select(
    ctx: &mut Context<'_>,
    args: &DriftReplaceArgs,
    check: &CheckConfig,
    m: &crate::api::Manifests,
) -> Result<Selection, CommandError> {
    // Drift verdicts (cluster + EC2).
    let (mut drift_snapshot, _version, _client) = super::drift_live::gather(ctx, check)?;
    let named: BTreeSet<&str> = args.nodes.iter().map(String::as_str).collect();
    for name in &named {
        if !drift_snapshot.nodes.iter().any(|n| n.node.name == *name) {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name, or launched by this tool)"
            )));
        }
    }
    drift_cmd::select_nodes(check, &mut drift_snapshot)?;
    let evaluation = drift::evaluate(&drift_snapshot);
    for note in &evaluation.notes {
        ctx.warn(note);
    }
    // Nodes whose instance is shutting down or gone are on their way out (the cloud node
    // lifecycle removes them): never candidates, even if a kubelet re-registered them.
    let leaving_instances: BTreeSet<&str> = drift_snapshot
        .nodes
        .iter()
        .filter_map(|n| n.instance.as_ref())
        .filter(|i| !matches!(i.state.as_str(), "pending" | "running"))
        .map(|i| i.id.as_str())
        .collect();
    let verdicts: BTreeMap<&str, &drift::NodeDrift> = evaluation
        .nodes
        .iter()
        .map(|v| (v.name.as_str(), v))
        .collect();

    let mut candidates: Vec<(bool, Candidate)> = Vec::new();
    for node in &m.nodes {
        let record = Record::of(node);
        let verdict = verdicts.get(node.name.as_str());
        let reason = match (&record, verdict) {
            // A replacement in progress is finished when its node is selected (never otherwise:
            // no node the user did not select is touched).
            (Some(r), Some(_)) => r.reason.clone(),
            (Some(_), None) => {
                ctx.warn(&format!(
                    "node {} has a replacement in progress ({} {}) but is not selected: select it to finish it",
                    node.name,
                    labels::REPLACEMENT,
                    node.annotations.get(labels::REPLACEMENT).map_or("", String::as_str)
                ));
                continue;
            }
            (None, Some(v)) if named.contains(node.name.as_str()) => v
                .reason
                .map_or_else(|| "Requested".to_string(), |r| r.as_str().to_string()),
            (None, Some(v)) if v.status == Status::Drifted => {
                v.reason.map(|r| r.as_str().to_string()).unwrap_or_default()
            }
            _ => continue,
        };
        // A node drained and terminated by a run killed before it deleted the Node is finished
        // (deleted); any other node whose instance is leaving is not a candidate.
        let finishing = record.as_ref().is_some_and(|r| r.step == "drained");
        let leaving = node
            .instance_id()
            .is_some_and(|id| leaving_instances.contains(id));
        if !finishing && (node.deleting || leaving) {
            continue;
        }
        let Some(pool) = node
            .node_pool()
            .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
        else {
            continue;
        };
        let has_pods = m
            .bound_pods
            .iter()
            .any(|p| p.node_name.as_deref() == Some(node.name.as_str()) && is_reschedulable(p));
        candidates.push((
            has_pods,
            Candidate {
                node: node.clone(),
                pool: pool.clone(),
                reason,
                record,
                outcome: 0,
                pdb_wait: None,
                not_before: None,
            },
        ));
    }
    candidates.sort_by(|(a_pods, a), (b_pods, b)| {
        (a.record.is_none(), a_pods, &a.node.name).cmp(&(b.record.is_none(), b_pods, &b.node.name))
    });
    let mut outcomes = Vec::new();
    let candidates = candidates
        .into_iter()
        .map(|(_, mut c)| {
            c.outcome = outcomes.len();
            outcomes.push(NodeOutcome {
                node: c.node.name.clone(),
                node_pool: c.pool.name.clone(),
                reason: c.reason.clone(),
                status: "queued".into(),
                detail: String::new(),
                replacements: Vec::new(),
                pods: m
                    .bound_pods
                    .iter()
                    .filter(|p| {
                        p.node_name.as_deref() == Some(c.node.name.as_str()) && is_reschedulable(p)
                    })
                    .count(),
                evicted: 0,
                seconds: 0.0,
            });
            c
        })
        .collect();
    Ok(Selection {
        candidates,
        outcomes,
    })
}

/// The plan shown before anything changes: blocked nodes (named blockers), the nodes that
/// start at once with their planned replacements (`planned`), the rest `queued` behind the
/// budgets — or `waiting-budget` when no node can start now. Returns the nodes to replace.
fn preview(
    session: &mut Session,
    m: &crate::api::Manifests,
    pdbs: &[crate::disruption::drain::Pdb],
    candidates: Vec<Candidate>,
    outcomes: &mut [NodeOutcome],
    settings: &pipeline::Settings,
) -> Result<Vec<Candidate>, CommandError> {
    let now = unix_now();
    let pools = pools_of(&candidates);
    let mut slots = pipeline::free_slots(&pools, &m.nodes, now);
    let mut planner = Planner::new(m, pdbs, &BTreeSet::new(), Vec::new(), settings.force, now);
    let mut starting = 0;
    let mut queue = Vec::new();
    for c in candidates {
        let o = &mut outcomes[c.outcome];
        if c.record.is_none() {
            // Before anything starts, a PDB at zero blocks (nothing of this run will free it).
            if let Some(NodePlan::Blocked { why, .. }) = planner.drain_blocker(&c.node, &c.pool) {
                o.status = "blocked".into();
                o.detail = why;
                continue;
            }
        }
        let slot = slots.get_mut(&c.pool.name).and_then(|s| s.as_mut());
        let fits = c.record.is_some() || slot.as_ref().is_none_or(|n| **n > 0);
        if starting >= settings.max_parallel || !fits {
            o.detail = format!(
                "starts when NodePool {}'s disruption budget (or --max-parallel) has room",
                c.pool.name
            );
            queue.push(c);
            continue;
        }
        let launched_before = c
            .record
            .as_ref()
            .filter(|r| r.launched_all())
            .map(|r| (r.step.clone(), r.instances.clone()));
        if let Some((step, instances)) = launched_before {
            // Resumed past its launch: the recorded instances are adopted, nothing is planned.
            o.status = "planned".into();
            o.detail = format!("resumes a replacement ({step} before)");
            o.replacements = instances;
            starting += 1;
            queue.push(c);
            continue;
        }
        let attempt = c
            .record
            .as_ref()
            .map_or(settings.attempt.as_str(), |r| r.started_at.as_str());
        match planner.plan(session, &c.node, &c.pool, attempt, c.record.as_ref())? {
            NodePlan::Blocked { why, .. } => {
                o.status = "blocked".into();
                o.detail = why;
                continue;
            }
            NodePlan::Replace { claims, .. } => {
                o.status = "planned".into();
                o.replacements = claims
                    .iter()
                    .map(|nc| format!("{} ({})", nc.name, nc.launch.instance_type))
                    .collect();
            }
        }
        if c.record.is_none() {
            if let Some(n) = slot {
                *n -= 1;
            }
        }
        starting += 1;
        queue.push(c);
    }
    if starting == 0 {
        for c in &queue {
            outcomes[c.outcome].wait_for_budget(&c.pool.name);
        }
        queue.clear();
    }
    Ok(queue)
}

fn render_plan(ctx: &mut Context<'_>, outcomes: &[NodeOutcome]) -> Result<(), CommandError> {
    if outcomes.is_empty() {
        writeln!(ctx.out, "No drifted nodes: nothing to replace.").map_err(io)?;
        return Ok(());
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
            if o.detail.is_empty() {
                o.status.clone()
            } else {
                format!("{}: {}", o.status, o.detail)
            },
        ]);
    }
    t.write(ctx.out, !ctx.global.no_headers).map_err(io)
}

fn finish(
    ctx: &mut Context<'_>,
    outcomes: Vec<NodeOutcome>,
    dry_run: bool,
    machine: bool,
) -> CommandResult {
    let mut summary: BTreeMap<String, usize> = BTreeMap::new();
    for o in &outcomes {
        *summary.entry(o.status.clone()).or_default() += 1;
    }
    if machine {
        let doc = Report {
            api_version: API_VERSION,
            kind: "ReplacementReport",
            dry_run,
            nodes: outcomes,
            summary: summary.clone(),
        };
        write_document(ctx.out, ctx.global.output, &doc).map_err(io)?;
    } else if !dry_run && !outcomes.is_empty() {
        writeln!(ctx.out).map_err(io)?;
        render_plan(ctx, &outcomes)?;
        let line: Vec<String> = summary.iter().map(|(k, v)| format!("{v} {k}")).collect();
        writeln!(ctx.out, "\n{}", line.join(", ")).map_err(io)?;
    }
    let bad = ["failed", "rolled-back"]
        .iter()
        .map(|k| summary.get(*k).copied().unwrap_or(0))
        .sum::<usize>();
    if bad > 0 {
        return Err(CommandError::remote(format!(
            "{bad} node(s) were not replaced (see the table); nothing was left half-done: rolled-back nodes serve again, failed drains stay cordoned and resume on re-run"
        )));
    }
    Ok(
        if summary.contains_key("blocked") || summary.contains_key("waiting-budget") {
            Exit::Finding
        } else {
            Exit::Ok
        },
    )
}
