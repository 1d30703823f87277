//! AWS instance types, capacity and overhead read line by line against aws v1.14.1
//! (`pkg/providers/instancetype/types.go`, `instancetype.go`, `amifamily/*` feature flags and
//! block devices; docs/upstream-tests.md "AWS instance types, capacity and overhead, line by line
//! (s31-linetypes)"), replayed through the binary (`provision --dry-run -o json`, the embedded
//! catalog in us-east-1). The edge inputs the earlier replays (s19-binst, s21-binst2, s27-lineaws)
//! did not try are probes of `upstream_aws_binary` (a pod of exactly the allocatable upstream's
//! formulas give is placed, one unit more is not; max pods as pods per NodeClaim); the expected
//! numbers are worked out in each comment from `types.go`. Fixtures in
//! `tests/fixtures/types-line-by-line/` (our own manifests).

use serde_json::json;

use crate::support::plan_fixture;
use crate::upstream_aws_binary::{
    alias, capacity_mib, kubelet, m5l, m5x_mem, nodefs, percent, probe, run_with, t3l_mem, GI,
    M5X_CPU, MI, ROOT, WINDOWS_ROOT,
};

/// **Differed, fixed** — `computeRequirements`: `instance-network-bandwidth` is
/// `InstanceTypeBandwidthMegabits[name]` (`zz_generated.bandwidth.go`), absent for a type the
/// table does not list. m4.large is only a comment there ("vague bandwidth information,
/// bandwidth is Moderate"): a pod requiring the label to exist stays pending; i7ie.48xlarge is
/// 100000 there (EC2's two cards say 2 × 100 Gbit): `Gt 150000` stays pending. We took EC2's
/// figures (450 and 200000) and placed both. m5.large (750) is placed either way.
#[test]
fn network_bandwidth_labels_come_from_the_providers_table() {
    let plan = plan_fixture("types-line-by-line/network-bandwidth.yaml");
    assert_eq!(
        placed_types(&plan),
        vec![("default/listed".to_string(), "m5.large".to_string())],
        "{plan:#}"
    );
}

/// The NodeClaim type of each pod of `plan` that is placed (`default/NAME` → type).
fn placed_types(plan: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            let it = c["instanceType"].as_str().unwrap_or("").to_string();
            c["pods"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |p| (p.as_str().unwrap_or("").to_string(), it.clone()))
        })
        .collect();
    out.sort();
    out
}

/// **Differed, fixed** — the v1beta1 controllers (aws v0.32.10, v0.37.7) count `evictionSoft`:
/// `types.go` `evictionThreshold` takes per signal the larger of the hard and the soft value,
/// the soft one only where the family's `EvictionSoftEnabled` (not Bottlerocket). A v1beta1
/// NodePool with hard 1Gi and soft 2Gi on m5.xlarge: 12214Mi allocatable on AL2, 13238Mi on
/// Bottlerocket (fixture comments). We ignored `evictionSoft` in every generation (v1.14.1's
/// rule) and placed the AL2 pod one byte over.
#[test]
fn v1beta1_pools_count_eviction_soft_as_their_controller_did() {
    let plan = plan_fixture("types-line-by-line/v1beta1-eviction-soft.yaml");
    let m5x = || "m5.xlarge".to_string();
    assert_eq!(
        placed_types(&plan),
        vec![
            ("default/al2-fit".to_string(), m5x()),
            ("default/br-fit".to_string(), m5x())
        ],
        "{plan:#}"
    );
}

/// Capacity memory of an arm64 type of `mib` MiB: 64 MiB of CMA off first, then the VM overhead
/// of the rest (`types.go` `memory`).
fn arm64_capacity_mib(mib: i64) -> i64 {
    capacity_mib(mib - 64)
}

/// Edge kubelet settings of the v1 EC2NodeClass (no upstream test each; rules from `types.go`
/// `pods`, `kubeReservedResources`, `systemReservedResources`, `evictionThreshold`,
/// `computeEvictionSignal`, `ephemeralStorage`): all agree.
#[test]
fn edge_kubelet_settings_size_types_as_upstream() {
    let eph = ROOT - GI - nodefs(ROOT);
    let m5x = |kube_mib: i64, evict: i64| (M5X_CPU - 80, m5x_mem() - kube_mib * MI - evict);
    let (cpu, mem) = m5x(893, 100 * MI);
    run_with(
        &[
            // maxPods 0: no pod slot (`pods`: `maxPods != nil` wins, even 0).
            probe("mp0", "t3.large", kubelet(json!({"maxPods": 0}))).nothing_fits(),
            // maxPods 1: one pod per node.
            probe("mp1", "t3.large", kubelet(json!({"maxPods": 1}))).pods(1),
            // maxPods at the CRD's int32 maximum on AL2023: kube-reserved memory still from the
            // 35 ENI-limited pods (`UsesENILimitedMemoryOverhead`), 640Mi.
            probe(
                "mphuge",
                "t3.large",
                kubelet(json!({"maxPods": 2147483647})),
            )
            .alloc(1930, t3l_mem() - 640 * MI - 100 * MI, eph),
            // The same on Bottlerocket: 11 × 2147483647 + 255 Mi kube-reserved, nothing fits.
            probe(
                "mphuge-br",
                "t3.large",
                alias("bottlerocket@latest", json!({"maxPods": 2147483647})),
            )
            .nothing_fits(),
            // Windows with podsPerCore 3 on 4 vCPUs: 12 pods, kube-reserved 11 × 12 + 255 Mi.
            probe(
                "win-ppc",
                "m5.xlarge",
                alias("windows2022@latest", json!({"podsPerCore": 3})),
            )
            .alloc(
                M5X_CPU - 80,
                m5x_mem() - 387 * MI - 100 * MI,
                WINDOWS_ROOT - GI - nodefs(WINDOWS_ROOT),
            )
            .pods(12),
            // evictionHard 0 %: both thresholds 0.
            probe(
                "evict0",
                "m5.xlarge",
                kubelet(json!({"evictionHard": {"memory.available": "0%", "nodefs.available": "0%"}})),
            )
            .alloc(cpu, mem + 100 * MI, ROOT - GI),
            // A fractional percentage: ceil(capacity / 100 × 7.5) bytes.
            probe(
                "evict75",
                "m5.xlarge",
                kubelet(json!({"evictionHard": {"memory.available": "7.5%", "nodefs.available": "12.5%"}})),
            )
            .alloc(
                cpu,
                m5x_mem() - 893 * MI - percent(m5x_mem(), 7.5),
                ROOT - GI - percent(ROOT, 12.5),
            ),
            // A signed quantity (the CRD's pattern allows `+`/`-`): -1Gi lowers the overhead,
            // +200Mi is 200Mi.
            probe(
                "evict-neg",
                "m5.xlarge",
                kubelet(json!({"evictionHard": {"memory.available": "-1Gi", "nodefs.available": "+3Gi"}})),
            )
            .alloc(cpu, m5x_mem() - 893 * MI + GI, ROOT - GI - 3 * GI),
            // Both hard and soft: only the hard value counts.
            probe(
                "evict-both",
                "m5.xlarge",
                kubelet(json!({"evictionHard": {"memory.available": "200Mi"},
                    "evictionSoft": {"memory.available": "2Gi", "nodefs.available": "50%"},
                    "evictionSoftGracePeriod": {"memory.available": "1m", "nodefs.available": "1m"}})),
            )
            .alloc(cpu, m5x_mem() - 893 * MI - 200 * MI, eph),
            // kubeReserved / systemReserved with ephemeral-storage and pid: the storage adds up,
            // pid is no capacity and changes nothing (core `resources.Subtract` keeps the
            // capacity's keys).
            probe(
                "reserved-pid",
                "m5.xlarge",
                kubelet(json!({"kubeReserved": {"ephemeral-storage": "3Gi", "pid": "100"},
                    "systemReserved": {"ephemeral-storage": "2Gi", "pid": "1000"}})),
            )
            .alloc(cpu, mem, ROOT - 3 * GI - 2 * GI - nodefs(ROOT)),
        ],
        &[],
    );
}

/// Block devices and the instance store (`types.go` `ephemeralStorage`, the families'
/// `DefaultBlockDeviceMappings` / `EphemeralBlockDevice`): all agree.
#[test]
fn edge_ephemeral_storage_sources_as_upstream() {
    let bdm = |dev: &str, size: &str, root: bool| json!([{"deviceName": dev, "rootVolume": root, "ebs": {"volumeSize": size}}]);
    let (c, m, _) = m5l(ROOT);
    let at = |eph: i64| (c, m, eph - GI - nodefs(eph));
    let gb = |n: i64| n * 1_000_000_000;
    let probes = [
        // RAID0 on a type without instance store: the block devices decide, here none → 20Gi.
        (
            "raid-none",
            "m5.large",
            json!({"instanceStorePolicy": "RAID0"}),
            ROOT,
        ),
        // ... a root volume of 100Gi.
        (
            "raid-none-root",
            "m5.large",
            json!({"instanceStorePolicy": "RAID0", "blockDeviceMappings": bdm("/dev/xvda", "100Gi", true)}),
            100 * GI,
        ),
        // RAID0 on m5d.large (75 GB NVMe): the instance store wins over the root volume.
        (
            "raid-store",
            "m5d.large",
            json!({"instanceStorePolicy": "RAID0", "blockDeviceMappings": bdm("/dev/xvda", "100Gi", true)}),
            gb(75),
        ),
        // Without the policy the store is not ephemeral storage.
        (
            "store-no-raid",
            "m5d.large",
            json!({"blockDeviceMappings": bdm("/dev/xvda", "100Gi", true)}),
            100 * GI,
        ),
        // Bottlerocket's ephemeral device is /dev/xvdb: a /dev/xvda mapping without
        // `rootVolume` is not it, the family default (20Gi) stays.
        (
            "br-xvda",
            "m5.large",
            json!({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                "blockDeviceMappings": bdm("/dev/xvda", "100Gi", false)}),
            ROOT,
        ),
        // ... a /dev/xvdb mapping is.
        (
            "br-xvdb",
            "m5.large",
            json!({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                "blockDeviceMappings": bdm("/dev/xvdb", "60Gi", false)}),
            60 * GI,
        ),
        // AL2023 with a mapping of another device and no `rootVolume`: the default 20Gi.
        (
            "al2023-other",
            "m5.large",
            json!({"blockDeviceMappings": bdm("/dev/xvdc", "100Gi", false)}),
            ROOT,
        ),
    ];
    let mut probes: Vec<_> = probes
        .into_iter()
        .map(|(name, it, class, eph)| {
            let (c, m, e) = at(eph);
            probe(name, it, class).alloc(c, m, e)
        })
        .collect();
    // Windows: its device is /dev/sda1 (50Gi by default); a /dev/xvda mapping is not it. Pods
    // 110, kube-reserved 1465Mi.
    probes.push(
        probe(
            "win-xvda",
            "m5.large",
            json!({"amiSelectorTerms": [{"alias": "windows2022@latest"}],
                "blockDeviceMappings": bdm("/dev/xvda", "100Gi", false)}),
        )
        .alloc(
            1930,
            t3l_mem() - 1465 * MI - 100 * MI,
            WINDOWS_ROOT - GI - nodefs(WINDOWS_ROOT),
        ),
    );
    run_with(&probes, &[]);
}

/// Metal and arm64 sizes (`types.go` `memory`: 64 MiB of CMA off arm64 first; `cpu`;
/// `kubeReservedResources` bands up to 96 vCPUs; `ENILimitedPods` on the default card's 15 ENIs ×
/// 50 addresses = 737 pods, 11 × 737 + 255 = 8362Mi) and the controller settings
/// `--reserved-enis` / `--vm-memory-overhead-percent` together (`pods` with reserved ENIs for
/// the capacity and, on Bottlerocket, for kube-reserved memory; AL2023 keeps the unreserved
/// count): all agree.
#[test]
fn metal_arm64_and_controller_settings_size_types_as_upstream() {
    let eph = ROOT - GI - nodefs(ROOT);
    run_with(
        &[
            probe("metal", "m5.metal", kubelet(json!({}))).alloc(
                96_000 - 310,
                capacity_mib(393216) * MI - 8362 * MI - 100 * MI,
                eph,
            ),
            probe("metal-arm", "m6g.metal", kubelet(json!({}))).alloc(
                64_000 - 230,
                arm64_capacity_mib(262144) * MI - 8362 * MI - 100 * MI,
                eph,
            ),
            // c6g.medium: 1 vCPU (60m), 2 ENIs × 4 → 8 pods (343Mi).
            probe("arm-small", "c6g.medium", kubelet(json!({})))
                .alloc(
                    940,
                    arm64_capacity_mib(2048) * MI - 343 * MI - 100 * MI,
                    eph,
                )
                .pods(8),
        ],
        &[],
    );
    // 50 % VM overhead, 3 reserved ENIs: m5.xlarge keeps 1 of 4 ENIs → 16 pods; memory
    // 16384 − 8192 = 8192Mi.
    let half = 8192 * MI;
    run_with(
        &[
            probe("res3", "m5.xlarge", kubelet(json!({})))
                .alloc(M5X_CPU - 80, half - 893 * MI - 100 * MI, eph)
                .pods(16),
            probe(
                "res3-br",
                "m5.xlarge",
                alias("bottlerocket@latest", json!({})),
            )
            .alloc(M5X_CPU - 80, half - 431 * MI - 100 * MI, eph)
            .pods(16),
            // t3.large has 3 ENIs: none left, no pod.
            probe("res3-t3", "t3.large", kubelet(json!({}))).nothing_fits(),
            // Windows ignores reserved ENIs (no ENI-limited density): 110 pods, 1465Mi.
            probe(
                "res3-win",
                "m5.xlarge",
                alias("windows2022@latest", json!({})),
            )
            .alloc(
                M5X_CPU - 80,
                half - 1465 * MI - 100 * MI,
                WINDOWS_ROOT - GI - nodefs(WINDOWS_ROOT),
            ),
        ],
        &[
            "--reserved-enis",
            "3",
            "--vm-memory-overhead-percent",
            "0.5",
        ],
    );
}
