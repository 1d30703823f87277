//! Drain planning, pure: which pods of a node are evicted, in which order, which are left alone,
//! and what blocks the drain — with the blocking object named (docs/spec.md §4 step 1 and 4, docs/spec.md §6).
//!
//! Rules (docs/karpenter.md §5.5–5.6, docs/conventions.md §2.1):
//! - left alone: finished pods (Succeeded/Failed), mirror pods (owned by their Node), pods stuck
//!   terminating (deletionTimestamp more than a minute ago), pods tolerating the disruption taint
//!   (they would land on the node again), and — as `kubectl drain --ignore-daemonsets` and docs/spec.md §4
//!   step 4 do — DaemonSet pods, unless [`DrainOptions::evict_daemonsets`] asks for Karpenter
//!   v1's behaviour of evicting them last in their tier;
//! - blocking: an active `karpenter.sh/do-not-disrupt` (or v1alpha5 `do-not-evict`) on a pod or
//!   the node; a pod covered by a PodDisruptionBudget with `status.disruptionsAllowed == 0`; a pod
//!   covered by more than one PDB (the Eviction API refuses those with a 500);
//! - order: four tiers, only the first non-empty one evicted per pass — non-critical
//!   non-DaemonSet → non-critical DaemonSet → critical non-DaemonSet → critical DaemonSet
//!   ("critical" = priorityClassName `system-cluster-critical` or `system-node-critical`).
//!   A tier is non-empty while any of its pods is still there: one terminating (its grace
//!   period runs) or held by do-not-disrupt is waited for, not evicted, and keeps the later
//!   tiers waiting (`core v1.14.1: pkg/controllers/node/termination/terminator/terminator.go
//!   Drain` groups every pod `IsWaitingEviction` and evicts the `IsEvictable` ones of the first
//!   non-empty group; `node/termination/suite_test.go` "should evict pods in order and wait
//!   until pods are fully deleted").

use std::collections::BTreeMap;
use std::fmt;

use crate::model::labels::{self, DO_NOT_DISRUPT};
use crate::model::node::Node;
use crate::model::nodepool::ApiGeneration;
use crate::model::pod::Pod;
use crate::model::selector::LabelSelector;
use crate::model::taints::{Effect, Taint};
use crate::model::time::{parse_go_duration, parse_rfc3339};

/// Pods terminating longer than this are considered stuck and ignored (Karpenter, kubectl).
pub const STUCK_TERMINATING_SECONDS: i64 = 60;

/// The taint that marks a node being disrupted, per generation (docs/karpenter.md §2.4).
pub fn disruption_taint(generation: Option<ApiGeneration>) -> Taint {
    match generation {
        Some(ApiGeneration::V1) | None => {
            Taint::new(labels::DISRUPTED_TAINT, "", Effect::NoSchedule)
        }
        Some(ApiGeneration::V1Beta1) => Taint::new(
            labels::DISRUPTION_TAINT,
            labels::DISRUPTION_TAINT_VALUE,
            Effect::NoSchedule,
        ),
        Some(ApiGeneration::V1Alpha5) => {
            Taint::new(labels::UNSCHEDULABLE_TAINT, "", Effect::NoSchedule)
        }
    }
}

/// A PodDisruptionBudget as drain planning needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdb {
    /// Namespace (a PDB only covers pods of its namespace).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.selector`; `None` selects nothing, an empty selector every pod (policy/v1).
    pub selector: Option<LabelSelector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
}

impl Pdb {
    /// Whether the PDB covers the pod.
    pub fn covers(&self, pod: &Pod) -> bool {
        self.namespace == pod.namespace
            && self
                .selector
                .as_ref()
                .is_some_and(|s| s.matches(&pod.labels))
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Eviction order (docs/karpenter.md §5.5), earliest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Non-critical, not DaemonSet-owned.
    NonCritical,
    /// Non-critical DaemonSet pods.
    NonCriticalDaemonSet,
    /// Critical, not DaemonSet-owned.
    Critical,
    /// Critical DaemonSet pods.
    CriticalDaemonSet,
}

/// Why a pod is left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Succeeded or Failed.
    Finished,
    /// A static pod mirrored by the kubelet.
    Mirror,
    /// Terminating for more than a minute.
    StuckTerminating,
    /// Tolerates the disruption taint.
    ToleratesDisruptionTaint,
    /// DaemonSet-owned (kubectl drain `--ignore-daemonsets`).
    DaemonSet,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkipReason::Finished => "finished",
            SkipReason::Mirror => "mirror pod",
            SkipReason::StuckTerminating => "stuck terminating",
            SkipReason::ToleratesDisruptionTaint => "tolerates the disruption taint",
            SkipReason::DaemonSet => "DaemonSet pod",
        })
    }
}

/// What blocks a drain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// The node carries `karpenter.sh/do-not-disrupt: "true"`.
    NodeDoNotDisrupt {
        /// Node name.
        node: String,
    },
    /// A pod's active do-not-disrupt/do-not-evict annotation.
    PodDoNotDisrupt {
        /// `namespace/name`.
        pod: String,
        /// The annotation key.
        annotation: &'static str,
        /// Its value (`true` or a duration).
        value: String,
    },
    /// A PDB with no disruption left.
    Pdb {
        /// `namespace/name` of the pod.
        pod: String,
        /// `namespace/name` of the PDB.
        pdb: String,
    },
    /// More than one PDB covers the pod.
    MultiplePdbs {
        /// `namespace/name` of the pod.
        pod: String,
        /// The PDBs.
        pdbs: Vec<String>,
    },
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::NodeDoNotDisrupt { node } => {
                write!(f, "node {node} is annotated {DO_NOT_DISRUPT}=true")
            }
            Blocker::PodDoNotDisrupt {
                pod,
                annotation,
                value,
            } => write!(f, "pod {pod} is annotated {annotation}={value}"),
            Blocker::Pdb { pod, pdb } => write!(
                f,
                "PodDisruptionBudget {pdb} allows 0 disruptions (pod {pod})"
            ),
            Blocker::MultiplePdbs { pod, pdbs } => write!(
                f,
                "pod {pod} is covered by several PodDisruptionBudgets ({}); the Eviction API refuses it",
                pdbs.join(", ")
            ),
        }
    }
}

/// Drain behaviour switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainOptions {
    /// Evict DaemonSet pods in their tiers (Karpenter v1) instead of leaving them (kubectl).
    pub evict_daemonsets: bool,
    /// The node's disruption taint (see [`disruption_taint`]).
    pub disruption_taint: Taint,
    /// `--force`: do-not-disrupt annotations do not block (docs/spec.md §6).
    pub ignore_do_not_disrupt: bool,
}

impl Default for DrainOptions {
    fn default() -> Self {
        DrainOptions {
            evict_daemonsets: false,
            disruption_taint: disruption_taint(Some(ApiGeneration::V1)),
            ignore_do_not_disrupt: false,
        }
    }
}

/// A drain, planned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DrainPlan {
    /// Pods to evict per tier (`namespace/name`, sorted), earliest tier first.
    pub tiers: BTreeMap<Tier, Vec<String>>,
    /// Pods per tier the drain waits for without evicting them: terminating (not stuck) or
    /// held by an active do-not-disrupt. They keep their tier, and so the later ones, waiting.
    pub waiting: BTreeMap<Tier, Vec<String>>,
    /// Pods left alone and why.
    pub skipped: Vec<(String, SkipReason)>,
    /// What blocks the drain (empty: it can proceed).
    pub blockers: Vec<Blocker>,
}

impl DrainPlan {
    /// Whether something blocks the drain.
    pub fn is_blocked(&self) -> bool {
        !self.blockers.is_empty()
    }

    /// The tier drained now — the first one with a pod to evict or to wait for — and its
    /// pods to evict (none while it only waits: a later tier is not started meanwhile).
    pub fn next_tier(&self) -> Option<(Tier, &[String])> {
        let has =
            |m: &BTreeMap<Tier, Vec<String>>, t: &Tier| m.get(t).is_some_and(|p| !p.is_empty());
        let tier = self
            .tiers
            .keys()
            .chain(self.waiting.keys())
            .filter(|t| has(&self.tiers, t) || has(&self.waiting, t))
            .min()?;
        Some((
            *tier,
            self.tiers.get(tier).map(Vec::as_slice).unwrap_or_default(),
        ))
    }

    /// Every pod that will be evicted, in order.
    pub fn evictions(&self) -> Vec<&str> {
        self.tiers
            .values()
            .flat_map(|p| p.iter().map(String::as_str))
            .collect()
    }

    /// Whether only PodDisruptionBudgets block (no do-not-disrupt): a budget at zero frees up
    /// as the pods it covers become healthy again, so this is worth waiting for.
    pub fn only_pdbs_block(&self) -> bool {
        self.is_blocked()
            && self
                .blockers
                .iter()
                .all(|b| matches!(b, Blocker::Pdb { .. } | Blocker::MultiplePdbs { .. }))
    }

    /// One line naming every blocker.
    pub fn explain_blockers(&self) -> String {
        self.blockers
            .iter()
            .map(Blocker::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Whether the pod is critical for eviction ordering.
pub fn is_critical(pod: &Pod) -> bool {
    matches!(
        pod.priority_class_name.as_deref(),
        Some("system-cluster-critical" | "system-node-critical")
    )
}

/// The pods (`namespace/name`, sorted) that carry v1alpha5's `karpenter.sh/do-not-evict` and no
/// `karpenter.sh/do-not-disrupt`: Karpenter v1 reads only the latter (core v1.14.1
/// `pkg/utils/pod/scheduling.go` `IsDoNotDisruptActive`; v0.37 `HasDoNotDisrupt` read both), so
/// such a pod no longer holds its node (thread aws/karpenter-provider-aws#6861).
pub fn unread_do_not_evict<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<String> {
    unread_keys(pods, |p| p.do_not_evict)
}

/// The keys (sorted) of the live pods `unread` picks that have no `karpenter.sh/do-not-disrupt`.
fn unread_keys<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    unread: impl Fn(&Pod) -> bool,
) -> Vec<String> {
    let mut keys: Vec<String> = pods
        .into_iter()
        .filter(|p| unread(p) && p.do_not_disrupt.is_none() && !p.is_terminal())
        .map(Pod::key)
        .collect();
    keys.sort();
    keys
}

/// The pods (`namespace/name`, sorted) that carry Cluster Autoscaler's
/// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"` and no `karpenter.sh/do-not-disrupt`:
/// Karpenter reads no such key (core v1.14.1), so the annotation holds no node from its
/// consolidation, drift or expiration (thread aws/karpenter-provider-aws#6394: a node with such a
/// pod was consolidated; users migrating from Cluster Autoscaler expect it to hold).
pub fn unread_safe_to_evict<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<String> {
    unread_keys(pods, |p| p.ca_not_safe_to_evict)
}

/// Whether a do-not-disrupt value is active at `now`: `"true"`, or (v1.x) a positive Go
/// duration counted from the pod's `status.startTime` — active while the pod is younger, and
/// active when no start time is known ("fail safe"); anything else (`soon`, `0s`, `-5m`) is
/// ignored, as Karpenter does (`core v1.14.1: pkg/utils/pod/scheduling.go
/// IsDoNotDisruptActive`, `pkg/utils/pod/suite_test.go` "IsDoNotDisruptActive";
/// docs/karpenter.md §2.3).
pub fn do_not_disrupt_active(pod: &Pod, now: i64) -> bool {
    let Some(v) = pod.do_not_disrupt.as_deref() else {
        return false;
    };
    if v == "true" {
        return true;
    }
    let Ok(nanos) = parse_go_duration(v) else {
        return false;
    };
    if nanos <= 0 {
        return false;
    }
    match pod.start_time.as_deref().and_then(parse_rfc3339) {
        Some(start) => (i128::from(now) - i128::from(start)) * 1_000_000_000 < i128::from(nanos),
        None => true,
    }
}

/// Why the pod is left alone, if it is.
pub fn skip_reason(
    pod: &Pod,
    deletion_timestamp: Option<i64>,
    now: i64,
    options: &DrainOptions,
) -> Option<SkipReason> {
    if pod.is_terminal() {
        return Some(SkipReason::Finished);
    }
    undrainable(pod, deletion_timestamp, now, options)
}

/// Why the drain never removes the pod, finished or not — Karpenter's `!IsDrainable` (`core
/// v1.14.1: pkg/utils/pod/scheduling.go IsDrainable`: a mirror pod, one stuck terminating, one
/// tolerating the disruption taint), plus, ours only, a DaemonSet pod the drain leaves. A
/// finished pod is drainable there: [`skip_reason`] says `Finished` first, this does not.
pub fn undrainable(
    pod: &Pod,
    deletion_timestamp: Option<i64>,
    now: i64,
    options: &DrainOptions,
) -> Option<SkipReason> {
    if pod.is_mirror() {
        return Some(SkipReason::Mirror);
    }
    if pod.terminating && deletion_timestamp.is_some_and(|t| now - t > STUCK_TERMINATING_SECONDS) {
        return Some(SkipReason::StuckTerminating);
    }
    if pod
        .tolerations
        .iter()
        .any(|t| t.tolerates(&options.disruption_taint))
    {
        return Some(SkipReason::ToleratesDisruptionTaint);
    }
    if pod.is_daemonset_pod() && !options.evict_daemonsets {
        return Some(SkipReason::DaemonSet);
    }
    None
}

/// Plans the drain of `node` holding `pods`. `deletion_timestamps` gives the epoch second of
/// each terminating pod's `deletionTimestamp`, keyed `namespace/name` (the slim pod only knows
/// it is terminating; without a time it is not considered stuck).
pub fn plan_drain(
    node: &Node,
    pods: &[Pod],
    pdbs: &[Pdb],
    deletion_timestamps: &BTreeMap<String, i64>,
    now: i64,
    options: &DrainOptions,
) -> DrainPlan {
    let mut plan = DrainPlan::default();
    if !options.ignore_do_not_disrupt
        && node
            .annotations
            .get(labels::DO_NOT_DISRUPT)
            .is_some_and(|v| v == "true")
    {
        plan.blockers.push(Blocker::NodeDoNotDisrupt {
            node: node.name.clone(),
        });
    }
    let mut sorted: Vec<&Pod> = pods.iter().collect();
    sorted.sort_by_key(|p| p.key());
    for pod in sorted {
        let key = pod.key();
        if let Some(why) = skip_reason(pod, deletion_timestamps.get(&key).copied(), now, options) {
            plan.skipped.push((key, why));
            continue;
        }
        let tier = tier_of(pod);
        if pod.terminating {
            // Already going: nothing to evict, nothing to block on, but its tier waits for it.
            plan.waiting.entry(tier).or_default().push(key);
            continue;
        }
        // do-not-evict (v1alpha5's key, read by v0.31–v0.37, not by v1) holds a drain here
        // whatever the generation: this tool never evicts a pod someone asked it not to.
        let dnd = do_not_disrupt_active(pod, now);
        if !options.ignore_do_not_disrupt && (dnd || pod.do_not_evict) {
            let (annotation, value) = if dnd {
                (
                    labels::DO_NOT_DISRUPT,
                    pod.do_not_disrupt.clone().unwrap_or_default(),
                )
            } else {
                (labels::DO_NOT_EVICT, "true".to_string())
            };
            plan.blockers.push(Blocker::PodDoNotDisrupt {
                pod: key.clone(),
                annotation,
                value,
            });
            // Not evictable: the drain waits for it (docs/karpenter.md §5.5), never evicts it.
            plan.waiting.entry(tier).or_default().push(key);
            continue;
        }
        let covering: Vec<&Pdb> = pdbs.iter().filter(|p| p.covers(pod)).collect();
        match covering.as_slice() {
            [] => {}
            [one] if one.disruptions_allowed <= 0 => plan.blockers.push(Blocker::Pdb {
                pod: key.clone(),
                pdb: one.key(),
            }),
            [_] => {}
            many => {
                let mut names: Vec<String> = many.iter().map(|p| p.key()).collect();
                names.sort();
                plan.blockers.push(Blocker::MultiplePdbs {
                    pod: key.clone(),
                    pdbs: names,
                });
            }
        }
        plan.tiers.entry(tier).or_default().push(key);
    }
    plan
}

/// The pod's eviction tier (docs/karpenter.md §5.5).
pub fn tier_of(pod: &Pod) -> Tier {
    match (is_critical(pod), pod.is_daemonset_pod()) {
        (false, false) => Tier::NonCritical,
        (false, true) => Tier::NonCriticalDaemonSet,
        (true, false) => Tier::Critical,
        (true, true) => Tier::CriticalDaemonSet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod::{Owner, PodFields};
    use crate::model::taints::Toleration;

    const NOW: i64 = 1_719_230_400; // 2024-06-24T12:00:00Z

    fn pod(name: &str) -> Pod {
        Pod::new(
            name,
            "",
            PodFields {
                namespace: "default".into(),
                labels: [("app".to_string(), name.to_string())]
                    .into_iter()
                    .collect(),
                owner: Some(Owner::of("ReplicaSet", format!("{name}-rs"))),
                phase: Some("Running".into()),
                ..PodFields::default()
            },
        )
    }

    fn ds(name: &str) -> Pod {
        let mut p = pod(name);
        p.owner = Some(Owner::of("DaemonSet", name));
        p
    }

    fn critical(mut p: Pod) -> Pod {
        p.priority_class_name = Some("system-node-critical".into());
        p
    }

    fn pdb(name: &str, app: &str, allowed: i32) -> Pdb {
        Pdb {
            namespace: "default".into(),
            name: name.into(),
            selector: Some(LabelSelector::eq(&[("app", app)])),
            disruptions_allowed: allowed,
        }
    }

    fn node() -> Node {
        Node {
            name: "n1".into(),
            ..Node::default()
        }
    }

    /// The drain of node `n1` holding `pods`, no PDB, nothing terminating, at [`NOW`].
    fn planned(pods: &[Pod], options: &DrainOptions) -> DrainPlan {
        plan_drain(&node(), pods, &[], &BTreeMap::new(), NOW, options)
    }

    #[test]
    fn four_tiers_in_karpenters_order_with_daemonsets_when_asked() {
        let pods = vec![
            critical(ds("kube-proxy")),
            critical(pod("coredns")),
            ds("fluentbit"),
            pod("web"),
        ];
        let opts = DrainOptions {
            evict_daemonsets: true,
            ..DrainOptions::default()
        };
        let plan = planned(&pods, &opts);
        assert_eq!(
            plan.evictions(),
            [
                "default/web",
                "default/fluentbit",
                "default/coredns",
                "default/kube-proxy"
            ]
        );
        assert_eq!(
            plan.next_tier(),
            Some((Tier::NonCritical, &["default/web".to_string()][..]))
        );
        // kubectl semantics by default: DaemonSet pods stay.
        let plan = planned(&pods, &DrainOptions::default());
        assert_eq!(plan.evictions(), ["default/web", "default/coredns"]);
        assert_eq!(plan.skipped.len(), 2);
        assert!(plan
            .skipped
            .iter()
            .all(|(_, r)| *r == SkipReason::DaemonSet));
    }

    #[test]
    fn finished_mirror_stuck_and_tolerating_pods_are_skipped() {
        let mut done = pod("done");
        done.phase = Some("Succeeded".into());
        let mut mirror = pod("etcd");
        mirror.owner = Some(Owner::of("Node", "n1"));
        let mut stuck = pod("stuck");
        stuck.terminating = true;
        let mut leaving = pod("leaving");
        leaving.terminating = true;
        let mut tolerant = pod("tolerant");
        tolerant.tolerations = vec![Toleration::exists("karpenter.sh/disrupted", None)];
        let pods = vec![done, mirror, stuck, leaving, tolerant, pod("web")];
        let times: BTreeMap<String, i64> = [
            ("default/stuck".to_string(), NOW - 120),
            ("default/leaving".to_string(), NOW - 10),
        ]
        .into_iter()
        .collect();
        let plan = plan_drain(&node(), &pods, &[], &times, NOW, &DrainOptions::default());
        let skipped: Vec<(String, SkipReason)> = plan.skipped.clone();
        assert_eq!(
            skipped,
            [
                ("default/done".to_string(), SkipReason::Finished),
                ("default/etcd".to_string(), SkipReason::Mirror),
                ("default/stuck".to_string(), SkipReason::StuckTerminating),
                (
                    "default/tolerant".to_string(),
                    SkipReason::ToleratesDisruptionTaint
                ),
            ]
        );
        assert_eq!(
            plan.evictions(),
            ["default/web"],
            "a recently terminating pod is neither"
        );
        assert!(!plan.is_blocked());
    }

    /// `filterVolumeAttachments` (`node/termination/controller.go`) keeps the attachments of
    /// drainable pods only, and `IsDrainable` does not look at the phase: a finished pod that
    /// tolerates the disruption taint (or is a mirror pod) is undrainable, a plain finished one
    /// drainable.
    #[test]
    fn a_finished_pod_is_undrainable_only_for_the_reasons_a_running_one_is() {
        let mut done = pod("done");
        done.phase = Some("Succeeded".into());
        let mut tolerant_done = done.clone();
        tolerant_done.tolerations = vec![Toleration::exists("", None)];
        let mut mirror_done = done.clone();
        mirror_done.owner = Some(Owner::of("Node", "n1"));
        let o = DrainOptions::default();
        assert_eq!(undrainable(&done, None, NOW, &o), None);
        assert_eq!(
            skip_reason(&done, None, NOW, &o),
            Some(SkipReason::Finished)
        );
        assert_eq!(
            undrainable(&tolerant_done, None, NOW, &o),
            Some(SkipReason::ToleratesDisruptionTaint)
        );
        assert_eq!(
            undrainable(&mirror_done, None, NOW, &o),
            Some(SkipReason::Mirror)
        );
    }

    #[test]
    fn pdbs_with_no_disruptions_left_block_and_are_named() {
        let pods = vec![pod("web"), pod("api")];
        let pdbs = vec![pdb("web-pdb", "web", 0), pdb("api-pdb", "api", 1)];
        let plan = plan_drain(
            &node(),
            &pods,
            &pdbs,
            &BTreeMap::new(),
            NOW,
            &DrainOptions::default(),
        );
        assert!(plan.is_blocked());
        assert_eq!(
            plan.explain_blockers(),
            "PodDisruptionBudget default/web-pdb allows 0 disruptions (pod default/web)"
        );
        // Another namespace's PDB does not cover the pod; a nil selector covers nothing.
        let mut other = pdb("web-pdb", "web", 0);
        other.namespace = "prod".into();
        let nil = Pdb {
            selector: None,
            ..pdb("nil", "web", 0)
        };
        let plan = plan_drain(
            &node(),
            &pods,
            &[other, nil],
            &BTreeMap::new(),
            NOW,
            &DrainOptions::default(),
        );
        assert!(!plan.is_blocked());
        // Two PDBs over one pod: the Eviction API refuses, so the drain is blocked.
        let everything = Pdb {
            selector: Some(LabelSelector::default()),
            ..pdb("all", "", 5)
        };
        let plan = plan_drain(
            &node(),
            &pods,
            &[pdb("api-pdb", "api", 1), everything],
            &BTreeMap::new(),
            NOW,
            &DrainOptions::default(),
        );
        assert_eq!(
            plan.blockers,
            [Blocker::MultiplePdbs {
                pod: "default/api".into(),
                pdbs: vec!["default/all".into(), "default/api-pdb".into()]
            }]
        );
    }

    #[test]
    fn do_not_disrupt_blocks_unless_forced_or_expired() {
        let mut pinned = pod("batch");
        pinned.do_not_disrupt = Some("true".into());
        let plan = plan_drain(
            &node(),
            &[pinned.clone()],
            &[],
            &BTreeMap::new(),
            NOW,
            &DrainOptions::default(),
        );
        assert!(plan
            .explain_blockers()
            .starts_with("pod default/batch is annotated karpenter.sh/do-not-disrupt"));
        // Waited for, never evicted: its tier is drained now, with nothing to evict.
        assert_eq!(
            plan.next_tier(),
            Some((Tier::NonCritical, &[][..])),
            "{plan:?}"
        );
        assert!(plan.evictions().is_empty());
        let forced = DrainOptions {
            ignore_do_not_disrupt: true,
            ..DrainOptions::default()
        };
        assert!(!plan_drain(
            &node(),
            &[pinned.clone()],
            &[],
            &BTreeMap::new(),
            NOW,
            &forced
        )
        .is_blocked());
        // A duration counts from the pod's start.
        pinned.do_not_disrupt = Some("5m".into());
        pinned.start_time = Some("2024-06-24T11:58:00Z".into());
        assert!(do_not_disrupt_active(&pinned, NOW));
        pinned.start_time = Some("2024-06-24T11:50:00Z".into());
        assert!(!do_not_disrupt_active(&pinned, NOW));
        pinned.do_not_disrupt = Some("soon".into());
        assert!(
            !do_not_disrupt_active(&pinned, NOW),
            "unparsable values are ignored"
        );
        // The node's own annotation.
        let mut n = node();
        n.annotations
            .insert(labels::DO_NOT_DISRUPT.into(), "true".into());
        let plan = plan_drain(
            &n,
            &[],
            &[],
            &BTreeMap::new(),
            NOW,
            &DrainOptions::default(),
        );
        assert_eq!(
            plan.explain_blockers(),
            "node n1 is annotated karpenter.sh/do-not-disrupt=true"
        );
    }

    /// `core v1.14.1: pkg/controllers/node/termination/suite_test.go` "should evict pods in
    /// order and wait until pods are fully deleted" and "should evict non-critical pods first":
    /// each tier is evicted only once the earlier ones are gone — a pod of an earlier tier
    /// still terminating (evicted, its grace period running) or held by do-not-disrupt keeps
    /// the later tiers waiting. **Differed, fixed (s17)**: a terminating or do-not-disrupt pod
    /// was in no tier, so the next pass evicted the critical pods (coredns) while the
    /// non-critical ones were still shutting down.
    #[test]
    fn termination_evicts_tier_by_tier_and_waits_for_each() {
        let (web, fluentbit, coredns, kube_proxy) = (
            pod("web"),
            ds("fluentbit"),
            critical(pod("coredns")),
            critical(ds("kube-proxy")),
        );
        let opts = DrainOptions {
            evict_daemonsets: true,
            ..DrainOptions::default()
        };
        let next = |pods: &[Pod]| {
            let plan = planned(pods, &opts);
            plan.next_tier().map(|(t, p)| (t, p.to_vec()))
        };
        let going = |mut p: Pod| {
            p.terminating = true;
            p
        };
        let all = [
            web.clone(),
            fluentbit.clone(),
            coredns.clone(),
            kube_proxy.clone(),
        ];
        // (pods on the node now, the tier drained, the pods evicted by this pass)
        let steps: [(Vec<Pod>, Tier, &[&str]); 8] = [
            (all.to_vec(), Tier::NonCritical, &["default/web"]),
            (
                vec![
                    going(web.clone()),
                    fluentbit.clone(),
                    coredns.clone(),
                    kube_proxy.clone(),
                ],
                Tier::NonCritical,
                &[],
            ),
            (
                vec![fluentbit.clone(), coredns.clone(), kube_proxy.clone()],
                Tier::NonCriticalDaemonSet,
                &["default/fluentbit"],
            ),
            (
                vec![going(fluentbit), coredns.clone(), kube_proxy.clone()],
                Tier::NonCriticalDaemonSet,
                &[],
            ),
            (
                vec![coredns.clone(), kube_proxy.clone()],
                Tier::Critical,
                &["default/coredns"],
            ),
            (
                vec![going(coredns), kube_proxy.clone()],
                Tier::Critical,
                &[],
            ),
            (
                vec![kube_proxy.clone()],
                Tier::CriticalDaemonSet,
                &["default/kube-proxy"],
            ),
            (vec![going(kube_proxy)], Tier::CriticalDaemonSet, &[]),
        ];
        for (i, (pods, tier, evicted)) in steps.into_iter().enumerate() {
            let want: Vec<String> = evicted.iter().map(|s| s.to_string()).collect();
            assert_eq!(next(&pods), Some((tier, want)), "step {i}");
        }
        assert_eq!(next(&[]), None, "drained");
        // A pod stuck terminating (more than a minute) is bypassed: it holds no tier
        // ("should bypass pods which are stuck terminating past their grace period").
        let stuck: BTreeMap<String, i64> = [("default/web".to_string(), NOW - 90)]
            .into_iter()
            .collect();
        let plan = plan_drain(
            &node(),
            &[going(web.clone()), critical(pod("coredns"))],
            &[],
            &stuck,
            NOW,
            &opts,
        );
        assert_eq!(
            plan.next_tier(),
            Some((Tier::Critical, &["default/coredns".to_string()][..]))
        );
        // A do-not-disrupt pod is waited for and holds its tier too (IsWaitingEviction
        // includes it; IsEvictable does not).
        let mut pinned = pod("batch");
        pinned.do_not_disrupt = Some("true".into());
        let plan = plan_drain(
            &node(),
            &[pinned, critical(pod("coredns"))],
            &[],
            &BTreeMap::new(),
            NOW,
            &opts,
        );
        assert_eq!(plan.next_tier(), Some((Tier::NonCritical, &[][..])));
        assert_eq!(plan.waiting[&Tier::NonCritical], ["default/batch"]);
    }

    /// `node/termination/suite_test.go` "should not evict pods that tolerate karpenter
    /// disruption taint with equal operator" / "… with exists operator", "should evict pods that
    /// tolerate the node.kubernetes.io/unschedulable taint" (v1: only the disrupted taint
    /// counts; v1alpha5's drain skipped those, its taint being the unschedulable one), "should
    /// delete nodes that have pods without an ownerRef" (evicted like any other).
    #[test]
    fn termination_skips_pods_tolerating_the_disrupted_taint_only() {
        let tolerating = |name: &str, t: Toleration| {
            let mut p = pod(name);
            p.tolerations = vec![t];
            p
        };
        let equal = Toleration::equal(labels::DISRUPTED_TAINT, "", Some(Effect::NoSchedule));
        let mut orphan = pod("orphan");
        orphan.owner = None;
        let pods = vec![
            tolerating("equal", equal),
            tolerating(
                "exists",
                Toleration::exists(labels::DISRUPTED_TAINT, Some(Effect::NoSchedule)),
            ),
            tolerating(
                "cordon",
                Toleration::exists(labels::UNSCHEDULABLE_TAINT, Some(Effect::NoSchedule)),
            ),
            orphan,
        ];
        let plan = planned(&pods, &DrainOptions::default());
        assert_eq!(plan.evictions(), ["default/cordon", "default/orphan"]);
        assert_eq!(
            plan.skipped,
            [
                (
                    "default/equal".to_string(),
                    SkipReason::ToleratesDisruptionTaint
                ),
                (
                    "default/exists".to_string(),
                    SkipReason::ToleratesDisruptionTaint
                ),
            ]
        );
        let v1alpha5 = DrainOptions {
            disruption_taint: disruption_taint(Some(ApiGeneration::V1Alpha5)),
            ..DrainOptions::default()
        };
        let plan = planned(&pods, &v1alpha5);
        assert_eq!(
            plan.evictions(),
            ["default/equal", "default/exists", "default/orphan"]
        );
    }

    #[test]
    fn disruption_taints_per_generation() {
        assert_eq!(
            disruption_taint(Some(ApiGeneration::V1)).to_string(),
            "karpenter.sh/disrupted:NoSchedule"
        );
        assert_eq!(
            disruption_taint(Some(ApiGeneration::V1Beta1)).to_string(),
            "karpenter.sh/disruption=disrupting:NoSchedule"
        );
        assert_eq!(
            disruption_taint(Some(ApiGeneration::V1Alpha5)).to_string(),
            "node.kubernetes.io/unschedulable:NoSchedule"
        );
    }

    /// `core v1.14.1: pkg/utils/pod/suite_test.go` › "IsDoNotDisruptActive" (9 It) and
    /// "IsDisruptable" (5 It), one row each: the annotation, the pod's start relative to
    /// now, whether it is terminal, and whether protection is active. Events are not modelled.
    /// The duration counts from `status.startTime`, not the creation time, and an unknown start
    /// is active ("should fail safe when start time is nil") — both differed before s16.
    #[test]
    fn is_do_not_disrupt_active_and_is_disruptable_as_upstream() {
        let ten_minutes_ago = crate::model::time::format_rfc3339(NOW - 600);
        // (It, annotation, status.startTime, phase, protected)
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
            bool,
        );
        let cases: [Case; 14] = [
            (
                "should return false when no annotation exists",
                None,
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should return true for 'true' annotation",
                Some("true"),
                Some(&ten_minutes_ago),
                None,
                true,
            ),
            (
                "should return false and emit event for invalid duration format",
                Some("invalid-format"),
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should return false and emit event for zero duration",
                Some("0s"),
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should return false and emit event for negative duration",
                Some("-5m"),
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should return true and emit disruptable-at event when duration has not expired",
                Some("15m"),
                Some(&ten_minutes_ago),
                None,
                true,
            ),
            (
                "should return false and emit grace period elapsed event when duration has expired",
                Some("5m"),
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should fail safe when start time is nil",
                Some("5m"),
                None,
                None,
                true,
            ),
            (
                "should not emit disruptable-at event for indefinite protection",
                Some("true"),
                Some(&ten_minutes_ago),
                None,
                true,
            ),
            // IsDisruptable = !IsActive || !IsDoNotDisruptActive.
            (
                "should be disruptable for active pod without annotation",
                None,
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should not be disruptable for active pod with 'true' annotation",
                Some("true"),
                Some(&ten_minutes_ago),
                None,
                true,
            ),
            // Upstream It: "should be disruptable for active pod with expired duration and not emit invalid annotation event" (the verdict; events are not modelled).
            (
                "should be disruptable for active pod with expired duration",
                Some("5m"),
                Some(&ten_minutes_ago),
                None,
                false,
            ),
            (
                "should not be disruptable for active pod with non-expired duration",
                Some("15m"),
                Some(&ten_minutes_ago),
                None,
                true,
            ),
            (
                "should be disruptable for terminal pod even with annotation",
                Some("true"),
                Some(&ten_minutes_ago),
                Some("Succeeded"),
                false,
            ),
        ];
        for (it, annotation, started, phase, protected) in cases {
            let mut p = pod("p");
            p.do_not_disrupt = annotation.map(str::to_string);
            p.start_time = started.map(str::to_string);
            p.phase = phase.map(str::to_string);
            // A terminal pod is never protected (`IsDisruptable`: `!IsActive(pod) || …`).
            let active = !p.is_terminal() && !p.terminating;
            assert_eq!(active && do_not_disrupt_active(&p, NOW), protected, "{it}");
        }
        // Sub-second durations are positive (Go's `time.ParseDuration`): a pod started this
        // second is still protected by `500ms`.
        let mut p = pod("p");
        p.do_not_disrupt = Some("500ms".into());
        p.start_time = Some(crate::model::time::format_rfc3339(NOW));
        assert!(do_not_disrupt_active(&p, NOW));
        p.start_time = Some(crate::model::time::format_rfc3339(NOW - 1));
        assert!(!do_not_disrupt_active(&p, NOW));
    }
}
