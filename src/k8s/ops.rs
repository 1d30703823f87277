//! Typed operations over [`Cluster`]: GET, paginated LIST decoded page by page into the
//! caller's slim types, create, patches, delete, eviction, discovery.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::decode::{decode, decode_list};
use super::{Cluster, ClusterError, Method, Request, Response};

/// Items per LIST page: big enough to keep round trips few, small enough that one page of
/// decoded JSON never dominates memory (docs/performance.md B4).
pub const PAGE_SIZE: usize = 500;

fn checked(method: Method, path: &str, response: Response) -> Result<Response, ClusterError> {
    if response.ok() {
        Ok(response)
    } else {
        Err(ClusterError::from_response(method, path, &response))
    }
}

/// GET an object; `None` on 404.
pub fn get<T: DeserializeOwned>(c: &dyn Cluster, path: &str) -> Result<Option<T>, ClusterError> {
    let response = c.send(Request::get(path))?;
    if response.status == 404 {
        return Ok(None);
    }
    let response = checked(Method::Get, path, response)?;
    decode(path, &response.body).map(Some)
}

#[derive(Deserialize)]
struct Page<T> {
    #[serde(default = "Vec::new")]
    items: Vec<T>,
    #[serde(default)]
    metadata: PageMeta,
}

#[derive(Deserialize, Default)]
struct PageMeta {
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

/// Query parameters of a LIST.
#[derive(Debug, Clone, Default)]
pub struct ListQuery<'a> {
    /// `labelSelector`.
    pub label_selector: Option<&'a str>,
    /// `fieldSelector`.
    pub field_selector: Option<&'a str>,
}

/// LISTs every page of `path`, handing each item to `each` as soon as its page is decoded, so
/// only one page is ever held. Returns how many items there were.
pub fn list<T: DeserializeOwned>(
    c: &dyn Cluster,
    path: &str,
    query: &ListQuery<'_>,
    mut each: impl FnMut(T),
) -> Result<usize, ClusterError> {
    let mut continue_token: Option<String> = None;
    // Every token followed: an answer naming one again would restart the list forever (a
    // server or proxy that loops; the API server's tokens only move forward).
    let mut followed = std::collections::BTreeSet::new();
    let mut count = 0;
    loop {
        let mut url = format!("{path}?limit={PAGE_SIZE}");
        if let Some(s) = query.label_selector {
            url.push_str("&labelSelector=");
            url.push_str(&encode(s));
        }
        if let Some(s) = query.field_selector {
            url.push_str("&fieldSelector=");
            url.push_str(&encode(s));
        }
        if let Some(token) = &continue_token {
            url.push_str("&continue=");
            url.push_str(&encode(token));
        }
        let response = checked(Method::Get, &url, c.send(Request::get(&url))?)?;
        let page: Page<T> = decode_list::<_, T>(&url, &response.body)?;
        drop(response);
        count += page.items.len();
        page.items.into_iter().for_each(&mut each);
        continue_token = page.metadata.continue_token.filter(|t| !t.is_empty());
        let Some(token) = &continue_token else {
            return Ok(count);
        };
        if !followed.insert(token.clone()) {
            return Err(ClusterError::Decode {
                path: path.to_string(),
                message: format!(
                    "the list never ends: page {} names continue token {:?} again",
                    followed.len() + 1,
                    token.chars().take(40).collect::<String>()
                ),
            });
        }
    }
}

/// LISTs every page into a vector.
pub fn list_all<T: DeserializeOwned>(
    c: &dyn Cluster,
    path: &str,
    query: &ListQuery<'_>,
) -> Result<Vec<T>, ClusterError> {
    let mut out = Vec::new();
    list(c, path, query, |item| out.push(item))?;
    Ok(out)
}

/// Percent-encodes a query value.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn write(
    c: &dyn Cluster,
    method: Method,
    path: &str,
    content_type: &'static str,
    body: &Value,
) -> Result<Value, ClusterError> {
    let mut request = Request::write(method, path, Some(body.to_string().into_bytes()));
    request.content_type = content_type;
    let response = checked(method, path, c.send(request)?)?;
    if response.body.is_empty() {
        return Ok(Value::Null);
    }
    decode(path, &response.body)
}

/// POST (create).
pub fn create(c: &dyn Cluster, path: &str, object: &Value) -> Result<Value, ClusterError> {
    write(c, Method::Post, path, "application/json", object)
}

/// PATCH with a JSON merge patch.
pub fn merge_patch(c: &dyn Cluster, path: &str, patch: &Value) -> Result<Value, ClusterError> {
    write(
        c,
        Method::Patch,
        path,
        "application/merge-patch+json",
        patch,
    )
}

/// PATCH with a JSON patch (RFC 6902), e.g. with a `test` op as a precondition.
pub fn json_patch(c: &dyn Cluster, path: &str, patch: &Value) -> Result<Value, ClusterError> {
    write(c, Method::Patch, path, "application/json-patch+json", patch)
}

/// PATCH with a strategic merge patch (built-in kinds only).
pub fn strategic_patch(c: &dyn Cluster, path: &str, patch: &Value) -> Result<Value, ClusterError> {
    write(
        c,
        Method::Patch,
        path,
        "application/strategic-merge-patch+json",
        patch,
    )
}

/// DELETE; `Ok(false)` when it was already gone.
pub fn delete(
    c: &dyn Cluster,
    path: &str,
    grace_period_seconds: Option<i64>,
) -> Result<bool, ClusterError> {
    let mut options = serde_json::json!({"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"});
    if let Some(g) = grace_period_seconds {
        options["gracePeriodSeconds"] = g.into();
    }
    let request = Request::write(Method::Delete, path, Some(options.to_string().into_bytes()));
    let response = c.send(request)?;
    if response.status == 404 {
        return Ok(false);
    }
    checked(Method::Delete, path, response)?;
    Ok(true)
}

/// What an eviction answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eviction {
    /// Accepted: the pod is terminating.
    Evicted,
    /// The pod is gone already (404) or is another pod now (409 on the UID precondition).
    Gone,
    /// 429: a PodDisruptionBudget does not allow it now (the server's message names it).
    Blocked(String),
    /// 403 with the `NamespaceTerminating` cause: the pod's namespace is being deleted (the
    /// NamespaceLifecycle admission refuses every create there); its pods go with it.
    NamespaceTerminating(String),
}

/// Evicts a pod through `pods/eviction` (policy/v1), with the pod's UID as a precondition and
/// without any transparent retry (the caller backs off and reports the PDB).
pub fn evict(
    c: &dyn Cluster,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
) -> Result<Eviction, ClusterError> {
    let path = format!("/api/v1/namespaces/{namespace}/pods/{name}/eviction");
    let mut body = serde_json::json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    });
    if let Some(uid) = uid {
        body["deleteOptions"] = serde_json::json!({"preconditions": {"uid": uid}});
    }
    let response = c.send(Request::write(
        Method::Post,
        &path,
        Some(body.to_string().into_bytes()),
    ))?;
    match response.status {
        200..=299 => Ok(Eviction::Evicted),
        404 | 409 => Ok(Eviction::Gone),
        429 => match ClusterError::from_response(Method::Post, &path, &response) {
            ClusterError::Api { message, .. } => Ok(Eviction::Blocked(message)),
            other => Err(other),
        },
        403 if namespace_terminating(&response.body) => {
            match ClusterError::from_response(Method::Post, &path, &response) {
                ClusterError::Api { message, .. } => Ok(Eviction::NamespaceTerminating(message)),
                other => Err(other),
            }
        }
        _ => Err(ClusterError::from_response(Method::Post, &path, &response)),
    }
}

/// Whether a `Status` body names the `NamespaceTerminating` cause (`k8s.io/api/core/v1
/// NamespaceTerminatingCause`, the one `kubectl drain` retries: `pkg/drain/drain.go`).
fn namespace_terminating(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|s| s.pointer("/details/causes").cloned())
        .and_then(|c| c.as_array().cloned())
        .is_some_and(|causes| {
            causes.iter().any(|c| {
                c.get("reason").and_then(serde_json::Value::as_str) == Some("NamespaceTerminating")
            })
        })
}

/// The API server's `gitVersion` (`v1.29.3-eks-1234`).
pub fn server_version(c: &dyn Cluster) -> Result<String, ClusterError> {
    #[derive(Deserialize)]
    struct Info {
        #[serde(rename = "gitVersion")]
        git_version: String,
    }
    let info: Option<Info> = get(c, "/version")?;
    info.map(|i| i.git_version)
        .ok_or_else(|| ClusterError::Decode {
            path: "/version".into(),
            message: "not found".into(),
        })
}

/// Where the cluster's DNS Service is (`aws v1.14.1: pkg/operator/operator.go` `KubeDNSIP`).
pub const KUBE_DNS_PATH: &str = "/api/v1/namespaces/kube-system/services/kube-dns";

/// The ClusterIP of the `kube-dns` Service in `kube-system`, which Karpenter reads once at start
/// (`aws v1.14.1: pkg/operator/operator.go` `KubeDNSIP`): the nodes' cluster DNS, and an IPv6
/// one makes the cluster IPv6. `None` when the Service is absent or its ClusterIP is no IP
/// address (`None`, headless) — Karpenter then goes on without one, as the caller does.
pub fn kube_dns_ip(c: &dyn Cluster) -> Result<Option<std::net::IpAddr>, ClusterError> {
    #[derive(Deserialize)]
    struct Service {
        #[serde(default)]
        spec: Spec,
    }
    #[derive(Deserialize, Default)]
    struct Spec {
        #[serde(default, rename = "clusterIP")]
        cluster_ip: Option<String>,
    }
    let service: Option<Service> = get(c, KUBE_DNS_PATH)?;
    Ok(service
        .and_then(|s| s.spec.cluster_ip)
        .and_then(|ip| ip.parse().ok()))
}

/// The resources served at `group/version` (`karpenter.sh/v1`), `None` when the group version
/// is not served.
pub fn served_resources(
    c: &dyn Cluster,
    group_version: &str,
) -> Result<Option<Vec<String>>, ClusterError> {
    #[derive(Deserialize)]
    struct ResourceList {
        #[serde(default)]
        resources: Vec<Resource>,
    }
    #[derive(Deserialize)]
    struct Resource {
        name: String,
    }
    let path = if group_version == "v1" {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group_version}")
    };
    let list: Option<ResourceList> = get(c, &path)?;
    Ok(list.map(|l| l.resources.into_iter().map(|r| r.name).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Answers LISTs in pages of two from a fixed item list, recording the paths asked for.
    struct Paged {
        items: Vec<&'static str>,
        asked: RefCell<Vec<String>>,
    }

    impl Cluster for Paged {
        fn send(&self, request: Request) -> Result<Response, ClusterError> {
            self.asked.borrow_mut().push(request.path.clone());
            let start: usize = request
                .path
                .split("continue=")
                .nth(1)
                .and_then(|t| t.parse().ok())
                .unwrap_or(0);
            let page: Vec<serde_json::Value> = self.items[start..]
                .iter()
                .take(2)
                .map(|n| serde_json::json!({"metadata": {"name": n}}))
                .collect();
            let next = start + page.len();
            let token = if next < self.items.len() {
                next.to_string()
            } else {
                String::new()
            };
            let body = serde_json::json!({"items": page, "metadata": {"continue": token}});
            Ok(Response {
                status: 200,
                body: body.to_string().into_bytes(),
            })
        }
        fn request_count(&self) -> u64 {
            self.asked.borrow().len() as u64
        }
    }

    #[derive(Deserialize)]
    struct Named {
        metadata: crate::api::meta::ObjectMeta,
    }

    #[test]
    fn list_follows_continue_tokens_page_by_page() {
        let c = Paged {
            items: vec!["a", "b", "c", "d", "e"],
            asked: RefCell::new(Vec::new()),
        };
        let mut names = Vec::new();
        let n = list(
            &c,
            "/api/v1/nodes",
            &ListQuery {
                label_selector: Some("karpenter.sh/nodepool in (a,b)"),
                ..Default::default()
            },
            |item: Named| names.push(item.metadata.name.unwrap_or_default()),
        )
        .unwrap();
        assert_eq!(n, 5);
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        let asked = c.asked.borrow();
        assert_eq!(asked.len(), 3, "{asked:?}");
        assert!(asked[0].starts_with(
            "/api/v1/nodes?limit=500&labelSelector=karpenter.sh%2Fnodepool%20in%20%28a%2Cb%29"
        ));
        assert!(asked[1].ends_with("&continue=2"));
    }

    /// Found by the live fuzzer (docs/upstream-tests.md "The cluster's answers fuzzed"): a
    /// server (or proxy) whose pages name a continue token already followed restarts the list
    /// forever — `provision --dry-run` read the same page 10,000 times and held every copy.
    /// The list fails at the repeated token, naming the resource.
    #[test]
    fn a_continue_token_named_again_fails_the_list_instead_of_looping() {
        struct Looping(RefCell<usize>);
        impl Cluster for Looping {
            fn send(&self, _: Request) -> Result<Response, ClusterError> {
                *self.0.borrow_mut() += 1;
                let body = br#"{"items":[{"metadata":{"name":"a"}}],"metadata":{"continue":"t"}}"#;
                Ok(Response {
                    status: 200,
                    body: body.to_vec(),
                })
            }
            fn request_count(&self) -> u64 {
                *self.0.borrow() as u64
            }
        }
        let c = Looping(RefCell::new(0));
        let mut n = 0;
        let e = list(&c, "/api/v1/pods", &ListQuery::default(), |_: Named| n += 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected answer from /api/v1/pods: the list never ends: page 2 names continue token \"t\" again"
        );
        assert_eq!((c.request_count(), n), (2, 2));
    }

    #[test]
    fn api_errors_carry_the_status_message() {
        let response = Response {
            status: 403,
            body: br#"{"kind":"Status","reason":"Forbidden","message":"nodes is forbidden: User \"x\" cannot list resource \"nodes\""}"#.to_vec(),
        };
        let e = ClusterError::from_response(Method::Get, "/api/v1/nodes?limit=500", &response);
        assert!(e.is_forbidden());
        assert_eq!(
            e.to_string(),
            "GET /api/v1/nodes: 403 nodes is forbidden: User \"x\" cannot list resource \"nodes\""
        );
    }
}
