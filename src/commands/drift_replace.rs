//! `kubectl karpenter drift replace`: replace drifted (or named) nodes safely and at the
//! operator's pace. The workflow is [`crate::usecases::replace`]; this is the glue: flags →
//! connect → the drift verdicts → select → preview → ask → replace (or hand over to the
//! controller) → render, once or under `--watch`.

use super::live::{self, OperatorLease};
use super::{unix_now, Context};
use crate::cli::gate_flag;
use crate::cli::health::Health;
use crate::cli::render::io_error as io;
use crate::cli::render::replace::{self as render, ReplacePrinter};
use crate::cli::DriftReplaceArgs;
use crate::cloud::types::LaunchMode;
use crate::drift;
use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::drift_check::{self as drift_cmd, Config as CheckConfig};
use crate::usecases::live::TypeSettings;
use crate::usecases::provisioning::{buffers, RESERVED_CAPACITY_GATE};
use crate::usecases::replace::watch::Passes;
use crate::usecases::replace::{self, pipeline, select, via_controller, NodeOutcome, Settings};

/// Whether this run may change the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Consent {
    /// `--yes`, or a `--watch` confirmed once.
    Given,
    /// Ask on the terminal before the first change.
    Ask,
    /// Asked, and the answer was no.
    Declined,
}

/// What `--feature-gates` says of the gates `drift replace` follows, and the type settings
/// (unset: the controller's).
#[derive(Debug, Clone, Copy)]
struct GateFlags {
    /// `CapacityBuffer`: the buffers' virtual pods take their room in the re-plans.
    capacity_buffer: Option<bool>,
    /// `ReservedCapacity`: off, replacements target no capacity reservation.
    reserved_capacity: Option<bool>,
    /// `--vm-memory-overhead-percent`, `--reserved-enis`: they size the re-plans' types.
    type_settings: TypeSettings,
}

/// Runs `drift replace`.
pub fn run(ctx: &mut Context<'_>, args: &DriftReplaceArgs) -> CommandResult {
    if args.max_parallel == 0 {
        return Err(CommandError::input("--max-parallel must be at least 1"));
    }
    let gates = GateFlags {
        capacity_buffer: gate_flag(args.feature_gates.as_deref(), buffers::GATE)?,
        reserved_capacity: gate_flag(args.feature_gates.as_deref(), RESERVED_CAPACITY_GATE)?,
        type_settings: args.type_settings.settings(),
    };
    let mut settings = Settings {
        max_parallel: args.max_parallel,
        force: args.force,
        drain_timeout: super::duration_flag("--timeout", &args.timeout)?,
        ready_timeout: super::duration_flag("--ready-timeout", &args.ready_timeout)?,
        attempt: String::new(),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    };
    let check = CheckConfig {
        nodes: args.nodes.clone(),
        nodepools: args.nodepools.clone(),
        selector: super::selector_flag(args.selector.as_deref())?,
        catalog: args.catalog.clone(),
        ..CheckConfig::default()
    };
    // Its clock says stop once the lease is lost: no node starts after, and the watch ends.
    let health = Health::default();
    let lease = match args.dry_run {
        true => None,
        false => Some(live::take_lease(
            ctx,
            "drift replace",
            &args.lease,
            &health,
        )?),
    };
    let lease = lease.as_ref();
    if args.watch {
        let watched = super::watch_if_agreed(
            ctx,
            "Watch for drifted nodes and replace them as they drift, without asking again?",
            args.yes,
            &health.clock(),
            |ctx| Watching {
                ctx,
                args,
                gates,
                check: &check,
                settings: &mut settings,
                lease,
            },
        );
        return live::unless_lost(lease, watched);
    }
    let mut consent = if args.yes {
        Consent::Given
    } else {
        Consent::Ask
    };
    let outcomes = once(ctx, args, gates, &check, &mut settings, &mut consent, lease);
    let outcomes = outcomes.map_err(|e| lease.and_then(OperatorLease::lost).unwrap_or(e))?;
    if consent == Consent::Declined {
        writeln!(ctx.err, "Nothing changed.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    live::unless_lost(lease, finish(ctx, &outcomes, args.dry_run))
}

/// `--watch`'s passes: each one a whole run, consent given.
struct Watching<'w, 'c> {
    ctx: &'w mut Context<'c>,
    args: &'w DriftReplaceArgs,
    gates: GateFlags,
    check: &'w CheckConfig,
    settings: &'w mut Settings,
    lease: Option<&'w OperatorLease>,
}

impl Passes for Watching<'_, '_> {
    fn pass(&mut self) -> CommandResult {
        super::watched(
            once(
                self.ctx,
                self.args,
                self.gates,
                self.check,
                self.settings,
                &mut Consent::Given,
                self.lease,
            )
            .and_then(|outcomes| finish(self.ctx, &outcomes, false)),
        )
    }

    fn failed(&mut self, error: &CommandError) {
        super::still_watching(self.ctx.err, error);
    }
}

/// One run: the drifted (or named) nodes, the plan, the question (unless consent is given),
/// then every node replaced at the budget's pace.
fn once(
    ctx: &mut Context<'_>,
    args: &DriftReplaceArgs,
    gates: GateFlags,
    check: &CheckConfig,
    settings: &mut Settings,
    consent: &mut Consent,
    lease: Option<&OperatorLease>,
) -> Result<Vec<NodeOutcome>, CommandError> {
    settings.attempt = crate::model::time::format_rfc3339(unix_now().max(0));
    let guard = (!args.dry_run && !args.via_controller).then_some(("drift replace", args.force));
    let connection = live::connect(ctx, args.catalog.as_deref(), guard, lease)?;
    let (policies, controller) = live::controller_policies(ctx, &connection, &args.policies)?;
    settings.policies = policies;
    // `--feature-gates` wins over the controller's gates; its type settings size the re-plans.
    let controller = controller.as_ref();
    settings.capacity_buffers = gates
        .capacity_buffer
        .or(controller.and_then(|c| c.capacity_buffer))
        == Some(true);
    let reserved_capacity = gates
        .reserved_capacity
        .or(controller.and_then(|c| c.reserved_capacity));
    let clock = lease.map_or_else(|| Health::default().clock(), |l| l.health().clock());
    let mut session = connection.live(&clock);
    session.launch_mode = LaunchMode::of_gate(reserved_capacity);
    session.type_settings = gates.type_settings.or(TypeSettings::of(controller));
    let (manifests, buffer_lines) =
        replace::read_cluster_with_buffers(session.cluster, settings.capacity_buffers, unix_now())?;
    for line in &buffer_lines {
        ctx.warn(line);
    }
    // Drift verdicts (cluster + EC2).
    let (mut verdicts, _version, _client) = live::drift::gather(ctx, check)?;
    // Nodes whose instance the selection found going away are no capacity (ghosts).
    settings.gone_instances = replace::gone_instances(&verdicts);
    select::check_named(&verdicts, &args.nodes)?;
    drift_cmd::select_nodes(check, &mut verdicts)?;
    let evaluation = drift::evaluate(&verdicts);
    let mut printer = ReplacePrinter::new(ctx.global, ctx.err);
    let actions = select::select(
        &manifests,
        &verdicts,
        &evaluation,
        &args.nodes,
        &mut printer,
    );
    let machine = !render::tables(ctx.global);
    let headers = !ctx.global.no_headers;
    if args.via_controller {
        let handover =
            via_controller::prepare(&session, &manifests, actions, settings, &mut printer)?;
        if !machine {
            render::table(ctx.out, headers, handover.outcomes()).map_err(io)?;
        }
        let starting = handover.starting();
        if args.dry_run || starting.is_empty() {
            return Ok(handover.into_outcomes());
        }
        let question = render::handover_question(&starting, handover.queued(), &session.info.name);
        if !ask(ctx, &question, consent)? {
            return Ok(handover.into_outcomes());
        }
        let mut printer = ReplacePrinter::new(ctx.global, ctx.err);
        return via_controller::run(&session, handover, settings, &mut printer);
    }
    let recheck = select::Recheck::new(verdicts, &actions, &args.nodes);
    let preview =
        pipeline::preview(&session, &manifests, actions, settings)?.rechecking_drift(recheck);
    if !machine {
        render::table(ctx.out, headers, preview.outcomes()).map_err(io)?;
    }
    let starting = preview.starting();
    if args.dry_run || starting.is_empty() {
        return Ok(preview.into_outcomes());
    }
    let question = render::replace_question(&starting, preview.queued(), &session.info.name);
    if !ask(ctx, &question, consent)? {
        return Ok(preview.into_outcomes());
    }
    let mut printer = ReplacePrinter::new(ctx.global, ctx.err);
    pipeline::run(&mut session, preview, settings, &mut printer)
}

/// Asks on the terminal unless consent is given already (after the plan is flushed: stdout
/// may be buffered); records the answer.
fn ask(ctx: &mut Context<'_>, question: &str, consent: &mut Consent) -> Result<bool, CommandError> {
    if *consent == Consent::Ask {
        let _ = ctx.out.flush();
        *consent = if crate::cli::confirm::confirm(question, false)? {
            Consent::Given
        } else {
            Consent::Declined
        };
    }
    Ok(*consent == Consent::Given)
}

/// The report (document, or the final table and summary), and the exit.
fn finish(ctx: &mut Context<'_>, outcomes: &[NodeOutcome], dry_run: bool) -> CommandResult {
    render::report(ctx.out, ctx.global, outcomes, dry_run).map_err(io)?;
    replace::verdict(outcomes)
}
