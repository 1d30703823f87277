//! The EC2NodeClass's `spec.kubelet` as each bootstrap passes it to the kubelet (`aws v1.14.1:
//! pkg/providers/amifamily/bootstrap/bootstrap.go` `kubeletExtraArgs` for AL2, `nodeadm.go`
//! `generateInlineKubeletConfiguration` for AL2023, `bottlerocket.go` `Script`). `clusterDNS` and
//! `maxPods` have their own fields on [`super::Bootstrap`]; everything else is here, so a node
//! launched by this tool reserves what the plan assumed it reserves.

use std::collections::BTreeMap;

use serde_json::Value;

/// The kubelet settings of a class beyond `clusterDNS` and `maxPods`, as written in its spec.
/// Maps are kept sorted by key (upstream walks Go maps, in no set order, for AL2's flags).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KubeletArgs {
    /// `podsPerCore`.
    pub pods_per_core: Option<i64>,
    /// `systemReserved`, values as written.
    pub system_reserved: BTreeMap<String, String>,
    /// `kubeReserved`, values as written.
    pub kube_reserved: BTreeMap<String, String>,
    /// `evictionHard`.
    pub eviction_hard: BTreeMap<String, String>,
    /// `evictionSoft`.
    pub eviction_soft: BTreeMap<String, String>,
    /// `evictionSoftGracePeriod`, as Go prints a `metav1.Duration` (`1m` → `1m0s`).
    pub eviction_soft_grace_period: BTreeMap<String, String>,
    /// `evictionMaxPodGracePeriod`.
    pub eviction_max_pod_grace_period: Option<i64>,
    /// `imageGCHighThresholdPercent`.
    pub image_gc_high_threshold_percent: Option<i64>,
    /// `imageGCLowThresholdPercent`.
    pub image_gc_low_threshold_percent: Option<i64>,
    /// `cpuCFSQuota`.
    pub cpu_cfs_quota: Option<bool>,
}

impl KubeletArgs {
    /// From a class's `spec.kubelet` (JSON, as read); anything absent or of another shape is
    /// left out (the input's validation has refused it before a launch).
    pub fn from_spec(kubelet: Option<&Value>) -> KubeletArgs {
        let Some(k) = kubelet else {
            return KubeletArgs::default();
        };
        let map = |key: &str| -> BTreeMap<String, String> {
            k.get(key)
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let v = match v {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            };
                            (k.clone(), v)
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let int = |key: &str| k.get(key).and_then(Value::as_i64);
        KubeletArgs {
            pods_per_core: int("podsPerCore"),
            system_reserved: map("systemReserved"),
            kube_reserved: map("kubeReserved"),
            eviction_hard: map("evictionHard"),
            eviction_soft: map("evictionSoft"),
            eviction_soft_grace_period: map("evictionSoftGracePeriod")
                .into_iter()
                .map(|(k, v)| {
                    let printed = crate::model::time::parse_go_duration(&v)
                        .map(crate::model::time::format_go_duration)
                        .unwrap_or(v);
                    (k, printed)
                })
                .collect(),
            eviction_max_pod_grace_period: int("evictionMaxPodGracePeriod"),
            image_gc_high_threshold_percent: int("imageGCHighThresholdPercent"),
            image_gc_low_threshold_percent: int("imageGCLowThresholdPercent"),
            cpu_cfs_quota: k.get("cpuCFSQuota").and_then(Value::as_bool),
        }
    }

    /// AL2's `--kubelet-extra-args` after `--max-pods`, in `kubeletExtraArgs`' order; map
    /// entries joined `k<sep>v` with `,`, quoted as Go's `%q`.
    pub fn al2_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(n) = self.pods_per_core {
            out.push(format!("--pods-per-core={n}"));
        }
        let joined = |name: &str, m: &BTreeMap<String, String>, sep: &str| {
            (!m.is_empty()).then(|| {
                let list: Vec<String> = m.iter().map(|(k, v)| format!("{k}{sep}{v}")).collect();
                format!("{name}={:?}", list.join(","))
            })
        };
        out.extend(joined("--system-reserved", &self.system_reserved, "="));
        out.extend(joined("--kube-reserved", &self.kube_reserved, "="));
        out.extend(joined("--eviction-hard", &self.eviction_hard, "<"));
        out.extend(joined("--eviction-soft", &self.eviction_soft, "<"));
        out.extend(joined(
            "--eviction-soft-grace-period",
            &self.eviction_soft_grace_period,
            "=",
        ));
        if let Some(n) = self.eviction_max_pod_grace_period {
            out.push(format!("--eviction-max-pod-grace-period={n}"));
        }
        if let Some(n) = self.image_gc_high_threshold_percent {
            out.push(format!("--image-gc-high-threshold={n}"));
        }
        if let Some(n) = self.image_gc_low_threshold_percent {
            out.push(format!("--image-gc-low-threshold={n}"));
        }
        if let Some(b) = self.cpu_cfs_quota {
            out.push(format!("--cpu-cfs-quota={b}"));
        }
        out
    }

    /// AL2023's `kubelet.config` entries (YAML lines at `indent`), each under its
    /// KubeletConfiguration key; `clusterDNS` and `maxPods` are written by the caller at their
    /// sorted places (nodeadm's config is a JSON map, so its keys come out sorted).
    pub fn nodeadm_entries(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = Vec::new();
        let map = |m: &BTreeMap<String, String>| {
            m.iter()
                .map(|(k, v)| format!("\n        {}: {}", yaml_scalar(k), yaml_scalar(v)))
                .collect::<String>()
        };
        let mut put_map = |key: &'static str, m: &BTreeMap<String, String>| {
            if !m.is_empty() {
                out.push((key, map(m)));
            }
        };
        put_map("evictionHard", &self.eviction_hard);
        put_map("evictionSoft", &self.eviction_soft);
        put_map("evictionSoftGracePeriod", &self.eviction_soft_grace_period);
        put_map("kubeReserved", &self.kube_reserved);
        put_map("systemReserved", &self.system_reserved);
        if let Some(b) = self.cpu_cfs_quota {
            out.push(("cpuCFSQuota", format!(" {b}")));
        }
        for (key, value) in [
            (
                "evictionMaxPodGracePeriod",
                self.eviction_max_pod_grace_period,
            ),
            (
                "imageGCHighThresholdPercent",
                self.image_gc_high_threshold_percent,
            ),
            (
                "imageGCLowThresholdPercent",
                self.image_gc_low_threshold_percent,
            ),
            ("podsPerCore", self.pods_per_core),
        ] {
            if let Some(n) = value {
                out.push((key, format!(" {n}")));
            }
        }
        out
    }
}

/// A string as a YAML scalar: plain when it reads back as that string (a leading `:` followed
/// by no space is plain in block context, as `::ffff:10.0.0.1`), else double-quoted (a value
/// such as `"1000"` must stay a string in a `map[string]string`).
pub(super) fn yaml_scalar(s: &str) -> String {
    let safe_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '%' | ':'));
    let first_ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | ':'));
    let looks_typed = s.parse::<f64>().is_ok()
        || matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
        )
        || s.starts_with("0x")
        || s.starts_with("0o");
    if safe_chars && first_ok && !looks_typed {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> KubeletArgs {
        KubeletArgs::from_spec(Some(&serde_json::from_str(json).unwrap()))
    }

    /// aws v1.14.1 `bootstrap/bootstrap.go` `kubeletExtraArgs` (launchtemplate `suite_test.go`
    /// "AL2 › Kubelet Args": "should specify --system-reserved when overriding system reserved
    /// values", "--kube-reserved …", "--eviction-hard …", "--eviction-soft …", "should specify
    /// --pods-per-core", "--image-gc-high-threshold", "--cpu-cfs-quota", …): each setting as
    /// its flag, maps `k=v` (evictions `k<v`) joined and quoted, durations as Go prints them.
    #[test]
    fn al2_flags_follow_kubelet_extra_args() {
        let a = args(
            r#"{"podsPerCore": 2, "systemReserved": {"memory": "100Mi", "cpu": "100m"}, "kubeReserved": {"cpu": "200m"},
                "evictionHard": {"memory.available": "5%"}, "evictionSoft": {"nodefs.available": "10%"},
                "evictionSoftGracePeriod": {"nodefs.available": "1m"}, "evictionMaxPodGracePeriod": 60,
                "imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80, "cpuCFSQuota": false}"#,
        );
        assert_eq!(
            a.al2_flags(),
            [
                "--pods-per-core=2",
                "--system-reserved=\"cpu=100m,memory=100Mi\"",
                "--kube-reserved=\"cpu=200m\"",
                "--eviction-hard=\"memory.available<5%\"",
                "--eviction-soft=\"nodefs.available<10%\"",
                "--eviction-soft-grace-period=\"nodefs.available=1m0s\"",
                "--eviction-max-pod-grace-period=60",
                "--image-gc-high-threshold=85",
                "--image-gc-low-threshold=80",
                "--cpu-cfs-quota=false",
            ]
        );
        assert!(KubeletArgs::from_spec(None).al2_flags().is_empty());
    }

    /// Values that YAML would read as numbers or booleans are quoted; the rest stay plain.
    #[test]
    fn yaml_scalars_stay_strings() {
        assert_eq!(yaml_scalar("100Mi"), "100Mi");
        assert_eq!(yaml_scalar("5%"), "5%");
        assert_eq!(yaml_scalar("memory.available"), "memory.available");
        assert_eq!(yaml_scalar("1000"), "\"1000\"");
        assert_eq!(yaml_scalar("0.5"), "\"0.5\"");
        assert_eq!(yaml_scalar("true"), "\"true\"");
        assert_eq!(yaml_scalar(""), "\"\"");
        assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
    }
}
