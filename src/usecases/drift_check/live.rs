//! The live facts: the instances from DescribeInstances in batches of 1000, and every class
//! resolved live — AMIs from SSM/EC2, subnets and security groups from their selectors, capacity
//! reservations from DescribeCapacityReservations — never
//! trusted from a possibly stale `status` (docs/spec.md §4). The AWS calls grow with classes and
//! ⌈nodes/1000⌉, never with nodes (docs/performance.md B3).

use std::collections::{BTreeMap, BTreeSet};

use base64::prelude::{Engine as _, BASE64_STANDARD};

use crate::api::Manifests;
use crate::cloud::ami::{self, KubeVersion};
use crate::cloud::network::NetworkResolver;
use crate::cloud::reservations;
use crate::cloud::types::{Cloud, Compute, Filter, ImageQuery};
use crate::cloud::{launch, Catalog, InstanceTypeContext};
use crate::drift::facts::{self, ClassFacts, Fact, IdSet};
use crate::drift::{self, DriftSnapshot};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, ReservationStatus};
use crate::model::placement_group::PlacementGroupSelector;
use crate::usecases::live::aws_error;

/// Builds the snapshot from a live cluster's `manifests` and the cloud. `catalog` is called at
/// most once, and only when instance types matter (v1 pools, or tool-launched nodes without
/// their type's labels): loading the live catalog costs AWS calls.
pub fn gather<C: Compute>(
    manifests: &Manifests,
    cloud: &C,
    version: KubeVersion,
    now: i64,
    catalog: &mut dyn FnMut(&dyn Cloud) -> Result<Catalog, CommandError>,
) -> Result<DriftSnapshot, CommandError> {
    let ids: Vec<String> = manifests
        .nodes
        .iter()
        .filter_map(|n| n.instance_id().map(str::to_string))
        .collect();
    // By `instance-id` filter: an instance EC2 forgot (terminated about an hour ago) whose Node
    // is still registered would fail an id query as a whole (`InvalidInstanceID.NotFound`).
    let instances = launch::describe_by_filter(cloud, &ids).map_err(aws_error)?;
    let (nodes, _unmanaged) =
        drift::pair_nodes(&manifests.nodes, &manifests.node_claims, &instances);
    let mut snapshot = super::snapshot_of(manifests, nodes, now);
    snapshot.instances_described_in = Some(cloud.region());
    resolve_classes(manifests, cloud, version, &mut snapshot);
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
        let query = ImageQuery {
            owners: Vec::new(),
            filters: vec![Filter::new("image-id", chunk.to_vec())],
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
    instance_types(manifests, cloud, &mut snapshot, catalog)?;
    Ok(snapshot)
}

/// The cluster's CA bundle as Karpenter's `GetCABundle` reads it in-cluster: the service
/// account's `ca.crt` (published in every namespace as ConfigMap `kube-root-ca.crt`), base64.
/// EC2NodeClass hash `v5` mixes it in (provider `pkg/operator/operator.go`); best effort —
/// without it those hashes are listed as not checked, and [`drift::hash::confirm_ca_term`]
/// still requires a class's own annotation to confirm it. `Err`: the API refused the read
/// (RBAC: `get configmaps` `kube-root-ca.crt`, docs/security.md), its message, to be said.
pub fn ca_bundle(cluster: &dyn Cluster) -> Result<Option<String>, String> {
    let path = "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt";
    let config_map: serde_json::Value = match crate::k8s::ops::get(cluster, path) {
        Ok(Some(v)) => v,
        Err(e) if e.status() == Some(403) => return Err(e.to_string()),
        Ok(None) | Err(_) => return Ok(None),
    };
    Ok(config_map
        .pointer("/data/ca.crt")
        .and_then(|v| v.as_str())
        .map(|ca| BASE64_STANDARD.encode(ca.as_bytes())))
}

/// What the classes some managed node's pool uses resolve to now (only those are resolved).
fn resolve_classes(
    manifests: &Manifests,
    cloud: &dyn Cloud,
    version: KubeVersion,
    snapshot: &mut DriftSnapshot,
) {
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
    let resolutions = ami::resolve_all(cloud, &classes, version, snapshot.now);
    let mut network = NetworkResolver::new(cloud);
    for (class, resolution) in classes.iter().zip(resolutions) {
        // A call that failed (a missing permission, an outage) leaves a fact unknown and its
        // drift unchecked: said as a warning, naming the call.
        let mut failed = Vec::new();
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
                    None => Fact::Known(crate::cloud::ami::facts::images_from_resolution(&r)),
                    Some(p) => Fact::Unknown(p),
                }
            }
            Err(e) => {
                failed.push(("AMIs", e.to_string()));
                Fact::Unknown(e.to_string())
            }
        };
        let subnets = match network.subnets(class) {
            Ok(r) => Fact::Known(IdSet {
                ids: r.items.into_iter().map(|s| s.id).collect(),
                source: "DescribeSubnets".into(),
            }),
            Err(e) => {
                failed.push(("subnets", e.to_string()));
                Fact::Unknown(e.to_string())
            }
        };
        let security_groups = match network.security_groups(class) {
            Ok(r) => Fact::Known(IdSet {
                ids: r.items.into_iter().map(|g| g.id).collect(),
                source: "DescribeSecurityGroups".into(),
            }),
            Err(e) => {
                failed.push(("security groups", e.to_string()));
                Fact::Unknown(e.to_string())
            }
        };
        snapshot.notes.extend(failed.into_iter().map(|(what, why)| {
            format!(
                "{} {}: its {what} are unknown, their drift is not checked: {why}",
                class.kind, class.name
            )
        }));
        reservation_status(cloud, class, snapshot);
        let class_facts = ClassFacts {
            images,
            subnets,
            security_groups,
            placement_group: placement_group(cloud, class),
        };
        snapshot
            .notes
            .extend(facts::stale_status_notes(class, &class_facts));
        snapshot
            .class_facts
            .insert(facts::class_key(&class.kind, &class.name), class_facts);
    }
}

/// CapacityReservationDrift reads a class's `status.capacityReservations`, which Karpenter's
/// nodeclass controller writes from DescribeCapacityReservations (`aws v1.14.1:
/// pkg/controllers/nodeclass/capacityreservation.go`). Like the other class facts it is
/// resolved live, not trusted from a possibly stale status: a v1 class with
/// `capacityReservationSelectorTerms` gets it from `cloud::reservations::list` (the
/// controller's query); a failed call leaves the status as the cluster has it (absent: the
/// drift unchecked) and says so.
/// The class's placement group now (`PlacementGroupDrift`): DescribePlacementGroups of its
/// selector; none without one. Unreadable (e.g. `ec2:DescribePlacementGroups` not granted, it
/// is not in deploy/iam-policy.json yet): unknown, the check listed as not made.
fn placement_group(cloud: &dyn Cloud, class: &NodeClass) -> Fact<Option<String>> {
    let Some(selector) = PlacementGroupSelector::of(class) else {
        return Fact::Known(None);
    };
    match crate::usecases::live::placement_groups(cloud, std::slice::from_ref(class)) {
        Ok(found) => Fact::Known(selector.resolve(&found).map(|g| g.id.clone())),
        Err(e) => Fact::Unknown(format!(
            "PlacementGroupDrift: {} {}'s placement group ({selector}) is unknown: {e}",
            class.kind, class.name
        )),
    }
}

fn reservation_status(cloud: &dyn Cloud, class: &NodeClass, snapshot: &mut DriftSnapshot) {
    let terms = &class.capacity_reservation_selector_terms;
    if terms.is_empty() {
        return;
    }
    match reservations::list(cloud, &[terms.as_slice()], snapshot.now) {
        Ok(found) => {
            let status: Vec<ReservationStatus> = found
                .selected(terms)
                .into_iter()
                .map(|r| ReservationStatus {
                    id: r.reservation.id.clone(),
                    instance_type: r.instance_type.clone(),
                    zone: r.zone.clone(),
                })
                .collect();
            if let Some(c) = snapshot
                .node_classes
                .iter_mut()
                .find(|c| c.kind == class.kind && c.name == class.name)
            {
                c.status.capacity_reservations = Some(status);
            }
        }
        Err(e) => snapshot.notes.push(format!(
            "{} {}: its capacity reservations are unknown, CapacityReservationDrift is not checked: {e}",
            class.kind, class.name
        )),
    }
}

/// InstanceTypeNotFound (v1 pools): the types the catalog offers the pool's class now. And
/// nodes this tool launched that were never labelled with their instance type's labels (no
/// `--wait`/`--watch` saw them register): Karpenter's NodeClaim would carry those labels, so
/// drift reads them from the catalog instead of judging their absence as requirement drift.
fn instance_types(
    manifests: &Manifests,
    cloud: &dyn Cloud,
    snapshot: &mut DriftSnapshot,
    catalog: &mut dyn FnMut(&dyn Cloud) -> Result<Catalog, CommandError>,
) -> Result<(), CommandError> {
    let unlabelled_tool_nodes = snapshot.nodes.iter().any(|n| {
        n.node_claim.is_none()
            && n.launched_by_tool()
            && !n.node.labels.contains_key(labels::INSTANCE_CATEGORY)
    });
    let v1_pools = manifests
        .node_pools
        .iter()
        .filter(|p| p.generation == Some(ApiGeneration::V1));
    if !unlabelled_tool_nodes && v1_pools.clone().next().is_none() {
        return Ok(());
    }
    let catalog = catalog(cloud)?;
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
                let Some(labels) = n.instance_type().and_then(|t| by_name.get(t)).cloned() else {
                    continue;
                };
                for (k, v) in labels {
                    n.node.labels.entry(k).or_insert(v);
                }
            }
        }
    }
    for pool in v1_pools {
        let family = super::ami_family(manifests, pool);
        let mut ctx = InstanceTypeContext::new(&region, &family);
        // A custom catalog's type offered only through the class's capacity reservations.
        if let Some(c) = pool
            .node_class_ref
            .as_ref()
            .and_then(|r| manifests.node_classes.iter().find(|c| c.name == r.name))
        {
            ctx.capacity_reservations = &c.capacity_reservation_selector_terms;
        }
        if let Ok(types) = catalog.instance_types(&ctx) {
            let (names, offerings) = super::offered(&types);
            snapshot.instance_types.insert(pool.name.clone(), names);
            snapshot.offerings.insert(pool.name.clone(), offerings);
        }
    }
    Ok(())
}
