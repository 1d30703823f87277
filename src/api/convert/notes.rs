//! Notes: one line per field that could not be carried over or whose meaning changes.

use std::fmt;

use super::super::objects::Object;

/// Something that could not be carried over, or whose meaning changes. Displays as
/// `<file>: <Kind>/<name>: <field>: <what and why>`, always one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The input file (`<stdin>` for `-`).
    pub source: String,
    /// The input object, `Kind/name`.
    pub object: String,
    /// The field concerned (input path, or the output path for something newly written).
    pub field: String,
    /// What happened and why.
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: ", self.source, self.object)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Notes about one input object.
pub(super) struct Notes {
    pub(super) source: String,
    pub(super) object: String,
    pub(super) list: Vec<Note>,
}

impl Notes {
    pub(super) fn new(o: &Object) -> Self {
        Notes {
            source: o.location.source.clone(),
            object: o.name.clone(),
            list: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.list.push(Note {
            source: self.source.clone(),
            object: self.object.clone(),
            field: field.into(),
            message: message.into(),
        });
    }
}
