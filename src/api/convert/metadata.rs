//! What a converted object keeps of its input: `metadata` without the annotations Karpenter
//! and kubectl write, and a note for every `spec` field this tool does not know.

use super::super::yaml::Value;
use serde::Serialize;

use super::super::meta::{ObjectMeta, StringMap};
use super::super::validate::key_path;
use super::Notes;

/// Annotations Karpenter or kubectl write on stored objects; they are recomputed for v1 and
/// would only mislead in a manifest.
const MANAGED_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "karpenter.sh/provisioner-hash",
    "karpenter.k8s.aws/nodetemplate-hash",
    "karpenter.sh/nodepool-hash",
    "karpenter.sh/nodepool-hash-version",
    "karpenter.k8s.aws/ec2nodeclass-hash",
    "karpenter.k8s.aws/ec2nodeclass-hash-version",
];
const MANAGED_ANNOTATION_PREFIXES: &[&str] = &[
    "compatibility.karpenter.sh/",
    "compatibility.karpenter.k8s.aws/",
];

/// The object's metadata as a manifest keeps it: name, labels, annotations minus the ones
/// Karpenter and kubectl write (noted).
pub(super) fn clean_metadata(m: &ObjectMeta, notes: &mut Notes) -> ObjectMeta {
    let mut dropped = Vec::new();
    let annotations: Option<StringMap> = m.annotations.as_ref().map(|a| {
        a.iter()
            .filter(|(k, _)| {
                let managed = MANAGED_ANNOTATIONS.contains(&k.as_str())
                    || MANAGED_ANNOTATION_PREFIXES.iter().any(|p| k.starts_with(p));
                if managed {
                    dropped.push(k.to_string());
                }
                !managed
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    });
    if !dropped.is_empty() {
        notes.add(
            "metadata.annotations",
            format!(
                "dropped {}: Karpenter and kubectl write them on stored objects and recompute them for v1",
                dropped.join(", ")
            ),
        );
    }
    ObjectMeta {
        name: m.name.clone(),
        labels: m.labels.clone().filter(|l| !l.is_empty()),
        annotations: annotations.filter(|a| !a.is_empty()),
        ..ObjectMeta::default()
    }
}

/// Notes every field of the raw `spec` that the typed object did not keep (a field this tool
/// does not know, perhaps from a newer or patched release): it would otherwise vanish silently.
pub(super) fn unknown_fields<T: Serialize>(
    notes: &mut Notes,
    raw: Option<&Value>,
    typed: &T,
    what: &str,
) {
    let Some(raw_spec) = raw.and_then(|r| r.get("spec")) else {
        return;
    };
    let typed = super::super::yaml::to_value(typed);
    let mut missing = Vec::new();
    missing_keys(raw_spec, &typed, "spec", &mut missing);
    for path in missing {
        notes.add(
            path,
            format!(
                "dropped: not a field of {what} that this tool knows, so it was not carried over"
            ),
        );
    }
}

fn missing_keys(raw: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (raw, typed) {
        (Value::Mapping(r), Value::Mapping(_)) => {
            for (k, v) in r {
                if v.is_null() {
                    continue;
                }
                let sub = key_path(path, k);
                match typed.get(k) {
                    Some(tv) => missing_keys(v, tv, &sub, out),
                    None => out.push(sub),
                }
            }
        }
        (Value::Sequence(r), Value::Sequence(t)) => {
            for (i, (rv, tv)) in r.iter().zip(t).enumerate() {
                missing_keys(rv, tv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    #[test]
    fn unknown_fields_are_noted_not_silently_lost() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n  blockDeviceMappings:\n    - deviceName: /dev/xvdb\n      virtualName: ephemeral0\n  somethingNew: true\n");
        let d = doc(&c, "EC2NodeClass", "t");
        note(d, "spec.somethingNew", "not carried over");
        note(
            d,
            "spec.blockDeviceMappings[0].virtualName",
            "not carried over",
        );
    }
}
