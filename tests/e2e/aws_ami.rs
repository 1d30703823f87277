//! `kubectl karpenter ami` against moto: every alias per docs/karpenter.md §3 (variants, pinned
//! versions, missing variants, version guards), selector terms (deprecated vs newer,
//! architecture split), v1alpha1 `amiSelector` (seed walkthrough 000), the JSON contract, the
//! AWS call budget, and bad input.

use serde_json::Value;

use crate::moto::{karpenter_command, run, Moto};
use crate::support::{self, Run};

fn v1_class(name: &str, terms: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: {name}
spec:
  amiSelectorTerms:
{terms}
  role: KarpenterNodeRole-test
  subnetSelectorTerms:
  - tags: {{karpenter.sh/discovery: test-cluster}}
  securityGroupSelectorTerms:
  - tags: {{karpenter.sh/discovery: test-cluster}}
"
    )
}

fn alias_class(name: &str, alias: &str) -> String {
    v1_class(name, &format!("  - alias: {alias}"))
}

/// Runs `ami -f <manifest> --kubernetes-version K -o json` against the shared moto.
fn ami_json(file: &str, manifest: &str, k: &str, extra: &[&str]) -> (Run, Value) {
    let moto = Moto::shared();
    let path = support::write_temp(file, manifest.as_bytes());
    let mut args = vec![
        "ami",
        "-f",
        path.to_str().unwrap(),
        "--kubernetes-version",
        k,
        "-o",
        "json",
    ];
    args.extend(extra);
    let run = moto.karpenter(&args, &[]);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run, doc)
}

/// `(id, architecture, requirements as "key op [values]")` of a class's final images.
fn images(class: &Value) -> Vec<(String, String, Vec<String>)> {
    class["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let reqs = i["requirements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let values: Vec<&str> = r["values"]
                        .as_array()
                        .map(|v| v.iter().map(|x| x.as_str().unwrap()).collect())
                        .unwrap_or_default();
                    format!(
                        "{} {} [{}]",
                        r["key"].as_str().unwrap(),
                        r["operator"].as_str().unwrap(),
                        values.join(",")
                    )
                })
                .collect();
            (
                i["id"].as_str().unwrap().to_string(),
                i["architecture"].as_str().unwrap().to_string(),
                reqs,
            )
        })
        .collect()
}

fn ids(class: &Value) -> Vec<String> {
    images(class).into_iter().map(|(id, _, _)| id).collect()
}

const ARCH_AMD64: &str = "kubernetes.io/arch In [amd64]";
const ARCH_ARM64: &str = "kubernetes.io/arch In [arm64]";
const NO_GPU: &str = "karpenter.k8s.aws/instance-gpu-count DoesNotExist []";
const NO_ACCEL: &str = "karpenter.k8s.aws/instance-accelerator-count DoesNotExist []";
const GPU: &str = "karpenter.k8s.aws/instance-gpu-count Exists []";
const ACCEL: &str = "karpenter.k8s.aws/instance-accelerator-count Exists []";

fn standard(arch: &str) -> Vec<String> {
    vec![arch.into(), NO_GPU.into(), NO_ACCEL.into()]
}

#[test]
fn al2023_latest_resolves_every_variant_and_skips_the_absent_one() {
    let moto = Moto::shared();
    let (run, doc) = ami_json(
        "al2023.yaml",
        &alias_class("default", "al2023@latest"),
        "1.29",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(doc["kind"], "AMIResolution");
    assert_eq!(doc["apiVersion"], "kubectl-karpenter/v1");
    assert_eq!(doc["kubernetesVersion"], "1.29");
    assert_eq!(doc["kubernetesVersionSource"], "flag");
    let class = &doc["nodeClasses"][0];
    let base = "/aws/service/eks/optimized-ami/1.29/amazon-linux-2023";
    let id = |arch: &str, variant: &str| {
        moto.param(&format!("{base}/{arch}/{variant}/recommended/image_id"))
    };
    let mut want = vec![
        (
            id("x86_64", "standard"),
            "amd64".to_string(),
            standard(ARCH_AMD64),
        ),
        (
            id("x86_64", "nvidia"),
            "amd64".into(),
            vec![ARCH_AMD64.into(), GPU.into()],
        ),
        (
            id("x86_64", "neuron"),
            "amd64".into(),
            vec![ARCH_AMD64.into(), ACCEL.into()],
        ),
        (
            id("arm64", "standard"),
            "arm64".into(),
            standard(ARCH_ARM64),
        ),
    ];
    // Same creation date for all: ordered by id.
    want.sort();
    assert_eq!(images(class), want);
    // Five terms shown: the arm64 nvidia parameter does not exist for 1.29 (a variant absent).
    let terms = class["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 5);
    let absent: Vec<&str> = terms
        .iter()
        .filter(|t| t["value"].is_null())
        .map(|t| t["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        absent,
        [format!("{base}/arm64/nvidia/recommended/image_id")]
    );
    assert!(terms
        .iter()
        .all(|t| t["term"] == "alias: al2023@latest" && t["sourceType"] == "SSM"));
    // One GetParameters for five names, one DescribeImages.
    assert_eq!(doc["awsCalls"]["calls"]["SSM.GetParameters"], 1);
    assert_eq!(doc["awsCalls"]["calls"]["EC2.DescribeImages"], 1);
}

#[test]
fn al2_latest_gives_the_gpu_image_two_requirement_sets_and_pinned_versions_use_their_paths() {
    let moto = Moto::shared();
    let manifest = [
        alias_class("latest", "al2@latest"),
        alias_class("pinned", "al2@v20240101"),
    ]
    .join("---\n");
    let (run, doc) = ami_json("al2.yaml", &manifest, "1.29", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let latest = &doc["nodeClasses"][0];
    let gpu = moto.image("amazon-eks-gpu-node-1.29-v20240625");
    let got = images(latest);
    assert_eq!(got.len(), 4, "{got:?}");
    let gpu_sets: Vec<&Vec<String>> = got
        .iter()
        .filter(|(id, _, _)| *id == gpu)
        .map(|(_, _, r)| r)
        .collect();
    assert_eq!(
        gpu_sets,
        [
            &vec![ARCH_AMD64.to_string(), ACCEL.into()],
            &vec![ARCH_AMD64.to_string(), GPU.into()]
        ],
        "same image and date: ordered by requirements"
    );
    assert!(got.contains(&(
        moto.image("amazon-eks-node-1.29-v20240625"),
        "amd64".into(),
        standard(ARCH_AMD64)
    )));
    assert!(got.contains(&(
        moto.image("amazon-eks-arm64-node-1.29-v20240625"),
        "arm64".into(),
        standard(ARCH_ARM64)
    )));
    // The pinned release is reached through its own parameters, and it is deprecated.
    let pinned = &doc["nodeClasses"][1];
    let pinned_ids = ids(pinned);
    assert!(pinned_ids.contains(&moto.image("amazon-eks-node-1.29-v20240101")));
    assert!(pinned_ids.contains(&moto.image("amazon-eks-arm64-node-1.29-v20240101")));
    assert!(pinned["images"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["deprecated"] == true));
    assert_eq!(
        pinned["terms"][0]["source"],
        "/aws/service/eks/optimized-ami/1.29/amazon-linux-2/amazon-eks-node-1.29-v20240101/image_id"
    );
}

#[test]
fn bottlerocket_latest_pinned_and_a_missing_nvidia_variant() {
    let moto = Moto::shared();
    let manifest = [
        alias_class("latest", "bottlerocket@latest"),
        alias_class("pinned-v", "bottlerocket@v1.19.0"),
        alias_class("pinned", "bottlerocket@1.19.0"),
    ]
    .join("---\n");
    let (run, doc) = ami_json("bottlerocket.yaml", &manifest, "1.30", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let br = |flavour: &str, arch: &str, v: &str| {
        moto.image(&format!("bottlerocket-{flavour}-{arch}-v{v}-5f4e3d2c"))
    };
    let got = images(&doc["nodeClasses"][0]);
    let x86 = br("aws-k8s-1.30", "x86_64", "1.20.0");
    // The standard x86_64 image serves standard and Neuron instance types.
    let x86_sets: Vec<&Vec<String>> = got
        .iter()
        .filter(|(id, _, _)| *id == x86)
        .map(|(_, _, r)| r)
        .collect();
    assert_eq!(x86_sets.len(), 2);
    assert!(x86_sets.contains(&&standard(ARCH_AMD64)));
    assert!(x86_sets.contains(&&vec![ARCH_AMD64.to_string(), ACCEL.into()]));
    for (flavour, arch) in [
        ("aws-k8s-1.30", "arm64"),
        ("aws-k8s-1.30-nvidia", "x86_64"),
        ("aws-k8s-1.30-nvidia", "arm64"),
    ] {
        assert!(
            got.iter()
                .any(|(id, _, _)| *id == br(flavour, arch, "1.20.0")),
            "{flavour} {arch}"
        );
    }
    assert_eq!(got.len(), 5);
    for class in [&doc["nodeClasses"][1], &doc["nodeClasses"][2]] {
        assert!(ids(class).contains(&br("aws-k8s-1.30", "x86_64", "1.19.0")));
        assert_eq!(
            class["terms"][0]["source"],
            "/aws/service/bottlerocket/aws-k8s-1.30/x86_64/1.19.0/image_id"
        );
    }
    // 1.25 has no NVIDIA Bottlerocket: the alias still resolves, without GPU images.
    let (run, doc) = ami_json(
        "bottlerocket-125.yaml",
        &alias_class("latest", "bottlerocket@latest"),
        "1.25",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got = images(&doc["nodeClasses"][0]);
    assert_eq!(
        got.len(),
        3,
        "x86_64 standard+neuron, arm64 standard: {got:?}"
    );
    assert!(got.iter().all(|(_, _, r)| !r.contains(&GPU.to_string())));
}

#[test]
fn windows_aliases_and_the_version_guards() {
    let moto = Moto::shared();
    let (run, doc) = ami_json(
        "windows.yaml",
        &alias_class("win", "windows2022@latest"),
        "1.30",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        images(&doc["nodeClasses"][0]),
        [(
            moto.image("Windows_Server-2022-English-Core-EKS_Optimized-1.30-2024.06.11"),
            "amd64".to_string(),
            vec![
                "kubernetes.io/os In [windows]".to_string(),
                ARCH_AMD64.into(),
                "node.kubernetes.io/windows-build In [10.0.20348]".into(),
            ]
        )]
    );
    // windows2025 needs 1.35 (main), AL2 stops at 1.32: clear errors, exit 3, nothing else lost.
    let manifest = [
        alias_class("win2025", "windows2025@latest"),
        alias_class("al2", "al2@latest"),
        alias_class("fine", "al2023@latest"),
    ]
    .join("---\n");
    let (run, doc) = ami_json("guards.yaml", &manifest, "1.34", &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("2 node classes resolved no AMI"),
        "{}",
        run.stderr
    );
    let w = &doc["nodeClasses"][0];
    assert_eq!(w["reason"], "UnsupportedKubernetesVersion");
    assert!(w["error"]
        .as_str()
        .unwrap()
        .contains("windows2025@latest cannot be used with Kubernetes 1.34"));
    assert!(doc["nodeClasses"][1]["error"]
        .as_str()
        .unwrap()
        .contains("al2@latest cannot be used with Kubernetes 1.34"));
    assert_eq!(ids(&doc["nodeClasses"][2]).len(), 5);
    let (run, doc) = ami_json(
        "win2025.yaml",
        &alias_class("win2025", "windows2025@latest"),
        "1.35",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        ids(&doc["nodeClasses"][0]),
        [moto.image("Windows_Server-2025-English-Core-EKS_Optimized-1.35-2024.06.11")]
    );
}

#[test]
fn an_alias_with_no_parameters_for_the_version_fails_with_the_paths_tried() {
    // No AL2023 AMIs exist for 1.24, and no release v19990101 for 1.29.
    let (run, doc) = ami_json(
        "al2023-124.yaml",
        &alias_class("old", "al2023@latest"),
        "1.24",
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    let class = &doc["nodeClasses"][0];
    assert_eq!(class["reason"], "AMINotFound");
    assert!(
        class["error"]
            .as_str()
            .unwrap()
            .contains("alias: al2023@latest: none of its 5 SSM parameters exists"),
        "{class}"
    );
    assert!(
        run.stderr
            .contains("error: EC2NodeClass/old: no AMIs resolved"),
        "{}",
        run.stderr
    );
    assert_eq!(
        doc["awsCalls"]["calls"]["EC2.DescribeImages"],
        Value::Null,
        "no image query without ids"
    );
    let (run, _) = ami_json(
        "al2023-pin.yaml",
        &alias_class("old", "al2023@v19990101"),
        "1.29",
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
}

#[test]
fn selector_terms_choose_newest_non_deprecated_per_architecture() {
    let moto = Moto::shared();
    let manifest = [
        v1_class("tags", "  - tags: {team: platform}"),
        v1_class("name", "  - name: amazon-eks-node-1.29-*"),
        v1_class(
            "mixed",
            &format!(
                "  - id: {}\n  - ssmParameter: /team/golden-ami\n  - ssmParameter: /team/not-an-ami\n  - tags: {{owners: \"a,b\"}}",
                moto.image("team-node-amd64-2024.05")
            ),
        ),
        v1_class("self-owned", "  - name: team-node-*\n    owner: self"),
    ]
    .join("---\n")
    .replace("spec:\n  amiSelectorTerms", "spec:\n  amiFamily: AL2023\n  amiSelectorTerms");
    let (run, doc) = ami_json("terms.yaml", &manifest, "1.29", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Tags: the newer amd64 image is deprecated, so the older one wins; arm64 takes the newest;
    // the i386 image has no Kubernetes architecture and is dropped.
    let tags = &doc["nodeClasses"][0];
    assert_eq!(
        ids(tags),
        [
            moto.image("team-node-arm64-2024.04"),
            moto.image("team-node-amd64-2024.01")
        ]
    );
    assert_eq!(
        tags["terms"][0]["source"],
        "tag:team=platform state=available"
    );
    assert_eq!(
        tags["images"][0]["requirements"].as_array().unwrap().len(),
        1,
        "architecture only"
    );
    // Name without owner: owners self,amazon; the non-deprecated release wins.
    let name = &doc["nodeClasses"][1];
    assert_eq!(ids(name), [moto.image("amazon-eks-node-1.29-v20240625")]);
    assert_eq!(
        name["terms"][0]["source"],
        "owners=[self,amazon] name=amazon-eks-node-1.29-* state=available"
    );
    // An id naming a deprecated amd64 image, an ssmParameter naming an arm64 image, one whose
    // value is not an AMI (skipped), and a tag value with a comma matched literally. Terms are
    // ORed and the winners chosen across them: the non-deprecated amd64 image of the tag term
    // beats the id's deprecated one.
    let mixed = &doc["nodeClasses"][2];
    assert_eq!(
        ids(mixed),
        [
            moto.image("team-node-arm64-2024.04"),
            moto.image("other-node-amd64-2024.03")
        ]
    );
    let terms = mixed["terms"].as_array().unwrap();
    assert_eq!(terms[0]["sourceType"], "DescribeImages");
    assert!(
        terms[0]["images"].as_array().unwrap().is_empty(),
        "the id's image lost"
    );
    assert_eq!(terms[1]["value"], moto.image("team-node-arm64-2024.04"));
    assert_eq!(
        terms[1]["images"][0]["id"],
        moto.image("team-node-arm64-2024.04")
    );
    assert_eq!(terms[2]["value"], "hello");
    assert!(terms[2]["images"].as_array().unwrap().is_empty());
    assert_eq!(terms[3]["source"], "tag:owners=a,b state=available");
    assert_eq!(
        terms[3]["images"][0]["id"],
        moto.image("other-node-amd64-2024.03")
    );
    assert!(mixed["images"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["deprecated"] == false));
    // Owner self with a name wildcard: the team images only.
    let own = &doc["nodeClasses"][3];
    assert_eq!(
        ids(own),
        [
            moto.image("team-node-arm64-2024.04"),
            moto.image("team-node-amd64-2024.01")
        ]
    );
}

fn template(name: &str, ami_selector: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: {name}
spec:
{ami_selector}
  subnetSelector:
    alpha.eksctl.io/cluster-name: test-cluster
  securityGroupSelector:
    kubernetes.io/cluster/test-cluster: owned
  tags:
    managed-by: karpenter
    intent: apps
"
    )
}

#[test]
fn seed_000_oldnode_pins_the_1_24_ami_read_from_ssm() {
    let moto = Moto::shared();
    // export AMI_OLD=$(aws ssm get-parameter --name /aws/service/eks/optimized-ami/1.24/amazon-linux-2/recommended/image_id ...)
    let ami_old =
        moto.param("/aws/service/eks/optimized-ami/1.24/amazon-linux-2/recommended/image_id");
    let ami_new =
        moto.param("/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id");
    let manifest = [
        template(
            "oldnode",
            &format!("  amiSelector:\n    aws::ids: {ami_old}"),
        ),
        template(
            "newnode",
            &format!("  amiSelector:\n    aws::ids: {ami_new}"),
        ),
    ]
    .join("---\n");
    // Ids need no Kubernetes version, so none is assumed (and no warning).
    let path = support::write_temp("seed-000.yaml", manifest.as_bytes());
    let run = moto.karpenter(&["ami", "-f", path.to_str().unwrap(), "-o", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("assuming"), "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let old = &doc["nodeClasses"][0];
    assert_eq!(old["kind"], "AWSNodeTemplate");
    assert_eq!(
        images(old),
        [(
            ami_old.clone(),
            "amd64".to_string(),
            vec![ARCH_AMD64.to_string()]
        )]
    );
    assert_eq!(old["images"][0]["name"], "amazon-eks-node-1.24-v20240625");
    assert_eq!(
        old["terms"][0]["term"],
        format!("amiSelector: {{aws::ids: {ami_old}}}")
    );
    assert_eq!(
        old["terms"][0]["source"],
        format!("image-id={ami_old} state=available")
    );
    assert_eq!(ids(&doc["nodeClasses"][1]), [ami_new]);
    // The table names the class, the term and the image.
    let table = moto.karpenter(&["ami", "oldnode", "-f", path.to_str().unwrap()], &[]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    let row = table.stdout.lines().nth(1).unwrap();
    for cell in [
        "oldnode",
        "aws::ids",
        &ami_old,
        "amazon-eks-node-1.24-v20240625",
        "amd64",
        "2024-06-25",
        "no",
    ] {
        assert!(row.contains(cell), "{cell} missing from {row:?}");
    }
}

#[test]
fn v1alpha1_defaults_and_selectors_with_names_owners_and_comma_lists() {
    let moto = Moto::shared();
    let manifest = [
        template("defaults", ""),
        template(
            "named",
            "  amiSelector:\n    aws::name: team-node-*\n    aws::owners: self",
        ),
        template("tags", "  amiSelector:\n    team: \"platform, other\""),
    ]
    .join("---\n");
    let (run, doc) = ami_json("v1alpha1.yaml", &manifest, "1.25", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // No amiSelector: AL2's three default parameters, the GPU image for NVIDIA and Neuron.
    let defaults = &doc["nodeClasses"][0];
    assert_eq!(defaults["terms"][0]["term"], "amiFamily: AL2 (default)");
    let got = ids(defaults);
    assert_eq!(got.len(), 4);
    for name in [
        "amazon-eks-node-1.25-v20240625",
        "amazon-eks-gpu-node-1.25-v20240625",
        "amazon-eks-arm64-node-1.25-v20240625",
    ] {
        assert!(got.contains(&moto.image(name)), "{name}");
    }
    let named = &doc["nodeClasses"][1];
    assert_eq!(
        named["terms"][0]["source"],
        "owners=[self] name=team-node-* state=available"
    );
    assert_eq!(
        ids(named),
        [
            moto.image("team-node-arm64-2024.04"),
            moto.image("team-node-amd64-2024.01")
        ]
    );
    // v1alpha1 splits tag values on commas: platform or other (default owners self,amazon).
    let tags = &doc["nodeClasses"][2];
    assert_eq!(
        tags["terms"][0]["source"],
        "owners=[self,amazon] tag:team=[platform,other] state=available"
    );
    assert_eq!(
        ids(tags),
        [
            moto.image("team-node-arm64-2024.04"),
            moto.image("other-node-amd64-2024.03")
        ]
    );
}

#[test]
fn three_classes_cost_one_get_parameters_and_one_describe_images_each_at_most() {
    let manifest = [
        alias_class("a", "al2023@latest"),
        alias_class("b", "bottlerocket@latest"),
        alias_class("c", "al2023@latest"),
    ]
    .join("---\n");
    let (run, doc) = ami_json("budget.yaml", &manifest, "1.30", &["-v"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // 5 + 4 distinct names → 1 GetParameters; a and c share their DescribeImages.
    assert_eq!(doc["awsCalls"]["calls"]["SSM.GetParameters"], 1);
    assert_eq!(doc["awsCalls"]["calls"]["EC2.DescribeImages"], 2);
    assert!(
        run.stderr
            .contains("note: AWS calls: 3 (EC2.DescribeImages 2, SSM.GetParameters 1)"),
        "{}",
        run.stderr
    );
}

#[test]
fn ami_output_formats() {
    let moto = Moto::shared();
    let path = support::write_temp(
        "formats.yaml",
        alias_class("default", "al2023@latest").as_bytes(),
    );
    let p = path.to_str().unwrap();
    let names = moto.karpenter(&["ami", "-f", p, "-o", "name"], &[]);
    assert_eq!(names.code, 0, "{}", names.stderr);
    // No --kubernetes-version: assumed, and said so.
    assert!(
        names.stderr.contains("assuming Kubernetes 1.32"),
        "{}",
        names.stderr
    );
    assert_eq!(names.stdout.lines().count(), 5, "{}", names.stdout);
    assert!(names.stdout.lines().all(|l| l.starts_with("ami-")));
    let yaml = moto.karpenter(
        &["ami", "-f", p, "-o", "yaml", "--kubernetes-version", "1.30"],
        &[],
    );
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    assert!(
        yaml.stdout.contains("kind: AMIResolution"),
        "{}",
        yaml.stdout
    );
    let wide = moto.karpenter(
        &[
            "ami",
            "-f",
            p,
            "-o",
            "wide",
            "--kubernetes-version",
            "1.30",
            "--no-headers",
        ],
        &[],
    );
    assert_eq!(wide.code, 0, "{}", wide.stderr);
    assert!(
        wide.stdout
            .contains("arch=amd64 !gpu-count !accelerator-count"),
        "{}",
        wide.stdout
    );
    assert!(!wide.stdout.starts_with("NODECLASS"));
}

#[test]
fn ami_bad_input_and_cloud_errors_are_one_line_with_the_right_exit_code() {
    let moto = Moto::shared();
    let path = support::write_temp(
        "bad.yaml",
        alias_class("default", "al2023@latest").as_bytes(),
    );
    let p = path.to_str().unwrap();
    // Without -f, `ami` reads the cluster: no kubeconfig is a cluster error (3) with a hint.
    let no_files = moto.karpenter(&["ami", "--kubeconfig", "/nonexistent/kubeconfig"], &[]);
    assert_eq!(no_files.code, 3, "{}", no_files.stderr);
    assert!(
        no_files.stderr.contains("kubeconfig"),
        "{}",
        no_files.stderr
    );
    let unknown = moto.karpenter(&["ami", "nope", "-f", p], &[]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .stderr
            .contains("node class \"nope\" is not in the input (found: default)"),
        "{}",
        unknown.stderr
    );
    let version = moto.karpenter(&["ami", "-f", p, "--kubernetes-version", "one"], &[]);
    assert_eq!(version.code, 2);
    assert!(
        version
            .stderr
            .contains("--kubernetes-version: invalid Kubernetes version"),
        "{}",
        version.stderr
    );
    // No region anywhere: exit 3, nothing sent.
    let no_region = moto.karpenter(&["ami", "-f", p], &[("AWS_REGION", "")]);
    assert_eq!(no_region.code, 3, "{}", no_region.stderr);
    assert!(
        no_region
            .stderr
            .contains("error: no AWS region: pass --region"),
        "{}",
        no_region.stderr
    );
    // A region moto does not know of is still a region: empty account, nothing resolves.
    let elsewhere = moto.karpenter(
        &[
            "ami",
            "-f",
            p,
            "--region",
            "eu-west-3",
            "--kubernetes-version",
            "1.30",
        ],
        &[],
    );
    assert_eq!(elsewhere.code, 3, "{}", elsewhere.stderr);
    assert!(
        elsewhere.stderr.contains("no AMIs resolved"),
        "{}",
        elsewhere.stderr
    );
    // Nothing listens: a transport error naming the call.
    let mut cmd = karpenter_command(&[
        "ami",
        "-f",
        p,
        "--region",
        "us-east-1",
        "--kubernetes-version",
        "1.30",
    ]);
    cmd.env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "y")
        .env("AWS_MAX_ATTEMPTS", "1");
    let down = run(cmd);
    assert_eq!(down.code, 3, "{}", down.stderr);
    assert!(
        down.stderr.contains("SSM GetParameters:"),
        "{}",
        down.stderr
    );
    assert!(
        down.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count()
            == 1,
        "{}",
        down.stderr
    );
}

#[test]
fn an_ssm_permission_error_is_reported_with_the_permission_to_grant() {
    let moto = Moto::start(&["--iam"]);
    let limited = &moto.seed["credentials"]["limited"];
    let manifest = [
        alias_class("alias", "al2023@latest"),
        v1_class("tags", "  - tags: {team: platform}").replace(
            "spec:\n  amiSelectorTerms",
            "spec:\n  amiFamily: AL2023\n  amiSelectorTerms",
        ),
    ]
    .join("---\n");
    let path = support::write_temp("denied.yaml", manifest.as_bytes());
    let run = moto.karpenter(
        &[
            "ami",
            "-f",
            path.to_str().unwrap(),
            "--kubernetes-version",
            "1.30",
            "-o",
            "json",
        ],
        &[
            (
                "AWS_ACCESS_KEY_ID",
                limited["accessKeyId"].as_str().unwrap(),
            ),
            (
                "AWS_SECRET_ACCESS_KEY",
                limited["secretAccessKey"].as_str().unwrap(),
            ),
        ],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("EC2NodeClass/alias: SSM GetParameters: AccessDenied: User: arn:aws:iam::123456789012:user/limited is not authorized to perform: ssm:GetParameters"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: the AWS identity lacks a permission of deploy/iam-policy.json"),
        "{}",
        run.stderr
    );
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["nodeClasses"][0]["reason"], "PermissionDenied");
    // The class that needs no SSM still resolves (EC2 describes are allowed).
    assert_eq!(ids(&doc["nodeClasses"][1]).len(), 2);
}

/// With no region anywhere in the AWS chain, the error suggests the region of the EKS cluster
/// the kubeconfig points at.
#[test]
fn no_region_suggests_the_kubeconfig_eks_region() {
    let class = crate::support::write_temp(
        "no-region-class.yaml",
        b"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  role: r\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n",
    );
    let kubeconfig = crate::support::write_temp(
        "eks-kubeconfig.yaml",
        b"apiVersion: v1\nkind: Config\ncurrent-context: arn:aws:eks:eu-west-1:123456789012:cluster/prod\ncontexts:\n- name: arn:aws:eks:eu-west-1:123456789012:cluster/prod\n  context: {cluster: prod, user: prod}\nclusters: []\nusers: []\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args([
            "ami",
            "-f",
            class.to_str().unwrap(),
            "--kubernetes-version",
            "1.30",
        ])
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_PROFILE")
        .env("AWS_CONFIG_FILE", "/nonexistent/config")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("no AWS region"), "{stderr}");
    assert!(stderr.contains("--region eu-west-1"), "{stderr}");
}
