//! HTTP/1.1 on loopback (hyper): routing, discovery documents, content negotiation
//! (JSON, `as=Table`, `as=PartialObjectMetadata`), and chunked watch streams.

use super::api::{self, ApiError, DeleteOpts, Query};
use super::rbac::{self, Attributes, User};
use super::resources::Resource;
use super::store::{EventType, WatchEvent};
use super::table;
use super::util::{labels, meta_str, parse_query};
use super::State;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

pub type BoxBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// A response body fed by a channel (watch streams).
pub struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b))))
    }
}

fn full(bytes: Vec<u8>) -> BoxBody {
    Full::new(Bytes::from(bytes)).boxed()
}

fn json_response(code: u16, v: &Value, warnings: &[String]) -> Response<BoxBody> {
    let mut b = Response::builder()
        .status(code)
        .header("Content-Type", "application/json")
        .header("Cache-Control", "no-cache, private");
    for w in warnings {
        let w = w.replace('"', "'");
        b = b.header("Warning", format!("299 - \"{w}\""));
    }
    b.body(full(serde_json::to_vec(v).unwrap_or_default()))
        .unwrap()
}

fn error_response(e: &ApiError) -> Response<BoxBody> {
    json_response(e.code, &e.status(), &[])
}

/// What representation the client asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum As {
    Object,
    Table,
    Metadata,
}

fn negotiate(accept: &str) -> As {
    // The first acceptable entry wins, like the server's negotiation.
    for part in accept.split(',') {
        let p = part.replace(' ', "");
        if p.contains("as=Table") {
            if p.contains("v=v1") || p.contains("v=v1beta1") {
                return As::Table;
            }
            continue;
        }
        if p.contains("as=PartialObjectMetadata") {
            return As::Metadata;
        }
        if p.starts_with("application/json") || p.starts_with("*/*") || p.is_empty() {
            return As::Object;
        }
    }
    As::Object
}

/// Entry point for one request.
pub async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody>, Infallible> {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let headers = req.headers().clone();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(_) => Vec::new(),
    };
    // With RBAC on, who is asking (`None`: everything is allowed).
    let user = if state.config.rbac {
        let st = state.store.lock().unwrap();
        let mut auth = state.auth.lock().unwrap();
        let user = rbac::authenticate(&auth, header(&headers, "authorization")).and_then(|user| {
            match headers
                .get("impersonate-user")
                .and_then(|v| v.to_str().ok())
            {
                None => Ok(user),
                Some(name) => {
                    let groups = headers
                        .get_all("impersonate-group")
                        .iter()
                        .filter_map(|v| v.to_str().ok().map(str::to_string))
                        .collect();
                    rbac::impersonate(&st, &mut auth, user, name, groups)
                }
            }
        });
        match user {
            Ok(user) => Some(user),
            Err(e) => return Ok(error_response(&e)),
        }
    } else {
        None
    };
    let resp = route(
        &state,
        user.as_ref(),
        &method,
        uri.path(),
        uri.query().unwrap_or(""),
        &headers,
        body,
    );
    if state.config.log {
        eprintln!("{method} {uri} -> {}", resp.status().as_u16());
    }
    if method != Method::GET {
        state.kick.notify_one();
    }
    Ok(resp)
}

fn header<'a>(h: &'a hyper::HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Decides (and records) with RBAC on; `Err` is the 403 to answer (built once per request, so
/// its size does not matter).
#[allow(clippy::result_large_err)]
fn authorize(
    state: &State,
    user: Option<&User>,
    attributes: Attributes,
) -> Result<(), Response<BoxBody>> {
    let Some(user) = user else { return Ok(()) };
    let st = state.store.lock().unwrap();
    let mut auth = state.auth.lock().unwrap();
    if rbac::authorize(&st, &mut auth, user, &attributes) {
        Ok(())
    } else {
        Err(error_response(&rbac::forbidden(user, &attributes)))
    }
}

fn route(
    state: &Arc<State>,
    user: Option<&User>,
    method: &Method,
    path: &str,
    query: &str,
    headers: &hyper::HeaderMap,
    body: Vec<u8>,
) -> Response<BoxBody> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let pairs = parse_query(query);
    let q = Query::parse(&pairs);
    let resource_request = matches!(
        segs.as_slice(),
        ["api", "v1", _, ..] | ["apis", _, _, _, ..]
    );
    if !resource_request {
        let attributes = Attributes {
            verb: method.as_str().to_ascii_lowercase(),
            path: Some(path.to_string()),
            ..Attributes::default()
        };
        if let Err(denied) = authorize(state, user, attributes) {
            return denied;
        }
    }
    match segs.as_slice() {
        ["version"] => {
            return json_response(200, &version_info(&state.config.kubernetes_version), &[])
        }
        ["healthz"] | ["readyz"] | ["livez"] => {
            return Response::builder()
                .status(200)
                .header("Content-Type", "text/plain; charset=utf-8")
                .body(full(b"ok".to_vec()))
                .unwrap()
        }
        ["api"] => {
            return json_response(
                200,
                &json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": state.addr.to_string()}]}),
                &[],
            )
        }
        ["apis"] => {
            let st = state.store.lock().unwrap();
            let groups: Vec<Value> = st
                .registry
                .groups()
                .into_iter()
                .map(|(g, vs)| group_json(&g, &vs))
                .collect();
            return json_response(
                200,
                &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
                &[],
            );
        }
        ["apis", g] => {
            let st = state.store.lock().unwrap();
            return match st.registry.groups().into_iter().find(|(n, _)| n == g) {
                Some((n, vs)) => {
                    let mut v = group_json(&n, &vs);
                    v["kind"] = json!("APIGroup");
                    v["apiVersion"] = json!("v1");
                    json_response(200, &v, &[])
                }
                None => error_response(&ApiError::not_found_path()),
            };
        }
        ["api", "v1"] => {
            let st = state.store.lock().unwrap();
            return json_response(200, &st.registry.resource_list("", "v1").unwrap(), &[]);
        }
        ["apis", g, v] => {
            let st = state.store.lock().unwrap();
            return match st.registry.resource_list(g, v) {
                Some(l) => json_response(200, &l, &[]),
                None => error_response(&ApiError::not_found_path()),
            };
        }
        ["openapi", "v2"] => return super::openapi::v2(state, headers),
        ["openapi", "v3"] => return super::openapi::v3_index(state),
        ["openapi", "v3", rest @ ..] => return super::openapi::v3_group(state, rest),
        _ => {}
    }
    let (group, version, rest): (&str, &str, &[&str]) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (g, v, rest),
        _ => return error_response(&ApiError::not_found_path()),
    };
    let (watch_prefix, rest) = match rest {
        ["watch", r @ ..] => (true, r),
        r => (false, r),
    };
    // (namespace, plural, name, subresource)
    type Parsed<'a> = (Option<&'a str>, &'a str, Option<&'a str>, Option<&'a str>);
    let parsed: Option<Parsed> = match rest {
        ["namespaces", ns, sub] if group.is_empty() && (*sub == "status" || *sub == "finalize") => {
            Some((None, "namespaces", Some(ns), Some(sub)))
        }
        ["namespaces", ns, plural] => Some((Some(ns), plural, None, None)),
        ["namespaces", ns, plural, name] => Some((Some(ns), plural, Some(name), None)),
        ["namespaces", ns, plural, name, sub] => Some((Some(ns), plural, Some(name), Some(sub))),
        [plural] => Some((None, plural, None, None)),
        [plural, name] => Some((None, plural, Some(name), None)),
        [plural, name, sub] => Some((None, plural, Some(name), Some(sub))),
        _ => None,
    };
    let Some((ns, plural, name, sub)) = parsed else {
        return error_response(&ApiError::not_found_path());
    };
    let res = {
        let st = state.store.lock().unwrap();
        match st.registry.find(group, version, plural) {
            Some(r) => r.clone(),
            None => {
                if let Some(u) = st.registry.find_unserved(group, version, plural) {
                    return error_response(&ApiError {
                        details: Some(json!({"group": u.group, "kind": u.plural})),
                        ..ApiError::new(404, "NotFound", u.message.clone())
                    });
                }
                return error_response(&ApiError::not_found_path());
            }
        }
    };
    // A namespaced resource addressed without namespace is an all-namespaces list/watch only.
    if res.namespaced && ns.is_none() && name.is_some() {
        return error_response(&ApiError::not_found_path());
    }
    if !res.namespaced && ns.is_some() {
        return error_response(&ApiError::not_found_path());
    }
    let ns_str = ns.unwrap_or("");
    let accept = negotiate(header(headers, "accept"));
    let content_type = header(headers, "content-type").to_string();
    if let Some(s) = sub {
        let ok = match s {
            "status" => res.status,
            "scale" => res.scale.is_some(),
            "eviction" | "binding" => res.kind == "Pod",
            "finalize" => res.kind == "Namespace",
            "token" => res.kind == "ServiceAccount" && *method == Method::POST,
            _ => false,
        };
        if !ok {
            return error_response(&ApiError::not_found_path());
        }
    }
    let watch = watch_prefix || q.watch;
    let attributes = Attributes {
        verb: rbac::verb(method, name.is_some(), watch).into(),
        group: res.group.clone(),
        resource: res.plural.clone(),
        subresource: sub.unwrap_or("").into(),
        namespace: ns_str.into(),
        name: name.unwrap_or("").into(),
        path: None,
    };
    if let Err(denied) = authorize(state, user, attributes) {
        return denied;
    }
    if res.group == "authorization.k8s.io" && *method == Method::POST {
        // A SelfSubjectAccessReview is answered, not stored (without RBAC: always allowed).
        let review = match parse_body(&body, header(headers, "content-type")) {
            Ok(review) => review,
            Err(e) => return error_response(&e),
        };
        let st = state.store.lock().unwrap();
        let mut auth = state.auth.lock().unwrap();
        let answer = match user {
            Some(user) => rbac::self_subject_access_review(&st, &mut auth, user, &review),
            None => {
                let mut answer = review;
                answer["status"] = json!({"allowed": true});
                answer
            }
        };
        return json_response(201, &answer, &[]);
    }
    if sub == Some("token") {
        let st = state.store.lock().unwrap();
        let mut auth = state.auth.lock().unwrap();
        return match rbac::token_request(&st, &mut auth, ns_str, name.unwrap_or("")) {
            Ok(v) => json_response(201, &v, &[]),
            Err(e) => error_response(&e),
        };
    }
    if *method == Method::GET && watch {
        let name_filter = name.map(str::to_string);
        return start_watch(state, &res, ns.map(str::to_string), q, name_filter, accept);
    }
    let mut st = state.store.lock().unwrap();
    let result: Result<(u16, Value, Vec<String>), ApiError> = match (method.clone(), name, sub) {
        (Method::GET, None, None) => api::list(&st, &res, ns, &q).map(|(items, meta)| {
            let v = match accept {
                As::Table => table::table(&res, &items, meta, q.include_object.as_deref(), true),
                As::Metadata => json!({
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": meta,
                    "items": items.iter().map(|o| json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata").cloned().unwrap_or(json!({}))})).collect::<Vec<_>>(),
                }),
                As::Object => api::list_object(&res, items, meta),
            };
            (200, v, vec![])
        }),
        (Method::GET, Some(n), None | Some("status")) => api::get(&st, &res, ns_str, n).map(|o| {
            let v = match accept {
                As::Table => table::table(&res, std::slice::from_ref(&o), json!({"resourceVersion": meta_str(&o, "resourceVersion")}), q.include_object.as_deref(), true),
                As::Metadata => json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata").cloned().unwrap_or(json!({}))}),
                As::Object => o,
            };
            (200, v, vec![])
        }),
        (Method::GET, Some(n), Some("scale")) => api::get(&st, &res, ns_str, n).map(|o| (200, api::scale_of(&res, &o), vec![])),
        (Method::POST, None, None) => parse_body(&body, &content_type)
            .and_then(|b| api::create(&mut st, &res, ns_str, b, &q))
            .map(|w| (201, w.object, w.warnings)),
        (Method::POST, Some(n), Some("eviction")) => api::evict(&mut st, &res, ns_str, n, &body).map(|(c, v)| (c, v, vec![])),
        (Method::POST, Some(n), Some("binding")) => api::bind(&mut st, &res, ns_str, n, &body).map(|v| (201, v, vec![])),
        (Method::PUT, Some(n), None | Some("status")) => parse_body(&body, &content_type)
            .and_then(|b| api::update(&mut st, &res, ns_str, n, b, sub, &q))
            .map(|w| (200, w.object, w.warnings)),
        (Method::PUT, Some(n), Some("finalize")) => parse_body(&body, &content_type).and_then(|b| {
            let old = api::get(&st, &res, ns_str, n)?;
            let mut new = old.clone();
            new["spec"] = b.get("spec").cloned().unwrap_or(json!({}));
            let res2 = Resource { status: false, ..res.clone() };
            api::commit(&mut st, &res2, old, new, None, &q).map(|w| (200, w.object, w.warnings))
        }),
        (Method::PUT, Some(n), Some("scale")) => parse_body(&body, &content_type)
            .and_then(|b| api::write_scale(&mut st, &res, ns_str, n, b, &q))
            .map(|v| (200, v, vec![])),
        (Method::PATCH, Some(n), None | Some("status")) => {
            api::patch(&mut st, &res, ns_str, n, &content_type, &body, sub, &q).map(|(c, w)| (c, w.object, w.warnings))
        }
        (Method::PATCH, Some(n), Some("scale")) => api::get(&st, &res, ns_str, n).and_then(|o| {
            let scale = api::scale_of(&res, &o);
            let scale_res = Resource { builtin: true, ..res.clone() };
            let new = api::apply_patch(&scale_res, &scale, &content_type, &body)?;
            api::write_scale(&mut st, &res, ns_str, n, new, &q).map(|v| (200, v, vec![]))
        }),
        (Method::DELETE, Some(n), None) => api::delete(&mut st, &res, ns_str, n, &DeleteOpts::from(&q, &body)).map(|v| (200, v, vec![])),
        (Method::DELETE, None, None) => {
            api::delete_collection(&mut st, &res, ns, &q, &DeleteOpts::from(&q, &body)).map(|v| (200, v, vec![]))
        }
        _ => Err(ApiError::method_not_allowed()),
    };
    drop(st);
    match result {
        Ok((code, v, warnings)) => json_response(code, &v, &warnings),
        Err(e) => error_response(&e),
    }
}

fn parse_body(body: &[u8], content_type: &str) -> Result<Value, ApiError> {
    if content_type.contains("protobuf") {
        return super::protobuf::decode_object(body)
            .map_err(|e| ApiError::new(415, "UnsupportedMediaType", e));
    }
    if content_type.contains("yaml") {
        return serde_saphyr::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")));
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized: couldn't get version/kind; json parse error: {e}"
        ))
    })
}

fn group_json(g: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
        .collect();
    json!({"name": g, "versions": vs, "preferredVersion": vs[0].clone()})
}

/// `/version`: `1.25`, `1.25.16` or `v1.25.16-eks-…` all work.
pub fn version_info(v: &str) -> Value {
    let v = v.trim_start_matches('v');
    let mut parts = v.splitn(3, '.');
    let major = parts.next().unwrap_or("1").to_string();
    let minor = parts.next().unwrap_or("0").to_string();
    let patch = parts.next().unwrap_or("0").to_string();
    json!({
        "major": major,
        "minor": minor,
        "gitVersion": format!("v{major}.{minor}.{patch}"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-01-01T00:00:00Z",
        "goVersion": "go1.22.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// How a watch sees one change, given its filters: `None` when it is not visible.
fn visible(
    ev: &WatchEvent,
    key: &str,
    ns: Option<&str>,
    name: Option<&str>,
    ls: &super::selector::LabelSelector,
    fs: &super::selector::FieldSelector,
    kind: &str,
) -> Option<EventType> {
    if ev.key != key {
        return None;
    }
    let matches = |o: &Value| {
        ns.is_none_or(|n| meta_str(o, "namespace") == n)
            && name.is_none_or(|n| meta_str(o, "name") == n)
            && ls.matches(&labels(o))
            && fs.matches(kind, o)
    };
    let now = matches(&ev.object);
    match ev.etype {
        EventType::Added => now.then_some(EventType::Added),
        EventType::Deleted => now.then_some(EventType::Deleted),
        EventType::Modified => {
            let before = ev.old.as_ref().is_some_and(matches);
            match (before, now) {
                (true, true) => Some(EventType::Modified),
                (false, true) => Some(EventType::Added),
                (true, false) => Some(EventType::Deleted),
                (false, false) => None,
            }
        }
    }
}

fn encode_event(
    etype: &str,
    obj: Value,
    res: &Resource,
    accept: As,
    include: Option<&str>,
    first: &mut bool,
) -> Bytes {
    let object = match accept {
        As::Table if etype != "ERROR" && etype != "BOOKMARK" => {
            let t = table::table(
                res,
                std::slice::from_ref(&obj),
                json!({"resourceVersion": meta_str(&obj, "resourceVersion")}),
                include,
                *first,
            );
            *first = false;
            t
        }
        As::Metadata if etype != "ERROR" => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))})
        }
        _ => obj,
    };
    let mut line =
        serde_json::to_vec(&json!({"type": etype, "object": object})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

fn start_watch(
    state: &Arc<State>,
    res: &Resource,
    ns: Option<String>,
    q: Query,
    name: Option<String>,
    accept: As,
) -> Response<BoxBody> {
    let (ls, fs) = match q.selectors(res) {
        Ok(s) => s,
        Err(e) => return error_response(&e),
    };
    let key = res.key();
    let mut initial: Vec<(String, Value)> = Vec::new();
    let rx: broadcast::Receiver<Arc<WatchEvent>>;
    let start_rv: u64;
    {
        let st = state.store.lock().unwrap();
        rx = st.tx.subscribe();
        start_rv = st.rv;
        let rv_param = q.resource_version.clone().unwrap_or_default();
        if rv_param.is_empty() || rv_param == "0" || q.send_initial_events {
            for o in st.list(&key, ns.as_deref()) {
                if name.as_deref().is_some_and(|n| meta_str(o, "name") != n) {
                    continue;
                }
                if ls.matches(&labels(o)) && fs.matches(&res.kind, o) {
                    initial.push(("ADDED".into(), api::served(res, o)));
                }
            }
            if q.send_initial_events {
                initial.push((
                    "BOOKMARK".into(),
                    json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": {"resourceVersion": st.rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}),
                ));
            }
        } else {
            let Ok(from) = rv_param.parse::<u64>() else {
                return error_response(&ApiError::bad_request(format!(
                    "invalid resource version: {rv_param}"
                )));
            };
            if from < st.oldest_watchable() {
                initial.push((
                    "ERROR".into(),
                    ApiError::new(
                        410,
                        "Expired",
                        format!(
                            "too old resource version: {from} ({})",
                            st.oldest_watchable()
                        ),
                    )
                    .status(),
                ));
            } else {
                for ev in st.history.iter().filter(|e| e.rv > from) {
                    if let Some(t) = visible(
                        ev,
                        &key,
                        ns.as_deref(),
                        name.as_deref(),
                        &ls,
                        &fs,
                        &res.kind,
                    ) {
                        initial.push((t.as_str().into(), api::served(res, &ev.object)));
                    }
                }
            }
        }
    }
    let (tx, body_rx) = mpsc::channel::<Bytes>(1024);
    let res = res.clone();
    let include = q.include_object.clone();
    let timeout = q.timeout_seconds.map(Duration::from_secs);
    let bookmarks = q.allow_bookmarks;
    let expired = initial.iter().any(|(t, _)| t == "ERROR");
    tokio::spawn(async move {
        let mut rx = rx;
        let mut first = true;
        for (t, o) in initial {
            if tx
                .send(encode_event(
                    &t,
                    o,
                    &res,
                    accept,
                    include.as_deref(),
                    &mut first,
                ))
                .await
                .is_err()
            {
                return;
            }
        }
        if expired {
            return;
        }
        let deadline = timeout.map(|d| tokio::time::Instant::now() + d);
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        tick.tick().await;
        let mut last_rv = start_rv;
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = sleep => return,
                _ = tx.closed() => return,
                _ = tick.tick() => {
                    if bookmarks {
                        let b = json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": {"resourceVersion": last_rv.to_string()}});
                        if tx.send(encode_event("BOOKMARK", b, &res, accept, include.as_deref(), &mut first)).await.is_err() {
                            return;
                        }
                    }
                }
                ev = rx.recv() => match ev {
                    Ok(ev) => {
                        if ev.rv <= start_rv {
                            continue;
                        }
                        last_rv = ev.rv;
                        if let Some(t) = visible(&ev, &res.key(), ns.as_deref(), name.as_deref(), &ls, &fs, &res.kind) {
                            let line = encode_event(t.as_str(), api::served(&res, &ev.object), &res, accept, include.as_deref(), &mut first);
                            if tx.send(line).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let e = ApiError::new(410, "Expired", "the watch fell too far behind; relist").status();
                        let _ = tx.send(encode_event("ERROR", e, &res, accept, None, &mut first)).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .header("Cache-Control", "no-cache, private")
        .body(ChannelBody { rx: body_rx }.boxed())
        .unwrap()
}
