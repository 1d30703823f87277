//! Nodes that already exist (or NodeClaims in flight from an earlier run): what is left of their
//! allocatable once their pods and DaemonSets are counted, and whether a pod fits there.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/existingnode.go`
//! (`ExistingNode.CanAdd`, `tryVolumeAlternative`) and, from `scheduler.go`,
//! `calculateExistingNodeClaims` and `sortExistingNodes`; the taints held against pods are
//! `pkg/controllers/state/statenode.go` `Taints()` ([`Node::scheduling_taints`]), the attach
//! limits `pkg/controllers/state/cluster.go` `populateVolumeLimits` (from the node's CSINode).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::node::Node;
use crate::model::pod::HostPort;
use crate::model::requirements::{Requirement, Requirements};
use crate::model::resources::Resources;
use crate::model::taints::{first_untolerated, Effect, Taint};

use super::node_claim::host_port_conflict;
use super::podreqs::PodState;
use super::scheduler::{Fail, Solver, HOSTNAME};
use super::volumes::{bound_usage, exceeded_limit};
use super::Input;

/// An existing node being filled.
pub(super) struct Existing<'a> {
    pub(super) node: &'a Node,
    pub(super) reqs: &'a Requirements,
    pub(super) taints: Vec<Taint>,
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

/// Node facts kept between solves of the same cluster, by node name; an entry whose labels no
/// longer match the node is derived again, so a stale memo is never wrong, only slower.
#[derive(Debug, Default)]
pub struct SolveMemo {
    nodes: FxHashMap<String, Arc<NodeFacts>>,
}

impl SolveMemo {
    /// The facts of every existing node of `input`, in its order.
    pub(super) fn facts(&mut self, input: &Input) -> Vec<Arc<NodeFacts>> {
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

/// `facts`: [`SolveMemo::facts`] of `input`.
pub(super) fn prepare_existing<'a>(
    input: &'a Input,
    facts: &'a [Arc<NodeFacts>],
) -> Vec<Existing<'a>> {
    // The DaemonSets' scheduling requirements, once rather than once per node.
    let daemons: Vec<_> = input
        .daemonsets
        .iter()
        .map(|d| (d, PodState::new(0, d)))
        .collect();
    let mut nodes: Vec<Existing<'_>> = input
        .existing_nodes
        .iter()
        .zip(facts)
        .filter(|(n, _)| !n.node.deleting)
        .map(|(n, facts)| {
            let mut taints = n.node.scheduling_taints();
            let cordon = Taint::new("node.kubernetes.io/unschedulable", "", Effect::NoSchedule);
            if n.node.unschedulable && !taints.iter().any(|t| t.key == cordon.key) {
                taints.push(cordon);
            }
            let reqs = facts.requirements();
            let mut used = Resources::new();
            let mut host_ports = Vec::new();
            let mut volume_usage: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for p in n.pods.iter().filter(|p| !p.is_terminal()) {
                used.add_assign(&p.requests);
                host_ports.extend(p.host_ports.iter().cloned());
                if let Some(storage) = input.storage.as_deref() {
                    for (driver, claims) in bound_usage(p, storage) {
                        volume_usage.entry(driver).or_default().extend(claims);
                    }
                }
            }
            // DaemonSets that will run here but have no pod yet still take their share.
            for (d, state) in &daemons {
                let daemon = d.owner.as_ref().map(|o| o.name.as_str());
                let present = n.pods.iter().any(|p| {
                    p.is_daemonset_pod() && p.owner.as_ref().map(|o| o.name.as_str()) == daemon
                });
                if !present
                    && first_untolerated(&taints, &d.tolerations).is_none()
                    && reqs.is_compatible(&state.strict_requirements, |_| false)
                {
                    used.add_assign(&d.requests);
                    host_ports.extend(d.host_ports.iter().cloned());
                }
            }
            Existing {
                node: &n.node,
                reqs,
                taints,
                available: n.node.allocatable.sub(&used),
                requests: Resources::new(),
                placed: Vec::new(),
                host_ports,
                volume_usage,
                attach_limits: input
                    .storage
                    .as_deref()
                    .and_then(|s| s.attach_limits.get(&n.node.name)),
            }
        })
        .collect();
    // Initialized nodes first, then by name.
    nodes.sort_by(|a, b| {
        b.node
            .initialized
            .cmp(&a.node.initialized)
            .then_with(|| a.node.name.cmp(&b.node.name))
    });
    nodes
}

impl<'a> Solver<'a> {
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
        if !node.reqs.is_compatible(&state.requirements, |_| false) {
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

    /// Whether topology lets pod `s` onto a node with `reqs` (`Topology.AddRequirements` on an
    /// existing node: its domains are fixed, so the topology's choice must be one of them).
    fn check_topology(&self, s: usize, reqs: &Requirements) -> Result<(), Fail> {
        let state = &self.states[s];
        if self.topology.is_trivial_for(state) {
            return Ok(());
        }
        let extra = self
            .topology
            .requirements_for(state, self.pod(s), reqs)
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
