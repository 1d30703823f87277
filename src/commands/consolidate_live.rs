//! `kubectl karpenter consolidate --yes | --dry-run | --watch`: the decisions carried out
//! through `drift replace`'s pipeline ([`execute`]). Glue: flags → the operator lease → connect
//! (refused beside a running controller unless `--force`) → rounds, each shown as it starts →
//! the final table or `ReplacementReport`, once or under `--watch` (asked once on a terminal
//! unless `--yes`).

use super::live::{self, OperatorLease};
use super::{unix_now, Context};
use crate::cli::health::Health;
use crate::cli::render::consolidate as render;
use crate::cli::render::io_error as io;
use crate::cli::render::replace::{self as replace_render, ReplacePrinter};
use crate::cli::ConsolidateArgs;
use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::consolidate::execute::{self, Deciding, Round, ToldRecords};
use crate::usecases::consolidate::{self, Config};
use crate::usecases::replace::pipeline::{self, Preview};
use crate::usecases::replace::watch::Passes;
use crate::usecases::replace::{self, NodeOutcome, Settings};
use crate::usecases::Sink;

/// At most this many nodes in consolidation at once: the budgets pace it (Karpenter's
/// multi-node batch cap).
const MAX_PARALLEL: usize = 100;

/// Runs `consolidate` with `--yes`, `--dry-run` or `--watch`.
pub fn run(ctx: &mut Context<'_>, args: &ConsolidateArgs, config: &Config) -> CommandResult {
    let mut settings = Settings {
        max_parallel: MAX_PARALLEL,
        // do-not-disrupt is never overridden by consolidation: --force only lets it run
        // beside a controller.
        force: false,
        drain_timeout: super::duration_flag("--timeout", &args.timeout)?,
        ready_timeout: super::duration_flag("--ready-timeout", &args.ready_timeout)?,
        attempt: String::new(),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    };
    // Served before the lease is taken: a standby replica is live while it waits.
    let health = live::health(ctx, args.health.health_addr.as_deref())?;
    let lease = match args.dry_run {
        true => None,
        false => Some(live::take_lease(ctx, "consolidate", &args.lease, &health)?),
    };
    let lease = lease.as_ref();
    if args.watch {
        let watched = super::watch_if_agreed(
            ctx,
            "Consolidate as the cluster changes, without asking again?",
            args.yes,
            &health.clock(),
            |ctx| Watching {
                ctx,
                args,
                config,
                settings: &mut settings,
                lease,
                records: Default::default(),
            },
        );
        // A lost lease ends the watch (its clock says stop): that is the error.
        return live::unless_lost(lease, watched);
    }
    // A lost lease is the run's error (exit 4), not the nodes it left "interrupted".
    let outcomes = once(
        ctx,
        args,
        config,
        &mut settings,
        lease,
        &mut Default::default(),
    );
    let outcomes = outcomes.map_err(|e| lease.and_then(OperatorLease::lost).unwrap_or(e))?;
    if args.dry_run {
        replace_render::report(ctx.out, ctx.global, &outcomes, true).map_err(io)?;
        return Ok(if outcomes.is_empty() {
            Exit::Ok
        } else {
            Exit::Finding
        });
    }
    live::unless_lost(lease, finish(ctx, &outcomes))
}

/// `--watch`'s passes: each one a whole run of rounds, consent given.
struct Watching<'w, 'c> {
    ctx: &'w mut Context<'c>,
    args: &'w ConsolidateArgs,
    config: &'w Config,
    settings: &'w mut Settings,
    lease: Option<&'w OperatorLease>,
    /// The drift records told: once per record over the passes, not once per pass.
    records: ToldRecords,
}

impl Passes for Watching<'_, '_> {
    fn pass(&mut self) -> CommandResult {
        super::watched(
            once(
                self.ctx,
                self.args,
                self.config,
                self.settings,
                self.lease,
                &mut self.records,
            )
            .and_then(|outcomes| finish(self.ctx, &outcomes)),
        )
    }

    fn failed(&mut self, error: &CommandError) {
        super::still_watching(self.ctx.err, error);
    }
}

/// One run, consent given (`--yes`, or `--watch` agreed to): rounds until nothing more would
/// go, each shown as it starts (`--dry-run`: the first round, shown, nothing changed).
fn once(
    ctx: &mut Context<'_>,
    args: &ConsolidateArgs,
    config: &Config,
    settings: &mut Settings,
    lease: Option<&OperatorLease>,
    records: &mut ToldRecords,
) -> Result<Vec<NodeOutcome>, CommandError> {
    settings.attempt = crate::model::time::format_rfc3339(unix_now().max(0));
    let guard = (!args.dry_run).then_some(("consolidate", args.force));
    let connection = live::connect(ctx, args.catalog.as_deref(), guard, lease)?;
    let clock = lease.map_or_else(|| Health::default().clock(), |l| l.health().clock());
    let mut session = connection.live(&clock);
    // A controller runs here only with --force (or a dry run): the engine follows its release.
    let deciding = Deciding {
        config: config.clone(),
        controller: consolidate::controller(session.cluster)?,
    };
    deciding.prepare(&mut session);
    // The pipeline's re-plans read the buffers the decision reads.
    settings.capacity_buffers = consolidate::buffer_gate(config, deciding.controller.as_ref());
    let machine = !replace_render::tables(ctx.global);
    let headers = !ctx.global.no_headers;
    if args.dry_run {
        let round = execute::decide(&session, &deciding)?;
        for line in &round.warnings {
            ctx.warn(line);
        }
        for (node, record) in &round.drift_records {
            let (node, record) = (node.clone(), record.clone());
            ReplacePrinter::new(ctx.global, ctx.err)
                .emit(replace::Event::LeftToDriftReplace { node, record });
        }
        let settings = round.settings(settings);
        let preview = pipeline::preview(&session, &round.manifests, round.actions, &settings)?;
        if !machine {
            render::round(
                ctx.out,
                headers,
                1,
                round.report.is_none(),
                preview.outcomes(),
            )
            .map_err(io)?;
        }
        return Ok(preview.into_outcomes());
    }
    let Context { out, err, global } = ctx;
    let mut printer = ReplacePrinter::new(global, &mut **err);
    let mut number = 0;
    let mut proceed = |round: &Round, preview: &Preview| -> Result<bool, CommandError> {
        number += 1;
        if !machine {
            render::round(
                &mut **out,
                headers,
                number,
                round.resumes(),
                preview.outcomes(),
            )
            .map_err(io)?;
        }
        Ok(true)
    };
    execute::execute(
        &mut session,
        &deciding,
        settings,
        records,
        &mut printer,
        &mut proceed,
    )
}

/// The final table and summary (or the `ReplacementReport`), and the exit.
fn finish(ctx: &mut Context<'_>, outcomes: &[NodeOutcome]) -> CommandResult {
    if outcomes.is_empty() && !ctx.global.quiet {
        writeln!(
            ctx.err,
            "Nothing to consolidate now (`kubectl karpenter consolidate` says why, node by node)."
        )
        .map_err(io)?;
    }
    replace_render::report(ctx.out, ctx.global, outcomes, false).map_err(io)?;
    replace::verdict(outcomes)
}
