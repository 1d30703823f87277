//! Scheduling simulations: where the pods of some candidates (with the pending pods) would go
//! if the candidates were gone — Karpenter's `SimulateScheduling` (`core v1.14.1:
//! pkg/controllers/disruption/helpers.go`), answered by [`crate::scheduling::solve`].
//!
//! [`full_solve`] asks the solver about the whole cluster every time; the engine is generic over
//! [`Simulator`] so a faster simulator ([`super::fast`]) can stand in for it, and tests compare
//! the two.

use rustc_hash::FxHashMap;

use super::certain::Possible;
use super::cluster::{label_key, Cluster, Status};
use super::input::Release;
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::model::selector::LabelSelector;
use crate::model::taints::{Effect, Taint, Toleration};
use crate::scheduling::{solve_with, PlannedNodeClaim, SolveMemo};

/// A pod in a simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum PodRef {
    /// Pod `pod` of node `node`.
    Bound { node: usize, pod: usize },
    /// A pending pod.
    Pending(usize),
    /// A pod of a node deleting in the input that fits nowhere.
    Stuck(usize),
}

impl PodRef {
    /// Provisionable: its failures do not stop a disruption (`AllNonPendingPodsScheduled`).
    pub fn is_pending(self) -> bool {
        matches!(self, PodRef::Pending(_))
    }

    /// Whether its landing on a node that is not initialized fails the simulation
    /// (`UninitializedNodeError`): not for a pending pod, nor (since v0.37) for one of a node
    /// already deleting (`core v1.14.1 pkg/controllers/disruption/helpers.go SimulateScheduling`
    /// skips `deletingNodePodKeys`: that node's move is under way whatever this simulation
    /// decides; v0.31's `simulateScheduling` flags every pod).
    pub fn waits_for_initialization(self, cluster: &Cluster) -> bool {
        let of_deleting_node_counts = cluster.release == Release::V0_31;
        match self {
            PodRef::Pending(_) => false,
            PodRef::Stuck(_) => of_deleting_node_counts,
            PodRef::Bound { node, .. } => {
                cluster.nodes[node].status == Status::Active || of_deleting_node_counts
            }
        }
    }

    pub fn pod(self, cluster: &Cluster) -> &Pod {
        match self {
            PodRef::Bound { node, pod } => &cluster.pods(node)[pod],
            PodRef::Pending(i) => &cluster.pending[i],
            PodRef::Stuck(i) => &cluster.stuck[i],
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SimRequest {
    /// Nodes taken away, sorted.
    pub candidates: Vec<usize>,
    /// Their pods that move, `(node, pod)`.
    pub pods: Vec<(usize, usize)>,
    /// A consolidation simulation (v1.14 keeps candidate pods off nodes under
    /// `consolidateAfter`).
    pub consolidation: bool,
    /// With the pending (and stuck) pods, as every disruption simulation is; a forceful
    /// expiration's pods are placed alone.
    pub with_pending: bool,
    /// Whether the caller reads why a pod fits nowhere (the multi-node search does not: it
    /// only asks whether every pod fits), else the solver skips putting refusals into words
    /// (`scheduling::Options::unexplained`).
    pub reasons: bool,
}

/// Solves `cluster.sched` as it stands, with the request's `reasons` setting.
pub(crate) fn solve_for(
    cluster: &mut Cluster,
    request: &SimRequest,
    memo: Option<&mut SolveMemo>,
) -> crate::scheduling::Plan {
    cluster.sched.options.unexplained = !request.reasons;
    let plan = match memo {
        Some(memo) => solve_with(&cluster.sched, memo),
        None => solve_with(&cluster.sched, &mut cluster.memo),
    };
    cluster.sched.options.unexplained = false;
    plan
}

/// A NodeClaim the simulation needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Claim {
    pub pool: usize,
    pub planned: PlannedNodeClaim,
    pub pods: Vec<PodRef>,
}

/// Why a pod that must move cannot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// It fits nowhere; the scheduler's explanation.
    Unschedulable { pod: PodRef, detail: String },
    /// It would land on a node that is not initialized (`UninitializedNodeError`).
    Uninitialized { pod: PodRef, node: usize },
}

/// The simulation's outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SimResult {
    /// Failures of pods that are not pending, by pod.
    pub failures: Vec<Failure>,
    /// Pods placed on existing nodes, by node name.
    pub placements: Vec<(usize, Vec<PodRef>)>,
    /// New NodeClaims, in creation order.
    pub claims: Vec<Claim>,
    /// What the result depends on, when the simulator can tell.
    pub stamp: Option<Stamp>,
}

impl SimResult {
    /// The pods that fit nowhere (not those held back by an uninitialized node).
    pub fn unschedulable_pods(&self) -> Vec<PodRef> {
        self.failures
            .iter()
            .filter_map(|f| match f {
                Failure::Unschedulable { pod, .. } => Some(*pod),
                Failure::Uninitialized { .. } => None,
            })
            .collect()
    }
}

/// What a simulation's result depended on, to know later whether it still holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stamp {
    /// Anything: true until the cluster changes.
    Epoch(u64),
    /// The nodes its pods landed on (at these versions); the node count when pods went past
    /// every node or landed on one that is not initialized; the pools' usage when NodeClaims
    /// were needed; the pending and stuck pods.
    Nodes {
        landed: Vec<Landed>,
        node_count: Option<usize>,
        usage: Option<Vec<Resources>>,
        pending: usize,
        stuck: usize,
    },
    /// A full solve's: the nodes its pods landed on (at these versions), the node count, the
    /// pools' usage, and the pods its spread constraints count. Free capacity only shrinks
    /// between passes, so placements that were refused stay refused; what else could change
    /// the answer is in the stamp (see `fast::Fast::solved_stamp` for when one is given).
    Solved {
        landed: Vec<Landed>,
        node_count: usize,
        usage: Vec<Resources>,
        counted: Vec<Counted>,
    },
}

/// The pods one spread constraint of a simulated pod can count (its namespace's pods its
/// selector matches) and whether each one counts where it is bound (not moved off its node):
/// while these are unchanged, so are the constraint's domain counts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counted {
    pub namespace: String,
    pub selector: LabelSelector,
    pub pods: Vec<(u32, u32, bool)>,
    /// The label pair list the pods were read from, and its length then: pods are only ever
    /// appended to it, and every pod the selector matches carries the pair, so while its length
    /// holds no pod has joined.
    scanned: (u64, usize),
}

impl Counted {
    /// The pods `selector` counts in `namespace` now; `None` when it requires no label pair.
    pub fn now(cluster: &Cluster, namespace: &str, selector: &LabelSelector) -> Option<Counted> {
        let (key, list) = rarest_list(cluster, selector)?;
        Some(Counted {
            namespace: namespace.to_string(),
            selector: selector.clone(),
            pods: matching(cluster, namespace, selector, list),
            scanned: (key, list.len()),
        })
    }

    /// Whether the same pods are counted, each counting where it is bound as it did.
    pub fn holds(&self, cluster: &Cluster) -> bool {
        let (key, len) = self.scanned;
        cluster.pods_by_label.get(&key).map_or(0, Vec::len) == len
            && self
                .pods
                .iter()
                .all(|&(n, p, counts)| cluster.counts_where_bound(n as usize, p as usize) == counts)
    }
}

/// A node a simulation's pods landed on. The placement still holds while the node is as it
/// was, or when it only received pods since (an initialized, running node, not under
/// `consolidateAfter`, whose new pods bind no host port) and those fit in the room the
/// simulation left on it: nodes earlier in the order only ever lose room, so first fit picks
/// the same node again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Landed {
    pub node: usize,
    pub version: u64,
    /// Its pod count then; the pods after it were added since.
    pub pods: usize,
    /// Its free capacity after the simulation's pods, when the relaxed check may apply.
    pub slack: Option<Resources>,
}

impl Landed {
    pub fn holds(&self, cluster: &Cluster) -> bool {
        let state = &cluster.nodes[self.node];
        if state.version == self.version {
            return true;
        }
        let Some(slack) = &self.slack else {
            return false;
        };
        if state.status != super::cluster::Status::Active
            || cluster.under_consolidate_after(self.node)
        {
            return false;
        }
        let mut added = Resources::new();
        for p in cluster.pods(self.node).get(self.pods..).unwrap_or(&[]) {
            if !p.host_ports.is_empty() {
                return false;
            }
            added.add_assign(&p.requests);
        }
        added.fits_in(slack)
    }
}

/// Answers simulations.
pub(crate) trait Simulator {
    fn simulate(&mut self, cluster: &mut Cluster, request: &SimRequest) -> SimResult;

    /// Whether a result stamped so still holds for `cluster`.
    fn still_valid(&self, cluster: &Cluster, stamp: &Stamp) -> bool;

    /// Whether pod `pod` of candidate `node` could go anywhere at all with the node gone and
    /// its `moving` pods placed again ([`possibility_solve`]). A simulator that reuses nothing
    /// gives each question a memo of its own.
    fn possible(
        &mut self,
        cluster: &mut Cluster,
        node: usize,
        pod: usize,
        moving: &[usize],
    ) -> Possible {
        let mut own_memo = (!self.reuses()).then(SolveMemo::default);
        possibility_solve(cluster, node, pod, moving, own_memo.as_mut())
    }

    /// Whether answers kept from earlier passes may be reused while what they depend on holds.
    fn reuses(&self) -> bool {
        true
    }
}

/// One full solve per simulation, nothing reused (not even the solver's memo): the
/// straightforward evaluation the faster simulator is checked against.
#[derive(Debug, Default)]
pub(crate) struct Reference;

impl Simulator for Reference {
    fn simulate(&mut self, cluster: &mut Cluster, request: &SimRequest) -> SimResult {
        // A fresh memo for each solve: what the cluster's tracking memo keeps is checked too.
        let kept = std::mem::take(&mut cluster.memo);
        let result = full_solve(cluster, request);
        cluster.memo = kept;
        result
    }

    fn still_valid(&self, _: &Cluster, _: &Stamp) -> bool {
        false
    }

    fn reuses(&self) -> bool {
        false
    }
}

/// A taint standing for "under `consolidateAfter`": candidate pods do not tolerate it, pending
/// pods and pods of deleting nodes do (the exemption in `addToExistingNode`).
pub(crate) fn consolidate_after_taint() -> Taint {
    Taint::new(
        "kubectl-karpenter.sh/under-consolidate-after",
        "",
        Effect::NoSchedule,
    )
}

/// The pods of a simulation, in the order they are handed to the solver.
pub(crate) fn sim_pods(cluster: &Cluster, request: &SimRequest) -> Vec<PodRef> {
    let mut refs = Vec::new();
    if request.with_pending {
        refs.extend((0..cluster.pending.len()).map(PodRef::Pending));
        refs.extend((0..cluster.stuck.len()).map(PodRef::Stuck));
    }
    refs.extend(
        request
            .pods
            .iter()
            .map(|&(node, pod)| PodRef::Bound { node, pod }),
    );
    refs
}

/// Limits count the pool's nodes that stay (`updateRemainingResources` over the state nodes
/// minus the candidates).
pub(crate) fn set_usage(cluster: &mut Cluster, candidates: &[usize]) {
    for p in 0..cluster.pools.len() {
        let mut usage = cluster.usage[p].clone();
        for &c in candidates {
            if cluster.nodes[c].pool == Some(p) {
                usage = usage.sub(&cluster.node(c).capacity);
            }
        }
        cluster.sched.pools[p].usage = usage;
    }
}

/// Marks the simulation's bound pods as placed again (Karpenter's `excludedPods`: a candidate's
/// pods that move do not count where they are, those it keeps do); returns the ones it marked,
/// for [`unmark_moving`].
pub(crate) fn mark_moving(cluster: &mut Cluster, pods: &[(usize, usize)]) -> Vec<(usize, usize)> {
    pods.iter()
        .copied()
        .filter(|&(n, p)| cluster.sched.moving.insert(n, p))
        .collect()
}

/// Undoes [`mark_moving`].
pub(crate) fn unmark_moving(cluster: &mut Cluster, marked: &[(usize, usize)]) {
    for &(n, p) in marked {
        cluster.sched.moving.remove(n, p);
    }
}

/// The solver on the whole cluster: candidates flagged deleting (the solver skips those), pods
/// cloned in, flags restored afterwards.
pub(crate) fn full_solve(cluster: &mut Cluster, request: &SimRequest) -> SimResult {
    let refs = sim_pods(cluster, request);
    let tainted: Vec<usize> = if request.consolidation {
        (0..cluster.nodes.len())
            .filter(|&i| !request.candidates.contains(&i) && cluster.under_consolidate_after(i))
            .collect()
    } else {
        Vec::new()
    };
    let taint = consolidate_after_taint();
    let mut pods: Vec<Pod> = refs.iter().map(|r| r.pod(cluster).clone()).collect();
    if !tainted.is_empty() {
        for (pod, r) in pods.iter_mut().zip(&refs) {
            if !matches!(r, PodRef::Bound { .. }) {
                pod.tolerations
                    .push(Toleration::exists(&taint.key, Some(Effect::NoSchedule)));
            }
        }
    }
    let was_deleting: Vec<bool> = request
        .candidates
        .iter()
        .map(|&c| cluster.node(c).deleting)
        .collect();
    for &c in &request.candidates {
        cluster.sched.existing_nodes[c].node.deleting = true;
    }
    let marked = mark_moving(cluster, &request.pods);
    for &t in &tainted {
        cluster.sched.existing_nodes[t]
            .node
            .taints
            .push(taint.clone());
    }
    set_usage(cluster, &request.candidates);
    cluster.sched.pods = pods;
    let plan = solve_for(cluster, request, None);
    cluster.sched.pods = Vec::new();
    unmark_moving(cluster, &marked);
    for &t in &tainted {
        cluster.sched.existing_nodes[t].node.taints.pop();
    }
    for (&c, &d) in request.candidates.iter().zip(&was_deleting) {
        cluster.sched.existing_nodes[c].node.deleting = d;
    }
    let by_key: FxHashMap<String, PodRef> =
        refs.iter().map(|&r| (r.pod(cluster).key(), r)).collect();
    let mut result = SimResult::default();
    for u in &plan.unschedulable {
        let pod = by_key[&u.pod];
        if !pod.is_pending() {
            result.failures.push(Failure::Unschedulable {
                pod,
                detail: without_existing_prefix(&u.reason.to_string()).to_string(),
            });
        }
    }
    for placement in &plan.existing_nodes {
        let node = cluster.node_by_name[&placement.node];
        let pods: Vec<PodRef> = placement.pods.iter().map(|k| by_key[k]).collect();
        if !cluster.usable_destination(node) {
            for &pod in pods.iter().filter(|p| p.waits_for_initialization(cluster)) {
                result.failures.push(Failure::Uninitialized { pod, node });
            }
        }
        result.placements.push((node, pods));
    }
    for planned in plan.node_claims {
        let pods = planned.pods.iter().map(|k| by_key[k]).collect();
        result.claims.push(Claim {
            pool: cluster.pool_by_name[&planned.node_pool],
            planned,
            pods,
        });
    }
    sort_failures(cluster, &mut result.failures);
    result
}

/// The shortest list of pods carrying one of the label pairs `selector` requires.
fn rarest_list<'c>(
    cluster: &'c Cluster,
    selector: &LabelSelector,
) -> Option<(u64, &'c [(u32, u32)])> {
    selector
        .required_pairs()
        .map(|(k, v)| {
            let key = label_key(k, v);
            (
                key,
                cluster
                    .pods_by_label
                    .get(&key)
                    .map_or(&[][..], Vec::as_slice),
            )
        })
        .min_by_key(|(_, l)| l.len())
}

/// The pods of `list` a spread selector counts in `namespace`, with whether each one counts
/// where it is bound.
fn matching(
    cluster: &Cluster,
    namespace: &str,
    selector: &LabelSelector,
    list: &[(u32, u32)],
) -> Vec<(u32, u32, bool)> {
    list.iter()
        .filter(|&&(n, p)| {
            let pod = &cluster.pods(n as usize)[p as usize];
            pod.namespace == namespace && selector.matches(&pod.labels)
        })
        .map(|&(n, p)| (n, p, cluster.counts_where_bound(n as usize, p as usize)))
        .collect()
}

/// `scheduling::Options::possibility` for one pod of candidate `node`, alone, with the node
/// gone: existing nodes offer their whole allocatable, the pools have no usage against their
/// limits, no node is kept away for `consolidateAfter`, and a spread admits every domain within
/// `maxSkew` (`certain.rs` says why its "nowhere" holds for the full simulation).
pub(crate) fn possibility_solve(
    cluster: &mut Cluster,
    node: usize,
    pod: usize,
    moving: &[usize],
    memo: Option<&mut SolveMemo>,
) -> Possible {
    let was_deleting = cluster.sched.existing_nodes[node].node.deleting;
    cluster.sched.existing_nodes[node].node.deleting = true;
    // The candidate's pods that move do not count where they are, as in its simulation.
    let moving: Vec<(usize, usize)> = moving.iter().map(|&p| (node, p)).collect();
    let marked = mark_moving(cluster, &moving);
    let usage: Vec<Resources> = cluster
        .sched
        .pools
        .iter_mut()
        .map(|p| std::mem::take(&mut p.usage))
        .collect();
    let the_pod = cluster.pods(node)[pod].clone();
    let key = the_pod.key();
    cluster.sched.pods = vec![the_pod];
    cluster.sched.options.possibility = true;
    let plan = match memo {
        Some(memo) => solve_with(&cluster.sched, memo),
        None => solve_with(&cluster.sched, &mut cluster.memo),
    };
    cluster.sched.options.possibility = false;
    cluster.sched.pods = Vec::new();
    for (p, u) in cluster.sched.pools.iter_mut().zip(usage) {
        p.usage = u;
    }
    unmark_moving(cluster, &marked);
    cluster.sched.existing_nodes[node].node.deleting = was_deleting;
    if let Some(u) = plan.unschedulable.iter().find(|u| u.pod == key) {
        return Possible::Nowhere(without_existing_prefix(&u.reason.to_string()).to_string());
    }
    match plan.existing_nodes.first() {
        Some(placement) => Possible::Node(cluster.node_by_name[&placement.node]),
        None => Possible::NodeClaim,
    }
}

/// Failures in pod-name order, so every simulator reports the same first one.
pub(crate) fn sort_failures(cluster: &Cluster, failures: &mut [Failure]) {
    let key = |f: &Failure| match f {
        Failure::Unschedulable { pod, .. } | Failure::Uninitialized { pod, .. } => {
            pod.pod(cluster).key()
        }
    };
    failures.sort_by_cached_key(key);
}

/// The solver prefixes a pod's reasons with "does not fit any of N existing nodes"; the count
/// depends on how many nodes it was shown, so it is left out.
pub(crate) fn without_existing_prefix(reason: &str) -> &str {
    match reason.strip_prefix("does not fit any of ") {
        Some(rest) => match rest.find("existing nodes") {
            Some(at) => rest[at + "existing nodes".len()..].trim_start_matches("; "),
            None => reason,
        },
        None => reason,
    }
}
