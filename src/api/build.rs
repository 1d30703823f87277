//! Typed objects → [`Manifests`], one object at a time as they are read, so a big input is
//! never held typed and normalised at once (a 5,000-node cluster dump is 150,000 typed pods).
//!
//! The answer is the one a whole-input pass gives: a duplicate name anywhere beats an invalid
//! RuntimeClass anywhere, which beats the first other invalid object in input order; and a pod
//! naming a RuntimeClass not read yet waits (with everything after it, to keep the order) until
//! every RuntimeClass is known.

use std::collections::{BTreeMap, HashMap};

use super::buffer::BufferSources;
use super::error::{Ctx, InputError, Location};
use super::meta::ResourceList;
use super::objects::{ApiObject, Object, Objects};
use super::pods::{self, convert_pod, RuntimeClassAdmissions, MAX_EXPANDED_PODS};
use super::storage::{convert_claim, convert_csi_node, convert_storage_class, convert_volume};
use super::{convert_node, Manifests, Scope};
use crate::model::pod::Pod;

/// Collects objects into [`Manifests`] (see the module doc for the order of errors).
pub(super) struct Builder {
    scope: Scope,
    manifests: Manifests,
    /// Each object's family and name, for duplicates (kept small: a dump has one per pod).
    seen: HashMap<Box<str>, At>,
    runtime: RuntimeClassAdmissions,
    /// Pods still allowed from workload expansion.
    budget: i64,
    /// Each pod's `namespace/name`, for two inputs making the same pod.
    pod_names: HashMap<Box<str>, At>,
    /// The sources named by [`At`]s.
    sources: Vec<String>,
    duplicate: Option<InputError>,
    invalid_runtime_class: Option<InputError>,
    invalid: Option<InputError>,
    /// Objects from the first pod naming an unknown RuntimeClass on, in input order.
    waiting: Vec<Object>,
    /// Namespace → the requests LimitRange admission gives containers that set none
    /// ([`pods::admit_limit_range`]), from the LimitRanges read so far.
    limit_ranges: BTreeMap<String, ResourceList>,
    /// The PriorityClasses read, applied to every pod at the end ([`pods::PriorityClasses`]).
    priority_classes: pods::PriorityClasses,
    /// DaemonSet pods not bound yet: never planned, but the newest pod of a DaemonSet stands
    /// for it whether bound or not ([`pods::daemonsets_as_their_newest_pods`]).
    unbound_daemon_pods: Vec<Pod>,
    /// Objects whose pods EKS's Windows IPAM webhook changed ([`pods::admit_windows_ipam`]).
    windows_ipam: usize,
    /// CapacityBuffers and what their references may name, resolved at the end.
    buffers: BufferSources,
}

impl Builder {
    pub(super) fn new(scope: Scope) -> Builder {
        Builder {
            scope,
            manifests: Manifests::default(),
            seen: HashMap::new(),
            runtime: RuntimeClassAdmissions::new(),
            budget: MAX_EXPANDED_PODS,
            pod_names: HashMap::new(),
            sources: Vec::new(),
            duplicate: None,
            invalid_runtime_class: None,
            invalid: None,
            waiting: Vec::new(),
            limit_ranges: BTreeMap::new(),
            priority_classes: pods::PriorityClasses::default(),
            unbound_daemon_pods: Vec::new(),
            windows_ipam: 0,
            buffers: BufferSources::default(),
        }
    }

    /// Takes the next object in input order.
    pub(super) fn push(&mut self, o: Object) {
        if self.duplicate.is_some() {
            return;
        }
        // Workload kinds are distinct families of their own.
        let family = match &o.object {
            ApiObject::Workload(w) => w.kind.as_deref().unwrap_or_default(),
            other => family(other),
        };
        let name = o
            .name
            .split_once('/')
            .map_or(o.name.as_str(), |(_, rest)| rest);
        let key: Box<str> = format!("{family}\0{name}").into();
        if let Some(first) = self.seen.get(&key) {
            self.duplicate = Some(InputError::Duplicate {
                at: o.location.clone(),
                object: o.name.clone(),
                first: first.location(&self.sources),
            });
            return;
        }
        let at = At::new(&o.location, &mut self.sources);
        self.seen.insert(key, at);

        if let ApiObject::RuntimeClass(rc) = &o.object {
            if self.invalid_runtime_class.is_none() {
                let ctx = Ctx::new(&o.location, o.name.clone());
                match pods::runtime_class(&ctx, rc) {
                    Ok((name, admission)) => {
                        self.runtime.insert(name, admission);
                    }
                    Err(e) => self.invalid_runtime_class = Some(e),
                }
            }
            return;
        }
        if self.invalid.is_some() || self.invalid_runtime_class.is_some() {
            return;
        }
        let pods_wanted = self.scope == Scope::All;
        if !self.waiting.is_empty() || pods_wanted && self.names_an_unknown_runtime_class(&o) {
            self.waiting.push(o);
            return;
        }
        if let Err(e) = self.convert(o) {
            self.invalid = Some(e);
        }
    }

    /// The manifests, or the error a whole-input pass would give. `read` holds what reading
    /// collected besides the objects (ignored objects, document counts, warnings), which comes
    /// first.
    pub(super) fn finish(mut self, read: Objects) -> Result<Manifests, InputError> {
        if let Some(e) = self
            .duplicate
            .take()
            .or(self.invalid_runtime_class.take())
            .or(self.invalid.take())
        {
            return Err(e);
        }
        for o in std::mem::take(&mut self.waiting) {
            self.convert(o)?;
        }
        let mut m = self.manifests;
        m.buffers = self.buffers.resolve()?;
        m.document_counts = read.document_counts;
        m.ignored = [read.ignored, m.ignored].concat();
        m.warnings = [read.warnings, m.warnings].concat();
        if self.windows_ipam > 0 {
            m.warnings
                .push(format!("{WINDOWS_IPAM} ({} object(s))", self.windows_ipam));
        }
        m.warnings.extend(unknown_capacity_types(&m.node_pools));
        m.warnings
            .extend(super::nodeclass::unpublished_alias_versions(
                &m.node_classes,
            ));
        // Manifests describe objects as written: admission would give a claim without a class
        // the default one, and the controllers create the claims of templates with the pod.
        m.storage.apply_default_class();
        m.storage.claims_from_templates = true;
        // Karpenter's view of each node: whether a NodeClaim stands for it (`Node::claimless`,
        // what `Node::counts_as_initialized` reads). Here, where the nodes meet their claims,
        // and not in the core, which never sees the objects apart.
        crate::model::node::mark_claimless(&mut m.nodes, &m.node_claims);
        // Every pod, whatever the order of the input: admission refuses a pod naming a class
        // that does not exist yet, so in a cluster the classes came first.
        let classes = &self.priority_classes;
        for pod in m
            .pods
            .iter_mut()
            .chain(&mut m.bound_pods)
            .chain(&mut m.daemonsets)
        {
            classes.admit(pod);
        }
        let daemon_pods = m.bound_pods.iter().chain(&self.unbound_daemon_pods);
        pods::daemonsets_as_their_newest_pods(&mut m.daemonsets, daemon_pods);
        m.unbound_daemon_pods = self.unbound_daemon_pods;
        Ok(m)
    }

    /// Whether a pod (or a workload's template) names a RuntimeClass not read yet, whose
    /// overhead its requests may need.
    fn names_an_unknown_runtime_class(&self, o: &Object) -> bool {
        let spec = match &o.object {
            ApiObject::Pod(p) => p.spec.as_ref(),
            ApiObject::Workload(w) => w
                .spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .and_then(|t| t.spec.as_ref()),
            _ => None,
        };
        spec.and_then(|s| s.runtime_class_name.as_ref())
            .is_some_and(|rc| !self.runtime.contains_key(rc))
    }

    /// Normalises one object into the manifests.
    fn convert(&mut self, o: Object) -> Result<(), InputError> {
        let Builder {
            scope,
            manifests: m,
            runtime,
            budget,
            pod_names,
            sources,
            limit_ranges,
            priority_classes,
            unbound_daemon_pods,
            windows_ipam,
            buffers,
            ..
        } = self;
        let mut claim = |pod: &Pod, at: &Location, object: &str| {
            claim_pod_name(pod_names, sources, pod, at, object)
        };
        let (at, origin) = (&o.location, &o.origin);
        match o.object {
            ApiObject::Provisioner(p) => {
                let (pool, class) = p.to_model(at, origin)?;
                m.node_pools.push(pool);
                m.node_classes.extend(class);
            }
            ApiObject::AwsNodeTemplate(t) => m.node_classes.push(t.to_model(at, origin)?),
            ApiObject::NodePoolV1Beta1(p) => m.node_pools.push(p.to_model(at, origin)?),
            ApiObject::NodePoolV1(p) => m.node_pools.push(p.to_model(at, origin)?),
            ApiObject::Ec2NodeClassV1Beta1(c) => m.node_classes.push(c.to_model(at, origin)?),
            ApiObject::Ec2NodeClassV1(c) => m.node_classes.push(c.to_model(at, origin)?),
            ApiObject::NodeOverlay(o) => m.node_overlays.push(o.to_model(at, origin)?),
            ApiObject::Machine(c) => m.node_claims.push(c.to_model(at, origin)?),
            ApiObject::NodeClaimV1Beta1(c) => m.node_claims.push(c.to_model(at, origin)?),
            ApiObject::NodeClaimV1(c) => m.node_claims.push(c.to_model(at, origin)?),
            ApiObject::Node(n) => {
                let node = convert_node(&n, at)?;
                // Said, because such a node silently changes the decisions: it has no room
                // (an initialized node's room is its own status, `statenode.go Allocatable`).
                let status = n.status.as_ref();
                if node.initialized
                    && status.is_none_or(|s| s.allocatable.is_none() && s.capacity.is_none())
                {
                    m.warnings.push(format!(
                        "{at}: Node/{} has neither status.allocatable nor status.capacity: it is \
                         taken as having no room (nothing can move onto it)",
                        node.name
                    ));
                }
                m.nodes.push(node);
            }
            ApiObject::PodDisruptionBudget(p) => {
                super::pdb::check(&p, at)?;
                m.pdbs.push(*p);
            }
            ApiObject::Namespace(ns) => {
                let name = ns.metadata.name.clone().unwrap_or_default();
                m.namespace_labels
                    .insert(name, ns.metadata.labels.clone().unwrap_or_default());
            }
            ApiObject::RuntimeClass(_) => {}
            ApiObject::PriorityClass(pc) => {
                priority_classes.insert(&Ctx::new(at, o.name.clone()), &pc)?;
            }
            ApiObject::LimitRange(lr) => {
                // Admission applies a LimitRange to pods created after it: here, to the pods
                // read after it. Pods of its namespace read before it are said.
                let ns = lr.metadata.namespace.clone().unwrap_or("default".into());
                let prefix = format!("{ns}/");
                if pod_names.keys().any(|k| k.starts_with(&prefix)) {
                    m.warnings.push(format!(
                        "{} ({at}): pods of namespace {ns} came before it, so its default \
                         requests are not added to them; put LimitRanges before the workloads",
                        o.name
                    ));
                }
                let defaults = limit_ranges.entry(ns).or_default();
                for (k, v) in pods::limit_range_default_requests(&lr) {
                    defaults.entry(k).or_insert(v);
                }
            }
            ApiObject::StorageClass(sc) => {
                let sc = convert_storage_class(&sc, at)?;
                m.storage.classes.insert(sc.name.clone(), sc);
            }
            ApiObject::PersistentVolumeClaim(pvc) => {
                super::storage::check_claim(&pvc, at)?;
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
            ApiObject::CapacityBuffer(b) => buffers.buffers.push((b.to_model(at)?, at.clone())),
            ApiObject::PodTemplate(t) => buffers.add_pod_template(&t),
            ApiObject::Pod(_) | ApiObject::Workload(_) if *scope == Scope::NoPods => {}
            ApiObject::Pod(mut p) => {
                let ns = p.metadata.namespace.as_deref().unwrap_or("default");
                if let (Some(d), Some(spec)) = (limit_ranges.get(ns), p.spec.as_mut()) {
                    pods::admit_limit_range(spec, d);
                }
                let admitted =
                    pods::admit_windows_ipam(p.spec.as_mut(), p.metadata.labels.as_ref());
                *windows_ipam += usize::from(admitted);
                let mut pod = convert_pod(&p, at, runtime)?;
                claim(&pod, at, &o.name)?;
                if pod.node_name.is_none() {
                    pod.scheduled_condition = Some(pods::offline_scheduled_condition(&pod));
                    if pod.is_daemonset_pod() {
                        unbound_daemon_pods.push(pod.clone());
                    }
                }
                m.classify_bare_pod(&mut pod, &o.name, at);
            }
            ApiObject::Workload(mut w) => {
                // As written: a virtual pod is never admitted (LimitRange, Windows IPAM).
                buffers.add_workload(&w);
                let ns = w.metadata.namespace.as_deref().unwrap_or("default");
                let spec = w.spec.as_mut().and_then(|s| s.template.as_mut());
                if let (Some(d), Some(spec)) =
                    (limit_ranges.get(ns), spec.and_then(|t| t.spec.as_mut()))
                {
                    pods::admit_limit_range(spec, d);
                }
                let kind = w.kind.clone().unwrap_or_default();
                // A DaemonSet's overhead is its template until it has a pod (Karpenter's
                // `getDaemonSetPods`), and a template is not admitted.
                let template = w.spec.as_mut().and_then(|s| s.template.as_mut());
                if let Some(t) = template.filter(|_| kind != "DaemonSet") {
                    let labels = t.metadata.as_ref().and_then(|m| m.labels.as_ref());
                    *windows_ipam += usize::from(pods::admit_windows_ipam(t.spec.as_mut(), labels));
                }
                match pods::expand(&w, &kind, at, runtime, budget)? {
                    pods::Expansion::Daemon(pod) => m.daemonsets.push(*pod),
                    pods::Expansion::Pods(expanded) => {
                        for pod in &expanded {
                            claim(pod, at, &o.name)?;
                        }
                        // A gated template gates every replica.
                        if expanded.first().is_some_and(|p| p.scheduling_gated) {
                            m.gated_pods += expanded.len();
                            m.ignored.push(format!("{} ({at}): {GATED}", o.name));
                        } else {
                            m.pods.extend(expanded);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Said when pods were given EKS's Windows IPAM request offline.
const WINDOWS_IPAM: &str = "assuming: Windows IPAM is on (EKS needs amazon-vpc-cni enable-windows-ipam \"true\" for Windows pods): the VPC resource controller's webhook gives each pod selecting kubernetes.io/os=windows (not hostNetwork, not Fargate) vpc.amazonaws.com/PrivateIPv4Address: 1, so a Windows node holds as many as its type's IPv4 addresses per interface less one";

/// Why a pod with `schedulingGates` gets no capacity.
const GATED: &str = "gated by spec.schedulingGates: the scheduler has not tried it (PodScheduled reason SchedulingGated), and Karpenter provisions only for pods it marked Unschedulable";

impl Manifests {
    /// Files a bare Pod: bound (has `nodeName`), pending (docs/spec.md §3: a bare Pod without `nodeName`
    /// is pending whatever its status says), or set aside when Karpenter would never provision
    /// for it (DaemonSet- or Node-owned, or nominated to a node by the scheduler).
    fn classify_bare_pod(&mut self, pod: &mut Pod, object: &str, at: &Location) {
        if pod.node_name.is_some() {
            self.bound_pods.push(std::mem::take(pod));
            return;
        }
        pod.scheduled_condition = Some(pods::offline_scheduled_condition(pod));
        if pod.is_provisionable() {
            self.pods.push(std::mem::take(pod));
            return;
        }
        let why = match (&pod.nominated_node_name, &pod.owner) {
            _ if pod.scheduling_gated => {
                self.gated_pods += 1;
                GATED.to_string()
            }
            (Some(n), _) => format!("nominated to node {n} by the scheduler"),
            (None, Some(o)) if o.kind == "DaemonSet" => format!(
                "owned by DaemonSet {}, which Karpenter does not provision for",
                o.name
            ),
            (None, Some(o)) => format!(
                "owned by {} {}, which Karpenter does not provision for",
                o.kind, o.name
            ),
            (None, None) => "not provisionable".to_string(),
        };
        self.ignored.push(format!("{object} ({at}): {why}"));
    }
}

/// The duplicate-detection family of an object: NodePools of v1beta1 and v1 are the same kind
/// served at two versions, so `default` in both is a duplicate; a Provisioner is not.
/// A pool requirement naming a capacity type no offering has (`on_demand`, `Spot`): Karpenter
/// reads it as written and silently matches nothing with it (`core v1.14.1 pkg/apis/v1/labels.go`
/// `CapacityTypeSpot`/`OnDemand`/`Reserved`), so a pool of `In [on_demand]` launches nothing.
fn unknown_capacity_types(pools: &[crate::model::nodepool::NodePool]) -> Vec<String> {
    use crate::model::labels::CAPACITY_TYPE;
    let known = crate::model::labels::known_values(CAPACITY_TYPE).unwrap_or_default();
    let mut out = Vec::new();
    for pool in pools {
        let odd: Vec<&str> = pool
            .requirements
            .iter()
            .filter(|r| {
                r.key == CAPACITY_TYPE && r.operator == crate::model::requirements::Operator::In
            })
            .flat_map(|r| r.values.iter().map(String::as_str))
            .filter(|v| !known.contains(v))
            .collect();
        if !odd.is_empty() {
            out.push(format!(
                "{} {}: {CAPACITY_TYPE} value(s) {} match no offering (capacity types are spot, on-demand and reserved)",
                pool.kind(),
                pool.name,
                odd.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    out
}

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
        ApiObject::LimitRange(_) => "LimitRange",
        ApiObject::PriorityClass(_) => "PriorityClass",
        ApiObject::StorageClass(_) => "StorageClass",
        ApiObject::PersistentVolumeClaim(_) => "PersistentVolumeClaim",
        ApiObject::PersistentVolume(_) => "PersistentVolume",
        ApiObject::CsiNode(_) => "CSINode",
        ApiObject::PodTemplate(_) => "PodTemplate",
        ApiObject::CapacityBuffer(_) => "CapacityBuffer",
    }
}

/// Records a pod's `namespace/name`, failing when two inputs produce the same pod (a bare Pod
/// `web-0` next to a Deployment `web`, say).
fn claim_pod_name(
    names: &mut HashMap<Box<str>, At>,
    sources: &mut Vec<String>,
    pod: &Pod,
    at: &Location,
    source_object: &str,
) -> Result<(), InputError> {
    let key: Box<str> = pod.key().into();
    if let Some(first) = names.get(&key) {
        let object = if source_object.starts_with("Pod/") {
            source_object.to_string()
        } else {
            format!("{source_object} (pod {key})")
        };
        return Err(InputError::Duplicate {
            at: at.clone(),
            object,
            first: first.location(sources),
        });
    }
    names.insert(key, At::new(at, sources));
    Ok(())
}

/// A [`Location`] kept small: its source as an index.
#[derive(Clone, Copy)]
struct At {
    source: u32,
    document: Option<u32>,
    item: Option<u32>,
}

impl At {
    fn new(location: &Location, sources: &mut Vec<String>) -> At {
        // Objects arrive source by source: the last one is nearly always the one.
        let source = match sources.iter().rposition(|s| *s == location.source) {
            Some(i) => i,
            None => {
                sources.push(location.source.clone());
                sources.len() - 1
            }
        };
        At {
            source: u32::try_from(source).unwrap_or(u32::MAX),
            document: location.document,
            item: location.item,
        }
    }

    fn location(self, sources: &[String]) -> Location {
        Location {
            source: sources
                .get(self.source as usize)
                .cloned()
                .unwrap_or_default(),
            document: self.document,
            item: self.item,
        }
    }
}
