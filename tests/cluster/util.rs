//! Small helpers: time formatting (RFC 3339, kubectl's human durations), ids, query strings,
//! JSON paths.

use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Seconds (with fraction) since the Unix epoch, now.
pub fn now_f64() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `2024-08-03T16:12:40Z`, the format of `metav1.Time`.
pub fn rfc3339(secs: i64) -> String {
    kubectl_karpenter::model::time::format_rfc3339(secs)
}

/// `metav1.MicroTime` (used by leases and events).
pub fn rfc3339_micro(t: f64) -> String {
    let secs = t.floor() as i64;
    let micros = ((t - secs as f64) * 1e6) as i64;
    let base = rfc3339(secs);
    format!("{}.{:06}Z", &base[..base.len() - 1], micros)
}

pub fn now_rfc3339() -> String {
    rfc3339(now_secs())
}

/// Parses RFC 3339 (`Z` or `±hh:mm` offsets, optional fraction) into Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    kubectl_karpenter::model::time::parse_rfc3339(s)
}

/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration`, what the AGE column shows.
pub fn human_duration(d_secs: i64) -> String {
    if d_secs < -1 {
        return "<invalid>".into();
    }
    kubectl_karpenter::cli::output::kubectl_age(d_secs)
}

/// Age of an object as kubectl prints it (`<unknown>` without a timestamp).
pub fn age(obj: &Value) -> String {
    match obj
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
    {
        Some(t) => human_duration(now_secs() - t),
        None => "<unknown>".into(),
    }
}

static RNG: AtomicU64 = AtomicU64::new(0);

/// splitmix64 over a process-wide counter seeded from the clock: unique enough for uids and
/// generated names, no dependency.
pub fn random_u64() -> u64 {
    if RNG.load(Ordering::Relaxed) == 0 {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_nanos() as u64
            ^ ((std::process::id() as u64) << 32);
        let _ = RNG.compare_exchange(0, seed | 1, Ordering::Relaxed, Ordering::Relaxed);
    }
    let mut z = RNG.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A random RFC 4122 version 4 UUID.
pub fn new_uid() -> String {
    let a = random_u64();
    let b = random_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a & 0xfff) as u16,
        ((b >> 48) as u16 & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// The alphabet of `k8s.io/apimachinery/pkg/util/rand` (no vowels, no confusable digits).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.String(n)`: the suffix of `generateName`.
pub fn random_suffix(n: usize) -> String {
    (0..n)
        .map(|_| ALPHANUMS[(random_u64() % ALPHANUMS.len() as u64) as usize] as char)
        .collect()
}

/// `rand.SafeEncodeString`, used for `pod-template-hash` and `controller-revision-hash`.
pub fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| ALPHANUMS[b as usize % ALPHANUMS.len()] as char)
        .collect()
}

/// FNV-1a 32-bit.
pub fn fnv32a(data: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in data {
        h ^= *b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The hash label of a pod template, like the Deployment/DaemonSet controllers compute it.
pub fn template_hash(template: &Value) -> String {
    let mut t = template.clone();
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove("pod-template-hash");
        labels.remove("controller-revision-hash");
    }
    let bytes = serde_json::to_vec(&canonical(&t)).unwrap_or_default();
    safe_encode(&fnv32a(&bytes).to_string())
}

/// Sorted keys, so equal objects serialise equally.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), canonical(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Percent-decoding of one query component (`+` is a space).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a query string into ordered pairs.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

/// Simple base64 (standard alphabet, padded) for continue tokens.
pub fn base64_encode(data: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = match chunk.len() {
            3 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8 | chunk[2] as u32,
            2 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8,
            _ => (chunk[0] as u32) << 16,
        };
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c)? << (18 - 6 * i);
        }
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    Some(out)
}

/// Evaluates the JSONPath subset CRD printer columns use: `.a.b`, `.a[0]`, `.a[*].b`,
/// `.a[?(@.k=="v")].b`. Several matches are joined with commas like the real printer.
pub fn json_path(obj: &Value, path: &str) -> Vec<Value> {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let mut current = vec![obj.clone()];
    let mut rest = path.trim_start_matches('$');
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            rest = &r[end..];
            if key.is_empty() {
                continue;
            }
            current = current.iter().filter_map(|v| v.get(key).cloned()).collect();
        } else if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = find_bracket_end(r) else {
                return Vec::new();
            };
            let inner = &r[..end];
            rest = &r[end + 1..];
            let mut next = Vec::new();
            for v in &current {
                let Some(items) = v.as_array() else { continue };
                if inner == "*" {
                    next.extend(items.iter().cloned());
                } else if let Ok(i) = inner.parse::<i64>() {
                    let idx = if i < 0 { items.len() as i64 + i } else { i };
                    if let Some(x) = usize::try_from(idx).ok().and_then(|i| items.get(i)) {
                        next.push(x.clone());
                    }
                } else if let Some(filter) =
                    inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')'))
                {
                    let filter = filter.trim();
                    let (lhs, rhs, neg) = if let Some((l, r)) = filter.split_once("==") {
                        (l.trim(), r.trim(), false)
                    } else if let Some((l, r)) = filter.split_once("!=") {
                        (l.trim(), r.trim(), true)
                    } else {
                        (filter, "", false)
                    };
                    let sub = lhs.trim_start_matches('@');
                    let want = rhs.trim_matches('"').trim_matches('\'');
                    for item in items {
                        let got = json_path(item, sub);
                        let ok = if rhs.is_empty() {
                            !got.is_empty()
                        } else {
                            got.iter().any(|g| value_text(g) == want) != neg
                        };
                        if ok {
                            next.push(item.clone());
                        }
                    }
                }
            }
            current = next;
        } else {
            return Vec::new();
        }
    }
    current
}

fn find_bracket_end(s: &str) -> Option<usize> {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"') | (None, '\'') => quote = Some(c),
            (None, '[') | (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ']') if depth == 0 => return Some(i),
            (None, ']') => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A scalar as text (strings unquoted), objects as JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `obj.metadata.name` etc. as &str, "" when missing.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Mutable `metadata`, created when missing.
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let m = obj.as_object_mut().unwrap();
    if !m.get("metadata").is_some_and(Value::is_object) {
        m.insert("metadata".into(), Value::Object(Map::new()));
    }
    m.get_mut("metadata").unwrap().as_object_mut().unwrap()
}

/// Ensures `obj[path...]` is an object and returns it.
pub fn obj_at<'a>(obj: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut cur = obj;
    for key in path {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let m = cur.as_object_mut().unwrap();
        if !m.get(*key).is_some_and(Value::is_object) {
            m.insert((*key).to_string(), Value::Object(Map::new()));
        }
        cur = m.get_mut(*key).unwrap();
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    cur.as_object_mut().unwrap()
}

/// Labels of an object (empty map when none).
pub fn labels(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// `metadata.ownerReferences[controller=true]`.
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// Resolves an int-or-percent against `total` (`GetScaledValueFromIntOrPercent`).
pub fn scaled_value(v: &Value, total: i64, round_up: bool) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            if let Some(p) = s.strip_suffix('%') {
                let pct: f64 = p.trim().parse().ok()?;
                let x = pct * total as f64 / 100.0;
                Some(if round_up {
                    x.ceil() as i64
                } else {
                    x.floor() as i64
                })
            } else {
                s.parse().ok()
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trip() {
        let t = parse_rfc3339("2024-08-03T16:12:40Z").unwrap();
        assert_eq!(rfc3339(t), "2024-08-03T16:12:40Z");
        assert_eq!(parse_rfc3339("2024-08-03T18:12:40+02:00"), Some(t));
        assert_eq!(human_duration(601), "10m");
        assert_eq!(human_duration(150), "2m30s");
    }

    #[test]
    fn json_path_filters() {
        let v = serde_json::json!({"status":{"conditions":[{"type":"A","status":"False"},{"type":"Ready","status":"True"}]}});
        let got = json_path(&v, r#".status.conditions[?(@.type=="Ready")].status"#);
        assert_eq!(got, vec![Value::String("True".into())]);
    }

    #[test]
    fn base64() {
        for s in ["", "a", "ab", "abc", "abcd"] {
            assert_eq!(
                base64_decode(&base64_encode(s.as_bytes())).unwrap(),
                s.as_bytes()
            );
        }
    }
}
