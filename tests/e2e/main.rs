//! The one integration-test binary (each file under tests/ would link everything again).
//!
//! Modules: the CLI on manifests (seed walkthroughs offline, outputs, bad input), generated
//! artefacts being fresh (catalog snapshot), krew packaging, and the AWS adapter against moto
//! (`moto` starts the launcher; `aws_ami`, `aws_network` are the scenarios).

mod architecture;
mod aws_ami;
mod aws_catalog;
mod aws_launch;
mod aws_line_by_line;
mod aws_network;
mod aws_profile;
mod capacity_buffer;
mod capacity_buffer_live;
mod catalog;
mod cli;
mod cluster;
mod cluster_termination;
mod completion;
mod consolidate;
mod consolidate_commands;
mod consolidate_simulation;
mod convert;
mod decision_gates;
mod drift;
mod drift_gate;
mod drift_line_by_line;
mod drift_live;
mod drift_more;
mod embedded_catalog_types;
mod fault_soak;
mod faults;
mod ice_memory;
mod in_cluster;
mod injection;
mod krew;
mod lease;
mod least_privilege;
mod moto;
mod nodes;
mod pipes;
mod placement_groups;
mod plans;
mod pricing;
mod provision_live;
mod public_configs10;
mod public_configs11;
mod public_configs12;
mod public_configs8;
mod public_configs9;
mod reservations;
mod scheduling;
mod scheduling_line_by_line;
mod secrets;
mod static_drift;
mod support;
mod terminal;
#[path = "../cluster/mod.rs"]
mod test_cluster;
mod upstream_audit_apis_binary;
mod upstream_audit_aws_binary;
mod upstream_audit_disr_binary;
mod upstream_audit_sched_binary;
mod upstream_audit_state_binary;
mod upstream_aws_binary;
mod upstream_aws_binary2;
mod upstream_designs2_binary;
mod upstream_designs_binary;
mod upstream_disruption_binary;
mod upstream_disruption_binary2;
mod upstream_drift_binary;
mod upstream_e2e_disruption;
mod upstream_overlay_binary;
mod upstream_scheduling_binary;
mod upstream_scheduling_binary2;
mod upstream_topology_binary;
