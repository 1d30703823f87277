//! Confirmation of destructive steps (docs/spec.md §6): `--yes` skips the question; on a terminal the
//! user is asked (dialoguer, default No); without a terminal and without `--yes` the command
//! refuses (exit 4) rather than guess.

use std::io::IsTerminal;

use crate::error::CommandError;

/// Asks `question` (already showing exactly what will change above it). `Ok(false)`: the user
/// said no, nothing may change.
pub fn confirm(question: &str, assume_yes: bool) -> Result<bool, CommandError> {
    if assume_yes {
        return Ok(true);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CommandError::refused(format!(
            "{} needs confirmation and there is no terminal to ask on",
            question.trim_end_matches('?')
        ))
        .with_hint("pass --yes to confirm non-interactively, or --dry-run to only see the plan"));
    }
    dialoguer::Confirm::new()
        .with_prompt(question)
        .default(false)
        .show_default(true)
        .wait_for_newline(true)
        .interact_on(&dialoguer::console::Term::stderr())
        .map_err(|e| CommandError::refused(format!("no answer to the confirmation: {e}")))
}
