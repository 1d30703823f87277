//! The resource registry behind discovery: built-in kinds, and the kinds CustomResourceDefinitions
//! add when they are created through the API.

use serde_json::{json, Value};
use std::sync::Arc;

pub const FULL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// JSON pointers of a `/scale` subresource.
#[derive(Debug, Clone)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// What a CRD version contributes beyond names: schema (pruning, defaults), printer columns.
#[derive(Debug, Clone, Default)]
pub struct CrdVersion {
    pub schema: Option<Value>,
    pub printer_columns: Vec<Value>,
}

#[derive(Debug, Clone)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<String>,
    /// Has a `/status` subresource (the main resource then ignores `.status` on writes).
    pub status: bool,
    pub scale: Option<ScalePaths>,
    /// Objects of this kind carry `metadata.generation`.
    pub generation: bool,
    pub builtin: bool,
    pub crd: Option<Arc<CrdVersion>>,
}

impl Resource {
    /// Storage key, independent of the version served.
    pub fn key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `pods`, `deployments.apps`: the qualified resource in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Pod`, `Deployment.apps`: the qualified kind in `Invalid` errors.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    plural: &str,
    singular: &str,
    kind: &str,
    namespaced: bool,
    short: &[&str],
    cats: &[&str],
    status: bool,
    scale: bool,
    generation: bool,
) -> Resource {
    let verbs: Vec<String> = if plural == "namespaces" {
        FULL_VERBS
            .iter()
            .filter(|v| **v != "deletecollection")
            .map(|v| v.to_string())
            .collect()
    } else {
        FULL_VERBS.iter().map(|v| v.to_string()).collect()
    };
    Resource {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: singular.into(),
        kind: kind.into(),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: cats.iter().map(|s| s.to_string()).collect(),
        verbs,
        status,
        scale: scale.then(|| ScalePaths {
            spec_replicas: "/spec/replicas".into(),
            status_replicas: "/status/replicas".into(),
            label_selector: None,
        }),
        generation,
        builtin: true,
        crd: None,
    }
}

/// The built-in kinds this server serves.
pub fn builtins() -> Vec<Resource> {
    let all = &["all"][..];
    vec![
        builtin(
            "",
            "v1",
            "configmaps",
            "configmap",
            "ConfigMap",
            true,
            &["cm"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "endpoints",
            "endpoints",
            "Endpoints",
            true,
            &["ep"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "events",
            "event",
            "Event",
            true,
            &["ev"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "limitranges",
            "limitrange",
            "LimitRange",
            true,
            &["limits"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "namespaces",
            "namespace",
            "Namespace",
            false,
            &["ns"],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "nodes",
            "node",
            "Node",
            false,
            &["no"],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            "PersistentVolumeClaim",
            true,
            &["pvc"],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "persistentvolumes",
            "persistentvolume",
            "PersistentVolume",
            false,
            &["pv"],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "pods",
            "pod",
            "Pod",
            true,
            &["po"],
            all,
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "resourcequotas",
            "resourcequota",
            "ResourceQuota",
            true,
            &["quota"],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "secrets",
            "secret",
            "Secret",
            true,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "serviceaccount",
            "ServiceAccount",
            true,
            &["sa"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "",
            "v1",
            "services",
            "service",
            "Service",
            true,
            &["svc"],
            all,
            true,
            false,
            false,
        ),
        builtin(
            "apps",
            "v1",
            "controllerrevisions",
            "controllerrevision",
            "ControllerRevision",
            true,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "apps",
            "v1",
            "daemonsets",
            "daemonset",
            "DaemonSet",
            true,
            &["ds"],
            all,
            true,
            false,
            true,
        ),
        builtin(
            "apps",
            "v1",
            "deployments",
            "deployment",
            "Deployment",
            true,
            &["deploy"],
            all,
            true,
            true,
            true,
        ),
        builtin(
            "apps",
            "v1",
            "replicasets",
            "replicaset",
            "ReplicaSet",
            true,
            &["rs"],
            all,
            true,
            true,
            true,
        ),
        builtin(
            "apps",
            "v1",
            "statefulsets",
            "statefulset",
            "StatefulSet",
            true,
            &["sts"],
            all,
            true,
            true,
            true,
        ),
        builtin(
            "batch",
            "v1",
            "cronjobs",
            "cronjob",
            "CronJob",
            true,
            &["cj"],
            all,
            true,
            false,
            true,
        ),
        builtin(
            "batch",
            "v1",
            "jobs",
            "job",
            "Job",
            true,
            &[],
            all,
            true,
            false,
            true,
        ),
        builtin(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "poddisruptionbudget",
            "PodDisruptionBudget",
            true,
            &["pdb"],
            &[],
            true,
            false,
            true,
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "customresourcedefinition",
            "CustomResourceDefinition",
            false,
            &["crd", "crds"],
            &["api-extensions"],
            true,
            false,
            true,
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "lease",
            "Lease",
            true,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "clusterrolebinding",
            "ClusterRoleBinding",
            false,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "clusterrole",
            "ClusterRole",
            false,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "rolebinding",
            "RoleBinding",
            true,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "role",
            "Role",
            true,
            &[],
            &[],
            false,
            false,
            false,
        ),
        Resource {
            verbs: vec!["create".into()],
            ..builtin(
                "authorization.k8s.io",
                "v1",
                "selfsubjectaccessreviews",
                "selfsubjectaccessreview",
                "SelfSubjectAccessReview",
                false,
                &[],
                &[],
                false,
                false,
                false,
            )
        },
        builtin(
            "node.k8s.io",
            "v1",
            "runtimeclasses",
            "runtimeclass",
            "RuntimeClass",
            false,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            "priorityclass",
            "PriorityClass",
            false,
            &["pc"],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "storage.k8s.io",
            "v1",
            "csinodes",
            "csinode",
            "CSINode",
            false,
            &[],
            &[],
            false,
            false,
            false,
        ),
        builtin(
            "storage.k8s.io",
            "v1",
            "volumeattachments",
            "volumeattachment",
            "VolumeAttachment",
            false,
            &[],
            &[],
            true,
            false,
            false,
        ),
        builtin(
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "storageclass",
            "StorageClass",
            false,
            &["sc"],
            &[],
            false,
            false,
            false,
        ),
    ]
}

/// The group order of `/apis` (built-in groups first, like the aggregator's priorities).
pub const BUILTIN_GROUP_ORDER: &[&str] = &[
    "apps",
    "batch",
    "policy",
    "apiextensions.k8s.io",
    "coordination.k8s.io",
    "rbac.authorization.k8s.io",
    "authorization.k8s.io",
    "node.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// A CRD version that is defined but not served here, and why.
#[derive(Debug, Clone)]
pub struct Unserved {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Registry {
    pub resources: Vec<Resource>,
    pub unserved: Vec<Unserved>,
}

impl Registry {
    pub fn new() -> Self {
        Registry {
            resources: builtins(),
            unserved: Vec::new(),
        }
    }

    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    pub fn find_unserved(&self, group: &str, version: &str, plural: &str) -> Option<&Unserved> {
        self.unserved
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    /// The preferred (served) resource for a storage key.
    pub fn by_key(&self, key: &str) -> Option<&Resource> {
        self.resources.iter().find(|r| r.key() == key)
    }

    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.kind == kind)
    }

    /// Groups in discovery order, each with its versions (preferred first).
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.resources {
            if r.group.is_empty() {
                continue;
            }
            match groups.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, vs)) => {
                    if !vs.contains(&r.version) {
                        vs.push(r.version.clone());
                    }
                }
                None => groups.push((r.group.clone(), vec![r.version.clone()])),
            }
        }
        for (_, vs) in groups.iter_mut() {
            vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        groups.sort_by_key(|(g, _)| {
            BUILTIN_GROUP_ORDER
                .iter()
                .position(|b| b == g)
                .unwrap_or(BUILTIN_GROUP_ORDER.len())
        });
        groups
    }

    /// `APIResourceList` for one group/version.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let rs: Vec<&Resource> = self
            .resources
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .collect();
        if rs.is_empty() {
            return None;
        }
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let mut list = Vec::new();
        for r in rs {
            let mut main = json!({
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": r.verbs,
            });
            if !r.short_names.is_empty() {
                main["shortNames"] = json!(r.short_names);
            }
            if !r.categories.is_empty() {
                main["categories"] = json!(r.categories);
            }
            list.push(main);
            if r.plural == "serviceaccounts" {
                list.push(json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true, "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}));
            }
            if r.plural == "pods" {
                list.push(json!({"name": "pods/binding", "singularName": "", "namespaced": true, "kind": "Binding", "verbs": ["create"]}));
                list.push(json!({"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}));
            }
            if r.status {
                list.push(json!({"name": format!("{}/status", r.plural), "singularName": "", "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch", "update"]}));
            }
            if r.scale.is_some() {
                list.push(json!({"name": format!("{}/scale", r.plural), "singularName": "", "namespaced": r.namespaced, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
            }
        }
        Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": list,
        }))
    }

    /// Adds (or replaces) the resources a CRD defines. Returns a note when versions were left
    /// unserved because they need a conversion webhook.
    pub fn register_crd(&mut self, crd: &Value) -> Result<Vec<String>, String> {
        let spec = crd.get("spec").ok_or("spec: Required value")?;
        let group = spec
            .get("group")
            .and_then(Value::as_str)
            .ok_or("spec.group: Required value")?
            .to_string();
        let names = spec.get("names").ok_or("spec.names: Required value")?;
        let plural = names
            .get("plural")
            .and_then(Value::as_str)
            .ok_or("spec.names.plural: Required value")?
            .to_string();
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .ok_or("spec.names.kind: Required value")?
            .to_string();
        let singular = names
            .get("singular")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| kind.to_lowercase());
        let strs = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let short_names = strs(names.get("shortNames"));
        let categories = strs(names.get("categories"));
        let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
        let webhook =
            spec.pointer("/conversion/strategy").and_then(Value::as_str) == Some("Webhook");
        let versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .ok_or("spec.versions: Required value")?;
        let storage = versions
            .iter()
            .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .and_then(|v| v.get("name").and_then(Value::as_str))
            .ok_or("spec.versions: Invalid value: must have exactly one version marked as storage version")?
            .to_string();
        self.unregister_crd(&group, &plural);
        let mut notes = Vec::new();
        for v in versions {
            let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
            if v.get("served").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            if webhook && name != storage {
                let message = format!(
                    "{plural}.{group}/{name} is not served by this test cluster: the CustomResourceDefinition converts between {name} and the storage version {storage} with a conversion webhook, which the test cluster does not run; use {group}/{storage}"
                );
                notes.push(message.clone());
                self.unserved.push(Unserved {
                    group: group.clone(),
                    version: name.into(),
                    plural: plural.clone(),
                    kind: kind.clone(),
                    message,
                });
                continue;
            }
            let subs = v.get("subresources");
            let scale = subs.and_then(|s| s.get("scale")).map(|s| ScalePaths {
                spec_replicas: dot_to_pointer(
                    s.get("specReplicasPath")
                        .and_then(Value::as_str)
                        .unwrap_or(".spec.replicas"),
                ),
                status_replicas: dot_to_pointer(
                    s.get("statusReplicasPath")
                        .and_then(Value::as_str)
                        .unwrap_or(".status.replicas"),
                ),
                label_selector: s
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(dot_to_pointer),
            });
            self.resources.push(Resource {
                group: group.clone(),
                version: name.into(),
                plural: plural.clone(),
                singular: singular.clone(),
                kind: kind.clone(),
                namespaced,
                short_names: short_names.clone(),
                categories: categories.clone(),
                verbs: FULL_VERBS.iter().map(|s| s.to_string()).collect(),
                status: subs.and_then(|s| s.get("status")).is_some(),
                scale,
                generation: true,
                builtin: false,
                crd: Some(Arc::new(CrdVersion {
                    schema: v.pointer("/schema/openAPIV3Schema").cloned(),
                    printer_columns: v
                        .get("additionalPrinterColumns")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                })),
            });
        }
        Ok(notes)
    }

    pub fn unregister_crd(&mut self, group: &str, plural: &str) {
        self.resources
            .retain(|r| r.builtin || !(r.group == group && r.plural == plural));
        self.unserved
            .retain(|r| !(r.group == group && r.plural == plural));
    }
}

/// `.spec.replicas` → `/spec/replicas`.
pub fn dot_to_pointer(p: &str) -> String {
    p.trim_start_matches('.')
        .split('.')
        .fold(String::new(), |mut acc, s| {
            acc.push('/');
            acc.push_str(s);
            acc
        })
}

/// Kubernetes version ordering (`v1` > `v1beta2` > `v1beta1` > `v1alpha1` > other).
pub fn version_priority(v: &str) -> (u8, u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u32>() else {
        return (0, 0, 0, 0);
    };
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (1, 3, major, 0);
    }
    let (stage, n) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        return (0, 0, 0, 0);
    };
    match n.parse::<u32>() {
        Ok(n) => (1, stage, major, n),
        Err(_) => (0, 0, 0, 0),
    }
}
