//! Text in and out: YAML (and JSON, which is read as YAML so both behave the same) streamed
//! document by document into typed values with `serde-saphyr`, one-line errors naming the file,
//! the document, the object and the field, and YAML output.
//!
//! Limits: a document may nest at most [`MAX_DEPTH`] levels (deep nesting is refused at once,
//! with a one-line error, instead of costing time); aliases are expanded within
//! `serde-saphyr`'s default alias limits (a guard against alias bombs). Merge keys (`<<:
//! *anchor`) are applied, as kubectl applies them.

mod diagnose;
mod path;
mod value;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Serialize;

pub(crate) use path::Step;
pub use value::{Value, ValueError};

use super::error::{InputError, Location};

/// The deepest nesting of mappings and sequences a document may have. Real manifests stay
/// under 20 (a Deployment's pod affinity terms are about 12 deep); reading recurses once per
/// level, and 64 levels fit a 2 MiB thread stack even in a debug build.
pub const MAX_DEPTH: usize = 64;

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            max_documents: usize::MAX,
            max_events: usize::MAX,
            max_nodes: usize::MAX,
            max_total_scalar_bytes: usize::MAX,
            max_reader_input_bytes: None,
        },
        with_snippet: false,
    }
}

/// Reads every non-empty document of `text` (YAML, or one or more concatenated JSON values)
/// into a `T`. `path` names the source in errors.
pub(crate) fn documents<T: DeserializeOwned>(path: &str, text: &str) -> Result<Vec<T>, InputError> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return yaml_documents(path, text, 0);
    }
    // JSON: serde_json finds where each value ends (and reports JSON syntax errors as such);
    // each value is then read as YAML, so a number where text is expected reads as text, as
    // it does in YAML.
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let mut start = 0;
    let mut out = Vec::new();
    loop {
        match values.next() {
            None => return Ok(out),
            Some(Ok(_)) => {
                let end = values.byte_offset();
                let line_offset = text[..start].matches('\n').count();
                out.extend(yaml_documents(path, &text[start..end], line_offset)?);
                start = end;
            }
            Some(Err(json)) => {
                // Not JSON after all: a YAML flow mapping (`{a: 1}`) starts the same way.
                if !path.to_ascii_lowercase().ends_with(".json") {
                    if let Ok(docs) = yaml_documents(path, text, 0) {
                        return Ok(docs);
                    }
                }
                let message = json.to_string();
                let message = match message.rfind(" at line ") {
                    Some(i) => message[..i].to_string(),
                    None => message,
                };
                return Err(InputError::Syntax {
                    path: path.to_string(),
                    format: "JSON",
                    line: Some(json.line()),
                    column: Some(json.column()),
                    message,
                });
            }
        }
    }
}

/// `text` holds YAML documents whose first line is line `line_offset + 1` of the source.
fn yaml_documents<T: DeserializeOwned>(
    path: &str,
    text: &str,
    line_offset: usize,
) -> Result<Vec<T>, InputError> {
    serde_saphyr::from_multiple_with_options(text, options())
        .map_err(|e| diagnose::error(path, text, line_offset, &e))
}

/// Renders YAML as this tool prints it: block style, two-space indentation, strings quoted
/// with double quotes only where YAML 1.1 or 1.2 would read them as something else, long
/// strings kept on one line, multi-line strings as literal blocks.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string_with_options(
        value,
        serde_saphyr::ser_options! {
            folded_wrap_chars: usize::MAX,
        },
    )
}

/// A serialisable value as a [`Value`], its fields in their declared order (through its YAML,
/// which keeps the order). `Null` if it cannot be rendered.
pub(crate) fn to_value<T: Serialize>(value: &T) -> Value {
    to_string(value)
        .ok()
        .and_then(|text| serde_saphyr::from_str(&text).ok())
        .unwrap_or_default()
}

/// Where an object of a source sits, for errors raised while reading it.
fn location(path: &str, document: usize, count: usize, item: Option<usize>) -> Location {
    Location {
        source: path.to_string(),
        document: (count > 1).then(|| u32::try_from(document + 1).unwrap_or(u32::MAX)),
        item: item.map(|i| u32::try_from(i).unwrap_or(u32::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_skip_empty_ones_and_stop_at_the_first_error() {
        let docs: Vec<Value> =
            documents("a.yaml", "# comment only\n---\na: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
        let e = documents::<Value>("a.yaml", "a: 1\n---\nb: [1,\n").unwrap_err();
        assert!(
            e.to_string() == "a.yaml: malformed YAML at line 3 column 4: unclosed bracket '['",
            "{e}"
        );
        let docs: Vec<Value> = documents("a.json", "{\"a\":1}\n{\"b\":2}").unwrap();
        assert_eq!(docs.len(), 2);
        let e = documents::<Value>("a.json", "{\"a\":1,}")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a.json: malformed JSON at line 1 column 8: "),
            "{e}"
        );
        let flow: Vec<Value> = documents("flow.yaml", "{a: 1}").unwrap();
        assert_eq!(flow.len(), 1, "YAML flow mapping");
    }

    #[test]
    fn merge_keys_are_applied_as_kubectl_applies_them() {
        let text = "base: &base {a: 1, b: 2}\nobject:\n  <<: *base\n  b: 3\n";
        let docs: Vec<Value> = documents("m.yaml", text).unwrap();
        let object = docs[0].get("object").unwrap();
        assert_eq!(object.get("a"), Some(&Value::Int(1)));
        assert_eq!(object.get("b"), Some(&Value::Int(3)), "explicit keys win");
        assert_eq!(object.get("<<"), None);
    }

    #[test]
    fn deep_nesting_is_refused_at_once_in_one_line() {
        let block: String = (0..1000)
            .map(|i| format!("{}a:\n", " ".repeat(i)))
            .collect();
        for (deep, name) in [
            ("[".repeat(100_000), "flow"),
            (format!("a: {}", "[".repeat(100_000)), "flow in a mapping"),
            (format!("a: {}", "{b: ".repeat(100_000)), "flow mappings"),
            (block, "block"),
        ] {
            let e = documents::<Value>("deep.yaml", &deep)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("deep.yaml: malformed "), "{name}: {e}");
            assert!(!e.contains('\n'), "{name}: {e}");
        }
    }
}
