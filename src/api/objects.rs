//! Documents → typed API objects: read `apiVersion`/`kind`, decide what the document is, and
//! deserialise it into the matching serde type (or set it aside as an ignorable kind).
//!
//! Decoding goes through `serde_yaml::Value` first so every document, YAML or JSON, is handled
//! the same way; only when a typed decode fails is the document re-serialised and decoded again
//! from text, because that path is what makes serde_yaml report the field path
//! (`spec.replicas: invalid type: …`).

use serde::de::DeserializeOwned;
use serde_yaml::Value;

use super::core;
use super::error::{object_name, InputError, Location};
use super::load::{parse_documents, strip_location, Source};
use super::{v1, v1alpha5, v1beta1};
use crate::model::nodepool::Origin;

/// A typed object of a kind the tool reads.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiObject {
    /// `karpenter.sh/v1alpha5` Provisioner.
    Provisioner(Box<v1alpha5::Provisioner>),
    /// `karpenter.sh/v1alpha5` Machine.
    Machine(Box<v1alpha5::Machine>),
    /// `karpenter.k8s.aws/v1alpha1` AWSNodeTemplate.
    AwsNodeTemplate(Box<v1alpha5::AwsNodeTemplate>),
    /// `karpenter.sh/v1beta1` NodePool.
    NodePoolV1Beta1(Box<v1beta1::NodePool>),
    /// `karpenter.sh/v1beta1` NodeClaim.
    NodeClaimV1Beta1(Box<v1beta1::NodeClaim>),
    /// `karpenter.k8s.aws/v1beta1` EC2NodeClass.
    Ec2NodeClassV1Beta1(Box<v1beta1::Ec2NodeClass>),
    /// `karpenter.sh/v1` NodePool.
    NodePoolV1(Box<v1::NodePool>),
    /// `karpenter.sh/v1` NodeClaim.
    NodeClaimV1(Box<v1::NodeClaim>),
    /// `karpenter.k8s.aws/v1` EC2NodeClass.
    Ec2NodeClassV1(Box<v1::Ec2NodeClass>),
    /// A Pod.
    Pod(Box<core::Pod>),
    /// A Deployment, ReplicaSet, StatefulSet, ReplicationController, Job or DaemonSet (the
    /// kind is in the object's `kind`).
    Workload(Box<core::Workload>),
    /// A Node.
    Node(Box<core::Node>),
    /// A PodDisruptionBudget.
    PodDisruptionBudget(Box<core::PodDisruptionBudget>),
    /// A Namespace.
    Namespace(Box<core::Namespace>),
    /// A RuntimeClass.
    RuntimeClass(Box<core::RuntimeClass>),
}

/// An object with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// For messages.
    pub location: Location,
    /// For the model's `origin` fields.
    pub origin: Origin,
    /// `Kind/name` (namespaced kinds: `Kind/namespace/name` outside `default`).
    pub name: String,
    /// The object.
    pub object: ApiObject,
}

/// Everything read from the inputs, before normalisation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Objects {
    /// Objects of the kinds the tool reads, in input order.
    pub objects: Vec<Object>,
    /// Ordinary Kubernetes objects that cannot change a plan (Service, ConfigMap, …), as
    /// `Kind/name (location)`.
    pub ignored: Vec<String>,
    /// How many objects each source held (keyed by origin source), to word locations.
    pub document_counts: std::collections::BTreeMap<String, usize>,
}

/// Kinds that commonly sit in a manifest directory but cannot change a plan. They are skipped
/// and listed, so `-f ./k8s/` works on a whole application directory.
const IGNORABLE_KINDS: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CSINode",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ControllerRevision",
    "CronJob",
    "CustomResourceDefinition",
    "EndpointSlice",
    "Endpoints",
    "Event",
    "FlowSchema",
    "HorizontalPodAutoscaler",
    "Ingress",
    "IngressClass",
    "Lease",
    "LimitRange",
    "MutatingWebhookConfiguration",
    "NetworkPolicy",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodSecurityPolicy",
    "PodTemplate",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VerticalPodAutoscaler",
    "VolumeAttachment",
    "VolumeSnapshotClass",
];

const KARPENTER_GROUP: &str = "karpenter.sh";
const AWS_GROUP: &str = "karpenter.k8s.aws";

/// What a document is.
enum Class {
    Known(Kind),
    List,
    Ignored,
    UnknownVersion(String),
    Unsupported(String),
}

#[derive(Clone, Copy)]
enum Kind {
    Provisioner,
    Machine,
    AwsNodeTemplate,
    NodePoolV1Beta1,
    NodeClaimV1Beta1,
    Ec2NodeClassV1Beta1,
    NodePoolV1,
    NodeClaimV1,
    Ec2NodeClassV1,
    Pod,
    Workload,
    Node,
    Pdb,
    Namespace,
    RuntimeClass,
}

/// The versions each Karpenter kind exists in, for "expected …" messages.
fn karpenter_versions(group: &str, kind: &str) -> Option<&'static str> {
    Some(match (group, kind) {
        (KARPENTER_GROUP, "Provisioner" | "Machine") => "karpenter.sh/v1alpha5",
        (KARPENTER_GROUP, "NodePool" | "NodeClaim") => "karpenter.sh/v1 or karpenter.sh/v1beta1",
        (AWS_GROUP, "AWSNodeTemplate") => "karpenter.k8s.aws/v1alpha1",
        (AWS_GROUP, "EC2NodeClass") => "karpenter.k8s.aws/v1 or karpenter.k8s.aws/v1beta1",
        _ => return None,
    })
}

fn classify(api_version: &str, kind: &str) -> Class {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if group == KARPENTER_GROUP || group == AWS_GROUP {
        let known = match (group, version, kind) {
            (KARPENTER_GROUP, "v1alpha5", "Provisioner") => Some(Kind::Provisioner),
            (KARPENTER_GROUP, "v1alpha5", "Machine") => Some(Kind::Machine),
            (KARPENTER_GROUP, "v1beta1", "NodePool") => Some(Kind::NodePoolV1Beta1),
            (KARPENTER_GROUP, "v1beta1", "NodeClaim") => Some(Kind::NodeClaimV1Beta1),
            (KARPENTER_GROUP, "v1", "NodePool") => Some(Kind::NodePoolV1),
            (KARPENTER_GROUP, "v1", "NodeClaim") => Some(Kind::NodeClaimV1),
            (AWS_GROUP, "v1alpha1", "AWSNodeTemplate") => Some(Kind::AwsNodeTemplate),
            (AWS_GROUP, "v1beta1", "EC2NodeClass") => Some(Kind::Ec2NodeClassV1Beta1),
            (AWS_GROUP, "v1", "EC2NodeClass") => Some(Kind::Ec2NodeClassV1),
            _ => None,
        };
        if let Some(k) = known {
            return Class::Known(k);
        }
        let base = kind.strip_suffix("List").unwrap_or(kind);
        return match karpenter_versions(group, base) {
            Some(_) if kind.ends_with("List") => Class::List,
            Some(expected) => Class::UnknownVersion(expected.to_string()),
            None => Class::Unsupported(if group == KARPENTER_GROUP {
                "karpenter.sh has Provisioner and Machine (v1alpha5), NodePool and NodeClaim (v1beta1, v1)".into()
            } else {
                "karpenter.k8s.aws has AWSNodeTemplate (v1alpha1) and EC2NodeClass (v1beta1, v1)"
                    .into()
            }),
        };
    }
    let core_kind = |expected_groups: &[&str], k: Kind, expected: &str| {
        if expected_groups.contains(&group) {
            Class::Known(k)
        } else {
            Class::UnknownVersion(expected.to_string())
        }
    };
    match kind {
        "List" if group.is_empty() => Class::List,
        "Pod" => core_kind(&[""], Kind::Pod, "v1"),
        "Node" => core_kind(&[""], Kind::Node, "v1"),
        "Namespace" => core_kind(&[""], Kind::Namespace, "v1"),
        "ReplicationController" => core_kind(&[""], Kind::Workload, "v1"),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => {
            core_kind(&["apps", "extensions"], Kind::Workload, "apps/v1")
        }
        "Job" => core_kind(&["batch"], Kind::Workload, "batch/v1"),
        "PodDisruptionBudget" => core_kind(&["policy"], Kind::Pdb, "policy/v1"),
        "RuntimeClass" => core_kind(&["node.k8s.io"], Kind::RuntimeClass, "node.k8s.io/v1"),
        k if IGNORABLE_KINDS.contains(&k) => Class::Ignored,
        k if k.ends_with("List") && k.len() > 4 => Class::List,
        _ => Class::Unsupported(
            "kubectl karpenter reads Pods, Deployments, ReplicaSets, StatefulSets, Jobs, DaemonSets, Nodes, \
             PodDisruptionBudgets and Karpenter objects; remove it from the input or pass only the files that matter"
                .into(),
        ),
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Decodes a typed object, reporting a type error with its field path.
///
/// The fast path decodes the parsed value. If that fails, the document is decoded again from
/// its YAML text, which does two things: serde_yaml reports the failing field's path only when
/// decoding text, and text decoding reads any plain scalar as a string where a string is
/// expected (`version: 3` as a label), as YAML itself does — so YAML and JSON input behave the
/// same.
fn decode<T: DeserializeOwned>(
    value: &Value,
    at: &Location,
    object: &str,
) -> Result<T, InputError> {
    let first = match T::deserialize(value) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    let message = match serde_yaml::to_string(value).map(|text| serde_yaml::from_str::<T>(&text)) {
        Ok(Ok(t)) => return Ok(t),
        Ok(Err(e)) => strip_location(&e.to_string()),
        Err(_) => strip_location(&first.to_string()),
    };
    let (field, message) = match message.split_once(": ") {
        Some((path, rest)) if !path.is_empty() && !path.contains(' ') => {
            (path.to_string(), rest.to_string())
        }
        _ => (String::new(), message),
    };
    Err(InputError::Invalid {
        at: at.clone(),
        object: object.to_string(),
        field,
        message,
    })
}

/// Reads one document (or a List's item) into `out`.
fn read_document(
    value: &Value,
    location: Location,
    origin: &Origin,
    in_list: bool,
    out: &mut Objects,
) -> Result<(), InputError> {
    if !matches!(value, Value::Mapping(_)) {
        return Err(InputError::NotAnObject {
            at: location,
            message: format!(
                "expected a Kubernetes object (a mapping with apiVersion and kind), found {}",
                describe(value)
            ),
        });
    }
    let (api_version, kind) = match (value.get("apiVersion"), value.get("kind")) {
        (Some(Value::String(a)), Some(Value::String(k))) if !a.is_empty() && !k.is_empty() => {
            (a.as_str(), k.as_str())
        }
        (a, k) => {
            let missing = match (
                a.and_then(Value::as_str).filter(|s| !s.is_empty()),
                k.and_then(Value::as_str).filter(|s| !s.is_empty()),
            ) {
                (None, None) => "apiVersion and kind",
                (None, _) => "apiVersion",
                _ => "kind",
            };
            return Err(InputError::NotAnObject {
                at: location,
                message: format!("the document has no {missing} (every Kubernetes object needs both, as strings)"),
            });
        }
    };
    let meta = value.get("metadata");
    let name = meta.and_then(|m| str_field(m, "name"));
    let namespace = meta.and_then(|m| str_field(m, "namespace"));
    let object = object_name(kind, namespace, name);
    let class = classify(api_version, kind);
    if !matches!(
        class,
        Class::List | Class::Ignored | Class::Unsupported(_) | Class::UnknownVersion(_)
    ) && name.is_none_or(str::is_empty)
    {
        return Err(InputError::Invalid {
            at: location,
            object,
            field: "metadata.name".into(),
            message: "required (generateName is not supported in offline input)".into(),
        });
    }
    let push = |out: &mut Objects, object_value: ApiObject| {
        out.objects.push(Object {
            location: location.clone(),
            origin: origin.clone(),
            name: object.clone(),
            object: object_value,
        });
    };
    let at = &location;
    match class {
        Class::Known(k) => {
            let o = match k {
                Kind::Provisioner => ApiObject::Provisioner(decode(value, at, &object)?),
                Kind::Machine => ApiObject::Machine(decode(value, at, &object)?),
                Kind::AwsNodeTemplate => ApiObject::AwsNodeTemplate(decode(value, at, &object)?),
                Kind::NodePoolV1Beta1 => ApiObject::NodePoolV1Beta1(decode(value, at, &object)?),
                Kind::NodeClaimV1Beta1 => ApiObject::NodeClaimV1Beta1(decode(value, at, &object)?),
                Kind::Ec2NodeClassV1Beta1 => {
                    ApiObject::Ec2NodeClassV1Beta1(decode(value, at, &object)?)
                }
                Kind::NodePoolV1 => ApiObject::NodePoolV1(decode(value, at, &object)?),
                Kind::NodeClaimV1 => ApiObject::NodeClaimV1(decode(value, at, &object)?),
                Kind::Ec2NodeClassV1 => ApiObject::Ec2NodeClassV1(decode(value, at, &object)?),
                Kind::Pod => ApiObject::Pod(decode(value, at, &object)?),
                Kind::Workload => ApiObject::Workload(decode(value, at, &object)?),
                Kind::Node => ApiObject::Node(decode(value, at, &object)?),
                Kind::Pdb => ApiObject::PodDisruptionBudget(decode(value, at, &object)?),
                Kind::Namespace => ApiObject::Namespace(decode(value, at, &object)?),
                Kind::RuntimeClass => ApiObject::RuntimeClass(decode(value, at, &object)?),
            };
            push(out, o);
        }
        Class::Ignored => out.ignored.push(format!("{object} ({location})")),
        Class::List => {
            if in_list {
                return Err(InputError::NotAnObject {
                    at: location,
                    message: format!("a {kind} inside a List is not supported"),
                });
            }
            let items = match value.get("items") {
                None | Some(Value::Null) => return Ok(()),
                Some(Value::Sequence(items)) => items,
                Some(other) => {
                    return Err(InputError::Invalid {
                        at: location,
                        object,
                        field: "items".into(),
                        message: format!("expected a list of objects, found {}", describe(other)),
                    })
                }
            };
            for (i, item) in items.iter().enumerate() {
                let item_location = Location {
                    item: Some(u32::try_from(i).unwrap_or(u32::MAX)),
                    ..location.clone()
                };
                read_document(item, item_location, origin, true, out)?;
            }
        }
        Class::UnknownVersion(expected) => {
            return Err(InputError::UnknownApiVersion {
                at: location,
                object,
                api_version: api_version.to_string(),
                expected,
            })
        }
        Class::Unsupported(hint) => {
            return Err(InputError::UnsupportedKind {
                at: location,
                object,
                api_version: api_version.to_string(),
                hint,
            })
        }
    }
    Ok(())
}

/// Parses one source's text into `out`. Returns how many documents it held.
pub(crate) fn read_source(source: &Source, out: &mut Objects) -> Result<usize, InputError> {
    let display = super::error::display_source(&source.name).to_string();
    let docs = parse_documents(&display, &source.text)?;
    let count = docs.len();
    if count == 0 && source.explicit {
        return Err(InputError::Empty {
            path: display,
            what: "no Kubernetes objects found (the input is empty or only comments)".into(),
        });
    }
    out.document_counts.insert(source.name.clone(), count);
    for (i, doc) in docs.iter().enumerate() {
        let document = (count > 1).then(|| u32::try_from(i + 1).unwrap_or(u32::MAX));
        let location = Location {
            source: display.clone(),
            document,
            item: None,
        };
        let origin = Origin {
            source: source.name.clone(),
            document: i,
        };
        read_document(doc, location, &origin, false, out)?;
    }
    Ok(count)
}

/// Reads every input into typed objects (see [`super::load_paths`] for the input rules). This
/// is the entry point for code that needs the objects as written, such as `convert`.
pub fn read_objects(
    paths: &[String],
    stdin: &mut dyn std::io::Read,
) -> Result<Objects, InputError> {
    let sources = super::load::read_sources(paths, stdin)?;
    let mut out = Objects::default();
    let mut total = 0;
    for s in &sources {
        total += read_source(s, &mut out)?;
    }
    if total == 0 {
        return Err(InputError::Empty {
            path: paths.join(", "),
            what: "no Kubernetes objects found in the input".into(),
        });
    }
    Ok(out)
}

/// Reads one in-memory text as if it were a file named `source`.
pub fn read_str(source: &str, text: &str) -> Result<Objects, InputError> {
    let mut out = Objects::default();
    read_source(
        &Source {
            name: source.to_string(),
            text: text.to_string(),
            explicit: true,
        },
        &mut out,
    )?;
    Ok(out)
}
