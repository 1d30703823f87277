//! The controller Deployment as the gate needs it: where `FEATURE_GATES` sits in the controller
//! container (and what would override it), and how far a rollout got, read like
//! `kubectl rollout status`.

use serde::Deserialize;
use serde_json::Value;

use super::gates::FeatureGates;
use super::{
    FEATURE_GATES_ENV, FEATURE_GATES_FLAG, MIN_VALUES_POLICY_ENV, MIN_VALUES_POLICY_FLAG,
    PREFERENCE_POLICY_ENV, PREFERENCE_POLICY_FLAG, RESERVED_ENIS_ENV, RESERVED_ENIS_FLAG,
    RESTARTED_AT, VM_MEMORY_OVERHEAD_PERCENT_ENV, VM_MEMORY_OVERHEAD_PERCENT_FLAG,
};

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

/// What the gate reads of the controller Deployment.
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
    /// The value of the last `--feature-gates` of its command/args, when one is given.
    pub flag_gates: Option<String>,
    /// The controller's `MinValuesPolicy` as written: the last `--min-values-policy` of its
    /// command/args, else its `MIN_VALUES_POLICY` env value (Go's `flag` package: the env
    /// var is the flag's default); `None` when neither is set (Karpenter: `Strict`).
    pub min_values_policy: Option<String>,
    /// The controller's `PreferencePolicy` as written, read as `min_values_policy` is;
    /// `None`: not set (Karpenter: `Respect`).
    pub preference_policy: Option<String>,
    /// The AWS controller's `VMMemoryOverheadPercent` as written, read as `min_values_policy`
    /// is; `None`: not set (0.075).
    pub vm_memory_overhead_percent: Option<String>,
    /// The AWS controller's `ReservedENIs` as written; `None`: not set (0).
    pub reserved_enis: Option<String>,
    /// `spec.paused`.
    pub paused: bool,
    /// The current restart annotation.
    pub restarted_at: Option<String>,
}

impl ControllerView {
    /// `FEATURE_GATES`, as far as it is set by `value`.
    pub fn feature_gates(&self) -> FeatureGates {
        match &self.slot {
            EnvSlot::At(_, v) => FeatureGates::new(Some(v)),
            _ => FeatureGates::default(),
        }
    }

    /// The gates the controller runs with: its `--feature-gates` flag when its command/args
    /// set one, else `FEATURE_GATES` (core v1.14.1: `pkg/operator/options/options.go`
    /// `AddFlags`: the env var is only the flag's default; `options/suite_test.go` "shouldn't
    /// overwrite CLI flags with environment variables").
    pub fn effective_feature_gates(&self) -> FeatureGates {
        match &self.flag_gates {
            Some(v) => FeatureGates::new(Some(v)),
            None => self.feature_gates(),
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
        let all_words: Vec<String> = words("command").into_iter().chain(words("args")).collect();
        let flag_gates = flag_value(&all_words, FEATURE_GATES_FLAG);
        let flag = flag_gates.is_some()
            || all_words
                .iter()
                .any(|w| w == FEATURE_GATES_FLAG || w.starts_with("--feature-gates="));
        // Go's `flag` package: the env var is only the flag's default.
        let option = |flag: &str, env_name: &str| {
            flag_value(&all_words, flag).or_else(|| {
                c.get("env").and_then(Value::as_array).and_then(|env| {
                    env.iter()
                        .rev()
                        .find(|e| e["name"] == env_name)
                        .and_then(|e| e["value"].as_str())
                        .map(str::to_string)
                })
            })
        };
        Some(ControllerView {
            index,
            container: c["name"].as_str().unwrap_or("").to_string(),
            slot,
            value_from,
            flag,
            flag_gates,
            min_values_policy: option(MIN_VALUES_POLICY_FLAG, MIN_VALUES_POLICY_ENV),
            preference_policy: option(PREFERENCE_POLICY_FLAG, PREFERENCE_POLICY_ENV),
            vm_memory_overhead_percent: option(
                VM_MEMORY_OVERHEAD_PERCENT_FLAG,
                VM_MEMORY_OVERHEAD_PERCENT_ENV,
            ),
            reserved_enis: option(RESERVED_ENIS_FLAG, RESERVED_ENIS_ENV),
            paused: deployment
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            restarted_at: deployment
                .pointer("/spec/template/metadata/annotations")
                .and_then(|a| a.get(RESTARTED_AT))
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// The value of the last `name value` / `name=value` among a command line's words (Go's `flag`
/// package also takes a single dash).
fn flag_value(words: &[String], name: &str) -> Option<String> {
    let short = &name[1..];
    let mut found = None;
    let mut words = words.iter();
    while let Some(w) = words.next() {
        for n in [name, short] {
            if w == n {
                found = words.next().cloned();
            } else if let Some(v) = w.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                found = Some(v.to_string());
            }
        }
    }
    found
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `MIN_VALUES_POLICY` is the default of `--min-values-policy` (core v1.14.1:
    /// `pkg/operator/options/options.go`): the flag, in either form, wins.
    #[test]
    fn the_min_values_policy_is_the_flag_else_the_env() {
        let view = |c: Value| {
            let d = json!({"spec": {"template": {"spec": {"containers": [c]}}}});
            ControllerView::read(&d, "k").unwrap().min_values_policy
        };
        let env = json!([{"name": "MIN_VALUES_POLICY", "value": "BestEffort"}]);
        assert_eq!(view(json!({"name": "c", "image": "k"})), None);
        assert_eq!(
            view(json!({"name": "c", "image": "k", "env": env})).as_deref(),
            Some("BestEffort")
        );
        for args in [
            json!(["--min-values-policy", "Strict"]),
            json!(["--min-values-policy=Strict"]),
            json!([
                "-min-values-policy=BestEffort",
                "--min-values-policy=Strict"
            ]),
        ] {
            let c = json!({"name": "c", "image": "k", "env": env, "args": args});
            assert_eq!(view(c).as_deref(), Some("Strict"), "{args}");
        }
    }

    /// `PREFERENCE_POLICY` is the default of `--preference-policy` the same way (core v1.14.1
    /// `options.go`).
    #[test]
    fn the_preference_policy_is_the_flag_else_the_env() {
        let view = |c: Value| {
            let d = json!({"spec": {"template": {"spec": {"containers": [c]}}}});
            ControllerView::read(&d, "k").unwrap().preference_policy
        };
        let env = json!([{"name": "PREFERENCE_POLICY", "value": "Ignore"}]);
        assert_eq!(view(json!({"name": "c", "image": "k"})), None);
        assert_eq!(
            view(json!({"name": "c", "image": "k", "env": env})).as_deref(),
            Some("Ignore")
        );
        let c =
            json!({"name": "c", "image": "k", "env": env, "args": ["--preference-policy=Respect"]});
        assert_eq!(view(c).as_deref(), Some("Respect"));
    }

    /// core v1.14.1 `pkg/operator/options/suite_test.go` "Parse": "shouldn't overwrite CLI
    /// flags with environment variables", "should use environment variables when CLI flags
    /// aren't set", "should correctly merge CLI flags and environment variables" — for the
    /// gates the tool reads (`FEATURE_GATES` is only `--feature-gates`' default). **Differs,
    /// fixed** — scenario: a controller with `args: [--feature-gates,
    /// SpotToSpotConsolidation=true]` and no `FEATURE_GATES` env → Karpenter consolidates
    /// spot to spot; `consolidate` read the env only and took the gate as off.
    #[test]
    fn the_feature_gates_flag_wins_over_the_env() {
        let view = |c: Value| {
            let d = json!({"spec": {"template": {"spec": {"containers": [c]}}}});
            ControllerView::read(&d, "k").unwrap()
        };
        let env = json!([{"name": "FEATURE_GATES", "value": "SpotToSpotConsolidation=false"}]);
        let s2s = |v: &ControllerView| v.effective_feature_gates().get("SpotToSpotConsolidation");
        // Env only.
        assert_eq!(
            s2s(&view(json!({"name": "c", "image": "k", "env": env}))),
            Some(Ok(false))
        );
        // Neither: Karpenter's default (false), not named.
        assert_eq!(s2s(&view(json!({"name": "c", "image": "k"}))), None);
        for (field, words) in [
            (
                "args",
                json!(["--feature-gates", "SpotToSpotConsolidation=true"]),
            ),
            (
                "args",
                json!(["--feature-gates=SpotToSpotConsolidation=true"]),
            ),
            (
                "args",
                json!(["-feature-gates=SpotToSpotConsolidation=true"]),
            ),
            (
                "args",
                json!([
                    "--feature-gates=SpotToSpotConsolidation=false",
                    "--feature-gates=NodeRepair=true,SpotToSpotConsolidation=true"
                ]),
            ),
            (
                "command",
                json!([
                    "/ko-app/controller",
                    "--feature-gates",
                    "SpotToSpotConsolidation=true"
                ]),
            ),
        ] {
            let v = view(json!({"name": "c", "image": "k", "env": env, field: words}));
            assert_eq!(s2s(&v), Some(Ok(true)), "{words}");
            assert!(v.flag, "{words}");
            // The env stays what the drift gate edits.
            assert_eq!(
                v.feature_gates().value(),
                Some("SpotToSpotConsolidation=false")
            );
        }
        // A flag naming other gates only: the gate takes Karpenter's default, not the env's.
        let v = view(
            json!({"name": "c", "image": "k", "env": env, "args": ["--feature-gates=NodeRepair=true"]}),
        );
        assert_eq!(s2s(&v), None);
    }

    #[test]
    fn controller_view_reads_the_env_and_flags() {
        let d = json!({
            "spec": {"paused": true, "template": {
                "metadata": {"annotations": {RESTARTED_AT: "t0"}},
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
        assert_eq!(view.feature_gates().value(), Some("Drift=false"));
        assert!(view.flag && view.paused && !view.value_from);
        assert_eq!(view.restarted_at.as_deref(), Some("t0"));
        let d = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "controller", "image": "k", "env": [{"name": "FEATURE_GATES", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}}]}
        ]}}}});
        let view = ControllerView::read(&d, "k").unwrap();
        assert!(view.value_from && !view.flag && !view.paused);
        assert!(ControllerView::read(&d, "other").is_none());
        for (container, slot) in [
            (json!({"name": "c", "image": "k"}), EnvSlot::NoList),
            (
                json!({"name": "c", "image": "k", "env": [{"name": "A", "value": "1"}]}),
                EnvSlot::Absent,
            ),
            (
                json!({"name": "c", "image": "k", "command": ["/ko-app/controller", "--feature-gates", "Drift=true"]}),
                EnvSlot::NoList,
            ),
        ] {
            let d = json!({"spec": {"template": {"spec": {"containers": [container]}}}});
            let view = ControllerView::read(&d, "k").unwrap();
            assert_eq!(view.slot, slot);
            assert_eq!(view.feature_gates(), FeatureGates::default());
        }
    }

    fn rollout(
        generation: i64,
        observed: i64,
        spec: Option<i64>,
        replicas: i64,
        updated: i64,
        available: i64,
    ) -> RolloutView {
        RolloutView {
            metadata: RolloutMeta {
                name: "karpenter".into(),
                generation,
            },
            spec: RolloutSpec { replicas: spec },
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
        let waiting = |m: &str| Rollout::Waiting(m.to_string());
        for (view, want) in [
            (
                rollout(2, 1, Some(2), 2, 2, 2),
                waiting("Waiting for deployment spec update to be observed..."),
            ),
            (
                rollout(2, 2, Some(2), 3, 1, 2),
                waiting("Waiting for deployment \"karpenter\" rollout to finish: 1 out of 2 new replicas have been updated..."),
            ),
            (
                rollout(2, 2, None, 1, 0, 0),
                waiting("Waiting for deployment \"karpenter\" rollout to finish: 0 out of 1 new replicas have been updated..."),
            ),
            (
                rollout(2, 2, Some(2), 3, 2, 2),
                waiting("Waiting for deployment \"karpenter\" rollout to finish: 1 old replicas are pending termination..."),
            ),
            (
                rollout(2, 2, Some(2), 2, 2, 1),
                waiting("Waiting for deployment \"karpenter\" rollout to finish: 1 of 2 updated replicas are available..."),
            ),
            (rollout(2, 2, Some(2), 2, 2, 2), Rollout::Done),
            (rollout(3, 3, Some(0), 0, 0, 0), Rollout::Done),
        ] {
            assert_eq!(rollout_status(&view), want);
        }
        let mut stuck = rollout(2, 2, Some(2), 3, 1, 1);
        stuck.status.conditions.push(Condition {
            type_: "Progressing".into(),
            reason: "ProgressDeadlineExceeded".into(),
        });
        assert_eq!(
            rollout_status(&stuck),
            Rollout::Failed("deployment \"karpenter\" exceeded its progress deadline".into())
        );
    }
}
