//! Scheduling rounds: what Karpenter's next batches do with the pods a batch leaves pending.
//!
//! Within one `Solve` a new NodeClaim reserves the *largest* capacity among its instance-type
//! options against its NodePool's limits (`subtractMax`, `core: pkg/controllers/provisioning/
//! scheduling/scheduler.go`; its comment: "This could cause a batch of pods to take multiple
//! rounds to schedule"). The pods that leaves over stay pending, and the provisioner's next batch
//! schedules them a few seconds later against the capacity actually *launched*: the earlier
//! NodeClaims are in-flight nodes of cluster state, counted at their launched size
//! (`updateRemainingResources`, `calculateExistingNodeClaims`). Upstream tests, `core:
//! pkg/controllers/provisioning/suite_test.go` "Resource Limits": "should partially schedule if
//! limits would be exceeded" (one batch) and "should not schedule to a nodepool after a
//! scheduling round if limits would be exceeded" (the second batch counts the first's launched
//! 2-CPU node, not its largest option); `scheduling/rounds` tests mirror both.
//!
//! So a plan is a sequence of rounds: round 1 is [`solve`]; each later round solves the pods
//! still pending with every earlier NodeClaim as an in-flight node of the instance type the
//! launch picks (the cheapest offering after the provider's filters, `LaunchChoice`) and the
//! pools' usage grown by those sizes. A round that places nothing ends it; a pod is
//! unschedulable only when no round places it, with the reason of the last round.
//!
//! Reserved capacity goes the same way: a pod whose capacity reservations the round's
//! NodeClaims all hold is deferred (`reservations.rs`); the next round sees each reservation
//! one instance shorter per NodeClaim launched into it (the AWS provider's `MarkLaunched`), an
//! exhausted one no longer available, so the pod falls back to on-demand or spot.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::labels;
use crate::model::node::Node;
use crate::model::pod::Pod;

use super::statics::static_claims;
use super::{solve, ExistingNode, ExistingPlacement, Input, Plan, PlannedNodeClaim, Reason};

/// Plans the input's pods over as many rounds as place anything (see the module documentation),
/// after the NodeClaims that bring static pools to their replicas (`statics.rs`: nodes about to
/// exist, which the pods may use). NodeClaims are numbered per pool across rounds and carry
/// their `round`.
pub fn solve_rounds(input: &Input) -> Plan {
    solve_rounds_traced(input, &mut |_, _| {})
}

/// [`solve_rounds`], showing `each_round` every round's own plan (pods named as placed in that
/// round) before it is merged: the plan checker (`fuzz_check`) learns from it the round each pod
/// was placed in, which the merged plan does not say.
pub(super) fn solve_rounds_traced(input: &Input, each_round: &mut dyn FnMut(usize, &Plan)) -> Plan {
    let statics = static_claims(input);
    let mut total = Plan {
        node_claims: statics,
        ..Plan::default()
    };
    let mut current: Cow<'_, Input> = if total.node_claims.is_empty() {
        Cow::Borrowed(input)
    } else {
        Cow::Owned(after_round(input, None, &[], &total.node_claims))
    };
    // The nodes `current` has beyond the cluster's: the NodeClaims planned so far.
    let mut round_nodes = total.node_claims.len();
    let mut round = 0;
    loop {
        round += 1;
        let mut step = solve(&current);
        not_counting_round_nodes(&mut step, round_nodes);
        each_round(round, &step);
        let placed = !step.node_claims.is_empty() || !step.existing_nodes.is_empty();
        if round > 1 && !placed {
            total.unschedulable = step.unschedulable;
            return total;
        }
        let placements = step.existing_nodes.clone();
        let first_new = total.node_claims.len();
        merge(&mut total, step, round, &current);
        if total.unschedulable.is_empty() || total.node_claims.len() == first_new {
            return total;
        }
        let pending: BTreeSet<&str> = total.unschedulable.iter().map(|u| u.pod.as_str()).collect();
        let next = after_round(
            &current,
            Some(&pending),
            &placements,
            &total.node_claims[first_new..],
        );
        current = Cow::Owned(next);
        round_nodes = total.node_claims.len();
    }
}

/// A pod a later round cannot place is explained as in a single round: "does not fit any of N
/// existing nodes" counts the cluster's nodes, not the earlier rounds' NodeClaims (which round 1
/// does not name either).
fn not_counting_round_nodes(step: &mut Plan, round_nodes: usize) {
    for u in &mut step.unschedulable {
        if let Reason::NoPlacement { existing_nodes, .. } = &mut u.reason {
            *existing_nodes = existing_nodes.saturating_sub(round_nodes);
        }
    }
}

/// The name of the in-flight node a planned NodeClaim becomes in later rounds.
fn node_name(claim: &PlannedNodeClaim) -> String {
    claim.name.clone()
}

/// The next round's input: the pods still `pending` (all of `input`'s when `None`); `input`'s
/// nodes with the pods `placements` put on them; each of `launched` as an in-flight node of its
/// launched instance type, holding its pods; the pools' usage grown by those nodes.
pub(super) fn after_round(
    input: &Input,
    pending: Option<&BTreeSet<&str>>,
    placements: &[ExistingPlacement],
    launched: &[PlannedNodeClaim],
) -> Input {
    let by_key: BTreeMap<String, &Pod> = input.pods.iter().map(|p| (p.key(), p)).collect();
    let placed_on: BTreeMap<&str, &[String]> = placements
        .iter()
        .map(|e| (e.node.as_str(), e.pods.as_slice()))
        .collect();
    let mut existing_nodes: Vec<ExistingNode> = input
        .existing_nodes
        .iter()
        .map(|n| {
            let mut n = n.clone();
            if let Some(pods) = placed_on.get(n.node.name.as_str()) {
                n.pods.extend(
                    pods.iter()
                        .filter_map(|k| by_key.get(k).map(|p| (*p).clone())),
                );
            }
            n
        })
        .collect();
    let mut pools = input.pools.clone();
    for id in launched
        .iter()
        .filter_map(|c| c.launch.reservation.as_deref())
    {
        use_one_instance(&mut pools, id);
    }
    for claim in launched {
        let Some(pool) = pools.iter_mut().find(|p| p.pool.name == claim.node_pool) else {
            continue;
        };
        let Some(it) = pool
            .instance_types
            .iter()
            .find(|t| t.name == claim.launch.instance_type)
        else {
            continue;
        };
        let mut labels = claim.labels.clone();
        labels.insert(labels::HOSTNAME.to_string(), node_name(claim));
        let node = Node {
            name: node_name(claim),
            labels,
            // An in-flight node is not initialized: its startup taints do not repel pods
            // (`core: pkg/controllers/state/statenode.go` `Taints`).
            taints: claim.taints.clone(),
            capacity: it.capacity.clone(),
            allocatable: it.allocatable(),
            ..Node::default()
        };
        let mut used = it.capacity.clone();
        used.set("nodes", 1000);
        pool.usage = pool.usage.add(&used);
        existing_nodes.push(ExistingNode {
            node,
            pods: claim
                .pods
                .iter()
                .filter_map(|k| by_key.get(k).map(|p| (*p).clone()))
                .collect(),
        });
    }
    Input {
        pods: input
            .pods
            .iter()
            .filter(|p| pending.is_none_or(|keys| keys.contains(p.key().as_str())))
            .cloned()
            .collect(),
        existing_nodes,
        pools,
        daemonsets: input.daemonsets.clone(),
        namespace_labels: input.namespace_labels.clone(),
        options: input.options.clone(),
        // Pods keep their positions: the pods placed again are the same ones.
        moving: input.moving.clone(),
        // Volumes constrain later rounds the same way; in-flight nodes have no attach limits.
        storage: input.storage.clone(),
    }
}

/// One instance of reservation `id` launched: every offering of it (a reservation may be
/// offered to several pools) has one less, and none left is no longer available.
fn use_one_instance(pools: &mut [super::PoolInput], id: &str) {
    let offerings = pools
        .iter_mut()
        .flat_map(|p| p.instance_types.iter_mut())
        .flat_map(|t| t.offerings.iter_mut());
    for o in offerings {
        if let Some(c) = o.reservation.as_mut().filter(|c| c.id == id) {
            c.count = c.count.saturating_sub(1);
            if c.count == 0 {
                o.available = false;
            }
        }
    }
}

/// Adds round `round`'s plan (made from `input`) to the plan so far: its NodeClaims numbered on
/// from the earlier ones of their pool; its placements on real nodes merged, and on earlier
/// NodeClaims' in-flight nodes added to those NodeClaims; its unschedulable pods replacing the
/// earlier list.
fn merge(total: &mut Plan, step: Plan, round: usize, input: &Input) {
    let mut per_pool: BTreeMap<String, usize> = BTreeMap::new();
    for c in &total.node_claims {
        *per_pool.entry(c.node_pool.clone()).or_default() += 1;
    }
    let claim_of: BTreeMap<String, usize> = total
        .node_claims
        .iter()
        .enumerate()
        .map(|(i, c)| (node_name(c), i))
        .collect();
    for placement in step.existing_nodes {
        if let Some(&i) = claim_of.get(&placement.node) {
            let claim = &mut total.node_claims[i];
            for key in &placement.pods {
                if let Some(pod) = input.pods.iter().find(|p| &p.key() == key) {
                    claim.requests = claim.requests.add(&pod.requests);
                }
            }
            claim.pods.extend(placement.pods);
            continue;
        }
        match total
            .existing_nodes
            .iter_mut()
            .find(|e| e.node == placement.node)
        {
            Some(e) => {
                e.pods.extend(placement.pods);
                e.pods.sort();
            }
            None => total.existing_nodes.push(placement),
        }
    }
    total.existing_nodes.sort_by(|a, b| a.node.cmp(&b.node));
    for mut claim in step.node_claims {
        let n = per_pool.entry(claim.node_pool.clone()).or_default();
        *n += 1;
        claim.name = format!("{}-{}", claim.node_pool, n);
        claim.round = round;
        total.node_claims.push(claim);
    }
    total.unschedulable = step.unschedulable;
}
