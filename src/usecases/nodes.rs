//! `nodes`: the managed nodes on one screen (think eks-node-viewer) — pool, instance type, zone,
//! capacity type, AMI, age, readiness, drift, requests against allocatable, pod count and price
//! per hour, then totals per pool and overall.
//!
//! Where each fact comes from (and the choices made):
//!
//! - **Managed nodes** are those [`drift::pair_nodes`] keeps: labelled `karpenter.sh/nodepool`
//!   or `karpenter.sh/provisioner-name` (or whose NodeClaim/instance names a pool), plus, when
//!   AWS is reachable, nodes whose EC2 instance carries this tool's `launched-by` tag.
//! - **AWS is optional** ([`Ec2`]). One DescribeInstances per 200 nodes (and, when names are
//!   wanted, one DescribeImages for AMI names) fills in instance facts. If AWS cannot be
//!   reached, one warning is given and the cluster's own facts are used.
//! - **AMI**: the instance's `ImageId`, else the NodeClaim's `status.imageID`, else the node
//!   annotation `kubectl-karpenter.io/image-id`. AMI names come from the node classes'
//!   `status.amis`, else DescribeImages.
//! - **Prices**: the catalog's — the one the decision uses ([`decision_catalog`]): with the
//!   decision and EC2 connected, `consolidate`'s (the live catalog and the capacity reservations
//!   the classes select); else `--catalog` or the embedded snapshot. On-demand nodes get the
//!   on-demand list price (the live catalog's region's, from the Pricing API; else us-east-1's,
//!   the estimate used in every region); spot nodes get a
//!   price only from a catalog with spot offerings.
//! - **Drift** is cheap: [`drift::evaluate`] over what the cluster already holds — NodePool and
//!   node-class hash annotations, requirements, and the AMIs/subnets/security groups the node
//!   classes' `status` lists (what Karpenter itself compares against) — without resolving AMIs
//!   live. A NodeClaim condition `Drifted=True` or the pre-v0.32 node annotation
//!   `karpenter.sh/voluntary-disruption=drifted` also marks a node drifted.
//! - **Requests** are the sum of the effective requests of the non-terminal pods bound to the
//!   node; **pods** counts them.
//! - **Consolidation** ([`decisions`]): what `consolidate` would decide for the node — the same
//!   engine over the whole cluster (PDBs and the controller's release and `FEATURE_GATES`
//!   included), priced from the same catalog as the `$/HOUR` column, read the way `consolidate`
//!   reads it ([`decision_catalog`]: capacity reservations included when EC2 is connected;
//!   without AWS, the embedded snapshot or `--catalog`). A node without a NodeClaim (one this
//!   tool launched) is no candidate of Karpenter's: no decision.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::drift_check::snapshot_of;
use super::Sink;
use crate::api::Manifests;
use crate::cloud::ami::KubeVersion;
use crate::cloud::launch::{describe_by_filter, FILTER_VALUES};
use crate::cloud::types::{Compute, Filter, ImageQuery, Instance};
use crate::cloud::Catalog;
use crate::disruption::consolidation::{self, Method, NodeDecision, NodeReport, Reason};
use crate::drift::{self, class_key, DriftReason, Evaluation, ManagedNode, Status};
use crate::error::CommandError;
use crate::model::instance_type::ON_DEMAND;
use crate::model::labels;
use crate::model::labels::VOLUNTARY_DISRUPTION;
use crate::model::node::{gone_nodes, GoneInstance};
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::model::selector::LabelSelector;

/// What the view shows.
#[derive(Debug, Clone)]
pub struct Request {
    /// Only nodes of these pools (empty: all).
    pub nodepools: Vec<String>,
    /// Only nodes matching this selector.
    pub selector: Option<LabelSelector>,
    /// Look up AMI names the node classes do not know (one DescribeImages).
    pub image_names: bool,
    /// The Kubernetes version node-class AMI aliases are read for.
    pub kubernetes_version: KubeVersion,
    /// Seconds since the epoch (ages).
    pub now: i64,
}

/// The Kubernetes version node-class AMI aliases are read for: `flag` (`--kubernetes-version`,
/// offline too), else the cluster's `/version`; unreadable, the assumed version with
/// [`Note::VersionUnavailable`] — said, not swallowed: the DRIFT column's aliases follow it.
pub fn kubernetes_version(
    flag: Option<KubeVersion>,
    cluster: Option<&dyn crate::k8s::Cluster>,
) -> (KubeVersion, Option<Note>) {
    match (flag, cluster) {
        (Some(v), _) => (v, None),
        (None, Some(c)) => match super::ami::server_version(c) {
            Ok(v) => (v, None),
            Err(e) => (
                super::ami::ASSUMED_KUBERNETES_VERSION,
                Some(Note::VersionUnavailable(e.message)),
            ),
        },
        (None, None) => (super::ami::ASSUMED_KUBERNETES_VERSION, None),
    }
}

/// What EC2 can tell, as the caller found it.
pub enum Ec2<'a, C> {
    /// `--no-aws`: not asked.
    Off,
    /// `-f`: the world is the manifests; not asked, every instance taken as running.
    Manifests,
    /// No node names an instance: nothing to ask.
    NothingToAsk,
    /// Not reachable (why): the cluster's facts are used.
    Unreachable(String),
    /// Connected.
    Connected(&'a C),
}

/// Something worth telling about the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `--no-aws`: instance facts come from the cluster only.
    NoAws,
    /// `-f`: instance facts come from the manifests only (AWS is not asked; every instance is
    /// taken as running).
    Manifests,
    /// AWS could not be reached (why): instance facts come from the cluster only.
    AwsUnavailable(String),
    /// Nodes neither Karpenter nor this tool manages are not shown.
    Unmanaged(usize),
    /// From the drift evaluation (stale node-class status, …).
    Drift(String),
    /// The API server's `/version` could not be read (why): AMI aliases resolve for the
    /// assumed version.
    VersionUnavailable(String),
    /// DescribeImages failed (why): AMI names are missing.
    AmiNamesUnavailable(String),
    /// Prices in these regions are us-east-1's list prices.
    EstimatedPrices(Vec<String>),
    /// Spot nodes have no price (the embedded catalog has none).
    NoSpotPrices,
    /// The capacity reservations could not be read (why): the decision is made without them.
    ReservationsUnavailable(String),
    /// From reading the capacity reservations (a class whose terms found none, …).
    Reservations(String),
    /// A warning about the input that building the decision's input found (a pod's
    /// `karpenter.sh/do-not-evict` Karpenter v1 no longer reads, …): what `consolidate` says of
    /// the same cluster, told once, not in the document.
    Input(String),
    /// The consolidation decision is left out: the cluster has more nodes than the limit.
    DecisionSkipped {
        /// Nodes in the cluster.
        nodes: usize,
        /// [`DECISION_MAX_NODES`].
        limit: usize,
    },
}

impl Note {
    /// Whether the note goes into the document (the others are told only).
    fn documented(&self) -> bool {
        matches!(
            self,
            Note::NoAws
                | Note::Manifests
                | Note::AwsUnavailable(_)
                | Note::VersionUnavailable(_)
                | Note::EstimatedPrices(_)
                | Note::NoSpotPrices
                | Note::ReservationsUnavailable(_)
                | Note::DecisionSkipped { .. }
        )
    }
}

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
    fn from_resources(r: &Resources) -> Usage {
        Usage {
            cpu: r.cpu,
            memory: r.memory / 1000,
            pods: r.pods / 1000,
        }
    }

    /// Saturating, like [`crate::model::resources::Resources::add_assign`]: a quantity as large as the API server takes
    /// (held as `i64::MAX`) on two nodes stays "more than anything" in the totals.
    fn add(&mut self, other: &Usage) {
        self.cpu = self.cpu.saturating_add(other.cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.pods = self.pods.saturating_add(other.pods);
    }
}

/// Who decided a node's drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftSource {
    /// This tool's evaluation of the cluster's facts.
    Evaluated,
    /// The NodeClaim's `Drifted=True` condition.
    NodeclaimCondition,
    /// The pre-v0.32 node annotation `karpenter.sh/voluntary-disruption=drifted`.
    NodeAnnotation,
}

/// A node's drift, as far as the cluster tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftInfo {
    /// `Drifted`, `OK` or `Unknown`.
    pub status: Status,
    /// Karpenter's reason, when evaluated.
    pub reason: Option<DriftReason>,
    /// Who decided.
    pub source: DriftSource,
    /// Explanation (what changed, or what is missing).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl DriftInfo {
    /// Whether the node drifted.
    pub fn drifted(&self) -> bool {
        self.status == Status::Drifted
    }
}

/// Who launched a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchedBy {
    /// The Karpenter controller.
    Karpenter,
    /// This tool.
    KubectlKarpenter,
}

/// One managed node.
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
    /// Who launched it.
    pub launched_by: LaunchedBy,
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
    /// What consolidation would decide (`None`: not evaluated, or no NodeClaim).
    pub consolidation: Option<Consolidation>,
}

/// A node's consolidation decision, as `consolidate` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Consolidation {
    /// `delete`, `replace` or `none`.
    pub decision: NodeDecision,
    /// The method, unless `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// The replacement's cheapest type, for `replace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_type: Option<String>,
    /// The pass of its action (1: Karpenter would start it now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// Why not, for `none`: its words, naming the object and the numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// The why-not's stable kebab-case kind (`pdb`, `budget`, …), for machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<&'static str>,
}

impl From<NodeReport> for Consolidation {
    fn from(n: NodeReport) -> Self {
        Consolidation {
            decision: n.decision,
            method: n.method,
            replacement_type: n.replacement_type,
            pass: n.pass,
            reason_code: n.reason.as_ref().map(Reason::kind),
            reason: n.reason,
        }
    }
}

/// The consolidation decision of every managed node with a NodeClaim, by name: the engine over
/// the whole cluster (`manifests` with pods and PDBs; its bound pods are used up) at
/// `config.now`, types sized and priced from `catalog` in `region`, the running `controller`'s
/// release and gates when there is one (`config`'s gates, from `--feature-gates`, win); the nodes whose instance is `gone` left out as `consolidate`
/// leaves them.
pub fn decisions(
    mut manifests: Manifests,
    catalog: &Catalog,
    region: &str,
    controller: Option<&crate::usecases::consolidate::Controller>,
    config: &crate::usecases::consolidate::Config,
    gone: &BTreeMap<String, GoneInstance>,
    told: &mut impl Sink<Note>,
) -> Result<BTreeMap<String, Consolidation>, CommandError> {
    use crate::usecases::consolidate::{build_input, leave_out_gone};
    use crate::usecases::provisioning::input::CatalogSizing;
    let mut sizing = CatalogSizing::new(catalog, region);
    // What `manifests.warnings` holds already was told by the command; the lines the input
    // adds (as `consolidate` prints them) are told here, each once.
    let said = manifests.warnings.len();
    let mut input = build_input(&mut manifests, &mut sizing, config, controller)?;
    let (before, added) = manifests.warnings.split_at(said);
    for (k, line) in added.iter().enumerate() {
        if !before.contains(line) && !added[..k].contains(line) {
            told.emit(Note::Input(line.clone()));
        }
    }
    leave_out_gone(&mut input, gone);
    Ok(consolidation::evaluate(input)
        .nodes
        .into_iter()
        .map(|n| (n.name.clone(), Consolidation::from(n)))
        .collect())
}

/// The catalog of the CONSOLIDATION column and the `$/HOUR` beside it: `consolidate`'s
/// ([`consolidate::decision_catalog`](crate::usecases::consolidate::decision_catalog)) — `base`
/// (the live instance-type catalog, `--catalog`, or the embedded snapshot) with the capacity
/// reservations the node classes select, read through EC2 when it is connected, so a reserved
/// offering changes the column as it changes `consolidate`'s decision. AWS is optional here: a
/// failed read is a note, and the decision is made without reservations (`consolidate` fails
/// instead); with the `ReservedCapacity` `gate` off none is read. Every note is `told`; those
/// for the document are returned, for the view.
pub fn decision_catalog<C: Compute>(
    ec2: &Ec2<'_, C>,
    base: Catalog,
    classes: &[crate::model::nodepool::NodeClass],
    now: i64,
    gate: Option<bool>,
    told: &mut impl Sink<Note>,
) -> (Catalog, Vec<Note>) {
    let cloud = match ec2 {
        Ec2::Connected(cloud) => Some(*cloud),
        _ => None,
    };
    let fallback = base.clone();
    match crate::usecases::consolidate::decision_catalog(cloud, base, classes, now, gate) {
        Ok((catalog, warnings)) => {
            for w in warnings {
                told.emit(Note::Reservations(w));
            }
            (catalog, Vec::new())
        }
        Err(e) => {
            let note = Note::ReservationsUnavailable(e.message);
            told.emit(note.clone());
            (fallback, vec![note])
        }
    }
}

/// Above this many nodes (managed or not) `nodes` leaves the decision out: the engine evaluates
/// every controller pass over the whole cluster, and its cost grows faster than the nodes
/// (B7, BENCHMARKS.md: 0.23 s at 1,000 nodes, 1.5 s at 2,500, 5.3 s at 5,000 — the last too
/// slow for a listing). `consolidate` still computes it.
pub const DECISION_MAX_NODES: usize = 2500;

/// Gives each node of `view` its consolidation decision ([`decisions`]), or — over
/// [`DECISION_MAX_NODES`] nodes — none, with a note `told` as well.
#[allow(clippy::too_many_arguments)]
pub fn with_decisions(
    view: &mut NodeView,
    manifests: Manifests,
    catalog: &Catalog,
    region: &str,
    controller: Option<&crate::usecases::consolidate::Controller>,
    config: &crate::usecases::consolidate::Config,
    told: &mut impl Sink<Note>,
) -> Result<(), CommandError> {
    if manifests.nodes.len() > DECISION_MAX_NODES {
        let note = Note::DecisionSkipped {
            nodes: manifests.nodes.len(),
            limit: DECISION_MAX_NODES,
        };
        view.notes.push(note.clone());
        told.emit(note);
        return Ok(());
    }
    let gone = view.gone.clone();
    attach(
        view,
        decisions(manifests, catalog, region, controller, config, &gone, told)?,
    );
    Ok(())
}

/// Gives each node of `view` its decision from `decisions`.
pub fn attach(view: &mut NodeView, mut decisions: BTreeMap<String, Consolidation>) {
    for n in &mut view.nodes {
        n.consolidation = decisions.remove(&n.name);
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

/// The view.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    /// Managed nodes, by pool then name.
    pub nodes: Vec<NodeEntry>,
    /// Totals per pool, by name (pool-less nodes last).
    pub node_pools: Vec<PoolTotals>,
    /// Everything.
    pub total: PoolTotals,
    /// Where facts came from, what was estimated.
    pub notes: Vec<Note>,
    /// The managed nodes whose instance EC2 said is gone or going (`model::node::gone_nodes`;
    /// empty without EC2): no capacity and no candidate for the decision, as in `consolidate`.
    pub gone: BTreeMap<String, GoneInstance>,
}

/// The instance ids the nodes name (what EC2 would be asked about).
pub fn instance_ids(manifests: &Manifests) -> Vec<String> {
    manifests
        .nodes
        .iter()
        .filter_map(|n| n.instance_id())
        .map(str::to_string)
        .collect()
}

/// Assembles the view of a live cluster's `manifests` (with pods), with what EC2 tells;
/// `told` hears every note as it arises.
pub fn view<C: Compute>(
    manifests: &Manifests,
    ec2: Ec2<'_, C>,
    catalog: &Catalog,
    request: &Request,
    told: &mut impl Sink<Note>,
) -> Result<NodeView, CommandError> {
    let m = manifests;
    let mut notes = Vec::new();
    let mut note = |n: Note| {
        if n.documented() {
            notes.push(n.clone());
        }
        told.emit(n);
    };
    let mut instances: Vec<Instance> = Vec::new();
    let mut cloud = None;
    let mut gone = BTreeMap::new();
    match ec2 {
        Ec2::Off => note(Note::NoAws),
        Ec2::Manifests => note(Note::Manifests),
        Ec2::NothingToAsk => {}
        Ec2::Unreachable(why) => note(Note::AwsUnavailable(why)),
        Ec2::Connected(c) => match describe_by_filter(c, &instance_ids(m)) {
            Ok(found) => {
                gone = gone_nodes(&m.nodes, &found, &c.region());
                instances = found;
                cloud = Some(c);
            }
            Err(e) => note(Note::AwsUnavailable(e.to_string())),
        },
    }

    let (mut managed, unmanaged) = drift::pair_nodes(&m.nodes, &m.node_claims, &instances);
    if unmanaged > 0 {
        note(Note::Unmanaged(unmanaged));
    }
    for name in &request.nodepools {
        let known = m.node_pools.iter().any(|p| &p.name == name)
            || managed.iter().any(|n| n.pool_name() == Some(name.as_str()));
        if !known {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    select(&mut managed, &request.nodepools, request.selector.as_ref());

    // Drift from what the cluster holds (hashes, requirements, node-class status).
    let mut drift_snapshot = snapshot_of(m, managed, request.now);
    let no_ssm = BTreeMap::new();
    let mut image_names: BTreeMap<String, String> = BTreeMap::new();
    for class in &m.node_classes {
        let f = crate::cloud::ami::facts::offline_class_facts(
            class,
            request.kubernetes_version,
            &no_ssm,
        );
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
    for n in &evaluation.notes {
        note(Note::Drift(n.clone()));
    }

    // AMI names the classes do not know: one DescribeImages.
    if let (true, Some(c)) = (request.image_names, cloud) {
        let missing: BTreeSet<String> = drift_snapshot
            .nodes
            .iter()
            .filter_map(|n| n.image_id())
            .filter(|id| !image_names.contains_key(*id))
            .map(str::to_string)
            .collect();
        let missing: Vec<String> = missing.into_iter().collect();
        for chunk in missing.chunks(FILTER_VALUES) {
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
                    note(Note::AmiNamesUnavailable(e.to_string()));
                    break;
                }
            }
        }
    }

    let nodes = entries(
        &drift_snapshot.nodes,
        &m.bound_pods,
        &evaluation,
        catalog,
        &image_names,
        request.now,
    );
    for n in price_notes(&nodes, catalog) {
        note(n);
    }
    let (node_pools, total) = totals(&nodes);
    Ok(NodeView {
        nodes,
        node_pools,
        total,
        notes,
        gone,
    })
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
    let mut per_node: BTreeMap<&str, (Resources, usize)> = BTreeMap::new();
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
                    LaunchedBy::KubectlKarpenter
                } else {
                    LaunchedBy::Karpenter
                },
                drift: drift_info(mn, verdicts.get(mn.node.name.as_str()).copied()),
                requests,
                allocatable: Usage::from_resources(&mn.node.allocatable),
                pods,
                price_per_hour,
                consolidation: None,
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
        status: v.status,
        reason: v.reason,
        source: DriftSource::Evaluated,
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
        Some(DriftSource::NodeclaimCondition)
    } else if mn
        .node
        .annotations
        .get(VOLUNTARY_DISRUPTION)
        .is_some_and(|v| v == "drifted")
    {
        Some(DriftSource::NodeAnnotation)
    } else {
        None
    };
    match (marker, evaluated) {
        (Some(source), _) => DriftInfo {
            status: Status::Drifted,
            reason: None,
            source,
            detail: "marked drifted by the Karpenter controller".into(),
        },
        (None, Some(v)) => v,
        (None, None) => DriftInfo {
            status: Status::Unknown,
            reason: None,
            source: DriftSource::Evaluated,
            detail: String::new(),
        },
    }
}

/// Notes on estimated or missing prices.
fn price_notes(entries: &[NodeEntry], catalog: &Catalog) -> Vec<Note> {
    let mut notes = Vec::new();
    if catalog.is_custom() {
        return notes;
    }
    let elsewhere: BTreeSet<&str> = entries
        .iter()
        .filter(|e| e.price_per_hour.is_some())
        .filter_map(|e| e.region.as_deref())
        .filter(|r| {
            *r != crate::cloud::catalog::PRICE_REGION
                && Some(*r) != catalog.aws_snapshot().map(|s| s.on_demand_price_region())
        })
        .collect();
    if !elsewhere.is_empty() {
        notes.push(Note::EstimatedPrices(
            elsewhere.into_iter().map(str::to_string).collect(),
        ));
    }
    if entries
        .iter()
        .any(|e| e.price_per_hour.is_none() && e.capacity_type.as_deref() != Some(ON_DEMAND))
    {
        notes.push(Note::NoSpotPrices);
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

#[cfg(test)]
mod tests;
