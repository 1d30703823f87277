//! Required fields, as the API server takes them: a Karpenter object without a field its CRD
//! lists under `required:` is refused on create (the structural schema's validation, whatever
//! kubectl's `--validate`), so it can never be in a cluster. The lists come from the vendored
//! CRDs ([`generated::REQUIRED`]), outside `status` (dropped on create) and without the fields a
//! `default` fills first (`budgets[].nodes`). Kubernetes kinds are not checked: their OpenAPI
//! `required` lists would refuse hand-written input the plan reads well (docs/commands.md
//! "Input").
//!
//! The fields a typed read sees are followed by [`Track`] (`api::scalars::Strict` carries it
//! down the document); fields a typed read leaves unread are walked by [`super::Inside`]. Both
//! note each object's missing required fields here, read by [`take_missing`].

use std::cell::RefCell;

use super::{generated, Shape};

/// Where a value is in a Karpenter object's schema: its type (an object, or with `list` a list
/// of them) and its path from the object's root.
#[derive(Debug, Clone)]
pub(crate) struct Track {
    ty: u16,
    list: bool,
    path: String,
}

impl Track {
    /// The root of a Karpenter object of this `apiVersion` and kind; `None` for the Kubernetes
    /// kinds (not checked) and kinds without a schema.
    pub(crate) fn root(api_version: &str, kind: &str) -> Option<Track> {
        let crd = api_version.starts_with("karpenter.")
            || api_version.starts_with("autoscaling.x-k8s.io/");
        let ty = super::root(api_version, kind).filter(|_| crd)?;
        Some(Track {
            ty,
            list: false,
            path: String::new(),
        })
    }

    /// The path from the root (`spec.template.spec`, `spec.requirements[0]`).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The type.
    pub(crate) fn ty(&self) -> u16 {
        self.ty
    }

    /// Whether a list of the type.
    pub(crate) fn list(&self) -> bool {
        self.list
    }

    /// The object this is, when one (not a list).
    pub(crate) fn object(self) -> Option<Track> {
        (!self.list).then_some(self)
    }

    /// The items of the list this is, when one, for [`Track::item`].
    pub(crate) fn items(self) -> Option<Track> {
        self.list.then_some(self)
    }

    /// Item `n` of the list this is.
    pub(crate) fn item(&self, n: usize) -> Track {
        Track {
            ty: self.ty,
            list: false,
            path: format!("{}[{n}]", self.path),
        }
    }

    /// The value of field `key` of the object this is, when an object or a list of them.
    pub(crate) fn field(&self, key: &str) -> Option<Track> {
        let fields = generated::TYPES[usize::from(self.ty)];
        let at = fields.binary_search_by(|f| f.0.cmp(key)).ok()?;
        let super::Field(name, shape, child) = fields[at];
        let list = match shape {
            Shape::One => false,
            Shape::List => true,
            Shape::Leaf | Shape::Map => return None,
        };
        let path = if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        };
        Some(Track {
            ty: child,
            list,
            path,
        })
    }
}

/// The required fields of type `ty` (most have none).
fn required(ty: u16) -> &'static [&'static str] {
    generated::REQUIRED
        .binary_search_by_key(&ty, |(t, _)| *t)
        .map_or(&[], |i| generated::REQUIRED[i].1)
}

/// The required fields of one object (of type `ty`) seen so far as it is read.
pub(crate) struct Seen {
    required: &'static [&'static str],
    seen: u64,
}

impl Seen {
    /// For an object of type `ty`.
    pub(crate) fn of(ty: u16) -> Seen {
        Seen {
            required: required(ty),
            seen: 0,
        }
    }

    /// Notes field `key` as written.
    pub(crate) fn saw(&mut self, key: &str) {
        if let Some(i) = self.required.iter().position(|r| *r == key) {
            self.seen |= 1 << i;
        }
    }

    /// Once the object is read: notes each required field it lacked, under `path` (the
    /// object's own, made only when one is missing).
    pub(crate) fn note_missing(&self, path: impl FnOnce() -> String) {
        let missing = (0..self.required.len()).filter(|i| self.seen & (1 << i) == 0);
        let mut missing = missing.map(|i| self.required[i]).peekable();
        if missing.peek().is_none() {
            return;
        }
        let at = path();
        MISSING.with(|m| {
            let mut m = m.borrow_mut();
            for name in missing {
                m.push(if at.is_empty() {
                    name.to_string()
                } else {
                    format!("{at}.{name}")
                });
            }
        });
    }
}

thread_local! {
    // The paths of the required fields missing in the object being read.
    static MISSING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The paths of the required fields missing since the last call, innermost object first.
pub(crate) fn take_missing() -> Vec<String> {
    MISSING.with(|m| std::mem::take(&mut *m.borrow_mut()))
}

/// What the API server says of a missing required field (`Required value`, `field.Required`),
/// with a hint where one helps.
pub(crate) fn required_message(kind: &str, path: &str) -> String {
    let hint = match path.rsplit('.').next().unwrap_or(path) {
        "requirements" => " (an empty list, requirements: [], is allowed)",
        "nodeClassRef" if kind == "NodePool" => {
            ": a NodePool must name its node class (e.g. {group: karpenter.k8s.aws, kind: \
             EC2NodeClass, name: default})"
        }
        "group" | "kind"
            if path.ends_with("nodeClassRef.group") || path.ends_with("nodeClassRef.kind") =>
        {
            " (the AWS provider's: group: karpenter.k8s.aws, kind: EC2NodeClass)"
        }
        "consolidateAfter" => " (a duration such as 30s, or Never)",
        "operator" if path.contains("equirements[") => {
            " (e.g. In, NotIn, Exists, DoesNotExist, Gt or Lt)"
        }
        "amiSelectorTerms" => " (e.g. - alias: al2023@latest)",
        "subnetSelectorTerms" | "securityGroupSelectorTerms" => {
            " (e.g. - tags: {karpenter.sh/discovery: my-cluster})"
        }
        "effect" if path.contains("aints[") => {
            " (expected NoSchedule, PreferNoSchedule or NoExecute)"
        }
        _ => "",
    };
    format!("Required value{hint}")
}

/// Every required field of a Karpenter kind, as paths with `[]` for a list's items
/// (`spec.template.spec.requirements[].key`), sorted: for the table tests.
#[cfg(test)]
pub(crate) fn required_paths(api_version: &str, kind: &str) -> Vec<String> {
    fn walk(ty: u16, path: &str, depth: usize, out: &mut Vec<String>) {
        let join = |name: &str| {
            if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        out.extend(required(ty).iter().map(|r| join(r)));
        if depth == 0 {
            return;
        }
        for super::Field(name, shape, child) in generated::TYPES[usize::from(ty)] {
            match shape {
                Shape::One => walk(*child, &join(name), depth - 1, out),
                Shape::List => walk(*child, &format!("{}[]", join(name)), depth - 1, out),
                Shape::Leaf | Shape::Map => {}
            }
        }
    }
    let mut out = Vec::new();
    if let Some(root) = Track::root(api_version, kind) {
        walk(root.ty, "", 12, &mut out);
    }
    out.sort();
    out
}
