//! What the running Karpenter controller decides for a live plan: its `MinValuesPolicy` and
//! `PreferencePolicy`, and its `NodeOverlay` and `StaticCapacity` feature gates (read from its
//! Deployment; a flag wins over the controller's setting, docs/karpenter.md §6.10–6.11).

use super::Connection;
use crate::cli::SchedulingPolicyArgs;
use crate::commands::Context;
use crate::error::{CommandError, Exit};
use crate::scheduling::{MinValuesPolicy, Policies, PreferencePolicy};
use crate::usecases::consolidate::Controller;
use crate::usecases::provisioning::Selection;

/// The policies a live decision follows: each flag given, else the running controller's
/// (`--min-values-policy` / `MIN_VALUES_POLICY`, `--preference-policy` / `PREFERENCE_POLICY`
/// in its container), else Karpenter's default. A value Karpenter would refuse is bad input; a
/// controller that cannot be read leaves the defaults, said on stderr.
/// The second value: the controller read (its gates and instance-type settings), if any.
pub fn controller_policies(
    ctx: &mut Context<'_>,
    connection: &Connection,
    flags: &SchedulingPolicyArgs,
) -> Result<(Policies, Option<Controller>), CommandError> {
    let controller = controller_settings(ctx, connection, flags)?;
    Ok((follow_policies(ctx, controller.as_ref(), flags), controller))
}

/// Fills `selection` with what the controller decides: its policies where no flag gave one,
/// its `NodeOverlay` and `StaticCapacity` gates (Karpenter applies overlays, and keeps static
/// pools, only behind them), and its `CapacityBuffer` and `ReservedCapacity` gates where
/// `--feature-gates` did not set them.
pub fn follow_controller(
    ctx: &mut Context<'_>,
    connection: &Connection,
    selection: &mut Selection,
    flags: &SchedulingPolicyArgs,
) -> Result<(), CommandError> {
    let controller = controller_settings(ctx, connection, flags)?;
    let policies = follow_policies(ctx, controller.as_ref(), flags);
    selection.min_values_policy = policies.min_values;
    selection.preference_policy = policies.preferences;
    selection.node_overlay_gate = controller.as_ref().and_then(|c| c.node_overlay);
    // `--feature-gates CapacityBuffer=…` wins over the controller's gate.
    selection.capacity_buffer_gate = selection
        .capacity_buffer_gate
        .or(controller.as_ref().and_then(|c| c.capacity_buffer));
    // `--feature-gates ReservedCapacity=…` wins over the controller's gate too.
    selection.reserved_capacity_gate = selection
        .reserved_capacity_gate
        .or(controller.as_ref().and_then(|c| c.reserved_capacity));
    // `--vm-memory-overhead-percent` and `--reserved-enis` win over the controller's settings.
    if let Some(c) = controller.as_ref() {
        selection.vm_memory_overhead_percent = selection
            .vm_memory_overhead_percent
            .or(c.vm_memory_overhead_percent);
        selection.reserved_enis = selection.reserved_enis.or(c.reserved_enis);
    }
    selection.static_capacity_gate = controller.and_then(|c| c.static_capacity);
    Ok(())
}

/// Each policy from its flag, else the controller's (said on stderr), else the default.
fn follow_policies(
    ctx: &mut Context<'_>,
    controller: Option<&Controller>,
    flags: &SchedulingPolicyArgs,
) -> Policies {
    Policies {
        min_values: follow(
            ctx,
            "MinValuesPolicy",
            flags.min_values(),
            controller.and_then(|c| c.min_values_policy),
            MinValuesPolicy::as_str,
        ),
        preferences: follow(
            ctx,
            "PreferencePolicy",
            flags.preferences(),
            controller.and_then(|c| c.preference_policy),
            PreferencePolicy::as_str,
        ),
    }
}

/// The flag's value, else the controller's `name` (said on stderr), else the default.
fn follow<T: Copy + Default>(
    ctx: &mut Context<'_>,
    name: &str,
    given: Option<T>,
    theirs: Option<T>,
    as_str: fn(T) -> &'static str,
) -> T {
    match (given, theirs) {
        (Some(given), _) => given,
        (None, Some(theirs)) => {
            ctx.note(&format!(
                "the Karpenter controller's {name} is {}",
                as_str(theirs)
            ));
            theirs
        }
        (None, None) => T::default(),
    }
}

/// The running Karpenter controller's settings a plan follows, `None` when none runs or it
/// cannot be read. A policy Karpenter would refuse is bad input unless a policy flag is given
/// (the error names the setting and the flag that decides without it).
fn controller_settings(
    ctx: &mut Context<'_>,
    connection: &Connection,
    flags: &SchedulingPolicyArgs,
) -> Result<Option<Controller>, CommandError> {
    let flags_decide = flags.min_values().is_some() || flags.preferences().is_some();
    match crate::usecases::consolidate::controller(&connection.cluster.client) {
        Ok(c) => Ok(c),
        Err(e) if e.exit == Exit::Input && !flags_decide => Err(e),
        Err(e) => {
            ctx.note(&format!(
                "the Karpenter controller's settings could not be read ({}): NodeOverlays are applied and, without --min-values-policy / --preference-policy, MinValuesPolicy is Strict and PreferencePolicy Respect",
                e.message
            ));
            Ok(None)
        }
    }
}
