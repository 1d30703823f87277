//! krew packaging: the committed `krew-manifest.yaml`, its template
//! `krew/karpenter.yaml.in`, and `scripts/release.sh`.
//!
//! Body of `tests/e2e/krew.rs` (plain items, no `mod krew { .. }` wrapper).
//! Uses only `std`, `serde_json` and `serde-saphyr`.
//!
//! `validate_manifest` mirrors krew's own checks (`internal/index/validation` and
//! `cmd/validate-krew-manifest` in kubernetes-sigs/krew, see docs/conventions.md §1.1) plus
//! the krew-index review conventions we follow (short description ≤ 50 chars,
//! description and caveats wrapped at 80 columns, no command list in the
//! description). krew checks that `metadata.name` equals the manifest's file name:
//! the repository copy is called `krew-manifest.yaml` (docs/spec.md §8), so in a krew
//! index it must be saved as `plugins/karpenter.yaml`; the tests check the name
//! against `karpenter`, the index file name.

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Plugin name = file name of the manifest in a krew index (`plugins/karpenter.yaml`).
const PLUGIN_NAME: &str = "karpenter";
const BIN_NAME: &str = "kubectl-karpenter";
const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
const ZERO_SHA256: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// Platforms we ship (docs/spec.md §8).
const SHIPPED: [(&str, &str); 4] = [
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];
/// os/arch pairs krew's validator knows; every platform entry must match one.
const KREW_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];
const WINDOWS_RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

// ------------------------------------------------------------------ helpers

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `version` of the `[package]` table of Cargo.toml.
fn cargo_version() -> String {
    let text = read(&repo_root().join("Cargo.toml"));
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            if key.trim() == "version" {
                return value.trim().trim_matches('"').to_string();
            }
        }
    }
    panic!("no [package] version in Cargo.toml");
}

fn parse_manifest(text: &str, what: &str) -> Value {
    serde_saphyr::from_str::<Value>(text)
        .unwrap_or_else(|e| panic!("{what} is not valid YAML: {e}"))
}

fn load_manifest(path: &Path) -> Value {
    parse_manifest(&read(path), &path.display().to_string())
}

/// The template with `{{VERSION}}` = Cargo.toml version and every checksum = zeros.
fn render_template_with_placeholders() -> Value {
    // the leading comment block documents the placeholders; release.sh drops it
    let mut text: String = read(&repo_root().join("krew/karpenter.yaml.in"))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    text = text.replace("{{VERSION}}", &cargo_version());
    for (os, arch) in SHIPPED {
        let key = format!(
            "{{{{SHA256_{}_{}}}}}",
            os.to_uppercase(),
            arch.to_uppercase()
        );
        assert!(text.contains(&key), "template has no {key} placeholder");
        text = text.replace(&key, ZERO_SHA256);
    }
    assert!(
        !text.contains("{{"),
        "template has a placeholder release.sh does not fill: {}",
        &text[text.find("{{").unwrap()..]
            .lines()
            .next()
            .unwrap_or("")
    );
    parse_manifest(&text, "krew/karpenter.yaml.in")
}

fn platforms(m: &Value) -> Vec<Value> {
    m["spec"]["platforms"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The platform entry whose selector matches os/arch.
fn platform_for(m: &Value, os: &str, arch: &str) -> Value {
    platforms(m)
        .into_iter()
        .find(|p| selector_matches(&p["selector"], os, arch))
        .unwrap_or_else(|| panic!("manifest has no platform for {os}/{arch}"))
}

/// The krew platform of the machine running the tests, if we ship one for it.
fn host_platform() -> Option<(&'static str, &'static str)> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        _ => return None,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        _ => return None,
    };
    Some((os, arch))
}

fn sha256_file(path: &Path) -> String {
    let attempts: [(&str, &[&str]); 2] = [("sha256sum", &[]), ("shasum", &["-a", "256"])];
    for (prog, args) in attempts {
        if let Ok(out) = Command::new(prog).args(args).arg(path).output() {
            if out.status.success() {
                let text = String::from_utf8_lossy(&out.stdout);
                return text
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
            }
        }
    }
    panic!("neither sha256sum nor shasum could hash {}", path.display());
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh directory under Cargo's per-target temp dir.
fn scratch_dir(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("krew-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A small executable of the host platform to package: the script treats every binary alike, and
/// compressing and hashing the 200 MB debug build of ours cost CI half a minute.
fn small_host_binary(scratch: &Path) -> PathBuf {
    let source = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .unwrap_or_else(|| Path::new(env!("CARGO_BIN_EXE_kubectl-karpenter")));
    let copy = scratch.join("input").join(BIN_NAME);
    fs::create_dir_all(copy.parent().unwrap()).unwrap();
    fs::copy(source, &copy).unwrap();
    copy
}

fn release_script() -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/release.sh"));
    cmd
}

// ------------------------------------------------------------------ validation

/// krew's semver: a leading `v`, then MAJOR.MINOR.PATCH[-pre][+build] (no leading zeros).
fn is_krew_semver(v: &str) -> bool {
    fn numeric(n: &str) -> bool {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
    }
    fn ident(id: &str) -> bool {
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    }
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let (rest, build) = match rest.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        // pre-release identifiers: numeric ones without leading zeros
        && pre.is_none_or(|p| {
            p.split('.')
                .all(|id| ident(id) && (numeric(id) || !id.bytes().all(|b| b.is_ascii_digit())))
        })
        && build.is_none_or(|b| b.split('.').all(ident))
}

/// Kubernetes label-selector semantics restricted to the `os`/`arch` labels krew sets.
fn selector_matches(sel: &Value, os: &str, arch: &str) -> bool {
    let label = |k: &str| match k {
        "os" => Some(os),
        "arch" => Some(arch),
        _ => None,
    };
    if !sel.is_object() {
        return false;
    }
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            if label(k) != v.as_str() {
                return false;
            }
        }
    }
    if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let value = label(e["key"].as_str().unwrap_or_default());
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let ok = match e["operator"].as_str().unwrap_or_default() {
                "In" => !values.is_empty() && value.is_some_and(|v| values.contains(&v)),
                "NotIn" => !values.is_empty() && value.is_none_or(|v| !values.contains(&v)),
                "Exists" => values.is_empty() && value.is_some(),
                "DoesNotExist" => values.is_empty() && value.is_none(),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
    }
    true
}

fn check_keys(v: &Value, path: &str, allowed: &[&str], errors: &mut Vec<String>) {
    if let Some(obj) = v.as_object() {
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                errors.push(format!("{path}.{k}: unknown field (allowed: {allowed:?})"));
            }
        }
    }
}

fn check_wrapped(text: &str, path: &str, max: usize, errors: &mut Vec<String>) {
    for line in text.lines() {
        // validate-krew-manifest tolerates an over-long line only if it is one word
        if line.chars().count() > max && line.trim().contains(' ') {
            errors.push(format!("{path}: line longer than {max} columns: {line:?}"));
        }
    }
}

/// All violations of krew's manifest rules (and our krew-index conventions) in `m`,
/// which must describe `kubectl-karpenter` `v{expected_version}`. Empty = valid.
fn validate_manifest(m: &Value, expected_version: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let mut err = |s: String| errors.push(s);

    if m["apiVersion"] != json!(API_VERSION) {
        err(format!(
            "apiVersion: {} is not {API_VERSION}",
            m["apiVersion"]
        ));
    }
    if m["kind"] != json!("Plugin") {
        err(format!("kind: {} is not Plugin", m["kind"]));
    }

    // metadata.name: safe name, equal to the index file name (karpenter.yaml)
    let name = m["metadata"]["name"].as_str().unwrap_or_default();
    let safe = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS_RESERVED
            .iter()
            .any(|r| r.eq_ignore_ascii_case(name));
    if !safe {
        err(format!(
            "metadata.name: {name:?} does not match ^[\\w-]+$ or is reserved"
        ));
    }
    if name != PLUGIN_NAME {
        err(format!(
            "metadata.name: {name:?} must be {PLUGIN_NAME:?}, the manifest's file name in the index"
        ));
    }

    let spec = &m["spec"];
    if !spec.is_object() {
        err("spec: missing".into());
        return errors;
    }
    let version = spec["version"].as_str().unwrap_or_default();
    if !is_krew_semver(version) {
        err(format!(
            "spec.version: {version:?} is not semver with a leading 'v'"
        ));
    }
    if version != format!("v{expected_version}") {
        err(format!(
            "spec.version: {version:?} but Cargo.toml is {expected_version:?}"
        ));
    }
    let homepage = spec["homepage"].as_str().unwrap_or_default();
    if !homepage.starts_with("https://") {
        err(format!("spec.homepage: {homepage:?} is not an https URL"));
    }

    let short = spec["shortDescription"].as_str().unwrap_or_default();
    if short.trim().is_empty() {
        err("spec.shortDescription: missing".into());
    }
    if short.contains(['\r', '\n']) {
        err(format!("spec.shortDescription: {short:?} has a line break"));
    }
    if short.chars().count() > 50 {
        err(format!(
            "spec.shortDescription: {short:?} is longer than 50 characters"
        ));
    }

    let description = spec["description"].as_str().unwrap_or_default();
    if description.trim().is_empty() {
        err("spec.description: missing".into());
    }
    if description.contains("kubectl karpenter ") || description.contains(" --") {
        err("spec.description: lists commands/flags (keep those in --help)".into());
    }
    let caveats = spec["caveats"].as_str().unwrap_or_default();
    check_wrapped(description, "spec.description", 80, &mut errors);
    check_wrapped(caveats, "spec.caveats", 80, &mut errors);
    check_keys(
        spec,
        "spec",
        &[
            "version",
            "homepage",
            "shortDescription",
            "description",
            "caveats",
            "platforms",
        ],
        &mut errors,
    );

    let plats = platforms(m);
    if plats.is_empty() {
        errors.push("spec.platforms: none".into());
    }
    for (i, p) in plats.iter().enumerate() {
        let at = format!("spec.platforms[{i}]");
        check_keys(
            p,
            &at,
            &["selector", "uri", "sha256", "bin", "files"],
            &mut errors,
        );

        // selector: present, non-empty, only os/arch keys, matching a krew platform
        let sel = &p["selector"];
        check_keys(
            sel,
            &format!("{at}.selector"),
            &["matchLabels", "matchExpressions"],
            &mut errors,
        );
        let labels = sel.get("matchLabels");
        let exprs = sel.get("matchExpressions");
        let labels_empty = labels.is_none_or(|l| l.as_object().is_none_or(|o| o.is_empty()));
        let exprs_empty = exprs.is_none_or(|e| e.as_array().is_none_or(|a| a.is_empty()));
        if !sel.is_object() || (labels_empty && exprs_empty) {
            errors.push(format!("{at}.selector: missing or empty"));
        }
        if labels.is_some_and(|l| !l.is_null()) && labels_empty {
            errors.push(format!("{at}.selector.matchLabels: specified but empty"));
        }
        if exprs.is_some_and(|e| !e.is_null()) && exprs_empty {
            errors.push(format!(
                "{at}.selector.matchExpressions: specified but empty"
            ));
        }
        let mut keys: Vec<String> = labels
            .and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(a) = exprs.and_then(Value::as_array) {
            keys.extend(
                a.iter()
                    .map(|e| e["key"].as_str().unwrap_or_default().to_string()),
            );
        }
        for k in keys.iter().filter(|k| *k != "os" && *k != "arch") {
            errors.push(format!(
                "{at}.selector: key {k:?} not supported (only os, arch)"
            ));
        }
        if !KREW_PLATFORMS
            .iter()
            .any(|(os, arch)| selector_matches(sel, os, arch))
        {
            errors.push(format!("{at}.selector: matches no supported os/arch pair"));
        }

        let uri = p["uri"].as_str().unwrap_or_default();
        if !(uri.ends_with(".tar.gz") || uri.ends_with(".zip")) {
            errors.push(format!(
                "{at}.uri: {uri:?} is not a .tar.gz or .zip archive"
            ));
        }
        let sha = p["sha256"].as_str().unwrap_or_default();
        let sha_ok = sha.len() == 64
            && sha
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !sha_ok {
            errors.push(format!(
                "{at}.sha256: {} is not 64 lowercase hex digits",
                p["sha256"]
            ));
        }
        if p["bin"] != json!(BIN_NAME) {
            errors.push(format!("{at}.bin: {} is not {BIN_NAME:?}", p["bin"]));
        }
        match p.get("files") {
            None | Some(Value::Null) => {}
            Some(Value::Array(ops)) if !ops.is_empty() => {
                for (j, op) in ops.iter().enumerate() {
                    for key in ["from", "to"] {
                        if op[key].as_str().unwrap_or_default().is_empty() {
                            errors.push(format!("{at}.files[{j}].{key}: has to be set"));
                        }
                    }
                }
            }
            Some(_) => errors.push(format!("{at}.files: must be omitted or a non-empty list")),
        }
    }

    // no supported os/arch may be matched by two platform entries
    for (os, arch) in KREW_PLATFORMS {
        let hits: Vec<usize> = plats
            .iter()
            .enumerate()
            .filter(|(_, p)| selector_matches(&p["selector"], os, arch))
            .map(|(i, _)| i)
            .collect();
        if hits.len() > 1 {
            errors.push(format!(
                "spec.platforms{hits:?}: overlapping selectors for {os}/{arch}"
            ));
        }
    }
    errors
}

fn assert_valid(m: &Value, what: &str) {
    let errors = validate_manifest(m, &cargo_version());
    assert!(
        errors.is_empty(),
        "{what} violates krew's rules:\n  {}",
        errors.join("\n  ")
    );
}

// ------------------------------------------------------------------ manifest tests

#[test]
fn committed_krew_manifest_is_valid() {
    let m = load_manifest(&repo_root().join("krew-manifest.yaml"));
    assert_valid(&m, "krew-manifest.yaml");
    // exactly the platforms docs/spec.md §8 asks for, each pointing at its release archive
    let version = cargo_version();
    assert_eq!(
        platforms(&m).len(),
        SHIPPED.len(),
        "platforms: {:?}",
        platforms(&m)
    );
    for (os, arch) in SHIPPED {
        let p = platform_for(&m, os, arch);
        let file = format!("{BIN_NAME}-v{version}-{os}-{arch}.tar.gz");
        let uri = p["uri"].as_str().unwrap();
        assert!(
            uri.ends_with(&format!("/v{version}/{file}")),
            "{os}/{arch}: uri {uri} does not point at release v{version}/{file}"
        );
    }
}

#[test]
fn committed_krew_manifest_matches_template() {
    let rendered = render_template_with_placeholders();
    assert_valid(&rendered, "krew/karpenter.yaml.in (rendered)");
    let mut committed = load_manifest(&repo_root().join("krew-manifest.yaml"));
    // checksums depend on the build; everything else must come from the template
    if let Some(plats) = committed["spec"]["platforms"].as_array_mut() {
        for p in plats {
            p["sha256"] = json!(ZERO_SHA256);
        }
    }
    assert!(
        committed == rendered,
        "krew-manifest.yaml is out of date with krew/karpenter.yaml.in / Cargo.toml; \
         regenerate it with `scripts/release.sh --update-manifest` \
         (or `scripts/release.sh --no-build --update-manifest --out /tmp/krew` for placeholders)\n\
         committed: {committed:#}\nrendered: {rendered:#}"
    );
}

#[test]
fn krew_validator_rejects_broken_manifests() {
    let mut good = render_template_with_placeholders();
    for p in good["spec"]["platforms"].as_array_mut().unwrap() {
        p["sha256"] = json!("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    }
    assert_valid(&good, "baseline");

    // an equivalent matchExpressions selector is accepted
    let mut exprs = good.clone();
    exprs["spec"]["platforms"][0]["selector"] = json!({"matchExpressions": [
        {"key": "os", "operator": "In", "values": ["linux"]},
        {"key": "arch", "operator": "In", "values": ["amd64"]}]});
    assert_valid(&exprs, "matchExpressions variant");

    type Mutation = fn(&mut Value);
    let cases: Vec<(&str, Mutation, &str)> = vec![
        (
            "apiVersion",
            |m| m["apiVersion"] = json!("krew.googlecontainertools.github.com/v1alpha1"),
            "apiVersion",
        ),
        ("kind", |m| m["kind"] = json!("Plugins"), "kind"),
        (
            "unsafe name",
            |m| m["metadata"]["name"] = json!("kar.penter"),
            "metadata.name",
        ),
        (
            "other name",
            |m| m["metadata"]["name"] = json!("karpenter-x"),
            "metadata.name",
        ),
        (
            "version without v",
            |m| m["spec"]["version"] = json!("0.1.0"),
            "spec.version",
        ),
        (
            "two-part version",
            |m| m["spec"]["version"] = json!("v0.1"),
            "spec.version",
        ),
        (
            "stale version",
            |m| m["spec"]["version"] = json!("v99.0.0"),
            "spec.version",
        ),
        (
            "multi-line short",
            |m| m["spec"]["shortDescription"] = json!("Provision\nnodes"),
            "shortDescription",
        ),
        (
            "long short",
            |m| m["spec"]["shortDescription"] = json!("x".repeat(51)),
            "shortDescription",
        ),
        (
            "no short",
            |m| {
                m["spec"]
                    .as_object_mut()
                    .unwrap()
                    .remove("shortDescription");
            },
            "shortDescription",
        ),
        (
            "no description",
            |m| {
                m["spec"].as_object_mut().unwrap().remove("description");
            },
            "spec.description",
        ),
        (
            "command list",
            |m| m["spec"]["description"] = json!("Run kubectl karpenter drift check --watch"),
            "spec.description",
        ),
        (
            "unwrapped description",
            |m| m["spec"]["description"] = json!("word ".repeat(30)),
            "spec.description",
        ),
        (
            "typo field",
            |m| m["spec"]["shortDescripton"] = json!("x"),
            "unknown field",
        ),
        (
            "no platforms",
            |m| m["spec"]["platforms"] = json!([]),
            "spec.platforms",
        ),
        (
            "no selector",
            |m| {
                m["spec"]["platforms"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("selector");
            },
            "selector",
        ),
        (
            "empty matchLabels",
            |m| m["spec"]["platforms"][0]["selector"] = json!({"matchLabels": {}}),
            "selector",
        ),
        (
            "extra selector key",
            |m| m["spec"]["platforms"][0]["selector"]["matchLabels"]["distro"] = json!("alpine"),
            "selector",
        ),
        (
            "unsupported os",
            |m| m["spec"]["platforms"][0]["selector"]["matchLabels"]["os"] = json!("freebsd"),
            "no supported",
        ),
        (
            "duplicate platform",
            |m| {
                let p = m["spec"]["platforms"][0].clone();
                m["spec"]["platforms"].as_array_mut().unwrap().push(p);
            },
            "overlapping",
        ),
        (
            "overlapping expression",
            |m| {
                m["spec"]["platforms"][1]["selector"] = json!({"matchExpressions": [
            {"key": "os", "operator": "In", "values": ["linux"]}]})
            },
            "overlapping",
        ),
        (
            "not an archive",
            |m| m["spec"]["platforms"][0]["uri"] = json!("https://example.com/kubectl-karpenter"),
            "uri",
        ),
        (
            "uppercase sha",
            |m| {
                m["spec"]["platforms"][0]["sha256"] =
                    json!("0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef")
            },
            "sha256",
        ),
        (
            "short sha",
            |m| m["spec"]["platforms"][0]["sha256"] = json!("0".repeat(63)),
            "sha256",
        ),
        (
            "numeric sha",
            |m| m["spec"]["platforms"][0]["sha256"] = json!(0),
            "sha256",
        ),
        (
            "wrong bin",
            |m| m["spec"]["platforms"][0]["bin"] = json!("karpenter"),
            "bin",
        ),
        (
            "empty files",
            |m| m["spec"]["platforms"][0]["files"] = json!([]),
            "files",
        ),
        (
            "files without to",
            |m| m["spec"]["platforms"][0]["files"] = json!([{"from": "*"}]),
            "files[0].to",
        ),
    ];
    for (what, mutate, expect) in cases {
        let mut m = good.clone();
        mutate(&mut m);
        let errors = validate_manifest(&m, &cargo_version());
        assert!(
            errors.iter().any(|e| e.contains(expect)),
            "{what}: expected an error mentioning {expect:?}, got {errors:?}"
        );
    }
}

#[test]
fn krew_semver_rules() {
    for ok in [
        "v0.1.0",
        "v1.2.3",
        "v10.0.0-rc.1",
        "v1.0.0-alpha-1+build.5",
        "v0.0.0",
    ] {
        assert!(is_krew_semver(ok), "{ok} should be accepted");
    }
    for bad in [
        "0.1.0",
        "v0.1",
        "v1.2.3.4",
        "v01.2.3",
        "v1.2.3-",
        "v1.2.3-01",
        "v1.2.3+",
        "vx.y.z",
        "",
    ] {
        assert!(!is_krew_semver(bad), "{bad} should be rejected");
    }
}

// ------------------------------------------------------------------ release script tests

#[test]
fn release_script_packages_binary_and_renders_manifest() {
    let Some((os, arch)) = host_platform() else {
        eprintln!(
            "skipped: {} {} is not a platform we ship",
            std::env::consts::OS,
            std::env::consts::ARCH
        );
        return;
    };
    let out = scratch_dir("release");
    let binary = &small_host_binary(&out);
    run(release_script()
        .arg("--binary")
        .arg(binary)
        .arg("--out")
        .arg(&out));

    let version = cargo_version();
    let archive_name = format!("{BIN_NAME}-v{version}-{os}-{arch}.tar.gz");
    let archive = out.join(&archive_name);
    assert!(archive.is_file(), "{} was not created", archive.display());

    // exactly the binary and LICENSE, at the archive root
    let listing = run(Command::new("tar").arg("-tzf").arg(&archive)).stdout;
    let mut entries: Vec<String> = String::from_utf8_lossy(&listing)
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .filter(|l| !l.is_empty())
        .collect();
    entries.sort();
    assert_eq!(entries, ["LICENSE", BIN_NAME], "archive entries");

    // the binary is executable and both files are the originals
    let verbose = run(Command::new("tar").arg("-tvzf").arg(&archive)).stdout;
    let verbose = String::from_utf8_lossy(&verbose);
    let bin_line = verbose
        .lines()
        .find(|l| l.ends_with(BIN_NAME))
        .expect("binary in listing");
    assert!(
        bin_line.starts_with("-rwx"),
        "binary is not executable in the archive: {bin_line}"
    );
    let unpacked = out.join("unpacked");
    fs::create_dir_all(&unpacked).unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked));
    assert!(
        fs::read(unpacked.join("LICENSE")).unwrap()
            == fs::read(repo_root().join("LICENSE")).unwrap(),
        "LICENSE in the archive differs from the repository's"
    );
    assert!(
        fs::read(unpacked.join(BIN_NAME)).unwrap() == fs::read(binary).unwrap(),
        "binary in the archive differs from {}",
        binary.display()
    );

    // the rendered manifest is valid and carries the archive's real checksum
    let m = load_manifest(&out.join("krew-manifest.yaml"));
    assert_valid(&m, "rendered krew-manifest.yaml");
    let host = platform_for(&m, os, arch);
    assert_eq!(
        host["sha256"].as_str().unwrap(),
        sha256_file(&archive),
        "sha256 of {archive_name}"
    );
    assert!(
        host["uri"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/{archive_name}")),
        "uri: {}",
        host["uri"]
    );
    for (o, a) in SHIPPED.iter().filter(|(o, a)| (*o, *a) != (os, arch)) {
        assert_eq!(
            platform_for(&m, o, a)["sha256"],
            json!(ZERO_SHA256),
            "{o}/{a} was not built in this run and must carry the placeholder"
        );
    }
    let sums = read(&out.join("SHA256SUMS"));
    assert!(
        sums.contains(&format!("{}  {archive_name}", sha256_file(&archive))),
        "SHA256SUMS: {sums}"
    );

    let _ = fs::remove_dir_all(&out);
}

#[test]
fn release_script_refuses_incomplete_or_mismatched_inputs() {
    if host_platform().is_none() {
        eprintln!("skipped: not a platform we ship");
        return;
    }
    let binary = env!("CARGO_BIN_EXE_kubectl-karpenter");
    let out = scratch_dir("release-refuse");
    let attempts: Vec<Vec<String>> = vec![
        // a publishable manifest needs all four platforms
        vec!["--require-all".into(), "--binary".into(), binary.into()],
        // two inputs for the same platform
        vec![
            "--binary".into(),
            binary.into(),
            "--binary".into(),
            binary.into(),
        ],
        // not a krew platform we ship
        vec!["--binary".into(), format!("freebsd/amd64={binary}")],
        // archive of another version
        vec![
            "--archive".into(),
            out.join(format!("{BIN_NAME}-v0.0.0-test-linux-amd64.tar.gz"))
                .display()
                .to_string(),
        ],
    ];
    fs::write(
        out.join(format!("{BIN_NAME}-v0.0.0-test-linux-amd64.tar.gz")),
        b"not really",
    )
    .unwrap();
    for args in attempts {
        let res = release_script()
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!res.status.success(), "release.sh {args:?} should fail");
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(
            stderr.contains("release.sh: error:"),
            "release.sh {args:?}: unclear error: {stderr}"
        );
        assert!(
            !out.join("krew-manifest.yaml").exists(),
            "release.sh {args:?} wrote a manifest"
        );
        let archives: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tar.gz") && !n.contains("v0.0.0-test"))
            .collect();
        assert!(
            archives.is_empty(),
            "release.sh {args:?} left archives behind: {archives:?}"
        );
    }
    let _ = fs::remove_dir_all(&out);
}
