//! Offline and live, fuzzed (docs/upstream-tests/kubectl.md "Offline and live, fuzzed
//! (s34-offlivefuzz)"): one world must give the same decisions read from the cluster (live)
//! and from the cluster's own `kubectl get -o yaml` export (`-f`). Each seed makes a world
//! ([`world`]: the consolidation fuzzer's clusters in every API generation, with the server's
//! defaults and the controllers' status, plus pending pods), stores it in a `FakeCluster` and
//! exports it ([`export`]); each command's two readings ([`paths`]) are compared field by
//! field. Karpenter reads the API server's objects through its informers (core v1.14.1
//! `pkg/controllers/state/cluster.go`); an export is those objects, so nothing but what
//! docs/commands.md documents may differ.
//!
//! Drift worlds ([`drift_world`]: pools and classes edited after launch, hash annotations
//! written, stale or absent) compare `drift check -o json` and `nodes`' drift column
//! ([`drift_paths`]); what offline documents it cannot know must be in `notChecked`
//! (docs/upstream-tests/fuzzing.md "Offline against live, drift (s35-driftfuzz)").
//!
//! `cargo test --lib offline_live_check` runs the default sample; `OFFLIVE_N=3000
//! OFFLIVE_SEED=1 cargo test --lib offline_live_check::sweep -- --ignored --nocapture` the
//! sweep; `OFFLIVE_SEED=S cargo test --lib offline_live_check::show_one -- --ignored
//! --nocapture` prints one world's export and differences.

mod drift_paths;
mod drift_world;
mod export;
mod paths;
#[cfg(test)]
mod tests;
mod world;

use crate::testing::{
    describe_failures, env_number as env, json_differences, sweep_seeds, SeedFailures,
};

fn compare(command: &str, (live, offline): paths::Pair) -> Vec<String> {
    match (live, offline) {
        (Ok(l), Ok(o)) => (json_differences(&l, &o).into_iter())
            .map(|d| format!("{command}: {d}"))
            .collect(),
        (Err(l), Err(o)) if l == o => Vec::new(),
        (l, o) => vec![format!(
            "{command}: live {} / offline {}",
            l.map_or_else(|e| format!("error {e}"), |_| "ok".into()),
            o.map_or_else(|e| format!("error {e}"), |_| "ok".into())
        )],
    }
}

/// One world's differences, each a line (empty: the two readings agree).
pub fn run_one(seed: u64) -> Vec<String> {
    let world = world::make(seed);
    let (cluster, text) = paths::both(&world);
    let mut out = compare("consolidate", paths::consolidate(&world, &cluster, &text));
    out.extend(compare(
        "provision --dry-run",
        paths::provision(&world, &cluster, &text),
    ));
    out.extend(compare("nodes", paths::nodes(&world, &cluster, &text)));
    out
}

/// One drift world's differences ([`drift_world`]): `drift check -o json` and `nodes`.
pub fn run_one_drift(seed: u64) -> Vec<String> {
    let world = drift_world::make(seed);
    let (cluster, text) = paths::both(&world);
    let (mut live, mut offline) = drift_paths::drift(&world, &cluster, &text);
    let mut names = Vec::new();
    if let (Ok(l), Ok(o)) = (&mut live, &mut offline) {
        names = drift_paths::reconcile(l, o);
    }
    let mut out = compare("drift check", (live, offline));
    let (live, mut offline) = paths::nodes(&world, &cluster, &text);
    if let (Ok(l), Ok(o)) = (&live, &mut offline) {
        drift_paths::reconcile_nodes(&names, l, o);
    }
    out.extend(compare("nodes", (live, offline)));
    out
}

fn sweep_from(seed: u64, n: u64, tell: bool) -> SeedFailures {
    sweep_seeds(seed, n, tell.then_some(200), run_one)
}

/// The default sample: 12 worlds from seed 1 (a few seconds in a debug build).
#[test]
fn offline_and_live_decide_alike() {
    let failures = sweep_from(1, 12, false);
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
}

/// The long sweep: `OFFLIVE_SEED` (default 1), `OFFLIVE_N` worlds (default 3,000).
#[test]
#[ignore = "long: run with --ignored"]
fn sweep() {
    let (seed, n) = (env("OFFLIVE_SEED", 1), env("OFFLIVE_N", 3_000));
    let failures = sweep_from(seed, n, true);
    eprintln!("{n} worlds from seed {seed}: {} failing", failures.len());
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
}

/// The default drift sample: 12 drift worlds from seed 1.
#[test]
fn offline_and_live_find_the_same_drift() {
    let failures = sweep_seeds(1, 12, None, run_one_drift);
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
}

/// The long drift sweep: `OFFLIVE_SEED` (default 1), `OFFLIVE_N` drift worlds (default 2,000).
#[test]
#[ignore = "long: run with --ignored"]
fn drift_sweep() {
    let (seed, n) = (env("OFFLIVE_SEED", 1), env("OFFLIVE_N", 2_000));
    let started = std::time::Instant::now();
    let failures = sweep_seeds(seed, n, Some(200), run_one_drift);
    eprintln!(
        "{n} drift worlds from seed {seed}: {} failing, {:.0} s",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", describe_failures(&failures));
}

/// Prints one drift world's export and its differences (`OFFLIVE_SEED`).
#[test]
#[ignore = "a debugging aid"]
fn show_one_drift() {
    let seed = env("OFFLIVE_SEED", 1);
    let world = drift_world::make(seed);
    let (cluster, text) = paths::both(&world);
    eprintln!("{text}\ncatalog: {}", world.catalog);
    let (live, offline) = drift_paths::drift(&world, &cluster, &text);
    eprintln!("live: {live:#?}\noffline: {offline:#?}");
    eprintln!("{:#?}", run_one_drift(seed));
}

/// Prints one world's export and its differences (`OFFLIVE_SEED`), for minimising.
#[test]
#[ignore = "a debugging aid"]
fn show_one() {
    let seed = env("OFFLIVE_SEED", 1);
    let world = world::make(seed);
    let (_, text) = paths::both(&world);
    eprintln!("{text}\ncatalog: {}", world.catalog);
    eprintln!("{:#?}", run_one(seed));
}

/// What a sweep compared (`OFFLIVE_SEED`, `OFFLIVE_N`, default 1 and 100): worlds by
/// generation, and those where each command decided something.
#[test]
#[ignore = "a debugging aid"]
fn tally() {
    let (seed, n) = (env("OFFLIVE_SEED", 1), env("OFFLIVE_N", 100));
    let mut counts = std::collections::BTreeMap::new();
    let mut count = |k: String| *counts.entry(k).or_insert(0) += 1;
    for s in seed..seed + n {
        let world = world::make(s);
        let (cluster, text) = paths::both(&world);
        count(format!("{:?} worlds", world.gen));
        let (live, offline) = paths::consolidate(&world, &cluster, &text);
        count(format!(
            "consolidate ok {} / {}",
            live.is_ok(),
            offline.is_ok()
        ));
        let actions = live.map_or(0, |v| v["actions"].as_array().map_or(0, Vec::len));
        count(format!("consolidate with actions: {}", actions > 0));
        let (live, offline) = paths::provision(&world, &cluster, &text);
        count(format!(
            "provision ok {} / {}",
            live.is_ok(),
            offline.is_ok()
        ));
        if let Ok(v) = live {
            let claims = v["nodeClaims"].as_array().map_or(0, Vec::len);
            let pending = v["unschedulable"].as_array().map_or(0, Vec::len);
            let existing = v["existingNodes"].as_array().map_or(0, Vec::len);
            count(format!(
                "provision claims>0 {} pending>0 {} existing>0 {}",
                claims > 0,
                pending > 0,
                existing > 0
            ));
        }
        let (live, offline) = paths::nodes(&world, &cluster, &text);
        count(format!("nodes ok {} / {}", live.is_ok(), offline.is_ok()));
        if let Ok(v) = live {
            let decided = (v["nodes"].as_array().into_iter().flatten())
                .filter(|n| !n["consolidation"].is_null())
                .count();
            count(format!("nodes with a decision: {}", decided > 0));
        }
    }
    eprintln!("{counts:#?}");
}

/// What a drift sweep met (`OFFLIVE_SEED`, `OFFLIVE_N`, default 1 and 200): per generation, the
/// live verdicts and reasons, and the offline `notChecked` lines by their first words.
#[test]
#[ignore = "a debugging aid"]
fn drift_tally() {
    let (seed, n) = (env("OFFLIVE_SEED", 1), env("OFFLIVE_N", 200));
    let mut counts = std::collections::BTreeMap::new();
    for s in seed..seed + n {
        let world = drift_world::make(s);
        let (cluster, text) = paths::both(&world);
        let (live, offline) = drift_paths::drift(&world, &cluster, &text);
        for (side, v) in [("live", live), ("offline", offline)] {
            let Ok(v) = v else {
                *counts.entry(format!("{side} error")).or_insert(0) += 1;
                continue;
            };
            for node in v["nodes"].as_array().into_iter().flatten() {
                let key = format!(
                    "{side} {:?} {} {}",
                    world.gen, node["status"], node["reason"]
                );
                *counts.entry(key).or_insert(0) += 1;
                for why in node["notChecked"].as_array().into_iter().flatten() {
                    let head: String = why.as_str().unwrap_or_default().chars().take(50).collect();
                    *counts
                        .entry(format!("{side} notChecked: {head}"))
                        .or_insert(0) += 1;
                }
            }
        }
    }
    eprintln!("{counts:#?}");
}
