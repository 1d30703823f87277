//! Simulations without re-solving the whole cluster each time.
//!
//! Most pods have no topology spread, no pod (anti-)affinity, no preferences, no host ports, and
//! no other pod's anti-affinity selects them. For such pods the solver's placement on existing
//! nodes is plain first fit — largest pod first, nodes in the solver's order (initialized first,
//! then by name), the first node whose taints the pod tolerates, whose labels meet its
//! requirements and whose free capacity holds it — and the pods that fit nowhere go to new
//! NodeClaims exactly as they would with the existing nodes present, since existing nodes never
//! take part in NodeClaim packing. So [`Fast`] places those pods itself, on per-node free
//! capacity kept between simulations, and hands only the leftovers to the solver, with no
//! existing nodes. A simulation with any other pod goes to the full solver ([`full_solve`]).
//!
//! Results also carry a [`Stamp`]: what they depended on. Free capacity only ever shrinks
//! between passes (actions add pods to nodes and take nodes away), so a result stays true while
//! the nodes its pods landed on are unchanged and no node has joined that could come earlier
//! in the order — the engine reuses failed simulations of earlier passes on that ground.

use rustc_hash::{FxHashMap, FxHashSet};

use super::cluster::{Cluster, Status};
use super::input::Release;
use super::sim::{
    full_solve, set_usage, sim_pods, solve_for, sort_failures, without_existing_prefix, Claim,
    Counted, Failure, Landed, PodRef, SimRequest, SimResult, Simulator, Stamp,
};
use crate::model::labels;
use crate::model::node::Node;
use crate::model::pod::Pod;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::selector::LabelSelector;
use crate::model::taints::{first_untolerated, Effect, Taint, Toleration};
use crate::scheduling::{ExistingNode, SolveMemo};

/// What placement needs of a node, as the solver's `prepare_existing` computes it.
#[derive(Debug, Clone)]
struct NodeInfo {
    version: u64,
    /// Allocatable minus its pods and the DaemonSets that will run there.
    available: Resources,
}

/// Pods with the same tolerations and node requirements go to the same nodes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClassKey {
    tolerations: Vec<Toleration>,
    requirements: Requirements,
    /// A consolidation candidate's pod, kept off nodes under `consolidateAfter` (v1.14).
    avoid_recent: bool,
}

/// The nodes a class of pods may use, in the solver's order.
#[derive(Debug, Clone)]
struct Class {
    key: ClassKey,
    nodes: Vec<usize>,
    /// Nodes known when the list was built.
    known: usize,
}

/// The fast simulator.
#[derive(Debug, Default)]
pub(crate) struct Fast {
    /// Per node: taints (the cordon included) and label requirements, which never change.
    statics: Vec<Option<(Vec<Taint>, Requirements)>>,
    infos: Vec<Option<NodeInfo>>,
    classes: Vec<Class>,
    class_index: FxHashMap<ClassKey, usize>,
    /// Selectors of every pod (anti-)affinity term in the cluster: a pod one of them selects
    /// is not simple.
    anti_selectors: Vec<LabelSelector>,
    /// Whether any node has a PreferNoSchedule taint, and how many nodes that was checked
    /// over: a pod that fits nowhere is retried tolerating such taints, on existing nodes too.
    prefer_no_schedule: (bool, usize),
    ready: bool,
    /// Per node: the requests of the pods placed on it in the current simulation.
    placed: FxHashMap<usize, Resources>,
    /// The class of each pod seen, as (pod, kept off nodes under consolidateAfter).
    pod_class: FxHashMap<(PodRef, bool), usize>,
    /// Whether each pod seen is simple.
    simple: FxHashMap<PodRef, bool>,
    /// The memo of the leftovers' solves, which never have existing nodes (so only what it keeps
    /// of the pools carries over), with the cluster's `offerings` it was made at: a launch into
    /// a reservation since makes it stale.
    leftover_memo: Option<(u64, SolveMemo)>,
}

/// The solver's pod order: CPU, then memory, largest first; then creation time, UID, name.
fn solver_order(a: &Pod, b: &Pod) -> std::cmp::Ordering {
    b.requests
        .cpu
        .cmp(&a.requests.cpu)
        .then(b.requests.memory.cmp(&a.requests.memory))
        .then_with(|| a.creation_timestamp.cmp(&b.creation_timestamp))
        .then_with(|| a.uid.cmp(&b.uid))
        .then_with(|| a.key().cmp(&b.key()))
}

/// The solver's node order: initialized first, then by name.
fn node_order(a: &Node, b: &Node) -> std::cmp::Ordering {
    b.initialized
        .cmp(&a.initialized)
        .then_with(|| a.name.cmp(&b.name))
}

fn requirements_of(pod: &Pod) -> Requirements {
    let mut reqs = Requirements::from_labels(pod.node_selector.iter());
    if let Some(term) = pod.required_node_affinity.first() {
        reqs.add_all(&Requirements::from_selectors(term));
    }
    reqs
}

fn node_requirements(node: &Node) -> Requirements {
    let mut reqs = Requirements::from_labels(node.labels.iter());
    if !node.labels.contains_key(labels::HOSTNAME) {
        reqs.add(Requirement::single(labels::HOSTNAME, &node.name));
    }
    reqs
}

fn node_taints(node: &Node) -> Vec<Taint> {
    let mut taints = node.taints.clone();
    let cordon = Taint::new("node.kubernetes.io/unschedulable", "", Effect::NoSchedule);
    if node.unschedulable && !taints.iter().any(|t| t.key == cordon.key) {
        taints.push(cordon);
    }
    taints
}

/// Keys the solver refuses outright (`validation_error`): such pods take the full solver.
fn refused_key(key: &str, op: Operator) -> bool {
    let key = labels::normalize_key(key);
    key == labels::HOSTNAME
        || (key == labels::NODEPOOL && op == Operator::DoesNotExist)
        || (key.starts_with("karpenter.sh/")
            && key != labels::NODEPOOL
            && key != labels::CAPACITY_TYPE)
}

impl Fast {
    fn prepare(&mut self, cluster: &Cluster) {
        if self.ready {
            return;
        }
        self.ready = true;
        let mut anti: Vec<LabelSelector> = Vec::new();
        let mut note = |pod: &Pod| {
            let terms = pod
                .pod_anti_affinity
                .iter()
                .chain(pod.preferred_pod_anti_affinity.iter().map(|w| &w.term))
                .chain(pod.pod_affinity.iter())
                .chain(pod.preferred_pod_affinity.iter().map(|w| &w.term));
            for t in terms {
                let s = t.label_selector.clone().unwrap_or_default();
                if !anti.contains(&s) {
                    anti.push(s);
                }
            }
        };
        for e in &cluster.sched.existing_nodes {
            e.pods.iter().for_each(&mut note);
        }
        cluster.pending.iter().for_each(&mut note);
        cluster.stuck.iter().for_each(&mut note);
        self.anti_selectors = anti;
    }

    /// Whether a node has a PreferNoSchedule taint (nodes only join, each checked once).
    fn nodes_prefer_no_schedule(&mut self, cluster: &Cluster) -> bool {
        let (mut any, checked) = self.prefer_no_schedule;
        for e in &cluster.sched.existing_nodes[checked..] {
            any |= e
                .node
                .taints
                .iter()
                .any(|t| t.effect == Effect::PreferNoSchedule);
        }
        self.prefer_no_schedule = (any, cluster.nodes.len());
        any
    }

    /// Whether the solver would place `pod` by plain first fit.
    fn is_simple(&self, pod: &Pod) -> bool {
        pod.topology_spread.is_empty()
            && pod.pod_affinity.is_empty()
            && pod.pod_anti_affinity.is_empty()
            && pod.preferred_pod_affinity.is_empty()
            && pod.preferred_pod_anti_affinity.is_empty()
            && pod.preferred_node_affinity.is_empty()
            && pod.required_node_affinity.len() <= 1
            && pod.host_ports.is_empty()
            && pod.volumes.is_empty()
            && pod.unsupported().is_none()
            && !pod.dra
            && !pod
                .node_selector
                .keys()
                .any(|k| refused_key(k, Operator::In))
            && pod
                .required_node_affinity
                .iter()
                .flatten()
                .all(|r| !refused_key(&r.key, r.operator) && r.validate().is_ok())
            && !self.anti_selectors.iter().any(|s| s.matches(&pod.labels))
    }

    fn statics(&mut self, cluster: &Cluster, i: usize) -> &(Vec<Taint>, Requirements) {
        if self.statics.len() < cluster.nodes.len() {
            self.statics.resize(cluster.nodes.len(), None);
        }
        self.statics[i].get_or_insert_with(|| {
            let node = cluster.node(i);
            (node_taints(node), node_requirements(node))
        })
    }

    /// Brings the node's free capacity (allocatable minus pods and expected DaemonSets) up to
    /// date.
    fn refresh(&mut self, cluster: &Cluster, i: usize) {
        if self.infos.len() < cluster.nodes.len() {
            self.infos.resize(cluster.nodes.len(), None);
        }
        let version = cluster.nodes[i].version;
        if self.infos[i].as_ref().is_none_or(|n| n.version != version) {
            let e = &cluster.sched.existing_nodes[i];
            let (taints, reqs) = self.statics(cluster, i).clone();
            let mut used = Resources::new();
            for p in e.pods.iter().filter(|p| !p.is_terminal()) {
                used.add_assign(&p.requests);
            }
            for d in &cluster.sched.daemonsets {
                let daemon = d.owner.as_ref().map(|o| o.name.as_str());
                let present = e.pods.iter().any(|p| {
                    p.is_daemonset_pod() && p.owner.as_ref().map(|o| o.name.as_str()) == daemon
                });
                if !present
                    && first_untolerated(&taints, &d.tolerations).is_none()
                    && reqs.is_compatible(&requirements_of(d), |_| false)
                {
                    used.add_assign(&d.requests);
                }
            }
            self.infos[i] = Some(NodeInfo {
                version,
                available: e.node.allocatable.sub(&used),
            });
        }
    }

    fn admits(&mut self, cluster: &Cluster, key: &ClassKey, i: usize) -> bool {
        let (taints, reqs) = self.statics(cluster, i);
        first_untolerated(taints, &key.tolerations).is_none()
            && reqs.is_compatible(&key.requirements, |_| false)
            && !(key.avoid_recent && cluster.under_consolidate_after(i))
    }

    /// The class of a pod, its node list brought up to date with nodes added since.
    fn class(&mut self, cluster: &Cluster, r: PodRef, avoid_recent: bool) -> usize {
        let c = match self.pod_class.get(&(r, avoid_recent)) {
            Some(&c) => c,
            None => {
                let pod = r.pod(cluster);
                let key = ClassKey {
                    tolerations: pod.tolerations.clone(),
                    requirements: requirements_of(pod),
                    avoid_recent,
                };
                let c = match self.class_index.get(&key) {
                    Some(&c) => c,
                    None => {
                        let c = self.classes.len();
                        self.class_index.insert(key.clone(), c);
                        self.classes.push(Class {
                            key,
                            nodes: Vec::new(),
                            known: 0,
                        });
                        c
                    }
                };
                self.pod_class.insert((r, avoid_recent), c);
                c
            }
        };
        let known = self.classes[c].known;
        if known < cluster.nodes.len() {
            let key = self.classes[c].key.clone();
            for i in known..cluster.nodes.len() {
                if self.admits(cluster, &key, i) {
                    let nodes = &mut self.classes[c].nodes;
                    let at = nodes
                        .partition_point(|&n| node_order(cluster.node(n), cluster.node(i)).is_lt());
                    nodes.insert(at, i);
                }
            }
            self.classes[c].known = cluster.nodes.len();
        }
        c
    }

    /// First fit on existing nodes; `None` for a pod that fits on none.
    fn place(
        &mut self,
        cluster: &Cluster,
        class: usize,
        pod: &Pod,
        away: &FxHashSet<usize>,
    ) -> Option<usize> {
        let len = self.classes[class].nodes.len();
        for k in 0..len {
            let i = self.classes[class].nodes[k];
            if away.contains(&i) || cluster.nodes[i].status != Status::Active {
                continue;
            }
            self.refresh(cluster, i);
            let available = &self.infos[i].as_ref().expect("refreshed").available;
            let total = match self.placed.get(&i) {
                Some(p) => p.add(&pod.requests),
                None => pod.requests.clone(),
            };
            if total.fits_in(available) {
                self.placed.insert(i, total);
                return Some(i);
            }
        }
        None
    }

    /// The fast path, or `None` when the full solver must answer.
    fn try_fast(&mut self, cluster: &mut Cluster, request: &SimRequest) -> Option<SimResult> {
        self.prepare(cluster);
        let refs = sim_pods(cluster, request);
        for &r in &refs {
            let simple = match self.simple.get(&r) {
                Some(&s) => s,
                None => {
                    let s = self.is_simple(r.pod(cluster));
                    self.simple.insert(r, s);
                    s
                }
            };
            if !simple {
                return None;
            }
        }
        let mut order = refs.clone();
        order.sort_by(|a, b| solver_order(a.pod(cluster), b.pod(cluster)));
        let away: FxHashSet<usize> = request.candidates.iter().copied().collect();
        let mut landed: FxHashMap<usize, Vec<PodRef>> = FxHashMap::default();
        let mut leftovers: Vec<PodRef> = Vec::new();
        self.placed.clear();
        for &r in &order {
            let avoid_recent = request.consolidation && matches!(r, PodRef::Bound { .. });
            let class = self.class(cluster, r, avoid_recent);
            match self.place(cluster, class, r.pod(cluster), &away) {
                Some(i) => landed.entry(i).or_default().push(r),
                None => leftovers.push(r),
            }
        }
        self.placed.clear();
        let mut result = SimResult::default();
        let mut claims_needed = false;
        if !leftovers.is_empty() {
            // A pod that fits nowhere is retried tolerating PreferNoSchedule taints, existing
            // nodes first: only the full solver knows where it lands then.
            if self.nodes_prefer_no_schedule(cluster) {
                return None;
            }
            claims_needed = true;
            // The solver with no existing node: they take no part in NodeClaim packing.
            let plan = {
                set_usage(cluster, &request.candidates);
                let pods: Vec<Pod> = leftovers.iter().map(|r| r.pod(cluster).clone()).collect();
                let existing: Vec<ExistingNode> = std::mem::take(&mut cluster.sched.existing_nodes);
                cluster.sched.pods = pods;
                // No existing node: the cluster's tracking memo is not for this input.
                let at = cluster.offerings;
                if self
                    .leftover_memo
                    .as_ref()
                    .is_some_and(|(made, _)| *made != at)
                {
                    self.leftover_memo = None;
                }
                let (_, memo) = self
                    .leftover_memo
                    .get_or_insert_with(|| (at, SolveMemo::tracking()));
                let plan = solve_for(cluster, request, Some(memo));
                cluster.sched.pods = Vec::new();
                cluster.sched.existing_nodes = existing;
                plan
            };
            let by_key: FxHashMap<String, PodRef> = leftovers
                .iter()
                .map(|&r| (r.pod(cluster).key(), r))
                .collect();
            for u in &plan.unschedulable {
                let pod = by_key[&u.pod];
                if !pod.is_pending() {
                    result.failures.push(Failure::Unschedulable {
                        pod,
                        detail: without_existing_prefix(&u.reason.to_string()).to_string(),
                    });
                }
            }
            for planned in plan.node_claims {
                let pods = planned.pods.iter().map(|k| by_key[k]).collect();
                result.claims.push(Claim {
                    pool: cluster.pool_by_name[&planned.node_pool],
                    planned,
                    pods,
                });
            }
        }
        let mut placements: Vec<(usize, Vec<PodRef>)> = landed.into_iter().collect();
        placements.sort_by(|a, b| cluster.node(a.0).name.cmp(&cluster.node(b.0).name));
        let mut uninitialized_landing = false;
        for (node, pods) in &mut placements {
            let key = |r: &PodRef| r.pod(cluster).key();
            pods.sort_by_key(key);
            if !cluster.usable_destination(*node) {
                uninitialized_landing = true;
                for &pod in pods.iter().filter(|p| p.waits_for_initialization(cluster)) {
                    result
                        .failures
                        .push(Failure::Uninitialized { pod, node: *node });
                }
            }
        }
        result.stamp = Some(Stamp::Nodes {
            landed: self.landed(cluster, &placements),
            node_count: (claims_needed
                || uninitialized_landing
                || cluster.release == Release::V0_31)
                .then_some(cluster.nodes.len()),
            usage: claims_needed.then(|| cluster.limited_usage()),
            pending: cluster.pending.len(),
            stuck: cluster.stuck.len(),
        });
        result.placements = placements;
        sort_failures(cluster, &mut result.failures);
        Some(result)
    }
}

impl Fast {
    /// The nodes a simulation's pods landed on, with the room it left on each (see [`Landed`]).
    fn landed(&mut self, cluster: &Cluster, placements: &[(usize, Vec<PodRef>)]) -> Vec<Landed> {
        placements
            .iter()
            .map(|(n, pods)| {
                let node = *n;
                // The room is known as the solver counts it only for an initialized node not
                // under `consolidateAfter` (no taint of its own comes and goes).
                let slack = (cluster.node(node).initialized
                    && cluster.nodes[node].status == Status::Active
                    && !cluster.under_consolidate_after(node))
                .then(|| {
                    self.refresh(cluster, node);
                    let mut used = Resources::new();
                    for r in pods {
                        used.add_assign(&r.pod(cluster).requests);
                    }
                    let available = &self.infos[node].as_ref().expect("refreshed").available;
                    available.sub(&used)
                });
                Landed {
                    node,
                    version: cluster.nodes[node].version,
                    pods: cluster.pods(node).len(),
                    slack,
                }
            })
            .collect()
    }

    /// A stamp for a full solve's result, when its dependencies can be named: no pod of the
    /// cluster has pod (anti-)affinity (whose groups count pods everywhere), no pending or
    /// stuck pod (they tolerate the `consolidateAfter` taint, under which a node's expected
    /// DaemonSets, and so its free capacity, change), and every spread constraint of the
    /// simulated pods counts pods found by a required label and ignores taints; no pool is
    /// static.
    fn solved_stamp(
        &mut self,
        cluster: &Cluster,
        request: &SimRequest,
        result: &SimResult,
    ) -> Option<Stamp> {
        self.prepare(cluster);
        // A static pool's missing replicas count its running nodes, which no stamp names.
        let static_pool = (0..cluster.pools.len()).any(|p| cluster.pool(p).replicas.is_some());
        if !self.anti_selectors.is_empty()
            || !cluster.pending.is_empty()
            || !cluster.stuck.is_empty()
            || static_pool
        {
            return None;
        }
        let mut counted: Vec<Counted> = Vec::new();
        for &(node, pod) in &request.pods {
            let pod = &cluster.pods(node)[pod];
            for c in &pod.topology_spread {
                if c.honor_taints {
                    return None;
                }
                let Some(selector) = &c.label_selector else {
                    continue;
                };
                if counted
                    .iter()
                    .any(|k| k.namespace == pod.namespace && k.selector == *selector)
                {
                    continue;
                }
                counted.push(Counted::now(cluster, &pod.namespace, selector)?);
            }
        }
        Some(Stamp::Solved {
            landed: self.landed(cluster, &result.placements),
            node_count: cluster.nodes.len(),
            usage: cluster.limited_usage(),
            counted,
        })
    }
}

impl Simulator for Fast {
    fn simulate(&mut self, cluster: &mut Cluster, request: &SimRequest) -> SimResult {
        match self.try_fast(cluster, request) {
            Some(r) => r,
            None => {
                let mut r = full_solve(cluster, request);
                r.stamp = Some(
                    self.solved_stamp(cluster, request, &r)
                        .unwrap_or(Stamp::Epoch(cluster.epoch)),
                );
                r
            }
        }
    }

    fn still_valid(&self, cluster: &Cluster, stamp: &Stamp) -> bool {
        match stamp {
            Stamp::Epoch(e) => *e == cluster.epoch,
            Stamp::Solved {
                landed,
                node_count,
                usage,
                counted,
            } => {
                *node_count == cluster.nodes.len()
                    && landed.iter().all(|l| l.holds(cluster))
                    && *usage == cluster.limited_usage()
                    && counted.iter().all(|c| c.holds(cluster))
            }
            Stamp::Nodes {
                landed,
                node_count,
                usage,
                pending,
                stuck,
            } => {
                landed.iter().all(|l| l.holds(cluster))
                    && node_count.is_none_or(|c| c == cluster.nodes.len())
                    && usage.as_ref().is_none_or(|u| *u == cluster.limited_usage())
                    && *pending == cluster.pending.len()
                    && *stuck == cluster.stuck.len()
            }
        }
    }
}
