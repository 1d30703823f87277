//! What Karpenter v1.0's conversion webhooks left on v1 objects: annotations v1.0 acted on and
//! later releases ignore. A v1 object passes through unchanged; these notes say what it loses.

use super::super::meta::ObjectMeta;
use super::super::objects::Object;
use super::Notes;

/// Kubelet settings of a v1beta1 NodePool, kept by v1.0 on the v1 NodePool (`core v1.0.8:
/// pkg/apis/v1/nodepool_conversion.go ConvertFrom`).
const KUBELET_ANNOTATION: &str = "compatibility.karpenter.sh/v1beta1-kubelet-conversion";
/// What v1.0 changed converting a v1beta1 Ubuntu class (`aws v1.0.8:
/// pkg/apis/v1/ec2nodeclass_conversion.go ConvertFrom`).
const UBUNTU_ANNOTATION: &str = "compatibility.karpenter.k8s.aws/v1beta1-ubuntu";

fn annotation<'a>(m: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    m.annotations.as_ref()?.get(key).map(String::as_str)
}

/// Notes for a v1 NodePool that still carries v1beta1 kubelet settings: v1.0 applied them in
/// place of the class's (`aws v1.0.8: pkg/utils/utils.go GetKubletConfigurationWithNodePool`),
/// v1.1 dropped the annotation, and v1.14.1 — like our plans — reads only the EC2NodeClass.
pub(super) fn node_pool_notes(o: &Object, m: &ObjectMeta) -> Notes {
    let mut notes = Notes::new(o);
    if let Some(kubelet) = annotation(m, KUBELET_ANNOTATION) {
        notes.add(
            format!("metadata.annotations[{KUBELET_ANNOTATION}]"),
            format!("Karpenter v1.0 applied these kubelet settings ({kubelet}) to this pool's nodes in place of its EC2NodeClass's spec.kubelet; v1.1 and later ignore the annotation, as this tool's plans do: copy them into the EC2NodeClass's spec.kubelet to keep them"),
        );
    }
    notes
}

/// Notes for a v1 EC2NodeClass that v1.0 converted from a v1beta1 Ubuntu class without AMI
/// terms: it wrote `id: ami-placeholder` and ignored the class (`aws v1.0.8:
/// pkg/apis/v1/ec2nodeclass.go UbuntuIncompatible`); v1.1 and later know no such annotation.
pub(super) fn node_class_notes(o: &Object, m: &ObjectMeta) -> Notes {
    let mut notes = Notes::new(o);
    let incompatible = annotation(m, UBUNTU_ANNOTATION)
        .is_some_and(|v| v.split(',').any(|s| s.trim() == "incompatible"));
    if incompatible {
        notes.add(
            "spec.amiSelectorTerms",
            format!("the {UBUNTU_ANNOTATION} annotation says Karpenter v1.0 converted this class from a v1beta1 Ubuntu class without AMI terms, wrote the placeholder id ami-placeholder and ignored the class; v1.1 and later no longer know the annotation and look the placeholder up, which finds no image, so the class never becomes Ready: give it real amiSelectorTerms (convert writes ssmParameter terms for the Ubuntu EKS AMIs when given the v1beta1 class)"),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    /// A v1 NodePool read from a Karpenter v1.0 cluster after the v1beta1 → v1 conversion
    /// (core v1.0.8 `nodepool_conversion.go` `ConvertFrom`; aws v1.0.8 `utils.go`
    /// `GetKubletConfigurationWithNodePool`): unchanged, with a note saying the kubelet
    /// settings it carries are ignored from v1.1 on.
    #[test]
    fn a_v1_pool_carrying_v1beta1_kubelet_settings_passes_through_with_a_note() {
        let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: p\n  annotations:\n    compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{\"maxPods\":8}'\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}\n      requirements: []\n";
        let c = conv(pool);
        let d = doc(&c, "NodePool", "p");
        assert!(d.unchanged);
        assert_eq!(
            text(
                &d.value,
                "metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]"
            ),
            "{\"maxPods\":8}"
        );
        let n = note(
            d,
            "metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]",
            "v1.1 and later ignore",
        );
        assert!(n.message.contains("{\"maxPods\":8}"), "{n}");
        // Without the annotation: no note.
        let c = conv(&pool.replace("v1beta1-kubelet-conversion", "other"));
        assert!(doc(&c, "NodePool", "p").notes.is_empty());
    }

    /// aws v1.0.8 `ec2nodeclass_conversion_test.go` "should convert v1beta1 ec2nodeclass when
    /// amiFamily is Ubuntu (without amiSelectorTerms) but mark incompatible": the v1 class it
    /// produces passes through with a note that v1.1+ cannot use it.
    #[test]
    fn a_v1_class_marked_ubuntu_incompatible_by_v1_0_passes_through_with_a_note() {
        let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: c\n  annotations:\n    compatibility.karpenter.k8s.aws/v1beta1-ubuntu: amiFamily,blockDeviceMappings,incompatible\nspec:\n  amiFamily: AL2\n  amiSelectorTerms: [{id: ami-placeholder}]\n  role: R\n  subnetSelectorTerms: [{id: subnet-1}]\n  securityGroupSelectorTerms: [{id: sg-1}]\n";
        let c = conv(class);
        let d = doc(&c, "EC2NodeClass", "c");
        assert!(d.unchanged);
        note(d, "spec.amiSelectorTerms", "never becomes Ready");
        // Converted from Ubuntu with AMI terms of its own: usable, no note.
        let c = conv(&class.replace(",incompatible", ""));
        assert!(doc(&c, "EC2NodeClass", "c").notes.is_empty());
    }
}
