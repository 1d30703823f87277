//! `enable-drift` / `disable-drift` for people and scripts: a few lines on stdout saying where
//! the gate lives, the diff, and what happened (table mode); progress on stderr; the
//! `DriftGateChange` document (JSON/YAML). [`Console`] is the use case's
//! [`Operator`]: it shows the events as they come and asks the question.

use std::io::Write;

use serde::Serialize;

use super::{io_error, machine, status, warn};
use crate::cli::output::{one_line, write_document, Table, API_VERSION};
use crate::cli::progress::Progress;
use crate::cli::{GlobalArgs, OutputFormat};
use crate::error::{CommandError, CommandResult, Exit};
use crate::karpenter_install::{
    Change, DetectedBy, Mechanism, DRIFT_GATE, DRIFT_KEY, FEATURE_GATES_ENV, RESTARTED_AT,
    SETTINGS_CONFIGMAP,
};
use crate::usecases::drift_gate::{
    Action, Already, Done, Event, Install, NodePools, Operator, Outcome, PoolBudgets, Question,
};

/// The terminal side of a gate run.
pub struct Console<'a> {
    global: &'a GlobalArgs,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    action: Action,
    /// `--yes`.
    yes: bool,
    rollout: Option<Progress>,
}

impl<'a> Console<'a> {
    /// A console for `action`; `yes` answers the question.
    pub fn new(
        global: &'a GlobalArgs,
        out: &'a mut dyn Write,
        err: &'a mut dyn Write,
        action: Action,
        yes: bool,
    ) -> Console<'a> {
        Console {
            global,
            out,
            err,
            action,
            yes,
            rollout: None,
        }
    }

    /// A line on stdout in table mode, on one line whatever it quotes.
    fn say(&mut self, text: &str) -> Result<(), CommandError> {
        if !scripted(self.global) {
            writeln!(self.out, "{}", one_line(text)).map_err(io_error)?;
        }
        Ok(())
    }

    fn state(&self) -> &'static str {
        match self.action {
            Action::Enable => "enabled",
            Action::Disable => "disabled",
        }
    }

    /// The end: what happened, and the document. `dry_run` and `restart` as asked.
    pub fn finish(mut self, outcome: &Outcome, dry_run: bool, restart: bool) -> CommandResult {
        let install = &outcome.install;
        let controller = &install.controller;
        let ns = &controller.namespace;
        let state = self.state();
        let restart_command = format!(
            "kubectl -n {ns} rollout restart deployment/{}",
            controller.name
        );
        let mut note = None;
        let mut node_pools = None;
        if install.generation.mechanism() == Mechanism::ConfigMap
            && !outcome.changes.is_empty()
            && !restart
        {
            note = Some(format!("--no-restart: Karpenter reads its settings at startup, so the change applies at the controller's next restart ({restart_command})"));
        }
        match &outcome.done {
            Done::Unchanged(Already::Setting(value)) => {
                let value = value
                    .as_ref()
                    .map_or("(unset)".to_string(), |v| format!("{v:?}"));
                self.say(&format!(
                    "Drift is already {state}: {DRIFT_KEY} is {value}; nothing changed."
                ))?;
                let text = format!("if {DRIFT_KEY} was edited without restarting the controller, restart it: {restart_command}");
                if !scripted(self.global) {
                    status(self.global, self.err, &format!("note: {text}"));
                }
                note = Some(text);
            }
            Done::Unchanged(Already::Env { gates, default }) => {
                let release = install.release();
                let why = match gates.value() {
                    Some(v) if gates.get(DRIFT_GATE).is_some() => {
                        format!("{FEATURE_GATES_ENV} is {v:?}")
                    }
                    Some(v) => format!(
                        "{FEATURE_GATES_ENV} is {v:?}, without {DRIFT_GATE}, and Karpenter {release} defaults to {DRIFT_GATE}={default}"
                    ),
                    None => format!(
                        "{FEATURE_GATES_ENV} is not set and Karpenter {release} defaults to {DRIFT_GATE}={default}"
                    ),
                };
                self.say(&format!(
                    "Drift is already {state}: {why}; nothing changed."
                ))?;
            }
            Done::NoGate(pools) => {
                note = Some(self.no_gate(install));
                node_pools = Some(self.budgets(pools)?);
            }
            Done::DryRun => self.say("Dry run: nothing changed.")?,
            Done::Declined => status(self.global, self.err, "Nothing changed."),
            Done::Applied { restarted } => {
                let text = match (install.generation.mechanism(), restarted) {
                    (Mechanism::ConfigMap, true) => {
                        format!("Drift {state}: ConfigMap updated, controller restarted.")
                    }
                    (Mechanism::ConfigMap, false) => format!(
                        "Drift {state} in the ConfigMap; it applies at the controller's next restart ({restart_command})."
                    ),
                    _ => format!(
                        "Drift {state}: controller rolled out with the new {FEATURE_GATES_ENV}."
                    ),
                };
                self.say(&text)?;
            }
        }
        if self.global.output == OutputFormat::Name {
            // kubectl's `-o name`: each object written (a dry run: that would be), once.
            if matches!(outcome.done, Done::DryRun | Done::Applied { .. }) {
                let mut names: Vec<String> = outcome.changes.iter().map(name_of).collect();
                names.dedup();
                for name in names {
                    writeln!(self.out, "{name}").map_err(io_error)?;
                }
            }
        } else if machine(self.global) {
            let doc = GateDoc {
                api_version: API_VERSION,
                kind: "DriftGateChange",
                action: outcome.action,
                controller: ControllerDoc {
                    namespace: ns,
                    name: &controller.name,
                    image: &controller.image,
                    version: controller.version.as_deref(),
                },
                generation: install.generation.label(),
                detected_by: install.detected_by,
                mechanism: install.generation.mechanism(),
                changes: &outcome.changes,
                unchanged: matches!(outcome.done, Done::Unchanged(_) | Done::NoGate(_)),
                restarted: outcome.done == Done::Applied { restarted: true },
                dry_run,
                note,
                node_pools,
            };
            write_document(self.out, self.global.output, &doc).map_err(io_error)?;
        }
        Ok(Exit::Ok)
    }

    /// v1's explanation: there is no gate.
    fn no_gate(&self, install: &Install) -> String {
        let release = install.release();
        let key = install.controller.key();
        match self.action {
            Action::Enable => format!(
                "Karpenter {release} (Deployment {key}) has no drift feature gate: drift is always on from v1.0. Nothing changed."
            ),
            Action::Disable => format!(
                "Karpenter {release} (Deployment {key}) cannot turn drift off: it has no gate from v1.0. Nothing changed. To stop drift replacements, give the NodePools a budget {{nodes: \"0\", reasons: [Drifted]}}."
            ),
        }
    }

    /// The budgets that pace drift on v1 (a table in table mode), for the document.
    fn budgets(&mut self, pools: &NodePools) -> Result<Vec<PoolBudgets>, CommandError> {
        let pools = match pools {
            NodePools::NotServed => {
                self.say("No NodePools: karpenter.sh/v1 NodePool is not served by this cluster.")?;
                return Ok(Vec::new());
            }
            NodePools::Listed(pools) => pools,
        };
        if pools.is_empty() {
            self.say("No NodePools.")?;
        } else if !scripted(self.global) {
            self.say("Drift replacements are paced by each NodePool's disruption budgets that apply to Drifted:")?;
            let mut table = Table::new(&[
                "NODEPOOL", "NODES", "SCHEDULE", "DURATION", "REASONS", "ACTIVE",
            ]);
            for pool in pools {
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
            table
                .write(self.out, !self.global.no_headers)
                .map_err(io_error)?;
        }
        Ok(pools.clone())
    }
}

impl Operator for Console<'_> {
    fn tell(&mut self, event: Event<'_>) -> Result<(), CommandError> {
        match event {
            Event::Guessed(install) => warn(
                self.global,
                self.err,
                &format!(
                    "Deployment {}: cannot read a Karpenter version from {:?} (image {}); going by the install's shape: {}",
                    install.controller.key(),
                    install.controller.version.as_deref().unwrap_or(""),
                    install.controller.image,
                    install.generation.label()
                ),
            ),
            Event::Found(install) => {
                let release = install.release();
                let key = install.controller.key();
                let text = match install.generation.mechanism() {
                    Mechanism::ConfigMap => format!(
                        "Karpenter {release} (Deployment {key}): drift is switched by {DRIFT_KEY} in ConfigMap {}/{SETTINGS_CONFIGMAP}, read at startup.",
                        install.controller.namespace
                    ),
                    Mechanism::FeatureGatesEnv => format!(
                        "Karpenter {release} (Deployment {key}): drift is the {DRIFT_GATE} gate in env {FEATURE_GATES_ENV} of container {}.",
                        install.deployment.container
                    ),
                    Mechanism::None => self.no_gate(install),
                };
                self.say(&text)?;
            }
            Event::Proposed(changes) => {
                for change in changes {
                    self.say(&line(change))?;
                }
            }
            Event::Written(change) => {
                let verb = if change.is_restart() {
                    "restarted"
                } else {
                    "updated"
                };
                status(self.global, self.err, &format!("{} {verb}", change.object));
            }
            Event::RolloutStarted(controller) => {
                // A spinner on a terminal; elsewhere kubectl's messages, one line per change.
                self.rollout = Some(Progress::new(
                    self.global,
                    &format!("Waiting for deployment {:?} rollout", controller.name),
                ));
            }
            Event::RolloutWaiting(message) => {
                if let Some(p) = &mut self.rollout {
                    p.set_message(self.err, message);
                }
            }
            Event::RolledOut(controller) => {
                if let Some(mut p) = self.rollout.take() {
                    p.finish_with_message(
                        self.err,
                        &format!("deployment {:?} successfully rolled out", controller.name),
                    );
                }
            }
        }
        Ok(())
    }

    fn confirm(&mut self, question: &Question<'_>) -> Result<bool, CommandError> {
        self.out.flush().map_err(io_error)?;
        // Scripts asked on stderr see the diff there (stdout holds the document).
        if scripted(self.global) && !self.yes {
            for change in question.changes {
                let _ = writeln!(self.err, "{}", one_line(&line(change)));
            }
        }
        let text = format!(
            "{} drift in Karpenter (Deployment {}{})?",
            match question.action {
                Action::Enable => "Enabling",
                Action::Disable => "Disabling",
            },
            question.controller.key(),
            if question.restarts {
                ", pods restarted"
            } else {
                ""
            }
        );
        crate::cli::confirm::confirm(&text, self.yes)
    }
}

/// Whether stdout holds something for a script (`-o json|yaml|name`): the text goes, the diff
/// a question needs goes to stderr.
fn scripted(global: &GlobalArgs) -> bool {
    machine(global) || global.output == OutputFormat::Name
}

/// A changed object as kubectl's `-o name` prints it: `configmap/karpenter-global-settings`,
/// `deployment.apps/karpenter` (kind in lower case with its API group, no namespace).
pub fn name_of(change: &Change) -> String {
    let (kind, key) = change
        .object
        .split_once(' ')
        .unwrap_or(("", change.object.as_str()));
    let name = key.rsplit('/').next().unwrap_or(key);
    let resource = match kind {
        "Deployment" => "deployment.apps".to_string(),
        other => other.to_ascii_lowercase(),
    };
    format!("{resource}/{name}")
}

/// A change as the diff shows it:
/// `ConfigMap karpenter/karpenter-global-settings: featureGates.driftEnabled: "false" → "true"`.
pub fn line(change: &Change) -> String {
    let show = |v: &Option<String>| match v {
        Some(v) => format!("{v:?}"),
        None => "(unset)".to_string(),
    };
    if change.is_restart() {
        return format!(
            "{}: rollout restart ({RESTARTED_AT}: {} → {})",
            change.object,
            show(&change.old),
            show(&change.new)
        );
    }
    format!(
        "{}: {}: {} → {}",
        change.object,
        change.field,
        show(&change.old),
        show(&change.new)
    )
}

/// `kind: DriftGateChange`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GateDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    action: Action,
    controller: ControllerDoc<'a>,
    generation: &'static str,
    /// How the generation was told.
    detected_by: DetectedBy,
    mechanism: Mechanism,
    changes: &'a [Change],
    /// The gate already had the asked value.
    unchanged: bool,
    /// The Deployment was rolled (restart, or the env change) and the rollout finished.
    restarted: bool,
    dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_pools: Option<Vec<PoolBudgets>>,
}

#[derive(Serialize)]
struct ControllerDoc<'a> {
    namespace: &'a str,
    name: &'a str,
    image: &'a str,
    version: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter_install::{restart_change, settings_change};

    #[test]
    fn diff_lines_name_object_field_and_values() {
        let mut data = std::collections::BTreeMap::new();
        data.insert(DRIFT_KEY.to_string(), "false".to_string());
        let c = settings_change("karpenter", &data, true).unwrap();
        assert_eq!(
            line(&c),
            "ConfigMap karpenter/karpenter-global-settings: featureGates.driftEnabled: \"false\" → \"true\""
        );
        let c = settings_change("k", &Default::default(), true).unwrap();
        assert!(line(&c).ends_with("(unset) → \"true\""), "{}", line(&c));
        let c = restart_change("karpenter/karpenter", None, "2024-01-01T00:00:00Z");
        assert_eq!(
            line(&c),
            "Deployment karpenter/karpenter: rollout restart (kubectl.kubernetes.io/restartedAt: (unset) → \"2024-01-01T00:00:00Z\")"
        );
    }

    #[test]
    fn names_are_kubectls_resource_slash_name() {
        let mut data = std::collections::BTreeMap::new();
        data.insert(DRIFT_KEY.to_string(), "false".to_string());
        let c = settings_change("karpenter", &data, true).unwrap();
        assert_eq!(name_of(&c), "configmap/karpenter-global-settings");
        let c = restart_change("karpenter/karpenter", None, "2024-01-01T00:00:00Z");
        assert_eq!(name_of(&c), "deployment.apps/karpenter");
    }
}
