//! v1alpha5 Provisioner → v1 NodePool (plus an EC2NodeClass for an inline `spec.provider`),
//! with the AWS webhook's requirement defaults written out.

use super::super::error::InputError;
use super::super::meta::{
    NodeClassRefSpec, ObjectMeta, RequirementSpec, StringMap, TemplateMetadata,
};
use super::super::objects::Object;
use super::super::v1alpha5::AWS_GROUP;
use super::super::yaml::Value;
use super::super::{v1, v1alpha5};
use super::kubelet::{strip_runtime, KubeletUse};
use super::metadata::{clean_metadata, unknown_fields};
use super::{Body, Converter, Notes, NODEPOOL_API_VERSION};
use crate::model::labels;

impl Converter<'_> {
    pub(super) fn provisioner(
        &mut self,
        o: &Object,
        p: &v1alpha5::Provisioner,
        raw: Option<&Value>,
    ) -> Result<(), InputError> {
        let mut notes = Notes::new(o);
        let name = p.metadata.name.clone().unwrap_or_default();
        let spec = p.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.sh/v1alpha5 Provisioner",
        );
        let metadata = clean_metadata(&p.metadata, &mut notes);

        let (class_name, inline) = match (&spec.provider_ref, &spec.provider) {
            (Some(r), _) => (r.name.clone().unwrap_or_default(), None),
            (None, Some(provider)) => (name.clone(), Some(provider)),
            // The loader refuses it first (v1alpha5 `validateProvider`); kept for a caller
            // that converts objects it did not load.
            (None, None) => {
                return Err(InputError::Invalid {
                    at: o.location.clone(),
                    object: o.name.clone(),
                    field: "spec.providerRef".into(),
                    message: "required to convert: a v1 NodePool must reference an EC2NodeClass, and this Provisioner has neither providerRef nor provider".into(),
                })
            }
        };

        // Requirements, with the AWS webhook's defaults made explicit.
        let mut requirements = spec.requirements.clone().unwrap_or_default();
        let known = labels::known_values(labels::CAPACITY_TYPE).unwrap_or_default();
        for (i, r) in requirements.iter().enumerate() {
            let odd: Vec<&String> = match (r.key.as_deref(), r.operator.as_deref()) {
                (Some(labels::CAPACITY_TYPE), Some("In")) => r
                    .values
                    .iter()
                    .flatten()
                    .filter(|v| !known.contains(&v.as_str()))
                    .collect(),
                _ => continue,
            };
            if !odd.is_empty() {
                notes.add(
                    format!("spec.requirements[{i}].values"),
                    format!(
                        "kept {odd:?}, which no offering has (capacity types are spot, on-demand and reserved): Karpenter matches nothing with it, in v1alpha5 as in v1 — write on-demand if that was meant"
                    ),
                );
            }
        }
        let added = webhook_defaults(&requirements, spec.labels.as_ref());
        if !added.is_empty() {
            let listed: Vec<String> = added.iter().map(describe_requirement).collect();
            let mut widen: Vec<&str> = Vec::new();
            for r in &added {
                match r.key.as_deref().unwrap_or_default() {
                    labels::OS => widen.push("any operating system"),
                    labels::ARCH => widen.push("any architecture"),
                    labels::CAPACITY_TYPE => widen.push("spot as well as on-demand capacity"),
                    labels::INSTANCE_CATEGORY => {
                        widen.push("every instance category and generation")
                    }
                    _ => {}
                }
            }
            notes.add(
                "spec.requirements",
                format!(
                    "added the v1alpha5 {} {} explicitly: a v1 NodePool has no requirement defaults, so without {} it would launch {}",
                    if listed.len() == 1 { "default" } else { "defaults" },
                    listed.join(", "),
                    if listed.len() == 1 { "it" } else { "them" },
                    join_and(&widen)
                ),
            );
        }
        requirements.extend(added);

        // Disruption: consolidation, emptiness, budgets.
        let consolidation = spec
            .consolidation
            .as_ref()
            .and_then(|c| c.enabled)
            .unwrap_or(false);
        let (policy, after) = if consolidation {
            ("WhenEmptyOrUnderutilized", "0s".to_string())
        } else if let Some(n) = spec.ttl_seconds_after_empty {
            ("WhenEmpty", format!("{n}s"))
        } else {
            notes.add(
                "spec.ttlSecondsAfterEmpty",
                "absent and consolidation is off: wrote spec.disruption.consolidateAfter: Never, because v1alpha5 never removed empty or underutilized nodes, and a v1 NodePool removes both by default (WhenEmptyOrUnderutilized after 0s)",
            );
            ("WhenEmpty", "Never".to_string())
        };
        notes.add(
            "spec.disruption.budgets",
            "v1alpha5 had no disruption budgets; v1 applies its default (nodes: 10%), so at most 10% of this pool's nodes are disrupted at a time for emptiness, consolidation or drift; add budgets to choose another pace",
        );

        // Expiry.
        let expire_after = match spec.ttl_seconds_until_expired {
            Some(n) => {
                notes.add(
                    "spec.ttlSecondsUntilExpired",
                    format!(
                        "became spec.template.spec.expireAfter: {n}s; {}",
                        forceful_expiry("v1alpha5")
                    ),
                );
                format!("{n}s")
            }
            None => {
                notes.add(
                    "spec.ttlSecondsUntilExpired",
                    "absent: wrote spec.template.spec.expireAfter: Never, because v1alpha5 never expired nodes and v1 defaults to 720h",
                );
                "Never".to_string()
            }
        };

        let kubelet = spec
            .kubelet_configuration
            .clone()
            .and_then(|k| strip_runtime(k, "spec.kubeletConfiguration", &mut notes));

        if inline.is_some() {
            notes.add(
                "spec.provider",
                format!(
                    "became EC2NodeClass/{name} (the next document): v1 has no inline provider"
                ),
            );
        }

        let labels_ = spec.labels.clone().filter(|m| !m.is_empty());
        let annotations = spec.annotations.clone().filter(|m| !m.is_empty());
        let template_metadata =
            (labels_.is_some() || annotations.is_some()).then_some(TemplateMetadata {
                labels: labels_,
                annotations,
            });
        let pool = v1::NodePool {
            api_version: Some(NODEPOOL_API_VERSION.into()),
            kind: Some("NodePool".into()),
            metadata,
            spec: Some(v1::NodePoolSpec {
                template: Some(v1::NodeClaimTemplate {
                    metadata: template_metadata,
                    spec: Some(v1::NodeClaimSpec {
                        taints: spec.taints.clone().filter(|t| !t.is_empty()),
                        startup_taints: spec.startup_taints.clone().filter(|t| !t.is_empty()),
                        requirements: Some(requirements),
                        resources: None,
                        node_class_ref: Some(ec2_node_class_ref(AWS_GROUP, &class_name)),
                        expire_after: Some(expire_after),
                        termination_grace_period: None,
                    }),
                }),
                disruption: Some(v1::DisruptionSpec {
                    consolidation_policy: Some(policy.into()),
                    consolidate_after: Some(after),
                    budgets: None,
                }),
                limits: spec
                    .limits
                    .as_ref()
                    .and_then(|l| l.resources.clone())
                    .filter(|l| !l.is_empty()),
                weight: spec.weight,
                replicas: None,
            }),
            status: None,
        };
        let origin = format!("karpenter.sh/v1alpha5 {}", o.name);
        let pool_out = self.push(
            o,
            "NodePool",
            name.clone(),
            origin.clone(),
            Body::Pool(Box::new(pool)),
            notes,
        );
        self.kubelets
            .entry(class_name.clone())
            .or_default()
            .push(KubeletUse {
                out: pool_out,
                field: "spec.kubeletConfiguration",
                kubelet,
            });
        if let Some(provider) = inline {
            let mut class_notes = Notes::new(o);
            let metadata = ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            };
            let class =
                self.class_from_provider(&mut class_notes, "spec.provider", provider, metadata);
            self.push(
                o,
                "EC2NodeClass",
                name,
                format!("{origin} spec.provider"),
                Body::Class(Box::new(class)),
                class_notes,
            );
        } else {
            self.refs
                .push((pool_out, class_name, "spec.providerRef".into()));
        }
        Ok(())
    }
}

fn ec2_node_class_ref(group: &str, name: &str) -> NodeClassRefSpec {
    NodeClassRefSpec {
        api_version: None,
        group: Some(group.to_string()),
        kind: Some("EC2NodeClass".into()),
        name: Some(name.to_string()),
    }
}

pub(super) fn forceful_expiry(generation: &str) -> String {
    format!("v1 expiry is forceful: an expired node is drained and deleted right away, with no replacement launched first and no disruption budget, where {generation} replaced expired nodes gracefully")
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
/// `key In [a, b]`, `key Gt 2`.
fn describe_requirement(r: &RequirementSpec) -> String {
    let key = r.key.as_deref().unwrap_or_default();
    let op = r.operator.as_deref().unwrap_or_default();
    let values = r.values.clone().unwrap_or_default();
    match op {
        "Gt" | "Lt" | "Gte" | "Lte" => format!("{key} {op} {}", values.join(",")),
        "Exists" | "DoesNotExist" => format!("{key} {op}"),
        _ => format!("{key} {op} [{}]", values.join(", ")),
    }
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> RequirementSpec {
    RequirementSpec {
        key: Some(key.to_string()),
        operator: Some(operator.to_string()),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
        min_values: None,
    }
}

/// The AWS webhook's Provisioner defaults that `reqs` and `labels_` leave open
/// (`aws v0.27.6: pkg/apis/v1alpha5/provisioner.go SetDefaults`, docs/karpenter.md §1.1).
fn webhook_defaults(reqs: &[RequirementSpec], labels_: Option<&StringMap>) -> Vec<RequirementSpec> {
    let constrained = |key: &str| {
        reqs.iter().any(|r| {
            r.key
                .as_deref()
                .is_some_and(|k| labels::normalize_key(k) == key)
        }) || labels_.is_some_and(|l| l.keys().any(|k| labels::normalize_key(k) == key))
    };
    let mut out = Vec::new();
    for (key, value) in [
        (labels::OS, "linux"),
        (labels::ARCH, "amd64"),
        (labels::CAPACITY_TYPE, "on-demand"),
    ] {
        if !constrained(key) {
            out.push(requirement(key, "In", &[value]));
        }
    }
    let shape = [
        labels::INSTANCE_TYPE,
        labels::INSTANCE_FAMILY,
        labels::INSTANCE_CATEGORY,
        labels::INSTANCE_GENERATION,
    ];
    if !shape.iter().any(|k| constrained(k)) {
        out.push(requirement(
            labels::INSTANCE_CATEGORY,
            "In",
            &["c", "m", "r"],
        ));
        out.push(requirement(labels::INSTANCE_GENERATION, "Gt", &["2"]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    #[test]
    fn provisioner_becomes_a_nodepool_with_its_defaults_written_out() {
        let c = conv(PROVISIONER);
        assert_eq!(c.documents.len(), 2);
        let pool = doc(&c, "NodePool", "default");
        let v = &pool.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.sh/v1");
        assert_eq!(text(v, "metadata.annotations.team"), "a");
        assert!(!has(
            v,
            "metadata.annotations[karpenter.sh/provisioner-hash]"
        ));
        note(
            pool,
            "metadata.annotations",
            "karpenter.sh/provisioner-hash",
        );
        assert_eq!(text(v, "spec.template.metadata.labels.team"), "a");
        assert_eq!(
            text(v, "spec.template.metadata.annotations[example.com/owner]"),
            "a"
        );
        assert_eq!(text(v, "spec.template.spec.taints[0].key"), "dedicated");
        assert_eq!(text(v, "spec.template.spec.startupTaints[0].key"), "init");
        // instance-family is constrained: no category/generation defaults.
        assert_eq!(
            requirements(pool),
            [
                "karpenter.k8s.aws/instance-family In m5",
                "kubernetes.io/os In linux",
                "kubernetes.io/arch In amd64",
                "karpenter.sh/capacity-type In on-demand",
            ]
        );
        let n = note(pool, "spec.requirements", "no requirement defaults");
        assert!(n.message.contains("any architecture"), "{n}");
        assert_eq!(
            n.to_string(),
            format!(
                "t.yaml: Provisioner/default: spec.requirements: {}",
                n.message
            )
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.group"),
            "karpenter.k8s.aws"
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.kind"),
            "EC2NodeClass"
        );
        assert_eq!(text(v, "spec.template.spec.nodeClassRef.name"), "tmpl");
        assert_eq!(text(v, "spec.limits.cpu"), "100");
        assert_eq!(text(v, "spec.weight"), "10");
        assert_eq!(text(v, "spec.disruption.consolidationPolicy"), "WhenEmpty");
        assert_eq!(text(v, "spec.disruption.consolidateAfter"), "30s");
        assert!(!has(v, "spec.disruption.budgets"));
        note(pool, "spec.disruption.budgets", "nodes: 10%");
        assert_eq!(text(v, "spec.template.spec.expireAfter"), "86400s");
        note(pool, "spec.ttlSecondsUntilExpired", "forceful");
        // kubelet settings move to the class; containerRuntime is dropped.
        note(
            pool,
            "spec.kubeletConfiguration.containerRuntime",
            "dockerd",
        );
        note(
            pool,
            "spec.kubeletConfiguration",
            "moved to EC2NodeClass/tmpl spec.kubelet",
        );
        let class = doc(&c, "EC2NodeClass", "tmpl");
        assert_eq!(text(&class.value, "spec.kubelet.maxPods"), "50");
        assert!(!has(&class.value, "spec.kubelet.containerRuntime"));
        assert!(class.comments[0].contains("moved here from Provisioner/default"));
        // The output says it all at the top of each document.
        let yaml = c.to_yaml();
        assert!(yaml.contains(&format!("# note: {n}\n")), "{yaml}");
        let m = load_str("out.yaml", &yaml).unwrap();
        assert_eq!(
            m.node_classes[0].kubelet.as_ref().unwrap().max_pods,
            Some(50)
        );
    }

    #[test]
    fn a_capacity_type_no_offering_has_is_kept_and_said() {
        let c = conv("apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\nspec:\n  providerRef: {name: c}\n  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot, on_demand]}]\n");
        let pool = doc(&c, "NodePool", "p");
        note(pool, "spec.requirements[0].values", "[\"on_demand\"]");
    }

    #[test]
    fn provisioner_disruption_and_expiry_map_to_v1() {
        let base = |extra: &str| {
            format!(
                "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec:\n  providerRef:\n    name: t\n{extra}"
            )
        };
        let c = conv(&base("  consolidation:\n    enabled: true\n"));
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            text(&pool.value, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );
        assert_eq!(text(&pool.value, "spec.disruption.consolidateAfter"), "0s");
        assert_eq!(text(&pool.value, "spec.template.spec.expireAfter"), "Never");
        note(pool, "spec.ttlSecondsUntilExpired", "v1 defaults to 720h");
        assert!(pool
            .notes
            .iter()
            .all(|n| n.field != "spec.ttlSecondsAfterEmpty"));
        // Neither consolidation nor emptiness: v1alpha5 removed nothing.
        let c = conv(&base(""));
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            text(&pool.value, "spec.disruption.consolidateAfter"),
            "Never"
        );
        note(
            pool,
            "spec.ttlSecondsAfterEmpty",
            "never removed empty or underutilized",
        );
        // The referenced class is missing: say so.
        note(
            pool,
            "spec.providerRef",
            "EC2NodeClass/t is not in the input",
        );
        // Every default was added (nothing is constrained), including category/generation.
        assert_eq!(requirements(pool).len(), 5);
        assert!(requirements(pool).contains(&"karpenter.k8s.aws/instance-generation Gt 2".into()));
    }

    #[test]
    fn labels_count_as_constraints_for_the_webhook_defaults() {
        let c = conv("apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec:\n  labels:\n    kubernetes.io/arch: arm64\n    node.kubernetes.io/instance-type: m6g.large\n  requirements:\n    - key: beta.kubernetes.io/os\n      operator: In\n      values: [linux]\n  providerRef:\n    name: t\n");
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            requirements(pool),
            [
                "beta.kubernetes.io/os In linux",
                "karpenter.sh/capacity-type In on-demand"
            ]
        );
        assert!(note(
            pool,
            "spec.requirements",
            "default karpenter.sh/capacity-type"
        )
        .message
        .contains("without it"));
    }
}
