//! `--watch`: a pass (select, plan, replace) every interval until Ctrl-C. A pass that fails (a
//! rollback, a drain that timed out, an API error) is reported and the watch goes on; the
//! worst outcome is the exit after Ctrl-C. Bad input, refusals and a closed stdout end it: they
//! do not go away by waiting.

use std::time::Duration;

use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::clock::Clock;

/// How long the watch waits between passes.
pub const INTERVAL: Duration = Duration::from_secs(30);

/// What the watch repeats.
pub trait Passes {
    /// One pass.
    fn pass(&mut self) -> CommandResult;
    /// A pass failed with `error`; the watch goes on.
    fn failed(&mut self, error: &CommandError);
}

/// Runs a pass every `interval` until the clock's stop; the worst pass's result.
pub fn watch(
    clock: &(impl Clock + ?Sized),
    interval: Duration,
    passes: &mut dyn Passes,
) -> CommandResult {
    let mut worst: CommandResult = Ok(Exit::Ok);
    loop {
        match passes.pass() {
            Ok(Exit::Ok) => {}
            Ok(exit) => {
                if matches!(worst, Ok(Exit::Ok)) {
                    worst = Ok(exit);
                }
            }
            Err(e) if matches!(e.exit, Exit::Input | Exit::Refused | Exit::OutputClosed) => {
                return Err(e)
            }
            Err(e) => {
                passes.failed(&e);
                worst = Err(e);
            }
        }
        if !clock.sleep(interval) {
            return worst;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usecases::clock::FakeClock;

    /// Passes answering from a script, counting the failures told.
    struct Script {
        answers: Vec<CommandResult>,
        failed: usize,
    }

    impl Passes for Script {
        fn pass(&mut self) -> CommandResult {
            self.answers.remove(0)
        }
        fn failed(&mut self, _: &CommandError) {
            self.failed += 1;
        }
    }

    #[test]
    fn an_api_error_is_told_and_watched_past_a_closed_output_ends_the_watch() {
        let closed = CommandError {
            exit: Exit::OutputClosed,
            ..CommandError::remote("writing output: broken pipe")
        };
        let mut script = Script {
            answers: vec![Err(CommandError::remote("503")), Ok(Exit::Ok), Err(closed)],
            failed: 0,
        };
        let clock = FakeClock::at(0);
        let result = watch(&clock, INTERVAL, &mut script);
        assert_eq!(result.unwrap_err().exit, Exit::OutputClosed);
        assert_eq!(script.failed, 1);
        assert!(script.answers.is_empty());
    }
}
