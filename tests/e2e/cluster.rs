//! Fidelity of the local test cluster (`tests/cluster`): the real `kubectl` runs against it and
//! must get what a real cluster would answer (docs/testing.md §4). Each test starts its own
//! in-process cluster on a free loopback port.

use crate::support::fixture;
use crate::test_cluster::{Config, TestCluster};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A cluster, its kubeconfig and a private kubectl cache directory.
struct Kube {
    /// Kept alive for the test's duration (dropping it stops the server).
    _cluster: TestCluster,
    dir: PathBuf,
    kubeconfig: PathBuf,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn ok(self) -> String {
        assert_eq!(
            self.code, 0,
            "kubectl failed:\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self.stdout
    }

    fn json(self) -> Value {
        let s = self.ok();
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
    }
}

fn kubectl_bin() -> String {
    std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into())
}

impl Kube {
    fn new(test: &str) -> Kube {
        Self::with(
            test,
            Config {
                kubernetes_version: "1.25".into(),
                ..Config::default()
            },
        )
    }

    fn with(test: &str, config: Config) -> Kube {
        let cluster = TestCluster::start(config).expect("start test cluster");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("cluster")
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

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(kubectl_bin());
        c.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs kubectl to completion.
    fn run(&self, args: &[&str]) -> Out {
        let out = self
            .command(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run kubectl ({e}); it must be on PATH"));
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok()
    }

    fn json(&self, args: &[&str]) -> Value {
        self.run(args).json()
    }

    /// Writes `yaml` to a file and returns its path.
    fn file(&self, name: &str, yaml: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, yaml).unwrap();
        p.to_string_lossy().into_owned()
    }

    /// Polls `f` until it returns `Some`, failing after `secs`.
    fn eventually<T>(&self, secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(v) = f() {
                return v;
            }
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn pods(&self, selector: &str) -> Vec<Value> {
        let v = self.json(&["get", "pods", "-A", "-l", selector, "-o", "json"]);
        v["items"].as_array().cloned().unwrap_or_default()
    }
}

fn node_yaml(name: &str, cpu: &str, labels: &[(&str, &str)]) -> String {
    let mut l = format!("    kubernetes.io/hostname: {name}\n");
    for (k, v) in labels {
        l.push_str(&format!("    {k}: {v}\n"));
    }
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels:\n{l}status:\n  capacity: {{cpu: \"{cpu}\", memory: 16Gi, pods: \"110\"}}\n  allocatable: {{cpu: \"{cpu}\", memory: 15Gi, pods: \"110\"}}\n"
    )
}

fn deployment_yaml(name: &str, replicas: u32, cpu: &str, grace: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: {grace}
      containers:
      - name: {name}
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources:
          requests: {{cpu: "{cpu}"}}
"#
    )
}

/// Names of pods, sorted.
fn names(pods: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = pods
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    v.sort();
    v
}

fn running_ready(pods: &[Value]) -> usize {
    pods.iter()
        .filter(|p| {
            p["status"]["phase"] == "Running"
                && p["metadata"]["deletionTimestamp"].is_null()
                && p["status"]["conditions"].as_array().is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
        })
        .count()
}

/// The table rows of `kubectl get` output, split on whitespace.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn kubectl_version_and_discovery() {
    let k = Kube::new("discovery");
    let v = k.json(&["version", "-o", "json"]);
    assert_eq!(v["serverVersion"]["gitVersion"], "v1.25.0");
    assert_eq!(v["serverVersion"]["minor"], "25");
    let res = k.ok(&["api-resources", "--no-headers"]);
    for want in [
        "pods po v1 true Pod",
        "nodes no v1 false Node",
        "deployments deploy apps/v1 true Deployment",
        "poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget",
        "customresourcedefinitions crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition",
    ] {
        assert!(
            res.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want),
            "api-resources lacks {want:?}:\n{res}"
        );
    }
    // The eviction subresource drain looks for.
    let core = k.json(&["get", "--raw", "/api/v1"]);
    let ev = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/eviction")
        .unwrap();
    assert_eq!(
        (
            ev["group"].as_str(),
            ev["version"].as_str(),
            ev["kind"].as_str()
        ),
        (Some("policy"), Some("v1"), Some("Eviction"))
    );
    let scale = k.json(&["get", "--raw", "/apis/apps/v1"]);
    assert!(scale["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["name"] == "deployments/scale" && r["kind"] == "Scale"));
}

#[test]
fn kubectl_get_with_label_selectors_and_json() {
    let k = Kube::new("get");
    let f = k.file(
        "nodes.yaml",
        &[
            node_yaml(
                "node-a",
                "4",
                &[("team", "a"), ("node-role.kubernetes.io/worker", "")],
            ),
            node_yaml("node-b", "4", &[("team", "b")]),
            node_yaml("node-c", "4", &[]),
        ]
        .join("---\n"),
    );
    let out = k.ok(&["create", "-f", &f]);
    assert_eq!(
        out,
        "node/node-a created\nnode/node-b created\nnode/node-c created\n"
    );
    let table = k.eventually(5, "nodes Ready", || {
        let out = k.ok(&["get", "nodes"]);
        out.contains("Ready").then_some(out)
    });
    let r = rows(&table);
    assert_eq!(r[0], ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
    assert_eq!(r[1][..3], ["node-a", "Ready", "worker"]);
    assert_eq!(r[2][..3], ["node-b", "Ready", "<none>"]);
    assert_eq!(r[1][4], "v1.25.0");
    let sel = |s: &str| -> Vec<String> {
        k.ok(&["get", "nodes", "-l", s, "-o", "name"])
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(sel("team=a"), ["node/node-a"]);
    assert_eq!(sel("team==b"), ["node/node-b"]);
    assert_eq!(sel("team!=a"), ["node/node-b", "node/node-c"]);
    assert_eq!(sel("team in (a,b)"), ["node/node-a", "node/node-b"]);
    assert_eq!(sel("team notin (a)"), ["node/node-b", "node/node-c"]);
    assert_eq!(sel("team"), ["node/node-a", "node/node-b"]);
    assert_eq!(sel("!team"), ["node/node-c"]);
    let none = k.run(&["get", "nodes", "-l", "team=z"]);
    assert_eq!(
        (none.code, none.stdout.as_str(), none.stderr.as_str()),
        (0, "", "No resources found\n")
    );
    let list = k.json(&["get", "nodes", "-l", "team", "-o", "json"]);
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["kind"], "Node");
    assert_eq!(items[0]["apiVersion"], "v1");
    assert!(items[0]["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(items[0]["metadata"]["resourceVersion"].as_str().is_some());
    assert_eq!(items[0]["status"]["allocatable"]["cpu"], "4");
    let one = k.json(&["get", "node", "node-a", "-o", "json"]);
    assert_eq!(one["metadata"]["labels"]["team"], "a");
    let missing = k.run(&["get", "node", "nope"]);
    assert_eq!(missing.code, 1);
    assert_eq!(
        missing.stderr,
        "Error from server (NotFound): nodes \"nope\" not found\n"
    );
    // Pagination: kubectl pages with --chunk-size and still sees everything.
    for i in 0..5 {
        k.ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "--from-literal=k=v",
        ]);
    }
    let all = k.ok(&["get", "configmaps", "--chunk-size=2", "-o", "name"]);
    assert_eq!(
        all.lines()
            .filter(|l| l.starts_with("configmap/cm-"))
            .count(),
        5
    );
    let page = k.json(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?limit=2",
    ]);
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    assert!(page["metadata"]["continue"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));
    assert_eq!(page["metadata"]["remainingItemCount"], 3);
    // Field selectors.
    let by_name = k.ok(&[
        "get",
        "nodes",
        "--field-selector",
        "metadata.name=node-b",
        "-o",
        "name",
    ]);
    assert_eq!(by_name, "node/node-b\n");
    let bad = k.run(&["get", "nodes", "--field-selector", "spec.bogus=x"]);
    assert_eq!(bad.stderr, "Error from server (BadRequest): Unable to find \"/v1, Resource=nodes\" that match label selector \"\", field selector \"spec.bogus=x\": field label not supported: spec.bogus\n");
}

#[test]
fn kubectl_create_and_first_apply() {
    let k = Kube::new("apply");
    let cm = k.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n",
    );
    assert_eq!(k.ok(&["create", "-f", &cm]), "configmap/settings created\n");
    let again = k.run(&["create", "-f", &cm]);
    assert_eq!(again.code, 1);
    assert_eq!(
        again.stderr,
        format!("Error from server (AlreadyExists): error when creating \"{cm}\": configmaps \"settings\" already exists\n")
    );
    let dep = k.file("deploy.yaml", &deployment_yaml("inflate", 0, "1", 0));
    assert_eq!(
        k.ok(&["apply", "-f", &dep]),
        "deployment.apps/inflate created\n"
    );
    let d = k.json(&["get", "deploy", "inflate", "-o", "json"]);
    let last = d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap();
    assert!(last.contains("\"replicas\":0"), "{last}");
    // Server-side defaults, like a real API server.
    assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(
        k.ok(&["apply", "-f", &dep]),
        "deployment.apps/inflate unchanged\n"
    );
    let dep2 = k.file("deploy2.yaml", &deployment_yaml("inflate", 2, "1", 0));
    assert_eq!(
        k.ok(&["apply", "-f", &dep2]),
        "deployment.apps/inflate configured\n"
    );
    let d = k.json(&["get", "deploy", "inflate", "-o", "json"]);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["metadata"]["generation"], 2);
    // Invalid objects are refused with the real message.
    let bad = k.file(
        "bad.yaml",
        &deployment_yaml("bad", 1, "1", 0).replace("labels: {app: bad}", "labels: {app: other}"),
    );
    let out = k.run(&["apply", "-f", &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("The Deployment \"bad\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`"),
        "{}",
        out.stderr
    );
    // A stale update is a 409 Conflict.
    let mut stale = k.json(&["get", "configmap", "settings", "-o", "json"]);
    k.ok(&["label", "configmap", "settings", "x=y"]);
    stale["data"]["a"] = "2".into();
    let stale_file = k.file("stale.json", &stale.to_string());
    let out = k.run(&["replace", "-f", &stale_file]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!("Error from server (Conflict): error when replacing \"{stale_file}\": Operation cannot be fulfilled on configmaps \"settings\": the object has been modified; please apply your changes to the latest version and try again\n")
    );
    // Create into a namespace that does not exist.
    let out = k.run(&["create", "configmap", "x", "-n", "nowhere"]);
    assert_eq!(
        out.stderr,
        "error: failed to create configmap: namespaces \"nowhere\" not found\n"
    );
}

#[test]
fn kubectl_applies_karpenter_v1_crds_and_a_nodepool() {
    let k = Kube::new("crds-v1");
    let dir = fixture("crds/v1");
    let out = k.ok(&["apply", "-f", dir.to_str().unwrap()]);
    assert_eq!(
        out,
        "customresourcedefinition.apiextensions.k8s.io/ec2nodeclasses.karpenter.k8s.aws created\ncustomresourcedefinition.apiextensions.k8s.io/nodeclaims.karpenter.sh created\ncustomresourcedefinition.apiextensions.k8s.io/nodepools.karpenter.sh created\n"
    );
    let crd = k.json(&["get", "crd", "nodepools.karpenter.sh", "-o", "json"]);
    let established = crd["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established);
    let np = k.file(
        "nodepool.yaml",
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        eks-immersion-team: my-team
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
  limits:
    cpu: 10
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
"#,
    );
    assert_eq!(
        k.ok(&["apply", "-f", &np]),
        "nodepool.karpenter.sh/default created\n"
    );
    assert_eq!(
        k.ok(&["apply", "-f", &np]),
        "nodepool.karpenter.sh/default unchanged\n"
    );
    let got = k.json(&["get", "nodepool", "default", "-o", "json"]);
    // Schema defaults are applied by the server.
    assert_eq!(got["spec"]["disruption"]["budgets"][0]["nodes"], "10%");
    assert_eq!(got["spec"]["template"]["spec"]["expireAfter"], "720h");
    let table = k.ok(&["get", "nodepools"]);
    assert_eq!(
        rows(&table)[0],
        ["NAME", "NODECLASS", "NODES", "READY", "AGE"]
    );
    assert_eq!(rows(&table)[1][..2], ["default", "default"]);
    // Unknown fields: kubectl asks for strict validation and gets the server's refusal.
    let bad = k.file(
        "bad.yaml",
        &std::fs::read_to_string(&np)
            .unwrap()
            .replace("  limits:", "  bogus: 1\n  limits:")
            .replace("name: default\nspec", "name: other\nspec"),
    );
    let out = k.run(&["apply", "-f", &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("strict decoding error: unknown field \"spec.bogus\""),
        "{}",
        out.stderr
    );
    // Required fields from the schema.
    let noref = k.file("noref.yaml", "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      requirements: []\n");
    let out = k.run(&["apply", "-f", &noref]);
    assert!(
        out.stderr
            .contains("spec.template.spec.nodeClassRef: Required value"),
        "{}",
        out.stderr
    );
    // Merge patches work on custom resources; strategic ones are refused like the real server.
    k.ok(&[
        "patch",
        "nodepool",
        "default",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"limits":{"cpu":"20"}}}"#,
    ]);
    assert_eq!(
        k.json(&["get", "nodepool", "default", "-o", "json"])["spec"]["limits"]["cpu"],
        "20"
    );
    let out = k.run(&[
        "patch",
        "nodepool",
        "default",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"weight":1}}"#,
    ]);
    assert!(
        out.stderr.contains(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        ),
        "{}",
        out.stderr
    );
    // Deleting the CRD deletes its objects and stops serving the kind.
    assert_eq!(
        k.ok(&["delete", "crd", "nodepools.karpenter.sh"]),
        "customresourcedefinition.apiextensions.k8s.io \"nodepools.karpenter.sh\" deleted\n"
    );
    let out = k.run(&["get", "--raw", "/apis/karpenter.sh/v1/nodepools"]);
    assert_eq!(
        out.stderr,
        "Error from server (NotFound): the server could not find the requested resource\n"
    );
    let out = k.run(&[
        "api-resources",
        "--api-group",
        "karpenter.sh",
        "--no-headers",
    ]);
    assert_eq!(
        rows(&out.stdout),
        [["nodeclaims", "karpenter.sh/v1", "false", "NodeClaim"]]
    );
}

#[test]
fn webhook_converted_crds_serve_only_their_storage_version() {
    let k = Kube::new("crds-v1beta1");
    let out = k.run(&["apply", "-f", fixture("crds/v1beta1").to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("Warning: nodepools.karpenter.sh/v1 is not served by this test cluster: the CustomResourceDefinition converts between v1 and the storage version v1beta1 with a conversion webhook"),
        "{}",
        out.stderr
    );
    k.ok(&["apply", "-f", fixture("crds/v1alpha5").to_str().unwrap()]);
    let res = k.ok(&[
        "api-resources",
        "--api-group",
        "karpenter.sh",
        "--no-headers",
    ]);
    let mut got: Vec<String> = res
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "machines karpenter.sh/v1alpha5 false Machine",
            "nodeclaims karpenter.sh/v1beta1 false NodeClaim",
            "nodepools karpenter.sh/v1beta1 false NodePool",
            "provisioners karpenter.sh/v1alpha5 false Provisioner",
        ]
    );
    let raw = k.run(&["get", "--raw", "/apis/karpenter.sh/v1/nodepools"]);
    assert!(
        raw.stderr
            .contains("nodepools.karpenter.sh/v1 is not served by this test cluster"),
        "{}",
        raw.stderr
    );
    let v1 = k.file(
        "np.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec: {}\n",
    );
    let out = k.run(&["apply", "-f", &v1]);
    assert!(
        out.stderr
            .contains("no matches for kind \"NodePool\" in version \"karpenter.sh/v1\""),
        "{}",
        out.stderr
    );
    let prov = k.file(
        "prov.yaml",
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: default\n",
    );
    assert_eq!(
        k.ok(&["apply", "-f", &prov]),
        "provisioner.karpenter.sh/default created\n"
    );
}

#[test]
fn kubectl_label_annotate_and_scale() {
    let k = Kube::new("label");
    k.ok(&[
        "create",
        "-f",
        &k.file("n.yaml", &node_yaml("node-a", "8", &[])),
    ]);
    assert_eq!(
        k.ok(&["label", "node", "node-a", "team=a"]),
        "node/node-a labeled\n"
    );
    let out = k.run(&["label", "node", "node-a", "team=b"]);
    assert_eq!(
        out.stderr,
        "error: 'team' already has a value (a), and --overwrite is false\n"
    );
    assert_eq!(
        k.ok(&["label", "node", "node-a", "team=b", "--overwrite"]),
        "node/node-a labeled\n"
    );
    assert_eq!(
        k.ok(&["annotate", "node", "node-a", "owner=me"]),
        "node/node-a annotated\n"
    );
    let n = k.json(&["get", "node", "node-a", "-o", "json"]);
    assert_eq!(n["metadata"]["labels"]["team"], "b");
    assert_eq!(n["metadata"]["annotations"]["owner"], "me");
    assert_eq!(
        k.ok(&["label", "node", "node-a", "team-"]),
        "node/node-a unlabeled\n"
    );
    assert!(
        k.json(&["get", "node", "node-a", "-o", "json"])["metadata"]["labels"]["team"].is_null()
    );

    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("inflate", 0, "1", 0)),
    ]);
    assert_eq!(
        k.ok(&["scale", "deployment", "inflate", "--replicas", "5"]),
        "deployment.apps/inflate scaled\n"
    );
    k.ok(&[
        "rollout",
        "status",
        "deployment/inflate",
        "--timeout",
        "20s",
    ]);
    let pods = k.pods("app=inflate");
    assert_eq!(running_ready(&pods), 5);
    assert!(pods.iter().all(|p| p["spec"]["nodeName"] == "node-a"));
    let table = k.ok(&["get", "deploy", "inflate"]);
    assert_eq!(
        rows(&table)[0],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert_eq!(rows(&table)[1][..4], ["inflate", "5/5", "5", "5"]);
    let scale = k.json(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/deployments/inflate/scale",
    ]);
    assert_eq!(
        (
            scale["kind"].as_str(),
            scale["spec"]["replicas"].as_i64(),
            scale["status"]["selector"].as_str()
        ),
        (Some("Scale"), Some(5), Some("app=inflate"))
    );
    k.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    k.eventually(10, "scale down to 2", || {
        (k.pods("app=inflate").len() == 2).then_some(())
    });
    let out = k.run(&[
        "scale",
        "deployment",
        "inflate",
        "--replicas",
        "3",
        "--current-replicas",
        "4",
    ]);
    assert_eq!(out.stderr, "error: Expected replicas to be 4, was 2\n");
}

#[test]
fn kubectl_cordon_shows_scheduling_disabled_and_keeps_pods_away() {
    let k = Kube::new("cordon");
    k.ok(&[
        "create",
        "-f",
        &k.file(
            "n.yaml",
            &[node_yaml("node-a", "8", &[]), node_yaml("node-b", "8", &[])].join("---\n"),
        ),
    ]);
    assert_eq!(k.ok(&["cordon", "node-a"]), "node/node-a cordoned\n");
    assert_eq!(
        k.ok(&["cordon", "node-a"]),
        "node/node-a already cordoned\n"
    );
    let table = k.ok(&["get", "nodes"]);
    let r = rows(&table);
    assert_eq!(r[1][..2], ["node-a", "Ready,SchedulingDisabled"]);
    assert_eq!(r[2][..2], ["node-b", "Ready"]);
    let taint = k.eventually(5, "unschedulable taint", || {
        let n = k.json(&["get", "node", "node-a", "-o", "json"]);
        n["spec"]["taints"]
            .as_array()
            .and_then(|t| t.first().cloned())
    });
    assert_eq!(
        (taint["key"].as_str(), taint["effect"].as_str()),
        (Some("node.kubernetes.io/unschedulable"), Some("NoSchedule"))
    );
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("web", 4, "1", 0)),
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout", "20s"]);
    assert!(k
        .pods("app=web")
        .iter()
        .all(|p| p["spec"]["nodeName"] == "node-b"));
    assert_eq!(k.ok(&["uncordon", "node-a"]), "node/node-a uncordoned\n");
    let table = k.ok(&["get", "nodes"]);
    assert_eq!(rows(&table)[1][..2], ["node-a", "Ready"]);
    k.eventually(5, "taint removed", || {
        k.json(&["get", "node", "node-a", "-o", "json"])["spec"]["taints"]
            .is_null()
            .then_some(())
    });
}

const PDB: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 3\n  selector:\n    matchLabels: {app: web}\n";

const DAEMONSET: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: kube-system
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: busybox:1.36
"#;

#[test]
fn kubectl_drain_is_blocked_by_a_pdb_then_allowed() {
    let k = Kube::new("drain");
    k.ok(&[
        "create",
        "-f",
        &k.file("a.yaml", &node_yaml("node-a", "8", &[])),
    ]);
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("web", 3, "1", 1)),
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout", "20s"]);
    k.ok(&[
        "create",
        "-f",
        &k.file("b.yaml", &node_yaml("node-b", "8", &[])),
    ]);
    k.ok(&[
        "apply",
        "-f",
        &k.file("pdb.yaml", PDB),
        "-f",
        &k.file("ds.yaml", DAEMONSET),
    ]);
    k.eventually(10, "daemon pods on both nodes", || {
        (running_ready(&k.pods("app=agent")) == 2).then_some(())
    });
    let pdb = k.eventually(5, "PDB status", || {
        let p = k.json(&["get", "pdb", "web", "-o", "json"]);
        (p["status"]["currentHealthy"] == 3).then_some(p)
    });
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert_eq!(pdb["status"]["desiredHealthy"], 3);
    assert_eq!(pdb["status"]["expectedPods"], 3);
    let table = k.ok(&["get", "pdb"]);
    assert_eq!(rows(&table)[1][..4], ["web", "3", "N/A", "0"]);

    let blocked = k.run(&["drain", "node-a", "--ignore-daemonsets", "--timeout", "7s"]);
    assert_eq!(blocked.code, 1);
    assert_eq!(blocked.stdout.lines().next(), Some("node/node-a cordoned"));
    assert!(
        blocked
            .stderr
            .contains("Warning: ignoring DaemonSet-managed Pods: kube-system/agent-"),
        "{}",
        blocked.stderr
    );
    assert!(
        blocked.stderr.contains("(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."),
        "{}",
        blocked.stderr
    );
    assert!(
        blocked.stderr.contains("global timeout reached: 7s"),
        "{}",
        blocked.stderr
    );
    assert_eq!(running_ready(&k.pods("app=web")), 3, "nothing was evicted");
    // The raw API answer: 429 with the budget's arithmetic as the cause.
    let victim = names(&k.pods("app=web"))[0].clone();
    let body = format!(
        r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{victim}","namespace":"default"}}}}"#
    );
    let out = k.run(&[
        "create",
        "--raw",
        &format!("/api/v1/namespaces/default/pods/{victim}/eviction"),
        "-f",
        &k.file("ev.json", &body),
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr, "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.\n");

    k.ok(&[
        "patch",
        "pdb",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"minAvailable":2}}"#,
    ]);
    k.eventually(5, "one disruption allowed", || {
        (k.json(&["get", "pdb", "web", "-o", "json"])["status"]["disruptionsAllowed"] == 1)
            .then_some(())
    });
    let drained = k.run(&["drain", "node-a", "--ignore-daemonsets", "--timeout", "60s"]);
    assert_eq!(drained.code, 0, "{}\n{}", drained.stdout, drained.stderr);
    assert!(drained.stdout.contains("node/node-a already cordoned"));
    assert!(
        drained.stdout.ends_with("node/node-a drained\n"),
        "{}",
        drained.stdout
    );
    assert_eq!(
        drained.stdout.matches(" evicted\n").count(),
        3,
        "{}",
        drained.stdout
    );
    let pods = k.pods("app=web");
    assert_eq!(running_ready(&pods), 3);
    assert!(pods.iter().all(|p| p["spec"]["nodeName"] == "node-b"));
    // The DaemonSet pod stays on the drained node.
    assert!(k
        .pods("app=agent")
        .iter()
        .any(|p| p["spec"]["nodeName"] == "node-a"));
}

#[test]
fn eviction_with_two_matching_pdbs_is_a_server_error() {
    let k = Kube::new("two-pdbs");
    k.ok(&[
        "create",
        "-f",
        &k.file("a.yaml", &node_yaml("node-a", "8", &[])),
    ]);
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("web", 2, "1", 0)),
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout", "20s"]);
    let second = PDB
        .replace("name: web", "name: web-2")
        .replace("minAvailable: 3", "maxUnavailable: \"50%\"");
    k.ok(&[
        "apply",
        "-f",
        &k.file("p1.yaml", PDB),
        "-f",
        &k.file("p2.yaml", &second),
    ]);
    let p2 = k.eventually(5, "percentage PDB status", || {
        let p = k.json(&["get", "pdb", "web-2", "-o", "json"]);
        (p["status"]["expectedPods"] == 2).then_some(p)
    });
    assert_eq!(p2["status"]["desiredHealthy"], 1);
    assert_eq!(p2["status"]["disruptionsAllowed"], 1);
    let out = k.run(&["drain", "node-a", "--timeout", "10s"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."),
        "{}",
        out.stderr
    );
}

#[test]
fn kubectl_delete_honours_grace_periods_and_finalizers() {
    let k = Kube::new("delete");
    k.ok(&[
        "create",
        "-f",
        &k.file("a.yaml", &node_yaml("node-a", "8", &[])),
    ]);
    let pod = k.file(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: slow\nspec:\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: c\n    image: busybox:1.36\n",
    );
    assert_eq!(k.ok(&["create", "-f", &pod]), "pod/slow created\n");
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/slow",
        "--timeout",
        "10s",
    ]);
    let start = Instant::now();
    assert_eq!(
        k.ok(&["delete", "pod", "slow", "--wait=false"]),
        "pod \"slow\" deleted\n"
    );
    let p = k.json(&["get", "pod", "slow", "-o", "json"]);
    assert!(p["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(p["metadata"]["deletionGracePeriodSeconds"], 2);
    assert_eq!(rows(&k.ok(&["get", "pod", "slow"]))[1][2], "Terminating");
    k.ok(&["wait", "--for=delete", "pod/slow", "--timeout", "10s"]);
    assert!(
        start.elapsed() >= Duration::from_millis(1000),
        "removed before its grace period"
    );
    // A finalizer holds the object until it is removed.
    let cm = k.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n");
    k.ok(&["create", "-f", &cm]);
    assert_eq!(
        k.ok(&["delete", "configmap", "held", "--wait=false"]),
        "configmap \"held\" deleted\n"
    );
    let c = k.json(&["get", "configmap", "held", "-o", "json"]);
    assert!(c["metadata"]["deletionTimestamp"].is_string());
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let gone = k.run(&["get", "configmap", "held"]);
    assert_eq!(
        gone.stderr,
        "Error from server (NotFound): configmaps \"held\" not found\n"
    );
    // Deleting a Deployment takes its ReplicaSets and pods with it.
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("web", 2, "1", 0)),
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout", "20s"]);
    assert_eq!(
        k.ok(&["delete", "deployment", "web"]),
        "deployment.apps \"web\" deleted\n"
    );
    k.eventually(10, "dependents collected", || {
        (k.ok(&["get", "rs,pods", "-o", "name"]).is_empty()).then_some(())
    });
    let out = k.run(&["delete", "pod", "nope"]);
    assert_eq!(
        out.stderr,
        "Error from server (NotFound): pods \"nope\" not found\n"
    );
}

#[test]
fn kubectl_rollout_restart_replaces_pods() {
    let k = Kube::new("restart");
    k.ok(&[
        "create",
        "-f",
        &k.file("a.yaml", &node_yaml("node-a", "16", &[])),
    ]);
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("web", 3, "1", 0)),
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout", "20s"]);
    let before = names(&k.pods("app=web"));
    assert_eq!(before.len(), 3);
    assert_eq!(
        k.ok(&["rollout", "restart", "deployment/web"]),
        "deployment.apps/web restarted\n"
    );
    let status = k.ok(&["rollout", "status", "deployment/web", "--timeout", "30s"]);
    assert!(
        status.ends_with("deployment \"web\" successfully rolled out\n"),
        "{status}"
    );
    let after = k.eventually(10, "old pods gone", || {
        let pods = k.pods("app=web");
        (pods.len() == 3 && running_ready(&pods) == 3).then(|| names(&pods))
    });
    assert!(
        after.iter().all(|n| !before.contains(n)),
        "{before:?} → {after:?}"
    );
    let d = k.json(&["get", "deploy", "web", "-o", "json"]);
    assert!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .is_string()
    );
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let rs = k.ok(&["get", "rs", "-o", "name"]);
    assert_eq!(
        rs.lines().count(),
        2,
        "the old ReplicaSet is kept, scaled to 0: {rs}"
    );
    let history = k.ok(&["rollout", "history", "deployment/web"]);
    assert!(
        history.contains("1 ") && history.contains("2 "),
        "{history}"
    );
}

#[test]
fn scheduler_marks_pods_that_fit_nowhere_unschedulable() {
    let k = Kube::new("scheduler");
    k.ok(&[
        "create",
        "-f",
        &k.file(
            "n.yaml",
            &[
                node_yaml("small", "2", &[("zone", "a")]),
                node_yaml("tainted", "16", &[]),
            ]
            .join("---\n"),
        ),
    ]);
    k.ok(&["taint", "node", "tainted", "dedicated=gpu:NoSchedule"]);
    k.ok(&[
        "apply",
        "-f",
        &k.file("d.yaml", &deployment_yaml("big", 1, "4", 0)),
    ]);
    let pod = k.eventually(5, "Unschedulable condition", || {
        let pods = k.pods("app=big");
        pods.into_iter().find(|p| {
            p["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["reason"] == "Unschedulable"))
        })
    });
    let cond = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .unwrap()
        .clone();
    assert_eq!(cond["status"], "False");
    assert_eq!(
        cond["message"],
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        rows(&k.ok(&["get", "pods", "-l", "app=big"]))[1][2],
        "Pending"
    );
    let events = k.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=FailedScheduling",
    ]);
    assert!(events.contains("FailedScheduling"), "{events}");
    // A toleration and a fitting node selector make it schedulable.
    k.ok(&[
        "patch",
        "deploy",
        "big",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}]}}}}"#,
    ]);
    k.ok(&["rollout", "status", "deployment/big", "--timeout", "20s"]);
    assert!(k
        .pods("app=big")
        .iter()
        .all(|p| p["spec"]["nodeName"] == "tainted"));
    // Node affinity that nothing satisfies.
    k.ok(&[
        "patch",
        "deploy",
        "big",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"nodeSelector":{"zone":"b"}}}}}"#,
    ]);
    let msg = k.eventually(5, "affinity mismatch", || {
        k.pods("app=big").iter().find_map(|p| {
            p["status"]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["reason"] == "Unschedulable")
                .map(|c| c["message"].as_str().unwrap_or("").to_string())
        })
    });
    assert!(
        msg.starts_with(
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
        ),
        "{msg}"
    );
}

#[test]
fn watches_stream_changes_from_a_resource_version() {
    let k = Kube::new("watch");
    k.ok(&["create", "configmap", "a", "--from-literal=k=1"]);
    let rv = k.json(&["get", "--raw", "/api/v1/namespaces/default/configmaps"])["metadata"]
        ["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    k.ok(&["create", "configmap", "b", "--from-literal=k=1"]);
    k.ok(&["label", "configmap", "a", "x=y"]);
    k.ok(&["delete", "configmap", "b"]);
    // A watch from an older resourceVersion replays what happened since, in order.
    let mut child = k
        .command(&["get", "--raw", &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1")])
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(status.success(), "{out}");
    let events: Vec<(String, String)> = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["type"].as_str().unwrap().to_string(),
                v["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("ADDED".into(), "b".into()),
            ("MODIFIED".into(), "a".into()),
            ("DELETED".into(), "b".into())
        ]
    );
    // `kubectl get -w` prints the changes as they come.
    let child = k
        .command(&[
            "get",
            "configmaps",
            "-w",
            "--output-watch-events",
            "--request-timeout=4s",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    k.ok(&["create", "configmap", "c", "--from-literal=k=1"]);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("ADDED") && l.contains(" c ")),
        "{text}"
    );
    // A too old resourceVersion is 410 Gone (Expired) in the stream.
    let out = k.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1",
    ]);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            v["type"].as_str(),
            v["object"]["code"].as_i64(),
            v["object"]["reason"].as_str()
        ),
        (Some("ERROR"), Some(410), Some("Expired"))
    );
}

#[test]
fn ec2_kubelet_registers_a_node_per_running_instance_from_its_user_data() {
    let moto = crate::moto::Moto::start(&[]);
    let k = Kube::with(
        "ec2-kubelet",
        Config {
            kubernetes_version: "1.29".into(),
            ec2_endpoint: Some(moto.url.clone()),
            region: moto.region().to_string(),
            ..Config::default()
        },
    );
    let user_data = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: test-cluster\n  kubelet:\n    flags:\n    - --node-labels=eks-immersion-team=my-team,karpenter.sh/nodepool=default\n    - --register-with-taints=dedicated=batch:NoSchedule\n--//--\n";
    let id = crate::support::boto3(
        &moto,
        &format!(
            "img = ec2.describe_images(Owners=['amazon'])['Images'][0]['ImageId']\nr = ec2.run_instances(ImageId=img, MinCount=1, MaxCount=1, InstanceType='m5.large', UserData={user_data:?})\nprint(r['Instances'][0]['InstanceId'])"
        ),
    );
    let node = k.eventually(15, "the instance's Node", || {
        let items = k.json(&[
            "get",
            "nodes",
            "-l",
            "eks-immersion-team=my-team",
            "-o",
            "json",
        ])["items"]
            .clone();
        items.as_array().and_then(|a| a.first().cloned())
    });
    let provider = node["spec"]["providerID"].as_str().unwrap();
    assert!(
        provider.starts_with("aws:///") && provider.ends_with(&format!("/{id}")),
        "{provider}"
    );
    assert_eq!(
        node["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "m5.large"
    );
    assert_eq!(
        node["metadata"]["labels"]["karpenter.sh/nodepool"],
        "default"
    );
    assert_eq!(
        node["spec"]["taints"][0],
        serde_json::json!({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
    );
    // docs/karpenter.md §6.3: m5.large on the EKS AMIs.
    let alloc = &node["status"]["allocatable"];
    assert_eq!(
        (
            alloc["cpu"].as_str(),
            alloc["memory"].as_str(),
            alloc["pods"].as_str()
        ),
        (Some("1930m"), Some("6903Mi"), Some("29"))
    );
    let table = k.ok(&["get", "nodes", "-l", "eks-immersion-team=my-team"]);
    assert_eq!(
        rows(&table)[1][1..],
        ["Ready", "<none>", rows(&table)[1][3].as_str(), "v1.29.0"]
    );
    crate::support::boto3(
        &moto,
        &format!("ec2.terminate_instances(InstanceIds=[{id:?}])"),
    );
    k.eventually(15, "the Node removed", || {
        k.ok(&["get", "nodes", "-o", "name"])
            .is_empty()
            .then_some(())
    });
}

/// Storage as an API server serves it, for the live plan's storage reads: StorageClass defaults
/// (`volumeBindingMode: Immediate`), the `DefaultStorageClass` admission on claims created
/// without a class, and CSINodes.
#[test]
fn kubectl_storage_defaults_and_csinodes() {
    let k = Kube::new("storage");
    let sc = k.file(
        "sc.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3\n  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\nprovisioner: ebs.csi.aws.com\n---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node-a}\nspec:\n  drivers: [{name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25}}]\n",
    );
    k.ok(&["apply", "-f", &sc]);
    let class = k.json(&["get", "storageclass", "gp3", "-o", "json"]);
    assert_eq!(class["volumeBindingMode"], "Immediate");
    assert_eq!(class["reclaimPolicy"], "Delete");
    let pvc = k.file(
        "pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: none}\nspec:\n  storageClassName: \"\"\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
    );
    k.ok(&["create", "-f", &pvc]);
    let claim = k.json(&["get", "pvc", "data", "-o", "json"]);
    assert_eq!(claim["spec"]["storageClassName"], "gp3");
    let claim = k.json(&["get", "pvc", "none", "-o", "json"]);
    assert_eq!(claim["spec"]["storageClassName"], "");
    let node = k.json(&["get", "csinode", "node-a", "-o", "json"]);
    assert_eq!(node["spec"]["drivers"][0]["allocatable"]["count"], 25);
}
