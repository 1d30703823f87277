//! The result of a conversion: the v1 documents, what was not converted, and the rendering
//! as commented multi-document YAML.

use super::super::yaml::Value;

use super::Note;

/// One converted v1 object.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `NodePool` or `EC2NodeClass`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// Where it came from, e.g. `karpenter.sh/v1alpha5 Provisioner/default`.
    pub origin: String,
    /// Whether it is a v1 object passed through unchanged.
    pub unchanged: bool,
    /// Notes about this object (also meant for stderr).
    pub notes: Vec<Note>,
    /// Extra comment lines for the document only (pointers to notes on other documents).
    pub comments: Vec<String>,
    /// The object.
    pub value: Value,
}

/// The result of a conversion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversion {
    /// The v1 objects, in input order (an inline provider's EC2NodeClass right after its
    /// NodePool).
    pub documents: Vec<Document>,
    /// Karpenter objects that are not converted (Machines, NodeClaims: Karpenter creates them),
    /// as `Kind/name (location)`.
    pub not_converted: Vec<String>,
    /// Objects that are not Karpenter's and are not printed, as `Kind/name (location)`.
    pub not_printed: Vec<String>,
}

/// At most this many objects are named in a summary note.
const SUMMARY_NAMES: usize = 10;

pub(super) fn name_some(list: &[String]) -> String {
    let mut s = list
        .iter()
        .take(SUMMARY_NAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > SUMMARY_NAMES {
        s.push_str(&format!(" and {} more", list.len() - SUMMARY_NAMES));
    }
    s
}

impl Conversion {
    /// Every per-object note, in document order.
    pub fn notes(&self) -> impl Iterator<Item = &Note> {
        self.documents.iter().flat_map(|d| d.notes.iter())
    }

    /// The notes about objects that were not converted (at most one line per kind of reason).
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.not_converted.is_empty() {
            out.push(format!(
                "not converted: {}: Karpenter creates Machines and NodeClaims from the NodePools itself",
                name_some(&self.not_converted)
            ));
        }
        match self.not_printed.as_slice() {
            [] => {}
            [one] => out.push(format!(
                "not printed: {one}: not a Karpenter NodePool, Provisioner or node class"
            )),
            many => out.push(format!(
                "not printed: {} objects that are not Karpenter NodePools, Provisioners or node classes: {}",
                many.len(),
                name_some(many)
            )),
        }
        out
    }

    /// The documents as multi-document YAML, each preceded by comments saying where it came
    /// from and what changed.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.documents.iter().enumerate() {
            if i > 0 {
                out.push_str("---\n");
            }
            if d.unchanged {
                // NodeOverlay has a single version (v1alpha1), current alongside v1.
                let current = if d.origin.contains(" NodeOverlay/") {
                    "current"
                } else {
                    "already v1"
                };
                out.push_str(&comment(&format!("unchanged: {} is {current}", d.origin)));
            } else {
                out.push_str(&comment(&format!(
                    "converted from {} by kubectl karpenter convert",
                    d.origin
                )));
            }
            for n in &d.notes {
                out.push_str(&comment(&format!("note: {n}")));
            }
            for c in &d.comments {
                out.push_str(&comment(c));
            }
            match super::super::yaml::to_string(&d.value) {
                Ok(text) => out.push_str(&text),
                Err(e) => out.push_str(&comment(&format!("error: cannot render: {e}"))),
            }
        }
        out
    }
}

/// `# text\n`, keeping a comment on one line whatever the text holds: its control and invisible
/// characters (a name's newline, escape sequence, bidi override, zero-width space) escaped as
/// Rust's `{:?}` escapes them (`\n`, `\u{1b}`, `\u{202e}`), so the YAML still reads and the
/// terminal shows what is there (docs/security.md).
pub(super) fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str("# ");
    for c in text.chars() {
        let escaped = c.escape_debug();
        if escaped.len() > 1 && !matches!(c, '\\' | '\'' | '"') {
            out.extend(escaped);
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}
