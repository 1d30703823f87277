//! moto as the EC2/SSM peer: starts `tests/moto/server.py` (ThreadedMotoServer seeded with the
//! EKS-optimized AMI parameters, images, a VPC, subnets and security groups) with the test
//! Python, waits for its URL, and stops it when dropped (or, for the shared instance, when the
//! test binary exits and its stdin closes).
//!
//! A missing moto is a test failure, not a skip: `./scripts/test` installs it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use kubectl_karpenter::cloud::aws::{AwsCloud, AwsOptions};

use crate::support::{self, Run};

/// A running moto.
pub struct Moto {
    child: Child,
    stdin: Option<ChildStdin>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// What the launcher seeded (its stdout line 2).
    pub seed: Value,
}

impl Moto {
    /// Starts a fresh moto (`extra` are launcher flags, e.g. `--iam`).
    pub fn start(extra: &[&str]) -> Moto {
        let python = support::python();
        let script = support::root().join("tests/moto/server.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {} (moto's Python): {e}; run ./scripts/test",
                    python.display()
                )
            });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let url = lines.next().and_then(Result::ok);
            let seed = lines.next().and_then(Result::ok);
            let _ = tx.send((url, seed));
            // Keep draining so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let (url, seed) = match rx.recv_timeout(Duration::from_secs(90)) {
            Ok((Some(url), Some(seed))) => (url, seed),
            other => {
                let _ = child.kill();
                let status = child.wait().ok();
                panic!(
                    "moto launcher did not start ({other:?}, exit {status:?}); is moto installed in {}? run ./scripts/test",
                    python.display()
                );
            }
        };
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "unexpected moto URL {url:?}"
        );
        Moto {
            stdin: child.stdin.take(),
            child,
            url,
            seed: serde_json::from_str(&seed).expect("moto seed description is JSON"),
        }
    }

    /// The moto every read-only test shares (seeded once; nothing mutates it).
    pub fn shared() -> &'static Moto {
        static SHARED: OnceLock<Moto> = OnceLock::new();
        SHARED.get_or_init(|| Moto::start(&[]))
    }

    /// The seeded region.
    pub fn region(&self) -> &str {
        self.seed["region"].as_str().unwrap()
    }

    /// The value of a seeded SSM parameter.
    pub fn param(&self, name: &str) -> String {
        self.seed["parameters"][name]
            .as_str()
            .unwrap_or_else(|| panic!("seed has no parameter {name}"))
            .to_string()
    }

    /// The id of the seeded image named `name`.
    pub fn image(&self, name: &str) -> String {
        self.seed["images"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap_or_else(|| panic!("seed has no image {name}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Seeded subnets: name tag → (id, zone).
    pub fn subnets(&self) -> BTreeMap<String, (String, String)> {
        self.seed["subnets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["tags"]["Name"].as_str().unwrap().to_string(),
                    (
                        s["id"].as_str().unwrap().to_string(),
                        s["zone"].as_str().unwrap().to_string(),
                    ),
                )
            })
            .collect()
    }

    /// Seeded security groups: name → id.
    pub fn groups(&self) -> BTreeMap<String, String> {
        self.seed["securityGroups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["name"].as_str().unwrap().to_string(),
                    g["id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// An adapter connected to this moto with static credentials and the seeded region.
    pub fn cloud(&self) -> AwsCloud {
        AwsCloud::connect(&AwsOptions {
            region: Some(self.region().to_string()),
            endpoint_url: Some(self.url.clone()),
            static_credentials: Some(("testing".into(), "testing".into())),
            ..AwsOptions::default()
        })
        .expect("connect to moto")
    }

    /// Runs `kubectl-karpenter ARGS` against this moto with dummy credentials and the region
    /// from the environment; `env` adds or overrides variables (`("AWS_REGION", "")` removes).
    pub fn karpenter(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = karpenter_command(args);
        cmd.env("AWS_ENDPOINT_URL", &self.url)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", self.region());
        for (k, v) in env {
            if v.is_empty() {
                cmd.env_remove(k);
            } else {
                cmd.env(k, v);
            }
        }
        run(cmd)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        // Closing stdin asks the launcher to stop; kill it if it does not within a few seconds.
        drop(self.stdin.take());
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary with a hermetic AWS environment: no inherited AWS variables, no shared config
/// files, and no instance-metadata lookups (which would leave the machine).
pub fn karpenter_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"));
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    let nowhere: PathBuf = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-aws-config");
    cmd.args(args)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", &nowhere)
        .env("AWS_SHARED_CREDENTIALS_FILE", &nowhere)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs a prepared command with empty stdin.
pub fn run(mut cmd: Command) -> Run {
    let mut child = cmd.spawn().expect("run kubectl-karpenter");
    drop(child.stdin.take().map(|mut s| s.write_all(b"")));
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn moto_launcher_serves_the_seeded_account_and_stops_on_stdin_close() {
    let moto = Moto::start(&[]);
    let cloud = moto.cloud();
    use kubectl_karpenter::cloud::Cloud;
    let name =
        "/aws/service/eks/optimized-ami/1.24/amazon-linux-2/recommended/image_id".to_string();
    let got = cloud
        .get_parameters(&[name.clone(), "/aws/service/nope".into()])
        .unwrap();
    assert_eq!(
        got.values[&name],
        moto.image("amazon-eks-node-1.24-v20240625")
    );
    assert_eq!(got.invalid, ["/aws/service/nope"]);
    assert_eq!(cloud.call_counts().get("SSM.GetParameters"), 1);
    let mut moto = moto;
    drop(moto.stdin.take());
    let mut stopped = false;
    for _ in 0..100 {
        if let Ok(Some(_)) = moto.child.try_wait() {
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(stopped, "the launcher keeps running after its stdin closed");
}
