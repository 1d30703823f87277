//! Cluster Autoscaler's `CapacityBuffer` (`autoscaling.x-k8s.io/v1beta1`; CRD
//! `tests/fixtures/crds/autoscaling/autoscaling.x-k8s.io_capacitybuffers.yaml`, types `core
//! v1.14.1: pkg/apis/autoscaling/v1beta1/capacitybuffer.go`) and the `PodTemplate` its
//! `podTemplateRef` names: read and checked as the API server would (the CRD's rules), then
//! resolved as Karpenter's buffer controller does (`pkg/utils/apps/resolve.go`) into
//! [`model::buffer`](crate::model::buffer) values. docs/karpenter.md §6.13.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::core::PodTemplateSpec;
use super::error::{object_name, Ctx, InputError, Location};
use super::meta::{ObjectMeta, ResourceList};
use super::pods::{convert_spec, synthetic_uid, RuntimeClassAdmissions};
use super::validate;
use crate::model::buffer::{
    self, BufferRef, BufferStatus, CapacityBuffer as Buffer, Resolution, DEFAULT_SCALABLE_GROUP,
};
use crate::model::pod::Pod;

/// The CRD's default `spec.provisioningStrategy`.
pub const ACTIVE_CAPACITY: &str = "buffer.x-k8s.io/active-capacity";

/// A CapacityBuffer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityBuffer {
    /// `autoscaling.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `CapacityBuffer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<CapacityBufferSpec>,
    /// Status (the controller's, recomputed here from the spec), not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

/// `CapacityBuffer.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityBufferSpec {
    /// Defaults to `buffer.x-k8s.io/active-capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioning_strategy: Option<String>,
    /// A PodTemplate of the buffer's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template_ref: Option<NameRef>,
    /// A workload of the buffer's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalable_ref: Option<ScalableRef>,
    /// Buffer chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// Percent of the scalable's replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage: Option<i64>,
    /// Total requests the chunks may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceList>,
}

/// `podTemplateRef`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NameRef {
    /// The PodTemplate's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `scalableRef`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalableRef {
    /// API group (empty: `apps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A `v1` PodTemplate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
}

impl CapacityBuffer {
    /// Normalises and checks the CRD's rules (`minimum: 0`, `minLength: 1`, the two CEL rules).
    pub fn to_model(&self, at: &Location) -> Result<Buffer, InputError> {
        let namespace = self.metadata.namespace_or_default();
        let name = self.metadata.name.clone().unwrap_or_default();
        let ctx = Ctx::new(
            at,
            object_name("CapacityBuffer", Some(&namespace), Some(&name)),
        );
        let spec = self
            .spec
            .as_ref()
            .ok_or_else(|| ctx.invalid("spec", "Required value"))?;
        let count = |field: &str, v: Option<i64>| match v {
            Some(n) if n < 0 => Err(ctx.invalid(
                format!("spec.{field}"),
                format!("should be greater than or equal to 0, got {n}"),
            )),
            Some(n) if n > i64::from(i32::MAX) => Err(ctx.invalid(
                format!("spec.{field}"),
                format!("{n} does not fit an int32"),
            )),
            Some(n) => Ok(Some(n as i32)),
            None => Ok(None),
        };
        let replicas = count("replicas", spec.replicas)?;
        let percentage = count("percentage", spec.percentage)?;
        let required = |field: &str, v: &Option<String>| match v.as_deref() {
            Some(s) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(ctx.invalid(field.to_string(), "should be at least 1 chars long")),
        };
        let reference = match (&spec.pod_template_ref, &spec.scalable_ref) {
            (Some(_), Some(_)) => {
                return Err(ctx.invalid(
                    "spec",
                    "You must define either PodTemplateRef or ScalableRef, but not both",
                ))
            }
            (Some(r), None) => {
                if replicas.is_none() && spec.limits.is_none() {
                    return Err(ctx.invalid(
                        "spec",
                        "If podTemplateRef is set, replicas or limits must also be set",
                    ));
                }
                BufferRef::PodTemplate(required("spec.podTemplateRef.name", &r.name)?)
            }
            (None, Some(r)) => BufferRef::Scalable {
                api_group: r.api_group.clone().unwrap_or_default(),
                kind: required("spec.scalableRef.kind", &r.kind)?,
                name: required("spec.scalableRef.name", &r.name)?,
            },
            (None, None) => BufferRef::None,
        };
        let limits = match &spec.limits {
            Some(l) => validate::milli_map(&ctx, "spec.limits", l)?
                .into_iter()
                .collect(),
            None => Vec::new(),
        };
        Ok(Buffer {
            uid: self
                .metadata
                .uid
                .clone()
                .unwrap_or_else(|| synthetic_uid(&format!("CapacityBuffer/{namespace}/{name}"))),
            namespace,
            name,
            provisioning_strategy: spec
                .provisioning_strategy
                .clone()
                .unwrap_or_else(|| ACTIVE_CAPACITY.to_string()),
            reference,
            replicas,
            percentage,
            limits,
        })
    }
}

/// A buffer with what the controller made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedBuffer {
    /// The buffer.
    pub buffer: Buffer,
    /// The status Karpenter's buffer controller writes.
    pub status: BufferStatus,
    /// The resolved template, as a pod (when resolved).
    pub template: Option<Pod>,
    /// Where it was read, for messages.
    pub at: Location,
}

impl ResolvedBuffer {
    /// The one-line warning for a buffer Karpenter provisions nothing for because its
    /// reference does not resolve or its spec says no replica; `None` when it provisions.
    pub fn warning(&self) -> Option<String> {
        if self.status.provisions() {
            return None;
        }
        let object = object_name(
            "CapacityBuffer",
            Some(&self.buffer.namespace),
            Some(&self.buffer.name),
        );
        let why = match &self.status.ready {
            buffer::ReadyReason::Resolved => {
                "resolves to 0 replicas (Provisioning=False, BufferEmpty)".to_string()
            }
            buffer::ReadyReason::PodTemplateNotFound => match &self.buffer.reference {
                BufferRef::PodTemplate(n) => format!(
                    "PodTemplate {n} is not in namespace {} (ReadyForProvisioning=False, PodTemplateNotFound)",
                    self.buffer.namespace
                ),
                _ => "its PodTemplate is not found".into(),
            },
            buffer::ReadyReason::ScalableRefNotFound => match &self.buffer.reference {
                BufferRef::Scalable { kind, name, .. } => format!(
                    "{kind} {name} is not in namespace {} (ReadyForProvisioning=False, ScalableRefNotFound)",
                    self.buffer.namespace
                ),
                _ => "its scalableRef is not found".into(),
            },
            buffer::ReadyReason::ResolutionFailed(m) => {
                format!("{m} (ReadyForProvisioning=False, ResolutionFailed)")
            }
        };
        Some(format!(
            "{object} ({}): {why}: Karpenter provisions nothing for it",
            self.at
        ))
    }
}

/// The objects a buffer's reference can name, gathered as the input is read.
#[derive(Debug, Clone, Default)]
pub struct BufferSources {
    /// PodTemplates by (namespace, name).
    pub pod_templates: HashMap<(String, String), PodTemplateSpec>,
    /// Deployments, StatefulSets and ReplicaSets by (kind, namespace, name): `spec.replicas`
    /// and the template, as written (before any admission).
    pub scalables: HashMap<(String, String, String), (Option<i64>, PodTemplateSpec)>,
    /// The buffers, in input order.
    pub buffers: Vec<(Buffer, Location)>,
}

/// An object a buffer names: `PodTemplate` or one of [`SCALABLE_KINDS`], in the buffer's
/// namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// The workload kinds a `scalableRef` resolves (`resolve.go` `ResolveScalableRef`).
pub const SCALABLE_KINDS: [&str; 3] = ["Deployment", "StatefulSet", "ReplicaSet"];

impl BufferSources {
    /// Keeps a buffer (checked as the API server does, [`CapacityBuffer::to_model`]).
    pub fn add_buffer(&mut self, b: &CapacityBuffer, at: &Location) -> Result<(), InputError> {
        self.buffers.push((b.to_model(at)?, at.clone()));
        Ok(())
    }

    /// The objects the buffers name that [`BufferSources::resolve`] may find, each once: what a
    /// live read GETs (a reference of another kind or group fails without a read).
    pub fn references(&self) -> std::collections::BTreeSet<Reference> {
        self.buffers
            .iter()
            .filter_map(|(b, _)| {
                let namespace = b.namespace.clone();
                match &b.reference {
                    BufferRef::PodTemplate(name) => Some(Reference {
                        kind: "PodTemplate".into(),
                        namespace,
                        name: name.clone(),
                    }),
                    BufferRef::Scalable {
                        api_group,
                        kind,
                        name,
                    } if (api_group.is_empty() || api_group == DEFAULT_SCALABLE_GROUP)
                        && SCALABLE_KINDS.contains(&kind.as_str()) =>
                    {
                        Some(Reference {
                            kind: kind.clone(),
                            namespace,
                            name: name.clone(),
                        })
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Leaves out the buffers naming `r` (an object that could not be read).
    pub fn drop_naming(&mut self, r: &Reference) {
        let names = |b: &Buffer| match &b.reference {
            BufferRef::PodTemplate(name) => r.kind == "PodTemplate" && &r.name == name,
            BufferRef::Scalable { kind, name, .. } => &r.kind == kind && &r.name == name,
            BufferRef::None => false,
        };
        self.buffers
            .retain(|(b, _)| !(b.namespace == r.namespace && names(b)));
    }

    /// Keeps a workload a `scalableRef` may name.
    pub fn add_workload(&mut self, w: &super::core::Workload) {
        let kind = w.kind.clone().unwrap_or_default();
        if !SCALABLE_KINDS.contains(&kind.as_str()) {
            return;
        }
        let spec = w.spec.clone().unwrap_or_default();
        self.scalables.insert(
            (
                kind,
                w.metadata.namespace_or_default(),
                w.metadata.name.clone().unwrap_or_default(),
            ),
            (spec.replicas, spec.template.unwrap_or_default()),
        );
    }

    /// Keeps a PodTemplate.
    pub fn add_pod_template(&mut self, t: &PodTemplate) {
        self.pod_templates.insert(
            (
                t.metadata.namespace_or_default(),
                t.metadata.name.clone().unwrap_or_default(),
            ),
            t.template.clone().unwrap_or_default(),
        );
    }

    /// Resolves every buffer as the controller does. A template that does not convert (an
    /// invalid spec) is an input error naming the buffer's reference.
    pub fn resolve(self) -> Result<Vec<ResolvedBuffer>, InputError> {
        let runtime = RuntimeClassAdmissions::new();
        let mut out = Vec::new();
        for (b, at) in &self.buffers {
            let found = |template: &PodTemplateSpec, what: &str, scalable_replicas| {
                let ctx = Ctx::new(at, what.to_string());
                let labels = template
                    .metadata
                    .as_ref()
                    .and_then(|m| m.labels.clone())
                    .unwrap_or_default();
                let spec = template.spec.clone().unwrap_or_default();
                let mut pod = convert_spec(&ctx, "template.spec", &spec, &labels, &runtime)?;
                pod.labels = labels;
                Ok::<_, InputError>(Resolution::Found {
                    template: pod,
                    scalable_replicas,
                })
            };
            let resolution = match &b.reference {
                BufferRef::None => Resolution::NotFound,
                BufferRef::PodTemplate(name) => {
                    match self.pod_templates.get(&(b.namespace.clone(), name.clone())) {
                        Some(t) => found(t, &format!("PodTemplate/{name}"), None)?,
                        None => Resolution::NotFound,
                    }
                }
                BufferRef::Scalable {
                    api_group,
                    kind,
                    name,
                } => {
                    let group = if api_group.is_empty() {
                        DEFAULT_SCALABLE_GROUP
                    } else {
                        api_group
                    };
                    if group != DEFAULT_SCALABLE_GROUP {
                        Resolution::Failed(format!(
                            "unsupported scalableRef API group {api_group:?}"
                        ))
                    } else if !SCALABLE_KINDS.contains(&kind.as_str()) {
                        Resolution::Failed(format!("unsupported kind {kind:?}"))
                    } else {
                        let key = (kind.clone(), b.namespace.clone(), name.clone());
                        match self.scalables.get(&key) {
                            // `lo.FromPtrOr(obj.Spec.Replicas, 1)`.
                            Some((replicas, t)) => found(
                                t,
                                &format!("{kind}/{name}"),
                                Some(replicas.unwrap_or(1).clamp(0, i64::from(i32::MAX)) as i32),
                            )?,
                            None => Resolution::NotFound,
                        }
                    }
                }
            };
            let status = buffer::status(b, &resolution);
            let template = match resolution {
                Resolution::Found { template, .. } => Some(template),
                _ => None,
            };
            out.push(ResolvedBuffer {
                buffer: b.clone(),
                status,
                template,
                at: at.clone(),
            });
        }
        Ok(out)
    }
}

/// The virtual pods of every buffer Karpenter provisions for, created at `created` (RFC 3339).
pub fn virtual_pods(buffers: &[ResolvedBuffer], created: &str) -> Vec<Pod> {
    buffers
        .iter()
        .filter(|b| b.status.provisions())
        .filter_map(|b| {
            let replicas = b.status.replicas?;
            Some(buffer::virtual_pods(
                &b.buffer,
                b.template.as_ref()?,
                replicas,
                created,
            ))
        })
        .flatten()
        .collect()
}
