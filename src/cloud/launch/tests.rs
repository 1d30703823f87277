use super::*;
use crate::cloud::fake::FakeCloud;
use crate::cloud::types::Cloud;
use crate::model::nodepool::{AmiSelectorTerm, KubeletConfig};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::reservation::ReservationType;
use crate::model::taints::{Effect, Taint};
use crate::scheduling::{InstanceTypeOption, LaunchChoice};

fn image(id: &str, arch: &str, gpu: bool) -> ResolvedImage {
    let mut requirements = vec![NodeSelectorRequirement {
        key: "kubernetes.io/arch".into(),
        operator: Operator::In,
        values: vec![arch.into()],
        min_values: None,
    }];
    if gpu {
        requirements.push(NodeSelectorRequirement {
            key: "karpenter.k8s.aws/instance-gpu-count".into(),
            operator: Operator::Exists,
            values: vec![],
            min_values: None,
        });
    }
    ResolvedImage {
        id: id.into(),
        name: None,
        architecture: arch.into(),
        creation_date: None,
        deprecated: false,
        requirements,
    }
}

fn subnet(id: &str, zone: &str, ips: i64) -> Subnet {
    Subnet {
        id: id.into(),
        zone: zone.into(),
        available_ips: ips,
        ..Subnet::default()
    }
}

fn class() -> NodeClass {
    NodeClass {
        name: "default".into(),
        kind: "EC2NodeClass".into(),
        generation: Some(ApiGeneration::V1),
        tags: [
            ("team", "a"),
            ("eks:eks-cluster-name", "spoofed"),
            ("kubernetes.io/cluster/c1", "shared"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        ..NodeClass::default()
    }
}

fn claim(name: &str, types: &[(&str, f64)], zones: &[&str]) -> PlannedNodeClaim {
    PlannedNodeClaim {
        name: name.into(),
        node_pool: "default".into(),
        node_class: Some("default".into()),
        instance_types: types
            .iter()
            .map(|(n, p)| InstanceTypeOption {
                name: (*n).into(),
                price: *p,
            })
            .collect(),
        launch: LaunchChoice {
            instance_type: types[0].0.into(),
            capacity_type: "on-demand".into(),
            zone: zones[0].into(),
            price: types[0].1,
            reservation: None,
            offerings: crate::testing::offerings_everywhere(types, zones.len()),
            reservations: Vec::new(),
        },
        zones: zones.iter().map(|z| z.to_string()).collect(),
        capacity_types: vec!["on-demand".into()],
        pods: vec![],
        requests: Default::default(),
        requirements: Default::default(),
        instance_type_requirement: Default::default(),
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        taints: vec![Taint::new("t", "v", Effect::NoSchedule)],
        startup_taints: vec![],
        round: 1,
        joined_before_weights: None,
    }
}

struct World {
    cluster: ClusterInfo,
    class: NodeClass,
    images: Vec<ResolvedImage>,
    subnets: Vec<Subnet>,
    groups: Vec<String>,
    types: BTreeMap<String, TypeFacts>,
}

fn world() -> World {
    let mut types = BTreeMap::new();
    for (n, a, p) in [
        ("m5.large", "amd64", 29),
        ("m6g.large", "arm64", 29),
        ("c5.xlarge", "amd64", 58),
    ] {
        types.insert(
            n.to_string(),
            TypeFacts {
                architecture: a.into(),
                max_pods: p,
                efa: 0,
            },
        );
    }
    for i in 0..40 {
        types.insert(
            format!("t{i:02}.large"),
            TypeFacts {
                architecture: "amd64".into(),
                max_pods: 29,
                efa: 0,
            },
        );
    }
    World {
        cluster: ClusterInfo {
            name: "c1".into(),
            endpoint: "https://k".into(),
            ca_bundle: "Q0E=".into(),
            ..ClusterInfo::default()
        },
        class: class(),
        images: vec![
            image("ami-gpu", "amd64", true),
            image("ami-amd", "amd64", false),
            image("ami-arm", "arm64", false),
        ],
        subnets: vec![
            subnet("subnet-a1", "z-a", 10),
            subnet("subnet-a2", "z-a", 200),
            subnet("subnet-b", "z-b", 5),
            subnet("subnet-c", "z-c", 50),
        ],
        groups: vec!["sg-2".into(), "sg-1".into(), "sg-2".into()],
        types,
    }
}

fn input_of<'a>(w: &'a World, claim: &'a PlannedNodeClaim) -> LaunchInput<'a> {
    LaunchInput {
        cluster: &w.cluster,
        class: &w.class,
        claim,
        family: Family::Al2023,
        images: &w.images,
        subnets: &w.subnets,
        security_group_ids: &w.groups,
        types: &w.types,
        region: "us-east-1",
        launch_mode: LaunchMode::Targeted,
    }
}

fn plan_of(w: &World, claim: &PlannedNodeClaim) -> Result<LaunchPlan, LaunchError> {
    plan(&input_of(w, claim))
}

fn pools(p: &LaunchPlan) -> Vec<String> {
    p.pools
        .iter()
        .map(|p| format!("{}@{}", p.instance_type, p.subnet_id))
        .collect()
}

#[test]
fn overrides_are_cheapest_first_per_zone_subnet_with_most_ips() {
    let w = world();
    let c = claim(
        "default-1",
        &[
            ("m6g.large", 0.07),
            ("m5.large", 0.09),
            ("unknown.large", 0.01),
        ],
        &["z-a", "z-b"],
    );
    let p = plan_of(&w, &c).unwrap();
    assert_eq!(
        pools(&p),
        [
            "m6g.large@subnet-a2",
            "m6g.large@subnet-b",
            "m5.large@subnet-a2",
            "m5.large@subnet-b"
        ]
    );
    let req = fleet_request(&p, &p.pools);
    let priorities: Vec<f64> = req
        .configs
        .iter()
        .flat_map(|(_, o)| o.iter().map(|o| o.priority))
        .collect();
    // Each override's price (`getOverrides`: `Priority: offering.Price`).
    assert_eq!(priorities, [0.07, 0.07, 0.09, 0.09]);
    assert_eq!(req.configs.len(), 2, "one config per template");
    assert_eq!(p.templates[0].image_id, "ami-arm");
    assert_eq!(
        p.templates[1].image_id, "ami-amd",
        "standard variant over GPU"
    );
    assert_eq!(
        p.templates[0].network_interfaces[0].groups,
        ["sg-1", "sg-2"]
    );
    assert_eq!(p.capacity_type, "on-demand");
}

#[test]
fn overrides_are_capped_at_sixty_and_unused_templates_dropped() {
    let w = world();
    let mut types: Vec<(String, f64)> = (0..40)
        .map(|i| (format!("t{i:02}.large"), 0.01 * f64::from(i)))
        .collect();
    types.push(("m6g.large".into(), 9.0));
    let refs: Vec<(&str, f64)> = types.iter().map(|(n, p)| (n.as_str(), *p)).collect();
    let p = plan_of(&w, &claim("default-2", &refs, &["z-a", "z-b", "z-c"])).unwrap();
    assert_eq!(p.pools.len(), MAX_OVERRIDES);
    assert_eq!(p.pools[0].instance_type, "t00.large");
    assert_eq!(p.pools[59].instance_type, "t19.large");
    assert_eq!(
        p.templates.len(),
        1,
        "the arm64 template was cut with its pools"
    );
}

#[test]
fn templates_group_per_ami_and_max_pods() {
    let mut w = world();
    let c = claim(
        "default-3",
        &[("m5.large", 0.09), ("c5.xlarge", 0.17), ("m6g.large", 0.2)],
        &["z-a"],
    );
    let p = plan_of(&w, &c).unwrap();
    assert_eq!(p.templates.len(), 3, "amd64/29, amd64/58, arm64/29");
    assert!(p.templates[1].user_data.contains("maxPods: 58"));
    w.class.kubelet = Some(KubeletConfig {
        max_pods: Some(110),
        ..KubeletConfig::default()
    });
    let p = plan_of(&w, &c).unwrap();
    assert_eq!(
        p.templates.len(),
        2,
        "kubelet.maxPods unifies the amd64 group"
    );
    assert!(p.templates[0].user_data.contains("maxPods: 110"));
    assert!(p.templates[0].tags[labels::TEMPLATE_TAG].ends_with(";ami=ami-amd;maxPods=110"));
    // Same content, same name: templates are reused across NodeClaims.
    let q = plan_of(&w, &claim("default-4", &[("m5.large", 0.09)], &["z-b"])).unwrap();
    assert_eq!(q.templates[0].name, p.templates[0].name);
}

#[test]
fn static_tags_win_over_class_tags() {
    let w = world();
    let c = claim("default-5", &[("m5.large", 0.09)], &["z-a"]);
    let t = tags("c1", &w.class, &c);
    assert_eq!(t["eks:eks-cluster-name"], "c1");
    assert_eq!(t["kubernetes.io/cluster/c1"], "owned");
    assert_eq!(t["karpenter.sh/nodepool"], "default");
    assert_eq!(t["karpenter.k8s.aws/ec2nodeclass"], "default");
    assert_eq!(t[labels::NODECLAIM], "default-5");
    assert_eq!(t[labels::TOOL_TAG], TOOL_NAME);
    assert_eq!(t["team"], "a");
    let mut legacy = w.class.clone();
    legacy.generation = Some(ApiGeneration::V1Alpha5);
    let t = tags("c1", &legacy, &c);
    assert_eq!(t["karpenter.sh/provisioner-name"], "default");
    assert!(!t.contains_key("karpenter.sh/nodepool"));
}

#[test]
fn launches_for_a_pool_record_its_template_in_one_tag() {
    let w = world();
    let c = claim("default-11", &[("m5.large", 0.09)], &["z-a"]);
    let pool = crate::model::nodepool::NodePool {
        name: "default".into(),
        labels: [("team".to_string(), "a".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let p = plan_for_pool(&input_of(&w, &c), &pool).unwrap();
    let record = &p.tags[labels::TEMPLATE_RECORD_TAG];
    assert!(record.starts_with("v1;c=-;l="), "{record}");
    assert!(record.len() <= 256);
    assert_eq!(
        p.tags[labels::NODECLAIM],
        "default-11",
        "the usual tags stay"
    );
    assert_eq!(
        fleet_request(&p, &p.pools).tags,
        p.tags,
        "sent in the CreateFleet call"
    );
}

#[test]
fn client_token_is_deterministic_per_nodeclaim() {
    let a = client_token("c1", "default-1");
    assert_eq!(a, client_token("c1", "default-1"));
    assert_ne!(a, client_token("c1", "default-2"));
    assert_ne!(a, client_token("c2", "default-1"));
    assert_eq!(a.len(), 35);
    assert!(a.len() <= 64 && a.is_ascii());
    // Stable across builds: a golden value.
    assert_eq!(
        client_token("c1", "default-1"),
        "kk-6307f471f0354fc7f15b24b57f79fcf6"
    );
    assert_ne!(digest(&["ab", "c"]), digest(&["a", "bc"]));
}

#[test]
fn capacity_type_follows_the_solver_and_reaches_labels() {
    let w = world();
    let mut c = claim("default-10", &[("m5.large", 0.09)], &["z-a"]);
    c.launch.capacity_type = "spot".into();
    let p = plan_of(&w, &c).unwrap();
    assert_eq!(p.capacity_type, "spot");
    assert_eq!(fleet_request(&p, &p.pools).capacity_type, "spot");
    assert!(p.templates[0]
        .user_data
        .contains("karpenter.sh/capacity-type=spot"));
    c.launch.capacity_type = "reserved".into();
    assert_eq!(
        capacity_type(&c),
        "on-demand",
        "reserved without a reservation to launch into"
    );
}

/// The planned zone's `topology.k8s.aws/zone-id` label reaches the kubelet only when the
/// NodeClaim pins the zone id (the fleet may otherwise launch in another zone).
#[test]
fn the_zone_id_label_reaches_the_kubelet_only_when_pinned() {
    use crate::model::labels::ZONE_ID;
    let w = world();
    let mut c = claim("default-11", &[("m5.large", 0.09)], &["z-a", "z-b"]);
    c.labels.insert(ZONE_ID.into(), "use1-az4".into());
    let label = format!("{ZONE_ID}=use1-az4");
    let p = plan_of(&w, &c).unwrap();
    assert!(!p.templates[0].user_data.contains(&label));
    c.requirements
        .add(crate::model::requirements::Requirement::single(
            ZONE_ID, "use1-az4",
        ));
    let p = plan_of(&w, &c).unwrap();
    assert!(p.templates[0].user_data.contains(&label));
}

/// A claim planned into two reservations (m5.large in z-a, c5.xlarge in z-b).
fn reserved_claim(kind: ReservationType, interruptible: bool) -> PlannedNodeClaim {
    let mut c = claim(
        "default-12",
        &[("m5.large", 0.0000096), ("c5.xlarge", 0.000017)],
        &["z-a", "z-b"],
    );
    c.launch.capacity_type = RESERVED.into();
    c.launch.reservation = Some("cr-0a".into());
    c.launch.reservations = ["cr-0a", "cr-0b"]
        .iter()
        .map(|id| ReservedCapacity {
            id: (*id).into(),
            reservation_type: kind,
            interruptible,
            count: 1,
        })
        .collect();
    c.launch.offerings = vec![
        crate::scheduling::LaunchOffering {
            option: 0,
            zone: 0,
            price: 0.0000096,
            reservation: Some(0),
        },
        crate::scheduling::LaunchOffering {
            option: 1,
            zone: 1,
            price: 0.000017,
            reservation: Some(1),
        },
    ];
    c.labels
        .insert(labels::CAPACITY_RESERVATION_ID.into(), "cr-0a".into());
    c
}

/// `aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go` `CreateAll` and `types.go`
/// `buildPlacement`: a NodeClaim planned into a placement group launches with its id and,
/// with a partition requirement, the lowest partition it allows; without one EC2 picks.
#[test]
fn the_launch_templates_carry_the_claims_placement_group() {
    use crate::model::requirements::{Requirement, Requirements};
    let w = world();
    let mut c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    assert_eq!(
        plan_of(&w, &c).unwrap().templates[0].placement_group_id,
        None
    );
    c.labels
        .insert(labels::PLACEMENT_GROUP_ID.into(), "pg-0a".into());
    let t = &plan_of(&w, &c).unwrap().templates[0];
    assert_eq!(
        (t.placement_group_id.as_deref(), t.placement_partition),
        (Some("pg-0a"), None)
    );
    let mut reqs = Requirements::new();
    reqs.add(Requirement::new(
        labels::PLACEMENT_GROUP_PARTITION,
        Operator::In,
        ["3", "2"],
    ));
    c.requirements = reqs;
    let t = &plan_of(&w, &c).unwrap().templates[0];
    assert_eq!(t.placement_partition, Some(2));
    let plain = plan_of(&w, &claim("default-1", &[("m5.large", 0.09)], &["z-a"])).unwrap();
    assert_ne!(t.name, plain.templates[0].name, "a template of its own");
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "Tenancy › should set tenancy on
/// launch template" (when not specified / default / dedicated), with the rule of
/// `instance/instance.go` `getTenancyType`: a NodeClaim admitting both launches default.
/// Every template of the launch carries it; a dedicated template has a name of its own.
#[test]
fn the_launch_templates_carry_the_claims_tenancy() {
    use crate::model::requirements::{Requirement, Requirements};
    let w = world();
    let with = |values: Option<&[&str]>| {
        let mut c = claim(
            "default-1",
            &[("m5.large", 0.09), ("m6g.large", 0.07)],
            &["z-a"],
        );
        if let Some(values) = values {
            let mut reqs = Requirements::new();
            reqs.add(Requirement::new(
                labels::INSTANCE_TENANCY,
                Operator::In,
                values.iter().map(|v| v.to_string()),
            ));
            c.requirements = reqs;
        }
        plan_of(&w, &c).unwrap()
    };
    let cases: [(Option<&[&str]>, Tenancy); 4] = [
        (None, Tenancy::Default),
        (Some(&["default"]), Tenancy::Default),
        (Some(&["dedicated"]), Tenancy::Dedicated),
        (Some(&["default", "dedicated"]), Tenancy::Default),
    ];
    for (values, want) in cases {
        let p = with(values);
        assert_eq!(p.templates.len(), 2, "{values:?}: one per architecture");
        for t in &p.templates {
            assert_eq!(t.tenancy, want, "{values:?}");
        }
    }
    let (default, dedicated) = (with(None), with(Some(&["dedicated"])));
    for (d, x) in default.templates.iter().zip(&dedicated.templates) {
        assert_ne!(
            d.name, x.name,
            "a dedicated template is not the default one"
        );
    }
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "Block Device Mappings" ("should
/// default AL2 / AL2023 block device mappings", "should use custom block device mapping",
/// "should round up for custom block device mappings when specified in gigabytes", "should
/// default bottlerocket second volume with root volume size", "should not default block
/// device mappings for custom AMIFamilies", "should use custom block device mapping for
/// custom AMIFamilies"), "Detailed Monitoring" ("should default detailed monitoring to off",
/// "should pass detailed monitoring setting to the launch template at creation") and
/// "Instance Metadata" ("should set the default instance metadata settings on instances"):
/// what each template carries. Differed: our templates carried none of them, so a class's
/// 100Gi root volume (planned as 100Gi of ephemeral storage) launched on the AMI's default
/// volume, unencrypted where the AMI's is, and IMDS kept the AMI's hop limit.
/// A Bottlerocket class with `instanceStorePolicy: RAID0` binds the instance store with the
/// command its AMI version takes (`aws v1.14.1: pkg/providers/launchtemplate/suite_test.go`
/// "should use explicit directories for Bottlerocket v1.45.0", "should use default bind for
/// Bottlerocket v1.46.0", "should specify RAID0 bootstrap-command when instance-store policy
/// is set on Bottlerocket" with `@latest`); without the policy, no command.
#[test]
fn bottlerocket_raid0_binds_as_its_ami_version_allows() {
    let c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    let user_data = |alias: &str, policy: Option<&str>| {
        let mut w = world();
        w.class.ami_family = Some("Bottlerocket".into());
        w.class.instance_store_policy = policy.map(str::to_string);
        w.class.ami_selector_terms = vec![AmiSelectorTerm {
            alias: Some(alias.into()),
            id: None,
            name: None,
            owner: None,
            tags: BTreeMap::new(),
            ssm_parameter: None,
        }];
        plan(&LaunchInput {
            family: Family::Bottlerocket,
            ..input_of(&w, &c)
        })
        .unwrap()
        .templates
        .remove(0)
        .user_data
    };
    let dirs = "[\"apiclient\", \"ephemeral-storage\", \"bind\", \"--dirs\", \"/var/lib/containerd\", \"/var/lib/kubelet\", \"/var/log/pods\"]]";
    let default = "[\"apiclient\", \"ephemeral-storage\", \"bind\"]]";
    let old = user_data("bottlerocket@v1.45.0", Some("RAID0"));
    assert!(
        old.contains("[settings.bootstrap-commands.000-mount-instance-storage]")
            && old.contains(dirs),
        "{old}"
    );
    for alias in ["bottlerocket@v1.46.0", "bottlerocket@latest"] {
        let new = user_data(alias, Some("RAID0"));
        assert!(
            new.contains(default) && !new.contains("--dirs"),
            "{alias}: {new}"
        );
    }
    assert!(!user_data("bottlerocket@latest", None).contains("bootstrap-commands"));
}

#[test]
fn the_templates_carry_block_devices_metadata_options_and_monitoring() {
    const GIB: i64 = 1000 << 30;
    let c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    let with = |class: NodeClass| {
        let mut w = world();
        w.class = class;
        plan_of(&w, &c).unwrap().templates.remove(0)
    };
    let family = |f: &str| NodeClass {
        ami_family: Some(f.into()),
        ..class()
    };
    let default_ebs = |device: &str, gib: i64| BlockDevice {
        device_name: Some(device.into()),
        volume_size: Some(gib * GIB),
        ebs: EbsVolume {
            encrypted: Some(true),
            volume_type: Some("gp3".into()),
            ..EbsVolume::default()
        },
        ..BlockDevice::default()
    };
    for f in ["AL2", "AL2023"] {
        assert_eq!(
            with(family(f)).block_devices,
            [default_ebs("/dev/xvda", 20)],
            "{f}"
        );
    }
    assert_eq!(
        with(family("Bottlerocket")).block_devices,
        [default_ebs("/dev/xvda", 4), default_ebs("/dev/xvdb", 20)]
    );
    assert_eq!(
        with(family("Windows2022")).block_devices,
        [default_ebs("/dev/sda1", 50)]
    );
    assert!(with(family("Custom")).block_devices.is_empty());
    // The class's own mappings replace the defaults, for Custom too; sizes round up to GiB.
    let custom = BlockDevice {
        device_name: Some("/dev/xvda".into()),
        root_volume: true,
        volume_size: Some(40_000_000_000_000), // 40G: 37.25… GiB
        ebs: EbsVolume {
            volume_type: Some("io2".into()),
            iops: Some(10_000),
            ..EbsVolume::default()
        },
    };
    for f in ["AL2023", "Custom"] {
        let t = with(NodeClass {
            block_devices: vec![custom.clone()],
            ..family(f)
        });
        assert_eq!(t.block_devices, std::slice::from_ref(&custom), "{f}");
        assert_eq!(t.block_devices[0].volume_size_gib(), Some(38));
    }
    // IMDS: the class's (the v1 CRD's defaults), else v1alpha1's provider default.
    let v1 = MetadataOptions {
        http_endpoint: Some("enabled".into()),
        http_protocol_ipv6: Some("disabled".into()),
        http_put_response_hop_limit: Some(1),
        http_tokens: Some("required".into()),
    };
    let t = with(NodeClass {
        metadata_options: Some(v1.clone()),
        ..family("AL2023")
    });
    assert_eq!(t.metadata, v1);
    assert_eq!(
        template_metadata(&family("AL2023")),
        v1,
        "v1 without the CRD's"
    );
    let v1alpha1 = template_metadata(&NodeClass {
        generation: Some(ApiGeneration::V1Alpha5),
        ..family("AL2")
    });
    assert_eq!(v1alpha1.http_put_response_hop_limit, Some(2));
    assert_eq!(v1alpha1.http_tokens.as_deref(), Some("required"));
    assert!(!t.detailed_monitoring, "off by default");
    let monitored = with(NodeClass {
        detailed_monitoring: Some(true),
        ..family("AL2023")
    });
    assert!(monitored.detailed_monitoring);
    assert_ne!(monitored.name, t.name, "a different template");
    // `cpuoptions_test.go`: none unless set; set, it is the template's.
    assert_eq!(t.nested_virtualization, None);
    let nested = with(NodeClass {
        nested_virtualization: Some("enabled".into()),
        ..family("AL2023")
    });
    assert_eq!(nested.nested_virtualization.as_deref(), Some("enabled"));
    assert_ne!(nested.name, t.name);
    // "should add the do not sync taints label to nodes when AMI type is al2023" (v1).
    assert!(
        t.user_data.contains("karpenter.sh/do-not-sync-taints=true"),
        "{}",
        t.user_data
    );
    let beta = with(NodeClass {
        generation: Some(ApiGeneration::V1Beta1),
        ..family("AL2023")
    });
    assert!(
        !beta.user_data.contains("do-not-sync-taints"),
        "v0.37 has no such label"
    );
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "should generate a unique
/// launch template per capacity reservation", and the reserved CreateFleet of
/// `pkg/providers/instance/types.go` (`defaultTargetCapacityType`: on-demand for an ODCR,
/// capacity-block for a capacity block).
#[test]
fn a_reserved_claim_targets_one_template_per_reservation() {
    let w = world();
    let c = reserved_claim(ReservationType::Default, false);
    let p = plan_of(&w, &c).unwrap();
    assert_eq!(p.capacity_type, "reserved");
    assert_eq!(pools(&p), ["m5.large@subnet-a2", "c5.xlarge@subnet-b"]);
    let targets: Vec<Option<&str>> = p
        .templates
        .iter()
        .map(|t| t.reservation.as_ref().map(|r| r.id.as_str()))
        .collect();
    assert_eq!(targets, [Some("cr-0a"), Some("cr-0b")]);
    for (t, id) in p.templates.iter().zip(["cr-0a", "cr-0b"]) {
        assert!(t.user_data.contains("karpenter.sh/capacity-type=reserved"));
        assert!(
            t.user_data
                .contains(&format!("karpenter.k8s.aws/capacity-reservation-id={id}")),
            "each template labels its own reservation"
        );
        assert!(t
            .user_data
            .contains("karpenter.k8s.aws/capacity-reservation-type=default"));
    }
    let req = fleet_request(&p, &p.pools);
    assert_eq!(req.capacity_type, "on-demand");
    assert_ne!(
        p.client_token,
        client_token("c1", "default-12"),
        "a token of its own"
    );

    let cloud = FakeCloud::new();
    for (id, t, z) in [("cr-0a", "m5.large", "z-a"), ("cr-0b", "c5.xlarge", "z-b")] {
        cloud
            .reservations
            .borrow_mut()
            .push(crate::cloud::types::CapacityReservation {
                id: id.into(),
                instance_type: t.into(),
                zone: z.into(),
                available: 1,
                ..Default::default()
            });
    }
    let got = launch(&cloud, &p).unwrap();
    assert_eq!(got.instance.capacity_type, "reserved");
    assert_eq!(got.reservation.as_deref(), Some("cr-0a"));
    assert_eq!(got.instance.instance_type, "m5.large");
    assert_eq!(cloud.reservations.borrow()[0].available, 0);
    let sent = cloud.fleet_requests.borrow();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0], req, "exactly the planned request");

    let cb = plan_of(&w, &reserved_claim(ReservationType::CapacityBlock, false)).unwrap();
    assert_eq!(
        fleet_request(&cb, &cb.pools).capacity_type,
        "capacity-block"
    );
    // `pkg/providers/instance/filter/filter_test.go` "OfferingSelection" "should select the
    // cheapest offering" (aws 5e7bb182a "fix: ensure filtered offering is available for
    // capacity blocks"): a capacity-block launch has one override, the cheapest of its
    // available compatible offerings; its one template targets that block.
    assert_eq!(pools(&cb), ["m5.large@subnet-a2"]);
    assert_eq!(cb.templates.len(), 1);
    assert_eq!(
        cb.templates[0]
            .reservation
            .as_ref()
            .and_then(|r| r.market_type()),
        Some("capacity-block")
    );
    let odcr = plan_of(&w, &reserved_claim(ReservationType::Default, true)).unwrap();
    assert_eq!(
        fleet_request(&odcr, &odcr.pools).capacity_type,
        "reserved-capacity",
        "an interruptible ODCR"
    );
    assert_eq!(
        odcr.templates[0]
            .reservation
            .as_ref()
            .and_then(|r| r.market_type()),
        Some("interruptible-capacity-reservation")
    );
    assert!(odcr.templates[0]
        .user_data
        .contains("karpenter.k8s.aws/capacity-reservation-interruptible=true"));
}

/// `aws v1.14.1: pkg/providers/instance/suite_test.go` "should return an ICE error when all
/// attempted instance types return a ReservedCapacityReservation error": the reservations
/// are named for the caller to mark unavailable; a permission error names none.
#[test]
fn exhausted_reservations_are_named_by_the_launch_error() {
    let w = world();
    let p = plan_of(&w, &reserved_claim(ReservationType::Default, false)).unwrap();
    let cloud = FakeCloud::new();
    cloud
        .reservations
        .borrow_mut()
        .push(crate::cloud::types::CapacityReservation {
            id: "cr-0a".into(),
            instance_type: "m5.large".into(),
            zone: "z-a".into(),
            available: 0,
            ..Default::default()
        });
    cloud.insufficient_capacity("c5.xlarge", "z-b");
    let err = launch(&cloud, &p).unwrap_err();
    assert_eq!(err.exhausted_reservations(), ["cr-0a", "cr-0b"]);
    assert_eq!(
        err.to_string(),
        "NodeClaim default-12: no capacity: InsufficientInstanceCapacity [c5.xlarge/z-b/reserved]; ReservationCapacityExceeded [m5.large/z-a/reserved]"
    );
    assert_eq!(
        cloud.fleet_requests.borrow().len(),
        1,
        "EC2 tried both overrides in one call"
    );
    let denied = LaunchError::InsufficientCapacity {
        nodeclaim: "x".into(),
        errors: vec![PoolError {
            instance_type: "m5.large".into(),
            zone: "z-a".into(),
            subnet_id: String::new(),
            capacity_type: RESERVED.into(),
            reservation: Some("cr-0a".into()),
            code: "UnauthorizedOperation".into(),
            message: "no".into(),
        }],
    };
    assert!(denied.exhausted_reservations().is_empty());
}

#[test]
fn no_pools_without_a_subnet_in_the_claims_zones() {
    let w = world();
    let err = plan_of(&w, &claim("default-6", &[("m5.large", 0.09)], &["z-x"])).unwrap_err();
    assert!(matches!(err, LaunchError::NoPools(_)));
}

#[test]
fn launch_tries_next_pools_after_ice_and_adopts_on_retry() {
    let w = world();
    let cloud = FakeCloud::new();
    cloud.insufficient_capacity("m6g.large", "*");
    cloud.insufficient_capacity("m5.large", "z-a");
    let c = claim(
        "default-7",
        &[("m6g.large", 0.07), ("m5.large", 0.09)],
        &["z-a", "z-b"],
    );
    let p = plan_of(&w, &c).unwrap();
    let got = launch(&cloud, &p).unwrap();
    assert_eq!(got.instance.instance_type, "m5.large");
    assert_eq!(got.instance.zone, "z-b");
    assert_eq!(got.pool_errors.len(), 3);
    assert_eq!(got.templates_created, 2);
    assert_eq!(got.instance.tags[labels::NODECLAIM], "default-7");
    assert!(got.instance.tags.contains_key(labels::TEMPLATE_TAG));
    let again = launch(&cloud, &p).unwrap();
    assert!(again.adopted);
    assert_eq!(again.instance.id, got.instance.id);
    assert_eq!(cloud.instances.borrow().len(), 1);
    assert_eq!(cloud.call_counts().get("EC2.CreateFleet"), 1);
}

#[test]
fn launch_with_every_pool_failing_leaves_nothing() {
    let w = world();
    let cloud = FakeCloud::new();
    cloud.insufficient_capacity("m5.large", "*");
    let p = plan_of(
        &w,
        &claim("default-8", &[("m5.large", 0.09)], &["z-a", "z-b"]),
    )
    .unwrap();
    let err = launch(&cloud, &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "NodeClaim default-8: no capacity: InsufficientInstanceCapacity [m5.large/z-a/on-demand, m5.large/z-b/on-demand]"
    );
    assert!(cloud.instances.borrow().is_empty());
    assert!(!err.is_permission());
}

#[test]
fn pools_failing_for_a_missing_permission_show_the_message_naming_it() {
    let denied = |zone: &str| PoolError {
        instance_type: "m5.large".into(),
        zone: zone.into(),
        subnet_id: String::new(),
        capacity_type: "on-demand".into(),
        reservation: None,
        code: "UnauthorizedOperation".into(),
        message: "not authorized to perform: iam:PassRole".into(),
    };
    let err = LaunchError::InsufficientCapacity {
        nodeclaim: "default-8".into(),
        errors: vec![denied("z-a"), denied("z-b")],
    };
    assert_eq!(
        err.to_string(),
        "NodeClaim default-8: no capacity: UnauthorizedOperation (2 pools): not authorized to perform: iam:PassRole"
    );
    assert!(err.is_permission());
}

#[test]
fn a_lost_fleet_answer_is_adopted() {
    let w = world();
    let cloud = FakeCloud::new();
    cloud.lose_fleet_answers.set(1);
    let p = plan_of(&w, &claim("default-9", &[("m5.large", 0.09)], &["z-a"])).unwrap();
    let got = launch(&cloud, &p).unwrap();
    assert!(got.adopted);
    assert_eq!(cloud.instances.borrow().len(), 1);
    assert_eq!(cloud.call_counts().get("EC2.CreateFleet"), 1);
}

#[test]
fn describe_and_terminate_batch_by_a_thousand() {
    let cloud = FakeCloud::new();
    let mut ids = Vec::new();
    for i in 0..2500 {
        let id = format!("i-{i:05}");
        cloud.instances.borrow_mut().push(Instance {
            id: id.clone(),
            state: "running".into(),
            ..Instance::default()
        });
        ids.push(id);
    }
    assert_eq!(describe_all(&cloud, &ids).unwrap().len(), 2500);
    assert_eq!(terminate_all(&cloud, &ids).unwrap().len(), 2500);
    let c = cloud.call_counts();
    assert_eq!(c.get("EC2.DescribeInstances"), 3);
    assert_eq!(c.get("EC2.TerminateInstances"), 3);
    assert!(cloud
        .instances
        .borrow()
        .iter()
        .all(|i| i.state == "shutting-down"));
}

/// A v1 class whose spec sets `fields` (the typed fields read from it stay default).
fn class_with(fields: serde_json::Value) -> NodeClass {
    NodeClass {
        raw_spec: Some(fields),
        ..class()
    }
}

/// The templates FakeCloud recorded for a launch of `c` with class `class`.
fn recorded(class: NodeClass, c: &PlannedNodeClaim) -> Vec<LaunchTemplateRequest> {
    let mut w = world();
    w.class = class;
    let cloud = FakeCloud::new();
    launch(&cloud, &plan_of(&w, c).unwrap()).unwrap();
    let templates = cloud.templates.borrow();
    templates.values().cloned().collect()
}

fn efa_world_claim(efa: bool) -> (World, PlannedNodeClaim) {
    let mut w = world();
    w.types.get_mut("m5.large").unwrap().efa = 2;
    let mut c = claim("default-efa", &[("m5.large", 0.09)], &["z-a"]);
    if efa {
        c.requests.set(EFA, 2000);
    }
    (w, c)
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "Public IP Association" (4
/// Entries: true / false, with and without EFA), "IP Prefix Delegation" (IPv4 and IPv6
/// prefix counts, 8 Entries), "Networking › should set Primary IPv6 as true and provision a
/// IPv6 address" (4 Entries) and "should select correct ipFamily based on DNS ip" (2
/// Entries), "Connection Tracking settings" (3 Entries, "should apply ConnectionTracking to
/// every EFA ENI …"). The template sets no top-level security groups: its one interface
/// (device 0) carries them.
#[test]
fn the_template_interfaces_carry_public_ip_prefixes_ipv6_and_connection_tracking() {
    let c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    // Unset: no public-IP choice (the subnet's default), one interface at device 0.
    let t = &recorded(class(), &c)[0];
    assert_eq!(
        t.network_interfaces,
        [TemplateNetworkInterface {
            device_index: 0,
            groups: vec!["sg-1".into(), "sg-2".into()],
            ..TemplateNetworkInterface::default()
        }]
    );
    for public in [true, false] {
        let t = &recorded(
            class_with(serde_json::json!({"associatePublicIPAddress": public})),
            &c,
        )[0];
        assert_eq!(t.network_interfaces.len(), 1);
        assert_eq!(
            t.network_interfaces[0].associate_public_ip_address,
            Some(public)
        );
        // And with EFA: every EFA interface says it.
        let (mut w, mut e) = efa_world_claim(true);
        w.class = class_with(serde_json::json!({"associatePublicIPAddress": public}));
        e.name = format!("efa-{public}");
        let t = &plan_of(&w, &e).unwrap().templates[0];
        assert_eq!(
            t.network_interfaces[0].interface_type.as_deref(),
            Some("efa")
        );
        assert_eq!(
            t.network_interfaces[0].associate_public_ip_address,
            Some(public)
        );
    }
    // Prefix delegation: IPv4 prefixes, IPv6 ones in an IPv6 cluster.
    let net = |n: i32| ClassNetwork {
        ip_prefix_count: Some(n),
        ..ClassNetwork::default()
    };
    let groups = ["sg-1".to_string()];
    for n in [0, 1, 10, 100] {
        let v4 = &template_network_interfaces(&net(n), &groups, 0, false)[0];
        assert_eq!(
            (v4.ipv4_prefix_count, v4.ipv6_prefix_count),
            (Some(n), None)
        );
        let v6 = &template_network_interfaces(&net(n), &groups, 0, true)[0];
        assert_eq!(
            (v6.ipv4_prefix_count, v6.ipv6_prefix_count),
            (None, Some(n))
        );
    }
    let t = &recorded(class_with(serde_json::json!({"ipPrefixCount": 10})), &c)[0];
    assert_eq!(t.network_interfaces[0].ipv4_prefix_count, Some(10));
    // IPv6: the cluster DNS IP's family; a primary IPv6 and one address, EFA too.
    let dns = |ip: Option<&str>| ClusterInfo {
        cluster_dns: ip.map(str::to_string),
        ..ClusterInfo::default()
    };
    assert!(!ipv6_cluster(&dns(Some("10.0.100.10"))));
    assert!(ipv6_cluster(&dns(Some("fd01:99f0:d47b::a"))));
    assert!(!ipv6_cluster(&dns(None)), "unknown: IPv4");
    for (public, efa) in [(None, 0), (None, 2), (Some(true), 2), (Some(false), 0)] {
        let n = ClassNetwork {
            associate_public_ip_address: public,
            ..ClassNetwork::default()
        };
        let first = &template_network_interfaces(&n, &groups, efa, true)[0];
        assert_eq!(first.associate_public_ip_address, public);
        assert_eq!(first.interface_type.is_some(), efa > 0);
        assert_eq!(
            (first.primary_ipv6, first.ipv6_address_count),
            (Some(true), Some(1))
        );
    }
    let mut w = world();
    w.cluster.cluster_dns = Some("fd01:99f0:d47b::a".into());
    let t = &plan_of(&w, &c).unwrap().templates[0];
    assert_eq!(t.network_interfaces[0].primary_ipv6, Some(true));
    // The cluster's DNS IP is the nodes' cluster DNS unless the class's `kubelet.clusterDNS`
    // sets one (`resolver.go` `defaultClusterDNS`); the interfaces follow the cluster's
    // (`launchtemplate.go` `ClusterIPFamily`), whatever the class says.
    assert!(t
        .user_data
        .contains("      clusterDNS:\n      - fd01:99f0:d47b::a\n"));
    // The class's whole list reaches the NodeConfig (`nodeadm.go` marshals the kubelet
    // configuration), not only its first address.
    let mut t = None;
    for (dns, listed) in [
        (
            &["10.0.0.53", "10.0.0.54"][..],
            "      - 10.0.0.53\n      - 10.0.0.54\n",
        ),
        (&["10.0.0.53"][..], "      - 10.0.0.53\n"),
    ] {
        w.class.kubelet = Some(KubeletConfig {
            cluster_dns: dns.iter().map(|d| d.to_string()).collect(),
            ..KubeletConfig::default()
        });
        let planned = plan_of(&w, &c).unwrap().templates[0].clone();
        assert!(planned
            .user_data
            .contains(&format!("      clusterDNS:\n{listed}      maxPods")));
        t = Some(planned);
    }
    let t = t.unwrap();
    assert_eq!(t.network_interfaces[0].primary_ipv6, Some(true));
    // Connection tracking: none unset; the timeouts set; on every EFA interface.
    let t = &recorded(
        class_with(serde_json::json!({"connectionTracking": {"tcpEstablishedTimeout": 86400}})),
        &c,
    )[0];
    assert_eq!(
        t.network_interfaces[0].connection_tracking,
        Some(ConnectionTracking {
            tcp_established_timeout: Some(86400),
            ..ConnectionTracking::default()
        })
    );
    let all = serde_json::json!({"connectionTracking": {
        "tcpEstablishedTimeout": 432000, "udpStreamTimeout": 180, "udpTimeout": 30}});
    let expected = Some(ConnectionTracking {
        tcp_established_timeout: Some(432000),
        udp_stream_timeout: Some(180),
        udp_timeout: Some(30),
    });
    let (mut w, e) = efa_world_claim(true);
    w.class = class_with(all);
    let t = &plan_of(&w, &e).unwrap().templates[0];
    assert_eq!(t.network_interfaces.len(), 2);
    assert!(t
        .network_interfaces
        .iter()
        .all(|n| n.connection_tracking == expected && n.interface_type.as_deref() == Some("efa")));
}

/// Each interface's (card, device, type).
fn shape(t: &LaunchTemplateRequest) -> Vec<(Option<i32>, i32, Option<&str>)> {
    t.network_interfaces
        .iter()
        .map(|n| {
            (
                n.network_card_index,
                n.device_index,
                n.interface_type.as_deref(),
            )
        })
        .collect()
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "Network Interfaces › should
/// configure network interfaces with same configuration as NodeClass" (2 Entries: with and
/// without an EFA request), "should not set prefix count on EFA-only interfaces", "should not
/// set Ipv6 specs on EFA-only interfaces", "Connection Tracking settings › should apply
/// ConnectionTracking to every user-configured NetworkInterface … except efa-only"; the EFA
/// interfaces of `generateNetworkInterfaces` (one per EFA, card i, device 0 then 1) and
/// `resolver.go` (a template per EFA count, only when the NodeClaim requests EFA).
#[test]
fn efa_requests_and_class_interfaces_shape_the_template_interfaces() {
    // EFA: one interface per EFA of the type, only when the NodeClaim asks for EFA.
    let (w, e) = efa_world_claim(true);
    let t = &plan_of(&w, &e).unwrap().templates[0];
    assert_eq!(
        shape(t),
        [(Some(0), 0, Some("efa")), (Some(1), 1, Some("efa"))]
    );
    assert!(t
        .network_interfaces
        .iter()
        .all(|n| n.groups == ["sg-1", "sg-2"]));
    let (w, plain) = efa_world_claim(false);
    let p = plan_of(&w, &plain).unwrap();
    assert_eq!(p.templates[0].network_interfaces.len(), 1);
    assert_ne!(p.templates[0].name, t.name, "a template per EFA count");
    // The class's list wins over EFA; efa-only interfaces get no prefixes, public IP, IPv6
    // or connection tracking.
    let list = serde_json::json!({
    "associatePublicIPAddress": false,
    "ipPrefixCount": 2,
    "connectionTracking": {"udpTimeout": 45},
    "networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
        {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "interface"},
    ]});
    for efa in [false, true] {
        let (mut w, e) = efa_world_claim(efa);
        w.class = class_with(list.clone());
        let t = &plan_of(&w, &e).unwrap().templates[0];
        assert_eq!(
            shape(t),
            [
                (Some(0), 0, Some("interface")),
                (Some(0), 1, Some("efa-only")),
                (Some(1), 0, Some("efa-only")),
                (Some(1), 1, Some("interface")),
            ],
            "efa requested: {efa}"
        );
        for n in &t.network_interfaces {
            let ena = n.interface_type.as_deref() == Some("interface");
            assert_eq!(n.ipv4_prefix_count, ena.then_some(2));
            assert_eq!(n.associate_public_ip_address, ena.then_some(false));
            assert_eq!(n.connection_tracking.is_some(), ena);
            assert_eq!(n.groups, ["sg-1", "sg-2"]);
        }
    }
    let n = ClassNetwork::of(&class_with(list));
    let v6 = template_network_interfaces(&n, &["sg-1".into()], 0, true);
    assert_eq!(
        (v6[0].primary_ipv6, v6[0].ipv6_address_count),
        (Some(true), Some(1))
    );
    assert_eq!((v6[1].primary_ipv6, v6[1].ipv6_address_count), (None, None));
    assert_eq!(v6[0].ipv6_prefix_count, Some(2));
    assert_eq!(v6[1].ipv6_prefix_count, None);
}

/// `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` "Tags › should request that
/// tags be applied to both network interfaces and spot instance requests" (and "… instances
/// and volumes": the fleet's); "Enclave Options" (2: disabled by default, enabled by a
/// `nip-slots` request); templates differing in any of these, or in public IP, are named
/// apart (`LaunchTemplateName` hashes them).
#[test]
fn templates_tag_their_interfaces_and_spot_requests_and_names_follow_the_network() {
    let c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    let t = &recorded(class(), &c)[0];
    assert!(!t.spot && !t.enclave);
    assert_eq!(t.interface_tags["team"], "a");
    assert_eq!(t.interface_tags["karpenter.sh/nodepool"], "default");
    assert_eq!(t.interface_tags["kubernetes.io/cluster/c1"], "owned");
    assert!(
        !t.interface_tags.contains_key(labels::NODECLAIM),
        "a template serves many NodeClaims"
    );
    let mut spot = claim("default-2", &[("m5.large", 0.09)], &["z-a"]);
    spot.launch.capacity_type = "spot".into();
    let s = &recorded(class(), &spot)[0];
    assert!(s.spot);
    assert_eq!(s.interface_tags, t.interface_tags);
    assert_ne!(s.name, t.name);
    // Another NodeClaim of the same pool reuses the template.
    let again = &recorded(
        class(),
        &claim("default-3", &[("m5.large", 0.09)], &["z-a"]),
    )[0];
    assert_eq!(again.name, t.name);
    let mut nip = claim("default-4", &[("m5.large", 0.09)], &["z-a"]);
    nip.requests.set(NIP_SLOTS, 1000);
    let e = &recorded(class(), &nip)[0];
    assert!(e.enclave);
    assert_ne!(e.name, t.name);
    let private = &recorded(
        class_with(serde_json::json!({"associatePublicIPAddress": false})),
        &c,
    )[0];
    assert_ne!(private.name, t.name);
}

/// `aws v1.14.1: pkg/providers/amifamily/suite_test.go` "should set launch template
/// metadata options correctly per region" (3 Entries): ISO regions leave `HttpProtocolIpv6`
/// unset.
#[test]
fn iso_regions_leave_the_imds_ipv6_setting_unset() {
    let c = claim("default-1", &[("m5.large", 0.09)], &["z-a"]);
    let w = world();
    for (region, ipv6) in [
        ("us-east-1", Some("disabled")),
        ("us-iso-east-1", None),
        ("us-isob-east-1", None),
        ("us-isof-south-1", None),
    ] {
        let p = plan(&LaunchInput {
            region,
            ..input_of(&w, &c)
        })
        .unwrap();
        assert_eq!(
            p.templates[0].metadata.http_protocol_ipv6.as_deref(),
            ipv6,
            "{region}"
        );
    }
}

/// `aws v1.14.1: pkg/cloudprovider/suite_test.go` "should launch instances into subnet with
/// the most available IP addresses in-between cache refreshes" (subnets of 10 and 11 free
/// IPs in one zone, max pods 1: the first launch takes the 11-IP subnet, the next the other)
/// and "should update in-flight IPs when a CreateFleet error occurs" (a failed launch takes
/// nothing: `UpdateInflightIPs` gives the IPs back). The second launch finds both subnets at 10
/// and stays on the 11-IP one, first in the status's order (`subnet.go`
/// `ZonalSubnetsForLaunch` replaces only on strictly more IPs; the Describe's last CreateFleet
/// of pods 1 and 2 went to `test-subnet-2`); the third takes the other.
#[test]
fn launches_of_a_run_take_their_predicted_ips_from_the_subnet() {
    let mut w = world();
    w.subnets = vec![subnet("subnet-1", "z-a", 10), subnet("subnet-2", "z-a", 11)];
    w.types.get_mut("m5.large").unwrap().max_pods = 1;
    let cloud = FakeCloud::new();
    let mut inflight = InflightIps::default();
    let mut chosen = Vec::new();
    for name in ["default-1", "default-2", "default-3"] {
        let c = claim(name, &[("m5.large", 0.09), ("c5.xlarge", 0.17)], &["z-a"]);
        let subnets = inflight.apply(&w.subnets);
        let p = plan(&LaunchInput {
            subnets: &subnets,
            ..input_of(&w, &c)
        })
        .unwrap();
        // The NodeClaim's smallest type in the zone: m5.large's 1 pod, not c5.xlarge's 58.
        assert_eq!(predicted_ips(&p, &w.types, "z-a"), 1);
        chosen.push(p.pools[0].subnet_id.clone());
        let done = launch(&cloud, &p).unwrap();
        inflight.launched(&subnets, &p, &w.types, &done.instance);
    }
    assert_eq!(chosen, ["subnet-2", "subnet-2", "subnet-1"]);
    assert_eq!(
        (inflight.free("subnet-1"), inflight.free("subnet-2")),
        (Some(9), Some(9))
    );
    // A launch that fails takes nothing back out: the next one sees the same counts.
    cloud.insufficient_capacity("m5.large", "*");
    cloud.insufficient_capacity("c5.xlarge", "*");
    let before = inflight.clone();
    let c = claim("default-4", &[("m5.large", 0.09)], &["z-a"]);
    let subnets = inflight.apply(&w.subnets);
    let mut w2 = world();
    w2.subnets = subnets;
    assert!(launch(&cloud, &plan_of(&w2, &c).unwrap()).is_err());
    assert_eq!(inflight, before);
}

/// `aws v1.14.1: pkg/providers/instance/suite_test.go` "should deprioritize subnets on
/// subsequent launches after subnet IP exhaustion" (subnets of 50 and 200 free IPs in one
/// zone: the first launch goes to the 200-IP one, which answers
/// `InsufficientFreeAddressesInSubnet`; the next launch goes to the 50-IP one,
/// `subnet.go` `UpdateICEdSubnet`).
#[test]
fn a_subnet_found_full_is_launched_into_no_more() {
    let mut w = world();
    w.subnets = vec![
        subnet("subnet-1a-1", "z-a", 50),
        subnet("subnet-1a-2", "z-a", 200),
    ];
    let cloud = FakeCloud::new();
    cloud.subnet_full("subnet-1a-2");
    let mut inflight = InflightIps::default();
    let mut chosen = Vec::new();
    let mut outcomes = Vec::new();
    for name in ["default-1", "default-2"] {
        let c = claim(name, &[("m5.large", 0.09)], &["z-a"]);
        let subnets = inflight.apply(&w.subnets);
        let p = plan(&LaunchInput {
            subnets: &subnets,
            ..input_of(&w, &c)
        })
        .unwrap();
        chosen.push(p.pools[0].subnet_id.clone());
        match launch(&cloud, &p) {
            Ok(done) => {
                inflight.record_errors(&done.pool_errors);
                inflight.launched(&subnets, &p, &w.types, &done.instance);
                outcomes.push(done.instance.subnet_id.unwrap_or_default());
            }
            Err(e) => {
                assert_eq!(e.pool_errors()[0].code, SUBNET_FULL);
                inflight.record_errors(e.pool_errors());
                outcomes.push(e.pool_errors()[0].subnet_id.clone());
            }
        }
    }
    assert_eq!(chosen, ["subnet-1a-2", "subnet-1a-1"]);
    assert_eq!(outcomes, ["subnet-1a-2", "subnet-1a-1"]);
    // Full: 0 free IPs for the rest of the run, whatever DescribeSubnets said.
    assert_eq!(inflight.free("subnet-1a-2"), Some(0));
    // Other codes change nothing.
    let before = inflight.clone();
    inflight.record_errors(&[PoolError {
        instance_type: "m5.large".into(),
        zone: "z-a".into(),
        subnet_id: "subnet-1a-1".into(),
        capacity_type: "on-demand".into(),
        reservation: None,
        code: "InsufficientInstanceCapacity".into(),
        message: String::new(),
    }]);
    assert_eq!(inflight, before);
}

/// `aws v1.14.1: pkg/providers/instance/suite_test.go` DescribeTable "should handle subnet IP
/// exhaustion correctly" (3 Entries: `cache/unavailableofferings.go` `IsUnavailable` — a
/// zone is unavailable once every one of its subnets was found full): the zone's subnets are
/// left out of later launches, the other zones keep theirs.
#[test]
fn a_zone_whose_every_subnet_is_full_is_left_out() {
    let zones = |subnets: &[Subnet]| -> Vec<(String, String)> {
        subnet_per_zone(subnets)
            .into_iter()
            .map(|(z, s)| (z, s.id.clone()))
            .collect()
    };
    let full = |ids: &[&str]| {
        let mut inflight = InflightIps::default();
        let errors: Vec<PoolError> = ids
            .iter()
            .map(|id| PoolError {
                instance_type: "m5.xlarge".into(),
                zone: String::new(),
                subnet_id: (*id).into(),
                capacity_type: "on-demand".into(),
                reservation: None,
                code: SUBNET_FULL.into(),
                message: String::new(),
            })
            .collect();
        inflight.record_errors(&errors);
        inflight
    };
    let one_each = vec![
        subnet("subnet-1a-1", "z-a", 10),
        subnet("subnet-1b-1", "z-b", 10),
        subnet("subnet-1c-1", "z-c", 10),
    ];
    let mut three_in_a = one_each.clone();
    three_in_a.insert(1, subnet("subnet-1a-2", "z-a", 10));
    three_in_a.insert(2, subnet("subnet-1a-3", "z-a", 10));
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(z, s)| (z.to_string(), s.to_string()))
            .collect()
    };
    // "zone unavailable when 1 subnet gets ICEd with 1 subnet in zone"
    assert_eq!(
        zones(&full(&["subnet-1a-1"]).apply(&one_each)),
        pairs(&[("z-b", "subnet-1b-1"), ("z-c", "subnet-1c-1")])
    );
    // "zone available when only 1 subnet gets ICEd with multiple subnets in zone"
    assert_eq!(
        zones(&full(&["subnet-1a-1"]).apply(&three_in_a)),
        pairs(&[
            ("z-a", "subnet-1a-2"),
            ("z-b", "subnet-1b-1"),
            ("z-c", "subnet-1c-1")
        ])
    );
    // "zone unavailable when all subnets in zone get ICEd"
    assert_eq!(
        zones(&full(&["subnet-1a-1", "subnet-1a-2", "subnet-1a-3"]).apply(&three_in_a)),
        pairs(&[("z-b", "subnet-1b-1"), ("z-c", "subnet-1c-1")])
    );
}

/// A v1beta1 NodePool and a v1alpha5 Provisioner carry the kubelet settings themselves, and a
/// launch writes them into the user data as Karpenter of those generations did (`aws v0.37.0:
/// pkg/providers/amifamily/resolver.go` `Resolve`, the NodeClaim's `spec.kubelet`); a v1 pool's
/// are the class's.
#[test]
fn a_pre_v1_pools_kubelet_settings_reach_the_user_data() {
    let w = world();
    let c = claim("default-12", &[("m5.large", 0.09)], &["z-a"]);
    let kubelet = KubeletConfig {
        max_pods: Some(110),
        pods_per_core: Some(4),
        system_reserved: crate::model::resources::Resources::from_pairs(&[("cpu", "250m")]),
        ..KubeletConfig::default()
    };
    let v1beta1 = crate::model::nodepool::NodePool {
        name: "default".into(),
        generation: Some(ApiGeneration::V1Beta1),
        kubelet: Some(kubelet.clone()),
        raw_spec: Some(serde_json::json!({"template": {"spec": {"kubelet": {
            "maxPods": 110, "podsPerCore": 4, "systemReserved": {"cpu": "250m"},
            "evictionMaxPodGracePeriod": 45
        }}}})),
        ..Default::default()
    };
    let data = &plan_for_pool(&input_of(&w, &c), &v1beta1)
        .unwrap()
        .templates[0]
        .user_data;
    assert!(data.contains("maxPods: 110"), "{data}");
    assert!(data.contains("podsPerCore: 4"), "{data}");
    assert!(data.contains("evictionMaxPodGracePeriod: 45"), "{data}");
    assert!(data.contains("cpu: 250m"), "{data}");

    // A Provisioner keeps no spec as read: its settings are written from the model.
    let v1alpha5 = crate::model::nodepool::NodePool {
        generation: Some(ApiGeneration::V1Alpha5),
        raw_spec: None,
        ..v1beta1.clone()
    };
    let data = &plan_for_pool(&input_of(&w, &c), &v1alpha5)
        .unwrap()
        .templates[0]
        .user_data;
    assert!(data.contains("maxPods: 110"), "{data}");
    assert!(data.contains("podsPerCore: 4"), "{data}");
    assert!(data.contains("cpu: 250m"), "{data}");

    // v1: the class's settings (none here), whatever the pool model holds.
    let v1 = crate::model::nodepool::NodePool {
        generation: Some(ApiGeneration::V1),
        ..v1beta1
    };
    let data = &plan_for_pool(&input_of(&w, &c), &v1).unwrap().templates[0].user_data;
    assert!(data.contains("maxPods: 29"), "{data}");
    assert!(!data.contains("podsPerCore"), "{data}");
}

/// aws v1.14.1 pkg/cloudprovider/suite_test.go › "EC2 Context": "should set context on the
/// CreateFleet request if specified on the NodePool", "should not set context on the CreateFleet
/// request when min values are relaxed even if specified on the NodePool", "should default to no
/// EC2 Context" (`instance.go` `launchInstance`).
#[test]
fn the_class_context_goes_with_the_fleet_unless_min_values_were_relaxed() {
    let mut w = world();
    let c = claim("default-ctx", &[("m5.large", 0.09)], &["z-a"]);
    let context = |w: &World, c: &PlannedNodeClaim| {
        let p = plan_of(w, c).unwrap();
        fleet_request(&p, &p.pools).context
    };
    assert_eq!(context(&w, &c), None, "no EC2 Context by default");
    w.class.context = Some("context-1234".into());
    assert_eq!(context(&w, &c).as_deref(), Some("context-1234"));
    let mut kept = c.clone();
    kept.annotations
        .insert(labels::NODECLAIM_MIN_VALUES_RELAXED.into(), "false".into());
    assert_eq!(context(&w, &kept).as_deref(), Some("context-1234"));
    let mut relaxed = c.clone();
    relaxed
        .annotations
        .insert(labels::NODECLAIM_MIN_VALUES_RELAXED.into(), "true".into());
    assert_eq!(context(&w, &relaxed), None, "relaxed minValues: no context");
}

/// A NodeClaim of `types` in zone `z-a`, launched as `capacity` (`on-demand`, `spot`).
fn claim_in_z_a(capacity: &str, types: &[(&str, f64)]) -> PlannedNodeClaim {
    let mut c = claim("default-z-a", types, &["z-a"]);
    c.launch.capacity_type = capacity.into();
    c
}

/// aws v1.14.1 pkg/providers/instance/suite_test.go "should use priotiztied allocation stragaty
/// for an on-demand nodeclaim using nodeoverlay pricing", "should use lowest price allocation
/// stragaty by default for on-demand nodeclaims", "should use capacity optimized prioritized
/// allocation stragaty for an spot nodeclaim using nodeoverlay", "should use price capacity
/// optimized allocation stragaty by default for spot nodeclaims" (`types.go`
/// `CreateFleetInputBuilder.Build`; the adapter maps [`FleetAllocation`] to EC2's names).
#[test]
fn a_price_overlaid_claim_launches_by_priority_others_by_price() {
    let w = world();
    for capacity in ["on-demand", "spot"] {
        let mut c = claim_in_z_a(capacity, &[("m5.large", 0.02), ("c5.xlarge", 0.17)]);
        let p = plan_of(&w, &c).unwrap();
        assert_eq!(
            fleet_request(&p, &p.pools).allocation,
            FleetAllocation::Price
        );
        c.annotations.insert(
            crate::scheduling::PRICE_OVERLAY_APPLIED.into(),
            "true".into(),
        );
        let p = plan_of(&w, &c).unwrap();
        let req = fleet_request(&p, &p.pools);
        assert_eq!(req.allocation, FleetAllocation::Priority, "{capacity}");
        let priorities: Vec<f64> = req
            .configs
            .iter()
            .flat_map(|(_, o)| o.iter().map(|o| o.priority))
            .collect();
        assert_eq!(
            priorities,
            [0.02, 0.17],
            "the overlay's prices rank the overrides"
        );
    }
}

/// aws v1.14.1 pkg/providers/launchtemplate/suite_test.go DescribeTable "should set the capacity
/// reservation specification according to the capacity reservation feature flag" (Entry
/// "enabled", the `ReservedCapacity` gate's default): every template of an on-demand or spot
/// launch says `CapacityReservationPreference: none` (no target), so it never lands in an open
/// ODCR; a reserved launch's templates say `capacity-reservations-only` with their reservation.
#[test]
fn templates_opt_out_of_open_reservations_unless_they_target_one() {
    use crate::cloud::types::ReservationPreference;
    let w = world();
    for capacity in ["on-demand", "spot"] {
        let c = claim_in_z_a(capacity, &[("m6g.large", 0.07), ("m5.large", 0.09)]);
        let p = plan_of(&w, &c).unwrap();
        assert_eq!(p.templates.len(), 2);
        for t in &p.templates {
            assert_eq!(
                t.reservation_preference(),
                Some(ReservationPreference::None),
                "{capacity}"
            );
        }
    }
    let p = plan_of(&w, &reserved_claim(ReservationType::Default, false)).unwrap();
    for t in &p.templates {
        assert_eq!(
            t.reservation_preference(),
            Some(ReservationPreference::ReservationsOnly)
        );
    }
}

/// The same DescribeTable, Entry "disabled" (`aws v1.14.1: pkg/providers/launchtemplate/
/// types.go` `defaultLaunchModeProvider`: the `ReservedCapacity` gate off is the open launch
/// mode): no template says a `CapacityReservationSpecification`, and a template's name is not
/// the targeted one's (a template made for one mode is never reused for the other).
#[test]
fn the_open_launch_mode_says_no_capacity_reservation_preference() {
    let w = world();
    for capacity in ["on-demand", "spot"] {
        let c = claim_in_z_a(capacity, &[("m6g.large", 0.07), ("m5.large", 0.09)]);
        let open = plan(&LaunchInput {
            launch_mode: LaunchMode::Open,
            ..input_of(&w, &c)
        })
        .unwrap();
        let targeted = plan_of(&w, &c).unwrap();
        assert_eq!(open.templates.len(), 2);
        for (o, t) in open.templates.iter().zip(&targeted.templates) {
            assert_eq!(o.reservation_preference(), None, "{capacity}");
            assert_eq!(o.launch_mode, LaunchMode::Open);
            assert_ne!(o.name, t.name, "{capacity}");
        }
    }
}

/// An AL2023 node's `NodeConfig` needs the service CIDR (nodeadm: "CIDR is missing in cluster
/// configuration"); Karpenter asks EKS (`launchtemplate.go ResolveClusterCIDR`), we derive it
/// from kube-dns's ClusterIP, the range's tenth address on EKS. **Differed, fixed (s29)**:
/// `ClusterInfo.service_cidr` was never filled, so every AL2023 launch wrote a `NodeConfig`
/// without `cidr`, which nodeadm refuses.
#[test]
fn the_service_cidr_is_the_range_kube_dns_is_the_tenth_address_of() {
    let of = |ip: &str| service_cidr_of_dns(ip.parse().unwrap());
    assert_eq!(of("10.100.0.10").as_deref(), Some("10.100.0.0/16"));
    assert_eq!(of("172.20.0.10").as_deref(), Some("172.20.0.0/16"));
    assert_eq!(of("10.96.16.10").as_deref(), Some("10.96.16.0/24"));
    assert_eq!(
        of("fd01:99f0:d47b::a").as_deref(),
        Some("fd01:99f0:d47b::/108")
    );
    assert_eq!(of("0.0.0.5"), None);
}
