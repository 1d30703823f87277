//! v1beta1 NodePool → v1 NodePool: expiry moves into the template, the consolidation policy
//! is renamed, kubelet settings move to the node class.

use super::super::meta::NodeClassRefSpec;
use super::super::objects::Object;
use super::super::v1alpha5::{group_of, AWS_GROUP};
use super::super::yaml::Value;
use super::super::{v1, v1beta1};
use super::kubelet::{strip_runtime, KubeletUse};
use super::metadata::{clean_metadata, unknown_fields};
use super::provisioner::forceful_expiry;
use super::{Body, Converter, Notes, NODEPOOL_API_VERSION};

impl Converter<'_> {
    pub(super) fn node_pool_v1beta1(
        &mut self,
        o: &Object,
        p: &v1beta1::NodePool,
        raw: Option<&Value>,
    ) {
        let mut notes = Notes::new(o);
        let spec = p.spec.clone().unwrap_or_default();
        unknown_fields(&mut notes, raw, &spec, "a karpenter.sh/v1beta1 NodePool");
        let metadata = clean_metadata(&p.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let template = spec.template.clone().unwrap_or_default();
        let tspec = template.spec.clone().unwrap_or_default();

        let r = tspec.node_class_ref.clone().unwrap_or_default();
        let group = r
            .group
            .as_deref()
            .filter(|g| !g.is_empty())
            .or(r.api_version.as_deref().filter(|v| !v.is_empty()))
            .map_or(AWS_GROUP, group_of)
            .to_string();
        let class_name = r.name.clone().unwrap_or_default();
        let kind = r
            .kind
            .clone()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "EC2NodeClass".into());

        let kubelet = tspec
            .kubelet
            .clone()
            .and_then(|k| strip_runtime(k, "spec.template.spec.kubelet", &mut notes));
        if tspec.resources.is_some() {
            notes.add(
                "spec.template.spec.resources",
                "dropped: v1 NodePool templates have no resources (v1beta1 ignored them on NodePools)",
            );
        }

        for (i, r) in tspec.requirements.iter().flatten().enumerate() {
            let key = r.key.as_deref().unwrap_or_default();
            let Some(known) = crate::model::labels::known_values(key) else {
                continue;
            };
            let values = r.values.as_deref().unwrap_or_default();
            if r.operator.as_deref() == Some("In")
                && !values.iter().any(|v| known.contains(&v.as_str()))
            {
                notes.add(
                    format!("spec.template.spec.requirements[{i}].values"),
                    format!(
                        "kept {values:?}, which names no {key} Karpenter knows ({}): v0.37 left the pool's pods pending, v1.14.1's NodePool validation refuses the pool (ValidationSucceeded=False, never used)",
                        known.join(", ")
                    ),
                );
            }
        }

        let d = spec.disruption.clone().unwrap_or_default();
        let (policy, after) = match d.consolidation_policy.as_deref() {
            Some("WhenEmpty") => ("WhenEmpty", d.consolidate_after.clone()),
            // WhenUnderutilized (also the v1beta1 default) consolidated right away.
            _ => (
                "WhenEmptyOrUnderutilized",
                Some(d.consolidate_after.clone().unwrap_or_else(|| "0s".into())),
            ),
        };
        // v1beta1 allowed `consolidateAfter: Never` beside WhenUnderutilized and then never
        // consolidated (core v0.37.7 `disruption/consolidation.go ShouldDisrupt`, "has
        // consolidation disabled"); Karpenter's conversion always writes 0s for WhenUnderutilized
        // (core v1.0.8 `nodepool_conversion.go Disruption.convertFrom`), which turns it on.
        if policy == "WhenEmptyOrUnderutilized" && after.as_deref() == Some("Never") {
            notes.add(
                "spec.disruption.consolidateAfter",
                "kept Never: v1beta1 never consolidated this pool (consolidation disabled), and v1 WhenEmptyOrUnderutilized with Never does the same; Karpenter's own v1 conversion writes 0s here instead, which would start removing and replacing its nodes",
            );
        }
        let expire_after = d.expire_after.clone().unwrap_or_else(|| "720h".into());
        if expire_after != "Never" {
            let default = if d.expire_after.is_none() {
                " (v1beta1's default, written out)"
            } else {
                ""
            };
            notes.add(
                "spec.disruption.expireAfter",
                format!(
                    "became spec.template.spec.expireAfter: {expire_after}{default}; {}",
                    forceful_expiry("v1beta1")
                ),
            );
        }

        let pool = v1::NodePool {
            api_version: Some(NODEPOOL_API_VERSION.into()),
            kind: Some("NodePool".into()),
            metadata,
            spec: Some(v1::NodePoolSpec {
                template: Some(v1::NodeClaimTemplate {
                    metadata: template.metadata.clone(),
                    spec: Some(v1::NodeClaimSpec {
                        taints: tspec.taints.clone(),
                        startup_taints: tspec.startup_taints.clone(),
                        requirements: Some(tspec.requirements.clone().unwrap_or_default()),
                        resources: None,
                        node_class_ref: Some(NodeClassRefSpec {
                            api_version: None,
                            group: Some(group),
                            kind: Some(kind),
                            name: Some(class_name.clone()),
                        }),
                        expire_after: Some(expire_after),
                        termination_grace_period: None,
                    }),
                }),
                disruption: Some(v1::DisruptionSpec {
                    consolidation_policy: Some(policy.into()),
                    consolidate_after: after,
                    budgets: d.budgets.clone(),
                }),
                limits: spec.limits.clone(),
                weight: spec.weight,
                replicas: None,
            }),
            status: None,
        };
        let out = self.push(
            o,
            "NodePool",
            name,
            format!("karpenter.sh/v1beta1 {}", o.name),
            Body::Pool(Box::new(pool)),
            notes,
        );
        self.kubelets
            .entry(class_name.clone())
            .or_default()
            .push(KubeletUse {
                out,
                field: "spec.template.spec.kubelet",
                kubelet,
            });
        self.refs
            .push((out, class_name, "spec.template.spec.nodeClassRef".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    /// Swept in session 17: msfidelis/eks-karpenter-autonomous-cluster
    /// `files/karpenter/node_pool.yml.tpl`, a v1beta1 NodePool whose `capacity-type` values come
    /// from a Terraform variable. v0.37 has no well-known-values rule (`core v0.37.7` has no
    /// `WellKnownValuesForRequirements`): an unknown value was accepted and its pods stayed
    /// pending, where we refused the v1beta1 pool (and so `convert` refused it). v1.14.1's
    /// NodePool validation refuses the converted pool (`nodeclaim_validation.go`
    /// `validateWellKnownValues`), so the conversion says so.
    #[test]
    fn v1beta1_unknown_capacity_types_are_read_and_flagged_when_converted() {
        let pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: c}\n      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [xspot]}]\n";
        let m = load_str("in.yaml", pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.node_pools.len(), 1);
        let c = conv(pool);
        let a = doc(&c, "NodePool", "p");
        note(
            a,
            "spec.template.spec.requirements[0].values",
            "ValidationSucceeded=False",
        );
        let err = load_str("out.yaml", &c.to_yaml()).unwrap_err().to_string();
        assert!(
            err.contains("spec.template.spec.requirements[0].values"),
            "{err}"
        );
        // A known value beside it: no note (v1.14.1 fails open).
        let c = conv(&pool.replace("[xspot]", "[spot, xspot]"));
        let a = doc(&c, "NodePool", "p");
        assert!(
            a.notes.iter().all(|n| !n.field.contains("requirements")),
            "{:?}",
            a.notes
        );
    }

    /// core v1.0.8 `pkg/apis/v1/nodepool_conversion.go` `Disruption.convertFrom` writes 0s for
    /// every WhenUnderutilized pool; v0.37.7 `disruption/consolidation.go ShouldDisrupt` never
    /// consolidated one with `consolidateAfter: Never`. Ours keeps Never, and says why.
    #[test]
    fn a_v1beta1_pool_with_consolidation_disabled_stays_disabled_and_says_karpenter_differs() {
        let pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  disruption: {consolidationPolicy: WhenUnderutilized, consolidateAfter: Never}\n  template:\n    spec:\n      nodeClassRef: {name: c}\n      requirements: []\n";
        let c = conv(pool);
        let a = doc(&c, "NodePool", "p");
        assert_eq!(
            text(&a.value, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );
        assert_eq!(text(&a.value, "spec.disruption.consolidateAfter"), "Never");
        note(
            a,
            "spec.disruption.consolidateAfter",
            "writes 0s here instead",
        );
        // The ordinary case has no such note.
        let c = conv(&pool.replace(", consolidateAfter: Never", ""));
        let a = doc(&c, "NodePool", "p");
        assert_eq!(text(&a.value, "spec.disruption.consolidateAfter"), "0s");
        assert!(a
            .notes
            .iter()
            .all(|n| n.field != "spec.disruption.consolidateAfter"));
    }

    #[test]
    fn v1beta1_nodepools_move_expiry_and_kubelet_and_rename_policies() {
        let c = conv(V1BETA1);
        let a = doc(&c, "NodePool", "a");
        let v = &a.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.sh/v1");
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.group"),
            "karpenter.k8s.aws"
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.kind"),
            "EC2NodeClass"
        );
        assert!(!has(v, "spec.template.spec.nodeClassRef.apiVersion"));
        assert_eq!(text(v, "spec.template.spec.requirements[0].minValues"), "3");
        assert!(!has(v, "spec.template.spec.resources"));
        note(a, "spec.template.spec.resources", "dropped");
        assert!(!has(v, "spec.template.spec.kubelet"));
        assert_eq!(text(v, "spec.template.spec.expireAfter"), "24h");
        assert!(!has(v, "spec.disruption.expireAfter"));
        note(a, "spec.disruption.expireAfter", "forceful");
        assert_eq!(
            text(v, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );
        assert_eq!(text(v, "spec.disruption.consolidateAfter"), "0s");
        assert_eq!(text(v, "spec.disruption.budgets[0].nodes"), "20%");
        assert_eq!(text(v, "spec.limits.cpu"), "50");
        assert_eq!(text(v, "spec.weight"), "5");
        assert_eq!(text(v, "spec.template.metadata.labels.team"), "a");
        note(
            a,
            "spec.template.spec.kubelet",
            "moved to EC2NodeClass/shared",
        );

        let b = doc(&c, "NodePool", "b");
        assert_eq!(
            text(&b.value, "spec.disruption.consolidationPolicy"),
            "WhenEmpty"
        );
        assert_eq!(text(&b.value, "spec.disruption.consolidateAfter"), "5m");
        // Absent expireAfter: v1beta1's 720h, written out.
        assert_eq!(text(&b.value, "spec.template.spec.expireAfter"), "720h");
        note(b, "spec.disruption.expireAfter", "v1beta1's default");
        // Different kubelet on a shared class: the first wins, the others are told.
        let n = note(b, "spec.template.spec.kubelet", "not carried over");
        assert!(n.message.contains("{\"maxPods\":60}"), "{n}");
        let c_pool = doc(&c, "NodePool", "c");
        note(
            c_pool,
            "spec.template.spec.kubelet",
            "now holds NodePool/a's",
        );
        assert_eq!(
            text(&c_pool.value, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );

        let class = doc(&c, "EC2NodeClass", "shared");
        let v = &class.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.k8s.aws/v1");
        assert_eq!(text(v, "spec.kubelet.maxPods"), "30");
        assert_eq!(text(v, "spec.amiSelectorTerms[0].alias"), "al2023@latest");
        note(class, "spec.amiSelectorTerms", "latest AMI");
        assert_eq!(text(v, "spec.role"), "NodeRole");
        assert_eq!(text(v, "spec.securityGroupSelectorTerms[0].id"), "sg-1");
        assert_eq!(text(v, "spec.metadataOptions.httpTokens"), "optional");
        assert_eq!(text(v, "spec.metadataOptions.httpPutResponseHopLimit"), "2");
        note(
            class,
            "spec.metadataOptions.httpPutResponseHopLimit",
            "v1beta1's default",
        );
        assert!(!has(v, "metadata.annotations"));
        assert!(!has(v, "spec.tags[eks:eks-cluster-name]"));
        assert_eq!(text(v, "spec.tags.team"), "a");
        note(class, "spec.tags", "eks:eks-cluster-name");

        let m = load_str("out.yaml", &c.to_yaml()).unwrap();
        m.check_references().unwrap();
        assert_eq!(
            m.node_classes[0].kubelet.as_ref().unwrap().max_pods,
            Some(30)
        );
    }
}
