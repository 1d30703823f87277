//! `kubectl karpenter convert -f PATH... [--to v1]`: prints v1 NodePools and EC2NodeClasses for
//! the v1alpha5 and v1beta1 objects in the input (v1 objects pass through unchanged), and a
//! note on stderr for everything that could not be carried over or whose meaning changes.
//! The same notes head the affected YAML documents as `# note:` comments.
//!
//! Notes are shown without `-v` (they are the point of the command) and hidden by `-q`.

use super::Context;
use crate::api::convert::{self, Options};
use crate::cli::output::one_line;
use crate::cli::ConvertArgs;
use crate::error::{CommandError, CommandResult, Exit};

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &ConvertArgs) -> CommandResult {
    if args.to != "v1" {
        return Err(CommandError::input(format!(
            "--to {}: only v1 is supported",
            args.to
        )));
    }
    let options = Options {
        kubernetes_version: ctx.global.kubernetes_version.clone(),
    };
    let conversion =
        convert::convert_paths(&args.filenames, &mut std::io::stdin().lock(), &options)?;
    ctx.out
        .write_all(conversion.to_yaml().as_bytes())
        .map_err(|e| CommandError::input(format!("cannot write the output: {e}")))?;
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
