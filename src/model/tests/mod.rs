//! Tables mirroring Karpenter's `pkg/scheduling` unit tests (core v1.14.1) against the model:
//! the requirement algebra, requirement sets, ephemeral taints and host ports. The ledger is
//! docs/upstream-tests.md § "Requirement algebra, taints, host ports".

mod host_ports;
mod line_by_line;
mod preferences;
mod requirement;
mod requirements;
mod taints;
