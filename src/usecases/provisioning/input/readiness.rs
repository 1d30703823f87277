//! Whether Karpenter would provision for a pool at all: its own status conditions and its node
//! class's readiness (`core v1.14.1: pkg/controllers/nodepool/readiness/controller.go`).

use crate::model::nodepool::{ApiGeneration, Condition, ConditionStatus, NodeClass, NodePool};

/// Why a NodePool is not `Ready`, if it is not: Karpenter's provisioner leaves such a pool out
/// (`core v1.14.1: pkg/controllers/provisioning/provisioner.go` `NewScheduler`:
/// `StatusConditions().IsTrue(Ready)`; scheduling suite "should not schedule pods with nodePool
/// which is not ready"). Only v1 has the filter (v0.37 and v0.31 schedule with any pool).
///
/// The pool's `Ready` condition decides when a controller wrote it. Without it (a manifest from
/// git) the pool is taken as ready — `IsTrue` would read an absent condition as not ready, which
/// would leave every offline plan empty — unless what the readiness controllers would write
/// says otherwise: the pool's own `ValidationSucceeded` or `NodeClassReady` not true, or its
/// node class, when in the input, being deleted or not `Ready`
/// (`pkg/controllers/nodepool/readiness/controller.go`: `NodeClassTerminating`, the class's
/// `Ready` reason and message, `NodeClassReadinessUnknown`). A class absent from the input, or
/// one without status, counts as ready.
pub fn not_ready(pool: &NodePool, class: Option<&NodeClass>) -> Option<NotReady> {
    if pool.generation != Some(ApiGeneration::V1) {
        return None;
    }
    let find = |list: &'_ [Condition], t: &str| list.iter().find(|c| c.type_ == t).cloned();
    if let Some(ready) = find(&pool.conditions, "Ready") {
        return (ready.status != ConditionStatus::True).then_some(NotReady::Pool(ready));
    }
    for t in ["ValidationSucceeded", "NodeClassReady"] {
        if let Some(c) = find(&pool.conditions, t).filter(|c| c.status != ConditionStatus::True) {
            return Some(NotReady::Pool(c));
        }
    }
    let class = class?;
    let (kind, name) = (class.kind.clone(), class.name.clone());
    if class.deleting {
        return Some(NotReady::ClassTerminating { kind, name });
    }
    let ready = find(&class.status.conditions, "Ready")?;
    match ready.status {
        ConditionStatus::True => None,
        ConditionStatus::Unknown => Some(NotReady::ClassReadinessUnknown { kind, name }),
        ConditionStatus::False => Some(NotReady::ClassNotReady { kind, name, ready }),
    }
}

/// Why a v1 NodePool takes no new capacity ([`not_ready`]): the readiness controller's
/// reasons (`core v1.14.1: pkg/controllers/nodepool/readiness/controller.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// The pool's own condition that is not True: `Ready`, or without one
    /// `ValidationSucceeded` or `NodeClassReady`.
    Pool(Condition),
    /// Its node class is being deleted (`NodeClassReady=False`, `NodeClassTerminating`).
    ClassTerminating {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
    },
    /// Its node class reports `Ready=Unknown` (`NodeClassReadinessUnknown`).
    ClassReadinessUnknown {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
    },
    /// Its node class is not Ready (`NodeClassReady=False` with the class's reason and
    /// message).
    ClassNotReady {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
        /// The class's `Ready` condition.
        ready: Condition,
    },
}

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotReady::Pool(c) => f.write_str(&explain(c)),
            NotReady::ClassTerminating { kind, name } => write!(
                f,
                "NodeClassReady=False, NodeClassTerminating: {kind}/{name} is being deleted"
            ),
            NotReady::ClassReadinessUnknown { kind, name } => write!(
                f,
                "NodeClassReady=False, NodeClassReadinessUnknown: {kind}/{name} reports Ready=Unknown"
            ),
            NotReady::ClassNotReady { kind, name, ready } => write!(
                f,
                "NodeClassReady=False, {kind}/{name} is not Ready: {}",
                explain(ready)
            ),
        }
    }
}

/// `Type=Status, Reason: message`, leaving out what is empty.
fn explain(c: &Condition) -> String {
    let status = match c.status {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    };
    let mut out = format!("{}={status}", c.type_);
    if !c.reason.is_empty() {
        out.push_str(&format!(", {}", c.reason));
    }
    if !c.message.is_empty() {
        out.push_str(&format!(": {}", c.message));
    }
    out
}
