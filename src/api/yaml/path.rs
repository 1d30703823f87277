//! Field paths as messages write them: `spec.template.spec.containers[0].resources`, with keys
//! holding dots or slashes in brackets (`labels[app.kubernetes.io/name]`).

use crate::api::validate::key_path;

/// A step of a field path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// The path of `steps`, outermost first.
pub(crate) fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => out = key_path(&out, k),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}
