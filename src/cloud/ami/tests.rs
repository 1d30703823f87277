//! Table tests of AMI planning, query building and selection (docs/karpenter.md §3), and of the
//! batching driver over the in-memory fake.

use super::*;
use crate::cloud::fake::{FakeCloud, FAKE_ACCOUNT};

const K129: KubeVersion = KubeVersion::new(1, 29);
const NOW: &str = "2025-01-01T00:00:00Z";

fn now() -> i64 {
    parse_rfc3339(NOW).unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn paths(lookups: &[SsmLookup]) -> Vec<String> {
    lookups.iter().map(|l| l.path.clone()).collect()
}

fn req(key: &str, op: Operator, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement::new(key, op, values)
}

fn v1_class(terms: Vec<AmiSelectorTerm>) -> NodeClass {
    NodeClass {
        name: "default".into(),
        kind: "EC2NodeClass".into(),
        generation: Some(ApiGeneration::V1),
        ami_family: Some("AL2023".into()),
        ami_selector_terms: terms,
        ..NodeClass::default()
    }
}

fn alias(a: &str) -> AmiSelectorTerm {
    AmiSelectorTerm {
        alias: Some(a.into()),
        ..AmiSelectorTerm::default()
    }
}

fn image(id: &str, name: &str, arch: &str, created: &str) -> Image {
    Image {
        id: id.into(),
        name: Some(name.into()),
        architecture: arch.into(),
        creation_date: Some(created.into()),
        owner_id: Some(FAKE_ACCOUNT.into()),
        ..Image::default()
    }
}

fn deprecated(mut i: Image, when: &str) -> Image {
    i.deprecation_time = Some(when.into());
    i
}

#[test]
fn kubernetes_versions_parse_like_the_api_server_reports_them() {
    for (text, want) in [
        ("1.29", Some((1, 29))),
        ("v1.30", Some((1, 30))),
        ("1.28+", Some((1, 28))),
        ("1.31.2", Some((1, 31))),
        ("v1.27.3-eks-1234", Some((1, 27))),
        (" 1.33 ", Some((1, 33))),
        ("1", None),
        ("1.x", None),
        ("", None),
        ("1.2.3.4", None),
        ("one.two", None),
    ] {
        let got = KubeVersion::parse(text).ok().map(|v| (v.major, v.minor));
        assert_eq!(got, want, "{text:?}");
    }
    assert_eq!(KubeVersion::new(1, 9).to_string(), "1.9");
    assert!(KubeVersion::new(1, 9) < KubeVersion::new(1, 10));
}

#[test]
fn al2023_alias_latest_and_pinned_cover_every_variant() {
    let latest = alias_lookups("al2023@latest", K129).unwrap();
    let base = "/aws/service/eks/optimized-ami/1.29/amazon-linux-2023";
    assert_eq!(
        paths(&latest),
        [
            format!("{base}/x86_64/standard/recommended/image_id"),
            format!("{base}/x86_64/nvidia/recommended/image_id"),
            format!("{base}/x86_64/neuron/recommended/image_id"),
            format!("{base}/arm64/standard/recommended/image_id"),
            format!("{base}/arm64/nvidia/recommended/image_id"),
        ]
    );
    assert_eq!(latest[0].sets, vec![Variant::Standard.requirements()]);
    assert_eq!(latest[1].sets, vec![Variant::Nvidia.requirements()]);
    assert_eq!(latest[2].sets, vec![Variant::Neuron.requirements()]);
    let pinned = alias_lookups("al2023@v20240625", K129).unwrap();
    assert_eq!(
        pinned[4].path,
        format!("{base}/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.29-v20240625/image_id")
    );
}

#[test]
fn al2_alias_paths_gpu_sets_and_the_1_33_guard() {
    let latest = alias_lookups("al2@latest", K129).unwrap();
    assert_eq!(
        paths(&latest),
        [
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/recommended/image_id",
        ]
    );
    // One GPU image serves NVIDIA and Neuron instance types: two requirement sets.
    assert_eq!(
        latest[2].sets,
        vec![
            Variant::Neuron.requirements(),
            Variant::Nvidia.requirements()
        ]
    );
    let pinned = alias_lookups("al2@v20240625", K129).unwrap();
    assert_eq!(
        paths(&pinned),
        [
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2/amazon-eks-node-1.29-v20240625/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/amazon-eks-arm64-node-1.29-v20240625/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/amazon-eks-gpu-node-1.29-v20240625/image_id",
        ]
    );
    assert!(alias_lookups("al2@latest", KubeVersion::new(1, 32)).is_ok());
    let err = alias_lookups("al2@latest", KubeVersion::new(1, 33)).unwrap_err();
    assert!(matches!(err, AmiError::VersionGuard { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("al2@latest cannot be used with Kubernetes 1.33"),
        "{err}"
    );
}

#[test]
fn bottlerocket_alias_accepts_a_leading_v_and_splits_neuron_onto_x86() {
    let latest = alias_lookups("bottlerocket@latest", K129).unwrap();
    assert_eq!(
        paths(&latest),
        [
            "/aws/service/bottlerocket/aws-k8s-1.29/x86_64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.29/arm64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.29-nvidia/x86_64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.29-nvidia/arm64/latest/image_id",
        ]
    );
    assert_eq!(
        latest[0].sets,
        vec![
            Variant::Standard.requirements(),
            Variant::Neuron.requirements()
        ]
    );
    assert_eq!(latest[1].sets, vec![Variant::Standard.requirements()]);
    assert_eq!(latest[3].sets, vec![Variant::Nvidia.requirements()]);
    for a in ["bottlerocket@v1.20.0", "bottlerocket@1.20.0"] {
        assert_eq!(
            alias_lookups(a, K129).unwrap()[0].path,
            "/aws/service/bottlerocket/aws-k8s-1.29/x86_64/1.20.0/image_id"
        );
    }
}

#[test]
fn windows_aliases_carry_os_and_build_and_2025_needs_1_35() {
    let w = alias_lookups("windows2022@latest", K129).unwrap();
    assert_eq!(
        paths(&w),
        ["/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.29/image_id"]
    );
    assert_eq!(
        w[0].sets,
        vec![vec![
            req(labels::OS, Operator::In, &["windows"]),
            req(labels::WINDOWS_BUILD, Operator::In, &["10.0.20348"]),
        ]]
    );
    assert_eq!(
        alias_lookups("windows2019@latest", K129).unwrap()[0].sets[0][1].values,
        ["10.0.17763"]
    );
    let err = alias_lookups("windows2025@latest", KubeVersion::new(1, 34)).unwrap_err();
    assert!(matches!(err, AmiError::VersionGuard { .. }));
    let ok = alias_lookups("windows2025@latest", KubeVersion::new(1, 35)).unwrap();
    assert_eq!(ok[0].sets[0][1].values, ["10.0.26100"]);
    assert!(matches!(
        alias_lookups("windows2022@v1", K129),
        Err(AmiError::UnknownAlias(_))
    ));
    assert!(matches!(
        alias_lookups("ubuntu@latest", K129),
        Err(AmiError::UnknownAlias(_))
    ));
}

#[test]
fn pre_v1_family_defaults() {
    let al2 = family_default_lookups("AL2", K129).unwrap();
    assert_eq!(
        paths(&al2),
        [
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/recommended/image_id",
        ]
    );
    assert_eq!(al2[1].sets.len(), 2);
    let al2023 = family_default_lookups("AL2023", K129).unwrap();
    assert_eq!(al2023.len(), 2, "only the two standard parameters");
    assert!(al2023
        .iter()
        .all(|l| l.path.contains("/standard/recommended/")));
    let br = family_default_lookups("Bottlerocket", K129).unwrap();
    assert_eq!(br.len(), 4);
    assert_eq!(
        br[1].sets,
        vec![
            Variant::Nvidia.requirements(),
            Variant::Neuron.requirements()
        ]
    );
    let ubuntu = family_default_lookups("Ubuntu", K129).unwrap();
    assert_eq!(
        ubuntu[1].path,
        "/aws/service/canonical/ubuntu/eks/20.04/1.29/stable/current/arm64/hvm/ebs-gp2/ami-id"
    );
    assert_eq!(
        family_default_lookups("Windows2019", K129).unwrap().len(),
        1
    );
    assert!(matches!(
        family_default_lookups("Custom", K129),
        Err(AmiError::NoSelector(_))
    ));
}

#[test]
fn v1_terms_become_describe_images_queries() {
    let name_only = term_query(&AmiSelectorTerm {
        name: Some("amazon-eks-node-*".into()),
        ..AmiSelectorTerm::default()
    });
    assert_eq!(
        name_only.owners,
        ["self", "amazon"],
        "name without owner: self,amazon"
    );
    assert_eq!(
        name_only.filters,
        vec![
            Filter::new("name", ["amazon-eks-node-*"]),
            Filter::new("state", ["available"])
        ]
    );
    let tags_only = term_query(&AmiSelectorTerm {
        tags: map(&[("team", "platform"), ("env", "*"), ("owners", "a,b")]),
        ..AmiSelectorTerm::default()
    });
    assert!(
        tags_only.owners.is_empty(),
        "tags only: every visible image"
    );
    assert_eq!(
        tags_only.filters,
        vec![
            Filter::new("tag-key", ["env"]),
            Filter::new("tag:owners", ["a,b"]),
            Filter::new("tag:team", ["platform"]),
            Filter::new("state", ["available"]),
        ]
    );
    let owned = term_query(&AmiSelectorTerm {
        name: Some("x".into()),
        owner: Some("0123456789".into()),
        ..AmiSelectorTerm::default()
    });
    assert_eq!(owned.owners, ["0123456789"]);
}

#[test]
fn v1alpha1_ami_selector_is_one_query_with_comma_lists() {
    let ids = legacy_query(&map(&[("aws::ids", "ami-1, ami-2,")]));
    assert!(ids.owners.is_empty(), "ids: no default owners");
    assert_eq!(ids.filters[0], Filter::new("image-id", ["ami-1", "ami-2"]));
    let legacy_ids = legacy_query(&map(&[("aws-ids", "ami-3")]));
    assert_eq!(legacy_ids.filters[0], Filter::new("image-id", ["ami-3"]));
    let named = legacy_query(&map(&[
        ("aws::name", "eks-*"),
        ("team", "a,b"),
        ("env", "*"),
    ]));
    assert_eq!(named.owners, ["self", "amazon"]);
    assert_eq!(
        named.filters,
        vec![
            Filter::new("name", ["eks-*"]),
            Filter::new("tag-key", ["env"]),
            Filter::new("tag:team", ["a", "b"]),
            Filter::new("state", ["available"]),
        ]
    );
    // v0.31/v0.32 split aws::name at commas, one term per name (aws v0.32.10
    // pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms): one filter ORing the names.
    let names = legacy_query(&map(&[("aws::name", "eks-a-*, eks-b-*")]));
    assert_eq!(
        names.filters[0],
        Filter::new("name", ["eks-a-*", "eks-b-*"])
    );
    let owners = legacy_query(&map(&[
        ("aws::owners", "self, 0123456789"),
        ("aws::name", "x"),
    ]));
    assert_eq!(owners.owners, ["self", "0123456789"]);
    let tags = legacy_query(&map(&[("team", "a")]));
    assert_eq!(
        tags.owners,
        ["self", "amazon"],
        "v1alpha1 defaults owners for tags too"
    );
}

#[test]
fn plans_per_generation() {
    // v1 alias.
    let p = plan(&v1_class(vec![alias("al2023@latest")]), K129).unwrap();
    assert!(p.uses_kubernetes_version);
    assert_eq!(p.terms[0].label, "alias: al2023@latest");
    assert_eq!(p.ssm_names().len(), 5);
    // v1 selector terms: no version needed.
    let p = plan(
        &v1_class(vec![AmiSelectorTerm {
            id: Some("ami-1".into()),
            ..AmiSelectorTerm::default()
        }]),
        K129,
    )
    .unwrap();
    assert!(!p.uses_kubernetes_version);
    assert_eq!(p.terms[0].source, TermSource::Id("ami-1".into()));
    // v1alpha1 without amiSelector: the family's defaults (AL2 when unset).
    let mut template = NodeClass {
        generation: Some(ApiGeneration::V1Alpha5),
        kind: "AWSNodeTemplate".into(),
        ..NodeClass::default()
    };
    let p = plan(&template, K129).unwrap();
    assert_eq!(p.terms[0].label, "amiFamily: AL2 (default)");
    assert_eq!(p.ssm_names().len(), 3);
    assert!(!p.tag_requirements);
    // v1alpha1 with amiSelector: one legacy query, tag requirements on.
    template
        .legacy_selectors
        .insert("amiSelector".into(), map(&[("aws::ids", "ami-9")]));
    template.ami_selector_terms = vec![AmiSelectorTerm {
        id: Some("ami-9".into()),
        ..AmiSelectorTerm::default()
    }];
    let p = plan(&template, K129).unwrap();
    assert_eq!(p.terms.len(), 1);
    assert_eq!(p.terms[0].label, "amiSelector: {aws::ids: ami-9}");
    assert!(p.tag_requirements);
    // v1beta1 without terms: defaults of its family.
    let beta = NodeClass {
        generation: Some(ApiGeneration::V1Beta1),
        ami_family: Some("Bottlerocket".into()),
        ..NodeClass::default()
    };
    assert_eq!(plan(&beta, K129).unwrap().ssm_names().len(), 4);
    let custom = NodeClass {
        generation: Some(ApiGeneration::V1Beta1),
        ami_family: Some("Custom".into()),
        ..NodeClass::default()
    };
    assert!(matches!(plan(&custom, K129), Err(AmiError::NoSelector(_))));
    // The guard surfaces from planning.
    assert!(plan(
        &v1_class(vec![alias("al2@latest")]),
        KubeVersion::new(1, 34)
    )
    .is_err());
}

#[test]
fn ids_and_ssm_parameters_merge_into_one_query_absent_variants_are_skipped() {
    let class = v1_class(vec![
        AmiSelectorTerm {
            id: Some("ami-1".into()),
            ..AmiSelectorTerm::default()
        },
        AmiSelectorTerm {
            tags: map(&[("team", "a")]),
            ..AmiSelectorTerm::default()
        },
        AmiSelectorTerm {
            ssm_parameter: Some("/golden".into()),
            ..AmiSelectorTerm::default()
        },
        AmiSelectorTerm {
            ssm_parameter: Some("/not-an-ami".into()),
            ..AmiSelectorTerm::default()
        },
        AmiSelectorTerm {
            id: Some("ami-2".into()),
            ..AmiSelectorTerm::default()
        },
    ]);
    let p = plan(&class, K129).unwrap();
    let ssm: SsmValues = [
        ("/golden".to_string(), Some("ami-3".to_string())),
        ("/not-an-ami".to_string(), Some("hello".to_string())),
    ]
    .into_iter()
    .collect();
    let qs = queries(&p, &ssm);
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0].terms, [1]);
    assert_eq!(
        qs[1].query.filters[0],
        Filter::new("image-id", ["ami-1", "ami-3", "ami-2"]),
        "ids merged, last"
    );
    assert_eq!(qs[1].terms, [0, 2, 3, 4]);

    let alias = plan(&v1_class(vec![alias("al2023@latest")]), K129).unwrap();
    let names = alias.ssm_names();
    let mut ssm: SsmValues = names.iter().map(|n| (n.clone(), None)).collect();
    assert!(
        queries(&alias, &ssm).is_empty(),
        "nothing resolved: no query"
    );
    ssm.insert(names[0].clone(), Some("ami-x86".into()));
    ssm.insert(names[3].clone(), Some("ami-arm".into()));
    let qs = queries(&alias, &ssm);
    assert_eq!(qs.len(), 1);
    assert_eq!(
        qs[0].query.filters[0],
        Filter::new("image-id", ["ami-arm", "ami-x86"])
    );
    assert!(qs[0].query.owners.is_empty());
    assert_eq!(
        qs[0].known["ami-x86"],
        vec![Variant::Standard.requirements()]
    );
}

fn one_query(images: Vec<Image>) -> (Vec<PlannedQuery>, Vec<Vec<Image>>) {
    (
        vec![PlannedQuery {
            query: ImageQuery::default(),
            known: BTreeMap::new(),
            terms: vec![0],
        }],
        vec![images],
    )
}

fn ids(images: &[ResolvedImage]) -> Vec<&str> {
    images.iter().map(|i| i.id.as_str()).collect()
}

#[test]
fn selection_prefers_non_deprecated_then_newer_then_greater_name_per_architecture() {
    let (q, r) = one_query(vec![
        image("ami-a1", "team-amd64-1", "x86_64", "2024-01-15T00:00:00Z"),
        deprecated(
            image("ami-a2", "team-amd64-2", "x86_64", "2024-05-15T00:00:00Z"),
            "2024-06-01T00:00:00Z",
        ),
        image("ami-r1", "team-arm64-1", "arm64", "2024-02-15T00:00:00Z"),
        image("ami-r2", "team-arm64-2", "arm64", "2024-04-15T00:00:00Z"),
        image("ami-i386", "team-i386", "i386", "2024-06-15T00:00:00Z"),
        // Deprecation in the future does not count.
        deprecated(
            image("ami-r0", "team-arm64-0", "arm64", "2024-01-01T00:00:00Z"),
            "2099-01-01T00:00:00Z",
        ),
    ]);
    let got = select(&q, &r, now(), false);
    assert_eq!(
        ids(&got),
        ["ami-r2", "ami-a1"],
        "newest first; deprecated and i386 lose"
    );
    assert_eq!(
        got[0].requirements,
        vec![req(labels::ARCH, Operator::In, &["arm64"])]
    );
    assert_eq!(got[1].architecture, "amd64");
    assert!(!got[1].deprecated);

    // Every candidate deprecated: the newest deprecated one is still chosen, and says so.
    let (q, r) = one_query(vec![
        deprecated(
            image("ami-1", "a", "x86_64", "2024-01-01T00:00:00Z"),
            "2024-02-01T00:00:00Z",
        ),
        deprecated(
            image("ami-2", "b", "x86_64", "2024-03-01T00:00:00Z"),
            "2024-04-01T00:00:00Z",
        ),
    ]);
    let got = select(&q, &r, now(), false);
    assert_eq!(ids(&got), ["ami-2"]);
    assert!(got[0].deprecated);

    // Same creation date: the greater name wins, whatever the order returned.
    for order in [["ami-x", "ami-y"], ["ami-y", "ami-x"]] {
        let images = order
            .iter()
            .map(|id| {
                image(
                    id,
                    if *id == "ami-x" { "name-b" } else { "name-a" },
                    "x86_64",
                    "2024-01-01T00:00:00Z",
                )
            })
            .collect();
        let (q, r) = one_query(images);
        assert_eq!(ids(&select(&q, &r, now(), false)), ["ami-x"]);
    }
}

#[test]
fn known_requirement_sets_split_one_image_and_order_is_date_then_id() {
    let q = vec![PlannedQuery {
        query: ImageQuery::default(),
        known: [
            (
                "ami-gpu".to_string(),
                vec![
                    Variant::Neuron.requirements(),
                    Variant::Nvidia.requirements(),
                ],
            ),
            (
                "ami-std".to_string(),
                vec![Variant::Standard.requirements()],
            ),
            (
                "ami-arm".to_string(),
                vec![Variant::Standard.requirements()],
            ),
        ]
        .into_iter()
        .collect(),
        terms: vec![0],
    }];
    let r = vec![vec![
        image("ami-std", "std", "x86_64", "2024-06-25T00:00:00Z"),
        image("ami-gpu", "gpu", "x86_64", "2024-06-25T00:00:00Z"),
        image("ami-arm", "arm", "arm64", "2024-06-20T00:00:00Z"),
    ]];
    let got = select(&q, &r, now(), false);
    assert_eq!(ids(&got), ["ami-gpu", "ami-gpu", "ami-std", "ami-arm"]);
    // Requirements sorted by key length, then key.
    assert_eq!(
        got[2].requirements,
        vec![
            req(labels::ARCH, Operator::In, &["amd64"]),
            req(labels::INSTANCE_GPU_COUNT, Operator::DoesNotExist, &[]),
            req(
                labels::INSTANCE_ACCELERATOR_COUNT,
                Operator::DoesNotExist,
                &[]
            ),
        ]
    );
    let gpu_sets: Vec<&str> = got[..2]
        .iter()
        .map(|i| i.requirements[1].key.as_str())
        .collect();
    assert_eq!(gpu_sets.len(), 2);
    assert_ne!(gpu_sets[0], gpu_sets[1]);
    // Missing creation dates sort last.
    let (q, r) = one_query(vec![
        Image {
            creation_date: None,
            ..image("ami-old", "z", "arm64", "")
        },
        image("ami-new", "a", "x86_64", "2020-01-01T00:00:00Z"),
    ]);
    assert_eq!(ids(&select(&q, &r, now(), false)), ["ami-new", "ami-old"]);
}

#[test]
fn v1alpha1_well_known_tags_become_requirements() {
    let mut tagged = image("ami-1", "a", "x86_64", "2024-01-01T00:00:00Z");
    tagged.tags = map(&[
        (labels::INSTANCE_TYPE, "m5.large"),
        ("team", "a"),
        ("kubernetes.io/arch", "arm64"),
    ]);
    let (q, r) = one_query(vec![tagged]);
    let got = select(&q, &r, now(), true);
    assert_eq!(
        got[0].requirements,
        vec![
            req(labels::ARCH, Operator::In, &["amd64"]),
            req(labels::INSTANCE_TYPE, Operator::In, &["m5.large"]),
        ],
        "the image's architecture wins over an arch tag; non-label tags ignored"
    );
    let got = select(&q, &r, now(), false);
    assert_eq!(
        got[0].requirements.len(),
        1,
        "EC2NodeClasses use the architecture only"
    );
}

fn eks_fake() -> FakeCloud {
    let base = "/aws/service/eks/optimized-ami/1.29/amazon-linux-2023";
    let mut fake = FakeCloud::new();
    for (arch, variant, id) in [
        ("x86_64", "standard", "ami-x86-std"),
        ("x86_64", "nvidia", "ami-x86-nv"),
        ("x86_64", "neuron", "ami-x86-neu"),
        ("arm64", "standard", "ami-arm-std"),
    ] {
        fake = fake
            .parameter(&format!("{base}/{arch}/{variant}/recommended/image_id"), id)
            .image(
                Image {
                    owner_id: Some("602401143452".into()),
                    ..image(
                        id,
                        &format!("al2023-{arch}-{variant}"),
                        arch,
                        "2024-06-25T00:00:00Z",
                    )
                },
                Some("amazon"),
            );
    }
    fake.parameter(
        "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.29/image_id",
        "ami-win",
    )
    .image(image("ami-win", "windows", "x86_64", "2024-06-11T00:00:00Z"), Some("amazon"))
}

#[test]
fn resolve_all_batches_ssm_names_across_classes_and_sends_each_query_once() {
    let fake = eks_fake();
    let a = v1_class(vec![alias("al2023@latest")]);
    let b = v1_class(vec![alias("al2023@latest")]);
    let w = v1_class(vec![alias("windows2022@latest")]);
    let al2 = v1_class(vec![alias("al2@latest")]);
    let got = resolve_all(&fake, &[&a, &b, &w, &al2], K129, now());
    // 5 + 1 + 3 distinct names = 9 → one call; the two al2023 classes share one query.
    assert_eq!(fake.call_counts().get("SSM.GetParameters"), 1);
    assert_eq!(fake.call_counts().get("EC2.DescribeImages"), 2);
    let a = got[0].as_ref().unwrap();
    // arm64 nvidia is absent from SSM: skipped, the rest resolves.
    assert_eq!(
        ids(&a.images),
        ["ami-arm-std", "ami-x86-neu", "ami-x86-nv", "ami-x86-std"]
    );
    assert_eq!(a.ssm.values().filter(|v| v.is_none()).count(), 1);
    assert_eq!(got[1].as_ref().unwrap().images, a.images);
    let w = got[2].as_ref().unwrap();
    assert_eq!(
        w.images[0].requirements,
        vec![
            req(labels::OS, Operator::In, &["windows"]),
            req(labels::ARCH, Operator::In, &["amd64"]),
            req(labels::WINDOWS_BUILD, Operator::In, &["10.0.20348"]),
        ]
    );
    // No AL2 parameter exists: resolved to nothing, and the problem names the alias.
    let al2 = got[3].as_ref().unwrap();
    assert!(al2.images.is_empty());
    let problem = al2.problem().unwrap();
    assert!(
        problem.contains("alias: al2@latest: none of its 3 SSM parameters exists"),
        "{problem}"
    );
}

#[test]
fn resolve_all_uses_batches_of_ten() {
    let fake = eks_fake();
    let classes: Vec<NodeClass> = ["al2023@latest", "al2023@v1", "al2023@v2"]
        .iter()
        .map(|a| v1_class(vec![alias(a)]))
        .collect();
    let refs: Vec<&NodeClass> = classes.iter().collect();
    let got = resolve_all(&fake, &refs, K129, now());
    assert_eq!(
        fake.call_counts().get("SSM.GetParameters"),
        2,
        "15 names → 2 calls"
    );
    assert_eq!(
        fake.call_counts().get("EC2.DescribeImages"),
        1,
        "pinned ones resolve nothing"
    );
    assert!(got[1].as_ref().unwrap().images.is_empty());
}

#[test]
fn ssm_failures_fail_the_classes_that_needed_ssm() {
    let fake = eks_fake().image(
        image("ami-t", "team", "arm64", "2024-01-01T00:00:00Z"),
        None,
    );
    fake.fail(
        "SSM.GetParameters",
        CloudError::Api {
            service: "SSM".into(),
            operation: "GetParameters".into(),
            code: "AccessDeniedException".into(),
            message: "not authorized to perform: ssm:GetParameters".into(),
        },
    );
    let a = v1_class(vec![alias("al2023@latest")]);
    let ids_only = v1_class(vec![AmiSelectorTerm {
        id: Some("ami-t".into()),
        ..AmiSelectorTerm::default()
    }]);
    let got = resolve_all(&fake, &[&a, &ids_only], K129, now());
    match &got[0] {
        Err(AmiError::Cloud(e)) => assert!(e.is_permission()),
        other => panic!("expected a permission error, got {other:?}"),
    }
    assert_eq!(ids(&got[1].as_ref().unwrap().images), ["ami-t"]);
}

#[test]
fn no_match_and_wrong_architecture_problems_are_explained() {
    let fake = FakeCloud::new().image(image("ami-i", "x", "i386", "2024-01-01T00:00:00Z"), None);
    let term = |tags: &[(&str, &str)]| AmiSelectorTerm {
        tags: map(tags),
        ..AmiSelectorTerm::default()
    };
    let none = v1_class(vec![term(&[("team", "nobody")])]);
    let got = resolve_all(&fake, &[&none], K129, now());
    assert_eq!(
        got[0].as_ref().unwrap().problem().unwrap(),
        "no AMIs resolved: no image matches"
    );
    let i386 = v1_class(vec![AmiSelectorTerm {
        name: Some("x".into()),
        ..AmiSelectorTerm::default()
    }]);
    let got = resolve_all(&fake, &[&i386], K129, now());
    assert!(got[0]
        .as_ref()
        .unwrap()
        .problem()
        .unwrap()
        .contains("none with a supported architecture"));
}

/// `aws v1.14.1: pkg/providers/amifamily/suite_test.go` "AMIProvider", through [`resolve_all`]
/// on the fake: per alias the number of AMIs upstream's `List` returns for its SSM parameters
/// ("should succeed to resolve AMIs (AL2 / AL2023 / Bottlerocket / Windows2019 / 2022 / 2025)":
/// 4, 2, 5, 1, 1, 1 — a GPU image serving NVIDIA and Neuron counts twice), "SSM Alias Missing"
/// (2, 1, 4), the version guards ("should fail when AL2 is used with Kubernetes version 1.33 or
/// greater", 4 Entries; "should fail to resolve AMIs for Windows2025 when EKS version is below
/// 1.35"), "should ignore images when image.state != available" (every other state), "AMI Tag
/// Requirements › should succeed to not resolve tags as requirements for NodeClasses", "AMI List
/// requirements" (the four deprecation Its), "should correctly disambiguate AND vs OR semantics
/// for tags", and the SSM-parameter Its.
#[test]
fn amifamily_suite_resolves_as_the_provider() {
    let k = K129;
    let (amd, arm, amd_nv, arm_nv) = ("ami-amd", "ami-arm", "ami-amd-nv", "ami-arm-nv");
    let images = |fake: FakeCloud| {
        [
            (amd, "x86_64", "0001-01-01T00:00:00Z"),
            (arm, "arm64", "0001-01-01T00:01:00Z"),
            (amd_nv, "x86_64", "0001-01-01T00:02:00Z"),
            (arm_nv, "arm64", "0001-01-01T00:02:00Z"),
        ]
        .into_iter()
        .fold(fake, |f, (id, arch, created)| {
            let mut i = image(id, id, arch, created);
            i.tags = map(&[("Name", id), ("foo", "bar")]);
            f.image(i, None)
        })
    };
    let count = |params: &[(&str, &str)], a: &str, k: KubeVersion| {
        let fake = params
            .iter()
            .fold(images(FakeCloud::new()), |f, (p, v)| f.parameter(p, v));
        let class = v1_class(vec![alias(a)]);
        resolve_all(&fake, &[&class], k, now())
            .remove(0)
            .map(|r| r.images.len())
    };
    let eks = "/aws/service/eks/optimized-ami/1.29";
    let br = "/aws/service/bottlerocket/aws-k8s-1.29";
    let win = |y: &str| {
        format!(
            "/aws/service/ami-windows-latest/Windows_Server-{y}-English-Core-EKS_Optimized-1.29/image_id"
        )
    };
    let al2 = [
        (&*format!("{eks}/amazon-linux-2/recommended/image_id"), amd),
        (
            &*format!("{eks}/amazon-linux-2-gpu/recommended/image_id"),
            amd_nv,
        ),
        (
            &*format!("{eks}/amazon-linux-2-arm64/recommended/image_id"),
            arm,
        ),
    ];
    assert_eq!(count(&al2, "al2@latest", k).ok(), Some(4), "AL2");
    assert_eq!(
        count(&[al2[0], al2[2]], "al2@latest", k).ok(),
        Some(2),
        "AL2 partial"
    );
    let al2023 = [
        (
            &*format!("{eks}/amazon-linux-2023/x86_64/standard/recommended/image_id"),
            amd,
        ),
        (
            &*format!("{eks}/amazon-linux-2023/arm64/standard/recommended/image_id"),
            arm,
        ),
    ];
    assert_eq!(count(&al2023, "al2023@latest", k).ok(), Some(2), "AL2023");
    assert_eq!(
        count(&al2023[..1], "al2023@latest", k).ok(),
        Some(1),
        "AL2023 partial"
    );
    let bottlerocket = [
        (&*format!("{br}/x86_64/latest/image_id"), amd),
        (&*format!("{br}-nvidia/x86_64/latest/image_id"), amd_nv),
        (&*format!("{br}/arm64/latest/image_id"), arm),
        (&*format!("{br}-nvidia/arm64/latest/image_id"), arm_nv),
    ];
    assert_eq!(
        count(&bottlerocket, "bottlerocket@latest", k).ok(),
        Some(5),
        "Bottlerocket"
    );
    assert_eq!(
        count(&bottlerocket[..3], "bottlerocket@latest", k).ok(),
        Some(4),
        "Bottlerocket partial"
    );
    for year in ["2019", "2022"] {
        let p = win(year);
        let got = count(&[(&p, amd)], &format!("windows{year}@latest"), k).ok();
        assert_eq!(got, Some(1), "Windows{year}");
    }
    let p = win("2025").replace("1.29", "1.35");
    let got = count(&[(&p, amd)], "windows2025@latest", KubeVersion::new(1, 35)).ok();
    assert_eq!(got, Some(1), "Windows2025");
    let err = count(&[], "windows2025@latest", KubeVersion::new(1, 34)).unwrap_err();
    assert!(err.to_string().contains("1.35"), "{err}");
    for (version, a, fails) in [
        (KubeVersion::new(1, 33), "al2@latest", true),
        (KubeVersion::new(1, 34), "al2@latest", true),
        (KubeVersion::new(1, 32), "al2@latest", false),
        (KubeVersion::new(1, 33), "al2023@latest", false),
    ] {
        assert_eq!(count(&[], a, version).is_err(), fails, "{a} on {version}");
    }

    // A term selecting by tags; `now` is the fake clock.
    let tagged = |tags: &[(&str, &str)]| {
        v1_class(vec![AmiSelectorTerm {
            tags: map(tags),
            ..AmiSelectorTerm::default()
        }])
    };
    let resolve = |fake: &FakeCloud, class: &NodeClass| {
        resolve_all(fake, &[class], k, now())
            .remove(0)
            .unwrap()
            .images
    };
    for state in [
        "pending",
        "invalid",
        "deregistered",
        "transient",
        "failed",
        "error",
        "disabled",
    ] {
        let mut other = image("ami-456", "b", "arm64", "2022-08-15T12:00:00Z");
        other.state = Some(state.into());
        other.tags = map(&[("test", "test")]);
        let mut ok = image("ami-123", "a", "x86_64", "2022-08-15T12:00:00Z");
        ok.tags = map(&[("test", "test")]);
        let fake = FakeCloud::new().image(ok, None).image(other, None);
        assert_eq!(
            ids(&resolve(&fake, &tagged(&[("test", "test")]))),
            ["ami-123"],
            "{state}"
        );
    }
    let mut labelled = image(amd, amd, "x86_64", "2024-12-01T00:00:00Z");
    labelled.tags = map(&[
        ("Name", amd),
        (labels::INSTANCE_TYPE, "m5.large"),
        (labels::ZONE, "test-zone-1a"),
    ]);
    let got = resolve(
        &FakeCloud::new().image(labelled, None),
        &tagged(&[("*", "*")]),
    );
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].requirements,
        vec![req(labels::ARCH, Operator::In, &["amd64"])],
        "tags are not requirements of an EC2NodeClass's AMI"
    );

    // "AMI List requirements": now is 2025-01-01T00:00:00Z.
    let dep = |id: &str, name: &str, created: &str, deprecation: Option<&str>| {
        let mut i = image(id, name, "x86_64", created);
        i.deprecation_time = deprecation.map(str::to_string);
        i.tags = map(&[("Name", name), ("foo", "bar")]);
        i
    };
    let (hour_ago, ten_ago, in_ten) = (
        Some("2024-12-31T23:00:00Z"),
        Some("2024-12-31T23:50:00Z"),
        Some("2025-01-01T00:10:00Z"),
    );
    let cases = [
        (
            "should prioritize the older non-deprecated ami without deprecation time",
            [
                dep("ami-5678", amd, "2021-08-31T00:12:42.000Z", hour_ago),
                dep("ami-1234", amd, "2020-08-31T00:08:42.000Z", None),
            ],
            ("ami-1234", false),
        ),
        (
            "should prioritize the non-deprecated ami with deprecation time when both have same creation time",
            [
                dep("ami-5678", amd, "2021-08-31T00:12:42.000Z", ten_ago),
                dep("ami-1234", amd, "2021-08-31T00:12:42.000Z", in_ten),
            ],
            ("ami-1234", false),
        ),
        (
            "… and different name",
            [
                dep("ami-5678", "test-ami-2", "2021-08-31T00:12:42.000Z", ten_ago),
                dep("ami-1234", "test-ami-1", "2021-08-31T00:12:42.000Z", in_ten),
            ],
            ("ami-1234", false),
        ),
        (
            "should prioritize the newer ami if both are deprecated",
            [
                dep("ami-5678", amd, "2021-08-31T00:12:42.000Z", hour_ago),
                dep("ami-1234", amd, "2020-08-31T00:08:42.000Z", hour_ago),
            ],
            ("ami-5678", true),
        ),
    ];
    for (it, pair, (want, deprecated)) in cases {
        let fake = pair
            .into_iter()
            .fold(FakeCloud::new(), |f, i| f.image(i, None));
        let got = resolve(&fake, &tagged(&[("*", "*")]));
        assert_eq!(ids(&got), [want], "{it}");
        assert_eq!(got[0].deprecated, deprecated, "{it}");
    }

    // AND within a term, OR across terms.
    let with_tags = |id: &str, arch: &str, tags: &[(&str, &str)]| {
        let mut i = image(id, id, arch, "2022-08-15T12:00:00Z");
        i.tags = map(tags);
        i
    };
    let fake = FakeCloud::new()
        .image(
            with_tags("ami-789", "x86_64", &[("k1", "v1"), ("k2", "v2")]),
            None,
        )
        .image(with_tags("ami-123", "x86_64", &[("k1", "v1")]), None)
        .image(with_tags("ami-456", "arm64", &[("k2", "v2")]), None);
    assert_eq!(
        ids(&resolve(&fake, &tagged(&[("k1", "v1"), ("k2", "v2")]))),
        ["ami-789"]
    );
    let or = v1_class(vec![
        AmiSelectorTerm {
            tags: map(&[("k1", "v1")]),
            ..AmiSelectorTerm::default()
        },
        AmiSelectorTerm {
            tags: map(&[("k2", "v2")]),
            ..AmiSelectorTerm::default()
        },
    ]);
    let got = resolve(&fake, &or);
    // Per architecture the greatest name wins among equal dates: ami-789 over ami-123.
    assert_eq!(ids(&got), ["ami-456", "ami-789"]);

    // "should succeed to resolve AMIs that use a (custom) SSM parameter", "should not throw an
    // error if SSM parameter is not found".
    let by_parameter = |p: &str| {
        v1_class(vec![AmiSelectorTerm {
            ssm_parameter: Some(p.into()),
            ..AmiSelectorTerm::default()
        }])
    };
    let fake = images(FakeCloud::new()).parameter("/my/custom/ami/parameter", amd);
    let got = resolve(&fake, &by_parameter("/my/custom/ami/parameter"));
    assert_eq!(ids(&got), [amd]);
    assert_eq!(got[0].name.as_deref(), Some(amd));
    assert!(resolve(&fake, &by_parameter("/missing")).is_empty());
}

/// Thread aws/karpenter-provider-aws#8055: adding a second `id` term to `amiSelectorTerms`
/// (`[{id: ami-…80f}]` → `[{id: ami-…80f}, {id: ami-…526}]`) replaced the nodes on the first
/// AMI; the reporter expected the terms to be ORed. Karpenter v1.14.1 keeps one image per
/// requirement set across all terms (`aws: pkg/providers/amifamily/ami.go` `amis`: the map of
/// images by requirements hash is shared by every query), so two amd64 images leave only the
/// newer in `status.amis` and the node on the older one is AMI-drifted — as we select.
#[test]
fn two_id_terms_of_one_architecture_keep_only_the_newer_image() {
    let q = |term: usize| PlannedQuery {
        query: ImageQuery::default(),
        known: BTreeMap::new(),
        terms: vec![term],
    };
    // The first term's image (older) of `old_arch`, the second's (newer) amd64.
    let selected = |old_arch: &str| {
        let old = image(
            "ami-007672b66bd72c80f",
            "old",
            old_arch,
            "2025-03-01T00:00:00Z",
        );
        let new = image(
            "ami-0d0c16662b0265526",
            "new",
            "x86_64",
            "2025-04-01T00:00:00Z",
        );
        let got = select(&[q(0), q(1)], &[vec![old], vec![new]], now(), false);
        got.into_iter().map(|i| i.id).collect::<Vec<_>>()
    };
    assert_eq!(selected("x86_64"), ["ami-0d0c16662b0265526"]);
    // An arm64 image beside it is another requirement set: both stay.
    assert_eq!(
        selected("arm64"),
        ["ami-0d0c16662b0265526", "ami-007672b66bd72c80f"]
    );
}
