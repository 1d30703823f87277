//! What the running Karpenter controller decides for a live plan: its `MinValuesPolicy` and
//! its `NodeOverlay` and `StaticCapacity` feature gates (read from its Deployment; the flag
//! `--feature-gates` wins over `FEATURE_GATES`, docs/karpenter.md §6.10–6.11).

use super::Connection;
use crate::commands::Context;
use crate::error::{CommandError, Exit};
use crate::scheduling::MinValuesPolicy;
use crate::usecases::consolidate::Controller;
use crate::usecases::provisioning::Selection;

/// The running Karpenter controller's `MinValuesPolicy` (`--min-values-policy` /
/// `MIN_VALUES_POLICY` in its container), which the plan follows without the flag. A value
/// Karpenter would refuse is bad input; a controller that cannot be read leaves the default
/// (Strict), said on stderr.
pub fn controller_policy(
    ctx: &mut Context<'_>,
    connection: &Connection,
) -> Result<Option<MinValuesPolicy>, CommandError> {
    let policy = controller_settings(ctx, connection, false)?.and_then(|c| c.min_values_policy);
    if let Some(p) = policy {
        note_policy(ctx, p);
    }
    Ok(policy)
}

/// Fills `selection` with what the controller decides: its policy unless `--min-values-policy`
/// gave one (`policy_given`), and its `NodeOverlay` and `StaticCapacity` gates (Karpenter
/// applies overlays, and keeps static pools, only behind them).
pub fn follow_controller(
    ctx: &mut Context<'_>,
    connection: &Connection,
    selection: &mut Selection,
    policy_given: bool,
) -> Result<(), CommandError> {
    let controller = controller_settings(ctx, connection, policy_given)?;
    if !policy_given {
        if let Some(policy) = controller.as_ref().and_then(|c| c.min_values_policy) {
            note_policy(ctx, policy);
            selection.min_values_policy = policy;
        }
    }
    selection.node_overlay_gate = controller.as_ref().and_then(|c| c.node_overlay);
    if controller.as_ref().and_then(|c| c.capacity_buffer) == Some(true) {
        ctx.warn(crate::commands::provision::LIVE_BUFFERS);
    }
    selection.static_capacity_gate = controller.and_then(|c| c.static_capacity);
    Ok(())
}

/// Says which `MinValuesPolicy` of the controller's a plan follows.
fn note_policy(ctx: &mut Context<'_>, policy: MinValuesPolicy) {
    ctx.note(&format!(
        "the Karpenter controller's MinValuesPolicy is {}",
        policy.as_str()
    ));
}

/// The running Karpenter controller's settings a plan follows, `None` when none runs or it
/// cannot be read. A `MinValuesPolicy` Karpenter would refuse is bad input unless
/// `policy_given` (the flag decides).
fn controller_settings(
    ctx: &mut Context<'_>,
    connection: &Connection,
    policy_given: bool,
) -> Result<Option<Controller>, CommandError> {
    match crate::usecases::consolidate::controller(&connection.cluster.client) {
        Ok(c) => Ok(c),
        Err(e) if e.exit == Exit::Input && !policy_given => Err(e),
        Err(e) => {
            ctx.note(&format!(
                "the Karpenter controller's settings could not be read ({}): NodeOverlays are applied and, without --min-values-policy, MinValuesPolicy is Strict",
                e.message
            ));
            Ok(None)
        }
    }
}
