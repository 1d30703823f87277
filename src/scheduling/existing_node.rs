//! Nodes that already exist (or NodeClaims in flight from an earlier run): what is left of their
//! allocatable once their pods and DaemonSets are counted, and whether a pod fits there.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/existingnode.go`
//! (`ExistingNode.CanAdd`, `tryVolumeAlternative`) and, from `scheduler.go`,
//! `calculateExistingNodeClaims` and `sortExistingNodes`; the taints held against pods are
//! `pkg/controllers/state/statenode.go` `Taints()` ([`Node::scheduling_taints`]), the attach
//! limits `pkg/controllers/state/cluster.go` `populateVolumeLimits` (from the node's CSINode).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::node::Node;
use crate::model::pod::{HostPort, Pod};
use crate::model::requirements::{Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::taints::{first_untolerated, Effect, Taint};

use super::node_claim::host_port_conflict;
use super::node_claim_template::PreparedPool;
use super::podreqs::PodState;
use super::scheduler::{Fail, Solver, HOSTNAME};
use super::topology::{KeptUniverse, KeyValues, PodIndex};
use super::topology_group::UniverseKey;
use super::volumes::{bound_usage, exceeded_limit};
use super::{ExistingNode, Input};
use crate::model::storage::Storage;

/// An existing node being filled.
pub(super) struct Existing<'a> {
    /// The node's position in the input (what the compatibility cache is keyed by).
    pub(super) position: usize,
    pub(super) node: &'a Node,
    pub(super) reqs: &'a Requirements,
    /// The node's taints as scheduling sees them: borrowed unless they differ (a node not
    /// initialized, or cordoned).
    pub(super) taints: Cow<'a, [Taint]>,
    pub(super) available: Resources,
    pub(super) requests: Resources,
    pub(super) placed: Vec<usize>,
    pub(super) host_ports: Vec<HostPort>,
    /// CSI driver → claims attached (by the pods bound and placed here).
    pub(super) volume_usage: BTreeMap<String, BTreeSet<String>>,
    /// CSI driver → attach limit, from the node's CSINode (none: unlimited).
    pub(super) attach_limits: Option<&'a BTreeMap<String, u32>>,
}

/// What scheduling derives from a node's labels. Deriving it allocates a requirement per label,
/// so it is kept between the solves of one cluster ([`SolveMemo`]): a consolidation evaluation
/// solves the same thousands of nodes again for every simulation.
#[derive(Debug)]
pub(crate) struct NodeFacts {
    labels: BTreeMap<String, String>,
    /// The labels as requirements (`NewLabelRequirements(node.Labels)`, what topology counts).
    pub(super) label_reqs: Requirements,
    /// With the hostname added when the labels lack it (what placement checks), when it differs.
    with_hostname: Option<Requirements>,
}

impl NodeFacts {
    fn new(node: &Node) -> Self {
        let label_reqs = Requirements::from_labels(node.labels.iter());
        let with_hostname = (!node.labels.contains_key(HOSTNAME)).then(|| {
            let mut reqs = label_reqs.clone();
            reqs.add(Requirement::single(HOSTNAME, &node.name));
            reqs
        });
        NodeFacts {
            labels: node.labels.clone(),
            label_reqs,
            with_hostname,
        }
    }

    pub(super) fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// The node's requirements for placement.
    pub(super) fn requirements(&self) -> &Requirements {
        self.with_hostname.as_ref().unwrap_or(&self.label_reqs)
    }
}

/// What solves of the same cluster keep between them. By default only the nodes' facts, by node
/// name: an entry whose labels no longer match the node is derived again, so a stale memo is
/// never wrong, only slower. A [`SolveMemo::tracking`] memo keeps more — what the nodes' pods add
/// up to, the node order, the pods by label, the domains of each topology key, the prepared
/// pools — on the caller's word that nodes are only ever appended, that a node's labels never
/// change, that the pools, their instance types and the DaemonSets change only in the pools'
/// usage, and that it calls
/// [`SolveMemo::changed`] whenever a node's pods (or anything else but its `deleting` flag and
/// taints, which are read afresh every solve) change. The consolidation engine solves the same
/// thousands of nodes for every simulation; rebuilding all of that each time was most of its cost.
#[derive(Debug, Default)]
pub struct SolveMemo {
    nodes: FxHashMap<String, Arc<NodeFacts>>,
    tracked: Option<Tracked>,
}

/// The caches of a tracking memo, by node position.
#[derive(Debug, Default)]
pub(super) struct Tracked {
    /// Bumped by every [`SolveMemo::changed`].
    generation: u64,
    /// Per node: the generation it last changed in.
    versions: Vec<u64>,
    facts: Vec<Arc<NodeFacts>>,
    /// Per node: its pods' totals, at its version, and whether none of its pods has a volume
    /// (then the totals do not depend on the storage view).
    totals: Vec<Option<(u64, PodTotals, bool)>>,
    /// Node positions in the solver's order, at a generation and node count.
    order: Option<(u64, usize, Vec<usize>)>,
    /// The pods of every node by label, kept up to date as pods are added.
    pub(super) pods: PodIndex,
    /// Per topology key: the domains the pools provide and those of the nodes seen so far.
    pub(super) domains: FxHashMap<String, KeyDomains>,
    /// Per spread group that filters nodes: its domain universe over the nodes seen so far.
    pub(super) universes: FxHashMap<UniverseKey, KeptUniverse>,
    /// Which nodes admit which pod requirements (a node's labels do not change).
    pub(super) compat: CompatCache,
    /// Which nodes share their domains of a list of topology keys (labels do not change).
    pub(super) domain_classes: DomainClasses,
    /// The pools as prepared for packing, but for their limits (the pools, their types and the
    /// DaemonSets do not change between solves; only the pools' usage does).
    pub(super) pools: Vec<PreparedPool>,
}

/// Whether a node's labels admit a pod's requirements, remembered per (requirements, node):
/// the answer depends on nothing else, and a consolidation simulation asks it of the same few
/// requirement sets on thousands of nodes, simulation after simulation.
#[derive(Debug, Default)]
pub(super) struct CompatCache {
    ids: FxHashMap<Requirements, u32>,
    /// Per requirement set, per node position: 0 not known yet, 1 compatible, 2 not.
    table: Vec<Vec<u8>>,
}

impl CompatCache {
    pub(super) fn id(&mut self, reqs: &Requirements) -> u32 {
        if let Some(&id) = self.ids.get(reqs) {
            return id;
        }
        let id = self.table.len() as u32;
        self.ids.insert(reqs.clone(), id);
        self.table.push(Vec::new());
        id
    }

    fn compatible(&mut self, id: u32, position: usize, check: impl FnOnce() -> bool) -> bool {
        let row = &mut self.table[id as usize];
        if row.len() <= position {
            row.resize(position + 1, 0);
        }
        match row[position] {
            1 => true,
            2 => false,
            _ => {
                let ok = check();
                row[position] = if ok { 1 } else { 2 };
                ok
            }
        }
    }
}

/// Nodes grouped by their requirements on a list of topology keys, by node position: topology
/// answers nodes of one group alike ([`TopologyVerdicts`]), so a pod that topology keeps out of a
/// zone skips that zone's nodes at once ([`Solver::first_fit_existing`]). Kept by a tracking
/// memo (a node's labels do not change), else for one solve.
#[derive(Debug, Default)]
pub(super) struct DomainClasses {
    /// Per key list: each node's class by position (`u32::MAX`: not known yet), and each
    /// class's requirements on the keys.
    lists: Vec<(Vec<String>, Vec<u32>, Vec<NodeDomains>)>,
}

impl DomainClasses {
    fn list(&mut self, keys: &[&str]) -> usize {
        if let Some(i) = self
            .lists
            .iter()
            .position(|(k, _, _)| k.iter().map(String::as_str).eq(keys.iter().copied()))
        {
            return i;
        }
        let keys = keys.iter().map(|k| (*k).to_string()).collect();
        self.lists.push((keys, Vec::new(), Vec::new()));
        self.lists.len() - 1
    }

    /// The class of the node at `position`, whose placement requirements are `reqs`.
    fn class(&mut self, list: usize, position: usize, reqs: &Requirements) -> usize {
        let (keys, by_position, classes) = &mut self.lists[list];
        if by_position.len() <= position {
            by_position.resize(position + 1, u32::MAX);
        }
        if by_position[position] != u32::MAX {
            return by_position[position] as usize;
        }
        let domains: NodeDomains = keys.iter().map(|k| reqs.get_ref(k).cloned()).collect();
        let class = match classes.iter().position(|d| *d == domains) {
            Some(c) => c,
            None => {
                classes.push(domains);
                classes.len() - 1
            }
        };
        by_position[position] = class as u32;
        class
    }
}

/// The domains of one topology key (`domain_universe`), kept by a tracking memo.
#[derive(Debug, Default, Clone)]
pub(super) struct KeyDomains {
    /// What the usable pools' types provide, with each pool's taints, in the order found.
    pub(super) pools: Vec<(String, Vec<Taint>)>,
    /// The values of the nodes seen so far, by node position. A solve counts only the nodes not
    /// being removed (`deleting`, read afresh each solve).
    pub(super) nodes: KeyValues,
}

/// What a node's pods add up to (the non-terminal ones), what its DaemonSet pods among them
/// request, and which DaemonSets its labels admit.
#[derive(Debug, Clone)]
struct PodTotals {
    used: Resources,
    host_ports: Vec<HostPort>,
    /// The requests of the node's DaemonSet pods (`StateNode.DaemonSetRequests()`), whatever
    /// DaemonSet they belong to.
    daemon_used: Resources,
    /// Per DaemonSet of the input: whether the node's labels admit it.
    admits: Vec<bool>,
}

impl SolveMemo {
    /// A memo that also keeps what the nodes' pods derive, trusting the caller to report
    /// every change with [`SolveMemo::changed`] (see the type's documentation).
    pub fn tracking() -> Self {
        SolveMemo {
            nodes: FxHashMap::default(),
            tracked: Some(Tracked::default()),
        }
    }

    /// Node `node` (by position) changed: its pods, its status, or it was just added.
    pub fn changed(&mut self, node: usize) {
        if let Some(t) = self.tracked.as_mut() {
            t.generation += 1;
            if t.versions.len() <= node {
                t.versions.resize(node + 1, 0);
            }
            t.versions[node] = t.generation;
        }
    }

    /// The pools' offerings changed (a reservation used up: an offering no longer available):
    /// the pools are prepared again at the next solve (their types and offering slots are
    /// read off the available offerings). The pools' domains stay: they come from the types'
    /// requirements, which do not change (`pool_domains`); so do the nodes' caches.
    pub fn offerings_changed(&mut self) {
        if let Some(t) = self.tracked.as_mut() {
            t.pools.clear();
        }
    }

    pub(super) fn tracked(&mut self) -> Option<&mut Tracked> {
        self.tracked.as_mut()
    }

    /// The facts of every existing node of `input`, in its order.
    pub(super) fn facts(&mut self, input: &Input) -> Vec<Arc<NodeFacts>> {
        if let Some(t) = self.tracked.as_mut() {
            for n in &input.existing_nodes[t.facts.len().min(input.existing_nodes.len())..] {
                t.facts.push(Arc::new(NodeFacts::new(&n.node)));
            }
            return t.facts[..input.existing_nodes.len()].to_vec();
        }
        input
            .existing_nodes
            .iter()
            .map(|n| match self.nodes.get(&n.node.name) {
                Some(f) if f.labels == n.node.labels => f.clone(),
                _ => {
                    let f = Arc::new(NodeFacts::new(&n.node));
                    self.nodes.insert(n.node.name.clone(), f.clone());
                    f
                }
            })
            .collect()
    }
}

impl Tracked {
    fn version(&self, node: usize) -> u64 {
        self.versions.get(node).copied().unwrap_or(0)
    }
}

/// A node's pods' totals and its DaemonSets' presence and admission, derived afresh.
fn pod_totals(
    n: &ExistingNode,
    facts: &NodeFacts,
    daemons: &[(&Pod, PodState)],
    storage: Option<&Storage>,
    volume_usage: &mut BTreeMap<String, BTreeSet<String>>,
) -> PodTotals {
    let mut used = Resources::new();
    let mut daemon_used = Resources::new();
    let mut host_ports = Vec::new();
    for p in n.pods.iter().filter(|p| !p.is_terminal()) {
        used.add_assign(&p.requests);
        if p.is_daemonset_pod() {
            daemon_used.add_assign(&p.requests);
        }
        host_ports.extend(p.host_ports.iter().cloned());
        if let Some(storage) = storage {
            for (driver, claims) in bound_usage(p, storage) {
                volume_usage.entry(driver).or_default().extend(claims);
            }
        }
    }
    let admits = daemons
        .iter()
        .map(|(_, state)| {
            facts
                .requirements()
                .is_compatible(&state.strict_requirements, |_| false)
        })
        .collect();
    PodTotals {
        used,
        host_ports,
        daemon_used,
        admits,
    }
}

/// `r` with its negative entries dropped (Karpenter clamps the DaemonSet resources left to
/// schedule at zero, `existingnode.go` `NewExistingNode`).
fn at_least_zero(r: &Resources) -> Resources {
    let mut out = Resources::new();
    for (name, v) in r.iter().filter(|(_, v)| *v > 0) {
        out.set(name, v);
    }
    out
}

/// `facts`: [`SolveMemo::facts`] of `input`; `tracked`: the memo's caches when it tracks.
pub(super) fn prepare_existing<'a>(
    input: &'a Input,
    facts: &'a [Arc<NodeFacts>],
    mut tracked: Option<&mut Tracked>,
) -> Vec<Existing<'a>> {
    // The DaemonSets' scheduling requirements, once rather than once per node; those with DRA
    // claims are left out (`scheduler.go getCompatibleDaemonPods` `shouldSkipDaemonPod`).
    let daemons: Vec<_> = input
        .daemonsets
        .iter()
        .filter(|d| !d.dra)
        .map(|d| (d, PodState::new(0, d)))
        .collect();
    let storage = input.storage.as_deref();
    let order = node_order(input, tracked.as_deref_mut());
    let mut nodes = Vec::with_capacity(order.len());
    for i in order {
        let n = &input.existing_nodes[i];
        if n.node.deleting {
            continue;
        }
        let facts = &facts[i];
        let mut taints: Cow<'a, [Taint]> = if n.node.initialized {
            Cow::Borrowed(&n.node.taints)
        } else {
            Cow::Owned(n.node.scheduling_taints())
        };
        if n.node.unschedulable {
            let cordon = Taint::new("node.kubernetes.io/unschedulable", "", Effect::NoSchedule);
            if !taints.iter().any(|t| t.key == cordon.key) {
                taints.to_mut().push(cordon);
            }
        }
        let mut volume_usage: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        // A node whose pods have volumes reads them afresh: they depend on the storage view,
        // which the memo does not track. The others' totals are kept (with a storage view too:
        // consolidation always has one, and re-adding every node's pods made each of its
        // simulations cost the whole cluster).
        // Borrowed from the memo when it holds them: a consolidation evaluation prepares every
        // node again for each of its thousands of simulations.
        let fresh;
        let totals: &PodTotals = match tracked.as_deref_mut() {
            Some(t) => {
                let version = t.version(i);
                if t.totals.len() <= i {
                    t.totals.resize(i + 1, None);
                }
                let kept = matches!(&t.totals[i], Some((v, _, volume_free))
                    if *v == version && (*volume_free || storage.is_none()));
                if !kept {
                    let totals = pod_totals(n, facts, &daemons, storage, &mut volume_usage);
                    let volume_free = n.pods.iter().all(|p| p.volumes.is_empty());
                    t.totals[i] = Some((version, totals, volume_free));
                }
                &t.totals[i].as_ref().expect("just kept").1
            }
            None => {
                fresh = pod_totals(n, facts, &daemons, storage, &mut volume_usage);
                &fresh
            }
        };
        let mut used = totals.used.clone();
        // The DaemonSets that would run here take their share of resources, less what the
        // node's DaemonSet pods already request, per resource and never below zero (`core
        // v1.14.1: pkg/controllers/provisioning/scheduling/existingnode.go` `NewExistingNode`,
        // the sum `scheduler.go` `getCompatibleDaemonPods` gives it): a DaemonSet without its
        // pod yet counts whole; one whose pod requests less than its template (a rollout to
        // bigger requests) counts the difference; a DaemonSet pod the input has no DaemonSet
        // for offsets the others. Their host ports are not held: Karpenter's existing-node check
        // only sees the ports of pods bound there (`CanAdd`, `HostPortUsage` of the state node;
        // docs/upstream-tests.md, Existing Nodes).
        let mut expected = Resources::new();
        for ((d, _), &admits) in daemons.iter().zip(&totals.admits) {
            if admits && first_untolerated(&taints, &d.tolerations).is_none() {
                expected.add_assign(&d.requests);
            }
        }
        used.add_assign(&at_least_zero(&expected.sub(&totals.daemon_used)));
        nodes.push(Existing {
            position: i,
            node: &n.node,
            reqs: facts.requirements(),
            taints,
            // `Options::possibility`: the node's whole room, as if its pods had moved away.
            available: if input.options.possibility {
                n.node.allocatable.clone()
            } else {
                n.node.allocatable.sub(&used)
            },
            requests: Resources::new(),
            placed: Vec::new(),
            host_ports: totals.host_ports.clone(),
            volume_usage,
            attach_limits: storage.and_then(|s| s.attach_limits.get(&n.node.name)),
        });
    }
    nodes
}

/// What topology answered for one pod (at one [`Topology`](super::topology::Topology)
/// generation, with one set of strict requirements) on nodes with given domains: it reads
/// nothing else of a node, so nodes of the same zone share one verdict.
#[derive(Debug, Default)]
pub(super) struct TopologyVerdicts {
    pod: Option<(usize, u64, Arc<Requirements>)>,
    /// The node's requirement on each of the pod's topology keys, and the verdict.
    by_domains: Vec<(NodeDomains, Result<(), Fail>)>,
}

/// A node's requirement on each of a pod's topology keys, in the keys' order.
type NodeDomains = Vec<Option<Requirement>>;

impl TopologyVerdicts {
    fn is_for(&self, s: usize, generation: u64, strict: &Arc<Requirements>) -> bool {
        self.pod
            .as_ref()
            .is_some_and(|(p, g, r)| *p == s && *g == generation && Arc::ptr_eq(r, strict))
    }
}

/// Node positions in the solver's order: initialized nodes first, then by name (deleting ones
/// included; the caller skips them).
fn node_order(input: &Input, tracked: Option<&mut Tracked>) -> Vec<usize> {
    let sorted = || {
        let mut order: Vec<usize> = (0..input.existing_nodes.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&input.existing_nodes[a].node, &input.existing_nodes[b].node);
            b.initialized
                .cmp(&a.initialized)
                .then_with(|| a.name.cmp(&b.name))
        });
        order
    };
    let Some(t) = tracked else {
        return sorted();
    };
    let key = (t.generation, input.existing_nodes.len());
    match &t.order {
        Some((g, len, order)) if (*g, *len) == key => order.clone(),
        _ => {
            let order = sorted();
            t.order = Some((key.0, key.1, order.clone()));
            order
        }
    }
}

impl<'a> Solver<'a> {
    /// Pod `s` on the first existing node from `from` on that takes it (`None`: none does).
    ///
    /// A pod that topology constrains on keys other than the hostname, with no volume
    /// alternatives, skips every node of a class ([`DomainClasses`]: the same requirements on
    /// those keys) whose topology verdict refuses it, without trying them one by one. Exact:
    /// [`Solver::try_existing`] fails on such a node whatever its other checks say (the verdict
    /// reads only the node's requirements on the pod's topology keys, and nothing changes the
    /// topology during the walk, since a failed try records nothing), and a failed try has no
    /// effect but on caches. A zone-spread pod that fits nowhere walked every node of the
    /// cluster in every simulation (docs/performance.md B7). `Options::exhaustive` tries every
    /// node, as the tests compare.
    pub(super) fn first_fit_existing(&mut self, from: usize, s: usize) -> Option<usize> {
        let state = &self.states[s];
        let keys: Vec<&str> =
            if self.topology.is_trivial_for(state) || !self.volume_alternatives(s).is_empty() {
                Vec::new()
            } else {
                self.topology.keys_for(state).collect()
            };
        if keys.is_empty() || keys.contains(&HOSTNAME) || self.input.options.exhaustive {
            return (from..self.existing.len()).find(|&e| self.try_existing(e, s).is_ok());
        }
        let list = self.domain_classes.borrow_mut().list(&keys);
        // Per class: `None` not asked yet, else whether topology admits the pod there.
        let mut admitted: Vec<Option<bool>> = Vec::new();
        for e in from..self.existing.len() {
            let node = &self.existing[e];
            let class = self
                .domain_classes
                .borrow_mut()
                .class(list, node.position, node.reqs);
            if admitted.len() <= class {
                admitted.resize(class + 1, None);
            }
            let ok = match admitted[class] {
                Some(ok) => ok,
                None => {
                    let ok = self.check_topology(s, node.reqs).is_ok();
                    admitted[class] = Some(ok);
                    ok
                }
            };
            if ok && self.try_existing(e, s).is_ok() {
                return Some(e);
            }
        }
        None
    }

    pub(super) fn try_existing(&mut self, e: usize, s: usize) -> Result<(), Fail> {
        let pod = self.pod(s);
        let state = &self.states[s];
        let volumes = self.volumes[s].as_ref();
        let node = &self.existing[e];
        if let Some(t) = first_untolerated(&node.taints, &state.tolerations) {
            return Err(Fail::Taint(t.clone()));
        }
        if let (Some(v), Some(limits)) = (volumes, node.attach_limits) {
            if exceeded_limit(&node.volume_usage, &v.usage, limits).is_some() {
                return Err(Fail::VolumeLimit);
            }
        }
        let requests = node.requests.add(&pod.requests);
        if !requests.fits_in(&node.available) {
            return Err(Fail::NoInstanceType);
        }
        if !self.admits(s, node) {
            return Err(Fail::Requirements);
        }
        if let Some(p) = host_port_conflict(&node.host_ports, &pod.host_ports) {
            return Err(Fail::HostPort(p));
        }
        // Each volume alternative in turn: the node must satisfy it (its labels are what they
        // are: nothing is allowed undefined), then topology, with the volume's narrowing.
        let alternatives = volumes.map_or(&[][..], |v| v.alternatives.as_slice());
        let mut chosen: Option<Requirements> = None;
        let mut last = Fail::Volume;
        for alt in alternatives {
            if !node.reqs.is_compatible(alt, |_| false) {
                last = Fail::Volume;
                continue;
            }
            let mut reqs = Requirements::clone(node.reqs);
            reqs.add_all(alt);
            match self.check_topology(s, &reqs) {
                Ok(()) => {
                    chosen = Some(reqs);
                    break;
                }
                Err(f) => last = f,
            }
        }
        if alternatives.is_empty() {
            let node = &self.existing[e];
            self.check_topology(s, node.reqs)?;
        } else if chosen.is_none() {
            return Err(last);
        }
        let node = &mut self.existing[e];
        node.requests = requests;
        node.placed.push(s);
        node.host_ports.extend(pod.host_ports.iter().cloned());
        if let Some(v) = volumes {
            for (driver, claims) in &v.usage {
                node.volume_usage
                    .entry(driver.clone())
                    .or_default()
                    .extend(claims.iter().cloned());
            }
        }
        let reqs = chosen.unwrap_or_else(|| Requirements::clone(node.reqs));
        self.topology
            .record(&self.states[s], pod, &reqs, &node.taints);
        Ok(())
    }

    /// Whether the node's labels admit pod `s`'s requirements, remembered per requirement set
    /// and node ([`CompatCache`]).
    fn admits(&self, s: usize, node: &Existing<'_>) -> bool {
        let reqs = &self.states[s].requirements;
        let mut ids = self.compat_ids.borrow_mut();
        let mut cache = self.compat.borrow_mut();
        let id = match &ids[s] {
            Some((known, id)) if Arc::ptr_eq(known, reqs) => *id,
            _ => {
                let id = cache.id(reqs);
                ids[s] = Some((reqs.clone(), id));
                id
            }
        };
        cache.compatible(id, node.position, || {
            node.reqs.is_compatible(reqs, |_| false)
        })
    }

    /// Whether topology lets pod `s` onto a node with `reqs` (`Topology.AddRequirements` on an
    /// existing node: its domains are fixed, so the topology's choice must be one of them).
    fn check_topology(&self, s: usize, reqs: &Requirements) -> Result<(), Fail> {
        let state = &self.states[s];
        if self.topology.is_trivial_for(state) {
            return Ok(());
        }
        let mut verdicts = self.topology_verdicts.borrow_mut();
        let generation = self.topology.generation();
        if !verdicts.is_for(s, generation, &state.strict_requirements) {
            verdicts.pod = Some((s, generation, state.strict_requirements.clone()));
            verdicts.by_domains.clear();
        }
        let keys: Vec<&str> = self.topology.keys_for(state).collect();
        let known = verdicts.by_domains.iter().find(|(domains, _)| {
            domains
                .iter()
                .zip(&keys)
                .all(|(d, k)| d.as_ref() == reqs.get_ref(k))
        });
        if let Some((_, verdict)) = known {
            return verdict.clone();
        }
        let verdict = self.topology_verdict(s, reqs);
        let domains = keys.iter().map(|k| reqs.get_ref(k).cloned()).collect();
        verdicts.by_domains.push((domains, verdict.clone()));
        verdict
    }

    /// [`Solver::check_topology`] worked out.
    fn topology_verdict(&self, s: usize, reqs: &Requirements) -> Result<(), Fail> {
        let state = &self.states[s];
        let extra = self
            .topology
            .requirements_for(state, self.pod(s), reqs, None)
            .map_err(Fail::Topology)?;
        for r in extra {
            if !reqs.get_ref(&r.key).is_some_and(|n| n.intersects(&r)) {
                return Err(Fail::Requirements);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::ExistingNode;
    use crate::testing::labels_of;

    fn input_with(name: &str, labels: &[(&str, &str)]) -> Input {
        Input {
            existing_nodes: vec![ExistingNode {
                node: Node {
                    name: name.into(),
                    labels: labels_of(labels),
                    ..Default::default()
                },
                pods: vec![],
            }],
            ..Default::default()
        }
    }

    /// `core v1.14.1: pkg/controllers/state/suite_test.go` "Node Resource Level", in one
    /// snapshot (`statenode.go` `updateForPod`, `cluster.go` `populateResourceRequests`): what
    /// an existing node has left is its allocatable less the requests of the pods bound to it
    /// (`spec.nodeName`) — "should count new / existing pods bound to nodes", 1.5 + 2 CPU of 4 —
    /// but not those of pods not bound ("should not count pods not bound to nodes": the pending
    /// pods of the input), nor of terminal ones ("should not add requests if the pod is
    /// terminal": Failed, Succeeded), nor of deleted ones (absent from the snapshot, "should
    /// subtract requests if the pod is deleted"); a terminating pod still counts (its
    /// `deletionTimestamp` does not free the node until it is gone). DaemonSet pods count as
    /// the others do and are summed apart ("should track daemonset requested resources
    /// separately"): the DaemonSet they belong to holds nothing more.
    #[test]
    fn node_resource_level_counts_the_bound_pods_that_are_not_terminal() {
        use crate::testing::PodBuilder;
        let on = |name: &str, cpu: &str| PodBuilder::new(name).cpu(cpu).on_node("n1").build();
        let phase = |mut p: Pod, phase: &str| {
            p.phase = Some(phase.into());
            p
        };
        let mut terminating = on("terminating", "500m");
        terminating.terminating = true;
        let daemon = PodBuilder::new("ds-x")
            .cpu("1")
            .memory("2Gi")
            .daemonset("ds")
            .on_node("n1")
            .build();
        let mut input = input_with("n1", &[(HOSTNAME, "n1")]);
        input.existing_nodes[0].node.allocatable =
            Resources::from_pairs(&[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")]);
        input.existing_nodes[0].pods = vec![
            phase(
                PodBuilder::new("p1")
                    .cpu("1.5")
                    .host_port(9100)
                    .on_node("n1")
                    .build(),
                "Running",
            ),
            on("p2", "2"),
            phase(
                PodBuilder::new("failed")
                    .cpu("1")
                    .host_port(9200)
                    .on_node("n1")
                    .build(),
                "Failed",
            ),
            phase(on("succeeded", "1"), "Succeeded"),
            terminating,
            daemon,
        ];
        input.pods = vec![PodBuilder::new("pending").cpu("1").build()];
        input.daemonsets = vec![PodBuilder::new("ds")
            .cpu("1")
            .memory("2Gi")
            .daemonset("ds")
            .build()];
        let mut memo = SolveMemo::default();
        let facts = memo.facts(&input);
        let nodes = prepare_existing(&input, &facts, None);
        let left = &nodes[0].available;
        assert_eq!(left.get("cpu"), 4000 - 1500 - 2000 - 500 - 1000);
        assert_eq!(left.get("memory"), 6 * 1024 * 1024 * 1024 * 1000);
        assert_eq!(left.get("pods"), (110 - 4) * 1000);
        // The bound pods' host ports are held ("HostPort Usage" › "should hydrate the HostPort
        // usage on a Node update"), a terminal pod's are not.
        let ports: Vec<i32> = nodes[0].host_ports.iter().map(|p| p.port).collect();
        assert_eq!(ports, [9100]);
        // The node's pods gone (deleted), it is whole again, less the DaemonSet expected there.
        input.existing_nodes[0].pods.clear();
        let nodes = prepare_existing(&input, &facts, None);
        assert_eq!(nodes[0].available.get("cpu"), 3000);
    }

    #[test]
    fn the_memo_keeps_a_nodes_facts_until_its_labels_change() {
        let mut memo = SolveMemo::default();
        let first = memo.facts(&input_with("n1", &[(HOSTNAME, "n1"), ("zone", "a")]));
        let again = memo.facts(&input_with("n1", &[(HOSTNAME, "n1"), ("zone", "a")]));
        assert!(
            Arc::ptr_eq(&first[0], &again[0]),
            "unchanged labels reuse the facts"
        );
        let relabelled = memo.facts(&input_with("n1", &[(HOSTNAME, "n1"), ("zone", "b")]));
        assert!(!Arc::ptr_eq(&first[0], &relabelled[0]));
        assert!(relabelled[0]
            .requirements()
            .get_ref("zone")
            .is_some_and(|r| r.has("b")));
    }

    #[test]
    fn a_node_without_a_hostname_label_is_placed_by_its_name_but_counted_by_its_labels() {
        let mut memo = SolveMemo::default();
        let facts = memo.facts(&input_with("n1", &[("zone", "a")]));
        assert!(facts[0]
            .requirements()
            .get_ref(HOSTNAME)
            .is_some_and(|r| r.has("n1")));
        assert!(facts[0].label_reqs.get_ref(HOSTNAME).is_none());
    }
}
