//! How many more nodes may start now: per NodePool, its disruption budget for the run's reason
//! (`Drifted` for drift, `Empty` / `Underutilized` for consolidation; docs/karpenter.md §5.2)
//! minus the nodes already in replacement, and `--max-parallel` over all.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use super::{Method, Queued, Record};
use crate::disruption::budgets::{allowed_disruptions, DisruptionReason};
use crate::disruption::drain::disruption_taint;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;

/// Free slots per pool: `None` is unlimited (no active budget applies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Slots(BTreeMap<String, Option<u32>>);

impl Slots {
    /// Slots from `(pool, free)` pairs.
    pub fn new(slots: impl IntoIterator<Item = (String, Option<u32>)>) -> Slots {
        Slots(slots.into_iter().collect())
    }

    /// The pool's free slots (`None`: unlimited, or a pool not counted here).
    pub fn free(&self, pool: &str) -> Option<u32> {
        self.0.get(pool).copied().flatten()
    }

    /// Whether one more node of the pool may start.
    pub fn has_room(&self, pool: &str) -> bool {
        self.free(pool).is_none_or(|n| n > 0)
    }

    /// One node of the pool starts.
    pub fn take(&mut self, pool: &str) {
        if let Some(Some(n)) = self.0.get_mut(pool) {
            *n = n.saturating_sub(1);
        }
    }

    /// A node taken turned out not to start.
    pub fn give_back(&mut self, pool: &str) {
        if let Some(Some(n)) = self.0.get_mut(pool) {
            *n += 1;
        }
    }
}

/// This tool's own replacements: the pool's budget minus the nodes in replacement (recorded,
/// not yet deleted). One replacement in progress is one disruption: the nodes launched to
/// replace it neither grow the pool's count nor count as NotReady while they join (Karpenter
/// would count both; a rollout should not change its own pace — the one place we knowingly
/// differ).
pub fn free_slots(pools: &[NodePool], nodes: &[Node], reason: DisruptionReason, now: i64) -> Slots {
    let replacements: BTreeSet<String> = nodes
        .iter()
        .filter_map(Record::of)
        .flat_map(|r| r.instances)
        .collect();
    let counted: Vec<&Node> = nodes
        .iter()
        .filter(|n| !n.instance_id().is_some_and(|id| replacements.contains(id)))
        .collect();
    Slots::new(pools.iter().map(|pool| {
        let allowance = allowed_disruptions(pool, counted.iter().copied(), reason, now);
        let in_progress = nodes
            .iter()
            .filter(|n| {
                n.node_pool() == Some(pool.name.as_str()) && !n.deleting && Record::of(n).is_some()
            })
            .count() as u32;
        (
            pool.name.clone(),
            allowance.allowed.map(|n| n.saturating_sub(in_progress)),
        )
    }))
}

/// [`free_slots`] for a run of `method`'s nodes: a pool whose nodes it disrupts forcefully (v1
/// expiration, [`Method::is_forceful`]) has no limit — Karpenter's expiration controller
/// deletes every expired NodeClaim at once, outside the disruption budgets.
pub fn free_slots_for(pools: &[NodePool], nodes: &[Node], method: Method, now: i64) -> Slots {
    let Slots(mut slots) = free_slots(pools, nodes, method.budget_reason(), now);
    for pool in pools.iter().filter(|p| method.is_forceful(p)) {
        slots.insert(pool.name.clone(), None);
    }
    Slots(slots)
}

/// The free slots of a queue whose nodes need not share one method (`consolidate --yes` starts
/// its v1 expirations, which no budget limits, beside consolidations, which their budget does):
/// each node is held to its own method's slots, and a start takes from every method's count of
/// its pool — one more disrupting node counts against each reason's budget (core v1.14.1
/// `disruption/helpers.go` `BuildDisruptionBudgetMapping`: a reason's allowance minus the pool's
/// disrupting nodes, whatever disrupts them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueSlots {
    by_method: BTreeMap<Method, Slots>,
    /// For a method not in `by_method`.
    other: Slots,
}

impl QueueSlots {
    /// The slots of `pools` for every method of `queue`; a node of another method has none.
    pub fn for_queue<'a>(
        pools: &[NodePool],
        nodes: &[Node],
        queue: impl IntoIterator<Item = &'a Queued>,
        now: i64,
    ) -> QueueSlots {
        let methods: BTreeSet<Method> = queue.into_iter().map(|q| q.action.method).collect();
        QueueSlots {
            by_method: methods
                .into_iter()
                .map(|m| (m, free_slots_for(pools, nodes, m, now)))
                .collect(),
            other: Slots::new(pools.iter().map(|p| (p.name.clone(), Some(0)))),
        }
    }

    /// Whether `q` may start: its pool has room under its method's budget.
    pub fn has_room(&self, q: &Queued) -> bool {
        self.by_method
            .get(&q.action.method)
            .unwrap_or(&self.other)
            .has_room(q.pool())
    }

    /// One node of `pool` starts, whatever its method.
    pub fn take(&mut self, pool: &str) {
        for slots in self.by_method.values_mut() {
            slots.take(pool);
        }
        self.other.take(pool);
    }
}

impl From<Slots> for QueueSlots {
    /// The same slots for every method.
    fn from(slots: Slots) -> QueueSlots {
        QueueSlots {
            by_method: BTreeMap::new(),
            other: slots,
        }
    }
}

/// `--via-controller`: Karpenter's own arithmetic (nodes being deleted and NotReady nodes
/// count as disrupting), where the nodes this run handed over (`handed_over`: node name →
/// pool) count as disrupting until their pods are placed again, and the controller's own
/// disruptions in flight (its disruption taint on a Ready node not yet deleting: replacements
/// still launching) take from the same budget.
pub fn controller_free_slots(
    pools: &[NodePool],
    nodes: &[Node],
    handed_over: &BTreeMap<String, String>,
    now: i64,
) -> Slots {
    Slots::new(pools.iter().map(|pool| {
        let others = nodes.iter().filter(|n| !handed_over.contains_key(&n.name));
        let allowance = allowed_disruptions(pool, others, DisruptionReason::Drifted, now);
        let mine = handed_over.values().filter(|p| **p == pool.name).count() as u32;
        let taint = disruption_taint(pool.generation);
        let controller = nodes
            .iter()
            .filter(|n| {
                !handed_over.contains_key(&n.name)
                    && n.node_pool() == Some(pool.name.as_str())
                    && n.ready
                    && !n.deleting
                    && n.taints.iter().any(|t| t.key == taint.key)
            })
            .count() as u32;
        (
            pool.name.clone(),
            allowance
                .allowed
                .map(|n| n.saturating_sub(mine + controller)),
        )
    }))
}

/// Takes from the queue, in order, the nodes that may start at `now` (monotonic): up to
/// `room`, within their pool's free slots, none held back until later. A node resuming a
/// replacement is already counted in its pool. The nodes of one command (Karpenter's
/// multi-node consolidation) go together: picked with its first, each taking a slot — the
/// engine decided the command within the budgets, counted for all of its nodes.
pub fn pick(
    queue: &mut VecDeque<Queued>,
    slots: impl Into<QueueSlots>,
    room: usize,
    now: Duration,
) -> Vec<Queued> {
    let mut slots = slots.into();
    let mut picked = Vec::new();
    let mut rest = VecDeque::new();
    let mut commands: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut leading = 0;
    for q in queue.drain(..) {
        let resuming = q.record.is_some();
        let follows = q.action.in_command() && commands.contains(&q.action.command);
        let fits = resuming || slots.has_room(&q);
        let due = q.not_before.is_none_or(|t| t <= now);
        if follows || (leading < room && fits && due) {
            if !resuming {
                slots.take(q.pool());
            }
            if !follows {
                leading += 1;
                if q.action.in_command() {
                    commands.insert(q.action.command.clone());
                }
            }
            picked.push(q);
        } else {
            rest.push_back(q);
        }
    }
    // A node of a command met before the command's first was picked goes with it too.
    let (with, rest): (VecDeque<Queued>, VecDeque<Queued>) = rest
        .into_iter()
        .partition(|q| q.action.in_command() && commands.contains(&q.action.command));
    picked.extend(with);
    *queue = rest;
    picked
}

/// The distinct NodePools of `queue`, in order.
pub fn pools_of<'a>(queue: impl IntoIterator<Item = &'a Queued>) -> Vec<NodePool> {
    let mut pools: Vec<NodePool> = Vec::new();
    for q in queue {
        if !pools.iter().any(|p| p.name == q.action.pool.name) {
            pools.push(q.action.pool.clone());
        }
    }
    pools
}
