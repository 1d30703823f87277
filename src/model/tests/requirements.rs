//! `core: pkg/scheduling/requirements_test.go` (v1.14.1), `Describe("Requirements")`, and
//! `requirement_test.go` › `Context("NewRequirements")`: sets of requirements keyed by label.

use std::collections::BTreeMap;

use super::requirement::spec;
use crate::model::labels::{self, is_well_known};
use crate::model::requirements::{
    NodeSelectorRequirement, Operator, Operator::*, Requirement, Requirements,
};
use crate::testing::BETA_LABEL_KEYS;

/// Upstream's fifteen sets for `Context("Compatibility")`: unconstrained, then one requirement on
/// the well-known zone label per operator (`exists` … `lessThan9`).
const NAMES: [&str; 15] = [
    "none", "ex", "dne", "inA", "inB", "inAB", "niA", "in1", "in9", "in19", "ni12", "gt1", "gt9",
    "lt1", "lt9",
];

fn set(name: &str) -> Requirements {
    let mut out = Requirements::new();
    if name != "none" {
        let (op, values) = spec(name);
        out.add(Requirement::new(labels::ZONE, op, values.iter().copied()));
    }
    out
}

/// "should be compatible with well-known v1 labels undefined" (225 Expects): row `a`, column
/// `b`, 1 when `a.Compatible(b, AllowUndefinedWellKnownLabels)` succeeds.
const COMPATIBLE_WELL_KNOWN: [&str; 15] = [
    "111111111111111",
    "110111111111111",
    "101000100010000",
    "110101000010000",
    "110011100010000",
    "110111100010000",
    "111011111111111",
    "110000110100001",
    "110000101111000",
    "110000111111001",
    "111111101111111",
    "110000101111101",
    "110000100011100",
    "110000100010011",
    "110000110111011",
];

/// "should be strictly compatible" (225 Expects): the same but for the first row — with nothing
/// allowed undefined, an unconstrained set is compatible only with negative requirements (and
/// with nothing).
const STRICT_UNCONSTRAINED: &str = "101000100010000";

#[test]
fn requirements_test_compatibility() {
    for (i, a) in NAMES.iter().enumerate() {
        for (j, b) in NAMES.iter().enumerate() {
            let (sa, sb) = (set(a), set(b));
            let well_known = COMPATIBLE_WELL_KNOWN[i].as_bytes()[j] == b'1';
            let strict_row = if i == 0 {
                STRICT_UNCONSTRAINED
            } else {
                COMPATIBLE_WELL_KNOWN[i]
            };
            let strict = strict_row.as_bytes()[j] == b'1';
            assert_eq!(
                sa.compatible(&sb, is_well_known).is_ok(),
                well_known,
                "{a} ~ {b}"
            );
            assert_eq!(
                sa.is_compatible(&sb, is_well_known),
                well_known,
                "{a} ~ {b}"
            );
            assert_eq!(
                sa.compatible(&sb, |_| false).is_ok(),
                strict,
                "{a} ~ {b} strictly"
            );
            assert_eq!(
                sa.is_compatible(&sb, |_| false),
                strict,
                "{a} ~ {b} strictly"
            );
        }
    }
}

/// "should normalize aliased labels" (Compatibility) and `requirement_test.go` ›
/// "NewRequirements" › "should normalize labels" (labels and node-selector requirements; the
/// pod path is `scheduling::podreqs::tests::pod_requirements_normalise_labels`).
#[test]
fn requirements_test_normalize_aliased_labels() {
    let mut r = Requirements::new();
    r.add(Requirement::new(
        "failure-domain.beta.kubernetes.io/zone",
        In,
        ["test"],
    ));
    assert!(!r.has("failure-domain.beta.kubernetes.io/zone"));
    assert!(r.get(labels::ZONE).has("test"));

    let beta = BETA_LABEL_KEYS.map(|(beta, _)| beta);
    let mut stable = BETA_LABEL_KEYS.map(|(_, stable)| stable);
    stable.sort();
    let node_selector: BTreeMap<String, String> = beta
        .iter()
        .map(|k| (k.to_string(), "test".to_string()))
        .collect();
    let selectors: Vec<NodeSelectorRequirement> = beta
        .iter()
        .map(|k| NodeSelectorRequirement::new(k, In, &["test"]))
        .collect();
    for reqs in [
        Requirements::from_labels(node_selector.iter()),
        Requirements::from_selectors(&selectors),
    ] {
        let mut keys: Vec<&str> = reqs.iter().map(|r| r.key.as_str()).collect();
        keys.sort();
        assert_eq!(keys, stable);
    }
}

/// `Context("Error Messages")`: "should detect well known label truncations" (6 Entries),
/// "should detect well known label typos" (5 Entries), "should display an error message for
/// unknown labels".
#[test]
fn requirements_test_error_messages() {
    let unconstrained = Requirements::new();
    let err = |key: &str, allow: &dyn Fn(&str) -> bool| {
        let mut req = Requirements::new();
        req.add(Requirement::exists(key));
        unconstrained
            .compatible(&req, allow)
            .unwrap_err()
            .to_string()
    };
    let hinted = [
        // truncations
        ("zone", labels::ZONE),
        ("region", labels::REGION),
        ("nodepool", labels::NODEPOOL),
        ("instance-type", labels::INSTANCE_TYPE),
        ("arch", labels::ARCH),
        ("capacity-type", labels::CAPACITY_TYPE),
        // typos
        ("topology.kubernetesio/zone", labels::ZONE),
        ("node.io/zone", labels::ZONE),
        ("topology.kubernetes.io/regio", labels::REGION),
        ("node.kubernetes.io/region", labels::REGION),
        ("karpenter/nodepool", labels::NODEPOOL),
    ];
    for (bad, good) in hinted {
        assert_eq!(
            err(bad, &is_well_known),
            format!("label {bad:?} does not have known values (typo of {good:?}?)")
        );
    }
    assert_eq!(
        err("deployment", &|_| false),
        "label \"deployment\" does not have known values"
    );
    // A key close to one the set defines is hinted too (upstream's second loop).
    let mut defined = Requirements::new();
    defined.add(Requirement::single("example.com/team", "a"));
    let mut req = Requirements::new();
    req.add(Requirement::exists("team"));
    assert_eq!(
        defined.compatible(&req, |_| false).unwrap_err().to_string(),
        "label \"team\" does not have known values (typo of \"example.com/team\"?)"
    );
}

/// Key, operator, values, minValues when flexible, operator and values written back.
type ConversionRow = (
    &'static str,
    Operator,
    &'static [&'static str],
    u32,
    Operator,
    &'static [&'static str],
);

/// A requirement, its minValues when flexible, and the operator and values it is written back as.
type ConversionCase = (Requirement, Option<u32>, Operator, &'static [&'static str]);

/// The fourteen requirements of `Context("NodeSelectorRequirements Conversion")`, each on a key
/// named after it, with the minValues of the "with flexibility" It.
fn conversion_cases() -> Vec<ConversionCase> {
    let cases: [ConversionRow; 14] = [
        ("exists", Exists, &[], 3, Exists, &[]),
        ("doesNotExist", DoesNotExist, &[], 2, DoesNotExist, &[]),
        ("inA", In, &["A"], 1, In, &["A"]),
        ("inB", In, &["B"], 1, In, &["B"]),
        ("inAB", In, &["A", "B"], 2, In, &["A", "B"]),
        ("notInA", NotIn, &["A"], 1, NotIn, &["A"]),
        ("in1", In, &["1"], 1, In, &["1"]),
        ("in9", In, &["9"], 1, In, &["9"]),
        ("in19", In, &["1", "9"], 2, In, &["1", "9"]),
        ("notIn12", NotIn, &["1", "2"], 2, NotIn, &["1", "2"]),
        ("greaterThan1", Gt, &["1"], 1, Gte, &["2"]),
        ("greaterThan9", Gt, &["9"], 1, Gte, &["10"]),
        ("lessThan1", Lt, &["1"], 1, Lte, &["0"]),
        ("lessThan9", Lt, &["9"], 1, Lte, &["8"]),
    ];
    cases
        .into_iter()
        .map(|(key, op, values, min, out_op, out_values)| {
            (
                Requirement::new(key, op, values.iter().copied()),
                Some(min),
                out_op,
                out_values,
            )
        })
        .collect()
}

/// "should convert combinations of labels to expected NodeSelectorRequirements", "… with
/// flexiblity …", "should return both Gte and Lte requirements when both bounds exist".
/// Upstream It: "should convert combinations of labels with flexiblity to expected NodeSelectorRequirements".
#[test]
fn requirements_test_node_selector_requirements_conversion() {
    for flexible in [false, true] {
        let mut reqs = Requirements::new();
        let mut want = Vec::new();
        for (mut r, min, op, values) in conversion_cases() {
            let min = min.filter(|_| flexible);
            r.min_values = min;
            let mut sel = NodeSelectorRequirement::new(&r.key, op, values);
            sel.min_values = min;
            want.push(sel);
            reqs.add(r);
        }
        let mut got = reqs.to_selectors();
        got.sort_by(|a, b| a.key.cmp(&b.key));
        want.sort_by(|a, b| a.key.cmp(&b.key));
        assert_eq!(got, want, "flexible: {flexible}");
    }
    let mut cpu = Requirements::new();
    cpu.add(Requirement::new("cpu", Gte, ["8"]));
    cpu.add(Requirement::new("cpu", Lte, ["8"]));
    assert_eq!(
        cpu.to_selectors(),
        vec![
            NodeSelectorRequirement::new("cpu", Gte, &["8"]),
            NodeSelectorRequirement::new("cpu", Lte, &["8"]),
        ]
    );
}

/// `Context("Stringify Requirements")` › "should print Requirements in the same order"; and
/// `requirements.go` `String()` leaves out the restricted `kubernetes.io/hostname`.
#[test]
fn requirements_test_stringify() {
    let mut reqs = Requirements::new();
    for (r, _, _, _) in conversion_cases() {
        reqs.add(r);
    }
    assert_eq!(
        reqs.to_string(),
        "doesNotExist DoesNotExist, exists Exists, greaterThan1 Exists >=2, greaterThan9 Exists >=10, \
         in1 In [1], in19 In [1 9], in9 In [9], inA In [A], inAB In [A B], inB In [B], \
         lessThan1 Exists <=0, lessThan9 Exists <=8, notIn12 NotIn [1 2], notInA NotIn [A]"
    );
    reqs.add(Requirement::single(labels::HOSTNAME, "node-a"));
    assert!(!reqs.to_string().contains("hostname"));
}
