//! What every live command shares: connecting to the cluster (kubeconfig flags) and to AWS,
//! the Kubernetes version, the catalog, resolving a node class (AMIs, subnets, security groups,
//! instance profile), and finding the instances this tool launched.

use std::collections::BTreeMap;

use super::Context;
use crate::cloud::ami::{self, KubeVersion, ResolvedImage};
use crate::cloud::aws::{AwsCloud, AwsOptions};
use crate::cloud::launch::{self, TypeFacts};
use crate::cloud::live_catalog::{self, LiveOptions};
use crate::cloud::network::NetworkResolver;
use crate::cloud::profile::{self, ProfileInputs};
use crate::cloud::types::{Cloud, CloudError, Compute, Filter, Instance, InstanceQuery, Subnet};
use crate::cloud::userdata::Family;
use crate::cloud::Catalog;
use crate::error::CommandError;
use crate::k8s::client::KubeClient;
use crate::k8s::config::ClusterTarget;
use crate::k8s::ops;
use crate::model::instance_type::InstanceType;
use crate::model::nodepool::NodeClass;

/// A connected cluster.
pub struct LiveCluster {
    /// Flags and kubeconfig, resolved.
    pub target: ClusterTarget,
    /// The client.
    pub client: KubeClient,
}

/// Connects to the cluster the kubeconfig flags select.
pub fn connect_cluster(ctx: &mut Context<'_>) -> Result<LiveCluster, CommandError> {
    let target = ClusterTarget::from_args(ctx.global)?;
    let client = KubeClient::connect(&target)?;
    ctx.note(&format!(
        "cluster {} (context {}, API {})",
        target.info.name,
        target.context,
        client.server()
    ));
    Ok(LiveCluster { target, client })
}

/// `--kubernetes-version`, else the API server's `/version`.
pub fn kubernetes_version(
    ctx: &Context<'_>,
    cluster: &LiveCluster,
) -> Result<KubeVersion, CommandError> {
    if let Some(v) = &ctx.global.kubernetes_version {
        return KubeVersion::parse(v)
            .map_err(|e| CommandError::input(format!("--kubernetes-version: {e}")));
    }
    let text = ops::server_version(&cluster.client)?;
    KubeVersion::parse(&text).map_err(|e| {
        CommandError::remote(format!("the API server's version {text:?}: {e}"))
            .with_hint("pass --kubernetes-version X.Y")
    })
}

/// Maps an AWS error to exit 3 with a hint where one helps.
pub fn aws_error(e: CloudError) -> CommandError {
    let hint = match &e {
        CloudError::NoRegion { hint: None } => Some("e.g. --region us-east-1"),
        _ if e.is_permission() => {
            Some("the AWS identity lacks a permission the README's IAM policy lists")
        }
        _ => None,
    };
    let err = CommandError::remote(e);
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// Connects to AWS (region from `--region`, the AWS chain, else a hint from the kubeconfig).
pub fn connect_aws(ctx: &mut Context<'_>) -> Result<AwsCloud, CommandError> {
    let cloud = AwsCloud::connect(&AwsOptions {
        region: ctx.global.region.clone(),
        profile: ctx.global.profile.clone(),
        region_hint: crate::cli::kubeconfig::region_hint(ctx.global),
        ..AwsOptions::default()
    })
    .map_err(aws_error)?;
    ctx.note(&format!(
        "AWS region {}{}",
        cloud.region(),
        cloud
            .endpoint()
            .map(|e| format!(", endpoint {e}"))
            .unwrap_or_default()
    ));
    Ok(cloud)
}

/// The catalog: `--catalog`, else the live one (cached), else the embedded snapshot (warned).
pub fn catalog(
    ctx: &mut Context<'_>,
    cloud: &dyn Cloud,
    file: Option<&str>,
) -> Result<Catalog, CommandError> {
    if let Some(path) = file {
        return Ok(Catalog::from_file(path)?);
    }
    let embedded = Catalog::embedded()?;
    match live_catalog::load(cloud, &embedded, &LiveOptions::default()) {
        Ok(live) => {
            if let Some(w) = &live.cache_warning {
                ctx.note(w);
            }
            Ok(live.catalog)
        }
        Err(e) => {
            ctx.warn(&format!(
                "live instance-type catalog unavailable ({e}): using the embedded snapshot"
            ));
            Ok(embedded)
        }
    }
}

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

/// Resolves a class's AMIs, subnets, security groups and instance profile, failing (exit 3)
/// with the class named when any of them comes back empty.
pub fn resolve_class(
    cloud: &dyn Cloud,
    class: &NodeClass,
    version: KubeVersion,
    default_instance_profile: Option<&str>,
) -> Result<ResolvedClass, CommandError> {
    let named = |what: &str| format!("{}/{}: {what}", class.kind, class.name);
    let now = super::unix_now();
    let resolution = ami::resolve_all(cloud, &[class], version, now)
        .pop()
        .unwrap_or_else(|| Err(ami::AmiError::NoSelector("nothing was resolved".into())));
    let images = match resolution {
        Ok(r) => match r.problem() {
            None => r.images,
            Some(p) => return Err(CommandError::remote(named(&p))),
        },
        Err(e) => return Err(CommandError::remote(named(&e.to_string()))),
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
            default_instance_profile,
            ..ProfileInputs::default()
        },
    )
    .map_err(|e| CommandError::remote(named(&e.to_string())))?;
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
                .get("kubernetes.io/arch")
                .cloned()
                .unwrap_or_else(|| "amd64".to_string());
            let max_pods = t.capacity.get("pods") / 1000;
            (
                t.name.clone(),
                TypeFacts {
                    architecture,
                    max_pods,
                },
            )
        })
        .collect()
}

/// The instances this tool launched for the cluster that are pending or running.
pub fn launched_instances(
    cloud: &impl Compute,
    cluster_name: &str,
) -> Result<Vec<Instance>, CommandError> {
    let mut found = cloud
        .describe_instances(&InstanceQuery::Filters(vec![
            Filter::new(format!("tag:{}", launch::TOOL_TAG), [launch::TOOL_NAME]),
            Filter::new("tag:eks:eks-cluster-name", [cluster_name]),
            Filter::new("instance-state-name", ["pending", "running"]),
        ]))
        .map_err(aws_error)?;
    found.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(found)
}

/// `aws.defaultInstanceProfile` of the `karpenter-global-settings` ConfigMap (v0.2x–v0.31: the
/// profile AWSNodeTemplates without `instanceProfile` launch with), from the namespace of a
/// Karpenter controller Deployment, else `karpenter`.
pub fn default_instance_profile(
    client: &dyn crate::k8s::Cluster,
) -> Result<Option<String>, CommandError> {
    #[derive(serde::Deserialize)]
    struct ConfigMap {
        #[serde(default)]
        data: BTreeMap<String, String>,
    }
    let mut namespaces: Vec<String> = crate::k8s::coexist::find_controllers(client)?
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
