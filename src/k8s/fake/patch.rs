//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch
//! for the built-in types (merge keys of the lists kubectl touches).

use serde_json::{Map, Value};

/// RFC 7386.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let t = target.as_object_mut().unwrap();
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        other => *target = other.clone(),
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| format!("invalid JSON pointer {path:?}"))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn parent_mut<'a>(doc: &'a mut Value, tokens: &[String]) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(t)
                .ok_or_else(|| format!("doc is missing path: {t}"))?,
            Value::Array(a) => {
                let i: usize = t.parse().map_err(|_| format!("invalid index {t}"))?;
                a.get_mut(i)
                    .ok_or_else(|| format!("index out of range: {i}"))?
            }
            _ => return Err(format!("doc is missing path: {t}")),
        };
    }
    Ok(cur)
}

fn get_at(doc: &Value, path: &str) -> Result<Value, String> {
    let tokens = split_pointer(path)?;
    let mut cur = doc;
    for t in &tokens {
        cur = match cur {
            Value::Object(m) => m.get(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("doc is missing path: \"{path}\": missing value"))?;
    }
    Ok(cur.clone())
}

fn add_at(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let tokens = split_pointer(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        *doc = value;
        return Ok(());
    };
    let parent = parent_mut(doc, parents)
        .map_err(|_| format!("doc is missing path: \"{path}\": missing value"))?;
    match parent {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
            } else {
                let i: usize = last.parse().map_err(|_| format!("invalid index {last}"))?;
                if i > a.len() {
                    return Err(format!("Unable to access invalid index: {i}"));
                }
                a.insert(i, value);
            }
        }
        _ => return Err(format!("doc is missing path: \"{path}\": missing value")),
    }
    Ok(())
}

fn remove_at(doc: &mut Value, path: &str) -> Result<Value, String> {
    let tokens = split_pointer(path)?;
    let Some((last, parents)) = tokens.split_last() else {
        return Err("cannot remove the root".into());
    };
    let parent = parent_mut(doc, parents)
        .map_err(|_| format!("doc is missing path: \"{path}\": missing value"))?;
    match parent {
        Value::Object(m) => m
            .remove(last)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {last}: missing value")),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| format!("invalid index {last}"))?;
            if i >= a.len() {
                return Err(format!("Unable to access invalid index: {i}"));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("doc is missing path: \"{path}\": missing value")),
    }
}

/// RFC 6902.
pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("json patch must be an array of operations")?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("");
        let from = op.get("from").and_then(Value::as_str).unwrap_or("");
        let value = op.get("value").cloned();
        match kind {
            "add" => add_at(
                doc,
                path,
                value.ok_or("add operation does not apply: missing value")?,
            )?,
            "remove" => {
                remove_at(doc, path)?;
            }
            "replace" => {
                remove_at(doc, path).map_err(|_| {
                    format!("replace operation does not apply: doc is missing key: {path}: missing value")
                })?;
                add_at(
                    doc,
                    path,
                    value.ok_or("replace operation does not apply: missing value")?,
                )?;
            }
            "move" => {
                let v = remove_at(doc, from)?;
                add_at(doc, path, v)?;
            }
            "copy" => {
                let v = get_at(doc, from)?;
                add_at(doc, path, v)?;
            }
            "test" => {
                let got = get_at(doc, path)?;
                if Some(&got) != value.as_ref() {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

/// How a list field merges in a strategic merge patch: by a key, as a set of primitives, or
/// replaced whole.
enum ListStrategy {
    Key(&'static str),
    PrimitiveSet,
    Replace,
}

fn list_strategy(field: &str, items: &[Value]) -> ListStrategy {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "readinessGates"
        | "schedulingGates" => {
            if field == "readinessGates" {
                ListStrategy::Key("conditionType")
            } else {
                ListStrategy::Key("name")
            }
        }
        "ports" => {
            if items.iter().any(|i| i.get("containerPort").is_some()) {
                ListStrategy::Key("containerPort")
            } else {
                ListStrategy::Key("port")
            }
        }
        "volumeMounts" => ListStrategy::Key("mountPath"),
        "volumeDevices" => ListStrategy::Key("devicePath"),
        "hostAliases" => ListStrategy::Key("ip"),
        "conditions" | "addresses" => ListStrategy::Key("type"),
        "ownerReferences" => ListStrategy::Key("uid"),
        "topologySpreadConstraints" => ListStrategy::Key("topologyKey"),
        "finalizers" => ListStrategy::PrimitiveSet,
        _ => ListStrategy::Replace,
    }
}

/// Strategic merge patch (the directives kubectl emits: `$patch`, `$retainKeys`,
/// `$setElementOrder/…`, `$deleteFromPrimitiveList/…`, null deletes).
pub fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut np = p.clone();
        np.remove("$patch");
        *target = Value::Object(np);
        return Ok(());
    }
    if p.get("$patch").and_then(Value::as_str) == Some("delete") {
        *target = Value::Null;
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let retain: Option<Vec<String>> = p.get("$retainKeys").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect()
    });
    let t = target.as_object_mut().unwrap();
    if let Some(keep) = &retain {
        t.retain(|k, _| keep.contains(k));
    }
    let mut orders: Vec<(String, Value)> = Vec::new();
    for (k, v) in p {
        if k == "$retainKeys" || k == "$patch" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            orders.push((field.to_string(), v.clone()));
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(list), Some(del)) =
                (t.get_mut(field).and_then(Value::as_array_mut), v.as_array())
            {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        match v {
            Value::Object(_) => {
                let entry = t.entry(k.clone()).or_insert(Value::Null);
                strategic_merge(entry, v)?;
                if entry.is_null() {
                    t.remove(k);
                }
            }
            Value::Array(items) => {
                let existing = t
                    .get(k)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let merged = merge_list(k, existing, items)?;
                t.insert(k.clone(), Value::Array(merged));
            }
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
    for (field, order) in orders {
        if let (Some(list), Some(order)) = (
            t.get_mut(&field).and_then(Value::as_array_mut),
            order.as_array(),
        ) {
            reorder(&field, list, order);
        }
    }
    Ok(())
}

fn merge_list(
    field: &str,
    mut existing: Vec<Value>,
    patch: &[Value],
) -> Result<Vec<Value>, String> {
    let mut all = existing.clone();
    all.extend(patch.iter().cloned());
    match list_strategy(field, &all) {
        ListStrategy::Replace => Ok(patch
            .iter()
            .filter(|x| x.get("$patch").is_none())
            .cloned()
            .collect()),
        ListStrategy::PrimitiveSet => {
            for x in patch {
                if !existing.contains(x) {
                    existing.push(x.clone());
                }
            }
            Ok(existing)
        }
        ListStrategy::Key(key) => {
            if patch
                .iter()
                .any(|x| x.get("$patch").and_then(Value::as_str) == Some("replace"))
            {
                return Ok(patch
                    .iter()
                    .filter(|x| x.get("$patch").is_none())
                    .cloned()
                    .collect());
            }
            for item in patch {
                let Some(kv) = item.get(key) else {
                    return Err(format!(
                        "map: {item} does not contain declared merge key: {key}"
                    ));
                };
                let pos = existing.iter().position(|e| e.get(key) == Some(kv));
                let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
                match (pos, delete) {
                    (Some(i), true) => {
                        existing.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => strategic_merge(&mut existing[i], item)?,
                    (None, false) => {
                        let mut fresh = Value::Object(Map::new());
                        strategic_merge(&mut fresh, item)?;
                        existing.push(fresh);
                    }
                }
            }
            Ok(existing)
        }
    }
}

fn reorder(field: &str, list: &mut [Value], order: &[Value]) {
    let key = match list_strategy(field, list) {
        ListStrategy::Key(k) => Some(k),
        ListStrategy::PrimitiveSet => None,
        ListStrategy::Replace => return,
    };
    let id = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let rank = |v: &Value| -> usize {
        let i = id(v);
        order
            .iter()
            .position(|o| match key {
                Some(k) => o.get(k) == Some(&i),
                None => *o == i,
            })
            .unwrap_or(usize::MAX)
    };
    list.sort_by_key(rank);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_containers_by_name() {
        let mut t =
            json!({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}});
        strategic_merge(
            &mut t,
            &json!({"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"b","image":"z"}]}}),
        )
        .unwrap();
        assert_eq!(
            t,
            json!({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"z"}]}})
        );
    }

    #[test]
    fn json_patch_ops() {
        let mut d = json!({"a":[1,2],"b":{"c":1}});
        json_patch(
            &mut d,
            &json!([{"op":"add","path":"/a/-","value":3},{"op":"replace","path":"/b/c","value":2},{"op":"remove","path":"/a/0"},{"op":"test","path":"/b/c","value":2}]),
        )
        .unwrap();
        assert_eq!(d, json!({"a":[2,3],"b":{"c":2}}));
        assert!(json_patch(&mut d, &json!([{"op":"test","path":"/b/c","value":9}])).is_err());
    }
}
