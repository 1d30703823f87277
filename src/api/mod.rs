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

pub mod convert;
pub mod core;
mod document;
mod error;
mod kinds;
pub mod live;
mod load;
pub mod meta;
mod nodeclaim;
mod nodeclass;
mod nodeoverlay;
mod nodepool;
mod nodes;
mod objects;
mod pods;
mod reservation;
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
pub use error::{InputError, Location};
pub use nodeoverlay::NodeOverlay;
pub use nodes::convert_node;
pub use objects::{read_objects, read_str, ApiObject, Object, Objects};
pub use pods::{convert_pod, RuntimeOverheads, MAX_EXPANDED_PODS};
pub use storage::{convert_claim, convert_csi_node, convert_storage_class, convert_volume};

use crate::model::node::Node;
use crate::model::nodepool::{NodeClass, NodePool};
use crate::model::pod::Pod;
use crate::model::resources::Resources;
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
    Manifests::from_objects_in(read_objects(paths, stdin)?, scope)
}

/// Reads and normalises one in-memory manifest text, named `source` in messages.
pub fn load_str(source: &str, text: &str) -> Result<Manifests, InputError> {
    Manifests::from_objects(read_str(source, text)?)
}

/// The duplicate-detection family of an object: NodePools of v1beta1 and v1 are the same kind
/// served at two versions, so `default` in both is a duplicate; a Provisioner is not.
fn family(object: &ApiObject) -> &'static str {
    match object {
        ApiObject::Provisioner(_) => "Provisioner",
        ApiObject::Machine(_) => "Machine",
        ApiObject::AwsNodeTemplate(_) => "AWSNodeTemplate",
        ApiObject::NodePoolV1Beta1(_) | ApiObject::NodePoolV1(_) => "NodePool",
        ApiObject::NodeClaimV1Beta1(_) | ApiObject::NodeClaimV1(_) => "NodeClaim",
        ApiObject::Ec2NodeClassV1Beta1(_) | ApiObject::Ec2NodeClassV1(_) => "EC2NodeClass",
        ApiObject::NodeOverlay(_) => "NodeOverlay",
        ApiObject::Pod(_) => "Pod",
        ApiObject::Workload(_) => "Workload",
        ApiObject::Node(_) => "Node",
        ApiObject::PodDisruptionBudget(_) => "PodDisruptionBudget",
        ApiObject::Namespace(_) => "Namespace",
        ApiObject::RuntimeClass(_) => "RuntimeClass",
        ApiObject::StorageClass(_) => "StorageClass",
        ApiObject::PersistentVolumeClaim(_) => "PersistentVolumeClaim",
        ApiObject::PersistentVolume(_) => "PersistentVolume",
        ApiObject::CsiNode(_) => "CSINode",
    }
}

impl Manifests {
    /// Normalises typed objects: applies each generation's defaults, validates every field,
    /// expands workloads into pods, and rejects duplicate names.
    pub fn from_objects(objects: Objects) -> Result<Manifests, InputError> {
        Manifests::from_objects_in(objects, Scope::All)
    }

    /// [`Manifests::from_objects`], keeping what `scope` asks for.
    pub fn from_objects_in(objects: Objects, scope: Scope) -> Result<Manifests, InputError> {
        let mut m = Manifests {
            ignored: objects.ignored,
            document_counts: objects.document_counts,
            warnings: objects.warnings,
            ..Manifests::default()
        };
        let mut seen: BTreeMap<(String, String), Location> = BTreeMap::new();
        for o in &objects.objects {
            // Workload kinds are distinct families of their own.
            let fam = match &o.object {
                ApiObject::Workload(w) => w.kind.clone().unwrap_or_default(),
                other => family(other).to_string(),
            };
            let key = (
                fam,
                o.name
                    .split_once('/')
                    .map_or(o.name.clone(), |(_, rest)| rest.to_string()),
            );
            if let Some(first) = seen.get(&key) {
                return Err(InputError::Duplicate {
                    at: o.location.clone(),
                    object: o.name.clone(),
                    first: first.clone(),
                });
            }
            seen.insert(key, o.location.clone());
        }

        // RuntimeClasses first: pods anywhere in the input may name them.
        let mut runtime = RuntimeOverheads::new();
        for o in &objects.objects {
            if let ApiObject::RuntimeClass(rc) = &o.object {
                let ctx = error::Ctx::new(&o.location, o.name.clone());
                let fixed = rc.overhead.as_ref().and_then(|ov| ov.pod_fixed.as_ref());
                let overhead: Resources = validate::resources(&ctx, "overhead.podFixed", fixed)?;
                runtime.insert(rc.metadata.name.clone().unwrap_or_default(), overhead);
            }
        }

        let mut budget = MAX_EXPANDED_PODS;
        let mut pod_names: BTreeMap<String, Location> = BTreeMap::new();
        for o in objects.objects {
            let (at, origin) = (&o.location, &o.origin);
            match o.object {
                ApiObject::Provisioner(p) => {
                    let (pool, class) = p.to_model(at, origin)?;
                    m.node_pools.push(pool);
                    m.node_classes.extend(class);
                }
                ApiObject::AwsNodeTemplate(t) => m.node_classes.push(t.to_model(at, origin)?),
                ApiObject::NodePoolV1Beta1(p) => {
                    m.node_pools.push(p.to_model(at, origin, &mut m.warnings)?)
                }
                ApiObject::NodePoolV1(p) => {
                    m.node_pools.push(p.to_model(at, origin, &mut m.warnings)?)
                }
                ApiObject::Ec2NodeClassV1Beta1(c) => m.node_classes.push(c.to_model(at, origin)?),
                ApiObject::Ec2NodeClassV1(c) => m.node_classes.push(c.to_model(at, origin)?),
                ApiObject::NodeOverlay(o) => m.node_overlays.push(o.to_model(at, origin)?),
                ApiObject::Machine(c) => m.node_claims.push(c.to_model(at, origin)?),
                ApiObject::NodeClaimV1Beta1(c) => m.node_claims.push(c.to_model(at, origin)?),
                ApiObject::NodeClaimV1(c) => m.node_claims.push(c.to_model(at, origin)?),
                ApiObject::Node(n) => m.nodes.push(convert_node(&n, at)?),
                ApiObject::PodDisruptionBudget(p) => m.pdbs.push(*p),
                ApiObject::Namespace(ns) => {
                    let name = ns.metadata.name.clone().unwrap_or_default();
                    m.namespace_labels
                        .insert(name, ns.metadata.labels.clone().unwrap_or_default());
                }
                ApiObject::RuntimeClass(_) => {}
                ApiObject::StorageClass(sc) => {
                    let sc = convert_storage_class(&sc, at)?;
                    m.storage.classes.insert(sc.name.clone(), sc);
                }
                ApiObject::PersistentVolumeClaim(pvc) => {
                    let c = convert_claim(&pvc);
                    m.storage
                        .claims
                        .insert((c.namespace.clone(), c.name.clone()), c);
                }
                ApiObject::PersistentVolume(pv) => {
                    let v = convert_volume(&pv, at)?;
                    m.storage.volumes.insert(v.name.clone(), v);
                }
                ApiObject::CsiNode(n) => {
                    let (node, limits) = convert_csi_node(&n, at)?;
                    m.storage.attach_limits.insert(node, limits);
                }
                ApiObject::Pod(_) | ApiObject::Workload(_) if scope == Scope::NoPods => {}
                ApiObject::Pod(p) => {
                    let mut pod = convert_pod(&p, at, &runtime)?;
                    claim_pod_name(&mut pod_names, &pod, at, &o.name)?;
                    m.classify_bare_pod(&mut pod, &o.name, at);
                }
                ApiObject::Workload(w) => {
                    let kind = w.kind.clone().unwrap_or_default();
                    match pods::expand(&w, &kind, at, &runtime, &mut budget)? {
                        pods::Expansion::Daemon(pod) => m.daemonsets.push(*pod),
                        pods::Expansion::Pods(expanded) => {
                            for pod in &expanded {
                                claim_pod_name(&mut pod_names, pod, at, &o.name)?;
                            }
                            m.pods.extend(expanded);
                        }
                    }
                }
            }
        }
        // Manifests describe objects as written: admission would give a claim without a class
        // the default one, and the controllers create the claims of templates with the pod.
        m.storage.apply_default_class();
        m.storage.claims_from_templates = true;
        // Karpenter's view of each node: whether a NodeClaim stands for it (`Node::claimless`,
        // what `Node::counts_as_initialized` reads). Here, where the nodes meet their claims,
        // and not in the core, which never sees the objects apart.
        crate::model::node::mark_claimless(&mut m.nodes, &m.node_claims);
        Ok(m)
    }

    /// Files a bare Pod: bound (has `nodeName`), pending (docs/spec.md §3: a bare Pod without `nodeName`
    /// is pending whatever its status says), or set aside when Karpenter would never provision
    /// for it (DaemonSet- or Node-owned, or nominated to a node by the scheduler).
    fn classify_bare_pod(&mut self, pod: &mut Pod, object: &str, at: &Location) {
        if pod.node_name.is_some() {
            self.bound_pods.push(std::mem::take(pod));
            return;
        }
        pod.scheduled_condition = Some(("False".into(), "Unschedulable".into()));
        if pod.is_provisionable() {
            self.pods.push(std::mem::take(pod));
            return;
        }
        let why = match (&pod.nominated_node_name, &pod.owner) {
            (Some(n), _) => format!("nominated to node {n} by the scheduler"),
            (None, Some(o)) => format!(
                "owned by {} {}, which Karpenter does not provision for",
                o.kind, o.name
            ),
            (None, None) => "not provisionable".to_string(),
        };
        self.ignored.push(format!("{object} ({at}): {why}"));
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

/// Records a pod's `namespace/name`, failing when two inputs produce the same pod (a bare Pod
/// `web-0` next to a Deployment `web`, say).
fn claim_pod_name(
    names: &mut BTreeMap<String, Location>,
    pod: &Pod,
    at: &Location,
    source_object: &str,
) -> Result<(), InputError> {
    let key = pod.key();
    if let Some(first) = names.get(&key) {
        let object = if source_object.starts_with("Pod/") {
            source_object.to_string()
        } else {
            format!("{source_object} (pod {key})")
        };
        return Err(InputError::Duplicate {
            at: at.clone(),
            object,
            first: first.clone(),
        });
    }
    names.insert(key, at.clone());
    Ok(())
}
