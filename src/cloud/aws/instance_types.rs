//! DescribeInstanceTypes answers → the catalog's [`InstanceFacts`], exactly as
//! `scripts/gen_catalog.py` reduces moto's bundled data (so a live catalog and the embedded
//! snapshot agree type for type). Karpenter's selection: HVM and `x86_64` or `arm64`.

use aws_sdk_ec2::types::InstanceTypeInfo;

use crate::cloud::catalog::{AcceleratorFacts, EnaSupport, GpuFacts, InstanceFacts};

/// Karpenter's `lowerKabobCase`.
fn lower_kebab(s: &str) -> String {
    s.replace(' ', "-").to_lowercase()
}

/// Go's `math.Round` (half away from zero), which `f64::round` is.
fn go_round(x: f64) -> i64 {
    x.round() as i64
}

/// `x86_64`/`arm64` → Kubernetes names, sorted and deduplicated (the generator's order).
fn kube_architectures(info: &InstanceTypeInfo) -> Vec<String> {
    let mut out: Vec<String> = info
        .processor_info()
        .map(|p| p.supported_architectures())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| match a.as_str() {
            "x86_64" => Some("amd64".to_string()),
            "arm64" => Some("arm64".to_string()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `"200 Gigabit"` / `"16x 100 Gigabit"` → a fixed total in Gbit (not `"Up to …"`).
fn fixed_performance_gbit(performance: &str) -> Option<f64> {
    let rest = performance.strip_suffix(" Gigabit")?;
    let (count, value) = match rest.split_once("x ") {
        Some((n, v)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
            (n.parse::<f64>().ok()?, v)
        }
        _ => (1.0, rest),
    };
    let numeric = !value.is_empty()
        && value.chars().all(|c| c.is_ascii_digit() || c == '.')
        && value.chars().next().is_some_and(|c| c.is_ascii_digit());
    if !numeric {
        return None;
    }
    Some(count * value.parse::<f64>().ok()?)
}

/// One InstanceTypeInfo → facts; `None` when Karpenter would not select it.
pub(super) fn facts(info: &InstanceTypeInfo) -> Option<InstanceFacts> {
    let name = info.instance_type()?.as_str().to_string();
    let architectures = kube_architectures(info);
    let hvm = info
        .supported_virtualization_types()
        .iter()
        .any(|v| v.as_str() == "hvm");
    if !hvm || architectures.is_empty() {
        return None;
    }
    let network = info.network_info();
    let default_index = network
        .and_then(|n| n.default_network_card_index())
        .unwrap_or(0);
    let default_card = network.and_then(|n| {
        n.network_cards()
            .iter()
            .find(|c| c.network_card_index() == Some(default_index))
    });
    let max_enis = default_card
        .and_then(|c| c.maximum_network_interfaces())
        .or_else(|| network.and_then(|n| n.maximum_network_interfaces()))
        .unwrap_or(0);
    // Each card's interface limit at its index, as `scripts/gen_catalog.py` records it (`None`
    // if EC2 ever numbered the cards otherwise than 0..n-1).
    let network_cards = network.and_then(|n| {
        let mut cards: Vec<(i32, i64)> = n
            .network_cards()
            .iter()
            .map(|c| {
                (
                    c.network_card_index().unwrap_or(0),
                    c.maximum_network_interfaces().unwrap_or(0).into(),
                )
            })
            .collect();
        cards.sort();
        let contiguous = cards
            .iter()
            .enumerate()
            .all(|(i, (index, _))| *index as usize == i);
        contiguous.then(|| cards.into_iter().map(|(_, max)| max).collect())
    });
    let network_bandwidth_mbps = network.and_then(|n| {
        if let Some(gbit) = n.network_performance().and_then(fixed_performance_gbit) {
            return Some(go_round(gbit * 1000.0));
        }
        let baselines: Vec<f64> = n
            .network_cards()
            .iter()
            .filter_map(|c| c.baseline_bandwidth_in_gbps())
            .collect();
        (!baselines.is_empty()).then(|| go_round(baselines.iter().sum::<f64>() * 1000.0))
    });
    let gpus = info.gpu_info().map(|g| g.gpus()).unwrap_or_default();
    let gpu = match gpus {
        [g] => Some(GpuFacts {
            name: lower_kebab(g.name().unwrap_or_default()),
            manufacturer: lower_kebab(g.manufacturer().unwrap_or_default()),
            count: g.count().unwrap_or(0).into(),
            memory_mib: g.memory_info().and_then(|m| m.size_in_mib()).map(i64::from),
        }),
        _ => None,
    };
    let accelerator = match info.neuron_info() {
        Some(neuron) => match neuron.neuron_devices() {
            [d] => Some(AcceleratorFacts {
                name: lower_kebab(d.name().unwrap_or_default()),
                manufacturer: "aws".into(),
                count: d.count().unwrap_or(0).into(),
                cores: d.core_info().and_then(|c| c.count()).map(i64::from),
            }),
            _ => None,
        },
        None => match info
            .inference_accelerator_info()
            .map(|a| a.accelerators())
            .unwrap_or_default()
        {
            [a] => Some(AcceleratorFacts {
                name: lower_kebab(a.name().unwrap_or_default()),
                manufacturer: lower_kebab(a.manufacturer().unwrap_or_default()),
                count: a.count().unwrap_or(0).into(),
                cores: None,
            }),
            _ => None,
        },
    };
    let ebs_bandwidth_mbps = info.ebs_info().and_then(|e| {
        if e.ebs_optimized_support().map(|s| s.as_str()) != Some("default") {
            return None;
        }
        e.ebs_optimized_info()
            .and_then(|o| o.maximum_bandwidth_in_mbps())
            .map(i64::from)
    });
    let (local_storage_gb, local_nvme) = match info.instance_storage_info() {
        Some(s) => (
            s.total_size_in_gb().unwrap_or(0),
            s.nvme_support()
                .is_some_and(|n| n.as_str() != "unsupported"),
        ),
        None => (0, false),
    };
    let processor = info.processor_info();
    let mut usage_classes: Vec<String> = info
        .supported_usage_classes()
        .iter()
        .map(|u| u.as_str().to_string())
        .filter(|u| u == "on-demand" || u == "spot")
        .collect();
    usage_classes.sort();
    usage_classes.dedup();
    Some(InstanceFacts {
        name,
        vcpu: info
            .v_cpu_info()
            .and_then(|v| v.default_v_cpus())
            .unwrap_or(0)
            .into(),
        memory_mib: info
            .memory_info()
            .and_then(|m| m.size_in_mib())
            .unwrap_or(0),
        architectures,
        hypervisor: info.hypervisor().map(|h| h.as_str().to_string()),
        bare_metal: info.bare_metal().unwrap_or(false),
        current_generation: info.current_generation().unwrap_or(false),
        max_enis: max_enis.into(),
        ipv4_per_eni: network
            .and_then(|n| n.ipv4_addresses_per_interface())
            .unwrap_or(0)
            .into(),
        efa_max_interfaces: network
            .and_then(|n| n.efa_info())
            .and_then(|e| e.maximum_efa_interfaces())
            .unwrap_or(0)
            .into(),
        network_cards,
        ena_support: network
            .and_then(|n| n.ena_support())
            .and_then(|e| EnaSupport::parse(e.as_str())),
        // `compatibility.go` `placementGroupCompatibility` / `nestedVirtualizationCompatibility`.
        placement_group_strategies: Some(
            info.placement_group_info()
                .map(|p| {
                    p.supported_strategies()
                        .iter()
                        .map(|s| s.as_str().to_string())
                        .collect()
                })
                .unwrap_or_default(),
        ),
        processor_features: Some(
            processor
                .map(|p| {
                    p.supported_features()
                        .iter()
                        .map(|f| f.as_str().to_string())
                        .collect()
                })
                .unwrap_or_default(),
        ),
        gpu,
        accelerator,
        local_storage_gb,
        local_nvme,
        cpu_manufacturer: processor.and_then(|p| p.manufacturer()).map(lower_kebab),
        sustained_clock_speed_mhz: processor
            .and_then(|p| p.sustained_clock_speed_in_ghz())
            .map(|ghz| go_round(ghz * 1000.0)),
        ebs_bandwidth_mbps,
        network_bandwidth_mbps,
        encryption_in_transit: network
            .and_then(|n| n.encryption_in_transit_supported())
            .unwrap_or(false),
        usage_classes,
        on_demand_price: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_ec2::types::{
        ArchitectureType, InstanceType, NetworkCardInfo, NetworkInfo, ProcessorInfo, VCpuInfo,
        VirtualizationType,
    };

    #[test]
    fn fixed_performance_parses_like_the_generator() {
        assert_eq!(fixed_performance_gbit("200 Gigabit"), Some(200.0));
        assert_eq!(fixed_performance_gbit("16x 100 Gigabit"), Some(1600.0));
        assert_eq!(fixed_performance_gbit("12.5 Gigabit"), Some(12.5));
        assert_eq!(fixed_performance_gbit("Up to 12.5 Gigabit"), None);
        assert_eq!(fixed_performance_gbit("Moderate"), None);
    }

    #[test]
    fn selection_and_reduction() {
        let info = |virt: &str, arch: &str| {
            InstanceTypeInfo::builder()
                .instance_type(InstanceType::from("c6a.2xlarge"))
                .supported_virtualization_types(VirtualizationType::from(virt))
                .processor_info(
                    ProcessorInfo::builder()
                        .supported_architectures(ArchitectureType::from(arch))
                        .manufacturer("AMD")
                        .sustained_clock_speed_in_ghz(3.6)
                        .supported_features(
                            aws_sdk_ec2::types::SupportedAdditionalProcessorFeature::from(
                                "nested-virtualization",
                            ),
                        )
                        .build(),
                )
                .placement_group_info(
                    aws_sdk_ec2::types::PlacementGroupInfo::builder()
                        .supported_strategies(aws_sdk_ec2::types::PlacementGroupStrategy::Partition)
                        .build(),
                )
                .v_cpu_info(VCpuInfo::builder().default_v_cpus(8).build())
                .network_info(
                    NetworkInfo::builder()
                        .network_performance("Up to 12.5 Gigabit")
                        .maximum_network_interfaces(9)
                        .network_cards(
                            NetworkCardInfo::builder()
                                .network_card_index(1)
                                .maximum_network_interfaces(2)
                                .build(),
                        )
                        .network_cards(
                            NetworkCardInfo::builder()
                                .network_card_index(0)
                                .maximum_network_interfaces(4)
                                .baseline_bandwidth_in_gbps(3.125)
                                .build(),
                        )
                        .ena_support(aws_sdk_ec2::types::EnaSupport::Required)
                        .ipv4_addresses_per_interface(15)
                        .build(),
                )
                .build()
        };
        assert!(facts(&info("paravirtual", "x86_64")).is_none());
        assert!(facts(&info("hvm", "i386")).is_none());
        let f = facts(&info("hvm", "x86_64")).unwrap();
        assert_eq!(f.name, "c6a.2xlarge");
        assert_eq!(f.architectures, ["amd64"]);
        assert_eq!(f.vcpu, 8);
        assert_eq!(f.max_enis, 4, "the default card's limit wins");
        assert_eq!(f.network_cards, Some(vec![4, 2]), "by card index");
        assert_eq!(f.ena_support, Some(EnaSupport::Required));
        assert_eq!(f.ipv4_per_eni, 15);
        assert_eq!(f.network_bandwidth_mbps, Some(3125));
        assert_eq!(f.cpu_manufacturer.as_deref(), Some("amd"));
        assert_eq!(f.sustained_clock_speed_mhz, Some(3600));
        assert_eq!(f.on_demand_price, None);
        // What the nested-virtualization and placement-group compatibility checks read.
        assert_eq!(
            f.processor_features,
            Some(vec!["nested-virtualization".to_string()])
        );
        assert_eq!(
            f.placement_group_strategies,
            Some(vec!["partition".to_string()])
        );
    }
}
