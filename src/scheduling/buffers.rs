//! CapacityBuffer virtual pods in a plan (`core v1.14.1: pkg/controllers/provisioning/
//! buffers.go`): they are scheduled with the pending pods, but they are capacity kept for a
//! buffer, not pods to bind — Karpenter keeps them out of its nominations and pod decisions
//! (`filterVirtualPodErrors`, `filterVirtualPodMapping`, `scheduler.go` `Record`) and sums them
//! per buffer (`classifyBufferPods`) to write the buffer's `Provisioning` condition
//! (`computeProvisioningCondition`). docs/karpenter.md §6.13.

use std::collections::BTreeMap;

use super::{ExistingPlacement, Plan, UnschedulablePod};
use crate::model::pod::Pod;

/// Where one buffer's virtual pods went.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BufferCapacity {
    /// The buffer, `namespace/name`.
    pub buffer: String,
    /// Its virtual pods (`status.replicas`).
    pub replicas: usize,
    /// Virtual pods that fit existing nodes, by node (what `bufferPodCountsFromResults` counts:
    /// emptiness leaves these nodes alone).
    pub existing_nodes: Vec<ExistingPlacement>,
    /// Virtual pods placed on the plan's new NodeClaims, by NodeClaim.
    pub node_claims: Vec<ExistingPlacement>,
    /// Virtual pods no NodeClaim takes.
    pub unschedulable: Vec<UnschedulablePod>,
}

/// The `Provisioning` condition the provisioner writes on a ready buffer after a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provisioning {
    /// `True`, `FitsExistingCapacity`: every virtual pod fits an existing node.
    FitsExistingCapacity,
    /// `False`, `RequiresNewCapacity`: some need a new NodeClaim or fit nowhere.
    RequiresNewCapacity,
}

impl Provisioning {
    /// The condition's reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Provisioning::FitsExistingCapacity => "FitsExistingCapacity",
            Provisioning::RequiresNewCapacity => "RequiresNewCapacity",
        }
    }
}

impl BufferCapacity {
    /// Virtual pods on existing nodes.
    pub fn on_existing(&self) -> usize {
        self.existing_nodes.iter().map(|e| e.pods.len()).sum()
    }

    /// Virtual pods on new NodeClaims.
    pub fn on_new(&self) -> usize {
        self.node_claims.iter().map(|e| e.pods.len()).sum()
    }

    /// `computeProvisioningCondition` for a buffer whose pods were scheduled.
    pub fn provisioning(&self) -> Provisioning {
        if self.on_new() > 0 || !self.unschedulable.is_empty() {
            Provisioning::RequiresNewCapacity
        } else {
            Provisioning::FitsExistingCapacity
        }
    }
}

impl Plan {
    /// CapacityBuffer virtual pods placed on the plan's new NodeClaims (what launching it keeps
    /// for buffers, besides its pods).
    pub fn buffer_pods_on_new(&self) -> usize {
        self.buffers.iter().map(BufferCapacity::on_new).sum()
    }
}

/// Takes the virtual pods among `pods` (the plan's pending pods) out of the plan's pod lists
/// and sums them per buffer into `plan.buffers`: NodeClaims and existing nodes keep only the
/// pods to bind, `unschedulable` only real pods.
pub fn split_buffers(plan: &mut Plan, pods: &[Pod]) {
    let owner: BTreeMap<String, &str> = pods
        .iter()
        .filter_map(|p| Some((p.key(), p.buffer.as_deref()?)))
        .collect();
    if owner.is_empty() {
        return;
    }
    let mut by_buffer: BTreeMap<&str, BufferCapacity> = BTreeMap::new();
    for &b in owner.values() {
        let entry = by_buffer.entry(b).or_insert_with(|| BufferCapacity {
            buffer: b.to_string(),
            ..BufferCapacity::default()
        });
        entry.replicas += 1;
    }
    let mut take = |node: &str, list: &mut Vec<String>, existing: bool| {
        let mut kept = Vec::with_capacity(list.len());
        let mut moved: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for p in list.drain(..) {
            match owner.get(&p) {
                Some(&b) => moved.entry(b).or_default().push(p),
                None => kept.push(p),
            }
        }
        *list = kept;
        for (b, pods) in moved {
            let place = ExistingPlacement {
                node: node.to_string(),
                pods,
            };
            let entry = by_buffer.get_mut(b).expect("every owner has an entry");
            if existing {
                entry.existing_nodes.push(place);
            } else {
                entry.node_claims.push(place);
            }
        }
    };
    for c in &mut plan.node_claims {
        take(&c.name, &mut c.pods, false);
    }
    for e in &mut plan.existing_nodes {
        take(&e.node, &mut e.pods, true);
    }
    plan.existing_nodes.retain(|e| !e.pods.is_empty());
    let mut real = Vec::with_capacity(plan.unschedulable.len());
    for u in plan.unschedulable.drain(..) {
        match owner.get(&u.pod) {
            Some(&b) => by_buffer
                .get_mut(b)
                .expect("every owner has an entry")
                .unschedulable
                .push(u),
            None => real.push(u),
        }
    }
    plan.unschedulable = real;
    plan.buffers = by_buffer.into_values().collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::{PlannedNodeClaim, Reason};

    fn virtual_pod(ns: &str, buffer: &str, i: usize) -> Pod {
        let mut p = Pod::default();
        p.name = format!("capacity-buffer-{buffer}-{i}");
        p.namespace = ns.into();
        p.buffer = Some(format!("{ns}/{buffer}"));
        p
    }

    fn real(name: &str) -> Pod {
        let mut p = Pod::default();
        p.name = name.into();
        p.namespace = "default".into();
        p
    }

    fn claim(name: &str, pods: &[&str]) -> PlannedNodeClaim {
        PlannedNodeClaim {
            name: name.into(),
            node_pool: "default".into(),
            node_class: None,
            instance_types: Vec::new().into(),
            launch: crate::scheduling::LaunchChoice {
                instance_type: "t".into(),
                capacity_type: "on-demand".into(),
                zone: "z".into(),
                price: 0.1,
                reservation: None,
                offerings: Vec::new(),
                reservations: Vec::new(),
            },
            zones: Vec::new(),
            capacity_types: Vec::new(),
            pods: pods.iter().map(|p| p.to_string()).collect(),
            requests: Default::default(),
            requirements: Default::default(),
            instance_type_requirement: Default::default(),
            labels: Default::default(),
            annotations: Default::default(),
            taints: Vec::new(),
            startup_taints: Vec::new(),
            round: 1,
            joined_before_weights: None,
        }
    }

    /// core v1.14.1 `provisioning/buffers_test.go` "classifyBufferPods" ("should bucket virtual
    /// pods by buffer namespace/name across existing and new nodes", "should ignore real pods",
    /// "should distinguish buffers with the same name in different namespaces"),
    /// "bufferPodCountsFromResults" ("should count virtual pods per providerID on existing
    /// nodes"), "filterVirtualPodErrors" / "filterVirtualPodMapping" ("should remove virtual pods
    /// from …", "should drop keys entirely when only virtual pods remain"), and
    /// "computeProvisioningCondition" ("should return True/FitsExistingCapacity when all pods
    /// fit", "should return False/RequiresNewCapacity when new nodes are needed").
    /// Upstream It: "should bucket virtual pods by buffer namespace/name across existing and new nodes".
    /// Upstream It: "should return True/FitsExistingCapacity when all pods fit".
    /// Upstream It: "should count virtual pods per providerID on existing nodes".
    /// Upstream It: "should remove virtual pods from pod slices".
    #[test]
    fn virtual_pods_are_summed_per_buffer_and_left_out_of_the_pod_lists() {
        let pods = vec![
            real("web"),
            virtual_pod("a", "cb", 1),
            virtual_pod("a", "cb", 2),
            virtual_pod("b", "cb", 1),
            virtual_pod("b", "cb", 2),
        ];
        let mut plan = Plan {
            node_claims: vec![claim(
                "default-1",
                &["default/web", "a/capacity-buffer-cb-2"],
            )],
            existing_nodes: vec![
                ExistingPlacement {
                    node: "n1".into(),
                    pods: vec![
                        "a/capacity-buffer-cb-1".into(),
                        "b/capacity-buffer-cb-1".into(),
                    ],
                },
                ExistingPlacement {
                    node: "n2".into(),
                    pods: vec!["b/capacity-buffer-cb-2".into()],
                },
            ],
            ..Plan::default()
        };
        split_buffers(&mut plan, &pods);
        assert_eq!(plan.node_claims[0].pods, ["default/web"]);
        assert!(plan.existing_nodes.is_empty(), "{:?}", plan.existing_nodes);
        let [a, b] = &plan.buffers[..] else {
            panic!("{:?}", plan.buffers)
        };
        assert_eq!(
            (a.buffer.as_str(), a.replicas, a.on_existing(), a.on_new()),
            ("a/cb", 2, 1, 1)
        );
        assert_eq!(a.provisioning(), Provisioning::RequiresNewCapacity);
        assert_eq!(a.node_claims[0].node, "default-1");
        assert_eq!(
            (b.buffer.as_str(), b.on_existing(), b.on_new()),
            ("b/cb", 2, 0)
        );
        assert_eq!(b.provisioning(), Provisioning::FitsExistingCapacity);
        let nodes: Vec<_> = b.existing_nodes.iter().map(|e| e.node.as_str()).collect();
        assert_eq!(nodes, ["n1", "n2"]);
    }

    /// "computeProvisioningCondition": a virtual pod that fits nowhere (a pod error) makes it
    /// `RequiresNewCapacity`; `filterVirtualPodErrors` "should remove virtual pods from error
    /// map" keeps real pods' errors (and with them the exit status).
    /// Upstream It: "should remove virtual pods from error map".
    #[test]
    fn an_unschedulable_virtual_pod_is_the_buffers_not_the_plans() {
        let pods = vec![real("web"), virtual_pod("a", "cb", 1)];
        let failed = |pod: &str| UnschedulablePod {
            pod: pod.into(),
            reason: Reason::Unsupported("x".into()),
        };
        let mut plan = Plan {
            unschedulable: vec![failed("default/web"), failed("a/capacity-buffer-cb-1")],
            ..Plan::default()
        };
        split_buffers(&mut plan, &pods);
        assert_eq!(plan.unschedulable.len(), 1);
        assert_eq!(plan.unschedulable[0].pod, "default/web");
        assert_eq!(plan.buffers[0].unschedulable.len(), 1);
        assert_eq!(
            plan.buffers[0].provisioning(),
            Provisioning::RequiresNewCapacity
        );
        // "should return all pods when none are virtual" / "should handle empty input".
        let mut untouched = Plan::default();
        split_buffers(&mut untouched, &[real("web")]);
        assert!(untouched.buffers.is_empty());
    }
}
