//! The cluster and cloud steps of one node's replacement: mark, roll back, drain (one pass at a
//! time, so many nodes can drain at once), terminate + delete — and the record that makes
//! every step resumable.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::super::live::Session;
use super::super::Context;
use crate::api::core;
use crate::cloud::launch;
use crate::disruption::drain::{self, DrainOptions, Pdb};
use crate::error::CommandError;
use crate::k8s::ops;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
use crate::model::pod::Pod;

/// The Karpenter object that owns a node: a NodeClaim (v1/v1beta1) or Machine (v1alpha5).
pub struct Claim {
    /// `NodeClaim` or `Machine`.
    pub kind: &'static str,
    pub name: String,
    /// Its API path.
    pub path: String,
    /// Being deleted already.
    pub deleting: bool,
}

impl Claim {
    /// The NodeClaim or Machine whose `status.nodeName` or `status.providerID` is the node's.
    pub fn of(m: &crate::api::Manifests, node: &Node) -> Option<Claim> {
        // By providerID first (unique per instance); a node name can be reused by a later
        // instance that a stale NodeClaim still names.
        let claim = m
            .node_claims
            .iter()
            .find(|nc| nc.provider_id.is_some() && nc.provider_id == node.provider_id)
            .or_else(|| {
                m.node_claims
                    .iter()
                    .find(|nc| nc.node_name.as_deref() == Some(node.name.as_str()))
            })?;
        let (kind, resource) = match claim.generation {
            Some(ApiGeneration::V1Alpha5) => ("Machine", "v1alpha5/machines"),
            Some(ApiGeneration::V1Beta1) => ("NodeClaim", "v1beta1/nodeclaims"),
            _ => ("NodeClaim", "v1/nodeclaims"),
        };
        Some(Claim {
            kind,
            name: claim.name.clone(),
            path: format!("/apis/karpenter.sh/{resource}/{}", claim.name),
            deleting: claim.deleting,
        })
    }
}

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
    /// The node was cordoned already before the replacement began: a rollback leaves it so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cordoned_before: bool,
}

impl Record {
    /// The record on `node`, if a replacement is in progress there.
    pub fn of(node: &Node) -> Option<Record> {
        node.annotations
            .get(labels::REPLACEMENT)
            .and_then(|t| serde_json::from_str(t).ok())
    }

    /// Whether every replacement was launched (or the node drained already): a resumed run
    /// adopts the recorded instances and never launches again. A `marked` record, or one that
    /// names fewer instances than NodeClaims, is planned and launched again under the same
    /// NodeClaim names (which adopts whatever did get launched).
    pub fn launched_all(&self) -> bool {
        self.step == "drained"
            || (self.step == "launched" && self.instances.len() == self.node_claims.len())
    }
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

/// Every PodDisruptionBudget of the cluster, with its current `disruptionsAllowed`.
pub fn pdbs(session: &Session) -> Result<Vec<Pdb>, CommandError> {
    let live: Vec<LivePdb> = ops::list_all(
        session.cluster,
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

/// Every Node of the cluster, read now.
pub fn live_nodes(session: &Session) -> Result<Vec<Node>, CommandError> {
    let mut nodes = Vec::new();
    ops::list(
        session.cluster,
        "/api/v1/nodes",
        &ops::ListQuery::default(),
        |n: core::Node| {
            if let Ok(node) = crate::api::convert_node(&n, &crate::api::Location::file("cluster")) {
                nodes.push(node);
            }
        },
    )?;
    Ok(nodes)
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
        session.cluster,
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
                    .and_then(crate::model::time::parse_rfc3339)
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

/// What blocks a drain, named; `pdb_only`: only PodDisruptionBudgets at zero (which free up).
pub struct DrainBlock {
    pub why: String,
    pub pdb_only: bool,
}

/// The node's pods and what would block draining it, read now (PDBs with no disruption left,
/// do-not-disrupt on the node or a pod), named — with whether only PDBs block.
pub fn live_drain_blocker(
    session: &Session,
    node: &Node,
    pool: &NodePool,
    force: bool,
) -> Result<(Vec<Pod>, Option<DrainBlock>), CommandError> {
    let (pods, deleting) = pods_on(session, &node.name)?;
    let plan = drain::plan_drain(
        node,
        &pods,
        &pdbs(session)?,
        &deleting,
        super::super::unix_now(),
        &drain_options(pool, force),
    );
    let blocker = plan.is_blocked().then(|| DrainBlock {
        why: plan.explain_blockers(),
        pdb_only: plan.only_pdbs_block(),
    });
    Ok((pods, blocker))
}

/// The drain rules for nodes of `pool` (its generation's taint; `--force` evicts
/// do-not-disrupt pods).
pub fn drain_options(pool: &NodePool, force: bool) -> DrainOptions {
    DrainOptions {
        evict_daemonsets: false,
        disruption_taint: drain::disruption_taint(pool.generation),
        ignore_do_not_disrupt: force,
    }
}

/// Whether the pod needs a place elsewhere when its node goes (KARPENTER.md §5.6).
pub fn is_reschedulable(p: &Pod) -> bool {
    !p.is_daemonset_pod() && !p.is_mirror() && !p.is_terminal()
}

/// One progress line on stderr (hidden by `-q`).
pub fn progress(ctx: &mut Context<'_>, node: &str, what: &str) {
    if !ctx.global.quiet {
        let _ = writeln!(ctx.err, "{node}: {what}");
    }
}

/// Writes (or, with `None`, clears) the record on the node.
pub fn annotate(
    session: &Session,
    node: &str,
    record: Option<&Record>,
) -> Result<(), CommandError> {
    let value = record.map(|r| serde_json::to_string(r).unwrap_or_default());
    patch_node(
        session,
        node,
        &serde_json::json!({"metadata": {"annotations": {labels::REPLACEMENT: value}}}),
    )
}

/// A merge patch of a node; a node that is gone already (deleted meanwhile — its instance
/// terminated, or another run finished it) is not an error: there is nothing left to mark.
fn patch_node(
    session: &Session,
    node: &str,
    patch: &serde_json::Value,
) -> Result<(), CommandError> {
    match ops::merge_patch(session.cluster, &format!("/api/v1/nodes/{node}"), patch) {
        Ok(_) => Ok(()),
        Err(e) if e.status() == Some(404) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn taint_json(t: &crate::model::taints::Taint) -> serde_json::Value {
    let mut v = serde_json::json!({"key": t.key, "effect": t.effect.as_str()});
    if !t.value.is_empty() {
        v["value"] = t.value.clone().into();
    }
    v
}

/// The node's taints without `drop_key`, plus `extra`: a merge patch replaces the whole list.
fn taints_json(
    node: &Node,
    extra: Option<&crate::model::taints::Taint>,
    drop_key: &str,
) -> Vec<serde_json::Value> {
    node.taints
        .iter()
        .filter(|t| t.key != drop_key)
        .chain(extra)
        .map(taint_json)
        .collect()
}

/// Taints (v1/v1beta1) and cordons the node, recording the replacement.
pub fn mark(
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
            "metadata": {"annotations": {labels::REPLACEMENT: serde_json::to_string(record).unwrap_or_default()}},
            "spec": {"unschedulable": true, "taints": taints_json(node, extra, &taint.key)},
        }),
    )
}

/// Undoes [`mark`] and terminates what was launched (`instances`): the old node serves again.
/// The node is read afresh (taints added since the mark — e.g. a spot-interruption taint —
/// stay), and it stays cordoned if it was before the replacement began.
pub fn rollback(
    ctx: &mut Context<'_>,
    session: &Session,
    node: &Node,
    pool: &NodePool,
    record: &Record,
    instances: &[String],
) -> Result<(), CommandError> {
    if !instances.is_empty() {
        launch::terminate_all(session.cloud, instances).map_err(super::super::live::aws_error)?;
    }
    let path = format!("/api/v1/nodes/{}", node.name);
    let taint = drain::disruption_taint(pool.generation);
    // Someone (a kubelet, a controller) may update the node meanwhile (409): read again, retry.
    let mut attempts = 0;
    loop {
        let Some(live) = ops::get::<serde_json::Value>(session.cluster, &path)? else {
            return Ok(()); // gone meanwhile: nothing left to undo
        };
        let current = serde_json::from_value::<core::Node>(live.clone())
            .ok()
            .and_then(|n| crate::api::convert_node(&n, &crate::api::Location::file("cluster")).ok())
            .unwrap_or_else(|| node.clone());
        let patch = serde_json::json!({
            "metadata": {
                "annotations": {labels::REPLACEMENT: null},
                "resourceVersion": live.pointer("/metadata/resourceVersion"),
            },
            "spec": {
                "unschedulable": record.cordoned_before,
                "taints": taints_json(&current, None, &taint.key),
            },
        });
        match ops::merge_patch(session.cluster, &path, &patch) {
            Ok(_) => break,
            Err(e) if e.status() == Some(404) => return Ok(()),
            Err(e) if e.status() == Some(409) && attempts < 3 => attempts += 1,
            Err(e) => return Err(e.into()),
        }
    }
    progress(
        ctx,
        &node.name,
        &format!(
            "rolled back: {}, untainted; terminated {}",
            if record.cordoned_before {
                "left cordoned as it was"
            } else {
                "uncordoned"
            },
            if instances.is_empty() {
                "nothing".into()
            } else {
                instances.join(", ")
            }
        ),
    );
    Ok(())
}

/// Terminates the node's instance, then deletes the Node — in that order (like Karpenter's
/// termination finalizer), so a run killed in between leaves a node a re-run still finds and
/// finishes, never an instance without a node. A node Karpenter launched also loses its
/// NodeClaim (Machine), and both lose Karpenter's finalizer once the instance is terminating:
/// that is the controller's last step, and without a running controller nothing else would take
/// it (the Node would stay Terminating and hold a budget slot for ever).
pub fn terminate_and_delete(
    ctx: &mut Context<'_>,
    session: &Session,
    node: &Node,
    claim: Option<&Claim>,
) -> Result<(), CommandError> {
    if let Some(id) = node.instance_id() {
        launch::terminate_all(session.cloud, &[id.to_string()])
            .map_err(super::super::live::aws_error)?;
    }
    let node_path = format!("/api/v1/nodes/{}", node.name);
    for path in claim
        .map(|c| c.path.as_str())
        .into_iter()
        .chain([node_path.as_str()])
    {
        match ops::delete(session.cluster, path, None) {
            Ok(_) => {}
            Err(e) if e.status() == Some(404) => {}
            Err(e) => return Err(e.into()),
        }
        release_finalizer(session, path)?;
    }
    progress(
        ctx,
        &node.name,
        &match node.instance_id() {
            Some(id) => format!("deleted; instance {id} terminating"),
            None => "deleted".to_string(),
        },
    );
    Ok(())
}

/// Drops Karpenter's termination finalizer from the object at `path`, if it is still there
/// (the other finalizers stay; the resourceVersion makes a concurrent change fail, not vanish).
fn release_finalizer(session: &Session, path: &str) -> Result<(), CommandError> {
    // A controller may update the object meanwhile (409): read again and retry.
    for _ in 0..3 {
        let Some(live) = ops::get::<serde_json::Value>(session.cluster, path)? else {
            return Ok(());
        };
        let finalizers: Vec<&serde_json::Value> = live
            .pointer("/metadata/finalizers")
            .and_then(serde_json::Value::as_array)
            .map(|f| f.iter().collect())
            .unwrap_or_default();
        if !finalizers
            .iter()
            .any(|f| *f == labels::TERMINATION_FINALIZER)
        {
            return Ok(());
        }
        let kept: Vec<&serde_json::Value> = finalizers
            .into_iter()
            .filter(|f| *f != labels::TERMINATION_FINALIZER)
            .collect();
        let patch = serde_json::json!({"metadata": {
            "finalizers": kept,
            "resourceVersion": live.pointer("/metadata/resourceVersion"),
        }});
        match ops::merge_patch(session.cluster, path, &patch) {
            Ok(_) => return Ok(()),
            Err(e) if e.status() == Some(404) => return Ok(()),
            Err(e) if e.status() == Some(409) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(CommandError::remote(format!(
        "{path}: the termination finalizer could not be released (the object kept changing); re-run to finish"
    )))
}

/// A drain in progress: evictions go out one pass at a time, tier by tier, with a backoff
/// between passes, so that one loop can drain many nodes at once.
pub struct Drain {
    started: Instant,
    evicted: usize,
    backoff: Duration,
    next_pass: Instant,
    last_block: String,
}

/// After a pass: drained (with the number of pods evicted), or not yet.
pub enum DrainStatus {
    Drained(usize),
    Draining,
}

const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
const TERMINATING_POLL: Duration = Duration::from_secs(1);

impl Drain {
    pub fn new() -> Drain {
        let now = Instant::now();
        Drain {
            started: now,
            evicted: 0,
            backoff: FIRST_BACKOFF,
            next_pass: now,
            last_block: String::new(),
        }
    }

    /// Whether the next pass is due.
    pub fn due(&self) -> bool {
        Instant::now() >= self.next_pass
    }

    /// One pass: reads the node's pods, evicts the first non-empty tier (KARPENTER.md
    /// §5.5), and says whether the node is empty of pods to move. An error when `timeout` is
    /// over, naming what blocks (the PDB from the 429, a do-not-disrupt pod, pods terminating).
    pub fn pass(
        &mut self,
        ctx: &mut Context<'_>,
        session: &Session,
        node: &Node,
        pdbs: &[Pdb],
        options: &DrainOptions,
        timeout: Duration,
    ) -> Result<DrainStatus, CommandError> {
        let (pods, deleting) = pods_on(session, &node.name)?;
        let plan = drain::plan_drain(
            node,
            &pods,
            pdbs,
            &deleting,
            super::super::unix_now(),
            options,
        );
        let terminating = pods
            .iter()
            .filter(|p| p.terminating && !plan.skipped.iter().any(|(k, _)| *k == p.key()))
            .count();
        let next: Vec<String> = plan
            .next_tier()
            .map(|(_, pods)| pods.to_vec())
            .unwrap_or_default();
        let waits_for_do_not_disrupt = plan
            .blockers
            .iter()
            .any(|b| matches!(b, drain::Blocker::PodDoNotDisrupt { .. }));
        if next.is_empty() && terminating == 0 && !waits_for_do_not_disrupt {
            progress(
                ctx,
                &node.name,
                &format!("drained ({} pod(s) evicted)", self.evicted),
            );
            return Ok(DrainStatus::Drained(self.evicted));
        }
        let mut progressed = false;
        let mut refused = false;
        for key in &next {
            let (ns, name) = key.split_once('/').unwrap_or(("default", key));
            let uid = pods.iter().find(|p| &p.key() == key).map(|p| p.uid.clone());
            match ops::evict(session.cluster, ns, name, uid.as_deref())? {
                ops::Eviction::Evicted => {
                    self.evicted += 1;
                    progressed = true;
                    progress(ctx, &node.name, &format!("evicted {key}"));
                }
                ops::Eviction::Gone => progressed = true,
                ops::Eviction::Blocked(message) => {
                    refused = true;
                    if message != self.last_block {
                        progress(
                            ctx,
                            &node.name,
                            &format!("eviction of {key} refused: {message}"),
                        );
                    }
                    self.last_block = message;
                }
            }
        }
        if self.started.elapsed() >= timeout {
            let why = if !self.last_block.is_empty() {
                self.last_block.clone()
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
        // Quick passes while pods go, a steady second while they terminate (their grace
        // period), an exponential backoff while a PDB refuses (Karpenter's queue: 100 ms → 10 s).
        self.backoff = if progressed {
            FIRST_BACKOFF
        } else if refused || waits_for_do_not_disrupt {
            (self.backoff * 2).min(MAX_BACKOFF)
        } else {
            TERMINATING_POLL
        };
        self.next_pass = Instant::now() + self.backoff;
        Ok(DrainStatus::Draining)
    }
}
