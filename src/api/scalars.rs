//! Scalars read with the type the API server gives their field. A YAML reader asked for text
//! takes the plain scalar `1` (or `true`) as the text "1", and asked for a number it parses the
//! quoted `"10"`; the API server does neither: `labels: {tier: 1}` fails `kubectl apply`
//! ("must be of type string" from a CRD, "cannot unmarshal number into Go struct field … of
//! type string" from a core kind), and so does `weight: "10"`. [`Strict`] wraps the
//! deserializer a document is typed from and asks the reader what each scalar *is*
//! (`deserialize_any`) wherever the type asks for a string, a number or a boolean, so the
//! type's own visitor refuses a mismatch ("invalid type: integer `1`, expected a string") —
//! every field of every kind, without a per-field rule.
//!
//! What a plain scalar is follows kubectl's reader (`sigs.k8s.io/yaml` over go-yaml v2, YAML
//! 1.1): `yes`, `no`, `on`, `off`, `y`, `n` are booleans (serde-saphyr's default), `1`, `0x1f`,
//! `1_000` are integers, `1.5` and `1e3` floats; quoted, anything is text. Map keys are not
//! checked: kubectl turns a YAML key `1` into the JSON key "1". Fields typed as int-or-string
//! (quantities, `IntOrString`) take either, as the API does.
//!
//! In a Karpenter object, [`Strict`] also follows where each value is in the object's schema
//! ([`schema::Track`]) and notes the required fields an object lacks
//! (`schema::required`).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

use super::schema::{self, Track};

/// A deserializer whose scalars have the type they were written with (see the module doc), at
/// a place in a Karpenter object's schema (`None`: a Kubernetes kind, or a place without one).
pub(crate) struct Strict<D>(pub D, pub Option<Track>);

/// Deserializer methods that hand the reader `$wrap(visitor, self.1)` for the same method.
macro_rules! forward_wrapped {
    ($wrap:ident; $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($wrap(visitor, self.1))
        }
    )*};
}

/// The deserializer methods with a name, a length or fields, handing the reader
/// `$wrap(visitor, self.1)`.
macro_rules! forward_wrapped_compound {
    ($wrap:ident) => {
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0.deserialize_unit_struct(name, $wrap(visitor, self.1))
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0
                .deserialize_newtype_struct(name, $wrap(visitor, self.1))
        }
        fn deserialize_tuple<V: Visitor<'de>>(
            self,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0.deserialize_tuple(len, $wrap(visitor, self.1))
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0
                .deserialize_tuple_struct(name, len, $wrap(visitor, self.1))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0
                .deserialize_struct(name, fields, $wrap(visitor, self.1))
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0
                .deserialize_enum(name, variants, $wrap(visitor, self.1))
        }
    };
}

macro_rules! as_written {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.deserialize_any(Wrap(visitor, self.1))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    as_written! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
    }

    forward_wrapped! {
        Wrap; deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map
    }
    forward_wrapped_compound!(Wrap);
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_identifier(visitor)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        // Unread: `serde_ignored` reports the field (unknown ones are refused) and, when it is a
        // known object, the fields inside it are checked as it is read past (schema::Walk).
        // Without that report (`--validate=ignore`), the required fields inside are still
        // checked.
        match self.1 {
            Some(track) if !schema::pending_walk() => schema::walk_required(self.0, &track)?,
            _ => self.0.deserialize_ignored_any(schema::Walk::pending())?,
        }
        visitor.visit_unit()
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested values are read through [`Strict`], at the place of the value.
struct Wrap<V>(V, Option<Track>);

macro_rules! forward {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Strict(d, self.1))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Strict(d, self.1))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Items {
            seq,
            track: self.1.and_then(Track::items),
            n: 0,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let track = self.1.and_then(Track::object);
        let seen = track.as_ref().map(|t| schema::Seen::of(t.ty()));
        self.0.visit_map(Fields {
            map,
            track,
            seen,
            value: None,
        })
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        // The kinds read here have no enums; a variant's content is left as the reader reads it.
        self.0.visit_enum(data)
    }
}

/// A seed whose value is read through [`Strict`], at `.1`.
struct Seed<S>(S, Option<Track>);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict(d, self.1))
    }
}

/// A list's items, read through [`Strict`]; `track`: the list's place, when known.
struct Items<A> {
    seq: A,
    track: Option<Track>,
    n: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Items<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let item = self.track.as_ref().map(|t| t.item(self.n));
        self.n += 1;
        self.seq.next_element_seed(Seed(seed, item))
    }
    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A mapping's entries, read through [`Strict`]; `track`: the object's place, when known, and
/// `seen` its required fields written so far; `value`: the place of the value to read next.
struct Fields<A> {
    map: A,
    track: Option<Track>,
    seen: Option<schema::Seen>,
    value: Option<Track>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Fields<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        // Keys as the reader gives them: kubectl makes a YAML key `1` the JSON key "1".
        let Some(track) = &self.track else {
            return self.map.next_key_seed(seed);
        };
        let mut key = None;
        let out = self.map.next_key_seed(KeySeed(seed, &mut key))?;
        match (&out, key) {
            (None, _) => {
                if let Some(seen) = self.seen.take() {
                    seen.note_missing(|| track.path().to_string());
                }
            }
            (Some(_), Some(key)) => {
                if let Some(seen) = &mut self.seen {
                    seen.saw(&key);
                }
                self.value = track.field(&key);
            }
            (Some(_), None) => self.value = None,
        }
        Ok(out)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(Seed(seed, self.value.take()))
    }
    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A key's seed that keeps the key's text (as kubectl makes it: a YAML key `1` is "1").
struct KeySeed<'k, S>(S, &'k mut Option<String>);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Key(d, self.1))
    }
}

/// A key's deserializer whose visitor keeps the key's text.
struct Key<'k, D>(D, &'k mut Option<String>);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Key<'_, D> {
    type Error = D::Error;
    forward_wrapped! {
        KeyText;
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }
    forward_wrapped_compound!(KeyText);
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A key's visitor that keeps the key's text.
struct KeyText<'k, V>(V, &'k mut Option<String>);

macro_rules! key_text {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<V::Value, E> {
            *self.1 = Some(v.to_string());
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyText<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    key_text! {
        visit_bool(bool) visit_i64(i64) visit_u64(u64) visit_f64(f64) visit_str(&str)
        visit_borrowed_str(&'de str)
    }
    forward! {
        visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i128(i128) visit_u8(u8) visit_u16(u16)
        visit_u32(u32) visit_u128(u128) visit_f32(f32) visit_char(char) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<V::Value, E> {
        *self.1 = Some(v.clone());
        self.0.visit_string(v)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(map)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(data)
    }
}
