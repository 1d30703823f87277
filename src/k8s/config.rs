//! Which cluster, as whom: the kubeconfig flags of docs/spec.md §2 (kubectl does not forward its own
//! flags to plugins), and what the kubeconfig says about the cluster for node user data (name,
//! endpoint, CA) — the same derivation `--cluster-name` documents.

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::ClusterError;
use crate::cloud::launch::ClusterInfo;
use crate::cloud::userdata::base64_encode;
use crate::disruption::time::parse_duration_flag;
use crate::error::redact;

/// The kubeconfig flags of docs/spec.md §2, as given (`--kubeconfig`, `--context`, …).
#[derive(Debug, Clone, Default)]
pub struct KubeFlags {
    /// `--kubeconfig`.
    pub kubeconfig: Option<String>,
    /// `--context`.
    pub context: Option<String>,
    /// `--cluster`.
    pub cluster: Option<String>,
    /// `--user`.
    pub user: Option<String>,
    /// `-n`/`--namespace`.
    pub namespace: Option<String>,
    /// `--request-timeout`, unparsed.
    pub request_timeout: Option<String>,
    /// `--cluster-name`.
    pub cluster_name: Option<String>,
}

/// Everything needed to connect, resolved from flags and the kubeconfig.
#[derive(Clone)]
pub struct ClusterTarget {
    /// The merged kubeconfig.
    pub kubeconfig: Kubeconfig,
    /// `--context`/`--cluster`/`--user`.
    pub options: KubeConfigOptions,
    /// `-n`, else the context's namespace, else `default`.
    pub namespace: String,
    /// `--request-timeout`.
    pub request_timeout: Option<Duration>,
    /// The context in use.
    pub context: String,
    /// The user's exec credential plugin (`aws`, `aws-iam-authenticator`, …), if it has one.
    pub credential_plugin: Option<String>,
    /// The cluster's identity for node bootstrap.
    pub info: ClusterInfo,
}

impl ClusterTarget {
    /// Reads the kubeconfig (`--kubeconfig`, else `KUBECONFIG` — several paths merged like
    /// kubectl —, else `~/.kube/config`) and applies the flags.
    pub fn from_flags(global: &KubeFlags) -> Result<ClusterTarget, ClusterError> {
        let kubeconfig = match &global.kubeconfig {
            Some(path) => read(Path::new(path))?,
            None => read_default()?,
        };
        remember_credentials(&kubeconfig);
        let context = global
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                ClusterError::Config("no current context (pass --context)".to_string())
            })?;
        let named = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.clone())
            .ok_or_else(|| {
                ClusterError::Config(format!("context {context:?} is not in the kubeconfig"))
            })?;
        let cluster_entry = global.cluster.clone().unwrap_or(named.cluster.clone());
        let user_entry = global.user.clone().or(named.user.clone());
        let cluster = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == cluster_entry)
            .and_then(|c| c.cluster.clone())
            .ok_or_else(|| {
                ClusterError::Config(format!(
                    "cluster {cluster_entry:?} is not in the kubeconfig"
                ))
            })?;
        let exec = user_entry
            .as_ref()
            .and_then(|u| kubeconfig.auth_infos.iter().find(|a| &a.name == u))
            .and_then(|a| a.auth_info.as_ref())
            .and_then(|a| a.exec.as_ref());
        let exec_args: Vec<String> = exec.and_then(|e| e.args.clone()).unwrap_or_default();
        let credential_plugin = exec.and_then(|e| e.command.clone());
        let name = global
            .cluster_name
            .clone()
            .unwrap_or_else(|| derive_cluster_name(&context, &cluster_entry, &exec_args));
        let ca_bundle = match (
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        ) {
            (Some(data), _) => data.clone(),
            (None, Some(path)) => std::fs::read(path)
                .map(|pem| base64_encode(&pem))
                .map_err(|e| ClusterError::Config(format!("certificate-authority {path}: {e}")))?,
            (None, None) => String::new(),
        };
        let request_timeout = match &global.request_timeout {
            None => None,
            Some(text) => match parse_duration_flag(text) {
                Some(d) if d.is_zero() => None,
                Some(d) => Some(d),
                None => {
                    return Err(ClusterError::Config(format!(
                        "--request-timeout {text:?}: expected a duration such as 30s or 1m"
                    )))
                }
            },
        };
        Ok(ClusterTarget {
            namespace: global
                .namespace
                .clone()
                .or(named.namespace.clone())
                .unwrap_or_else(|| "default".to_string()),
            options: KubeConfigOptions {
                context: Some(context.clone()),
                cluster: global.cluster.clone(),
                user: global.user.clone(),
            },
            info: ClusterInfo {
                name,
                endpoint: cluster.server.clone().unwrap_or_default(),
                ca_bundle,
                service_cidr: None,
                cluster_dns: None,
            },
            kubeconfig,
            request_timeout,
            context,
            credential_plugin,
        })
    }
}

/// Every credential the kubeconfig holds — tokens (also in `tokenFile`s), passwords, client
/// keys, auth-provider settings, exec-plugin environment values — is remembered for
/// redaction, so that no error or log line can show it.
fn remember_credentials(kubeconfig: &Kubeconfig) {
    for auth in kubeconfig
        .auth_infos
        .iter()
        .filter_map(|a| a.auth_info.as_ref())
    {
        let Ok(doc) = serde_json::to_value(auth) else {
            continue;
        };
        let strings = ["/token", "/password", "/client-key-data"]
            .into_iter()
            .filter_map(|p| doc.pointer(p));
        let provider = doc
            .pointer("/auth-provider/config")
            .and_then(|c| c.as_object())
            .into_iter()
            .flat_map(|c| c.values());
        let env = doc
            .pointer("/exec/env")
            .and_then(|e| e.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("value"));
        for value in strings.chain(provider).chain(env) {
            if let Some(text) = value.as_str() {
                redact::remember(text);
            }
        }
        if let Some(text) = auth
            .token_file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
        {
            redact::remember(&text);
        }
    }
}

fn read(path: &Path) -> Result<Kubeconfig, ClusterError> {
    Kubeconfig::read_from(path).map_err(|e| {
        ClusterError::Config(format!(
            "{}: {}",
            path.display(),
            super::client::one_line(&e)
        ))
    })
}

fn read_default() -> Result<Kubeconfig, ClusterError> {
    if let Some(value) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let mut merged: Option<Kubeconfig> = None;
        for path in std::env::split_paths(&value).filter(|p| p.exists()) {
            let next = read(&path)?;
            merged = Some(match merged {
                None => next,
                Some(m) => m
                    .merge(next)
                    .map_err(|e| ClusterError::Config(super::client::one_line(&e)))?,
            });
        }
        return merged.ok_or_else(|| {
            ClusterError::Config(format!(
                "none of the KUBECONFIG paths exists ({})",
                value.to_string_lossy()
            ))
        });
    }
    let home = std::env::var_os("HOME")
        .ok_or_else(|| ClusterError::Config("no --kubeconfig, KUBECONFIG or HOME".into()))?;
    let path = Path::new(&home).join(".kube").join("config");
    if !path.exists() {
        return Err(ClusterError::Config(format!(
            "{} does not exist",
            path.display()
        )));
    }
    read(&path)
}

/// The EKS cluster name: the `cluster/<name>` of an EKS ARN (context, then cluster entry), the
/// `--cluster-name`/`--cluster-id`/`-i` of the exec credential plugin (`aws eks get-token`,
/// `aws-iam-authenticator token`), else the kubeconfig's cluster entry name.
pub fn derive_cluster_name(context: &str, cluster_entry: &str, exec_args: &[String]) -> String {
    for candidate in [context, cluster_entry] {
        if let Some((_, name)) = candidate
            .strip_prefix("arn:")
            .filter(|rest| rest.contains(":eks:"))
            .and_then(|rest| rest.rsplit_once(":cluster/"))
        {
            if !name.is_empty() {
                return name.to_string();
            }
        }
    }
    for pair in exec_args.windows(2) {
        if matches!(pair[0].as_str(), "--cluster-name" | "--cluster-id" | "-i") {
            return pair[1].clone();
        }
    }
    for arg in exec_args {
        if let Some(name) = arg.strip_prefix("--cluster-name=") {
            return name.to_string();
        }
    }
    cluster_entry.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_name_from_arn_exec_args_or_entry() {
        let arn = "arn:aws:eks:eu-west-1:111122223333:cluster/prod";
        assert_eq!(derive_cluster_name(arn, "x", &[]), "prod");
        assert_eq!(derive_cluster_name("ctx", arn, &[]), "prod");
        let args: Vec<String> = [
            "--region",
            "us-east-1",
            "eks",
            "get-token",
            "--cluster-name",
            "dev",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(derive_cluster_name("ctx", "entry", &args), "dev");
        let iam: Vec<String> = ["token", "-i", "legacy"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(derive_cluster_name("ctx", "entry", &iam), "legacy");
        assert_eq!(
            derive_cluster_name("ctx", "test-cluster", &[]),
            "test-cluster"
        );
    }
}
