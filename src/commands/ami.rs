//! `kubectl karpenter ami`: what each node class's AMI selection resolves to, and from where
//! (KARPENTER.md §3, SPEC §5.1): per term the SSM parameter or DescribeImages filter used, and
//! the images chosen, computed live from SSM and EC2 — not trusted from `status.amis`.
//!
//! Node classes come from `-f` manifests (reading them from the cluster comes with the cluster
//! adapter). The Kubernetes version aliases need is `--kubernetes-version`; without it (and,
//! until the cluster adapter lands, without the API server's `/version`) a version is assumed
//! and said so.

use serde::Serialize;

use super::Context;
use crate::cli::output::{write_document, Table, API_VERSION};
use crate::cli::{AmiArgs, OutputFormat};
use crate::cloud::ami::{self, AmiError, AmiResolution, KubeVersion, ResolvedImage, TermSource};
use crate::cloud::aws::{AwsCloud, AwsOptions};
use crate::cloud::{CallCounts, Cloud, CloudError};
use crate::error::{CommandError, CommandResult, Exit};
use crate::model::nodepool::NodeClass;
use crate::model::requirements::Operator;

/// Assumed when neither `--kubernetes-version` nor a cluster says: a version every alias family
/// but windows2025 publishes AMIs for.
pub const ASSUMED_KUBERNETES_VERSION: KubeVersion = KubeVersion::new(1, 32);

const PERMISSIONS_HINT: &str = "the AWS identity needs ssm:GetParameters and ec2:DescribeImages";

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

/// The plain configuration the command runs on (no clap types past this point).
#[derive(Debug, Clone)]
pub struct Config {
    /// Node classes to show (empty: all).
    pub names: Vec<String>,
    /// Manifests.
    pub filenames: Vec<String>,
    /// Kubernetes version and its source.
    pub kubernetes_version: (KubeVersion, VersionSource),
    /// How to reach AWS.
    pub aws: AwsOptions,
}

impl Config {
    /// Validates flags.
    pub fn from_args(ctx: &Context<'_>, args: &AmiArgs) -> Result<Config, CommandError> {
        let kubernetes_version = match &ctx.global.kubernetes_version {
            Some(v) => (
                KubeVersion::parse(v)
                    .map_err(|e| CommandError::input(format!("--kubernetes-version: {e}")))?,
                VersionSource::Flag,
            ),
            // Seam: cluster mode fills this from the API server's /version (VersionSource::Cluster).
            None => (ASSUMED_KUBERNETES_VERSION, VersionSource::Assumed),
        };
        Ok(Config {
            names: args.nodeclasses.clone(),
            filenames: args.filenames.clone(),
            kubernetes_version,
            aws: AwsOptions {
                region: ctx.global.region.clone(),
                profile: ctx.global.profile.clone(),
                region_hint: crate::cli::kubeconfig::region_hint(ctx.global),
                ..AwsOptions::default()
            },
        })
    }
}

/// Runs the command.
pub fn run(ctx: &mut Context<'_>, args: &AmiArgs) -> CommandResult {
    let mut config = Config::from_args(ctx, args)?;
    let manifests = if config.filenames.is_empty() {
        // Live: the node classes of every installed generation, the version from /version.
        let cluster = super::live::connect_cluster(ctx)?;
        if config.kubernetes_version.1 == VersionSource::Assumed {
            config.kubernetes_version = (
                super::live::kubernetes_version(ctx, &cluster)?,
                VersionSource::Cluster,
            );
        }
        let read =
            crate::k8s::snapshot::read(&cluster.client, crate::k8s::snapshot::Scope::default())?;
        if read.manifests.node_classes.is_empty() {
            return Err(CommandError::remote(format!(
                "the cluster has no EC2NodeClass or AWSNodeTemplate ({})",
                read.installed.describe()
            ))
            .with_hint("pass -f FILE with node class manifests to resolve them offline"));
        }
        read.manifests
    } else {
        crate::api::load_paths(&config.filenames, &mut std::io::stdin().lock())?
    };
    for warning in &manifests.warnings {
        ctx.warn(warning);
    }
    let classes = select_classes(&manifests.node_classes, &config.names)?;
    let (version, source) = config.kubernetes_version;
    let needs_version = classes
        .iter()
        .any(|c| ami::plan(c, version).map_or(true, |p| p.uses_kubernetes_version));
    if needs_version && source == VersionSource::Assumed {
        ctx.warn(&format!(
            "no --kubernetes-version (and no cluster to ask): assuming Kubernetes {version} for AMI aliases and amiFamily defaults"
        ));
    }
    let cloud = AwsCloud::connect(&config.aws).map_err(remote)?;
    ctx.note(&format!(
        "AWS region {}{}",
        cloud.region(),
        cloud
            .endpoint()
            .map(|e| format!(", endpoint {e}"))
            .unwrap_or_default()
    ));
    let now = super::unix_now();
    let results = ami::resolve_all(&cloud, &classes, version, now);
    let calls = cloud.call_counts();
    let doc = document(&classes, &results, version, source, &cloud.region(), &calls);
    render(ctx, &doc)?;
    ctx.note(&calls.summary());
    let failed: Vec<String> = doc
        .node_classes
        .iter()
        .filter_map(|c| {
            c.error
                .as_ref()
                .map(|e| format!("{}/{}: {e}", c.kind, c.name))
        })
        .collect();
    let err = match failed.len() {
        0 => return Ok(Exit::Ok),
        1 => CommandError::remote(&failed[0]),
        n => CommandError::remote(format!(
            "{n} node classes resolved no AMI: {}",
            failed.join("; ")
        )),
    };
    let denied = doc
        .node_classes
        .iter()
        .any(|c| c.reason.as_deref() == Some("PermissionDenied"));
    Err(if denied {
        err.with_hint(PERMISSIONS_HINT)
    } else {
        err
    })
}

fn remote(e: CloudError) -> CommandError {
    let hint = match &e {
        CloudError::NoRegion { hint: None } => Some("e.g. --region us-east-1"),
        CloudError::NoRegion { hint: Some(_) } => None,
        _ if e.is_permission() => {
            Some("the AWS identity needs ssm:GetParameters and ec2:DescribeImages")
        }
        _ => None,
    };
    let err = CommandError::remote(e);
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

fn select_classes<'a>(
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

/// `kind: AMIResolution` (SPEC §5.6).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    api_version: &'static str,
    kind: &'static str,
    region: String,
    kubernetes_version: String,
    kubernetes_version_source: VersionSource,
    node_classes: Vec<ClassDoc>,
    aws_calls: CallCounts,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ClassDoc {
    name: String,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ami_family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_file: Option<String>,
    terms: Vec<TermDoc>,
    /// The winners, newest first: what `status.amis` would hold.
    images: Vec<ImageDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TermDoc {
    /// The term as written.
    term: String,
    /// `SSM` or `DescribeImages`.
    source_type: &'static str,
    /// The SSM parameter, or the DescribeImages filters.
    source: String,
    /// SSM: the parameter's value (`null`: the parameter does not exist, a variant absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Option<String>>,
    /// SSM: the DescribeImages request its value joined.
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<String>,
    images: Vec<ImageDoc>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ImageDoc {
    id: String,
    name: Option<String>,
    architecture: String,
    creation_date: Option<String>,
    deprecated: bool,
    requirements: Vec<RequirementDoc>,
}

#[derive(Debug, Clone, Serialize)]
struct RequirementDoc {
    key: String,
    operator: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    values: Vec<String>,
}

fn image_doc(i: &ResolvedImage) -> ImageDoc {
    ImageDoc {
        id: i.id.clone(),
        name: i.name.clone(),
        architecture: i.architecture.clone(),
        creation_date: i.creation_date.clone(),
        deprecated: i.deprecated,
        requirements: i
            .requirements
            .iter()
            .map(|r| RequirementDoc {
                key: r.key.clone(),
                operator: r.operator.as_str(),
                values: r.values.clone(),
            })
            .collect(),
    }
}

fn term_docs(r: &AmiResolution) -> Vec<TermDoc> {
    let query_of = |i: usize| r.queries.iter().position(|q| q.terms.contains(&i));
    let with_id = |id: &str| -> Vec<ImageDoc> {
        r.images
            .iter()
            .filter(|m| m.id == id)
            .map(image_doc)
            .collect()
    };
    let mut out = Vec::new();
    for (i, term) in r.plan.terms.iter().enumerate() {
        let query = query_of(i);
        let query_text = query.map(|q| r.queries[q].query.to_string());
        match &term.source {
            TermSource::Ssm(lookups) => {
                for l in lookups {
                    let value = r.ssm.get(&l.path).cloned().flatten();
                    out.push(TermDoc {
                        term: term.label.clone(),
                        source_type: "SSM",
                        source: l.path.clone(),
                        images: value.as_deref().map(with_id).unwrap_or_default(),
                        value: Some(value),
                        query: query_text.clone(),
                    });
                }
            }
            TermSource::SsmParameter(name) => {
                let value = r.ssm.get(name).cloned().flatten();
                out.push(TermDoc {
                    term: term.label.clone(),
                    source_type: "SSM",
                    source: name.clone(),
                    images: value.as_deref().map(with_id).unwrap_or_default(),
                    value: Some(value),
                    query: query_text,
                });
            }
            TermSource::Id(id) => out.push(TermDoc {
                term: term.label.clone(),
                source_type: "DescribeImages",
                source: query_text.unwrap_or_else(|| format!("image-id={id}")),
                value: None,
                query: None,
                images: with_id(id),
            }),
            TermSource::Query(q) => {
                let returned: Vec<&str> = query
                    .map(|qi| r.results[qi].iter().map(|i| i.id.as_str()).collect())
                    .unwrap_or_default();
                out.push(TermDoc {
                    term: term.label.clone(),
                    source_type: "DescribeImages",
                    source: q.to_string(),
                    value: None,
                    query: None,
                    images: r
                        .images
                        .iter()
                        .filter(|m| returned.contains(&m.id.as_str()))
                        .map(image_doc)
                        .collect(),
                });
            }
        }
    }
    out
}

/// Builds the document from resolutions (pure, for tests).
pub fn document(
    classes: &[&NodeClass],
    results: &[Result<AmiResolution, AmiError>],
    version: KubeVersion,
    source: VersionSource,
    region: &str,
    calls: &CallCounts,
) -> Document {
    let node_classes = classes
        .iter()
        .zip(results)
        .map(|(c, r)| {
            let mut doc = ClassDoc {
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
                    doc.terms = term_docs(res);
                    doc.images = res.images.iter().map(image_doc).collect();
                    if let Some(p) = res.problem() {
                        doc.error = Some(p);
                        doc.reason = Some("AMINotFound".into());
                    }
                }
                Err(e) => {
                    doc.error = Some(e.to_string());
                    doc.reason = Some(
                        match e {
                            AmiError::Cloud(c) => c.reason(),
                            AmiError::VersionGuard { .. } => "UnsupportedKubernetesVersion",
                            _ => "InvalidAMISelector",
                        }
                        .into(),
                    );
                }
            }
            doc
        })
        .collect();
    Document {
        api_version: API_VERSION,
        kind: "AMIResolution",
        region: region.to_string(),
        kubernetes_version: version.to_string(),
        kubernetes_version_source: source,
        node_classes,
        aws_calls: calls.clone(),
    }
}

/// Requirements as people read them: `arch=amd64 !gpu-count accelerator-count`.
fn short_requirements(reqs: &[RequirementDoc]) -> String {
    reqs.iter()
        .map(|r| {
            let key = r
                .key
                .trim_start_matches("karpenter.k8s.aws/instance-")
                .trim_start_matches("node.kubernetes.io/")
                .trim_start_matches("kubernetes.io/");
            match Operator::parse(r.operator) {
                Some(Operator::Exists) => key.to_string(),
                Some(Operator::DoesNotExist) => format!("!{key}"),
                Some(Operator::In) => format!("{key}={}", r.values.join("|")),
                _ => format!("{key} {} [{}]", r.operator, r.values.join(",")),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn render(ctx: &mut Context<'_>, doc: &Document) -> Result<(), CommandError> {
    let io = |e: std::io::Error| CommandError::remote(format!("writing output: {e}"));
    match ctx.global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            write_document(ctx.out, ctx.global.output, doc).map_err(io)
        }
        OutputFormat::Name => {
            let mut seen = Vec::new();
            for c in &doc.node_classes {
                for i in &c.images {
                    if !seen.contains(&i.id) {
                        writeln!(ctx.out, "{}", i.id).map_err(io)?;
                        seen.push(i.id.clone());
                    }
                }
            }
            Ok(())
        }
        format => {
            let wide = format == OutputFormat::Wide;
            let mut headers = vec![
                "NODECLASS",
                "TERM",
                "SOURCE",
                "AMI",
                "NAME",
                "ARCH",
                "CREATED",
                "DEPRECATED",
            ];
            if wide {
                headers.push("REQUIREMENTS");
                headers.push("QUERY");
            }
            let mut table = Table::new(&headers);
            for c in &doc.node_classes {
                if c.terms.is_empty() {
                    table.row(vec![
                        c.name.clone(),
                        "-".into(),
                        format!("error: {}", c.error.clone().unwrap_or_default()),
                    ]);
                }
                for t in &c.terms {
                    let source = match t.source_type {
                        "SSM" => format!("ssm {}", t.source),
                        _ => t.source.clone(),
                    };
                    let mut base = vec![c.name.clone(), t.term.clone(), source];
                    if t.images.is_empty() {
                        let why = match &t.value {
                            Some(None) => "(absent)".to_string(),
                            Some(Some(v)) if !v.starts_with("ami-") => format!("(not an AMI: {v})"),
                            Some(Some(v)) => format!("{v} (not chosen)"),
                            None => "(no match)".to_string(),
                        };
                        base.push(why);
                        if wide {
                            base.extend([
                                "".into(),
                                "".into(),
                                "".into(),
                                "".into(),
                                "".into(),
                                t.query.clone().unwrap_or_default(),
                            ]);
                        }
                        table.row(base);
                        continue;
                    }
                    for i in &t.images {
                        let mut row = base.clone();
                        row.push(i.id.clone());
                        row.push(i.name.clone().unwrap_or_else(|| "-".into()));
                        row.push(i.architecture.clone());
                        row.push(
                            i.creation_date
                                .as_deref()
                                .map(|d| d.get(..10).unwrap_or(d).to_string())
                                .unwrap_or_else(|| "-".into()),
                        );
                        row.push(if i.deprecated {
                            "yes".into()
                        } else {
                            "no".into()
                        });
                        if wide {
                            row.push(short_requirements(&i.requirements));
                            row.push(t.query.clone().unwrap_or_default());
                        }
                        table.row(row);
                    }
                }
            }
            table.write(ctx.out, !ctx.global.no_headers).map_err(io)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_render_compactly() {
        let r = |k: &str, op: &'static str, v: &[&str]| RequirementDoc {
            key: k.into(),
            operator: op,
            values: v.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            short_requirements(&[
                r("kubernetes.io/arch", "In", &["amd64"]),
                r("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", &[]),
                r(
                    "karpenter.k8s.aws/instance-accelerator-count",
                    "Exists",
                    &[]
                ),
                r("node.kubernetes.io/windows-build", "In", &["10.0.20348"]),
            ]),
            "arch=amd64 !gpu-count accelerator-count windows-build=10.0.20348"
        );
    }
}
