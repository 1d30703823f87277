//! The AMI report against the in-memory cloud: what each term resolved to, the failures and the
//! error they make, the class selection, and reading the classes from a cluster.

use serde_json::json;

use super::*;
use crate::cloud::fake::FakeCloud;
use crate::cloud::types::{CloudError, Image};
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::model::nodepool::{AmiSelectorTerm, ApiGeneration};

const K129: KubeVersion = KubeVersion::new(1, 29);
/// 2025-01-01T00:00:00Z.
const NOW: i64 = 1_735_689_600;
const AL2023_X86: &str =
    "/aws/service/eks/optimized-ami/1.29/amazon-linux-2023/x86_64/standard/recommended/image_id";

fn class(name: &str, terms: Vec<AmiSelectorTerm>) -> NodeClass {
    NodeClass {
        name: name.into(),
        kind: "EC2NodeClass".into(),
        generation: Some(ApiGeneration::V1),
        ami_family: Some("AL2023".into()),
        ami_selector_terms: terms,
        ..NodeClass::default()
    }
}

fn id(id: &str) -> AmiSelectorTerm {
    AmiSelectorTerm {
        id: Some(id.into()),
        ..AmiSelectorTerm::default()
    }
}

fn alias(a: &str) -> AmiSelectorTerm {
    AmiSelectorTerm {
        alias: Some(a.into()),
        ..AmiSelectorTerm::default()
    }
}

fn image(id: &str, arch: &str) -> Image {
    Image {
        id: id.into(),
        name: Some(format!("image-{id}")),
        architecture: arch.into(),
        creation_date: Some("2024-12-01T00:00:00Z".into()),
        ..Image::default()
    }
}

fn cloud() -> FakeCloud {
    FakeCloud::new()
        .image(image("ami-pinned", "x86_64"), None)
        .image(image("ami-al2023", "x86_64"), Some("amazon"))
        .parameter(AL2023_X86, "ami-al2023")
}

#[test]
fn each_term_says_where_its_images_come_from() {
    let pinned = class("pinned", vec![id("ami-pinned")]);
    let latest = class("latest", vec![alias("al2023@latest")]);
    let cloud = cloud();
    let report = resolve(&cloud, &[&pinned, &latest], K129, VersionSource::Flag, NOW);
    assert_eq!(report.kubernetes_version, K129);
    assert_eq!(report.node_classes.len(), 2);
    let p = &report.node_classes[0];
    assert_eq!(p.terms.len(), 1);
    assert_eq!(p.terms[0].source_type, SourceType::DescribeImages);
    assert_eq!(p.terms[0].images[0].id, "ami-pinned");
    assert_eq!(p.images[0].architecture, "amd64");
    assert_eq!(p.error, None);

    let l = &report.node_classes[1];
    let x86 = l
        .terms
        .iter()
        .find(|t| t.source == AL2023_X86)
        .expect("the x86_64 parameter is a term");
    assert_eq!(x86.source_type, SourceType::Ssm);
    assert_eq!(x86.value, Some(Some("ami-al2023".into())));
    assert_eq!(x86.images[0].id, "ami-al2023");
    assert!(
        l.terms.iter().any(|t| t.value == Some(None)),
        "the arm64 parameter is absent and shown so"
    );
    assert!(report.failure().is_none());
    assert_eq!(report.aws_calls, cloud.call_counts());
    assert_eq!(report.aws_calls.get("SSM.GetParameters"), 1);
}

#[test]
fn classes_without_an_ami_make_one_error_naming_each() {
    let missing = class("missing", vec![id("ami-gone")]);
    let cloud = cloud();
    let report = resolve(&cloud, &[&missing], K129, VersionSource::Flag, NOW);
    let c = &report.node_classes[0];
    assert_eq!(c.reason, Some("AMINotFound"));
    let err = report.failure().unwrap();
    assert_eq!(err.exit, Exit::Remote);
    assert!(
        err.message.starts_with("EC2NodeClass/missing: "),
        "{}",
        err.message
    );
    assert_eq!(err.hint, None);

    let other = class("other", vec![id("ami-also-gone")]);
    let report = resolve(&cloud, &[&missing, &other], K129, VersionSource::Flag, NOW);
    let err = report.failure().unwrap();
    assert!(
        err.message
            .starts_with("2 node classes resolved no AMI: EC2NodeClass/missing: "),
        "{}",
        err.message
    );

    // A permission error says which permissions to grant.
    let latest = class("latest", vec![alias("al2023@latest")]);
    let denied = self::cloud();
    denied.fail(
        "SSM.GetParameters",
        CloudError::Api {
            service: "SSM".into(),
            operation: "GetParameters".into(),
            code: "AccessDeniedException".into(),
            message: "not allowed".into(),
        },
    );
    let report = resolve(&denied, &[&latest], K129, VersionSource::Flag, NOW);
    assert_eq!(report.node_classes[0].reason, Some("PermissionDenied"));
    assert_eq!(
        report.failure().unwrap().hint.as_deref(),
        Some(crate::usecases::live::AWS_PERMISSION_HINT)
    );
}

#[test]
fn classes_are_selected_by_name_in_the_order_asked() {
    let all = [
        class("a", vec![id("ami-1")]),
        class("b", vec![alias("al2023@latest")]),
    ];
    let names = |asked: &[&str]| {
        select_classes(
            &all,
            &asked.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .map(|c| c.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
    };
    assert_eq!(names(&[]).unwrap(), ["a", "b"]);
    assert_eq!(names(&["b", "a"]).unwrap(), ["b", "a"]);
    let err = names(&["c"]).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert_eq!(
        err.message,
        "node class \"c\" is not in the input (found: a, b)"
    );
    let err = select_classes(&[], &[]).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    // Only aliases and family defaults depend on the Kubernetes version.
    assert!(!needs_version(&[&all[0]], K129));
    assert!(needs_version(&[&all[0], &all[1]], K129));
}

#[test]
fn the_cluster_s_classes_or_an_error_naming_what_is_installed() {
    let empty = FakeCluster::new().karpenter_v1();
    let err = cluster_classes(&empty).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(
        err.message
            .starts_with("the cluster has no EC2NodeClass or AWSNodeTemplate ("),
        "{}",
        err.message
    );
    assert!(err.hint.unwrap().contains("-f FILE"));

    empty.put(
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                     "metadata": {"name": "default"},
                     "spec": {"role": "R", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                              "subnetSelectorTerms": [{"id": "subnet-a"}],
                              "securityGroupSelectorTerms": [{"id": "sg-a"}]}}),
    );
    let m = cluster_classes(&empty).unwrap();
    assert_eq!(m.node_classes[0].name, "default");
}
