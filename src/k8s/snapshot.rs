//! A live snapshot: which Karpenter generations are installed, and every object a plan, a drift
//! check or a drain reads — LISTed page by page and normalised into the slim model as each page
//! arrives (docs/performance.md B4), never held as full API objects.

use serde::de::DeserializeOwned;

use super::ops::{self, ListQuery};
use super::{Cluster, ClusterError};
use crate::api::live::LiveBuilder;
use crate::api::{core, v1, v1alpha5, v1beta1, ApiObject, InputError, Manifests, NodeOverlay};
use crate::error::CommandError;

/// Which Karpenter APIs the cluster serves (CRDs installed), newest first per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Installed {
    /// `karpenter.sh` version serving NodePools/NodeClaims (`v1` or `v1beta1`).
    pub node_pools: Option<&'static str>,
    /// `karpenter.sh/v1alpha5` Provisioners/Machines.
    pub provisioners: bool,
    /// `karpenter.sh/v1alpha5` Machines.
    pub machines: bool,
    /// `karpenter.k8s.aws` version serving EC2NodeClasses (`v1` or `v1beta1`).
    pub node_classes: Option<&'static str>,
    /// `karpenter.k8s.aws/v1alpha1` AWSNodeTemplates.
    pub node_templates: bool,
    /// `karpenter.sh/v1alpha1` NodeOverlays.
    pub node_overlays: bool,
}

impl Installed {
    /// Reads discovery.
    pub fn detect(c: &dyn Cluster) -> Result<Installed, ClusterError> {
        let mut installed = Installed::default();
        let has = |gv: &str, resource: &str| -> Result<bool, ClusterError> {
            Ok(ops::served_resources(c, gv)?.is_some_and(|r| r.iter().any(|n| n == resource)))
        };
        for v in ["v1", "v1beta1"] {
            if installed.node_pools.is_none() && has(&format!("karpenter.sh/{v}"), "nodepools")? {
                installed.node_pools = Some(v);
            }
            if installed.node_classes.is_none()
                && has(&format!("karpenter.k8s.aws/{v}"), "ec2nodeclasses")?
            {
                installed.node_classes = Some(v);
            }
        }
        if let Some(resources) = ops::served_resources(c, "karpenter.sh/v1alpha5")? {
            installed.provisioners = resources.iter().any(|r| r == "provisioners");
            installed.machines = resources.iter().any(|r| r == "machines");
        }
        installed.node_templates = has("karpenter.k8s.aws/v1alpha1", "awsnodetemplates")?;
        installed.node_overlays = has("karpenter.sh/v1alpha1", "nodeoverlays")?;
        Ok(installed)
    }

    /// Any Karpenter CRD at all.
    pub fn any(&self) -> bool {
        self.node_pools.is_some()
            || self.provisioners
            || self.node_classes.is_some()
            || self.node_templates
    }

    /// For messages: `karpenter.sh/v1 NodePools, karpenter.k8s.aws/v1 EC2NodeClasses`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.node_pools {
            parts.push(format!("karpenter.sh/{v} NodePools"));
        }
        if self.provisioners {
            parts.push("karpenter.sh/v1alpha5 Provisioners".into());
        }
        if let Some(v) = self.node_classes {
            parts.push(format!("karpenter.k8s.aws/{v} EC2NodeClasses"));
        }
        if self.node_templates {
            parts.push("karpenter.k8s.aws/v1alpha1 AWSNodeTemplates".into());
        }
        if parts.is_empty() {
            "no Karpenter CRDs".into()
        } else {
            parts.join(", ")
        }
    }
}

/// What to read besides the Karpenter objects and nodes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope {
    /// Pods (pending and bound), DaemonSets, Namespaces and RuntimeClasses.
    pub pods: bool,
    /// PodDisruptionBudgets.
    pub pdbs: bool,
}

impl Scope {
    /// Pods, DaemonSets, Namespaces and RuntimeClasses, no PDBs: what a plan reads.
    pub const PODS: Scope = Scope {
        pods: true,
        pdbs: false,
    };
}

/// A live snapshot.
#[derive(Debug, Clone, Default)]
pub struct LiveSnapshot {
    /// The normalised objects (same shape as offline input).
    pub manifests: Manifests,
    /// Installed Karpenter APIs.
    pub installed: Installed,
    /// PodDisruptionBudgets, as read.
    pub pdbs: Vec<core::PodDisruptionBudget>,
    /// Pods neither pending nor bound (waiting for the scheduler, nominated, finished).
    pub skipped_pods: usize,
}

/// Why a snapshot failed: the API, or an object the model rejects (named).
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// API.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// An object.
    #[error(transparent)]
    Object(#[from] InputError),
}

impl From<SnapshotError> for CommandError {
    fn from(e: SnapshotError) -> Self {
        match e {
            SnapshotError::Cluster(c) => c.into(),
            SnapshotError::Object(i) => {
                CommandError::remote(format!("an object in the cluster cannot be read: {i}"))
            }
        }
    }
}

fn add_all<T: DeserializeOwned>(
    c: &dyn Cluster,
    builder: &mut LiveBuilder,
    path: &str,
    kind: &str,
    wrap: impl Fn(T) -> (ApiObject, Option<String>, Option<String>),
) -> Result<(), ClusterError> {
    ops::list(c, path, &ListQuery::default(), |item: T| {
        let (object, name, namespace) = wrap(item);
        builder.add_object(kind, object, name.as_deref(), namespace.as_deref());
    })?;
    Ok(())
}

/// Reads a snapshot.
pub fn read(c: &dyn Cluster, scope: Scope) -> Result<LiveSnapshot, SnapshotError> {
    let installed = Installed::detect(c)?;
    let mut b = LiveBuilder::new();
    let none = ListQuery::default();
    if let Some(v) = installed.node_pools {
        let pools = format!("/apis/karpenter.sh/{v}/nodepools");
        let claims = format!("/apis/karpenter.sh/{v}/nodeclaims");
        if v == "v1" {
            add_all(c, &mut b, &pools, "NodePool", |p: v1::NodePool| {
                let n = p.metadata.name.clone();
                (ApiObject::NodePoolV1(Box::new(p)), n, None)
            })?;
            add_all(c, &mut b, &claims, "NodeClaim", |p: v1::NodeClaim| {
                let n = p.metadata.name.clone();
                (ApiObject::NodeClaimV1(Box::new(p)), n, None)
            })?;
        } else {
            add_all(c, &mut b, &pools, "NodePool", |p: v1beta1::NodePool| {
                let n = p.metadata.name.clone();
                (ApiObject::NodePoolV1Beta1(Box::new(p)), n, None)
            })?;
            add_all(c, &mut b, &claims, "NodeClaim", |p: v1beta1::NodeClaim| {
                let n = p.metadata.name.clone();
                (ApiObject::NodeClaimV1Beta1(Box::new(p)), n, None)
            })?;
        }
    }
    if installed.provisioners {
        add_all(
            c,
            &mut b,
            "/apis/karpenter.sh/v1alpha5/provisioners",
            "Provisioner",
            |p: v1alpha5::Provisioner| {
                let n = p.metadata.name.clone();
                (ApiObject::Provisioner(Box::new(p)), n, None)
            },
        )?;
    }
    if installed.machines {
        add_all(
            c,
            &mut b,
            "/apis/karpenter.sh/v1alpha5/machines",
            "Machine",
            |p: v1alpha5::Machine| {
                let n = p.metadata.name.clone();
                (ApiObject::Machine(Box::new(p)), n, None)
            },
        )?;
    }
    match installed.node_classes {
        Some("v1") => add_all(
            c,
            &mut b,
            "/apis/karpenter.k8s.aws/v1/ec2nodeclasses",
            "EC2NodeClass",
            |p: v1::Ec2NodeClass| {
                let n = p.metadata.name.clone();
                (ApiObject::Ec2NodeClassV1(Box::new(p)), n, None)
            },
        )?,
        Some(_) => add_all(
            c,
            &mut b,
            "/apis/karpenter.k8s.aws/v1beta1/ec2nodeclasses",
            "EC2NodeClass",
            |p: v1beta1::Ec2NodeClass| {
                let n = p.metadata.name.clone();
                (ApiObject::Ec2NodeClassV1Beta1(Box::new(p)), n, None)
            },
        )?,
        None => {}
    }
    if installed.node_templates {
        add_all(
            c,
            &mut b,
            "/apis/karpenter.k8s.aws/v1alpha1/awsnodetemplates",
            "AWSNodeTemplate",
            |p: v1alpha5::AwsNodeTemplate| {
                let n = p.metadata.name.clone();
                (ApiObject::AwsNodeTemplate(Box::new(p)), n, None)
            },
        )?;
    }
    // NodeOverlays change prices and capacity: read for plans (the pods scope) only.
    if installed.node_overlays && scope.pods {
        add_all(
            c,
            &mut b,
            "/apis/karpenter.sh/v1alpha1/nodeoverlays",
            "NodeOverlay",
            |o: NodeOverlay| {
                let n = o.metadata.name.clone();
                (ApiObject::NodeOverlay(Box::new(o)), n, None)
            },
        )?;
    }
    add_all(c, &mut b, "/api/v1/nodes", "Node", |n: core::Node| {
        let name = n.metadata.name.clone();
        (ApiObject::Node(Box::new(n)), name, None)
    })?;
    let mut pdbs = Vec::new();
    if scope.pdbs {
        pdbs = ops::list_all(c, "/apis/policy/v1/poddisruptionbudgets", &none)?;
    }
    let mut storage_warnings = Vec::new();
    if scope.pods {
        add_all(
            c,
            &mut b,
            "/api/v1/namespaces",
            "Namespace",
            |n: core::Namespace| {
                let name = n.metadata.name.clone();
                (ApiObject::Namespace(Box::new(n)), name, None)
            },
        )?;
        let mut runtime_classes: Vec<core::RuntimeClass> = Vec::new();
        match ops::list_all(c, "/apis/node.k8s.io/v1/runtimeclasses", &none) {
            Ok(list) => runtime_classes = list,
            // A cluster without the API has no overheads; without the permission they are
            // unknown, and said so.
            Err(e) if e.status() == Some(404) => {}
            Err(e) if e.is_forbidden() => storage_warnings.push(format!(
                "cannot list runtimeclasses ({e}): RuntimeClass pod overheads are not added"
            )),
            Err(e) => return Err(e.into()),
        }
        for rc in &runtime_classes {
            b.add_runtime_class(rc)?;
        }
        let mut daemonsets: Vec<core::Workload> =
            ops::list_all(c, "/apis/apps/v1/daemonsets", &none)?;
        for ds in &mut daemonsets {
            ds.kind = Some("DaemonSet".into());
            b.add_daemonset(ds)?;
        }
        read_storage(c, &mut b, &mut storage_warnings)?;
        let mut failure: Option<InputError> = None;
        ops::list(c, "/api/v1/pods", &none, |pod: core::Pod| {
            if failure.is_none() {
                if let Err(e) = b.add_pod(&pod) {
                    failure = Some(e);
                }
            }
        })?;
        if let Some(e) = failure {
            return Err(e.into());
        }
    }
    let skipped_pods = b.skipped_pods;
    let mut manifests = b.finish()?;
    manifests.warnings.extend(storage_warnings);
    Ok(LiveSnapshot {
        manifests,
        installed,
        pdbs,
        skipped_pods,
    })
}

/// The PodDisruptionBudgets, read on their own: `provision` reads them only when a node being
/// deleted has pods (`Cluster.Deleting().CurrentlyReschedulablePods`: a pod a PDB fully blocks
/// is not planned again), so that its ordinary runs need no PDB permission.
pub fn read_pdbs(c: &dyn Cluster) -> Result<Vec<core::PodDisruptionBudget>, ClusterError> {
    ops::list_all(
        c,
        "/apis/policy/v1/poddisruptionbudgets",
        &ListQuery::default(),
    )
}

/// The storage objects volume topology and attach limits read (docs/karpenter.md §6.9):
/// StorageClasses, PersistentVolumeClaims, PersistentVolumes, CSINodes. A list the identity may
/// not read (403) or the cluster does not serve (404) is left empty, with a warning: pods whose
/// volumes it would describe then wait for them (`VolumeNotFound`), as they would in Karpenter.
fn read_storage(
    c: &dyn Cluster,
    b: &mut LiveBuilder,
    warnings: &mut Vec<String>,
) -> Result<(), SnapshotError> {
    let mut failure: Option<InputError> = None;
    let mut keep = |r: Result<(), InputError>| {
        if let Err(e) = r {
            failure.get_or_insert(e);
        }
    };
    list_or_warn(
        c,
        "/apis/storage.k8s.io/v1/storageclasses",
        warnings,
        |sc| keep(b.add_storage_class(&sc)),
    )?;
    list_or_warn(c, "/api/v1/persistentvolumeclaims", warnings, |pvc| {
        b.add_claim(&pvc)
    })?;
    list_or_warn(c, "/api/v1/persistentvolumes", warnings, |pv| {
        keep(b.add_volume(&pv))
    })?;
    list_or_warn(c, "/apis/storage.k8s.io/v1/csinodes", warnings, |n| {
        keep(b.add_csi_node(&n))
    })?;
    match failure {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// Lists `path`; a 403 or 404 is a warning, not an error.
fn list_or_warn<T: DeserializeOwned>(
    c: &dyn Cluster,
    path: &str,
    warnings: &mut Vec<String>,
    each: impl FnMut(T),
) -> Result<(), ClusterError> {
    match ops::list(c, path, &ListQuery::default(), each) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.status(), Some(403 | 404)) => {
            let what = path.rsplit('/').next().unwrap_or(path);
            warnings.push(format!(
                "cannot list {what} ({e}): volume topology and attach limits are not known"
            ));
            Ok(())
        }
        Err(e) => Err(e),
    }
}
