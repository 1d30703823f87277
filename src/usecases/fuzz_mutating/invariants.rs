//! What must hold, however a case went: watched at every tick of the clock (budgets, the
//! PodDisruptionBudget) and checked once the clean re-run finished and the world settled
//! (instances, pods, do-not-disrupt, what was left tainted).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;

use super::world::Made;
use crate::disruption::replace::{Record, Status, REPLACEMENT};
use crate::k8s::Method;
use crate::model::labels::NODECLAIM;
use crate::usecases::replace::NodeOutcome;
use crate::usecases::testing::{node_name, World};

/// The violations found, one line each.
pub type Violations = Rc<RefCell<Vec<String>>>;

pub(super) fn name(v: &Value) -> String {
    v["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn tainted_by_us(node: &Value) -> bool {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["key"] == "karpenter.sh/disrupted")
}

/// Whether a node is being disrupted: recorded, tainted by a disruption, or being deleted.
pub(super) fn disrupting(node: &Value) -> bool {
    node["metadata"]["annotations"][REPLACEMENT].is_string()
        || tainted_by_us(node)
        || !node["metadata"]["deletionTimestamp"].is_null()
}

/// The nodes the pool's budget allows in disruption out of `total` (Karpenter rounds a
/// percentage up; no budget is `10%`: core v1.14.1 `nodepool.go GetAllowedDisruptionsByReason`,
/// `intstr.GetScaledValueFromIntOrPercent(…, true)`).
fn allowed(budget: Option<&str>, total: usize) -> usize {
    let percent = |p: usize| (p * total).div_ceil(100);
    match budget {
        None => percent(10),
        Some(b) => match b.strip_suffix('%') {
            Some(p) => percent(p.parse().unwrap_or(0)),
            None => b.parse().unwrap_or(0),
        },
    }
}

/// Watches every tick: no more nodes of the pool in disruption than its budget allows, and no
/// more `db` pods unavailable than its PodDisruptionBudget allows.
pub fn watch(world: &World, made: &Made, found: &Violations) {
    let (cluster, made, found) = (world.cluster.clone(), made.clone(), found.clone());
    world.clock.on_tick(move |now| {
        let nodes = cluster.list("v1", "Node");
        let pool: Vec<&Value> = nodes
            .iter()
            .filter(|n| n["metadata"]["labels"]["karpenter.sh/nodepool"] == "default")
            .collect();
        // A v1 NodeClaim past its expireAfter goes whatever the budget (forceful: core v1.14.1
        // `nodeclaim/expiration/controller.go`): only the others are held to it.
        let expired = |n: &Value| {
            made.expires
                .get(&name(n))
                .is_some_and(|at| *at <= now.as_secs() as i64)
        };
        let busy = pool.iter().filter(|n| disrupting(n) && !expired(n)).count();
        let may = allowed(made.budget.as_deref(), pool.len());
        let mut found = found.borrow_mut();
        if busy > may && found.iter().all(|f| !f.starts_with("budget")) {
            found.push(format!(
                "budget: {busy} of {} nodes in disruption at {now:?}, the budget {:?} allows {may}",
                pool.len(),
                made.budget
            ));
        }
        let Some(max) = made.db_max_unavailable else {
            return;
        };
        let alive: Vec<String> = nodes.iter().map(name).collect();
        let want = made.replicas.get("db").copied().unwrap_or(0) as i64;
        let healthy = cluster
            .list("v1", "Pod")
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "db")
            .filter(|p| p["status"]["phase"] == "Running")
            .filter(|p| {
                p["spec"]["nodeName"]
                    .as_str()
                    .is_some_and(|n| alive.iter().any(|a| a == n))
            })
            .count() as i64;
        if want - healthy > max && found.iter().all(|f| !f.starts_with("pdb")) {
            found.push(format!(
                "pdb: {} of {want} db pods unavailable at {now:?}, maxUnavailable {max}",
                want - healthy
            ));
        }
    });
}

/// The checks after the clean re-run: `outcomes` are its nodes' (replace, consolidate), `lost`
/// the pods pending that no plan places (more than before the case: pods lost).
pub fn check(world: &World, made: &Made, outcomes: &[NodeOutcome], lost: i64, found: &Violations) {
    let mut out = Vec::new();
    let running = world.running();
    let mut per_claim: BTreeMap<String, usize> = BTreeMap::new();
    for i in &running {
        if let Some(c) = i.tags.get(NODECLAIM) {
            *per_claim.entry(c.clone()).or_default() += 1;
        }
    }
    for (claim, n) in per_claim.iter().filter(|(_, n)| **n > 1) {
        out.push(format!(
            "claims: NodeClaim {claim} has {n} running instances"
        ));
    }
    let nodes = world.nodes();
    let alive: Vec<String> = nodes.iter().map(name).collect();
    for i in &running {
        if !alive.contains(&node_name(&i.id)) {
            out.push(format!("orphan: instance {} runs without its Node", i.id));
        }
    }
    for p in world.cluster.list("v1", "Pod") {
        if let Some(n) = p["spec"]["nodeName"].as_str() {
            if !alive.iter().any(|a| a == n) {
                out.push(format!(
                    "pod lost: {} bound to {n}, which is gone",
                    name(&p)
                ));
            }
        }
    }
    if lost > 0 {
        out.push(format!(
            "pod lost: {lost} more pods pending that no plan places"
        ));
    }
    for r in world.cluster.requests() {
        let evicted = r.path.strip_suffix("/eviction");
        if let Some(pod) = evicted
            .and_then(|p| p.rsplit_once("/pods/"))
            .map(|(_, p)| p)
        {
            if made.keep_pods.contains(&format!("default/{pod}")) {
                out.push(format!("do-not-disrupt: pod {pod} was evicted"));
            }
        }
        if r.method == Method::Delete && r.path.contains("/pods/") {
            out.push(format!("pdb: pod deleted directly, {}", r.path));
        }
        if r.method == Method::Delete {
            if let Some(n) = r.path.strip_prefix("/api/v1/nodes/") {
                // An expired node goes whatever its do-not-disrupt (forceful).
                if made.keep_nodes.contains(n) && !made.expires.contains_key(n) {
                    out.push(format!("do-not-disrupt: node {n} was deleted"));
                }
            }
        }
    }
    for n in &nodes {
        let node = name(n);
        let record = n["metadata"]["annotations"][REPLACEMENT]
            .as_str()
            .and_then(Record::parse);
        let failed = outcomes
            .iter()
            .any(|o| o.node == node && o.status == Status::Failed);
        let left = tainted_by_us(n) || (record.is_some() && n["spec"]["unschedulable"] == true);
        if left && !(failed && record.is_some()) {
            let status = outcomes.iter().find(|o| o.node == node).map(|o| o.status);
            out.push(format!(
                "left tainted: {node} after a finished run (outcome {status:?}, record {})",
                record.is_some()
            ));
        }
    }
    found.borrow_mut().extend(out);
}
