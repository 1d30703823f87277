//! Node classes → v1 EC2NodeClass: an AWSNodeTemplate or a Provisioner's inline provider
//! (v1alpha1 shapes) and a v1beta1 EC2NodeClass, with the old defaults written out.

use super::super::yaml::Value;
use serde_json::json;

use super::super::meta::{AmiSelectorTermSpec, ObjectMeta, StringMap};
use super::super::objects::Object;
use super::super::v1alpha5::AwsProvider;
use super::super::{v1, v1alpha5, v1beta1};
use super::metadata::{clean_metadata, unknown_fields};
use super::selectors::{legacy_ami_terms, legacy_terms};
use super::{
    Body, Converter, Notes, AMI_ID_PLACEHOLDER, INSTANCE_PROFILE_PLACEHOLDER, NODECLASS_API_VERSION,
};

/// Tags Karpenter v1 sets on instances itself; its CRD rejects them in `spec.tags`
/// (`karpenter.sh/managed-by` was rejected by v1.0 and is no longer used).
const V1_RESTRICTED_TAGS: &[&str] = &[
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.sh/managed-by",
];

impl Converter<'_> {
    // ------------------------------------------------------------ v1alpha1 AWSNodeTemplate

    pub(super) fn aws_node_template(
        &mut self,
        o: &Object,
        t: &v1alpha5::AwsNodeTemplate,
        raw: Option<&Value>,
    ) {
        let mut notes = Notes::new(o);
        let spec = t.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.k8s.aws/v1alpha1 AWSNodeTemplate",
        );
        let metadata = clean_metadata(&t.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let class = self.class_from_provider(&mut notes, "spec", &spec, metadata);
        self.push(
            o,
            "EC2NodeClass",
            name,
            format!("karpenter.k8s.aws/v1alpha1 {}", o.name),
            Body::Class(Box::new(class)),
            notes,
        );
    }

    /// An AWSNodeTemplate's spec or a Provisioner's inline provider → a v1 EC2NodeClass.
    pub(super) fn class_from_provider(
        &self,
        notes: &mut Notes,
        path: &str,
        p: &AwsProvider,
        metadata: ObjectMeta,
    ) -> v1::Ec2NodeClass {
        let at = |field: &str| format!("{path}.{field}");
        let family = p.ami_family.clone().unwrap_or_else(|| "AL2".into());
        let mut spec = v1::Ec2NodeClassSpec::default();

        if let Some(lt) = &p.launch_template {
            notes.add(
                at("launchTemplate"),
                format!("dropped: v1 cannot launch from a launch template ({lt:?}); move its settings (AMI, security groups, user data, block devices, metadata options, instance profile) into this EC2NodeClass"),
            );
        }

        // AMIs.
        let selector = p.ami_selector.as_ref().filter(|s| !s.is_empty());
        let mut block_devices = p.block_device_mappings.clone().filter(|b| !b.is_empty());
        match (family.as_str(), selector) {
            ("Ubuntu", selector) => {
                let terms = selector.map(|s| legacy_ami_terms(notes, &at("amiSelector"), s));
                let (terms, devices) = self.ubuntu(
                    notes,
                    &at("amiFamily"),
                    "v1alpha5",
                    terms,
                    block_devices.is_some(),
                );
                spec.ami_family = Some("AL2".into());
                spec.ami_selector_terms = Some(terms);
                if devices.is_some() {
                    block_devices = devices;
                }
            }
            (_, Some(sel)) => {
                spec.ami_family = Some(family.clone());
                spec.ami_selector_terms = Some(legacy_ami_terms(notes, &at("amiSelector"), sel));
            }
            ("Custom", None) => {
                // Only reachable with a launch template (the loader insists on a selector).
                spec.ami_family = Some(family.clone());
                spec.ami_selector_terms = Some(vec![AmiSelectorTermSpec {
                    id: Some(AMI_ID_PLACEHOLDER.into()),
                    ..AmiSelectorTermSpec::default()
                }]);
                notes.add(
                    at("amiSelector"),
                    format!("absent (the launch template chose the AMI): v1 requires amiSelectorTerms; wrote the placeholder {AMI_ID_PLACEHOLDER}: replace it with the launch template's AMI"),
                );
            }
            (family, None) => {
                spec.ami_selector_terms =
                    Some(alias_terms(notes, &at("amiSelector"), family, "v1alpha5"));
            }
        }
        if family == "Custom" {
            custom_family_note(notes, &at("amiFamily"));
        }

        spec.subnet_selector_terms = Some(legacy_terms(
            notes,
            &at("subnetSelector"),
            p.subnet_selector.as_ref(),
            "subnets",
        ));
        spec.security_group_selector_terms = Some(legacy_terms(
            notes,
            &at("securityGroupSelector"),
            p.security_group_selector.as_ref(),
            "security groups",
        ));

        match p.instance_profile.as_deref() {
            Some(profile) if !profile.is_empty() => spec.instance_profile = Some(profile.into()),
            _ => {
                spec.instance_profile = Some(INSTANCE_PROFILE_PLACEHOLDER.into());
                notes.add(
                    at("instanceProfile"),
                    format!("absent: v1 needs role or instanceProfile, and v1alpha5 fell back to aws.defaultInstanceProfile in the karpenter-global-settings ConfigMap; wrote the placeholder {INSTANCE_PROFILE_PLACEHOLDER}: replace it with that setting's value (or use role: <node IAM role name> instead)"),
                );
            }
        }

        spec.tags = carry_tags(notes, &at("tags"), p.tags.as_ref());
        spec.user_data = p.user_data.clone();
        // v1alpha5 took any quantity (and a bare number); v1's CRD only whole sizes within
        // EBS's limits (api::nodeclass::volume_size_problem): such a size is written as is, and
        // said, since the API server would refuse the converted class.
        for (i, d) in block_devices.iter().flatten().enumerate() {
            let size = d.ebs.as_ref().and_then(|e| e.volume_size.as_ref());
            if let Some(problem) = size.and_then(super::super::nodeclass::volume_size_problem) {
                notes.add(
                    at(&format!("blockDeviceMappings[{i}].ebs.volumeSize")),
                    format!("{problem}: the v1 API server refuses it; change it before applying"),
                );
            }
        }
        spec.block_device_mappings = block_devices;
        spec.detailed_monitoring = p.detailed_monitoring;
        spec.context = p.context.clone();
        spec.metadata_options = Some(match &p.metadata_options {
            None => {
                notes.add(
                    at("metadataOptions"),
                    "absent: wrote v1alpha5's effective default {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required} explicitly, because v1 defaults the hop limit to 1, which keeps pods off the host network from reaching IMDS (on an IPv6 cluster Karpenter enabled httpProtocolIPv6: set it if so)",
                );
                default_metadata_options()
            }
            Some(serde_json::Value::Object(m)) => {
                let mut m = m.clone();
                if !m.contains_key("httpTokens") {
                    m.insert("httpTokens".into(), json!("optional"));
                    notes.add(
                        at("metadataOptions.httpTokens"),
                        "unset: wrote optional, v1alpha1's default when metadataOptions is given (v1 would default it to required, i.e. IMDSv2 only); change it to required once nothing on these nodes uses IMDSv1",
                    );
                }
                serde_json::Value::Object(m)
            }
            Some(other) => other.clone(),
        });

        v1::Ec2NodeClass {
            api_version: Some(NODECLASS_API_VERSION.into()),
            kind: Some("EC2NodeClass".into()),
            metadata,
            spec: Some(spec),
            status: None,
        }
    }

    // ----------------------------------------------------------------- v1beta1 EC2NodeClass

    pub(super) fn node_class_v1beta1(
        &mut self,
        o: &Object,
        c: &v1beta1::Ec2NodeClass,
        raw: Option<&Value>,
    ) {
        let mut notes = Notes::new(o);
        let spec = c.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.k8s.aws/v1beta1 EC2NodeClass",
        );
        let metadata = clean_metadata(&c.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let family = spec.ami_family.clone().unwrap_or_default();
        let terms = spec.ami_selector_terms.clone().filter(|t| !t.is_empty());

        let mut out = v1::Ec2NodeClassSpec {
            subnet_selector_terms: spec.subnet_selector_terms.clone(),
            security_group_selector_terms: spec.security_group_selector_terms.clone(),
            user_data: spec.user_data.clone(),
            role: spec.role.clone(),
            instance_profile: spec.instance_profile.clone(),
            tags: carry_tags(&mut notes, "spec.tags", spec.tags.as_ref()),
            block_device_mappings: spec.block_device_mappings.clone(),
            instance_store_policy: spec.instance_store_policy.clone(),
            detailed_monitoring: spec.detailed_monitoring,
            associate_public_ip_address: spec.associate_public_ip_address,
            context: spec.context.clone(),
            ..v1::Ec2NodeClassSpec::default()
        };
        match (family.as_str(), terms) {
            ("Ubuntu", terms) => {
                let has_devices = spec
                    .block_device_mappings
                    .as_ref()
                    .is_some_and(|b| !b.is_empty());
                let (terms, devices) =
                    self.ubuntu(&mut notes, "spec.amiFamily", "v1beta1", terms, has_devices);
                out.ami_family = Some("AL2".into());
                out.ami_selector_terms = Some(terms);
                if devices.is_some() {
                    out.block_device_mappings = devices;
                }
            }
            (_, Some(t)) => {
                out.ami_family = Some(family.clone());
                out.ami_selector_terms = Some(t);
            }
            (family, None) => {
                out.ami_selector_terms = Some(match pinned_alias_version(&c.metadata) {
                    Some(version) => pinned_alias_terms(&mut notes, family, version),
                    None => alias_terms(&mut notes, "spec.amiSelectorTerms", family, "v1beta1"),
                });
            }
        }
        if family == "Custom" {
            custom_family_note(&mut notes, "spec.amiFamily");
        }

        // v1beta1 defaulted each field (hop limit 2); v1 defaults the hop limit to 1.
        out.metadata_options = Some(match &spec.metadata_options {
            None => {
                notes.add(
                    "spec.metadataOptions",
                    "absent: wrote v1beta1's default {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required} explicitly, because v1 defaults the hop limit to 1, which keeps pods off the host network from reaching IMDS",
                );
                default_metadata_options()
            }
            Some(serde_json::Value::Object(m)) => {
                let mut m = m.clone();
                if !m.contains_key("httpPutResponseHopLimit") {
                    m.insert("httpPutResponseHopLimit".into(), json!(2));
                    notes.add(
                        "spec.metadataOptions.httpPutResponseHopLimit",
                        "unset: wrote 2, v1beta1's default, because v1 defaults it to 1, which keeps pods off the host network from reaching IMDS",
                    );
                }
                serde_json::Value::Object(m)
            }
            Some(other) => other.clone(),
        });

        let class = v1::Ec2NodeClass {
            api_version: Some(NODECLASS_API_VERSION.into()),
            kind: Some("EC2NodeClass".into()),
            metadata,
            spec: Some(out),
            status: None,
        };
        self.push(
            o,
            "EC2NodeClass",
            name,
            format!("karpenter.k8s.aws/v1beta1 {}", o.name),
            Body::Class(Box::new(class)),
            notes,
        );
    }
}

fn custom_family_note(notes: &mut Notes, field: &str) {
    notes.add(
        field,
        "Custom: v1 expects nodes to register with the karpenter.sh/unregistered:NoExecute taint (Karpenter, and provision --wait here, removes it when the node registers); your userData must add it, e.g. kubelet --register-with-taints=karpenter.sh/unregistered:NoExecute",
    );
}

/// `{alias: <family>@latest}` for a generation that resolved the family's latest AMI by
/// default.
fn alias_terms(
    notes: &mut Notes,
    field: &str,
    family: &str,
    generation: &str,
) -> Vec<AmiSelectorTermSpec> {
    let alias_family = family.to_ascii_lowercase();
    let alias = format!("{alias_family}@latest");
    let pin = match alias_family.as_str() {
        "al2" | "al2023" => format!(
            "; pin a version (e.g. {alias_family}@v20240625) to stop automatic AMI upgrades"
        ),
        "bottlerocket" => {
            "; pin a version (e.g. bottlerocket@v1.20.0) to stop automatic AMI upgrades".to_string()
        }
        _ => String::new(),
    };
    let al2 = if alias_family == "al2" {
        "; al2 aliases stop resolving from Kubernetes 1.33 (AL2 is end of life): plan a move to al2023"
    } else {
        ""
    };
    notes.add(
        field,
        format!("absent: wrote amiSelectorTerms [{{alias: {alias}}}], which resolves the same EKS-optimized SSM parameters {generation} used for {family}, so nodes keep getting the latest AMI for the cluster's Kubernetes version{pin}{al2}"),
    );
    vec![AmiSelectorTermSpec {
        alias: Some(alias),
        ..AmiSelectorTermSpec::default()
    }]
}

/// What Karpenter v1.0 wrote on a v1 class with a pinned alias when it served it as v1beta1.
const ALIAS_VERSION_ANNOTATION: &str = "compatibility.karpenter.k8s.aws/v1-alias-version";

/// The alias version a v1beta1 object carries from a v1 round trip (`aws v1.0.8:
/// pkg/apis/v1/ec2nodeclass_conversion.go ConvertFrom`, `lo.ValueOr(annotations,
/// AnnotationAliasVersionCompatibilityKey, "latest")`).
fn pinned_alias_version(m: &ObjectMeta) -> Option<&str> {
    m.annotations
        .as_ref()?
        .get(ALIAS_VERSION_ANNOTATION)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
}

/// `{alias: <family>@<version>}` for a v1beta1 class that came from a v1 class with a pinned
/// alias (`aws v1.0.8: ec2nodeclass_conversion_test.go` "should convert v1beta1 ec2nodeclass
/// ami family (alias version annotation)").
fn pinned_alias_terms(notes: &mut Notes, family: &str, version: &str) -> Vec<AmiSelectorTermSpec> {
    let alias = format!("{}@{version}", family.to_ascii_lowercase());
    notes.add(
        "spec.amiSelectorTerms",
        format!("absent: wrote amiSelectorTerms [{{alias: {alias}}}] from the {ALIAS_VERSION_ANNOTATION} annotation, which Karpenter v1.0 writes when it serves a v1 EC2NodeClass with a pinned alias as v1beta1; Karpenter's own conversion restores the same pin"),
    );
    vec![AmiSelectorTermSpec {
        alias: Some(alias),
        ..AmiSelectorTermSpec::default()
    }]
}

/// Restricted tags dropped (noted).
fn carry_tags(notes: &mut Notes, field: &str, tags: Option<&StringMap>) -> Option<StringMap> {
    let tags = tags?;
    let mut dropped = Vec::new();
    let kept: StringMap = tags
        .iter()
        .filter(|(k, _)| {
            let restricted =
                k.starts_with("kubernetes.io/cluster") || V1_RESTRICTED_TAGS.contains(&k.as_str());
            if restricted {
                dropped.push(k.to_string());
            }
            !restricted
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !dropped.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: Karpenter v1 sets these tags itself and its CRD rejects them",
                dropped.join(", ")
            ),
        );
    }
    (!kept.is_empty()).then_some(kept)
}

fn default_metadata_options() -> serde_json::Value {
    json!({
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 2,
        "httpTokens": "required",
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    /// aws v1.0.8 `pkg/apis/v1/ec2nodeclass_conversion_test.go` "should convert v1beta1
    /// ec2nodeclass ami family (alias version annotation)": a v1beta1 class read from a v1.0
    /// cluster carries the v1 pin in an annotation, and the conversion restores the pin.
    #[test]
    fn a_v1beta1_class_carrying_a_pinned_alias_version_converts_to_that_pin() {
        let class = "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata:\n  name: c\n  annotations:\n    compatibility.karpenter.k8s.aws/v1-alias-version: v20240625\nspec:\n  amiFamily: AL2023\n  role: R\n  subnetSelectorTerms: [{id: subnet-1}]\n  securityGroupSelectorTerms: [{id: sg-1}]\n";
        let c = conv(class);
        let d = doc(&c, "EC2NodeClass", "c");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].alias"),
            "al2023@v20240625"
        );
        note(d, "spec.amiSelectorTerms", "v1-alias-version");
        // The annotation itself is Karpenter's and is not carried over.
        assert!(!has(&d.value, "metadata.annotations"));
        load_str("out.yaml", &c.to_yaml()).unwrap();
        // With selector terms the pin has nothing to apply to (upstream keeps the terms).
        let c = conv(&format!("{class}  amiSelectorTerms: [{{id: ami-1}}]\n"));
        let d = doc(&c, "EC2NodeClass", "c");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-1");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2023");
        // Without the annotation: latest, as before.
        let c = conv(&class.replace("v1-alias-version", "other"));
        let d = doc(&c, "EC2NodeClass", "c");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].alias"),
            "al2023@latest"
        );
    }

    #[test]
    fn inline_provider_becomes_a_class_named_after_the_provisioner() {
        let c = conv(
            r#"
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: inline
spec:
  kubeletConfiguration:
    maxPods: 20
  provider:
    apiVersion: extensions.karpenter.sh/v1alpha1
    kind: AWS
    amiFamily: Bottlerocket
    instanceProfile: profile
    subnetSelector:
      karpenter.sh/discovery: c
    securityGroupSelector:
      karpenter.sh/discovery: c
    tags:
      team: a
      kubernetes.io/cluster/c: owned
    launchTemplate: my-template
    metadataOptions:
      httpPutResponseHopLimit: 3
"#,
        );
        assert_eq!(
            c.documents
                .iter()
                .map(|d| d.kind.as_str())
                .collect::<Vec<_>>(),
            ["NodePool", "EC2NodeClass"]
        );
        let pool = doc(&c, "NodePool", "inline");
        assert_eq!(
            text(&pool.value, "spec.template.spec.nodeClassRef.name"),
            "inline"
        );
        note(pool, "spec.provider", "became EC2NodeClass/inline");
        let class = doc(&c, "EC2NodeClass", "inline");
        let v = &class.value;
        assert_eq!(
            text(v, "spec.amiSelectorTerms[0].alias"),
            "bottlerocket@latest"
        );
        assert!(!has(v, "spec.amiFamily"), "the alias names the family");
        note(class, "spec.provider.amiSelector", "bottlerocket@latest");
        assert_eq!(text(v, "spec.instanceProfile"), "profile");
        assert_eq!(text(v, "spec.kubelet.maxPods"), "20");
        assert_eq!(text(v, "spec.tags.team"), "a");
        assert!(!has(v, "spec.tags[kubernetes.io/cluster/c]"));
        note(class, "spec.provider.tags", "kubernetes.io/cluster/c");
        note(class, "spec.provider.launchTemplate", "my-template");
        // Partial metadata options: v1alpha1 left httpTokens to EC2 (optional).
        assert_eq!(text(v, "spec.metadataOptions.httpPutResponseHopLimit"), "3");
        assert_eq!(text(v, "spec.metadataOptions.httpTokens"), "optional");
        note(
            class,
            "spec.provider.metadataOptions.httpTokens",
            "optional",
        );
        assert!(class.notes.iter().all(|n| n.object == "Provisioner/inline"));
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    /// v1alpha5 took any quantity as a volume size; v1's CRD pattern only whole sizes within
    /// EBS's limits (`aws v1.14.1` CRD; `ec2nodeclass_validation_cel_test.go` "should fail
    /// VolumeSize is less then 1Gi/1G"): the converted class keeps the size and says so.
    #[test]
    fn a_volume_size_v1_refuses_is_kept_and_noted() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector: {a: b}\n  securityGroupSelector: {a: b}\n  blockDeviceMappings:\n  - {deviceName: /dev/xvda, ebs: {volumeSize: 20Gi}}\n  - {deviceName: /dev/xvdb, ebs: {volumeSize: 1.5Ti}}\n");
        let class = doc(&c, "EC2NodeClass", "t");
        assert_eq!(
            text(&class.value, "spec.blockDeviceMappings[1].ebs.volumeSize"),
            "1.5Ti"
        );
        note(
            class,
            "spec.blockDeviceMappings[1].ebs.volumeSize",
            "invalid value \"1.5Ti\"",
        );
        assert!(!class
            .notes
            .iter()
            .any(|n| n.field.contains("blockDeviceMappings[0]")));
    }

    #[test]
    fn missing_identity_and_selectors_get_placeholders_and_notes() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  launchTemplate: lt\n  subnetSelector:\n    a: b\n");
        let d = doc(&c, "EC2NodeClass", "t");
        assert_eq!(
            text(&d.value, "spec.instanceProfile"),
            INSTANCE_PROFILE_PLACEHOLDER
        );
        note(d, "spec.instanceProfile", "aws.defaultInstanceProfile");
        assert_eq!(
            text(
                &d.value,
                "spec.securityGroupSelectorTerms[0].tags[karpenter.sh/discovery]"
            ),
            CLUSTER_NAME_PLACEHOLDER
        );
        note(d, "spec.securityGroupSelector", "placeholder");
        note(d, "spec.launchTemplate", "\"lt\"");
        // metadataOptions absent: v1alpha1's effective defaults, hop limit 2.
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpPutResponseHopLimit"),
            "2"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpTokens"),
            "required"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpEndpoint"),
            "enabled"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpProtocolIPv6"),
            "disabled"
        );
        note(d, "spec.metadataOptions", "hop limit to 1");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    #[test]
    fn v1beta1_classes_keep_terms_and_note_custom_and_ubuntu() {
        let class = |spec: &str| {
            let c = conv(&format!("apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata:\n  name: x\nspec:\n  role: r\n  subnetSelectorTerms:\n    - id: subnet-1\n  securityGroupSelectorTerms:\n    - name: sg\n{spec}"));
            load_str("out.yaml", &c.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
            doc(&c, "EC2NodeClass", "x").clone()
        };
        let d = class(
            "  amiFamily: Custom\n  amiSelectorTerms:\n    - name: my-ami\n      owner: self\n",
        );
        assert_eq!(text(&d.value, "spec.amiFamily"), "Custom");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].name"), "my-ami");
        note(&d, "spec.amiFamily", "karpenter.sh/unregistered:NoExecute");
        let d = class("  amiFamily: Ubuntu\n  amiSelectorTerms:\n    - id: ami-1\n");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-1");
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].deviceName"),
            "/dev/sda1"
        );
        let d =
            class("  amiFamily: Windows2022\n  metadataOptions:\n    httpPutResponseHopLimit: 1\n");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].alias"),
            "windows2022@latest"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpPutResponseHopLimit"),
            "1"
        );
        assert!(d
            .notes
            .iter()
            .all(|n| !n.field.starts_with("spec.metadataOptions")));
    }
}
