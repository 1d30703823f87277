//! Taints and tolerations with Kubernetes' matching rules.

use std::fmt;

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effect {
    /// New pods must tolerate it.
    NoSchedule,
    /// The scheduler avoids the node (Karpenter treats it as NoSchedule until relaxed).
    PreferNoSchedule,
    /// Running pods are evicted unless they tolerate it.
    NoExecute,
}

impl Effect {
    /// Parses the API spelling.
    pub fn parse(text: &str) -> Option<Effect> {
        match text {
            "NoSchedule" => Some(Effect::NoSchedule),
            "PreferNoSchedule" => Some(Effect::PreferNoSchedule),
            "NoExecute" => Some(Effect::NoExecute),
            _ => None,
        }
    }
    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::NoSchedule => "NoSchedule",
            Effect::PreferNoSchedule => "PreferNoSchedule",
            Effect::NoExecute => "NoExecute",
        }
    }
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value (may be empty).
    pub value: String,
    /// Effect.
    pub effect: Effect,
}

impl Taint {
    /// Builds a taint.
    pub fn new(key: &str, value: &str, effect: Effect) -> Self {
        Self {
            key: key.to_string(),
            value: value.to_string(),
            effect,
        }
    }
}

impl Taint {
    /// Kubernetes' `MatchTaint`: the same key and effect (the value is not compared).
    pub fn matches(&self, other: &Taint) -> bool {
        self.key == other.key && self.effect == other.effect
    }
}

/// Karpenter's `KnownEphemeralTaints` (`core v1.14.1: pkg/scheduling/taints.go`): taints a node
/// carries while it starts, ignored on a managed node that is not initialized. Matched by key and
/// effect. `node.kubernetes.io/not-ready:NoExecute` since v1.8, `karpenter.sh/unregistered`
/// since v1.0, the `readiness.k8s.io/` prefix (Node Readiness Controller) since v1.13.
pub const KNOWN_EPHEMERAL_TAINTS: [(&str, Effect); 5] = [
    ("node.kubernetes.io/not-ready", Effect::NoSchedule),
    ("node.kubernetes.io/not-ready", Effect::NoExecute),
    ("node.kubernetes.io/unreachable", Effect::NoSchedule),
    (
        "node.cloudprovider.kubernetes.io/uninitialized",
        Effect::NoSchedule,
    ),
    (super::labels::UNREGISTERED_TAINT, Effect::NoExecute),
];

/// `KnownEphemeralTaintKeyPrefixes`.
pub const KNOWN_EPHEMERAL_TAINT_PREFIXES: [&str; 1] = ["readiness.k8s.io/"];

/// Karpenter's `IsKnownEphemeralTaint`.
pub fn is_known_ephemeral(t: &Taint) -> bool {
    KNOWN_EPHEMERAL_TAINTS
        .iter()
        .any(|(k, e)| t.key == *k && t.effect == *e)
        || KNOWN_EPHEMERAL_TAINT_PREFIXES
            .iter()
            .any(|p| t.key.starts_with(p))
}

impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect.as_str())
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect.as_str())
        }
    }
}

/// A pod toleration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Toleration {
    /// Key; empty with `Exists` tolerates every taint.
    pub key: String,
    /// How the taint's value is matched.
    pub operator: TolerationOperator,
    /// Value compared under `Equal`, `Lt` and `Gt`.
    pub value: String,
    /// Restricts the effect tolerated; `None` tolerates all effects.
    pub effect: Option<Effect>,
}

/// A toleration's operator. `Lt` / `Gt` are Kubernetes 1.35's numeric operators
/// (`TaintTolerationComparisonOperators`), which Karpenter v1.14.1 honours:
/// `pkg/scheduling/taints.go Tolerates` passes `enableComparisonOperators = true` to
/// `ToleratesTaint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TolerationOperator {
    /// The taint's value equals the toleration's (the default).
    #[default]
    Equal,
    /// Any value.
    Exists,
    /// The taint's value, an integer, is less than the toleration's.
    Lt,
    /// The taint's value, an integer, is greater than the toleration's.
    Gt,
}

/// An integer written as `k8s.io/apimachinery` `content.IsDecimalInteger` wants it — `0`, or an
/// optional `-` and digits not starting with 0 — within `int64`; `None` otherwise.
pub fn decimal_integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (!digits.starts_with('0') || text == "0");
    canonical.then(|| text.parse().ok()).flatten()
}

impl Toleration {
    /// `key=value:effect` with operator Equal.
    pub fn equal(key: &str, value: &str, effect: Option<Effect>) -> Self {
        Self {
            key: key.to_string(),
            operator: TolerationOperator::Equal,
            value: value.to_string(),
            effect,
        }
    }
    /// `key` with operator Exists.
    pub fn exists(key: &str, effect: Option<Effect>) -> Self {
        Self {
            key: key.to_string(),
            operator: TolerationOperator::Exists,
            value: String::new(),
            effect,
        }
    }

    /// Kubernetes' `ToleratesTaint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        // `k8s.io/api v0.35 core/v1 toleration.go compareNumericValues`: both values canonical
        // integers, else no match.
        let numeric = || decimal_integer(&self.value).zip(decimal_integer(&taint.value));
        match self.operator {
            TolerationOperator::Equal => self.value == taint.value,
            TolerationOperator::Exists => true,
            TolerationOperator::Lt => {
                numeric().is_some_and(|(tolerated, tainted)| tainted < tolerated)
            }
            TolerationOperator::Gt => {
                numeric().is_some_and(|(tolerated, tainted)| tainted > tolerated)
            }
        }
    }
}

/// Whether every taint is tolerated; returns the first taint that is not.
pub fn first_untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k8s.io/api v0.35 core/v1 toleration.go ToleratesTaint` with comparison operators on
    /// (as Karpenter v1.14.1 calls it): `Lt` tolerates a smaller taint value, `Gt` a larger one,
    /// both only for canonical integers.
    #[test]
    fn numeric_tolerations_compare_the_taints_value() {
        let sla = |v: &str| Taint::new("sla", v, Effect::NoSchedule);
        let tol = |operator, v: &str| Toleration {
            key: "sla".into(),
            operator,
            value: v.into(),
            ..Toleration::default()
        };
        assert!(tol(TolerationOperator::Gt, "900").tolerates(&sla("950")));
        assert!(!tol(TolerationOperator::Gt, "900").tolerates(&sla("900")));
        assert!(!tol(TolerationOperator::Gt, "900").tolerates(&sla("850")));
        assert!(tol(TolerationOperator::Lt, "900").tolerates(&sla("-5")));
        assert!(!tol(TolerationOperator::Lt, "900").tolerates(&sla("900")));
        for odd in [
            "0950",
            "+950",
            "9.5",
            "",
            "high",
            "-0",
            "99999999999999999999",
        ] {
            assert!(
                !tol(TolerationOperator::Gt, "900").tolerates(&sla(odd)),
                "{odd:?}"
            );
        }
        assert_eq!(decimal_integer("0"), Some(0));
        assert_eq!(decimal_integer("-42"), Some(-42));
        assert_eq!(decimal_integer("042"), None);
    }

    #[test]
    fn toleration_matching() {
        let gpu = Taint::new("dedicated", "gpu", Effect::NoSchedule);
        assert!(Toleration::equal("dedicated", "gpu", None).tolerates(&gpu));
        assert!(Toleration::equal("dedicated", "gpu", Some(Effect::NoSchedule)).tolerates(&gpu));
        assert!(!Toleration::equal("dedicated", "gpu", Some(Effect::NoExecute)).tolerates(&gpu));
        assert!(!Toleration::equal("dedicated", "cpu", None).tolerates(&gpu));
        assert!(Toleration::exists("dedicated", None).tolerates(&gpu));
        assert!(
            Toleration::exists("", None).tolerates(&gpu),
            "empty key + Exists tolerates all"
        );
        assert!(!Toleration::equal("", "", None).tolerates(&gpu));
        assert_eq!(
            first_untolerated(std::slice::from_ref(&gpu), &[]),
            Some(&gpu)
        );
        assert_eq!(gpu.to_string(), "dedicated=gpu:NoSchedule");
    }
}
