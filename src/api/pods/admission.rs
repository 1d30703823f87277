//! What admission adds to a pod before the scheduler sees it: LimitRange default requests, the
//! RuntimeClass's overhead and scheduling, the EKS Windows IPAM webhook's private-IPv4 resource.

use std::collections::BTreeMap;

use super::terms::tolerations;
use crate::api::core::PodSpec;
use crate::api::error::{Ctx, InputError};
use crate::api::meta::ResourceList;
use crate::api::validate;
use crate::model::labels;
use crate::model::overhead::PRIVATE_IPV4_ADDRESS;
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::model::taints::Toleration;

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
pub(crate) fn limit_range_default_requests(lr: &crate::api::core::LimitRange) -> ResourceList {
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
    let one = || crate::api::meta::IntOrString::String("1".into());
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
    rc: &crate::api::core::RuntimeClass,
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

/// RuntimeClass admission's `setScheduling` (`k8s.io/kubernetes
/// plugin/pkg/admission/runtimeclass/admission.go`): the class's `scheduling.nodeSelector` is
/// merged into the pod's — a key the pod sets to another value is a conflict, and the API server
/// refuses the pod — and its tolerations are added to the pod's (`MergeTolerations`: one
/// already there is not added twice). Karpenter schedules the admitted pod, so a pod of a class
/// pinned to `g5` gets a `g5` node. A pod already admitted (read from a cluster) is unchanged.
pub(super) fn admit_runtime_class_scheduling(
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

/// The PriorityClasses of the input, for the Priority admission plugin's share of a pod
/// (`k8s.io/kubernetes plugin/pkg/admission/priority/admission.go` `admitPod`): a pod naming a
/// class gets its `value` as `spec.priority`; a pod naming none gets the `globalDefault` class's
/// (of several, the lowest value, `getDefaultPriorityClass`), else none. Karpenter reads only
/// `spec.priority` (core v1.14.1 `pkg/utils/disruption/disruption.go` `EvictionCost`), never a
/// PriorityClass: a manifest as written has no `spec.priority` until admission fills it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PriorityClasses {
    values: BTreeMap<String, i32>,
    global_default: Option<i32>,
}

impl PriorityClasses {
    /// Reads one PriorityClass; `value` is required (the API server refuses a class without).
    pub(crate) fn insert(
        &mut self,
        ctx: &Ctx,
        pc: &crate::api::core::PriorityClass,
    ) -> Result<(), InputError> {
        let value = pc.value.ok_or_else(|| ctx.invalid("value", "required"))?;
        let value = value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        let name = pc.metadata.name.clone().unwrap_or_default();
        self.values.insert(name, value);
        if pc.global_default == Some(true) {
            self.global_default = Some(self.global_default.map_or(value, |v| v.min(value)));
        }
        Ok(())
    }

    /// Fills `pod.priority` as admission would when the pod was written without one. A class
    /// the input does not hold leaves it unset (the cluster may have it; admission would refuse
    /// a pod naming a class that does not exist).
    pub(crate) fn admit(&self, pod: &mut Pod) {
        if pod.priority.is_some() || (self.values.is_empty() && self.global_default.is_none()) {
            return;
        }
        pod.priority = match pod.priority_class_name.as_deref() {
            Some(name) if !name.is_empty() => self.values.get(name).copied(),
            _ => self.global_default,
        };
    }
}
