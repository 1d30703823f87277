//! What Karpenter keeps of a class's Bottlerocket TOML before it writes its own settings over it
//! (`aws v1.14.1: pkg/providers/amifamily/bootstrap/bottlerocketsettings.go`
//! `BottlerocketConfig.UnmarshalTOML` / `MarshalTOML`, `bottlerocket.go` `Script`):
//!
//! - only the `settings` table survives (the config has no other field);
//! - `settings.kubernetes` is decoded into the typed `BottlerocketKubernetes`: a key it does not
//!   name (`"unknown-setting"`, a `[settings.kubernetes.labels]` table) is dropped (logged
//!   upstream as "Unknown parameter in userData K8s settings");
//! - `node-taints` is always replaced by the NodeClaim's taints (`NodeTaints = map{}` then
//!   filled), and each kubelet map the class sets (`systemReserved`, `kubeReserved`,
//!   `evictionHard`, `evictionSoft`, `evictionSoftGracePeriod`) replaces the user's table whole;
//! - every other `settings.*` table is kept as written (`SettingsRaw`).
//!
//! `launchtemplate/testdata/br_userdata_input.golden` → `br_userdata_merged.golden` shows all
//! four.

use super::TomlDoc;

/// `BottlerocketKubernetes`' TOML keys holding a value (scalars and lists).
const KUBERNETES_VALUES: [&str; 39] = [
    "api-server",
    "cloud-provider",
    "cluster-certificate",
    "cluster-name",
    "cluster-dns-ip",
    "max-pods",
    "eviction-max-pod-grace-period",
    "allowed-unsafe-sysctls",
    "server-tls-bootstrap",
    "registry-qps",
    "registry-burst",
    "event-qps",
    "event-burst",
    "kube-api-qps",
    "kube-api-burst",
    "container-log-max-size",
    "container-log-max-files",
    "cpu-manager-policy",
    "cpu-manager-policy-options",
    "cpu-manager-reconcile-period",
    "memory-manager-policy",
    "topology-manager-scope",
    "topology-manager-policy",
    "image-gc-high-threshold-percent",
    "image-gc-low-threshold-percent",
    "ids-per-pod",
    "cpu-cfs-quota-enforced",
    "shutdown-grace-period",
    "shutdown-grace-period-for-critical-pods",
    "cluster-domain",
    "seccomp-default",
    "pod-pids-limit",
    "device-ownership-from-security-context",
    "single-process-oom-kill",
    "container-log-max-workers",
    "container-log-monitor-interval",
    "hostname-override-source",
    "log-level",
    // An inline `node-taints = {…}` is a value of the map field; it is replaced all the same.
    "node-taints",
];

/// `BottlerocketKubernetes`' TOML keys holding a table (maps and structs).
const KUBERNETES_TABLES: [&str; 10] = [
    "credential-providers",
    "node-labels",
    "node-taints",
    "static-pods",
    "eviction-hard",
    "eviction-soft",
    "eviction-soft-grace-period",
    "kube-reserved",
    "system-reserved",
    "topology-manager-policy-options",
];

/// A dotted TOML path's segments, unquoted (`settings."kubernetes"` → `settings`, `kubernetes`).
fn segments(path: &str) -> Vec<String> {
    if path.is_empty() {
        return Vec::new();
    }
    path.split('.').map(unquote).collect()
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['"', '\'']).to_string()
}

/// Whether `key` (as written) of table `table` survives, `replaced` naming the
/// `settings.kubernetes` tables Karpenter writes whole.
fn kept(table: &[String], key: &str, replaced: &[&str]) -> bool {
    let name = |i: usize| table.get(i).map(String::as_str);
    match (name(0), name(1), name(2)) {
        // A root key: only a dotted `settings.…` one reaches the `settings` field.
        (None, _, _) => segments(key).first().is_some_and(|s| s == "settings"),
        (Some("settings"), Some("kubernetes"), None) => {
            let key = unquote(key);
            let known = KUBERNETES_VALUES.contains(&key.as_str())
                || KUBERNETES_TABLES.contains(&key.as_str());
            known && key != "node-taints" && !replaced.contains(&key.as_str())
        }
        (Some("settings"), _, _) => true,
        _ => false,
    }
}

/// The class's TOML as Karpenter reads it back before writing its settings (module doc).
pub(super) fn as_karpenter_reads_it(doc: TomlDoc, replaced: &[&str]) -> TomlDoc {
    doc.into_iter()
        .filter_map(|(table, entries)| {
            let path = segments(&table);
            if !kept_table(&path, replaced) {
                return None;
            }
            let entries = entries
                .into_iter()
                .filter(|(k, _)| kept(&path, k, replaced))
                .collect();
            Some((table, entries))
        })
        .collect()
}

/// Whether a table header survives at all (its own path, not its keys).
fn kept_table(path: &[String], replaced: &[&str]) -> bool {
    match path {
        [first, ..] if first != "settings" => false,
        [_, k8s, sub, ..] if k8s == "kubernetes" => {
            KUBERNETES_TABLES.contains(&sub.as_str())
                && sub != "node-taints"
                && !replaced.contains(&sub.as_str())
        }
        _ => true,
    }
}
