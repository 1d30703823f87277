//! The REST semantics: get, list, create, update, patch, delete, `/status`, `/scale`,
//! `pods/eviction`, and `Status` error bodies shaped like the real API server's.

use super::kinds::{self, FieldError};
use super::patch;
use super::resources::Resource;
use super::schema;
use super::selector::{FieldSelector, LabelSelector};
use super::store::Store;
use super::util::{
    base64_decode, base64_encode, meta_mut, meta_str, new_uid, now_rfc3339, now_secs,
    random_suffix, rfc3339,
};
use serde_json::{json, Value};

/// A failed request, rendered as a `Status` object.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub details: Option<Value>,
}

fn details(res: &Resource, name: &str) -> Value {
    let mut d = json!({"name": name});
    if !res.group.is_empty() {
        d["group"] = json!(res.group);
    }
    d["kind"] = json!(res.plural);
    d
}

impl ApiError {
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
        }
    }

    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        });
        if !self.reason.is_empty() {
            s["reason"] = json!(self.reason);
        }
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s["code"] = json!(self.code);
        s
    }

    pub fn not_found(res: &Resource, name: &str) -> Self {
        ApiError {
            details: Some(details(res, name)),
            ..Self::new(
                404,
                "NotFound",
                format!("{} \"{name}\" not found", res.qualified()),
            )
        }
    }

    pub fn not_found_path() -> Self {
        ApiError {
            details: Some(json!({})),
            ..Self::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        }
    }

    pub fn already_exists(res: &Resource, name: &str) -> Self {
        ApiError {
            details: Some(details(res, name)),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", res.qualified()),
            )
        }
    }

    pub fn conflict(res: &Resource, name: &str, why: &str) -> Self {
        ApiError {
            details: Some(details(res, name)),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": {why}",
                    res.qualified()
                ),
            )
        }
    }

    pub fn stale(res: &Resource, name: &str) -> Self {
        Self::conflict(
            res,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn invalid(res: &Resource, name: &str, errs: &[FieldError]) -> Self {
        let parts: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        let list = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let mut d = json!({"name": name});
        if !res.group.is_empty() {
            d["group"] = json!(res.group);
        }
        d["kind"] = json!(res.kind);
        d["causes"] = Value::Array(
            errs.iter()
                .map(|e| json!({"reason": e.reason, "message": e.message, "field": e.field}))
                .collect(),
        );
        ApiError {
            details: Some(d),
            ..Self::new(
                422,
                "Invalid",
                format!("{} \"{name}\" is invalid: {list}", res.qualified_kind()),
            )
        }
    }

    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", msg)
    }

    pub fn forbidden(res: &Resource, name: &str, msg: &str, cause: Option<Value>) -> Self {
        let mut d = details(res, name);
        if let Some(c) = cause {
            d["causes"] = json!([c]);
        }
        ApiError {
            details: Some(d),
            ..Self::new(
                403,
                "Forbidden",
                format!("{} \"{name}\" is forbidden: {msg}", res.qualified()),
            )
        }
    }

    pub fn method_not_allowed() -> Self {
        ApiError {
            details: Some(json!({})),
            ..Self::new(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        }
    }

    pub fn unsupported_media(accepted: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: {accepted}"),
        )
    }

    pub fn internal(msg: &str) -> Self {
        ApiError {
            details: Some(json!({"causes": [{"message": msg}]})),
            ..Self::new(
                500,
                "InternalError",
                format!("Internal error occurred: {msg}"),
            )
        }
    }
}

/// Query parameters of a request.
#[derive(Debug, Default, Clone)]
pub struct Query {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub watch: bool,
    pub dry_run: bool,
    pub field_validation: Option<String>,
    pub grace_period: Option<i64>,
    pub propagation_policy: Option<String>,
    pub timeout_seconds: Option<u64>,
    pub allow_bookmarks: bool,
    pub send_initial_events: bool,
    pub include_object: Option<String>,
    pub field_manager: Option<String>,
    pub force: bool,
}

impl Query {
    pub fn parse(pairs: &[(String, String)]) -> Query {
        let mut q = Query::default();
        for (k, v) in pairs {
            match k.as_str() {
                "labelSelector" => q.label_selector = Some(v.clone()),
                "fieldSelector" => q.field_selector = Some(v.clone()),
                "limit" => q.limit = v.parse().ok().filter(|n| *n > 0),
                "continue" => q.continue_token = Some(v.clone()).filter(|s| !s.is_empty()),
                "resourceVersion" => q.resource_version = Some(v.clone()),
                "watch" => q.watch = v == "true" || v == "1",
                "dryRun" => q.dry_run = v == "All",
                "fieldValidation" => q.field_validation = Some(v.clone()),
                "gracePeriodSeconds" => q.grace_period = v.parse().ok(),
                "propagationPolicy" => q.propagation_policy = Some(v.clone()),
                "timeoutSeconds" => q.timeout_seconds = v.parse().ok(),
                "allowWatchBookmarks" => q.allow_bookmarks = v == "true",
                "sendInitialEvents" => q.send_initial_events = v == "true",
                "includeObject" => q.include_object = Some(v.clone()),
                "fieldManager" => q.field_manager = Some(v.clone()),
                "force" => q.force = v == "true",
                _ => {}
            }
        }
        q
    }

    pub fn selectors(&self, res: &Resource) -> Result<(LabelSelector, FieldSelector), ApiError> {
        let ls = match &self.label_selector {
            Some(s) => LabelSelector::parse(s).map_err(ApiError::bad_request)?,
            None => LabelSelector::everything(),
        };
        let fs = match &self.field_selector {
            Some(s) => FieldSelector::parse(s).map_err(ApiError::bad_request)?,
            None => FieldSelector::default(),
        };
        fs.check_supported(&res.kind, res.builtin)
            .map_err(ApiError::bad_request)?;
        Ok((ls, fs))
    }
}

/// The object as served under `res` (same storage, possibly another version).
pub fn served(res: &Resource, obj: &Value) -> Value {
    let mut o = obj.clone();
    if o.get("apiVersion").and_then(Value::as_str) != Some(&res.api_version()) {
        o["apiVersion"] = json!(res.api_version());
    }
    o
}

pub fn get(st: &Store, res: &Resource, ns: &str, name: &str) -> Result<Value, ApiError> {
    st.get(&res.key(), ns, name)
        .map(|o| served(res, o))
        .ok_or_else(|| ApiError::not_found(res, name))
}

/// A LIST: selectors, `limit`/`continue` pagination (continue tokens name the next key).
pub fn list(
    st: &Store,
    res: &Resource,
    ns: Option<&str>,
    q: &Query,
) -> Result<(Vec<Value>, Value), ApiError> {
    let (ls, fs) = q.selectors(res)?;
    let start: Option<(String, String)> = match &q.continue_token {
        Some(tok) => {
            let raw = base64_decode(tok)
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .ok_or_else(|| {
                    ApiError::bad_request(
                        "continue key is not valid: illegal base64 data at input byte 0",
                    )
                })?;
            let s = raw.get("start").and_then(Value::as_str).unwrap_or("");
            let (a, b) = s.split_once('/').unwrap_or(("", s));
            Some((a.to_string(), b.to_string()))
        }
        None => None,
    };
    let mut items = Vec::new();
    let mut next: Option<(String, String)> = None;
    let mut remaining = 0usize;
    let filtered = ls.is_empty() && fs.reqs.is_empty();
    for obj in st.list(&res.key(), ns) {
        let key = (
            meta_str(obj, "namespace").to_string(),
            meta_str(obj, "name").to_string(),
        );
        if let Some(s) = &start {
            if key < *s {
                continue;
            }
        }
        if !ls.matches(&super::util::labels(obj)) || !fs.matches(&res.kind, obj) {
            continue;
        }
        if let Some(limit) = q.limit {
            if items.len() >= limit {
                if next.is_none() {
                    next = Some(key);
                }
                remaining += 1;
                continue;
            }
        }
        let mut o = served(res, obj);
        if res.builtin {
            if let Some(m) = o.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
        }
        items.push(o);
    }
    let mut meta = json!({"resourceVersion": st.rv.to_string()});
    if let Some((ns, name)) = next {
        let tok = json!({"v": "meta.k8s.io/v1", "rv": st.rv, "start": format!("{ns}/{name}")});
        meta["continue"] = json!(base64_encode(tok.to_string().as_bytes()));
        if filtered {
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    Ok((items, meta))
}

pub fn list_object(res: &Resource, items: Vec<Value>, meta: Value) -> Value {
    json!({
        "kind": res.list_kind(),
        "apiVersion": res.api_version(),
        "metadata": meta,
        "items": items,
    })
}

fn check_type(res: &Resource, body: &mut Value) -> Result<(), ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the object provided is unrecognized (must be of type ".to_string() + &res.kind + ")",
        ));
    }
    if let Some(av) = body.get("apiVersion").and_then(Value::as_str) {
        if av != res.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({})",
                res.api_version()
            )));
        }
    }
    if let Some(k) = body.get("kind").and_then(Value::as_str) {
        if k != res.kind {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error",
                res.kind
            )));
        }
    }
    let m = body.as_object_mut().unwrap();
    m.insert("apiVersion".into(), json!(res.api_version()));
    m.insert("kind".into(), json!(res.kind));
    Ok(())
}

/// Schema pruning/defaulting/validation of custom resources. Returns warnings.
fn apply_schema(
    res: &Resource,
    obj: &mut Value,
    q: &Query,
    name: &str,
) -> Result<Vec<String>, ApiError> {
    let Some(schema) = res.crd.as_ref().and_then(|c| c.schema.clone()) else {
        return Ok(Vec::new());
    };
    let unknown = schema::prune_and_default(obj, &schema);
    let mut warnings = Vec::new();
    if !unknown.is_empty() {
        let msgs: Vec<String> = unknown
            .iter()
            .map(|u| format!("unknown field \"{u}\""))
            .collect();
        match q.field_validation.as_deref() {
            Some("Strict") => {
                return Err(ApiError::bad_request(format!(
                    "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
                    res.kind,
                    res.version,
                    res.kind,
                    msgs.join(", ")
                )))
            }
            Some("Ignore") => {}
            _ => warnings.extend(msgs),
        }
    }
    let errs = schema::validate(obj, &schema);
    if !errs.is_empty() {
        let fe: Vec<FieldError> = errs
            .into_iter()
            .map(|(field, message)| FieldError {
                reason: if message == "Required value" {
                    "FieldValueRequired"
                } else {
                    "FieldValueNotSupported"
                },
                field,
                message,
            })
            .collect();
        return Err(ApiError::invalid(res, name, &fe));
    }
    Ok(warnings)
}

fn namespace_check(st: &Store, res: &Resource, ns: &str, name: &str) -> Result<(), ApiError> {
    if !res.namespaced {
        return Ok(());
    }
    let nsres = st.registry.find("", "v1", "namespaces").unwrap().clone();
    match st.get("/namespaces", "", ns) {
        None => Err(ApiError::not_found(&nsres, ns)),
        Some(n) if n.pointer("/metadata/deletionTimestamp").is_some() => Err(ApiError::forbidden(
            res,
            name,
            &format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            ),
            Some(
                json!({"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}),
            ),
        )),
        _ => Ok(()),
    }
}

/// What a successful write returns: the object and any `Warning` headers.
pub struct Written {
    pub object: Value,
    pub warnings: Vec<String>,
}

/// POST to a collection.
pub fn create(
    st: &mut Store,
    res: &Resource,
    ns: &str,
    mut body: Value,
    q: &Query,
) -> Result<Written, ApiError> {
    check_type(res, &mut body)?;
    let meta = meta_mut(&mut body);
    if res.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => {
                meta.insert("namespace".into(), json!(ns));
            }
        }
    } else {
        meta.remove("namespace");
    }
    let mut name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let generate = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if name.is_empty() {
        if generate.is_empty() {
            return Err(ApiError::invalid(
                res,
                "",
                &[FieldError {
                    field: "metadata.name".into(),
                    reason: "FieldValueRequired",
                    message: "Required value: name or generateName is required".into(),
                }],
            ));
        }
        loop {
            name = format!("{generate}{}", random_suffix(5));
            if st.get(&res.key(), ns, &name).is_none() {
                break;
            }
        }
        meta.insert("name".into(), json!(name));
    }
    for k in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "selfLink",
    ] {
        meta.remove(k);
    }
    if let Some(e) = kinds::validate_name(&res.kind, &name) {
        return Err(ApiError::invalid(res, &name, &[e]));
    }
    namespace_check(st, res, ns, &name)?;
    let errs = kinds::prepare(&res.kind, &mut body, true);
    if !errs.is_empty() {
        return Err(ApiError::invalid(res, &name, &errs));
    }
    if res.kind == "PersistentVolumeClaim" {
        default_storage_class(st, &mut body);
    }
    let mut warnings = apply_schema(res, &mut body, q, &name)?;
    if !res.builtin && res.status {
        body.as_object_mut().unwrap().remove("status");
    }
    if st.get(&res.key(), ns, &name).is_some() {
        return Err(ApiError::already_exists(res, &name));
    }
    let meta = meta_mut(&mut body);
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if res.generation {
        meta.insert("generation".into(), json!(1));
    }
    if res.kind == "CustomResourceDefinition" {
        let mut probe = st.registry.resources.clone();
        let notes = st.registry.register_crd(&body).map_err(|e| {
            ApiError::invalid(
                res,
                &name,
                &[FieldError {
                    field: "spec".into(),
                    reason: "FieldValueInvalid",
                    message: e,
                }],
            )
        })?;
        if q.dry_run {
            std::mem::swap(&mut st.registry.resources, &mut probe);
        }
        warnings.extend(notes);
    }
    if q.dry_run {
        return Ok(Written {
            object: body,
            warnings,
        });
    }
    let object = st.insert(res, body);
    Ok(Written {
        object: served(res, &object),
        warnings,
    })
}

/// PUT of an object (or of its `/status`).
pub fn update(
    st: &mut Store,
    res: &Resource,
    ns: &str,
    name: &str,
    mut body: Value,
    sub: Option<&str>,
    q: &Query,
) -> Result<Written, ApiError> {
    check_type(res, &mut body)?;
    let body_name = meta_str(&body, "name");
    if body_name.is_empty() {
        meta_mut(&mut body).insert("name".into(), json!(name));
    } else if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let old = st
        .get(&res.key(), ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(res, name))?;
    let rv = meta_str(&body, "resourceVersion");
    if rv.is_empty() {
        if !res.builtin {
            return Err(ApiError::invalid(
                res,
                name,
                &[FieldError {
                    field: "metadata.resourceVersion".into(),
                    reason: "FieldValueInvalid",
                    message: "Invalid value: 0x0: must be specified for an update".into(),
                }],
            ));
        }
    } else if rv != meta_str(&old, "resourceVersion") {
        return Err(ApiError::stale(res, name));
    }
    commit(st, res, old, body, sub, q)
}

/// The shared end of PUT and PATCH: subresource rules, system metadata, defaults and
/// validation, generation, no-op detection, finalizer-driven removal.
pub fn commit(
    st: &mut Store,
    res: &Resource,
    old: Value,
    mut new: Value,
    sub: Option<&str>,
    q: &Query,
) -> Result<Written, ApiError> {
    let name = meta_str(&old, "name").to_string();
    let ns = meta_str(&old, "namespace").to_string();
    if let Some(m) = new.as_object_mut() {
        m.insert("apiVersion".into(), old["apiVersion"].clone());
        m.insert("kind".into(), json!(res.kind));
    }
    match sub {
        Some("status") => {
            let status = new.get("status").cloned();
            new = old.clone();
            match status {
                Some(s) => new["status"] = s,
                None => {
                    new.as_object_mut().unwrap().remove("status");
                }
            }
        }
        _ => {
            if res.status {
                match old.get("status") {
                    Some(s) => new["status"] = s.clone(),
                    None => {
                        if let Some(m) = new.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
            }
        }
    }
    {
        let om = old.get("metadata").cloned().unwrap_or(json!({}));
        let nm = meta_mut(&mut new);
        for k in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "name",
            "namespace",
            "resourceVersion",
        ] {
            match om.get(k) {
                Some(v) => {
                    nm.insert(k.into(), v.clone());
                }
                None => {
                    nm.remove(k);
                }
            }
        }
    }
    let mut warnings = Vec::new();
    if sub.is_none() {
        let errs = kinds::prepare(&res.kind, &mut new, false);
        if !errs.is_empty() {
            return Err(ApiError::invalid(res, &name, &errs));
        }
        let errs = kinds::validate_immutable(&res.kind, &old, &new);
        if !errs.is_empty() {
            return Err(ApiError::invalid(res, &name, &errs));
        }
        warnings = apply_schema(res, &mut new, q, &name)?;
    }
    if old.pointer("/metadata/deletionTimestamp").is_some() {
        let of = old
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let nf = new
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if nf.iter().any(|f| !of.contains(f)) {
            return Err(ApiError::invalid(
                res,
                &name,
                &[FieldError::forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted",
                )],
            ));
        }
    }
    if res.generation && spec_changed(&old, &new) {
        let g = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(&mut new).insert("generation".into(), json!(g + 1));
    }
    if new == old {
        return Ok(Written {
            object: served(res, &old),
            warnings,
        });
    }
    if res.kind == "CustomResourceDefinition" && !q.dry_run {
        st.registry.register_crd(&new).map_err(|e| {
            ApiError::invalid(
                res,
                &name,
                &[FieldError {
                    field: "spec".into(),
                    reason: "FieldValueInvalid",
                    message: e,
                }],
            )
        })?;
    }
    if q.dry_run {
        return Ok(Written {
            object: served(res, &new),
            warnings,
        });
    }
    let terminating = new.pointer("/metadata/deletionTimestamp").is_some();
    let no_finalizers = new
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let written = st.replace(&res.key(), new);
    if terminating && no_finalizers && res.kind != "Pod" && res.kind != "Namespace" {
        finish_delete(st, res, &ns, &name);
    }
    Ok(Written {
        object: served(res, &written),
        warnings,
    })
}

/// Anything but metadata and status changed.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        v
    };
    strip(old) != strip(new)
}

/// Applies a PATCH body of the given content type to `current`.
pub fn apply_patch(
    res: &Resource,
    current: &Value,
    content_type: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let ct = content_type.split(';').next().unwrap_or("").trim();
    let parse = |b: &[u8]| -> Result<Value, ApiError> {
        serde_json::from_slice(b)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
    };
    let mut out = current.clone();
    match ct {
        "application/json-patch+json" => {
            let ops = parse(body)?;
            patch::json_patch(&mut out, &ops).map_err(|e| {
                ApiError::new(422, "Invalid", format!("the server rejected our request due to an error in our request: {e}"))
            })?;
        }
        "application/merge-patch+json" => patch::merge_patch(&mut out, &parse(body)?),
        "application/strategic-merge-patch+json" => {
            if !res.builtin {
                return Err(ApiError::unsupported_media(
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            patch::strategic_merge(&mut out, &parse(body)?)
                .map_err(|e| ApiError::new(422, "Invalid", e))?;
        }
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
            let v: Value = serde_saphyr::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            patch::merge_patch(&mut out, &v);
        }
        _ => {
            return Err(ApiError::unsupported_media(
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
            ))
        }
    }
    Ok(out)
}

/// PATCH of an object (or of its `/status`). Server-side apply of a missing object creates it.
#[allow(clippy::too_many_arguments)]
pub fn patch(
    st: &mut Store,
    res: &Resource,
    ns: &str,
    name: &str,
    content_type: &str,
    body: &[u8],
    sub: Option<&str>,
    q: &Query,
) -> Result<(u16, Written), ApiError> {
    let current = match st.get(&res.key(), ns, name) {
        Some(c) => c.clone(),
        None => {
            if content_type.starts_with("application/apply-patch") {
                let mut v: Value = serde_saphyr::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
                meta_mut(&mut v).insert("name".into(), json!(name));
                return create(st, res, ns, v, q).map(|w| (201, w));
            }
            return Err(ApiError::not_found(res, name));
        }
    };
    let new = apply_patch(res, &current, content_type, body)?;
    if meta_str(&new, "resourceVersion") != meta_str(&current, "resourceVersion") {
        return Err(ApiError::stale(res, name));
    }
    if meta_str(&new, "name") != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            meta_str(&new, "name")
        )));
    }
    commit(st, res, current, new, sub, q).map(|w| (200, w))
}

/// The `autoscaling/v1` Scale of an object.
pub fn scale_of(res: &Resource, obj: &Value) -> Value {
    let paths = res.scale.as_ref().unwrap();
    let spec = obj
        .pointer(&paths.spec_replicas)
        .cloned()
        .unwrap_or(json!(0));
    let status = obj
        .pointer(&paths.status_replicas)
        .cloned()
        .unwrap_or(json!(0));
    let selector = match &paths.label_selector {
        Some(p) => obj.pointer(p).cloned().unwrap_or(json!("")),
        None => {
            let s = LabelSelector::from_object(obj.pointer("/spec/selector")).unwrap_or_default();
            json!(s.to_query())
        }
    };
    let mut meta = json!({
        "name": meta_str(obj, "name"),
        "uid": meta_str(obj, "uid"),
        "resourceVersion": meta_str(obj, "resourceVersion"),
        "creationTimestamp": obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
    });
    if res.namespaced {
        meta["namespace"] = json!(meta_str(obj, "namespace"));
    }
    let mut status_obj = json!({"replicas": status});
    if selector.as_str().is_some_and(|s| !s.is_empty()) {
        status_obj["selector"] = selector;
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": {"replicas": spec},
        "status": status_obj,
    })
}

/// PUT or PATCH of `/scale`: `new_scale` is the Scale after the client's change.
pub fn write_scale(
    st: &mut Store,
    res: &Resource,
    ns: &str,
    name: &str,
    new_scale: Value,
    q: &Query,
) -> Result<Value, ApiError> {
    let old = st
        .get(&res.key(), ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(res, name))?;
    let rv = meta_str(&new_scale, "resourceVersion");
    if !rv.is_empty() && rv != meta_str(&old, "resourceVersion") {
        return Err(ApiError::stale(res, name));
    }
    let replicas = new_scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        return Err(ApiError::invalid(
            &Resource {
                kind: "Scale".into(),
                group: "autoscaling".into(),
                ..res.clone()
            },
            name,
            &[FieldError::invalid(
                "spec.replicas",
                &json!(replicas),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let mut new = old.clone();
    let path = res.scale.as_ref().unwrap().spec_replicas.clone();
    set_pointer(&mut new, &path, json!(replicas));
    let w = commit(st, res, old, new, None, q)?;
    Ok(scale_of(res, &w.object))
}

/// Sets `obj[pointer] = v`, creating intermediate objects.
pub fn set_pointer(obj: &mut Value, pointer: &str, v: Value) {
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let (last, parents) = parts.split_last().unwrap();
    let m = super::util::obj_at(obj, parents);
    m.insert((*last).to_string(), v);
}

/// DELETE options (query parameters and/or a `DeleteOptions` body).
#[derive(Debug, Default, Clone)]
pub struct DeleteOpts {
    pub grace: Option<i64>,
    pub propagation: Option<String>,
    pub uid: Option<String>,
    pub rv: Option<String>,
    pub dry_run: bool,
}

impl DeleteOpts {
    pub fn from(q: &Query, body: &[u8]) -> DeleteOpts {
        let mut o = DeleteOpts {
            grace: q.grace_period,
            propagation: q.propagation_policy.clone(),
            dry_run: q.dry_run,
            ..Default::default()
        };
        if let Ok(b) = serde_json::from_slice::<Value>(body) {
            o.absorb(&b);
        }
        o
    }

    pub fn absorb(&mut self, b: &Value) {
        if let Some(g) = b.get("gracePeriodSeconds").and_then(Value::as_i64) {
            self.grace = Some(g);
        }
        if let Some(p) = b.get("propagationPolicy").and_then(Value::as_str) {
            self.propagation = Some(p.into());
        }
        if b.get("orphanDependents").and_then(Value::as_bool) == Some(true) {
            self.propagation = Some("Orphan".into());
        }
        if let Some(u) = b.pointer("/preconditions/uid").and_then(Value::as_str) {
            self.uid = Some(u.into());
        }
        if let Some(r) = b
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
        {
            self.rv = Some(r.into());
        }
        if b.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x == "All"))
        {
            self.dry_run = true;
        }
    }
}

/// Removes an object for good (after finalizers/grace), and a CRD's instances with it.
pub fn finish_delete(st: &mut Store, res: &Resource, ns: &str, name: &str) -> Option<Value> {
    let obj = st.remove(&res.key(), ns, name)?;
    if res.kind == "CustomResourceDefinition" {
        let group = obj
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let plural = obj
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let key = format!("{group}/{plural}");
        let names: Vec<(String, String)> = st
            .list(&key, None)
            .map(|o| {
                (
                    meta_str(o, "namespace").to_string(),
                    meta_str(o, "name").to_string(),
                )
            })
            .collect();
        for (n, m) in names {
            st.remove(&key, &n, &m);
        }
        st.registry.unregister_crd(&group, &plural);
    }
    Some(obj)
}

/// DELETE of one object: preconditions, finalizers, graceful pod termination, propagation.
pub fn delete(
    st: &mut Store,
    res: &Resource,
    ns: &str,
    name: &str,
    opts: &DeleteOpts,
) -> Result<Value, ApiError> {
    let obj = st
        .get(&res.key(), ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(res, name))?;
    if let Some(u) = &opts.uid {
        if u != meta_str(&obj, "uid") {
            return Err(ApiError::conflict(
                res,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {u}, UID in object meta: {}",
                    meta_str(&obj, "uid")
                ),
            ));
        }
    }
    if let Some(r) = &opts.rv {
        if r != meta_str(&obj, "resourceVersion") {
            return Err(ApiError::conflict(
                res,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {r}, ResourceVersion in object meta: {}",
                    meta_str(&obj, "resourceVersion")
                ),
            ));
        }
    }
    if res.kind == "Namespace" && matches!(name, "default" | "kube-system" | "kube-public") {
        return Err(ApiError::forbidden(
            res,
            name,
            "this namespace may not be deleted",
            None,
        ));
    }
    if opts.dry_run {
        return Ok(served(res, &obj));
    }
    let uid = meta_str(&obj, "uid").to_string();
    let propagation = opts
        .propagation
        .clone()
        .unwrap_or_else(|| "Background".into());
    if propagation == "Orphan" {
        orphan_dependents(st, &uid);
    }
    let finalizers: Vec<Value> = obj
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let already = obj.pointer("/metadata/deletionTimestamp").is_some();
    let now = now_secs();
    if res.kind == "Pod" {
        let bound = obj
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let phase = obj
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut grace = opts.grace.unwrap_or_else(|| {
            obj.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(30)
        });
        if !bound || phase == "Succeeded" || phase == "Failed" {
            grace = 0;
        }
        let grace = grace.max(0);
        if already {
            let current = obj
                .pointer("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if grace >= current {
                return Ok(served(res, &obj));
            }
        }
        if grace == 0 && finalizers.is_empty() {
            let removed = finish_delete(st, res, ns, name).unwrap_or(obj);
            return Ok(served(res, &removed));
        }
        let mut new = obj.clone();
        let m = meta_mut(&mut new);
        m.insert("deletionTimestamp".into(), json!(rfc3339(now + grace)));
        m.insert("deletionGracePeriodSeconds".into(), json!(grace));
        let w = st.replace(&res.key(), new);
        return Ok(served(res, &w));
    }
    if res.kind == "Namespace" {
        if already {
            return Ok(served(res, &obj));
        }
        let mut new = obj.clone();
        meta_mut(&mut new).insert("deletionTimestamp".into(), json!(rfc3339(now)));
        new["status"] = json!({"phase": "Terminating"});
        let w = st.replace(&res.key(), new);
        return Ok(served(res, &w));
    }
    let mut finalizers = finalizers;
    if propagation == "Foreground" && !already {
        let f = json!("foregroundDeletion");
        if !finalizers.contains(&f) {
            finalizers.push(f);
        }
    }
    if finalizers.is_empty() {
        let removed = finish_delete(st, res, ns, name).unwrap_or(obj);
        if res.builtin {
            let mut d = json!({"name": name});
            if !res.group.is_empty() {
                d["group"] = json!(res.group);
            }
            d["kind"] = json!(res.plural);
            d["uid"] = json!(meta_str(&removed, "uid"));
            return Ok(
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d}),
            );
        }
        return Ok(served(res, &removed));
    }
    if already {
        return Ok(served(res, &obj));
    }
    let mut new = obj.clone();
    let m = meta_mut(&mut new);
    m.insert("deletionTimestamp".into(), json!(rfc3339(now)));
    m.insert("deletionGracePeriodSeconds".into(), json!(0));
    m.insert("finalizers".into(), Value::Array(finalizers));
    let w = st.replace(&res.key(), new);
    Ok(served(res, &w))
}

/// Removes owner references to `uid` from every dependent (`propagationPolicy=Orphan`).
fn orphan_dependents(st: &mut Store, uid: &str) {
    let mut changes: Vec<(String, Value)> = Vec::new();
    for (key, objs) in &st.objects {
        for o in objs.values() {
            let refs = o
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array);
            if refs.is_some_and(|r| {
                r.iter()
                    .any(|x| x.get("uid").and_then(Value::as_str) == Some(uid))
            }) {
                let mut n = o.clone();
                if let Some(r) = n
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    r.retain(|x| x.get("uid").and_then(Value::as_str) != Some(uid));
                }
                changes.push((key.clone(), n));
            }
        }
    }
    for (key, n) in changes {
        st.replace(&key, n);
    }
}

/// DELETE on a collection (deletecollection) with selectors.
pub fn delete_collection(
    st: &mut Store,
    res: &Resource,
    ns: Option<&str>,
    q: &Query,
    opts: &DeleteOpts,
) -> Result<Value, ApiError> {
    let (items, _) = list(
        st,
        res,
        ns,
        &Query {
            limit: None,
            continue_token: None,
            ..q.clone()
        },
    )?;
    let mut out = Vec::new();
    for it in items {
        let n = meta_str(&it, "namespace").to_string();
        let name = meta_str(&it, "name").to_string();
        if let Ok(v) = delete(st, res, &n, &name, opts) {
            if v.get("kind").and_then(Value::as_str) != Some("Status") {
                out.push(v);
            }
        }
    }
    Ok(list_object(
        res,
        out,
        json!({"resourceVersion": st.rv.to_string()}),
    ))
}

/// POST `pods/{name}/eviction`: the Eviction API with PodDisruptionBudget checks.
pub fn evict(
    st: &mut Store,
    pods: &Resource,
    ns: &str,
    name: &str,
    body: &[u8],
) -> Result<(u16, Value), ApiError> {
    let ev: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let ev_name = meta_str(&ev, "name");
    if !ev_name.is_empty() && ev_name != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let pod = st
        .get(&pods.key(), ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(pods, name))?;
    let mut opts = DeleteOpts::default();
    if let Some(d) = ev.get("deleteOptions") {
        opts.absorb(d);
    }
    let success =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    let terminating = pod.pointer("/metadata/deletionTimestamp").is_some();
    if matches!(phase, "Succeeded" | "Failed" | "Pending") || terminating {
        if !opts.dry_run {
            delete(st, pods, ns, name, &opts)?;
        }
        return Ok((201, success));
    }
    let pdb_res = st
        .registry
        .find("policy", "v1", "poddisruptionbudgets")
        .unwrap()
        .clone();
    let labels = super::util::labels(&pod);
    let matching: Vec<Value> = st
        .list(&pdb_res.key(), Some(ns))
        .filter(|p| {
            LabelSelector::from_object(p.pointer("/spec/selector"))
                .map(|s| s.matches(&labels))
                .unwrap_or(false)
        })
        .cloned()
        .collect();
    if matching.len() > 1 {
        return Err(ApiError::internal(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    if let Some(budget) = matching.into_iter().next() {
        let bname = meta_str(&budget, "name").to_string();
        let gen = budget
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let observed = budget
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let too_many = |cause: String| ApiError {
            details: Some(json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]})),
            ..ApiError::new(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
            )
        };
        if observed < gen {
            return Err(too_many(format!(
                "The disruption budget {bname} is still being processed by the server."
            )));
        }
        let healthy = kinds::pod_ready(&pod);
        let policy = budget
            .pointer("/spec/unhealthyPodEvictionPolicy")
            .and_then(Value::as_str)
            .unwrap_or("IfHealthyBudget");
        let current = budget
            .pointer("/status/currentHealthy")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let desired = budget
            .pointer("/status/desiredHealthy")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let unhealthy_ok = !healthy && (policy == "AlwaysAllow" || current >= desired);
        if !unhealthy_ok {
            let allowed = budget
                .pointer("/status/disruptionsAllowed")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if allowed < 0 {
                return Err(ApiError::new(
                    403,
                    "Forbidden",
                    "pdb disruptions allowed is negative",
                ));
            }
            if allowed == 0 {
                return Err(too_many(format!(
                    "The disruption budget {bname} needs {desired} healthy pods and has {current} currently"
                )));
            }
            if !opts.dry_run {
                let mut nb = budget.clone();
                nb["status"]["disruptionsAllowed"] = json!(allowed - 1);
                let dp = super::util::obj_at(&mut nb, &["status", "disruptedPods"]);
                dp.insert(name.to_string(), json!(now_rfc3339()));
                st.replace(&pdb_res.key(), nb);
            }
        }
    }
    if !opts.dry_run {
        delete(st, pods, ns, name, &opts)?;
    }
    Ok((201, success))
}

/// POST `pods/{name}/binding`.
pub fn bind(
    st: &mut Store,
    pods: &Resource,
    ns: &str,
    name: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let b: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let node = b
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let pod = st
        .get(&pods.key(), ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(pods, name))?;
    if let Some(n) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Err(ApiError::conflict(
            pods,
            name,
            &format!("pod {name} is already assigned to node \"{n}\""),
        ));
    }
    let mut new = pod;
    new["spec"]["nodeName"] = json!(node);
    kinds::set_condition(&mut new, "PodScheduled", "True", "", "");
    st.replace(&pods.key(), new);
    Ok(
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// The default namespaces of a new cluster.
pub fn seed(st: &mut Store) {
    let nsres = st.registry.find("", "v1", "namespaces").unwrap().clone();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let _ = create(
            st,
            &nsres,
            "",
            json!({"metadata": {"name": ns}}),
            &Query::default(),
        );
    }
}

/// The `DefaultStorageClass` admission plugin: a claim created without `storageClassName` gets
/// the default StorageClass (annotation `storageclass.kubernetes.io/is-default-class: "true"`;
/// the newest, then the first by name), when there is one.
fn default_storage_class(st: &Store, claim: &mut Value) {
    if claim.pointer("/spec/storageClassName").is_some() {
        return;
    }
    let is_default = |sc: &Value| {
        [
            "storageclass.kubernetes.io/is-default-class",
            "storageclass.beta.kubernetes.io/is-default-class",
        ]
        .iter()
        .any(|a| {
            sc.pointer(&format!("/metadata/annotations/{}", a.replace('/', "~1")))
                .and_then(Value::as_str)
                == Some("true")
        })
    };
    let created = |sc: &Value| {
        sc.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let name = |sc: &Value| {
        sc.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let default = st
        .list("storage.k8s.io/storageclasses", None)
        .filter(|sc| is_default(sc))
        .max_by(|a, b| {
            created(a)
                .cmp(&created(b))
                .then_with(|| name(b).cmp(&name(a)))
        });
    if let Some(sc) = default {
        let class = name(sc);
        if let Some(spec) = claim.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("storageClassName".into(), json!(class));
        }
    }
}
