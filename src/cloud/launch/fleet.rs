//! Sending a launch plan through [`Compute`]: the CreateFleet request, adopting an instance a
//! lost answer launched, retrying without the failed pools, and the batched describe/terminate
//! calls.

use super::*;

/// The fleet request for the pools still worth trying.
pub fn fleet_request(plan: &LaunchPlan, pools: &[Pool]) -> FleetRequest {
    let mut configs: Vec<(String, Vec<FleetOverride>)> = Vec::new();
    for p in pools {
        let t = &plan.templates[p.template];
        let o = FleetOverride {
            instance_type: p.instance_type.clone(),
            subnet_id: p.subnet_id.clone(),
            zone: p.zone.clone(),
            image_id: t.image_id.clone(),
            priority: p.price,
        };
        match configs.iter_mut().find(|(n, _)| *n == t.name) {
            Some((_, list)) => list.push(o),
            None => configs.push((t.name.clone(), vec![o])),
        }
    }
    // A reserved launch asks for its reservations' kind of capacity (one kind per launch).
    let capacity_type = pools
        .iter()
        .find_map(|p| p.reservation.as_ref())
        .map_or(plan.capacity_type.as_str(), |r| r.fleet_capacity_type());
    FleetRequest {
        client_token: plan.client_token.clone(),
        capacity_type: capacity_type.to_string(),
        configs,
        tags: plan.tags.clone(),
        context: plan.context.clone(),
        allocation: plan.allocation,
    }
}

/// The filters that find a NodeClaim's instance (not terminated).
pub fn nodeclaim_filters(cluster: &str, nodeclaim: &str) -> Vec<Filter> {
    vec![
        Filter::new(format!("tag:{NODECLAIM}"), [nodeclaim]),
        Filter::new("tag:eks:eks-cluster-name", [cluster]),
        Filter::new("instance-state-name", ["pending", "running"]),
    ]
}

/// What a launch did.
#[derive(Debug, Clone, PartialEq)]
pub struct Launched {
    /// The instance.
    pub instance: Instance,
    /// It existed already (a retry) and was adopted.
    pub adopted: bool,
    /// Pools that failed before one succeeded.
    pub pool_errors: Vec<PoolError>,
    /// Templates created by this launch (the others existed).
    pub templates_created: usize,
    /// The capacity reservation it launched into (a reserved launch: the pool's of its type and
    /// zone, `getCapacityReservationDetailsForInstance`).
    pub reservation: Option<String>,
}

/// The reservation of the reserved pool `instance` launched from, if any.
fn reservation_of(plan: &LaunchPlan, instance: &Instance) -> Option<String> {
    plan.pools
        .iter()
        .find(|p| p.instance_type == instance.instance_type && p.zone == instance.zone)
        .and_then(|p| p.reservation.as_ref())
        .map(|r| r.id.clone())
}

fn find_existing(cloud: &impl Compute, plan: &LaunchPlan) -> Result<Option<Instance>, CloudError> {
    let mut found = cloud.describe_instances(&InstanceQuery::Filters(nodeclaim_filters(
        &plan.cluster,
        &plan.nodeclaim,
    )))?;
    found.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(found.into_iter().next())
}

/// Launches a planned NodeClaim: adopts its instance if one exists, else creates the templates
/// and calls CreateFleet until an instance runs or every pool failed.
pub fn launch(cloud: &impl Compute, plan: &LaunchPlan) -> Result<Launched, LaunchError> {
    if let Some(instance) = find_existing(cloud, plan)? {
        return Ok(Launched {
            reservation: reservation_of(plan, &instance),
            instance,
            adopted: true,
            pool_errors: Vec::new(),
            templates_created: 0,
        });
    }
    let mut templates_created = 0;
    for t in &plan.templates {
        if cloud.create_launch_template(t)? {
            templates_created += 1;
        }
    }
    let mut remaining = plan.pools.clone();
    let mut pool_errors: Vec<PoolError> = Vec::new();
    while !remaining.is_empty() {
        let request = fleet_request(plan, &remaining);
        let response = match cloud.create_fleet(&request) {
            Ok(r) => r,
            Err(e @ (CloudError::Transport { .. } | CloudError::Api { .. }))
                if !e.is_permission() =>
            {
                // The answer may be lost while the instance exists: look before failing.
                if let Some(instance) = find_existing(cloud, plan)? {
                    return Ok(Launched {
                        reservation: reservation_of(plan, &instance),
                        instance,
                        adopted: true,
                        pool_errors,
                        templates_created,
                    });
                }
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let before = remaining.len();
        for e in &response.errors {
            let hit = |p: &Pool| {
                e.instance_type
                    .as_deref()
                    .is_none_or(|t| t == p.instance_type)
                    && e.subnet_id.as_deref().is_none_or(|s| s == p.subnet_id)
                    && (e.instance_type.is_some() || e.subnet_id.is_some())
            };
            for p in remaining.iter().filter(|p| hit(p)) {
                pool_errors.push(PoolError {
                    instance_type: p.instance_type.clone(),
                    zone: p.zone.clone(),
                    subnet_id: p.subnet_id.clone(),
                    capacity_type: plan.capacity_type.clone(),
                    reservation: p.reservation.as_ref().map(|r| r.id.clone()),
                    code: e.code.clone(),
                    message: e.message.clone(),
                });
            }
            remaining.retain(|p| !hit(p));
        }
        let mut ids = response.instance_ids.clone();
        ids.sort();
        if let Some(first) = ids.first() {
            if ids.len() > 1 {
                // Never expected with target capacity 1: leave nothing behind.
                cloud.terminate_instances(&ids[1..])?;
            }
            let described = cloud.describe_instances(&InstanceQuery::Ids(vec![first.clone()]))?;
            let mut instance = described.into_iter().next().unwrap_or_else(|| Instance {
                id: first.clone(),
                ..Instance::default()
            });
            // As `NewInstanceFromFleet`: the capacity type launched, which for a reservation
            // is `reserved` (DescribeInstances would say on-demand).
            if plan.capacity_type == RESERVED {
                instance.capacity_type = RESERVED.to_string();
            }
            return Ok(Launched {
                reservation: reservation_of(plan, &instance),
                instance,
                adopted: false,
                pool_errors,
                templates_created,
            });
        }
        if remaining.len() == before {
            // An error naming no pool, or no answer at all: trying again would repeat it.
            for e in &response.errors {
                pool_errors.push(PoolError {
                    instance_type: String::new(),
                    zone: String::new(),
                    subnet_id: String::new(),
                    capacity_type: plan.capacity_type.clone(),
                    reservation: None,
                    code: e.code.clone(),
                    message: e.message.clone(),
                });
            }
            break;
        }
    }
    Err(LaunchError::InsufficientCapacity {
        nodeclaim: plan.nodeclaim.clone(),
        errors: pool_errors,
    })
}

/// DescribeInstances for any number of ids, [`INSTANCE_BATCH`] per call.
pub fn describe_all(cloud: &impl Compute, ids: &[String]) -> Result<Vec<Instance>, CloudError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(INSTANCE_BATCH) {
        out.extend(cloud.describe_instances(&InstanceQuery::Ids(chunk.to_vec()))?);
    }
    Ok(out)
}

/// Values per EC2 filter (EC2 accepts 200).
pub const FILTER_VALUES: usize = 200;

/// DescribeInstances for any number of ids through `instance-id` filters ([`FILTER_VALUES`] per
/// call) rather than by ids: an instance EC2 no longer knows (terminated about an hour ago)
/// would make an id query fail as a whole (`InvalidInstanceID.NotFound`), while a filter just
/// leaves it out.
pub fn describe_by_filter(
    cloud: &impl Compute,
    ids: &[String],
) -> Result<Vec<Instance>, CloudError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(FILTER_VALUES) {
        out.extend(
            cloud.describe_instances(&InstanceQuery::Filters(vec![Filter::new(
                "instance-id",
                chunk.iter().cloned(),
            )]))?,
        );
    }
    Ok(out)
}

/// TerminateInstances for any number of ids, [`INSTANCE_BATCH`] per call.
pub fn terminate_all(cloud: &impl Compute, ids: &[String]) -> Result<Vec<String>, CloudError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(INSTANCE_BATCH) {
        out.extend(cloud.terminate_instances(chunk)?);
    }
    Ok(out)
}
