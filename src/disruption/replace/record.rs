//! The record of a replacement in progress, on its node (the annotation [`REPLACEMENT`], JSON):
//! written before each step, so a killed run's re-run resumes where it stopped — never launching
//! a second replacement, never leaving a node cordoned for good. Records written by every
//! earlier version parse.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::Method;
use crate::model::digest::digest;
use crate::model::node::Node;

pub use crate::model::labels::REPLACEMENT;

/// The last step a replacement recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Tainted and cordoned; its replacements are (being) launched.
    #[default]
    Marked,
    /// Its replacements are launched (the record names their instances).
    Launched,
    /// Its pods are evicted; its instance and Node go next.
    Drained,
}

impl Step {
    /// The recorded spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Marked => "marked",
            Step::Launched => "launched",
            Step::Drained => "drained",
        }
    }
}

impl<'de> Deserialize<'de> for Step {
    /// A step this version does not know (a newer one wrote it) reads as `marked`, the safe
    /// one: the replacement is planned again under its recorded NodeClaim names, which adopts
    /// whatever was launched.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok([Step::Launched, Step::Drained]
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or(Step::Marked))
    }
}

/// What is recorded on a node being replaced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The last step done.
    pub step: Step,
    /// The disruption method (absent in records of earlier versions: drift).
    #[serde(default)]
    pub method: Method,
    /// Replacement NodeClaim names.
    pub node_claims: Vec<String>,
    /// Replacement instances, once launched.
    #[serde(default)]
    pub instances: Vec<String>,
    /// Why (the drift reason, or `Requested`).
    pub reason: String,
    /// When the replacement began (RFC 3339): part of its NodeClaim names.
    pub started_at: String,
    /// The node was cordoned already before the replacement began: a rollback leaves it so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cordoned_before: bool,
    /// The nodes of the one command this node goes with (a multi-node consolidation), the
    /// first launching for all; empty when it goes alone. A re-run resumes them together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The annotations each replacement NodeClaim was planned with, by its name
    /// (`scheduling::ClaimAnnotations`: the template's, `karpenter.sh/nodepool-hash` and
    /// `-version`, a NodeOverlay's `…-overlay-applied`), recorded at the mark: a re-run that
    /// adopts the launched instances registers their Nodes with them, as a fresh launch does
    /// (the options a NodeOverlay was judged on are not known after the plan). Absent in
    /// records of earlier versions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, BTreeMap<String, String>>,
}

impl Record {
    /// The record on `node`, if a replacement is in progress there (an unreadable one is
    /// none: the node is not touched as if in replacement).
    pub fn of(node: &Node) -> Option<Record> {
        node.annotations
            .get(REPLACEMENT)
            .and_then(|t| Record::parse(t))
    }

    /// A record from the annotation's text.
    pub fn parse(text: &str) -> Option<Record> {
        serde_json::from_str(text).ok()
    }

    /// The annotation's text.
    pub fn format(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether every replacement was launched (or the node drained already): a resumed run
    /// adopts the recorded instances and never launches again. A `marked` record, or one that
    /// names fewer instances than NodeClaims, is planned and launched again under the same
    /// NodeClaim names (which adopts whatever did get launched).
    pub fn launched_all(&self) -> bool {
        self.step == Step::Drained
            || (self.step == Step::Launched && self.instances.len() == self.node_claims.len())
    }
}

/// The name of replacement NodeClaim `index` of `pool` planned for `node` in the attempt
/// started at `attempt`: the name `recorded` at that index when it is of that pool (whatever
/// version of this tool wrote it, so the instances a killed run launched are adopted, not
/// launched again), else [`replacement_name`].
pub fn claim_name(
    recorded: &[String],
    pool: &str,
    index: usize,
    node: &Node,
    attempt: &str,
) -> String {
    match recorded.get(index) {
        Some(name) if name.starts_with(&format!("{pool}-")) => name.clone(),
        _ => replacement_name(pool, index, node, attempt),
    }
}

/// A replacement NodeClaim's name: `<pool>-<10 hex>` from the replaced node's instance (never
/// reused, unlike node names), the attempt's start time and the claim's index. A resumed run
/// (same record) finds the same instances by their NodeClaim tag; a later attempt for the same
/// node, or any other node, never adopts them — and the length differs from Karpenter's own
/// 5-character suffixes.
pub fn replacement_name(pool: &str, index: usize, node: &Node, attempt: &str) -> String {
    let index = index.to_string();
    let digest = digest(&[
        "replacement",
        pool,
        index.as_str(),
        node.instance_id().unwrap_or(node.name.as_str()),
        attempt,
    ]);
    format!("{pool}-{}", &digest[..10])
}
