//! Round 2 (s33-fuzzcons2) of the report's rules: spot-to-spot acceptance, capacity
//! reservations, `minValues` on replacements and the multi-node same-type filter, each from
//! Karpenter v1.14.1's source and computed here from the generated [`Spec`] and the catalog it
//! wrote — none of the engine's helpers.

use std::collections::{BTreeMap, BTreeSet};

use super::gen::{Gen, NodeSpec, Pool, Spec};
use crate::disruption::consolidation::{
    Action, ConsolidationReport, Method, NodeReport, Replacement,
};

/// `MinInstanceTypesForSpotToSpotConsolidation` (core v1.14.1 `disruption/consolidation.go`).
const SPOT_TO_SPOT: usize = 15;

/// Karpenter prices reserved capacity at the type's on-demand price / 10,000,000 (aws v1.14.1
/// `instancetype/offering/reserved_capacity_resolver.go`; docs/spec.md §5.5).
const RESERVED_DIVISOR: f64 = 10_000_000.0;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// The available offerings of a type: (zone, capacity type, price). A reservation is offered
/// with the `ReservedCapacity` gate on, when the class selects it and it has instances left.
fn offerings<'s>(s: &'s Spec, itype: &str) -> Vec<(&'s str, &'s str, f64)> {
    let Some((_, _, _, offers)) = s.catalog.iter().find(|t| t.0 == itype) else {
        return Vec::new();
    };
    let mut out: Vec<(&str, &str, f64)> = offers
        .iter()
        .filter(|o| o.3)
        .map(|&(z, ct, p, _)| (z, ct, p))
        .collect();
    for r in s.reservations.iter().filter(|r| r.itype == itype) {
        if s.reserved_gate && r.selected && r.count > 0 {
            out.push((r.zone, "reserved", reserved_price(s, itype, r.zone)));
        }
    }
    out
}

fn reserved_price(s: &Spec, itype: &str, zone: &str) -> f64 {
    s.catalog
        .iter()
        .find(|t| t.0 == itype)
        .and_then(|t| t.3.iter().find(|o| o.0 == zone && o.1 == "on-demand"))
        .map_or(0.0, |o| o.2 / RESERVED_DIVISOR)
}

/// `WorstLaunchPrice` in `zones`: the most expensive available offering of the first capacity
/// type of reserved, spot, on-demand that `cts` allows and the type offers there (core v1.14.1
/// `cloudprovider/types.go`).
fn worst(s: &Spec, itype: &str, zones: &[String], cts: &[&str]) -> f64 {
    let offers = offerings(s, itype);
    for ct in ["reserved", "spot", "on-demand"] {
        if !cts.contains(&ct) {
            continue;
        }
        let max = offers
            .iter()
            .filter(|o| o.1 == ct && zones.iter().any(|z| z == o.0))
            .map(|o| o.2)
            .fold(f64::NAN, f64::max);
        if !max.is_nan() {
            return max;
        }
    }
    f64::MAX
}

/// The cheapest available offering of `ct` in `zones`.
fn cheapest(s: &Spec, itype: &str, zones: &[String], ct: &str) -> Option<f64> {
    offerings(s, itype)
        .iter()
        .filter(|o| o.1 == ct && zones.iter().any(|z| z == o.0))
        .map(|o| o.2)
        .min_by(f64::total_cmp)
}

/// The types a pool's requirements admit from the catalog.
fn pool_types<'s>(s: &'s Spec, p: &Pool) -> Vec<&'s str> {
    s.catalog
        .iter()
        .map(|t| t.0)
        .filter(|name| {
            if !p.types.is_empty() {
                return p.types.contains(name);
            }
            let (family, size) = name.split_once('.').unwrap_or((name, ""));
            "cmr".contains(&family[..1]) && ["large", "xlarge", "2xlarge"].contains(&size)
        })
        .collect()
}

/// How many of `types` (from the first) `SatisfiesMinValues` needs, or `None` when they fall
/// short (core v1.14.1 `cloudprovider/types.go`).
fn min_values_prefix(p: &Pool, types: &[String]) -> Option<usize> {
    let Some((key, min)) = p.min_values else {
        return Some(0);
    };
    let mut seen = BTreeSet::new();
    for (i, t) in types.iter().enumerate() {
        seen.insert(key.value(t));
        if seen.len() >= min as usize {
            return Some(i + 1);
        }
    }
    None
}

fn pool_of<'s>(s: &'s Spec, name: &str) -> Option<&'s Pool> {
    s.pools.iter().find(|p| p.name == name)
}

/// Every round-2 violation in `report`.
pub fn check(s: &Spec, report: &ConsolidationReport, v: &mut Vec<String>) {
    let rows: BTreeMap<&str, &NodeReport> =
        report.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let nodes: BTreeMap<&str, &NodeSpec> = s.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    for n in &s.nodes {
        if let Some(row) = rows.get(n.name.as_str()) {
            node_price(s, n, row, v);
            explanation(s, n, row, v);
        }
    }
    let mut into: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &report.actions {
        for rep in a.replacement.iter().chain(&a.additional_replacements) {
            reserved_launch(s, a, rep, v);
            if let Some(id) = &rep.capacity_reservation_id {
                *into.entry(id.as_str()).or_default() += 1;
            }
            if let Some(p) = pool_of(s, &rep.node_pool) {
                // BestEffort lowers an unmet minValues to what the NodeClaim's types give
                // (core v1.14.1 `scheduling/nodeclaim.go` `CanAdd` with `relaxMinValues`), and the
                // price filter holds the options to that (`RemoveInstanceTypeOptionsByPriceAndMinValues`).
                if s.gen != Gen::V1Alpha5
                    && !s.best_effort
                    && min_values_prefix(p, &rep.instance_types).is_none()
                {
                    v.push(format!(
                        "{:?}: replacement options {:?} miss minValues {:?} (consolidation.go RemoveInstanceTypeOptionsByPriceAndMinValues)",
                        a.nodes, rep.instance_types, p.min_values
                    ));
                }
            }
        }
        if matches!(a.method, Method::Single | Method::Multi) {
            let candidates: Vec<&NodeReport> = a
                .nodes
                .iter()
                .filter_map(|n| rows.get(n.as_str()).copied())
                .collect();
            let known: Vec<&NodeSpec> = a
                .nodes
                .iter()
                .filter_map(|n| nodes.get(n.as_str()).copied())
                .collect();
            if let (Some(rep), true) = (&a.replacement, candidates.len() == a.nodes.len()) {
                consolidation_options(s, a, rep, &candidates, &known, v);
            }
        }
    }
    // Each launch into a reservation takes one of its instances (aws v1.14.1
    // `capacityreservation` `MarkLaunched`): the report's commands run one after another.
    for (id, n) in into {
        let count = s
            .reservations
            .iter()
            .find(|r| r.id == id)
            .map_or(0, |r| r.count);
        if n as u32 > count {
            v.push(format!(
                "{n} replacements launch into {id}, which has {count} left"
            ));
        }
    }
}

/// A node's price is its offering's (aws v1.14.1 pricing; a reserved node's, its
/// reservation's on-demand / 10,000,000).
fn node_price(s: &Spec, n: &NodeSpec, row: &NodeReport, v: &mut Vec<String>) {
    let want = match (n.capacity_type, &n.reservation) {
        ("reserved", Some(_)) => {
            // `OfferingPrice(zone, capacityType)`: the first offering of the node's type, zone
            // and capacity type — any selected reservation's, not only the node's own (core
            // v1.14.1 `cloudprovider/types.go`; seed 1188, round 3).
            let offered = s
                .reservations
                .iter()
                .any(|r| r.selected && r.itype == n.itype && r.zone == n.zone);
            if !(offered && s.reserved_gate) {
                // No reserved offering (the gate off, or a reservation the class does not
                // select): Karpenter prices the node 0 (core v1.14.1 `disruption/types.go`
                // `resolveNodePrice`); the report shows it unknown.
                if row.price_per_hour.is_some_and(|p| p != 0.0) {
                    v.push(format!(
                        "{} (reserved, no reserved offering): price {:?}, want unknown or 0",
                        n.name, row.price_per_hour
                    ));
                }
                return;
            }
            reserved_price(s, n.itype, n.zone)
        }
        (ct, _) => match s
            .catalog
            .iter()
            .find(|t| t.0 == n.itype)
            .and_then(|t| t.3.iter().find(|o| o.0 == n.zone && o.1 == ct))
        {
            Some(o) => o.2,
            None => return,
        },
    };
    if row.price_per_hour.is_none_or(|p| !close(p, want)) {
        v.push(format!(
            "{} ({} {} {}): price {:?}, its offering costs {want}",
            n.name, n.itype, n.zone, n.capacity_type, row.price_per_hour
        ));
    }
}

/// A launch into a reservation: the gate on, a pool allowing `reserved`, a reservation of the
/// catalog the class selects, of that type, in one of the zones, with instances left, at its
/// price (core v1.14.1 `scheduling/nodeclaim.go` `offeringsToReserve`, `FinalizeScheduling`;
/// consolidation_test.go "Reserved Capacity" "can consolidate from one reserved offering to
/// another", "can consolidate into reserved capacity").
fn reserved_launch(s: &Spec, a: &Action, rep: &Replacement, v: &mut Vec<String>) {
    let mut bad = |why: String| v.push(format!("{:?} → {}: {why}", a.nodes, rep.instance_type));
    if rep.capacity_type != "reserved" {
        if rep.capacity_reservation_id.is_some() {
            bad(format!("{} launch names a reservation", rep.capacity_type));
        }
        return;
    }
    if !s.reserved_gate {
        bad("reserved launch with the ReservedCapacity gate off".into());
    }
    if pool_of(s, &rep.node_pool).is_some_and(|p| !p.capacity_types.contains(&"reserved")) {
        bad("reserved launch from a pool without reserved".into());
    }
    let Some(id) = &rep.capacity_reservation_id else {
        bad("reserved launch without a reservation".into());
        return;
    };
    match s.reservations.iter().find(|r| &r.id == id) {
        Some(r)
            if r.selected
                && r.count > 0
                && r.itype == rep.instance_type
                && rep.zones.iter().any(|z| z == r.zone) =>
        {
            let price = reserved_price(s, r.itype, r.zone);
            if !close(rep.price_per_hour, price) {
                bad(format!("priced {} not {price}", rep.price_per_hour));
            }
        }
        r => bad(format!("reservation {id} does not offer it: {r:?}")),
    }
}

/// The options of a consolidation's replacement: each launches below the candidates' price;
/// a multi-node one keeps no option at or above a removed node's own type's price; a single
/// spot-to-spot one keeps the 15 cheapest (or what minValues needs), cheapest first (core
/// v1.14.1 `disruption/consolidation.go` `computeConsolidation`, `computeSpotToSpotConsolidation`;
/// `multinodeconsolidation.go` `filterOutSameInstanceType`; consolidation_test.go "Spot to Spot":
/// "spot to spot consolidation should order the instance types by price before enforcing
/// minimum flexibility.", "…consider the max of default and minimum number of
/// instanceTypeOptions from minValues…", "…consider the default for truncation…").
fn consolidation_options(
    s: &Spec,
    a: &Action,
    rep: &Replacement,
    candidates: &[&NodeReport],
    known: &[&NodeSpec],
    v: &mut Vec<String>,
) {
    let Some(price) = candidates
        .iter()
        .map(|c| c.price_per_hour)
        .sum::<Option<f64>>()
    else {
        return;
    };
    let Some(pool) = pool_of(s, &rep.node_pool) else {
        return;
    };
    let all_spot = candidates.iter().all(|c| c.capacity_type == "spot");
    let spot_to_spot = all_spot && rep.capacity_type == "spot";
    let cts: Vec<&str> = if spot_to_spot {
        vec!["spot"]
    } else {
        pool.capacity_types.clone()
    };
    for t in &rep.instance_types {
        let w = worst(s, t, &rep.zones, &cts);
        if w >= price {
            v.push(format!(
                "{:?} ({}): option {t} launches at up to {w} ≥ the candidates' {price}",
                a.nodes, a.method
            ));
        }
    }
    if a.method == Method::Multi {
        // filterOutSameInstanceType: an option of a removed node's type must cost less than it.
        let same: Vec<f64> = known
            .iter()
            .zip(candidates)
            .filter(|(n, _)| rep.instance_types.iter().any(|t| t == n.itype))
            .filter_map(|(_, c)| c.price_per_hour)
            .collect();
        if let Some(max) = same.into_iter().reduce(f64::min) {
            for t in &rep.instance_types {
                let w = worst(s, t, &rep.zones, &cts);
                if w >= max {
                    v.push(format!(
                        "{:?} (multi): option {t} at {w} not below a removed node of the same type at {max}",
                        a.nodes
                    ));
                }
            }
        }
    }
    if !spot_to_spot || candidates.len() != 1 {
        return;
    }
    let n = rep.instance_types.len();
    let minimal = match pool.min_values {
        None => n == SPOT_TO_SPOT,
        Some(_) => {
            n == SPOT_TO_SPOT
                || (n > SPOT_TO_SPOT
                    && min_values_prefix(pool, &rep.instance_types[..n - 1]).is_none())
        }
    };
    if !minimal {
        v.push(format!(
            "{:?}: single spot-to-spot keeps {n} options (15, or what minValues {:?} needs)",
            a.nodes, pool.min_values
        ));
    }
    let keys: Vec<f64> = rep
        .instance_types
        .iter()
        .map(|t| cheapest(s, t, &rep.zones, "spot").unwrap_or(f64::MAX))
        .collect();
    if keys.windows(2).any(|w| w[0] > w[1]) {
        v.push(format!(
            "{:?}: spot-to-spot options not cheapest first: {:?}",
            a.nodes,
            rep.instance_types.iter().zip(&keys).collect::<Vec<_>>()
        ));
    }
    if rep.instance_types.first() != Some(&rep.instance_type) || !close(rep.price_per_hour, keys[0])
    {
        v.push(format!(
            "{:?}: spot-to-spot launches {} at {}, not its cheapest option {:?} at {}",
            a.nodes,
            rep.instance_type,
            rep.price_per_hour,
            rep.instance_types.first(),
            keys[0]
        ));
    }
}

/// The number after `word` in `text`.
fn number_after(text: &str, word: &str) -> Option<usize> {
    let rest = &text[text.find(word)? + word.len()..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The explanations of the round-2 paths say their numbers, and the numbers hold: spot-to-spot
/// "needs 15 cheaper types, N found" with N below 15 and within what the catalog offers; a
/// minValues shortfall names the pool's minimum and fewer values left.
fn explanation(s: &Spec, n: &NodeSpec, row: &NodeReport, v: &mut Vec<String>) {
    let Some(reason) = &row.reason else { return };
    let text = reason.to_string();
    let mut bad = |why: String| v.push(format!("{} left alone, \"{text}\": {why}", n.name));
    match reason.kind() {
        "spot-to-spot-too-few" => {
            let (Some(needed), Some(found)) =
                (number_after(&text, "needs"), number_after(&text, "types,"))
            else {
                return bad("the numbers are missing".into());
            };
            if needed != SPOT_TO_SPOT || found >= SPOT_TO_SPOT {
                bad(format!("needs {needed}, found {found}"));
            }
            if !s.spot_to_spot || n.capacity_type != "spot" {
                bad("not a spot node with the gate on".into());
            }
            let Some(price) = row.price_per_hour else {
                return;
            };
            let all = [
                "us-east-1a".to_string(),
                "us-east-1b".to_string(),
                "us-east-1c".to_string(),
            ];
            // At most every spot type of a spot pool that is cheaper somewhere.
            let upper: BTreeSet<&str> = s
                .pools
                .iter()
                .filter(|p| p.capacity_types.contains(&"spot"))
                .flat_map(|p| pool_types(s, p))
                .filter(|t| cheapest(s, t, &all, "spot").is_some_and(|c| c < price))
                .collect();
            if found > upper.len() {
                bad(format!(
                    "found {found} > {} spot types cheaper anywhere",
                    upper.len()
                ));
            }
            // At least the types of the only pool that surely hold the node's pods, when no pod
            // narrows the zones.
            let free = n
                .pods
                .iter()
                .all(|p| p.zone_selector.is_none() && !p.spread && !p.anti_affinity);
            if s.pools.len() == 1 && free {
                let (cpu, mem) = n
                    .pods
                    .iter()
                    .fold((0, 0), |(c, m), p| (c + p.cpu_m, m + p.mem_mi));
                let lower: Vec<&str> = pool_types(s, &s.pools[0])
                    .into_iter()
                    .filter(|t| surely_fits(s, t, cpu, mem))
                    .filter(|t| worst(s, t, &all, &["spot"]) < price)
                    .collect();
                if found < lower.len() {
                    bad(format!(
                        "found {found} < {} cheaper spot types that hold its pods: {lower:?}",
                        lower.len()
                    ));
                }
            }
        }
        "min-values" => {
            // The replacement may come from another pool than the node's (the heaviest that
            // takes the pods): some pool asks this key and minimum.
            let needs = number_after(&text, "needs");
            let left = number_after(&text, ",");
            let asked = s
                .pools
                .iter()
                .filter_map(|p| p.min_values)
                .any(|(key, min)| {
                    // BestEffort: the relaxed minimum, at most the pool's.
                    let asked = needs == Some(min as usize)
                        || (s.best_effort && needs.is_some_and(|n| n <= min as usize));
                    text.contains(key.label()) && asked
                });
            // An empty list meets minValues (`SatisfiesMinValues` loops over nothing): that is
            // "not cheaper", never "0 left".
            if !asked || left.is_none_or(|l| l == 0 || Some(l) >= needs) {
                bad("no pool asks that minValues, or the count left is 0 or not below it".into());
            }
        }
        _ => {}
    }
}

/// Whether a type surely holds `cpu` millicores and `mem` MiB after its overhead (generous:
/// 200m and 10 % + 1,300 MiB; Karpenter's AWS formulas take less, karpenter.md §6.3).
fn surely_fits(s: &Spec, itype: &str, cpu: u64, mem: u64) -> bool {
    s.catalog.iter().any(|t| {
        t.0 == itype
            && u64::from(t.1) * 1000 >= cpu + 200
            && u64::from(t.2) * 1024 * 9 / 10 >= mem + 1300
    })
}
