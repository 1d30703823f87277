//! Topology keys Karpenter translates in requirements but not in topology terms (the beta zone
//! label, the EBS CSI zone key): the group's domains are only the nodes labelled with the alias
//! itself (docs/karpenter.md §6.5). No upstream test; rules from core v1.14.1
//! `pkg/controllers/provisioning/scheduling/topology.go` (`buildDomainGroups` over translated
//! keys, `newForTopologies`/`newForAffinities` keyed by `TopologyKey` as written, `countDomains`
//! reading `node.Labels[tg.Key]`, `Record` reading the NodeClaim's translated requirements,
//! `updateInverseAntiAffinity` from the domain groups) and `pkg/scheduling/requirement.go`
//! (`NewRequirementWithFlexibility` translates the key of the domain requirement it returns).

use super::*;

const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const ZONES: [&str; 3] = ["test-zone-1", "test-zone-2", "test-zone-3"];

fn pool() -> PoolInput {
    pool_input(
        node_pool("default"),
        vec![instance_type(
            "small",
            "2",
            "4Gi",
            "10",
            on_demand(&ZONES, 0.1),
        )],
    )
}

/// A full node in `zone`, labelled with both zone keys as EKS labels nodes.
fn full_node(name: &str, zone: &str, pod: crate::model::pod::Pod) -> ExistingNode {
    let mut node = roomy_node(name);
    node.allocatable = crate::model::resources::Resources::from_pairs(&[
        ("cpu", "1"),
        ("memory", "4Gi"),
        ("pods", "10"),
    ]);
    node.labels.insert(ZONE.into(), zone.into());
    node.labels.insert(BETA_ZONE.into(), zone.into());
    ExistingNode {
        node,
        pods: vec![pod],
    }
}

fn web(name: &str) -> PodBuilder {
    PodBuilder::new(name).cpu("1").label("app", "web")
}

/// Three replicas spread `DoNotSchedule` on the beta zone key.
fn spread_on_the_beta_zone_key() -> Vec<crate::model::pod::Pod> {
    (0..3)
        .map(|i| {
            web(&format!("web-{i}"))
                .spread(BETA_ZONE, 1, true, &[("app", "web")])
                .build()
        })
        .collect()
}

/// Offline, no node carries the alias: a `DoNotSchedule` spread on it knows no domain and the
/// pods stay pending (Karpenter: `nextDomainTopologySpread` over an empty domain map), the
/// reason naming the alias. Before s29 we translated the key and spread them over the zones.
#[test]
fn a_spread_on_the_beta_zone_key_without_such_nodes_keeps_the_pods_pending() {
    let pods = spread_on_the_beta_zone_key();
    let plan = solve(&input(pods, vec![pool()]));
    assert!(plan.node_claims.is_empty(), "{plan:#?}");
    assert_eq!(plan.unschedulable.len(), 3);
    let reason = plan.unschedulable[0].reason.to_string();
    assert!(
        reason
            .contains("an alias of topology.kubernetes.io/zone that Karpenter does not translate"),
        "{reason}"
    );
}

/// The nodes labelled with the alias are its domains; a new NodeClaim is given a requirement on
/// the translated key and records nothing in the group, so every pod sees the same counts and
/// (Karpenter: a random tie, ours: the first) the same zone, never zone 1 that no node has.
#[test]
fn a_spread_on_the_beta_zone_key_takes_the_nodes_zones_and_never_counts_new_nodeclaims() {
    let pods = spread_on_the_beta_zone_key();
    let mut inp = input(pods, vec![pool()]);
    let filler = |n: &str| PodBuilder::new(n).cpu("1").on_node(n).build();
    inp.existing_nodes = vec![
        full_node("n2", ZONES[1], filler("n2")),
        full_node("n3", ZONES[2], filler("n3")),
    ];
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:#?}", plan.unschedulable);
    assert_eq!(plan.node_claims.len(), 3, "one pod per small node");
    assert!(
        plan.node_claims.iter().all(|c| c.zones == [ZONES[1]]),
        "{plan:#?}"
    );
}

/// A preferred anti-affinity on the alias fails (no domain) and is relaxed away: the replicas
/// are planned as if it were not there.
#[test]
fn a_preferred_anti_affinity_on_the_beta_zone_key_is_relaxed_away() {
    let pods = |preferred: bool| {
        (0..3)
            .map(|i| {
                let pod = web(&format!("web-{i}"));
                match preferred {
                    true => pod.preferred_anti_affinity(100, BETA_ZONE, &[("app", "web")]),
                    false => pod,
                }
                .build()
            })
            .collect()
    };
    let plan = solve(&input(pods(true), vec![pool()]));
    let without = solve(&input(pods(false), vec![pool()]));
    assert!(plan.unschedulable.is_empty(), "{:#?}", plan.unschedulable);
    assert_eq!(plan.node_claims, without.node_claims);
}

/// A running pod's required anti-affinity on the alias: its inverse group knows the pools'
/// domains only (none on the alias), so a pending pod it selects can go nowhere — not to a new
/// NodeClaim, not to a node in another zone. With the zone key itself the pod goes to another
/// zone.
#[test]
fn a_running_pods_anti_affinity_on_the_beta_zone_key_keeps_the_pods_it_selects_off_every_node() {
    for (key, placed) in [(BETA_ZONE, false), (ZONE, true)] {
        let running = web("web-0")
            .anti_affinity(key, &[("app", "web")])
            .on_node("n1")
            .build();
        let mut inp = input(vec![web("web-1").build()], vec![pool()]);
        inp.existing_nodes = vec![full_node("n1", ZONES[0], running)];
        let plan = solve(&inp);
        assert_eq!(plan.unschedulable.is_empty(), placed, "{key}: {plan:#?}");
        if placed {
            assert!(plan
                .node_claims
                .iter()
                .all(|c| !c.zones.contains(&ZONES[0].to_string())));
        } else {
            let reason = plan.unschedulable[0].reason.to_string();
            assert!(
                reason.contains("of an existing pod cannot be satisfied"),
                "{reason}"
            );
        }
    }
}

/// Nodes labelled with the alias are the domains of a preferred anti-affinity on it, but placing
/// a replica on one records nothing: an existing node's requirements are its labels with the keys
/// translated (`existingnode.go` `NewLabelRequirements(n.Labels())`, `requirement.go`
/// `NewRequirementWithFlexibility`), so `Record` finds no requirement on the alias (`Get` answers
/// `Exists`, no values) and both domains stay empty for every replica — they all go to the first
/// node with room, as with no preference. Sweep 14 (a 6-replica Deployment preferring
/// anti-affinity on the beta zone key, index id `62804584291`, on EKS nodes carrying both labels).
#[test]
fn a_preferred_anti_affinity_on_the_beta_zone_key_records_nothing_on_nodes_labelled_with_it() {
    let pods = (0..3)
        .map(|i| {
            web(&format!("web-{i}"))
                .preferred_anti_affinity(100, BETA_ZONE, &[("app", "web")])
                .build()
        })
        .collect();
    let mut inp = input(pods, vec![pool()]);
    let roomy = |name: &str, zone: &str| {
        let mut node = roomy_node(name);
        node.labels.insert(ZONE.into(), zone.into());
        node.labels.insert(BETA_ZONE.into(), zone.into());
        ExistingNode { node, pods: vec![] }
    };
    inp.existing_nodes = vec![roomy("n1", ZONES[0]), roomy("n2", ZONES[1])];
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:#?}", plan.unschedulable);
    assert!(plan.node_claims.is_empty(), "{plan:#?}");
    let on = |node: &str| {
        plan.existing_nodes
            .iter()
            .find(|p| p.node == node)
            .map_or(0, |p| p.pods.len())
    };
    assert_eq!((on("n1"), on("n2")), (3, 0), "{:#?}", plan.existing_nodes);
}
