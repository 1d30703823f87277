//! Rendering what the use cases return and report: tables and lines for people, versioned
//! documents for scripts, notes and warnings on stderr.

pub mod ami;
pub mod consolidate;
pub mod drift;
pub mod gate;
pub mod nodes;
pub mod plan;
pub mod replace;

// Karpenter's own e2e suites as offline scenarios through `provision --dry-run -f`'s path and
// the plan document it renders.
#[cfg(test)]
mod upstream_e2e;

use std::io::Write;

use super::output::one_line;
use super::{GlobalArgs, OutputFormat};
use crate::error::CommandError;

/// A note, shown with `-v` (and above) unless `-q`, on one line whatever it quotes.
pub fn note(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if global.verbose > 0 && !global.quiet {
        let _ = writeln!(err, "note: {}", one_line(text));
    }
}

/// A warning, hidden by `-q`, on one line whatever it quotes.
pub fn warn(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if !global.quiet {
        let _ = writeln!(err, "warning: {}", one_line(text));
    }
}

/// A status line of a live run (what was launched, removed…), hidden by `-q`, on one line
/// whatever it quotes.
pub fn status(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if !global.quiet {
        let _ = writeln!(err, "{}", one_line(text));
    }
}

/// A failed write to stdout (a closed pipe): exit 3 like any other failure to deliver.
pub fn io_error(e: std::io::Error) -> CommandError {
    CommandError::remote(format!("writing output: {e}"))
}

/// Whether the output is a document (JSON/YAML) rather than text.
pub fn machine(global: &GlobalArgs) -> bool {
    matches!(global.output, OutputFormat::Json | OutputFormat::Yaml)
}

/// A cell for a value that may be missing.
pub fn dash(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}
