//! `drift check` output: the verdict table (`-o wide` adds instance, type, zone and age), the
//! drifted nodes as `node/NAME` (`-o name`, for `xargs kubectl cordon`), or the `DriftReport`
//! document (docs/spec.md §5.6; schema in the README).

use std::io::Write;

use serde::Serialize;

use super::{dash, io_error, note, warn};
use crate::cli::output::{kubectl_age, shown, write_document, Table, API_VERSION};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::drift::{NodeDrift, Summary};
use crate::error::CommandError;
use crate::usecases::drift_check::{DriftReport, GatherNote, Mode, PoolRollout};

/// Tells the notes of the offline gathering (warnings, and notes for `-v`).
pub fn gather_notes(global: &GlobalArgs, err: &mut dyn Write, notes: &[GatherNote]) {
    for n in notes {
        match n {
            GatherNote::Unmanaged(count) => note(
                global,
                err,
                &format!(
                    "{count} nodes are not managed by Karpenter or this tool and were skipped"
                ),
            ),
            GatherNote::AssumedVersion(version) => warn(
                global,
                err,
                &format!("no --kubernetes-version: assuming Kubernetes {version} for AMI aliases and amiFamily defaults"),
            ),
            GatherNote::ClassNotInInput {
                pool_kind,
                pool,
                class_kind,
                class,
            } => warn(
                global,
                err,
                &format!("{pool_kind} {pool}: {class_kind} {class} is not in the input; its nodes can only be checked for NodePool and requirement drift"),
            ),
            GatherNote::NoCatalogRegion { pool, region } => note(
                global,
                err,
                &format!("NodePool {pool}: the catalog has no data for region {region}: InstanceTypeNotFound not checked"),
            ),
        }
    }
}

/// The report: its notes as warnings, then the table, names or document.
pub fn report(
    global: &GlobalArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    report: &DriftReport,
) -> Result<(), CommandError> {
    let evaluation = &report.evaluation;
    for n in &evaluation.notes {
        warn(global, err, n);
    }
    match global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let doc = ReportDoc {
                api_version: API_VERSION,
                kind: "DriftReport",
                mode: report.mode,
                kubernetes_version: report.kubernetes_version.map(|v| v.to_string()),
                summary: evaluation.summary,
                nodes: &evaluation.nodes,
                notes: &evaluation.notes,
                rollout: &report.rollout,
            };
            write_document(out, global.output, &doc).map_err(io_error)
        }
        OutputFormat::Name => {
            // Drifted nodes only: `drift check -o name | xargs kubectl cordon`.
            for n in evaluation.nodes.iter().filter(|n| n.drifted) {
                writeln!(out, "node/{}", shown(&n.name)).map_err(io_error)?;
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
            for n in &evaluation.nodes {
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
                if !global.quiet {
                    let _ = writeln!(err, "no managed nodes selected");
                }
                return Ok(());
            }
            table.write(out, !global.no_headers).map_err(io_error)?;
            if !report.rollout.is_empty() && !global.no_headers {
                writeln!(out).map_err(io_error)?;
                for r in &report.rollout {
                    writeln!(out, "what-if: {}", rollout_line(r)).map_err(io_error)?;
                }
            }
            Ok(())
        }
    }
}

/// `kind: DriftReport`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    kubernetes_version: Option<String>,
    summary: Summary,
    nodes: &'a [NodeDrift],
    notes: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    rollout: &'a [PoolRollout],
}

/// What-if: one line per pool with drifted nodes, at its budget's pace now.
fn rollout_line(r: &PoolRollout) -> String {
    let pace = match (r.at_once, r.rounds) {
        (None, _) => "no budget limits it: all at once".to_string(),
        (Some(_), None) => "its Drifted budget allows none now".to_string(),
        (Some(n), Some(rounds)) => {
            format!("its Drifted budget replaces {n} at a time: {rounds} round(s) of replacement")
        }
    };
    format!(
        "NodePool {}: {} of {} node(s) would drift; {pace}",
        r.node_pool, r.drifted, r.nodes
    )
}

/// `drift check --mark --dry-run`: the nodes whose drift marker would change.
pub fn mark_preview(nodes: &[String]) -> String {
    if nodes.is_empty() {
        "--mark --dry-run: no node's drift marker would change".to_string()
    } else {
        format!(
            "--mark --dry-run: would update the drift marker of {} node(s): {} (nothing written)",
            nodes.len(),
            nodes.join(", ")
        )
    }
}
