//! The planning half of disruption, pure (ARCHITECTURE.md): how many nodes a NodePool lets go
//! at once ([`budgets`], KARPENTER.md §5.2) and which pods a drain evicts, in what order, and
//! what blocks it ([`drain`], KARPENTER.md §5.5–5.6, ECOSYSTEM.md §2). `drift replace` drives
//! these through the cluster and cloud adapters.

pub mod budgets;
pub mod drain;
pub mod time;
