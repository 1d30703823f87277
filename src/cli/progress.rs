//! Progress of waits longer than a second (launch, drain, rollout): a spinner or bar on stderr
//! where a person watches it, plain status lines where a log or a script reads it.
//!
//! * A bar ([`Mode::Bar`]) when stderr is a terminal (not `TERM=dumb`), no `-q`, output is not
//!   JSON/YAML, and no `-v`/`KUBECTL_KARPENTER_LOG` logging is on (log lines would tangle with
//!   a redrawn line). The bar is redrawn in place on stderr and cleared when the wait ends. It
//!   uses no colour, so `NO_COLOR`/`--color` do not change it.
//! * Lines ([`Mode::Lines`]) everywhere else: each status is printed once, on its own line,
//!   when it changes — exactly the lines the commands printed before there were bars, so piped
//!   logs and scripts that read stderr see no `\r` and no escape sequence.
//! * Nothing ([`Mode::Silent`]) under `-q`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{GlobalArgs, OutputFormat};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A spinner (or bar, once a length is known) redrawn in place on stderr.
    Bar,
    /// One plain line per status change.
    Lines,
    /// Nothing (`-q`).
    Silent,
}

impl Mode {
    /// The decision, testable without a terminal: `terminal` is whether stderr is one, `dumb`
    /// whether `TERM=dumb`, `logging` whether log lines go to stderr.
    pub fn decide(global: &GlobalArgs, terminal: bool, dumb: bool, logging: bool) -> Mode {
        let machine = matches!(global.output, OutputFormat::Json | OutputFormat::Yaml);
        if global.quiet {
            Mode::Silent
        } else if terminal && !dumb && !machine && !logging {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }

    /// The decision for this process's stderr.
    pub fn detect(global: &GlobalArgs) -> Mode {
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        Mode::decide(
            global,
            std::io::stderr().is_terminal(),
            dumb,
            super::logging::active(),
        )
    }
}

/// How often the spinner moves while nothing else happens.
const TICK: Duration = Duration::from_millis(120);

/// One wait's progress. Dropping it (an error, a timeout) clears the bar, so the error line
/// that follows starts on a clean line.
pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    /// The last status printed (lines mode) or shown (bar mode).
    last: String,
    has_length: bool,
}

impl Progress {
    /// Progress for this process's stderr, shown as [`Mode::detect`] decides, starting with
    /// `message` (shown at once on a bar; printed as a line only by a later
    /// [`set_message`](Progress::set_message) of the same text).
    pub fn new(global: &GlobalArgs, message: &str) -> Progress {
        Progress::with_mode(Mode::detect(global), message)
    }

    /// Progress in a given mode.
    pub fn with_mode(mode: Mode, message: &str) -> Progress {
        let bar = (mode == Mode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                .with_style(spinner_style())
                .with_message(message.to_string());
            bar.enable_steady_tick(TICK);
            bar
        });
        Progress {
            mode,
            bar,
            last: String::new(),
            has_length: false,
        }
    }

    /// How this progress is shown.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The current status: redrawn on the bar; printed on `err` as its own line when it
    /// differs from the last one (lines mode); nothing under `-q`.
    pub fn set_message(&mut self, err: &mut dyn Write, message: &str) {
        if message == self.last {
            return;
        }
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.set_message(message.to_string()),
            (None, Mode::Lines) => {
                let _ = writeln!(err, "{message}");
            }
            _ => {}
        }
        self.last = message.to_string();
    }

    /// How many steps the wait has (turns the spinner into a bar).
    pub fn set_length(&mut self, len: u64) {
        if let Some(bar) = &self.bar {
            if !self.has_length {
                bar.set_style(bar_style());
                self.has_length = true;
            }
            bar.set_length(len);
        }
    }

    /// How many steps are done.
    pub fn set_position(&mut self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    /// A line of its own while the bar runs (printed above it), or plainly.
    pub fn println(&mut self, err: &mut dyn Write, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| {
                let _ = writeln!(err, "{line}");
            }),
            None if self.mode == Mode::Lines => {
                let _ = writeln!(err, "{line}");
            }
            None => {}
        }
    }

    /// Ends the wait with `message`: the bar is cleared and the message printed in its place;
    /// in lines mode it is printed unless it was the last status printed; nothing under `-q`.
    pub fn finish_with_message(&mut self, err: &mut dyn Write, message: &str) {
        match self.bar.take() {
            Some(bar) => {
                bar.finish_and_clear();
                let _ = writeln!(err, "{message}");
            }
            None if self.mode == Mode::Lines && message != self.last => {
                let _ = writeln!(err, "{message}");
            }
            None => {}
        }
        self.last = message.to_string();
    }

    /// Ends the wait leaving nothing behind on a terminal (lines mode has printed every status
    /// already).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `- 12s waiting: 1/2 node(s) Ready…`: ASCII only, no colour; the message last, cut to the
/// terminal's width (a wrapped line could not be redrawn in place).
fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {elapsed:>4} {wide_msg}")
        .expect("valid template")
        .tick_strings(&["-", "\\", "|", "/", "-"])
}

/// `- 12s [=====>    ] waiting: …`.
fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {elapsed:>4} [{bar:20}] {wide_msg}")
        .expect("valid template")
        .tick_strings(&["-", "\\", "|", "/", "-"])
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(output: OutputFormat, quiet: bool) -> GlobalArgs {
        GlobalArgs {
            output,
            quiet,
            ..GlobalArgs::default()
        }
    }

    #[test]
    fn bars_only_on_a_terminal_for_people() {
        let table = global(OutputFormat::Table, false);
        assert_eq!(Mode::decide(&table, true, false, false), Mode::Bar);
        assert_eq!(
            Mode::decide(&global(OutputFormat::Wide, false), true, false, false),
            Mode::Bar
        );
        assert_eq!(
            Mode::decide(&table, false, false, false),
            Mode::Lines,
            "piped"
        );
        assert_eq!(Mode::decide(&table, true, true, false), Mode::Lines, "dumb");
        assert_eq!(Mode::decide(&table, true, false, true), Mode::Lines, "-v");
        for machine in [OutputFormat::Json, OutputFormat::Yaml] {
            assert_eq!(
                Mode::decide(&global(machine, false), true, false, false),
                Mode::Lines
            );
        }
        assert_eq!(
            Mode::decide(&global(OutputFormat::Table, true), true, false, false),
            Mode::Silent
        );
        assert_eq!(
            Mode::decide(&global(OutputFormat::Json, true), false, false, false),
            Mode::Silent
        );
    }

    #[test]
    fn lines_mode_prints_each_change_once() {
        let mut err = Vec::new();
        let mut p = Progress::with_mode(Mode::Lines, "waiting");
        p.set_length(4);
        p.set_position(1);
        p.set_message(&mut err, "waiting: 0/1 node(s) Ready");
        p.set_message(&mut err, "waiting: 0/1 node(s) Ready");
        p.set_message(&mut err, "waiting: 1/1 node(s) Ready");
        p.finish_with_message(&mut err, "waiting: 1/1 node(s) Ready");
        p.println(&mut err, "aside");
        p.finish_with_message(&mut err, "done");
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "waiting: 0/1 node(s) Ready\nwaiting: 1/1 node(s) Ready\naside\ndone\n"
        );
    }

    #[test]
    fn silent_mode_prints_nothing() {
        let mut err = Vec::new();
        let mut p = Progress::with_mode(Mode::Silent, "waiting");
        p.set_message(&mut err, "a");
        p.println(&mut err, "b");
        p.finish_with_message(&mut err, "c");
        assert!(err.is_empty());
    }
}
