//! What the API server answers, mutated: a [`Cluster`] in front of the in-memory one that
//! rewrites some of its GET answers before the code under test decodes them (the bytes reach
//! `k8s::ops` exactly as kube-rs hands them over), and records every request it saw.

use std::cell::RefCell;

use serde_json::{json, Map, Value};

use crate::k8s::fake::FakeCluster;
use crate::k8s::{Cluster, ClusterError, Method, Request, Response};

/// xorshift64*: small, fixed, the same on every machine (the input fuzzer's).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next number.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// In `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A class of mutation (one per run, so failures are counted by class).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A key removed (optional fields missing, `status` gone).
    Drop,
    /// A list element or a whole object repeated (same name twice).
    Duplicate,
    /// A value of another JSON type than the schema's.
    Retype,
    /// Numbers and quantities at their extremes.
    Extreme,
    /// Strings empty, huge, with control characters or odd Unicode.
    Strings,
    /// Timestamps odd but parseable, or not parseable.
    Times,
    /// Enum-like values (condition types and statuses, phases, operators, effects, kinds) the
    /// code has never seen.
    Enums,
    /// `null` where a list or an object is expected.
    Nulls,
    /// Fields unknown to the code (other controllers', newer versions'): must be accepted.
    Unknown,
    /// A LIST made long (up to [`MAX_ITEMS`] items), names made unique or left repeated.
    Huge,
    /// The whole body replaced: not JSON, truncated, empty, another shape.
    Garbage,
    /// A LIST whose `continue` token never ends (a proxy looping).
    Paging,
}

/// Every class, in table order.
pub const CLASSES: [Class; 12] = [
    Class::Drop,
    Class::Duplicate,
    Class::Retype,
    Class::Extreme,
    Class::Strings,
    Class::Times,
    Class::Enums,
    Class::Nulls,
    Class::Unknown,
    Class::Huge,
    Class::Garbage,
    Class::Paging,
];

/// At most this many items in one mutated LIST answer (memory: a fuzz run once reached 17 GB).
pub const MAX_ITEMS: usize = 3000;
/// The longest string a mutation writes.
const MAX_STRING: usize = 100_000;
/// Pages of one LIST after which a looping `continue` token stops being served (the fake
/// then ends the list, so a run without a guard still ends — the harness counts the pages).
pub const MAX_LOOPING_PAGES: usize = 10_000;

/// The in-memory cluster behind a mutating proxy.
pub struct Mutating {
    inner: FakeCluster,
    state: RefCell<State>,
}

struct State {
    rng: Rng,
    class: Option<Class>,
    /// Mutations left to make.
    left: usize,
    /// Every request: (method, path with query).
    seen: Vec<(Method, String)>,
    /// What was mutated, for the report.
    done: Vec<String>,
    /// Pages served under a looping `continue` token.
    looping_pages: usize,
}

impl Mutating {
    /// `inner` answering, `class` (none: the baseline) mutating up to `count` answers.
    pub fn new(inner: FakeCluster, class: Option<Class>, seed: u64, count: usize) -> Mutating {
        Mutating {
            inner,
            state: RefCell::new(State {
                rng: Rng::new(seed),
                class,
                left: count,
                seen: Vec::new(),
                done: Vec::new(),
                looping_pages: 0,
            }),
        }
    }

    /// The requests that were not GETs (a read-only command sends none).
    pub fn writes(&self) -> Vec<String> {
        let state = self.state.borrow();
        (state.seen.iter())
            .filter(|(m, _)| *m != Method::Get)
            .map(|(m, p)| format!("{} {p}", m.as_str()))
            .collect()
    }

    /// What was mutated.
    pub fn done(&self) -> Vec<String> {
        self.state.borrow().done.clone()
    }

    /// Pages served under a looping `continue` token.
    pub fn looping_pages(&self) -> usize {
        self.state.borrow().looping_pages
    }
}

impl Cluster for Mutating {
    fn send(&self, request: Request) -> Result<Response, ClusterError> {
        let (method, path) = (request.method, request.path.clone());
        self.state.borrow_mut().seen.push((method, path.clone()));
        let mut response = self.inner.send(request)?;
        if method != Method::Get || !response.ok() {
            return Ok(response);
        }
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        // A looping token goes on as long as it is followed.
        if path.contains("continue=looping") {
            state.looping_pages += 1;
            if state.looping_pages < MAX_LOOPING_PAGES {
                response.body = looping_page(&response.body);
            }
            return Ok(response);
        }
        let Some(class) = state.class.filter(|_| state.left > 0) else {
            return Ok(response);
        };
        // About one answer in three, so that later reads are reached too.
        if state.rng.below(3) != 0 {
            return Ok(response);
        }
        let Ok(mut body) = serde_json::from_slice::<Value>(&response.body) else {
            return Ok(response);
        };
        let bare = path.split('?').next().unwrap_or(&path).to_string();
        if let Some(what) = mutate(&mut state.rng, class, &mut body) {
            state.left -= 1;
            state.done.push(format!("{bare}: {what}"));
            response.body = match body {
                Value::String(raw) if what.starts_with("body") => raw.into_bytes(),
                other => serde_json::to_vec(&other).expect("JSON"),
            };
        }
        Ok(response)
    }

    fn request_count(&self) -> u64 {
        self.state.borrow().seen.len() as u64
    }
}

/// A LIST page whose `continue` token is `looping` again.
fn looping_page(body: &[u8]) -> Vec<u8> {
    let mut page: Value = serde_json::from_slice(body).unwrap_or_else(|_| json!({}));
    if let Some(o) = page.as_object_mut() {
        o.insert("metadata".into(), json!({"continue": "looping"}));
    }
    serde_json::to_vec(&page).expect("JSON")
}

/// A step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node of `v`, depth first: its path and the key it sits under (the nearest one).
fn nodes(v: &Value, here: &mut Vec<Step>, key: &str, all: &mut Vec<(Vec<Step>, String)>) {
    all.push((here.clone(), key.to_string()));
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                here.push(Step::Key(k.clone()));
                nodes(child, here, k, all);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                here.push(Step::Index(i));
                nodes(child, here, key, all);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at<'v>(v: &'v mut Value, path: &[Step]) -> &'v mut Value {
    match path.split_first() {
        None => v,
        Some((Step::Key(k), rest)) => at(&mut v[k.as_str()], rest),
        Some((Step::Index(i), rest)) => at(&mut v[*i], rest),
    }
}

fn show(path: &[Step]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Step::Key(k) => {
                out.push('.');
                out.push_str(&k.chars().take(40).collect::<String>());
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

const TIMES: &[&str] = &[
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "2262-04-12T00:00:00Z",
    "1677-09-21T00:12:43Z",
    "2026-01-01T00:00:00.999999999+14:00",
    "2024-02-30T25:61:00Z",
    "2026-01-01",
    "+10000-01-01T00:00:00Z",
    "yesterday",
    "",
];

const QUANTITIES: &[&str] = &[
    "0",
    "-1",
    "1n",
    "0.000001m",
    "1Ei",
    "8Ei",
    "7Ei",
    "1e18",
    "1e400",
    "99999999999999999999999Ei",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5.5",
    "1Mi1",
    "NaN",
    "",
    "1Pi",
    "0.1Ki",
];

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e308",
    "-1e308",
    "1.5",
    "5e-324",
];

const ENUMS: &[&str] = &[
    "",
    "Unknown",
    "FutureValue",
    "true",
    "ready",
    "Ready",
    "False",
    "Gte",
    "NoExecute",
    "PreferNoSchedule",
    "reserved",
    "Terminating",
    "Succeeded",
    "Failed",
    "WhenEmptyOrUnderutilized",
    "WhenUnderutilized",
    "Custom",
];

/// Maps whose keys are the user's (labels, resources, data): a key added there is not a field.
const FREE_FORM: &[&str] = &[
    "labels",
    "annotations",
    "requests",
    "limits",
    "capacity",
    "allocatable",
    "data",
    "nodeSelector",
    "matchLabels",
    "podFixed",
    "tags",
    "overhead",
    "kubeReserved",
    "systemReserved",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "resources",
    "limits",
    "metadataOptions",
];

/// Keys whose values are enum-like in the objects read.
const ENUM_KEYS: &[&str] = &[
    "type",
    "status",
    "phase",
    "operator",
    "effect",
    "reason",
    "consolidationPolicy",
    "amiFamily",
    "kind",
    "whenUnsatisfiable",
    "unhealthyPodEvictionPolicy",
    "restartPolicy",
    "karpenter.sh/capacity-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
];

fn weird_string(rng: &mut Rng) -> String {
    match rng.below(7) {
        0 => "x".repeat(1 + rng.below(MAX_STRING)),
        1 => (0..1 + rng.below(40))
            .map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('?'))
            .collect(),
        2 => String::new(),
        3 => "\u{1b}[31mred\u{1b}[0m\nsecond line\r\u{7}".into(),
        4 => "\u{202e}evil\u{0}nul".into(),
        5 => "naïve-ünïcødé-日本語-🚀".into(),
        _ => " ".into(),
    }
}

/// A value of another JSON type than `old`.
fn other_type(rng: &mut Rng, old: &Value) -> Value {
    let choices: Vec<Value> = vec![
        json!(null),
        json!(true),
        json!(7),
        json!(-1.5),
        json!("7"),
        json!([]),
        json!({}),
        json!([old.clone()]),
        json!({"x": old.clone()}),
    ];
    let same = |v: &Value| std::mem::discriminant(v) == std::mem::discriminant(old);
    let others: Vec<&Value> = choices.iter().filter(|v| !same(v)).collect();
    (*rng.pick(&others)).clone()
}

/// One mutation of `class` somewhere in `body`; what it did (`None`: nothing of that kind was
/// there). A `body …` answer replaces the body with the string's raw bytes.
fn mutate(rng: &mut Rng, class: Class, body: &mut Value) -> Option<String> {
    let mut all = Vec::new();
    nodes(body, &mut Vec::new(), "", &mut all);
    let pick_where = |rng: &mut Rng, f: &dyn Fn(&Value, &str) -> bool, body: &mut Value| {
        let fits: Vec<&(Vec<Step>, String)> =
            all.iter().filter(|(p, k)| f(at(body, p), k)).collect();
        (!fits.is_empty()).then(|| (*rng.pick(&fits)).clone())
    };
    match class {
        Class::Drop => {
            let (p, _) = pick_where(
                rng,
                &|v, _| v.as_object().is_some_and(|o| !o.is_empty()),
                body,
            )?;
            let o = at(body, &p).as_object_mut()?;
            let keys: Vec<String> = o.keys().cloned().collect();
            let k = rng.pick(&keys).clone();
            o.remove(&k);
            Some(format!("dropped {}.{k}", show(&p)))
        }
        Class::Duplicate => {
            let (p, _) = pick_where(
                rng,
                &|v, _| v.as_array().is_some_and(|a| !a.is_empty()),
                body,
            )?;
            let a = at(body, &p).as_array_mut()?;
            let i = rng.below(a.len());
            let copy = a[i].clone();
            a.insert(i + 1, copy);
            Some(format!("duplicated {}[{i}]", show(&p)))
        }
        Class::Retype => {
            let (p, _) = pick_where(rng, &|_, _| true, body)?;
            let v = at(body, &p);
            *v = other_type(rng, v);
            Some(format!("retyped {} to {}", show(&p), short(v)))
        }
        Class::Extreme => {
            let (p, _) = pick_where(
                rng,
                &|v, _| {
                    v.is_number()
                        || v.as_str().is_some_and(|s| {
                            s.starts_with(|c: char| c.is_ascii_digit())
                                && s.len() < 20
                                && !s.contains(['T', ':'])
                        })
                },
                body,
            )?;
            let v = at(body, &p);
            *v = if v.is_number() {
                let n = *rng.pick(NUMBERS);
                serde_json::from_str(n).unwrap_or(json!(n))
            } else {
                json!(rng.pick(QUANTITIES))
            };
            Some(format!("{} = {}", show(&p), short(v)))
        }
        Class::Strings => {
            let (p, _) = pick_where(rng, &|v, _| v.is_string(), body)?;
            let v = at(body, &p);
            *v = json!(weird_string(rng));
            Some(format!("{} = {}", show(&p), short(v)))
        }
        Class::Times => {
            let (p, _) = pick_where(
                rng,
                &|v, k| {
                    k.ends_with("Time")
                        || k.ends_with("Timestamp")
                        || v.as_str().is_some_and(|s| {
                            s.len() > 15 && s.as_bytes().get(4) == Some(&b'-') && s.contains('T')
                        })
                },
                body,
            )?;
            let v = at(body, &p);
            *v = json!(rng.pick(TIMES));
            Some(format!("{} = {}", show(&p), short(v)))
        }
        Class::Enums => {
            let (p, _) = pick_where(rng, &|v, k| v.is_string() && ENUM_KEYS.contains(&k), body)?;
            let v = at(body, &p);
            *v = json!(rng.pick(ENUMS));
            Some(format!("{} = {}", show(&p), short(v)))
        }
        Class::Nulls => {
            let (p, _) = pick_where(
                rng,
                &|v, k| (v.is_array() || v.is_object()) && !k.is_empty(),
                body,
            )?;
            *at(body, &p) = Value::Null;
            Some(format!("{} = null", show(&p)))
        }
        Class::Unknown => {
            let (p, k) = pick_where(rng, &|v, k| v.is_object() && !FREE_FORM.contains(&k), body)?;
            let o = at(body, &p).as_object_mut()?;
            let name = *rng.pick(&[
                "futureField",
                "x-other-controller",
                "managedFields",
                "kubelet",
                "unknown",
                "",
            ]);
            let value = match rng.below(4) {
                0 => json!({"nested": [1, {"deep": null}]}),
                1 => json!("text"),
                2 => json!(null),
                _ => json!([{"a": 1}]),
            };
            // Never over a field the schema has (that would be another class).
            if o.contains_key(name) {
                return None;
            }
            o.insert(name.to_string(), value);
            Some(format!("added {}.{name} (under {k:?})", show(&p)))
        }
        Class::Huge => {
            let items = body.get_mut("items")?.as_array_mut()?;
            if items.is_empty() {
                return None;
            }
            let target = 500 + rng.below(MAX_ITEMS - 500);
            let unique = rng.below(2) == 0;
            let original = items.len();
            let mut n = 0;
            while items.len() < target {
                let mut copy = items[n % original].clone();
                if unique {
                    if let Some(name) = copy.pointer_mut("/metadata/name") {
                        *name = json!(format!("{}-f{n}", name.as_str().unwrap_or("x")));
                    }
                    if let Some(uid) = copy.pointer_mut("/metadata/uid") {
                        *uid = json!(format!("uid-f{n}"));
                    }
                }
                items.push(copy);
                n += 1;
            }
            Some(format!("items × {target} (unique names: {unique})"))
        }
        Class::Garbage => {
            let text = serde_json::to_string(body).unwrap_or_default();
            let raw = match rng.below(9) {
                0 => String::new(),
                1 => "<html><body>502 Bad Gateway</body></html>".into(),
                2 => text.chars().take(rng.below(text.chars().count())).collect(),
                3 => "null".into(),
                4 => "[]".into(),
                5 => r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"oops","code":500}"#.into(),
                6 => r#"{"items":{},"metadata":[]}"#.into(),
                7 => format!("{text}{text}"),
                _ => "\u{feff}".to_string() + &text,
            };
            *body = Value::String(raw);
            Some("body replaced".into())
        }
        Class::Paging => {
            let o = body.as_object_mut()?;
            if !o.contains_key("items") {
                return None;
            }
            let meta = o
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if !meta.is_object() {
                *meta = Value::Object(Map::new());
            }
            meta["continue"] = json!("looping");
            Some("continue token loops".into())
        }
    }
}

/// A value, short, for the report.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!(
            "{}… ({} chars)",
            text.chars().take(40).collect::<String>(),
            text.len()
        )
    } else {
        text
    }
}
