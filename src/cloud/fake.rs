//! An in-memory [`Cloud`] for unit tests: images, SSM parameters, subnets and security groups,
//! answered with EC2's filter semantics (values ORed, filters ANDed, `*`/`?` wildcards,
//! `tag:KEY`, `tag-key`), call counting, and injectable errors. The real adapter is tested
//! against moto; this fake is checked against the same expectations in unit tests.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use super::types::{
    CallCounter, CallCounts, CapacityReservation, Cloud, CloudError, Compute, Filter, FleetError,
    FleetRequest, FleetResponse, Image, ImageQuery, Instance, InstanceQuery, LaunchTemplateRequest,
    Parameters, ReservationQuery, SecurityGroup, SpotPrice, Subnet, TypeOffering,
    GET_PARAMETERS_BATCH, INSTANCE_BATCH,
};
use crate::cloud::catalog::InstanceFacts;
use crate::model::placement_group::{PlacementGroup, PlacementGroupSelector};

/// The account the fake plays (`self`).
pub const FAKE_ACCOUNT: &str = "123456789012";

/// An in-memory cloud.
#[derive(Debug, Default)]
pub struct FakeCloud {
    /// Images, with the owner alias (`amazon`) EC2 matches `Owners` against.
    pub images: Vec<(Image, Option<String>)>,
    /// SSM parameters.
    pub parameters: BTreeMap<String, String>,
    /// Subnets.
    pub subnets: Vec<Subnet>,
    /// Security groups.
    pub security_groups: Vec<SecurityGroup>,
    /// Instance types DescribeInstanceTypes answers with (already Karpenter's selection).
    pub instance_types: Vec<InstanceFacts>,
    /// Zonal offerings DescribeInstanceTypeOfferings answers with.
    pub offerings: Vec<TypeOffering>,
    /// Current spot prices DescribeSpotPriceHistory answers with (one per type and zone).
    pub spot_prices: Vec<SpotPrice>,
    /// On-demand prices Pricing GetProducts answers with (type → $/h).
    pub on_demand_prices: BTreeMap<String, f64>,
    /// IAM role → instance profiles holding it.
    pub roles: BTreeMap<String, Vec<String>>,
    /// Capacity reservations DescribeCapacityReservations answers with; a CreateFleet override
    /// of a template targeting one launches only while it has instances left (the count goes
    /// down), else answers `ReservationCapacityExceeded`.
    pub reservations: RefCell<Vec<CapacityReservation>>,
    /// Available placement groups DescribePlacementGroups answers with.
    pub placement_groups: Vec<PlacementGroup>,
    /// Every CreateFleet request, in order (what reserved launches are asserted on).
    pub fleet_requests: RefCell<Vec<FleetRequest>>,
    /// Operation (`SSM.GetParameters`) → error to answer with.
    pub errors: RefCell<BTreeMap<String, CloudError>>,
    /// Launch templates by name.
    pub templates: RefCell<BTreeMap<String, LaunchTemplateRequest>>,
    /// Instances, in launch order.
    pub instances: RefCell<Vec<Instance>>,
    /// Instance id → user data.
    pub user_data: RefCell<BTreeMap<String, String>>,
    /// Pools `(instance type, zone)` answering `InsufficientInstanceCapacity`; a `*` zone
    /// matches every zone.
    pub ice: RefCell<BTreeSet<(String, String)>>,
    /// Pools `(instance type, zone)` answering another pool-level error code (`*` zone: all).
    pub pool_codes: RefCell<BTreeMap<(String, String), String>>,
    /// Subnets whose pools answer `InsufficientFreeAddressesInSubnet`.
    pub full_subnets: RefCell<BTreeSet<String>>,
    /// CreateFleet calls whose instance is launched but whose answer is lost (a transport error).
    pub lose_fleet_answers: Cell<u32>,
    counter: CallCounter,
}

impl FakeCloud {
    /// An empty fake.
    pub fn new() -> Self {
        FakeCloud::default()
    }

    /// Adds an image owned by `owner` (an account id), with an optional owner alias.
    pub fn image(mut self, image: Image, alias: Option<&str>) -> Self {
        self.images.push((image, alias.map(str::to_string)));
        self
    }

    /// Adds an SSM parameter.
    pub fn parameter(mut self, name: &str, value: &str) -> Self {
        self.parameters.insert(name.to_string(), value.to_string());
        self
    }

    /// Makes `operation` (e.g. `SSM.GetParameters`) fail with `error`.
    pub fn fail(&self, operation: &str, error: CloudError) {
        self.errors
            .borrow_mut()
            .insert(operation.to_string(), error);
    }

    /// Makes CreateFleet pools of `instance_type` in `zone` (`*`: all zones) fail with ICE.
    pub fn insufficient_capacity(&self, instance_type: &str, zone: &str) {
        self.ice
            .borrow_mut()
            .insert((instance_type.to_string(), zone.to_string()));
    }

    /// Makes CreateFleet pools of `instance_type` in `zone` (`*`: all zones) fail with `code`
    /// (one that is not about capacity, e.g. `InvalidParameterValue`).
    pub fn answer_pools_with(&self, instance_type: &str, zone: &str, code: &str) {
        self.pool_codes.borrow_mut().insert(
            (instance_type.to_string(), zone.to_string()),
            code.to_string(),
        );
    }

    /// Makes CreateFleet pools in `subnet_id` fail with `InsufficientFreeAddressesInSubnet`.
    pub fn subnet_full(&self, subnet_id: &str) {
        self.full_subnets.borrow_mut().insert(subnet_id.to_string());
    }

    /// Capacity is back everywhere (what [`FakeCloud::insufficient_capacity`] took away).
    pub fn capacity_back(&self) {
        self.ice.borrow_mut().clear();
    }

    fn enter(&self, operation: &str) -> Result<(), CloudError> {
        self.counter.call(operation);
        self.counter.attempt(operation);
        match self.errors.borrow().get(operation) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// CreateFleet's error for the pool of override `o`.
fn pool_error(o: &super::types::FleetOverride, code: &str, message: String) -> FleetError {
    FleetError {
        instance_type: Some(o.instance_type.clone()),
        subnet_id: Some(o.subnet_id.clone()),
        code: code.into(),
        message,
    }
}

/// EC2's wildcard matching: `*` any run, `?` one character.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn any_glob(values: &[String], text: Option<&str>) -> bool {
    text.is_some_and(|t| values.iter().any(|v| glob(v, t)))
}

/// Whether `tags` (and the named attributes) satisfy every filter; unknown filter names are an
/// error, as in EC2.
fn matches(
    filters: &[Filter],
    tags: &BTreeMap<String, String>,
    attribute: impl Fn(&str) -> Option<Option<String>>,
    operation: &str,
) -> Result<bool, CloudError> {
    for f in filters {
        let ok = if let Some(key) = f.name.strip_prefix("tag:") {
            any_glob(&f.values, tags.get(key).map(String::as_str))
        } else if f.name == "tag-key" {
            tags.keys().any(|k| f.values.iter().any(|v| glob(v, k)))
        } else {
            match attribute(&f.name) {
                Some(value) => any_glob(&f.values, value.as_deref()),
                None => {
                    return Err(CloudError::Api {
                        service: "EC2".into(),
                        operation: operation.into(),
                        code: "InvalidParameterValue".into(),
                        message: format!("The filter '{}' is invalid", f.name),
                    })
                }
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

impl Cloud for FakeCloud {
    fn get_parameters(&self, names: &[String]) -> Result<Parameters, CloudError> {
        self.enter("SSM.GetParameters")?;
        if names.is_empty() || names.len() > GET_PARAMETERS_BATCH {
            return Err(CloudError::Api {
                service: "SSM".into(),
                operation: "GetParameters".into(),
                code: "ValidationException".into(),
                message: format!("names must have 1 to 10 members, got {}", names.len()),
            });
        }
        let mut out = Parameters::default();
        for n in names {
            match self.parameters.get(n) {
                Some(v) => {
                    out.values.insert(n.clone(), v.clone());
                }
                None => out.invalid.push(n.clone()),
            }
        }
        Ok(out)
    }

    fn describe_images(&self, query: &ImageQuery) -> Result<Vec<Image>, CloudError> {
        self.enter("EC2.DescribeImages")?;
        let mut out = Vec::new();
        for (image, alias) in &self.images {
            if !query.owners.is_empty() {
                let owner = image.owner_id.as_deref().unwrap_or(FAKE_ACCOUNT);
                let hit = query.owners.iter().any(|o| {
                    (o == "self" && owner == FAKE_ACCOUNT)
                        || o == owner
                        || alias.as_deref() == Some(o.as_str())
                });
                if !hit {
                    continue;
                }
            }
            let attr = |name: &str| -> Option<Option<String>> {
                Some(match name {
                    "image-id" => Some(image.id.clone()),
                    "name" => image.name.clone(),
                    "state" => Some(image.state.clone().unwrap_or_else(|| "available".into())),
                    "architecture" => Some(image.architecture.clone()),
                    "owner-id" => image.owner_id.clone(),
                    "owner-alias" => alias.clone(),
                    _ => return None,
                })
            };
            if matches(&query.filters, &image.tags, attr, "DescribeImages")? {
                out.push(image.clone());
            }
        }
        Ok(out)
    }

    fn describe_subnets(&self, filters: &[Filter]) -> Result<Vec<Subnet>, CloudError> {
        self.enter("EC2.DescribeSubnets")?;
        let mut out = Vec::new();
        for s in &self.subnets {
            let attr = |name: &str| -> Option<Option<String>> {
                Some(match name {
                    "subnet-id" => Some(s.id.clone()),
                    "availability-zone" => Some(s.zone.clone()),
                    "availability-zone-id" => s.zone_id.clone(),
                    "vpc-id" => s.vpc_id.clone(),
                    _ => return None,
                })
            };
            if matches(filters, &s.tags, attr, "DescribeSubnets")? {
                out.push(s.clone());
            }
        }
        Ok(out)
    }

    fn describe_security_groups(
        &self,
        filters: &[Filter],
    ) -> Result<Vec<SecurityGroup>, CloudError> {
        self.enter("EC2.DescribeSecurityGroups")?;
        let mut out = Vec::new();
        for g in &self.security_groups {
            let attr = |name: &str| -> Option<Option<String>> {
                Some(match name {
                    "group-id" => Some(g.id.clone()),
                    "group-name" => Some(g.name.clone()),
                    "vpc-id" => g.vpc_id.clone(),
                    _ => return None,
                })
            };
            if matches(filters, &g.tags, attr, "DescribeSecurityGroups")? {
                out.push(g.clone());
            }
        }
        Ok(out)
    }

    fn list_instance_profiles_for_role(&self, role: &str) -> Result<Vec<String>, CloudError> {
        self.enter("IAM.ListInstanceProfilesForRole")?;
        self.roles
            .get(role)
            .cloned()
            .ok_or_else(|| CloudError::Api {
                service: "IAM".into(),
                operation: "ListInstanceProfilesForRole".into(),
                code: "NoSuchEntity".into(),
                message: format!("The role with name {role} cannot be found."),
            })
    }

    /// The `placement_groups` the selector names (available ones only); an unknown id or name
    /// answers EC2's error, as EC2 does.
    fn describe_placement_groups(
        &self,
        selector: &PlacementGroupSelector,
    ) -> Result<Vec<PlacementGroup>, CloudError> {
        self.enter("EC2.DescribePlacementGroups")?;
        let found: Vec<PlacementGroup> = self
            .placement_groups
            .iter()
            .filter(|g| selector.matches(g))
            .cloned()
            .collect();
        if found.is_empty() {
            let (code, what) = match (&selector.id, &selector.name) {
                (Some(id), _) => ("InvalidPlacementGroupId.NotFound", id.clone()),
                (None, name) => (
                    "InvalidPlacementGroup.Unknown",
                    name.clone().unwrap_or_default(),
                ),
            };
            return Err(CloudError::Api {
                service: "EC2".into(),
                operation: "DescribePlacementGroups".into(),
                code: code.into(),
                message: format!("The Placement Group '{what}' is unknown."),
            });
        }
        Ok(found)
    }

    fn describe_capacity_reservations(
        &self,
        query: &ReservationQuery,
    ) -> Result<Vec<CapacityReservation>, CloudError> {
        self.enter("EC2.DescribeCapacityReservations")?;
        let all = self.reservations.borrow();
        if let Some(missing) = query
            .ids
            .iter()
            .find(|id| !all.iter().any(|r| r.id == **id))
        {
            return Err(CloudError::Api {
                service: "EC2".into(),
                operation: "DescribeCapacityReservations".into(),
                code: "InvalidCapacityReservationId.NotFound".into(),
                message: format!("The capacity reservation ID '{missing}' does not exist"),
            });
        }
        let mut out = Vec::new();
        for r in all.iter() {
            if !query.ids.is_empty() && !query.ids.contains(&r.id) {
                continue;
            }
            let attr = |name: &str| -> Option<Option<String>> {
                Some(match name {
                    "state" => Some(r.state.clone()),
                    "owner-id" => Some(r.owner_id.clone()),
                    "instance-match-criteria" => Some(r.instance_match_criteria.clone()),
                    "instance-type" => Some(r.instance_type.clone()),
                    "availability-zone" => Some(r.zone.clone()),
                    _ => return None,
                })
            };
            if matches(
                &query.filters,
                &r.tags,
                attr,
                "DescribeCapacityReservations",
            )? {
                out.push(r.clone());
            }
        }
        Ok(out)
    }

    fn describe_instance_types(&self) -> Result<Vec<InstanceFacts>, CloudError> {
        self.enter("EC2.DescribeInstanceTypes")?;
        Ok(self.instance_types.clone())
    }

    fn describe_instance_type_offerings(&self) -> Result<Vec<TypeOffering>, CloudError> {
        self.enter("EC2.DescribeInstanceTypeOfferings")?;
        Ok(self.offerings.clone())
    }

    fn describe_spot_prices(&self) -> Result<Vec<SpotPrice>, CloudError> {
        self.enter("EC2.DescribeSpotPriceHistory")?;
        let mut out = self.spot_prices.clone();
        out.sort_by(|a, b| (&a.instance_type, &a.zone).cmp(&(&b.instance_type, &b.zone)));
        Ok(out)
    }

    fn on_demand_prices(&self) -> Result<BTreeMap<String, f64>, CloudError> {
        self.enter("Pricing.GetProducts")?;
        Ok(self.on_demand_prices.clone())
    }

    fn call_counts(&self) -> CallCounts {
        self.counter.snapshot()
    }

    fn region(&self) -> String {
        "us-east-1".into()
    }
}

impl Compute for FakeCloud {
    fn create_launch_template(&self, template: &LaunchTemplateRequest) -> Result<bool, CloudError> {
        self.enter("EC2.CreateLaunchTemplate")?;
        let mut templates = self.templates.borrow_mut();
        if templates.contains_key(&template.name) {
            return Ok(false);
        }
        templates.insert(template.name.clone(), template.clone());
        Ok(true)
    }

    fn create_fleet(&self, request: &FleetRequest) -> Result<FleetResponse, CloudError> {
        self.enter("EC2.CreateFleet")?;
        self.fleet_requests.borrow_mut().push(request.clone());
        let mut overrides: Vec<(&String, &super::types::FleetOverride)> = request
            .configs
            .iter()
            .flat_map(|(name, list)| list.iter().map(move |o| (name, o)))
            .collect();
        overrides.sort_by(|a, b| a.1.priority.total_cmp(&b.1.priority));
        let mut response = FleetResponse::default();
        for (name, o) in overrides {
            let ice = self.ice.borrow();
            if ice.contains(&(o.instance_type.clone(), o.zone.clone()))
                || ice.contains(&(o.instance_type.clone(), "*".to_string()))
            {
                response.errors.push(pool_error(
                    o,
                    "InsufficientInstanceCapacity",
                    format!("no {} capacity in {}", o.instance_type, o.zone),
                ));
                continue;
            }
            let code = {
                let codes = self.pool_codes.borrow();
                codes
                    .get(&(o.instance_type.clone(), o.zone.clone()))
                    .or_else(|| codes.get(&(o.instance_type.clone(), "*".to_string())))
                    .cloned()
            };
            if let Some(code) = code {
                response.errors.push(pool_error(
                    o,
                    &code,
                    format!("{code} for {} in {}", o.instance_type, o.zone),
                ));
                continue;
            }
            if self.full_subnets.borrow().contains(&o.subnet_id) {
                response.errors.push(pool_error(
                    o,
                    "InsufficientFreeAddressesInSubnet",
                    format!(
                        "There are not enough free addresses in subnet '{}' to satisfy the requested number of instances.",
                        o.subnet_id
                    ),
                ));
                continue;
            }
            let template =
                self.templates
                    .borrow()
                    .get(name)
                    .cloned()
                    .ok_or_else(|| CloudError::Api {
                        service: "EC2".into(),
                        operation: "CreateFleet".into(),
                        code: "InvalidLaunchTemplateName.NotFoundException".into(),
                        message: format!("no launch template {name}"),
                    })?;
            if let Some(target) = &template.reservation {
                let mut reservations = self.reservations.borrow_mut();
                let found = reservations.iter_mut().find(|r| {
                    r.id == target.id
                        && r.instance_type == o.instance_type
                        && r.zone == o.zone
                        && r.available > 0
                });
                match found {
                    Some(r) => r.available -= 1,
                    None => {
                        response.errors.push(pool_error(
                            o,
                            "ReservationCapacityExceeded",
                            format!(
                                "capacity reservation {} has no {} capacity left in {}",
                                target.id, o.instance_type, o.zone
                            ),
                        ));
                        continue;
                    }
                }
            }
            let mut instances = self.instances.borrow_mut();
            let id = format!("i-{:017x}", instances.len() + 1);
            let mut tags = template.tags.clone();
            tags.extend(request.tags.clone());
            instances.push(Instance {
                id: id.clone(),
                instance_type: o.instance_type.clone(),
                zone: o.zone.clone(),
                subnet_id: Some(o.subnet_id.clone()),
                image_id: o.image_id.clone(),
                state: "running".into(),
                capacity_type: request.capacity_type.clone(),
                // The primary interface's groups (the template has no top-level ones).
                security_group_ids: template
                    .network_interfaces
                    .iter()
                    .find(|n| n.device_index == 0 && n.network_card_index.unwrap_or(0) == 0)
                    .map(|n| n.groups.clone())
                    .unwrap_or_default(),
                tags,
                // EC2 puts an instance of a partition group in the partition its template
                // names, else in one it picks (here: the last).
                partition: template.placement_group_id.as_ref().and_then(|id| {
                    let group = self.placement_groups.iter().find(|g| &g.id == id)?;
                    (group.strategy == crate::model::placement_group::Strategy::Partition).then(
                        || {
                            template
                                .placement_partition
                                .unwrap_or(group.partition_count as i32)
                        },
                    )
                }),
            });
            self.user_data
                .borrow_mut()
                .insert(id.clone(), template.user_data.clone());
            response.instance_ids.push(id);
            break;
        }
        if !response.instance_ids.is_empty() && self.lose_fleet_answers.get() > 0 {
            self.lose_fleet_answers
                .set(self.lose_fleet_answers.get() - 1);
            return Err(CloudError::Transport {
                service: "EC2".into(),
                operation: "CreateFleet".into(),
                message: "connection reset".into(),
            });
        }
        Ok(response)
    }

    fn describe_instances(&self, query: &InstanceQuery) -> Result<Vec<Instance>, CloudError> {
        self.enter("EC2.DescribeInstances")?;
        let instances = self.instances.borrow();
        match query {
            InstanceQuery::Ids(ids) => {
                if ids.len() > INSTANCE_BATCH {
                    return Err(CloudError::Api {
                        service: "EC2".into(),
                        operation: "DescribeInstances".into(),
                        code: "InvalidParameterValue".into(),
                        message: format!("at most {INSTANCE_BATCH} ids"),
                    });
                }
                // As EC2 (and moto): an id it does not know fails the whole query.
                let unknown: Vec<&String> = ids
                    .iter()
                    .filter(|id| !instances.iter().any(|i| &i.id == *id))
                    .collect();
                if !unknown.is_empty() {
                    return Err(CloudError::Api {
                        service: "EC2".into(),
                        operation: "DescribeInstances".into(),
                        code: "InvalidInstanceID.NotFound".into(),
                        message: format!("The instance IDs {unknown:?} do not exist"),
                    });
                }
                Ok(instances
                    .iter()
                    .filter(|i| ids.contains(&i.id))
                    .cloned()
                    .collect())
            }
            InstanceQuery::Filters(filters) => {
                let mut out = Vec::new();
                for i in instances.iter() {
                    let attr = |name: &str| -> Option<Option<String>> {
                        Some(match name {
                            "instance-id" => Some(i.id.clone()),
                            "instance-type" => Some(i.instance_type.clone()),
                            "instance-state-name" => Some(i.state.clone()),
                            "availability-zone" => Some(i.zone.clone()),
                            _ => return None,
                        })
                    };
                    if matches(filters, &i.tags, attr, "DescribeInstances")? {
                        out.push(i.clone());
                    }
                }
                Ok(out)
            }
        }
    }

    fn terminate_instances(&self, ids: &[String]) -> Result<Vec<String>, CloudError> {
        self.enter("EC2.TerminateInstances")?;
        if ids.len() > INSTANCE_BATCH {
            return Err(CloudError::Api {
                service: "EC2".into(),
                operation: "TerminateInstances".into(),
                code: "InvalidParameterValue".into(),
                message: format!("at most {INSTANCE_BATCH} ids"),
            });
        }
        let mut out = Vec::new();
        for i in self.instances.borrow_mut().iter_mut() {
            if ids.contains(&i.id) {
                i.state = "shutting-down".into();
                out.push(i.id.clone());
            }
        }
        Ok(out)
    }

    fn instance_user_data(&self, id: &str) -> Result<Option<String>, CloudError> {
        self.enter("EC2.DescribeInstanceAttribute")?;
        Ok(self.user_data.borrow().get(id).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_follows_ec2_wildcards() {
        assert!(glob(
            "amazon-eks-node-1.29-*",
            "amazon-eks-node-1.29-v20240625"
        ));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*-v2024*5", "x-v20240625"));
        assert!(!glob("amazon-eks-node-1.29-*", "amazon-eks-node-1.30-v1"));
        assert!(glob("exact", "exact"));
    }

    #[test]
    fn filters_are_anded_values_ored_and_unknown_names_fail() {
        let tags: BTreeMap<String, String> = [("team".to_string(), "a".to_string())]
            .into_iter()
            .collect();
        let none = |_: &str| -> Option<Option<String>> { None };
        let f = |n: &str, v: &[&str]| Filter::new(n, v.iter().map(|s| s.to_string()));
        assert!(matches(&[f("tag:team", &["b", "a"])], &tags, none, "X").unwrap());
        assert!(!matches(
            &[f("tag:team", &["a"]), f("tag-key", &["env"])],
            &tags,
            none,
            "X"
        )
        .unwrap());
        assert!(matches(&[f("tag-key", &["te*"])], &tags, none, "X").unwrap());
        let err = matches(&[f("bogus", &["x"])], &tags, none, "DescribeImages").unwrap_err();
        assert_eq!(err.code(), Some("InvalidParameterValue"));
    }

    #[test]
    fn get_parameters_reports_absent_names_and_enforces_the_batch_limit() {
        let fake = FakeCloud::new().parameter("/a", "ami-1");
        let got = fake.get_parameters(&["/a".into(), "/b".into()]).unwrap();
        assert_eq!(got.values["/a"], "ami-1");
        assert_eq!(got.invalid, vec!["/b".to_string()]);
        let eleven: Vec<String> = (0..11).map(|i| format!("/p{i}")).collect();
        assert!(fake.get_parameters(&eleven).is_err());
        assert_eq!(fake.call_counts().get("SSM.GetParameters"), 2);
    }
}
