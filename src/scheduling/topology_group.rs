//! One topology group: the count of matching pods per domain for one spread constraint, pod
//! affinity or anti-affinity term, and the domains a pod may go to next.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/topologygroup.go`
//! (`TopologyGroup.Get`, `nextDomainTopologySpread`, `nextDomainAffinity`,
//! `nextDomainAntiAffinity`) and `topologynodefilter.go`.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::labels;
use crate::model::pod::Pod;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::selector::LabelSelector;
use crate::model::taints::{first_untolerated, Taint, Toleration};

/// What a group enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum GroupKind {
    Spread,
    Affinity,
    AntiAffinity,
}

impl GroupKind {
    pub(super) fn describe(self) -> &'static str {
        match self {
            GroupKind::Spread => "topology spread",
            GroupKind::Affinity => "pod affinity",
            GroupKind::AntiAffinity => "pod anti-affinity",
        }
    }
}

/// The identity of a group: pods whose terms produce equal keys share one group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct GroupKey {
    pub(super) kind: GroupKind,
    pub(super) key: String,
    /// `None` = every namespace.
    pub(super) namespaces: Option<BTreeSet<String>>,
    pub(super) selector: Option<LabelSelector>,
    pub(super) max_skew: i32,
    pub(super) min_domains: Option<i32>,
    /// `nodeAffinityPolicy: Honor` (the default): a node counts only if it satisfies one of these
    /// (the pod's node selector with each required node-affinity term); empty under `Ignore`.
    pub(super) node_filter: Vec<Requirements>,
    /// `nodeTaintsPolicy: Honor`: a node (or NodePool) counts only if these tolerations (the
    /// pod's) tolerate its taints; `None` under `Ignore` (the default).
    pub(super) taint_filter: Option<Vec<Toleration>>,
}

/// What a node-filtering spread's domain universe depends on (with no taint filter): its key
/// and node filter, not its selector — groups of many deployments share one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct UniverseKey {
    key: String,
    node_filter: Vec<Requirements>,
}

impl UniverseKey {
    pub(super) fn of(id: &GroupKey) -> Self {
        UniverseKey {
            key: id.key.clone(),
            node_filter: id.node_filter.clone(),
        }
    }
}

impl GroupKey {
    /// Whether the node filter lets every node count.
    pub(super) fn filters_nothing(&self) -> bool {
        self.taint_filter.is_none()
            && (self.node_filter.is_empty() || self.node_filter.iter().any(Requirements::is_empty))
    }

    /// `TopologyNodeFilter.Matches`: whether a node with these labels (as requirements) and taints
    /// counts for the group. Karpenter checks the affinity strictly here (no label may be
    /// undefined: `matchesRequirements` does not pass the compatibility options on).
    pub(super) fn node_matches(&self, node_reqs: &Requirements, taints: &[Taint]) -> bool {
        let affinity = self.node_filter.is_empty()
            || self
                .node_filter
                .iter()
                .any(|f| node_reqs.is_compatible(f, |_| false));
        let tolerated = self
            .taint_filter
            .as_ref()
            .is_none_or(|tolerations| first_untolerated(taints, tolerations).is_none());
        affinity && tolerated
    }
}

#[derive(Debug)]
pub(super) struct Group {
    pub(super) id: GroupKey,
    pub(super) counts: FxHashMap<String, i32>,
    /// Domains with a positive count, sorted (pod affinity picks from these).
    pub(super) positive: BTreeSet<String>,
    /// How many known domains have a zero count (anti-affinity can only use those).
    pub(super) empty_domains: usize,
    /// How many known domains have a count below `max_skew` (on hostnames, whose global
    /// minimum is 0, a pod the spread counts can only join those).
    pub(super) below_skew: usize,
    pub(super) owners: FxHashSet<usize>,
}

impl Group {
    pub(super) fn new(id: GroupKey, universe: Option<&BTreeSet<String>>) -> Self {
        let counts = universe
            .map(|u| u.iter().map(|d| (d.clone(), 0)).collect())
            .unwrap_or_default();
        let empty_domains = universe.map_or(0, BTreeSet::len);
        let below_skew = if id.max_skew > 0 { empty_domains } else { 0 };
        Group {
            id,
            counts,
            positive: BTreeSet::new(),
            empty_domains,
            below_skew,
            owners: FxHashSet::default(),
        }
    }

    pub(super) fn selects(&self, pod: &Pod) -> bool {
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

    /// `TopologyGroup.Counts`: the group selects the pod and the node it lands on counts.
    pub(super) fn counts_pod(&self, pod: &Pod, node_reqs: &Requirements, taints: &[Taint]) -> bool {
        self.selects(pod) && self.id.node_matches(node_reqs, taints)
    }

    pub(super) fn record(&mut self, domain: &str) {
        self.register(domain);
        let max_skew = self.id.max_skew;
        let Some(count) = self.counts.get_mut(domain) else {
            return;
        };
        if *count == 0 {
            self.empty_domains -= 1;
            self.positive.insert(domain.to_string());
        }
        if *count < max_skew && *count + 1 >= max_skew {
            self.below_skew -= 1;
        }
        *count += 1;
    }

    pub(super) fn register(&mut self, domain: &str) {
        if !self.counts.contains_key(domain) {
            self.counts.insert(domain.to_string(), 0);
            self.empty_domains += 1;
            if self.id.max_skew > 0 {
                self.below_skew += 1;
            }
        }
    }

    /// Forgets a domain nothing was recorded in.
    pub(super) fn unregister(&mut self, domain: &str) {
        if self.counts.get(domain) == Some(&0) {
            self.counts.remove(domain);
            self.empty_domains -= 1;
            if self.id.max_skew > 0 {
                self.below_skew -= 1;
            }
        }
    }

    /// Candidate domains among `node_domains` (fast path for concrete sets such as a node's
    /// hostname, where iterating every known domain would be quadratic).
    pub(super) fn candidates<'a>(
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

    pub(super) fn min_count(&self, pod_domains: Option<&Requirement>) -> i32 {
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
    /// `None` domain requirements mean "unconstrained" (Exists). `every_admissible`: a spread
    /// admits every domain within `maxSkew` (`Options::possibility`), not only the minimal one.
    pub(super) fn next_domains(
        &self,
        pod: &Pod,
        pod_domains: Option<&Requirement>,
        node_domains: Option<&Requirement>,
        reachable: Option<&Requirement>,
        every_admissible: bool,
    ) -> Option<Requirement> {
        let key = &self.id.key;
        match self.id.kind {
            GroupKind::Spread => {
                let min = self.min_count(pod_domains);
                let self_selecting = i32::from(self.selects(pod));
                if every_admissible {
                    let options: Vec<String> = self
                        .candidates(node_domains)
                        .filter(|(_, c)| c + self_selecting - min <= self.id.max_skew)
                        .map(|(d, _)| d.to_string())
                        .collect();
                    return (!options.is_empty())
                        .then(|| Requirement::new(key, Operator::In, options));
                }
                // Karpenter picks one minimal domain at random, and picks again when the node
                // cannot go there (see `node_claim::reachable_domains`); we pick, among the
                // minimal ones, a reachable one first, then the smallest name, so plans are
                // reproducible.
                self.candidates(node_domains)
                    .map(|(d, c)| (c + self_selecting, !admits(reachable, d), d))
                    .filter(|(c, _, _)| c - min <= self.id.max_skew)
                    .min()
                    .map(|(_, _, d)| Requirement::single(key, d))
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

    pub(super) fn describe(&self) -> String {
        let sel = self
            .id
            .selector
            .as_ref()
            .map(describe_selector)
            .unwrap_or_else(|| "<none>".to_string());
        let key = key_text(&self.id.key);
        match self.id.kind {
            GroupKind::Spread => format!(
                "topology spread on {key} (maxSkew {}, pods {sel})",
                self.id.max_skew
            ),
            kind => format!("{} on {key} (pods {sel})", kind.describe()),
        }
    }
}

/// A topology key as reasons name it. Karpenter translates an alias (`failure-domain.beta.
/// kubernetes.io/zone`, the EBS CSI zone key) in requirements but not in a topology term, whose
/// domains are then only the nodes carrying that very label (docs/karpenter.md §3.6): said, so
/// the user knows the cure.
fn key_text(key: &str) -> String {
    match labels::normalize_key(key) {
        canonical if canonical != key => format!(
            "{key} (an alias of {canonical} that Karpenter does not translate in topology: only nodes labelled {key} are its domains)"
        ),
        _ => key.to_string(),
    }
}

pub(super) fn describe_selector(s: &LabelSelector) -> String {
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

/// `None` means "no constraint on this key".
pub(super) fn admits(req: Option<&Requirement>, value: &str) -> bool {
    req.is_none_or(|r| r.has(value))
}
