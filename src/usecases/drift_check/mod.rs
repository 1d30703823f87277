//! `drift check`: which managed nodes drifted, and why (docs/spec.md §4). Three steps with plain values
//! between them:
//!
//! 1. gather a [`DriftSnapshot`] — [`gather`] from a live cluster snapshot and EC2 (every class
//!    resolved live), or [`gather_offline`] from manifests;
//! 2. [`check`]: keep the selected nodes ([`select_nodes`]) and [`drift::evaluate`] them into a
//!    [`DriftReport`];
//! 3. optionally [`mark`] the verdicts on the nodes.
//!
//! Rendering is the CLI's (`cli::render::drift`).

mod live;
mod mark;
mod offline;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use live::{ca_bundle, gather};
pub use mark::{mark, provisioner_mark_warning};
pub use offline::{gather_offline, GatherNote, Offline};

use super::ami::{VersionSource, ASSUMED_KUBERNETES_VERSION};
use crate::api::Manifests;
use crate::cloud::ami::KubeVersion;
use crate::disruption::budgets::TerminatingInstances;
use crate::drift::{self, DriftSnapshot, Evaluation, ManagedNode};
use crate::error::CommandError;
use crate::model::nodepool::NodePool;
use crate::model::selector::LabelSelector;

/// The plain configuration `drift check` runs on.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Only these nodes (empty: all managed nodes).
    pub nodes: Vec<String>,
    /// Only nodes of these pools.
    pub nodepools: Vec<String>,
    /// Only nodes matching this selector.
    pub selector: Option<LabelSelector>,
    /// Offline SSM values, name → value.
    pub ssm_params: BTreeMap<String, String>,
    /// Kubernetes version and where it came from.
    pub kubernetes_version: Option<(KubeVersion, VersionSource)>,
    /// `--catalog FILE`.
    pub catalog: Option<String>,
    /// `--mark`.
    pub mark: bool,
}

/// Where the facts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Manifests.
    Offline,
    /// Cluster + EC2.
    Live,
    /// Cluster + EC2, with the NodePools and node classes of `-f` files in place of the
    /// cluster's: which nodes would drift if they were applied.
    #[serde(rename = "what-if")]
    WhatIf,
}

/// The verdicts of the selected nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftReport {
    /// Where the facts came from.
    pub mode: Mode,
    /// The Kubernetes version AMI aliases were resolved for, when it mattered.
    pub kubernetes_version: Option<KubeVersion>,
    /// Verdicts, counts and notes.
    pub evaluation: Evaluation,
    /// What-if: per pool with drifted nodes, how fast its budgets let them be replaced.
    pub rollout: Vec<PoolRollout>,
}

/// How a pool's drifted nodes would be rolled out at its `Drifted` budget, now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolRollout {
    /// The pool.
    pub node_pool: String,
    /// Its nodes that would drift.
    pub drifted: usize,
    /// Its nodes (managed, initialized), as budgets count them.
    pub nodes: u32,
    /// How many may be replaced at once now (`None`: no budget limits it).
    pub at_once: Option<u32>,
    /// Rounds of replacement at that pace (`None` when the budget allows none now).
    pub rounds: Option<usize>,
}

/// [`PoolRollout`]s of the pools with drifted nodes in `evaluation`, at `now`.
/// A node whose NodeClaim's instance is already terminating is left out of the count (core
/// v1.14.1: `disruption/helpers.go BuildDisruptionBudgetMapping`).
pub fn rollout(snapshot: &DriftSnapshot, evaluation: &Evaluation) -> Vec<PoolRollout> {
    let terminating =
        TerminatingInstances::of(snapshot.nodes.iter().filter_map(|n| n.node_claim.as_ref()));
    let nodes = terminating.counted(snapshot.nodes.iter().map(|n| &n.node));
    snapshot
        .node_pools
        .iter()
        .filter_map(|pool| {
            let drifted = evaluation
                .nodes
                .iter()
                .filter(|n| n.drifted && n.node_pool.as_deref() == Some(pool.name.as_str()))
                .count();
            if drifted == 0 {
                return None;
            }
            let allowance = crate::disruption::budgets::allowed_disruptions(
                pool,
                &nodes,
                crate::disruption::budgets::DisruptionReason::Drifted,
                snapshot.now,
            );
            let rounds = match allowance.allowed {
                None => Some(1),
                Some(0) => None,
                Some(n) => Some(drifted.div_ceil(n as usize)),
            };
            Some(PoolRollout {
                node_pool: pool.name.clone(),
                drifted,
                nodes: allowance.counted_nodes,
                at_once: allowance.allowed,
                rounds,
            })
        })
        .collect()
}

impl DriftReport {
    /// Whether any selected node drifted (exit 1).
    pub fn any_drifted(&self) -> bool {
        self.evaluation.any_drifted()
    }
}

/// Per instance type, its offerings' requirements (zone, capacity type, reservation).
pub type Offered = BTreeMap<String, Vec<crate::model::requirements::Requirements>>;

/// The names of `types`, and their offerings' requirements, for the InstanceTypeNotFound check.
fn offered(types: &[crate::model::instance_type::InstanceType]) -> (BTreeSet<String>, Offered) {
    let names = types.iter().map(|t| t.name.clone()).collect();
    let offerings = types
        .iter()
        .map(|t| {
            let reqs = t.offerings.iter().map(|o| o.requirements()).collect();
            (t.name.clone(), reqs)
        })
        .collect();
    (names, offerings)
}

/// What-if: the cluster's objects with the NodePools and node classes of `files` in place of
/// the ones of the same name (and added when new). Errors when the files hold nodes or
/// NodeClaims (that is an offline check) or nothing to put in place.
pub fn what_if(cluster: &mut Manifests, files: &Manifests) -> Result<(), CommandError> {
    if files.node_pools.is_empty() && files.node_classes.is_empty() {
        return Err(CommandError::input(
            "-f with a live cluster (what-if) takes NodePools and node classes to check the cluster's nodes against; the files hold none",
        ));
    }
    for pool in &files.node_pools {
        cluster.node_pools.retain(|p| p.name != pool.name);
        cluster.node_pools.push(pool.clone());
    }
    for class in &files.node_classes {
        cluster
            .node_classes
            .retain(|c| !(c.name == class.name && c.kind == class.kind));
        cluster.node_classes.push(class.clone());
    }
    Ok(())
}

/// The snapshot of `nodes` (paired by [`drift::pair_nodes`]) with the pools and classes of
/// `manifests`; the facts are the gatherer's to add.
pub fn snapshot_of(manifests: &Manifests, nodes: Vec<ManagedNode>, now: i64) -> DriftSnapshot {
    DriftSnapshot {
        nodes,
        node_pools: manifests.node_pools.clone(),
        node_classes: manifests.node_classes.clone(),
        now,
        ..DriftSnapshot::default()
    }
}

/// The AMI family of a pool's class (the catalog's instance types depend on it); AL2023, v1's
/// default, when the class is not known.
fn ami_family(manifests: &Manifests, pool: &NodePool) -> String {
    pool.node_class_ref
        .as_ref()
        .and_then(|r| manifests.node_classes.iter().find(|c| c.name == r.name))
        .and_then(|c| c.ami_family.clone())
        .unwrap_or_else(|| "AL2023".into())
}

/// Keeps the selected nodes and evaluates them.
pub fn check(
    config: &Config,
    mut snapshot: DriftSnapshot,
    mode: Mode,
    kubernetes_version: Option<KubeVersion>,
) -> Result<DriftReport, CommandError> {
    select_nodes(config, &mut snapshot)?;
    let evaluation = drift::evaluate(&snapshot);
    let rollout = if mode == Mode::WhatIf {
        rollout(&snapshot, &evaluation)
    } else {
        Vec::new()
    };
    Ok(DriftReport {
        mode,
        kubernetes_version,
        evaluation,
        rollout,
    })
}

/// Keeps the selected nodes; unknown names and pools are input errors.
pub fn select_nodes(config: &Config, snapshot: &mut DriftSnapshot) -> Result<(), CommandError> {
    for name in &config.nodepools {
        if !snapshot.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    for name in &config.nodes {
        if !snapshot.nodes.iter().any(|n| &n.node.name == name) {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node of the input (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name, or launched by this tool)"
            )));
        }
    }
    snapshot.nodes.retain(|n| {
        (config.nodes.is_empty() || config.nodes.contains(&n.node.name))
            && (config.nodepools.is_empty()
                || n.pool_name()
                    .is_some_and(|p| config.nodepools.iter().any(|x| x == p)))
            && config
                .selector
                .as_ref()
                .is_none_or(|s| s.matches(&n.node.labels))
    });
    Ok(())
}

/// The Kubernetes version for aliases offline: the flag, else the one every `--ssm-param` path
/// names, else the assumed default.
pub fn kubernetes_version(config: &Config) -> (KubeVersion, VersionSource) {
    if let Some(v) = config.kubernetes_version {
        return v;
    }
    let mut seen = BTreeSet::new();
    for name in config.ssm_params.keys() {
        let segments: Vec<&str> = name.split('/').collect();
        for (i, s) in segments.iter().enumerate() {
            let candidate = match *s {
                "optimized-ami" => segments.get(i + 1).copied(),
                _ => s
                    .strip_prefix("aws-k8s-")
                    .map(|v| v.trim_end_matches("-nvidia")),
            };
            if let Some(v) = candidate.and_then(|c| KubeVersion::parse(c).ok()) {
                seen.insert(v);
            }
        }
    }
    match seen.len() {
        1 => (
            seen.into_iter()
                .next()
                .unwrap_or(ASSUMED_KUBERNETES_VERSION),
            VersionSource::Flag,
        ),
        _ => (ASSUMED_KUBERNETES_VERSION, VersionSource::Assumed),
    }
}

#[cfg(test)]
mod tests;
