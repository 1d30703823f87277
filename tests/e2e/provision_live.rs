//! Live `provision` end to end (issue #4's "Must show"): the local test cluster + moto, the real
//! `kubectl`, and `kubectl karpenter` found through kubectl's plugin mechanism on `PATH`.
//!
//! - The walkthrough `001_a8111e80559bc205.txt`: NodePool + EC2NodeClass applied, `inflate`
//!   scaled to 5, `kubectl karpenter provision --yes --wait` → one c6a.2xlarge node labelled
//!   `eks-immersion-team=my-team` with the 5 pods Running; scaled to 20 → launches stop at
//!   `limits.cpu: 10` with the reason printed; scaled to 0 → `--watch` removes the empty node
//!   after `consolidateAfter: 30s`.
//! - A provision interrupted between launch and node registration, re-run: nothing new.
//! - Scheduling rounds: pods a NodePool limit leaves to a later round are launched for in the
//!   same `provision --yes` run.
//! - Coexistence: a running Karpenter controller Deployment → exit 4, nothing launched.
//! - No terminal and no `--yes` → exit 4, nothing launched.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::moto::Moto;
use crate::support::{fixture, root};
use crate::test_cluster::{Config, TestCluster};

const CLUSTER: &str = "my-cluster";

/// The seed's NodePool and EC2NodeClass (examples/manifests/quickstart.yaml) with `inflate` at
/// 0 replicas; the node role is the one moto seeds an instance profile for.
pub(crate) fn walkthrough_manifest() -> String {
    std::fs::read_to_string(root().join("examples/manifests/quickstart.yaml"))
        .unwrap()
        .replace(
            "karpenterNodeRole-my-cluster",
            "KarpenterNodeRole-my-cluster",
        )
        .replace("replicas: 5", "replicas: 0")
}

pub(crate) struct Walk {
    pub(crate) moto: Moto,
    pub(crate) cluster: TestCluster,
    pub(crate) dir: PathBuf,
    pub(crate) kubeconfig: PathBuf,
    path: String,
}

pub(crate) struct Out {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Walk {
    /// moto seeded for `my-cluster`, a test cluster whose kubelet registers moto's instances
    /// (`kubelet: false`: none register, as if every run were interrupted before that), and a
    /// `PATH` where kubectl finds the plugin.
    fn new(test: &str, kubelet: bool) -> Walk {
        Walk::with(test, kubelet, "crds/v1beta1", |_| Vec::new())
    }

    /// A walk with the v1beta1 CRDs and the EC2 kubelet.
    pub(crate) fn new_v1beta1(test: &str) -> Walk {
        Walk::new(test, true)
    }

    /// Like [`Walk::new`] with the CRDs of `crds` (a `tests/fixtures` path) and the AMIs whose
    /// instances never register (from moto's seed).
    pub(crate) fn with(
        test: &str,
        kubelet: bool,
        crds: &str,
        broken_images: impl FnOnce(&Moto) -> Vec<String>,
    ) -> Walk {
        Walk::build(test, &[], crds, |moto, config| Config {
            ec2_endpoint: kubelet.then(|| moto.url.clone()),
            broken_images: broken_images(moto),
            ..config
        })
    }

    /// A walk whose moto gets `moto_flags` too and whose cluster is configured by `tweak`
    /// (from the Kubernetes 1.25, moto-region default).
    pub(crate) fn build(
        test: &str,
        moto_flags: &[&str],
        crds: &str,
        tweak: impl FnOnce(&Moto, Config) -> Config,
    ) -> Walk {
        let mut flags = vec!["--cluster", CLUSTER];
        flags.extend(moto_flags);
        let moto = Moto::start(&flags);
        let config = Config {
            kubernetes_version: "1.25".into(),
            region: moto.region().to_string(),
            ..Config::default()
        };
        let cluster = TestCluster::start(tweak(&moto, config)).expect("start test cluster");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("provision-live")
            .join(test);
        let _ = std::fs::remove_dir_all(&dir);
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_kubectl-karpenter"),
            bin.join("kubectl-karpenter"),
        )
        .unwrap();
        let kubeconfig = dir.join("kubeconfig");
        cluster.write_kubeconfig(&kubeconfig).unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let walk = Walk {
            moto,
            cluster,
            dir,
            kubeconfig,
            path,
        };
        walk.ok(&["apply", "-f", &fixture(crds).to_string_lossy()]);
        walk
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()));
        c.args(args)
            .env("PATH", &self.path)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.join("kube-cache"))
            .env("HOME", &self.dir)
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env("AWS_ENDPOINT_URL", &self.moto.url)
            .env("AWS_REGION", self.moto.region())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Out {
        let out = self.command(args).output().expect("run kubectl");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.code, 0,
            "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    pub(crate) fn apply(&self, name: &str, yaml: &str) {
        let file = self.dir.join(name);
        std::fs::write(&file, yaml).unwrap();
        self.ok(&["apply", "-f", &file.to_string_lossy()]);
    }

    pub(crate) fn items(&self, args: &[&str]) -> Vec<Value> {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        self.json(&a)["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Polls until `f` answers, failing after `secs`.
    pub(crate) fn eventually<T>(
        &self,
        secs: u64,
        what: &str,
        mut f: impl FnMut() -> Option<T>,
    ) -> T {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(v) = f() {
                return v;
            }
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until `n` inflate pods are marked unschedulable by the scheduler.
    pub(crate) fn wait_unschedulable(&self, n: usize) {
        self.eventually(30, &format!("{n} unschedulable inflate pods"), || {
            let pending = self
                .items(&["get", "pods", "-l", "app=inflate"])
                .into_iter()
                .filter(|p| {
                    p["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
                })
                .count();
            (pending >= n).then_some(())
        });
    }

    /// Instances this tool launched (pending or running), from moto: their ids.
    pub(crate) fn launched(&self) -> Vec<String> {
        self.launched_instances()
            .into_iter()
            .map(|i| i.id)
            .collect()
    }

    /// Instances this tool launched (pending or running), from moto.
    pub(crate) fn launched_instances(&self) -> Vec<kubectl_karpenter::model::instance::Instance> {
        use kubectl_karpenter::cloud::types::{Compute, Filter, InstanceQuery};
        self.moto
            .cloud()
            .describe_instances(&InstanceQuery::Filters(vec![
                Filter::new(
                    "tag:kubectl-karpenter.io/launched-by",
                    ["kubectl-karpenter"],
                ),
                Filter::new("instance-state-name", ["pending", "running"]),
            ]))
            .unwrap()
    }

    pub(crate) fn spawn(&self, args: &[&str]) -> Child {
        self.command(args).spawn().expect("spawn kubectl")
    }
}

pub(crate) fn running_on(walk: &Walk, node: &str) -> usize {
    walk.items(&["get", "pods", "-l", "app=inflate"])
        .iter()
        .filter(|p| p["spec"]["nodeName"] == node && p["status"]["phase"] == "Running")
        .count()
}

#[test]
fn walkthrough_001_provision_limit_and_watch_removes_the_empty_node() {
    let walk = Walk::new("walkthrough-001", true);
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);

    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains("c6a.2xlarge"), "{}", out.stdout);
    let nodes = walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"]);
    assert_eq!(nodes.len(), 1, "one node");
    let node = &nodes[0];
    assert_eq!(
        node["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "c6a.2xlarge"
    );
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/nodepool"],
        "default"
    );
    // The launched type's labels, as Karpenter's controller copies them onto the Node.
    let labels = &node["metadata"]["labels"];
    assert_eq!(labels["karpenter.k8s.aws/instance-family"], "c6a");
    assert_eq!(labels["karpenter.k8s.aws/instance-category"], "c");
    assert_eq!(labels["karpenter.sh/initialized"], "true");
    let name = node["metadata"]["name"].as_str().unwrap().to_string();
    walk.eventually(30, "5 pods Running on the node", || {
        (running_on(&walk, &name) == 5).then_some(())
    });
    assert_eq!(walk.launched().len(), 1);

    // 20 replicas: the NodePool's `limits.cpu: 10` stops launches, and says so.
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "20"]);
    walk.wait_unschedulable(10);
    let out = walk.run(&[
        "karpenter",
        "provision",
        "--yes",
        "--wait",
        "--timeout",
        "60s",
    ]);
    assert_eq!(
        out.code, 1,
        "pods left unschedulable: exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout.contains("limit") && out.stdout.contains("cpu"),
        "the limit is the reason: {}",
        out.stdout
    );
    let cpu: f64 = walk
        .items(&["get", "nodes", "-l", "eks-immersion-team=my-team"])
        .iter()
        .map(|n| {
            let c = n["status"]["capacity"]["cpu"].as_str().unwrap();
            c.parse::<f64>().unwrap()
        })
        .sum();
    assert!(
        cpu <= 10.0,
        "launched capacity stays within limits.cpu: {cpu}"
    );

    // 0 replicas: `--watch` removes the empty nodes once consolidateAfter (30s) has passed.
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "0"]);
    let started = Instant::now();
    let mut watch = Watching(walk.spawn(&["karpenter", "provision", "--watch", "--yes"]));
    walk.eventually(120, "the empty nodes removed", || {
        walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"])
            .is_empty()
            .then_some(())
    });
    assert!(
        started.elapsed() >= Duration::from_secs(30),
        "removed only after consolidateAfter"
    );
    assert!(walk.launched().is_empty(), "the instances are terminated");
    // Still watching: new pending pods are batched and launched for, and the node gets its
    // type's labels once it registers.
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "3"]);
    let node = walk.eventually(60, "the watch to launch a labelled node", || {
        walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"])
            .into_iter()
            .find(|n| n["metadata"]["labels"]["karpenter.k8s.aws/instance-family"].is_string())
    });
    let name = node["metadata"]["name"].as_str().unwrap().to_string();
    walk.eventually(30, "3 pods Running on it", || {
        (running_on(&walk, &name) == 3).then_some(())
    });
    assert_eq!(walk.launched().len(), 1, "one node for the batch");
    // Ctrl-C stops the watch cleanly.
    Command::new("kill")
        .args(["-INT", &watch.0.id().to_string()])
        .status()
        .unwrap();
    let status = watch.0.wait().unwrap();
    assert_eq!(status.code(), Some(0), "clean stop on SIGINT");
}

#[test]
fn interrupted_provision_rerun_launches_nothing_new() {
    // No kubelet: the instance never registers, as if the run had been killed right after
    // launching. The re-run must see it as in-flight capacity.
    let walk = Walk::new("interrupted", false);
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);
    let first = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(walk.launched().len(), 1);
    let again = walk.run(&["karpenter", "provision", "--yes", "-o", "json"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let doc: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(doc["nodeClaims"].as_array().map(Vec::len), Some(0), "{doc}");
    let existing = doc["existingNodes"].as_array().unwrap();
    assert_eq!(existing.len(), 1);
    assert!(existing[0]["name"]
        .as_str()
        .unwrap()
        .contains("launching i-"));
    assert_eq!(walk.launched().len(), 1, "nothing launched twice");
}

/// Issue #12 item 5, live: four `inflate` pods that each want a node of their own under the
/// seed's `limits.cpu: 10`. One batch reserves 8 + 2 CPU and places two; one `provision --yes`
/// run launches those, plans again with them in flight (at their launched 2 vCPU), and launches
/// the other two: four instances, every pod launched for once.
/// [`walkthrough_manifest`] with `inflate`'s pods each on a node of its own (hostname
/// anti-affinity): one NodeClaim per pod.
pub(crate) fn one_pod_per_node_manifest() -> String {
    walkthrough_manifest().replace(
        "      nodeSelector:\n",
        "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - topologyKey: kubernetes.io/hostname\n            labelSelector: {matchLabels: {app: inflate}}\n      nodeSelector:\n",
    )
}

#[test]
fn one_run_launches_the_rounds_a_limit_needs() {
    let walk = Walk::new("rounds", false);
    let manifest = one_pod_per_node_manifest();
    walk.apply("rounds.yaml", &manifest);
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "4"]);
    walk.wait_unschedulable(4);
    let run = walk.run(&["karpenter", "provision", "--yes", "-o", "json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let rounds: Vec<i64> = doc["plan"]["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["round"].as_i64().unwrap())
        .collect();
    assert_eq!(rounds, [1, 1, 2, 2], "{doc:#}");
    let launched = doc["launched"].as_array().unwrap();
    assert_eq!(launched.len(), 4, "{doc:#}");
    let mut pods: Vec<&str> = launched
        .iter()
        .flat_map(|l| l["pods"].as_array().unwrap())
        .map(|p| p.as_str().unwrap())
        .collect();
    pods.sort();
    pods.dedup();
    assert_eq!(pods.len(), 4, "each pod launched for once: {doc:#}");
    assert_eq!(walk.launched().len(), 4);
}

#[test]
fn running_karpenter_controller_refuses_and_no_terminal_refuses() {
    let walk = Walk::new("coexistence", true);
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);

    // No terminal, no --yes: refused, nothing launched.
    let out = walk.run(&["karpenter", "provision"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("--yes"), "{}", out.stderr);
    assert!(walk.launched().is_empty());

    // A node for the controller to run on, then a Deployment that looks like Karpenter.
    walk.apply(
        "system-node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: system-0\n  labels:\n    role: system\nstatus:\n  capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n",
    );
    walk.ok(&["create", "namespace", "karpenter"]);
    walk.apply(
        "karpenter.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: karpenter\n  namespace: karpenter\n  labels:\n    app.kubernetes.io/name: karpenter\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app.kubernetes.io/name: karpenter}\n  template:\n    metadata:\n      labels: {app.kubernetes.io/name: karpenter}\n    spec:\n      nodeSelector: {role: system}\n      containers:\n      - name: controller\n        image: public.ecr.aws/karpenter/controller:v0.32.1\n        resources: {requests: {cpu: 100m}}\n",
    );
    walk.eventually(30, "the controller ready", || {
        let d = walk.json(&[
            "get",
            "deployment",
            "-n",
            "karpenter",
            "karpenter",
            "-o",
            "json",
        ]);
        (d["status"]["readyReplicas"].as_i64() == Some(1)).then_some(())
    });
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("karpenter/karpenter") && out.stderr.contains("--force"),
        "{}",
        out.stderr
    );
    assert!(walk.launched().is_empty(), "nothing launched when refused");
    // --dry-run is not mutating: it plans.
    let out = walk.run(&["karpenter", "provision", "--dry-run"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("default"), "{}", out.stdout);
}

/// docs/spec.md §2: kubectl does not forward its flags, so the plugin honours them itself — here
/// `--kubeconfig`, `--context` (the current context points at a dead server) and an exec
/// credential plugin like `aws eks get-token` (it must run, and its token be used).
#[test]
fn kubeconfig_flags_and_exec_credentials() {
    let walk = Walk::new("kubeconfig-flags", false);
    let server = std::fs::read_to_string(&walk.kubeconfig)
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: ").map(str::to_string))
        .unwrap();
    let marker = walk.dir.join("exec-ran");
    let plugin = walk.dir.join("get-token.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\ntouch {}\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"secret-token\"}}}}'\n",
            marker.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&plugin)
        .status()
        .unwrap();
    let config = walk.dir.join("multi.kubeconfig");
    std::fs::write(
        &config,
        format!(
            "apiVersion: v1
kind: Config
current-context: dead
clusters:
- name: dead
  cluster: {{server: \"http://127.0.0.1:9\"}}
- name: arn:aws:eks:us-east-1:111122223333:cluster/my-cluster
  cluster: {{server: \"{server}\"}}
contexts:
- name: dead
  context: {{cluster: dead, user: nobody}}
- name: eks
  context: {{cluster: \"arn:aws:eks:us-east-1:111122223333:cluster/my-cluster\", user: eks}}
users:
- name: nobody
  user: {{}}
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: {}
      args: [eks, get-token, --cluster-name, my-cluster]
      interactiveMode: Never
",
            plugin.display()
        ),
    )
    .unwrap();
    let config = config.to_string_lossy().into_owned();
    let dead = crate::support::karpenter(&["nodes", "--no-aws", "--kubeconfig", &config], b"");
    assert_eq!(
        dead.code, 3,
        "the current context's server is down: {}",
        dead.stderr
    );
    assert!(dead.stderr.contains("127.0.0.1:9"), "{}", dead.stderr);
    let ok = crate::support::karpenter(
        &[
            "nodes",
            "--no-aws",
            "--kubeconfig",
            &config,
            "--context",
            "eks",
            "-v",
        ],
        b"",
    );
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    assert!(marker.exists(), "the exec credential plugin ran");
    assert!(
        ok.stderr.contains("cluster my-cluster"),
        "the cluster name comes from the EKS ARN: {}",
        ok.stderr
    );
    assert!(
        !ok.stderr.contains("secret-token"),
        "tokens never appear in output"
    );
}

/// A class whose subnet selector matches nothing: one clear line, exit 3, nothing launched.
#[test]
fn class_without_subnets_fails_cleanly_and_launches_nothing() {
    let walk = Walk::new("no-subnets", false);
    walk.apply(
        "basic.yaml",
        &walkthrough_manifest().replacen(
            "  subnetSelectorTerms:\n    - tags:\n        alpha.eksctl.io/cluster-name: my-cluster",
            "  subnetSelectorTerms:\n    - tags:\n        alpha.eksctl.io/cluster-name: no-such-cluster",
            1,
        ),
    );
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("EC2NodeClass/default: no subnet matches"),
        "{}",
        out.stderr
    );
    assert!(walk.launched().is_empty(), "nothing launched");
}

/// `--instance-profile` (docs/spec.md §5.2): a class whose role holds no instance profile
/// fails with one line naming it (exit 3, nothing launched); the flag's profile launches, and the
/// launch template EC2 stores carries it.
#[test]
fn instance_profile_flag_launches_where_the_classes_role_has_none() {
    let walk = Walk::new("instance-profile", false);
    walk.apply(
        "basic.yaml",
        &walkthrough_manifest().replace("KarpenterNodeRole-my-cluster", "RoleWithoutProfile"),
    );
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "1"]);
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no instance profile for"),
        "{}",
        out.stderr
    );
    assert!(walk.launched().is_empty(), "nothing launched");

    let profile = "KarpenterNodeInstanceProfile-my-cluster";
    let out = walk.run(&[
        "karpenter",
        "provision",
        "--yes",
        "--instance-profile",
        profile,
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(walk.launched().len(), 1);
    let data = crate::aws_launch::all_template_data(&walk.moto);
    // One template per (AMI, max pods) of the NodeClaim's options: every one carries it.
    assert!(
        !data.is_empty()
            && data
                .iter()
                .all(|d| d["IamInstanceProfile"]["Name"] == profile),
        "{data:?}"
    );
}

/// The adapter's eviction against the test cluster: a PDB that allows nothing answers 429,
/// which reaches the caller as `Blocked` with the server's message naming the PDB (no hidden
/// retry); once allowed, the eviction goes through; a gone pod is `Gone`.
#[test]
fn eviction_refused_by_a_pdb_is_reported_not_retried() {
    use kubectl_karpenter::k8s::client::KubeClient;
    use kubectl_karpenter::k8s::config::ClusterTarget;
    use kubectl_karpenter::k8s::ops::{self, Eviction};
    let walk = Walk::new("eviction", false);
    walk.apply(
        "pod.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"10\"}\n  capacity: {cpu: \"2\", memory: 4Gi, pods: \"10\"}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      terminationGracePeriodSeconds: 0\n      containers:\n      - {name: c, image: nginx}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web-pdb\nspec:\n  maxUnavailable: 0\n  selector:\n    matchLabels: {app: web}\n",
    );
    walk.eventually(30, "the PDB's status", || {
        let p = walk.json(&["get", "pdb", "web-pdb", "-o", "json"]);
        (p["status"]["currentHealthy"].as_i64() == Some(1)).then_some(())
    });
    let pod = walk.items(&["get", "pods", "-l", "app=web"])[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let flags = kubectl_karpenter::k8s::config::KubeFlags {
        kubeconfig: Some(walk.kubeconfig.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let client = KubeClient::connect(&ClusterTarget::from_flags(&flags).unwrap()).unwrap();
    match ops::evict(&client, "default", &pod, None).unwrap() {
        Eviction::Blocked(message) => assert!(message.contains("web-pdb"), "{message}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    walk.ok(&[
        "patch",
        "pdb",
        "web-pdb",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"maxUnavailable":1}}"#,
    ]);
    walk.eventually(30, "the PDB to allow one", || {
        let p = walk.json(&["get", "pdb", "web-pdb", "-o", "json"]);
        (p["status"]["disruptionsAllowed"].as_i64() == Some(1)).then_some(())
    });
    assert_eq!(
        ops::evict(&client, "default", &pod, None).unwrap(),
        Eviction::Evicted
    );
    walk.eventually(30, "the pod gone", || {
        walk.items(&["get", "pods"])
            .iter()
            .all(|p| p["metadata"]["name"] != pod.as_str())
            .then_some(())
    });
    assert_eq!(
        ops::evict(&client, "default", &pod, None).unwrap(),
        Eviction::Gone
    );
}

/// Shell completion asks the cluster for NodePool and node names (kubectl's plugin-completion
/// protocol: one candidate per line, then `:<directive>`), and stays quiet when it cannot.
#[test]
fn completion_offers_nodepool_and_node_names_from_the_cluster() {
    let walk = Walk::new("completion", false);
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.apply(
        "node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: ip-10-0-9-9.ec2.internal\n  labels: {karpenter.sh/nodepool: default}\n",
    );
    let pools = walk.ok(&["karpenter", "__complete", "provision", "--nodepool", ""]);
    assert_eq!(pools, "default\n:4\n");
    let nodes = walk.ok(&["karpenter", "__complete", "drift", "replace", "ip-10"]);
    assert_eq!(nodes, "ip-10-0-9-9.ec2.internal\n:4\n");
    let classes = walk.ok(&["karpenter", "__complete", "ami", ""]);
    assert_eq!(classes, "default\n:4\n");
    let unreachable = walk.ok(&[
        "karpenter",
        "__complete",
        "drift",
        "replace",
        "--kubeconfig",
        "/nonexistent",
        "",
    ]);
    assert_eq!(unreachable, ":4\n");
}

/// Volume topology through the live path against the loopback cluster (upstream
/// `provisioning/suite_test.go` "should schedule to storage class zones if volume does not
/// exist"): the StorageClass and the claim are read from the API (the claim gets the default
/// class by admission), so the plan puts the pods in the one zone the class allows.
#[test]
fn live_plan_follows_the_claims_storage_class_zone() {
    let walk = Walk::new("volumes", false);
    let manifest = walkthrough_manifest().replace(
        "      nodeSelector:\n        eks-immersion-team: my-team",
        "      nodeSelector:\n        eks-immersion-team: my-team\n      volumes:\n        - name: data\n          persistentVolumeClaim: {claimName: shared}",
    );
    walk.apply("basic.yaml", &manifest);
    walk.apply(
        "storage.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: efs-1b\n  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\nprovisioner: efs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [us-east-1b]}]\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: shared}\nspec:\n  accessModes: [ReadWriteMany]\n  resources: {requests: {storage: 1Gi}}\n",
    );
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);
    let out = walk.run(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let claims = doc["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{doc}");
    assert_eq!(claims[0]["zone"], "us-east-1b", "{doc}");
    assert_eq!(claims[0]["zones"], serde_json::json!(["us-east-1b"]));
    assert!(walk.launched().is_empty(), "a dry run launches nothing");
}

/// A static NodePool of 3 (docs/karpenter.md §6.11) of the `default` class.
const STATIC_POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: baseline
spec:
  replicas: 3
  limits:
    nodes: \"10\"
  template:
    metadata: {labels: {role: baseline}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: Never
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [xlarge]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
";

/// Issue #12 item 6: a static NodePool scaled from 3 to 1. The plan (`provision --dry-run`)
/// names the two empty nodes and why; `provision --yes` drains and removes them (instances
/// terminated); the node with the pod stays, the pod running; a re-run has nothing to do.
/// Mirrors `core main: pkg/controllers/static/deprovisioning/suite_test.go` "should prioritize
/// empty nodes (with only daemonset pods) for termination".
#[test]
fn static_pool_scaled_from_3_to_1_removes_the_two_empty_nodes() {
    let walk = Walk::with("static-scale-down", true, "crds/v1", |_| Vec::new());
    // The EC2NodeClass of consolidate's story.
    let class = crate::consolidate_commands::CLUSTER
        .split("---\n")
        .find(|d| d.starts_with("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass"))
        .unwrap();
    walk.apply("static.yaml", &format!("{STATIC_POOL}---\n{class}"));
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let nodes = |walk: &Walk| -> Vec<String> {
        walk.items(&["get", "nodes", "-l", "role=baseline"])
            .iter()
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(nodes(&walk).len(), 3);
    walk.apply(
        "app.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  terminationGracePeriodSeconds: 0
  nodeSelector: {role: baseline}
  containers:
  - {name: app, image: public.ecr.aws/eks-distro/kubernetes/pause:3.7}
",
    );
    let busy = walk.eventually(30, "app running", || {
        let pod = walk.json(&["get", "pod", "app", "-o", "json"]);
        (pod["status"]["phase"] == "Running")
            .then(|| pod["spec"]["nodeName"].as_str().unwrap().to_string())
    });

    walk.ok(&[
        "patch",
        "nodepool",
        "baseline",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":1}}"#,
    ]);
    let plan = walk.json(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    let down = &plan["staticScaleDown"][0];
    assert_eq!(down["nodePool"], "baseline", "{plan:#}");
    assert_eq!(
        (down["running"].as_i64(), down["replicas"].as_i64()),
        (Some(3), Some(1))
    );
    let remove = down["remove"].as_array().unwrap();
    assert_eq!(remove.len(), 2, "{plan:#}");
    for r in remove {
        assert_eq!(r["reason"], "empty", "{plan:#}");
        assert_ne!(r["node"], busy.as_str(), "{plan:#}");
    }
    let table = walk.ok(&["karpenter", "provision", "--dry-run"]);
    assert!(table.contains("STATIC-NODEPOOL"), "{table}");
    assert!(table.contains("3 -> 1"), "{table}");

    let out = walk.run(&["karpenter", "provision", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let result: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let scaled_down = result["scaledDown"].as_array().expect("scaledDown");
    assert_eq!(scaled_down.len(), 2, "{result:#}");
    for n in scaled_down {
        assert_eq!(
            (n["nodePool"].as_str(), n["status"].as_str()),
            (Some("baseline"), Some("deleted")),
            "{result:#}"
        );
    }
    walk.eventually(30, "one baseline node left", || {
        (nodes(&walk) == [busy.clone()]).then_some(())
    });
    assert_eq!(
        walk.launched().len(),
        1,
        "two instances terminated, none launched"
    );
    let pod = walk.json(&["get", "pod", "app", "-o", "json"]);
    assert_eq!(pod["status"]["phase"], "Running");
    assert_eq!(pod["spec"]["nodeName"], busy.as_str());
    let again = walk.json(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    assert!(again.get("staticScaleDown").is_none(), "{again:#}");
}

/// A `--watch` run, killed if the test ends before stopping it (a failed wait must not leave it
/// polling a cluster that is gone).
pub(crate) struct Watching(pub(crate) Child);

impl Drop for Watching {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
