//! `nodes` output: one row per managed node, then totals per pool and overall; the node names
//! (`-o name`); or the `NodeList` document (CPU in millicores, memory in bytes).
//!
//! **Bars** (`CPU`, `MEMORY`): eight cells plus the percentage. Block characters
//! (`▕███░░░░░▏ 38%`) on a terminal, ASCII (`[###-----]  38%`) when stdout is piped or
//! `TERM=dumb`, so logs, files and `grep` stay 7-bit clean. Colour only via [`Style`].

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};

use serde::Serialize;

use super::{dash, io_error, note, warn};
use crate::cli::output::{kubectl_age, price, shown, write_document, Table, API_VERSION};
use crate::cli::style::Style;
use crate::cli::{GlobalArgs, OutputFormat};
use crate::disruption::consolidation::NodeDecision;
use crate::drift::Status;
use crate::error::CommandError;
use crate::usecases::nodes::{Consolidation, DriftInfo, NodeEntry, NodeView, Note, PoolTotals};

/// Cells in a usage bar.
const BAR_CELLS: usize = 8;

/// A note of the view as it arises: a warning when AWS is unreachable, else a note for `-v`.
pub fn tell(global: &GlobalArgs, err: &mut dyn Write, n: &Note) {
    match n {
        Note::AwsUnavailable(_)
        | Note::VersionUnavailable(_)
        | Note::ReservationsUnavailable(_)
        | Note::Reservations(_)
        | Note::Input(_)
        | Note::DecisionSkipped { .. } => warn(global, err, &text(n)),
        _ => note(global, err, &text(n)),
    }
}

fn text(n: &Note) -> String {
    match n {
        Note::NoAws => "--no-aws: instance facts from the cluster only".into(),
        Note::Manifests => {
            "-f: instance facts from the manifests only (AWS not asked; every instance taken as running)"
                .into()
        }
        Note::AwsUnavailable(why) => {
            format!("AWS unavailable ({why}): AMIs and instance facts from the cluster only")
        }
        Note::Unmanaged(count) => format!(
            "{count} nodes are not managed by Karpenter or this tool and are not shown"
        ),
        Note::Drift(text) => text.clone(),
        Note::VersionUnavailable(why) => format!(
            "the API server's version unavailable ({why}): AMI aliases resolved for Kubernetes {}; pass --kubernetes-version X.Y",
            crate::usecases::ami::ASSUMED_KUBERNETES_VERSION
        ),
        Note::AmiNamesUnavailable(why) => format!("AMI names unavailable: {why}"),
        Note::EstimatedPrices(regions) => format!(
            "prices in {} are estimated with {} on-demand list prices",
            regions.join(", "),
            crate::cloud::catalog::PRICE_REGION
        ),
        Note::NoSpotPrices => "spot prices are not in the embedded catalog: pass --catalog FILE with spot offerings to price spot nodes".into(),
        Note::ReservationsUnavailable(why) => format!(
            "capacity reservations unavailable ({why}): the CONSOLIDATION column is decided without them (`kubectl karpenter consolidate` needs them)"
        ),
        Note::Reservations(text) | Note::Input(text) => text.clone(),
        Note::DecisionSkipped { nodes, limit } => format!(
            "{nodes} nodes: the CONSOLIDATION column is left out above {limit} (it evaluates the whole cluster); `kubectl karpenter consolidate` computes it"
        ),
    }
}

/// The view as a table, names or the document.
pub fn view(
    global: &GlobalArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    view: &NodeView,
) -> Result<(), CommandError> {
    match global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let doc = NodeList {
                api_version: API_VERSION,
                kind: "NodeList",
                nodes: &view.nodes,
                node_pools: &view.node_pools,
                total: &view.total,
                notes: view.notes.iter().map(text).collect(),
            };
            write_document(out, global.output, &doc).map_err(io_error)
        }
        OutputFormat::Name => {
            for n in &view.nodes {
                writeln!(out, "node/{}", shown(&n.name)).map_err(io_error)?;
            }
            Ok(())
        }
        format => {
            if view.nodes.is_empty() {
                if !global.quiet {
                    let _ = writeln!(err, "no managed nodes");
                }
                return Ok(());
            }
            tables(global, out, view, format == OutputFormat::Wide).map_err(io_error)
        }
    }
}

/// The decision in one word (no spaces, like kubectl's columns): `delete:emptiness`,
/// `replace:c6a.large`, the why-not's kind for `none` (`none:pdb`; `-o wide` adds the whole
/// reason), `-` when not evaluated (no NodeClaim, `--no-decision`).
fn consolidation_cell(c: Option<&Consolidation>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    match c.decision {
        NodeDecision::Delete => match c.method {
            Some(m) => format!("delete:{m}"),
            None => "delete".into(),
        },
        NodeDecision::Replace => {
            format!("replace:{}", c.replacement_type.as_deref().unwrap_or("?"))
        }
        NodeDecision::None => match &c.reason {
            Some(r) => format!("none:{}", r.kind()),
            None => "none".into(),
        },
    }
}

fn tables(
    global: &GlobalArgs,
    out: &mut dyn Write,
    view: &NodeView,
    wide: bool,
) -> std::io::Result<()> {
    let style = Style::for_stdout(global.color);
    let unicode = unicode_bars();
    let headers_on = !global.no_headers;
    let mut headers = vec![
        "NODE",
        "NODEPOOL",
        "TYPE",
        "ZONE",
        "CAPACITY",
        "AMI",
        "AGE",
        "STATUS",
        "DRIFT",
        "CPU",
        "MEMORY",
        "PODS",
        "$/HOUR",
        "CONSOLIDATION",
    ];
    if wide {
        headers.extend(["INSTANCE", "AMI-NAME", "NODECLAIM", "WHY-NOT"]);
    }
    let mut rows = Vec::new();
    let mut marked = BTreeSet::new();
    for (r, n) in view.nodes.iter().enumerate() {
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
            status(n),
            drift_cell(&n.drift),
            bar(n.requests.cpu, n.allocatable.cpu, unicode),
            bar(n.requests.memory, n.allocatable.memory, unicode),
            n.pods.to_string(),
            n.price_per_hour.map_or_else(|| "-".into(), price),
            consolidation_cell(n.consolidation.as_ref()),
        ];
        if wide {
            row.push(dash(&n.instance_id));
            row.push(dash(&n.image_name));
            row.push(dash(&n.node_claim));
            row.push(
                n.consolidation
                    .as_ref()
                    .and_then(|c| c.reason.as_ref())
                    .map_or_else(|| "-".into(), ToString::to_string),
            );
        }
        rows.push(row);
    }
    write_coloured(out, &headers, rows, &marked, style, headers_on)?;
    if !headers_on {
        return Ok(());
    }
    writeln!(out)?;
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
    let all = view.node_pools.iter().map(|t| (t, false));
    let last = std::iter::once((&view.total, true));
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
    write_coloured(out, &totals_headers, rows, &marked, style, true)
}

/// kubectl's STATUS: `Ready`, `NotReady`, with `,SchedulingDisabled` when cordoned.
pub fn status(n: &NodeEntry) -> String {
    let ready = if n.ready { "Ready" } else { "NotReady" };
    if n.unschedulable {
        format!("{ready},SchedulingDisabled")
    } else {
        ready.to_string()
    }
}

/// The DRIFT column: the reason (`AMIDrift`, …), `Drifted` when only the controller's marker
/// says so, `OK`, or `-` when a deciding fact is missing (`drift check` explains in full).
pub fn drift_cell(d: &DriftInfo) -> String {
    match (d.status, d.reason) {
        (Status::Drifted, Some(r)) => r.to_string(),
        (Status::Drifted, None) => "Drifted".into(),
        (Status::Ok, _) => "OK".into(),
        (Status::Unknown, _) => "-".into(),
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

/// Writes a table whose marked cells — (row, column) — are coloured as bad.
fn write_coloured(
    out: &mut dyn Write,
    headers: &[&str],
    rows: Vec<Vec<String>>,
    marked: &BTreeSet<(usize, usize)>,
    style: Style,
    with_headers: bool,
) -> std::io::Result<()> {
    let mut table = Table::new(headers);
    for (r, row) in rows.into_iter().enumerate() {
        let columns = row.len();
        table.row(row);
        for c in (0..columns).filter(|c| marked.contains(&(r, *c))) {
            table.mark(c);
        }
    }
    table.write_styled(out, with_headers, style)
}

/// `kind: NodeList`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeList<'a> {
    api_version: &'static str,
    kind: &'static str,
    nodes: &'a [NodeEntry],
    node_pools: &'a [PoolTotals],
    total: &'a PoolTotals,
    notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unread_server_version_is_a_warning_naming_the_assumed_version() {
        let note = Note::VersionUnavailable("GET /version: 503".into());
        let mut err = Vec::new();
        tell(&GlobalArgs::default(), &mut err, &note);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "warning: the API server's version unavailable (GET /version: 503): AMI aliases resolved for Kubernetes 1.32; pass --kubernetes-version X.Y\n"
        );
        let quiet = GlobalArgs {
            quiet: true,
            ..GlobalArgs::default()
        };
        let mut err = Vec::new();
        tell(&quiet, &mut err, &note);
        assert!(err.is_empty(), "-q hides it");
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
    fn quantities_read_short() {
        assert_eq!(cores(4000), "4");
        assert_eq!(cores(1250), "1.25");
        assert_eq!(cores(100), "0.1");
        assert_eq!(gib(15 << 30), "15.0Gi");
        assert_eq!(gib(3 << 29), "1.5Gi");
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

    fn totals(nodes: usize, unpriced: usize, price: f64) -> PoolTotals {
        PoolTotals {
            name: None,
            nodes,
            pods: 0,
            requests: Default::default(),
            allocatable: Default::default(),
            price_per_hour: price,
            unpriced_nodes: unpriced,
            drifted_nodes: 0,
        }
    }

    #[test]
    fn total_prices_say_what_is_unpriced() {
        assert_eq!(total_price(&totals(2, 0, 0.192)), "0.1920");
        assert_eq!(total_price(&totals(3, 1, 0.192)), "0.1920 (1 unpriced)");
        assert_eq!(total_price(&totals(1, 1, 0.0)), "-");
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
