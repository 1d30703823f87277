//! `core: pkg/scheduling/taints_test.go` (v1.14.1), `Describe("IsKnownEphemeralTaint")`.

use crate::model::taints::{is_known_ephemeral, Effect, Effect::*, Taint};

/// The six Its: (It, key, effect, known ephemeral). "returns false for a nil taint" is n.a.:
/// our taints are values, never absent.
#[test]
fn taints_test_is_known_ephemeral_taint() {
    let table: [(&str, &str, Effect, bool); 5] = [
        (
            "matches an exact entry in KnownEphemeralTaints",
            "node.kubernetes.io/not-ready",
            NoSchedule,
            true,
        ),
        (
            "matches a NodeReadinessController taint by prefix",
            "readiness.k8s.io/my-rule",
            NoSchedule,
            true,
        ),
        (
            "matches any effect for a prefixed taint",
            "readiness.k8s.io/another",
            NoExecute,
            true,
        ),
        (
            "does not match an unrelated taint",
            "example.com/some-taint",
            NoSchedule,
            false,
        ),
        (
            "does not match a taint whose key only contains the prefix in the middle",
            "foo/readiness.k8s.io/bar",
            NoSchedule,
            false,
        ),
    ];
    for (it, key, effect, want) in table {
        assert_eq!(
            is_known_ephemeral(&Taint::new(key, "", effect)),
            want,
            "{it}"
        );
    }
    // `KnownEphemeralTaints` entries are matched by key and effect (`MatchTaint`), so the
    // value does not matter and another effect is not ephemeral.
    assert!(is_known_ephemeral(&Taint::new(
        "node.cloudprovider.kubernetes.io/uninitialized",
        "true",
        NoSchedule
    )));
    assert!(is_known_ephemeral(&Taint::new(
        "node.cloudprovider.kubernetes.io/uninitialized",
        "",
        NoSchedule
    )));
    assert!(!is_known_ephemeral(&Taint::new(
        "node.kubernetes.io/unreachable",
        "",
        NoExecute
    )));
    assert!(is_known_ephemeral(&Taint::new(
        "karpenter.sh/unregistered",
        "",
        NoExecute
    )));
    assert!(!is_known_ephemeral(&Taint::new(
        "karpenter.sh/unregistered",
        "",
        NoSchedule
    )));
}
