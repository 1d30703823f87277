//! The documentation, run through the binary (s33-docsrun): what README.md, docs/commands.md,
//! docs/consolidation.md, docs/in-cluster.md, docs/security.md and CONTRIBUTING.md show a
//! platform engineer typing — the synopses, the commands, their columns, fields, messages, exit
//! codes and stated rules — run as shown, offline and against the loopback cluster + moto. One
//! test per doc section; the blocks are read from the docs themselves where they can be, so a
//! doc edit that stops holding fails here. Ledger: docs/upstream-tests/kubectl.md "The
//! documentation, run through the binary (s33-docsrun)".

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::drift_gate::Kube;
use crate::moto::karpenter_command;
use crate::provision_live::{walkthrough_manifest, Walk};
use crate::support::{karpenter, root, write_temp};

fn doc(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// Every fenced block of a doc, as its lines.
fn blocks(path: &str) -> Vec<Vec<String>> {
    let text = doc(path);
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            match current.take() {
                Some(b) => out.push(b),
                None => current = Some(Vec::new()),
            }
        } else if let Some(b) = &mut current {
            b.push(line.trim_start().to_string());
        }
    }
    out
}

/// The block whose first line is `first` (trimmed), without it.
fn block_starting(path: &str, first: &str) -> Vec<String> {
    blocks(path)
        .into_iter()
        .find(|b| b.first().is_some_and(|l| l.trim_end() == first))
        .unwrap_or_else(|| panic!("no block starting {first:?} in {path}"))[1..]
        .to_vec()
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn quickstart() -> String {
    root()
        .join("examples/manifests/quickstart.yaml")
        .to_string_lossy()
        .into_owned()
}

/// Runs `cmd` with stdout a pipe whose reader reads `lines` lines and goes away; waits at most
/// `secs` (then kills it: -1). The exit code and stderr.
fn with_reader_gone(mut cmd: Command, lines: usize, secs: u64) -> (i32, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .expect("run kubectl-karpenter");
    drop(child.stdin.take());
    let stdout = child.stdout.take().unwrap();
    let mut reader = BufReader::new(stdout);
    for _ in 0..lines {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
    }
    drop(reader);
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let end = Instant::now() + Duration::from_secs(secs);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (code, err.join().unwrap())
}

fn assert_quiet_141(what: &str, (code, stderr): (i32, String)) {
    assert_eq!(code, 141, "{what}: {stderr}");
    assert!(
        !stderr.contains("error:") && !stderr.contains("panicked"),
        "{what} stops quietly: {stderr}"
    );
}

/// README "Quickstart": the command as shown prints the shown plan (exit 0) and two
/// `warning: assuming: …` lines that `-q` hides; at 20 replicas the limit is named (exit 1).
/// README "Commands": each command row's flags are the command's own. README "Exit codes": the
/// top-level help lists the same codes. README "Install": the completion script and the kubectl
/// completion helper exist. README global flags: every one is on every command.
#[test]
fn readme_commands_run_as_shown() {
    let shown = block_starting(
        "README.md",
        "NODECLAIM   NODEPOOL   NODECLASS   INSTANCE-TYPE   OPTIONS    CAPACITY    ZONE         PODS   $/HOUR",
    );
    let run = karpenter(&["provision", "--dry-run", "-f", &quickstart()], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Vec<&str> = run.stdout.lines().map(str::trim_end).collect();
    assert_eq!(out[0], "NODECLAIM   NODEPOOL   NODECLASS   INSTANCE-TYPE   OPTIONS    CAPACITY    ZONE         PODS   $/HOUR");
    for line in &shown {
        assert!(
            out.contains(&line.trim_end()),
            "{line:?} not printed:\n{}",
            run.stdout
        );
    }
    assert_eq!(run.stderr.matches("warning: assuming: ").count(), 2);
    let run = karpenter(&["provision", "--dry-run", "-q", "-f", &quickstart()], b"");
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "-q hides them");

    // The Commands table: `command [--flag]…` of each row in that command's help.
    let text = doc("README.md");
    let table = text
        .split("## Commands")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .nth(1)
        .unwrap();
    for row in table.lines().skip(2) {
        let cell = row.split('`').nth(1).unwrap();
        let sub: Vec<&str> = words(cell)
            .into_iter()
            .take_while(|w| {
                w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
            })
            .collect();
        assert_flags_in_help(&sub, cell);
    }

    // Exit codes: the README's table and the top-level help name the same codes.
    let help = karpenter(&["--help"], b"").stdout;
    let codes = text
        .split("## Exit codes")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for row in codes
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("code"))
    {
        let code = row.trim_start_matches("| ").split(' ').next().unwrap();
        if code.chars().all(|c| c.is_ascii_digit()) {
            assert!(
                help.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "exit code {code} not in --help:\n{help}"
            );
        }
    }

    // Global flags, on every command.
    for flag in [
        "--kubeconfig",
        "--context",
        "--cluster",
        "--user",
        "--namespace",
        "--request-timeout",
        "--kubernetes-version",
        "--region",
        "--profile",
        "--cluster-name",
        "--instance-profile",
        "--output",
        "--no-headers",
        "--color",
        "--verbose",
        "--quiet",
        "--validate",
    ] {
        for sub in [
            &["provision"][..],
            &["drift", "check"],
            &["nodes"],
            &["version"],
        ] {
            let mut args = sub.to_vec();
            args.push("--help");
            let help = karpenter(&args, b"").stdout;
            assert!(help.contains(flag), "{sub:?} --help lacks {flag}");
        }
    }
    // "an unknown field such as `requirments` is refused with its path and a did-you-mean"
    let text = std::fs::read_to_string(quickstart()).unwrap();
    let run = karpenter(
        &["provision", "--dry-run", "-f", "-"],
        text.replacen("requirements:", "requirments:", 1).as_bytes(),
    );
    run.assert_refused_in_one_line(
        "requirments",
        "requirments: unknown field (did you mean requirements?)",
    );

    // Install: `source <(kubectl-karpenter completion bash)`, the kubectl helper on PATH.
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = karpenter(&["completion", shell], b"");
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains("karpenter"), "{shell}");
    }
    assert!(root()
        .join("completions/kubectl_complete-karpenter")
        .exists());
    for file in [
        "krew-manifest.yaml",
        "krew/README.md",
        "scripts/release.sh",
        "deploy/iam-policy.json",
        "deploy/rbac.yaml",
        "deploy/in-cluster.yaml",
    ] {
        assert!(root().join(file).exists(), "{file}");
    }
    // `convert … (-o json: one List; -o name: nodepool.karpenter.sh/NAME…)`
    let run = karpenter(&["convert", "-f", &quickstart(), "-o", "name"], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "nodepool.karpenter.sh/default\nec2nodeclass.karpenter.k8s.aws/default\n"
    );
    let run = karpenter(&["convert", "-f", &quickstart(), "-o", "json"], b"");
    let list: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (list["apiVersion"].as_str(), list["kind"].as_str()),
        (Some("v1"), Some("List"))
    );
}

/// Each `--flag` a doc line shows for the command `sub` is in `sub`'s help.
fn assert_flags_in_help(sub: &[&str], line: &str) {
    let mut args = sub.to_vec();
    args.push("--help");
    let help = karpenter(&args, b"");
    assert_eq!(help.code, 0, "{sub:?}: {}", help.stderr);
    for token in line.split(|c: char| c.is_whitespace() || "[]|`(),".contains(c)) {
        let Some(flag) = token.strip_prefix("--") else {
            continue;
        };
        let flag = flag.split('=').next().unwrap();
        if flag.is_empty() {
            continue;
        }
        let flag = format!("--{flag}");
        assert!(
            help.stdout.lines().any(|l| {
                let l = l.trim_start();
                let l = l.strip_prefix("-").map(|_| l).unwrap_or(l);
                l.split([' ', ',', '[', '=']).any(|w| w == flag)
            }),
            "{sub:?}: {flag} (shown in {line:?}) is not in its --help"
        );
    }
}

/// docs/commands.md and docs/consolidation.md synopses: every `kubectl karpenter …` line's
/// command exists and takes every flag shown (`(same flags)` the line above's).
#[test]
fn commands_md_synopses_take_every_flag_shown() {
    for path in ["docs/commands.md", "docs/consolidation.md", "docs/spec.md"] {
        let mut last: Vec<String> = Vec::new();
        for block in blocks(path) {
            let mut sub: Vec<String> = Vec::new();
            for line in block {
                let line = line.trim_start_matches("$ ");
                let text = match line.strip_prefix("kubectl karpenter ") {
                    Some(rest) => {
                        sub = words(rest)
                            .into_iter()
                            .take_while(|w| {
                                !w.starts_with(['-', '[', '#', '('])
                                    && w.chars()
                                        .all(|c| c.is_ascii_lowercase() || c == '-' || c == '|')
                                    && !w.contains('|')
                            })
                            .map(String::from)
                            .collect();
                        if rest.contains("(same flags)") {
                            let other: Vec<&str> = last.iter().map(String::as_str).collect();
                            let mut args: Vec<&str> = sub.iter().map(String::as_str).collect();
                            args.push("--help");
                            let help = karpenter(&args, b"").stdout;
                            for flag in other.iter().filter(|w| w.starts_with("--")) {
                                assert!(help.contains(flag), "{path}: {sub:?} lacks {flag}");
                            }
                            continue;
                        }
                        last = words(rest).into_iter().map(String::from).collect();
                        rest
                    }
                    // A synopsis goes on over indented lines of flags.
                    None if !sub.is_empty() && line.starts_with('[') => line,
                    None => {
                        sub.clear();
                        continue;
                    }
                };
                let text = text.split('#').next().unwrap();
                let args: Vec<&str> = sub.iter().map(String::as_str).collect();
                assert_flags_in_help(&args, text);
            }
        }
    }
}

/// docs/commands.md "provision": `-o name` prints `nodeclaim/<name>`; the shown values of
/// `--min-values-policy`, `--preference-policy`, `--feature-gates`, `--vm-memory-overhead-percent`,
/// `--reserved-enis` are taken and "another value is a usage error (exit 2)"; the
/// `ProvisioningPlan` carries the fields the block shows; the limit's reasonCode is
/// `LimitReached`.
#[test]
fn commands_md_provision_offline_as_shown() {
    let q = quickstart();
    let run = karpenter(
        &["provision", "--dry-run", "-q", "-f", &q, "-o", "name"],
        b"",
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "nodeclaim/default-1\n")
    );
    for good in [
        &["--min-values-policy", "BestEffort"][..],
        &["--preference-policy", "Ignore"],
        &[
            "--feature-gates",
            "CapacityBuffer=true,ReservedCapacity=false",
        ],
        &["--vm-memory-overhead-percent", "0.075"],
        &["--reserved-enis", "0"],
    ] {
        let mut args = vec!["provision", "--dry-run", "-q", "-f", &q];
        args.extend_from_slice(good);
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 0, "{good:?}: {}", run.stderr);
    }
    for bad in [
        &["--min-values-policy", "Lenient"][..],
        &["--preference-policy", "Maybe"],
        &["--feature-gates", "CapacityBuffer=maybe"],
        &["--vm-memory-overhead-percent", "-1"],
        &["--reserved-enis", "x"],
    ] {
        let mut args = vec!["provision", "--dry-run", "-q", "-f", &q];
        args.extend_from_slice(bad);
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 2, "{bad:?}: {}", run.stderr);
    }
    let run = karpenter(
        &["provision", "--dry-run", "-q", "-f", &q, "-o", "json"],
        b"",
    );
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let shown = block_starting("docs/commands.md", "apiVersion: kubectl-karpenter/v1");
    assert_eq!(shown[0], "kind: ProvisioningPlan");
    for key in [
        "apiVersion",
        "kind",
        "region",
        "nodeClaims",
        "existingNodes",
        "unschedulable",
        "pricePerHour",
    ] {
        assert!(plan.get(key).is_some(), "{key} missing: {plan:#}");
    }
    let claim = &plan["nodeClaims"][0];
    crate::support::assert_fields(
        claim,
        &crate::support::PLAN_NODECLAIM_FIELDS,
        "nodeClaims[]",
    );
    assert_eq!(claim["name"], "default-1", "<nodepool>-<n>, deterministic");
    for key in [
        "karpenter.sh/nodepool-hash",
        "karpenter.sh/nodepool-hash-version",
    ] {
        assert!(claim["annotations"][key].is_string(), "{key}: {claim:#}");
    }
    let text = std::fs::read_to_string(&q)
        .unwrap()
        .replace("replicas: 5", "replicas: 20");
    let run = karpenter(
        &["provision", "--dry-run", "-q", "-f", "-", "-o", "json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["unschedulable"][0]["reasonCode"], "LimitReached");
    assert!(plan["unschedulable"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("NodePool default: limit cpu=10 reached"));
}

/// docs/commands.md "nodes" (`-f`): the CONSOLIDATION column is `consolidate -f … --now`'s, the
/// `notes` say the instance facts come from the manifests, `-o name` prints `node/<name>`;
/// docs/consolidation.md's example report is the shown table (exit 1).
#[test]
fn commands_md_nodes_and_consolidate_offline_as_shown() {
    let file = root().join("examples/consolidate/cluster.yaml");
    let file = file.to_string_lossy();
    let now = "2024-06-24T12:00:00Z";
    let report = karpenter(&["consolidate", "-q", "-f", &file, "--now", now], b"");
    assert_eq!(report.code, 1, "{}", report.stderr);
    let shown: Vec<String> = block_starting(
        "docs/consolidation.md",
        "$ kubectl karpenter consolidate -f examples/consolidate/cluster.yaml --now 2024-06-24T12:00:00Z",
    );
    let printed: Vec<&str> = report.stdout.lines().map(str::trim_end).collect();
    let shown: Vec<&str> = shown.iter().map(|l| l.trim_end()).collect();
    assert_eq!(printed, shown);

    let nodes = karpenter(
        &["nodes", "-q", "-f", &file, "--now", now, "-o", "json"],
        b"",
    );
    assert_eq!(nodes.code, 0, "{}", nodes.stderr);
    let nodes: Value = serde_json::from_str(&nodes.stdout).unwrap();
    let decided: Vec<(String, String)> = nodes["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let c = &n["consolidation"];
            (
                n["name"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}",
                    c["decision"].as_str().unwrap(),
                    c["method"].as_str().or(c["reasonCode"].as_str()).unwrap()
                ),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("busy".to_string(), "delete:single".to_string()),
            ("empty".into(), "delete:emptiness".into()),
            ("under-used".into(), "none:receives-pods".into()),
        ]
    );
    assert!(
        nodes["notes"].as_array().unwrap().iter().any(|n| n
            == "-f: instance facts from the manifests only (AWS not asked; every instance taken as running)"),
        "{:#}",
        nodes["notes"]
    );
    let run = karpenter(
        &["nodes", "-q", "-f", &file, "--now", now, "-o", "name"],
        b"",
    );
    assert_eq!(run.stdout, "node/busy\nnode/empty\nnode/under-used\n");
    // "`--now` not RFC 3339" is bad input, exit 2.
    let run = karpenter(&["consolidate", "-f", &file, "--now", "yesterday"], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// docs/commands.md "convert, completion, version": `version` prints `kubectl-karpenter vX.Y.Z`,
/// `-o json|yaml` a `Version` document, and refuses `-o name` (it acts on no object; `kubectl
/// version -o name` is refused too): exit 2, one line.
#[test]
fn version_as_shown_and_refuses_o_name() {
    let run = karpenter(&["version"], b"");
    assert_eq!(
        run.stdout,
        format!("kubectl-karpenter v{}\n", env!("CARGO_PKG_VERSION"))
    );
    let run = karpenter(&["version", "-o", "json"], b"");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["kind"], "Version");
    let run = karpenter(&["version", "-o", "name"], b"");
    run.assert_refused_in_one_line("version -o name", "version acts on none");
    assert_eq!(run.stdout, "");
}

/// docs/security.md "Closed pipes" and docs/spec.md §2: `… -o json | head -1` on outputs far
/// larger than a pipe holds, and the commands pipes.rs does not run (`consolidate`, `convert -o
/// json`), stop quietly with 141 whatever they were writing.
#[test]
fn closed_pipes_on_big_outputs_give_141() {
    let text = std::fs::read_to_string(quickstart())
        .unwrap()
        .replace("replicas: 5", "replicas: 3000")
        .replace("cpu: \"10\"", "cpu: \"100000\"");
    let big = write_temp("docsrun-big.yaml", text.as_bytes());
    let big = big.to_string_lossy().into_owned();
    let file = root().join("examples/consolidate/cluster.yaml");
    let file = file.to_string_lossy().into_owned();
    let now = "2024-06-24T12:00:00Z";
    // The big ones: the reader takes one line and goes; the small ones: closed before the start.
    let mut cases: Vec<(Vec<&str>, usize)> = Vec::new();
    for output in ["json", "yaml", "wide"] {
        let args = vec![
            "provision",
            "--dry-run",
            "-f",
            &big,
            "-o",
            output,
            "--region",
            "us-east-1",
        ];
        cases.push((args, usize::from(output != "wide")));
    }
    for output in ["table", "wide", "json", "yaml", "name"] {
        for command in ["consolidate", "nodes"] {
            let args = vec![
                command,
                "-f",
                &file,
                "--now",
                now,
                "-o",
                output,
                "--region",
                "us-east-1",
            ];
            cases.push((args, 0));
        }
    }
    for (args, lines) in cases {
        assert_quiet_141(
            &format!("{args:?}"),
            with_reader_gone(karpenter_command(&args), lines, 120),
        );
    }
}

/// docs/commands.md "provision" (live): `provision --yes --wait` prints the two tables shown
/// (the same columns), the progress lines shown for `2>&1 | cat`, and `-o name` names the
/// NodeClaim; closed stdouts give 141 live too (`provision --dry-run`, `nodes`, `drift check`,
/// `drift replace --dry-run`, `consolidate`, `consolidate --dry-run`); "Coexistence": a running controller is refused with
/// the error and hint shown (exit 4).
#[test]
fn commands_md_live_provision_as_shown() {
    let walk = Walk::new_v1beta1("docs-run");
    walk.apply("basic.yaml", &walkthrough_manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);
    let shown = block_starting(
        "docs/commands.md",
        "$ kubectl karpenter provision --yes --wait",
    );
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let printed: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(printed.len(), shown.len(), "{}", out.stdout);
    for (got, want) in printed.iter().zip(&shown) {
        let (got, want) = (words(got), words(want));
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        match want.first() {
            // headers and the summary, word for word (the figures are the quickstart's)
            Some(&"NODECLAIM") | Some(&"1") => assert_eq!(got, want),
            Some(_) => {
                assert!(got[0].starts_with("default-"), "{got:?}");
                assert_eq!(got.last(), want.last(), "{got:?} vs {want:?}");
                assert!(
                    got.contains(&"c6a.2xlarge") && got.contains(&"on-demand"),
                    "{got:?}"
                );
            }
            None => {}
        }
    }
    // 2>&1 | cat: the launch line and the plain waiting lines.
    let cat = block_starting(
        "docs/commands.md",
        "$ kubectl karpenter provision --yes --wait 2>&1 | cat",
    );
    assert!(cat.iter().any(|l| l.starts_with("launched NodeClaim ")));
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("launched NodeClaim default-")
                && l.ends_with("c6a.2xlarge (us-east-1a, on-demand) for 5 pod(s)")
                || l.contains(" c6a.2xlarge (") && l.ends_with("on-demand) for 5 pod(s)")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .lines()
            .any(|l| l == "waiting: 1/1 node(s) Ready, 5/5 pod(s) bound"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\r'));

    // Closed stdouts, live.
    let kubectl_karpenter = |args: &[&str]| {
        let mut all = vec!["karpenter"];
        all.extend_from_slice(args);
        walk.command(&all)
    };
    for args in [
        &["provision", "--dry-run", "-o", "json"][..],
        &["nodes", "-o", "wide"],
        &["drift", "check", "-o", "yaml"],
        &["drift", "replace", "--dry-run"],
        &["consolidate", "-o", "json"],
        &["consolidate", "--dry-run"],
    ] {
        assert_quiet_141(
            &format!("{args:?}"),
            with_reader_gone(kubectl_karpenter(args), 0, 120),
        );
    }

    // Coexistence: a ready controller Deployment refuses with the error and hint shown.
    let shown = block_starting("docs/commands.md", "$ kubectl karpenter provision --yes");
    walk.apply(
        "controller.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karpenter\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: karpenter\n  namespace: karpenter\n  labels: {app.kubernetes.io/name: karpenter}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app.kubernetes.io/name: karpenter}\n  template:\n    metadata:\n      labels: {app.kubernetes.io/name: karpenter}\n    spec:\n      terminationGracePeriodSeconds: 0\n      containers:\n      - name: controller\n        image: public.ecr.aws/karpenter/controller:v0.32.1\n",
    );
    walk.eventually(60, "the controller ready", || {
        let d = walk.json(&[
            "-n",
            "karpenter",
            "get",
            "deployment",
            "karpenter",
            "-o",
            "json",
        ]);
        (d["status"]["readyReplicas"] == 1).then_some(())
    });
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "6"]);
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    for line in &shown {
        assert!(
            out.stderr.lines().any(|l| l == line),
            "{line:?} not printed:\n{}",
            out.stderr
        );
    }
}

/// docs/commands.md "enable-drift / disable-drift": on a v0.27 install the four lines shown
/// (the restart stamp aside), `-o name` prints `configmap/…` and `deployment.apps/…` of what is
/// written (a dry run: would be) and nothing when nothing changes; a closed stdout gives 141.
#[test]
fn commands_md_enable_drift_as_shown() {
    let k = Kube::new("docs-run");
    k.apply("controller.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karpenter\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: karpenter\n  namespace: karpenter\n  labels: {app.kubernetes.io/name: karpenter, app.kubernetes.io/version: \"0.27.6\"}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app.kubernetes.io/name: karpenter}\n  template:\n    metadata:\n      labels: {app.kubernetes.io/name: karpenter}\n    spec:\n      terminationGracePeriodSeconds: 0\n      containers:\n      - name: controller\n        image: public.ecr.aws/karpenter/controller:v0.27.6\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: karpenter-global-settings\n  namespace: karpenter\ndata:\n  featureGates.driftEnabled: \"false\"\n");
    k.kubectl(&[
        "-n",
        "karpenter",
        "rollout",
        "status",
        "deployment/karpenter",
        "--timeout",
        "60s",
    ]);
    let shown = block_starting(
        "docs/commands.md",
        "Karpenter 0.27.6 (Deployment karpenter/karpenter): drift is switched by featureGates.driftEnabled in ConfigMap karpenter/karpenter-global-settings, read at startup.",
    );

    let run = k.karpenter(&["enable-drift", "--dry-run", "-o", "name"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "configmap/karpenter-global-settings\ndeployment.apps/karpenter\n"
    );
    let (code, stderr) = with_reader_gone(
        karpenter_command(&[
            "enable-drift",
            "--dry-run",
            "--kubeconfig",
            k.kubeconfig.to_str().unwrap(),
        ]),
        0,
        60,
    );
    assert_quiet_141("enable-drift --dry-run", (code, stderr));

    let run = k.karpenter(&["enable-drift", "--yes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(printed.len(), shown.len() + 1, "{}", run.stdout);
    assert_eq!(
        printed[0],
        "Karpenter 0.27.6 (Deployment karpenter/karpenter): drift is switched by featureGates.driftEnabled in ConfigMap karpenter/karpenter-global-settings, read at startup."
    );
    assert_eq!(printed[1], shown[0]);
    let stamp = |l: &str| l.split(" → ").next().unwrap().to_string();
    assert_eq!(stamp(printed[2]), stamp(&shown[1]));
    assert_eq!(printed[3], shown[2]);
    assert!(
        run.stderr.contains("successfully rolled out"),
        "{}",
        run.stderr
    );

    // Nothing to change: no names.
    let run = k.karpenter(&["enable-drift", "--yes", "-o", "name"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // Written: the names of what was.
    let run = k.karpenter(&["disable-drift", "--yes", "-o", "name"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "configmap/karpenter-global-settings\ndeployment.apps/karpenter\n"
    );
    let cm = k.kubectl(&[
        "-n",
        "karpenter",
        "get",
        "cm",
        "karpenter-global-settings",
        "-o",
        "jsonpath={.data.featureGates\\.driftEnabled}",
    ]);
    assert_eq!(cm, "false");
}
