//! Strict field validation, as `kubectl apply`'s default (`--validate=strict`): a field the API
//! server does not know is refused with its path and a did-you-mean, instead of being dropped
//! — a typo such as `requirments` or `resources.requets` would otherwise give a confident,
//! wrong plan (docs/commands.md "Input").
//!
//! Documents stream straight into this tool's typed objects, which read only the fields a plan
//! needs; `serde_ignored` reports each field a read left unread. Such a field is fine when the
//! API server knows it (a Pod's `volumes`, a container's `env`), and unknown otherwise: the
//! field names per object type come from the Kubernetes OpenAPI definitions and Karpenter's
//! CRDs ([`generated`], made by `scripts/gen_field_schema.py`).

#[rustfmt::skip] // generated: one line per type
mod generated;

use std::cell::Cell;

/// One field of an object type: its name, how its value is shaped, and the value's type (an
/// index into [`generated::TYPES`]; unused for [`Shape::Leaf`]).
pub(crate) struct Field(pub &'static str, pub Shape, pub u16);

/// How a field's value is shaped.
#[derive(Clone, Copy)]
pub(crate) enum Shape {
    /// A scalar, or anything whose inside is not checked.
    Leaf,
    /// One object of the child type.
    One,
    /// A list of objects of the child type.
    List,
    /// A map from any key to objects of the child type (the generator emits it for such maps;
    /// the schemas of today have none).
    #[allow(dead_code)]
    Map,
}

/// What to do with a field the API server does not know (kubectl's `--validate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Validation {
    /// Refuse the input (the default, as kubectl's).
    #[default]
    Strict,
    /// Say so on stderr, read on.
    Warn,
    /// Drop it silently.
    Ignore,
}

thread_local! {
    // Per thread, so tests can each have their own; input is read on the main thread, where
    // `main` sets it from the flag. Any other thread reads strictly.
    static MODE: Cell<Validation> = const { Cell::new(Validation::Strict) };
}

/// Sets this thread's field validation (`main`: from the global `--validate` flag, at start).
pub fn set_validation(mode: Validation) {
    MODE.with(|m| m.set(mode));
}

/// Runs `f` with this thread's field validation set to `mode`, then puts it back.
pub fn with_validation<T>(mode: Validation, f: impl FnOnce() -> T) -> T {
    let before = validation();
    set_validation(mode);
    let out = f();
    set_validation(before);
    out
}

/// This thread's field validation.
pub fn validation() -> Validation {
    MODE.with(Cell::get)
}

/// The schema root of a document's kind, if this tool knows its fields.
pub(crate) fn root(api_version: &str, kind: &str) -> Option<u16> {
    // Read once per document: match the key's parts rather than building it.
    let crd = api_version.starts_with("karpenter.");
    generated::ROOTS
        .iter()
        .find(|(key, _)| {
            if crd {
                key.strip_suffix(kind)
                    .and_then(|k| k.strip_suffix('/'))
                    .is_some_and(|k| k == api_version)
            } else {
                *key == kind
            }
        })
        .map(|(_, id)| *id)
}

/// A step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// The steps of a path `serde_ignored` reports.
pub(crate) fn steps(path: &serde_ignored::Path<'_>) -> Vec<Step> {
    let mut out = Vec::new();
    let mut at = path;
    loop {
        match at {
            serde_ignored::Path::Root => break,
            serde_ignored::Path::Seq { parent, index } => {
                out.push(Step::Index(*index));
                at = parent;
            }
            serde_ignored::Path::Map { parent, key } => {
                out.push(Step::Key(key.clone()));
                at = parent;
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => at = parent,
        }
    }
    out.reverse();
    out
}

/// A field the API server does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// Where (`spec.template.spec.requirments`, `spec.containers[0].resources.requets`).
    pub path: String,
    /// What it says.
    pub message: String,
}

/// Checks a field a typed read left unread: `None` when the API server knows it.
pub(crate) fn check(root: u16, kind: &str, steps: &[Step]) -> Option<UnknownField> {
    let mut ty = root;
    let mut path = String::new();
    let mut i = 0;
    while i < steps.len() {
        let Step::Key(key) = &steps[i] else {
            return None; // an index where a field was expected: not ours to judge
        };
        let fields = generated::TYPES[usize::from(ty)];
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        let Ok(at) = fields.binary_search_by(|f| f.0.cmp(key)) else {
            return Some(UnknownField {
                message: unknown_message(kind, &path, key, fields),
                path,
            });
        };
        let Field(_, shape, child) = fields[at];
        i += 1;
        match shape {
            Shape::Leaf => return None,
            Shape::One => {}
            Shape::List => match steps.get(i) {
                Some(Step::Index(n)) => {
                    path.push_str(&format!("[{n}]"));
                    i += 1;
                }
                _ => return None,
            },
            Shape::Map => match steps.get(i) {
                Some(Step::Key(k)) => {
                    path.push_str(&format!("[{k}]"));
                    i += 1;
                }
                _ => return None,
            },
        }
        ty = child;
    }
    None
}

fn unknown_message(kind: &str, path: &str, key: &str, fields: &[Field]) -> String {
    // v1 moved the kubelet settings from the NodePool to the EC2NodeClass (docs/karpenter.md §1).
    if kind == "NodePool" && path == "spec.template.spec.kubelet" {
        return "unknown field: karpenter.sh/v1 NodePools have no kubelet settings; they moved to \
                EC2NodeClass.spec.kubelet (`kubectl karpenter convert` moves them)"
            .into();
    }
    match did_you_mean(key, fields) {
        Some(name) => format!("unknown field (did you mean {name}?)"),
        None => "unknown field".into(),
    }
}

/// The known field closest to `key`: the same but for case, or one or two edits away.
fn did_you_mean(key: &str, fields: &[Field]) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    let allowed = (key.len() / 4).clamp(1, 3);
    fields
        .iter()
        .map(|f| (f.0, strsim::osa_distance(&lower, &f.0.to_ascii_lowercase())))
        .filter(|(_, d)| *d <= allowed)
        .min_by_key(|(name, d)| (*d, *name))
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests;
