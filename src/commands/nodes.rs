//! `kubectl karpenter nodes`: the managed nodes on one screen (think eks-node-viewer) — pool,
//! instance type, zone, capacity type, AMI, age, readiness, drift, requests against
//! allocatable, pod count and price per hour, then totals per pool and overall.
//!
//! Where each column comes from (and the choices made):
//!
//! - **Managed nodes** are those [`drift::pair_nodes`] keeps: labelled `karpenter.sh/nodepool`
//!   or `karpenter.sh/provisioner-name` (or whose NodeClaim/instance names a pool), plus, when
//!   AWS is reachable, nodes whose EC2 instance carries this tool's `launched-by` tag.
//! - **AWS is optional**. Unless `--no-aws`, one DescribeInstances per 200 nodes (and, for
//!   `-o wide|json|yaml`, one DescribeImages for AMI names) fills in instance facts. If AWS
//!   cannot be reached, one warning is printed and the cluster's own facts are used.
//! - **AMI**: the instance's `ImageId`, else the NodeClaim's `status.imageID`, else the node
//!   annotation `kubectl-karpenter.io/image-id`, else `-`. AMI names (wide) come from the node
//!   classes' `status.amis`, else DescribeImages.
//! - **Prices**: the catalog's, never the network's — `--catalog FILE`, else the embedded
//!   snapshot (the live catalog takes its prices from the same snapshot, so it is not fetched).
//!   On-demand nodes get the on-demand list price (us-east-1's, the estimate used in every
//!   region); spot nodes get a price only from a custom catalog with spot offerings, else `-`.
//! - **Drift** is cheap: [`drift::evaluate`] over what the cluster already holds — NodePool and
//!   node-class hash annotations, requirements, and the AMIs/subnets/security groups the node
//!   classes' `status` lists (what Karpenter itself compares against) — without resolving AMIs
//!   live. A NodeClaim condition `Drifted=True` or the pre-v0.32 node annotation
//!   `karpenter.sh/voluntary-disruption=drifted` also marks a node drifted. The column shows the
//!   reason (`AMIDrift`, …), `Drifted` when only the controller's marker says so, `OK`, or `-`
//!   when a deciding fact is missing; `kubectl karpenter drift check` explains in full.
//! - **Requests** are the sum of the effective requests of the non-terminal pods bound to the
//!   node; **PODS** counts them.
//! - **Bars** (`CPU`, `MEMORY`): eight cells plus the percentage. Block characters
//!   (`▕███░░░░░▏ 38%`) on a terminal, ASCII (`[###-----]  38%`) when stdout is piped or
//!   `TERM=dumb`, so logs, files and `grep` stay 7-bit clean. Colour only via [`Style`].

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};

use serde::Serialize;

use super::ami::ASSUMED_KUBERNETES_VERSION;
use super::drift::parse_selector;
use super::live;
use super::Context;
use crate::cli::output::kubectl_age;
use crate::cli::output::{price, write_document, Table, API_VERSION};
use crate::cli::style::Style;
use crate::cli::{NodesArgs, OutputFormat};
use crate::cloud::ami::facts as ami_facts;
use crate::cloud::types::{
    Cloud, CloudError, Compute, Filter, ImageQuery, Instance, InstanceQuery,
};
use crate::cloud::Catalog;
use crate::drift::{self, class_key, DriftSnapshot, Evaluation, ManagedNode, Status};
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::snapshot::{self, Scope};
use crate::model::instance_type::ON_DEMAND;
use crate::model::labels;
use crate::model::pod::Pod;
use crate::model::selector::LabelSelector;

/// Cells in a usage bar.
const BAR_CELLS: usize = 8;

/// Requests or allocatable, as numbers: milli-CPU, bytes, pods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Millicores.
    pub cpu: i64,
    /// Bytes.
    pub memory: i64,
    /// Pods.
    pub pods: i64,
}

impl Usage {
    fn from_resources(r: &crate::model::resources::Resources) -> Usage {
        Usage {
            cpu: r.cpu,
            memory: r.memory / 1000,
            pods: r.pods / 1000,
        }
    }

    fn add(&mut self, other: &Usage) {
        self.cpu += other.cpu;
        self.memory += other.memory;
        self.pods += other.pods;
    }
}

/// A node's drift, as far as the cluster tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftInfo {
    /// `Drifted`, `OK` or `Unknown`.
    pub status: String,
    /// Karpenter's reason name, when evaluated.
    pub reason: Option<String>,
    /// `evaluated`, `nodeclaim-condition` or `node-annotation`.
    pub source: &'static str,
    /// Explanation (what changed, or what is missing).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl DriftInfo {
    /// What the DRIFT column shows.
    pub fn cell(&self) -> String {
        match (self.status.as_str(), &self.reason) {
            ("Drifted", Some(r)) => r.clone(),
            ("Drifted", None) => "Drifted".into(),
            ("OK", _) => "OK".into(),
            _ => "-".into(),
        }
    }

    /// Whether the node drifted.
    pub fn drifted(&self) -> bool {
        self.status == "Drifted"
    }
}

/// One node of `kind: NodeList`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeEntry {
    /// Node name.
    pub name: String,
    /// Owning NodePool or Provisioner.
    pub node_pool: Option<String>,
    /// NodeClaim (or Machine).
    pub node_claim: Option<String>,
    /// EC2 instance id.
    pub instance_id: Option<String>,
    /// Instance type.
    pub instance_type: Option<String>,
    /// Zone.
    pub zone: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// `on-demand`, `spot`, `reserved`.
    pub capacity_type: Option<String>,
    /// AMI id.
    pub image_id: Option<String>,
    /// AMI name, when known.
    pub image_name: Option<String>,
    /// RFC 3339 creation time.
    pub created: Option<String>,
    /// Age in seconds.
    pub age_seconds: Option<i64>,
    /// `Ready=True`.
    pub ready: bool,
    /// Cordoned (`spec.unschedulable`).
    pub unschedulable: bool,
    /// `karpenter` or `kubectl-karpenter`.
    pub launched_by: &'static str,
    /// Drift.
    pub drift: DriftInfo,
    /// Sum of the requests of the non-terminal pods bound to the node.
    pub requests: Usage,
    /// Allocatable.
    pub allocatable: Usage,
    /// Non-terminal pods bound to the node.
    pub pods: usize,
    /// USD per hour, when the catalog knows it.
    pub price_per_hour: Option<f64>,
}

impl NodeEntry {
    /// kubectl's STATUS: `Ready`, `NotReady`, with `,SchedulingDisabled` when cordoned.
    pub fn status(&self) -> String {
        let ready = if self.ready { "Ready" } else { "NotReady" };
        if self.unschedulable {
            format!("{ready},SchedulingDisabled")
        } else {
            ready.to_string()
        }
    }
}

/// Totals of one pool (or of everything).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolTotals {
    /// Pool name (`None`: nodes no pool claims, or the overall total).
    pub name: Option<String>,
    /// Nodes.
    pub nodes: usize,
    /// Pods.
    pub pods: usize,
    /// Requests.
    pub requests: Usage,
    /// Allocatable.
    pub allocatable: Usage,
    /// USD per hour of the priced nodes.
    pub price_per_hour: f64,
    /// Nodes without a known price (not in `pricePerHour`).
    pub unpriced_nodes: usize,
    /// Drifted nodes.
    pub drifted_nodes: usize,
}

/// `kind: NodeList`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeList {
    /// `kubectl-karpenter/v1`.
    pub api_version: &'static str,
    /// `NodeList`.
    pub kind: &'static str,
    /// Managed nodes, by pool then name.
    pub nodes: Vec<NodeEntry>,
    /// Totals per pool, by name.
    pub node_pools: Vec<PoolTotals>,
    /// Everything.
    pub total: PoolTotals,
    /// Where facts came from, what was estimated.
    pub notes: Vec<String>,
}

/// Runs `nodes`.
pub fn run(ctx: &mut Context<'_>, args: &NodesArgs) -> CommandResult {
    let selector = args
        .selector
        .as_deref()
        .map(parse_selector)
        .transpose()
        .map_err(|e| CommandError::input(format!("-l {e}")))?;
    let catalog = match &args.catalog {
        Some(path) => Catalog::from_file(path)?,
        None => Catalog::embedded()?,
    };
    let cluster = live::connect_cluster(ctx)?;
    let snap = snapshot::read(&cluster.client, Scope::PODS)?;
    let m = &snap.manifests;
    let wants_names = matches!(
        ctx.global.output,
        OutputFormat::Wide | OutputFormat::Json | OutputFormat::Yaml
    );
    let mut notes = Vec::new();

    // AWS, when wanted and reachable: instance facts (AMI, tool-launched nodes).
    let ids: Vec<String> = m
        .nodes
        .iter()
        .filter_map(|n| n.instance_id())
        .map(str::to_string)
        .collect();
    let mut instances: Vec<Instance> = Vec::new();
    let mut cloud = None;
    if args.no_aws {
        let msg = "--no-aws: instance facts from the cluster only".to_string();
        ctx.note(&msg);
        notes.push(msg);
    } else if !ids.is_empty() {
        let connected = live::connect_aws(ctx).and_then(|c| {
            describe(&c, &ids)
                .map(|found| (c, found))
                .map_err(live::aws_error)
        });
        match connected {
            Ok((c, found)) => {
                instances = found;
                cloud = Some(c);
            }
            Err(e) => {
                let msg = format!(
                    "AWS unavailable ({}): AMIs and instance facts from the cluster only",
                    e.message
                );
                ctx.warn(&msg);
                notes.push(msg);
            }
        }
    }

    let (mut managed, unmanaged) = drift::pair_nodes(&m.nodes, &m.node_claims, &instances);
    if unmanaged > 0 {
        ctx.note(&format!(
            "{unmanaged} nodes are not managed by Karpenter or this tool and are not shown"
        ));
    }
    for name in &args.nodepools {
        let known = m.node_pools.iter().any(|p| &p.name == name)
            || managed.iter().any(|n| n.pool_name() == Some(name.as_str()));
        if !known {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    select(&mut managed, &args.nodepools, selector.as_ref());

    // Drift from what the cluster holds (hashes, requirements, node-class status).
    let version = match live::kubernetes_version(ctx, &cluster) {
        Ok(v) => v,
        Err(_) => ASSUMED_KUBERNETES_VERSION,
    };
    let now = super::unix_now();
    let mut drift_snapshot = DriftSnapshot {
        nodes: managed,
        node_pools: m.node_pools.clone(),
        node_classes: m.node_classes.clone(),
        now,
        ..DriftSnapshot::default()
    };
    let no_ssm = BTreeMap::new();
    let mut image_names: BTreeMap<String, String> = BTreeMap::new();
    for class in &m.node_classes {
        let f = ami_facts::offline_class_facts(class, version, &no_ssm);
        drift_snapshot
            .class_facts
            .insert(class_key(&class.kind, &class.name), f);
        for a in &class.status.amis {
            if let Some(name) = &a.name {
                image_names.insert(a.id.clone(), name.clone());
            }
        }
    }
    let evaluation = drift::evaluate(&drift_snapshot);
    for note in &evaluation.notes {
        ctx.note(note);
    }

    // AMI names the classes do not know: one DescribeImages (wide and documents only).
    if let (true, Some(c)) = (wants_names, &cloud) {
        let missing: BTreeSet<String> = drift_snapshot
            .nodes
            .iter()
            .filter_map(|n| n.image_id())
            .filter(|id| !image_names.contains_key(*id))
            .map(str::to_string)
            .collect();
        let missing: Vec<String> = missing.into_iter().collect();
        for chunk in missing.chunks(FILTER_BATCH) {
            let query = ImageQuery {
                owners: vec![],
                filters: vec![Filter::new("image-id", chunk.iter().cloned())],
            };
            match c.describe_images(&query) {
                Ok(images) => {
                    for i in images {
                        if let Some(name) = i.name {
                            image_names.insert(i.id, name);
                        }
                    }
                }
                Err(e) => {
                    ctx.note(&format!("AMI names unavailable: {e}"));
                    break;
                }
            }
        }
    }

    let entries = entries(
        &drift_snapshot.nodes,
        &m.bound_pods,
        &evaluation,
        &catalog,
        &image_names,
        now,
    );
    for note in price_notes(&entries, &catalog) {
        ctx.note(&note);
        notes.push(note);
    }
    let doc = document(entries, notes);
    render(ctx, &doc)?;
    Ok(Exit::Ok)
}

/// Instance-id filter values per DescribeInstances call (EC2 accepts 200 values per filter).
const FILTER_BATCH: usize = 200;

/// DescribeInstances for the nodes' instance ids. By `instance-id` filter rather than by ids:
/// a node whose instance is already gone would make an id query fail as a whole
/// (`InvalidInstanceID.NotFound`), while a filter just leaves it out.
fn describe(cloud: &impl Compute, ids: &[String]) -> Result<Vec<Instance>, CloudError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(FILTER_BATCH) {
        out.extend(
            cloud.describe_instances(&InstanceQuery::Filters(vec![Filter::new(
                "instance-id",
                chunk.iter().cloned(),
            )]))?,
        );
    }
    Ok(out)
}

/// Keeps the nodes of the given pools (all when empty) that match the selector.
pub fn select(nodes: &mut Vec<ManagedNode>, pools: &[String], selector: Option<&LabelSelector>) {
    nodes.retain(|n| {
        (pools.is_empty() || n.pool_name().is_some_and(|p| pools.iter().any(|x| x == p)))
            && selector.is_none_or(|s| s.matches(&n.node.labels))
    });
}

/// Builds one entry per node (pure): pods and requests from the bound pods, drift from the
/// evaluation and the controller's markers, price from the catalog. Sorted by pool, then name.
pub fn entries(
    nodes: &[ManagedNode],
    bound_pods: &[Pod],
    evaluation: &Evaluation,
    catalog: &Catalog,
    image_names: &BTreeMap<String, String>,
    now: i64,
) -> Vec<NodeEntry> {
    let mut per_node: BTreeMap<&str, (crate::model::resources::Resources, usize)> = BTreeMap::new();
    for pod in bound_pods.iter().filter(|p| !p.is_terminal()) {
        if let Some(node) = pod.node_name.as_deref() {
            let e = per_node.entry(node).or_default();
            e.0.add_assign(&pod.requests);
            e.1 += 1;
        }
    }
    let verdicts: BTreeMap<&str, &drift::NodeDrift> = evaluation
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n))
        .collect();
    let mut out: Vec<NodeEntry> = nodes
        .iter()
        .map(|mn| {
            let (requests, pods) = per_node
                .get(mn.node.name.as_str())
                .map(|(r, n)| (Usage::from_resources(r), *n))
                .unwrap_or_default();
            let label = |key: &str| {
                mn.node
                    .labels
                    .get(key)
                    .or_else(|| mn.labels().get(key))
                    .cloned()
            };
            let zone = mn.zone().map(str::to_string);
            let capacity_type = label(labels::CAPACITY_TYPE).or_else(|| {
                mn.instance
                    .as_ref()
                    .map(|i| i.capacity_type.clone())
                    .filter(|c| !c.is_empty())
            });
            let instance_type = mn.instance_type().map(str::to_string);
            let price_per_hour = match (&instance_type, &zone, &capacity_type) {
                (Some(t), Some(z), Some(c)) => catalog.hourly_price(t, z, c),
                _ => None,
            };
            let region = label(labels::REGION).or_else(|| zone.as_deref().and_then(region_of));
            let image_id = mn.image_id().map(str::to_string);
            let created = mn.node.creation_timestamp.clone();
            let age_seconds = created
                .as_deref()
                .and_then(crate::model::time::parse_rfc3339)
                .map(|t| (now - t).max(0));
            NodeEntry {
                name: mn.node.name.clone(),
                node_pool: mn.pool_name().map(str::to_string),
                node_claim: mn.node_claim.as_ref().map(|c| c.name.clone()),
                instance_id: mn.instance_id(),
                instance_type,
                zone,
                region,
                capacity_type,
                image_name: image_id
                    .as_ref()
                    .and_then(|id| image_names.get(id).cloned()),
                image_id,
                created,
                age_seconds,
                ready: mn.node.ready,
                unschedulable: mn.node.unschedulable,
                launched_by: if mn.launched_by_tool() {
                    "kubectl-karpenter"
                } else {
                    "karpenter"
                },
                drift: drift_info(mn, verdicts.get(mn.node.name.as_str()).copied()),
                requests,
                allocatable: Usage::from_resources(&mn.node.allocatable),
                pods,
                price_per_hour,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (a.node_pool.is_none(), &a.node_pool, &a.name).cmp(&(
            b.node_pool.is_none(),
            &b.node_pool,
            &b.name,
        ))
    });
    out
}

/// `us-east-1a` → `us-east-1` (AWS zone names; local zones like `us-west-2-lax-1a` too).
fn region_of(zone: &str) -> Option<String> {
    let trimmed = zone.trim_end_matches(|c: char| c.is_ascii_lowercase());
    let region = trimmed.split('-').take(3).collect::<Vec<_>>().join("-");
    (region.split('-').count() == 3 && region.ends_with(|c: char| c.is_ascii_digit()))
        .then_some(region)
}

/// The evaluated verdict, overridden by the controller's own drift markers.
fn drift_info(mn: &ManagedNode, verdict: Option<&drift::NodeDrift>) -> DriftInfo {
    let evaluated = verdict.map(|v| DriftInfo {
        status: v.status.as_str().to_string(),
        reason: v.reason.map(|r| r.to_string()),
        source: "evaluated",
        detail: v.detail.clone(),
    });
    if let Some(v) = evaluated.as_ref().filter(|v| v.drifted()) {
        return v.clone();
    }
    let marker = if mn
        .node_claim
        .as_ref()
        .is_some_and(|c| c.conditions.get("Drifted").is_some_and(|s| s == "True"))
    {
        Some("nodeclaim-condition")
    } else if mn
        .node
        .annotations
        .get(labels::VOLUNTARY_DISRUPTION)
        .is_some_and(|v| v == "drifted")
    {
        Some("node-annotation")
    } else {
        None
    };
    match (marker, evaluated) {
        (Some(source), _) => DriftInfo {
            status: Status::Drifted.as_str().to_string(),
            reason: None,
            source,
            detail: "marked drifted by the Karpenter controller".into(),
        },
        (None, Some(v)) => v,
        (None, None) => DriftInfo {
            status: Status::Unknown.as_str().to_string(),
            reason: None,
            source: "evaluated",
            detail: String::new(),
        },
    }
}

/// Notes on estimated or missing prices.
fn price_notes(entries: &[NodeEntry], catalog: &Catalog) -> Vec<String> {
    let mut notes = Vec::new();
    if catalog.is_custom() {
        return notes;
    }
    let elsewhere: BTreeSet<&str> = entries
        .iter()
        .filter(|e| e.price_per_hour.is_some())
        .filter_map(|e| e.region.as_deref())
        .filter(|r| *r != crate::cloud::catalog::PRICE_REGION)
        .collect();
    if !elsewhere.is_empty() {
        notes.push(format!(
            "prices in {} are estimated with {} on-demand list prices",
            elsewhere.into_iter().collect::<Vec<_>>().join(", "),
            crate::cloud::catalog::PRICE_REGION
        ));
    }
    if entries
        .iter()
        .any(|e| e.price_per_hour.is_none() && e.capacity_type.as_deref() != Some(ON_DEMAND))
    {
        notes.push(
            "spot prices are not in the embedded catalog: pass --catalog FILE with spot offerings to price spot nodes"
                .to_string(),
        );
    }
    notes
}

/// Totals per pool (by name, pool-less nodes last) and overall (pure).
pub fn totals(entries: &[NodeEntry]) -> (Vec<PoolTotals>, PoolTotals) {
    let empty = |name: Option<String>| PoolTotals {
        name,
        nodes: 0,
        pods: 0,
        requests: Usage::default(),
        allocatable: Usage::default(),
        price_per_hour: 0.0,
        unpriced_nodes: 0,
        drifted_nodes: 0,
    };
    let add = |t: &mut PoolTotals, e: &NodeEntry| {
        t.nodes += 1;
        t.pods += e.pods;
        t.requests.add(&e.requests);
        t.allocatable.add(&e.allocatable);
        match e.price_per_hour {
            Some(p) => t.price_per_hour += p,
            None => t.unpriced_nodes += 1,
        }
        if e.drift.drifted() {
            t.drifted_nodes += 1;
        }
    };
    let mut pools: BTreeMap<(bool, Option<String>), PoolTotals> = BTreeMap::new();
    let mut total = empty(None);
    for e in entries {
        let key = (e.node_pool.is_none(), e.node_pool.clone());
        add(
            pools
                .entry(key)
                .or_insert_with(|| empty(e.node_pool.clone())),
            e,
        );
        add(&mut total, e);
    }
    let round = |t: &mut PoolTotals| t.price_per_hour = (t.price_per_hour * 1e6).round() / 1e6;
    let mut pools: Vec<PoolTotals> = pools.into_values().collect();
    pools.iter_mut().for_each(round);
    round(&mut total);
    (pools, total)
}

/// The document (pure).
pub fn document(nodes: Vec<NodeEntry>, notes: Vec<String>) -> NodeList {
    let (node_pools, total) = totals(&nodes);
    NodeList {
        api_version: API_VERSION,
        kind: "NodeList",
        nodes,
        node_pools,
        total,
        notes,
    }
}

/// `used / total` as a bar and a percentage: `▕███░░░░░▏ 38%` (unicode) or `[###-----]  38%`.
/// Over-commitment fills the bar and shows the real percentage; nothing allocatable is `-`.
pub fn bar(used: i64, total: i64, unicode: bool) -> String {
    if total <= 0 {
        return "-".into();
    }
    let fraction = used.max(0) as f64 / total as f64;
    let filled = ((fraction * BAR_CELLS as f64).round() as usize).min(BAR_CELLS);
    let percent = (fraction * 100.0).round() as i64;
    let (open, full, empty, close) = if unicode {
        ('▕', '█', '░', '▏')
    } else {
        ('[', '#', '-', ']')
    };
    let mut s = String::new();
    s.push(open);
    s.extend(std::iter::repeat_n(full, filled));
    s.extend(std::iter::repeat_n(empty, BAR_CELLS - filled));
    s.push(close);
    format!("{s} {percent:>3}%")
}

/// Millicores as cores: `4`, `1.25`, `0.1`.
pub fn cores(milli: i64) -> String {
    if milli % 1000 == 0 {
        return (milli / 1000).to_string();
    }
    let text = format!("{:.2}", milli as f64 / 1000.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Bytes as GiB with one decimal: `14.5Gi`.
pub fn gib(bytes: i64) -> String {
    format!("{:.1}Gi", bytes as f64 / (1u64 << 30) as f64)
}

/// Block characters only on a terminal that is not `TERM=dumb`.
fn unicode_bars() -> bool {
    std::io::stdout().is_terminal() && !std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

fn dash(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn price_cell(p: Option<f64>) -> String {
    p.map_or_else(|| "-".into(), price)
}

fn total_price(t: &PoolTotals) -> String {
    if t.unpriced_nodes == 0 {
        price(t.price_per_hour)
    } else if t.unpriced_nodes == t.nodes {
        "-".into()
    } else {
        format!(
            "{} ({} unpriced)",
            price(t.price_per_hour),
            t.unpriced_nodes
        )
    }
}

/// Writes a table whose marked cells are coloured after alignment (the table measures plain
/// text, so escapes never shift columns). `marked`: (row, column) of cells to show as bad.
fn write_coloured(
    out: &mut dyn Write,
    headers: &[&str],
    rows: Vec<Vec<String>>,
    marked: &BTreeSet<(usize, usize)>,
    style: Style,
    with_headers: bool,
) -> std::io::Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut table = Table::new(headers);
    for row in &rows {
        table.row(row.clone());
    }
    let mut buf = Vec::new();
    table.write(&mut buf, true)?;
    let text = String::from_utf8_lossy(&buf);
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            if with_headers {
                writeln!(out, "{line}")?;
            }
            continue;
        }
        let r = i - 1;
        let mut chars: Vec<char> = line.chars().collect();
        let mut pieces: Vec<(usize, usize, String)> = Vec::new();
        let mut start = 0;
        for (c, width) in widths.iter().enumerate() {
            if marked.contains(&(r, c)) {
                let len = rows[r][c].chars().count();
                if start + len <= chars.len() {
                    pieces.push((start, len, style.bad(&rows[r][c])));
                }
            }
            start += width + 3;
        }
        for (start, len, coloured) in pieces.into_iter().rev() {
            chars.splice(start..start + len, coloured.chars());
        }
        writeln!(out, "{}", chars.into_iter().collect::<String>())?;
    }
    Ok(())
}

fn render(ctx: &mut Context<'_>, doc: &NodeList) -> Result<(), CommandError> {
    let io = |e: std::io::Error| CommandError::remote(format!("writing output: {e}"));
    match ctx.global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            write_document(ctx.out, ctx.global.output, doc).map_err(io)
        }
        OutputFormat::Name => {
            for n in &doc.nodes {
                writeln!(ctx.out, "node/{}", n.name).map_err(io)?;
            }
            Ok(())
        }
        format => {
            if doc.nodes.is_empty() {
                if !ctx.global.quiet {
                    let _ = writeln!(ctx.err, "no managed nodes");
                }
                return Ok(());
            }
            let wide = format == OutputFormat::Wide;
            let style = Style::for_stdout(ctx.global.color);
            let unicode = unicode_bars();
            let headers_on = !ctx.global.no_headers;
            let mut headers = vec![
                "NODE", "NODEPOOL", "TYPE", "ZONE", "CAPACITY", "AMI", "AGE", "STATUS", "DRIFT",
                "CPU", "MEMORY", "PODS", "$/HOUR",
            ];
            if wide {
                headers.extend(["INSTANCE", "AMI-NAME", "NODECLAIM"]);
            }
            let mut rows = Vec::new();
            let mut marked = BTreeSet::new();
            for (r, n) in doc.nodes.iter().enumerate() {
                if !n.ready {
                    marked.insert((r, 7));
                }
                if n.drift.drifted() {
                    marked.insert((r, 8));
                }
                let mut row = vec![
                    n.name.clone(),
                    dash(&n.node_pool),
                    dash(&n.instance_type),
                    dash(&n.zone),
                    dash(&n.capacity_type),
                    dash(&n.image_id),
                    n.age_seconds.map_or_else(|| "-".into(), kubectl_age),
                    n.status(),
                    n.drift.cell(),
                    bar(n.requests.cpu, n.allocatable.cpu, unicode),
                    bar(n.requests.memory, n.allocatable.memory, unicode),
                    n.pods.to_string(),
                    price_cell(n.price_per_hour),
                ];
                if wide {
                    row.push(dash(&n.instance_id));
                    row.push(dash(&n.image_name));
                    row.push(dash(&n.node_claim));
                }
                rows.push(row);
            }
            write_coloured(ctx.out, &headers, rows, &marked, style, headers_on).map_err(io)?;
            if !headers_on {
                return Ok(());
            }
            writeln!(ctx.out).map_err(io)?;
            let totals_headers = [
                "NODEPOOL",
                "NODES",
                "DRIFTED",
                "PODS",
                "CPU",
                "CPU-REQ/ALLOC",
                "MEMORY",
                "MEM-REQ/ALLOC",
                "$/HOUR",
            ];
            let mut rows = Vec::new();
            let mut marked = BTreeSet::new();
            let all = doc.node_pools.iter().map(|t| (t, false));
            let last = std::iter::once((&doc.total, true));
            for (r, (t, is_total)) in all.chain(last).enumerate() {
                if t.drifted_nodes > 0 {
                    marked.insert((r, 2));
                }
                rows.push(vec![
                    if is_total {
                        "TOTAL".to_string()
                    } else {
                        dash(&t.name)
                    },
                    t.nodes.to_string(),
                    t.drifted_nodes.to_string(),
                    t.pods.to_string(),
                    bar(t.requests.cpu, t.allocatable.cpu, unicode),
                    format!("{}/{}", cores(t.requests.cpu), cores(t.allocatable.cpu)),
                    bar(t.requests.memory, t.allocatable.memory, unicode),
                    format!("{}/{}", gib(t.requests.memory), gib(t.allocatable.memory)),
                    total_price(t),
                ]);
            }
            write_coloured(ctx.out, &totals_headers, rows, &marked, style, true).map_err(io)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::NodeClaim;
    use crate::model::node::Node;
    use crate::model::resources::Resources;

    fn node(name: &str, pool: Option<&str>, cpu: &str, created: &str) -> ManagedNode {
        let mut labels = BTreeMap::new();
        if let Some(p) = pool {
            labels.insert(labels::NODEPOOL.to_string(), p.to_string());
        }
        labels.insert(labels::INSTANCE_TYPE.into(), "m5.large".into());
        labels.insert(labels::ZONE.into(), "us-east-1a".into());
        labels.insert(labels::REGION.into(), "us-east-1".into());
        labels.insert(labels::CAPACITY_TYPE.into(), ON_DEMAND.into());
        ManagedNode {
            node: Node {
                name: name.into(),
                labels,
                allocatable: Resources::from_pairs(&[
                    ("cpu", cpu),
                    ("memory", "8Gi"),
                    ("pods", "29"),
                ]),
                ready: true,
                creation_timestamp: Some(created.into()),
                ..Node::default()
            },
            ..ManagedNode::default()
        }
    }

    fn pod(name: &str, node: &str, cpu: &str, phase: &str) -> Pod {
        Pod {
            namespace: "default".into(),
            name: name.into(),
            node_name: Some(node.into()),
            phase: Some(phase.into()),
            requests: Resources::from_pairs(&[("cpu", cpu), ("memory", "1Gi"), ("pods", "1")]),
            ..Pod::default()
        }
    }

    #[test]
    fn bars_fill_round_and_cap() {
        assert_eq!(bar(500, 2000, false), "[##------]  25%");
        assert_eq!(bar(1240, 2000, true), "▕█████░░░▏  62%");
        assert_eq!(bar(0, 2000, false), "[--------]   0%");
        assert_eq!(bar(2000, 2000, false), "[########] 100%");
        assert_eq!(bar(3000, 2000, false), "[########] 150%", "over-committed");
        assert_eq!(bar(5, 0, false), "-", "nothing allocatable");
    }

    #[test]
    fn ages_read_like_kubectl() {
        for (secs, want) in [
            (-5, "0s"),
            (45, "45s"),
            (119, "119s"),
            (150, "2m30s"),
            (300, "5m"),
            (42 * 60, "42m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (5 * 3600 + 12 * 60, "5h12m"),
            (20 * 3600, "20h"),
            (2 * 86_400, "2d"),
            (3 * 86_400 + 4 * 3600, "3d4h"),
            (41 * 86_400, "41d"),
            (2 * 365 * 86_400 + 5 * 86_400, "2y5d"),
            (9 * 365 * 86_400, "9y"),
        ] {
            assert_eq!(kubectl_age(secs), want, "{secs}s");
        }
    }

    #[test]
    fn quantities_read_short() {
        assert_eq!(cores(4000), "4");
        assert_eq!(cores(1250), "1.25");
        assert_eq!(cores(100), "0.1");
        assert_eq!(gib(15 << 30), "15.0Gi");
        assert_eq!(gib(3 << 29), "1.5Gi");
    }

    #[test]
    fn zones_name_their_region() {
        assert_eq!(region_of("us-east-1a").as_deref(), Some("us-east-1"));
        assert_eq!(region_of("us-west-2-lax-1a").as_deref(), Some("us-west-2"));
        assert_eq!(region_of("z1"), None);
    }

    #[test]
    fn entries_count_pods_price_nodes_and_sort_by_pool_then_name() {
        let now = crate::model::time::parse_rfc3339("2024-01-02T00:00:00Z").unwrap();
        let mut spot = node("b-spot", Some("batch"), "1930m", "2024-01-01T21:00:00Z");
        spot.node
            .labels
            .insert(labels::CAPACITY_TYPE.into(), "spot".into());
        spot.node_claim = Some(NodeClaim {
            name: "batch-x1".into(),
            conditions: [("Drifted".to_string(), "True".to_string())].into(),
            ..NodeClaim::default()
        });
        let nodes = vec![
            node("z-2", Some("default"), "1930m", "2024-01-01T00:00:00Z"),
            spot,
            node("a-1", Some("default"), "1930m", "2024-01-01T23:55:00Z"),
        ];
        let pods = vec![
            pod("p1", "a-1", "500m", "Running"),
            pod("p2", "a-1", "700m", "Pending"),
            pod("done", "a-1", "1", "Succeeded"),
            pod("p3", "z-2", "250m", "Running"),
            pod("elsewhere", "unmanaged", "1", "Running"),
        ];
        let catalog = Catalog::embedded().unwrap();
        let e = entries(
            &nodes,
            &pods,
            &Evaluation::default(),
            &catalog,
            &BTreeMap::new(),
            now,
        );
        let names: Vec<&str> = e.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            ["b-spot", "a-1", "z-2"],
            "batch < default, then by name"
        );
        let a1 = &e[1];
        assert_eq!(a1.pods, 2, "the Succeeded pod does not count");
        assert_eq!(a1.requests.cpu, 1200);
        assert_eq!(a1.requests.memory, 2 << 30);
        assert_eq!(a1.requests.pods, 2);
        assert_eq!(a1.allocatable.cpu, 1930);
        assert_eq!(a1.allocatable.memory, 8 << 30);
        assert_eq!(a1.price_per_hour, Some(0.096));
        assert_eq!(a1.age_seconds, Some(300));
        assert_eq!(a1.drift.cell(), "-", "not evaluated, no marker");
        assert_eq!(e[0].price_per_hour, None, "no spot price offline");
        assert_eq!(e[0].drift.cell(), "Drifted");
        assert_eq!(e[0].drift.source, "nodeclaim-condition");
        assert_eq!(e[0].node_claim.as_deref(), Some("batch-x1"));

        let (pools, total) = totals(&e);
        assert_eq!(pools.len(), 2);
        assert_eq!(pools[1].name.as_deref(), Some("default"));
        assert_eq!(pools[1].nodes, 2);
        assert_eq!(pools[1].pods, 3);
        assert_eq!(pools[1].requests.cpu, 1450);
        assert_eq!(pools[1].allocatable.cpu, 3860);
        assert_eq!(pools[1].price_per_hour, 0.192);
        assert_eq!(pools[1].unpriced_nodes, 0);
        assert_eq!(pools[0].unpriced_nodes, 1);
        assert_eq!(pools[0].drifted_nodes, 1);
        assert_eq!(total.nodes, 3);
        assert_eq!(total.pods, 3);
        assert_eq!(total.price_per_hour, 0.192);
        assert_eq!(total.unpriced_nodes, 1);
        assert_eq!(total_price(&total), "0.1920 (1 unpriced)");
        assert_eq!(total_price(&pools[0]), "-");
        assert!(price_notes(&e, &catalog)
            .iter()
            .any(|n| n.contains("spot prices")));
    }

    #[test]
    fn selection_by_pool_and_selector() {
        let mut nodes = vec![
            node("a", Some("default"), "1", "2024-01-01T00:00:00Z"),
            node("b", Some("gpu"), "1", "2024-01-01T00:00:00Z"),
        ];
        nodes[1].node.labels.insert("team".into(), "ml".into());
        let mut all = nodes.clone();
        select(&mut all, &[], None);
        assert_eq!(all.len(), 2);
        let mut by_pool = nodes.clone();
        select(&mut by_pool, &["gpu".to_string()], None);
        assert_eq!(by_pool[0].node.name, "b");
        let sel = parse_selector("team!=ml").unwrap();
        select(&mut nodes, &[], Some(&sel));
        assert_eq!(nodes.len(), 1);
        assert_eq!(nodes[0].node.name, "a");
    }

    #[test]
    fn coloured_cells_keep_columns_aligned() {
        let rows = vec![
            vec!["a".to_string(), "Drifted".to_string(), "x".to_string()],
            vec!["bbbb".to_string(), "-".to_string(), "y".to_string()],
        ];
        let marked: BTreeSet<(usize, usize)> = [(0, 1)].into();
        let mut plain = Vec::new();
        write_coloured(
            &mut plain,
            &["N", "DRIFT", "Z"],
            rows.clone(),
            &marked,
            Style::plain(),
            true,
        )
        .unwrap();
        let plain = String::from_utf8(plain).unwrap();
        assert_eq!(
            plain,
            "N      DRIFT     Z\na      Drifted   x\nbbbb   -         y\n"
        );
        let always = Style::decide(crate::cli::ColorChoice::Always, false, false, false);
        let mut coloured = Vec::new();
        write_coloured(
            &mut coloured,
            &["N", "DRIFT", "Z"],
            rows,
            &marked,
            always,
            false,
        )
        .unwrap();
        let coloured = String::from_utf8(coloured).unwrap();
        let lines: Vec<&str> = coloured.lines().collect();
        assert_eq!(lines.len(), 2, "no header");
        assert!(lines[0].starts_with("a      \u{1b}["), "{coloured:?}");
        assert!(lines[0].ends_with("Drifted\u{1b}[39m   x"), "{coloured:?}");
        assert_eq!(lines[1], "bbbb   -         y");
    }
}
