//! Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns
//! `kubectl get` shows, like the API server's printers for built-in kinds and a CRD's
//! `additionalPrinterColumns`.

use super::kinds::condition_status;
use super::resources::Resource;
use super::util::{age, json_path, labels, meta_str, parse_rfc3339, value_text};
use serde_json::{json, Value};

fn col(name: &str, ty: &str, priority: u8) -> Value {
    let mut c =
        json!({"name": name, "type": ty, "format": "", "description": "", "priority": priority});
    if name == "Name" {
        c["format"] = json!("name");
        c["description"] = json!("Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names");
    }
    c
}

fn s(v: impl Into<String>) -> Value {
    Value::String(v.into())
}

fn int(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(v: &str) -> Value {
    if v.is_empty() {
        s("<none>")
    } else {
        s(v)
    }
}

fn containers_images(obj: &Value, ptr: &str) -> (String, String) {
    let cs = obj
        .pointer(ptr)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = cs
        .iter()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    let images: Vec<&str> = cs
        .iter()
        .filter_map(|c| c.get("image").and_then(Value::as_str))
        .collect();
    (names.join(","), images.join(","))
}

fn selector_text(obj: &Value) -> String {
    super::selector::LabelSelector::from_object(obj.pointer("/spec/selector"))
        .map(|s| s.to_query())
        .unwrap_or_default()
}

/// Node STATUS: `Ready`, `NotReady`, `Unknown`, plus `,SchedulingDisabled` when cordoned.
pub fn node_status(node: &Value) -> String {
    let mut st = match condition_status(node, "Ready") {
        Some("True") => "Ready".to_string(),
        Some("False") => "NotReady".to_string(),
        _ => "Unknown".to_string(),
    };
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        st.push_str(",SchedulingDisabled");
    }
    st
}

fn node_roles(node: &Value) -> String {
    let mut roles: Vec<String> = labels(node)
        .iter()
        .filter_map(|(k, v)| {
            if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
                Some(r.to_string())
            } else if k == "kubernetes.io/role" {
                v.as_str().map(str::to_string)
            } else {
                None
            }
        })
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn node_address(node: &Value, ty: &str) -> String {
    node.pointer("/status/addresses")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|x| x.get("type").and_then(Value::as_str) == Some(ty))
                .and_then(|x| x.get("address").and_then(Value::as_str))
        })
        .unwrap_or("<none>")
        .to_string()
}

/// Pod STATUS as `kubectl get pods` shows it.
pub fn pod_status(pod: &Value) -> String {
    let mut reason = pod
        .pointer("/status/reason")
        .and_then(Value::as_str)
        .or_else(|| pod.pointer("/status/phase").and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let mut has_running = false;
    if let Some(cs) = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
    {
        for c in cs.iter().rev() {
            if let Some(r) = c.pointer("/state/waiting/reason").and_then(Value::as_str) {
                reason = r.into();
            } else if let Some(t) = c.pointer("/state/terminated") {
                reason = t
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!(
                            "ExitCode:{}",
                            t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)
                        )
                    });
            } else if c.pointer("/state/running").is_some()
                && c.get("ready").and_then(Value::as_bool) == Some(true)
            {
                has_running = true;
            }
        }
    }
    if reason == "Completed" && has_running {
        reason = "Running".into();
    }
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        if pod.pointer("/status/reason").and_then(Value::as_str) == Some("NodeLost") {
            reason = "Unknown".into();
        } else {
            reason = "Terminating".into();
        }
    }
    reason
}

fn row(res: &Resource, obj: &Value) -> Vec<Value> {
    let name = s(meta_str(obj, "name"));
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => {
            let cs = obj
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let total = obj
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let ready = cs
                .iter()
                .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
                .count();
            let restarts: i64 = cs
                .iter()
                .map(|c| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0))
                .sum();
            let gates = obj
                .pointer("/spec/readinessGates")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            vec![
                name,
                s(format!("{ready}/{total}")),
                s(pod_status(obj)),
                s(restarts.to_string()),
                s(age(obj)),
                or_none(
                    obj.pointer("/status/podIP")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
                or_none(
                    obj.pointer("/spec/nodeName")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
                or_none(
                    obj.pointer("/status/nominatedNodeName")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
                if gates == 0 {
                    s("<none>")
                } else {
                    s(format!("0/{gates}"))
                },
            ]
        }
        ("", "Node") => vec![
            name,
            s(node_status(obj)),
            s(node_roles(obj)),
            s(age(obj)),
            s(obj
                .pointer("/status/nodeInfo/kubeletVersion")
                .and_then(Value::as_str)
                .unwrap_or("")),
            s(node_address(obj, "InternalIP")),
            s(node_address(obj, "ExternalIP")),
            s(obj
                .pointer("/status/nodeInfo/osImage")
                .and_then(Value::as_str)
                .unwrap_or("<unknown>")),
            s(obj
                .pointer("/status/nodeInfo/kernelVersion")
                .and_then(Value::as_str)
                .unwrap_or("<unknown>")),
            s(obj
                .pointer("/status/nodeInfo/containerRuntimeVersion")
                .and_then(Value::as_str)
                .unwrap_or("<unknown>")),
        ],
        ("", "Namespace") => vec![
            name,
            s(obj
                .pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or("")),
            s(age(obj)),
        ],
        ("", "ConfigMap") => {
            let n = obj
                .get("data")
                .and_then(Value::as_object)
                .map_or(0, |m| m.len())
                + obj
                    .get("binaryData")
                    .and_then(Value::as_object)
                    .map_or(0, |m| m.len());
            vec![name, json!(n), s(age(obj))]
        }
        ("", "Service") => {
            let ports: Vec<String> = obj
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            let port = p.get("port").map(value_text).unwrap_or_default();
                            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                            match p.get("nodePort") {
                                Some(np) => format!("{port}:{}/{proto}", value_text(np)),
                                None => format!("{port}/{proto}"),
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let sel = obj
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .map(|m| {
                    let mut v: Vec<String> = m
                        .iter()
                        .map(|(k, v)| format!("{k}={}", value_text(v)))
                        .collect();
                    v.sort();
                    v.join(",")
                })
                .unwrap_or_default();
            vec![
                name,
                s(obj
                    .pointer("/spec/type")
                    .and_then(Value::as_str)
                    .unwrap_or("ClusterIP")),
                or_none(
                    obj.pointer("/spec/clusterIP")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
                s("<none>"),
                or_none(&ports.join(",")),
                s(age(obj)),
                or_none(&sel),
            ]
        }
        ("", "Event") => {
            let last = obj
                .get("lastTimestamp")
                .and_then(Value::as_str)
                .or_else(|| obj.get("eventTime").and_then(Value::as_str))
                .and_then(parse_rfc3339)
                .map(|t| super::util::human_duration(super::util::now_secs() - t))
                .unwrap_or_else(|| "<unknown>".into());
            let io = obj.get("involvedObject").cloned().unwrap_or(json!({}));
            let object = format!(
                "{}/{}",
                io.get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_lowercase(),
                io.get("name").and_then(Value::as_str).unwrap_or("")
            );
            vec![
                s(last),
                s(obj.get("type").and_then(Value::as_str).unwrap_or("")),
                s(obj.get("reason").and_then(Value::as_str).unwrap_or("")),
                s(object),
                s(obj.get("message").and_then(Value::as_str).unwrap_or("")),
            ]
        }
        ("apps", "Deployment") => {
            let (c, i) = containers_images(obj, "/spec/template/spec/containers");
            vec![
                name,
                s(format!(
                    "{}/{}",
                    int(obj, "/status/readyReplicas"),
                    int(obj, "/spec/replicas")
                )),
                json!(int(obj, "/status/updatedReplicas")),
                json!(int(obj, "/status/availableReplicas")),
                s(age(obj)),
                s(c),
                s(i),
                s(selector_text(obj)),
            ]
        }
        ("apps", "ReplicaSet") => {
            let (c, i) = containers_images(obj, "/spec/template/spec/containers");
            vec![
                name,
                json!(int(obj, "/spec/replicas")),
                json!(int(obj, "/status/replicas")),
                json!(int(obj, "/status/readyReplicas")),
                s(age(obj)),
                s(c),
                s(i),
                s(selector_text(obj)),
            ]
        }
        ("apps", "DaemonSet") => {
            let (c, i) = containers_images(obj, "/spec/template/spec/containers");
            let ns = obj
                .pointer("/spec/template/spec/nodeSelector")
                .and_then(Value::as_object)
                .map(|m| {
                    let mut v: Vec<String> = m
                        .iter()
                        .map(|(k, v)| format!("{k}={}", value_text(v)))
                        .collect();
                    v.sort();
                    v.join(",")
                })
                .unwrap_or_default();
            vec![
                name,
                json!(int(obj, "/status/desiredNumberScheduled")),
                json!(int(obj, "/status/currentNumberScheduled")),
                json!(int(obj, "/status/numberReady")),
                json!(int(obj, "/status/updatedNumberScheduled")),
                json!(int(obj, "/status/numberAvailable")),
                or_none(&ns),
                s(age(obj)),
                s(c),
                s(i),
                s(selector_text(obj)),
            ]
        }
        ("apps", "StatefulSet") => {
            let (c, i) = containers_images(obj, "/spec/template/spec/containers");
            vec![
                name,
                s(format!(
                    "{}/{}",
                    int(obj, "/status/readyReplicas"),
                    int(obj, "/spec/replicas")
                )),
                s(age(obj)),
                s(c),
                s(i),
            ]
        }
        ("policy", "PodDisruptionBudget") => {
            let v = |p: &str| {
                obj.pointer(p)
                    .map(value_text)
                    .filter(|x| !x.is_empty())
                    .unwrap_or("N/A".into())
            };
            vec![
                name,
                s(v("/spec/minAvailable")),
                s(v("/spec/maxUnavailable")),
                json!(int(obj, "/status/disruptionsAllowed")),
                s(age(obj)),
            ]
        }
        ("apiextensions.k8s.io", _) => vec![
            name,
            s(obj
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .unwrap_or("")),
        ],
        _ => {
            if let Some(crd) = &res.crd {
                if !crd.printer_columns.is_empty() {
                    let mut cells = vec![name];
                    for c in &crd.printer_columns {
                        let path = c.get("jsonPath").and_then(Value::as_str).unwrap_or("");
                        let ty = c.get("type").and_then(Value::as_str).unwrap_or("string");
                        let got = json_path(obj, path);
                        cells.push(if got.is_empty() {
                            Value::Null
                        } else if ty == "date" {
                            got[0]
                                .as_str()
                                .and_then(parse_rfc3339)
                                .map(|t| {
                                    s(super::util::human_duration(super::util::now_secs() - t))
                                })
                                .unwrap_or(Value::Null)
                        } else if got.len() == 1 && !got[0].is_object() && !got[0].is_array() {
                            match (&got[0], ty) {
                                (Value::Number(_), "integer" | "number") => got[0].clone(),
                                (v, _) => s(value_text(v)),
                            }
                        } else {
                            s(got.iter().map(value_text).collect::<Vec<_>>().join(","))
                        });
                    }
                    return cells;
                }
            }
            vec![name, s(age(obj))]
        }
    }
}

fn columns(res: &Resource) -> Vec<Value> {
    let n = col("Name", "string", 0);
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => vec![
            n,
            col("Ready", "string", 0),
            col("Status", "string", 0),
            col("Restarts", "string", 0),
            col("Age", "string", 0),
            col("IP", "string", 1),
            col("Node", "string", 1),
            col("Nominated Node", "string", 1),
            col("Readiness Gates", "string", 1),
        ],
        ("", "Node") => vec![
            n,
            col("Status", "string", 0),
            col("Roles", "string", 0),
            col("Age", "string", 0),
            col("Version", "string", 0),
            col("Internal-IP", "string", 1),
            col("External-IP", "string", 1),
            col("OS-Image", "string", 1),
            col("Kernel-Version", "string", 1),
            col("Container-Runtime", "string", 1),
        ],
        ("", "Namespace") => vec![n, col("Status", "string", 0), col("Age", "string", 0)],
        ("", "ConfigMap") => vec![n, col("Data", "integer", 0), col("Age", "string", 0)],
        ("", "Service") => vec![
            n,
            col("Type", "string", 0),
            col("Cluster-IP", "string", 0),
            col("External-IP", "string", 0),
            col("Port(s)", "string", 0),
            col("Age", "string", 0),
            col("Selector", "string", 1),
        ],
        ("", "Event") => vec![
            col("Last Seen", "string", 0),
            col("Type", "string", 0),
            col("Reason", "string", 0),
            col("Object", "string", 0),
            col("Message", "string", 0),
        ],
        ("apps", "Deployment") => vec![
            n,
            col("Ready", "string", 0),
            col("Up-to-date", "integer", 0),
            col("Available", "integer", 0),
            col("Age", "string", 0),
            col("Containers", "string", 1),
            col("Images", "string", 1),
            col("Selector", "string", 1),
        ],
        ("apps", "ReplicaSet") => vec![
            n,
            col("Desired", "integer", 0),
            col("Current", "integer", 0),
            col("Ready", "integer", 0),
            col("Age", "string", 0),
            col("Containers", "string", 1),
            col("Images", "string", 1),
            col("Selector", "string", 1),
        ],
        ("apps", "DaemonSet") => vec![
            n,
            col("Desired", "integer", 0),
            col("Current", "integer", 0),
            col("Ready", "integer", 0),
            col("Up-to-date", "integer", 0),
            col("Available", "integer", 0),
            col("Node Selector", "string", 0),
            col("Age", "string", 0),
            col("Containers", "string", 1),
            col("Images", "string", 1),
            col("Selector", "string", 1),
        ],
        ("apps", "StatefulSet") => vec![
            n,
            col("Ready", "string", 0),
            col("Age", "string", 0),
            col("Containers", "string", 1),
            col("Images", "string", 1),
        ],
        ("policy", "PodDisruptionBudget") => vec![
            n,
            col("Min Available", "string", 0),
            col("Max Unavailable", "string", 0),
            col("Allowed Disruptions", "integer", 0),
            col("Age", "string", 0),
        ],
        ("apiextensions.k8s.io", _) => vec![n, col("Created At", "date", 0)],
        _ => {
            if let Some(crd) = &res.crd {
                if !crd.printer_columns.is_empty() {
                    let mut cols = vec![n];
                    for c in &crd.printer_columns {
                        let mut d = col(
                            c.get("name").and_then(Value::as_str).unwrap_or(""),
                            c.get("type").and_then(Value::as_str).unwrap_or("string"),
                            c.get("priority").and_then(Value::as_u64).unwrap_or(0) as u8,
                        );
                        if let Some(desc) = c.get("description") {
                            d["description"] = desc.clone();
                        }
                        if let Some(f) = c.get("format") {
                            d["format"] = f.clone();
                        }
                        cols.push(d);
                    }
                    return cols;
                }
            }
            vec![n, col("Age", "date", 0)]
        }
    }
}

fn row_object(obj: &Value, include: Option<&str>) -> Value {
    match include {
        Some("None") => Value::Null,
        Some("Object") => obj.clone(),
        _ => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
        }),
    }
}

/// A `meta.k8s.io/v1` Table of `objs`.
pub fn table(
    res: &Resource,
    objs: &[Value],
    meta: Value,
    include: Option<&str>,
    with_columns: bool,
) -> Value {
    let rows: Vec<Value> = objs
        .iter()
        .map(|o| {
            let mut r = json!({"cells": row(res, o)});
            let ob = row_object(o, include);
            if !ob.is_null() {
                r["object"] = ob;
            }
            r
        })
        .collect();
    let mut t = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "rows": rows,
    });
    if with_columns {
        t["columnDefinitions"] = Value::Array(columns(res));
    }
    t
}
