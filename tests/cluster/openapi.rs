//! A minimal OpenAPI v3 surface: the index and, per group/version, one PATCH operation per kind
//! carrying the `fieldValidation` query parameter. That is what kubectl (1.27+) reads to decide
//! that the server validates fields itself (so it sends `fieldValidation=Strict` instead of
//! validating client-side). No schemas: `kubectl explain` is not supported.

use super::util::fnv32a;
use super::State;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::Response;
use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::http::BoxBody;

fn respond(code: u16, v: &Value) -> Response<BoxBody> {
    Response::builder()
        .status(code)
        .header("Content-Type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(v).unwrap_or_default())).boxed())
        .unwrap()
}

fn not_found() -> Response<BoxBody> {
    respond(404, &super::api::ApiError::not_found_path().status())
}

/// `/openapi/v2` is not served (kubectl falls back to v3 first, which is).
pub fn v2(_state: &Arc<State>, _headers: &hyper::HeaderMap) -> Response<BoxBody> {
    not_found()
}

fn group_versions(state: &Arc<State>) -> Vec<(String, String)> {
    let st = state.store.lock().unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    for r in &st.registry.resources {
        let gv = (r.group.clone(), r.version.clone());
        if !out.contains(&gv) {
            out.push(gv);
        }
    }
    out
}

fn doc(state: &Arc<State>, group: &str, version: &str) -> Option<Value> {
    let st = state.store.lock().unwrap();
    let mut paths = Map::new();
    for r in st
        .registry
        .resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let prefix = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let path = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{prefix}/{}/{{name}}", r.plural)
        };
        let gvk = json!({"group": group, "version": version, "kind": r.kind});
        let params = json!([
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        ]);
        paths.insert(
            path,
            json!({
                "patch": {
                    "operationId": format!("patch{}", r.kind),
                    "parameters": params,
                    "responses": {},
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": gvk,
                },
                "put": {
                    "operationId": format!("replace{}", r.kind),
                    "parameters": params,
                    "responses": {},
                    "x-kubernetes-action": "put",
                    "x-kubernetes-group-version-kind": gvk,
                },
            }),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{}", state.config.kubernetes_version.trim_start_matches('v'))},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the index of group/version documents, each URL carrying a content hash.
pub fn v3_index(state: &Arc<State>) -> Response<BoxBody> {
    let mut paths = Map::new();
    for (g, v) in group_versions(state) {
        let hash = doc(state, &g, &v)
            .map(|d| format!("{:08X}", fnv32a(d.to_string().as_bytes())))
            .unwrap_or_default();
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
        );
    }
    respond(200, &json!({"paths": paths}))
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`.
pub fn v3_group(state: &Arc<State>, rest: &[&str]) -> Response<BoxBody> {
    let (g, v) = match rest {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return not_found(),
    };
    match doc(state, g, v) {
        Some(d) => respond(200, &d),
        None => not_found(),
    }
}
