//! Plans checked against their own constraints: seeded random small worlds go through the
//! planner `provision --dry-run` uses ([`crate::scheduling::solve_rounds`]), and an independent
//! checker (Kubernetes/Karpenter semantics written again, `check.rs`, `topo.rs`, `labels.rs`)
//! reads the plan: room, taints, node selection on every launch option, volumes, host ports,
//! offerings, NodePool limits, `minValues`, `DoNotSchedule` spread, pod (anti-)affinity, and for a
//! world of one pod, that an unschedulable pod has nowhere to go. docs/upstream-tests/fuzzing.md
//! "Plans checked against their own constraints (s32-fuzzplan)" and "…, round 2 (s33-fuzzplan2)";
//! docs/testing.md.
//!
//! `cargo test --lib scheduling::fuzz_check` runs a default sample; a long run:
//! `FUZZPLAN_WORLDS=20000 FUZZPLAN_SEED=1 cargo test --lib scheduling::fuzz_check::many -- --ignored --nocapture`.

mod cases;
mod check;
mod claims;
mod labels;
mod minimise;
mod node;
mod topo;
mod world;

use check::Violation;

use std::collections::BTreeMap;

use crate::scheduling::rounds::solve_rounds_traced;
use crate::scheduling::{Input, Plan};

/// A plan, and the scheduling round each placed pod was placed in (`rounds.rs`: a later round's
/// pods see the earlier rounds' NodeClaims as launched), by `namespace/name`.
pub(super) struct Planned {
    pub plan: Plan,
    pub rounds: BTreeMap<String, usize>,
}

/// The plan `provision --dry-run` makes (`solve_rounds`), with each pod's round.
pub(super) fn planned(input: &Input) -> Planned {
    let mut rounds = BTreeMap::new();
    let plan = solve_rounds_traced(input, &mut |round, step| {
        let on_claims = step.node_claims.iter().flat_map(|c| &c.pods);
        let on_nodes = step.existing_nodes.iter().flat_map(|e| &e.pods);
        for pod in on_claims.chain(on_nodes) {
            rounds.entry(pod.clone()).or_insert(round);
        }
    });
    Planned { plan, rounds }
}

/// Seeds whose violations are known and left (fuzzing.md): none. Seed 1641 (a zone spread with
/// `nodeTaintsPolicy: Honor` over an uninitialized node) was the planner's, mended in
/// `topology.rs` `counted_taints` (follow-ups.md, "Follow-ups (session 33, lead)").
const OPEN: [u64; 0] = [];

/// Every violation the checker finds in `planned` (of `input`).
fn check_plan(input: &Input, planned: &Planned) -> Vec<Violation> {
    let plan = &planned.plan;
    let mut out = Vec::new();
    let slots = check::slots(input, planned, &mut out);
    for s in &slots {
        check::check_slot(input, s, &mut out);
    }
    claims::check_claims(input, plan, &mut out);
    topo::check_spread(input, &slots, &mut out);
    topo::check_affinity(&slots, &mut out);
    topo::check_single(input, plan, &slots, &mut out);
    out
}

/// The world of `seed`: a single pending pod for one seed in four (where an unschedulable
/// verdict can be checked), else up to eight.
fn world_of(seed: u64) -> Input {
    world::world(seed, if seed.is_multiple_of(4) { 1 } else { 8 })
}

/// Runs `count` worlds from `first`; the seeds with violations, each with its first few.
fn run(first: u64, count: u64) -> Vec<(u64, Vec<Violation>)> {
    let mut bad = Vec::new();
    for seed in first..first + count {
        let input = world_of(seed);
        let v = check_plan(&input, &planned(&input));
        if !v.is_empty() && !OPEN.contains(&seed) {
            bad.push((seed, v));
        }
    }
    bad
}

fn report(bad: &[(u64, Vec<Violation>)]) -> String {
    let mut by_rule = std::collections::BTreeMap::<&str, (usize, u64, String)>::new();
    for (seed, v) in bad {
        for x in v {
            let e = by_rule
                .entry(x.rule)
                .or_insert((0, *seed, x.detail.clone()));
            e.0 += 1;
        }
    }
    by_rule
        .iter()
        .map(|(rule, (n, seed, d))| format!("{rule}: {n} (first seed {seed}: {d})"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The default sample: 1,500 worlds, every plan feasible by the checker.
#[test]
fn sampled_worlds_plan_within_their_constraints() {
    let bad = run(1, 1500);
    assert!(bad.is_empty(), "{}", report(&bad));
}

/// The long run (ignored): `FUZZPLAN_WORLDS` worlds from `FUZZPLAN_SEED`.
#[test]
#[ignore]
fn many() {
    let env = crate::testing::env_number;
    let (first, count) = (env("FUZZPLAN_SEED", 1), env("FUZZPLAN_WORLDS", 20_000));
    let bad = run(first, count);
    let seeds: Vec<u64> = bad.iter().map(|(s, _)| *s).collect();
    println!(
        "{count} worlds from seed {first}: {} with violations {seeds:?}\n{}",
        bad.len(),
        report(&bad)
    );
    assert!(bad.is_empty());
}

/// Prints one world and its plan (ignored): `FUZZPLAN_SEED=N … show -- --ignored --nocapture`.
#[test]
#[ignore]
fn show() {
    let seed = crate::testing::env_number("FUZZPLAN_SEED", 1);
    let mut input = world_of(seed);
    if let Some(rule) = crate::testing::env_text("FUZZPLAN_RULE") {
        input = minimise::minimise(input, &rule);
    }
    let p = planned(&input);
    if crate::testing::env_text("FUZZPLAN_FULL").is_some() {
        println!("{input:#?}\n{:#?}", p.plan);
    }
    println!("{}{:#?}", summary(&input, &p), check_plan(&input, &p));
    for it in &input.pools[0].instance_types {
        let o: Vec<String> = it
            .offerings
            .iter()
            .map(|o| {
                format!(
                    "{}/{}/{}/{:.3}",
                    o.zone, o.capacity_type, o.available, o.price
                )
            })
            .collect();
        println!(
            "type {} cap {:?} alloc {:?} {o:?}",
            it.name,
            it.capacity.to_strings(),
            it.allocatable().to_strings()
        );
    }
    for p in &input.pools {
        println!(
            "pool {} w{} reqs {:?} labels {:?} taints {:?} limits {:?} usage {:?}",
            p.pool.name,
            p.pool.weight,
            p.pool.requirements,
            p.pool.labels,
            p.pool.taints,
            p.pool.limits,
            p.usage.to_strings()
        );
    }
    for p in &input.pods {
        println!(
            "pod {} req {:?} sel {:?} aff {:?} spread {:?} anti {:?} paff {:?}",
            p.name,
            p.requests.to_strings(),
            p.node_selector,
            p.required_node_affinity,
            p.topology_spread
                .iter()
                .map(|c| (&c.topology_key, c.max_skew, c.when_unsatisfiable))
                .collect::<Vec<_>>(),
            p.pod_anti_affinity.len(),
            p.pod_affinity.len()
        );
    }
}

/// The plan in a few lines: each existing node with its labels that topology reads and its pods,
/// each NodeClaim with its round, zones, capacity types, options, launch and pods.
fn summary(input: &Input, p: &Planned) -> String {
    use crate::model::labels::{CAPACITY_TYPE, ZONE};
    let plan = &p.plan;
    let with_round = |pods: &[String]| -> Vec<String> {
        pods.iter()
            .map(|k| format!("{k}@{}", p.rounds.get(k).copied().unwrap_or(0)))
            .collect()
    };
    let mut out = String::new();
    for e in &input.existing_nodes {
        let n = &e.node;
        let placed: Vec<String> = plan
            .existing_nodes
            .iter()
            .filter(|e| e.node == n.name)
            .flat_map(|e| with_round(&e.pods))
            .collect();
        let bound: Vec<&str> = e.pods.iter().map(|p| p.name.as_str()).collect();
        out += &format!(
            "node {} {:?}/{:?} init {} taints {:?} bound {bound:?} placed {placed:?}\n",
            n.name,
            n.labels.get(ZONE),
            n.labels.get(CAPACITY_TYPE),
            n.initialized,
            n.taints.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        );
    }
    for c in &plan.node_claims {
        let types: Vec<&str> = c.instance_types.iter().map(|o| &*o.name).collect();
        out += &format!(
            "claim {} round {} zones {:?} cts {:?} types {types:?} launch {}/{}/{} pods {:?}\n",
            c.name,
            c.round,
            c.zones,
            c.capacity_types,
            c.launch.instance_type,
            c.launch.zone,
            c.launch.capacity_type,
            with_round(&c.pods)
        );
    }
    for u in &plan.unschedulable {
        out += &format!("pending {}: {}\n", u.pod, u.reason);
    }
    out
}
