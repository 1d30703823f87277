//! Rendering what the use cases return and report: tables and lines for people, versioned
//! documents for scripts, notes and warnings on stderr.

pub mod plan;
pub mod replace;

use std::io::Write;

use super::GlobalArgs;

/// A note, shown with `-v` (and above) unless `-q`.
pub fn note(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if global.verbose > 0 && !global.quiet {
        let _ = writeln!(err, "note: {text}");
    }
}

/// A warning, hidden by `-q`.
pub fn warn(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if !global.quiet {
        let _ = writeln!(err, "warning: {text}");
    }
}

/// A status line of a live run (what was launched, removed…), hidden by `-q`.
pub fn status(global: &GlobalArgs, err: &mut dyn Write, text: &str) {
    if !global.quiet {
        let _ = writeln!(err, "{text}");
    }
}
