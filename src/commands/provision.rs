//! `kubectl karpenter provision`: plan (and, on a live cluster, launch) the capacity for pending
//! pods.
//!
//! Live mode (no `-f`) is in [`super::provision_live`].
//!
//! Offline mode (`-f`) reads manifests, sizes instance types from the embedded catalog (or
//! `--catalog`), runs the solver and prints the plan. It needs no cluster and no AWS account.

use super::Context;
use crate::cli::render;
use crate::cli::ProvisionArgs;
use crate::cloud::Catalog;
use crate::error::{CommandError, CommandResult, Exit};
use crate::scheduling;
use crate::usecases::provisioning::input::{build_input, reschedule_deleting, CatalogSizing};
use crate::usecases::provisioning::{assumptions, buffers};
use crate::usecases::provisioning::{set_aside, statics};

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &ProvisionArgs) -> CommandResult {
    if args.filenames.is_empty() {
        return super::provision_live::run(ctx, args);
    }
    if args.watch {
        return Err(CommandError::input(
            "--watch needs a cluster: it cannot be combined with -f",
        ));
    }
    let mut manifests = crate::api::load_paths(&args.filenames, &mut std::io::stdin().lock())?;
    manifests.check_references()?;
    let catalog = match &args.catalog {
        Some(path) => Catalog::from_file(path)?,
        None => Catalog::embedded()?,
    };
    let buffer_gate = args.capacity_buffer_gate()?.unwrap_or(false);
    for warning in buffers::apply_gate(&mut manifests, buffer_gate, super::unix_now()) {
        ctx.warn(&warning);
    }
    let region = super::resolve_region(ctx);
    for note in catalog.notes() {
        ctx.note(&note);
    }
    if !manifests.ignored.is_empty() {
        ctx.note(&format!(
            "ignored {} objects that do not affect a plan: {}",
            manifests.ignored.len(),
            manifests.ignored.join(", ")
        ));
    }
    if manifests.gated_pods > 0 {
        let n = manifests.gated_pods;
        let pods = if n == 1 {
            "pending pod is"
        } else {
            "pending pods are"
        };
        ctx.warn(&format!(
            "{n} {pods} held back by spec.schedulingGates: Karpenter provisions nothing for them until their gates are removed (-v names them)"
        ));
    }
    if let Some(line) = set_aside::daemon_set_pods(&manifests) {
        ctx.warn(&line);
    }
    if let Some(groups) = catalog.placement_groups() {
        for line in assumptions::placement_groups_not_found(&mut manifests, groups) {
            ctx.warn(&line);
        }
    }
    for assumption in assumptions::offline(
        &manifests,
        catalog.has_spot_prices(),
        catalog.has_reservations(),
        catalog.checks_network_interfaces(),
        catalog.placement_groups().is_some(),
        catalog.checks_processor_and_placement(),
    ) {
        let text = format!("assuming: {assumption}");
        if assumption.said_by_default() {
            ctx.warn(&text);
        } else {
            ctx.note(&text);
        }
    }
    let selection = crate::usecases::provisioning::Selection {
        reserved_capacity_gate: args.reserved_capacity_gate()?,
        ..args.selection()
    };
    let mut input = build_input(
        &mut manifests,
        &selection,
        &mut CatalogSizing::new(&catalog, &region),
    )?;
    let moved = reschedule_deleting(&mut input, &manifests.pdbs, super::unix_now())?;
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    if input.pools.is_empty() {
        ctx.warn("no NodePool or Provisioner in the input: nothing can be launched");
    }
    let mut plan = scheduling::solve_rounds(&input);
    plan.static_scale_down = statics::scale_downs(&manifests, &input, super::unix_now());
    plan.from_deleting_nodes = moved;
    scheduling::split_buffers(&mut plan, &input.pods);
    render::plan::plan(ctx.out, ctx.global, &plan, &region)
        .map_err(|e| CommandError::remote(format!("writing output: {e}")))?;
    Ok(if plan.unschedulable.is_empty() {
        Exit::Ok
    } else {
        Exit::Finding
    })
}
