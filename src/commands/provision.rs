//! `kubectl karpenter provision`: plan (and, later, launch) the capacity for pending pods.
//!
//! Live mode (no `-f`) is in [`super::provision_live`].
//!
//! Offline mode (`-f`) reads manifests, sizes instance types from the embedded catalog (or
//! `--catalog`), runs the solver and prints the plan. It needs no cluster and no AWS account.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Context;
use crate::api::Manifests;
use crate::cli::output::{price, write_document, Table, API_VERSION};
use crate::cli::style::Style;
use crate::cli::{OutputFormat, ProvisionArgs};
use crate::cloud::{Catalog, InstanceTypeContext};
use crate::error::{CommandError, CommandResult, Exit};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::resources::Resources;
use crate::scheduling::{self, ExistingNode, Input, Options, Plan, PoolInput};

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &ProvisionArgs) -> CommandResult {
    if args.filenames.is_empty() {
        return super::provision_live::run(ctx, args);
    }
    if args.watch {
        return Err(CommandError::input(
            "--watch needs a cluster: it cannot be combined with -f",
        ));
    }
    let mut manifests = crate::api::load_paths(&args.filenames, &mut std::io::stdin().lock())?;
    manifests.check_references()?;
    let catalog = match &args.catalog {
        Some(path) => Catalog::from_file(path)?,
        None => Catalog::embedded()?,
    };
    let region = resolve_region(ctx);
    for note in catalog.notes() {
        ctx.note(&note);
    }
    if !manifests.ignored.is_empty() {
        ctx.note(&format!(
            "ignored {} objects that do not affect a plan: {}",
            manifests.ignored.len(),
            manifests.ignored.join(", ")
        ));
    }
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    let input = build_input(&mut manifests, &catalog, &region, args)?;
    if input.pools.is_empty() {
        ctx.warn("no NodePool or Provisioner in the input: nothing can be launched");
    }
    let plan = scheduling::solve(&input);
    render(ctx, &plan, &region)?;
    Ok(if plan.unschedulable.is_empty() {
        Exit::Ok
    } else {
        Exit::Finding
    })
}

/// `--region`, else the AWS environment, else us-east-1 (the catalog's priced region).
fn resolve_region(ctx: &mut Context<'_>) -> String {
    if let Some(r) = &ctx.global.region {
        return r.clone();
    }
    for var in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
        if let Ok(r) = std::env::var(var) {
            if !r.is_empty() {
                return r;
            }
        }
    }
    ctx.note("no region given (--region, AWS_REGION): assuming us-east-1");
    "us-east-1".to_string()
}

/// The node class a pool refers to, if it is in the input.
fn class_of<'m>(manifests: &'m Manifests, pool: &NodePool) -> Option<&'m NodeClass> {
    let r = pool.node_class_ref.as_ref()?;
    manifests
        .node_classes
        .iter()
        .find(|c| c.name == r.name && (r.kind.is_empty() || c.kind == r.kind))
}

/// Assembles the solver input from manifests: pools with their sized instance types, existing
/// nodes with their pods, DaemonSets, and the pending pods.
///
/// The bound pods are *moved* out of `manifests` into their nodes (on a 150k-pod cluster a copy
/// would double the memory, PERF.md B4); everything else is left in place.
pub fn build_input(
    manifests: &mut Manifests,
    catalog: &Catalog,
    region: &str,
    args: &ProvisionArgs,
) -> Result<Input, CommandError> {
    for name in &args.nodepools {
        if !manifests.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner in the input"
            )));
        }
    }
    let in_flight = in_flight_nodes(manifests);
    let selected =
        |pool: &NodePool| args.nodepools.is_empty() || args.nodepools.contains(&pool.name);
    // Pools sharing a class (and no kubelet override) share one sizing; the cached list is
    // cloned for all but its last user, which takes it (one copy per class, not two).
    let cache_key = |pool: &NodePool, class: Option<&NodeClass>| {
        format!(
            "{}/{}",
            class.map(|c| c.name.as_str()).unwrap_or("-"),
            pool.generation.map(|g| g.to_string()).unwrap_or_default()
        )
    };
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for pool in manifests.node_pools.iter().filter(|p| selected(p)) {
        let class = class_of(manifests, pool);
        let kubelet = pool.kubelet.is_some() || class.is_some_and(|c| c.kubelet.is_some());
        if !kubelet {
            *uses.entry(cache_key(pool, class)).or_default() += 1;
        }
    }
    let mut sized: BTreeMap<String, Vec<crate::model::instance_type::InstanceType>> =
        BTreeMap::new();
    let mut pools = Vec::new();
    for pool in manifests.node_pools.iter().filter(|p| selected(p)) {
        let class = class_of(manifests, pool);
        let family = class
            .and_then(|c| c.ami_family.clone())
            .unwrap_or_else(|| "AL2".to_string());
        // Kubelet settings live on the class from v1 on, on the pool before.
        let kubelet = if pool.generation == Some(ApiGeneration::V1) {
            class.and_then(|c| c.kubelet.as_ref())
        } else {
            pool.kubelet
                .as_ref()
                .or_else(|| class.and_then(|c| c.kubelet.as_ref()))
        };
        let zones: Vec<String> = class
            .map(|c| c.status.subnets.iter().map(|(_, z)| z.clone()).collect())
            .unwrap_or_default();
        let key = cache_key(pool, class);
        let left = uses.get_mut(&key).filter(|_| kubelet.is_none());
        let cached = match left {
            Some(n) if sized.contains_key(&key) => {
                *n -= 1;
                if *n == 0 {
                    sized.remove(&key)
                } else {
                    sized.get(&key).cloned()
                }
            }
            _ => None,
        };
        let types = match cached {
            Some(t) => t,
            None => {
                let mut ctx = InstanceTypeContext::new(region, &family);
                ctx.kubelet = kubelet;
                if let Some(c) = class {
                    ctx.block_devices = &c.block_devices;
                    ctx.instance_store_policy = c.instance_store_policy.as_deref();
                }
                if !zones.is_empty() {
                    ctx.zones = Some(&zones);
                }
                let t = catalog.instance_types(&ctx)?;
                if let Some(n) = uses.get_mut(&key).filter(|_| kubelet.is_none()) {
                    *n -= 1;
                    if *n > 0 {
                        sized.insert(key, t.clone());
                    }
                }
                t
            }
        };
        let usage = manifests
            .nodes
            .iter()
            .chain(in_flight.iter().map(|e| &e.node))
            .filter(|n| n.labels.get(pool.owner_label()) == Some(&pool.name))
            .fold(Resources::new(), |acc, n| {
                acc.add(&with_node_count(&n.capacity))
            });
        pools.push(PoolInput {
            pool: pool.clone(),
            node_class: pool.node_class_ref.as_ref().map(|r| r.name.clone()),
            instance_types: types,
            usage: usage.add(&pool.status_resources),
        });
    }
    let mut by_node: std::collections::HashMap<String, Vec<crate::model::pod::Pod>> =
        std::collections::HashMap::new();
    for pod in std::mem::take(&mut manifests.bound_pods) {
        if let Some(node) = pod.node_name.clone() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    let mut existing_nodes: Vec<ExistingNode> = manifests
        .nodes
        .iter()
        .map(|n| ExistingNode {
            node: n.clone(),
            pods: by_node.remove(&n.name).unwrap_or_default(),
        })
        .collect();
    existing_nodes.extend(in_flight);
    Ok(Input {
        pods: manifests.pods.clone(),
        existing_nodes,
        pools,
        daemonsets: manifests.daemonsets.clone(),
        namespace_labels: manifests.namespace_labels.clone(),
        options: Options {
            max_instance_types: args.max_instance_types,
        },
    })
}

/// NodeClaims launched but not registered as Nodes yet: capacity the scheduler fills first, like
/// Karpenter's in-flight nodes (labels from the NodeClaim, its taints, its reported allocatable).
fn in_flight_nodes(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| !c.deleting && !c.allocatable.is_empty())
        .filter(|c| {
            !manifests.nodes.iter().any(|n| {
                Some(&n.name) == c.node_name.as_ref()
                    || (n.provider_id.is_some() && n.provider_id == c.provider_id)
            })
        })
        .map(|c| {
            let mut labels = c.labels.clone();
            for (k, v) in crate::model::requirements::Requirements::from_selectors(&c.requirements)
                .single_value_labels()
            {
                labels.entry(k).or_insert(v);
            }
            if let Some(pool) = &c.nodepool {
                labels
                    .entry(labels::NODEPOOL.to_string())
                    .or_insert_with(|| pool.clone());
            }
            ExistingNode {
                node: crate::model::node::Node {
                    name: c.node_name.clone().unwrap_or_else(|| c.name.clone()),
                    labels,
                    annotations: c.annotations.clone(),
                    taints: c.taints.clone(),
                    capacity: c.capacity.clone(),
                    allocatable: c.allocatable.clone(),
                    provider_id: c.provider_id.clone(),
                    ..Default::default()
                },
                pods: Vec::new(),
            }
        })
        .collect()
}

/// A node's capacity plus `nodes: 1`, for `limits.nodes`.
fn with_node_count(capacity: &Resources) -> Resources {
    let mut r = capacity.clone();
    r.set("nodes", 1000);
    r
}

/// The `ProvisioningPlan` document (README: "Machine-readable outputs").
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDoc {
    api_version: &'static str,
    kind: &'static str,
    region: String,
    node_claims: Vec<NodeClaimDoc>,
    existing_nodes: Vec<ExistingDoc>,
    unschedulable: Vec<UnschedulableDoc>,
    price_per_hour: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeClaimDoc {
    name: String,
    node_pool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_class: Option<String>,
    instance_type: String,
    instance_types: Vec<String>,
    capacity_type: String,
    zone: String,
    zones: Vec<String>,
    price_per_hour: f64,
    pods: Vec<String>,
    requests: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    taints: Vec<TaintDoc>,
    requirements: Vec<RequirementDoc>,
}

#[derive(Serialize)]
struct TaintDoc {
    key: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    value: String,
    effect: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequirementDoc {
    key: String,
    operator: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    values: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_values: Option<u32>,
}

impl From<NodeSelectorRequirement> for RequirementDoc {
    fn from(r: NodeSelectorRequirement) -> Self {
        RequirementDoc {
            key: r.key,
            operator: r.operator.as_str(),
            values: r.values,
            min_values: r.min_values,
        }
    }
}

#[derive(Serialize)]
struct ExistingDoc {
    name: String,
    pods: Vec<String>,
}

#[derive(Serialize)]
struct UnschedulableDoc {
    pod: String,
    reason: String,
}

/// Builds the machine-readable plan.
pub fn plan_document(plan: &Plan, region: &str) -> PlanDoc {
    PlanDoc {
        api_version: API_VERSION,
        kind: "ProvisioningPlan",
        region: region.to_string(),
        node_claims: plan
            .node_claims
            .iter()
            .map(|c| NodeClaimDoc {
                name: c.name.clone(),
                node_pool: c.node_pool.clone(),
                node_class: c.node_class.clone(),
                instance_type: c.launch.instance_type.clone(),
                instance_types: c.instance_types.iter().map(|o| o.name.clone()).collect(),
                capacity_type: c.launch.capacity_type.clone(),
                zone: c.launch.zone.clone(),
                zones: c.zones.clone(),
                price_per_hour: c.launch.price,
                pods: c.pods.clone(),
                requests: c.requests.to_strings(),
                labels: c.labels.clone(),
                taints: c
                    .taints
                    .iter()
                    .map(|t| TaintDoc {
                        key: t.key.clone(),
                        value: t.value.clone(),
                        effect: t.effect.as_str(),
                    })
                    .collect(),
                requirements: c
                    .requirements
                    .to_selectors()
                    .into_iter()
                    .map(RequirementDoc::from)
                    .collect(),
            })
            .collect(),
        existing_nodes: plan
            .existing_nodes
            .iter()
            .map(|e| ExistingDoc {
                name: e.node.clone(),
                pods: e.pods.clone(),
            })
            .collect(),
        unschedulable: plan
            .unschedulable
            .iter()
            .map(|u| UnschedulableDoc {
                pod: u.pod.clone(),
                reason: u.reason.clone(),
            })
            .collect(),
        price_per_hour: (plan.price_per_hour() * 1e6).round() / 1e6,
    }
}

/// Prints the plan in the chosen format.
pub(crate) fn render(ctx: &mut Context<'_>, plan: &Plan, region: &str) -> Result<(), CommandError> {
    let io = |e: std::io::Error| CommandError::remote(format!("writing output: {e}"));
    let headers = !ctx.global.no_headers;
    let style = Style::for_stdout(ctx.global.color);
    match ctx.global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            write_document(ctx.out, ctx.global.output, &plan_document(plan, region)).map_err(io)?;
        }
        OutputFormat::Name => {
            for c in &plan.node_claims {
                writeln!(ctx.out, "nodeclaim/{}", c.name).map_err(io)?;
            }
        }
        format => {
            let wide = format == OutputFormat::Wide;
            let mut columns = vec![
                "NODECLAIM",
                "NODEPOOL",
                "NODECLASS",
                "INSTANCE-TYPE",
                "OPTIONS",
                "CAPACITY",
                "ZONE",
                "PODS",
                "$/HOUR",
            ];
            if wide {
                columns.extend(["CPU", "MEMORY", "ZONES"]);
            }
            let mut table = Table::new(&columns);
            for c in &plan.node_claims {
                let mut row = vec![
                    c.name.clone(),
                    c.node_pool.clone(),
                    c.node_class.clone().unwrap_or_else(|| "-".into()),
                    c.launch.instance_type.clone(),
                    format!("{} types", c.instance_types.len()),
                    c.launch.capacity_type.clone(),
                    c.launch.zone.clone(),
                    c.pods.len().to_string(),
                    price(c.launch.price),
                ];
                if wide {
                    let req = c.requests.to_strings();
                    row.push(req.get("cpu").cloned().unwrap_or_default());
                    row.push(req.get("memory").cloned().unwrap_or_default());
                    row.push(c.zones.join(","));
                }
                table.row(row);
            }
            if !plan.node_claims.is_empty() {
                table.write(ctx.out, headers).map_err(io)?;
            }
            if !plan.existing_nodes.is_empty() {
                if !plan.node_claims.is_empty() {
                    writeln!(ctx.out).map_err(io)?;
                }
                let mut t = Table::new(&["EXISTING-NODE", "PODS", "PLACED"]);
                for e in &plan.existing_nodes {
                    let shown = if wide || e.pods.len() <= 3 {
                        e.pods.join(",")
                    } else {
                        format!("{},… (+{})", e.pods[..3].join(","), e.pods.len() - 3)
                    };
                    t.row(vec![e.node.clone(), e.pods.len().to_string(), shown]);
                }
                t.write(ctx.out, headers).map_err(io)?;
            }
            if !plan.unschedulable.is_empty() {
                if !plan.node_claims.is_empty() || !plan.existing_nodes.is_empty() {
                    writeln!(ctx.out).map_err(io)?;
                }
                let mut t = Table::new(&["UNSCHEDULABLE-POD", "REASON"]);
                for u in &plan.unschedulable {
                    // The reason is the last column, so colour does not disturb alignment.
                    t.row(vec![u.pod.clone(), style.bad(&u.reason)]);
                }
                t.write(ctx.out, headers).map_err(io)?;
            }
            if plan.node_claims.is_empty()
                && plan.existing_nodes.is_empty()
                && plan.unschedulable.is_empty()
            {
                writeln!(ctx.out, "No pending pods: nothing to launch.").map_err(io)?;
            } else if headers {
                let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum::<usize>()
                    + plan
                        .existing_nodes
                        .iter()
                        .map(|e| e.pods.len())
                        .sum::<usize>();
                writeln!(
                    ctx.out,
                    "\n{} new NodeClaim(s), ${}/hour; {} pod(s) placed, {} ({region})",
                    plan.node_claims.len(),
                    price(plan.price_per_hour()),
                    placed,
                    if plan.unschedulable.is_empty() {
                        style.good("0 unschedulable")
                    } else {
                        style.bad(&format!("{} unschedulable", plan.unschedulable.len()))
                    }
                )
                .map_err(io)?;
            }
        }
    }
    Ok(())
}
