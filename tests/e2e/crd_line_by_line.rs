//! Karpenter's v1.14.1 CRDs read rule by rule, through the binary (docs/upstream-tests.md "CRD
//! schemas and CEL rules, line by line (s29-linecrd)"): what they accept plans, and each rule
//! the tool missed, broken once, is refused with exit 2 and one line naming the object and the
//! field. Fixture: `tests/fixtures/crd-line-by-line/accepted.yaml` (our own manifests).

use crate::support::{fixture, karpenter};

fn provision(documents: &str) -> crate::support::Run {
    karpenter(
        &["provision", "--dry-run", "--region", "us-east-1", "-f", "-"],
        documents.as_bytes(),
    )
}

fn accepted() -> String {
    std::fs::read_to_string(fixture("crd-line-by-line/accepted.yaml")).unwrap()
}

/// A NodePool requirement `Exists` written with values (no CRD rule, no `ValidateRequirement`
/// check refuses it; the values are ignored) plans; it was refused.
#[test]
fn what_the_crds_accept_plans() {
    let run = provision(&accepted());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("1 pod(s) placed, 0 unschedulable"),
        "{}",
        run.stdout
    );
}

/// Each edit breaks one rule the API server (or `RuntimeValidate`) enforces and the tool read
/// past: the CEL domain rule's plain suffix test on a label key, a taint key/effect pair in
/// both `taints` and `startupTaints`, `ipPrefixCount`'s minimum.
#[test]
fn what_the_crds_refuse_is_refused_in_one_line() {
    let cases = [
        (
            "a label domain ending in karpenter.sh",
            "labels: {example.com/team: web}",
            "labels: {example.com/team: web, mykarpenter.sh/team: web}",
            "NodePool/default: spec.template.metadata.labels[mykarpenter.sh/team]: label \"mykarpenter.sh/team\" is restricted",
        ),
        (
            "a taint repeated as a startup taint",
            "      taints:\n",
            "      startupTaints: [{key: example.com/dedicated, effect: NoSchedule}]\n      taints:\n",
            "NodePool/default: spec.template.spec.startupTaints[0]: duplicate taint Key/Effect pair example.com/dedicated=NoSchedule",
        ),
        (
            "a negative ipPrefixCount",
            "ipPrefixCount: 0",
            "ipPrefixCount: -1",
            "EC2NodeClass/default: spec.ipPrefixCount: invalid value -1",
        ),
    ];
    for (what, from, to, want) in cases {
        let text = accepted();
        assert!(text.contains(from), "{what}: the fixture lost {from:?}");
        provision(&text.replacen(from, to, 1)).assert_refused_in_one_line(what, want);
    }
}
