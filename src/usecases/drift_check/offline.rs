//! The offline facts, from manifests: a node's current AMI is its NodeClaim's `status.imageID`,
//! else the node annotation `kubectl-karpenter.io/image-id`; subnet and security groups come
//! from `kubectl-karpenter.io/subnet-id` / `security-group-ids`. A class's AMIs are computed
//! from `--ssm-param` values and selector ids where that is possible, else taken from its
//! `status.amis` (and a note says when the two disagree).

use std::collections::{BTreeMap, BTreeSet};

use super::Offered;
use super::{kubernetes_version, Config};
use crate::api::Manifests;
use crate::cloud::ami::{self, KubeVersion};
use crate::cloud::{Catalog, InstanceTypeContext};
use crate::drift::{self, class_key, facts, DriftSnapshot, Fact};
use crate::error::CommandError;
use crate::model::labels;
use crate::model::nodepool::ApiGeneration;
use crate::usecases::ami::VersionSource;

/// Something worth telling about the offline facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatherNote {
    /// Nodes neither Karpenter nor this tool manages were skipped.
    Unmanaged(usize),
    /// No version was given or named by the `--ssm-param` paths, and a class needs one.
    AssumedVersion(KubeVersion),
    /// A pool's node class is not in the input: only pool and requirement drift is checked.
    ClassNotInInput {
        /// `NodePool` or `Provisioner`.
        pool_kind: &'static str,
        /// The pool.
        pool: String,
        /// The class's kind.
        class_kind: String,
        /// The class.
        class: String,
    },
    /// The catalog has no data for a pool's region: `InstanceTypeNotFound` is not checked.
    NoCatalogRegion {
        /// The pool.
        pool: String,
        /// Its region.
        region: String,
    },
}

/// The offline snapshot.
#[derive(Debug, Clone)]
pub struct Offline {
    /// The facts.
    pub snapshot: DriftSnapshot,
    /// The Kubernetes version AMI aliases were resolved for, when a class needed one.
    pub kubernetes_version: Option<KubeVersion>,
    /// What to tell, in order.
    pub notes: Vec<GatherNote>,
}

/// Builds the snapshot from manifests: nodes paired with their NodeClaims, each class's facts
/// computed offline, instance types per pool from the catalog (in `region`, else the region of
/// the pool's nodes), image names from every status.
pub fn gather_offline(
    config: &Config,
    manifests: &Manifests,
    catalog: Option<&Catalog>,
    region: Option<&str>,
    now: i64,
) -> Result<Offline, CommandError> {
    if manifests.nodes.is_empty() {
        return Err(CommandError::input(
            "no Node in the input: drift check -f needs the nodes to check (e.g. kubectl get nodes -o yaml)",
        ));
    }
    let mut notes = Vec::new();
    let (version, source) = kubernetes_version(config);
    let (nodes, unmanaged) = drift::pair_nodes(&manifests.nodes, &manifests.node_claims, &[]);
    let mut snapshot = super::snapshot_of(manifests, nodes, now);
    if unmanaged > 0 {
        notes.push(GatherNote::Unmanaged(unmanaged));
    }
    let mut uses_version = false;
    for class in &manifests.node_classes {
        let mut f =
            crate::cloud::ami::facts::offline_class_facts(class, version, &config.ssm_params);
        // A `--catalog` with `placementGroups` tells the class's group (`PlacementGroupDrift`).
        if let Some(groups) = catalog.and_then(Catalog::placement_groups) {
            f.placement_group = facts::offline_placement_group(class, Some(groups));
        }
        if ami::plan(class, version).is_ok_and(|p| p.uses_kubernetes_version)
            && !matches!(f.images, Fact::Known(ref i) if i.iter().all(|x| x.source.ends_with("status.amis")))
        {
            uses_version = true;
        }
        snapshot.notes.extend(facts::stale_status_notes(class, &f));
        for a in &class.status.amis {
            if let Some(name) = &a.name {
                snapshot.image_names.insert(a.id.clone(), name.clone());
            }
        }
        snapshot
            .class_facts
            .insert(class_key(&class.kind, &class.name), f);
    }
    if uses_version && source == VersionSource::Assumed {
        notes.push(GatherNote::AssumedVersion(version));
    }
    for pool in &manifests.node_pools {
        if let Some(r) = &pool.node_class_ref {
            let found = manifests
                .node_classes
                .iter()
                .any(|c| c.name == r.name && c.kind == r.kind);
            if !found && r.kind != "Provisioner" {
                notes.push(GatherNote::ClassNotInInput {
                    pool_kind: pool.kind(),
                    pool: pool.name.clone(),
                    class_kind: r.kind.clone(),
                    class: r.name.clone(),
                });
            }
        }
    }
    if let Some(catalog) = catalog {
        (snapshot.instance_types, snapshot.offerings) =
            instance_types(manifests, catalog, region, &snapshot, &mut notes);
    }
    Ok(Offline {
        snapshot,
        kubernetes_version: uses_version.then_some(version),
        notes,
    })
}

/// `GetInstanceTypes(nodePool)` offline: every type the catalog offers for the pool's class in
/// the pool's region. Pools whose region is unknown are not checked.
fn instance_types(
    manifests: &Manifests,
    catalog: &Catalog,
    region: Option<&str>,
    snapshot: &DriftSnapshot,
    notes: &mut Vec<GatherNote>,
) -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, Offered>,
) {
    let mut out = BTreeMap::new();
    let mut offerings = BTreeMap::new();
    type Types = Option<(BTreeSet<String>, Offered)>;
    let mut cache: BTreeMap<(String, String, String), Types> = BTreeMap::new();
    for pool in &manifests.node_pools {
        if pool.generation != Some(ApiGeneration::V1) {
            continue;
        }
        let region = region.map(str::to_string).or_else(|| {
            snapshot
                .nodes
                .iter()
                .filter(|n| n.pool_name() == Some(pool.name.as_str()))
                .find_map(|n| n.node.labels.get(labels::REGION).cloned())
        });
        let region = match region {
            Some(r) => r,
            None if catalog.is_custom() => String::new(),
            None => continue,
        };
        let family = super::ami_family(manifests, pool);
        // A custom catalog's type may be offered only through the class's capacity
        // reservations: the class's selector terms keep those offerings (and the type).
        let class = pool
            .node_class_ref
            .as_ref()
            .and_then(|r| manifests.node_classes.iter().find(|c| c.name == r.name));
        let terms = class.map_or(&[][..], |c| &c.capacity_reservation_selector_terms[..]);
        let class_name = class.map(|c| c.name.clone()).unwrap_or_default();
        let names = cache
            .entry((region.clone(), family.clone(), class_name))
            .or_insert_with(|| {
                if !catalog.is_custom() && !catalog.regions().contains(&region.as_str()) {
                    return None;
                }
                let mut ctx = InstanceTypeContext::new(&region, &family);
                ctx.capacity_reservations = terms;
                catalog
                    .instance_types(&ctx)
                    .ok()
                    .map(|types| super::offered(&types))
            })
            .clone();
        match names {
            Some((n, o)) => {
                out.insert(pool.name.clone(), n);
                offerings.insert(pool.name.clone(), o);
            }
            None => notes.push(GatherNote::NoCatalogRegion {
                pool: pool.name.clone(),
                region,
            }),
        }
    }
    (out, offerings)
}
