//! Every label, annotation, taint, finalizer and EC2 tag key the tool reads or writes (one place,
//! so no module spells one itself), the normalisation of well-known labels, and the restrictions
//! Karpenter applies to them.

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
/// The EBS CSI driver's zone topology key (volumes' node affinity), normalised to [`ZONE`].
pub const EBS_CSI_ZONE: &str = "topology.ebs.csi.aws.com/zone";
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
/// vCPUs.
pub const INSTANCE_CPU: &str = "karpenter.k8s.aws/instance-cpu";
/// CPU manufacturer (`intel`, `amd`, `aws`).
pub const INSTANCE_CPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-cpu-manufacturer";
/// Sustained clock speed, MHz.
pub const INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ: &str =
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz";
/// Memory, MiB.
pub const INSTANCE_MEMORY: &str = "karpenter.k8s.aws/instance-memory";
/// EBS bandwidth, Mbps.
pub const INSTANCE_EBS_BANDWIDTH: &str = "karpenter.k8s.aws/instance-ebs-bandwidth";
/// Network bandwidth, Mbps.
pub const INSTANCE_NETWORK_BANDWIDTH: &str = "karpenter.k8s.aws/instance-network-bandwidth";
/// Local NVMe storage, GiB.
pub const INSTANCE_LOCAL_NVME: &str = "karpenter.k8s.aws/instance-local-nvme";
/// Whether the type is a flex type.
pub const INSTANCE_CAPABILITY_FLEX: &str = "karpenter.k8s.aws/instance-capability-flex";
/// GPU name.
pub const INSTANCE_GPU_NAME: &str = "karpenter.k8s.aws/instance-gpu-name";
/// GPU manufacturer.
pub const INSTANCE_GPU_MANUFACTURER: &str = "karpenter.k8s.aws/instance-gpu-manufacturer";
/// GPU memory, MiB.
pub const INSTANCE_GPU_MEMORY: &str = "karpenter.k8s.aws/instance-gpu-memory";
/// Accelerator name.
pub const INSTANCE_ACCELERATOR_NAME: &str = "karpenter.k8s.aws/instance-accelerator-name";
/// Accelerator manufacturer.
pub const INSTANCE_ACCELERATOR_MANUFACTURER: &str =
    "karpenter.k8s.aws/instance-accelerator-manufacturer";
/// Hypervisor (`nitro`, `xen`).
pub const INSTANCE_HYPERVISOR: &str = "karpenter.k8s.aws/instance-hypervisor";
/// Whether in-transit encryption is supported.
pub const INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED: &str =
    "karpenter.k8s.aws/instance-encryption-in-transit-supported";
/// Tenancy (`default`, `dedicated`).
pub const INSTANCE_TENANCY: &str = "karpenter.k8s.aws/instance-tenancy";
/// Capacity reservation id.
pub const CAPACITY_RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";
/// Capacity reservation type.
pub const CAPACITY_RESERVATION_TYPE: &str = "karpenter.k8s.aws/capacity-reservation-type";
/// Whether a capacity reservation can be interrupted.
pub const CAPACITY_RESERVATION_INTERRUPTIBLE: &str =
    "karpenter.k8s.aws/capacity-reservation-interruptible";
/// On a node whose kubelet registered its taints: Karpenter's registration does not sync the
/// NodeClaim's (`core v1.14.1: pkg/apis/v1/labels.go` `NodeDoNotSyncTaintsLabelKey`).
pub const DO_NOT_SYNC_TAINTS: &str = "karpenter.sh/do-not-sync-taints";
/// Placement group id.
pub const PLACEMENT_GROUP_ID: &str = "karpenter.k8s.aws/placement-group-id";
/// Placement group partition.
pub const PLACEMENT_GROUP_PARTITION: &str = "karpenter.k8s.aws/placement-group-partition";

/// The NodeClaim of a node or instance (label, EC2 tag).
pub const NODECLAIM: &str = "karpenter.sh/nodeclaim";
/// Set once the node registered (label).
pub const REGISTERED: &str = "karpenter.sh/registered";
/// Set once the node is initialized (label).
pub const INITIALIZED: &str = "karpenter.sh/initialized";
/// When a v1alpha5 node became empty (annotation; v0.31 emptiness counts from it).
pub const EMPTINESS_TIMESTAMP: &str = "karpenter.sh/emptiness-timestamp";
/// The EC2 tag Karpenter sets on resources it manages (v1beta1).
pub const MANAGED_BY: &str = "karpenter.sh/managed-by";
/// EKS's cluster-name tag, set on every instance.
pub const EKS_CLUSTER_NAME_TAG: &str = "eks:eks-cluster-name";
/// What every cluster-ownership tag key starts with (v1 CEL: `startsWith('kubernetes.io/cluster')`).
pub const CLUSTER_TAG_PREFIX: &str = "kubernetes.io/cluster";

/// The ownership tag key of a cluster's resources (`kubernetes.io/cluster/NAME`).
pub fn cluster_tag(cluster: &str) -> String {
    format!("{CLUSTER_TAG_PREFIX}/{cluster}")
}

/// Pod annotation (v1beta1+): do not disrupt the node this pod runs on.
pub const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";
/// Kubernetes' pod deletion cost annotation, which Karpenter also reads for a pod's eviction
/// cost (`core: pkg/utils/disruption/disruption.go EvictionCost`).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// The v1alpha5 spelling of [`DO_NOT_DISRUPT`].
pub const DO_NOT_EVICT: &str = "karpenter.sh/do-not-evict";
/// Cluster Autoscaler's pod annotation; Karpenter reads it nowhere (core v1.14.1 has no such key).
pub const CA_SAFE_TO_EVICT: &str = "cluster-autoscaler.kubernetes.io/safe-to-evict";
/// NodePool template hash (NodePool, NodeClaim; docs/karpenter.md §2.3).
pub const NODEPOOL_HASH: &str = "karpenter.sh/nodepool-hash";
/// The hash algorithm's version.
pub const NODEPOOL_HASH_VERSION: &str = "karpenter.sh/nodepool-hash-version";
/// Whether the scheduler relaxed a NodeClaim's `minValues` (`"true"`/`"false"`; NodeClaim, and
/// the Node at registration; core v1.14.1 `pkg/apis/v1/labels.go`).
pub const NODECLAIM_MIN_VALUES_RELAXED: &str = "karpenter.sh/nodeclaim-min-values-relaxed";
/// EC2NodeClass spec hash (EC2NodeClass, NodeClaim).
pub const NODECLASS_HASH: &str = "karpenter.k8s.aws/ec2nodeclass-hash";
/// The hash algorithm's version.
pub const NODECLASS_HASH_VERSION: &str = "karpenter.k8s.aws/ec2nodeclass-hash-version";
/// Karpenter's v1.x annotation asking not to voluntarily disrupt a NodeClaim.
pub const VOLUNTARY_DISRUPTION: &str = "karpenter.sh/voluntary-disruption";
/// `kubectl rollout restart`'s pod-template annotation.
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

/// The taint Karpenter v1 puts on a node it is disrupting.
pub const DISRUPTED_TAINT: &str = "karpenter.sh/disrupted";
/// The v1beta1 disruption taint (value `disrupting`).
pub const DISRUPTION_TAINT: &str = "karpenter.sh/disruption";
/// The v1beta1 disruption taint's value.
pub const DISRUPTION_TAINT_VALUE: &str = "disrupting";
/// The cordon taint.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";
/// The taint (`NoExecute`) a v1 node registers with and Karpenter's registration removes
/// (`core v1.14.1: pkg/apis/v1/taints.go` `UnregisteredNoExecuteTaint`).
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";
/// Karpenter's finalizer on NodeClaims and nodes.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";

/// The operator lease's annotation naming the holder's command (docs/spec.md §10).
pub const LEASE_COMMAND: &str = "kubectl-karpenter.io/command";
/// This tool's EC2 tag on instances and launch templates it created.
pub const TOOL_TAG: &str = "kubectl-karpenter.io/launched-by";
/// This tool's launch-template record tag (`NAME;ami=…;maxPods=…`).
pub const TEMPLATE_TAG: &str = "kubectl-karpenter.io/launch-template";
/// This tool's record of the NodePool template an instance was launched from (EC2 tag, node
/// annotation).
pub const TEMPLATE_RECORD_TAG: &str = "kubectl-karpenter.io/nodepool-template";
/// Offline: the node's current AMI, when no instance facts or NodeClaim `status.imageID` say.
pub const IMAGE_ID_ANNOTATION: &str = "kubectl-karpenter.io/image-id";
/// Offline: the node's subnet, when no instance facts say.
pub const SUBNET_ANNOTATION: &str = "kubectl-karpenter.io/subnet-id";
/// Offline: the node's security groups (comma-separated), when no instance facts say.
pub const SECURITY_GROUPS_ANNOTATION: &str = "kubectl-karpenter.io/security-group-ids";
/// When this tool first saw a node empty (annotation, RFC 3339).
pub const EMPTY_SINCE: &str = "kubectl-karpenter.io/empty-since";
/// The label this tool marks drifted nodes with.
pub const DRIFTED_LABEL: &str = "kubectl-karpenter.io/drifted";
/// The annotation linking a drifted node and its replacement.
pub const REPLACEMENT: &str = "kubectl-karpenter.io/replacement";

/// The values the NodePool validation controller knows for a key (`core v1.14.1:
/// pkg/apis/v1/labels.go` `WellKnownValuesForRequirements`; aws v1.14.1 `pkg/apis/v1/labels.go`
/// adds `instance-tenancy`). `ValidateRequirement` refuses an `In` naming none of them, on a
/// NodePool and on a pending pod alike.
pub fn known_values(key: &str) -> Option<&'static [&'static str]> {
    use super::instance_type::{ON_DEMAND, RESERVED, SPOT};
    match key {
        CAPACITY_TYPE => Some(&[ON_DEMAND, SPOT, RESERVED]),
        INSTANCE_TENANCY => Some(&["dedicated", "default"]),
        _ => None,
    }
}

/// The AWS provider's well-known instance labels (docs/karpenter.md §2.2), allowed to be undefined on
/// the node side when scheduling (`aws v1.14.1: pkg/apis/v1/labels.go` `init`, less the zone ID
/// and `windows-build`, listed in [`well_known`]). [`EC2NODECLASS`] is not one: Karpenter puts it
/// on every node, but `IsRestrictedLabel` refuses it in a pod's selector, a NodePool's labels and
/// requirements, and a NodeOverlay's requirements (only the CRDs' CEL lists let it through).
pub const AWS_WELL_KNOWN: &[&str] = &[
    INSTANCE_TENANCY,
    CAPACITY_RESERVATION_ID,
    CAPACITY_RESERVATION_TYPE,
    CAPACITY_RESERVATION_INTERRUPTIBLE,
    INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
    INSTANCE_CATEGORY,
    INSTANCE_HYPERVISOR,
    INSTANCE_FAMILY,
    INSTANCE_GENERATION,
    INSTANCE_LOCAL_NVME,
    INSTANCE_SIZE,
    INSTANCE_CPU,
    INSTANCE_CPU_MANUFACTURER,
    INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
    INSTANCE_MEMORY,
    INSTANCE_EBS_BANDWIDTH,
    INSTANCE_NETWORK_BANDWIDTH,
    INSTANCE_GPU_NAME,
    INSTANCE_GPU_MANUFACTURER,
    INSTANCE_GPU_COUNT,
    INSTANCE_GPU_MEMORY,
    INSTANCE_ACCELERATOR_NAME,
    INSTANCE_ACCELERATOR_MANUFACTURER,
    INSTANCE_ACCELERATOR_COUNT,
    INSTANCE_CAPABILITY_FLEX,
    PLACEMENT_GROUP_ID,
    PLACEMENT_GROUP_PARTITION,
];

/// Karpenter's core `WellKnownLabels` (`core v1.14.1: pkg/apis/v1/labels.go`).
pub const CORE_WELL_KNOWN: &[&str] = &[
    NODEPOOL,
    ZONE,
    REGION,
    INSTANCE_TYPE,
    ARCH,
    OS,
    CAPACITY_TYPE,
    WINDOWS_BUILD,
];

/// Every well-known label in one fixed order: core's, the zone ID, then the AWS provider's
/// ([`is_well_known`] is the fast membership test of the same set).
pub fn well_known() -> impl Iterator<Item = &'static str> {
    CORE_WELL_KNOWN
        .iter()
        .chain([ZONE_ID].iter())
        .chain(AWS_WELL_KNOWN)
        .copied()
}

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
        // The AWS provider adds the EBS CSI driver's zone key to Karpenter's NormalizedLabels
        // (`aws v1.14.1: pkg/operator/operator.go`): a PersistentVolume's affinity on it is a
        // zone requirement.
        EBS_CSI_ZONE => ZONE,
        other => other,
    }
}

/// Why a label key may not be used in a NodePool's labels or requirements, if it may not
/// (v1 CEL rules and runtime validation, docs/karpenter.md §1.5). Since Karpenter v1.10 the
/// `kubernetes.io` and `k8s.io` domains are allowed (`core: pkg/apis/v1/labels.go`
/// `RestrictedLabelDomains` is `karpenter.sh` only; `scheduling/suite_test.go` "should schedule
/// pods that have node selectors with label in the kubernetes domains" and "… in subdomain from
/// kubernetes domains"): a pool requirement on such a key labels the node.
pub fn restricted_reason(key: &str) -> Option<&'static str> {
    let key = normalize_key(key);
    if key == HOSTNAME {
        return Some("kubernetes.io/hostname is set per node and cannot be required");
    }
    if key == NODEPOOL || key == PROVISIONER_NAME {
        return Some("the owning NodePool label is set by Karpenter");
    }
    if key == EC2NODECLASS {
        return Some("the node class label is set by Karpenter from the NodePool's nodeClassRef");
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
    None
}

/// Why the v1beta1 and v1 CRDs' CEL form of the domain rule refuses `key` where
/// [`restricted_reason`] does not. The rule (`core v1.14.1: pkg/apis/crds/karpenter.sh_nodepools.yaml`,
/// `karpenter.sh_nodeclaims.yaml`, `karpenter.sh_nodeoverlays.yaml`, on labels and requirement
/// keys: `!x.find("^([^/]+)").endsWith("karpenter.sh")`, the same for `karpenter.k8s.aws`) tests
/// a plain suffix of the text before the first `/` — the whole key when it has none — so
/// `mykarpenter.sh/team` and a bare `karpenter.sh` are refused by the API server, though the
/// runtime rule (`labels.go IsRestrictedLabel`: the domain or a `.`-subdomain) lets them through.
/// The exceptions the rule lists are all in the domains proper, left to [`restricted_reason`].
pub fn cel_domain_reason(key: &str) -> Option<&'static str> {
    let (head, proper_domain) = match key.split_once('/') {
        Some((head, _)) => (head, true),
        None => (key, false),
    };
    let in_domain = |d: &str| proper_domain && (head == d || head.ends_with(&format!(".{d}")));
    if head.ends_with("karpenter.sh") && !in_domain("karpenter.sh") {
        return Some("the API server refuses a key whose domain ends with karpenter.sh (the CRD's rule is a plain suffix test)");
    }
    if head.ends_with("karpenter.k8s.aws") && !in_domain("karpenter.k8s.aws") {
        return Some("the API server refuses a key whose domain ends with karpenter.k8s.aws (the CRD's rule is a plain suffix test)");
    }
    None
}

/// Whether `key` is in the `kubernetes.io` / `k8s.io` domains that Karpenter ≤ v1.8 reserved
/// (except `kops.k8s.io`, `node.kubernetes.io`, `node-restriction.kubernetes.io`): labels there
/// on a node were put by Kubernetes or its tools, not by a template of those versions.
pub fn in_kubernetes_domains(key: &str) -> bool {
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    let in_domain = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    let exempt = [
        "kops.k8s.io",
        "node.kubernetes.io",
        "node-restriction.kubernetes.io",
    ];
    (in_domain("kubernetes.io") || in_domain("k8s.io")) && !exempt.iter().any(|d| in_domain(d))
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
        assert_eq!(normalize_key("topology.ebs.csi.aws.com/zone"), ZONE);
        assert_eq!(normalize_key("team"), "team");
        assert!(is_well_known(INSTANCE_CATEGORY));
        assert!(!is_well_known("team"));
        assert!(restricted_reason(HOSTNAME).is_some());
        assert!(restricted_reason("karpenter.sh/foo").is_some());
        assert!(restricted_reason(CAPACITY_TYPE).is_none());
        assert!(restricted_reason("karpenter.k8s.aws/foo").is_some());
        assert!(restricted_reason("example.kubernetes.io/x").is_none());
        assert!(restricted_reason("kubernetes.io/test").is_none());
        assert!(in_kubernetes_domains("example.kubernetes.io/x"));
        assert!(!in_kubernetes_domains("node.kubernetes.io/role"));
        assert!(restricted_reason("node.kubernetes.io/role").is_none());
        assert!(restricted_reason("eks-immersion-team").is_none());
        // The ordered list and the membership test are the same set.
        assert!(well_known().all(is_well_known));
        assert_eq!(well_known().count(), 9 + AWS_WELL_KNOWN.len());
    }

    /// `v1.WellKnownLabels` once the AWS provider's `init` ran (core v1.14.1
    /// `pkg/apis/v1/labels.go`, aws v1.14.1 `pkg/apis/v1/labels.go`), spelled out: 36 keys. The
    /// node class label is not among them (it was ours until s31-linereq), so `IsRestrictedLabel`
    /// refuses it: the `karpenter.k8s.aws` domain is restricted.
    #[test]
    fn well_known_labels_are_the_providers() {
        let upstream = [
            "karpenter.sh/nodepool",
            "topology.kubernetes.io/zone",
            "topology.kubernetes.io/region",
            "node.kubernetes.io/instance-type",
            "kubernetes.io/arch",
            "kubernetes.io/os",
            "karpenter.sh/capacity-type",
            "node.kubernetes.io/windows-build",
            "karpenter.k8s.aws/capacity-reservation-id",
            "karpenter.k8s.aws/capacity-reservation-type",
            "karpenter.k8s.aws/capacity-reservation-interruptible",
            "karpenter.k8s.aws/instance-hypervisor",
            "karpenter.k8s.aws/instance-encryption-in-transit-supported",
            "karpenter.k8s.aws/instance-category",
            "karpenter.k8s.aws/instance-capability-flex",
            "karpenter.k8s.aws/instance-family",
            "karpenter.k8s.aws/instance-generation",
            "karpenter.k8s.aws/instance-size",
            "karpenter.k8s.aws/instance-local-nvme",
            "karpenter.k8s.aws/instance-cpu",
            "karpenter.k8s.aws/instance-cpu-manufacturer",
            "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
            "karpenter.k8s.aws/instance-memory",
            "karpenter.k8s.aws/instance-ebs-bandwidth",
            "karpenter.k8s.aws/instance-network-bandwidth",
            "karpenter.k8s.aws/instance-gpu-name",
            "karpenter.k8s.aws/instance-gpu-manufacturer",
            "karpenter.k8s.aws/instance-gpu-count",
            "karpenter.k8s.aws/instance-gpu-memory",
            "karpenter.k8s.aws/instance-accelerator-name",
            "karpenter.k8s.aws/instance-accelerator-manufacturer",
            "karpenter.k8s.aws/instance-accelerator-count",
            "topology.k8s.aws/zone-id",
            "karpenter.k8s.aws/instance-tenancy",
            "karpenter.k8s.aws/placement-group-id",
            "karpenter.k8s.aws/placement-group-partition",
        ];
        let ours: std::collections::BTreeSet<&str> = well_known().collect();
        let theirs: std::collections::BTreeSet<&str> = upstream.into_iter().collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours.len(), 36);
        assert!(upstream.iter().all(|k| is_well_known(k)));
        // The rest of the provider's domain is restricted, the node class label included.
        assert!(!is_well_known(EC2NODECLASS));
        assert!(restricted_reason(EC2NODECLASS).is_some());
        assert!(restricted_reason("karpenter.k8s.aws/instance-pods").is_some());
    }
}
