//! Time as the use cases see it: the wall clock (records, budgets' schedules, `consolidateAfter`),
//! a monotonic reading for timeouts, and sleeping that Ctrl-C cuts short. Behind a trait so a unit
//! test runs a ten-minute rollout in microseconds ([`FakeClock`]) and can change the world while
//! the code under test waits.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The clock a use case runs on.
pub trait Clock {
    /// Seconds since the Unix epoch.
    fn now(&self) -> i64;
    /// Time since the clock started: for timeouts and pacing, never affected by wall-clock jumps.
    fn monotonic(&self) -> Duration;
    /// Sleeps `d`, or less if a stop is requested meanwhile; `false` when a stop was requested.
    fn sleep(&self, d: Duration) -> bool;
    /// Sleeps `d` whether or not a stop is requested: the pace of work that goes on after Ctrl-C
    /// (the steps in flight finish).
    fn pause(&self, d: Duration);
    /// Whether the operator asked to stop (Ctrl-C): finish the step in flight, start nothing new.
    fn stop_requested(&self) -> bool;
}

/// Set by Ctrl-C: stop after the step in flight.
static STOP: AtomicBool = AtomicBool::new(false);

/// The real clock; its stop flag is Ctrl-C once [`SystemClock::handle_interrupts`] ran.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl SystemClock {
    /// A clock starting now.
    pub fn new() -> SystemClock {
        SystemClock {
            start: Instant::now(),
        }
    }

    /// Makes the first Ctrl-C a request to stop after the step in flight (long-running commands
    /// call this); a second one exits at once — everything done so far is recorded on the
    /// cluster and in EC2, so a re-run resumes. SIGTERM (a pod being stopped) counts as Ctrl-C.
    /// `tell` writes the notice to stderr (as text, or as a JSON log line).
    pub fn handle_interrupts(tell: fn(&str)) {
        static PRESSES: AtomicUsize = AtomicUsize::new(0);
        let _ = ctrlc::set_handler(move || {
            if PRESSES.fetch_add(1, Ordering::SeqCst) > 0 {
                std::process::exit(130);
            }
            STOP.store(true, Ordering::SeqCst);
            tell("interrupted: stopping after the step in flight (Ctrl-C again to quit now)");
        });
    }
}

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    }

    fn monotonic(&self) -> Duration {
        self.start.elapsed()
    }

    fn sleep(&self, d: Duration) -> bool {
        sleep_unless(&STOP, d)
    }

    fn pause(&self, d: Duration) {
        std::thread::sleep(d);
    }

    fn stop_requested(&self) -> bool {
        STOP.load(Ordering::SeqCst)
    }
}

impl SystemClock {
    /// A retry's backoff in the adapters (`k8s::client::Backoff`, `AwsCloud`'s): this clock's
    /// sleep, so Ctrl-C or SIGTERM during a backoff ends it and the retry at once.
    pub fn backoff(d: Duration) -> bool {
        SystemClock::new().sleep(d)
    }
}

/// Sleeps `d`, or less if `stop` is set meanwhile (looked at every 100 ms); `false` when it was.
pub fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100).min(end - now));
    }
}

/// Called by a [`FakeClock`] after each sleep with the time since it started: where a test makes
/// the world move (a node registers, a pod is bound, another operator writes).
pub type Tick = Box<dyn FnMut(Duration)>;

struct FakeTime {
    start_unix: i64,
    elapsed: Duration,
    stop_at: Option<Duration>,
    limit: Duration,
    ticks: Vec<Tick>,
}

/// A clock for tests: sleeping advances it at once and runs the ticks. Clones share one time.
///
/// It panics once more than its limit (a day, by default) has passed: code under test that
/// never finishes fails the test instead of hanging it.
#[derive(Clone)]
pub struct FakeClock {
    time: Rc<RefCell<FakeTime>>,
}

impl FakeClock {
    /// A clock whose wall time starts at `unix` seconds.
    pub fn at(unix: i64) -> FakeClock {
        FakeClock {
            time: Rc::new(RefCell::new(FakeTime {
                start_unix: unix,
                elapsed: Duration::ZERO,
                stop_at: None,
                limit: Duration::from_secs(86_400),
                ticks: Vec::new(),
            })),
        }
    }

    /// Runs `tick` after every sleep, with the time since the clock started.
    pub fn on_tick(&self, tick: impl FnMut(Duration) + 'static) {
        self.time.borrow_mut().ticks.push(Box::new(tick));
    }

    /// Plays Ctrl-C once `after` has passed.
    pub fn stop_after(&self, after: Duration) {
        self.time.borrow_mut().stop_at = Some(after);
    }

    /// Panics once more than `limit` has passed (see the type's documentation).
    pub fn with_limit(self, limit: Duration) -> FakeClock {
        self.time.borrow_mut().limit = limit;
        self
    }

    /// Moves time on by `d` and runs the ticks.
    pub fn advance(&self, d: Duration) {
        let (elapsed, mut ticks) = {
            let mut t = self.time.borrow_mut();
            t.elapsed += d;
            assert!(
                t.elapsed <= t.limit,
                "the fake clock passed its limit of {:?}: the code under test does not finish",
                t.limit
            );
            (t.elapsed, std::mem::take(&mut t.ticks))
        };
        // Ticks may use the clock themselves: run them outside the borrow.
        for tick in &mut ticks {
            tick(elapsed);
        }
        let mut t = self.time.borrow_mut();
        ticks.append(&mut t.ticks);
        t.ticks = ticks;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> i64 {
        let t = self.time.borrow();
        t.start_unix + t.elapsed.as_secs() as i64
    }

    fn monotonic(&self) -> Duration {
        self.time.borrow().elapsed
    }

    fn sleep(&self, d: Duration) -> bool {
        if self.stop_requested() {
            return false;
        }
        let step = {
            let t = self.time.borrow();
            match t.stop_at {
                Some(stop) if stop > t.elapsed => d.min(stop - t.elapsed),
                _ => d,
            }
        };
        self.advance(step);
        !self.stop_requested()
    }

    fn pause(&self, d: Duration) {
        self.advance(d);
    }

    fn stop_requested(&self) -> bool {
        let t = self.time.borrow();
        t.stop_at.is_some_and(|s| t.elapsed >= s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeping_advances_the_fake_clock_and_runs_ticks() {
        let clock = FakeClock::at(1_000);
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = seen.clone();
        clock.on_tick(move |t| log.borrow_mut().push(t.as_secs()));
        assert!(clock.sleep(Duration::from_secs(5)));
        assert!(clock.sleep(Duration::from_secs(10)));
        assert_eq!(clock.now(), 1_015);
        assert_eq!(clock.monotonic(), Duration::from_secs(15));
        assert_eq!(*seen.borrow(), [5, 15]);
    }

    #[test]
    fn a_stop_cuts_the_sleep_short_and_stays() {
        let clock = FakeClock::at(0);
        clock.stop_after(Duration::from_secs(3));
        assert!(!clock.sleep(Duration::from_secs(10)));
        assert_eq!(clock.monotonic(), Duration::from_secs(3));
        assert!(clock.stop_requested());
        assert!(!clock.sleep(Duration::from_secs(1)));
        assert_eq!(clock.monotonic(), Duration::from_secs(3));
    }

    #[test]
    fn a_real_sleep_ends_soon_after_a_stop() {
        static STOPPED: AtomicBool = AtomicBool::new(false);
        let started = Instant::now();
        let stopper = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(150));
            STOPPED.store(true, Ordering::SeqCst);
        });
        assert!(!sleep_unless(&STOPPED, Duration::from_secs(30)));
        let took = started.elapsed();
        stopper.join().unwrap();
        assert!(
            took < Duration::from_secs(2),
            "a 30 s sleep stopped after 150 ms took {took:?}"
        );
        assert!(
            !sleep_unless(&STOPPED, Duration::from_secs(30)),
            "and stays"
        );
        assert!(sleep_unless(
            &AtomicBool::new(false),
            Duration::from_millis(10)
        ));
    }

    #[test]
    fn a_pause_goes_on_after_a_stop() {
        let clock = FakeClock::at(0);
        clock.stop_after(Duration::from_secs(1));
        clock.pause(Duration::from_secs(5));
        assert!(clock.stop_requested());
        clock.pause(Duration::from_secs(5));
        assert_eq!(clock.monotonic(), Duration::from_secs(10));
    }

    #[test]
    #[should_panic(expected = "does not finish")]
    fn a_run_that_never_ends_fails_instead_of_hanging() {
        let clock = FakeClock::at(0).with_limit(Duration::from_secs(60));
        loop {
            clock.sleep(Duration::from_secs(1));
        }
    }

    #[test]
    fn a_tick_may_read_the_clock() {
        let clock = FakeClock::at(0);
        let inner = clock.clone();
        let seen = Rc::new(RefCell::new(0));
        let log = seen.clone();
        clock.on_tick(move |_| *log.borrow_mut() = inner.now());
        clock.sleep(Duration::from_secs(7));
        assert_eq!(*seen.borrow(), 7);
    }
}
