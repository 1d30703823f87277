//! `FEATURE_GATES` (`Drift=true,SpotToSpotConsolidation=false`) as Karpenter reads it: Go's
//! `strconv.ParseBool` per entry, the last entry for a name winning (it fills a Go map).

/// Go's `strconv.ParseBool` (what Karpenter parses both drift gates with).
pub fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// A controller container's `FEATURE_GATES` env, as written (absent when the env var is not set
/// by value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates(Option<String>);

impl FeatureGates {
    /// The env var's value; `None` when it is not set.
    pub fn new(value: Option<&str>) -> FeatureGates {
        FeatureGates(value.map(str::to_string))
    }

    /// The value as written; `None` when the env var is not set.
    pub fn value(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// A gate's setting: `None` when no entry names it, `Some(Err(raw))` when its value is not a
    /// boolean.
    pub fn get(&self, name: &str) -> Option<Result<bool, String>> {
        let mut found = None;
        for entry in self.0.as_deref()?.split(',') {
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            if key.trim() == name {
                let value = value.trim();
                found = Some(parse_go_bool(value).ok_or_else(|| value.to_string()));
            }
        }
        found
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter_install::{DRIFT_GATE, SPOT_TO_SPOT_CONSOLIDATION};

    #[test]
    fn go_booleans() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_go_bool(t), Some(true), "{t}");
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_go_bool(f), Some(false), "{f}");
        }
        for bad in ["", "yes", "on", "tRUE", " true"] {
            assert_eq!(parse_go_bool(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn feature_gates_are_read_like_go() {
        let get = |env: Option<&str>, name: &str| FeatureGates::new(env).get(name);
        for (env, want) in [
            (Some("Drift=true"), Some(Ok(true))),
            (Some("A=true, Drift = False ,B=false"), Some(Ok(false))),
            (Some("Drift=false,Drift=1"), Some(Ok(true))),
            (Some("Drift=yes"), Some(Err("yes".to_string()))),
            (Some("Drift"), Some(Err(String::new()))),
            (Some("SpotToSpotConsolidation=true"), None),
            (Some(""), None),
            (Some("Drifted=true"), None),
            (None, None),
        ] {
            assert_eq!(get(env, DRIFT_GATE), want, "{env:?}");
        }
        // What consolidation reads of the same value.
        assert_eq!(
            get(
                Some("Drift=true,SpotToSpotConsolidation=true"),
                SPOT_TO_SPOT_CONSOLIDATION
            ),
            Some(Ok(true))
        );
        assert_eq!(
            FeatureGates::new(Some("Drift=true")).value(),
            Some("Drift=true")
        );
        assert_eq!(FeatureGates::default().value(), None);
    }

    /// core v1.14.1 `pkg/operator/options/suite_test.go` "FeatureGates" › "should successfully
    /// parse well formed feature gate strings" (4 Entries): `cliflag.MapStringBool` trims
    /// spaces and tabs around keys and values; other gates' entries are ignored.
    #[test]
    fn upstream_well_formed_feature_gate_strings() {
        for (text, want) in [
            ("SpotToSpotConsolidation=true", true),
            ("SpotToSpotConsolidation=false", false),
            ("SpotToSpotConsolidation\t= false", false),
            ("Hello=true,SpotToSpotConsolidation=false,World=true", false),
        ] {
            assert_eq!(
                FeatureGates::new(Some(text)).get(SPOT_TO_SPOT_CONSOLIDATION),
                Some(Ok(want)),
                "{text:?}"
            );
        }
    }

    #[test]
    fn set_gate_replaces_only_drift() {
        for (before, value, after) in [
            (
                "A=true,Drift=false,B=false",
                true,
                "A=true,Drift=true,B=false",
            ),
            (
                "Drift=false,SpotToSpotConsolidation=true",
                true,
                "Drift=true,SpotToSpotConsolidation=true",
            ),
            ("", true, "Drift=true"),
            (
                "SpotToSpotConsolidation=false",
                false,
                "SpotToSpotConsolidation=false,Drift=false",
            ),
            (" Drift=true , A=1,,Drift=false", false, "Drift=false,A=1"),
            ("Drifted=true", true, "Drifted=true,Drift=true"),
        ] {
            assert_eq!(set_gate(before, DRIFT_GATE, value), after, "{before:?}");
        }
    }
}
