//! Per-kind defaulting, validation and status handling of the built-in types (what the API
//! server's registry strategies and default admission plugins do).

use super::selector::LabelSelector;
use super::util::{labels, meta_str, now_rfc3339, obj_at, random_u64};
use serde_json::{json, Map, Value};

/// One field error of an `Invalid` (422) response.
#[derive(Debug, Clone)]
pub struct FieldError {
    pub field: String,
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueForbidden`, `FieldValueNotSupported`.
    pub reason: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn required(field: &str) -> Self {
        FieldError {
            field: field.into(),
            reason: "FieldValueRequired",
            message: "Required value".into(),
        }
    }

    pub fn invalid(field: &str, value: &Value, detail: &str) -> Self {
        FieldError {
            field: field.into(),
            reason: "FieldValueInvalid",
            message: format!("Invalid value: {}: {detail}", go_value(value)),
        }
    }

    pub fn forbidden(field: &str, detail: &str) -> Self {
        FieldError {
            field: field.into(),
            reason: "FieldValueForbidden",
            message: format!("Forbidden: {detail}"),
        }
    }
}

/// Roughly how Go's `%#v` prints a value in field errors.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Object(m) if m.values().all(Value::is_string) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", go_value(v)))
                .collect();
            format!("map[string]string{{{}}}", inner.join(", "))
        }
        other => other.to_string(),
    }
}

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// Name validation (`metadata.name`), per kind.
pub fn validate_name(kind: &str, name: &str) -> Option<FieldError> {
    let label_kinds = ["Namespace", "Service"];
    if label_kinds.contains(&kind) {
        if !is_dns1123_label(name) {
            return Some(FieldError::invalid(
                "metadata.name",
                &Value::String(name.into()),
                DNS1123_LABEL_MSG,
            ));
        }
    } else if !is_dns1123_subdomain(name) {
        return Some(FieldError::invalid(
            "metadata.name",
            &Value::String(name.into()),
            DNS1123_SUBDOMAIN_MSG,
        ));
    }
    None
}

fn set_default(m: &mut Map<String, Value>, key: &str, v: Value) {
    if !m.contains_key(key) || m[key].is_null() {
        m.insert(key.into(), v);
    }
}

/// Defaults of a container (`SetDefaults_Container` and friends).
fn default_container(c: &mut Value) {
    let Some(m) = c.as_object_mut() else { return };
    let image = m
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let last = image.rsplit('/').next().unwrap_or("");
    let tag_latest = !last.contains(':') && !image.contains('@') || last.ends_with(":latest");
    set_default(
        m,
        "imagePullPolicy",
        Value::String(if tag_latest { "Always" } else { "IfNotPresent" }.into()),
    );
    set_default(m, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(m, "terminationMessagePolicy", json!("File"));
    set_default(m, "resources", json!({}));
    // Limits without requests default the requests.
    if let Some(res) = m.get_mut("resources").and_then(Value::as_object_mut) {
        if let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() {
            let req = res
                .entry("requests")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(req) = req.as_object_mut() {
                for (k, v) in limits {
                    req.entry(k).or_insert(v);
                }
            }
        }
    }
    if let Some(ports) = m.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports {
            if let Some(p) = p.as_object_mut() {
                set_default(p, "protocol", json!("TCP"));
            }
        }
    }
}

/// Defaults of a pod spec (also applied to templates).
pub fn default_pod_spec(spec: &mut Value) {
    let Some(m) = spec.as_object_mut() else {
        return;
    };
    set_default(m, "restartPolicy", json!("Always"));
    set_default(m, "terminationGracePeriodSeconds", json!(30));
    set_default(m, "dnsPolicy", json!("ClusterFirst"));
    set_default(m, "securityContext", json!({}));
    set_default(m, "schedulerName", json!("default-scheduler"));
    for key in ["containers", "initContainers"] {
        if let Some(cs) = m.get_mut(key).and_then(Value::as_array_mut) {
            for c in cs {
                default_container(c);
            }
        }
    }
}

/// Admission on a new pod: service account, priority, default not-ready/unreachable tolerations.
fn admit_pod(spec: &mut Value) {
    let Some(m) = spec.as_object_mut() else {
        return;
    };
    let sa = m
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .or_else(|| m.get("serviceAccount").and_then(Value::as_str))
        .unwrap_or("default")
        .to_string();
    m.insert("serviceAccountName".into(), json!(sa));
    m.insert("serviceAccount".into(), json!(sa));
    set_default(m, "enableServiceLinks", json!(true));
    set_default(m, "preemptionPolicy", json!("PreemptLowerPriority"));
    let prio = match m.get("priorityClassName").and_then(Value::as_str) {
        Some("system-node-critical") => 2_000_001_000,
        Some("system-cluster-critical") => 2_000_000_000,
        _ => 0,
    };
    set_default(m, "priority", json!(prio));
    let tols = m
        .entry("tolerations")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(tols) = tols.as_array_mut() {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let has = tols.iter().any(|t| {
                let k = t.get("key").and_then(Value::as_str);
                let e = t.get("effect").and_then(Value::as_str);
                let op = t.get("operator").and_then(Value::as_str);
                (k == Some(key) || (k.is_none() && op == Some("Exists")))
                    && (e.is_none() || e == Some("NoExecute"))
            });
            if !has {
                tols.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
            }
        }
    }
}

/// `status.qosClass` of a pod.
pub fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let req = c.pointer("/resources/requests").and_then(Value::as_object);
        let lim = c.pointer("/resources/limits").and_then(Value::as_object);
        if req.is_some_and(|r| !r.is_empty()) || lim.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        for r in ["cpu", "memory"] {
            let l = lim.and_then(|l| l.get(r));
            let q = req.and_then(|q| q.get(r));
            if l.is_none() || (q.is_some() && q != l) {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed && !containers.is_empty() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn validate_pod_spec(spec: Option<&Value>, prefix: &str, errs: &mut Vec<FieldError>) {
    let Some(spec) = spec else {
        errs.push(FieldError::required(&format!("{prefix}containers")));
        return;
    };
    match spec.get("containers").and_then(Value::as_array) {
        Some(cs) if !cs.is_empty() => {
            for (i, c) in cs.iter().enumerate() {
                if c.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    errs.push(FieldError::required(&format!(
                        "{prefix}containers[{i}].name"
                    )));
                }
                if c.get("image")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    errs.push(FieldError::required(&format!(
                        "{prefix}containers[{i}].image"
                    )));
                }
            }
        }
        _ => errs.push(FieldError::required(&format!("{prefix}containers"))),
    }
}

fn validate_selector_template(obj: &Value, errs: &mut Vec<FieldError>) {
    let sel = obj.pointer("/spec/selector");
    match sel {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.selector")),
        Some(s) => {
            let empty = s
                .get("matchLabels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
                && s.get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
            if empty {
                errs.push(FieldError::invalid(
                    "spec.selector",
                    s,
                    "empty selector is invalid for deployment",
                ));
            } else if let Ok(parsed) = LabelSelector::from_object(Some(s)) {
                let tl = obj
                    .pointer("/spec/template/metadata/labels")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                if !parsed.matches(&tl) {
                    errs.push(FieldError::invalid(
                        "spec.template.metadata.labels",
                        &Value::Object(tl),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
        }
    }
    validate_pod_spec(
        obj.pointer("/spec/template/spec"),
        "spec.template.spec.",
        errs,
    );
}

/// Defaults and validation on create (and, for defaults, on update too). Returns field errors.
pub fn prepare(kind: &str, obj: &mut Value, create: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match kind {
        "Pod" => {
            if let Some(spec) = obj.get_mut("spec") {
                default_pod_spec(spec);
                if create {
                    admit_pod(spec);
                }
            }
            validate_pod_spec(obj.get("spec"), "spec.", &mut errs);
            if create {
                let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
                obj["status"] = json!({"phase": "Pending", "qosClass": qos});
            }
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => {
            if let Some(spec) = obj.pointer_mut("/spec/template/spec") {
                default_pod_spec(spec);
            }
            let spec = obj_at(obj, &["spec"]);
            if kind != "DaemonSet" {
                set_default(spec, "replicas", json!(1));
            }
            set_default(spec, "revisionHistoryLimit", json!(10));
            match kind {
                "Deployment" => {
                    set_default(spec, "progressDeadlineSeconds", json!(600));
                    set_default(
                        spec,
                        "strategy",
                        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
                    );
                    let strategy = spec.get("strategy").cloned().unwrap_or(Value::Null);
                    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
                        && strategy.get("rollingUpdate").is_none()
                    {
                        spec["strategy"]["rollingUpdate"] =
                            json!({"maxUnavailable": "25%", "maxSurge": "25%"});
                    }
                }
                "DaemonSet" => set_default(
                    spec,
                    "updateStrategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
                ),
                "StatefulSet" => {
                    set_default(spec, "podManagementPolicy", json!("OrderedReady"));
                    set_default(
                        spec,
                        "updateStrategy",
                        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
                    );
                }
                _ => {}
            }
            if kind == "ReplicaSet" {
                spec.remove("revisionHistoryLimit");
            }
            validate_selector_template(obj, &mut errs);
            if create {
                obj.as_object_mut().unwrap().remove("status");
            }
        }
        "PodDisruptionBudget" => {
            let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
            if spec.get("minAvailable").is_some_and(|v| !v.is_null())
                && spec.get("maxUnavailable").is_some_and(|v| !v.is_null())
            {
                errs.push(FieldError::invalid(
                    "spec",
                    &spec,
                    "minAvailable and maxUnavailable cannot be both set",
                ));
            }
            if create {
                obj.as_object_mut().unwrap().remove("status");
            }
        }
        "Namespace" => {
            let name = meta_str(obj, "name").to_string();
            obj_at(obj, &["metadata", "labels"])
                .insert("kubernetes.io/metadata.name".into(), Value::String(name));
            obj_at(obj, &["spec"]).insert("finalizers".into(), json!(["kubernetes"]));
            if create {
                obj["status"] = json!({"phase": "Active"});
            }
        }
        "Service" => {
            let spec = obj_at(obj, &["spec"]);
            set_default(spec, "type", json!("ClusterIP"));
            set_default(spec, "sessionAffinity", json!("None"));
            set_default(spec, "ipFamilies", json!(["IPv4"]));
            set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
            set_default(spec, "internalTrafficPolicy", json!("Cluster"));
            if create && !spec.contains_key("clusterIP") {
                let r = random_u64();
                let ip = format!("10.100.{}.{}", (r >> 8) % 256, (r % 254) + 1);
                spec.insert("clusterIP".into(), json!(ip));
                spec.insert("clusterIPs".into(), json!([ip]));
            }
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports {
                    if let Some(p) = p.as_object_mut() {
                        set_default(p, "protocol", json!("TCP"));
                        if let Some(port) = p.get("port").cloned() {
                            set_default(p, "targetPort", port);
                        }
                    }
                }
            }
            if create {
                obj["status"] = json!({"loadBalancer": {}});
            }
        }
        "StorageClass" => {
            // The API server's defaults (`SetDefaults_StorageClass`).
            let m = obj.as_object_mut().unwrap();
            set_default(m, "reclaimPolicy", json!("Delete"));
            set_default(m, "volumeBindingMode", json!("Immediate"));
        }
        "Node" if create => {
            let spec = obj_at(obj, &["spec"]);
            spec.retain(|_, v| !v.is_null());
        }
        "CustomResourceDefinition" => {
            let name = meta_str(obj, "name").to_string();
            let plural = obj
                .pointer("/spec/names/plural")
                .and_then(Value::as_str)
                .unwrap_or("");
            let group = obj
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name != format!("{plural}.{group}") {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    &Value::String(name.clone()),
                    "must be spec.names.plural+\".\"+spec.group",
                ));
            }
            if create {
                let names = obj.pointer("/spec/names").cloned().unwrap_or(json!({}));
                let storage: Vec<Value> = obj
                    .pointer("/spec/versions")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                            .filter_map(|v| v.get("name").cloned())
                            .collect()
                    })
                    .unwrap_or_default();
                let now = now_rfc3339();
                obj["status"] = json!({
                    "acceptedNames": names,
                    "conditions": [
                        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts", "message": "no conflicts found"},
                        {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
                    ],
                    "storedVersions": storage,
                });
            }
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                set_default(spec, "conversion", json!({"strategy": "None"}));
            }
        }
        _ => {}
    }
    errs
}

/// Pod spec changes an update may make (`spec: Forbidden: pod updates may not change fields…`).
pub fn validate_pod_update(old: &Value, new: &Value) -> Option<FieldError> {
    let strip = |spec: &Value| -> Value {
        let mut s = spec.clone();
        for key in ["containers", "initContainers"] {
            if let Some(cs) = s.get_mut(key).and_then(Value::as_array_mut) {
                for c in cs {
                    if let Some(c) = c.as_object_mut() {
                        c.remove("image");
                    }
                }
            }
        }
        if let Some(m) = s.as_object_mut() {
            m.remove("activeDeadlineSeconds");
            m.remove("tolerations");
            m.remove("terminationGracePeriodSeconds");
        }
        s
    };
    let (o, n) = (
        old.get("spec").cloned().unwrap_or(Value::Null),
        new.get("spec").cloned().unwrap_or(Value::Null),
    );
    if strip(&o) != strip(&n) {
        return Some(FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        ));
    }
    None
}

/// Immutable fields of controllers.
pub fn validate_immutable(kind: &str, old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if matches!(
        kind,
        "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet"
    ) {
        let (o, n) = (old.pointer("/spec/selector"), new.pointer("/spec/selector"));
        if o != n {
            errs.push(FieldError::invalid(
                "spec.selector",
                n.unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
    if kind == "Pod" {
        errs.extend(validate_pod_update(old, new));
    }
    errs
}

/// Total requests of a pod for one resource, in base units (cores, bytes, count).
pub fn pod_request(pod: &Value, resource: &str) -> f64 {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let sum: f64 = spec
        .get("containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| container_request(c, resource))
                .sum::<f64>()
        })
        .unwrap_or(0.0);
    let init_max = spec
        .get("initContainers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| container_request(c, resource))
                .fold(0.0, f64::max)
        })
        .unwrap_or(0.0);
    let overhead = spec
        .pointer(&format!("/overhead/{}", resource.replace('/', "~1")))
        .and_then(parse_quantity)
        .unwrap_or(0.0);
    sum.max(init_max) + overhead
}

fn container_request(c: &Value, resource: &str) -> f64 {
    let res = c.get("resources");
    res.and_then(|r| r.get("requests"))
        .and_then(|r| r.get(resource))
        .or_else(|| {
            res.and_then(|r| r.get("limits"))
                .and_then(|r| r.get(resource))
        })
        .and_then(parse_quantity)
        .unwrap_or(0.0)
}

/// Parses a Kubernetes quantity (`100m`, `1Gi`, `2`, `1e3`) into a float of base units.
pub fn parse_quantity(v: &Value) -> Option<f64> {
    let s = match v {
        Value::Number(n) => return n.as_f64(),
        Value::String(s) => s.trim(),
        _ => return None,
    };
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "u" => 1e-6,
        "n" => 1e-9,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with('e') || e.starts_with('E') => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

/// `true` when the pod's `Ready` condition is `True`.
pub fn pod_ready(pod: &Value) -> bool {
    condition_status(pod, "Ready") == Some("True")
}

pub fn condition_status<'a>(obj: &'a Value, ctype: &str) -> Option<&'a str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(ctype))?
        .get("status")?
        .as_str()
}

/// Sets (or updates) a condition; keeps `lastTransitionTime` when the status did not change.
pub fn set_condition(obj: &mut Value, ctype: &str, status: &str, reason: &str, message: &str) {
    let now = now_rfc3339();
    let st = obj_at(obj, &["status"]);
    let conds = st
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conds.is_array() {
        *conds = Value::Array(Vec::new());
    }
    let arr = conds.as_array_mut().unwrap();
    let mut c =
        json!({"type": ctype, "status": status, "lastProbeTime": null, "lastTransitionTime": now});
    if !reason.is_empty() {
        c["reason"] = json!(reason);
    }
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    match arr
        .iter_mut()
        .find(|x| x.get("type").and_then(Value::as_str) == Some(ctype))
    {
        Some(existing) => {
            if existing.get("status").and_then(Value::as_str) == Some(status) {
                c["lastTransitionTime"] = existing
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(json!(now));
            }
            *existing = c;
        }
        None => arr.push(c),
    }
}

/// Pod labels match a workload's selector.
pub fn selector_matches(sel: Option<&Value>, obj: &Value) -> bool {
    LabelSelector::from_object(sel)
        .map(|s| s.matches(&labels(obj)))
        .unwrap_or(false)
}
