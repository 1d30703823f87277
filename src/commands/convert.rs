//! `kubectl karpenter convert -f PATH... [--to v1]`: prints v1 NodePools and EC2NodeClasses for
//! the v1alpha5 and v1beta1 objects in the input (v1 objects pass through unchanged), and a
//! note on stderr for everything that could not be carried over or whose meaning changes.
//! The same notes head the affected YAML documents as `# note:` comments.
//!
//! Notes are shown without `-v` (they are the point of the command) and hidden by `-q`.

use super::Context;
use crate::api::convert::{self, Options};
use crate::cli::output::{one_line, shown, write_document};
use crate::cli::{ConvertArgs, OutputFormat};
use crate::error::{CommandError, CommandResult, Exit};

/// The conversion's options: `--kubernetes-version` read as every command reads it (an empty
/// one is not given) and written `X.Y`, as the SSM parameter paths spell it.
pub(super) fn options(global: &crate::cli::GlobalArgs) -> Result<Options, CommandError> {
    Ok(Options {
        kubernetes_version: super::kubernetes_version_flag(global)?.map(|v| v.to_string()),
    })
}

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &ConvertArgs) -> CommandResult {
    if args.to != "v1" {
        return Err(CommandError::input(format!(
            "--to {}: only v1 is supported",
            args.to
        )));
    }
    // A wide table of YAML has no meaning: refused before the input is read, as `version -o
    // wide` is (`-o table` is the default, which prints the YAML).
    if ctx.global.output == OutputFormat::Wide {
        return Err(CommandError::input(
            "convert: -o wide: --output must be yaml, json or name (or left out, for YAML)",
        ));
    }
    let options = options(ctx.global)?;
    let conversion =
        convert::convert_paths(&args.filenames, &mut std::io::stdin().lock(), &options)?;
    let written = match ctx.global.output {
        // As `kubectl get -o json` prints several objects: one `List`.
        OutputFormat::Json => write_document(
            ctx.out,
            OutputFormat::Json,
            &List {
                api_version: "v1",
                kind: "List",
                items: conversion.documents.iter().map(|d| &d.value).collect(),
            },
        ),
        OutputFormat::Name => conversion
            .documents
            .iter()
            .try_for_each(|d| writeln!(ctx.out, "{}", shown(&kubectl_name(&d.kind, &d.name)))),
        // The default (table) and YAML: the commented multi-document YAML.
        _ => ctx.out.write_all(conversion.to_yaml().as_bytes()),
    };
    written.map_err(|e| CommandError::input(format!("cannot write the output: {e}")))?;
    if !ctx.global.quiet {
        for note in conversion.notes() {
            let _ = writeln!(ctx.err, "note: {}", one_line(&note.to_string()));
        }
        for line in conversion.summary() {
            let _ = writeln!(ctx.err, "note: {}", one_line(&line));
        }
    }
    Ok(Exit::Ok)
}

/// `-o json`: the converted objects as one `v1` `List`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct List<'a> {
    api_version: &'static str,
    kind: &'static str,
    items: Vec<&'a crate::api::yaml::Value>,
}

/// `-o name`: `kind.group/name`, as `kubectl get -o name` prints a Karpenter object
/// (`nodepool.karpenter.sh/default`, `ec2nodeclass.karpenter.k8s.aws/default`).
fn kubectl_name(kind: &str, name: &str) -> String {
    let group = match kind {
        "EC2NodeClass" => "karpenter.k8s.aws",
        _ => "karpenter.sh",
    };
    format!("{}.{group}/{name}", kind.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `convert -o wide` is refused in one line before any input is read (exit 2, nothing
    /// printed), as `version -o wide` is; the default and `-o yaml` print the YAML.
    #[test]
    fn convert_refuses_wide_and_prints_yaml_by_default() {
        let file = format!(
            "{}/examples/manifests/quickstart.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let args = ConvertArgs {
            filenames: vec![file],
            to: "v1".into(),
        };
        let (result, out) =
            crate::commands::run_with_output(OutputFormat::Wide, |ctx| run(ctx, &args));
        let e = result.expect_err("refused");
        assert_eq!(e.exit, Exit::Input);
        assert!(e.to_string().contains("convert: -o wide"), "{e}");
        assert!(out.is_empty(), "{out}");
        for output in [OutputFormat::Table, OutputFormat::Yaml] {
            let (result, out) = crate::commands::run_with_output(output, |ctx| run(ctx, &args));
            assert_eq!(result.ok(), Some(Exit::Ok), "{output:?}");
            assert!(out.contains("kind: NodePool"), "{output:?}: {out}");
        }
    }
}
