//! The cloud seam: the few EC2/SSM calls the tool makes (Karpenter's `sdk.go` lists only the
//! calls it uses; so does [`Cloud`]), the plain data they exchange, and their errors.
//!
//! Requests are planned purely (`ami`, `network`) and sent through this trait, so the same
//! resolution code runs against AWS ([`crate::cloud::aws`]), moto (tests) and the in-memory
//! [`crate::cloud::fake`] (unit tests).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use super::catalog::InstanceFacts;
pub use crate::model::instance::Instance;
use crate::model::legacy_selector::split_list;
use crate::model::placement_group::{PlacementGroup, PlacementGroupSelector};
use crate::model::reservation::ReservationType;

/// An EC2 filter (`Name`, `Values`): values are ORed, filters of one request ANDed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Filter {
    /// `image-id`, `name`, `tag:KEY`, `tag-key`, `state`, `subnet-id`, `group-id`, …
    pub name: String,
    /// Accepted values (EC2 allows `*`/`?` wildcards).
    pub values: Vec<String>,
}

impl Filter {
    /// A filter from literals.
    pub fn new(
        name: impl Into<String>,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Filter {
            name: name.into(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }

    /// One filter per tag of a selector (ANDed): `*` means "the key exists" (`tag-key`),
    /// anything else `tag:KEY` = the value, or each item of it ([`TagValues::CommaList`]);
    /// `aws main: pkg/providers/{subnet,securitygroup,amifamily}`.
    pub fn tags(tags: &BTreeMap<String, String>, values: TagValues) -> Vec<Filter> {
        tags.iter()
            .map(|(k, v)| {
                if v == "*" {
                    Filter::new("tag-key", [k.clone()])
                } else if values == TagValues::CommaList {
                    Filter::new(format!("tag:{k}"), split_list(v))
                } else {
                    Filter::new(format!("tag:{k}"), [v.clone()])
                }
            })
            .collect()
    }
}

/// How a selector's tag values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagValues {
    /// v1beta1/v1 terms: the value as written.
    Literal,
    /// v1alpha5 selector maps: a comma list of values, ORed.
    CommaList,
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.values.len() == 1 {
            write!(f, "{}={}", self.name, self.values[0])
        } else {
            write!(f, "{}=[{}]", self.name, self.values.join(","))
        }
    }
}

/// Renders filters the way the `ami` command shows a query: `owners=[self,amazon] name=eks-*`.
pub fn describe_filters(owners: &[String], filters: &[Filter]) -> String {
    let mut parts = Vec::new();
    if !owners.is_empty() {
        parts.push(format!("owners=[{}]", owners.join(",")));
    }
    parts.extend(filters.iter().map(Filter::to_string));
    parts.join(" ")
}

/// One DescribeImages request (`IncludeDeprecated=true`, paginated, is the adapter's job).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ImageQuery {
    /// `Owners` (empty: every image the account can see).
    pub owners: Vec<String>,
    /// Filters, ANDed.
    pub filters: Vec<Filter>,
}

impl fmt::Display for ImageQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe_filters(&self.owners, &self.filters))
    }
}

/// An image as DescribeImages returns it (only what resolution and display need).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Image {
    /// `ami-…`.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// EC2 architecture (`x86_64`, `arm64`, `i386`, `x86_64_mac`, …).
    pub architecture: String,
    /// RFC 3339 creation date.
    pub creation_date: Option<String>,
    /// RFC 3339 deprecation time (deprecated once it is past).
    pub deprecation_time: Option<String>,
    /// Owner account.
    pub owner_id: Option<String>,
    /// `available`, `pending`, …
    pub state: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

/// A subnet (DescribeSubnets).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subnet {
    /// `subnet-…`.
    pub id: String,
    /// Availability zone name.
    pub zone: String,
    /// Availability zone id (`use1-az1`).
    pub zone_id: Option<String>,
    /// Free IPv4 addresses.
    pub available_ips: i64,
    /// VPC.
    pub vpc_id: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

/// A security group (DescribeSecurityGroups).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SecurityGroup {
    /// `sg-…`.
    pub id: String,
    /// Group name.
    pub name: String,
    /// VPC.
    pub vpc_id: Option<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

/// What one GetParameters call answered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parameters {
    /// Name as asked → value.
    pub values: BTreeMap<String, String>,
    /// Names SSM does not have (`InvalidParameters`): for AMI aliases, "variant absent".
    pub invalid: Vec<String>,
}

/// One instance type offered in one availability zone (DescribeInstanceTypeOfferings with
/// `LocationType=availability-zone`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TypeOffering {
    /// Instance type.
    pub instance_type: String,
    /// Availability zone name.
    pub zone: String,
}

/// The current spot price of one instance type in one zone (DescribeSpotPriceHistory with
/// `StartTime = now`, Linux/UNIX), in USD per hour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpotPrice {
    /// Instance type.
    pub instance_type: String,
    /// Availability zone name.
    pub zone: String,
    /// USD per hour.
    pub price: f64,
}

/// A capacity reservation as DescribeCapacityReservations answers it (only what Karpenter's
/// `CapacityReservationFromEC2` and its availability cache read).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapacityReservation {
    /// `cr-…`.
    pub id: String,
    /// Instance type.
    pub instance_type: String,
    /// Availability zone name.
    pub zone: String,
    /// Owning account.
    pub owner_id: String,
    /// `open` or `targeted` (EC2 may add others; Karpenter skips them).
    pub instance_match_criteria: String,
    /// `default` or `capacity-block` (EC2's `ReservationType`; absent means `default`).
    pub reservation_type: String,
    /// Interruptible ODCR.
    pub interruptible: bool,
    /// `AvailableInstanceCount`.
    pub available: i64,
    /// `TotalInstanceCount`.
    pub total: i64,
    /// `active`, `expired`, `pending`, …
    pub state: String,
    /// `EndDate`, Unix seconds (none: no end).
    pub end_date: Option<i64>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

/// One DescribeCapacityReservations request (all pages): by id (`CapacityReservationIds`, no
/// `MaxResults`, as EC2 requires) or by filters only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ReservationQuery {
    /// `CapacityReservationIds` (empty: none).
    pub ids: Vec<String>,
    /// Filters, ANDed.
    pub filters: Vec<Filter>,
}

impl fmt::Display for ReservationQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if !self.ids.is_empty() {
            parts.push(format!("ids=[{}]", self.ids.join(",")));
        }
        parts.extend(self.filters.iter().map(Filter::to_string));
        f.write_str(&parts.join(" "))
    }
}

/// Maximum names per GetParameters call (SSM API limit).
pub const GET_PARAMETERS_BATCH: usize = 10;

/// Why a cloud call failed, typed so callers can branch and messages stay one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// No region anywhere in the chain.
    #[error("no AWS region: pass --region, set AWS_REGION, or set a region in your AWS profile{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    NoRegion {
        /// A suggestion, e.g. the region of the EKS cluster ARN in the kubeconfig.
        hint: Option<String>,
    },
    /// AWS configuration could not be loaded (bad profile, credentials process failed, …).
    #[error("AWS configuration: {0}")]
    Config(String),
    /// The service answered with an error code.
    #[error("{service} {operation}: {code}: {message}")]
    Api {
        /// `EC2`, `SSM`.
        service: String,
        /// `DescribeImages`, …
        operation: String,
        /// AWS error code (`UnauthorizedOperation`, `AccessDeniedException`, …).
        code: String,
        /// AWS error message.
        message: String,
    },
    /// The request never got an answer (DNS, connection, timeout, credentials).
    #[error("{service} {operation}: {message}")]
    Transport {
        /// `EC2`, `SSM`.
        service: String,
        /// Operation.
        operation: String,
        /// What went wrong, one line.
        message: String,
    },
    /// Not sent: this run may no longer write (its operator lease was lost).
    #[error("{reason}: EC2 {operation} not sent (another run may be changing the cluster)")]
    WritesStopped {
        /// `CreateFleet`, `TerminateInstances`, …
        operation: String,
        /// Why (the lease keeper's words).
        reason: String,
    },
}

/// Whether an AWS error code says the identity lacks a permission.
pub fn is_permission_code(code: &str) -> bool {
    matches!(
        code,
        "UnauthorizedOperation"
            | "AccessDenied"
            | "AccessDeniedException"
            | "UnauthorizedException"
    )
}

impl CloudError {
    /// The AWS error code, if the service answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            CloudError::Api { code, .. } => Some(code),
            _ => None,
        }
    }

    /// EC2's "no such placement group" (`InvalidPlacementGroup.Unknown` for a name,
    /// `InvalidPlacementGroupId.NotFound`/`.Malformed` for an id): the selector resolves to
    /// none, as an empty answer.
    pub fn is_placement_group_not_found(&self) -> bool {
        self.code()
            .is_some_and(|c| c.starts_with("InvalidPlacementGroup"))
    }

    /// A missing IAM permission (the message names the action to grant).
    pub fn is_permission(&self) -> bool {
        self.code().is_some_and(is_permission_code)
    }

    /// Throttling that outlived the retries.
    pub fn is_throttled(&self) -> bool {
        matches!(
            self.code(),
            Some(
                "RequestLimitExceeded"
                    | "Throttling"
                    | "ThrottlingException"
                    | "TooManyRequestsException"
            )
        )
    }

    /// A stable reason string for JSON outputs.
    pub fn reason(&self) -> &'static str {
        match self {
            CloudError::NoRegion { .. } => "NoRegion",
            CloudError::Config(_) => "AWSConfiguration",
            _ if self.is_permission() => "PermissionDenied",
            _ if self.is_throttled() => "Throttled",
            CloudError::Api { .. } => "AWSError",
            CloudError::Transport { .. } => "AWSUnreachable",
            CloudError::WritesStopped { .. } => "WritesStopped",
        }
    }
}

/// AWS calls made, per `Service.Operation` (e.g. `EC2.DescribeImages`): the drift-at-scale
/// budget (docs/performance.md B3) is checked with it. `attempts` counts retries too.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct CallCounts {
    /// Operation → calls (SDK executions).
    pub calls: BTreeMap<String, u64>,
    /// Operation → HTTP attempts (calls plus retries).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub attempts: BTreeMap<String, u64>,
}

impl CallCounts {
    /// Calls across all operations.
    pub fn total(&self) -> u64 {
        self.calls.values().sum()
    }

    /// Calls of one operation (`EC2.DescribeImages`).
    pub fn get(&self, operation: &str) -> u64 {
        self.calls.get(operation).copied().unwrap_or(0)
    }

    /// One line for `-v`: `AWS calls: 4 (EC2.DescribeImages 3, SSM.GetParameters 1)`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .calls
            .iter()
            .map(|(op, n)| {
                let retries = self
                    .attempts
                    .get(op)
                    .copied()
                    .unwrap_or(*n)
                    .saturating_sub(*n);
                if retries > 0 {
                    format!("{op} {n} (+{retries} retries)")
                } else {
                    format!("{op} {n}")
                }
            })
            .collect();
        format!("AWS calls: {} ({})", self.total(), parts.join(", "))
    }
}

/// A thread-safe counter shared by an adapter and its interceptors.
#[derive(Debug, Clone, Default)]
pub struct CallCounter(Arc<Mutex<CallCounts>>);

impl CallCounter {
    /// Records one call (an execution).
    pub fn call(&self, operation: &str) {
        let mut c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *c.calls.entry(operation.to_string()).or_default() += 1;
    }

    /// Records one HTTP attempt.
    pub fn attempt(&self, operation: &str) {
        let mut c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *c.attempts.entry(operation.to_string()).or_default() += 1;
    }

    /// A snapshot.
    pub fn snapshot(&self) -> CallCounts {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The EC2/SSM calls the core needs. Implementations send exactly one request per call
/// (pagination aside); batching, caching and planning are the caller's.
///
/// Launch, describe-instances and terminate are in [`Compute`], a sub-trait.
pub trait Cloud {
    /// GetParameters for at most [`GET_PARAMETERS_BATCH`] names.
    fn get_parameters(&self, names: &[String]) -> Result<Parameters, CloudError>;
    /// DescribeImages (all pages, deprecated images included).
    fn describe_images(&self, query: &ImageQuery) -> Result<Vec<Image>, CloudError>;
    /// DescribeSubnets (all pages).
    fn describe_subnets(&self, filters: &[Filter]) -> Result<Vec<Subnet>, CloudError>;
    /// DescribeSecurityGroups (all pages).
    fn describe_security_groups(
        &self,
        filters: &[Filter],
    ) -> Result<Vec<SecurityGroup>, CloudError>;
    /// DescribeInstanceTypes (all pages), reduced to the facts Karpenter reads and limited to
    /// Karpenter's selection (HVM, `x86_64` or `arm64`), as `scripts/gen_catalog.py` does.
    /// Prices are not EC2's to give: `on_demand_price` is `None`.
    fn describe_instance_types(&self) -> Result<Vec<InstanceFacts>, CloudError>;
    /// DescribeInstanceTypeOfferings with `LocationType=availability-zone` (all pages).
    fn describe_instance_type_offerings(&self) -> Result<Vec<TypeOffering>, CloudError>;
    /// DescribeSpotPriceHistory for the region (all pages of one request) with
    /// `StartTime = now`, which answers the current price of every (type, zone), and
    /// `ProductDescriptions` `Linux/UNIX` and `Linux/UNIX (Amazon VPC)`, as Karpenter's pricing
    /// provider asks. One price per (type, zone): the newest (the first on a tie); records whose
    /// price does not parse are dropped. Sorted by type, then zone.
    fn describe_spot_prices(&self) -> Result<Vec<SpotPrice>, CloudError>;
    /// Pricing GetProducts (all pages of both of Karpenter's queries, `aws v1.14.1:
    /// pkg/providers/pricing/pricing.go` `UpdateOnDemandPricing`): the region's on-demand Linux
    /// list price per instance type, $/h (CNY in China). Empty when either query prices
    /// nothing (Karpenter: "no on-demand pricing found").
    fn on_demand_prices(&self) -> Result<BTreeMap<String, f64>, CloudError>;
    /// DescribeCapacityReservations (all pages). A request by id for a reservation EC2 does
    /// not know answers an error with code `InvalidCapacityReservationId.NotFound`.
    fn describe_capacity_reservations(
        &self,
        query: &ReservationQuery,
    ) -> Result<Vec<CapacityReservation>, CloudError>;
    /// DescribePlacementGroups of a class's `placementGroupSelector` (`aws v1.14.1:
    /// pkg/providers/placementgroup/types.go` `DescribePlacementGroupsInput`): filter
    /// `state=available`, by `GroupIds` when the selector has an id, else by `GroupNames`. Groups
    /// of a strategy this tool does not know are left out. EC2 answers an unknown name or id
    /// with an error (`InvalidPlacementGroup.Unknown`, `InvalidPlacementGroupId.NotFound`): see
    /// [`CloudError::is_placement_group_not_found`].
    fn describe_placement_groups(
        &self,
        selector: &PlacementGroupSelector,
    ) -> Result<Vec<PlacementGroup>, CloudError>;
    /// IAM ListInstanceProfilesForRole (all pages): names of the instance profiles holding
    /// `role` (a role name). An unknown role is an error with code `NoSuchEntity`.
    fn list_instance_profiles_for_role(&self, role: &str) -> Result<Vec<String>, CloudError>;
    /// Calls made so far.
    fn call_counts(&self) -> CallCounts;
    /// The region requests go to.
    fn region(&self) -> String;
}

/// Maximum instance ids per DescribeInstances / TerminateInstances call (EC2 API limit).
pub const INSTANCE_BATCH: usize = 1000;

/// A launch template to create (CreateLaunchTemplate): what every instance of one
/// (AMI, max-pods) group shares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchTemplateRequest {
    /// Deterministic name (a hash of the content), so identical groups reuse one template.
    pub name: String,
    /// AMI.
    pub image_id: String,
    /// User data, plain text (the adapter base64-encodes it).
    pub user_data: String,
    /// `NetworkInterfaces`: always at least the primary one, which carries the security
    /// groups (the template sets no top-level `SecurityGroupIds`, as `aws v1.14.1:
    /// pkg/providers/launchtemplate/types.go` `Build` when interfaces are built — always).
    pub network_interfaces: Vec<TemplateNetworkInterface>,
    /// Instance profile name.
    pub instance_profile: Option<String>,
    /// Tags of the template itself (and, in its data, of its instances and volumes: the
    /// template record drift reads).
    pub tags: BTreeMap<String, String>,
    /// Tags the template's data gives its network interfaces and, for a spot template, its
    /// spot instance requests (`aws v1.14.1: pkg/providers/launchtemplate/types.go` `Build`:
    /// `network-interface`, plus `spot-instances-request` for spot): the launch tags without the
    /// NodeClaim's name (a template serves many NodeClaims).
    pub interface_tags: BTreeMap<String, String>,
    /// A spot template: its data also tags `spot-instances-request`.
    pub spot: bool,
    /// `EnclaveOptions.Enabled`: the NodeClaim requests `eks.amazonaws.com/nip-slots` (`aws
    /// v1.14.1: pkg/providers/amifamily/resolver.go` `EnclaveEnabled`); always sent.
    pub enclave: bool,
    /// The capacity reservation its instances launch into (`CapacityReservationSpecification`:
    /// preference `capacity-reservations-only`, this target; a capacity block or an
    /// interruptible ODCR also sets `InstanceMarketOptions`): one template per reservation, as
    /// `aws v1.14.1: pkg/providers/launchtemplate/types.go` builds them.
    pub reservation: Option<TargetedReservation>,
    /// `Placement.Tenancy`: `dedicated` when the NodeClaim's `instance-tenancy` requirement
    /// admits only dedicated (`aws v1.14.1: pkg/providers/launchtemplate/types.go`
    /// `buildPlacement`, which always sets it).
    pub tenancy: crate::model::instance::Tenancy,
    /// `BlockDeviceMappings`: the class's, else its AMI family's defaults (`aws v1.14.1:
    /// pkg/providers/amifamily/resolver.go` `Resolve`).
    pub block_devices: Vec<crate::model::nodepool::BlockDevice>,
    /// `MetadataOptions` (IMDS); `InstanceMetadataTags` is always `disabled`.
    pub metadata: crate::model::nodepool::MetadataOptions,
    /// `Monitoring.Enabled`: the class's `detailedMonitoring`.
    pub detailed_monitoring: bool,
    /// `CpuOptions.NestedVirtualization`: the class's `cpuOptions.nestedVirtualization`, none when
    /// unset (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go` `cpuOptions`).
    pub nested_virtualization: Option<String>,
    /// `Placement.GroupId`: the class's resolved placement group (`aws v1.14.1:
    /// pkg/providers/launchtemplate/types.go` `buildPlacement`).
    pub placement_group_id: Option<String>,
    /// `Placement.PartitionNumber`: for a partition group, the lowest partition the NodeClaim
    /// allows (`launchtemplate.go` `CreateAll`); none lets EC2 pick.
    pub placement_partition: Option<i32>,
    /// Targeted (the `ReservedCapacity` gate on): the template says its
    /// `CapacityReservationSpecification`; open (the gate off): it says none.
    pub launch_mode: LaunchMode,
}

/// One entry of a launch template's `NetworkInterfaces` (`aws v1.14.1:
/// pkg/providers/launchtemplate/launchtemplate.go` `generateNetworkInterfaces`): unset fields are
/// not sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TemplateNetworkInterface {
    /// `NetworkCardIndex` (EFA and class interfaces; the default interface sets none).
    pub network_card_index: Option<i32>,
    /// `DeviceIndex`.
    pub device_index: i32,
    /// `InterfaceType`: `efa` for an EFA interface, the class's `interface` / `efa-only`.
    pub interface_type: Option<String>,
    /// `Groups`: the class's security groups.
    pub groups: Vec<String>,
    /// `AssociatePublicIpAddress`: the class's `associatePublicIPAddress` (unset: the
    /// subnet's default).
    pub associate_public_ip_address: Option<bool>,
    /// `Ipv4PrefixCount`: the class's `ipPrefixCount` (IPv4 cluster).
    pub ipv4_prefix_count: Option<i32>,
    /// `Ipv6PrefixCount`: the class's `ipPrefixCount` (IPv6 cluster).
    pub ipv6_prefix_count: Option<i32>,
    /// `PrimaryIpv6` (IPv6 cluster).
    pub primary_ipv6: Option<bool>,
    /// `Ipv6AddressCount` (IPv6 cluster: 1).
    pub ipv6_address_count: Option<i32>,
    /// `ConnectionTrackingSpecification`: the class's `connectionTracking`.
    pub connection_tracking: Option<ConnectionTracking>,
}

/// Idle connection tracking timeouts, seconds (an EC2NodeClass's `connectionTracking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectionTracking {
    /// `TcpEstablishedTimeout`.
    pub tcp_established_timeout: Option<i32>,
    /// `UdpStreamTimeout`.
    pub udp_stream_timeout: Option<i32>,
    /// `UdpTimeout`.
    pub udp_timeout: Option<i32>,
}

/// A launch template's `CapacityReservationSpecification.CapacityReservationPreference` (`aws
/// v1.14.1: pkg/providers/launchtemplate/types.go` `Build`, in the targeted launch mode of the
/// `ReservedCapacity` feature gate, on by default since v1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReservationPreference {
    /// `capacity-reservations-only`, with the template's reservation as target.
    ReservationsOnly,
    /// `none`: an on-demand or spot launch stays out of open ODCRs.
    None,
}

/// A launch template's launch mode (`aws v1.14.1: pkg/providers/launchtemplate/types.go`
/// `defaultLaunchModeProvider`): targeted with the `ReservedCapacity` feature gate on (its
/// default), open with it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaunchMode {
    /// Every template says its `CapacityReservationSpecification` (a reservation as target, or
    /// preference `none`).
    #[default]
    Targeted,
    /// No `CapacityReservationSpecification` (nor capacity-block market options): EC2's
    /// default, so an on-demand instance may run in an open ODCR, as before native ODCR
    /// support.
    Open,
}

impl LaunchMode {
    /// The mode of the `ReservedCapacity` gate (`None`: its default, on).
    pub fn of_gate(gate: Option<bool>) -> Self {
        if gate == Some(false) {
            LaunchMode::Open
        } else {
            LaunchMode::Targeted
        }
    }
}

impl LaunchTemplateRequest {
    /// `capacity-reservations-only` for a template targeting a reservation, else `none`; no
    /// specification at all in the open launch mode.
    pub fn reservation_preference(&self) -> Option<ReservationPreference> {
        match (self.launch_mode, self.reservation.is_some()) {
            (LaunchMode::Open, _) => None,
            (LaunchMode::Targeted, true) => Some(ReservationPreference::ReservationsOnly),
            (LaunchMode::Targeted, false) => Some(ReservationPreference::None),
        }
    }
}

/// A reservation a launch template targets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetedReservation {
    /// `cr-…`.
    pub id: String,
    /// ODCR or capacity block.
    pub reservation_type: ReservationType,
    /// An interruptible ODCR.
    pub interruptible: bool,
}

impl TargetedReservation {
    /// The launch template's `InstanceMarketOptions.MarketType`, if any: `capacity-block` for a
    /// capacity block, `interruptible-capacity-reservation` for an interruptible ODCR.
    pub fn market_type(&self) -> Option<&'static str> {
        match (self.reservation_type, self.interruptible) {
            (ReservationType::CapacityBlock, _) => Some("capacity-block"),
            (ReservationType::Default, true) => Some("interruptible-capacity-reservation"),
            (ReservationType::Default, false) => None,
        }
    }

    /// CreateFleet's `DefaultTargetCapacityType` for launches into it (`aws v1.14.1:
    /// pkg/providers/instance/types.go` `defaultTargetCapacityType`): `capacity-block`,
    /// `reserved-capacity` (interruptible) or `on-demand` (an ODCR is on-demand capacity).
    pub fn fleet_capacity_type(&self) -> &'static str {
        match (self.reservation_type, self.interruptible) {
            (ReservationType::CapacityBlock, _) => "capacity-block",
            (ReservationType::Default, true) => "reserved-capacity",
            (ReservationType::Default, false) => "on-demand",
        }
    }
}

/// One override of a fleet launch-template config: a (type × zonal subnet) pool.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetOverride {
    /// Instance type.
    pub instance_type: String,
    /// Subnet.
    pub subnet_id: String,
    /// Zone of the subnet.
    pub zone: String,
    /// AMI (same as the template's; EC2 accepts it per override).
    pub image_id: String,
    /// Priority: lower is preferred — the pool's price (`aws v1.14.1:
    /// pkg/providers/instance/instance.go` `getOverrides`: `offering.Price`, the NodeOverlay's when
    /// one priced it); EC2 reads it only under [`FleetAllocation::Priority`].
    pub priority: f64,
}

/// How CreateFleet chooses among the overrides (`aws v1.14.1: pkg/providers/instance/types.go`
/// `CreateFleetInputBuilder.Build`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FleetAllocation {
    /// EC2's own prices: on-demand `lowest-price`, spot `price-capacity-optimized`.
    #[default]
    Price,
    /// The overrides' `Priority`: on-demand `prioritized`, spot
    /// `capacity-optimized-prioritized` — a NodeClaim whose options a NodeOverlay priced
    /// (`karpenter.sh/price-overlay-applied`), since EC2 does not know the overlay's prices.
    Priority,
}

/// One CreateFleet `instant` request for a single instance.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRequest {
    /// Idempotency token (deterministic from the NodeClaim identity).
    pub client_token: String,
    /// `DefaultTargetCapacityType`: `on-demand` or `spot`; for a reserved launch that of its
    /// reservations ([`TargetedReservation::fleet_capacity_type`]).
    pub capacity_type: String,
    /// Launch template name → overrides.
    pub configs: Vec<(String, Vec<FleetOverride>)>,
    /// Tags for instance, volume and fleet.
    pub tags: BTreeMap<String, String>,
    /// The class's EC2 `Context` (`spec.context`), unless the NodeClaim's `minValues` were relaxed.
    pub context: Option<String>,
    /// The allocation strategy.
    pub allocation: FleetAllocation,
}

/// A pool-level error CreateFleet reported (`InsufficientInstanceCapacity`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetError {
    /// Instance type, when EC2 names the override.
    pub instance_type: Option<String>,
    /// Subnet, when EC2 names the override.
    pub subnet_id: Option<String>,
    /// Error code.
    pub code: String,
    /// Message.
    pub message: String,
}

/// What CreateFleet answered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FleetResponse {
    /// Instances launched (ids).
    pub instance_ids: Vec<String>,
    /// Pool errors.
    pub errors: Vec<FleetError>,
}

/// Which instances a DescribeInstances call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceQuery {
    /// At most [`INSTANCE_BATCH`] ids.
    Ids(Vec<String>),
    /// Filters (e.g. `tag:karpenter.sh/nodeclaim`), all pages.
    Filters(Vec<Filter>),
}

/// The launch, describe and terminate calls (CreateLaunchTemplate, CreateFleet,
/// DescribeInstances, TerminateInstances), separate from [`Cloud`] so read-only fakes and
/// callers stay small. Batching is the caller's ([`crate::cloud::launch`]).
pub trait Compute: Cloud {
    /// CreateLaunchTemplate; an existing template of that name is reused (`Ok(false)`).
    fn create_launch_template(&self, template: &LaunchTemplateRequest) -> Result<bool, CloudError>;
    /// CreateFleet `instant`, target capacity 1, sent once (no SDK retry: a retry is the
    /// caller's, after looking the NodeClaim's tag up).
    fn create_fleet(&self, request: &FleetRequest) -> Result<FleetResponse, CloudError>;
    /// DescribeInstances by ids (≤ [`INSTANCE_BATCH`]) or by filters.
    fn describe_instances(&self, query: &InstanceQuery) -> Result<Vec<Instance>, CloudError>;
    /// TerminateInstances for at most [`INSTANCE_BATCH`] ids; returns the ids EC2 acknowledged.
    fn terminate_instances(&self, ids: &[String]) -> Result<Vec<String>, CloudError>;
    /// The decoded user data of an instance (DescribeInstanceAttribute `userData`).
    fn instance_user_data(&self, id: &str) -> Result<Option<String>, CloudError>;
}
