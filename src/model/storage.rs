//! Storage as scheduling reads it: StorageClasses, PersistentVolumeClaims, PersistentVolumes and
//! the CSI attach limits of nodes (`CSINode`), normalised from manifests or the cluster.
//!
//! Karpenter reads these to constrain where a pod with volumes may go (the volume's zone) and how
//! many volumes an existing node can still attach (docs/karpenter.md §6.9): `core:
//! pkg/controllers/provisioning/scheduling/volumetopology.go`, `pkg/scheduling/volumeusage.go`,
//! `pkg/controllers/state/cluster.go` (`populateVolumeLimits`).

use std::collections::BTreeMap;

use super::pod::{NodeSelectorTerm, Pod};

/// `volumeBindingMode` of a StorageClass (the API server defaults it to `Immediate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VolumeBindingMode {
    /// The volume is provisioned (and bound) as soon as the claim is created.
    #[default]
    Immediate,
    /// Provisioning waits for a pod: the node the pod is scheduled to picks the volume's zone.
    WaitForFirstConsumer,
}

/// The annotation marking the default StorageClass (and its beta spelling).
pub const DEFAULT_CLASS_ANNOTATIONS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The annotation the PersistentVolume controller sets once a claim is bound
/// (`k8s.io/component-helpers/storage/volume.AnnBindCompleted`).
pub const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";

/// A StorageClass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StorageClass {
    /// Name.
    pub name: String,
    /// `provisioner` (an in-tree name such as `kubernetes.io/aws-ebs`, or a CSI driver).
    pub provisioner: String,
    /// `volumeBindingMode`.
    pub binding_mode: VolumeBindingMode,
    /// `allowedTopologies`: terms (ORed) of `key In values` requirements (ANDed).
    pub allowed_topologies: Vec<NodeSelectorTerm>,
    /// Marked default (`storageclass.kubernetes.io/is-default-class: "true"`).
    pub is_default: bool,
    /// RFC 3339 creation time (the newest default class wins).
    pub created: Option<String>,
}

/// A PersistentVolumeClaim.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PersistentVolumeClaim {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.storageClassName`: `None` when absent (the default class is filled in on
    /// creation), `Some("")` when explicitly empty (no dynamic provisioning).
    pub storage_class: Option<String>,
    /// `spec.volumeName`: the PersistentVolume it is (being) bound to.
    pub volume_name: Option<String>,
    /// The `pv.kubernetes.io/bind-completed` annotation is present.
    pub bind_completed: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `status.phase` is `Lost` (its volume is gone).
    pub lost: bool,
}

impl PersistentVolumeClaim {
    /// `namespace/name`, how volume usage names a claim.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A PersistentVolume.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PersistentVolume {
    /// Name.
    pub name: String,
    /// `spec.nodeAffinity.required.nodeSelectorTerms` (ORed).
    pub node_affinity: Vec<NodeSelectorTerm>,
    /// A `local` or `hostPath` volume: its hostname affinity is not a constraint for a new node.
    pub local: bool,
    /// The CSI driver that attaches it (`spec.csi.driver`, or `ebs.csi.aws.com` for an in-tree
    /// `awsElasticBlockStore` volume); `None` for volumes no CSI driver counts (NFS, …).
    pub csi_driver: Option<String>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
}

/// Everything storage-related a plan reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Storage {
    /// StorageClasses by name.
    pub classes: BTreeMap<String, StorageClass>,
    /// Claims by (namespace, name).
    pub claims: BTreeMap<(String, String), PersistentVolumeClaim>,
    /// Volumes by name.
    pub volumes: BTreeMap<String, PersistentVolume>,
    /// Per node name: CSI driver → how many volumes it can attach (`CSINode`
    /// `spec.drivers[].allocatable.count`).
    pub attach_limits: BTreeMap<String, BTreeMap<String, u32>>,
    /// Whether a claim a pod would get from a template (a generic ephemeral volume, or a
    /// StatefulSet's `volumeClaimTemplates`) counts as created when it is not among `claims`:
    /// true for manifests (the controllers create it as the pod is created), false for a live
    /// cluster (where Karpenter waits until it exists).
    pub claims_from_templates: bool,
}

impl Storage {
    /// The claims of `pod`'s volumes, when each can be looked up with what it names — its
    /// PersistentVolume if bound, else its StorageClass if it names one — as Karpenter's volume
    /// topology looks them up (`core v1.14.1: pkg/controllers/provisioning/scheduling/
    /// volumetopology.go` `getRequirements`); `None` when any is missing.
    pub fn claims_of(&self, pod: &Pod) -> Option<Vec<&PersistentVolumeClaim>> {
        pod.volumes
            .iter()
            .map(|v| {
                let c = self
                    .claims
                    .get(&(pod.namespace.clone(), v.claim_name(&pod.name)))?;
                let found = match (&c.volume_name, c.storage_class.as_deref()) {
                    (Some(pv), _) => self.volumes.contains_key(pv),
                    (None, Some(class)) if !class.is_empty() => self.classes.contains_key(class),
                    _ => true,
                };
                found.then_some(c)
            })
            .collect()
    }

    /// The default StorageClass the API server's `DefaultStorageClass` admission would give a
    /// claim without `storageClassName`: among the classes marked default, the newest (then the
    /// first by name), as Kubernetes ≥ 1.26 picks.
    pub fn default_class(&self) -> Option<&StorageClass> {
        self.classes
            .values()
            .filter(|c| c.is_default)
            .max_by(|a, b| a.created.cmp(&b.created).then_with(|| b.name.cmp(&a.name)))
    }

    /// Fills the default class into claims without `storageClassName` (what admission does on
    /// creation; a live cluster's claims already have it).
    pub fn apply_default_class(&mut self) {
        let Some(default) = self.default_class().map(|c| c.name.clone()) else {
            return;
        };
        for c in self.claims.values_mut() {
            if c.storage_class.is_none() {
                c.storage_class = Some(default.clone());
            }
        }
    }

    /// Whether nothing at all is known.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
            && self.claims.is_empty()
            && self.volumes.is_empty()
            && self.attach_limits.is_empty()
    }
}

/// The CSI driver an in-tree provisioner name migrated to (`k8s.io/csi-translation-lib`
/// `GetCSINameFromInTreeName`), or the name itself.
pub fn csi_driver_of(provisioner: &str) -> &str {
    match provisioner {
        "kubernetes.io/aws-ebs" => "ebs.csi.aws.com",
        "kubernetes.io/gce-pd" => "pd.csi.storage.gke.io",
        "kubernetes.io/cinder" => "cinder.csi.openstack.org",
        "kubernetes.io/azure-disk" => "disk.csi.azure.com",
        "kubernetes.io/azure-file" => "file.csi.azure.com",
        "kubernetes.io/vsphere-volume" => "csi.vsphere.vmware.com",
        "kubernetes.io/portworx-volume" => "pxd.portworx.com",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_default_class_wins_and_fills_claims_without_one() {
        let class = |name: &str, default: bool, created: &str| StorageClass {
            name: name.into(),
            is_default: default,
            created: Some(created.into()),
            ..Default::default()
        };
        let mut s = Storage::default();
        for c in [
            class("old", true, "2024-01-01T00:00:00Z"),
            class("new", true, "2025-01-01T00:00:00Z"),
            class("newest-not-default", false, "2026-01-01T00:00:00Z"),
        ] {
            s.classes.insert(c.name.clone(), c);
        }
        assert_eq!(s.default_class().map(|c| c.name.as_str()), Some("new"));
        let claim = |name: &str, sc: Option<&str>| PersistentVolumeClaim {
            namespace: "default".into(),
            name: name.into(),
            storage_class: sc.map(str::to_string),
            ..Default::default()
        };
        for c in [claim("absent", None), claim("empty", Some(""))] {
            s.claims.insert((c.namespace.clone(), c.name.clone()), c);
        }
        s.apply_default_class();
        let sc = |n: &str| {
            s.claims[&("default".to_string(), n.to_string())]
                .storage_class
                .clone()
        };
        assert_eq!(sc("absent").as_deref(), Some("new"));
        assert_eq!(sc("empty").as_deref(), Some(""), "an explicit \"\" stays");
        assert_eq!(csi_driver_of("kubernetes.io/aws-ebs"), "ebs.csi.aws.com");
        assert_eq!(csi_driver_of("ebs.csi.aws.com"), "ebs.csi.aws.com");
    }
}
