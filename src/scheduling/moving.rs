//! The bound pods a solve places again — Karpenter's `excludedPods` (`core v1.14.1
//! pkg/controllers/provisioning/scheduling/topology.go NewTopology`: the UIDs of the pods handed
//! to the scheduler). Topology skips them where they are bound, so that a pod moving off a node is
//! not counted twice; every other bound pod counts, on a deleting node too (`countDomains`,
//! `updateInverseAffinities`).
//!
//! Kept by position (node, pod) as one bit set per node, so the check in the hot loop that counts
//! bound pods is an index and a shift, not a lookup by name.

/// Bound pods, by (node position, pod position), that the solve's `pods` stand for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MovingPods {
    /// Per node: a bit per pod position.
    by_node: Vec<Vec<u64>>,
}

impl MovingPods {
    /// Whether pod `pod` of node `node` is being placed again.
    #[inline]
    pub fn contains(&self, node: usize, pod: usize) -> bool {
        self.by_node
            .get(node)
            .and_then(|bits| bits.get(pod / 64))
            .is_some_and(|word| word >> (pod % 64) & 1 == 1)
    }

    /// Marks pod `pod` of node `node`; returns whether it was not marked before.
    pub fn insert(&mut self, node: usize, pod: usize) -> bool {
        if self.by_node.len() <= node {
            self.by_node.resize_with(node + 1, Vec::new);
        }
        let bits = &mut self.by_node[node];
        if bits.len() <= pod / 64 {
            bits.resize(pod / 64 + 1, 0);
        }
        let mask = 1u64 << (pod % 64);
        let fresh = bits[pod / 64] & mask == 0;
        bits[pod / 64] |= mask;
        fresh
    }

    /// Unmarks pod `pod` of node `node`.
    pub fn remove(&mut self, node: usize, pod: usize) {
        if let Some(word) = self
            .by_node
            .get_mut(node)
            .and_then(|bits| bits.get_mut(pod / 64))
        {
            *word &= !(1u64 << (pod % 64));
        }
    }

    /// Whether no pod is marked.
    pub fn is_empty(&self) -> bool {
        self.by_node.iter().all(|bits| bits.iter().all(|&w| w == 0))
    }
}

#[cfg(test)]
mod tests {
    use super::MovingPods;

    #[test]
    fn marks_pods_by_position_and_unmarks_them() {
        let mut moving = MovingPods::default();
        assert!(moving.is_empty());
        assert!(moving.insert(3, 70));
        assert!(!moving.insert(3, 70));
        assert!(moving.insert(0, 0));
        assert!(moving.contains(3, 70) && moving.contains(0, 0));
        assert!(!moving.contains(3, 6) && !moving.contains(2, 70) && !moving.contains(9, 0));
        moving.remove(3, 70);
        moving.remove(8, 1);
        assert!(!moving.contains(3, 70));
        moving.remove(0, 0);
        assert!(moving.is_empty());
    }
}
