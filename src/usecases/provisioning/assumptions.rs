//! What an offline plan assumes that changes it (docs/commands.md "provision"), said once on
//! stderr by default — `-q` hides it — so a plan is never read as more certain than it is.

use std::fmt;

use crate::api::Manifests;
use crate::model::labels::CAPACITY_TYPE;
use crate::model::nodepool::{ApiGeneration, Condition, ConditionStatus};
use crate::model::placement_group::{PlacementGroup, PlacementGroupSelector};

/// One assumption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assumption {
    /// A node class without `status.subnets`: every zone of the region is assumed.
    ZonesUnknown {
        /// The class.
        class: String,
    },
    /// Pools that may launch spot, with no spot prices: spot is priced at on-demand.
    NoSpotPrices {
        /// The pools.
        pools: Vec<String>,
    },
    /// A node class selecting capacity reservations, with a catalog that declares none: no
    /// reserved capacity is planned.
    ReservationsUnknown {
        /// The class.
        class: String,
    },
    /// v1 NodePools without a `Ready` status condition: taken as ready (Karpenter launches only
    /// for a Ready pool; docs/karpenter.md §6.1).
    ReadyAssumed {
        /// The pools.
        pools: Vec<String>,
    },
    /// A v1 node class setting `networkInterfaces`, with a catalog that does not record every
    /// type's network cards and ENA support: those parts of the provider's compatibility check
    /// are skipped, the types taken as able to run the class (`cloud::catalog`
    /// `network_interfaces_fit`).
    NetworkInterfacesUnchecked {
        /// The class.
        class: String,
    },
    /// A v1 node class with a `placementGroupSelector`, planned with a catalog that tells no
    /// placement groups (the embedded snapshot offline, a `--catalog` without
    /// `placementGroups`): the plan has none of the group's labels, partition domains or
    /// strategy check (aws v1.14.1 `offering/placement_group_resolver.go`, `compatibility.go`).
    PlacementGroupUnresolved {
        /// The class.
        class: String,
    },
    /// A v1 node class enabling `cpuOptions.nestedVirtualization`, with a catalog that does not
    /// record which types support it (a custom one, an older snapshot): every type is taken as
    /// able (aws v1.14.1 `compatibility.go`
    /// `nestedVirtualizationCompatibility` keeps only those whose processor does).
    NestedVirtualizationUnchecked {
        /// The class.
        class: String,
    },
}

impl Assumption {
    /// Whether it is said by default (a warning) rather than with `-v` (a note): a pool
    /// without status is what nearly every manifest in git is, and taking it as Ready is what
    /// its author expects — telling it on every run would bury the assumptions that do change
    /// the plan.
    pub fn said_by_default(&self) -> bool {
        !matches!(self, Assumption::ReadyAssumed { .. })
    }
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::ZonesUnknown { class } => write!(
                f,
                "node class {class} has no status.subnets: every zone of the region is assumed \
                 (the controller fills it from subnetSelectorTerms; add it to the manifest to plan \
                 for the real zones)"
            ),
            Assumption::NoSpotPrices { pools } => write!(
                f,
                "no spot prices offline: spot offerings of {} are priced at on-demand (an upper \
                 bound), so the plan counts on no spot savings (--catalog with spot prices changes that)",
                pools.join(", ")
            ),
            Assumption::ReservationsUnknown { class } => write!(
                f,
                "node class {class} selects capacity reservations but the catalog declares none: \
                 no reserved capacity is planned (a --catalog with reserved offerings and their \
                 instance counts plans it)"
            ),
            Assumption::NetworkInterfacesUnchecked { class } => write!(
                f,
                "node class {class} sets networkInterfaces but the catalog does not record every \
                 instance type's network cards and ENA support: the types are taken as able to \
                 run them (Karpenter leaves a type whose cards, device indices or ENA support do \
                 not fit unavailable; the embedded and live catalogs record them)"
            ),
            Assumption::PlacementGroupUnresolved { class } => write!(
                f,
                "node class {class} sets placementGroupSelector but the catalog declares no \
                 placementGroups: the plan has no placement-group-id/-partition labels or \
                 partition domains and does not check the types against the group's strategy \
                 (Karpenter launches into the group; a --catalog with placementGroups plans it)"
            ),
            Assumption::NestedVirtualizationUnchecked { class } => write!(
                f,
                "node class {class} enables cpuOptions.nestedVirtualization but the catalog does \
                 not record which instance types support it: every type is taken as able \
                 (Karpenter keeps only types whose processor supports nested virtualization)"
            ),
            Assumption::ReadyAssumed { pools } => write!(
                f,
                "NodePool {} has no Ready status condition: taken as Ready (Karpenter launches \
                 nothing for a NodePool whose Ready is not True; a status from the cluster, or \
                 a node class that is not Ready, says otherwise)",
                pools.join(", ")
            ),
        }
    }
}

/// Marks every v1 class whose `placementGroupSelector` resolves to none of `groups` (the
/// available groups the catalog tells) not Ready, as the controller does (`aws v1.14.1:
/// pkg/controllers/nodeclass/placementgroup.go`: `PlacementGroupReady=False`, reason
/// `PlacementGroupNotFound`, which makes the class not Ready, so its NodePools launch nothing;
/// `nodeclass/placementgroup_test.go` "should set condition false when placement group is not
/// found"). Returns one line per class, to be said once.
pub fn placement_groups_not_found(
    manifests: &mut Manifests,
    groups: &[PlacementGroup],
) -> Vec<String> {
    let mut said = Vec::new();
    for c in &mut manifests.node_classes {
        let Some(selector) = PlacementGroupSelector::of(c) else {
            continue;
        };
        if selector.resolve(groups).is_some() {
            continue;
        }
        // The controller's message names the name when set, else the id.
        let wanted = selector
            .name
            .clone()
            .or(selector.id.clone())
            .unwrap_or_default();
        let message = format!("Placement group {wanted:?} not found");
        c.status.conditions.retain(|k| k.type_ != "Ready");
        c.status.conditions.push(Condition {
            type_: "Ready".into(),
            status: ConditionStatus::False,
            reason: "PlacementGroupNotFound".into(),
            message: message.clone(),
            observed_generation: None,
        });
        // The condition's message ("Placement group … not found") is said by each NodePool
        // left out for it (`input::not_ready`); this line says why, once.
        said.push(format!(
            "node class {}: no available placement group with {selector} \
             (PlacementGroupNotFound): the class is not Ready, its NodePools launch nothing",
            c.name
        ));
    }
    said
}

/// The node classes a NodePool uses that select capacity reservations.
pub fn reservation_classes(manifests: &Manifests) -> Vec<String> {
    manifests
        .node_classes
        .iter()
        .filter(|c| !c.capacity_reservation_selector_terms.is_empty())
        .filter(|c| {
            manifests
                .node_pools
                .iter()
                .any(|p| p.node_class_ref.as_ref().is_some_and(|r| r.name == c.name))
        })
        .map(|c| c.name.clone())
        .collect()
}

/// The assumptions an offline plan of `manifests` makes, given whether the catalog has spot
/// prices, declares capacity reservations, records network facts, tells placement groups
/// (`Catalog::placement_groups`) and records processor features and placement strategies
/// (`Catalog::checks_processor_and_placement`). Only the pools and classes the plan may use are
/// looked at.
pub fn offline(
    manifests: &Manifests,
    spot_prices: bool,
    reservations: bool,
    network_checks: bool,
    placement_groups: bool,
    processor_checks: bool,
) -> Vec<Assumption> {
    let mut out = Vec::new();
    let mut classes: Vec<&str> = Vec::new();
    for pool in &manifests.node_pools {
        if let Some(r) = &pool.node_class_ref {
            if !classes.contains(&r.name.as_str()) {
                classes.push(&r.name);
            }
        }
    }
    for class in &manifests.node_classes {
        if classes.contains(&class.name.as_str()) && class.status.subnets.is_empty() {
            out.push(Assumption::ZonesUnknown {
                class: class.name.clone(),
            });
        }
    }
    if !network_checks {
        out.extend(
            manifests
                .node_classes
                .iter()
                .filter(|c| classes.contains(&c.name.as_str()))
                .filter(|c| c.generation == Some(ApiGeneration::V1))
                .filter(|c| c.network_interfaces().is_some())
                .map(|c| Assumption::NetworkInterfacesUnchecked {
                    class: c.name.clone(),
                }),
        );
    }
    for c in manifests
        .node_classes
        .iter()
        .filter(|c| classes.contains(&c.name.as_str()))
        .filter(|c| c.generation == Some(ApiGeneration::V1))
    {
        if !placement_groups && PlacementGroupSelector::of(c).is_some() {
            out.push(Assumption::PlacementGroupUnresolved {
                class: c.name.clone(),
            });
        }
        if !processor_checks && c.nested_virtualization.as_deref() == Some("enabled") {
            out.push(Assumption::NestedVirtualizationUnchecked {
                class: c.name.clone(),
            });
        }
    }
    if !reservations {
        out.extend(
            reservation_classes(manifests)
                .into_iter()
                .map(|class| Assumption::ReservationsUnknown { class }),
        );
    }
    let unknown: Vec<String> = manifests
        .node_pools
        .iter()
        .filter(|p| p.generation == Some(ApiGeneration::V1) && !p.deleting)
        .filter(|p| !p.conditions.iter().any(|c| c.type_ == "Ready"))
        .filter(|p| {
            let class = manifests.node_classes.iter().find(|c| {
                p.node_class_ref
                    .as_ref()
                    .is_some_and(|r| r.name == c.name && (r.kind.is_empty() || r.kind == c.kind))
            });
            super::input::not_ready(p, class).is_none()
        })
        .map(|p| p.name.clone())
        .collect();
    if !unknown.is_empty() {
        out.push(Assumption::ReadyAssumed { pools: unknown });
    }
    if !spot_prices {
        let spot: Vec<String> = manifests
            .node_pools
            .iter()
            .filter(|p| p.scheduling_requirements().get(CAPACITY_TYPE).has("spot"))
            .map(|p| p.name.clone())
            .collect();
        if !spot.is_empty() {
            out.push(Assumption::NoSpotPrices { pools: spot });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [CT]}]
status:
  conditions: [{type: Ready, status: \"True\"}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
";

    #[test]
    fn zones_and_spot_prices_are_said_when_they_change_the_plan() {
        let m = crate::api::load_str("in.yaml", &POOL.replace("CT", "spot")).unwrap();
        assert_eq!(
            offline(&m, false, false, true, false, false),
            [
                Assumption::ZonesUnknown {
                    class: "default".into()
                },
                Assumption::NoSpotPrices {
                    pools: vec!["default".into()]
                }
            ]
        );
        assert_eq!(offline(&m, true, false, true, false, false).len(), 1);
        let on_demand = crate::api::load_str("in.yaml", &POOL.replace("CT", "on-demand")).unwrap();
        assert_eq!(
            offline(&on_demand, false, false, true, false, false).len(),
            1
        );
        let subnets = format!(
            "{}status:\n  subnets: [{{id: subnet-1, zone: us-east-1a}}]\n",
            POOL.replace("CT", "on-demand")
        );
        let known = crate::api::load_str("in.yaml", &subnets).unwrap();
        assert!(offline(&known, false, false, true, false, false).is_empty());
        let selecting = format!(
            "{}  capacityReservationSelectorTerms: [{{id: cr-0a1}}]\n",
            POOL.replace("CT", "on-demand")
        );
        let selecting = crate::api::load_str("in.yaml", &selecting).unwrap();
        assert_eq!(
            offline(&selecting, false, false, true, false, false),
            [
                Assumption::ZonesUnknown {
                    class: "default".into()
                },
                Assumption::ReservationsUnknown {
                    class: "default".into()
                }
            ]
        );
        assert_eq!(
            offline(&selecting, false, true, true, false, false).len(),
            1,
            "the catalog declares them"
        );
    }

    /// A v1 pool without a Ready condition is taken as ready, and said; one whose class is not
    /// Ready is left out of the plan instead (a warning), not assumed.
    #[test]
    fn a_pool_without_status_is_assumed_ready() {
        let no_status = POOL.replace("CT", "on-demand").replace(
            "status:\n  conditions: [{type: Ready, status: \"True\"}]\n",
            "",
        );
        let m = crate::api::load_str("in.yaml", &no_status).unwrap();
        let said = offline(&m, true, false, true, false, false);
        assert_eq!(
            said[1],
            Assumption::ReadyAssumed {
                pools: vec!["default".into()]
            }
        );
        assert!(said[1]
            .to_string()
            .starts_with("NodePool default has no Ready status condition: taken as Ready"));
        let class_not_ready =
            format!("{no_status}status:\n  conditions: [{{type: Ready, status: \"False\"}}]\n");
        let m = crate::api::load_str("in.yaml", &class_not_ready).unwrap();
        assert_eq!(
            offline(&m, true, false, true, false, false).len(),
            1,
            "zones only"
        );
    }

    /// A class setting `networkInterfaces`, planned with a catalog that lacks the network-card
    /// and ENA facts (`Catalog::checks_network_interfaces`): the skipped check is said.
    #[test]
    fn unchecked_network_interfaces_are_said() {
        let text = format!(
            "{}  networkInterfaces:\n  - {{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}}\n  - {{networkCardIndex: 1, deviceIndex: 0, interfaceType: interface}}\n",
            POOL.replace("CT", "on-demand")
        );
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        assert_eq!(
            offline(&m, true, true, true, false, false).len(),
            1,
            "zones only"
        );
        let said = offline(&m, true, true, false, false, false);
        assert_eq!(
            said[1],
            Assumption::NetworkInterfacesUnchecked {
                class: "default".into()
            }
        );
        assert!(said[1].said_by_default());
        let plain = crate::api::load_str("in.yaml", &POOL.replace("CT", "on-demand")).unwrap();
        assert_eq!(
            offline(&plain, true, true, false, false, false).len(),
            1,
            "no networkInterfaces"
        );
    }

    /// aws v1.14.1 `scheduling/scheduling.go` placement-group Its and "should launch an instance
    /// with nested virtualization enabled": what the plan cannot model is said (docs/
    /// upstream-tests.md § "Karpenter's e2e suites, provisioning").
    #[test]
    fn placement_groups_and_nested_virtualization_are_said() {
        let text = format!(
            "{}  placementGroupSelector: {{name: pg-1}}\n  cpuOptions: {{nestedVirtualization: enabled}}\n",
            POOL.replace("CT", "on-demand")
        );
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        let said = offline(&m, true, true, true, false, false);
        assert_eq!(
            said[1..],
            [
                Assumption::PlacementGroupUnresolved {
                    class: "default".into()
                },
                Assumption::NestedVirtualizationUnchecked {
                    class: "default".into()
                }
            ]
        );
        assert!(said[1].said_by_default() && said[2].said_by_default());
        // A catalog telling placement groups and recording processor features: nothing assumed.
        assert_eq!(
            offline(&m, true, true, true, true, true).len(),
            1,
            "zones only"
        );
        // `nodeclass/placementgroup_test.go` "should set condition false when placement group is
        // not found": the class is not Ready, said once.
        let mut m = m;
        let group = PlacementGroup {
            id: "pg-0a".into(),
            name: "pg-2".into(),
            strategy: crate::model::placement_group::Strategy::Cluster,
            partition_count: 0,
            spread_level: None,
        };
        let said = placement_groups_not_found(&mut m, std::slice::from_ref(&group));
        assert_eq!(said.len(), 1);
        assert!(
            said[0].starts_with("node class default: no available placement group with"),
            "{said:?}"
        );
        let ready = &m.node_classes[0].status.conditions[0];
        assert_eq!(
            (ready.status, ready.reason.as_str()),
            (ConditionStatus::False, "PlacementGroupNotFound")
        );
        let found = PlacementGroup {
            name: "pg-1".into(),
            ..group
        };
        assert!(placement_groups_not_found(&mut m, &[found]).is_empty());
        let disabled = text
            .replace("enabled}", "disabled}")
            .replace("  placementGroupSelector: {name: pg-1}\n", "");
        let m = crate::api::load_str("in.yaml", &disabled).unwrap();
        assert_eq!(
            offline(&m, true, true, true, false, false).len(),
            1,
            "zones only"
        );
    }
}
