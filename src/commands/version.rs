//! `kubectl karpenter version`.

use serde::Serialize;

use super::Context;
use crate::cli::output::{write_document, API_VERSION};
use crate::cli::OutputFormat;
use crate::error::{CommandError, CommandResult, Exit};

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
    let io = |e: std::io::Error| CommandError::remote(format!("writing output: {e}"));
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
            return Err(CommandError::input(
                "version: -o name prints the objects a command acts on, and version acts on none: use -o json or -o yaml for a document",
            ))
        }
        // `kubectl version` takes only yaml or json (kubernetes staging/src/k8s.io/kubectl
        // pkg/cmd/version/version.go `Validate`: "--output must be 'yaml' or 'json'"); ours also
        // takes the default, table, for the line. A wide line would be the same line.
        OutputFormat::Wide => {
            return Err(CommandError::input(
                "version: -o wide: --output must be json or yaml (or left out, for the version line)",
            ))
        }
        OutputFormat::Table => writeln!(ctx.out, "kubectl-karpenter v{version}").map_err(io)?,
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use crate::cli::OutputFormat;
    use crate::error::Exit;

    /// `version -o FORMAT`: what is printed, or the one-line refusal (exit 2, nothing printed),
    /// as `kubectl version` refuses all but yaml and json (staging/src/k8s.io/kubectl
    /// pkg/cmd/version/version.go `Validate`).
    #[test]
    fn version_takes_table_json_yaml_and_refuses_wide_and_name() {
        let cases: [(OutputFormat, Result<&str, &str>); 5] = [
            (OutputFormat::Table, Ok("kubectl-karpenter v")),
            (OutputFormat::Json, Ok("\"kind\": \"Version\"")),
            (OutputFormat::Yaml, Ok("kind: Version")),
            (
                OutputFormat::Wide,
                Err("version: -o wide: --output must be json or yaml"),
            ),
            (OutputFormat::Name, Err("version acts on none")),
        ];
        for (output, want) in cases {
            let (result, out) = crate::commands::run_with_output(output, super::run);
            match want {
                Ok(text) => {
                    assert_eq!(result.ok(), Some(Exit::Ok), "{output:?}");
                    assert!(out.contains(text), "{output:?}: {out}");
                }
                Err(text) => {
                    let e = result.expect_err("refused");
                    assert_eq!(e.exit, Exit::Input, "{output:?}");
                    assert!(e.message.contains(text), "{output:?}: {}", e.message);
                    assert!(!e.message.contains('\n'), "one line: {}", e.message);
                    assert_eq!(out, "", "{output:?}: nothing printed");
                }
            }
        }
    }
}
