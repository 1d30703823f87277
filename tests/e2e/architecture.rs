//! The layers hold (the house rules: pure core → use cases → adapters → cli/commands): every
//! `.rs` file under a layer's directory is read — no hand-kept list — and each path it names
//! (`use` trees with groups, `self`/`super` chains resolved against the file's and inline
//! modules' position, paths written inline, `::crate` paths) is checked against the layer's row
//! of [`RULES`]. A layer whose directory does not exist yet passes.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::support::root;

/// What a layer may not name.
struct Rule {
    /// The layer: a directory under the crate root (and `DIR.rs`, if the module is one file).
    dirs: &'static [&'static str],
    /// Path prefixes, absolute after resolution (`crate::cli`, `tokio`, `std::fs`); a segment
    /// ending in `*` matches by prefix (`aws_*`).
    paths: &'static [&'static str],
    /// Identifiers it may not mention at all (types an allowed module might re-export).
    names: &'static [&'static str],
    /// Why, for the failure message.
    why: &'static str,
}

/// What the pure core may not name: crates and std modules that do I/O, keep time or belong to
/// the command line, and every layer above it.
const CORE_FORBIDDEN: &[&str] = &[
    "tokio",
    "kube",
    "k8s_openapi",
    "aws_*",
    "clap",
    "clap_complete",
    "dialoguer",
    "indicatif",
    "ctrlc",
    "owo_colors",
    "tracing_subscriber",
    "reqwest",
    "hyper",
    "hyper_util",
    "http",
    "http_body_util",
    "std::fs",
    // Sockets and name lookups; addresses (`std::net::IpAddr`) are values the core compares.
    "std::net::TcpStream",
    "std::net::TcpListener",
    "std::net::UdpSocket",
    "std::net::ToSocketAddrs",
    "std::process",
    "std::env",
    "std::io",
    "std::thread",
    "std::time::SystemTime",
    "std::time::Instant",
    "crate::api",
    "crate::cloud",
    "crate::k8s",
    "crate::cli",
    "crate::commands",
    "crate::usecases",
];

/// The layers, one row each.
const RULES: &[Rule] = &[
    Rule {
        dirs: &[
            "src/model",
            "src/scheduling",
            "src/drift",
            "src/disruption",
            "src/karpenter_install",
        ],
        paths: CORE_FORBIDDEN,
        names: &[],
        why: "the pure core (model, scheduling, drift, disruption, karpenter_install) imports no I/O crate and nothing from api/cloud/k8s/cli/commands/usecases",
    },
    Rule {
        dirs: &["src/usecases"],
        paths: &[
            "crate::cli",
            "crate::commands",
            "crate::k8s::client",
            "crate::cloud::aws",
        ],
        names: &["KubeClient", "AwsCloud"],
        why: "use cases go through the narrow traits (k8s::Cluster, cloud::Compute), never the concrete clients, cli or commands",
    },
    Rule {
        dirs: &["src/k8s", "src/cloud", "src/api"],
        paths: &["crate::cli", "crate::commands", "crate::usecases"],
        names: &[],
        why: "adapters import neither cli, commands nor the use cases",
    },
];

/// A forbidden path or name, where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    /// Relative to the checked root (`src/drift/mod.rs`).
    file: String,
    /// 1-based.
    line: usize,
    /// The resolved path (`crate::cloud::ami`) or the name.
    what: String,
    why: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} ({})",
            self.file, self.line, self.what, self.why
        )
    }
}

/// Checks every layer of `rules` under `root`; also returns how many files each rule read.
fn check_tree(root: &Path, rules: &[Rule]) -> (Vec<Violation>, Vec<usize>) {
    let mut violations = Vec::new();
    let mut counts = Vec::new();
    for rule in rules {
        let mut files = Vec::new();
        for dir in rule.dirs {
            rs_files(&root.join(dir), &mut files);
            let single = root.join(format!("{dir}.rs"));
            if single.is_file() {
                files.push(single);
            }
        }
        files.sort();
        counts.push(files.len());
        for path in files {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
            violations.extend(check_source(&rel, &text, rule));
        }
    }
    (violations, counts)
}

/// Every `.rs` file under `dir`, recursively; nothing when it does not exist.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file under `src/` defines: `src/cloud/ami/facts.rs` → `[cloud, ami, facts]`,
/// `src/drift/mod.rs` → `[drift]`.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.strip_prefix("src/").unwrap_or(rel);
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut segments: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(
        segments.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segments.pop();
    }
    segments
}

fn check_source(rel: &str, text: &str, rule: &Rule) -> Vec<Violation> {
    let tokens = tokens(&strip_comments_and_literals(text));
    let module = module_of(rel);
    let mut out = Vec::new();
    let mut report = |line: usize, what: String| {
        out.push(Violation {
            file: rel.to_string(),
            line,
            what,
            why: rule.why,
        })
    };
    for (path, line) in paths(&tokens, &module) {
        if rule.paths.iter().any(|p| matches_prefix(&path, p)) {
            report(line, path.join("::"));
        }
    }
    for t in &tokens {
        if let Tok::Ident(name) = &t.tok {
            if rule.names.contains(&name.as_str()) {
                report(t.line, name.clone());
            }
        }
    }
    out
}

/// Whether `path` starts with `pattern`'s segments (`aws_*` matches any `aws_…` segment).
fn matches_prefix(path: &[String], pattern: &str) -> bool {
    let want: Vec<&str> = pattern.split("::").collect();
    path.len() >= want.len()
        && want
            .iter()
            .zip(path)
            .all(|(w, seg)| match w.strip_suffix('*') {
                Some(prefix) => seg.starts_with(prefix),
                None => w == seg,
            })
}

/// `text` with comments, string/char literals blanked (newlines kept, so lines still count).
fn strip_comments_and_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident_char(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) && {
            let start = if c[i] == 'b' { i + 2 } else { i + 1 };
            let hashes = c[start..].iter().take_while(|&&h| h == '#').count();
            c.get(start + hashes) == Some(&'"')
        } {
            // r"…", r#"…"#, br"…": ends at a quote followed by as many hashes.
            let start = if c[i] == 'b' { i + 2 } else { i + 1 };
            let hashes = c[start..].iter().take_while(|&&h| h == '#').count();
            for _ in i..start + hashes + 1 {
                out.push(' ');
            }
            i = start + hashes + 1;
            while i < c.len() {
                if c[i] == '"'
                    && c[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes
                {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            i = blank_quoted(&c, i, &mut out);
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{1F600}'); a lifetime ('a) has no closing quote.
            i = blank_quoted(&c, i, &mut out);
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Blanks the literal quoted by `c[start]` (`"…"` or `'…'`, backslash escapes) into `out`;
/// returns the index after its closing quote.
fn blank_quoted(c: &[char], start: usize, out: &mut String) -> usize {
    let quote = c[start];
    let mut i = start + 1;
    out.push(' ');
    while i < c.len() && c[i] != quote {
        let len = if c[i] == '\\' { 2 } else { 1 };
        for &ch in &c[i..(i + len).min(c.len())] {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
        i += len;
    }
    out.push(' ');
    i + 1
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

struct Token {
    tok: Tok,
    line: usize,
}

fn tokens(code: &str) -> Vec<Token> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let tok = if ch == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if ch.is_whitespace() {
            i += 1;
            continue;
        } else if ch == 'r'
            && c.get(i + 1) == Some(&'#')
            && c.get(i + 2).is_some_and(|n| n.is_alphabetic() || *n == '_')
        {
            // A raw identifier (r#type): the name without its prefix.
            i += 2;
            continue;
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
            continue;
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            continue;
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            i += 1;
            Tok::PathSep
        } else {
            match ch {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                _ => Tok::Other,
            }
        };
        out.push(Token { tok, line });
        i += 1;
    }
    out
}

/// Every path the tokens name, resolved to an absolute one, with its line: the leaves of `use`
/// trees and paths written inline (two segments or more).
fn paths(tokens: &[Token], file_module: &[String]) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    // Inline `mod name { … }` blocks: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let ident = |i: usize| match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    while i < tokens.len() {
        let module: Vec<String> = file_module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(m, _)| m.clone()))
            .collect();
        match &tokens[i].tok {
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(name), Some(Tok::Open)) =
                    (ident(i + 1), tokens.get(i + 2).map(|t| &t.tok))
                {
                    depth += 1;
                    inline.push((name.to_string(), depth));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(kw) if kw == "use" => {
                i += 1;
                let mut leaves = Vec::new();
                use_tree(tokens, &mut i, Vec::new(), &mut leaves);
                for (path, line) in leaves {
                    if let Some(p) = resolve(&path, &module) {
                        out.push((p, line));
                    }
                }
                while i < tokens.len() && tokens[i].tok != Tok::Semi {
                    i += 1;
                }
            }
            Tok::Ident(_) | Tok::PathSep => {
                let line = tokens[i].line;
                let mut path = Vec::new();
                if tokens[i].tok == Tok::PathSep {
                    path.push(String::new());
                    i += 1;
                }
                while let Some(seg) = ident(i) {
                    path.push(seg.to_string());
                    i += 1;
                    if tokens.get(i).map(|t| &t.tok) == Some(&Tok::PathSep)
                        && ident(i + 1).is_some()
                    {
                        i += 1;
                    } else {
                        break;
                    }
                }
                if path.len() >= 2 {
                    if let Some(p) = resolve(&path, &module) {
                        out.push((p, line));
                    }
                }
                if path.is_empty() {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Parses one use tree at `i` (after `use`, or inside a group), pushing each leaf path.
fn use_tree(
    tokens: &[Token],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, usize)>,
) {
    let mut path = prefix;
    let mut line = tokens.get(*i).map_or(0, |t| t.line);
    if tokens.get(*i).map(|t| &t.tok) == Some(&Tok::PathSep) {
        path.push(String::new());
        *i += 1;
    }
    loop {
        match tokens.get(*i).map(|t| &t.tok) {
            Some(Tok::Ident(name)) if name != "as" => {
                path.push(name.clone());
                line = tokens[*i].line;
                *i += 1;
                if tokens.get(*i).map(|t| &t.tok) == Some(&Tok::PathSep) {
                    *i += 1;
                    continue;
                }
                break;
            }
            Some(Tok::Open) => {
                *i += 1;
                while *i < tokens.len() {
                    match tokens[*i].tok {
                        Tok::Close => {
                            *i += 1;
                            break;
                        }
                        Tok::Comma => *i += 1,
                        _ => use_tree(tokens, i, path.clone(), out),
                    }
                }
                return;
            }
            Some(Tok::Star) => {
                *i += 1;
                break;
            }
            _ => break,
        }
    }
    if tokens.get(*i).map(|t| &t.tok) == Some(&Tok::Ident("as".into())) {
        *i += 2;
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    if !path.is_empty() {
        out.push((path, line));
    }
}

/// An absolute path: `crate::…` for this crate (`self`/`super` resolved against `module`),
/// else the path as written (`tokio::…`, `std::…`; a leading `::` dropped). `None` when a
/// `super` chain leaves the crate (it does not compile anyway).
fn resolve(path: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut segments = path.iter().peekable();
    if segments.peek().is_some_and(|s| s.is_empty()) {
        segments.next();
        return Some(segments.cloned().collect());
    }
    match segments.peek().map(|s| s.as_str()) {
        Some("crate") => Some(path.to_vec()),
        Some("self" | "super") => {
            let mut base = module.to_vec();
            if segments.peek().is_some_and(|s| *s == "self") {
                segments.next();
            }
            while segments.peek().is_some_and(|s| *s == "super") {
                segments.next();
                base.pop()?;
            }
            let mut out = vec!["crate".to_string()];
            out.extend(base);
            out.extend(segments.cloned());
            Some(out)
        }
        _ => Some(path.to_vec()),
    }
}

#[test]
fn every_layer_imports_only_what_it_may() {
    let (violations, counts) = check_tree(&root(), RULES);
    let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(list.is_empty(), "layer violations:\n{}", list.join("\n"));
    // The core and the adapters exist: a walker that found nothing would pass vacuously.
    assert!(counts[0] >= 20, "core files read: {}", counts[0]);
    assert!(counts[2] >= 20, "adapter files read: {}", counts[2]);
}

/// The commands a command file may not name under `root`: every other command module but its
/// own `_live` half (`provision` → `provision_live`); shared glue lives in `commands::live` and
/// `commands` itself. One rule per file; the files read.
fn command_rules(root: &Path) -> Vec<(PathBuf, Rule)> {
    let dir = root.join("src/commands");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".rs").map(str::to_string))
                // `mod.rs` and its tests (`tests.rs`) are `commands` itself.
                .filter(|n| n != "mod" && n != "tests")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .map(|own| {
            let others: Vec<&'static str> = names
                .iter()
                .filter(|n| *n != own && **n != format!("{own}_live"))
                .map(|n| &*Box::leak(format!("crate::commands::{n}").into_boxed_str()))
                .collect();
            let rule = Rule {
                dirs: &[],
                paths: Box::leak(others.into_boxed_slice()),
                names: &[],
                why: "a command file is glue: it calls use cases and shared glue (commands::live, commands), never another command",
            };
            (dir.join(format!("{own}.rs")), rule)
        })
        .collect()
}

/// Each violation as (file, line, what), for comparing.
fn located(violations: &[Violation]) -> Vec<(&str, usize, &str)> {
    violations
        .iter()
        .map(|v| (v.file.as_str(), v.line, v.what.as_str()))
        .collect()
}

fn check_commands(root: &Path) -> (Vec<Violation>, usize) {
    let rules = command_rules(root);
    let mut violations = Vec::new();
    for (path, rule) in &rules {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        violations.extend(check_source(&rel, &text, rule));
    }
    (violations, rules.len())
}

#[test]
fn no_command_reaches_into_another() {
    let (violations, files) = check_commands(&root());
    let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(list.is_empty(), "command violations:\n{}", list.join("\n"));
    assert!(files >= 10, "command files read: {files}");

    // Planted: a command naming another is reported; its own `_live` half and the shared glue
    // are not.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("architecture-commands");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/commands/live")).unwrap();
    let write = |rel: &str, text: &str| std::fs::write(dir.join(rel), text).unwrap();
    write("src/commands/mod.rs", "pub mod nodes;\n");
    write(
        "src/commands/nodes.rs",
        "use super::live;\nfn f() { super::provision::resolve_region(); super::resolve_region(); }\n",
    );
    write(
        "src/commands/provision.rs",
        "fn g() { super::provision_live::run(); }\n",
    );
    write("src/commands/provision_live.rs", "");
    let (violations, files) = check_commands(&dir);
    let got = located(&violations);
    assert_eq!(
        got,
        [(
            "src/commands/nodes.rs",
            2,
            "crate::commands::provision::resolve_region"
        )]
    );
    assert_eq!(files, 3);
}

#[test]
fn planted_violations_are_reported_with_file_and_line() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("architecture-planted");
    let _ = std::fs::remove_dir_all(&dir);
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "src/drift/planted.rs",
        r##"//! crate::cloud in a doc comment is not a use.
use std::collections::BTreeMap;
use crate::{model::labels, cloud::{self, ami::split_list}};
use super::super::api::NodeClaim;

/* use tokio; */
const TEXT: &str = "crate::k8s::client";
const RAW: &str = r#"use crate::cli;"#;

fn f<'a>(x: &'a str) -> char {
    let _ = crate::commands::unix_now();
    let _ = ::tokio::spawn;
    let _ = aws_sdk_ec2::Client::new;
    let _ = std::fs::read("x");
    '"'
}

mod tests {
    use super::super::k8s;
    use super::super::super::k8s::ops;
}
"##,
    );
    write(
        "src/usecases/replace.rs",
        "use crate::k8s::{Cluster, client::KubeClient};\nuse crate::cloud::types::Compute;\nfn g(c: &crate::cloud::aws::AwsCloud) {}\n",
    );
    write("src/k8s.rs", "use crate::cli::GlobalArgs;\n");
    write(
        "src/api/fine.rs",
        "use crate::model::labels;\nuse super::core;\n",
    );

    let (violations, counts) = check_tree(&dir, RULES);
    let got = located(&violations);
    // `super::super::k8s` in the inline `tests` module is `crate::drift::k8s` (allowed): inline
    // modules count; one more `super` leaves the core.
    assert_eq!(
        got,
        [
            ("src/drift/planted.rs", 3, "crate::cloud"),
            ("src/drift/planted.rs", 3, "crate::cloud::ami::split_list"),
            ("src/drift/planted.rs", 4, "crate::api::NodeClaim"),
            ("src/drift/planted.rs", 11, "crate::commands::unix_now"),
            ("src/drift/planted.rs", 12, "tokio::spawn"),
            ("src/drift/planted.rs", 13, "aws_sdk_ec2::Client::new"),
            ("src/drift/planted.rs", 14, "std::fs::read"),
            ("src/drift/planted.rs", 20, "crate::k8s::ops"),
            (
                "src/usecases/replace.rs",
                1,
                "crate::k8s::client::KubeClient"
            ),
            ("src/usecases/replace.rs", 3, "crate::cloud::aws::AwsCloud"),
            ("src/usecases/replace.rs", 1, "KubeClient"),
            ("src/usecases/replace.rs", 3, "AwsCloud"),
            ("src/k8s.rs", 1, "crate::cli::GlobalArgs"),
        ]
    );
    assert_eq!(counts, [1, 1, 2], "files read per rule");
    assert_eq!(
        violations[0].to_string(),
        format!("src/drift/planted.rs:3: crate::cloud ({})", RULES[0].why)
    );
}

#[test]
fn paths_resolve_against_the_module() {
    let m = |s: &str| module_of(s);
    assert_eq!(m("src/cloud/ami/facts.rs"), ["cloud", "ami", "facts"]);
    assert_eq!(m("src/drift/mod.rs"), ["drift"]);
    assert!(m("src/lib.rs").is_empty());
    let p = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let table: &[(&str, &str, Option<&str>)] = &[
        ("crate::api", "src/drift/mod.rs", Some("crate::api")),
        (
            "super::facts",
            "src/drift/reasons.rs",
            Some("crate::drift::facts"),
        ),
        (
            "super::super::super::cloud",
            "src/drift/x/y.rs",
            Some("crate::cloud"),
        ),
        (
            "super::super::cloud",
            "src/drift/x/y.rs",
            Some("crate::drift::cloud"),
        ),
        (
            "self::record",
            "src/drift/mod.rs",
            Some("crate::drift::record"),
        ),
        ("super::super", "src/drift/mod.rs", None),
        ("tokio::spawn", "src/drift/mod.rs", Some("tokio::spawn")),
    ];
    for (path, file, want) in table {
        let got = resolve(&p(path), &module_of(file)).map(|v| v.join("::"));
        assert_eq!(got.as_deref(), *want, "{path} in {file}");
    }
    assert_eq!(
        resolve(&["".into(), "tokio".into()], &[]),
        Some(vec!["tokio".into()])
    );
    assert!(matches_prefix(&p("aws_sdk_ec2::Client"), "aws_*"));
    assert!(!matches_prefix(&p("crate::k8s::ops"), "crate::k8s::client"));
    assert!(!matches_prefix(&p("crate::api_x"), "crate::api"));
}
