//! `kubectl karpenter convert` end to end: seed 000's Provisioner + AWSNodeTemplate become a v1
//! NodePool and EC2NodeClass that plan the same, notes reach stderr (and `-q` hides them),
//! every fixture example converts into something `provision` accepts, and bad input exits 2.

use serde_json::Value as Json;
use serde_json::Value;

use crate::support::{fixture, karpenter, root, write_temp, Run};

/// Seed 000's objects (`000_9d09da5d9b52b6f7.txt`), re-indented: the 1.24 AMI template, the
/// Provisioner using it, and `inflate` selecting its nodes.
const SEED_000_KARPENTER: &str = r#"
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: oldnode
spec:
  amiSelector:
    aws::ids: ami-0123456789abcdef0
  subnetSelector:
    alpha.eksctl.io/cluster-name: my-cluster
  securityGroupSelector:
    kubernetes.io/cluster/my-cluster: owned
  tags:
    managed-by: "karpenter"
    intent: "apps"
---
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  providerRef:
    name: oldnode
  labels:
    eks-immersion-team: my-team
  requirements:
    - key: "karpenter.k8s.aws/instance-category"
      operator: In
      values: ["c", "m", "r"]
    - key: "kubernetes.io/arch"
      operator: In
      values: ["amd64"]
    - key: "karpenter.sh/capacity-type"
      operator: In
      values: ["on-demand"]
  limits:
    resources:
      cpu: "1000"
      memory: 1000Gi
  consolidation:
    enabled: true
"#;

const INFLATE: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 1
  selector:
    matchLabels:
      app: inflate
  template:
    metadata:
      labels:
        app: inflate
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: inflate
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
          resources:
            requests:
              cpu: 1
      nodeSelector:
        eks-immersion-team: my-team
"#;

/// Seed 000's objects with `inflate` (also `cli`'s seed 000 plan).
pub(crate) fn seed_000() -> String {
    format!("{SEED_000_KARPENTER}---{INFLATE}")
}

/// Every YAML document of a multi-document text.
fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(text).unwrap()
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in {docs:#?}"))
}

fn plan(manifest: &str) -> (Run, Json) {
    let run = karpenter(
        &["provision", "--dry-run", "-f", "-", "-o", "json"],
        manifest.as_bytes(),
    );
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run, json)
}

fn convert_stdin(manifest: &str, extra: &[&str]) -> Run {
    let mut args = vec!["convert", "-f", "-"];
    args.extend_from_slice(extra);
    karpenter(&args, manifest.as_bytes())
}

/// Seed 000 converts to a NodePool with the v1alpha5 defaults written out and an
/// EC2NodeClass selecting the template's AMI by ID; the notes reach stderr and the documents.
#[test]
fn convert_seed_000_writes_explicit_defaults_and_id_terms() {
    let run = convert_stdin(&seed_000(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = documents(&run.stdout);
    assert_eq!(
        docs.len(),
        2,
        "the Deployment is not printed: {}",
        run.stdout
    );

    let pool = find(&docs, "NodePool", "default");
    assert_eq!(pool["apiVersion"], "karpenter.sh/v1");
    let spec = &pool["spec"]["template"]["spec"];
    let reqs: Vec<(String, String, Vec<String>)> = spec["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let values = r["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            (
                r["key"].as_str().unwrap().to_string(),
                r["operator"].as_str().unwrap().to_string(),
                values,
            )
        })
        .collect();
    // As written, plus the one webhook default the Provisioner left open (os); the category
    // is constrained, so no category/generation defaults are due.
    let expect = |k: &str, op: &str, vs: &[&str]| {
        assert!(
            reqs.contains(&(
                k.to_string(),
                op.to_string(),
                vs.iter().map(|s| s.to_string()).collect()
            )),
            "{k} {op} {vs:?} missing from {reqs:?}"
        )
    };
    expect("kubernetes.io/os", "In", &["linux"]);
    expect("kubernetes.io/arch", "In", &["amd64"]);
    expect("karpenter.sh/capacity-type", "In", &["on-demand"]);
    expect(
        "karpenter.k8s.aws/instance-category",
        "In",
        &["c", "m", "r"],
    );
    assert_eq!(reqs.len(), 4, "{reqs:?}");
    assert_eq!(spec["nodeClassRef"]["group"], "karpenter.k8s.aws");
    assert_eq!(spec["nodeClassRef"]["kind"], "EC2NodeClass");
    assert_eq!(spec["nodeClassRef"]["name"], "oldnode");
    assert_eq!(spec["expireAfter"], "Never");
    assert_eq!(
        pool["spec"]["template"]["metadata"]["labels"]["eks-immersion-team"],
        "my-team"
    );
    assert_eq!(
        pool["spec"]["disruption"]["consolidationPolicy"],
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(pool["spec"]["disruption"]["consolidateAfter"], "0s");
    assert_eq!(pool["spec"]["limits"]["memory"], "1000Gi");

    let class = find(&docs, "EC2NodeClass", "oldnode");
    assert_eq!(class["apiVersion"], "karpenter.k8s.aws/v1");
    let terms = class["spec"]["amiSelectorTerms"].as_array().unwrap();
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0]["id"], "ami-0123456789abcdef0");
    assert_eq!(class["spec"]["amiFamily"], "AL2");
    assert_eq!(
        class["spec"]["subnetSelectorTerms"][0]["tags"]["alpha.eksctl.io/cluster-name"],
        "my-cluster"
    );
    assert_eq!(
        class["spec"]["metadataOptions"]["httpPutResponseHopLimit"],
        2
    );
    assert_eq!(class["spec"]["tags"]["intent"], "apps");

    // Notes: on stderr without -v, one line each, and atop the affected document.
    let os_note = run
        .stderr
        .lines()
        .find(|l| l.starts_with("note: <stdin>: Provisioner/default: spec.requirements: "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(os_note.contains("kubernetes.io/os In [linux]"), "{os_note}");
    assert!(
        run.stdout.contains(&format!("# {os_note}\n")),
        "{}",
        run.stdout
    );
    for needle in [
        "Provisioner/default: spec.ttlSecondsUntilExpired: absent: wrote spec.template.spec.expireAfter: Never",
        "Provisioner/default: spec.disruption.budgets: ",
        "AWSNodeTemplate/oldnode: spec.instanceProfile: absent",
        "AWSNodeTemplate/oldnode: spec.metadataOptions: absent",
        "not printed: Deployment/inflate",
    ] {
        assert!(run.stderr.contains(needle), "{needle} not in\n{}", run.stderr);
    }
    assert!(
        run.stderr.lines().all(|l| l.starts_with("note: ")),
        "{}",
        run.stderr
    );
}

/// The converted objects plan the same instance type for `inflate` as the originals.
#[test]
fn convert_seed_000_plans_the_same_instance_type() {
    let (before_run, before) = plan(&seed_000());
    assert_eq!(before_run.code, 0, "{}", before_run.stderr);
    let converted = convert_stdin(&seed_000(), &[]);
    assert_eq!(converted.code, 0, "{}", converted.stderr);
    let v1 = format!("{}---{INFLATE}", converted.stdout);
    let (after_run, after) = plan(&v1);
    assert_eq!(after_run.code, 0, "{}\n{v1}", after_run.stderr);
    let (b, a) = (&before["nodeClaims"], &after["nodeClaims"]);
    assert_eq!(b.as_array().unwrap().len(), 1, "{before:#}");
    assert_eq!(a.as_array().unwrap().len(), 1, "{after:#}");
    assert_eq!(a[0]["instanceType"], b[0]["instanceType"]);
    assert_eq!(a[0]["instanceTypes"], b[0]["instanceTypes"]);
    assert_eq!(a[0]["capacityType"], "on-demand");
    assert_eq!(a[0]["nodePool"], "default");
    assert_eq!(a[0]["nodeClass"], "oldnode");
    assert_eq!(a[0]["labels"]["kubernetes.io/os"], "linux");
}

/// `-q` hides the notes, the output is the same; `-v` changes nothing either.
#[test]
fn convert_notes_are_hidden_by_quiet_only() {
    let plain = convert_stdin(SEED_000_KARPENTER, &[]);
    let quiet = convert_stdin(SEED_000_KARPENTER, &["-q"]);
    let verbose = convert_stdin(SEED_000_KARPENTER, &["-v"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "");
    assert!(!plain.stderr.is_empty());
    assert_eq!(plain.stderr, verbose.stderr);
    assert_eq!(plain.stdout, quiet.stdout, "notes never change the output");
    assert_eq!(plain.stdout, verbose.stdout);
}

/// Every v1alpha5 and v1beta1 fixture example converts, and `provision` takes the result; files
/// and directories work and the output is deterministic.
#[test]
fn convert_every_fixture_example_and_plan_it() {
    for dir in ["v1alpha5", "v1beta1"] {
        let dir = fixture(&format!("examples/{dir}"));
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let path = file.to_str().unwrap();
            let run = karpenter(&["convert", "-f", path], b"");
            assert_eq!(run.code, 0, "{path}: {}", run.stderr);
            for d in documents(&run.stdout) {
                let version = d["apiVersion"].as_str().unwrap();
                assert!(
                    version == "karpenter.sh/v1" || version == "karpenter.k8s.aws/v1",
                    "{path}: {version}"
                );
            }
            let out = write_temp(
                &format!("convert-{}", file.file_name().unwrap().to_str().unwrap()),
                run.stdout.as_bytes(),
            );
            let planned = karpenter(
                &[
                    "provision",
                    "--dry-run",
                    "-f",
                    out.to_str().unwrap(),
                    "-o",
                    "json",
                ],
                b"",
            );
            assert!(
                planned.code == 0 || planned.code == 1,
                "{path}: converted output rejected: {}\n{}",
                planned.stderr,
                run.stdout
            );
        }
    }
    // A directory (Provisioner and template in separate files, plus an app manifest): the same
    // documents, in file order, deterministically; `--to v1` is the default.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e/convert-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let (template, provisioner) = SEED_000_KARPENTER.split_once("---").unwrap();
    std::fs::write(dir.join("a-provisioner.yaml"), provisioner).unwrap();
    std::fs::write(dir.join("b-template.yaml"), template).unwrap();
    std::fs::write(dir.join("c-app.yaml"), INFLATE).unwrap();
    let dir = dir.to_str().unwrap();
    let first = karpenter(&["convert", "-f", dir, "--to", "v1"], b"");
    let second = karpenter(&["convert", "-f", dir], b"");
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.stderr, second.stderr);
    let docs = documents(&first.stdout);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["NodePool", "EC2NodeClass"]);
    assert!(
        first
            .stderr
            .contains("a-provisioner.yaml: Provisioner/default: "),
        "{}",
        first.stderr
    );
    assert!(
        first
            .stderr
            .contains("b-template.yaml: AWSNodeTemplate/oldnode: "),
        "{}",
        first.stderr
    );
}

/// The quickstart (seed 001, v1beta1) notes what changes and keeps the rest.
#[test]
fn convert_quickstart_notes_alias_and_metadata_options() {
    let path = root().join("examples/manifests/quickstart.yaml");
    let run = karpenter(&["convert", "-f", path.to_str().unwrap()], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = documents(&run.stdout);
    let pool = find(&docs, "NodePool", "default");
    assert_eq!(
        pool["spec"]["disruption"]["consolidationPolicy"],
        "WhenEmpty"
    );
    assert_eq!(pool["spec"]["disruption"]["consolidateAfter"], "30s");
    assert_eq!(pool["spec"]["template"]["spec"]["expireAfter"], "Never");
    assert_eq!(pool["spec"]["limits"]["cpu"], "10");
    let class = find(&docs, "EC2NodeClass", "default");
    assert_eq!(class["spec"]["amiSelectorTerms"][0]["alias"], "al2@latest");
    assert_eq!(class["spec"]["role"], "karpenterNodeRole-my-cluster");
    assert!(run
        .stderr
        .contains("EC2NodeClass/default: spec.amiSelectorTerms: absent: wrote amiSelectorTerms [{alias: al2@latest}]"));
    assert!(run
        .stderr
        .contains("EC2NodeClass/default: spec.metadataOptions: absent"));
}

/// Bad input is one line on stderr and exit 2; so is input with nothing to convert, and
/// `--to` anything but v1.
#[test]
fn convert_bad_input_exits_2_with_one_line() {
    let cases: &[(&[&str], &[u8], &str)] = &[
        (&["convert", "-f", "-"], b"a: [1,\n", "malformed YAML"),
        (
            &["convert", "-f", "-"],
            INFLATE.as_bytes(),
            "no Karpenter objects to convert",
        ),
        (
            &["convert", "-f", "-"],
            b"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: x\n      requirements:\n        - key: a\n          operator: Inn\n",
            "NodePool/p: spec.template.spec.requirements[0].operator",
        ),
        (
            &["convert", "-f", "/nonexistent/convert.yaml"],
            b"",
            "no such file or directory",
        ),
    ];
    for (args, stdin, needle) in cases {
        let run = karpenter(args, stdin);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}: nothing is printed on error");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    let run = karpenter(&["convert", "-f", "-", "--to", "v1beta1"], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("v1beta1"), "{}", run.stderr);
    let run = karpenter(&["convert"], b"");
    assert_eq!(run.code, 2, "-f is required: {}", run.stderr);
}

/// `--kubernetes-version` fills the Ubuntu SSM paths; without it a placeholder is written.
#[test]
fn convert_ubuntu_uses_the_kubernetes_version() {
    let path = fixture("examples/v1alpha5/ubuntu-kubelet-log-query.yaml");
    let path = path.to_str().unwrap();
    let run = karpenter(
        &["convert", "-f", path, "--kubernetes-version", "1.28"],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = documents(&run.stdout);
    let class = find(&docs, "EC2NodeClass", "ubuntu");
    assert_eq!(class["spec"]["amiFamily"], "AL2");
    assert_eq!(
        class["spec"]["amiSelectorTerms"][0]["ssmParameter"],
        "/aws/service/canonical/ubuntu/eks/20.04/1.28/stable/current/amd64/hvm/ebs-gp2/ami-id"
    );
    let run = karpenter(&["convert", "-f", path], b"");
    assert!(
        run.stdout.contains("${KUBERNETES_VERSION}"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("--kubernetes-version"),
        "{}",
        run.stderr
    );
}
