//! Launching a plan: every planned NodeClaim's class resolved first (a class with no subnet,
//! image or profile fails with nothing launched, docs/spec.md §6), then one fleet per NodeClaim
//! (`cloud::launch`: cheapest pools first, ICE pools dropped and the rest retried, an instance
//! already tagged with the NodeClaim's name adopted). A NodeClaim that fails does not stop the
//! others. The offerings a launch finds without capacity are left out of the run's later plans
//! and launches for three minutes ([`Live::unavailable_offerings`]). [`Live::launch_in_rounds`] launches a plan's first scheduling round and then does the
//! later rounds for real, as Karpenter's next batches would.

use std::collections::BTreeMap;

use super::plan::Round;
use super::{Event, Launch, LaunchFailure, Launches, Selection};
use crate::cloud::launch::{self, LaunchInput};
use crate::cloud::types::Compute;
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::labels;
use crate::model::nodepool::NodeClass;
use crate::scheduling::{Input, Plan};
use crate::usecases::clock::Clock;
use crate::usecases::live::{aws_type_labels, type_facts, Live};
use crate::usecases::Sink;

/// The NodeClaims of a plan's first scheduling round: what one batch launches. The later rounds
/// are planned again once these are in flight (docs/karpenter.md §6.6).
pub fn first_round(plan: &Plan) -> Plan {
    Plan {
        node_claims: plan
            .node_claims
            .iter()
            .filter(|c| c.round <= 1)
            .cloned()
            .collect(),
        existing_nodes: plan.existing_nodes.clone(),
        unschedulable: plan.unschedulable.clone(),
        ..Plan::default()
    }
}

/// Labels the kubelet sets on its Node itself, from the instance it runs on: the planned
/// NodeClaim's values may name another offering than the one the fleet launched.
const KUBELET_OWNED: &[&str] = &[
    labels::ZONE,
    labels::REGION,
    labels::ZONE_ID,
    labels::EBS_CSI_ZONE,
    labels::INSTANCE_TYPE,
    labels::ARCH,
    labels::OS,
    labels::HOSTNAME,
    labels::WINDOWS_BUILD,
];

/// The labels registration writes on a launched NodeClaim's Node (`core v1.14.1:
/// pkg/controllers/nodeclaim/lifecycle/registration.go syncNode`: `lo.Assign(node.Labels,
/// nodeClaim.Labels)`, the NodeClaim's labels being the launched instance's): the planned
/// NodeClaim's labels — its pool's template labels, `karpenter.sh/nodepool`, the NodeClass, the
/// single-valued requirements — but those the kubelet owns ([`KUBELET_OWNED`]) and the AWS type
/// labels the requirements do not pin (the fleet may launch another type than the planned
/// cheapest one), then the launched type's labels (`type_labels`) and `capacity_type`. A node
/// whose user data is the class's own (Custom) gets its pool's labels this way, and every node
/// the labels its kubelet may not set (`node-role.kubernetes.io/*` in a template). Before s17
/// only the type's labels were written. A partition placement group's labels are the
/// NodeClaim's as launched (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go
/// instanceToNodeClaim`): the group id, and the partition asked for or the empty value that
/// registration fills from the instance ([`Live::sync_registered`]).
pub fn registration_labels(
    claim: &crate::scheduling::PlannedNodeClaim,
    type_labels: BTreeMap<String, String>,
    capacity_type: &str,
) -> BTreeMap<String, String> {
    let pinned = claim.requirements.single_value_labels();
    let mut out: BTreeMap<String, String> = claim
        .labels
        .iter()
        .filter(|(k, _)| !KUBELET_OWNED.contains(&k.as_str()))
        .filter(|(k, _)| {
            !labels::AWS_WELL_KNOWN.contains(&k.as_str())
                || *k == labels::PLACEMENT_GROUP_ID
                || *k == labels::PLACEMENT_GROUP_PARTITION
                || pinned.contains_key(*k)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.extend(type_labels);
    if !capacity_type.is_empty() {
        out.insert(labels::CAPACITY_TYPE.into(), capacity_type.into());
    }
    out
}

/// Whether a launch failed for want of capacity (an exhausted reservation, or pools answering
/// an unfulfillable-capacity code): its NodeClaim is planned again around what it found.
fn is_capacity_failure(f: &LaunchFailure) -> bool {
    !f.error.exhausted_reservations().is_empty()
        || f.error
            .pool_errors()
            .iter()
            .any(|e| launch::UNFULFILLABLE_CAPACITY_CODES.contains(&e.code.as_str()))
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Launches `round`'s first scheduling round; while its plan has later rounds (pods a NodePool
    /// limit left over, docs/karpenter.md §6.6), reads the cluster again — the instances just
    /// launched are in-flight capacity, counted against the limits at their launched size — and
    /// launches that plan's first round, as Karpenter's next batch would. The pods launched for
    /// count as bound to their instances in those plans, so none is launched for twice; every
    /// batch launches for pods still unplaced, so the run ends.
    pub fn launch_in_rounds(
        &mut self,
        selection: &Selection,
        round: &Round,
        events: &mut dyn Sink<Event>,
    ) -> Result<Launches, CommandError> {
        let mut all = Launches::default();
        // Instance id → the pods launched for it, bound to it in the next batch's plan.
        let mut assigned: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut batch = first_round(&round.plan);
        let mut later = round.plan.node_claims.iter().any(|c| c.round > 1);
        let mut current: Option<Round> = None;
        loop {
            let (classes, input) = match &current {
                Some(r) => (&r.classes, &r.input),
                None => (&round.classes, &round.input),
            };
            let exhausted = self.unavailable_reservations.len();
            let iced = self.unavailable_offerings.marked();
            let launches = self.launch_all(classes, &batch, input, events)?;
            // A reservation found exhausted, or an offering found without capacity, is planned
            // around in the next batch (Karpenter's next scheduling loop falls back to other
            // types, zones, on-demand or spot; `unavailableofferings.go`): that is progress too.
            // Marks only grow, so the run ends.
            let found_out = self.unavailable_reservations.len() > exhausted
                || self.unavailable_offerings.marked() > iced;
            let progress = !launches.launched.is_empty() || found_out;
            let fallback = found_out && launches.failed.iter().any(is_capacity_failure);
            for l in &launches.launched {
                assigned.insert(l.instance_id.clone(), l.pods.clone());
            }
            all.launched.extend(launches.launched);
            all.failed.extend(launches.failed);
            if !progress || !(later || fallback) {
                return Ok(all);
            }
            let Some(next) = self.plan_pending_after(selection, &assigned, events)? else {
                return Ok(all);
            };
            batch = first_round(&next.plan);
            if batch.node_claims.is_empty() {
                return Ok(all);
            }
            if fallback {
                // The failed NodeClaims are planned again: they are no failure of the run.
                let again: Vec<&str> = batch.node_claims.iter().map(|c| c.name.as_str()).collect();
                all.failed
                    .retain(|f| !is_capacity_failure(f) || !again.contains(&f.node_claim.as_str()));
            }
            later = next.plan.node_claims.iter().any(|c| c.round > 1);
            current = Some(next);
        }
    }

    /// Resolves the node class of every planned NodeClaim (AMIs, subnets, security groups,
    /// profile; cached): called before anything launches (or is marked), so a class with no
    /// subnet, image or profile fails with nothing changed (docs/spec.md §6).
    pub fn resolve_classes(
        &mut self,
        classes: &[NodeClass],
        plan: &Plan,
        input: &Input,
    ) -> Result<(), CommandError> {
        for claim in &plan.node_claims {
            if let Some(pool_input) = input.pools.iter().find(|p| p.pool.name == claim.node_pool) {
                self.resolved(classes, &pool_input.pool)?;
            }
        }
        Ok(())
    }

    /// Launches every planned NodeClaim of `plan` (made from `input`); `classes` are the
    /// cluster's node classes.
    pub fn launch_all(
        &mut self,
        classes: &[NodeClass],
        plan: &Plan,
        input: &Input,
        events: &mut dyn Sink<Event>,
    ) -> Result<Launches, CommandError> {
        let mut out = Launches::default();
        self.resolve_classes(classes, plan, input)?;
        if !plan.node_claims.is_empty() {
            if let Some(warning) = self.read_cluster_dns() {
                events.emit(Event::Warning(warning));
            }
        }
        for claim in &plan.node_claims {
            let Some(pool_input) = input.pools.iter().find(|p| p.pool.name == claim.node_pool)
            else {
                continue;
            };
            let resolved = self.resolved(classes, &pool_input.pool)?.clone();
            let types = type_facts(&pool_input.instance_types);
            // The subnets as this run's launches left them (in-flight IPs, `subnet.go`
            // `ZonalSubnetsForLaunch`).
            let subnets = self.inflight_ips.apply(&resolved.subnets);
            let region = self.cloud.region();
            // The offerings an earlier launch of this run found without capacity are not asked
            // for again (`unavailableofferings.go`); with none left the launch fails as
            // Karpenter's does, without a CreateFleet.
            let now = self.clock.now();
            let capacity = launch::capacity_type(claim);
            let (launchable, remembered) = self.unavailable_offerings.filter_claim(claim, now);
            let from_memory = launchable.launch.offerings.is_empty() && !remembered.is_empty();
            let result = if from_memory {
                Err(launch::LaunchError::InsufficientCapacity {
                    nodeclaim: claim.name.clone(),
                    errors: remembered,
                })
            } else {
                launch::plan_for_pool(
                    &LaunchInput {
                        cluster: &self.info,
                        class: &resolved.class,
                        claim: &launchable,
                        family: resolved.family,
                        images: &resolved.images,
                        subnets: &subnets,
                        security_group_ids: &resolved.security_group_ids,
                        types: &types,
                        region: &region,
                        launch_mode: self.launch_mode,
                    },
                    &pool_input.pool,
                )
                .and_then(|p| launch::launch(self.cloud, &p).map(|done| (p, done)))
            };
            match result {
                Ok((planned, done)) => {
                    self.inflight_ips.record_errors(&done.pool_errors);
                    self.unavailable_offerings
                        .record(capacity, &done.pool_errors, now);
                    if !done.adopted {
                        self.inflight_ips
                            .launched(&subnets, &planned, &types, &done.instance);
                    }
                    let i = done.instance;
                    let type_labels = pool_input
                        .instance_types
                        .iter()
                        .find(|t| t.name == i.instance_type)
                        .map(aws_type_labels)
                        .unwrap_or_default();
                    let launched = Launch {
                        node_claim: claim.name.clone(),
                        node_pool: claim.node_pool.clone(),
                        node_labels: registration_labels(claim, type_labels, &i.capacity_type),
                        node_annotations: claim.annotations.clone(),
                        startup_taints: claim.startup_taints.clone(),
                        taints: claim.taints.clone(),
                        requests: claim.requests.clone(),
                        instance_id: i.id,
                        instance_type: i.instance_type,
                        zone: i.zone,
                        capacity_type: i.capacity_type,
                        capacity_reservation_id: done.reservation,
                        adopted: done.adopted,
                        pods: claim.pods.clone(),
                        pool_errors: done.pool_errors,
                    };
                    events.emit(Event::Launched(Box::new(launched.clone())));
                    out.launched.push(launched);
                }
                Err(error) => {
                    // `UpdateICEdSubnet`: a full subnet is not launched into again this run.
                    self.inflight_ips.record_errors(error.pool_errors());
                    // `updateUnavailableOfferingsCache`: the ICE'd offerings are left out of
                    // this run's plans and launches for three minutes (those left out already
                    // are not marked again: no CreateFleet answered for them).
                    if !from_memory {
                        self.unavailable_offerings
                            .record(capacity, error.pool_errors(), now);
                    }
                    // `MarkUnavailable`: planned around from the next plan on.
                    self.unavailable_reservations.extend(
                        error
                            .exhausted_reservations()
                            .into_iter()
                            .map(|id| (id, now)),
                    );
                    let failure = LaunchFailure {
                        node_claim: claim.name.clone(),
                        node_pool: claim.node_pool.clone(),
                        error,
                    };
                    events.emit(Event::LaunchFailed(failure.clone()));
                    out.failed.push(failure);
                }
            }
        }
        Ok(out)
    }
}
