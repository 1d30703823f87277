//! Pending pods Karpenter provisions nothing for, said by default (offline and live) so that
//! "no pending pods" is never all a plan says about them.

use crate::api::Manifests;

/// The warning naming the pending DaemonSet pods, if any: pods the scheduler marked
/// unschedulable, not bound or nominated, owned by an `apps/v1` DaemonSet. Karpenter launches
/// nothing for them (core v1.14.1 `pkg/utils/pod/scheduling.go` `IsProvisionable`:
/// `!IsOwnedByDaemonSet`); a DaemonSet pod runs on nodes launched for other pods (aws#1649).
pub fn daemon_set_pods(manifests: &Manifests) -> Option<String> {
    let pods: Vec<String> = manifests
        .unbound_daemon_pods
        .iter()
        .filter(|p| p.is_daemonset_pod() && p.waits_for_capacity())
        .map(|p| p.key())
        .collect();
    let (first, rest) = pods.split_first()?;
    let more = match rest.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let (is, pronoun) = if rest.is_empty() {
        ("pending pod is", "it")
    } else {
        ("pending pods are", "them")
    };
    Some(format!(
        "{n} {is} owned by a DaemonSet ({first}{more}): Karpenter provisions no capacity for {pronoun}; a DaemonSet pod runs on nodes launched for other pods, which are sized with its requests",
        n = pods.len()
    ))
}
