//! Well-known label keys, their normalisation, and the restrictions Karpenter applies to them.

/// The NodePool that owns a node (v1beta1+).
pub const NODEPOOL: &str = "karpenter.sh/nodepool";
/// The Provisioner that owns a node (v1alpha5).
pub const PROVISIONER_NAME: &str = "karpenter.sh/provisioner-name";
/// `on-demand`, `spot` or `reserved`.
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// The EC2NodeClass of a node (v1beta1+).
pub const EC2NODECLASS: &str = "karpenter.k8s.aws/ec2nodeclass";
/// Zone.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// Region.
pub const REGION: &str = "topology.kubernetes.io/region";
/// Zone ID.
pub const ZONE_ID: &str = "topology.k8s.aws/zone-id";
/// Instance type.
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
/// CPU architecture.
pub const ARCH: &str = "kubernetes.io/arch";
/// Operating system.
pub const OS: &str = "kubernetes.io/os";
/// Hostname (one domain per node).
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// Windows build.
pub const WINDOWS_BUILD: &str = "node.kubernetes.io/windows-build";
/// AWS instance category (`c`, `m`, `r`, …).
pub const INSTANCE_CATEGORY: &str = "karpenter.k8s.aws/instance-category";
/// AWS instance family (`m5`, `c6a`, …).
pub const INSTANCE_FAMILY: &str = "karpenter.k8s.aws/instance-family";
/// AWS instance generation (`5`, `6`, …).
pub const INSTANCE_GENERATION: &str = "karpenter.k8s.aws/instance-generation";
/// AWS instance size (`large`, `2xlarge`, …).
pub const INSTANCE_SIZE: &str = "karpenter.k8s.aws/instance-size";
/// GPU count.
pub const INSTANCE_GPU_COUNT: &str = "karpenter.k8s.aws/instance-gpu-count";
/// Accelerator count.
pub const INSTANCE_ACCELERATOR_COUNT: &str = "karpenter.k8s.aws/instance-accelerator-count";

/// The AWS provider's well-known instance labels (KARPENTER.md §2.2), allowed to be undefined on
/// the node side when scheduling.
pub const AWS_WELL_KNOWN: &[&str] = &[
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    EC2NODECLASS,
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    INSTANCE_CATEGORY,
    "karpenter.k8s.aws/instance-hypervisor",
    INSTANCE_FAMILY,
    INSTANCE_GENERATION,
    "karpenter.k8s.aws/instance-local-nvme",
    INSTANCE_SIZE,
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    INSTANCE_GPU_COUNT,
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    INSTANCE_ACCELERATOR_COUNT,
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
];

/// Whether `key` is a well-known label: the scheduler lets it be undefined on a NodePool
/// (the instance type decides it) — `WellKnownLabels` in Karpenter.
pub fn is_well_known(key: &str) -> bool {
    matches!(
        key,
        NODEPOOL
            | ZONE
            | REGION
            | INSTANCE_TYPE
            | ARCH
            | OS
            | CAPACITY_TYPE
            | WINDOWS_BUILD
            | ZONE_ID
    ) || AWS_WELL_KNOWN.contains(&key)
}

/// Maps deprecated beta label keys to their GA names (Karpenter's `NormalizedLabels`).
pub fn normalize_key(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => ZONE,
        "failure-domain.beta.kubernetes.io/region" => REGION,
        "beta.kubernetes.io/arch" => ARCH,
        "beta.kubernetes.io/os" => OS,
        "beta.kubernetes.io/instance-type" => INSTANCE_TYPE,
        other => other,
    }
}

/// Why a label key may not be used in a NodePool's labels or requirements, if it may not
/// (v1 CEL rules and runtime validation, KARPENTER.md §1.5; `kubernetes.io` is still restricted
/// as in Karpenter ≤ v1.8 and all earlier generations, except its exempt sub-domains).
pub fn restricted_reason(key: &str) -> Option<&'static str> {
    let key = normalize_key(key);
    if key == HOSTNAME {
        return Some("kubernetes.io/hostname is set per node and cannot be required");
    }
    if key == NODEPOOL || key == PROVISIONER_NAME {
        return Some("the owning NodePool label is set by Karpenter");
    }
    if is_well_known(key) {
        return None;
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    let in_domain = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    if in_domain("karpenter.sh") {
        return Some("the karpenter.sh domain is reserved for Karpenter");
    }
    if in_domain("karpenter.k8s.aws") {
        return Some(
            "the karpenter.k8s.aws domain is reserved for the AWS provider's well-known labels",
        );
    }
    let exempt = [
        "kops.k8s.io",
        "node.kubernetes.io",
        "node-restriction.kubernetes.io",
    ];
    if (in_domain("kubernetes.io") || in_domain("k8s.io")) && !exempt.iter().any(|d| in_domain(d)) {
        return Some("the kubernetes.io and k8s.io domains are reserved");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_beta_keys_and_restricts_domains() {
        assert_eq!(
            normalize_key("failure-domain.beta.kubernetes.io/zone"),
            ZONE
        );
        assert_eq!(normalize_key("beta.kubernetes.io/arch"), ARCH);
        assert_eq!(normalize_key("team"), "team");
        assert!(is_well_known(INSTANCE_CATEGORY));
        assert!(!is_well_known("team"));
        assert!(restricted_reason(HOSTNAME).is_some());
        assert!(restricted_reason("karpenter.sh/foo").is_some());
        assert!(restricted_reason(CAPACITY_TYPE).is_none());
        assert!(restricted_reason("karpenter.k8s.aws/foo").is_some());
        assert!(restricted_reason("example.kubernetes.io/x").is_some());
        assert!(restricted_reason("node.kubernetes.io/role").is_none());
        assert!(restricted_reason("eks-immersion-team").is_none());
    }
}
