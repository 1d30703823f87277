//! Documents → typed API objects: each document streams into the serde type of its kind (see
//! [`super::document`]); here it gets its location and name, and documents that are not objects
//! of a kind the tool reads become errors or are set aside as ignorable.

use super::core;
use super::document::{Body, Doc};
use super::error::{object_name, InputError, Location};
use super::kinds::{classify, Class};
use super::load::Source;
use super::meta::ObjectMeta;
use super::{nodeoverlay, v1, v1alpha5, v1beta1, yaml};
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
    /// `karpenter.sh/v1alpha1` NodeOverlay.
    NodeOverlay(Box<nodeoverlay::NodeOverlay>),
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
    /// A LimitRange.
    LimitRange(Box<core::LimitRange>),
    /// A PriorityClass.
    PriorityClass(Box<core::PriorityClass>),
    /// A StorageClass.
    StorageClass(Box<core::StorageClass>),
    /// A PersistentVolumeClaim.
    PersistentVolumeClaim(Box<core::PersistentVolumeClaim>),
    /// A PersistentVolume.
    PersistentVolume(Box<core::PersistentVolume>),
    /// A CSINode.
    CsiNode(Box<core::CsiNode>),
    /// A PodTemplate (what a CapacityBuffer's `podTemplateRef` names).
    PodTemplate(Box<super::buffer::PodTemplate>),
    /// An `autoscaling.x-k8s.io/v1beta1` CapacityBuffer.
    CapacityBuffer(Box<super::buffer::CapacityBuffer>),
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
    /// Unknown fields, with `--validate=warn`.
    pub warnings: Vec<String>,
}

impl ApiObject {
    /// The object's `metadata`.
    fn metadata(&self) -> &ObjectMeta {
        match self {
            ApiObject::Provisioner(o) => &o.metadata,
            ApiObject::Machine(o) => &o.metadata,
            ApiObject::AwsNodeTemplate(o) => &o.metadata,
            ApiObject::NodePoolV1Beta1(o) => &o.metadata,
            ApiObject::NodeClaimV1Beta1(o) => &o.metadata,
            ApiObject::Ec2NodeClassV1Beta1(o) => &o.metadata,
            ApiObject::NodePoolV1(o) => &o.metadata,
            ApiObject::NodeClaimV1(o) => &o.metadata,
            ApiObject::Ec2NodeClassV1(o) => &o.metadata,
            ApiObject::NodeOverlay(o) => &o.metadata,
            ApiObject::Pod(o) => &o.metadata,
            ApiObject::Workload(o) => &o.metadata,
            ApiObject::Node(o) => &o.metadata,
            ApiObject::PodDisruptionBudget(o) => &o.metadata,
            ApiObject::Namespace(o) => &o.metadata,
            ApiObject::RuntimeClass(o) => &o.metadata,
            ApiObject::LimitRange(o) => &o.metadata,
            ApiObject::PriorityClass(o) => &o.metadata,
            ApiObject::StorageClass(o) => &o.metadata,
            ApiObject::PersistentVolumeClaim(o) => &o.metadata,
            ApiObject::PersistentVolume(o) => &o.metadata,
            ApiObject::CsiNode(o) => &o.metadata,
            ApiObject::PodTemplate(o) => &o.metadata,
            ApiObject::CapacityBuffer(o) => &o.metadata,
        }
    }
}

/// Files one document (or a List's item) into `out`.
fn read_document(
    doc: Doc,
    location: Location,
    origin: &Origin,
    in_list: bool,
    out: &mut Objects,
) -> Result<(), InputError> {
    let (api_version, kind, body) = match doc {
        Doc::Object {
            api_version,
            kind,
            body,
        } => (api_version, kind, body),
        Doc::Headless { api_version, kind } => {
            let missing = match (api_version, kind) {
                (false, false) => "apiVersion and kind",
                (false, true) => "apiVersion",
                _ => "kind",
            };
            return Err(InputError::NotAnObject {
                at: location,
                message: format!("the document has no {missing} (every Kubernetes object needs both, as strings)"),
            });
        }
        Doc::NotAMapping(what) => return Err(not_an_object(location, what)),
        Doc::Null => return Err(not_an_object(location, "nothing")),
    };
    match body {
        Body::Typed(mut object, mut unknown, missing) => {
            // Pruned whatever the validation, as the API server stores the object without them.
            let other_generation =
                super::generation_fields::prune_other_generation_fields(&mut object);
            if super::schema::validation() != super::schema::Validation::Ignore {
                unknown.extend(read_but_unknown(&object));
                if let Some(root) = super::schema::root(&api_version, &kind) {
                    unknown.extend(super::free_form::unknown_inside(&object, root, &kind));
                }
                unknown.extend(other_generation);
            }
            let meta = object.metadata();
            let name = object_name(&kind, meta.namespace.as_deref(), meta.name.as_deref());
            if let Some(first) = unknown.first() {
                if super::schema::validation() == super::schema::Validation::Strict {
                    return Err(InputError::Invalid {
                        at: location,
                        object: name,
                        field: first.path.clone(),
                        message: format!("{} (--validate=warn or =ignore reads on)", first.message),
                    });
                }
                for u in &unknown {
                    out.warnings
                        .push(format!("{location}: {name}: {}: {}", u.path, u.message));
                }
            }
            if meta.name.as_deref().is_none_or(str::is_empty) {
                return Err(InputError::Invalid {
                    at: location,
                    object: name,
                    field: "metadata.name".into(),
                    message: "required (generateName is not supported in offline input)".into(),
                });
            }
            // The CRD's `required:` lists: the API server refuses such an object on create
            // whatever kubectl's `--validate` (docs/commands.md "Input").
            if let Some(path) = missing.first() {
                return Err(InputError::Invalid {
                    at: location,
                    object: name,
                    message: super::schema::required_message(&kind, path),
                    field: path.clone(),
                });
            }
            let invalid_meta = super::validate::object_meta_problem(&kind, meta);
            // An API server rule, but `--validate=warn|ignore` reads on past it too.
            if let Some((field, message)) = invalid_meta {
                match super::schema::validation() {
                    super::schema::Validation::Strict => {
                        return Err(InputError::Invalid {
                            at: location,
                            object: name,
                            field,
                            message,
                        })
                    }
                    super::schema::Validation::Warn => out
                        .warnings
                        .push(format!("{location}: {name}: {field}: {message}")),
                    super::schema::Validation::Ignore => {}
                }
            }
            out.objects.push(Object {
                location,
                origin: origin.clone(),
                name,
                object,
            });
        }
        Body::List(items) => {
            if in_list {
                return Err(InputError::NotAnObject {
                    at: location,
                    message: format!("a {kind} inside a List is not supported"),
                });
            }
            let items = items.map_err(|found| InputError::Invalid {
                at: location.clone(),
                object: object_name(&kind, None, None),
                field: "items".into(),
                message: format!("expected a list of objects, found {found}"),
            })?;
            for (i, item) in items.into_iter().enumerate() {
                let item_location = Location {
                    item: Some(u32::try_from(i).unwrap_or(u32::MAX)),
                    ..location.clone()
                };
                read_document(item, item_location, origin, true, out)?;
            }
        }
        Body::Invalid {
            name,
            namespace,
            field,
            message,
        } => {
            return Err(InputError::Invalid {
                at: location,
                object: object_name(&kind, namespace.as_deref(), name.as_deref()),
                field,
                message,
            })
        }
        Body::Skipped { name, namespace } => {
            let object = object_name(&kind, namespace.as_deref(), name.as_deref());
            match classify(&api_version, &kind) {
                Class::UnknownVersion(expected) => {
                    return Err(InputError::UnknownApiVersion {
                        at: location,
                        object,
                        api_version,
                        expected,
                    })
                }
                Class::Unsupported(hint) => {
                    return Err(InputError::UnsupportedKind {
                        at: location,
                        object,
                        api_version,
                        hint,
                    })
                }
                Class::Ignored | Class::Known(_) | Class::List => {
                    out.ignored.push(format!("{object} ({location})"))
                }
            }
        }
    }
    Ok(())
}

fn not_an_object(at: Location, found: &str) -> InputError {
    InputError::NotAnObject {
        at,
        message: format!(
            "expected a Kubernetes object (a mapping with apiVersion and kind), found {found}"
        ),
    }
}

/// Parses one source's text into `out`. Returns how many documents it held.
pub(crate) fn read_source(source: &Source, out: &mut Objects) -> Result<usize, InputError> {
    read_source_into(source, out, None)
}

/// [`read_source`], handing each object to `each` as soon as its document is read (`out`
/// keeps the rest: ignored objects, warnings, document counts).
pub(crate) fn read_source_each(
    source: &Source,
    out: &mut Objects,
    each: &mut dyn FnMut(Object),
) -> Result<usize, InputError> {
    read_source_into(source, out, Some(each))
}

fn read_source_into(
    source: &Source,
    out: &mut Objects,
    mut each: Option<&mut dyn FnMut(Object)>,
) -> Result<usize, InputError> {
    let display = super::error::display_source(&source.name).to_string();
    let mut docs = yaml::Documents::<Doc>::new(&display, &source.text)?
        .streaming_lists(|api_version, kind| matches!(classify(api_version, kind), Class::List));
    let count = docs.total();
    if count == 0 && source.explicit {
        return Err(InputError::Empty {
            path: display,
            what: "no Kubernetes objects found (the input is empty or only comments)".into(),
        });
    }
    out.document_counts.insert(source.name.clone(), count);
    for i in 0..count {
        let Some(part) = docs.next_part() else { break };
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
        let list = match part? {
            yaml::Part::Whole(doc) => {
                if let Err(e) = read_document(doc, location, &origin, false, out) {
                    // A malformed later document is the first error, as when every document
                    // was typed before any was read.
                    docs.rest_typed()?;
                    return Err(e);
                }
                hand_out(out, &mut each);
                continue;
            }
            yaml::Part::List(list) => list,
        };
        // A JSON List's items one at a time: each typed, filed and handed out before the
        // next is typed (`kubectl get nodes,pods -o json` is one List).
        for n in 0..list.len() {
            let Some(item) = docs.item(&list, n) else {
                return Err(whole_list_error(docs, &list, location, &origin));
            };
            let at = Location {
                item: Some(u32::try_from(n).unwrap_or(u32::MAX)),
                ..location.clone()
            };
            if let Err(e) = read_document(item, at, &origin, true, out) {
                // As when the whole List was typed before its items were read: a malformed
                // later item, then a malformed later document, is the first error.
                if (n + 1..list.len()).any(|later| docs.item(&list, later).is_none()) {
                    return Err(whole_list_error(docs, &list, location, &origin));
                }
                docs.rest_typed()?;
                return Err(e);
            }
            hand_out(out, &mut each);
        }
    }
    Ok(count)
}

/// The error of a JSON List one of whose items does not type: the one the List typed whole
/// gives (`items[N]` of it named; with its items written before its `kind`, as kubectl writes
/// them, the List's own `items[N].field`), as when Lists were not streamed.
fn whole_list_error<'a>(
    mut docs: yaml::Documents<'a, Doc>,
    list: &yaml::JsonList<'a>,
    location: Location,
    origin: &Origin,
) -> InputError {
    let unread = || InputError::NotAnObject {
        at: location.clone(),
        message: "a List item could not be read".into(),
    };
    let doc = match docs.whole(list) {
        Err(e) => return e,
        Ok(None) => return unread(),
        Ok(Some(doc)) => doc,
    };
    match read_document(
        doc,
        location.clone(),
        origin,
        false,
        &mut Objects::default(),
    ) {
        Err(e) => match docs.rest_typed() {
            Err(later) => later,
            Ok(()) => e,
        },
        Ok(()) => unread(),
    }
}

/// Hands the objects filed so far to `each`, when objects are handed out as they are read.
fn hand_out(out: &mut Objects, each: &mut Option<&mut dyn FnMut(Object)>) {
    if let Some(each) = each.as_mut() {
        for o in out.objects.drain(..) {
            each(o);
        }
    }
}

/// The error for inputs that held no object at all.
pub(crate) fn nothing_read(paths: &[String]) -> InputError {
    InputError::Empty {
        path: paths.join(", "),
        what: "no Kubernetes objects found in the input".into(),
    }
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
        return Err(nothing_read(paths));
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

/// Fields our shared types read but this kind's CRD lacks, so the schema walk (which sees only
/// unread fields) cannot flag them: `kubelet.containerRuntime` is a v1alpha5 field (the
/// Provisioner's `kubeletConfiguration`); the v1beta1 NodePool/NodeClaim and v1 EC2NodeClass
/// `kubelet` schemas have no such property (core v0.37 / v1.14.1 CRDs), so `kubectl apply
/// --validate=strict` refuses it there — session 21's sweep: `aws-samples/karpenter-blueprints`
/// `c5fd296` `cluster/terraform/karpenter.tf` writes it on a v1beta1 NodePool.
fn read_but_unknown(object: &ApiObject) -> Vec<super::schema::UnknownField> {
    let (kubelet, path) = match object {
        ApiObject::NodePoolV1Beta1(p) => (
            p.spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .and_then(|t| t.spec.as_ref())
                .and_then(|s| s.kubelet.as_ref()),
            "spec.template.spec.kubelet.containerRuntime",
        ),
        ApiObject::NodeClaimV1Beta1(c) => (
            c.spec.as_ref().and_then(|s| s.kubelet.as_ref()),
            "spec.kubelet.containerRuntime",
        ),
        ApiObject::Ec2NodeClassV1(c) => (
            c.spec.as_ref().and_then(|s| s.kubelet.as_ref()),
            "spec.kubelet.containerRuntime",
        ),
        _ => (None, ""),
    };
    kubelet
        .filter(|k| k.container_runtime.is_some())
        .map(|_| super::schema::UnknownField {
            path: path.into(),
            message: "unknown field (containerRuntime is a v1alpha5 kubeletConfiguration setting)"
                .into(),
        })
        .into_iter()
        .collect()
}
