//! `requirement.go` / `requirements.go` (core v1.14.1) read line by line beyond upstream's own
//! tables (docs/upstream-tests.md "Requirements, labels and taints, line by line
//! (s31-linereq)"): the branches no `It` reaches, each pinned to what the Go code does.

use crate::model::requirements::{
    NodeSelectorRequirement, Operator, Operator::*, Requirement, Requirements,
};

fn req(op: Operator, values: &[&str]) -> Requirement {
    Requirement::new("key", op, values.iter().copied())
}

/// `NewRequirementWithFlexibility`: values matter only to `In`/`NotIn` (an `Exists` or
/// `DoesNotExist` written with values ignores them; the NodePool CRDs allow them), an `In`
/// without values admits nothing, a `NotIn` without values everything; a bound is read with
/// `strconv.Atoi`, which takes a sign and leading zeros (`+5`, `05`), as `i64::from_str` does.
#[test]
fn new_requirement_reads_values_per_operator() {
    type Bounds = (Option<i64>, Option<i64>);
    let cases: &[(Requirement, Operator, &[&str], Bounds)] = &[
        (req(Exists, &["a"]), Exists, &[], (None, None)),
        (req(DoesNotExist, &["a"]), DoesNotExist, &[], (None, None)),
        (req(In, &[]), DoesNotExist, &[], (None, None)),
        (req(NotIn, &[]), Exists, &[], (None, None)),
        (req(Gt, &["+5"]), Exists, &[], (Some(6), None)),
        (req(Lt, &["05"]), Exists, &[], (None, Some(4))),
        (req(Gte, &["0"]), Exists, &[], (Some(0), None)),
    ];
    for (r, op, values, bounds) in cases {
        assert_eq!(r.operator(), *op, "{r}");
        let got: Vec<&str> = r.values().iter().map(String::as_str).collect();
        assert_eq!(got, *values, "{r}");
        assert_eq!((r.gte(), r.lte()), *bounds, "{r}");
    }
    // `withinBounds` reads a label the same way: `+7` and `007` are 7.
    let gt6 = req(Gt, &["6"]);
    assert!(gt6.has("+7") && gt6.has("007") && !gt6.has("7.0") && !gt6.has(" 7"));
}

/// `Intersection`: a concrete set drops the bounds once it has filtered its values by them; two
/// bounds that cross give `DoesNotExist` keeping the larger `minValues`; a complement keeps its
/// exclusions and bounds. `NodeSelectorRequirement` then writes a bounded complement as its
/// bound alone (`Gte` before `Lte`), the exclusions dropped — `NotIn [7]` ∩ `Gt 6` is written
/// `Gte 7` (the same set for Karpenter's later reads only when 7 is not a value anyone asks).
#[test]
fn intersection_and_its_manifest_form() {
    let in_with_bound = req(In, &["5", "7", "x"]).intersection(&req(Gt, &["6"]));
    assert_eq!(in_with_bound.to_string(), "key In [7]");
    assert_eq!((in_with_bound.gte(), in_with_bound.lte()), (None, None));

    let mut flexible = req(Gt, &["6"]);
    flexible.min_values = Some(2);
    let crossed = flexible.intersection(&req(Lt, &["3"]));
    assert_eq!(crossed.operator(), DoesNotExist);
    assert_eq!(crossed.min_values, Some(2));
    assert_eq!(crossed.to_string(), "key DoesNotExist minValues 2");

    let bounded = req(NotIn, &["7", "9"]).intersection(&req(Gt, &["6"]));
    assert_eq!(bounded.to_string(), "key NotIn [7 9] >=7");
    assert!(!bounded.has("7") && bounded.has("8") && !bounded.has("6"));
    let written = bounded.to_selector();
    assert_eq!(
        (written.operator, written.values),
        (Gte, vec!["7".to_string()])
    );
}

/// `Requirements.Add` intersects a repeated key (aliases included); `Get` of an absent key is
/// `Exists`; `Intersects` lets two negative requirements pass however they conflict, and checks
/// only keys both sides have; `Compatible` lets an undefined key through only when it is allowed
/// undefined or negative on the incoming side.
#[test]
fn requirement_sets_add_get_intersects_compatible() {
    let written = [
        NodeSelectorRequirement::new("beta.kubernetes.io/arch", In, &["amd64", "arm64"]),
        NodeSelectorRequirement::new("kubernetes.io/arch", NotIn, &["arm64"]),
    ];
    let set = Requirements::from_selectors(&written);
    assert_eq!(set.len(), 1);
    assert_eq!(
        set.get("kubernetes.io/arch").to_string(),
        "kubernetes.io/arch In [amd64]"
    );
    assert_eq!(set.get("team").operator(), Exists);

    let one = |key: &str, op: Operator, values: &[&str]| {
        Requirements::from_selectors(&[NodeSelectorRequirement::new(key, op, values)])
    };
    // NotIn [a] vs DoesNotExist: no common value, but a node without the label meets both.
    assert!(one("k", NotIn, &["a"])
        .intersects(&one("k", DoesNotExist, &[]))
        .is_ok());
    // In [a] vs DoesNotExist: a conflict.
    assert!(one("k", In, &["a"])
        .intersects(&one("k", DoesNotExist, &[]))
        .is_err());
    // Keys on one side only are not compared.
    assert!(one("k", In, &["a"])
        .intersects(&one("j", In, &["b"]))
        .is_ok());
    let none = |_: &str| false;
    for (incoming, ok) in [
        (one("j", In, &["b"]), false),
        (one("j", Exists, &[]), false),
        (one("j", Gt, &["1"]), false),
        (one("j", NotIn, &["b"]), true),
        (one("j", DoesNotExist, &[]), true),
    ] {
        let got = one("k", In, &["a"]).compatible(&incoming, none);
        assert_eq!(got.is_ok(), ok, "{incoming} → {got:?}");
        assert_eq!(one("k", In, &["a"]).is_compatible(&incoming, none), ok);
    }
}
