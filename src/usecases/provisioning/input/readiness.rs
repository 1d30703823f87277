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
/// one without status, counts as ready. Whatever the pool's `Ready`, the class's own `Ready`
/// False or Unknown, or observed at an older generation ([`unreconciled`]), launches nothing:
/// the AWS provider's `Create` checks it (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go`;
/// cloudprovider/suite_test.go "should not proceed with instance creation if NodeClass is
/// unknown", "should return NodeClassNotReady error on creation if NodeClass is not ready").
pub fn not_ready(pool: &NodePool, class: Option<&NodeClass>) -> Option<NotReady> {
    if pool.generation != Some(ApiGeneration::V1) {
        return None;
    }
    let find = |list: &'_ [Condition], t: &str| list.iter().find(|c| c.type_ == t).cloned();
    let pool_ready = find(&pool.conditions, "Ready");
    match &pool_ready {
        Some(ready) if ready.status != ConditionStatus::True => {
            return Some(NotReady::Pool(ready.clone()))
        }
        Some(_) => {}
        None => {
            for t in ["ValidationSucceeded", "NodeClassReady"] {
                let c = find(&pool.conditions, t).filter(|c| c.status != ConditionStatus::True);
                if let Some(c) = c {
                    return Some(NotReady::Pool(c));
                }
            }
        }
    }
    let class = class?;
    let (kind, name) = (class.kind.clone(), class.name.clone());
    if pool_ready.is_none() && class.deleting {
        return Some(NotReady::ClassTerminating { kind, name });
    }
    let ready = find(&class.status.conditions, "Ready")?;
    match ready.status {
        ConditionStatus::True => unreconciled(class),
        ConditionStatus::Unknown => Some(NotReady::ClassReadinessUnknown { kind, name }),
        ConditionStatus::False => Some(NotReady::ClassNotReady { kind, name, ready }),
    }
}

/// A v1 class whose `Ready` was observed at another generation than its `metadata.generation`:
/// its status (subnets, AMIs, groups) is not yet the spec's, and the AWS provider refuses to
/// launch (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go` `Create`, NodeClassNotReady;
/// cloudprovider/suite_test.go "should return NodeClassNotReady error when observed generation
/// doesn't match"), whatever the pool's `Ready`. Said only when the manifest gives both numbers.
fn unreconciled(class: &NodeClass) -> Option<NotReady> {
    let ready = class
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == ConditionStatus::True)?;
    let (observed, generation) = (ready.observed_generation?, class.metadata_generation?);
    (observed != generation).then(|| NotReady::ClassNotReconciled {
        kind: class.kind.clone(),
        name: class.name.clone(),
        observed,
        generation,
    })
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
    /// Its node class's `Ready` was observed at an older generation ([`unreconciled`]).
    ClassNotReconciled {
        /// The class's kind.
        kind: String,
        /// The class's name.
        name: String,
        /// `Ready`'s `observedGeneration`.
        observed: i64,
        /// The class's `metadata.generation`.
        generation: i64,
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
            NotReady::ClassNotReconciled { kind, name, observed, generation } => write!(
                f,
                "NodeClassNotReady: {kind}/{name} status has not been reconciled against the latest spec (Ready observed generation {observed}, metadata.generation {generation})"
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
