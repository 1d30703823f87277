//! Static drift (`NodePoolDrifted`, `NodeClassDrift`): the NodeClaim's hash annotation against
//! the pool's or class's hash *now*, computed from its spec ([`super::hash`]) — not read from
//! the object's own annotation, which only a running controller refreshes (docs/drift.md).
//!
//! Karpenter's rules are kept: a NodeClaim without both hash annotations is never statically
//! drifted, and hashes of different versions are never compared (the controller rewrites the
//! NodeClaim's version when its algorithm changes). Where the hash cannot be computed (a version
//! this tool does not know, a v5 class without a confirmed CA term) the object's annotation is
//! compared, as Karpenter would, and the check is listed in `notChecked`.

use std::collections::BTreeMap;

use super::hash::{self, CaTerm};
use super::reasons::{change, not_checked, Finding, Outcome};
use super::{DriftReason, DriftSnapshot, ManagedNode};
use crate::model::labels;
use crate::model::nodepool::{NodeClass, NodePool};

/// One of the two static hashes.
struct Static<'a> {
    reason: DriftReason,
    hash_key: &'static str,
    version_key: &'static str,
    /// `NodePool default`, `EC2NodeClass default`.
    owner: String,
    /// `template`, `spec`.
    what: &'static str,
    annotations: &'a BTreeMap<String, String>,
}

/// `NodePoolDrifted` from `karpenter.sh/nodepool-hash`.
pub(super) fn node_pool_drift(mn: &ManagedNode, pool: &NodePool) -> Outcome {
    let s = Static {
        reason: DriftReason::NodePoolDrifted,
        hash_key: labels::NODEPOOL_HASH,
        version_key: labels::NODEPOOL_HASH_VERSION,
        owner: format!("{} {}", pool.kind(), pool.name),
        what: "template",
        annotations: &pool.annotations,
    };
    static_drift(mn, &s, |version| hash::node_pool_hash(pool, version))
}

/// `NodeClassDrift` from `karpenter.k8s.aws/ec2nodeclass-hash`.
pub(super) fn node_class_drift(
    mn: &ManagedNode,
    class: &NodeClass,
    ca: &Result<CaTerm, String>,
) -> Outcome {
    let s = Static {
        reason: DriftReason::NodeClassDrift,
        hash_key: labels::NODECLASS_HASH,
        version_key: labels::NODECLASS_HASH_VERSION,
        owner: format!("{} {}", class.kind, class.name),
        what: "spec",
        annotations: &class.annotations,
    };
    static_drift(mn, &s, |version| {
        hash::node_class_hash(class, version, ca.as_ref().copied().map_err(String::as_str))
    })
}

fn static_drift(
    mn: &ManagedNode,
    s: &Static<'_>,
    compute: impl FnOnce(&str) -> Result<String, String>,
) -> Outcome {
    let (Some(node_hash), Some(version)) =
        (mn.annotation(s.hash_key), mn.annotation(s.version_key))
    else {
        return Outcome::Clean;
    };
    let owner_hash = s.annotations.get(s.hash_key);
    let owner_version = s.annotations.get(s.version_key);
    if let Some(ov) = owner_version.filter(|ov| *ov != version) {
        return not_checked(
            format!(
                "{}: hash versions differ ({version} on the node, {ov} on {}): not comparable",
                s.hash_key, s.owner
            ),
            false,
        );
    }
    let who = if mn.node_claim.is_some() {
        "NodeClaim"
    } else {
        "node"
    };
    let drifted = |now: &str, detail: String| {
        Outcome::Drifted(Finding::new(
            s.reason,
            detail,
            vec![change(
                s.hash_key,
                Some(node_hash.to_string()),
                Some(now.to_string()),
            )],
        ))
    };
    match compute(version) {
        Ok(now) if now == node_hash => Outcome::Clean,
        Ok(now) => {
            let stale = match owner_hash {
                Some(oh) if oh != &now => format!(
                    "; its own annotation still says {oh}: no controller has refreshed it"
                ),
                _ => String::new(),
            };
            drifted(
                &now,
                format!(
                    "{} {} changed since launch: {} {node_hash} ({who}) → {now} (computed from its spec, hash version {version}){stale}",
                    s.owner, s.what, s.hash_key
                ),
            )
        }
        Err(why) => match (owner_hash, owner_version) {
            (Some(oh), Some(_)) if oh != node_hash => drifted(
                oh,
                format!(
                    "{} {} changed since launch: {} {node_hash} ({who}) ≠ {oh} ({}), hash version {version}",
                    s.owner, s.what, s.hash_key, s.owner
                ),
            ),
            (Some(_), Some(_)) => not_checked(
                format!(
                    "{}: the current hash was not computed ({why}); the annotation on {} matches, but only a running controller keeps it current",
                    s.reason, s.owner
                ),
                false,
            ),
            _ => not_checked(format!("{}: {why}", s.reason), false),
        },
    }
}

/// One note per pool or class whose own hash annotation no longer matches its spec: the
/// controller that would refresh it is not running (or the object was edited offline).
pub(super) fn stale_annotation_notes(
    snap: &DriftSnapshot,
    ca: &Result<CaTerm, String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let mut note = |owner: String, key: &str, annotated: &str, now: Result<String, String>| {
        if let Some(now) = now.ok().filter(|now| now != annotated) {
            notes.push(format!(
                "{owner}: its {key} annotation ({annotated}) is stale — its spec hashes to {now} now; no Karpenter controller has refreshed it"
            ));
        }
    };
    for pool in &snap.node_pools {
        if let (Some(h), Some(v)) = (
            pool.annotations.get(labels::NODEPOOL_HASH),
            pool.annotations.get(labels::NODEPOOL_HASH_VERSION),
        ) {
            let owner = format!("{} {}", pool.kind(), pool.name);
            note(
                owner,
                labels::NODEPOOL_HASH,
                h,
                hash::node_pool_hash(pool, v),
            );
        }
    }
    for class in &snap.node_classes {
        if let (Some(h), Some(v)) = (
            class.annotations.get(labels::NODECLASS_HASH),
            class.annotations.get(labels::NODECLASS_HASH_VERSION),
        ) {
            let owner = format!("{} {}", class.kind, class.name);
            let ca = ca.as_ref().copied().map_err(String::as_str);
            note(
                owner,
                labels::NODECLASS_HASH,
                h,
                hash::node_class_hash(class, v, ca),
            );
        }
    }
    notes
}
