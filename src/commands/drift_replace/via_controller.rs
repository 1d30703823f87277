//! `drift replace --via-controller`: the operator-paced rollout for clusters where Karpenter
//! runs (SPEC §6). The tool does not mark, launch or drain anything itself: it deletes one
//! budget's worth of drifted NodeClaims (v1alpha5: Machines, or Nodes carrying Karpenter's
//! termination finalizer) and lets the controller do what it does for any deleted NodeClaim —
//! its finalizer taints and drains the node (PDBs, do-not-disrupt, grace periods) and
//! terminates the instance, and its provisioner launches capacity for the pods that went
//! pending. Each node is done when its Node is gone and the pods that ran on it are bound
//! again; the next node starts as soon as the budget has room.
//!
//! A re-run resumes by itself: nodes already being deleted are the controller's, never
//! deleted twice, and count against the budgets.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use super::pipeline::Settings;
use super::planning::{NodePlan, Planner};
use super::steps::{self, is_reschedulable, Claim};
use super::{render_plan, Candidate, Consent, NodeOutcome, Selection};
use crate::api::Manifests;
use crate::cli::{DriftReplaceArgs, OutputFormat};
use crate::commands::live::Session;
use crate::commands::{unix_now, Context};
use crate::disruption::budgets::{allowed_disruptions, DisruptionReason};
use crate::disruption::drain;
use crate::error::CommandError;
use crate::k8s::{coexist, ops};
use crate::model::labels::{self, TERMINATION_FINALIZER};
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
use crate::usecases::clock::Clock;

/// How soon a node held back by a PodDisruptionBudget at zero is looked at again.
const PDB_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// How often the controller's progress is looked at (as often as Karpenter polls its own).
const TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// What is deleted to hand a node to the controller.
struct Target {
    /// `NodeClaim`, `Machine` or `Node`.
    kind: &'static str,
    name: String,
    path: String,
}

/// Pods are matched across their re-creation by their controller: namespace, kind, name.
type OwnerKey = (String, String, String);

enum Stage {
    /// Deleted; the controller drains and terminates the node.
    Deleting,
    /// The node is gone; its pods are being placed again (by the controller's new capacity).
    Rescheduling(Instant),
}

struct Job {
    candidate: Candidate,
    owners: BTreeSet<OwnerKey>,
    stage: Stage,
    started: Instant,
}

/// Runs the rollout through the controller; `consent` as in [`super::run`].
pub fn run(
    ctx: &mut Context<'_>,
    session: &Session,
    args: &DriftReplaceArgs,
    m: &Manifests,
    selection: Selection,
    settings: &Settings,
    consent: &mut Consent,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let Selection {
        candidates,
        mut outcomes,
    } = selection;
    require_controller(ctx, session, args.force)?;
    let pdbs = steps::pdbs(session)?;
    let planner = Planner::new(
        m,
        &pdbs,
        &BTreeSet::new(),
        Vec::new(),
        args.force,
        unix_now(),
    );

    // Which object hands each node to the controller; what would keep it from finishing.
    let mut handover: Vec<(Candidate, Target)> = Vec::new();
    for c in candidates {
        let o = &mut outcomes[c.outcome];
        if c.record.is_some() {
            o.status = "blocked".into();
            o.detail = format!(
                "a kubectl-karpenter replacement is in progress on this node (annotation {}): finish it with `drift replace` without --via-controller",
                labels::REPLACEMENT
            );
            continue;
        }
        let target = match target_of(session, m, &c.node, &c.pool)? {
            Ok(t) => t,
            Err(why) => {
                o.status = "blocked".into();
                o.detail = why;
                continue;
            }
        };
        // The controller's drain would wait on these forever, with the node tainted.
        if let Some(NodePlan::Blocked { why, .. }) = planner.drain_blocker(&c.node, &c.pool) {
            o.status = "blocked".into();
            o.detail = why;
            continue;
        }
        o.detail = format!("delete {} {}", target.kind, target.name);
        handover.push((c, target));
    }

    // The first budget's worth starts at once; the rest follow as nodes finish.
    let pools = super::pools_of(handover.iter().map(|(c, _)| c));
    let mut slots = free_slots(&pools, &m.nodes, &[], unix_now());
    let mut starting = 0;
    for (c, _) in &handover {
        let o = &mut outcomes[c.outcome];
        let slot = slots.get_mut(&c.pool.name).and_then(|s| s.as_mut());
        if starting < settings.max_parallel && slot.as_ref().is_none_or(|n| **n > 0) {
            if let Some(n) = slot {
                *n -= 1;
            }
            starting += 1;
            o.status = "planned".into();
        } else {
            o.status = "queued".into();
        }
    }
    if starting == 0 {
        for (c, _) in &handover {
            outcomes[c.outcome].wait_for_budget(&c.pool.name);
        }
        handover.clear();
    }
    if !matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml) {
        render_plan(ctx, &outcomes)?;
    }
    if args.dry_run || handover.is_empty() {
        return Ok(outcomes);
    }
    if *consent != Consent::Given {
        let queued = handover.len() - starting;
        let question = format!(
            "Delete {starting} drifted node(s) now ({}) and let the Karpenter controller drain and replace them{}, in cluster {}?",
            handover
                .iter()
                .filter(|(c, _)| outcomes[c.outcome].status == "planned")
                .map(|(_, t)| format!("{} {}", t.kind, t.name))
                .collect::<Vec<_>>()
                .join(", "),
            if queued > 0 {
                format!(", then {queued} more as the disruption budgets allow")
            } else {
                String::new()
            },
            session.info.name
        );
        if !super::ask(ctx, &question, consent)? {
            return Ok(outcomes);
        }
    }
    pace(ctx, session, handover, &pools, &mut outcomes, settings)?;
    Ok(outcomes)
}

/// Refuses (exit 4) when no controller would act on what is deleted, unless `--force`.
fn require_controller(
    ctx: &mut Context<'_>,
    session: &Session,
    force: bool,
) -> Result<(), CommandError> {
    let running = coexist::find_controllers(session.cluster)?
        .into_iter()
        .any(|(c, _)| c.ready_replicas > 0);
    if running {
        return Ok(());
    }
    let what = "no Karpenter controller is running in the cluster (no controller Deployment with ready replicas): nothing would drain and replace what --via-controller deletes";
    if force {
        ctx.warn(&format!("{what}; --force given, going ahead"));
        return Ok(());
    }
    Err(CommandError::refused(what).with_hint(
        "run `drift replace` without --via-controller to replace the nodes with this tool",
    ))
}

/// The NodeClaim (Machine) of the node, or — for v1alpha5 before Machines — the Node itself
/// when Karpenter's finalizer is on it; `Err(why)` when the controller does not own the node.
fn target_of(
    session: &Session,
    m: &Manifests,
    node: &Node,
    pool: &NodePool,
) -> Result<Result<Target, String>, CommandError> {
    if let Some(claim) = Claim::of(m, node) {
        if claim.deleting {
            return Ok(Err(format!(
                "its {} {} is being deleted already: the controller has it",
                claim.kind, claim.name
            )));
        }
        return Ok(Ok(Target {
            kind: claim.kind,
            name: claim.name,
            path: claim.path,
        }));
    }
    if pool.generation == Some(ApiGeneration::V1Alpha5) {
        let path = format!("/api/v1/nodes/{}", node.name);
        let live: Option<serde_json::Value> = ops::get(session.cluster, &path)?;
        let finalized = live
            .as_ref()
            .and_then(|n| n.pointer("/metadata/finalizers"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x == TERMINATION_FINALIZER));
        if finalized {
            return Ok(Ok(Target {
                kind: "Node",
                name: node.name.clone(),
                path,
            }));
        }
    }
    Ok(Err(format!(
        "no {} owns this node and it lacks Karpenter's {TERMINATION_FINALIZER} finalizer, so the controller would not drain or replace it (launched by kubectl-karpenter?): replace it without --via-controller",
        if pool.generation == Some(ApiGeneration::V1Alpha5) {
            "Machine"
        } else {
            "NodeClaim"
        }
    )))
}

/// How many more nodes of each pool may be handed over now: Karpenter's own budget arithmetic
/// (nodes being deleted and NotReady nodes count as disrupting), where the nodes this run
/// handed over count as disrupting until their pods are placed again.
fn free_slots(
    pools: &[NodePool],
    nodes: &[Node],
    active: &[Job],
    now: i64,
) -> BTreeMap<String, Option<u32>> {
    let mine: BTreeSet<&str> = active
        .iter()
        .map(|j| j.candidate.node.name.as_str())
        .collect();
    pools
        .iter()
        .map(|pool| {
            let others = nodes.iter().filter(|n| !mine.contains(n.name.as_str()));
            let allowance = allowed_disruptions(pool, others, DisruptionReason::Drifted, now);
            let in_progress = active
                .iter()
                .filter(|j| j.candidate.pool.name == pool.name)
                .count() as u32;
            // The controller's own disruptions in flight (its disruption taint, not deleting
            // yet: replacements still launching) take from the same budget.
            let taint = drain::disruption_taint(pool.generation);
            let controller = nodes
                .iter()
                .filter(|n| {
                    !mine.contains(n.name.as_str())
                        && n.node_pool() == Some(pool.name.as_str())
                        && n.ready
                        && !n.deleting
                        && n.taints.iter().any(|t| t.key == taint.key)
                })
                .count() as u32;
            (
                pool.name.clone(),
                allowance
                    .allowed
                    .map(|n| n.saturating_sub(in_progress + controller)),
            )
        })
        .collect()
}

/// Hands the nodes over at the budget's pace and follows each until it is replaced.
fn pace(
    ctx: &mut Context<'_>,
    session: &Session,
    handover: Vec<(Candidate, Target)>,
    pools: &[NodePool],
    outcomes: &mut [NodeOutcome],
    settings: &Settings,
) -> Result<(), CommandError> {
    let mut queue: VecDeque<(Candidate, Target)> = handover.into();
    let mut active: Vec<Job> = Vec::new();
    let mut failed: Option<String> = None;
    let force = settings.force;
    loop {
        let nodes = steps::live_nodes(session)?;
        let unbound = if active
            .iter()
            .any(|j| matches!(j.stage, Stage::Rescheduling(_)))
        {
            unbound_owners(session)?
        } else {
            BTreeSet::new()
        };
        let mut i = 0;
        while i < active.len() {
            let job = &mut active[i];
            let o = &mut outcomes[job.candidate.outcome];
            let name = job.candidate.node.name.clone();
            let finished = match job.stage {
                Stage::Deleting => {
                    if nodes.iter().any(|n| n.name == name) {
                        if job.started.elapsed() >= settings.drain_timeout {
                            o.status = "failed".into();
                            o.detail = format!(
                                "still being drained by the controller after {}s (a PDB or a do-not-disrupt pod?); the controller goes on without us",
                                settings.drain_timeout.as_secs()
                            );
                            true
                        } else {
                            false
                        }
                    } else {
                        steps::progress(
                            ctx,
                            &name,
                            "gone (drained and terminated by the controller)",
                        );
                        job.stage = Stage::Rescheduling(Instant::now());
                        false
                    }
                }
                Stage::Rescheduling(since) => {
                    let waiting = job.owners.intersection(&unbound).count();
                    if waiting == 0 {
                        steps::progress(ctx, &name, "its pods are placed again");
                        o.status = "replaced".into();
                        o.seconds = (job.started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
                        true
                    } else if since.elapsed() >= settings.ready_timeout {
                        o.status = "failed".into();
                        o.detail = format!(
                            "pods of {waiting} workload(s) still pending {}s after the node went: is the controller provisioning?",
                            settings.ready_timeout.as_secs()
                        );
                        true
                    } else {
                        false
                    }
                }
            };
            if finished {
                if outcomes[active[i].candidate.outcome].status == "failed" {
                    failed = Some(name);
                }
                active.remove(i);
            } else {
                i += 1;
            }
        }
        // Ctrl-C (under --watch): the nodes handed over are followed to the end, no other goes.
        // Neither after a node failed: the controller is not keeping up (a PDB, limits, no
        // capacity), and handing it more nodes would strand more pods.
        let stopping = session.clock.stop_requested() || failed.is_some();
        if !stopping && !queue.is_empty() && active.len() < settings.max_parallel {
            let mut slots = free_slots(pools, &nodes, &active, unix_now());
            let mut rest = VecDeque::new();
            for (mut c, target) in queue.drain(..) {
                let slot = slots.get_mut(&c.pool.name).and_then(|s| s.as_mut());
                let due = c.not_before.is_none_or(|t| t <= Instant::now());
                if active.len() >= settings.max_parallel
                    || slot.as_ref().is_some_and(|n| **n == 0)
                    || !due
                {
                    rest.push_back((c, target));
                    continue;
                }
                if let Some(n) = slot {
                    *n -= 1;
                }
                // Read again just before the hand-over (it cannot be undone): a pod that gained
                // do-not-disrupt, or a PDB at zero, would hold the controller's drain for ever.
                let (pods, blocker) = steps::live_drain_blocker(session, &c.node, &c.pool, force)?;
                if let Some(steps::DrainBlock { why, pdb_only }) = blocker {
                    if let Some(n) = slots.get_mut(&c.pool.name).and_then(|s| s.as_mut()) {
                        *n += 1;
                    }
                    let since = *c.pdb_wait.get_or_insert_with(Instant::now);
                    let o = &mut outcomes[c.outcome];
                    if pdb_only && since.elapsed() < settings.drain_timeout {
                        // The last node's pods may still be starting: wait for their budget.
                        o.detail = format!("waiting: {why}");
                        c.not_before = Some(Instant::now() + PDB_RETRY);
                        rest.push_back((c, target));
                    } else {
                        o.status = "blocked".into();
                        o.detail = why;
                    }
                    continue;
                }
                match ops::delete(session.cluster, &target.path, None) {
                    Ok(_) => {}
                    Err(e) if e.status() == Some(404) => {}
                    Err(e) => return Err(e.into()),
                }
                steps::progress(
                    ctx,
                    &c.node.name,
                    &format!(
                        "deleted {} {}: the controller drains and terminates it",
                        target.kind, target.name
                    ),
                );
                let owners = pods
                    .iter()
                    .filter(|p| is_reschedulable(p))
                    .filter_map(|p| {
                        p.owner
                            .as_ref()
                            .map(|o| (p.namespace.clone(), o.kind.clone(), o.name.clone()))
                    })
                    .collect();
                active.push(Job {
                    candidate: c,
                    owners,
                    stage: Stage::Deleting,
                    started: Instant::now(),
                });
            }
            queue = rest;
        }
        // Nodes held back by a PDB keep the loop going, up to --timeout each.
        let expired = |c: &Candidate| {
            c.pdb_wait
                .is_some_and(|t| t.elapsed() >= settings.drain_timeout)
        };
        for (c, _) in queue.iter().filter(|(c, _)| expired(c)) {
            let o = &mut outcomes[c.outcome];
            o.status = "blocked".into();
            o.detail = o.detail.trim_start_matches("waiting: ").to_string();
        }
        queue.retain(|(c, _)| !expired(c));
        let holding = !stopping && queue.iter().any(|(c, _)| c.pdb_wait.is_some());
        if active.is_empty() && !holding {
            let why = failed
                .as_ref()
                .map(|node| format!("not handed over: {node} failed"));
            for (c, _) in queue {
                outcomes[c.outcome].left_in_queue(why.as_deref(), stopping, &c.pool.name);
            }
            return Ok(());
        }
        std::thread::sleep(TICK);
    }
}

/// The controllers (namespace, kind, name) of the pods no node holds yet.
fn unbound_owners(session: &Session) -> Result<BTreeSet<OwnerKey>, CommandError> {
    let mut owners = BTreeSet::new();
    ops::list(
        session.cluster,
        "/api/v1/pods",
        &ops::ListQuery {
            field_selector: Some("spec.nodeName="),
            ..Default::default()
        },
        |p: crate::api::core::Pod| {
            if let Ok(pod) = crate::api::live::live_pod(&p) {
                if let (Some(o), false) = (&pod.owner, pod.is_terminal()) {
                    owners.insert((pod.namespace.clone(), o.kind.clone(), o.name.clone()));
                }
            }
        },
    )?;
    Ok(owners)
}
