//! The kubeconfig's cluster and user in use, checked as kubectl checks them before it connects,
//! and the user's credentials arranged so that kube-rs uses the one client-go would use.
//!
//! client-go v0.36.3 (`7a46b3e8`, Apache-2.0): `DirectClientConfig.ClientConfig` calls
//! `ConfirmUsable`, which runs `validateClusterInfo` and `validateAuthInfo`
//! (`tools/clientcmd/validation.go`) on the cluster and user of the context in use only — other
//! entries may be broken. kube-rs checks none of it: it takes `certificate-authority-data` over
//! the file, basic auth over a token, and fails on a client certificate without a key only when
//! connecting. Which credential is sent is client-go's `getUserIdentificationPartialConfig`
//! (`client_config.go`), `NewBearerAuthWithRefreshRoundTripper` (`transport/round_trippers.go`)
//! and the exec `Authenticator` (`plugin/pkg/client/auth/exec/exec.go` `UpdateTransportConfig`,
//! `isInteractive`, `refreshCredsLocked`).
//!
//! Messages name the entry and its fields, never a value (docs/security.md).

use kube::config::{AuthInfo, Cluster, ExecInteractiveMode};

/// The exec `apiVersion`s whose `interactiveMode` defaults to `IfAvailable` (client-go
/// `tools/clientcmd/api/v1/defaults.go` `SetDefaults_ExecConfig`); any other needs it set.
const INTERACTIVE_BY_DEFAULT: [&str; 2] = [
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
];

/// Whether `value` is set as client-go tests it (`len(…) != 0`).
fn set(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// The first problem `validateClusterInfo` finds in the cluster entry `name` (client-go
/// reports them all; one line names the first).
pub fn check_cluster(name: &str, cluster: &Cluster) -> Result<(), String> {
    let entry = format!("cluster {name:?}");
    if !set(cluster.server.as_deref()) {
        // "no server found for cluster %q"
        return Err(format!("{entry} has no server"));
    }
    if set(cluster.certificate_authority.as_deref())
        && set(cluster.certificate_authority_data.as_deref())
    {
        // "certificate-authority-data and certificate-authority are both specified for %v"
        return Err(format!(
            "{entry}: certificate-authority and certificate-authority-data are both set (kubectl refuses it: keep one)"
        ));
    }
    Ok(())
}

/// The user's fields as JSON (a token and a client key are secrets kube-rs keeps opaque).
fn secrets_set(auth: &AuthInfo) -> (bool, bool, bool) {
    let doc = serde_json::to_value(auth).unwrap_or_default();
    let has = |p: &str| {
        doc.pointer(p)
            .and_then(|v| v.as_str())
            .is_some_and(|v| !v.is_empty())
    };
    (has("/token"), has("/password"), has("/client-key-data"))
}

/// The first problem `validateAuthInfo` finds in the user entry `name`.
pub fn check_user(name: &str, auth: &AuthInfo) -> Result<(), String> {
    let entry = format!("user {name:?}");
    let (token, password, key_data) = secrets_set(auth);
    let basic = set(auth.username.as_deref()) || password;
    if token && basic {
        // "more than one authentication method found for %v; found [token basicAuth], only one
        // is allowed"
        return Err(format!(
            "{entry}: token and username/password are both set; only one authentication method is allowed"
        ));
    }
    let cert_file = set(auth.client_certificate.as_deref());
    let cert_data = set(auth.client_certificate_data.as_deref());
    let key_file = set(auth.client_key.as_deref());
    if cert_file || cert_data {
        if cert_file && cert_data {
            return Err(format!(
                "{entry}: client-certificate and client-certificate-data are both set (kubectl refuses it: keep one)"
            ));
        }
        if key_file && key_data {
            return Err(format!(
                "{entry}: client-key and client-key-data are both set (kubectl refuses it: keep one)"
            ));
        }
        if !key_file && !key_data {
            return Err(format!(
                "{entry}: a client certificate without client-key or client-key-data"
            ));
        }
    }
    if let Some(exec) = &auth.exec {
        if auth.auth_provider.is_some() {
            return Err(format!("{entry}: exec and auth-provider are both set"));
        }
        if !set(exec.command.as_deref()) {
            return Err(format!("{entry}: exec.command is not set"));
        }
        let Some(api_version) = exec.api_version.as_deref().filter(|v| !v.is_empty()) else {
            return Err(format!(
                "{entry}: exec.apiVersion is not set (e.g. client.authentication.k8s.io/v1beta1)"
            ));
        };
        if let Some(i) = exec
            .env
            .iter()
            .flatten()
            .position(|e| !set(e.get("name").map(String::as_str)))
        {
            return Err(format!("{entry}: exec.env[{i}] has no name"));
        }
        if exec.interactive_mode.is_none() && !INTERACTIVE_BY_DEFAULT.contains(&api_version) {
            return Err(format!(
                "{entry}: exec.interactiveMode is not set (Never, IfAvailable or Always; required for exec.apiVersion {api_version})"
            ));
        }
        // exec.go newAuthenticator: "exec plugin: invalid apiVersion %q" (v1alpha1 is gone
        // since Kubernetes 1.24) — client-go builds the authenticator whenever exec is set.
        if !super::exec_credential::API_VERSIONS.contains(&api_version) {
            return Err(format!(
                "{entry}: exec.apiVersion {api_version} is not supported (client.authentication.k8s.io/v1 or v1beta1; kubectl refuses it too)"
            ));
        }
    }
    let impersonating = set(auth.impersonate_uid.as_deref())
        || auth
            .impersonate_groups
            .as_ref()
            .is_some_and(|g| !g.is_empty())
        || auth
            .impersonate_user_extra
            .as_ref()
            .is_some_and(|e| !e.is_empty());
    if impersonating && !set(auth.impersonate.as_deref()) {
        return Err(format!(
            "{entry}: as-uid, as-groups or as-user-extra without as (the user to impersonate)"
        ));
    }
    Ok(())
}

/// Arranges a user that passed [`check_user`] so that kube-rs sends what client-go sends:
///
/// - a `token` and a readable `tokenFile`: the file (client-go's bearer round tripper re-reads
///   it and falls back to the inline token only when it cannot; kube-rs takes the inline token);
/// - a client certificate and key with an exec plugin: the plugin is not run (exec
///   `UpdateTransportConfig` returns early on `HasCertAuth`, as on a token or basic auth, which
///   kube-rs already prefers to the plugin);
/// - the plugin's `interactiveMode` (`isInteractive`): unset is `IfAvailable` for v1beta1 and
///   v1alpha1; `Always` with a standard input that is no terminal is refused; `IfAvailable`
///   without a terminal becomes `Never` — not interactive: our runner
///   (src/k8s/exec_credential.rs) gives the plugin no standard input and `interactive: false`,
///   and its error output reaches our stderr in every mode, as under kubectl.
pub fn arrange_user(name: &str, auth: &mut AuthInfo, stdin_terminal: bool) -> Result<(), String> {
    let (token, _, key_data) = secrets_set(auth);
    if token {
        if let Some(file) = auth.token_file.as_deref().filter(|f| !f.is_empty()) {
            if std::fs::read(file).is_ok() {
                auth.token = None;
            }
        }
    }
    let cert =
        set(auth.client_certificate.as_deref()) || set(auth.client_certificate_data.as_deref());
    let key = set(auth.client_key.as_deref()) || key_data;
    if cert && key {
        auth.exec = None;
    }
    let other = !runs_exec(auth);
    let Some(exec) = auth.exec.as_mut() else {
        return Ok(());
    };
    if exec.interactive_mode.is_none() {
        exec.interactive_mode = Some(ExecInteractiveMode::IfAvailable);
    }
    if other || stdin_terminal {
        return Ok(());
    }
    match exec.interactive_mode {
        Some(ExecInteractiveMode::Always) => Err(format!(
            "user {name:?}: exec.interactiveMode is Always, but standard input is not a terminal (kubectl refuses it too)"
        )),
        _ => {
            exec.interactive_mode = Some(ExecInteractiveMode::Never);
            Ok(())
        }
    }
}

/// Whether the user's exec plugin is what client-go runs for a credential: it has one, and no
/// token, token file, basic auth, auth-provider or client certificate comes first (exec
/// `UpdateTransportConfig` returns early on `HasTokenAuth`, `HasBasicAuth`, `HasCertAuth`).
pub fn runs_exec(auth: &AuthInfo) -> bool {
    let (token, password, key_data) = secrets_set(auth);
    let cert =
        set(auth.client_certificate.as_deref()) || set(auth.client_certificate_data.as_deref());
    let key = set(auth.client_key.as_deref()) || key_data;
    auth.exec.is_some()
        && !(token
            || set(auth.token_file.as_deref())
            || set(auth.username.as_deref())
            || password
            || auth.auth_provider.is_some()
            || (cert && key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(yaml: &str) -> AuthInfo {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn cluster(yaml: &str) -> Cluster {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn a_cluster_with_both_certificate_authorities_or_no_server_is_refused() {
        // validation.go validateClusterInfo.
        let both = cluster(
            "server: https://k\ncertificate-authority: /ca.crt\ncertificate-authority-data: Q0E=\n",
        );
        let err = check_cluster("prod", &both).unwrap_err();
        assert!(
            err.contains("cluster \"prod\": certificate-authority and certificate-authority-data are both set"),
            "{err}"
        );
        assert!(!err.contains("Q0E="), "{err}");
        assert!(
            check_cluster("prod", &cluster("certificate-authority-data: Q0E=\n"))
                .unwrap_err()
                .contains("cluster \"prod\" has no server")
        );
        let empty_file = cluster(
            "server: https://k\ncertificate-authority: \"\"\ncertificate-authority-data: Q0E=\n",
        );
        assert_eq!(
            check_cluster("prod", &empty_file),
            Ok(()),
            "an empty value is none"
        );
    }

    #[test]
    fn a_user_kubectl_refuses_is_refused_naming_fields_not_values() {
        // validation.go validateAuthInfo.
        let refused = [
            (
                "token: planted-tok\nusername: alice\npassword: planted-pw\n",
                "token and username/password are both set; only one authentication method is allowed",
            ),
            ("token: planted-tok\npassword: planted-pw\n", "token and username/password"),
            (
                "client-certificate: /c.crt\nclient-certificate-data: Q0U=\nclient-key: /k.key\n",
                "client-certificate and client-certificate-data are both set",
            ),
            (
                "client-certificate-data: Q0U=\nclient-key: /k.key\nclient-key-data: planted-key\n",
                "client-key and client-key-data are both set",
            ),
            (
                "client-certificate-data: Q0U=\n",
                "a client certificate without client-key or client-key-data",
            ),
            (
                "exec: {command: aws, interactiveMode: Never}\n",
                "exec.apiVersion is not set",
            ),
            (
                "exec: {apiVersion: client.authentication.k8s.io/v1beta1}\n",
                "exec.command is not set",
            ),
            (
                "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n",
                "exec.interactiveMode is not set",
            ),
            (
                "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws, env: [{name: A, value: planted-env}, {value: planted-env}]}\n",
                "exec.env[1] has no name",
            ),
            (
                "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws}\nauth-provider: {name: oidc}\n",
                "exec and auth-provider are both set",
            ),
            ("as-groups: [admins]\n", "as-uid, as-groups or as-user-extra without as"),
            (
                "exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}\n",
                "exec.apiVersion client.authentication.k8s.io/v1alpha1 is not supported",
            ),
        ];
        for (yaml, expected) in refused {
            let err = check_user("u", &user(yaml)).expect_err(yaml);
            assert!(err.starts_with("user \"u\""), "{err}");
            assert!(err.contains(expected), "{yaml}: {err}");
            assert!(!err.contains("planted"), "{err}");
        }
        let accepted = [
            "token: planted-tok\ntokenFile: /t\n",
            "token: \"\"\nusername: alice\npassword: planted-pw\n",
            "client-certificate-data: Q0U=\nclient-key-data: planted-key\n",
            "client-certificate-data: Q0U=\nclient-key-data: planted-key\ntoken: planted-tok\n",
            "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws}\n",
            "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}\n",
            "as: bob\nas-groups: [admins]\n",
            "{}",
        ];
        for yaml in accepted {
            assert_eq!(check_user("u", &user(yaml)), Ok(()), "{yaml}");
        }
    }

    fn exec_user(mode: &str) -> AuthInfo {
        user(&format!(
            "exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: plugin{mode}}}\n"
        ))
    }

    fn mode(auth: &AuthInfo) -> Option<ExecInteractiveMode> {
        auth.exec.as_ref().and_then(|e| e.interactive_mode.clone())
    }

    #[test]
    fn a_plugin_that_must_prompt_without_a_terminal_is_refused() {
        // exec.go isInteractive: Always without a terminal is refused; unset is IfAvailable for
        // v1beta1 (defaults.go SetDefaults_ExecConfig). IfAvailable without a terminal is not
        // interactive (isInteractive false): Never, no stdin for the plugin, our stderr.
        use ExecInteractiveMode::*;
        for (given, terminal, now) in [
            ("", false, Some(Never)),
            ("", true, Some(IfAvailable)),
            (", interactiveMode: IfAvailable", false, Some(Never)),
            (", interactiveMode: IfAvailable", true, Some(IfAvailable)),
            (", interactiveMode: Never", true, Some(Never)),
            (", interactiveMode: Always", true, Some(Always)),
        ] {
            let mut auth = exec_user(given);
            arrange_user("u", &mut auth, terminal).unwrap();
            assert_eq!(mode(&auth), now, "{given} terminal={terminal}");
        }
        let mut always = exec_user(", interactiveMode: Always");
        let err = arrange_user("u", &mut always, false).unwrap_err();
        assert!(
            err.contains(
                "user \"u\": exec.interactiveMode is Always, but standard input is not a terminal"
            ),
            "{err}"
        );
        // The plugin is not run at all when a token is there (exec UpdateTransportConfig).
        let mut with_token = user("token: planted-tok\nexec: {apiVersion: client.authentication.k8s.io/v1beta1, command: p, interactiveMode: Always}\n");
        assert_eq!(arrange_user("u", &mut with_token, false), Ok(()));
        assert!(!runs_exec(&with_token));
        assert!(runs_exec(&exec_user("")));
    }

    #[test]
    fn the_credential_sent_is_the_one_client_go_sends() {
        let dir = std::env::temp_dir().join(format!(
            "kubectl-karpenter-validation-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "planted-file-token").unwrap();
        // A token and a readable tokenFile: the file (NewBearerAuthWithRefreshRoundTripper).
        let mut both = user(&format!(
            "token: planted-tok\ntokenFile: {}\n",
            file.display()
        ));
        arrange_user("u", &mut both, false).unwrap();
        assert!(both.token.is_none());
        assert_eq!(both.token_file.as_deref(), file.to_str());
        // …unreadable: the inline token.
        let mut missing = user("token: planted-tok\ntokenFile: /nonexistent/token\n");
        arrange_user("u", &mut missing, false).unwrap();
        assert!(missing.token.is_some());
        // A client certificate and key: the exec plugin is not run (HasCertAuth).
        let mut cert = user("client-certificate-data: Q0U=\nclient-key-data: planted-key\nexec: {apiVersion: client.authentication.k8s.io/v1beta1, command: p}\n");
        arrange_user("u", &mut cert, false).unwrap();
        assert!(cert.exec.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
