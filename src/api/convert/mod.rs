//! `kubectl karpenter convert`: v1alpha5 Provisioners with their AWSNodeTemplates (or inline
//! `spec.provider`) and v1beta1 NodePools/EC2NodeClasses become `karpenter.sh/v1` NodePools and
//! `karpenter.k8s.aws/v1` EC2NodeClasses; v1 objects pass through unchanged (docs/karpenter.md §1,
//! docs/spec.md §2).
//!
//! The rule is "preserve behaviour, explain every change": wherever a default moved or
//! disappeared between generations, the old generation's effective value is written out
//! explicitly (requirements, `expireAfter`, `consolidateAfter`, `metadataOptions`, …), and
//! every field that could not be carried over, or whose meaning changes, produces a [`Note`]
//! naming the file, the object and the field. Notes go to stderr and, as `# note:` comments, to
//! the top of the document they concern, so the converted file explains itself.
//!
//! Where v1 requires a value the old objects never held (the node identity that v1alpha5 took
//! from `aws.defaultInstanceProfile`, the Kubernetes version in an Ubuntu SSM path, selectors
//! a launch template used to provide), a `${PLACEHOLDER}` is written and noted, as the upstream
//! `karpenter-convert` did with `$KARPENTER_NODE_ROLE`: the output still loads and plans, and it
//! cannot be applied by accident without the placeholder being noticed (the node class would
//! not become Ready).
//!
//! Everything here is pure: objects in, v1 objects and notes out. Input is validated by the
//! ordinary loader first ([`Manifests::from_objects`]), so a conversion never starts from an
//! object the loader would reject; output is deterministic (maps are ordered, documents follow
//! the input order).

//!
//! The modules follow the objects: [`provisioner`] (v1alpha5 Provisioner → NodePool),
//! [`nodepool`] (v1beta1 NodePool), [`nodeclass`] (AWSNodeTemplate, inline provider and v1beta1
//! EC2NodeClass → EC2NodeClass, with [`ubuntu`] for the family v1 dropped), [`selectors`]
//! (v1alpha1 selector maps → v1 terms), [`kubelet`] (kubelet settings move to the node class),
//! [`metadata`] (what is kept of `metadata`, fields the tool does not know), [`roundtrip`]
//! (annotations Karpenter v1.0 left on v1 objects), [`notes`] and
//! [`result`] (the documents and their rendering).

mod kubelet;
mod metadata;
mod nodeclass;
mod nodepool;
mod notes;
mod provisioner;
mod result;
mod roundtrip;
mod selectors;
mod ubuntu;

use std::collections::BTreeMap;

use super::yaml::{self, Value};
use serde::Serialize;

use super::error::{display_source, InputError, Location};
use super::load::{read_sources, Source};
use super::objects::{read_source, ApiObject, Object, Objects};
use super::{schema, v1, Manifests, Scope};
use kubelet::KubeletUse;
pub use notes::Note;
use notes::Notes;
use result::name_some;
pub use result::{Conversion, Document};

/// `karpenter.sh/v1`.
pub const NODEPOOL_API_VERSION: &str = "karpenter.sh/v1";
/// `karpenter.k8s.aws/v1`.
pub const NODECLASS_API_VERSION: &str = "karpenter.k8s.aws/v1";

/// What v1alpha5 took from `aws.defaultInstanceProfile` when a template named no profile.
pub const INSTANCE_PROFILE_PLACEHOLDER: &str = "${AWS_DEFAULT_INSTANCE_PROFILE}";
/// Stands for the cluster's `major.minor` version in an SSM path when `--kubernetes-version`
/// was not given.
pub const KUBERNETES_VERSION_PLACEHOLDER: &str = "${KUBERNETES_VERSION}";
/// Stands for a cluster name in a selector v1 requires but the input did not have.
pub const CLUSTER_NAME_PLACEHOLDER: &str = "${CLUSTER_NAME}";
/// Stands for an AMI a launch template used to provide.
pub const AMI_ID_PLACEHOLDER: &str = "${AMI_ID}";

/// Conversion settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `major.minor` of the cluster (`--kubernetes-version`), for the Ubuntu SSM paths.
    pub kubernetes_version: Option<String>,
}

/// Reads `-f` inputs (files, directories, `-`) and converts them.
pub fn convert_paths(
    paths: &[String],
    stdin: &mut dyn std::io::Read,
    options: &Options,
) -> Result<Conversion, InputError> {
    let sources = read_sources(paths, stdin)?;
    let inputs: Vec<&str> = paths.iter().map(|p| display_source(p)).collect();
    convert_sources(&sources, &inputs.join(", "), options)
}

/// Converts one in-memory manifest text, named `source` in messages.
pub fn convert_str(source: &str, text: &str, options: &Options) -> Result<Conversion, InputError> {
    let sources = [Source {
        name: source.to_string(),
        text: text.to_string(),
        explicit: true,
    }];
    convert_sources(&sources, display_source(source), options)
}

/// The raw documents of each source, to pass v1 objects through exactly as written and to
/// find fields the typed objects do not know.
type RawDocuments = BTreeMap<String, Vec<Value>>;

fn convert_sources(
    sources: &[Source],
    inputs: &str,
    options: &Options,
) -> Result<Conversion, InputError> {
    let mut objects = Objects::default();
    let mut raw = RawDocuments::new();
    let mut total = 0;
    for s in sources {
        // Fields a conversion cannot carry over are noted on each document, field by field
        // (`not carried over`), so they are read past here rather than refused.
        total +=
            schema::with_validation(schema::Validation::Ignore, || read_source(s, &mut objects))?;
        // Same parser, same text: the indices line up with each object's `origin.document`.
        let docs = yaml::documents(display_source(&s.name), &s.text)?;
        raw.insert(s.name.clone(), docs);
    }
    if total == 0 {
        return Err(InputError::Empty {
            path: inputs.to_string(),
            what: "no Kubernetes objects found in the input".into(),
        });
    }
    let conversion = convert_objects(&objects, &raw, options)?;
    if conversion.documents.is_empty() {
        let mut found = conversion.not_converted.clone();
        found.extend(conversion.not_printed.iter().cloned());
        return Err(InputError::Empty {
            path: inputs.to_string(),
            what: format!(
                "no Karpenter objects to convert (found only {}; convert reads Provisioners, AWSNodeTemplates, NodePools and EC2NodeClasses)",
                name_some(&found)
            ),
        });
    }
    Ok(conversion)
}

/// The raw document an object was read from.
fn raw_of<'a>(raw: &'a RawDocuments, o: &Object) -> Option<&'a Value> {
    let doc = raw.get(&o.origin.source)?.get(o.origin.document)?;
    match o.location.item {
        Some(i) => doc.get("items")?.item(usize::try_from(i).ok()?),
        None => Some(doc),
    }
}

/// Converts typed objects (with their raw documents, see [`convert_paths`]).
fn convert_objects(
    objects: &Objects,
    raw: &RawDocuments,
    options: &Options,
) -> Result<Conversion, InputError> {
    // The loader's validation first: never convert what `provision` would reject.
    Manifests::from_objects_in(objects.clone(), Scope::NoPods)?;
    let mut c = Converter {
        options,
        outs: Vec::new(),
        kubelets: BTreeMap::new(),
        refs: Vec::new(),
        result: Conversion::default(),
    };
    for o in &objects.objects {
        let r = raw_of(raw, o);
        match &o.object {
            ApiObject::Provisioner(p) => c.provisioner(o, p, r)?,
            ApiObject::AwsNodeTemplate(t) => c.aws_node_template(o, t, r),
            ApiObject::NodePoolV1Beta1(p) => c.node_pool_v1beta1(o, p, r),
            ApiObject::Ec2NodeClassV1Beta1(n) => c.node_class_v1beta1(o, n, r),
            ApiObject::NodePoolV1(p) => {
                let value = passthrough(r, p.as_ref());
                let notes = roundtrip::node_pool_notes(o, &p.metadata);
                c.push_unchanged(o, "NodePool", NODEPOOL_API_VERSION, value, notes);
            }
            ApiObject::Ec2NodeClassV1(n) => {
                let value = passthrough(r, n.as_ref());
                let notes = roundtrip::node_class_notes(o, &n.metadata);
                c.push_unchanged(o, "EC2NodeClass", NODECLASS_API_VERSION, value, notes);
            }
            // NodeOverlay has one version: it goes along with the pools it prices.
            ApiObject::NodeOverlay(n) => {
                let value = passthrough(r, n.as_ref());
                let notes = Notes::new(o);
                c.push_unchanged(o, "NodeOverlay", "karpenter.sh/v1alpha1", value, notes);
            }
            ApiObject::Machine(_) | ApiObject::NodeClaimV1Beta1(_) | ApiObject::NodeClaimV1(_) => c
                .result
                .not_converted
                .push(format!("{} ({})", o.name, o.location)),
            ApiObject::Pod(_)
            | ApiObject::Workload(_)
            | ApiObject::Node(_)
            | ApiObject::PodDisruptionBudget(_)
            | ApiObject::Namespace(_)
            | ApiObject::RuntimeClass(_)
            | ApiObject::LimitRange(_)
            | ApiObject::PriorityClass(_)
            | ApiObject::StorageClass(_)
            | ApiObject::PersistentVolumeClaim(_)
            | ApiObject::PersistentVolume(_)
            | ApiObject::CsiNode(_)
            | ApiObject::PodTemplate(_)
            | ApiObject::CapacityBuffer(_) => c
                .result
                .not_printed
                .push(format!("{} ({})", o.name, o.location)),
        }
    }
    c.result.not_printed.extend(objects.ignored.iter().cloned());
    c.finish()
}

/// A v1 object as written, or re-serialised when the raw document cannot be found.
fn passthrough<T: Serialize>(raw: Option<&Value>, typed: &T) -> Value {
    match raw {
        Some(v) => v.clone(),
        None => yaml::to_value(typed),
    }
}

/// A converted object before rendering.
enum Body {
    Pool(Box<v1::NodePool>),
    Class(Box<v1::Ec2NodeClass>),
    Raw(Value),
}

struct Out {
    kind: &'static str,
    name: String,
    origin: String,
    at: Location,
    object: String,
    source: String,
    body: Body,
    notes: Vec<Note>,
    comments: Vec<String>,
}

struct Converter<'a> {
    options: &'a Options,
    outs: Vec<Out>,
    /// Output class name → the NodePools using it, in input order.
    kubelets: BTreeMap<String, Vec<KubeletUse>>,
    /// (NodePool output index, class name, reference field).
    refs: Vec<(usize, String, String)>,
    result: Conversion,
}

impl Converter<'_> {
    fn push(
        &mut self,
        o: &Object,
        kind: &'static str,
        name: String,
        origin: String,
        body: Body,
        notes: Notes,
    ) -> usize {
        self.outs.push(Out {
            kind,
            name,
            origin,
            at: o.location.clone(),
            object: o.name.clone(),
            source: o.location.source.clone(),
            body,
            notes: notes.list,
            comments: Vec::new(),
        });
        self.outs.len() - 1
    }

    fn push_unchanged(
        &mut self,
        o: &Object,
        kind: &'static str,
        api_version: &str,
        value: Value,
        notes: Notes,
    ) {
        let name = value
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.push(
            o,
            kind,
            name,
            format!("{api_version} {}", o.name),
            Body::Raw(value),
            notes,
        );
    }

    // ------------------------------------------------------------------------- finishing

    /// Checks names, moves kubelet settings onto node classes, and renders.
    fn finish(mut self) -> Result<Conversion, InputError> {
        let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (i, out) in self.outs.iter().enumerate() {
            if let Some(first) = seen.insert((out.kind, out.name.as_str()), i) {
                let f = &self.outs[first];
                return Err(InputError::Invalid {
                    at: out.at.clone(),
                    object: out.object.clone(),
                    field: "metadata.name".into(),
                    message: format!(
                        "converts to {}/{}, as {} ({}) does: rename one of them",
                        out.kind, out.name, f.object, f.at
                    ),
                });
            }
        }
        let classes: BTreeMap<String, usize> = self
            .outs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind == "EC2NodeClass")
            .map(|(i, o)| (o.name.clone(), i))
            .collect();

        let kubelets = std::mem::take(&mut self.kubelets);
        for (class, uses) in &kubelets {
            self.place_kubelet(class, uses, classes.get(class).copied());
        }
        for (out, class, field) in std::mem::take(&mut self.refs) {
            if !classes.contains_key(&class) {
                let o = &mut self.outs[out];
                o.notes.push(Note {
                    source: o.source.clone(),
                    object: o.object.clone(),
                    field,
                    message: format!("EC2NodeClass/{class} is not in the input: convert its AWSNodeTemplate or EC2NodeClass too (a v1 NodePool needs a v1 EC2NodeClass)"),
                });
            }
        }

        let mut result = self.result;
        for o in self.outs {
            let (value, unchanged) = match o.body {
                Body::Pool(p) => (yaml::to_value(&p), false),
                Body::Class(c) => (yaml::to_value(&c), false),
                Body::Raw(v) => (v, true),
            };
            result.documents.push(Document {
                kind: o.kind.to_string(),
                name: o.name,
                origin: o.origin,
                unchanged,
                notes: o.notes,
                comments: o.comments,
                value,
            });
        }
        Ok(result)
    }

    fn note_on(&mut self, out: usize, field: &str, message: String) {
        let o = &mut self.outs[out];
        o.notes.push(Note {
            source: o.source.clone(),
            object: o.object.clone(),
            field: field.to_string(),
            message,
        });
    }
}

#[cfg(test)]
mod tests;
