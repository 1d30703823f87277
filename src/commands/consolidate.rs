//! `kubectl karpenter consolidate` (docs/spec.md §9): flags → [`Config`]; the objects from `-f`
//! manifests (embedded catalog or `--catalog`) or from the cluster (the controller's release
//! and `FEATURE_GATES`, the live catalog); the
//! [`consolidate`](crate::usecases::consolidate) use case decides, the renderer shows it.
//! Exit 1 when Karpenter would do something.

use super::{live, Context};
use crate::cli::render;
use crate::cli::ConsolidateArgs;
use crate::cloud::types::Cloud;
use crate::cloud::Catalog;
use crate::error::{CommandError, CommandResult, Exit};
use crate::usecases::consolidate::{self, Config};
use crate::usecases::live::fill_subnet_zones;
use crate::usecases::provisioning::input::CatalogSizing;

/// The use case's configuration from the flags.
pub fn config(args: &ConsolidateArgs) -> Result<Config, CommandError> {
    let now = super::now_flag(args.now.as_deref())?;
    let gates = args.feature_gates.as_deref();
    Ok(Config {
        nodes: args.nodes.clone(),
        nodepools: args.nodepools.clone(),
        min_values_policy: args.policies.min_values(),
        preference_policy: args.policies.preferences(),
        ..super::decision_config(gates, &args.type_settings, now)?
    })
}

/// Runs `consolidate`.
pub fn run(ctx: &mut Context<'_>, args: &ConsolidateArgs) -> CommandResult {
    let config = config(args)?;
    let acting = args.yes || args.watch || (args.dry_run && args.filenames.is_empty());
    if acting && args.now.is_some() {
        return Err(CommandError::input(
            "--now is for the report: --yes, --watch and a live --dry-run decide at the current time",
        ));
    }
    if args.yes || args.watch {
        if !args.filenames.is_empty() {
            return Err(CommandError::input(
                "--yes and --watch act on a live cluster: drop -f (offline, the report is the dry run)",
            ));
        }
        return super::consolidate_live::run(ctx, args, &config);
    }
    if args.dry_run && args.filenames.is_empty() {
        return super::consolidate_live::run(ctx, args, &config);
    }
    let input = if args.filenames.is_empty() {
        let cluster = live::connect_cluster(ctx)?;
        let (mut manifests, controller) = consolidate::gather_live(&cluster.client)?;
        match &controller {
            Some(c) => ctx.note(&format!(
                "Karpenter controller {}: its release and FEATURE_GATES decide",
                c.version
                    .map_or_else(|| "of unknown version".into(), |v| v.to_string())
            )),
            None => ctx.note(
                "no Karpenter controller in the cluster: each pool follows its API generation",
            ),
        }
        let mut gone = Default::default();
        let (catalog, region) = match &args.catalog {
            Some(path) => {
                ctx.warn("assuming: every node's EC2 instance is running (--catalog: AWS is not asked; without it a node whose instance is gone is neither capacity nor a candidate)");
                (Catalog::from_file(path)?, super::resolve_region(ctx))
            }
            None => {
                let cloud = live::connect_aws(ctx)?;
                gone = consolidate::gone_instances(&cloud, &manifests)?;
                let catalog = live::catalog(ctx, &cloud, None)?;
                let (catalog, warnings) = consolidate::decision_catalog(
                    Some(&cloud),
                    catalog,
                    &manifests.node_classes,
                    config.now,
                    consolidate::reserved_capacity_gate(&config, controller.as_ref()),
                )?;
                for warning in &warnings {
                    ctx.warn(warning);
                }
                // Replacements offered where the classes' subnets are, as `consolidate --yes`.
                let classes = &mut manifests.node_classes;
                let cache = &mut Default::default();
                let pools = &manifests.node_pools;
                for warning in fill_subnet_zones(&cloud, classes, pools, config.now, cache) {
                    ctx.warn(&warning);
                }
                (catalog, cloud.region())
            }
        };
        let buffers = consolidate::read_live_buffers(
            &cluster.client,
            &config,
            controller.as_ref(),
            &mut manifests,
        )?;
        for warning in &buffers {
            ctx.warn(warning);
        }
        let mut sizing = CatalogSizing::new(&catalog, &region);
        let mut input =
            consolidate::build_input(&mut manifests, &mut sizing, &config, controller.as_ref())?;
        // The input's warnings (a pod's unread do-not-evict, …), as offline; the buffers' once.
        for warning in manifests.warnings.iter().filter(|w| !buffers.contains(w)) {
            ctx.warn(warning);
        }
        consolidate::leave_out_gone(&mut input, &gone);
        input
    } else {
        let mut manifests = crate::api::load_paths(&args.filenames, &mut std::io::stdin().lock())?;
        consolidate::assume_instances_running(&mut manifests);
        let catalog = match &args.catalog {
            Some(path) => Catalog::from_file(path)?,
            None => Catalog::embedded()?,
        };
        let region = super::resolve_region(ctx);
        let mut sizing = CatalogSizing::new(&catalog, &region);
        let input = consolidate::build_input(&mut manifests, &mut sizing, &config, None)?;
        for warning in &manifests.warnings {
            ctx.warn(warning);
        }
        input
    };
    let report = consolidate::evaluate(&config, input)?;
    render::consolidate::report(ctx.global, ctx.out, ctx.err, &report)?;
    Ok(if report.actions.is_empty() {
        Exit::Ok
    } else {
        Exit::Finding
    })
}
