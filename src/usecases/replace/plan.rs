//! Where a node's pods go when it is replaced: the solver, run over a snapshot of the cluster
//! from which every node that is not capacity is left out — nodes being replaced (by any run),
//! their replacements, nodes being deleted — and onto which the pods that replacements in
//! progress promised to existing nodes are added back (Karpenter's nominations). So nodes
//! planned one after the other, while earlier ones are still draining, never count on the same
//! free space twice.

use std::collections::BTreeSet;

use super::steps::{drain_options, is_reschedulable, Pdbs};
use crate::api::Manifests;
use crate::cloud::types::Compute;
use crate::disruption::consolidation::currently_reschedulable;
use crate::disruption::drain;
use crate::disruption::replace::{claim_name, Action, Chosen, Detail, Method, Record};
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::scheduling::{
    template_claim, Input, Plan, PlannedNodeClaim, Policies, DEFAULT_MAX_INSTANCE_TYPES,
};
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::provisioning::Selection;

/// What may be launched for a node: what its method allows.
#[derive(Debug, Clone, Copy)]
pub enum Intent<'c> {
    /// Whatever its pods need (drift).
    Replace,
    /// Nothing: its pods must fit on the nodes that stay (a delete).
    Delete,
    /// Exactly this one NodeClaim (consolidation's replacement).
    Chosen(&'c Chosen),
    /// Whatever its pods need, and nothing blocks the start: no do-not-disrupt or PDB check,
    /// pods that fit nowhere go pending (v1 expiration, [`Method::is_forceful`]).
    Forceful,
    /// One bare NodeClaim of the node's pool's template, whatever its pods (a static pool's
    /// drifted node, [`Method::StaticDrift`]): its pods are not planned, they go where they
    /// are scheduled once evicted.
    Template,
}

impl Intent<'_> {
    /// What the action's method allows.
    pub fn of(action: &Action) -> Intent<'_> {
        match (action.method, &action.chosen) {
            (m, _) if m.is_delete() => Intent::Delete,
            (m, _) if m.is_forceful(&action.pool) => Intent::Forceful,
            (Method::StaticDrift, _) => Intent::Template,
            (Method::ConsolidationReplace, Some(chosen)) => Intent::Chosen(chosen),
            _ => Intent::Replace,
        }
    }

    /// Whether a do-not-disrupt or a PDB at zero keeps the node from starting.
    pub fn checks_blockers(self) -> bool {
        !matches!(self, Intent::Forceful)
    }
}

/// What the planner decided for one node.
#[derive(Debug, Clone)]
pub enum NodePlan {
    /// The node cannot go now, and why; `pdb_only`: only PodDisruptionBudgets at zero block,
    /// which may free up soon.
    Blocked {
        /// The blocking objects, or the pods that fit nowhere.
        why: Detail,
        /// Only PDBs at zero block.
        pdb_only: bool,
    },
    /// Its pods go onto `claims` (to launch; `input` launches them) and existing nodes
    /// (`reserved`: the pods, bound there in advance); `left_pending`: pods that fit nowhere
    /// and go pending (a resumed or forceful node only).
    Replace {
        /// Replacement NodeClaims, named.
        claims: Vec<PlannedNodeClaim>,
        /// The solver's input, when anything is launched.
        input: Option<Box<Input>>,
        /// The node's pods, bound to the existing nodes they were planned onto.
        reserved: Vec<Pod>,
        /// Pods that fit nowhere (`namespace/name: why`), left pending.
        left_pending: Vec<String>,
    },
}

/// Plans replacements one node at a time over one snapshot.
pub struct Planner<'a> {
    snapshot: &'a Manifests,
    pdbs: &'a Pdbs,
    /// Nodes that are not capacity.
    excluded: BTreeSet<String>,
    /// Pods promised to existing nodes by replacements in progress.
    reserved: Vec<Pod>,
    force: bool,
    now: i64,
    policies: Policies,
}

impl<'a> Planner<'a> {
    /// `busy_instances`: replacement instances of replacements in progress (also those only
    /// this run knows of yet: not capacity, their space is promised to their old node's pods);
    /// `reserved`: those replacements' pods promised to existing nodes.
    pub fn new(
        snapshot: &'a Manifests,
        pdbs: &'a Pdbs,
        busy_instances: &BTreeSet<String>,
        reserved: Vec<Pod>,
        force: bool,
        now: i64,
        policies: Policies,
    ) -> Planner<'a> {
        let mut busy = busy_instances.clone();
        busy.extend(
            snapshot
                .nodes
                .iter()
                .filter_map(Record::of)
                .flat_map(|r| r.instances),
        );
        let excluded = snapshot
            .nodes
            .iter()
            .filter(|n| {
                n.deleting
                    || Record::of(n).is_some()
                    || n.instance_id().is_some_and(|id| busy.contains(id))
            })
            .map(|n| n.name.clone())
            .collect();
        Planner {
            snapshot,
            pdbs,
            excluded,
            reserved,
            force,
            now,
            policies,
        }
    }

    /// `nodes` leave in this run whatever their turn (the nodes of a consolidation delete go
    /// together): never capacity for any node planned.
    pub fn leaving(&mut self, nodes: impl IntoIterator<Item = String>) {
        self.excluded.extend(nodes);
    }

    /// The node's pods, as the snapshot has them.
    fn pods_of<'n>(&self, node: &'n str) -> impl Iterator<Item = &'a Pod> + 'n
    where
        'a: 'n,
    {
        self.snapshot
            .bound_pods
            .iter()
            .filter(move |p| p.node_name.as_deref() == Some(node))
    }

    /// What blocks draining the node (a PDB with no disruption left, do-not-disrupt on the
    /// node or a pod), named; `None` when nothing does. Cheap: no solver.
    pub fn drain_blocker(&self, node: &Node, pool: &NodePool) -> Option<NodePlan> {
        let pods: Vec<Pod> = self.pods_of(&node.name).cloned().collect();
        let plan = drain::plan_drain(
            node,
            &pods,
            &self.pdbs.drain,
            &Default::default(),
            self.now,
            &drain_options(pool, self.force),
        );
        plan.is_blocked().then(|| NodePlan::Blocked {
            why: Detail::Blocker(plan.explain_blockers()),
            pdb_only: plan.only_pdbs_block(),
        })
    }

    /// Plans the node's replacement. `attempt` is the replacement's start time (its record's
    /// `startedAt`), which names the replacement NodeClaims; `resuming`: the record of a
    /// replacement already marked, which is finished even if some pods fit nowhere now (and
    /// with whatever its pods need: a resumed node is never left cordoned for want of capacity).
    /// `intent` bounds what a fresh node launches: a delete nothing, consolidation exactly its
    /// chosen NodeClaim — a plan that needs more blocks the node (the decision changed). A node
    /// that is not blocked stops being capacity for the nodes planned after it, and its pods'
    /// places on existing nodes are reserved.
    pub fn plan<C: Cluster, P: Compute, K: Clock + ?Sized>(
        &mut self,
        live: &Live<'_, C, P, K>,
        node: &Node,
        pool: &NodePool,
        attempt: &str,
        resuming: Option<&Record>,
        intent: Intent<'_>,
    ) -> Result<NodePlan, CommandError> {
        self.plan_together(live, &[node], pool, attempt, resuming, intent)
    }

    /// [`plan`](Self::plan) for the nodes of one command (Karpenter's multi-node
    /// consolidation, `nodes[0]` first): every node's pods are planned at once onto what
    /// stays and what `intent` launches — one NodeClaim for all, or none — named after the
    /// first node. Any node's blocker blocks them all.
    pub fn plan_together<C: Cluster, P: Compute, K: Clock + ?Sized>(
        &mut self,
        live: &Live<'_, C, P, K>,
        nodes: &[&Node],
        pool: &NodePool,
        attempt: &str,
        resuming: Option<&Record>,
        intent: Intent<'_>,
    ) -> Result<NodePlan, CommandError> {
        let recorded: &[String] = resuming.map_or(&[], |r| r.node_claims.as_slice());
        let resuming = resuming.is_some();
        let strict = !resuming && intent.checks_blockers();
        if strict {
            for node in nodes {
                if let Some(blocked) = self.drain_blocker(node, pool) {
                    return Ok(blocked);
                }
            }
        }
        let names: BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let moving: Vec<&Pod> = self
            .snapshot
            .bound_pods
            .iter()
            .filter(|p| p.node_name.as_deref().is_some_and(|n| names.contains(n)))
            .filter(|p| is_reschedulable(p))
            .collect();
        let moving = self.forceful_moves(intent, moving);
        let moving: Vec<Pod> = moving
            .into_iter()
            .map(|p| {
                let mut pending = p.clone();
                pending.node_name = None;
                pending.scheduled_condition = Some(("False".into(), "Unschedulable".into()));
                pending
            })
            .collect();
        let mut excluded = self.excluded.clone();
        excluded.extend(names.iter().map(|n| n.to_string()));
        if matches!(intent, Intent::Template) {
            return self.template(live, nodes[0], pool, attempt, recorded, excluded);
        }
        if moving.is_empty() {
            // No pod to move now: a chosen replacement is no longer needed.
            if let (false, Err(why)) = (resuming, within(intent, &mut [])) {
                return Ok(NodePlan::Blocked {
                    why,
                    pdb_only: false,
                });
            }
            self.excluded = excluded;
            return Ok(NodePlan::Replace {
                claims: Vec::new(),
                input: None,
                reserved: Vec::new(),
                left_pending: Vec::new(),
            });
        }
        let mut manifests = self.snapshot.clone();
        manifests.nodes.retain(|n| !excluded.contains(&n.name));
        manifests
            .bound_pods
            .retain(|p| p.node_name.as_ref().is_some_and(|n| !excluded.contains(n)));
        manifests.bound_pods.extend(
            self.reserved
                .iter()
                .filter(|p| p.node_name.as_ref().is_some_and(|n| !excluded.contains(n)))
                .cloned(),
        );
        // Pods pending now (those of nodes replaced a moment ago, made again by their
        // controllers) are bound by kube-scheduler before this node's pods come back: their
        // room on existing nodes is theirs (Karpenter simulates them with a candidate's pods,
        // `SimulateScheduling` in disruption/helpers.go). Nothing is launched for them: that is
        // `provision`'s business.
        if !manifests.pods.is_empty() {
            let (plan, _) = solve(live, &mut manifests.clone(), self.policies)?;
            manifests.bound_pods.extend(placed(&plan, &manifests.pods));
        }
        manifests.pods = moving.clone();
        let (plan, input) = solve(live, &mut manifests, self.policies)?;
        let stuck: Vec<String> = moving
            .iter()
            .filter_map(|p| {
                plan.unschedulable
                    .iter()
                    .find(|u| u.pod == p.key())
                    .map(|u| format!("{}: {}", u.pod, u.reason))
            })
            .collect();
        if !stuck.is_empty() && strict {
            return Ok(NodePlan::Blocked {
                why: Detail::Unplaceable(stuck),
                pdb_only: false,
            });
        }
        if strict {
            if let Some(why) = uninitialized_destination(&plan, &manifests.nodes) {
                return Ok(NodePlan::Blocked {
                    why,
                    pdb_only: false,
                });
            }
        }
        let reserved = placed(&plan, &moving);
        let mut claims = plan.node_claims;
        if !resuming {
            if let Err(why) = within(intent, &mut claims) {
                return Ok(NodePlan::Blocked {
                    why,
                    pdb_only: false,
                });
            }
        }
        self.excluded = excluded;
        self.reserved.extend(reserved.iter().cloned());
        for (i, claim) in claims.iter_mut().enumerate() {
            claim.name = claim_name(recorded, &claim.node_pool, i, nodes[0], attempt);
        }
        Ok(NodePlan::Replace {
            claims,
            input: Some(Box::new(input)),
            reserved,
            left_pending: stuck,
        })
    }
}

impl<'a> Planner<'a> {
    /// Of a forceful node's pods, those Karpenter's provisioner schedules again now: not under
    /// an active do-not-disrupt, not held by a PDB that can never allow an eviction (`core
    /// v1.14.1: pkg/controllers/provisioning/provisioner.go` `Schedule` →
    /// `CurrentlyReschedulablePods`; core#1789). The rest wait on the node for its grace
    /// period and get no capacity now; any other intent moves every pod.
    fn forceful_moves(&self, intent: Intent<'_>, pods: Vec<&'a Pod>) -> Vec<&'a Pod> {
        if !matches!(intent, Intent::Forceful) {
            return pods;
        }
        pods.into_iter()
            .filter(|p| currently_reschedulable(p, &self.pdbs.reschedule, self.now))
            .collect()
    }
}

impl Planner<'_> {
    /// [`Intent::Template`]: one bare NodeClaim of `pool`'s template
    /// (`scheduling.NewNodeClaimTemplate(np)`), named like any replacement; no pod is planned.
    fn template<C: Cluster, P: Compute, K: Clock + ?Sized>(
        &mut self,
        live: &Live<'_, C, P, K>,
        node: &Node,
        pool: &NodePool,
        attempt: &str,
        recorded: &[String],
        excluded: BTreeSet<String>,
    ) -> Result<NodePlan, CommandError> {
        let mut manifests = self.snapshot.clone();
        manifests.nodes.retain(|n| !excluded.contains(&n.name));
        manifests
            .bound_pods
            .retain(|p| p.node_name.as_ref().is_some_and(|n| !excluded.contains(n)));
        manifests.pods.clear();
        let (_, input) = solve(live, &mut manifests, self.policies)?;
        let Some(mut claim) = template_claim(&input, &pool.name) else {
            return Ok(NodePlan::Blocked {
                why: Detail::DecisionChanged(format!(
                    "NodePool {} has no instance type with an available offering for its template",
                    pool.name
                )),
                pdb_only: false,
            });
        };
        claim.name = claim_name(recorded, &claim.node_pool, 0, node, attempt);
        self.excluded = excluded;
        Ok(NodePlan::Replace {
            claims: vec![claim],
            input: Some(Box::new(input)),
            reserved: Vec::new(),
            left_pending: Vec::new(),
        })
    }
}

/// Holds the planned `claims` to what `intent` allows: none for a delete; for a chosen
/// replacement one NodeClaim of its pool, narrowed to the chosen instance types, capacity type
/// and zones (its cheapest remaining type is what launches). `Err`: the decision no longer holds.
fn within(intent: Intent<'_>, claims: &mut [PlannedNodeClaim]) -> Result<(), Detail> {
    let types = |claims: &[PlannedNodeClaim]| -> Vec<String> {
        claims
            .iter()
            .map(|c| c.launch.instance_type.clone())
            .collect()
    };
    match intent {
        Intent::Replace | Intent::Forceful | Intent::Template => Ok(()),
        Intent::Delete if claims.is_empty() => Ok(()),
        Intent::Delete => Err(Detail::NoLongerFits {
            would_launch: types(claims),
        }),
        // `core v1.14.1: disruption/validation.go validateCommand`: a replace whose pods now
        // need no new NodeClaim is refused ("scheduling simulation produced new results") and
        // decided again — a delete then, under its own budget reason.
        Intent::Chosen(_) if claims.is_empty() => Err(Detail::DecisionChanged(
            "its pods now fit on the other nodes: no replacement is needed".into(),
        )),
        Intent::Chosen(chosen) => {
            let [claim] = claims else {
                return Err(Detail::DecisionChanged(format!(
                    "its pods now need {} NodeClaims ({}), not the one chosen",
                    claims.len(),
                    types(claims).join(", ")
                )));
            };
            if claim.node_pool != chosen.node_pool {
                return Err(Detail::DecisionChanged(format!(
                    "its pods now go to NodePool {}, not {}",
                    claim.node_pool, chosen.node_pool
                )));
            }
            claim.instance_types = claim
                .instance_types
                .iter()
                .filter(|o| chosen.instance_types.iter().any(|n| **n == *o.name))
                .cloned()
                .collect();
            claim.zones.retain(|z| chosen.zones.contains(z));
            let Some(cheapest) = claim.instance_types.first() else {
                return Err(Detail::DecisionChanged(format!(
                    "none of the chosen types ({}) holds its pods now",
                    chosen.instance_types.join(", ")
                )));
            };
            if claim.zones.is_empty() {
                return Err(Detail::DecisionChanged(format!(
                    "its pods cannot go to the chosen zones ({}) now",
                    chosen.zones.join(", ")
                )));
            }
            claim.launch.instance_type = cheapest.name.to_string();
            claim.launch.price = cheapest.price;
            claim.launch.capacity_type = chosen.capacity_type.clone();
            if !claim.zones.contains(&claim.launch.zone) {
                claim.launch.zone = claim.zones[0].clone();
            }
            claim.capacity_types = vec![chosen.capacity_type.clone()];
            Ok(())
        }
    }
}

/// Plans `manifests.pods` with `provision`'s default of instance types kept per NodeClaim
/// (`Selection::default()` keeps one: no fallback on another type when EC2 has no capacity for
/// it). No in-flight capacity: what this tool is launching elsewhere (a `provision --watch`) is
/// meant for the pods it was launched for.
fn solve<C: Cluster, P: Compute, K: Clock + ?Sized>(
    live: &Live<'_, C, P, K>,
    manifests: &mut Manifests,
    policies: Policies,
) -> Result<(Plan, Input), CommandError> {
    let selection = Selection {
        max_instance_types: DEFAULT_MAX_INSTANCE_TYPES,
        min_values_policy: policies.min_values,
        preference_policy: policies.preferences,
        // The session's launch mode is the controller's `ReservedCapacity` gate, its type
        // settings the controller's.
        reserved_capacity_gate: live.reserved_capacity_gate(),
        vm_memory_overhead_percent: live.type_settings.vm_memory_overhead_percent,
        reserved_enis: live.type_settings.reserved_enis,
        ..Selection::default()
    };
    live.plan_with_instances(manifests, &BTreeSet::new(), &[], &selection)
}

/// The first node (by name) of `nodes` that is not initialized and onto which `plan` placed
/// pods, with those pods: a disruption never relies on it (core v1.14.1
/// `pkg/controllers/disruption/helpers.go` `SimulateScheduling`: a pod scheduled onto an
/// existing node that is not `Initialized()` gets an `UninitializedNodeError`, and drift's
/// `ComputeCommands` skips a candidate whose pods do not all schedule). The plan's pods are
/// the node's own (those of nodes being deleted are not planned here, so upstream's exception
/// for them never applies). Initialized as upstream's `StateNode.Initialized()` says
/// ([`Node::counts_as_initialized`]): a node without a NodeClaim — one `provision` launched,
/// which no controller would ever label — counts as initialized.
fn uninitialized_destination(plan: &Plan, nodes: &[Node]) -> Option<Detail> {
    let mut landings: Vec<_> = plan
        .existing_nodes
        .iter()
        .filter(|p| !p.pods.is_empty())
        .filter(|p| {
            nodes
                .iter()
                .find(|n| n.name == p.node)
                .is_some_and(|n| !n.counts_as_initialized())
        })
        .collect();
    landings.sort_by(|a, b| a.node.cmp(&b.node));
    let first = landings.first()?;
    let mut pods = first.pods.clone();
    pods.sort();
    Some(Detail::UninitializedDestination {
        node: first.node.clone(),
        pods,
    })
}

/// The pods of `pods` that `plan` placed on existing nodes, bound there.
fn placed(plan: &Plan, pods: &[Pod]) -> Vec<Pod> {
    let mut bound = Vec::new();
    for placement in &plan.existing_nodes {
        for key in &placement.pods {
            if let Some(pod) = pods.iter().find(|p| &p.key() == key) {
                let mut pod = pod.clone();
                pod.node_name = Some(placement.node.clone());
                pod.scheduled_condition = None;
                bound.push(pod);
            }
        }
    }
    bound
}
