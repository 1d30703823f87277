//! `kubectl karpenter enable-drift` / `disable-drift` (docs/spec.md §7): flags → request → the
//! [`drift_gate`](crate::usecases::drift_gate) use case on the live cluster → the console.

use super::live;
use super::Context;
use crate::cli::render::gate::Console;
use crate::cli::DriftGateArgs;
use crate::error::{CommandError, CommandResult};
use crate::usecases::clock::SystemClock;
use crate::usecases::drift_gate::{self, Action, Request};

/// `enable-drift`.
pub fn enable(ctx: &mut Context<'_>, args: &DriftGateArgs) -> CommandResult {
    run(ctx, args, Action::Enable)
}

/// `disable-drift`.
pub fn disable(ctx: &mut Context<'_>, args: &DriftGateArgs) -> CommandResult {
    run(ctx, args, Action::Disable)
}

fn run(ctx: &mut Context<'_>, args: &DriftGateArgs, action: Action) -> CommandResult {
    let timeout = crate::disruption::time::parse_duration_flag(&args.timeout).ok_or_else(|| {
        CommandError::input(format!(
            "--timeout {:?}: expected a duration such as 5m",
            args.timeout
        ))
    })?;
    let live = live::connect_cluster(ctx)?;
    let request = Request {
        action,
        namespace: args
            .karpenter_namespace
            .clone()
            .or_else(|| ctx.global.namespace.clone()),
        restart: !args.no_restart,
        dry_run: args.dry_run,
        timeout,
    };
    let mut console = Console::new(ctx.global, ctx.out, ctx.err, action, args.yes);
    let outcome = drift_gate::run(&live.client, &SystemClock::new(), &request, &mut console)?;
    console.finish(&outcome, args.dry_run, request.restart)
}
