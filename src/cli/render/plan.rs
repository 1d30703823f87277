//! `provision`'s output: the plan (table, `-o name`, the `ProvisioningPlan` document), what was
//! launched (table, the `ProvisioningResult` document), and the progress of a live run on
//! stderr (README: "Machine-readable outputs").

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::sync::Arc;

use serde::Serialize;

use super::{note, status, warn};
use crate::cli::output::{price, shown, write_document, Table, API_VERSION};
use crate::cli::progress::Progress;
use crate::cli::style::Style;
use crate::cli::{GlobalArgs, OutputFormat};
use crate::disruption::static_scale_down::Why;
use crate::model::labels;
use crate::model::requirements::{Operator, Requirement};
use crate::scheduling::{
    ExistingPlacement, InstanceTypeOption, JoinedBeforeWeights, Plan, PlannedNodeClaim,
};
use crate::usecases::provisioning::{Event, Launch, Launches, WaitReport, WaitStatus};
use crate::usecases::replace::NodeOutcome;
use crate::usecases::Sink;

/// The `ProvisioningPlan` document (README: "Machine-readable outputs"). It borrows the plan
/// and builds each NodeClaim's entry only as it is written: a plan of thousands of NodeClaims
/// lists hundreds of instance types for each, twice (`instanceTypes` and the `instance-type`
/// requirement), which would otherwise be copied in full before the first byte is out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    region: String,
    node_claims: NodeClaimDocs<'a>,
    existing_nodes: Vec<ExistingDoc<'a>>,
    unschedulable: Vec<UnschedulableDoc<'a>>,
    price_per_hour: f64,
    /// Static pools running more NodeClaims than their replicas (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    static_scale_down: Vec<ScaleDownDoc<'a>>,
    /// Nodes being deleted whose pods were planned again with the pending pods (absent when
    /// none): each `name` with its `pods[]`, which appear above where they were placed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    deleting_nodes: Vec<ExistingDoc<'a>>,
    /// CapacityBuffers' virtual pods, per buffer (absent when none): capacity kept, not pods
    /// to bind, so they are in none of the lists above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    capacity_buffers: Vec<BufferDoc<'a>>,
}

/// One CapacityBuffer's virtual pods in the plan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BufferDoc<'a> {
    name: &'a str,
    replicas: usize,
    /// The `Provisioning` condition's reason Karpenter writes after the pass.
    provisioning: &'static str,
    existing_nodes: Vec<ExistingDoc<'a>>,
    node_claims: Vec<ExistingDoc<'a>>,
    unschedulable: Vec<UnschedulableDoc<'a>>,
}

fn places(list: &[ExistingPlacement]) -> Vec<ExistingDoc<'_>> {
    list.iter()
        .map(|e| ExistingDoc {
            name: &e.node,
            pods: &e.pods,
        })
        .collect()
}

fn buffer_docs(plan: &Plan) -> Vec<BufferDoc<'_>> {
    plan.buffers
        .iter()
        .map(|b| BufferDoc {
            name: &b.buffer,
            replicas: b.replicas,
            provisioning: b.provisioning().as_str(),
            existing_nodes: places(&b.existing_nodes),
            node_claims: places(&b.node_claims),
            unschedulable: b.unschedulable.iter().map(unschedulable_doc).collect(),
        })
        .collect()
}

fn unschedulable_doc(u: &crate::scheduling::UnschedulablePod) -> UnschedulableDoc<'_> {
    UnschedulableDoc {
        pod: &u.pod,
        reason: u.reason.to_string(),
        reason_code: u.reason.code().as_str(),
    }
}

/// The buffer table: one row per CapacityBuffer, where its virtual pods went.
fn buffer_table(plan: &Plan) -> Table {
    let columns = [
        "CAPACITY-BUFFER",
        "REPLICAS",
        "ON-EXISTING",
        "ON-NEW",
        "UNSCHEDULABLE",
        "NODECLAIMS",
        "PROVISIONING",
    ];
    let mut t = Table::new(&columns);
    for b in &plan.buffers {
        let claims: Vec<&str> = b.node_claims.iter().map(|c| c.node.as_str()).collect();
        t.row(vec![
            b.buffer.clone(),
            b.replicas.to_string(),
            b.on_existing().to_string(),
            b.on_new().to_string(),
            b.unschedulable.len().to_string(),
            if claims.is_empty() {
                "-".into()
            } else {
                claims.join(",")
            },
            b.provisioning().as_str().to_string(),
        ]);
    }
    t
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScaleDownDoc<'a> {
    node_pool: &'a str,
    replicas: i64,
    running: usize,
    remove: Vec<RemovalDoc<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RemovalDoc<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_claim: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance: Option<&'a str>,
    /// `unresolved`, `empty`, `lowest-cost` or `do-not-disrupt` (`static_scale_down::Why`).
    reason: &'static str,
    pods: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    disruption_cost: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    do_not_disrupt_pod: Option<&'a str>,
    /// The reason in words.
    message: String,
}

/// A removal's reason code and, where it has them, its disruption cost and do-not-disrupt pod.
fn why_parts(why: &Why) -> (&'static str, Option<f64>, Option<&str>) {
    match why {
        Why::Unresolved => ("unresolved", None, None),
        Why::Empty { .. } => ("empty", None, None),
        Why::LowestCost { cost, .. } => ("lowest-cost", Some(*cost), None),
        Why::DoNotDisrupt { cost, pod, .. } => ("do-not-disrupt", Some(*cost), Some(pod)),
    }
}

/// Why a static pool's NodeClaim was chosen, in words.
pub fn why_text(why: &Why) -> String {
    match why {
        Why::Unresolved => "not launched (no provider id): goes first".into(),
        Why::Empty { daemonset_pods: 0 } => "empty".into(),
        Why::Empty { daemonset_pods } => format!("empty but {daemonset_pods} DaemonSet pod(s)"),
        Why::LowestCost { pods, cost } => {
            format!("lowest disruption cost left ({cost:.2}, {pods} pod(s))")
        }
        Why::DoNotDisrupt { pods, cost, pod } => format!(
            "every node left has a do-not-disrupt pod; lowest cost ({cost:.2}, {pods} pod(s)); its drain waits for {pod}"
        ),
    }
}

fn removal_pods(why: &Why) -> usize {
    match why {
        Why::Unresolved => 0,
        Why::Empty { daemonset_pods } => *daemonset_pods,
        Why::LowestCost { pods, .. } | Why::DoNotDisrupt { pods, .. } => *pods,
    }
}

fn scale_down_docs(plan: &Plan) -> Vec<ScaleDownDoc<'_>> {
    plan.static_scale_down
        .iter()
        .map(|d| ScaleDownDoc {
            node_pool: &d.node_pool,
            replicas: d.replicas,
            running: d.running,
            remove: d
                .removals
                .iter()
                .map(|r| {
                    let (reason, disruption_cost, do_not_disrupt_pod) = why_parts(&r.why);
                    RemovalDoc {
                        node: r.member.node.as_deref(),
                        node_claim: r.member.node_claim.as_deref(),
                        instance: r.member.instance.as_deref(),
                        reason,
                        pods: removal_pods(&r.why),
                        disruption_cost: disruption_cost.map(|c| (c * 1e6).round() / 1e6),
                        do_not_disrupt_pod,
                        message: why_text(&r.why),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The static scale-down table: one row per NodeClaim that goes.
fn scale_down_table(plan: &Plan) -> Table {
    let mut t = Table::new(&["STATIC-NODEPOOL", "REPLICAS", "REMOVE", "NODECLAIM", "WHY"]);
    for d in &plan.static_scale_down {
        for r in &d.removals {
            t.row(vec![
                d.node_pool.clone(),
                format!("{} -> {}", d.running, d.replicas),
                r.member.name().to_string(),
                r.member.node_claim.clone().unwrap_or_else(|| "-".into()),
                why_text(&r.why),
            ]);
        }
    }
    t
}

/// The NodeClaims, each rendered as it is written; after a live launch with the instance each
/// became (`launched`, matched by NodeClaim name).
struct NodeClaimDocs<'a> {
    claims: &'a [PlannedNodeClaim],
    launched: &'a [Launch],
}

impl Serialize for NodeClaimDocs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.claims.iter().map(|c| {
            let mut doc = NodeClaimDoc::of(c);
            if let Some(l) = self.launched.iter().find(|l| l.node_claim == c.name) {
                doc.instance_id = Some(&l.instance_id);
                doc.provider_id = Some(provider_id(l));
            }
            doc
        }))
    }
}

/// A launched instance's `spec.providerID`, as the AWS provider writes it (`aws:///<zone>/<id>`).
fn provider_id(l: &Launch) -> String {
    format!("aws:///{}/{}", l.zone, l.instance_id)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeClaimDoc<'a> {
    name: &'a str,
    node_pool: &'a str,
    /// docs/spec.md §5.6 names it: present, null when the pool names no class.
    node_class: Option<&'a str>,
    instance_type: &'a str,
    instance_types: Names<'a>,
    capacity_type: &'a str,
    /// For `capacityType: reserved`: the capacity reservation launched into.
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity_reservation_id: Option<&'a str>,
    zone: &'a str,
    zones: &'a [String],
    price_per_hour: f64,
    /// The scheduling round that creates it (docs/spec.md §5.1).
    round: usize,
    pods: &'a [String],
    requests: BTreeMap<String, String>,
    labels: &'a BTreeMap<String, String>,
    /// The template's annotations (docs/spec.md §5.6).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: &'a BTreeMap<String, String>,
    /// docs/spec.md §5.6 names it: present, `[]` when the NodeClaim has none.
    taints: Vec<TaintDoc<'a>>,
    requirements: Requirements<'a>,
    /// Pods that joined it though a higher-weight NodePool takes them too (docs/commands.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    joined_before_weights: Option<JoinedDoc<'a>>,
    /// After a live launch: the instance it became (docs/spec.md §5.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    instance_id: Option<&'a str>,
    /// After a live launch: `aws:///<zone>/<instance>` (docs/spec.md §5.6 spells it `providerID`).
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    provider_id: Option<String>,
}

/// [`JoinedBeforeWeights`] in the document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JoinedDoc<'a> {
    pods: &'a [String],
    weight: i32,
    higher_node_pool: &'a str,
    higher_weight: i32,
    why: &'static str,
}

/// Karpenter's order, said once for the text note and the document.
const JOINED_WHY: &str =
    "Karpenter fills the NodeClaims opened earlier in the round before opening new ones by weight";

/// The text note of a NodeClaim that pods joined before weights were considered (aws#6883).
fn joined_note(c: &PlannedNodeClaim, j: &JoinedBeforeWeights) -> String {
    let (more, them) = match j.pods.len() {
        1 => (String::new(), "it"),
        n => (format!(" and {} more pod(s)", n - 1), "them"),
    };
    format!(
        "note: {}{more} joined NodeClaim {} (NodePool {}, weight {}) though NodePool {} (weight {}) \
         takes {them} too: {JOINED_WHY}",
        j.pods[0], c.name, c.node_pool, j.weight, j.higher_node_pool, j.higher_weight
    )
}

impl<'a> NodeClaimDoc<'a> {
    fn of(c: &'a PlannedNodeClaim) -> Self {
        NodeClaimDoc {
            name: &c.name,
            node_pool: &c.node_pool,
            node_class: c.node_class.as_deref(),
            instance_type: &c.launch.instance_type,
            instance_types: Names(&c.instance_types),
            capacity_type: &c.launch.capacity_type,
            capacity_reservation_id: c.launch.reservation.as_deref(),
            zone: &c.launch.zone,
            zones: &c.zones,
            price_per_hour: c.launch.price,
            round: c.round,
            pods: &c.pods,
            requests: c.requests.to_strings(),
            labels: &c.labels,
            annotations: &c.annotations,
            taints: c
                .taints
                .iter()
                .map(|t| TaintDoc {
                    key: &t.key,
                    value: &t.value,
                    effect: t.effect.as_str(),
                })
                .collect(),
            requirements: Requirements(c),
            joined_before_weights: c.joined_before_weights.as_ref().map(|j| JoinedDoc {
                pods: &j.pods,
                weight: j.weight,
                higher_node_pool: &j.higher_node_pool,
                higher_weight: j.higher_weight,
                why: JOINED_WHY,
            }),
            instance_id: None,
            provider_id: None,
        }
    }
}

/// The names of a NodeClaim's instance types.
struct Names<'a>(&'a [InstanceTypeOption]);

impl Serialize for Names<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|o| &*o.name))
    }
}

#[derive(Serialize)]
struct TaintDoc<'a> {
    key: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    value: &'a str,
    effect: &'static str,
}

/// A NodeClaim's requirements in key order, the instance-type one (held apart, see
/// `PlannedNodeClaim::instance_type_requirement`) in its place among them.
struct Requirements<'a>(&'a PlannedNodeClaim);

impl Serialize for Requirements<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let claim = self.0;
        let types = &claim.instance_type_requirement;
        let instance_type = RequirementDoc {
            key: labels::INSTANCE_TYPE,
            operator: if types.names.is_empty() {
                Operator::DoesNotExist
            } else {
                Operator::In
            }
            .as_str(),
            values: Values::Names(&types.names),
            min_values: types.min_values,
        };
        let mut instance_type = Some(instance_type);
        let mut docs = Vec::with_capacity(claim.requirements.len() + 1);
        for r in claim.requirements.iter() {
            if r.key.as_str() > labels::INSTANCE_TYPE {
                docs.extend(instance_type.take());
            }
            docs.extend(RequirementDoc::of(r));
        }
        docs.extend(instance_type);
        s.collect_seq(docs)
    }
}

/// One requirement as the manifest writes it (`Requirement::to_selector`), borrowed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequirementDoc<'a> {
    key: &'a str,
    operator: &'static str,
    #[serde(skip_serializing_if = "Values::is_empty")]
    values: Values<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_values: Option<u32>,
}

impl<'a> RequirementDoc<'a> {
    /// One document, or two for a closed range (`Gte` and `Lte`, as Karpenter's
    /// `NodeSelectorRequirements`); bounds are written `Gt`/`Lt` (exclusive), the spelling every
    /// NodeClaim CRD accepts (`Gte`/`Lte` only exist in recent ones).
    fn of(r: &'a Requirement) -> impl Iterator<Item = Self> {
        let doc = |operator: Operator, values| RequirementDoc {
            key: &r.key,
            operator: operator.as_str(),
            values,
            min_values: r.min_values,
        };
        let lower = r
            .gte()
            .map(|g| doc(Operator::Gt, Values::Number(i128::from(g) - 1)));
        let upper = r
            .lte()
            .map(|l| doc(Operator::Lt, Values::Number(i128::from(l) + 1)));
        let plain = (lower.is_none() && upper.is_none())
            .then(|| doc(r.operator(), Values::Set(r.values())));
        lower.into_iter().chain(upper).chain(plain)
    }
}

/// A requirement's values.
enum Values<'a> {
    Set(&'a BTreeSet<String>),
    Names(&'a [Arc<str>]),
    Number(i128),
}

impl Values<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Values::Set(set) => set.is_empty(),
            Values::Names(names) => names.is_empty(),
            Values::Number(_) => false,
        }
    }
}

impl Serialize for Values<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Values::Set(set) => s.collect_seq(set.iter()),
            Values::Names(names) => s.collect_seq(names.iter().map(|n| &**n)),
            Values::Number(n) => s.collect_seq([n.to_string()]),
        }
    }
}

#[derive(Serialize)]
struct ExistingDoc<'a> {
    name: &'a str,
    pods: &'a [String],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnschedulableDoc<'a> {
    pod: &'a str,
    reason: String,
    /// Stable, for machines (`scheduling::ReasonCode`).
    reason_code: &'static str,
}

/// Builds the machine-readable plan.
pub fn plan_document<'a>(plan: &'a Plan, region: &str) -> PlanDoc<'a> {
    launched_plan_document(plan, region, &[])
}

/// The `ProvisioningPlan` document after a live launch: each NodeClaim launched carries its
/// `instanceId` and `providerID` (docs/spec.md §5.6).
fn launched_plan_document<'a>(plan: &'a Plan, region: &str, launched: &'a [Launch]) -> PlanDoc<'a> {
    PlanDoc {
        api_version: API_VERSION,
        kind: "ProvisioningPlan",
        region: region.to_string(),
        node_claims: NodeClaimDocs {
            claims: &plan.node_claims,
            launched,
        },
        existing_nodes: places(&plan.existing_nodes),
        unschedulable: plan.unschedulable.iter().map(unschedulable_doc).collect(),
        price_per_hour: (plan.price_per_hour() * 1e6).round() / 1e6,
        static_scale_down: scale_down_docs(plan),
        deleting_nodes: places(&plan.from_deleting_nodes),
        capacity_buffers: buffer_docs(plan),
    }
}

/// Prints the plan in the chosen format.
pub fn plan(out: &mut dyn Write, global: &GlobalArgs, plan: &Plan, region: &str) -> io::Result<()> {
    let headers = !global.no_headers;
    let style = Style::for_stdout(global.color);
    match global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            write_document(out, global.output, &plan_document(plan, region))?;
        }
        OutputFormat::Name => {
            for c in &plan.node_claims {
                writeln!(out, "nodeclaim/{}", shown(&c.name))?;
            }
        }
        format => {
            let wide = format == OutputFormat::Wide;
            // Later rounds exist only when NodePool limits or held capacity reservations left
            // pods to them: the column is shown then.
            let rounds = plan.node_claims.iter().any(|c| c.round > 1);
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
            if rounds {
                columns.push("ROUND");
            }
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
                    match &c.launch.reservation {
                        Some(id) => format!("{} ({id})", c.launch.capacity_type),
                        None => c.launch.capacity_type.clone(),
                    },
                    c.launch.zone.clone(),
                    c.pods.len().to_string(),
                    price(c.launch.price),
                ];
                if rounds {
                    row.push(c.round.to_string());
                }
                if wide {
                    let req = c.requests.to_strings();
                    row.push(req.get("cpu").cloned().unwrap_or_default());
                    row.push(req.get("memory").cloned().unwrap_or_default());
                    row.push(c.zones.join(","));
                }
                table.row(row);
            }
            if !plan.node_claims.is_empty() {
                table.write(out, headers)?;
            }
            for c in &plan.node_claims {
                if let Some(j) = &c.joined_before_weights {
                    writeln!(out, "{}", joined_note(c, j))?;
                }
            }
            if !plan.existing_nodes.is_empty() {
                if !plan.node_claims.is_empty() {
                    writeln!(out)?;
                }
                node_pods_table(
                    &["EXISTING-NODE", "PODS", "PLACED"],
                    &plan.existing_nodes,
                    wide,
                )
                .write(out, headers)?;
            }
            if !plan.from_deleting_nodes.is_empty() {
                if !plan.node_claims.is_empty() || !plan.existing_nodes.is_empty() {
                    writeln!(out)?;
                }
                let columns = ["DELETING-NODE", "PODS", "PLANNED-AGAIN"];
                node_pods_table(&columns, &plan.from_deleting_nodes, wide).write(out, headers)?;
            }
            if !plan.unschedulable.is_empty() {
                if !plan.node_claims.is_empty()
                    || !plan.existing_nodes.is_empty()
                    || !plan.from_deleting_nodes.is_empty()
                {
                    writeln!(out)?;
                }
                let mut t = Table::new(&["UNSCHEDULABLE-POD", "REASON"]);
                for u in &plan.unschedulable {
                    t.row(vec![u.pod.clone(), u.reason.to_string()]);
                    t.mark(1);
                }
                t.write_styled(out, headers, style)?;
            }
            let removals: usize = plan
                .static_scale_down
                .iter()
                .map(|d| d.removals.len())
                .sum();
            if !plan.buffers.is_empty() {
                let any = !plan.node_claims.is_empty()
                    || !plan.existing_nodes.is_empty()
                    || !plan.from_deleting_nodes.is_empty()
                    || !plan.unschedulable.is_empty();
                if any {
                    writeln!(out)?;
                }
                buffer_table(plan).write(out, headers)?;
            }
            let before = !plan.node_claims.is_empty()
                || !plan.existing_nodes.is_empty()
                || !plan.unschedulable.is_empty()
                || !plan.buffers.is_empty();
            if removals > 0 {
                if before {
                    writeln!(out)?;
                }
                scale_down_table(plan).write(out, headers)?;
            }
            if !before && removals == 0 {
                writeln!(out, "{NOTHING_PENDING}")?;
            } else if !before {
                if headers {
                    writeln!(
                        out,
                        "\n{removals} NodeClaim(s) to remove from static NodePools; no pending pods"
                    )?;
                }
            } else if headers {
                let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum::<usize>()
                    + plan
                        .existing_nodes
                        .iter()
                        .map(|e| e.pods.len())
                        .sum::<usize>();
                writeln!(
                    out,
                    "\n{} new NodeClaim(s), ${}/hour; {} pod(s) placed, {} ({region}){}",
                    plan.node_claims.len(),
                    price(plan.price_per_hour()),
                    placed,
                    if plan.unschedulable.is_empty() {
                        style.good("0 unschedulable")
                    } else {
                        style.bad(&format!("{} unschedulable", plan.unschedulable.len()))
                    },
                    if removals > 0 {
                        format!("; {removals} NodeClaim(s) to remove from static NodePools")
                    } else {
                        String::new()
                    }
                )?;
            }
        }
    }
    Ok(())
}

/// Nodes with their pods, one row each: the first three pods (all with `-o wide`).
fn node_pods_table(columns: &[&str], rows: &[ExistingPlacement], wide: bool) -> Table {
    let mut t = Table::new(columns);
    for e in rows {
        let shown = if wide || e.pods.len() <= 3 {
            e.pods.join(",")
        } else {
            format!("{},… (+{})", e.pods[..3].join(","), e.pods.len() - 3)
        };
        t.row(vec![e.node.clone(), e.pods.len().to_string(), shown]);
    }
    t
}

/// The question asked before a live run changes anything: what it launches and removes.
pub fn question(plan: &Plan, cluster: &str) -> String {
    let removals: usize = plan
        .static_scale_down
        .iter()
        .map(|d| d.removals.len())
        .sum();
    let pods: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum();
    // CapacityBuffer virtual pods placed on the new NodeClaims: capacity kept, said apart.
    let pods = match plan.buffer_pods_on_new() {
        0 => format!("{pods}"),
        k => format!("{pods} pod(s) and {k} CapacityBuffer virtual"),
    };
    match (plan.node_claims.len(), removals) {
        (n, 0) => format!("Launch {n} EC2 instance(s) for {pods} pod(s) in cluster {cluster}?"),
        (0, r) => format!(
            "Remove {r} NodeClaim(s) of static NodePools (drained, instances terminated) in cluster {cluster}?"
        ),
        (n, r) => format!(
            "Launch {n} EC2 instance(s) for {pods} pod(s) and remove {r} NodeClaim(s) of static NodePools in cluster {cluster}?"
        ),
    }
}

const NOTHING_PENDING: &str = "No pending pods: nothing to launch.";

/// A live run found no pending pod: an empty plan document, or a line.
pub fn nothing_pending(out: &mut dyn Write, global: &GlobalArgs, region: &str) -> io::Result<()> {
    if matches!(global.output, OutputFormat::Json | OutputFormat::Yaml) {
        write_document(out, global.output, &plan_document(&Plan::default(), region))
    } else {
        writeln!(out, "{NOTHING_PENDING}")
    }
}

/// The `ProvisioningResult` document: the plan and what was done about it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    plan: PlanDoc<'a>,
    launched: Vec<LaunchDoc<'a>>,
    failed: Vec<FailureDoc<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait: Option<WaitDoc<'a>>,
    /// Static pools' surplus NodeClaims, as their removal went (drift replace's node outcomes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scaled_down: Vec<super::replace::NodeDoc>,
}

/// One launched (or adopted) NodeClaim.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LaunchDoc<'a> {
    node_claim: &'a str,
    node_pool: &'a str,
    instance_id: &'a str,
    #[serde(rename = "providerID")]
    provider_id: String,
    instance_type: &'a str,
    zone: &'a str,
    capacity_type: &'a str,
    /// For `capacityType: reserved`: the capacity reservation it launched into.
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity_reservation_id: Option<&'a str>,
    /// It existed already (a retry) and was adopted.
    adopted: bool,
    pods: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pool_errors: Vec<String>,
}

impl<'a> From<&'a Launch> for LaunchDoc<'a> {
    fn from(l: &'a Launch) -> Self {
        LaunchDoc {
            node_claim: &l.node_claim,
            node_pool: &l.node_pool,
            instance_id: &l.instance_id,
            provider_id: provider_id(l),
            instance_type: &l.instance_type,
            zone: &l.zone,
            capacity_type: &l.capacity_type,
            capacity_reservation_id: l.capacity_reservation_id.as_deref(),
            adopted: l.adopted,
            pods: &l.pods,
            pool_errors: l
                .pool_errors
                .iter()
                .map(|e| format!("{} {}/{}: {}", e.code, e.instance_type, e.zone, e.message))
                .collect(),
        }
    }
}

/// A NodeClaim that could not be launched.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FailureDoc<'a> {
    node_claim: &'a str,
    node_pool: &'a str,
    error: String,
}

/// What `--wait` saw.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WaitDoc<'a> {
    nodes: &'a BTreeMap<String, String>,
    pods_bound: usize,
    pods: usize,
    seconds: f64,
}

/// Prints the `ProvisioningResult` document.
pub fn result(
    out: &mut dyn Write,
    format: OutputFormat,
    plan: &Plan,
    region: &str,
    launches: &Launches,
    wait: Option<&WaitReport>,
    scaled_down: &[NodeOutcome],
) -> io::Result<()> {
    let doc = ResultDoc {
        api_version: API_VERSION,
        kind: "ProvisioningResult",
        plan: launched_plan_document(plan, region, &launches.launched),
        launched: launches.launched.iter().map(LaunchDoc::from).collect(),
        failed: launches
            .failed
            .iter()
            .map(|f| FailureDoc {
                node_claim: &f.node_claim,
                node_pool: &f.node_pool,
                error: f.message(),
            })
            .collect(),
        wait: wait.map(|w| WaitDoc {
            nodes: &w.nodes,
            pods_bound: w.pods_bound,
            pods: w.pods,
            seconds: w.seconds,
        }),
        scaled_down: scaled_down.iter().map(Into::into).collect(),
    };
    write_document(out, format, &doc)
}

/// The launch table (after a blank line), when anything was launched or failed.
pub fn launches(out: &mut dyn Write, headers: bool, launches: &Launches) -> io::Result<()> {
    if launches.launched.is_empty() && launches.failed.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let mut table = Table::new(&[
        "NODECLAIM",
        "INSTANCE",
        "TYPE",
        "ZONE",
        "CAPACITY",
        "PODS",
        "STATUS",
    ]);
    for l in &launches.launched {
        table.row(vec![
            l.node_claim.clone(),
            l.instance_id.clone(),
            l.instance_type.clone(),
            l.zone.clone(),
            match &l.capacity_reservation_id {
                Some(id) => format!("{} ({id})", l.capacity_type),
                None => l.capacity_type.clone(),
            },
            l.pods.len().to_string(),
            if l.adopted { "adopted" } else { "launched" }.to_string(),
        ]);
    }
    for f in &launches.failed {
        table.row(vec![
            f.node_claim.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            format!("failed: {}", f.message()),
        ]);
    }
    table.write(out, headers)
}

/// `1/2 node(s) Ready, 3/5 pod(s) bound`.
pub fn wait_status(s: &WaitStatus) -> String {
    format!(
        "{}/{} node(s) Ready, {}/{} pod(s) bound",
        s.ready, s.nodes, s.bound, s.pods
    )
}

/// A `--wait` that timed out: how long, what was ready, and the launches that never registered.
pub fn timed_out(
    after: std::time::Duration,
    status: &WaitStatus,
    unregistered: &[(String, String)],
) -> String {
    let waited = format!(
        "timed out after {}s waiting: {}",
        after.as_secs(),
        wait_status(status)
    );
    if unregistered.is_empty() {
        waited
    } else {
        format!("{waited}; {}", not_registered(unregistered, after))
    }
}

/// The launches whose Node never registered, named with what Karpenter would do: its liveness
/// deletes a NodeClaim not registered within 15 minutes and terminates its instance (`core
/// v1.14.1: pkg/controllers/nodeclaim/lifecycle/liveness.go`, `registrationTTL`). This tool
/// leaves them running (docs/karpenter.md §6.8): a kubelet late to join (a slow user data, an
/// image pull) still serves the pods planned onto it, and the next plan counts it in flight.
fn not_registered(unregistered: &[(String, String)], after: std::time::Duration) -> String {
    let named: Vec<String> = unregistered
        .iter()
        .map(|(claim, instance)| format!("NodeClaim {claim} (instance {instance})"))
        .collect();
    let after = match after.as_secs() {
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s}s"),
    };
    format!(
        "{} not registered after {after}: Karpenter would delete {} and terminate the instance once 15 min pass unregistered (its registration TTL); this tool leaves {} running (terminate with `aws ec2 terminate-instances --instance-ids {}` if it never joins)",
        named.join(", "),
        if unregistered.len() == 1 { "it" } else { "each" },
        if unregistered.len() == 1 { "it" } else { "them" },
        unregistered
            .iter()
            .map(|(_, i)| i.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Prints a live run's events on stderr as they come: status lines (hidden by `-q`), notes
/// (`-v`), warnings, and the wait's progress (a bar on a terminal, lines elsewhere).
pub struct EventPrinter<'a> {
    global: &'a GlobalArgs,
    err: &'a mut dyn Write,
    progress: Option<Progress>,
}

impl<'a> EventPrinter<'a> {
    /// A printer to `err`.
    pub fn new(global: &'a GlobalArgs, err: &'a mut dyn Write) -> Self {
        EventPrinter {
            global,
            err,
            progress: None,
        }
    }
}

impl Sink<Event> for EventPrinter<'_> {
    fn emit(&mut self, event: Event) {
        let (global, err) = (self.global, &mut *self.err);
        match event {
            Event::Warning(text) => warn(global, err, &text),
            Event::Launched(l) => status(
                global,
                err,
                &format!(
                    "{} NodeClaim {}: {} {} ({}, {}) for {} pod(s)",
                    if l.adopted { "adopted" } else { "launched" },
                    l.node_claim,
                    l.instance_id,
                    l.instance_type,
                    l.zone,
                    l.capacity_type,
                    l.pods.len()
                ),
            ),
            Event::LaunchFailed(f) => warn(
                global,
                err,
                &format!("NodeClaim {}: {}", f.node_claim, f.message()),
            ),
            Event::WaitStarted => {
                self.progress = Some(Progress::new(global, "waiting: nodes to register"));
            }
            Event::Waiting(s) => {
                if let Some(progress) = &mut self.progress {
                    progress.set_length((s.nodes + s.pods) as u64);
                    progress.set_position((s.ready + s.bound) as u64);
                    progress.set_message(err, &format!("waiting: {}", wait_status(&s)));
                }
            }
            Event::WaitDone(s) => {
                if let Some(mut progress) = self.progress.take() {
                    progress.finish_with_message(err, &format!("waiting: {}", wait_status(&s)));
                }
            }
            Event::Batch {
                pods,
                launched,
                failed,
                unschedulable,
            } => status(
                global,
                err,
                &format!(
                    "{}: {launched} launched, {failed} failed, {unschedulable} unschedulable",
                    match pods {
                        0 => "no pending pod (buffers, static pools)".to_string(),
                        n => format!("batch of {n} pod(s)"),
                    }
                ),
            ),
            Event::StaysPending { pod, reason } => {
                note(global, err, &format!("{pod} stays pending: {reason}"))
            }
            Event::NodeEmpty { node, ttl } => note(
                global,
                err,
                &format!(
                    "node {node} is empty; removed after {}s if it stays so",
                    ttl.as_secs()
                ),
            ),
            Event::NodeHeld { node, hold } => {
                note(global, err, &format!("empty node {node} stays: {hold}"))
            }
            Event::NodeKept { node, pod } => note(
                global,
                err,
                &format!("node {node} is not empty after all ({pod} arrived): kept, taint removed"),
            ),
            Event::ScaleDown(e) => super::replace::ReplacePrinter::new(global, err).emit(*e),
            Event::NodeRemoved {
                node,
                instance,
                empty_for,
            } => status(
                global,
                err,
                &format!("removed node {node} ({instance}): empty for {empty_for}s"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed range is two requirements (`core: pkg/scheduling/requirements_test.go` "should
    /// return both Gte and Lte requirements when both bounds exist"); we spell them Gt/Lt.
    #[test]
    fn a_closed_range_is_written_as_two_requirements() {
        let doc = |r: &Requirement| {
            let docs: Vec<RequirementDoc> = RequirementDoc::of(r).collect();
            serde_json::to_string(&docs).unwrap()
        };
        let cpu = Requirement::new("cpu", Operator::Gt, ["2"]).intersection(&Requirement::new(
            "cpu",
            Operator::Lte,
            ["8"],
        ));
        assert_eq!(
            doc(&cpu),
            r#"[{"key":"cpu","operator":"Gt","values":["2"]},{"key":"cpu","operator":"Lt","values":["9"]}]"#
        );
        let zone = Requirement::new(labels::ZONE, Operator::In, ["a"]);
        assert_eq!(
            doc(&zone),
            r#"[{"key":"topology.kubernetes.io/zone","operator":"In","values":["a"]}]"#
        );
        let top = Requirement::new("n", Operator::Lte, [i64::MAX.to_string()]);
        assert_eq!(
            doc(&top),
            format!(
                r#"[{{"key":"n","operator":"Lt","values":["{}"]}}]"#,
                i128::from(i64::MAX) + 1
            )
        );
    }

    /// `core v1.14.1: nodeclaim/lifecycle/liveness_test.go` "should delete the nodeClaim if it
    /// is not registered within the registration TTL": this tool does not delete; the timeout
    /// names the NodeClaim, its instance, how long, and what Karpenter would do.
    #[test]
    fn a_launch_that_never_registered_is_named_with_what_karpenter_would_do() {
        let one = not_registered(
            &[("default-abcde".into(), "i-0123".into())],
            std::time::Duration::from_secs(600),
        );
        assert_eq!(
            one,
            "NodeClaim default-abcde (instance i-0123) not registered after 10 min: Karpenter would delete it and terminate the instance once 15 min pass unregistered (its registration TTL); this tool leaves it running (terminate with `aws ec2 terminate-instances --instance-ids i-0123` if it never joins)"
        );
        let two = not_registered(
            &[("a".into(), "i-1".into()), ("b".into(), "i-2".into())],
            std::time::Duration::from_secs(90),
        );
        assert!(two.starts_with("NodeClaim a (instance i-1), NodeClaim b (instance i-2) not registered after 90s: Karpenter would delete each"));
        assert!(two.contains("--instance-ids i-1 i-2"));
    }
}
