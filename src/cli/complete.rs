//! Completion candidates for kubectl's plugin-completion protocol (Cobra's `__complete`).
//!
//! kubectl (>= 1.26) runs `kubectl_complete-karpenter WORDS...` with the words typed after
//! `kubectl karpenter`, the last one being the partial word (possibly empty), and expects one
//! candidate per line followed by `:<directive>`. This module computes the candidates from the
//! clap [`Command`] tree alone (subcommands, flags, enum values), plus cluster-backed names
//! (NodePools, nodes, NodeClasses) through the [`DynamicValues`] hook. Pure: no I/O here.

use std::collections::BTreeMap;

use clap::{Arg, ArgAction, Command, ValueHint};

/// Cobra's `ShellCompDirectiveDefault`: let the shell complete file names.
pub const DIRECTIVE_DEFAULT: u32 = 0;
/// Cobra's `ShellCompDirectiveNoFileComp`: offer only the candidates given.
pub const DIRECTIVE_NO_FILE_COMP: u32 = 4;

/// Flag values typed so far (by clap argument id, e.g. `kubeconfig`, `context`, `namespace`),
/// so a cluster-backed [`DynamicValues`] can talk to the cluster the user is pointing at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedFlags {
    values: BTreeMap<String, Vec<String>>,
}

impl TypedFlags {
    /// The last value given for the argument `id` (e.g. `"context"`).
    pub fn get(&self, id: &str) -> Option<&str> {
        self.values
            .get(id)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value given for the argument `id`, including positionals (e.g. `"nodes"`).
    pub fn all(&self, id: &str) -> &[String] {
        self.values.get(id).map(Vec::as_slice).unwrap_or(&[])
    }

    fn push(&mut self, id: &str, value: &str) {
        self.values
            .entry(id.to_string())
            .or_default()
            .push(value.to_string());
    }
}

/// Names that only the cluster knows. Implementations must be quick and quiet: on any error
/// (no kubeconfig, unreachable API server, timeout) return nothing — completion never fails.
pub trait DynamicValues {
    /// NodePool names (for `--nodepool`).
    fn nodepools(&self, flags: &TypedFlags) -> Vec<String>;
    /// Node names (for `NODE` arguments and `--node`).
    fn nodes(&self, flags: &TypedFlags) -> Vec<String>;
    /// EC2NodeClass names (for `NODECLASS` arguments).
    fn nodeclasses(&self, _flags: &TypedFlags) -> Vec<String> {
        Vec::new()
    }
}

/// The [`DynamicValues`] to use while there is no cluster adapter: knows no names.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCluster;

impl DynamicValues for NoCluster {
    fn nodepools(&self, _: &TypedFlags) -> Vec<String> {
        Vec::new()
    }
    fn nodes(&self, _: &TypedFlags) -> Vec<String> {
        Vec::new()
    }
}

/// Which cluster-backed names an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dynamic {
    NodePool,
    Node,
    NodeClass,
}

fn dynamic_kind(arg: &Arg) -> Option<Dynamic> {
    let value_name = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|s| s.as_str().to_ascii_uppercase());
    let long = arg.get_long().unwrap_or_default();
    let id = arg.get_id().as_str();
    if long == "nodepool"
        || value_name.as_deref() == Some("NODEPOOL")
        || matches!(id, "nodepool" | "nodepools")
    {
        Some(Dynamic::NodePool)
    } else if long == "node"
        || value_name.as_deref() == Some("NODE")
        || matches!(id, "node" | "nodes")
    {
        Some(Dynamic::Node)
    } else if long == "nodeclass"
        || value_name.as_deref() == Some("NODECLASS")
        || matches!(id, "nodeclass" | "nodeclasses")
    {
        Some(Dynamic::NodeClass)
    } else {
        None
    }
}

/// Whether the shell should complete file names for this argument's value.
fn is_path(arg: &Arg) -> bool {
    if matches!(
        arg.get_value_hint(),
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath | ValueHint::ExecutablePath
    ) {
        return true;
    }
    let value_name = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|s| s.as_str().to_ascii_uppercase());
    matches!(
        value_name.as_deref(),
        Some("PATH" | "FILE" | "DIR" | "FILENAME")
    )
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// Flags that make no sense twice (offering them again is noise).
fn single_use(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Set | ArgAction::SetTrue | ArgAction::SetFalse
    )
}

fn find_long<'a>(cmd: &'a Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name)
            || a.get_all_aliases()
                .is_some_and(|aliases| aliases.contains(&name))
    })
}

fn find_short(cmd: &Command, c: char) -> Option<&Arg> {
    cmd.get_arguments().find(|a| {
        a.get_short() == Some(c)
            || a.get_all_short_aliases()
                .is_some_and(|aliases| aliases.contains(&c))
    })
}

fn find_subcommand<'a>(cmd: &'a Command, name: &str) -> Option<&'a Command> {
    cmd.get_subcommands()
        .find(|s| s.get_name() == name || s.get_all_aliases().any(|a| a == name))
}

/// The positional argument that the `n`-th positional word (0-based) of `cmd` fills.
fn positional(cmd: &Command, n: usize) -> Option<&Arg> {
    let mut positionals: Vec<&Arg> = cmd.get_arguments().filter(|a| a.is_positional()).collect();
    positionals.sort_by_key(|a| a.get_index().unwrap_or(usize::MAX));
    // A multi-valued positional takes every word from its slot on.
    for (slot, arg) in positionals.into_iter().enumerate() {
        let multiple = matches!(arg.get_action(), ArgAction::Append)
            || arg.get_num_args().is_some_and(|r| r.max_values() > 1);
        if multiple || n == slot {
            return Some(arg);
        }
    }
    None
}

/// What the words before the partial one say: where we are and what is expected next.
struct Position<'a> {
    /// The (sub)command the partial word belongs to.
    cmd: &'a Command,
    /// The flag whose value the partial word is, if any.
    pending: Option<&'a Arg>,
    /// Positional words already given to `cmd`.
    positionals: usize,
    /// After `--`: everything is positional.
    only_positionals: bool,
    /// Flags (by id) already given.
    used: Vec<String>,
    /// Flag and positional values typed so far.
    flags: TypedFlags,
}

fn walk<'a>(root: &'a Command, words: &[String]) -> Position<'a> {
    let mut pos = Position {
        cmd: root,
        pending: None,
        positionals: 0,
        only_positionals: false,
        used: Vec::new(),
        flags: TypedFlags::default(),
    };
    for word in words {
        if let Some(arg) = pos.pending.take() {
            pos.flags.push(arg.get_id().as_str(), word);
            continue;
        }
        if !pos.only_positionals && word == "--" {
            pos.only_positionals = true;
            continue;
        }
        if !pos.only_positionals && word.starts_with("--") {
            let (name, value) = match word[2..].split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (&word[2..], None),
            };
            if let Some(arg) = find_long(pos.cmd, name) {
                pos.used.push(arg.get_id().to_string());
                match value {
                    Some(v) => pos.flags.push(arg.get_id().as_str(), v),
                    None if takes_value(arg) => pos.pending = Some(arg),
                    None => {}
                }
            }
            continue;
        }
        if !pos.only_positionals && word.starts_with('-') && word.len() > 1 {
            // A cluster of short flags (`-vq`), possibly ending in one with a value (`-ojson`, `-o`).
            for (i, c) in word.char_indices().skip(1) {
                let Some(arg) = find_short(pos.cmd, c) else {
                    break;
                };
                pos.used.push(arg.get_id().to_string());
                if takes_value(arg) {
                    let rest = &word[i + c.len_utf8()..];
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    if rest.is_empty() {
                        pos.pending = Some(arg);
                    } else {
                        pos.flags.push(arg.get_id().as_str(), rest);
                    }
                    break;
                }
            }
            continue;
        }
        if pos.positionals == 0 && !pos.only_positionals {
            if let Some(sub) = find_subcommand(pos.cmd, word) {
                pos.cmd = sub;
                continue;
            }
        }
        if let Some(arg) = positional(pos.cmd, pos.positionals) {
            pos.flags.push(arg.get_id().as_str(), word);
        }
        pos.positionals += 1;
    }
    pos
}

/// Candidate values for `arg`, each prefixed with `prefix` (for `--flag=` and `-oVALUE` forms),
/// keeping those that start with `partial`; and the directive.
fn values(
    arg: &Arg,
    partial: &str,
    prefix: &str,
    pos: &Position<'_>,
    dynamic: &dyn DynamicValues,
) -> (Vec<String>, u32) {
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    let names = if !possible.is_empty() {
        possible
    } else if let Some(kind) = dynamic_kind(arg) {
        let names = match kind {
            Dynamic::NodePool => dynamic.nodepools(&pos.flags),
            Dynamic::Node => dynamic.nodes(&pos.flags),
            Dynamic::NodeClass => dynamic.nodeclasses(&pos.flags),
        };
        // Names already given for this argument are not offered again.
        let given = pos.flags.all(arg.get_id().as_str());
        names.into_iter().filter(|n| !given.contains(n)).collect()
    } else if is_path(arg) {
        return (Vec::new(), DIRECTIVE_DEFAULT);
    } else {
        Vec::new()
    };
    let candidates = names
        .into_iter()
        .map(|n| format!("{prefix}{n}"))
        .filter(|c| c.starts_with(partial))
        .collect();
    (candidates, DIRECTIVE_NO_FILE_COMP)
}

/// The long flags of `cmd` (its own and the global ones) that start with `partial`.
fn long_flags(pos: &Position<'_>, partial: &str) -> Vec<String> {
    let mut flags: Vec<String> = pos
        .cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .filter(|a| !(single_use(a) && pos.used.iter().any(|u| u == a.get_id().as_str())))
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .filter(|f| f.starts_with(partial))
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

/// Completion candidates for `words` (the words after `kubectl karpenter`; the last one is the
/// partial word, possibly empty) over the command tree `cmd`, and Cobra's directive:
/// [`DIRECTIVE_NO_FILE_COMP`] when offering subcommands, flags or values, [`DIRECTIVE_DEFAULT`]
/// when a file name is expected (`-f`, `--catalog`, `--kubeconfig`…) so the shell completes files.
pub fn candidates(
    cmd: &Command,
    words: &[String],
    dynamic: &dyn DynamicValues,
) -> (Vec<String>, u32) {
    // Global flags are copied into every subcommand (and `help` gets its subtree) by `build`.
    let mut root = cmd.clone();
    root.build();
    let (partial, before) = match words.split_last() {
        Some((partial, before)) => (partial.as_str(), before),
        None => ("", words),
    };
    let pos = walk(&root, before);

    if let Some(arg) = pos.pending {
        return values(arg, partial, "", &pos, dynamic);
    }
    if !pos.only_positionals && partial.starts_with("--") {
        if let Some((name, _)) = partial[2..].split_once('=') {
            return match find_long(pos.cmd, name) {
                Some(arg) if takes_value(arg) => {
                    values(arg, partial, &format!("--{name}="), &pos, dynamic)
                }
                _ => (Vec::new(), DIRECTIVE_NO_FILE_COMP),
            };
        }
    }
    if !pos.only_positionals && partial.starts_with('-') {
        // `-oj`: the value of a short flag, written attached.
        let mut chars = partial.chars().skip(1);
        if let (Some(c), Some(_)) = (chars.next(), chars.next()) {
            if c != '-' {
                if let Some(arg) = find_short(pos.cmd, c).filter(|a| takes_value(a)) {
                    return values(arg, partial, &format!("-{c}"), &pos, dynamic);
                }
            }
        }
        return (long_flags(&pos, partial), DIRECTIVE_NO_FILE_COMP);
    }

    let subcommands: Vec<&Command> = pos
        .cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .collect();
    if !subcommands.is_empty() && pos.positionals == 0 && !pos.only_positionals {
        let names = subcommands
            .iter()
            .map(|s| s.get_name().to_string())
            .filter(|n| n.starts_with(partial))
            .collect();
        return (names, DIRECTIVE_NO_FILE_COMP);
    }
    match positional(pos.cmd, pos.positionals) {
        Some(arg) if !arg.is_hide_set() => values(arg, partial, "", &pos, dynamic),
        Some(_) => (Vec::new(), DIRECTIVE_NO_FILE_COMP),
        // No argument goes here: the flags are what can come next.
        None if partial.is_empty() && !pos.only_positionals => {
            (long_flags(&pos, ""), DIRECTIVE_NO_FILE_COMP)
        }
        None => (Vec::new(), DIRECTIVE_NO_FILE_COMP),
    }
}

/// The `__complete` output: one candidate per line, then `:<directive>`.
pub fn render(candidates: &[String], directive: u32) -> String {
    let mut out = String::new();
    for c in candidates {
        out.push_str(c);
        out.push('\n');
    }
    out.push_str(&format!(":{directive}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    struct Fake;

    impl DynamicValues for Fake {
        fn nodepools(&self, flags: &TypedFlags) -> Vec<String> {
            match flags.get("context") {
                Some("staging") => vec!["staging-pool".into()],
                _ => vec!["default".into(), "gpu".into(), "spot".into()],
            }
        }
        fn nodes(&self, _: &TypedFlags) -> Vec<String> {
            vec![
                "ip-10-0-1-5.ec2.internal".into(),
                "ip-10-0-2-7.ec2.internal".into(),
            ]
        }
        fn nodeclasses(&self, _: &TypedFlags) -> Vec<String> {
            vec!["default".into()]
        }
    }

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn complete(line: &[&str]) -> (Vec<String>, u32) {
        candidates(&Cli::command(), &words(line), &Fake)
    }

    /// A tree with the shapes the drift commands will have: a nested group and NODE positionals.
    fn drift_tree() -> Command {
        Command::new("kubectl karpenter")
            .arg(Arg::new("context").long("context").global(true))
            .subcommand(
                Command::new("drift").subcommand(
                    Command::new("replace")
                        .arg(Arg::new("nodes").value_name("NODE").num_args(0..))
                        .arg(
                            Arg::new("nodepools")
                                .long("nodepool")
                                .value_name("NAME")
                                .action(ArgAction::Append),
                        )
                        .arg(
                            Arg::new("dry_run")
                                .long("dry-run")
                                .action(ArgAction::SetTrue),
                        ),
                ),
            )
            .subcommand(
                Command::new("ami")
                    .arg(
                        Arg::new("nodeclasses")
                            .value_name("NODECLASS")
                            .num_args(0..),
                    )
                    .arg(
                        Arg::new("filenames")
                            .short('f')
                            .long("filename")
                            .value_name("PATH"),
                    ),
            )
    }

    #[test]
    fn first_word_offers_visible_subcommands() {
        let (c, d) = complete(&[""]);
        for name in ["provision", "convert", "version", "completion"] {
            assert!(c.contains(&name.to_string()), "{name} missing from {c:?}");
        }
        assert!(
            !c.iter().any(|n| n.starts_with("__")),
            "hidden command offered: {c:?}"
        );
        assert_eq!(d, DIRECTIVE_NO_FILE_COMP);
        assert_eq!(complete(&[]), complete(&[""]));
    }

    #[test]
    fn partial_subcommand_is_filtered() {
        assert_eq!(complete(&["prov"]), (words(&["provision"]), 4));
        assert_eq!(
            complete(&["c"]),
            (words(&["convert", "consolidate", "completion"]), 4)
        );
        assert_eq!(complete(&["zzz"]), (vec![], 4));
    }

    #[test]
    fn subcommands_after_global_flags() {
        assert_eq!(
            complete(&["--context", "prod", "-o", "json", "-vq", "prov"]),
            (words(&["provision"]), 4)
        );
        assert_eq!(
            complete(&["--output=json", "--no-headers", "conv"]),
            (words(&["convert"]), 4)
        );
    }

    #[test]
    fn long_flags_of_the_subcommand_and_globals() {
        assert_eq!(complete(&["provision", "--dr"]), (words(&["--dry-run"]), 4));
        let (all, d) = complete(&["provision", "-"]);
        assert_eq!(d, 4);
        for flag in [
            "--filename",
            "--nodepool",
            "--catalog",
            "--kubeconfig",
            "--context",
            "--output",
            "--color",
            "--help",
        ] {
            assert!(
                all.contains(&flag.to_string()),
                "{flag} missing from {all:?}"
            );
        }
        assert!(all.iter().all(|f| f.starts_with("--")), "{all:?}");
        assert_eq!(
            complete(&["provision", "--k"]),
            (words(&["--kubeconfig", "--kubernetes-version"]), 4)
        );
        // `convert` has --to, provision has --timeout instead.
        assert_eq!(complete(&["convert", "--t"]), (words(&["--to"]), 4));
        assert_eq!(complete(&["provision", "--t"]), (words(&["--timeout"]), 4));
    }

    #[test]
    fn single_use_flags_are_not_offered_twice() {
        let (c, _) = complete(&["provision", "--dry-run", "-f", "a.yaml", "--"]);
        assert!(!c.contains(&"--dry-run".to_string()), "{c:?}");
        assert!(
            c.contains(&"--filename".to_string()),
            "repeatable flag stays: {c:?}"
        );
    }

    #[test]
    fn output_and_color_values() {
        let formats = words(&["table", "wide", "json", "yaml", "name"]);
        assert_eq!(complete(&["provision", "-o", ""]), (formats.clone(), 4));
        assert_eq!(
            complete(&["provision", "--output", ""]),
            (formats.clone(), 4)
        );
        assert_eq!(complete(&["-o", ""]), (formats, 4));
        assert_eq!(complete(&["provision", "-o", "y"]), (words(&["yaml"]), 4));
        assert_eq!(
            complete(&["provision", "--output=j"]),
            (words(&["--output=json"]), 4)
        );
        assert_eq!(complete(&["provision", "-ow"]), (words(&["-owide"]), 4));
        assert_eq!(
            complete(&["version", "--color", ""]),
            (words(&["auto", "always", "never"]), 4)
        );
        assert_eq!(complete(&["convert", "--to", ""]), (words(&["v1"]), 4));
        for command in [
            &["provision"][..],
            &["consolidate"],
            &["nodes"],
            &["drift", "replace"],
        ] {
            let line = [command, &["--min-values-policy", ""]].concat();
            assert_eq!(
                complete(&line),
                (words(&["Strict", "BestEffort"]), 4),
                "{command:?}"
            );
            let line = [command, &["--preference-policy", ""]].concat();
            assert_eq!(
                complete(&line),
                (words(&["Respect", "Ignore"]), 4),
                "{command:?}"
            );
        }
    }

    #[test]
    fn file_valued_flags_ask_the_shell_for_files() {
        for line in [
            &["provision", "-f", ""][..],
            &["provision", "--filename", "exa"],
            &["provision", "--catalog", ""],
            &["convert", "-f", ""],
            &["--kubeconfig", ""],
            &["provision", "--dry-run", "--kubeconfig", "~/.k"],
        ] {
            assert_eq!(complete(line), (vec![], DIRECTIVE_DEFAULT), "{line:?}");
        }
    }

    #[test]
    fn free_text_values_offer_nothing_and_no_files() {
        assert_eq!(complete(&["provision", "--context", ""]), (vec![], 4));
        assert_eq!(
            complete(&["provision", "--max-instance-types", ""]),
            (vec![], 4)
        );
    }

    #[test]
    fn shells_after_completion() {
        assert_eq!(
            complete(&["completion", ""]),
            (words(&["bash", "zsh", "fish", "powershell"]), 4)
        );
        assert_eq!(complete(&["completion", "p"]), (words(&["powershell"]), 4));
        // One shell only: after it, only flags can follow.
        let (after, _) = complete(&["completion", "zsh", ""]);
        assert!(after.iter().all(|c| c.starts_with("--")), "{after:?}");
        assert_eq!(complete(&["completion", "zsh", "b"]), (vec![], 4));
    }

    #[test]
    fn leaf_without_positionals_offers_its_flags() {
        let (c, d) = complete(&["provision", ""]);
        assert_eq!(d, 4);
        assert!(c.contains(&"--dry-run".to_string()), "{c:?}");
        assert_eq!(complete(&["provision", "x"]), (vec![], 4));
    }

    #[test]
    fn nodepools_come_from_the_cluster_hook() {
        assert_eq!(
            complete(&["provision", "--nodepool", ""]),
            (words(&["default", "gpu", "spot"]), 4)
        );
        assert_eq!(
            complete(&["provision", "--nodepool", "g"]),
            (words(&["gpu"]), 4)
        );
        assert_eq!(
            complete(&["provision", "--nodepool=s"]),
            (words(&["--nodepool=spot"]), 4)
        );
        // Already chosen pools are not offered again.
        assert_eq!(
            complete(&["provision", "--nodepool", "gpu", "--nodepool", ""]),
            (words(&["default", "spot"]), 4)
        );
        // The hook sees the flags typed so far (e.g. which context to ask).
        assert_eq!(
            complete(&["--context", "staging", "provision", "--nodepool", ""]),
            (words(&["staging-pool"]), 4)
        );
        // Offline: nothing, and no file names either.
        let none = candidates(
            &Cli::command(),
            &words(&["provision", "--nodepool", ""]),
            &NoCluster,
        );
        assert_eq!(none, (vec![], 4));
    }

    #[test]
    fn node_positionals_and_nested_groups() {
        let tree = drift_tree();
        let run = |line: &[&str]| candidates(&tree, &words(line), &Fake);
        assert_eq!(run(&["dr"]), (words(&["drift"]), 4));
        assert_eq!(run(&["drift", ""]).0, words(&["replace", "help"]));
        assert_eq!(
            run(&["drift", "replace", ""]),
            (
                words(&["ip-10-0-1-5.ec2.internal", "ip-10-0-2-7.ec2.internal"]),
                4
            )
        );
        assert_eq!(
            run(&[
                "drift",
                "replace",
                "ip-10-0-1-5.ec2.internal",
                "--dry-run",
                "ip"
            ]),
            (words(&["ip-10-0-2-7.ec2.internal"]), 4)
        );
        assert_eq!(
            run(&["drift", "replace", "--nodepool", "d"]),
            (words(&["default"]), 4)
        );
        assert_eq!(
            run(&["--context", "staging", "drift", "replace", "--nodepool", ""]),
            (words(&["staging-pool"]), 4)
        );
        assert_eq!(
            run(&["drift", "replace", "--"]),
            (
                words(&["--context", "--dry-run", "--help", "--nodepool"]),
                4
            )
        );
        assert_eq!(run(&["ami", ""]), (words(&["default"]), 4));
        assert_eq!(run(&["ami", "-f", ""]), (vec![], 0));
        let none = candidates(&tree, &words(&["drift", "replace", ""]), &NoCluster);
        assert_eq!(none, (vec![], 4));
    }

    #[test]
    fn after_double_dash_only_positionals() {
        let tree = drift_tree();
        let (c, _) = candidates(&tree, &words(&["drift", "replace", "--", "-"]), &Fake);
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn typed_flags_are_collected() {
        let root = {
            let mut c = Cli::command();
            c.build();
            c
        };
        let pos = walk(
            &root,
            &words(&[
                "--kubeconfig=/k",
                "--context",
                "prod",
                "provision",
                "-n",
                "team",
                "--nodepool",
                "a",
            ]),
        );
        assert_eq!(pos.cmd.get_name(), "provision");
        assert_eq!(pos.flags.get("kubeconfig"), Some("/k"));
        assert_eq!(pos.flags.get("context"), Some("prod"));
        assert_eq!(pos.flags.get("namespace"), Some("team"));
        assert_eq!(pos.flags.all("nodepools"), &["a".to_string()]);
        assert_eq!(pos.flags.get("cluster"), None);
    }

    #[test]
    fn render_is_cobra_format() {
        assert_eq!(render(&words(&["a", "b"]), 4), "a\nb\n:4\n");
        assert_eq!(render(&[], 0), ":0\n");
    }
}
