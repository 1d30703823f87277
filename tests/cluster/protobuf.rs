//! Request bodies in `application/vnd.kubernetes.protobuf`, which kubectl's typed clients send
//! (`kubectl create configmap|secret|namespace|serviceaccount`, `kubectl auth can-i`). Decoded
//! into JSON with field tables from `k8s.io/api/{core,authorization}/v1/generated.proto` for
//! those kinds only; anything else gets a 415 naming the limitation.

use serde_json::{json, Map, Value};

#[derive(Clone, Copy)]
enum F {
    Str,
    Bytes,
    Int,
    Bool,
    Time,
    MapStr,
    MapBytes,
    RepStr,
    Msg(&'static [(u32, &'static str, F)]),
    RepMsg(&'static [(u32, &'static str, F)]),
}

const OWNER_REF: &[(u32, &str, F)] = &[
    (1, "kind", F::Str),
    (3, "name", F::Str),
    (4, "uid", F::Str),
    (5, "apiVersion", F::Str),
    (6, "controller", F::Bool),
    (7, "blockOwnerDeletion", F::Bool),
];

const OBJECT_META: &[(u32, &str, F)] = &[
    (1, "name", F::Str),
    (2, "generateName", F::Str),
    (3, "namespace", F::Str),
    (5, "uid", F::Str),
    (6, "resourceVersion", F::Str),
    (7, "generation", F::Int),
    (8, "creationTimestamp", F::Time),
    (11, "labels", F::MapStr),
    (12, "annotations", F::MapStr),
    (13, "ownerReferences", F::RepMsg(OWNER_REF)),
    (14, "finalizers", F::RepStr),
];

const CONFIG_MAP: &[(u32, &str, F)] = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "data", F::MapStr),
    (3, "binaryData", F::MapBytes),
    (4, "immutable", F::Bool),
];

const SECRET: &[(u32, &str, F)] = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "data", F::MapBytes),
    (3, "type", F::Str),
    (4, "stringData", F::MapStr),
    (5, "immutable", F::Bool),
];

const NAMESPACE_SPEC: &[(u32, &str, F)] = &[(1, "finalizers", F::RepStr)];

const NAMESPACE: &[(u32, &str, F)] = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "spec", F::Msg(NAMESPACE_SPEC)),
];

const LOCAL_REF: &[(u32, &str, F)] = &[(1, "name", F::Str)];

const SERVICE_ACCOUNT: &[(u32, &str, F)] = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (3, "imagePullSecrets", F::RepMsg(LOCAL_REF)),
    (4, "automountServiceAccountToken", F::Bool),
];

/// `k8s.io/api/authorization/v1/generated.proto` (`kubectl auth can-i`).
const RESOURCE_ATTRIBUTES: &[(u32, &str, F)] = &[
    (1, "namespace", F::Str),
    (2, "verb", F::Str),
    (3, "group", F::Str),
    (4, "version", F::Str),
    (5, "resource", F::Str),
    (6, "subresource", F::Str),
    (7, "name", F::Str),
];

const NON_RESOURCE_ATTRIBUTES: &[(u32, &str, F)] = &[(1, "path", F::Str), (2, "verb", F::Str)];

const SELF_SUBJECT_ACCESS_REVIEW_SPEC: &[(u32, &str, F)] = &[
    (1, "resourceAttributes", F::Msg(RESOURCE_ATTRIBUTES)),
    (2, "nonResourceAttributes", F::Msg(NON_RESOURCE_ATTRIBUTES)),
];

const SELF_SUBJECT_ACCESS_REVIEW: &[(u32, &str, F)] = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "spec", F::Msg(SELF_SUBJECT_ACCESS_REVIEW_SPEC)),
];

const TYPE_META: &[(u32, &str, F)] = &[(1, "apiVersion", F::Str), (2, "kind", F::Str)];

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.i).ok_or("truncated varint")?;
            self.i += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    fn bytes(&mut self) -> Result<&[u8], String> {
        let n = self.varint()? as usize;
        let end = self
            .i
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or("truncated field")?;
        let s = &self.b[self.i..end];
        self.i = end;
        Ok(s)
    }

    fn skip(&mut self, wire: u64) -> Result<(), String> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => {
                self.i += 8;
                Ok(())
            }
            2 => self.bytes().map(|_| ()),
            5 => {
                self.i += 4;
                Ok(())
            }
            w => Err(format!("unsupported wire type {w}")),
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn map_entry(b: &[u8], bytes_value: bool) -> Result<(String, Value), String> {
    let mut r = Reader { b, i: 0 };
    let (mut k, mut v) = (String::new(), Value::String(String::new()));
    while r.i < b.len() {
        let tag = r.varint()?;
        match (tag >> 3, tag & 7) {
            (1, 2) => k = text(r.bytes()?),
            (2, 2) => {
                let raw = r.bytes()?;
                v = Value::String(if bytes_value {
                    super::util::base64_encode(raw)
                } else {
                    text(raw)
                });
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok((k, v))
}

fn decode(b: &[u8], schema: &[(u32, &str, F)]) -> Result<Value, String> {
    let mut out = Map::new();
    let mut r = Reader { b, i: 0 };
    while r.i < b.len() {
        let tag = r.varint()?;
        let (num, wire) = ((tag >> 3) as u32, tag & 7);
        let Some((_, name, f)) = schema.iter().find(|(n, _, _)| *n == num) else {
            r.skip(wire)?;
            continue;
        };
        let name = name.to_string();
        match *f {
            F::Str => {
                let s = text(r.bytes()?);
                out.insert(name, json!(s));
            }
            F::Bytes => {
                let s = super::util::base64_encode(r.bytes()?);
                out.insert(name, json!(s));
            }
            F::Int => {
                let v = r.varint()? as i64;
                out.insert(name, json!(v));
            }
            F::Bool => {
                let v = r.varint()? != 0;
                out.insert(name, json!(v));
            }
            F::Time => {
                let t = decode(r.bytes()?, &[(1, "seconds", F::Int)])?;
                let secs = t.get("seconds").and_then(Value::as_i64).unwrap_or(0);
                out.insert(name, json!(super::util::rfc3339(secs)));
            }
            F::MapStr | F::MapBytes => {
                let (k, v) = map_entry(r.bytes()?, matches!(f, F::MapBytes))?;
                let m = out.entry(name).or_insert_with(|| json!({}));
                m[k] = v;
            }
            F::RepStr => {
                let s = text(r.bytes()?);
                let a = out.entry(name).or_insert_with(|| json!([]));
                a.as_array_mut().unwrap().push(json!(s));
            }
            F::Msg(s) => {
                let v = decode(r.bytes()?, s)?;
                out.insert(name, v);
            }
            F::RepMsg(s) => {
                let v = decode(r.bytes()?, s)?;
                let a = out.entry(name).or_insert_with(|| json!([]));
                a.as_array_mut().unwrap().push(v);
            }
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a `k8s\0`-prefixed `runtime.Unknown` envelope into a JSON object.
pub fn decode_object(body: &[u8]) -> Result<Value, String> {
    let rest = body
        .strip_prefix(b"k8s\x00")
        .ok_or("missing the protobuf magic number")?;
    let env = decode(
        rest,
        &[(1, "typeMeta", F::Msg(TYPE_META)), (2, "raw", F::Bytes)],
    )?;
    let av = env
        .pointer("/typeMeta/apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = env
        .pointer("/typeMeta/kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let raw = env
        .get("raw")
        .and_then(Value::as_str)
        .and_then(super::util::base64_decode)
        .unwrap_or_default();
    let schema = match (av.as_str(), kind.as_str()) {
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => SELF_SUBJECT_ACCESS_REVIEW,
        _ => {
            return Err(format!(
                "the test cluster decodes protobuf only for v1 ConfigMap, Secret, Namespace and ServiceAccount and SelfSubjectAccessReview, not {av} {kind}; send JSON"
            ))
        }
    };
    let mut v = decode(&raw, schema)?;
    v["apiVersion"] = json!(av);
    v["kind"] = json!(kind);
    Ok(v)
}
