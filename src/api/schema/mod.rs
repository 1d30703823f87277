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
mod required;

#[cfg(test)]
pub(crate) use required::required_paths;
pub(crate) use required::{required_message, take_missing, Seen, Track};

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

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
    let crd =
        api_version.starts_with("karpenter.") || api_version.starts_with("autoscaling.x-k8s.io/");
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

/// What an unread field is: unknown, known (a scalar, or a shape not ours to judge), or a known
/// object or list of objects, whose own fields [`Walk`] then checks.
enum Resolved {
    Unknown(UnknownField),
    Known,
    Inside(At),
}

/// A known object (or list of objects) type inside an unread field, and where it is.
struct At {
    ty: u16,
    list: bool,
    path: String,
    kind: String,
}

fn resolve(root: u16, kind: &str, steps: &[Step]) -> Resolved {
    let mut ty = root;
    let mut path = String::new();
    let mut i = 0;
    while i < steps.len() {
        let Step::Key(key) = &steps[i] else {
            return Resolved::Known; // an index where a field was expected: not ours to judge
        };
        let fields = generated::TYPES[usize::from(ty)];
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        let Ok(at) = fields.binary_search_by(|f| f.0.cmp(key)) else {
            return Resolved::Unknown(UnknownField {
                message: unknown_message(kind, &path, key, fields),
                path,
            });
        };
        let Field(_, shape, child) = fields[at];
        i += 1;
        match shape {
            Shape::Leaf | Shape::Map => return Resolved::Known,
            Shape::One => {}
            Shape::List => match steps.get(i) {
                Some(Step::Index(n)) => {
                    path.push_str(&format!("[{n}]"));
                    i += 1;
                }
                None => {
                    let kind = kind.to_string();
                    return Resolved::Inside(At {
                        ty: child,
                        list: true,
                        path,
                        kind,
                    });
                }
                _ => return Resolved::Known,
            },
        }
        ty = child;
    }
    let kind = kind.to_string();
    Resolved::Inside(At {
        ty,
        list: false,
        path,
        kind,
    })
}

thread_local! {
    // The known object type of the field `serde_ignored` reported last, for [`Walk`], which
    // reads that field's value next; and the unknown fields found so far in the document.
    static PENDING: RefCell<Option<At>> = const { RefCell::new(None) };
    static FOUND: RefCell<Vec<UnknownField>> = const { RefCell::new(Vec::new()) };
}

/// Notes a field a typed read left unread (`serde_ignored`'s report): an unknown field is
/// kept for [`take_found`]; a known object or list of objects is checked inside as it is read
/// past ([`Walk`]). `kubectl apply --validate=strict` refuses a misspelt field at any depth —
/// `securityContext.allowPrivilegedEscalation`, `livenessProbe.httpGett` — not only where this
/// tool reads.
pub(crate) fn note(root: u16, kind: &str, steps: &[Step]) {
    match resolve(root, kind, steps) {
        Resolved::Unknown(field) => FOUND.with(|f| f.borrow_mut().push(field)),
        Resolved::Known => {}
        Resolved::Inside(at) => PENDING.with(|p| *p.borrow_mut() = Some(at)),
    }
}

/// The fields inside `value` the API server does not know. `value` is a field this tool reads
/// free-form (as JSON) — `serde_ignored` never reports inside it — found at `at` (the steps from
/// the root) of an object of schema `root`; a typo there (`selector.matchLabel`,
/// `placementGroupSelector.nam`) is refused as anywhere else.
pub(crate) fn unknown_in_value(
    root: u16,
    kind: &str,
    at: &[Step],
    value: &serde_json::Value,
) -> Vec<UnknownField> {
    let mut out = Vec::new();
    if let Resolved::Inside(At { ty, list, path, .. }) = resolve(root, kind, at) {
        walk_value(ty, list, kind, &path, value, &mut out);
    }
    out
}

fn walk_value(
    ty: u16,
    list: bool,
    kind: &str,
    path: &str,
    value: &serde_json::Value,
    out: &mut Vec<UnknownField>,
) {
    use serde_json::Value;
    if list {
        if let Value::Array(items) = value {
            for (i, item) in items.iter().enumerate() {
                walk_value(ty, false, kind, &format!("{path}[{i}]"), item, out);
            }
        }
        return;
    }
    let Value::Object(map) = value else {
        return; // a wrong type is the typed reader's to refuse
    };
    let fields = generated::TYPES[usize::from(ty)];
    for (key, v) in map {
        let here = format!("{path}.{key}");
        match fields.binary_search_by(|f| f.0.cmp(key)) {
            Err(_) => out.push(UnknownField {
                message: unknown_message(kind, &here, key, fields),
                path: here,
            }),
            Ok(i) => match fields[i] {
                Field(_, Shape::One, child) => walk_value(child, false, kind, &here, v, out),
                Field(_, Shape::List, child) => walk_value(child, true, kind, &here, v, out),
                _ => {}
            },
        }
    }
}

/// The unknown fields [`note`] and [`Walk`] found since the last call, in document order.
pub(crate) fn take_found() -> Vec<UnknownField> {
    PENDING.with(|p| p.borrow_mut().take());
    FOUND.with(|f| std::mem::take(&mut *f.borrow_mut()))
}

/// Reads past an unread value; when [`note`] found it to be a known object (or list of them),
/// checks the fields inside against the schema on the way ([`Inside`]).
pub(crate) struct Walk;

impl Walk {
    /// For the value of the field reported last (taken at the first visit, once the reader has
    /// called `serde_ignored`'s report).
    pub(crate) fn pending() -> Inside<'static> {
        Inside {
            ty: None,
            list: false,
            place: &Place::Top(""),
            kind: "",
            top: true,
            unknown: true,
        }
    }
}

/// Scalars end a walk: inside an unread field only the field names are checked.
macro_rules! scalars {
    ($($method:ident($ty:ty))*) => {
        $(
            fn $method<E>(self, _: $ty) -> Result<(), E> {
                self.end();
                Ok(())
            }
        )*
        fn visit_unit<E>(self) -> Result<(), E> {
            self.end();
            Ok(())
        }
        fn visit_none<E>(self) -> Result<(), E> {
            self.end();
            Ok(())
        }
        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
            self.end();
            IgnoredAny.visit_enum(data).map(|_| ())
        }
    };
}

/// Where a walked value is: the unread field's path, then the steps taken inside it — borrowed
/// links, written out only for an unknown field.
enum Place<'a> {
    Top(&'a str),
    Field(&'a Place<'a>, &'static str),
    Item(&'a Place<'a>, usize),
}

impl Place<'_> {
    fn render(&self, out: &mut String) {
        match self {
            Place::Top(path) => out.push_str(path),
            Place::Field(parent, name) => {
                parent.render(out);
                out.push('.');
                out.push_str(name);
            }
            Place::Item(parent, n) => {
                parent.render(out);
                out.push_str(&format!("[{n}]"));
            }
        }
    }
}

/// A value inside an unread known field: an object of type `ty` (or, `list`, a list of them);
/// `None` reads past anything. `top`: the unread field itself, whose type [`note`] left.
/// Missing required fields are noted ([`required`]); unknown ones when `unknown` (not in a
/// walk for the required fields alone, `--validate=ignore`).
pub(crate) struct Inside<'a> {
    ty: Option<u16>,
    list: bool,
    place: &'a Place<'a>,
    kind: &'a str,
    top: bool,
    unknown: bool,
}

impl Inside<'_> {
    fn end(self) {
        if self.top {
            PENDING.with(|p| p.borrow_mut().take());
        }
    }
}

/// The type [`note`] left for the unread field being read, as an [`Inside`] to walk with.
fn with_pending<R>(walk: impl FnOnce(Inside<'_>) -> R) -> R {
    let at = PENDING.with(|p| p.borrow_mut().take());
    match &at {
        Some(at) => {
            let place = Place::Top(&at.path);
            let (ty, list, kind) = (Some(at.ty), at.list, at.kind.as_str());
            walk(Inside {
                ty,
                list,
                place: &place,
                kind,
                top: false,
                unknown: true,
            })
        }
        None => walk(Inside {
            ty: None,
            list: false,
            place: &Place::Top(""),
            kind: "",
            top: false,
            unknown: true,
        }),
    }
}

impl<'de> DeserializeSeed<'de> for Inside<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Inside<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    scalars! {
        visit_bool(bool) visit_i64(i64) visit_u64(u64) visit_f64(f64) visit_str(&str)
        visit_bytes(&[u8])
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.top {
            return with_pending(|inside| inside.visit_seq(seq));
        }
        let (Some(ty), true) = (self.ty, self.list) else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        for n in 0.. {
            let place = Place::Item(self.place, n);
            let item = Inside {
                ty: Some(ty),
                list: false,
                place: &place,
                kind: self.kind,
                top: false,
                unknown: self.unknown,
            };
            if seq.next_element_seed(item)?.is_none() {
                break;
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.top {
            return with_pending(|inside| inside.visit_map(map));
        }
        let (Some(ty), false) = (self.ty, self.list) else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        let fields = generated::TYPES[usize::from(ty)];
        let mut seen = required::Seen::of(ty);
        while let Some(key) = map.next_key_seed(KeyOf(fields))? {
            if let Key::Known(field) = &key {
                seen.saw(field.0);
            }
            match key {
                Key::Known(Field(name, shape @ (Shape::One | Shape::List), child)) => {
                    let place = Place::Field(self.place, name);
                    let list = matches!(shape, Shape::List);
                    let inner = Inside {
                        ty: Some(*child),
                        list,
                        place: &place,
                        kind: self.kind,
                        top: false,
                        unknown: self.unknown,
                    };
                    map.next_value_seed(inner)?;
                }
                Key::Known(_) => {
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Unknown(_) if !self.unknown => {
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Unknown(key) => {
                    let mut path = String::new();
                    self.place.render(&mut path);
                    path.push('.');
                    path.push_str(&key);
                    let message = unknown_message(self.kind, &path, &key, fields);
                    FOUND.with(|f| f.borrow_mut().push(UnknownField { path, message }));
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        seen.note_missing(|| {
            let mut path = String::new();
            self.place.render(&mut path);
            path
        });
        Ok(())
    }
}

/// Reads past an unread value at `track` (found by [`Track`], not by `serde_ignored`: under
/// `--validate=ignore`), noting the required fields missing inside it and nothing else.
pub(crate) fn walk_required<'de, D: Deserializer<'de>>(
    d: D,
    track: &Track,
) -> Result<(), D::Error> {
    let place = Place::Top(track.path());
    d.deserialize_ignored_any(Inside {
        ty: Some(track.ty()),
        list: track.list(),
        place: &place,
        kind: "",
        top: false,
        unknown: false,
    })
}

/// Whether [`note`] left the type of an unread field to walk ([`Walk::pending`]).
pub(crate) fn pending_walk() -> bool {
    PENDING.with(|p| p.borrow().is_some())
}

/// A mapping key looked up in an object type's fields: text only when it is unknown (kubectl
/// makes a YAML key `1` the JSON key "1").
enum Key {
    Known(&'static Field),
    Unknown(String),
}

struct KeyOf(&'static [Field]);

impl KeyOf {
    fn key(&self, key: &str) -> Key {
        match self.0.binary_search_by(|f| f.0.cmp(key)) {
            Ok(i) => Key::Known(&self.0[i]),
            Err(_) => Key::Unknown(key.to_string()),
        }
    }
}

impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for KeyOf {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(self.key(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
        Ok(self.key(&v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
        Ok(self.key(&v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
        Ok(self.key(&v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
        Ok(self.key(&v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Key, E> {
        Ok(self.key("null"))
    }
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
