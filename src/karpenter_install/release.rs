//! Which Karpenter release a controller runs, and what that means for its drift gate.

use serde::Serialize;

use super::gates::FeatureGates;
use super::DRIFT_GATE;

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

/// A release before drift detection existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Karpenter {0} has no drift detection (it arrived in v0.21): upgrade Karpenter first")]
pub struct NoDrift(pub Version);

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

/// How the generation was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectedBy {
    /// From the release number (version label or image tag).
    Version,
    /// From the install's shape, the release number being unreadable.
    Shape,
}

impl Generation {
    /// The generation of a release; an error before v0.21, which had no drift.
    pub fn of(v: Version) -> Result<Generation, NoDrift> {
        match (v.major, v.minor) {
            (0, m) if m < 21 => Err(NoDrift(v)),
            (0, m) if m <= 31 => Ok(Generation::Settings),
            (0, 32) => Ok(Generation::FeatureGatesDefaultOff),
            (0, _) => Ok(Generation::FeatureGatesDefaultOn),
            _ => Ok(Generation::V1),
        }
    }

    /// Guesses the generation from the install when the version is unknown: a `Drift` entry in
    /// `FEATURE_GATES` → v0.32–v0.37; else the settings ConfigMap → v0.21–v0.31; else unknown.
    pub fn by_shape(gates: &FeatureGates, has_settings_configmap: bool) -> Option<Generation> {
        if gates.get(DRIFT_GATE).is_some() {
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
        for (text, want) in [
            ("v0.27.6", v(0, 27, 6)),
            ("0.32.1", v(0, 32, 1)),
            ("1.0.0", v(1, 0, 0)),
            ("v1.0.0-rc.1", v(1, 0, 0)),
            ("0.37.0+abc", v(0, 37, 0)),
            ("v0.33", v(0, 33, 0)),
            ("V0.31.4", v(0, 31, 4)),
            (" v0.27.6@sha256:abc ", v(0, 27, 6)),
        ] {
            assert_eq!(parse_version(text), Some(want), "{text}");
        }
        for bad in [
            "", "latest", "v", "sha-1234", "0", "1.x.0", "1.2.3.4", "v-1.0", "1..0",
        ] {
            assert_eq!(parse_version(bad), None, "{bad}");
        }
    }

    #[test]
    fn generations_follow_the_release_map() {
        for (version, want) in [
            (v(0, 21, 0), Generation::Settings),
            (v(0, 27, 6), Generation::Settings),
            (v(0, 31, 4), Generation::Settings),
            (v(0, 32, 10), Generation::FeatureGatesDefaultOff),
            (v(0, 33, 0), Generation::FeatureGatesDefaultOn),
            (v(0, 37, 7), Generation::FeatureGatesDefaultOn),
            (v(1, 0, 0), Generation::V1),
            (v(1, 14, 1), Generation::V1),
        ] {
            assert_eq!(Generation::of(version), Ok(want), "{version}");
        }
        let too_old = Generation::of(v(0, 20, 1)).unwrap_err();
        assert_eq!(
            too_old.to_string(),
            "Karpenter v0.20.1 has no drift detection (it arrived in v0.21): upgrade Karpenter first"
        );
        for (generation, mechanism, default) in [
            (Generation::Settings, Mechanism::ConfigMap, false),
            (
                Generation::FeatureGatesDefaultOff,
                Mechanism::FeatureGatesEnv,
                false,
            ),
            (
                Generation::FeatureGatesDefaultOn,
                Mechanism::FeatureGatesEnv,
                true,
            ),
            (Generation::V1, Mechanism::None, true),
        ] {
            assert_eq!(generation.mechanism(), mechanism, "{generation:?}");
            assert_eq!(generation.drift_default(), default, "{generation:?}");
        }
    }

    #[test]
    fn generation_by_shape_when_the_version_is_unknown() {
        let gates = |g: Option<&str>| FeatureGates::new(g);
        for (env, configmap, want) in [
            (
                Some("Drift=false"),
                true,
                Some(Generation::FeatureGatesDefaultOn),
            ),
            (
                Some("Drift=yes"),
                false,
                Some(Generation::FeatureGatesDefaultOn),
            ),
            (
                Some("SpotToSpotConsolidation=true"),
                true,
                Some(Generation::Settings),
            ),
            (None, true, Some(Generation::Settings)),
            (Some("NodeRepair=true"), false, None),
            (None, false, None),
        ] {
            assert_eq!(
                Generation::by_shape(&gates(env), configmap),
                want,
                "{env:?} {configmap}"
            );
        }
    }
}
