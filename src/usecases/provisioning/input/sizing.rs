//! A pool's instance types sized from the catalog for its node class: AMI family overhead,
//! kubelet settings, the class's images, cached per pool and class.

use std::collections::{BTreeMap, HashMap};

use crate::api::Manifests;
use crate::cloud::ami::facts::family_image_requirements;
use crate::cloud::{Catalog, CatalogError, InstanceTypeContext};
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use crate::model::placement_group::PlacementGroupSelector;
use crate::model::requirements::Requirements;
use crate::scheduling::PoolImage;

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
    /// NodeOverlay prices for types the catalog has none for (`InstanceTypeContext::overlay_prices`).
    pub(super) overlay_prices: BTreeMap<String, f64>,
    /// Node class name → instance type → discovered memory capacity
    /// (`InstanceTypeContext::discovered_memory`, [`CatalogSizing::discover_memory`]).
    discovered_memory: BTreeMap<String, BTreeMap<String, i64>>,
    /// The controller's `VM_MEMORY_OVERHEAD_PERCENT` (`Selection::vm_memory_overhead_percent`).
    pub(super) vm_memory_overhead_percent: f64,
    /// The controller's `RESERVED_ENIS` (`Selection::reserved_enis`).
    pub(super) reserved_enis: i64,
}

impl<'c> CatalogSizing<'c> {
    /// Sizing from `catalog` for `region`.
    pub fn new(catalog: &'c Catalog, region: &'c str) -> Self {
        CatalogSizing {
            catalog,
            region,
            uses: BTreeMap::new(),
            sized: BTreeMap::new(),
            overlay_prices: BTreeMap::new(),
            discovered_memory: BTreeMap::new(),
            vm_memory_overhead_percent: crate::model::overhead::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
            reserved_enis: 0,
        }
    }

    /// Records the memory capacity the registered nodes of `manifests` report, as the AWS
    /// provider's discovered-capacity cache does (`aws v1.14.1:
    /// pkg/controllers/providers/instancetype/capacity/controller.go`, `pkg/providers/instancetype/
    /// instancetype.go` `UpdateInstanceTypeCapacityFromNode`): a node labelled
    /// `karpenter.sh/registered: "true"` whose NodeClaim's `status.imageID` is the AMI its class's
    /// `status.amis` map its instance type to (the first AMI, in order, whose requirements its
    /// labels meet: `amifamily.MapToInstanceTypes`) gives its `status.capacity.memory` for that
    /// type and class; the smallest seen wins. A class whose AMIs changed since the node launched
    /// gets nothing from it (upstream keys the cache by the AMIs' hash). Upstream's cache also
    /// remembers nodes deleted in the last 60 days; only the nodes of the input are seen here.
    /// Several calls add up (consolidation records before it takes the NodeClaims away).
    pub fn discover_memory(&mut self, manifests: &Manifests) {
        if manifests
            .node_classes
            .iter()
            .all(|c| c.status.amis.is_empty())
        {
            return;
        }
        // NodeClaims by node name and provider id: one look-up per node, not a search.
        let mut claims: HashMap<&str, &crate::model::nodeclaim::NodeClaim> = HashMap::new();
        for c in &manifests.node_claims {
            for key in [c.node_name.as_deref(), c.provider_id.as_deref()]
                .into_iter()
                .flatten()
            {
                claims.entry(key).or_insert(c);
            }
        }
        for node in &manifests.nodes {
            if node.labels.get(labels::REGISTERED).map(String::as_str) != Some("true")
                || node.capacity.memory <= 0
            {
                continue;
            }
            let Some(instance_type) = node.labels.get(labels::INSTANCE_TYPE) else {
                continue;
            };
            let by_provider_id = || node.provider_id.as_deref().and_then(|p| claims.get(p));
            let Some(claim) = claims.get(node.name.as_str()).or_else(by_provider_id) else {
                continue;
            };
            let (Some(image), Some(class_ref)) = (&claim.image_id, &claim.node_class_ref) else {
                continue;
            };
            let Some(class) = manifests.node_classes.iter().find(|c| {
                c.name == class_ref.name && (class_ref.kind.is_empty() || c.kind == class_ref.kind)
            }) else {
                continue;
            };
            if current_ami(&node.labels, class) != Some(image.as_str()) {
                continue;
            }
            let memory = self
                .discovered_memory
                .entry(class.name.clone())
                .or_default()
                .entry(instance_type.clone())
                .or_insert(node.capacity.memory);
            *memory = (*memory).min(node.capacity.memory);
        }
    }

    /// Each of `selected` with its instance types.
    pub(super) fn size_all(
        &mut self,
        selected: &[(&NodePool, Option<&NodeClass>)],
    ) -> Result<Vec<(NodePool, Vec<InstanceType>)>, CatalogError> {
        self.expect(selected);
        let mut pools = Vec::with_capacity(selected.len());
        for (pool, class) in selected {
            pools.push(((*pool).clone(), self.instance_types(pool, *class)?));
        }
        Ok(pools)
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
    pub(super) fn instance_types(
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
            .map(|c| c.status.subnets.iter().map(|s| s.zone.clone()).collect())
            .unwrap_or_default();
        // `status.subnets[].zoneID`: the offerings' `topology.k8s.aws/zone-id`.
        let zone_ids: BTreeMap<String, String> = class
            .into_iter()
            .flat_map(|c| &c.status.subnets)
            .filter_map(|s| Some((s.zone.clone(), s.zone_id.clone()?)))
            .collect();
        let network_interfaces = class.and_then(NodeClass::network_interfaces);
        // The class's placement group, resolved against the catalog's (`Catalog::
        // placement_groups`; unresolved: the plan assumes none, `assumptions.rs`).
        let placement_group = class
            .and_then(PlacementGroupSelector::of)
            .and_then(|s| s.resolve(self.catalog.placement_groups()?).cloned());
        let mut ctx = InstanceTypeContext::new(self.region, &family);
        ctx.network_interfaces = network_interfaces.as_deref();
        ctx.placement_group = placement_group.as_ref();
        if let Some(c) = class.filter(|c| c.generation.is_none_or(|g| g == ApiGeneration::V1)) {
            ctx.nested_virtualization = c.nested_virtualization.as_deref() == Some("enabled");
            ctx.connection_tracking = c
                .raw_spec
                .as_ref()
                .and_then(|s| s.get("connectionTracking"))
                .is_some_and(|v| !v.is_null());
        }
        ctx.kubelet = kubelet;
        ctx.vm_memory_overhead_percent = self.vm_memory_overhead_percent;
        ctx.reserved_enis = self.reserved_enis;
        ctx.generation = pool.generation;
        ctx.overlay_prices = &self.overlay_prices;
        if let Some(c) = class {
            ctx.block_devices = &c.block_devices;
            ctx.instance_store_policy = c.instance_store_policy.as_deref();
            ctx.capacity_reservations = &c.capacity_reservation_selector_terms;
        }
        if !zones.is_empty() {
            ctx.zones = Some(&zones);
        }
        ctx.zone_ids = &zone_ids;
        if let Some(memory) = class.and_then(|c| self.discovered_memory.get(&c.name)) {
            ctx.discovered_memory = memory;
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

/// The AMIs `pool`'s node class lists in its status, in order. A class without a status whose
/// terms are an alias or a family default gets its family's images by what they run on (their
/// SSM parameter standing for the id): AL2 publishes no arm64 GPU image, so a g5g gets no launch
/// template (aws v1.14.1 `amifamily/al2.go` `DescribeImageQuery`, `resolver.go` `Resolve` →
/// `MapToInstanceTypes`). Empty otherwise: offline every type is then assumed to have one.
pub(super) fn class_images(pool: &NodePool, classes: &[NodeClass]) -> Vec<PoolImage> {
    let Some(class_ref) = pool.node_class_ref.as_ref() else {
        return Vec::new();
    };
    classes
        .iter()
        .find(|c| {
            c.name == class_ref.name && (class_ref.kind.is_empty() || c.kind == class_ref.kind)
        })
        .map(|class| {
            if class.status.amis.is_empty() {
                return family_image_requirements(class)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(parameter, requirements)| PoolImage {
                        id: parameter,
                        requirements: Requirements::from_selectors(&requirements),
                    })
                    .collect();
            }
            class
                .status
                .amis
                .iter()
                .map(|ami| PoolImage {
                    id: ami.id.clone(),
                    requirements: Requirements::from_selectors(&ami.requirements),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `amifamily.MapToInstanceTypes` for a node: the id of the first of `class`'s `status.amis`
/// whose requirements the node's labels meet (a key the labels lack meets only `DoesNotExist` /
/// `NotIn`, as for upstream's `NewLabelRequirements(node.Labels)`).
fn current_ami<'c>(
    node_labels: &BTreeMap<String, String>,
    class: &'c NodeClass,
) -> Option<&'c str> {
    let mut node = Requirements::new();
    for (key, value) in node_labels {
        node.add(crate::model::requirements::Requirement::single(
            labels::normalize_key(key),
            value,
        ));
    }
    class
        .status
        .amis
        .iter()
        .find(|ami| {
            node.compatible(&Requirements::from_selectors(&ami.requirements), |_| false)
                .is_ok()
        })
        .map(|ami| ami.id.as_str())
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
