//! A seeded, deterministic fuzzer of `consolidate` reports (docs/upstream-tests/fuzzing.md
//! "Consolidation reports checked against their own rules (s32-fuzzcons)"): random small
//! clusters ([`gen`]) written as manifests ([`manifests`]) go through what `consolidate -f
//! --now` runs — `api::load_str`, [`build_input`], [`evaluate`] — and the report is checked by
//! [`check`], written from Karpenter's rules without the engine's helpers; the same input
//! twice must give the same bytes, and the objects in another order the same decisions.
//!
//! `cargo test --lib fuzz_check` runs the default sample; `FUZZ_CONS_N=10000
//! FUZZ_CONS_SEED=1 cargo test --lib fuzz_check::sweep -- --ignored --nocapture` the sweep.

mod cases;
mod check;
mod gen;
mod manifests;
mod rows;

use std::collections::BTreeSet;

use serde_json::Value;

use super::{build_input, evaluate, Config};
use crate::cloud::Catalog;
use crate::disruption::consolidation::ConsolidationReport;
use crate::testing::env_number as env;
use crate::usecases::provisioning::input::CatalogSizing;

/// The offline `consolidate -f FILE --catalog CATALOG --now NOW` path on these objects.
fn report(
    objects: &[Value],
    catalog: &str,
    spot_to_spot: bool,
) -> Result<ConsolidationReport, String> {
    let catalog = Catalog::from_custom_text("catalog.json", catalog).map_err(|e| e.to_string())?;
    let text: Vec<String> = objects
        .iter()
        .map(|o| serde_json::to_string(o).unwrap())
        .collect();
    let mut m =
        crate::api::load_str("cluster.yaml", &text.join("\n---\n")).map_err(|e| e.to_string())?;
    super::assume_instances_running(&mut m);
    let config = Config {
        now: gen::NOW,
        spot_to_spot: Some(spot_to_spot),
        ..Config::default()
    };
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let input = build_input(&mut m, &mut sizing, &config, None).map_err(|e| e.to_string())?;
    evaluate(&config, input).map_err(|e| e.to_string())
}

/// What each node gets: `(node, decision, method, replacement type)`.
fn decisions(r: &ConsolidationReport) -> BTreeSet<String> {
    r.nodes
        .iter()
        .map(|n| {
            format!(
                "{} {:?} {:?} {:?}",
                n.name, n.decision, n.method, n.replacement_type
            )
        })
        .collect()
}

/// One cluster: its violations, each a line (empty: none).
pub fn run_one(seed: u64) -> Vec<String> {
    let mut r = gen::Rng::new(seed);
    let spec = gen::generate(&mut r);
    let objects = manifests::objects(&spec);
    let catalog = manifests::catalog(&spec);
    let first = match report(&objects, &catalog, spec.spot_to_spot) {
        Ok(first) => first,
        Err(e) => return vec![format!("refused: {e}")],
    };
    let mut v = check::check(&spec, &first);
    let again = report(&objects, &catalog, spec.spot_to_spot).unwrap();
    if serde_json::to_string(&first).unwrap() != serde_json::to_string(&again).unwrap() {
        v.push("the same input twice gave different bytes".into());
    }
    let mut shuffled = objects.clone();
    r.shuffle(&mut shuffled);
    match report(&shuffled, &catalog, spec.spot_to_spot) {
        Ok(other) if decisions(&other) != decisions(&first) => v.push(format!(
            "objects reordered, decisions differ: {:?}",
            decisions(&first)
                .symmetric_difference(&decisions(&other))
                .collect::<Vec<_>>()
        )),
        Ok(_) => {}
        Err(e) => v.push(format!("reordered input refused: {e}")),
    }
    v
}

/// Runs `n` clusters from `seed`; returns the failing seeds with their violations.
pub fn sweep(seed: u64, n: u64) -> Vec<(u64, Vec<String>)> {
    (seed..seed + n)
        .map(|s| (s, run_one(s)))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

fn describe(failures: &[(u64, Vec<String>)]) -> String {
    failures
        .iter()
        .take(20)
        .map(|(s, v)| format!("seed {s}:\n  {}", v.join("\n  ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The default sample: 120 clusters from seed 1 (≈ 15 s in a debug build).
#[test]
fn consolidation_reports_keep_their_own_rules() {
    let failures = sweep(1, 120);
    assert!(failures.is_empty(), "{}", describe(&failures));
}

/// The long sweep: `FUZZ_CONS_SEED` (default 1), `FUZZ_CONS_N` clusters (default 10,000).
#[test]
#[ignore = "long: run with --ignored"]
fn sweep_many() {
    let (seed, n) = (env("FUZZ_CONS_SEED", 1), env("FUZZ_CONS_N", 10_000));
    let failures = sweep(seed, n);
    eprintln!("{n} clusters from seed {seed}: {} failing", failures.len());
    assert!(failures.is_empty(), "{}", describe(&failures));
}

/// Prints one cluster's objects and report (`FUZZ_CONS_SEED`), for minimising a failure.
#[test]
#[ignore = "a debugging aid"]
fn show_one() {
    let seed = env("FUZZ_CONS_SEED", 1);
    let mut r = gen::Rng::new(seed);
    let spec = gen::generate(&mut r);
    let objects = manifests::objects(&spec);
    for o in &objects {
        eprintln!("---\n{}", serde_yaml_like(o));
    }
    let catalog = manifests::catalog(&spec);
    eprintln!("catalog: {catalog}");
    let rep = report(&objects, &catalog, spec.spot_to_spot).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&rep).unwrap());
    eprintln!("{:#?}", run_one(seed));
}

fn serde_yaml_like(o: &Value) -> String {
    serde_json::to_string(o).unwrap()
}

/// What a sweep exercised: actions by generation, method and decision (`FUZZ_CONS_SEED`,
/// `FUZZ_CONS_N`, default 1 and 500).
#[test]
#[ignore = "a debugging aid"]
fn tally() {
    let (seed, n) = (env("FUZZ_CONS_SEED", 1), env("FUZZ_CONS_N", 500));
    let mut counts = std::collections::BTreeMap::new();
    for s in seed..seed + n {
        let spec = gen::generate(&mut gen::Rng::new(s));
        let r = report(
            &manifests::objects(&spec),
            &manifests::catalog(&spec),
            spec.spot_to_spot,
        )
        .unwrap();
        *counts
            .entry(format!("{:?} clusters", spec.gen))
            .or_insert(0) += 1;
        for a in &r.actions {
            *counts
                .entry(format!("{:?} {} {:?}", spec.gen, a.method, a.decision))
                .or_insert(0) += 1;
        }
        for row in r.nodes.iter().filter_map(|n| n.reason.as_ref()) {
            *counts.entry(format!("reason {}", row.kind())).or_insert(0) += 1;
        }
    }
    eprintln!("{counts:#?}");
}
