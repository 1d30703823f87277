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

use serde_json::Value;

use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use go::GoValue;
use karpenter::Kubelet;

/// The spec of an object as an owned JSON object, or why there is none.
fn spec_object(raw: Option<&Value>, who: &str) -> Result<serde_json::Map<String, Value>, String> {
    match raw {
        Some(Value::Object(o)) => Ok(o.clone()),
        _ => Err(format!("{who}: its spec was not kept")),
    }
}

/// The NodePool's `karpenter.sh/nodepool-hash` at `version`, as the controller would write it.
pub fn node_pool_hash(pool: &NodePool, version: &str) -> Result<String, String> {
    let who = format!("{} {}", pool.kind(), pool.name);
    match (pool.generation, version) {
        (Some(ApiGeneration::V1), "v3") => {
            let spec = spec_object(pool.raw_spec.as_ref(), &who)?;
            let mut template = match spec.get("template") {
                Some(Value::Object(t)) => t.clone(),
                _ => serde_json::Map::new(),
            };
            karpenter::default_v1_template(&mut template);
            let value =
                karpenter::v1_node_claim_template(&template).map_err(|e| format!("{who}: {e}"))?;
            Ok(value.hash().to_string())
        }
        (generation, _) => Err(format!(
            "{who}: computing nodepool-hash version {version} of a {} object is not supported",
            generation.map_or("unknown".to_string(), |g| g.to_string())
        )),
    }
}

/// The node class's `karpenter.k8s.aws/ec2nodeclass-hash` at `version`. Version `v5` mixes in
/// the cluster's CA bundle (base64, as the controller read it); without it the hash cannot be
/// computed.
pub fn node_class_hash(
    class: &NodeClass,
    version: &str,
    ca_bundle: Option<&str>,
) -> Result<String, String> {
    let who = format!("{} {}", class.kind, class.name);
    let (kubelet, ca) = match (class.generation, version) {
        (Some(ApiGeneration::V1), "v3") => (Kubelet::Ignored, None),
        (Some(ApiGeneration::V1), "v4") => (Kubelet::Hashed, None),
        (Some(ApiGeneration::V1), "v5") => match ca_bundle {
            Some(ca) => (Kubelet::Hashed, Some(ca)),
            None => {
                return Err(format!(
                    "{who}: ec2nodeclass-hash version v5 includes the cluster CA bundle, which is not known here"
                ))
            }
        },
        (generation, _) => {
            return Err(format!(
                "{who}: computing ec2nodeclass-hash version {version} of a {} object is not supported",
                generation.map_or("unknown".to_string(), |g| g.to_string())
            ))
        }
    };
    let mut spec = spec_object(class.raw_spec.as_ref(), &who)?;
    karpenter::default_v1_class(&mut spec);
    let spec_value =
        karpenter::v1_ec2nodeclass_spec(&spec, kubelet).map_err(|e| format!("{who}: {e}"))?;
    let mut parts = vec![spec_value, GoValue::Str(karpenter::v1_ami_family(&spec))];
    if let Some(ca) = ca {
        parts.push(GoValue::str(ca));
    }
    Ok(GoValue::Set(parts).hash().to_string())
}
