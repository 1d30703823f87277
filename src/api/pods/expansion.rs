//! Workloads → pending pods: a controller's replicas (Deployment, ReplicaSet, StatefulSet, Job,
//! ReplicationController) from its template, DaemonSets as their newest pods.

use std::collections::BTreeMap;

use super::admission::RuntimeClassAdmissions;
use super::terms::label_selector;
use super::{
    add_controller_labels, ca_not_safe_to_evict, claim_template_volumes, convert_spec,
    do_not_disrupt, do_not_evict, offline_scheduled_condition, synthetic_uid, MAX_EXPANDED_PODS,
};
use crate::api::core::{LabelSelectorSpec, PodSpec, Workload, WorkloadSpec};
use crate::api::error::{object_name, Ctx, InputError, Location};
use crate::api::validate;
use crate::model::pod::{Owner, Pod};

/// Karpenter's stand-in for each DaemonSet (`core v1.14.1: pkg/controllers/state/cluster.go`
/// `UpdateDaemonSet`, `provisioning/provisioner.go` `getDaemonSetPods`; `state/suite_test.go`
/// "DaemonSet Controller" › "should update daemonsetCache with the newest created pod"): the
/// newest pod the DaemonSet controls, where the input has one, else the template. So its
/// requests are what admission made of them (a LimitRange default, a VPA resize, a mutating
/// webhook) and its tolerations include those the DaemonSet controller adds to every pod
/// (`node.kubernetes.io/not-ready`, `unschedulable`, …). The template's node affinity stays,
/// as upstream puts it back (the controller pins each pod to its node by name). `pods`: the
/// input's pods, bound or not: `UpdateDaemonSet` takes the newest pod the DaemonSet controls
/// whatever its node (provisioning suite › Daemonsets "should remove daemonset node hostname
/// affinity when considering daemonset schedulability": a pod not bound yet, whose requests a
/// LimitRange changed). Karpenter never plans a DaemonSet pod itself.
pub(crate) fn daemonsets_as_their_newest_pods<'p>(
    daemonsets: &mut [Pod],
    pods: impl IntoIterator<Item = &'p Pod>,
) {
    if daemonsets.is_empty() {
        return;
    }
    let mut newest: std::collections::HashMap<(&str, &str), &Pod> =
        std::collections::HashMap::new();
    for p in pods.into_iter().filter(|p| p.is_daemonset_pod()) {
        let Some(owner) = p.owner.as_ref() else {
            continue;
        };
        let key = (p.namespace.as_str(), owner.name.as_str());
        let newer = newest
            .get(&key)
            .is_none_or(|q| p.creation_timestamp > q.creation_timestamp);
        if newer {
            newest.insert(key, p);
        }
    }
    for d in daemonsets {
        let Some(owner) = d.owner.as_ref() else {
            continue;
        };
        let found = newest
            .get(&(d.namespace.as_str(), owner.name.as_str()))
            .copied();
        if let Some(p) = found {
            if d.requests != p.requests || d.tolerations != p.tolerations {
                d.requests = p.requests.clone();
                d.tolerations = p.tolerations.clone();
            }
        }
    }
}

/// What a workload expands to.
pub(crate) enum Expansion {
    /// Pending pods.
    Pods(Vec<Pod>),
    /// A DaemonSet's template pod.
    Daemon(Box<Pod>),
}

/// Expands a workload controller of `kind` into its pods. `budget` is how many pods may still
/// be created in this load (see [`MAX_EXPANDED_PODS`]); it is decremented.
pub(crate) fn expand(
    w: &Workload,
    kind: &str,
    at: &Location,
    runtime: &RuntimeClassAdmissions,
    budget: &mut i64,
) -> Result<Expansion, InputError> {
    let meta = &w.metadata;
    let namespace = meta.namespace_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name(kind, Some(&namespace), Some(&name)));
    let spec = w.spec.clone().unwrap_or_default();
    let template = spec
        .template
        .as_ref()
        .ok_or_else(|| ctx.invalid("spec.template", "required"))?;
    let empty = PodSpec::default();
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels = tmeta.labels.clone().unwrap_or_default();
    add_controller_labels(kind, &namespace, &name, &mut labels);
    let mut proto = convert_spec(
        &ctx,
        "spec.template.spec",
        template.spec.as_ref().unwrap_or(&empty),
        &labels,
        runtime,
    )?;
    // The template's own metadata is checked like an object's (`ValidatePodTemplateSpec`).
    if let Some((field, why)) = validate::object_meta_problem("Pod", &tmeta) {
        return Err(ctx.invalid(format!("spec.template.{field}"), why));
    }
    check_selector(&ctx, spec.selector.as_ref(), tmeta.labels.as_ref())?;
    check_controller_rules(&ctx, kind, &spec)?;
    proto.namespace = namespace.clone();
    proto.labels = labels;
    proto.do_not_disrupt = do_not_disrupt(tmeta.annotations.as_ref());
    proto.do_not_evict = do_not_evict(tmeta.annotations.as_ref());
    proto.ca_not_safe_to_evict = ca_not_safe_to_evict(tmeta.annotations.as_ref());

    let count = |field: &str, v: Option<i64>| match v {
        None => Ok(1),
        Some(n) if n < 0 => Err(ctx.invalid(field, format!("must not be negative, got {n}"))),
        Some(n) => Ok(n),
    };
    let (owner_kind, replicas) = match kind {
        "DaemonSet" => {
            proto.name = name.clone();
            proto.uid = synthetic_uid(&format!("DaemonSet/{namespace}/{name}"));
            proto.owner = Some(Owner::of("DaemonSet", name));
            return Ok(Expansion::Daemon(Box::new(proto)));
        }
        "Job" => {
            let mut n = count("spec.parallelism", spec.parallelism)?;
            if let Some(c) = spec.completions {
                n = n.min(count("spec.completions", Some(c))?);
            }
            ("Job", if spec.suspend == Some(true) { 0 } else { n })
        }
        "StatefulSet" => {
            let templates = spec.volume_claim_templates.as_deref().unwrap_or_default();
            claim_template_volumes(&ctx, templates, &mut proto)?;
            ("StatefulSet", count("spec.replicas", spec.replicas)?)
        }
        // Deployment pods are owned by the Deployment's ReplicaSet; offline it has no hash, so
        // it carries the Deployment's name.
        "Deployment" => ("ReplicaSet", count("spec.replicas", spec.replicas)?),
        other => (other, count("spec.replicas", spec.replicas)?),
    };
    if replicas > *budget {
        return Err(ctx.invalid(
            if kind == "Job" { "spec.parallelism" } else { "spec.replicas" },
            format!("{replicas} pods is more than this tool expands in one load ({MAX_EXPANDED_PODS} in total)"),
        ));
    }
    *budget -= replicas;
    proto.owner = Some(Owner::of(owner_kind, name.clone()));
    proto.scheduled_condition = Some(offline_scheduled_condition(&proto));
    proto.phase = Some("Pending".into());
    let pods = (0..replicas)
        .map(|i| {
            let mut p = proto.clone();
            p.name = format!("{name}-{i}");
            p.uid = synthetic_uid(&format!("{kind}/{namespace}/{name}/{i}"));
            p
        })
        .collect();
    Ok(Expansion::Pods(pods))
}

/// What the API server requires of a controller beyond its template's pod
/// (`k8s.io/kubernetes pkg/apis/apps/validation/validation.go` `ValidateDeploymentSpec`,
/// `ValidateStatefulSetSpec`, `ValidateDaemonSetSpec`, `ValidateReplicaSetSpec`;
/// `pkg/apis/batch/validation` `validateJobSpec`; `pkg/apis/core/validation`
/// `ValidatePodTemplateSpecForRC`): an apps/v1 controller's selector set and not empty, its
/// pods restarted `Always`; a Job's pods `OnFailure` or `Never` (the pod default, Always, is
/// refused, so a Job must say which).
fn check_controller_rules(ctx: &Ctx, kind: &str, spec: &WorkloadSpec) -> Result<(), InputError> {
    let policy = spec
        .template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.restart_policy.as_deref());
    let at = "spec.template.spec.restartPolicy";
    match kind {
        "Job" if !matches!(policy, Some("OnFailure" | "Never")) => {
            let why = policy.map_or("required".to_string(), |p| {
                format!("unsupported value {p:?}")
            });
            return Err(ctx.invalid(
                at,
                format!("{why}: a Job's pods restart OnFailure or Never"),
            ));
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "ReplicationController" => {
            if let Some(p) = policy.filter(|p| *p != "Always") {
                return Err(ctx.invalid(
                    at,
                    format!("unsupported value {p:?}: a {kind}'s pods may only restart Always"),
                ));
            }
            let empty = |s: &serde_json::Value| {
                s.as_object().is_none_or(|m| {
                    m.values().all(|v| {
                        v.is_null()
                            || v.as_object().is_some_and(|o| o.is_empty())
                            || v.as_array().is_some_and(|a| a.is_empty())
                    })
                })
            };
            let selector = spec.selector.as_ref().filter(|s| !s.is_null());
            if kind != "ReplicationController" && selector.is_none_or(empty) {
                let why = if selector.is_none() {
                    "required"
                } else {
                    "an empty selector is invalid"
                };
                return Err(ctx.invalid("spec.selector", format!("{why}: a {kind} selects its pods by label (matchLabels or matchExpressions)")));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The API server refuses a workload whose selector does not select its own template's pods
/// (`pkg/apis/apps/validation ValidateDeploymentSpec`: "selector does not match template
/// labels"); a ReplicationController's selector is a plain map.
fn check_selector(
    ctx: &Ctx,
    selector: Option<&serde_json::Value>,
    labels: Option<&BTreeMap<String, String>>,
) -> Result<(), InputError> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(());
    };
    let empty = BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let is_structured =
        selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some();
    let matches = if is_structured {
        let spec: LabelSelectorSpec = serde_json::from_value(selector.clone())
            .map_err(|e| ctx.invalid("spec.selector", format!("not a label selector: {e}")))?;
        label_selector(ctx, "spec.selector", &spec)?.matches(labels)
    } else {
        selector.as_object().is_some_and(|m| {
            m.iter()
                .all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str())
        })
    };
    if matches {
        Ok(())
    } else {
        Err(ctx.invalid(
            "spec.template.metadata.labels",
            "the workload's spec.selector does not match its template's labels",
        ))
    }
}
