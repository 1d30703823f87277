//! The older generations' CRDs and webhooks read rule by rule (docs/upstream-tests.md "Older
//! CRDs and CapacityBuffer, rule by rule (s29-linecrd2)"): the rules the tool missed, each
//! broken by one patch on a valid object. Sources: core v0.37.7 `pkg/apis/v1beta1/
//! nodepool_validation.go` / `nodeclaim_validation.go` and the v1beta1 CRDs vendored in
//! `tests/fixtures/crds/v1beta1/`; core v0.31.5 `pkg/apis/v1alpha5/provisioner_validation.go`.

use super::{check, Accepted, Refused};

const POOL: &str = "apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      nodeClassRef: {name: c}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
";

const CLAIM: &str = "apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: c}
spec:
  nodeClassRef: {name: c}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
";

const PROVISIONER: &str = "apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: p}
spec:
  providerRef: {name: t}
";

/// The v1beta1 webhook parses each budget schedule with `cron.ParseStandard`
/// (`Budget.validate`); the CRD's pattern lets `@dailyfoo` (its macro branch is anchored at
/// the start only), six fields and out-of-range values through.
#[test]
fn a_v1beta1_budget_schedule_cron_cannot_read_is_refused_as_its_webhook_refuses_it() {
    let budget = |s: &str| {
        format!("{{spec: {{disruption: {{budgets: [{{nodes: '10%', schedule: '{s}', duration: 10m}}]}}}}}}")
    };
    let at = Refused("spec.disruption.budgets[0].schedule");
    let cases = [
        ("a macro with a tail", budget("@dailyfoo"), at),
        ("six fields", budget("0 * * * * *"), at),
        ("minute 61", budget("61 * * * *"), at),
        ("day-of-week 7", budget("0 0 * * 7"), at),
        ("a macro", budget("@daily"), Accepted),
        ("five fields", budget("0 9 * * mon-fri"), Accepted),
    ];
    let owned: Vec<_> = cases
        .iter()
        .map(|(it, p, w)| (it.to_string(), p.clone(), *w))
        .collect();
    check(POOL, &super::borrowed(&owned));
}

/// A v1beta1 NodeClaim carries `kubelet` with the NodePool's CRD rules, and its webhook checks
/// the taint pairs over `taints` and `startupTaints` (`NodeClaimSpec.validate`).
#[test]
fn a_v1beta1_claims_kubelet_and_repeated_taints_follow_its_crd_and_webhook() {
    check(
        CLAIM,
        &[
            (
                "an unknown eviction signal",
                "{spec: {kubelet: {evictionHard: {foo: 1%}}}}",
                Refused("spec.kubelet.evictionHard"),
            ),
            (
                "image GC high below low",
                "{spec: {kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}}",
                Refused("spec.kubelet"),
            ),
            (
                "evictionSoft without a grace period",
                "{spec: {kubelet: {evictionSoft: {memory.available: 5%}}}}",
                Refused("spec.kubelet.evictionSoft"),
            ),
            (
                "a taint repeated as a startup taint",
                "{spec: {taints: [{key: a, effect: NoSchedule}], startupTaints: [{key: a, effect: NoSchedule}]}}",
                Refused("spec.startupTaints[0]"),
            ),
            (
                "the same key with another effect",
                "{spec: {taints: [{key: a, effect: NoSchedule}], startupTaints: [{key: a, effect: NoExecute}]}}",
                Accepted,
            ),
            (
                "a paired soft threshold",
                "{spec: {kubelet: {evictionSoft: {memory.available: 5%}, evictionSoftGracePeriod: {memory.available: 1m}}}}",
                Accepted,
            ),
        ],
    );
}

/// The v1alpha5 webhook's `validateKubeletConfiguration` (with the CRD's 0–100 image GC
/// range) and `validateTaints`: a percentage is any number up to 100, and a high image GC
/// threshold equal to the low one passes.
#[test]
fn a_provisioners_kubelet_and_repeated_taints_follow_its_webhook() {
    let kubelet = "spec.kubeletConfiguration";
    check(
        PROVISIONER,
        &[
            (
                "an unknown eviction signal",
                "{spec: {kubeletConfiguration: {evictionHard: {foo: 1%}}}}",
                Refused("spec.kubeletConfiguration.evictionHard"),
            ),
            (
                "a percentage above 100",
                "{spec: {kubeletConfiguration: {evictionHard: {memory.available: 101%}}}}",
                Refused("spec.kubeletConfiguration.evictionHard"),
            ),
            (
                "three decimals",
                "{spec: {kubeletConfiguration: {evictionHard: {memory.available: 5.555%}}}}",
                Accepted,
            ),
            (
                "image GC high below low",
                "{spec: {kubeletConfiguration: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}}",
                Refused(kubelet),
            ),
            (
                "image GC high equal to low",
                "{spec: {kubeletConfiguration: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 50}}}",
                Accepted,
            ),
            (
                "image GC above 100",
                "{spec: {kubeletConfiguration: {imageGCHighThresholdPercent: 101}}}",
                Refused("spec.kubeletConfiguration.imageGCHighThresholdPercent"),
            ),
            (
                "evictionSoft without a grace period",
                "{spec: {kubeletConfiguration: {evictionSoft: {memory.available: 5%}}}}",
                Refused("spec.kubeletConfiguration.evictionSoft"),
            ),
            (
                "a numeric reservation",
                "{spec: {kubeletConfiguration: {kubeReserved: {cpu: 1}}}}",
                Accepted,
            ),
            (
                "a taint repeated as a startup taint",
                "{spec: {taints: [{key: a, effect: NoSchedule}], startupTaints: [{key: a, effect: NoSchedule}]}}",
                Refused("spec.startupTaints[0]"),
            ),
        ],
    );
}
