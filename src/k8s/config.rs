//! Which cluster, as whom: the kubeconfig flags of docs/spec.md §2 (kubectl does not forward its own
//! flags to plugins), and what the kubeconfig says about the cluster for node user data (name,
//! endpoint, CA) — the same derivation `--cluster-name` documents.
//!
//! In a pod (docs/in-cluster.md) there is no kubeconfig: when none is given or found and
//! `KUBERNETES_SERVICE_HOST`/`_PORT` are set, the pod's ServiceAccount is used, as client-go's
//! `rest.InClusterConfig` and kube-rs's `Config::incluster` do — the API server at
//! `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, trusted through the mounted
//! `ca.crt`, authenticated with the mounted `token`, re-read at least once a minute (the kubelet
//! rotates it; kube-rs reloads a `tokenFile` every 60 s, like client-go's
//! `transport.NewCachedFileTokenSource`). [`SERVICE_ACCOUNT_DIR`] overrides the directory
//! (tests).

use std::path::Path;
use std::time::Duration;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster,
    NamedContext,
};

use super::proxy::{self, ProxyEnv};
use super::validation;
use super::ClusterError;
use crate::cloud::launch::ClusterInfo;
use crate::error::redact;
use crate::model::time::parse_go_duration;

/// The API request timeout when `--request-timeout` is not given: a request that receives
/// nothing for this long fails (and is retried when it was a read).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// `--cluster-endpoint`.
    pub cluster_endpoint: Option<String>,
}

impl KubeFlags {
    /// The flags with every empty value taken as not given: kubectl (client-go's
    /// `DirectClientConfig.getContextName`/`getClusterName`/`getAuthInfoName`, `Namespace`, and
    /// `ClientConfigLoadingRules.ExplicitPath`) tests each with `len(…) != 0`, so
    /// `--context "$UNSET"` means the current context, not a context named "".
    pub fn without_empty(&self) -> KubeFlags {
        let given = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        KubeFlags {
            kubeconfig: given(&self.kubeconfig),
            context: given(&self.context),
            cluster: given(&self.cluster),
            user: given(&self.user),
            namespace: given(&self.namespace),
            request_timeout: given(&self.request_timeout),
            cluster_name: given(&self.cluster_name),
            cluster_endpoint: given(&self.cluster_endpoint),
        }
    }
}

/// Where the ServiceAccount's `token`, `ca.crt` and `namespace` are mounted in every pod.
pub const IN_CLUSTER_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The variable that points elsewhere than [`IN_CLUSTER_DIR`] (tests run the binary with a
/// ServiceAccount the way a pod gets it, outside a pod).
pub const SERVICE_ACCOUNT_DIR: &str = "KUBECTL_KARPENTER_SERVICEACCOUNT_DIR";
/// The context name an in-cluster connection is shown under.
pub const IN_CLUSTER: &str = "in-cluster";

/// The parts of the environment that choose the kubeconfig (read once; tests make their own).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// `KUBECONFIG`.
    pub kubeconfig: Option<std::ffi::OsString>,
    /// `HOME`.
    pub home: Option<std::path::PathBuf>,
    /// `KUBERNETES_SERVICE_HOST`.
    pub service_host: Option<String>,
    /// `KUBERNETES_SERVICE_PORT`.
    pub service_port: Option<String>,
    /// The mounted ServiceAccount ([`SERVICE_ACCOUNT_DIR`], else [`IN_CLUSTER_DIR`]).
    pub service_account_dir: std::path::PathBuf,
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`.
    pub proxy: ProxyEnv,
    /// `POD_NAMESPACE` (the Downward API's; in a pod it comes before the mounted namespace).
    pub pod_namespace: Option<String>,
    /// Whether standard input is a terminal (an exec plugin's `interactiveMode` depends on it).
    pub stdin_terminal: bool,
}

impl Environment {
    /// This process's environment.
    pub fn current() -> Environment {
        let text = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Environment {
            kubeconfig: std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()),
            home: std::env::var_os("HOME").map(std::path::PathBuf::from),
            service_host: text("KUBERNETES_SERVICE_HOST"),
            service_port: text("KUBERNETES_SERVICE_PORT"),
            service_account_dir: std::env::var_os(SERVICE_ACCOUNT_DIR)
                .filter(|v| !v.is_empty())
                .map_or_else(|| IN_CLUSTER_DIR.into(), std::path::PathBuf::from),
            proxy: ProxyEnv::current(),
            pod_namespace: text("POD_NAMESPACE").map(|n| n.trim().to_string()),
            stdin_terminal: std::io::IsTerminal::is_terminal(&std::io::stdin()),
        }
    }
}

/// Where the connection comes from, in kubectl's order: `--kubeconfig`, else `KUBECONFIG`,
/// else `~/.kube/config`, else — only when that file is absent and the pod variables are set —
/// the pod's ServiceAccount (client-go's `DeferredLoadingClientConfig` falls back to
/// `InClusterConfig` the same way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--kubeconfig PATH`.
    Flag(std::path::PathBuf),
    /// `KUBECONFIG`'s paths, merged.
    Variable(std::ffi::OsString),
    /// `~/.kube/config`.
    Home(std::path::PathBuf),
    /// The pod's ServiceAccount: the API server's address and the mounted directory.
    InCluster {
        /// `https://host:port`.
        server: String,
        /// The mounted ServiceAccount.
        dir: std::path::PathBuf,
    },
}

impl Source {
    /// The source `flags` and `env` select; an error when there is none.
    pub fn choose(flags: &KubeFlags, env: &Environment) -> Result<Source, ClusterError> {
        if let Some(path) = flags.kubeconfig.as_ref().filter(|p| !p.is_empty()) {
            return Ok(Source::Flag(path.into()));
        }
        if let Some(value) = &env.kubeconfig {
            return Ok(Source::Variable(value.clone()));
        }
        let home = env.home.as_ref().map(|h| h.join(".kube").join("config"));
        if let Some(path) = home.as_ref().filter(|p| p.exists()) {
            return Ok(Source::Home(path.clone()));
        }
        if let Some(pod) = Source::pod(env) {
            return Ok(pod);
        }
        Err(ClusterError::Config(match home {
            Some(path) => format!(
                "{} does not exist, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)",
                path.display()
            ),
            None => "no --kubeconfig, KUBECONFIG or HOME".into(),
        }))
    }

    /// The pod's ServiceAccount, when `KUBERNETES_SERVICE_HOST`/`_PORT` are set.
    fn pod(env: &Environment) -> Option<Source> {
        let (Some(host), Some(port)) = (&env.service_host, &env.service_port) else {
            return None;
        };
        // An IPv6 service address needs brackets in a URL (net.JoinHostPort).
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        Some(Source::InCluster {
            server: format!("https://{host}:{port}"),
            dir: env.service_account_dir.clone(),
        })
    }

    /// The pod's ServiceAccount in place of a kubeconfig that names no cluster: client-go's
    /// `DeferredLoadingClientConfig.ClientConfig` falls back to in-cluster on `ErrEmptyConfig`
    /// when `inClusterClientConfig.Possible()` (the service variables set, the token a file).
    /// Flags naming kubeconfig entries are lookups that must succeed: no fallback then.
    fn instead_of_empty(&self, flags: &KubeFlags, env: &Environment) -> Option<Source> {
        let named = flags.context.is_some() || flags.cluster.is_some() || flags.user.is_some();
        if named || matches!(self, Source::InCluster { .. }) {
            return None;
        }
        Source::pod(env).filter(|_| env.service_account_dir.join("token").is_file())
    }

    /// Whether this is a `KUBECONFIG` none of whose paths exists (client-go: an empty config).
    fn names_no_file(&self) -> bool {
        matches!(self, Source::Variable(value) if !std::env::split_paths(value).any(|p| p.exists()))
    }

    /// The kubeconfig to connect with (in a pod: one made from the ServiceAccount; `why` says
    /// why in its errors).
    fn load(
        &self,
        flags: &KubeFlags,
        env: &Environment,
        why: &str,
    ) -> Result<Kubeconfig, ClusterError> {
        match self {
            Source::Flag(path) | Source::Home(path) => read(path),
            Source::Variable(value) => read_variable(value),
            Source::InCluster { server, dir } => {
                in_cluster(server, dir, flags, env.pod_namespace.as_deref(), why)
            }
        }
    }
}

/// Whether `kubeconfig` names no cluster for the context in use (client-go `ConfirmUsable`:
/// `ErrEmptyCluster` alone is `ErrEmptyConfig`): no current context, or one whose cluster entry
/// is missing or empty. A current context that is not there is an error, not emptiness.
fn holds_no_cluster(kubeconfig: &Kubeconfig) -> bool {
    let Some(name) = kubeconfig
        .current_context
        .as_deref()
        .filter(|c| !c.is_empty())
    else {
        return true;
    };
    let Some(context) = kubeconfig.contexts.iter().find(|c| c.name == name) else {
        return false;
    };
    let cluster = context.context.as_ref().map_or("", |c| c.cluster.as_str());
    let empty = serde_json::to_value(Cluster::default()).ok();
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .and_then(|c| c.cluster.as_ref())
        .is_none_or(|c| serde_json::to_value(c).ok() == empty)
}

/// The in-cluster errors' reason when there is no kubeconfig at all.
const NO_KUBECONFIG: &str = "KUBERNETES_SERVICE_HOST is set, no kubeconfig";
/// … and when the kubeconfig names no cluster.
const EMPTY_KUBECONFIG: &str = "KUBERNETES_SERVICE_HOST is set, the kubeconfig names no cluster";
/// The context a connection without one is shown under (`--cluster` given, no current context).
pub const NO_CONTEXT: &str = "(none)";

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
    /// The plugin's `installHint`, told when the plugin is not installed (client-go
    /// `plugin/pkg/client/auth/exec` `Authenticator.refreshCredsLocked`, `exec.ErrNotFound`).
    pub install_hint: Option<String>,
    /// The proxy the API server is reached through, as kubectl chooses it ([`proxy::choose`]).
    pub proxy: Option<String>,
    /// The cluster's identity for node bootstrap.
    pub info: ClusterInfo,
}

impl ClusterTarget {
    /// Reads the kubeconfig (`--kubeconfig`, else `KUBECONFIG` — several paths merged like
    /// kubectl —, else `~/.kube/config`, else in a pod its ServiceAccount) and applies the flags.
    pub fn from_flags(global: &KubeFlags) -> Result<ClusterTarget, ClusterError> {
        ClusterTarget::from_flags_in(global, &Environment::current())
    }

    /// [`ClusterTarget::from_flags`] in the environment `env`.
    pub fn from_flags_in(
        global: &KubeFlags,
        env: &Environment,
    ) -> Result<ClusterTarget, ClusterError> {
        let global = &global.without_empty();
        let source = Source::choose(global, env)?;
        let loaded = source.load(global, env, NO_KUBECONFIG);
        let empty = match &loaded {
            Ok(k) => holds_no_cluster(k),
            Err(_) => source.names_no_file(),
        };
        let mut kubeconfig = match source.instead_of_empty(global, env).filter(|_| empty) {
            Some(pod) => pod.load(global, env, EMPTY_KUBECONFIG)?,
            None => loaded?,
        };
        remember_credentials(&kubeconfig);
        let context = match global
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone())
            .filter(|c| !c.is_empty())
        {
            Some(context) => context,
            // No context, but the cluster (and user) named: client-go `getContext` requires
            // none, and connects with an empty context plus the flags.
            None if global.cluster.is_some() => without_context(&mut kubeconfig),
            None => {
                return Err(ClusterError::Config(
                    "no current context (pass --context, or --cluster and --user)".to_string(),
                ))
            }
        };
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
        // `--user` names an entry that must exist (client-go `getAuthInfo`: "auth info %q does
        // not exist" when the name is an override); kube-rs would connect anonymously instead.
        // A context's own user may be missing: then no credentials, in both.
        if let Some(user) = &global.user {
            if !kubeconfig.auth_infos.iter().any(|a| &a.name == user) {
                return Err(ClusterError::Config(format!(
                    "user {user:?} (--user) is not in the kubeconfig"
                )));
            }
        }
        // What kubectl refuses in the cluster and user in use, and the credential it would send
        // (src/k8s/validation.rs).
        validation::check_cluster(&cluster_entry, &cluster).map_err(ClusterError::Config)?;
        if let Some(user) = &user_entry {
            if let Some(auth) = kubeconfig
                .auth_infos
                .iter_mut()
                .find(|a| &a.name == user)
                .and_then(|a| a.auth_info.as_mut())
            {
                validation::check_user(user, auth).map_err(ClusterError::Config)?;
                validation::arrange_user(user, auth, env.stdin_terminal)
                    .map_err(ClusterError::Config)?;
            }
        }
        let auth = user_entry
            .as_ref()
            .and_then(|u| kubeconfig.auth_infos.iter().find(|a| &a.name == u))
            .and_then(|a| a.auth_info.as_ref());
        let exec = auth.and_then(|a| a.exec.as_ref());
        let install_hint = exec.and_then(|e| e.install_hint.clone());
        let exec_args: Vec<String> = exec.and_then(|e| e.args.clone()).unwrap_or_default();
        let credential_plugin = exec.and_then(|e| e.command.clone());
        let name = global
            .cluster_name
            .clone()
            .unwrap_or_else(|| derive_cluster_name(&context, &cluster_entry, &exec_args));
        let endpoint = global
            .cluster_endpoint
            .clone()
            .or_else(|| cluster.server.clone())
            .unwrap_or_default();
        let ca_bundle = match (
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        ) {
            (Some(data), _) => data.clone(),
            (None, Some(path)) => std::fs::read(path)
                .map(|pem| BASE64_STANDARD.encode(&pem))
                .map_err(|e| ClusterError::Config(format!("certificate-authority {path}: {e}")))?,
            (None, None) => String::new(),
        };
        let server = cluster.server.clone().unwrap_or_default();
        let proxy = proxy::choose(&server, cluster.proxy_url.as_deref(), &env.proxy)
            .map_err(|e| ClusterError::Config(format!("cluster {cluster_entry:?}: {e}")))?;
        if let Some(password) = proxy
            .as_deref()
            .and_then(|p| p.split_once("://"))
            .and_then(|(_, rest)| rest.split('/').next()?.rsplit_once('@'))
            .and_then(|(userinfo, _)| userinfo.split_once(':'))
            .map(|(_, password)| password)
            .filter(|p| !p.is_empty())
        {
            redact::remember(password);
        }
        let request_timeout = match &global.request_timeout {
            // Without a limit a stalled API server hangs a `--watch` loop (and its lease renewals)
            // for ever; unlike kubectl we default to one (docs/conventions.md §1.5).
            None => Some(DEFAULT_REQUEST_TIMEOUT),
            Some(text) => match parse_request_timeout(text) {
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
                // An empty context namespace is none (client-go `DirectClientConfig.Namespace`:
                // `len(configContext.Namespace) == 0` → "default").
                .or(named.namespace.clone().filter(|n| !n.is_empty()))
                .unwrap_or_else(|| "default".to_string()),
            options: KubeConfigOptions {
                context: Some(context.clone()),
                cluster: global.cluster.clone(),
                user: global.user.clone(),
            },
            info: ClusterInfo {
                name,
                endpoint,
                ca_bundle,
                service_cidr: None,
                cluster_dns: None,
            },
            kubeconfig,
            request_timeout,
            context,
            credential_plugin,
            install_hint,
            proxy,
        })
    }
}

/// `--request-timeout` as kubectl reads it (client-go `tools/clientcmd/helpers.go` `ParseTimeout`):
/// a non-negative whole number is seconds, else a Go duration to the nanosecond (`500ms` is half
/// a second, not zero — which would mean no timeout at all). A negative duration is refused.
pub fn parse_request_timeout(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    parse_go_duration(text)
        .ok()
        .and_then(|nanos| u64::try_from(nanos).ok())
        .map(Duration::from_nanos)
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

fn read_variable(value: &std::ffi::OsStr) -> Result<Kubeconfig, ClusterError> {
    let mut merged: Option<Kubeconfig> = None;
    for path in std::env::split_paths(value).filter(|p| p.exists()) {
        let mut next = read(&path)?;
        // The first file to set `current-context` to something wins; `current-context: ""`
        // (what `kubectl config` writes in a new file) sets nothing (client-go
        // `ClientConfigLoadingRules.Load` merges with mergo, which skips empty values).
        next.current_context = next.current_context.filter(|c| !c.is_empty());
        merged = Some(match merged {
            None => next,
            Some(m) => m
                .merge(next)
                .map_err(|e| ClusterError::Config(super::client::one_line(&e)))?,
        });
    }
    merged.ok_or_else(|| {
        ClusterError::Config(format!(
            "none of the KUBECONFIG paths exists ({})",
            value.to_string_lossy()
        ))
    })
}

/// The kubeconfig a pod's ServiceAccount amounts to: `server`, the mounted `ca.crt` and
/// `token` (as a `tokenFile`, so that it is re-read when the kubelet rotates it) and
/// `namespace`. In a pod nodes cannot join through the API server's service address, and there
/// is no kubeconfig to name the cluster: `--cluster-name` and `--cluster-endpoint` are needed,
/// as Karpenter's controller needs `CLUSTER_NAME` and resolves `CLUSTER_ENDPOINT`
/// (karpenter-provider-aws `pkg/operator/operator.go` `ResolveClusterEndpoint`).
fn in_cluster(
    server: &str,
    dir: &Path,
    flags: &KubeFlags,
    pod_namespace: Option<&str>,
    why: &str,
) -> Result<Kubeconfig, ClusterError> {
    let config = |message: String| {
        Err(ClusterError::Config(format!(
            "in-cluster ({why}): {message}"
        )))
    };
    for (flag, given) in [
        ("--context", &flags.context),
        ("--cluster", &flags.cluster),
        ("--user", &flags.user),
    ] {
        if given.is_some() {
            return config(format!(
                "{flag} names a kubeconfig entry; pass --kubeconfig too"
            ));
        }
    }
    if flags.cluster_name.is_none() || flags.cluster_endpoint.is_none() {
        return config(
            "pass --cluster-name and --cluster-endpoint (the EKS cluster's name and the API endpoint new nodes join: the in-cluster service address is not reachable from a booting node)"
                .into(),
        );
    }
    let token = dir.join("token");
    let ca = dir.join("ca.crt");
    for file in [&token, &ca] {
        if let Err(e) = std::fs::metadata(file) {
            return config(format!("{}: {e}", file.display()));
        }
    }
    // client-go `inClusterClientConfig.Namespace`: `POD_NAMESPACE`, else the mounted one.
    let namespace = pod_namespace.map(str::to_string).or_else(|| {
        std::fs::read_to_string(dir.join("namespace"))
            .ok()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
    });
    let path = |p: &Path| p.to_string_lossy().into_owned();
    Ok(Kubeconfig {
        clusters: vec![NamedCluster {
            name: IN_CLUSTER.into(),
            cluster: Some(Cluster {
                server: Some(server.to_string()),
                certificate_authority: Some(path(&ca)),
                ..Cluster::default()
            }),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: IN_CLUSTER.into(),
            auth_info: Some(AuthInfo {
                token_file: Some(path(&token)),
                ..AuthInfo::default()
            }),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: IN_CLUSTER.into(),
            context: Some(Context {
                cluster: IN_CLUSTER.into(),
                user: Some(IN_CLUSTER.into()),
                namespace,
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(IN_CLUSTER.into()),
        ..Kubeconfig::default()
    })
}

/// Adds an empty context for a connection by `--cluster`/`--user` alone (kube-rs needs a named
/// one; the flags fill it) under a name no context has, and returns that name.
fn without_context(kubeconfig: &mut Kubeconfig) -> String {
    let mut name = NO_CONTEXT.to_string();
    while kubeconfig.contexts.iter().any(|c| c.name == name) {
        name.push('\'');
    }
    kubeconfig.contexts.push(NamedContext {
        name: name.clone(),
        context: Some(Context::default()),
        ..NamedContext::default()
    });
    name
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

    /// A scratch directory of its own per test.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kubectl-karpenter-config-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A pod's environment: the service variables and a mounted ServiceAccount.
    fn pod(dir: &Path) -> Environment {
        let sa = dir.join("serviceaccount");
        std::fs::create_dir_all(&sa).unwrap();
        std::fs::write(sa.join("token"), "planted-sa-token-0001\n").unwrap();
        std::fs::write(
            sa.join("ca.crt"),
            "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        std::fs::write(sa.join("namespace"), "karpenter\n").unwrap();
        Environment {
            kubeconfig: None,
            home: Some(dir.join("home")),
            service_host: Some("10.100.0.1".into()),
            service_port: Some("443".into()),
            service_account_dir: sa,
            proxy: ProxyEnv::default(),
            pod_namespace: None,
            stdin_terminal: false,
        }
    }

    fn in_pod_flags() -> KubeFlags {
        KubeFlags {
            cluster_name: Some("prod".into()),
            cluster_endpoint: Some("https://ABC.gr7.eu-west-1.eks.amazonaws.com".into()),
            ..KubeFlags::default()
        }
    }

    #[test]
    fn the_kubeconfig_wins_in_kubectls_order_then_the_pod() {
        let dir = scratch("order");
        let env = pod(&dir);
        let flag = KubeFlags {
            kubeconfig: Some("/x/flag".into()),
            ..KubeFlags::default()
        };
        assert_eq!(
            Source::choose(&flag, &env).unwrap(),
            Source::Flag("/x/flag".into())
        );
        let variable = Environment {
            kubeconfig: Some("/x/a:/x/b".into()),
            ..env.clone()
        };
        assert_eq!(
            Source::choose(&KubeFlags::default(), &variable).unwrap(),
            Source::Variable("/x/a:/x/b".into())
        );
        let home = dir.join("home/.kube/config");
        std::fs::create_dir_all(home.parent().unwrap()).unwrap();
        std::fs::write(&home, "apiVersion: v1\nkind: Config\n").unwrap();
        assert_eq!(
            Source::choose(&KubeFlags::default(), &env).unwrap(),
            Source::Home(home.clone())
        );
        std::fs::remove_file(&home).unwrap();
        assert_eq!(
            Source::choose(&KubeFlags::default(), &env).unwrap(),
            Source::InCluster {
                server: "https://10.100.0.1:443".into(),
                dir: env.service_account_dir.clone()
            }
        );
        let ipv6 = Environment {
            service_host: Some("fd00:10:96::1".into()),
            ..env.clone()
        };
        assert!(matches!(
            Source::choose(&KubeFlags::default(), &ipv6).unwrap(),
            Source::InCluster { server, .. } if server == "https://[fd00:10:96::1]:443"
        ));
        let laptop = Environment {
            service_host: None,
            ..env
        };
        let err = Source::choose(&KubeFlags::default(), &laptop).unwrap_err();
        assert!(
            err.to_string()
                .contains("KUBERNETES_SERVICE_HOST is not set"),
            "{err}"
        );
    }

    #[test]
    fn in_a_pod_the_service_account_is_the_kubeconfig() {
        let dir = scratch("pod");
        let env = pod(&dir);
        let target = ClusterTarget::from_flags_in(&in_pod_flags(), &env).unwrap();
        assert_eq!(target.context, IN_CLUSTER);
        assert_eq!(target.namespace, "karpenter", "the mounted namespace");
        assert_eq!(target.info.name, "prod");
        assert_eq!(
            target.info.endpoint, "https://ABC.gr7.eu-west-1.eks.amazonaws.com",
            "nodes join the EKS endpoint, not the service address"
        );
        assert_eq!(
            target.info.ca_bundle,
            BASE64_STANDARD.encode(std::fs::read(env.service_account_dir.join("ca.crt")).unwrap()),
            "the mounted CA is the cluster's"
        );
        let cluster = target.kubeconfig.clusters[0].cluster.clone().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.100.0.1:443"));
        let user = target.kubeconfig.auth_infos[0].auth_info.clone().unwrap();
        // A file, not the token itself: kube-rs re-reads it (at least every 60 s) as the
        // kubelet rotates it.
        assert!(user.token.is_none());
        assert_eq!(
            user.token_file.as_deref(),
            Some(env.service_account_dir.join("token").to_str().unwrap())
        );
        assert_eq!(
            crate::error::redact::redact("sent planted-sa-token-0001"),
            "sent [redacted]",
            "the token is remembered for redaction"
        );
        let flags = KubeFlags {
            namespace: Some("ops".into()),
            ..in_pod_flags()
        };
        assert_eq!(
            ClusterTarget::from_flags_in(&flags, &env)
                .unwrap()
                .namespace,
            "ops"
        );
    }

    #[test]
    fn in_a_pod_what_is_missing_is_named() {
        let dir = scratch("missing");
        let env = pod(&dir);
        let message = |flags: &KubeFlags, env: &Environment| {
            ClusterTarget::from_flags_in(flags, env)
                .err()
                .expect("an error")
                .to_string()
        };
        let no_name = KubeFlags {
            cluster_name: None,
            ..in_pod_flags()
        };
        assert!(message(&no_name, &env).contains("pass --cluster-name and --cluster-endpoint"));
        let no_endpoint = KubeFlags {
            cluster_endpoint: None,
            ..in_pod_flags()
        };
        assert!(message(&no_endpoint, &env).contains("--cluster-endpoint"));
        let context = KubeFlags {
            context: Some("prod".into()),
            ..in_pod_flags()
        };
        assert!(message(&context, &env).contains("--context names a kubeconfig entry"));
        std::fs::remove_file(env.service_account_dir.join("token")).unwrap();
        let text = message(&in_pod_flags(), &env);
        assert!(
            text.contains("in-cluster (KUBERNETES_SERVICE_HOST is set, no kubeconfig): ")
                && text.contains("serviceaccount/token"),
            "{text}"
        );
    }

    #[test]
    fn cluster_endpoint_overrides_the_kubeconfigs_server() {
        let dir = scratch("endpoint");
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443\"}\nusers:\n- name: u\n  user: {}\n",
        )
        .unwrap();
        let mut flags = KubeFlags {
            kubeconfig: Some(path.to_string_lossy().into_owned()),
            ..KubeFlags::default()
        };
        let env = Environment::default();
        let target = ClusterTarget::from_flags_in(&flags, &env).unwrap();
        assert_eq!(target.info.endpoint, "https://127.0.0.1:6443");
        flags.cluster_endpoint = Some("https://nodes.example:443".into());
        let target = ClusterTarget::from_flags_in(&flags, &env).unwrap();
        assert_eq!(target.info.endpoint, "https://nodes.example:443");
    }

    #[test]
    fn a_request_times_out_after_a_minute_of_silence_unless_told_otherwise() {
        let dir = scratch("timeout");
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443\"}\nusers:\n- name: u\n  user: {}\n",
        )
        .unwrap();
        let env = Environment::default();
        let timeout = |flag: Option<&str>| {
            let flags = KubeFlags {
                kubeconfig: Some(path.to_string_lossy().into_owned()),
                request_timeout: flag.map(str::to_string),
                ..KubeFlags::default()
            };
            ClusterTarget::from_flags_in(&flags, &env).map(|t| t.request_timeout)
        };
        assert_eq!(timeout(None).unwrap(), Some(DEFAULT_REQUEST_TIMEOUT));
        assert_eq!(timeout(Some("5s")).unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(timeout(Some("0")).unwrap(), None);
        assert!(timeout(Some("soon")).is_err());
    }

    /// A kubeconfig with contexts `a` (cluster `a`, user `a`, namespace `team-a`) and `b`
    /// (namespace `""`), users `a` and `b`, written to `dir/name`; `current` as current-context.
    fn two_contexts(dir: &Path, name: &str, current: &str, server: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: \"{current}\"\ncontexts:\n- name: a\n  context: {{cluster: a, user: a, namespace: team-a}}\n- name: b\n  context: {{cluster: a, user: b, namespace: \"\"}}\nclusters:\n- name: a\n  cluster: {{server: \"{server}\"}}\nusers:\n- name: a\n  user: {{token: planted-a}}\n- name: b\n  user: {{}}\n"
            ),
        )
        .unwrap();
        path
    }

    fn with_kubeconfig(path: &Path) -> KubeFlags {
        KubeFlags {
            kubeconfig: Some(path.to_string_lossy().into_owned()),
            ..KubeFlags::default()
        }
    }

    #[test]
    fn an_empty_flag_is_a_flag_not_given_as_kubectl_takes_it() {
        // client-go DirectClientConfig.getContextName/getAuthInfoName/getClusterName and
        // Namespace test `len(…) != 0`; ClientConfigLoadingRules.Load an empty ExplicitPath.
        let dir = scratch("empty-flags");
        let path = two_contexts(&dir, "config", "a", "https://127.0.0.1:6443");
        let env = Environment {
            kubeconfig: Some(path.clone().into_os_string()),
            ..Environment::default()
        };
        let empty = KubeFlags {
            kubeconfig: Some(String::new()),
            context: Some(String::new()),
            cluster: Some(String::new()),
            user: Some(String::new()),
            namespace: Some(String::new()),
            request_timeout: Some(String::new()),
            ..KubeFlags::default()
        };
        let target = ClusterTarget::from_flags_in(&empty, &env).unwrap();
        assert_eq!(target.context, "a", "the current context");
        assert_eq!(target.namespace, "team-a", "the context's namespace");
        assert_eq!(target.options.cluster, None);
        assert_eq!(target.options.user, None);
        assert_eq!(target.request_timeout, Some(DEFAULT_REQUEST_TIMEOUT));
    }

    #[test]
    fn a_user_flag_naming_no_user_is_refused_but_a_contexts_missing_user_is_anonymous() {
        // client-go DirectClientConfig.getAuthInfo: `auth info %q does not exist` when the name
        // is an override (required); a context's own missing user is an empty AuthInfo.
        let dir = scratch("user");
        let path = two_contexts(&dir, "config", "a", "https://127.0.0.1:6443");
        let flags = KubeFlags {
            user: Some("typo".into()),
            ..with_kubeconfig(&path)
        };
        let err = ClusterTarget::from_flags_in(&flags, &Environment::default())
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("user \"typo\" (--user) is not in the kubeconfig"),
            "{err}"
        );
        let flags = KubeFlags {
            user: Some("b".into()),
            ..with_kubeconfig(&path)
        };
        let target = ClusterTarget::from_flags_in(&flags, &Environment::default()).unwrap();
        assert_eq!(target.options.user.as_deref(), Some("b"));
        let text = std::fs::read_to_string(&path).unwrap().replace(
            "{cluster: a, user: a, namespace: team-a}",
            "{cluster: a, user: gone}",
        );
        std::fs::write(&path, text).unwrap();
        assert!(
            ClusterTarget::from_flags_in(&with_kubeconfig(&path), &Environment::default()).is_ok()
        );
    }

    #[test]
    fn an_empty_current_context_in_the_first_kubeconfig_does_not_hide_the_next_ones() {
        // client-go ClientConfigLoadingRules.Load: the first file to *set* a value wins (mergo
        // skips empty values); kube-rs's merge keeps the first `Some("")`.
        let dir = scratch("merge");
        let first = two_contexts(&dir, "first", "", "https://127.0.0.1:6443");
        let second = two_contexts(&dir, "second", "b", "https://127.0.0.1:7443");
        let env = Environment {
            kubeconfig: Some(
                std::env::join_paths([&first, &dir.join("missing"), &second]).unwrap(),
            ),
            ..Environment::default()
        };
        let target = ClusterTarget::from_flags_in(&KubeFlags::default(), &env).unwrap();
        assert_eq!(target.context, "b");
        assert_eq!(
            target.info.endpoint, "https://127.0.0.1:6443",
            "the first file's cluster `a` wins"
        );
        assert_eq!(
            target.namespace, "default",
            "an empty context namespace is none"
        );
    }

    #[test]
    fn a_request_timeout_is_read_to_the_nanosecond_as_kubectl_reads_it() {
        // client-go tools/clientcmd/helpers.go ParseTimeout.
        let t = parse_request_timeout;
        assert_eq!(t("500ms"), Some(Duration::from_millis(500)), "not 0 = none");
        assert_eq!(t("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(t("90"), Some(Duration::from_secs(90)));
        assert_eq!(t("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(t("0"), Some(Duration::ZERO));
        assert_eq!(t("-1s"), None);
        assert_eq!(t("1.5"), None, "a number with a fraction needs a unit");
        assert_eq!(t("soon"), None);
    }

    #[test]
    fn the_proxy_is_kubectls_choice() {
        let dir = scratch("proxy");
        let corp = ProxyEnv {
            https: Some("http://alice:planted-proxy-pass@corp:3128".into()),
            ..ProxyEnv::default()
        };
        let env = Environment {
            proxy: corp.clone(),
            ..Environment::default()
        };
        let local = two_contexts(&dir, "local", "a", "https://127.0.0.1:6443");
        let target = ClusterTarget::from_flags_in(&with_kubeconfig(&local), &env).unwrap();
        assert_eq!(target.proxy, None, "loopback is never proxied");
        let remote = two_contexts(&dir, "remote", "a", "https://k8s.example.com");
        let target = ClusterTarget::from_flags_in(&with_kubeconfig(&remote), &env).unwrap();
        assert_eq!(target.proxy, corp.https);
        assert_eq!(
            crate::error::redact::redact("via planted-proxy-pass"),
            "via [redacted]",
            "the proxy's password is remembered for redaction"
        );
        let exempt = Environment {
            proxy: ProxyEnv {
                no_proxy: Some("example.com".into()),
                ..corp
            },
            ..Environment::default()
        };
        let target = ClusterTarget::from_flags_in(&with_kubeconfig(&remote), &exempt).unwrap();
        assert_eq!(target.proxy, None, "NO_PROXY names the server");
        let text = std::fs::read_to_string(&remote).unwrap().replace(
            "server: \"https://k8s.example.com\"",
            "server: \"https://k8s.example.com\", proxy-url: \"ftp://jump\"",
        );
        std::fs::write(&remote, text).unwrap();
        let err = ClusterTarget::from_flags_in(&with_kubeconfig(&remote), &exempt)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains("unsupported scheme \"ftp\""), "{err}");
    }

    #[test]
    fn in_a_pod_a_kubeconfig_naming_no_cluster_gives_way_to_the_service_account() {
        // client-go DeferredLoadingClientConfig.ClientConfig: ErrEmptyConfig falls back to
        // inClusterClientConfig when Possible() (service variables set, the token a file).
        let dir = scratch("fallback");
        let env = pod(&dir);
        let in_cluster = |flags: &KubeFlags, env: &Environment| {
            ClusterTarget::from_flags_in(flags, env).map(|t| t.context)
        };
        let missing = Environment {
            kubeconfig: Some(dir.join("missing").into_os_string()),
            ..env.clone()
        };
        assert_eq!(in_cluster(&in_pod_flags(), &missing).unwrap(), IN_CLUSTER);
        let empty = dir.join("empty");
        std::fs::write(&empty, "").unwrap();
        let flags = KubeFlags {
            kubeconfig: Some(empty.to_string_lossy().into_owned()),
            ..in_pod_flags()
        };
        assert_eq!(in_cluster(&flags, &env).unwrap(), IN_CLUSTER);
        let no_current = two_contexts(&dir, "no-current", "", "https://127.0.0.1:6443");
        let flags = KubeFlags {
            kubeconfig: Some(no_current.to_string_lossy().into_owned()),
            ..in_pod_flags()
        };
        assert_eq!(in_cluster(&flags, &env).unwrap(), IN_CLUSTER);
        // A context named by a flag must be there: no fallback.
        let flags = KubeFlags {
            context: Some("gone".into()),
            ..flags
        };
        let err = in_cluster(&flags, &env).unwrap_err().to_string();
        assert!(
            err.contains("context \"gone\" is not in the kubeconfig"),
            "{err}"
        );
        // A usable kubeconfig wins.
        let usable = two_contexts(&dir, "usable", "a", "https://127.0.0.1:6443");
        let flags = KubeFlags {
            kubeconfig: Some(usable.to_string_lossy().into_owned()),
            ..in_pod_flags()
        };
        assert_eq!(in_cluster(&flags, &env).unwrap(), "a");
        // What the pod lacks is told with why the kubeconfig was passed over.
        let err = in_cluster(&KubeFlags::default(), &missing)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("in-cluster (KUBERNETES_SERVICE_HOST is set, the kubeconfig names no cluster): pass --cluster-name"),
            "{err}"
        );
        // Without a mounted token in-cluster is not possible: the kubeconfig's own error.
        std::fs::remove_file(env.service_account_dir.join("token")).unwrap();
        let err = in_cluster(&in_pod_flags(), &missing)
            .unwrap_err()
            .to_string();
        assert!(err.contains("none of the KUBECONFIG paths exists"), "{err}");
    }

    #[test]
    fn in_a_pod_pod_namespace_comes_before_the_mounted_namespace() {
        // client-go inClusterClientConfig.Namespace: POD_NAMESPACE, the mounted file, default.
        let dir = scratch("pod-namespace");
        let env = Environment {
            pod_namespace: Some("from-downward-api".into()),
            ..pod(&dir)
        };
        let target = ClusterTarget::from_flags_in(&in_pod_flags(), &env).unwrap();
        assert_eq!(target.namespace, "from-downward-api");
        let flags = KubeFlags {
            namespace: Some("ops".into()),
            ..in_pod_flags()
        };
        let target = ClusterTarget::from_flags_in(&flags, &env).unwrap();
        assert_eq!(target.namespace, "ops", "-n first");
        std::fs::remove_file(env.service_account_dir.join("namespace")).unwrap();
        let bare = Environment {
            pod_namespace: None,
            ..env
        };
        let target = ClusterTarget::from_flags_in(&in_pod_flags(), &bare).unwrap();
        assert_eq!(target.namespace, "default");
    }

    #[test]
    fn without_a_current_context_the_cluster_and_user_flags_connect() {
        // client-go DirectClientConfig.getContext: the context is required only when named by
        // --context; an empty one plus the --cluster/--user overrides connects.
        let dir = scratch("no-context");
        let path = two_contexts(&dir, "config", "", "https://127.0.0.1:6443");
        let flags = KubeFlags {
            cluster: Some("a".into()),
            user: Some("a".into()),
            ..with_kubeconfig(&path)
        };
        let target = ClusterTarget::from_flags_in(&flags, &Environment::default()).unwrap();
        assert_eq!(target.context, NO_CONTEXT);
        assert_eq!(target.namespace, "default");
        assert_eq!(target.info.endpoint, "https://127.0.0.1:6443");
        assert_eq!(target.options.context.as_deref(), Some(NO_CONTEXT));
        assert_eq!(target.options.user.as_deref(), Some("a"));
        let loader = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(kube::Config::from_custom_kubeconfig(
                target.kubeconfig.clone(),
                &target.options,
            ))
            .expect("kube-rs loads it");
        assert_eq!(loader.cluster_url.to_string(), "https://127.0.0.1:6443/");
        let err = ClusterTarget::from_flags_in(&with_kubeconfig(&path), &Environment::default())
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("no current context (pass --context, or --cluster and --user)"),
            "{err}"
        );
    }

    #[test]
    fn the_cluster_and_user_in_use_are_checked_as_kubectl_checks_them() {
        // client-go DirectClientConfig.ConfirmUsable: validateAuthInfo and validateClusterInfo
        // for the context in use only.
        let dir = scratch("confirm");
        let path = two_contexts(&dir, "config", "b", "https://127.0.0.1:6443");
        let broken = std::fs::read_to_string(&path).unwrap().replace(
            "user: {token: planted-a}",
            "user: {token: planted-a, password: planted-pw}",
        );
        std::fs::write(&path, broken).unwrap();
        let env = Environment::default();
        assert!(
            ClusterTarget::from_flags_in(&with_kubeconfig(&path), &env).is_ok(),
            "user a is not in use"
        );
        let flags = KubeFlags {
            context: Some("a".into()),
            ..with_kubeconfig(&path)
        };
        let err = ClusterTarget::from_flags_in(&flags, &env)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("user \"a\": token and username/password are both set"),
            "{err}"
        );
        assert!(!err.contains("planted"), "{err}");
        let both_cas = std::fs::read_to_string(&path).unwrap().replace(
            "server: \"https://127.0.0.1:6443\"",
            "server: \"https://127.0.0.1:6443\", certificate-authority: /ca.crt, certificate-authority-data: Q0E=",
        );
        std::fs::write(&path, both_cas).unwrap();
        let err = ClusterTarget::from_flags_in(&with_kubeconfig(&path), &env)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains(
                "cluster \"a\": certificate-authority and certificate-authority-data are both set"
            ),
            "{err}"
        );
    }
}
