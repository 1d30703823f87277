//! Authentication and RBAC authorization (with `Config::rbac`): bearer tokens of
//! ServiceAccounts, checked against Roles/ClusterRoles and their bindings the way
//! kube-apiserver's RBAC authorizer does, so the shipped ClusterRoles can be proven enough and
//! no more (TESTING.md "least privilege").
//!
//! - **Who**: `Authorization: Bearer <token>` with a token from the TokenRequest API
//!   (`POST …/serviceaccounts/<name>/token`, what `kubectl create token` calls) is
//!   `system:serviceaccount:<ns>:<name>` in groups `system:serviceaccounts`,
//!   `system:serviceaccounts:<ns>` and `system:authenticated`. A request without credentials is
//!   the cluster admin (as if the loopback kubeconfig held the admin's client certificate:
//!   group `system:masters`); an unknown token is 401. `Impersonate-User`/`Impersonate-Group`
//!   (`kubectl --as`) are honoured for who may `impersonate` (client-go sends no bearer token
//!   over plain HTTP, so `kubectl auth can-i --as …` is how kubectl asks for another user).
//! - **What**: the request's attributes — verb (`get`/`list`/`watch`/`create`/`update`/`patch`/
//!   `delete`/`deletecollection`), API group, resource, subresource, namespace, name — or, for
//!   discovery and `/version`, its non-resource path and verb.
//! - **Allowed** when a rule of a ClusterRole bound by a ClusterRoleBinding, or of a Role or
//!   ClusterRole bound by a RoleBinding in the request's namespace, matches: `verbs`,
//!   `apiGroups`, `resources` (`*`, `pods/eviction`, `*/status`), `resourceNames` (empty: any;
//!   never matches a list, a watch or a create), and `nonResourceURLs` (`/apis/*` prefixes).
//!   Denials are 403 with the real message (`nodes "x" is forbidden: User "…" cannot patch
//!   resource "nodes" in API group "" at the cluster scope`).
//! - The bootstrap policy every cluster has: `cluster-admin` for `system:masters`,
//!   `system:discovery` (discovery and `/version`) and `system:basic-user`
//!   (`selfsubjectaccessreviews`) for `system:authenticated`.
//! - `SelfSubjectAccessReview` (`kubectl auth can-i`) answers with the same decision.
//! - Every decision is recorded ([`Decision`]) for tests to read.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::api::ApiError;
use super::store::Store;
use super::util::new_uid;

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
}

impl User {
    fn admin() -> User {
        User {
            name: "system:admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }

    fn service_account(namespace: &str, name: &str) -> User {
        User {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
        }
    }
}

/// What a request asks to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributes {
    pub verb: String,
    /// For resource requests.
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// For non-resource requests (`/version`, `/apis/…` discovery).
    pub path: Option<String>,
}

/// One authorization decision, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub user: String,
    pub attributes: Attributes,
    pub allowed: bool,
}

/// Issued tokens and recorded decisions.
#[derive(Debug, Default)]
pub struct Auth {
    tokens: HashMap<String, User>,
    pub decisions: Vec<Decision>,
}

/// The verb of a resource request.
pub fn verb(method: &hyper::Method, named: bool, watch: bool) -> &'static str {
    use hyper::Method;
    match *method {
        Method::GET | Method::HEAD if watch => "watch",
        Method::GET | Method::HEAD if named => "get",
        Method::GET | Method::HEAD => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// The user of a request: its bearer token's, else the admin; an unknown token is 401.
pub fn authenticate(auth: &Auth, authorization: &str) -> Result<User, ApiError> {
    let Some(token) = authorization.strip_prefix("Bearer ") else {
        return Ok(User::admin());
    };
    auth.tokens
        .get(token.trim())
        .cloned()
        .ok_or_else(|| ApiError::new(401, "Unauthorized", "Unauthorized"))
}

/// `Impersonate-User` (`kubectl --as`; client-go sends no token over plain HTTP, so that is
/// how `kubectl auth can-i` asks for someone else here): the impersonated user, when the
/// requester may `impersonate` it; a ServiceAccount gets its groups.
pub fn impersonate(
    st: &Store,
    auth: &mut Auth,
    user: User,
    impersonated: &str,
    groups: Vec<String>,
) -> Result<User, ApiError> {
    let (resource, namespace, name) = match impersonated.strip_prefix("system:serviceaccount:") {
        Some(rest) => {
            let (namespace, name) = rest.split_once(':').unwrap_or(("", rest));
            ("serviceaccounts", namespace, name)
        }
        None => ("users", "", impersonated),
    };
    let attributes = Attributes {
        verb: "impersonate".into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Attributes::default()
    };
    if !authorize(st, auth, &user, &attributes) {
        return Err(forbidden(&user, &attributes));
    }
    Ok(if resource == "serviceaccounts" {
        User::service_account(namespace, name)
    } else {
        let mut groups = groups;
        groups.push("system:authenticated".into());
        User {
            name: impersonated.into(),
            groups,
        }
    })
}

/// Issues a token for a ServiceAccount (TokenRequest): the SA must exist.
pub fn token_request(
    st: &Store,
    auth: &mut Auth,
    namespace: &str,
    name: &str,
) -> Result<Value, ApiError> {
    if st.get("/serviceaccounts", namespace, name).is_none() {
        return Err(ApiError::new(
            404,
            "NotFound",
            format!("serviceaccounts \"{name}\" not found"),
        ));
    }
    let token = format!("loopback-{}", new_uid());
    auth.tokens
        .insert(token.clone(), User::service_account(namespace, name));
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600},
        "status": {"token": token, "expirationTimestamp": "2099-01-01T00:00:00Z"},
    }))
}

/// Decides and records.
pub fn authorize(st: &Store, auth: &mut Auth, user: &User, attributes: &Attributes) -> bool {
    let allowed = allows(st, user, attributes);
    auth.decisions.push(Decision {
        user: user.name.clone(),
        attributes: attributes.clone(),
        allowed,
    });
    allowed
}

/// The 403 kube-apiserver answers.
pub fn forbidden(user: &User, a: &Attributes) -> ApiError {
    let message = match &a.path {
        Some(path) => format!(
            "forbidden: User \"{}\" cannot {} path \"{path}\"",
            user.name, a.verb
        ),
        None => {
            let resource = if a.subresource.is_empty() {
                a.resource.clone()
            } else {
                format!("{}/{}", a.resource, a.subresource)
            };
            let qualified = if a.group.is_empty() {
                a.resource.clone()
            } else {
                format!("{}.{}", a.resource, a.group)
            };
            let object = if a.name.is_empty() {
                qualified
            } else {
                format!("{qualified} \"{}\"", a.name)
            };
            let scope = if a.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace \"{}\"", a.namespace)
            };
            format!(
                "{object} is forbidden: User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
                user.name, a.verb, a.group
            )
        }
    };
    let mut details = json!({"kind": a.resource});
    if !a.name.is_empty() {
        details["name"] = json!(a.name);
    }
    if !a.group.is_empty() {
        details["group"] = json!(a.group);
    }
    ApiError {
        details: a.path.is_none().then_some(details),
        ..ApiError::new(403, "Forbidden", message)
    }
}

/// A SelfSubjectAccessReview: the same decision for the attributes in its spec.
pub fn self_subject_access_review(
    st: &Store,
    auth: &mut Auth,
    user: &User,
    review: &Value,
) -> Value {
    let spec = &review["spec"];
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let attributes = if let Some(r) = spec.get("resourceAttributes") {
        Attributes {
            verb: text(r, "verb"),
            group: text(r, "group"),
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            namespace: text(r, "namespace"),
            name: text(r, "name"),
            path: None,
        }
    } else {
        let r = &spec["nonResourceAttributes"];
        Attributes {
            verb: text(r, "verb"),
            path: Some(text(r, "path")),
            ..Attributes::default()
        }
    };
    let allowed = authorize(st, auth, user, &attributes);
    let mut answer = review.clone();
    answer["apiVersion"] = json!("authorization.k8s.io/v1");
    answer["kind"] = json!("SelfSubjectAccessReview");
    answer["status"] = if allowed {
        json!({"allowed": true, "reason": "RBAC: allowed by the roles bound to the user"})
    } else {
        json!({"allowed": false})
    };
    answer
}

/// The bootstrap roles and bindings every cluster has.
pub fn bootstrap(st: &mut Store) {
    let roles = st
        .registry
        .find("rbac.authorization.k8s.io", "v1", "clusterroles")
        .unwrap()
        .clone();
    let bindings = st
        .registry
        .find("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
        .unwrap()
        .clone();
    let discovery = [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
    ];
    for (name, rules, group) in [
        (
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
            "system:masters",
        ),
        (
            "system:discovery",
            json!([{"nonResourceURLs": discovery, "verbs": ["get"]}]),
            "system:authenticated",
        ),
        (
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]}]),
            "system:authenticated",
        ),
    ] {
        let meta = |name: &str| {
            json!({"name": name, "uid": new_uid(), "creationTimestamp": super::util::now_rfc3339(),
                   "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}})
        };
        st.insert(
            &roles,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": meta(name), "rules": rules}),
        );
        st.insert(
            &bindings,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": meta(name),
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]}),
        );
    }
}

fn allows(st: &Store, user: &User, a: &Attributes) -> bool {
    let cluster_bindings: Vec<&Value> = st
        .list("rbac.authorization.k8s.io/clusterrolebindings", None)
        .collect();
    let namespace_bindings: Vec<&Value> = if a.namespace.is_empty() {
        Vec::new()
    } else {
        st.list("rbac.authorization.k8s.io/rolebindings", Some(&a.namespace))
            .collect()
    };
    let rules_of = |binding: &Value, namespace: &str| -> Vec<Value> {
        let role = &binding["roleRef"];
        let name = role["name"].as_str().unwrap_or("");
        let found = match role["kind"].as_str() {
            Some("ClusterRole") => st.get("rbac.authorization.k8s.io/clusterroles", "", name),
            Some("Role") => st.get("rbac.authorization.k8s.io/roles", namespace, name),
            _ => None,
        };
        found
            .and_then(|r| r["rules"].as_array().cloned())
            .unwrap_or_default()
    };
    cluster_bindings
        .iter()
        .map(|b| (*b, ""))
        .chain(
            namespace_bindings
                .iter()
                .map(|b| (*b, a.namespace.as_str())),
        )
        .filter(|(b, namespace)| binds(b, user, namespace))
        .flat_map(|(b, namespace)| rules_of(b, namespace))
        .any(|rule| rule_allows(&rule, a))
}

fn binds(binding: &Value, user: &User, namespace: &str) -> bool {
    binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|s| {
            let name = s["name"].as_str().unwrap_or("");
            match s["kind"].as_str() {
                Some("User") => user.name == name,
                Some("Group") => user.groups.iter().any(|g| g == name),
                Some("ServiceAccount") => {
                    let ns = s["namespace"]
                        .as_str()
                        .filter(|n| !n.is_empty())
                        .unwrap_or(namespace);
                    user.name == format!("system:serviceaccount:{ns}:{name}")
                }
                _ => false,
            }
        })
}

fn strings(rule: &Value, key: &str) -> Vec<String> {
    rule[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// kube-apiserver's `RuleAllows`.
pub fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    let verbs = strings(rule, "verbs");
    if !verbs.iter().any(|v| v == "*" || *v == a.verb) {
        return false;
    }
    if let Some(path) = &a.path {
        return strings(rule, "nonResourceURLs").iter().any(|u| {
            u == "*" || u == path || u.strip_suffix('*').is_some_and(|p| path.starts_with(p))
        });
    }
    let groups = strings(rule, "apiGroups");
    if !groups.iter().any(|g| g == "*" || *g == a.group) {
        return false;
    }
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let resources = strings(rule, "resources");
    if !resources.iter().any(|r| {
        r == "*"
            || *r == combined
            || (!a.subresource.is_empty() && *r == format!("*/{}", a.subresource))
    }) {
        return false;
    }
    let names = strings(rule, "resourceNames");
    names.is_empty() || (!a.name.is_empty() && names.contains(&a.name))
}
