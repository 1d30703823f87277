//! `kubectl-karpenter`: parse → run → map the outcome to the exit-code contract.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use kubectl_karpenter::cli::logging::JsonLines;
use kubectl_karpenter::cli::output::{one_line, output_closed, PipeWatch, TerminalSafe};
use kubectl_karpenter::cli::{Cli, LogFormat};
use kubectl_karpenter::commands::{self, Context};
use kubectl_karpenter::error::{redact, Exit};

/// A plan is built from millions of small allocations (typed YAML, pods, NodeClaims): mimalloc
/// makes them cheaper than glibc's allocator does (BENCHMARKS.md, B1e).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            if e.print()
                .is_err_and(|p| p.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::from(Exit::OutputClosed as u8);
            }
            return ExitCode::from(if e.use_stderr() { Exit::Input as u8 } else { 0 });
        }
    };
    redact::remember_environment();
    kubectl_karpenter::cli::logging::init(
        cli.global.verbose,
        cli.global.quiet,
        cli.global.color,
        cli.global.log_format,
    );
    kubectl_karpenter::api::schema::set_validation(cli.global.validate.into());
    tracing::debug!(
        version = env!("CARGO_PKG_VERSION"),
        "kubectl-karpenter starting"
    );
    let stdout = std::io::stdout();
    // Buffered when piped: a plan for thousands of pods is many small writes. On a terminal
    // std's own line buffering only, so what a confirmation asks about (the plan on stdout)
    // is on the screen before the question (on stderr) is.
    let mut out: Box<dyn Write> = if stdout.is_terminal() {
        Box::new(PipeWatch(stdout.lock()))
    } else {
        Box::new(std::io::BufWriter::new(PipeWatch(stdout.lock())))
    };
    // Not locked for the whole run: progress bars, log lines and the Ctrl-C handler write to
    // stderr from other threads (each write locks it on its own; stderr is unbuffered anyway).
    // Under --log-format json each line becomes a JSON object (escaped and redacted first).
    let mut err: Box<dyn Write> = match cli.global.log_format {
        LogFormat::Text => Box::new(TerminalSafe(std::io::stderr())),
        LogFormat::Json => Box::new(TerminalSafe(JsonLines::new(std::io::stderr()))),
    };
    let mut ctx = Context {
        global: &cli.global,
        out: &mut *out,
        err: &mut *err,
    };
    let result = commands::run(&mut ctx, &cli.command);
    let _ = ctx.out.flush();
    // The reader has what it wanted; whatever failed after that is the closed pipe itself.
    if output_closed() {
        return ExitCode::from(Exit::OutputClosed as u8);
    }
    match result {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(e) => {
            // One line each, whatever the message quotes (names, server messages).
            let _ = writeln!(err, "error: {}", one_line(&e.message));
            if let Some(hint) = &e.hint {
                let _ = writeln!(err, "hint: {}", one_line(hint));
            }
            ExitCode::from(e.exit as u8)
        }
    }
}
