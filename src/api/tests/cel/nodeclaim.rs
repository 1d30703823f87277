//! `core v1.14.1: pkg/apis/v1/nodeclaim_validation_cel_test.go` ("Validation"), against the v1
//! NodeClaim CRD (`tests/fixtures/crds/v1/karpenter.sh_nodeclaims.yaml`). Upstream's base
//! object, as a manifest.

use super::{borrowed, check, Accepted, Case, Refused, RequirementIts};

const BASE: &str = "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: cel}
spec:
  nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClaim, name: default}
  requirements: [{key: karpenter.sh/capacity-type, operator: Exists}]
";

fn requirement(r: &str) -> String {
    format!("{{spec: {{requirements: [{r}]}}}}")
}

/// Contexts "Taints" and "NodeClassRef".
#[test]
fn taints_and_node_class_ref() {
    let cases: &[Case] = &[
        ("should succeed for valid taints", "{spec: {taints: [{key: a, value: b, effect: NoSchedule}, {key: c, value: d, effect: NoExecute}, {key: e, value: f, effect: PreferNoSchedule}, {key: key-only, effect: NoExecute}]}}", Accepted),
        ("should fail for invalid taint keys", "{spec: {taints: [{key: '???', effect: NoSchedule}]}}", Refused("spec.taints[0].key")),
        ("should fail for missing taint key", "{spec: {taints: [{effect: NoSchedule}]}}", Refused("spec.taints[0].key")),
        ("should fail for invalid taint value", "{spec: {taints: [{key: invalid-value, effect: NoSchedule, value: '???'}]}}", Refused("spec.taints[0].value")),
        ("should fail for invalid taint effect", "{spec: {taints: [{key: invalid-effect, effect: '???'}]}}", Refused("spec.taints[0].effect")),
        ("should not fail for same key with different effects", "{spec: {taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoExecute}]}}", Accepted),
        ("should succeed for valid group", "{spec: {nodeClassRef: {kind: TestNodeClass, name: nodeclass-test, group: karpenter.test.sh}}}", Accepted),
        ("should fail for invalid group", "{spec: {nodeClassRef: {kind: TestNodeClass, name: nodeclass-test, group: karpenter.test.sh/v1}}}", Refused("spec.nodeClassRef.group")),
    ];
    check(BASE, cases);
}

/// Context "Requirements". Unlike a NodePool's, a NodeClaim's requirements may name
/// `karpenter.sh/nodepool` (Karpenter writes it); the well-known labels are core's but the
/// NodePool key (`pkg/apis/v1/labels.go`).
#[test]
fn requirements() {
    let at = "spec.requirements[0]";
    let key = "spec.requirements[0].key";
    const WELL_KNOWN_AND_CAPACITY_TYPE: &[&str] = &[
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "karpenter.sh/capacity-type",
        "node.kubernetes.io/windows-build",
    ];
    let mut owned = RequirementIts {
        wrap: requirement,
        at,
        key,
        well_known: WELL_KNOWN_AND_CAPACITY_TYPE,
        domains: [
            "should allow kubernetes domains",
            "should allow kubernetes subdomains",
        ],
        keys: false,
        min_values: true,
    }
    .cases();
    owned.push((
        "should error when requirements is greater than 100".into(),
        format!(
            "{{spec: {{requirements: [{}]}}}}",
            (0..101)
                .map(|i| format!("{{key: random-{i}, operator: In, values: [random-{i}]}}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Refused("spec.requirements"),
    ));
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should allow supported ops", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test]}, {key: topology.kubernetes.io/zone, operator: Gt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Lt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: NotIn}, {key: topology.kubernetes.io/zone, operator: Exists}]}}", Accepted),
        ("should fail for unsupported ops", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]}}", Refused("spec.requirements[0].operator")),
        ("should fail for restricted domains: karpenter.sh", "{spec: {requirements: [{key: karpenter.sh/test, operator: In, values: [test]}]}}", Refused(key)),
        ("should fail for restricted labels: kubernetes.io/hostname", "{spec: {requirements: [{key: kubernetes.io/hostname/test, operator: In, values: [test]}]}}", Refused(key)),
        ("should allow non-empty set after removing overlapped value", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test, foo]}, {key: topology.kubernetes.io/zone, operator: NotIn, values: [test, bar]}]}}", Accepted),
        ("should allow empty requirements", "{spec: {requirements: []}}", Accepted),
        ("should error when minValues is negative", "{spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: -1}]}}", Refused("spec.requirements[0].minValues")),
        ("should error when minValues is zero", "{spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 0}]}}", Refused("spec.requirements[0].minValues")),
        ("should error when minValues is more than 50", "{spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 51}]}}", Refused("spec.requirements[0].minValues")),
        ("should error when minValues is greater than the number of unique values specified within In operator", "{spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 2}]}}", Refused(at)),
        // What Karpenter writes into every NodeClaim it creates.
        ("(ours) the nodepool requirement Karpenter writes", "{spec: {requirements: [{key: karpenter.sh/nodepool, operator: In, values: [default]}]}}", Accepted),
    ]);
    check(BASE, &cases);
}

/// Contexts "TerminationGracePeriod" and "ExpireAfter".
#[test]
fn termination_grace_period_and_expire_after() {
    let tgp = "spec.terminationGracePeriod";
    let expire = "spec.expireAfter";
    let cases: &[Case] = &[
        (
            "should succeed on a valid terminationGracePeriod: single unit",
            "{spec: {terminationGracePeriod: 30s}}",
            Accepted,
        ),
        (
            "should succeed on a valid terminationGracePeriod: multiple units",
            "{spec: {terminationGracePeriod: 1h30m5s}}",
            Accepted,
        ),
        (
            "should fail on an invalid terminationGracePeriod: negative",
            "{spec: {terminationGracePeriod: -1s}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: invalid unit",
            "{spec: {terminationGracePeriod: 1hr}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: never",
            "{spec: {terminationGracePeriod: Never}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: partial match",
            "{spec: {terminationGracePeriod: FooNever}}",
            Refused(tgp),
        ),
        (
            "should succeed on a valid expireAfter: single unit",
            "{spec: {expireAfter: 30s}}",
            Accepted,
        ),
        (
            "should succeed on a valid expireAfter: multiple units",
            "{spec: {expireAfter: 1h30m5s}}",
            Accepted,
        ),
        (
            "should succeed on a valid expireAfter: never",
            "{spec: {expireAfter: Never}}",
            Accepted,
        ),
        (
            "should fail on an invalid expireAfter: negative",
            "{spec: {expireAfter: -1s}}",
            Refused(expire),
        ),
        (
            "should fail on an invalid expireAfter: invalid unit",
            "{spec: {expireAfter: 1hr}}",
            Refused(expire),
        ),
        (
            "should fail on an invalid expireAfter: partial match",
            "{spec: {expireAfter: FooNever}}",
            Refused(expire),
        ),
    ];
    check(BASE, cases);
}
