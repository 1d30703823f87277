//! The planning half of disruption, pure (docs/architecture.md): how many nodes a NodePool lets go
//! at once ([`budgets`], docs/karpenter.md §5.2), which pods a drain evicts, in what order, and
//! what blocks it ([`drain`], docs/karpenter.md §5.5–5.6, docs/conventions.md §2), what the disruption
//! controller would do to the nodes that exist ([`consolidation`], docs/karpenter.md §5.4, docs/spec.md §9),
//! and the replace pipeline's decisions — records, budget slots, each node's state machine
//! ([`replace`]). `usecases::replace` drives these through the cluster and cloud seams.

pub mod budgets;
pub mod consolidation;
pub mod drain;
pub mod emptiness;
pub mod replace;
pub mod static_drift;
pub mod static_scale_down;
pub mod time;
