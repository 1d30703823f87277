//! The plan's topology checked: `DoNotSchedule` spread within `maxSkew` (core v1.14.1
//! `scheduling/topologygroup.go` `nextDomainTopologySpread`, `domainMinCount`; `topology.go`
//! `buildDomainGroups`, `countDomains`), required pod anti-affinity and affinity; and, for a world
//! of one pending pod, that an unschedulable pod really has nowhere to go.

use std::collections::BTreeSet;

use super::check::{node_taints, violation, Slot, Violation};
use super::labels::{holds, node_terms, pod_fits_labels, selects, untolerated, Label};
use super::node::{admits, allocatable, daemons_for, over, pool_label, type_labels, volume_zones};
use crate::model::labels::{CAPACITY_TYPE, HOSTNAME, ZONE};
use crate::model::pod::{Pod, PodAffinityTerm, TopologySpread, WhenUnsatisfiable};
use crate::model::requirements::Requirement;
use crate::scheduling::{Input, Plan};

/// Whether term `t` of the pod's hard node selection allows `value` under `key` (Karpenter's
/// `podDomains`: `newPodRequirements` reads the first required term left, so the minimum is
/// taken over that term's domains only — not over every term's, as kube-scheduler's node
/// inclusion would; see the case `spread_counts_only_the_domains_of_the_first_required_term`).
fn term_allows(
    t: &[crate::model::requirements::NodeSelectorRequirement],
    key: &str,
    value: &str,
) -> bool {
    t.iter()
        .all(|r| r.key != key || holds(r.operator, &r.values, Some(value)))
}

/// The domains of `c` Karpenter knows for pod `p`: the NodePools' (their requirements with each
/// instance type's, and their `In` values; pools whose taints the pod does not tolerate left
/// out under `nodeTaintsPolicy: Honor`), and the existing nodes' its node filter admits.
fn known_domains(input: &Input, p: &Pod, c: &TopologySpread) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for pool in &input.pools {
        if c.honor_taints && untolerated(p, &pool.pool.taints).is_some() {
            continue;
        }
        let reqs: Vec<Requirement> = pool
            .pool
            .requirements
            .iter()
            .filter(|r| r.key == c.topology_key)
            .map(Requirement::from_selector)
            .collect();
        for it in &pool.instance_types {
            if let Some(r) = it.requirements.get_ref(&c.topology_key) {
                out.extend(
                    r.values()
                        .iter()
                        .filter(|v| reqs.iter().all(|q| admits(q, v)))
                        .cloned(),
                );
            }
        }
        for q in &reqs {
            if !q.is_complement() {
                out.extend(q.values().iter().cloned());
            }
        }
        if let Some(v) = pool.pool.labels.get(&c.topology_key) {
            out.insert(v.clone());
        }
    }
    for e in &input.existing_nodes {
        if node_filter(p, c, &e.node.taints, &|k| {
            e.node
                .labels
                .get(k)
                .cloned()
                .map_or(Label::Absent, Label::Is)
        }) {
            out.extend(e.node.labels.get(&c.topology_key).cloned());
        }
    }
    out
}

/// `MakeTopologyNodeFilter`: taints under `Honor`, node affinity unless `Ignore`.
fn node_filter(
    p: &Pod,
    c: &TopologySpread,
    taints: &[crate::model::taints::Taint],
    label: &dyn Fn(&str) -> Label,
) -> bool {
    (!c.honor_taints || untolerated(p, taints).is_none())
        && (c.ignore_node_affinity || pod_fits_labels(p, label, false))
}

fn same_group(p: &Pod, q: &Pod, selector: Option<&crate::model::selector::LabelSelector>) -> bool {
    p.namespace == q.namespace && selects(selector, &q.labels)
}

/// The pods spread `c` of `p` counts: its selector's, with `p`'s own value of each
/// `matchLabelKeys` key it has (`topology.go` `newForTopologies` adds `key In [value]`).
fn spread_group(p: &Pod, q: &Pod, c: &TopologySpread) -> bool {
    same_group(p, q, c.label_selector.as_ref())
        && c.match_label_keys
            .iter()
            .all(|k| p.labels.get(k).is_none_or(|v| q.labels.get(k) == Some(v)))
}

/// `DoNotSchedule` spread: where a pending pod went, its domain's count less the minimum over
/// the domains it may use is at most `maxSkew` (min 0 for hostname, or below `minDomains`).
pub(super) fn check_spread(input: &Input, slots: &[Slot<'_>], out: &mut Vec<Violation>) {
    for s in slots {
        for (i, p) in s.new.iter().enumerate() {
            for c in p
                .topology_spread
                .iter()
                .filter(|c| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule)
            {
                let key = c.topology_key.as_str();
                let Some(d) = s.domain_of(i, key) else {
                    out.push(violation(
                        "spread domain undetermined",
                        format!("{} on {} ({key})", p.name, s.name),
                    ));
                    continue;
                };
                let count = |d: &str| {
                    let mut n = 0;
                    for t in slots {
                        // Bound pods count where the node's own taints pass the filter
                        // (`topology.go` `countDomains`: `Node.Spec.Taints`); pods placed now
                        // where the taints scheduling sees do (`Record` with the existing node's
                        // `cachedTaints`: no startup or ephemeral taint before initialization),
                        // on a NodeClaim where its taints and requirements do (`Record` →
                        // `Counts` → `nodeFilter.Matches`: a pod whose required term collapsed
                        // to `DoesNotExist` lands on a NodeClaim its own filter refuses, and is
                        // not counted; see the case
                        // `a_pod_on_a_nodeclaim_its_own_spread_filter_refuses_is_not_counted`).
                        let (raw, seen) = match (t.node, t.claim) {
                            (Some(node), _) => {
                                let label = |k: &str| t.label(0, k);
                                (
                                    node_filter(p, c, &node.taints, &label),
                                    node_filter(p, c, &node_taints(node), &label),
                                )
                            }
                            (None, Some(claim)) => {
                                let counts = (0..t.options.len()).any(|o| {
                                    node_filter(p, c, &claim.taints, &|k: &str| t.label(o, k))
                                });
                                (counts, counts)
                            }
                            (None, None) => (true, true),
                        };
                        let bound = t
                            .bound
                            .iter()
                            .filter(|_| raw && t.launched.get(key).map(String::as_str) == Some(d));
                        let new = t.new.iter().enumerate().filter(|(j, _)| {
                            let at = if t.round > 0 && t.round < s.round_of(i).max(t.round_of(*j)) {
                                t.launched.get(key).cloned()
                            } else {
                                t.domain_of(*j, key)
                            };
                            // A pod an earlier round put on an existing node is bound by
                            // the next (`rounds.rs`), counted by the node's own taints.
                            // A later round's pods did not exist when this one was placed;
                            // an earlier round's pods on a node are pending still in the next
                            // batch, placed again and recorded as then (`seen`), not bound.
                            t.round_of(*j) <= s.round_of(i) && seen && at.as_deref() == Some(d)
                        });
                        n += bound
                            .chain(new.map(|(_, q)| q))
                            .filter(|q| spread_group(p, q, c))
                            .count() as i64;
                    }
                    n
                };
                let known = known_domains(input, p, c);
                let min_for = |t: &[crate::model::requirements::NodeSelectorRequirement]| {
                    if key == HOSTNAME {
                        return 0;
                    }
                    let eligible: Vec<&String> =
                        known.iter().filter(|v| term_allows(t, key, v)).collect();
                    if c.min_domains
                        .is_some_and(|m| (eligible.len() as i64) < m as i64)
                    {
                        0
                    } else {
                        eligible.iter().map(|v| count(v)).min().unwrap_or(0)
                    }
                };
                let min = node_terms(p, false)
                    .iter()
                    .map(|t| min_for(t))
                    .max()
                    .unwrap_or(0);
                if count(&d) - min > c.max_skew as i64 {
                    out.push(violation(
                        "spread skew",
                        format!(
                            "{} on {} ({key}={d}): {} - {min} > {}",
                            p.name,
                            s.name,
                            count(&d),
                            c.max_skew
                        ),
                    ));
                }
            }
        }
    }
}

/// Required pod anti-affinity: no other selected pod may share (possibly) a domain, each pod's
/// domains as seen in the later of the two pods' rounds (`topology.go` `Record` blocks every
/// domain a pod may land in; a later round sees an earlier NodeClaim as launched).
pub(super) fn check_affinity(slots: &[Slot<'_>], out: &mut Vec<Violation>) {
    for s in slots {
        for (i, p) in s.new.iter().enumerate() {
            for t in &p.pod_anti_affinity {
                let key = &t.topology_key;
                for o in slots {
                    let hit = placed(o).find(|(j, q)| {
                        let round = s.round_of(i).max(j.map_or(0, |j| o.round_of(j)));
                        !std::ptr::eq(*q, *p)
                            && same_group(p, q, t.label_selector.as_ref())
                            && !s.seen_by(round, key).is_disjoint(&o.seen_by(round, key))
                    });
                    if let Some((_, q)) = hit {
                        out.push(violation(
                            "anti-affinity",
                            format!(
                                "{} on {} with {} on {} ({key})",
                                p.name, s.name, q.name, o.name
                            ),
                        ));
                    }
                }
            }
            for t in &p.pod_affinity {
                check_one_affinity(slots, s, i, t, out);
            }
            check_inverse(slots, s, i, out);
        }
    }
}

/// A bound pod's required anti-affinity repels pending pods it selects from its node's domain
/// (`topology.go` `updateInverseAffinities`: tracked from the cluster's pods).
fn check_inverse(slots: &[Slot<'_>], s: &Slot<'_>, i: usize, out: &mut Vec<Violation>) {
    let p = s.new[i];
    for o in slots {
        for q in &o.bound {
            for t in &q.pod_anti_affinity {
                let key = &t.topology_key;
                let theirs = o.seen_by(0, key);
                if same_group(q, p, t.label_selector.as_ref())
                    && !theirs.is_empty()
                    && !s.seen_by(s.round_of(i), key).is_disjoint(&theirs)
                {
                    out.push(violation(
                        "inverse anti-affinity",
                        format!(
                            "{} on {} near {} on {} ({key})",
                            p.name, s.name, q.name, o.name
                        ),
                    ));
                }
            }
        }
    }
}

/// Every pod of a slot with the index of a pending one (bound pods: `None`, round 0).
fn placed<'s, 'a>(s: &'s Slot<'a>) -> impl Iterator<Item = (Option<usize>, &'a Pod)> + 's {
    let bound = s.bound.iter().map(|q| (None, *q));
    bound.chain(s.new.iter().enumerate().map(|(j, q)| (Some(j), *q)))
}

/// A pod of the group of an affinity term, in one domain Karpenter has recorded it in.
struct Member<'a> {
    pod: &'a Pod,
    round: usize,
    domain: String,
}

/// The pods `term` of `p` selects (not `p`) whose domain is known to a pod placed in round
/// `round`: bound pods on nodes with the key, pods of that round or earlier on a node, on an
/// earlier round's NodeClaim (as launched) or on a NodeClaim of one domain (`Record` counts
/// affinity only where a pod's domain is a single one).
fn members<'a>(
    slots: &[Slot<'a>],
    p: &Pod,
    term: &PodAffinityTerm,
    round: usize,
) -> Vec<Member<'a>> {
    let key = &term.topology_key;
    let mut out = Vec::new();
    for o in slots {
        for (j, q) in placed(o) {
            let r = j.map_or(0, |j| o.round_of(j));
            if std::ptr::eq(q, p) || r > round || !same_group(p, q, term.label_selector.as_ref()) {
                continue;
            }
            if let [d] = o
                .seen_by(round, key)
                .into_iter()
                .collect::<Vec<_>>()
                .as_slice()
            {
                out.push(Member {
                    pod: q,
                    round: r,
                    domain: d.clone(),
                });
            }
        }
    }
    out
}

/// Whether every required term of `p` allows `value` under `key` (the pod's domains,
/// `podDomains`: its strict requirements; every term, as relaxation may have left any).
fn allows(p: &Pod, key: &str, value: &str) -> bool {
    node_terms(p, false)
        .iter()
        .all(|t| term_allows(t, key, value))
}

/// Required pod affinity (`topologygroup.go` `nextDomainAffinity`): every domain pod `i` of `s`
/// may land in holds a selected pod; or the pod bootstraps its group: it selects itself and no
/// selected pod recorded before it sits in a domain it allows (`anyCompatiblePodDomain`;
/// `topology_test.go` "should allow two nodes to be created when two pods with matching
/// affinities have incompatible selectors"). Two pods of one round that bootstrapped apart
/// while each allows the other's domain cannot both have come first.
fn check_one_affinity(
    slots: &[Slot<'_>],
    s: &Slot<'_>,
    i: usize,
    term: &PodAffinityTerm,
    out: &mut Vec<Violation>,
) {
    let p = s.new[i];
    let key = &term.topology_key;
    let round = s.round_of(i);
    let mine = s.seen_by(round, key);
    let members = members(slots, p, term, round);
    if members.is_empty()
        && !slots
            .iter()
            .flat_map(placed)
            .any(|(_, q)| !std::ptr::eq(q, p) && same_group(p, q, term.label_selector.as_ref()))
    {
        return;
    }
    let joined = !mine.is_empty() && mine.iter().all(|d| members.iter().any(|m| m.domain == *d));
    if joined {
        return;
    }
    let self_selecting = same_group(p, p, term.label_selector.as_ref());
    let before = members
        .iter()
        .find(|m| m.round < round.max(1) && allows(p, key, &m.domain));
    let detail = |why: String| format!("{} on {} ({key}={mine:?}): {why}", p.name, s.name);
    if !self_selecting {
        out.push(violation(
            "affinity",
            detail("no selected pod there".into()),
        ));
    } else if let Some(m) = before {
        out.push(violation(
            "affinity",
            detail(format!("{} was already in {}", m.pod.name, m.domain)),
        ));
    } else if let [d] = mine.iter().collect::<Vec<_>>().as_slice() {
        // A pod of the same round that bootstrapped too, elsewhere, each allowing the other's.
        let rival = members.iter().find(|m| {
            m.round == round
                && m.domain != **d
                && allows(p, key, &m.domain)
                && allows(m.pod, key, d)
                && !members
                    .iter()
                    .any(|n| !std::ptr::eq(n.pod, m.pod) && n.domain == m.domain)
        });
        if let Some(m) = rival {
            out.push(violation(
                "affinity",
                detail(format!(
                    "{} bootstrapped {} in the same round",
                    m.pod.name, m.domain
                )),
            ));
        }
    }
}

/// A world of one pending pod that the plan leaves unschedulable: is there a fresh node of some
/// pool, type and offering (or an existing node) it fits? Only for pods whose topology cannot
/// depend on anything else (no spread, no pod affinity, no bound pod its anti-affinity selects).
pub(super) fn check_single(
    input: &Input,
    plan: &Plan,
    slots: &[Slot<'_>],
    out: &mut Vec<Violation>,
) {
    let [p] = input.pods.as_slice() else { return };
    if plan.unschedulable.is_empty() || !p.topology_spread.is_empty() || !p.pod_affinity.is_empty()
    {
        return;
    }
    let selected = |t: &PodAffinityTerm| {
        slots.iter().any(|s| {
            s.bound
                .iter()
                .any(|q| same_group(p, q, t.label_selector.as_ref()))
        })
    };
    let repelled = slots.iter().flat_map(|s| &s.bound).any(|q| {
        q.pod_anti_affinity
            .iter()
            .any(|t| same_group(q, p, t.label_selector.as_ref()))
    });
    if p.pod_anti_affinity.iter().any(selected) || repelled || !p.host_ports.is_empty() {
        return;
    }
    let zones = volume_zones(input, p);
    for pool in &input.pools {
        if untolerated(p, &pool.pool.taints).is_some() {
            continue;
        }
        let reqs: Vec<Requirement> = pool
            .pool
            .requirements
            .iter()
            .map(Requirement::from_selector)
            .collect();
        let mut fitting = BTreeSet::new();
        for it in &pool.instance_types {
            let fixed = type_labels(it);
            if fixed
                .iter()
                .any(|(k, v)| reqs.iter().any(|r| r.key == *k && !admits(r, v)))
            {
                continue;
            }
            let daemons = daemons_for(input, pool, it);
            let need = {
                let mut m = std::collections::BTreeMap::new();
                for q in daemons.iter().copied().chain([p]) {
                    for (k, v) in q.requests.iter() {
                        *m.entry(k.to_string()).or_insert(0) += v;
                    }
                }
                m
            };
            if !over(&need, &allocatable(it)).is_empty() {
                continue;
            }
            if pool
                .pool
                .limits
                .iter()
                .any(|(k, l)| pool.usage.get(k) + it.capacity.get(k) > *l)
            {
                continue;
            }
            for o in it.offerings.iter().filter(|o| o.available) {
                let ok_offer = reqs.iter().all(|r| match r.key.as_str() {
                    ZONE => admits(r, &o.zone),
                    CAPACITY_TYPE => admits(r, &o.capacity_type),
                    _ => true,
                });
                if !ok_offer || zones.as_ref().is_some_and(|z| !z.contains(&o.zone)) {
                    continue;
                }
                let label = |k: &str| match k {
                    ZONE => Label::Is(o.zone.clone()),
                    CAPACITY_TYPE => Label::Is(o.capacity_type.clone()),
                    _ => match fixed.get(k).or(pool.pool.labels.get(k)) {
                        Some(v) => Label::Is(v.clone()),
                        None => pool_label(pool, k),
                    },
                };
                if pod_fits_labels(p, &label, true) {
                    fitting.insert(it.name.clone());
                }
            }
        }
        let min_values = pool
            .pool
            .requirements
            .iter()
            .filter_map(|r| r.min_values)
            .max()
            .unwrap_or(1) as usize;
        if fitting.len() >= min_values.max(1) {
            out.push(violation(
                "unschedulable pod fits a fresh node",
                format!("{} on {} as {fitting:?}", p.name, pool.pool.name),
            ));
        }
    }
}
