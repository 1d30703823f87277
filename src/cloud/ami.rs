//! AMI resolution, as Karpenter does it (docs/karpenter.md §3): which SSM parameters and
//! DescribeImages queries a node class means, and which images win.
//!
//! Three pure steps and a thin driver:
//! 1. [`plan`]: node class + Kubernetes version → terms, each an SSM lookup (aliases, pre-v1
//!    `amiFamily` defaults), an id, a user `ssmParameter`, or its own DescribeImages query;
//! 2. [`queries`]: SSM answers → DescribeImages queries (every id merged into one), each
//!    with the requirement sets SSM told us (variant sets; the architecture comes later);
//! 3. [`select`]: images → one winner per requirement set (`compareAMI`: non-deprecated,
//!    newer, greater name), ordered newest first;
//!
//! and [`resolve_all`], which batches the SSM names of every class into GetParameters calls
//! of ten and sends each distinct query once, through the [`Cloud`] seam.

pub mod facts;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::types::{Cloud, CloudError, Filter, Image, ImageQuery, TagValues, GET_PARAMETERS_BATCH};
use crate::model::labels;
use crate::model::legacy_selector::{is_ids_key, split_list};
use crate::model::nodepool::{AmiSelectorTerm, ApiGeneration, NodeClass};
use crate::model::requirements::{NodeSelectorRequirement, Operator};
use crate::model::time::parse_rfc3339;

/// Owners a name-only selector is limited to, so public look-alikes are not picked up.
pub const DEFAULT_OWNERS: [&str; 2] = ["self", "amazon"];

/// Kubernetes `major.minor`, the part SSM paths use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// Major (1).
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

impl KubeVersion {
    /// Builds one.
    pub const fn new(major: u32, minor: u32) -> Self {
        KubeVersion { major, minor }
    }

    /// Parses `1.29`, `v1.29`, `1.29.3`, or the API server's `1.29+` (the `+` is stripped, as
    /// Karpenter does).
    pub fn parse(text: &str) -> Result<KubeVersion, String> {
        let bad = || format!("invalid Kubernetes version {text:?} (expected X.Y, e.g. 1.30)");
        let t = text.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let major = parts.next().ok_or_else(bad)?;
        let minor = parts.next().ok_or_else(bad)?.trim_end_matches('+');
        let number = |s: &str| -> Result<u32, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse().map_err(|_| bad())
        };
        let version = KubeVersion::new(number(major)?, number(minor)?);
        if let Some(patch) = parts.next() {
            number(patch.split(['-', '+']).next().unwrap_or(""))?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(version)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// An EKS-optimized AMI variant and the instance types it is for (`aws main:
/// pkg/providers/amifamily/types.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// No GPU, no accelerator.
    Standard,
    /// NVIDIA GPUs.
    Nvidia,
    /// AWS Neuron accelerators.
    Neuron,
}

impl Variant {
    /// The variant's requirement set (the architecture is added from DescribeImages).
    pub fn requirements(self) -> Vec<NodeSelectorRequirement> {
        match self {
            Variant::Standard => vec![
                NodeSelectorRequirement::new(
                    labels::INSTANCE_ACCELERATOR_COUNT,
                    Operator::DoesNotExist,
                    &[],
                ),
                NodeSelectorRequirement::new(
                    labels::INSTANCE_GPU_COUNT,
                    Operator::DoesNotExist,
                    &[],
                ),
            ],
            Variant::Nvidia => vec![NodeSelectorRequirement::new(
                labels::INSTANCE_GPU_COUNT,
                Operator::Exists,
                &[],
            )],
            Variant::Neuron => vec![NodeSelectorRequirement::new(
                labels::INSTANCE_ACCELERATOR_COUNT,
                Operator::Exists,
                &[],
            )],
        }
    }
}

/// A requirement set attached to an image by its SSM origin (without the architecture).
pub type RequirementSet = Vec<NodeSelectorRequirement>;

/// One SSM parameter an alias or `amiFamily` default reads, and what its image is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsmLookup {
    /// Parameter name.
    pub path: String,
    /// Requirement sets its image gets (AL2 GPU: nvidia and neuron).
    pub sets: Vec<RequirementSet>,
}

/// How one selector term is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermSource {
    /// An alias or a pre-v1 `amiFamily` default: SSM parameters (absent ones are skipped),
    /// then one DescribeImages by `image-id`.
    Ssm(Vec<SsmLookup>),
    /// An `id` term: joins the one `image-id` query of the class.
    Id(String),
    /// An `ssmParameter` term: its value joins the `image-id` query (absent or not an AMI id:
    /// skipped).
    SsmParameter(String),
    /// Its own DescribeImages query (name/owner/tags terms, v1alpha1 `amiSelector`).
    Query(ImageQuery),
}

/// A term of a class, as planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedTerm {
    /// The term as written (`alias: al2023@latest`, `amiFamily: AL2 (default)`, …).
    pub label: String,
    /// How it is resolved.
    pub source: TermSource,
}

/// What a class's AMIs depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmiPlan {
    /// Terms (ORed).
    pub terms: Vec<PlannedTerm>,
    /// v1alpha1: image tags whose keys are well-known labels become requirements.
    pub tag_requirements: bool,
    /// The plan depends on the Kubernetes version (aliases and family defaults do).
    pub uses_kubernetes_version: bool,
}

impl AmiPlan {
    /// Every SSM parameter the plan reads, in order, without duplicates.
    pub fn ssm_names(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut names = Vec::new();
        for term in &self.terms {
            let paths: Vec<&String> = match &term.source {
                TermSource::Ssm(lookups) => lookups.iter().map(|l| &l.path).collect(),
                TermSource::SsmParameter(name) => vec![name],
                _ => vec![],
            };
            for p in paths {
                if seen.insert(p.clone()) {
                    names.push(p.clone());
                }
            }
        }
        names
    }
}

/// Why a class's AMIs cannot be planned or fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmiError {
    /// The alias cannot be used with this Kubernetes version (Karpenter's guards).
    #[error("{alias} cannot be used with Kubernetes {version}: {reason}")]
    VersionGuard {
        /// The alias.
        alias: String,
        /// The version.
        version: KubeVersion,
        /// Why.
        reason: String,
    },
    /// The class names no AMIs (e.g. `amiFamily: Custom` without a selector).
    #[error("{0}")]
    NoSelector(String),
    /// An alias this tool does not know.
    #[error("unknown AMI alias {0:?}")]
    UnknownAlias(String),
    /// The cloud call failed.
    #[error(transparent)]
    Cloud(#[from] CloudError),
}

const WINDOWS_BUILDS: [(&str, &str); 3] = [
    ("2019", "10.0.17763"),
    ("2022", "10.0.20348"),
    ("2025", "10.0.26100"),
];

fn windows_lookup(server: &str, k: KubeVersion) -> SsmLookup {
    let build = WINDOWS_BUILDS
        .iter()
        .find(|(s, _)| *s == server)
        .map(|(_, b)| *b)
        .unwrap_or_default();
    SsmLookup {
        path: format!(
            "/aws/service/ami-windows-latest/Windows_Server-{server}-English-Core-EKS_Optimized-{k}/image_id"
        ),
        sets: vec![vec![
            NodeSelectorRequirement::new(labels::OS, Operator::In, &["windows"]),
            NodeSelectorRequirement::new(labels::WINDOWS_BUILD, Operator::In, &[build]),
        ]],
    }
}

fn sets(variants: &[Variant]) -> Vec<RequirementSet> {
    variants.iter().map(|v| v.requirements()).collect()
}

/// The SSM lookups of a v1 alias (`aws main: pkg/providers/amifamily/{al2,al2023,bottlerocket,
/// windows}.go`), with Karpenter's version guards.
pub fn alias_lookups(alias: &str, k: KubeVersion) -> Result<Vec<SsmLookup>, AmiError> {
    let (family, version) = alias
        .split_once('@')
        .ok_or_else(|| AmiError::UnknownAlias(alias.to_string()))?;
    let latest = version == "latest";
    let guard = |reason: &str| AmiError::VersionGuard {
        alias: alias.to_string(),
        version: k,
        reason: reason.to_string(),
    };
    let eks = format!("/aws/service/eks/optimized-ami/{k}");
    let lookup = |path: String, variants: &[Variant]| SsmLookup {
        path,
        sets: sets(variants),
    };
    use Variant::*;
    Ok(match family {
        "al2" => {
            if k >= KubeVersion::new(1, 33) {
                return Err(guard(
                    "Amazon Linux 2 AMIs are not published for Kubernetes 1.33 and later (use al2023 or bottlerocket)",
                ));
            }
            let name = |prefix: &str| {
                if latest {
                    "recommended".to_string()
                } else {
                    format!("{prefix}-{k}-{version}")
                }
            };
            vec![
                lookup(
                    format!("{eks}/amazon-linux-2/{}/image_id", name("amazon-eks-node")),
                    &[Standard],
                ),
                lookup(
                    format!(
                        "{eks}/amazon-linux-2-arm64/{}/image_id",
                        name("amazon-eks-arm64-node")
                    ),
                    &[Standard],
                ),
                lookup(
                    format!(
                        "{eks}/amazon-linux-2-gpu/{}/image_id",
                        name("amazon-eks-gpu-node")
                    ),
                    &[Neuron, Nvidia],
                ),
            ]
        }
        "al2023" => {
            let mut out = Vec::new();
            for (arch, variants) in [
                ("x86_64", &[Standard, Nvidia, Neuron][..]),
                ("arm64", &[Standard, Nvidia][..]),
            ] {
                for v in variants {
                    let variant = match v {
                        Standard => "standard",
                        Nvidia => "nvidia",
                        Neuron => "neuron",
                    };
                    let name = if latest {
                        "recommended".to_string()
                    } else {
                        format!("amazon-eks-node-al2023-{arch}-{variant}-{k}-{version}")
                    };
                    out.push(lookup(
                        format!("{eks}/amazon-linux-2023/{arch}/{variant}/{name}/image_id"),
                        &[*v],
                    ));
                }
            }
            out
        }
        "bottlerocket" => {
            // Bottlerocket versions carry a `v` on GitHub but not in SSM; both are accepted.
            let v = version.trim_start_matches('v');
            let br = "/aws/service/bottlerocket";
            vec![
                lookup(
                    format!("{br}/aws-k8s-{k}/x86_64/{v}/image_id"),
                    &[Standard, Neuron],
                ),
                lookup(format!("{br}/aws-k8s-{k}/arm64/{v}/image_id"), &[Standard]),
                lookup(
                    format!("{br}/aws-k8s-{k}-nvidia/x86_64/{v}/image_id"),
                    &[Nvidia],
                ),
                lookup(
                    format!("{br}/aws-k8s-{k}-nvidia/arm64/{v}/image_id"),
                    &[Nvidia],
                ),
            ]
        }
        "windows2019" | "windows2022" | "windows2025" => {
            if !latest {
                return Err(AmiError::UnknownAlias(format!(
                    "{alias} (windows families only accept @latest)"
                )));
            }
            let server = &family["windows".len()..];
            if server == "2025" && k < KubeVersion::new(1, 35) {
                return Err(guard(
                    "Windows Server 2025 AMIs require Kubernetes 1.35 or later",
                ));
            }
            vec![windows_lookup(server, k)]
        }
        _ => return Err(AmiError::UnknownAlias(alias.to_string())),
    })
}

/// The SSM lookups of a pre-v1 class without AMI selectors (`aws v0.37.8` family
/// `DefaultAMIs`; AL2023 from v0.33).
pub fn family_default_lookups(family: &str, k: KubeVersion) -> Result<Vec<SsmLookup>, AmiError> {
    use Variant::*;
    let eks = format!("/aws/service/eks/optimized-ami/{k}");
    let lookup = |path: String, sets: Vec<RequirementSet>| SsmLookup { path, sets };
    Ok(match family {
        "AL2" => vec![
            lookup(format!("{eks}/amazon-linux-2/recommended/image_id"), sets(&[Standard])),
            lookup(format!("{eks}/amazon-linux-2-gpu/recommended/image_id"), sets(&[Nvidia, Neuron])),
            lookup(format!("{eks}/amazon-linux-2-arm64/recommended/image_id"), sets(&[Standard])),
        ],
        // v0.33–v0.37 attach the architecture only (v0.37.7 `al2023.go` `DefaultAMIs`): GPU and
        // accelerator types run the standard image too.
        "AL2023" => vec![
            lookup(
                format!("{eks}/amazon-linux-2023/x86_64/standard/recommended/image_id"),
                vec![vec![]],
            ),
            lookup(
                format!("{eks}/amazon-linux-2023/arm64/standard/recommended/image_id"),
                vec![vec![]],
            ),
        ],
        "Bottlerocket" => {
            let br = "/aws/service/bottlerocket";
            vec![
                lookup(format!("{br}/aws-k8s-{k}/x86_64/latest/image_id"), sets(&[Standard])),
                lookup(format!("{br}/aws-k8s-{k}-nvidia/x86_64/latest/image_id"), sets(&[Nvidia, Neuron])),
                lookup(format!("{br}/aws-k8s-{k}/arm64/latest/image_id"), sets(&[Standard])),
                lookup(format!("{br}/aws-k8s-{k}-nvidia/arm64/latest/image_id"), sets(&[Nvidia, Neuron])),
            ]
        }
        "Ubuntu" => ["amd64", "arm64"]
            .iter()
            .map(|arch| {
                lookup(
                    format!("/aws/service/canonical/ubuntu/eks/20.04/{k}/stable/current/{arch}/hvm/ebs-gp2/ami-id"),
                    vec![vec![]],
                )
            })
            .collect(),
        "Windows2019" => vec![windows_lookup("2019", k)],
        "Windows2022" => vec![windows_lookup("2022", k)],
        "Windows2025" => vec![windows_lookup("2025", k)],
        "Custom" => {
            return Err(AmiError::NoSelector(
                "amiFamily Custom needs an AMI selector (amiSelectorTerms or amiSelector)".into(),
            ))
        }
        other => {
            return Err(AmiError::NoSelector(format!(
                "amiFamily {other:?} has no default AMIs"
            )))
        }
    })
}

fn state_available() -> Filter {
    Filter::new("state", ["available"])
}

/// A v1beta1/v1 name/owner/tags term → its query (`aws main: ami.go DescribeImageQueries`).
pub fn term_query(term: &AmiSelectorTerm) -> ImageQuery {
    let mut owners: Vec<String> = term.owner.iter().cloned().collect();
    let mut filters = Vec::new();
    if let Some(name) = &term.name {
        if owners.is_empty() {
            owners = DEFAULT_OWNERS.iter().map(|o| o.to_string()).collect();
        }
        filters.push(Filter::new("name", [name.clone()]));
    }
    filters.extend(Filter::tags(&term.tags, TagValues::Literal));
    filters.push(state_available());
    ImageQuery { owners, filters }
}

/// A v1alpha1 `amiSelector` → its one query (`aws v0.27–v0.30 ami.go getFiltersAndOwners`):
/// every key ANDed; `aws::ids` and `aws::owners` are comma lists; owners default to
/// `self,amazon` unless ids or owners are given; other keys are tag filters whose values are
/// comma lists too (as the v0.31/v0.32 converted terms had them), `*` meaning "key exists".
pub fn legacy_query(selector: &BTreeMap<String, String>) -> ImageQuery {
    let mut owners = Vec::new();
    let mut filters = Vec::new();
    let mut tags = BTreeMap::new();
    let mut ids = false;
    for (k, v) in selector {
        if is_ids_key(k) {
            ids = true;
            filters.push(Filter::new("image-id", split_list(v)));
        } else if k == "aws::owners" {
            owners = split_list(v);
        } else if k == "aws::name" {
            // v0.31/v0.32 split the name at commas, one term per name (`aws v0.32.10:
            // pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms`): the filter's values OR them.
            filters.push(Filter::new("name", split_list(v)));
        } else {
            tags.insert(k.clone(), v.clone());
        }
    }
    if owners.is_empty() && !ids {
        owners = DEFAULT_OWNERS.iter().map(|o| o.to_string()).collect();
    }
    filters.extend(Filter::tags(&tags, TagValues::CommaList));
    filters.push(state_available());
    ImageQuery { owners, filters }
}

fn term_label(term: &AmiSelectorTerm) -> String {
    if let Some(a) = &term.alias {
        return format!("alias: {a}");
    }
    if let Some(id) = &term.id {
        return format!("id: {id}");
    }
    let mut parts = Vec::new();
    if let Some(p) = &term.ssm_parameter {
        parts.push(format!("ssmParameter: {p}"));
    }
    if let Some(n) = &term.name {
        parts.push(format!("name: {n}"));
    }
    if let Some(o) = &term.owner {
        parts.push(format!("owner: {o}"));
    }
    if !term.tags.is_empty() {
        let tags: Vec<String> = term.tags.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        parts.push(format!("tags: {{{}}}", tags.join(", ")));
    }
    parts.join(", ")
}

/// Plans a class's AMI resolution for Kubernetes `k`.
pub fn plan(class: &NodeClass, k: KubeVersion) -> Result<AmiPlan, AmiError> {
    let legacy = class
        .legacy_selectors
        .get("amiSelector")
        .filter(|s| !s.is_empty());
    let v1alpha1 = class.generation == Some(ApiGeneration::V1Alpha5);
    if let (true, Some(selector)) = (v1alpha1, legacy) {
        let shown: Vec<String> = selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        return Ok(AmiPlan {
            terms: vec![PlannedTerm {
                label: format!("amiSelector: {{{}}}", shown.join(", ")),
                source: TermSource::Query(legacy_query(selector)),
            }],
            tag_requirements: true,
            uses_kubernetes_version: false,
        });
    }
    if class.ami_selector_terms.is_empty() {
        let family = class.ami_family.as_deref().unwrap_or("AL2");
        return Ok(AmiPlan {
            terms: vec![PlannedTerm {
                label: format!("amiFamily: {family} (default)"),
                source: TermSource::Ssm(family_default_lookups(family, k)?),
            }],
            tag_requirements: false,
            uses_kubernetes_version: true,
        });
    }
    let mut terms = Vec::new();
    let mut uses_version = false;
    for term in &class.ami_selector_terms {
        let source = if let Some(alias) = &term.alias {
            uses_version = true;
            TermSource::Ssm(alias_lookups(alias, k)?)
        } else if let Some(id) = &term.id {
            TermSource::Id(id.clone())
        } else if let Some(p) = &term.ssm_parameter {
            TermSource::SsmParameter(p.clone())
        } else {
            TermSource::Query(term_query(term))
        };
        terms.push(PlannedTerm {
            label: term_label(term),
            source,
        });
    }
    Ok(AmiPlan {
        terms,
        tag_requirements: false,
        uses_kubernetes_version: uses_version,
    })
}

/// A DescribeImages query of a class and what it knows about the images it will return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedQuery {
    /// The request.
    pub query: ImageQuery,
    /// Image id → requirement sets from SSM (absent: architecture only).
    pub known: BTreeMap<String, Vec<RequirementSet>>,
    /// Indices of the terms it serves.
    pub terms: Vec<usize>,
}

/// SSM answers: name → value, `None` when SSM does not have the parameter.
pub type SsmValues = BTreeMap<String, Option<String>>;

/// Turns a plan and SSM's answers into DescribeImages queries (`aws main: ami.go
/// DescribeImageQueries`): one `image-id` query per SSM term, every id and `ssmParameter` value
/// merged into one `image-id` query (last), and one query per other term.
pub fn queries(plan: &AmiPlan, ssm: &SsmValues) -> Vec<PlannedQuery> {
    let mut out = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut id_terms = Vec::new();
    for (i, term) in plan.terms.iter().enumerate() {
        match &term.source {
            TermSource::Ssm(lookups) => {
                let mut known: BTreeMap<String, Vec<RequirementSet>> = BTreeMap::new();
                for l in lookups {
                    if let Some(Some(id)) = ssm.get(&l.path) {
                        // Two paths naming one image (possible for pinned releases) give it
                        // both paths' sets rather than whichever Go's map order kept.
                        let entry = known.entry(id.clone()).or_default();
                        for s in &l.sets {
                            if !entry.contains(s) {
                                entry.push(s.clone());
                            }
                        }
                    }
                }
                if !known.is_empty() {
                    out.push(PlannedQuery {
                        query: ImageQuery {
                            owners: vec![],
                            filters: vec![
                                Filter::new("image-id", known.keys().cloned()),
                                state_available(),
                            ],
                        },
                        known,
                        terms: vec![i],
                    });
                }
            }
            TermSource::Id(id) => {
                if !ids.contains(id) {
                    ids.push(id.clone());
                }
                id_terms.push(i);
            }
            TermSource::SsmParameter(name) => {
                if let Some(Some(v)) = ssm.get(name) {
                    if v.starts_with("ami-") && !ids.contains(v) {
                        ids.push(v.clone());
                    }
                }
                id_terms.push(i);
            }
            TermSource::Query(q) => out.push(PlannedQuery {
                query: q.clone(),
                known: BTreeMap::new(),
                terms: vec![i],
            }),
        }
    }
    if !ids.is_empty() {
        out.push(PlannedQuery {
            query: ImageQuery {
                owners: vec![],
                filters: vec![Filter::new("image-id", ids), state_available()],
            },
            known: BTreeMap::new(),
            terms: id_terms,
        });
    }
    out
}

/// An image chosen for a requirement set (one entry of `EC2NodeClass.status.amis`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedImage {
    /// `ami-…`.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// Kubernetes architecture (`amd64`, `arm64`).
    pub architecture: String,
    /// RFC 3339 creation date.
    pub creation_date: Option<String>,
    /// Deprecated at resolution time.
    pub deprecated: bool,
    /// Requirements, sorted by key length, then key (as Karpenter writes `status.amis`).
    pub requirements: Vec<NodeSelectorRequirement>,
}

/// `x86_64 → amd64`, `arm64 → arm64`; other architectures have no Kubernetes label and are
/// dropped (`v1.AWSToKubeArchitectures`).
pub fn kube_architecture(ec2: &str) -> Option<&'static str> {
    match ec2 {
        "x86_64" => Some("amd64"),
        "arm64" => Some("arm64"),
        _ => None,
    }
}

/// Whether an image is deprecated at `now` (no deprecation time: never).
pub fn is_deprecated(image: &Image, now: i64) -> bool {
    image
        .deprecation_time
        .as_deref()
        .and_then(parse_rfc3339)
        .is_some_and(|t| t <= now)
}

/// Karpenter's `compareAMI`: `Less` when `a` should win over `b` (non-deprecated first, then
/// newer creation date, then lexicographically greater name).
pub fn compare_ami(a: &ResolvedImage, b: &ResolvedImage) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a.deprecated != b.deprecated {
        return if a.deprecated {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    let created = |i: &ResolvedImage| {
        i.creation_date
            .as_deref()
            .and_then(parse_rfc3339)
            .unwrap_or(i64::MIN)
    };
    match created(b).cmp(&created(a)) {
        Ordering::Equal => b.name.cmp(&a.name),
        other => other,
    }
}

fn set_key(reqs: &[NodeSelectorRequirement]) -> String {
    let mut parts: Vec<String> = reqs
        .iter()
        .map(|r| {
            let mut values = r.values.clone();
            values.sort();
            format!("{} {} [{}]", r.key, r.operator, values.join(","))
        })
        .collect();
    parts.sort();
    parts.join("; ")
}

/// Requirements in `status.amis` order: by key length, then key.
pub fn sort_requirements(reqs: &mut [NodeSelectorRequirement]) {
    reqs.sort_by(|a, b| {
        a.key
            .len()
            .cmp(&b.key.len())
            .then_with(|| a.key.cmp(&b.key))
    });
}

/// Picks the winners: for each image and each of its requirement sets (SSM's sets, or none,
/// plus its architecture, plus — v1alpha1 — well-known-label tags), the best image per
/// distinct set by [`compare_ami`]; then newest first, ties by id.
pub fn select(
    queries: &[PlannedQuery],
    results: &[Vec<Image>],
    now: i64,
    tag_requirements: bool,
) -> Vec<ResolvedImage> {
    let mut best: BTreeMap<String, ResolvedImage> = BTreeMap::new();
    for (query, images) in queries.iter().zip(results) {
        for image in images {
            let Some(arch) = kube_architecture(&image.architecture) else {
                continue;
            };
            let known = query.known.get(&image.id);
            let base_sets: Vec<RequirementSet> = match known {
                Some(sets) => sets.clone(),
                None => vec![vec![]],
            };
            for mut reqs in base_sets {
                if tag_requirements {
                    for (k, v) in &image.tags {
                        let k = labels::normalize_key(k);
                        if (labels::is_well_known(k) || k == labels::PROVISIONER_NAME)
                            && k != labels::ARCH
                        {
                            reqs.retain(|r| r.key != k);
                            reqs.push(NodeSelectorRequirement::new(k, Operator::In, &[v]));
                        }
                    }
                }
                reqs.retain(|r| r.key != labels::ARCH);
                reqs.push(NodeSelectorRequirement::new(
                    labels::ARCH,
                    Operator::In,
                    &[arch],
                ));
                sort_requirements(&mut reqs);
                let candidate = ResolvedImage {
                    id: image.id.clone(),
                    name: image.name.clone(),
                    architecture: arch.to_string(),
                    creation_date: image.creation_date.clone(),
                    deprecated: is_deprecated(image, now),
                    requirements: reqs,
                };
                let key = set_key(&candidate.requirements);
                match best.get(&key) {
                    Some(existing) if compare_ami(existing, &candidate).is_le() => {}
                    _ => {
                        best.insert(key, candidate);
                    }
                }
            }
        }
    }
    let mut out: Vec<ResolvedImage> = best.into_values().collect();
    let created = |i: &ResolvedImage| {
        i.creation_date
            .as_deref()
            .and_then(parse_rfc3339)
            .unwrap_or(i64::MIN)
    };
    out.sort_by(|a, b| {
        created(b)
            .cmp(&created(a))
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| set_key(&a.requirements).cmp(&set_key(&b.requirements)))
    });
    out
}

/// Everything resolution learnt about one class, for display and for drift.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmiResolution {
    /// The plan.
    pub plan: AmiPlan,
    /// SSM answers for the plan's parameters.
    pub ssm: SsmValues,
    /// The queries sent.
    pub queries: Vec<PlannedQuery>,
    /// What each query returned.
    pub results: Vec<Vec<Image>>,
    /// The winners, newest first (what `status.amis` would hold).
    pub images: Vec<ResolvedImage>,
}

impl AmiResolution {
    /// Why the class has no AMI, in one line, or `None` when it has some.
    pub fn problem(&self) -> Option<String> {
        if !self.images.is_empty() {
            return None;
        }
        let mut reasons = Vec::new();
        for (i, term) in self.plan.terms.iter().enumerate() {
            match &term.source {
                TermSource::Ssm(lookups) if !self.queries.iter().any(|q| q.terms.contains(&i)) => {
                    reasons.push(format!(
                        "{}: none of its {} SSM parameters exists",
                        term.label,
                        lookups.len()
                    ));
                }
                TermSource::SsmParameter(name) => match self.ssm.get(name) {
                    Some(Some(v)) if !v.starts_with("ami-") => {
                        reasons.push(format!("{}: value {v:?} is not an AMI id", term.label))
                    }
                    Some(None) | None => {
                        reasons.push(format!("{}: parameter not found", term.label))
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        let returned: usize = self.results.iter().map(Vec::len).sum();
        let detail = if reasons.is_empty() {
            if returned > 0 {
                format!(
                    "{returned} images matched, none with a supported architecture (x86_64, arm64)"
                )
            } else {
                "no image matches".to_string()
            }
        } else {
            reasons.join("; ")
        };
        Some(format!("no AMIs resolved: {detail}"))
    }
}

/// Resolves the AMIs of several classes together: one GetParameters per ten distinct names
/// across all classes, and each distinct DescribeImages query once. Errors are per class,
/// except a failing SSM call, which fails the classes that needed it.
pub fn resolve_all(
    cloud: &dyn Cloud,
    classes: &[&NodeClass],
    k: KubeVersion,
    now: i64,
) -> Vec<Result<AmiResolution, AmiError>> {
    let plans: Vec<Result<AmiPlan, AmiError>> = classes.iter().map(|c| plan(c, k)).collect();
    let mut names: Vec<String> = Vec::new();
    for p in plans.iter().flatten() {
        for n in p.ssm_names() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let mut ssm: SsmValues = BTreeMap::new();
    let mut ssm_error: Option<CloudError> = None;
    for batch in names.chunks(GET_PARAMETERS_BATCH) {
        match cloud.get_parameters(batch) {
            Ok(answer) => {
                for n in batch {
                    ssm.insert(n.clone(), answer.values.get(n).cloned());
                }
            }
            Err(e) => {
                ssm_error = Some(e);
                break;
            }
        }
    }
    let mut cache: BTreeMap<ImageQuery, Result<Vec<Image>, CloudError>> = BTreeMap::new();
    plans
        .into_iter()
        .map(|p| {
            let plan = p?;
            let own: SsmValues = plan
                .ssm_names()
                .into_iter()
                .map(|n| {
                    let v = ssm.get(&n).cloned().flatten();
                    (n, v)
                })
                .collect();
            if let Some(e) = &ssm_error {
                if !own.is_empty() {
                    return Err(AmiError::Cloud(e.clone()));
                }
            }
            let qs = queries(&plan, &own);
            let mut results = Vec::with_capacity(qs.len());
            for q in &qs {
                let r = cache
                    .entry(q.query.clone())
                    .or_insert_with(|| cloud.describe_images(&q.query))
                    .clone()?;
                results.push(r);
            }
            let images = select(&qs, &results, now, plan.tag_requirements);
            Ok(AmiResolution {
                plan,
                ssm: own,
                queries: qs,
                results,
                images,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
