//! The launch record: a compact snapshot of the NodePool template a node was launched from,
//! stored as one EC2 tag ([`labels::TEMPLATE_RECORD_TAG`]) in the same CreateFleet call that launches the
//! instance (docs/spec.md §5.3), so drift can later say **which** template fields changed
//! (docs/spec.md §4 "compare against the template snapshot recorded at launch").
//!
//! Why digests and not values: an EC2 tag value holds at most 256 characters, and a template's
//! labels, taints and kubelet settings do not fit. The record keeps the node class name in clear
//! and an 8-hex-digit digest per field. The old *values* are recovered from the node itself:
//! template labels, annotations and taints are copied onto the Node at registration
//! (docs/karpenter.md §6.8), so the subset of the node's own labels whose digest equals the recorded
//! one is the old template ([`recover_subset`]).
//!
//! Which fields count: those Karpenter's `nodepool-hash` covers (docs/karpenter.md §4.3: template
//! metadata labels/annotations, taints, startupTaints, nodeClassRef, kubelet (pre-v1),
//! expireAfter and terminationGracePeriod (v1)). Requirements are recorded too but, as in
//! Karpenter (`hash:"ignore"`), a requirements change is judged by `RequirementsDrifted`, not
//! here.
//!
//! Format (version 1): `v1;c=<class>;l=<d>;a=<d>;t=<d>;s=<d>;r=<d>;k=<d>;e=<d>;g=<d>` where `<d>`
//! is a digest, or `-` for an empty/absent field. Unknown keys are ignored when parsing, so later
//! versions can add fields. A class name that would push the value past 256 characters is stored
//! as `c#=<digest>`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, KubeletConfig, NodePool};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::taints::Taint;

/// EC2's limit on a tag value.
pub const MAX_TAG_VALUE: usize = 256;

/// The record format this build writes.
pub const RECORD_VERSION: u32 = 1;

/// More candidates than this and the subset search for old values (2^n digests) is skipped.
const MAX_RECOVERY_CANDIDATES: usize = 16;

/// A record that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not a record at all.
    #[error("launch record {0:?} does not start with a version (v1;…)")]
    NoVersion(String),
    /// Written by a newer tool.
    #[error("launch record version {0} is newer than this tool understands ({RECORD_VERSION})")]
    UnsupportedVersion(u32),
}

/// The NodePool template at launch, as digests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TemplateRecord {
    /// Format version.
    pub version: u32,
    /// `nodeClassRef.name` (or `#<digest>` when too long to store).
    pub node_class: Option<String>,
    /// Template labels.
    pub labels: Option<String>,
    /// Template annotations.
    pub annotations: Option<String>,
    /// Taints.
    pub taints: Option<String>,
    /// Startup taints.
    pub startup_taints: Option<String>,
    /// Requirements (recorded, not judged here: see the module docs).
    pub requirements: Option<String>,
    /// Pool-level kubelet (v1alpha5/v1beta1; v1 keeps kubelet on the class).
    pub kubelet: Option<String>,
    /// `expireAfter` (v1 template field).
    pub expire_after: Option<String>,
    /// `terminationGracePeriod` (v1 template field).
    pub termination_grace_period: Option<String>,
}

/// One template field that differs between the record and the pool now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateChange {
    /// `nodeClassRef`, `labels`, `annotations`, `taints`, `startupTaints`, `kubelet`,
    /// `expireAfter`, `terminationGracePeriod`.
    pub field: &'static str,
    /// People's text, e.g. `labels +team=a`.
    pub summary: String,
}

impl fmt::Display for TemplateChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

/// FNV-1a 64 over the parts (NUL-separated), folded to 32 bits: stable across builds and
/// platforms, short enough for a tag.
fn fnv32(parts: &[String]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{:08x}", (h ^ (h >> 32)) as u32)
}

/// The digest of a set of canonical strings (order-independent); `None` for the empty set.
pub fn digest_set(items: &[String]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let mut sorted = items.to_vec();
    sorted.sort();
    sorted.dedup();
    Some(fnv32(&sorted))
}

/// `k=v` per entry, sorted.
pub fn canonical_map(map: &BTreeMap<String, String>) -> Vec<String> {
    map.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// `key=value:Effect` per taint, sorted.
pub fn canonical_taints(taints: &[Taint]) -> Vec<String> {
    let mut out: Vec<String> = taints.iter().map(Taint::to_string).collect();
    out.sort();
    out
}

fn canonical_requirements(reqs: &[NodeSelectorRequirement]) -> Vec<String> {
    reqs.iter()
        .map(|r| {
            let mut values = r.values.clone();
            values.sort();
            let min = r
                .min_values
                .map(|m| format!(" min={m}"))
                .unwrap_or_default();
            format!(
                "{} {} [{}]{min}",
                labels::normalize_key(&r.key),
                r.operator,
                values.join(",")
            )
        })
        .collect()
}

fn canonical_kubelet(k: &KubeletConfig) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = k.max_pods {
        out.push(format!("maxPods={v}"));
    }
    if let Some(v) = k.pods_per_core {
        out.push(format!("podsPerCore={v}"));
    }
    for (name, r) in [
        ("systemReserved", &k.system_reserved),
        ("kubeReserved", &k.kube_reserved),
    ] {
        for (res, milli) in r.iter() {
            out.push(format!("{name}.{res}={milli}"));
        }
    }
    for (name, m) in [
        ("evictionHard", &k.eviction_hard),
        ("evictionSoft", &k.eviction_soft),
    ] {
        for (key, v) in m {
            out.push(format!("{name}.{key}={v}"));
        }
    }
    if !k.cluster_dns.is_empty() {
        out.push(format!("clusterDNS={}", k.cluster_dns.join(",")));
    }
    out
}

fn single(value: Option<&String>) -> Vec<String> {
    value.map(|v| vec![v.clone()]).unwrap_or_default()
}

/// Whether the field is part of this generation's template hash (docs/karpenter.md §4.3).
fn v1_only_fields(pool: &NodePool) -> bool {
    pool.generation == Some(ApiGeneration::V1)
}

impl TemplateRecord {
    /// The record of a pool's template now.
    pub fn of_pool(pool: &NodePool) -> TemplateRecord {
        let v1 = v1_only_fields(pool);
        TemplateRecord {
            version: RECORD_VERSION,
            node_class: pool.node_class_ref.as_ref().map(|r| r.name.clone()),
            labels: digest_set(&canonical_map(&pool.labels)),
            annotations: digest_set(&canonical_map(&pool.template_annotations)),
            taints: digest_set(&canonical_taints(&pool.taints)),
            startup_taints: digest_set(&canonical_taints(&pool.startup_taints)),
            requirements: digest_set(&canonical_requirements(&pool.requirements)),
            kubelet: pool
                .kubelet
                .as_ref()
                .and_then(|k| digest_set(&canonical_kubelet(k))),
            expire_after: if v1 {
                digest_set(&single(pool.expire_after.as_ref()))
            } else {
                None
            },
            termination_grace_period: if v1 {
                digest_set(&single(pool.termination_grace_period.as_ref()))
            } else {
                None
            },
        }
    }

    /// The tag value (≤ [`MAX_TAG_VALUE`] characters).
    pub fn encode(&self) -> String {
        let d = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let rest = format!(
            "l={};a={};t={};s={};r={};k={};e={};g={}",
            d(&self.labels),
            d(&self.annotations),
            d(&self.taints),
            d(&self.startup_taints),
            d(&self.requirements),
            d(&self.kubelet),
            d(&self.expire_after),
            d(&self.termination_grace_period),
        );
        let class = match &self.node_class {
            None => "c=-".to_string(),
            Some(name) => {
                let clear = format!("c={name}");
                // Separators inside a name would break parsing; long names would break the limit.
                let fits = format!("v{};{clear};{rest}", self.version).len() <= MAX_TAG_VALUE;
                if fits && !name.contains(';') && !name.starts_with('#') {
                    clear
                } else {
                    format!("c#={}", fnv32(std::slice::from_ref(name)))
                }
            }
        };
        format!("v{};{class};{rest}", self.version)
    }

    /// Reads a tag value.
    pub fn parse(text: &str) -> Result<TemplateRecord, RecordError> {
        let mut parts = text.trim().split(';');
        let version = parts
            .next()
            .and_then(|v| v.strip_prefix('v'))
            .and_then(|v| v.parse::<u32>().ok())
            .ok_or_else(|| RecordError::NoVersion(text.chars().take(40).collect()))?;
        if version > RECORD_VERSION {
            return Err(RecordError::UnsupportedVersion(version));
        }
        let mut r = TemplateRecord {
            version,
            ..TemplateRecord::default()
        };
        for part in parts {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            let value = (value != "-" && !value.is_empty()).then(|| value.to_string());
            match key {
                "c" => r.node_class = value,
                "c#" => r.node_class = value.map(|v| format!("#{v}")),
                "l" => r.labels = value,
                "a" => r.annotations = value,
                "t" => r.taints = value,
                "s" => r.startup_taints = value,
                "r" => r.requirements = value,
                "k" => r.kubelet = value,
                "e" => r.expire_after = value,
                "g" => r.termination_grace_period = value,
                _ => {}
            }
        }
        Ok(r)
    }

    /// Whether a recorded class (clear or digested) names `name`.
    fn class_matches(&self, name: Option<&str>) -> bool {
        match (&self.node_class, name) {
            (None, None) => true,
            (Some(rec), Some(now)) => match rec.strip_prefix('#') {
                Some(d) => fnv32(&[now.to_string()]) == d,
                None => rec == now,
            },
            _ => false,
        }
    }

    /// The template fields that changed since launch, with the old values recovered from the
    /// node where possible. `node_labels`/`node_annotations`/`node_taints` are the node's (and
    /// its NodeClaim's) own, which the template was copied onto at registration.
    pub fn diff(
        &self,
        pool: &NodePool,
        node_labels: &BTreeMap<String, String>,
        node_annotations: &BTreeMap<String, String>,
        node_taints: &[Taint],
    ) -> Vec<TemplateChange> {
        let now = TemplateRecord::of_pool(pool);
        let mut out = Vec::new();
        let now_class = pool.node_class_ref.as_ref().map(|r| r.name.as_str());
        if !self.class_matches(now_class) {
            let old = match &self.node_class {
                Some(c) if c.starts_with('#') => "(a class with a long name)".to_string(),
                Some(c) => c.clone(),
                None => "(none)".to_string(),
            };
            out.push(TemplateChange {
                field: "nodeClassRef",
                summary: format!("nodeClassRef {old} → {}", now_class.unwrap_or("(none)")),
            });
        }
        if self.labels != now.labels {
            let candidates = canonical_map(&eligible(node_labels, label_candidate));
            out.push(TemplateChange {
                field: "labels",
                summary: map_change("labels", &self.labels, &candidates, &pool.labels),
            });
        }
        if self.annotations != now.annotations {
            let candidates = canonical_map(&eligible(node_annotations, annotation_candidate));
            out.push(TemplateChange {
                field: "annotations",
                summary: map_change(
                    "annotations",
                    &self.annotations,
                    &candidates,
                    &pool.template_annotations,
                ),
            });
        }
        if self.taints != now.taints {
            let candidates: Vec<String> = canonical_taints(node_taints)
                .into_iter()
                .filter(|t| taint_candidate(t))
                .collect();
            let new = canonical_taints(&pool.taints);
            let summary = match recover_subset(self.taints.as_deref(), &candidates) {
                Some(old) => format!("taints {}", set_diff(&old, &new)),
                None => format!(
                    "taints changed (now: {})",
                    if new.is_empty() {
                        "none".to_string()
                    } else {
                        new.join(", ")
                    }
                ),
            };
            out.push(TemplateChange {
                field: "taints",
                summary,
            });
        }
        let simple: [(&'static str, &Option<String>, &Option<String>, String); 4] = [
            (
                "startupTaints",
                &self.startup_taints,
                &now.startup_taints,
                canonical_taints(&pool.startup_taints).join(", "),
            ),
            (
                "kubelet",
                &self.kubelet,
                &now.kubelet,
                pool.kubelet
                    .as_ref()
                    .map(|k| canonical_kubelet(k).join(", "))
                    .unwrap_or_default(),
            ),
            (
                "expireAfter",
                &self.expire_after,
                &now.expire_after,
                pool.expire_after.clone().unwrap_or_default(),
            ),
            (
                "terminationGracePeriod",
                &self.termination_grace_period,
                &now.termination_grace_period,
                pool.termination_grace_period.clone().unwrap_or_default(),
            ),
        ];
        for (field, old, new, shown) in simple {
            if old != new {
                let shown = if shown.is_empty() {
                    "unset".to_string()
                } else {
                    shown
                };
                out.push(TemplateChange {
                    field,
                    summary: format!("{field} changed (now {shown})"),
                });
            }
        }
        out
    }
}

/// The record tag for a pool: `(key, value)`, ready to join the launch tags.
pub fn record_tag(pool: &NodePool) -> (String, String) {
    (
        labels::TEMPLATE_RECORD_TAG.to_string(),
        TemplateRecord::of_pool(pool).encode(),
    )
}

fn eligible(map: &BTreeMap<String, String>, keep: fn(&str) -> bool) -> BTreeMap<String, String> {
    map.iter()
        .filter(|(k, _)| keep(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Keys a template may carry: Karpenter rejects restricted domains and well-known labels in
/// `template.metadata.labels` (docs/karpenter.md §1.5), so node labels under them came from elsewhere.
fn label_candidate(key: &str) -> bool {
    labels::restricted_reason(key).is_none()
        && !labels::in_kubernetes_domains(key)
        && !labels::is_well_known(key)
}

/// Annotations written by the kubelet, controllers and tools rather than by a template.
fn annotation_candidate(key: &str) -> bool {
    const SYSTEM: [&str; 9] = [
        "karpenter.sh/",
        "karpenter.k8s.aws/",
        "kubectl-karpenter.io/",
        "compatibility.karpenter.sh/",
        "node.alpha.kubernetes.io/",
        "volumes.kubernetes.io/",
        "csi.volume.kubernetes.io/",
        "kubeadm.alpha.kubernetes.io/",
        "kubectl.kubernetes.io/",
    ];
    !SYSTEM.iter().any(|p| key.starts_with(p))
}

/// Taints the system adds (cordon, not-ready, Karpenter's disruption markers) are not template taints.
fn taint_candidate(text: &str) -> bool {
    const SYSTEM: [&str; 4] = [
        "node.kubernetes.io/",
        "node.cloudprovider.kubernetes.io/",
        "karpenter.sh/",
        "ToBeDeletedByClusterAutoscaler",
    ];
    !SYSTEM.iter().any(|p| text.starts_with(p))
}

/// The subset of `candidates` whose digest is `recorded` (`None` = the empty set), found by
/// trying every subset — bounded by [`MAX_RECOVERY_CANDIDATES`]. `None` when nothing matches.
pub fn recover_subset(recorded: Option<&str>, candidates: &[String]) -> Option<Vec<String>> {
    let Some(recorded) = recorded else {
        return Some(Vec::new());
    };
    let mut sorted = candidates.to_vec();
    sorted.sort();
    sorted.dedup();
    if sorted.len() > MAX_RECOVERY_CANDIDATES {
        return None;
    }
    for mask in 1u32..(1u32 << sorted.len()) {
        let subset: Vec<String> = sorted
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, s)| s.clone())
            .collect();
        if fnv32(&subset) == recorded {
            return Some(subset);
        }
    }
    None
}

/// `+k=v, -k=v, k=old→new` between an old `k=v` list and the new map.
fn map_change(
    field: &str,
    recorded: &Option<String>,
    candidates: &[String],
    new: &BTreeMap<String, String>,
) -> String {
    let Some(old) = recover_subset(recorded.as_deref(), candidates) else {
        let now: Vec<String> = canonical_map(new);
        return format!(
            "{field} changed (now: {})",
            if now.is_empty() {
                "none".to_string()
            } else {
                now.join(", ")
            }
        );
    };
    let old: BTreeMap<String, String> = old
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut parts = Vec::new();
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for k in keys {
        match (old.get(k), new.get(k)) {
            (None, Some(v)) => parts.push(format!("+{k}={v}")),
            (Some(v), None) => parts.push(format!("-{k}={v}")),
            (Some(a), Some(b)) if a != b => parts.push(format!("{k}={a}→{b}")),
            _ => {}
        }
    }
    if parts.is_empty() {
        format!("{field} changed")
    } else {
        format!("{field} {}", parts.join(", "))
    }
}

/// `+x, -y` between two lists of canonical strings.
fn set_diff(old: &[String], new: &[String]) -> String {
    let old: BTreeSet<&String> = old.iter().collect();
    let new: BTreeSet<&String> = new.iter().collect();
    let mut parts: Vec<String> = new.difference(&old).map(|s| format!("+{s}")).collect();
    parts.extend(old.difference(&new).map(|s| format!("-{s}")));
    if parts.is_empty() {
        "changed".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::nodepool::NodeClassRef;
    use crate::model::taints::Effect;

    fn pool() -> NodePool {
        NodePool {
            name: "default".into(),
            generation: Some(ApiGeneration::V1),
            labels: [("team".to_string(), "b".to_string())]
                .into_iter()
                .collect(),
            taints: vec![Taint::new("dedicated", "web", Effect::NoSchedule)],
            node_class_ref: Some(NodeClassRef {
                group: "karpenter.k8s.aws".into(),
                kind: "EC2NodeClass".into(),
                name: "oldnode".into(),
            }),
            expire_after: Some("720h".into()),
            ..NodePool::default()
        }
    }

    fn node_labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn encode_parse_round_trip_and_fit_in_a_tag() {
        let r = TemplateRecord::of_pool(&pool());
        let text = r.encode();
        assert!(text.starts_with("v1;c=oldnode;l="), "{text}");
        assert!(text.len() <= MAX_TAG_VALUE);
        assert_eq!(TemplateRecord::parse(&text).unwrap(), r);
        // Golden: the digest is stable across builds (records outlive the binary that wrote them).
        assert_eq!(digest_set(&["team=b".to_string()]).unwrap(), "19d7ed7e");
    }

    #[test]
    fn long_class_names_are_digested_and_still_compared() {
        let mut p = pool();
        p.node_class_ref.as_mut().unwrap().name = "x".repeat(250);
        let text = TemplateRecord::of_pool(&p).encode();
        assert!(text.len() <= MAX_TAG_VALUE, "{}", text.len());
        let r = TemplateRecord::parse(&text).unwrap();
        assert!(r
            .diff(&p, &BTreeMap::new(), &BTreeMap::new(), &p.taints)
            .is_empty());
        let mut q = p.clone();
        q.node_class_ref.as_mut().unwrap().name = "short".into();
        let d = r.diff(&q, &BTreeMap::new(), &BTreeMap::new(), &p.taints);
        assert_eq!(
            d[0].summary,
            "nodeClassRef (a class with a long name) → short"
        );
    }

    #[test]
    fn bad_and_future_records_are_typed_errors() {
        assert!(matches!(
            TemplateRecord::parse("hello"),
            Err(RecordError::NoVersion(_))
        ));
        assert_eq!(
            TemplateRecord::parse("v9;c=a"),
            Err(RecordError::UnsupportedVersion(9))
        );
        // Unknown keys and junk parts are ignored.
        let r = TemplateRecord::parse("v1;c=a;zz=1;junk").unwrap();
        assert_eq!(r.node_class.as_deref(), Some("a"));
    }

    #[test]
    fn diff_names_the_class_and_recovers_old_label_values_from_the_node() {
        let old = pool();
        let record = TemplateRecord::parse(&TemplateRecord::of_pool(&old).encode()).unwrap();
        let mut new = old.clone();
        new.node_class_ref.as_mut().unwrap().name = "newnode".into();
        new.labels = node_labels(&[("team", "a"), ("tier", "web")]);
        let node = node_labels(&[
            ("team", "b"),
            ("kubernetes.io/arch", "amd64"),
            ("karpenter.sh/nodepool", "default"),
            ("from-requirement", "x"),
        ]);
        let taints = vec![
            Taint::new("dedicated", "web", Effect::NoSchedule),
            Taint::new("node.kubernetes.io/unschedulable", "", Effect::NoSchedule),
        ];
        let d = record.diff(&new, &node, &BTreeMap::new(), &taints);
        let text: Vec<String> = d.iter().map(|c| c.summary.clone()).collect();
        assert_eq!(
            text,
            [
                "nodeClassRef oldnode → newnode",
                "labels team=b→a, +tier=web"
            ]
        );
        // Taints: one removed, one added.
        let mut t = old.clone();
        t.taints = vec![Taint::new("gpu", "", Effect::NoExecute)];
        let d = record.diff(&t, &node, &BTreeMap::new(), &taints);
        assert_eq!(
            d[0].summary,
            "taints +gpu:NoExecute, -dedicated=web:NoSchedule"
        );
        // Unchanged pool: nothing.
        assert!(record
            .diff(&old, &node, &BTreeMap::new(), &taints)
            .is_empty());
    }

    #[test]
    fn unrecoverable_values_still_say_what_changed() {
        let old = pool();
        let record = TemplateRecord::of_pool(&old);
        let mut new = old.clone();
        new.labels.clear();
        // The node lost its label (someone edited it): the old value cannot be found.
        let d = record.diff(&new, &BTreeMap::new(), &BTreeMap::new(), &old.taints);
        assert_eq!(d[0].summary, "labels changed (now: none)");
        let mut k = old.clone();
        k.expire_after = Some("24h".into());
        let d = record.diff(
            &k,
            &node_labels(&[("team", "b")]),
            &BTreeMap::new(),
            &old.taints,
        );
        assert_eq!(d[0].summary, "expireAfter changed (now 24h)");
    }
}
