//! `enable-drift` / `disable-drift`: find the Karpenter controller, tell its generation, and
//! switch drift the way that generation wants it (the rules are in [`crate::karpenter_install`]),
//! showing the operator every change and asking before the first write, then waiting for the
//! rollout that applies it.
//!
//! Every write is a JSON patch with `test` operations on the values it read, so an edit made
//! between reading and writing fails (exit 3) instead of being overwritten. Nothing is written
//! when the gate already has the asked value (idempotent: no restart either).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock::Clock;
use crate::error::CommandError;
use crate::k8s::coexist::{self, Controller};
use crate::k8s::ops::{self, ListQuery};
use crate::k8s::{Cluster, ClusterError};
use crate::karpenter_install::changes::settings_drift;
use crate::karpenter_install::{
    drifted_budgets, env_change, env_patch, parse_version, restart_change, restart_patch,
    rollout_status, settings_change, settings_patch, Change, ControllerView, DetectedBy,
    DriftedBudget, FeatureGates, Generation, Mechanism, Rollout, RolloutView, Version, DRIFT_KEY,
    FEATURE_GATES_ENV, SETTINGS_CONFIGMAP,
};

/// How often the rollout is polled.
const POLL: Duration = Duration::from_millis(500);

/// Which way drift is switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// `enable-drift`.
    Enable,
    /// `disable-drift`.
    Disable,
}

impl Action {
    /// The value the gate should have.
    pub fn wanted(self) -> bool {
        self == Action::Enable
    }
}

/// What the operator asked for.
#[derive(Debug, Clone)]
pub struct Request {
    /// Enable or disable.
    pub action: Action,
    /// The controller's namespace (`None`: the only controller of the cluster).
    pub namespace: Option<String>,
    /// v0.21–v0.31: restart the controller after the ConfigMap change (`--no-restart` clears it;
    /// v0.32–v0.37 refuse without it, their env change restarts by itself).
    pub restart: bool,
    /// Show the changes, write nothing.
    pub dry_run: bool,
    /// How long to wait for the rollout.
    pub timeout: Duration,
}

/// The Karpenter controller a cluster runs, as far as its Deployment tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The controller Deployment.
    pub controller: Controller,
    /// Its controller container.
    pub deployment: ControllerView,
    /// The release, when its version label or image tag parses.
    pub version: Option<Version>,
    /// How it gates drift.
    pub generation: Generation,
    /// How the generation was told.
    pub detected_by: DetectedBy,
}

impl Install {
    /// The release as people read it: the version as written, or what it looks like.
    pub fn release(&self) -> String {
        match (self.version, &self.controller.version) {
            (Some(_), Some(text)) => text.clone(),
            _ => format!(
                "of unknown version (looks like {})",
                self.generation.label()
            ),
        }
    }

    /// The gates the controller container runs with (v0.32+; consolidation reads
    /// `SpotToSpotConsolidation` from them): its `--feature-gates` flag when set, else
    /// `FEATURE_GATES` ([`ControllerView::effective_feature_gates`]).
    pub fn feature_gates(&self) -> FeatureGates {
        self.deployment.effective_feature_gates()
    }

    /// The controller container's `MinValuesPolicy` as written (`--min-values-policy`, else
    /// `MIN_VALUES_POLICY`); `None`: not set (Karpenter's default, `Strict`).
    pub fn min_values_policy(&self) -> Option<&str> {
        self.deployment.min_values_policy.as_deref()
    }

    /// The controller container's `PreferencePolicy` as written (`--preference-policy`, else
    /// `PREFERENCE_POLICY`); `None`: not set (Karpenter's default, `Respect`).
    pub fn preference_policy(&self) -> Option<&str> {
        self.deployment.preference_policy.as_deref()
    }

    /// The AWS controller's `VMMemoryOverheadPercent` as written (`--vm-memory-overhead-percent`,
    /// else `VM_MEMORY_OVERHEAD_PERCENT`); `None`: not set (0.075).
    pub fn vm_memory_overhead_percent(&self) -> Option<&str> {
        self.deployment.vm_memory_overhead_percent.as_deref()
    }

    /// The AWS controller's `ReservedENIs` as written (`--reserved-enis`, else
    /// `RESERVED_ENIS`); `None`: not set (0).
    pub fn reserved_enis(&self) -> Option<&str> {
        self.deployment.reserved_enis.as_deref()
    }
}

/// What happens, as it happens.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The release is unreadable; the install's shape told the generation.
    Guessed(&'a Install),
    /// The controller and where its gate lives, before anything is decided.
    Found(&'a Install),
    /// The changes about to be made (a dry run stops after them).
    Proposed(&'a [Change]),
    /// A change was written.
    Written(&'a Change),
    /// Waiting for the controller's rollout starts.
    RolloutStarted(&'a Controller),
    /// The rollout is in progress (kubectl's message).
    RolloutWaiting(&'a str),
    /// The rollout finished.
    RolledOut(&'a Controller),
}

/// The question before the first write.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// Enable or disable.
    pub action: Action,
    /// The controller.
    pub controller: &'a Controller,
    /// Whether the controller's pods are restarted.
    pub restarts: bool,
    /// The changes (already shown through [`Event::Proposed`]).
    pub changes: &'a [Change],
}

/// The person running the command: told what happens, asked before anything changes.
pub trait Operator {
    /// Something happened; an error when it cannot be shown (stdout is gone).
    fn tell(&mut self, event: Event<'_>) -> Result<(), CommandError>;
    /// Whether the changes may be made; an error when nobody can answer.
    fn confirm(&mut self, question: &Question<'_>) -> Result<bool, CommandError>;
}

/// Why nothing needed changing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Already {
    /// v0.21–v0.31: `featureGates.driftEnabled` already says so (its value as written; `None`:
    /// unset).
    Setting(Option<String>),
    /// v0.32–v0.37: `FEATURE_GATES` already says so, or drift's `default` does.
    Env {
        /// The env var.
        gates: FeatureGates,
        /// Drift's value without a `Drift` entry.
        default: bool,
    },
}

/// A NodePool's budgets that apply to `Drifted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolBudgets {
    /// The NodePool.
    pub name: String,
    /// Its budgets for `Drifted` (the CRD default when it lists none).
    pub budgets: Vec<DriftedBudget>,
}

/// v1's NodePools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodePools {
    /// `karpenter.sh/v1` NodePools are not served.
    NotServed,
    /// Every NodePool, by name.
    Listed(Vec<PoolBudgets>),
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// The gate already had the asked value: nothing written.
    Unchanged(Already),
    /// v1: no gate; nothing written.
    NoGate(NodePools),
    /// `--dry-run`: the changes were shown, nothing written.
    DryRun,
    /// The operator said no: nothing written.
    Declined,
    /// Written; `restarted`: the controller was rolled and the rollout finished.
    Applied {
        /// Whether the controller was rolled (not with `--no-restart` on v0.21–v0.31).
        restarted: bool,
    },
}

/// The result of [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The controller.
    pub install: Install,
    /// Enable or disable.
    pub action: Action,
    /// The changes shown (and, when applied, made).
    pub changes: Vec<Change>,
    /// How it ended.
    pub done: Done,
}

/// Switches drift in the cluster's Karpenter controller.
pub fn run(
    cluster: &dyn Cluster,
    clock: &dyn Clock,
    request: &Request,
    operator: &mut dyn Operator,
) -> Result<Outcome, CommandError> {
    let (install, mut settings) = inspect(cluster, request.namespace.as_deref())?;
    if install.detected_by == DetectedBy::Shape {
        operator.tell(Event::Guessed(&install))?;
    }
    let mut gate = Gate {
        cluster,
        clock,
        request,
        operator,
        install: &install,
    };
    let settings_path = settings_path(&install.controller.namespace);
    let mut read_settings = || match settings.take() {
        Some(read) => Ok(read),
        None => ops::get::<Settings>(cluster, &settings_path),
    };
    let (changes, done) = match install.generation.mechanism() {
        Mechanism::None => gate.v1()?,
        Mechanism::ConfigMap => gate.settings(read_settings()?)?,
        Mechanism::FeatureGatesEnv => {
            let view = &install.deployment;
            // v0.32 without the env var: the ConfigMap key is merged in (docs/karpenter.md §4.4).
            let default = if install.generation == Generation::FeatureGatesDefaultOff
                && view.feature_gates().value().is_none()
                && !view.flag
            {
                read_settings()?
                    .and_then(|cm| cm.data)
                    .and_then(|d| settings_drift(&d))
                    .unwrap_or(false)
            } else {
                install.generation.drift_default()
            };
            gate.env(default)?
        }
    };
    Ok(Outcome {
        action: request.action,
        install,
        changes,
        done,
    })
}

/// The controller in `namespace` (else the only one) and its generation, changing nothing.
pub fn installed(cluster: &dyn Cluster, namespace: Option<&str>) -> Result<Install, CommandError> {
    inspect(cluster, namespace).map(|(install, _)| install)
}

/// The settings ConfigMap, as far as the gate reads it.
#[derive(Debug, Deserialize, Default)]
struct Settings {
    #[serde(default)]
    data: Option<BTreeMap<String, String>>,
}

/// [`installed`], with the settings ConfigMap when telling the generation needed it (`Some`:
/// read; `Some(None)`: absent).
fn inspect(
    cluster: &dyn Cluster,
    namespace: Option<&str>,
) -> Result<(Install, Option<Option<Settings>>), CommandError> {
    let found = coexist::find_controllers(cluster)?
        .into_iter()
        .map(|(controller, _)| controller)
        .collect();
    let controller = select_controller(found, namespace)?;
    let key = controller.key();
    let deployment: Value = ops::get(cluster, &deployment_path(&controller))?.ok_or_else(|| {
        CommandError::remote(format!("Deployment {key}: not found (deleted meanwhile?)"))
    })?;
    let view = ControllerView::read(&deployment, &controller.image).ok_or_else(|| {
        CommandError::remote(format!(
            "Deployment {key}: no container runs the controller image {}",
            controller.image
        ))
    })?;
    let version = controller.version.as_deref().and_then(parse_version);
    let mut settings = None;
    let (generation, detected_by) = match version {
        Some(v) => (
            Generation::of(v)
                .map_err(|e| CommandError::remote(format!("Deployment {key}: {e}")))?,
            DetectedBy::Version,
        ),
        None => {
            let read: Option<Settings> = ops::get(cluster, &settings_path(&controller.namespace))?;
            let generation = Generation::by_shape(&view.feature_gates(), read.is_some())
                .ok_or_else(|| {
                    CommandError::remote(format!(
                        "Deployment {key}: cannot tell which Karpenter release it runs (image {}, no parseable app.kubernetes.io/version label) and it has neither a Drift entry in {FEATURE_GATES_ENV} nor a {SETTINGS_CONFIGMAP} ConfigMap",
                        controller.image
                    ))
                    .with_hint(format!(
                        "label it with its release: kubectl -n {} label deployment {} app.kubernetes.io/version=X.Y.Z --overwrite",
                        controller.namespace, controller.name
                    ))
                })?;
            settings = Some(read);
            (generation, DetectedBy::Shape)
        }
    };
    let install = Install {
        controller,
        deployment: view,
        version,
        generation,
        detected_by,
    };
    Ok((install, settings))
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
                    some_of(&all)
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
            some_of(&candidates.iter().map(Controller::key).collect::<Vec<_>>())
        ))
        .with_hint("pick one with --karpenter-namespace NS")),
    }
}

/// The first few `names`, and how many more: one line however many the cluster answered with
/// (the live fuzzer's thousands of Deployments made a line of 70,000 characters).
fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 5;
    match names.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{} and {more} more", names[..SHOWN].join(", ")),
        _ => names.join(", "),
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

/// One run's state: what it talks to and what it found.
struct Gate<'a> {
    cluster: &'a dyn Cluster,
    clock: &'a dyn Clock,
    request: &'a Request,
    operator: &'a mut dyn Operator,
    install: &'a Install,
}

impl Gate<'_> {
    fn key(&self) -> String {
        self.install.controller.key()
    }

    /// Shows the changes, then stops (dry run, or the operator said no: `Some`) or goes on.
    fn propose(
        &mut self,
        changes: &[Change],
        restarts: bool,
    ) -> Result<Option<Done>, CommandError> {
        self.operator.tell(Event::Proposed(changes))?;
        if self.request.dry_run {
            return Ok(Some(Done::DryRun));
        }
        let question = Question {
            action: self.request.action,
            controller: &self.install.controller,
            restarts,
            changes,
        };
        Ok((!self.operator.confirm(&question)?).then_some(Done::Declined))
    }

    fn refuse_paused(&self) -> Result<(), CommandError> {
        let controller = &self.install.controller;
        if self.install.deployment.paused {
            return Err(CommandError::remote(format!(
                "Deployment {} is paused: its pods would not be restarted",
                controller.key()
            ))
            .with_hint(format!(
                "kubectl -n {} rollout resume deployment/{} first",
                controller.namespace, controller.name
            )));
        }
        Ok(())
    }

    /// v0.21–v0.31: the ConfigMap key, then (unless `--no-restart`) a restart.
    fn settings(
        &mut self,
        settings: Option<Settings>,
    ) -> Result<(Vec<Change>, Done), CommandError> {
        let ns = &self.install.controller.namespace;
        let Some(cm) = settings else {
            return Err(CommandError::remote(format!(
                "ConfigMap {ns}/{SETTINGS_CONFIGMAP} not found: Karpenter {} (v0.21-v0.31) reads {DRIFT_KEY} from it",
                self.install.release()
            ))
            .with_hint("the Karpenter Helm chart creates it (with the cluster name and endpoint the controller needs): reinstall or upgrade the chart"));
        };
        let data_present = cm.data.is_some();
        let data = cm.data.unwrap_or_default();
        self.operator.tell(Event::Found(self.install))?;
        let Some(change) = settings_change(ns, &data, self.request.action.wanted()) else {
            let value = data.get(DRIFT_KEY).cloned();
            return Ok((Vec::new(), Done::Unchanged(Already::Setting(value))));
        };
        let restart = self.request.restart;
        if restart {
            self.refuse_paused()?;
        }
        let now = crate::model::time::format_rfc3339(self.clock.now().max(0));
        let mut changes = vec![change.clone()];
        if restart {
            changes.push(restart_change(
                &self.key(),
                self.install.deployment.restarted_at.as_deref(),
                &now,
            ));
        }
        if let Some(stop) = self.propose(&changes, restart)? {
            return Ok((changes, stop));
        }
        let patch = settings_patch(
            data_present,
            change.old.as_deref(),
            change.new.as_deref().unwrap_or_default(),
        );
        ops::json_patch(self.cluster, &settings_path(ns), &patch)
            .map_err(|e| named(e, &change.object))?;
        self.operator.tell(Event::Written(&changes[0]))?;
        if restart {
            ops::strategic_patch(
                self.cluster,
                &deployment_path(&self.install.controller),
                &restart_patch(&now),
            )
            .map_err(|e| named(e, &changes[1].object))?;
            self.operator.tell(Event::Written(&changes[1]))?;
            self.wait()?;
        }
        Ok((changes, Done::Applied { restarted: restart }))
    }

    /// v0.32–v0.37: `Drift` in `FEATURE_GATES`; the env change rolls the Deployment.
    fn env(&mut self, default: bool) -> Result<(Vec<Change>, Done), CommandError> {
        let key = self.key();
        let view = &self.install.deployment;
        self.operator.tell(Event::Found(self.install))?;
        if view.flag {
            return Err(CommandError::remote(format!(
                "Deployment {key}: container {} passes --feature-gates, which overrides env {FEATURE_GATES_ENV}",
                view.container
            ))
            .with_hint("edit the --feature-gates argument (or the Helm values) yourself"));
        }
        if view.value_from {
            return Err(CommandError::remote(format!(
                "Deployment {key}: env {FEATURE_GATES_ENV} of container {} comes from valueFrom",
                view.container
            ))
            .with_hint(
                "set Drift in the ConfigMap or Secret it references, then restart the controller",
            ));
        }
        let gates = view.feature_gates();
        let Some(change) = env_change(
            &key,
            &view.container,
            &gates,
            default,
            self.request.action.wanted(),
        ) else {
            return Ok((Vec::new(), Done::Unchanged(Already::Env { gates, default })));
        };
        if !self.request.restart {
            return Err(CommandError::input(format!(
                "--no-restart: changing env {FEATURE_GATES_ENV} of Deployment {key} restarts its pods by itself"
            ))
            .with_hint("drop --no-restart (the rollout is what applies the change)"));
        }
        self.refuse_paused()?;
        let changes = vec![change];
        if let Some(stop) = self.propose(&changes, true)? {
            return Ok((changes, stop));
        }
        let patch = env_patch(
            view.index,
            &view.container,
            &view.slot,
            changes[0].new.as_deref().unwrap_or_default(),
        );
        ops::json_patch(
            self.cluster,
            &deployment_path(&self.install.controller),
            &patch,
        )
        .map_err(|e| named(e, &changes[0].object))?;
        self.operator.tell(Event::Written(&changes[0]))?;
        self.wait()?;
        Ok((changes, Done::Applied { restarted: true }))
    }

    /// v1+: nothing to switch; the budgets that pace drift.
    fn v1(&mut self) -> Result<(Vec<Change>, Done), CommandError> {
        self.operator.tell(Event::Found(self.install))?;
        let pools = match nodepool_budgets(self.cluster, self.clock.now()) {
            Ok(pools) => NodePools::Listed(pools),
            Err(e) if e.status() == Some(404) => NodePools::NotServed,
            Err(e) => return Err(e.into()),
        };
        Ok((Vec::new(), Done::NoGate(pools)))
    }

    /// Waits for the controller's rollout.
    fn wait(&mut self) -> Result<(), CommandError> {
        let controller = &self.install.controller;
        let key = controller.key();
        let timeout = self.request.timeout;
        let start = self.clock.monotonic();
        self.operator.tell(Event::RolloutStarted(controller))?;
        loop {
            let d: RolloutView =
                ops::get(self.cluster, &deployment_path(controller))?.ok_or_else(|| {
                    CommandError::remote(format!("Deployment {key}: deleted during the rollout"))
                })?;
            let follow = format!(
                "follow it with kubectl -n {} rollout status deployment/{}",
                controller.namespace, controller.name
            );
            match rollout_status(&d) {
                Rollout::Done => {
                    self.operator.tell(Event::RolledOut(controller))?;
                    return Ok(());
                }
                Rollout::Failed(m) => {
                    return Err(
                        CommandError::remote(format!("Deployment {key}: {m}")).with_hint(format!(
                            "kubectl -n {} describe deployment/{}",
                            controller.namespace, controller.name
                        )),
                    )
                }
                Rollout::Waiting(m) => {
                    if self.clock.monotonic().saturating_sub(start) >= timeout {
                        return Err(CommandError::remote(format!(
                            "Deployment {key}: the rollout did not finish within {}s (the change is made; last status: {m})",
                            timeout.as_secs()
                        ))
                        .with_hint(follow));
                    }
                    self.operator.tell(Event::RolloutWaiting(&m))?;
                }
            }
            if !self.clock.sleep(POLL) {
                return Err(CommandError::remote(format!(
                    "Deployment {key}: stopped waiting for the rollout (the change is made)"
                ))
                .with_hint(follow));
            }
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

/// Every v1 NodePool with the budgets that apply to `Drifted`.
fn nodepool_budgets(c: &dyn Cluster, now: i64) -> Result<Vec<PoolBudgets>, ClusterError> {
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
        budgets: Option<Vec<DriftedBudget>>,
    }
    let pools: Vec<Pool> =
        ops::list_all(c, "/apis/karpenter.sh/v1/nodepools", &ListQuery::default())?;
    Ok(pools
        .into_iter()
        .map(|p| PoolBudgets {
            name: p.metadata.name.unwrap_or_default(),
            budgets: drifted_budgets(p.spec.disruption.budgets, now),
        })
        .collect())
}

#[cfg(test)]
mod tests;
