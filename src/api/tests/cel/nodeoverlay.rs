//! `core v1.14.1: pkg/apis/v1alpha1/nodeoverlay_validation_test.go` ("CEL/Validation"), against
//! the NodeOverlay CRD (`tests/fixtures/crds/v1alpha1/karpenter.sh_nodeoverlays.yaml`).
//! Upstream's base object, as a manifest. Upstream's "priceAdjustment" "Invalid Input" table
//! sets `price` (as its "price" table does); mirrored as written.

use super::{check, Accepted, Case, Refused, Want};

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
    let long = "a".repeat(250);
    let mut owned: Vec<(String, String, Want)> = vec![
        (
            "should fail at runtime for requirement keys that are too long: prefix".into(),
            requirement(&format!(
                "{{key: test.com.test.{long}/test, operator: Exists}}"
            )),
            Refused(key),
        ),
        (
            "should fail at runtime for requirement keys that are too long: name".into(),
            requirement(&format!(
                "{{key: test.com.test/test-{long}, operator: Exists}}"
            )),
            Refused(key),
        ),
    ];
    for label in [
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "node.kubernetes.io/windows-build",
    ] {
        owned.push((
            format!("should allow well known label exceptions: {label}"),
            requirement(&format!("{{key: {label}, operator: In, values: [test]}}")),
            Accepted,
        ));
    }
    for label in ["kubernetes.io", "k8s.io"] {
        owned.push((
            format!("should allow kubernetes domains exceptions: {label}"),
            requirement(&format!(
                "{{key: {label}/test, operator: In, values: [test]}}"
            )),
            Accepted,
        ));
        owned.push((
            format!("should allow kubernetes subdomains exceptions: {label}"),
            requirement(&format!(
                "{{key: subdomain.{label}/test, operator: In, values: [test]}}"
            )),
            Accepted,
        ));
    }
    for op in ["Gt", "Lt", "Gte", "Lte"] {
        for values in ["[]", "['1', '2']", "[a]", "['-1']"] {
            let it = if op.len() == 2 {
                "should fail with invalid GT or LT values"
            } else {
                "should fail with invalid GTE or LTE values"
            };
            owned.push((
                format!("{it}: {op} {values}"),
                requirement(&format!(
                    "{{key: topology.kubernetes.io/zone, operator: {op}, values: {values}}}"
                )),
                Refused(at),
            ));
        }
    }
    let mut cases: Vec<Case> = owned
        .iter()
        .map(|(it, p, w)| (it.as_str(), p.as_str(), *w))
        .collect();
    cases.extend_from_slice(&[
        ("should fail for no values for In operator", "{spec: {requirements: [{key: Test, operator: In}]}}", Refused(at)),
        ("should fail for no values for NotIn operator", "{spec: {requirements: [{key: Test, operator: NotIn}]}}", Refused(at)),
        ("should succeed for valid requirement keys (one)", "{spec: {requirements: [{key: Test, operator: Exists}]}}", Accepted),
        ("should succeed for valid requirement keys", "{spec: {requirements: [{key: Test, operator: Exists}, {key: test.com/Test, operator: Exists}, {key: test.com.com/test, operator: Exists}, {key: key-only, operator: Exists}]}}", Accepted),
        ("should fail for invalid requirement keys: test.com.com}", "{spec: {requirements: [{key: 'test.com.com}', operator: Exists}]}}", Refused(key)),
        ("should fail for invalid requirement keys: Test.com/test", "{spec: {requirements: [{key: Test.com/test, operator: Exists}]}}", Refused(key)),
        ("should fail for invalid requirement keys: test/test/test", "{spec: {requirements: [{key: test/test/test, operator: Exists}]}}", Refused(key)),
        ("should fail for invalid requirement keys: test/", "{spec: {requirements: [{key: test/, operator: Exists}]}}", Refused(key)),
        ("should fail for invalid requirement keys: /test", "{spec: {requirements: [{key: /test, operator: Exists}]}}", Refused(key)),
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
    let mut owned: Vec<(String, String, Want)> = Vec::new();
    let invalid_adjustment_table = [
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
        "-100.0%",
        "-101.1%",
        "-129",
    ];
    for input in invalid_adjustment_table {
        owned.push((
            format!("priceAdjustment: Invalid Input {input:?} (sets price)"),
            format!("{{spec: {{price: {input:?}}}}}"),
            Refused("spec.price"),
        ));
    }
    for input in [
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
        "-.42",
    ] {
        owned.push((
            format!("price: Invalid Input {input:?}"),
            format!("{{spec: {{price: {input:?}}}}}"),
            Refused("spec.price"),
        ));
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
    let mut cases: Vec<Case> = owned
        .iter()
        .map(|(it, p, w)| (it.as_str(), p.as_str(), *w))
        .collect();
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
