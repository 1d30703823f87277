//! What a node class resolves to *now* — the facts AMI, security-group and subnet drift compare a
//! node against — and where each fact came from, so an explanation can name its source
//! (`via SSM /aws/service/eks/...`).
//!
//! SPEC §4: AMIs are resolved live from SSM/EC2 and **not** trusted from a possibly stale
//! `EC2NodeClass.status` (KARPENTER.md §8: without a running controller the status goes stale).
//! Live gatherers build [`ClassFacts`] from [`AmiResolution`]s ([`images_from_resolution`]);
//! the offline command builds them from `--ssm-param` values and selector ids
//! ([`offline_class_facts`]), falling back to the status written in the manifests. Either way
//! [`stale_status_notes`] says when the status disagrees with what was resolved.

use std::collections::{BTreeMap, BTreeSet};

use crate::cloud::ami::{self, AmiResolution, KubeVersion, TermSource};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass};
use crate::model::requirements::{NodeSelectorRequirement, Operator};

/// A fact that is known, or why it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact<T> {
    /// Resolved.
    Known(T),
    /// Could not be resolved: one line saying why and what would help.
    Unknown(String),
}

impl<T> Default for Fact<T> {
    fn default() -> Self {
        Fact::Unknown("not resolved".into())
    }
}

impl<T> Fact<T> {
    /// The value, if known.
    pub fn known(&self) -> Option<&T> {
        match self {
            Fact::Known(v) => Some(v),
            Fact::Unknown(_) => None,
        }
    }
}

/// An AMI a class resolves to, with the requirement set it serves (one entry of
/// `status.amis`, KARPENTER.md §3.4) and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedImage {
    /// `ami-…`.
    pub id: String,
    /// AMI name, when known.
    pub name: Option<String>,
    /// Requirements (architecture and variant). Empty means "not known" (an id given offline
    /// without DescribeImages): such an image is accepted for every instance type.
    pub requirements: Vec<NodeSelectorRequirement>,
    /// `SSM /aws/service/...`, `amiSelectorTerms id`, `DescribeImages name=...`,
    /// `status.amis`.
    pub source: String,
}

/// A class's subnets or security groups now, with their source.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdSet {
    /// Ids.
    pub ids: BTreeSet<String>,
    /// Where they came from (`DescribeSubnets`, `status.subnets`, `selector ids`).
    pub source: String,
}

/// Everything drift needs to know about one node class now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassFacts {
    /// AMIs, best first (newest first within a requirement set).
    pub images: Fact<Vec<ExpectedImage>>,
    /// Subnet ids.
    pub subnets: Fact<IdSet>,
    /// Security-group ids.
    pub security_groups: Fact<IdSet>,
}

/// The key a class is filed under: `Kind/name`.
pub fn class_key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

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
    ami::sort_requirements(&mut reqs);
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

/// Images from the class's `status.amis` as written (what the controller last resolved).
pub fn images_from_status(class: &NodeClass) -> Vec<ExpectedImage> {
    class
        .status
        .amis
        .iter()
        .map(|a| ExpectedImage {
            id: a.id.clone(),
            name: a.name.clone(),
            requirements: a.requirements.clone(),
            source: format!("{} {} status.amis", class.kind, class.name),
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
        if k != "aws::ids" && k != "aws-ids" {
            return None;
        }
        ids.extend(ami::split_list(v));
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
        let images = images_from_status(class);
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
    let plan = match ami::plan(class, k) {
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

/// Subnet or security-group ids offline: `id` terms (or v1alpha1 `aws-ids`) when the selection
/// is ids only, else the class's status.
fn offline_ids(class: &NodeClass, subnets: bool) -> Fact<IdSet> {
    let (terms, legacy_key, status_ids, what): (_, _, Vec<String>, _) = if subnets {
        (
            &class.subnet_selector_terms,
            "subnetSelector",
            class
                .status
                .subnets
                .iter()
                .map(|(id, _)| id.clone())
                .collect(),
            "subnets",
        )
    } else {
        (
            &class.security_group_selector_terms,
            "securityGroupSelector",
            class
                .status
                .security_groups
                .iter()
                .map(|(id, _)| id.clone())
                .collect(),
            "securityGroups",
        )
    };
    let legacy = class
        .legacy_selectors
        .get(legacy_key)
        .filter(|s| !s.is_empty());
    let ids: Option<BTreeSet<String>> = match legacy {
        Some(sel) if class.generation == Some(ApiGeneration::V1Alpha5) => {
            let mut ids = BTreeSet::new();
            let mut only_ids = true;
            for (k, v) in sel {
                if k == "aws-ids" || k == "aws::ids" {
                    ids.extend(ami::split_list(v));
                } else {
                    only_ids = false;
                }
            }
            only_ids.then_some(ids)
        }
        _ if !terms.is_empty() && terms.iter().all(|t| t.id.is_some()) => {
            Some(terms.iter().filter_map(|t| t.id.clone()).collect())
        }
        _ => None,
    };
    if let Some(ids) = ids {
        return Fact::Known(IdSet {
            ids,
            source: "selector ids".into(),
        });
    }
    if !status_ids.is_empty() {
        return Fact::Known(IdSet {
            ids: status_ids.into_iter().collect(),
            source: format!("{} {} status.{what}", class.kind, class.name),
        });
    }
    Fact::Unknown(format!(
        "{} {} has no status.{what} and its selector needs {}",
        class.kind,
        class.name,
        if subnets {
            "DescribeSubnets"
        } else {
            "DescribeSecurityGroups"
        }
    ))
}

/// All offline facts of a class.
pub fn offline_class_facts(
    class: &NodeClass,
    k: KubeVersion,
    ssm: &BTreeMap<String, String>,
) -> ClassFacts {
    ClassFacts {
        images: offline_images(class, k, ssm),
        subnets: offline_ids(class, true),
        security_groups: offline_ids(class, false),
    }
}

fn join(ids: &BTreeSet<&str>) -> String {
    if ids.is_empty() {
        "nothing".into()
    } else {
        ids.iter().copied().collect::<Vec<_>>().join(", ")
    }
}

/// Notes for a class whose written `status` disagrees with what was resolved now (KARPENTER.md
/// §8: the status is only refreshed while a controller runs). Nothing when the status is empty
/// or the facts came from the status itself.
pub fn stale_status_notes(class: &NodeClass, facts: &ClassFacts) -> Vec<String> {
    let mut out = Vec::new();
    let who = format!("{} {}", class.kind, class.name);
    if let Fact::Known(images) = &facts.images {
        let resolved: BTreeSet<&str> = images.iter().map(|i| i.id.as_str()).collect();
        let status: BTreeSet<&str> = class.status.amis.iter().map(|a| a.id.as_str()).collect();
        let from_status = images.iter().all(|i| i.source.ends_with("status.amis"));
        if !status.is_empty() && !from_status && resolved != status {
            out.push(format!(
                "{who}: status.amis ({}) is stale: the selection resolves to {} now",
                join(&status),
                join(&resolved)
            ));
        }
    }
    let status_sets = [
        (
            &facts.subnets,
            class
                .status
                .subnets
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<BTreeSet<&str>>(),
            "subnets",
        ),
        (
            &facts.security_groups,
            class
                .status
                .security_groups
                .iter()
                .map(|(id, _)| id.as_str())
                .collect(),
            "securityGroups",
        ),
    ];
    for (fact, status, what) in status_sets {
        if let Fact::Known(set) = fact {
            let resolved: BTreeSet<&str> = set.ids.iter().map(String::as_str).collect();
            if !status.is_empty() && !set.source.contains("status.") && resolved != status {
                out.push(format!(
                    "{who}: status.{what} ({}) is stale: the selection resolves to {} now",
                    join(&status),
                    join(&resolved)
                ));
            }
        }
    }
    out
}
