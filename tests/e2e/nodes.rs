//! `kubectl karpenter nodes` against the local test cluster: two managed m5.large nodes (one
//! with a NodeClaim the controller marked `Drifted`), pods bound to them, one unmanaged node —
//! table, totals, JSON, `-o name`, filters, and AWS being unreachable (one warning, exit 0).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{fixture, Run};
use crate::test_cluster::{Config, TestCluster};

/// A loopback cluster and its kubeconfig (also `kcfg_line_by_line`'s).
pub(crate) struct Kube {
    _cluster: TestCluster,
    pub(crate) dir: PathBuf,
    pub(crate) kubeconfig: PathBuf,
}

impl Kube {
    pub(crate) fn start(test: &str) -> Kube {
        let cluster = TestCluster::start(Config::default()).expect("start test cluster");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("nodes")
            .join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        cluster.write_kubeconfig(&kubeconfig).unwrap();
        Kube {
            _cluster: cluster,
            dir,
            kubeconfig,
        }
    }

    pub(crate) fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl on PATH");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn apply(&self, name: &str, yaml: &str) {
        let path = self.dir.join(name);
        std::fs::write(&path, yaml).unwrap();
        self.kubectl(&["apply", "-f", path.to_str().unwrap()]);
    }

    /// Runs the plugin with AWS made unreachable (closed local port, no retries, dummy keys).
    fn karpenter(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env("HOME", &self.dir)
            .env("NO_COLOR", "1")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .env("AWS_ACCESS_KEY_ID", "AKIDUMMY")
            .env("AWS_SECRET_ACCESS_KEY", "dummy")
            .env("AWS_MAX_ATTEMPTS", "1")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_PROFILE")
            .stdin(Stdio::null())
            .output()
            .expect("run kubectl-karpenter");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

fn node(name: &str, managed: bool) -> String {
    let mut labels = format!("    kubernetes.io/hostname: {name}\n");
    if managed {
        for (k, v) in [
            ("karpenter.sh/nodepool", "default"),
            ("node.kubernetes.io/instance-type", "m5.large"),
            ("topology.kubernetes.io/zone", "us-east-1a"),
            ("topology.kubernetes.io/region", "us-east-1"),
            ("karpenter.sh/capacity-type", "on-demand"),
        ] {
            labels.push_str(&format!("    {k}: {v}\n"));
        }
    }
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels:\n{labels}spec:\n  providerID: aws:///us-east-1a/i-0{name}\nstatus:\n  capacity: {{cpu: \"2\", memory: 8Gi, pods: \"29\"}}\n  allocatable: {{cpu: 1930m, memory: 7Gi, pods: \"29\"}}\n"
    )
}

fn pod(name: &str, node: &str, cpu: &str, memory: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  nodeName: {node}\n  containers:\n  - name: app\n    image: public.ecr.aws/eks-distro/kubernetes/pause:3.7\n    resources:\n      requests: {{cpu: {cpu}, memory: {memory}}}\n"
    )
}

const NODEPOOL: &str = r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
"#;

const NODECLAIM: &str = r#"apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-abcde
  labels:
    karpenter.sh/nodepool: default
    karpenter.sh/capacity-type: on-demand
    node.kubernetes.io/instance-type: m5.large
    topology.kubernetes.io/zone: us-east-1a
spec:
  requirements:
    - key: karpenter.sh/capacity-type
      operator: In
      values: ["on-demand"]
  nodeClassRef:
    group: karpenter.k8s.aws
    kind: EC2NodeClass
    name: default
"#;

/// The cluster of every scenario: CRDs, a NodePool, nodes, a drifted NodeClaim, pods.
fn cluster(test: &str) -> Kube {
    let k = Kube::start(test);
    k.kubectl(&["apply", "-f", fixture("crds/v1").to_str().unwrap()]);
    k.apply("nodepool.yaml", NODEPOOL);
    let nodes = [
        node("node-a", true),
        node("node-b", true),
        node("other", false),
    ];
    k.apply("nodes.yaml", &nodes.join("---\n"));
    k.apply("nodeclaim.yaml", NODECLAIM);
    k.kubectl(&[
        "patch",
        "nodeclaim",
        "default-abcde",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"nodeName":"node-b","providerID":"aws:///us-east-1a/i-0node-b","imageID":"ami-0123","conditions":[{"type":"Drifted","status":"True","reason":"AMIDrift","message":"","lastTransitionTime":"2024-01-01T00:00:00Z"}]}}"#,
    ]);
    let pods = [
        pod("a1", "node-a", "500m", "1Gi"),
        pod("a2", "node-a", "500m", "1Gi"),
        pod("b1", "node-b", "250m", "512Mi"),
        pod("o1", "other", "1", "1Gi"),
    ];
    k.apply("pods.yaml", &pods.join("---\n"));
    k
}

fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

#[test]
fn nodes_table_json_name_and_filters() {
    let k = cluster("table");

    let run = k.karpenter(&["nodes", "--no-aws"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let table = rows(&run.stdout);
    assert_eq!(
        table[0],
        [
            "NODE",
            "NODEPOOL",
            "TYPE",
            "ZONE",
            "CAPACITY",
            "AMI",
            "AGE",
            "STATUS",
            "DRIFT",
            "CPU",
            "MEMORY",
            "PODS",
            "$/HOUR",
            "CONSOLIDATION"
        ],
        "{}",
        run.stdout
    );
    // Managed nodes only, by pool then name; ASCII bars when piped.
    let a = &table[1];
    assert_eq!(
        a[..6],
        [
            "node-a",
            "default",
            "m5.large",
            "us-east-1a",
            "on-demand",
            "-"
        ]
    );
    assert!(a[6].ends_with('s') || a[6].ends_with('m'), "age {}", a[6]);
    assert_eq!(
        a[7..],
        [
            "Ready",
            "-",
            "[####----]",
            "52%",
            "[##------]",
            "29%",
            "2",
            "0.0960",
            "-"
        ],
        "no NodeClaim: no Karpenter decision"
    );
    let b = &table[2];
    assert_eq!(
        b[..6],
        [
            "node-b",
            "default",
            "m5.large",
            "us-east-1a",
            "on-demand",
            "ami-0123"
        ]
    );
    assert_eq!(
        b[7..],
        [
            "Ready",
            "Drifted",
            "[#-------]",
            "13%",
            "[#-------]",
            "7%",
            "1",
            "0.0960",
            "none:not-initialized"
        ]
    );
    assert!(
        !run.stdout.contains("other"),
        "unmanaged node hidden: {}",
        run.stdout
    );
    // Columns line up: every row's CPU bar starts under the CPU header.
    let cpu = lines[0].find("CPU").unwrap();
    assert_eq!(lines[1].find('[').unwrap(), cpu, "{}", run.stdout);
    assert_eq!(lines[2].find('[').unwrap(), cpu, "{}", run.stdout);
    // Totals per pool and overall.
    assert_eq!(lines[3], "");
    assert_eq!(
        table[4],
        [
            "NODEPOOL",
            "NODES",
            "DRIFTED",
            "PODS",
            "CPU",
            "CPU-REQ/ALLOC",
            "MEMORY",
            "MEM-REQ/ALLOC",
            "$/HOUR"
        ]
    );
    assert_eq!(
        table[5],
        [
            "default",
            "2",
            "1",
            "3",
            "[###-----]",
            "32%",
            "1.25/3.86",
            "[#-------]",
            "18%",
            "2.5Gi/14.0Gi",
            "0.1920"
        ]
    );
    assert_eq!(table[6][0], "TOTAL");
    assert_eq!(table[6][1..4], ["2", "1", "3"]);
    assert_eq!(table[6].last(), Some(&"0.1920"));
    assert_eq!(lines.len(), 7, "{}", run.stdout);

    // --no-headers: node rows only.
    let run = k.karpenter(&["nodes", "--no-aws", "--no-headers"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    assert!(run.stdout.starts_with("node-a "));

    // JSON: numbers as numbers.
    let run = k.karpenter(&["nodes", "--no-aws", "-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(doc["apiVersion"], "kubectl-karpenter/v1");
    assert_eq!(doc["kind"], "NodeList");
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    let a = &nodes[0];
    assert_eq!(a["name"], "node-a");
    assert_eq!(a["nodePool"], "default");
    assert_eq!(a["instanceType"], "m5.large");
    assert_eq!(a["capacityType"], "on-demand");
    assert_eq!(a["instanceId"], "i-0node-a");
    assert_eq!(a["requests"]["cpu"], 1000);
    assert_eq!(a["requests"]["memory"], 2u64 << 30);
    assert_eq!(a["requests"]["pods"], 2);
    assert_eq!(a["allocatable"]["cpu"], 1930);
    assert_eq!(a["allocatable"]["memory"], 7u64 << 30);
    assert_eq!(a["pods"], 2);
    assert_eq!(a["pricePerHour"], 0.096);
    assert_eq!(a["ready"], true);
    assert!(a["ageSeconds"].is_i64());
    let b = &nodes[1];
    assert_eq!(b["nodeClaim"], "default-abcde");
    assert_eq!(b["imageId"], "ami-0123");
    assert_eq!(b["drift"]["status"], "Drifted");
    assert_eq!(b["drift"]["source"], "nodeclaim-condition");
    // The consolidation decision, typed: the same field as `consolidate`'s nodes.
    assert!(a["consolidation"].is_null(), "{a}");
    assert_eq!(b["consolidation"]["decision"], "none");
    assert_eq!(b["consolidation"]["reasonCode"], "not-initialized");
    assert_eq!(b["consolidation"]["reason"], "not initialized");
    let pools = doc["nodePools"].as_array().unwrap();
    assert_eq!(pools.len(), 1);
    assert_eq!(pools[0]["name"], "default");
    assert_eq!(pools[0]["nodes"], 2);
    assert_eq!(pools[0]["pods"], 3);
    assert_eq!(pools[0]["requests"]["cpu"], 1250);
    assert_eq!(pools[0]["allocatable"]["cpu"], 3860);
    assert_eq!(pools[0]["pricePerHour"], 0.192);
    assert_eq!(pools[0]["driftedNodes"], 1);
    assert_eq!(doc["total"]["nodes"], 2);
    assert_eq!(doc["total"]["pricePerHour"], 0.192);

    // YAML is the same document.
    let run = k.karpenter(&["nodes", "--no-aws", "-o", "yaml"]);
    assert_eq!(run.code, 0);
    assert!(run
        .stdout
        .starts_with("apiVersion: kubectl-karpenter/v1\nkind: NodeList\n"));

    // -o name, filters, unknown pool.
    let run = k.karpenter(&["nodes", "--no-aws", "-o", "name"]);
    assert_eq!(run.stdout, "node/node-a\nnode/node-b\n");
    let run = k.karpenter(&[
        "nodes",
        "--no-aws",
        "-o",
        "name",
        "-l",
        "kubernetes.io/hostname=node-b",
    ]);
    assert_eq!(run.stdout, "node/node-b\n");
    let run = k.karpenter(&["nodes", "--no-aws", "-o", "name", "--nodepool", "default"]);
    assert_eq!(run.stdout, "node/node-a\nnode/node-b\n");
    let run = k.karpenter(&["nodes", "--no-aws", "--nodepool", "nope"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--nodepool nope"), "{}", run.stderr);
    let run = k.karpenter(&["nodes", "--no-aws", "-l", "a in (b"]);
    assert_eq!(run.code, 2, "{}", run.stderr);

    // -o wide adds the instance, AMI name, NodeClaim and the whole why-not.
    let run = k.karpenter(&["nodes", "--no-aws", "-o", "wide"]);
    assert_eq!(run.code, 0);
    let table = rows(&run.stdout);
    assert_eq!(
        table[0][14..],
        ["INSTANCE", "AMI-NAME", "NODECLAIM", "WHY-NOT"]
    );
    assert_eq!(
        table[2][table[2].len() - 5..],
        ["i-0node-b", "-", "default-abcde", "not", "initialized"]
    );
    // --no-decision leaves the decision out.
    let run = k.karpenter(&["nodes", "--no-aws", "--no-decision", "--no-headers"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.lines().all(|l| l.ends_with(" -")),
        "{}",
        run.stdout
    );
}

#[test]
fn unreachable_aws_is_one_warning_and_cluster_facts() {
    let k = cluster("no-aws");
    let started = std::time::Instant::now();
    let run = k.karpenter(&["nodes", "-o", "json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr.matches("warning:").count(),
        1,
        "one warning: {}",
        run.stderr
    );
    assert!(run.stderr.contains("AWS unavailable"), "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 2);
    assert_eq!(doc["nodes"][0]["imageId"], Value::Null);
    assert_eq!(doc["nodes"][1]["imageId"], "ami-0123", "from the NodeClaim");
    assert_eq!(doc["total"]["pricePerHour"], 0.192, "prices need no AWS");
    assert!(started.elapsed().as_secs() < 30, "no slow retries");

    // A cluster that cannot be reached is exit 3.
    let run = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args(["nodes", "--no-aws", "--kubeconfig"])
        .arg(k.dir.join("missing-kubeconfig"))
        .env("HOME", &k.dir)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn ec2_facts_name_the_ami_and_find_nodes_this_tool_launched() {
    let moto = crate::moto::Moto::start(&[]);
    let cluster = TestCluster::start(Config {
        ec2_endpoint: Some(moto.url.clone()),
        region: moto.region().to_string(),
        ..Config::default()
    })
    .expect("start test cluster");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("nodes")
        .join("ec2");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    cluster.write_kubeconfig(&kubeconfig).unwrap();

    let user_data = |labels: &str| {
        format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: test-cluster\n  kubelet:\n    flags:\n    - --node-labels={labels}\n--//--\n")
    };
    // Labelled by its pool; unlabelled but tagged by this tool; neither (not managed).
    let launch = |labels: &str, tags: &str| {
        crate::support::boto3(
            &moto,
            &format!(
                "img = ec2.describe_images(Owners=['amazon'])['Images'][0]\nr = ec2.run_instances(ImageId=img['ImageId'], MinCount=1, MaxCount=1, InstanceType='m5.large', UserData={:?}, TagSpecifications=[{{'ResourceType': 'instance', 'Tags': [{tags}]}}])\nprint(r['Instances'][0]['InstanceId'], img['ImageId'], img['Name'])",
                user_data(labels)
            ),
        )
    };
    let pooled = launch(
        "demo=1,karpenter.sh/nodepool=default",
        "{'Key': 'Name', 'Value': 'pooled'}",
    );
    let tagged = launch(
        "demo=1",
        "{'Key': 'kubectl-karpenter.io/launched-by', 'Value': 'kubectl-karpenter'}, {'Key': 'karpenter.sh/nodepool', 'Value': 'batch'}",
    );
    launch("demo=1", "{'Key': 'Name', 'Value': 'other'}");
    let fields = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
    let (pooled, tagged) = (fields(&pooled), fields(&tagged));

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let doc: Value = loop {
        let run = moto.karpenter(
            &[
                "nodes",
                "-o",
                "json",
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
            ],
            &[("HOME", dir.to_str().unwrap())],
        );
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert!(!run.stderr.contains("warning"), "{}", run.stderr);
        let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
        if doc["nodes"].as_array().map_or(0, Vec::len) >= 2 {
            break doc;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nodes never registered: {doc:#}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(
        nodes.len(),
        2,
        "the untagged, unlabelled node is not managed: {doc:#}"
    );
    // By pool: batch (from the instance tag) before default.
    assert_eq!(nodes[0]["instanceId"], tagged[0].as_str());
    assert_eq!(nodes[0]["nodePool"], "batch");
    assert_eq!(nodes[0]["launchedBy"], "kubectl-karpenter");
    assert_eq!(nodes[1]["instanceId"], pooled[0].as_str());
    assert_eq!(nodes[1]["nodePool"], "default");
    assert_eq!(nodes[1]["launchedBy"], "karpenter");
    for n in nodes {
        assert_eq!(
            n["imageId"],
            pooled[1].as_str(),
            "AMI from DescribeInstances"
        );
        assert_eq!(
            n["imageName"],
            pooled[2].as_str(),
            "name from DescribeImages"
        );
        assert_eq!(n["capacityType"], "on-demand", "from the instance");
        assert_eq!(n["pricePerHour"], 0.096);
    }
}
