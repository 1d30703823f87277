//! Pods and workloads → slim model pods.
//!
//! A bare Pod converts one to one. A Deployment, ReplicaSet, ReplicationController or
//! StatefulSet becomes `replicas` pending pods (default 1), a Job `parallelism` pods (default 1,
//! capped by `completions`), a DaemonSet one template pod used for overhead. The template is
//! converted once and cloned per replica, so a 50k-replica Deployment costs 50k small clones.
//!
//! Requests follow Kubernetes' `PodRequests` (docs/karpenter.md §6.3): the larger of the app
//! containers plus sidecars and the largest init container plus the sidecars started before it;
//! then the pod-level requests where set, plus runtime-class overhead, plus `pods: 1`. A
//! container limit stands in for a missing request, as the API server defaults it.

use std::collections::BTreeMap;

use super::core::{ClaimTemplate, PodSpec};
use super::error::{object_name, Ctx, InputError, Location};
use super::meta::ObjectMeta;
use super::validate;
use crate::model::labels;
use crate::model::pod::{ClaimSource, HostPort, Owner, Pod, PodRefusal, PodVolume, Weighted};

mod admission;
mod containers;
mod expansion;
mod requests;
mod terms;

use admission::admit_runtime_class_scheduling;
use containers::check_containers;
use requests::{is_sidecar, pod_requests, pod_requests_held, HeldResources};
use terms::{node_term, pod_affinity, spreads, tolerations, weight};

pub use admission::RuntimeClassAdmissions;
pub(crate) use admission::{
    admit_limit_range, admit_windows_ipam, limit_range_default_requests, runtime_class,
    PriorityClasses,
};
pub(crate) use expansion::{daemonsets_as_their_newest_pods, expand, Expansion};
pub(crate) use terms::label_selector;

/// Most pods a single load may expand to: far above any real cluster (the performance target is
/// 150k pods), low enough that a typo like `replicas: 100000000` fails fast instead of eating
/// the machine's memory.
pub const MAX_EXPANDED_PODS: i64 = 1_000_000;

fn host_ports(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<Vec<HostPort>, InputError> {
    let host_network = spec.host_network == Some(true);
    let app = spec
        .containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (format!("{path}.containers[{i}]"), c, true));
    // A sidecar's host ports are checked as the API server checks them, but not used: Karpenter
    // reads the app containers' only (`core v1.14.1: pkg/scheduling/hostportusage.go
    // GetHostPorts` ranges over `pod.Spec.Containers`).
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| is_sidecar(c))
        .map(|(i, c)| (format!("{path}.initContainers[{i}]"), c, false));
    let mut out = Vec::new();
    for (cpath, c, used) in app.chain(sidecars) {
        for (j, p) in c.ports.iter().flatten().enumerate() {
            // With host networking the API server defaults hostPort to containerPort.
            let port = match (p.host_port, host_network) {
                (Some(h), _) if h != 0 => h,
                (_, true) => p.container_port.unwrap_or(0),
                _ => continue,
            };
            if !(1..=65535).contains(&port) {
                return Err(ctx.invalid(
                    format!("{cpath}.ports[{j}].hostPort"),
                    format!("must be between 1 and 65535, got {port}"),
                ));
            }
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            if !matches!(protocol.as_str(), "TCP" | "UDP" | "SCTP") {
                return Err(ctx.invalid(
                    format!("{cpath}.ports[{j}].protocol"),
                    format!("unknown protocol {protocol:?} (expected TCP, UDP or SCTP)"),
                ));
            }
            let ip = p
                .host_ip
                .clone()
                .filter(|ip| !ip.is_empty())
                .unwrap_or_else(|| "0.0.0.0".into());
            if used {
                out.push(HostPort {
                    ip,
                    port: port as i32,
                    protocol,
                });
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The pod's volumes backed by claims (`persistentVolumeClaim`, `ephemeral`).
fn volumes(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<Vec<PodVolume>, InputError> {
    let mut out = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, v) in spec.volumes.iter().flatten().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        // `ValidateVolumes`: every volume named, each name once.
        if let Some(name) = v.name.as_deref().filter(|n| !n.is_empty()) {
            if !names.insert(name) {
                return Err(ctx.invalid(
                    format!("{at}.name"),
                    format!("duplicate volume name {name:?}"),
                ));
            }
        }
        let name = || {
            v.name
                .clone()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| ctx.invalid(format!("{at}.name"), "required"))
        };
        if let Some(pvc) = &v.persistent_volume_claim {
            let claim = pvc
                .claim_name
                .clone()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    ctx.invalid(format!("{at}.persistentVolumeClaim.claimName"), "required")
                })?;
            out.push(PodVolume {
                name: name()?,
                claim: ClaimSource::Named(claim),
            });
        } else if let Some(e) = &v.ephemeral {
            let template = e.volume_claim_template.as_ref().ok_or_else(|| {
                ctx.invalid(format!("{at}.ephemeral.volumeClaimTemplate"), "required")
            })?;
            out.push(PodVolume {
                name: name()?,
                claim: ClaimSource::Ephemeral {
                    storage_class: template_class(template),
                },
            });
        }
    }
    Ok(out)
}

fn template_class(t: &ClaimTemplate) -> Option<String> {
    t.spec.as_ref().and_then(|s| s.storage_class_name.clone())
}

/// A StatefulSet's `volumeClaimTemplates` as pod volumes: each replaces the pod template's
/// volume of the same name, as the StatefulSet controller does (`updateStorage`).
fn claim_template_volumes(
    ctx: &Ctx,
    templates: &[ClaimTemplate],
    pod: &mut Pod,
) -> Result<(), InputError> {
    for (i, t) in templates.iter().enumerate() {
        let name = t
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                ctx.invalid(
                    format!("spec.volumeClaimTemplates[{i}].metadata.name"),
                    "required",
                )
            })?;
        pod.volumes.retain(|v| v.name != name);
        pod.volumes.push(PodVolume {
            name,
            claim: ClaimSource::StatefulSet {
                storage_class: template_class(t),
            },
        });
    }
    Ok(())
}

/// Converts the scheduling half of a pod spec (everything but identity and status).
/// `path` is the spec's field path (`spec` for a Pod, `spec.template.spec` for a workload).
pub(crate) fn convert_spec(
    ctx: &Ctx,
    path: &str,
    spec: &PodSpec,
    labels: &BTreeMap<String, String>,
    runtime: &RuntimeClassAdmissions,
) -> Result<Pod, InputError> {
    check_containers(ctx, path, spec)?;
    let mut pod = Pod::default();
    pod.requests = pod_requests(ctx, path, spec, runtime)?;
    pod.scheduling_gated = spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty());
    let mut unsupported: Option<String> = None;
    let mut invalid: Option<String> = None;
    if let Some(sel) = &spec.node_selector {
        validate::label_map(ctx, &format!("{path}.nodeSelector"), sel, false)?;
        pod.node_selector = sel.clone();
    }
    let apath = format!("{path}.affinity");
    let affinity = spec.affinity.as_ref();
    if let Some(na) = affinity.and_then(|a| a.node_affinity.as_ref()) {
        let npath = format!("{apath}.nodeAffinity");
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            let rpath =
                format!("{npath}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
            validate::node_selector_terms(ctx, &rpath, req.node_selector_terms.as_deref())?;
            for (i, t) in req.node_selector_terms.iter().flatten().enumerate() {
                let at = format!("{rpath}[{i}]");
                if let Some(why) = terms::karpenter_invalid(t) {
                    // The API server's own checks still hold (key, operator, how many values).
                    let _checked = node_term(ctx, &at, &terms::with_placeholder_values(t))?;
                    invalid.get_or_insert(why);
                    continue;
                }
                match node_term(ctx, &at, t)? {
                    Ok(term) => pod.required_node_affinity.push(term),
                    Err(why) => {
                        unsupported.get_or_insert(why);
                    }
                }
            }
        }
        for (i, p) in na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{npath}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            let w = weight(ctx, &format!("{at}.weight"), p.weight)?;
            let Some(pref) = &p.preference else { continue };
            match node_term(ctx, &format!("{at}.preference"), pref)? {
                Ok(term) => pod
                    .preferred_node_affinity
                    .push(Weighted { weight: w, term }),
                // An empty preference is a no-op in Kubernetes; matchFields is not.
                Err(why) if why.contains("matchFields") => {
                    unsupported.get_or_insert(why);
                }
                Err(_) => {}
            }
        }
    }
    (pod.pod_affinity, pod.preferred_pod_affinity) = pod_affinity(
        ctx,
        &format!("{apath}.podAffinity"),
        affinity.and_then(|a| a.pod_affinity.as_ref()),
        labels,
    )?;
    (pod.pod_anti_affinity, pod.preferred_pod_anti_affinity) = pod_affinity(
        ctx,
        &format!("{apath}.podAntiAffinity"),
        affinity.and_then(|a| a.pod_anti_affinity.as_ref()),
        labels,
    )?;
    pod.tolerations = tolerations(
        ctx,
        &format!("{path}.tolerations"),
        spec.tolerations.as_deref(),
    )?;
    if let Some(rc) = spec.runtime_class_name.as_deref() {
        if let Some(admission) = runtime.get(rc) {
            admit_runtime_class_scheduling(ctx, path, rc, admission, &mut pod)?;
        }
    }
    pod.topology_spread = spreads(
        ctx,
        &format!("{path}.topologySpreadConstraints"),
        spec.topology_spread_constraints.as_deref(),
    )?;
    pod.host_ports = host_ports(ctx, path, spec)?;
    pod.volumes = volumes(ctx, path, spec)?;
    pod.priority_class_name = spec.priority_class_name.clone();
    pod.termination_grace_period_seconds = spec.termination_grace_period_seconds;
    // Kubernetes keeps priorities within int32 (`[-2147483648, 1000000000]`); clamp anyway.
    // Without `spec.priority` (a manifest as written), the Priority admission plugin fills it
    // from the class: the two built-in ones are known here; the input's own PriorityClasses
    // (and a `globalDefault` one) once the whole input is read (`PriorityClasses::admit`).
    pod.priority = spec
        .priority
        .map(|p| p.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
        .or_else(|| system_priority(spec.priority_class_name.as_deref()));
    pod.refusal = (unsupported.map(PodRefusal::Unsupported))
        .or(invalid.map(PodRefusal::InvalidRequirement))
        .map(Box::new);
    pod.dra = has_dra_requirements(spec);
    Ok(pod)
}

/// Karpenter's `HasDRARequirements` (`core v1.14.1: pkg/utils/pod/scheduling.go`, with
/// 0a96b78cb "fix: detect pod-level ResourceClaims in HasDRARequirements (#3124)"): a pod-level
/// `resourceClaims` entry, or a container or init container consuming a claim.
fn has_dra_requirements(spec: &PodSpec) -> bool {
    spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty())
        || spec
            .containers
            .iter()
            .chain(spec.init_containers.iter())
            .flatten()
            .any(|c| {
                c.resources
                    .as_ref()
                    .and_then(|r| r.claims.as_ref())
                    .is_some_and(|c| !c.is_empty())
            })
}

/// The value of a built-in PriorityClass (`k8s.io/kubernetes pkg/apis/scheduling`
/// `SystemPriorityClasses`: `system-node-critical` = `SystemCriticalPriority` + 1000,
/// `system-cluster-critical` = `SystemCriticalPriority`, 2000000000), which admission writes
/// into `spec.priority`; Karpenter's `EvictionCost` (core v1.14.1
/// `pkg/utils/disruption/disruption.go`) reads that field.
fn system_priority(class: Option<&str>) -> Option<i32> {
    match class? {
        "system-node-critical" => Some(2_000_001_000),
        "system-cluster-critical" => Some(2_000_000_000),
        _ => None,
    }
}

/// The managing owner of a pod: the controller reference, else the first owner.
fn owner_of(meta: &ObjectMeta) -> Option<Owner> {
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    let o = owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| owners.first())?;
    Some(Owner::from_reference(
        o.kind.as_deref().unwrap_or_default(),
        o.name.clone().unwrap_or_default(),
        o.api_version.as_deref().unwrap_or_default(),
    ))
}

fn do_not_disrupt(annotations: Option<&BTreeMap<String, String>>) -> Option<String> {
    annotations?.get(labels::DO_NOT_DISRUPT).cloned()
}

/// `karpenter.sh/do-not-evict: "true"` (v0.31–v0.37 compare the value with `"true"`).
fn do_not_evict(annotations: Option<&BTreeMap<String, String>>) -> bool {
    annotations
        .and_then(|a| a.get(labels::DO_NOT_EVICT))
        .is_some_and(|v| v == "true")
}

/// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"` (Cluster Autoscaler's
/// `drain.go` reads the value `"false"`).
fn ca_not_safe_to_evict(annotations: Option<&BTreeMap<String, String>>) -> bool {
    annotations
        .and_then(|a| a.get(labels::CA_SAFE_TO_EVICT))
        .is_some_and(|v| v == "false")
}

/// The labels a workload's controller puts on every pod it creates, beside the template's:
/// a Deployment's ReplicaSet adds `pod-template-hash` (`k8s.io/kubernetes
/// pkg/controller/deployment/sync.go` `getNewReplicaSet`), a StatefulSet `controller-revision-hash`
/// (`stateful_set_utils.go` `newVersionedStatefulSetPod`), a Job `batch.kubernetes.io/job-name`
/// and `job-name` (`pkg/registry/batch/job/strategy.go` `generateSelector`). Karpenter sees them
/// on the pending pods, so a spread's or affinity's `matchLabelKeys: [pod-template-hash]` narrows
/// its selector to the workload's own pods. The real hashes come from the controllers; offline
/// one stable value per workload stands in (only equality matters). Per-replica labels
/// (`statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index`) are not added: the
/// template is converted once for all replicas.
fn add_controller_labels(
    kind: &str,
    namespace: &str,
    name: &str,
    labels: &mut BTreeMap<String, String>,
) {
    let hash = || template_hash(&format!("{kind}/{namespace}/{name}"));
    let added: Vec<(&str, String)> = match kind {
        "Deployment" => vec![("pod-template-hash", hash())],
        "StatefulSet" => vec![("controller-revision-hash", format!("{name}-{}", hash()))],
        "Job" => vec![
            ("batch.kubernetes.io/job-name", name.to_string()),
            ("job-name", name.to_string()),
        ],
        _ => vec![],
    };
    for (key, value) in added {
        labels.entry(key.to_string()).or_insert(value);
    }
}

/// A ten-character hash in the alphabet Kubernetes' `rand.SafeEncodeString` uses for
/// `pod-template-hash` (no vowels, no look-alike digits).
fn template_hash(identity: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut h = crate::model::digest::digest64(&[identity]);
    (0..10)
        .map(|_| {
            let c = ALPHABET[(h % ALPHABET.len() as u64) as usize] as char;
            h /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// A deterministic UUID-shaped id for a synthesised pod (two FNV-1a hashes of its identity), so
/// plans are reproducible and the solver's UID tie-break has something stable to sort on.
pub(crate) fn synthetic_uid(identity: &str) -> String {
    let fnv = |seed: u64| {
        identity.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// A bare Pod, as written.
pub fn convert_pod(
    pod: &super::core::Pod,
    at: &Location,
    runtime: &RuntimeClassAdmissions,
) -> Result<Pod, InputError> {
    let meta = &pod.metadata;
    let namespace = meta.namespace_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name("Pod", Some(&namespace), Some(&name)));
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let labels = meta.labels.clone().unwrap_or_default();
    let mut out = convert_spec(&ctx, "spec", spec, &labels, runtime)?;
    out.uid = meta
        .uid
        .clone()
        .unwrap_or_else(|| synthetic_uid(&format!("Pod/{namespace}/{name}")));
    out.namespace = namespace;
    out.name = name;
    out.labels = labels;
    out.owner = owner_of(meta);
    out.node_name = spec.node_name.clone().filter(|n| !n.is_empty());
    let status = pod.status.clone().unwrap_or_default();
    if let Some(held) = HeldResources::of(&status) {
        out.requests = pod_requests_held(&ctx, "spec", spec, Some(&held), runtime)?;
    }
    out.nominated_node_name = status.nominated_node_name.filter(|n| !n.is_empty());
    out.phase = status.phase;
    out.scheduled_condition = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_.as_deref() == Some("PodScheduled"))
        .map(|c| {
            (
                c.status.clone().unwrap_or_default(),
                c.reason.clone().unwrap_or_default(),
            )
        });
    out.creation_timestamp = meta.creation_timestamp.clone();
    out.start_time = status.start_time;
    out.terminating = meta.deletion_timestamp.is_some();
    out.do_not_disrupt = do_not_disrupt(meta.annotations.as_ref());
    out.do_not_evict = do_not_evict(meta.annotations.as_ref());
    out.ca_not_safe_to_evict = ca_not_safe_to_evict(meta.annotations.as_ref());
    out.deletion_cost = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::POD_DELETION_COST))
        .cloned();
    out.not_ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_.as_deref() == Some("Ready") && c.status.as_deref() == Some("False"));
    Ok(out)
}

/// The `PodScheduled` condition an unbound pod from a manifest gets offline: the scheduler found
/// no node (`Unschedulable`), unless the pod carries `schedulingGates` — then it never tried
/// (`SchedulingGated`), and Karpenter, which provisions only for pods marked `Unschedulable`
/// (core v1.14.1 `pkg/utils/pod/scheduling.go` `FailedToSchedule`), leaves it alone.
pub(crate) fn offline_scheduled_condition(pod: &Pod) -> (String, String) {
    let reason = if pod.scheduling_gated {
        "SchedulingGated"
    } else {
        "Unschedulable"
    };
    ("False".into(), reason.into())
}
#[cfg(test)]
mod tests;
