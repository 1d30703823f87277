//! What a node offers and asks, written from Kubernetes/Karpenter semantics for the checker:
//! allocatable, the DaemonSets a new node gets, labels of types and pools, volume zones.

use std::collections::{BTreeMap, BTreeSet};

use super::labels::{from_requirement, pod_fits_labels, untolerated, Label};
use crate::model::instance_type::InstanceType;
use crate::model::labels::ZONE;
use crate::model::pod::Pod;
use crate::model::requirements::Requirement;
use crate::scheduling::{Input, PoolInput};

/// Allocatable: capacity less kube-reserved, system-reserved and eviction thresholds.
pub(super) fn allocatable(it: &InstanceType) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = it
        .capacity
        .iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for o in [
        &it.overhead.kube_reserved,
        &it.overhead.system_reserved,
        &it.overhead.eviction_threshold,
    ] {
        for (k, v) in o.iter() {
            *out.entry(k.to_string()).or_default() -= v;
        }
    }
    out
}

pub(super) fn sum<'p>(pods: impl IntoIterator<Item = &'p Pod>) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for p in pods {
        for (k, v) in p.requests.iter() {
            *out.entry(k.to_string()).or_default() += v;
        }
    }
    out
}

/// The resources `need` asks beyond `have` (a resource `have` lacks counts as zero).
pub(super) fn over(need: &BTreeMap<String, i64>, have: &BTreeMap<String, i64>) -> Vec<String> {
    need.iter()
        .filter(|(k, v)| **v > have.get(*k).copied().unwrap_or(0))
        .map(|(k, v)| format!("{k} {v} > {}", have.get(k).copied().unwrap_or(0)))
        .collect()
}

/// The DaemonSets Karpenter reserves room for on a new node of `pool` as type `it`
/// (`scheduler.go` `isDaemonPodCompatible`: tolerates the template's taints, its strict
/// requirements compatible with the template's and the type's).
pub(super) fn daemons_for<'a>(
    input: &'a Input,
    pool: &PoolInput,
    it: &InstanceType,
) -> Vec<&'a Pod> {
    let fixed = type_labels(it);
    input
        .daemonsets
        .iter()
        .filter(|d| untolerated(d, &pool.pool.taints).is_none())
        .filter(|d| {
            let label = |k: &str| match fixed.get(k).or(pool.pool.labels.get(k)) {
                Some(v) => Label::Is(v.clone()),
                None => pool_label(pool, k),
            };
            pod_fits_labels(d, &label, true)
        })
        .collect()
}

/// What a fresh node of `pool` may carry under a key neither the type nor the labels fix.
pub(super) fn pool_label(pool: &PoolInput, key: &str) -> Label {
    let r = pool.pool.requirements.iter().filter(|r| r.key == key).fold(
        None,
        |acc: Option<Requirement>, r| {
            let r = Requirement::from_selector(r);
            Some(match acc {
                Some(a) => a.intersection(&r),
                None => r,
            })
        },
    );
    from_requirement(r.as_ref())
}

/// A type's single-valued labels (instance type, arch, os, instance-cpu).
pub(super) fn type_labels(it: &InstanceType) -> BTreeMap<String, String> {
    it.requirements
        .iter()
        .filter(|r| !r.is_complement() && r.values().len() == 1)
        .map(|r| {
            (
                r.key.clone(),
                r.values().iter().next().cloned().unwrap_or_default(),
            )
        })
        .collect()
}

/// A Requirement admitting a concrete value (set semantics, bounds included).
pub(super) fn admits(r: &Requirement, v: &str) -> bool {
    let listed = r.values().contains(v);
    let bounded = r.gte().is_some() || r.lte().is_some();
    let within = !bounded
        || v.parse::<i64>()
            .is_ok_and(|n| r.gte().is_none_or(|g| n >= g) && r.lte().is_none_or(|l| n <= l));
    within && (listed != r.is_complement())
}

/// The zones a pod's claims allow (bound volumes' node affinity, the class's allowed
/// topologies); `None` when unconstrained.
pub(super) fn volume_zones(input: &Input, p: &Pod) -> Option<BTreeSet<String>> {
    let storage = input.storage.as_ref()?;
    let mut zones: Option<BTreeSet<String>> = None;
    for v in &p.volumes {
        let claim = storage
            .claims
            .get(&(p.namespace.clone(), v.claim_name(&p.name)))?;
        let terms = match claim
            .volume_name
            .as_ref()
            .and_then(|n| storage.volumes.get(n))
        {
            Some(pv) => pv.node_affinity.clone(),
            None => storage
                .classes
                .get(claim.storage_class.as_deref()?)?
                .allowed_topologies
                .clone(),
        };
        for r in terms.iter().flatten().filter(|r| r.key == ZONE) {
            let set: BTreeSet<String> = r.values.iter().cloned().collect();
            zones = Some(match zones {
                Some(z) => z.intersection(&set).cloned().collect(),
                None => set,
            });
        }
    }
    zones
}
