//! Which proxy, if any, the API server is reached through — kubectl's choice, not kube-rs's.
//!
//! kubectl (client-go `tools/clientcmd/client_config.go` `DirectClientConfig.ClientConfig`) uses
//! the cluster's `proxy-url` when the kubeconfig sets one (scheme http, https or socks5:
//! `parseProxyURL`), else Go's `http.ProxyFromEnvironment` (`golang.org/x/net/http/httpproxy`
//! `config.useProxy`): `HTTPS_PROXY` (or `https_proxy`) for an https server, `HTTP_PROXY` for an
//! http one, never for `localhost` or a loopback address, and not for a host `NO_PROXY` names
//! (`*`; an IP or CIDR; a domain, which also covers its subdomains; `.domain` or `*.domain`,
//! subdomains only; each with an optional `:port`). kube-rs reads `HTTPS_PROXY` alone, for
//! http servers too, and matches `NO_PROXY` against the proxy's own address, so the server's
//! exemption was never seen.

use std::net::IpAddr;

/// The proxy variables of the environment (read once; tests make their own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTPS_PROXY`, else `https_proxy`.
    pub https: Option<String>,
    /// `HTTP_PROXY`, else `http_proxy`.
    pub http: Option<String>,
    /// `NO_PROXY`, else `no_proxy`.
    pub no_proxy: Option<String>,
}

impl ProxyEnv {
    /// This process's environment.
    pub fn current() -> ProxyEnv {
        let any = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
        };
        ProxyEnv {
            https: any(["HTTPS_PROXY", "https_proxy"]),
            http: any(["HTTP_PROXY", "http_proxy"]),
            no_proxy: any(["NO_PROXY", "no_proxy"]),
        }
    }
}

/// The proxy URL for `server` (`None`: connect directly), or why the kubeconfig's `proxy-url`
/// is refused.
pub fn choose(
    server: &str,
    kubeconfig_proxy: Option<&str>,
    env: &ProxyEnv,
) -> Result<Option<String>, String> {
    if let Some(proxy) = kubeconfig_proxy.filter(|p| !p.is_empty()) {
        let scheme = proxy.split_once("://").map_or("", |(s, _)| s);
        return match scheme {
            "http" | "https" | "socks5" => Ok(Some(proxy.to_string())),
            _ => Err(format!(
                "proxy-url: unsupported scheme {scheme:?}, must be http, https, or socks5"
            )),
        };
    }
    let (scheme, rest) = server.split_once("://").unwrap_or(("https", server));
    let https = scheme.eq_ignore_ascii_case("https");
    let Some(proxy) = (if https { &env.https } else { &env.http }) else {
        return Ok(None);
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = split_host_port(authority);
    let port = port.unwrap_or(if https { "443" } else { "80" });
    if !use_proxy(&host.to_ascii_lowercase(), port, env.no_proxy.as_deref()) {
        return Ok(None);
    }
    // httpproxy `parseProxy`: a proxy without a scheme is an http one.
    Ok(Some(if proxy.contains("://") {
        proxy.clone()
    } else {
        format!("http://{proxy}")
    }))
}

/// `host` and `port` of `authority` (`[v6]:port`, `host:port`, `host`), brackets removed.
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, tail)) => (host, tail.strip_prefix(':')),
            None => (rest, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (authority, None),
    }
}

/// httpproxy `config.useProxy`: whether a request to `host:port` goes through the proxy.
fn use_proxy(host: &str, port: &str, no_proxy: Option<&str>) -> bool {
    let ip = host.parse::<IpAddr>().ok();
    if host == "localhost" || ip.is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    for entry in no_proxy.unwrap_or_default().split(',') {
        let entry = entry.trim().to_ascii_lowercase();
        if entry.is_empty() {
            continue;
        }
        if entry == "*" {
            return false;
        }
        if let Some((net, bits)) = entry.split_once('/') {
            if let (Some(ip), Ok(net), Ok(bits)) = (ip, net.parse::<IpAddr>(), bits.parse()) {
                if in_cidr(ip, net, bits) {
                    return false;
                }
            }
            continue;
        }
        let (entry_host, entry_port) = split_host_port(&entry);
        let port_ok = entry_port.is_none_or(|p| p == port);
        if let Ok(entry_ip) = entry_host.parse::<IpAddr>() {
            if ip == Some(entry_ip) && port_ok {
                return false;
            }
            continue;
        }
        // `*.domain` is `.domain`: subdomains only; a bare `domain` is itself and its subdomains.
        let domain = entry_host.strip_prefix('*').filter(|d| d.starts_with('.'));
        let domain = domain.unwrap_or(entry_host);
        if domain.is_empty() || domain == "." {
            continue;
        }
        let (suffix, itself) = match domain.strip_prefix('.') {
            Some(_) => (domain.to_string(), None),
            None => (format!(".{domain}"), Some(domain)),
        };
        let matched = host.ends_with(&suffix) || itself == Some(host);
        if matched && port_ok {
            return false;
        }
    }
    true
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u32) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(https: Option<&str>, http: Option<&str>, no_proxy: Option<&str>) -> ProxyEnv {
        ProxyEnv {
            https: https.map(str::to_string),
            http: http.map(str::to_string),
            no_proxy: no_proxy.map(str::to_string),
        }
    }

    #[test]
    fn the_kubeconfigs_proxy_url_wins_and_its_scheme_is_checked() {
        let corp = env(Some("http://corp:3128"), None, Some("*"));
        assert_eq!(
            choose("https://k8s.example", Some("socks5://jump:1080"), &corp).unwrap(),
            Some("socks5://jump:1080".into()),
            "NO_PROXY does not apply to the kubeconfig's proxy-url"
        );
        let err = choose("https://k8s.example", Some("ftp://jump"), &corp).unwrap_err();
        assert!(err.contains("unsupported scheme \"ftp\""), "{err}");
    }

    #[test]
    fn the_environments_proxy_is_chosen_by_the_servers_scheme() {
        let both = env(Some("http://secure:3128"), Some("plain:3128"), None);
        assert_eq!(
            choose("https://k8s.example:6443", None, &both).unwrap(),
            Some("http://secure:3128".into())
        );
        assert_eq!(
            choose("http://k8s.example:8080", None, &both).unwrap(),
            Some("http://plain:3128".into()),
            "HTTP_PROXY for an http server, with http:// added"
        );
        let https_only = env(Some("http://secure:3128"), None, None);
        assert_eq!(
            choose("http://k8s.example", None, &https_only).unwrap(),
            None
        );
        assert_eq!(
            choose("https://k8s.example", None, &ProxyEnv::default()).unwrap(),
            None
        );
    }

    #[test]
    fn loopback_and_no_proxy_hosts_are_reached_directly() {
        let corp = |no: &str| env(Some("http://corp:3128"), None, Some(no));
        let via = |server: &str, no: &str| choose(server, None, &corp(no)).unwrap().is_some();
        // Never through a proxy: localhost, loopback addresses.
        for server in [
            "https://127.0.0.1:6443",
            "https://localhost:6443",
            "https://[::1]:6443",
        ] {
            assert!(!via(server, ""), "{server}");
        }
        let eks = "https://ABC.gr7.eu-west-1.eks.amazonaws.com";
        assert!(via(eks, ""));
        assert!(!via(eks, "*"));
        assert!(
            !via(eks, "eks.amazonaws.com"),
            "a domain covers its subdomains"
        );
        assert!(!via(eks, ".eks.amazonaws.com"));
        assert!(!via(eks, "*.eks.amazonaws.com"));
        assert!(
            !via(eks, " other.example , EKS.amazonaws.com"),
            "trimmed, any case"
        );
        assert!(!via(eks, "eks.amazonaws.com:443"), "the default https port");
        assert!(via(eks, "eks.amazonaws.com:6443"), "another port");
        assert!(via(eks, "amazonaws.co"), "no partial label match");
        assert!(
            via("https://eks.amazonaws.com", ".eks.amazonaws.com"),
            "subdomains only"
        );
        assert!(!via("https://eks.amazonaws.com", "eks.amazonaws.com"));
        assert!(!via("https://10.1.2.3:443", "10.0.0.0/8"));
        assert!(via("https://11.1.2.3:443", "10.0.0.0/8"));
        assert!(!via("https://10.1.2.3:443", "10.1.2.3"));
        assert!(!via("https://[fd00::5]:443", "fd00::/16"));
    }
}
