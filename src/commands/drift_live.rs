//! `drift check` against a live cluster: the snapshot (Nodes, NodeClaims/Machines, NodePools
//! or Provisioners, node classes) from paginated LISTs, the instances from DescribeInstances in
//! batches of 1000, and every class resolved live — AMIs from SSM/EC2, subnets and security
//! groups from their selectors — never trusted from a possibly stale `status` (SPEC §4). The AWS
//! calls grow with classes and ⌈nodes/1000⌉, never with nodes (PERF.md B3).
//!
//! `--mark` then writes the verdict where the installed generation shows drift: the v0.2x node
//! annotation `karpenter.sh/voluntary-disruption=drifted` for Provisioner nodes, else the
//! label `kubectl-karpenter.io/drifted=<reason>` (selectable with `kubectl get nodes -l`); both
//! are removed from nodes no longer drifted.

use std::collections::{BTreeMap, BTreeSet};

use super::drift::{finish, select_nodes, Config, Mode};
use super::live;
use super::Context;
use crate::cloud::ami::{self, KubeVersion};
use crate::cloud::launch;
use crate::cloud::network::NetworkResolver;
use crate::cloud::types::Cloud;
use crate::cloud::InstanceTypeContext;
use crate::drift::facts::{self, ClassFacts, Fact, IdSet};
use crate::drift::{self, DriftSnapshot, Status};
use crate::error::{CommandError, CommandResult};
use crate::k8s::client::KubeClient;
use crate::k8s::ops;
use crate::k8s::snapshot::{self, Scope};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass};

/// Runs live `drift check`.
pub fn check(ctx: &mut Context<'_>, config: &Config) -> CommandResult {
    let (snapshot, version, client) = gather(ctx, config)?;
    if config.mark {
        let mut selected = snapshot.clone();
        select_nodes(config, &mut selected)?;
        mark(ctx, &client, &selected)?;
    }
    finish(ctx, config, snapshot, Mode::Live, Some(version))
}

/// Reads the cluster and AWS into a [`DriftSnapshot`].
pub fn gather(
    ctx: &mut Context<'_>,
    config: &Config,
) -> Result<(DriftSnapshot, KubeVersion, KubeClient), CommandError> {
    let cluster = live::connect_cluster(ctx)?;
    let version = match config.kubernetes_version {
        Some((v, _)) => v,
        None => live::kubernetes_version(ctx, &cluster)?,
    };
    let read = snapshot::read(&cluster.client, Scope::default())?;
    let manifests = read.manifests;
    let cloud = live::connect_aws(ctx)?;
    let ids: Vec<String> = manifests
        .nodes
        .iter()
        .filter_map(|n| n.instance_id().map(str::to_string))
        .collect();
    let instances = launch::describe_all(&cloud, &ids).map_err(live::aws_error)?;
    let (nodes, _unmanaged) =
        drift::pair_nodes(&manifests.nodes, &manifests.node_claims, &instances);

    let now = super::unix_now();
    let mut snapshot = DriftSnapshot {
        nodes,
        node_pools: manifests.node_pools.clone(),
        node_classes: manifests.node_classes.clone(),
        now,
        ..DriftSnapshot::default()
    };
    // Only the classes some managed node's pool uses are resolved.
    let used: BTreeSet<&str> = snapshot
        .nodes
        .iter()
        .filter_map(|n| n.pool_name())
        .filter_map(|p| manifests.node_pools.iter().find(|x| x.name == p))
        .filter_map(|p| p.node_class_ref.as_ref().map(|r| r.name.as_str()))
        .collect();
    let classes: Vec<&NodeClass> = manifests
        .node_classes
        .iter()
        .filter(|c| used.contains(c.name.as_str()))
        .collect();
    let resolutions = ami::resolve_all(&cloud, &classes, version, now);
    let mut network = NetworkResolver::new(&cloud);
    for (class, resolution) in classes.iter().zip(resolutions) {
        let images = match resolution {
            Ok(r) => {
                for i in &r.images {
                    if let Some(name) = &i.name {
                        snapshot.image_names.insert(i.id.clone(), name.clone());
                    }
                }
                for found in r.results.iter().flatten() {
                    if let Some(name) = &found.name {
                        snapshot.image_names.insert(found.id.clone(), name.clone());
                    }
                }
                match r.problem() {
                    None => Fact::Known(ami::facts::images_from_resolution(&r)),
                    Some(p) => Fact::Unknown(p),
                }
            }
            Err(e) => Fact::Unknown(e.to_string()),
        };
        let subnets = match network.subnets(class) {
            Ok(r) => Fact::Known(IdSet {
                ids: r.items.into_iter().map(|s| s.id).collect(),
                source: "DescribeSubnets".into(),
            }),
            Err(e) => Fact::Unknown(e.to_string()),
        };
        let security_groups = match network.security_groups(class) {
            Ok(r) => Fact::Known(IdSet {
                ids: r.items.into_iter().map(|g| g.id).collect(),
                source: "DescribeSecurityGroups".into(),
            }),
            Err(e) => Fact::Unknown(e.to_string()),
        };
        let class_facts = ClassFacts {
            images,
            subnets,
            security_groups,
        };
        snapshot
            .notes
            .extend(facts::stale_status_notes(class, &class_facts));
        snapshot
            .class_facts
            .insert(facts::class_key(&class.kind, &class.name), class_facts);
    }
    // Name the images the nodes run (one DescribeImages for all of them), so an explanation
    // says `runs ami-… (amazon-eks-node-1.24-…)`.
    let unnamed: BTreeSet<String> = instances
        .iter()
        .map(|i| i.image_id.clone())
        .filter(|id| !id.is_empty() && !snapshot.image_names.contains_key(id))
        .collect();
    let unnamed: Vec<String> = unnamed.into_iter().collect();
    // EC2 takes at most 200 values per filter.
    for chunk in unnamed.chunks(200) {
        let query = crate::cloud::types::ImageQuery {
            owners: Vec::new(),
            filters: vec![crate::cloud::types::Filter::new("image-id", chunk.to_vec())],
        };
        // Best effort: a missing name only shortens the explanation.
        if let Ok(images) = cloud.describe_images(&query) {
            for i in images {
                if let Some(name) = i.name {
                    snapshot.image_names.insert(i.id, name);
                }
            }
        }
    }
    // InstanceTypeNotFound (v1 pools): the types the catalog offers the pool's class now. And
    // nodes this tool launched that were never labelled with their instance type's labels (no
    // `--wait`/`--watch` saw them register): Karpenter's NodeClaim would carry those labels, so
    // drift reads them from the catalog instead of judging their absence as requirement drift.
    let unlabelled_tool_nodes = snapshot.nodes.iter().any(|n| {
        n.node_claim.is_none()
            && n.launched_by_tool()
            && !n
                .node
                .labels
                .contains_key(crate::model::labels::INSTANCE_CATEGORY)
    });
    if unlabelled_tool_nodes
        || manifests
            .node_pools
            .iter()
            .any(|p| p.generation == Some(ApiGeneration::V1))
    {
        let catalog = live::catalog(ctx, &cloud, config.catalog.as_deref())?;
        let region = cloud.region();
        if unlabelled_tool_nodes {
            if let Ok(types) = catalog.instance_types(&InstanceTypeContext::new(&region, "AL2")) {
                let by_name: BTreeMap<String, BTreeMap<String, String>> = types
                    .into_iter()
                    .map(|t| (t.name.clone(), t.requirements.single_value_labels()))
                    .collect();
                for n in snapshot.nodes.iter_mut() {
                    if n.node_claim.is_some() || !n.launched_by_tool() {
                        continue;
                    }
                    let Some(labels) = n.instance_type().and_then(|t| by_name.get(t)).cloned()
                    else {
                        continue;
                    };
                    for (k, v) in labels {
                        n.node.labels.entry(k).or_insert(v);
                    }
                }
            }
        }
        for pool in manifests
            .node_pools
            .iter()
            .filter(|p| p.generation == Some(ApiGeneration::V1))
        {
            let family = pool
                .node_class_ref
                .as_ref()
                .and_then(|r| manifests.node_classes.iter().find(|c| c.name == r.name))
                .and_then(|c| c.ami_family.clone())
                .unwrap_or_else(|| "AL2023".into());
            if let Ok(types) = catalog.instance_types(&InstanceTypeContext::new(&region, &family)) {
                snapshot.instance_types.insert(
                    pool.name.clone(),
                    types.into_iter().map(|t| t.name).collect(),
                );
            }
        }
    }
    ctx.note(&format!(
        "{} Kubernetes requests; AWS: {}",
        crate::k8s::Cluster::request_count(&cluster.client),
        cloud.call_counts().summary()
    ));
    Ok((snapshot, version, cluster.client))
}

/// Writes (and clears) the drift markers on the selected nodes.
fn mark(
    ctx: &mut Context<'_>,
    client: &KubeClient,
    snapshot: &DriftSnapshot,
) -> Result<(), CommandError> {
    let evaluation = drift::evaluate(snapshot);
    let by_name: BTreeMap<&str, &drift::ManagedNode> = snapshot
        .nodes
        .iter()
        .map(|n| (n.node.name.as_str(), n))
        .collect();
    let mut changed = 0;
    for verdict in &evaluation.nodes {
        let Some(managed) = by_name.get(verdict.name.as_str()) else {
            continue;
        };
        let node = &managed.node;
        let legacy = node
            .labels
            .contains_key(crate::model::labels::PROVISIONER_NAME);
        let drifted = verdict.status == Status::Drifted;
        let path = format!("/api/v1/nodes/{}", node.name);
        let patch = if legacy {
            let current = node
                .annotations
                .get(labels::VOLUNTARY_DISRUPTION)
                .map(String::as_str);
            match (drifted, current) {
                (true, Some("drifted")) => None,
                // Another marker (e.g. `expired`) is Karpenter's: left alone, as it does.
                (true, Some(_)) => None,
                (true, None) => Some(
                    serde_json::json!({"metadata": {"annotations": {labels::VOLUNTARY_DISRUPTION: "drifted"}}}),
                ),
                (false, Some("drifted")) => Some(
                    serde_json::json!({"metadata": {"annotations": {labels::VOLUNTARY_DISRUPTION: null}}}),
                ),
                (false, _) => None,
            }
        } else {
            let want = verdict
                .reason
                .map(|r| r.as_str().to_string())
                .filter(|_| drifted);
            let current = node.labels.get(labels::DRIFTED_LABEL).cloned();
            if want == current {
                None
            } else {
                Some(serde_json::json!({"metadata": {"labels": {labels::DRIFTED_LABEL: want}}}))
            }
        };
        if let Some(p) = patch {
            ops::merge_patch(client, &path, &p)?;
            changed += 1;
        }
    }
    ctx.note(&format!("--mark: {changed} node(s) updated"));
    Ok(())
}
