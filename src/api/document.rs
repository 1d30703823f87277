//! One document as it is read: `apiVersion` and `kind` are peeked as the document streams by,
//! and the rest of it goes straight into the serde type of that kind, without an intermediate
//! tree. Documents of kinds the tool does not read are skipped (only their name is kept, for
//! messages); a List's items are read the same way, one by one.
//!
//! `apiVersion` and `kind` come first in practically every manifest (kubectl, Helm and
//! Kustomize all write them first). Keys written before them are held as [`Value`]s and
//! replayed into the typed object once the kind is known, so key order never matters.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, StringDeserializer};
use serde::de::{
    self, DeserializeSeed, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Deserializer};

use super::kinds::{classify, Class, Kind};
use super::objects::ApiObject;
use super::scalars::Strict;
use super::schema::{self, UnknownField};
use super::yaml::{Step, Value, ValueError};

/// A document (or a List's item) after reading.
#[derive(Debug)]
pub(crate) enum Doc {
    /// A mapping with a string `apiVersion` and `kind`.
    Object {
        /// As written.
        api_version: String,
        /// As written.
        kind: String,
        /// What was read of the rest.
        body: Body,
    },
    /// A mapping without a string `apiVersion` or `kind` (whether each was there).
    Headless {
        /// Whether `apiVersion` was a non-empty string.
        api_version: bool,
        /// Whether `kind` was a non-empty string.
        kind: bool,
    },
    /// Not a mapping: `a list`, `a string`, … (`nothing` for a null List item).
    NotAMapping(&'static str),
    /// A null document (a JSON `null`); skipped at the top level.
    Null,
}

/// The part of an object read after its `apiVersion` and `kind`.
#[derive(Debug)]
pub(crate) enum Body {
    /// A kind the tool reads, typed; the fields it had that the API server does not know, and
    /// the paths of the required fields it lacked (Karpenter kinds).
    Typed(ApiObject, Vec<UnknownField>, Vec<String>),
    /// A List's items; `Err` names what `items` held instead of a list.
    List(Result<Vec<Doc>, &'static str>),
    /// A kind the tool reads whose keys written before `apiVersion` and `kind` do not fit its
    /// type: the field and the problem.
    Invalid {
        /// `metadata.name`, when a string.
        name: Option<String>,
        /// `metadata.namespace`, when a string.
        namespace: Option<String>,
        /// The field path.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Any other kind, read no further than the name and namespace (for messages).
    Skipped {
        /// `metadata.name`, when a string.
        name: Option<String>,
        /// `metadata.namespace`, when a string.
        namespace: Option<String>,
    },
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Doc, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
        Ok(Doc::NotAMapping("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
        Ok(Doc::NotAMapping("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
        Ok(Doc::NotAMapping("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
        Ok(Doc::NotAMapping("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
        Ok(Doc::NotAMapping("a string"))
    }
    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }
    fn visit_none<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Doc, D::Error> {
        Doc::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Doc::NotAMapping("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Doc, A::Error> {
        read_mapping(map)
    }
}

/// Reads keys until `apiVersion` and `kind` are known, then the rest as that kind.
fn read_mapping<'de, A: MapAccess<'de>>(mut map: A) -> Result<Doc, A::Error> {
    let mut api_version = Text::default();
    let mut kind = Text::default();
    let mut early: Vec<(String, Value)> = Vec::new();
    loop {
        if let (Some(a), Some(k)) = (api_version.string(), kind.string()) {
            let (a, k) = (a.to_string(), k.to_string());
            let body = read_body(&a, &k, early, map)?;
            return Ok(Doc::Object {
                api_version: a,
                kind: k,
                body,
            });
        }
        let Some(key) = map.next_key::<String>()? else {
            return Ok(Doc::Headless {
                api_version: api_version.string().is_some(),
                kind: kind.string().is_some(),
            });
        };
        match key.as_str() {
            "apiVersion" => api_version = map.next_value()?,
            "kind" => kind = map.next_value()?,
            _ => {
                let value = map.next_value()?;
                early.push((key, value));
            }
        }
    }
}

fn read_body<'de, A: MapAccess<'de>>(
    api_version: &str,
    kind: &str,
    early: Vec<(String, Value)>,
    map: A,
) -> Result<Body, A::Error> {
    match classify(api_version, kind) {
        Class::Known(k) => {
            let mut prefix = vec![
                ("apiVersion".to_string(), Value::String(api_version.into())),
                ("kind".to_string(), Value::String(kind.into())),
            ];
            let early_metadata = early
                .iter()
                .find(|(k, _)| k == "metadata")
                .map(|(_, v)| v.clone());
            prefix.extend(early);
            let mut replay = Replay {
                prefix: prefix.into_iter(),
                value: None,
                failed: None,
                map,
            };
            let root = match schema::validation() {
                schema::Validation::Ignore => None,
                _ => schema::root(api_version, kind),
            };
            // Required fields are the API server's on create, whatever `--validate` says.
            let track = schema::Track::root(api_version, kind);
            schema::take_found();
            schema::take_missing();
            let read = match root {
                Some(root) => {
                    let mut note = |path: serde_ignored::Path<'_>| {
                        schema::note(root, kind, &schema::steps(&path));
                    };
                    let d = MapAccessDeserializer::new(&mut replay);
                    typed(
                        k,
                        Strict(serde_ignored::Deserializer::new(d, &mut note), track),
                    )
                }
                None => typed(k, Strict(MapAccessDeserializer::new(&mut replay), track)),
            };
            let unknown = schema::take_found();
            let missing = schema::take_missing();
            match read {
                Ok(object) => Ok(Body::Typed(object, unknown, missing)),
                Err(e) => match replay.failed.take() {
                    // A replayed value failed: the stream is intact (the parser is still where
                    // the replay left it), so the error is the document's, with its path.
                    Some(error) => {
                        let rest = rest_of(&mut replay, "metadata")?;
                        Ok(invalid(early_metadata.unwrap_or(rest), error))
                    }
                    None => Err(e),
                },
            }
        }
        Class::List => {
            let mut items = Ok(Vec::new());
            let mut failed = None;
            for (key, value) in early {
                if key == "items" {
                    match Items::deserialize(value.into_deserializer()) {
                        Ok(i) => items = i.0,
                        Err(e) => failed = Some(e.under(Step::Key(key))),
                    }
                }
            }
            let mut map = map;
            while let Some(key) = map.next_key::<String>()? {
                if key == "items" {
                    items = map.next_value::<Items>()?.0;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(match failed {
                Some(error) => invalid(Value::Null, error),
                None => Body::List(items),
            })
        }
        Class::Ignored | Class::UnknownVersion(_) | Class::Unsupported(_) => {
            let mut metadata = Value::Null;
            for (key, value) in early {
                if key == "metadata" {
                    metadata = value;
                }
            }
            let mut map = map;
            if let Value::Null = metadata {
                metadata = rest_of(&mut map, "metadata")?;
            } else {
                rest_of(&mut map, "")?;
            }
            let (name, namespace) = name_of(&metadata);
            Ok(Body::Skipped { name, namespace })
        }
    }
}

/// Reads the rest of a mapping, keeping the value of `key`.
fn rest_of<'de, A: MapAccess<'de>>(map: &mut A, key: &str) -> Result<Value, A::Error> {
    let mut kept = Value::Null;
    while let Some(k) = map.next_key::<String>()? {
        if k == key {
            kept = map.next_value()?;
        } else {
            map.next_value::<IgnoredAny>()?;
        }
    }
    Ok(kept)
}

/// `metadata.name` and `metadata.namespace`, when strings.
fn name_of(metadata: &Value) -> (Option<String>, Option<String>) {
    let text = |key: &str| {
        metadata
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    (text("name"), text("namespace"))
}

/// The body of a document whose early value failed to read; `metadata` as read (from the
/// early keys or the rest of the document).
fn invalid(metadata: Value, error: ValueError) -> Body {
    let (name, namespace) = name_of(&metadata);
    Body::Invalid {
        name,
        namespace,
        field: error.path(),
        message: error.message().to_string(),
    }
}

/// Deserialises the serde type of `kind`.
fn typed<'de, D: Deserializer<'de>>(kind: Kind, d: D) -> Result<ApiObject, D::Error> {
    Ok(match kind {
        Kind::Provisioner => ApiObject::Provisioner(Deserialize::deserialize(d)?),
        Kind::Machine => ApiObject::Machine(Deserialize::deserialize(d)?),
        Kind::AwsNodeTemplate => ApiObject::AwsNodeTemplate(Deserialize::deserialize(d)?),
        Kind::NodePoolV1Beta1 => ApiObject::NodePoolV1Beta1(Deserialize::deserialize(d)?),
        Kind::NodeClaimV1Beta1 => ApiObject::NodeClaimV1Beta1(Deserialize::deserialize(d)?),
        Kind::Ec2NodeClassV1Beta1 => ApiObject::Ec2NodeClassV1Beta1(Deserialize::deserialize(d)?),
        Kind::NodePoolV1 => ApiObject::NodePoolV1(Deserialize::deserialize(d)?),
        Kind::NodeClaimV1 => ApiObject::NodeClaimV1(Deserialize::deserialize(d)?),
        Kind::Ec2NodeClassV1 => ApiObject::Ec2NodeClassV1(Deserialize::deserialize(d)?),
        Kind::NodeOverlay => ApiObject::NodeOverlay(Deserialize::deserialize(d)?),
        Kind::Pod => ApiObject::Pod(Deserialize::deserialize(d)?),
        Kind::Workload => ApiObject::Workload(Deserialize::deserialize(d)?),
        Kind::Node => ApiObject::Node(Deserialize::deserialize(d)?),
        Kind::Pdb => ApiObject::PodDisruptionBudget(Deserialize::deserialize(d)?),
        Kind::Namespace => ApiObject::Namespace(Deserialize::deserialize(d)?),
        Kind::RuntimeClass => ApiObject::RuntimeClass(Deserialize::deserialize(d)?),
        Kind::LimitRange => ApiObject::LimitRange(Deserialize::deserialize(d)?),
        Kind::PriorityClass => ApiObject::PriorityClass(Deserialize::deserialize(d)?),
        Kind::StorageClass => ApiObject::StorageClass(Deserialize::deserialize(d)?),
        Kind::PersistentVolumeClaim => {
            ApiObject::PersistentVolumeClaim(Deserialize::deserialize(d)?)
        }
        Kind::PersistentVolume => ApiObject::PersistentVolume(Deserialize::deserialize(d)?),
        Kind::CsiNode => ApiObject::CsiNode(Deserialize::deserialize(d)?),
        Kind::PodTemplate => ApiObject::PodTemplate(Deserialize::deserialize(d)?),
        Kind::CapacityBuffer => ApiObject::CapacityBuffer(Deserialize::deserialize(d)?),
    })
}

/// The entries already read (`apiVersion`, `kind`, and any keys written before them), then the
/// rest of the mapping as it streams. A replayed value that fails to read is kept in `failed`.
struct Replay<A> {
    prefix: std::vec::IntoIter<(String, Value)>,
    /// The entry whose key was just given out, when it comes from `prefix`.
    value: Option<(String, Value)>,
    failed: Option<ValueError>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.prefix.next() {
            Some((key, value)) => {
                let k = seed.deserialize(StringDeserializer::new(key.clone()))?;
                self.value = Some((key, value));
                Ok(Some(k))
            }
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.value.take() {
            Some((key, value)) => seed.deserialize(value.into_deserializer()).map_err(|e| {
                self.failed = Some(e.under(Step::Key(key)));
                de::Error::custom("a value written before apiVersion and kind")
            }),
            None => self.map.next_value_seed(seed),
        }
    }
}

/// `apiVersion` or `kind`: text when it is a string, `None` when absent or anything else (a
/// number where a kind is expected is no kind).
#[derive(Default)]
struct Text(Option<String>);

impl Text {
    fn string(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.is_empty())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                Ok(Text(Some(v.to_string())))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_unit<E>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A List's `items`: the documents, or what was there instead of a list.
struct Items(Result<Vec<Doc>, &'static str>);

impl<'de> Deserialize<'de> for Items {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Items, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Items;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of objects")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
                let mut docs = Vec::new();
                while let Some(doc) = seq.next_element::<Doc>()? {
                    docs.push(doc);
                }
                Ok(Items(Ok(docs)))
            }
            fn visit_unit<E>(self) -> Result<Items, E> {
                Ok(Items(Ok(Vec::new())))
            }
            fn visit_none<E>(self) -> Result<Items, E> {
                Ok(Items(Ok(Vec::new())))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Items, D::Error> {
                Items::deserialize(d)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Items, E> {
                Ok(Items(Err("a boolean")))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Items, E> {
                Ok(Items(Err("a number")))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Items, E> {
                Ok(Items(Err("a number")))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Items, E> {
                Ok(Items(Err("a number")))
            }
            fn visit_str<E>(self, _: &str) -> Result<Items, E> {
                Ok(Items(Err("a string")))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Items(Err("a mapping")))
            }
        }
        d.deserialize_any(V)
    }
}
