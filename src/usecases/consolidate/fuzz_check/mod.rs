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
mod check2;
mod check3;
pub(crate) mod gen;
pub(crate) mod manifests;
mod rows;

use std::collections::BTreeSet;

use serde_json::Value;

use super::{build_input, evaluate, Config};
use crate::cloud::Catalog;
use crate::disruption::consolidation::ConsolidationReport;
use crate::scheduling::MinValuesPolicy;
use crate::testing::{describe_failures, env_number as env, sweep_seeds, SeedFailures};
use crate::usecases::provisioning::input::CatalogSizing;

/// The offline `consolidate -f FILE --catalog CATALOG --now NOW` path on these objects.
fn report(objects: &[Value], catalog: &str, s: &gen::Spec) -> Result<ConsolidationReport, String> {
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
        spot_to_spot: Some(s.spot_to_spot),
        reserved_capacity: Some(s.reserved_gate),
        min_values_policy: s.best_effort.then_some(MinValuesPolicy::BestEffort),
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
    let first = match report(&objects, &catalog, &spec) {
        Ok(first) => first,
        Err(e) => return vec![format!("refused: {e}")],
    };
    let mut v = check::check(&spec, &first);
    let again = report(&objects, &catalog, &spec).unwrap();
    if serde_json::to_string(&first).unwrap() != serde_json::to_string(&again).unwrap() {
        v.push("the same input twice gave different bytes".into());
    }
    let mut shuffled = objects.clone();
    r.shuffle(&mut shuffled);
    match report(&shuffled, &catalog, &spec) {
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
pub fn sweep(seed: u64, n: u64) -> SeedFailures {
    sweep_seeds(seed, n, None, run_one)
}

/// The default sample: 120 clusters from seed 1 (≈ 15 s in a debug build).
#[test]
fn consolidation_reports_keep_their_own_rules() {
    let failures = sweep(1, 120);
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
}

/// The long sweep: `FUZZ_CONS_SEED` (default 1), `FUZZ_CONS_N` clusters (default 10,000).
#[test]
#[ignore = "long: run with --ignored"]
fn sweep_many() {
    let (seed, n) = (env("FUZZ_CONS_SEED", 1), env("FUZZ_CONS_N", 10_000));
    // Progress and each failure as they come, so a run cut short still says how far it got.
    let failures = sweep_seeds(seed, n, Some(100), run_one);
    eprintln!("{n} clusters from seed {seed}: {} failing", failures.len());
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
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
    let rep = report(&objects, &catalog, &spec).unwrap();
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
            &spec,
        )
        .unwrap();
        *counts
            .entry(format!("{:?} clusters", spec.gen))
            .or_insert(0) += 1;
        if spec.best_effort {
            *counts.entry("clusters BestEffort".to_string()).or_insert(0) += 1;
        }
        for a in &r.actions {
            *counts
                .entry(format!("{:?} {} {:?}", spec.gen, a.method, a.decision))
                .or_insert(0) += 1;
            for kind in round_two_paths(&spec, &r, a) {
                *counts.entry(kind.to_string()).or_insert(0) += 1;
            }
        }
        for row in r.nodes.iter().filter_map(|n| n.reason.as_ref()) {
            *counts.entry(format!("reason {}", row.kind())).or_insert(0) += 1;
        }
    }
    eprintln!("{counts:#?}");
}

/// The round-2 paths an action took (for [`tally`]).
fn round_two_paths(
    spec: &gen::Spec,
    r: &ConsolidationReport,
    a: &crate::disruption::consolidation::Action,
) -> Vec<&'static str> {
    use crate::disruption::consolidation::Method;
    let mut out = Vec::new();
    let consolidation = matches!(a.method, Method::Single | Method::Multi);
    let all_spot = r
        .nodes
        .iter()
        .filter(|n| a.nodes.contains(&n.name))
        .all(|n| n.capacity_type == "spot");
    for rep in a.replacement.iter().chain(&a.additional_replacements) {
        if consolidation && all_spot && rep.capacity_type == "spot" {
            out.push(if a.nodes.len() == 1 {
                "path spot-to-spot single"
            } else {
                "path spot-to-spot multi"
            });
        }
        if rep.capacity_type == "reserved" {
            out.push(if consolidation {
                "path reserved launch (consolidation)"
            } else {
                "path reserved launch (drift/expiration)"
            });
        }
        if spec
            .pools
            .iter()
            .any(|p| p.name == rep.node_pool && p.min_values.is_some())
        {
            out.push(if consolidation {
                "path minValues replacement (consolidation)"
            } else {
                "path minValues replacement (drift/expiration)"
            });
        }
    }
    let reserved_nodes = r
        .nodes
        .iter()
        .filter(|n| a.nodes.contains(&n.name) && n.capacity_type == "reserved")
        .count();
    if consolidation && reserved_nodes > 0 {
        out.push("path reserved node consolidated");
    }
    if a.method == Method::Multi && a.replacement.is_some() {
        out.push("path multi-node replace");
    }
    if spec.gen == gen::Gen::V1 && a.method == Method::Multi && a.pass == 1 && r.actions[0] == *a {
        out.push("path first-pass multi-node (prefix checked)");
    }
    if spec.best_effort && a.replacement.is_some() {
        out.push("path replacement under minValues BestEffort");
    }
    let unpriced_reserved = spec.nodes.iter().any(|n| {
        a.nodes.contains(&n.name)
            && n.capacity_type == "reserved"
            && r.nodes
                .iter()
                .any(|row| row.name == n.name && row.price_per_hour.is_none())
    });
    if unpriced_reserved {
        out.push("path unpriced reserved node disrupted");
    }
    out
}
