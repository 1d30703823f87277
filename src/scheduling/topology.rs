//! Topology spread, pod affinity and pod anti-affinity as counts of matching pods per domain.
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/topology.go`; one group is
//! in `topology_group.rs`.
//!
//! A topology group is "SELECT COUNT(*) FROM pods WHERE selector GROUP BY node.labels[key]".
//! Groups are shared: a Deployment of 100 pods with the same spread constraint is one group with
//! 100 owners. Pods with required anti-affinity also create *inverse* groups, so that a pod
//! without any anti-affinity of its own is still kept out of the domains of pods that repel it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHasher};

use crate::model::labels;
use crate::model::pod::{Pod, PodAffinityTerm, TopologySpread};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};
use crate::model::taints::{first_untolerated, Taint, Toleration};

use super::existing_node::NodeFacts;
use super::podreqs::{node_filter_terms, PodState};
use super::topology_group::{admits, Group, GroupKey, GroupKind, UniverseKey};
use super::{ExistingNode, MovingPods};

/// Every topology group of one solve.
#[derive(Debug, Default)]
pub(crate) struct Topology {
    groups: Vec<Group>,
    inverse: Vec<Group>,
    index: FxHashMap<GroupKey, usize>,
    inverse_index: FxHashMap<GroupKey, usize>,
    /// The universe of domains per topology key (every NodePool and node; hostnames of new
    /// NodeClaims join as they are created).
    domains: FxHashMap<String, BTreeSet<String>>,
    /// Where the domains come from, for groups that filter them (`nodeTaintsPolicy`,
    /// `nodeAffinityPolicy`).
    sources: DomainSources,
    /// Namespace labels, for `namespaceSelector`.
    namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// Per pod: the inverse groups that select it.
    inverse_for_pod: FxHashMap<usize, Vec<usize>>,
    /// Per pod: the groups it owns.
    owned: FxHashMap<usize, Vec<usize>>,
    /// Universes of node-filtering spread groups, over the first `n` nodes of `sources`: kept
    /// by a tracking memo between solves (`SolveMemo`), since nodes only join.
    pub(super) universes: FxHashMap<UniverseKey, KeptUniverse>,
    /// Moves on with every change to the groups (a count, an owner, a domain): what
    /// [`Topology::requirements_for`] answers is fixed for one pod between two moves.
    generation: u64,
    /// `Options::possibility`: a spread narrows to every admissible domain, not the minimal one.
    pub(super) every_admissible_domain: bool,
}

/// Which group refused a placement (kept small: failures are frequent and cheap to produce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopologyFailure {
    inverse: bool,
    group: usize,
}

/// Every pod of the existing nodes by label pair, so that a new group reads only the pods
/// carrying one of the pairs its selector requires instead of every pod of the cluster (a full
/// scan per group made each consolidation simulation cost groups × pods). It indexes pods by
/// position and is brought up to date as pods are appended ([`PodIndex::update`]); whether a pod
/// counts (its node deleting, the pod terminal) is decided when it is read, so a tracking memo
/// keeps one index for all its solves.
#[derive(Debug, Default)]
pub(crate) struct PodIndex {
    /// `hash(key, value)` → (node, pod) positions carrying that label (a hash collision only
    /// adds pods that the full selector check then refuses).
    by_label: FxHashMap<u64, Vec<(u32, u32)>>,
    /// The pods with required pod anti-affinity.
    anti_affinity: Vec<(u32, u32)>,
    /// Per node: how many of its pods are indexed.
    indexed: Vec<u32>,
}

impl PodIndex {
    /// Indexes the pods added since the last call (nodes are only appended and pods only
    /// added at the end of their node's list).
    pub fn update(&mut self, nodes: &[ExistingNode]) {
        self.indexed.resize(nodes.len().max(self.indexed.len()), 0);
        for (n, node) in nodes.iter().enumerate() {
            let from = self.indexed[n] as usize;
            for (p, pod) in node.pods.iter().enumerate().skip(from) {
                let at = (n as u32, p as u32);
                for (k, v) in &pod.labels {
                    self.by_label.entry(label_hash(k, v)).or_default().push(at);
                }
                if !pod.pod_anti_affinity.is_empty() {
                    self.anti_affinity.push(at);
                }
            }
            self.indexed[n] = node.pods.len() as u32;
        }
    }
}

impl PodIndex {
    /// Every indexed pod with required pod anti-affinity, wherever it is.
    pub fn anti_affinity_pods<'a>(
        &'a self,
        nodes: &'a [ExistingNode],
    ) -> impl Iterator<Item = &'a Pod> {
        self.anti_affinity
            .iter()
            .map(move |&(n, p)| &nodes[n as usize].pods[p as usize])
    }
}

fn label_hash(key: &str, value: &str) -> u64 {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    value.hash(&mut h);
    h.finish()
}

/// The pods bound to existing nodes that count for topology: not terminal, not being placed
/// again by this solve ([`crate::scheduling::Input::moving`], Karpenter's `excludedPods`); for
/// spread and affinity counts not terminating either (`core v1.14.1
/// pkg/controllers/provisioning/scheduling/topology.go IgnoredForTopology`), while a terminating
/// pod's required anti-affinity still repels (cluster state keeps its binding until it is
/// terminal or gone: `pkg/controllers/state/cluster.go UpdatePod`, `ForPodsWithAntiAffinity`).
/// A pod staying on a deleting node counts like any other.
#[derive(Clone, Copy)]
pub(crate) struct BoundPods<'a> {
    nodes: &'a [ExistingNode],
    index: &'a PodIndex,
    moving: &'a MovingPods,
}

impl<'a> BoundPods<'a> {
    pub fn new(nodes: &'a [ExistingNode], index: &'a PodIndex, moving: &'a MovingPods) -> Self {
        BoundPods {
            nodes,
            index,
            moving,
        }
    }

    fn at(&self, (n, p): (u32, u32), read_for: Counted) -> Option<BoundPod<'a>> {
        let node = &self.nodes[n as usize];
        let pod = &node.pods[p as usize];
        let ignored = pod.terminating && read_for == Counted::InDomains;
        let moving = self.moving.contains(n as usize, p as usize);
        (!moving && !pod.is_terminal() && !ignored).then(|| BoundPod {
            pod,
            node: n as usize,
            node_name: &node.node.name,
            node_labels: &node.node.labels,
            node_taints: counted_taints(pod, node),
        })
    }

    /// The bound pods with required pod anti-affinity.
    fn with_anti_affinity(self) -> impl Iterator<Item = BoundPod<'a>> {
        self.index
            .anti_affinity
            .iter()
            .filter_map(move |&at| self.at(at, Counted::AsInverseAntiAffinity))
    }

    /// The bound pods `selector` can select: those carrying the rarest label pair it requires
    /// (a `matchLabels` pair or a single-valued `In`), or all of them when it requires none.
    fn candidates(
        self,
        selector: Option<&LabelSelector>,
    ) -> Box<dyn Iterator<Item = BoundPod<'a>> + 'a> {
        let Some(selector) = selector else {
            return Box::new(std::iter::empty());
        };
        let required = selector.required_pairs();
        let index = self.index;
        let rarest = required
            .map(|(k, v)| index.by_label.get(&label_hash(k, v)).map_or(&[][..], |l| l))
            .min_by_key(|l| l.len());
        match rarest {
            Some(list) => Box::new(
                list.iter()
                    .filter_map(move |&at| self.at(at, Counted::InDomains)),
            ),
            None => Box::new(self.nodes.iter().enumerate().flat_map(move |(n, node)| {
                (0..node.pods.len())
                    .filter_map(move |p| self.at((n as u32, p as u32), Counted::InDomains))
            })),
        }
    }
}

/// The node taints a pod on `node` is counted under. A bound pod: the Node's own taints
/// (`countDomains` reads `Node.spec.taints`). A pod an earlier scheduling round placed there
/// (still pending, no node name): the taints scheduling sees, since Karpenter's next batch
/// places it again and records it with the node's `cachedTaints` — no startup or known
/// ephemeral taint before initialization (core v1.14.1 `existingnode.go` `Add` → `Record`;
/// `rounds.rs`).
fn counted_taints<'a>(pod: &Pod, node: &'a ExistingNode) -> Cow<'a, [Taint]> {
    if pod.node_name.is_none() && !node.node.initialized {
        Cow::Owned(node.node.scheduling_taints())
    } else {
        Cow::Borrowed(&node.node.taints)
    }
}

/// What a bound pod is read for: the two differ on terminating pods.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counted {
    /// A spread's or an affinity's domain counts (`countDomains`).
    InDomains,
    /// An existing pod's required anti-affinity (`updateInverseAffinities`).
    AsInverseAntiAffinity,
}

/// A pod that is already bound somewhere, with the labels and taints of its node.
pub(crate) struct BoundPod<'a> {
    pub pod: &'a Pod,
    /// The node's position in the input.
    pub node: usize,
    pub node_name: &'a str,
    pub node_labels: &'a BTreeMap<String, String>,
    pub node_taints: Cow<'a, [Taint]>,
}

/// The origins of the domains (`TopologyDomainGroup` and the existing nodes `countDomains`
/// registers), so that a spread's universe can leave out what its node filter excludes.
#[derive(Debug, Default)]
pub(crate) struct DomainSources {
    /// Per key: domain → the taints of each NodePool providing it (an untainted pool makes the
    /// domain available to every pod; `topologydomaingroup.go`).
    pub pools: FxHashMap<String, BTreeMap<String, Vec<Vec<Taint>>>>,
    /// Existing nodes: their labels as requirements, and their taints (`Node.spec.taints`).
    pub nodes: Vec<(Arc<NodeFacts>, Vec<Taint>)>,
    /// The positions, ascending, of the nodes being removed (`deleting`: a simulation's
    /// candidates and deleting nodes): the scheduler is not given them, so they register no
    /// domain (`countDomains` walks `stateNodes` only).
    pub removed: Vec<usize>,
}

/// A node-filtering spread's universe, kept by a tracking memo (nodes only join): the pools'
/// domains, and the domains of the nodes seen so far that the filter lets count. A solve takes
/// out the nodes it removes.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeptUniverse {
    pools: BTreeSet<String>,
    nodes: KeyValues,
}

/// One key's values on the nodes seen so far, by node position, with how many nodes carry each:
/// what is left once some nodes are taken out is read without walking every node.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyValues {
    values: Vec<String>,
    carriers: Vec<u32>,
    by_node: Vec<Option<u32>>,
    index: FxHashMap<String, u32>,
}

impl KeyValues {
    /// How many nodes are indexed (a memo that saw more nodes than the input has starts over).
    pub fn seen(&mut self, nodes: usize) -> usize {
        if self.by_node.len() > nodes {
            *self = KeyValues::default();
        }
        self.by_node.len()
    }

    /// Indexes the next node, with its value (`None`: no label, or it does not count).
    pub fn push(&mut self, value: Option<&String>) {
        let at = value.map(|v| match self.index.get(v) {
            Some(&i) => i,
            None => {
                self.values.push(v.clone());
                self.carriers.push(0);
                let i = (self.values.len() - 1) as u32;
                self.index.insert(v.clone(), i);
                i
            }
        });
        if let Some(i) = at {
            self.carriers[i as usize] += 1;
        }
        self.by_node.push(at);
    }

    /// Adds to `out` the values some node not in `removed` (positions) carries.
    pub fn extend_present(&self, removed: &[usize], out: &mut BTreeSet<String>) {
        let mut carriers = Cow::Borrowed(&self.carriers);
        for &n in removed {
            if let Some(Some(v)) = self.by_node.get(n) {
                carriers.to_mut()[*v as usize] -= 1;
            }
        }
        for (v, &c) in self.values.iter().zip(carriers.iter()) {
            if c > 0 && !out.contains(v) {
                out.insert(v.clone());
            }
        }
    }
}

impl DomainSources {
    /// Records that a NodePool with `taints` provides `domain` for `key` (`TopologyDomainGroup.Insert`).
    pub fn insert_pool_domain(&mut self, key: &str, domain: &str, taints: &[Taint]) {
        let sets = self
            .pools
            .entry(key.to_string())
            .or_default()
            .entry(domain.to_string())
            .or_default();
        if taints.is_empty() {
            *sets = vec![Vec::new()];
        } else if sets.first().is_none_or(|s| !s.is_empty()) && !sets.iter().any(|s| s == taints) {
            sets.push(taints.to_vec());
        }
    }
}

impl Topology {
    /// Builds the groups of the pods to schedule and counts the pods already running.
    pub fn new(
        domains: FxHashMap<String, BTreeSet<String>>,
        sources: DomainSources,
        namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
        pods: &[Pod],
        states: &[PodState],
        bound: BoundPods<'_>,
        universes: FxHashMap<UniverseKey, KeptUniverse>,
    ) -> Self {
        let mut t = Topology {
            domains,
            sources,
            namespace_labels,
            universes,
            ..Default::default()
        };
        // Existing pods with required anti-affinity keep others out of their domains.
        for b in bound.with_anti_affinity() {
            for term in &b.pod.pod_anti_affinity {
                let gi = t.inverse_group(GroupKind::AntiAffinity, b.pod, term);
                if let Some(d) = domain_of(&t.inverse[gi].id.key, b.node_name, b.node_labels) {
                    t.inverse[gi].record(&d);
                }
            }
        }
        for state in states {
            let pod = &pods[state.index];
            for term in &pod.pod_anti_affinity {
                let gi = t.inverse_group(GroupKind::AntiAffinity, pod, term);
                t.inverse[gi].owners.insert(state.index);
            }
            t.count_bound(pod, state, Some(bound));
        }
        // Inverse groups are all known now: index which ones select each pod.
        for state in states {
            let pod = &pods[state.index];
            let selecting: Vec<usize> = (0..t.inverse.len())
                .filter(|&i| t.inverse[i].selects(pod))
                .collect();
            if !selecting.is_empty() {
                t.inverse_for_pod.insert(state.index, selecting);
            }
        }
        t
    }

    fn inverse_group(&mut self, kind: GroupKind, pod: &Pod, term: &PodAffinityTerm) -> usize {
        let id = self.affinity_key(kind, pod, term);
        if let Some(&i) = self.inverse_index.get(&id) {
            return i;
        }
        // An inverse group knows the domains of the NodePools whose taints its owner tolerates
        // (`updateInverseAntiAffinity` builds it from `t.domainGroups[key]`; an affinity
        // group's zero node filter has no `Ignore` taint policy, so `ForEachDomain` honours
        // taints) and, on hostnames, every node's (`Topology.Register`); `countDomains` never
        // adds the nodes' other domains to it. A pod it selects may go only to its empty ones.
        let group = if id.key == labels::HOSTNAME {
            Group::new(id.clone(), self.domains.get(&id.key))
        } else {
            let tolerated = self.pool_domains_for(&id.key, Some(&pod.tolerations));
            Group::new(id.clone(), Some(&tolerated))
        };
        self.inverse.push(group);
        self.inverse_index.insert(id, self.inverse.len() - 1);
        self.inverse.len() - 1
    }

    fn namespaces_for(&self, pod: &Pod, term: &PodAffinityTerm) -> Option<BTreeSet<String>> {
        match &term.namespace_selector {
            None if term.namespaces.is_empty() => {
                Some([pod.namespace.clone()].into_iter().collect())
            }
            None => Some(term.namespaces.iter().cloned().collect()),
            Some(sel) if sel.match_labels.is_empty() && sel.match_expressions.is_empty() => None,
            Some(sel) => {
                let mut set: BTreeSet<String> = term.namespaces.iter().cloned().collect();
                set.extend(
                    self.namespace_labels
                        .iter()
                        .filter(|(_, l)| sel.matches(l))
                        .map(|(n, _)| n.clone()),
                );
                Some(set)
            }
        }
    }

    fn affinity_key(&self, kind: GroupKind, pod: &Pod, term: &PodAffinityTerm) -> GroupKey {
        GroupKey {
            kind,
            key: term.topology_key.clone(),
            namespaces: self.namespaces_for(pod, term),
            selector: term.label_selector.clone(),
            max_skew: i32::MAX,
            min_domains: None,
            node_filter: vec![],
            taint_filter: None,
        }
    }

    fn spread_key(pod: &Pod, c: &TopologySpread, tolerations: &[Toleration]) -> GroupKey {
        let mut selector = c.label_selector.clone();
        if let Some(sel) = selector.as_mut() {
            for k in &c.match_label_keys {
                if let Some(v) = pod.labels.get(k) {
                    sel.match_expressions.push(SelectorExpr {
                        key: k.clone(),
                        op: SelectorOp::In,
                        values: vec![v.clone()],
                    });
                }
            }
        }
        GroupKey {
            kind: GroupKind::Spread,
            key: c.topology_key.clone(),
            namespaces: Some([pod.namespace.clone()].into_iter().collect()),
            selector,
            max_skew: c.max_skew,
            min_domains: c.min_domains,
            node_filter: if c.ignore_node_affinity {
                vec![]
            } else {
                node_filter_terms(pod)
            },
            taint_filter: c.honor_taints.then(|| tolerations.to_vec()),
        }
    }

    /// The domains a group starts with. Affinity and anti-affinity groups, and hostname spreads
    /// (a new node is always a new hostname), know every domain; a spread on any other key knows
    /// the domains of the NodePools and nodes its node filter lets count
    /// (`TopologyDomainGroup.ForEachDomain` with `nodeTaintsPolicy`, and `countDomains`
    /// registering the existing nodes that match `TopologyNodeFilter`, but for those being removed).
    fn universe_for(&mut self, id: &GroupKey) -> Cow<'_, BTreeSet<String>> {
        if id.kind != GroupKind::Spread || id.key == labels::HOSTNAME || id.filters_nothing() {
            return match self.domains.get(&id.key) {
                Some(all) => Cow::Borrowed(all),
                None => Cow::Owned(BTreeSet::new()),
            };
        }
        // Without a taint filter the nodes' part only grows as nodes join (the pools and a
        // node's labels do not change): extend the kept one with the nodes seen since. It
        // depends on the key and node filter only, so groups of many selectors share it.
        if id.taint_filter.is_none() {
            let kept_key = UniverseKey::of(id);
            let mut kept = self
                .universes
                .remove(&kept_key)
                .unwrap_or_else(|| KeptUniverse {
                    pools: self.pool_universe(id),
                    ..KeptUniverse::default()
                });
            let nodes = &self.sources.nodes;
            for (facts, taints) in &nodes[kept.nodes.seen(nodes.len())..] {
                let value = facts.labels().get(&id.key);
                let counts = value.is_some() && id.node_matches(&facts.label_reqs, taints);
                kept.nodes.push(value.filter(|_| counts));
            }
            let mut out = kept.pools.clone();
            kept.nodes.extend_present(&self.sources.removed, &mut out);
            self.universes.insert(kept_key, kept);
            return Cow::Owned(out);
        }
        let mut out = self.pool_universe(id);
        for (i, (facts, taints)) in self.sources.nodes.iter().enumerate() {
            if self.sources.removed.binary_search(&i).is_ok() {
                continue;
            }
            if let Some(v) = facts.labels().get(&id.key) {
                if id.node_matches(&facts.label_reqs, taints) {
                    out.insert(v.clone());
                }
            }
        }
        Cow::Owned(out)
    }

    /// The domains the NodePools give a filtering spread group (`TopologyDomainGroup.ForEachDomain`).
    fn pool_universe(&self, id: &GroupKey) -> BTreeSet<String> {
        self.pool_domains_for(&id.key, id.taint_filter.as_deref())
    }

    /// The domains of `key` the NodePools provide, those of pools whose taints `tolerations`
    /// tolerate when given (`TopologyDomainGroup.ForEachDomain`).
    fn pool_domains_for(&self, key: &str, tolerations: Option<&[Toleration]>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        if let Some(pool_domains) = self.sources.pools.get(key) {
            for (domain, taint_sets) in pool_domains {
                let tolerated = match tolerations {
                    None => true,
                    Some(tolerations) => taint_sets
                        .iter()
                        .any(|taints| first_untolerated(taints, tolerations).is_none()),
                };
                if tolerated {
                    out.insert(domain.clone());
                }
            }
        }
        out
    }

    /// Re-derives the groups a pod owns from its current (possibly relaxed) state.
    pub fn update(&mut self, pod: &Pod, state: &PodState) {
        self.generation += 1;
        self.count_bound(pod, state, None);
    }

    /// [`Topology::update`], counting the bound pods each new group selects.
    fn count_bound(&mut self, pod: &Pod, state: &PodState, bound: Option<BoundPods<'_>>) {
        if let Some(old) = self.owned.remove(&state.index) {
            for gi in old {
                self.groups[gi].owners.remove(&state.index);
            }
        }
        let mut owned = Vec::new();
        let mut keys: Vec<GroupKey> = Vec::new();
        for &i in &state.spreads {
            // A key no NodePool, instance type or node defines has no domains: the group is
            // empty and the pod cannot be placed while the constraint holds (upstream
            // `topology_test.go` "should ignore unknown topology keys" asserts the pod is not
            // scheduled); a ScheduleAnyway one is relaxed away.
            keys.push(Self::spread_key(
                pod,
                &pod.topology_spread[i],
                &state.tolerations,
            ));
        }
        for term in &pod.pod_affinity {
            keys.push(self.affinity_key(GroupKind::Affinity, pod, term));
        }
        for &i in &state.preferred_affinity {
            keys.push(self.affinity_key(
                GroupKind::Affinity,
                pod,
                &pod.preferred_pod_affinity[i].term,
            ));
        }
        for term in &pod.pod_anti_affinity {
            keys.push(self.affinity_key(GroupKind::AntiAffinity, pod, term));
        }
        for &i in &state.preferred_anti_affinity {
            keys.push(self.affinity_key(
                GroupKind::AntiAffinity,
                pod,
                &pod.preferred_pod_anti_affinity[i].term,
            ));
        }
        for id in keys {
            let gi = match self.index.get(&id) {
                Some(&gi) => gi,
                None => {
                    let mut g = Group::new(id.clone(), Some(&self.universe_for(&id)));
                    let counted = bound.map(|b| b.candidates(g.id.selector.as_ref()));
                    for b in counted.into_iter().flatten() {
                        if !g.selects(b.pod) {
                            continue;
                        }
                        let Some(d) = domain_of(&g.id.key, b.node_name, b.node_labels) else {
                            continue;
                        };
                        // Node requirements are only read by a node-affinity filter; the
                        // node's labels as requirements are derived once per node (its facts,
                        // kept in `sources` whenever a spread filters nodes).
                        let derived;
                        let node_reqs = if g.id.node_filter.is_empty() {
                            derived = Requirements::default();
                            &derived
                        } else if let Some((facts, _)) = self.sources.nodes.get(b.node) {
                            &facts.label_reqs
                        } else {
                            derived = Requirements::from_labels(b.node_labels.iter());
                            &derived
                        };
                        if g.id.node_matches(node_reqs, &b.node_taints) {
                            g.record(&d);
                        }
                    }
                    self.groups.push(g);
                    self.index.insert(id, self.groups.len() - 1);
                    self.groups.len() - 1
                }
            };
            self.groups[gi].owners.insert(state.index);
            owned.push(gi);
        }
        owned.dedup();
        if !owned.is_empty() {
            self.owned.insert(state.index, owned);
        }
    }

    /// Makes a new domain (a new node's hostname) known to every group on `key`.
    pub fn register(&mut self, key: &str, domain: &str) {
        self.generation += 1;
        self.domains
            .entry(key.to_string())
            .or_default()
            .insert(domain.to_string());
        for g in self.groups.iter_mut().chain(self.inverse.iter_mut()) {
            if g.id.key == key {
                g.register(domain);
            }
        }
    }

    fn inverse_groups_for(&self, pod_index: usize) -> &[usize] {
        self.inverse_for_pod
            .get(&pod_index)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Changes whenever the groups do (see the field).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The topology keys of the groups that constrain this pod: all [`Topology::requirements_for`]
    /// reads of a node's requirements.
    pub fn keys_for(&self, state: &PodState) -> impl Iterator<Item = &str> {
        let owned = self
            .owned
            .get(&state.index)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        owned
            .iter()
            .map(|&gi| self.groups[gi].id.key.as_str())
            .chain(
                self.inverse_groups_for(state.index)
                    .iter()
                    .map(|&gi| self.inverse[gi].id.key.as_str()),
            )
    }

    /// Whether no group constrains this pod (fast exit for unconstrained pods).
    pub fn is_trivial_for(&self, state: &PodState) -> bool {
        self.owned.get(&state.index).is_none_or(Vec::is_empty)
            && self.inverse_groups_for(state.index).is_empty()
    }

    /// Whether no hostname that exists or is in flight can take the pod: its own required
    /// anti-affinity on hostnames has no empty hostname left, or a hostname spread that counts
    /// it has no hostname below `maxSkew` (Karpenter's `emptyDomains` shortcut, generalised, and
    /// applied before walking thousands of in-flight NodeClaims instead of inside the walk).
    pub fn no_free_hostname(&self, state: &PodState, pod: &Pod) -> bool {
        self.owned.get(&state.index).is_some_and(|owned| {
            owned.iter().any(|&gi| {
                let g = &self.groups[gi];
                g.id.key == labels::HOSTNAME
                    && match g.id.kind {
                        GroupKind::AntiAffinity => g.empty_domains == 0,
                        // A hostname's skew is its count: the global minimum is always 0.
                        GroupKind::Spread => g.below_skew == 0 && g.selects(pod),
                        GroupKind::Affinity => false,
                    }
            })
        })
    }

    /// The zones a pod is confined to whatever node it goes to: its own zone requirement and the
    /// zones its zonal pod affinities already point at. In-flight NodeClaims pinned elsewhere can
    /// be skipped without trying them (the same outcome as trying, much sooner).
    pub fn zone_restriction(&self, state: &PodState) -> Option<Requirement> {
        let mut restriction = state
            .requirements
            .get_ref(labels::ZONE)
            .filter(|r| r.operator() == Operator::In)
            .cloned();
        for &gi in self
            .owned
            .get(&state.index)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let g = &self.groups[gi];
            if g.id.kind != GroupKind::Affinity || g.id.key != labels::ZONE {
                continue;
            }
            let pod_domains = state.strict_requirements.get_ref(labels::ZONE);
            let options: Vec<&String> = g
                .positive
                .iter()
                .filter(|d| admits(pod_domains, d))
                .collect();
            if options.is_empty() {
                continue; // bootstrap case: depends on the node
            }
            let r = Requirement::new(labels::ZONE, Operator::In, options.into_iter().cloned());
            restriction = Some(match restriction {
                Some(prev) => prev.intersection(&r),
                None => r,
            });
        }
        restriction
    }

    /// Forgets a domain that was registered for a node that was not created after all.
    pub fn unregister(&mut self, key: &str, domain: &str) {
        self.generation += 1;
        if let Some(d) = self.domains.get_mut(key) {
            d.remove(domain);
        }
        for g in self.groups.iter_mut().chain(self.inverse.iter_mut()) {
            if g.id.key == key {
                g.unregister(domain);
            }
        }
    }

    /// The extra requirements topology imposes on placing `pod` on a node with `node_reqs`
    /// (`Topology.AddRequirements`), or which group refuses it.
    ///
    /// `reachable`: per key, the values the node can still take (a new NodeClaim's instance
    /// types and offerings), preferred among a spread's equally good domains.
    pub fn requirements_for(
        &self,
        state: &PodState,
        pod: &Pod,
        node_reqs: &Requirements,
        reachable: Option<&Requirements>,
    ) -> Result<Vec<Requirement>, TopologyFailure> {
        let mut out = Vec::new();
        let owned = self
            .owned
            .get(&state.index)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let inverse = self.inverse_groups_for(state.index);
        let all = owned
            .iter()
            .map(|&i| (false, i))
            .chain(inverse.iter().map(|&i| (true, i)));
        for (is_inverse, gi) in all {
            let g = if is_inverse {
                &self.inverse[gi]
            } else {
                &self.groups[gi]
            };
            let key = &g.id.key;
            let node_domains = node_reqs.get_ref(key);
            let next = g.next_domains(
                pod,
                state.strict_requirements.get_ref(key),
                node_domains,
                reachable.and_then(|r| r.get_ref(key)),
                self.every_admissible_domain,
            );
            match next {
                Some(next) if node_domains.is_none_or(|nd| next.intersects(nd)) => out.push(next),
                _ => {
                    return Err(TopologyFailure {
                        inverse: is_inverse,
                        group: gi,
                    })
                }
            }
        }
        Ok(out)
    }

    /// The group behind a failure, described, when it is a spread that knows no domain at all
    /// (its key is on no NodePool, instance type or node it may count).
    pub fn describe_no_domains(&self, failure: &TopologyFailure) -> Option<String> {
        if failure.inverse {
            return None;
        }
        let g = &self.groups[failure.group];
        (g.id.kind == GroupKind::Spread && g.id.key != labels::HOSTNAME && g.counts.is_empty())
            .then(|| g.describe())
    }

    /// A sentence naming the group behind a failure.
    pub fn describe(&self, failure: &TopologyFailure) -> String {
        if failure.inverse {
            format!(
                "{} of an existing pod cannot be satisfied",
                self.inverse[failure.group].describe()
            )
        } else {
            format!(
                "{} cannot be satisfied",
                self.groups[failure.group].describe()
            )
        }
    }

    /// The DaemonSets (`namespace/name`) whose pods the failed pod (anti-)affinity term selects,
    /// of `daemonsets` (their template pods). Karpenter's topology counts only pods that exist
    /// (`countDomains`), so a NodeClaim not launched yet has none of them although it will run
    /// them: a required affinity to DaemonSet pods is met by existing nodes only (core#2984,
    /// kubernetes-sigs/karpenter issue 2984: the reason should say the pods are DaemonSet pods).
    pub fn daemonsets_selected(
        &self,
        failure: &TopologyFailure,
        daemonsets: &[Pod],
    ) -> Vec<String> {
        if failure.inverse {
            return Vec::new();
        }
        let g = &self.groups[failure.group];
        if g.id.kind == GroupKind::Spread {
            return Vec::new();
        }
        let mut out: Vec<String> = daemonsets
            .iter()
            .filter(|d| g.selects(d))
            .map(|d| {
                let name = d
                    .owner
                    .as_ref()
                    .map_or(d.name.as_str(), |o| o.name.as_str());
                format!("{}/{name}", d.namespace)
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Records that `pod` now lands on a node with `node_reqs` and `taints` (`Topology.Record`).
    pub fn record(
        &mut self,
        state: &PodState,
        pod: &Pod,
        node_reqs: &Requirements,
        taints: &[Taint],
    ) {
        self.generation += 1;
        for g in &mut self.groups {
            if !g.counts_pod(pod, node_reqs, taints) {
                continue;
            }
            let Some(domains) = node_reqs.get_ref(&g.id.key) else {
                continue;
            };
            if domains.operator() != Operator::In {
                continue;
            }
            // Anti-affinity blocks every domain the pod might land in; spread and affinity
            // only count once the domain is known.
            if g.id.kind == GroupKind::AntiAffinity {
                for d in domains.values().clone() {
                    g.record(&d);
                }
            } else if domains.values().len() == 1 {
                let d = domains.values().iter().next().cloned().unwrap_or_default();
                g.record(&d);
            }
        }
        for g in &mut self.inverse {
            if g.owners.contains(&state.index) {
                if let Some(domains) = node_reqs.get_ref(&g.id.key) {
                    if domains.operator() == Operator::In {
                        for d in domains.values().clone() {
                            g.record(&d);
                        }
                    }
                }
            }
        }
    }
}

/// The node's domain for `key`; a node without a hostname label counts under its name.
fn domain_of(key: &str, node_name: &str, node_labels: &BTreeMap<String, String>) -> Option<String> {
    match node_labels.get(key) {
        Some(v) => Some(v.clone()),
        None if key == labels::HOSTNAME => Some(node_name.to_string()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{labels_of, PodBuilder};

    fn names<'a>(list: Box<dyn Iterator<Item = BoundPod<'a>> + 'a>) -> Vec<String> {
        list.map(|b| b.pod.name.clone()).collect()
    }

    #[test]
    fn a_group_reads_only_the_pods_with_its_rarest_required_label() {
        let pods = vec![
            PodBuilder::new("web-1")
                .label("app", "web")
                .label("tier", "front")
                .build(),
            PodBuilder::new("web-2")
                .label("app", "web")
                .label("tier", "back")
                .build(),
            PodBuilder::new("db-1")
                .label("app", "db")
                .label("tier", "back")
                .build(),
        ];
        let nodes = vec![ExistingNode {
            node: crate::model::node::Node {
                name: "n".into(),
                labels: labels_of(&[]),
                ..Default::default()
            },
            pods,
        }];
        let mut index = PodIndex::default();
        index.update(&nodes);
        let none = MovingPods::default();
        let bound = BoundPods::new(&nodes, &index, &none);
        let web_front = LabelSelector::eq(&[("app", "web"), ("tier", "front")]);
        assert_eq!(names(bound.candidates(Some(&web_front))), ["web-1"]);
        let single_in = LabelSelector {
            match_expressions: vec![SelectorExpr {
                key: "app".into(),
                op: SelectorOp::In,
                values: vec!["db".into()],
            }],
            ..Default::default()
        };
        assert_eq!(names(bound.candidates(Some(&single_in))), ["db-1"]);
        let absent = LabelSelector::eq(&[("app", "cache")]);
        assert!(names(bound.candidates(Some(&absent))).is_empty());
        // Nothing required: every pod is read (the full selector check decides).
        let exists = LabelSelector {
            match_expressions: vec![SelectorExpr {
                key: "app".into(),
                op: SelectorOp::Exists,
                values: vec![],
            }],
            ..Default::default()
        };
        assert_eq!(bound.candidates(Some(&exists)).count(), 3);
        // No selector selects nothing.
        assert_eq!(bound.candidates(None).count(), 0);
    }

    #[test]
    fn the_index_reads_pods_added_later_and_skips_only_the_pods_being_placed_again() {
        let mut nodes = vec![ExistingNode {
            node: crate::model::node::Node {
                name: "n".into(),
                ..Default::default()
            },
            pods: vec![PodBuilder::new("web-1").label("app", "web").build()],
        }];
        let mut index = PodIndex::default();
        index.update(&nodes);
        nodes[0]
            .pods
            .push(PodBuilder::new("web-2").label("app", "web").build());
        index.update(&nodes);
        let web = LabelSelector::eq(&[("app", "web")]);
        let none = MovingPods::default();
        assert_eq!(
            names(BoundPods::new(&nodes, &index, &none).candidates(Some(&web))),
            ["web-1", "web-2"]
        );
        // A deleting node's pods count, but for those the solve places again (`excludedPods`,
        // core v1.14.1 topology.go countDomains).
        nodes[0].node.deleting = true;
        assert_eq!(
            names(BoundPods::new(&nodes, &index, &none).candidates(Some(&web))),
            ["web-1", "web-2"]
        );
        let mut moving = MovingPods::default();
        moving.insert(0, 1);
        assert_eq!(
            names(BoundPods::new(&nodes, &index, &moving).candidates(Some(&web))),
            ["web-1"]
        );
    }
}
