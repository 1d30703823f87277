//! What the solver derives from a pod before placing it — requests, requirements, tolerations —
//! and Karpenter's relaxation of preferences (`preferences.go`) when a pod cannot be placed.

use std::sync::Arc;

use crate::model::go_sort;
use crate::model::labels;
use crate::model::pod::{NodeSelectorTerm, Pod, WhenUnsatisfiable};
use crate::model::requirements::{Operator, Requirements};
use crate::model::taints::{Effect, Toleration, TolerationOperator};

use super::reason::Reason;

/// A pod as the solver sees it at one point of relaxation. The source [`Pod`] is never
/// mutated; relaxation edits this state, which names the parts still enforced by index and
/// shares its requirement sets (`Arc`), so the replicas of one template share one copy.
#[derive(Debug, Clone)]
pub(crate) struct PodState {
    /// Index into the solver's pod list.
    pub index: usize,
    /// The first required node-affinity term still tried (relaxation drops the first while
    /// more than one remain).
    pub first_required_term: usize,
    /// Remaining preferred node-affinity term indices, heaviest first.
    pub preferred_terms: Vec<usize>,
    /// Remaining preferred pod-affinity term indices (into the pod's list), heaviest first.
    pub preferred_affinity: Vec<usize>,
    /// Remaining preferred pod-anti-affinity term indices, heaviest first.
    pub preferred_anti_affinity: Vec<usize>,
    /// Topology spread constraints still enforced (indices into the pod's list).
    pub spreads: Vec<usize>,
    /// Tolerations, plus a PreferNoSchedule wildcard once relaxed that far.
    pub tolerations: Arc<Vec<Toleration>>,
    /// Requirements with the heaviest preference treated as required.
    pub requirements: Arc<Requirements>,
    /// Requirements without preferences (node selector + first required term).
    pub strict_requirements: Arc<Requirements>,
}

fn term_requirements(term: &NodeSelectorTerm) -> Requirements {
    Requirements::from_selectors(term)
}

/// Indices of `weights`, heaviest first; the stable sort keeps manifest order among equals
/// (Karpenter's relaxation: `sort.SliceStable` in core v1.14.1 `preferences.go`).
fn by_weight(weights: impl Iterator<Item = i32>) -> Vec<usize> {
    let weights: Vec<i32> = weights.collect();
    let mut idx: Vec<usize> = (0..weights.len()).collect();
    idx.sort_by_key(|&i| -weights[i]);
    idx
}

/// Preferred node-affinity terms, heaviest first, as Go's `sort.Slice` leaves them: core v1.14.1
/// `pkg/scheduling/requirements.go` `newPodRequirements` sorts the pod's own list in place
/// before taking its first term, and relaxation's later stable sort keeps that order. Manifest
/// order among equals up to 12 terms; beyond, Go's pdqsort order.
fn node_terms_by_weight(weights: impl Iterator<Item = i32>) -> Vec<usize> {
    let weights: Vec<i32> = weights.collect();
    let mut idx: Vec<usize> = (0..weights.len()).collect();
    go_sort::sort_slice(&mut idx, |&a, &b| weights[a] > weights[b]);
    idx
}

impl PodState {
    /// The initial state: everything enforced.
    pub fn new(index: usize, pod: &Pod) -> Self {
        let mut state = PodState {
            index,
            first_required_term: 0,
            preferred_terms: node_terms_by_weight(
                pod.preferred_node_affinity.iter().map(|w| w.weight),
            ),
            preferred_affinity: by_weight(pod.preferred_pod_affinity.iter().map(|w| w.weight)),
            preferred_anti_affinity: by_weight(
                pod.preferred_pod_anti_affinity.iter().map(|w| w.weight),
            ),
            spreads: (0..pod.topology_spread.len()).collect(),
            tolerations: Arc::new(pod.tolerations.clone()),
            requirements: Arc::default(),
            strict_requirements: Arc::default(),
        };
        state.recompute(pod);
        state
    }

    /// The initial state of `pod`, a replica sharing its fields with the pod `self` is the
    /// initial state of: the same, but for the index.
    pub fn for_replica(&self, index: usize) -> Self {
        PodState {
            index,
            ..self.clone()
        }
    }

    /// Rebuilds the requirement sets after a relaxation step.
    fn recompute(&mut self, pod: &Pod) {
        let mut strict = Requirements::from_labels(pod.node_selector.iter());
        if let Some(first) = pod.required_node_affinity.get(self.first_required_term) {
            strict.add_all(&term_requirements(first));
        }
        let strict = Arc::new(strict);
        self.requirements = match self.preferred_terms.first() {
            Some(&heaviest) => {
                let mut relaxed = (*strict).clone();
                relaxed.add_all(&term_requirements(
                    &pod.preferred_node_affinity[heaviest].term,
                ));
                Arc::new(relaxed)
            }
            None => Arc::clone(&strict),
        };
        self.strict_requirements = strict;
    }

    /// Drops one preference, in Karpenter's order; returns what was relaxed, or `None` when
    /// nothing is left to relax. `pools_prefer_no_schedule`: whether any pool has a
    /// PreferNoSchedule taint, which is only tolerated then.
    pub fn relax(&mut self, pod: &Pod, pools_prefer_no_schedule: bool) -> Option<String> {
        let what = if pod.required_node_affinity.len() > self.first_required_term + 1 {
            self.first_required_term += 1;
            "dropped the first required node-affinity term".to_string()
        } else if !self.preferred_affinity.is_empty() {
            self.preferred_affinity.remove(0);
            "dropped a preferred pod-affinity term".to_string()
        } else if !self.preferred_anti_affinity.is_empty() {
            self.preferred_anti_affinity.remove(0);
            "dropped a preferred pod-anti-affinity term".to_string()
        } else if !self.preferred_terms.is_empty() {
            self.preferred_terms.remove(0);
            "dropped a preferred node-affinity term".to_string()
        } else if let Some(pos) = self.spreads.iter().position(|&i| {
            pod.topology_spread[i].when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway
        }) {
            // Go removes it by moving the last constraint into its place (core v1.14.1
            // `preferences.go` `removeTopologySpreadScheduleAnyway`), which decides the next one.
            self.spreads.swap_remove(pos);
            "dropped a ScheduleAnyway topology spread".to_string()
        } else if pools_prefer_no_schedule
            && !self.tolerations.iter().any(|t| {
                t.operator == TolerationOperator::Exists
                    && t.key.is_empty()
                    && t.effect == Some(Effect::PreferNoSchedule)
            })
        {
            Arc::make_mut(&mut self.tolerations)
                .push(Toleration::exists("", Some(Effect::PreferNoSchedule)));
            "tolerated PreferNoSchedule taints".to_string()
        } else {
            return None;
        };
        self.recompute(pod);
        Some(what)
    }
}

/// Why a pod is refused before any placement is tried (Karpenter's pending-pod validation,
/// docs/karpenter.md §6.1), or `None` if it can be scheduled.
///
/// `provisioners`: the input has v1alpha5 Provisioners, planned as Karpenter v0.31 did, where
/// `karpenter.sh/provisioner-name` is a well-known label a pod may select (`core v0.31.4:
/// pkg/apis/v1alpha5/labels.go` `WellKnownLabels`) and requiring it `DoesNotExist` opts the pod
/// out (`provisioner.go` `validateProvisionerNameCanExist`); v1.14.1 knows only
/// `karpenter.sh/nodepool` and refuses the old key as restricted.
///
/// A bound pod — on a node being deleted, or a consolidation candidate's — is not validated:
/// `GetPendingPods` validates the pending pods only, and the others join the scheduler as they
/// are (`provisioner.go` `Schedule`, `disruption/helpers.go` `SimulateScheduling`); only the
/// scheduler's own refusals apply to them.
pub(crate) fn validation_error(pod: &Pod, provisioners: bool) -> Option<Reason> {
    if let Some(why) = pod.unsupported() {
        return Some(Reason::Unsupported(why.to_string()));
    }
    if pod.node_name.is_some() {
        return pod
            .dra
            .then(|| Reason::Unsupported(DRA_REFUSAL.to_string()));
    }
    // `validateAffinity`: a required term Karpenter's `ValidateRequirement` refuses.
    if let Some(why) = pod.invalid_requirement() {
        return Some(Reason::InvalidRequirement(why.to_string()));
    }
    // Opting out is read off the requirements the scheduler starts from — the node selector, the
    // heaviest preference and the first required term, intersected (core v1.14.1
    // `provisioner.go` `validateKarpenterManagedLabelCanExist` over `NewPodRequirements`): a
    // preferred `DoesNotExist` opts out too, a later OR term does not.
    let merged = first_requirements(pod);
    for key in [labels::NODEPOOL, labels::PROVISIONER_NAME] {
        let owner = key == labels::NODEPOOL || provisioners;
        if owner
            && merged
                .get_ref(key)
                .is_some_and(|r| r.operator() == Operator::DoesNotExist)
        {
            return Some(Reason::OptsOutOfKarpenter {
                key: key.to_string(),
                preferred_weight: opt_out_preference(pod, key),
            });
        }
    }
    // `validateNodeSelector` / `validateAffinity`: `ValidateRequirement` on the node selector
    // and every required term (`nodeclaim_validation.go`).
    let check_key = |key: &str, op: Operator, values: &[String]| -> Option<Reason> {
        let key = labels::normalize_key(key).to_string();
        let owner = key == labels::NODEPOOL || (provisioners && key == labels::PROVISIONER_NAME);
        if key == labels::HOSTNAME {
            return Some(Reason::SelectsSpecificNode { key });
        }
        if !owner {
            // `IsRestrictedLabel`: the `karpenter.sh` domain and, with the AWS provider,
            // `karpenter.k8s.aws`, subdomains included, unless the key is well known.
            if let Some(why) = labels::restricted_reason(&key) {
                return Some(Reason::RestrictedLabel { key, why });
            }
        }
        // `validateWellKnownValues` (v1 only): an `In` naming none of the key's known values.
        let known = labels::known_values(&key).filter(|_| !provisioners);
        if let Some(known) = known.filter(|_| op == Operator::In) {
            if !values.iter().any(|v| known.contains(&v.as_str())) {
                return Some(Reason::InvalidRequirement(format!(
                    "no valid values found in [{}] for {key}, expected one of: {}",
                    values.join(", "),
                    known.join(", ")
                )));
            }
        }
        None
    };
    for (k, v) in &pod.node_selector {
        if let Some(e) = check_key(k, Operator::In, std::slice::from_ref(v)) {
            return Some(e);
        }
    }
    for term in &pod.required_node_affinity {
        for r in term {
            if let Some(e) = check_key(&r.key, r.operator, &r.values) {
                return Some(e);
            }
            if let Err(e) = r.validate() {
                return Some(Reason::InvalidRequirement(e));
            }
        }
    }
    // After the provisioner's validation, the scheduler's first check (`core v1.14.1:
    // scheduler.go add`, a `DRAError` under the default `--ignore-dra-requests=true`; 6a9532040
    // "fix: Don't schedule a pod with DRA requirements (#2384)").
    if pod.dra {
        return Some(Reason::Unsupported(DRA_REFUSAL.to_string()));
    }
    None
}

/// The requirements a pod is first tried with: its node selector, its heaviest preferred term
/// (in Go's order) and its first required term (`NewPodRequirements`).
fn first_requirements(pod: &Pod) -> Requirements {
    let mut merged = Requirements::from_labels(pod.node_selector.iter());
    let weights = pod.preferred_node_affinity.iter().map(|w| w.weight);
    if let Some(&heaviest) = node_terms_by_weight(weights).first() {
        merged.add_all(&term_requirements(
            &pod.preferred_node_affinity[heaviest].term,
        ));
    }
    if let Some(first) = pod.required_node_affinity.first() {
        merged.add_all(&term_requirements(first));
    }
    merged
}

/// The weight of the heaviest preferred node-affinity term when it alone makes the pod opt out
/// of `key` (neither the node selector nor the first required term says `DoesNotExist`): the
/// reporter of kubernetes-sigs/karpenter#1334 asked why a *soft* affinity made Karpenter ignore
/// the pod (core v1.14.1 `scheduling/requirements.go` `newPodRequirements` adds the heaviest
/// preference, and `provisioner.go` `validateKarpenterManagedLabelCanExist` reads those).
fn opt_out_preference(pod: &Pod, key: &str) -> Option<i32> {
    let mut required = Requirements::from_labels(pod.node_selector.iter());
    if let Some(first) = pod.required_node_affinity.first() {
        required.add_all(&term_requirements(first));
    }
    let opts_out = |r: &Requirements| {
        r.get_ref(key)
            .is_some_and(|q| q.operator() == Operator::DoesNotExist)
    };
    if opts_out(&required) {
        return None;
    }
    let weights = pod.preferred_node_affinity.iter().map(|w| w.weight);
    let heaviest = *node_terms_by_weight(weights).first()?;
    Some(pod.preferred_node_affinity[heaviest].weight)
}

/// Karpenter's message for a pod refused for its Dynamic Resource Allocation claims.
pub(crate) const DRA_REFUSAL: &str =
    "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter";

/// Requirements of a pod's required node affinity as ORed terms plus its node selector — the
/// node filter a topology spread uses to decide which nodes count (`nodeAffinityPolicy: Honor`).
pub(crate) fn node_filter_terms(pod: &Pod) -> Vec<Requirements> {
    let base = Requirements::from_labels(pod.node_selector.iter());
    if pod.required_node_affinity.is_empty() {
        return vec![base];
    }
    pod.required_node_affinity
        .iter()
        .map(|t| {
            let mut r = base.clone();
            r.add_all(&term_requirements(t));
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::pod::{PodFields, Weighted};
    use crate::model::requirements::NodeSelectorRequirement;
    use crate::testing::BETA_LABEL_KEYS;

    /// Fourteen preferred node-affinity terms of weights 1, 2, 1, 2, …: Karpenter tries them in
    /// the order Go's `sort.Slice` leaves the pod's list (core v1.14.1 `pkg/scheduling/
    /// requirements.go` `newPodRequirements`), printed by Go 1.19 from
    /// `tests/fixtures/go-sort/preferred-terms/main.go`; a stable sort would start 1, 3, 5.
    #[test]
    fn more_than_twelve_preferred_terms_are_tried_in_gos_order() {
        let pod = Pod::new(
            "p",
            "u",
            PodFields {
                preferred_node_affinity: (0..14)
                    .map(|i| Weighted {
                        weight: 1 + i % 2,
                        term: vec![NodeSelectorRequirement::new(
                            "team",
                            Operator::In,
                            &[&format!("t{i}")],
                        )],
                    })
                    .collect(),
                ..PodFields::default()
            },
        );
        let state = PodState::new(0, &pod);
        assert_eq!(
            state.preferred_terms,
            [9, 7, 13, 3, 11, 5, 1, 6, 10, 0, 8, 4, 12, 2]
        );
        assert!(state.requirements.get_ref("team").unwrap().has("t9"));
    }

    /// `core: pkg/scheduling/requirement_test.go` › "NewRequirements" › "should normalize
    /// labels", the pod path (`NewPodRequirements`: node selector, the first required term and
    /// the heaviest preference, all on beta keys) — and the strict set leaves the preference out.
    #[test]
    fn pod_requirements_normalise_labels() {
        let beta = BETA_LABEL_KEYS.map(|(beta, _)| beta);
        let term: NodeSelectorTerm = beta
            .iter()
            .map(|k| NodeSelectorRequirement::new(k, Operator::In, &["test"]))
            .collect();
        let pod = Pod::new(
            "p",
            "u",
            PodFields {
                node_selector: beta
                    .iter()
                    .map(|k| (k.to_string(), "test".to_string()))
                    .collect::<BTreeMap<_, _>>(),
                required_node_affinity: vec![term.clone()],
                preferred_node_affinity: vec![Weighted { weight: 1, term }],
                ..PodFields::default()
            },
        );
        let state = PodState::new(0, &pod);
        for reqs in [&state.requirements, &state.strict_requirements] {
            let keys: Vec<&str> = reqs.iter().map(|r| r.key.as_str()).collect();
            let mut want = BETA_LABEL_KEYS.map(|(_, stable)| stable);
            want.sort();
            assert_eq!(keys, want);
        }
        // A preference on another key is only in the relaxed set.
        let mut pod = pod;
        pod.preferred_node_affinity[0]
            .term
            .push(NodeSelectorRequirement::new("team", Operator::In, &["a"]));
        let state = PodState::new(0, &pod);
        assert!(state.requirements.has("team"));
        assert!(!state.strict_requirements.has("team"));
    }
}
