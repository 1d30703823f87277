//! Objects read from a live cluster → the same [`Manifests`] the offline planner uses, with
//! the live rules instead of the manifest ones:
//!
//! - a pod is pending only when the scheduler said so (Karpenter's provisionable predicate,
//!   docs/karpenter.md §5.6) — unlike a bare Pod in `-f` input, which is pending whatever its status;
//! - workloads are not expanded (their pods exist); DaemonSets still give the overhead template;
//! - terminal pods are dropped; bound pods count against their node;
//! - pods are converted one at a time as their LIST page arrives, so the slim model is all
//!   that is held (docs/performance.md B4).

use super::error::{object_name, InputError, Location};
use super::objects::{ApiObject, Object, Objects};
use super::pods::{self, Expansion, RuntimeClassAdmissions};
use super::{core, Manifests};
use crate::model::nodepool::Origin;
use crate::model::storage::Storage;

/// Where live objects come from, in messages.
pub const LIVE_SOURCE: &str = "cluster";

/// Builds [`Manifests`] from live objects. Add RuntimeClasses first (pods name them), then
/// anything, then [`LiveBuilder::finish`].
#[derive(Default)]
pub struct LiveBuilder {
    objects: Objects,
    runtime: RuntimeClassAdmissions,
    pods: Vec<crate::model::pod::Pod>,
    bound_pods: Vec<crate::model::pod::Pod>,
    daemonsets: Vec<crate::model::pod::Pod>,
    /// DaemonSet pods not bound yet, for [`pods::daemonsets_as_their_newest_pods`].
    unbound_daemon_pods: Vec<crate::model::pod::Pod>,
    storage: Storage,
    /// Pods neither pending nor bound (waiting for the scheduler, nominated, terminal).
    pub skipped_pods: usize,
}

fn location() -> Location {
    Location::file(LIVE_SOURCE)
}

impl LiveBuilder {
    /// A builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A RuntimeClass (its `overhead.podFixed` is added to the requests of pods naming it, its
    /// `scheduling` merged into their node selectors and tolerations: see
    /// [`pods::RuntimeClassAdmissions`]).
    pub fn add_runtime_class(&mut self, rc: &core::RuntimeClass) -> Result<(), InputError> {
        let at = location();
        let display = rc.metadata.name.clone().unwrap_or_default();
        let ctx = super::error::Ctx::new(&at, object_name("RuntimeClass", None, Some(&display)));
        let (name, admission) = pods::runtime_class(&ctx, rc)?;
        self.runtime.insert(name, admission);
        Ok(())
    }

    /// A Karpenter object, Node, Namespace or PDB, normalised at [`LiveBuilder::finish`].
    /// `kind` is the object's kind (LIST items carry none).
    pub fn add_object(
        &mut self,
        kind: &str,
        object: ApiObject,
        name: Option<&str>,
        namespace: Option<&str>,
    ) {
        self.objects.objects.push(Object {
            location: location(),
            origin: Origin {
                source: LIVE_SOURCE.to_string(),
                document: self.objects.objects.len(),
            },
            name: object_name(kind, namespace, name),
            object,
        });
    }

    /// A pod, classified at once: pending (provisionable), bound, or skipped.
    pub fn add_pod(&mut self, pod: &core::Pod) -> Result<(), InputError> {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded") | Some("Failed")) {
            self.skipped_pods += 1;
            return Ok(());
        }
        let converted = pods::convert_pod(pod, &location(), &self.runtime)?;
        if converted.node_name.is_some() {
            self.bound_pods.push(converted);
        } else if converted.is_provisionable() {
            self.pods.push(converted);
        } else {
            self.skipped_pods += 1;
            if converted.is_daemonset_pod() {
                self.unbound_daemon_pods.push(converted);
            }
        }
        Ok(())
    }

    /// A DaemonSet: its template pod is per-node overhead.
    pub fn add_daemonset(&mut self, ds: &core::Workload) -> Result<(), InputError> {
        let mut budget = 1;
        if let Expansion::Daemon(pod) =
            pods::expand(ds, "DaemonSet", &location(), &self.runtime, &mut budget)?
        {
            self.daemonsets.push(*pod);
        }
        Ok(())
    }

    /// A StorageClass, as the cluster holds it.
    pub fn add_storage_class(&mut self, sc: &core::StorageClass) -> Result<(), InputError> {
        let sc = super::convert_storage_class(sc, &location())?;
        self.storage.classes.insert(sc.name.clone(), sc);
        Ok(())
    }

    /// A PersistentVolumeClaim, as the cluster holds it (no default class is filled in: the
    /// API server did that when it was created, if there was one).
    pub fn add_claim(&mut self, pvc: &core::PersistentVolumeClaim) {
        let c = super::convert_claim(pvc);
        self.storage
            .claims
            .insert((c.namespace.clone(), c.name.clone()), c);
    }

    /// A PersistentVolume.
    pub fn add_volume(&mut self, pv: &core::PersistentVolume) -> Result<(), InputError> {
        let v = super::convert_volume(pv, &location())?;
        self.storage.volumes.insert(v.name.clone(), v);
        Ok(())
    }

    /// A CSINode (its drivers' attach limits).
    pub fn add_csi_node(&mut self, n: &core::CsiNode) -> Result<(), InputError> {
        let (node, limits) = super::convert_csi_node(n, &location())?;
        self.storage.attach_limits.insert(node, limits);
        Ok(())
    }

    /// Normalises the objects and returns the snapshot.
    pub fn finish(self) -> Result<Manifests, InputError> {
        let mut m = Manifests::from_objects(self.objects)?;
        m.pods = self.pods;
        m.bound_pods = self.bound_pods;
        m.daemonsets = self.daemonsets;
        let daemon_pods = m.bound_pods.iter().chain(&self.unbound_daemon_pods);
        pods::daemonsets_as_their_newest_pods(&mut m.daemonsets, daemon_pods);
        m.unbound_daemon_pods = self.unbound_daemon_pods;
        // A live claim exists or it does not: Karpenter waits for the controllers to create it.
        m.storage = self.storage;
        Ok(m)
    }
}

/// A PodDisruptionBudget's selector as the model's [`LabelSelector`] (`None`: selects nothing).
pub fn pdb_selector(
    pdb: &core::PodDisruptionBudget,
) -> Result<Option<crate::model::selector::LabelSelector>, InputError> {
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let at = location();
    let ctx = super::error::Ctx::new(
        &at,
        object_name(
            "PodDisruptionBudget",
            pdb.metadata.namespace.as_deref(),
            Some(&name),
        ),
    );
    pdb.spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .map(|s| pods::label_selector(&ctx, "spec.selector", s))
        .transpose()
}

/// A live pod in the slim model (for drains: read again at every pass).
pub fn live_pod(pod: &core::Pod) -> Result<crate::model::pod::Pod, InputError> {
    pods::convert_pod(pod, &location(), &RuntimeClassAdmissions::new())
}
