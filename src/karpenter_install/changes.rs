//! The change each generation needs, and the patches that make it. Every JSON patch `test`s the
//! values it replaces, so an edit made between reading and writing fails instead of being
//! overwritten.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::deployment::EnvSlot;
use super::gates::{parse_go_bool, set_gate, FeatureGates};
use super::{DRIFT_GATE, DRIFT_KEY, FEATURE_GATES_ENV, RESTARTED_AT, SETTINGS_CONFIGMAP};

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
    /// Whether this is the restart annotation.
    pub fn is_restart(&self) -> bool {
        self.field == restart_field()
    }
}

fn restart_field() -> String {
    format!("spec.template.metadata.annotations[{RESTARTED_AT}]")
}

/// What `featureGates.driftEnabled` of the settings says: absent is false, `None` when the value
/// is not a boolean.
pub fn settings_drift(data: &BTreeMap<String, String>) -> Option<bool> {
    match data.get(DRIFT_KEY) {
        None => Some(false),
        Some(v) => parse_go_bool(v.trim()),
    }
}

/// The ConfigMap change for v0.21–v0.31, `None` when `featureGates.driftEnabled` already says
/// `enable` (an unparseable value is always rewritten).
pub fn settings_change(
    namespace: &str,
    data: &BTreeMap<String, String>,
    enable: bool,
) -> Option<Change> {
    (settings_drift(data) != Some(enable)).then(|| Change {
        object: format!("ConfigMap {namespace}/{SETTINGS_CONFIGMAP}"),
        field: DRIFT_KEY.to_string(),
        old: data.get(DRIFT_KEY).cloned(),
        new: Some(enable.to_string()),
    })
}

/// The `FEATURE_GATES` change for v0.32–v0.37, `None` when drift already has the asked value;
/// `default` is what drift is when no `Drift` entry sets it.
pub fn env_change(
    deployment: &str,
    container: &str,
    gates: &FeatureGates,
    default: bool,
    enable: bool,
) -> Option<Change> {
    let current = match gates.get(DRIFT_GATE) {
        Some(Ok(b)) => Some(b),
        Some(Err(_)) => None,
        None => Some(default),
    };
    (current != Some(enable)).then(|| Change {
        object: format!("Deployment {deployment}"),
        field: format!("containers[{container}].env.{FEATURE_GATES_ENV}"),
        old: gates.value().map(str::to_string),
        new: Some(set_gate(gates.value().unwrap_or(""), DRIFT_GATE, enable)),
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
    json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(drift: Option<&str>) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert("aws.clusterName".to_string(), "demo".to_string());
        if let Some(v) = drift {
            m.insert(DRIFT_KEY.to_string(), v.to_string());
        }
        m
    }

    #[test]
    fn settings_changes_and_idempotence() {
        // (value in the ConfigMap, asked, old and new of the change, or None: nothing to do)
        for (value, enable, want) in [
            (Some("false"), true, Some((Some("false"), "true"))),
            (Some("true"), true, None),
            (Some("True"), true, None),
            (Some(" 1 "), true, None),
            (None, false, None),
            (None, true, Some((None, "true"))),
            (Some("yes"), true, Some((Some("yes"), "true"))),
            (Some("yes"), false, Some((Some("yes"), "false"))),
            (Some("true"), false, Some((Some("true"), "false"))),
        ] {
            let got = settings_change("karpenter", &data(value), enable);
            let got = got
                .as_ref()
                .map(|c| (c.old.as_deref(), c.new.as_deref().unwrap()));
            assert_eq!(got, want, "{value:?} → {enable}");
        }
        let c = settings_change("karpenter", &data(Some("false")), true).unwrap();
        assert_eq!(c.object, "ConfigMap karpenter/karpenter-global-settings");
        assert_eq!(c.field, "featureGates.driftEnabled");
        assert!(!c.is_restart());
    }

    #[test]
    fn env_changes_and_idempotence() {
        let gates = |v: Option<&str>| FeatureGates::new(v);
        // (FEATURE_GATES, default, asked, new value, or None: nothing to do)
        for (env, default, enable, want) in [
            (Some("Drift=false"), false, true, Some("Drift=true")),
            (Some("Drift=true,X=false"), false, true, None),
            // v0.33+: absent Drift means on.
            (Some("SpotToSpotConsolidation=false"), true, true, None),
            (
                Some("SpotToSpotConsolidation=false"),
                true,
                false,
                Some("SpotToSpotConsolidation=false,Drift=false"),
            ),
            (None, true, true, None),
            (None, true, false, Some("Drift=false")),
            // v0.32: absent means off.
            (None, false, true, Some("Drift=true")),
            (None, false, false, None),
            (Some("Drift=maybe"), true, true, Some("Drift=true")),
        ] {
            let got = env_change("d", "c", &gates(env), default, enable);
            assert_eq!(
                got.as_ref().map(|c| c.new.as_deref().unwrap()),
                want,
                "{env:?} default {default} → {enable}"
            );
            if let Some(c) = got {
                assert_eq!(c.old.as_deref(), env);
            }
        }
        let c = env_change(
            "karpenter/karpenter",
            "controller",
            &gates(Some("Drift=false")),
            false,
            true,
        )
        .unwrap();
        assert_eq!(c.object, "Deployment karpenter/karpenter");
        assert_eq!(c.field, "containers[controller].env.FEATURE_GATES");
    }

    #[test]
    fn restart_is_the_annotation_kubectl_sets() {
        let c = restart_change("karpenter/karpenter", None, "2024-01-01T00:00:00Z");
        assert!(c.is_restart());
        assert_eq!(
            c.field,
            "spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]"
        );
        assert_eq!(c.old, None);
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
        assert_eq!(
            env_patch(
                1,
                "controller",
                &EnvSlot::At(2, "Drift=false".into()),
                "Drift=true"
            ),
            json!([
                {"op": "test", "path": "/spec/template/spec/containers/1/name", "value": "controller"},
                {"op": "test", "path": "/spec/template/spec/containers/1/env/2/name", "value": "FEATURE_GATES"},
                {"op": "test", "path": "/spec/template/spec/containers/1/env/2/value", "value": "Drift=false"},
                {"op": "replace", "path": "/spec/template/spec/containers/1/env/2/value", "value": "Drift=true"},
            ])
        );
        let p = env_patch(0, "c", &EnvSlot::NoList, "Drift=true");
        assert_eq!(
            p[1],
            json!({"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [{"name": "FEATURE_GATES", "value": "Drift=true"}]})
        );
        let p = env_patch(0, "c", &EnvSlot::Absent, "Drift=true");
        assert_eq!(p[1]["path"], "/spec/template/spec/containers/0/env/-");
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }
}
