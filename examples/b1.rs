//! One-shot run of benchmark B1 for a quick look: `cargo run --release --example b1 -- 20000`.
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let input = kubectl_karpenter::testing::b1_input(n);
    let start = Instant::now();
    let plan = kubectl_karpenter::scheduling::solve(&input);
    let took = start.elapsed();
    let placed: usize = plan.node_claims.iter().map(|c| c.pods.len()).sum();
    println!(
        "{n} pods: {placed} placed, {} unschedulable, {} nodes (n/5 = {}), {:.3} s, ${:.2}/h",
        plan.unschedulable.len(),
        plan.node_claims.len(),
        n / 5,
        took.as_secs_f64(),
        plan.price_per_hour()
    );
    for u in plan.unschedulable.iter().take(3) {
        println!("  {} — {}", u.pod, u.reason);
    }
}
