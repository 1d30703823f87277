//! Nothing raw, planted everywhere (issue #13, item 3): a deterministic planting harness.
//!
//! For every seed of the input fuzzer ([`crate::fuzz_inputs`]: the YAML files under
//! `tests/fixtures/` and `examples/`, the vendored CRDs left out), ONE string at a time is
//! replaced — every string value and every map key (names, namespaces, label and annotation keys
//! and values, requirement values, images, reasons, kinds and apiVersions, quantities, durations,
//! schedules) — by each of three planted strings: an escape sequence with a newline and a forged
//! `error:` line; a string holding a lone CR, BEL, DEL, a C1 CSI (U+009B), a bidi override
//! (U+202E) and zero-width characters; and a 100 KB string. Each planted input runs in process
//! through every offline command and output (`provision --dry-run` as table, wide, JSON, YAML and
//! names; `consolidate --now` as table and JSON; `nodes --now` as table, wide and JSON; `drift
//! check` as table, JSON and names; `convert`), under strict and `--validate=warn` reading, with
//! stderr written as the binary writes it ([`TerminalSafe`], one `error:` line). What is checked
//! on stdout and stderr:
//!
//! - no raw control character but `\n`, and in tables, names and error lines no bidi mark or
//!   zero-width character either (JSON and YAML: their escapes only);
//! - no line starting with `error: forged`; no table or error line over [`LINE_CAP`];
//! - JSON and YAML documents parse, and where they hold the planted value they hold it exactly;
//! - exit codes 0–3 only (docs/spec.md), no panic.
//!
//! The default test runs a fixed sample; the whole sweep is ignored (docs/testing.md):
//!
//! ```sh
//! cargo test --test e2e fuzz_planted:: -- --ignored --nocapture            # every planting
//! FUZZ_SEED=3 FUZZ_COUNT=2000 FUZZ_BINARY=50 cargo test --test e2e fuzz_planted:: -- --ignored --nocapture
//! FUZZ_ONLY=nodes ...   # only the seeds whose path holds `nodes`
//! ```

use std::collections::BTreeMap;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};

use clap::Parser;
use kubectl_karpenter::api::schema::{with_validation, Validation};
use kubectl_karpenter::cli::output::{one_line, TerminalSafe, MAX_LINE};
use kubectl_karpenter::cli::Cli;
use kubectl_karpenter::commands::{self, Context};

use crate::fuzz_inputs::{emit_all, seeds, Rng, Seed, Y};

/// An escape sequence, a newline and a line that would pass for the tool's own error.
const EVIL: &str = "evil\u{1b}[31mred\nerror: forged line";
/// A lone CR, BEL, DEL, a C1 CSI, a right-to-left override and zero-width characters.
const ODD: &str = "oddity\rcr\u{7}bel\u{7f}del\u{9b}31mcsi\u{202e}exe.txt\u{200b}zw\u{200d}j\u{2060}wj\u{feff}bom";
/// How long the big planted string is.
const HUGE_LEN: usize = 100 * 1024;

/// The longest table, name or error line allowed: a message is cut at [`MAX_LINE`]
/// characters (`error: ` and the cut's `…(N characters)` on top), a table cell at 200.
const LINE_CAP: usize = MAX_LINE + 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Payload {
    Evil,
    Odd,
    Huge,
}

impl Payload {
    const ALL: [Payload; 3] = [Payload::Evil, Payload::Odd, Payload::Huge];

    fn text(self) -> String {
        match self {
            Payload::Evil => EVIL.to_string(),
            Payload::Odd => ODD.to_string(),
            Payload::Huge => "x".repeat(HUGE_LEN),
        }
    }

    /// What any copy of it (whole or not) starts with.
    fn marker(self) -> &'static str {
        match self {
            Payload::Evil => "evil",
            Payload::Odd => "oddity",
            Payload::Huge => "xxxxxxxxxxxxxxxxxxxxxxxx",
        }
    }
}

/// Where one string is planted: the `key`-th key of the map at `path`, else the string at
/// `path`, in document `doc`.
#[derive(Clone, Debug)]
struct Site {
    doc: usize,
    path: Vec<usize>,
    key: Option<usize>,
}

/// Characters no table, name or error line may hold raw: control characters (C0, DEL, C1) and
/// the invisible marks that reorder or hide text (bidi marks and overrides, zero-width
/// characters, line and paragraph separators). The oracle, written apart from the set
/// `cli::output` escapes (docs/security.md), on purpose.
fn unsafe_in_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Every string and every map key of a document, as sites.
fn sites_of(doc: usize, y: &Y) -> Vec<Site> {
    let mut all = Vec::new();
    y.paths(&mut Vec::new(), &mut all);
    let mut copy = y.clone();
    let mut sites = Vec::new();
    for path in all {
        match copy.at(&path) {
            Y::Str(_) => sites.push(Site {
                doc,
                path,
                key: None,
            }),
            Y::Map(entries) => {
                for k in 0..entries.len() {
                    sites.push(Site {
                        doc,
                        path: path.clone(),
                        key: Some(k),
                    });
                }
            }
            _ => {}
        }
    }
    sites
}

/// The site as a readable path (`metadata.labels.<key app>`).
fn describe(docs: &[Y], site: &Site) -> String {
    let mut out = format!("doc{}", site.doc);
    let mut y = &docs[site.doc];
    for &i in &site.path {
        y = match y {
            Y::Map(e) => {
                out.push('.');
                out.push_str(&e[i].0);
                &e[i].1
            }
            Y::Seq(s) => {
                out.push_str(&format!("[{i}]"));
                &s[i]
            }
            Y::Anchor(_, v) => v,
            other => other,
        };
    }
    if let (Some(k), Y::Map(e)) = (site.key, y) {
        out.push_str(&format!(".<key {}>", e[k].0));
    }
    out
}

/// The field a site is, whatever the seed: the document's apiVersion and kind, the path with
/// list indexes dropped (`v1/Pod.spec.containers[].image`).
fn field(docs: &[Y], site: &Site) -> String {
    let kind = match &docs[site.doc] {
        Y::Map(e) => ["apiVersion", "kind"]
            .map(|k| {
                e.iter()
                    .find(|(key, _)| key == k)
                    .map_or("?".to_string(), |(_, v)| format!("{v:?}"))
            })
            .join("/"),
        _ => "?".into(),
    };
    let path = describe(docs, site);
    let path = path.split_once('.').map_or("", |(_, p)| p);
    let mut out = kind;
    out.push('.');
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[]");
            }
            ']' => in_index = false,
            c if !in_index => out.push(c),
            _ => {}
        }
    }
    out
}

/// The seed's documents with `payload` planted at `site`, as YAML text.
fn planted(docs: &[Y], site: &Site, payload: &str) -> String {
    let mut docs = docs.to_vec();
    match (site.key, docs[site.doc].at(&site.path)) {
        (Some(k), Y::Map(e)) => e[k].0 = payload.to_string(),
        (None, node) => *node = Y::Str(payload.to_string()),
        _ => unreachable!("a key site is a map"),
    }
    emit_all(&docs)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// Tables, names, conversion notes: text for people.
    Text,
    Json,
    Yaml,
}

/// The argument lists every planted input runs with (`{}` is the planted file) and what their
/// stdout is.
fn commands(seed: &Seed, file: &str) -> Vec<(Vec<String>, Shape)> {
    const NOW: &str = "2026-01-01T00:00:00Z";
    let s = |v: &[&str]| v.iter().map(|a| a.replace("{}", file)).collect::<Vec<_>>();
    let output = |base: &[&str], formats: &[(&str, Shape)]| {
        formats
            .iter()
            .map(|(o, shape)| {
                let mut args = s(base);
                if !o.is_empty() {
                    args.extend(["-o".to_string(), o.to_string()]);
                }
                (args, *shape)
            })
            .collect::<Vec<_>>()
    };
    let all = [
        ("", Shape::Text),
        ("wide", Shape::Text),
        ("json", Shape::Json),
        ("yaml", Shape::Yaml),
        ("name", Shape::Text),
    ];
    if let Some(manifest) = &seed.manifest {
        let m = manifest.to_string_lossy().to_string();
        let mut out = output(
            &["provision", "--dry-run", "-f", &m, "--catalog", "{}"],
            &all,
        );
        out.extend(output(
            &["consolidate", "-f", &m, "--catalog", "{}", "--now", NOW],
            &[("", Shape::Text), ("json", Shape::Json)],
        ));
        return out;
    }
    let mut out = output(&["provision", "--dry-run", "-f", "{}"], &all);
    out.extend(output(
        &["consolidate", "-f", "{}", "--now", NOW],
        &[("", Shape::Text), ("json", Shape::Json)],
    ));
    out.extend(output(
        &["nodes", "-f", "{}", "--now", NOW],
        &[
            ("", Shape::Text),
            ("wide", Shape::Text),
            ("json", Shape::Json),
        ],
    ));
    out.extend(output(
        &["drift", "check", "-f", "{}"],
        &[
            ("", Shape::Text),
            ("json", Shape::Json),
            ("name", Shape::Text),
        ],
    ));
    out.push((s(&["convert", "-f", "{}"]), Shape::Yaml));
    out
}

const GLOBAL: &[&str] = &[
    "--region",
    "us-east-1",
    "--kubeconfig",
    "/nonexistent/kubeconfig",
];

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs one command in process as the binary would print it: stderr through [`TerminalSafe`],
/// a failure as one `error:` line and a `hint:` line. `Err` with the message on a panic.
fn run_in_process(args: &[String], mode: Validation) -> Result<Outcome, String> {
    let argv = std::iter::once("kubectl-karpenter".to_string())
        .chain(args.iter().cloned())
        .chain(GLOBAL.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).map_err(|e| format!("arguments: {e}"))?;
    let mut out = Vec::new();
    let mut err = TerminalSafe(Vec::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        with_validation(mode, || {
            let mut ctx = Context {
                global: &cli.global,
                out: &mut out,
                err: &mut err,
            };
            commands::run(&mut ctx, &cli.command)
        })
    }));
    let code = match result {
        Ok(Ok(exit)) => exit as i32,
        Ok(Err(e)) => {
            writeln!(err, "error: {}", one_line(&e.message)).unwrap();
            if let Some(hint) = &e.hint {
                writeln!(err, "hint: {}", one_line(hint)).unwrap();
            }
            e.exit as i32
        }
        Err(panic) => {
            return Err(panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into()))
        }
    };
    Ok(Outcome {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err.0).into_owned(),
    })
}

/// Runs one command through the debug binary.
fn run_binary(args: &[String], mode: Validation) -> Outcome {
    let validate = match mode {
        Validation::Strict => "--validate=strict",
        Validation::Warn => "--validate=warn",
        Validation::Ignore => "--validate=ignore",
    };
    let out = Process::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args(args)
        .args(GLOBAL)
        .arg(validate)
        .env_remove("KUBECONFIG")
        .env_remove("KUBECTL_KARPENTER_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every string (keys too) of a parsed document.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// Shown in a finding: escaped, cut.
fn brief(text: &str) -> String {
    let t: String = text.chars().take(160).collect();
    format!("{t:?}")
}

/// What is wrong with one run's output, if anything (one line each).
fn problems(run: &Outcome, shape: Shape, payload: Payload) -> Vec<String> {
    let mut found = Vec::new();
    if ![0, 1, 2, 3].contains(&run.code) {
        found.push(format!("exit {}", run.code));
    }
    for (stream, text, data) in [
        ("stdout", &run.stdout, shape != Shape::Text),
        ("stderr", &run.stderr, false),
    ] {
        for line in text.lines() {
            if line.starts_with("error: forged") {
                found.push(format!("{stream}: a forged line"));
            }
            if !data && line.chars().count() > LINE_CAP {
                found.push(format!(
                    "{stream}: a line of {} characters: {}",
                    line.chars().count(),
                    brief(line)
                ));
            }
            let bad = |c: char| {
                c != '\t'
                    && if data {
                        c.is_control()
                    } else {
                        unsafe_in_text(c)
                    }
            };
            if let Some(c) = line.chars().find(|c| bad(*c)) {
                found.push(format!("{stream}: raw {c:?} in {}", brief(line)));
            }
        }
        if text.contains('\r') {
            found.push(format!("{stream}: a raw CR"));
        }
    }
    if run.code == 2
        && run
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count()
            != 1
    {
        found.push(format!(
            "exit 2 without exactly one error line: {}",
            brief(&run.stderr)
        ));
    }
    if shape != Shape::Text && matches!(run.code, 0 | 1) && !run.stdout.trim().is_empty() {
        let parsed: Result<Vec<serde_json::Value>, String> = match shape {
            Shape::Json => serde_json::from_str(&run.stdout)
                .map(|v| vec![v])
                .map_err(|e| e.to_string()),
            _ => serde_saphyr::from_multiple(&run.stdout).map_err(|e| e.to_string()),
        };
        match parsed {
            Err(e) => found.push(format!("{shape:?} does not parse: {}", brief(&e))),
            Ok(docs) => {
                let mut all = Vec::new();
                docs.iter().for_each(|d| strings(d, &mut all));
                // A field holding the value (a name, a label, a key; `name-x7k2p` made from it)
                // holds all of it; a message quoting it (escaped, cut) is text, not the field.
                let whole = payload.text();
                if let Some(altered) = all
                    .iter()
                    .find(|s| s.starts_with(payload.marker()) && !s.contains(&whole))
                {
                    found.push(format!(
                        "{shape:?} holds the planted value altered: {}",
                        brief(altered)
                    ));
                }
            }
        }
    }
    found
}

#[derive(Default)]
struct Findings {
    plantings: usize,
    runs: usize,
    binary_runs: usize,
    exits: BTreeMap<i32, usize>,
    /// Per command: runs and time in process.
    time: BTreeMap<String, (usize, std::time::Duration)>,
    /// The exit of the last run.
    exits_of_last: Option<i32>,
    /// Per payload: plantings, runs.
    per_payload: BTreeMap<Payload, (usize, usize)>,
    /// Distinct problems (command, problem) with one example each.
    leaks: BTreeMap<String, String>,
}

impl Findings {
    fn report(&self) -> String {
        let mut out = format!(
            "{} plantings, {} runs in process, {} through the binary, exits {:?}, per payload {:?}, {} distinct problems\n",
            self.plantings,
            self.runs,
            self.binary_runs,
            self.exits,
            self.per_payload,
            self.leaks.len()
        );
        for (command, (runs, time)) in &self.time {
            out.push_str(&format!(
                "  {command}: {runs} runs, {:?} each\n",
                *time / (*runs).max(1) as u32
            ));
        }
        for (key, example) in &self.leaks {
            out.push_str(&format!("- {key}\n  {example}\n"));
        }
        out
    }
}

/// The plantings of every seed, in a fixed order; `distinct`: each [`field`] once, in the first
/// seed that has it (the same field of another seed, or of another list item, runs through the
/// same code).
fn plantings(seeds: &[Seed], distinct: bool) -> Vec<(usize, Site, Payload)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, seed) in seeds.iter().enumerate() {
        let Some(docs) = &seed.docs else { continue };
        // A `--catalog` seed runs other commands than a manifest: its fields are its own.
        let class = seed.manifest.is_some();
        for (d, doc) in docs.iter().enumerate() {
            for site in sites_of(d, doc) {
                if distinct && !seen.insert((class, field(docs, &site))) {
                    continue;
                }
                for payload in Payload::ALL {
                    out.push((i, site.clone(), payload));
                }
            }
        }
    }
    out
}

/// How much of it to run.
struct Scope {
    /// Each field once ([`plantings`]), else every string of every seed.
    distinct: bool,
    /// `count` plantings drawn with `seed`, else all of them.
    count: Option<usize>,
    /// Every command for each planting, else one, in turn.
    every_command: bool,
    seed: u64,
    /// Every n-th run also through the binary (0: none).
    binary_every: usize,
}

/// Plants and runs: each command under strict reading, and again under `--validate=warn`
/// (read on, warning) when strict refused the input.
fn sweep(scope: Scope) -> Findings {
    let Scope {
        distinct,
        count,
        every_command,
        seed,
        binary_every,
    } = scope;
    let only = std::env::var("FUZZ_ONLY").unwrap_or_default();
    let seeds: Vec<Seed> = seeds()
        .into_iter()
        .filter(|s| s.name.contains(&only))
        .collect();
    let mut all = plantings(&seeds, distinct);
    if let Some(count) = count {
        let mut rng = Rng::new(seed);
        // A partial Fisher–Yates: the first `count` of a shuffle.
        for i in 0..count.min(all.len()) {
            let j = i + rng.below(all.len() - i);
            all.swap(i, j);
        }
        all.truncate(count);
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("kk-planted-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("input.yaml");
    let file_arg = file.to_string_lossy().to_string();
    let mut findings = Findings::default();
    for (n, (s, site, payload)) in all.iter().enumerate() {
        let seed = &seeds[*s];
        let docs = seed.docs.as_ref().unwrap();
        let text = planted(docs, site, &payload.text());
        std::fs::write(&file, &text).unwrap();
        findings.plantings += 1;
        if findings.plantings % 500 == 0 {
            eprintln!("planted: {} of {}", findings.plantings, all.len());
        }
        let stats = findings.per_payload.entry(*payload).or_default();
        stats.0 += 1;
        let commands = commands(seed, &file_arg);
        let chosen: Vec<_> = if every_command {
            commands
        } else {
            vec![commands[n % commands.len()].clone()]
        };
        for (c, (args, shape)) in chosen.iter().enumerate() {
            for mode in [Validation::Strict, Validation::Warn] {
                if mode == Validation::Warn && findings.exits_of_last != Some(2) {
                    continue;
                }
                findings.runs += 1;
                findings.per_payload.get_mut(payload).unwrap().1 += 1;
                let start = std::time::Instant::now();
                let mut runs = vec![("in process", run_in_process(args, mode))];
                let t = findings.time.entry(command_name(args)).or_default();
                t.0 += 1;
                t.1 += start.elapsed();
                if binary_every > 0 && findings.runs % binary_every == 0 {
                    findings.binary_runs += 1;
                    runs.push(("binary", Ok(run_binary(args, mode))));
                }
                for (how, run) in runs {
                    let found = match &run {
                        Ok(run) => {
                            findings.exits_of_last = Some(run.code);
                            *findings.exits.entry(run.code).or_default() += 1;
                            problems(run, *shape, *payload)
                        }
                        Err(panic) => vec![format!("panic: {}", brief(panic))],
                    };
                    for problem in found {
                        let key = format!("{}: {problem}", command_name(args));
                        findings.leaks.entry(key.clone()).or_insert_with(|| {
                            let keep = dir.join(format!("leak-{n}-{c}.yaml"));
                            std::fs::write(&keep, &text).unwrap();
                            let example = format!(
                                "{how}, {mode:?}, {payload:?} at {} of {} ({})",
                                describe(docs, site),
                                seed.name,
                                keep.display()
                            );
                            // As found: a long sweep cut short still tells.
                            eprintln!("planted: {key}\n  {example}");
                            example
                        });
                    }
                }
            }
        }
    }
    if findings.leaks.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    findings
}

/// `provision -o wide`.
fn command_name(args: &[String]) -> String {
    let output = args
        .windows(2)
        .find(|w| w[0] == "-o")
        .map_or("", |w| w[1].as_str());
    format!("{} -o {output}", args[0])
}

/// On a thread with the binary's main-thread stack (8 MiB), as [`crate::fuzz_inputs`] does.
fn sweep_on_a_big_stack(scope: Scope) -> Findings {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || sweep(scope))
        .unwrap()
        .join()
        .unwrap()
}

/// Every field planted with every payload, each planting through one command in turn
/// (`FUZZ_COMMANDS=all`: through every command; `FUZZ_ALL=1`: every string of every seed, not
/// each field once; `FUZZ_COUNT=n`: n plantings drawn with `FUZZ_SEED`; `FUZZ_BINARY=n`: every
/// n-th run through the binary too).
#[test]
#[ignore = "the full planting sweep: ... fuzz_planted:: -- --ignored --nocapture"]
fn every_string_planted_everywhere_is_shown_escaped_and_cut() {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    let findings = sweep_on_a_big_stack(Scope {
        distinct: var("FUZZ_ALL") != Some(1),
        count: var("FUZZ_COUNT"),
        every_command: std::env::var("FUZZ_COMMANDS").is_ok_and(|v| v == "all"),
        seed: var("FUZZ_SEED").unwrap_or(1) as u64,
        binary_every: var("FUZZ_BINARY").unwrap_or(0),
    });
    println!("{}", findings.report());
    assert!(findings.leaks.is_empty(), "{}", findings.report());
}

/// A fixed sample: 100 plantings, one command each (≈ 15 s of CPU in a debug build; the sweeps
/// above are the evidence, this keeps CI honest).
#[test]
fn a_sample_of_planted_strings_is_shown_escaped_and_cut() {
    let findings = sweep_on_a_big_stack(Scope {
        distinct: true,
        count: Some(100),
        every_command: false,
        seed: 31,
        binary_every: 50,
    });
    assert!(findings.runs >= 100, "{}", findings.report());
    assert!(findings.leaks.is_empty(), "{}", findings.report());
}

#[test]
fn every_kind_of_site_is_planted() {
    let seeds = seeds();
    let all = plantings(&seeds, true);
    let mut keys = 0;
    let mut named = std::collections::BTreeSet::new();
    for (s, site, _) in &all {
        keys += usize::from(site.key.is_some());
        let d = describe(seeds[*s].docs.as_ref().unwrap(), site);
        for field in [
            ".metadata.name",
            ".metadata.namespace",
            ".metadata.labels.<key",
            ".metadata.annotations.<key",
            ".values[0]",
            ".image",
            ".apiVersion",
            ".kind",
            ".expireAfter",
            ".schedule",
            ".requests.cpu",
        ] {
            if d.contains(field) {
                named.insert(field);
            }
        }
    }
    assert!(all.len() > 3_000, "{}", all.len());
    assert!(keys > 1_000, "{keys}");
    assert_eq!(named.len(), 11, "{named:?}");
}
