//! Structural-schema handling for custom resources: pruning of unknown fields and defaulting,
//! as the API server does with a CRD's `openAPIV3Schema`.

use serde_json::Value;

/// Prunes fields the schema does not declare and applies `default`s. Returns the pruned field
/// paths (`spec.foo`), which `fieldValidation=Strict` turns into an error.
pub fn prune_and_default(obj: &mut Value, schema: &Value) -> Vec<String> {
    let mut unknown = Vec::new();
    walk(obj, schema, "", &mut unknown, true);
    unknown
}

fn preserves(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

fn walk(v: &mut Value, s: &Value, path: &str, unknown: &mut Vec<String>, root: bool) {
    match v {
        Value::Object(map) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties");
            let embedded = s
                .get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true);
            if let Some(props) = props {
                for (k, ps) in props {
                    let missing = map.get(k).is_none_or(|x| {
                        x.is_null() && ps.get("nullable").and_then(Value::as_bool) != Some(true)
                    });
                    if missing {
                        if let Some(d) = ps.get("default") {
                            map.insert(k.clone(), d.clone());
                        } else {
                            map.remove(k);
                        }
                    }
                }
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let child_path = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if (root || embedded) && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child_schema = props
                    .and_then(|p| p.get(&k))
                    .or_else(|| additional.filter(|a| a.is_object()));
                match child_schema {
                    Some(cs) => {
                        if let Some(child) = map.get_mut(&k) {
                            walk(child, cs, &child_path, unknown, false);
                        }
                    }
                    None => {
                        let keep =
                            preserves(s) || additional.and_then(Value::as_bool) == Some(true);
                        if !keep {
                            map.remove(&k);
                            unknown.push(child_path);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item, is, &format!("{path}[{i}]"), unknown, false);
                }
            }
        }
        _ => {}
    }
}

/// Checks `required` and `enum` constraints (the part of OpenAPI validation the Karpenter CRDs
/// lean on most), returning `(field, message)` causes.
pub fn validate(obj: &Value, schema: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check(obj, schema, "", &mut errs);
    errs
}

fn check(v: &Value, s: &Value, path: &str, errs: &mut Vec<(String, String)>) {
    if let Some(allowed) = s.get("enum").and_then(Value::as_array) {
        if !v.is_null() && !allowed.contains(v) {
            let list: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
            errs.push((
                path.to_string(),
                format!(
                    "Unsupported value: {v}: supported values: {}",
                    list.join(", ")
                ),
            ));
        }
    }
    match v {
        Value::Object(map) => {
            if let Some(req) = s.get("required").and_then(Value::as_array) {
                for r in req.iter().filter_map(Value::as_str) {
                    if !map.contains_key(r) {
                        let p = if path.is_empty() {
                            r.to_string()
                        } else {
                            format!("{path}.{r}")
                        };
                        errs.push((p, "Required value".into()));
                    }
                }
            }
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, child) in map {
                    if let Some(cs) = props.get(k) {
                        let p = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        check(child, cs, &p, errs);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, is, &format!("{path}[{i}]"), errs);
                }
            }
        }
        _ => {}
    }
}
