//! Drift's facts about a class's AMIs ([`crate::drift::facts`]), from what this adapter
//! resolves: a live [`AmiResolution`], or offline the class's plan with SSM values given on the
//! command line (`--ssm-param`), selector ids, and the status written in the manifests.

use std::collections::BTreeMap;

use super::{plan, sort_requirements, AmiResolution, KubeVersion, TermSource};
use crate::drift::facts::{self, ClassFacts, ExpectedImage, Fact};
use crate::model::labels;
use crate::model::legacy_selector::{is_ids_key, split_list};
use crate::model::nodepool::{ApiGeneration, NodeClass};
use crate::model::requirements::{NodeSelectorRequirement, Operator};

/// `x86_64`/`arm64` from an EKS-optimized SSM path (the architecture is part of every path).
fn arch_of_path(path: &str) -> &'static str {
    if path.contains("arm64") {
        "arm64"
    } else {
        "amd64"
    }
}

fn with_arch(set: &[NodeSelectorRequirement], arch: &str) -> Vec<NodeSelectorRequirement> {
    let mut reqs: Vec<NodeSelectorRequirement> = set
        .iter()
        .filter(|r| r.key != labels::ARCH)
        .cloned()
        .collect();
    reqs.push(NodeSelectorRequirement::new(
        labels::ARCH,
        Operator::In,
        &[arch],
    ));
    sort_requirements(&mut reqs);
    reqs
}

/// Images from a live resolution (SSM + DescribeImages), best first, each naming its source.
pub fn images_from_resolution(res: &AmiResolution) -> Vec<ExpectedImage> {
    res.images
        .iter()
        .map(|image| {
            let mut source = None;
            for (qi, q) in res.queries.iter().enumerate() {
                let returned = res
                    .results
                    .get(qi)
                    .is_some_and(|r| r.iter().any(|i| i.id == image.id));
                if !returned {
                    continue;
                }
                for &ti in &q.terms {
                    let Some(term) = res.plan.terms.get(ti) else {
                        continue;
                    };
                    let value_is = |name: &str| {
                        res.ssm.get(name).and_then(|v| v.as_deref()) == Some(image.id.as_str())
                    };
                    source = match &term.source {
                        TermSource::Ssm(lookups) => lookups
                            .iter()
                            .find(|l| value_is(&l.path))
                            .map(|l| format!("SSM {}", l.path)),
                        TermSource::SsmParameter(name) if value_is(name) => {
                            Some(format!("SSM {name}"))
                        }
                        TermSource::Id(id) if id == &image.id => {
                            Some(format!("amiSelectorTerms id {id}"))
                        }
                        TermSource::Query(query) => Some(format!("DescribeImages {query}")),
                        _ => None,
                    };
                    if source.is_some() {
                        break;
                    }
                }
                if source.is_some() {
                    break;
                }
            }
            ExpectedImage {
                id: image.id.clone(),
                name: image.name.clone(),
                requirements: image.requirements.clone(),
                source: source.unwrap_or_else(|| "DescribeImages".into()),
            }
        })
        .collect()
}

/// v1alpha1 `amiSelector: {aws::ids: "a,b"}` (the seed walkthrough's form): the ids, when the
/// selector holds nothing else.
fn legacy_ids(class: &NodeClass) -> Option<Vec<String>> {
    let selector = class.legacy_selectors.get("amiSelector")?;
    if selector.is_empty() || class.generation != Some(ApiGeneration::V1Alpha5) {
        return None;
    }
    let mut ids = Vec::new();
    for (k, v) in selector {
        if !is_ids_key(k) {
            return None;
        }
        ids.extend(split_list(v));
    }
    Some(ids)
}

/// The AMIs a class resolves to offline: ids from `id` terms and v1alpha1 `aws::ids` selectors,
/// SSM-based terms (aliases, `amiFamily` defaults, `ssmParameter`) from `ssm` values given with
/// `--ssm-param`. Name/tag selectors need DescribeImages; then, and when SSM values are
/// missing, the class's `status.amis` is used if it has one.
pub fn offline_images(
    class: &NodeClass,
    k: KubeVersion,
    ssm: &BTreeMap<String, String>,
) -> Fact<Vec<ExpectedImage>> {
    let from_status = || {
        let images = facts::images_from_status(class);
        (!images.is_empty()).then_some(images)
    };
    if let Some(ids) = legacy_ids(class) {
        return Fact::Known(
            ids.into_iter()
                .map(|id| ExpectedImage {
                    source: format!("amiSelector aws::ids {id}"),
                    id,
                    name: None,
                    requirements: vec![],
                })
                .collect(),
        );
    }
    let plan = match plan(class, k) {
        Ok(p) => p,
        Err(e) => {
            return match from_status() {
                Some(images) => Fact::Known(images),
                None => Fact::Unknown(format!("{} {}: {e}", class.kind, class.name)),
            }
        }
    };
    let mut images = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut needs_describe = Vec::new();
    for term in &plan.terms {
        match &term.source {
            TermSource::Ssm(lookups) => {
                let mut any = false;
                for l in lookups {
                    if let Some(id) = ssm.get(&l.path) {
                        any = true;
                        for set in &l.sets {
                            images.push(ExpectedImage {
                                id: id.clone(),
                                name: None,
                                requirements: with_arch(set, arch_of_path(&l.path)),
                                source: format!("SSM {}", l.path),
                            });
                        }
                    }
                }
                if !any {
                    missing.extend(lookups.iter().map(|l| l.path.clone()));
                }
            }
            TermSource::SsmParameter(name) => match ssm.get(name) {
                Some(id) if id.starts_with("ami-") => images.push(ExpectedImage {
                    id: id.clone(),
                    name: None,
                    requirements: vec![],
                    source: format!("SSM {name}"),
                }),
                Some(_) => {}
                None => missing.push(name.clone()),
            },
            TermSource::Id(id) => images.push(ExpectedImage {
                id: id.clone(),
                name: None,
                requirements: vec![],
                source: format!("amiSelectorTerms id {id}"),
            }),
            TermSource::Query(_) => needs_describe.push(term.label.clone()),
        }
    }
    if missing.is_empty() && needs_describe.is_empty() {
        // Id terms only, and the status lists some of those ids and nothing else: that is
        // Karpenter's resolution of these very ids — one image per requirement set, a
        // non-deprecated one over a deprecated one (aws v1.14.1 `providers/amifamily/ami.go`
        // List, `compareAMI`), each with its architecture — which the ids alone cannot tell (aws
        // `test/suites/drift/suite_test.go` "should disrupt nodes for deprecated AMIs to
        // non-deprecated AMIs": terms `[amdAMI, deprecatedAMI]`, status `[amdAMI]`).
        let only_ids = plan
            .terms
            .iter()
            .all(|t| matches!(t.source, TermSource::Id(_)));
        let status = &class.status.amis;
        if only_ids
            && !status.is_empty()
            && status.iter().all(|a| images.iter().any(|i| i.id == a.id))
        {
            if let Some(resolved) = from_status() {
                return Fact::Known(resolved);
            }
        }
        return Fact::Known(images);
    }
    if let Some(images) = from_status() {
        return Fact::Known(images);
    }
    let mut why = Vec::new();
    if !needs_describe.is_empty() {
        why.push(format!("{} need DescribeImages", needs_describe.join(", ")));
    }
    if !missing.is_empty() {
        let shown: Vec<&String> = missing.iter().take(2).collect();
        why.push(format!(
            "no SSM value given (e.g. --ssm-param {}=ami-…{})",
            shown[0],
            if missing.len() > 1 {
                format!(", {} parameters in all", missing.len())
            } else {
                String::new()
            }
        ));
    }
    Fact::Unknown(format!(
        "{} {} has no status.amis and {}",
        class.kind,
        class.name,
        why.join("; ")
    ))
}

/// What the images of a class whose AMI terms are an alias or a pre-v1 family default run on,
/// without resolving them (offline, no SSM value, no `status.amis`): one `(parameter, requirement
/// set)` per image requirement set the family publishes, the architecture from the parameter's
/// path — aws v1.14.1 `amifamily/{al2,al2023,bottlerocket,windows}.go` `DescribeImageQuery`
/// (`KnownRequirements` + DescribeImages' architecture), v0.37.7 `DefaultAMIs`. Which parameters a
/// family publishes and what their images run on do not depend on the Kubernetes version (only
/// the version guards do: AL2 ends at 1.32, Windows 2025 starts at 1.35, so the first version a
/// plan accepts is used). `None` when a term is an id, an `ssmParameter` or a query (those
/// images' requirements come from DescribeImages) or the alias is refused.
pub fn family_image_requirements(
    class: &NodeClass,
) -> Option<Vec<(String, Vec<NodeSelectorRequirement>)>> {
    let plan = [KubeVersion::new(1, 32), KubeVersion::new(1, 35)]
        .into_iter()
        .find_map(|k| plan(class, k).ok())?;
    let mut out = Vec::new();
    for term in &plan.terms {
        let TermSource::Ssm(lookups) = &term.source else {
            return None;
        };
        for l in lookups {
            for set in &l.sets {
                out.push((l.path.clone(), with_arch(set, arch_of_path(&l.path))));
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// All offline facts of a class.
pub fn offline_class_facts(
    class: &NodeClass,
    k: KubeVersion,
    ssm: &BTreeMap<String, String>,
) -> ClassFacts {
    ClassFacts {
        images: offline_images(class, k, ssm),
        subnets: facts::offline_ids(class, true),
        security_groups: facts::offline_ids(class, false),
        placement_group: facts::offline_placement_group(class, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drift::facts::stale_status_notes;
    use crate::model::nodepool::{AmiSelectorTerm, AmiStatus};

    const SSM_125: &str = "/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id";

    /// aws v1.14.1 `amifamily/al2.go` `DescribeImageQuery`: of AL2's three parameters only
    /// `amazon-linux-2-gpu` (x86_64) carries the nvidia/neuron sets; v0.37.7 `al2023.go`
    /// `DefaultAMIs`: a pre-v1 AL2023 default attaches the architecture only; an id term's
    /// requirements come from DescribeImages, so none are known offline.
    #[test]
    fn family_image_requirements_by_architecture() {
        let class = |generation, family: Option<&str>, terms: Vec<AmiSelectorTerm>| NodeClass {
            name: "c".into(),
            kind: "EC2NodeClass".into(),
            generation: Some(generation),
            ami_family: family.map(str::to_string),
            ami_selector_terms: terms,
            ..NodeClass::default()
        };
        let alias = |a: &str| AmiSelectorTerm {
            alias: Some(a.into()),
            ..AmiSelectorTerm::default()
        };
        let shown = |c: &NodeClass| -> Vec<String> {
            family_image_requirements(c)
                .unwrap()
                .iter()
                .map(|(_, set)| {
                    let mut s: Vec<String> = set
                        .iter()
                        .map(|r| format!("{} {:?} {}", r.key, r.operator, r.values.join(",")))
                        .collect();
                    s.sort();
                    s.join("; ")
                })
                .collect()
        };
        let al2 = shown(&class(ApiGeneration::V1, None, vec![alias("al2@latest")]));
        assert_eq!(al2.len(), 4, "{al2:?}");
        let gpu: Vec<&String> = al2
            .iter()
            .filter(|s| s.contains("gpu-count Exists"))
            .collect();
        assert_eq!(gpu.len(), 1, "{al2:?}");
        assert!(gpu[0].contains("kubernetes.io/arch In amd64"), "{gpu:?}");
        let al2023 = shown(&class(ApiGeneration::V1Beta1, Some("AL2023"), vec![]));
        assert_eq!(
            al2023,
            ["kubernetes.io/arch In amd64", "kubernetes.io/arch In arm64"]
        );
        let by_id = class(
            ApiGeneration::V1,
            None,
            vec![AmiSelectorTerm {
                id: Some("ami-1".into()),
                ..AmiSelectorTerm::default()
            }],
        );
        assert_eq!(family_image_requirements(&by_id), None);
    }

    #[test]
    fn offline_images_from_ssm_values_ids_and_status() {
        let mut c = NodeClass {
            name: "newnode".into(),
            kind: "EC2NodeClass".into(),
            generation: Some(ApiGeneration::V1),
            ami_family: Some("AL2".into()),
            ami_selector_terms: vec![AmiSelectorTerm {
                alias: Some("al2@latest".into()),
                ..Default::default()
            }],
            ..NodeClass::default()
        };
        let k = KubeVersion::new(1, 25);
        let ssm: BTreeMap<String, String> = [
            (SSM_125, "ami-0bb"),
            (
                "/aws/service/eks/optimized-ami/1.25/amazon-linux-2-arm64/recommended/image_id",
                "ami-0arm",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let Fact::Known(images) = offline_images(&c, k, &ssm) else {
            panic!("known")
        };
        let ids: Vec<(&str, &str)> = images
            .iter()
            .map(|i| {
                (
                    i.id.as_str(),
                    i.requirements
                        .iter()
                        .find(|r| r.key == labels::ARCH)
                        .unwrap()
                        .values[0]
                        .as_str(),
                )
            })
            .collect();
        assert_eq!(ids, [("ami-0bb", "amd64"), ("ami-0arm", "arm64")]);
        assert_eq!(images[0].source, format!("SSM {SSM_125}"));
        // Nothing given and no status: Unknown, saying which parameter to pass.
        let Fact::Unknown(why) = offline_images(&c, k, &BTreeMap::new()) else {
            panic!("unknown")
        };
        assert!(
            why.contains(&format!("--ssm-param {SSM_125}=ami-…")),
            "{why}"
        );
        // The status fills in, and a note says when it disagrees with the computed answer.
        c.status.amis = vec![AmiStatus {
            id: "ami-0aa".into(),
            name: Some("amazon-eks-node-1.24-v20230703".into()),
            requirements: vec![NodeSelectorRequirement::new(
                labels::ARCH,
                Operator::In,
                &["amd64"],
            )],
            deprecated: false,
        }];
        let Fact::Known(from_status) = offline_images(&c, k, &BTreeMap::new()) else {
            panic!("status")
        };
        assert_eq!(from_status[0].source, "EC2NodeClass newnode status.amis");
        let computed = ClassFacts {
            images: offline_images(&c, k, &ssm),
            ..ClassFacts::default()
        };
        assert_eq!(
            stale_status_notes(&c, &computed),
            ["EC2NodeClass newnode: status.amis (ami-0aa) is stale: the selection resolves to ami-0arm, ami-0bb now"]
        );
        let from_status_facts = ClassFacts {
            images: Fact::Known(from_status),
            ..ClassFacts::default()
        };
        assert!(stale_status_notes(&c, &from_status_facts).is_empty());
    }

    /// aws `test/suites/drift/suite_test.go` "should disrupt nodes for deprecated AMIs to
    /// non-deprecated AMIs": id terms `[ami-amd, ami-dep]` whose status lists `ami-amd` only
    /// (the deprecated one lost to it) resolve to the status, with its architecture; a status
    /// naming an id the terms no longer select is stale and the ids win.
    #[test]
    fn id_terms_take_the_status_when_it_lists_only_those_ids() {
        let id = |id: &str| AmiSelectorTerm {
            id: Some(id.into()),
            ..Default::default()
        };
        let status = |id: &str| AmiStatus {
            id: id.into(),
            name: None,
            requirements: vec![NodeSelectorRequirement::new(
                labels::ARCH,
                Operator::In,
                &["amd64"],
            )],
            deprecated: false,
        };
        let mut c = NodeClass {
            name: "default".into(),
            kind: "EC2NodeClass".into(),
            generation: Some(ApiGeneration::V1),
            ami_family: Some("AL2023".into()),
            ami_selector_terms: vec![id("ami-amd"), id("ami-dep")],
            ..NodeClass::default()
        };
        c.status.amis = vec![status("ami-amd")];
        let k = KubeVersion::new(1, 30);
        let Fact::Known(images) = offline_images(&c, k, &BTreeMap::new()) else {
            panic!("known")
        };
        let ids: Vec<&str> = images.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["ami-amd"]);
        assert_eq!(images[0].requirements, c.status.amis[0].requirements);
        c.status.amis = vec![status("ami-old")];
        let Fact::Known(images) = offline_images(&c, k, &BTreeMap::new()) else {
            panic!("known")
        };
        let ids: Vec<&str> = images.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["ami-amd", "ami-dep"]);
    }
}
