//! `-v`/`-vv` logging with `tracing`, to stderr.
//!
//! * `-v`: this tool's `info` events (failed Kubernetes requests: method, path, status, time)
//!   besides the `note:` lines;
//! * `-vv`: `debug`: every Kubernetes request (method, path, status, bytes, milliseconds);
//! * `-vvv`: `trace`;
//! * `KUBECTL_KARPENTER_LOG` (tracing's `target=level,…` syntax, e.g. `debug` or
//!   `kubectl_karpenter=debug,kube_client=debug`) replaces the `-v` choice, also under `-q`.
//!   Other crates' events are capped at `debug`: their `trace` level may print request headers.
//!
//! Without `-v` and without the variable no subscriber is installed and stderr is exactly as
//! before. Log lines are coloured only when stderr is a terminal and colour is allowed
//! (`--color`, `NO_COLOR`, `TERM=dumb`). This tool logs no credentials, tokens or request
//! bodies; other crates' lines may (the AWS SDK's `debug` shows the access key id in its
//! identity's `Debug`), so every line is [`redact`]ed before it is written. Field values are
//! escaped by tracing-subscriber itself (no control characters reach the terminal).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use super::style::Style;
use super::ColorChoice;
use crate::error::redact::redact;

/// The environment variable that sets the log filter.
pub const ENV: &str = "KUBECTL_KARPENTER_LOG";
/// This crate's log target.
const CRATE: &str = "kubectl_karpenter";

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether log lines go to stderr (progress bars step aside for them).
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The filter for `-v` count, `-q` and the variable's value; `None`: no logging. An invalid
/// variable is an error (its message).
pub fn filter(verbose: u8, quiet: bool, env: Option<&str>) -> Result<Option<Targets>, String> {
    if let Some(spec) = env.map(str::trim).filter(|s| !s.is_empty()) {
        let parsed: Targets = spec
            .parse()
            .map_err(|e| format!("{ENV}={spec:?} is not a log filter ({e}); ignored"))?;
        return Ok(Some(capped(&parsed)));
    }
    if quiet {
        return Ok(None);
    }
    let level = match verbose {
        0 => return Ok(None),
        1 => LevelFilter::INFO,
        2 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    Ok(Some(Targets::new().with_target(CRATE, level)))
}

/// Other crates at `debug` at most (their `trace` can show headers); this crate as asked.
fn capped(targets: &Targets) -> Targets {
    let cap = |target: &str, level: LevelFilter| {
        if target == CRATE || target.starts_with("kubectl_karpenter::") {
            level
        } else {
            level.min(LevelFilter::DEBUG)
        }
    };
    let mut out = Targets::new();
    if let Some(default) = targets.default_level() {
        out = out
            .with_default(default.min(LevelFilter::DEBUG))
            .with_target(CRATE, default);
    }
    for (target, level) in targets.iter() {
        out = out.with_target(target, cap(target, level));
    }
    out
}

/// Installs the subscriber the flags ask for (once, first thing in `main`).
pub fn init(verbose: u8, quiet: bool, color: ColorChoice) {
    let env = std::env::var(ENV).ok();
    let targets = match filter(verbose, quiet, env.as_deref()) {
        Ok(Some(t)) => t,
        Ok(None) => return,
        Err(message) => {
            eprintln!("warning: {message}");
            match filter(verbose, quiet, None) {
                Ok(Some(t)) => t,
                _ => return,
            }
        }
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    let ansi =
        Style::decide(color, std::io::stderr().is_terminal(), no_color, dumb) != Style::plain();
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(|| Redacted(std::io::stderr()))
        .with_ansi(ansi)
        .with_timer(tracing_subscriber::fmt::time::uptime())
        .compact();
    if tracing_subscriber::registry()
        .with(fmt.with_filter(targets))
        .try_init()
        .is_ok()
    {
        ACTIVE.store(true, Ordering::Relaxed);
    }
}

/// stderr for log lines: each event is formatted whole and written once, credentials
/// redacted (colour codes kept).
struct Redacted(std::io::Stderr);

impl Write for Redacted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    fn enabled(t: &Targets, target: &str, level: Level) -> bool {
        t.would_enable(target, &level)
    }

    #[test]
    fn verbosity_maps_to_levels() {
        assert!(filter(0, false, None).unwrap().is_none());
        assert!(filter(2, true, None).unwrap().is_none(), "-q wins over -v");
        let v = filter(1, false, None).unwrap().unwrap();
        assert!(enabled(&v, "kubectl_karpenter::k8s::client", Level::INFO));
        assert!(!enabled(&v, "kubectl_karpenter::k8s::client", Level::DEBUG));
        assert!(
            !enabled(&v, "aws_smithy_runtime", Level::INFO),
            "own events only"
        );
        let vv = filter(2, false, None).unwrap().unwrap();
        assert!(enabled(&vv, "kubectl_karpenter::k8s::client", Level::DEBUG));
        assert!(!enabled(&vv, "kubectl_karpenter", Level::TRACE));
        let vvv = filter(3, false, None).unwrap().unwrap();
        assert!(enabled(&vvv, "kubectl_karpenter", Level::TRACE));
    }

    #[test]
    fn the_variable_wins_and_third_parties_are_capped() {
        let t = filter(0, true, Some("trace")).unwrap().unwrap();
        assert!(enabled(&t, "kubectl_karpenter::k8s::client", Level::TRACE));
        assert!(enabled(&t, "kube_client", Level::DEBUG));
        assert!(!enabled(&t, "kube_client", Level::TRACE), "capped at debug");
        let t = filter(
            0,
            false,
            Some("kubectl_karpenter=debug,aws_smithy_runtime=trace"),
        )
        .unwrap()
        .unwrap();
        assert!(enabled(&t, "kubectl_karpenter::k8s", Level::DEBUG));
        assert!(enabled(&t, "aws_smithy_runtime::client", Level::DEBUG));
        assert!(!enabled(&t, "aws_smithy_runtime::client", Level::TRACE));
        assert!(
            !enabled(&t, "hyper", Level::ERROR),
            "no default: others off"
        );
        assert!(filter(1, false, Some("  ")).unwrap().is_some(), "blank: -v");
        assert!(filter(0, false, Some("kube=loud")).is_err());
    }
}
