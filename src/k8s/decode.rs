//! Decoding the API server's answers: straight into the caller's slim types (the fast path,
//! docs/performance.md B4), and only when that fails, once more the way a Go client reads
//! JSON — a `null` field is as good as an absent one (`encoding/json` leaves the field at its
//! zero value; kubectl and Karpenter read such answers) — and, if the answer still does not
//! fit, an error naming the LIST item (namespace/name) and the field that does not.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ClusterError;

fn error(path: &str, message: String) -> ClusterError {
    ClusterError::Decode {
        path: path.split('?').next().unwrap_or(path).to_string(),
        message,
    }
}

/// One answer (an object, a discovery document) as `T`.
pub(super) fn decode<T: DeserializeOwned>(path: &str, body: &[u8]) -> Result<T, ClusterError> {
    serde_json::from_slice(body).or_else(|first| {
        let Some(text) = without_nulls(body) else {
            return Err(error(path, located(&first, body)));
        };
        serde_json::from_str(&text).map_err(|e| error(path, located(&e, text.as_bytes())))
    })
}

/// One LIST page as `P`; when it does not decode, the first of its `items` that is no `T`
/// is named in the error.
pub(super) fn decode_list<P: DeserializeOwned, T: DeserializeOwned>(
    path: &str,
    body: &[u8],
) -> Result<P, ClusterError> {
    serde_json::from_slice(body).or_else(|first| {
        let stripped = without_nulls(body);
        if let Some(Ok(page)) = stripped.as_deref().map(serde_json::from_str) {
            return Ok(page);
        }
        let text = stripped.as_deref().map_or(body, str::as_bytes);
        let value: Value = serde_json::from_slice(text).unwrap_or(Value::Null);
        let items = value.get("items").and_then(Value::as_array);
        for (i, item) in items.into_iter().flatten().enumerate() {
            let one = item.to_string();
            if let Err(e) = serde_json::from_str::<T>(&one) {
                let at = located(&e, one.as_bytes());
                return Err(error(path, format!("item {i} ({}): {at}", name(item))));
            }
        }
        Err(error(path, located(&first, body)))
    })
}

/// The body again with every `null` member of an object left out, or `None` when it is not
/// JSON or has none (then the first error stands).
fn without_nulls(body: &[u8]) -> Option<String> {
    fn strip(v: &mut Value) -> bool {
        match v {
            Value::Object(o) => {
                let before = o.len();
                o.retain(|_, v| !v.is_null());
                let mut changed = o.len() != before;
                for v in o.values_mut() {
                    changed |= strip(v);
                }
                changed
            }
            Value::Array(a) => {
                // Every element, not only up to the first changed one.
                let mut changed = false;
                for v in a.iter_mut() {
                    changed |= strip(v);
                }
                changed
            }
            _ => false,
        }
    }
    let mut value: Value = serde_json::from_slice(body).ok()?;
    strip(&mut value).then(|| value.to_string())
}

/// `namespace/name` of an item, as far as it says.
fn name(item: &Value) -> String {
    let meta = &item["metadata"];
    match (meta["namespace"].as_str(), meta["name"].as_str()) {
        (Some(ns), Some(name)) => format!("{ns}/{name}"),
        (None, Some(name)) => name.to_string(),
        _ => "without a name".into(),
    }
}

/// serde's message with the field it was at (`status.allocatable.cpu`) in place of the line
/// and column.
fn located(e: &serde_json::Error, text: &[u8]) -> String {
    let message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let Some(bare) = message.strip_suffix(&position) else {
        return message;
    };
    let line_start: usize = text
        .split(|b| *b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    match field_at(text, line_start + e.column()) {
        field if field.is_empty() => message,
        field => format!("{bare} at {field}"),
    }
}

/// The field being read at byte `offset` of a JSON text: `spec.taints[0].effect`.
fn field_at(text: &[u8], offset: usize) -> String {
    enum Frame {
        Object { key: Option<String>, key_next: bool },
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let end = offset.min(text.len());
    while i < end {
        match text[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, key_next }) = stack.last_mut() {
                    if *key_next {
                        let raw = text.get(start..=i).unwrap_or_default();
                        *key = serde_json::from_slice(raw).ok();
                        *key_next = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                key_next: true,
            }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object { key_next, .. }) => *key_next = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut out = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(k), .. } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&k.chars().take(60).collect::<String>());
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    struct Page {
        #[serde(default)]
        items: Vec<Node>,
    }

    #[derive(Deserialize, Debug, PartialEq, Default)]
    struct Node {
        #[serde(default)]
        spec: Spec,
    }

    #[derive(Deserialize, Debug, PartialEq, Default)]
    struct Spec {
        #[serde(default)]
        taints: Vec<Taint>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Taint {
        effect: String,
    }

    /// Found by the live fuzzer (docs/upstream-tests.md "The cluster's answers fuzzed"): a
    /// `null` where a list or an object is expected failed the whole read ("invalid type: null,
    /// expected a sequence"), where Go clients read it as absent.
    #[test]
    fn a_null_field_reads_as_an_absent_one() {
        let body =
            br#"{"items":[{"spec":{"taints":null}},{"spec":null,"status":null}],"metadata":null}"#;
        let page: Page = decode_list::<Page, Node>("/api/v1/nodes?limit=500", body).unwrap();
        assert_eq!(page.items, [Node::default(), Node::default()]);
        let node: Node = decode("/api/v1/nodes/a", br#"{"spec":{"taints":null}}"#).unwrap();
        assert_eq!(node, Node::default());
    }

    /// Found by the live fuzzer: a LIST item of the wrong shape was reported by the resource
    /// path and a column of the page only; the error names the item and the field.
    #[test]
    fn an_item_that_does_not_fit_is_named_with_its_field() {
        let body = br#"{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"spec":{"taints":[{"effect":"NoSchedule"},{"effect":{"x":1}}]}}]}"#;
        let e = decode_list::<Page, Node>("/api/v1/nodes?limit=500", body).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected answer from /api/v1/nodes: item 1 (b): invalid type: map, expected a string at spec.taints[1].effect"
        );
        let e = decode::<Node>(
            "/api/v1/nodes/b",
            br#"{"spec": {"taints": [{"effect": 7}]}}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected answer from /api/v1/nodes/b: invalid type: integer `7`, expected a string at spec.taints[0].effect"
        );
        let e = decode::<Node>("/api/v1/nodes/b", b"<html>").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected answer from /api/v1/nodes/b: expected value at line 1 column 1"
        );
    }
}
