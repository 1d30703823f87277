//! Karpenter's static drift hashes, computed here rather than read from annotations nobody
//! refreshes once the controller is scaled away (docs/karpenter.md §4.3, docs/drift.md).
//!
//! `karpenter.sh/nodepool-hash` is `hashstructure.Hash(nodePool.Spec.Template, …)` and
//! `karpenter.k8s.aws/ec2nodeclass-hash` is `hashstructure.Hash([]any{spec, AMIFamily(),
//! caBundle}, …)`; each is only comparable with a value of the same hash version, so every
//! function takes the version the NodeClaim recorded and refuses versions it does not know
//! (a wrong "drifted" is worse than "not checked").
//!
//! Versions computed, and what they were checked against (tests in `tests.rs`):
//! * NodePool `v3` (`karpenter.sh/v1`, Karpenter v1.0–v1.14): a value read from a real EKS
//!   cluster (Auto Mode `general-purpose` NodePool).
//! * EC2NodeClass `v5` (provider v1.12–v1.14, with the cluster CA bundle) and `v4` (v1.1–v1.11):
//!   the static values of the provider's `ec2nodeclass_hash_test.go` at v1.14.1 and v1.11.3.
//! * EC2NodeClass `v3` (provider v1.0.x): the same structs with `kubelet` ignored, pinned by
//!   v1.0.8's `ec2nodeclass_hash_test.go`.
//!
//! Everything else (v1beta1 NodePool `v1`/`v2`, v1beta1 EC2NodeClass `v1`/`v2`, v1alpha5
//! Provisioner/AWSNodeTemplate hashes) is refused with a reason.

pub mod go;
mod karpenter;
mod units;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_nodepool_fields;

use serde_json::Value;

use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use go::GoValue;
use karpenter::ClassLayout;

/// The spec of an object as an owned JSON object, or why there is none.
fn spec_object(raw: Option<&Value>, who: &str) -> Result<serde_json::Map<String, Value>, String> {
    match raw {
        Some(Value::Object(o)) => Ok(o.clone()),
        _ => Err(format!("{who}: its spec was not kept")),
    }
}

fn unsupported(what: &str, version: &str, generation: Option<ApiGeneration>) -> String {
    format!(
        "computing {what} version {version} of a {} object is not supported",
        generation.map_or("unknown".to_string(), |g| g.to_string())
    )
}

/// The NodePool's `karpenter.sh/nodepool-hash` at `version`, as the controller would write it.
pub fn node_pool_hash(pool: &NodePool, version: &str) -> Result<String, String> {
    let who = format!("{} {}", pool.kind(), pool.name);
    let v1beta1_v1 = match (pool.generation, version) {
        (Some(ApiGeneration::V1), "v3") => None,
        (Some(ApiGeneration::V1Beta1), "v2") => Some(false),
        (Some(ApiGeneration::V1Beta1), "v1") => Some(true),
        (generation, _) => {
            return Err(format!(
                "{who}: {}",
                unsupported("nodepool-hash", version, generation)
            ))
        }
    };
    let spec = spec_object(pool.raw_spec.as_ref(), &who)?;
    let mut template = match spec.get("template") {
        Some(Value::Object(t)) => t.clone(),
        _ => serde_json::Map::new(),
    };
    let value = match v1beta1_v1 {
        None => {
            karpenter::default_v1_template(&mut template);
            karpenter::v1_node_claim_template(&template)
        }
        Some(early) => karpenter::v1beta1_node_claim_template(&template, early),
    }
    .map_err(|e| format!("{who}: {e}"))?;
    Ok(value.hash().to_string())
}

/// The CA bundle's share of a `v5` ec2nodeclass-hash. `Hash([]any{spec, AMIFamily(), caBundle})`
/// hashes a slice as a set — the XOR of its elements' hashes — so the bundle contributes one
/// term, the same for every class of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaTerm(u64);

impl CaTerm {
    /// The term of a bundle (base64 of the CA certificates, as the controller reads them).
    pub fn of_bundle(bundle: &str) -> CaTerm {
        CaTerm(GoValue::str(bundle).hash())
    }
}

/// The CA term of a cluster, and how it was confirmed: the bundle read from the cluster
/// counts only once some class's own `v5` annotation equals its spec hashed with it; without
/// a bundle, two classes whose annotations imply the same term confirm it (each annotation is
/// `spec ⊕ family ⊕ ca`, so an unedited class gives `ca` away). Anything less is refused: a
/// wrong term would call every node of every class drifted.
pub fn confirm_ca_term(classes: &[NodeClass], bundle: Option<&str>) -> Result<CaTerm, String> {
    let implied: Vec<(&NodeClass, u64)> = classes
        .iter()
        .filter(|c| {
            c.annotations
                .get(labels::NODECLASS_HASH_VERSION)
                .map(String::as_str)
                == Some("v5")
        })
        .filter_map(|c| {
            let annotated: u64 = c.annotations.get(labels::NODECLASS_HASH)?.parse().ok()?;
            let without_ca = class_hash_without_ca(c, "v5").ok()?;
            Some((c, annotated ^ without_ca))
        })
        .collect();
    if let Some(bundle) = bundle {
        let term = CaTerm::of_bundle(bundle);
        return match implied.iter().find(|(_, t)| *t == term.0) {
            Some(_) => Ok(term),
            None => Err(
                "ec2nodeclass-hash v5 mixes in the cluster CA bundle, and no EC2NodeClass's own v5 annotation confirms the bundle read from kube-root-ca.crt (edited classes, or a CLUSTER_CA_BUNDLE setting)"
                    .into(),
            ),
        };
    }
    for (i, (_, a)) in implied.iter().enumerate() {
        if implied[i + 1..].iter().any(|(_, b)| a == b) {
            return Ok(CaTerm(*a));
        }
    }
    Err("ec2nodeclass-hash v5 mixes in the cluster CA bundle, which is not known offline (two unedited EC2NodeClasses with v5 annotations would reveal it)".into())
}

/// The hash without the CA term, of the class's spec after the CRD's defaults.
fn class_hash_without_ca(class: &NodeClass, version: &str) -> Result<u64, String> {
    let who = format!("{} {}", class.kind, class.name);
    let mut spec = spec_object(class.raw_spec.as_ref(), &who)?;
    let v1 = class.generation == Some(ApiGeneration::V1);
    karpenter::default_class(&mut spec, if v1 { 1 } else { 2 });
    spec_hash_without_ca(&spec, class.generation, version).map_err(|e| format!("{who}: {e}"))
}

/// The hash without the CA term of a spec taken as is: v1 hashes `[]any{spec, AMIFamily()}`
/// (a set: the XOR of the two), v1beta1 the spec alone.
fn spec_hash_without_ca(
    spec: &serde_json::Map<String, Value>,
    generation: Option<ApiGeneration>,
    version: &str,
) -> Result<u64, String> {
    let layout = match (generation, version) {
        (Some(ApiGeneration::V1), "v3") => ClassLayout::V1WithoutKubelet,
        (Some(ApiGeneration::V1), "v4" | "v5") => ClassLayout::V1,
        (Some(ApiGeneration::V1Beta1), "v2") => ClassLayout::V1Beta1,
        (Some(ApiGeneration::V1Beta1), "v1") => ClassLayout::V1Beta1Early,
        (generation, _) => return Err(unsupported("ec2nodeclass-hash", version, generation)),
    };
    let spec_value = karpenter::ec2nodeclass_spec(spec, layout)?;
    Ok(if generation == Some(ApiGeneration::V1) {
        GoValue::Set(vec![
            spec_value,
            GoValue::Str(karpenter::v1_ami_family(spec)),
        ])
        .hash()
    } else {
        spec_value.hash()
    })
}

/// The node class's `karpenter.k8s.aws/ec2nodeclass-hash` at `version`, as the controller
/// would write it. Version `v5` needs the cluster's CA term ([`confirm_ca_term`]).
pub fn node_class_hash(
    class: &NodeClass,
    version: &str,
    ca: Result<CaTerm, &str>,
) -> Result<String, String> {
    let without_ca = class_hash_without_ca(class, version)?;
    if version != "v5" {
        return Ok(without_ca.to_string());
    }
    let term = ca.map_err(|why| format!("{} {}: {why}", class.kind, class.name))?;
    Ok((without_ca ^ term.0).to_string())
}
