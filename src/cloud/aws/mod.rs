//! The AWS implementation of [`Cloud`]: `aws-sdk-ec2` and `aws-sdk-ssm`, configured from the
//! standard AWS chain (environment, shared config/credentials files incl. SSO and
//! `credential_process`, web identity, container and instance metadata) plus `--region` and
//! `--profile`. `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_EC2` / `AWS_ENDPOINT_URL_SSM` are honoured,
//! which is how the tests point it at moto.
//!
//! Design choices:
//! - The commands are synchronous; the adapter owns a current-thread Tokio runtime and blocks on
//!   each call, so the core and the fakes never see async.
//! - TLS is rustls with the **ring** provider (see Cargo.toml: one provider per binary).
//! - Retries are adaptive (client-side rate limiting on throttling, EC2's
//!   `RequestLimitExceeded`) with 5 attempts, unless `AWS_RETRY_MODE` / `AWS_MAX_ATTEMPTS` say
//!   otherwise.
//! - Every call is counted by [`counter::CountingInterceptor`].

mod counter;
mod instance_types;
mod pricing;

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_ec2::types::Filter as Ec2Filter;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use super::types::{
    CallCounter, CallCounts, CapacityReservation, Cloud, CloudError, Compute, Filter,
    FleetAllocation, FleetError, FleetRequest, FleetResponse, Image, ImageQuery, Instance,
    InstanceQuery, LaunchMode, LaunchTemplateRequest, Parameters, ReservationPreference,
    ReservationQuery, SecurityGroup, SpotPrice, Subnet, TypeOffering, GET_PARAMETERS_BATCH,
    INSTANCE_BATCH,
};
use crate::cloud::catalog::InstanceFacts;
use crate::model::placement_group::{PlacementGroup, PlacementGroupSelector, Strategy};
use counter::CountingInterceptor;

/// How to reach AWS, from flags; everything else comes from the standard chain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AwsOptions {
    /// `--region`.
    pub region: Option<String>,
    /// `--profile`.
    pub profile: Option<String>,
    /// Where a region could come from when none is configured (e.g. "the EKS context ARN says
    /// eu-west-1"): shown in the error. The kubeconfig integration fills it in.
    pub region_hint: Option<String>,
    /// An endpoint for both services, overriding `AWS_ENDPOINT_URL` (tests, embedding).
    pub endpoint_url: Option<String>,
    /// Static credentials `(access key id, secret)`, replacing the credential chain (tests,
    /// embedding): with them and a region, loading reads no metadata service.
    pub static_credentials: Option<(String, String)>,
}

/// EC2 and SSM clients, counted, blocking.
pub struct AwsCloud {
    runtime: tokio::runtime::Runtime,
    ec2: aws_sdk_ec2::Client,
    ssm: aws_sdk_ssm::Client,
    iam: aws_sdk_iam::Client,
    pricing: aws_sdk_pricing::Client,
    counter: CallCounter,
    region: String,
    endpoint: Option<String>,
    /// How a throttled CreateFleet's backoff is waited: `false` when a stop was requested
    /// meanwhile (see [`AwsCloud::interrupt_backoff_with`]).
    backoff: fn(Duration) -> bool,
    /// Why writes (CreateLaunchTemplate, CreateFleet, TerminateInstances) are refused, once
    /// they are: the operator lease was lost (see [`AwsCloud::gate_writes`]).
    writes_stopped: Option<WritesStopped>,
}

/// Says why this run may no longer write (`None`: it may).
pub type WritesStopped = std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>;

impl std::fmt::Debug for AwsCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCloud")
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

/// One line out of an SDK error: the service's code and message when it answered (also when
/// the error body is not in the protocol's format, as moto's IAM denials for JSON services
/// are not), otherwise the chain of causes (connection refused, no credentials, timeout, …).
fn cloud_error<E>(service: &str, operation: &str, err: SdkError<E, HttpResponse>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let api = |code: &str, message: &str| CloudError::Api {
        service: service.into(),
        operation: operation.into(),
        code: code.into(),
        message: message.into(),
    };
    if let SdkError::ServiceError(se) = &err {
        if let Some(code) = se.err().code() {
            return api(code, se.err().message().unwrap_or_default());
        }
    }
    let status = err.raw_response().map(|r| r.status().as_u16());
    if let Some((code, message)) = err
        .raw_response()
        .and_then(|r| r.body().bytes())
        .and_then(|b| error_from_body(&String::from_utf8_lossy(b)))
    {
        return api(&code, &message);
    }
    let mut message = crate::error::error_chain(&err);
    if let Some(status) = status {
        message = format!("HTTP {status}: {message}");
    }
    CloudError::Transport {
        service: service.into(),
        operation: operation.into(),
        message: message.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The error code and message of an AWS error body, XML (`<Code>`) or JSON (`__type`).
fn error_from_body(body: &str) -> Option<(String, String)> {
    let tag = |name: &str| -> Option<String> {
        let open = format!("<{name}>");
        let start = body.find(&open)? + open.len();
        let end = body[start..].find(&format!("</{name}>"))? + start;
        Some(body[start..end].trim().to_string())
    };
    if let Some(code) = tag("Code") {
        return Some((code, tag("Message").unwrap_or_default()));
    }
    let json: serde_json::Value = serde_json::from_str(body).ok()?;
    let code = json.get("__type").or_else(|| json.get("code"))?.as_str()?;
    // `__type` may be `namespace#Code`.
    let code = code.rsplit('#').next().unwrap_or(code).to_string();
    let message = json
        .get("message")
        .or_else(|| json.get("Message"))
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_string();
    Some((code, message))
}

fn ec2_filters(filters: &[Filter]) -> Option<Vec<Ec2Filter>> {
    if filters.is_empty() {
        // EC2 rejects an empty filter list; no filter means "everything".
        return None;
    }
    Some(
        filters
            .iter()
            .map(|f| {
                Ec2Filter::builder()
                    .name(&f.name)
                    .set_values(Some(f.values.clone()))
                    .build()
            })
            .collect(),
    )
}

fn tags(list: &[aws_sdk_ec2::types::Tag]) -> std::collections::BTreeMap<String, String> {
    list.iter()
        .filter_map(|t| {
            Some((
                t.key()?.to_string(),
                t.value().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

/// The product descriptions Karpenter's pricing provider asks spot prices for.
const SPOT_PRODUCT_DESCRIPTIONS: [&str; 2] = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"];

/// One price per (type, zone) out of DescribeSpotPriceHistory records
/// `(type, zone, price text, timestamp)`: the newest record wins, the first one on a tie
/// (a record without a timestamp is older than any with one); a price that does not parse as a
/// finite, non-negative number is dropped, as Karpenter ignores it. Sorted by type, then zone.
fn latest_spot_prices<T: Ord + Copy>(
    records: impl IntoIterator<Item = (String, String, String, Option<T>)>,
) -> Vec<SpotPrice> {
    let mut latest: std::collections::BTreeMap<(String, String), (Option<T>, f64)> =
        std::collections::BTreeMap::new();
    for (instance_type, zone, price, at) in records {
        let Ok(price) = price.trim().parse::<f64>() else {
            continue;
        };
        if !price.is_finite() || price < 0.0 || instance_type.is_empty() || zone.is_empty() {
            continue;
        }
        match latest.entry((instance_type, zone)) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert((at, price));
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                if at > o.get().0 {
                    o.insert((at, price));
                }
            }
        }
    }
    latest
        .into_iter()
        .map(|((instance_type, zone), (_, price))| SpotPrice {
            instance_type,
            zone,
            price,
        })
        .collect()
}

impl AwsCloud {
    /// Loads the AWS configuration and builds the clients. Fails without a region.
    pub fn connect(options: &AwsOptions) -> Result<AwsCloud, CloudError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CloudError::Config(format!("starting the async runtime: {e}")))?;
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .http_client(http)
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(5))
                    .operation_attempt_timeout(Duration::from_secs(60))
                    .build(),
            );
        if !env_set("AWS_RETRY_MODE") && !env_set("AWS_MAX_ATTEMPTS") {
            loader = loader.retry_config(RetryConfig::adaptive().with_max_attempts(5));
        }
        if let Some(region) = &options.region {
            loader = loader.region(Region::new(region.clone()));
        }
        if let Some(profile) = &options.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(url) = &options.endpoint_url {
            loader = loader.endpoint_url(url);
        }
        if let Some((id, secret)) = &options.static_credentials {
            loader = loader.credentials_provider(aws_sdk_ec2::config::Credentials::new(
                id,
                secret,
                None,
                None,
                "kubectl-karpenter",
            ));
        }
        let config = runtime.block_on(loader.load());
        let region = match config.region() {
            Some(r) if !r.as_ref().is_empty() => r.to_string(),
            _ => {
                return Err(CloudError::NoRegion {
                    hint: options.region_hint.clone(),
                })
            }
        };
        let counter = CallCounter::default();
        let interceptor = CountingInterceptor(counter.clone());
        let ec2 = aws_sdk_ec2::Client::from_conf(
            aws_sdk_ec2::config::Builder::from(&config)
                .interceptor(interceptor.clone())
                .build(),
        );
        let ssm = aws_sdk_ssm::Client::from_conf(
            aws_sdk_ssm::config::Builder::from(&config)
                .interceptor(interceptor.clone())
                .build(),
        );
        // IAM is global; the SDK picks the partition's endpoint from the region.
        let iam = aws_sdk_iam::Client::from_conf(
            aws_sdk_iam::config::Builder::from(&config)
                .interceptor(interceptor.clone())
                .build(),
        );
        // The Pricing API is served in a few regions only (`pricing::endpoint_region`).
        let pricing = aws_sdk_pricing::Client::from_conf(
            aws_sdk_pricing::config::Builder::from(&config)
                .region(Region::new(pricing::endpoint_region(&region)))
                .interceptor(interceptor)
                .build(),
        );
        Ok(AwsCloud {
            runtime,
            ec2,
            ssm,
            iam,
            pricing,
            counter,
            region,
            endpoint: config.endpoint_url().map(str::to_string),
            backoff: |d| {
                std::thread::sleep(d);
                true
            },
            writes_stopped: None,
        })
    }

    /// From now on, CreateLaunchTemplate, CreateFleet and TerminateInstances are not sent once
    /// `stopped` names a reason — the operator lease was lost (docs/spec.md §10): like the
    /// cluster client's gate, so no launch or termination follows another operator's takeover
    /// (client-go `leaderelection.go`: a leader that lost the lease stops acting at once).
    pub fn gate_writes(&mut self, stopped: WritesStopped) {
        self.writes_stopped = Some(stopped);
    }

    /// `Err` when writes are stopped, naming the `operation` not sent.
    fn writable(&self, operation: &str) -> Result<(), CloudError> {
        match self.writes_stopped.as_ref().and_then(|f| f()) {
            Some(reason) => Err(CloudError::WritesStopped {
                operation: operation.into(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// The endpoint override in effect (`AWS_ENDPOINT_URL`), if any.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// From now on, a throttled CreateFleet's backoff is waited with `backoff`: a stop
    /// requested meanwhile ends it and the retry (the commands give the clock's Ctrl-C-aware
    /// sleep). By default the whole backoff is slept.
    pub fn interrupt_backoff_with(&mut self, backoff: fn(Duration) -> bool) {
        self.backoff = backoff;
    }
}

impl Cloud for AwsCloud {
    fn get_parameters(&self, names: &[String]) -> Result<Parameters, CloudError> {
        debug_assert!(!names.is_empty() && names.len() <= GET_PARAMETERS_BATCH);
        let out = self
            .runtime
            .block_on(
                self.ssm
                    .get_parameters()
                    .set_names(Some(names.to_vec()))
                    .send(),
            )
            .map_err(|e| cloud_error("SSM", "GetParameters", e))?;
        let mut answer = Parameters {
            invalid: out.invalid_parameters().to_vec(),
            ..Parameters::default()
        };
        for p in out.parameters() {
            if let (Some(name), Some(value)) = (p.name(), p.value()) {
                answer.values.insert(name.to_string(), value.to_string());
            }
        }
        // SSM answers with the canonical name; a caller who asked by ARN looks it up by ARN.
        for n in names {
            if !answer.values.contains_key(n) && !answer.invalid.contains(n) {
                if let Some(p) = out
                    .parameters()
                    .iter()
                    .find(|p| p.arn() == Some(n.as_str()))
                {
                    if let Some(v) = p.value() {
                        answer.values.insert(n.clone(), v.to_string());
                    }
                }
            }
        }
        Ok(answer)
    }

    fn describe_images(&self, query: &ImageQuery) -> Result<Vec<Image>, CloudError> {
        let request = self
            .ec2
            .describe_images()
            .set_owners((!query.owners.is_empty()).then(|| query.owners.clone()))
            .set_filters(ec2_filters(&query.filters))
            .include_deprecated(true)
            .max_results(1000);
        let images = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeImages", e))?;
        Ok(images
            .iter()
            .map(|i| Image {
                id: i.image_id().unwrap_or_default().to_string(),
                name: i.name().map(str::to_string),
                architecture: i
                    .architecture()
                    .map(|a| a.as_str().to_string())
                    .unwrap_or_default(),
                creation_date: i.creation_date().map(str::to_string),
                deprecation_time: i.deprecation_time().map(str::to_string),
                owner_id: i.owner_id().map(str::to_string),
                state: i.state().map(|s| s.as_str().to_string()),
                tags: tags(i.tags()),
            })
            .collect())
    }

    fn describe_subnets(&self, filters: &[Filter]) -> Result<Vec<Subnet>, CloudError> {
        let request = self
            .ec2
            .describe_subnets()
            .set_filters(ec2_filters(filters));
        let subnets = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeSubnets", e))?;
        Ok(subnets
            .iter()
            .map(|s| Subnet {
                id: s.subnet_id().unwrap_or_default().to_string(),
                zone: s.availability_zone().unwrap_or_default().to_string(),
                zone_id: s.availability_zone_id().map(str::to_string),
                available_ips: s.available_ip_address_count().unwrap_or(0).into(),
                vpc_id: s.vpc_id().map(str::to_string),
                tags: tags(s.tags()),
            })
            .collect())
    }

    fn describe_security_groups(
        &self,
        filters: &[Filter],
    ) -> Result<Vec<SecurityGroup>, CloudError> {
        let request = self
            .ec2
            .describe_security_groups()
            .set_filters(ec2_filters(filters));
        let groups = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeSecurityGroups", e))?;
        Ok(groups
            .iter()
            .map(|g| SecurityGroup {
                id: g.group_id().unwrap_or_default().to_string(),
                name: g.group_name().unwrap_or_default().to_string(),
                vpc_id: g.vpc_id().map(str::to_string),
                tags: tags(g.tags()),
            })
            .collect())
    }

    fn describe_instance_types(&self) -> Result<Vec<InstanceFacts>, CloudError> {
        // Karpenter filters server-side (supported-virtualization-type, processor-info.
        // supported-architecture); the same selection is applied here to every page, so an
        // endpoint that ignores those filters (moto) gives the same answer.
        let request = self.ec2.describe_instance_types().max_results(100);
        let infos = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeInstanceTypes", e))?;
        let mut out: Vec<InstanceFacts> = infos.iter().filter_map(instance_types::facts).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn describe_instance_type_offerings(&self) -> Result<Vec<TypeOffering>, CloudError> {
        let request = self
            .ec2
            .describe_instance_type_offerings()
            .location_type(aws_sdk_ec2::types::LocationType::AvailabilityZone)
            .max_results(1000);
        let offerings = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeInstanceTypeOfferings", e))?;
        Ok(offerings
            .iter()
            .filter_map(|o| {
                Some(TypeOffering {
                    instance_type: o.instance_type()?.as_str().to_string(),
                    zone: o.location()?.to_string(),
                })
            })
            .collect())
    }

    fn describe_spot_prices(&self) -> Result<Vec<SpotPrice>, CloudError> {
        // `StartTime = now` answers the price in effect now for every (type, zone, product).
        let now = aws_sdk_ec2::primitives::DateTime::from(std::time::SystemTime::now());
        let request = self
            .ec2
            .describe_spot_price_history()
            .start_time(now)
            .set_product_descriptions(Some(SPOT_PRODUCT_DESCRIPTIONS.map(str::to_string).to_vec()))
            .max_results(1000);
        let history = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeSpotPriceHistory", e))?;
        Ok(latest_spot_prices(history.iter().map(|p| {
            (
                p.instance_type()
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_default(),
                p.availability_zone().unwrap_or_default().to_string(),
                p.spot_price().unwrap_or_default().to_string(),
                p.timestamp().copied(),
            )
        })))
    }

    fn on_demand_prices(&self) -> Result<std::collections::BTreeMap<String, f64>, CloudError> {
        let currency = pricing::currency(&self.region);
        let mut all = std::collections::BTreeMap::new();
        for query in pricing::queries(&self.region) {
            let mut request = self
                .pricing
                .get_products()
                .service_code("AmazonEC2")
                .max_results(100);
            for (field, value) in query {
                let filter = aws_sdk_pricing::types::Filter::builder()
                    .r#type(aws_sdk_pricing::types::FilterType::TermMatch)
                    .field(field)
                    .value(value)
                    .build()
                    .map_err(|e| CloudError::Config(format!("Pricing filter: {e}")))?;
                request = request.filters(filter);
            }
            let entries: Vec<String> = self
                .runtime
                .block_on(request.into_paginator().items().send().try_collect())
                .map_err(|e| cloud_error("Pricing", "GetProducts", e))?;
            let mut prices = std::collections::BTreeMap::new();
            pricing::add_page(&mut prices, entries.iter().map(String::as_str), currency);
            if prices.is_empty() {
                // `UpdateOnDemandPricing`: either query empty, nothing is taken.
                return Ok(Default::default());
            }
            all.extend(prices);
        }
        Ok(all)
    }

    fn describe_capacity_reservations(
        &self,
        query: &ReservationQuery,
    ) -> Result<Vec<CapacityReservation>, CloudError> {
        let mut request = self
            .ec2
            .describe_capacity_reservations()
            .set_filters(ec2_filters(&query.filters));
        // EC2 refuses MaxResults with CapacityReservationIds.
        request = if query.ids.is_empty() {
            request.max_results(1000)
        } else {
            request.set_capacity_reservation_ids(Some(query.ids.clone()))
        };
        let found = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeCapacityReservations", e))?;
        Ok(found
            .iter()
            .map(|r| CapacityReservation {
                id: r.capacity_reservation_id().unwrap_or_default().to_string(),
                instance_type: r.instance_type().unwrap_or_default().to_string(),
                zone: r.availability_zone().unwrap_or_default().to_string(),
                owner_id: r.owner_id().unwrap_or_default().to_string(),
                instance_match_criteria: r
                    .instance_match_criteria()
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_default(),
                reservation_type: r
                    .reservation_type()
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_default(),
                interruptible: r.interruptible().unwrap_or(false),
                available: r.available_instance_count().unwrap_or(0).into(),
                total: r.total_instance_count().unwrap_or(0).into(),
                state: r
                    .state()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default(),
                end_date: r.end_date().map(|d| d.secs()),
                tags: tags(r.tags()),
            })
            .collect())
    }

    fn describe_placement_groups(
        &self,
        selector: &PlacementGroupSelector,
    ) -> Result<Vec<PlacementGroup>, CloudError> {
        let mut request = self.ec2.describe_placement_groups().filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("state")
                .values("available")
                .build(),
        );
        request = match (&selector.id, &selector.name) {
            (Some(id), _) => request.group_ids(id),
            (None, Some(name)) => request.group_names(name),
            (None, None) => request,
        };
        let out = self
            .runtime
            .block_on(request.send())
            .map_err(|e| cloud_error("EC2", "DescribePlacementGroups", e))?;
        Ok(out
            .placement_groups()
            .iter()
            .filter_map(|g| {
                Some(PlacementGroup {
                    id: g.group_id()?.to_string(),
                    name: g.group_name().unwrap_or_default().to_string(),
                    strategy: Strategy::parse(g.strategy()?.as_str())?,
                    partition_count: g
                        .partition_count()
                        .and_then(|n| u32::try_from(n).ok())
                        .unwrap_or(0),
                    spread_level: g.spread_level().map(|l| l.as_str().to_string()),
                })
            })
            .collect())
    }

    fn list_instance_profiles_for_role(&self, role: &str) -> Result<Vec<String>, CloudError> {
        let request = self
            .iam
            .list_instance_profiles_for_role()
            .role_name(role)
            .max_items(1000);
        let profiles = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("IAM", "ListInstanceProfilesForRole", e))?;
        Ok(profiles
            .iter()
            .map(|p| p.instance_profile_name().to_string())
            .collect())
    }

    fn call_counts(&self) -> CallCounts {
        self.counter.snapshot()
    }

    fn region(&self) -> String {
        self.region.clone()
    }
}

fn ec2_tags(tags: &std::collections::BTreeMap<String, String>) -> Vec<aws_sdk_ec2::types::Tag> {
    tags.iter()
        .map(|(k, v)| aws_sdk_ec2::types::Tag::builder().key(k).value(v).build())
        .collect()
}

fn instance(i: &aws_sdk_ec2::types::Instance) -> Instance {
    Instance {
        id: i.instance_id().unwrap_or_default().to_string(),
        instance_type: i
            .instance_type()
            .map(|t| t.as_str().to_string())
            .unwrap_or_default(),
        zone: i
            .placement()
            .and_then(|p| p.availability_zone())
            .unwrap_or_default()
            .to_string(),
        subnet_id: i.subnet_id().map(str::to_string),
        partition: i.placement().and_then(|p| p.partition_number()),
        image_id: i.image_id().unwrap_or_default().to_string(),
        state: i
            .state()
            .and_then(|s| s.name())
            .map(|n| n.as_str().to_string())
            .unwrap_or_default(),
        // `reserved` as `aws v1.14.1: pkg/providers/instance/types.go` reads it: launched into
        // a reservation it was restricted to.
        capacity_type: match i.instance_lifecycle() {
            Some(aws_sdk_ec2::types::InstanceLifecycleType::Spot) => "spot".into(),
            _ if i.capacity_reservation_id().is_some()
                && i.capacity_reservation_specification()
                    .and_then(|c| c.capacity_reservation_preference())
                    == Some(
                        &aws_sdk_ec2::types::CapacityReservationPreference::CapacityReservationsOnly,
                    ) =>
            {
                "reserved".into()
            }
            _ => "on-demand".into(),
        },
        security_group_ids: i
            .security_groups()
            .iter()
            .filter_map(|g| g.group_id().map(str::to_string))
            .collect(),
        tags: tags(i.tags()),
    }
}

impl Compute for AwsCloud {
    fn create_launch_template(&self, t: &LaunchTemplateRequest) -> Result<bool, CloudError> {
        self.writable("CreateLaunchTemplate")?;
        use aws_sdk_ec2::types::{
            CapacityReservationPreference, CapacityReservationTarget,
            LaunchTemplateBlockDeviceMappingRequest,
            LaunchTemplateCapacityReservationSpecificationRequest,
            LaunchTemplateEbsBlockDeviceRequest, LaunchTemplateHttpTokensState,
            LaunchTemplateIamInstanceProfileSpecificationRequest,
            LaunchTemplateInstanceMarketOptionsRequest,
            LaunchTemplateInstanceMetadataEndpointState,
            LaunchTemplateInstanceMetadataOptionsRequest,
            LaunchTemplateInstanceMetadataProtocolIpv6, LaunchTemplateInstanceMetadataTagsState,
            LaunchTemplatePlacementRequest, LaunchTemplateTagSpecificationRequest,
            LaunchTemplatesMonitoringRequest, MarketType, RequestLaunchTemplateData, ResourceType,
            TagSpecification, Tenancy, VolumeType,
        };
        use aws_sdk_ec2::types::{
            ConnectionTrackingSpecificationRequest,
            LaunchTemplateInstanceNetworkInterfaceSpecificationRequest,
        };
        use aws_sdk_ec2::types::{
            LaunchTemplateCpuOptionsRequest, NestedVirtualizationSpecification,
        };
        let tag_spec = |r: ResourceType, tags: &std::collections::BTreeMap<String, String>| {
            LaunchTemplateTagSpecificationRequest::builder()
                .resource_type(r)
                .set_tags(Some(ec2_tags(tags)))
                .build()
        };
        // The interfaces carry the security groups, the public-IP choice, prefixes, EFA and
        // connection tracking; the template then sets no top-level groups (`aws v1.14.1:
        // pkg/providers/launchtemplate/types.go` `Build`, `launchtemplate.go`
        // `generateNetworkInterfaces`).
        let interfaces: Vec<LaunchTemplateInstanceNetworkInterfaceSpecificationRequest> = t
            .network_interfaces
            .iter()
            .map(|n| {
                LaunchTemplateInstanceNetworkInterfaceSpecificationRequest::builder()
                    .set_network_card_index(n.network_card_index)
                    .device_index(n.device_index)
                    .set_interface_type(n.interface_type.clone())
                    .set_groups(Some(n.groups.clone()))
                    .set_associate_public_ip_address(n.associate_public_ip_address)
                    .set_ipv4_prefix_count(n.ipv4_prefix_count)
                    .set_ipv6_prefix_count(n.ipv6_prefix_count)
                    .set_primary_ipv6(n.primary_ipv6)
                    .set_ipv6_address_count(n.ipv6_address_count)
                    .set_connection_tracking_specification(n.connection_tracking.map(|c| {
                        ConnectionTrackingSpecificationRequest::builder()
                            .set_tcp_established_timeout(c.tcp_established_timeout)
                            .set_udp_stream_timeout(c.udp_stream_timeout)
                            .set_udp_timeout(c.udp_timeout)
                            .build()
                    }))
                    .build()
            })
            .collect();
        // A reserved launch's template targets its reservation; the others opt out of open
        // ODCRs (`aws v1.14.1: pkg/providers/launchtemplate/types.go`, targeted launch mode).
        // The open launch mode (`ReservedCapacity` off) sends neither.
        let reservation = t.reservation_preference().map(|p| {
            let preference = match p {
                ReservationPreference::ReservationsOnly => {
                    CapacityReservationPreference::CapacityReservationsOnly
                }
                ReservationPreference::None => CapacityReservationPreference::None,
            };
            LaunchTemplateCapacityReservationSpecificationRequest::builder()
                .capacity_reservation_preference(preference)
                .set_capacity_reservation_target(t.reservation.as_ref().map(|r| {
                    CapacityReservationTarget::builder()
                        .capacity_reservation_id(&r.id)
                        .build()
                }))
                .build()
        });
        let market = t
            .reservation
            .as_ref()
            .filter(|_| t.launch_mode == LaunchMode::Targeted)
            .and_then(|r| r.market_type())
            .map(|m| {
                LaunchTemplateInstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::from(m))
                    .build()
            });
        // Every template says its tenancy, as Karpenter's do (`aws v1.14.1:
        // pkg/providers/launchtemplate/types.go` `buildPlacement`).
        // With a placement group, its id and (partition groups) the partition (`buildPlacement`).
        let placement = LaunchTemplatePlacementRequest::builder()
            .tenancy(Tenancy::from(t.tenancy.as_str()))
            .set_group_id(t.placement_group_id.clone())
            .set_partition_number(t.placement_partition)
            .build();
        // The class's block devices (else its family's defaults), IMDS options and detailed
        // monitoring, as Karpenter's templates carry them (`aws v1.14.1:
        // pkg/providers/launchtemplate/types.go` `Build`, `launchtemplate.go`
        // `blockDeviceMappings`): zero IOPS / throughput are left unset, the size in GiB
        // rounded up, instance metadata tags always disabled.
        let i32_of = |v: Option<i64>| v.filter(|n| *n != 0).and_then(|n| i32::try_from(n).ok());
        let block_devices: Vec<LaunchTemplateBlockDeviceMappingRequest> = t
            .block_devices
            .iter()
            .map(|b| {
                let e = &b.ebs;
                LaunchTemplateBlockDeviceMappingRequest::builder()
                    .set_device_name(b.device_name.clone())
                    .ebs(
                        LaunchTemplateEbsBlockDeviceRequest::builder()
                            .set_delete_on_termination(e.delete_on_termination)
                            .set_encrypted(e.encrypted)
                            .set_volume_type(e.volume_type.as_deref().map(VolumeType::from))
                            .set_iops(i32_of(e.iops))
                            .set_throughput(i32_of(e.throughput))
                            .set_kms_key_id(e.kms_key_id.clone())
                            .set_snapshot_id(e.snapshot_id.clone())
                            .set_volume_initialization_rate(
                                e.volume_initialization_rate
                                    .and_then(|n| i32::try_from(n).ok()),
                            )
                            .set_volume_size(
                                b.volume_size_gib().and_then(|n| i32::try_from(n).ok()),
                            )
                            .build(),
                    )
                    .build()
            })
            .collect();
        let m = &t.metadata;
        let metadata = LaunchTemplateInstanceMetadataOptionsRequest::builder()
            .set_http_endpoint(
                m.http_endpoint
                    .as_deref()
                    .map(LaunchTemplateInstanceMetadataEndpointState::from),
            )
            .set_http_protocol_ipv6(
                m.http_protocol_ipv6
                    .as_deref()
                    .map(LaunchTemplateInstanceMetadataProtocolIpv6::from),
            )
            .set_http_put_response_hop_limit(
                m.http_put_response_hop_limit
                    .and_then(|n| i32::try_from(n).ok()),
            )
            .set_http_tokens(
                m.http_tokens
                    .as_deref()
                    .map(LaunchTemplateHttpTokensState::from),
            )
            .instance_metadata_tags(LaunchTemplateInstanceMetadataTagsState::Disabled)
            .build();
        // Instances and volumes carry the template's record (drift); its interfaces, and for
        // spot its spot requests, the launch tags (`types.go` `Build`).
        let mut tag_specs = vec![
            tag_spec(ResourceType::Instance, &t.tags),
            tag_spec(ResourceType::Volume, &t.tags),
            tag_spec(ResourceType::NetworkInterface, &t.interface_tags),
        ];
        if t.spot {
            tag_specs.push(tag_spec(
                ResourceType::SpotInstancesRequest,
                &t.interface_tags,
            ));
        }
        let data = RequestLaunchTemplateData::builder()
            .set_block_device_mappings((!block_devices.is_empty()).then_some(block_devices))
            .metadata_options(metadata)
            .set_cpu_options(t.nested_virtualization.as_deref().map(|n| {
                LaunchTemplateCpuOptionsRequest::builder()
                    .nested_virtualization(NestedVirtualizationSpecification::from(n))
                    .build()
            }))
            .monitoring(
                LaunchTemplatesMonitoringRequest::builder()
                    .enabled(t.detailed_monitoring)
                    .build(),
            )
            .placement(placement)
            .enclave_options(
                aws_sdk_ec2::types::LaunchTemplateEnclaveOptionsRequest::builder()
                    .enabled(t.enclave)
                    .build(),
            )
            .set_capacity_reservation_specification(reservation)
            .set_instance_market_options(market)
            .image_id(&t.image_id)
            .user_data(super::userdata::base64_encode(t.user_data.as_bytes()))
            .set_network_interfaces(Some(interfaces))
            .set_iam_instance_profile(t.instance_profile.as_ref().map(|p| {
                LaunchTemplateIamInstanceProfileSpecificationRequest::builder()
                    .name(p)
                    .build()
            }))
            .set_tag_specifications(Some(tag_specs))
            .build();
        let result = self.runtime.block_on(
            self.ec2
                .create_launch_template()
                .launch_template_name(&t.name)
                .launch_template_data(data)
                .tag_specifications(
                    TagSpecification::builder()
                        .resource_type(ResourceType::LaunchTemplate)
                        .set_tags(Some(ec2_tags(&t.tags)))
                        .build(),
                )
                .send(),
        );
        match result {
            Ok(_) => Ok(true),
            Err(e) => {
                let e = cloud_error("EC2", "CreateLaunchTemplate", e);
                if e.code().is_some_and(|c| c.contains("AlreadyExists")) {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
        }
    }

    fn create_fleet(&self, r: &FleetRequest) -> Result<FleetResponse, CloudError> {
        use aws_sdk_ec2::types::{
            DefaultTargetCapacityType, FleetLaunchTemplateConfigRequest,
            FleetLaunchTemplateOverridesRequest, FleetLaunchTemplateSpecificationRequest,
            FleetOnDemandAllocationStrategy, FleetReservationType, FleetType, InstanceType,
            OnDemandOptionsRequest, ReservedCapacityOptionsRequest, ResourceType,
            SpotAllocationStrategy, SpotOptionsRequest, TagSpecification,
            TargetCapacitySpecificationRequest,
        };
        let spot = r.capacity_type == "spot";
        let configs = r
            .configs
            .iter()
            .map(|(name, overrides)| {
                FleetLaunchTemplateConfigRequest::builder()
                    .launch_template_specification(
                        FleetLaunchTemplateSpecificationRequest::builder()
                            .launch_template_name(name)
                            .version("$Latest")
                            .build(),
                    )
                    .set_overrides(Some(
                        overrides
                            .iter()
                            .map(|o| {
                                FleetLaunchTemplateOverridesRequest::builder()
                                    .instance_type(InstanceType::from(o.instance_type.as_str()))
                                    .subnet_id(&o.subnet_id)
                                    .availability_zone(&o.zone)
                                    .image_id(&o.image_id)
                                    .priority(o.priority)
                                    .build()
                            })
                            .collect(),
                    ))
                    .build()
            })
            .collect();
        let tag_spec = |t: ResourceType| {
            TagSpecification::builder()
                .resource_type(t)
                .set_tags(Some(ec2_tags(&r.tags)))
                .build()
        };
        let target = TargetCapacitySpecificationRequest::builder()
            .total_target_capacity(1)
            .default_target_capacity_type(DefaultTargetCapacityType::from(r.capacity_type.as_str()))
            .build();
        let mut request = self
            .ec2
            .create_fleet()
            .r#type(FleetType::Instant)
            .client_token(&r.client_token)
            .set_launch_template_configs(Some(configs))
            .target_capacity_specification(target)
            .tag_specifications(tag_spec(ResourceType::Instance))
            .tag_specifications(tag_spec(ResourceType::Volume))
            .tag_specifications(tag_spec(ResourceType::Fleet))
            .set_context(r.context.clone());
        let prioritized = r.allocation == FleetAllocation::Priority;
        request = if spot {
            request.spot_options(
                SpotOptionsRequest::builder()
                    .allocation_strategy(if prioritized {
                        SpotAllocationStrategy::CapacityOptimizedPrioritized
                    } else {
                        SpotAllocationStrategy::PriceCapacityOptimized
                    })
                    .build(),
            )
        } else if r.capacity_type == "reserved-capacity" {
            // An interruptible ODCR (`CreateFleetInputBuilder.Build`).
            request.reserved_capacity_options(
                ReservedCapacityOptionsRequest::builder()
                    .reservation_types(FleetReservationType::InterruptibleCapacityReservation)
                    .build(),
            )
        } else if r.capacity_type == "capacity-block" {
            request
        } else {
            request.on_demand_options(
                OnDemandOptionsRequest::builder()
                    .allocation_strategy(if prioritized {
                        FleetOnDemandAllocationStrategy::Prioritized
                    } else {
                        FleetOnDemandAllocationStrategy::LowestPrice
                    })
                    .build(),
            )
        };
        // Not retried by the SDK: moto does not honour ClientToken, and a lost answer or a
        // server error (which may have launched) is resolved by the caller's tag lookup, never
        // by a blind resend. A throttled call was refused before anything ran: that one alone
        // is sent again, with backoff.
        let out = retry_throttled(
            FLEET_ATTEMPTS,
            || {
                // Asked again before each send: the lease may be lost during a backoff.
                self.writable("CreateFleet")?;
                self.runtime
                    .block_on(
                        request
                            .clone()
                            .customize()
                            .config_override(
                                aws_sdk_ec2::config::Builder::default()
                                    .retry_config(RetryConfig::disabled()),
                            )
                            .send(),
                    )
                    .map_err(|e| cloud_error("EC2", "CreateFleet", e))
            },
            self.backoff,
        )?;
        let mut response = FleetResponse::default();
        for i in out.instances() {
            response
                .instance_ids
                .extend(i.instance_ids().iter().cloned());
        }
        for e in out.errors() {
            let o = e
                .launch_template_and_overrides()
                .and_then(|l| l.overrides());
            response.errors.push(FleetError {
                instance_type: o
                    .and_then(|o| o.instance_type())
                    .map(|t| t.as_str().to_string()),
                subnet_id: o.and_then(|o| o.subnet_id()).map(str::to_string),
                code: e.error_code().unwrap_or_default().to_string(),
                message: e.error_message().unwrap_or_default().to_string(),
            });
        }
        Ok(response)
    }

    fn describe_instances(&self, query: &InstanceQuery) -> Result<Vec<Instance>, CloudError> {
        let request = match query {
            InstanceQuery::Ids(ids) => {
                debug_assert!(ids.len() <= INSTANCE_BATCH);
                self.ec2
                    .describe_instances()
                    .set_instance_ids(Some(ids.clone()))
            }
            InstanceQuery::Filters(filters) => self
                .ec2
                .describe_instances()
                .set_filters(ec2_filters(filters))
                .max_results(1000),
        };
        let reservations = self
            .runtime
            .block_on(request.into_paginator().items().send().try_collect())
            .map_err(|e| cloud_error("EC2", "DescribeInstances", e))?;
        Ok(reservations
            .iter()
            .flat_map(|r| r.instances().iter().map(instance))
            .collect())
    }

    fn terminate_instances(&self, ids: &[String]) -> Result<Vec<String>, CloudError> {
        debug_assert!(ids.len() <= INSTANCE_BATCH);
        self.writable("TerminateInstances")?;
        let out = self
            .runtime
            .block_on(
                self.ec2
                    .terminate_instances()
                    .set_instance_ids(Some(ids.to_vec()))
                    .send(),
            )
            .map_err(|e| cloud_error("EC2", "TerminateInstances", e))?;
        Ok(out
            .terminating_instances()
            .iter()
            .filter_map(|c| c.instance_id().map(str::to_string))
            .collect())
    }

    fn instance_user_data(&self, id: &str) -> Result<Option<String>, CloudError> {
        let out = self
            .runtime
            .block_on(
                self.ec2
                    .describe_instance_attribute()
                    .instance_id(id)
                    .attribute(aws_sdk_ec2::types::InstanceAttributeName::UserData)
                    .send(),
            )
            .map_err(|e| cloud_error("EC2", "DescribeInstanceAttribute", e))?;
        Ok(out
            .user_data()
            .and_then(|u| u.value())
            .and_then(super::userdata::base64_decode)
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }
}

/// CreateFleet sends in all when throttled.
const FLEET_ATTEMPTS: u32 = 5;

/// The error codes of a request refused for its rate (EC2, SSM, the SDK's own list), which
/// AWS answers before doing anything.
fn is_throttling(e: &CloudError) -> bool {
    matches!(
        e,
        CloudError::Api { code, .. } if matches!(
            code.as_str(),
            "RequestLimitExceeded" | "Throttling" | "ThrottlingException" | "ThrottledException"
                | "RequestThrottledException" | "TooManyRequestsException"
                | "RequestThrottled" | "SlowDown"
        )
    )
}

/// Calls `send` until it is not throttled or `attempts` calls were made, sleeping 1 s, 2 s,
/// 4 s, … (at most 8 s) between them; a `sleep` cut short by a stop (`false`) ends it with the
/// throttling error.
fn retry_throttled<T>(
    attempts: u32,
    mut send: impl FnMut() -> Result<T, CloudError>,
    mut sleep: impl FnMut(Duration) -> bool,
) -> Result<T, CloudError> {
    let mut backoff = Duration::from_secs(1);
    let mut attempt = 1;
    loop {
        match send() {
            Err(e) if is_throttling(&e) && attempt < attempts => {
                tracing::info!(attempt, wait_ms = backoff.as_millis() as u64, error = %e, "throttled; sent again");
                if !sleep(backoff) {
                    tracing::info!(error = %e, "throttled; not sent again: stop requested");
                    return Err(e);
                }
                backoff = (backoff * 2).min(Duration::from_secs(8));
                attempt += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{error_from_body, latest_spot_prices, retry_throttled};
    use crate::cloud::fake::FakeCloud;
    use crate::cloud::types::{CloudError, Compute};
    use std::time::Duration;

    fn api(code: &str) -> CloudError {
        CloudError::Api {
            service: "EC2".into(),
            operation: "CreateFleet".into(),
            code: code.into(),
            message: "injected".into(),
        }
    }

    /// A CreateFleet answered by `answers` first, then by the fake cloud.
    fn fleet_through(
        answers: Vec<CloudError>,
    ) -> (Result<usize, CloudError>, usize, Vec<Duration>) {
        let cloud = FakeCloud::new();
        let mut answers = answers.into_iter();
        let mut calls = 0;
        let mut waits = Vec::new();
        let result = retry_throttled(
            5,
            || {
                calls += 1;
                match answers.next() {
                    Some(e) => Err(e),
                    None => cloud
                        .create_fleet(&bare_fleet())
                        .map(|r| r.instance_ids.len()),
                }
            },
            |d| {
                waits.push(d);
                true
            },
        );
        (result, calls, waits)
    }

    #[test]
    fn a_throttled_fleet_is_sent_again_with_backoff_and_nothing_else_is() {
        let (result, calls, waits) =
            fleet_through(vec![api("RequestLimitExceeded"), api("Throttling")]);
        assert!(result.is_ok());
        assert_eq!(calls, 3);
        assert_eq!(waits, [Duration::from_secs(1), Duration::from_secs(2)]);

        let (result, calls, waits) = fleet_through(vec![api("RequestLimitExceeded"); 9]);
        assert_eq!(result.unwrap_err(), api("RequestLimitExceeded"), "gives up");
        assert_eq!(calls, 5);
        assert_eq!(waits.last(), Some(&Duration::from_secs(8)), "capped");

        // A stop requested during the backoff: no second send, the throttling error at once.
        let mut calls = 0;
        let result: Result<(), CloudError> = retry_throttled(
            5,
            || {
                calls += 1;
                Err(api("RequestLimitExceeded"))
            },
            |_| false,
        );
        assert_eq!(result.unwrap_err(), api("RequestLimitExceeded"));
        assert_eq!(calls, 1);

        // A server error or a lost answer may have launched: the caller looks, never resends.
        for e in [
            api("InternalError"),
            api("Unavailable"),
            CloudError::Transport {
                service: "EC2".into(),
                operation: "CreateFleet".into(),
                message: "connection reset".into(),
            },
        ] {
            let (result, calls, waits) = fleet_through(vec![e.clone()]);
            assert_eq!(result.unwrap_err(), e);
            assert_eq!((calls, waits.len()), (1, 0));
        }
    }
    use crate::cloud::types::SpotPrice;

    #[test]
    fn spot_prices_keep_the_newest_record_per_type_and_zone() {
        let r = |t: &str, z: &str, p: &str, at: Option<i64>| {
            (t.to_string(), z.to_string(), p.to_string(), at)
        };
        let got = latest_spot_prices([
            r("m5.large", "us-east-1b", "0.0400", Some(10)),
            r("m5.large", "us-east-1a", "0.0350", Some(10)),
            r("m5.large", "us-east-1a", "0.0360", Some(20)),
            r("m5.large", "us-east-1a", "0.0300", Some(15)),
            r("m5.large", "us-east-1b", "0.0410", Some(10)),
            r("c5.large", "us-east-1a", "n/a", Some(30)),
            r("c5.large", "us-east-1a", "0.0300", None),
            r("c5.large", "us-east-1b", "-1", Some(1)),
            r("", "us-east-1a", "0.1", Some(1)),
        ]);
        let p = |t: &str, z: &str, price: f64| SpotPrice {
            instance_type: t.into(),
            zone: z.into(),
            price,
        };
        assert_eq!(
            got,
            [
                p("c5.large", "us-east-1a", 0.03),
                p("m5.large", "us-east-1a", 0.036),
                p("m5.large", "us-east-1b", 0.04),
            ],
            "newest wins, the first on a tie; unparsable and negative prices are dropped"
        );
    }

    #[test]
    fn error_bodies_in_either_protocol() {
        let xml = "<?xml version=\"1.0\"?><ErrorResponse><Errors><Error><Code>AccessDenied</Code><Message>User: x is not authorized to perform: ssm:GetParameters</Message></Error></Errors></ErrorResponse>";
        assert_eq!(
            error_from_body(xml),
            Some((
                "AccessDenied".into(),
                "User: x is not authorized to perform: ssm:GetParameters".into()
            ))
        );
        let json = r#"{"__type":"com.amazonaws.ssm#ParameterNotFound","message":"gone"}"#;
        assert_eq!(
            error_from_body(json),
            Some(("ParameterNotFound".into(), "gone".into()))
        );
        assert_eq!(error_from_body("<html>bad gateway</html>"), None);
        assert_eq!(error_from_body(""), None);
    }

    /// Issue 13 / docs/spec.md §10: once the operator lease is lost, no launch or termination
    /// is sent — the gate is checked before the SDK is asked (nothing listens at the endpoint;
    /// the call counter sees no attempt); `usecases::live::aws_error` makes it exit 4.
    #[test]
    fn no_launch_or_termination_is_sent_once_the_lease_is_lost() {
        use crate::cloud::types::{Cloud, LaunchTemplateRequest};
        let mut cloud = cloud_at("http://127.0.0.1:9");
        let lost = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
        let reason = lost.clone();
        cloud.gate_writes(std::sync::Arc::new(move || reason.lock().unwrap().clone()));
        *lost.lock().unwrap() = Some("the operator lease was taken over by bob@desk pid 7".into());
        let err = cloud.terminate_instances(&["i-0123".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the operator lease was taken over by bob@desk pid 7: EC2 TerminateInstances not sent (another run may be changing the cluster)"
        );
        assert_eq!(err.reason(), "WritesStopped");
        let err = cloud
            .create_launch_template(&LaunchTemplateRequest::default())
            .unwrap_err();
        assert!(
            matches!(err, CloudError::WritesStopped { ref operation, .. } if operation == "CreateLaunchTemplate"),
            "{err}"
        );
        assert_eq!(cloud.call_counts().total(), 0, "nothing sent");
    }

    /// Issue 13 / docs/spec.md §10: a CreateFleet throttled while the lease was held is not
    /// sent again once the lease is lost during its backoff — the gate is asked before every
    /// send, not only the first (client-go `leaderelection.go`: a leader that lost the lease
    /// stops acting at once). A stub EC2 answers `RequestLimitExceeded`; the lease is lost as
    /// its first answer goes out.
    #[test]
    fn a_throttled_fleet_is_not_sent_again_once_the_lease_is_lost() {
        use std::io::{BufRead, BufReader, Read, Write};
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = Arc::new(AtomicUsize::new(0));
        let counted = served.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let answer = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>r-1</RequestID></Response>";
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        let mut cloud = cloud_at(&format!("http://127.0.0.1:{port}"));
        cloud.interrupt_backoff_with(|_| true);
        let seen = served.clone();
        cloud.gate_writes(Arc::new(move || {
            (seen.load(Ordering::SeqCst) > 0).then(|| "the operator lease was taken over".into())
        }));
        let err = cloud.create_fleet(&bare_fleet()).unwrap_err();
        assert_eq!(err.reason(), "WritesStopped", "{err}");
        assert_eq!(served.load(Ordering::SeqCst), 1, "sent once, not again");
    }

    /// A client of `endpoint` with static test credentials in us-east-1.
    fn cloud_at(endpoint: &str) -> super::AwsCloud {
        super::AwsCloud::connect(&super::AwsOptions {
            region: Some("us-east-1".into()),
            endpoint_url: Some(endpoint.into()),
            static_credentials: Some(("testing".into(), "testing".into())),
            ..super::AwsOptions::default()
        })
        .unwrap()
    }

    /// A CreateFleet request with nothing in it.
    fn bare_fleet() -> crate::cloud::types::FleetRequest {
        crate::cloud::types::FleetRequest {
            client_token: "t".into(),
            capacity_type: "on-demand".into(),
            configs: Vec::new(),
            tags: Default::default(),
            context: None,
            allocation: Default::default(),
        }
    }
}
