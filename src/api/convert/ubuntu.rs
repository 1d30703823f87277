//! Ubuntu, the AMI family v1 dropped: AL2 with the Ubuntu AMIs selected explicitly.

use super::super::meta::{AmiSelectorTermSpec, BlockDeviceMappingSpec, EbsSpec, IntOrString};
use super::{Converter, Notes, KUBERNETES_VERSION_PLACEHOLDER};

impl Converter<'_> {
    /// Ubuntu (no v1 family, no alias): AL2 — the same userData format, as Karpenter's own
    /// v1 conversion webhook does — with the AMI terms given, or else the SSM parameters the
    /// Ubuntu family resolved; plus the Ubuntu root volume when no block devices were given.
    pub(super) fn ubuntu(
        &self,
        notes: &mut Notes,
        field: &str,
        generation: &str,
        terms: Option<Vec<AmiSelectorTermSpec>>,
        has_block_devices: bool,
    ) -> (
        Vec<AmiSelectorTermSpec>,
        Option<Vec<BlockDeviceMappingSpec>>,
    ) {
        let devices = (!has_block_devices).then(|| {
            vec![BlockDeviceMappingSpec {
                device_name: Some("/dev/sda1".into()),
                root_volume: Some(true),
                ebs: Some(EbsSpec {
                    encrypted: Some(true),
                    volume_type: Some("gp3".into()),
                    volume_size: Some(IntOrString::String("20Gi".into())),
                    ..EbsSpec::default()
                }),
            }]
        });
        let root = if has_block_devices {
            ""
        } else {
            ", plus the Ubuntu family's default root volume (/dev/sda1, 20Gi gp3, encrypted), since AL2's default is /dev/xvda"
        };
        let base = format!("Ubuntu is not supported in v1: wrote amiFamily AL2, whose userData format Ubuntu's EKS AMIs share (Karpenter's own v1 conversion does the same){root}");
        match terms {
            Some(t) if !t.is_empty() => {
                notes.add(field, format!("{base}; the AMI selector is kept"));
                (t, devices)
            }
            _ => {
                let version = self
                    .options
                    .kubernetes_version
                    .clone()
                    .unwrap_or_else(|| KUBERNETES_VERSION_PLACEHOLDER.to_string());
                let terms: Vec<AmiSelectorTermSpec> = ["amd64", "arm64"]
                    .iter()
                    .map(|arch| AmiSelectorTermSpec {
                        ssm_parameter: Some(format!(
                            "/aws/service/canonical/ubuntu/eks/20.04/{version}/stable/current/{arch}/hvm/ebs-gp2/ami-id"
                        )),
                        ..AmiSelectorTermSpec::default()
                    })
                    .collect();
                let placeholder = if self.options.kubernetes_version.is_some() {
                    String::new()
                } else {
                    format!("; replace {KUBERNETES_VERSION_PLACEHOLDER} with the cluster's Kubernetes version (or pass --kubernetes-version)")
                };
                notes.add(
                    field,
                    format!("{base}; Ubuntu has no v1 alias, so the AMIs are the ssmParameter terms for the Ubuntu 20.04 EKS AMIs {generation} resolved (amd64 and arm64), which need a v1 release with ssmParameter support{placeholder}"),
                );
                (terms, devices)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    #[test]
    fn ubuntu_becomes_al2_with_ssm_terms_or_its_own_selector() {
        let template = "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: u\nspec:\n  amiFamily: Ubuntu\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n";
        let c = convert_str(
            "t.yaml",
            template,
            &Options {
                kubernetes_version: Some("1.28".into()),
            },
        )
        .unwrap();
        let d = doc(&c, "EC2NodeClass", "u");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].ssmParameter"),
            "/aws/service/canonical/ubuntu/eks/20.04/1.28/stable/current/amd64/hvm/ebs-gp2/ami-id"
        );
        assert!(text(&d.value, "spec.amiSelectorTerms[1].ssmParameter").contains("/arm64/"));
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].deviceName"),
            "/dev/sda1"
        );
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].ebs.volumeSize"),
            "20Gi"
        );
        let n = note(d, "spec.amiFamily", "Ubuntu is not supported in v1");
        assert!(!n.message.contains(KUBERNETES_VERSION_PLACEHOLDER), "{n}");
        // Without a version: a placeholder, said so.
        let c = conv(template);
        let d = doc(&c, "EC2NodeClass", "u");
        assert!(text(&d.value, "spec.amiSelectorTerms[0].ssmParameter")
            .contains(KUBERNETES_VERSION_PLACEHOLDER));
        note(d, "spec.amiFamily", "--kubernetes-version");
        // With an amiSelector and block devices of its own: both kept.
        let c = conv(&format!("{template}  amiSelector:\n    aws::ids: ami-9\n  blockDeviceMappings:\n    - deviceName: /dev/sda1\n      ebs:\n        volumeSize: 50Gi\n"));
        let d = doc(&c, "EC2NodeClass", "u");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-9");
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].ebs.volumeSize"),
            "50Gi"
        );
        assert!(
            at(&d.value, "spec.blockDeviceMappings")
                .as_sequence()
                .unwrap()
                .len()
                == 1
        );
        note(d, "spec.amiFamily", "the AMI selector is kept");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }
}
