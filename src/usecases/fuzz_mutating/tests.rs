//! The fixed sample every `cargo test --lib` runs, the sweep run by hand, and each violation the
//! fuzzer found, minimised into a test of its own.

use std::collections::BTreeMap;

use super::*;

/// Runs `seeds`; the violations, one line each, and the count of cases per use case. `tell`:
/// each violation printed as found, and a line every 100 cases.
fn sweep_of(
    seeds: std::ops::Range<u64>,
    tell: bool,
) -> (Vec<String>, BTreeMap<String, [usize; 6]>) {
    let mut violations = Vec::new();
    let mut per: BTreeMap<String, [usize; 6]> = BTreeMap::new();
    for seed in seeds {
        let c = case(seed);
        let row = per.entry(format!("{:?}", c.use_case)).or_default();
        row[0] += 1;
        row[1] += usize::from(c.failed);
        row[2] += usize::from(c.killed);
        row[3] += usize::from(!c.violations.is_empty());
        row[4] += c.writes;
        row[5] += c.done;
        for v in &c.violations {
            let line = format!("seed {seed} ({:?}): {v}", c.use_case);
            if tell {
                println!("{line}");
            }
            violations.push(line);
        }
        if tell && seed % 100 == 99 {
            println!("… seed {seed} done, {} violations so far", violations.len());
        }
    }
    (violations, per)
}

#[test]
fn a_fixed_sample_of_faulty_runs_and_clean_reruns_keeps_every_invariant() {
    let (violations, _) = sweep_of(0..36, false);
    assert!(violations.is_empty(), "{violations:#?}");
}

/// `FUZZ_MUT_SEEDS=0..10000 cargo test --lib fuzz_mutating::tests::sweep -- --ignored --nocapture`
#[test]
#[ignore = "the long sweep, run by hand (docs/testing.md)"]
fn sweep() {
    let range = crate::testing::env_text("FUZZ_MUT_SEEDS").unwrap_or_else(|| "0..1000".into());
    let (from, to) = range.split_once("..").expect("FROM..TO");
    let (from, to): (u64, u64) = (from.parse().unwrap(), to.parse().unwrap());
    let started = std::time::Instant::now();
    let (violations, per) = sweep_of(from..to, true);
    println!(
        "fuzz_mutating: seeds {from}..{to}, {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (use_case, [cases, failed, killed, bad, writes, done]) in &per {
        println!("  {use_case}: {cases} cases, {failed} faulty runs failed, {killed} killed, {writes} writes, {done} nodes replaced or deleted by clean re-runs, {bad} with violations");
    }
    assert!(violations.is_empty(), "{} violations", violations.len());
}
