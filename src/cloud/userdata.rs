//! User data that joins a launched instance to the cluster, per AMI family (docs/karpenter.md §6.7,
//! docs/spec.md §5.3), merged with the node class's own `userData` the way Karpenter does:
//!
//! - **AL2**: a MIME multipart whose last part is the `/etc/eks/bootstrap.sh` script with
//!   `--kubelet-extra-args` (`--node-labels`, `--register-with-taints`, `--max-pods`); the class's
//!   user data comes first (its MIME parts, or itself as one shell-script part).
//! - **AL2023**: a MIME multipart whose last part is a `nodeadm` `NodeConfig`
//!   (`application/node.eks.aws`); the class's parts come first, so nodeadm merges Karpenter's
//!   settings over them.
//! - **Bottlerocket**: TOML; the class's TOML is parsed and Karpenter's `settings.kubernetes`
//!   keys (cluster, max pods) override it, labels and taints are merged into its tables.
//! - **Custom**: the class's user data verbatim.
//!
//! Pure: no I/O. Limitation: the Bottlerocket merge understands `[table]` headers and
//! `key = value` lines (what Bottlerocket settings use), not inline tables spanning lines or
//! arrays of tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::prelude::{Engine as _, BASE64_STANDARD};

mod bottlerocket;
mod kubelet;

pub use kubelet::KubeletArgs;

use super::ami::ResolvedImage;
use crate::model::nodepool::AmiSelectorTerm;
use crate::model::taints::Taint;

/// The MIME boundary Karpenter uses.
pub const BOUNDARY: &str = "//";

/// What the bootstrap needs, independent of the family.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bootstrap {
    /// Cluster name.
    pub cluster_name: String,
    /// API server endpoint (`https://…`).
    pub endpoint: String,
    /// Cluster CA bundle, base64 (as in the kubeconfig's `certificate-authority-data`).
    pub ca_bundle: String,
    /// Service CIDR (AL2023 `cluster.cidr`), when known.
    pub service_cidr: Option<String>,
    /// The kubelet's `clusterDNS` (the class's list, else the cluster's DNS service IP; empty
    /// when neither is known). AL2023's NodeConfig carries every entry (nodeadm writes the whole
    /// kubelet configuration); AL2's `--dns-cluster-ip` and Bottlerocket's `cluster-dns-ip` take
    /// the first (`aws v1.14.1: pkg/providers/amifamily/bootstrap/{nodeadm,eksbootstrap,
    /// bottlerocket}.go`).
    pub cluster_dns: Vec<String>,
    /// Node labels to register with (already filtered to what the kubelet may set).
    pub labels: BTreeMap<String, String>,
    /// Taints to register with (taints and startup taints).
    pub taints: Vec<Taint>,
    /// `--max-pods`.
    pub max_pods: Option<i64>,
    /// The class's other kubelet settings (reservations, evictions, image GC, CFS quota).
    pub kubelet: KubeletArgs,
    /// The class's own `userData`.
    pub custom: Option<String>,
    /// `instanceStorePolicy: RAID0`: the instance-store disks become one array for the node's
    /// ephemeral storage (AL2 `--local-disks raid0`, AL2023 `instance.localStorage.strategy`,
    /// Bottlerocket's `000-mount-instance-storage` bootstrap command; `aws v1.14.1:
    /// pkg/providers/amifamily/bootstrap/{eksbootstrap,nodeadm,bottlerocket}.go`).
    pub instance_store_raid0: bool,
    /// Bottlerocket: the AMI binds the ephemeral storage to its default paths itself (v1.46.0
    /// on, [`supports_default_bind`]); older ones are given the paths (`EnableDefaultMountPaths`).
    pub default_mount_paths: bool,
}

/// The Bottlerocket version of a class's AMIs (`aws v1.14.1:
/// pkg/providers/amifamily/bottlerocket.go` `resolveAMIVersion`): the version of an alias term
/// (`bottlerocket@v1.46.0` → `v1.46.0`, `@latest` → `latest`), else the `vX.Y…` part of a name
/// term, else of the name of the image an id term selects, else of the first resolved image
/// whose name says `bottlerocket`; empty when none says.
pub fn bottlerocket_version(terms: &[AmiSelectorTerm], images: &[ResolvedImage]) -> String {
    // `bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a` → `v1.46.0`.
    let of_name = |name: &str| {
        name.split('-')
            .find(|part| part.starts_with('v') && part.contains('.'))
            .map(str::to_string)
    };
    let bottlerocket_name = |image: &ResolvedImage| {
        image
            .name
            .as_deref()
            .filter(|n| n.contains("bottlerocket"))
            .and_then(of_name)
    };
    let alias = terms.iter().find_map(|t| {
        let (_, version) = t.alias.as_deref()?.split_once('@')?;
        (!version.contains('@')).then(|| version.to_string())
    });
    alias
        .or_else(|| terms.iter().find_map(|t| of_name(t.name.as_deref()?)))
        .or_else(|| {
            terms.iter().find_map(|t| {
                let id = t.id.as_deref()?;
                images
                    .iter()
                    .filter(|i| i.id == id)
                    .find_map(bottlerocket_name)
            })
        })
        .or_else(|| images.iter().find_map(bottlerocket_name))
        .unwrap_or_default()
}

/// Whether a Bottlerocket version binds ephemeral storage to its default paths (`aws v1.14.1:
/// pkg/providers/version/version.go` `SupportsDefaultBind`): `latest`, or `[v]X.Y.Z` from
/// 1.46 on; anything else (empty, `1.46`, not numbers) does not.
pub fn supports_default_bind(version: &str) -> bool {
    if version == "latest" {
        return true;
    }
    let parts: Vec<&str> = version.trim_start_matches('v').split('.').collect();
    if parts.len() < 3 {
        return false;
    }
    match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(major), Ok(minor)) => major > 1 || (major == 1 && minor >= 46),
        _ => false,
    }
}

/// The user-data dialect of an AMI family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Amazon Linux 2: bootstrap.sh.
    Al2,
    /// Amazon Linux 2023: nodeadm.
    Al2023,
    /// Bottlerocket: TOML.
    Bottlerocket,
    /// Custom: the class's user data only.
    Custom,
    /// Windows Server 2019/2022/2025: PowerShell running `Start-EKSBootstrap.ps1`.
    Windows,
}

impl Family {
    /// From a class's `amiFamily` (`AL2`, `AL2023`, `Bottlerocket`, `Custom`, `Windows2022`, …).
    pub fn parse(text: &str) -> Option<Family> {
        match text.to_ascii_lowercase().as_str() {
            "al2" | "ubuntu" => Some(Family::Al2),
            "al2023" => Some(Family::Al2023),
            "bottlerocket" => Some(Family::Bottlerocket),
            "custom" => Some(Family::Custom),
            "windows2019" | "windows2022" | "windows2025" => Some(Family::Windows),
            _ => None,
        }
    }

    /// From an alias (`al2023@latest`).
    pub fn from_alias(alias: &str) -> Option<Family> {
        Family::parse(alias.split('@').next().unwrap_or(alias))
    }
}

/// Why user data could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserDataError {
    /// The class's Bottlerocket user data is not TOML this module understands.
    #[error("userData is not valid Bottlerocket TOML (line {line}: {text})")]
    Toml {
        /// 1-based line.
        line: usize,
        /// The line.
        text: String,
    },
}

/// Whether a label goes into the user data (`--node-labels` and the like): not one in the
/// `kubernetes.io` / `k8s.io` domains or their subdomains, `node-restriction.kubernetes.io`
/// included — the NodeRestriction admission refuses those from a kubelet (`aws v1.14.1:
/// pkg/providers/amifamily/resolver.go` `RejectForbiddenLabels`, `isRestrictedLabel`;
/// launchtemplate/suite_test.go DescribeTable "should not pass any labels in restricted
/// domains"). Registration puts them on the Node; well-known ones (zone, instance type, arch)
/// the kubelet and the cloud set anyway.
pub fn kubelet_may_set(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return true;
    };
    let restricted = |d: &str| prefix == d || prefix.ends_with(&format!(".{d}"));
    !(restricted("kubernetes.io") || restricted("k8s.io"))
}

fn labels_arg(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Taints as `corev1.Taint.ToString` prints them: `key=value:Effect`, `key:Effect` without a
/// value (`aws v1.14.1: pkg/providers/amifamily/bootstrap/bootstrap.go` `nodeTaintArg`).
fn taints_arg(taints: &[Taint]) -> String {
    taints
        .iter()
        .map(|t| match t.value.as_str() {
            "" => format!("{}:{}", t.key, t.effect.as_str()),
            value => format!("{}={value}:{}", t.key, t.effect.as_str()),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn kubelet_flags(b: &Bootstrap) -> Vec<String> {
    let mut flags = Vec::new();
    if !b.labels.is_empty() {
        flags.push(format!("--node-labels={}", labels_arg(&b.labels)));
    }
    if !b.taints.is_empty() {
        flags.push(format!("--register-with-taints={}", taints_arg(&b.taints)));
    }
    flags
}

/// Renders the user data for `family`.
pub fn render(family: Family, b: &Bootstrap) -> Result<String, UserDataError> {
    match family {
        Family::Al2 => Ok(mime(
            b.custom.as_deref(),
            "text/x-shellscript; charset=\"us-ascii\"",
            &al2_script(b),
        )),
        Family::Al2023 => Ok(mime(
            b.custom.as_deref(),
            "application/node.eks.aws",
            &nodeconfig(b),
        )),
        Family::Bottlerocket => bottlerocket(b),
        // Verbatim, and empty without any: a Custom class may leave the bootstrap to its AMI
        // (`aws v1.14.1: pkg/providers/amifamily/bootstrap/custom.go` `Script` encodes
        // `aws.ToString(CustomUserData)`, "" for none; no error).
        Family::Custom => Ok(b.custom.clone().unwrap_or_default()),
        Family::Windows => Ok(windows_script(b)),
    }
}

/// The Windows bootstrap (`aws v1.14.1: pkg/providers/amifamily/bootstrap/windows.go` `Script`):
/// PowerShell, the class's user data first, then `Start-EKSBootstrap.ps1` with the kubelet
/// arguments AL2 passes (`-KubeletExtraArgs`) and the first cluster DNS address.
pub fn windows_script(b: &Bootstrap) -> String {
    let mut s = String::from("<powershell>\n");
    if let Some(custom) = b.custom.as_deref().filter(|c| !c.is_empty()) {
        let _ = writeln!(s, "{custom}");
    }
    s.push_str(
        "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n",
    );
    let _ = write!(
        s,
        "& $EKSBootstrapScriptFile -EKSClusterName '{}' -APIServerEndpoint '{}' -Base64ClusterCA '{}'",
        b.cluster_name, b.endpoint, b.ca_bundle
    );
    let args = kubelet_extra_args(b);
    if !args.is_empty() {
        let _ = write!(s, " -KubeletExtraArgs '{}'", args.join(" "));
    }
    if let Some(dns) = b.cluster_dns.first() {
        let _ = write!(s, " -DNSClusterIP '{dns}'");
    }
    s.push_str("\n</powershell>");
    s
}

/// The kubelet flags AL2's `--kubelet-extra-args` and Windows' `-KubeletExtraArgs` carry, in
/// `bootstrap.go` `kubeletExtraArgs`' order: labels and taints (quoted as Go's `%q`),
/// `--max-pods`, then the class's other kubelet settings.
fn kubelet_extra_args(b: &Bootstrap) -> Vec<String> {
    let mut extra = kubelet_flags(b)
        .into_iter()
        .map(|f| match f.split_once('=') {
            Some((k, v)) => format!("{k}=\"{v}\""),
            None => f,
        })
        .collect::<Vec<_>>();
    if let Some(n) = b.max_pods {
        extra.push(format!("--max-pods={n}"));
    }
    extra.extend(b.kubelet.al2_flags());
    extra
}

/// Whether a cluster DNS address is IPv4; anything else makes AL2's bootstrap IPv6 (`aws v1.14.1:
/// pkg/providers/amifamily/bootstrap/eksbootstrap.go` `isIPv6`: `ParseIP(…).To4() == nil`).
fn is_ipv4(dns: &str) -> bool {
    match dns.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => true,
        Ok(std::net::IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_some(),
        Err(_) => false,
    }
}

/// The AL2 bootstrap script.
pub fn al2_script(b: &Bootstrap) -> String {
    let mut s = String::from(
        "#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n",
    );
    let _ = write!(
        s,
        "/etc/eks/bootstrap.sh '{}' --apiserver-endpoint '{}' --b64-cluster-ca '{}'",
        b.cluster_name, b.endpoint, b.ca_bundle
    );
    if let Some(dns) = b.cluster_dns.first() {
        if !is_ipv4(dns) {
            s.push_str(" \\\n--ip-family ipv6");
        }
        let _ = write!(s, " \\\n--dns-cluster-ip '{dns}'");
    }
    if b.max_pods.is_some() {
        s.push_str(" \\\n--use-max-pods false");
    }
    let extra = kubelet_extra_args(b);
    if !extra.is_empty() {
        let _ = write!(s, " \\\n--kubelet-extra-args '{}'", extra.join(" "));
    }
    if b.instance_store_raid0 {
        s.push_str(" \\\n--local-disks raid0");
    }
    s.push('\n');
    s
}

/// The AL2023 `NodeConfig` (YAML), as `nodeadm.go` `getNodeConfigYAML` writes it: the object
/// marshalled through `sigs.k8s.io/yaml` (every mapping's keys sorted, empty structs as `{}`),
/// the taints in the kubelet config's `registerWithTaints`, the labels as the one flag
/// (`--node-labels="…"`, Go's `%q`) — byte for byte `launchtemplate/testdata/
/// al2023_userdata_unmerged.golden`'s shape.
pub fn nodeconfig(b: &Bootstrap) -> String {
    let mut s = String::from(
        "# Karpenter Generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nmetadata: {}\nspec:\n  cluster:\n",
    );
    let _ = writeln!(s, "    apiServerEndpoint: {}", b.endpoint);
    let _ = writeln!(s, "    certificateAuthority: {}", b.ca_bundle);
    if let Some(cidr) = &b.service_cidr {
        let _ = writeln!(s, "    cidr: {cidr}");
    }
    let _ = writeln!(s, "    name: {}", b.cluster_name);
    s.push_str("  containerd: {}\n  instance:\n");
    if b.instance_store_raid0 {
        s.push_str("    localStorage:\n      strategy: RAID0\n");
    } else {
        s.push_str("    localStorage: {}\n");
    }
    s.push_str("  kubelet:\n    config:\n");
    // nodeadm's kubelet config is a JSON map: its keys come out sorted (`nodeadm.go`
    // `generateInlineKubeletConfiguration`).
    let mut config = b.kubelet.nodeadm_entries();
    if !b.cluster_dns.is_empty() {
        let list: String = b
            .cluster_dns
            .iter()
            .map(|dns| format!("\n      - {}", kubelet::yaml_scalar(dns)))
            .collect();
        config.push(("clusterDNS", list));
    }
    if let Some(n) = b.max_pods {
        config.push(("maxPods", format!(" {n}")));
    }
    config.push(("registerWithTaints", register_with_taints(&b.taints)));
    config.sort_by_key(|(key, _)| *key);
    for (key, value) in config {
        let _ = writeln!(s, "      {key}:{value}");
    }
    if !b.labels.is_empty() {
        let _ = writeln!(
            s,
            "    flags:\n    - --node-labels={:?}",
            labels_arg(&b.labels)
        );
    }
    s
}

/// The kubelet config's `registerWithTaints` (a marshalled `[]corev1.Taint`: `effect`, `key`,
/// `value` when set; `null` when there are none).
fn register_with_taints(taints: &[Taint]) -> String {
    if taints.is_empty() {
        return " null".into();
    }
    let mut out = String::new();
    for t in taints {
        let _ = write!(out, "\n      - effect: {}", t.effect.as_str());
        let _ = write!(out, "\n        key: {}", kubelet::yaml_scalar(&t.key));
        if !t.value.is_empty() {
            let _ = write!(out, "\n        value: {}", kubelet::yaml_scalar(&t.value));
        }
    }
    out
}

/// A MIME part: its headers (keys as Go's `textproto` canonicalises them, in the order read)
/// and its body.
type Part = (Vec<(String, String)>, String);

const CONTENT_TYPE: &str = "Content-Type";

/// `textproto.CanonicalMIMEHeaderKey`: `content-transfer-encoding` → `Content-Transfer-Encoding`.
fn canonical_header_key(key: &str) -> String {
    let mut upper = true;
    key.trim()
        .chars()
        .map(|c| {
            let c = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            upper = c == '-';
            c
        })
        .collect()
}

fn content_type(headers: &[(String, String)]) -> Option<&str> {
    headers
        .iter()
        .find(|(k, _)| k == CONTENT_TYPE)
        .map(|(_, v)| v.as_str())
}

/// The MIME parts of a class's user data: its parts if it is MIME multipart, else itself as one
/// part (a shell script, or a NodeConfig if it looks like one); each as its `Content-Type`
/// (`text/plain` when it has none) and body.
pub fn mime_parts(custom: &str) -> Vec<(String, String)> {
    mime_archive(custom)
        .into_iter()
        .map(|(headers, body)| {
            let kind = content_type(&headers).unwrap_or("text/plain").to_string();
            (kind, body)
        })
        .collect()
}

/// [`mime_parts`] with every header of each part.
fn mime_archive(custom: &str) -> Vec<Part> {
    let boundary = custom.lines().find_map(|l| {
        let l = l.trim();
        let lower = l.to_ascii_lowercase();
        if !lower.starts_with("content-type:") || !lower.contains("multipart/") {
            return None;
        }
        let at = lower.find("boundary=")? + "boundary=".len();
        Some(l[at..].trim().trim_matches('"').to_string())
    });
    let Some(boundary) = boundary else {
        let kind = if custom.contains("kind: NodeConfig") {
            "application/node.eks.aws"
        } else {
            "text/x-shellscript; charset=\"us-ascii\""
        };
        return vec![(
            vec![(CONTENT_TYPE.to_string(), kind.to_string())],
            custom.to_string(),
        )];
    };
    let delimiter = format!("--{boundary}");
    let mut parts = Vec::new();
    for chunk in custom.split(&delimiter).skip(1) {
        if chunk.starts_with("--") {
            break;
        }
        let chunk = chunk.trim_start_matches(['\r', '\n']);
        let (headers, body) = match chunk.find("\n\n") {
            Some(i) => (&chunk[..i], &chunk[i + 2..]),
            None => match chunk.find("\r\n\r\n") {
                Some(i) => (&chunk[..i], &chunk[i + 4..]),
                None => continue,
            },
        };
        let headers = headers
            .lines()
            .filter_map(|h| {
                let (k, v) = h.split_once(':')?;
                Some((canonical_header_key(k), v.trim().to_string()))
            })
            .collect();
        // The line break before the next delimiter is the delimiter's (Go's `multipart`).
        let body = body
            .strip_suffix("\r\n")
            .or_else(|| body.strip_suffix('\n'))
            .unwrap_or(body);
        parts.push((headers, body.to_string()));
    }
    parts
}

/// The parts a class's `userData` gives a MIME user data: its parts when it starts as a MIME
/// archive (`MIME-Version:` or `Content-Type:`), else itself as one part — on AL2 a shell
/// script (`aws v1.14.1: pkg/providers/amifamily/bootstrap/eksbootstrap.go` `mimeify`), on
/// AL2023 (`nodeadm`) a NodeConfig when it reads as a YAML mapping (or as nothing: Go's
/// `yaml.Unmarshal` into a map accepts a null document), else a shell script (`nodeadm.go`
/// `parseUserData`).
///
/// An archive's parts keep every header on AL2 (`eksbootstrap.go` `copyCustomUserDataParts`:
/// `writer.CreatePart(p.Header)`, so a `Content-Transfer-Encoding: base64` part stays decodable)
/// and only their `Content-Type` on AL2023 (`mime/mime.go` `NewArchive`: an `Entry` is a
/// content type and a content; a part without one gets an empty `Content-Type`).
fn class_parts(custom: &str, nodeadm: bool) -> Vec<Part> {
    let one = |kind: &str| vec![(CONTENT_TYPE.to_string(), kind.to_string())];
    let head = custom.trim_start();
    if head.starts_with("MIME-Version:") || head.starts_with("Content-Type:") {
        let parts = mime_archive(custom);
        if !nodeadm {
            return parts;
        }
        return parts
            .into_iter()
            .map(|(headers, body)| (one(content_type(&headers).unwrap_or("")), body))
            .collect();
    }
    let node_config = nodeadm
        && serde_saphyr::from_str::<serde_json::Value>(custom)
            .is_ok_and(|v| v.is_object() || v.is_null());
    let kind = if node_config {
        "application/node.eks.aws"
    } else {
        "text/x-shellscript; charset=\"us-ascii\""
    };
    vec![(one(kind), custom.to_string())]
}

/// A MIME multipart: the class's parts first ([`class_parts`]), then Karpenter's. Each part's
/// headers are written sorted by key, as Go's `multipart.Writer.CreatePart` writes them.
fn mime(custom: Option<&str>, kind: &str, body: &str) -> String {
    let nodeadm = kind == "application/node.eks.aws";
    // An empty `userData` adds no part (`eksbootstrap.go` `Script`: `lo.Compact`; `nodeadm.go`
    // `parseUserData`: `userData == ""`).
    let mut parts = custom
        .filter(|c| !c.is_empty())
        .map(|c| class_parts(c, nodeadm))
        .unwrap_or_default();
    // The class's parts verbatim, each followed by the delimiter's line break (Go's
    // `multipart.Writer`, `mime.Archive.Serialize`); Karpenter's ends in one line break.
    parts.push((
        vec![(CONTENT_TYPE.to_string(), kind.to_string())],
        format!("{}\n", body.trim_end()),
    ));
    let mut s =
        format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"{BOUNDARY}\"\n\n");
    for (mut headers, body) in parts {
        headers.sort_by(|a, b| a.0.cmp(&b.0));
        let _ = writeln!(s, "--{BOUNDARY}");
        for (k, v) in headers {
            let _ = writeln!(s, "{k}: {v}");
        }
        let _ = write!(s, "\n{body}\n");
    }
    let _ = writeln!(s, "--{BOUNDARY}--");
    s
}

fn toml_string(v: &str) -> String {
    let mut s = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// A tiny TOML document: table → key → raw value (as written), in order of first appearance.
type TomlDoc = Vec<(String, Vec<(String, String)>)>;

fn toml_set(doc: &mut TomlDoc, table: &str, key: &str, value: String) {
    let i = match doc.iter().position(|(t, _)| t == table) {
        Some(i) => i,
        None => {
            doc.push((table.to_string(), Vec::new()));
            doc.len() - 1
        }
    };
    let entries = &mut doc[i].1;
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 = value,
        None => entries.push((key.to_string(), value)),
    }
}

fn parse_toml(text: &str) -> Result<TomlDoc, UserDataError> {
    let mut doc: TomlDoc = Vec::new();
    let mut table = String::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = || UserDataError::Toml {
            line: n + 1,
            text: t.to_string(),
        };
        if let Some(h) = t.strip_prefix('[') {
            if h.starts_with('[') {
                return Err(bad());
            }
            table = h.strip_suffix(']').ok_or_else(bad)?.trim().to_string();
            if !doc.iter().any(|(name, _)| *name == table) {
                doc.push((table.clone(), Vec::new()));
            }
            continue;
        }
        let (k, v) = t.split_once('=').ok_or_else(bad)?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            return Err(bad());
        }
        toml_set(&mut doc, &table, k, v.to_string());
    }
    Ok(doc)
}

/// Bottlerocket settings TOML, merged over the class's.
pub fn bottlerocket(b: &Bootstrap) -> Result<String, UserDataError> {
    let kl = &b.kubelet;
    // The class's kubelet maps replace the user's tables whole (`bottlerocket.go` `Script`).
    let maps = [
        ("system-reserved", &kl.system_reserved),
        ("kube-reserved", &kl.kube_reserved),
        ("eviction-hard", &kl.eviction_hard),
        ("eviction-soft", &kl.eviction_soft),
        ("eviction-soft-grace-period", &kl.eviction_soft_grace_period),
    ];
    let replaced: Vec<&str> = maps
        .iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(table, _)| *table)
        .collect();
    let mut doc = match &b.custom {
        Some(c) => bottlerocket::as_karpenter_reads_it(parse_toml(c)?, &replaced),
        None => Vec::new(),
    };
    let k8s = "settings.kubernetes";
    toml_set(&mut doc, k8s, "api-server", toml_string(&b.endpoint));
    toml_set(
        &mut doc,
        k8s,
        "cluster-certificate",
        toml_string(&b.ca_bundle),
    );
    toml_set(&mut doc, k8s, "cluster-name", toml_string(&b.cluster_name));
    if let Some(dns) = b.cluster_dns.first() {
        toml_set(&mut doc, k8s, "cluster-dns-ip", toml_string(dns));
    }
    if let Some(n) = b.max_pods {
        toml_set(&mut doc, k8s, "max-pods", n.to_string());
    }
    // The class's kubelet settings (`bottlerocket.go` `Script`; no pods-per-core there).
    for (table, map) in maps {
        for (k, v) in map {
            let table = format!("{k8s}.{table}");
            toml_set(&mut doc, &table, &toml_string(k), toml_string(v));
        }
    }
    if let Some(n) = kl.eviction_max_pod_grace_period {
        toml_set(
            &mut doc,
            k8s,
            "eviction-max-pod-grace-period",
            n.to_string(),
        );
    }
    if let Some(n) = kl.image_gc_high_threshold_percent {
        let n = toml_string(&n.to_string());
        toml_set(&mut doc, k8s, "image-gc-high-threshold-percent", n);
    }
    if let Some(n) = kl.image_gc_low_threshold_percent {
        let n = toml_string(&n.to_string());
        toml_set(&mut doc, k8s, "image-gc-low-threshold-percent", n);
    }
    if let Some(q) = kl.cpu_cfs_quota {
        toml_set(&mut doc, k8s, "cpu-cfs-quota-enforced", q.to_string());
    }
    for (k, v) in &b.labels {
        toml_set(
            &mut doc,
            "settings.kubernetes.node-labels",
            &toml_string(k),
            toml_string(v),
        );
    }
    let mut taints: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for t in &b.taints {
        taints.entry(&t.key).or_default().push(toml_string(&format!(
            "{}:{}",
            t.value,
            t.effect.as_str()
        )));
    }
    for (k, vs) in taints {
        toml_set(
            &mut doc,
            "settings.kubernetes.node-taints",
            &toml_string(k),
            format!("[{}]", vs.join(", ")),
        );
    }
    if b.instance_store_raid0 {
        let table = "settings.bootstrap-commands.000-mount-instance-storage";
        let mut bind = vec!["apiclient", "ephemeral-storage", "bind"];
        if !b.default_mount_paths {
            bind.extend([
                "--dirs",
                "/var/lib/containerd",
                "/var/lib/kubelet",
                "/var/log/pods",
            ]);
        }
        let list = |words: &[&str]| {
            let words: Vec<String> = words.iter().map(|w| toml_string(w)).collect();
            format!("[{}]", words.join(", "))
        };
        let commands = format!(
            "[{}, {}]",
            list(&["apiclient", "ephemeral-storage", "init"]),
            list(&bind)
        );
        toml_set(&mut doc, table, "commands", commands);
        toml_set(&mut doc, table, "mode", toml_string("always"));
        toml_set(&mut doc, table, "essential", "true".into());
    }
    let mut s = String::new();
    for (table, entries) in doc {
        if table.is_empty() {
            for (k, v) in entries {
                let _ = writeln!(s, "{k} = {v}");
            }
            continue;
        }
        if !s.is_empty() {
            s.push('\n');
        }
        let _ = writeln!(s, "[{table}]");
        for (k, v) in entries {
            let _ = writeln!(s, "{k} = {v}");
        }
    }
    Ok(s)
}

/// Standard base64 with padding (EC2 user data).
pub fn base64_encode(data: &[u8]) -> String {
    BASE64_STANDARD.encode(data)
}

/// Standard base64 decoding as EC2 hands user data back: whitespace ignored, padding optional;
/// `None` on bad input.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(compact).ok()
}

#[cfg(test)]
mod its3;
#[cfg(test)]
mod line_by_line;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::taints::Effect;

    fn sample() -> Bootstrap {
        Bootstrap {
            cluster_name: "test-cluster".into(),
            endpoint: "https://example.eks.amazonaws.com".into(),
            ca_bundle: "Q0E=".into(),
            service_cidr: None,
            cluster_dns: Vec::new(),
            labels: [
                ("karpenter.sh/capacity-type", "on-demand"),
                ("karpenter.sh/nodepool", "default"),
                ("team", "a"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            taints: vec![Taint::new("dedicated", "gpu", Effect::NoSchedule)],
            max_pods: Some(58),
            kubelet: KubeletArgs::default(),
            custom: None,
            instance_store_raid0: false,
            default_mount_paths: false,
        }
    }

    /// aws v1.14.1 `launchtemplate/suite_test.go` "AL2023 › Kubelet" DescribeTable "should
    /// specify kubelet configuration fields" (systemReserved, kubeReserved, evictionHard,
    /// evictionSoft, evictionSoftGracePeriod, evictionMaxPodGracePeriod, podsPerCore,
    /// imageGC thresholds, cpuCFSQuota: each read back from the NodeConfig's kubelet config) and
    /// "should pass evictionSoftGracePeriod values when specified" (`1m0s`); the same settings as
    /// Bottlerocket's (`bottlerocket.go` `Script`: no pods-per-core, image GC as strings,
    /// `cpu-cfs-quota-enforced`) and AL2's `--kubelet-extra-args`.
    #[test]
    fn the_class_kubelet_settings_reach_every_family() {
        let mut b = sample();
        b.kubelet = KubeletArgs::from_spec(Some(&serde_json::json!({
            "systemReserved": {"cpu": "100m", "pid": "1000"},
            "kubeReserved": {"memory": "1Gi"},
            "evictionHard": {"memory.available": "5%"},
            "evictionSoftGracePeriod": {"memory.available": "1m"},
            "evictionSoft": {"memory.available": "10%"},
            "evictionMaxPodGracePeriod": 300,
            "podsPerCore": 2,
            "imageGCHighThresholdPercent": 85,
            "imageGCLowThresholdPercent": 80,
            "cpuCFSQuota": true
        })));
        let config = nodeconfig(&b);
        let want = "  kubelet:\n    config:\n      cpuCFSQuota: true\n      evictionHard:\n        memory.available: 5%\n      evictionMaxPodGracePeriod: 300\n      evictionSoft:\n        memory.available: 10%\n      evictionSoftGracePeriod:\n        memory.available: 1m0s\n      imageGCHighThresholdPercent: 85\n      imageGCLowThresholdPercent: 80\n      kubeReserved:\n        memory: 1Gi\n      maxPods: 58\n      podsPerCore: 2\n      registerWithTaints:\n      - effect: NoSchedule\n        key: dedicated\n        value: gpu\n      systemReserved:\n        cpu: 100m\n        pid: \"1000\"\n    flags:\n";
        assert!(config.contains(want), "{config}");
        let al2 = al2_script(&b);
        assert!(
            al2.contains("--max-pods=58 --pods-per-core=2 --system-reserved=\"cpu=100m,pid=1000\" --kube-reserved=\"memory=1Gi\" --eviction-hard=\"memory.available<5%\""),
            "{al2}"
        );
        let toml = bottlerocket(&b).unwrap();
        for line in [
            "[settings.kubernetes.system-reserved]\n\"cpu\" = \"100m\"\n\"pid\" = \"1000\"\n",
            "[settings.kubernetes.eviction-soft-grace-period]\n\"memory.available\" = \"1m0s\"\n",
            "eviction-max-pod-grace-period = 300\n",
            "image-gc-high-threshold-percent = \"85\"\n",
            "cpu-cfs-quota-enforced = true\n",
        ] {
            assert!(toml.contains(line), "{line} in {toml}");
        }
        assert!(!toml.contains("pods-per-core"), "{toml}");
    }

    #[test]
    fn al2_golden() {
        let got = render(Family::Al2, &sample()).unwrap();
        let want = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n/etc/eks/bootstrap.sh 'test-cluster' --apiserver-endpoint 'https://example.eks.amazonaws.com' --b64-cluster-ca 'Q0E=' \\\n--use-max-pods false \\\n--kubelet-extra-args '--node-labels=\"karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default,team=a\" --register-with-taints=\"dedicated=gpu:NoSchedule\" --max-pods=58'\n\n--//--\n";
        assert_eq!(got, want);
    }

    /// `aws v1.14.1: pkg/providers/amifamily/bootstrap/mime/suite_test.go` "should successfully
    /// parse a valid MIME archive" (two parts, their types and contents: `test_data/nodeconfig.txt`
    /// and `shell.txt` exactly) and "should
    /// successfully serialize a MIME archive" (byte for byte `test_data/mime_valid.txt`): a class's
    /// archive holding the NodeConfig, merged before a shell-script part, renders exactly
    /// upstream's archive of the two.
    #[test]
    fn mime_archives_parse_and_serialize_as_upstreams() {
        let nodeconfig = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: test-cluster\n    apiServerEndpoint: https://example.com\n    certificateAuthority: ca-bundle\n    cidr: 10.100.0.0/16\n  kubelet:\n    config:\n      maxPods: 42\n      systemReserved:\n        cpu: 100m\n        memory: 100Mi\n        ephemeral-storage: 1Gi\n    flags:\n      - --node-labels \"foo=bar\"\n  containerd:\n    config: |\n      [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      discard_unpacked_layers = false\n";
        let shell = "#!/bin/bash\necho \"I'm a shell script!\"\n";
        let header = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n";
        let valid = format!(
            "{header}--//\nContent-Type: application/node.eks.aws\n\n{nodeconfig}\n--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n{shell}\n--//--\n"
        );
        assert_eq!(
            mime_parts(&valid),
            [
                (
                    "application/node.eks.aws".to_string(),
                    nodeconfig.to_string()
                ),
                (
                    "text/x-shellscript; charset=\"us-ascii\"".to_string(),
                    shell.to_string()
                ),
            ]
        );
        let class_archive = format!(
            "{header}--//\nContent-Type: application/node.eks.aws\n\n{nodeconfig}\n--//--\n"
        );
        assert_eq!(
            mime(
                Some(&class_archive),
                "text/x-shellscript; charset=\"us-ascii\"",
                shell
            ),
            valid
        );
    }

    /// A class's `userData` that is no MIME archive is one part: on AL2 a shell script
    /// (`eksbootstrap.go` `mimeify`); on AL2023 a NodeConfig when it reads as a YAML mapping —
    /// whatever its kind, a `#cloud-config` too — or as an empty document, else a shell script
    /// (`nodeadm.go` `parseUserData`). An archive must start as one (`MIME-Version:` /
    /// `Content-Type:`); its parts are kept verbatim.
    #[test]
    fn a_class_user_data_is_typed_as_its_family_reads_it() {
        let shell = "text/x-shellscript; charset=\"us-ascii\"";
        let node = "application/node.eks.aws";
        for (custom, al2023) in [
            ("#!/bin/bash\necho hello\n", shell),
            (
                "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n",
                node,
            ),
            ("#cloud-config\nruncmd: [echo hi]\n", node),
            ("#!/bin/bash\n# only a comment\n", node),
        ] {
            assert_eq!(
                class_parts(custom, true),
                [(
                    vec![(CONTENT_TYPE.to_string(), al2023.to_string())],
                    custom.to_string()
                )],
                "{custom}"
            );
            assert_eq!(
                class_parts(custom, false),
                [(
                    vec![(CONTENT_TYPE.to_string(), shell.to_string())],
                    custom.to_string()
                )],
                "{custom}"
            );
        }
        // A part without a final line break is kept so: the delimiter brings its own.
        let got = mime(Some("echo hi"), shell, "#!/bin/bash\n");
        assert!(got.contains("\n\necho hi\n--//\n"), "{got}");
    }

    /// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "should specify clusterDNS when
    /// running in an ipv6 cluster" / "… ipv4 cluster" (AL2023's NodeConfig `clusterDNS`),
    /// Bottlerocket "should pass ClusterDNSIP when discovered" (`cluster-dns-ip`), and AL2's
    /// `--ip-family ipv6` before `--dns-cluster-ip` for an IPv6 address (`eksbootstrap.go`
    /// `eksBootstrapScript`, `isIPv6`).
    #[test]
    fn the_cluster_dns_reaches_every_family_and_an_ipv6_one_makes_al2_ipv6() {
        let mut b = sample();
        for (dns, ipv6) in [
            ("fd4b:121b:812b::a", true),
            ("10.0.100.10", false),
            ("::ffff:10.0.100.10", false),
            ("not-an-ip", true),
        ] {
            b.cluster_dns = vec![dns.into()];
            let al2 = al2_script(&b);
            let family = if ipv6 { " \\\n--ip-family ipv6" } else { "" };
            assert!(
                al2.contains(&format!(
                    "--b64-cluster-ca 'Q0E='{family} \\\n--dns-cluster-ip '{dns}' \\\n--use-max-pods false"
                )),
                "{dns}: {al2}"
            );
            assert!(nodeconfig(&b).contains(&format!(
                "  kubelet:\n    config:\n      clusterDNS:\n      - {dns}\n      maxPods: 58\n"
            )));
            let toml = render(Family::Bottlerocket, &b).unwrap();
            assert!(
                toml.contains(&format!("cluster-dns-ip = \"{dns}\"")),
                "{toml}"
            );
        }
        b.cluster_dns.clear();
        assert!(!al2_script(&b).contains("--ip-family"));
        assert!(!nodeconfig(&b).contains("clusterDNS"));
    }

    /// Several cluster DNS addresses (the class's `kubelet.clusterDNS: [10.0.100.10, 10.0.100.11]`):
    /// nodeadm marshals the whole kubelet configuration into the NodeConfig (`aws v1.14.1:
    /// pkg/providers/amifamily/bootstrap/nodeadm.go` `generateInlineKubeletConfiguration`), so
    /// AL2023 lists every address in order, as in `launchtemplate/suite_test.go` "should specify
    /// clusterDNS when running in an ipv4 cluster" and the `clusterDNS` Entry of "should pass
    /// kubelet configuration fields" (read back with `ExpectParseNodeConfigKubeletField`); AL2's
    /// `--dns-cluster-ip` (`eksbootstrap.go`) and Bottlerocket's `cluster-dns-ip`
    /// (`bottlerocket.go`) take `ClusterDNS[0]` only.
    #[test]
    fn al2023_lists_every_cluster_dns_address_and_al2_and_bottlerocket_take_the_first() {
        let mut b = sample();
        b.cluster_dns = vec!["10.0.100.10".into(), "10.0.100.11".into()];
        assert!(nodeconfig(&b).contains(
            "  kubelet:\n    config:\n      clusterDNS:\n      - 10.0.100.10\n      - 10.0.100.11\n      maxPods: 58\n"
        ));
        let al2 = al2_script(&b);
        assert!(al2.contains("--dns-cluster-ip '10.0.100.10' \\\n"), "{al2}");
        assert!(!al2.contains("10.0.100.11"), "{al2}");
        let toml = render(Family::Bottlerocket, &b).unwrap();
        assert!(toml.contains("cluster-dns-ip = \"10.0.100.10\""), "{toml}");
        assert!(!toml.contains("10.0.100.11"), "{toml}");
    }

    #[test]
    fn al2_merges_the_class_script_first() {
        let mut b = sample();
        b.custom = Some("#!/bin/bash\necho hello\n".into());
        let got = render(Family::Al2, &b).unwrap();
        let hello = got.find("echo hello").unwrap();
        let boot = got.find("/etc/eks/bootstrap.sh").unwrap();
        assert!(hello < boot);
        assert_eq!(mime_parts(&got).len(), 2);
        // A MIME class user data keeps its parts.
        b.custom = Some(got);
        assert_eq!(mime_parts(&render(Family::Al2, &b).unwrap()).len(), 3);
    }

    /// aws v1.14.1 `launchtemplate/testdata/al2023_userdata_unmerged.golden` (its `%s`
    /// placeholders filled with a class and a pool name): the same bytes.
    #[test]
    fn al2023_matches_upstreams_unmerged_golden() {
        let b = super::its3::suite_world();
        let want = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n# Karpenter Generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nmetadata: {}\nspec:\n  cluster:\n    apiServerEndpoint: https://test-cluster\n    certificateAuthority: Y2EtYnVuZGxlCg==\n    cidr: 10.100.0.0/16\n    name: test-cluster\n  containerd: {}\n  instance:\n    localStorage: {}\n  kubelet:\n    config:\n      clusterDNS:\n      - 10.0.100.10\n      maxPods: 110\n      registerWithTaints:\n      - effect: NoExecute\n        key: karpenter.sh/unregistered\n    flags:\n    - --node-labels=\"karpenter.k8s.aws/ec2nodeclass=default,karpenter.sh/capacity-type=on-demand,karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default,testing/cluster=unspecified\"\n\n--//--\n";
        assert_eq!(render(Family::Al2023, &b).unwrap(), want);
    }

    #[test]
    fn al2023_golden() {
        let got = render(Family::Al2023, &sample()).unwrap();
        let want = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n# Karpenter Generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nmetadata: {}\nspec:\n  cluster:\n    apiServerEndpoint: https://example.eks.amazonaws.com\n    certificateAuthority: Q0E=\n    name: test-cluster\n  containerd: {}\n  instance:\n    localStorage: {}\n  kubelet:\n    config:\n      maxPods: 58\n      registerWithTaints:\n      - effect: NoSchedule\n        key: dedicated\n        value: gpu\n    flags:\n    - --node-labels=\"karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default,team=a\"\n\n--//--\n";
        assert_eq!(got, want);
    }

    #[test]
    fn al2023_class_nodeconfig_comes_first() {
        let mut b = sample();
        b.custom = Some("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n".into());
        let got = render(Family::Al2023, &b).unwrap();
        let parts = mime_parts(&got);
        assert_eq!(parts.len(), 2);
        assert!(parts[0].1.contains("shutdownGracePeriod"));
        assert!(parts[1].1.contains("maxPods: 58"));
    }

    #[test]
    fn bottlerocket_golden_and_merge() {
        let got = render(Family::Bottlerocket, &sample()).unwrap();
        let want = "[settings.kubernetes]\napi-server = \"https://example.eks.amazonaws.com\"\ncluster-certificate = \"Q0E=\"\ncluster-name = \"test-cluster\"\nmax-pods = 58\n\n[settings.kubernetes.node-labels]\n\"karpenter.sh/capacity-type\" = \"on-demand\"\n\"karpenter.sh/nodepool\" = \"default\"\n\"team\" = \"a\"\n\n[settings.kubernetes.node-taints]\n\"dedicated\" = [\"gpu:NoSchedule\"]\n";
        assert_eq!(got, want);
        let mut b = sample();
        b.custom = Some(
            "[settings.kubernetes]\nmax-pods = 10\nimage-gc-high-threshold-percent = 85\n[settings.host-containers.admin]\nenabled = true\n"
                .into(),
        );
        let got = render(Family::Bottlerocket, &b).unwrap();
        assert!(got.contains("max-pods = 58"), "{got}");
        assert!(!got.contains("max-pods = 10"));
        assert!(got.contains("image-gc-high-threshold-percent = 85"));
        assert!(got.contains("[settings.host-containers.admin]\nenabled = true"));
        b.custom = Some("[[bad]]".into());
        assert!(render(Family::Bottlerocket, &b).is_err());
    }

    /// `instanceStorePolicy: RAID0` in each family's user data (`aws v1.14.1:
    /// pkg/providers/launchtemplate/suite_test.go` "should specify --local-disks raid0 when
    /// instance-store policy is set on AL2", "should specify RAID0 bootstrap-command … on
    /// Bottlerocket", "should merge bootstrap-commands …", "should use explicit directories for
    /// Bottlerocket v1.45.0", "should use default bind for Bottlerocket v1.46.0"; the AL2023
    /// NodeConfig's `localStorage`; `bootstrap/bottlerocket_test.go` "should use the configured
    /// flag value").
    #[test]
    fn raid0_mounts_the_instance_store_in_every_family() {
        let mut b = sample();
        for family in [Family::Al2, Family::Al2023, Family::Bottlerocket] {
            let got = render(family, &b).unwrap();
            assert!(
                !got.contains("raid0")
                    && !got.contains("RAID0")
                    && !got.contains("ephemeral-storage"),
                "{got}"
            );
        }
        b.instance_store_raid0 = true;
        // After the kubelet arguments, as Karpenter writes it.
        assert!(render(Family::Al2, &b)
            .unwrap()
            .contains("--max-pods=58' \\\n--local-disks raid0\n"));
        assert!(render(Family::Al2023, &b)
            .unwrap()
            .contains("    name: test-cluster\n  containerd: {}\n  instance:\n    localStorage:\n      strategy: RAID0\n  kubelet:\n"));
        let explicit = "[settings.bootstrap-commands.000-mount-instance-storage]\ncommands = [[\"apiclient\", \"ephemeral-storage\", \"init\"], [\"apiclient\", \"ephemeral-storage\", \"bind\", \"--dirs\", \"/var/lib/containerd\", \"/var/lib/kubelet\", \"/var/log/pods\"]]\nmode = \"always\"\nessential = true\n";
        assert!(render(Family::Bottlerocket, &b)
            .unwrap()
            .ends_with(explicit));
        b.default_mount_paths = true;
        let default = "[settings.bootstrap-commands.000-mount-instance-storage]\ncommands = [[\"apiclient\", \"ephemeral-storage\", \"init\"], [\"apiclient\", \"ephemeral-storage\", \"bind\"]]\nmode = \"always\"\nessential = true\n";
        assert!(render(Family::Bottlerocket, &b).unwrap().ends_with(default));
        // The class's own bootstrap commands are kept beside it.
        b.custom = Some("[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n".into());
        let got = render(Family::Bottlerocket, &b).unwrap();
        assert!(got.contains("[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n"), "{got}");
        assert!(got.contains(default), "{got}");
    }

    /// `aws v1.14.1: pkg/providers/amifamily/bottlerocket_test.go` Describe "resolveAMIVersion"
    /// (6 Its).
    #[test]
    fn the_bottlerocket_version_comes_from_the_class_terms_then_its_images() {
        let term = |f: &dyn Fn(&mut AmiSelectorTerm)| {
            let mut t = AmiSelectorTerm {
                alias: None,
                id: None,
                name: None,
                owner: None,
                tags: BTreeMap::new(),
                ssm_parameter: None,
            };
            f(&mut t);
            t
        };
        let image = |id: &str, name: &str| ResolvedImage {
            id: id.into(),
            name: Some(name.into()),
            architecture: "amd64".into(),
            creation_date: None,
            deprecated: false,
            requirements: Vec::new(),
        };
        let alias = |a: &str| term(&|t| t.alias = Some(a.into()));
        // "should resolve version from alias", "should resolve latest from alias".
        assert_eq!(
            bottlerocket_version(&[alias("bottlerocket@v1.46.0")], &[]),
            "v1.46.0"
        );
        assert_eq!(
            bottlerocket_version(&[alias("bottlerocket@latest")], &[]),
            "latest"
        );
        // "should resolve version from name".
        let name =
            term(&|t| t.name = Some("bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a".into()));
        assert_eq!(bottlerocket_version(&[name], &[]), "v1.46.0");
        // "should resolve version from ID with resolved AMI".
        let id = term(&|t| t.id = Some("ami-12345".into()));
        let images = [image(
            "ami-12345",
            "bottlerocket-aws-k8s-1.33-x86_64-v1.47.0-abc123",
        )];
        assert_eq!(bottlerocket_version(&[id], &images), "v1.47.0");
        // "should resolve version from resolved AMI fallback".
        let tags = term(&|t| t.tags = [("Environment".to_string(), "prod".to_string())].into());
        let images = [image(
            "ami-67890",
            "bottlerocket-aws-k8s-1.30-arm64-v2.0.1-def456",
        )];
        assert_eq!(
            bottlerocket_version(std::slice::from_ref(&tags), &images),
            "v2.0.1"
        );
        // "should return empty when no version found".
        let other = term(&|t| t.name = Some("some-other-ami".into()));
        assert_eq!(bottlerocket_version(&[other], &[]), "");
        // (ours) an image whose name does not say bottlerocket gives no version.
        assert_eq!(
            bottlerocket_version(&[tags], &[image("ami-1", "my-v1.50.0-build")]),
            ""
        );
    }

    /// `aws v1.14.1: pkg/providers/version/version_test.go` DescribeTable "SupportsDefaultBind"
    /// (13 Entries).
    #[test]
    fn default_bind_from_bottlerocket_1_46() {
        for (version, want) in [
            ("1.45.0", false),
            ("1.46.0", true),
            ("1.47.0", true),
            ("2.0.0", true),
            ("v1.45.0", false),
            ("v1.46.0", true),
            ("1.9.0", false),
            ("latest", true),
            ("invalid", false),
            ("1", false),
            ("", false),
            ("1.46", false),
            ("abc.def.ghi", false),
        ] {
            assert_eq!(supports_default_bind(version), want, "{version:?}");
        }
    }

    #[test]
    fn custom_is_verbatim_even_empty_and_restricted_labels_are_not_kubelet_flags() {
        let mut b = sample();
        // No user data: an empty one, as Custom's `Script` (aws v1.14.1 bootstrap/custom.go).
        assert_eq!(render(Family::Custom, &b).unwrap(), "");
        b.custom = Some("x".into());
        assert_eq!(render(Family::Custom, &b).unwrap(), "x");
        assert!(kubelet_may_set("karpenter.sh/nodepool"));
        assert!(kubelet_may_set("team"));
        assert!(!kubelet_may_set("topology.kubernetes.io/zone"));
        assert!(!kubelet_may_set("node.kubernetes.io/instance-type"));
        assert!(!kubelet_may_set("node-restriction.kubernetes.io/x"));
        assert_eq!(Family::from_alias("al2023@latest"), Some(Family::Al2023));
        assert_eq!(Family::parse("Bottlerocket"), Some(Family::Bottlerocket));
    }

    #[test]
    fn base64_round_trips() {
        for s in ["", "a", "ab", "abc", "abcd", "hello world\n"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).unwrap(), s.as_bytes());
        }
        assert_eq!(base64_encode(b"CA"), "Q0E=");
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
    }
}
