//! `kubectl karpenter convert`: v1alpha5 Provisioners with their AWSNodeTemplates (or inline
//! `spec.provider`) and v1beta1 NodePools/EC2NodeClasses become `karpenter.sh/v1` NodePools and
//! `karpenter.k8s.aws/v1` EC2NodeClasses; v1 objects pass through unchanged (KARPENTER.md §1,
//! SPEC §2).
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

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::json;
use serde_yaml::Value;

use super::error::{display_source, InputError, Location};
use super::load::{parse_documents, read_sources, Source};
use super::meta::{
    AmiSelectorTermSpec, BlockDeviceMappingSpec, EbsSpec, IntOrString, KubeletConfiguration,
    NodeClassRefSpec, ObjectMeta, RequirementSpec, SelectorTermSpec, StringMap, TemplateMetadata,
};
use super::objects::{read_source, ApiObject, Object, Objects};
use super::v1alpha5::{group_of, AwsProvider, AWS_GROUP};
use super::validate::key_path;
use super::{v1, v1alpha5, v1beta1, Manifests};
use crate::model::labels;
use crate::model::legacy_selector::{is_ids_key, split_list};

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

/// v1 has at most this many terms in each selector list.
const MAX_TERMS: usize = 30;

/// Tags Karpenter v1 sets on instances itself; its CRD rejects them in `spec.tags`
/// (`karpenter.sh/managed-by` was rejected by v1.0 and is no longer used).
const V1_RESTRICTED_TAGS: &[&str] = &[
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.sh/managed-by",
];

/// Annotations Karpenter or kubectl write on stored objects; they are recomputed for v1 and
/// would only mislead in a manifest.
const MANAGED_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "karpenter.sh/provisioner-hash",
    "karpenter.k8s.aws/nodetemplate-hash",
    "karpenter.sh/nodepool-hash",
    "karpenter.sh/nodepool-hash-version",
    "karpenter.k8s.aws/ec2nodeclass-hash",
    "karpenter.k8s.aws/ec2nodeclass-hash-version",
];
const MANAGED_ANNOTATION_PREFIXES: &[&str] = &[
    "compatibility.karpenter.sh/",
    "compatibility.karpenter.k8s.aws/",
];

/// Conversion settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `major.minor` of the cluster (`--kubernetes-version`), for the Ubuntu SSM paths.
    pub kubernetes_version: Option<String>,
}

/// Something that could not be carried over, or whose meaning changes. Displays as
/// `<file>: <Kind>/<name>: <field>: <what and why>`, always one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The input file (`<stdin>` for `-`).
    pub source: String,
    /// The input object, `Kind/name`.
    pub object: String,
    /// The field concerned (input path, or the output path for something newly written).
    pub field: String,
    /// What happened and why.
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: ", self.source, self.object)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// One converted v1 object.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `NodePool` or `EC2NodeClass`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// Where it came from, e.g. `karpenter.sh/v1alpha5 Provisioner/default`.
    pub origin: String,
    /// Whether it is a v1 object passed through unchanged.
    pub unchanged: bool,
    /// Notes about this object (also meant for stderr).
    pub notes: Vec<Note>,
    /// Extra comment lines for the document only (pointers to notes on other documents).
    pub comments: Vec<String>,
    /// The object.
    pub value: Value,
}

/// The result of a conversion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversion {
    /// The v1 objects, in input order (an inline provider's EC2NodeClass right after its
    /// NodePool).
    pub documents: Vec<Document>,
    /// Karpenter objects that are not converted (Machines, NodeClaims: Karpenter creates them),
    /// as `Kind/name (location)`.
    pub not_converted: Vec<String>,
    /// Objects that are not Karpenter's and are not printed, as `Kind/name (location)`.
    pub not_printed: Vec<String>,
}

/// At most this many objects are named in a summary note.
const SUMMARY_NAMES: usize = 10;

fn name_some(list: &[String]) -> String {
    let mut s = list
        .iter()
        .take(SUMMARY_NAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > SUMMARY_NAMES {
        s.push_str(&format!(" and {} more", list.len() - SUMMARY_NAMES));
    }
    s
}

impl Conversion {
    /// Every per-object note, in document order.
    pub fn notes(&self) -> impl Iterator<Item = &Note> {
        self.documents.iter().flat_map(|d| d.notes.iter())
    }

    /// The notes about objects that were not converted (at most one line per kind of reason).
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.not_converted.is_empty() {
            out.push(format!(
                "not converted: {}: Karpenter creates Machines and NodeClaims from the NodePools itself",
                name_some(&self.not_converted)
            ));
        }
        match self.not_printed.as_slice() {
            [] => {}
            [one] => out.push(format!(
                "not printed: {one}: not a Karpenter NodePool, Provisioner or node class"
            )),
            many => out.push(format!(
                "not printed: {} objects that are not Karpenter NodePools, Provisioners or node classes: {}",
                many.len(),
                name_some(many)
            )),
        }
        out
    }

    /// The documents as multi-document YAML, each preceded by comments saying where it came
    /// from and what changed.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.documents.iter().enumerate() {
            if i > 0 {
                out.push_str("---\n");
            }
            if d.unchanged {
                out.push_str(&comment(&format!("unchanged: {} is already v1", d.origin)));
            } else {
                out.push_str(&comment(&format!(
                    "converted from {} by kubectl karpenter convert",
                    d.origin
                )));
            }
            for n in &d.notes {
                out.push_str(&comment(&format!("note: {n}")));
            }
            for c in &d.comments {
                out.push_str(&comment(c));
            }
            match serde_yaml::to_string(&d.value) {
                Ok(text) => out.push_str(&text),
                Err(e) => out.push_str(&comment(&format!("error: cannot render: {e}"))),
            }
        }
        out
    }
}

/// `# text\n`, keeping a comment on one line whatever the text holds.
fn comment(text: &str) -> String {
    format!("# {}\n", text.replace(['\n', '\r'], " "))
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
        total += read_source(s, &mut objects)?;
        // Same parser, same text: the indices line up with each object's `origin.document`.
        let docs = parse_documents(display_source(&s.name), &s.text)?;
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
        Some(i) => doc.get("items")?.get(usize::try_from(i).ok()?),
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
    Manifests::from_objects(objects.clone())?;
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
                c.push_unchanged(o, "NodePool", NODEPOOL_API_VERSION, value);
            }
            ApiObject::Ec2NodeClassV1(n) => {
                let value = passthrough(r, n.as_ref());
                c.push_unchanged(o, "EC2NodeClass", NODECLASS_API_VERSION, value);
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
            | ApiObject::RuntimeClass(_) => c
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
        None => serde_yaml::to_value(typed).unwrap_or(Value::Null),
    }
}

/// Notes about one input object.
struct Notes {
    source: String,
    object: String,
    list: Vec<Note>,
}

impl Notes {
    fn new(o: &Object) -> Self {
        Notes {
            source: o.location.source.clone(),
            object: o.name.clone(),
            list: Vec::new(),
        }
    }

    fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.list.push(Note {
            source: self.source.clone(),
            object: self.object.clone(),
            field: field.into(),
            message: message.into(),
        });
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

/// A NodePool's kubelet settings on their way to its node class (v1 keeps them there).
struct KubeletUse {
    /// The NodePool's output index.
    out: usize,
    /// The field they came from.
    field: &'static str,
    kubelet: Option<KubeletConfiguration>,
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

    fn push_unchanged(&mut self, o: &Object, kind: &'static str, api_version: &str, value: Value) {
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
            Notes::new(o),
        );
    }

    // ---------------------------------------------------------------- v1alpha5 Provisioner

    fn provisioner(
        &mut self,
        o: &Object,
        p: &v1alpha5::Provisioner,
        raw: Option<&Value>,
    ) -> Result<(), InputError> {
        let mut notes = Notes::new(o);
        let name = p.metadata.name.clone().unwrap_or_default();
        let spec = p.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.sh/v1alpha5 Provisioner",
        );
        let metadata = clean_metadata(&p.metadata, &mut notes);

        let (class_name, inline) = match (&spec.provider_ref, &spec.provider) {
            (Some(r), _) => (r.name.clone().unwrap_or_default(), None),
            (None, Some(provider)) => (name.clone(), Some(provider)),
            (None, None) => {
                return Err(InputError::Invalid {
                    at: o.location.clone(),
                    object: o.name.clone(),
                    field: "spec.providerRef".into(),
                    message: "required to convert: a v1 NodePool must reference an EC2NodeClass, and this Provisioner has neither providerRef nor provider".into(),
                })
            }
        };

        // Requirements, with the AWS webhook's defaults made explicit.
        let mut requirements = spec.requirements.clone().unwrap_or_default();
        let added = webhook_defaults(&requirements, spec.labels.as_ref());
        if !added.is_empty() {
            let listed: Vec<String> = added.iter().map(describe_requirement).collect();
            let mut widen: Vec<&str> = Vec::new();
            for r in &added {
                match r.key.as_deref().unwrap_or_default() {
                    labels::OS => widen.push("any operating system"),
                    labels::ARCH => widen.push("any architecture"),
                    labels::CAPACITY_TYPE => widen.push("spot as well as on-demand capacity"),
                    labels::INSTANCE_CATEGORY => {
                        widen.push("every instance category and generation")
                    }
                    _ => {}
                }
            }
            notes.add(
                "spec.requirements",
                format!(
                    "added the v1alpha5 {} {} explicitly: a v1 NodePool has no requirement defaults, so without {} it would launch {}",
                    if listed.len() == 1 { "default" } else { "defaults" },
                    listed.join(", "),
                    if listed.len() == 1 { "it" } else { "them" },
                    join_and(&widen)
                ),
            );
        }
        requirements.extend(added);

        // Disruption: consolidation, emptiness, budgets.
        let consolidation = spec
            .consolidation
            .as_ref()
            .and_then(|c| c.enabled)
            .unwrap_or(false);
        let (policy, after) = if consolidation {
            ("WhenEmptyOrUnderutilized", "0s".to_string())
        } else if let Some(n) = spec.ttl_seconds_after_empty {
            ("WhenEmpty", format!("{n}s"))
        } else {
            notes.add(
                "spec.ttlSecondsAfterEmpty",
                "absent and consolidation is off: wrote spec.disruption.consolidateAfter: Never, because v1alpha5 never removed empty or underutilized nodes, and a v1 NodePool removes both by default (WhenEmptyOrUnderutilized after 0s)",
            );
            ("WhenEmpty", "Never".to_string())
        };
        notes.add(
            "spec.disruption.budgets",
            "v1alpha5 had no disruption budgets; v1 applies its default (nodes: 10%), so at most 10% of this pool's nodes are disrupted at a time for emptiness, consolidation or drift; add budgets to choose another pace",
        );

        // Expiry.
        let expire_after = match spec.ttl_seconds_until_expired {
            Some(n) => {
                notes.add(
                    "spec.ttlSecondsUntilExpired",
                    format!(
                        "became spec.template.spec.expireAfter: {n}s; {}",
                        forceful_expiry("v1alpha5")
                    ),
                );
                format!("{n}s")
            }
            None => {
                notes.add(
                    "spec.ttlSecondsUntilExpired",
                    "absent: wrote spec.template.spec.expireAfter: Never, because v1alpha5 never expired nodes and v1 defaults to 720h",
                );
                "Never".to_string()
            }
        };

        let kubelet = spec
            .kubelet_configuration
            .clone()
            .and_then(|k| strip_runtime(k, "spec.kubeletConfiguration", &mut notes));

        if inline.is_some() {
            notes.add(
                "spec.provider",
                format!(
                    "became EC2NodeClass/{name} (the next document): v1 has no inline provider"
                ),
            );
        }

        let labels_ = spec.labels.clone().filter(|m| !m.is_empty());
        let annotations = spec.annotations.clone().filter(|m| !m.is_empty());
        let template_metadata =
            (labels_.is_some() || annotations.is_some()).then_some(TemplateMetadata {
                labels: labels_,
                annotations,
            });
        let pool = v1::NodePool {
            api_version: Some(NODEPOOL_API_VERSION.into()),
            kind: Some("NodePool".into()),
            metadata,
            spec: Some(v1::NodePoolSpec {
                template: Some(v1::NodeClaimTemplate {
                    metadata: template_metadata,
                    spec: Some(v1::NodeClaimSpec {
                        taints: spec.taints.clone().filter(|t| !t.is_empty()),
                        startup_taints: spec.startup_taints.clone().filter(|t| !t.is_empty()),
                        requirements: Some(requirements),
                        resources: None,
                        node_class_ref: Some(ec2_node_class_ref(AWS_GROUP, &class_name)),
                        expire_after: Some(expire_after),
                        termination_grace_period: None,
                    }),
                }),
                disruption: Some(v1::DisruptionSpec {
                    consolidation_policy: Some(policy.into()),
                    consolidate_after: Some(after),
                    budgets: None,
                }),
                limits: spec
                    .limits
                    .as_ref()
                    .and_then(|l| l.resources.clone())
                    .filter(|l| !l.is_empty()),
                weight: spec.weight,
                replicas: None,
            }),
            status: None,
        };
        let origin = format!("karpenter.sh/v1alpha5 {}", o.name);
        let pool_out = self.push(
            o,
            "NodePool",
            name.clone(),
            origin.clone(),
            Body::Pool(Box::new(pool)),
            notes,
        );
        self.kubelets
            .entry(class_name.clone())
            .or_default()
            .push(KubeletUse {
                out: pool_out,
                field: "spec.kubeletConfiguration",
                kubelet,
            });
        if let Some(provider) = inline {
            let mut class_notes = Notes::new(o);
            let metadata = ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            };
            let class =
                self.class_from_provider(&mut class_notes, "spec.provider", provider, metadata);
            self.push(
                o,
                "EC2NodeClass",
                name,
                format!("{origin} spec.provider"),
                Body::Class(Box::new(class)),
                class_notes,
            );
        } else {
            self.refs
                .push((pool_out, class_name, "spec.providerRef".into()));
        }
        Ok(())
    }

    // ------------------------------------------------------------ v1alpha1 AWSNodeTemplate

    fn aws_node_template(
        &mut self,
        o: &Object,
        t: &v1alpha5::AwsNodeTemplate,
        raw: Option<&Value>,
    ) {
        let mut notes = Notes::new(o);
        let spec = t.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.k8s.aws/v1alpha1 AWSNodeTemplate",
        );
        let metadata = clean_metadata(&t.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let class = self.class_from_provider(&mut notes, "spec", &spec, metadata);
        self.push(
            o,
            "EC2NodeClass",
            name,
            format!("karpenter.k8s.aws/v1alpha1 {}", o.name),
            Body::Class(Box::new(class)),
            notes,
        );
    }

    /// An AWSNodeTemplate's spec or a Provisioner's inline provider → a v1 EC2NodeClass.
    fn class_from_provider(
        &self,
        notes: &mut Notes,
        path: &str,
        p: &AwsProvider,
        metadata: ObjectMeta,
    ) -> v1::Ec2NodeClass {
        let at = |field: &str| format!("{path}.{field}");
        let family = p.ami_family.clone().unwrap_or_else(|| "AL2".into());
        let mut spec = v1::Ec2NodeClassSpec::default();

        if let Some(lt) = &p.launch_template {
            notes.add(
                at("launchTemplate"),
                format!("dropped: v1 cannot launch from a launch template ({lt:?}); move its settings (AMI, security groups, user data, block devices, metadata options, instance profile) into this EC2NodeClass"),
            );
        }

        // AMIs.
        let selector = p.ami_selector.as_ref().filter(|s| !s.is_empty());
        let mut block_devices = p.block_device_mappings.clone().filter(|b| !b.is_empty());
        match (family.as_str(), selector) {
            ("Ubuntu", selector) => {
                let terms = selector.map(|s| legacy_ami_terms(notes, &at("amiSelector"), s));
                let (terms, devices) = self.ubuntu(
                    notes,
                    &at("amiFamily"),
                    "v1alpha5",
                    terms,
                    block_devices.is_some(),
                );
                spec.ami_family = Some("AL2".into());
                spec.ami_selector_terms = Some(terms);
                if devices.is_some() {
                    block_devices = devices;
                }
            }
            (_, Some(sel)) => {
                spec.ami_family = Some(family.clone());
                spec.ami_selector_terms = Some(legacy_ami_terms(notes, &at("amiSelector"), sel));
            }
            ("Custom", None) => {
                // Only reachable with a launch template (the loader insists on a selector).
                spec.ami_family = Some(family.clone());
                spec.ami_selector_terms = Some(vec![AmiSelectorTermSpec {
                    id: Some(AMI_ID_PLACEHOLDER.into()),
                    ..AmiSelectorTermSpec::default()
                }]);
                notes.add(
                    at("amiSelector"),
                    format!("absent (the launch template chose the AMI): v1 requires amiSelectorTerms; wrote the placeholder {AMI_ID_PLACEHOLDER}: replace it with the launch template's AMI"),
                );
            }
            (family, None) => {
                spec.ami_selector_terms =
                    Some(alias_terms(notes, &at("amiSelector"), family, "v1alpha5"));
            }
        }
        if family == "Custom" {
            custom_family_note(notes, &at("amiFamily"));
        }

        spec.subnet_selector_terms = Some(legacy_terms(
            notes,
            &at("subnetSelector"),
            p.subnet_selector.as_ref(),
            "subnets",
        ));
        spec.security_group_selector_terms = Some(legacy_terms(
            notes,
            &at("securityGroupSelector"),
            p.security_group_selector.as_ref(),
            "security groups",
        ));

        match p.instance_profile.as_deref() {
            Some(profile) if !profile.is_empty() => spec.instance_profile = Some(profile.into()),
            _ => {
                spec.instance_profile = Some(INSTANCE_PROFILE_PLACEHOLDER.into());
                notes.add(
                    at("instanceProfile"),
                    format!("absent: v1 needs role or instanceProfile, and v1alpha5 fell back to aws.defaultInstanceProfile in the karpenter-global-settings ConfigMap; wrote the placeholder {INSTANCE_PROFILE_PLACEHOLDER}: replace it with that setting's value (or use role: <node IAM role name> instead)"),
                );
            }
        }

        spec.tags = carry_tags(notes, &at("tags"), p.tags.as_ref());
        spec.user_data = p.user_data.clone();
        spec.block_device_mappings = block_devices;
        spec.detailed_monitoring = p.detailed_monitoring;
        spec.context = p.context.clone();
        spec.metadata_options = Some(match &p.metadata_options {
            None => {
                notes.add(
                    at("metadataOptions"),
                    "absent: wrote v1alpha5's effective default {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required} explicitly, because v1 defaults the hop limit to 1, which keeps pods off the host network from reaching IMDS (on an IPv6 cluster Karpenter enabled httpProtocolIPv6: set it if so)",
                );
                default_metadata_options()
            }
            Some(serde_json::Value::Object(m)) => {
                let mut m = m.clone();
                if !m.contains_key("httpTokens") {
                    m.insert("httpTokens".into(), json!("optional"));
                    notes.add(
                        at("metadataOptions.httpTokens"),
                        "unset: wrote optional, v1alpha1's default when metadataOptions is given (v1 would default it to required, i.e. IMDSv2 only); change it to required once nothing on these nodes uses IMDSv1",
                    );
                }
                serde_json::Value::Object(m)
            }
            Some(other) => other.clone(),
        });

        v1::Ec2NodeClass {
            api_version: Some(NODECLASS_API_VERSION.into()),
            kind: Some("EC2NodeClass".into()),
            metadata,
            spec: Some(spec),
            status: None,
        }
    }

    /// Ubuntu (no v1 family, no alias): AL2 — the same userData format, as Karpenter's own
    /// v1 conversion webhook does — with the AMI terms given, or else the SSM parameters the
    /// Ubuntu family resolved; plus the Ubuntu root volume when no block devices were given.
    fn ubuntu(
        &self,
        notes: &mut Notes,
        field: &str,
        generation: &str,
        terms: Option<Vec<AmiSelectorTermSpec>>,
        has_block_devices: bool,
    ) -> (
        Vec<AmiSelectorTermSpec>,
        Option<Vec<BlockDeviceMappingSpec>>,
    ) {
        let devices = (!has_block_devices).then(|| {
            vec![BlockDeviceMappingSpec {
                device_name: Some("/dev/sda1".into()),
                root_volume: Some(true),
                ebs: Some(EbsSpec {
                    encrypted: Some(true),
                    volume_type: Some("gp3".into()),
                    volume_size: Some(IntOrString::String("20Gi".into())),
                    ..EbsSpec::default()
                }),
            }]
        });
        let root = if has_block_devices {
            ""
        } else {
            ", plus the Ubuntu family's default root volume (/dev/sda1, 20Gi gp3, encrypted), since AL2's default is /dev/xvda"
        };
        let base = format!("Ubuntu is not supported in v1: wrote amiFamily AL2, whose userData format Ubuntu's EKS AMIs share (Karpenter's own v1 conversion does the same){root}");
        match terms {
            Some(t) if !t.is_empty() => {
                notes.add(field, format!("{base}; the AMI selector is kept"));
                (t, devices)
            }
            _ => {
                let version = self
                    .options
                    .kubernetes_version
                    .clone()
                    .unwrap_or_else(|| KUBERNETES_VERSION_PLACEHOLDER.to_string());
                let terms: Vec<AmiSelectorTermSpec> = ["amd64", "arm64"]
                    .iter()
                    .map(|arch| AmiSelectorTermSpec {
                        ssm_parameter: Some(format!(
                            "/aws/service/canonical/ubuntu/eks/20.04/{version}/stable/current/{arch}/hvm/ebs-gp2/ami-id"
                        )),
                        ..AmiSelectorTermSpec::default()
                    })
                    .collect();
                let placeholder = if self.options.kubernetes_version.is_some() {
                    String::new()
                } else {
                    format!("; replace {KUBERNETES_VERSION_PLACEHOLDER} with the cluster's Kubernetes version (or pass --kubernetes-version)")
                };
                notes.add(
                    field,
                    format!("{base}; Ubuntu has no v1 alias, so the AMIs are the ssmParameter terms for the Ubuntu 20.04 EKS AMIs {generation} resolved (amd64 and arm64), which need a v1 release with ssmParameter support{placeholder}"),
                );
                (terms, devices)
            }
        }
    }

    // --------------------------------------------------------------------- v1beta1 NodePool

    fn node_pool_v1beta1(&mut self, o: &Object, p: &v1beta1::NodePool, raw: Option<&Value>) {
        let mut notes = Notes::new(o);
        let spec = p.spec.clone().unwrap_or_default();
        unknown_fields(&mut notes, raw, &spec, "a karpenter.sh/v1beta1 NodePool");
        let metadata = clean_metadata(&p.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let template = spec.template.clone().unwrap_or_default();
        let tspec = template.spec.clone().unwrap_or_default();

        let r = tspec.node_class_ref.clone().unwrap_or_default();
        let group = r
            .group
            .as_deref()
            .filter(|g| !g.is_empty())
            .or(r.api_version.as_deref().filter(|v| !v.is_empty()))
            .map_or(AWS_GROUP, group_of)
            .to_string();
        let class_name = r.name.clone().unwrap_or_default();
        let kind = r
            .kind
            .clone()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "EC2NodeClass".into());

        let kubelet = tspec
            .kubelet
            .clone()
            .and_then(|k| strip_runtime(k, "spec.template.spec.kubelet", &mut notes));
        if tspec.resources.is_some() {
            notes.add(
                "spec.template.spec.resources",
                "dropped: v1 NodePool templates have no resources (v1beta1 ignored them on NodePools)",
            );
        }

        let d = spec.disruption.clone().unwrap_or_default();
        let (policy, after) = match d.consolidation_policy.as_deref() {
            Some("WhenEmpty") => ("WhenEmpty", d.consolidate_after.clone()),
            // WhenUnderutilized (also the v1beta1 default) consolidated right away.
            _ => (
                "WhenEmptyOrUnderutilized",
                Some(d.consolidate_after.clone().unwrap_or_else(|| "0s".into())),
            ),
        };
        let expire_after = d.expire_after.clone().unwrap_or_else(|| "720h".into());
        if expire_after != "Never" {
            let default = if d.expire_after.is_none() {
                " (v1beta1's default, written out)"
            } else {
                ""
            };
            notes.add(
                "spec.disruption.expireAfter",
                format!(
                    "became spec.template.spec.expireAfter: {expire_after}{default}; {}",
                    forceful_expiry("v1beta1")
                ),
            );
        }

        let pool = v1::NodePool {
            api_version: Some(NODEPOOL_API_VERSION.into()),
            kind: Some("NodePool".into()),
            metadata,
            spec: Some(v1::NodePoolSpec {
                template: Some(v1::NodeClaimTemplate {
                    metadata: template.metadata.clone(),
                    spec: Some(v1::NodeClaimSpec {
                        taints: tspec.taints.clone(),
                        startup_taints: tspec.startup_taints.clone(),
                        requirements: Some(tspec.requirements.clone().unwrap_or_default()),
                        resources: None,
                        node_class_ref: Some(NodeClassRefSpec {
                            api_version: None,
                            group: Some(group),
                            kind: Some(kind),
                            name: Some(class_name.clone()),
                        }),
                        expire_after: Some(expire_after),
                        termination_grace_period: None,
                    }),
                }),
                disruption: Some(v1::DisruptionSpec {
                    consolidation_policy: Some(policy.into()),
                    consolidate_after: after,
                    budgets: d.budgets.clone(),
                }),
                limits: spec.limits.clone(),
                weight: spec.weight,
                replicas: None,
            }),
            status: None,
        };
        let out = self.push(
            o,
            "NodePool",
            name,
            format!("karpenter.sh/v1beta1 {}", o.name),
            Body::Pool(Box::new(pool)),
            notes,
        );
        self.kubelets
            .entry(class_name.clone())
            .or_default()
            .push(KubeletUse {
                out,
                field: "spec.template.spec.kubelet",
                kubelet,
            });
        self.refs
            .push((out, class_name, "spec.template.spec.nodeClassRef".into()));
    }

    // ----------------------------------------------------------------- v1beta1 EC2NodeClass

    fn node_class_v1beta1(&mut self, o: &Object, c: &v1beta1::Ec2NodeClass, raw: Option<&Value>) {
        let mut notes = Notes::new(o);
        let spec = c.spec.clone().unwrap_or_default();
        unknown_fields(
            &mut notes,
            raw,
            &spec,
            "a karpenter.k8s.aws/v1beta1 EC2NodeClass",
        );
        let metadata = clean_metadata(&c.metadata, &mut notes);
        let name = metadata.name.clone().unwrap_or_default();
        let family = spec.ami_family.clone().unwrap_or_default();
        let terms = spec.ami_selector_terms.clone().filter(|t| !t.is_empty());

        let mut out = v1::Ec2NodeClassSpec {
            subnet_selector_terms: spec.subnet_selector_terms.clone(),
            security_group_selector_terms: spec.security_group_selector_terms.clone(),
            user_data: spec.user_data.clone(),
            role: spec.role.clone(),
            instance_profile: spec.instance_profile.clone(),
            tags: carry_tags(&mut notes, "spec.tags", spec.tags.as_ref()),
            block_device_mappings: spec.block_device_mappings.clone(),
            instance_store_policy: spec.instance_store_policy.clone(),
            detailed_monitoring: spec.detailed_monitoring,
            associate_public_ip_address: spec.associate_public_ip_address,
            context: spec.context.clone(),
            ..v1::Ec2NodeClassSpec::default()
        };
        match (family.as_str(), terms) {
            ("Ubuntu", terms) => {
                let has_devices = spec
                    .block_device_mappings
                    .as_ref()
                    .is_some_and(|b| !b.is_empty());
                let (terms, devices) =
                    self.ubuntu(&mut notes, "spec.amiFamily", "v1beta1", terms, has_devices);
                out.ami_family = Some("AL2".into());
                out.ami_selector_terms = Some(terms);
                if devices.is_some() {
                    out.block_device_mappings = devices;
                }
            }
            (_, Some(t)) => {
                out.ami_family = Some(family.clone());
                out.ami_selector_terms = Some(t);
            }
            (family, None) => {
                out.ami_selector_terms = Some(alias_terms(
                    &mut notes,
                    "spec.amiSelectorTerms",
                    family,
                    "v1beta1",
                ));
            }
        }
        if family == "Custom" {
            custom_family_note(&mut notes, "spec.amiFamily");
        }

        // v1beta1 defaulted each field (hop limit 2); v1 defaults the hop limit to 1.
        out.metadata_options = Some(match &spec.metadata_options {
            None => {
                notes.add(
                    "spec.metadataOptions",
                    "absent: wrote v1beta1's default {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required} explicitly, because v1 defaults the hop limit to 1, which keeps pods off the host network from reaching IMDS",
                );
                default_metadata_options()
            }
            Some(serde_json::Value::Object(m)) => {
                let mut m = m.clone();
                if !m.contains_key("httpPutResponseHopLimit") {
                    m.insert("httpPutResponseHopLimit".into(), json!(2));
                    notes.add(
                        "spec.metadataOptions.httpPutResponseHopLimit",
                        "unset: wrote 2, v1beta1's default, because v1 defaults it to 1, which keeps pods off the host network from reaching IMDS",
                    );
                }
                serde_json::Value::Object(m)
            }
            Some(other) => other.clone(),
        });

        let class = v1::Ec2NodeClass {
            api_version: Some(NODECLASS_API_VERSION.into()),
            kind: Some("EC2NodeClass".into()),
            metadata,
            spec: Some(out),
            status: None,
        };
        self.push(
            o,
            "EC2NodeClass",
            name,
            format!("karpenter.k8s.aws/v1beta1 {}", o.name),
            Body::Class(Box::new(class)),
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
                Body::Pool(p) => (serde_yaml::to_value(&p).unwrap_or(Value::Null), false),
                Body::Class(c) => (serde_yaml::to_value(&c).unwrap_or(Value::Null), false),
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

    /// v1 keeps kubelet settings on the EC2NodeClass: the first NodePool's settings go onto
    /// the class; every NodePool whose settings differ is told so.
    fn place_kubelet(&mut self, class: &str, uses: &[KubeletUse], class_out: Option<usize>) {
        let Some((first, chosen)) = uses
            .iter()
            .find_map(|u| u.kubelet.as_ref().map(|k| (u, k.clone())))
        else {
            return;
        };
        let json = |k: &KubeletConfiguration| serde_json::to_string(k).unwrap_or_default();
        let first_object = self.outs[first.out].object.clone();
        match class_out.map(|i| &mut self.outs[i].body) {
            Some(Body::Class(c)) => {
                if let Some(spec) = c.spec.as_mut() {
                    spec.kubelet = Some(chosen.clone());
                }
                let target = class_out.unwrap_or_default();
                self.outs[target].comments.push(format!(
                    "spec.kubelet: moved here from {first_object} {} (see the note on its NodePool)",
                    first.field
                ));
                for u in uses {
                    let message = match &u.kubelet {
                        Some(k) if *k == chosen => format!(
                            "moved to EC2NodeClass/{class} spec.kubelet: v1 keeps kubelet settings on the node class"
                        ),
                        Some(k) => format!(
                            "not carried over: EC2NodeClass/{class} now holds {first_object}'s kubelet settings and v1 allows one set per node class; give this NodePool its own copy of the EC2NodeClass with spec.kubelet: {}",
                            json(k)
                        ),
                        None => format!(
                            "absent, but EC2NodeClass/{class} now holds {first_object}'s kubelet settings ({}), which v1 applies to every NodePool using it; give this NodePool its own copy of the EC2NodeClass without them to keep the kubelet defaults",
                            json(&chosen)
                        ),
                    };
                    self.note_on(u.out, u.field, message);
                }
            }
            Some(_) => {
                for u in uses {
                    if let Some(k) = &u.kubelet {
                        self.note_on(
                            u.out,
                            u.field,
                            format!("not carried over: v1 keeps kubelet settings on the node class, and EC2NodeClass/{class} is already v1 and passed through unchanged; add spec.kubelet: {} to it", json(k)),
                        );
                    }
                }
            }
            None => {
                for u in uses {
                    if let Some(k) = &u.kubelet {
                        self.note_on(
                            u.out,
                            u.field,
                            format!("not carried over: v1 keeps kubelet settings on the node class, and EC2NodeClass/{class} is not in the input; add spec.kubelet: {} to it when you convert it", json(k)),
                        );
                    }
                }
            }
        }
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

// ------------------------------------------------------------------------------- helpers

fn ec2_node_class_ref(group: &str, name: &str) -> NodeClassRefSpec {
    NodeClassRefSpec {
        api_version: None,
        group: Some(group.to_string()),
        kind: Some("EC2NodeClass".into()),
        name: Some(name.to_string()),
    }
}

fn forceful_expiry(generation: &str) -> String {
    format!("v1 expiry is forceful: an expired node is drained and deleted right away, with no replacement launched first and no disruption budget, where {generation} replaced expired nodes gracefully")
}

fn custom_family_note(notes: &mut Notes, field: &str) {
    notes.add(
        field,
        "Custom: v1 expects nodes to register with the karpenter.sh/unregistered:NoExecute taint (Karpenter removes it once the node is initialized); your userData must add it, e.g. kubelet --register-with-taints=karpenter.sh/unregistered:NoExecute",
    );
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The object's metadata as a manifest keeps it: name, labels, annotations minus the ones
/// Karpenter and kubectl write (noted).
fn clean_metadata(m: &ObjectMeta, notes: &mut Notes) -> ObjectMeta {
    let mut dropped = Vec::new();
    let annotations: Option<StringMap> = m.annotations.as_ref().map(|a| {
        a.iter()
            .filter(|(k, _)| {
                let managed = MANAGED_ANNOTATIONS.contains(&k.as_str())
                    || MANAGED_ANNOTATION_PREFIXES.iter().any(|p| k.starts_with(p));
                if managed {
                    dropped.push(k.to_string());
                }
                !managed
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    });
    if !dropped.is_empty() {
        notes.add(
            "metadata.annotations",
            format!(
                "dropped {}: Karpenter and kubectl write them on stored objects and recompute them for v1",
                dropped.join(", ")
            ),
        );
    }
    ObjectMeta {
        name: m.name.clone(),
        labels: m.labels.clone().filter(|l| !l.is_empty()),
        annotations: annotations.filter(|a| !a.is_empty()),
        ..ObjectMeta::default()
    }
}

/// Kubelet settings without `containerRuntime` (v1 has none); `None` when nothing is left.
fn strip_runtime(
    mut k: KubeletConfiguration,
    field: &str,
    notes: &mut Notes,
) -> Option<KubeletConfiguration> {
    if let Some(runtime) = k.container_runtime.take() {
        notes.add(
            format!("{field}.containerRuntime"),
            format!("dropped ({runtime:?}): v1 has no containerRuntime, Karpenter v1 nodes run containerd"),
        );
    }
    (k != KubeletConfiguration::default()).then_some(k)
}

/// `key In [a, b]`, `key Gt 2`.
fn describe_requirement(r: &RequirementSpec) -> String {
    let key = r.key.as_deref().unwrap_or_default();
    let op = r.operator.as_deref().unwrap_or_default();
    let values = r.values.clone().unwrap_or_default();
    match op {
        "Gt" | "Lt" | "Gte" | "Lte" => format!("{key} {op} {}", values.join(",")),
        "Exists" | "DoesNotExist" => format!("{key} {op}"),
        _ => format!("{key} {op} [{}]", values.join(", ")),
    }
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> RequirementSpec {
    RequirementSpec {
        key: Some(key.to_string()),
        operator: Some(operator.to_string()),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
        min_values: None,
    }
}

/// The AWS webhook's Provisioner defaults that `reqs` and `labels_` leave open
/// (`aws v0.27.6: pkg/apis/v1alpha5/provisioner.go SetDefaults`, KARPENTER.md §1.1).
fn webhook_defaults(reqs: &[RequirementSpec], labels_: Option<&StringMap>) -> Vec<RequirementSpec> {
    let constrained = |key: &str| {
        reqs.iter().any(|r| {
            r.key
                .as_deref()
                .is_some_and(|k| labels::normalize_key(k) == key)
        }) || labels_.is_some_and(|l| l.keys().any(|k| labels::normalize_key(k) == key))
    };
    let mut out = Vec::new();
    for (key, value) in [
        (labels::OS, "linux"),
        (labels::ARCH, "amd64"),
        (labels::CAPACITY_TYPE, "on-demand"),
    ] {
        if !constrained(key) {
            out.push(requirement(key, "In", &[value]));
        }
    }
    let shape = [
        labels::INSTANCE_TYPE,
        labels::INSTANCE_FAMILY,
        labels::INSTANCE_CATEGORY,
        labels::INSTANCE_GENERATION,
    ];
    if !shape.iter().any(|k| constrained(k)) {
        out.push(requirement(
            labels::INSTANCE_CATEGORY,
            "In",
            &["c", "m", "r"],
        ));
        out.push(requirement(labels::INSTANCE_GENERATION, "Gt", &["2"]));
    }
    out
}

/// `{alias: <family>@latest}` for a generation that resolved the family's latest AMI by
/// default.
fn alias_terms(
    notes: &mut Notes,
    field: &str,
    family: &str,
    generation: &str,
) -> Vec<AmiSelectorTermSpec> {
    let alias_family = family.to_ascii_lowercase();
    let alias = format!("{alias_family}@latest");
    let pin = match alias_family.as_str() {
        "al2" | "al2023" => format!(
            "; pin a version (e.g. {alias_family}@v20240625) to stop automatic AMI upgrades"
        ),
        "bottlerocket" => {
            "; pin a version (e.g. bottlerocket@v1.20.0) to stop automatic AMI upgrades".to_string()
        }
        _ => String::new(),
    };
    let al2 = if alias_family == "al2" {
        "; al2 aliases stop resolving from Kubernetes 1.33 (AL2 is end of life): plan a move to al2023"
    } else {
        ""
    };
    notes.add(
        field,
        format!("absent: wrote amiSelectorTerms [{{alias: {alias}}}], which resolves the same EKS-optimized SSM parameters {generation} used for {family}, so nodes keep getting the latest AMI for the cluster's Kubernetes version{pin}{al2}"),
    );
    vec![AmiSelectorTermSpec {
        alias: Some(alias),
        ..AmiSelectorTermSpec::default()
    }]
}

/// Restricted tags dropped (noted).
fn carry_tags(notes: &mut Notes, field: &str, tags: Option<&StringMap>) -> Option<StringMap> {
    let tags = tags?;
    let mut dropped = Vec::new();
    let kept: StringMap = tags
        .iter()
        .filter(|(k, _)| {
            let restricted =
                k.starts_with("kubernetes.io/cluster") || V1_RESTRICTED_TAGS.contains(&k.as_str());
            if restricted {
                dropped.push(k.to_string());
            }
            !restricted
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !dropped.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: Karpenter v1 sets these tags itself and its CRD rejects them",
                dropped.join(", ")
            ),
        );
    }
    (!kept.is_empty()).then_some(kept)
}

fn default_metadata_options() -> serde_json::Value {
    json!({
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 2,
        "httpTokens": "required",
    })
}

/// v1alpha1 ORed the comma-separated values of each tag (`tag:k=[a, b]`) and ANDed the tags;
/// v1 takes a tag value literally and ORs terms. So each combination of values becomes one
/// term (usually one tag holds a list and this is one term per value).
fn tag_combinations(notes: &mut Notes, field: &str, tags: &StringMap) -> Vec<StringMap> {
    let mut sets = vec![StringMap::new()];
    let mut split = Vec::new();
    let mut wildcards = Vec::new();
    for (k, v) in tags {
        let mut values = if v.trim() == "*" {
            vec!["*".to_string()]
        } else {
            split_list(v)
        };
        if values.is_empty() {
            // An empty value: v1 rejects it; `*` ("the tag exists") is the closest.
            wildcards.push(k.clone());
            values = vec!["*".to_string()];
        }
        if values.len() > 1 {
            split.push(k.clone());
        }
        sets = sets
            .into_iter()
            .flat_map(|s| {
                values.iter().map(move |value| {
                    let mut s = s.clone();
                    s.insert(k.clone(), value.clone());
                    s
                })
            })
            .collect();
    }
    if !wildcards.is_empty() {
        notes.add(
            field,
            format!(
                "empty values of {} became *: v1 rejects empty tag values and * selects any value",
                wildcards.join(", ")
            ),
        );
    }
    match split.as_slice() {
        [] => {}
        [one] => notes.add(
            key_path(field, one),
            format!(
                "{:?} became one term per value: v1 does not split tag values at commas",
                tags[one]
            ),
        ),
        many => notes.add(
            field,
            format!(
                "tags {} each hold a comma-separated list: wrote one term per combination ({} terms, the cross product), because v1 does not split tag values at commas",
                many.join(", "),
                sets.len()
            ),
        ),
    }
    if sets.len() > MAX_TERMS {
        notes.add(
            field,
            format!(
                "became {} terms, more than the {MAX_TERMS} v1 accepts: narrow the selector",
                sets.len()
            ),
        );
    }
    sets
}

/// The ids of a v1alpha1 selector that uses `aws-ids`/`aws::ids`, which must stand alone: any
/// other key next to it is dropped, with a note.
fn id_list(notes: &mut Notes, field: &str, sel: &StringMap, what: &str) -> Option<Vec<String>> {
    let (key, ids) = sel.iter().find(|(k, _)| is_ids_key(k))?;
    let others: Vec<&str> = sel
        .keys()
        .filter(|k| *k != key)
        .map(String::as_str)
        .collect();
    if !others.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: {key} selects {what} by ID alone",
                others.join(", ")
            ),
        );
    }
    Some(split_list(ids))
}

/// A v1alpha1 `amiSelector` map → v1 terms (KARPENTER.md §1.2, §3.3).
fn legacy_ami_terms(notes: &mut Notes, field: &str, sel: &StringMap) -> Vec<AmiSelectorTermSpec> {
    if let Some(ids) = id_list(notes, field, sel, "AMIs") {
        return ids
            .into_iter()
            .map(|id| AmiSelectorTermSpec {
                id: Some(id),
                ..AmiSelectorTermSpec::default()
            })
            .collect();
    }
    let unknown: Vec<&str> = sel
        .keys()
        .filter(|k| k.starts_with("aws::") && !matches!(k.as_str(), "aws::name" | "aws::owners"))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: not an amiSelector key v1alpha1 knew (aws::ids, aws::name, aws::owners)",
                unknown.join(", ")
            ),
        );
    }
    let mut name = sel.get("aws::name").cloned();
    let tags: StringMap = sel
        .iter()
        .filter(|(k, _)| !k.starts_with("aws::"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let owners: Vec<Option<String>> = match sel.get("aws::owners").map(|o| split_list(o)) {
        Some(o) if !o.is_empty() => o.into_iter().map(Some).collect(),
        // v1 defaults the owners of a term with a name to self and amazon, as v1alpha1 did.
        _ if name.is_some() => vec![None],
        _ => {
            notes.add(
                field,
                "no aws::owners: wrote one term per v1alpha1 default owner (self, amazon), because a v1 term without a name matches images of any owner",
            );
            vec![Some("self".into()), Some("amazon".into())]
        }
    };
    if name.is_none() && tags.is_empty() {
        // v1 needs tags, a name, an id or an alias in each term: name `*` matches any name.
        name = Some("*".into());
        notes.add(
            field,
            "only aws::owners: wrote name: * in each term, because a v1 term needs a name, tags or an id",
        );
    }
    let tag_sets = tag_combinations(notes, field, &tags);
    let mut terms = Vec::new();
    for owner in &owners {
        for t in &tag_sets {
            terms.push(AmiSelectorTermSpec {
                name: name.clone(),
                owner: owner.clone(),
                tags: (!t.is_empty()).then(|| t.clone()),
                ..AmiSelectorTermSpec::default()
            });
        }
    }
    terms
}

/// A v1alpha1 `subnetSelector`/`securityGroupSelector` map → v1 terms; a placeholder when
/// there is none (v1 requires terms, v1alpha1 did not with a launch template).
fn legacy_terms(
    notes: &mut Notes,
    field: &str,
    sel: Option<&StringMap>,
    what: &str,
) -> Vec<SelectorTermSpec> {
    let Some(sel) = sel.filter(|s| !s.is_empty()) else {
        notes.add(
            field,
            format!("absent: v1 requires terms selecting {what}; wrote the placeholder {{tags: {{karpenter.sh/discovery: {CLUSTER_NAME_PLACEHOLDER}}}}}: replace it with the {what} the nodes should use"),
        );
        let mut tags = StringMap::new();
        tags.insert(
            "karpenter.sh/discovery".into(),
            CLUSTER_NAME_PLACEHOLDER.into(),
        );
        return vec![SelectorTermSpec {
            tags: Some(tags),
            ..SelectorTermSpec::default()
        }];
    };
    if let Some(ids) = id_list(notes, field, sel, what) {
        return ids
            .into_iter()
            .map(|id| SelectorTermSpec {
                id: Some(id),
                ..SelectorTermSpec::default()
            })
            .collect();
    }
    tag_combinations(notes, field, sel)
        .into_iter()
        .map(|tags| SelectorTermSpec {
            tags: Some(tags),
            ..SelectorTermSpec::default()
        })
        .collect()
}

/// Notes every field of the raw `spec` that the typed object did not keep (a field this tool
/// does not know, perhaps from a newer or patched release): it would otherwise vanish silently.
fn unknown_fields<T: Serialize>(notes: &mut Notes, raw: Option<&Value>, typed: &T, what: &str) {
    let Some(raw_spec) = raw.and_then(|r| r.get("spec")) else {
        return;
    };
    let Ok(typed) = serde_yaml::to_value(typed) else {
        return;
    };
    let mut missing = Vec::new();
    missing_keys(raw_spec, &typed, "spec", &mut missing);
    for path in missing {
        notes.add(
            path,
            format!(
                "dropped: not a field of {what} that this tool knows, so it was not carried over"
            ),
        );
    }
}

fn missing_keys(raw: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (raw, typed) {
        (Value::Mapping(r), Value::Mapping(t)) => {
            for (k, v) in r {
                if v.is_null() {
                    continue;
                }
                let name = match k {
                    Value::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                let sub = key_path(path, &name);
                match t.get(k) {
                    Some(tv) => missing_keys(v, tv, &sub, out),
                    None => out.push(sub),
                }
            }
        }
        (Value::Sequence(r), Value::Sequence(t)) => {
            for (i, (rv, tv)) in r.iter().zip(t).enumerate() {
                missing_keys(rv, tv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{load_paths, load_str};
    use crate::model::nodepool::NodePool as ModelPool;

    fn options() -> Options {
        Options::default()
    }

    fn conv(text: &str) -> Conversion {
        convert_str("t.yaml", text, &options()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn doc<'a>(c: &'a Conversion, kind: &str, name: &str) -> &'a Document {
        c.documents
            .iter()
            .find(|d| d.kind == kind && d.name == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} in {:#?}", c.documents))
    }

    /// `a.b[2].c[dotted.key]` → steps.
    fn steps(path: &str) -> Vec<Result<usize, String>> {
        let mut out = Vec::new();
        let mut rest = path;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').unwrap();
                let inner = &r[..end];
                out.push(inner.parse::<usize>().map_err(|_| inner.to_string()));
                rest = &r[end + 1..];
            } else {
                let rest2 = rest.strip_prefix('.').unwrap_or(rest);
                let end = rest2.find(['.', '[']).unwrap_or(rest2.len());
                out.push(Err(rest2[..end].to_string()));
                rest = &rest2[end..];
            }
        }
        out
    }

    fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
        let mut cur = v;
        for step in steps(path) {
            cur = match step {
                Ok(i) => cur.get(i)?,
                Err(k) => cur.get(k.as_str())?,
            };
        }
        Some(cur)
    }

    /// `a.b[2].c[dotted.key]` into a value.
    fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
        lookup(v, path).unwrap_or_else(|| panic!("no {path} in {v:#?}"))
    }

    fn text(v: &Value, path: &str) -> String {
        match at(v, path) {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => panic!("{path} is not a scalar: {other:?}"),
        }
    }

    fn has(v: &Value, path: &str) -> bool {
        lookup(v, path).is_some()
    }

    /// The note on `field` whose message contains `needle`.
    fn note<'a>(d: &'a Document, field: &str, needle: &str) -> &'a Note {
        d.notes
            .iter()
            .find(|n| n.field == field && n.message.contains(needle))
            .unwrap_or_else(|| panic!("no note {field}: …{needle}… in {:#?}", d.notes))
    }

    fn requirements(d: &Document) -> Vec<String> {
        at(&d.value, "spec.template.spec.requirements")
            .as_sequence()
            .unwrap()
            .iter()
            .map(|r| {
                let values: Vec<String> = r
                    .get("values")
                    .and_then(Value::as_sequence)
                    .map(|vs| vs.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                format!(
                    "{} {} {}",
                    text(r, "key"),
                    text(r, "operator"),
                    values.join(",")
                )
            })
            .collect()
    }

    fn yaml_files(dir: &str) -> Vec<String> {
        let dir = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().path().to_string_lossy().into_owned())
            .filter(|p| p.ends_with(".yaml"))
            .collect();
        files.sort();
        assert!(!files.is_empty());
        files
    }

    fn sorted_debug<T: fmt::Debug>(items: &[T]) -> Vec<String> {
        let mut v: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
        v.sort();
        v
    }

    /// The planning-relevant parts of a pool agree before and after conversion.
    fn assert_same_pool(file: &str, before: &ModelPool, after: &ModelPool) {
        let ctx = format!("{file}: NodePool/{}", before.name);
        assert_eq!(
            sorted_debug(&before.requirements),
            sorted_debug(&after.requirements),
            "{ctx}: requirements"
        );
        assert_eq!(before.labels, after.labels, "{ctx}: labels");
        assert_eq!(before.taints, after.taints, "{ctx}: taints");
        assert_eq!(before.startup_taints, after.startup_taints, "{ctx}");
        assert_eq!(before.limits, after.limits, "{ctx}: limits");
        assert_eq!(before.weight, after.weight, "{ctx}: weight");
        assert_eq!(
            before.expire_after, after.expire_after,
            "{ctx}: expireAfter"
        );
        let policy = match before.disruption.consolidation_policy.as_str() {
            "WhenUnderutilized" => "WhenEmptyOrUnderutilized",
            p => p,
        };
        assert_eq!(policy, after.disruption.consolidation_policy, "{ctx}");
        if policy == "WhenEmpty" {
            assert_eq!(
                before.disruption.consolidate_after, after.disruption.consolidate_after,
                "{ctx}"
            );
        }
        if before.generation != Some(crate::model::nodepool::ApiGeneration::V1Alpha5) {
            // v1alpha5 had no budgets; v1's default applies (noted).
            assert_eq!(
                before.disruption.budgets, after.disruption.budgets,
                "{ctx}: budgets"
            );
        }
        assert_eq!(
            before.node_class_ref.as_ref().map(|r| r.name.clone()),
            after.node_class_ref.as_ref().map(|r| r.name.clone()),
            "{ctx}: node class"
        );
    }

    #[test]
    fn every_example_converts_loads_back_and_keeps_what_planning_reads() {
        let mut count = 0;
        for dir in ["examples/v1alpha5", "examples/v1beta1"] {
            for file in yaml_files(dir) {
                let c = convert_paths(
                    std::slice::from_ref(&file),
                    &mut std::io::empty(),
                    &options(),
                )
                .unwrap_or_else(|e| panic!("{file}: {e}"));
                let yaml = c.to_yaml();
                let after = load_str("converted.yaml", &yaml).unwrap_or_else(|e| {
                    panic!("{file}: converted output does not load: {e}\n{yaml}")
                });
                after
                    .check_references()
                    .unwrap_or_else(|e| panic!("{file}: {e}\n{yaml}"));
                assert!(
                    after
                        .node_pools
                        .iter()
                        .all(|p| p.generation == Some(crate::model::nodepool::ApiGeneration::V1)),
                    "{file}"
                );
                assert!(
                    after.node_classes.iter().all(|c| c.kind == "EC2NodeClass"),
                    "{file}"
                );
                let before =
                    load_paths(std::slice::from_ref(&file), &mut std::io::empty()).unwrap();
                assert_eq!(before.node_pools.len(), after.node_pools.len(), "{file}");
                assert_eq!(
                    before.node_classes.len(),
                    after.node_classes.len(),
                    "{file}"
                );
                for pool in &before.node_pools {
                    let converted = after
                        .node_pools
                        .iter()
                        .find(|p| p.name == pool.name)
                        .unwrap_or_else(|| panic!("{file}: {} lost", pool.name));
                    assert_same_pool(&file, pool, converted);
                }
                for class in &before.node_classes {
                    let converted = after
                        .node_classes
                        .iter()
                        .find(|c| c.name == class.name)
                        .unwrap_or_else(|| panic!("{file}: {} lost", class.name));
                    let ctx = format!("{file}: {}/{}", class.kind, class.name);
                    assert_eq!(class.user_data, converted.user_data, "{ctx}");
                    assert_eq!(class.tags, converted.tags, "{ctx}");
                    assert_eq!(class.role, converted.role, "{ctx}");
                    assert_eq!(
                        class.subnet_selector_terms, converted.subnet_selector_terms,
                        "{ctx}"
                    );
                    assert_eq!(
                        class.security_group_selector_terms,
                        converted.security_group_selector_terms,
                        "{ctx}"
                    );
                    if class.ami_family.as_deref() == Some("Ubuntu") {
                        assert_eq!(converted.ami_family.as_deref(), Some("AL2"), "{ctx}");
                    } else {
                        assert_eq!(class.ami_family, converted.ami_family, "{ctx}");
                        assert_eq!(class.block_devices, converted.block_devices, "{ctx}");
                    }
                    if class.instance_profile.is_some() || class.role.is_some() {
                        assert_eq!(class.instance_profile, converted.instance_profile, "{ctx}");
                    } else {
                        assert_eq!(
                            converted.instance_profile.as_deref(),
                            Some(INSTANCE_PROFILE_PLACEHOLDER),
                            "{ctx}"
                        );
                    }
                    if !class.ami_selector_terms.is_empty() {
                        assert_eq!(
                            class.ami_selector_terms, converted.ami_selector_terms,
                            "{ctx}"
                        );
                    }
                }
                // Deterministic, and converting the output again changes nothing.
                let again = convert_paths(
                    std::slice::from_ref(&file),
                    &mut std::io::empty(),
                    &options(),
                )
                .unwrap();
                assert_eq!(yaml, again.to_yaml(), "{file}: not deterministic");
                let round = convert_str("converted.yaml", &yaml, &options()).unwrap();
                assert!(round.documents.iter().all(|d| d.unchanged), "{file}");
                assert_eq!(round.notes().count(), 0, "{file}");
                count += 1;
            }
        }
        assert!(count >= 22, "only {count} examples");
    }

    const PROVISIONER: &str = r#"
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
  annotations:
    karpenter.sh/provisioner-hash: "123"
    team: a
spec:
  labels:
    team: a
  annotations:
    example.com/owner: a
  taints:
    - key: dedicated
      value: a
      effect: NoSchedule
  startupTaints:
    - key: init
      effect: NoSchedule
  requirements:
    - key: karpenter.k8s.aws/instance-family
      operator: In
      values: [m5]
  kubeletConfiguration:
    maxPods: 50
    containerRuntime: dockerd
  limits:
    resources:
      cpu: 100
  weight: 10
  ttlSecondsAfterEmpty: 30
  ttlSecondsUntilExpired: 86400
  providerRef:
    name: tmpl
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: tmpl
spec:
  instanceProfile: KarpenterNodeInstanceProfile
  subnetSelector:
    aws-ids: subnet-1,subnet-2
  securityGroupSelector:
    karpenter.sh/discovery: "*"
"#;

    #[test]
    fn provisioner_becomes_a_nodepool_with_its_defaults_written_out() {
        let c = conv(PROVISIONER);
        assert_eq!(c.documents.len(), 2);
        let pool = doc(&c, "NodePool", "default");
        let v = &pool.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.sh/v1");
        assert_eq!(text(v, "metadata.annotations.team"), "a");
        assert!(!has(
            v,
            "metadata.annotations[karpenter.sh/provisioner-hash]"
        ));
        note(
            pool,
            "metadata.annotations",
            "karpenter.sh/provisioner-hash",
        );
        assert_eq!(text(v, "spec.template.metadata.labels.team"), "a");
        assert_eq!(
            text(v, "spec.template.metadata.annotations[example.com/owner]"),
            "a"
        );
        assert_eq!(text(v, "spec.template.spec.taints[0].key"), "dedicated");
        assert_eq!(text(v, "spec.template.spec.startupTaints[0].key"), "init");
        // instance-family is constrained: no category/generation defaults.
        assert_eq!(
            requirements(pool),
            [
                "karpenter.k8s.aws/instance-family In m5",
                "kubernetes.io/os In linux",
                "kubernetes.io/arch In amd64",
                "karpenter.sh/capacity-type In on-demand",
            ]
        );
        let n = note(pool, "spec.requirements", "no requirement defaults");
        assert!(n.message.contains("any architecture"), "{n}");
        assert_eq!(
            n.to_string(),
            format!(
                "t.yaml: Provisioner/default: spec.requirements: {}",
                n.message
            )
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.group"),
            "karpenter.k8s.aws"
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.kind"),
            "EC2NodeClass"
        );
        assert_eq!(text(v, "spec.template.spec.nodeClassRef.name"), "tmpl");
        assert_eq!(text(v, "spec.limits.cpu"), "100");
        assert_eq!(text(v, "spec.weight"), "10");
        assert_eq!(text(v, "spec.disruption.consolidationPolicy"), "WhenEmpty");
        assert_eq!(text(v, "spec.disruption.consolidateAfter"), "30s");
        assert!(!has(v, "spec.disruption.budgets"));
        note(pool, "spec.disruption.budgets", "nodes: 10%");
        assert_eq!(text(v, "spec.template.spec.expireAfter"), "86400s");
        note(pool, "spec.ttlSecondsUntilExpired", "forceful");
        // kubelet settings move to the class; containerRuntime is dropped.
        note(
            pool,
            "spec.kubeletConfiguration.containerRuntime",
            "dockerd",
        );
        note(
            pool,
            "spec.kubeletConfiguration",
            "moved to EC2NodeClass/tmpl spec.kubelet",
        );
        let class = doc(&c, "EC2NodeClass", "tmpl");
        assert_eq!(text(&class.value, "spec.kubelet.maxPods"), "50");
        assert!(!has(&class.value, "spec.kubelet.containerRuntime"));
        assert!(class.comments[0].contains("moved here from Provisioner/default"));
        // The output says it all at the top of each document.
        let yaml = c.to_yaml();
        assert!(yaml.contains(&format!("# note: {n}\n")), "{yaml}");
        let m = load_str("out.yaml", &yaml).unwrap();
        assert_eq!(
            m.node_classes[0].kubelet.as_ref().unwrap().max_pods,
            Some(50)
        );
    }

    #[test]
    fn provisioner_disruption_and_expiry_map_to_v1() {
        let base = |extra: &str| {
            format!(
                "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec:\n  providerRef:\n    name: t\n{extra}"
            )
        };
        let c = conv(&base("  consolidation:\n    enabled: true\n"));
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            text(&pool.value, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );
        assert_eq!(text(&pool.value, "spec.disruption.consolidateAfter"), "0s");
        assert_eq!(text(&pool.value, "spec.template.spec.expireAfter"), "Never");
        note(pool, "spec.ttlSecondsUntilExpired", "v1 defaults to 720h");
        assert!(pool
            .notes
            .iter()
            .all(|n| n.field != "spec.ttlSecondsAfterEmpty"));
        // Neither consolidation nor emptiness: v1alpha5 removed nothing.
        let c = conv(&base(""));
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            text(&pool.value, "spec.disruption.consolidateAfter"),
            "Never"
        );
        note(
            pool,
            "spec.ttlSecondsAfterEmpty",
            "never removed empty or underutilized",
        );
        // The referenced class is missing: say so.
        note(
            pool,
            "spec.providerRef",
            "EC2NodeClass/t is not in the input",
        );
        // Every default was added (nothing is constrained), including category/generation.
        assert_eq!(requirements(pool).len(), 5);
        assert!(requirements(pool).contains(&"karpenter.k8s.aws/instance-generation Gt 2".into()));
    }

    #[test]
    fn labels_count_as_constraints_for_the_webhook_defaults() {
        let c = conv("apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec:\n  labels:\n    kubernetes.io/arch: arm64\n    node.kubernetes.io/instance-type: m6g.large\n  requirements:\n    - key: beta.kubernetes.io/os\n      operator: In\n      values: [linux]\n  providerRef:\n    name: t\n");
        let pool = doc(&c, "NodePool", "p");
        assert_eq!(
            requirements(pool),
            [
                "beta.kubernetes.io/os In linux",
                "karpenter.sh/capacity-type In on-demand"
            ]
        );
        assert!(note(
            pool,
            "spec.requirements",
            "default karpenter.sh/capacity-type"
        )
        .message
        .contains("without it"));
    }

    #[test]
    fn inline_provider_becomes_a_class_named_after_the_provisioner() {
        let c = conv(
            r#"
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: inline
spec:
  kubeletConfiguration:
    maxPods: 20
  provider:
    apiVersion: extensions.karpenter.sh/v1alpha1
    kind: AWS
    amiFamily: Bottlerocket
    instanceProfile: profile
    subnetSelector:
      karpenter.sh/discovery: c
    securityGroupSelector:
      karpenter.sh/discovery: c
    tags:
      team: a
      kubernetes.io/cluster/c: owned
    launchTemplate: my-template
    metadataOptions:
      httpPutResponseHopLimit: 3
"#,
        );
        assert_eq!(
            c.documents
                .iter()
                .map(|d| d.kind.as_str())
                .collect::<Vec<_>>(),
            ["NodePool", "EC2NodeClass"]
        );
        let pool = doc(&c, "NodePool", "inline");
        assert_eq!(
            text(&pool.value, "spec.template.spec.nodeClassRef.name"),
            "inline"
        );
        note(pool, "spec.provider", "became EC2NodeClass/inline");
        let class = doc(&c, "EC2NodeClass", "inline");
        let v = &class.value;
        assert_eq!(
            text(v, "spec.amiSelectorTerms[0].alias"),
            "bottlerocket@latest"
        );
        assert!(!has(v, "spec.amiFamily"), "the alias names the family");
        note(class, "spec.provider.amiSelector", "bottlerocket@latest");
        assert_eq!(text(v, "spec.instanceProfile"), "profile");
        assert_eq!(text(v, "spec.kubelet.maxPods"), "20");
        assert_eq!(text(v, "spec.tags.team"), "a");
        assert!(!has(v, "spec.tags[kubernetes.io/cluster/c]"));
        note(class, "spec.provider.tags", "kubernetes.io/cluster/c");
        note(class, "spec.provider.launchTemplate", "my-template");
        // Partial metadata options: v1alpha1 left httpTokens to EC2 (optional).
        assert_eq!(text(v, "spec.metadataOptions.httpPutResponseHopLimit"), "3");
        assert_eq!(text(v, "spec.metadataOptions.httpTokens"), "optional");
        note(
            class,
            "spec.provider.metadataOptions.httpTokens",
            "optional",
        );
        assert!(class.notes.iter().all(|n| n.object == "Provisioner/inline"));
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    #[test]
    fn ami_selector_maps_to_terms() {
        let class = |selector: &str| {
            let c = conv(&format!(
                "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n  amiSelector:\n{selector}"
            ));
            load_str("out.yaml", &c.to_yaml()).unwrap_or_else(|e| panic!("{e}\n{}", c.to_yaml()));
            doc(&c, "EC2NodeClass", "t").clone()
        };
        let terms = |d: &Document| at(&d.value, "spec.amiSelectorTerms").clone();

        let d = class("    aws::ids: ami-1, ami-2\n");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-1");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[1].id"), "ami-2");

        let d = class("    aws::name: eks-*\n    aws::owners: self,123456789012\n    team: a\n");
        let t = terms(&d);
        assert_eq!(t.as_sequence().unwrap().len(), 2);
        assert_eq!(text(&t, "[0].owner"), "self");
        assert_eq!(text(&t, "[1].owner"), "123456789012");
        assert_eq!(text(&t, "[1].name"), "eks-*");
        assert_eq!(text(&t, "[1].tags.team"), "a");

        // Tags only: v1alpha1's default owners become explicit.
        let d = class("    team: a\n");
        let t = terms(&d);
        assert_eq!(text(&t, "[0].owner"), "self");
        assert_eq!(text(&t, "[1].owner"), "amazon");
        note(&d, "spec.amiSelector", "self, amazon");

        // A name without owners keeps v1's own default owners (the same).
        let d = class("    aws::name: my-ami\n");
        assert!(!has(&terms(&d)[0], "owner"));

        // A comma list in one tag: one term per value.
        let d = class("    aws::owners: self\n    version: v1,v2\n");
        let t = terms(&d);
        assert_eq!(text(&t, "[0].tags.version"), "v1");
        assert_eq!(text(&t, "[1].tags.version"), "v2");
        note(
            &d,
            "spec.amiSelector.version",
            "does not split tag values at commas",
        );

        // Two comma lists: the cross product, noted.
        let d = class("    aws::owners: self\n    a: x,y\n    b: p,q\n");
        assert_eq!(terms(&d).as_sequence().unwrap().len(), 4);
        note(&d, "spec.amiSelector", "cross product");

        // Owners only: a v1 term needs a name, tags or id.
        let d = class("    aws::owners: self\n");
        assert_eq!(text(&terms(&d), "[0].name"), "*");
    }

    #[test]
    fn subnet_and_security_group_selectors_map_to_terms() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    aws::ids: subnet-1,subnet-2\n  securityGroupSelector:\n    Name: \"*\"\n    tier: web,api\n");
        let d = doc(&c, "EC2NodeClass", "t");
        assert_eq!(text(&d.value, "spec.subnetSelectorTerms[0].id"), "subnet-1");
        assert_eq!(text(&d.value, "spec.subnetSelectorTerms[1].id"), "subnet-2");
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[0].tags.Name"),
            "*"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[0].tags.tier"),
            "web"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[1].tags.tier"),
            "api"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[1].tags.Name"),
            "*"
        );
        note(d, "spec.securityGroupSelector.tier", "one term per value");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    #[test]
    fn missing_identity_and_selectors_get_placeholders_and_notes() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  launchTemplate: lt\n  subnetSelector:\n    a: b\n");
        let d = doc(&c, "EC2NodeClass", "t");
        assert_eq!(
            text(&d.value, "spec.instanceProfile"),
            INSTANCE_PROFILE_PLACEHOLDER
        );
        note(d, "spec.instanceProfile", "aws.defaultInstanceProfile");
        assert_eq!(
            text(
                &d.value,
                "spec.securityGroupSelectorTerms[0].tags[karpenter.sh/discovery]"
            ),
            CLUSTER_NAME_PLACEHOLDER
        );
        note(d, "spec.securityGroupSelector", "placeholder");
        note(d, "spec.launchTemplate", "\"lt\"");
        // metadataOptions absent: v1alpha1's effective defaults, hop limit 2.
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpPutResponseHopLimit"),
            "2"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpTokens"),
            "required"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpEndpoint"),
            "enabled"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpProtocolIPv6"),
            "disabled"
        );
        note(d, "spec.metadataOptions", "hop limit to 1");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    #[test]
    fn ubuntu_becomes_al2_with_ssm_terms_or_its_own_selector() {
        let template = "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: u\nspec:\n  amiFamily: Ubuntu\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n";
        let c = convert_str(
            "t.yaml",
            template,
            &Options {
                kubernetes_version: Some("1.28".into()),
            },
        )
        .unwrap();
        let d = doc(&c, "EC2NodeClass", "u");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].ssmParameter"),
            "/aws/service/canonical/ubuntu/eks/20.04/1.28/stable/current/amd64/hvm/ebs-gp2/ami-id"
        );
        assert!(text(&d.value, "spec.amiSelectorTerms[1].ssmParameter").contains("/arm64/"));
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].deviceName"),
            "/dev/sda1"
        );
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].ebs.volumeSize"),
            "20Gi"
        );
        let n = note(d, "spec.amiFamily", "Ubuntu is not supported in v1");
        assert!(!n.message.contains(KUBERNETES_VERSION_PLACEHOLDER), "{n}");
        // Without a version: a placeholder, said so.
        let c = conv(template);
        let d = doc(&c, "EC2NodeClass", "u");
        assert!(text(&d.value, "spec.amiSelectorTerms[0].ssmParameter")
            .contains(KUBERNETES_VERSION_PLACEHOLDER));
        note(d, "spec.amiFamily", "--kubernetes-version");
        // With an amiSelector and block devices of its own: both kept.
        let c = conv(&format!("{template}  amiSelector:\n    aws::ids: ami-9\n  blockDeviceMappings:\n    - deviceName: /dev/sda1\n      ebs:\n        volumeSize: 50Gi\n"));
        let d = doc(&c, "EC2NodeClass", "u");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-9");
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].ebs.volumeSize"),
            "50Gi"
        );
        assert!(
            at(&d.value, "spec.blockDeviceMappings")
                .as_sequence()
                .unwrap()
                .len()
                == 1
        );
        note(d, "spec.amiFamily", "the AMI selector is kept");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }

    const V1BETA1: &str = r#"
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: a
spec:
  template:
    metadata:
      labels:
        team: a
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: Exists
          minValues: 3
      resources:
        requests:
          cpu: 1
      kubelet:
        maxPods: 30
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: shared
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 24h
    budgets:
      - nodes: "20%"
  limits:
    cpu: 50
  weight: 5
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: b
spec:
  template:
    spec:
      kubelet:
        maxPods: 60
      nodeClassRef:
        name: shared
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 5m
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: c
spec:
  template:
    spec:
      nodeClassRef:
        name: shared
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: shared
  annotations:
    karpenter.k8s.aws/ec2nodeclass-hash: "1"
spec:
  amiFamily: AL2023
  role: NodeRole
  subnetSelectorTerms:
    - tags:
        a: b
  securityGroupSelectorTerms:
    - id: sg-1
  metadataOptions:
    httpTokens: optional
  tags:
    eks:eks-cluster-name: c
    team: a
"#;

    #[test]
    fn v1beta1_nodepools_move_expiry_and_kubelet_and_rename_policies() {
        let c = conv(V1BETA1);
        let a = doc(&c, "NodePool", "a");
        let v = &a.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.sh/v1");
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.group"),
            "karpenter.k8s.aws"
        );
        assert_eq!(
            text(v, "spec.template.spec.nodeClassRef.kind"),
            "EC2NodeClass"
        );
        assert!(!has(v, "spec.template.spec.nodeClassRef.apiVersion"));
        assert_eq!(text(v, "spec.template.spec.requirements[0].minValues"), "3");
        assert!(!has(v, "spec.template.spec.resources"));
        note(a, "spec.template.spec.resources", "dropped");
        assert!(!has(v, "spec.template.spec.kubelet"));
        assert_eq!(text(v, "spec.template.spec.expireAfter"), "24h");
        assert!(!has(v, "spec.disruption.expireAfter"));
        note(a, "spec.disruption.expireAfter", "forceful");
        assert_eq!(
            text(v, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );
        assert_eq!(text(v, "spec.disruption.consolidateAfter"), "0s");
        assert_eq!(text(v, "spec.disruption.budgets[0].nodes"), "20%");
        assert_eq!(text(v, "spec.limits.cpu"), "50");
        assert_eq!(text(v, "spec.weight"), "5");
        assert_eq!(text(v, "spec.template.metadata.labels.team"), "a");
        note(
            a,
            "spec.template.spec.kubelet",
            "moved to EC2NodeClass/shared",
        );

        let b = doc(&c, "NodePool", "b");
        assert_eq!(
            text(&b.value, "spec.disruption.consolidationPolicy"),
            "WhenEmpty"
        );
        assert_eq!(text(&b.value, "spec.disruption.consolidateAfter"), "5m");
        // Absent expireAfter: v1beta1's 720h, written out.
        assert_eq!(text(&b.value, "spec.template.spec.expireAfter"), "720h");
        note(b, "spec.disruption.expireAfter", "v1beta1's default");
        // Different kubelet on a shared class: the first wins, the others are told.
        let n = note(b, "spec.template.spec.kubelet", "not carried over");
        assert!(n.message.contains("{\"maxPods\":60}"), "{n}");
        let c_pool = doc(&c, "NodePool", "c");
        note(
            c_pool,
            "spec.template.spec.kubelet",
            "now holds NodePool/a's",
        );
        assert_eq!(
            text(&c_pool.value, "spec.disruption.consolidationPolicy"),
            "WhenEmptyOrUnderutilized"
        );

        let class = doc(&c, "EC2NodeClass", "shared");
        let v = &class.value;
        assert_eq!(text(v, "apiVersion"), "karpenter.k8s.aws/v1");
        assert_eq!(text(v, "spec.kubelet.maxPods"), "30");
        assert_eq!(text(v, "spec.amiSelectorTerms[0].alias"), "al2023@latest");
        note(class, "spec.amiSelectorTerms", "latest AMI");
        assert_eq!(text(v, "spec.role"), "NodeRole");
        assert_eq!(text(v, "spec.securityGroupSelectorTerms[0].id"), "sg-1");
        assert_eq!(text(v, "spec.metadataOptions.httpTokens"), "optional");
        assert_eq!(text(v, "spec.metadataOptions.httpPutResponseHopLimit"), "2");
        note(
            class,
            "spec.metadataOptions.httpPutResponseHopLimit",
            "v1beta1's default",
        );
        assert!(!has(v, "metadata.annotations"));
        assert!(!has(v, "spec.tags[eks:eks-cluster-name]"));
        assert_eq!(text(v, "spec.tags.team"), "a");
        note(class, "spec.tags", "eks:eks-cluster-name");

        let m = load_str("out.yaml", &c.to_yaml()).unwrap();
        m.check_references().unwrap();
        assert_eq!(
            m.node_classes[0].kubelet.as_ref().unwrap().max_pods,
            Some(30)
        );
    }

    #[test]
    fn v1beta1_classes_keep_terms_and_note_custom_and_ubuntu() {
        let class = |spec: &str| {
            let c = conv(&format!("apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata:\n  name: x\nspec:\n  role: r\n  subnetSelectorTerms:\n    - id: subnet-1\n  securityGroupSelectorTerms:\n    - name: sg\n{spec}"));
            load_str("out.yaml", &c.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
            doc(&c, "EC2NodeClass", "x").clone()
        };
        let d = class(
            "  amiFamily: Custom\n  amiSelectorTerms:\n    - name: my-ami\n      owner: self\n",
        );
        assert_eq!(text(&d.value, "spec.amiFamily"), "Custom");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].name"), "my-ami");
        note(&d, "spec.amiFamily", "karpenter.sh/unregistered:NoExecute");
        let d = class("  amiFamily: Ubuntu\n  amiSelectorTerms:\n    - id: ami-1\n");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-1");
        assert_eq!(
            text(&d.value, "spec.blockDeviceMappings[0].deviceName"),
            "/dev/sda1"
        );
        let d =
            class("  amiFamily: Windows2022\n  metadataOptions:\n    httpPutResponseHopLimit: 1\n");
        assert_eq!(
            text(&d.value, "spec.amiSelectorTerms[0].alias"),
            "windows2022@latest"
        );
        assert_eq!(
            text(&d.value, "spec.metadataOptions.httpPutResponseHopLimit"),
            "1"
        );
        assert!(d
            .notes
            .iter()
            .all(|n| !n.field.starts_with("spec.metadataOptions")));
    }

    #[test]
    fn v1_objects_pass_through_exactly_and_kubelet_is_not_forced_into_them() {
        let v1 = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: k\nspec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n  role: r\n  subnetSelectorTerms:\n    - id: subnet-1\n  securityGroupSelectorTerms:\n    - id: sg-1\n  futureField: kept\n";
        let pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n      kubelet:\n        maxPods: 10\n      nodeClassRef:\n        name: k\n";
        let c = conv(&format!("{v1}---\n{pool}"));
        let class = doc(&c, "EC2NodeClass", "k");
        assert!(class.unchanged);
        assert_eq!(text(&class.value, "spec.futureField"), "kept");
        assert!(!has(&class.value, "spec.kubelet"));
        let p = doc(&c, "NodePool", "p");
        note(p, "spec.template.spec.kubelet", "already v1");
        assert!(c
            .to_yaml()
            .starts_with("# unchanged: karpenter.k8s.aws/v1 EC2NodeClass/k"));
    }

    #[test]
    fn unknown_fields_are_noted_not_silently_lost() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n  blockDeviceMappings:\n    - deviceName: /dev/xvdb\n      virtualName: ephemeral0\n  somethingNew: true\n");
        let d = doc(&c, "EC2NodeClass", "t");
        note(d, "spec.somethingNew", "not carried over");
        note(
            d,
            "spec.blockDeviceMappings[0].virtualName",
            "not carried over",
        );
    }

    #[test]
    fn other_objects_are_summarised_and_nothing_karpenter_is_an_error() {
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: a\n";
        let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n";
        let claim = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: c1\nspec:\n  nodeClassRef:\n    group: karpenter.k8s.aws\n    kind: EC2NodeClass\n    name: x\n  requirements: []\n";
        let c = conv(&format!(
            "{V1BETA1}---\n{deployment}---\n{service}---\n{claim}"
        ));
        let summary = c.summary();
        assert_eq!(summary.len(), 2, "{summary:?}");
        assert!(
            summary[0].starts_with("not converted: NodeClaim/c1 (t.yaml (document 7))"),
            "{summary:?}"
        );
        assert!(
            summary[1].starts_with("not printed: 2 objects"),
            "{summary:?}"
        );
        assert!(summary[1].contains("Deployment/web") && summary[1].contains("Service/web"));
        assert!(!c.to_yaml().contains("kind: Deployment"));

        let e = convert_str("w.yaml", &format!("{deployment}---\n{service}"), &options())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("w.yaml: no Karpenter objects to convert"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn bad_input_is_the_loaders_error_and_name_clashes_are_refused() {
        let e = convert_str(
            "b.yaml",
            "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: x\n      requirements:\n        - key: a\n          operator: Inn\n",
            &options(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("b.yaml: NodePool/p: spec.template.spec.requirements[0].operator"),
            "{e}"
        );
        let e = convert_str("m.yaml", "a: [1,\n", &options())
            .unwrap_err()
            .to_string();
        assert!(e.contains("malformed YAML"), "{e}");
        // A Provisioner and a v1beta1 NodePool with the same name both become NodePool/default.
        let e = convert_str(
            "c.yaml",
            "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: t\n---\napiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: t\n",
            &options(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("converts to NodePool/default, as Provisioner/default"),
            "{e}"
        );
        // A Provisioner without any node class cannot become a v1 NodePool.
        let e = convert_str(
            "d.yaml",
            "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec: {}\n",
            &options(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("d.yaml: Provisioner/p: spec.providerRef: required to convert"),
            "{e}"
        );
    }

    #[test]
    fn lists_and_json_convert_like_yaml() {
        let list = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"j"},"spec":{"template":{"spec":{"nodeClassRef":{"name":"x"}}}}}]}"#;
        let c = convert_str("l.json", list, &options()).unwrap();
        let d = doc(&c, "NodePool", "j");
        assert_eq!(text(&d.value, "spec.template.spec.nodeClassRef.name"), "x");
        assert!(d.notes.iter().any(|n| n.source == "l.json"));
    }
}
