//! Launching a plan: every planned NodeClaim's class resolved first (a class with no subnet,
//! image or profile fails with nothing launched, docs/spec.md §6), then one fleet per NodeClaim
//! (`cloud::launch`: cheapest pools first, ICE pools dropped and the rest retried, an instance
//! already tagged with the NodeClaim's name adopted). A NodeClaim that fails does not stop the
//! others.

use super::{Event, Launch, LaunchFailure, Launches};
use crate::cloud::launch::{self, LaunchInput};
use crate::cloud::types::Compute;
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::nodepool::NodeClass;
use crate::scheduling::{Input, Plan};
use crate::usecases::clock::Clock;
use crate::usecases::live::{aws_type_labels, type_facts, Live};
use crate::usecases::Sink;

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
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
        for claim in &plan.node_claims {
            let Some(pool_input) = input.pools.iter().find(|p| p.pool.name == claim.node_pool)
            else {
                continue;
            };
            let resolved = self.resolved(classes, &pool_input.pool)?.clone();
            let types = type_facts(&pool_input.instance_types);
            let result = launch::plan_for_pool(
                &LaunchInput {
                    cluster: &self.info,
                    class: &resolved.class,
                    claim,
                    family: resolved.family,
                    images: &resolved.images,
                    subnets: &resolved.subnets,
                    security_group_ids: &resolved.security_group_ids,
                    types: &types,
                },
                &pool_input.pool,
            )
            .and_then(|p| launch::launch(self.cloud, &p));
            match result {
                Ok(done) => {
                    let i = done.instance;
                    let launched = Launch {
                        node_claim: claim.name.clone(),
                        node_pool: claim.node_pool.clone(),
                        node_labels: pool_input
                            .instance_types
                            .iter()
                            .find(|t| t.name == i.instance_type)
                            .map(aws_type_labels)
                            .unwrap_or_default(),
                        instance_id: i.id,
                        instance_type: i.instance_type,
                        zone: i.zone,
                        capacity_type: i.capacity_type,
                        adopted: done.adopted,
                        pods: claim.pods.clone(),
                        pool_errors: done.pool_errors,
                    };
                    events.emit(Event::Launched(launched.clone()));
                    out.launched.push(launched);
                }
                Err(error) => {
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
