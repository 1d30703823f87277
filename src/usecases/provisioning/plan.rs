//! Planning from the live cluster: the snapshot, plus the instances this tool launched whose
//! Nodes have not registered yet (as existing capacity the solver fills first), solved; the
//! NodeClaims named `<pool>-<hash of their pods>`.

use std::collections::{BTreeMap, BTreeSet};

use super::input::{build_input, reschedule_deleting, with_node_count, CatalogSizing};
use super::{Event, Selection};
use crate::api::Manifests;
use crate::cloud::launch;
use crate::cloud::types::{Compute, Instance};
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::Cluster;
use crate::model::labels;
use crate::model::node::Listing;
use crate::model::node::Node;
use crate::model::nodepool::NodeClass;
use crate::scheduling::{self, ExistingNode, ExistingPlacement, Input, Plan, PlannedNodeClaim};
use crate::usecases::clock::Clock;
use crate::usecases::live::{drop_ghosts, is_live, registered_instances, Live};
use crate::usecases::Sink;

/// A plan for the cluster's pending pods, with what launching it needs.
#[derive(Debug, Clone)]
pub struct Round {
    /// The plan.
    pub plan: Plan,
    /// The solver input it was made from (the pools' instance types).
    pub input: Input,
    /// The cluster's node classes.
    pub classes: Vec<NodeClass>,
}

impl Round {
    /// Whether `other` would launch the same: the same NodeClaims (name, pool, instance type,
    /// pods), and remove the same static pools' NodeClaims. A plan the operator confirmed is
    /// launched only while this holds for a fresh one — the cluster may have changed during the
    /// question (pods bound, deleted, other nodes up).
    pub fn same_launches(&self, other: &Round) -> bool {
        let removals = |r: &Round| -> BTreeSet<(String, String)> {
            r.plan
                .static_scale_down
                .iter()
                .flat_map(|d| {
                    d.removals
                        .iter()
                        .map(|x| (d.node_pool.clone(), x.member.name().to_string()))
                })
                .collect()
        };
        if removals(self) != removals(other) {
            return false;
        }
        let key = |c: &PlannedNodeClaim| {
            let mut pods = c.pods.clone();
            pods.sort();
            (
                c.name.clone(),
                c.node_pool.clone(),
                c.launch.instance_type.clone(),
                pods,
            )
        };
        let mine: BTreeSet<_> = self.plan.node_claims.iter().map(key).collect();
        let theirs: BTreeSet<_> = other.plan.node_claims.iter().map(key).collect();
        mine == theirs
    }
}

/// Whether the pods of nodes being deleted are planned with the pending ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeletingPods {
    /// `provision`: as Karpenter's provisioner (`provisioner.go` `Schedule`), capacity for the
    /// pods of a node someone else is deleting.
    Planned,
    /// A replacement plan (`drift replace`, `consolidate --yes`): the pipeline launches each
    /// node's replacement before draining it, so the nodes it is draining already have theirs;
    /// planning their pods again would launch twice.
    Left,
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Reads the cluster and plans for its pending pods and its static pools' missing replicas;
    /// `None` when no pod is pending and no pool is static. Fails when no Karpenter CRD is
    /// installed (there is no pool to launch for).
    pub fn plan_pending(
        &self,
        selection: &Selection,
        events: &mut dyn Sink<Event>,
    ) -> Result<Option<Round>, CommandError> {
        self.plan_pending_after(selection, &BTreeMap::new(), events)
    }

    /// [`Live::plan_pending`] after this run launched instances for some of the pending pods:
    /// `assigned` maps each such instance's id to the pods launched for it, which count as bound
    /// to it while it has not registered (the plan's model of an earlier round, and what keeps a
    /// later batch from launching for them again).
    pub fn plan_pending_after(
        &self,
        selection: &Selection,
        assigned: &BTreeMap<String, Vec<String>>,
        events: &mut dyn Sink<Event>,
    ) -> Result<Option<Round>, CommandError> {
        let mut snapshot = snapshot::read(self.cluster, Scope::PODS)?;
        // PDBs only when a node being deleted has pods: a pod a PDB fully blocks is not
        // planned again (core v1.14.1 `provisioner.go Schedule` →
        // `Deleting().CurrentlyReschedulablePods`, `pdb.Limits`). Ordinary runs read none, so
        // they need no PDB permission (docs/security.md); without it, said so, the pods are
        // planned as if no PDB blocked them.
        if super::input::deleting_node_pods(&snapshot.manifests) {
            match snapshot::read_pdbs(self.cluster) {
                Ok(pdbs) => snapshot.manifests.pdbs = pdbs,
                Err(e) if e.is_forbidden() => snapshot.manifests.warnings.push(format!(
                    "cannot list poddisruptionbudgets ({e}): the pods of nodes being deleted are planned again as if no PodDisruptionBudget blocked their eviction"
                )),
                Err(e) => return Err(e.into()),
            }
        }
        // The buffers' virtual pods join the pending pods, re-resolved every plan (every batch).
        let gate = selection.capacity_buffer_gate == Some(true);
        let unread = super::buffers::read_live(self.cluster, gate, &mut snapshot.manifests)?;
        let unresolved =
            super::buffers::apply_gate(&mut snapshot.manifests, gate, self.clock.now());
        snapshot
            .manifests
            .warnings
            .extend(unread.into_iter().chain(unresolved));
        // Pending DaemonSet pods get nothing: said even when nothing else is pending (aws#1649).
        let daemon_set_pods = super::set_aside::daemon_set_pods(&snapshot.manifests);
        snapshot.manifests.warnings.extend(daemon_set_pods);
        let warned = snapshot.manifests.warnings.len();
        for warning in &snapshot.manifests.warnings {
            events.emit(Event::Warning(warning.clone()));
        }
        if !snapshot.installed.any() {
            return Err(CommandError::remote(
                "no Karpenter CRDs are installed in the cluster: there is no NodePool to launch for",
            )
            .with_hint("install Karpenter's CRDs and create a NodePool (or plan offline with --dry-run -f)"));
        }
        // A static pool is kept at its replicas whether or not pods are pending.
        let statics = snapshot
            .manifests
            .node_pools
            .iter()
            .any(|p| p.replicas.is_some());
        if snapshot.manifests.pods.is_empty()
            && !statics
            && !super::input::deleting_node_pods(&snapshot.manifests)
        {
            return Ok(None);
        }
        let registered = registered_instances(&snapshot.manifests.nodes);
        // One listing of the tool's instances, every state: the live ones are capacity launched
        // or on its way; a Node of a gone one (a ghost its kubelet registered again) is none.
        let mut instances = self.tool_instances()?;
        drop_ghosts(&mut snapshot.manifests, &instances, Listing::AllOfTheTools);
        instances.retain(is_live);
        let in_flight = (&registered, instances.as_slice(), assigned);
        let (mut plan, input) = self.plan_with(
            &mut snapshot.manifests,
            in_flight,
            selection,
            scheduling::solve_rounds,
            DeletingPods::Planned,
        )?;
        // Virtual pods are capacity kept, not pods to bind or wait for (`buffers.go`): after
        // naming, so a buffer-only NodeClaim's name is its virtual pods' (deterministic, distinct).
        scheduling::split_buffers(&mut plan, &input.pods);
        // The static controllers (scale-down too) run only behind `StaticCapacity`.
        if selection.static_capacity_gate != Some(false) {
            plan.static_scale_down =
                super::statics::scale_downs(&snapshot.manifests, &input, self.clock.now());
        }
        // What planning added (NodeOverlays left out).
        for warning in &snapshot.manifests.warnings[warned..] {
            events.emit(Event::Warning(warning.clone()));
        }
        // A pod left pending while offerings are held back after an ICE may only be waiting for
        // them: its reason names the types still offered, not the ones that ran out.
        if !plan.unschedulable.is_empty() {
            let now = self.clock.now();
            if let Some((held, until)) = self.unavailable_offerings.held_at(now) {
                events.emit(Event::Warning(format!(
                    "{held} offering(s) this run found without capacity are left out of plans for {}s more (Karpenter's three-minute insufficient-capacity cache): pods they would fit stay pending until then",
                    until - now
                )));
            }
        }
        Ok(Some(Round {
            plan,
            input,
            classes: std::mem::take(&mut snapshot.manifests.node_classes),
        }))
    }

    /// Plans for `manifests` (pending pods, nodes, pools…) plus the capacity this tool
    /// launched that has not registered yet, over as many scheduling rounds as the NodePool
    /// limits need (`scheduling::solve_rounds`). `registered` are the instance ids of every Node
    /// of the cluster (also those left out of `manifests`, like nodes being replaced): those
    /// instances are not in flight. The pending and bound pods are moved out of `manifests` (see
    /// [`build_input`]).
    pub fn plan_manifests(
        &self,
        manifests: &mut Manifests,
        registered: &BTreeSet<String>,
        selection: &Selection,
    ) -> Result<(Plan, Input), CommandError> {
        let instances = self.launched_instances()?;
        let none = BTreeMap::new();
        let in_flight = (registered, instances.as_slice(), &none);
        self.plan_with(
            manifests,
            in_flight,
            selection,
            scheduling::solve_rounds,
            DeletingPods::Planned,
        )
    }

    /// [`Live::plan_manifests`] with the in-flight candidates given and one scheduling round
    /// (a replacement plan: Karpenter's one simulation): `instances` this tool launched (those
    /// not in `registered` count as capacity on its way).
    pub fn plan_with_instances(
        &self,
        manifests: &mut Manifests,
        registered: &BTreeSet<String>,
        instances: &[Instance],
        selection: &Selection,
    ) -> Result<(Plan, Input), CommandError> {
        let none = BTreeMap::new();
        let in_flight = (registered, instances, &none);
        self.plan_with(
            manifests,
            in_flight,
            selection,
            scheduling::solve,
            DeletingPods::Left,
        )
    }

    /// Plans `manifests` by `solver` (one round, or [`scheduling::solve_rounds`]) with the
    /// capacity this tool launched: the instance ids registered as Nodes, the instances, and
    /// the pods a run launched for each (instance id → pod keys); the NodeClaims named.
    fn plan_with(
        &self,
        manifests: &mut Manifests,
        (registered, instances, assigned): InFlight<'_>,
        selection: &Selection,
        solver: fn(&Input) -> Plan,
        deleting: DeletingPods,
    ) -> Result<(Plan, Input), CommandError> {
        let (input, used, moved) = self.input_with_instances(
            manifests, registered, instances, selection, assigned, deleting,
        )?;
        let mut plan = self.named(solver(&input), &used, instances);
        plan.from_deleting_nodes = moved;
        Ok((plan, input))
    }

    /// The solver's input: `manifests`, plus the instances this tool launched that have not
    /// registered as capacity on its way (the pods `assigned` to one bound there); and the
    /// NodeClaim names already used by registered instances.
    fn input_with_instances(
        &self,
        manifests: &mut Manifests,
        registered: &BTreeSet<String>,
        instances: &[Instance],
        selection: &Selection,
        assigned: &BTreeMap<String, Vec<String>>,
        deleting: DeletingPods,
    ) -> Result<(Input, BTreeSet<String>, Vec<ExistingPlacement>), CommandError> {
        let region = self.cloud.region();
        // The zones of each class's subnets, as the controller's status would say now.
        let said = self.with_subnet_zones(&mut manifests.node_classes, &manifests.node_pools);
        manifests.warnings.extend(said);
        // Capacity reservations are read for every plan: their counts move as instances launch
        // (none with the `ReservedCapacity` gate off).
        super::input::drop_reservation_terms(manifests, selection.reserved_capacity_gate);
        let (catalog, warnings) = self.planning_catalog(&manifests.node_classes)?;
        manifests.warnings.extend(warnings);
        // A selector DescribePlacementGroups resolves to no group: the class is not Ready.
        if let Some(groups) = catalog.placement_groups() {
            let said = super::assumptions::placement_groups_not_found(manifests, groups);
            for line in said {
                if !manifests.warnings.contains(&line) {
                    manifests.warnings.push(line);
                }
            }
        }
        let mut sizing = CatalogSizing::new(&catalog, &region);
        let mut input = build_input(manifests, selection, &mut sizing)?;
        // Offerings an earlier launch of this run found without capacity are listed unavailable
        // (`aws v1.14.1: pkg/cache/unavailableofferings.go`, three minutes).
        let now = self.clock.now();
        for pool in &mut input.pools {
            self.unavailable_offerings
                .mark_offerings(&mut pool.instance_types, now);
        }
        let moved = match deleting {
            DeletingPods::Planned => {
                reschedule_deleting(&mut input, &manifests.pdbs, self.clock.now())?
            }
            DeletingPods::Left => Vec::new(),
        };
        let pending = in_flight(instances, registered, &input);
        for node in &pending {
            if let Some(pool) = node.node.node_pool() {
                if let Some(p) = input.pools.iter_mut().find(|p| p.pool.name == pool) {
                    p.usage = p.usage.add(&with_node_count(&node.node.capacity));
                }
            }
        }
        input.existing_nodes.extend(pending);
        if !assigned.is_empty() {
            bind_assigned(&mut input, assigned);
        }
        // Names whose instance registered long ago: adopting one would adopt a node that holds
        // whichever pods the scheduler bound, and leave these pending for ever.
        let used: BTreeSet<String> = instances
            .iter()
            .filter(|i| registered.contains(&i.id))
            .filter_map(|i| i.tags.get(labels::NODECLAIM).cloned())
            .collect();
        Ok((input, used, moved))
    }

    /// `plan` with its NodeClaims named after their pods (see [`claim_name`]). A NodeClaim
    /// without pods (a static pool's replica) takes the first name of its sequence that no
    /// instance of this tool and no other NodeClaim of the plan carries: replicas are
    /// interchangeable, so one in flight is never adopted as another.
    fn named(&self, mut plan: Plan, used: &BTreeSet<String>, instances: &[Instance]) -> Plan {
        let mut taken: BTreeSet<String> = instances
            .iter()
            .filter_map(|i| i.tags.get(labels::NODECLAIM).cloned())
            .collect();
        for claim in &mut plan.node_claims {
            claim.name = if claim.pods.is_empty() {
                claim_name(&self.info.name, claim, &taken)
            } else {
                claim_name(&self.info.name, claim, used)
            };
            taken.insert(claim.name.clone());
        }
        plan
    }
}

/// Moves the pending pods `assigned` to an in-flight instance (by id) onto its node.
fn bind_assigned(input: &mut Input, assigned: &BTreeMap<String, Vec<String>>) {
    let mut owner: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, node) in input.existing_nodes.iter().enumerate() {
        if let Some(pods) = node.node.instance_id().and_then(|id| assigned.get(id)) {
            owner.extend(pods.iter().map(|p| (p.as_str(), i)));
        }
    }
    let mut pending = Vec::with_capacity(input.pods.len());
    for pod in std::mem::take(&mut input.pods) {
        match owner.get(pod.key().as_str()) {
            Some(&i) => input.existing_nodes[i].pods.push(pod),
            None => pending.push(pod),
        }
    }
    input.pods = pending;
}

/// The capacity this tool launched, as [`Live::plan_with`] reads it.
type InFlight<'a> = (
    &'a BTreeSet<String>,
    &'a [Instance],
    &'a BTreeMap<String, Vec<String>>,
);

/// A NodeClaim name that is the same for the same (cluster, pool, pods) — so an identical
/// retry adopts its in-flight instance by its tag — and different otherwise:
/// `<pool>-<16 hex>` (64 bits: no collision with another NodeClaim's instance to fear). A name
/// in `used` (its instance registered as a Node already) is passed over for the next one of
/// the same sequence.
fn claim_name(cluster: &str, claim: &PlannedNodeClaim, used: &BTreeSet<String>) -> String {
    let mut pods = claim.pods.clone();
    pods.sort();
    let mut parts: Vec<&str> = vec!["nodeclaim", cluster, &claim.node_pool];
    parts.extend(pods.iter().map(String::as_str));
    let mut attempt = 0u32;
    loop {
        let salt = attempt.to_string();
        let mut salted = parts.clone();
        if attempt > 0 {
            salted.push(&salt);
        }
        let name = format!("{}-{}", claim.node_pool, &launch::digest(&salted)[..16]);
        if !used.contains(&name) {
            return name;
        }
        attempt += 1;
    }
}

/// Capacity launched by this tool whose Node has not registered yet, as existing nodes the
/// solver fills first (what makes a re-run launch nothing twice).
fn in_flight(
    instances: &[Instance],
    registered: &BTreeSet<String>,
    input: &Input,
) -> Vec<ExistingNode> {
    let mut out = Vec::new();
    for instance in instances {
        if registered.contains(instance.id.as_str()) {
            continue;
        }
        let pool_name = instance
            .tags
            .get(labels::NODEPOOL)
            .or_else(|| instance.tags.get(labels::PROVISIONER_NAME));
        let Some(pool) = pool_name.and_then(|p| input.pools.iter().find(|i| &i.pool.name == p))
        else {
            continue;
        };
        let Some(t) = pool
            .instance_types
            .iter()
            .find(|t| t.name == instance.instance_type)
        else {
            continue;
        };
        let mut node_labels = t.requirements.single_value_labels();
        node_labels.extend(pool.pool.labels.clone());
        node_labels.insert(pool.pool.owner_label().to_string(), pool.pool.name.clone());
        node_labels.insert(labels::INSTANCE_TYPE.into(), instance.instance_type.clone());
        node_labels.insert(labels::ZONE.into(), instance.zone.clone());
        // The class's zone id for the instance's zone, when its status gives one (`aws v1.14.1:
        // pkg/cloudprovider/cloudprovider.go` `instanceToNodeClaim`).
        node_labels.remove(labels::ZONE_ID);
        if let Some(id) = t
            .offerings
            .iter()
            .find(|o| o.zone == instance.zone)
            .and_then(|o| o.zone_id.clone())
            .filter(|id| !id.is_empty())
        {
            node_labels.insert(labels::ZONE_ID.into(), id);
        }
        node_labels.insert(labels::CAPACITY_TYPE.into(), instance.capacity_type.clone());
        let name = instance
            .tags
            .get(labels::NODECLAIM)
            .cloned()
            .unwrap_or_else(|| instance.id.clone());
        node_labels.insert(labels::HOSTNAME.into(), name.clone());
        // Not registered yet: its NodeClaim's taints; its startup taints are ignored until it is
        // initialized, as Karpenter does for its in-flight NodeClaims (docs/karpenter.md §6.4).
        out.push(ExistingNode {
            node: Node {
                name: format!("{name} (launching {})", instance.id),
                labels: node_labels,
                taints: pool.pool.taints.clone(),
                startup_taints: pool.pool.startup_taints.clone(),
                capacity: t.capacity.clone(),
                allocatable: t.allocatable(),
                provider_id: Some(format!("aws:///{}/{}", instance.zone, instance.id)),
                in_flight: true,
                ..Node::default()
            },
            pods: Vec::new(),
        });
    }
    out
}
