//! One module per command: glue between parsed flags, adapters, the pure core and rendering.

pub mod ami;
pub mod completion;
pub mod consolidate;
pub mod consolidate_live;
pub mod convert;
pub mod drift;
pub mod drift_gate;
pub mod drift_live;
pub mod drift_replace;
pub mod live;
pub mod nodes;
pub mod provision;
pub mod provision_live;
pub mod version;

use std::io::Write;

use crate::cli::GlobalArgs;

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `-l`: a kubectl label selector; a bad one is an input error naming the term.
pub(crate) fn selector_flag(
    text: Option<&str>,
) -> Result<Option<crate::model::selector::LabelSelector>, crate::error::CommandError> {
    text.map(crate::model::selector::LabelSelector::parse)
        .transpose()
        .map_err(|e| crate::error::CommandError::input(format!("-l {e}")))
}

/// What every command gets besides its own flags.
pub struct Context<'a> {
    /// Global flags.
    pub global: &'a GlobalArgs,
    /// Where results go.
    pub out: &'a mut dyn Write,
    /// Where notes and progress go (respecting `-q`).
    pub err: &'a mut dyn Write,
}

impl Context<'_> {
    /// A note for `-v` (and above).
    pub fn note(&mut self, text: &str) {
        crate::cli::render::note(self.global, self.err, text);
    }
    /// A warning (hidden by `-q`).
    pub fn warn(&mut self, text: &str) {
        crate::cli::render::warn(self.global, self.err, text);
    }
}
