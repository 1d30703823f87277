//! The catalog: AWS sizing and labels from the embedded snapshot, spot prices, notes, names,
//! schema checks and prices of running instances. (Custom-catalog tests are in `custom.rs`.)

use super::aws::*;
use super::*;
use crate::model::labels;
use crate::model::quantity::{GIB, MIB, ONE};
use crate::model::requirements::{Operator, Requirement, Requirements};

fn embedded_types(ctx: &InstanceTypeContext) -> Vec<InstanceType> {
    Catalog::embedded()
        .expect("embedded snapshot parses")
        .instance_types(ctx)
        .expect("known region")
}

/// The offerings in the type's own zones (`itZones`): the others are listed unavailable
/// (`base_resolver.go`: an offering in every zone of `allZones`).
fn own(t: &InstanceType) -> Vec<&crate::model::instance_type::Offering> {
    let zones = t.requirements.get(labels::ZONE);
    t.offerings.iter().filter(|o| zones.has(&o.zone)).collect()
}

pub(super) fn find<'a>(types: &'a [InstanceType], name: &str) -> &'a InstanceType {
    types
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

pub(super) fn values(t: &InstanceType, key: &str) -> Vec<String> {
    t.requirements.get(key).values().iter().cloned().collect()
}

pub(super) fn label(t: &InstanceType, key: &str) -> String {
    let r = t.requirements.get(key);
    assert_eq!(r.operator(), Operator::In, "{key} on {}", t.name);
    assert_eq!(r.values().len(), 1, "{key} on {}", t.name);
    r.values().iter().next().cloned().unwrap_or_default()
}

#[test]
fn c6a_2xlarge_in_us_east_1_on_al2() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2"));
    let t = find(&types, "c6a.2xlarge");
    assert_eq!(t.capacity.cpu, 8000);
    assert_eq!(t.capacity.pods, 58 * ONE);
    assert_eq!(
        t.capacity.memory,
        (16384 - 1229) * MIB,
        "16384 − ceil(16384 × 0.075)"
    );
    assert_eq!(t.allocatable().cpu, 7910);
    assert_eq!(label(t, labels::INSTANCE_CATEGORY), "c");
    assert_eq!(label(t, labels::INSTANCE_FAMILY), "c6a");
    assert_eq!(label(t, labels::INSTANCE_GENERATION), "6");
    assert_eq!(label(t, labels::INSTANCE_SIZE), "2xlarge");
    assert_eq!(label(t, labels::ARCH), "amd64");
    assert_eq!(label(t, labels::OS), "linux");
    assert_eq!(label(t, labels::REGION), "us-east-1");
    assert_eq!(label(t, INSTANCE_CPU), "8");
    assert_eq!(label(t, INSTANCE_MEMORY), "16384");
    assert_eq!(label(t, INSTANCE_CPU_MANUFACTURER), "amd");
    assert_eq!(label(t, INSTANCE_CAPABILITY_FLEX), "false");
    assert_eq!(
        t.requirements.get(labels::WINDOWS_BUILD).operator(),
        Operator::DoesNotExist
    );
    assert_eq!(values(t, labels::CAPACITY_TYPE), vec!["on-demand", "spot"]);
    let zones = values(t, labels::ZONE);
    assert!(!zones.is_empty());
    for zone in &zones {
        let od = t
            .offerings
            .iter()
            .find(|o| &o.zone == zone && o.capacity_type == ON_DEMAND)
            .unwrap_or_else(|| panic!("on-demand offering in {zone}"));
        assert_eq!(od.price, 0.306);
        assert!(od.available);
        let spot = t
            .offerings
            .iter()
            .find(|o| &o.zone == zone && o.capacity_type == SPOT);
        assert_eq!(
            spot.map(|o| o.price),
            Some(0.306),
            "spot stands in at the on-demand price"
        );
    }
    assert_eq!(own(t).len(), zones.len() * 2);
    assert!(t
        .offerings
        .iter()
        .all(|o| o.available == zones.contains(&o.zone)));
}

#[test]
fn m5_large_matches_the_worked_example_on_al2023() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let t = find(&types, "m5.large");
    assert_eq!(t.capacity.memory, 7577 * MIB);
    let alloc = t.allocatable();
    assert_eq!(alloc.cpu, 1930);
    assert_eq!(alloc.memory, 6903 * MIB);
    assert_eq!(alloc.pods, 29 * ONE);
    assert_eq!(alloc.ephemeral_storage, 17 * GIB);
    for (name, pods) in [("t3.large", 35), ("m5.xlarge", 58), ("m6idn.32xlarge", 394)] {
        assert_eq!(find(&types, name).capacity.pods, pods * ONE, "{name}");
    }
}

#[test]
fn gpu_and_accelerator_facts_become_capacity_and_requirements() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let g = find(&types, "g4dn.xlarge");
    assert_eq!(g.capacity.get(overhead::NVIDIA_GPU), ONE);
    assert_eq!(values(g, labels::INSTANCE_GPU_COUNT), vec!["1"]);
    assert_eq!(label(g, INSTANCE_GPU_NAME), "t4");
    assert_eq!(label(g, INSTANCE_GPU_MANUFACTURER), "nvidia");
    assert_eq!(label(g, INSTANCE_GPU_MEMORY), "16384");
    assert_eq!(label(g, INSTANCE_LOCAL_NVME), "125");
    assert_eq!(
        g.requirements
            .get(labels::INSTANCE_ACCELERATOR_COUNT)
            .operator(),
        Operator::DoesNotExist
    );

    let plain = find(&types, "m5.large");
    assert_eq!(
        plain
            .requirements
            .get(labels::INSTANCE_GPU_COUNT)
            .operator(),
        Operator::DoesNotExist
    );
    assert_eq!(
        plain.requirements.get(INSTANCE_LOCAL_NVME).operator(),
        Operator::DoesNotExist
    );
    assert!(!plain.capacity.contains(overhead::NVIDIA_GPU));

    let inf = find(&types, "inf2.xlarge");
    assert_eq!(inf.capacity.get(overhead::AWS_NEURON), ONE);
    assert_eq!(label(inf, INSTANCE_ACCELERATOR_NAME), "inferentia2");
    assert_eq!(label(inf, INSTANCE_ACCELERATOR_MANUFACTURER), "aws");
    assert_eq!(
        inf.requirements.get(labels::INSTANCE_GPU_COUNT).operator(),
        Operator::DoesNotExist
    );

    let efa = find(&types, "m6idn.32xlarge");
    assert_eq!(efa.capacity.get(overhead::EFA), 2 * ONE);
    assert_eq!(label(efa, INSTANCE_ENCRYPTION_IN_TRANSIT), "true");

    // An AMI variant for GPUs (`gpu-count Exists`) matches g4dn only.
    let mut gpu_ami = Requirements::new();
    gpu_ami.add(Requirement::exists(labels::INSTANCE_GPU_COUNT));
    assert!(g.requirements.compatible(&gpu_ami, |_| false).is_ok());
    assert!(plain.requirements.compatible(&gpu_ami, |_| false).is_err());
}

#[test]
fn graviton_memory_and_flex_labels() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let t = find(&types, "m6g.large");
    assert_eq!(label(t, labels::ARCH), "arm64");
    assert_eq!(
        t.capacity.memory,
        7518 * MIB,
        "(8192 − 64) − ceil(8128 × 0.075)"
    );
    assert_eq!(
        label(find(&types, "m7i-flex.large"), INSTANCE_CAPABILITY_FLEX),
        "true"
    );
    assert_eq!(
        label(find(&types, "m7i-flex.large"), labels::INSTANCE_FAMILY),
        "m7i-flex"
    );
    let metal = find(&types, "a1.metal");
    assert_eq!(
        label(metal, INSTANCE_HYPERVISOR),
        "",
        "bare metal has no hypervisor"
    );
}

#[test]
fn bottlerocket_ephemeral_storage_and_pod_overhead() {
    let kubelet = KubeletConfig {
        max_pods: Some(110),
        ..KubeletConfig::default()
    };
    let devices = [
        BlockDevice {
            device_name: Some("/dev/xvda".into()),
            root_volume: false,
            volume_size: Some(4 * GIB),
            ..BlockDevice::default()
        },
        BlockDevice {
            device_name: Some("/dev/xvdb".into()),
            root_volume: false,
            volume_size: Some(100 * GIB),
            ..BlockDevice::default()
        },
    ];
    let mut ctx = InstanceTypeContext::new("us-east-1", "Bottlerocket");
    let t = find(&embedded_types(&ctx), "m5.large").clone();
    assert_eq!(
        t.capacity.ephemeral_storage,
        20 * GIB,
        "the 20Gi data volume"
    );
    ctx.kubelet = Some(&kubelet);
    ctx.block_devices = &devices;
    let t = find(&embedded_types(&ctx), "m5.large").clone();
    assert_eq!(t.capacity.ephemeral_storage, 100 * GIB, "/dev/xvdb mapping");
    assert_eq!(t.capacity.pods, 110 * ONE);
    assert_eq!(
        t.overhead.kube_reserved.memory,
        (11 * 110 + 255) * MIB,
        "effective pods on Bottlerocket"
    );
    assert_eq!(t.overhead.eviction_threshold.ephemeral_storage, 10 * GIB);
}

#[test]
fn raid0_uses_instance_storage() {
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.instance_store_policy = Some("RAID0");
    let t = find(&embedded_types(&ctx), "g4dn.xlarge").clone();
    assert_eq!(t.capacity.ephemeral_storage, 125_000_000_000 * ONE);
}

#[test]
fn windows_families_have_only_amd64_types_labelled_windows() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "Windows2022"));
    assert!(!types.is_empty());
    assert!(types.iter().all(|t| label(t, labels::ARCH) == "amd64"));
    assert!(types.iter().all(|t| label(t, labels::OS) == "windows"));
    assert!(types.iter().all(|t| t.name != "m6g.large"));
    let t = find(&types, "m5.large");
    assert_eq!(label(t, labels::WINDOWS_BUILD), "10.0.20348");
    assert_eq!(t.capacity.pods, 110 * ONE);
    assert_eq!(t.capacity.ephemeral_storage, 50 * GIB);
    assert_eq!(t.capacity.get(overhead::PRIVATE_IPV4_ADDRESS), 9 * ONE);
}

/// aws v1.14.1 `pkg/providers/instancetype/types.go` `awsPodENI` and `privateIPv4Address`, read
/// from the VPC resource controller's table (`zz_generated.vpclimits.go`): pod-eni capacity is a
/// trunking-compatible type's branch ENIs (m5.large 9), none on t3.large (not
/// trunking-compatible) nor on a type newer than the table (t8i.small); on Windows a type
/// missing from the table has no `PrivateIPv4Address` (instancetype suite "should not launch
/// instance type for vpc.amazonaws.com/PrivateIPv4Address if VPC resource controller doesn't
/// advertise it").
#[test]
fn pod_eni_and_private_ipv4_capacity_come_from_the_vpc_limits_table() {
    let linux = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    assert_eq!(
        find(&linux, "m5.large").capacity.get(overhead::POD_ENI),
        9 * ONE
    );
    assert_eq!(
        find(&linux, "a1.medium").capacity.get(overhead::POD_ENI),
        10 * ONE
    );
    assert!(!find(&linux, "t3.large")
        .capacity
        .contains(overhead::POD_ENI));
    assert!(!find(&linux, "t8i.small")
        .capacity
        .contains(overhead::POD_ENI));
    assert!(!find(&linux, "m5.large")
        .capacity
        .contains(overhead::PRIVATE_IPV4_ADDRESS));

    let windows = embedded_types(&InstanceTypeContext::new("us-east-1", "Windows2022"));
    assert_eq!(
        find(&windows, "t3.large")
            .capacity
            .get(overhead::PRIVATE_IPV4_ADDRESS),
        11 * ONE
    );
    let unlisted = find(&windows, "t8i.small");
    assert!(unlisted.capacity.pods > 0);
    assert!(!unlisted.capacity.contains(overhead::PRIVATE_IPV4_ADDRESS));
}

/// The embedded snapshot writes a type's zones as letters (`"abc"`), expanded with the region's
/// zone names; a live catalog's cache writes them out, and both read the same.
#[test]
fn zones_written_as_letters_or_names_read_the_same() {
    let letters: super::snapshot::RegionFacts = serde_json::from_str(
        r#"{"zones":["eu-west-1a","eu-west-1b","eu-west-1c"],"offerings":{"m5.large":"ac"}}"#,
    )
    .unwrap();
    let names: super::snapshot::RegionFacts = serde_json::from_str(
        r#"{"zones":["eu-west-1a","eu-west-1b","eu-west-1c"],"offerings":{"m5.large":["eu-west-1a","eu-west-1c"]}}"#,
    )
    .unwrap();
    assert_eq!(letters, names);
    assert_eq!(letters.offerings["m5.large"], ["eu-west-1a", "eu-west-1c"]);
    // Written back (the live cache), the names are kept.
    let again: super::snapshot::RegionFacts =
        serde_json::from_str(&serde_json::to_string(&letters).unwrap()).unwrap();
    assert_eq!(again, letters);
    // Letters with no zones to name (a damaged cache) name nothing; no panic.
    let empty: super::snapshot::RegionFacts =
        serde_json::from_str(r#"{"zones":[],"offerings":{"m5.large":"ab"}}"#).unwrap();
    assert!(empty.offerings["m5.large"].is_empty());
}

/// The embedded snapshot covers every commercial region moto bundles offerings for, each with
/// its own zones; prices are us-east-1's everywhere.
#[test]
fn the_embedded_catalog_covers_the_commercial_regions() {
    let catalog = Catalog::embedded().unwrap();
    let regions = catalog.regions();
    for r in [
        "eu-west-1",
        "eu-central-1",
        "ap-southeast-1",
        "ap-northeast-1",
        "sa-east-1",
    ] {
        assert!(regions.contains(&r), "{r} in {regions:?}");
    }
    assert!(regions.len() >= 30, "{regions:?}");
    let types = embedded_types(&InstanceTypeContext::new("eu-west-1", "AL2023"));
    let t = find(&types, "m5.large");
    assert_eq!(label(t, labels::REGION), "eu-west-1");
    assert_eq!(
        values(t, labels::ZONE),
        ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    );
    assert!(
        t.offerings.iter().all(|o| o.price == 0.096),
        "us-east-1 list price"
    );
}

#[test]
fn zones_region_and_prices() {
    let subnets = vec!["us-east-1a".to_string(), "us-east-1b".to_string()];
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.zones = Some(&subnets);
    let types = embedded_types(&ctx);
    assert!(
        types.windows(2).all(|w| w[0].name < w[1].name),
        "sorted by name"
    );
    let t = find(&types, "c6a.2xlarge");
    assert_eq!(values(t, labels::ZONE), subnets);
    assert!(t
        .offerings
        .iter()
        .all(|o| o.available == subnets.contains(&o.zone)));

    let other = embedded_types(&InstanceTypeContext::new("us-west-2", "AL2023"));
    let t = find(&other, "c6a.2xlarge");
    assert_eq!(label(t, labels::REGION), "us-west-2");
    assert!(
        t.offerings.iter().all(|o| o.price == 0.306),
        "us-east-1 price as the estimate"
    );

    let err = Catalog::embedded()
        .unwrap()
        .instance_types(&InstanceTypeContext::new("mars-1", "AL2"))
        .unwrap_err();
    assert!(matches!(err, CatalogError::UnknownRegion { .. }));
    assert!(err.to_string().contains("us-east-1"), "{err}");

    // Types without a price are listed but can never be chosen.
    let snapshot = Catalog::embedded().unwrap();
    let all = snapshot
        .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
        .unwrap();
    let unpriced: Vec<&InstanceType> = all
        .iter()
        .filter(|t| t.offerings.iter().all(|o| !o.available))
        .collect();
    assert!(unpriced
        .iter()
        .all(|t| t.cheapest_offering(&Requirements::new()).is_none()));
    assert!(snapshot.notes().iter().any(|n| n.contains("spot")));
}

/// The embedded snapshot, m5.large without its on-demand price.
fn embedded_snapshot_without_m5_large_price() -> AwsSnapshot {
    let mut snap = Catalog::embedded().unwrap().aws_snapshot().unwrap().clone();
    let m5 = snap
        .instance_types
        .iter_mut()
        .find(|t| t.name == "m5.large")
        .unwrap();
    m5.on_demand_price = None;
    snap
}

/// The embedded snapshot with spot prices for c6a.2xlarge in us-east-1a (0.1) and for
/// m5.large (whose on-demand price is removed) in us-east-1a (0.04).
fn with_spot_prices() -> Catalog {
    let mut snap = embedded_snapshot_without_m5_large_price();
    let region = snap.regions.get_mut("us-east-1").unwrap();
    for (t, p) in [("c6a.2xlarge", 0.1), ("m5.large", 0.04)] {
        region
            .spot_prices
            .entry(t.to_string())
            .or_default()
            .insert("us-east-1a".to_string(), p);
    }
    snap.source = "live test".into();
    Catalog::from_snapshot(snap).unwrap()
}

#[test]
fn spot_offerings_take_the_zone_spot_price_else_the_on_demand_stand_in() {
    let catalog = with_spot_prices();
    let types = catalog
        .instance_types(&InstanceTypeContext::new("us-east-1", "AL2023"))
        .unwrap();
    let offering = |t: &InstanceType, zone: &str, ct: &str| {
        t.offerings
            .iter()
            .find(|o| o.zone == zone && o.capacity_type == ct)
            .cloned()
            .unwrap_or_else(|| panic!("{} {zone} {ct}", t.name))
    };
    let c6a = find(&types, "c6a.2xlarge");
    let spot = offering(c6a, "us-east-1a", SPOT);
    assert_eq!((spot.price, spot.available), (0.1, true), "the spot price");
    // aws v1.14.1 `pkg/controllers/providers/pricing/suite_test.go` "should respond with false
    // if price doesn't exist in zone": once spot prices are loaded, a zone without one has none,
    // so the offering is unavailable (`base_resolver.go`: `Available` needs a price).
    let spot_b = offering(c6a, "us-east-1b", SPOT);
    assert_eq!(
        (spot_b.price, spot_b.available),
        (0.0, false),
        "no spot price in that zone: no spot offering there"
    );
    assert_eq!(offering(c6a, "us-east-1a", ON_DEMAND).price, 0.306);

    let m5 = find(&types, "m5.large");
    let spot = offering(m5, "us-east-1a", SPOT);
    assert_eq!(
        (spot.price, spot.available),
        (0.04, true),
        "a spot price makes the spot offering available without an on-demand price"
    );
    assert!(!offering(m5, "us-east-1b", SPOT).available);
    assert!(!offering(m5, "us-east-1a", ON_DEMAND).available);

    // Other regions have no spot prices: stand-ins everywhere.
    let west = catalog
        .instance_types(&InstanceTypeContext::new("us-west-2", "AL2023"))
        .unwrap();
    let c6a = find(&west, "c6a.2xlarge");
    assert!(c6a
        .offerings
        .iter()
        .all(|o| o.price == 0.306 && o.available));

    assert_eq!(
        catalog.hourly_price("c6a.2xlarge", "us-east-1a", SPOT),
        Some(0.1)
    );
    assert_eq!(
        catalog.hourly_price("c6a.2xlarge", "us-east-1b", SPOT),
        None
    );
    assert_eq!(
        catalog.hourly_price("c6a.2xlarge", "us-east-1b", ON_DEMAND),
        Some(0.306)
    );

    let notes = catalog.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("spot: DescribeSpotPriceHistory prices (2 types)")),
        "{notes:?}"
    );
    assert!(!notes
        .iter()
        .any(|n| n.contains("never count on spot savings")));
}

#[test]
fn without_spot_prices_the_notes_say_spot_is_a_stand_in() {
    let embedded = Catalog::embedded().unwrap();
    let notes = embedded.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("spot: no spot prices offline")),
        "{notes:?}"
    );
    let mut snap = embedded.aws_snapshot().unwrap().clone();
    snap.source = "live DescribeInstanceTypes/DescribeInstanceTypeOfferings for us-east-1; \
                   no spot prices (denied)"
        .into();
    let live = Catalog::from_snapshot(snap).unwrap();
    let notes = live.notes();
    assert!(notes[0].contains("no spot prices (denied)"), "{notes:?}");
    assert!(
        notes.iter().any(
            |n| n.starts_with("spot: no DescribeSpotPriceHistory prices")
                && n.contains("on-demand price")
        ),
        "{notes:?}"
    );
}

#[test]
fn spot_prices_serialize_only_when_present() {
    let empty = RegionFacts {
        zones: vec!["z1".into()],
        ..RegionFacts::default()
    };
    let text = serde_json::to_string(&empty).unwrap();
    assert_eq!(text, r#"{"zones":["z1"],"offerings":{}}"#);
    assert_eq!(serde_json::from_str::<RegionFacts>(&text).unwrap(), empty);
    let mut priced = empty.clone();
    priced
        .spot_prices
        .entry("m5.large".into())
        .or_default()
        .insert("z1".into(), 0.0361);
    let text = serde_json::to_string(&priced).unwrap();
    assert!(
        text.contains(r#""spotPrices":{"m5.large":{"z1":0.0361}}"#),
        "{text}"
    );
    let back: RegionFacts = serde_json::from_str(&text).unwrap();
    assert_eq!(back.spot_price("m5.large", "z1"), Some(0.0361));
    assert_eq!(back.spot_price("m5.large", "z2"), None);
}

#[test]
fn on_demand_only_types_have_no_spot_offering() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let Some(t) = types.iter().find(|t| t.name == "t2.nano") else {
        return;
    };
    assert!(t.offerings.iter().all(|o| o.capacity_type == ON_DEMAND));
    assert_eq!(values(t, labels::CAPACITY_TYPE), vec!["on-demand"]);
}

#[test]
fn names_imply_category_generation_and_arch() {
    assert_eq!(category_and_generation("m5.large"), Some(("m", "5")));
    assert_eq!(category_and_generation("g4dn.8xlarge"), Some(("g", "4")));
    assert_eq!(category_and_generation("u-6tb1.metal"), Some(("u", "1")));
    assert_eq!(
        category_and_generation("u7i-12tb.224xlarge"),
        Some(("u", "7"))
    );
    assert_eq!(category_and_generation("m7i-flex.large"), Some(("m", "7")));
    assert_eq!(category_and_generation("x2iezn.2xlarge"), Some(("x", "2")));
    assert_eq!(category_and_generation("Standard_D4s_v5"), None);
    assert_eq!(category_and_generation("m5"), None, "the regex needs a dot");
    for (name, arch) in [
        ("m6g.large", "arm64"),
        ("c7gn.xlarge", "arm64"),
        ("r8gd.medium", "arm64"),
        ("is4gen.large", "arm64"),
        ("g5g.xlarge", "arm64"),
        ("t4g.nano", "arm64"),
        ("a1.large", "arm64"),
        ("mac2.metal", "arm64"),
        ("g4dn.xlarge", "amd64"),
        ("m5.large", "amd64"),
        ("mac1.metal", "amd64"),
        ("u7in-16tb.224xlarge", "amd64"),
        ("n2-standard-4", "amd64"),
    ] {
        assert_eq!(arch_from_name(name), arch, "{name}");
    }
    // The rule agrees with EC2 on every type of the snapshot.
    let Source::Aws(snapshot) = &*Catalog::embedded().unwrap().inner else {
        unreachable!()
    };
    for t in &snapshot.instance_types {
        assert_eq!(arch_from_name(&t.name), t.architectures[0], "{}", t.name);
    }
}

#[test]
fn snapshot_schema_is_checked() {
    let err = Catalog::from_snapshot_json(r#"{"schemaVersion":2,"instanceTypes":[],"regions":{}}"#)
        .unwrap_err();
    assert!(matches!(err, CatalogError::Snapshot(_)), "{err}");
    assert!(Catalog::from_snapshot_json("{}").is_err());
}

#[test]
fn hourly_prices_of_running_instances() {
    let aws = Catalog::embedded().unwrap();
    assert_eq!(
        aws.hourly_price("m5.large", "us-east-1a", ON_DEMAND),
        Some(0.096)
    );
    assert_eq!(
        aws.hourly_price("m5.large", "eu-west-1b", ON_DEMAND),
        Some(0.096),
        "us-east-1 list prices are the estimate everywhere"
    );
    assert_eq!(
        aws.hourly_price("m5.large", "us-east-1a", SPOT),
        None,
        "no spot prices offline"
    );
    assert_eq!(aws.hourly_price("no.such", "us-east-1a", ON_DEMAND), None);
    let json = r#"{"instanceTypes":[{"name":"n2","capacity":{"cpu":"4","memory":"16Gi"},
        "offerings":[{"zone":"z1","capacityType":"spot","price":0.05},
                     {"zone":"z1","capacityType":"on-demand","price":0.2}]}]}"#;
    let custom = Catalog::from_custom_text("shapes.json", json).unwrap();
    assert_eq!(custom.hourly_price("n2", "z1", SPOT), Some(0.05));
    assert_eq!(custom.hourly_price("n2", "z1", ON_DEMAND), Some(0.2));
    assert_eq!(custom.hourly_price("n2", "z2", SPOT), None);
}

// ---------------------------------------------- aws: pkg/providers/instancetype/suite_test.go

/// The embedded snapshot with `m5.large` also offered in the local zone `us-east-1-bos-1a`
/// (DescribeInstanceTypeOfferings lists the local zones an account opted into as
/// availability zones) and without its on-demand price when `unpriced`.
fn with_local_zone(unpriced: bool) -> Catalog {
    let mut snap = if unpriced {
        embedded_snapshot_without_m5_large_price()
    } else {
        Catalog::embedded().unwrap().aws_snapshot().unwrap().clone()
    };
    let region = snap.regions.get_mut("us-east-1").unwrap();
    region.zones.push("us-east-1-bos-1a".into());
    region
        .offerings
        .get_mut("m5.large")
        .unwrap()
        .push("us-east-1-bos-1a".into());
    Catalog::from_snapshot(snap).unwrap()
}

/// "should launch instances in local zones": a node class whose only subnet is in a local zone
/// sees the types offered there, in that zone only, available. (The embedded snapshot lists no
/// local zone; a live catalog has those DescribeInstanceTypeOfferings returns.)
#[test]
fn local_zones_are_offered_where_the_subnets_are() {
    let catalog = with_local_zone(false);
    let subnets = vec!["us-east-1-bos-1a".to_string()];
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.zones = Some(&subnets);
    let types = catalog.instance_types(&ctx).unwrap();
    assert_eq!(
        types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["m5.large"],
        "only the type offered in the local zone"
    );
    assert_eq!(values(&types[0], labels::ZONE), subnets);
    assert_eq!(own(&types[0]).len(), 2);
    assert!(types[0]
        .offerings
        .iter()
        .all(|o| o.available == (o.zone == "us-east-1-bos-1a")));
}

/// "Instance Type and NodeClass Compatibility › AMI Compatibility › should mark availability of
/// a1 instance type offerings based on AMI" (both entries): under AL2023 every a1 offering is
/// listed but unavailable; under Bottlerocket they are available. v1beta1 controllers have no
/// such check (`compatibility.go` is v1.12+).
#[test]
fn a1_types_are_unavailable_under_al2023() {
    let a1 = |family: &str, generation: Option<ApiGeneration>| {
        let mut ctx = InstanceTypeContext::new("us-east-1", family);
        ctx.generation = generation;
        let types = embedded_types(&ctx);
        let t = find(&types, "a1.medium").clone();
        assert!(!t.offerings.is_empty(), "{family}: offerings listed");
        own(&t).iter().map(|o| o.available).collect::<Vec<_>>()
    };
    assert!(a1("AL2023", None).iter().all(|a| !a), "AL2023");
    assert!(a1("AL2023", Some(ApiGeneration::V1)).iter().all(|a| !a));
    assert!(a1("Bottlerocket", None).iter().all(|a| *a), "Bottlerocket");
    assert!(a1("AL2023", Some(ApiGeneration::V1Beta1))
        .iter()
        .all(|a| *a));
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    assert!(own(find(&types, "m6g.medium")).iter().all(|o| o.available));
}

/// "NodeOverlay Preview Instance Pricing": "should mark offerings as available when a NodeOverlay
/// defines a price for an unpriced instance type" (on-demand and spot take the overlay's price)
/// and "should not mark offerings as available for unpriced instance types without a
/// NodeOverlay". Which overlays give a price: `model::overlay` `provider_prices`.
#[test]
fn an_overlay_price_makes_an_unpriced_type_available() {
    let catalog = with_local_zone(true);
    let ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    let types = catalog.instance_types(&ctx).unwrap();
    let m5 = find(&types, "m5.large");
    assert!(m5.offerings.iter().all(|o| !o.available && o.price == 0.0));

    let prices = BTreeMap::from([("m5.large".to_string(), 98.32)]);
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.overlay_prices = &prices;
    let types = catalog.instance_types(&ctx).unwrap();
    let m5 = find(&types, "m5.large");
    assert!(m5.offerings.iter().any(|o| o.capacity_type == SPOT));
    assert!(own(m5).iter().all(|o| o.available && o.price == 98.32));
    // A priced type keeps its own price.
    let prices = BTreeMap::from([("c6a.2xlarge".to_string(), 98.32)]);
    ctx.overlay_prices = &prices;
    let types = catalog.instance_types(&ctx).unwrap();
    assert!(find(&types, "c6a.2xlarge")
        .offerings
        .iter()
        .all(|o| o.price == 0.306));
}

/// "Instance Type and NodeClass Compatibility › Network Interfaces › should mark instance type
/// offering as available when it supports network interface configuration" / "… unavailable when
/// it does not support …", and "Network Interfaces › should calculate max pods according when no
/// EFA-only interfaces used on NC 0" (8 × 49 + 2 = 394) / "… according to EFA-only interfaces
/// used" (7 × 49 + 2 = 345). Upstream's dl1.24xlarge (4 EFAs) is not in the snapshot:
/// m6idn.32xlarge (2 EFAs, 8 interfaces on card 0, 50 addresses each) plays it.
#[test]
fn network_interfaces_decide_efa_capacity_max_pods_and_availability() {
    use crate::model::nodepool::NetworkInterface;
    let ni = |card: i64, device: i64, efa_only: bool| NetworkInterface {
        network_card_index: card,
        device_index: device,
        efa_only,
    };
    let m6idn = |nis: Option<&[NetworkInterface]>| {
        let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
        ctx.network_interfaces = nis;
        find(&embedded_types(&ctx), "m6idn.32xlarge").clone()
    };
    let unset = m6idn(None);
    assert_eq!(unset.capacity.pods, 394 * ONE);
    assert_eq!(unset.capacity.get(overhead::EFA), 2 * ONE);
    assert!(own(&unset).iter().all(|o| o.available));

    let efa_on_card_1 = [ni(0, 0, false), ni(1, 0, true)];
    let t = m6idn(Some(&efa_on_card_1));
    assert_eq!(
        t.capacity.pods,
        394 * ONE,
        "no EFA-only interface on card 0"
    );
    assert_eq!(
        t.capacity.get(overhead::EFA),
        ONE,
        "the class's EFA-only interfaces"
    );

    let efa_on_card_0 = [ni(0, 0, false), ni(0, 1, true)];
    let t = m6idn(Some(&efa_on_card_0));
    assert_eq!(t.capacity.pods, 345 * ONE);
    assert!(own(&t).iter().all(|o| o.available), "supported");

    let too_many_efas = [
        ni(0, 0, false),
        ni(0, 1, true),
        ni(1, 0, true),
        ni(2, 0, true),
    ];
    let t = m6idn(Some(&too_many_efas));
    assert!(!t.offerings.is_empty());
    assert!(t.offerings.iter().all(|o| !o.available), "3 EFA-only > 2");
    let beyond_card_0 = [ni(0, 0, false), ni(0, 8, false)];
    assert!(m6idn(Some(&beyond_card_0))
        .offerings
        .iter()
        .all(|o| !o.available));
}

/// **Differs, fixed** (s27-lineaws) — scenario: an AL2023 class with an EFA-only interface on
/// network card 0, m6idn.32xlarge (8 interfaces on card 0, 50 addresses each) → Karpenter v1.14.1
/// sizes kube-reserved memory from `ENILimitedPods(ctx, info, 0, networkInterfaces)` (`aws
/// v1.14.1: pkg/providers/instancetype/types.go` `NewInstanceType`): no reserved ENIs, but the
/// EFA-only interface still takes one, so 345 pods → 11 × 345 + 255 = 4050Mi. We took the
/// interface-less count (394 → 4589Mi), 539Mi less allocatable than Karpenter's. No upstream
/// test; rule from types.go `NewInstanceType` and `ENILimitedPods`. `RESERVED_ENIS` still
/// counts for the pods only.
#[test]
fn efa_only_interfaces_on_card_0_size_kube_reserved_memory_too() {
    use crate::model::nodepool::NetworkInterface;
    let nis = [
        NetworkInterface {
            network_card_index: 0,
            device_index: 0,
            efa_only: false,
        },
        NetworkInterface {
            network_card_index: 0,
            device_index: 1,
            efa_only: true,
        },
    ];
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.network_interfaces = Some(&nis);
    let t = find(&embedded_types(&ctx), "m6idn.32xlarge").clone();
    assert_eq!(t.capacity.pods, 345 * ONE);
    assert_eq!(t.overhead.kube_reserved.memory, (11 * 345 + 255) * MIB);
    ctx.reserved_enis = 1;
    let t = find(&embedded_types(&ctx), "m6idn.32xlarge").clone();
    assert_eq!(
        t.capacity.pods,
        (6 * 49 + 2) * ONE,
        "RESERVED_ENIS=1 as well"
    );
    assert_eq!(
        t.overhead.kube_reserved.memory,
        (11 * 345 + 255) * MIB,
        "reserved ENIs do not size kube-reserved"
    );
}

/// `aws v1.14.1: pkg/providers/instancetype/compatibility/suite_test.go`
/// "NetworkInterfaceCompatibility › should validate network interface compatibility with
/// instance types", every Entry, on upstream's `makeNetworkInfo(cards, interfaces per card,
/// EFAs)`; then what a catalog without the card and ENA facts can still check.
#[test]
fn network_interfaces_compatibility_matches_the_providers_table() {
    use crate::model::nodepool::NetworkInterface;
    let ni = |card: i64, device: i64, efa_only: bool| NetworkInterface {
        network_card_index: card,
        device_index: device,
        efa_only,
    };
    let base = embedded_facts("m5.large");
    let info = |cards: usize, interfaces: i64, efas: i64, ena: EnaSupport| InstanceFacts {
        network_cards: Some(vec![interfaces; cards]),
        max_enis: interfaces,
        efa_max_interfaces: efas,
        ena_support: Some(ena),
        ..base.clone()
    };
    let ena = EnaSupport::Supported;
    let cases: [(&str, Vec<NetworkInterface>, InstanceFacts, bool); 7] = [
        (
            "compatible instance with EFA support and single EFA interface",
            vec![ni(0, 0, false), ni(0, 1, true)],
            info(1, 2, 1, ena),
            true,
        ),
        (
            "compatible instance with EFA support and multiple EFA interfaces",
            vec![ni(0, 0, false), ni(0, 1, true), ni(1, 0, true)],
            info(2, 2, 2, ena),
            true,
        ),
        (
            "EFA interfaces exceed maximum supported",
            vec![ni(0, 0, false), ni(0, 1, true), ni(1, 0, true)],
            info(2, 2, 1, ena),
            false,
        ),
        (
            "instance does not support with EFA",
            vec![ni(0, 0, false), ni(0, 1, true)],
            info(1, 4, 0, ena),
            false,
        ),
        (
            "instance does not support with ENA",
            vec![ni(0, 0, false)],
            info(1, 4, 0, EnaSupport::Unsupported),
            false,
        ),
        (
            "network card index exceeds available cards",
            vec![ni(1, 0, false)],
            info(1, 4, 0, ena),
            false,
        ),
        (
            "device index exceeds maximum ENIs",
            vec![ni(0, 5, false)],
            info(1, 4, 0, ena),
            false,
        ),
    ];
    for (entry, nis, facts, want) in &cases {
        assert_eq!(
            network_interfaces_fit(&facts.network(), nis),
            *want,
            "{entry}"
        );
    }
    // A type with no network card takes no interface (`NetworkCards` empty).
    assert!(!network_interfaces_fit(
        &info(0, 4, 0, ena).network(),
        &[ni(0, 0, false)]
    ));
    // An index on card 1 is checked against card 1's own limit.
    let mut uneven = info(2, 8, 0, ena);
    uneven.network_cards = Some(vec![8, 2]);
    assert!(network_interfaces_fit(
        &uneven.network(),
        &[ni(1, 1, false)]
    ));
    assert!(!network_interfaces_fit(
        &uneven.network(),
        &[ni(1, 2, false)]
    ));

    // Without the card and ENA facts (a catalog written before them): card 0 against
    // `max_enis` and the EFAs only; the rest is taken as fitting, and the catalog says so.
    let unknown = |facts: &InstanceFacts| InstanceFacts {
        network_cards: None,
        ena_support: None,
        ..facts.clone()
    };
    let skipped = [4, 5]; // ENA support, the card count
    for (i, (entry, nis, facts, want)) in cases.iter().enumerate() {
        let got = network_interfaces_fit(&unknown(facts).network(), nis);
        if skipped.contains(&i) {
            assert!(got, "{entry}: not checkable, taken as fitting");
        } else {
            assert_eq!(got, *want, "{entry}");
        }
    }
    assert!(Catalog::embedded().unwrap().checks_network_interfaces());
    let mut old = Catalog::embedded().unwrap().aws_snapshot().unwrap().clone();
    old.instance_types[0].network_cards = None;
    assert!(!Catalog::from_snapshot(old)
        .unwrap()
        .checks_network_interfaces());
}

/// Reservations read live become reserved offerings of the embedded/live AWS types, as
/// `aws v1.14.1: pkg/providers/instancetype/offering/reserved_capacity_resolver.go`
/// `ResolveOfferings` and `types.go` `computeRequirements` build them: price = on-demand /
/// 10,000,000; available only with instances left, in one of the type's (subnet) zones and not
/// expiring; the type admits `reserved` and lists its reservations; only the reservations the
/// class's terms found; none for a class without terms.
#[test]
fn live_reservations_become_reserved_offerings_of_the_classes_that_select_them() {
    use crate::cloud::fake::FakeCloud;
    use crate::cloud::reservations;
    use crate::cloud::types::CapacityReservation;
    use crate::model::instance_type::RESERVED;
    use crate::model::reservation::CapacityReservationTerm;

    let cr = |id: &str, zone: &str, available: i64, f: fn(&mut CapacityReservation)| {
        let mut r = CapacityReservation {
            id: id.into(),
            instance_type: "m5.large".into(),
            zone: zone.into(),
            owner_id: "123456789012".into(),
            instance_match_criteria: "targeted".into(),
            reservation_type: "default".into(),
            available,
            state: "active".into(),
            tags: [("team".to_string(), "ml".to_string())].into(),
            ..CapacityReservation::default()
        };
        f(&mut r);
        r
    };
    let cloud = FakeCloud::new();
    *cloud.reservations.borrow_mut() = vec![
        cr("cr-1", "us-east-1a", 2, |_| {}),
        cr("cr-2", "us-east-1c", 1, |_| {}),
        cr("cr-3", "us-east-1a", 0, |_| {}),
        cr("cr-4", "us-east-1a", 1, |r| {
            r.reservation_type = "capacity-block".into();
            r.end_date = Some(1_000 + 60);
        }),
        cr("cr-5", "us-east-1a", 1, |r| r.tags.clear()),
    ];
    let terms = vec![CapacityReservationTerm {
        tags: [("team".to_string(), "ml".to_string())].into(),
        ..CapacityReservationTerm::default()
    }];
    let found = reservations::list(&cloud, &[&terms], 1_000).unwrap();
    let catalog = Catalog::embedded().unwrap().with_reservations(found);
    assert!(catalog.has_reservations());
    let zones = vec!["us-east-1a".to_string(), "us-east-1b".to_string()];
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.zones = Some(&zones);
    ctx.capacity_reservations = &terms;
    let types = catalog.instance_types(&ctx).unwrap();
    let m5 = find(&types, "m5.large");
    let reserved: Vec<(&str, &str, bool)> = m5
        .offerings
        .iter()
        .filter(|o| o.capacity_type == RESERVED)
        .map(|o| {
            (
                o.reservation_id().unwrap_or_default(),
                o.zone.as_str(),
                o.available,
            )
        })
        .collect();
    assert_eq!(
        reserved,
        [
            ("cr-1", "us-east-1a", true),
            ("cr-2", "us-east-1c", false),
            ("cr-3", "us-east-1a", false),
            ("cr-4", "us-east-1a", false),
        ],
        "not in a subnet zone, used up, expiring: listed, not available; cr-5 not selected"
    );
    let on_demand = m5
        .offerings
        .iter()
        .find(|o| o.capacity_type == "on-demand")
        .unwrap()
        .price;
    let price = m5
        .offerings
        .iter()
        .find(|o| o.reservation_id() == Some("cr-1"))
        .unwrap()
        .price;
    assert!((price - on_demand / 10_000_000.0).abs() < 1e-15);
    assert_eq!(
        values(m5, labels::CAPACITY_TYPE),
        ["on-demand", "reserved", "spot"]
    );
    assert_eq!(
        values(m5, labels::CAPACITY_RESERVATION_ID),
        ["cr-1", "cr-2", "cr-3", "cr-4"]
    );
    assert_eq!(
        values(m5, labels::CAPACITY_RESERVATION_TYPE),
        ["capacity-block", "default"]
    );
    let c5 = find(&types, "c5.large");
    assert_eq!(
        c5.requirements
            .get(labels::CAPACITY_RESERVATION_ID)
            .operator(),
        Operator::DoesNotExist
    );

    // A class without terms sees none of them.
    ctx.capacity_reservations = &[];
    let types = catalog.instance_types(&ctx).unwrap();
    assert!(find(&types, "m5.large")
        .offerings
        .iter()
        .all(|o| o.capacity_type != RESERVED));
}

/// `aws v1.14.1: pkg/providers/instancetype/offering/base_resolver.go` `ResolveOfferings`
/// l.96-150: every type has an on-demand and a spot offering in each zone of `allZones` (the
/// region's offered zones), priced, and available only in its own zones (`itZones.Has(zone)`:
/// offered, and reached by the class's subnets); only zones with zone info (the subnets') carry
/// a zone id, and the type's zone-id requirement lists its own zones' ids (`types.go`
/// `computeRequirements`). Before s30-lineoffer the other zones had no offering, so a node
/// running there was priced 0 (`disruption/types.go resolveNodePrice`) and never replaced.
#[test]
fn a_type_is_offered_unavailable_in_the_regions_other_zones_at_its_price() {
    let zones = vec!["us-east-1a".to_string(), "us-east-1b".to_string()];
    let ids: BTreeMap<String, String> = [("us-east-1a", "use1-az4"), ("us-east-1b", "use1-az6")]
        .iter()
        .map(|(z, id)| (z.to_string(), id.to_string()))
        .collect();
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.zones = Some(&zones);
    ctx.zone_ids = &ids;
    let types = Catalog::embedded().unwrap().instance_types(&ctx).unwrap();
    let m5 = find(&types, "m5.xlarge");
    let on_demand: Vec<(&str, bool, f64, Option<&str>)> = (m5.offerings.iter())
        .filter(|o| o.capacity_type == "on-demand")
        .map(|o| (o.zone.as_str(), o.available, o.price, o.zone_id.as_deref()))
        .collect();
    assert_eq!(
        on_demand,
        [
            ("us-east-1a", true, 0.192, Some("use1-az4")),
            ("us-east-1b", true, 0.192, Some("use1-az6")),
            ("us-east-1c", false, 0.192, None),
            ("us-east-1d", false, 0.192, None),
            ("us-east-1e", false, 0.192, None),
            ("us-east-1f", false, 0.192, None),
        ],
        "m5.xlarge is offered in a, b, c, d and f; the subnets reach a and b"
    );
    assert_eq!(values(m5, labels::ZONE), ["us-east-1a", "us-east-1b"]);
    assert_eq!(values(m5, labels::ZONE_ID), ["use1-az4", "use1-az6"]);
    assert_eq!(
        m5.offerings
            .iter()
            .filter(|o| o.capacity_type == "spot")
            .count(),
        6
    );
}

/// The embedded catalog with one targeted, active reservation `cr-{i}` (2 instances, us-east-1a)
/// per type of `types`, read through `reservations::list` as a live run reads them, and the
/// selector terms that select them by id.
fn with_reservations_for(
    types: &[&str],
) -> (
    Catalog,
    Vec<crate::model::reservation::CapacityReservationTerm>,
) {
    use crate::cloud::fake::FakeCloud;
    use crate::cloud::reservations;
    use crate::cloud::types::CapacityReservation;
    use crate::model::reservation::CapacityReservationTerm;

    let cloud = FakeCloud::new();
    *cloud.reservations.borrow_mut() = (types.iter().enumerate())
        .map(|(i, t)| CapacityReservation {
            id: format!("cr-{i}"),
            instance_type: t.to_string(),
            zone: "us-east-1a".into(),
            owner_id: "123456789012".into(),
            instance_match_criteria: "targeted".into(),
            reservation_type: "default".into(),
            available: 2,
            state: "active".into(),
            ..CapacityReservation::default()
        })
        .collect();
    let terms: Vec<CapacityReservationTerm> = (0..types.len())
        .map(|i| CapacityReservationTerm {
            id: Some(format!("cr-{i}")),
            ..CapacityReservationTerm::default()
        })
        .collect();
    let found = reservations::list(&cloud, &[&terms], 1_000).unwrap();
    (Catalog::embedded().unwrap().with_reservations(found), terms)
}

/// `aws v1.14.1: pkg/providers/instancetype/offering/reserved_capacity_resolver.go`
/// `ResolveOfferings`: a reserved offering is `Available` only when
/// `compatibility.IsCompatibleWithNodeClass` holds, as the base offerings are. A class with
/// `connectionTracking` cannot run the xen `m4.large`: its reservation is listed, not available
/// (s30-lineoffer; before, the reservation stayed available and a plan launched into it).
#[test]
fn a_reservation_for_a_type_the_class_cannot_run_is_not_available() {
    use crate::model::instance_type::RESERVED;

    let (catalog, terms) = with_reservations_for(&["m4.large", "m5.large"]);
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.capacity_reservations = &terms;
    let reserved = |ctx: &InstanceTypeContext, name: &str| -> Vec<bool> {
        let types = catalog.instance_types(ctx).unwrap();
        (find(&types, name).offerings.iter())
            .filter(|o| o.capacity_type == RESERVED)
            .map(|o| o.available)
            .collect()
    };
    assert_eq!(reserved(&ctx, "m4.large"), [true]);
    ctx.connection_tracking = true;
    assert_eq!(reserved(&ctx, "m4.large"), [false], "xen: not compatible");
    assert_eq!(reserved(&ctx, "m5.large"), [true], "nitro: compatible");
}

/// A reserved offering of a type the node class cannot run is listed but not available, as its
/// on-demand and spot offerings: `aws v1.14.1: pkg/providers/instancetype/offering/
/// reserved_capacity_resolver.go` `ResolveOfferings` ANDs `compatibility.IsCompatibleWithNodeClass`
/// into `Available` as `base_resolver.go` does (here an AL2023 class and an `a1.large`
/// reservation, `amiFamilyCheck`; a Bottlerocket class may use it).
#[test]
fn an_a1_reservation_is_not_available_to_an_al2023_class() {
    use crate::model::instance_type::RESERVED;

    let (catalog, terms) = with_reservations_for(&["a1.large"]);
    let reserved = |family: &str| -> Vec<(String, bool)> {
        let mut ctx = InstanceTypeContext::new("us-east-1", family);
        ctx.capacity_reservations = &terms;
        let types = catalog.instance_types(&ctx).unwrap();
        find(&types, "a1.large")
            .offerings
            .iter()
            .filter(|o| o.capacity_type == RESERVED)
            .map(|o| {
                (
                    o.reservation_id().unwrap_or_default().to_string(),
                    o.available,
                )
            })
            .collect()
    };
    assert_eq!(reserved("AL2023"), [("cr-0".to_string(), false)]);
    assert_eq!(reserved("Bottlerocket"), [("cr-0".to_string(), true)]);
}

/// `aws v1.14.1: pkg/providers/instancetype/offering/base_resolver.go` `ResolveOfferings` (an
/// offering whose zone has zone info requires `topology.k8s.aws/zone-id In [id]`) and
/// `types.go` `computeRequirements` (the type requires the ids of its available zones; none
/// known: no requirement). Upstream's tests: `instancetype/suite_test.go` "should support
/// individual instance type labels" / "should support combined instance type labels" (a pod
/// selecting `zone-id: tstz1-1a` schedules), `cloudprovider/suite_test.go` "should return
/// availability zone ID as a label on the nodeClaim".
#[test]
fn zone_ids_of_the_class_subnets_go_on_offerings_and_types() {
    let zones = vec!["us-east-1a".to_string(), "us-east-1b".to_string()];
    let ids = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(z, id)| (z.to_string(), id.to_string()))
            .collect()
    };
    // (zone ids from status.subnets, the type's zone-id values (None: no requirement),
    // per zone the offerings' zone id)
    type Row = (
        BTreeMap<String, String>,
        Option<Vec<&'static str>>,
        [(&'static str, Option<&'static str>); 2],
    );
    let rows: Vec<Row> = vec![
        (
            BTreeMap::new(),
            None,
            [("us-east-1a", None), ("us-east-1b", None)],
        ),
        (
            ids(&[("us-east-1a", "use1-az4"), ("us-east-1b", "use1-az6")]),
            Some(vec!["use1-az4", "use1-az6"]),
            [
                ("us-east-1a", Some("use1-az4")),
                ("us-east-1b", Some("use1-az6")),
            ],
        ),
        // A zone the subnets give no id (while another has one) groups under the empty id, as
        // upstream's `EC2NodeClass.ZoneInfo` does.
        (
            ids(&[("us-east-1a", "use1-az4")]),
            Some(vec!["", "use1-az4"]),
            [("us-east-1a", Some("use1-az4")), ("us-east-1b", Some(""))],
        ),
    ];
    for (zone_ids, type_ids, per_zone) in rows {
        let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
        ctx.zones = Some(&zones);
        ctx.zone_ids = &zone_ids;
        let types = embedded_types(&ctx);
        let t = find(&types, "m5.large");
        match &type_ids {
            None => assert!(t.requirements.get_ref(labels::ZONE_ID).is_none()),
            Some(v) => assert_eq!(values(t, labels::ZONE_ID), *v, "{zone_ids:?}"),
        }
        for (zone, id) in per_zone {
            let offers: Vec<_> = t.offerings.iter().filter(|o| o.zone == zone).collect();
            assert!(!offers.is_empty(), "{zone}");
            for o in offers {
                assert_eq!(o.zone_id.as_deref(), id, "{zone} {zone_ids:?}");
                let r = o.requirements();
                match id {
                    None => assert!(r.get_ref(labels::ZONE_ID).is_none()),
                    Some(id) => assert_eq!(
                        r.get(labels::ZONE_ID),
                        Requirement::single(labels::ZONE_ID, id)
                    ),
                }
            }
        }
        // A NodeClaim selecting use1-az4 gets the us-east-1a offering only when ids are known.
        let mut selecting = Requirements::new();
        selecting.add(Requirement::single(labels::ZONE_ID, "use1-az4"));
        let cheapest = t.cheapest_offering(&selecting).map(|o| o.zone.as_str());
        if type_ids.is_some() {
            assert!(t
                .offerings
                .iter()
                .filter(|o| o.available && o.zone_id_admitted(selecting.get_ref(labels::ZONE_ID)))
                .all(|o| o.zone == "us-east-1a"));
            assert_eq!(cheapest, Some("us-east-1a"));
        } else {
            assert!(cheapest.is_some());
        }
    }
}

/// The embedded snapshot's facts of `name`.
fn embedded_facts(name: &str) -> InstanceFacts {
    let catalog = Catalog::embedded().unwrap();
    let snapshot = catalog.aws_snapshot().unwrap();
    snapshot
        .instance_types
        .iter()
        .find(|t| t.name == name)
        .unwrap()
        .clone()
}

/// `aws v1.14.1: pkg/providers/instancetype/compatibility/suite_test.go`
/// "PlacementGroupCompatibility", "NestedVirtualizationCompatibility" and
/// "ConnectionTrackingCompatibility" (every Entry), through `compatible_with_node_class`.
#[test]
fn placement_group_nested_virtualization_and_connection_tracking_compatibility() {
    use crate::model::placement_group::{PlacementGroup, Strategy};
    let base = embedded_facts("m5.large");
    let facts = |strategies: &[&str], features: &[&str], hypervisor: &str| InstanceFacts {
        placement_group_strategies: Some(strategies.iter().map(|s| s.to_string()).collect()),
        processor_features: Some(features.iter().map(|s| s.to_string()).collect()),
        hypervisor: Some(hypervisor.to_string()),
        ..base.clone()
    };
    let all = ["cluster", "partition", "spread"];
    let pg = |strategy| PlacementGroup {
        id: "pg-1".into(),
        name: "pg".into(),
        strategy,
        partition_count: if strategy == Strategy::Partition {
            2
        } else {
            0
        },
        spread_level: None,
    };
    // PlacementGroupCompatibility: m5.large supports every strategy, the t3.medium of the
    // fixture none.
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    assert!(
        compatible_with_node_class(&facts(&[], &[], "nitro"), &ctx),
        "nil placement group"
    );
    let groups = [Strategy::Cluster, Strategy::Partition, Strategy::Spread].map(pg);
    for group in &groups {
        let strategy = group.strategy;
        ctx.placement_group = Some(group);
        assert!(
            compatible_with_node_class(&facts(&all, &[], "nitro"), &ctx),
            "{strategy:?} supported"
        );
        assert!(
            !compatible_with_node_class(&facts(&[], &[], "nitro"), &ctx),
            "{strategy:?} not supported"
        );
    }
    // NestedVirtualizationCompatibility and ConnectionTrackingCompatibility: (name, facts,
    // nestedVirtualization enabled, connectionTracking set, compatible).
    let with = facts(&all, &["nested-virtualization"], "nitro");
    let without = facts(&all, &[], "nitro");
    let xen = facts(&all, &[], "xen");
    // A catalog that does not record the features skips the check.
    let unknown = InstanceFacts {
        processor_features: None,
        ..without.clone()
    };
    let cases = [
        (
            "nil CPUOptions passes regardless of features",
            &without,
            false,
            false,
            true,
        ),
        ("enabled + feature present", &with, true, false, true),
        ("enabled + feature absent", &without, true, false, false),
        (
            "enabled, features not recorded",
            &unknown,
            true,
            false,
            true,
        ),
        (
            "non-nitro instance without connection tracking",
            &xen,
            false,
            false,
            true,
        ),
        (
            "nitro instance with connection tracking",
            &without,
            false,
            true,
            true,
        ),
        (
            "non-nitro instance with connection tracking",
            &xen,
            false,
            true,
            false,
        ),
    ];
    for (name, facts, nested, tracking, want) in cases {
        let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
        ctx.nested_virtualization = nested;
        ctx.connection_tracking = tracking;
        assert_eq!(compatible_with_node_class(facts, &ctx), want, "{name}");
    }
    // The embedded snapshot records what these checks read.
    assert!(Catalog::embedded()
        .unwrap()
        .checks_processor_and_placement());
}

/// `aws v1.14.1: pkg/providers/instancetype/offering/offering.go` `InjectOfferings` (tests
/// `instancetype/suite_test.go` placement-group entries): a custom catalog's `placementGroups`
/// resolve the class's selector and every type's requirements name the group and, for a
/// partition group, its partitions; bad entries are one-line errors naming the field.
#[test]
fn a_custom_catalogs_placement_groups_constrain_the_types() {
    let text = "instanceTypes:\n- {name: m5.large, capacity: {cpu: 2, memory: 8Gi}, offerings: [{zone: z-a, capacityType: on-demand, price: 0.1}]}\nplacementGroups:\n- {id: pg-0a, name: pg-part, strategy: partition, partitionCount: 3}\n- {id: pg-0b, name: pg-clu, strategy: cluster}\n";
    let c = Catalog::from_custom_text("c.yaml", text).unwrap();
    let groups = c.placement_groups().unwrap();
    assert_eq!(groups.len(), 2);
    let mut ctx = InstanceTypeContext::new("us-east-1", "AL2023");
    ctx.placement_group = Some(&groups[0]);
    let types = c.instance_types(&ctx).unwrap();
    let r = &types[0].requirements;
    assert!(r.get(labels::PLACEMENT_GROUP_ID).has("pg-0a"));
    assert_eq!(r.get(labels::PLACEMENT_GROUP_PARTITION).values().len(), 3);
    for (bad, want) in [
        (
            "strategy: partition}",
            "placementGroups[0].partitionCount: required for a partition group",
        ),
        (
            "strategy: cluster, partitionCount: 2}",
            "placementGroups[0].partitionCount: only a partition group has partitions",
        ),
        (
            "strategy: ring}",
            "placementGroups[0].strategy: unknown strategy",
        ),
        (
            "strategy: partition, partitionCount: 8}",
            "placementGroups[0].partitionCount: expected an integer from 1 to 7",
        ),
    ] {
        let text = format!("instanceTypes: []\nplacementGroups:\n- {{id: pg-0a, name: a, {bad}\n");
        let e = Catalog::from_custom_text("c.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("c.yaml: {want}")), "{e}");
    }
    assert!(Catalog::from_custom_text("c.yaml", "instanceTypes: []\n")
        .unwrap()
        .placement_groups()
        .is_none());
}

/// The supplement types (`catalog/supplement-instance-types.json`: g4ad, dl1, which moto's data
/// lacks) size as Karpenter sizes the fake's dl1.24xlarge and g4ad.16xlarge (aws v1.14.1
/// `pkg/fake/zz_generated.describe_instance_types.go`; `types.go` `computeCapacity`: 8
/// `habana.ai/gaudi`, 4 EFAs, 15 × 49 + 2 pods; 4 `amd.com/gpu`, 8 × 29 + 2 pods), and are offered
/// only where the supplement places them (dl1: us-east-1 and us-west-2).
#[test]
fn supplement_types_size_like_the_providers_fake() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let dl1 = find(&types, "dl1.24xlarge");
    assert_eq!(dl1.capacity.cpu, 96_000);
    assert_eq!(dl1.capacity.memory, (786432 - 58983) * MIB);
    assert_eq!(dl1.capacity.get(overhead::HABANA_GAUDI), 8 * ONE);
    assert_eq!(dl1.capacity.get(overhead::EFA), 4 * ONE);
    assert_eq!(dl1.capacity.pods, 737 * ONE);
    assert_eq!(label(dl1, labels::INSTANCE_GPU_NAME), "gaudi-hl-205");
    assert!(dl1.offerings.iter().any(|o| o.available));
    let g4ad = find(&types, "g4ad.16xlarge");
    assert_eq!(g4ad.capacity.get(overhead::AMD_GPU), 4 * ONE);
    assert_eq!(g4ad.capacity.pods, 234 * ONE);
    assert_eq!(label(g4ad, labels::INSTANCE_GPU_NAME), "radeon-pro-v520");
    assert_eq!(label(g4ad, labels::INSTANCE_GPU_MEMORY), "8192");
    let elsewhere = embedded_types(&InstanceTypeContext::new("eu-west-1", "AL2023"));
    assert!(elsewhere
        .iter()
        .filter(|t| t.name == "dl1.24xlarge")
        .all(|t| t.offerings.is_empty()));
}

/// `instance-network-bandwidth` is the provider's compiled table, not DescribeInstanceTypes
/// (aws v1.14.1 `pkg/providers/instancetype/types.go` `computeRequirements`:
/// `InstanceTypeBandwidthMegabits[name]`, `zz_generated.bandwidth.go`): a type the table lists
/// only as "vague" (m4.large: "Moderate") or not at all (r9g.large, newer than the table) has no
/// label, and where EC2's per-card baselines differ from the table the table wins.
#[test]
fn network_bandwidth_comes_from_the_providers_table() {
    let types = embedded_types(&InstanceTypeContext::new("us-east-1", "AL2023"));
    let bandwidth = |name: &str| {
        let r = find(&types, name)
            .requirements
            .get(labels::INSTANCE_NETWORK_BANDWIDTH);
        match r.operator() {
            Operator::DoesNotExist => None,
            _ => r.values().iter().next().cloned(),
        }
    };
    let cases = [
        ("m5.large", Some("750")),
        ("g4dn.8xlarge", Some("50000")),
        ("m4.large", None),
        ("c4.xlarge", None),
        ("r9g.large", None),
        ("g7.2xlarge", Some("60000")),
        ("i7ie.48xlarge", Some("100000")),
        ("i7i.12xlarge", Some("28120")),
    ];
    for (name, want) in cases {
        assert_eq!(bandwidth(name).as_deref(), want, "{name}");
    }
}

/// The controllers of the older generations (aws v0.31.5, v0.32.10, v0.37.7; until v1.8)
/// count `evictionSoft` too: `types.go` `evictionThreshold` takes, per signal, the larger of the
/// hard and the soft value (`resources.MaxResources`), the soft one only where the family's
/// `EvictionSoftEnabled` (not Bottlerocket); a signal neither map names keeps its default.
/// v1.14.1 (a v1 NodePool) reads `evictionHard` only ("should use only evictionHard for
/// overhead, ignoring evictionSoft").
#[test]
fn older_generations_count_eviction_soft_as_their_controllers_did() {
    let signal = |k: &str, v: &str| (k.to_string(), v.to_string());
    let kubelet = KubeletConfig {
        eviction_hard: BTreeMap::from([signal("memory.available", "1Gi")]),
        eviction_soft: BTreeMap::from([
            signal("memory.available", "2Gi"),
            signal("nodefs.available", "15%"),
        ]),
        ..KubeletConfig::default()
    };
    let soft_only = KubeletConfig {
        eviction_soft: BTreeMap::from([signal("memory.available", "50Mi")]),
        ..KubeletConfig::default()
    };
    let threshold = |family: &str, generation: Option<ApiGeneration>, k: &KubeletConfig| {
        let mut ctx = InstanceTypeContext::new("us-east-1", family);
        ctx.generation = generation;
        ctx.kubelet = Some(k);
        let t = find(&embedded_types(&ctx), "m5.large").clone();
        (
            t.overhead.eviction_threshold.memory,
            t.overhead.eviction_threshold.ephemeral_storage,
        )
    };
    let ten = 2 * GIB; // 10 % of the 20Gi root volume
    let fifteen = 3_221_225_472 * ONE; // ceil(21474836480 / 100 × 15)
    for generation in [ApiGeneration::V1Beta1, ApiGeneration::V1Alpha5] {
        assert_eq!(
            threshold("AL2", Some(generation), &kubelet),
            (2 * GIB, fifteen),
            "{generation}: the larger of hard and soft"
        );
        assert_eq!(
            threshold("AL2", Some(generation), &soft_only).0,
            50 * MIB,
            "{generation}: a soft value replaces the default"
        );
        assert_eq!(
            threshold("Bottlerocket", Some(generation), &kubelet),
            (GIB, ten),
            "{generation}: not on Bottlerocket"
        );
    }
    assert_eq!(threshold("AL2", None, &kubelet), (GIB, ten), "v1.14.1");
    assert_eq!(
        threshold("AL2", Some(ApiGeneration::V1), &soft_only).0,
        100 * MIB
    );
}
