//! Benchmark B7 (docs/performance.md): the whole consolidation decision (every pass, every node's reason) on
//! the B4 cluster shape — three NodePools, about 30 pods per node, 10% of the deployments spread
//! over zones — swept from 500 to 5,000 nodes. Before timing, each size is checked against the
//! reference evaluation (one full solve per simulation) where that is affordable, and its
//! outcome printed.
//!
//! `cargo bench --bench consolidation` (all sizes) or `cargo bench --bench consolidation -- 5000`.
//! Peak memory: `/usr/bin/time -v target/release/examples/b7 5000`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use kubectl_karpenter::disruption::consolidation::{evaluate, evaluate_reference};
use kubectl_karpenter::testing::b7_input;

const SIZES: [usize; 4] = [500, 1_000, 2_000, 5_000];
/// The reference takes minutes beyond this.
const REFERENCE_UP_TO: usize = 500;

fn b7(c: &mut Criterion) {
    let mut group = c.benchmark_group("b7_consolidation");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for n in SIZES {
        let input = b7_input(n, 30, 10, 7);
        let pods: usize = input.nodes.iter().map(|n| n.pods.len()).sum();
        let report = evaluate(input.clone());
        let moved: usize = report.actions.iter().map(|a| a.nodes.len()).sum();
        eprintln!(
            "b7 n={n}: {pods} pods; {} actions over {} passes disrupt {moved} nodes, ${:.2}/h",
            report.actions.len(),
            report.actions.last().map_or(0, |a| a.pass),
            report.savings_per_hour
        );
        if n <= REFERENCE_UP_TO {
            let start = Instant::now();
            let reference = evaluate_reference(input.clone());
            eprintln!(
                "b7 n={n}: reference evaluation {:.2?}, same decisions: {}",
                start.elapsed(),
                reference == report
            );
        }
        group.measurement_time(Duration::from_secs(if n >= 2_000 { 60 } else { 20 }));
        group.bench_with_input(BenchmarkId::from_parameter(n), &input, |b, input| {
            b.iter_batched(
                || input.clone(),
                |i| evaluate(black_box(i)),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, b7);
criterion_main!(benches);
