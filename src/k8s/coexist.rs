//! Is an in-cluster Karpenter controller running? (docs/spec.md §6: two autoscalers acting on the same
//! NodePools is an outage, so mutating commands refuse with exit 4 unless `--force`.)
//!
//! A Deployment, in any namespace, counts as Karpenter's controller when it is labelled
//! `app.kubernetes.io/name=karpenter` (the Helm chart), is named `karpenter`, or runs an image
//! whose repository ends in `karpenter/controller` or `/karpenter` (the v0.2x images). It is
//! *running* when it has ready replicas.

use serde::Deserialize;

use super::ops::{self, ListQuery};
use super::{Cluster, ClusterError};
use crate::error::CommandError;

/// A Karpenter controller Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// Namespace.
    pub namespace: String,
    /// Deployment name.
    pub name: String,
    /// `status.readyReplicas`.
    pub ready_replicas: i64,
    /// The controller container's image.
    pub image: String,
    /// Version: the `app.kubernetes.io/version` label, else the image tag.
    pub version: Option<String>,
}

impl Controller {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The slim Deployment read here (and by `enable-drift`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    /// Metadata.
    #[serde(default)]
    pub metadata: crate::api::meta::ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: DeploymentSpec,
    /// Status.
    #[serde(default)]
    pub status: DeploymentStatus,
}

/// `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentSpec {
    /// Replicas.
    pub replicas: Option<i64>,
    /// Pod template.
    #[serde(default)]
    pub template: PodTemplate,
}

/// `spec.template`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodTemplate {
    /// Pod spec.
    #[serde(default)]
    pub spec: PodSpec,
}

/// `spec.template.spec`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodSpec {
    /// Containers.
    #[serde(default)]
    pub containers: Vec<Container>,
}

/// A container.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Container {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Image.
    #[serde(default)]
    pub image: String,
    /// Env.
    #[serde(default)]
    pub env: Vec<EnvVar>,
}

/// An env var (value form only; `valueFrom` is kept as absent).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct EnvVar {
    /// Name.
    pub name: String,
    /// Value.
    pub value: Option<String>,
}

/// `status`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    /// Ready replicas.
    #[serde(default)]
    pub ready_replicas: i64,
    /// Replicas.
    #[serde(default)]
    pub replicas: i64,
    /// Updated replicas.
    #[serde(default)]
    pub updated_replicas: i64,
    /// Available replicas.
    #[serde(default)]
    pub available_replicas: i64,
    /// Observed generation.
    #[serde(default)]
    pub observed_generation: i64,
}

fn image_is_karpenter(image: &str) -> bool {
    let repository = image.split('@').next().unwrap_or(image);
    let repository = match repository.rsplit_once(':') {
        // A colon after the last slash is a tag, not a registry port.
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => repository,
    };
    repository.ends_with("karpenter/controller")
        || repository.ends_with("/karpenter")
        || repository == "karpenter"
}

fn image_tag(image: &str) -> Option<String> {
    let repository = image.split('@').next().unwrap_or(image);
    repository
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map(|(_, tag)| tag.to_string())
}

/// Whether a Deployment is a Karpenter controller; its controller container if so.
pub fn controller_container(d: &Deployment) -> Option<&Container> {
    let labels = d.metadata.labels.clone().unwrap_or_default();
    let by_image = d
        .spec
        .template
        .spec
        .containers
        .iter()
        .find(|c| image_is_karpenter(&c.image));
    if by_image.is_some() {
        return by_image;
    }
    let named = labels.get("app.kubernetes.io/name").map(String::as_str) == Some("karpenter")
        || d.metadata.name.as_deref() == Some("karpenter");
    if named {
        let containers = &d.spec.template.spec.containers;
        return containers
            .iter()
            .find(|c| c.name == "controller")
            .or_else(|| containers.first());
    }
    None
}

/// Every Karpenter controller Deployment, running or not, sorted by namespace/name.
pub fn find_controllers(c: &dyn Cluster) -> Result<Vec<(Controller, Deployment)>, ClusterError> {
    let mut out = Vec::new();
    ops::list(
        c,
        "/apis/apps/v1/deployments",
        &ListQuery::default(),
        |d: Deployment| {
            let Some(container) = controller_container(&d) else {
                return;
            };
            let labels = d.metadata.labels.clone().unwrap_or_default();
            let controller = Controller {
                namespace: d.metadata.namespace.clone().unwrap_or_default(),
                name: d.metadata.name.clone().unwrap_or_default(),
                ready_replicas: d.status.ready_replicas,
                image: container.image.clone(),
                version: labels
                    .get("app.kubernetes.io/version")
                    .cloned()
                    .or_else(|| image_tag(&container.image)),
            };
            out.push((controller, d));
        },
    )?;
    out.sort_by_key(|(c, _)| c.key());
    Ok(out)
}

/// Refuses (exit 4) when a Karpenter controller has ready replicas, unless `force`; with
/// `force` it returns the warning to print.
pub fn check(c: &dyn Cluster, command: &str, force: bool) -> Result<Option<String>, CommandError> {
    let running: Vec<Controller> = find_controllers(c)?
        .into_iter()
        .map(|(c, _)| c)
        .filter(|c| c.ready_replicas > 0)
        .collect();
    let Some(first) = running.first() else {
        return Ok(None);
    };
    let what = format!(
        "a Karpenter controller is running in the cluster (Deployment {}, {} ready, image {})",
        first.key(),
        first.ready_replicas,
        first.image
    );
    if force {
        let mut warning = format!("{what}: --force given, {command} goes ahead anyway");
        if collects_claimless_instances(first) {
            warning.push_str(&format!(
                "; but the controller's instance garbage collection terminates, about 30 s after \
                 launch, every instance tagged for this cluster's NodePools that no NodeClaim \
                 names, and deletes its Node: the instances {command} launches (it creates no \
                 NodeClaim) will not last while it runs"
            ));
        }
        return Ok(Some(warning));
    }
    // From v0.27 on the controller's instance GC terminates this tool's launches in any pool, so
    // "they manage different NodePools" is no way out there.
    let hint = match (command, collects_claimless_instances(first)) {
        ("drift replace", _) => "use `drift replace --via-controller` to pace the controller's own replacements, scale the controller to 0, or pass --force",
        (_, true) => "scale the controller to 0 first (its instance garbage collection terminates, in any NodePool, the instances this tool launches: no NodeClaim names them), or pass --force while it is being scaled down",
        (_, false) => "scale the controller to 0 first, or pass --force if you know they manage different NodePools",
    };
    Err(CommandError::refused(format!(
        "{what}: {command} would fight it over the same NodePools"
    ))
    .with_hint(hint))
}

/// Whether `controller` terminates the instances this tool launches (they carry Karpenter's tags
/// but no NodeClaim or Machine names them): aws v1.14.1
/// `pkg/controllers/nodeclaim/garbagecollection/controller.go Reconcile` deletes every instance
/// `cloudProvider.List` returns (`instance.go List`: tag-keys `karpenter.sh/nodepool` and
/// `karpenter.k8s.aws/ec2nodeclass`, `eks:eks-cluster-name=<cluster>`, all on this tool's
/// launches) whose provider id no NodeClaim has, 30 s after its launch, and its Node; v0.27's
/// `machine/garbagecollect` and v0.32–v0.37's did the same by `karpenter.sh/provisioner-name` /
/// `karpenter.sh/nodepool` and `kubernetes.io/cluster/<cluster>`. Releases before v0.27 had no
/// such controller; an unknown version is taken to have it.
fn collects_claimless_instances(controller: &Controller) -> bool {
    use crate::karpenter_install::release::{parse_version, Version};
    let since = Version {
        major: 0,
        minor: 27,
        patch: 0,
    };
    controller
        .version
        .as_deref()
        .and_then(parse_version)
        .is_none_or(|v| v >= since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn karpenter_images_are_recognised() {
        for image in [
            "public.ecr.aws/karpenter/controller:v0.27.6@sha256:abc",
            "public.ecr.aws/karpenter/controller:1.0.0",
            "localhost:5000/karpenter/controller",
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/karpenter:v0.22.0",
        ] {
            assert!(image_is_karpenter(image), "{image}");
        }
        for image in [
            "nginx:1.25",
            "karpenter-exporter:1",
            "registry:5000/other/controller:1",
        ] {
            assert!(!image_is_karpenter(image), "{image}");
        }
        assert_eq!(
            image_tag("public.ecr.aws/karpenter/controller:v0.27.6@sha256:a").as_deref(),
            Some("v0.27.6")
        );
        assert_eq!(image_tag("localhost:5000/karpenter/controller"), None);
    }

    /// A ready controller Deployment `karpenter/karpenter` running `image`.
    fn put_running_controller(cluster: &crate::k8s::fake::FakeCluster, image: &str) {
        cluster.put(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "karpenter", "namespace": "karpenter"},
            "spec": {"template": {"spec": {"containers": [{"name": "controller",
                "image": image}]}}},
            "status": {"readyReplicas": 1}
        }));
    }

    /// aws v1.14.1 `pkg/controllers/nodeclaim/garbagecollection/suite_test.go` "should delete an
    /// instance if there is no NodeClaim owner" (`Reconcile`: 30 s after launch): the instances
    /// this tool launches carry the tags `instance.go List` filters on and no NodeClaim names
    /// them, so a running controller terminates them. **Differed, fixed (s29)**: `--force` said
    /// only "goes ahead anyway" (and docs/commands.md that scaling the controller back "hands the
    /// NodePools back"); now the warning names the consequence, for every release since v0.27
    /// (`machine/garbagecollect`), not for older ones.
    #[test]
    fn forcing_past_a_controller_warns_that_it_terminates_the_instances_launched_here() {
        let cluster = crate::k8s::fake::FakeCluster::new();
        for (image, collects) in [
            ("public.ecr.aws/karpenter/controller:1.14.1", true),
            ("public.ecr.aws/karpenter/controller:v0.27.6", true),
            ("public.ecr.aws/karpenter/controller:latest", true),
            ("public.ecr.aws/karpenter/controller:v0.26.1", false),
        ] {
            put_running_controller(&cluster, image);
            let warning = check(&cluster, "provision", true).unwrap().unwrap();
            assert!(warning.contains("--force given"), "{warning}");
            assert_eq!(
                warning.contains(
                    "instance garbage collection terminates, about 30 s after launch, every \
                     instance tagged for this cluster's NodePools that no NodeClaim names"
                ),
                collects,
                "{image}: {warning}"
            );
        }
    }

    /// The refusal's hint offered "pass --force if you know they manage different NodePools",
    /// which from v0.27 on is no way out: the instance GC (above) terminates this tool's
    /// launches whatever their pool. **Differed, fixed (s30)**: the hint says so there.
    #[test]
    fn the_refusal_offers_separate_nodepools_only_where_the_controller_spares_them() {
        let cluster = crate::k8s::fake::FakeCluster::new();
        for (image, spares) in [
            ("public.ecr.aws/karpenter/controller:1.14.1", false),
            ("public.ecr.aws/karpenter/controller:v0.26.1", true),
        ] {
            put_running_controller(&cluster, image);
            let hint = check(&cluster, "provision", false)
                .unwrap_err()
                .hint
                .unwrap();
            assert_eq!(
                hint.contains("manage different NodePools"),
                spares,
                "{image}: {hint}"
            );
        }
        let hint = check(&cluster, "drift replace", false)
            .unwrap_err()
            .hint
            .unwrap();
        assert!(hint.contains("--via-controller"), "{hint}");
    }
}
