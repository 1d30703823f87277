//! `kubectl karpenter drift check` (docs/spec.md §4): flags → [`Config`]; the facts gathered from `-f`
//! manifests here or from the cluster and EC2 by [`live::drift::gather`]; `--mark` writes the
//! verdicts; the [`drift_check`](crate::usecases::drift_check) use case decides, the renderer
//! shows it. Exit 1 when anything drifted.

use std::collections::BTreeMap;

use super::{live, Context};
use crate::cli::render;
use crate::cli::DriftCheckArgs;
use crate::cloud::Catalog;
use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::ami::VersionSource;
use crate::usecases::drift_check::{self, Config, Mode};

/// The use case's configuration from the flags.
pub fn config(ctx: &Context<'_>, args: &DriftCheckArgs) -> Result<Config, CommandError> {
    let mut ssm_params = BTreeMap::new();
    for p in &args.ssm_params {
        let (name, value) = p
            .split_once('=')
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
            .ok_or_else(|| {
                CommandError::input(format!(
                    "--ssm-param {p:?}: expected NAME=VALUE (e.g. /aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id=ami-0123)"
                ))
            })?;
        ssm_params.insert(name.to_string(), value.to_string());
    }
    let selector = super::selector_flag(args.selector.as_deref())?;
    let kubernetes_version =
        super::kubernetes_version_flag(ctx.global)?.map(|v| (v, VersionSource::Flag));
    Ok(Config {
        nodes: args.nodes.clone(),
        nodepools: args.nodepools.clone(),
        selector,
        ssm_params,
        kubernetes_version,
        catalog: args.catalog.clone(),
        mark: args.mark,
    })
}

/// Runs `drift check`.
pub fn check(ctx: &mut Context<'_>, args: &DriftCheckArgs) -> CommandResult {
    let config = config(ctx, args)?;
    let (snapshot, mode, version) = if args.filenames.is_empty() {
        let (snapshot, version, client) = live::drift::gather(ctx, &config)?;
        if config.mark {
            let mut selected = snapshot.clone();
            drift_check::select_nodes(&config, &mut selected)?;
            let updated = drift_check::mark(&client, &selected, args.dry_run)?;
            if let Some(warning) = drift_check::provisioner_mark_warning(&selected, &updated) {
                ctx.warn(&warning);
            }
            if args.dry_run {
                render::status(ctx.global, ctx.err, &render::drift::mark_preview(&updated));
            } else {
                ctx.note(&format!("--mark: {} node(s) updated", updated.len()));
            }
        }
        (snapshot, Mode::Live, Some(version))
    } else {
        if config.mark {
            return Err(CommandError::input(
                "--mark writes to the cluster and cannot be used with -f (offline)",
            ));
        }
        let manifests = crate::api::load_paths_in(
            &args.filenames,
            &mut std::io::stdin().lock(),
            crate::api::Scope::NoPods,
        )?;
        for warning in &manifests.warnings {
            ctx.warn(warning);
        }
        if manifests.nodes.is_empty() && manifests.node_claims.is_empty() {
            // No nodes in the files: the cluster's nodes against the files' pools (what-if).
            let (snapshot, version, _) =
                live::drift::gather_what_if(ctx, &config, Some(&manifests))?;
            ctx.note("what-if: the cluster's nodes against the NodePools and node classes of -f");
            return finish(
                ctx,
                drift_check::check(&config, snapshot, Mode::WhatIf, Some(version))?,
            );
        }
        let catalog = match &config.catalog {
            Some(path) => Some(Catalog::from_file(path)?),
            None => Catalog::embedded().ok(),
        };
        let offline = drift_check::gather_offline(
            &config,
            &manifests,
            catalog.as_ref(),
            ctx.global.region.as_deref(),
            super::unix_now(),
        )?;
        render::drift::gather_notes(ctx.global, ctx.err, &offline.notes);
        (offline.snapshot, Mode::Offline, offline.kubernetes_version)
    };
    finish(ctx, drift_check::check(&config, snapshot, mode, version)?)
}

fn finish(ctx: &mut Context<'_>, report: drift_check::DriftReport) -> CommandResult {
    render::drift::report(ctx.global, ctx.out, ctx.err, &report)?;
    Ok(if report.any_drifted() {
        Exit::Finding
    } else {
        Exit::Ok
    })
}
