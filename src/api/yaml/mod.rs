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
pub(crate) fn documents<T: DeserializeOwned + Send>(
    path: &str,
    text: &str,
) -> Result<Vec<T>, InputError> {
    Documents::new(path, text)?.collect()
}

/// The documents of one source, each typed as it is taken, so a caller can be done with one
/// before the next is typed (a cluster dump is never held typed as a whole).
///
/// JSON is YAML, and the YAML reader decides what a document means; but it reads about ten
/// times slower than `serde_json` (a `kubectl get -o json` dump of 5,000 nodes takes seconds).
/// So a JSON document is first typed by `serde_json`, and read as YAML only when that fails:
/// whatever `serde_json` refuses (a duplicate key; nesting deeper than [`MAX_DEPTH`]; a scalar
/// of the wrong type, which the YAML reader refuses too: `api::scalars`) gets the YAML
/// reader's answer and message.
/// Syntax errors are found before the first document is given out; an error typing a document
/// comes when it is taken (see [`Documents::rest_typed`]).
pub(crate) struct Documents<'a, T> {
    path: &'a str,
    text: &'a str,
    pending: std::vec::IntoIter<Pending<'a, T>>,
    count: usize,
    /// How many documents were taken (the next one's 0-based number).
    taken: usize,
    /// Where the last JSON document read as YAML started, and its line (lines are counted
    /// once, however many documents need them).
    line_cursor: (usize, usize),
    /// Whether a JSON document of `(apiVersion, kind)` is a List whose items [`Documents::next_part`]
    /// gives out one at a time; `None`: every document is typed whole.
    is_list: Option<fn(&str, &str) -> bool>,
}

/// A document as [`Documents::next_part`] gives it out: typed whole, or a JSON List whose
/// items are typed one at a time ([`Documents::item`]), so a `kubectl get -o json` dump is never
/// held typed as a whole either.
pub(crate) enum Part<'a, T> {
    /// Typed.
    Whole(T),
    /// A JSON List, its items not typed yet.
    List(JsonList<'a>),
}

/// A JSON List document of the source: its text, where it starts, and its items' byte ranges
/// within it.
pub(crate) struct JsonList<'a> {
    json: &'a str,
    start: usize,
    items: Vec<(usize, usize)>,
}

impl JsonList<'_> {
    /// How many items it holds.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// A document not yet typed: JSON text (at a byte offset of the source), or typed already by
/// the YAML reader.
enum Pending<'a, T> {
    Json {
        json: &'a str,
        start: usize,
    },
    /// Boxed: a stream of JSON documents holds one `Pending` per document.
    Typed(Box<T>),
}

impl<'a, T: DeserializeOwned + Send> Documents<'a, T> {
    /// Splits `text` into documents, failing on a syntax error.
    pub(crate) fn new(path: &'a str, text: &'a str) -> Result<Self, InputError> {
        let pending = pending_documents(path, text)?;
        Ok(Documents {
            path,
            text,
            count: pending.len(),
            taken: 0,
            pending: pending.into_iter(),
            line_cursor: (0, 0),
            is_list: None,
        })
    }

    /// Makes [`Documents::next_part`] give a JSON document that `is_list` says is a List
    /// (by its `apiVersion` and `kind`) as its items, to type one by one.
    pub(crate) fn streaming_lists(mut self, is_list: fn(&str, &str) -> bool) -> Self {
        self.is_list = Some(is_list);
        self
    }

    /// The next document: typed, or (see [`Documents::streaming_lists`]) a JSON List whose
    /// items come from [`Documents::item`]. Only a List the JSON path would have typed is
    /// split (one `serde_json` reads as the YAML reader does, its `items` a list); its items
    /// then type as they did inside it.
    pub(crate) fn next_part(&mut self) -> Option<Result<Part<'a, T>, InputError>> {
        if let (Some(is_list), Some(Pending::Json { json, start })) =
            (self.is_list, self.pending.as_slice().first())
        {
            let (json, start) = (*json, *start);
            if let Some(items) = list_items(json, is_list) {
                self.pending.next();
                return Some(Ok(Part::List(JsonList { json, start, items })));
            }
        }
        self.next().map(|doc| doc.map(Part::Whole))
    }

    /// Item `i` of `list`, typed as the List's typing types it: by `serde_json`, or, where
    /// that fails, by the YAML reader. `None` when it does not type: the error is the one
    /// typing the whole List gives ([`Documents::whole`]), which names where in it.
    pub(crate) fn item(&mut self, list: &JsonList<'a>, i: usize) -> Option<T> {
        let (from, to) = list.items[i];
        let json = &list.json[from..to];
        if let Ok(doc) = serde_json::from_str(json) {
            return Some(doc);
        }
        let line = self.line_of(list.start + from);
        yaml_documents(self.path, json, line)
            .ok()
            .and_then(|docs| docs.into_iter().next())
    }

    /// `list` typed whole, as a document that is not streamed is (by the YAML reader: one of
    /// its items does not type as JSON).
    pub(crate) fn whole(&mut self, list: &JsonList<'a>) -> Result<Option<T>, InputError> {
        let line = self.line_of(list.start);
        Ok(yaml_documents(self.path, list.json, line)?
            .into_iter()
            .next())
    }

    /// The line (from 0) byte `start` of the source is on; counted on from the last one asked
    /// for when it comes later.
    fn line_of(&mut self, start: usize) -> usize {
        let (from, line) = self.line_cursor;
        if start < from {
            return self.text[..start].matches('\n').count();
        }
        let line = line + self.text[from..start].matches('\n').count();
        self.line_cursor = (start, line);
        line
    }

    /// How many documents the source holds.
    pub(crate) fn total(&self) -> usize {
        self.count
    }

    /// Types the documents not taken yet, for the first error among them: a caller that
    /// stops at a document's meaning still reports a malformed later one first, as when all
    /// were typed before any was looked at.
    pub(crate) fn rest_typed(self) -> Result<(), InputError> {
        for doc in self {
            doc?;
        }
        Ok(())
    }
}

impl<T: DeserializeOwned + Send> Iterator for Documents<'_, T> {
    type Item = Result<T, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let next = self.pending.next()?;
            self.taken += 1;
            let (json, start) = match next {
                Pending::Typed(doc) => return Some(Ok(*doc)),
                Pending::Json { json, start } => (json, start),
            };
            if let Some(doc) = json_document(json) {
                return Some(Ok(doc));
            }
            let line_offset = self.line_of(start);
            // One JSON value (never `null`, left out when split) is one document.
            match yaml_documents(self.path, json, line_offset) {
                // Read alone, the document is its text's only one: number it among the
                // source's, as the YAML reader of the whole source would.
                Err(InputError::Invalid {
                    mut at,
                    object,
                    field,
                    message,
                }) if self.count > 1 => {
                    at.document = u32::try_from(self.taken).ok();
                    return Some(Err(InputError::Invalid {
                        at,
                        object,
                        field,
                        message,
                    }));
                }
                Err(e) => return Some(Err(e)),
                Ok(docs) => {
                    if let Some(doc) = docs.into_iter().next() {
                        return Some(Ok(doc));
                    }
                }
            }
        }
    }
}

/// The documents of `text`: JSON values (concatenated, or a `---` stream of JSON objects) to
/// type one by one, or YAML typed at once.
fn pending_documents<'a, T: DeserializeOwned + Send>(
    path: &str,
    text: &'a str,
) -> Result<Vec<Pending<'a, T>>, InputError> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        if let Some(chunks) = json_object_stream(text) {
            return Ok(chunks);
        }
        return Ok(yaml_documents(path, text, 0)?
            .into_iter()
            .map(|doc| Pending::Typed(Box::new(doc)))
            .collect());
    }
    // JSON: serde_json finds where each value ends (and reports JSON syntax errors as such).
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let mut start = 0;
    let mut out = Vec::new();
    loop {
        match values.next() {
            None => return Ok(out),
            Some(Ok(_)) => {
                let end = values.byte_offset();
                let json = &text[start..end];
                // A `null` is no document (the YAML reader skips it, and counts it not).
                if json.trim() != "null" {
                    out.push(Pending::Json { json, start });
                }
                start = end;
            }
            Some(Err(json)) => {
                // Not JSON after all: a YAML flow mapping (`{a: 1}`) starts the same way.
                if !path.to_ascii_lowercase().ends_with(".json") {
                    if let Ok(docs) = yaml_documents(path, text, 0) {
                        return Ok(docs
                            .into_iter()
                            .map(|doc| Pending::Typed(Box::new(doc)))
                            .collect());
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

/// One JSON value typed by `serde_json`, or `None` where the YAML reader must decide: the value
/// does not type (YAML may read it differently, or has the message), is `null` (a YAML null
/// document), or is read differently by the two (see [`json_reads_as_yaml`]).
fn json_document<T: DeserializeOwned>(value: &str) -> Option<T> {
    let trimmed = value.trim();
    if trimmed == "null" || !json_reads_as_yaml(trimmed) {
        return None;
    }
    serde_json::from_str(trimmed).ok()
}

/// The byte ranges of the items of `json` (one JSON value, valid) when it is a List the JSON
/// path types as the YAML reader does ([`json_reads_as_yaml`]): a mapping whose string
/// `apiVersion` and `kind` `is_list` takes for a List, with `items` a list (of anything: each
/// item is read as the List reads it). `None` otherwise.
fn list_items(json: &str, is_list: fn(&str, &str) -> bool) -> Option<Vec<(usize, usize)>> {
    let b = json.as_bytes();
    let mut i = skip_space(b, 0);
    if b.get(i) != Some(&b'{') || !json_reads_as_yaml(json.trim()) {
        return None;
    }
    let (mut api_version, mut kind, mut items) = (None, None, None);
    i = skip_space(b, i + 1);
    while b.get(i) == Some(&b'"') {
        let key_end = value_end(b, i)?;
        let key = &json[i + 1..key_end - 1];
        i = skip_space(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_space(b, i + 1);
        let end = value_end(b, start)?;
        let value = &json[start..end];
        match key {
            "apiVersion" => api_version = serde_json::from_str::<String>(value).ok(),
            "kind" => kind = serde_json::from_str::<String>(value).ok(),
            "items" => items = Some((start, end)),
            _ => {}
        }
        i = skip_space(b, end);
        if b.get(i) == Some(&b',') {
            i = skip_space(b, i + 1);
        }
    }
    let (api_version, kind, (start, end)) = (api_version?, kind?, items?);
    if api_version.is_empty() || kind.is_empty() || !is_list(&api_version, &kind) {
        return None;
    }
    if b.get(start) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_space(b, start + 1);
    while i < end && b.get(i) != Some(&b']') {
        let item_end = value_end(b, i)?;
        out.push((i, item_end));
        i = skip_space(b, item_end);
        if b.get(i) == Some(&b',') {
            i = skip_space(b, i + 1);
        }
    }
    Some(out)
}

/// The first byte of `b` from `i` that is not JSON white space.
fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// Where the JSON value starting at `i` of `b` (valid JSON) ends: the byte after it.
fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i += 1;
                while *b.get(i)? != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(i),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
        if depth == 0 && i == b.len() {
            return Some(i);
        }
    }
}

/// A YAML stream whose every document starts as a JSON object does (`---` lines between
/// `{…}` values, the way some tools write a cluster dump): its documents, each to be typed
/// alone — as YAML reads them, documents share nothing. `None` for any other stream, which is
/// read as YAML as a whole.
fn json_object_stream<'a, T>(text: &'a str) -> Option<Vec<Pending<'a, T>>> {
    // A stream not starting with `---` is ordinary YAML; a `%` directive or a `...` end
    // marker is left to the YAML reader.
    if !text.starts_with("---") {
        return None;
    }
    let mut docs = Vec::new();
    let (mut start, mut offset) = (0, 0);
    let chunk = |start: usize, end: usize, docs: &mut Vec<Pending<'a, T>>| {
        let json = &text[start..end];
        match json.trim_start() {
            "" => Some(()),
            object if object.starts_with('{') => {
                docs.push(Pending::Json { json, start });
                Some(())
            }
            _ => None,
        }
    };
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            chunk(start, offset, &mut docs)?;
            start = offset + line.len();
        } else if line.starts_with("---") || line.starts_with("...") || line.starts_with('%') {
            return None;
        }
        offset += line.len();
    }
    chunk(start, text.len(), &mut docs)?;
    Some(docs)
}

/// Whether `serde_json` reads `json` (a valid JSON text) as the YAML reader would: nesting
/// within [`MAX_DEPTH`], no key twice in one object (the YAML reader refuses a duplicate,
/// `serde_json` keeps one), no `-0` (an integer 0 in YAML, a float in `serde_json`), and no
/// escaped key (so keys compare as written).
fn json_reads_as_yaml(json: &str) -> bool {
    // Per open object, the keys seen so far and whether a key comes next.
    enum Open<'a> {
        Object { keys: Vec<&'a str>, key_next: bool },
        Array,
    }
    let bytes = json.as_bytes();
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let mut escaped = false;
                i = start;
                // Strings are most of a document: jump from one quote or backslash to the next.
                while let Some(k) = bytes
                    .get(i..)
                    .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                {
                    i += k;
                    if bytes[i] == b'"' {
                        break;
                    }
                    escaped = true;
                    i += 2;
                }
                if bytes.get(i) != Some(&b'"') {
                    i = bytes.len();
                }
                if let Some(Open::Object { keys, key_next }) = open.last_mut() {
                    if *key_next {
                        let key = &json[start..i.min(json.len())];
                        // A linear search stays cheap for the few keys objects have; an
                        // object with hundreds is left to the YAML reader.
                        if escaped || keys.len() == 256 || keys.contains(&key) {
                            return false;
                        }
                        keys.push(key);
                        *key_next = false;
                    }
                }
            }
            b'{' | b'[' => {
                if open.len() == MAX_DEPTH {
                    return false;
                }
                open.push(if bytes[i] == b'{' {
                    Open::Object {
                        keys: Vec::new(),
                        key_next: true,
                    }
                } else {
                    Open::Array
                });
            }
            b'}' | b']' => {
                open.pop();
            }
            b',' => {
                if let Some(Open::Object { key_next, .. }) = open.last_mut() {
                    *key_next = true;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'0')
                && !matches!(bytes.get(i + 2), Some(b'.' | b'e' | b'E')) =>
            {
                return false;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// `text` holds YAML documents whose first line is line `line_offset + 1` of the source.
fn yaml_documents<T: DeserializeOwned + Send>(
    path: &str,
    text: &str,
    line_offset: usize,
) -> Result<Vec<T>, InputError> {
    if let Some(split) = halfway_document_start(text) {
        // Documents are independent in YAML (anchors, tags and directives end with theirs),
        // so the two halves type on two threads; the field validation mode is per thread.
        let (head, tail) = text.split_at(split);
        let mode = super::schema::validation();
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(|| {
                super::schema::set_validation(mode);
                serde_saphyr::from_multiple_with_options::<T>(tail, options()).ok()
            });
            let first = serde_saphyr::from_multiple_with_options::<T>(head, options()).ok();
            (first, second.join().ok().flatten())
        });
        if let (Some(mut first), Some(second)) = (first, second) {
            first.extend(second);
            return Ok(first);
        }
        // Something failed: the whole text again, for the error the input as one has.
    }
    serde_saphyr::from_multiple_with_options(text, options())
        .map_err(|e| diagnose::error(path, text, line_offset, &e))
}

/// Below this, one thread types the documents (a second thread costs more than it saves).
const PARALLEL_YAML_BYTES: usize = 256 * 1024;

/// Where a document starting near the middle of `text` begins: the byte offset of a `---`
/// line (a document start marker: `---` at the start of a line, then a space or the line's
/// end), or `None` for small texts, texts with directives (`%YAML`, `%TAG`: they bind to the
/// document after them) and texts without such a marker in their second half.
fn halfway_document_start(text: &str) -> Option<usize> {
    if text.len() < PARALLEL_YAML_BYTES || text.starts_with('%') || text.contains("\n%") {
        return None;
    }
    let bytes = text.as_bytes();
    let mut from = text.len() / 2;
    while let Some(at) = text[from..].find("\n---") {
        let start = from + at + 1;
        match bytes.get(start + 3) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r') => return Some(start),
            Some(_) => from = start,
        }
    }
    None
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
        // A JSON `null` is no document, as the YAML reader has it: not counted either.
        let docs = Documents::<Value>::new("n.json", "{\"a\":1}\nnull\n{\"b\":2}").unwrap();
        assert_eq!(docs.total(), 2);
        assert_eq!(docs.count(), 2);
        let flow: Vec<Value> = documents("flow.yaml", "{a: 1}").unwrap();
        assert_eq!(flow.len(), 1, "YAML flow mapping");
    }

    /// The JSON fast paths must give exactly what the YAML reader gives: every sample is read
    /// both ways and compared (as values and as typed documents).
    #[test]
    fn json_is_typed_as_the_yaml_reader_types_it() {
        let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let samples = [
            r#"{"a": 0, "b": -1, "c": 1.5, "d": 1e3, "e": -0, "f": 18446744073709551615, "g": -0.0}"#.to_string(),
            r#"{"big": 99999999999999999999, "tiny": 1e-300, "s": "a\"b\u00e9\n", "t": true, "n": null}"#.to_string(),
            r#"{"empty": {}, "list": [], "mixed": [1, "1", {"x": [null]}], "dup": 1, "dup": 2}"#.to_string(),
            format!(r#"{{"at-limit": {}}}"#, nested(MAX_DEPTH - 1)),
            format!(r#"{{"past-limit": {}}}"#, nested(MAX_DEPTH)),
            r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 7, "labels": {"a": 1}},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1, "memory": "1Gi"}}}]}}"#
                .to_string(),
            r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}}}], "priority": "1"}}"#
                .to_string(),
            r#"{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"},
               "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "d"},
               "requirements": [{"key": "k", "operator": "In", "values": ["a", 1]}]}}, "limits": {"cpu": 10}}}"#
                .to_string(),
            r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}, null]}"#
                .to_string(),
            "null".to_string(),
        ];
        fn both<T: DeserializeOwned + Send + std::fmt::Debug>(json: &str) -> (String, String) {
            let read = |r: Result<Vec<T>, InputError>| match r {
                Ok(docs) => format!("{docs:?}"),
                Err(e) => format!("error: {e}"),
            };
            (
                read(documents::<T>("x.json", json)),
                read(yaml_documents::<T>("x.json", json, 0)),
            )
        }
        for sample in &samples {
            for text in [sample.clone(), format!("---\n{sample}\n---\n{sample}\n")] {
                let (fast, yaml) = both::<Value>(&text);
                assert_eq!(fast, yaml, "as values: {text}");
                let (fast, yaml) = both::<crate::api::document::Doc>(&text);
                assert_eq!(fast, yaml, "typed: {text}");
            }
        }
    }

    #[test]
    fn only_a_stream_of_json_objects_takes_the_json_path() {
        let two = "---\n{\"a\": 1}\n---\n{\"b\": 2}\n";
        assert_eq!(json_object_stream::<Value>(two).map(|d| d.len()), Some(2));
        for yaml in [
            "a: 1\n",
            "{\"a\": 1}\n---\nb: 2\n",
            "---\n{\"a\": 1}\n---\nb: 2\n",
            "---\n# a comment\n{\"a\": 1}\n",
            "--- {\"a\": 1}\n",
            "%YAML 1.2\n---\n{\"a\": 1}\n",
            "---\n{\"a\": 1}\n...\n",
        ] {
            assert!(json_object_stream::<Value>(yaml).is_none(), "{yaml}");
        }
        // A document starting like JSON that is YAML (a flow mapping) is read as YAML alone.
        let flow = "---\n{a: 1, b: [x]}\n---\n{\"c\": 2}\n";
        let fast: Vec<Value> = documents("f.yaml", flow).unwrap();
        assert_eq!(fast, yaml_documents::<Value>("f.yaml", flow, 0).unwrap());
        let e = documents::<Value>("f.yaml", "---\n{\"a\": 1}\n---\n{b: [1,\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            yaml_documents::<Value>("f.yaml", "---\n{\"a\": 1}\n---\n{b: [1,\n", 0)
                .unwrap_err()
                .to_string(),
            "the same line and message"
        );
        assert!(json_reads_as_yaml(
            r#"{"a": "[[{", "b": [[1], {"c": "\\\"]", "a": -0.5}]}"#
        ));
        for differs in [r#"{"a": 1, "a": 2}"#, r#"{"a": -0}"#, r#"{"\u0061": 1}"#] {
            assert!(!json_reads_as_yaml(differs), "{differs}");
        }
        // Cut short inside a string or after a backslash: an answer, no panic.
        for cut in [r#"{"a": "ab"#, r#"{"a": "ab\"#, r#"{"a\"#, "\""] {
            json_reads_as_yaml(cut);
        }
    }

    /// A JSON List's items are found by their byte ranges (strings holding brackets, quotes
    /// and commas, nested values, scalars, `null`), whatever the order of its keys; only a List
    /// the JSON path would type is split.
    #[test]
    fn a_json_lists_items_are_found_one_by_one() {
        let is_list = |_: &str, k: &str| k == "List" || k == "NodeList";
        let items = r#"[ {"a": "x]\"},{", "b": [1, [2]]} ,-1.5e3, "s[", null, true, [] ]"#;
        let json = format!("{{\n \"items\": {items},\n \"kind\": \"List\", \"apiVersion\": \"v1\", \"metadata\": {{}}}}");
        let spans = list_items(&json, is_list).unwrap();
        let found: Vec<&str> = spans.iter().map(|&(a, b)| &json[a..b]).collect();
        assert_eq!(
            found,
            [
                r#"{"a": "x]\"},{", "b": [1, [2]]}"#,
                "-1.5e3",
                r#""s[""#,
                "null",
                "true",
                "[]"
            ]
        );
        assert_eq!(
            list_items(
                r#"{"kind": "NodeList", "apiVersion": "v1", "items": []}"#,
                is_list
            ),
            Some(vec![])
        );
        for not in [
            r#"{"kind": "Pod", "apiVersion": "v1", "items": [{}]}"#,
            r#"{"kind": "List", "items": [{}]}"#,
            r#"{"kind": "List", "apiVersion": "v1", "items": {"a": 1}}"#,
            r#"{"kind": "List", "apiVersion": "v1"}"#,
            r#"{"kind": "List", "apiVersion": "v1", "items": [{"a": -0}]}"#,
            r#"{"kind": "List", "apiVersion": "v1", "items": [], "items": [{}]}"#,
            r#"[{"kind": "List", "apiVersion": "v1", "items": []}]"#,
        ] {
            assert_eq!(list_items(not, is_list), None, "{not}");
        }
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

    /// Typed on one thread, for comparison with [`yaml_documents`]'s two.
    fn serially(text: &str) -> Result<Vec<Value>, String> {
        serde_saphyr::from_multiple_with_options(text, options())
            .map_err(|e| diagnose::error("big.yaml", text, 0, &e).to_string())
    }

    /// Enough small documents to be typed on two threads, `middle` near the half-way mark.
    fn big_text(middle: &str) -> String {
        let doc =
            |i: usize| format!("---\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{a: [1, 2]}}\n");
        let mut text: String = (0..4000).map(doc).collect();
        text.push_str(middle);
        text.extend((4000..8000).map(doc));
        assert!(text.len() > PARALLEL_YAML_BYTES);
        text
    }

    #[test]
    fn a_big_text_is_typed_in_two_halves_as_one() {
        let split = |m: &str| halfway_document_start(&big_text(m));
        assert!(split("").is_some());
        // The half-way marker sits inside a literal block: YAML ends the block there (a
        // document marker at a line's start ends any scalar), so both ways agree.
        let block = "---\nkind: ConfigMap\ndata:\n  script: |\n    line\n---\n    more\n";
        for middle in [
            "",
            block,
            "---\n&a {x: 1}\n---\nb: *a\n",
            "--- {c: 3}\n...\n",
        ] {
            let text = big_text(middle);
            assert_eq!(
                yaml_documents::<Value>("big.yaml", &text, 0).map_err(|e| e.to_string()),
                serially(&text),
                "{middle}"
            );
        }
        // An error in either half is the whole text's error, at the whole text's line.
        for middle in ["---\nb: [1,\n", "---\n*undefined\n"] {
            let text = big_text(middle);
            let e = yaml_documents::<Value>("big.yaml", &text, 0)
                .unwrap_err()
                .to_string();
            assert_eq!(Err(e.clone()), serially(&text));
            assert!(e.contains("line 1600"), "{e}");
        }
        // Directives bind to the document after them: such a text is not split.
        assert_eq!(
            halfway_document_start(&format!("%YAML 1.2\n{}", big_text(""))),
            None
        );
        assert_eq!(halfway_document_start("a: 1\n---\nb: 2\n"), None);
    }
}
