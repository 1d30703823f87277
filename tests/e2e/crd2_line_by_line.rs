//! The older generations' CRDs and webhooks read rule by rule, through the binary
//! (docs/upstream-tests.md "Older CRDs and CapacityBuffer, rule by rule (s29-linecrd2)"): the
//! fixture plans (a v1beta1 NodePool with a scheduled budget, its class, a launched v1beta1
//! NodeClaim), and each rule the tool missed, broken once, is refused with exit 2 and one line
//! naming the object and the field. Fixture: `tests/fixtures/crd2-line-by-line/accepted.yaml`
//! (our own manifests).

use crate::support::assert_edits_refused;

/// A budget schedule `cron.ParseStandard` refuses (it passes the CRD's pattern; core v0.37.7
/// `Budget.validate`), a NodeClaim's taint repeated as a startup taint and its unknown eviction
/// signal (`NodeClaimSpec.validate`, the v1beta1 NodeClaim CRD).
#[test]
fn what_the_older_crds_refuse_is_refused_in_one_line() {
    assert_edits_refused(
        "crd2-line-by-line/accepted.yaml",
        &[
            (
                "a schedule cron cannot read",
                "schedule: '@daily'",
                "schedule: '@dailyfoo'",
                "NodePool/default: spec.disruption.budgets[0].schedule: invalid schedule \"@dailyfoo\"",
            ),
            (
                "a claim's taint repeated as a startup taint",
                "  kubelet: {maxPods: 110}",
                "  kubelet: {maxPods: 110}\n  startupTaints: [{key: example.com/dedicated, effect: NoSchedule}]",
                "NodeClaim/default-abcde: spec.startupTaints[0]: duplicate taint Key/Effect pair example.com/dedicated=NoSchedule",
            ),
            (
                "a claim's unknown eviction signal",
                "kubelet: {maxPods: 110}",
                "kubelet: {maxPods: 110, evictionHard: {disk.available: 5%}}",
                "NodeClaim/default-abcde: spec.kubelet.evictionHard",
            ),
        ],
    );
}
