//! A launch template's network interfaces (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go`
//! `generateNetworkInterfaces`): the class's security groups, public-IP choice, prefixes,
//! connection tracking, EFA interfaces or the class's own `networkInterfaces`; IPv6 clusters.

use super::*;

/// The EFA interfaces a template for a type with these facts has: the type's EFA count when the
/// NodeClaim requests `vpc.amazonaws.com/efa` (its pods do), else none (`aws v1.14.1:
/// pkg/providers/amifamily/resolver.go` `Resolve`, `efaCount`).
pub fn efa_count(claim: &PlannedNodeClaim, facts: &TypeFacts) -> i64 {
    if claim.requests.get(EFA) > 0 {
        facts.efa
    } else {
        0
    }
}

/// Whether the cluster is IPv6, as Karpenter learns it: its DNS service IP is an IPv6 address
/// (`aws v1.14.1: pkg/providers/launchtemplate/launchtemplate.go` `NewDefaultProvider`,
/// `ClusterIPFamily` from `kubeDNSIP`). Unknown (no cluster DNS IP read): IPv4.
pub fn ipv6_cluster(cluster: &ClusterInfo) -> bool {
    cluster
        .cluster_dns
        .as_deref()
        .and_then(|ip| ip.trim().parse::<std::net::IpAddr>().ok())
        .is_some_and(|ip| ip.is_ipv6())
}

/// An EC2NodeClass's network settings a launch template carries (v1; v1beta1 has
/// `associatePublicIPAddress` only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassNetwork {
    /// `associatePublicIPAddress`.
    pub associate_public_ip_address: Option<bool>,
    /// `ipPrefixCount`.
    pub ip_prefix_count: Option<i32>,
    /// `connectionTracking`, when it sets a timeout.
    pub connection_tracking: Option<ConnectionTracking>,
    /// `networkInterfaces`, when set and not empty.
    pub interfaces: Option<Vec<NetworkInterface>>,
}

impl ClassNetwork {
    /// Read from the class's spec.
    pub fn of(class: &NodeClass) -> Self {
        let spec = class.raw_spec.as_ref();
        let int = |v: Option<&serde_json::Value>| {
            v.and_then(|v| v.as_i64())
                .and_then(|n| i32::try_from(n).ok())
        };
        let connection_tracking = spec
            .and_then(|s| s.get("connectionTracking"))
            .map(|c| ConnectionTracking {
                tcp_established_timeout: int(c.get("tcpEstablishedTimeout")),
                udp_stream_timeout: int(c.get("udpStreamTimeout")),
                udp_timeout: int(c.get("udpTimeout")),
            })
            .filter(|c| *c != ConnectionTracking::default());
        ClassNetwork {
            associate_public_ip_address: spec
                .and_then(|s| s.get("associatePublicIPAddress"))
                .and_then(|v| v.as_bool()),
            ip_prefix_count: int(spec.and_then(|s| s.get("ipPrefixCount"))),
            connection_tracking,
            interfaces: class.network_interfaces().filter(|n| !n.is_empty()),
        }
    }
}

/// A launch template's network interfaces (`aws v1.14.1:
/// pkg/providers/launchtemplate/launchtemplate.go` `generateNetworkInterfaces`, `ipCounts`,
/// `connectionTrackingSpec`):
/// - the class's `networkInterfaces`, when set: each at its card and device index with its
///   type; an `efa-only` one gets no prefixes, no public IP, no IPv6 and no connection
///   tracking;
/// - else, with `efa` EFA interfaces, one `efa` interface per network card (device 0 on card
///   0, 1 on the others);
/// - else one interface, device 0.
///
/// Every one carries the security groups; the others the public-IP choice, `ipPrefixCount`
/// (IPv4 prefixes, IPv6 prefixes in an IPv6 cluster), in an IPv6 cluster a primary IPv6 and
/// one IPv6 address, and the connection tracking timeouts.
pub fn template_network_interfaces(
    net: &ClassNetwork,
    groups: &[String],
    efa: i64,
    ipv6: bool,
) -> Vec<TemplateNetworkInterface> {
    let (v4_prefixes, v6_prefixes) = if ipv6 {
        (None, net.ip_prefix_count)
    } else {
        (net.ip_prefix_count, None)
    };
    let full = |card: Option<i32>, device: i32, kind: Option<&str>| TemplateNetworkInterface {
        network_card_index: card,
        device_index: device,
        interface_type: kind.map(str::to_string),
        groups: groups.to_vec(),
        associate_public_ip_address: net.associate_public_ip_address,
        ipv4_prefix_count: v4_prefixes,
        ipv6_prefix_count: v6_prefixes,
        primary_ipv6: ipv6.then_some(true),
        ipv6_address_count: ipv6.then_some(1),
        connection_tracking: net.connection_tracking,
    };
    let index = |n: i64| i32::try_from(n).unwrap_or(i32::MAX);
    if let Some(list) = &net.interfaces {
        return list
            .iter()
            .map(|ni| {
                let card = Some(index(ni.network_card_index));
                let device = index(ni.device_index);
                if ni.efa_only {
                    TemplateNetworkInterface {
                        network_card_index: card,
                        device_index: device,
                        interface_type: Some("efa-only".into()),
                        groups: groups.to_vec(),
                        ..TemplateNetworkInterface::default()
                    }
                } else {
                    full(card, device, Some("interface"))
                }
            })
            .collect();
    }
    if efa > 0 {
        return (0..efa)
            .map(|i| full(Some(index(i)), i32::from(i != 0), Some("efa")))
            .collect();
    }
    vec![full(None, 0, None)]
}
