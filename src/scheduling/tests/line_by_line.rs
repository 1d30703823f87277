//! The scheduler's node and topology code read line by line against core v1.14.1
//! `pkg/controllers/provisioning/scheduling/` (`topology.go`, `topologygroup.go`,
//! `existingnode.go`, `nodeclaim.go`): each test is a scenario where we differed (docs/
//! upstream-tests.md, "Scheduler nodes and topology, line by line (s27-linesched)").

use super::*;
use crate::scheduling::{solve_with, SolveMemo};

const Z1: &str = "test-zone-1";
const Z2: &str = "test-zone-2";
const Z3: &str = "test-zone-3";

/// The small catalog, offered in zones 1 and 2 only.
fn two_zone_catalog() -> Vec<crate::model::instance_type::InstanceType> {
    let z = [Z1, Z2];
    vec![
        instance_type("small", "2", "4Gi", "10", on_demand(&z, 0.1)),
        instance_type("medium", "4", "8Gi", "20", on_demand(&z, 0.2)),
    ]
}

fn node_in(name: &str, zone: &str, pods: Vec<crate::model::pod::Pod>) -> ExistingNode {
    let mut node = roomy_node(name);
    node.labels.insert(ZONE.into(), zone.into());
    ExistingNode { node, pods }
}

/// Zone 3 is a deleting node's only: no pool offers it. `one` (zone 1) runs `web-0`; `web-1` and
/// `web-2` join the `app=web` zone spread (`maxSkew: 1`), shaped by `f`.
fn deleting_node_in_an_unoffered_zone(
    f: impl Fn(PodBuilder) -> PodBuilder,
) -> (Input, impl Fn(&Plan)) {
    node_in_an_unoffered_zone(f, |n| n.deleting = true)
}

/// As [`deleting_node_in_an_unoffered_zone`], the zone-3 node marked by `mark` (deleting, or a
/// NodeClaim without a Node) instead.
fn node_in_an_unoffered_zone(
    f: impl Fn(PodBuilder) -> PodBuilder,
    mark: impl Fn(&mut crate::model::node::Node),
) -> (Input, impl Fn(&Plan)) {
    let web = |name: &str| {
        f(PodBuilder::new(name).cpu("1").label("app", "web").spread(
            ZONE,
            1,
            true,
            &[("app", "web")],
        ))
        .build()
    };
    let mut inp = input(
        vec![web("web-1"), web("web-2")],
        vec![pool_input(node_pool("default"), two_zone_catalog())],
    );
    let mut gone = node_in("gone", Z3, vec![]);
    mark(&mut gone.node);
    inp.existing_nodes = vec![node_in("one", Z1, vec![web("web-0")]), gone];
    let check = |plan: &Plan| {
        assert!(plan.unschedulable.is_empty(), "{:#?}", plan.unschedulable);
        let zone_2: usize = (plan.node_claims.iter())
            .filter(|c| c.zones == [Z2])
            .map(|c| c.pods.len())
            .sum();
        let on_one: usize = (plan.existing_nodes.iter())
            .filter(|e| e.node == "one")
            .map(|e| e.pods.len())
            .sum();
        assert_eq!((zone_2, on_one), (1, 1), "{plan:#?}");
    };
    (inp, check)
}

/// No upstream test; rule from core v1.14.1 `scheduling/topology.go` `countDomains` (l.359-375:
/// only `t.stateNodes` register their domains) with `provisioning/provisioner.go` `Schedule`
/// (l.403: the scheduler gets `nodes.Active()`; a deleting node is not active) and
/// `topologygroup.go` `domainMinCount`: zone 3 is not a domain, the global minimum is zone 2's
/// 0 and then 1, so `web-1` goes to zone 2 and `web-2` to `one` in zone 1. We counted zone 3
/// (empty) in the minimum: `web-2` fitted nowhere.
#[test]
fn a_deleting_nodes_zone_is_no_spread_domain() {
    let (inp, check) = deleting_node_in_an_unoffered_zone(|b| b);
    check(&solve(&inp));
}

/// As above with a node filter (`nodeAffinityPolicy: Honor` and a required node affinity every
/// node meets), whose universe a memo keeps (`countDomains` l.366 `tg.nodeFilter.Matches`).
#[test]
fn a_deleting_nodes_zone_is_no_domain_of_a_node_filtering_spread() {
    let (inp, check) =
        deleting_node_in_an_unoffered_zone(|b| b.required_term(&[(ZONE, In, &[Z1, Z2, Z3])]));
    check(&solve(&inp));
}

/// As above with `nodeTaintsPolicy: Honor` (a universe derived for the group alone).
#[test]
fn a_deleting_nodes_zone_is_no_domain_of_a_taint_honouring_spread() {
    let (inp, check) = deleting_node_in_an_unoffered_zone(|b| b.spread_policies(true, None));
    check(&solve(&inp));
}

/// No upstream test; core v1.14.1 `scheduling/topology.go` `countDomains` l.378-382 ("ignore
/// state nodes which are tracking in-flight NodeClaims": `n.Node == nil`): a NodeClaim launched in
/// zone 3, which no pool offers (a static pool's, or its pool narrowed since), with room and no
/// Node yet, brings no domain, so `web-1` goes to zone 2 and `web-2` to `one`, none to the
/// claim. **Differed, fixed** (s29-linestate): zone 3 was an empty domain and `web-2` went onto
/// the in-flight claim. Plain, node-filtering and taint-honouring spreads.
#[test]
fn an_in_flight_nodeclaims_zone_is_no_spread_domain() {
    let in_flight = |n: &mut crate::model::node::Node| n.in_flight = true;
    let (inp, check) = node_in_an_unoffered_zone(|b| b, in_flight);
    check(&solve(&inp));
    let (inp, check) =
        node_in_an_unoffered_zone(|b| b.required_term(&[(ZONE, In, &[Z1, Z2, Z3])]), in_flight);
    check(&solve(&inp));
    let (inp, check) = node_in_an_unoffered_zone(|b| b.spread_policies(true, None), in_flight);
    check(&solve(&inp));
}

/// An in-flight NodeClaim still registers its hostname (`existingnode.go NewExistingNode`
/// l.72): a pod spreading over hostnames (`maxSkew: 1`) beside one matching pod on `one` goes
/// to the empty in-flight claim, not to a new node.
#[test]
fn an_in_flight_nodeclaim_keeps_its_hostname_domain() {
    let web = |name: &str| {
        PodBuilder::new(name)
            .cpu("1")
            .label("app", "web")
            .spread(HOSTNAME, 1, true, &[("app", "web")])
            .build()
    };
    let mut inp = input(
        vec![web("web-1")],
        vec![pool_input(node_pool("default"), two_zone_catalog())],
    );
    let mut flight = node_in("flight", Z3, vec![]);
    flight.node.in_flight = true;
    inp.existing_nodes = vec![node_in("one", Z1, vec![web("web-0")]), flight];
    let plan = solve(&inp);
    assert!(plan.node_claims.is_empty(), "{plan:#?}");
    let on_flight: usize = (plan.existing_nodes.iter())
        .filter(|e| e.node == "flight")
        .map(|e| e.pods.len())
        .sum();
    assert_eq!(on_flight, 1, "{plan:#?}");
}

/// A tracking memo (consolidation's) follows the `deleting` flag a simulation toggles: the zone
/// leaves the universe while its node is being removed and comes back when it is not.
#[test]
fn a_tracking_memo_follows_the_deleting_flag_in_the_domain_universe() {
    for shape in 0..3 {
        let (mut inp, check) = deleting_node_in_an_unoffered_zone(move |b| match shape {
            0 => b,
            1 => b.required_term(&[(ZONE, In, &[Z1, Z2, Z3])]),
            _ => b.spread_policies(true, None),
        });
        let mut memo = SolveMemo::tracking();
        inp.existing_nodes[1].node.deleting = false;
        let kept = solve_with(&inp, &mut memo);
        assert_eq!(kept, solve(&inp), "shape {shape}: zone 3 kept");
        // Active, the node takes a replica in zone 3.
        assert!(
            kept.existing_nodes.iter().any(|e| e.node == "gone"),
            "shape {shape}: {kept:#?}"
        );
        inp.existing_nodes[1].node.deleting = true;
        let removed = solve_with(&inp, &mut memo);
        check(&removed);
        assert_eq!(removed, solve(&inp), "shape {shape}: zone 3 removed");
        inp.existing_nodes[1].node.deleting = false;
        assert_eq!(solve_with(&inp, &mut memo), kept, "shape {shape}: back");
    }
}

/// A pod counted on a node being removed still brings its node's domain (`countDomains`
/// l.420 `tg.Record(domain)` for every pod not in `excludedPods`): `stay` (not placed again)
/// on the deleting node in zone 3 makes zone 3 a domain with one pod, so the minimum is 0 in
/// zone 2 and then 1, and both new replicas find a place.
#[test]
fn a_pod_counted_on_a_deleting_node_keeps_its_zone_a_domain() {
    let (mut inp, check) = deleting_node_in_an_unoffered_zone(|b| b);
    let stay = PodBuilder::new("stay").cpu("1").label("app", "web").build();
    inp.existing_nodes[1].pods.push(stay);
    check(&solve(&inp));
}

/// A node without a `kubernetes.io/hostname` label (an in-flight NodeClaim's labels rarely
/// carry one) takes a pod whose hostname topology `shape` allows it.
fn lands_on_a_node_without_a_hostname_label(shape: impl Fn(PodBuilder) -> PodBuilder) -> Plan {
    let pod = shape(PodBuilder::new("web-1").cpu("1").label("app", "web")).build();
    let mut inp = input(
        vec![pod],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let mut unlabelled = node_in("n1", Z1, vec![]);
    unlabelled.node.labels.remove(HOSTNAME);
    inp.existing_nodes = vec![unlabelled];
    solve(&inp)
}

fn on_n1(plan: &Plan) -> bool {
    plan.node_claims.is_empty()
        && plan.unschedulable.is_empty()
        && (plan.existing_nodes.iter()).any(|e| e.node == "n1" && e.pods.len() == 1)
}

/// No upstream test; rule from core v1.14.1 `scheduling/existingnode.go` l.72 (every existing
/// node registers `StateNode.HostName()` — its hostname label, else its name — as a hostname
/// domain) and `topologygroup.go` `nextDomainAntiAffinity` / `nextDomainTopologySpread` /
/// `nextDomainAffinity` (a single hostname reads `t.domains[hostName]`, 0 when unknown): a pod
/// with hostname anti-affinity, a hostname spread or a self-selecting hostname affinity may go
/// to node `n1`, which has no hostname label. We knew only hostname labels as domains: `n1`
/// was refused and a NodeClaim made.
#[test]
fn a_node_without_a_hostname_label_is_a_hostname_domain() {
    let anti = |b: PodBuilder| b.anti_affinity(HOSTNAME, &[("app", "web")]);
    let spread = |b: PodBuilder| b.spread(HOSTNAME, 1, true, &[("app", "web")]);
    let affinity = |b: PodBuilder| b.affinity(HOSTNAME, &[("app", "web")]);
    for (what, plan) in [
        (
            "anti-affinity",
            lands_on_a_node_without_a_hostname_label(anti),
        ),
        ("spread", lands_on_a_node_without_a_hostname_label(spread)),
        (
            "affinity",
            lands_on_a_node_without_a_hostname_label(affinity),
        ),
    ] {
        assert!(on_n1(&plan), "{what}: {plan:#?}");
    }
}

/// `guard` (bound in zone 1 on `g`) keeps `app=web` pods out of its zone by required zone
/// anti-affinity; `web` is pending, shaped by `f`; node `far` has room in zone 3, which the
/// default pool (zones 1 and 2) does not offer.
fn web_near_a_guard(f: impl Fn(PodBuilder) -> PodBuilder, pools: Vec<PoolInput>) -> Input {
    let guard = PodBuilder::new("guard")
        .cpu("1")
        .label("app", "guard")
        .anti_affinity(ZONE, &[("app", "web")])
        .build();
    let web = f(PodBuilder::new("web").cpu("1").label("app", "web")).build();
    let mut inp = input(vec![web], pools);
    inp.existing_nodes = vec![node_in("g", Z1, vec![guard]), node_in("far", Z3, vec![])];
    inp
}

/// No upstream test; rule from core v1.14.1 `scheduling/topology.go` `updateInverseAntiAffinity`
/// (l.335: the inverse group's domains are `t.domainGroups[key]`, the NodePools'; `countDomains`,
/// which adds the nodes' domains, runs for the pods' own groups only) and `topologygroup.go`
/// `nextDomainAntiAffinity` (a pod the group selects may go only to its `emptyDomains`): zone 3
/// is no domain of `guard`'s group, so `web` cannot go to `far`; it gets a NodeClaim in zone 2.
/// We gave inverse groups every node's domains: `web` went to `far`.
#[test]
fn an_existing_pods_anti_affinity_knows_only_the_pools_zones() {
    let plan = solve(&web_near_a_guard(
        |b| b,
        vec![pool_input(node_pool("default"), two_zone_catalog())],
    ));
    assert!(plan.existing_nodes.is_empty(), "{plan:#?}");
    assert_eq!(plan.node_claims.len(), 1, "{plan:#?}");
    assert_eq!(plan.node_claims[0].zones, [Z2]);
}

/// No upstream test; rule from `topologydomaingroup.go` `ForEachDomain` (any taint policy but
/// `Ignore` keeps only the domains of pools whose taints the pod tolerates; an affinity group's
/// zero `TopologyNodeFilter` has an empty policy) with `updateInverseAntiAffinity` (the group is
/// built for its owner, `guard`): `gpu` (tainted, zones 1-3) is the only pool in zone 3 and
/// `guard` does not tolerate it, so zone 3 is no domain of `guard`'s group and `web`, which
/// tolerates `gpu`, goes to zone 2 only. We gave the group zone 3: `web` could go to `far`.
#[test]
fn an_existing_pods_anti_affinity_knows_only_the_zones_of_pools_it_tolerates() {
    let mut gpu = node_pool("gpu");
    gpu.taints = vec![taint("gpu", "true", Effect::NoSchedule)];
    let pools = vec![
        pool_input(node_pool("default"), two_zone_catalog()),
        pool_input(gpu, small_catalog()),
    ];
    let plan = solve(&web_near_a_guard(
        |b| b.toleration("gpu", "true", Effect::NoSchedule),
        pools,
    ));
    assert!(plan.existing_nodes.is_empty(), "{plan:#?}");
    assert_eq!(plan.node_claims.len(), 1, "{plan:#?}");
    assert_eq!(plan.node_claims[0].zones, [Z2]);
}
