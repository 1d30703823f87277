//! A pod's volumes as scheduling sees them: whether Karpenter considers the pod at all (its
//! claims must be resolvable), the topology its volumes allow (alternatives, ORed), and which
//! CSI volumes it would attach (counted against an existing node's attach limits).
//!
//! Mirrors `karpenter v1.14.1: pkg/controllers/provisioning/scheduling/volumetopology.go`
//! (`ValidatePersistentVolumeClaims`, `GetRequirements`, `mergeVolumeRequirementAlternatives`),
//! `pkg/scheduling/volumeusage.go` (`GetVolumes`, `ResolveDriver`, `VolumeUsage.ExceedsLimits`)
//! and `pkg/utils/volume/volume.go` (`GetPersistentVolumeClaim`: an ephemeral volume's claim is
//! `<pod>-<volume>`).
//!
//! Since v1.9 the volume requirements are kept apart from the pod's own requirements (they
//! narrow the node, not the pod's affinity, so topology spread counts as without them); since
//! v1.13 each OR term of a PersistentVolume's node affinity or a StorageClass's
//! `allowedTopologies` is an alternative of its own (up to v1.12 only the first PV term was
//! used and all `allowedTopologies` expressions were ANDed into the pod's required node affinity).

use std::collections::{BTreeMap, BTreeSet};

use crate::model::labels;
use crate::model::pod::{ClaimSource, Pod, PodVolume};
use crate::model::requirements::Requirements;
use crate::model::storage::{
    csi_driver_of, PersistentVolumeClaim, Storage, VolumeBindingMode, BIND_COMPLETED_ANNOTATION,
};

use super::reason::{Reason, VolumeProblem};

/// What scheduling needs of a pod's volumes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PodVolumes {
    /// Topology alternatives (ORed); empty when the volumes do not constrain the node.
    pub alternatives: Vec<Requirements>,
    /// CSI driver → claims (`namespace/name`) the pod attaches through it.
    pub usage: BTreeMap<String, BTreeSet<String>>,
    /// When no combination of the claims' topologies intersects (Karpenter then keeps the
    /// incompatible product, e.g. `zone DoesNotExist`): each constrained claim (`namespace/name`)
    /// with its own alternatives, for the reason. Empty otherwise.
    pub apart: Vec<(String, Vec<Requirements>)>,
}

impl PodVolumes {
    /// Nothing to check.
    pub fn is_empty(&self) -> bool {
        self.alternatives.is_empty() && self.usage.is_empty()
    }
}

/// The claim behind `volume` of `pod`: the one in the cluster (or manifests), else — from
/// manifests only — the one its template would create.
fn claim_of(
    pod: &Pod,
    volume: &PodVolume,
    storage: &Storage,
) -> Result<PersistentVolumeClaim, Reason> {
    let name = volume.claim_name(&pod.name);
    if let Some(c) = storage.claims.get(&(pod.namespace.clone(), name.clone())) {
        return Ok(c.clone());
    }
    let template_class = match &volume.claim {
        ClaimSource::Named(_) => None,
        ClaimSource::Ephemeral { storage_class } | ClaimSource::StatefulSet { storage_class } => {
            Some(storage_class)
        }
    };
    match template_class {
        Some(class) if storage.claims_from_templates => Ok(PersistentVolumeClaim {
            namespace: pod.namespace.clone(),
            name,
            storage_class: class
                .clone()
                .or_else(|| storage.default_class().map(|c| c.name.clone())),
            ..Default::default()
        }),
        _ => Err(problem(
            volume,
            &pod.namespace,
            &name,
            VolumeProblem::NotFound,
            format!("PersistentVolumeClaim {}/{name} not found", pod.namespace),
        )),
    }
}

fn problem(
    volume: &PodVolume,
    namespace: &str,
    claim: &str,
    kind: VolumeProblem,
    why: String,
) -> Reason {
    Reason::Volume {
        volume: volume.name.clone(),
        claim: format!("{namespace}/{claim}"),
        problem: kind,
        why,
    }
}

/// Karpenter's `ValidatePersistentVolumeClaims` for one claim: a pod failing it is not
/// considered at all ("ignoring pod") until the claim changes.
fn validate(
    volume: &PodVolume,
    c: &PersistentVolumeClaim,
    storage: &Storage,
) -> Result<(), Reason> {
    let fail = |kind, why: String| Err(problem(volume, &c.namespace, &c.name, kind, why));
    let pvc = format!("PersistentVolumeClaim {}/{}", c.namespace, c.name);
    if c.deleting {
        return fail(VolumeProblem::NotReady, format!("{pvc} is being deleted"));
    }
    if c.lost {
        return fail(
            VolumeProblem::NotReady,
            format!("{pvc} is Lost (bound to a PersistentVolume that no longer exists)"),
        );
    }
    if let Some(pv) = &c.volume_name {
        match storage.volumes.get(pv) {
            None => {
                return fail(
                    VolumeProblem::NotFound,
                    format!("PersistentVolume {pv} (bound to {pvc}) not found"),
                )
            }
            Some(v) if v.deleting => {
                return fail(
                    VolumeProblem::NotReady,
                    format!("PersistentVolume {pv} (bound to {pvc}) is being deleted"),
                )
            }
            Some(_) => {}
        }
        if !c.bind_completed {
            return fail(
                VolumeProblem::NotReady,
                format!(
                    "{pvc} names PersistentVolume {pv} but is not bound yet (no {BIND_COMPLETED_ANNOTATION} annotation)"
                ),
            );
        }
        return Ok(());
    }
    let class = c.storage_class.as_deref().unwrap_or("");
    if class.is_empty() {
        return fail(
            VolumeProblem::NotReady,
            format!("{pvc} is unbound and names no StorageClass (and there is no default class)"),
        );
    }
    let Some(sc) = storage.classes.get(class) else {
        return fail(
            VolumeProblem::NotFound,
            format!("StorageClass {class} (of unbound {pvc}) not found"),
        );
    };
    if sc.binding_mode == VolumeBindingMode::Immediate {
        return fail(
            VolumeProblem::NotReady,
            format!(
                "{pvc} is unbound and StorageClass {class} binds Immediately: it must be bound first"
            ),
        );
    }
    Ok(())
}

/// `getPersistentVolumeRequirements` / `getStorageClassRequirements`: the alternatives one claim
/// allows (empty: unconstrained).
fn claim_alternatives(c: &PersistentVolumeClaim, storage: &Storage) -> Vec<Requirements> {
    if let Some(pv) = c.volume_name.as_ref().and_then(|n| storage.volumes.get(n)) {
        let mut out = Vec::new();
        for term in &pv.node_affinity {
            let kept: Vec<_> = term
                .iter()
                .filter(|r| !(pv.local && labels::normalize_key(&r.key) == labels::HOSTNAME))
                .collect();
            if pv.local && !term.is_empty() && kept.is_empty() {
                // A local volume's hostname is not a constraint for a new node: the term
                // becomes an unconstrained alternative.
                out.push(Requirements::new());
                continue;
            }
            if !kept.is_empty() {
                out.push(Requirements::from_selectors(kept));
            }
        }
        return out;
    }
    let Some(sc) = c
        .storage_class
        .as_deref()
        .filter(|s| !s.is_empty())
        .and_then(|s| storage.classes.get(s))
    else {
        return Vec::new();
    };
    sc.allowed_topologies
        .iter()
        .filter(|t| !t.is_empty())
        .map(Requirements::from_selectors)
        .collect()
}

/// `ResolveDriver`: the CSI driver that attaches the claim's volume, if any.
fn driver_of(c: &PersistentVolumeClaim, storage: &Storage) -> Option<String> {
    if let Some(pv) = &c.volume_name {
        return storage.volumes.get(pv).and_then(|v| v.csi_driver.clone());
    }
    let class = c.storage_class.as_deref().filter(|s| !s.is_empty())?;
    let sc = storage.classes.get(class)?;
    Some(csi_driver_of(&sc.provisioner).to_string())
}

/// `mergeVolumeRequirementAlternatives`: the cross product of the alternatives so far and one
/// volume's, keeping only compatible branches — unless none is, then all of them (Karpenter
/// keeps the old merged result rather than treating the pod as unschedulable here).
/// The second value: whether no branch was compatible (the volumes cannot share a node).
fn merge(so_far: Vec<Requirements>, volume: &[Requirements]) -> (Vec<Requirements>, bool) {
    let product = |only_compatible: bool| {
        let mut out = Vec::new();
        for a in &so_far {
            for b in volume {
                if only_compatible && a.intersects(b).is_err() {
                    continue;
                }
                let mut m = a.clone();
                m.add_all(b);
                out.push(m);
            }
        }
        out
    };
    let compatible = product(true);
    if compatible.is_empty() {
        (product(false), true)
    } else {
        (compatible, false)
    }
}

/// Merges every claim's alternatives into `out` (`mergeVolumeRequirementAlternatives` claim by
/// claim), keeping each claim's own alternatives in `out.apart` when they cannot all intersect.
fn merge_claims(out: &mut PodVolumes, per_claim: Vec<(String, Vec<Requirements>)>) {
    if per_claim.is_empty() {
        return;
    }
    let mut alternatives = vec![Requirements::new()];
    let mut apart = false;
    for (_, volume) in &per_claim {
        let (merged, fell_back) = merge(alternatives, volume);
        alternatives = merged;
        apart |= fell_back;
    }
    out.alternatives = alternatives;
    if apart {
        out.apart = per_claim;
    }
}

/// Resolves a pending pod's volumes: `Err` when Karpenter would ignore the pod (a claim, its
/// volume or its class missing or not usable yet).
pub(crate) fn resolve(pod: &Pod, storage: &Storage) -> Result<PodVolumes, Reason> {
    let mut out = PodVolumes::default();
    if pod.volumes.is_empty() {
        return Ok(out);
    }
    // Validation first, for every volume (Karpenter validates before it reads topology).
    let mut claims = Vec::with_capacity(pod.volumes.len());
    for v in &pod.volumes {
        let c = claim_of(pod, v, storage)?;
        validate(v, &c, storage)?;
        claims.push(c);
    }
    let per_claim: Vec<_> = claims
        .iter()
        .map(|c| (c.key(), claim_alternatives(c, storage)))
        .filter(|(_, volume)| !volume.is_empty())
        .collect();
    merge_claims(&mut out, per_claim);
    for c in &claims {
        if let Some(driver) = driver_of(c, storage) {
            out.usage.entry(driver).or_default().insert(c.key());
        }
    }
    Ok(out)
}

/// A pod's volumes as Karpenter's disruption simulations read them: no claim validation, and a
/// pod whose claim, volume or class cannot be looked up is placed without volume requirements
/// (`core v1.14.1: pkg/controllers/provisioning/provisioner.go` `getVolumeTopologyRequirements`
/// logs the error and leaves the pod unconstrained; `disruption/helpers.go` `SimulateScheduling`
/// then solves every pod). `None`: nothing to check.
pub(crate) fn for_disruption(pod: &Pod, storage: &Storage) -> Option<PodVolumes> {
    let claims = storage.claims_of(pod)?;
    let mut out = PodVolumes::default();
    let mut per_claim = Vec::new();
    for c in &claims {
        let volume = claim_alternatives(c, storage);
        if !volume.is_empty() {
            per_claim.push((c.key(), volume));
        }
        if let Some(driver) = driver_of(c, storage) {
            out.usage.entry(driver).or_default().insert(c.key());
        }
    }
    merge_claims(&mut out, per_claim);
    (!out.is_empty()).then_some(out)
}

/// The CSI volumes of a pod already bound to a node (`GetVolumes` for cluster state: claims that
/// cannot be resolved are skipped, not errors).
pub(crate) fn bound_usage(pod: &Pod, storage: &Storage) -> BTreeMap<String, BTreeSet<String>> {
    let mut usage: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for v in &pod.volumes {
        let name = v.claim_name(&pod.name);
        let Some(c) = storage.claims.get(&(pod.namespace.clone(), name)) else {
            continue;
        };
        if let Some(driver) = driver_of(c, storage) {
            usage.entry(driver).or_default().insert(c.key());
        }
    }
    usage
}

/// The first driver whose attach limit the node would exceed with `extra` (`ExceedsLimits`).
pub(crate) fn exceeded_limit<'a>(
    used: &BTreeMap<String, BTreeSet<String>>,
    extra: &'a BTreeMap<String, BTreeSet<String>>,
    limits: &BTreeMap<String, u32>,
) -> Option<&'a str> {
    extra.iter().find_map(|(driver, claims)| {
        let limit = *limits.get(driver)?;
        let now = used.get(driver);
        let count = now.map_or(0, BTreeSet::len)
            + claims
                .iter()
                .filter(|c| now.is_none_or(|n| !n.contains(*c)))
                .count();
        (count > limit as usize).then_some(driver.as_str())
    })
}

/// Volume requirements as text, for reasons: `zone In [a] or zone In [b]`.
///
/// Every key is written, `kubernetes.io/hostname` included: a requirements' `Display` leaves the
/// hostname out (a NodeClaim's is a placeholder), but a volume's hostname is a real node's name —
/// the node a non-local volume pins the pod to (thread aws/karpenter-provider-aws#6540).
pub(crate) fn describe(alternatives: &[Requirements]) -> String {
    let parts: Vec<String> = alternatives
        .iter()
        .map(|r| {
            if r.is_empty() {
                "anywhere".to_string()
            } else {
                let each: Vec<String> = r.iter().map(ToString::to_string).collect();
                each.join(", ")
            }
        })
        .collect();
    parts.join(" or ")
}

/// Volumes that cannot share a node, as text for reasons: "the pod's volumes cannot share a
/// node: default/data-0 needs zone In [a]; default/data-1 needs zone In [b] (together: zone
/// DoesNotExist)" — Karpenter's log shows only the intersection (thread
/// aws/karpenter-provider-aws#4192: "`topology.kubernetes.io/zone DoesNotExist` what does this
/// mean?").
pub(crate) fn describe_apart(
    apart: &[(String, Vec<Requirements>)],
    together: &[Requirements],
) -> String {
    let each: Vec<String> = apart
        .iter()
        .map(|(claim, alternatives)| {
            format!(
                "PersistentVolumeClaim {claim} needs {}",
                describe(alternatives)
            )
        })
        .collect();
    format!(
        "the pod's volumes cannot share a node: {} (together: {})",
        each.join("; "),
        describe(together)
    )
}
