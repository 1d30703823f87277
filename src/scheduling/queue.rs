//! The queue of pods to place: largest first; a pod that fails (relaxed all the way, then
//! restored) goes to the back; the loop ends when a whole cycle makes no progress.
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/queue.go` (`Queue`,
//! `byCPUAndMemoryDescending`).

use std::cmp::Ordering;
use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::model::pod::Pod;

/// Pod indices (into the solver's states) in the order they are tried.
pub(super) struct Queue {
    pods: VecDeque<usize>,
    /// The queue length when each pod was last pushed back without progress.
    last_len: FxHashMap<usize, usize>,
}

impl Queue {
    /// All pods, largest first (`pod_of` maps a pod index to its pod).
    pub(super) fn new<'p>(count: usize, pod_of: impl Fn(usize) -> &'p Pod) -> Self {
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by(|&a, &b| by_cpu_and_memory_descending(pod_of(a), pod_of(b)));
        Queue {
            pods: order.into(),
            last_len: FxHashMap::default(),
        }
    }

    /// The next pod, or `None` when the queue is empty or has cycled without progress: the
    /// pod in front was pushed back when the queue was as long as now.
    pub(super) fn pop(&mut self) -> Option<usize> {
        let &s = self.pods.front()?;
        if self.last_len.get(&s) == Some(&self.pods.len()) {
            return None;
        }
        self.pods.pop_front()
    }

    /// Puts a pod that failed at the back (`Queue.Push`).
    pub(super) fn push(&mut self, s: usize) {
        self.pods.push_back(s);
        self.last_len.insert(s, self.pods.len());
    }

    /// The pods left, in queue order.
    pub(super) fn into_remaining(self) -> impl Iterator<Item = usize> {
        self.pods.into_iter()
    }
}

/// CPU, then memory, descending; then creation time, UID and name for a stable order.
fn by_cpu_and_memory_descending(a: &Pod, b: &Pod) -> Ordering {
    b.requests
        .cpu
        .cmp(&a.requests.cpu)
        .then(b.requests.memory.cmp(&a.requests.memory))
        .then_with(|| a.creation_timestamp.cmp(&b.creation_timestamp))
        .then_with(|| a.uid.cmp(&b.uid))
        .then_with(|| a.key().cmp(&b.key()))
}
