//! `enable-drift` / `disable-drift` against the local test cluster (real kubectl sets it up and
//! reads it back; the built binary acts): the v0.2x ConfigMap + rollout restart, the v0.32–v0.37
//! `FEATURE_GATES` env, v1's "no gate", refusing without a terminal, and no controller at all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{fixture, karpenter, Run};
use crate::test_cluster::{Config, TestCluster};

/// A test cluster with a Ready node and a kubeconfig (also docs_run's).
pub(crate) struct Kube {
    _cluster: TestCluster,
    dir: PathBuf,
    pub(crate) kubeconfig: PathBuf,
}

impl Kube {
    pub(crate) fn new(test: &str) -> Kube {
        let cluster = TestCluster::start(Config {
            kubernetes_version: "1.25".into(),
            max_grace: Some(Duration::from_secs(0)),
            ..Config::default()
        })
        .expect("start test cluster");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("drift-gate")
            .join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        cluster.write_kubeconfig(&kubeconfig).unwrap();
        let k = Kube {
            _cluster: cluster,
            dir,
            kubeconfig,
        };
        k.apply(
            "node.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels:\n    kubernetes.io/hostname: node-a\nstatus:\n  capacity: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n  allocatable: {cpu: \"8\", memory: 15Gi, pods: \"110\"}\n",
        );
        k
    }

    /// Runs kubectl; panics unless it succeeds.
    pub(crate) fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("kubectl must be on PATH");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn apply(&self, name: &str, yaml: &str) {
        let path = self.dir.join(name);
        std::fs::write(&path, yaml).unwrap();
        self.kubectl(&["apply", "-f", path.to_str().unwrap()]);
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl(&all)).unwrap()
    }

    /// Runs the plugin with `--kubeconfig` (stdin is not a terminal).
    pub(crate) fn karpenter(&self, args: &[&str]) -> Run {
        let mut all = args.to_vec();
        all.extend(["--kubeconfig", self.kubeconfig.to_str().unwrap()]);
        karpenter(&all, b"")
    }

    fn deployment(&self) -> Value {
        self.json(&["-n", "karpenter", "get", "deployment", "karpenter"])
    }

    fn drift_key(&self) -> String {
        let cm = self.json(&[
            "-n",
            "karpenter",
            "get",
            "configmap",
            "karpenter-global-settings",
        ]);
        cm["data"]["featureGates.driftEnabled"]
            .as_str()
            .unwrap_or("<unset>")
            .to_string()
    }

    fn rollout_done(&self) {
        let out = self.kubectl(&[
            "-n",
            "karpenter",
            "rollout",
            "status",
            "deployment/karpenter",
            "--timeout",
            "30s",
        ]);
        assert!(out.contains("successfully rolled out"), "{out}");
    }
}

/// A controller Deployment as the Helm chart renders it (trimmed), with `env` lines.
fn controller(version: &str, image_tag: &str, env: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata:
  name: karpenter
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: karpenter
  namespace: karpenter
  labels:
    app.kubernetes.io/name: karpenter
    app.kubernetes.io/instance: karpenter
    app.kubernetes.io/version: "{version}"
spec:
  replicas: 2
  selector:
    matchLabels: {{app.kubernetes.io/name: karpenter, app.kubernetes.io/instance: karpenter}}
  template:
    metadata:
      labels: {{app.kubernetes.io/name: karpenter, app.kubernetes.io/instance: karpenter}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: controller
        image: public.ecr.aws/karpenter/controller:{image_tag}
        resources:
          requests: {{cpu: 100m}}
        env:
        - name: CLUSTER_NAME
          value: demo
{env}"#
    )
}

const SETTINGS: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: karpenter-global-settings
  namespace: karpenter
data:
  aws.clusterName: demo
  batchMaxDuration: 10s
  featureGates.driftEnabled: "false"
"#;

fn restarted_at(d: &Value) -> Option<String> {
    d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
        .as_str()
        .map(str::to_string)
}

fn doc(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
}

#[test]
fn v027_configmap_flip_restarts_and_is_idempotent() {
    let k = Kube::new("v027");
    k.apply("controller.yaml", &controller("0.27.6", "v0.27.6", ""));
    k.apply("settings.yaml", SETTINGS);
    k.rollout_done();
    let generation = k.deployment()["metadata"]["generation"].clone();

    // --dry-run shows the diff and changes nothing.
    let run = k.karpenter(&["enable-drift", "--dry-run"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "ConfigMap karpenter/karpenter-global-settings: featureGates.driftEnabled: \"false\" → \"true\""
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Deployment karpenter/karpenter: rollout restart"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Dry run: nothing changed."));
    assert_eq!(k.drift_key(), "false");
    assert_eq!(k.deployment()["metadata"]["generation"], generation);

    // No terminal and no --yes: refused, nothing changed.
    let run = k.karpenter(&["enable-drift"]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--yes"), "{}", run.stderr);
    assert_eq!(k.drift_key(), "false");
    assert!(restarted_at(&k.deployment()).is_none());

    // For real: the key flips, the pod template gains restartedAt, the rollout completes.
    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("successfully rolled out"),
        "{}",
        run.stderr
    );
    assert_eq!(k.drift_key(), "true");
    let d = k.deployment();
    let stamp = restarted_at(&d).expect("restartedAt set");
    assert_eq!(d["status"]["updatedReplicas"], 2, "{d:#}");
    assert_eq!(d["status"]["availableReplicas"], 2, "{d:#}");
    assert_eq!(d["status"]["replicas"], 2, "{d:#}");
    k.rollout_done();
    let generation = d["metadata"]["generation"].clone();

    // Again: nothing to do, no restart.
    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("already enabled"), "{}", run.stdout);
    let d = k.deployment();
    assert_eq!(d["metadata"]["generation"], generation);
    assert_eq!(restarted_at(&d).as_deref(), Some(stamp.as_str()));

    // disable-drift restores "false"; the JSON document says what changed.
    let run = k.karpenter(&["disable-drift", "--yes", "-o", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc = doc(&run);
    assert_eq!(doc["apiVersion"], "kubectl-karpenter/v1");
    assert_eq!(doc["kind"], "DriftGateChange");
    assert_eq!(doc["generation"], "v0.21-v0.31");
    assert_eq!(doc["mechanism"], "configMap");
    assert_eq!(doc["restarted"], true);
    assert_eq!(doc["dryRun"], false);
    assert_eq!(
        doc["changes"][0],
        serde_json::json!({"object": "ConfigMap karpenter/karpenter-global-settings", "field": "featureGates.driftEnabled", "old": "true", "new": "false"})
    );
    assert_eq!(
        doc["changes"][1]["field"],
        "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
    );
    assert_eq!(k.drift_key(), "false");
    // Other settings are untouched.
    let cm = k.json(&["-n", "karpenter", "get", "cm", "karpenter-global-settings"]);
    assert_eq!(cm["data"]["aws.clusterName"], "demo");
    assert_eq!(cm["data"]["batchMaxDuration"], "10s");
    k.rollout_done();

    // --no-restart only edits the ConfigMap.
    let generation = k.deployment()["metadata"]["generation"].clone();
    let run = k.karpenter(&["enable-drift", "--yes", "--no-restart"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("next restart"), "{}", run.stdout);
    assert_eq!(k.drift_key(), "true");
    assert_eq!(k.deployment()["metadata"]["generation"], generation);
}

#[test]
fn v033_feature_gates_env_keeps_other_gates() {
    let k = Kube::new("v033");
    k.apply(
        "controller.yaml",
        &controller(
            "0.33.0",
            "0.33.0",
            "        - name: FEATURE_GATES\n          value: Drift=false,SpotToSpotConsolidation=true\n",
        ),
    );
    k.rollout_done();
    let env_of = |d: &Value| {
        d["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["value"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect::<Vec<_>>()
    };

    let run = k.karpenter(&["enable-drift", "--dry-run"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "Deployment karpenter/karpenter: containers[controller].env.FEATURE_GATES: \"Drift=false,SpotToSpotConsolidation=true\" → \"Drift=true,SpotToSpotConsolidation=true\""
        ),
        "{}",
        run.stdout
    );

    // The env change rolls the Deployment by itself: --no-restart cannot be honoured.
    let run = k.karpenter(&["enable-drift", "--yes", "--no-restart"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);

    let before = k.deployment()["metadata"]["generation"].as_i64().unwrap();
    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let d = k.deployment();
    assert_eq!(
        env_of(&d),
        [
            ("CLUSTER_NAME".to_string(), "demo".to_string()),
            (
                "FEATURE_GATES".to_string(),
                "Drift=true,SpotToSpotConsolidation=true".to_string()
            ),
        ]
    );
    assert!(d["metadata"]["generation"].as_i64().unwrap() > before);
    assert_eq!(d["status"]["updatedReplicas"], 2, "{d:#}");
    assert_eq!(d["status"]["availableReplicas"], 2, "{d:#}");
    assert!(restarted_at(&d).is_none(), "no explicit restart needed");
    k.rollout_done();

    let run = k.karpenter(&["enable-drift", "--yes", "-o", "yaml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: Value = serde_saphyr::from_str(&run.stdout).unwrap();
    assert_eq!(doc["unchanged"], true);
    assert_eq!(doc["mechanism"], "featureGatesEnv");
    assert_eq!(doc["changes"], serde_json::json!([]));
    assert_eq!(
        k.deployment()["metadata"]["generation"],
        d["metadata"]["generation"]
    );

    let run = k.karpenter(&["disable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        env_of(&k.deployment())[1].1,
        "Drift=false,SpotToSpotConsolidation=true"
    );
}

#[test]
fn v1_has_no_gate_and_shows_drift_budgets() {
    let k = Kube::new("v1");
    k.kubectl(&["apply", "-f", fixture("crds/v1").to_str().unwrap()]);
    k.apply("controller.yaml", &controller("1.0.0", "1.0.0", ""));
    k.apply(
        "nodepool.yaml",
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    budgets:
    - nodes: "20%"
    - nodes: "0"
      reasons: [Empty]
    - nodes: "1"
      reasons: [Drifted]
"#,
    );
    let generation = k.deployment()["metadata"]["generation"].clone();
    // No --yes and no terminal: nothing to confirm, so no refusal.
    let run = k.karpenter(&["enable-drift"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("no drift feature gate"),
        "{}",
        run.stdout
    );
    let rows: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("NODEPOOL"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["default", "20%", "-", "-", "(all)", "yes"],
            vec!["default", "1", "-", "-", "Drifted", "yes"],
        ],
        "{}",
        run.stdout
    );
    let run = k.karpenter(&["disable-drift", "-o", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc = doc(&run);
    assert_eq!(doc["generation"], "v1");
    assert_eq!(doc["mechanism"], "none");
    assert_eq!(doc["nodePools"][0]["name"], "default");
    assert_eq!(doc["nodePools"][0]["budgets"].as_array().unwrap().len(), 2);
    assert_eq!(k.deployment()["metadata"]["generation"], generation);
}

#[test]
fn no_controller_is_a_cluster_error_and_several_need_a_namespace() {
    let k = Kube::new("none");
    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("error: no Karpenter controller Deployment in the cluster"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 2, "{}", run.stderr);

    k.apply("controller.yaml", &controller("0.27.6", "v0.27.6", ""));
    k.apply("settings.yaml", SETTINGS);
    k.apply(
        "other.yaml",
        &controller("0.27.6", "v0.27.6", "").replace("karpenter\n", "karpenter-b\n"),
    );
    let run = k.karpenter(&["enable-drift", "--dry-run"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("karpenter-b/karpenter-b, karpenter/karpenter"),
        "{}",
        run.stderr
    );
    let run = k.karpenter(&[
        "enable-drift",
        "--dry-run",
        "--karpenter-namespace",
        "karpenter",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // karpenter-b has no settings ConfigMap: a v0.27 controller needs it.
    let run = k.karpenter(&[
        "enable-drift",
        "--yes",
        "--karpenter-namespace",
        "karpenter-b",
    ]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("ConfigMap karpenter-b/karpenter-global-settings not found"),
        "{}",
        run.stderr
    );
    assert_eq!(k.drift_key(), "false");
}

#[test]
fn v032_without_feature_gates_honours_the_configmap_then_adds_the_env() {
    let k = Kube::new("v032");
    k.apply("controller.yaml", &controller("0.32.10", "v0.32.10", ""));
    k.apply(
        "settings.yaml",
        &SETTINGS.replace("driftEnabled: \"false\"", "driftEnabled: \"true\""),
    );
    k.rollout_done();
    // v0.32 merges the ConfigMap key in when FEATURE_GATES is not set: drift is on already.
    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("already enabled"), "{}", run.stdout);
    let run = k.karpenter(&["disable-drift", "--yes", "-o", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc = doc(&run);
    assert_eq!(doc["generation"], "v0.32");
    assert_eq!(doc["changes"][0]["old"], Value::Null);
    assert_eq!(doc["changes"][0]["new"], "Drift=false");
    let env = &k.deployment()["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(
        env,
        &serde_json::json!([{"name": "CLUSTER_NAME", "value": "demo"}, {"name": "FEATURE_GATES", "value": "Drift=false"}])
    );
    k.rollout_done();
}
