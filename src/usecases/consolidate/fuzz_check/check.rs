//! The report checked against the rules it claims, from the generated [`Spec`] and Karpenter
//! v1.14.1's (v0.37.7's, v0.31.4's) semantics — written here, calling none of the engine's
//! helpers. Each rule names its upstream source.

use std::collections::{BTreeMap, BTreeSet};

use super::gen::{Gen, NodeSpec, Owner, Policy, Spec, NOW, TYPES, WINDOWS};
use crate::disruption::consolidation::{Action, ConsolidationReport, Method};

/// Node-level PDB blocks: a pod selected by a PDB whose allowed disruptions are ≤ 0 (every
/// generated pod is Running and Ready; `policy/v1` rounds percentages up). A pod that
/// tolerates every taint tolerates `karpenter.sh/disrupted:NoSchedule`, so it is never evicted
/// and no PDB holds it (core v1.14.1 `utils/pdb/pdb.go` `isEvictable` → `utils/pod/
/// scheduling.go` `IsEvictable`, `ToleratesDisruptedNoScheduleTaint`).
pub(super) fn pdb_blocked(s: &Spec, n: &NodeSpec) -> bool {
    s.pdbs.iter().any(|pdb| {
        let total = s
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .filter(|p| p.app == pdb.app)
            .count() as i64;
        let v = if pdb.percent {
            (i64::from(pdb.value) * total + 99) / 100
        } else {
            i64::from(pdb.value)
        };
        let allowed = if pdb.min_available { total - v } else { v };
        allowed <= 0 && n.pods.iter().any(|p| p.app == pdb.app && !p.tolerates)
    })
}

/// What a replacement of this type can hold at most (millicores, MiB).
fn type_capacity(name: &str) -> (u64, u64) {
    if let Some((_, cpu, gib)) = TYPES.iter().find(|t| t.0 == name) {
        return (u64::from(*cpu) * 1000, u64::from(*gib) * 1024);
    }
    let cpu = match name.rsplit('.').next() {
        Some("2xlarge") => 8,
        Some("xlarge") => 4,
        _ => 2,
    };
    (cpu * 1000, cpu * 8 * 1024)
}

/// The budget reason an action consumes (core v1.14.1 `disruption/types.go` reasons; v0.37:
/// one budget for every method; v0.31: no budgets). `None`: not budgeted.
fn budget_reason(gen: Gen, m: Method) -> Option<&'static str> {
    match (gen, m) {
        (Gen::V1Alpha5, _) | (Gen::V1, Method::Expiration) => None,
        (Gen::V1Beta1, _) => Some(""),
        (Gen::V1, Method::Emptiness) => Some("Empty"),
        (Gen::V1, Method::Drift | Method::StaticDrift) => Some("Drifted"),
        (Gen::V1, Method::Multi | Method::Single) => Some("Underutilized"),
    }
}

/// `GetAllowedDisruptionsByReason`: the minimum over the budgets for the reason; an inactive
/// budget allows any number; percentages round up (core v1.14.1 `apis/v1/nodepool.go`).
pub(super) fn allowed(s: &Spec, pool: usize, reason: &str, num_nodes: u64) -> u64 {
    s.pools[pool]
        .budgets
        .iter()
        .filter(|b| b.reasons.is_empty() || b.reasons.contains(&reason))
        .map(|b| match b.window {
            Some(w) if !WINDOWS[w].2 => u64::MAX,
            _ if b.percent => (u64::from(b.value) * num_nodes).div_ceil(100),
            _ => u64::from(b.value),
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// Every violation found in `report` (empty: consistent).
pub fn check(s: &Spec, report: &ConsolidationReport) -> Vec<String> {
    let mut v = Vec::new();
    super::rows::totals(s, report, &mut v);
    super::check2::check(s, report, &mut v);
    super::check3::check(s, report, &mut v);
    let by_name: BTreeMap<&str, &NodeSpec> = s.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let mut earlier: Vec<&Action> = Vec::new();
    for (k, a) in report.actions.iter().enumerate() {
        let nodes: Vec<&NodeSpec> = a
            .nodes
            .iter()
            .filter_map(|n| by_name.get(n.as_str()).copied())
            .collect();
        if nodes.len() != a.nodes.len() {
            // v0.31 finishes each action before the next pass: a replacement launched earlier
            // is an initialized node by then, and a candidate (engine: `Release::V0_31`).
            let finished = s.gen == Gen::V1Alpha5
                && a.nodes
                    .iter()
                    .all(|n| by_name.contains_key(n.as_str()) || n.contains("-replacement-"));
            if finished {
                earlier.push(a);
                continue;
            }
            v.push(format!(
                "action {k}: names a node not in the input: {:?}",
                a.nodes
            ));
            continue;
        }
        for n in &nodes {
            node_rules(s, a, n, &mut v);
        }
        replace_rules(s, report, a, &mut v);
        budget_rule(s, &earlier, a, &by_name, &mut v);
        let waits: BTreeSet<&str> = report
            .nodes
            .iter()
            .flat_map(|n| &n.drain_waits_for)
            .map(String::as_str)
            .collect();
        fit_rule(s, &earlier, a, &by_name, &waits, &mut v);
        earlier.push(a);
    }
    v
}

/// The candidate rules of one disrupted node.
fn node_rules(s: &Spec, a: &Action, n: &NodeSpec, v: &mut Vec<String>) {
    let pool = &s.pools[n.pool];
    let m = a.method;
    let consolidating = matches!(m, Method::Emptiness | Method::Multi | Method::Single);
    // v1 expiration is forceful: the expiration controller deletes the NodeClaim whatever
    // blocks a graceful disruption (core v1.14.1 `nodeclaim/expiration/controller.go`).
    let graceful = !(s.gen == Gen::V1 && m == Method::Expiration);
    // v0.31 is checked only where its rules are the same for every method: consolidation.
    let strict =
        graceful && (s.gen != Gen::V1Alpha5 || matches!(m, Method::Multi | Method::Single));
    let mut bad = |why: &str| {
        v.push(format!(
            "{} disrupted by {m} ({:?}): {why}",
            n.name, a.decision
        ))
    };
    if graceful && !n.initialized {
        bad("not initialized (statenode.go ValidateNodeDisruptable)");
    }
    if strict && n.pods.iter().any(|p| p.do_not_disrupt) {
        bad("a do-not-disrupt pod (statenode.go ValidatePodsDisruptable)");
    }
    if strict && n.do_not_disrupt {
        bad("the node's do-not-disrupt annotation");
    }
    if strict && pdb_blocked(s, n) {
        bad("a PDB allowing no disruption (pdblimits.go CanEvictPods)");
    }
    let reschedulable = n.pods.iter().any(|p| p.owner != Owner::DaemonSet);
    if m == Method::Emptiness && reschedulable {
        bad("emptiness of a node with reschedulable pods (emptiness.go)");
    }
    let when_empty = pool.policy == Policy::WhenEmpty
        || (s.gen == Gen::V1Alpha5 && pool.consolidate_after.is_none());
    if matches!(m, Method::Multi | Method::Single) && when_empty {
        bad("underutilized consolidation in a WhenEmpty pool (consolidation.go ShouldDisrupt)");
    }
    if consolidating && s.gen == Gen::V1 {
        // nodeclaim/disruption/consolidation.go: lastPodEventTime, else Initialized, plus consolidateAfter.
        match pool.consolidate_after {
            None => bad("consolidateAfter: Never"),
            Some(after) => {
                let since = n.last_pod_event_age.map_or(n.init_at(), |age| NOW - age);
                if NOW - since < after {
                    bad("within consolidateAfter");
                }
            }
        }
    }
    if m == Method::Expiration && pool.expire_after.is_none_or(|e| n.age < e) {
        bad("expiration before expireAfter (nodeclaim/expiration/controller.go)");
    }
    if m == Method::Drift && !n.drifted {
        bad("drift of a NodeClaim not drifted");
    }
}

/// Consolidation replaces with exactly one cheaper NodeClaim; spot-to-spot only with the gate
/// and, for one node, the 15 cheapest options (core v1.14.1 `disruption/consolidation.go`
/// `computeConsolidation`, `computeSpotToSpotConsolidation`).
fn replace_rules(s: &Spec, r: &ConsolidationReport, a: &Action, v: &mut Vec<String>) {
    if !matches!(a.method, Method::Multi | Method::Single) {
        return;
    }
    let Some(rep) = &a.replacement else { return };
    if !a.additional_replacements.is_empty() {
        v.push(format!(
            "{:?}: consolidation launches {} NodeClaims",
            a.nodes,
            1 + a.additional_replacements.len()
        ));
    }
    let rows: Vec<_> = r
        .nodes
        .iter()
        .filter(|n| a.nodes.contains(&n.name))
        .collect();
    let total: Option<f64> = rows.iter().map(|n| n.price_per_hour).sum();
    if let Some(total) = total {
        if rep.price_per_hour >= total {
            v.push(format!(
                "{:?}: replacement ${} not cheaper than ${total}",
                a.nodes, rep.price_per_hour
            ));
        }
    }
    // How many options a single spot-to-spot keeps: check2 (minValues can raise the 15).
    if rows.iter().all(|n| n.capacity_type == "spot")
        && rep.capacity_type == "spot"
        && !s.spot_to_spot
    {
        v.push(format!("{:?}: spot-to-spot without the gate", a.nodes));
    }
}

/// Per pool and reason: nodes disrupting (NotReady or in an earlier action, initialized) plus
/// this action's never exceed the allowed count (core v1.14.1 `disruption/helpers.go`
/// `BuildDisruptionBudgetMapping`; v0.37.7 `BuildDisruptionBudgets`).
fn budget_rule(
    s: &Spec,
    earlier: &[&Action],
    a: &Action,
    by_name: &BTreeMap<&str, &NodeSpec>,
    v: &mut Vec<String>,
) {
    let Some(reason) = budget_reason(s.gen, a.method) else {
        return;
    };
    let gone: BTreeSet<&str> = earlier
        .iter()
        .flat_map(|e| &e.nodes)
        .map(String::as_str)
        .collect();
    for pool in 0..s.pools.len() {
        let here = a
            .nodes
            .iter()
            .filter(|n| by_name[n.as_str()].pool == pool && by_name[n.as_str()].initialized)
            .count() as u64;
        if here == 0 {
            continue;
        }
        let members: Vec<&NodeSpec> = s
            .nodes
            .iter()
            .filter(|n| n.pool == pool && n.initialized)
            .collect();
        let disrupting = members
            .iter()
            .filter(|n| !n.ready || gone.contains(n.name.as_str()))
            .count() as u64;
        let limit = allowed(s, pool, reason, members.len() as u64);
        if disrupting + here > limit {
            v.push(format!(
                "pool-{pool} {reason:?}: {disrupting} disrupting + {here} in {:?} > allowed {limit} of {} nodes",
                a.nodes,
                members.len()
            ));
        }
    }
}

/// The pods an action moves fit on what remains: each on some node that takes it (requests,
/// taints, zone selector) and all of them together in the room left, replacements included.
/// Necessary conditions only: the engine's own packing is not redone.
fn fit_rule(
    s: &Spec,
    earlier: &[&Action],
    a: &Action,
    by_name: &BTreeMap<&str, &NodeSpec>,
    waits: &BTreeSet<&str>,
    v: &mut Vec<String>,
) {
    let pod_of = |name: &str| {
        s.nodes
            .iter()
            .flat_map(|n| n.pods.iter().map(move |p| (n, p)))
            .find(|(_, p)| format!("default/{}", p.name) == name)
    };
    for name in &a.nodes {
        for p in by_name[name.as_str()]
            .pods
            .iter()
            .filter(|p| p.owner != Owner::DaemonSet)
        {
            let full = format!("default/{}", p.name);
            // v1 expiration's drain waits for do-not-disrupt and PDB-held pods (`drainWaitsFor`).
            if !a.pods.contains(&full)
                && !a.pods_left_pending.contains(&full)
                && !waits.contains(full.as_str())
            {
                v.push(format!(
                    "{:?}: pod {full} neither moves nor goes pending",
                    a.nodes
                ));
            }
        }
    }
    let all: Vec<&Action> = earlier.iter().copied().chain([a]).collect();
    let gone: BTreeSet<&str> = all
        .iter()
        .flat_map(|e| &e.nodes)
        .map(String::as_str)
        .collect();
    let survivors: Vec<&NodeSpec> = s
        .nodes
        .iter()
        .filter(|n| !gone.contains(n.name.as_str()))
        .collect();
    let launched: Vec<(u64, u64)> = all
        .iter()
        .flat_map(|e| e.replacement.iter().chain(&e.additional_replacements))
        .map(|r| type_capacity(&r.instance_type))
        .collect();
    let free = |n: &NodeSpec| {
        let (c, m) = n.allocatable();
        (
            c - n.pods.iter().map(|p| p.cpu_m).sum::<u64>(),
            m - n.pods.iter().map(|p| p.mem_mi).sum::<u64>(),
        )
    };
    for name in &a.pods {
        let Some((_, p)) = pod_of(name) else {
            v.push(format!("{:?}: moves unknown pod {name}", a.nodes));
            continue;
        };
        let fits_original = survivors.iter().any(|n| {
            let (c, m) = free(n);
            c >= p.cpu_m
                && m >= p.mem_mi
                && (!s.pools[n.pool].tainted || p.tolerates)
                && p.zone_selector.is_none_or(|z| z == n.zone)
        });
        let fits_new = launched.iter().any(|&(c, m)| c >= p.cpu_m && m >= p.mem_mi);
        if !fits_original && !fits_new {
            v.push(format!(
                "{:?} ({}): pod {name} fits on no remaining node",
                a.nodes, a.method
            ));
        }
    }
    let moved: BTreeSet<&str> = all
        .iter()
        .flat_map(|e| &e.pods)
        .map(String::as_str)
        .collect();
    let need = moved
        .iter()
        .filter_map(|n| pod_of(n))
        .fold((0, 0), |(c, m), (_, p)| (c + p.cpu_m, m + p.mem_mi));
    let room = survivors
        .iter()
        .map(|n| free(n))
        .chain(launched)
        .fold((0, 0), |(c, m), (x, y)| (c + x, m + y));
    if need.0 > room.0 || need.1 > room.1 {
        v.push(format!(
            "after {:?}: moved pods need {need:?} (m, Mi), room left {room:?}",
            a.nodes
        ));
    }
}
