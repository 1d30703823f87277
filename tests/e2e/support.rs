//! Helpers shared by the test modules.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The crate root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/fixtures/...`: our example manifests and the vendored Karpenter CRDs.
pub fn fixture(path: &str) -> PathBuf {
    root().join("tests/fixtures").join(path)
}

/// The Python with moto that `scripts/test` prepares; tests needing it fail (not skip) without.
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("KUBECTL_KARPENTER_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "no test Python: run the tests with ./scripts/test (it installs moto into .venv)"
    );
    venv
}

/// Runs a boto3 snippet against moto with the test Python: `ec2` is a client for it, `EP` and
/// `REGION` are set.
pub fn boto3(moto: &crate::moto::Moto, code: &str) -> String {
    let out = Command::new(python())
        .arg("-c")
        .arg(format!(
            "import boto3\nEP={:?}\nREGION={:?}\nec2=boto3.client('ec2', endpoint_url=EP, region_name=REGION)\n{code}",
            moto.url,
            moto.region()
        ))
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The fields of every `ProvisioningPlan` NodeClaim (docs/spec.md §5 `nodeClaims[]`).
pub const PLAN_NODECLAIM_FIELDS: [&str; 16] = [
    "name",
    "nodePool",
    "nodeClass",
    "instanceType",
    "instanceTypes",
    "capacityType",
    "zone",
    "zones",
    "pricePerHour",
    "round",
    "pods",
    "requests",
    "labels",
    "annotations",
    "taints",
    "requirements",
];

/// Asserts `object` has each of `fields` (`what` names it in the failure).
pub fn assert_fields(object: &serde_json::Value, fields: &[&str], what: &str) {
    for field in fields {
        assert!(
            object.get(field).is_some(),
            "{what}.{field} missing: {object:#}"
        );
    }
}

/// What running the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts an input error: exit 2 and one stderr line containing `want` (`what` names the
    /// scenario in the failure).
    pub fn assert_refused_in_one_line(&self, what: &str, want: &str) {
        let line = self.stderr.trim_end();
        assert_eq!(self.code, 2, "{what}: {}", self.stderr);
        assert!(
            line.lines().count() == 1 && line.contains(want),
            "{what}: want {want:?}\n got {line}"
        );
    }
}

/// `provision --dry-run --region us-east-1` of a fixture, and of each edit of it: the fixture
/// plans with exit 0 placing all pods, and each `(what, from, to, want)` (the first `from`
/// replaced by `to`) is refused with exit 2 and one line containing `want`.
pub fn assert_edits_refused(fixture_path: &str, edits: &[(&str, &str, &str, &str)]) {
    let provision = |text: &str| {
        let args = ["provision", "--dry-run", "--region", "us-east-1", "-f", "-"];
        karpenter(&args, text.as_bytes())
    };
    let text = std::fs::read_to_string(fixture(fixture_path)).unwrap();
    let run = provision(&text);
    assert_eq!(run.code, 0, "{fixture_path}: {}", run.stderr);
    assert!(run.stdout.contains(" 0 unschedulable"), "{}", run.stdout);
    for (what, from, to, want) in edits {
        assert!(text.contains(from), "{what}: the fixture lost {from:?}");
        provision(&text.replacen(from, to, 1)).assert_refused_in_one_line(what, want);
    }
}

/// Runs `kubectl-karpenter ARGS` with `stdin`, in a clean environment for AWS variables.
pub fn karpenter(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args(args)
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl-karpenter");
    // A command may exit (bad flags, bad input) before reading its stdin: a closed pipe then
    // is its answer, not the test's failure.
    match child.stdin.take().unwrap().write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    Run::from(child.wait_with_output().unwrap())
}

/// `kubectl-karpenter ARGS -f tests/fixtures/FIXTURE -o json`: the run and its document
/// (null when stdout is not JSON).
pub fn fixture_json(args: &[&str], fixture_path: &str) -> (Run, serde_json::Value) {
    let file = fixture(fixture_path).to_string_lossy().into_owned();
    let mut all = args.to_vec();
    all.extend(["-f", &file, "-o", "json"]);
    let run = karpenter(&all, b"");
    let doc = serde_json::from_str(&run.stdout).unwrap_or(serde_json::Value::Null);
    (run, doc)
}

/// (pool, launched type, pods) of each NodeClaim of a `ProvisioningPlan`.
pub fn claims_launched(plan: &serde_json::Value) -> Vec<(String, String, usize)> {
    plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["nodePool"].as_str().unwrap().to_string(),
                c["instanceType"].as_str().unwrap().to_string(),
                c["pods"].as_array().unwrap().len(),
            )
        })
        .collect()
}

/// `kubectl-karpenter ARGS -f tests/fixtures/FIXTURE --region us-east-1` (offline).
pub fn run_fixture(fixture_path: &str, args: &[&str]) -> Run {
    let file = fixture(fixture_path);
    let file = file.to_string_lossy().into_owned();
    let mut all = args.to_vec();
    all.extend(["-f", file.as_str(), "--region", "us-east-1"]);
    karpenter(&all, b"")
}

/// `consolidate -f tests/fixtures/FIXTURE --region us-east-1 --now NOW -o json`: the report
/// (offline, the embedded catalog).
pub fn consolidate_fixture(fixture_path: &str, now: &str) -> serde_json::Value {
    let file = fixture(fixture_path);
    let file = file.to_string_lossy();
    let args = [
        "consolidate",
        "-f",
        &file,
        "--region",
        "us-east-1",
        "--now",
        now,
        "-o",
        "json",
    ];
    let run = karpenter(&args, b"");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr))
}

/// Objects as one multi-document manifest stream (JSON documents, `---` between them), for `-f -`.
pub fn manifest_stream(objects: &[serde_json::Value]) -> String {
    objects
        .iter()
        .map(|o| serde_json::to_string(o).unwrap())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// Writes `text` to a fresh file under the test temp dir and returns its path.
pub fn write_temp(name: &str, text: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Deep merge of JSON objects (`patch` wins; arrays are replaced): a test's object with the
/// fields one It changes.
pub fn merge(target: &mut serde_json::Value, patch: serde_json::Value) {
    match (target, patch) {
        (serde_json::Value::Object(t), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

/// `provision --dry-run -q -f - -o json` with `extra` flags on a `kind: List` of `items`: the exit
/// code and the plan document.
pub fn provision_json(extra: &[&str], items: Vec<serde_json::Value>) -> (i32, serde_json::Value) {
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let mut args = vec!["provision", "--dry-run", "-q", "-f", "-", "-o", "json"];
    args.extend_from_slice(extra);
    let run = karpenter(&args, list.to_string().as_bytes());
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run.code, json)
}

/// `provision --dry-run -f FIXTURE --region us-east-1 -o json` (`path` under tests/fixtures):
/// the plan document.
pub fn plan_fixture(path: &str) -> serde_json::Value {
    plan_fixture_with(path, &[])
}

/// [`plan_fixture`] with more arguments (e.g. `["--catalog", FILE]`).
pub fn plan_fixture_with(path: &str, more: &[&str]) -> serde_json::Value {
    let file = fixture(path);
    let file = file.to_string_lossy();
    let mut args = vec![
        "provision",
        "--dry-run",
        "-f",
        &file,
        "--region",
        "us-east-1",
        "-o",
        "json",
    ];
    args.extend_from_slice(more);
    let run = karpenter(&args, b"");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr))
}

/// The strings of a JSON array (none when it is not one).
pub fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// (zone label, pods) of each NodeClaim of a plan.
pub fn claim_zones(plan: &serde_json::Value) -> Vec<(String, Vec<String>)> {
    (plan["nodeClaims"].as_array().unwrap().iter())
        .map(|c| {
            let zone = c["labels"]["topology.kubernetes.io/zone"].as_str();
            (zone.unwrap_or("").to_string(), names(&c["pods"]))
        })
        .collect()
}
