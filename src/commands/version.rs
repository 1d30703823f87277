//! `kubectl karpenter version`.

use serde::Serialize;

use super::Context;
use crate::cli::output::{write_document, API_VERSION};
use crate::cli::OutputFormat;
use crate::error::{CommandResult, Exit};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionDoc {
    api_version: &'static str,
    kind: &'static str,
    version: &'static str,
}

/// Prints the version.
pub fn run(ctx: &mut Context<'_>) -> CommandResult {
    let version = env!("CARGO_PKG_VERSION");
    let io = |e: std::io::Error| crate::error::CommandError::remote(format!("writing output: {e}"));
    match ctx.global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let doc = VersionDoc {
                api_version: API_VERSION,
                kind: "Version",
                version,
            };
            write_document(ctx.out, ctx.global.output, &doc).map_err(io)?;
        }
        // kubectl's `-o name` prints `resource/name` of each object a command acts on; version
        // acts on none, and `kubectl version -o name` is refused too (docs/commands.md).
        OutputFormat::Name => {
            return Err(crate::error::CommandError::input(
                "version: -o name prints the objects a command acts on, and version acts on none: use -o json or -o yaml for a document",
            ))
        }
        _ => writeln!(ctx.out, "kubectl-karpenter v{version}").map_err(io)?,
    }
    Ok(Exit::Ok)
}
