//! docs/performance.md B7: the consolidation decision on a big cluster, for timing and peak RSS
//! (`/usr/bin/time -v`); `cargo bench --bench consolidation` times the sweep.
//!
//! ```text
//! cargo run --release --example b7 -- [NODES] [PODS_PER_NODE] [CONSTRAINED_PERCENT]
//! ```
//!
//! With `B7_REPORT=FILE` the whole report (every action and every node's reasons) is written to
//! FILE as JSON, to check that a change of speed changed no decision (`sha256sum FILE`).

use std::time::Instant;

use kubectl_karpenter::disruption::consolidation::evaluate;
use kubectl_karpenter::testing::b7_input;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers"))
        .collect();
    let nodes = args.first().copied().unwrap_or(5000);
    let per_node = args.get(1).copied().unwrap_or(30);
    let constrained = args.get(2).copied().unwrap_or(10);
    let build = Instant::now();
    let input = b7_input(nodes, per_node, constrained, 7);
    let pods: usize = input.nodes.iter().map(|n| n.pods.len()).sum();
    let built = build.elapsed();
    let start = Instant::now();
    let report = evaluate(input);
    let took = start.elapsed();
    if let Ok(path) = std::env::var("B7_REPORT") {
        let json = serde_json::to_string_pretty(&report).expect("the report serializes");
        std::fs::write(&path, json).expect("B7_REPORT is writable");
    }
    let moved: usize = report.actions.iter().map(|a| a.nodes.len()).sum();
    let mut by_method = std::collections::BTreeMap::new();
    for a in &report.actions {
        *by_method
            .entry(format!("{}/{:?}", a.method, a.decision).to_lowercase())
            .or_insert(0) += 1;
    }
    println!(
        "{nodes} nodes, {pods} pods ({constrained}% of deployments spread over zones): built in \
         {built:.2?}, evaluated in {took:.2?}; {} actions over {} passes move {moved} nodes, \
         saving ${:.2}/h; {by_method:?}",
        report.actions.len(),
        report.actions.last().map_or(0, |a| a.pass),
        report.savings_per_hour
    );
}
