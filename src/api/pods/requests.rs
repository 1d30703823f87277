//! A pod's requests as Kubernetes' `PodRequests` counts them (docs/karpenter.md §6.3): app
//! containers plus sidecars against the largest init container plus the sidecars started
//! before it, pod-level requests, runtime-class overhead, `pods: 1`.

use std::collections::BTreeMap;

use super::admission::RuntimeClassAdmissions;
use crate::api::core::{Container, ContainerStatus, PodSpec};
use crate::api::error::{Ctx, InputError};
use crate::api::meta::{ResourceList, ResourceRequirementsSpec};
use crate::api::validate;
use crate::model::resources::{Resources, PODS};

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
    resource_names(ctx, path, r)?;
    let mut out = Resources::new();
    for (name, q) in &merged {
        let field = validate::key_path(&format!("{path}.{}", source[name]), name);
        let milli = validate::quantity(ctx, &field, &q.as_text())?;
        if milli < 0 {
            return Err(ctx.invalid(field, format!("must not be negative, got {q}")));
        }
        out.set(name, milli);
    }
    // The API server: an extended resource (a domain-prefixed name outside `kubernetes.io/`,
    // e.g. `nvidia.com/gpu`) is counted in whole units; it and hugepages cannot be overcommitted,
    // so a request needs a limit, and the same one (`k8s.io/kubernetes pkg/apis/core/validation
    // ValidateResourceRequirements`, `ValidateResourceQuantityValue`; `pkg/apis/core/helper`
    // `IsExtendedResourceName`, `IsOvercommitAllowed`).
    let limits = r.and_then(|r| r.limits.as_ref());
    for (name, origin) in &source {
        let extended = name.contains('/') && !name.contains("kubernetes.io/");
        if extended && out.get(name) % 1000 != 0 {
            let field = validate::key_path(&format!("{path}.{origin}"), name);
            return Err(ctx.invalid(field, format!("must be an integer, got {}", merged[name])));
        }
        if *origin != "requests" || !(extended || name.starts_with("hugepages-")) {
            continue;
        }
        let Some(limit) = limits.and_then(|l| l.get(name)) else {
            return Err(ctx.invalid(
                format!("{path}.limits"),
                format!("required: a limit must be set for {name}, which cannot be overcommitted"),
            ));
        };
        let limit_field = validate::key_path(&format!("{path}.limits"), name);
        if validate::quantity(ctx, &limit_field, &limit.as_text())? != out.get(name) {
            return Err(ctx.invalid(
                validate::key_path(&format!("{path}.requests"), name),
                format!("must be equal to the {name} limit ({limit}): it cannot be overcommitted"),
            ));
        }
    }
    // A request above its limit is invalid (the same function).
    for (name, limit) in limits.into_iter().flatten() {
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

/// The names a container's requests and limits may use (`k8s.io/kubernetes
/// pkg/apis/core/validation` `validateContainerResourceName`, `ValidateResourceRequirements`):
/// without a domain only `cpu`, `memory`, `ephemeral-storage` and `hugepages-*`; with one, a
/// native (`kubernetes.io/`) or an extended resource name; hugepages only beside cpu or memory.
fn resource_names(
    ctx: &Ctx,
    path: &str,
    r: Option<&ResourceRequirementsSpec>,
) -> Result<(), InputError> {
    let Some(r) = r else { return Ok(()) };
    let lists = [("requests", &r.requests), ("limits", &r.limits)];
    let names = || {
        lists
            .iter()
            .flat_map(|(origin, list)| list.iter().flatten().map(move |(n, _)| (*origin, n)))
    };
    for (origin, name) in names() {
        let problem = match name.split_once('/') {
            None if !is_standard_container_resource(name) => {
                "must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>) or a domain-prefixed extended resource"
            }
            Some(_) if !name.contains("kubernetes.io/") && name.starts_with("requests.") => {
                "doesn't follow extended resource name standard (no `requests.` prefix)"
            }
            _ => continue,
        };
        return Err(ctx.invalid(
            validate::key_path(&format!("{path}.{origin}"), name),
            problem,
        ));
    }
    let hugepages = names().any(|(_, n)| n.starts_with("hugepages-"));
    let cpu_or_memory = names().any(|(_, n)| n == "cpu" || n == "memory");
    if hugepages && !cpu_or_memory {
        return Err(ctx.invalid(
            path.to_string(),
            "forbidden: HugePages require cpu or memory",
        ));
    }
    Ok(())
}

/// `IsStandardContainerResourceName`: the resources a container may name without a domain.
fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
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
    pub(crate) fn of(status: &'a crate::api::core::PodStatus) -> Option<HeldResources<'a>> {
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
        apply_pod_level(
            ctx,
            &format!("{path}.resources"),
            pod_level,
            spec,
            &mut total,
        )?;
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

pub(super) fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// The resources a pod-level `spec.resources` may name (`component-helpers resource/helpers.go`
/// `IsSupportedPodLevelResource`): the others are not read by `PodRequests`.
fn is_pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

/// Pod-level requests as the API server stores them and `PodRequests` reads them: a
/// pod-level request replaces the containers' aggregate for its resource. With pod-level
/// limits, a resource without a pod-level request gets one by defaulting: the containers'
/// aggregate where a container requests (or limits) it and it can be overcommitted (cpu,
/// memory), else the limit (`k8s.io/kubernetes pkg/apis/core/v1/defaults.go`
/// `defaultPodRequests`, run before any controller reads the pod). So pod-level limits of
/// 4 CPUs over containers requesting 1 CPU request 1 CPU, as Karpenter sees the pod.
fn apply_pod_level(
    ctx: &Ctx,
    path: &str,
    pod_level: &ResourceRequirementsSpec,
    spec: &PodSpec,
    total: &mut Resources,
) -> Result<(), InputError> {
    let requests = validate::resources(
        ctx,
        &format!("{path}.requests"),
        pod_level.requests.as_ref(),
    )?;
    let limits = validate::resources(ctx, &format!("{path}.limits"), pod_level.limits.as_ref())?;
    let named =
        |list: Option<&ResourceList>, name: &str| list.is_some_and(|l| l.contains_key(name));
    // Names a container (init containers too) requests; limits stand in for requests.
    let containers_name = |name: &str| {
        spec.containers
            .iter()
            .flatten()
            .chain(spec.init_containers.iter().flatten())
            .filter_map(|c| c.resources.as_ref())
            .any(|r| named(r.requests.as_ref(), name) || named(r.limits.as_ref(), name))
    };
    let mut names: Vec<&String> = pod_level
        .requests
        .iter()
        .flatten()
        .map(|(n, _)| n)
        .collect();
    names.extend(pod_level.limits.iter().flatten().map(|(n, _)| n));
    for name in names.into_iter().filter(|n| is_pod_level_resource(n)) {
        if named(pod_level.requests.as_ref(), name) {
            total.set(name, requests.get(name));
        } else if !((name == "cpu" || name == "memory") && containers_name(name)) {
            total.set(name, limits.get(name));
        }
    }
    Ok(())
}
