//! The decision as data: docs/spec.md §9's `ConsolidationReport` (camelCase JSON/YAML).

use std::fmt;

use serde::Serialize;

use super::reason::Reason;

/// How Karpenter would disrupt a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// `expireAfter` reached.
    Expiration,
    /// A static NodePool's drifted NodeClaim replaced by a bare replica of its template
    /// (`StaticDrift`, v1.14). Kebab-case as the node record's `static-scale-down`.
    #[serde(rename = "static-drift")]
    StaticDrift,
    /// Drifted.
    Drift,
    /// Empty (v0.31/v0.37 empty-node consolidation included).
    Emptiness,
    /// Multi-node consolidation.
    Multi,
    /// Single-node consolidation.
    Single,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Expiration => "expiration",
            Method::StaticDrift => "static-drift",
            Method::Drift => "drift",
            Method::Emptiness => "emptiness",
            Method::Multi => "multi",
            Method::Single => "single",
        })
    }
}

/// What happens to the nodes of an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Deleted; the pods fit elsewhere (or, for v1 expiration, go pending).
    Delete,
    /// Replaced by new NodeClaim(s) launched first.
    Replace,
}

/// A node's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeDecision {
    /// Deleted.
    Delete,
    /// Replaced.
    Replace,
    /// Left alone.
    None,
}

/// A NodeClaim an action launches.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    /// NodePool it is launched from.
    pub node_pool: String,
    /// The cheapest option, what would most likely launch.
    pub instance_type: String,
    /// Every option, cheapest first.
    pub instance_types: Vec<String>,
    /// Capacity type of the cheapest option's offering.
    pub capacity_type: String,
    /// The capacity reservation that offering launches into, when `reserved` (the
    /// `karpenter.k8s.aws/capacity-reservation-id` the NodeClaim gets; consolidation_test.go
    /// Reserved Capacity Its check it on the replacement).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_id: Option<String>,
    /// Zones it may land in.
    pub zones: Vec<String>,
    /// Price of the cheapest option's cheapest compatible offering (USD/h).
    pub price_per_hour: f64,
}

/// One disruption command.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// The controller pass that starts it (1 = now).
    pub pass: u32,
    /// The method.
    pub method: Method,
    /// Delete or replace.
    pub decision: Decision,
    /// The nodes disrupted.
    pub nodes: Vec<String>,
    /// The (first) replacement NodeClaim.
    pub replacement: Option<Replacement>,
    /// Further replacements (drift and expiration may need several).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_replacements: Vec<Replacement>,
    /// Price of the nodes minus price of the replacements (USD/h).
    pub savings_per_hour: f64,
    /// Pods that move, `namespace/name`.
    pub pods: Vec<String>,
    /// Pods that find no place and go pending (v1 expiration is forceful).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pods_left_pending: Vec<String>,
}

/// A managed node and what happens to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    /// Node name.
    pub name: String,
    /// Its NodePool (Provisioner).
    pub node_pool: String,
    /// Instance type label.
    pub instance_type: String,
    /// Capacity type label.
    pub capacity_type: String,
    /// Price of its offering (USD/h), when known.
    pub price_per_hour: Option<f64>,
    /// Delete, replace or none.
    pub decision: NodeDecision,
    /// The replacement's cheapest type, for `replace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_type: Option<String>,
    /// The replacement's capacity type, for `replace` (`reserved` when it launches into a
    /// capacity reservation, priced at on-demand / 10,000,000: aws#7979, a c5.xlarge
    /// replaced by a c5.xlarge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_capacity_type: Option<String>,
    /// The method, unless `none`.
    pub method: Option<Method>,
    /// The pass of its action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// Why not, for `none`.
    pub reason: Option<Reason>,
    /// v1 expiration, or drift under a `terminationGracePeriod`: pods the drain waits for —
    /// do-not-disrupt, or held by a PDB at zero —
    /// which Karpenter neither evicts nor provisions for until they go or the NodeClaim's
    /// `terminationGracePeriod` ends (`namespace/name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drain_waits_for: Vec<String>,
    /// For an action of a pool whose budgets for its reason are all scheduled and all out of
    /// their windows now: nothing limits it (an inactive budget allows any number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlimited_budget: Option<UnlimitedBudget>,
    /// v1.14, for a consolidation `replace`: nodes with room for the pods the replacement takes
    /// that take none because they are within their own `consolidateAfter` (core#3225).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held_back_destinations: Vec<HeldBackDestination>,
}

/// A destination node held back by its own `consolidateAfter` (core v1.14.1
/// `scheduling/scheduler.go` `addToExistingNode`, `IsUnderConsolidateAfter`; core#3225).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldBackDestination {
    /// Node name.
    pub node: String,
    /// Seconds until its `consolidateAfter` has passed.
    pub consolidate_after_left_seconds: i64,
}

/// Why no budget limits an action: the pool's budgets for its reason are scheduled and none is
/// in its window now — core v1.14.1 `pkg/apis/v1/nodepool.go` `GetAllowedDisruptions` returns
/// `MaxInt32` for an inactive budget, and `GetAllowedDisruptionsByReason` takes the minimum
/// (aws#8247, core#1719: nodes consolidated outside a budget's window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnlimitedBudget {
    /// The reason its budgets are for (`Empty`, `Drifted`, `Underutilized`); `None` for a
    /// release whose budgets have no reasons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The windows of those budgets (`"30 18 * * 6,0" for 7h`), all closed now.
    pub closed_windows: Vec<String>,
}

/// docs/spec.md §9 `ConsolidationReport`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsolidationReport {
    /// `ConsolidationReport`.
    pub kind: &'static str,
    /// The Karpenter release simulated, e.g. `v1.14.1`.
    pub karpenter_version: String,
    /// The instant evaluated, RFC 3339.
    pub now: String,
    /// Actions in the order they start.
    pub actions: Vec<Action>,
    /// Every managed node, by name.
    pub nodes: Vec<NodeReport>,
    /// Σ savings of the actions (USD/h).
    pub savings_per_hour: f64,
}
