//! The launch templates of a plan: one per (AMI, max pods, EFA count, reservation), with the
//! class's block devices, metadata options and placement.

use super::*;

/// What makes launch templates differ: AMI, max pods, EFA interfaces and the reservation
/// targeted (`aws v1.14.1: pkg/providers/amifamily/resolver.go` `Resolve` groups the types by
/// max pods, EFA count and reservation).
pub(super) type TemplateKey = (String, i64, i64, Option<String>);

/// The launch template of a type with these facts: one per (AMI, max pods, reservation), made
/// on first use. `None` when the class has no image for the type's architecture. A template
/// targeting a reservation labels its nodes with it (`karpenter.k8s.aws/capacity-reservation-*`,
/// which Karpenter sets from the instance's reservation).
#[allow(clippy::too_many_arguments)]
pub(super) fn template_for(
    input: &LaunchInput<'_>,
    facts: &TypeFacts,
    reservation: Option<&TargetedReservation>,
    labels: &BTreeMap<String, String>,
    taints: &[crate::model::taints::Taint],
    sgs: &[String],
    templates: &mut Vec<LaunchTemplateRequest>,
    groups: &mut BTreeMap<TemplateKey, usize>,
) -> Result<Option<usize>, LaunchError> {
    let (class, cluster) = (input.class, &input.cluster.name);
    let Some(image) = image_for(input.images, &facts.architecture) else {
        return Ok(None);
    };
    let max_pods = class
        .kubelet
        .as_ref()
        .and_then(|k| k.max_pods)
        .unwrap_or(facts.max_pods);
    let efa = efa_count(input.claim, facts);
    let key = (
        image.id.clone(),
        max_pods,
        efa,
        reservation.map(|r| r.id.clone()),
    );
    if let Some(i) = groups.get(&key) {
        return Ok(Some(*i));
    }
    // The NodeClaim's labels name the reservation of its cheapest offering; each template
    // names its own (none for one targeting no reservation).
    let mut labels = labels.clone();
    for k in RESERVATION_LABELS {
        labels.remove(k);
    }
    if let Some(r) = reservation {
        label_reserved(&mut labels, &r.id, r.reservation_type, r.interruptible);
    }
    let bootstrap = Bootstrap {
        cluster_name: cluster.clone(),
        endpoint: input.cluster.endpoint.clone(),
        ca_bundle: input.cluster.ca_bundle.clone(),
        service_cidr: input.cluster.service_cidr.clone(),
        // The class's `kubelet.clusterDNS` (all of it), else the cluster's DNS service IP
        // (`amifamily/resolver.go` `defaultClusterDNS`).
        cluster_dns: match class.kubelet.as_ref().map(|k| &k.cluster_dns) {
            Some(list) if !list.is_empty() => list.clone(),
            _ => input.cluster.cluster_dns.iter().cloned().collect(),
        },
        labels,
        taints: taints.to_vec(),
        max_pods: Some(max_pods),
        kubelet: userdata::KubeletArgs::from_spec(
            class.raw_spec.as_ref().and_then(|s| s.get("kubelet")),
        ),
        custom: class.user_data.clone(),
        instance_store_raid0: class.instance_store_policy.as_deref() == Some("RAID0"),
        default_mount_paths: input.family == Family::Bottlerocket
            && userdata::supports_default_bind(&userdata::bottlerocket_version(
                &class.ami_selector_terms,
                input.images,
            )),
    };
    let user_data = userdata::render(input.family, &bootstrap)?;
    let profile = class.instance_profile.clone();
    // The tenancy the NodeClaim asks for goes on every template (`aws v1.14.1:
    // pkg/providers/instance/instance.go` `getTenancyType` → `launchtemplate/types.go`
    // `buildPlacement`). A dedicated template is named apart; a default one keeps the name it
    // always had.
    let tenancy = Tenancy::of(&input.claim.requirements);
    let (max_pods_text, sgs_text) = (max_pods.to_string(), sgs.join(","));
    let mut parts = vec![
        "launch-template",
        cluster.as_str(),
        class.name.as_str(),
        image.id.as_str(),
        max_pods_text.as_str(),
        user_data.as_str(),
        sgs_text.as_str(),
        profile.as_deref().unwrap_or(""),
        reservation.map_or("", |r| r.id.as_str()),
        reservation.and_then(|r| r.market_type()).unwrap_or(""),
    ];
    if tenancy != Tenancy::Default {
        parts.push(tenancy.as_str());
    }
    // The placement group the plan resolved for the class names the NodeClaim's types
    // (`placement-group-id`, a label of every type then); a partition group's partition is the
    // lowest the NodeClaim allows (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go`
    // `CreateAll`, `types.go` `buildPlacement`). Both name the template apart.
    let (placement_group_id, placement_partition) = placement(input.claim);
    let placement_text = placement_group_id
        .as_ref()
        .map(|id| format!("placement={id}/{}", placement_partition.unwrap_or(0)));
    if let Some(p) = &placement_text {
        parts.push(p.as_str());
    }
    let block_devices = template_block_devices(class);
    let metadata = template_metadata_in(class, input.region);
    let detailed_monitoring = class.detailed_monitoring.unwrap_or(false);
    let nested_virtualization = class.nested_virtualization.clone();
    let settings = format!(
        "{block_devices:?};{metadata:?};monitoring={detailed_monitoring};nested={nested_virtualization:?}"
    );
    parts.push(settings.as_str());
    // The interfaces (security groups, public IP, prefixes, EFA, connection tracking) and the
    // tags the template gives its interfaces (and spot requests) name it too: upstream's name
    // hashes them with the rest of its options (`launchtemplate.go` `LaunchTemplateName`).
    let network_interfaces = template_network_interfaces(
        &ClassNetwork::of(class),
        sgs,
        efa,
        ipv6_cluster(input.cluster),
    );
    let spot = capacity_type(input.claim) == "spot";
    let mut interface_tags = tags(cluster, class, input.claim);
    interface_tags.remove(labels::NODECLAIM);
    let enclave = input.claim.requests.get(NIP_SLOTS) > 0;
    let network =
        format!("{network_interfaces:?};tags={interface_tags:?};spot={spot};enclave={enclave}");
    parts.push(network.as_str());
    // An open-mode template differs from the targeted one of the same content.
    if input.launch_mode == LaunchMode::Open {
        parts.push("launch-mode=open");
    }
    let hash = digest(&parts);
    let name = format!("kubectl-karpenter/{hash}");
    let record = format!("{name};ami={};maxPods={max_pods}", image.id);
    let mut lt_tags = BTreeMap::new();
    lt_tags.insert(labels::TEMPLATE_TAG.to_string(), record);
    lt_tags.insert(labels::cluster_tag(cluster), "owned".into());
    lt_tags.insert(labels::TOOL_TAG.to_string(), TOOL_NAME.to_string());
    templates.push(LaunchTemplateRequest {
        name,
        image_id: image.id.clone(),
        user_data,
        network_interfaces,
        instance_profile: profile,
        tags: lt_tags,
        interface_tags,
        spot,
        enclave,
        reservation: reservation.cloned(),
        tenancy,
        block_devices,
        metadata,
        detailed_monitoring,
        nested_virtualization,
        placement_group_id,
        placement_partition,
        launch_mode: input.launch_mode,
    });
    groups.insert(key, templates.len() - 1);
    Ok(Some(templates.len() - 1))
}

/// The placement group and partition a NodeClaim launches into: its `placement-group-id` label
/// (the class's resolved group, set by the plan), and with a `placement-group-partition`
/// requirement the lowest partition it allows, in upstream's string order.
pub fn placement(claim: &PlannedNodeClaim) -> (Option<String>, Option<i32>) {
    let Some(id) = claim
        .labels
        .get(labels::PLACEMENT_GROUP_ID)
        .filter(|id| !id.is_empty())
    else {
        return (None, None);
    };
    let partition = claim
        .requirements
        .get_ref(labels::PLACEMENT_GROUP_PARTITION)
        .filter(|r| r.operator() == Operator::In)
        .and_then(|r| r.values().iter().min().and_then(|v| v.parse().ok()));
    (Some(id.clone()), partition)
}

/// A launch template's block device mappings: the class's, else its AMI family's defaults
/// (`aws v1.14.1: pkg/providers/amifamily/resolver.go` `Resolve` and `DefaultEBS` — 20Gi gp3,
/// encrypted —, `al2.go`, `al2023.go` `/dev/xvda`; `bottlerocket.go` `/dev/xvda` 4Gi and
/// `/dev/xvdb`; `windows.go` `/dev/sda1` 50Gi; `custom.go` none; v0.x `ubuntu.go` `/dev/sda1`).
pub fn template_block_devices(class: &NodeClass) -> Vec<BlockDevice> {
    if !class.block_devices.is_empty() {
        return class.block_devices.clone();
    }
    let device = |name: &str, size: i64| BlockDevice {
        device_name: Some(name.to_string()),
        root_volume: false,
        volume_size: Some(size),
        ebs: EbsVolume {
            encrypted: Some(true),
            volume_type: Some("gp3".into()),
            ..EbsVolume::default()
        },
    };
    // The family's ephemeral device at its default size — the same rule that sizes the
    // node's ephemeral storage (`AmiFamily::ephemeral_block_device`, `default_ephemeral_storage`);
    // Custom (no device) and an unknown family get none.
    let Some(family) = class.ami_family.as_deref().and_then(AmiFamily::parse) else {
        return vec![];
    };
    let Some(ephemeral) = family.ephemeral_block_device() else {
        return vec![];
    };
    let data = device(ephemeral, family.default_ephemeral_storage());
    if family == AmiFamily::Bottlerocket {
        // Its 4Gi root volume holds the OS; the data volume above holds the pods'.
        vec![device("/dev/xvda", 4 * GIB), data]
    } else {
        vec![data]
    }
}

/// A launch template's `MetadataOptions`: the class's (read with the CRD's defaults), else the
/// default of its generation — the v1 CRD's `{enabled, disabled, 1, required}`, v1beta1's hop
/// limit 2, and v1alpha1's provider default `{enabled, disabled, 2, required}` (`aws v0.27.6:
/// pkg/providers/amifamily/resolver.go` `DefaultMetadataOptions`). The region's rule:
/// [`template_metadata_in`].
pub fn template_metadata(class: &NodeClass) -> MetadataOptions {
    let hops = if class.generation == Some(ApiGeneration::V1) {
        1
    } else {
        2
    };
    class.metadata_options.clone().unwrap_or(MetadataOptions {
        http_endpoint: Some("enabled".into()),
        http_protocol_ipv6: Some("disabled".into()),
        http_put_response_hop_limit: Some(hops),
        http_tokens: Some("required".into()),
    })
}

/// The regions whose IMDS has no IPv6 endpoint (`aws v1.14.1:
/// pkg/providers/amifamily/resolver.go` `httpProtocolUnsupportedRegions`).
pub const IMDS_IPV6_UNSUPPORTED_REGIONS: [&str; 6] = [
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
    "us-isob-west-1",
    "us-isof-south-1",
    "us-isof-east-1",
];

/// [`template_metadata`] in `region`: its `HttpProtocolIpv6` left unset in the regions of
/// [`IMDS_IPV6_UNSUPPORTED_REGIONS`] (`resolver.go` `resolveLaunchTemplates`).
pub fn template_metadata_in(class: &NodeClass, region: &str) -> MetadataOptions {
    let mut metadata = template_metadata(class);
    if IMDS_IPV6_UNSUPPORTED_REGIONS.contains(&region) {
        metadata.http_protocol_ipv6 = None;
    }
    metadata
}
