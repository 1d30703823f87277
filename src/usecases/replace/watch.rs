//! `--watch`: a pass (select, plan, replace) every interval until Ctrl-C. A pass that fails (a
//! rollback, a drain that timed out, an API error) is reported and the watch goes on; the
//! worst outcome is the exit after Ctrl-C. Bad input and refusals end it: they do not go away
//! by waiting.

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
            Err(e) if matches!(e.exit, Exit::Input | Exit::Refused) => return Err(e),
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
