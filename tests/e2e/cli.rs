//! The built binary on manifests: the seed walkthroughs offline, every output format, stdin and
//! directories, custom catalogs, and the bad-input corpus (exit 2, one line, never a panic).

use serde_json::Value;

use crate::support::{fixture, karpenter, root, write_temp, Run};

const QUICKSTART: &str = "examples/manifests/quickstart.yaml";

fn quickstart_with_replicas(n: usize) -> String {
    let text = std::fs::read_to_string(root().join(QUICKSTART)).unwrap();
    text.replace("replicas: 5", &format!("replicas: {n}"))
}

fn plan_json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
}

fn plan_for(manifest: &str, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["provision", "--dry-run", "-f", "-", "-o", "json"];
    args.extend_from_slice(extra);
    let run = karpenter(&args, manifest.as_bytes());
    let json = plan_json(&run);
    (run, json)
}

fn vcpus(claim: &Value) -> i64 {
    claim["labels"]["karpenter.k8s.aws/instance-cpu"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Seed 001: NodePool + EC2NodeClass (v1beta1, as written) and `inflate` at 5 replicas of 1 CPU
/// → one NodeClaim launched as c6a.2xlarge holding all 5 pods.
#[test]
fn seed_001_five_replicas_launch_one_c6a_2xlarge() {
    let (run, plan) = plan_for(&quickstart_with_replicas(5), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(plan["apiVersion"], "kubectl-karpenter/v1");
    assert_eq!(plan["kind"], "ProvisioningPlan");
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{plan:#}");
    let claim = &claims[0];
    assert_eq!(claim["instanceType"], "c6a.2xlarge");
    assert_eq!(claim["capacityType"], "on-demand");
    assert_eq!(claim["pricePerHour"], 0.306);
    assert_eq!(claim["pods"].as_array().unwrap().len(), 5);
    assert_eq!(claim["labels"]["eks-immersion-team"], "my-team");
    assert_eq!(claim["labels"]["karpenter.sh/nodepool"], "default");
    let reqs = claim["requirements"].as_array().unwrap();
    let instance_types = reqs
        .iter()
        .find(|r| r["key"] == "node.kubernetes.io/instance-type")
        .unwrap();
    assert!(instance_types["values"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "c6a.2xlarge"));
    assert!(plan["unschedulable"].as_array().unwrap().is_empty());
}

/// The NodePool's template annotations are on the plan's NodeClaims (`core v1.14.1:
/// pkg/controllers/provisioning/suite_test.go` "Annotations › should annotate nodes"), with the
/// pool's `karpenter.sh/nodepool-hash` and its version, as Karpenter writes them on every
/// NodeClaim it creates (`scheduling/nodeclaimtemplate.go`; the quickstart's v1beta1 pool: v2,
/// v0.37's). The template annotations are part of the hash.
#[test]
fn template_annotations_are_on_the_planned_nodeclaims() {
    let manifest = quickstart_with_replicas(1).replace(
        "    metadata:\n      labels:\n        eks-immersion-team: my-team\n",
        "    metadata:\n      annotations:\n        karpenter.sh/do-not-disrupt: \"true\"\n      labels:\n        eks-immersion-team: my-team\n",
    );
    let (run, plan) = plan_for(&manifest, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let annotations = &plan["nodeClaims"][0]["annotations"];
    assert_eq!(annotations["karpenter.sh/do-not-disrupt"], "true");
    assert_eq!(annotations["karpenter.sh/nodepool-hash-version"], "v2");
    assert_eq!(annotations.as_object().unwrap().len(), 3, "{annotations}");
    let (_, plain) = plan_for(&quickstart_with_replicas(1), &[]);
    let plain = &plain["nodeClaims"][0]["annotations"];
    assert_eq!(plain.as_object().unwrap().len(), 2, "{plain}");
    assert!(plain["karpenter.sh/nodepool-hash"]
        .as_str()
        .unwrap()
        .parse::<u64>()
        .is_ok());
    assert_ne!(
        plain["karpenter.sh/nodepool-hash"],
        annotations["karpenter.sh/nodepool-hash"]
    );
}

/// Seed 001 at 20 replicas: `limits.cpu: "10"` caps planned capacity at 10 CPU and the rest are
/// reported unschedulable, naming the limit; exit 1.
#[test]
fn seed_001_twenty_replicas_stop_at_the_cpu_limit() {
    let (run, plan) = plan_for(&quickstart_with_replicas(20), &[]);
    assert_eq!(
        run.code, 1,
        "unschedulable pods make exit 1: {}",
        run.stderr
    );
    let claims = plan["nodeClaims"].as_array().unwrap();
    let cpu: i64 = claims.iter().map(vcpus).sum();
    assert!(
        cpu <= 10,
        "planned {cpu} vCPU of capacity with a 10 CPU limit: {plan:#}"
    );
    let placed: usize = claims
        .iter()
        .map(|c| c["pods"].as_array().unwrap().len())
        .sum();
    let unschedulable = plan["unschedulable"].as_array().unwrap();
    assert_eq!(placed + unschedulable.len(), 20);
    assert!(placed >= 7, "an 8-vCPU node holds 7 pods: {placed}");
    for u in unschedulable {
        let reason = u["reason"].as_str().unwrap();
        assert!(
            reason.contains("NodePool default: limit cpu=10 reached"),
            "{reason}"
        );
        assert_eq!(u["reasonCode"], "LimitReached");
    }
    // The table says the same to a person.
    let table = karpenter(
        &["provision", "--dry-run", "-f", "-"],
        quickstart_with_replicas(20).as_bytes(),
    );
    assert_eq!(table.code, 1);
    assert!(
        table.stdout.contains("UNSCHEDULABLE-POD"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("limit cpu=10 reached"),
        "{}",
        table.stdout
    );
}

/// The same walkthrough with the NodePool converted to v1 plans the same.
#[test]
fn seed_001_converted_to_v1_plans_the_same() {
    let converted = karpenter(&["convert", "-f", QUICKSTART], b"");
    assert_eq!(converted.code, 0, "{}", converted.stderr);
    assert!(
        converted.stdout.contains("apiVersion: karpenter.sh/v1"),
        "{}",
        converted.stdout
    );
    assert!(
        converted
            .stdout
            .contains("apiVersion: karpenter.k8s.aws/v1"),
        "{}",
        converted.stdout
    );
    let workload = quickstart_with_replicas(5);
    let deployment = &workload[workload.find("apiVersion: apps/v1").unwrap()..];
    let v1 = format!("{}\n---\n{deployment}", converted.stdout);
    let (run, plan) = plan_for(&v1, &[]);
    assert_eq!(run.code, 0, "{}\n{v1}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0]["instanceType"], "c6a.2xlarge");
    let v1_20 = v1.replace("replicas: 5", "replicas: 20");
    let (run, plan) = plan_for(&v1_20, &[]);
    assert_eq!(run.code, 1);
    let cpu: i64 = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(vcpus)
        .sum();
    assert!(cpu <= 10);
}

/// Seed 000: Provisioner + AWSNodeTemplate and `inflate` (1 CPU, 1 replica) → one NodeClaim
/// within the v1alpha5 defaults (linux, amd64, on-demand, c/m/r).
#[test]
fn seed_000_provisioner_plans_within_v1alpha5_defaults() {
    let (run, plan) = plan_for(&crate::convert::seed_000(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1);
    let c = &claims[0];
    assert_eq!(c["nodePool"], "default");
    assert_eq!(c["nodeClass"], "oldnode");
    assert_eq!(c["capacityType"], "on-demand");
    assert_eq!(c["labels"]["kubernetes.io/os"], "linux");
    assert_eq!(c["labels"]["kubernetes.io/arch"], "amd64");
    assert_eq!(c["labels"]["karpenter.sh/provisioner-name"], "default");
    let category = c["labels"]["karpenter.k8s.aws/instance-category"]
        .as_str()
        .unwrap();
    assert!(["c", "m", "r"].contains(&category), "{category}");
    let generation: i64 = c["labels"]["karpenter.k8s.aws/instance-generation"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(generation > 2);
    for t in c["instanceTypes"].as_array().unwrap() {
        let name = t.as_str().unwrap();
        assert!(name.starts_with(['c', 'm', 'r']), "{name} outside c/m/r");
    }
}

#[test]
fn every_output_format_renders() {
    let manifest = quickstart_with_replicas(5);
    let table = karpenter(&["provision", "--dry-run", "-f", "-"], manifest.as_bytes());
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.starts_with("NODECLAIM"), "{}", table.stdout);
    assert!(table.stdout.contains("c6a.2xlarge"));
    let no_headers = karpenter(
        &["provision", "--dry-run", "-f", "-", "--no-headers"],
        manifest.as_bytes(),
    );
    assert!(
        no_headers.stdout.starts_with("default-1"),
        "{}",
        no_headers.stdout
    );
    let wide = karpenter(
        &["provision", "--dry-run", "-f", "-", "-o", "wide"],
        manifest.as_bytes(),
    );
    assert!(wide.stdout.contains("ZONES"), "{}", wide.stdout);
    let yaml = karpenter(
        &["provision", "--dry-run", "-f", "-", "-o", "yaml"],
        manifest.as_bytes(),
    );
    let doc: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).unwrap();
    assert_eq!(doc["kind"], "ProvisioningPlan");
    let name = karpenter(
        &["provision", "--dry-run", "-f", "-", "-o", "name"],
        manifest.as_bytes(),
    );
    assert_eq!(name.stdout, "nodeclaim/default-1\n");
}

#[test]
fn reads_directories_files_and_json_lists() {
    let dir = root().join("examples/manifests");
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            dir.to_str().unwrap(),
            "-o",
            "json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [{
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "lonely", "namespace": "apps"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "250m"}}}]}
        }]
    });
    let pool = std::fs::read_to_string(root().join(QUICKSTART)).unwrap();
    let pool = &pool[..pool.find("apiVersion: apps/v1").unwrap()];
    let pool_path = write_temp("pool.yaml", pool.as_bytes());
    let list_path = write_temp("list.json", list.to_string().as_bytes());
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            pool_path.to_str().unwrap(),
            "-f",
            list_path.to_str().unwrap(),
            "-o",
            "json",
        ],
        b"",
    );
    // The bare pod has no nodeSelector for the pool's label but the pool sets it: it fits.
    let plan = plan_json(&run);
    assert_eq!(plan["nodeClaims"][0]["pods"][0], "apps/lonely", "{plan:#}");
}

#[test]
fn custom_catalog_replaces_the_embedded_one() {
    let catalog = r#"
instanceTypes:
- name: tiny.small
  capacity: {cpu: "2", memory: 4Gi, pods: "20"}
  labels: {karpenter.k8s.aws/instance-category: c}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.01, available: true}
- name: huge.big
  capacity: {cpu: "64", memory: 256Gi, pods: "200"}
  labels: {karpenter.k8s.aws/instance-category: c}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 1.0, available: true}
"#;
    let path = write_temp("catalog.yaml", catalog.as_bytes());
    let (run, plan) = plan_for(
        &quickstart_with_replicas(1),
        &["--catalog", path.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(plan["nodeClaims"][0]["instanceType"], "tiny.small");
}

#[test]
fn nodepool_filter_and_unknown_nodepool() {
    let (run, _) = plan_for(&quickstart_with_replicas(1), &["--nodepool", "default"]);
    assert_eq!(run.code, 0);
    let run = karpenter(
        &["provision", "--dry-run", "-f", "-", "--nodepool", "nope"],
        quickstart_with_replicas(1).as_bytes(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--nodepool nope"), "{}", run.stderr);
}

/// Every fixture example manifest, with a workload, plans without an input error.
#[test]
fn every_fixture_example_loads_and_plans() {
    let workload = fixture("examples/workloads/inflate.yaml");
    for generation in ["v1alpha5", "v1beta1", "v1"] {
        let dir = fixture(&format!("examples/{generation}"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let run = karpenter(
                &[
                    "provision",
                    "--dry-run",
                    "-f",
                    path.to_str().unwrap(),
                    "-f",
                    workload.to_str().unwrap(),
                    "-o",
                    "json",
                ],
                b"",
            );
            assert!(
                run.code == 0 || run.code == 1,
                "{}: exit {}: {}",
                path.display(),
                run.code,
                run.stderr
            );
            plan_json(&run);
        }
    }
}

/// The bad-input corpus: exit 2, one line naming file/object/field, never a panic.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let pool = |extra: &str| {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: broken\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n{extra}"
        )
    };
    let class = "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  role: r\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n";
    let cases: Vec<(&str, String, &[&str])> = vec![
        ("malformed YAML", "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n".into(), &["malformed.yaml"]),
        ("unknown apiVersion", "apiVersion: karpenter.sh/v9\nkind: NodePool\nmetadata: {name: x}\n".into(), &["karpenter.sh/v9"]),
        ("unknown kind", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: x}\n".into(), &["Gizmo"]),
        (
            "bad operator",
            pool("      requirements:\n      - {key: kubernetes.io/arch, operator: Inn, values: [amd64]}\n") + class,
            &["NodePool/broken", "requirements[0].operator", "Inn"],
        ),
        (
            "bad quantity",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n    resources: {requests: {cpu: 1x5}}\n".into(),
            &["Pod/p", "cpu", "1x5"],
        ),
        ("missing nodeClassRef target", pool("      requirements: []\n"), &["NodePool/broken", "default"]),
        ("missing requirements (the CRD requires them)", pool("") + class, &["input.yaml", "NodePool/broken", "spec.template.spec.requirements: Required value"]),
        (
            "number where the API types a string",
            pool("      requirements: []\n").replace("  template:\n", "  template:\n    metadata: {labels: {tier: 1}}\n") + class,
            &["NodePool/broken", "spec.template.metadata.labels.tier", "invalid type: integer `1`, expected a string"],
        ),
        (
            "string where the API types an integer",
            pool("      requirements: []\n").replace("spec:\n  template:", "spec:\n  weight: \"10\"\n  template:") + class,
            &["NodePool/broken", "spec.weight", "invalid type: string \"10\""],
        ),
        ("empty input", String::new(), &["empty.yaml"]),
        ("binary garbage", String::from_utf8_lossy(&[0xff, 0xfe, 0x00, 0x9c, 0x12, 0x80]).into_owned(), &["garbage.yaml"]),
    ];
    for (what, text, needles) in cases {
        let file = match what {
            "malformed YAML" => "malformed.yaml",
            "empty input" => "empty.yaml",
            "binary garbage" => "garbage.yaml",
            _ => "input.yaml",
        };
        let bytes: Vec<u8> = if what == "binary garbage" {
            vec![0xff, 0xfe, 0x00, 0x9c, 0x12, 0x80]
        } else {
            text.into_bytes()
        };
        let path = write_temp(file, &bytes);
        let run = karpenter(
            &["provision", "--dry-run", "-f", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(
            run.code, 2,
            "{what}: exit {} stdout {} stderr {}",
            run.code, run.stdout, run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{what}: {}", run.stderr);
        let first = run.stderr.lines().next().unwrap_or("");
        assert!(first.starts_with("error: "), "{what}: {}", run.stderr);
        assert!(
            run.stderr
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count()
                == 1,
            "{what}: {}",
            run.stderr
        );
        for needle in needles {
            assert!(
                first.contains(needle),
                "{what}: {first:?} should name {needle:?}"
            );
        }
        assert!(run.stdout.is_empty(), "{what}: nothing on stdout");
    }
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let run = karpenter(&["provision", "--bogus"], b"");
    assert_eq!(run.code, 2);
    let help = karpenter(&["--help"], b"");
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("Usage: kubectl karpenter"),
        "{}",
        help.stdout
    );
    assert!(help.stdout.contains("Exit codes"), "{}", help.stdout);
    let version = karpenter(&["version"], b"");
    assert_eq!(version.code, 0);
    assert!(version.stdout.starts_with("kubectl-karpenter v"));
}

const IN_FLIGHT_NODECLAIM: &str = r#"
---
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: default-x7k2p
  labels:
    karpenter.sh/nodepool: default
    eks-immersion-team: my-team
    node.kubernetes.io/instance-type: c6a.2xlarge
    topology.kubernetes.io/zone: us-east-1a
    karpenter.sh/capacity-type: on-demand
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
spec:
  nodeClassRef: {name: default}
  requirements:
  - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
status:
  providerID: aws:///us-east-1a/i-0123456789abcdef0
  capacity: {cpu: "8", memory: 16Gi, pods: "58"}
  allocatable: {cpu: 7910m, memory: 14Gi, pods: "58"}
"#;

/// A NodeClaim launched but not yet registered is capacity Karpenter fills first, and counts
/// against the NodePool's limits.
#[test]
fn in_flight_nodeclaims_are_filled_first_and_count_against_limits() {
    let manifest = format!("{}{IN_FLIGHT_NODECLAIM}", quickstart_with_replicas(5));
    let (run, plan) = plan_for(&manifest, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        plan["nodeClaims"].as_array().unwrap().is_empty(),
        "{plan:#}"
    );
    assert_eq!(plan["existingNodes"][0]["name"], "default-x7k2p");
    assert_eq!(
        plan["existingNodes"][0]["pods"].as_array().unwrap().len(),
        5
    );
    let manifest = format!("{}{IN_FLIGHT_NODECLAIM}", quickstart_with_replicas(20));
    let (run, plan) = plan_for(&manifest, &[]);
    assert_eq!(run.code, 1);
    let new_cpu: i64 = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(vcpus)
        .sum();
    assert!(
        new_cpu <= 2,
        "8 of the 10 CPU limit are in flight: {plan:#}"
    );
}

/// Piped output (and NO_COLOR) has no escape codes; `--color always` forces them.
#[test]
fn colour_only_when_wanted() {
    let manifest = quickstart_with_replicas(20);
    let piped = karpenter(&["provision", "--dry-run", "-f", "-"], manifest.as_bytes());
    assert!(!piped.stdout.contains('\u{1b}'), "{}", piped.stdout);
    let never = karpenter(
        &["provision", "--dry-run", "-f", "-", "--color", "never"],
        manifest.as_bytes(),
    );
    assert!(!never.stdout.contains('\u{1b}'));
    let always = karpenter(
        &["provision", "--dry-run", "-f", "-", "--color", "always"],
        manifest.as_bytes(),
    );
    assert!(always.stdout.contains("\u{1b}["), "{}", always.stdout);
    let json = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            "-",
            "--color",
            "always",
            "-o",
            "json",
        ],
        manifest.as_bytes(),
    );
    assert!(
        !json.stdout.contains('\u{1b}'),
        "machine output is never coloured"
    );
}

/// The real kubectl finds the binary as a plugin and runs it (kubectl >= 1.12 plugin mechanism).
#[test]
fn kubectl_finds_and_runs_the_plugin() {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string());
    let list = std::process::Command::new(&kubectl)
        .args(["plugin", "list"])
        .env("PATH", &path)
        .output()
        .expect("kubectl is needed for the plugin tests (set KUBECTL or put it on PATH)");
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains(&format!("{}/kubectl-karpenter", bin_dir.display())),
        "{listed}"
    );
    let version = std::process::Command::new(&kubectl)
        .args(["karpenter", "version"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        version.status.success(),
        "{}",
        String::from_utf8_lossy(&version.stderr)
    );
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("kubectl-karpenter v"));
    let help = std::process::Command::new(&kubectl)
        .args(["karpenter", "--help"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: kubectl karpenter"));
}

/// Offline assumptions that change a plan are said once on stderr by default (issue #12 item
/// 12), and `-q` hides them; stdout, the plan, is the same either way.
#[test]
fn offline_assumptions_are_said_once_and_q_hides_them() {
    let input = quickstart_with_replicas(5);
    let run = karpenter(&["provision", "--dry-run", "-f", "-"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    for assumption in [
        "warning: assuming: no region given",
        "warning: assuming: node class default has no status.subnets",
    ] {
        assert_eq!(run.stderr.matches(assumption).count(), 1, "{}", run.stderr);
    }
    let quiet = karpenter(
        &["provision", "--dry-run", "-q", "-f", "-"],
        input.as_bytes(),
    );
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "");
    assert_eq!(quiet.stdout, run.stdout);
}
