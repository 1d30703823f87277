//! `-v`/`-vv` logging with `tracing`, to stderr, as text or (`--log-format json`) one JSON object
//! per line.
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
//!
//! `--log-format json` is for log collectors (the in-cluster Deployment, docs/in-cluster.md):
//! each event is one object — `timestamp` (RFC 3339, UTC, milliseconds), `level`, `target`,
//! `message` and `fields` — and so is each line the tool itself writes to stderr (notes,
//! warnings, progress, `error:`/`hint:`), through [`JsonLines`]. Every string is redacted before
//! it is encoded, exactly as the text lines are.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use super::output::one_line;
use super::style::Style;
use super::{ColorChoice, LogFormat};
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
pub fn init(verbose: u8, quiet: bool, color: ColorChoice, format: LogFormat) {
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
    let installed = match format {
        LogFormat::Text => tracing_subscriber::registry()
            .with(fmt.with_filter(targets))
            .try_init(),
        LogFormat::Json => tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .event_format(JsonEvent)
                    .with_filter(targets),
            )
            .try_init(),
    };
    if installed.is_ok() {
        ACTIVE.store(true, Ordering::Relaxed);
    }
}

/// Now as RFC 3339 in UTC with milliseconds (`2026-12-03T19:40:00.123Z`).
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = crate::model::time::format_rfc3339(now.as_secs() as i64);
    format!(
        "{}.{:03}Z",
        seconds.trim_end_matches('Z'),
        now.subsec_millis()
    )
}

/// A string as a JSON log line carries it: redacted, control characters escaped and cut like
/// every message ([`one_line`]: JSON escapes only C0 controls, and `kubectl logs` shows these
/// lines on a terminal).
fn safe(text: &str) -> String {
    one_line(&redact(text)).into_owned()
}

/// One log line as JSON: every string made [`safe`] before it is encoded (encoding could change
/// how a secret is spelt, e.g. a quote in it, so the finished line is not searched again).
pub fn json_line(level: &str, target: &str, message: &str, fields: Map<String, Value>) -> String {
    let mut line = json!({
        "timestamp": timestamp(),
        "level": level,
        "target": target,
        "message": safe(message),
    });
    if !fields.is_empty() {
        line["fields"] = Value::Object(fields);
    }
    line.to_string()
}

/// How a notice written straight to stderr — from a signal handler, outside every writer — is
/// told under `format`: as it is, or as a [`json_line`] at `warn`.
pub fn notice_teller(format: LogFormat) -> fn(&str) {
    match format {
        LogFormat::Text => |notice| eprintln!("{notice}"),
        LogFormat::Json => |notice| eprintln!("{}", json_line("warn", CRATE, notice, Map::new())),
    }
}

/// Formats a `tracing` event as [`json_line`].
struct JsonEvent;

impl<S, N> FormatEvent<S, N> for JsonEvent
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let mut fields = JsonFields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let level = meta.level().as_str().to_ascii_lowercase();
        let line = json_line(&level, meta.target(), &fields.message, fields.values);
        writeln!(writer, "{line}")
    }
}

/// An event's `message` and its other fields, strings redacted.
#[derive(Default)]
struct JsonFields {
    message: String,
    values: Map<String, Value>,
}

impl Visit for JsonFields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.values
                .insert(field.name().to_string(), json!(safe(value)));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.values.insert(field.name().to_string(), json!(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.values.insert(field.name().to_string(), json!(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.values.insert(field.name().to_string(), json!(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.values.insert(field.name().to_string(), json!(value));
    }
}

/// stderr under `--log-format json`: each line the tool writes (a note, a warning, progress,
/// `error:` and `hint:`) becomes one [`json_line`] with target `kubectl_karpenter`; the
/// `error:`/`warning:`/`note:` prefix becomes the level.
pub struct JsonLines<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> JsonLines<W> {
    /// Lines to `inner`.
    pub fn new(inner: W) -> JsonLines<W> {
        JsonLines {
            inner,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, line: &[u8]) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            return Ok(());
        }
        let (level, message) = if let Some(rest) = text.strip_prefix("error: ") {
            ("error", rest)
        } else if let Some(rest) = text.strip_prefix("warning: ") {
            ("warn", rest)
        } else {
            ("info", text.strip_prefix("note: ").unwrap_or(text))
        };
        let line = json_line(level, CRATE, message, Map::new());
        writeln!(self.inner, "{line}")
    }
}

impl<W: Write> Write for JsonLines<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.emit(&line[..line.len() - 1])?;
        }
        Ok(buf.len())
    }

    /// A line still open (a question waiting for its answer) is written as it is.
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.emit(&line)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for JsonLines<W> {
    fn drop(&mut self) {
        let _ = self.flush();
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

    fn parsed(bytes: &[u8]) -> Vec<Value> {
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
            .collect()
    }

    #[test]
    fn json_lines_are_one_object_per_line_with_the_level_from_the_prefix() {
        let mut out = Vec::new();
        {
            let mut lines = JsonLines::new(&mut out);
            write!(lines, "note: cluster demo\nwarning: spot is ").unwrap();
            writeln!(lines, "priced above on-demand").unwrap();
            writeln!(lines, "error: GET /api/v1/nodes: 503\nhint: try again\n").unwrap();
            write!(lines, "Launch 2 instances? [y/N] ").unwrap();
        }
        let lines = parsed(&out);
        let summary: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| (l["level"].as_str().unwrap(), l["message"].as_str().unwrap()))
            .collect();
        assert_eq!(
            summary,
            [
                ("info", "cluster demo"),
                ("warn", "spot is priced above on-demand"),
                ("error", "GET /api/v1/nodes: 503"),
                ("info", "hint: try again"),
                ("info", "Launch 2 instances? [y/N] "),
            ]
        );
        for line in &lines {
            assert_eq!(line["target"], "kubectl_karpenter");
            let ts = line["timestamp"].as_str().unwrap();
            assert!(
                ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[19] == b'.',
                "{ts}"
            );
        }
    }

    #[test]
    fn json_lines_redact_before_encoding() {
        crate::error::redact::remember("planted\"json-secret");
        let mut out = Vec::new();
        writeln!(
            JsonLines::new(&mut out),
            "error: token planted\"json-secret refused; authorization: Bearer abc.def"
        )
        .unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            !text.contains("json-secret") && !text.contains("abc.def"),
            "{text}"
        );
        let line = &parsed(&out)[0];
        assert!(
            line["message"].as_str().unwrap().contains("[redacted]"),
            "{line}"
        );
    }

    #[test]
    fn json_events_carry_fields_redacted() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl Write for Buffer {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .event_format(JsonEvent),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(
                method = "GET",
                path = "/api/v1/nodes",
                status = 503u64,
                ms = 12u64,
                header = "authorization: Bearer planted-json-bearer",
                "Kubernetes request failed"
            );
        });
        let bytes = buffer.0.lock().unwrap().clone();
        let line = &parsed(&bytes)[0];
        assert_eq!(line["level"], "info");
        assert_eq!(line["message"], "Kubernetes request failed");
        assert_eq!(line["target"], "kubectl_karpenter::cli::logging::tests");
        assert_eq!(line["fields"]["method"], "GET");
        assert_eq!(line["fields"]["status"], 503);
        assert_eq!(line["fields"]["ms"], 12);
        assert!(
            !line["fields"]["header"]
                .as_str()
                .unwrap()
                .contains("planted-json-bearer"),
            "{line}"
        );
    }
}
