//! `completion SHELL` and the hidden `__complete` used by kubectl's plugin completion.

use clap::CommandFactory;
use clap_complete::Shell;

use super::Context;
use crate::cli::complete::{self, NoCluster};
use crate::cli::{Cli, CompleteArgs, CompletionArgs};
use crate::error::{CommandError, CommandResult, Exit};

/// The command name the generated scripts complete: the binary as found on PATH (`kubectl
/// karpenter ...` is completed by kubectl through `kubectl_complete-karpenter`).
pub const BIN_NAME: &str = "kubectl-karpenter";

/// The script for `shell` (`bash`, `zsh`, `fish` or `powershell`).
pub fn script(shell: &str) -> Result<Vec<u8>, CommandError> {
    let shell = match shell {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        "powershell" => Shell::PowerShell,
        other => {
            return Err(CommandError::input(format!("unsupported shell {other:?}"))
                .with_hint("use one of bash, zsh, fish, powershell"))
        }
    };
    let mut cmd = script_command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut buf);
    if shell == Shell::Bash {
        // clap_complete's bash generator spells the per-subcommand case arms of a hyphenated
        // binary `kubectl__subcmd__karpenter__subcmd__…` but dispatches to
        // `kubectl__karpenter__subcmd__…`, so nothing after a subcommand completes
        // (clap-rs/clap#6421, #6529). Spell the arms as the dispatcher does; a no-op once fixed.
        let text = String::from_utf8_lossy(&buf).replace(
            &BIN_NAME.replace('-', "__subcmd__"),
            &BIN_NAME.replace('-', "__"),
        );
        buf = text.into_bytes();
    }
    Ok(buf)
}

/// The command tree the scripts describe: `Cli` renamed to the binary (the derive's
/// `kubectl karpenter` display name would give clap_complete mismatched function names) and
/// without hidden subcommands (clap_complete's bash, zsh, fish and PowerShell generators would
/// offer `__complete`).
fn script_command() -> clap::Command {
    let base = Cli::command();
    let mut cmd = clap::Command::new(BIN_NAME)
        .bin_name(BIN_NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(base.is_propagate_version_set())
        .subcommand_required(base.is_subcommand_required_set())
        .args(base.get_arguments().cloned())
        .subcommands(base.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    if let Some(about) = base.get_about() {
        cmd = cmd.about(about.clone());
    }
    cmd
}

/// Prints a completion script.
pub fn run(ctx: &mut Context<'_>, args: &CompletionArgs) -> CommandResult {
    let text = script(&args.shell)?;
    ctx.out
        .write_all(&text)
        .map_err(|e| CommandError::remote(format!("writing output: {e}")))?;
    Ok(Exit::Ok)
}

/// Prints completion candidates in Cobra's format. Always exits 0 and never writes errors to
/// stdout: the shell would offer them as candidates.
pub fn complete(ctx: &mut Context<'_>, args: &CompleteArgs) -> CommandResult {
    // kubectl has no cluster adapter to hand yet: NodePool and node names come later.
    let (candidates, directive) = complete::candidates(&Cli::command(), &args.words, &NoCluster);
    let _ = ctx
        .out
        .write_all(complete::render(&candidates, directive).as_bytes());
    Ok(Exit::Ok)
}
