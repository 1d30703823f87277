//! `kubectl karpenter provision` against a live cluster: plan from the live snapshot, confirm,
//! launch each NodeClaim on EC2, optionally wait for the nodes and pods; `--watch` keeps doing
//! it with Karpenter's batching window and removes nodes that stay empty for
//! `consolidateAfter`. The workflow is [`crate::usecases::provisioning`]; this is the glue:
//! flags → connect → call → render.

use std::time::Duration;

use super::live::{self, Session};
use super::Context;
use crate::cli::render::plan::{self as render, wait_status, EventPrinter};
use crate::cli::render::{io_error as io, status};
use crate::cli::{OutputFormat, ProvisionArgs};
use crate::cloud::types::{Cloud, LaunchMode};
use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::clock::SystemClock;
use crate::usecases::provisioning::plan::Round;
use crate::usecases::provisioning::{Selection, Waited};

/// Default for `--timeout` of `--wait`.
const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// Runs live `provision`.
pub fn run(ctx: &mut Context<'_>, args: &ProvisionArgs) -> CommandResult {
    let timeout = match &args.timeout {
        None => DEFAULT_WAIT,
        Some(t) => super::duration_flag("--timeout", t)?,
    };
    if args.watch && args.dry_run {
        return Err(CommandError::input(
            "--watch and --dry-run cannot be combined",
        ));
    }
    let guard = (!args.dry_run).then_some(("provision", args.force));
    // Served before the lease is taken: a standby replica is live while it waits.
    let health = live::health(ctx, args.health.health_addr.as_deref())?;
    let lease = match args.dry_run {
        true => None,
        false => Some(live::take_lease(ctx, "provision", &args.lease, &health)?),
    };
    let connection = live::connect(ctx, args.catalog.as_deref(), guard, lease.as_ref())?;
    let clock = health.clock();
    let mut session = connection.live(&clock);
    let mut selection = args.selection();
    selection.capacity_buffer_gate = args.capacity_buffer_gate()?;
    selection.reserved_capacity_gate = args.reserved_capacity_gate()?;
    live::follow_controller(ctx, &connection, &mut selection, &args.policies)?;
    // The gate off: open launch mode, templates without a capacity reservation preference.
    session.launch_mode = LaunchMode::of_gate(selection.reserved_capacity_gate);
    // A lease lost on the way is the run's error (exit 4), not what the stop made of it.
    let result = match args.watch {
        true => watch(ctx, &mut session, &selection, args.yes),
        false => once(ctx, args, &mut session, &selection, timeout),
    };
    live::unless_lost(lease.as_ref(), result)
}

fn once(
    ctx: &mut Context<'_>,
    args: &ProvisionArgs,
    session: &mut Session<'_>,
    selection: &Selection,
    timeout: Duration,
) -> CommandResult {
    let region = session.cloud.region();
    let round = session.plan_pending(selection, &mut EventPrinter::new(ctx.global, ctx.err))?;
    let Some(round) = round else {
        render::nothing_pending(ctx.out, ctx.global, &region).map_err(io)?;
        return Ok(Exit::Ok);
    };
    let plan = &round.plan;
    let machine = matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml);
    if !machine {
        render::plan(ctx.out, ctx.global, plan, &region).map_err(io)?;
    }
    let finding = if plan.unschedulable.is_empty() {
        Exit::Ok
    } else {
        Exit::Finding
    };
    if args.dry_run || (plan.node_claims.is_empty() && plan.static_scale_down.is_empty()) {
        if machine {
            render::plan(ctx.out, ctx.global, plan, &region).map_err(io)?;
        }
        return Ok(finding);
    }
    let Some(round) = confirmed(ctx, session, selection, round, args.yes)? else {
        writeln!(ctx.err, "Nothing launched.").map_err(io)?;
        return Ok(Exit::Ok);
    };
    let plan = &round.plan;
    let (launches, wait, removed) = {
        let mut events = EventPrinter::new(ctx.global, ctx.err);
        let launches = if plan.node_claims.is_empty() {
            Default::default()
        } else {
            session.launch_in_rounds(selection, &round, &mut events)?
        };
        // Static pools' surplus, as confirmed and still decided so on a fresh read.
        let removed = if plan.static_scale_down.is_empty() {
            Vec::new()
        } else {
            session.scale_down(selection, Some(&plan.static_scale_down), &mut events)?
        };
        let wait = if args.wait && !launches.launched.is_empty() {
            match session.wait(&launches.launched, timeout, &mut events)? {
                Waited::Ready(report) => Some(report),
                Waited::TimedOut {
                    after,
                    status,
                    unregistered,
                } => return Err(wait_error(render::timed_out(after, &status, &unregistered))),
                Waited::Stopped(status) => {
                    let why = format!("interrupted waiting: {}", wait_status(&status));
                    return Err(wait_error(why));
                }
            }
        } else {
            None
        };
        (launches, wait, removed)
    };
    if machine {
        render::result(
            ctx.out,
            ctx.global.output,
            plan,
            &region,
            &launches,
            wait.as_ref(),
            &removed,
        )
        .map_err(io)?;
    } else {
        if !launches.launched.is_empty() || !launches.failed.is_empty() {
            render::launches(ctx.out, !ctx.global.no_headers, &launches).map_err(io)?;
        }
        if !removed.is_empty() {
            crate::cli::render::replace::table(ctx.out, !ctx.global.no_headers, &removed)
                .map_err(io)?;
        }
    }
    if removed.iter().any(|o| o.status.is_failure()) {
        return crate::usecases::replace::verdict(&removed).map(|_| Exit::Finding);
    }
    ctx.note(&format!(
        "{} Kubernetes requests; AWS: {}",
        crate::k8s::Cluster::request_count(session.cluster),
        session.cloud.call_counts().summary()
    ));
    if let Some(first) = launches.failed.first() {
        let err = CommandError::remote(format!(
            "{} of {} NodeClaim(s) could not be launched; first: {}: {}",
            launches.failed.len(),
            launches.failed.len() + launches.launched.len(),
            first.node_claim,
            first.message()
        ));
        return Err(if first.is_permission() {
            err.with_hint(crate::usecases::live::AWS_PERMISSION_HINT)
        } else {
            err
        });
    }
    Ok(finding)
}

/// Asks before launching `round`; after a yes, reads the cluster again — the answer may come
/// long after the snapshot — and asks again, showing the new plan, if what would be launched
/// changed meanwhile. `None` when declined or when nothing is pending any more.
fn confirmed(
    ctx: &mut Context<'_>,
    session: &Session<'_>,
    selection: &Selection,
    mut round: Round,
    yes: bool,
) -> Result<Option<Round>, CommandError> {
    loop {
        let plan = &round.plan;
        let question = render::question(plan, &session.info.name);
        // The plan must be on screen before the question (stdout may be buffered).
        let _ = ctx.out.flush();
        if !crate::cli::confirm::confirm(&question, yes)? {
            return Ok(None);
        }
        if yes {
            return Ok(Some(round));
        }
        let events = &mut EventPrinter::new(ctx.global, ctx.err);
        let Some(fresh) = session.plan_pending(selection, events)? else {
            status(ctx.global, ctx.err, "no pod is pending any more");
            return Ok(None);
        };
        if fresh.same_launches(&round) {
            return Ok(Some(fresh));
        }
        status(
            ctx.global,
            ctx.err,
            "the cluster changed while you were deciding; the plan now:",
        );
        let region = session.cloud.region();
        render::plan(ctx.out, ctx.global, &fresh.plan, &region).map_err(io)?;
        round = fresh;
    }
}

/// A wait that ended before the nodes were Ready and the pods bound.
fn wait_error(why: String) -> CommandError {
    CommandError::remote(why).with_hint(
        "the instances are launched and stay; re-run with --wait to keep waiting (nothing is launched twice)",
    )
}

fn watch(
    ctx: &mut Context<'_>,
    session: &mut Session<'_>,
    selection: &Selection,
    yes: bool,
) -> CommandResult {
    // The plan must be on screen before the question (stdout may be buffered).
    let _ = ctx.out.flush();
    if !crate::cli::confirm::confirm(
        &format!(
            "Watch cluster {}: launch capacity for pending pods and remove empty nodes, without asking again?",
            session.info.name
        ),
        yes,
    )? {
        writeln!(ctx.err, "Nothing done.").map_err(io)?;
        return Ok(Exit::Ok);
    }
    SystemClock::handle_interrupts(crate::cli::logging::notice_teller(ctx.global.log_format));
    status(
        ctx.global,
        ctx.err,
        &format!(
            "watching cluster {} (Ctrl-C stops after the step in flight)",
            session.info.name
        ),
    );
    // A lost lease stops the watch (its clock says stop); `run` makes it the error.
    session.watch(selection, &mut EventPrinter::new(ctx.global, ctx.err))?;
    status(
        ctx.global,
        ctx.err,
        "stopped; everything done so far is recorded on the cluster and in EC2",
    );
    Ok(Exit::Ok)
}
