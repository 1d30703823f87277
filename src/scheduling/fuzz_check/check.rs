//! The plan checked against its own input, node by node: room, taints, node selection, launch
//! options, host ports, NodePool limits and `minValues`. Kubernetes/Karpenter semantics written
//! again here (core v1.14.1 `pkg/controllers/provisioning/scheduling/{nodeclaim,existingnode,
//! scheduler}.go`, `pkg/controllers/state/statenode.go` `Taints`), not the planner's helpers.

use std::collections::{BTreeMap, BTreeSet};

use super::labels::{
    fits_terms, from_requirement, node_terms, pod_fits_labels, untolerated, Label,
};
use super::node::{allocatable, daemons_for, over, sum, type_labels, volume_zones};
use super::Planned;
use crate::model::instance_type::InstanceType;
use crate::model::labels::{CAPACITY_TYPE, HOSTNAME, ZONE};
use crate::model::node::Node;
use crate::model::pod::Pod;
use crate::model::taints::{is_known_ephemeral, Taint};
use crate::scheduling::{ExistingPlacement, Input, PlannedNodeClaim, PoolInput};

/// A broken rule: which, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Violation {
    pub rule: &'static str,
    pub detail: String,
}

pub(super) fn violation(rule: &'static str, detail: String) -> Violation {
    Violation { rule, detail }
}

/// A node of the plan's outcome: an existing node with the pods placed on it, or a NodeClaim
/// with each concrete way it may launch (type, zone, capacity type) as the labels it gets.
pub(super) struct Slot<'a> {
    pub name: String,
    pub pool: Option<&'a PoolInput>,
    pub node: Option<&'a Node>,
    pub claim: Option<&'a PlannedNodeClaim>,
    pub bound: Vec<&'a Pod>,
    pub new: Vec<&'a Pod>,
    /// The scheduling round that made it (0: an existing node).
    pub round: usize,
    /// The labels of the launch the plan picks (a later round sees the NodeClaim launched so).
    pub launched: BTreeMap<String, String>,
    /// The round each pod of `new` was placed in.
    pub rounds: Vec<usize>,
    /// Where in `new` the pods a later round placed on the NodeClaim as launched begin
    /// (`rounds.rs`: Karpenter's next batch binds to the in-flight node, of the type, zone and
    /// capacity type the launch picked; the NodeClaim keeps the options it was created with;
    /// `merge` appends later rounds' pods).
    pub later: usize,
    /// The index in `options` of the launch the plan picks.
    pub launch: Option<usize>,
    /// Per concrete launch (or the node's own labels): the type and its fixed labels.
    pub options: Vec<(Option<&'a InstanceType>, BTreeMap<String, String>)>,
}

impl Slot<'_> {
    /// The label a pod sees under `key` on launch option `i`.
    pub fn label(&self, i: usize, key: &str) -> Label {
        if let Some(v) = self.options[i].1.get(key) {
            return Label::Is(v.clone());
        }
        match self.claim {
            Some(c) => from_requirement(c.requirements.get_ref(key)),
            None => Label::Absent,
        }
    }

    /// The launch options pending pod `i` of `new` must fit: all, or the launched one.
    pub fn views(&self, i: usize) -> Vec<usize> {
        match self.launch {
            Some(l) if i >= self.later => vec![l],
            _ => (0..self.options.len()).collect(),
        }
    }

    /// The domain of `key` pending pod `i` lands in: the one its options share, or for a later
    /// round's pod the launched one; `None` for a pod of the NodeClaim's own round whose options
    /// differ.
    pub fn domain_of(&self, i: usize, key: &str) -> Option<String> {
        if i < self.later {
            return self.domain(key);
        }
        self.launched.get(key).cloned()
    }

    /// The one domain of `key` every launch option shares; `None` when options differ.
    pub fn domain(&self, key: &str) -> Option<String> {
        let values: BTreeSet<Option<&String>> =
            self.options.iter().map(|(_, l)| l.get(key)).collect();
        match values.into_iter().collect::<Vec<_>>().as_slice() {
            [Some(v)] => Some((*v).clone()),
            _ => None,
        }
    }

    /// The round pod `i` of `new` was placed in.
    pub fn round_of(&self, i: usize) -> usize {
        self.rounds.get(i).copied().unwrap_or(self.round)
    }

    /// The values of `key` a pod placed in round `round` sees here: a NodeClaim of an earlier
    /// round as launched (`rounds.rs`: Karpenter's next batch sees the in-flight node's labels),
    /// else every value its options allow.
    pub fn seen_by(&self, round: usize, key: &str) -> BTreeSet<String> {
        if self.round > 0 && self.round < round {
            return self.launched.get(key).cloned().into_iter().collect();
        }
        self.options
            .iter()
            .filter_map(|(_, l)| l.get(key).cloned())
            .collect()
    }

    /// Every pod on it after the plan.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> + '_ {
        self.bound.iter().chain(&self.new).copied()
    }
}

/// The slots of the plan: existing nodes (with what was placed on them) and NodeClaims.
pub(super) fn slots<'a>(
    input: &'a Input,
    planned: &'a Planned,
    out: &mut Vec<Violation>,
) -> Vec<Slot<'a>> {
    let plan = &planned.plan;
    let round_of = |keys: &[String]| -> Vec<usize> {
        keys.iter()
            .map(|k| planned.rounds.get(k).copied().unwrap_or(0))
            .collect()
    };
    let by_key: BTreeMap<String, &Pod> = input.pods.iter().map(|p| (p.key(), p)).collect();
    let placed = |keys: &[String], out: &mut Vec<Violation>| -> Vec<&'a Pod> {
        keys.iter()
            .filter_map(|k| {
                let p = by_key.get(k).copied();
                if p.is_none() {
                    out.push(violation("unknown pod", k.clone()));
                }
                p
            })
            .collect()
    };
    let mut slots = Vec::new();
    for e in &input.existing_nodes {
        let here: Vec<&ExistingPlacement> = plan
            .existing_nodes
            .iter()
            .filter(|p| p.node == e.node.name)
            .collect();
        let new: Vec<&Pod> = here.iter().flat_map(|p| placed(&p.pods, out)).collect();
        slots.push(Slot {
            name: e.node.name.clone(),
            pool: None,
            node: Some(&e.node),
            claim: None,
            bound: e.pods.iter().collect(),
            rounds: here.iter().flat_map(|p| round_of(&p.pods)).collect(),
            later: new.len(),
            launch: Some(0),
            new,
            round: 0,
            launched: e.node.labels.clone(),
            options: vec![(None, e.node.labels.clone())],
        });
    }
    for c in &plan.node_claims {
        let Some(pool) = input.pools.iter().find(|p| p.pool.name == c.node_pool) else {
            out.push(violation("unknown pool", c.name.clone()));
            continue;
        };
        let mut options = Vec::new();
        let mut launched = BTreeMap::new();
        let mut launch = None;
        for opt in c.instance_types.iter() {
            let Some(it) = pool.instance_types.iter().find(|t| *t.name == *opt.name) else {
                out.push(violation(
                    "option not in pool",
                    format!("{}: {}", c.name, opt.name),
                ));
                continue;
            };
            let before = options.len();
            for o in it.offerings.iter().filter(|o| o.available) {
                if !c.zones.contains(&o.zone) || !c.capacity_types.contains(&o.capacity_type) {
                    continue;
                }
                let mut l = pool.pool.labels.clone();
                l.extend(c.labels.clone());
                l.extend(type_labels(it));
                l.insert(ZONE.into(), o.zone.clone());
                l.insert(CAPACITY_TYPE.into(), o.capacity_type.clone());
                l.insert(HOSTNAME.into(), c.name.clone());
                if it.name == c.launch.instance_type
                    && o.zone == c.launch.zone
                    && o.capacity_type == c.launch.capacity_type
                {
                    launched = l.clone();
                    launch = Some(options.len());
                }
                options.push((Some(it), l));
            }
            if options.len() == before {
                out.push(violation(
                    "option without an available offering",
                    format!("{}: {}", c.name, it.name),
                ));
            }
        }
        let new = placed(&c.pods, out);
        let rounds = round_of(&c.pods);
        // `merge` appends a later round's pods after the NodeClaim's own round's.
        let later = rounds.iter().take_while(|r| **r == c.round).count();
        if rounds[later..].iter().any(|r| *r <= c.round) {
            out.push(violation(
                "pod rounds out of order",
                format!("{}: {rounds:?} (created in round {})", c.name, c.round),
            ));
        }
        slots.push(Slot {
            name: c.name.clone(),
            pool: Some(pool),
            node: None,
            claim: Some(c),
            bound: Vec::new(),
            new,
            rounds,
            later,
            launch,
            round: c.round,
            launched,
            options,
        });
    }
    slots
}

/// The taints an existing node's pods must tolerate: a managed node not initialized hides its
/// startup and known ephemeral taints (`statenode.go` `Taints`).
pub(super) fn node_taints(n: &Node) -> Vec<Taint> {
    n.taints
        .iter()
        .filter(|t| {
            n.initialized
                || !(is_known_ephemeral(t)
                    || n.startup_taints
                        .iter()
                        .any(|s| s.key == t.key && s.effect == t.effect))
        })
        .cloned()
        .collect()
}

/// Room, taints, node selection, volumes and host ports of one slot.
pub(super) fn check_slot(input: &Input, s: &Slot<'_>, out: &mut Vec<Violation>) {
    let taints = match (s.node, s.claim) {
        (Some(n), _) => node_taints(n),
        (_, Some(c)) => c.taints.clone(),
        _ => Vec::new(),
    };
    for p in &s.new {
        if let Some(t) = untolerated(p, &taints) {
            out.push(violation(
                "taint not tolerated",
                format!("{} on {}: {t}", p.name, s.name),
            ));
        }
        let i = s.new.iter().position(|n| std::ptr::eq(*n, *p)).unwrap_or(0);
        let terms = node_terms(p, true);
        for o in s.views(i) {
            if !fits_terms(&terms, &|k| s.label(o, k), false) {
                let it = s.options[o].0.map(|t| t.name.as_str()).unwrap_or("node");
                out.push(violation(
                    "node selection",
                    format!(
                        "{} on {} as {it} {:?}",
                        p.name,
                        s.name,
                        s.options[o].1.get(ZONE)
                    ),
                ));
                break;
            }
            if let Some(zones) = volume_zones(input, p) {
                if !s.options[o].1.get(ZONE).is_some_and(|z| zones.contains(z)) {
                    out.push(violation(
                        "volume zone",
                        format!("{} on {}", p.name, s.name),
                    ));
                    break;
                }
            }
        }
    }
    // Room: every launch option holds every pod and the DaemonSets it gets.
    if let (Some(n), None) = (s.node, s.claim) {
        let daemons: Vec<&Pod> = input
            .daemonsets
            .iter()
            .filter(|d| {
                untolerated(d, &taints).is_none() && pod_fits_labels(d, &|k| s.label(0, k), false)
            })
            .collect();
        let need = sum(s.pods().chain(daemons.iter().copied()));
        let have: BTreeMap<String, i64> = n
            .allocatable
            .iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let over = over(&need, &have);
        if !s.new.is_empty() && !over.is_empty() {
            out.push(violation(
                "existing node over allocatable",
                format!("{}: {over:?}", s.name),
            ));
        }
    }
    if let (Some(pool), Some(c)) = (s.pool, s.claim) {
        // A later round places pods on the NodeClaim as launched (`rounds.rs`: Karpenter's next
        // batch binds to the in-flight node, whose type the launch picked; the NodeClaim keeps
        // the options it was created with): every option holds its own round's pods, the
        // launched type all pods.
        let mut types: Vec<&InstanceType> = Vec::new();
        for (it, _) in &s.options {
            let it = it.expect("a claim's option has a type");
            if !types.iter().any(|t| t.name == it.name) {
                types.push(it);
            }
        }
        let fits = |it: &InstanceType, pods: &[&Pod]| {
            let daemons = daemons_for(input, pool, it);
            over(
                &sum(pods.iter().copied().chain(daemons.iter().copied())),
                &allocatable(it),
            )
        };
        // The NodeClaim's own round's pods: every option holds them.
        for it in &types {
            let left = fits(it, &s.new[..s.later]);
            if !left.is_empty() {
                out.push(violation(
                    "claim option over allocatable",
                    format!("{} as {}: {left:?}", s.name, it.name),
                ));
            }
        }
        if s.later < s.new.len() {
            let launched = types.iter().find(|t| t.name == c.launch.instance_type);
            let left = launched.map(|it| fits(it, &s.new));
            if !left.as_ref().is_some_and(Vec::is_empty) {
                out.push(violation(
                    "claim option over allocatable",
                    format!("{} as {}: {left:?}", s.name, c.launch.instance_type),
                ));
            }
        }
    }
    let mut ports = BTreeSet::new();
    for p in s.pods() {
        for hp in &p.host_ports {
            let new = s.new.iter().any(|n| std::ptr::eq(*n, p));
            if !ports.insert((hp.port, hp.protocol.clone())) && new {
                out.push(violation(
                    "host port twice",
                    format!("{} on {}: {}", p.name, s.name, hp.port),
                ));
            }
        }
    }
}
