//! AWS capacity and overhead formulas (docs/karpenter.md §6.3, `aws v1.14.1:
//! pkg/providers/instancetype/types.go`), as pure functions.
//!
//! Karpenter does not ask EC2 what a node will report: it predicts capacity and the kubelet's
//! reservations from the instance type's facts, the AMI family and the kubelet configuration, and
//! the scheduler packs pods against that prediction. A client-side planner must predict the same
//! numbers or its plans differ from what Karpenter would launch, so every formula here follows the
//! Go code, including its quirks (the ENI-limited pod count for kube-reserved memory on AL2 even
//! when `maxPods` is set; `100%` eviction meaning "disabled").
//!
//! Units: resource quantities are milli-units as everywhere in the crate (see
//! [`super::quantity`]): CPU in millicores, memory and storage in milli-bytes. Pod *counts*
//! ([`eni_limited_pods`], [`pods`]) are plain counts because they are inputs to formulas, not
//! resources; multiply by [`ONE`] to put them in a [`Resources`].

use std::collections::BTreeMap;

use super::instance_type::Overhead;
use super::nodepool::{BlockDevice, KubeletConfig};
use super::quantity::{parse_milli, GIB, MIB, ONE};
use super::resources::{Resources, CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// Karpenter's default `VM_MEMORY_OVERHEAD_PERCENT`: the share of memory the hypervisor and
/// firmware keep, which the node never reports.
pub const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;
/// Graviton instances reserve 64 MiB of CMA memory that the node cannot use.
pub const ARM64_CMA_RESERVED_MIB: i64 = 64;
/// The kubelet's own default `maxPods`, used by Windows (no ENI-limited density).
pub const WINDOWS_MAX_PODS: i64 = 110;
/// Default hard eviction threshold for memory (`memory.available<100Mi`).
pub const DEFAULT_EVICTION_MEMORY: i64 = 100 * MIB;
/// Default kube-reserved ephemeral storage.
pub const KUBE_RESERVED_EPHEMERAL_STORAGE: i64 = GIB;
/// `amifamily.DefaultEBS`: the volume size when nothing else says (20Gi).
pub const DEFAULT_EBS_VOLUME_SIZE: i64 = 20 * GIB;
/// `evictionHard` key for memory.
pub const MEMORY_AVAILABLE: &str = "memory.available";
/// `evictionHard` key for the node filesystem (ephemeral storage).
pub const NODEFS_AVAILABLE: &str = "nodefs.available";
/// The only `instanceStorePolicy` value: instance-store volumes become ephemeral storage.
pub const INSTANCE_STORE_POLICY_RAID0: &str = "RAID0";

/// NVIDIA GPUs (device plugin resource).
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
/// AMD GPUs.
pub const AMD_GPU: &str = "amd.com/gpu";
/// AWS Neuron devices (Inferentia, Trainium).
pub const AWS_NEURON: &str = "aws.amazon.com/neuron";
/// AWS Neuron cores.
pub const AWS_NEURON_CORE: &str = "aws.amazon.com/neuroncore";
/// Habana Gaudi accelerators.
pub const HABANA_GAUDI: &str = "habana.ai/gaudi";
/// EFA interfaces.
pub const EFA: &str = "vpc.amazonaws.com/efa";
/// Branch ENIs for security groups per pod.
pub const POD_ENI: &str = "vpc.amazonaws.com/pod-eni";
/// Secondary IPv4 addresses, the Windows pod-density resource.
pub const PRIVATE_IPV4_ADDRESS: &str = "vpc.amazonaws.com/PrivateIPv4Address";

/// The AMI families whose behaviour differs for capacity (`amifamily` package).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AmiFamily {
    /// Amazon Linux 2.
    Al2,
    /// Amazon Linux 2023.
    Al2023,
    /// Bottlerocket.
    Bottlerocket,
    /// Windows Server 2019.
    Windows2019,
    /// Windows Server 2022.
    Windows2022,
    /// Windows Server 2025.
    Windows2025,
    /// A user-supplied AMI: Karpenter knows nothing about its disks.
    Custom,
    /// Ubuntu (v1beta1 and earlier).
    Ubuntu,
}

impl AmiFamily {
    /// Parses an `amiFamily` value or alias family, case-insensitively (`AL2023`, `al2023`,
    /// `Bottlerocket`, `Windows2022`, …).
    pub fn parse(name: &str) -> Option<AmiFamily> {
        Some(match name.to_ascii_lowercase().as_str() {
            "al2" => AmiFamily::Al2,
            "al2023" => AmiFamily::Al2023,
            "bottlerocket" => AmiFamily::Bottlerocket,
            "windows2019" => AmiFamily::Windows2019,
            "windows2022" => AmiFamily::Windows2022,
            "windows2025" => AmiFamily::Windows2025,
            "custom" => AmiFamily::Custom,
            "ubuntu" => AmiFamily::Ubuntu,
            _ => return None,
        })
    }

    /// Like [`AmiFamily::parse`], but an unknown name is AL2 — what Karpenter's
    /// `GetAMIFamily` falls back to.
    pub fn parse_or_default(name: &str) -> AmiFamily {
        AmiFamily::parse(name).unwrap_or(AmiFamily::Al2)
    }

    /// The API spelling.
    pub fn name(self) -> &'static str {
        match self {
            AmiFamily::Al2 => "AL2",
            AmiFamily::Al2023 => "AL2023",
            AmiFamily::Bottlerocket => "Bottlerocket",
            AmiFamily::Windows2019 => "Windows2019",
            AmiFamily::Windows2022 => "Windows2022",
            AmiFamily::Windows2025 => "Windows2025",
            AmiFamily::Custom => "Custom",
            AmiFamily::Ubuntu => "Ubuntu",
        }
    }

    /// Windows families run only on amd64 and label nodes `kubernetes.io/os=windows`.
    pub fn is_windows(self) -> bool {
        self.windows_build().is_some()
    }

    /// `node.kubernetes.io/windows-build` of the family's nodes.
    pub fn windows_build(self) -> Option<&'static str> {
        match self {
            AmiFamily::Windows2019 => Some("10.0.17763"),
            AmiFamily::Windows2022 => Some("10.0.20348"),
            AmiFamily::Windows2025 => Some("10.0.26100"),
            _ => None,
        }
    }

    /// `SupportsENILimitedPodDensity`: Windows nodes do not use the VPC CNI's per-ENI IPs.
    fn eni_limited_pod_density(self) -> bool {
        !self.is_windows()
    }

    /// `PodsPerCoreEnabled`: Bottlerocket's settings have no pods-per-core.
    fn pods_per_core_enabled(self) -> bool {
        self != AmiFamily::Bottlerocket
    }

    /// `UsesENILimitedMemoryOverhead`: the EKS AMIs size kube-reserved memory from the ENI limit
    /// table regardless of `maxPods`; Bottlerocket and Windows use the effective pod count.
    fn eni_limited_memory_overhead(self) -> bool {
        matches!(
            self,
            AmiFamily::Al2 | AmiFamily::Al2023 | AmiFamily::Custom | AmiFamily::Ubuntu
        )
    }

    /// `EvictionSoftEnabled` of the controllers that read it (aws v0.31.5 … v1.8): Bottlerocket's
    /// settings have no soft eviction, so its `evictionSoft` is not counted.
    pub fn eviction_soft_counted(self) -> bool {
        self != AmiFamily::Bottlerocket
    }

    /// The device the kubelet's filesystem lives on (`EphemeralBlockDevice`); none for Custom.
    pub fn ephemeral_block_device(self) -> Option<&'static str> {
        match self {
            AmiFamily::Al2 | AmiFamily::Al2023 => Some("/dev/xvda"),
            AmiFamily::Bottlerocket => Some("/dev/xvdb"),
            AmiFamily::Windows2019
            | AmiFamily::Windows2022
            | AmiFamily::Windows2025
            | AmiFamily::Ubuntu => Some("/dev/sda1"),
            AmiFamily::Custom => None,
        }
    }

    /// Size of the ephemeral device in the family's default block device mappings: 20Gi
    /// (Bottlerocket's 20Gi data volume; its 4Gi root volume holds no pod data), 50Gi for
    /// Windows' single root volume, the 20Gi EBS default for Custom.
    pub fn default_ephemeral_storage(self) -> i64 {
        if self.is_windows() {
            50 * GIB
        } else {
            DEFAULT_EBS_VOLUME_SIZE
        }
    }
}

/// A `VM_MEMORY_OVERHEAD_PERCENT` value as the AWS controller takes it (`aws v1.14.1:
/// pkg/operator/options/options.go`, a float64 flag; `options_validation.go`: not negative).
/// `None`: Karpenter would not start with it.
pub fn parse_vm_memory_overhead_percent(raw: &str) -> Option<f64> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
}

/// A `RESERVED_ENIS` value as the AWS controller takes it (an int flag, not negative).
pub fn parse_reserved_enis(raw: &str) -> Option<i64> {
    raw.trim().parse::<i64>().ok().filter(|n| *n >= 0)
}

/// ENI-limited pod density: `(maxENIs − reserved) × (IPv4PerENI − 1) + 2`.
///
/// Each ENI's primary address is not given to pods; the `+ 2` covers the host-network pods
/// (aws-node, kube-proxy). With no usable ENI the node can run no pods at all (0, not 2).
/// `max_enis` is the default network card's limit, which is all the VPC CNI uses.
pub fn eni_limited_pods(max_enis: i64, ipv4_per_eni: i64, reserved_enis: i64) -> i64 {
    let usable = (max_enis - reserved_enis).max(0);
    if usable == 0 {
        return 0;
    }
    usable * (ipv4_per_eni - 1) + 2
}

/// The node's pod capacity: `maxPods` if set, else the ENI limit (Windows: 110), then capped at
/// `podsPerCore × vCPU` when `podsPerCore > 0` (not on Bottlerocket, which has no such setting).
pub fn pods(
    family: AmiFamily,
    eni_limited: i64,
    vcpu: i64,
    max_pods: Option<i64>,
    pods_per_core: Option<i64>,
) -> i64 {
    let mut count = match max_pods {
        Some(max) => max,
        None if family.eni_limited_pod_density() => eni_limited,
        None => WINDOWS_MAX_PODS,
    };
    if let Some(per_core) = pods_per_core.filter(|p| *p > 0) {
        if family.pods_per_core_enabled() {
            count = count.min(per_core * vcpu);
        }
    }
    count
}

/// kube-reserved CPU for a node with `vcpu` cores, in millicores (70m/80m/90m/110m/150m for
/// 2/4/8/16/32 vCPU).
pub fn kube_reserved_cpu(vcpu: i64) -> i64 {
    kube_reserved_cpu_milli(vcpu.saturating_mul(ONE))
}

/// kube-reserved CPU for `cpu` millicores: 6% of the first core, 1% of the second, 0.5% of cores
/// 3–4 and 0.25% of the rest (Bottlerocket's table, which Karpenter uses for every family).
///
/// Integer arithmetic: Go truncates each band's float product, and for whole-millicore inputs
/// the exact integer quotient is the same number without float rounding risk.
pub fn kube_reserved_cpu_milli(cpu: i64) -> i64 {
    // (start, end, numerator, denominator) in millicores.
    const BANDS: [(i64, i64, i64, i64); 4] = [
        (0, 1000, 6, 100),
        (1000, 2000, 1, 100),
        (2000, 4000, 5, 1000),
        (4000, 1 << 31, 25, 10000),
    ];
    BANDS
        .iter()
        .filter(|(start, ..)| cpu >= *start)
        .map(|(start, end, num, den)| (cpu.min(*end) - start) * num / den)
        .sum()
}

/// kube-reserved memory for `pods` pods: `11 × pods + 255` MiB, in milli-bytes (saturating: a
/// custom catalog may declare a pod capacity no node has, and that must not panic or wrap).
pub fn kube_reserved_memory(pods: i64) -> i64 {
    pods.saturating_mul(11)
        .saturating_add(255)
        .saturating_mul(MIB)
}

/// The pod count that sizes kube-reserved memory: the ENI-limited count (ignoring `maxPods` and
/// reserved ENIs) for AL2/AL2023/Custom/Ubuntu, the effective pod capacity otherwise.
pub fn kube_reserved_memory_pods(
    family: AmiFamily,
    eni_limited_unreserved: i64,
    effective_pods: i64,
) -> i64 {
    if family.eni_limited_memory_overhead() {
        eni_limited_unreserved
    } else {
        effective_pods
    }
}

/// kube-reserved: computed CPU, memory and 1Gi ephemeral storage, then the user's
/// `kubeReserved` entries override key by key — `zero`, the keys written as 0, with 0
/// (`types.go` `kubeReservedResources`: `lo.Assign` of every written key).
pub fn kube_reserved(
    cpu_milli: i64,
    memory_pods: i64,
    user: &Resources,
    zero: &[String],
) -> Resources {
    let mut out = Resources::new();
    out.set(CPU, kube_reserved_cpu_milli(cpu_milli));
    out.set(MEMORY, kube_reserved_memory(memory_pods));
    out.set(EPHEMERAL_STORAGE, KUBE_RESERVED_EPHEMERAL_STORAGE);
    for (name, value) in user.iter() {
        out.set(name, value);
    }
    for name in zero {
        out.set(name, 0);
    }
    out
}

/// Memory capacity in milli-bytes: `SizeInMiB` (minus 64 MiB of CMA on arm64), minus
/// `ceil(that × vmMemoryOverheadPercent)` MiB.
///
/// The overhead is taken from the already-reduced arm64 size, as `types.go memory()` does.
/// Float arithmetic on purpose: Go computes `bytes × percent / 1024 / 1024` in float64 and the
/// divisions by powers of two are exact, so `mib × percent` rounds identically.
pub fn memory_capacity(size_mib: i64, arm64: bool, vm_memory_overhead_percent: f64) -> i64 {
    let mib = if arm64 {
        size_mib - ARM64_CMA_RESERVED_MIB
    } else {
        size_mib
    };
    let overhead_mib = (mib as f64 * vm_memory_overhead_percent).ceil() as i64;
    (mib - overhead_mib) * MIB
}

/// Ephemeral-storage capacity in milli-bytes, in Karpenter's order of precedence:
/// 1. `instanceStorePolicy: RAID0` and the type has instance storage: its total (decimal GB);
/// 2. a block device mapping marked `rootVolume` with a size;
/// 3. Custom: the last mapping's size (or 20Gi); other families: the mapping of the family's
///    ephemeral device (`/dev/xvda`, Bottlerocket `/dev/xvdb`, Windows/Ubuntu `/dev/sda1`);
/// 4. the family's default for that device.
pub fn ephemeral_storage(
    family: AmiFamily,
    block_devices: &[BlockDevice],
    instance_store_policy: Option<&str>,
    instance_store_gb: i64,
) -> i64 {
    if instance_store_policy == Some(INSTANCE_STORE_POLICY_RAID0) && instance_store_gb > 0 {
        return instance_store_gb
            .saturating_mul(1_000_000_000)
            .saturating_mul(ONE);
    }
    if !block_devices.is_empty() {
        if let Some(size) = block_devices
            .iter()
            .find(|b| b.root_volume)
            .and_then(|b| b.volume_size)
        {
            return size;
        }
        match family.ephemeral_block_device() {
            None => {
                let last = block_devices.last().and_then(|b| b.volume_size);
                return last.unwrap_or(DEFAULT_EBS_VOLUME_SIZE);
            }
            Some(device) => {
                let mapped = block_devices
                    .iter()
                    .find(|b| b.device_name.as_deref() == Some(device));
                if let Some(size) = mapped.and_then(|b| b.volume_size) {
                    return size;
                }
            }
        }
    }
    family.default_ephemeral_storage()
}

/// One `evictionHard` value against a capacity, in milli-units: a percentage of the capacity
/// (rounded up to a whole byte; `100%` means the threshold is disabled, i.e. 0) or an absolute
/// quantity. `None` when the value is neither — Karpenter would panic; we keep the default.
pub fn eviction_signal(capacity: i64, value: &str) -> Option<i64> {
    let value = value.trim();
    if let Some(percent) = value.strip_suffix('%') {
        let p: f64 = percent
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite())?;
        let p = if p == 100.0 { 0.0 } else { p };
        let capacity_units = capacity as f64 / ONE as f64;
        return Some(((capacity_units / 100.0 * p).ceil() as i64).saturating_mul(ONE));
    }
    parse_milli(value).ok()
}

/// Hard eviction thresholds: memory 100Mi and ephemeral storage `ceil(10% of storage)`, each
/// replaced by `evictionHard["memory.available"]` / `["nodefs.available"]` when set.
///
/// `eviction_soft`: the `evictionSoft` map where the controller counts it — the older
/// generations' (aws v0.31.5 … v1.8: `types.go` `evictionThreshold` appends it to the signals
/// when the family's `EvictionSoftEnabled`, and takes per signal the larger of the two values,
/// `resources.MaxResources`). v1.14.1 passes `None`: soft thresholds only warn and do not lower
/// allocatable ("should use only evictionHard for overhead, ignoring evictionSoft").
pub fn eviction_threshold(
    memory: i64,
    storage: i64,
    eviction_hard: &BTreeMap<String, String>,
    eviction_soft: Option<&BTreeMap<String, String>>,
) -> Resources {
    let mut out = Resources::new();
    // ceil(bytes / 10) in exact integers (Go: ceil(float(bytes) / 100 * 10)).
    let storage_bytes = storage / ONE;
    out.set(MEMORY, DEFAULT_EVICTION_MEMORY);
    out.set(EPHEMERAL_STORAGE, (storage_bytes + 9).div_euclid(10) * ONE);
    for (name, key, capacity) in [
        (MEMORY, MEMORY_AVAILABLE, memory),
        (EPHEMERAL_STORAGE, NODEFS_AVAILABLE, storage),
    ] {
        let values = std::iter::once(eviction_hard)
            .chain(eviction_soft)
            .filter_map(|signals| eviction_signal(capacity, signals.get(key)?));
        if let Some(v) = values.max() {
            out.set(name, v);
        }
    }
    out
}

/// The facts about an instance type that capacity depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstanceShape {
    /// `DefaultVCpus`.
    pub vcpu: i64,
    /// `MemoryInfo.SizeInMiB`.
    pub memory_mib: i64,
    /// Whether the first supported architecture is arm64.
    pub arm64: bool,
    /// ENIs on the default network card.
    pub max_enis: i64,
    /// IPv4 addresses per ENI.
    pub ipv4_per_eni: i64,
    /// Total instance-store size in GB (0 when none).
    pub instance_store_gb: i64,
}

/// The node-class and controller settings that capacity depends on.
#[derive(Debug, Clone, Copy)]
pub struct NodeSettings<'a> {
    /// AMI family.
    pub family: AmiFamily,
    /// Kubelet configuration, if any.
    pub kubelet: Option<&'a KubeletConfig>,
    /// The node class's block device mappings.
    pub block_devices: &'a [BlockDevice],
    /// `instanceStorePolicy`.
    pub instance_store_policy: Option<&'a str>,
    /// `VM_MEMORY_OVERHEAD_PERCENT` (default 0.075).
    pub vm_memory_overhead_percent: f64,
    /// `RESERVED_ENIS` (default 0).
    pub reserved_enis: i64,
    /// The class's EFA-only interfaces on network card 0: each takes an ENI from the VPC CNI,
    /// for the pod capacity and for the ENI-limited kube-reserved memory alike (`types.go`
    /// `ENILimitedPods` counts them whatever `reservedENIs` it is given).
    pub efa_only_enis: i64,
    /// Whether `evictionSoft` lowers allocatable like `evictionHard` ([`eviction_threshold`]):
    /// the older generations' controllers, on families other than Bottlerocket
    /// ([`AmiFamily::eviction_soft_counted`]).
    pub eviction_soft: bool,
}

impl<'a> NodeSettings<'a> {
    /// Karpenter's defaults for `family`: no kubelet settings, no mappings, 7.5%, no reserved ENIs.
    pub fn new(family: AmiFamily) -> Self {
        NodeSettings {
            family,
            kubelet: None,
            block_devices: &[],
            instance_store_policy: None,
            vm_memory_overhead_percent: DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
            reserved_enis: 0,
            efa_only_enis: 0,
            eviction_soft: false,
        }
    }
}

/// Capacity (cpu, memory, pods, ephemeral-storage) and overhead of an instance type, as the
/// AWS provider's `NewInstanceType` computes them. Extended resources (GPUs, EFA, …) are the
/// caller's business: they need facts beyond the shape.
pub fn capacity_and_overhead(
    shape: &InstanceShape,
    settings: &NodeSettings,
) -> (Resources, Overhead) {
    let kubelet = settings.kubelet;
    let max_pods = kubelet.and_then(|k| k.max_pods);
    let pods_per_core = kubelet.and_then(|k| k.pods_per_core);

    let eni_limited = eni_limited_pods(
        shape.max_enis,
        shape.ipv4_per_eni,
        settings.reserved_enis + settings.efa_only_enis,
    );
    let pod_count = pods(
        settings.family,
        eni_limited,
        shape.vcpu,
        max_pods,
        pods_per_core,
    );
    let memory = memory_capacity(
        shape.memory_mib,
        shape.arm64,
        settings.vm_memory_overhead_percent,
    );
    let storage = ephemeral_storage(
        settings.family,
        settings.block_devices,
        settings.instance_store_policy,
        shape.instance_store_gb,
    );

    let mut capacity = Resources::new();
    // Saturating: a `maxPods: 9223372036854775807` (or a custom catalog's vcpu) is "more than
    // anything", not an overflow (found by the fuzzer, s30-fuzz2).
    capacity.set(CPU, shape.vcpu.saturating_mul(ONE));
    capacity.set(MEMORY, memory);
    capacity.set(PODS, pod_count.saturating_mul(ONE));
    capacity.set(EPHEMERAL_STORAGE, storage);

    let memory_pods = kube_reserved_memory_pods(
        settings.family,
        // `NewInstanceType`: `ENILimitedPods(ctx, info, 0, networkInterfaces)` — no reserved
        // ENIs, but the EFA-only interfaces still count.
        eni_limited_pods(shape.max_enis, shape.ipv4_per_eni, settings.efa_only_enis),
        pod_count,
    );
    let overhead = reservations(
        shape.vcpu * ONE,
        memory_pods,
        memory,
        storage,
        kubelet,
        settings.eviction_soft,
    );
    (capacity, overhead)
}

/// Overhead for a capacity that did not come from EC2 facts (custom catalogs): kube-reserved
/// from the CPU and the pod count, the user's reservations, and eviction thresholds from memory
/// and storage. Only resources present in `capacity` are reserved, so a catalog entry without,
/// say, `ephemeral-storage` is not made unschedulable by a negative allocatable.
/// `eviction_soft` as [`NodeSettings::eviction_soft`].
pub fn overhead_for_capacity(
    capacity: &Resources,
    kubelet: Option<&KubeletConfig>,
    eviction_soft: bool,
) -> Overhead {
    let pod_count = capacity.pods.div_euclid(ONE);
    let mut overhead = reservations(
        capacity.cpu,
        pod_count,
        capacity.memory,
        capacity.ephemeral_storage,
        kubelet,
        eviction_soft,
    );
    for part in [
        &mut overhead.kube_reserved,
        &mut overhead.system_reserved,
        &mut overhead.eviction_threshold,
    ] {
        let absent: Vec<String> = part
            .iter()
            .filter(|(name, _)| !capacity.contains(name))
            .map(|(name, _)| name.to_string())
            .collect();
        for name in absent {
            part.set(&name, 0);
        }
    }
    overhead
}

fn reservations(
    cpu_milli: i64,
    memory_pods: i64,
    memory: i64,
    storage: i64,
    kubelet: Option<&KubeletConfig>,
    eviction_soft: bool,
) -> Overhead {
    let empty = BTreeMap::new();
    let no_resources = Resources::new();
    Overhead {
        kube_reserved: kube_reserved(
            cpu_milli,
            memory_pods,
            kubelet.map_or(&no_resources, |k| &k.kube_reserved),
            kubelet.map_or(&[], |k| &k.kube_reserved_zero),
        ),
        system_reserved: kubelet.map_or_else(Resources::new, |k| k.system_reserved.clone()),
        eviction_threshold: eviction_threshold(
            memory,
            storage,
            kubelet.map_or(&empty, |k| &k.eviction_hard),
            kubelet.filter(|_| eviction_soft).map(|k| &k.eviction_soft),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(vcpu: i64, memory_mib: i64, max_enis: i64, ipv4_per_eni: i64) -> InstanceShape {
        InstanceShape {
            vcpu,
            memory_mib,
            arm64: false,
            max_enis,
            ipv4_per_eni,
            instance_store_gb: 0,
        }
    }

    #[test]
    fn eni_limited_pods_match_the_eks_table() {
        // (type, default-card ENIs, IPv4 per ENI, pods) — docs/karpenter.md §6.3.
        let cases = [
            ("t3.large", 3, 12, 35),
            ("m5.large", 3, 10, 29),
            ("m5.xlarge", 4, 15, 58),
            ("c6a.2xlarge", 4, 15, 58),
            ("m6idn.32xlarge", 8, 50, 394),
            ("t2.micro", 2, 2, 4),
        ];
        for (name, enis, ips, want) in cases {
            assert_eq!(eni_limited_pods(enis, ips, 0), want, "{name}");
        }
        assert_eq!(eni_limited_pods(3, 10, 1), 20, "one reserved ENI");
        assert_eq!(
            eni_limited_pods(3, 10, 3),
            0,
            "no usable ENI means no pods, not 2"
        );
        assert_eq!(eni_limited_pods(3, 10, 5), 0);
    }

    #[test]
    fn pods_honour_max_pods_windows_and_pods_per_core() {
        use AmiFamily::*;
        assert_eq!(pods(Al2023, 29, 2, None, None), 29);
        assert_eq!(
            pods(Al2023, 29, 2, Some(110), None),
            110,
            "maxPods wins over the ENI limit"
        );
        assert_eq!(pods(Windows2022, 29, 2, None, None), 110);
        assert_eq!(pods(Windows2022, 29, 2, Some(20), None), 20);
        assert_eq!(pods(Al2, 58, 4, None, Some(10)), 40, "podsPerCore caps");
        assert_eq!(
            pods(Al2, 29, 4, None, Some(10)),
            29,
            "only caps, never raises"
        );
        assert_eq!(pods(Al2, 58, 4, None, Some(0)), 58, "0 means unset");
        assert_eq!(
            pods(Bottlerocket, 58, 4, None, Some(10)),
            58,
            "ignored for Bottlerocket"
        );
        assert_eq!(pods(Windows2019, 0, 4, None, Some(10)), 40);
    }

    #[test]
    fn kube_reserved_cpu_follows_the_bands() {
        for (vcpu, want) in [
            (1, 60),
            (2, 70),
            (4, 80),
            (8, 90),
            (16, 110),
            (32, 150),
            (48, 190),
            (96, 310),
            (192, 550),
        ] {
            assert_eq!(kube_reserved_cpu(vcpu), want, "{vcpu} vCPU");
        }
        assert_eq!(kube_reserved_cpu_milli(500), 30);
        assert_eq!(kube_reserved_cpu_milli(0), 0);
        assert_eq!(kube_reserved_cpu(3), 75, "half of 0.5% of the third core");
    }

    #[test]
    fn kube_reserved_memory_and_its_pod_count() {
        assert_eq!(kube_reserved_memory(29), 574 * MIB);
        assert_eq!(kube_reserved_memory(110), 1465 * MIB);
        use AmiFamily::*;
        for f in [Al2, Al2023, Custom, Ubuntu] {
            assert_eq!(
                kube_reserved_memory_pods(f, 29, 110),
                29,
                "{f:?} uses the ENI-limited count"
            );
        }
        for f in [Bottlerocket, Windows2019, Windows2022, Windows2025] {
            assert_eq!(
                kube_reserved_memory_pods(f, 29, 110),
                110,
                "{f:?} uses the effective count"
            );
        }
    }

    #[test]
    fn kube_reserved_user_keys_override() {
        let user = Resources::from_pairs(&[("cpu", "200m"), ("pid", "1000")]);
        let r = kube_reserved(2000, 29, &user, &[]);
        assert_eq!(r.cpu, 200);
        assert_eq!(r.memory, 574 * MIB, "memory not overridden");
        assert_eq!(r.ephemeral_storage, GIB);
        assert_eq!(r.get("pid"), 1_000_000);
    }

    /// **Differs, fixed** (s27-lineaws) — `kubeReserved: {cpu: "0", ephemeral-storage: "0"}` on
    /// 2 vCPU → `aws v1.14.1: pkg/providers/instancetype/types.go` `kubeReservedResources`
    /// assigns every written key, so kube-reserved CPU and ephemeral storage are 0; a zero was
    /// "unset" here and the computed 70m / 1Gi stayed. No upstream test; rule from that line.
    #[test]
    fn kube_reserved_keys_written_as_zero_override_with_zero() {
        let zero = ["cpu".to_string(), "ephemeral-storage".to_string()];
        let r = kube_reserved(2000, 29, &Resources::new(), &zero);
        assert_eq!((r.cpu, r.ephemeral_storage), (0, 0));
        assert_eq!(r.memory, 574 * MIB, "memory not written");
    }

    #[test]
    fn memory_capacity_subtracts_vm_overhead_and_graviton_cma() {
        assert_eq!(memory_capacity(8192, false, 0.075), 7577 * MIB, "m5.large");
        assert_eq!(
            memory_capacity(16384, false, 0.075),
            (16384 - 1229) * MIB,
            "c6a.2xlarge"
        );
        // m6g.large: (8192 − 64) − ceil(8128 × 0.075 = 609.6) = 7518.
        assert_eq!(memory_capacity(8192, true, 0.075), 7518 * MIB);
        assert_eq!(memory_capacity(8192, false, 0.0), 8192 * MIB);
        // 40 × 0.075 is exactly 3 in float64 too: no spurious extra MiB.
        assert_eq!(memory_capacity(40, false, 0.075), 37 * MIB);
    }

    fn bdm(device: &str, root: bool, gib: Option<i64>) -> BlockDevice {
        BlockDevice {
            device_name: Some(device.to_string()),
            root_volume: root,
            volume_size: gib.map(|g| g * GIB),
            ..BlockDevice::default()
        }
    }

    #[test]
    fn ephemeral_storage_precedence() {
        use AmiFamily::*;
        assert_eq!(ephemeral_storage(Al2023, &[], None, 0), 20 * GIB);
        assert_eq!(ephemeral_storage(Bottlerocket, &[], None, 0), 20 * GIB);
        assert_eq!(ephemeral_storage(Windows2022, &[], None, 0), 50 * GIB);
        assert_eq!(ephemeral_storage(Custom, &[], None, 0), 20 * GIB);
        // RAID0 uses the instance store (decimal GB) when there is one.
        assert_eq!(
            ephemeral_storage(Al2023, &[], Some("RAID0"), 125),
            125_000_000_000 * ONE
        );
        assert_eq!(ephemeral_storage(Al2023, &[], Some("RAID0"), 0), 20 * GIB);
        let al2 = [bdm("/dev/xvda", false, Some(100))];
        assert_eq!(ephemeral_storage(Al2, &al2, None, 0), 100 * GIB);
        assert_eq!(
            ephemeral_storage(Bottlerocket, &al2, None, 0),
            20 * GIB,
            "xvda is the root, not data"
        );
        let br = [
            bdm("/dev/xvda", false, Some(4)),
            bdm("/dev/xvdb", false, Some(80)),
        ];
        assert_eq!(ephemeral_storage(Bottlerocket, &br, None, 0), 80 * GIB);
        let rooted = [
            bdm("/dev/xvdb", false, Some(80)),
            bdm("/dev/xvda", true, Some(30)),
        ];
        assert_eq!(
            ephemeral_storage(Bottlerocket, &rooted, None, 0),
            30 * GIB,
            "rootVolume wins"
        );
        let custom = [
            bdm("/dev/sda1", false, Some(40)),
            bdm("/dev/sdb", false, Some(200)),
        ];
        assert_eq!(
            ephemeral_storage(Custom, &custom, None, 0),
            200 * GIB,
            "last mapping for Custom"
        );
        assert_eq!(
            ephemeral_storage(Custom, &[bdm("/dev/sdb", false, None)], None, 0),
            20 * GIB
        );
    }

    /// Found by the input fuzzer (s30-fuzz): a `--catalog` entry with `pods: "1e18"` made
    /// `11 × pods` overflow (a panic in debug builds, a wrapped negative reservation in release).
    #[test]
    fn an_absurd_pod_capacity_in_a_custom_catalog_saturates_the_reservation_instead_of_overflowing()
    {
        let mut capacity = Resources::new();
        capacity.set(CPU, 4 * ONE);
        capacity.set(MEMORY, 8 * GIB);
        capacity.set(PODS, i64::MAX);
        let overhead = overhead_for_capacity(&capacity, None, false);
        assert_eq!(overhead.kube_reserved.memory, i64::MAX);
        assert_eq!(kube_reserved_memory(110), (11 * 110 + 255) * MIB);
        // A percentage far beyond 100 % saturates too.
        assert_eq!(eviction_signal(8 * GIB, "1e300%"), Some(i64::MAX));
    }

    /// aws v0.37.7 `pkg/providers/instancetype/types.go` `evictionThreshold` (the older
    /// generations' controllers; suite_test.go "should take the greater of evictionHard and
    /// evictionSoft for overhead as a value" / "… with mixed percentage/value"): per signal the larger of the hard and the soft value; a soft
    /// value alone replaces the default; `100%` is 0 on either side.
    #[test]
    fn the_older_controllers_take_the_larger_of_hard_and_soft() {
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let hard = map(&[(MEMORY_AVAILABLE, "500Mi"), (NODEFS_AVAILABLE, "100%")]);
        let soft = map(&[(MEMORY_AVAILABLE, "10%"), (NODEFS_AVAILABLE, "1Gi")]);
        let e = eviction_threshold(1000 * MIB, 20 * GIB, &hard, Some(&soft));
        assert_eq!(e.memory, 500 * MIB, "500Mi over 10 % of 1000Mi");
        assert_eq!(
            e.ephemeral_storage, GIB,
            "1Gi over a disabled hard threshold"
        );
        let e = eviction_threshold(1000 * MIB, 20 * GIB, &BTreeMap::new(), Some(&soft));
        assert_eq!(e.memory, 100 * MIB, "10 % of 1000Mi");
        let small = map(&[(MEMORY_AVAILABLE, "50Mi")]);
        let e = eviction_threshold(1000 * MIB, 20 * GIB, &BTreeMap::new(), Some(&small));
        assert_eq!(e.memory, 50 * MIB, "below the 100Mi default, still taken");
        assert_eq!(
            e.ephemeral_storage,
            2 * GIB,
            "a signal neither names keeps its default"
        );
        assert!(!AmiFamily::Bottlerocket.eviction_soft_counted());
        assert!(AmiFamily::Windows2019.eviction_soft_counted());
    }

    #[test]
    fn eviction_thresholds_and_overrides() {
        let none = BTreeMap::new();
        let e = eviction_threshold(7577 * MIB, 20 * GIB, &none, None);
        assert_eq!(e.memory, 100 * MIB);
        assert_eq!(e.ephemeral_storage, 2 * GIB);
        // 10% of 21 bytes rounds up to 3 bytes.
        assert_eq!(
            eviction_threshold(0, 21 * ONE, &none, None).ephemeral_storage,
            3 * ONE
        );

        let hard: BTreeMap<String, String> = [
            (MEMORY_AVAILABLE.to_string(), "5%".to_string()),
            (NODEFS_AVAILABLE.to_string(), "100%".to_string()),
            ("nodefs.inodesFree".to_string(), "5%".to_string()),
        ]
        .into();
        let e = eviction_threshold(1000 * MIB, 20 * GIB, &hard, None);
        assert_eq!(e.memory, 50 * MIB, "percent of capacity");
        assert_eq!(e.ephemeral_storage, 0, "100% disables the threshold");

        let abs: BTreeMap<String, String> =
            [(MEMORY_AVAILABLE.to_string(), "500Mi".to_string())].into();
        assert_eq!(
            eviction_threshold(1000 * MIB, 20 * GIB, &abs, None).memory,
            500 * MIB
        );
        let junk: BTreeMap<String, String> =
            [(MEMORY_AVAILABLE.to_string(), "lots".to_string())].into();
        assert_eq!(
            eviction_threshold(1000 * MIB, 20 * GIB, &junk, None).memory,
            100 * MIB,
            "unparsable keeps the default"
        );
        assert_eq!(
            eviction_signal(3 * ONE, "50%"),
            Some(2 * ONE),
            "rounded up to whole units"
        );
        assert_eq!(eviction_signal(3 * ONE, "x%"), None);
    }

    #[test]
    fn m5_large_al2023_matches_the_worked_example() {
        let (capacity, overhead) = capacity_and_overhead(
            &shape(2, 8192, 3, 10),
            &NodeSettings::new(AmiFamily::Al2023),
        );
        assert_eq!(capacity.cpu, 2000);
        assert_eq!(capacity.memory, 7577 * MIB);
        assert_eq!(capacity.pods, 29 * ONE);
        assert_eq!(capacity.ephemeral_storage, 20 * GIB);
        assert_eq!(overhead.kube_reserved.memory, 574 * MIB);
        let alloc = capacity.sub(&overhead.total());
        assert_eq!(alloc.cpu, 1930);
        assert_eq!(alloc.memory, 6903 * MIB, "7577 − 574 − 100");
        assert_eq!(alloc.pods, 29 * ONE);
        assert_eq!(alloc.ephemeral_storage, 17 * GIB, "20Gi − 1Gi − 2Gi");
    }

    /// Found by the fuzzer (s30-fuzz2): `kubelet.maxPods: 9223372036854775807` overflowed the pod
    /// capacity in millis (a panic in a debug build).
    #[test]
    fn a_max_pods_of_the_largest_integer_saturates_the_pod_capacity_instead_of_overflowing() {
        let kubelet = KubeletConfig {
            max_pods: Some(i64::MAX),
            ..KubeletConfig::default()
        };
        let settings = NodeSettings {
            kubelet: Some(&kubelet),
            ..NodeSettings::new(AmiFamily::Al2023)
        };
        let (capacity, _) = capacity_and_overhead(&shape(2, 8192, 3, 10), &settings);
        assert_eq!(capacity.pods, i64::MAX);
    }

    #[test]
    fn kubelet_settings_flow_into_capacity_and_overhead() {
        let kubelet = KubeletConfig {
            max_pods: Some(110),
            system_reserved: Resources::from_pairs(&[("cpu", "100m"), ("memory", "100Mi")]),
            kube_reserved: Resources::from_pairs(&[("memory", "1Gi")]),
            eviction_hard: [(MEMORY_AVAILABLE.to_string(), "200Mi".to_string())].into(),
            ..KubeletConfig::default()
        };
        let settings = NodeSettings {
            kubelet: Some(&kubelet),
            ..NodeSettings::new(AmiFamily::Al2)
        };
        let (capacity, overhead) = capacity_and_overhead(&shape(2, 8192, 3, 10), &settings);
        assert_eq!(capacity.pods, 110 * ONE);
        assert_eq!(
            overhead.kube_reserved.memory, GIB,
            "user kubeReserved overrides"
        );
        assert_eq!(overhead.kube_reserved.cpu, 70);
        assert_eq!(overhead.system_reserved.cpu, 100);
        assert_eq!(overhead.eviction_threshold.memory, 200 * MIB);

        // Without the override, AL2 sizes kube-reserved memory from the ENI limit (29), not 110.
        let kubelet = KubeletConfig {
            max_pods: Some(110),
            ..KubeletConfig::default()
        };
        let settings = NodeSettings {
            kubelet: Some(&kubelet),
            ..NodeSettings::new(AmiFamily::Al2)
        };
        let (_, overhead) = capacity_and_overhead(&shape(2, 8192, 3, 10), &settings);
        assert_eq!(overhead.kube_reserved.memory, 574 * MIB);
        // Bottlerocket uses the effective count.
        let settings = NodeSettings {
            kubelet: Some(&kubelet),
            ..NodeSettings::new(AmiFamily::Bottlerocket)
        };
        let (_, overhead) = capacity_and_overhead(&shape(2, 8192, 3, 10), &settings);
        assert_eq!(overhead.kube_reserved.memory, (11 * 110 + 255) * MIB);
    }

    #[test]
    fn overhead_for_custom_capacity_reserves_only_present_resources() {
        let capacity = Resources::from_pairs(&[("cpu", "8"), ("memory", "16Gi"), ("pods", "58")]);
        let o = overhead_for_capacity(&capacity, None, false);
        assert_eq!(o.kube_reserved.cpu, 90);
        assert_eq!(o.kube_reserved.memory, (11 * 58 + 255) * MIB);
        assert_eq!(
            o.kube_reserved.ephemeral_storage, 0,
            "no ephemeral-storage capacity, none reserved"
        );
        assert_eq!(o.eviction_threshold.memory, 100 * MIB);
        assert_eq!(o.eviction_threshold.ephemeral_storage, 0);
    }

    #[test]
    fn ami_family_names() {
        assert_eq!(AmiFamily::parse("al2023"), Some(AmiFamily::Al2023));
        assert_eq!(
            AmiFamily::parse("Bottlerocket"),
            Some(AmiFamily::Bottlerocket)
        );
        assert_eq!(AmiFamily::parse("nope"), None);
        assert_eq!(AmiFamily::parse_or_default("nope"), AmiFamily::Al2);
        assert_eq!(AmiFamily::Windows2022.windows_build(), Some("10.0.20348"));
        assert!(!AmiFamily::Custom.is_windows());
        assert_eq!(
            AmiFamily::parse(AmiFamily::Windows2025.name()),
            Some(AmiFamily::Windows2025)
        );
    }
}
