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

use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster,
    NamedContext,
};

use super::ClusterError;
use crate::cloud::launch::ClusterInfo;
use crate::cloud::userdata::base64_encode;
use crate::disruption::time::parse_duration_flag;
use crate::error::redact;

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
        if let Some(path) = &flags.kubeconfig {
            return Ok(Source::Flag(path.into()));
        }
        if let Some(value) = &env.kubeconfig {
            return Ok(Source::Variable(value.clone()));
        }
        let home = env.home.as_ref().map(|h| h.join(".kube").join("config"));
        if let Some(path) = home.as_ref().filter(|p| p.exists()) {
            return Ok(Source::Home(path.clone()));
        }
        if let (Some(host), Some(port)) = (&env.service_host, &env.service_port) {
            // An IPv6 service address needs brackets in a URL (net.JoinHostPort).
            let host = if host.contains(':') && !host.starts_with('[') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            return Ok(Source::InCluster {
                server: format!("https://{host}:{port}"),
                dir: env.service_account_dir.clone(),
            });
        }
        Err(ClusterError::Config(match home {
            Some(path) => format!(
                "{} does not exist, and this is not a pod (KUBERNETES_SERVICE_HOST is not set)",
                path.display()
            ),
            None => "no --kubeconfig, KUBECONFIG or HOME".into(),
        }))
    }

    /// The kubeconfig to connect with (in a pod: one made from the ServiceAccount).
    fn load(&self, flags: &KubeFlags) -> Result<Kubeconfig, ClusterError> {
        match self {
            Source::Flag(path) | Source::Home(path) => read(path),
            Source::Variable(value) => read_variable(value),
            Source::InCluster { server, dir } => in_cluster(server, dir, flags),
        }
    }
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
    /// kubectl —, else `~/.kube/config`, else in a pod its ServiceAccount) and applies the flags.
    pub fn from_flags(global: &KubeFlags) -> Result<ClusterTarget, ClusterError> {
        ClusterTarget::from_flags_in(global, &Environment::current())
    }

    /// [`ClusterTarget::from_flags`] in the environment `env`.
    pub fn from_flags_in(
        global: &KubeFlags,
        env: &Environment,
    ) -> Result<ClusterTarget, ClusterError> {
        let source = Source::choose(global, env)?;
        let kubeconfig = source.load(global)?;
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
                .map(|pem| base64_encode(&pem))
                .map_err(|e| ClusterError::Config(format!("certificate-authority {path}: {e}")))?,
            (None, None) => String::new(),
        };
        let request_timeout = match &global.request_timeout {
            // Without a limit a stalled API server hangs a `--watch` loop (and its lease renewals)
            // for ever; unlike kubectl we default to one (docs/conventions.md §1.5).
            None => Some(DEFAULT_REQUEST_TIMEOUT),
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
                endpoint,
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

fn read_variable(value: &std::ffi::OsStr) -> Result<Kubeconfig, ClusterError> {
    let mut merged: Option<Kubeconfig> = None;
    for path in std::env::split_paths(value).filter(|p| p.exists()) {
        let next = read(&path)?;
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
fn in_cluster(server: &str, dir: &Path, flags: &KubeFlags) -> Result<Kubeconfig, ClusterError> {
    let config = |message: String| {
        Err(ClusterError::Config(format!(
            "in-cluster (KUBERNETES_SERVICE_HOST is set, no kubeconfig): {message}"
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
    let namespace = std::fs::read_to_string(dir.join("namespace"))
        .ok()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
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
            base64_encode(&std::fs::read(env.service_account_dir.join("ca.crt")).unwrap()),
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
}
