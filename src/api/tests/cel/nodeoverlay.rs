//! `core v1.14.1: pkg/apis/v1alpha1/nodeoverlay_validation_test.go` ("CEL/Validation"), against
//! the NodeOverlay CRD (`tests/fixtures/crds/v1alpha1/karpenter.sh_nodeoverlays.yaml`).
//! Upstream's base object, as a manifest. Upstream's "priceAdjustment" "Invalid Input" table
//! sets `price` (as its "price" table does); mirrored as written.

use super::{borrowed, check, Accepted, Owned, Refused, RequirementIts, WELL_KNOWN};

const BASE: &str = "apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: cel}
spec:
  requirements: [{key: karpenter.sh/capacity-type, operator: Exists}]
";

fn requirement(r: &str) -> String {
    format!("{{spec: {{requirements: [{r}]}}}}")
}

/// Context "Requirements".
#[test]
fn requirements() {
    let at = "spec.requirements[0]";
    let key = "spec.requirements[0].key";
    let owned = RequirementIts {
        wrap: requirement,
        at,
        key,
        well_known: WELL_KNOWN,
        domains: [
            "should allow kubernetes domains exceptions",
            "should allow kubernetes subdomains exceptions",
        ],
        keys: true,
        min_values: false,
    }
    .cases();
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should fail for no values for In operator", "{spec: {requirements: [{key: Test, operator: In}]}}", Refused(at)),
        ("should fail for no values for NotIn operator", "{spec: {requirements: [{key: Test, operator: NotIn}]}}", Refused(at)),
        ("should succeed for valid requirement keys (one)", "{spec: {requirements: [{key: Test, operator: Exists}]}}", Accepted),
        ("should succeed for valid requirement keys", "{spec: {requirements: [{key: Test, operator: Exists}, {key: test.com/Test, operator: Exists}, {key: test.com.com/test, operator: Exists}, {key: key-only, operator: Exists}]}}", Accepted),
        ("should allow for the karpenter.sh/nodepool label", "{spec: {requirements: [{key: karpenter.sh/nodepool, operator: In, values: [silly]}]}}", Accepted),
        ("should allow supported ops", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test]}, {key: topology.kubernetes.io/zone, operator: Gt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Lt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Gte, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Lte, values: ['1']}, {key: topology.kubernetes.io/zone, operator: NotIn, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Exists}]}}", Accepted),
        ("should fail for unsupported ops", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]}}", Refused("spec.requirements[0].operator")),
        ("should fail for restricted domains: karpenter.sh", "{spec: {requirements: [{key: karpenter.sh/test, operator: In, values: [test]}]}}", Refused(key)),
        ("should allow non-empty set after removing overlapped value", "{spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test, foo]}, {key: topology.kubernetes.io/zone, operator: NotIn, values: [test, bar]}]}}", Accepted),
        ("should allow empty requirements", "{spec: {requirements: [{key: test, operator: Exists}]}}", Accepted),
    ]);
    check(BASE, &cases);
}

/// "shout not be able to set both price and priceAdjustment" and Contexts "priceAdjustment",
/// "price" and "Capacity".
#[test]
fn price_and_capacity() {
    let mut owned: Vec<Owned> = Vec::new();
    // The two "Invalid Input" tables share all but their last rows.
    let shared = [
        "+42",
        ".5",
        "42.",
        "42%",
        "3,14",
        "1e10",
        "0x42",
        "forty-two",
        "42a",
        "42 ",
        " 42",
        "42.0.0",
        "-",
        ".",
    ];
    let tables: [(&str, &[&str]); 2] = [
        (
            "priceAdjustment (it sets price)",
            &["-100.0%", "-101.1%", "-129"],
        ),
        ("price", &["-.42"]),
    ];
    for (table, last) in tables {
        for input in shared.iter().chain(last) {
            owned.push((
                format!("{table}: Invalid Input {input:?}"),
                format!("{{spec: {{price: {input:?}}}}}"),
                Refused("spec.price"),
            ));
        }
    }
    for (it, input, want) in [
        (
            "should not allow an unsigned priceAdjustment percentage",
            "1%",
            Refused("spec.priceAdjustment"),
        ),
        (
            "should not allow an unsigned priceAdjustment integer",
            "1",
            Refused("spec.priceAdjustment"),
        ),
        (
            "should not allow an unsigned priceAdjustment float",
            "1.3",
            Refused("spec.priceAdjustment"),
        ),
        (
            "should allow positive percentage value for priceAdjustment field",
            "+1%",
            Accepted,
        ),
        (
            "should allow negative percentage less then 0%",
            "-1%",
            Accepted,
        ),
        ("should allow negative percentage -100%", "-100%", Accepted),
        (
            "should allow positive percentage greater then 100%",
            "+100.102%",
            Accepted,
        ),
        (
            "should allow positive percentage greater then 100% with an integer",
            "+298%",
            Accepted,
        ),
        ("should allow positive integer value", "+43", Accepted),
        ("should allow negative integer value", "-43", Accepted),
        ("should allow positive float value", "+34.43", Accepted),
        ("should allow negative float value", "-34.43", Accepted),
    ] {
        owned.push((
            it.into(),
            format!("{{spec: {{priceAdjustment: {input:?}}}}}"),
            want,
        ));
    }
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        (
            "shout not be able to set both price and priceAdjustment",
            "{spec: {price: '0.432', priceAdjustment: '+10%'}}",
            Refused("spec"),
        ),
        (
            "should allow integer value",
            "{spec: {price: '43'}}",
            Accepted,
        ),
        (
            "should allow float value",
            "{spec: {price: '34.43'}}",
            Accepted,
        ),
        (
            "should allow custom resources",
            "{spec: {capacity: {smarter-devices/fuse: '1'}}}",
            Accepted,
        ),
        (
            "should not allow cpu resources override",
            "{spec: {capacity: {cpu: '1'}}}",
            Refused("spec.capacity.cpu"),
        ),
        (
            "should not allow memory resources override",
            "{spec: {capacity: {memory: 34Gi}}}",
            Refused("spec.capacity.memory"),
        ),
        (
            "should not allow pod resources override",
            "{spec: {capacity: {pods: '324'}}}",
            Refused("spec.capacity.pods"),
        ),
    ]);
    check(BASE, &cases);
}
