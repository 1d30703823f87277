//! Why a node is left alone: one typed reason per node, naming the object and the numbers.

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::disruption::budgets::DisruptionReason;
use crate::model::node::InstanceGone;

/// What a NodeClaim's `consolidateAfter` window counts from (core v1.14.1
/// `pkg/controllers/nodeclaim/disruption/consolidation.go` `Reconcile`: `lastPodEventTime`, else
/// the `Initialized` condition's transition; its log names `lastPodEventTime`). Epoch seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowStart {
    /// `status.lastPodEventTime`: a pod bound to or left the node.
    LastPodEvent(i64),
    /// The `Initialized` condition's transition (no pod event yet).
    Initialized(i64),
    /// The NodeClaim's creation (the input has neither).
    Created(i64),
}

impl WindowStart {
    /// When the window started.
    pub fn at(self) -> i64 {
        match self {
            WindowStart::LastPodEvent(t)
            | WindowStart::Initialized(t)
            | WindowStart::Created(t) => t,
        }
    }
}

impl fmt::Display for WindowStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            WindowStart::LastPodEvent(_) => "the last pod event",
            WindowStart::Initialized(_) => "its initialization",
            WindowStart::Created(_) => "its creation",
        };
        write!(
            f,
            "{what} at {}",
            crate::model::time::format_rfc3339(self.at())
        )
    }
}

/// Why Karpenter would leave a node alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The node is not initialized yet.
    NotInitialized,
    /// The NodeClaim or Node is being deleted.
    Deleting,
    /// Its instance is gone or going (EC2, live): Karpenter's garbage collection deletes its
    /// NodeClaim; no place for pods either.
    InstanceGone(crate::model::node::GoneInstance),
    /// A recent provisioning pass nominated the node for a pending pod.
    Nominated,
    /// An earlier action of this report moves pods onto the node, which nominates it; or
    /// (pass 0) a node deleting in the input does: the provisioner places its pods here.
    ReceivesPods {
        /// The pass of that action; 0 for nodes already deleting in the input.
        pass: u32,
        /// The nodes the pods come from.
        from: Vec<String>,
    },
    /// `karpenter.sh/do-not-disrupt` on the node.
    NodeDoNotDisrupt {
        /// Its value.
        value: String,
    },
    /// `karpenter.sh/do-not-consolidate: "true"` on the node (v1alpha5, until v0.37).
    NodeDoNotConsolidate,
    /// The node lacks its NodePool label.
    NoNodePoolLabel,
    /// The node's NodePool is unknown or has no instance types.
    UnknownNodePool {
        /// The NodePool named by the node.
        pool: String,
    },
    /// The node's instance type is not among its NodePool's.
    UnknownInstanceType {
        /// The type.
        instance_type: String,
    },
    /// A label consolidation needs is missing.
    MissingLabel {
        /// The label key.
        label: &'static str,
    },
    /// No offering of the node's type matches its zone and capacity type (pre-v1 price lookup).
    NoOffering {
        /// Type, zone, capacity type.
        instance_type: String,
        /// Zone.
        zone: String,
        /// Capacity type.
        capacity_type: String,
    },
    /// A pod's `karpenter.sh/do-not-disrupt` (or, before v1, `do-not-evict`) is active.
    PodDoNotDisrupt {
        /// `namespace/name`.
        pod: String,
        /// The annotation's key.
        annotation: &'static str,
        /// The annotation's value.
        value: String,
    },
    /// A PDB allows no disruption of one of the node's pods.
    Pdb {
        /// `namespace/name` of the pod.
        pod: String,
        /// `namespace/name` of the PDB.
        pdb: String,
        /// Its allowed disruptions.
        allowed: i32,
    },
    /// Several PDBs cover one pod (the Eviction API refuses it; v1).
    MultiplePdbs {
        /// `namespace/name` of the pod.
        pod: String,
        /// The PDBs.
        pdbs: Vec<String>,
    },
    /// The provisioner's last pass placed CapacityBuffer virtual pods on the node: emptiness
    /// leaves it (`core v1.14.1: disruption/emptiness.go` `HasBufferPods`).
    BufferPods,
    /// The NodePool is static (`spec.replicas`): only its own drift replaces nodes.
    StaticNodePool {
        /// The pool.
        pool: String,
    },
    /// A drifted NodeClaim of a static pool that StaticDrift leaves alone now (scale-down
    /// first, or `limits.nodes`; its budget is [`Reason::Budget`]).
    StaticDrift(crate::disruption::static_drift::Hold),
    /// `consolidateAfter: Never` (v1alpha5: neither consolidation nor `ttlSecondsAfterEmpty`).
    ConsolidationDisabled {
        /// The pool.
        pool: String,
    },
    /// The pool only deletes empty nodes, and this one has pods.
    WhenEmptyNotEmpty {
        /// The pool.
        pool: String,
        /// Reschedulable pods on the node.
        pods: usize,
    },
    /// `consolidateAfter` has not elapsed since the last pod event (or initialization).
    ConsolidateAfter {
        /// `consolidateAfter`, seconds.
        after: i64,
        /// Seconds left.
        left: i64,
        /// What the window counts from, and when (aws#9207: a pool whose pods churn faster
        /// than its `consolidateAfter` is never consolidated; the reason names the event).
        since: WindowStart,
    },
    /// v1: the NodeClaim's `Consolidatable` condition is False.
    NotConsolidatable {
        /// The NodeClaim.
        claim: String,
    },
    /// The node has not been empty for `consolidateAfter` / `ttlSecondsAfterEmpty` yet (pre-v1).
    EmptyFor {
        /// The wait, seconds.
        after: i64,
        /// Seconds left.
        left: i64,
    },
    /// Drifted, but the `Drift` feature gate is off.
    DriftDisabled,
    /// The NodePool's disruption budget has no room left now.
    Budget {
        /// The pool. (Shared text: one pool's budget reason is given to each of its nodes in
        /// every pass.)
        pool: Arc<str>,
        /// The reason budgeted (`None` before v1, where budgets cover every reason).
        reason: Option<DisruptionReason>,
        /// `nodes` of the limiting budget, e.g. `10%`.
        nodes: Arc<str>,
        /// The limiting budget's window when it has one, e.g. `"0 9 * * mon-fri" for 8h`:
        /// which of several budgets binds now is what users ask (core#1939, aws#7026).
        window: Option<Arc<str>>,
        /// What it allows in total against the pool's nodes.
        total: u32,
        /// The pool's nodes it is counted against.
        counted: u32,
        /// Nodes of the pool already disrupting (NotReady, deleting, or in flight here).
        disrupting: u32,
    },
    /// A budget Karpenter rejects, which allows nothing.
    InvalidBudget {
        /// The pool.
        pool: String,
        /// What is wrong.
        problem: String,
    },
    /// A pod of the node fits nowhere else, not even on a new node.
    PodFitsNowhere {
        /// `namespace/name`.
        pod: String,
        /// Its requests.
        requests: String,
        /// Why each option failed (the scheduler's words).
        detail: String,
    },
    /// A pod would land on a node that is not initialized yet.
    UninitializedDestination {
        /// `namespace/name`.
        pod: String,
        /// The node.
        node: String,
    },
    /// Moving the pods needs more than one new NodeClaim (consolidation never turns one node
    /// into two).
    NeedsNodeClaims {
        /// How many.
        count: usize,
        /// The cheapest type of each.
        types: Vec<String>,
    },
    /// The pods need a new node, and no type that holds them is cheaper.
    NotCheaper {
        /// Pods that fit on no other node (the first few), with their requests.
        pods: Vec<(String, String)>,
        /// How many pods fit on no other node: `pods` holds only the first few.
        moving: usize,
        /// The price of the node(s) (USD/h).
        price: f64,
        /// The cheapest type that holds them, at the price Karpenter compares (its worst
        /// launch price).
        cheapest: Option<(String, f64)>,
        /// v1.14: nodes with room for those pods that take none because they are within their
        /// own `consolidateAfter` (core#3225), with the seconds left.
        held_back: Vec<(String, i64)>,
    },
    /// Filtering the replacement's types by price leaves too few for `minValues`.
    MinValues {
        /// The requirement and counts.
        detail: String,
    },
    /// A spot node would be replaced by a spot node, and `SpotToSpotConsolidation` is off.
    SpotToSpotDisabled,
    /// Spot-to-spot single-node consolidation needs 15 cheaper types.
    SpotToSpotTooFew {
        /// Cheaper types found.
        found: usize,
        /// Needed.
        needed: usize,
    },
    /// v0.31 never replaces a spot node with a spot node.
    SpotToSpotUnsupported,
    /// The `Balanced` policy's score is below its threshold.
    BalancedScore {
        /// savings fraction / disruption fraction.
        score: f64,
        /// 1/k.
        threshold: f64,
    },
}

impl Reason {
    /// A stable kebab-case name for machines (`pdb`, `budget`, `not-cheaper`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::NotInitialized => "not-initialized",
            Reason::Deleting => "deleting",
            Reason::InstanceGone(_) => "instance-gone",
            Reason::Nominated => "nominated",
            Reason::ReceivesPods { .. } => "receives-pods",
            Reason::NodeDoNotDisrupt { .. } => "node-do-not-disrupt",
            Reason::NodeDoNotConsolidate => "node-do-not-consolidate",
            Reason::NoNodePoolLabel => "no-nodepool-label",
            Reason::UnknownNodePool { .. } => "unknown-nodepool",
            Reason::UnknownInstanceType { .. } => "unknown-instance-type",
            Reason::MissingLabel { .. } => "missing-label",
            Reason::NoOffering { .. } => "no-offering",
            Reason::PodDoNotDisrupt { .. } => "pod-do-not-disrupt",
            Reason::Pdb { .. } => "pdb",
            Reason::MultiplePdbs { .. } => "multiple-pdbs",
            Reason::StaticNodePool { .. } => "static-nodepool",
            Reason::BufferPods => "buffer-pods",
            Reason::StaticDrift(hold) => hold.kind(),
            Reason::ConsolidationDisabled { .. } => "consolidation-disabled",
            Reason::WhenEmptyNotEmpty { .. } => "when-empty-not-empty",
            Reason::ConsolidateAfter { .. } => "consolidate-after",
            Reason::NotConsolidatable { .. } => "not-consolidatable",
            Reason::EmptyFor { .. } => "empty-for",
            Reason::DriftDisabled => "drift-disabled",
            Reason::Budget { .. } => "budget",
            Reason::InvalidBudget { .. } => "invalid-budget",
            Reason::PodFitsNowhere { .. } => "pod-fits-nowhere",
            Reason::UninitializedDestination { .. } => "uninitialized-destination",
            Reason::NeedsNodeClaims { .. } => "needs-nodeclaims",
            Reason::NotCheaper { .. } => "not-cheaper",
            Reason::MinValues { .. } => "min-values",
            Reason::SpotToSpotDisabled => "spot-to-spot-disabled",
            Reason::SpotToSpotTooFew { .. } => "spot-to-spot-too-few",
            Reason::SpotToSpotUnsupported => "spot-to-spot-unsupported",
            Reason::BalancedScore { .. } => "balanced-score",
        }
    }
}

/// "; ip-b has room for them but is itself within consolidateAfter for 3m" (core#3225), or
/// nothing; `what` names the pods ("them", "its pods").
pub fn held_back_text(held_back: &[(String, i64)], what: &str) -> String {
    let Some((node, left)) = held_back.first() else {
        return String::new();
    };
    let more = match held_back.len() {
        1 => String::new(),
        n => format!(" (and {} more node(s))", n - 1),
    };
    format!(
        "; {node}{more} has room for {what} but is itself within consolidateAfter for {}",
        duration(*left)
    )
}

fn duration(seconds: i64) -> String {
    let (h, m, s) = (seconds / 3600, (seconds % 3600) / 60, seconds % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NotInitialized => f.write_str("not initialized"),
            Reason::Deleting => f.write_str("being deleted"),
            Reason::InstanceGone(gone) => {
                let id = &gone.instance;
                const GC: &str = "Karpenter's garbage collection removes this node";
                match gone.state {
                    InstanceGone::ShuttingDown => {
                        write!(f, "instance {id} is shutting down; this node goes with it")
                    }
                    InstanceGone::Terminated => write!(f, "instance {id} is terminated; {GC}"),
                    InstanceGone::NotFound => write!(f, "instance {id} no longer exists; {GC}"),
                }
            }
            Reason::Nominated => f.write_str("nominated for a pending pod"),
            Reason::ReceivesPods { pass: 0, from } => write!(
                f,
                "receives pods from {} (being deleted), which nominates it",
                from.join(", ")
            ),
            Reason::ReceivesPods { pass, from } => write!(
                f,
                "receives pods from {} (pass {pass}), which nominates it",
                from.join(", ")
            ),
            Reason::NodeDoNotDisrupt { value } => {
                write!(f, "node is annotated karpenter.sh/do-not-disrupt={value}")
            }
            Reason::NodeDoNotConsolidate => {
                f.write_str("node is annotated karpenter.sh/do-not-consolidate=true")
            }
            Reason::NoNodePoolLabel => f.write_str("node has no karpenter.sh/nodepool label"),
            Reason::UnknownNodePool { pool } => {
                write!(f, "NodePool {pool} not found (or it has no instance types)")
            }
            Reason::UnknownInstanceType { instance_type } => write!(
                f,
                "instance type {instance_type:?} is not one of its NodePool's"
            ),
            Reason::MissingLabel { label } => write!(f, "node has no {label} label"),
            Reason::NoOffering {
                instance_type,
                zone,
                capacity_type,
            } => write!(
                f,
                "no offering of {instance_type} in {zone} as {capacity_type} to price it"
            ),
            Reason::PodDoNotDisrupt {
                pod,
                annotation,
                value,
            } => {
                write!(f, "pod {pod} is annotated {annotation}={value}")
            }
            Reason::Pdb { pod, pdb, allowed } => {
                write!(f, "PDB {pdb} allows {allowed} disruptions (pod {pod})")
            }
            Reason::MultiplePdbs { pod, pdbs } => write!(
                f,
                "pod {pod} is covered by {} PDBs ({}); eviction does not support several",
                pdbs.len(),
                pdbs.join(", ")
            ),
            Reason::StaticDrift(hold) => write!(f, "{hold}"),
            Reason::StaticNodePool { pool } => {
                write!(f, "NodePool {pool} is static (replicas): not consolidated")
            }
            Reason::BufferPods => f.write_str(
                "hosts CapacityBuffer capacity (the provisioner places buffer pods on it): not empty",
            ),
            Reason::ConsolidationDisabled { pool } => {
                write!(
                    f,
                    "NodePool {pool} has consolidation disabled (consolidateAfter Never)"
                )
            }
            Reason::WhenEmptyNotEmpty { pool, pods } => write!(
                f,
                "NodePool {pool} is WhenEmpty and the node has {pods} pod{}",
                if *pods == 1 { "" } else { "s" }
            ),
            Reason::NotConsolidatable { claim } => {
                write!(f, "NodeClaim {claim} has condition Consolidatable=False")
            }
            Reason::ConsolidateAfter { after, left, since } => write!(
                f,
                "consolidateAfter {} not reached ({} left), counted from {since}",
                duration(*after),
                duration(*left)
            ),
            Reason::EmptyFor { after, left } => write!(
                f,
                "empty for less than {} ({} left)",
                duration(*after),
                duration(*left)
            ),
            Reason::DriftDisabled => f.write_str("drifted, but the Drift feature gate is off"),
            Reason::Budget {
                pool,
                reason,
                nodes,
                window,
                total,
                counted,
                disrupting,
            } => {
                match reason {
                    Some(r) => write!(f, "budget {r} of NodePool {pool}")?,
                    None => write!(f, "budget of NodePool {pool}")?,
                }
                write!(f, ": 0 of {nodes} now")?;
                if let Some(w) = window {
                    write!(f, ", in its window {w}")?;
                }
                write!(
                    f,
                    " ({total} of {counted} nodes, {disrupting} already disrupting)"
                )
            }
            Reason::InvalidBudget { pool, problem } => {
                write!(
                    f,
                    "NodePool {pool} has an invalid budget, which allows 0: {problem}"
                )
            }
            Reason::PodFitsNowhere {
                pod,
                requests,
                detail,
            } => write!(f, "pod {pod} ({requests}) fits nowhere: {detail}"),
            Reason::UninitializedDestination { pod, node } => write!(
                f,
                "pod {pod} would go to node {node}, which is not initialized yet"
            ),
            Reason::NeedsNodeClaims { count, types } => {
                write!(
                    f,
                    "replacing needs {count} NodeClaims ({})",
                    types.join(", ")
                )
            }
            Reason::NotCheaper {
                pods,
                moving,
                price,
                cheapest,
                held_back,
            } => {
                if let Some((pod, requests)) = pods.first() {
                    write!(f, "pod {pod} ({requests})")?;
                    let moving = (*moving).max(pods.len());
                    if moving > 1 {
                        write!(f, " and {} more", moving - 1)?;
                    }
                    f.write_str(" fit on no other node and ")?;
                }
                write!(
                    f,
                    "no type cheaper than ${price:.4}/h holds the node's pods"
                )?;
                if let Some((t, p)) = cheapest {
                    write!(f, " (cheapest: {t} at ${p:.4}/h)")?;
                }
                f.write_str(&held_back_text(held_back, "them"))
            }
            Reason::MinValues { detail } => {
                write!(f, "the cheaper types left do not meet minValues: {detail}")
            }
            Reason::SpotToSpotDisabled => {
                f.write_str("spot→spot replacement needs the SpotToSpotConsolidation feature gate")
            }
            Reason::SpotToSpotTooFew { found, needed } => {
                write!(f, "spot→spot needs {needed} cheaper types, {found} found")
            }
            Reason::SpotToSpotUnsupported => {
                f.write_str("this Karpenter release never replaces spot with spot")
            }
            Reason::BalancedScore { score, threshold } => write!(
                f,
                "Balanced: score {score:.3} below threshold {threshold:.3}"
            ),
        }
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_object_and_the_numbers() {
        let budget = Reason::Budget {
            pool: "default".into(),
            reason: Some(DisruptionReason::Underutilized),
            nodes: "10%".into(),
            window: None,
            total: 2,
            counted: 20,
            disrupting: 2,
        };
        assert_eq!(
            budget.to_string(),
            "budget Underutilized of NodePool default: 0 of 10% now (2 of 20 nodes, 2 already disrupting)"
        );
        let scheduled = Reason::Budget {
            pool: "default".into(),
            reason: Some(DisruptionReason::Underutilized),
            nodes: "0".into(),
            window: Some("\"30 2 * * *\" for 12h".into()),
            total: 0,
            counted: 4,
            disrupting: 2,
        };
        assert_eq!(
            scheduled.to_string(),
            "budget Underutilized of NodePool default: 0 of 0 now, in its window \"30 2 * * *\" for 12h (0 of 4 nodes, 2 already disrupting)"
        );
        assert_eq!(
            Reason::ConsolidateAfter {
                after: 30,
                left: 12,
                since: WindowStart::LastPodEvent(1_780_401_582)
            }
            .to_string(),
            "consolidateAfter 30s not reached (12s left), counted from the last pod event at \
             2026-06-02T11:59:42Z"
        );
        assert_eq!(
            Reason::SpotToSpotTooFew {
                found: 4,
                needed: 15
            }
            .to_string(),
            "spot→spot needs 15 cheaper types, 4 found"
        );
        assert_eq!(
            Reason::NotCheaper {
                pods: vec![("default/web-3".into(), "cpu 2".into())],
                moving: 1,
                price: 0.085,
                cheapest: Some(("m5.large".into(), 0.096)),
                held_back: Vec::new(),
            }
            .to_string(),
            "pod default/web-3 (cpu 2) fit on no other node and no type cheaper than $0.0850/h \
             holds the node's pods (cheapest: m5.large at $0.0960/h)"
        );
        assert_eq!(
            held_back_text(&[("ip-b".into(), 180)], "them"),
            "; ip-b has room for them but is itself within consolidateAfter for 3m"
        );
        assert_eq!(duration(3725), "1h2m5s");
        assert_eq!(
            Reason::NeedsNodeClaims {
                count: 2,
                types: vec!["a".into(), "b".into()]
            }
            .kind(),
            "needs-nodeclaims"
        );
    }
}
