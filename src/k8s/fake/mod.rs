//! An in-memory Kubernetes API behind the [`Cluster`] seam, for fast unit tests of the use
//! cases (the pattern of kube-rs's `ApiServerVerifier`, with state like our `FakeCloud`).
//!
//! It serves objects the test puts in ([`FakeCluster::put`]) the way the API server would for
//! the requests this tool makes — GET, paginated LIST with label and field selectors, create,
//! JSON merge / JSON / strategic merge patches, PUT, DELETE with finalizers, `pods/eviction` with
//! PodDisruptionBudget arithmetic, discovery — keeps a global `resourceVersion` (a write that
//! names a stale one is a 409), records every request ([`FakeCluster::requests`]) so a test can
//! assert the exact calls, and answers with scripted faults ([`FakeCluster::fail`]: any status,
//! or no answer at all) to drive the error branches.
//!
//! Clones share one state, so a test can keep a handle while the code under test holds another
//! (and a [`FakeClock`](crate::usecases::clock::FakeClock) tick can change the world).
//!
//! What it does not do: watches, server-side apply, admission/defaulting, controllers. The
//! loopback test cluster (`tests/cluster`) does those, checked by the real `kubectl`; the label
//! and field selector and patch semantics here are the same code it uses.

pub mod patch;
pub mod selector;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::{Cluster, ClusterError, Method, Request, Response};
use selector::{FieldSelector, LabelSelector};

/// A request as the fake received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Method.
    pub method: Method,
    /// Path without the query.
    pub path: String,
    /// The query string (`limit=500&labelSelector=…`), decoded.
    pub query: String,
    /// The body, parsed (`Null` when there was none).
    pub body: Value,
    /// The body's content type (tells the patch kinds apart).
    pub content_type: &'static str,
}

impl Recorded {
    /// `"PATCH /api/v1/nodes/a"`: the short form tests compare.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// What a scripted fault answers with.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultAnswer {
    /// An HTTP status with a `Status` body (`409`, `429`, `500`, …).
    Status(u16, String),
    /// No answer at all (a timeout, a reset connection).
    NoAnswer(String),
    /// The request is served — a write takes effect — but its answer is lost (a connection
    /// reset after the API server applied it): the client cannot tell this from
    /// [`FaultAnswer::NoAnswer`], and must read again rather than assume either.
    LostAnswer(String),
}

/// A scripted fault: the next `times` requests matching `method` and whose path contains
/// `path` get `answer` instead of being served.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Method to match; `None` matches any.
    pub method: Option<Method>,
    /// Substring of the path (without query) to match.
    pub path: String,
    /// How many requests it answers (then it is spent).
    pub times: u32,
    /// The answer.
    pub answer: FaultAnswer,
}

/// Where an object lives: `/api/v1` or `/apis/<group>/<version>`, its resource (plural),
/// namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    prefix: String,
    resource: String,
    namespace: Option<String>,
    name: String,
}

/// A request path, taken apart.
#[derive(Debug)]
struct Target {
    prefix: String,
    resource: String,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    git_version: String,
    /// Discovery: group-version prefix → resources served there.
    served: BTreeMap<String, BTreeSet<String>>,
    objects: BTreeMap<Key, Value>,
    resource_version: u64,
    uids: u64,
    requests: Vec<Recorded>,
    faults: Vec<Fault>,
}

/// The in-memory API. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct FakeCluster {
    state: Rc<RefCell<State>>,
    hooks: Rc<RefCell<Vec<Hook>>>,
}

/// Runs once, right after the first request matching `method` and `path` (a substring) was
/// served: the world changing between two of the code's requests.
struct Hook {
    method: Method,
    path: String,
    run: Box<dyn FnOnce(&FakeCluster)>,
}

impl std::fmt::Debug for FakeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeCluster")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Default for FakeCluster {
    fn default() -> Self {
        FakeCluster::new()
    }
}

/// The built-in resources the fake serves from the start, by group-version prefix.
const BUILT_IN: &[(&str, &[&str])] = &[
    (
        "/api/v1",
        &[
            "namespaces",
            "nodes",
            "pods",
            "pods/eviction",
            "configmaps",
            "secrets",
            "persistentvolumes",
            "persistentvolumeclaims",
            "events",
            "services",
            "podtemplates",
        ],
    ),
    (
        "/apis/apps/v1",
        &["deployments", "daemonsets", "replicasets", "statefulsets"],
    ),
    ("/apis/policy/v1", &["poddisruptionbudgets"]),
    ("/apis/coordination.k8s.io/v1", &["leases"]),
    ("/apis/node.k8s.io/v1", &["runtimeclasses"]),
    (
        "/apis/storage.k8s.io/v1",
        &["storageclasses", "csinodes", "volumeattachments"],
    ),
];

/// Kinds whose objects have no namespace.
const CLUSTER_SCOPED: &[&str] = &[
    "Node",
    "Namespace",
    "PersistentVolume",
    "RuntimeClass",
    "StorageClass",
    "CSINode",
    "VolumeAttachment",
    "NodePool",
    "NodeClaim",
    "Provisioner",
    "Machine",
    "EC2NodeClass",
    "AWSNodeTemplate",
    "NodeOverlay",
    "NodeClass",
];

impl FakeCluster {
    /// An empty cluster at Kubernetes 1.29 serving the built-in APIs (no Karpenter CRDs).
    pub fn new() -> FakeCluster {
        let mut state = State {
            git_version: "v1.29.0".into(),
            ..State::default()
        };
        for (prefix, resources) in BUILT_IN {
            state.served.insert(
                prefix.to_string(),
                resources.iter().map(|r| r.to_string()).collect(),
            );
        }
        FakeCluster {
            state: Rc::new(RefCell::new(state)),
            hooks: Rc::default(),
        }
    }

    /// Sets the version `/version` answers (`v1.25.16-eks-1234`).
    pub fn with_version(self, git_version: &str) -> FakeCluster {
        self.state.borrow_mut().git_version = git_version.into();
        self
    }

    /// Serves `resources` at `group_version` (`karpenter.sh/v1`), as installing a CRD does.
    pub fn serve(self, group_version: &str, resources: &[&str]) -> FakeCluster {
        self.state
            .borrow_mut()
            .served
            .entry(prefix_of(group_version))
            .or_default()
            .extend(resources.iter().map(|r| r.to_string()));
        self
    }

    /// The Karpenter v1 CRDs: `karpenter.sh/v1` NodePools and NodeClaims, `karpenter.k8s.aws/v1`
    /// EC2NodeClasses.
    pub fn karpenter_v1(self) -> FakeCluster {
        self.serve("karpenter.sh/v1", &["nodepools", "nodeclaims"])
            .serve("karpenter.k8s.aws/v1", &["ec2nodeclasses"])
    }

    /// The Karpenter v1beta1 CRDs (v0.32–v0.37).
    pub fn karpenter_v1beta1(self) -> FakeCluster {
        self.serve("karpenter.sh/v1beta1", &["nodepools", "nodeclaims"])
            .serve("karpenter.k8s.aws/v1beta1", &["ec2nodeclasses"])
    }

    /// The Karpenter v1alpha5 CRDs (v0.2x–v0.31).
    pub fn karpenter_v1alpha5(self) -> FakeCluster {
        self.serve("karpenter.sh/v1alpha5", &["provisioners", "machines"])
            .serve("karpenter.k8s.aws/v1alpha1", &["awsnodetemplates"])
    }

    /// Creates or replaces an object (no request is recorded): it gets a uid, a
    /// `creationTimestamp` if it has none, and the next `resourceVersion`. Panics on an object
    /// without `apiVersion`, `kind` or `metadata.name` (a broken test, not input).
    pub fn put(&self, object: Value) {
        let key = key_of(&object).expect("test object needs apiVersion, kind and metadata.name");
        let mut st = self.state.borrow_mut();
        let object = st.stamp(object, None);
        st.objects.insert(key, object);
    }

    /// Puts every object of `objects`.
    pub fn put_all(&self, objects: impl IntoIterator<Item = Value>) {
        for o in objects {
            self.put(o);
        }
    }

    /// The object `api_version`/`kind` named `name` (in `namespace`), as stored now.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let key = Key {
            prefix: prefix_of(api_version),
            resource: plural(kind),
            namespace: namespace.map(str::to_string),
            name: name.into(),
        };
        self.state.borrow().objects.get(&key).cloned()
    }

    /// Every stored object of `api_version`/`kind`, by namespace and name.
    pub fn list(&self, api_version: &str, kind: &str) -> Vec<Value> {
        let (prefix, resource) = (prefix_of(api_version), plural(kind));
        self.state
            .borrow()
            .objects
            .iter()
            .filter(|(k, _)| k.prefix == prefix && k.resource == resource)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Removes an object outright (as a controller finishing a deletion would).
    pub fn remove(&self, api_version: &str, kind: &str, namespace: Option<&str>, name: &str) {
        let key = Key {
            prefix: prefix_of(api_version),
            resource: plural(kind),
            namespace: namespace.map(str::to_string),
            name: name.into(),
        };
        self.state.borrow_mut().objects.remove(&key);
    }

    /// Changes a stored object in place (bumping its `resourceVersion`), as another actor would.
    pub fn update(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        change: impl FnOnce(&mut Value),
    ) {
        let mut object = self
            .get(api_version, kind, namespace, name)
            .unwrap_or_else(|| panic!("no {kind} {name} to update"));
        change(&mut object);
        self.put(object);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.borrow().requests.clone()
    }

    /// The requests that change something (everything but GET), as `"METHOD path"` lines.
    pub fn writes(&self) -> Vec<String> {
        self.state
            .borrow()
            .requests
            .iter()
            .filter(|r| r.method != Method::Get)
            .map(Recorded::line)
            .collect()
    }

    /// Forgets the requests recorded so far.
    pub fn clear_requests(&self) {
        self.state.borrow_mut().requests.clear();
    }

    /// Forgets the scripted faults not spent yet.
    pub fn clear_faults(&self) {
        self.state.borrow_mut().faults.clear();
    }

    /// Scripts a fault (see [`Fault`]).
    pub fn fail(&self, fault: Fault) {
        self.state.borrow_mut().faults.push(fault);
    }

    /// Changes the world once, right after the next `method` request whose path contains
    /// `path` has been served (e.g. a pod binds between a taint and the re-read after it).
    pub fn after(&self, method: Method, path: &str, run: impl FnOnce(&FakeCluster) + 'static) {
        self.hooks.borrow_mut().push(Hook {
            method,
            path: path.into(),
            run: Box::new(run),
        });
    }

    /// Shorthand: the next `times` requests `method path…` answer `status` with `message`.
    pub fn fail_with(&self, method: Method, path: &str, times: u32, status: u16, message: &str) {
        self.fail(Fault {
            method: Some(method),
            path: path.into(),
            times,
            answer: FaultAnswer::Status(status, message.into()),
        });
    }
}

impl Cluster for FakeCluster {
    fn send(&self, request: Request) -> Result<Response, ClusterError> {
        let (path, query) = match request.path.split_once('?') {
            Some((p, q)) => (p.to_string(), decode_query(q)),
            None => (request.path.clone(), String::new()),
        };
        let body: Value = request
            .body
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(Value::Null);
        let mut st = self.state.borrow_mut();
        st.requests.push(Recorded {
            method: request.method,
            path: path.clone(),
            query: query.clone(),
            body: body.clone(),
            content_type: request.content_type,
        });
        let mut lost = None;
        match st.take_fault(request.method, &path) {
            Some(FaultAnswer::Status(status, message)) => {
                return Ok(status_response(status, &message))
            }
            Some(FaultAnswer::NoAnswer(message)) => {
                return Err(ClusterError::Transport {
                    server: "fake".into(),
                    message,
                })
            }
            Some(FaultAnswer::LostAnswer(message)) => lost = Some(message),
            None => {}
        }
        let response = st.serve(request.method, &path, &query, body, request.content_type);
        drop(st);
        let hook = {
            let mut hooks = self.hooks.borrow_mut();
            let due = hooks
                .iter()
                .position(|h| h.method == request.method && path.contains(&h.path));
            due.map(|i| hooks.remove(i))
        };
        if let Some(hook) = hook {
            (hook.run)(self);
        }
        match lost {
            Some(message) => Err(ClusterError::Transport {
                server: "fake".into(),
                message,
            }),
            None => Ok(response),
        }
    }

    fn request_count(&self) -> u64 {
        self.state.borrow().requests.len() as u64
    }
}

impl State {
    fn take_fault(&mut self, method: Method, path: &str) -> Option<FaultAnswer> {
        let i = self.faults.iter().position(|f| {
            f.times > 0 && f.method.is_none_or(|m| m == method) && path.contains(&f.path)
        })?;
        self.faults[i].times -= 1;
        let answer = self.faults[i].answer.clone();
        if self.faults[i].times == 0 {
            self.faults.remove(i);
        }
        Some(answer)
    }

    /// Gives `object` a uid (kept from `previous`), a creation time and the next version.
    fn stamp(&mut self, mut object: Value, previous: Option<&Value>) -> Value {
        self.resource_version += 1;
        let rv = self.resource_version.to_string();
        let meta = object
            .as_object_mut()
            .expect("objects are JSON objects")
            .entry("metadata")
            .or_insert_with(|| json!({}));
        let meta = meta.as_object_mut().expect("metadata is an object");
        let kept = |field: &str| previous.and_then(|p| p.pointer(&format!("/metadata/{field}")));
        if !meta.contains_key("uid") {
            let uid = match kept("uid") {
                Some(u) => u.clone(),
                None => {
                    self.uids += 1;
                    json!(format!("00000000-0000-0000-0000-{:012}", self.uids))
                }
            };
            meta.insert("uid".into(), uid);
        }
        if !meta.contains_key("creationTimestamp") {
            let created = kept("creationTimestamp")
                .cloned()
                .unwrap_or_else(|| json!("2026-01-01T00:00:00Z"));
            meta.insert("creationTimestamp".into(), created);
        }
        meta.insert("resourceVersion".into(), json!(rv));
        object
    }

    fn serve(
        &mut self,
        method: Method,
        path: &str,
        query: &str,
        body: Value,
        content_type: &str,
    ) -> Response {
        if path == "/version" {
            return ok(&json!({"major": "1", "gitVersion": self.git_version}));
        }
        if let Some(resources) = self.discovery(path) {
            return resources;
        }
        let Some(target) = parse_target(path) else {
            return status_response(404, &format!("the server could not find {path}"));
        };
        if !self.is_served(&target) {
            return status_response(
                404,
                &format!("the server could not find the requested resource ({path})"),
            );
        }
        match (method, &target.name, target.subresource.as_deref()) {
            (Method::Get, None, _) => self.list(&target, query),
            (Method::Get, Some(_), _) => match self.objects.get(&key(&target)) {
                Some(o) => ok(o),
                None => not_found(&target),
            },
            (Method::Post, Some(_), Some("eviction")) => self.evict(&target, &body),
            (Method::Post, None, _) => self.create(&target, body),
            (Method::Patch, Some(_), _) => self.patch(&target, body, content_type),
            (Method::Put, Some(_), _) => self.replace(&target, body),
            (Method::Delete, Some(_), _) => self.delete(&target),
            _ => status_response(405, &format!("{method} is not allowed on {path}")),
        }
    }

    /// `/api/v1`, `/apis/<group>/<version>`: the served resources.
    fn discovery(&self, path: &str) -> Option<Response> {
        let resources = self.served.get(path)?;
        let list: Vec<Value> = resources.iter().map(|r| json!({"name": r})).collect();
        Some(ok(&json!({"kind": "APIResourceList", "resources": list})))
    }

    fn is_served(&self, t: &Target) -> bool {
        self.served
            .get(&t.prefix)
            .is_some_and(|r| r.contains(&t.resource))
    }

    fn list(&self, t: &Target, query: &str) -> Response {
        let param = |name: &str| {
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        };
        let labels = match LabelSelector::parse(param("labelSelector").unwrap_or("")) {
            Ok(s) => s,
            Err(e) => return status_response(400, &e),
        };
        let fields = match FieldSelector::parse(param("fieldSelector").unwrap_or("")) {
            Ok(s) => s,
            Err(e) => return status_response(400, &e),
        };
        let limit: usize = param("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
        let start: usize = param("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
        let matching: Vec<&Value> = self
            .objects
            .iter()
            .filter(|(k, _)| {
                k.prefix == t.prefix
                    && k.resource == t.resource
                    && (t.namespace.is_none() || k.namespace == t.namespace)
            })
            .map(|(_, v)| v)
            .filter(|v| {
                let empty = Map::new();
                let object_labels = v
                    .pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty);
                let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
                labels.matches(object_labels) && fields.matches(kind, v)
            })
            .collect();
        let end = if limit == 0 {
            matching.len()
        } else {
            (start + limit).min(matching.len())
        };
        let items: Vec<Value> = matching[start.min(end)..end]
            .iter()
            .map(|v| (*v).clone())
            .collect();
        let next = if end < matching.len() {
            end.to_string()
        } else {
            String::new()
        };
        ok(&json!({
            "kind": "List",
            "metadata": {"resourceVersion": self.resource_version.to_string(), "continue": next},
            "items": items,
        }))
    }

    fn create(&mut self, t: &Target, mut body: Value) -> Response {
        let generate = body
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .map(str::to_string);
        if body.pointer("/metadata/name").is_none() {
            let Some(prefix) = generate else {
                return status_response(422, "metadata.name: Required value");
            };
            body["metadata"]["name"] = json!(format!("{prefix}{:05}", self.uids + 1));
        }
        let name = body["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if let Some(ns) = &t.namespace {
            body["metadata"]["namespace"] = json!(ns);
        }
        let key = Key {
            prefix: t.prefix.clone(),
            resource: t.resource.clone(),
            namespace: t.namespace.clone(),
            name: name.clone(),
        };
        if self.objects.contains_key(&key) {
            return status_response(409, &format!("{} \"{name}\" already exists", t.resource));
        }
        if let Some(m) = body["metadata"].as_object_mut() {
            m.remove("resourceVersion");
            m.remove("uid");
        }
        let object = self.stamp(body, None);
        self.objects.insert(key, object.clone());
        Response {
            status: 201,
            body: object.to_string().into_bytes(),
        }
    }

    /// A write naming a `resourceVersion` other than the stored one conflicts.
    fn stale(current: &Value, body: &Value) -> bool {
        let wanted = body
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        wanted.is_some_and(|w| {
            Some(w)
                != current
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
        })
    }

    fn patch(&mut self, t: &Target, body: Value, content_type: &str) -> Response {
        let k = key(t);
        let Some(current) = self.objects.get(&k).cloned() else {
            return not_found(t);
        };
        let mut next = current.clone();
        let applied = match content_type {
            "application/json-patch+json" => patch::json_patch(&mut next, &body),
            "application/merge-patch+json" => {
                if State::stale(&current, &body) {
                    return conflict(t);
                }
                patch::merge_patch(&mut next, &body);
                Ok(())
            }
            "application/strategic-merge-patch+json" => {
                if State::stale(&current, &body) {
                    return conflict(t);
                }
                patch::strategic_merge(&mut next, &body)
            }
            other => return status_response(415, &format!("unsupported patch type {other}")),
        };
        if let Err(e) = applied {
            // A failed `test` op (or a bad path) is the server's 422.
            return status_response(422, &e);
        }
        self.store(k, next, &current)
    }

    fn replace(&mut self, t: &Target, body: Value) -> Response {
        let k = key(t);
        let Some(current) = self.objects.get(&k).cloned() else {
            return not_found(t);
        };
        if State::stale(&current, &body) {
            return conflict(t);
        }
        self.store(k, body, &current)
    }

    /// Stores an update; an object being deleted whose last finalizer went is removed.
    fn store(&mut self, k: Key, mut next: Value, current: &Value) -> Response {
        if let Some(m) = next["metadata"].as_object_mut() {
            m.remove("resourceVersion");
            m.remove("uid");
            if let Some(ts) = current.pointer("/metadata/deletionTimestamp") {
                m.insert("deletionTimestamp".into(), ts.clone());
            }
        }
        let object = self.stamp(next, Some(current));
        let deleting = object.pointer("/metadata/deletionTimestamp").is_some();
        let finalizers = object
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if deleting && !finalizers {
            self.objects.remove(&k);
        } else {
            self.objects.insert(k, object.clone());
        }
        ok(&object)
    }

    fn delete(&mut self, t: &Target) -> Response {
        let k = key(t);
        let Some(current) = self.objects.get(&k).cloned() else {
            return not_found(t);
        };
        let finalizers = current
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if !finalizers {
            self.objects.remove(&k);
            return ok(&current);
        }
        if current.pointer("/metadata/deletionTimestamp").is_some() {
            return ok(&current);
        }
        let mut next = current.clone();
        next["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let object = self.stamp(next, Some(&current));
        self.objects.insert(k, object.clone());
        ok(&object)
    }

    /// `pods/eviction`: the pod's PodDisruptionBudget must allow one more disruption (429
    /// naming it otherwise; 500 when several select the pod, as the real server answers).
    fn evict(&mut self, t: &Target, body: &Value) -> Response {
        let pod_target = Target {
            prefix: t.prefix.clone(),
            resource: t.resource.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            subresource: None,
        };
        let k = key(&pod_target);
        let Some(pod) = self.objects.get(&k).cloned() else {
            return not_found(&pod_target);
        };
        // The NamespaceLifecycle admission plugin refuses every create in a namespace being
        // deleted, evictions included: 403 with the `NamespaceTerminating` cause.
        let namespace = k.namespace.clone().unwrap_or_default();
        let ns_key = Key {
            prefix: "/api/v1".into(),
            resource: "namespaces".into(),
            namespace: None,
            name: namespace.clone(),
        };
        if self
            .objects
            .get(&ns_key)
            .is_some_and(|ns| ns.pointer("/metadata/deletionTimestamp").is_some())
        {
            let body = json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                "reason": "Forbidden",
                "message": format!("pods \"{}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated", k.name),
                "details": {"name": k.name, "kind": "pods", "causes": [{"reason": "NamespaceTerminating",
                    "message": format!("namespace {namespace} is being terminated"),
                    "field": "metadata.namespace"}]},
            });
            return Response {
                status: 403,
                body: body.to_string().into_bytes(),
            };
        }
        if let Some(uid) = body
            .pointer("/deleteOptions/preconditions/uid")
            .and_then(Value::as_str)
        {
            if pod.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid) {
                return status_response(
                    409,
                    "Precondition failed: UID in precondition does not match",
                );
            }
        }
        let pdbs: Vec<Key> = self
            .objects
            .iter()
            .filter(|(pk, pdb)| {
                pk.resource == "poddisruptionbudgets"
                    && pk.namespace == k.namespace
                    && selects(pdb, &pod)
            })
            .map(|(pk, _)| pk.clone())
            .collect();
        if pdbs.len() > 1 {
            return status_response(
                500,
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            );
        }
        if let Some(pk) = pdbs.first() {
            let pdb = self.objects[pk].clone();
            let allowed = self.disruptions_allowed(&pdb);
            if allowed <= 0 {
                let name = pdb
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let body = json!({
                    "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 429,
                    "reason": "TooManyRequests",
                    "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                    "details": {"causes": [{"reason": "DisruptionBudget",
                        "message": format!("The disruption budget {name} needs more healthy pods")}]},
                });
                return Response {
                    status: 429,
                    body: body.to_string().into_bytes(),
                };
            }
            if pdb.pointer("/status/disruptionsAllowed").is_some() {
                let mut next = pdb.clone();
                next["status"]["disruptionsAllowed"] = json!(allowed - 1);
                let stamped = self.stamp(next, Some(&pdb));
                self.objects.insert(pk.clone(), stamped);
            }
        }
        self.objects.remove(&k);
        Response {
            status: 201,
            body: json!({"kind": "Status", "status": "Success"})
                .to_string()
                .into_bytes(),
        }
    }

    /// The scale of the controllers of a PDB's pods, as the disruption controller sums it
    /// (`k8s.io/kubernetes pkg/controller/disruption/disruption.go` `getExpectedScale`): each
    /// controller counted once at its `spec.replicas` — a ReplicaSet a Deployment controls at the
    /// Deployment's (`getPodDeployment`) —, so a pod just evicted and not yet made again is
    /// still expected (and unhealthy). A pod with no controller is unmanaged and not counted. A
    /// pod whose controller the fake does not hold counts for itself (upstream fails the sync
    /// and allows nothing; tests put pods without their owners).
    fn expected_scale(&self, namespace: Option<&str>, selected: &[&Value]) -> i64 {
        let controller_of = |object: &Value| -> Option<(String, String, String)> {
            let r = object
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)?
                .iter()
                .find(|r| r["controller"] == true)?;
            Some((
                r["apiVersion"].as_str()?.to_string(),
                r["kind"].as_str()?.to_string(),
                r["name"].as_str()?.to_string(),
            ))
        };
        let held = |(api_version, kind, name): &(String, String, String)| {
            self.objects.get(&Key {
                prefix: prefix_of(api_version),
                resource: plural(kind),
                namespace: namespace.map(str::to_string),
                name: name.clone(),
            })
        };
        let mut controllers = BTreeSet::new();
        let mut expected = 0i64;
        for pod in selected {
            let Some(owner) = controller_of(pod) else {
                continue;
            };
            let scale = held(&owner).and_then(|object| {
                let deployment = controller_of(object)
                    .filter(|(_, kind, _)| owner.1 == "ReplicaSet" && kind == "Deployment")
                    .and_then(|d| Some((held(&d)?, d)));
                let (object, controller) = deployment.unwrap_or((object, owner.clone()));
                let replicas = object.pointer("/spec/replicas").and_then(Value::as_i64)?;
                Some((controller, replicas))
            });
            match scale {
                Some((controller, replicas)) => {
                    if controllers.insert(controller) {
                        expected += replicas;
                    }
                }
                None => expected += 1,
            }
        }
        expected
    }

    /// `status.disruptionsAllowed` when the PDB has a status, else computed from its spec and
    /// the healthy (Running, not terminating) pods it selects as the disruption controller does
    /// (`disruption.go` `getExpectedPodCount`, `updatePdbStatus`): `maxUnavailable` and a
    /// percentage `minAvailable` scale with the controllers' replicas (rounded up), an integer
    /// `minAvailable` is the healthy pods wanted; nothing is allowed while nothing is expected.
    fn disruptions_allowed(&self, pdb: &Value) -> i64 {
        if let Some(n) = pdb
            .pointer("/status/disruptionsAllowed")
            .and_then(Value::as_i64)
        {
            return n;
        }
        let namespace = pdb.pointer("/metadata/namespace").and_then(Value::as_str);
        let selected: Vec<&Value> = self
            .objects
            .iter()
            .filter(|(k, pod)| {
                k.resource == "pods" && k.namespace.as_deref() == namespace && selects(pdb, pod)
            })
            .map(|(_, p)| p)
            .collect();
        let (expected, desired) = self.expected_and_desired(pdb, namespace, &selected);
        let healthy = selected
            .iter()
            .filter(|p| {
                p.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
                    && p.pointer("/metadata/deletionTimestamp").is_none()
            })
            .count() as i64;
        if expected <= 0 {
            return 0;
        }
        (healthy - desired).max(0)
    }

    /// A PDB's expected pods and the healthy pods it wants (`disruption.go`
    /// `getExpectedPodCount`; `maxUnavailable` first, as there).
    fn expected_and_desired(
        &self,
        pdb: &Value,
        namespace: Option<&str>,
        selected: &[&Value],
    ) -> (i64, i64) {
        // `intstr.GetScaledValueFromIntOrPercent(…, roundUp=true)`.
        let scaled = |v: &Value, expected: i64| -> i64 {
            match v {
                Value::Number(n) => n.as_i64().unwrap_or(0),
                Value::String(s) => {
                    let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
                    (pct * expected + 99) / 100
                }
                _ => 0,
            }
        };
        if let Some(max) = pdb.pointer("/spec/maxUnavailable") {
            let expected = self.expected_scale(namespace, selected);
            return (expected, (expected - scaled(max, expected)).max(0));
        }
        match pdb.pointer("/spec/minAvailable") {
            Some(Value::Number(min)) => (selected.len() as i64, min.as_i64().unwrap_or(0)),
            Some(min) => {
                let expected = self.expected_scale(namespace, selected);
                (expected, scaled(min, expected))
            }
            None => (0, 0),
        }
    }
}

/// Whether a PodDisruptionBudget's selector selects `pod` (policy/v1: an empty selector
/// selects every pod of the namespace).
fn selects(pdb: &Value, pod: &Value) -> bool {
    let selector = match pdb.pointer("/spec/selector") {
        Some(s) if s.as_object().is_some_and(|o| o.is_empty()) => return true,
        other => LabelSelector::from_object(other),
    };
    let empty = Map::new();
    let labels = pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    selector.is_ok_and(|s| s.matches(labels))
}

fn ok(object: &Value) -> Response {
    Response {
        status: 200,
        body: object.to_string().into_bytes(),
    }
}

/// A `Status` error body, shaped like the API server's.
fn status_response(status: u16, message: &str) -> Response {
    let reason = match status {
        400 => "BadRequest",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        409 => "Conflict",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    };
    let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "code": status, "reason": reason, "message": message});
    Response {
        status,
        body: body.to_string().into_bytes(),
    }
}

fn not_found(t: &Target) -> Response {
    status_response(
        404,
        &format!(
            "{} \"{}\" not found",
            t.resource,
            t.name.as_deref().unwrap_or_default()
        ),
    )
}

fn conflict(t: &Target) -> Response {
    status_response(
        409,
        &format!(
            "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
            t.resource,
            t.name.as_deref().unwrap_or_default()
        ),
    )
}

fn key(t: &Target) -> Key {
    Key {
        prefix: t.prefix.clone(),
        resource: t.resource.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone().unwrap_or_default(),
    }
}

/// `/api/v1` for `v1`, `/apis/<group>/<version>` otherwise.
fn prefix_of(api_version: &str) -> String {
    if api_version == "v1" {
        "/api/v1".into()
    } else {
        format!("/apis/{api_version}")
    }
}

/// The resource name of a kind: lower case, plural (`EC2NodeClass` → `ec2nodeclasses`).
fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|stem| !stem.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

fn key_of(object: &Value) -> Option<Key> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let name = object.pointer("/metadata/name")?.as_str()?;
    let namespace = if CLUSTER_SCOPED.contains(&kind) {
        None
    } else {
        Some(
            object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string(),
        )
    };
    Some(Key {
        prefix: prefix_of(api_version),
        resource: plural(kind),
        namespace,
        name: name.into(),
    })
}

/// Takes `/api/v1/namespaces/ns/pods/name/eviction` (and the cluster-scoped and collection
/// forms) apart. `/api/v1/namespaces/x` is the Namespace `x`.
fn parse_target(path: &str) -> Option<Target> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (prefix, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("/api/v1".to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("/apis/{group}/{version}"), rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(ns.to_string()), rest),
        _ => (None, rest),
    };
    let (resource, name, subresource) = match rest {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(name.to_string()), None),
        [resource, name, sub] => (*resource, Some(name.to_string()), Some(sub.to_string())),
        _ => return None,
    };
    Some(Target {
        prefix,
        resource: resource.into(),
        namespace,
        name,
        subresource,
    })
}

/// Percent-decodes a query string (the selectors arrive encoded; none of them holds a `&`).
fn decode_query(query: &str) -> String {
    let bytes = query.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
