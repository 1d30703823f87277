//! What every live use case shares: the seams (cluster, cloud, clock), the cluster nodes join and
//! its Kubernetes version, the instance-type catalog, the node classes resolved for launching
//! (cached for the run), the default instance profile, the instances this tool launched, and
//! what Karpenter's controller does to a node once it registers.
//!
//! Connecting (kubeconfig flags → a client, AWS options → a cloud, `--catalog` → a catalog) is
//! the command's: [`Live`] only borrows what it was given. The cluster and the cloud are `Sized`
//! because the adapters' typed operations (`k8s::ops`, `cloud::ami`, …) take `&dyn` seams.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::clock::Clock;
use crate::api::Manifests;
use crate::cloud::ami::{self, KubeVersion, ResolvedImage};
use crate::cloud::launch::{self, ClusterInfo, InflightIps, TypeFacts, UnavailableOfferings};
use crate::cloud::network::NetworkResolver;
use crate::cloud::profile::{self, ProfileInputs};
use crate::cloud::reservations;
use crate::cloud::types::{
    Cloud, CloudError, Compute, Filter, Instance, InstanceQuery, LaunchMode, Subnet,
};
use crate::cloud::userdata::Family;
use crate::cloud::{Catalog, InstanceTypeContext};
use crate::error::CommandError;
use crate::k8s::{coexist, ops, Cluster};
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::node::{ghost_instances, Listing, Node};
use crate::model::nodepool::{NodeClass, NodePool, StatusSubnet};
use crate::model::placement_group::{PlacementGroup, PlacementGroupSelector};
use crate::model::reservation::RESERVATION_LABELS;
use crate::model::taints::Effect;

/// A live run's environment (see the module documentation).
pub struct Live<'a, C, P, K: ?Sized> {
    /// The Kubernetes API.
    pub cluster: &'a C,
    /// EC2, SSM and IAM.
    pub cloud: &'a P,
    /// Time and Ctrl-C.
    pub clock: &'a K,
    /// The cluster nodes join (name, endpoint, CA), from the kubeconfig.
    pub info: ClusterInfo,
    /// Its Kubernetes version.
    pub version: KubeVersion,
    /// Instance types.
    pub catalog: Catalog,
    classes: BTreeMap<String, ResolvedClass>,
    /// `aws.defaultInstanceProfile` of `karpenter-global-settings`, once read.
    default_profile: Option<Option<String>>,
    /// `--instance-profile`: the nodes' instance profile, whatever the classes say.
    instance_profile: Option<String>,
    /// Capacity reservations a launch found exhausted, with when (Unix seconds): planned as
    /// having no instance left, whatever DescribeCapacityReservations says, for
    /// [`RESERVATION_SYNC_SECONDS`] (`MarkUnavailable`, until the provider's next sync).
    pub unavailable_reservations: BTreeMap<String, i64>,
    /// The free IPs this run's launches took from their subnets (`cloud::launch::InflightIps`).
    pub inflight_ips: InflightIps,
    /// The (capacity type, instance type, zone) offerings this run's launches found without
    /// capacity, for three minutes each (`cloud::launch::UnavailableOfferings`, `aws v1.14.1:
    /// pkg/cache/unavailableofferings.go`): later plans and launches of the run leave them out.
    pub unavailable_offerings: UnavailableOfferings,
    /// Whether the cluster's DNS Service was read ([`Live::read_cluster_dns`]).
    dns_read: bool,
    /// Each node class's subnets as DescribeSubnets last listed them, with when (Unix
    /// seconds): the zones its instance types are offered in ([`Live::with_subnet_zones`]).
    subnet_zones: RefCell<SubnetZones>,
    /// The launch templates' mode: open with the `ReservedCapacity` gate off
    /// (`Selection::reserved_capacity_gate`), else targeted.
    pub launch_mode: LaunchMode,
    /// The AWS controller's instance-type settings the replace pipeline's re-plans size with,
    /// as the decisions do (`None`: the controller's defaults).
    pub type_settings: TypeSettings,
}

/// The AWS controller's `VM_MEMORY_OVERHEAD_PERCENT` and `RESERVED_ENIS` (`aws v1.14.1:
/// pkg/operator/options/options.go`; `Selection::vm_memory_overhead_percent`,
/// `Selection::reserved_enis`), `None` where the controller sets neither.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypeSettings {
    /// `VM_MEMORY_OVERHEAD_PERCENT`.
    pub vm_memory_overhead_percent: Option<f64>,
    /// `RESERVED_ENIS`.
    pub reserved_enis: Option<i64>,
}

impl TypeSettings {
    /// The running `controller`'s (none read: the defaults).
    pub fn of(controller: Option<&crate::usecases::consolidate::Controller>) -> Self {
        TypeSettings {
            vm_memory_overhead_percent: controller.and_then(|c| c.vm_memory_overhead_percent),
            reserved_enis: controller.and_then(|c| c.reserved_enis),
        }
    }

    /// Each setting of `self` (a flag's), else `fallback`'s (the controller's).
    pub fn or(self, fallback: TypeSettings) -> Self {
        TypeSettings {
            vm_memory_overhead_percent: self
                .vm_memory_overhead_percent
                .or(fallback.vm_memory_overhead_percent),
            reserved_enis: self.reserved_enis.or(fallback.reserved_enis),
        }
    }
}

/// How long a reservation marked unavailable stays so: Karpenter caches each reservation query
/// for a minute (`aws v1.14.1: pkg/operator/operator.go`, `awscache.DefaultTTL`) and the next
/// DescribeCapacityReservations overwrites the count (`provider.go` `syncAvailability`).
pub const RESERVATION_SYNC_SECONDS: i64 = 60;

/// How long a class's subnets are reused for planning: the provider caches DescribeSubnets for a
/// minute (`aws v1.14.1: pkg/operator/operator.go`, `awscache.DefaultTTL`).
const SUBNET_ZONES_TTL_SECONDS: i64 = 60;

/// A node class resolved for launching.
#[derive(Debug, Clone)]
pub struct ResolvedClass {
    /// The class, with `instance_profile` filled in.
    pub class: NodeClass,
    /// User-data family.
    pub family: Family,
    /// Images, best first.
    pub images: Vec<ResolvedImage>,
    /// Subnets.
    pub subnets: Vec<Subnet>,
    /// Security group ids.
    pub security_group_ids: Vec<String>,
}

impl<'a, C: Cluster, P: Compute, K: Clock + ?Sized> Live<'a, C, P, K> {
    /// An environment over connected seams.
    pub fn new(
        cluster: &'a C,
        cloud: &'a P,
        clock: &'a K,
        info: ClusterInfo,
        version: KubeVersion,
        catalog: Catalog,
    ) -> Self {
        Live {
            cluster,
            cloud,
            clock,
            info,
            version,
            catalog,
            classes: BTreeMap::new(),
            default_profile: None,
            instance_profile: None,
            unavailable_reservations: BTreeMap::new(),
            inflight_ips: InflightIps::default(),
            unavailable_offerings: UnavailableOfferings::default(),
            dns_read: false,
            subnet_zones: RefCell::new(BTreeMap::new()),
            launch_mode: LaunchMode::Targeted,
            type_settings: TypeSettings::default(),
        }
    }

    /// The `ReservedCapacity` gate this session launches under: `Some(false)` in the open launch
    /// mode, else `None` (the gate's default, on).
    pub fn reserved_capacity_gate(&self) -> Option<bool> {
        (self.launch_mode == LaunchMode::Open).then_some(false)
    }

    /// Launches with `profile` (`--instance-profile`, docs/spec.md §5.2) as every node's
    /// instance profile: before the class's `instanceProfile`, its `role`'s profile and
    /// `aws.defaultInstanceProfile`, and with no IAM call.
    pub fn with_instance_profile(mut self, profile: Option<String>) -> Self {
        self.instance_profile = profile;
        self
    }

    /// Reads the cluster's DNS service IP into [`Live::info`] once per run, before the first
    /// launch, as Karpenter reads it at start (`aws v1.14.1: pkg/operator/operator.go`
    /// `KubeDNSIP`): the nodes' cluster DNS in their user data (unless the class's
    /// `kubelet.clusterDNS` sets one, `amifamily/resolver.go` `defaultClusterDNS`), and an IPv6
    /// address makes the launch templates' interfaces IPv6 (`launchtemplate.go`
    /// `ClusterIPFamily`) and AL2's bootstrap `--ip-family ipv6`. No Service (or no IP in it):
    /// none, IPv4, as Karpenter. A Service that cannot be read is the same, and the returned
    /// warning says so (Karpenter only logs it). The service CIDR an AL2023 `NodeConfig` needs
    /// is derived from the same address ([`crate::cloud::launch::service_cidr_of_dns`]).
    pub fn read_cluster_dns(&mut self) -> Option<String> {
        if std::mem::replace(&mut self.dns_read, true) || self.info.cluster_dns.is_some() {
            return None;
        }
        match ops::kube_dns_ip(self.cluster) {
            Ok(ip) => {
                self.info.cluster_dns = ip.map(|ip| ip.to_string());
                if self.info.service_cidr.is_none() {
                    self.info.service_cidr = ip.and_then(crate::cloud::launch::service_cidr_of_dns);
                }
                None
            }
            Err(e) => Some(format!(
                "the cluster DNS service kube-system/kube-dns could not be read ({e}): the nodes launched get their AMI's default cluster DNS and IPv4 network interfaces, and AL2023 nodes no service CIDR, without which nodeadm does not join them"
            )),
        }
    }

    /// The catalog to plan `classes` with: an AWS catalog gets the capacity reservations the
    /// classes' `capacityReservationSelectorTerms` select, read now (one
    /// DescribeCapacityReservations per distinct query; their instance counts change as
    /// instances launch), less those found exhausted this run; a custom catalog keeps its own.
    /// The second value: warnings (a class whose terms found no active reservation, a
    /// reservation Karpenter would skip).
    pub fn planning_catalog(
        &self,
        classes: &[NodeClass],
    ) -> Result<(Catalog, Vec<String>), CommandError> {
        let now = self.clock.now();
        let unavailable = self
            .unavailable_reservations
            .iter()
            .filter(|(_, at)| now - **at < RESERVATION_SYNC_SECONDS)
            .map(|(id, _)| id);
        catalog_with_reservations(self.cloud, &self.catalog, classes, now, unavailable)
    }

    /// Fills the `status.subnets` of the classes `pools` refer to, where no controller wrote it,
    /// from their subnet selectors as the controller would (`aws v1.14.1:
    /// pkg/controllers/nodeclass/subnet.go`): a type is offered only in the zones of its class's
    /// subnets (`instancetype/offering` `createOfferings`), so a plan never picks a zone the
    /// launch has no subnet in — nor falls back to one after an ICE. A status the controller
    /// wrote is kept, as Karpenter plans with it. A class whose subnets cannot be read keeps
    /// every zone, and a warning says so; one whose selector matches none too (the launch
    /// refuses it by name).
    pub fn with_subnet_zones(&self, classes: &mut [NodeClass], pools: &[NodePool]) -> Vec<String> {
        fill_subnet_zones(
            self.cloud,
            classes,
            pools,
            self.clock.now(),
            &mut self.subnet_zones.borrow_mut(),
        )
    }

    /// The instances this tool launched for the cluster that are pending or running.
    pub fn launched_instances(&self) -> Result<Vec<Instance>, CommandError> {
        let mut found = self.tool_instances()?;
        found.retain(is_live);
        Ok(found)
    }

    /// Every instance this tool launched for the cluster, whatever its state (one
    /// DescribeInstances by its tag, as [`Live::launched_instances`]; EC2 keeps a terminated
    /// instance listed for about an hour): the pending and running ones are the capacity it
    /// launched, the others tell the Nodes registered again by a kubelet whose instance is going
    /// ([`ghost_instances`] with [`Listing::AllOfTheTools`]).
    pub fn tool_instances(&self) -> Result<Vec<Instance>, CommandError> {
        let mut found = self
            .cloud
            .describe_instances(&InstanceQuery::Filters(vec![
                Filter::new(format!("tag:{}", labels::TOOL_TAG), [launch::TOOL_NAME]),
                Filter::new("tag:eks:eks-cluster-name", [self.info.name.as_str()]),
            ]))
            .map_err(aws_error)?;
        found.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(found)
    }

    /// The pending or running instances launched for any of the NodeClaims `claims` (by their
    /// `karpenter.sh/nodeclaim` tag): what a run killed between its launch and its record left.
    pub fn instances_of_claims(&self, claims: &[&str]) -> Result<Vec<Instance>, CommandError> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let mut found = self
            .cloud
            .describe_instances(&InstanceQuery::Filters(vec![
                Filter::new(format!("tag:{}", labels::NODECLAIM), claims.iter().copied()),
                Filter::new("tag:eks:eks-cluster-name", [self.info.name.as_str()]),
                Filter::new("instance-state-name", ["pending", "running"]),
            ]))
            .map_err(aws_error)?;
        found.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(found)
    }

    /// The node class of `pool`, resolved (AMIs, subnets, security groups, instance profile)
    /// on first use and cached for the run; `classes` are the cluster's.
    pub fn resolved(
        &mut self,
        classes: &[NodeClass],
        pool: &NodePool,
    ) -> Result<&ResolvedClass, CommandError> {
        let Some(reference) = &pool.node_class_ref else {
            return Err(CommandError::remote(format!(
                "{}/{} has no node class",
                pool.kind(),
                pool.name
            )));
        };
        if !self.classes.contains_key(&reference.name) {
            let class = classes
                .iter()
                .find(|c| c.name == reference.name)
                .ok_or_else(|| {
                    CommandError::remote(format!(
                        "{}/{} refers to {} {:?}, which is not in the cluster",
                        pool.kind(),
                        pool.name,
                        reference.kind,
                        reference.name
                    ))
                })?;
            if self.default_profile.is_none() && self.instance_profile.is_none() {
                self.default_profile = Some(default_instance_profile(self.cluster)?);
            }
            let profiles = Profiles {
                flag: self.instance_profile.as_deref(),
                default_instance_profile: self.default_profile.as_ref().and_then(Option::as_deref),
            };
            let resolved =
                resolve_class(self.cloud, class, self.version, &profiles, self.clock.now())?;
            self.classes.insert(reference.name.clone(), resolved);
        }
        Ok(&self.classes[&reference.name])
    }

    /// The labels a node of `instance_type` gets from its type (`karpenter.k8s.aws/instance-*`,
    /// …), from the catalog: for replacements adopted from a record, whose launch is not at
    /// hand. Empty when the type is unknown.
    pub fn type_labels(&self, instance_type: &str) -> BTreeMap<String, String> {
        let region = self.cloud.region();
        let context = InstanceTypeContext::new(&region, "AL2");
        self.catalog
            .instance_types(&context)
            .ok()
            .and_then(|types| types.into_iter().find(|t| t.name == instance_type))
            .map(|t| aws_type_labels(&t))
            .unwrap_or_default()
    }

    /// What Karpenter's controllers do to a node launched here, as far as its Node does not show
    /// it done yet (one patch, none when nothing is missing). Registration, once, when the Node
    /// is first seen (`karpenter.sh/registered` not on it yet): the NodeClaim's labels
    /// (`type_labels()`, see `provisioning::launch::registration_labels`), its annotations (the
    /// template's), `karpenter.sh/registered`, and its taints and startup taints (`taints`) that
    /// the Node lacks (matched by key and effect), unless the Node is labelled
    /// `karpenter.sh/do-not-sync-taints=true` (its kubelet registers them: every family but
    /// Custom) — `core v1.14.1: pkg/controllers/nodeclaim/lifecycle/registration.go syncNode`,
    /// `registration_test.go` "should sync the taints / startupTaints …", "should not re-sync
    /// the startupTaints to the Node when the startupTaints are removed". Once `initialized`
    /// ([`Node::initialization`], decided by the caller with the NodeClaim's startup taints and
    /// requests), `karpenter.sh/initialized` (`initialization.go`), so budgets, drift and later
    /// commands treat it like any managed node. At registration too, `karpenter.sh/unregistered:NoExecute`
    /// comes off, whatever `do-not-sync-taints` says (`registration.go Reconcile`). `Ok(true)` when
    /// taints were put on the Node or taken off: it is not initialized this time, whatever
    /// `initialized` said.
    pub fn sync_registered(
        &self,
        node: &Node,
        type_labels: impl FnOnce() -> BTreeMap<String, String>,
        annotations: &BTreeMap<String, String>,
        taints: &[&crate::model::taints::Taint],
        initialized: bool,
    ) -> Result<bool, CommandError> {
        let has = |key: &str| node.labels.get(key).is_some_and(|v| v == "true");
        let register = !has(labels::REGISTERED);
        let mut missing: Vec<&crate::model::taints::Taint> = Vec::new();
        if register && !has(labels::DO_NOT_SYNC_TAINTS) {
            for t in taints {
                let on = node.taints.iter().any(|n| t.matches(n))
                    || missing.iter().any(|m| t.matches(m));
                if !on {
                    missing.push(t);
                }
            }
        }
        // The race-protecting `karpenter.sh/unregistered:NoExecute` a kubelet registered with
        // (a Custom class's userData, as `convert` advises) comes off at registration, whatever
        // `do-not-sync-taints` says (`core v1.14.1: pkg/controllers/nodeclaim/lifecycle/
        // registration.go Reconcile`, `lo.Reject(… MatchTaint(&v1.UnregisteredNoExecuteTaint))`;
        // `registration_test.go` "should sync the karpenter.sh/registered label to the Node and
        // remove the karpenter.sh/unregistered taint when the Node comes online"). Before s29 it
        // stayed: a known ephemeral taint, so the node was never initialized here.
        let unregistered: Vec<usize> = node
            .taints
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                register && t.key == labels::UNREGISTERED_TAINT && t.effect == Effect::NoExecute
            })
            .map(|(i, _)| i)
            .collect();
        let mut node_labels = BTreeMap::new();
        if register {
            node_labels = type_labels();
            // A partition placement group's partition, when EC2 picked it: read from the
            // instance (`aws v1.14.1: pkg/cloudprovider/registrationhooks/placementgrouphook.go`,
            // which holds registration until DescribeInstances names it). An instance that
            // names none gets no partition label (never the empty one).
            if node_labels
                .get(labels::PLACEMENT_GROUP_PARTITION)
                .is_some_and(String::is_empty)
            {
                match self.partition_of(node)? {
                    Some(p) => {
                        node_labels.insert(labels::PLACEMENT_GROUP_PARTITION.into(), p.to_string())
                    }
                    None => node_labels.remove(labels::PLACEMENT_GROUP_PARTITION),
                };
            }
            node_labels.insert(labels::REGISTERED.to_string(), "true".to_string());
        }
        if initialized && missing.is_empty() && !has(labels::INITIALIZED) {
            node_labels.insert(labels::INITIALIZED.to_string(), "true".to_string());
        }
        if node_labels.is_empty() {
            return Ok(false);
        }
        let path = format!("/api/v1/nodes/{}", node.name);
        if !missing.is_empty() || !unregistered.is_empty() {
            // Appended with a JSON patch (no read, no `get nodes` permission, and taints a
            // kubelet or agent changes meanwhile stay); the labels follow once it went
            // through, so a node is registered only with its taints on. The model's taints
            // include the one a cordon implies: a cordoned node's list is written whole.
            let implied = |t: &&crate::model::taints::Taint| {
                node.unschedulable && t.key == labels::UNSCHEDULABLE_TAINT
            };
            let json = |t: &crate::model::taints::Taint| {
                let mut v = serde_json::json!({"key": t.key, "effect": t.effect.as_str()});
                if !t.value.is_empty() {
                    v["value"] = t.value.clone().into();
                }
                v
            };
            // The unregistered taints go first, last index first, each checked to be still
            // there (the model's taints are the Node's in order, the implied one after them).
            let mut ops_list: Vec<serde_json::Value> = unregistered
                .iter()
                .rev()
                .flat_map(|i| {
                    let at = format!("/spec/taints/{i}");
                    [
                        serde_json::json!({"op": "test", "path": format!("{at}/key"),
                            "value": labels::UNREGISTERED_TAINT}),
                        serde_json::json!({"op": "test", "path": format!("{at}/effect"),
                            "value": Effect::NoExecute.as_str()}),
                        serde_json::json!({"op": "remove", "path": at}),
                    ]
                })
                .collect();
            let kept = node.taints.iter().filter(|t| !implied(t)).count() - unregistered.len();
            ops_list.extend(if missing.is_empty() {
                Vec::new()
            } else if kept == 0 {
                vec![serde_json::json!({"op": "add", "path": "/spec/taints",
                    "value": missing.iter().map(|t| json(t)).collect::<Vec<_>>()})]
            } else {
                missing
                    .iter()
                    .map(|t| serde_json::json!({"op": "add", "path": "/spec/taints/-", "value": json(t)}))
                    .collect()
            });
            match ops::json_patch(self.cluster, &path, &serde_json::json!(ops_list)) {
                Ok(_) => {}
                // Gone, or its taints changed shape meanwhile: registered on the next look.
                Err(e) if matches!(e.status(), Some(404) | Some(409) | Some(422)) => {
                    return Ok(true)
                }
                Err(e) => return Err(e.into()),
            }
        }
        let mut patch = serde_json::json!({ "metadata": { "labels": node_labels } });
        if register && !annotations.is_empty() {
            patch["metadata"]["annotations"] = serde_json::json!(annotations);
        }
        ops::merge_patch(self.cluster, &path, &patch)?;
        Ok(!missing.is_empty() || !unregistered.is_empty())
    }

    /// `Placement.PartitionNumber` of `node`'s instance (DescribeInstances by id).
    fn partition_of(&self, node: &Node) -> Result<Option<i32>, CommandError> {
        let Some(id) = node.instance_id() else {
            return Ok(None);
        };
        let found = self
            .cloud
            .describe_instances(&InstanceQuery::Ids(vec![id.to_string()]))
            .map_err(aws_error)?;
        Ok(found
            .into_iter()
            .find(|i| i.id == id)
            .and_then(|i| i.partition))
    }
}

/// Whether an instance is pending or running: capacity launched or on its way.
pub fn is_live(instance: &Instance) -> bool {
    matches!(instance.state.as_str(), "pending" | "running")
}

/// Leaves out of `manifests` the Nodes that are no capacity although registered — ghosts of
/// instances going away ([`ghost_instances`]: this tool's own rule) — with the pods bound to
/// them, and says which: for a plan over a snapshot read once with the listing at hand
/// (`provision`'s, of every instance of the tool's). `drift replace`, which reads the cluster
/// again at every round, holds the ghosts' instances as no capacity instead
/// (`replace::gone_instances`); the rule is the same.
pub fn drop_ghosts(
    manifests: &mut Manifests,
    instances: &[Instance],
    listing: Listing<'_>,
) -> Vec<String> {
    let ghosts = ghost_instances(&manifests.nodes, instances, listing);
    if ghosts.is_empty() {
        return Vec::new();
    }
    let (gone, kept): (Vec<Node>, Vec<Node>) = std::mem::take(&mut manifests.nodes)
        .into_iter()
        .partition(|n| n.instance_id().is_some_and(|id| ghosts.contains(id)));
    manifests.nodes = kept;
    let names: Vec<String> = gone.into_iter().map(|n| n.name).collect();
    manifests
        .bound_pods
        .retain(|p| !p.node_name.as_ref().is_some_and(|n| names.contains(n)));
    names
}

/// `catalog` with the capacity reservations `classes` select, read now (`Live::planning_catalog`;
/// `consolidate` uses it too, so a reserved node's price and reserved replacements are
/// Karpenter's); `unavailable`: reservations found exhausted this run. A custom catalog keeps
/// its own. The second value: warnings. Also the placement groups the classes'
/// `placementGroupSelector`s resolve to ([`placement_groups`]).
pub fn catalog_with_reservations<'u>(
    cloud: &impl Compute,
    catalog: &Catalog,
    classes: &[NodeClass],
    now: i64,
    unavailable: impl IntoIterator<Item = &'u String>,
) -> Result<(Catalog, Vec<String>), CommandError> {
    if catalog.is_custom() {
        return Ok((catalog.clone(), Vec::new()));
    }
    let (catalog, mut warnings) = with_reservations(cloud, catalog, classes, now, unavailable)?;
    if classes
        .iter()
        .all(|c| PlacementGroupSelector::of(c).is_none())
    {
        return Ok((catalog, warnings));
    }
    match placement_groups(cloud, classes) {
        Ok(groups) => Ok((catalog.with_placement_groups(groups), warnings)),
        // `ec2:DescribePlacementGroups` is optional in deploy/iam-policy.json: without it the
        // plan assumes no placement group, as offline without `placementGroups`.
        Err(e) if e.is_permission() => {
            warnings.push(format!(
                "assuming: placement groups are not read ({e}): the plan has no placement group \
                 (no placement-group-* labels, partition domains or strategy check)"
            ));
            Ok((catalog, warnings))
        }
        Err(e) => Err(CommandError::remote(format!("placement groups: {e}"))),
    }
}

/// The available placement groups the v1 `classes`' `placementGroupSelector`s resolve to: one
/// DescribePlacementGroups per distinct selector (`aws v1.14.1:
/// pkg/providers/placementgroup/provider.go` `Get`: the first group answered; none when the
/// answer is empty or EC2 does not know the name or id).
pub fn placement_groups(
    cloud: &dyn Cloud,
    classes: &[NodeClass],
) -> Result<Vec<PlacementGroup>, CloudError> {
    let mut asked: Vec<PlacementGroupSelector> = Vec::new();
    let mut out: Vec<PlacementGroup> = Vec::new();
    for selector in classes.iter().filter_map(PlacementGroupSelector::of) {
        if asked.contains(&selector) {
            continue;
        }
        let found = match cloud.describe_placement_groups(&selector) {
            Ok(found) => found,
            Err(e) if e.is_placement_group_not_found() => Vec::new(),
            Err(e) => return Err(e),
        };
        if let Some(g) = found.into_iter().find(|g| selector.matches(g)) {
            if !out.contains(&g) {
                out.push(g);
            }
        }
        asked.push(selector);
    }
    Ok(out)
}

/// [`catalog_with_reservations`]' reservations.
fn with_reservations<'u>(
    cloud: &impl Compute,
    catalog: &Catalog,
    classes: &[NodeClass],
    now: i64,
    unavailable: impl IntoIterator<Item = &'u String>,
) -> Result<(Catalog, Vec<String>), CommandError> {
    let selecting: Vec<&NodeClass> = classes
        .iter()
        .filter(|c| !c.capacity_reservation_selector_terms.is_empty())
        .collect();
    if selecting.is_empty() {
        return Ok((catalog.clone(), Vec::new()));
    }
    let terms: Vec<&[_]> = selecting
        .iter()
        .map(|c| c.capacity_reservation_selector_terms.as_slice())
        .collect();
    let mut found = reservations::list(cloud, &terms, now).map_err(|e| {
        let hint = e.is_permission();
        let err = CommandError::remote(format!("capacity reservations: {e}"));
        if hint {
            err.with_hint(AWS_PERMISSION_HINT)
        } else {
            err
        }
    })?;
    found.mark_unavailable(unavailable);
    let mut warnings = found.skipped.clone();
    for class in &selecting {
        if found
            .selected(&class.capacity_reservation_selector_terms)
            .is_empty()
        {
            warnings.push(format!(
                "{} {} selects capacity reservations, but DescribeCapacityReservations found \
                 no active one: the plan uses no reserved capacity for it",
                class.kind, class.name
            ));
        }
    }
    Ok((catalog.with_reservations(found), warnings))
}

/// The AWS labels of an instance type (they could not be in the user data, which every type of
/// a fleet shares, so they are written on the Node once it registers). Not the reservation
/// labels: a type's requirements list its reservations whatever the node launched as; a node
/// in a reservation has them from its launch template (`instanceToNodeClaim`).
pub fn aws_type_labels(t: &InstanceType) -> BTreeMap<String, String> {
    t.requirements
        .single_value_labels()
        .into_iter()
        .filter(|(k, _)| labels::AWS_WELL_KNOWN.contains(&k.as_str()))
        .filter(|(k, _)| !RESERVATION_LABELS.contains(&k.as_str()))
        .collect()
}

/// The hint of every AWS permission error (the error names the action).
pub const AWS_PERMISSION_HINT: &str = "the AWS identity lacks a permission of deploy/iam-policy.json (docs/security.md lists them per command)";

/// Maps an AWS error to exit 3 with a hint where one helps.
pub fn aws_error(e: CloudError) -> CommandError {
    // The operator lease was lost: exit 4, as for the cluster client's refused writes.
    if let CloudError::WritesStopped { .. } = e {
        return CommandError::refused(e);
    }
    let hint = match &e {
        CloudError::NoRegion { hint: None } => Some("e.g. --region us-east-1"),
        _ if e.is_permission() => Some(AWS_PERMISSION_HINT),
        _ => None,
    };
    let err = CommandError::remote(e);
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// The instance profiles given from outside a class: `--instance-profile` and the
/// `karpenter-global-settings` ConfigMap's `aws.defaultInstanceProfile`.
#[derive(Debug)]
pub struct Profiles<'a> {
    /// `--instance-profile`.
    pub flag: Option<&'a str>,
    /// `aws.defaultInstanceProfile` (v1alpha5 clusters).
    pub default_instance_profile: Option<&'a str>,
}

/// A class name → (listed at, its subnets as a status would hold them): what
/// [`fill_subnet_zones`] listed, reused for [`SUBNET_ZONES_TTL_SECONDS`].
pub type SubnetZones = BTreeMap<String, (i64, Vec<StatusSubnet>)>;

/// [`Live::with_subnet_zones`] for any cloud: fills the `status.subnets` of the classes `pools`
/// refer to where none is written, from DescribeSubnets (what `cache` listed less than a minute
/// before `now` is reused); the warnings name the classes whose subnets could not be read.
pub fn fill_subnet_zones(
    cloud: &dyn Cloud,
    classes: &mut [NodeClass],
    pools: &[NodePool],
    now: i64,
    cache: &mut SubnetZones,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for class in classes.iter_mut() {
        let used = pools
            .iter()
            .filter_map(|p| p.node_class_ref.as_ref())
            .any(|r| r.name == class.name);
        if !used || !class.status.subnets.is_empty() {
            continue;
        }
        let fresh = cache
            .get(&class.name)
            .filter(|(at, _)| now - at < SUBNET_ZONES_TTL_SECONDS)
            .map(|(_, subnets)| subnets.clone());
        let subnets = match fresh {
            Some(subnets) => subnets,
            None => match NetworkResolver::new(cloud).subnets(class) {
                Ok(found) => {
                    let subnets: Vec<StatusSubnet> = found
                        .items
                        .into_iter()
                        .map(|s| StatusSubnet {
                            id: s.id,
                            zone: s.zone,
                            zone_id: s.zone_id,
                        })
                        .collect();
                    cache.insert(class.name.clone(), (now, subnets.clone()));
                    subnets
                }
                Err(e) => {
                    warnings.push(format!(
                        "{}/{}: its subnets could not be read ({e}): every zone of the region is assumed for its instance types",
                        class.kind, class.name
                    ));
                    continue;
                }
            },
        };
        if !subnets.is_empty() {
            class.status.subnets = subnets;
        }
    }
    warnings
}

/// Resolves a class's AMIs, subnets, security groups and instance profile, failing (exit 3)
/// with the class named when any of them comes back empty. `now` (Unix seconds) tells
/// deprecated images.
pub fn resolve_class(
    cloud: &dyn Cloud,
    class: &NodeClass,
    version: KubeVersion,
    profiles: &Profiles<'_>,
    now: i64,
) -> Result<ResolvedClass, CommandError> {
    let named = |what: &str| format!("{}/{}: {what}", class.kind, class.name);
    let resolution = ami::resolve_all(cloud, &[class], version, now)
        .pop()
        .unwrap_or_else(|| Err(ami::AmiError::NoSelector("nothing was resolved".into())));
    let images = match resolution {
        Ok(r) => match r.problem() {
            None => r.images,
            Some(p) => return Err(CommandError::remote(named(&p))),
        },
        Err(e) => {
            let err = CommandError::remote(named(&e.to_string()));
            return Err(match e {
                ami::AmiError::Cloud(c) if c.is_permission() => err.with_hint(AWS_PERMISSION_HINT),
                _ => err,
            });
        }
    };
    let mut network = NetworkResolver::new(cloud);
    let subnets = network.subnets(class).map_err(aws_error)?.items;
    if subnets.is_empty() {
        return Err(CommandError::remote(named(
            "no subnet matches the subnet selector",
        )));
    }
    let security_group_ids: Vec<String> = network
        .security_groups(class)
        .map_err(aws_error)?
        .items
        .into_iter()
        .map(|g| g.id)
        .collect();
    if security_group_ids.is_empty() {
        return Err(CommandError::remote(named(
            "no security group matches the security-group selector",
        )));
    }
    let profile = profile::resolve(
        cloud,
        &ProfileInputs {
            class: &class.name,
            class_profile: class.instance_profile.as_deref(),
            role: class.role.as_deref(),
            status_profile: class.status.instance_profile.as_deref(),
            default_instance_profile: profiles.default_instance_profile,
            flag: profiles.flag,
        },
    )
    .map_err(|e| {
        let err = CommandError::remote(named(&e.to_string()));
        match e {
            profile::ProfileError::Cloud { source, .. } if source.is_permission() => {
                err.with_hint(AWS_PERMISSION_HINT)
            }
            _ => err,
        }
    })?;
    let family = class
        .ami_family
        .as_deref()
        .and_then(Family::parse)
        .or_else(|| {
            class
                .ami_selector_terms
                .iter()
                .find_map(|t| t.alias.as_deref().and_then(Family::from_alias))
        })
        .unwrap_or(Family::Al2);
    let mut class = class.clone();
    class.instance_profile = Some(profile.name);
    Ok(ResolvedClass {
        class,
        family,
        images,
        subnets,
        security_group_ids,
    })
}

/// What launch needs to know of each instance type: architecture and ENI-limited max pods.
pub fn type_facts(types: &[InstanceType]) -> BTreeMap<String, TypeFacts> {
    types
        .iter()
        .map(|t| {
            let labels = t.requirements.single_value_labels();
            let architecture = labels
                .get(labels::ARCH)
                .cloned()
                .unwrap_or_else(|| "amd64".to_string());
            let max_pods = t.capacity.get("pods") / 1000;
            let efa = t.capacity.get(crate::model::overhead::EFA) / 1000;
            (
                t.name.clone(),
                TypeFacts {
                    architecture,
                    max_pods,
                    efa,
                },
            )
        })
        .collect()
}

/// The instance ids behind `nodes` (their providerIDs).
pub fn registered_instances(nodes: &[Node]) -> BTreeSet<String> {
    nodes
        .iter()
        .filter_map(Node::instance_id)
        .map(str::to_string)
        .collect()
}

/// `aws.defaultInstanceProfile` of the `karpenter-global-settings` ConfigMap (v0.2x–v0.31: the
/// profile AWSNodeTemplates without `instanceProfile` launch with), from the namespace of a
/// Karpenter controller Deployment, else `karpenter`.
pub fn default_instance_profile(client: &dyn Cluster) -> Result<Option<String>, CommandError> {
    #[derive(serde::Deserialize)]
    struct ConfigMap {
        #[serde(default)]
        data: BTreeMap<String, String>,
    }
    let mut namespaces: Vec<String> = coexist::find_controllers(client)?
        .into_iter()
        .map(|(c, _)| c.namespace)
        .collect();
    namespaces.push("karpenter".into());
    namespaces.dedup();
    for ns in namespaces {
        let path = format!("/api/v1/namespaces/{ns}/configmaps/karpenter-global-settings");
        match ops::get::<ConfigMap>(client, &path) {
            Ok(Some(cm)) => {
                if let Some(p) = cm
                    .data
                    .get("aws.defaultInstanceProfile")
                    .filter(|p| !p.is_empty())
                {
                    return Ok(Some(p.clone()));
                }
            }
            Ok(None) => {}
            // No permission to read it: the classes must name their profile themselves.
            Err(e) if e.is_forbidden() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod placement_group_tests {
    use super::*;
    use crate::cloud::fake::FakeCloud;
    use crate::model::placement_group::Strategy;

    fn classes(selectors: &[&str]) -> Vec<NodeClass> {
        let text: String = selectors
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: c{i}}}\nspec:\n  amiSelectorTerms: [{{alias: al2023@latest}}]\n  role: r\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n  placementGroupSelector: {s}\n"
                )
            })
            .collect();
        crate::api::load_str("in.yaml", &text).unwrap().node_classes
    }

    /// `aws v1.14.1: pkg/providers/placementgroup/suite_test.go` (resolve by name, by id, not
    /// found) through DescribePlacementGroups: one call per distinct selector, an unknown name
    /// or id is no group; the catalog then tells the groups found.
    #[test]
    fn live_placement_groups_are_described_once_per_selector() {
        let mut cloud = FakeCloud::default();
        cloud.placement_groups = vec![PlacementGroup {
            id: "pg-0a".into(),
            name: "analytics".into(),
            strategy: Strategy::Partition,
            partition_count: 3,
            spread_level: None,
        }];
        let cs = classes(&[
            "{name: analytics}",
            "{name: analytics}",
            "{id: pg-0a}",
            "{name: gone}",
        ]);
        let found = placement_groups(&cloud, &cs).unwrap();
        assert_eq!(found, cloud.placement_groups);
        assert_eq!(cloud.call_counts().calls["EC2.DescribePlacementGroups"], 3);
        let (catalog, _) =
            catalog_with_reservations(&cloud, &Catalog::embedded().unwrap(), &cs, 0, []).unwrap();
        assert_eq!(
            catalog.placement_groups(),
            Some(&cloud.placement_groups[..])
        );
        // Without the permission: said, and planned as if unset.
        cloud.errors.borrow_mut().insert(
            "EC2.DescribePlacementGroups".into(),
            CloudError::Api {
                service: "EC2".into(),
                operation: "DescribePlacementGroups".into(),
                code: "UnauthorizedOperation".into(),
                message: "not authorized to perform: ec2:DescribePlacementGroups".into(),
            },
        );
        let (catalog, warnings) =
            catalog_with_reservations(&cloud, &Catalog::embedded().unwrap(), &cs, 0, []).unwrap();
        assert_eq!(catalog.placement_groups(), None);
        assert!(
            warnings[0].starts_with("assuming: placement groups are not read"),
            "{warnings:?}"
        );
    }
}
