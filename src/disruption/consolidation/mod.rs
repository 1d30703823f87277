//! `consolidate`: what Karpenter's disruption controller would decide for every managed node —
//! expiration, drift, emptiness, multi-node and single-node consolidation — and, for each node
//! it would leave alone, the obstacle, named with its numbers (docs/spec.md §9, docs/karpenter.md §5).
//!
//! Pure and deterministic: the caller hands in the cluster at one instant
//! ([`ConsolidationInput`]); [`evaluate`] simulates the controller's successive passes until
//! one would start nothing and returns a [`ConsolidationReport`]. Each pool follows the
//! Karpenter release of its generation ([`Release`]): v1 pools v1.14.1, v1beta1 pools v0.37.7,
//! v1alpha5 Provisioners v0.31.4 — their rules are cited in each module against Karpenter's own
//! source and tests. Where Karpenter breaks ties at random (Go's unstable sorts, map order) we
//! break them by name.
//!
//! Deliberate differences from Karpenter, each explained where it is made:
//! - passes happen at one instant (`now`): the 15 s validation wait, the multi-node (1 min) and
//!   single-node (3 min) timeouts and nominations expiring are not simulated;
//! - the pods an action moves are counted where its simulation put them from then on, instead of
//!   being simulated again in every later pass (`cluster.rs`); nodes deleting in the input are
//!   settled so once at the start;
//! - static NodePools' own drift replacement (`StaticDrift`, v1.14) is not simulated.

mod candidate;
mod certain;
mod cluster;
mod engine;
mod fast;
mod input;
mod pdb;
mod price;
mod reason;
mod report;
mod sim;

pub(crate) use candidate::pod_eviction_cost;
pub use input::{
    BoundPod, ClaimFacts, ConsolidationInput, Drifted, FeatureGates, IntOrPercent, NodeInput,
    PdbInput, Release,
};
pub use pdb::currently_reschedulable;
pub(crate) use pdb::{evaluate as evaluate_pdbs, first_eviction_refused, Pdb, PdbBlock};
pub use reason::{held_back_text, Reason, WindowStart};
pub use report::{
    Action, ConsolidationReport, Decision, HeldBackDestination, Method, NodeDecision, NodeReport,
    Replacement, UnlimitedBudget,
};

/// Evaluates the cluster: every action Karpenter would start, pass by pass, and every managed
/// node's decision or the reason it is left alone.
pub fn evaluate(input: ConsolidationInput) -> ConsolidationReport {
    engine::Engine::new(cluster::Cluster::new(input), fast::Fast::default()).run()
}

/// Only the controller's first pass: the action it would start now (at most one), and why not
/// for the rest as that pass sees them. What `consolidate --yes` carries out, deciding again
/// after each action instead of trusting later passes.
pub fn evaluate_first_pass(input: ConsolidationInput) -> ConsolidationReport {
    engine::Engine::new(cluster::Cluster::new(input), fast::Fast::default())
        .passes(1)
        .run()
}

/// [`evaluate`] the straightforward way, as Karpenter does it: the scheduler on the whole
/// cluster for every simulation, nothing reused between passes. Same answer, much slower; what
/// [`evaluate`] is checked against.
pub fn evaluate_reference(input: ConsolidationInput) -> ConsolidationReport {
    engine::Engine::new(cluster::Cluster::new(input), sim::Reference).run()
}

#[cfg(test)]
mod tests;
