//! `kubectl karpenter ami`: flags → version and classes (from `-f` manifests, else the
//! cluster's); the [`ami`](crate::usecases::ami) use case resolves them live from SSM and EC2,
//! the renderer shows it; exit 3 when a class resolves no AMI.

use super::live;
use super::Context;
use crate::cli::render;
use crate::cli::AmiArgs;
use crate::error::{CommandResult, Exit};
use crate::usecases::ami::{self, VersionSource, ASSUMED_KUBERNETES_VERSION};

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &AmiArgs) -> CommandResult {
    let mut version = match super::kubernetes_version_flag(ctx.global)? {
        Some(v) => (v, VersionSource::Flag),
        None => (ASSUMED_KUBERNETES_VERSION, VersionSource::Assumed),
    };
    let manifests = if args.filenames.is_empty() {
        // Live: the node classes of every installed generation, the version from /version.
        let cluster = live::connect_cluster(ctx)?;
        if version.1 == VersionSource::Assumed {
            version = (
                live::kubernetes_version(ctx, &cluster)?,
                VersionSource::Cluster,
            );
        }
        ami::cluster_classes(&cluster.client)?
    } else {
        crate::api::load_paths_in(
            &args.filenames,
            &mut std::io::stdin().lock(),
            crate::api::Scope::NoPods,
        )?
    };
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    let classes = ami::select_classes(&manifests.node_classes, &args.nodeclasses)?;
    let (version, source) = version;
    if source == VersionSource::Assumed && ami::needs_version(&classes, version) {
        ctx.warn(&format!(
            "no --kubernetes-version (and no cluster to ask): assuming Kubernetes {version} for AMI aliases and amiFamily defaults"
        ));
    }
    let cloud = live::connect_aws(ctx)?;
    let report = ami::resolve(&cloud, &classes, version, source, super::unix_now());
    render::ami::report(ctx.global, ctx.out, &report)?;
    ctx.note(&report.aws_calls.summary());
    match report.failure() {
        Some(e) => Err(e),
        None => Ok(Exit::Ok),
    }
}
