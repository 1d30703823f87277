//! The rules of Karpenter's drift feature gate (docs/spec.md §7, docs/karpenter.md §0 and §4.4), pure: which
//! release a controller runs, where its gate lives, the change and the JSON patches that make it,
//! and how far the rollout that applies it got. The workflow that reads and writes the cluster is
//! [`usecases::drift_gate`](crate::usecases::drift_gate).
//!
//! * v0.21–v0.31: `featureGates.driftEnabled` in ConfigMap `karpenter-global-settings` (in the
//!   controller's namespace), then a restart like `kubectl rollout restart` (v0.24+ read their
//!   settings once at startup; restarting v0.21–v0.23 too is harmless);
//! * v0.32–v0.37: `Drift=true|false` inside the controller container's `FEATURE_GATES` env, the
//!   other gates kept; the env change rolls the Deployment by itself;
//! * v1.0+: drift has no gate; the NodePools' disruption budgets that apply to `Drifted` pace it.
//!
//! The generation comes from the controller's `app.kubernetes.io/version` label, else its image
//! tag. When neither parses (a digest-only image, a `latest` tag), the shape of the install
//! decides: a `Drift=` entry in `FEATURE_GATES` means v0.32–v0.37, else a
//! `karpenter-global-settings` ConfigMap means v0.21–v0.31.

pub mod budgets;
pub mod changes;
pub mod deployment;
pub mod gates;
pub mod release;

pub use budgets::{drifted_budgets, DriftedBudget};
pub use changes::{
    env_change, env_patch, restart_change, restart_patch, settings_change, settings_patch, Change,
};
pub use deployment::{rollout_status, ControllerView, EnvSlot, Rollout, RolloutView};
pub use gates::{parse_go_bool, set_gate, FeatureGates};
pub use release::{parse_version, DetectedBy, Generation, Mechanism, NoDrift, Version};

/// The v0.2x settings ConfigMap.
pub const SETTINGS_CONFIGMAP: &str = "karpenter-global-settings";
/// Its drift key.
pub const DRIFT_KEY: &str = "featureGates.driftEnabled";
/// The v0.32+ env var holding the feature gates.
pub const FEATURE_GATES_ENV: &str = "FEATURE_GATES";
/// Its flag, which wins over the env var (the env var is only the flag's default).
pub const FEATURE_GATES_FLAG: &str = "--feature-gates";
/// The controller option `--min-values-policy`'s env var (v1; core v1.14.1:
/// `pkg/operator/options/options.go`): `Strict` (the default) or `BestEffort`.
pub const MIN_VALUES_POLICY_ENV: &str = "MIN_VALUES_POLICY";
/// Its flag, which wins over the env var (the env var is only the flag's default).
pub const MIN_VALUES_POLICY_FLAG: &str = "--min-values-policy";
/// The controller option `--preference-policy`'s env var (v1.4+; core v1.14.1:
/// `pkg/operator/options/options.go`): `Respect` (the default) or `Ignore`.
pub const PREFERENCE_POLICY_ENV: &str = "PREFERENCE_POLICY";
/// Its flag, which wins over the env var.
pub const PREFERENCE_POLICY_FLAG: &str = "--preference-policy";
/// The AWS controller option `--vm-memory-overhead-percent`'s env var (`aws v1.14.1:
/// pkg/operator/options/options.go`, default 0.075): the memory share a type's capacity loses.
pub const VM_MEMORY_OVERHEAD_PERCENT_ENV: &str = "VM_MEMORY_OVERHEAD_PERCENT";
/// Its flag, which wins over the env var.
pub const VM_MEMORY_OVERHEAD_PERCENT_FLAG: &str = "--vm-memory-overhead-percent";
/// The AWS controller option `--reserved-enis`'s env var (same file, default 0): ENIs the VPC
/// CNI gives no pods.
pub const RESERVED_ENIS_ENV: &str = "RESERVED_ENIS";
/// Its flag, which wins over the env var.
pub const RESERVED_ENIS_FLAG: &str = "--reserved-enis";
/// The drift gate's name inside `FEATURE_GATES`.
pub const DRIFT_GATE: &str = "Drift";
/// The gate of spot-to-spot consolidation inside `FEATURE_GATES` (v0.34+, default off).
pub const SPOT_TO_SPOT_CONSOLIDATION: &str = "SpotToSpotConsolidation";
pub use crate::model::labels::RESTARTED_AT;
