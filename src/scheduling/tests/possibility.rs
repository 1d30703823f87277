//! `Options::possibility`: "could this pod go anywhere at all" — the consolidation engine's
//! certain failures (`disruption/consolidation/certain.rs`). Not Karpenter behaviour: a
//! deliberately looser solve whose "nowhere" is a "nowhere" of every ordinary solve with the
//! same counts.

use super::*;

fn tainted_node(name: &str, zone: &str, pods: Vec<crate::model::pod::Pod>) -> ExistingNode {
    ExistingNode {
        node: Node {
            name: name.into(),
            labels: labels_of(&[(HOSTNAME, name), (ZONE, zone)]),
            allocatable: crate::model::resources::Resources::from_pairs(&[
                ("cpu", "2"),
                ("memory", "4Gi"),
                ("pods", "10"),
            ]),
            taints: vec![taint("busy", "", Effect::NoSchedule)],
            ready: true,
            initialized: true,
            ..Default::default()
        },
        pods,
    }
}

fn possible(inp: &Input) -> Plan {
    let mut inp = inp.clone();
    inp.options.possibility = true;
    super::super::solve(&inp)
}

/// An existing node offers its whole allocatable: its pods count for topology, not for room.
#[test]
fn a_node_offers_its_whole_allocatable() {
    let mut inp = input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let mut node = tainted_node("node-a", FAKE_ZONES[0], vec![]);
    node.node.taints.clear();
    node.pods = vec![PodBuilder::new("busy").cpu("2").on_node("node-a").build()];
    inp.existing_nodes.push(node);
    let plan = solve(&inp);
    assert!(plan.existing_nodes.is_empty(), "{plan:#?}");
    assert_eq!(plan.node_claims.len(), 1);
    let plan = possible(&inp);
    assert_eq!(plan.existing_nodes.len(), 1, "{plan:#?}");
    assert!(plan.node_claims.is_empty());
}

/// A spread narrows a NodeClaim to every domain within `maxSkew`: counts 0/1/1 with maxSkew 2
/// admit all three zones; an ordinary solve picks the minimal one, zone 1, where the spot-only
/// pool has no offering, and leaves the pod pending — the looser solve places it in zone 2.
#[test]
fn a_spread_admits_every_domain_within_max_skew() {
    let types = vec![instance_type(
        "small",
        "2",
        "4Gi",
        "10",
        vec![
            offer(FAKE_ZONES[0], ON_DEMAND, 0.1),
            offer(FAKE_ZONES[1], ON_DEMAND, 0.1),
            offer(FAKE_ZONES[2], ON_DEMAND, 0.1),
            offer(FAKE_ZONES[1], SPOT, 0.04),
            offer(FAKE_ZONES[2], SPOT, 0.04),
        ],
    )];
    let pool = with_requirement(node_pool("spot"), CAPACITY_TYPE, In, &[SPOT]);
    let app = |name: &str| {
        PodBuilder::new(name)
            .cpu("100m")
            .label("app", "web")
            .spread(ZONE, 2, true, &[("app", "web")])
    };
    let mut inp = input(vec![app("p").build()], vec![pool_input(pool, types)]);
    inp.existing_nodes = vec![
        tainted_node("n2", FAKE_ZONES[1], vec![app("b2").on_node("n2").build()]),
        tainted_node("n3", FAKE_ZONES[2], vec![app("b3").on_node("n3").build()]),
    ];
    let plan = solve(&inp);
    assert_eq!(plan.unschedulable.len(), 1, "{plan:#?}");
    let plan = possible(&inp);
    assert!(plan.unschedulable.is_empty(), "{plan:#?}");
    assert_eq!(plan.node_claims[0].labels[ZONE], FAKE_ZONES[1]);
}
