//! `kubectl karpenter drift replace`: replace drifted (or named) nodes safely and at the
//! operator's pace (SPEC §4, §6; KARPENTER.md §5).
//!
//! Per node, in this order, each step recorded on the node first so that a killed run resumes
//! instead of launching a second replacement:
//!
//! 1. plan: the node's reschedulable pods are simulated onto the other nodes plus new
//!    NodeClaims (the solver); nodes whose pods cannot be placed, that carry do-not-disrupt
//!    (node or pod), or whose pods a PDB with no disruption left protects, are *blocked* — the
//!    blocking object named — and skipped;
//! 2. mark: the generation's disruption taint and `spec.unschedulable` (`Ready,
//!    SchedulingDisabled`), and the annotation [`REPLACEMENT`] naming the replacement
//!    NodeClaims;
//! 3. launch the replacements (NodeClaim names derive from the node, so a resumed run adopts
//!    the same instances) and wait until their Nodes are Ready — otherwise roll back: untaint,
//!    uncordon, terminate what was launched;
//! 4. drain through the Eviction API in Karpenter's tiers, retrying 429s (the PDB named),
//!    honouring grace periods, bounded by `--timeout`;
//! 5. terminate its instance, then delete the Node.
//!
//! NodePool budgets for reason `Drifted` and `--max-parallel` bound how many nodes are in
//! replacement at once; nodes are taken in waves.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::drift::{self as drift_cmd, Config as CheckConfig};
use super::provision_live::{LaunchDoc, Session};
use super::Context;
use crate::api::core;
use crate::cli::output::{write_document, Table, API_VERSION};
use crate::cli::{DriftReplaceArgs, OutputFormat, ProvisionArgs};
use crate::cloud::launch;
use crate::disruption::budgets::{allowed_disruptions, DisruptionReason};
use crate::disruption::drain::{self, DrainOptions, Pdb};
use crate::drift::{self, Status};
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::ops;
use crate::k8s::snapshot::{self, Scope};
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
use crate::model::pod::Pod;
use crate::scheduling::Plan;

/// The node annotation recording a replacement in progress (JSON [`Record`]).
pub const REPLACEMENT: &str = "kubectl-karpenter.io/replacement";

/// What is recorded on a node being replaced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// `marked`, `launched`, `drained`.
    pub step: String,
    /// Replacement NodeClaim names.
    pub node_claims: Vec<String>,
    /// Replacement instances, once launched.
    #[serde(default)]
    pub instances: Vec<String>,
    /// Why (the drift reason, or `Requested`).
    pub reason: String,
    /// RFC 3339.
    pub started_at: String,
}

/// One node's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeOutcome {
    node: String,
    node_pool: String,
    reason: String,
    /// `planned`, `replaced`, `blocked`, `waiting-budget`, `rolled-back`, `failed`.
    status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    detail: String,
    replacements: Vec<String>,
    pods: usize,
    evicted: usize,
    seconds: f64,
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

/// A candidate, with its plan.
struct Candidate {
    node: Node,
    pool: NodePool,
    reason: String,
    pods: Vec<Pod>,
    record: Option<Record>,
    blocked: Option<String>,
}

#[derive(Deserialize, Default)]
struct LivePdb {
    #[serde(default)]
    metadata: crate::api::meta::ObjectMeta,
    #[serde(default)]
    spec: Option<core::PodDisruptionBudgetSpec>,
    #[serde(default)]
    status: LivePdbStatus,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LivePdbStatus {
    #[serde(default)]
    disruptions_allowed: i32,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn io(e: std::io::Error) -> CommandError {
    CommandError::remote(format!("writing output: {e}"))
}

fn duration_flag(name: &str, text: &str) -> Result<Duration, CommandError> {
    crate::cli::parse_duration_flag(text).ok_or_else(|| {
        CommandError::input(format!("{name} {text:?}: expected a duration such as 10m"))
    })
}

fn pdbs(session: &Session) -> Result<Vec<Pdb>, CommandError> {
    let live: Vec<LivePdb> = ops::list_all(
        &session.live.client,
        "/apis/policy/v1/poddisruptionbudgets",
        &ops::ListQuery::default(),
    )?;
    let mut out = Vec::new();
    for p in live {
        let as_core = core::PodDisruptionBudget {
            metadata: p.metadata.clone(),
            spec: p.spec.clone(),
            ..Default::default()
        };
        out.push(Pdb {
            namespace: p.metadata.namespace.clone().unwrap_or_default(),
            name: p.metadata.name.clone().unwrap_or_default(),
            selector: crate::api::live::pdb_selector(&as_core)?,
            disruptions_allowed: p.status.disruptions_allowed,
        });
    }
    Ok(out)
}

/// Pods on a node, read now, with their deletion timestamps.
fn pods_on(
    session: &Session,
    node: &str,
) -> Result<(Vec<Pod>, BTreeMap<String, i64>), CommandError> {
    let mut pods = Vec::new();
    let mut deleting = BTreeMap::new();
    let mut failure = None;
    ops::list(
        &session.live.client,
        "/api/v1/pods",
        &ops::ListQuery {
            field_selector: Some(&format!("spec.nodeName={node}")),
            ..Default::default()
        },
        |p: core::Pod| match crate::api::live::live_pod(&p) {
            Ok(pod) => {
                if let Some(ts) = p
                    .metadata
                    .deletion_timestamp
                    .as_deref()
                    .and_then(crate::cloud::ami::parse_rfc3339)
                {
                    deleting.insert(pod.key(), ts);
                }
                pods.push(pod);
            }
            Err(e) => failure = Some(e),
        },
    )?;
    if let Some(e) = failure {
        return Err(CommandError::remote(format!(
            "a pod on {node} cannot be read: {e}"
        )));
    }
    Ok((pods, deleting))
}

fn drain_options(pool: &NodePool, force: bool) -> DrainOptions {
    DrainOptions {
        evict_daemonsets: false,
        disruption_taint: drain::disruption_taint(pool.generation),
        ignore_do_not_disrupt: force,
    }
}

/// Runs `drift replace`.
pub fn run(ctx: &mut Context<'_>, args: &DriftReplaceArgs) -> CommandResult {
    if args.max_parallel == 0 {
        return Err(CommandError::input("--max-parallel must be at least 1"));
    }
    let drain_timeout = duration_flag("--timeout", &args.timeout)?;
    let ready_timeout = duration_flag("--ready-timeout", &args.ready_timeout)?;
    let check = CheckConfig {
        nodes: args.nodes.clone(),
        nodepools: args.nodepools.clone(),
        selector: args
            .selector
            .as_deref()
            .map(drift_cmd::parse_selector)
            .transpose()
            .map_err(|e| CommandError::input(format!("-l {e}")))?,
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
        super::provision_live::install_interrupt_handler();
        let mut worst = Exit::Ok;
        loop {
            let mut confirmed = true;
            let outcomes = all_waves(
                ctx,
                args,
                &check,
                drain_timeout,
                ready_timeout,
                &mut confirmed,
            )?;
            if let Exit::Finding = finish(ctx, outcomes, false, machine)? {
                worst = Exit::Finding;
            }
            if !super::provision_live::sleep_unless_stopped(Duration::from_secs(30)) {
                return Ok(worst);
            }
        }
    }
    let mut confirmed = args.yes;
    let outcomes = all_waves(
        ctx,
        args,
        &check,
        drain_timeout,
        ready_timeout,
        &mut confirmed,
    )?;
    if !confirmed {
        writeln!(ctx.err, "Nothing changed.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    finish(ctx, outcomes, args.dry_run, machine)
}

/// Passes until nothing is waiting for budget any more (or a pass makes no progress): each
/// pass recomputes the budgets, so the budget is kept full wave after wave (PERF.md B6) and
/// never exceeded. `confirmed` is asked for once, before the first change.
fn all_waves(
    ctx: &mut Context<'_>,
    args: &DriftReplaceArgs,
    check: &CheckConfig,
    drain_timeout: Duration,
    ready_timeout: Duration,
    confirmed: &mut bool,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let mut all: Vec<NodeOutcome> = Vec::new();
    loop {
        let pass = once(ctx, args, check, drain_timeout, ready_timeout, confirmed)?;
        let progressed = pass.iter().any(|o| o.status == "replaced");
        let waiting = pass.iter().any(|o| o.status == "waiting-budget");
        for o in pass {
            match all.iter_mut().find(|x| x.node == o.node) {
                Some(x) => *x = o,
                None => all.push(o),
            }
        }
        if args.dry_run || !*confirmed || !progressed || !waiting {
            return Ok(all);
        }
    }
}

fn once(
    ctx: &mut Context<'_>,
    args: &DriftReplaceArgs,
    check: &CheckConfig,
    drain_timeout: Duration,
    ready_timeout: Duration,
    confirmed: &mut bool,
) -> Result<Vec<NodeOutcome>, CommandError> {
    // Drift verdicts first (cluster + EC2), then the full snapshot for planning.
    let (mut drift_snapshot, _version, _client) = super::drift_live::gather(ctx, check)?;
    let guard = (!args.dry_run).then_some(("drift replace", args.force));
    let mut session = Session::connect(ctx, args.catalog.as_deref(), guard)?;
    let snap = snapshot::read(&session.live.client, Scope::PODS)?;
    let m = snap.manifests;
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

    // Candidates: named nodes, drifted nodes, and nodes with a replacement in progress.
    let pdbs = pdbs(&session)?;
    let now = now();
    let mut candidates: Vec<Candidate> = Vec::new();
    for node in &m.nodes {
        let record: Option<Record> = node
            .annotations
            .get(REPLACEMENT)
            .and_then(|t| serde_json::from_str(t).ok());
        let verdict = verdicts.get(node.name.as_str());
        let reason = match (&record, verdict) {
            (Some(r), _) => r.reason.clone(),
            (None, Some(v)) if named.contains(node.name.as_str()) => v
                .reason
                .map_or_else(|| "Requested".to_string(), |r| r.as_str().to_string()),
            (None, Some(v)) if v.status == Status::Drifted => {
                v.reason.map(|r| r.as_str().to_string()).unwrap_or_default()
            }
            _ => continue,
        };
        if node.deleting
            || node
                .instance_id()
                .is_some_and(|id| leaving_instances.contains(id))
        {
            continue;
        }
        let Some(pool) = node
            .node_pool()
            .and_then(|p| m.node_pools.iter().find(|x| x.name == p))
        else {
            continue;
        };
        let pods: Vec<Pod> = m
            .bound_pods
            .iter()
            .filter(|p| p.node_name.as_deref() == Some(node.name.as_str()))
            .cloned()
            .collect();
        let mut blocked = None;
        if record.is_none() {
            let plan = drain::plan_drain(
                node,
                &pods,
                &pdbs,
                &BTreeMap::new(),
                now,
                &drain_options(pool, args.force),
            );
            if plan.is_blocked() {
                blocked = Some(plan.explain_blockers());
            }
        }
        candidates.push(Candidate {
            node: node.clone(),
            pool: pool.clone(),
            reason,
            pods,
            record,
            blocked,
        });
    }
    // In-progress first (resume), then empty nodes, then by name (KARPENTER.md §5.3).
    candidates.sort_by_key(|c| {
        (
            c.record.is_none(),
            c.pods.iter().any(is_reschedulable),
            c.node.name.clone(),
        )
    });

    // Budgets: per pool, how many may start now.
    let mut allowance: BTreeMap<String, Option<u32>> = BTreeMap::new();
    for c in &candidates {
        allowance.entry(c.pool.name.clone()).or_insert_with(|| {
            let a = allowed_disruptions(&c.pool, &m.nodes, DisruptionReason::Drifted, now);
            let in_progress = candidates
                .iter()
                .filter(|x| x.pool.name == c.pool.name && x.record.is_some())
                .count() as u32;
            a.allowed.map(|n| n.saturating_sub(in_progress))
        });
    }

    let mut outcomes: Vec<NodeOutcome> = Vec::new();
    let mut runnable: Vec<usize> = Vec::new();
    for (i, c) in candidates.iter_mut().enumerate() {
        let outcome = |status: &str, detail: String| NodeOutcome {
            node: c.node.name.clone(),
            node_pool: c.pool.name.clone(),
            reason: c.reason.clone(),
            status: status.into(),
            detail,
            replacements: Vec::new(),
            pods: c.pods.iter().filter(|p| is_reschedulable(p)).count(),
            evicted: 0,
            seconds: 0.0,
        };
        if let Some(why) = &c.blocked {
            outcomes.push(outcome("blocked", why.clone()));
            continue;
        }
        let left = allowance.get_mut(&c.pool.name).and_then(|a| a.as_mut());
        if c.record.is_none() {
            if let Some(n) = left {
                if *n == 0 {
                    outcomes.push(outcome(
                        "waiting-budget",
                        format!(
                            "NodePool {} disruption budget allows no more drifted nodes now",
                            c.pool.name
                        ),
                    ));
                    continue;
                }
                *n -= 1;
            }
        }
        runnable.push(i);
        outcomes.push(outcome("planned", String::new()));
    }

    // Plan the replacements of the runnable nodes together (their pods, minus those nodes).
    let leaving: BTreeSet<String> = runnable
        .iter()
        .map(|&i| candidates[i].node.name.clone())
        .collect();
    let mut input_manifests = m.clone();
    input_manifests.nodes.retain(|n| !leaving.contains(&n.name));
    let mut moving: Vec<Pod> = Vec::new();
    input_manifests.bound_pods.retain(|p| {
        let on_leaving = p.node_name.as_ref().is_some_and(|n| leaving.contains(n));
        if on_leaving && is_reschedulable(p) {
            let mut pending = p.clone();
            pending.node_name = None;
            pending.scheduled_condition = Some(("False".into(), "Unschedulable".into()));
            moving.push(pending);
        }
        !on_leaving
    });
    // Only the moving pods are planned here (pending pods are `provision`'s business).
    input_manifests.pods = moving.clone();
    let (mut plan, input) = if moving.is_empty() {
        (Plan::default(), None)
    } else {
        let (plan, input) = session.plan_manifests(
            &mut input_manifests,
            &super::provision_live::registered_instances(&m.nodes),
            &ProvisionArgs::default(),
        )?;
        (plan, Some(input))
    };
    // Replacement NodeClaims are named after the nodes they replace (not after their pods,
    // which the original NodeClaim was named after): a resumed run finds the same instances by
    // their tag, and never mistakes the old node's instance for its replacement.
    let leaving_names: Vec<&str> = leaving.iter().map(String::as_str).collect();
    for (i, claim) in plan.node_claims.iter_mut().enumerate() {
        let index = i.to_string();
        let mut parts = vec!["replacement", claim.node_pool.as_str(), index.as_str()];
        parts.extend(leaving_names.iter().copied());
        claim.name = format!("{}-{}", claim.node_pool, &launch::digest(&parts)[..5]);
    }
    // Which replacement claims each node needs: the claims holding its pods.
    let mut claims_of: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (ci, claim) in plan.node_claims.iter().enumerate() {
        for pod in &claim.pods {
            if let Some(c) = runnable
                .iter()
                .map(|&i| &candidates[i])
                .find(|c| c.pods.iter().any(|p| &p.key() == pod))
            {
                let list = claims_of.entry(c.node.name.clone()).or_default();
                if !list.contains(&ci) {
                    list.push(ci);
                }
            }
        }
    }
    let unplaced: BTreeMap<String, String> = plan
        .unschedulable
        .iter()
        .map(|u| (u.pod.clone(), u.reason.clone()))
        .collect();
    for &i in &runnable {
        let c = &candidates[i];
        let stuck: Vec<String> = c
            .pods
            .iter()
            .filter_map(|p| unplaced.get(&p.key()).map(|r| format!("{}: {r}", p.key())))
            .collect();
        if let Some(o) = outcomes.iter_mut().find(|o| o.node == c.node.name) {
            if !stuck.is_empty() && c.record.is_none() {
                o.status = "blocked".into();
                o.detail = format!("pods cannot be placed elsewhere: {}", stuck.join("; "));
            } else {
                o.replacements = claims_of
                    .get(&c.node.name)
                    .map(|l| {
                        l.iter()
                            .map(|&ci| {
                                let nc = &plan.node_claims[ci];
                                format!("{} ({})", nc.name, nc.launch.instance_type)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
            }
        }
    }
    runnable.retain(|&i| {
        outcomes
            .iter()
            .any(|o| o.node == candidates[i].node.name && o.status == "planned")
    });
    // Parallelism: waves of at most --max-parallel nodes.
    let waves: Vec<Vec<usize>> = runnable
        .chunks(args.max_parallel)
        .map(<[usize]>::to_vec)
        .collect();

    let machine = matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml);
    if !machine {
        render_plan(ctx, &outcomes)?;
    }
    if args.dry_run || runnable.is_empty() {
        return Ok(outcomes);
    }
    if !*confirmed {
        let waiting = outcomes
            .iter()
            .filter(|o| o.status == "waiting-budget")
            .count();
        let question = format!(
            "Replace {} node(s) now ({}){} in cluster {}?",
            runnable.len(),
            runnable
                .iter()
                .map(|&i| candidates[i].node.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if waiting > 0 {
                format!(", then {waiting} more as the disruption budgets allow,")
            } else {
                String::new()
            },
            session.live.target.info.name
        );
        // The plan must be on screen before the question (stdout may be buffered).
        let _ = ctx.out.flush();
        *confirmed = crate::cli::confirm::confirm(&question, false)?;
        if !*confirmed {
            return Ok(outcomes);
        }
    }

    for wave in waves {
        let started = Instant::now();
        // 2. mark every node of the wave; 3. launch their replacements.
        let mut launched_by_node: BTreeMap<String, Vec<LaunchDoc>> = BTreeMap::new();
        let mut failed_nodes: BTreeMap<String, String> = BTreeMap::new();
        for &i in &wave {
            let c = &candidates[i];
            let claim_idx = claims_of.get(&c.node.name).cloned().unwrap_or_default();
            let names: Vec<String> = claim_idx
                .iter()
                .map(|&ci| plan.node_claims[ci].name.clone())
                .collect();
            let record = Record {
                step: "marked".into(),
                node_claims: names,
                instances: Vec::new(),
                reason: c.reason.clone(),
                started_at: crate::cloud::live_catalog::rfc3339(now.max(0) as u64),
            };
            let record = c.record.clone().unwrap_or(record);
            mark(&session, &c.node, &c.pool, &record)?;
            progress(
                ctx,
                &c.node.name,
                "tainted and cordoned (Ready,SchedulingDisabled)",
            );
            if claim_idx.is_empty() {
                continue;
            }
            let sub = Plan {
                node_claims: claim_idx
                    .iter()
                    .map(|&ci| plan.node_claims[ci].clone())
                    .collect(),
                ..Plan::default()
            };
            let input = input.as_ref().expect("claims imply an input");
            let (launched, failed) = session.launch_all(ctx, &m.node_classes, &sub, input)?;
            if let Some(f) = failed.first() {
                failed_nodes.insert(c.node.name.clone(), format!("launch failed: {}", f.error));
            }
            if launched.iter().any(|l| {
                m.nodes
                    .iter()
                    .any(|n| n.instance_id() == Some(l.instance_id.as_str()))
            }) {
                // Never expected (names differ): refuse rather than drain onto a leaving node.
                failed_nodes.insert(
                    c.node.name.clone(),
                    "a replacement resolved to an existing node's instance".into(),
                );
            }
            let mut recorded = record.clone();
            recorded.step = "launched".into();
            recorded.instances = launched.iter().map(|l| l.instance_id.clone()).collect();
            annotate(&session, &c.node.name, Some(&recorded))?;
            launched_by_node.insert(c.node.name.clone(), launched);
        }
        // Wait for every replacement to be Ready; roll back the nodes whose did not.
        let all: Vec<LaunchDoc> = launched_by_node
            .values()
            .flatten()
            .cloned()
            .map(|mut l| {
                l.pods.clear();
                l
            })
            .collect();
        if !all.is_empty() && failed_nodes.is_empty() {
            if let Err(e) = session.wait(ctx, &all, ready_timeout) {
                for name in launched_by_node.keys() {
                    failed_nodes.insert(
                        name.clone(),
                        format!("replacement not Ready: {}", e.message),
                    );
                }
            }
        }
        for &i in &wave {
            let c = &candidates[i];
            let o = outcomes
                .iter_mut()
                .find(|o| o.node == c.node.name)
                .expect("every runnable node has an outcome");
            let launched = launched_by_node
                .get(&c.node.name)
                .cloned()
                .unwrap_or_default();
            o.replacements = launched
                .iter()
                .map(|l| format!("{} ({})", l.node_claim, l.instance_id))
                .collect();
            if let Some(why) = failed_nodes.get(&c.node.name) {
                rollback(ctx, &session, &c.node, &c.pool, &launched)?;
                o.status = "rolled-back".into();
                o.detail = format!("{why}; the node is serving again");
                continue;
            }
            // 4. drain.
            match drain_node(ctx, &session, &c.node, &c.pool, args.force, drain_timeout) {
                Ok(evicted) => o.evicted = evicted,
                Err(e) => {
                    o.status = "failed".into();
                    o.detail = format!("{}; the node stays cordoned, re-run to resume", e.message);
                    continue;
                }
            }
            let mut record: Record = c.record.clone().unwrap_or_default();
            record.step = "drained".into();
            let _ = annotate(&session, &c.node.name, Some(&record));
            // 5. terminate the instance, then delete the Node — in that order (like Karpenter's
            // termination finalizer), so a run killed in between leaves a node a re-run still
            // finds and finishes, never an instance without a node.
            if let Some(id) = c.node.instance_id() {
                launch::terminate_all(&session.cloud, &[id.to_string()])
                    .map_err(super::live::aws_error)?;
            }
            ops::delete(
                &session.live.client,
                &format!("/api/v1/nodes/{}", c.node.name),
                None,
            )?;
            progress(
                ctx,
                &c.node.name,
                &match c.node.instance_id() {
                    Some(id) => format!("deleted; instance {id} terminating"),
                    None => "deleted".to_string(),
                },
            );
            o.status = "replaced".into();
            o.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        }
    }
    Ok(outcomes)
}

fn is_reschedulable(p: &Pod) -> bool {
    !p.is_daemonset_pod() && !p.is_mirror() && !p.is_terminal()
}

fn progress(ctx: &mut Context<'_>, node: &str, what: &str) {
    if !ctx.global.quiet {
        let _ = writeln!(ctx.err, "{node}: {what}");
    }
}

fn annotate(session: &Session, node: &str, record: Option<&Record>) -> Result<(), CommandError> {
    let value = record.map(|r| serde_json::to_string(r).unwrap_or_default());
    patch_node(
        session,
        node,
        &serde_json::json!({"metadata": {"annotations": {REPLACEMENT: value}}}),
    )
}

/// A merge patch of a node; a node that is gone already (deleted meanwhile — its instance
/// terminated, or another run finished it) is not an error: there is nothing left to mark.
fn patch_node(
    session: &Session,
    node: &str,
    patch: &serde_json::Value,
) -> Result<(), CommandError> {
    match ops::merge_patch(
        &session.live.client,
        &format!("/api/v1/nodes/{node}"),
        patch,
    ) {
        Ok(_) => Ok(()),
        Err(e) if e.status() == Some(404) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn taints_json(
    node: &Node,
    extra: Option<&crate::model::taints::Taint>,
    drop_key: &str,
) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = node
        .taints
        .iter()
        .filter(|t| t.key != drop_key)
        .map(|t| {
            let mut v = serde_json::json!({"key": t.key, "effect": t.effect.as_str()});
            if !t.value.is_empty() {
                v["value"] = t.value.clone().into();
            }
            v
        })
        .collect();
    if let Some(t) = extra {
        let mut v = serde_json::json!({"key": t.key, "effect": t.effect.as_str()});
        if !t.value.is_empty() {
            v["value"] = t.value.clone().into();
        }
        out.push(v);
    }
    out
}

/// Taints (v1/v1beta1) and cordons the node, recording the replacement.
fn mark(
    session: &Session,
    node: &Node,
    pool: &NodePool,
    record: &Record,
) -> Result<(), CommandError> {
    let taint = drain::disruption_taint(pool.generation);
    // v1alpha5 marked by cordoning only (the node controller adds its unschedulable taint).
    let extra = (pool.generation != Some(ApiGeneration::V1Alpha5)).then_some(&taint);
    patch_node(
        session,
        &node.name,
        &serde_json::json!({
            "metadata": {"annotations": {REPLACEMENT: serde_json::to_string(record).unwrap_or_default()}},
            "spec": {"unschedulable": true, "taints": taints_json(node, extra, &taint.key)},
        }),
    )
}

/// Undoes [`mark`] and terminates what was launched: the old node serves again.
fn rollback(
    ctx: &mut Context<'_>,
    session: &Session,
    node: &Node,
    pool: &NodePool,
    launched: &[LaunchDoc],
) -> Result<(), CommandError> {
    let ids: Vec<String> = launched.iter().map(|l| l.instance_id.clone()).collect();
    if !ids.is_empty() {
        launch::terminate_all(&session.cloud, &ids).map_err(super::live::aws_error)?;
    }
    let taint = drain::disruption_taint(pool.generation);
    let mut original = node.clone();
    original.taints.retain(|t| t.key != taint.key);
    patch_node(
        session,
        &node.name,
        &serde_json::json!({
            "metadata": {"annotations": {REPLACEMENT: null}},
            "spec": {"unschedulable": false, "taints": taints_json(&original, None, &taint.key)},
        }),
    )?;
    progress(
        ctx,
        &node.name,
        &format!(
            "rolled back: uncordoned, untainted; terminated {}",
            if ids.is_empty() {
                "nothing".into()
            } else {
                ids.join(", ")
            }
        ),
    );
    Ok(())
}

/// Evicts the node's pods tier by tier until none is left; returns how many were evicted.
fn drain_node(
    ctx: &mut Context<'_>,
    session: &Session,
    node: &Node,
    pool: &NodePool,
    force: bool,
    timeout: Duration,
) -> Result<usize, CommandError> {
    let started = Instant::now();
    let options = drain_options(pool, force);
    let mut evicted = 0;
    let mut backoff = Duration::from_millis(200);
    let mut last_block = String::new();
    loop {
        let (pods, deleting) = pods_on(session, &node.name)?;
        let pdbs = pdbs(session)?;
        let plan = drain::plan_drain(node, &pods, &pdbs, &deleting, now(), &options);
        let terminating = pods
            .iter()
            .filter(|p| p.terminating && !plan.skipped.iter().any(|(k, _)| *k == p.key()))
            .count();
        let next: Vec<String> = plan
            .next_tier()
            .map(|(_, pods)| pods.to_vec())
            .unwrap_or_default();
        if next.is_empty()
            && terminating == 0
            && !plan
                .blockers
                .iter()
                .any(|b| matches!(b, drain::Blocker::PodDoNotDisrupt { .. }))
        {
            progress(
                ctx,
                &node.name,
                &format!("drained ({evicted} pod(s) evicted)"),
            );
            return Ok(evicted);
        }
        for key in &next {
            let (ns, name) = key.split_once('/').unwrap_or(("default", key));
            let uid = pods.iter().find(|p| &p.key() == key).map(|p| p.uid.clone());
            match ops::evict(&session.live.client, ns, name, uid.as_deref())? {
                ops::Eviction::Evicted => {
                    evicted += 1;
                    progress(ctx, &node.name, &format!("evicted {key}"));
                }
                ops::Eviction::Gone => {}
                ops::Eviction::Blocked(message) => {
                    if message != last_block {
                        progress(
                            ctx,
                            &node.name,
                            &format!("eviction of {key} refused: {message}"),
                        );
                    }
                    last_block = message;
                }
            }
        }
        if started.elapsed() >= timeout {
            let why = if !last_block.is_empty() {
                last_block
            } else if plan.is_blocked() {
                plan.explain_blockers()
            } else {
                format!("{} pod(s) still terminating", terminating + next.len())
            };
            return Err(CommandError::remote(format!(
                "drain of {} timed out after {}s: {why}",
                node.name,
                timeout.as_secs()
            )));
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
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
