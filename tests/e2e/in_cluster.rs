//! In the cluster, unattended (issue #13 item 6, docs/in-cluster.md), end to end: the loopback
//! cluster over TLS with RBAC on; `deploy/in-cluster.yaml`'s ServiceAccount and bindings (with
//! `deploy/rbac.yaml`'s roles) applied; two replicas of the Deployment's container — its very
//! arguments — started the way a pod starts them: no kubeconfig, `KUBERNETES_SERVICE_HOST`/
//! `_PORT`, the ServiceAccount's token, CA and namespace mounted in a directory, `HOSTNAME` the
//! pod's name, AWS credentials by IRSA (a web identity token file and a role, no keys). One
//! replica leads (ready), the other waits (live, not ready); the leader is SIGKILLed; pods go
//! pending while nobody leads; the standby takes the lease once it has expired and launches for
//! them, and they run. The leader's stderr is JSON lines (`--log-format json`), the token nowhere
//! in it; stopped like a pod (SIGTERM), it releases the lease. And `consolidate --watch` the same
//! way (with a kubeconfig): a leader stopped by SIGTERM releases the lease to the standby.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::provision_live::{running_on, walkthrough_manifest, Walk};
use crate::support::root;
use crate::test_cluster::{tls, Config};

const NAMESPACE: &str = "kubectl-karpenter";

/// `deploy/in-cluster.yaml`'s documents.
fn shipped() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("deploy/in-cluster.yaml")).unwrap();
    text.split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).unwrap())
        .collect()
}

/// A pod of the Deployment, started by hand: its container's command line with the test's
/// cluster endpoint, its ServiceAccount mounted under `dir`, its health endpoint on `port`.
struct Replica {
    name: String,
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Replica {
    fn start(walk: &Walk, name: &str, args: &[String], token: &str) -> Replica {
        let dir = walk.dir.join(name);
        let account = dir.join("serviceaccount");
        std::fs::create_dir_all(&account).unwrap();
        std::fs::write(account.join("token"), token).unwrap();
        std::fs::write(account.join("ca.crt"), tls::CA_PEM).unwrap();
        std::fs::write(account.join("namespace"), NAMESPACE).unwrap();
        let web_identity = dir.join("eks.amazonaws.com/serviceaccount/token");
        std::fs::create_dir_all(web_identity.parent().unwrap()).unwrap();
        std::fs::write(&web_identity, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZWN0bC1rYXJwZW50ZXI6a3ViZWN0bC1rYXJwZW50ZXIifQ.c2ln").unwrap();
        let port = free_port();
        let args: Vec<String> = args
            .iter()
            .map(|a| match a.split_once('=') {
                Some(("--cluster-endpoint", _)) => {
                    format!("--cluster-endpoint={}", walk.cluster.url())
                }
                Some(("--health-addr", _)) => format!("--health-addr=127.0.0.1:{port}"),
                _ => a.clone(),
            })
            .collect();
        let log = dir.join("stderr.log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"));
        command
            .args(&args)
            .env_clear()
            .env("HOME", &dir)
            .env("HOSTNAME", name)
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env(
                "KUBERNETES_SERVICE_PORT",
                walk.cluster.addr.port().to_string(),
            )
            .env("KUBECTL_KARPENTER_SERVICEACCOUNT_DIR", &account)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("AWS_ENDPOINT_URL", &walk.moto.url)
            .env("AWS_REGION", walk.moto.region())
            // IRSA, as EKS's webhook sets it up: the SDK's default chain trades the projected
            // token for the role's credentials (sts:AssumeRoleWithWebIdentity, moto here).
            .env(
                "AWS_ROLE_ARN",
                "arn:aws:iam::123456789012:role/kubectl-karpenter",
            )
            .env("AWS_WEB_IDENTITY_TOKEN_FILE", &web_identity)
            // Never the instance metadata service: nothing but loopback is reached.
            .env("AWS_EC2_METADATA_DISABLED", "true");
        Replica::spawn(name, command, port, log)
    }

    /// Runs `command` as the replica `name` whose health endpoint is on `port`, stderr to `log`.
    fn spawn(name: &str, mut command: Command, port: u16, log: PathBuf) -> Replica {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start a replica");
        Replica {
            name: name.to_string(),
            child,
            port,
            log,
        }
    }

    /// Stops it like a pod (SIGTERM) and waits for its exit code.
    fn terminate(&mut self) -> Option<i32> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < end,
                "SIGTERM stops {}:\n{}",
                self.name,
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `GET path` on the health endpoint: status and body (`None`: not listening yet).
    fn probe(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut text = String::new();
        stream.read_to_string(&mut text).ok()?;
        let status = text.get(9..12)?.parse().ok()?;
        let body = text
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        Some((status, body))
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `/path` answers `status`; the body.
    fn wait_for(&mut self, path: &str, status: u16, secs: u64) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some((got, body)) = self.probe(path) {
                if got == status {
                    return body;
                }
            }
            if let Ok(Some(exit)) = self.child.try_wait() {
                panic!("{} exited ({exit}):\n{}", self.name, self.stderr());
            }
            assert!(
                Instant::now() < end,
                "{}: {path} never answered {status}; stderr:\n{}",
                self.name,
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every line of `log`, each a JSON object.
fn json_lines(log: &str) -> Vec<Value> {
    log.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The Lease's holder, as the API shows it (empty: released).
fn holder(walk: &Walk) -> String {
    crate::lease::lease(walk)["spec"]["holderIdentity"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn two_replicas_over_tls_the_leader_killed_the_standby_takes_over_and_launches() {
    let walk = Walk::build("in-cluster", &[], "crds/v1beta1", |moto, config| Config {
        ec2_endpoint: Some(moto.url.clone()),
        tls: true,
        rbac: true,
        ..config
    });
    assert!(walk.cluster.url().starts_with("https://"));
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.apply(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n",
    );
    walk.ok(&[
        "apply",
        "-f",
        &root().join("deploy/rbac.yaml").to_string_lossy(),
    ]);
    // Everything but the Deployment itself: its pods are the replicas started below.
    let docs = shipped();
    let deployment = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap()
        .clone();
    let rest: Vec<String> = docs
        .iter()
        .filter(|d| d["kind"] != "Deployment")
        .map(|d| serde_saphyr::to_string(d).unwrap())
        .collect();
    walk.apply("in-cluster.yaml", &rest.join("---\n"));
    // The Deployment as the API server takes it (validated, defaulted, not stored).
    let dry = walk.ok(&[
        "apply",
        "--dry-run=server",
        "-f",
        &root().join("deploy/in-cluster.yaml").to_string_lossy(),
    ]);
    assert!(
        dry.contains("deployment.apps/kubectl-karpenter created (server dry run)"),
        "{dry}"
    );
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(container["command"][0], "kubectl-karpenter");
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    for wanted in ["--watch", "--wait-for-lease=forever", "--log-format=json"] {
        assert!(args.iter().any(|a| a == wanted), "{wanted} in {args:?}");
    }
    let token = walk.cluster.token(NAMESPACE, NAMESPACE);

    let mut a = Replica::start(&walk, "replica-a", &args, &token);
    a.wait_for("/readyz", 200, 60);
    assert!(holder(&walk).starts_with("unknown@replica-a pid "));
    let mut b = Replica::start(&walk, "replica-b", &args, &token);
    b.wait_for("/healthz", 200, 30);
    let standby = b.wait_for("/readyz", 503, 30);
    assert_eq!(standby, "standby: waiting for the operator lease\n");

    // The leader dies without a word; while nobody leads, pods go pending.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);

    b.wait_for("/readyz", 200, 90);
    let took_over = killed.elapsed();
    assert!(
        took_over >= Duration::from_secs(15),
        "taken only once the lease expired (30 s after the last renewal, which was at most 10 s before the kill): {took_over:?}"
    );
    assert!(holder(&walk).starts_with("unknown@replica-b pid "));
    let node = walk.eventually(120, "a node for the 5 pods", || {
        let nodes = walk.items(&["get", "nodes", "-l", "eks-immersion-team=my-team"]);
        nodes
            .first()
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
    });
    walk.eventually(60, "the 5 pods Running", || {
        (running_on(&walk, &node) == 5).then_some(())
    });
    assert_eq!(
        walk.launched().len(),
        1,
        "one instance, launched by the new leader"
    );

    // What the leader logged: one JSON object per line, the take-over and the launch among them.
    let log = b.stderr();
    let lines = json_lines(&log);
    let messages: Vec<&str> = lines
        .iter()
        .map(|l| l["message"].as_str().unwrap_or_default())
        .collect();
    assert!(
        messages.iter().any(|m| m
            .contains("operator lease kube-system/kubectl-karpenter taken as unknown@replica-b")),
        "{log}"
    );
    assert!(
        messages.iter().any(|m| m.contains("in-cluster")),
        "the connection says it is in-cluster: {log}"
    );
    assert!(!log.contains(&token), "the token never shows");

    // The pod is stopped (SIGTERM): the step in flight ends, the lease is released at once.
    assert_eq!(b.terminate(), Some(0), "{}", b.stderr());
    assert_eq!(holder(&walk), "", "released for the next leader");
    let notice = json_lines(&b.stderr())
        .into_iter()
        .find(|l| {
            l["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("interrupted: ")
        })
        .unwrap_or_else(|| panic!("the SIGTERM notice, as JSON: {}", b.stderr()));
    assert_eq!(notice["level"], "warn");
}

#[test]
fn consolidate_watch_replicas_hand_over_when_the_leader_is_stopped() {
    let walk = Walk::new_v1beta1("in-cluster-consolidate");
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.apply(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n",
    );
    let replica = |name: &str| {
        let port = free_port();
        let health = format!("--health-addr=127.0.0.1:{port}");
        let mut command = walk.command(&[
            "karpenter",
            "consolidate",
            "--watch",
            "--yes",
            "--wait-for-lease=forever",
            &health,
        ]);
        command.env("HOSTNAME", name);
        std::fs::create_dir_all(walk.dir.join(name)).unwrap();
        Replica::spawn(name, command, port, walk.dir.join(name).join("stderr.log"))
    };
    let mut a = replica("consolidate-a");
    a.wait_for("/readyz", 200, 60);
    let mut b = replica("consolidate-b");
    b.wait_for("/healthz", 200, 30);
    assert_eq!(
        b.wait_for("/readyz", 503, 30),
        "standby: waiting for the operator lease\n"
    );
    // SIGTERM: the pass in flight ends, then the lease is released — not left to expire (its
    // holder would still be named for up to 30 s).
    assert_eq!(a.terminate(), Some(0), "{}", a.stderr());
    let after = holder(&walk);
    assert!(!after.contains("@consolidate-a "), "still held: {after}");
    b.wait_for("/readyz", 200, 60);
    assert!(
        holder(&walk).contains("@consolidate-b pid "),
        "{}",
        holder(&walk)
    );
}
