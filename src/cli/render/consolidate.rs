//! `consolidate` output: one row per managed node — NODE, NODEPOOL, TYPE, $/HOUR, DECISION
//! (`delete`, `replace → TYPE`, `none`), METHOD, REASON (the obstacle for `none`, the pass
//! otherwise) — then the total savings; `-o name` the nodes an action disrupts; `-o json|yaml`
//! the `ConsolidationReport` (docs/spec.md §9).

use std::io::Write;

use serde::Serialize;

use super::io_error;
use crate::cli::output::{price, write_document, Table, API_VERSION};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::disruption::consolidation::{
    held_back_text, ConsolidationReport, NodeDecision, NodeReport,
};
use crate::error::CommandError;

/// The report as a table, names or document.
pub fn report(
    global: &GlobalArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    report: &ConsolidationReport,
) -> Result<(), CommandError> {
    match global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let doc = Document {
                api_version: API_VERSION,
                report,
            };
            write_document(out, global.output, &doc).map_err(io_error)
        }
        OutputFormat::Name => {
            for n in report
                .nodes
                .iter()
                .filter(|n| n.decision != NodeDecision::None)
            {
                writeln!(out, "node/{}", n.name).map_err(io_error)?;
            }
            Ok(())
        }
        _ => {
            let mut table = Table::new(&[
                "NODE", "NODEPOOL", "TYPE", "$/HOUR", "DECISION", "METHOD", "REASON",
            ]);
            for n in &report.nodes {
                table.row(row(n));
            }
            if table.is_empty() {
                if !global.quiet {
                    let _ = writeln!(err, "no managed nodes selected");
                }
                return Ok(());
            }
            table.write(out, !global.no_headers).map_err(io_error)?;
            writeln!(
                out,
                "\n{} action(s), Karpenter {} at {}: total savings ${}/hour",
                report.actions.len(),
                report.karpenter_version,
                report.now,
                price(report.savings_per_hour)
            )
            .map_err(io_error)
        }
    }
}

fn row(n: &NodeReport) -> Vec<String> {
    let decision = match (n.decision, &n.replacement_type) {
        // Another capacity type is the point of a same-type replacement (aws#7979:
        // on-demand → reserved); say it.
        (NodeDecision::Replace, Some(t)) => match &n.replacement_capacity_type {
            Some(ct) if *ct != n.capacity_type => format!("replace → {t} ({ct})"),
            _ => format!("replace → {t}"),
        },
        (NodeDecision::Replace, None) => "replace".into(),
        (NodeDecision::Delete, _) => "delete".into(),
        (NodeDecision::None, _) => "none".into(),
    };
    let mut reason = match (&n.reason, n.pass) {
        (Some(r), _) => r.to_string(),
        (None, Some(pass)) if !n.drain_waits_for.is_empty() => format!(
            "pass {pass}; the drain waits for {}",
            n.drain_waits_for.join(", ")
        ),
        (None, Some(pass)) => format!("pass {pass}"),
        (None, None) => "-".into(),
    };
    let held_back: Vec<(String, i64)> = n
        .held_back_destinations
        .iter()
        .map(|h| (h.node.clone(), h.consolidate_after_left_seconds))
        .collect();
    reason.push_str(&held_back_text(&held_back, "its pods"));
    if let Some(u) = &n.unlimited_budget {
        let of = u
            .reason
            .as_deref()
            .map_or(String::new(), |r| format!(" for {r}"));
        reason.push_str(&format!(
            "; no budget{of} is in its window now ({}), so none limits it",
            u.closed_windows.join(", ")
        ));
    }
    vec![
        n.name.clone(),
        n.node_pool.clone(),
        n.instance_type.clone(),
        n.price_per_hour.map_or_else(|| "-".into(), price),
        decision,
        n.method.map_or_else(|| "-".into(), |m| m.to_string()),
        reason,
    ]
}

/// `apiVersion: kubectl-karpenter/v1` and the report's own fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    api_version: &'static str,
    #[serde(flatten)]
    report: &'a ConsolidationReport,
}

/// A round of `consolidate --yes` / `--dry-run`: what it carries out (or resumes), node by
/// node, as `drift replace`'s plan table.
pub fn round(
    out: &mut dyn Write,
    headers: bool,
    number: usize,
    resumes: bool,
    outcomes: &[crate::usecases::replace::NodeOutcome],
) -> std::io::Result<()> {
    if number > 1 {
        writeln!(out)?;
    }
    if outcomes.is_empty() {
        return writeln!(
            out,
            "Nothing to consolidate now (`kubectl karpenter consolidate` says why, node by node)."
        );
    }
    if resumes {
        writeln!(
            out,
            "Round {number}: finishing what an interrupted run left"
        )?;
    } else {
        writeln!(out, "Round {number}: the action Karpenter would start now")?;
    }
    super::replace::table(out, headers, outcomes)
}
