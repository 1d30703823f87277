//! Colour, only where it helps and only where it is wanted: on a terminal, never with
//! `NO_COLOR` set or `--color never`, always with `--color always`.

use std::io::IsTerminal;

use owo_colors::OwoColorize;

use super::ColorChoice;

/// Whether output gets colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Decides for stdout from the flag, `NO_COLOR` (any non-empty value) and `TERM=dumb`.
    pub fn for_stdout(choice: ColorChoice) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        Style::decide(choice, std::io::stdout().is_terminal(), no_color, dumb)
    }

    /// The decision itself, testable without a terminal.
    pub fn decide(choice: ColorChoice, terminal: bool, no_color: bool, dumb: bool) -> Style {
        let enabled = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color && !dumb,
        };
        Style { enabled }
    }

    /// No colour at all.
    pub fn plain() -> Style {
        Style { enabled: false }
    }

    /// Something that went wrong or stays undone (unschedulable pods, drift).
    pub fn bad(&self, text: &str) -> String {
        if self.enabled {
            text.red().to_string()
        } else {
            text.to_string()
        }
    }

    /// Something fine.
    pub fn good(&self, text: &str) -> String {
        if self.enabled {
            text.green().to_string()
        } else {
            text.to_string()
        }
    }

    /// Secondary information.
    pub fn dim(&self, text: &str) -> String {
        if self.enabled {
            text.dimmed().to_string()
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_where_wanted() {
        assert!(Style::decide(ColorChoice::Auto, true, false, false).enabled);
        assert!(
            !Style::decide(ColorChoice::Auto, false, false, false).enabled,
            "piped"
        );
        assert!(
            !Style::decide(ColorChoice::Auto, true, true, false).enabled,
            "NO_COLOR"
        );
        assert!(
            !Style::decide(ColorChoice::Auto, true, false, true).enabled,
            "TERM=dumb"
        );
        assert!(Style::decide(ColorChoice::Always, false, true, false).enabled);
        assert!(!Style::decide(ColorChoice::Never, true, false, false).enabled);
        assert_eq!(Style::plain().bad("x"), "x");
        assert!(Style::decide(ColorChoice::Always, false, false, false)
            .bad("x")
            .contains("\u{1b}["));
    }
}
