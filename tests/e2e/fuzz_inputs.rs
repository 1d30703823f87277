//! Bad input never hurts (docs/spec.md §6): a deterministic mutation fuzzer over the `-f` and
//! `--catalog` inputs, with no dependency beyond the crate's own.
//!
//! Seeds are the YAML files under `tests/fixtures/` and `examples/` (the vendored CRDs left
//! out). Each mutated input runs in process through the commands the binary dispatches to
//! (`provision --dry-run -o json`, `consolidate --now`, `nodes --now`, `drift check`, `convert`)
//! under `catch_unwind`; a sample also runs through the debug binary, whose exit code, stderr and
//! time are checked. Re-run with a seed and a count (docs/testing.md):
//!
//! ```sh
//! FUZZ_SEED=7 FUZZ_COUNT=2000 FUZZ_BINARY=300 cargo test --test e2e fuzz_inputs:: -- --ignored --nocapture
//! FUZZ_ONLY=catalog ...   # only the seeds whose path holds `catalog` (the `--catalog` files)
//! ```

use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use kubectl_karpenter::cli::Cli;
use kubectl_karpenter::commands::{self, Context};

/// Where the last panic was (set by the quiet run's hook).
static PANIC_AT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// xorshift64*: small, fixed, the same on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A YAML tree we can mutate and print: raw scalars (`.inf`, `1e308`, `*a`) are written as is.
#[derive(Clone, Debug)]
pub(crate) enum Y {
    Map(Vec<(String, Y)>),
    Seq(Vec<Y>),
    Str(String),
    Raw(String),
    Anchor(String, Box<Y>),
}

impl Y {
    fn from_json(v: &serde_json::Value) -> Y {
        use serde_json::Value as V;
        match v {
            V::Null => Y::Raw("null".into()),
            V::Bool(b) => Y::Raw(b.to_string()),
            V::Number(n) => Y::Raw(n.to_string()),
            V::String(s) => Y::Str(s.clone()),
            V::Array(a) => Y::Seq(a.iter().map(Y::from_json).collect()),
            V::Object(o) => Y::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Y::from_json(v)))
                    .collect(),
            ),
        }
    }

    pub(crate) fn emit(&self, out: &mut String) {
        match self {
            Y::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    if k == "<<" {
                        out.push_str("<<");
                    } else {
                        out.push_str(&serde_json::to_string(k).unwrap());
                    }
                    out.push_str(": ");
                    v.emit(out);
                }
                out.push('}');
            }
            Y::Seq(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.emit(out);
                }
                out.push(']');
            }
            Y::Str(s) => out.push_str(&serde_json::to_string(s).unwrap()),
            Y::Raw(s) => out.push_str(s),
            Y::Anchor(name, v) => {
                out.push('&');
                out.push_str(name);
                out.push(' ');
                v.emit(out);
            }
        }
    }

    /// Every node, depth first, as a path of child indexes.
    pub(crate) fn paths(&self, here: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
        all.push(here.clone());
        let children: Vec<&Y> = match self {
            Y::Map(e) => e.iter().map(|(_, v)| v).collect(),
            Y::Seq(s) => s.iter().collect(),
            Y::Anchor(_, v) => vec![&**v],
            _ => vec![],
        };
        for (i, c) in children.into_iter().enumerate() {
            here.push(i);
            c.paths(here, all);
            here.pop();
        }
    }

    pub(crate) fn at(&mut self, path: &[usize]) -> &mut Y {
        let Some((first, rest)) = path.split_first() else {
            return self;
        };
        match self {
            Y::Map(e) => e[*first].1.at(rest),
            Y::Seq(s) => s[*first].at(rest),
            Y::Anchor(_, v) => v.at(rest),
            _ => unreachable!(),
        }
    }
}

const WEIRD_SCALARS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e-320",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    ".nan",
    "NaN",
    ".inf",
    "-.inf",
    "true",
    "null",
    "~",
    "0x7fffffffffffffff",
    "0o777",
    "1_000",
    "[]",
    "{}",
];

const WEIRD_STRINGS: &[&str] = &[
    "",
    " ",
    "0",
    "-1",
    "1Ei",
    "8Ei",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999Ei",
    "0.000001m",
    "0.0000000001",
    "1e308",
    "1e400",
    "-1e-400",
    "NaN",
    "Infinity",
    "+1",
    "-0",
    "1.5.5",
    "1Mi1",
    "abc",
    "101%",
    "-5%",
    "%",
    "100.5%",
    "99999999999999999999%",
    "2024-02-30T25:61:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "-292277022657-01-27T08:29:52Z",
    "1970-01-01T00:00:00+99:99",
    "@every 0s",
    "* * * * * * *",
    "61 25 32 13 8",
    "*/0 * * * *",
    "@yearly",
    "0 0 31 2 *",
    "-1h",
    "9999999999999h",
    "1ns",
    "Never",
    "naïve-ünïcødé",
    "\u{202e}evil",
    "a\u{0}b",
    "\u{1b}[31mred\u{1b}[0m",
    "line\nbreak",
    "tab\there",
    "\u{feff}bom",
    "a=b,c",
    "kubernetes.io/../x",
    "/",
    "ami-",
    "In",
    "Gt",
];

/// Known apiVersion/kind pairs, swapped among objects.
const KINDS: &[(&str, &str)] = &[
    ("karpenter.sh/v1", "NodePool"),
    ("karpenter.sh/v1beta1", "NodePool"),
    ("karpenter.sh/v1alpha5", "Provisioner"),
    ("karpenter.k8s.aws/v1", "EC2NodeClass"),
    ("karpenter.k8s.aws/v1beta1", "EC2NodeClass"),
    ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate"),
    ("karpenter.sh/v1", "NodeClaim"),
    ("karpenter.sh/v1beta1", "NodeClaim"),
    ("karpenter.sh/v1alpha1", "NodeOverlay"),
    ("v1", "Pod"),
    ("v1", "Node"),
    ("v1", "List"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("policy/v1", "PodDisruptionBudget"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("v1", "PersistentVolumeClaim"),
    ("autoscaling.x-k8s.io/v1beta1", "CapacityBuffer"),
];

const OPERATORS: &[&str] = &[
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "Gt",
    "Lt",
    "Gte",
    "Lte",
    "Equal",
    "in",
    "",
];

fn weird_string(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => "x".repeat(1 + rng.below(70_000)),
        1 => {
            // Random code points, control characters included.
            (0..1 + rng.below(40))
                .map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('?'))
                .collect()
        }
        _ => rng.pick(WEIRD_STRINGS).to_string(),
    }
}

fn weird_value(rng: &mut Rng, old: &Y) -> Y {
    match rng.below(8) {
        0..=1 => Y::Raw(rng.pick(WEIRD_SCALARS).to_string()),
        2..=4 => Y::Str(weird_string(rng)),
        5 => Y::Seq(vec![old.clone()]),
        6 => Y::Map(vec![("x".into(), old.clone())]),
        _ => {
            // Deep nesting.
            let mut v = Y::Raw("1".into());
            for i in 0..rng.below(1500) {
                v = if i % 2 == 0 {
                    Y::Seq(vec![v])
                } else {
                    Y::Map(vec![("a".into(), v)])
                };
            }
            v
        }
    }
}

/// A scalar replaced by an extreme of its own kind, so the input stays valid more often and the
/// planner, the consolidation and the drift checks see it (not only the validation).
fn perturb(rng: &mut Rng, old: &str, raw: bool) -> Y {
    let numbers: &[&str] = &[
        "0",
        "1",
        "-1",
        "2147483647",
        "4294967296",
        "9223372036854775807",
        "1000000",
    ];
    let quantities: &[&str] = &[
        "0",
        "1n",
        "1m",
        "0.000001m",
        "1Ei",
        "8Ei",
        "7Ei",
        "1E",
        "999999999999",
        "1e18",
        "9223372036854775807",
        "1Pi",
        "1.5",
        "0.1Ki",
    ];
    let durations: &[&str] = &["0s", "1ns", "1s", "2562047h", "100000h", "Never", "1h1m1s"];
    let percents: &[&str] = &["0%", "1%", "100%", "101%", "0.5%"];
    let times: &[&str] = &[
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z",
        "2262-04-11T23:47:17Z",
        "2026-01-01T00:00:00Z",
    ];
    let pick = |rng: &mut Rng, set: &[&str]| rng.pick(set).to_string();
    if raw {
        return Y::Raw(pick(rng, numbers));
    }
    let first = old.chars().next().unwrap_or(' ');
    if old.ends_with('%') {
        Y::Str(pick(rng, percents))
    } else if old.len() > 15 && old.as_bytes().get(4) == Some(&b'-') && old.contains('T') {
        Y::Str(pick(rng, times))
    } else if first.is_ascii_digit() && old.ends_with(['s', 'h']) && !old.ends_with("Mis") {
        Y::Str(pick(rng, durations))
    } else if first.is_ascii_digit() {
        Y::Str(pick(rng, quantities))
    } else {
        Y::Str(old.to_string())
    }
}

/// Odd values for the keys the consolidation, drift and conversion decisions read (`=` marks a
/// raw YAML scalar).
fn odd_for(key: &str) -> Option<&'static [&'static str]> {
    const TIMES: &[&str] = &[
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "2262-04-12T00:00:00Z",
        "1677-09-21T00:12:43Z",
        "2026-01-01T00:00:00.999999999+14:00",
        "2026-01-01",
        "yesterday",
        "=0",
    ];
    const DURATIONS: &[&str] = &[
        "Never",
        "never",
        "0s",
        "-1s",
        "1ns",
        "2562047h47m16s",
        "2562048h",
        "1d",
        "1.5h",
        "1h-1m",
        "",
        "=0",
        "=-1",
        "=1e308",
        "=null",
    ];
    const BUDGET: &[&str] = &[
        "0",
        "1",
        "-1",
        "0%",
        "100%",
        "101%",
        "-1%",
        "1.5%",
        "50%%",
        "=3",
        "9223372036854775808",
    ];
    const PDB: &[&str] = &[
        "=0",
        "=-1",
        "=2147483648",
        "=1.5",
        "0%",
        "100%",
        "101%",
        "-5%",
        "1.5%",
        "50",
        "abc",
    ];
    const BOOLS: &[&str] = &["true", "false", "True", "=1", "", "yes", "=null"];
    const SECONDS: &[&str] = &["=0", "=-1", "=9223372036854775807", "=1e308", "30", "=1.5"];
    const STATUSES: &[&str] = &["True", "False", "Unknown", "true", "", "=null"];
    const CONDITIONS: &[&str] = &[
        "Drifted",
        "Ready",
        "Launched",
        "Registered",
        "Initialized",
        "Empty",
        "Consolidatable",
        "Disrupting",
        "ConsistentStateFound",
        "",
    ];
    const HASHES: &[&str] = &["", "0", "=1", "abc", "v1", "=null", "18446744073709551616"];
    Some(match key {
        "lastTransitionTime" | "creationTimestamp" | "deletionTimestamp" | "lastPodEventTime" => {
            TIMES
        }
        "expireAfter" | "consolidateAfter" | "terminationGracePeriod" | "duration" => DURATIONS,
        "nodes" => BUDGET,
        "minAvailable" | "maxUnavailable" => PDB,
        "karpenter.sh/do-not-disrupt" | "karpenter.sh/do-not-evict" | "enabled" => BOOLS,
        "ttlSecondsAfterEmpty" | "ttlSecondsUntilExpired" | "weight" => SECONDS,
        "status" => STATUSES,
        "type" => CONDITIONS,
        "karpenter.sh/nodepool-hash"
        | "karpenter.sh/nodepool-hash-version"
        | "karpenter.k8s.aws/ec2nodeclass-hash"
        | "karpenter.k8s.aws/ec2nodeclass-hash-version" => HASHES,
        _ => return None,
    })
}

/// One structure-aware mutation of a parsed document set.
fn mutate_tree(rng: &mut Rng, docs: &mut Vec<Y>) {
    if docs.is_empty() {
        return;
    }
    let d = rng.below(docs.len());
    let mut all = Vec::new();
    docs[d].paths(&mut Vec::new(), &mut all);
    let path = rng.pick(&all).clone();
    match rng.below(18) {
        16 | 17 => {
            // The disruption and conversion worlds: a value under a key the decisions read.
            let keyed: Vec<_> = all
                .iter()
                .filter(|p| matches!(docs[d].at(p), Y::Map(e) if e.iter().any(|(k, _)| odd_for(k).is_some())))
                .cloned()
                .collect();
            if keyed.is_empty() {
                return;
            }
            let p = rng.pick(&keyed).clone();
            let Y::Map(e) = docs[d].at(&p) else {
                return;
            };
            for (k, v) in e.iter_mut() {
                if let Some(odd) = odd_for(k) {
                    if rng.below(2) == 0 {
                        let o = *rng.pick(odd);
                        *v = match o.strip_prefix('=') {
                            Some(raw) => Y::Raw(raw.to_string()),
                            None => Y::Str(o.to_string()),
                        };
                    }
                }
            }
        }
        12..=15 => {
            // Up to eight scalars of the document, each to an extreme of its kind.
            let scalars: Vec<_> = all
                .iter()
                .filter(|p| matches!(docs[d].at(p), Y::Raw(_) | Y::Str(_)))
                .cloned()
                .collect();
            for _ in 0..1 + rng.below(8) {
                if scalars.is_empty() {
                    break;
                }
                let p = rng.pick(&scalars).clone();
                let node = docs[d].at(&p);
                *node = match &*node {
                    Y::Raw(r) if r.parse::<f64>().is_ok() => perturb(rng, r, true),
                    Y::Str(t) => perturb(rng, &t.clone(), false),
                    other => other.clone(),
                };
            }
        }
        0 => {
            if let Y::Map(e) = docs[d].at(&path) {
                if !e.is_empty() {
                    let i = rng.below(e.len());
                    e.remove(i);
                }
            }
        }
        1 => {
            // Duplicate a key, with a different value half the time.
            if let Y::Map(e) = docs[d].at(&path) {
                if !e.is_empty() {
                    let (k, v) = e[rng.below(e.len())].clone();
                    let v = if rng.below(2) == 0 {
                        v
                    } else {
                        weird_value(rng, &v)
                    };
                    e.push((k, v));
                }
            }
        }
        2..=4 if path.len() < 64 => {
            let node = docs[d].at(&path);
            *node = weird_value(rng, node);
        }
        5 => {
            // An anchor here, an alias (or a merge key) elsewhere.
            let node = docs[d].at(&path).clone();
            if matches!(node, Y::Anchor(..)) {
                return;
            }
            *docs[d].at(&path) = Y::Anchor("a".into(), Box::new(node));
            let mut later = Vec::new();
            docs[d].paths(&mut Vec::new(), &mut later);
            let after: Vec<_> = later.into_iter().filter(|p| *p > path).collect();
            if after.is_empty() {
                return;
            }
            let target = rng.pick(&after).clone();
            match docs[d].at(&target) {
                Y::Map(e) if rng.below(2) == 0 => e.push(("<<".into(), Y::Raw("*a".into()))),
                other => *other = Y::Raw("*a".into()),
            }
        }
        6 => {
            // Swap apiVersion/kind among the known kinds.
            let (api, kind) = *rng.pick(KINDS);
            if let Y::Map(e) = &mut docs[d] {
                for (k, v) in e.iter_mut() {
                    if k == "apiVersion" {
                        *v = Y::Str(api.into());
                    } else if k == "kind" {
                        *v = Y::Str(kind.into());
                    }
                }
            }
        }
        7 => {
            let copy = docs[d].clone();
            docs.push(copy);
        }
        8 => {
            // Swap a top-level field between two objects.
            let other = rng.below(docs.len());
            let keys: &[&str] = &["spec", "metadata", "status"];
            let key = *rng.pick(keys);
            let take = |doc: &mut Y| match doc {
                Y::Map(e) => e.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v.clone()),
                _ => None,
            };
            let (a, b) = (take(&mut docs[d]), take(&mut docs[other]));
            for (doc, value) in [(d, b), (other, a)] {
                if let (Y::Map(e), Some(value)) = (&mut docs[doc], value) {
                    if let Some(slot) = e.iter_mut().find(|(k, _)| k == key) {
                        slot.1 = value;
                    }
                }
            }
        }
        9 | 10 => {
            // Requirements, tolerations, budgets: odd operators, values and minValues.
            let mut maps = Vec::new();
            for p in &all {
                if let Y::Map(e) = docs[d].at(p) {
                    if e.iter().any(|(k, _)| {
                        matches!(
                            k.as_str(),
                            "operator" | "values" | "minValues" | "nodes" | "schedule" | "duration"
                        )
                    }) {
                        maps.push(p.clone());
                    }
                }
            }
            if maps.is_empty() {
                return;
            }
            let p = rng.pick(&maps).clone();
            let Y::Map(e) = docs[d].at(&p) else {
                return;
            };
            for (k, v) in e.iter_mut() {
                match k.as_str() {
                    "operator" => *v = Y::Str(rng.pick(OPERATORS).to_string()),
                    "values" => {
                        let n = rng.below(4);
                        *v = Y::Seq((0..n).map(|_| Y::Str(weird_string(rng))).collect())
                    }
                    "minValues" => {
                        let counts: &[&str] = &["0", "-1", "1", "50", "1000000", "1e308"];
                        *v = Y::Raw(rng.pick(counts).to_string())
                    }
                    "nodes" | "schedule" | "duration" => *v = Y::Str(weird_string(rng)),
                    _ => {}
                }
            }
        }
        _ => {
            // A key renamed to a near miss or an odd one.
            if let Y::Map(e) = docs[d].at(&path) {
                if !e.is_empty() {
                    let i = rng.below(e.len());
                    e[i].0 = match rng.below(3) {
                        0 => format!("{}s", e[i].0),
                        1 => e[i].0.to_uppercase(),
                        _ => weird_string(rng),
                    };
                }
            }
        }
    }
}

/// One byte-level mutation of the seed's text.
fn mutate_bytes(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let i = rng.below(lines.len());
    match rng.below(8) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => lines[i].insert(0, '\t'),
        3 => lines[i].insert_str(0, "  "),
        4 => {
            let l = &mut lines[i];
            let at = (0..=l.len())
                .filter(|j| l.is_char_boundary(*j))
                .nth(rng.below(l.len() + 1))
                .unwrap_or(0);
            let bytes: &[&str] = &[
                "\u{1b}[2J",
                "\u{0}",
                "\r",
                "\u{7}",
                ": ",
                "#",
                "&x ",
                "*x",
                "<<: *x",
                "'",
                "\"",
            ];
            let piece = *rng.pick(bytes);
            l.insert_str(at, piece);
        }
        5 => {
            let cut = rng.below(text.len() + 1);
            let cut = (0..=cut)
                .rev()
                .find(|j| text.is_char_boundary(*j))
                .unwrap_or(0);
            return text[..cut].to_string();
        }
        6 => lines.insert(i, "---".into()),
        _ => {
            if let Some((k, _)) = lines[i].clone().split_once(": ") {
                lines[i] = format!("{k}: {}", rng.pick(WEIRD_SCALARS));
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

pub(crate) struct Seed {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) docs: Option<Vec<Y>>,
    /// For a `--catalog` seed, the manifest planned with it.
    pub(crate) manifest: Option<PathBuf>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn seeds() -> Vec<Seed> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "crds") {
                    continue;
                }
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("tests/fixtures"), &mut paths);
    walk(&root().join("examples"), &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            if text.len() > 64 * 1024 {
                return None;
            }
            let docs = serde_saphyr::from_multiple::<serde_json::Value>(&text)
                .ok()
                .map(|d| d.iter().map(Y::from_json).collect());
            let file = path.file_name()?.to_string_lossy().to_string();
            let manifest = file
                .strip_suffix("-catalog.yaml")
                .map(|base| path.with_file_name(format!("{base}.yaml")))
                .filter(|p| p.exists());
            Some(Seed {
                name: path.to_string_lossy().to_string(),
                text,
                docs,
                manifest,
            })
        })
        .collect()
}

/// Documents as one multi-document YAML text.
pub(crate) fn emit_all(docs: &[Y]) -> String {
    let mut out = String::new();
    for d in docs {
        out.push_str("---\n");
        d.emit(&mut out);
        out.push('\n');
    }
    out
}

/// One mutated input: the text, and a `--now` to decide at.
fn mutant(rng: &mut Rng, seed: &Seed) -> String {
    match (&seed.docs, rng.below(4)) {
        (Some(docs), 0..=2) => {
            let mut docs = docs.clone();
            for _ in 0..1 + rng.below(3) {
                mutate_tree(rng, &mut docs);
            }
            emit_all(&docs)
        }
        _ => {
            let mut text = seed.text.clone();
            for _ in 0..1 + rng.below(2) {
                text = mutate_bytes(rng, &text);
            }
            text
        }
    }
}

const NOWS: &[&str] = &[
    "2026-01-01T00:00:00Z",
    "2024-02-29T23:59:59Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1970-01-01T00:00:00Z",
    "2024-02-30T25:61:00Z",
    "1969-12-31T23:59:59Z",
    "2262-04-12T00:00:00Z",
    "1677-09-21T00:12:43Z",
    "2026-01-01T00:00:00.999999999+14:00",
    "2026-01-01T00:00:00-12:00",
    "2026-01-01",
    "+10000-01-01T00:00:00Z",
    "now",
    "",
];

/// The argument lists each input runs with (`{}` is the mutated file).
fn commands(rng: &mut Rng, seed: &Seed, file: &str) -> Vec<Vec<String>> {
    let now = rng.pick(NOWS).to_string();
    let s = |v: &[&str]| v.iter().map(|a| a.replace("{}", file)).collect::<Vec<_>>();
    if let Some(manifest) = &seed.manifest {
        let m = manifest.to_string_lossy().to_string();
        return vec![
            s(&[
                "provision",
                "--dry-run",
                "-o",
                "json",
                "-f",
                &m,
                "--catalog",
                "{}",
            ]),
            s(&["consolidate", "-f", &m, "--catalog", "{}", "--now", &now]),
        ];
    }
    vec![
        s(&["provision", "--dry-run", "-o", "json", "-f", "{}"]),
        s(&["consolidate", "-f", "{}", "--now", &now, "-o", "json"]),
        s(&["nodes", "-f", "{}", "--now", &now]),
        s(&["drift", "check", "-f", "{}", "-o", "json"]),
        s(&["convert", "-f", "{}"]),
    ]
}

const GLOBAL: &[&str] = &[
    "--region",
    "us-east-1",
    "--kubeconfig",
    "/nonexistent/kubeconfig",
];

/// Runs one command in process: `Err` with the panic message if it panicked.
fn run_in_process(args: &[String]) -> Result<(u8, String), String> {
    let argv = std::iter::once("kubectl-karpenter".to_string())
        .chain(args.iter().cloned())
        .chain(GLOBAL.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).map_err(|e| format!("arguments: {e}"))?;
    let mut out = Vec::new();
    let mut err = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut ctx = Context {
            global: &cli.global,
            out: &mut out,
            err: &mut err,
        };
        commands::run(&mut ctx, &cli.command)
    }));
    match result {
        Ok(Ok(exit)) => Ok((exit as u8, String::new())),
        Ok(Err(e)) => Ok((e.exit as u8, e.message)),
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())),
    }
}

/// Runs one command through the debug binary; a description of what is wrong, if anything.
fn run_binary(args: &[String]) -> Option<String> {
    let start = Instant::now();
    let mut child = Process::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args(args)
        .args(GLOBAL)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return Some("no answer in 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    use std::io::Read as _;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let Some(code) = status.code() else {
        return Some(format!("killed by a signal: {status:?}"));
    };
    if ![0, 1, 2, 3].contains(&code) {
        return Some(format!("exit {code}: {}", stderr.trim()));
    }
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    if code == 2 && errors.len() != 1 {
        return Some(format!(
            "exit 2 with {} error lines: {stderr}",
            errors.len()
        ));
    }
    if let Some(long) = stderr.lines().find(|l| l.chars().count() > 1_200) {
        return Some(format!("a stderr line of {} chars", long.chars().count()));
    }
    if stderr.chars().any(|c| c != '\n' && c.is_control()) {
        return Some(format!("raw control characters on stderr: {stderr:?}"));
    }
    if start.elapsed() > Duration::from_secs(10) {
        return Some(format!("took {:?}", start.elapsed()));
    }
    None
}

#[derive(Default)]
struct Findings {
    runs: usize,
    binary_runs: usize,
    exits: std::collections::BTreeMap<u8, usize>,
    /// Distinct failures (by their first line), each with the smallest input that showed it.
    failures: std::collections::BTreeMap<String, (usize, PathBuf, Vec<String>)>,
}

impl Findings {
    fn record(&mut self, key: String, text: &str, dir: &Path, args: &[String]) {
        let keep = self
            .failures
            .get(&key)
            .is_none_or(|(len, _, _)| text.len() < *len);
        if keep {
            let n = self.failures.len();
            let path = dir.join(format!("failure-{n}.yaml"));
            std::fs::write(&path, text).unwrap();
            self.failures.insert(key, (text.len(), path, args.to_vec()));
        }
    }
}

/// [`fuzz_here`] on a thread with the stack the binary's main thread has (8 MiB; a test
/// thread has 2 MiB), so what overflows here overflows there.
fn fuzz(seed: u64, count: usize, binary: usize, quiet: bool) -> Findings {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || fuzz_here(seed, count, binary, quiet))
        .unwrap()
        .join()
        .unwrap()
}

fn fuzz_here(seed: u64, count: usize, binary: usize, quiet: bool) -> Findings {
    let dir = std::env::temp_dir().join(format!("kk-fuzz-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // `FUZZ_ONLY=catalog`: only the seeds whose path holds that text.
    let only = std::env::var("FUZZ_ONLY").unwrap_or_default();
    let seeds: Vec<Seed> = seeds()
        .into_iter()
        .filter(|s| s.name.contains(&only))
        .collect();
    assert!(!seeds.is_empty(), "no seed");
    let mut rng = Rng::new(seed);
    let mut findings = Findings::default();
    // About five commands per input: every n-th run also goes through the binary.
    let binary_every = (count * 5)
        .checked_div(binary)
        .map_or(usize::MAX, |n| n.max(1));
    // Panics are recorded, not printed (the hook is process-wide: only for the long run).
    let quiet = kubectl_karpenter::testing::quiet_panics(quiet, &PANIC_AT);
    for _ in 0..count {
        let s = rng.pick(&seeds);
        let text = mutant(&mut rng, s);
        if text.len() > 512 * 1024 {
            continue;
        }
        let file = dir.join("input.yaml");
        std::fs::File::create(&file)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let file = file.to_string_lossy().to_string();
        for args in commands(&mut rng, s, &file) {
            findings.runs += 1;
            let start = Instant::now();
            match run_in_process(&args) {
                Ok((exit, message)) => {
                    *findings.exits.entry(exit).or_default() += 1;
                    if ![0, 1, 2, 3].contains(&exit) {
                        findings.record(format!("exit {exit}: {message}"), &text, &dir, &args);
                    }
                    // What the binary prints: `error: ` and the message on one line.
                    let shown = kubectl_karpenter::cli::output::one_line(&message);
                    if shown.chars().count() > 1_200 {
                        let key: String = shown.chars().take(80).collect();
                        let key = format!("long message: {key}");
                        findings.record(key, &text, &dir, &args);
                    }
                }
                Err(panic) => {
                    let at = std::mem::take(&mut *PANIC_AT.lock().unwrap());
                    let key = format!("panic: {}{at}", panic.lines().next().unwrap_or(""));
                    findings.record(key, &text, &dir, &args);
                }
            }
            if start.elapsed() > Duration::from_secs(5) {
                let key = format!("slow: {} {:?}", args[0], start.elapsed());
                findings.record(key, &text, &dir, &args);
            }
            if findings.runs % binary_every == 0 {
                findings.binary_runs += 1;
                if let Some(problem) = run_binary(&args) {
                    let key = format!("binary: {}", problem.lines().next().unwrap_or(""));
                    findings.record(key, &text, &dir, &args);
                }
            }
        }
    }
    drop(quiet);
    if findings.failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    findings
}

fn report(f: &Findings) -> String {
    let mut out = format!(
        "{} runs in process, {} through the binary, exits {:?}, {} distinct failures\n",
        f.runs,
        f.binary_runs,
        f.exits,
        f.failures.len()
    );
    for (key, (len, path, args)) in &f.failures {
        let key: String = key.chars().take(300).collect();
        out.push_str(&format!(
            "- {key}\n  {len} bytes in {} ({args:?})\n",
            path.display()
        ));
    }
    out
}

/// The harness, as long as asked: `FUZZ_SEED`, `FUZZ_COUNT` (inputs), `FUZZ_BINARY` (how many
/// of them also run through the binary).
#[test]
#[ignore = "a fuzzing run: FUZZ_SEED=1 FUZZ_COUNT=2000 FUZZ_BINARY=300 ... -- --ignored"]
fn fuzz_inputs_as_long_as_asked() {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let findings = fuzz(
        var("FUZZ_SEED", 1),
        var("FUZZ_COUNT", 1000) as usize,
        var("FUZZ_BINARY", 100) as usize,
        true,
    );
    println!("{}", report(&findings));
    assert!(findings.failures.is_empty(), "{}", report(&findings));
}

/// A short fixed-seed run: no mutated input makes a command panic, hang or leave the exit-code
/// contract.
#[test]
fn a_short_fixed_seed_fuzz_run_finds_no_panic_and_no_exit_outside_the_contract() {
    let findings = fuzz(30, 30, 4, false);
    assert!(findings.runs > 100, "{}", report(&findings));
    assert!(findings.failures.is_empty(), "{}", report(&findings));
}

/// Found by the fuzzer: a `--catalog` type declaring `pods: "1e18"` made the kube-reserved
/// memory overflow (exit 101, a panic, from a debug build; a wrapped reservation from a release
/// one). The reservation saturates: that type simply has no room left.
#[test]
fn a_catalog_type_with_an_absurd_pod_capacity_is_planned_without_a_panic() {
    let out = Process::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args([
            "provision",
            "--dry-run",
            "-o",
            "json",
            "--region",
            "us-east-1",
        ])
        .arg("-f")
        .arg(root().join("tests/fixtures/plans/spot-above-on-demand.yaml"))
        .arg("--catalog")
        .arg(root().join("tests/fixtures/fuzz/absurd-pods.catalog.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(plan.is_object(), "{plan}");
}

/// Found by the fuzzer: two nodes of one pool each running a pod that requests `cpu: 7Ei` (more
/// millicores than an i64 holds: "more than anything") made the pool's totals in `nodes -f`
/// overflow (exit 101 from a debug build). The totals saturate.
#[test]
fn nodes_totals_of_pods_requesting_more_than_anything_are_shown_without_a_panic() {
    let out = Process::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .args(["nodes", "-o", "json", "--region", "us-east-1"])
        .args(["--now", "2026-01-01T00:00:00Z", "-f"])
        .arg(root().join("tests/fixtures/fuzz/huge-requests-nodes.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(view["nodes"].as_array().map(Vec::len), Some(2), "{view}");
}
