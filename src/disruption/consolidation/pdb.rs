//! PodDisruptionBudgets as disruption reads them: how many disruptions each allows (its status,
//! or the Kubernetes disruption controller's arithmetic on the pods when a manifest has no
//! status), whether it blocks a node's candidacy, and whether it fully blocks a pod.
//!
//! Upstream: `core v1.14.1: pkg/utils/pdb/pdb.go` (`CanEvictPods`, `isFullyBlocked`, `newPdb`),
//! `core v0.37.7: pkg/controllers/disruption/pdblimits.go` and `core v0.31.4:
//! pkg/controllers/deprovisioning/pdblimits.go` (no rule against several PDBs before v1);
//! `kubernetes: pkg/controller/disruption/disruption.go` (`getExpectedPodCount`).

use super::input::{IntOrPercent, PdbInput, Release};
use crate::disruption::drain;
use crate::model::nodepool::ApiGeneration;
use crate::model::pod::Pod;

/// A PodDisruptionBudget with its allowance worked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pdb {
    pub input: PdbInput,
    /// `status.disruptionsAllowed`, or what the disruption controller would compute.
    pub allowed: i32,
    /// `maxUnavailable: 0`, `maxUnavailable: "0%"` or `minAvailable: "100%"`: Karpenter does not
    /// even simulate moving the pods it covers (`isFullyBlocking`).
    pub fully_blocking: bool,
}

impl Pdb {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.input.namespace, self.input.name)
    }

    pub fn covers(&self, pod: &Pod) -> bool {
        self.input.namespace == pod.namespace
            && self
                .input
                .selector
                .as_ref()
                .is_some_and(|s| s.matches(&pod.labels))
    }
}

/// Why a PDB keeps a node from being a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PdbBlock {
    /// One PDB with no disruption left.
    Zero { pdb: String, allowed: i32 },
    /// Several PDBs cover the pod: the Eviction API refuses it (v1 only).
    Several { pdbs: Vec<String> },
}

/// Every PDB with its allowance. `pods` are all pods of the cluster (bound and pending) with
/// whether each is healthy (ready and not terminating).
pub(crate) fn evaluate(pdbs: Vec<PdbInput>, pods: &[(&Pod, bool)]) -> Vec<Pdb> {
    pdbs.into_iter()
        .map(|input| {
            let pdb = Pdb {
                fully_blocking: fully_blocking(&input),
                input,
                allowed: 0,
            };
            let allowed = pdb.input.disruptions_allowed.unwrap_or_else(|| {
                let (mut expected, mut healthy) = (0i64, 0i64);
                for (pod, is_healthy) in pods {
                    if pod.is_terminal() || !pdb.covers(pod) {
                        continue;
                    }
                    expected += 1;
                    if *is_healthy {
                        healthy += 1;
                    }
                }
                computed_allowed(&pdb.input, expected, healthy)
            });
            Pdb { allowed, ..pdb }
        })
        .collect()
}

/// The disruption controller's arithmetic, taking the matching pods as the expected count (the
/// controller asks the owners' scale; a manifest's pods are the best stand-in).
fn computed_allowed(pdb: &PdbInput, expected: i64, healthy: i64) -> i32 {
    let scaled = |v: IntOrPercent| match v {
        IntOrPercent::Int(n) => i64::from(n),
        IntOrPercent::Percent(p) => (i64::from(p) * expected + 99) / 100,
    };
    let desired = match (pdb.max_unavailable, pdb.min_available) {
        (Some(max), _) => (expected - scaled(max)).max(0),
        (None, Some(min)) => scaled(min),
        (None, None) => 0,
    };
    (healthy - desired).clamp(0, i64::from(i32::MAX)) as i32
}

fn fully_blocking(pdb: &PdbInput) -> bool {
    matches!(
        pdb.max_unavailable,
        Some(IntOrPercent::Int(0)) | Some(IntOrPercent::Percent(0))
    ) || pdb.min_available == Some(IntOrPercent::Percent(100))
}

/// Whether the PDBs keep this (evictable) pod from being evicted now (`isEvictable` with
/// `zeroDisruptions`). `not_ready`: the pod's Ready condition is False.
pub(crate) fn blocks(
    pdbs: &[&Pdb],
    pod: &Pod,
    not_ready: bool,
    release: Release,
) -> Option<PdbBlock> {
    let covering: Vec<&Pdb> = pdbs.iter().copied().filter(|p| p.covers(pod)).collect();
    if release == Release::V1_14 && covering.len() > 1 {
        let mut names: Vec<String> = covering.iter().map(|p| p.key()).collect();
        names.sort();
        return Some(PdbBlock::Several { pdbs: names });
    }
    covering
        .into_iter()
        .filter(|p| !(p.input.always_allow_unhealthy && not_ready))
        .find(|p| p.allowed <= 0)
        .map(|p| PdbBlock::Zero {
            pdb: p.key(),
            allowed: p.allowed,
        })
}

/// The first of a node's `pods` (in key order) whose eviction the PDBs refuse now, the
/// candidacy check every disruption method makes, emptiness included (`core v1.14.1:
/// pkg/controllers/state/statenode.go ValidatePodsDisruptable` → `pkg/utils/pdb/pdb.go
/// CanEvictPods`, `isEvictable` with `zeroDisruptions`): only a pod that would be evicted counts
/// (`IsEvictable`: active, not a mirror pod, not tolerating the disruption taint `taint`, no
/// active `karpenter.sh/do-not-disrupt`) — a DaemonSet's pod too. With its key.
pub(crate) fn first_eviction_refused<'p>(
    pdbs: &[Pdb],
    pods: impl IntoIterator<Item = &'p Pod>,
    taint: &crate::model::taints::Taint,
    now: i64,
) -> Option<(String, PdbBlock)> {
    let covering: Vec<&Pdb> = pdbs.iter().collect();
    let mut pods: Vec<&Pod> = pods.into_iter().collect();
    pods.sort_by_key(|p| p.key());
    pods.into_iter()
        .filter(|p| {
            p.is_active()
                && !p.is_mirror()
                && !p.tolerations.iter().any(|t| t.tolerates(taint))
                && !drain::do_not_disrupt_active(p, now)
        })
        .find_map(|p| blocks(&covering, p, p.not_ready, Release::V1_14).map(|b| (p.key(), b)))
}

/// Whether a PDB fully blocks the pod, so Karpenter leaves it out of simulations (v1:
/// `IsCurrentlyReschedulable`).
pub(crate) fn fully_blocks(pdbs: &[&Pdb], pod: &Pod, not_ready: bool) -> bool {
    let covering: Vec<&Pdb> = pdbs.iter().copied().filter(|p| p.covers(pod)).collect();
    if covering.len() > 1 {
        return true;
    }
    covering
        .iter()
        .any(|p| p.fully_blocking && !(p.input.always_allow_unhealthy && not_ready))
}

/// [`fully_blocks`] from the PDBs' specs alone (no allowance needed).
fn fully_blocked(pdbs: &[PdbInput], pod: &Pod) -> bool {
    let pdbs = evaluate(pdbs.to_vec(), &[]);
    let refs: Vec<&Pdb> = pdbs.iter().collect();
    fully_blocks(&refs, pod, pod.not_ready)
}

/// Whether Karpenter schedules this pod of a deleting node again (`core v1.14.1:
/// pkg/utils/pdb/pdb.go IsCurrentlyReschedulable`, `pkg/utils/pod/scheduling.go`): it is
/// active (not Succeeded/Failed, not terminating) or a terminating StatefulSet pod; not a
/// DaemonSet's or a mirror pod; not under an active `karpenter.sh/do-not-disrupt`; and not
/// fully blocked by PDBs (one matching PDB with `maxUnavailable: 0`/`"0%"` or `minAvailable:
/// "100%"`, or several matching PDBs) — the PDBs only count for a pod that would be evicted at
/// all (`isEvictable`). `now`: Unix seconds, for do-not-disrupt durations.
pub fn currently_reschedulable(pod: &Pod, pdbs: &[PdbInput], now: i64) -> bool {
    let active = pod.is_active();
    let reschedulable = pod.is_reschedulable();
    let protected = active && drain::do_not_disrupt_active(pod, now);
    let taint = drain::disruption_taint(Some(ApiGeneration::V1));
    let evictable = active
        && !pod.is_mirror()
        && !pod.tolerations.iter().any(|t| t.tolerates(&taint))
        && !protected;
    reschedulable && !protected && !(evictable && fully_blocked(pdbs, pod))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::selector::LabelSelector;
    use crate::testing::PodBuilder;

    fn pdb(min: Option<IntOrPercent>, max: Option<IntOrPercent>) -> PdbInput {
        PdbInput {
            namespace: "default".into(),
            name: "web".into(),
            selector: Some(LabelSelector::eq(&[("app", "web")])),
            min_available: min,
            max_unavailable: max,
            always_allow_unhealthy: false,
            disruptions_allowed: None,
        }
    }

    /// Kubernetes' arithmetic: minAvailable/maxUnavailable as counts or percentages rounded up,
    /// against the matching pods, healthy ones counted.
    #[test]
    fn allowance_is_computed_from_the_spec_when_there_is_no_status() {
        let web: Vec<Pod> = (0..4)
            .map(|i| {
                PodBuilder::new(&format!("web-{i}"))
                    .label("app", "web")
                    .build()
            })
            .collect();
        let other = PodBuilder::new("db").label("app", "db").build();
        let mut pods: Vec<(&Pod, bool)> = web.iter().map(|p| (p, true)).collect();
        pods.push((&other, true));
        let cases = [
            (Some(IntOrPercent::Int(3)), None, 1),
            (Some(IntOrPercent::Percent(50)), None, 2),
            (Some(IntOrPercent::Percent(60)), None, 1),
            (None, Some(IntOrPercent::Int(1)), 1),
            (None, Some(IntOrPercent::Percent(30)), 2),
            (None, Some(IntOrPercent::Int(0)), 0),
            (Some(IntOrPercent::Percent(100)), None, 0),
        ];
        for (min, max, want) in cases {
            assert_eq!(
                evaluate(vec![pdb(min, max)], &pods)[0].allowed,
                want,
                "{min:?} {max:?}"
            );
        }
        // An unhealthy pod does not count as healthy.
        pods[0].1 = false;
        assert_eq!(
            evaluate(vec![pdb(Some(IntOrPercent::Int(3)), None)], &pods)[0].allowed,
            0
        );
        // A status wins.
        let mut with_status = pdb(Some(IntOrPercent::Int(3)), None);
        with_status.disruptions_allowed = Some(5);
        assert_eq!(evaluate(vec![with_status], &pods)[0].allowed, 5);
    }

    /// A PDB of `core v1.14.1: pkg/utils/pdb/suite_test.go` over `app: web`: envtest runs no
    /// disruption controller, so its status allows 0 disruptions.
    fn upstream_pdb(name: &str, min: Option<IntOrPercent>, max: Option<IntOrPercent>) -> PdbInput {
        PdbInput {
            name: name.into(),
            disruptions_allowed: Some(0),
            ..pdb(min, max)
        }
    }

    /// The table rows shared by three upstream `DescribeTable`s: 100% min available, 0% max
    /// unavailable, 0 max unavailable, two PDBs (100% min available) on the same pod.
    fn blocking_tables() -> Vec<(&'static str, Vec<PdbInput>)> {
        vec![
            (
                "100% min available",
                vec![upstream_pdb("web", Some(IntOrPercent::Percent(100)), None)],
            ),
            (
                "0% max unavailable",
                vec![upstream_pdb("web", None, Some(IntOrPercent::Percent(0)))],
            ),
            (
                "0 max unavailable",
                vec![upstream_pdb("web", None, Some(IntOrPercent::Int(0)))],
            ),
            (
                "multiple PDBs on the same pod",
                vec![
                    upstream_pdb("pdb-1", Some(IntOrPercent::Percent(100)), None),
                    upstream_pdb("pdb-2", Some(IntOrPercent::Percent(100)), None),
                ],
            ),
        ]
    }

    /// `CanEvictPods`: the first pod any PDB blocks, with the blocking PDBs' keys.
    fn can_evict(pdbs: &[PdbInput], pods: &[Pod]) -> (Vec<String>, bool) {
        let evaluated = evaluate(pdbs.to_vec(), &[]);
        let refs: Vec<&Pdb> = evaluated.iter().collect();
        for pod in pods {
            match blocks(&refs, pod, pod.not_ready, Release::V1_14) {
                Some(PdbBlock::Zero { pdb, .. }) => return (vec![pdb], false),
                Some(PdbBlock::Several { pdbs }) => return (pdbs, false),
                None => {}
            }
        }
        (Vec::new(), true)
    }

    /// `core v1.14.1: pkg/utils/pdb/suite_test.go` › "CanEvictPods" (3 It, two tables of 4
    /// Entries) — agree.
    #[test]
    fn can_evict_pods_as_upstream() {
        let web = |name: &str| PodBuilder::new(name).label("app", "web").build();
        let mut unhealthy = web("unhealthy");
        unhealthy.not_ready = true;
        let mut allow = upstream_pdb("web", Some(IntOrPercent::Percent(100)), None);
        allow.always_allow_unhealthy = true;
        assert_eq!(
            can_evict(&[allow], &[unhealthy.clone()]),
            (vec![], true),
            "can evict unhealthy pods when UnhealthyPodEvictionPolicy is set to always allow"
        );
        let strict = upstream_pdb("web", Some(IntOrPercent::Percent(100)), None);
        assert_eq!(
            can_evict(&[strict], &[unhealthy]),
            (vec!["default/web".to_string()], false),
            "can't evict unhealthy pods when UnhealthyPodEvictionPolicy is not set"
        );
        let mut other = pdb(None, None);
        other.selector = Some(LabelSelector::eq(&[("other", "value")]));
        assert_eq!(
            can_evict(&[other], &[web("p")]),
            (vec![], true),
            "can evict pods when no PDBs match"
        );
        for (entry, pdbs) in blocking_tables() {
            let keys: Vec<String> = pdbs.iter().map(|p| format!("default/{}", p.name)).collect();
            assert_eq!(
                can_evict(&pdbs, &[web("pod1"), web("pod2")]),
                (keys.clone(), false),
                "not allowed for every pod in the list: {entry}"
            );
            assert_eq!(
                can_evict(&pdbs, &[web("pod1"), PodBuilder::new("pod2").build()]),
                (keys, false),
                "not allowed for one pod in the list: {entry}"
            );
        }
    }

    /// `core v1.14.1: pkg/utils/pdb/suite_test.go` › "IsCurrentlyReschedulable" (4 It, one
    /// table of 4 Entries) — agree.
    #[test]
    fn is_currently_reschedulable_as_upstream() {
        let now = 1_719_230_400;
        let web = |name: &str| PodBuilder::new(name).label("app", "web").build();
        let mut unhealthy = web("unhealthy");
        unhealthy.not_ready = true;
        let mut allow = upstream_pdb("web", Some(IntOrPercent::Percent(100)), None);
        allow.always_allow_unhealthy = true;
        assert!(
            currently_reschedulable(&unhealthy, &[allow], now),
            "considers unhealthy pod as currently reschedulable when UnhealthyPodEvictionPolicy is set to always allow"
        );
        let strict = upstream_pdb("web", Some(IntOrPercent::Percent(100)), None);
        assert!(
            !currently_reschedulable(&unhealthy, &[strict], now),
            "does not consider unhealthy pod as currently reschedulable when UnhealthyPodEvictionPolicy is not set"
        );
        let mut other = pdb(None, None);
        other.selector = Some(LabelSelector::eq(&[("other", "value")]));
        assert!(
            currently_reschedulable(&web("p"), &[other], now),
            "considers pod as currently reschedulable when no PDBs match"
        );
        for (entry, pdbs) in blocking_tables() {
            assert!(
                !currently_reschedulable(&web("p"), &pdbs, now),
                "pods which are not currently reschedulable due to PDBs: {entry}"
            );
        }
        let mut pinned = web("pinned");
        pinned.do_not_disrupt = Some("true".into());
        assert!(
            !currently_reschedulable(&pinned, &[], now),
            "does not consider pod with do-not-disrupt annotation as currently reschedulable"
        );
    }
}
