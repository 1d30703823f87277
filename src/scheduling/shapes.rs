//! Identical pods are one scheduling problem, not thousands.
//!
//! A pod no topology group constrains (no spread, no pod (anti-)affinity of its own, no
//! anti-affinity of another pod selecting it) is placed by its requests, node requirements,
//! tolerations and host ports alone: its *shape*. Existing nodes and in-flight NodeClaims only
//! ever get fuller and narrower, so a node or NodeClaim that refused a shape refuses it for good,
//! and a shape that fitted nowhere fits nowhere until a new NodeClaim changes the NodePools'
//! remaining limits. Each shape remembers both, and the next pod of that shape skips what is
//! known to refuse it: the same first fit Karpenter finds by trying each pod in full (it has no
//! counterpart upstream; `scheduler.go` tries every node for every pod).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHasher};

use crate::model::pod::{HostPort, Pod};
use crate::model::requirements::Requirements;
use crate::model::resources::Resources;
use crate::model::taints::Toleration;

use super::podreqs::PodState;
use super::reason::Reason;

/// What is known about every pod of one shape.
#[derive(Debug, Default)]
pub(super) struct Shape {
    /// Existing nodes before this index (in the order they are tried) refuse the shape.
    pub(super) existing_refused: usize,
    /// In-flight NodeClaims created before this index refuse the shape.
    pub(super) claims_refused: usize,
    /// Why the shape fitted nowhere, and how many NodeClaims there were then: while there are
    /// still as many, nothing that could change the verdict (or its wording) has happened.
    pub(super) nowhere: Option<(usize, Reason)>,
}

/// What makes two pods the same problem (cloned once per distinct shape).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Key {
    requests: Resources,
    requirements: Arc<Requirements>,
    tolerations: Arc<Vec<Toleration>>,
    host_ports: Vec<HostPort>,
}

/// The shapes of one solve.
#[derive(Debug, Default)]
pub(super) struct Shapes {
    /// Shape ids by key hash (several on a collision).
    by_hash: FxHashMap<u64, Vec<u32>>,
    keys: Vec<Key>,
    shapes: Vec<Shape>,
}

impl Shapes {
    /// The shape of a pod in its current state (the caller checks that no topology group
    /// constrains it).
    pub(super) fn id(&mut self, pod: &Pod, state: &PodState) -> u32 {
        let mut h = FxHasher::default();
        pod.requests.hash(&mut h);
        state.requirements.hash(&mut h);
        state.tolerations.hash(&mut h);
        pod.host_ports.hash(&mut h);
        let ids = self.by_hash.entry(h.finish()).or_default();
        let same = |k: &Key| {
            k.requests == pod.requests
                && k.requirements == state.requirements
                && k.tolerations == state.tolerations
                && k.host_ports == pod.host_ports
        };
        if let Some(&id) = ids.iter().find(|&&id| same(&self.keys[id as usize])) {
            return id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(Key {
            requests: pod.requests.clone(),
            requirements: state.requirements.clone(),
            tolerations: state.tolerations.clone(),
            host_ports: pod.host_ports.clone(),
        });
        self.shapes.push(Shape::default());
        ids.push(id);
        id
    }

    pub(super) fn get(&self, id: u32) -> &Shape {
        &self.shapes[id as usize]
    }

    pub(super) fn get_mut(&mut self, id: u32) -> &mut Shape {
        &mut self.shapes[id as usize]
    }
}
