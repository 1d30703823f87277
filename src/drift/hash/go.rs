//! A Go value as `mitchellh/hashstructure/v2` sees it, and that library's hash over it.
//!
//! Karpenter hashes with `Hash(v, FormatV2, {SlicesAsSets, IgnoreZeroValue, ZeroNil})`
//! (hashstructure v2.0.2 `hashstructure.go`, `walker.visit`). The tree here holds only what
//! such a walk visits: struct fields that are exported, not tagged `hash:"ignore"`, and not Go
//! zero values (the builders in [`super::karpenter`] leave those out), pointers already
//! dereferenced, and numbers at their Go width (the width is part of the bytes hashed).

/// FNV-1 64 (`hash/fnv.New64`: multiply, then xor — not FNV-1a).
fn fnv1(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| h.wrapping_mul(PRIME) ^ u64::from(*b))
}

/// `hashUpdateOrdered`: the little-endian bytes of `a` then `b`, hashed afresh.
fn ordered(a: u64, b: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    fnv1(&bytes)
}

/// `hashFinishUnordered`: the accumulator's little-endian bytes, hashed afresh.
fn finish(a: u64) -> u64 {
    fnv1(&a.to_le_bytes())
}

/// A Go value, after pointers and interfaces are dereferenced.
#[derive(Debug, Clone, PartialEq)]
pub enum GoValue {
    /// A struct: its Go type name (`t.Name()`, no package) and the fields a walk hashes, in
    /// declaration order (the order changes the hash).
    Struct(&'static str, Vec<(&'static str, GoValue)>),
    /// A map (order-free).
    Map(Vec<(GoValue, GoValue)>),
    /// A slice hashed as a set (`SlicesAsSets`): order-free, and no finishing step.
    Set(Vec<GoValue>),
    /// A string (or a named string type, or a `hash:"string"` field's `String()`).
    Str(String),
    /// `int64`, `int`, `time.Duration`.
    I64(i64),
    /// `int32`.
    I32(i32),
    /// `bool`, hashed as an `int8`.
    Bool(bool),
}

impl GoValue {
    /// A string value.
    pub fn str(s: impl Into<String>) -> GoValue {
        GoValue::Str(s.into())
    }

    /// The value's hash (`walker.visit`).
    pub fn hash(&self) -> u64 {
        match self {
            GoValue::Str(s) => fnv1(s.as_bytes()),
            GoValue::I64(n) => fnv1(&n.to_le_bytes()),
            GoValue::I32(n) => fnv1(&n.to_le_bytes()),
            GoValue::Bool(b) => fnv1(&[u8::from(*b)]),
            GoValue::Set(items) => items.iter().fold(0, |h, v| h ^ v.hash()),
            GoValue::Map(entries) => finish(
                entries
                    .iter()
                    .fold(0, |h, (k, v)| h ^ ordered(k.hash(), v.hash())),
            ),
            GoValue::Struct(name, fields) => {
                fields.iter().fold(fnv1(name.as_bytes()), |h, (field, v)| {
                    finish(h ^ ordered(fnv1(field.as_bytes()), v.hash()))
                })
            }
        }
    }
}

/// Builds a struct field by field, leaving out absent (zero) ones.
pub struct StructBuilder {
    name: &'static str,
    fields: Vec<(&'static str, GoValue)>,
}

impl StructBuilder {
    /// A struct of Go type `name`.
    pub fn new(name: &'static str) -> Self {
        StructBuilder {
            name,
            fields: Vec::new(),
        }
    }

    /// The next field in declaration order; `None` is a zero value (skipped).
    pub fn field(mut self, name: &'static str, value: Option<GoValue>) -> Self {
        if let Some(v) = value {
            self.fields.push((name, v));
        }
        self
    }

    /// Whether no field was set.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The struct value.
    pub fn build(self) -> GoValue {
        GoValue::Struct(self.name, self.fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> GoValue {
        GoValue::str(v)
    }

    #[test]
    fn fnv1_64_matches_the_published_vectors() {
        // FNV-1 64 test vectors (Fowler/Noll/Vo reference `test_fnv.c`): "" and "a".
        assert_eq!(fnv1(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1(b"a"), 0xaf63_bd4c_8601_b7be);
        assert_eq!(fnv1(b"foobar"), 0x340d_8765_a4dd_a9c2);
    }

    // The cases below mirror hashstructure v2.0.2 `hashstructure_test.go` (TestHash_equal,
    // TestHash_SetIgnoredValues, TestHash_equalNil...): which values must hash equal or not.

    #[test]
    fn sets_and_maps_ignore_order_structs_do_not() {
        let a = GoValue::Set(vec![s("foo"), s("bar")]);
        let b = GoValue::Set(vec![s("bar"), s("foo")]);
        assert_eq!(a.hash(), b.hash());
        let m1 = GoValue::Map(vec![(s("foo"), s("bar")), (s("bang"), s("baz"))]);
        let m2 = GoValue::Map(vec![(s("bang"), s("baz")), (s("foo"), s("bar"))]);
        assert_eq!(m1.hash(), m2.hash());
        let x = GoValue::Struct("T", vec![("A", s("x")), ("B", s("y"))]);
        let y = GoValue::Struct("T", vec![("B", s("y")), ("A", s("x"))]);
        assert_ne!(x.hash(), y.hash());
    }

    #[test]
    fn finishing_keeps_overlapping_maps_from_cancelling_out() {
        // TestHash_equal "{A,B},{A,C}" vs "{Z,B},{Z,C}" style: a struct of two maps sharing a key.
        let two = |k: &str| {
            GoValue::Struct(
                "S",
                vec![
                    ("X", GoValue::Map(vec![(s(k), s("B"))])),
                    ("Y", GoValue::Map(vec![(s(k), s("C"))])),
                ],
            )
        };
        assert_ne!(two("A").hash(), two("Z").hash());
    }

    #[test]
    fn type_name_field_name_and_number_width_all_count() {
        let a = GoValue::Struct("A", vec![("F", s("v"))]);
        let b = GoValue::Struct("B", vec![("F", s("v"))]);
        let c = GoValue::Struct("A", vec![("G", s("v"))]);
        assert_ne!(a.hash(), b.hash());
        assert_ne!(a.hash(), c.hash());
        assert_ne!(GoValue::I32(1).hash(), GoValue::I64(1).hash());
        assert_eq!(GoValue::Bool(true).hash(), fnv1(&[1]));
    }

    #[test]
    fn an_empty_set_hashes_to_zero_and_an_empty_map_to_a_finished_zero() {
        assert_eq!(GoValue::Set(vec![]).hash(), 0);
        assert_eq!(GoValue::Map(vec![]).hash(), finish(0));
        // A struct with no hashed field is the hash of its type name alone.
        assert_eq!(
            StructBuilder::new("Quantity").build().hash(),
            fnv1(b"Quantity")
        );
    }
}
