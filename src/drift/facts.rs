//! What a node class resolves to *now* — the facts AMI, security-group and subnet drift compare a
//! node against — and where each fact came from, so an explanation can name its source
//! (`via SSM /aws/service/eks/...`).
//!
//! docs/spec.md §4: AMIs are resolved live from SSM/EC2 and **not** trusted from a possibly stale
//! `EC2NodeClass.status` (docs/karpenter.md §8: without a running controller the status goes stale).
//! The AWS adapter builds [`ClassFacts`] (`cloud::ami::facts`: from a live AMI resolution, or
//! offline from `--ssm-param` values and selector ids, falling back to the status written in
//! the manifests); [`stale_status_notes`] says when the status disagrees with what was resolved.

use std::collections::BTreeSet;

use crate::model::legacy_selector::{is_ids_key, split_list};
use crate::model::nodepool::{ApiGeneration, NodeClass};
use crate::model::requirements::NodeSelectorRequirement;

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
/// `status.amis`, docs/karpenter.md §3.4) and where it came from.
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
    /// The id of the placement group the class's `placementGroupSelector` resolves to now
    /// (`Known(None)`: none available, or no selector); read only for a class with a selector.
    pub placement_group: Fact<Option<String>>,
}

/// The placement group of a class offline: nothing to resolve without a selector; with one,
/// the groups `groups` tells (a `--catalog` with `placementGroups`), else unknown.
pub fn offline_placement_group(
    class: &NodeClass,
    groups: Option<&[crate::model::placement_group::PlacementGroup]>,
) -> Fact<Option<String>> {
    let Some(selector) = crate::model::placement_group::PlacementGroupSelector::of(class) else {
        return Fact::Known(None);
    };
    match groups {
        Some(groups) => Fact::Known(selector.resolve(groups).map(|g| g.id.clone())),
        None => Fact::Unknown(format!(
            "PlacementGroupDrift: {} {}'s placement group ({selector}) is not resolved offline \
             (DescribePlacementGroups; a --catalog with placementGroups tells it)",
            class.kind, class.name
        )),
    }
}

/// The key a class is filed under: `Kind/name`.
pub fn class_key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
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

/// Subnet or security-group ids offline: `id` terms (or v1alpha1 `aws-ids`) when the selection
/// is ids only, else the class's status.
pub fn offline_ids(class: &NodeClass, subnets: bool) -> Fact<IdSet> {
    let (terms, legacy_key, status_ids, what): (_, _, Vec<String>, _) = if subnets {
        (
            &class.subnet_selector_terms,
            "subnetSelector",
            class.status.subnets.iter().map(|s| s.id.clone()).collect(),
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
                if is_ids_key(k) {
                    ids.extend(split_list(v));
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

fn join(ids: &BTreeSet<&str>) -> String {
    if ids.is_empty() {
        "nothing".into()
    } else {
        ids.iter().copied().collect::<Vec<_>>().join(", ")
    }
}

/// Notes for a class whose written `status` disagrees with what was resolved now (docs/karpenter.md
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
                .map(|s| s.id.as_str())
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
