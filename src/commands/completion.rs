//! `completion SHELL` and the hidden `__complete` used by kubectl's plugin completion.

use clap::CommandFactory;
use clap_complete::Shell;

use super::Context;
use crate::cli::complete::{self, DynamicValues, TypedFlags};
use crate::cli::{Cli, CompleteArgs, CompletionArgs, OutputFormat};
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

/// Prints a completion script. It takes no `-o`: `kubectl completion` has no `--output` (-o is
/// not one of kubectl's global flags; kubectl pkg/cmd/completion/completion.go adds none), so
/// `kubectl completion bash -o json` is refused; ours refuses any -o but the default, table.
pub fn run(ctx: &mut Context<'_>, args: &CompletionArgs) -> CommandResult {
    if ctx.global.output != OutputFormat::Table {
        return Err(CommandError::input(format!(
            "completion: -o {}: completion prints a shell script and takes no -o",
            ctx.global.output.name()
        )));
    }
    let text = script(&args.shell)?;
    ctx.out
        .write_all(&text)
        .map_err(|e| CommandError::remote(format!("writing output: {e}")))?;
    Ok(Exit::Ok)
}

/// Prints completion candidates in Cobra's format. Always exits 0 and never writes errors to
/// stdout: the shell would offer them as candidates.
pub fn complete(ctx: &mut Context<'_>, args: &CompleteArgs) -> CommandResult {
    let (candidates, directive) =
        complete::candidates(&Cli::command(), &args.words, &ClusterValues);
    let _ = ctx
        .out
        .write_all(complete::render(&candidates, directive).as_bytes());
    Ok(Exit::Ok)
}

/// NodePool, node and node-class names from the cluster the typed flags point at (or the
/// kubeconfig's current context). Quick and quiet: a 2 s request timeout, and any error means
/// no candidates — completion never fails.
struct ClusterValues;

#[derive(serde::Deserialize)]
struct Named {
    metadata: crate::api::meta::ObjectMeta,
}

impl ClusterValues {
    fn client(flags: &TypedFlags) -> Option<crate::k8s::client::KubeClient> {
        let kube = crate::k8s::config::KubeFlags {
            kubeconfig: flags.get("kubeconfig").map(str::to_string),
            context: flags.get("context").map(str::to_string),
            cluster: flags.get("cluster").map(str::to_string),
            user: flags.get("user").map(str::to_string),
            request_timeout: Some("2s".into()),
            ..Default::default()
        };
        let target = crate::k8s::config::ClusterTarget::from_flags(&kube).ok()?;
        crate::k8s::client::KubeClient::connect(&target).ok()
    }

    /// Names listed at the first of `paths` that answers.
    fn names(flags: &TypedFlags, paths: &[&str]) -> Vec<String> {
        let Some(client) = Self::client(flags) else {
            return Vec::new();
        };
        for path in paths {
            if let Ok(items) = crate::k8s::ops::list_all::<Named>(
                &client,
                path,
                &crate::k8s::ops::ListQuery::default(),
            ) {
                let mut names: Vec<String> =
                    items.into_iter().filter_map(|i| i.metadata.name).collect();
                names.sort();
                return names;
            }
        }
        Vec::new()
    }
}

impl DynamicValues for ClusterValues {
    fn nodepools(&self, flags: &TypedFlags) -> Vec<String> {
        let mut names = Self::names(
            flags,
            &[
                "/apis/karpenter.sh/v1/nodepools",
                "/apis/karpenter.sh/v1beta1/nodepools",
            ],
        );
        names.extend(Self::names(
            flags,
            &["/apis/karpenter.sh/v1alpha5/provisioners"],
        ));
        names
    }

    fn nodes(&self, flags: &TypedFlags) -> Vec<String> {
        Self::names(flags, &["/api/v1/nodes"])
    }

    fn nodeclasses(&self, flags: &TypedFlags) -> Vec<String> {
        let mut names = Self::names(
            flags,
            &[
                "/apis/karpenter.k8s.aws/v1/ec2nodeclasses",
                "/apis/karpenter.k8s.aws/v1beta1/ec2nodeclasses",
            ],
        );
        names.extend(Self::names(
            flags,
            &["/apis/karpenter.k8s.aws/v1alpha1/awsnodetemplates"],
        ));
        names
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{CompletionArgs, OutputFormat};
    use crate::error::Exit;

    /// `completion bash -o FORMAT`: only the default prints the script; any other -o is refused
    /// in one line, exit 2, nothing printed (`kubectl completion` has no --output: kubectl
    /// pkg/cmd/completion/completion.go).
    #[test]
    fn completion_refuses_every_output_but_the_default() {
        use clap::ValueEnum;
        for output in OutputFormat::value_variants().iter().copied() {
            let args = CompletionArgs {
                shell: "bash".into(),
            };
            let (result, out) =
                crate::commands::run_with_output(output, |ctx| super::run(ctx, &args));
            if output == OutputFormat::Table {
                assert_eq!(result.ok(), Some(Exit::Ok));
                assert!(!out.is_empty(), "the script");
                continue;
            }
            let e = result.expect_err("refused");
            assert_eq!(e.exit, Exit::Input, "{output:?}");
            assert_eq!(
                e.message,
                format!(
                    "completion: -o {}: completion prints a shell script and takes no -o",
                    output.name()
                )
            );
            assert!(out.is_empty(), "{output:?}: nothing printed");
        }
    }
}
