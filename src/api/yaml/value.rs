//! A YAML or JSON value as written: mappings keep their key order, so an object passed through
//! `convert` unchanged reads as the user wrote it.
//!
//! Loading does not go through values (documents stream straight into typed objects); values
//! hold the keys a document writes before its `apiVersion` and `kind`, and the documents
//! `convert` passes through or compares with what it understood.

use std::fmt;

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::path::{render, Step};

/// A value; mapping keys are text (YAML allows other scalars as keys, Kubernetes does not).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`, `~` or nothing.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A whole number above `i64::MAX`.
    UInt(u64),
    /// Any other number.
    Float(f64),
    /// Text.
    String(String),
    /// A sequence.
    Sequence(Vec<Value>),
    /// A mapping, in the order written.
    Mapping(Vec<(String, Value)>),
}

impl Value {
    /// The value under `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Mapping(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The `i`-th item of a sequence.
    pub fn item(&self, i: usize) -> Option<&Value> {
        match self {
            Value::Sequence(items) => items.get(i),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a sequence.
    pub fn as_sequence(&self) -> Option<&[Value]> {
        match self {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// How a message names what was found: `a mapping`, `a string`, ….
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "nothing",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::UInt(_) | Value::Float(_) => "a number",
            Value::String(_) => "a string",
            Value::Sequence(_) => "a list",
            Value::Mapping(_) => "a mapping",
        }
    }

    /// A scalar as text (what YAML gives a plain scalar read where text is expected).
    fn scalar_text(&self) -> Option<String> {
        match self {
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(n) => Some(n.to_string()),
            Value::UInt(n) => Some(n.to_string()),
            Value::Float(f) => Some(format!("{f:?}")),
            Value::String(s) => Some(s.clone()),
            Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::UInt(v), Value::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Sequence(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            entries.push((k, map.next_value()?));
        }
        Ok(Value::Mapping(entries))
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(n) => s.serialize_i64(*n),
            Value::UInt(n) => s.serialize_u64(*n),
            Value::Float(f) => s.serialize_f64(*f),
            Value::String(t) => s.serialize_str(t),
            Value::Sequence(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Mapping(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Why a [`Value`] could not be read into a typed object, and where in the value.
#[derive(Debug)]
pub struct ValueError {
    /// From the value's root, outermost step first.
    path: Vec<Step>,
    message: String,
}

impl ValueError {
    /// The field path (`spec.replicas`), as messages write it.
    pub fn path(&self) -> String {
        render(&self.path)
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, one step deeper (under `step`).
    pub(crate) fn under(mut self, step: Step) -> Self {
        self.path.insert(0, step);
        self
    }
}

impl de::Error for ValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ValueError {
            path: Vec::new(),
            message: msg.to_string(),
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.is_empty() {
            true => f.write_str(&self.message),
            false => write!(f, "{}: {}", self.path(), self.message),
        }
    }
}

impl std::error::Error for ValueError {}

/// Reads a value into a typed object the way a YAML parser reads its text: a scalar is taken
/// as text where text is expected (`version: 3` as a label).
pub struct ValueDeserializer {
    value: Value,
}

impl<'de> IntoDeserializer<'de, ValueError> for Value {
    type Deserializer = ValueDeserializer;
    fn into_deserializer(self) -> ValueDeserializer {
        ValueDeserializer { value: self }
    }
}

impl<'de> Deserializer<'de> for ValueDeserializer {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(n) => visitor.visit_i64(n),
            Value::UInt(n) => visitor.visit_u64(n),
            Value::Float(f) => visitor.visit_f64(f),
            Value::String(s) => visitor.visit_string(s),
            Value::Sequence(items) => visitor.visit_seq(Items {
                items: items.into_iter().enumerate(),
            }),
            Value::Mapping(entries) => visitor.visit_map(Entries {
                entries: entries.into_iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.value.scalar_text() {
            Some(text) => visitor.visit_string(text),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// A sequence's items, errors marked with the item's index.
struct Items {
    items: std::iter::Enumerate<std::vec::IntoIter<Value>>,
}

impl<'de> SeqAccess<'de> for Items {
    type Error = ValueError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ValueError> {
        match self.items.next() {
            Some((i, v)) => seed
                .deserialize(v.into_deserializer())
                .map(Some)
                .map_err(|e| e.under(Step::Index(i))),
            None => Ok(None),
        }
    }
}

/// A mapping's entries, errors marked with the key.
struct Entries {
    entries: std::vec::IntoIter<(String, Value)>,
    value: Option<(String, Value)>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = ValueError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ValueError> {
        match self.entries.next() {
            Some((k, v)) => {
                let key = seed.deserialize(StringDeserializer::<ValueError>::new(k.clone()))?;
                self.value = Some((k, v));
                Ok(Some(key))
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ValueError> {
        let (k, v) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(v.into_deserializer())
            .map_err(|e| e.under(Step::Key(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn values_keep_their_order_and_read_scalars_as_text_where_text_is_expected() {
        let v: Value = serde_saphyr::from_str("b: 1\na: [x, 2.5, true, ~]\n").unwrap();
        let Value::Mapping(entries) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(entries[0].0, "b");
        assert_eq!(v.get("a").and_then(|a| a.item(1)), Some(&Value::Float(2.5)));
        let labels: BTreeMap<String, String> = BTreeMap::deserialize(
            Value::Mapping(vec![("v".into(), Value::Int(3))]).into_deserializer(),
        )
        .map_err(|e: ValueError| e.to_string())
        .unwrap();
        assert_eq!(labels["v"], "3");
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"b":1,"a":["x",2.5,true,null]}"#
        );
    }
}
