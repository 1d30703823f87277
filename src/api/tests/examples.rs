//! Every example manifest under `tests/fixtures/examples` loads, with the defaults of its
//! generation.

use super::{data, load, load_str};
use crate::model::nodepool::ApiGeneration;
use crate::model::requirements::Operator;

fn yaml_files(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(data(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{dir} has no examples");
    files
}

#[test]
fn every_example_loads_and_its_references_resolve() {
    // No example must fail: each is valid for its generation's CRDs.
    let mut count = 0;
    for dir in [
        "examples/v1alpha5",
        "examples/v1beta1",
        "examples/v1",
        "examples/workloads",
        "examples/scheduling",
    ] {
        for file in yaml_files(dir) {
            let m = load(&[&file]).unwrap_or_else(|e| panic!("{e}"));
            m.check_references().unwrap_or_else(|e| panic!("{e}"));
            if dir != "examples/workloads" {
                assert!(!m.node_pools.is_empty(), "{file}: no NodePool");
                assert!(!m.node_classes.is_empty(), "{file}: no node class");
            }
            count += 1;
        }
    }
    assert!(count >= 40, "only {count} examples");
}

#[test]
fn generation_defaults_are_applied() {
    let m = load(&[&data("examples/v1alpha5/node-ttls.yaml")]).unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.generation, Some(ApiGeneration::V1Alpha5));
    assert_eq!(p.disruption.consolidation_policy, "WhenEmpty");
    assert_eq!(p.disruption.consolidate_after.as_deref(), Some("60s"));
    assert_eq!(p.expire_after.as_deref(), Some("604800s"));
    assert_eq!(
        m.node_classes[0].ami_family.as_deref(),
        Some("AL2"),
        "AWSNodeTemplate default"
    );
    // v1alpha5 webhook defaults: all five, since nothing is constrained.
    let keys: Vec<_> = p
        .requirements
        .iter()
        .map(|r| (r.key.as_str(), r.operator))
        .collect();
    assert_eq!(
        keys,
        [
            ("kubernetes.io/os", Operator::In),
            ("kubernetes.io/arch", Operator::In),
            ("karpenter.sh/capacity-type", Operator::In),
            ("karpenter.k8s.aws/instance-category", Operator::In),
            ("karpenter.k8s.aws/instance-generation", Operator::Gt),
        ]
    );

    // An instance-family requirement suppresses the category/generation defaults.
    let m = load(&[&data("examples/v1alpha5/general-purpose.yaml")]).unwrap();
    let keys: Vec<_> = m.node_pools[0]
        .requirements
        .iter()
        .map(|r| r.key.as_str())
        .collect();
    assert!(
        !keys.contains(&"karpenter.k8s.aws/instance-category"),
        "{keys:?}"
    );
    assert!(keys.contains(&"kubernetes.io/arch"));

    let m = load(&[&data("examples/v1alpha5/al2-custom-ami.yaml")]).unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.disruption.consolidation_policy, "WhenUnderutilized");
    assert_eq!(p.limits["cpu"], 32_000);
    let ids: Vec<_> = m.node_classes[0]
        .ami_selector_terms
        .iter()
        .map(|t| t.id.clone().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["ami-0fixture000000005", "ami-0fixture000000006"],
        "aws-ids split on commas and trimmed"
    );
    assert_eq!(
        m.node_classes[0].legacy_selectors["amiSelector"]["aws-ids"],
        "ami-0fixture000000005, ami-0fixture000000006"
    );

    let m = load(&[&data("examples/v1beta1/general-purpose.yaml")]).unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.generation, Some(ApiGeneration::V1Beta1));
    assert_eq!(p.disruption.consolidation_policy, "WhenUnderutilized");
    assert_eq!(p.disruption.consolidate_after, None);
    assert_eq!(p.expire_after.as_deref(), Some("720h"));
    assert_eq!(p.disruption.budgets.len(), 1);
    assert_eq!(p.disruption.budgets[0].nodes, "10%");
    let r = p.node_class_ref.as_ref().unwrap();
    assert_eq!(
        (r.group.as_str(), r.kind.as_str(), r.name.as_str()),
        ("karpenter.k8s.aws", "EC2NodeClass", "default")
    );

    let m = load(&[&data("examples/v1/general-purpose.yaml")]).unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.generation, Some(ApiGeneration::V1));
    assert_eq!(
        p.disruption.consolidation_policy,
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(p.disruption.consolidate_after.as_deref(), Some("0s"));
    assert_eq!(p.expire_after.as_deref(), Some("720h"));
    assert_eq!(p.disruption.budgets[0].nodes, "10%");
    assert_eq!(
        m.node_classes[0].ami_family.as_deref(),
        Some("AL2023"),
        "derived from al2023@latest"
    );

    let m = load(&[&data("examples/v1/max-node-lifetime.yaml")]).unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.expire_after.as_deref(), Some("336h"));
    assert_eq!(p.termination_grace_period.as_deref(), Some("48h"));
    assert_eq!(p.disruption.consolidation_policy, "WhenEmpty");
    assert_eq!(p.disruption.consolidate_after.as_deref(), Some("2m"));

    let m = load(&[&data("examples/v1/custom-family-with-alias.yaml")]).unwrap();
    assert_eq!(
        m.node_classes[0].ami_family.as_deref(),
        Some("Custom"),
        "explicit Custom wins over the alias"
    );
    let m = load(&[&data("examples/v1/windows-2025.yaml")]).unwrap();
    assert_eq!(m.node_classes[0].ami_family.as_deref(), Some("Windows2025"));

    let m = load(&[&data("examples/v1/min-values-multiple-keys.yaml")]).unwrap();
    let mins: Vec<_> = m.node_pools[0]
        .requirements
        .iter()
        .filter_map(|r| r.min_values)
        .collect();
    assert_eq!(mins, [3, 10, 2]);

    let m = load(&[&data("examples/v1beta1/multiple-ebs.yaml")]).unwrap();
    let sizes: Vec<_> = m.node_classes[0]
        .block_devices
        .iter()
        .map(|b| (b.volume_size.unwrap() / 1000) >> 30)
        .collect();
    assert_eq!(sizes, [30, 200, 2000]);
}

/// A v1 `nodeClassRef.group` written as an apiVersion (`karpenter.k8s.aws/v1`, as aws
/// v1.14.1's `examples/v1/windows-custom-userdata.yaml` writes it) fails the NodePool CRD's
/// pattern `^[^/]*$` (core v1.14.1: pkg/apis/crds/karpenter.sh_nodepools.yaml), so it is
/// refused, as the NodeClaim's is (nodeclaim_validation_cel_test.go "should fail for invalid
/// group").
#[test]
fn an_apiversion_written_as_group_is_refused() {
    let text = std::fs::read_to_string(data("examples/v1/windows-custom-userdata.yaml")).unwrap();
    let wrong = text.replace(
        "group: karpenter.k8s.aws\n",
        "group: karpenter.k8s.aws/v1\n",
    );
    assert_ne!(text, wrong);
    assert_eq!(
        super::error_of("windows.yaml", &wrong),
        "windows.yaml (document 1): NodePool/windows2022: spec.template.spec.nodeClassRef.group: \"karpenter.k8s.aws/v1\" is an apiVersion, not a group (write karpenter.k8s.aws)"
    );
    let m = load_str("windows.yaml", &text).unwrap();
    assert_eq!(
        m.node_pools[0].node_class_ref.as_ref().unwrap().group,
        "karpenter.k8s.aws"
    );
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn a_directory_loads_sorted_and_reports_duplicates_across_files() {
    // The workload examples are distinct objects: the whole directory loads.
    let m = load(&[&data("examples/workloads")]).unwrap();
    assert_eq!(m.pdbs.len(), 1);
    // guarded 8 + inflate (default 1 replica) + batch 3 + per-node 6 + per-zone 9; the
    // accelerator and arm-preferring Deployments are scaled to 0.
    assert_eq!(m.pods.len(), 27);
    assert_eq!(
        m.pods[0].name, "guarded-0",
        "disruption-budget.yaml sorts first among files with pods"
    );
    // Every v1 example names its class `default`: loading two of them together is ambiguous.
    let e = load(&[
        &data("examples/v1/spot.yaml"),
        &data("examples/v1/general-purpose.yaml"),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "general-purpose.yaml (document 2): EC2NodeClass/default: defined twice (first in "
        ),
        "{e}"
    );
    assert!(e.ends_with("spot.yaml (document 2))"), "{e}");
}

#[test]
fn karpenter_objects_survive_a_serde_round_trip() {
    // `convert` re-emits what it read: every field, interpreted or not, must come back.
    use crate::api::{read_str, ApiObject};
    fn round_trip<
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    >(
        t: &T,
    ) -> String {
        let text = crate::api::yaml::to_string(t).unwrap();
        let back: T = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(&back, t);
        text
    }
    let mut seen = String::new();
    for dir in ["examples/v1alpha5", "examples/v1beta1", "examples/v1"] {
        for file in yaml_files(dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            for o in read_str(&file, &text).unwrap().objects {
                seen += &match &o.object {
                    ApiObject::Provisioner(x) => round_trip(x),
                    ApiObject::AwsNodeTemplate(x) => round_trip(x),
                    ApiObject::NodePoolV1Beta1(x) => round_trip(x),
                    ApiObject::Ec2NodeClassV1Beta1(x) => round_trip(x),
                    ApiObject::NodePoolV1(x) => round_trip(x),
                    ApiObject::Ec2NodeClassV1(x) => round_trip(x),
                    other => panic!("{file}: unexpected {other:?}"),
                };
            }
        }
    }
    for raw in [
        "userData:",
        "blockDeviceMappings:",
        "metadataOptions:",
        "httpTokens: required",
        "instanceStorePolicy: RAID0",
        "amiSelector:",
        "aws-ids:",
        "minValues: 5",
        "terminationGracePeriod: 48h",
        "volumeSize: 2000Gi",
        "kubernetes.io/description:",
    ] {
        assert!(seen.contains(raw), "{raw} lost in the round trip");
    }
}

/// A capacity type no offering has (`on_demand`, as some v1alpha5 Provisioners wrote it) is
/// read as written — Karpenter matches nothing with it — and said once per pool; `NotIn` and
/// the known values are quiet.
#[test]
fn an_unknown_capacity_type_is_said() {
    let text = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: old}\n\
        spec:\n  providerRef: {name: default}\n  requirements:\n  - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on_demand]}\n\
        \x20 - {key: karpenter.sh/capacity-type, operator: NotIn, values: [Spot]}\n---\n\
        apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: fine}\nspec:\n  template:\n    spec:\n\
        \x20     nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n\
        \x20     requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}\n";
    let m = load_str("pools.yaml", text).unwrap();
    assert_eq!(
        m.warnings,
        ["Provisioner old: karpenter.sh/capacity-type value(s) \"on_demand\" match no offering (capacity types are spot, on-demand and reserved)"]
    );
}
