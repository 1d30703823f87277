//! Manifests in, model out: the serde types of every Karpenter API generation (v1alpha5 +
//! v1alpha1, v1beta1, v1) and of the core objects the tool reads, and their normalisation into
//! the pure model (`model::nodepool`, `model::pod`, `model::node`) with each generation's
//! defaults.
//!
//! Loading never panics and never half-succeeds: any problem is one [`InputError`] whose
//! one-line message names the file (and document), the object and the field (docs/spec.md §6).
//!
//! Layers, top to bottom:
//! - [`load_paths`] / [`load_str`]: read inputs, then normalise;
//! - [`read_objects`]: inputs → typed objects ([`Objects`]), for callers that need the objects
//!   as written (`convert`);
//! - the per-generation modules ([`v1alpha5`], [`v1beta1`], [`v1`], [`core`]): serde types, each
//!   with a `to_model` that applies that generation's defaults and validation.

pub mod buffer;
mod build;
pub mod convert;
pub mod core;
mod document;
mod error;
mod free_form;
mod generation_fields;
mod kinds;
mod launch_options;
pub mod live;
mod load;
pub mod meta;
mod nodeclaim;
mod nodeclass;
mod nodeoverlay;
mod nodepool;
mod nodes;
mod objects;
mod pdb;
mod pods;
mod reservation;
mod scalars;
pub mod schema;
mod storage;
pub mod v1;
pub mod v1alpha5;
pub mod v1beta1;
mod validate;
pub mod yaml;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use crate::model::nodeclaim::NodeClaim;
pub use buffer::{virtual_pods, ResolvedBuffer};
pub use error::{InputError, Location};
pub use nodeoverlay::NodeOverlay;
pub use nodes::convert_node;
pub use objects::{read_objects, read_str, ApiObject, Object, Objects};
pub use pods::{convert_pod, RuntimeClassAdmissions, MAX_EXPANDED_PODS};
pub use storage::{convert_claim, convert_csi_node, convert_storage_class, convert_volume};

use crate::model::node::Node;
use crate::model::nodepool::{NodeClass, NodePool};
use crate::model::pod::Pod;
use crate::model::storage::Storage;

/// Everything an offline plan needs from `-f` inputs, normalised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifests {
    /// NodePools and Provisioners, in input order.
    pub node_pools: Vec<NodePool>,
    /// EC2NodeClasses, AWSNodeTemplates, and the classes of inline `spec.provider`s.
    pub node_classes: Vec<NodeClass>,
    /// NodeOverlays (`karpenter.sh/v1alpha1`), applied to the pools' instance types.
    pub node_overlays: Vec<crate::model::overlay::NodeOverlay>,
    /// Pending pods: expanded workloads, and bare Pods without `nodeName` (pending whatever
    /// their status says, docs/spec.md §3). All satisfy [`Pod::is_provisionable`].
    pub pods: Vec<Pod>,
    /// Bare Pods bound to a node (`spec.nodeName`): they count against their node.
    pub bound_pods: Vec<Pod>,
    /// One template pod per DaemonSet (owner `DaemonSet`), for overhead.
    pub daemonsets: Vec<Pod>,
    /// Nodes.
    pub nodes: Vec<Node>,
    /// NodeClaims and Machines.
    pub node_claims: Vec<NodeClaim>,
    /// PodDisruptionBudgets (they do not affect a plan; `consolidate` reads them).
    pub pdbs: Vec<core::PodDisruptionBudget>,
    /// Namespace labels, for pod-affinity `namespaceSelector`s.
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// StorageClasses, PersistentVolumeClaims, PersistentVolumes and CSINode attach limits
    /// (volume topology and limits, docs/karpenter.md §6.9). From manifests, claims without
    /// `storageClassName` get the default class (as admission would) and claims from templates
    /// count as created.
    pub storage: Storage,
    /// Objects skipped because they cannot change a plan (`Service/web (app.yaml)`), and bare
    /// pods that are neither bound nor provisionable (DaemonSet-owned, mirror, nominated).
    pub ignored: Vec<String>,
    /// Pending pods set aside because `spec.schedulingGates` holds them back (each is also in
    /// `ignored`); `provision` says so by default, or "no pending pods" would be all it says.
    pub gated_pods: usize,
    /// DaemonSet pods not bound to a node (offline, each also in `ignored`): Karpenter provisions
    /// for none (core v1.14.1 `pkg/utils/pod/scheduling.go` `IsProvisionable`:
    /// `!IsOwnedByDaemonSet`); provisioning names the pending ones
    /// (`usecases::provisioning::set_aside`, aws#1649).
    pub unbound_daemon_pods: Vec<Pod>,
    /// CapacityBuffers (`autoscaling.x-k8s.io/v1beta1`) with the status Karpenter's buffer
    /// controller would write; used only behind the `CapacityBuffer` gate (docs/karpenter.md §6.13).
    pub buffers: Vec<ResolvedBuffer>,
    /// Input accepted with a caveat worth showing (one line each).
    pub warnings: Vec<String>,
    /// How many objects each source held, keyed like `Origin::source`, so errors raised later
    /// (e.g. by [`Manifests::check_references`]) word their location like load errors.
    pub document_counts: BTreeMap<String, usize>,
}

/// What a command needs from its `-f` inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything, pods included: Pods and workloads become the model's pods (a Deployment of
    /// a thousand replicas, a thousand pods). For planning.
    All,
    /// Everything but pods: Pods and workloads are read (so a malformed one still fails the
    /// load) but not turned into pods, which the command would never look at.
    NoPods,
}

/// Reads and normalises `-f` inputs: files, directories (recursively, `*.yaml`/`*.yml`/`*.json`,
/// sorted), and `-` for `stdin`; multi-document YAML, JSON (one or several values), `kind: List`.
pub fn load_paths(
    paths: &[String],
    stdin: &mut dyn std::io::Read,
) -> Result<Manifests, InputError> {
    load_paths_in(paths, stdin, Scope::All)
}

/// [`load_paths`], keeping what `scope` asks for.
pub fn load_paths_in(
    paths: &[String],
    stdin: &mut dyn std::io::Read,
    scope: Scope,
) -> Result<Manifests, InputError> {
    let sources = load::read_sources(paths, stdin)?;
    let mut read = Objects::default();
    let mut builder = build::Builder::new(scope);
    let mut total = 0;
    // Each object is normalised as soon as it is read, and its typed form dropped: a dump of a
    // big cluster is never held twice (typed and normalised).
    for source in &sources {
        total += objects::read_source_each(source, &mut read, &mut |o| builder.push(o))?;
    }
    if total == 0 {
        return Err(objects::nothing_read(paths));
    }
    builder.finish(read)
}

/// Reads and normalises one in-memory manifest text, named `source` in messages.
pub fn load_str(source: &str, text: &str) -> Result<Manifests, InputError> {
    Manifests::from_objects(read_str(source, text)?)
}

impl Manifests {
    /// Normalises typed objects: applies each generation's defaults, validates every field,
    /// expands workloads into pods, and rejects duplicate names.
    pub fn from_objects(objects: Objects) -> Result<Manifests, InputError> {
        Manifests::from_objects_in(objects, Scope::All)
    }

    /// [`Manifests::from_objects`], keeping what `scope` asks for.
    pub fn from_objects_in(mut objects: Objects, scope: Scope) -> Result<Manifests, InputError> {
        let mut builder = build::Builder::new(scope);
        for o in objects.objects.drain(..) {
            builder.push(o);
        }
        builder.finish(objects)
    }

    /// Fails when a NodePool's node class is not among the loaded classes (the offline planner
    /// calls it; cluster mode reads classes from the cluster instead).
    pub fn check_references(&self) -> Result<(), InputError> {
        for pool in &self.node_pools {
            let Some(r) = &pool.node_class_ref else {
                continue;
            };
            // EKS runs the Karpenter of an Auto Mode pool: it is planned as a pool that takes
            // nothing, saying so (`PoolCause::AutoMode`), not as a missing class.
            if r.is_eks_auto_mode() {
                continue;
            }
            // Nor is one naming another group's class (`PoolCause::NotManaged`): Karpenter
            // never looks the class up (core v1.14.1 `nodepool.go` `IsManaged`).
            if r.is_another_providers() {
                continue;
            }
            let found = self
                .node_classes
                .iter()
                .any(|c| c.name == r.name && c.kind == r.kind);
            if found {
                continue;
            }
            let multi = self
                .document_counts
                .get(&pool.origin.source)
                .is_some_and(|n| *n > 1);
            let field = match pool.generation {
                Some(crate::model::nodepool::ApiGeneration::V1Alpha5) => "spec.providerRef",
                _ => "spec.template.spec.nodeClassRef",
            };
            let mut loaded: Vec<String> = self
                .node_classes
                .iter()
                .map(|c| format!("{}/{}", c.kind, c.name))
                .collect();
            loaded.sort();
            let have = if loaded.is_empty() {
                "no node classes were loaded".to_string()
            } else {
                format!("loaded: {}", loaded.join(", "))
            };
            return Err(InputError::MissingReference {
                at: Location::from_origin(&pool.origin, multi),
                object: format!("{}/{}", pool.kind(), pool.name),
                field: field.to_string(),
                message: format!("{} {:?} is not in the input ({have})", r.kind, r.name),
            });
        }
        Ok(())
    }
}
