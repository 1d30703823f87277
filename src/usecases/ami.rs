//! `ami`: what each node class's AMI selection resolves to, and from where (docs/karpenter.md §3,
//! docs/spec.md §5.1): per term the SSM parameter or DescribeImages filter used, and the images chosen,
//! computed live from SSM and EC2 — not trusted from `status.amis`.

use serde::{Serialize, Serializer};

use crate::api::Manifests;
use crate::cloud::ami::{self, AmiError, AmiResolution, KubeVersion, ResolvedImage, TermSource};
use crate::cloud::{CallCounts, Cloud};
use crate::error::CommandError;
use crate::k8s::snapshot::{self, Scope};
use crate::k8s::Cluster;
use crate::model::nodepool::NodeClass;
use crate::model::requirements::Operator;

/// Assumed when neither `--kubernetes-version` nor a cluster says: a version every alias family
/// but windows2025 publishes AMIs for.
pub const ASSUMED_KUBERNETES_VERSION: KubeVersion = KubeVersion::new(1, 32);

/// Where the Kubernetes version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionSource {
    /// `--kubernetes-version`.
    Flag,
    /// The API server's `/version` (cluster mode; trailing `+` stripped).
    Cluster,
    /// Neither: [`ASSUMED_KUBERNETES_VERSION`].
    Assumed,
}

/// The API server's version (`/version`, trailing `+` stripped), for the node classes' AMI
/// aliases; unreadable is the API's error, malformed a remote error naming the text.
pub fn server_version(cluster: &dyn Cluster) -> Result<KubeVersion, CommandError> {
    let text = crate::k8s::ops::server_version(cluster)?;
    KubeVersion::parse(&text).map_err(|e| {
        CommandError::remote(format!("the API server's version {text:?}: {e}"))
            .with_hint("pass --kubernetes-version X.Y")
    })
}

/// The node classes of every installed generation in the cluster; an error when there are none.
pub fn cluster_classes(cluster: &dyn Cluster) -> Result<Manifests, CommandError> {
    let read = snapshot::read(cluster, Scope::default())?;
    if read.manifests.node_classes.is_empty() {
        return Err(CommandError::remote(format!(
            "the cluster has no EC2NodeClass or AWSNodeTemplate ({})",
            read.installed.describe()
        ))
        .with_hint("pass -f FILE with node class manifests to resolve them offline"));
    }
    Ok(read.manifests)
}

/// The classes named (all when none is), in the order named; unknown names are input errors.
pub fn select_classes<'a>(
    all: &'a [NodeClass],
    names: &[String],
) -> Result<Vec<&'a NodeClass>, CommandError> {
    if all.is_empty() {
        return Err(CommandError::input(
            "no node class in the input (expected EC2NodeClass, AWSNodeTemplate, or a Provisioner with spec.provider)",
        ));
    }
    if names.is_empty() {
        return Ok(all.iter().collect());
    }
    let mut out = Vec::new();
    for n in names {
        let found: Vec<&NodeClass> = all.iter().filter(|c| &c.name == n).collect();
        if found.is_empty() {
            let known: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            return Err(CommandError::input(format!(
                "node class {n:?} is not in the input (found: {})",
                known.join(", ")
            )));
        }
        out.extend(found);
    }
    Ok(out)
}

/// Whether any of the classes resolves differently per Kubernetes version (aliases and
/// `amiFamily` defaults; a class that does not plan counts, to be safe).
pub fn needs_version(classes: &[&NodeClass], version: KubeVersion) -> bool {
    classes
        .iter()
        .any(|c| ami::plan(c, version).map_or(true, |p| p.uses_kubernetes_version))
}

/// The resolution of every class.
#[derive(Debug, Clone, PartialEq)]
pub struct AmiReport {
    /// The AWS region.
    pub region: String,
    /// The Kubernetes version aliases were resolved for.
    pub kubernetes_version: KubeVersion,
    /// Where it came from.
    pub kubernetes_version_source: VersionSource,
    /// Per class, in the order asked.
    pub node_classes: Vec<ClassReport>,
    /// The AWS calls it took.
    pub aws_calls: CallCounts,
}

/// One class's resolution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassReport {
    /// Name.
    pub name: String,
    /// `EC2NodeClass`, `AWSNodeTemplate`, …
    pub kind: String,
    /// `amiFamily`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ami_family: Option<String>,
    /// The file it came from (offline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    /// Per term (per SSM parameter for aliases), how it resolved.
    pub terms: Vec<TermReport>,
    /// The winners, newest first: what `status.amis` would hold.
    pub images: Vec<ImageReport>,
    /// Why it resolved no AMI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Karpenter's reason for it (`AMINotFound`, `PermissionDenied`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// Where a term's images come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SourceType {
    /// An SSM parameter.
    #[serde(rename = "SSM")]
    Ssm,
    /// A DescribeImages query.
    DescribeImages,
}

/// One term (one SSM parameter of an alias).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TermReport {
    /// The term as written.
    pub term: String,
    /// SSM or DescribeImages.
    pub source_type: SourceType,
    /// The SSM parameter, or the DescribeImages filters.
    pub source: String,
    /// SSM: the parameter's value (`Some(None)`: the parameter does not exist, a variant absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Option<String>>,
    /// SSM: the DescribeImages request its value joined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The images it contributed.
    pub images: Vec<ImageReport>,
}

/// An image.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageReport {
    /// `ami-…`.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// Kubernetes architecture.
    pub architecture: String,
    /// RFC 3339 creation date.
    pub creation_date: Option<String>,
    /// Deprecated now.
    pub deprecated: bool,
    /// The requirements nodes of this image meet.
    pub requirements: Vec<RequirementReport>,
}

/// A requirement of an image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequirementReport {
    /// Label key.
    pub key: String,
    /// Operator.
    #[serde(serialize_with = "operator")]
    pub operator: Operator,
    /// Values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

fn operator<S: Serializer>(op: &Operator, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(op.as_str())
}

/// Resolves the classes' AMIs through `cloud` (one GetParameters and at most one
/// DescribeImages per class) into the report.
pub fn resolve(
    cloud: &dyn Cloud,
    classes: &[&NodeClass],
    version: KubeVersion,
    source: VersionSource,
    now: i64,
) -> AmiReport {
    let results = ami::resolve_all(cloud, classes, version, now);
    let calls = cloud.call_counts();
    report(classes, &results, version, source, &cloud.region(), &calls)
}

impl AmiReport {
    /// The error to exit with when a class resolved no AMI (exit 3), naming each such class.
    pub fn failure(&self) -> Option<CommandError> {
        let failed: Vec<String> = self
            .node_classes
            .iter()
            .filter_map(|c| {
                c.error
                    .as_ref()
                    .map(|e| format!("{}/{}: {e}", c.kind, c.name))
            })
            .collect();
        let err = match failed.len() {
            0 => return None,
            1 => CommandError::remote(&failed[0]),
            n => CommandError::remote(format!(
                "{n} node classes resolved no AMI: {}",
                failed.join("; ")
            )),
        };
        let denied = self
            .node_classes
            .iter()
            .any(|c| c.reason == Some("PermissionDenied"));
        Some(if denied {
            err.with_hint(super::live::AWS_PERMISSION_HINT)
        } else {
            err
        })
    }
}

/// Builds the report from resolutions (pure).
pub fn report(
    classes: &[&NodeClass],
    results: &[Result<AmiResolution, AmiError>],
    version: KubeVersion,
    source: VersionSource,
    region: &str,
    calls: &CallCounts,
) -> AmiReport {
    let node_classes = classes
        .iter()
        .zip(results)
        .map(|(c, r)| {
            let mut class = ClassReport {
                name: c.name.clone(),
                kind: c.kind.clone(),
                ami_family: c.ami_family.clone(),
                source_file: (!c.origin.source.is_empty()).then(|| c.origin.source.clone()),
                terms: vec![],
                images: vec![],
                error: None,
                reason: None,
            };
            match r {
                Ok(res) => {
                    class.terms = terms(res);
                    class.images = res.images.iter().map(image).collect();
                    if let Some(p) = res.problem() {
                        class.error = Some(p);
                        class.reason = Some("AMINotFound");
                    }
                }
                Err(e) => {
                    class.error = Some(e.to_string());
                    class.reason = Some(match e {
                        AmiError::Cloud(c) => c.reason(),
                        AmiError::VersionGuard { .. } => "UnsupportedKubernetesVersion",
                        _ => "InvalidAMISelector",
                    });
                }
            }
            class
        })
        .collect();
    AmiReport {
        region: region.to_string(),
        kubernetes_version: version,
        kubernetes_version_source: source,
        node_classes,
        aws_calls: calls.clone(),
    }
}

fn image(i: &ResolvedImage) -> ImageReport {
    ImageReport {
        id: i.id.clone(),
        name: i.name.clone(),
        architecture: i.architecture.clone(),
        creation_date: i.creation_date.clone(),
        deprecated: i.deprecated,
        requirements: i
            .requirements
            .iter()
            .map(|r| RequirementReport {
                key: r.key.clone(),
                operator: r.operator,
                values: r.values.clone(),
            })
            .collect(),
    }
}

fn terms(r: &AmiResolution) -> Vec<TermReport> {
    let query_of = |i: usize| r.queries.iter().position(|q| q.terms.contains(&i));
    let with_id = |id: &str| -> Vec<ImageReport> {
        r.images.iter().filter(|m| m.id == id).map(image).collect()
    };
    let mut out = Vec::new();
    for (i, term) in r.plan.terms.iter().enumerate() {
        let query = query_of(i);
        let query_text = query.map(|q| r.queries[q].query.to_string());
        match &term.source {
            TermSource::Ssm(lookups) => {
                for l in lookups {
                    let value = r.ssm.get(&l.path).cloned().flatten();
                    out.push(TermReport {
                        term: term.label.clone(),
                        source_type: SourceType::Ssm,
                        source: l.path.clone(),
                        images: value.as_deref().map(with_id).unwrap_or_default(),
                        value: Some(value),
                        query: query_text.clone(),
                    });
                }
            }
            TermSource::SsmParameter(name) => {
                let value = r.ssm.get(name).cloned().flatten();
                out.push(TermReport {
                    term: term.label.clone(),
                    source_type: SourceType::Ssm,
                    source: name.clone(),
                    images: value.as_deref().map(with_id).unwrap_or_default(),
                    value: Some(value),
                    query: query_text,
                });
            }
            TermSource::Id(id) => out.push(TermReport {
                term: term.label.clone(),
                source_type: SourceType::DescribeImages,
                source: query_text.unwrap_or_else(|| format!("image-id={id}")),
                value: None,
                query: None,
                images: with_id(id),
            }),
            TermSource::Query(q) => {
                let returned: Vec<&str> = query
                    .map(|qi| r.results[qi].iter().map(|i| i.id.as_str()).collect())
                    .unwrap_or_default();
                out.push(TermReport {
                    term: term.label.clone(),
                    source_type: SourceType::DescribeImages,
                    source: q.to_string(),
                    value: None,
                    query: None,
                    images: r
                        .images
                        .iter()
                        .filter(|m| returned.contains(&m.id.as_str()))
                        .map(image)
                        .collect(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
