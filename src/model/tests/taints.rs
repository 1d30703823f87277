//! `core: pkg/scheduling/taints_test.go` (v1.14.1), `Describe("IsKnownEphemeralTaint")`.

use crate::model::taints::{is_known_ephemeral, Effect, Effect::*, Taint};

/// The six Its: (It, key, effect, known ephemeral); then, beyond them, `KnownEphemeralTaints`
/// entries match by key and effect (`MatchTaint`): the value does not matter, another effect is
/// not ephemeral. "returns false for a nil taint" is n.a.: our taints are values, never absent.
#[test]
fn taints_test_is_known_ephemeral_taint() {
    let uninitialized = "node.cloudprovider.kubernetes.io/uninitialized";
    let table: [(&str, &str, &str, Effect, bool); 10] = [
        (
            "matches an exact entry in KnownEphemeralTaints",
            "node.kubernetes.io/not-ready",
            "",
            NoSchedule,
            true,
        ),
        (
            "matches a NodeReadinessController taint by prefix",
            "readiness.k8s.io/my-rule",
            "",
            NoSchedule,
            true,
        ),
        (
            "matches any effect for a prefixed taint",
            "readiness.k8s.io/another",
            "",
            NoExecute,
            true,
        ),
        (
            "does not match an unrelated taint",
            "example.com/some-taint",
            "",
            NoSchedule,
            false,
        ),
        (
            "does not match a taint whose key only contains the prefix in the middle",
            "foo/readiness.k8s.io/bar",
            "",
            NoSchedule,
            false,
        ),
        ("the entry's value", uninitialized, "true", NoSchedule, true),
        ("another value", uninitialized, "", NoSchedule, true),
        (
            "another effect",
            "node.kubernetes.io/unreachable",
            "",
            NoExecute,
            false,
        ),
        (
            "unregistered",
            "karpenter.sh/unregistered",
            "",
            NoExecute,
            true,
        ),
        (
            "unregistered, another effect",
            "karpenter.sh/unregistered",
            "",
            NoSchedule,
            false,
        ),
    ];
    for (case, key, value, effect, want) in table {
        assert_eq!(
            is_known_ephemeral(&Taint::new(key, value, effect)),
            want,
            "{case}"
        );
    }
}
