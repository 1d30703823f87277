//! Static NodePools scaled down (docs/karpenter.md §6.11): the decision
//! (`disruption::static_scale_down`) read from a plan's input, and carried out live.
//!
//! [`scale_downs`] gives each static pool's members — its Nodes with their pods, the capacity
//! in flight (this tool's instances, Karpenter's NodeClaims not registered yet) and its
//! unresolved NodeClaims — to the decision. [`Live::scale_down`] carries out what the operator
//! confirmed, after reading the cluster again: only what a fresh decision still removes goes.
//! A registered node goes through `drift replace`'s pipeline with [`Method::StaticScaleDown`]
//! (forceful: no budget, no blocker before it starts; what its pods need launched first; the
//! drain respects PDBs and waits for do-not-disrupt pods; every step recorded on the node, so a
//! killed run's node is finished by the next run). A NodeClaim without a Node is deleted (its
//! instance, if any, terminated) at once: nothing runs there.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Event, Selection};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::replace::{Action, Detail, Method, Record, Status};
use crate::disruption::static_scale_down::{self, Member, StaticScaleDown};
use crate::disruption::time::parse_duration;
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::labels::HOSTNAME;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::time::parse_rfc3339;
use crate::scheduling::Input;
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::replace::pipeline;
use crate::usecases::replace::steps::{terminate_and_delete, Claim};
use crate::usecases::replace::{self, NodeOutcome, Settings};
use crate::usecases::Sink;

/// At most this many of a static pool's nodes drain at once (no disruption budget applies).
const MAX_PARALLEL: usize = 100;
/// How long a drain (and a replacement's readiness) may take.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Each static pool's scale-down, for a plan made from `manifests` (its pools, Nodes and
/// NodeClaims) and `input` (the solver's input made from them: every node with its pods, the
/// capacity in flight included), at `now`.
pub fn scale_downs(manifests: &Manifests, input: &Input, now: i64) -> Vec<StaticScaleDown> {
    manifests
        .node_pools
        .iter()
        .filter(|p| p.replicas.is_some())
        .filter_map(|pool| static_scale_down::decide(pool, &members(manifests, input, pool), now))
        .collect()
}

/// The pool's members: its nodes (registered or in flight) and its NodeClaims without one.
fn members(m: &Manifests, input: &Input, pool: &NodePool) -> Vec<Member> {
    let seconds = |d: Option<&String>| {
        d.filter(|d| d.as_str() != "Never")
            .and_then(|d| parse_duration(d).ok())
    };
    let mut out = Vec::new();
    let mut claimed = BTreeSet::new();
    for e in &input.existing_nodes {
        let n = &e.node;
        if n.labels.get(pool.owner_label()) != Some(&pool.name) {
            continue;
        }
        let claim = m.node_claims.iter().find(|c| {
            (c.provider_id.is_some() && c.provider_id == n.provider_id)
                || c.node_name.as_deref() == Some(n.name.as_str())
                || c.name == n.name
        });
        if let Some(c) = claim {
            claimed.insert(c.name.clone());
        }
        let registered = m.nodes.iter().any(|x| x.name == n.name);
        // This tool's instance in flight is named by its NodeClaim tag (its hostname label).
        let claim_name = claim
            .map(|c| c.name.clone())
            .or_else(|| (!registered).then(|| n.labels.get(HOSTNAME).cloned())?);
        out.push(Member {
            node: registered.then(|| n.name.clone()),
            node_claim: claim_name,
            instance: n.instance_id().map(str::to_string),
            resolved: true,
            deleting: n.deleting
                || claim.is_some_and(|c| c.deleting)
                || Record::of(n).is_some()
                || crate::scheduling::is_pending_disruption(n),
            pods: e.pods.clone(),
            created: claim
                .and_then(|c| c.created.as_deref())
                .or(n.creation_timestamp.as_deref())
                .and_then(parse_rfc3339),
            expire_after: match claim {
                Some(c) => seconds(c.expire_after.as_ref()),
                None => seconds(pool.expire_after.as_ref()),
            },
        });
    }
    for c in &m.node_claims {
        if c.nodepool.as_deref() != Some(pool.name.as_str()) || claimed.contains(&c.name) {
            continue;
        }
        let instance = Node {
            provider_id: c.provider_id.clone(),
            ..Node::default()
        }
        .instance_id()
        .map(str::to_string);
        out.push(Member {
            node: None,
            node_claim: Some(c.name.clone()),
            instance,
            resolved: c.provider_id.is_some(),
            deleting: c.deleting,
            pods: Vec::new(),
            created: c.created.as_deref().and_then(parse_rfc3339),
            expire_after: seconds(c.expire_after.as_ref()),
        });
    }
    out
}

/// The pipeline's settings for a scale-down started at `now` (RFC 3339).
pub fn settings(now: String) -> Settings {
    Settings {
        max_parallel: MAX_PARALLEL,
        force: false,
        drain_timeout: TIMEOUT,
        ready_timeout: TIMEOUT,
        attempt: now,
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    }
}

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Carries out the `confirmed` scale-downs (`None`: whatever the cluster's static pools
    /// need now — `--watch`), after reading the cluster again: a NodeClaim goes only if the
    /// fresh decision still removes it. Static-scale-down removals a killed run left on nodes
    /// are finished too. Every node's outcome.
    pub fn scale_down(
        &mut self,
        selection: &Selection,
        confirmed: Option<&[StaticScaleDown]>,
        events: &mut dyn Sink<Event>,
    ) -> Result<Vec<NodeOutcome>, CommandError> {
        let m = replace::read_cluster(self.cluster)?;
        let mut actions = resumed(&m);
        if actions.is_empty() && !m.node_pools.iter().any(|p| p.replicas.is_some()) {
            return Ok(Vec::new());
        }
        let fresh = self
            .plan_pending(selection, &mut |_: Event| {})?
            .map(|r| r.plan.static_scale_down)
            .unwrap_or_default();
        let wanted: Option<BTreeSet<(&str, &str)>> = confirmed.map(|c| {
            c.iter()
                .flat_map(|d| {
                    d.removals
                        .iter()
                        .map(move |r| (d.node_pool.as_str(), r.member.name()))
                })
                .collect()
        });
        let mut outcomes = Vec::new();
        for d in &fresh {
            let Some(pool) = m.node_pools.iter().find(|p| p.name == d.node_pool) else {
                continue;
            };
            let reason = format!(
                "static scale-down: {} running, {} replicas",
                d.running, d.replicas
            );
            for r in &d.removals {
                let key = (d.node_pool.as_str(), r.member.name());
                if wanted.as_ref().is_some_and(|w| !w.contains(&key)) {
                    continue;
                }
                match r.member.node.as_deref() {
                    Some(name) => {
                        if let Some(node) = m.nodes.iter().find(|n| n.name == name) {
                            if !actions.iter().any(|a| a.node.name == name) {
                                actions.push(action(node, pool, reason.clone()));
                            }
                        }
                    }
                    None => {
                        self.remove_unregistered(&m, &r.member)?;
                        events.emit(Event::ScaleDown(Box::new(replace::Event::Node {
                            node: r.member.name().to_string(),
                            step: replace::NodeStep::Deleted {
                                instance: r.member.instance.clone(),
                            },
                        })));
                        outcomes.push(NodeOutcome {
                            node: r.member.name().to_string(),
                            node_pool: d.node_pool.clone(),
                            reason: reason.clone(),
                            status: Status::Deleted,
                            detail: Detail::None,
                            replacements: Vec::new(),
                            pods: 0,
                            evicted: Vec::new(),
                            seconds: 0.0,
                        });
                    }
                }
            }
        }
        if actions.is_empty() {
            return Ok(outcomes);
        }
        let settings = settings(crate::model::time::format_rfc3339(self.clock.now().max(0)));
        let preview = pipeline::preview(self, &m, actions, &settings)?;
        let mut forward = |e: replace::Event| match e {
            replace::Event::Launch(e) => events.emit(e),
            other => events.emit(Event::ScaleDown(Box::new(other))),
        };
        outcomes.extend(pipeline::run(self, preview, &settings, &mut forward)?);
        Ok(outcomes)
    }

    /// Deletes a NodeClaim that has no Node (its instance terminated first, if it has one).
    fn remove_unregistered(&self, m: &Manifests, member: &Member) -> Result<(), CommandError> {
        let claim = member
            .node_claim
            .as_deref()
            .and_then(|name| m.node_claims.iter().find(|c| c.name == name))
            .map(Claim::from_model);
        // The Node path is named after the NodeClaim (there is no Node: a 404), never empty.
        let name = member
            .node_claim
            .clone()
            .or_else(|| member.instance.clone())
            .unwrap_or_else(|| "-".into());
        let node = Node {
            name,
            provider_id: member.instance.as_ref().map(|i| format!("aws:///-/{i}")),
            ..Node::default()
        };
        terminate_and_delete(self.cluster, self.cloud, &node, claim.as_ref())
    }
}

/// The pipeline's action removing `node` of `pool`.
fn action(node: &Node, pool: &NodePool, reason: String) -> Action {
    Action {
        node: node.clone(),
        pool: pool.clone(),
        method: Method::StaticScaleDown,
        chosen: None,
        reason,
        command: Vec::new(),
    }
}

/// The nodes a killed run left in a static scale-down: finished first.
fn resumed(m: &Manifests) -> Vec<Action> {
    let pools: BTreeMap<&str, &NodePool> =
        m.node_pools.iter().map(|p| (p.name.as_str(), p)).collect();
    m.nodes
        .iter()
        .filter_map(|n| {
            let record = Record::of(n).filter(|r| r.method == Method::StaticScaleDown)?;
            let pool = pools.get(n.node_pool()?)?;
            Some(action(n, pool, record.reason))
        })
        .collect()
}

#[cfg(test)]
mod tests;
