//! Turns a `serde-saphyr` error into the one-line [`InputError`] of docs/spec.md §6.
//!
//! The error knows where it happened (line and column) and what was expected; the rest — which
//! document, which object, which field, what was found — comes from walking the parser's
//! events up to that position. This runs only when reading failed, so reading itself keeps no
//! paths.

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};
use serde_saphyr::{DefaultMessageFormatter, Error, ExternalMessageSource, MessageFormatter};

use super::path::{render, Step};
use super::{location, MAX_DEPTH};
use crate::api::error::{object_name, InputError};

/// The error for `e`, raised reading `text` (whose first line is line `line_offset + 1` of the
/// source `path`).
pub(super) fn error(path: &str, text: &str, line_offset: usize, e: &Error) -> InputError {
    let e = match e {
        Error::AliasError { error, .. } => error.as_ref(),
        other => other,
    };
    let (line, column) = e.location().map_or((0, 0), |l| {
        (
            usize::try_from(l.line()).unwrap_or(0),
            usize::try_from(l.column()).unwrap_or(0),
        )
    });
    let syntax = |line: usize, column: usize, message: String| InputError::Syntax {
        path: path.to_string(),
        format: "YAML",
        line: (line > 0).then_some(line + line_offset),
        column: (line > 0).then_some(column),
        message,
    };
    match e {
        Error::Budget { breach, .. } => {
            let message = match breach {
                BudgetBreach::Depth { .. } => format!("nested more than {MAX_DEPTH} levels deep"),
                other => format!("too large to read ({other:?})"),
            };
            return syntax(line, column, message);
        }
        Error::ExternalMessage { source, msg, .. }
            if matches!(**source, ExternalMessageSource::Parser(_)) =>
        {
            return syntax(line, column, msg.clone());
        }
        Error::Eof { .. } | Error::UnknownAnchor { .. } => {
            return syntax(line, column, message(e, None));
        }
        Error::DuplicateMappingKey { key, .. } => {
            let key = key.as_deref().unwrap_or("?");
            return syntax(line, column, format!("duplicate entry with key {key:?}"));
        }
        _ => {}
    }
    // A scalar of the wrong type, refused by the field's type once read: its position is the
    // key's (serde-saphyr's fallback), which, first in a block mapping, is also where that
    // mapping starts; the node meant is the key, not the mapping.
    let scalar_refused = matches!(e, Error::SerdeInvalidType { unexpected, .. }
        if !unexpected.starts_with("map") && !unexpected.starts_with("sequence"));
    match walk(text, line, column, scalar_refused) {
        Walk::Syntax {
            line,
            column,
            message,
        } => syntax(line, column, message),
        Walk::NotFound => syntax(line, column, message(e, None)),
        Walk::Found(f) => {
            let in_list = f.root.kind.as_deref().is_some_and(|k| k.ends_with("List"));
            let (item, field, header) = match f.path.as_slice() {
                [Step::Key(items), Step::Index(i), rest @ ..] if items == "items" && in_list => {
                    (Some(*i), rest, &f.item)
                }
                all => (None, all, &f.root),
            };
            InputError::Invalid {
                at: location(path, f.document, f.count, item),
                object: object_name(
                    header.kind.as_deref().unwrap_or("Object"),
                    header.namespace.as_deref(),
                    header.name.as_deref(),
                ),
                field: render(field),
                message: message(e, Some(&f.found)),
            }
        }
    }
}

/// What went wrong, worded like serde's own messages (`invalid type: string "two", expected
/// i64`), with what was found at the error's position when it is known.
fn message(e: &Error, found: Option<&str>) -> String {
    let found = found.unwrap_or("this value");
    match e {
        Error::InvalidScalar { ty, .. } => format!("invalid type: {found}, expected {ty}"),
        Error::Unexpected { expected, .. } => {
            let expected = match *expected {
                // Said of any scalar target (a number as much as a string).
                "string scalar" => "a scalar",
                "str expected" | "missing string" => "a string",
                "sequence start" => "a sequence",
                "mapping start" => "a map",
                "bool expected" | "missing bool" => "a boolean",
                other => other,
            };
            format!("invalid type: {found}, expected {expected}")
        }
        Error::NullIntoString { .. } => "invalid type: null, expected a string".to_string(),
        other => DefaultMessageFormatter.format_message(other).into_owned(),
    }
}

/// What names an object in messages.
#[derive(Debug, Default)]
struct Header {
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
}

impl Header {
    /// Records a scalar at `path` (relative to the object) if it is part of the header.
    fn note(&mut self, path: &[Step], value: &str) {
        let key = |s: &Step, k: &str| matches!(s, Step::Key(x) if x == k);
        match path {
            [k] if key(k, "kind") => self.kind = Some(value.to_string()),
            [m, n] if key(m, "metadata") && key(n, "name") => self.name = Some(value.to_string()),
            [m, n] if key(m, "metadata") && key(n, "namespace") => {
                self.namespace = Some(value.to_string())
            }
            _ => {}
        }
    }
}

/// The node at the error's position and its surroundings.
struct Found {
    /// 0-based, among the non-empty documents (as the reader counts them).
    document: usize,
    /// How many non-empty documents the text holds (as far as it parses).
    count: usize,
    path: Vec<Step>,
    /// `string "two"`, `sequence`, `map`, ….
    found: String,
    /// The document's header.
    root: Header,
    /// The header of the List item the node is in (when it is).
    item: Header,
}

enum Walk {
    Found(Found),
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    NotFound,
}

/// A collection being walked: a mapping (the key whose value comes next, if any) or a sequence
/// (the index of the next item).
enum Frame {
    Map { key: Option<String> },
    Seq { next: usize },
}

/// Walks `text`'s events to the node starting at `line`/`column` (1-based, as `serde-saphyr`
/// reports them; a scalar when `scalar`), then on to the end of the text to count its documents; a syntax error
/// anywhere wins, as the text is malformed whatever else is wrong in it.
fn walk(text: &str, line: usize, column: usize, scalar: bool) -> Walk {
    let mut options = serde_saphyr::granit_parser::Options::default();
    options.flow_nesting_limit = MAX_DEPTH;
    options.block_nesting_limit = MAX_DEPTH;
    let parser = Parser::new_from_str_with_options(text, options);
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<Step> = Vec::new();
    let mut documents: usize = 0;
    let mut found: Option<Found> = None;
    let mut root = Header::default();
    // The headers of a List's items, for an error inside one.
    let mut items: Vec<Header> = Vec::new();
    let mut done_with_target = false;
    for event in parser {
        let (event, span) = match event {
            Ok(e) => e,
            // A syntax error anywhere makes the text malformed, whatever else is wrong in it.
            Err(scan) => {
                return Walk::Syntax {
                    line: scan.marker().line(),
                    column: scan.marker().col() + 1,
                    message: scan.info(),
                }
            }
        };
        let is_node = matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        );
        if stack.is_empty() && is_node {
            // A document's root: an empty or null one is not counted (the reader skips it).
            let null = matches!(&event, Event::Scalar(v, ScalarStyle::Plain, _, None)
                if matches!(v.as_ref(), "" | "~" | "null" | "Null" | "NULL"));
            if !null {
                documents += 1;
                if found.is_none() {
                    root = Header::default();
                    items.clear();
                }
            }
        }
        // The slot this node fills: a key of a mapping, a mapping's value, an item.
        let mut is_key = false;
        if is_node {
            match stack.last_mut() {
                Some(Frame::Map { key: None }) => is_key = true,
                Some(Frame::Map { key: Some(k) }) => path.push(Step::Key(k.clone())),
                Some(Frame::Seq { next }) => path.push(Step::Index(*next)),
                None => {}
            }
        }
        let collection = matches!(event, Event::SequenceStart(..) | Event::MappingStart(..));
        if is_node
            && found.is_none()
            && !(scalar && collection)
            && span.start.line() == line
            && span.start.col() + 1 == column
        {
            let mut at = path.clone();
            if is_key {
                if let Event::Scalar(k, ..) = &event {
                    at.push(Step::Key(k.to_string()));
                }
            }
            found = Some(Found {
                document: documents.saturating_sub(1),
                count: 0,
                path: at,
                found: describe(&event),
                root: Header::default(),
                item: Header::default(),
            });
        }
        match event {
            Event::Scalar(value, ..) => {
                if is_key {
                    if let Some(Frame::Map { key }) = stack.last_mut() {
                        *key = Some(value.to_string());
                    }
                } else {
                    if !done_with_target {
                        root.note(&path, &value);
                        if let [Step::Key(k), Step::Index(i), rest @ ..] = path.as_slice() {
                            if k == "items" {
                                if items.len() <= *i {
                                    items.resize_with(i + 1, Header::default);
                                }
                                items[*i].note(rest, &value);
                            }
                        }
                    }
                    filled(&mut stack, &mut path);
                }
            }
            Event::Alias(_) if !is_key => filled(&mut stack, &mut path),
            Event::SequenceStart(..) => stack.push(Frame::Seq { next: 0 }),
            Event::MappingStart(..) => stack.push(Frame::Map { key: None }),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                filled(&mut stack, &mut path);
            }
            Event::DocumentEnd => {
                if let Some(f) = found.as_mut() {
                    if !done_with_target {
                        f.root = std::mem::take(&mut root);
                        f.item = item_header(&f.path, &mut items);
                        done_with_target = true;
                    }
                }
            }
            _ => {}
        }
    }
    match found {
        Some(mut f) => {
            if !done_with_target {
                f.root = root;
                f.item = item_header(&f.path, &mut items);
            }
            f.count = documents;
            Walk::Found(f)
        }
        None => Walk::NotFound,
    }
}

/// The header of the List item `path` is in (empty when it is in none).
fn item_header(path: &[Step], items: &mut [Header]) -> Header {
    match path {
        [Step::Key(k), Step::Index(i), ..] if k == "items" => {
            items.get_mut(*i).map(std::mem::take).unwrap_or_default()
        }
        _ => Header::default(),
    }
}

/// A node just completed: its slot is filled (the mapping waits for its next key, the sequence
/// moves to its next item).
fn filled(stack: &mut [Frame], path: &mut Vec<Step>) {
    let slot_done = match stack.last_mut() {
        Some(Frame::Map { key }) => key.take().is_some(),
        Some(Frame::Seq { next }) => {
            *next += 1;
            true
        }
        None => false,
    };
    if slot_done {
        path.pop();
    }
}

/// A node as serde names what it found: `string "two"`, `integer `3``, `sequence`, `map`.
fn describe(event: &Event<'_>) -> String {
    match event {
        Event::Scalar(v, ScalarStyle::Plain, ..) => {
            let v = v.as_ref();
            if matches!(v, "" | "~" | "null" | "Null" | "NULL") {
                "null".to_string()
            } else if matches!(v, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") {
                format!("boolean `{v}`")
            } else if v.parse::<i64>().is_ok() {
                format!("integer `{v}`")
            } else if v.parse::<f64>().is_ok() {
                format!("floating point `{v}`")
            } else {
                format!("string {v:?}")
            }
        }
        Event::Scalar(v, ..) => format!("string {:?}", v.as_ref()),
        Event::SequenceStart(..) => "sequence".to_string(),
        Event::MappingStart(..) => "map".to_string(),
        _ => "an alias".to_string(),
    }
}
