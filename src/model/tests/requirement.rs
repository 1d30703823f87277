//! `core: pkg/scheduling/requirement_test.go` (v1.14.1), `Describe("Requirement")`: one
//! requirement on one key — intersection, membership, operator, length, `Any`, `String`, the
//! conversion back to a manifest requirement, and `Gte`/`Lte`.

use crate::model::requirements::{NodeSelectorRequirement, Operator, Operator::*, Requirement};

/// The fourteen requirements upstream's tables are built from, in its order (`exists`,
/// `doesNotExist`, `inA`, `inB`, `inAB`, `notInA`, `in1`, `in9`, `in19`, `notIn12`,
/// `greaterThan1`, `greaterThan9`, `lessThan1`, `lessThan9`).
const NAMES: [&str; 14] = [
    "ex", "dne", "inA", "inB", "inAB", "niA", "in1", "in9", "in19", "ni12", "gt1", "gt9", "lt1",
    "lt9",
];

/// The operator and values of each of [`NAMES`] (`requirements.rs` puts them on the zone key).
pub(super) fn spec(name: &str) -> (Operator, &'static [&'static str]) {
    match name {
        "ex" => (Exists, &[]),
        "dne" => (DoesNotExist, &[]),
        "inA" => (In, &["A"]),
        "inB" => (In, &["B"]),
        "inAB" => (In, &["A", "B"]),
        "niA" => (NotIn, &["A"]),
        "in1" => (In, &["1"]),
        "in9" => (In, &["9"]),
        "in19" => (In, &["1", "9"]),
        "ni12" => (NotIn, &["1", "2"]),
        "gt1" => (Gt, &["1"]),
        "gt9" => (Gt, &["9"]),
        "lt1" => (Lt, &["1"]),
        "lt9" => (Lt, &["9"]),
        other => panic!("no requirement {other}"),
    }
}

fn named(name: &str) -> Requirement {
    let (op, values) = spec(name);
    Requirement::new("key", op, values.iter().copied())
}

/// The minValues of upstream's `…OperatorWithFlexibility` twin of each named requirement.
fn flex(name: &str) -> u32 {
    match name {
        "inAB" | "in19" | "ni12" => 2,
        _ => 1,
    }
}

fn with_min(mut r: Requirement, min: Option<u32>) -> Requirement {
    r.min_values = min;
    r
}

/// Everything a requirement is: (complement, values, gte, lte, minValues).
type Shape = (bool, Vec<String>, Option<i64>, Option<i64>, Option<u32>);

fn shape(r: &Requirement) -> Shape {
    (
        r.is_complement(),
        r.values().iter().cloned().collect(),
        r.gte(),
        r.lte(),
        r.min_values,
    )
}

/// A named requirement, or one of the results upstream writes as a literal `&Requirement{…}`.
fn expected(name: &str) -> Shape {
    let lit = |values: &[&str], gte, lte| {
        (
            true,
            values.iter().map(|v| v.to_string()).collect(),
            gte,
            lte,
            None,
        )
    };
    match name {
        "ni12A" => lit(&["1", "2", "A"], None, None),
        "ni2ge2" => lit(&["2"], Some(2), None),
        "ni12le8" => lit(&["1", "2"], None, Some(8)),
        "ge2le8" => lit(&[], Some(2), Some(8)),
        _ => shape(&named(name)),
    }
}

/// `Context("Intersect requirements")` › "should intersect two requirements without minValues"
/// (196 Entries): row = existing, column = incoming, both in [`NAMES`] order. Results upstream
/// writes as literals: `ni12A` = NotIn [1 2 A], `ni2ge2` = NotIn [2] >=2, `ni12le8` =
/// NotIn [1 2] <=8, `ge2le8` = Exists >=2 <=8.
const INTERSECTION: [&str; 14] = [
    "ex   dne inA inB inAB niA   in1 in9 in19 ni12    gt1    gt9 lt1 lt9",
    "dne  dne dne dne dne  dne   dne dne dne  dne     dne    dne dne dne",
    "inA  dne inA dne inA  dne   dne dne dne  inA     dne    dne dne dne",
    "inB  dne dne inB inB  inB   dne dne dne  inB     dne    dne dne dne",
    "inAB dne inA inB inAB inB   dne dne dne  inAB    dne    dne dne dne",
    "niA  dne dne inB inB  niA   in1 in9 in19 ni12A   gt1    gt9 lt1 lt9",
    "in1  dne dne dne dne  in1   in1 dne in1  dne     dne    dne dne in1",
    "in9  dne dne dne dne  in9   dne in9 in9  in9     in9    dne dne dne",
    "in19 dne dne dne dne  in19  in1 in9 in19 in9     in9    dne dne in1",
    "ni12 dne inA inB inAB ni12A dne in9 in9  ni12    ni2ge2 gt9 lt1 ni12le8",
    "gt1  dne dne dne dne  gt1   dne in9 in9  ni2ge2  gt1    gt9 dne ge2le8",
    "gt9  dne dne dne dne  gt9   dne dne dne  gt9     gt9    gt9 dne dne",
    "lt1  dne dne dne dne  lt1   dne dne dne  lt1     dne    dne lt1 lt1",
    "lt9  dne dne dne dne  lt9   in1 dne in1  ni12le8 ge2le8 dne lt1 lt9",
];

/// The three intersection tables: without minValues (196 Entries), minValues on the existing
/// side only (197 Entries, one repeated), on both sides (197, one repeated). Upstream's
/// expected minValues is in every Entry the larger of the two (`maxIntPtr`), kept even when the
/// intersection is empty (`inAB(minValues 2) ∩ doesNotExist` = `DoesNotExist` with minValues 2).
#[test]
fn requirement_test_intersect_requirements() {
    for (a, row) in NAMES.iter().zip(INTERSECTION) {
        let row: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(row.len(), NAMES.len(), "row {a}");
        for (b, cell) in NAMES.iter().zip(row) {
            let want = expected(cell);
            let got = named(a).intersection(&named(b));
            assert_eq!(shape(&got), want, "{a} ∩ {b}");
            // `HasIntersection` agrees with `Intersection`.
            assert_eq!(
                named(a).intersection_is_nonempty(&named(b)),
                !got.is_empty(),
                "{a} ∩ {b} non-empty"
            );
            for (amin, bmin) in [(Some(flex(a)), None), (Some(flex(a)), Some(flex(b)))] {
                let got = with_min(named(a), amin).intersection(&with_min(named(b), bmin));
                let mut want = want.clone();
                want.4 = amin.max(bmin);
                assert_eq!(shape(&got), want, "{a}(minValues {amin:?}) ∩ {b}({bmin:?})");
            }
        }
    }
}

/// `Context("Has")` › "should have the right values" (70 Entries): for each named requirement,
/// whether it admits "A", "B", "1", "2", "9".
#[test]
fn requirement_test_has() {
    let table: [(&str, &str); 14] = [
        ("ex", "11111"),
        ("dne", "00000"),
        ("inA", "10000"),
        ("inB", "01000"),
        ("inAB", "11000"),
        ("niA", "01111"),
        ("in1", "00100"),
        ("in9", "00001"),
        ("in19", "00101"),
        ("ni12", "11001"),
        ("gt1", "00011"),
        ("gt9", "00000"),
        ("lt1", "00000"),
        ("lt9", "00110"),
    ];
    for (name, row) in table {
        for (value, want) in ["A", "B", "1", "2", "9"].iter().zip(row.chars()) {
            assert_eq!(named(name).has(value), want == '1', "{name} has {value}");
        }
    }
}

/// `Context("Operator")` (14 Entries) and `Context("Len")` (14 Entries): bounded requirements
/// are `Exists`; a complement's length is `MaxInt64` minus what it excludes.
#[test]
fn requirement_test_operator_and_len() {
    let all = i64::MAX as usize;
    let table: [(&str, Operator, usize); 14] = [
        ("ex", Exists, all),
        ("dne", DoesNotExist, 0),
        ("inA", In, 1),
        ("inB", In, 1),
        ("inAB", In, 2),
        ("niA", NotIn, all - 1),
        ("in1", In, 1),
        ("in9", In, 1),
        ("in19", In, 2),
        ("ni12", NotIn, all - 2),
        ("gt1", Exists, all),
        ("gt9", Exists, all),
        ("lt1", Exists, all),
        ("lt9", Exists, all),
    ];
    for (name, op, len) in table {
        assert_eq!(named(name).operator(), op, "{name}");
        assert_eq!(named(name).len(), len, "{name}");
    }
}

/// `Context("Any")` › "should return any", and "Gte and Lte Operators" › "should return valid
/// value from Any() for Gte / Lte". Upstream picks at random among what is admitted; ours picks
/// the smallest (deterministic plans), which satisfies every upstream expectation.
/// Upstream It: "should return valid value from Any() for Lte".
#[test]
fn requirement_test_any() {
    let any = |name: &str| named(name).any();
    assert!(any("ex").is_some_and(|v| !v.is_empty()));
    assert_eq!(any("dne"), None, "upstream: the empty string");
    assert_eq!(any("inA").as_deref(), Some("A"));
    assert_eq!(any("inB").as_deref(), Some("B"));
    assert!(matches!(any("inAB").as_deref(), Some("A" | "B")));
    assert!(any("niA").is_some_and(|v| !v.is_empty() && v != "A"));
    assert_eq!(any("in1").as_deref(), Some("1"));
    assert_eq!(any("in9").as_deref(), Some("9"));
    assert!(matches!(any("in19").as_deref(), Some("1" | "9")));
    assert!(any("ni12").is_some_and(|v| !["", "1", "2"].contains(&v.as_str())));
    let int = |name: &str| any(name).and_then(|v| v.parse::<i64>().ok()).unwrap();
    assert!(int("gt1") >= 1);
    assert!((9..i64::MAX).contains(&int("gt9")));
    assert_eq!(any("lt1").as_deref(), Some("0"));
    assert!((0..9).contains(&int("lt9")));
    let gte5 = Requirement::new("key", Gte, ["5"]).any().unwrap();
    assert!(gte5.parse::<i64>().unwrap() >= 5);
    let lte10 = Requirement::new("key", Lte, ["10"]).any().unwrap();
    assert!(lte10.parse::<i64>().unwrap() <= 10);
}

/// `Context("String")` › "should print the right string" (16 Entries).
#[test]
fn requirement_test_string() {
    let table: [(&str, &str); 14] = [
        ("ex", "key Exists"),
        ("dne", "key DoesNotExist"),
        ("inA", "key In [A]"),
        ("inB", "key In [B]"),
        ("inAB", "key In [A B]"),
        ("niA", "key NotIn [A]"),
        ("in1", "key In [1]"),
        ("in9", "key In [9]"),
        ("in19", "key In [1 9]"),
        ("ni12", "key NotIn [1 2]"),
        ("gt1", "key Exists >=2"),
        ("gt9", "key Exists >=10"),
        ("lt1", "key Exists <=0"),
        ("lt9", "key Exists <=8"),
    ];
    for (name, want) in table {
        assert_eq!(named(name).to_string(), want, "{name}");
    }
    let both = named("gt1").intersection(&named("lt9"));
    assert_eq!(both.to_string(), "key Exists >=2 <=8");
    let none = named("gt9").intersection(&named("lt1"));
    assert_eq!(none.to_string(), "key DoesNotExist");
    // `String()` beyond the table: more than five values are cut, minValues is appended.
    let many = Requirement::new("key", In, ["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(many.to_string(), "key In [a b c d e and 2 others]");
    let flexible = with_min(named("inAB"), Some(2));
    assert_eq!(flexible.to_string(), "key In [A B] minValues 2");
}

/// `Context("NodeSelectorRequirements Conversion")` › "should return the expected
/// NodeSelectorRequirement" (28 Entries): bounds come back as `Gte`/`Lte` of the canonical
/// (inclusive) bound, minValues is kept.
#[test]
fn requirement_test_node_selector_requirement_conversion() {
    let table: [(&str, Operator, &[&str]); 14] = [
        ("ex", Exists, &[]),
        ("dne", DoesNotExist, &[]),
        ("inA", In, &["A"]),
        ("inB", In, &["B"]),
        ("inAB", In, &["A", "B"]),
        ("niA", NotIn, &["A"]),
        ("in1", In, &["1"]),
        ("in9", In, &["9"]),
        ("in19", In, &["1", "9"]),
        ("ni12", NotIn, &["1", "2"]),
        ("gt1", Gte, &["2"]),
        ("gt9", Gte, &["10"]),
        ("lt1", Lte, &["0"]),
        ("lt9", Lte, &["8"]),
    ];
    for (name, op, values) in table {
        for min in [None, Some(flex(name))] {
            let mut want = NodeSelectorRequirement::new("key", op, values);
            want.min_values = min;
            assert_eq!(
                with_min(named(name), min).to_selector(),
                want,
                "{name} {min:?}"
            );
        }
    }
}

/// `Context("Gte and Lte Operators")` (13 It; the two `Any()` Its are in
/// [`requirement_test_any`]).
/// Upstream It: "should treat Lte as inclusive upper bound".
/// Upstream It: "should keep Gt when Gt is more restrictive".
/// Upstream It: "should keep Lt when Lt is more restrictive".
#[test]
fn requirement_test_gte_and_lte_operators() {
    let r = |op, v: &str| Requirement::new("key", op, [v]);
    let admits = |req: &Requirement, values: &[&str]| values.iter().all(|v| req.has(v));
    let refuses = |req: &Requirement, values: &[&str]| values.iter().all(|v| !req.has(v));
    // "should treat Gte as inclusive lower bound", "… Lte as inclusive upper bound".
    let (gte2, lte8) = (r(Gte, "2"), r(Lte, "8"));
    assert!(admits(&gte2, &["2", "3", "100"]) && refuses(&gte2, &["1", "0"]));
    assert!(admits(&lte8, &["8", "7", "0"]) && refuses(&lte8, &["9", "10"]));
    // "should intersect Gte and Lte correctly".
    let both = gte2.intersection(&lte8);
    assert!(admits(&both, &["2", "5", "8"]) && refuses(&both, &["1", "9"]));
    // "should be equivalent to adjusted Gt/Lt".
    assert_eq!(gte2, r(Gt, "1"));
    assert_eq!(lte8, r(Lt, "9"));
    // "should collapse redundant bounds in intersection", "should keep Gt when Gt is more
    // restrictive", "should keep more restrictive Gte when Gte > Gt+1", "should keep Lt when Lt
    // is more restrictive", "should keep more restrictive Lte when Lte < Lt-1":
    // (a, b, admitted, refused, the one requirement written back).
    let cases: [(Requirement, Requirement, &str, &str, Operator, &str); 5] = [
        (r(Gt, "4"), r(Gte, "5"), "5", "4", Gte, "5"),
        (r(Gt, "5"), r(Gte, "5"), "6", "5", Gte, "6"),
        (r(Gt, "3"), r(Gte, "6"), "6", "5", Gte, "6"),
        (r(Lt, "5"), r(Lte, "5"), "4", "5", Lte, "4"),
        (r(Lt, "9"), r(Lte, "5"), "5", "6", Lte, "5"),
    ];
    for (a, b, yes, no, op, value) in cases {
        let got = a.intersection(&b);
        assert!(got.has(yes) && !got.has(no), "{a} ∩ {b}");
        assert_eq!(
            got.to_selectors(),
            vec![NodeSelectorRequirement::new("key", op, &[value])]
        );
    }
    // "should handle Gte 0 boundary", "should handle Lte 0 boundary".
    assert!(r(Gte, "0").has("0") && !r(Gte, "0").has("-1"));
    assert!(r(Lte, "0").has("0") && !r(Lte, "0").has("1"));
    // "should return DoesNotExist for Gt MaxInt".
    let gt_max = r(Gt, &i64::MAX.to_string());
    assert_eq!(gt_max.operator(), DoesNotExist);
    assert_eq!(gt_max.len(), 0);
}

/// Integer edge cases beyond upstream's tables (docs/karpenter.md §1.6): the bounds never
/// overflow into "everything", a non-integer never satisfies a bound, an empty range is
/// `DoesNotExist`, and `NotIn` without values is `Exists` while `DoesNotExist` admits nothing.
#[test]
fn requirement_integer_edges() {
    let r = |op, v: &str| Requirement::new("key", op, [v]);
    // Lt MinInt admits nothing (Go wraps `MinInt - 1` round to MaxInt and admits everything;
    // the API rejects such a pod anyway, Karpenter's NodePool rules refuse negatives).
    let lt_min = r(Lt, &i64::MIN.to_string());
    assert_eq!(lt_min.operator(), DoesNotExist);
    assert!(!lt_min.has("0"));
    // Lte MinInt admits MinInt only; Gte MaxInt admits MaxInt only.
    assert!(r(Lte, &i64::MIN.to_string()).has(&i64::MIN.to_string()));
    assert!(r(Gte, &i64::MAX.to_string()).has(&i64::MAX.to_string()));
    assert!(!r(Gte, &i64::MAX.to_string()).has("0"));
    // Values that are not integers (or do not fit) never satisfy a bound.
    for v in ["x", "1.5", "", "99999999999999999999"] {
        assert!(!r(Gt, "0").has(v), "Gt 0 has {v:?}");
        assert!(!r(Lt, "100").has(v), "Lt 100 has {v:?}");
    }
    // Signs parse as Go's `Atoi` does.
    assert!(r(Gt, "0").has("+5") && r(Lt, "0").has("-5"));
    // Gt n ∩ Lt n+1 is empty, Gte n ∩ Lte n is the single integer n.
    assert_eq!(
        r(Gt, "4").intersection(&r(Lt, "5")).operator(),
        DoesNotExist
    );
    let five = r(Gte, "5").intersection(&r(Lte, "5"));
    assert!(five.has("5") && !five.has("4") && !five.has("6"));
    assert_eq!(five.any().as_deref(), Some("5"));
    // An empty range keeps minValues (it is the pool's, not the values').
    let empty = with_min(r(Gt, "9"), Some(3)).intersection(&r(Lt, "1"));
    assert_eq!(shape(&empty), (false, vec![], None, None, Some(3)));
    // A range that excludes every admitted value: nothing left.
    let excluded = r(Gte, "1")
        .intersection(&r(Lte, "2"))
        .intersection(&Requirement::new("key", NotIn, ["1", "2"]));
    assert_eq!(excluded.any(), None);
    // NotIn with no values is Exists; DoesNotExist is not NotIn [].
    let not_in_none = Requirement::new("key", NotIn, std::iter::empty::<&str>());
    assert_eq!(not_in_none.operator(), Exists);
    assert!(not_in_none.has("anything"));
    assert!(!named("dne").has("anything"));
    assert!(
        !not_in_none.intersects(&named("dne")),
        "Exists ∩ DoesNotExist"
    );
    assert!(
        named("niA").intersects(&named("dne")),
        "NotIn ∩ DoesNotExist: both negative"
    );
}
