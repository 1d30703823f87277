//! Topology spread, pod affinity and pod anti-affinity as counts of matching pods per domain
//! (Karpenter's `topology.go` / `topologygroup.go`).
//!
//! A topology group is "SELECT COUNT(*) FROM pods WHERE selector GROUP BY node.labels[key]".
//! Groups are shared: a Deployment of 100 pods with the same spread constraint is one group with
//! 100 owners. Pods with required anti-affinity also create *inverse* groups, so that a pod
//! without any anti-affinity of its own is still kept out of the domains of pods that repel it.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::labels;
use crate::model::pod::{Pod, PodAffinityTerm, TopologySpread};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};

use super::podreqs::{node_filter_terms, PodState};

/// What a group enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GroupKind {
    Spread,
    Affinity,
    AntiAffinity,
}

impl GroupKind {
    fn describe(self) -> &'static str {
        match self {
            GroupKind::Spread => "topology spread",
            GroupKind::Affinity => "pod affinity",
            GroupKind::AntiAffinity => "pod anti-affinity",
        }
    }
}

/// The identity of a group: pods whose terms produce equal keys share one group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct GroupKey {
    kind: GroupKind,
    key: String,
    /// `None` = every namespace.
    namespaces: Option<BTreeSet<String>>,
    selector: Option<LabelSelector>,
    max_skew: i32,
    min_domains: Option<i32>,
    node_filter: Vec<Requirements>,
}

#[derive(Debug)]
struct Group {
    id: GroupKey,
    counts: FxHashMap<String, i32>,
    /// Domains with a positive count, sorted (pod affinity picks from these).
    positive: BTreeSet<String>,
    /// How many known domains have a zero count (anti-affinity can only use those).
    empty_domains: usize,
    owners: FxHashSet<usize>,
}

impl Group {
    fn new(id: GroupKey, universe: Option<&BTreeSet<String>>) -> Self {
        let counts = universe
            .map(|u| u.iter().map(|d| (d.clone(), 0)).collect())
            .unwrap_or_default();
        let empty_domains = universe.map_or(0, BTreeSet::len);
        Group {
            id,
            counts,
            positive: BTreeSet::new(),
            empty_domains,
            owners: FxHashSet::default(),
        }
    }

    fn selects(&self, pod: &Pod) -> bool {
        let ns_ok = self
            .id
            .namespaces
            .as_ref()
            .is_none_or(|ns| ns.contains(&pod.namespace));
        ns_ok
            && self
                .id
                .selector
                .as_ref()
                .is_some_and(|s| s.matches(&pod.labels))
    }

    fn counts_pod(&self, pod: &Pod, node_reqs: &Requirements) -> bool {
        self.selects(pod)
            && (self.id.node_filter.is_empty()
                || self
                    .id
                    .node_filter
                    .iter()
                    .any(|f| node_reqs.compatible(f, labels::is_well_known).is_ok()))
    }

    fn record(&mut self, domain: &str) {
        let count = match self.counts.get_mut(domain) {
            Some(c) => c,
            None => {
                self.empty_domains += 1;
                self.counts.entry(domain.to_string()).or_insert(0)
            }
        };
        if *count == 0 {
            self.empty_domains -= 1;
            self.positive.insert(domain.to_string());
        }
        *count += 1;
    }

    fn register(&mut self, domain: &str) {
        if !self.counts.contains_key(domain) {
            self.counts.insert(domain.to_string(), 0);
            self.empty_domains += 1;
        }
    }

    /// Candidate domains among `node_domains` (fast path for concrete sets such as a node's
    /// hostname, where iterating every known domain would be quadratic).
    fn candidates<'a>(
        &'a self,
        node_domains: Option<&'a Requirement>,
    ) -> Box<dyn Iterator<Item = (&'a str, i32)> + 'a> {
        match node_domains {
            Some(nd) if nd.operator() == Operator::In => Box::new(
                nd.values()
                    .iter()
                    .filter_map(|d| self.counts.get(d).map(|c| (d.as_str(), *c))),
            ),
            _ => Box::new(
                self.counts
                    .iter()
                    .filter(move |(d, _)| admits(node_domains, d))
                    .map(|(d, c)| (d.as_str(), *c)),
            ),
        }
    }

    fn min_count(&self, pod_domains: Option<&Requirement>) -> i32 {
        // A new node is always possible, so hostname domains have a global minimum of zero.
        if self.id.key == labels::HOSTNAME {
            return 0;
        }
        let mut min = i32::MAX;
        let mut supported = 0;
        for (d, c) in &self.counts {
            if admits(pod_domains, d) {
                supported += 1;
                min = min.min(*c);
            }
        }
        if self.id.min_domains.is_some_and(|m| supported < m) {
            return 0;
        }
        min
    }

    /// The domains the pod may go to next (`TopologyGroup.Get`); `None` when there is none.
    /// `None` domain requirements mean "unconstrained" (Exists).
    fn next_domains(
        &self,
        pod: &Pod,
        pod_domains: Option<&Requirement>,
        node_domains: Option<&Requirement>,
    ) -> Option<Requirement> {
        let key = &self.id.key;
        match self.id.kind {
            GroupKind::Spread => {
                let min = self.min_count(pod_domains);
                let self_selecting = i32::from(self.selects(pod));
                // Karpenter picks one minimal domain at random; we pick the smallest name among
                // the minimal ones so plans are reproducible.
                self.candidates(node_domains)
                    .map(|(d, c)| (c + self_selecting, d))
                    .filter(|(c, _)| c - min <= self.id.max_skew)
                    .min()
                    .map(|(_, d)| Requirement::single(key, d))
            }
            GroupKind::Affinity => {
                let mut options: Vec<String> = self
                    .positive
                    .iter()
                    .filter(|d| admits(pod_domains, d))
                    .cloned()
                    .collect();
                if options.is_empty() && self.selects(pod) {
                    // Bootstrap a self-selecting affinity: prefer a domain the node already
                    // allows, then any domain the pod allows.
                    let mut sorted: Vec<&String> = self.counts.keys().collect();
                    sorted.sort();
                    if let Some(d) = sorted
                        .iter()
                        .find(|d| admits(pod_domains, d) && admits(node_domains, d))
                    {
                        options.push((*d).clone());
                    }
                    if let Some(d) = sorted.iter().find(|d| admits(pod_domains, d)) {
                        options.push((*d).clone());
                    }
                }
                (!options.is_empty()).then(|| Requirement::new(key, Operator::In, options))
            }
            GroupKind::AntiAffinity => {
                let options: Vec<String> = self
                    .candidates(node_domains)
                    .filter(|(d, c)| *c == 0 && admits(pod_domains, d))
                    .map(|(d, _)| d.to_string())
                    .collect();
                (!options.is_empty()).then(|| Requirement::new(key, Operator::In, options))
            }
        }
    }

    fn describe(&self) -> String {
        let sel = self
            .id
            .selector
            .as_ref()
            .map(describe_selector)
            .unwrap_or_else(|| "<none>".to_string());
        match self.id.kind {
            GroupKind::Spread => format!(
                "topology spread on {} (maxSkew {}, pods {sel})",
                self.id.key, self.id.max_skew
            ),
            kind => format!("{} on {} (pods {sel})", kind.describe(), self.id.key),
        }
    }
}

fn describe_selector(s: &LabelSelector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in &s.match_expressions {
        parts.push(format!("{} {:?} [{}]", e.key, e.op, e.values.join(",")));
    }
    if parts.is_empty() {
        "<all>".to_string()
    } else {
        parts.join(",")
    }
}

/// Every topology group of one solve.
#[derive(Debug, Default)]
pub(crate) struct Topology {
    groups: Vec<Group>,
    inverse: Vec<Group>,
    index: FxHashMap<GroupKey, usize>,
    inverse_index: FxHashMap<GroupKey, usize>,
    /// The universe of domains per topology key.
    domains: FxHashMap<String, BTreeSet<String>>,
    /// Namespace labels, for `namespaceSelector`.
    namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// Per pod: the inverse groups that select it.
    inverse_for_pod: FxHashMap<usize, Vec<usize>>,
    /// Per pod: the groups it owns.
    owned: FxHashMap<usize, Vec<usize>>,
}

/// Which group refused a placement (kept small: failures are frequent and cheap to produce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopologyFailure {
    inverse: bool,
    group: usize,
}

/// `None` means "no constraint on this key".
fn admits(req: Option<&Requirement>, value: &str) -> bool {
    req.is_none_or(|r| r.has(value))
}

/// A pod that is already bound somewhere, with the labels of its node.
pub(crate) struct BoundPod<'a> {
    pub pod: &'a Pod,
    pub node_name: &'a str,
    pub node_labels: &'a BTreeMap<String, String>,
}

impl Topology {
    /// Builds the groups of the pods to schedule and counts the pods already running.
    pub fn new(
        domains: FxHashMap<String, BTreeSet<String>>,
        namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
        pods: &[Pod],
        states: &[PodState],
        bound: &[BoundPod<'_>],
    ) -> Self {
        let mut t = Topology {
            domains,
            namespace_labels,
            ..Default::default()
        };
        // Existing pods with required anti-affinity keep others out of their domains.
        for b in bound {
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
            t.update(pod, state, bound);
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
        let universe = self.domains.get(&id.key);
        self.inverse.push(Group::new(id.clone(), universe));
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
            key: labels::normalize_key(&term.topology_key).to_string(),
            namespaces: self.namespaces_for(pod, term),
            selector: term.label_selector.clone(),
            max_skew: i32::MAX,
            min_domains: None,
            node_filter: vec![],
        }
    }

    fn spread_key(pod: &Pod, c: &TopologySpread) -> GroupKey {
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
            key: labels::normalize_key(&c.topology_key).to_string(),
            namespaces: Some([pod.namespace.clone()].into_iter().collect()),
            selector,
            max_skew: c.max_skew,
            min_domains: c.min_domains,
            node_filter: if c.ignore_node_affinity {
                vec![]
            } else {
                node_filter_terms(pod)
            },
        }
    }

    /// Re-derives the groups a pod owns from its current (possibly relaxed) state.
    pub fn update(&mut self, pod: &Pod, state: &PodState, bound: &[BoundPod<'_>]) {
        if let Some(old) = self.owned.remove(&state.index) {
            for gi in old {
                self.groups[gi].owners.remove(&state.index);
            }
        }
        let mut owned = Vec::new();
        let mut keys: Vec<GroupKey> = Vec::new();
        for &i in &state.spreads {
            let key = Self::spread_key(pod, &pod.topology_spread[i]);
            // A key no NodePool, instance type or node defines has no domains: Karpenter ignores
            // such a constraint (hostnames are always known: every new node brings one).
            let known = key.key == labels::HOSTNAME
                || self.domains.get(&key.key).is_some_and(|d| !d.is_empty());
            if known {
                keys.push(key);
            }
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
                    let mut g = Group::new(id.clone(), self.domains.get(&id.key));
                    for b in bound {
                        if !g.selects(b.pod) {
                            continue;
                        }
                        let Some(d) = domain_of(&g.id.key, b.node_name, b.node_labels) else {
                            continue;
                        };
                        let node_reqs = Requirements::from_labels(b.node_labels.iter());
                        if g.counts_pod(b.pod, &node_reqs) {
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
        self.owned.insert(state.index, owned);
    }

    /// Makes a new domain (a new node's hostname) known to every group on `key`.
    pub fn register(&mut self, key: &str, domain: &str) {
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

    /// Whether no group constrains this pod (fast exit for unconstrained pods).
    pub fn is_trivial_for(&self, state: &PodState) -> bool {
        self.owned.get(&state.index).is_none_or(Vec::is_empty)
            && self.inverse_groups_for(state.index).is_empty()
    }

    /// Whether the pod's own required anti-affinity on hostnames has no empty hostname left, so
    /// no node that exists or is in flight can take it (Karpenter's `emptyDomains` shortcut,
    /// applied before walking thousands of in-flight NodeClaims).
    pub fn no_free_hostname(&self, state: &PodState) -> bool {
        self.owned.get(&state.index).is_some_and(|owned| {
            owned.iter().any(|&gi| {
                let g = &self.groups[gi];
                g.id.kind == GroupKind::AntiAffinity
                    && g.id.key == labels::HOSTNAME
                    && g.empty_domains == 0
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
        if let Some(d) = self.domains.get_mut(key) {
            d.remove(domain);
        }
        for g in self.groups.iter_mut().chain(self.inverse.iter_mut()) {
            if g.id.key == key && g.counts.get(domain) == Some(&0) {
                g.counts.remove(domain);
                g.empty_domains -= 1;
            }
        }
    }

    /// The extra requirements topology imposes on placing `pod` on a node with `node_reqs`
    /// (`Topology.AddRequirements`), or which group refuses it.
    pub fn requirements_for(
        &self,
        state: &PodState,
        pod: &Pod,
        node_reqs: &Requirements,
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
            let next = g.next_domains(pod, state.strict_requirements.get_ref(key), node_domains);
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

    /// Records that `pod` now lands on a node with `node_reqs` (`Topology.Record`).
    pub fn record(&mut self, state: &PodState, pod: &Pod, node_reqs: &Requirements) {
        for g in &mut self.groups {
            if !g.counts_pod(pod, node_reqs) {
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
