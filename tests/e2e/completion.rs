//! Shell completion: `completion SHELL` scripts (the committed `completions/` files must be what
//! the binary prints now), the hidden `__complete` (Cobra's protocol, which kubectl >= 1.26 speaks
//! to plugins), the `completions/kubectl_complete-karpenter` helper run as kubectl runs it, and
//! kubectl itself completing `kubectl karpenter ...` through that helper.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{karpenter, root, Run};

const SHELLS: [(&str, &str); 4] = [
    ("bash", "bash"),
    ("zsh", "zsh"),
    ("fish", "fish"),
    ("powershell", "ps1"),
];
const HELPER: &str = "completions/kubectl_complete-karpenter";

/// Candidates and the directive line of a Cobra-style completion answer.
fn parse(run: &Run) -> (Vec<String>, String) {
    assert_eq!(
        run.code, 0,
        "completion must exit 0\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let mut lines: Vec<String> = run.stdout.lines().map(str::to_string).collect();
    let directive = lines.pop().unwrap_or_default();
    assert!(
        directive.starts_with(':'),
        "last line must be :<directive>, got {:?}",
        run.stdout
    );
    (lines, directive)
}

/// `kubectl-karpenter __complete WORDS...`. Words that start with a flag need the `--` that
/// the helper script always passes (clap would read them as kubectl-karpenter's own flags).
fn complete(words: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["__complete"];
    args.extend_from_slice(words);
    let run = karpenter(&args, b"");
    assert!(
        run.stderr.is_empty(),
        "__complete wrote to stderr: {}",
        run.stderr
    );
    parse(&run)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kubectl-karpenter"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// PATH with the built binary's directory (and the helper's, if given) first.
fn path_with(dirs: &[&Path]) -> String {
    let mut parts: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    parts.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(parts).unwrap().into_string().unwrap()
}

fn run_command(cmd: &mut Command) -> Run {
    let out = cmd
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ------------------------------------------------------------------ __complete

#[test]
fn complete_first_word_lists_commands() {
    let (c, d) = complete(&[""]);
    for name in ["provision", "convert", "version", "completion"] {
        assert!(c.contains(&name.to_string()), "{name} missing: {c:?}");
    }
    assert!(
        !c.iter().any(|n| n.starts_with("__")),
        "hidden __complete offered: {c:?}"
    );
    assert_eq!(d, ":4");
}

#[test]
fn complete_partial_command() {
    assert_eq!(complete(&["prov"]), (strings(&["provision"]), ":4".into()));
    assert_eq!(
        complete(&["--", "--context", "prod", "-o", "json", "ver"]),
        (strings(&["version"]), ":4".into())
    );
}

#[test]
fn complete_long_flags() {
    assert_eq!(
        complete(&["provision", "--dr"]),
        (strings(&["--dry-run"]), ":4".into())
    );
    let (c, d) = complete(&["provision", "--"]);
    assert_eq!(d, ":4");
    for flag in [
        "--filename",
        "--nodepool",
        "--catalog",
        "--kubeconfig",
        "--output",
        "--color",
    ] {
        assert!(c.contains(&flag.to_string()), "{flag} missing: {c:?}");
    }
}

#[test]
fn complete_output_formats_and_colors() {
    let formats = strings(&["table", "wide", "json", "yaml", "name"]);
    assert_eq!(
        complete(&["provision", "-o", ""]),
        (formats.clone(), ":4".into())
    );
    assert_eq!(
        complete(&["provision", "--output", ""]),
        (formats, ":4".into())
    );
    assert_eq!(
        complete(&["version", "--color", ""]),
        (strings(&["auto", "always", "never"]), ":4".into())
    );
}

#[test]
fn complete_file_arguments_let_the_shell_complete_files() {
    assert_eq!(complete(&["provision", "-f", ""]), (vec![], ":0".into()));
    assert_eq!(
        complete(&["provision", "--catalog", ""]),
        (vec![], ":0".into())
    );
    assert_eq!(complete(&["--", "--kubeconfig", ""]), (vec![], ":0".into()));
}

#[test]
fn complete_shells_after_completion() {
    assert_eq!(
        complete(&["completion", ""]),
        (strings(&["bash", "zsh", "fish", "powershell"]), ":4".into())
    );
}

#[test]
fn complete_nodepools_offline_offers_nothing_and_no_files() {
    assert_eq!(
        complete(&["provision", "--nodepool", ""]),
        (vec![], ":4".into())
    );
}

#[test]
fn complete_never_fails_on_odd_input() {
    for words in [
        &[][..],
        &["no-such-command", "--what", ""],
        &["provision", "--no-such-flag", "x", "-"],
        &["--", "--", "--", ""],
        &["--", "-o"],
        &["--", "--help"],
        &["provision", "-f", "\u{fffd}", "-zzz", ""],
    ] {
        let (_, d) = complete(words);
        assert!(d == ":4" || d == ":0", "{words:?}: {d}");
    }
}

// ------------------------------------------------------------------ completion SHELL

#[test]
fn completion_scripts_are_fresh() {
    for (shell, ext) in SHELLS {
        let run = karpenter(&["completion", shell], b"");
        assert_eq!(run.code, 0, "completion {shell}: {}", run.stderr);
        assert!(
            run.stdout.contains("kubectl-karpenter"),
            "{shell} script does not name the binary"
        );
        assert!(
            !run.stdout.contains("__complete"),
            "{shell} script offers the hidden __complete"
        );
        assert!(
            !run.stdout.contains("kubectl karpenter"),
            "{shell} script names `kubectl karpenter`"
        );
        let path = root().join(format!("completions/kubectl-karpenter.{ext}"));
        let committed =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            committed == run.stdout,
            "{} is stale: run scripts/gen_completions.sh",
            path.display()
        );
    }
}

#[test]
fn completion_rejects_unknown_shell() {
    let run = karpenter(&["completion", "tcsh"], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn completion_bash_script_loads_and_completes() {
    // The generated bash script, sourced into a real bash, completes the binary's subcommands.
    let script = root().join("completions/kubectl-karpenter.bash");
    let text = std::fs::read_to_string(&script).unwrap();
    let function = text
        .split_whitespace()
        .skip_while(|w| *w != "-F")
        .nth(1)
        .expect("the script registers a function with complete -F");
    // Words without spaces or quotes, the last one non-empty.
    let probe = |line: &[&str]| {
        let words = line.join(" ");
        let cword = line.len() - 1;
        let (cur, prev) = (line[cword], line[cword - 1]);
        format!(
            "source '{}' && COMP_WORDS=({words}) && COMP_CWORD={cword} \
             && COMP_LINE='{words}' && COMP_POINT=${{#COMP_LINE}} && {function} kubectl-karpenter '{cur}' '{prev}' \
             && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        )
    };
    let bash = |line: &[&str]| {
        let run = run_command(
            Command::new("bash")
                .arg("--noprofile")
                .arg("--norc")
                .arg("-c")
                .arg(probe(line)),
        );
        assert_eq!(run.code, 0, "{line:?}: {}", run.stderr);
        run.stdout
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bash(&["kubectl-karpenter", "prov"]),
        strings(&["provision"])
    );
    assert_eq!(
        bash(&["kubectl-karpenter", "provision", "--dr"]),
        strings(&["--dry-run"])
    );
    assert_eq!(
        bash(&["kubectl-karpenter", "provision", "-o", "y"]),
        strings(&["yaml"])
    );
    assert_eq!(
        bash(&["kubectl-karpenter", "completion", "f"]),
        strings(&["fish"])
    );
    assert!(bash(&["kubectl-karpenter", "__"]).is_empty());
}

// ------------------------------------------------------------------ kubectl_complete-karpenter

#[cfg(unix)]
#[test]
fn helper_is_an_executable_posix_script() {
    use std::os::unix::fs::PermissionsExt;
    let path = root().join(HELPER);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o111,
        0o111,
        "{HELPER} must be executable (mode {mode:o})"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("#!/bin/sh\n"),
        "{HELPER} must be a POSIX sh script"
    );
    assert!(
        text.contains("exec kubectl-karpenter __complete -- \"$@\""),
        "{text}"
    );
}

/// The helper run exactly as kubectl runs it: found on PATH, words after `karpenter` as arguments.
#[test]
fn helper_speaks_the_protocol_through_the_binary_on_path() {
    let helper = root().join(HELPER);
    let path = path_with(&[&bin_dir()]);
    let run = |words: &[&str]| {
        parse(&run_command(
            Command::new(&helper).args(words).env("PATH", &path),
        ))
    };
    assert_eq!(run(&["prov"]), (strings(&["provision"]), ":4".into()));
    assert_eq!(
        run(&["provision", "--dr"]),
        (strings(&["--dry-run"]), ":4".into())
    );
    assert_eq!(
        run(&["provision", "-o", ""]).0,
        strings(&["table", "wide", "json", "yaml", "name"])
    );
    assert_eq!(run(&["provision", "-f", ""]), (vec![], ":0".into()));
    // Flags first: `kubectl karpenter -o <TAB>`, `kubectl karpenter --kubeconfig <TAB>`.
    assert_eq!(run(&["-o", "y"]), (strings(&["yaml"]), ":4".into()));
    assert_eq!(run(&["--kubeconfig", ""]), (vec![], ":0".into()));
    assert_eq!(
        run(&["--context", "prod", "prov"]),
        (strings(&["provision"]), ":4".into())
    );
    assert_eq!(run(&["--help"]), (strings(&["--help"]), ":4".into()));
    // Also under a plain POSIX sh (dash on Debian), not just through the shebang.
    let sh = parse(&run_command(
        Command::new("sh").arg(&helper).arg("").env("PATH", &path),
    ));
    assert!(sh.0.contains(&"completion".to_string()), "{sh:?}");
}

/// kubectl itself (the real peer): `kubectl __complete karpenter ...` finds the plugin and
/// `kubectl_complete-karpenter` on PATH and relays our candidates and directive.
#[test]
fn kubectl_completes_plugin_arguments_through_the_helper() {
    let kubectl = std::env::var_os("KUBECTL")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|d| d.join("kubectl"))
                .find(|p| p.is_file())
        })
        .expect(
            "kubectl (>= 1.26) is needed for this test: install it or set KUBECTL=/path/to/kubectl",
        );
    let helper_dir = root().join("completions");
    let path = path_with(&[&bin_dir(), &helper_dir]);
    let kubeconfig = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e/no-kubeconfig");
    let kubectl_complete = |words: &[&str]| {
        let run = run_command(
            Command::new(&kubectl)
                .arg("__complete")
                .arg("karpenter")
                .args(words)
                .env("PATH", &path)
                .env("KUBECONFIG", &kubeconfig),
        );
        parse(&run)
    };
    // kubectl lists the plugin itself...
    let plugin = parse(&run_command(
        Command::new(&kubectl)
            .args(["__complete", "karpent"])
            .env("PATH", &path)
            .env("KUBECONFIG", &kubeconfig),
    ));
    assert!(
        plugin
            .0
            .iter()
            .any(|c| c.split('\t').next() == Some("karpenter")),
        "{plugin:?}"
    );
    // ...and hands its arguments to us.
    let (c, d) = kubectl_complete(&[""]);
    for name in ["provision", "convert", "version", "completion"] {
        assert!(c.contains(&name.to_string()), "{name} missing: {c:?}");
    }
    assert_eq!(d, ":4");
    assert_eq!(
        kubectl_complete(&["prov"]),
        (strings(&["provision"]), ":4".into())
    );
    assert_eq!(
        kubectl_complete(&["provision", "--dr"]),
        (strings(&["--dry-run"]), ":4".into())
    );
    assert_eq!(
        kubectl_complete(&["provision", "-o", ""]),
        (
            strings(&["table", "wide", "json", "yaml", "name"]),
            ":4".into()
        )
    );
    assert_eq!(
        kubectl_complete(&["provision", "-f", ""]),
        (vec![], ":0".into())
    );
    assert_eq!(
        kubectl_complete(&["--context", "x", "-o", "j"]),
        (strings(&["json"]), ":4".into())
    );
    assert_eq!(
        kubectl_complete(&["completion", ""]),
        (strings(&["bash", "zsh", "fish", "powershell"]), ":4".into())
    );
}
