//! kubectl-karpenter: Karpenter's provisioning and drift logic, run on the operator's machine.
pub mod model;
