//! Manifests → the solver's [`Input`]: the selected pools with their instance types sized for
//! their class, the existing nodes with their pods, the NodeClaims launched but not registered
//! yet (in-flight capacity), the DaemonSets and the pending pods.
//!
//! [`assemble`] is the pure part (no catalog, no IO): it only needs the normalised objects and
//! each pool's instance types, so it can move into `scheduling` once `Manifests` lives in the
//! model. [`CatalogSizing`] sizes a pool's types from the catalog.

use std::collections::{BTreeMap, HashMap};

use super::Selection;
use crate::api::Manifests;
use crate::cloud::{Catalog, CatalogError, InstanceTypeContext};
use crate::error::CommandError;
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use crate::model::pod::Pod;
use crate::model::requirements::Requirements;
use crate::model::resources::Resources;
use crate::scheduling::{apply_overlays, ExistingNode, Input, Options, PoolInput};

/// Builds the solver input: the pools `selection` names (all when it names none), sized by
/// `sizing`, with the NodeOverlays applied (a conflicting one is left out, with a warning in
/// `manifests.warnings`). The pending pods and the bound pods (into their nodes) are *moved* out of
/// `manifests` (on a 150k-pod cluster a copy would double the memory, docs/performance.md B4); everything
/// else is left in place.
pub fn build_input(
    manifests: &mut Manifests,
    selection: &Selection,
    sizing: &mut CatalogSizing<'_>,
) -> Result<Input, CommandError> {
    for name in &selection.nodepools {
        if !manifests.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner in the input"
            )));
        }
    }
    // A NodePool being deleted takes no new capacity (`core v1.14.1:
    // pkg/controllers/provisioning/provisioner.go` `GetNodePools`; suite_test.go "should ignore
    // NodePools that are deleting"), static ones included (`static/provisioning/controller.go`).
    let deleting: Vec<String> = manifests
        .node_pools
        .iter()
        .filter(|p| p.deleting)
        .map(|p| format!("{}/{}: being deleted (metadata.deletionTimestamp): Karpenter launches nothing for it; left out of the plan", p.kind(), p.name))
        .collect();
    manifests.warnings.extend(deleting);
    let selected: Vec<(&NodePool, Option<&NodeClass>)> = manifests
        .node_pools
        .iter()
        .filter(|p| !p.deleting)
        .filter(|p| selection.nodepools.is_empty() || selection.nodepools.contains(&p.name))
        .map(|p| (p, class_of(manifests, p)))
        .collect();
    sizing.expect(&selected);
    let mut pools = Vec::with_capacity(selected.len());
    for (pool, class) in selected {
        pools.push((pool.clone(), sizing.instance_types(pool, class)?));
    }
    let mut input = assemble(
        manifests,
        pools,
        Options {
            max_instance_types: selection.max_instance_types,
            ..Options::default()
        },
    );
    // NodeOverlays change the types' prices and capacity before anything is scheduled
    // (docs/karpenter.md §6.10); one that conflicts with another of its weight is not applied.
    for name in apply_overlays(&mut input.pools, &manifests.node_overlays) {
        manifests.warnings.push(format!(
            "NodeOverlay/{name}: not applied: it conflicts with another NodeOverlay of the same weight on the same instance types (Karpenter marks it ValidationSucceeded=False, reason Conflict)"
        ));
    }
    Ok(input)
}

/// The pure assembly (see the module documentation): `pools` are the selected pools with their
/// instance types. A pool's usage counts its nodes, its in-flight NodeClaims and what its
/// status reports.
pub fn assemble(
    manifests: &mut Manifests,
    pools: Vec<(NodePool, Vec<InstanceType>)>,
    options: Options,
) -> Input {
    let in_flight = in_flight_claims(manifests);
    let pools = pools
        .into_iter()
        .map(|(pool, instance_types)| {
            let usage = manifests
                .nodes
                .iter()
                .chain(in_flight.iter().map(|e| &e.node))
                .filter(|n| n.labels.get(pool.owner_label()) == Some(&pool.name))
                .fold(Resources::new(), |acc, n| {
                    acc.add(&with_node_count(&n.capacity))
                });
            PoolInput {
                node_class: pool.node_class_ref.as_ref().map(|r| r.name.clone()),
                instance_types,
                usage: usage.add(&pool.status_resources),
                pool,
            }
        })
        .collect();
    let mut by_node: HashMap<String, Vec<Pod>> = HashMap::new();
    for pod in std::mem::take(&mut manifests.bound_pods) {
        if let Some(node) = pod.node_name.clone() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    let mut existing_nodes: Vec<ExistingNode> = manifests
        .nodes
        .iter()
        .map(|n| ExistingNode {
            node: with_claim_taints(manifests, n.clone()),
            pods: by_node.remove(&n.name).unwrap_or_default(),
        })
        .collect();
    existing_nodes.extend(in_flight);
    Input {
        pods: std::mem::take(&mut manifests.pods),
        existing_nodes,
        pools,
        daemonsets: manifests.daemonsets.clone(),
        namespace_labels: manifests.namespace_labels.clone(),
        storage: Some(std::sync::Arc::new(manifests.storage.clone())),
        options,
    }
}

/// A Node with what its NodeClaim says about its taints (`core v1.14.1:
/// pkg/controllers/state/statenode.go` `Taints()`): the startup taints scheduling ignores until
/// it is initialized — its NodeClaim's, or, when the input has no NodeClaim for it, its
/// NodePool's (the template its NodeClaim was made from) — and, while a managed node has not
/// registered (`karpenter.sh/registered` not `true`), the NodeClaim's taints instead of the
/// Node's.
fn with_claim_taints(manifests: &Manifests, mut node: Node) -> Node {
    if node.initialized {
        return node;
    }
    let claim = manifests.node_claims.iter().find(|c| {
        c.node_name.as_deref() == Some(node.name.as_str())
            || (node.provider_id.is_some() && c.provider_id == node.provider_id)
    });
    match claim {
        Some(c) => {
            node.startup_taints = c.startup_taints.clone();
            let registered = node
                .labels
                .get(labels::REGISTERED)
                .is_some_and(|v| v == "true");
            if !registered {
                let cordon = node
                    .taints
                    .iter()
                    .find(|t| t.key == labels::UNSCHEDULABLE_TAINT)
                    .cloned();
                node.taints = c.taints.clone();
                node.taints.extend(cordon.filter(|_| node.unschedulable));
            }
        }
        None => {
            let pool = node
                .node_pool()
                .and_then(|name| manifests.node_pools.iter().find(|p| p.name == name));
            if let Some(p) = pool {
                node.startup_taints = p.startup_taints.clone();
            }
        }
    }
    node
}

/// A node's capacity plus `nodes: 1`, for `limits.nodes`.
pub fn with_node_count(capacity: &Resources) -> Resources {
    let mut r = capacity.clone();
    r.set("nodes", 1000);
    r
}

/// The node class a pool refers to, if it is in the input.
fn class_of<'m>(manifests: &'m Manifests, pool: &NodePool) -> Option<&'m NodeClass> {
    let r = pool.node_class_ref.as_ref()?;
    manifests
        .node_classes
        .iter()
        .find(|c| c.name == r.name && (r.kind.is_empty() || c.kind == r.kind))
}

/// NodeClaims launched but not registered as Nodes yet: capacity the scheduler fills first, like
/// Karpenter's in-flight nodes (labels from the NodeClaim, its taints, its reported allocatable).
fn in_flight_claims(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| !c.deleting && !c.allocatable.is_empty())
        .filter(|c| {
            !manifests.nodes.iter().any(|n| {
                Some(&n.name) == c.node_name.as_ref()
                    || (n.provider_id.is_some() && n.provider_id == c.provider_id)
            })
        })
        .map(|c| {
            let mut labels = c.labels.clone();
            for (k, v) in Requirements::from_selectors(&c.requirements).single_value_labels() {
                labels.entry(k).or_insert(v);
            }
            if let Some(pool) = &c.nodepool {
                labels
                    .entry(labels::NODEPOOL.to_string())
                    .or_insert_with(|| pool.clone());
            }
            ExistingNode {
                node: Node {
                    name: c.node_name.clone().unwrap_or_else(|| c.name.clone()),
                    labels,
                    annotations: c.annotations.clone(),
                    taints: c.taints.clone(),
                    startup_taints: c.startup_taints.clone(),
                    capacity: c.capacity.clone(),
                    allocatable: c.allocatable.clone(),
                    provider_id: c.provider_id.clone(),
                    ..Default::default()
                },
                pods: Vec::new(),
            }
        })
        .collect()
}

/// Sizes a pool's instance types from the catalog for its class (AMI family, kubelet, block
/// devices, subnet zones). Pools sharing a class (and no kubelet override) share one sizing;
/// the cached list is cloned for all but its last user, which takes it (one copy per class, not
/// two).
pub struct CatalogSizing<'c> {
    catalog: &'c Catalog,
    region: &'c str,
    /// Cache key → users left.
    uses: BTreeMap<String, usize>,
    sized: BTreeMap<String, Vec<InstanceType>>,
}

impl<'c> CatalogSizing<'c> {
    /// Sizing from `catalog` for `region`.
    pub fn new(catalog: &'c Catalog, region: &'c str) -> Self {
        CatalogSizing {
            catalog,
            region,
            uses: BTreeMap::new(),
            sized: BTreeMap::new(),
        }
    }

    /// Counts the users of each shareable sizing among the pools about to be sized.
    fn expect(&mut self, pools: &[(&NodePool, Option<&NodeClass>)]) {
        for (pool, class) in pools {
            let kubelet = pool.kubelet.is_some() || class.is_some_and(|c| c.kubelet.is_some());
            if !kubelet {
                *self.uses.entry(cache_key(pool, *class)).or_default() += 1;
            }
        }
    }

    /// The instance types of `pool` with `class`.
    fn instance_types(
        &mut self,
        pool: &NodePool,
        class: Option<&NodeClass>,
    ) -> Result<Vec<InstanceType>, CatalogError> {
        let kubelet = kubelet_of(pool, class);
        let key = cache_key(pool, class);
        let shared = kubelet.is_none() && self.uses.contains_key(&key);
        if shared {
            if let Some(types) = self.take_cached(&key) {
                return Ok(types);
            }
        }
        let family = class
            .and_then(|c| c.ami_family.clone())
            .unwrap_or_else(|| "AL2".to_string());
        let zones: Vec<String> = class
            .map(|c| c.status.subnets.iter().map(|(_, z)| z.clone()).collect())
            .unwrap_or_default();
        let mut ctx = InstanceTypeContext::new(self.region, &family);
        ctx.kubelet = kubelet;
        if let Some(c) = class {
            ctx.block_devices = &c.block_devices;
            ctx.instance_store_policy = c.instance_store_policy.as_deref();
            ctx.capacity_reservations = &c.capacity_reservation_selector_terms;
        }
        if !zones.is_empty() {
            ctx.zones = Some(&zones);
        }
        let types = self.catalog.instance_types(&ctx)?;
        if shared {
            if let Some(n) = self.uses.get_mut(&key) {
                *n -= 1;
                if *n > 0 {
                    self.sized.insert(key, types.clone());
                }
            }
        }
        Ok(types)
    }

    /// A cached sizing: cloned while other users are left, taken by the last.
    fn take_cached(&mut self, key: &str) -> Option<Vec<InstanceType>> {
        if !self.sized.contains_key(key) {
            return None;
        }
        let n = self.uses.get_mut(key)?;
        *n -= 1;
        if *n == 0 {
            self.sized.remove(key)
        } else {
            self.sized.get(key).cloned()
        }
    }
}

/// Kubelet settings live on the class from v1 on, on the pool before.
fn kubelet_of<'a>(
    pool: &'a NodePool,
    class: Option<&'a NodeClass>,
) -> Option<&'a crate::model::nodepool::KubeletConfig> {
    if pool.generation == Some(ApiGeneration::V1) {
        class.and_then(|c| c.kubelet.as_ref())
    } else {
        pool.kubelet
            .as_ref()
            .or_else(|| class.and_then(|c| c.kubelet.as_ref()))
    }
}

fn cache_key(pool: &NodePool, class: Option<&NodeClass>) -> String {
    format!(
        "{}/{}",
        class.map(|c| c.name.as_str()).unwrap_or("-"),
        pool.generation.map(|g| g.to_string()).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::taints::Effect;

    const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      startupTaints: [{key: pool.example/agent, effect: NoSchedule}]\n";

    fn node(labels: &str, taints: &str) -> String {
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {{karpenter.sh/nodepool: default{labels}}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n  taints: {taints}\n"
        )
    }

    const CLAIM: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-x}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\n  taints: [{key: claim.example/t, effect: NoSchedule}]\n  startupTaints: [{key: claim.example/agent, effect: NoSchedule}]\nstatus: {nodeName: n1, providerID: aws:///us-east-1a/i-1}\n";

    fn existing(text: &str) -> Node {
        let mut m = crate::api::load_str("in.yaml", text).unwrap();
        let input = assemble(&mut m, Vec::new(), Options::default());
        input.existing_nodes[0].node.clone()
    }

    fn keys(taints: &[crate::model::taints::Taint]) -> Vec<&str> {
        taints.iter().map(|t| t.key.as_str()).collect()
    }

    /// `statenode.go` `Taints()`: a node not initialized ignores its NodeClaim's startup taints
    /// (its pool's without a NodeClaim); before registration the NodeClaim's taints stand for the
    /// Node's.
    #[test]
    fn an_uninitialized_node_gets_its_claims_or_pools_startup_taints() {
        let taints =
            "[{key: claim.example/agent, effect: NoSchedule}, {key: other, effect: NoSchedule}]";
        let registered = ", karpenter.sh/registered: \"true\"";
        let n = existing(&format!("{POOL}{}{CLAIM}", node(registered, taints)));
        assert_eq!(keys(&n.startup_taints), ["claim.example/agent"]);
        assert_eq!(keys(&n.scheduling_taints()), ["other"]);
        // Not registered: the NodeClaim's taints.
        let n = existing(&format!("{POOL}{}{CLAIM}", node("", taints)));
        assert_eq!(keys(&n.scheduling_taints()), ["claim.example/t"]);
        // No NodeClaim in the input: the pool's startup taints.
        let n = existing(&format!(
            "{POOL}{}",
            node(
                registered,
                "[{key: pool.example/agent, effect: NoSchedule}]"
            )
        ));
        assert_eq!(keys(&n.startup_taints), ["pool.example/agent"]);
        assert!(n.scheduling_taints().is_empty());
        // Initialized: every taint holds.
        let n = existing(&format!(
            "{POOL}{}{CLAIM}",
            node(", karpenter.sh/initialized: \"true\"", taints)
        ));
        assert_eq!(n.scheduling_taints().len(), 2);
        assert_eq!(n.taints[0].effect, Effect::NoSchedule);
    }
}
