//! The exit-code contract (docs/spec.md §2) and the error type commands return.
//!
//! `0` success / nothing to do; `1` the command's finding is positive (pods left unschedulable,
//! drift found); `2` usage or input error; `3` cluster or cloud error; `4` refused for safety;
//! `141` stdout was closed by its reader (`| head`): the command stopped quietly.

pub mod redact;

use std::fmt;

/// Process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success, nothing to report.
    Ok = 0,
    /// The command's finding is positive.
    Finding = 1,
    /// Usage or input error.
    Input = 2,
    /// Cluster or cloud error.
    Remote = 3,
    /// Refused for safety.
    Refused = 4,
    /// stdout's reader went away (a closed pipe, `… | head -1`): the command stopped at its
    /// next write, without an error line. 128 + SIGPIPE, what a shell reports for kubectl
    /// and coreutils in the same place.
    OutputClosed = 141,
}

/// A command failure: one line of explanation, an optional hint, and its exit code.
#[derive(Debug)]
pub struct CommandError {
    /// Exit code class.
    pub exit: Exit,
    /// One line naming what is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl CommandError {
    /// A usage or input error (exit 2).
    pub fn input(message: impl fmt::Display) -> Self {
        CommandError {
            exit: Exit::Input,
            message: message.to_string(),
            hint: None,
        }
    }
    /// A cluster or cloud error (exit 3).
    pub fn remote(message: impl fmt::Display) -> Self {
        CommandError {
            exit: Exit::Remote,
            message: message.to_string(),
            hint: None,
        }
    }
    /// A refusal (exit 4).
    pub fn refused(message: impl fmt::Display) -> Self {
        CommandError {
            exit: Exit::Refused,
            message: message.to_string(),
            hint: None,
        }
    }
    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl fmt::Display) -> Self {
        self.hint = Some(hint.to_string());
        self
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CommandError {}

impl From<crate::api::InputError> for CommandError {
    fn from(e: crate::api::InputError) -> Self {
        CommandError::input(e)
    }
}

impl From<crate::cloud::CatalogError> for CommandError {
    fn from(e: crate::cloud::CatalogError) -> Self {
        CommandError::input(e)
    }
}

/// Result of a command: the exit status to use on success (0 or 1).
pub type CommandResult = Result<Exit, CommandError>;

/// An error and its sources on one line (`a: b: c`), a source already contained in the text
/// before it left out — what the cloud and cluster adapters put in their one-line messages.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
