//! NodeClaims against their own requirements, `minValues` and NodePool limits (core v1.14.1
//! `scheduling/scheduler.go` `subtractMax`, `nodeclaim.go` `filterInstanceTypesByRequirements`).

use std::collections::BTreeMap;

use super::check::{violation, Violation};
use super::node::{admits, type_labels};
use crate::model::instance_type::InstanceType;
use crate::model::labels::INSTANCE_TYPE;
use crate::model::resources::Resources;
use crate::scheduling::{Input, Plan};

/// Launch options against the claim's own requirements, `minValues`, and NodePool limits
/// (`scheduler.go` `subtractMax`: within a round each NodeClaim holds its largest option
/// against the limit; a later round counts the earlier ones as launched).
pub(super) fn check_claims(input: &Input, plan: &Plan, out: &mut Vec<Violation>) {
    let mut used: BTreeMap<&str, Resources> = input
        .pools
        .iter()
        .map(|p| (p.pool.name.as_str(), p.usage.clone()))
        .collect();
    let mut base = used.clone();
    let mut round_max: BTreeMap<&str, Resources> = BTreeMap::new();
    let mut round = 1;
    for c in &plan.node_claims {
        let Some(pool) = input.pools.iter().find(|p| p.pool.name == c.node_pool) else {
            continue;
        };
        if c.round != round {
            round = c.round;
            round_max.clear();
            base = used.clone();
        }
        let types: Vec<&InstanceType> = c
            .instance_types
            .iter()
            .filter_map(|o| pool.instance_types.iter().find(|t| *t.name == *o.name))
            .collect();
        for it in &types {
            for r in c.requirements.iter().filter(|r| r.key != INSTANCE_TYPE) {
                if let Some(v) = type_labels(it).get(&r.key) {
                    if !admits(r, v) {
                        out.push(violation(
                            "option against claim requirements",
                            format!("{} as {}: {}", c.name, it.name, r.key),
                        ));
                    }
                }
            }
        }
        let min_values = pool
            .pool
            .requirements
            .iter()
            .filter(|r| r.key == INSTANCE_TYPE)
            .filter_map(|r| r.min_values)
            .max();
        if let Some(m) = min_values {
            if types.len() < m as usize {
                out.push(violation(
                    "minValues",
                    format!("{}: {} types < {m}", c.name, types.len()),
                ));
            }
        }
        let base = base.get(c.node_pool.as_str()).cloned().unwrap_or_default();
        let held = round_max.entry(pool.pool.name.as_str()).or_default();
        for (key, limit) in &pool.pool.limits {
            let taken = base.get(key) + held.get(key);
            for it in &types {
                if taken + it.capacity.get(key) > *limit {
                    out.push(violation(
                        "limit",
                        format!(
                            "{} as {}: {key} {} + {} > {limit}",
                            c.name,
                            it.name,
                            taken,
                            it.capacity.get(key)
                        ),
                    ));
                }
            }
        }
        let max = types
            .iter()
            .fold(Resources::new(), |m, t| m.max(&t.capacity));
        held.add_assign(&max);
        if let Some(it) = pool
            .instance_types
            .iter()
            .find(|t| t.name == c.launch.instance_type)
        {
            used.entry(pool.pool.name.as_str())
                .or_default()
                .add_assign(&it.capacity);
        }
    }
}
