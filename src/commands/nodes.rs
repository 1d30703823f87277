//! `kubectl karpenter nodes`: flags → request; the cluster read with its pods, EC2 asked when
//! wanted and reachable; the [`nodes`](crate::usecases::nodes) use case assembles the view, the
//! renderer shows it.

use super::live;
use super::Context;
use crate::cli::render;
use crate::cli::{NodesArgs, OutputFormat};
use crate::cloud::Catalog;
use crate::error::{CommandResult, Exit};
use crate::k8s::snapshot::{self, Scope};
use crate::usecases::consolidate;
use crate::usecases::nodes::{self, Ec2, Request};
use crate::usecases::provisioning::buffers;

/// Runs `nodes`.
pub fn run(ctx: &mut Context<'_>, args: &NodesArgs) -> CommandResult {
    let selector = super::selector_flag(args.selector.as_deref())?;
    let now = super::now_flag(args.now.as_deref())?;
    let config = super::decision_config(args.feature_gates.as_deref(), &args.type_settings, now)?;
    let offline = !args.filenames.is_empty();
    let cluster = if offline {
        None
    } else {
        Some(live::connect_cluster(ctx)?)
    };
    // PDBs and the controller too, for the consolidation decision. Offline (`-f`): the files,
    // each pool following its API generation, as `consolidate -f` reads them.
    let (manifests, controller) = match &cluster {
        None => {
            let mut m = crate::api::load_paths(&args.filenames, &mut std::io::stdin().lock())?;
            consolidate::assume_instances_running(&mut m);
            (m, None)
        }
        Some(cluster) if args.no_decision => (
            snapshot::read(&cluster.client, Scope::PODS)?.manifests,
            None,
        ),
        Some(cluster) => consolidate::gather_live(&cluster.client)?,
    };
    // The input's warnings, offline and live, as `consolidate` and `drift` print them; they stay
    // in `manifests` so that the decision tells only what its input adds (each line once).
    let mut manifests = manifests;
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    // The CONSOLIDATION column decides with the buffers `consolidate` reads (its gate).
    if let Some(cluster) = cluster.as_ref().filter(|_| !args.no_decision) {
        let gate = consolidate::buffer_gate(&config, controller.as_ref());
        for line in buffers::read_live_telling(&cluster.client, gate, &mut manifests)? {
            ctx.warn(&line);
            manifests.warnings.push(line);
        }
    }
    // `--min-values-policy` and `--preference-policy` win over the controller's.
    let (min_values, preferences) = (args.policies.min_values(), args.policies.preferences());
    let controller = match (min_values, preferences, controller) {
        (None, None, controller) => controller,
        (_, _, controller) => {
            let c = controller.unwrap_or_default();
            Some(consolidate::Controller {
                min_values_policy: min_values.or(c.min_values_policy),
                preference_policy: preferences.or(c.preference_policy),
                ..c
            })
        }
    };
    let cloud;
    let ec2 = if offline {
        Ec2::Manifests
    } else if args.no_aws {
        Ec2::Off
    } else if nodes::instance_ids(&manifests).is_empty() {
        Ec2::NothingToAsk
    } else {
        match live::connect_aws(ctx) {
            Ok(connected) => {
                cloud = connected;
                Ec2::Connected(&cloud)
            }
            Err(e) => Ec2::Unreachable(e.message),
        }
    };
    // The catalog: `--catalog`; else, for the decision with EC2 connected, `consolidate`'s own
    // (the live catalog and the capacity reservations the classes select); else the embedded
    // snapshot — `$/HOUR` is priced from the same one as the decision.
    let base = match (&args.catalog, &ec2) {
        (Some(path), _) => Catalog::from_file(path)?,
        (None, Ec2::Connected(cloud)) if !args.no_decision => {
            live::catalog_telling(ctx, *cloud, None, false)?
        }
        (None, _) => Catalog::embedded()?,
    };
    let (catalog, catalog_notes) = if args.no_decision {
        (base, Vec::new())
    } else {
        let (global, err) = (ctx.global, &mut *ctx.err);
        let gate = consolidate::reserved_capacity_gate(&config, controller.as_ref());
        let classes = &manifests.node_classes;
        nodes::decision_catalog(&ec2, base, classes, now, gate, &mut |note| {
            render::nodes::tell(global, err, &note)
        })
    };
    let flag = super::kubernetes_version_flag(ctx.global)?;
    let client = cluster
        .as_ref()
        .map(|c| &c.client as &dyn crate::k8s::Cluster);
    let (kubernetes_version, version_note) = nodes::kubernetes_version(flag, client);
    let request = Request {
        nodepools: args.nodepools.clone(),
        selector,
        image_names: matches!(
            ctx.global.output,
            OutputFormat::Wide | OutputFormat::Json | OutputFormat::Yaml
        ),
        kubernetes_version,
        now,
    };
    let (global, err) = (ctx.global, &mut *ctx.err);
    let mut view = nodes::view(&manifests, ec2, &catalog, &request, &mut |note| {
        render::nodes::tell(global, err, &note)
    })?;
    view.notes.extend(catalog_notes);
    if let Some(note) = version_note {
        render::nodes::tell(ctx.global, ctx.err, &note);
        view.notes.push(note);
    }
    if !args.no_decision {
        // The nodes' own region (their zones tell), else the flags'.
        let region = match view.nodes.iter().find_map(|n| n.region.clone()) {
            Some(r) => r,
            None => super::resolve_region(ctx),
        };
        let (global, err) = (ctx.global, &mut *ctx.err);
        nodes::with_decisions(
            &mut view,
            manifests,
            &catalog,
            &region,
            controller.as_ref(),
            &config,
            &mut |note| render::nodes::tell(global, err, &note),
        )?;
    }
    render::nodes::view(ctx.global, ctx.out, ctx.err, &view)?;
    Ok(Exit::Ok)
}
