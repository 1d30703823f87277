//! The cluster and cloud steps of a replacement, each one request (or a read and a write
//! retried on a conflict): read the PDBs, Nodes and a node's pods; mark (taint, cordon,
//! record); record the next step; roll back; terminate and delete; release Karpenter's
//! finalizer.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{core, Manifests};
use crate::cloud::launch;
use crate::cloud::types::Compute;
use crate::disruption::consolidation::PdbInput;
use crate::disruption::drain::{self, DrainOptions, Pdb};
use crate::disruption::replace::machine::Attachment;
use crate::disruption::replace::{Record, REPLACEMENT, TERMINATION_FINALIZER};
use crate::error::CommandError;
use crate::k8s::{ops, snapshot, Cluster};
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodePool};
use crate::model::pod::Pod;
use crate::model::taints::Taint;
use crate::usecases::live::aws_error;

/// How often a write that conflicts (409: someone else changed the object meanwhile) is read
/// again and retried.
const CONFLICT_RETRIES: usize = 3;

/// The Karpenter object that owns a node: a NodeClaim (v1/v1beta1) or Machine (v1alpha5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// `NodeClaim` or `Machine`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// Its API path.
    pub path: String,
    /// Being deleted already.
    pub deleting: bool,
    /// Its `spec.terminationGracePeriod` (v1): the longest its node's termination waits for
    /// volumes to detach, counted from the drain's beginning.
    pub termination_grace_period: Option<Duration>,
}

impl Claim {
    /// The NodeClaim or Machine whose `status.providerID` or `status.nodeName` is the node's.
    pub fn of(m: &Manifests, node: &Node) -> Option<Claim> {
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
        Some(Claim::from_model(claim))
    }

    /// The NodeClaim (Machine) `claim`, by its API path.
    pub fn from_model(claim: &crate::model::nodeclaim::NodeClaim) -> Claim {
        let (kind, resource) = match claim.generation {
            Some(ApiGeneration::V1Alpha5) => ("Machine", "v1alpha5/machines"),
            Some(ApiGeneration::V1Beta1) => ("NodeClaim", "v1beta1/nodeclaims"),
            _ => ("NodeClaim", "v1/nodeclaims"),
        };
        Claim {
            kind,
            name: claim.name.clone(),
            path: format!("/apis/karpenter.sh/{resource}/{}", claim.name),
            deleting: claim.deleting,
            termination_grace_period: claim
                .termination_grace_period
                .as_deref()
                .and_then(|t| crate::model::time::parse_go_duration(t).ok())
                .and_then(|nanos| u64::try_from(nanos).ok())
                .map(Duration::from_nanos),
        }
    }
}

/// The cluster's PodDisruptionBudgets, listed once, in the two forms a replacement reads: the
/// drain's (selector and current `disruptionsAllowed`) and the reschedule rule's (the spec's
/// counts too: a PDB that can never allow an eviction keeps a forceful node's pod in place).
#[derive(Debug, Clone, Default)]
pub struct Pdbs {
    /// What the drain checks each eviction against.
    pub drain: Vec<Pdb>,
    /// What `currently_reschedulable` reads.
    pub reschedule: Vec<PdbInput>,
}

/// Every PodDisruptionBudget of the cluster, with its current `disruptionsAllowed`.
pub fn pdbs(cluster: &dyn Cluster) -> Result<Pdbs, CommandError> {
    let reschedule = snapshot::read_pdbs(cluster)?
        .iter()
        .map(crate::usecases::consolidate::pdb_input)
        .collect::<Result<Vec<_>, _>>()?;
    let drain = reschedule
        .iter()
        .map(|p| Pdb {
            namespace: p.namespace.clone(),
            name: p.name.clone(),
            selector: p.selector.clone(),
            disruptions_allowed: p.disruptions_allowed.unwrap_or(0),
        })
        .collect();
    Ok(Pdbs { drain, reschedule })
}

/// Every Node of the cluster, read now.
pub fn live_nodes(cluster: &dyn Cluster) -> Result<Vec<Node>, CommandError> {
    let mut nodes = Vec::new();
    ops::list(
        cluster,
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

/// The pods on a node, read now, with the deletion time of those terminating.
pub fn pods_on(
    cluster: &dyn Cluster,
    node: &str,
) -> Result<(Vec<Pod>, BTreeMap<String, i64>), CommandError> {
    let mut pods = Vec::new();
    let mut deleting = BTreeMap::new();
    let mut failure = None;
    ops::list(
        cluster,
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

#[derive(Deserialize, Default)]
struct LiveAttachment {
    #[serde(default)]
    metadata: crate::api::meta::ObjectMeta,
    #[serde(default)]
    spec: AttachmentSpec,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AttachmentSpec {
    #[serde(default)]
    node_name: String,
    #[serde(default)]
    source: AttachmentSource,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AttachmentSource {
    #[serde(default)]
    persistent_volume_name: Option<String>,
}

/// The VolumeAttachments (`storage.k8s.io/v1`) of `node`, read now. The API server has no
/// `spec.nodeName` field selector for them (Karpenter's is an informer index), so every
/// attachment is listed and those of other nodes dropped. The error is the caller's: a 403
/// (the optional `list volumeattachments.storage.k8s.io`) or 404 is a warning there.
pub fn volume_attachments(
    cluster: &dyn Cluster,
    node: &str,
) -> Result<Vec<Attachment>, crate::k8s::ClusterError> {
    let mut out = Vec::new();
    ops::list(
        cluster,
        "/apis/storage.k8s.io/v1/volumeattachments",
        &ops::ListQuery::default(),
        |a: LiveAttachment| {
            if a.spec.node_name == node {
                out.push(Attachment {
                    name: a.metadata.name.unwrap_or_default(),
                    volume: a.spec.source.persistent_volume_name,
                });
            }
        },
    )?;
    Ok(out)
}

#[derive(Deserialize, Default)]
struct LiveClaim {
    #[serde(default)]
    metadata: crate::api::meta::ObjectMeta,
    #[serde(default)]
    spec: LiveClaimSpec,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LiveClaimSpec {
    #[serde(default)]
    volume_name: Option<String>,
}

/// The PersistentVolumes that the pods a drain leaves on `node` use (`pods` read now, with the
/// deletion time of those terminating): their attachments stay to the end and are not waited
/// for — `core v1.14.1: node/termination/controller.go filterVolumeAttachments` (Pod → claim →
/// volume) over the pods `!IsDrainable` ([`drain::undrainable`]), whatever their phase: a plain
/// finished pod is drainable there (its volumes are waited for), a finished one tolerating the
/// disruption taint is not. A claim not found (or claims this identity may not list) holds
/// nothing, as upstream skips a claim not found.
pub fn held_volumes(
    cluster: &dyn Cluster,
    pods: &[Pod],
    deleting: &BTreeMap<String, i64>,
    now: i64,
    options: &DrainOptions,
) -> Result<BTreeSet<String>, CommandError> {
    let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in pods {
        if drain::undrainable(p, deleting.get(&p.key()).copied(), now, options).is_some() {
            for v in &p.volumes {
                wanted
                    .entry(p.namespace.clone())
                    .or_default()
                    .insert(v.claim_name(&p.name));
            }
        }
    }
    let mut volumes = BTreeSet::new();
    for (namespace, claims) in wanted {
        let path = format!("/api/v1/namespaces/{namespace}/persistentvolumeclaims");
        let listed = ops::list(
            cluster,
            &path,
            &ops::ListQuery::default(),
            |c: LiveClaim| {
                if c.metadata.name.as_ref().is_some_and(|n| claims.contains(n)) {
                    volumes.extend(c.spec.volume_name.filter(|v| !v.is_empty()));
                }
            },
        );
        match listed {
            Ok(_) => {}
            Err(e) if matches!(e.status(), Some(403 | 404)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(volumes)
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

/// Whether the pod needs a place elsewhere when its node goes (docs/karpenter.md §5.6).
pub fn is_reschedulable(p: &Pod) -> bool {
    p.is_reschedulable()
}

/// Writes the record on the node (its next step).
pub fn annotate(cluster: &dyn Cluster, node: &str, record: &Record) -> Result<(), CommandError> {
    set_annotation(cluster, node, REPLACEMENT, record.format().into())
}

/// Sets (or, with `null`, removes) one annotation of a node. A node gone meanwhile (its
/// instance terminated, or another run finished it) has nothing left to record: `Ok`.
pub fn set_annotation(
    cluster: &dyn Cluster,
    node: &str,
    key: &str,
    value: Value,
) -> Result<(), CommandError> {
    let path = format!("/api/v1/nodes/{node}");
    let patch = json!({"metadata": {"annotations": {key: value}}});
    match ops::merge_patch(cluster, &path, &patch) {
        Err(e) if e.status() == Some(404) => Ok(()),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

fn taint_json(t: &Taint) -> Value {
    let mut v = json!({"key": t.key, "effect": t.effect.as_str()});
    if !t.value.is_empty() {
        v["value"] = t.value.clone().into();
    }
    v
}

/// The node's taints as the API server has them (`spec.taints`: not the model's, which adds
/// the taint a cordon implies) without `drop_key`, plus `extra`: a merge patch replaces the
/// whole list.
pub fn taints_json(live: &Value, extra: Option<&Taint>, drop_key: &str) -> Vec<Value> {
    live.pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t["key"] != drop_key)
        .cloned()
        .chain(extra.map(taint_json))
        .collect()
}

/// Patches the node as read now (`change` builds the patch from it), naming its
/// `resourceVersion`: a change made meanwhile (a kubelet, a controller: 409) is read again and
/// the patch retried. `Ok(false)` when the node is gone.
pub fn patch_current(
    cluster: &dyn Cluster,
    node: &str,
    change: impl Fn(&Value) -> Value,
) -> Result<bool, CommandError> {
    let path = format!("/api/v1/nodes/{node}");
    let mut attempts = 0;
    loop {
        let Some(live) = ops::get::<Value>(cluster, &path)? else {
            return Ok(false);
        };
        let mut patch = change(&live);
        patch["metadata"]["resourceVersion"] = live
            .pointer("/metadata/resourceVersion")
            .cloned()
            .unwrap_or(Value::Null);
        match ops::merge_patch(cluster, &path, &patch) {
            Ok(_) => return Ok(true),
            Err(e) if e.status() == Some(404) => return Ok(false),
            Err(e) if e.status() == Some(409) && attempts < CONFLICT_RETRIES => attempts += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Marks the node: the generation's disruption taint (v1alpha5: cordoning only — the node
/// controller adds its unschedulable taint), `spec.unschedulable`, and the record. The node
/// is read first, so taints added since the snapshot stay.
pub fn mark(
    cluster: &dyn Cluster,
    node: &Node,
    pool: &NodePool,
    record: &Record,
) -> Result<(), CommandError> {
    let taint = drain::disruption_taint(pool.generation);
    let extra = (pool.generation != Some(ApiGeneration::V1Alpha5)).then_some(&taint);
    patch_current(cluster, &node.name, |live| {
        json!({
            "metadata": {"annotations": {REPLACEMENT: record.format()}},
            "spec": {"unschedulable": true, "taints": taints_json(live, extra, &taint.key)},
        })
    })?;
    Ok(())
}

/// The label a node being drained gets so external load balancers stop sending it traffic
/// (`node.kubernetes.io/exclude-from-external-load-balancers`, the value Karpenter writes).
pub const EXCLUDE_FROM_LOAD_BALANCERS: (&str, &str) = (
    "node.kubernetes.io/exclude-from-external-load-balancers",
    "karpenter",
);

/// Labels the node [`EXCLUDE_FROM_LOAD_BALANCERS`] as its drain begins — after its
/// replacements serve, so a node rolled back before was never taken out of its load balancers
/// (`core v1.14.1: pkg/controllers/node/termination/terminator/terminator.go Taint`, run when
/// the node's termination starts; `node/termination/suite_test.go` "should exclude nodes from
/// load balancers when terminating"). Nothing is written when the node has it already; a node
/// gone meanwhile has nothing to label.
pub fn exclude_from_load_balancers(cluster: &dyn Cluster, node: &Node) -> Result<(), CommandError> {
    let (key, value) = EXCLUDE_FROM_LOAD_BALANCERS;
    if node.labels.get(key).is_some_and(|v| v == value) {
        return Ok(());
    }
    let path = format!("/api/v1/nodes/{}", node.name);
    match ops::merge_patch(
        cluster,
        &path,
        &json!({"metadata": {"labels": {key: value}}}),
    ) {
        Err(e) if e.status() == Some(404) => Ok(()),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// Undoes [`mark`] and terminates what was launched (`instances`): the node serves again. The
/// node is read afresh (taints added since the mark — e.g. a spot-interruption taint — stay),
/// and it stays cordoned if it was before the replacement began. `false` when the node is gone
/// (nothing left to undo there).
pub fn rollback(
    cluster: &dyn Cluster,
    cloud: &impl Compute,
    node: &Node,
    pool: &NodePool,
    record: &Record,
    instances: &[String],
) -> Result<bool, CommandError> {
    if !instances.is_empty() {
        launch::terminate_all(cloud, instances).map_err(aws_error)?;
    }
    let taint = drain::disruption_taint(pool.generation);
    patch_current(cluster, &node.name, |live| {
        json!({
            "metadata": {"annotations": {REPLACEMENT: null}},
            "spec": {
                "unschedulable": record.cordoned_before,
                "taints": taints_json(live, None, &taint.key),
            },
        })
    })
}

/// Terminates the node's instance, then deletes the Node — in that order (like Karpenter's
/// termination finalizer), so a run killed in between leaves a node a re-run still finds and
/// finishes, never an instance without a node. A node Karpenter launched also loses its
/// NodeClaim (Machine), and both lose Karpenter's finalizer once the instance is terminating:
/// that is the controller's last step, and without a running controller nothing else would
/// take it (the Node would stay Terminating and hold a budget slot for ever).
pub fn terminate_and_delete(
    cluster: &dyn Cluster,
    cloud: &impl Compute,
    node: &Node,
    claim: Option<&Claim>,
) -> Result<(), CommandError> {
    if let Some(id) = node.instance_id() {
        launch::terminate_all(cloud, &[id.to_string()]).map_err(aws_error)?;
    }
    let node_path = format!("/api/v1/nodes/{}", node.name);
    for path in claim
        .map(|c| c.path.as_str())
        .into_iter()
        .chain([node_path.as_str()])
    {
        match ops::delete(cluster, path, None) {
            Ok(_) => {}
            Err(e) if e.status() == Some(404) => {}
            Err(e) => return Err(e.into()),
        }
        release_finalizer(cluster, path)?;
    }
    Ok(())
}

/// Drops Karpenter's termination finalizer from the object at `path`, if it is still there
/// (the other finalizers stay; the resourceVersion makes a concurrent change fail, not vanish).
pub fn release_finalizer(cluster: &dyn Cluster, path: &str) -> Result<(), CommandError> {
    for _ in 0..CONFLICT_RETRIES {
        let Some(live) = ops::get::<Value>(cluster, path)? else {
            return Ok(());
        };
        let finalizers: Vec<&Value> = live
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|f| f.iter().collect())
            .unwrap_or_default();
        if !finalizers.iter().any(|f| *f == TERMINATION_FINALIZER) {
            return Ok(());
        }
        let kept: Vec<&Value> = finalizers
            .into_iter()
            .filter(|f| *f != TERMINATION_FINALIZER)
            .collect();
        let patch = json!({"metadata": {
            "finalizers": kept,
            "resourceVersion": live.pointer("/metadata/resourceVersion"),
        }});
        match ops::merge_patch(cluster, path, &patch) {
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
