//! One module per command: glue between parsed flags, adapters, the pure core and rendering.

pub mod ami;
pub mod completion;
pub mod consolidate;
pub mod consolidate_live;
pub mod convert;
pub mod drift;
pub mod drift_gate;
pub mod drift_replace;
pub mod lease;
pub mod live;
pub mod nodes;
pub mod provision;
pub mod provision_live;
pub mod version;

use std::io::Write;

use crate::cli::GlobalArgs;

/// Runs the parsed command: the one dispatch the binary (`main.rs`) and the input fuzzer
/// (`tests/e2e/fuzz_inputs.rs`) share.
pub fn run(ctx: &mut Context<'_>, command: &crate::cli::Command) -> crate::error::CommandResult {
    use crate::cli::{Command, DriftCommand};
    global_flags(ctx.global)?;
    match command {
        Command::Provision(args) => provision::run(ctx, args),
        Command::Ami(args) => ami::run(ctx, args),
        Command::Convert(args) => convert::run(ctx, args),
        Command::Nodes(args) => nodes::run(ctx, args),
        Command::Drift(args) => match &args.command {
            DriftCommand::Check(check) => drift::check(ctx, check),
            DriftCommand::Replace(replace) => drift_replace::run(ctx, replace),
        },
        Command::Consolidate(args) => consolidate::run(ctx, args),
        Command::EnableDrift(args) => drift_gate::enable(ctx, args),
        Command::DisableDrift(args) => drift_gate::disable(ctx, args),
        Command::Version => version::run(ctx),
        Command::Completion(args) => completion::run(ctx, args),
        Command::Complete(args) => completion::complete(ctx, args),
    }
}

/// The global flags whose values are read later, on some paths only, checked before anything
/// runs: a malformed one is a usage error (exit 2, docs/spec.md §2) on every path — offline,
/// where it went unread and the run succeeded, and live, where `--request-timeout` failed as a
/// kubeconfig error (exit 3). An empty value is a flag not given (as kubectl takes it).
pub(crate) fn global_flags(global: &GlobalArgs) -> Result<(), crate::error::CommandError> {
    use crate::error::CommandError;
    kubernetes_version_flag(global)?;
    if let Some(t) = global.request_timeout.as_deref().filter(|t| !t.is_empty()) {
        if crate::k8s::config::parse_request_timeout(t).is_none() {
            return Err(CommandError::input(format!(
                "--request-timeout {t:?}: expected a duration such as 30s or 1m"
            )));
        }
    }
    Ok(())
}

/// `--kubernetes-version`, when given: the one parse every command reads it through (a malformed
/// value is bad input, exit 2). An empty one (`--kubernetes-version=`) is the flag not given, on
/// every command, as kubectl takes an empty flag value.
pub(crate) fn kubernetes_version_flag(
    global: &GlobalArgs,
) -> Result<Option<crate::cloud::ami::KubeVersion>, crate::error::CommandError> {
    global
        .kubernetes_version
        .as_deref()
        .filter(|v| !v.is_empty())
        .map(|v| {
            crate::cloud::ami::KubeVersion::parse(v).map_err(|e| {
                crate::error::CommandError::input(format!("--kubernetes-version: {e}"))
            })
        })
        .transpose()
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `--region`, else the AWS environment, else us-east-1 (the catalog's priced region).
pub(crate) fn resolve_region(ctx: &mut Context<'_>) -> String {
    if let Some(r) = &ctx.global.region {
        return r.clone();
    }
    for var in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
        if let Ok(r) = std::env::var(var) {
            if !r.is_empty() {
                return r;
            }
        }
    }
    ctx.warn("assuming: no region given (--region, AWS_REGION): us-east-1");
    "us-east-1".to_string()
}

/// `--now`: the instant evaluated (RFC 3339), else the current time; a bad one is an input error.
pub(crate) fn now_flag(text: Option<&str>) -> Result<i64, crate::error::CommandError> {
    match text {
        Some(t) => crate::model::time::parse_rfc3339(t).ok_or_else(|| {
            crate::error::CommandError::input(format!(
                "--now {t:?}: not an RFC 3339 time (e.g. 2024-06-24T12:00:00Z)"
            ))
        }),
        None => Ok(unix_now()),
    }
}

/// The flags `consolidate` and `nodes` decide with, as the disruption controller would: the
/// `--feature-gates` it reads (`SpotToSpotConsolidation`, `CapacityBuffer`, `ReservedCapacity`,
/// as [`gate_flag`](crate::cli::gate_flag) reads them), the AWS instance-type settings and the
/// clock; each unset one is the running controller's, else Karpenter's default.
pub(crate) fn decision_config(
    feature_gates: Option<&str>,
    type_settings: &crate::cli::TypeSettingsArgs,
    now: i64,
) -> Result<crate::usecases::consolidate::Config, crate::error::CommandError> {
    use crate::cli::gate_flag;
    Ok(crate::usecases::consolidate::Config {
        now,
        spot_to_spot: gate_flag(feature_gates, "SpotToSpotConsolidation")?,
        capacity_buffer: gate_flag(feature_gates, crate::usecases::provisioning::buffers::GATE)?,
        reserved_capacity: gate_flag(
            feature_gates,
            crate::usecases::provisioning::RESERVED_CAPACITY_GATE,
        )?,
        type_settings: type_settings.settings(),
        ..Default::default()
    })
}

/// `-l`: a kubectl label selector; a bad one is an input error naming the term.
pub(crate) fn selector_flag(
    text: Option<&str>,
) -> Result<Option<crate::model::selector::LabelSelector>, crate::error::CommandError> {
    text.map(crate::model::selector::LabelSelector::parse)
        .transpose()
        .map_err(|e| crate::error::CommandError::input(format!("-l {e}")))
}

/// A duration flag (`10m`, `90s`); a bad one is an input error naming the flag.
pub(crate) fn duration_flag(
    name: &str,
    text: &str,
) -> Result<std::time::Duration, crate::error::CommandError> {
    crate::disruption::time::parse_duration_flag(text).ok_or_else(|| {
        crate::error::CommandError::input(format!(
            "{name} {text:?}: expected a duration such as 10m"
        ))
    })
}

/// Starts `--watch` once the user agrees (`question` on the terminal, unless `yes`), its passes
/// made by `passes` from the context, paced by `clock`; Ctrl-C then ends it after the step in
/// flight. The worst pass's result.
pub(crate) fn watch_if_agreed<'w, 'c, P: crate::usecases::replace::watch::Passes>(
    ctx: &'w mut Context<'c>,
    question: &str,
    yes: bool,
    clock: &impl crate::usecases::clock::Clock,
    passes: impl FnOnce(&'w mut Context<'c>) -> P,
) -> crate::error::CommandResult {
    use crate::usecases::clock::SystemClock;
    use crate::usecases::replace::watch;
    // Anything printed must be on screen before the question (stdout may be buffered).
    let _ = ctx.out.flush();
    if !crate::cli::confirm::confirm(question, yes)? {
        return Ok(crate::error::Exit::Ok);
    }
    SystemClock::handle_interrupts(crate::cli::logging::notice_teller(ctx.global.log_format));
    watch::watch(clock, watch::INTERVAL, &mut passes(ctx))
}

/// A `--watch` pass's result: a closed stdout does not reopen by waiting, so it ends the watch.
pub(crate) fn watched(result: crate::error::CommandResult) -> crate::error::CommandResult {
    match result {
        Err(mut e) if crate::cli::output::output_closed() => {
            e.exit = crate::error::Exit::OutputClosed;
            Err(e)
        }
        result => result,
    }
}

/// A `--watch` pass that failed, told on stderr: the watch goes on.
pub(crate) fn still_watching(err: &mut dyn Write, error: &crate::error::CommandError) {
    let _ = writeln!(
        err,
        "error: {} (still watching)",
        crate::cli::output::one_line(&error.message)
    );
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

/// Runs `f` with `-o output` and every other global flag at its default; its result and stdout.
#[cfg(test)]
pub(crate) fn run_with_output(
    output: crate::cli::OutputFormat,
    f: impl FnOnce(&mut Context<'_>) -> crate::error::CommandResult,
) -> (crate::error::CommandResult, String) {
    let global = GlobalArgs {
        output,
        ..GlobalArgs::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result = f(&mut Context {
        global: &global,
        out: &mut out,
        err: &mut err,
    });
    (result, String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests;
