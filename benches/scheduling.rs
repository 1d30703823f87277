//! Benchmark B1 (docs/performance.md): Karpenter's "diverse pods" workload against its 400-type fake catalog,
//! solve only, swept from 1 to 50,000 pods. Before timing, each size is checked for validity
//! (every pod placed, one node per anti-affinity pod = n/5 nodes) and the result printed, so a
//! fast but wrong solver cannot report a good number.
//!
//! `cargo bench --bench scheduling` (all sizes) or `cargo bench --bench scheduling -- 20000`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use kubectl_karpenter::scheduling::solve;
use kubectl_karpenter::testing::b1_input;

const SIZES: [usize; 10] = [1, 50, 100, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000];

fn b1(c: &mut Criterion) {
    let mut group = c.benchmark_group("b1_diverse");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for n in SIZES {
        let input = b1_input(n);
        let plan = solve(&input);
        let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum();
        let valid = placed == n
            && plan.unschedulable.is_empty()
            && plan.node_claims.len() == (n / 5).max(1);
        eprintln!(
            "b1 n={n}: placed {placed}/{n}, nodes {} (n/5 = {}), valid: {valid}",
            plan.node_claims.len(),
            n / 5
        );
        group.measurement_time(Duration::from_secs(if n >= 10_000 { 20 } else { 5 }));
        group.bench_with_input(BenchmarkId::from_parameter(n), &input, |b, input| {
            b.iter(|| solve(black_box(input)))
        });
    }
    group.finish();
}

criterion_group!(benches, b1);
criterion_main!(benches);
