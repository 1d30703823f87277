//! `ami` output: per class and term, the source (SSM parameter or DescribeImages filters) and
//! the images chosen (`-o wide` adds their requirements and the query), the AMI ids
//! (`-o name`), or the `AMIResolution` document (docs/spec.md §5.6).

use std::io::Write;

use serde::Serialize;

use super::io_error;
use crate::cli::output::{shown, write_document, Table, API_VERSION};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::cloud::CallCounts;
use crate::error::CommandError;
use crate::model::requirements::Operator;
use crate::usecases::ami::{AmiReport, ClassReport, RequirementReport, SourceType, VersionSource};

/// Writes the report.
pub fn report(
    global: &GlobalArgs,
    out: &mut dyn Write,
    report: &AmiReport,
) -> Result<(), CommandError> {
    match global.output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let doc = Document {
                api_version: API_VERSION,
                kind: "AMIResolution",
                region: &report.region,
                kubernetes_version: report.kubernetes_version.to_string(),
                kubernetes_version_source: report.kubernetes_version_source,
                node_classes: &report.node_classes,
                aws_calls: &report.aws_calls,
            };
            write_document(out, global.output, &doc).map_err(io_error)
        }
        OutputFormat::Name => {
            let mut seen = Vec::new();
            for c in &report.node_classes {
                for i in &c.images {
                    if !seen.contains(&i.id) {
                        writeln!(out, "{}", shown(&i.id)).map_err(io_error)?;
                        seen.push(i.id.clone());
                    }
                }
            }
            Ok(())
        }
        format => table(&report.node_classes, format == OutputFormat::Wide)
            .write(out, !global.no_headers)
            .map_err(io_error),
    }
}

fn table(classes: &[ClassReport], wide: bool) -> Table {
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
    for c in classes {
        if c.terms.is_empty() {
            table.row(vec![
                c.name.clone(),
                "-".into(),
                format!("error: {}", c.error.clone().unwrap_or_default()),
            ]);
        }
        for t in &c.terms {
            let source = match t.source_type {
                SourceType::Ssm => format!("ssm {}", t.source),
                SourceType::DescribeImages => t.source.clone(),
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
    table
}

/// Requirements as people read them: `arch=amd64 !gpu-count accelerator-count`.
fn short_requirements(reqs: &[RequirementReport]) -> String {
    reqs.iter()
        .map(|r| {
            let key = r
                .key
                .trim_start_matches("karpenter.k8s.aws/instance-")
                .trim_start_matches("node.kubernetes.io/")
                .trim_start_matches("kubernetes.io/");
            match r.operator {
                Operator::Exists => key.to_string(),
                Operator::DoesNotExist => format!("!{key}"),
                Operator::In => format!("{key}={}", r.values.join("|")),
                op => format!("{key} {} [{}]", op.as_str(), r.values.join(",")),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `kind: AMIResolution`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    api_version: &'static str,
    kind: &'static str,
    region: &'a str,
    kubernetes_version: String,
    kubernetes_version_source: VersionSource,
    node_classes: &'a [ClassReport],
    aws_calls: &'a CallCounts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_render_compactly() {
        let r = |k: &str, operator: Operator, v: &[&str]| RequirementReport {
            key: k.into(),
            operator,
            values: v.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            short_requirements(&[
                r("kubernetes.io/arch", Operator::In, &["amd64"]),
                r(
                    "karpenter.k8s.aws/instance-gpu-count",
                    Operator::DoesNotExist,
                    &[]
                ),
                r(
                    "karpenter.k8s.aws/instance-accelerator-count",
                    Operator::Exists,
                    &[]
                ),
                r(
                    "node.kubernetes.io/windows-build",
                    Operator::In,
                    &["10.0.20348"]
                ),
                r("karpenter.k8s.aws/instance-cpu", Operator::Gt, &["4"]),
            ]),
            "arch=amd64 !gpu-count accelerator-count windows-build=10.0.20348 cpu Gt [4]"
        );
    }
}
