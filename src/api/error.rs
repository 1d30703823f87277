//! The one error type of manifest loading: every variant renders as a single line naming the
//! file (and the document when the file holds several objects), the object and the field, so a
//! user can go straight to the mistake (docs/spec.md §6, "Bad input never hurts").

use std::fmt;

use crate::model::nodepool::Origin;

/// Where a document sits: the file, which of its objects, and which item of a `List`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// The path as the user wrote it (or found under a directory); `<stdin>` for `-`.
    pub source: String,
    /// 1-based position among the file's objects; `None` when the file holds only one, because
    /// "document 1 of 1" is noise.
    pub document: Option<u32>,
    /// Index in a `List`'s `items`.
    pub item: Option<u32>,
}

impl Location {
    /// A whole file or stream.
    pub fn file(source: &str) -> Self {
        Location {
            source: source.to_string(),
            document: None,
            item: None,
        }
    }

    /// Rebuilds the location of a normalised object from its [`Origin`]; `multi_document` says
    /// whether the source held more than one object (so the document number is worth showing).
    pub fn from_origin(origin: &Origin, multi_document: bool) -> Self {
        Location {
            source: display_source(&origin.source).to_string(),
            document: multi_document
                .then(|| u32::try_from(origin.document + 1).unwrap_or(u32::MAX)),
            item: None,
        }
    }
}

/// `-` is shown as `<stdin>`.
pub(crate) fn display_source(source: &str) -> &str {
    if source == "-" {
        "<stdin>"
    } else {
        source
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        match (self.document, self.item) {
            (Some(d), Some(i)) => write!(f, " (document {d}, items[{i}])"),
            (Some(d), None) => write!(f, " (document {d})"),
            (None, Some(i)) => write!(f, " (items[{i}])"),
            (None, None) => Ok(()),
        }
    }
}

/// Why the input cannot be used. Display is always one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// A path could not be read (missing, permission, not a file or directory).
    #[error("{path}: {message}")]
    Read {
        /// The path.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The bytes are not UTF-8 text (binary garbage, UTF-16, a compressed file).
    #[error("{path}: not a YAML or JSON manifest: {detail}")]
    NotText {
        /// The path.
        path: String,
        /// What was found, with its byte offset.
        detail: String,
    },
    /// Malformed YAML or JSON.
    #[error("{path}: malformed {format}{}: {message}", position(.line, .column))]
    Syntax {
        /// The path.
        path: String,
        /// `YAML` or `JSON`.
        format: &'static str,
        /// 1-based line, when the parser knows it.
        line: Option<usize>,
        /// 1-based column.
        column: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// No object at all: an empty file, only comments, an empty directory, empty stdin.
    #[error("{path}: {what}")]
    Empty {
        /// The path.
        path: String,
        /// What was empty.
        what: String,
    },
    /// A document that is not a Kubernetes object (a scalar or a list, no apiVersion/kind).
    #[error("{at}: {message}")]
    NotAnObject {
        /// Where.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// An apiVersion of a Karpenter group that no release served.
    #[error("{at}: {object}: unknown apiVersion {api_version:?} (expected {expected})")]
    UnknownApiVersion {
        /// Where.
        at: Location,
        /// `Kind/name` (the kind as written).
        object: String,
        /// The apiVersion written.
        api_version: String,
        /// The versions that exist for this kind.
        expected: String,
    },
    /// A kind this tool does not read and cannot safely ignore.
    #[error("{at}: {object}: unsupported kind ({api_version}): {hint}")]
    UnsupportedKind {
        /// Where.
        at: Location,
        /// `Kind/name` (the kind as written).
        object: String,
        /// The apiVersion written.
        api_version: String,
        /// What is supported instead.
        hint: String,
    },
    /// A field with a wrong type or value.
    #[error("{at}: {object}: {}{message}", field_prefix(.field))]
    Invalid {
        /// Where.
        at: Location,
        /// `Kind/name`.
        object: String,
        /// Field path, e.g. `spec.template.spec.requirements[2].operator` (empty for the object
        /// as a whole).
        field: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// Two objects of the same kind with the same name (and namespace).
    #[error("{at}: {object}: defined twice (first in {first})")]
    Duplicate {
        /// Where the second one is.
        at: Location,
        /// `Kind/name`.
        object: String,
        /// Where the first one is.
        first: Location,
    },
    /// A NodePool's node class is not among the loaded objects.
    #[error("{at}: {object}: {field}: {message}")]
    MissingReference {
        /// Where the NodePool is.
        at: Location,
        /// `NodePool/name`.
        object: String,
        /// The reference field.
        field: String,
        /// What is missing and what is there.
        message: String,
    },
}

fn position(line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" at line {l} column {c}"),
        (Some(l), None) => format!(" at line {l}"),
        _ => String::new(),
    }
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

/// `Kind/name` or `Kind/namespace/name`, the way objects are named in every message.
pub(crate) fn object_name(kind: &str, namespace: Option<&str>, name: Option<&str>) -> String {
    let name = name.filter(|n| !n.is_empty()).unwrap_or("<unnamed>");
    match namespace.filter(|ns| !ns.is_empty() && *ns != "default") {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// The object being converted, so conversion code can say `ctx.invalid(field, message)`.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// Where the object is.
    pub at: Location,
    /// `Kind/name`.
    pub object: String,
}

impl Ctx {
    /// A context for one object.
    pub fn new(at: &Location, object: String) -> Self {
        Ctx {
            at: at.clone(),
            object,
        }
    }

    /// An [`InputError::Invalid`] for a field of this object.
    pub fn invalid(&self, field: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError::Invalid {
            at: self.at.clone(),
            object: self.object.clone(),
            field: field.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_one_line_naming_file_object_and_field() {
        let at = Location {
            source: "basic.yaml".into(),
            document: Some(2),
            item: None,
        };
        let e = InputError::Invalid {
            at: at.clone(),
            object: "NodePool/default".into(),
            field: "spec.template.spec.requirements[2].operator".into(),
            message: "unknown operator \"Inn\"".into(),
        };
        assert_eq!(
            e.to_string(),
            "basic.yaml (document 2): NodePool/default: spec.template.spec.requirements[2].operator: unknown operator \"Inn\""
        );
        let e = InputError::Syntax {
            path: "x.yaml".into(),
            format: "YAML",
            line: Some(3),
            column: Some(1),
            message: "bad".into(),
        };
        assert_eq!(
            e.to_string(),
            "x.yaml: malformed YAML at line 3 column 1: bad"
        );
        assert_eq!(object_name("Pod", Some("default"), Some("a")), "Pod/a");
        assert_eq!(object_name("Pod", Some("team"), Some("a")), "Pod/team/a");
        assert_eq!(object_name("Pod", None, None), "Pod/<unnamed>");
        let item = Location {
            source: "l.json".into(),
            document: None,
            item: Some(3),
        };
        assert_eq!(item.to_string(), "l.json (items[3])");
    }
}
