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

use super::core::{
    ClaimTemplate, Container, ContainerStatus, LabelSelectorSpec, NodeSelectorTermSpec,
    PodAffinity, PodAffinityTermSpec, PodSpec, TolerationSpec, TopologySpreadConstraintSpec,
    Workload,
};
use super::error::{object_name, Ctx, InputError, Location};
use super::meta::{ObjectMeta, ResourceList, ResourceRequirementsSpec};
use super::validate::{self, CLASSIC_OPERATORS};
use crate::model::labels;
use crate::model::overhead::PRIVATE_IPV4_ADDRESS;
use crate::model::pod::{
    ClaimSource, HostPort, NodeSelectorTerm, Owner, Pod, PodAffinityTerm, PodVolume,
    TopologySpread, Weighted, WhenUnsatisfiable,
};
use crate::model::resources::{Resources, PODS};
use crate::model::selector::{LabelSelector, SelectorExpr, SelectorOp};
use crate::model::taints::Toleration;

/// Most pods a single load may expand to: far above any real cluster (the performance target is
/// 150k pods), low enough that a typo like `replicas: 100000000` fails fast instead of eating
/// the machine's memory.
pub const MAX_EXPANDED_PODS: i64 = 1_000_000;

/// RuntimeClass name → what the API server's RuntimeClass admission adds to a pod naming it
/// (`k8s.io/kubernetes plugin/pkg/admission/runtimeclass/admission.go`): the fixed overhead,
/// for pods whose `spec.overhead` admission did not fill (`setOverhead`), and the class's
/// `scheduling` (`setScheduling`). Manifests describe pods as written, before admission;
/// Karpenter reads them after.
pub type RuntimeClassAdmissions = BTreeMap<String, RuntimeClassAdmission>;

/// What admission adds to a pod of one RuntimeClass (see [`RuntimeClassAdmissions`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeClassAdmission {
    /// `overhead.podFixed`.
    pub overhead: Resources,
    /// `scheduling.nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// `scheduling.tolerations`.
    pub tolerations: Vec<Toleration>,
}

/// The requests one LimitRange gives a container that sets none of a resource (neither request
/// nor limit), after the API server's defaulting of the LimitRange (`k8s.io/kubernetes
/// pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem`: a missing `default` is the `max`,
/// a missing `defaultRequest` the `default`, then the `min`). Of several `Container` items the
/// last wins (`LimitRanger`'s `defaultContainerResourceRequirements`).
pub(crate) fn limit_range_default_requests(lr: &super::core::LimitRange) -> ResourceList {
    let mut out = ResourceList::new();
    let items = lr.spec.iter().flat_map(|s| s.limits.iter().flatten());
    for item in items.filter(|i| i.type_.as_deref() == Some("Container")) {
        let mut default = item.default.clone().unwrap_or_default();
        for (k, v) in item.max.iter().flatten() {
            default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mut requests = item.default_request.clone().unwrap_or_default();
        for (k, v) in default.iter().chain(item.min.iter().flatten()) {
            requests.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out.extend(requests);
    }
    out
}

/// LimitRanger admission (`k8s.io/kubernetes plugin/pkg/admission/limitranger/admission.go
/// mergeContainerResources`): each container and init container gets the default request of
/// every resource it leaves unset. A resource with a limit already has its request — the pod's
/// own defaulting copies a limit into a missing request before admission runs.
pub(crate) fn admit_limit_range(spec: &mut PodSpec, defaults: &ResourceList) {
    let containers = spec.containers.iter_mut().flatten();
    for c in containers.chain(spec.init_containers.iter_mut().flatten()) {
        let r = c.resources.get_or_insert_with(Default::default);
        let limits = r.limits.clone().unwrap_or_default();
        let requests = r.requests.get_or_insert_with(Default::default);
        for (k, v) in defaults {
            if !limits.contains_key(k) && !requests.contains_key(k) {
                requests.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The label EKS Fargate's scheduler webhook puts on the pods it takes.
const FARGATE_PROFILE_LABEL: &str = "eks.amazonaws.com/fargate-profile";

/// EKS's VPC resource controller pod webhook with Windows IPAM on (`aws/amazon-vpc-resource-
/// controller-k8s webhooks/core/pod_webhook.go` `HandleWindowsPod`): a pod whose `nodeSelector`
/// names `kubernetes.io/os` (or `beta.kubernetes.io/os`) `windows`, not on the host network
/// and not a Fargate pod, gets `vpc.amazonaws.com/PrivateIPv4Address: 1` set in the first
/// container's requests and limits. Karpenter then fits it to a Windows type's
/// `IPv4PerInterface − 1` addresses (aws v1.14.1 `types.go` `privateIPv4Address`). Returns
/// whether the pod was changed (`spec` and `labels` as a Pod or a pod template has them).
pub(crate) fn admit_windows_ipam(
    spec: Option<&mut PodSpec>,
    labels: Option<&BTreeMap<String, String>>,
) -> bool {
    let Some(spec) = spec else { return false };
    let selects_windows = spec.node_selector.as_ref().is_some_and(|s| {
        [labels::OS, "beta.kubernetes.io/os"]
            .iter()
            .any(|k| s.get(*k).map(String::as_str) == Some("windows"))
    });
    let eligible = selects_windows
        && spec.host_network != Some(true)
        && !labels.is_some_and(|l| l.contains_key(FARGATE_PROFILE_LABEL));
    let Some(first) = spec
        .containers
        .iter_mut()
        .flatten()
        .next()
        .filter(|_| eligible)
    else {
        return false;
    };
    let one = || super::meta::IntOrString::String("1".into());
    let r = first.resources.get_or_insert_with(Default::default);
    for list in [&mut r.requests, &mut r.limits] {
        list.get_or_insert_with(Default::default)
            .insert(PRIVATE_IPV4_ADDRESS.to_string(), one());
    }
    true
}

/// Reads a RuntimeClass: its name and what admission adds to its pods.
pub(crate) fn runtime_class(
    ctx: &Ctx,
    rc: &super::core::RuntimeClass,
) -> Result<(String, RuntimeClassAdmission), InputError> {
    let fixed = rc.overhead.as_ref().and_then(|o| o.pod_fixed.as_ref());
    let mut out = RuntimeClassAdmission {
        overhead: validate::resources(ctx, "overhead.podFixed", fixed)?,
        ..RuntimeClassAdmission::default()
    };
    if let Some(s) = &rc.scheduling {
        if let Some(sel) = &s.node_selector {
            validate::label_map(ctx, "scheduling.nodeSelector", sel, false)?;
            out.node_selector = sel.clone().into_iter().collect();
        }
        out.tolerations = tolerations(ctx, "scheduling.tolerations", s.tolerations.as_deref())?;
    }
    Ok((rc.metadata.name.clone().unwrap_or_default(), out))
}

/// A container's requests, with limits standing in for missing requests.
fn container_requests(
    ctx: &Ctx,
    path: &str,
    r: Option<&ResourceRequirementsSpec>,
) -> Result<Resources, InputError> {
    let mut merged: ResourceList = r.and_then(|r| r.requests.clone()).unwrap_or_default();
    let mut source: BTreeMap<String, &str> =
        merged.keys().map(|k| (k.clone(), "requests")).collect();
    for (name, q) in r.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
        if !merged.contains_key(name) {
            merged.insert(name.clone(), q.clone());
            source.insert(name.clone(), "limits");
        }
    }
    let mut out = Resources::new();
    for (name, q) in &merged {
        let field = validate::key_path(&format!("{path}.{}", source[name]), name);
        let milli = validate::quantity(ctx, &field, &q.as_text())?;
        if milli < 0 {
            return Err(ctx.invalid(field, format!("must not be negative, got {q}")));
        }
        out.set(name, milli);
    }
    // The API server: a request above its limit is invalid
    // (`k8s.io/kubernetes pkg/apis/core/validation ValidateResourceRequirements`).
    for (name, limit) in r.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
        if source.get(name) != Some(&"requests") {
            continue;
        }
        let limit_milli = validate::quantity(
            ctx,
            &validate::key_path(&format!("{path}.limits"), name),
            &limit.as_text(),
        )?;
        if out.get(name) > limit_milli {
            return Err(ctx.invalid(
                validate::key_path(&format!("{path}.requests"), name),
                format!("must be less than or equal to the {name} limit ({limit})"),
            ));
        }
    }
    Ok(out)
}

/// Effective pod requests (see the module documentation). `path` is the pod spec's field path.
pub(crate) fn pod_requests(
    ctx: &Ctx,
    path: &str,
    spec: &PodSpec,
    runtime: &RuntimeClassAdmissions,
) -> Result<Resources, InputError> {
    pod_requests_held(ctx, path, spec, None, runtime)
}

/// What the kubelet holds for the containers of a running pod (`status.containerStatuses`,
/// `status.initContainerStatuses`), for Karpenter's `resources.Ceiling`: during an in-place
/// resize a container counts with the larger of its spec's requests, the status's
/// `resources.requests` and `allocatedResources` (`core v1.14.1:
/// pkg/utils/resources/resources.go Ceiling`, `UseStatusResources`; `k8s.io/component-helpers
/// resource/helpers.go determineContainerReqs`; `pkg/utils/resources/suite_test.go`
/// "UseStatusResources").
pub(crate) struct HeldResources<'a> {
    by_name: BTreeMap<&'a str, (usize, bool, &'a ContainerStatus)>,
    /// The `PodResizePending` condition's reason is `Infeasible`: the spec's requests are not
    /// what the kubelet will hold, the status alone counts.
    infeasible: bool,
}

impl<'a> HeldResources<'a> {
    /// The statuses of `status` that carry `resources` (only those change anything).
    pub(crate) fn of(status: &'a super::core::PodStatus) -> Option<HeldResources<'a>> {
        let mut by_name = BTreeMap::new();
        let lists = [
            (status.container_statuses.as_deref(), false),
            (status.init_container_statuses.as_deref(), true),
        ];
        for (list, init) in lists {
            for (i, cs) in list.into_iter().flatten().enumerate() {
                if let (Some(name), Some(_)) = (cs.name.as_deref(), cs.resources.as_ref()) {
                    by_name.entry(name).or_insert((i, init, cs));
                }
            }
        }
        let infeasible = status.conditions.iter().flatten().any(|c| {
            c.type_.as_deref() == Some("PodResizePending")
                && c.reason.as_deref() == Some("Infeasible")
        });
        (!by_name.is_empty()).then_some(HeldResources {
            by_name,
            infeasible,
        })
    }

    /// `spec` (a container's requests) as the kubelet holds them.
    fn ceiling(&self, ctx: &Ctx, name: &str, spec: Resources) -> Result<Resources, InputError> {
        let Some((i, init, cs)) = self.by_name.get(name) else {
            return Ok(spec);
        };
        let at = format!(
            "status.{}[{i}]",
            if *init {
                "initContainerStatuses"
            } else {
                "containerStatuses"
            }
        );
        let running = validate::resources(
            ctx,
            &format!("{at}.resources.requests"),
            cs.resources.as_ref().and_then(|r| r.requests.as_ref()),
        )?;
        let allocated = validate::resources(
            ctx,
            &format!("{at}.allocatedResources"),
            cs.allocated_resources.as_ref(),
        )?;
        let base = if self.infeasible {
            Resources::new()
        } else {
            spec
        };
        Ok(base.max(&running).max(&allocated))
    }
}

/// [`pod_requests`], with what the kubelet holds for a running pod's containers.
pub(crate) fn pod_requests_held(
    ctx: &Ctx,
    path: &str,
    spec: &PodSpec,
    held: Option<&HeldResources>,
    runtime: &RuntimeClassAdmissions,
) -> Result<Resources, InputError> {
    let ceiling = |c: &Container, r: Resources| match (held, c.name.as_deref()) {
        (Some(h), Some(name)) => h.ceiling(ctx, name, r),
        _ => Ok(r),
    };
    let mut reqs = Resources::new();
    for (i, c) in spec.containers.iter().flatten().enumerate() {
        let r = container_requests(
            ctx,
            &format!("{path}.containers[{i}].resources"),
            c.resources.as_ref(),
        )?;
        reqs.add_assign(&ceiling(c, r)?);
    }
    let mut sidecars = Resources::new();
    let mut init_max = Resources::new();
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let r = container_requests(
            ctx,
            &format!("{path}.initContainers[{i}].resources"),
            c.resources.as_ref(),
        )?;
        let during = if is_sidecar(c) {
            // A sidecar keeps running next to the app containers, and during the init
            // containers started after it; only a sidecar can be resized in place.
            let r = ceiling(c, r)?;
            reqs.add_assign(&r);
            sidecars.add_assign(&r);
            sidecars.clone()
        } else {
            r.add(&sidecars)
        };
        init_max = init_max.max(&during);
    }
    let mut total = reqs.max(&init_max);
    if let Some(pod_level) = spec.resources.as_ref() {
        for (name, v) in
            container_requests(ctx, &format!("{path}.resources"), Some(pod_level))?.iter()
        {
            total.set(name, v);
        }
    }
    let overhead = match (&spec.overhead, spec.runtime_class_name.as_deref()) {
        (Some(o), _) => validate::resources(ctx, &format!("{path}.overhead"), Some(o))?,
        (None, Some(rc)) => runtime
            .get(rc)
            .map(|a| a.overhead.clone())
            .unwrap_or_default(),
        (None, None) => Resources::new(),
    };
    total.add_assign(&overhead);
    total.set(PODS, 1000);
    Ok(total)
}

fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

pub(crate) fn label_selector(
    ctx: &Ctx,
    path: &str,
    s: &LabelSelectorSpec,
) -> Result<LabelSelector, InputError> {
    let match_expressions = s
        .match_expressions
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, e)| {
            let at = format!("{path}.matchExpressions[{i}]");
            let key = e
                .key
                .clone()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ctx.invalid(format!("{at}.key"), "required"))?;
            let op_text = e.operator.as_deref().unwrap_or("");
            let op = SelectorOp::parse(op_text).ok_or_else(|| {
                ctx.invalid(
                    format!("{at}.operator"),
                    format!(
                        "unknown operator {op_text:?} (expected In, NotIn, Exists, DoesNotExist)"
                    ),
                )
            })?;
            let values = e.values.clone().unwrap_or_default();
            match op {
                SelectorOp::In | SelectorOp::NotIn if values.is_empty() => {
                    return Err(ctx.invalid(
                        format!("{at}.values"),
                        format!("operator {op_text} needs at least one value"),
                    ))
                }
                SelectorOp::Exists | SelectorOp::DoesNotExist if !values.is_empty() => {
                    return Err(ctx.invalid(
                        format!("{at}.values"),
                        format!("operator {op_text} takes no values"),
                    ))
                }
                _ => {}
            }
            Ok(SelectorExpr { key, op, values })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    Ok(LabelSelector {
        match_labels: s.match_labels.clone().unwrap_or_default(),
        match_expressions,
    })
}

/// Converts one node selector term; `None` when the term cannot be honoured (matchFields, or
/// empty, which matches no node), with the reason.
fn node_term(
    ctx: &Ctx,
    path: &str,
    t: &NodeSelectorTermSpec,
) -> Result<Result<NodeSelectorTerm, String>, InputError> {
    if t.match_fields.as_ref().is_some_and(|f| !f.is_empty()) {
        return Ok(Err(format!("{path}.matchFields is not supported by Karpenter (use matchExpressions on node labels)")));
    }
    let exprs = t.match_expressions.as_deref().unwrap_or_default();
    if exprs.is_empty() {
        return Ok(Err(format!("{path} is empty and matches no node")));
    }
    Ok(Ok(validate::requirements(
        ctx,
        &format!("{path}.matchExpressions"),
        exprs,
        CLASSIC_OPERATORS,
        false,
        false,
    )?))
}

fn weight(ctx: &Ctx, path: &str, w: Option<i64>) -> Result<i32, InputError> {
    match w {
        Some(w) if (1..=100).contains(&w) => Ok(w as i32),
        Some(w) => Err(ctx.invalid(path, format!("must be between 1 and 100, got {w}"))),
        None => Err(ctx.invalid(path, "required (1-100)")),
    }
}

fn affinity_term(
    ctx: &Ctx,
    path: &str,
    t: &PodAffinityTermSpec,
    pod_labels: &BTreeMap<String, String>,
) -> Result<PodAffinityTerm, InputError> {
    let topology_key = t
        .topology_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ctx.invalid(format!("{path}.topologyKey"), "required"))?;
    let matching = t.match_label_keys.as_deref().unwrap_or_default();
    let mismatching = t.mismatch_label_keys.as_deref().unwrap_or_default();
    let has_selector = t.label_selector.is_some();
    label_keys(
        ctx,
        &format!("{path}.matchLabelKeys"),
        matching,
        has_selector,
    )?;
    label_keys(
        ctx,
        &format!("{path}.mismatchLabelKeys"),
        mismatching,
        has_selector,
    )?;
    if let Some((i, key)) = matching
        .iter()
        .enumerate()
        .find(|(_, k)| mismatching.contains(k))
    {
        return Err(ctx.invalid(
            format!("{path}.matchLabelKeys[{i}]"),
            format!("{key:?} exists in both matchLabelKeys and mismatchLabelKeys"),
        ));
    }
    let mut selector = t
        .label_selector
        .as_ref()
        .map(|s| label_selector(ctx, &format!("{path}.labelSelector"), s))
        .transpose()?;
    // The API server ANDs the pod's own values of these keys into the selector when it creates
    // the pod (`k8s.io/kubernetes pkg/registry/core/pod/strategy.go`
    // `applyMatchLabelKeysAndMismatchLabelKeys`, `MatchLabelKeysInPodAffinity`, on since 1.31),
    // and Karpenter reads the merged selector; a key the pod has no label for adds nothing. A
    // pod read back from a cluster already carries them: not added twice.
    if let Some(selector) = selector.as_mut() {
        for (keys, op) in [(matching, SelectorOp::In), (mismatching, SelectorOp::NotIn)] {
            for key in keys {
                let Some(value) = pod_labels.get(key) else {
                    continue;
                };
                let expr = SelectorExpr {
                    key: key.clone(),
                    op,
                    values: vec![value.clone()],
                };
                if !selector.match_expressions.contains(&expr) {
                    selector.match_expressions.push(expr);
                }
            }
        }
    }
    Ok(PodAffinityTerm {
        label_selector: selector,
        namespaces: t.namespaces.clone().unwrap_or_default(),
        namespace_selector: t
            .namespace_selector
            .as_ref()
            .map(|s| label_selector(ctx, &format!("{path}.namespaceSelector"), s))
            .transpose()?,
        topology_key,
    })
}

/// `matchLabelKeys` / `mismatchLabelKeys` of a pod affinity term or a topology spread, as the
/// API server checks them (`k8s.io/kubernetes pkg/apis/core/validation/validation.go`
/// `validateLabelKeys`): only beside a `labelSelector`, each a valid label key.
fn label_keys(
    ctx: &Ctx,
    path: &str,
    keys: &[String],
    has_selector: bool,
) -> Result<(), InputError> {
    if keys.is_empty() {
        return Ok(());
    }
    if !has_selector {
        return Err(ctx.invalid(path, "must not be specified when labelSelector is not set"));
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(problem) = validate::label_key_problem(key) {
            return Err(ctx.invalid(format!("{path}[{i}]"), problem));
        }
    }
    Ok(())
}

type AffinityTerms = (Vec<PodAffinityTerm>, Vec<Weighted<PodAffinityTerm>>);

fn pod_affinity(
    ctx: &Ctx,
    path: &str,
    a: Option<&PodAffinity>,
    pod_labels: &BTreeMap<String, String>,
) -> Result<AffinityTerms, InputError> {
    let Some(a) = a else {
        return Ok((vec![], vec![]));
    };
    let required = a
        .required_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            affinity_term(
                ctx,
                &format!("{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"),
                t,
                pod_labels,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let preferred = a
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, w)| {
            let at = format!("{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            let term = w
                .pod_affinity_term
                .as_ref()
                .ok_or_else(|| ctx.invalid(format!("{at}.podAffinityTerm"), "required"))?;
            Ok(Weighted {
                weight: weight(ctx, &format!("{at}.weight"), w.weight)?,
                term: affinity_term(ctx, &format!("{at}.podAffinityTerm"), term, pod_labels)?,
            })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    Ok((required, preferred))
}

/// A list of tolerations at `path`.
fn tolerations(
    ctx: &Ctx,
    path: &str,
    list: Option<&[TolerationSpec]>,
) -> Result<Vec<Toleration>, InputError> {
    list.into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| toleration(ctx, &format!("{path}[{i}]"), t))
        .collect()
}

fn toleration(ctx: &Ctx, path: &str, t: &TolerationSpec) -> Result<Toleration, InputError> {
    let key = t.key.clone().unwrap_or_default();
    let effect = match t.effect.as_deref() {
        None | Some("") => None,
        Some(e) => Some(validate::effect(ctx, &format!("{path}.effect"), Some(e))?),
    };
    match t.operator.as_deref() {
        None | Some("Equal") => {
            if key.is_empty() {
                return Err(ctx.invalid(
                    format!("{path}.operator"),
                    "must be Exists when key is empty",
                ));
            }
            Ok(Toleration::equal(
                &key,
                t.value.as_deref().unwrap_or(""),
                effect,
            ))
        }
        Some("Exists") => {
            if t.value.as_deref().is_some_and(|v| !v.is_empty()) {
                return Err(ctx.invalid(
                    format!("{path}.value"),
                    "must be empty when operator is Exists",
                ));
            }
            Ok(Toleration::exists(&key, effect))
        }
        Some(op) => Err(ctx.invalid(
            format!("{path}.operator"),
            format!("unknown operator {op:?} (expected Equal or Exists)"),
        )),
    }
}

fn spread(
    ctx: &Ctx,
    path: &str,
    c: &TopologySpreadConstraintSpec,
) -> Result<TopologySpread, InputError> {
    let max_skew = match c.max_skew {
        Some(n) if n >= 1 && n <= i64::from(i32::MAX) => n as i32,
        Some(n) => {
            return Err(ctx.invalid(
                format!("{path}.maxSkew"),
                format!("must be at least 1, got {n}"),
            ))
        }
        None => return Err(ctx.invalid(format!("{path}.maxSkew"), "required")),
    };
    let topology_key = c
        .topology_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ctx.invalid(format!("{path}.topologyKey"), "required"))?;
    let when_unsatisfiable = match c.when_unsatisfiable.as_deref() {
        Some("DoNotSchedule") => WhenUnsatisfiable::DoNotSchedule,
        Some("ScheduleAnyway") => WhenUnsatisfiable::ScheduleAnyway,
        other => {
            return Err(ctx.invalid(
                format!("{path}.whenUnsatisfiable"),
                format!(
                    "{} (expected DoNotSchedule or ScheduleAnyway)",
                    other.map_or("required".to_string(), |o| format!("unknown value {o:?}"))
                ),
            ))
        }
    };
    let min_domains = match c.min_domains {
        None => None,
        Some(n) if n >= 1 && n <= i64::from(i32::MAX) => Some(n as i32),
        Some(n) => {
            return Err(ctx.invalid(
                format!("{path}.minDomains"),
                format!("must be at least 1, got {n}"),
            ))
        }
    };
    let policy = |field: &str, v: Option<&str>, default_honor: bool| match v {
        None => Ok(default_honor),
        Some("Honor") => Ok(true),
        Some("Ignore") => Ok(false),
        Some(o) => Err(ctx.invalid(
            format!("{path}.{field}"),
            format!("unknown policy {o:?} (expected Honor or Ignore)"),
        )),
    };
    let match_label_keys = c.match_label_keys.clone().unwrap_or_default();
    label_keys(
        ctx,
        &format!("{path}.matchLabelKeys"),
        &match_label_keys,
        c.label_selector.is_some(),
    )?;
    Ok(TopologySpread {
        max_skew,
        topology_key,
        when_unsatisfiable,
        label_selector: c
            .label_selector
            .as_ref()
            .map(|s| label_selector(ctx, &format!("{path}.labelSelector"), s))
            .transpose()?,
        min_domains,
        match_label_keys,
        honor_taints: policy("nodeTaintsPolicy", c.node_taints_policy.as_deref(), false)?,
        ignore_node_affinity: !policy(
            "nodeAffinityPolicy",
            c.node_affinity_policy.as_deref(),
            true,
        )?,
    })
}

/// The API server's container rules (`pkg/apis/core/validation validateContainers`): at least
/// one container, and no two containers (init containers included) with the same name.
fn check_containers(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<(), InputError> {
    if spec.containers.as_ref().is_none_or(Vec::is_empty) {
        return Err(ctx.invalid(
            format!("{path}.containers"),
            "required: a pod needs at least one container",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    let lists = [
        ("initContainers", &spec.init_containers),
        ("containers", &spec.containers),
    ];
    for (field, list) in lists {
        for (i, c) in list.iter().flatten().enumerate() {
            if let Some(name) = c.name.as_deref() {
                if !seen.insert(name) {
                    return Err(ctx.invalid(
                        format!("{path}.{field}[{i}].name"),
                        format!("duplicate container name {name:?}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn host_ports(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<Vec<HostPort>, InputError> {
    let host_network = spec.host_network == Some(true);
    let app = spec
        .containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (format!("{path}.containers[{i}]"), c));
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| is_sidecar(c))
        .map(|(i, c)| (format!("{path}.initContainers[{i}]"), c));
    let mut out = Vec::new();
    for (cpath, c) in app.chain(sidecars) {
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
            out.push(HostPort {
                ip,
                port: port as i32,
                protocol,
            });
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The pod's volumes backed by claims (`persistentVolumeClaim`, `ephemeral`).
fn volumes(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<Vec<PodVolume>, InputError> {
    let mut out = Vec::new();
    for (i, v) in spec.volumes.iter().flatten().enumerate() {
        let at = format!("{path}.volumes[{i}]");
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

/// RuntimeClass admission's `setScheduling` (`k8s.io/kubernetes
/// plugin/pkg/admission/runtimeclass/admission.go`): the class's `scheduling.nodeSelector` is
/// merged into the pod's — a key the pod sets to another value is a conflict, and the API server
/// refuses the pod — and its tolerations are added to the pod's (`MergeTolerations`: one
/// already there is not added twice). Karpenter schedules the admitted pod, so a pod of a class
/// pinned to `g5` gets a `g5` node. A pod already admitted (read from a cluster) is unchanged.
fn admit_runtime_class_scheduling(
    ctx: &Ctx,
    path: &str,
    class: &str,
    admission: &RuntimeClassAdmission,
    pod: &mut Pod,
) -> Result<(), InputError> {
    for (key, value) in &admission.node_selector {
        match pod.node_selector.get(key) {
            Some(own) if own != value => {
                return Err(ctx.invalid(
                    validate::key_path(&format!("{path}.nodeSelector"), key),
                    format!(
                        "{own:?} conflicts with RuntimeClass {class:?}'s scheduling.nodeSelector \
                         ({key}={value}): the API server's RuntimeClass admission refuses the pod"
                    ),
                ));
            }
            Some(_) => {}
            None => {
                pod.node_selector.insert(key.clone(), value.clone());
            }
        }
    }
    for t in &admission.tolerations {
        if !pod.tolerations.contains(t) {
            pod.tolerations.push(t.clone());
        }
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
            for (i, t) in req.node_selector_terms.iter().flatten().enumerate() {
                match node_term(ctx, &format!("{rpath}[{i}]"), t)? {
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
    pod.topology_spread = spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| spread(ctx, &format!("{path}.topologySpreadConstraints[{i}]"), c))
        .collect::<Result<_, _>>()?;
    pod.host_ports = host_ports(ctx, path, spec)?;
    pod.volumes = volumes(ctx, path, spec)?;
    pod.priority_class_name = spec.priority_class_name.clone();
    pod.termination_grace_period_seconds = spec.termination_grace_period_seconds;
    // Kubernetes keeps priorities within int32 (`[-2147483648, 1000000000]`); clamp anyway.
    pod.priority = spec
        .priority
        .map(|p| p.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32);
    pod.unsupported = unsupported;
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

/// The managing owner of a pod: the controller reference, else the first owner.
fn owner_of(meta: &ObjectMeta) -> Option<Owner> {
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    let o = owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| owners.first())?;
    Some(Owner {
        kind: o.kind.clone().unwrap_or_default(),
        name: o.name.clone().unwrap_or_default(),
    })
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
    let namespace = meta
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".into());
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
    let namespace = meta
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".into());
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
    check_selector(&ctx, spec.selector.as_ref(), tmeta.labels.as_ref())?;
    proto.namespace = namespace.clone();
    proto.labels = labels;
    proto.do_not_disrupt = do_not_disrupt(tmeta.annotations.as_ref());
    proto.do_not_evict = do_not_evict(tmeta.annotations.as_ref());

    let count = |field: &str, v: Option<i64>| match v {
        None => Ok(1),
        Some(n) if n < 0 => Err(ctx.invalid(field, format!("must not be negative, got {n}"))),
        Some(n) => Ok(n),
    };
    let (owner_kind, replicas) = match kind {
        "DaemonSet" => {
            proto.name = name.clone();
            proto.uid = synthetic_uid(&format!("DaemonSet/{namespace}/{name}"));
            proto.owner = Some(Owner {
                kind: "DaemonSet".into(),
                name,
            });
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
    proto.owner = Some(Owner {
        kind: owner_kind.into(),
        name: name.clone(),
    });
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
mod tests {
    use super::*;
    use crate::model::quantity::{GIB, MIB};

    fn requests(yaml: &str) -> Result<Resources, InputError> {
        let spec: PodSpec = serde_saphyr::from_str(yaml).unwrap();
        let ctx = Ctx::new(&Location::file("p.yaml"), "Pod/p".into());
        let mut runtime = RuntimeClassAdmissions::new();
        runtime.insert(
            "kata".into(),
            RuntimeClassAdmission {
                overhead: Resources::from_pairs(&[("cpu", "250m"), ("memory", "160Mi")]),
                ..RuntimeClassAdmission::default()
            },
        );
        pod_requests(&ctx, "spec", &spec, &runtime)
    }

    #[test]
    fn app_containers_sum_and_pods_is_one() {
        let r = requests(
            "containers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n- resources: {requests: {cpu: 500m}}\n",
        )
        .unwrap();
        assert_eq!((r.cpu, r.memory, r.pods), (1500, GIB, 1000));
        assert_eq!(
            requests("{}").unwrap(),
            Resources::from_pairs(&[("pods", "1")])
        );
    }

    #[test]
    fn an_init_container_bigger_than_the_app_wins() {
        let r = requests(
            "initContainers:\n- resources: {requests: {cpu: 4, memory: 100Mi}}\ncontainers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n",
        )
        .unwrap();
        assert_eq!(r.cpu, 4000, "largest init container");
        assert_eq!(r.memory, GIB, "app containers where they are larger");
    }

    /// A bound pod's requests as Karpenter counts them (`resources.Ceiling`).
    fn held_requests(yaml: &str) -> Resources {
        let pod: crate::api::core::Pod = serde_saphyr::from_str(yaml).unwrap();
        convert_pod(
            &pod,
            &Location::file("p.yaml"),
            &RuntimeClassAdmissions::new(),
        )
        .unwrap()
        .requests
        .clone()
    }

    /// `core v1.14.1: pkg/utils/resources/suite_test.go` › "UseStatusResources" (3 It), and
    /// `component-helpers` `determineContainerReqs`'s infeasible branch. **Differed, fixed**
    /// (s16): the status was not read, so a pod resized down in place (spec 2 CPU, the kubelet
    /// still holding 6) counted as 2 CPU on its node.
    #[test]
    fn a_running_pod_counts_what_the_kubelet_holds_during_a_resize() {
        let pod = |status: &str| {
            format!(
                "metadata: {{name: p}}\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    resources: {{requests: {{cpu: '{{cpu}}', memory: '{{mem}}'}}}}\n{status}"
            )
        };
        let with = |spec: (&str, &str), status: &str| {
            held_requests(
                &pod(status)
                    .replace("{cpu}", spec.0)
                    .replace("{mem}", spec.1),
            )
        };
        let status = |running: (&str, &str), allocated: (&str, &str)| {
            format!(
                "status:\n  containerStatuses:\n  - name: app\n    resources: {{requests: {{cpu: '{}', memory: '{}'}}}}\n    allocatedResources: {{cpu: '{}', memory: '{}'}}\n",
                running.0, running.1, allocated.0, allocated.1
            )
        };
        let r = with(("2", "512Mi"), &status(("2", "512Mi"), ("6", "2Gi")));
        assert_eq!(
            (r.cpu, r.memory),
            (6000, 2 * GIB),
            "should use allocatedResources when higher than spec requests (resize-down in progress)"
        );
        let r = with(("8", "4Gi"), &status(("8", "4Gi"), ("2", "1Gi")));
        assert_eq!(
            (r.cpu, r.memory),
            (8000, 4 * GIB),
            "should use spec requests when higher than allocatedResources (resize-up in progress)"
        );
        let r = with(("4", "2Gi"), "");
        assert_eq!(
            (r.cpu, r.memory),
            (4000, 2 * GIB),
            "should use spec requests when allocatedResources is not set (no resize)"
        );
        // A status without `resources` changes nothing (`cs.Resources != nil`).
        let r = with(
            ("4", "2Gi"),
            "status:\n  containerStatuses:\n  - name: app\n    allocatedResources: {cpu: '6'}\n",
        );
        assert_eq!(r.cpu, 4000);
        // An infeasible resize: the spec is not what will run, the status alone counts.
        let infeasible = format!(
            "{}  conditions:\n  - {{type: PodResizePending, status: 'True', reason: Infeasible}}\n",
            status(("2", "512Mi"), ("2", "512Mi"))
        );
        let r = with(("8", "4Gi"), &infeasible);
        assert_eq!((r.cpu, r.memory), (2000, 512 * MIB));
    }

    /// `core v1.14.1: pkg/utils/resources/suite_test.go` › "Resource Calculations" (sidecars,
    /// init containers, overhead; KEP-753), a row per `It` with its containers, init containers
    /// (`s` = a sidecar), overhead and the expected CPU — agree.
    #[test]
    fn resource_calculations_as_upstream() {
        // (It, app containers' CPU, init containers (sidecar?, CPU), overhead, expected CPU)
        type Case<'a> = (&'a str, &'a [i64], &'a [(bool, i64)], i64, i64);
        let cases: [Case; 8] = [
            ("the sum of containers and sidecarContainers", &[2], &[(true, 1)], 0, 3),
            ("containers, sidecarContainers, initContainers, and overhead", &[2], &[(false, 4), (true, 3)], 5, 10),
            ("an initContainer after a sidecarContainer that exceeds container resource requests", &[2], &[(true, 4), (false, 10)], 0, 14),
            ("an initContainer after a sidecarContainer that doesn't exceed container resource requests", &[2], &[(true, 4), (false, 1)], 0, 6),
            ("an initContainer after multiple sidecarContainers that exceeds container resource requests", &[3], &[(true, 2), (true, 1), (true, 3), (true, 5), (false, 20)], 0, 31),
            ("an initContainer after multiple sidecarContainers that doesn't exceed container resource requests", &[3], &[(true, 2), (true, 1), (true, 3), (true, 5), (false, 1)], 0, 14),
            ("multiple sidecarContainers when the first initContainer exceeds the sum of all", &[3], &[(false, 25), (true, 1), (false, 3), (false, 1), (true, 5), (false, 1), (false, 1), (true, 1)], 0, 25),
            ("multiple interspersed sidecarContainers and initContainers", &[3], &[(false, 2), (true, 1), (false, 3), (false, 1), (true, 5), (false, 1), (false, 1), (true, 1), (false, 2)], 0, 10),
        ];
        for (it, containers, inits, overhead, want) in cases {
            let mut yaml = String::new();
            if overhead > 0 {
                yaml.push_str(&format!("overhead: {{cpu: '{overhead}'}}\n"));
            }
            yaml.push_str("initContainers:\n");
            for (sidecar, cpu) in inits {
                let policy = if *sidecar {
                    "restartPolicy: Always\n  "
                } else {
                    ""
                };
                yaml.push_str(&format!(
                    "- {policy}resources: {{requests: {{cpu: '{cpu}'}}}}\n"
                ));
            }
            yaml.push_str("containers:\n");
            for cpu in containers {
                yaml.push_str(&format!("- resources: {{requests: {{cpu: '{cpu}'}}}}\n"));
            }
            assert_eq!(requests(&yaml).unwrap().cpu, want * 1000, "{it}");
        }
    }

    #[test]
    fn sidecars_add_to_the_app_and_to_later_init_containers() {
        // sidecar 1 CPU, then a 2-CPU init container: during init 1+2 = 3; app 1 + sidecar 1 = 2.
        let r = requests(
            "initContainers:\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\n- resources: {requests: {cpu: 2}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
        )
        .unwrap();
        assert_eq!(r.cpu, 3000);
        // An init container before the sidecar does not see it: max(2, 1+1) = 2.
        let r = requests(
            "initContainers:\n- resources: {requests: {cpu: 2}}\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
        )
        .unwrap();
        assert_eq!(r.cpu, 2000);
        // Sidecars only: app 1 + sidecars 1.5 = 2.5.
        let r = requests(
            "initContainers:\n- restartPolicy: Always\n  resources: {requests: {cpu: 500m}}\n- restartPolicy: Always\n  resources: {requests: {cpu: 1}}\ncontainers:\n- resources: {requests: {cpu: 1}}\n",
        )
        .unwrap();
        assert_eq!(r.cpu, 2500);
    }

    #[test]
    fn overhead_limits_and_pod_level_resources() {
        let r = requests("overhead: {cpu: 100m}\ncontainers:\n- resources: {requests: {cpu: 1}}\n")
            .unwrap();
        assert_eq!(r.cpu, 1100);
        let r =
            requests("runtimeClassName: kata\ncontainers:\n- resources: {requests: {cpu: 1}}\n")
                .unwrap();
        assert_eq!(
            (r.cpu, r.memory),
            (1250, 160 * MIB),
            "RuntimeClass overhead when spec.overhead is absent"
        );
        let r = requests(
            "containers:\n- resources: {limits: {cpu: 2, nvidia.com/gpu: 1}, requests: {cpu: 1}}\n",
        )
        .unwrap();
        assert_eq!(
            (r.cpu, r.get("nvidia.com/gpu")),
            (1000, 1000),
            "limits only fill missing requests"
        );
        let r = requests("resources: {requests: {cpu: 3}}\ncontainers:\n- resources: {requests: {cpu: 1, memory: 1Gi}}\n").unwrap();
        assert_eq!(
            (r.cpu, r.memory),
            (3000, GIB),
            "pod-level requests override the aggregate per resource"
        );
        let e = requests("containers:\n- resources: {requests: {cpu: lots}}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("spec.containers[0].resources.requests.cpu: invalid quantity \"lots\""),
            "{e}"
        );
        let e = requests("containers:\n- resources: {limits: {nvidia.com/gpu: x}}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("spec.containers[0].resources.limits[nvidia.com/gpu]"),
            "{e}"
        );
        let e = requests("containers:\n- resources: {requests: {cpu: -1}}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must not be negative"), "{e}");
    }

    /// `core v1.14.1: pkg/controllers/state/suite_test.go` "DaemonSet Controller": the newest
    /// pod a DaemonSet controls stands for it ("should update daemonsetCache with the newest
    /// created pod"), the template where it has none ("should not update daemonsetCache when
    /// daemonset pod is not present"); a pod of another DaemonSet, or of the same name in
    /// another namespace, is not its ("should only return daemonset pods from the daemonset
    /// cache"). **Differs, fixed** — scenario: a DaemonSet whose template requests nothing, its
    /// pods admitted with a LimitRange's default `cpu: 100m` → upstream counts 100m of overhead
    /// per node; we counted the template's nothing.
    #[test]
    fn a_daemonset_is_its_newest_pod() {
        use crate::model::pod::Owner;
        use crate::model::taints::{Effect, Toleration};
        let owned = |ns: &str, ds: &str, cpu: &str, created: &str| {
            let mut p = Pod::default();
            p.namespace = ns.into();
            p.owner = Some(Owner {
                kind: "DaemonSet".into(),
                name: ds.into(),
            });
            p.creation_timestamp = Some(created.into());
            p.requests = Resources::from_pairs(&[("cpu", cpu), ("pods", "1")]);
            p
        };
        let mut templates = vec![
            owned("kube-system", "logs", "0", "2024-01-01T00:00:00Z"),
            owned("kube-system", "absent", "250m", "2024-01-01T00:00:00Z"),
        ];
        let mut newest = owned("kube-system", "logs", "100m", "2024-06-02T00:00:00Z");
        newest.tolerations = vec![Toleration {
            key: "node.kubernetes.io/unschedulable".into(),
            exists: true,
            value: String::new(),
            effect: Some(Effect::NoSchedule),
        }];
        let pods = vec![
            owned("kube-system", "logs", "50m", "2024-06-01T00:00:00Z"),
            newest.clone(),
            owned("kube-system", "logs", "70m", "2024-05-01T00:00:00Z"),
            owned("other", "logs", "900m", "2024-07-01T00:00:00Z"),
            owned("kube-system", "absentee", "900m", "2024-07-01T00:00:00Z"),
        ];
        daemonsets_as_their_newest_pods(&mut templates, &pods);
        assert_eq!(templates[0].requests.get("cpu"), 100);
        assert_eq!(templates[0].tolerations, newest.tolerations);
        assert_eq!(templates[1].requests.get("cpu"), 250);
    }

    /// `state/cluster.go` `UpdateDaemonSet` takes the newest pod the DaemonSet controls, bound
    /// or not. **Differs, fixed** — scenario (provisioning suite › Daemonsets "should remove
    /// daemonset node hostname affinity when considering daemonset schedulability"): a
    /// DaemonSet requesting 4 CPU whose only pod, not bound yet (pinned to its node by name),
    /// requests 2 CPU → upstream counts 2 CPU of overhead; we read the template's 4 because
    /// unbound DaemonSet pods were dropped before the stand-in was chosen.
    #[test]
    fn an_unbound_daemonset_pod_stands_for_its_daemonset() {
        let text = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: default}\n\
            spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    \
            spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"4\"}}}]}\n\
            ---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ds-x\n  namespace: default\n  \
            ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\n\
            spec: {containers: [{name: c, image: i, resources: {requests: {cpu: \"2\"}}}]}\n";
        let m = crate::api::load_str("in.yaml", text).unwrap();
        assert!(m.pods.is_empty(), "a DaemonSet pod is never planned");
        assert_eq!(m.daemonsets[0].requests.get("cpu"), 2000);
    }

    #[test]
    fn synthetic_uids_are_stable_and_distinct() {
        assert_eq!(synthetic_uid("a"), synthetic_uid("a"));
        assert_ne!(
            synthetic_uid("Deployment/default/x/1"),
            synthetic_uid("Deployment/default/x/2")
        );
        assert_eq!(synthetic_uid("a").len(), 36);
    }
}
