//! Label selectors (the `labelSelector` query syntax and `metav1.LabelSelector` objects) and
//! field selectors, over JSON objects: what the API server does with `?labelSelector=` and
//! `?fieldSelector=`. Shared by [`FakeCluster`](super::FakeCluster) and the loopback test
//! cluster (`tests/cluster`), so both answer a LIST the same way.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Eq,
    NotEq,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

#[derive(Debug, Clone)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: Vec<String>,
}

/// A conjunction of requirements; empty matches everything.
#[derive(Debug, Clone, Default)]
pub struct LabelSelector {
    pub reqs: Vec<Requirement>,
    /// A `nil` selector object matches nothing (policy/v1 PDBs treat `{}` as everything).
    pub nothing: bool,
}

impl LabelSelector {
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty() && !self.nothing
    }

    /// Parses the `labelSelector` query syntax.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part)?);
        }
        Ok(LabelSelector {
            reqs,
            nothing: false,
        })
    }

    /// From a `metav1.LabelSelector` object (`matchLabels` + `matchExpressions`).
    pub fn from_object(sel: Option<&Value>) -> Result<Self, String> {
        let Some(sel) = sel.filter(|s| !s.is_null()) else {
            return Ok(LabelSelector {
                reqs: Vec::new(),
                nothing: true,
            });
        };
        let mut reqs = Vec::new();
        if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in ml {
                reqs.push(Requirement {
                    key: k.clone(),
                    op: Op::Eq,
                    values: vec![v.as_str().unwrap_or_default().to_string()],
                });
            }
        }
        if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
                let values: Vec<String> = e
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let op = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                    "In" => Op::In,
                    "NotIn" => Op::NotIn,
                    "Exists" => Op::Exists,
                    "DoesNotExist" => Op::DoesNotExist,
                    other => {
                        return Err(format!("{other:?} is not a valid label selector operator"))
                    }
                };
                reqs.push(Requirement {
                    key: key.to_string(),
                    op,
                    values,
                });
            }
        }
        Ok(LabelSelector {
            reqs,
            nothing: false,
        })
    }

    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        if self.nothing {
            return false;
        }
        self.reqs.iter().all(|r| {
            requirement_matches(r, |k| {
                labels
                    .get(k)
                    .map(|v| v.as_str().unwrap_or_default().to_string())
            })
        })
    }

    /// The string form (`app=x,tier in (a,b)`), as `Scale.status.selector` shows it.
    pub fn to_query(&self) -> String {
        let mut parts: Vec<String> = self
            .reqs
            .iter()
            .map(|r| match r.op {
                Op::Eq => format!("{}={}", r.key, r.values.join(",")),
                Op::NotEq => format!("{}!={}", r.key, r.values.join(",")),
                Op::In => format!("{} in ({})", r.key, r.values.join(",")),
                Op::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Op::Exists => r.key.clone(),
                Op::DoesNotExist => format!("!{}", r.key),
                Op::Gt => format!("{}>{}", r.key, r.values.join(",")),
                Op::Lt => format!("{}<{}", r.key, r.values.join(",")),
            })
            .collect();
        parts.sort();
        parts.join(",")
    }
}

pub fn requirement_matches(r: &Requirement, get: impl Fn(&str) -> Option<String>) -> bool {
    let v = get(&r.key);
    match r.op {
        Op::Eq | Op::In => v.is_some_and(|v| r.values.contains(&v)),
        Op::NotEq | Op::NotIn => v.is_none_or(|v| !r.values.contains(&v)),
        Op::Exists => v.is_some(),
        Op::DoesNotExist => v.is_none(),
        Op::Gt | Op::Lt => {
            let (Some(v), Some(want)) = (v, r.values.first()) else {
                return false;
            };
            match (v.parse::<i64>(), want.parse::<i64>()) {
                (Ok(a), Ok(b)) => {
                    if r.op == Op::Gt {
                        a > b
                    } else {
                        a < b
                    }
                }
                _ => false,
            }
        }
    }
}

fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    let bad = || {
        format!("unable to parse requirement: found '{part}', expected: key, '!', '=', '==', '!=', 'in', 'notin'")
    };
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        if !valid_key(key) {
            return Err(bad());
        }
        return Ok(Requirement {
            key: key.into(),
            op: Op::DoesNotExist,
            values: vec![],
        });
    }
    for (tok, op) in [
        ("!=", Op::NotEq),
        ("==", Op::Eq),
        ("=", Op::Eq),
        (">", Op::Gt),
        ("<", Op::Lt),
    ] {
        if let Some((k, v)) = part.split_once(tok) {
            let k = k.trim();
            if !valid_key(k) {
                return Err(bad());
            }
            return Ok(Requirement {
                key: k.into(),
                op,
                values: vec![v.trim().to_string()],
            });
        }
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let rest = words[1].trim();
        let (op, list) = if let Some(l) = rest.strip_prefix("notin") {
            (Op::NotIn, l)
        } else if let Some(l) = rest.strip_prefix("in") {
            (Op::In, l)
        } else {
            return Err(bad());
        };
        let list = list.trim();
        let inner = list
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(bad)?;
        let values = inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if !valid_key(words[0]) {
            return Err(bad());
        }
        return Ok(Requirement {
            key: words[0].into(),
            op,
            values,
        });
    }
    if !valid_key(part) {
        return Err(bad());
    }
    Ok(Requirement {
        key: part.into(),
        op: Op::Exists,
        values: vec![],
    })
}

/// One `field=value` / `field!=value` term of a field selector.
#[derive(Debug, Clone)]
pub struct FieldReq {
    pub field: String,
    pub value: String,
    pub negate: bool,
}

#[derive(Debug, Clone, Default)]
pub struct FieldSelector {
    pub reqs: Vec<FieldReq>,
}

impl FieldSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, value, negate) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            reqs.push(FieldReq {
                field: field.trim().into(),
                value: value.trim().into(),
                negate,
            });
        }
        Ok(FieldSelector { reqs })
    }

    /// The fields a resource supports (`field label not supported` otherwise).
    pub fn check_supported(&self, kind: &str, builtin: bool) -> Result<(), String> {
        for r in &self.reqs {
            if supported_field(kind, &r.field).is_none() {
                return Err(if builtin {
                    format!("field label not supported: {}", r.field)
                } else {
                    format!(
                        "{:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                        r.field
                    )
                });
            }
        }
        Ok(())
    }

    pub fn matches(&self, kind: &str, obj: &Value) -> bool {
        self.reqs.iter().all(|r| {
            let got = supported_field(kind, &r.field)
                .map(|p| field_value(obj, p))
                .unwrap_or_default();
            (got == r.value) != r.negate
        })
    }
}

/// JSON pointer of a supported field-selector field for `kind`.
fn supported_field(kind: &str, field: &str) -> Option<&'static str> {
    Some(match (kind, field) {
        (_, "metadata.name") => "/metadata/name",
        (_, "metadata.namespace") => "/metadata/namespace",
        ("Pod", "spec.nodeName") => "/spec/nodeName",
        ("Pod", "status.phase") => "/status/phase",
        ("Pod", "spec.schedulerName") => "/spec/schedulerName",
        ("Pod", "spec.serviceAccountName") => "/spec/serviceAccountName",
        ("Pod", "spec.restartPolicy") => "/spec/restartPolicy",
        ("Pod", "spec.hostNetwork") => "/spec/hostNetwork",
        ("Pod", "status.podIP") => "/status/podIP",
        ("Pod", "status.nominatedNodeName") => "/status/nominatedNodeName",
        ("Node", "spec.unschedulable") => "/spec/unschedulable",
        ("Namespace", "status.phase") => "/status/phase",
        ("Event", "involvedObject.kind") => "/involvedObject/kind",
        ("Event", "involvedObject.name") => "/involvedObject/name",
        ("Event", "involvedObject.namespace") => "/involvedObject/namespace",
        ("Event", "involvedObject.uid") => "/involvedObject/uid",
        ("Event", "involvedObject.apiVersion") => "/involvedObject/apiVersion",
        ("Event", "involvedObject.fieldPath") => "/involvedObject/fieldPath",
        ("Event", "involvedObject.resourceVersion") => "/involvedObject/resourceVersion",
        ("Event", "reason") => "/reason",
        ("Event", "type") => "/type",
        ("Event", "source") => "/source/component",
        ("Secret", "type") => "/type",
        ("ReplicaSet", "status.replicas") => "/status/replicas",
        ("Job", "status.successful") => "/status/succeeded",
        _ => return None,
    })
}

fn field_value(obj: &Value, pointer: &str) -> String {
    match obj.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ if pointer == "/spec/unschedulable" || pointer == "/spec/hostNetwork" => "false".into(),
        _ if pointer == "/status/replicas" || pointer == "/status/succeeded" => "0".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selector_syntax() {
        let l = json!({"app": "web", "tier": "front"});
        let l = l.as_object().unwrap();
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("tier notin (front)", false),
            ("app", true),
            ("!app", false),
            ("!missing,app=web", true),
            ("missing!=x", true),
        ] {
            assert_eq!(LabelSelector::parse(sel).unwrap().matches(l), want, "{sel}");
        }
    }
}
