//! `kubectl karpenter enable-drift` / `disable-drift` (SPEC §7, KARPENTER.md §0 and §4.4):
//! flip Karpenter's drift feature gate in the running controller, the way each release wants it.
//!
//! * v0.21–v0.31: `featureGates.driftEnabled` in ConfigMap `karpenter-global-settings` (in the
//!   controller's namespace), then a restart like `kubectl rollout restart` (v0.24+ read their
//!   settings once at startup; restarting v0.21–v0.23 too is harmless) and a wait for the
//!   rollout;
//! * v0.32–v0.37: `Drift=true|false` inside the controller container's `FEATURE_GATES` env, the
//!   other gates kept; the env change rolls the Deployment by itself; wait for it;
//! * v1.0+: drift has no gate: say so, show the NodePools' disruption budgets that pace
//!   `Drifted`, change nothing.
//!
//! The generation comes from the controller's `app.kubernetes.io/version` label, else its image
//! tag. When neither parses (a digest-only image, a `latest` tag), the shape of the install
//! decides: a `Drift=` entry in `FEATURE_GATES` means v0.32–v0.37, else a
//! `karpenter-global-settings` ConfigMap means v0.21–v0.31; with neither the command stops
//! (exit 3) and asks for the version label.
//!
//! Every write is a JSON patch with `test` operations on the values it read, so an edit made
//! between reading and writing fails (exit 3) instead of being overwritten. Nothing is written
//! when the gate already has the asked value (idempotent: no restart either).
//!
//! The pure parts — version parsing, generation, `FEATURE_GATES` editing, the diff, the
//! rollout-status reading — are free functions tested below; [`enable`]/[`disable`] are the glue.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::live;
use super::Context;
use crate::cli::output::{write_document, Table, API_VERSION};
use crate::cli::progress::Progress;
use crate::cli::{DriftGateArgs, OutputFormat};
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::coexist::{self, Controller};
use crate::k8s::ops::{self, ListQuery};
use crate::k8s::{Cluster, ClusterError};
use crate::model::labels::{self, RESTARTED_AT};

/// The v0.2x settings ConfigMap.
pub const SETTINGS_CONFIGMAP: &str = "karpenter-global-settings";
/// Its drift key.
pub const DRIFT_KEY: &str = "featureGates.driftEnabled";
/// The v0.32–v0.37 env var.
pub const FEATURE_GATES_ENV: &str = "FEATURE_GATES";
/// The gate's name inside `FEATURE_GATES`.
pub const DRIFT_GATE: &str = "Drift";
/// How often the rollout is polled.
const POLL: Duration = Duration::from_millis(500);

// ---------------------------------------------------------------------------------------------
// Pure core
// ---------------------------------------------------------------------------------------------

/// A Karpenter release number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch (0 when absent).
    pub patch: u64,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Parses `v0.27.6`, `0.32.1`, `1.0.0`, `v1.0.0-rc.1`, `0.37.0+build`, `v0.33` (a digest after
/// `@` is ignored). `None` for anything else (`latest`, `sha-abc`, empty).
pub fn parse_version(text: &str) -> Option<Version> {
    let t = text.trim();
    let t = t.split('@').next().unwrap_or(t);
    let t = t
        .strip_prefix('v')
        .or_else(|| t.strip_prefix('V'))
        .unwrap_or(t);
    let core = t.split(['-', '+']).next().unwrap_or(t);
    let mut parts = core.split('.');
    let number = |p: Option<&str>| -> Option<u64> {
        let p = p?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let major = number(parts.next())?;
    let minor = number(parts.next())?;
    let patch = match parts.next() {
        None => 0,
        some => number(some)?,
    };
    if parts.next().is_some() {
        return None;
    }
    Some(Version {
        major,
        minor,
        patch,
    })
}

/// How a Karpenter release gates drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// v0.21–v0.31: ConfigMap key, restart to apply.
    Settings,
    /// v0.32: `FEATURE_GATES`, default `Drift=false` (the ConfigMap key still counts when the env
    /// is not set at all).
    FeatureGatesDefaultOff,
    /// v0.33–v0.37: `FEATURE_GATES`, default `Drift=true`.
    FeatureGatesDefaultOn,
    /// v1.0+: no gate.
    V1,
}

/// Where the gate lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Mechanism {
    /// ConfigMap `karpenter-global-settings`, `featureGates.driftEnabled`.
    ConfigMap,
    /// Container env `FEATURE_GATES`.
    FeatureGatesEnv,
    /// No gate (v1).
    None,
}

impl Generation {
    /// The generation of a release; an error (the reason) before v0.21, which had no drift.
    pub fn of(v: Version) -> Result<Generation, String> {
        match (v.major, v.minor) {
            (0, m) if m < 21 => Err(format!(
                "Karpenter {v} has no drift detection (it arrived in v0.21): upgrade Karpenter first"
            )),
            (0, m) if m <= 31 => Ok(Generation::Settings),
            (0, 32) => Ok(Generation::FeatureGatesDefaultOff),
            (0, _) => Ok(Generation::FeatureGatesDefaultOn),
            _ => Ok(Generation::V1),
        }
    }

    /// Guesses the generation from the install when the version is unknown: a `Drift` entry in
    /// `FEATURE_GATES` → v0.32–v0.37; else the settings ConfigMap → v0.21–v0.31; else unknown.
    pub fn by_shape(
        feature_gates: Option<&str>,
        has_settings_configmap: bool,
    ) -> Option<Generation> {
        if feature_gates.is_some_and(|g| gate(g, DRIFT_GATE).is_some()) {
            Some(Generation::FeatureGatesDefaultOn)
        } else if has_settings_configmap {
            Some(Generation::Settings)
        } else {
            None
        }
    }

    /// The release range, for people and the JSON document.
    pub fn label(self) -> &'static str {
        match self {
            Generation::Settings => "v0.21-v0.31",
            Generation::FeatureGatesDefaultOff => "v0.32",
            Generation::FeatureGatesDefaultOn => "v0.33-v0.37",
            Generation::V1 => "v1",
        }
    }

    /// Where the gate is.
    pub fn mechanism(self) -> Mechanism {
        match self {
            Generation::Settings => Mechanism::ConfigMap,
            Generation::FeatureGatesDefaultOff | Generation::FeatureGatesDefaultOn => {
                Mechanism::FeatureGatesEnv
            }
            Generation::V1 => Mechanism::None,
        }
    }

    /// Drift's value when nothing sets it.
    pub fn drift_default(self) -> bool {
        matches!(self, Generation::FeatureGatesDefaultOn | Generation::V1)
    }
}

/// Go's `strconv.ParseBool` (what Karpenter parses both gates with).
pub fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// A gate's value in a `FEATURE_GATES` string (`A=true,Drift=false`): `None` when absent,
/// `Some(Err(raw))` when its value is not a boolean. The last entry wins, as in Go's map.
pub fn gate(gates: &str, name: &str) -> Option<Result<bool, String>> {
    let mut found = None;
    for entry in gates.split(',') {
        let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
        if key.trim() == name {
            let value = value.trim();
            found = Some(parse_go_bool(value).ok_or_else(|| value.to_string()));
        }
    }
    found
}

/// `gates` with `name` set to `value`: the first entry for `name` is rewritten in place (later
/// duplicates dropped), the other gates kept as written; appended when absent.
pub fn set_gate(gates: &str, name: &str, value: bool) -> String {
    let wanted = format!("{name}={value}");
    let mut out: Vec<String> = Vec::new();
    let mut replaced = false;
    for entry in gates.split(',') {
        let trimmed = entry.trim();
        if trimmed.is_empty() {
            continue;
        }
        let key = trimmed.split_once('=').map_or(trimmed, |(k, _)| k).trim();
        if key == name {
            if !replaced {
                out.push(wanted.clone());
                replaced = true;
            }
        } else {
            out.push(trimmed.to_string());
        }
    }
    if !replaced {
        out.push(wanted);
    }
    out.join(",")
}

/// One field change: what the diff shows and the JSON document lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `ConfigMap ns/name`, `Deployment ns/name`.
    pub object: String,
    /// The field (`featureGates.driftEnabled`, `containers[controller].env.FEATURE_GATES`, …).
    pub field: String,
    /// Before (`None`: unset).
    pub old: Option<String>,
    /// After.
    pub new: Option<String>,
}

impl Change {
    /// `ConfigMap karpenter/karpenter-global-settings: featureGates.driftEnabled: "false" → "true"`.
    pub fn line(&self) -> String {
        let show = |v: &Option<String>| match v {
            Some(v) => format!("{v:?}"),
            None => "(unset)".to_string(),
        };
        if self.is_restart() {
            return format!(
                "{}: rollout restart ({RESTARTED_AT}: {} → {})",
                self.object,
                show(&self.old),
                show(&self.new)
            );
        }
        format!(
            "{}: {}: {} → {}",
            self.object,
            self.field,
            show(&self.old),
            show(&self.new)
        )
    }

    /// Whether this is the restart annotation.
    pub fn is_restart(&self) -> bool {
        self.field == restart_field()
    }
}

fn restart_field() -> String {
    format!("spec.template.metadata.annotations[{RESTARTED_AT}]")
}

/// The ConfigMap change for v0.21–v0.31, `None` when `featureGates.driftEnabled` already says
/// `enable` (an absent key means false; an unparseable value is always rewritten).
pub fn settings_change(
    namespace: &str,
    data: &BTreeMap<String, String>,
    enable: bool,
) -> Option<Change> {
    let old = data.get(DRIFT_KEY);
    let current = match old {
        None => Some(false),
        Some(v) => parse_go_bool(v.trim()),
    };
    (current != Some(enable)).then(|| Change {
        object: format!("ConfigMap {namespace}/{SETTINGS_CONFIGMAP}"),
        field: DRIFT_KEY.to_string(),
        old: old.cloned(),
        new: Some(enable.to_string()),
    })
}

/// The `FEATURE_GATES` change for v0.32–v0.37, `None` when drift already has the asked value.
/// `env` is the current value (`None`: the env var is not set); `default` is what drift is when
/// no `Drift` entry sets it.
pub fn env_change(
    deployment: &str,
    container: &str,
    env: Option<&str>,
    default: bool,
    enable: bool,
) -> Option<Change> {
    let current = match env.and_then(|e| gate(e, DRIFT_GATE)) {
        Some(Ok(b)) => Some(b),
        Some(Err(_)) => None,
        None => Some(default),
    };
    (current != Some(enable)).then(|| Change {
        object: format!("Deployment {deployment}"),
        field: format!("containers[{container}].env.{FEATURE_GATES_ENV}"),
        old: env.map(str::to_string),
        new: Some(set_gate(env.unwrap_or(""), DRIFT_GATE, enable)),
    })
}

/// The restart, as a change of the pod-template annotation.
pub fn restart_change(deployment: &str, old: Option<&str>, now: &str) -> Change {
    Change {
        object: format!("Deployment {deployment}"),
        field: restart_field(),
        old: old.map(str::to_string),
        new: Some(now.to_string()),
    }
}

/// JSON pointer escaping (RFC 6901).
fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The JSON patch setting the ConfigMap key, with a `test` of the value it replaces.
pub fn settings_patch(data_present: bool, old: Option<&str>, new: &str) -> Value {
    let path = format!("/data/{}", pointer_token(DRIFT_KEY));
    match (data_present, old) {
        (false, _) => json!([{"op": "add", "path": "/data", "value": {DRIFT_KEY: new}}]),
        (true, None) => json!([{"op": "add", "path": path, "value": new}]),
        (true, Some(old)) => json!([
            {"op": "test", "path": path, "value": old},
            {"op": "replace", "path": path, "value": new},
        ]),
    }
}

/// Where `FEATURE_GATES` sits in the controller container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSlot {
    /// The container has no `env` list.
    NoList,
    /// The list exists without `FEATURE_GATES`.
    Absent,
    /// At this index, with this value.
    At(usize, String),
}

/// The JSON patch setting `FEATURE_GATES` on container `index` (named `name`), with `test`s of
/// what it read.
pub fn env_patch(index: usize, name: &str, slot: &EnvSlot, new: &str) -> Value {
    let base = format!("/spec/template/spec/containers/{index}");
    let test_name = json!({"op": "test", "path": format!("{base}/name"), "value": name});
    let var = json!({"name": FEATURE_GATES_ENV, "value": new});
    match slot {
        EnvSlot::NoList => {
            json!([test_name, {"op": "add", "path": format!("{base}/env"), "value": [var]}])
        }
        EnvSlot::Absent => {
            json!([test_name, {"op": "add", "path": format!("{base}/env/-"), "value": var}])
        }
        EnvSlot::At(i, old) => json!([
            test_name,
            {"op": "test", "path": format!("{base}/env/{i}/name"), "value": FEATURE_GATES_ENV},
            {"op": "test", "path": format!("{base}/env/{i}/value"), "value": old},
            {"op": "replace", "path": format!("{base}/env/{i}/value"), "value": new},
        ]),
    }
}

/// The strategic merge patch `kubectl rollout restart` sends.
pub fn restart_patch(now: &str) -> Value {
    json!({"spec": {"template": {"metadata": {"annotations": {labels::RESTARTED_AT: now}}}}})
}

/// What the Deployment's rollout looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rollout {
    /// Finished.
    Done,
    /// In progress, with kubectl's progress message.
    Waiting(String),
    /// Will not finish (`ProgressDeadlineExceeded`).
    Failed(String),
}

/// The slim Deployment the rollout wait reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutView {
    /// Metadata.
    #[serde(default)]
    pub metadata: RolloutMeta,
    /// Spec.
    #[serde(default)]
    pub spec: RolloutSpec,
    /// Status.
    #[serde(default)]
    pub status: RolloutStatus,
}

/// `metadata`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RolloutMeta {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Generation.
    #[serde(default)]
    pub generation: i64,
}

/// `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RolloutSpec {
    /// Replicas (`None`: the server default, 1).
    pub replicas: Option<i64>,
}

/// `status`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// Observed generation.
    #[serde(default)]
    pub observed_generation: i64,
    /// Replicas.
    #[serde(default)]
    pub replicas: i64,
    /// Updated replicas.
    #[serde(default)]
    pub updated_replicas: i64,
    /// Available replicas.
    #[serde(default)]
    pub available_replicas: i64,
    /// Conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// A Deployment condition.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Type.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// Reason.
    #[serde(default)]
    pub reason: String,
}

/// `kubectl rollout status` for a Deployment (`kubectl: polymorphichelpers/rollout_status.go`).
pub fn rollout_status(d: &RolloutView) -> Rollout {
    let name = &d.metadata.name;
    let s = &d.status;
    if d.metadata.generation > s.observed_generation {
        return Rollout::Waiting("Waiting for deployment spec update to be observed...".into());
    }
    if s.conditions
        .iter()
        .any(|c| c.type_ == "Progressing" && c.reason == "ProgressDeadlineExceeded")
    {
        return Rollout::Failed(format!(
            "deployment {name:?} exceeded its progress deadline"
        ));
    }
    let wanted = d.spec.replicas.unwrap_or(1);
    if s.updated_replicas < wanted {
        return Rollout::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {} out of {wanted} new replicas have been updated...",
            s.updated_replicas
        ));
    }
    if s.replicas > s.updated_replicas {
        return Rollout::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...",
            s.replicas - s.updated_replicas
        ));
    }
    if s.available_replicas < s.updated_replicas {
        return Rollout::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {} of {} updated replicas are available...",
            s.available_replicas, s.updated_replicas
        ));
    }
    Rollout::Done
}

/// Picks the controller: the one in `namespace` when given, else the only one.
pub fn select_controller(
    found: Vec<Controller>,
    namespace: Option<&str>,
) -> Result<Controller, CommandError> {
    let all: Vec<String> = found.iter().map(Controller::key).collect();
    let mut candidates: Vec<Controller> = match namespace {
        Some(ns) => found.into_iter().filter(|c| c.namespace == ns).collect(),
        None => found,
    };
    match candidates.len() {
        1 => Ok(candidates.remove(0)),
        0 => {
            let message = match (namespace, all.is_empty()) {
                (Some(ns), false) => format!(
                    "no Karpenter controller Deployment in namespace {ns} (found: {})",
                    all.join(", ")
                ),
                (Some(ns), true) => {
                    format!("no Karpenter controller Deployment in namespace {ns}")
                }
                (None, _) => "no Karpenter controller Deployment in the cluster".to_string(),
            };
            Err(CommandError::remote(message).with_hint(
                "the controller is a Deployment labelled app.kubernetes.io/name=karpenter, named karpenter, or running a karpenter/controller image; pass --karpenter-namespace NS, or --context for another cluster",
            ))
        }
        _ => Err(CommandError::input(format!(
            "{} Karpenter controller Deployments: {}",
            candidates.len(),
            candidates
                .iter()
                .map(Controller::key)
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_hint("pick one with --karpenter-namespace NS")),
    }
}

// ---------------------------------------------------------------------------------------------
// The controller Deployment, as this command needs it
// ---------------------------------------------------------------------------------------------

/// What the command reads of the controller Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerView {
    /// Index of the controller container.
    pub index: usize,
    /// Its name.
    pub container: String,
    /// `FEATURE_GATES`.
    pub slot: EnvSlot,
    /// `FEATURE_GATES` comes from `valueFrom`.
    pub value_from: bool,
    /// The container's command/args set `--feature-gates` (it overrides the env).
    pub flag: bool,
    /// `spec.paused`.
    pub paused: bool,
    /// The current restart annotation.
    pub restarted_at: Option<String>,
}

impl ControllerView {
    /// `FEATURE_GATES`'s value, when set by `value`.
    pub fn feature_gates(&self) -> Option<&str> {
        match &self.slot {
            EnvSlot::At(_, v) => Some(v),
            _ => None,
        }
    }

    /// Reads the Deployment JSON; `image` identifies the controller container.
    pub fn read(deployment: &Value, image: &str) -> Option<ControllerView> {
        let containers = deployment
            .pointer("/spec/template/spec/containers")?
            .as_array()?;
        let index = containers
            .iter()
            .position(|c| c["image"].as_str() == Some(image))?;
        let c = &containers[index];
        let mut value_from = false;
        let slot = match c.get("env").and_then(Value::as_array) {
            None => EnvSlot::NoList,
            Some(env) => match env.iter().position(|e| e["name"] == FEATURE_GATES_ENV) {
                None => EnvSlot::Absent,
                Some(i) => {
                    value_from = env[i].get("valueFrom").is_some_and(|v| !v.is_null());
                    EnvSlot::At(i, env[i]["value"].as_str().unwrap_or("").to_string())
                }
            },
        };
        let words = |field: &str| {
            c.get(field)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        let flag = words("command")
            .iter()
            .chain(words("args").iter())
            .any(|w| w == "--feature-gates" || w.starts_with("--feature-gates="));
        Some(ControllerView {
            index,
            container: c["name"].as_str().unwrap_or("").to_string(),
            slot,
            value_from,
            flag,
            paused: deployment
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            restarted_at: deployment
                .pointer("/spec/template/metadata/annotations")
                .and_then(|a| a.get(labels::RESTARTED_AT))
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------

/// The controller, in the document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerDoc {
    namespace: String,
    name: String,
    image: String,
    version: Option<String>,
}

/// A NodePool's budgets that apply to `Drifted` (v1).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolBudgetsDoc {
    name: String,
    budgets: Vec<BudgetDoc>,
}

/// One budget.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct BudgetDoc {
    /// `nodes`.
    #[serde(default)]
    pub nodes: String,
    /// Schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Reasons (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Whether it is active now (invalid budgets: false).
    #[serde(default, skip_deserializing)]
    pub active: bool,
}

/// `kind: DriftGateChange`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftGateDoc {
    api_version: &'static str,
    kind: &'static str,
    /// `enable` or `disable`.
    action: &'static str,
    controller: ControllerDoc,
    generation: &'static str,
    /// How the generation was told: `version` or `shape`.
    detected_by: &'static str,
    mechanism: Mechanism,
    changes: Vec<Change>,
    /// The gate already had the asked value.
    unchanged: bool,
    /// The Deployment was rolled (restart, or the env change) and the rollout finished.
    restarted: bool,
    dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_pools: Option<Vec<PoolBudgetsDoc>>,
}

// ---------------------------------------------------------------------------------------------
// Glue
// ---------------------------------------------------------------------------------------------

/// `enable-drift`.
pub fn enable(ctx: &mut Context<'_>, args: &DriftGateArgs) -> CommandResult {
    run(ctx, args, true)
}

/// `disable-drift`.
pub fn disable(ctx: &mut Context<'_>, args: &DriftGateArgs) -> CommandResult {
    run(ctx, args, false)
}

fn io(e: std::io::Error) -> CommandError {
    CommandError::remote(format!("writing output: {e}"))
}

fn machine(ctx: &Context<'_>) -> bool {
    matches!(ctx.global.output, OutputFormat::Json | OutputFormat::Yaml)
}

/// Writes a line on stdout in table mode.
fn say(ctx: &mut Context<'_>, text: &str) -> Result<(), CommandError> {
    if !machine(ctx) {
        writeln!(ctx.out, "{text}").map_err(io)?;
    }
    Ok(())
}

/// Progress on stderr (hidden by `-q`).
fn progress(ctx: &mut Context<'_>, text: &str) {
    if !ctx.global.quiet {
        let _ = writeln!(ctx.err, "{text}");
    }
}

fn deployment_path(c: &Controller) -> String {
    format!(
        "/apis/apps/v1/namespaces/{}/deployments/{}",
        c.namespace, c.name
    )
}

fn settings_path(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/configmaps/{SETTINGS_CONFIGMAP}")
}

#[derive(Deserialize, Default)]
struct ConfigMap {
    #[serde(default)]
    data: Option<BTreeMap<String, String>>,
}

fn now_rfc3339() -> String {
    crate::model::time::format_rfc3339(super::unix_now().max(0))
}

fn run(ctx: &mut Context<'_>, args: &DriftGateArgs, enable: bool) -> CommandResult {
    let timeout = crate::disruption::time::parse_duration_flag(&args.timeout).ok_or_else(|| {
        CommandError::input(format!(
            "--timeout {:?}: expected a duration such as 5m",
            args.timeout
        ))
    })?;
    let live = live::connect_cluster(ctx)?;
    let c: &dyn Cluster = &live.client;
    let namespace = args
        .karpenter_namespace
        .as_deref()
        .or(ctx.global.namespace.as_deref());
    let found = coexist::find_controllers(c)?
        .into_iter()
        .map(|(controller, _)| controller)
        .collect();
    let controller = select_controller(found, namespace)?;
    let key = controller.key();
    let deployment: Value = ops::get(c, &deployment_path(&controller))?.ok_or_else(|| {
        CommandError::remote(format!("Deployment {key}: not found (deleted meanwhile?)"))
    })?;
    let view = ControllerView::read(&deployment, &controller.image).ok_or_else(|| {
        CommandError::remote(format!(
            "Deployment {key}: no container runs the controller image {}",
            controller.image
        ))
    })?;
    // Read only when needed: v1 users need no ConfigMap permission.
    let read_settings = || -> Result<Option<ConfigMap>, ClusterError> {
        ops::get(c, &settings_path(&controller.namespace))
    };
    let mut settings: Option<Option<ConfigMap>> = None;
    let version = controller.version.as_deref().and_then(parse_version);
    let (generation, detected_by) = match version {
        Some(v) => (
            Generation::of(v).map_err(|e| {
                CommandError::remote(format!("Deployment {key}: {e}"))
            })?,
            "version",
        ),
        None => match Generation::by_shape(
            view.feature_gates(),
            settings.insert(read_settings()?).is_some(),
        ) {
            Some(g) => {
                ctx.warn(&format!(
                    "Deployment {key}: cannot read a Karpenter version from {:?} (image {}); going by the install's shape: {}",
                    controller.version.as_deref().unwrap_or(""),
                    controller.image,
                    g.label()
                ));
                (g, "shape")
            }
            None => {
                return Err(CommandError::remote(format!(
                    "Deployment {key}: cannot tell which Karpenter release it runs (image {}, no parseable app.kubernetes.io/version label) and it has neither a Drift entry in {FEATURE_GATES_ENV} nor a {SETTINGS_CONFIGMAP} ConfigMap",
                    controller.image
                ))
                .with_hint(format!(
                    "label it with its release: kubectl -n {} label deployment {} app.kubernetes.io/version=X.Y.Z --overwrite",
                    controller.namespace, controller.name
                )))
            }
        },
    };
    let doc = DriftGateDoc {
        api_version: API_VERSION,
        kind: "DriftGateChange",
        action: if enable { "enable" } else { "disable" },
        controller: ControllerDoc {
            namespace: controller.namespace.clone(),
            name: controller.name.clone(),
            image: controller.image.clone(),
            version: controller.version.clone(),
        },
        generation: generation.label(),
        detected_by,
        mechanism: generation.mechanism(),
        changes: Vec::new(),
        unchanged: false,
        restarted: false,
        dry_run: args.dry_run,
        note: None,
        node_pools: None,
    };
    let release = match (version, &controller.version) {
        (Some(_), Some(text)) => text.clone(),
        _ => format!("of unknown version (looks like {})", generation.label()),
    };
    let session = Session {
        c,
        args,
        enable,
        controller: &controller,
        view: &view,
        release,
        timeout,
    };
    match generation.mechanism() {
        Mechanism::None => session.v1(ctx, doc),
        Mechanism::ConfigMap => {
            let settings = match settings {
                Some(read) => read,
                None => read_settings()?,
            };
            session.settings(ctx, doc, settings)
        }
        Mechanism::FeatureGatesEnv => {
            // v0.32 without the env var: the ConfigMap key is merged in (KARPENTER.md §4.4).
            let default = if generation == Generation::FeatureGatesDefaultOff
                && view.feature_gates().is_none()
                && !view.flag
            {
                let settings = match settings {
                    Some(read) => read,
                    None => read_settings()?,
                };
                settings
                    .and_then(|cm| cm.data)
                    .and_then(|d| d.get(DRIFT_KEY).and_then(|v| parse_go_bool(v.trim())))
                    .unwrap_or(false)
            } else {
                generation.drift_default()
            };
            session.env(ctx, doc, default)
        }
    }
}

struct Session<'a> {
    c: &'a dyn Cluster,
    args: &'a DriftGateArgs,
    enable: bool,
    controller: &'a Controller,
    view: &'a ControllerView,
    release: String,
    timeout: Duration,
}

impl Session<'_> {
    fn state(&self) -> &'static str {
        if self.enable {
            "enabled"
        } else {
            "disabled"
        }
    }

    fn finish(&self, ctx: &mut Context<'_>, doc: &DriftGateDoc) -> CommandResult {
        if machine(ctx) {
            write_document(ctx.out, ctx.global.output, doc).map_err(io)?;
        }
        Ok(Exit::Ok)
    }

    /// Shows the diff, then stops (dry run, or the user said no) or goes ahead: `Ok(true)`.
    fn confirm(
        &self,
        ctx: &mut Context<'_>,
        doc: &DriftGateDoc,
        rolls: bool,
    ) -> Result<bool, CommandError> {
        for change in &doc.changes {
            say(ctx, &change.line())?;
        }
        if self.args.dry_run {
            say(ctx, "Dry run: nothing changed.")?;
            return Ok(false);
        }
        ctx.out.flush().map_err(io)?;
        if machine(ctx) && !self.args.yes {
            for change in &doc.changes {
                let _ = writeln!(ctx.err, "{}", change.line());
            }
        }
        let question = format!(
            "{} drift in Karpenter (Deployment {}{})?",
            if self.enable { "Enabling" } else { "Disabling" },
            self.controller.key(),
            if rolls { ", pods restarted" } else { "" }
        );
        if !crate::cli::confirm::confirm(&question, self.args.yes)? {
            progress(ctx, "Nothing changed.");
            return Ok(false);
        }
        Ok(true)
    }

    fn refuse_paused(&self) -> Result<(), CommandError> {
        if self.view.paused {
            return Err(CommandError::remote(format!(
                "Deployment {} is paused: its pods would not be restarted",
                self.controller.key()
            ))
            .with_hint(format!(
                "kubectl -n {} rollout resume deployment/{} first",
                self.controller.namespace, self.controller.name
            )));
        }
        Ok(())
    }

    /// v0.21–v0.31.
    fn settings(
        &self,
        ctx: &mut Context<'_>,
        mut doc: DriftGateDoc,
        settings: Option<ConfigMap>,
    ) -> CommandResult {
        let ns = &self.controller.namespace;
        let Some(cm) = settings else {
            return Err(CommandError::remote(format!(
                "ConfigMap {ns}/{SETTINGS_CONFIGMAP} not found: Karpenter {} (v0.21-v0.31) reads {DRIFT_KEY} from it",
                self.release
            ))
            .with_hint("the Karpenter Helm chart creates it (with the cluster name and endpoint the controller needs): reinstall or upgrade the chart"));
        };
        let data_present = cm.data.is_some();
        let data = cm.data.unwrap_or_default();
        say(
            ctx,
            &format!(
                "Karpenter {} (Deployment {}): drift is switched by {DRIFT_KEY} in ConfigMap {ns}/{SETTINGS_CONFIGMAP}, read at startup.",
                self.release,
                self.controller.key()
            ),
        )?;
        let Some(change) = settings_change(ns, &data, self.enable) else {
            doc.unchanged = true;
            let value = data
                .get(DRIFT_KEY)
                .map_or("(unset)".to_string(), |v| format!("{v:?}"));
            say(
                ctx,
                &format!(
                    "Drift is already {}: {DRIFT_KEY} is {value}; nothing changed.",
                    self.state()
                ),
            )?;
            doc.note = Some(format!(
                "if {DRIFT_KEY} was edited without restarting the controller, restart it: kubectl -n {ns} rollout restart deployment/{}",
                self.controller.name
            ));
            if !machine(ctx) {
                progress(ctx, &format!("note: {}", doc.note.as_deref().unwrap_or("")));
            }
            return self.finish(ctx, &doc);
        };
        let restart = !self.args.no_restart;
        if restart {
            self.refuse_paused()?;
        }
        let now = now_rfc3339();
        doc.changes.push(change.clone());
        if restart {
            doc.changes.push(restart_change(
                &self.controller.key(),
                self.view.restarted_at.as_deref(),
                &now,
            ));
        } else {
            doc.note = Some(format!(
                "--no-restart: Karpenter reads its settings at startup, so the change applies at the controller's next restart (kubectl -n {ns} rollout restart deployment/{})",
                self.controller.name
            ));
        }
        if !self.confirm(ctx, &doc, restart)? {
            return self.finish(ctx, &doc);
        }
        let new = change.new.as_deref().unwrap_or_default();
        ops::json_patch(
            self.c,
            &settings_path(ns),
            &settings_patch(data_present, change.old.as_deref(), new),
        )
        .map_err(|e| named(e, &change.object))?;
        progress(ctx, &format!("{} updated", change.object));
        if restart {
            ops::strategic_patch(
                self.c,
                &deployment_path(self.controller),
                &restart_patch(&now),
            )
            .map_err(|e| named(e, &format!("Deployment {}", self.controller.key())))?;
            progress(
                ctx,
                &format!("Deployment {} restarted", self.controller.key()),
            );
            self.wait(ctx)?;
            doc.restarted = true;
            say(
                ctx,
                &format!(
                    "Drift {}: ConfigMap updated, controller restarted.",
                    self.state()
                ),
            )?;
        } else {
            say(
                ctx,
                &format!(
                    "Drift {} in the ConfigMap; it applies at the controller's next restart (kubectl -n {ns} rollout restart deployment/{}).",
                    self.state(),
                    self.controller.name
                ),
            )?;
        }
        self.finish(ctx, &doc)
    }

    /// v0.32–v0.37.
    fn env(&self, ctx: &mut Context<'_>, mut doc: DriftGateDoc, default: bool) -> CommandResult {
        let key = self.controller.key();
        say(
            ctx,
            &format!(
                "Karpenter {} (Deployment {key}): drift is the {DRIFT_GATE} gate in env {FEATURE_GATES_ENV} of container {}.",
                self.release, self.view.container
            ),
        )?;
        if self.view.flag {
            return Err(CommandError::remote(format!(
                "Deployment {key}: container {} passes --feature-gates, which overrides env {FEATURE_GATES_ENV}",
                self.view.container
            ))
            .with_hint("edit the --feature-gates argument (or the Helm values) yourself"));
        }
        if self.view.value_from {
            return Err(CommandError::remote(format!(
                "Deployment {key}: env {FEATURE_GATES_ENV} of container {} comes from valueFrom",
                self.view.container
            ))
            .with_hint(
                "set Drift in the ConfigMap or Secret it references, then restart the controller",
            ));
        }
        let current = self.view.feature_gates();
        let Some(change) = env_change(&key, &self.view.container, current, default, self.enable)
        else {
            doc.unchanged = true;
            let why = match current {
                Some(v) if gate(v, DRIFT_GATE).is_some() => format!("{FEATURE_GATES_ENV} is {v:?}"),
                Some(v) => format!(
                    "{FEATURE_GATES_ENV} is {v:?}, without {DRIFT_GATE}, and Karpenter {} defaults to {DRIFT_GATE}={default}",
                    self.release
                ),
                None => format!(
                    "{FEATURE_GATES_ENV} is not set and Karpenter {} defaults to {DRIFT_GATE}={default}",
                    self.release
                ),
            };
            say(
                ctx,
                &format!("Drift is already {}: {why}; nothing changed.", self.state()),
            )?;
            return self.finish(ctx, &doc);
        };
        if self.args.no_restart {
            return Err(CommandError::input(format!(
                "--no-restart: changing env {FEATURE_GATES_ENV} of Deployment {key} restarts its pods by itself"
            ))
            .with_hint("drop --no-restart (the rollout is what applies the change)"));
        }
        self.refuse_paused()?;
        doc.changes.push(change.clone());
        if !self.confirm(ctx, &doc, true)? {
            return self.finish(ctx, &doc);
        }
        let patch = env_patch(
            self.view.index,
            &self.view.container,
            &self.view.slot,
            change.new.as_deref().unwrap_or_default(),
        );
        ops::json_patch(self.c, &deployment_path(self.controller), &patch)
            .map_err(|e| named(e, &change.object))?;
        progress(ctx, &format!("Deployment {key} updated"));
        self.wait(ctx)?;
        doc.restarted = true;
        say(
            ctx,
            &format!(
                "Drift {}: controller rolled out with the new {FEATURE_GATES_ENV}.",
                self.state()
            ),
        )?;
        self.finish(ctx, &doc)
    }

    /// v1+: nothing to flip; show the budgets that pace drift.
    fn v1(&self, ctx: &mut Context<'_>, mut doc: DriftGateDoc) -> CommandResult {
        let explanation = if self.enable {
            format!(
                "Karpenter {} (Deployment {}) has no drift feature gate: drift is always on from v1.0. Nothing changed.",
                self.release,
                self.controller.key()
            )
        } else {
            format!(
                "Karpenter {} (Deployment {}) cannot turn drift off: it has no gate from v1.0. Nothing changed. To stop drift replacements, give the NodePools a budget {{nodes: \"0\", reasons: [Drifted]}}.",
                self.release,
                self.controller.key()
            )
        };
        say(ctx, &explanation)?;
        doc.note = Some(explanation);
        doc.unchanged = true;
        let pools = match nodepool_budgets(self.c) {
            Ok(p) => p,
            Err(e) if e.status() == Some(404) => {
                say(
                    ctx,
                    "No NodePools: karpenter.sh/v1 NodePool is not served by this cluster.",
                )?;
                doc.node_pools = Some(Vec::new());
                return self.finish(ctx, &doc);
            }
            Err(e) => return Err(e.into()),
        };
        if pools.is_empty() {
            say(ctx, "No NodePools.")?;
        } else if !machine(ctx) {
            say(ctx, "Drift replacements are paced by each NodePool's disruption budgets that apply to Drifted:")?;
            let mut table = Table::new(&[
                "NODEPOOL", "NODES", "SCHEDULE", "DURATION", "REASONS", "ACTIVE",
            ]);
            for pool in &pools {
                if pool.budgets.is_empty() {
                    table.row(vec![pool.name.clone(), "(none: unlimited)".into()]);
                }
                for b in &pool.budgets {
                    table.row(vec![
                        pool.name.clone(),
                        b.nodes.clone(),
                        b.schedule.clone().unwrap_or_else(|| "-".into()),
                        b.duration.clone().unwrap_or_else(|| "-".into()),
                        if b.reasons.is_empty() {
                            "(all)".into()
                        } else {
                            b.reasons.join(",")
                        },
                        if b.active { "yes".into() } else { "no".into() },
                    ]);
                }
            }
            table.write(ctx.out, !ctx.global.no_headers).map_err(io)?;
        }
        doc.node_pools = Some(pools);
        self.finish(ctx, &doc)
    }

    /// Waits for the controller's rollout, printing kubectl's progress messages.
    fn wait(&self, ctx: &mut Context<'_>) -> Result<(), CommandError> {
        let key = self.controller.key();
        let start = Instant::now();
        // A spinner on a terminal; elsewhere kubectl's messages, one line per change.
        let mut progress = Progress::new(
            ctx.global,
            &format!("Waiting for deployment {:?} rollout", self.controller.name),
        );
        loop {
            let d: RolloutView =
                ops::get(self.c, &deployment_path(self.controller))?.ok_or_else(|| {
                    CommandError::remote(format!("Deployment {key}: deleted during the rollout"))
                })?;
            match rollout_status(&d) {
                Rollout::Done => {
                    progress.finish_with_message(
                        ctx.err,
                        &format!(
                            "deployment {:?} successfully rolled out",
                            self.controller.name
                        ),
                    );
                    return Ok(());
                }
                Rollout::Failed(m) => {
                    return Err(
                        CommandError::remote(format!("Deployment {key}: {m}")).with_hint(format!(
                            "kubectl -n {} describe deployment/{}",
                            self.controller.namespace, self.controller.name
                        )),
                    )
                }
                Rollout::Waiting(m) => {
                    if start.elapsed() >= self.timeout {
                        return Err(CommandError::remote(format!(
                            "Deployment {key}: the rollout did not finish within {}s (the change is made; last status: {m})",
                            self.timeout.as_secs()
                        ))
                        .with_hint(format!(
                            "follow it with kubectl -n {} rollout status deployment/{}",
                            self.controller.namespace, self.controller.name
                        )));
                    }
                    progress.set_message(ctx.err, &m);
                }
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Prefixes a cluster error with the object it was about (a failed `test` reads as a
/// concurrent edit).
fn named(e: ClusterError, object: &str) -> CommandError {
    let concurrent = matches!(&e, ClusterError::Api { status: 422 | 409, message, .. } if message.contains("test"));
    let err = CommandError::from(e);
    let message = format!("{object}: {}", err.message);
    let mut out = CommandError { message, ..err };
    if concurrent {
        out = out.with_hint("it changed while this command ran; run it again");
    }
    out
}

/// Every v1 NodePool with the budgets that apply to `Drifted` (the CRD default `nodes: 10%`
/// when a pool lists none).
fn nodepool_budgets(c: &dyn Cluster) -> Result<Vec<PoolBudgetsDoc>, ClusterError> {
    #[derive(Deserialize, Default)]
    struct Pool {
        #[serde(default)]
        metadata: crate::api::meta::ObjectMeta,
        #[serde(default)]
        spec: PoolSpec,
    }
    #[derive(Deserialize, Default)]
    struct PoolSpec {
        #[serde(default)]
        disruption: PoolDisruption,
    }
    #[derive(Deserialize, Default)]
    struct PoolDisruption {
        budgets: Option<Vec<BudgetDoc>>,
    }
    let now = super::unix_now();
    let pools: Vec<Pool> =
        ops::list_all(c, "/apis/karpenter.sh/v1/nodepools", &ListQuery::default())?;
    Ok(pools
        .into_iter()
        .map(|p| PoolBudgetsDoc {
            name: p.metadata.name.unwrap_or_default(),
            budgets: drifted_budgets(p.spec.disruption.budgets, now),
        })
        .collect())
}

/// The budgets of a pool that apply to `Drifted`, each marked active or not at `now`; `None`
/// (no `budgets` field) is the CRD default `nodes: 10%`.
pub fn drifted_budgets(budgets: Option<Vec<BudgetDoc>>, now: i64) -> Vec<BudgetDoc> {
    use crate::disruption::budgets::{DisruptionReason, ParsedBudget};
    let budgets = budgets.unwrap_or_else(|| {
        vec![BudgetDoc {
            nodes: "10%".into(),
            ..BudgetDoc::default()
        }]
    });
    budgets
        .into_iter()
        .filter(|b| b.reasons.is_empty() || b.reasons.iter().any(|r| r == "Drifted"))
        .map(|mut b| {
            let model = crate::model::nodepool::Budget {
                nodes: b.nodes.clone(),
                schedule: b.schedule.clone(),
                duration: b.duration.clone(),
                reasons: b.reasons.clone(),
            };
            b.active = ParsedBudget::parse(&model)
                .is_ok_and(|p| p.applies_to(DisruptionReason::Drifted) && p.active(now));
            b
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn versions_parse_from_labels_and_tags() {
        assert_eq!(parse_version("v0.27.6"), Some(v(0, 27, 6)));
        assert_eq!(parse_version("0.32.1"), Some(v(0, 32, 1)));
        assert_eq!(parse_version("1.0.0"), Some(v(1, 0, 0)));
        assert_eq!(parse_version("v1.0.0-rc.1"), Some(v(1, 0, 0)));
        assert_eq!(parse_version("0.37.0+abc"), Some(v(0, 37, 0)));
        assert_eq!(parse_version("v0.33"), Some(v(0, 33, 0)));
        assert_eq!(parse_version("v0.27.6@sha256:abc"), Some(v(0, 27, 6)));
        for bad in [
            "", "latest", "v", "sha-1234", "0", "1.x.0", "1.2.3.4", "v-1.0",
        ] {
            assert_eq!(parse_version(bad), None, "{bad}");
        }
    }

    #[test]
    fn generations_follow_the_release_map() {
        assert!(Generation::of(v(0, 20, 1)).is_err());
        assert_eq!(Generation::of(v(0, 21, 0)), Ok(Generation::Settings));
        assert_eq!(Generation::of(v(0, 27, 6)), Ok(Generation::Settings));
        assert_eq!(Generation::of(v(0, 31, 4)), Ok(Generation::Settings));
        assert_eq!(
            Generation::of(v(0, 32, 10)),
            Ok(Generation::FeatureGatesDefaultOff)
        );
        assert_eq!(
            Generation::of(v(0, 33, 0)),
            Ok(Generation::FeatureGatesDefaultOn)
        );
        assert_eq!(
            Generation::of(v(0, 37, 7)),
            Ok(Generation::FeatureGatesDefaultOn)
        );
        assert_eq!(Generation::of(v(1, 0, 0)), Ok(Generation::V1));
        assert_eq!(Generation::of(v(1, 14, 1)), Ok(Generation::V1));
        assert_eq!(Generation::Settings.mechanism(), Mechanism::ConfigMap);
        assert_eq!(
            Generation::FeatureGatesDefaultOff.mechanism(),
            Mechanism::FeatureGatesEnv
        );
        assert_eq!(Generation::V1.mechanism(), Mechanism::None);
        assert!(!Generation::FeatureGatesDefaultOff.drift_default());
        assert!(Generation::FeatureGatesDefaultOn.drift_default());
    }

    #[test]
    fn generation_by_shape_when_the_version_is_unknown() {
        assert_eq!(
            Generation::by_shape(Some("Drift=false"), true),
            Some(Generation::FeatureGatesDefaultOn)
        );
        assert_eq!(
            Generation::by_shape(Some("SpotToSpotConsolidation=true"), true),
            Some(Generation::Settings)
        );
        assert_eq!(Generation::by_shape(None, true), Some(Generation::Settings));
        assert_eq!(Generation::by_shape(Some("NodeRepair=true"), false), None);
        assert_eq!(Generation::by_shape(None, false), None);
    }

    #[test]
    fn feature_gates_are_read_like_go() {
        assert_eq!(gate("Drift=true", "Drift"), Some(Ok(true)));
        assert_eq!(
            gate("A=true, Drift = False ,B=false", "Drift"),
            Some(Ok(false))
        );
        assert_eq!(gate("Drift=false,Drift=1", "Drift"), Some(Ok(true)));
        assert_eq!(gate("Drift=yes", "Drift"), Some(Err("yes".into())));
        assert_eq!(gate("SpotToSpotConsolidation=true", "Drift"), None);
        assert_eq!(gate("", "Drift"), None);
        assert_eq!(gate("Drifted=true", "Drift"), None);
    }

    #[test]
    fn set_gate_replaces_only_drift() {
        assert_eq!(
            set_gate("A=true,Drift=false,B=false", "Drift", true),
            "A=true,Drift=true,B=false"
        );
        assert_eq!(
            set_gate("Drift=false,SpotToSpotConsolidation=true", "Drift", true),
            "Drift=true,SpotToSpotConsolidation=true"
        );
        assert_eq!(set_gate("", "Drift", true), "Drift=true");
        assert_eq!(
            set_gate("SpotToSpotConsolidation=false", "Drift", false),
            "SpotToSpotConsolidation=false,Drift=false"
        );
        assert_eq!(
            set_gate(" Drift=true , A=1,,Drift=false", "Drift", false),
            "Drift=false,A=1"
        );
        assert_eq!(
            set_gate("Drifted=true", "Drift", true),
            "Drifted=true,Drift=true"
        );
    }

    #[test]
    fn settings_changes_and_idempotence() {
        let data = |v: Option<&str>| {
            let mut m = BTreeMap::new();
            m.insert("aws.clusterName".to_string(), "demo".to_string());
            if let Some(v) = v {
                m.insert(DRIFT_KEY.to_string(), v.to_string());
            }
            m
        };
        let c = settings_change("karpenter", &data(Some("false")), true).unwrap();
        assert_eq!(
            c.line(),
            "ConfigMap karpenter/karpenter-global-settings: featureGates.driftEnabled: \"false\" → \"true\""
        );
        assert!(settings_change("karpenter", &data(Some("true")), true).is_none());
        assert!(settings_change("karpenter", &data(Some("True")), true).is_none());
        assert!(settings_change("karpenter", &data(None), false).is_none());
        let c = settings_change("k", &data(None), true).unwrap();
        assert_eq!(c.old, None);
        assert!(c.line().ends_with("(unset) → \"true\""), "{}", c.line());
        let c = settings_change("k", &data(Some("yes")), true).unwrap();
        assert_eq!(c.old.as_deref(), Some("yes"));
    }

    #[test]
    fn env_changes_and_idempotence() {
        let c = env_change(
            "karpenter/karpenter",
            "controller",
            Some("Drift=false"),
            false,
            true,
        )
        .unwrap();
        assert_eq!(
            c.line(),
            "Deployment karpenter/karpenter: containers[controller].env.FEATURE_GATES: \"Drift=false\" → \"Drift=true\""
        );
        assert!(env_change("d", "c", Some("Drift=true,X=false"), false, true).is_none());
        // v0.33+: absent Drift means on.
        assert!(env_change("d", "c", Some("SpotToSpotConsolidation=false"), true, true).is_none());
        assert!(env_change("d", "c", None, true, true).is_none());
        let c = env_change("d", "c", None, true, false).unwrap();
        assert_eq!((c.old, c.new.as_deref()), (None, Some("Drift=false")));
        // v0.32: absent means off.
        let c = env_change("d", "c", None, false, true).unwrap();
        assert_eq!(c.new.as_deref(), Some("Drift=true"));
        let c = env_change("d", "c", Some("Drift=maybe"), true, true).unwrap();
        assert_eq!(c.new.as_deref(), Some("Drift=true"));
    }

    #[test]
    fn restart_line() {
        let c = restart_change("karpenter/karpenter", None, "2024-01-01T00:00:00Z");
        assert!(c.is_restart());
        assert_eq!(
            c.line(),
            "Deployment karpenter/karpenter: rollout restart (kubectl.kubernetes.io/restartedAt: (unset) → \"2024-01-01T00:00:00Z\")"
        );
        assert_eq!(
            restart_patch("T"),
            json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "T"}}}}})
        );
    }

    #[test]
    fn patches_test_what_they_replace() {
        assert_eq!(
            settings_patch(true, Some("false"), "true"),
            json!([
                {"op": "test", "path": "/data/featureGates.driftEnabled", "value": "false"},
                {"op": "replace", "path": "/data/featureGates.driftEnabled", "value": "true"},
            ])
        );
        assert_eq!(
            settings_patch(true, None, "true"),
            json!([{"op": "add", "path": "/data/featureGates.driftEnabled", "value": "true"}])
        );
        assert_eq!(
            settings_patch(false, None, "true"),
            json!([{"op": "add", "path": "/data", "value": {"featureGates.driftEnabled": "true"}}])
        );
        let p = env_patch(
            1,
            "controller",
            &EnvSlot::At(2, "Drift=false".into()),
            "Drift=true",
        );
        assert_eq!(
            p[0],
            json!({"op": "test", "path": "/spec/template/spec/containers/1/name", "value": "controller"})
        );
        assert_eq!(
            p[2],
            json!({"op": "test", "path": "/spec/template/spec/containers/1/env/2/value", "value": "Drift=false"})
        );
        assert_eq!(p[3]["op"], "replace");
        let p = env_patch(0, "c", &EnvSlot::NoList, "Drift=true");
        assert_eq!(
            p[1],
            json!({"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [{"name": "FEATURE_GATES", "value": "Drift=true"}]})
        );
        let p = env_patch(0, "c", &EnvSlot::Absent, "Drift=true");
        assert_eq!(p[1]["path"], "/spec/template/spec/containers/0/env/-");
    }

    #[test]
    fn controller_view_reads_the_env_and_flags() {
        let d = json!({
            "spec": {"paused": true, "template": {
                "metadata": {"annotations": {labels::RESTARTED_AT: "t0"}},
                "spec": {"containers": [
                    {"name": "sidecar", "image": "busybox"},
                    {"name": "controller", "image": "public.ecr.aws/karpenter/controller:0.33.0",
                     "args": ["--feature-gates=Drift=true"],
                     "env": [{"name": "A", "value": "1"}, {"name": "FEATURE_GATES", "value": "Drift=false"}]},
                ]}}}
        });
        let view = ControllerView::read(&d, "public.ecr.aws/karpenter/controller:0.33.0").unwrap();
        assert_eq!(view.index, 1);
        assert_eq!(view.container, "controller");
        assert_eq!(view.slot, EnvSlot::At(1, "Drift=false".into()));
        assert_eq!(view.feature_gates(), Some("Drift=false"));
        assert!(view.flag && view.paused && !view.value_from);
        assert_eq!(view.restarted_at.as_deref(), Some("t0"));
        let d = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "controller", "image": "k", "env": [{"name": "FEATURE_GATES", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}}]}
        ]}}}});
        let view = ControllerView::read(&d, "k").unwrap();
        assert!(view.value_from && !view.flag && !view.paused);
        assert!(ControllerView::read(&d, "other").is_none());
    }

    fn rollout(
        generation: i64,
        observed: i64,
        spec: i64,
        replicas: i64,
        updated: i64,
        available: i64,
    ) -> RolloutView {
        RolloutView {
            metadata: RolloutMeta {
                name: "karpenter".into(),
                generation,
            },
            spec: RolloutSpec {
                replicas: Some(spec),
            },
            status: RolloutStatus {
                observed_generation: observed,
                replicas,
                updated_replicas: updated,
                available_replicas: available,
                conditions: Vec::new(),
            },
        }
    }

    #[test]
    fn rollout_status_reads_like_kubectl() {
        assert!(
            matches!(rollout_status(&rollout(2, 1, 2, 2, 2, 2)), Rollout::Waiting(m) if m.contains("spec update"))
        );
        assert_eq!(
            rollout_status(&rollout(2, 2, 2, 3, 1, 2)),
            Rollout::Waiting("Waiting for deployment \"karpenter\" rollout to finish: 1 out of 2 new replicas have been updated...".into())
        );
        assert!(
            matches!(rollout_status(&rollout(2, 2, 2, 3, 2, 2)), Rollout::Waiting(m) if m.contains("1 old replicas are pending termination"))
        );
        assert!(
            matches!(rollout_status(&rollout(2, 2, 2, 2, 2, 1)), Rollout::Waiting(m) if m.contains("1 of 2 updated replicas are available"))
        );
        assert_eq!(rollout_status(&rollout(2, 2, 2, 2, 2, 2)), Rollout::Done);
        assert_eq!(rollout_status(&rollout(3, 3, 0, 0, 0, 0)), Rollout::Done);
        let mut stuck = rollout(2, 2, 2, 3, 1, 1);
        stuck.status.conditions.push(Condition {
            type_: "Progressing".into(),
            reason: "ProgressDeadlineExceeded".into(),
        });
        assert!(matches!(rollout_status(&stuck), Rollout::Failed(_)));
    }

    fn controller(ns: &str, name: &str) -> Controller {
        Controller {
            namespace: ns.into(),
            name: name.into(),
            ready_replicas: 1,
            image: "public.ecr.aws/karpenter/controller:v0.27.6".into(),
            version: Some("0.27.6".into()),
        }
    }

    #[test]
    fn controller_selection() {
        let one = select_controller(vec![controller("karpenter", "karpenter")], None).unwrap();
        assert_eq!(one.key(), "karpenter/karpenter");
        let none = select_controller(vec![], None).unwrap_err();
        assert_eq!(none.exit, Exit::Remote);
        let two = || vec![controller("a", "karpenter"), controller("b", "karpenter")];
        let err = select_controller(two(), None).unwrap_err();
        assert_eq!(err.exit, Exit::Input);
        assert!(
            err.message.contains("a/karpenter, b/karpenter"),
            "{}",
            err.message
        );
        assert_eq!(
            select_controller(two(), Some("b")).unwrap().key(),
            "b/karpenter"
        );
        let err = select_controller(two(), Some("c")).unwrap_err();
        assert_eq!(err.exit, Exit::Remote);
        assert!(
            err.message
                .contains("namespace c (found: a/karpenter, b/karpenter)"),
            "{}",
            err.message
        );
    }

    #[test]
    fn budgets_for_drifted() {
        let b = |nodes: &str, reasons: &[&str]| BudgetDoc {
            nodes: nodes.into(),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            ..BudgetDoc::default()
        };
        let out = drifted_budgets(None, 0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].nodes, "10%");
        assert!(out[0].active);
        let out = drifted_budgets(
            Some(vec![
                b("5", &["Empty"]),
                b("0", &["Drifted", "Underutilized"]),
                b("20%", &[]),
            ]),
            0,
        );
        assert_eq!(
            out.iter().map(|b| b.nodes.as_str()).collect::<Vec<_>>(),
            ["0", "20%"]
        );
        // A scheduled budget outside its window is shown inactive.
        let mut scheduled = b("0", &[]);
        scheduled.schedule = Some("0 9 * * *".into());
        scheduled.duration = Some("1h".into());
        // 1970-01-01T00:00:00Z is outside 09:00-10:00.
        assert!(!drifted_budgets(Some(vec![scheduled.clone()]), 0)[0].active);
        assert!(drifted_budgets(Some(vec![scheduled]), 9 * 3600 + 60)[0].active);
    }
}
