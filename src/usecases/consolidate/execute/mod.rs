//! `consolidate --yes` / `--dry-run` / `--watch` (docs/spec.md §9, docs/consolidation.md
//! "Doing it"): the engine's decision carried out through `drift replace`'s pipeline
//! (`usecases::replace::pipeline`) — never a second pipeline.
//!
//! One round: read the cluster; finish first any consolidation or expiration a killed run left
//! on a node (its record names the method); else run the engine's **first pass** (what
//! Karpenter would start now: one command) and turn its action into the pipeline's
//! [`Action`]s, one per node, each with its typed method — expiration → `expiration`,
//! emptiness → `empty-delete`, a delete → `consolidation-delete`, a replacement →
//! `consolidation-replace` with the one NodeClaim chosen ([`Chosen`]). The pipeline plans each
//! node again right before it starts and refuses what no longer holds (a do-not-disrupt or a
//! PDB at zero that appeared, pods that no longer fit, a plan that needs more than the chosen
//! NodeClaim), keeps the NodePools' budgets for the method's reason, and records every step on
//! the node. Then the next round decides again on the cluster as it is now, never from a stale
//! list, until the engine finds nothing more.
//!
//! - **Expiration**: every expired node the engine names, each replaced by whatever its pods
//!   need (several NodeClaims if need be), launched and Ready before it drains — Karpenter's
//!   provisioner would launch for the evicted pods afterwards; launching first means no pod
//!   waits longer than a launch. v1 pools: forceful (no budget, no do-not-disrupt or PDB check
//!   before it starts, pods that fit nowhere go pending; the drain still respects PDBs);
//!   v1beta1/v1alpha5 pools: graceful and budgeted, like drift.
//! - **Multi-node consolidation** (several nodes, one decision) is ONE command, as Karpenter's
//!   queue runs it: every node marked together, one replacement NodeClaim (none for a delete)
//!   launched for all their pods by the first node and Ready before any drains, all rolled back
//!   when it fails; the record on each node names the command, so a killed run resumes it whole.
//! - **Drift** is not carried out here: it is `drift replace`'s, which evaluates it afresh
//!   rather than trusting a controller's stale `Drifted` condition; the engine runs with it off.
//!   So is StaticDrift (a static pool's drifted node replaced by a bare replica): `drift
//!   replace` takes it with method `static-drift`.

use std::collections::{BTreeMap, BTreeSet};

use super::{build_input, gone_ids, gone_instances, leave_out_gone, Config, Controller};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::consolidation::{
    self, Action as Decided, ConsolidationReport, Decision, Method as Decider,
};
use crate::disruption::replace::{Action, Chosen, Method, Record, Status, Step, REPLACEMENT};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::node::{GoneInstance, Node};
use crate::scheduling::Policies;
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::provisioning::input::CatalogSizing;
use crate::usecases::replace::pipeline::{self, Preview};
use crate::usecases::replace::{Event, NodeOutcome, Settings};
use crate::usecases::Sink;

/// What one round found to do.
#[derive(Debug, Clone)]
pub struct Round {
    /// The cluster as read for it.
    pub manifests: Manifests,
    /// The engine's first pass (`None` when the round resumes recorded work instead).
    pub report: Option<ConsolidationReport>,
    /// The pipeline's actions: the first pass's action, node by node, or the nodes resumed.
    pub actions: Vec<Action>,
    /// The nodes whose instance EC2 said was gone or going, read for it (no capacity).
    pub gone: BTreeMap<String, GoneInstance>,
    /// The `MinValuesPolicy` and `PreferencePolicy` decided under (the flags, else the running
    /// controller's).
    pub policies: Policies,
    /// What reading the cluster has to tell (buffers that could not be read or provision
    /// nothing), one line each.
    pub warnings: Vec<String>,
    /// The selected nodes a killed `drift replace` left in replacement (node, record as
    /// written): not candidates, not resumed here — `drift replace`'s to resume.
    pub drift_records: Vec<(String, String)>,
}

impl Round {
    /// Whether the round resumes what a killed run left.
    pub fn resumes(&self) -> bool {
        self.report.is_none()
    }

    /// `settings` for the pipeline's re-plans of this round: the gone nodes' instances are no
    /// capacity there either (`Settings::gone_instances`, as `drift replace`'s ghosts), and
    /// they follow the policy the round was decided under.
    pub fn settings(&self, settings: &Settings) -> Settings {
        let mut settings = settings.clone();
        settings.gone_instances.extend(gone_ids(&self.gone));
        settings.policies = self.policies;
        settings
    }
}

/// How a run decides: what to act on, and the controller whose release and gates the engine
/// follows (one runs only with `--force`; else each pool follows its API generation).
#[derive(Debug, Clone, Default)]
pub struct Deciding {
    /// Selection and feature-gate flags (`now` is the clock's, every round).
    pub config: Config,
    /// The running controller, if any.
    pub controller: Option<Controller>,
}

impl Deciding {
    /// Sets `live` up as the decision is made: the `ReservedCapacity` gate off (the flag's, else
    /// the controller's) launches in the open mode, and the pipeline's re-plans size types with
    /// the settings the decision uses.
    pub fn prepare<C: Cluster, P: Compute, K: Clock + ?Sized>(&self, live: &mut Live<'_, C, P, K>) {
        let controller = self.controller.as_ref();
        let gate = super::reserved_capacity_gate(&self.config, controller);
        live.launch_mode = crate::cloud::types::LaunchMode::of_gate(gate);
        live.type_settings = super::type_settings(&self.config, controller);
    }
}

/// Reads the cluster and decides the first round: a node named or a NodePool given that does
/// not exist is bad input.
pub fn decide<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    deciding: &Deciding,
) -> Result<Round, CommandError> {
    decide_round(live, deciding, &BTreeSet::new(), true)
}

/// Reads the cluster and decides one round. `held_back`: nodes an earlier round of this run
/// could not carry out (blocked, failed) — left alone, so the engine decides around them.
/// `check`: the selection is checked (the first round; later, a named node may have gone).
fn decide_round<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    deciding: &Deciding,
    held_back: &BTreeSet<String>,
    check: bool,
) -> Result<Round, CommandError> {
    let config = &deciding.config;
    let mut manifests = super::read_with_pdbs(live.cluster)?;
    // The buffers as the report reads them, so the executed decisions are the reported ones.
    let controller = deciding.controller.as_ref();
    let warnings = super::read_live_buffers(live.cluster, config, controller, &mut manifests)?;
    if check {
        check_selection(&manifests, config)?;
    }
    // Nodes whose instance is gone: no capacity, no candidate (docs/reliability.md).
    let gone = gone_instances(live.cloud, &manifests)?;
    let resumed = resumed(&manifests, config, held_back);
    let drift_records = drift_records(&manifests, config);
    let policies = super::policies(config, deciding.controller.as_ref());
    if !resumed.is_empty() {
        return Ok(Round {
            manifests,
            report: None,
            actions: resumed,
            gone,
            policies,
            warnings,
            drift_records,
        });
    }
    let mut copy = manifests.clone();
    let region = live.cloud.region();
    // Replacements are offered in the zones of their class's subnets, as the provisioner's (a
    // class whose subnets cannot be read keeps its status: its launch names what failed).
    let _unread = live.with_subnet_zones(&mut copy.node_classes, &copy.node_pools);
    // Reservations as the provisioner reads them: a reserved node's price, reserved replacements
    // (none read with the `ReservedCapacity` gate off: `build_input` drops the terms anyway).
    let gate = super::reserved_capacity_gate(config, deciding.controller.as_ref());
    crate::usecases::provisioning::input::drop_reservation_terms(&mut copy, gate);
    let (catalog, _) = live.planning_catalog(&copy.node_classes)?;
    let mut sizing = CatalogSizing::new(&catalog, &region);
    // Decided at the clock's now, every round.
    let now = Config {
        now: live.clock.now(),
        ..config.clone()
    };
    let mut input = build_input(&mut copy, &mut sizing, &now, deciding.controller.as_ref())?;
    leave_out_gone(&mut input, &gone);
    // Drift is `drift replace`'s, not carried out here.
    input.feature_gates.drift = false;
    for n in &mut input.nodes {
        let candidate = selected(&n.node, config)
            && !held_back.contains(&n.node.name)
            && Record::of(&n.node).is_none();
        if let Some(claim) = &mut n.claim {
            claim.drifted = None;
            if !candidate {
                // v1 expiration ignores nominations: not expired here either.
                claim.expire_after = None;
            }
        }
        // Nodes not selected, held back, or in some replacement are not candidates (they
        // still take pods, as nominated nodes do).
        if !candidate {
            n.nominated = true;
        }
    }
    let report = consolidation::evaluate_first_pass(input);
    let actions = report
        .actions
        .iter()
        .find(|a| !matches!(a.method, Decider::Drift | Decider::StaticDrift))
        .map(|a| actions_for(&manifests, a))
        .unwrap_or_default();
    Ok(Round {
        manifests,
        report: Some(report),
        actions,
        gone,
        policies,
        warnings,
        drift_records,
    })
}

/// The `drift replace` records a run has told of (node → record as written), kept by the
/// caller across `--watch`'s passes: a record is told once while it stays as it is, again
/// when it changes (another attempt of `drift replace` writes another), and forgotten once
/// its node no longer has one.
#[derive(Debug, Clone, Default)]
pub struct ToldRecords(BTreeMap<String, String>);

impl ToldRecords {
    /// The records of `round` not told yet (or changed since), each noted as told; the nodes
    /// that no longer have one are forgotten.
    fn new_in(&mut self, round: &Round) -> Vec<(String, String)> {
        self.0
            .retain(|node, _| round.drift_records.iter().any(|(n, _)| n == node));
        round
            .drift_records
            .iter()
            .filter(|(node, record)| {
                self.0.insert(node.clone(), record.clone()).as_ref() != Some(record)
            })
            .cloned()
            .collect()
    }
}

/// Carries out rounds until the engine finds nothing more (or Ctrl-C, or a failure). Before a
/// round's first change `proceed` is asked (it shows the round; `false` ends the run with
/// nothing of that round done). Every node's outcome, in the order the rounds met them.
/// `records`: the drift records told already (by this run, or by earlier `--watch` passes).
pub fn execute<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &mut Live<'_, C, P, K>,
    deciding: &Deciding,
    settings: &Settings,
    records: &mut ToldRecords,
    events: &mut dyn Sink<Event>,
    proceed: &mut dyn FnMut(&Round, &Preview) -> Result<bool, CommandError>,
) -> Result<Vec<NodeOutcome>, CommandError> {
    let mut outcomes: Vec<NodeOutcome> = Vec::new();
    let mut held_back = BTreeSet::new();
    // After a node failed, only expiration goes on: each expired NodeClaim goes by itself in
    // Karpenter (core v1.14.1 `nodeclaim/expiration/controller.go` deletes every one, whatever
    // another's drain does), while consolidation stops rather than churn.
    let mut failed_before = false;
    let mut rounds = 0usize;
    let mut told = BTreeSet::new();
    loop {
        if live.clock.stop_requested() {
            return Ok(outcomes);
        }
        let round = decide_round(live, deciding, &held_back, rounds == 0)?;
        // Each line once per run, not once per round.
        for line in &round.warnings {
            if told.insert(line.clone()) {
                events.emit(Event::Warning(line.clone()));
            }
        }
        for (node, record) in records.new_in(&round) {
            events.emit(Event::LeftToDriftReplace { node, record });
        }
        if round.actions.is_empty() {
            return Ok(outcomes);
        }
        if failed_before && round.actions.iter().any(|a| a.method != Method::Expiration) {
            return Ok(outcomes);
        }
        // Every round removes a node or holds one back: this ends.
        rounds += 1;
        if rounds > round.manifests.nodes.len() + 1 {
            return Ok(outcomes);
        }
        let settings = &round.settings(settings);
        let preview = pipeline::preview(live, &round.manifests, round.actions.clone(), settings)?;
        if !proceed(&round, &preview)? {
            outcomes.extend(preview.into_outcomes());
            return Ok(outcomes);
        }
        let done = if preview.starting().is_empty() {
            preview.into_outcomes()
        } else {
            pipeline::run(live, preview, settings, events)?
        };
        for o in &done {
            match o.status {
                Status::Replaced | Status::Deleted | Status::Gone => {}
                Status::RolledBack | Status::Failed => {
                    failed_before = true;
                    held_back.insert(o.node.clone());
                }
                _ => {
                    held_back.insert(o.node.clone());
                }
            }
        }
        outcomes.extend(done);
    }
}

/// Input errors: a named node that is not a managed node, a NodePool that does not exist.
fn check_selection(m: &Manifests, config: &Config) -> Result<(), CommandError> {
    for name in &config.nodepools {
        if !m.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    for name in &config.nodes {
        if !m
            .nodes
            .iter()
            .any(|n| &n.name == name && n.node_pool().is_some())
        {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name)"
            )));
        }
    }
    Ok(())
}

fn selected(node: &Node, config: &Config) -> bool {
    (config.nodes.is_empty() || config.nodes.contains(&node.name))
        && (config.nodepools.is_empty()
            || node
                .node_pool()
                .is_some_and(|p| config.nodepools.iter().any(|x| x == p)))
}

/// The selected nodes a killed run left in consolidation or expiration (their record names the
/// method), to finish before anything new is decided. Drift's records are `drift replace`'s.
/// A command's nodes go on together: one the killed run did not mark yet (it died between the
/// marks) joins the others, unmarked.
fn resumed(m: &Manifests, config: &Config, held_back: &BTreeSet<String>) -> Vec<Action> {
    let mut out: Vec<Action> = Vec::new();
    for node in &m.nodes {
        let Some(record) = Record::of(node) else {
            continue;
        };
        if matches!(record.method, Method::Drift | Method::StaticDrift)
            || !selected(node, config)
            || held_back.contains(&node.name)
            || (node.deleting && record.step != Step::Drained)
        {
            continue;
        }
        if let Some(mut action) = action(m, node, record.method, None, record.reason.clone()) {
            action.command = record.command;
            out.push(action);
        }
    }
    let unmarked: Vec<Action> = out
        .iter()
        .filter(|a| a.in_command())
        .flat_map(|a| a.command.iter().map(move |name| (a, name)))
        .filter(|(_, name)| !out.iter().any(|o| &o.node.name == *name))
        .filter_map(|(a, name)| {
            let node = m.nodes.iter().find(|n| &n.name == name)?;
            let free = Record::of(node).is_none() && !node.deleting && !held_back.contains(name);
            let joined = action(m, node, a.method, None, a.reason.clone())?;
            free.then_some(Action {
                command: a.command.clone(),
                ..joined
            })
        })
        .collect();
    for a in unmarked {
        if !out.iter().any(|o| o.node.name == a.node.name) {
            out.push(a);
        }
    }
    out
}

/// The selected nodes whose record is a `drift replace` run's (method `drift`/`static-drift`):
/// `resumed` leaves them and they are no candidates, so the run says whose they are and how they
/// go on (docs/consolidation.md "Resumable").
fn drift_records(m: &Manifests, config: &Config) -> Vec<(String, String)> {
    m.nodes
        .iter()
        .filter(|node| selected(node, config))
        .filter(|node| {
            Record::of(node)
                .is_some_and(|r| matches!(r.method, Method::Drift | Method::StaticDrift))
        })
        .map(|node| {
            let record = node
                .annotations
                .get(REPLACEMENT)
                .cloned()
                .unwrap_or_default();
            (node.name.clone(), record)
        })
        .collect()
}

/// The pipeline's actions for the engine's action, its nodes in order.
fn actions_for(m: &Manifests, decided: &Decided) -> Vec<Action> {
    let reason = reason_text(decided);
    let (method, chosen) = match (decided.method, decided.decision) {
        // Whatever the engine's decision (v1: deleted, the provisioner launching for its
        // pods), replacements for its pods are launched and Ready before it drains.
        (Decider::Expiration, _) => (Method::Expiration, None),
        // Not decided here (drift is off), but should one come: a bare replica, as `drift
        // replace` does it.
        (Decider::StaticDrift, _) => (Method::StaticDrift, None),
        (Decider::Emptiness, _) => (Method::EmptyDelete, None),
        (_, Decision::Delete) => (Method::ConsolidationDelete, None),
        (_, Decision::Replace) => (
            Method::ConsolidationReplace,
            decided.replacement.as_ref().map(|r| Chosen {
                node_pool: r.node_pool.clone(),
                instance_types: r.instance_types.clone(),
                capacity_type: r.capacity_type.clone(),
                zones: r.zones.clone(),
            }),
        ),
    };
    // Several nodes of one consolidation go as one command (see the module's comment);
    // expired nodes each go by themselves.
    let command = match decided.method {
        Decider::Multi | Decider::Single if decided.nodes.len() > 1 => decided.nodes.clone(),
        _ => Vec::new(),
    };
    decided
        .nodes
        .iter()
        .filter_map(|name| m.nodes.iter().find(|n| &n.name == name))
        .filter_map(|node| action(m, node, method, chosen.clone(), reason.clone()))
        .map(|a| Action {
            command: command.clone(),
            ..a
        })
        .collect()
}

fn action(
    m: &Manifests,
    node: &Node,
    method: Method,
    chosen: Option<Chosen>,
    reason: String,
) -> Option<Action> {
    let pool = node
        .node_pool()
        .and_then(|p| m.node_pools.iter().find(|x| x.name == p))?;
    Some(Action {
        node: node.clone(),
        pool: pool.clone(),
        method,
        chosen,
        reason,
        command: Vec::new(),
    })
}

/// The reason shown and recorded: the engine's method and what it saves, e.g.
/// `single: replace with m5.large, saves $0.0960/h`.
fn reason_text(a: &Decided) -> String {
    if a.method == Decider::Expiration {
        return expiration_text(a);
    }
    let what = match (&a.decision, &a.replacement) {
        (Decision::Replace, Some(r)) => format!("replace with {}", r.instance_type),
        (Decision::Replace, None) => "replace".to_string(),
        (Decision::Delete, _) => "delete".to_string(),
    };
    let with = if a.nodes.len() > 1 {
        format!(" ({} nodes together)", a.nodes.len())
    } else {
        String::new()
    };
    format!(
        "{}: {what}{with}, saves ${:.4}/h",
        a.method, a.savings_per_hour
    )
}

/// An expiration's reason: `expiration: expireAfter reached` and what Karpenter would launch
/// for its pods, e.g. `, replacements c6a.large, c6a.xlarge`.
fn expiration_text(a: &Decided) -> String {
    let types: Vec<&str> = a
        .replacement
        .iter()
        .chain(&a.additional_replacements)
        .map(|r| r.instance_type.as_str())
        .collect();
    if types.is_empty() {
        "expiration: expireAfter reached".to_string()
    } else {
        format!(
            "expiration: expireAfter reached, replacements {}",
            types.join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
