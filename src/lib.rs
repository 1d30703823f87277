//! kubectl-karpenter: Karpenter's provisioning and drift logic, run on the operator's machine.
pub mod api;
pub mod cli;
pub mod cloud;
pub mod commands;
pub mod disruption;
pub mod drift;
pub mod error;
pub mod k8s;
pub mod karpenter_install;
pub mod model;
pub mod scheduling;
#[doc(hidden)]
pub mod testing;
pub mod usecases;
