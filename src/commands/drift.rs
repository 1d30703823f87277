//! `kubectl karpenter drift check`: which managed nodes drifted, and why (SPEC §4).
//!
//! Three steps with plain values between them, so a live gatherer (cluster + EC2) plugs in
//! without touching evaluation or rendering:
//! 1. gather a [`DriftSnapshot`] — [`gather_offline`] from `-f` manifests (the live one comes
//!    with the cluster adapter);
//! 2. [`finish`]: keep the selected nodes, [`drift::evaluate`], and
//! 3. render the table or the `DriftReport` document; exit 1 when anything drifted.
//!
//! Offline facts: a node's current AMI is its instance's (live), else its NodeClaim's
//! `status.imageID`, else the node annotation `kubectl-karpenter.io/image-id`; subnet and
//! security groups come from `kubectl-karpenter.io/subnet-id` / `security-group-ids`. A class's
//! AMIs are computed from `--ssm-param` values and selector ids where that is possible, else
//! taken from its `status.amis` (and a note says when the two disagree).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::ami::{VersionSource, ASSUMED_KUBERNETES_VERSION};
use super::Context;
use crate::api::Manifests;
use crate::cli::output::{kubectl_age, write_document, Table, API_VERSION};
use crate::cli::{DriftCheckArgs, OutputFormat};
use crate::cloud::ami::{self, facts as ami_facts, KubeVersion};
use crate::cloud::{Catalog, InstanceTypeContext};
use crate::drift::{self, class_key, facts, DriftSnapshot, Evaluation, Fact, NodeDrift, Summary};
use crate::error::{CommandError, CommandResult, Exit};
use crate::model::labels;
use crate::model::nodepool::ApiGeneration;
use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};

/// The plain configuration `drift check` runs on (no clap types past this point).
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Only these nodes (empty: all managed nodes).
    pub nodes: Vec<String>,
    /// Only nodes of these pools.
    pub nodepools: Vec<String>,
    /// Only nodes matching this selector.
    pub selector: Option<LabelSelector>,
    /// Manifests (offline mode).
    pub filenames: Vec<String>,
    /// Offline SSM values, name → value.
    pub ssm_params: BTreeMap<String, String>,
    /// Kubernetes version and where it came from.
    pub kubernetes_version: Option<(KubeVersion, VersionSource)>,
    /// `--catalog FILE`.
    pub catalog: Option<String>,
    /// `--mark`.
    pub mark: bool,
}

impl Config {
    /// Validates flags.
    pub fn from_args(ctx: &Context<'_>, args: &DriftCheckArgs) -> Result<Config, CommandError> {
        let mut ssm_params = BTreeMap::new();
        for p in &args.ssm_params {
            let (name, value) = p
                .split_once('=')
                .filter(|(n, v)| !n.is_empty() && !v.is_empty())
                .ok_or_else(|| {
                    CommandError::input(format!(
                        "--ssm-param {p:?}: expected NAME=VALUE (e.g. /aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id=ami-0123)"
                    ))
                })?;
            ssm_params.insert(name.to_string(), value.to_string());
        }
        let selector = args
            .selector
            .as_deref()
            .map(parse_selector)
            .transpose()
            .map_err(|e| CommandError::input(format!("-l {e}")))?;
        let kubernetes_version = match &ctx.global.kubernetes_version {
            Some(v) => Some((
                KubeVersion::parse(v)
                    .map_err(|e| CommandError::input(format!("--kubernetes-version: {e}")))?,
                VersionSource::Flag,
            )),
            None => None,
        };
        Ok(Config {
            nodes: args.nodes.clone(),
            nodepools: args.nodepools.clone(),
            selector,
            filenames: args.filenames.clone(),
            ssm_params,
            kubernetes_version,
            catalog: args.catalog.clone(),
            mark: args.mark,
        })
    }
}

/// Parses a kubectl label selector: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`,
/// `!k`, comma-separated (commas inside parentheses belong to the set).
pub fn parse_selector(text: &str) -> Result<LabelSelector, String> {
    let mut terms = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    let mut sel = LabelSelector::default();
    let bad = |t: &str, why: &str| format!("{text:?}: {t:?} {why}");
    for raw in terms {
        let t = raw.trim();
        if t.is_empty() {
            return Err(bad(t, "is empty"));
        }
        let expr = |key: &str, op, values: Vec<String>| SelectorExpr {
            key: key.trim().to_string(),
            op,
            values,
        };
        if let Some((k, v)) = t.split_once("!=") {
            sel.match_expressions
                .push(expr(k, SelectorOp::NotIn, vec![v.trim().to_string()]));
        } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            if k.trim().is_empty() {
                return Err(bad(t, "has no key"));
            }
            sel.match_labels
                .insert(k.trim().to_string(), v.trim().to_string());
        } else if let Some(k) = t.strip_prefix('!') {
            sel.match_expressions
                .push(expr(k, SelectorOp::DoesNotExist, vec![]));
        } else if let Some(open) = t.find('(') {
            let head: Vec<&str> = t[..open].split_whitespace().collect();
            let close = t.rfind(')').ok_or_else(|| bad(t, "misses ')'"))?;
            let values: Vec<String> = t[open + 1..close]
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            let op = match head.as_slice() {
                [_, "in"] => SelectorOp::In,
                [_, "notin"] => SelectorOp::NotIn,
                _ => return Err(bad(t, "is not `key in (...)` or `key notin (...)`")),
            };
            sel.match_expressions.push(expr(head[0], op, values));
        } else if t.split_whitespace().count() == 1 {
            sel.match_expressions
                .push(expr(t, SelectorOp::Exists, vec![]));
        } else {
            return Err(bad(t, "is not a selector term"));
        }
    }
    Ok(sel)
}

/// Runs `drift check`.
pub fn check(ctx: &mut Context<'_>, args: &DriftCheckArgs) -> CommandResult {
    let config = Config::from_args(ctx, args)?;
    if config.filenames.is_empty() {
        return super::drift_live::check(ctx, &config);
    }
    if config.mark {
        return Err(CommandError::input(
            "--mark writes to the cluster and cannot be used with -f (offline)",
        ));
    }
    let manifests = crate::api::load_paths(&config.filenames, &mut std::io::stdin().lock())?;
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    let catalog = match &config.catalog {
        Some(path) => Some(Catalog::from_file(path)?),
        None => Catalog::embedded().ok(),
    };
    let now = super::unix_now();
    let (snapshot, version) = gather_offline(ctx, &config, &manifests, catalog.as_ref(), now)?;
    finish(ctx, &config, snapshot, Mode::Offline, version)
}

/// Where the facts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Manifests.
    Offline,
    /// Cluster + EC2.
    Live,
}

/// The Kubernetes version for aliases: the flag, else the one every `--ssm-param` path names,
/// else the assumed default.
fn kubernetes_version(config: &Config) -> (KubeVersion, VersionSource) {
    if let Some(v) = config.kubernetes_version {
        return v;
    }
    let mut seen = BTreeSet::new();
    for name in config.ssm_params.keys() {
        let segments: Vec<&str> = name.split('/').collect();
        for (i, s) in segments.iter().enumerate() {
            let candidate = match *s {
                "optimized-ami" => segments.get(i + 1).copied(),
                _ => s
                    .strip_prefix("aws-k8s-")
                    .map(|v| v.trim_end_matches("-nvidia")),
            };
            if let Some(v) = candidate.and_then(|c| KubeVersion::parse(c).ok()) {
                seen.insert(v);
            }
        }
    }
    match seen.len() {
        1 => (
            seen.into_iter()
                .next()
                .unwrap_or(ASSUMED_KUBERNETES_VERSION),
            VersionSource::Flag,
        ),
        _ => (ASSUMED_KUBERNETES_VERSION, VersionSource::Assumed),
    }
}

/// Builds the snapshot from manifests: nodes paired with their NodeClaims, each class's facts
/// computed offline, instance types per pool from the catalog, image names from every status.
pub fn gather_offline(
    ctx: &mut Context<'_>,
    config: &Config,
    manifests: &Manifests,
    catalog: Option<&Catalog>,
    now: i64,
) -> Result<(DriftSnapshot, Option<KubeVersion>), CommandError> {
    if manifests.nodes.is_empty() {
        return Err(CommandError::input(
            "no Node in the input: drift check -f needs the nodes to check (e.g. kubectl get nodes -o yaml)",
        ));
    }
    let (version, source) = kubernetes_version(config);
    let (nodes, unmanaged) = drift::pair_nodes(&manifests.nodes, &manifests.node_claims, &[]);
    let mut snapshot = DriftSnapshot {
        nodes,
        node_pools: manifests.node_pools.clone(),
        node_classes: manifests.node_classes.clone(),
        now,
        ..DriftSnapshot::default()
    };
    if unmanaged > 0 {
        ctx.note(&format!(
            "{unmanaged} nodes are not managed by Karpenter or this tool and were skipped"
        ));
    }
    let mut uses_version = false;
    for class in &manifests.node_classes {
        let f = ami_facts::offline_class_facts(class, version, &config.ssm_params);
        if ami::plan(class, version).is_ok_and(|p| p.uses_kubernetes_version)
            && !matches!(f.images, Fact::Known(ref i) if i.iter().all(|x| x.source.ends_with("status.amis")))
        {
            uses_version = true;
        }
        snapshot.notes.extend(facts::stale_status_notes(class, &f));
        for a in &class.status.amis {
            if let Some(name) = &a.name {
                snapshot.image_names.insert(a.id.clone(), name.clone());
            }
        }
        snapshot
            .class_facts
            .insert(class_key(&class.kind, &class.name), f);
    }
    if uses_version && source == VersionSource::Assumed {
        ctx.warn(&format!(
            "no --kubernetes-version: assuming Kubernetes {version} for AMI aliases and amiFamily defaults"
        ));
    }
    for pool in &manifests.node_pools {
        if let Some(r) = &pool.node_class_ref {
            let found = manifests
                .node_classes
                .iter()
                .any(|c| c.name == r.name && c.kind == r.kind);
            if !found && r.kind != "Provisioner" {
                ctx.warn(&format!(
                    "{} {}: {} {} is not in the input; its nodes can only be checked for NodePool and requirement drift",
                    pool.kind(),
                    pool.name,
                    r.kind,
                    r.name
                ));
            }
        }
    }
    if let Some(catalog) = catalog {
        snapshot.instance_types =
            offline_instance_types(ctx, config, manifests, catalog, &snapshot);
    }
    Ok((snapshot, uses_version.then_some(version)))
}

/// `GetInstanceTypes(nodePool)` offline: every type the catalog offers for the pool's class in
/// the pool's region (`--region`, else its nodes' region label). Pools whose region is unknown
/// are not checked.
fn offline_instance_types(
    ctx: &mut Context<'_>,
    _config: &Config,
    manifests: &Manifests,
    catalog: &Catalog,
    snapshot: &DriftSnapshot,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let mut cache: BTreeMap<(String, String), Option<BTreeSet<String>>> = BTreeMap::new();
    for pool in &manifests.node_pools {
        if pool.generation != Some(ApiGeneration::V1) {
            continue;
        }
        let region = ctx.global.region.clone().or_else(|| {
            snapshot
                .nodes
                .iter()
                .filter(|n| n.pool_name() == Some(pool.name.as_str()))
                .find_map(|n| n.node.labels.get(labels::REGION).cloned())
        });
        let region = match region {
            Some(r) => r,
            None if catalog.is_custom() => String::new(),
            None => continue,
        };
        let family = pool
            .node_class_ref
            .as_ref()
            .and_then(|r| manifests.node_classes.iter().find(|c| c.name == r.name))
            .and_then(|c| c.ami_family.clone())
            .unwrap_or_else(|| "AL2023".into());
        let names = cache
            .entry((region.clone(), family.clone()))
            .or_insert_with(|| {
                if !catalog.is_custom() && !catalog.regions().contains(&region.as_str()) {
                    return None;
                }
                catalog
                    .instance_types(&InstanceTypeContext::new(&region, &family))
                    .ok()
                    .map(|types| types.into_iter().map(|t| t.name).collect())
            })
            .clone();
        match names {
            Some(n) => {
                out.insert(pool.name.clone(), n);
            }
            None => ctx.note(&format!(
                "NodePool {}: the catalog has no data for region {region}: InstanceTypeNotFound not checked",
                pool.name
            )),
        }
    }
    out
}

/// Keeps the selected nodes; unknown names and pools are input errors.
pub fn select_nodes(config: &Config, snapshot: &mut DriftSnapshot) -> Result<(), CommandError> {
    for name in &config.nodepools {
        if !snapshot.node_pools.iter().any(|p| &p.name == name) {
            return Err(CommandError::input(format!(
                "--nodepool {name}: no such NodePool or Provisioner"
            )));
        }
    }
    for name in &config.nodes {
        if !snapshot.nodes.iter().any(|n| &n.node.name == name) {
            return Err(CommandError::input(format!(
                "node {name:?} is not a managed node of the input (labelled karpenter.sh/nodepool or karpenter.sh/provisioner-name, or launched by this tool)"
            )));
        }
    }
    snapshot.nodes.retain(|n| {
        (config.nodes.is_empty() || config.nodes.contains(&n.node.name))
            && (config.nodepools.is_empty()
                || n.pool_name()
                    .is_some_and(|p| config.nodepools.iter().any(|x| x == p)))
            && config
                .selector
                .as_ref()
                .is_none_or(|s| s.matches(&n.node.labels))
    });
    Ok(())
}

/// Selects, evaluates and renders a snapshot; exit 1 when anything drifted. The live gatherer
/// calls this with its own snapshot.
pub fn finish(
    ctx: &mut Context<'_>,
    config: &Config,
    mut snapshot: DriftSnapshot,
    mode: Mode,
    version: Option<KubeVersion>,
) -> CommandResult {
    select_nodes(config, &mut snapshot)?;
    let evaluation = drift::evaluate(&snapshot);
    for note in &evaluation.notes {
        ctx.warn(note);
    }
    let doc = report(&evaluation, mode, version);
    render(ctx, &doc)?;
    Ok(if evaluation.any_drifted() {
        Exit::Finding
    } else {
        Exit::Ok
    })
}

/// `kind: DriftReport` (SPEC §5.6; schema in the README).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftReport {
    /// `kubectl-karpenter/v1`.
    pub api_version: &'static str,
    /// `DriftReport`.
    pub kind: &'static str,
    /// `offline` or `live`.
    pub mode: Mode,
    /// The Kubernetes version AMI aliases were resolved for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Counts.
    pub summary: Summary,
    /// One entry per node, sorted by name.
    pub nodes: Vec<NodeDrift>,
    /// Notes (stale node-class status, …).
    pub notes: Vec<String>,
}

/// Builds the document (pure).
pub fn report(evaluation: &Evaluation, mode: Mode, version: Option<KubeVersion>) -> DriftReport {
    DriftReport {
        api_version: API_VERSION,
        kind: "DriftReport",
        mode,
        kubernetes_version: version.map(|v| v.to_string()),
        summary: evaluation.summary,
        nodes: evaluation.nodes.clone(),
        notes: evaluation.notes.clone(),
    }
}

fn render(ctx: &mut Context<'_>, doc: &DriftReport) -> Result<(), CommandError> {
    let io = |e: std::io::Error| CommandError::remote(format!("writing output: {e}"));
    match ctx.global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            write_document(ctx.out, ctx.global.output, doc).map_err(io)
        }
        OutputFormat::Name => {
            // Drifted nodes only: `drift check -o name | xargs kubectl cordon`.
            for n in doc.nodes.iter().filter(|n| n.drifted) {
                writeln!(ctx.out, "node/{}", n.name).map_err(io)?;
            }
            Ok(())
        }
        format => {
            let wide = format == OutputFormat::Wide;
            let mut headers = vec!["NODE", "NODEPOOL", "STATUS", "REASON"];
            if wide {
                headers.extend(["INSTANCE", "TYPE", "ZONE", "AGE"]);
            }
            headers.push("DETAIL");
            let mut table = Table::new(&headers);
            let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
            for n in &doc.nodes {
                let mut row = vec![
                    n.name.clone(),
                    dash(&n.node_pool),
                    n.status.to_string(),
                    n.reason.map_or_else(|| "-".into(), |r| r.to_string()),
                ];
                if wide {
                    row.push(dash(&n.instance_id));
                    row.push(dash(&n.instance_type));
                    row.push(dash(&n.zone));
                    row.push(n.age_seconds.map_or_else(|| "-".into(), kubectl_age));
                }
                row.push(if n.detail.is_empty() {
                    "-".into()
                } else {
                    n.detail.clone()
                });
                table.row(row);
            }
            if table.is_empty() {
                if !ctx.global.quiet {
                    let _ = writeln!(ctx.err, "no managed nodes selected");
                }
                return Ok(());
            }
            table.write(ctx.out, !ctx.global.no_headers).map_err(io)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_like_kubectl() {
        let s = parse_selector("team=a,tier!=db,zone in (a, b),!gpu,spot,env notin (dev)").unwrap();
        assert_eq!(s.match_labels["team"], "a");
        let ops: Vec<(String, SelectorOp, usize)> = s
            .match_expressions
            .iter()
            .map(|e| (e.key.clone(), e.op, e.values.len()))
            .collect();
        assert_eq!(
            ops,
            [
                ("tier".to_string(), SelectorOp::NotIn, 1),
                ("zone".to_string(), SelectorOp::In, 2),
                ("gpu".to_string(), SelectorOp::DoesNotExist, 0),
                ("spot".to_string(), SelectorOp::Exists, 0),
                ("env".to_string(), SelectorOp::NotIn, 1),
            ]
        );
        for bad in ["", "a,,b", "=x", "zone in (a", "zone within (a)", "a b"] {
            assert!(parse_selector(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(kubectl_age(59), "59s");
        assert_eq!(kubectl_age(600), "10m");
        assert_eq!(kubectl_age(3 * 3600), "3h");
        assert_eq!(kubectl_age(9 * 86_400), "9d");
    }

    #[test]
    fn the_version_is_read_from_ssm_paths_when_not_given() {
        let mut c = Config::default();
        c.ssm_params.insert(
            "/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id".into(),
            "ami-1".into(),
        );
        assert_eq!(kubernetes_version(&c).0, KubeVersion::new(1, 25));
        c.ssm_params.insert(
            "/aws/service/bottlerocket/aws-k8s-1.26/x86_64/latest/image_id".into(),
            "ami-2".into(),
        );
        assert_eq!(
            kubernetes_version(&c).1,
            VersionSource::Assumed,
            "two versions: ambiguous"
        );
    }
}
