//! What a consolidation simulation counts for topology: every bound pod but those it places
//! again (`core v1.14.1 pkg/controllers/disruption/helpers.go SimulateScheduling` hands the
//! pending pods, the candidates' currently reschedulable pods and the deleting nodes' currently
//! reschedulable pods to `provisioner.NewScheduler`, whose `scheduling/topology.go NewTopology`
//! puts exactly those in `excludedPods`; `countDomains` and `updateInverseAffinities` skip only
//! them). A candidate's DaemonSet pod, and a deleting node's `do-not-disrupt` or PDB-held pod,
//! stay where they are and count. No upstream test covers these cases; each test names the lines.

use super::*;
use crate::disruption::consolidation::sim::{PodRef, SimRequest, Simulator};

const Z2: &str = "test-zone-2";

/// small (2 cpu, $0.10), medium (4 cpu, $0.20), large (8 cpu, $0.40), on-demand in two zones.
fn two_zone_types() -> Vec<InstanceType> {
    let t = |name: &str, cpu: &str, price: f64| {
        instance_type(name, cpu, "16Gi", "110", on_demand(&[ZONE, Z2], price))
    };
    vec![
        t("small", "2", 0.10),
        t("medium", "4", 0.20),
        t("large", "8", 0.40),
    ]
}

/// A large node in `zone`.
fn large_in(name: &str, zone: &str, pods: Vec<Pod>) -> NodeInput {
    managed_node(
        name,
        "default",
        &two_zone_types()[2],
        zone,
        ON_DEMAND,
        NOW,
        pods,
    )
}

/// A large node in zone 1 with room for a few cpu that is no candidate itself (the node's
/// `karpenter.sh/do-not-disrupt`): where a pod that may stay in zone 1 goes.
fn room_in_zone_1() -> NodeInput {
    let mut n = large_in("room", ZONE, vec![pod("busy", "4")]);
    n.node
        .annotations
        .insert("karpenter.sh/do-not-disrupt".into(), "true".into());
    n
}

fn two_zones(nodes: Vec<NodeInput>) -> ConsolidationInput {
    consolidation_input(NOW, vec![(pool(), two_zone_types())], nodes)
}

/// A replica spread over zones (`maxSkew: 1`, DoNotSchedule) with the other `app=web` pods.
fn spread_web(name: &str) -> Pod {
    PodBuilder::new(name)
        .cpu("1")
        .label("app", "web")
        .spread(crate::model::labels::ZONE, 1, true, &[("app", "web")])
        .build()
}

/// A pod that must share a zone with a `app=logger` pod.
fn near_logger(name: &str) -> Pod {
    PodBuilder::new(name)
        .cpu("1")
        .label("app", name)
        .affinity(crate::model::labels::ZONE, &[("app", "logger")])
        .build()
}

/// A DaemonSet's `app=logger` pod.
fn logger() -> Pod {
    PodBuilder::new("logger-a")
        .cpu("100m")
        .label("app", "logger")
        .daemonset("logger")
        .build()
}

/// No upstream test; rule from helpers.go `SimulateScheduling` line 90 (a candidate hands only
/// its `reschedulablePods` — DaemonSet and mirror pods are not — to the scheduler) and
/// topology.go `countDomains` line 409 (only `excludedPods` are skipped): node `a` in zone 1
/// holds `web`, which needs an `app=logger` pod in its zone, and a DaemonSet's logger pod. The
/// logger stays on `a` while `a` is simulated away and still counts, so `web` may go to `room`
/// in zone 1 and `a` is deleted. We counted no pod of `a`: `web` fitted nowhere and `a` stayed.
#[test]
fn a_daemonset_pod_staying_on_the_candidate_counts_for_pod_affinity() {
    let r = evaluate(two_zones(vec![
        large_in("a", ZONE, vec![near_logger("web"), logger()]),
        room_in_zone_1(),
    ]));
    assert_eq!(r.actions.len(), 1, "{:#?}", r.nodes);
    assert_eq!(
        (r.actions[0].decision, r.actions[0].nodes.as_slice()),
        (Decision::Delete, &["a".to_string()][..])
    );
}

/// No upstream test; rule from helpers.go `SimulateScheduling` line 98 (a deleting node hands
/// only its `CurrentlyReschedulablePods` to the scheduler: not a `do-not-disrupt` pod) and
/// topology.go `countDomains` line 409: `going` (deleting, zone 1) keeps `web-1` under
/// `karpenter.sh/do-not-disrupt`, which counts in zone 1 for the `app=web` zone spread. `web-2`
/// of candidate `a` (zone 2) cannot go to `room` in zone 1 (skew 2), so `a` is replaced by a
/// small node in zone 2. We counted no pod of `going`: `web-2` went to `room`, `a` deleted.
#[test]
fn a_do_not_disrupt_pod_staying_on_a_deleting_node_counts_for_a_spread() {
    let mut guarded = spread_web("web-1");
    guarded.do_not_disrupt = Some("true".into());
    let mut going = large_in("going", ZONE, vec![guarded]);
    going.claim.as_mut().unwrap().deleting = true;
    let r = evaluate(two_zones(vec![
        going,
        large_in("a", Z2, vec![spread_web("web-2")]),
        room_in_zone_1(),
    ]));
    assert_only_a_replaced_in_zone_2(&r);
}

/// The one action: `a` replaced by a node in zone 2.
fn assert_only_a_replaced_in_zone_2(r: &ConsolidationReport) {
    assert_eq!(r.actions.len(), 1, "{:#?}", r.nodes);
    let a = &r.actions[0];
    assert_eq!(
        (a.decision, a.nodes.as_slice()),
        (Decision::Replace, &["a".to_string()][..])
    );
    assert_eq!(a.replacement.as_ref().unwrap().zones, [Z2]);
}

/// No upstream test; rule from helpers.go `SimulateScheduling` line 98 and pdb.go
/// `IsCurrentlyReschedulable` (a pod a PDB fully blocks stays on its deleting node) with
/// topology.go `updateInverseAffinities` line 317 (only `excludedPods` are skipped): `going`
/// (deleting, zone 1) keeps `guard`, held by a `maxUnavailable: 0` PDB, whose required zone
/// anti-affinity keeps `app=web` pods out of zone 1. `web` of candidate `a` (zone 2) cannot go
/// to `room` in zone 1, so `a` is replaced in zone 2. We counted no pod of `going`: `a` deleted.
#[test]
fn a_pdb_held_pod_staying_on_a_deleting_node_repels_by_anti_affinity() {
    let guard = PodBuilder::new("guard")
        .cpu("1")
        .label("app", "guard")
        .anti_affinity(crate::model::labels::ZONE, &[("app", "web")])
        .build();
    let mut going = large_in("going", ZONE, vec![guard]);
    going.claim.as_mut().unwrap().deleting = true;
    let web = PodBuilder::new("web").cpu("1").label("app", "web").build();
    let mut i = two_zones(vec![going, large_in("a", Z2, vec![web]), room_in_zone_1()]);
    i.pdbs = vec![PdbInput {
        max_unavailable: Some(IntOrPercent::Int(0)),
        ..pdb("guard", "guard", 0)
    }];
    assert_only_a_replaced_in_zone_2(&evaluate(i));
}

/// helpers.go `SimulateScheduling` lines 112-128: the pods handed to the scheduler are excluded
/// from topology, the rest counted. The simulation of `a` alone (with `web` moving and the
/// logger staying) counts the logger; once it is over, the cluster marks nothing as moving.
#[test]
fn a_simulation_marks_only_the_pods_it_places_and_unmarks_them() {
    let input = two_zones(vec![
        large_in("a", ZONE, vec![near_logger("web"), logger()]),
        room_in_zone_1(),
    ]);
    let mut cluster = cluster::Cluster::new(input);
    let request = SimRequest {
        candidates: vec![0],
        pods: vec![(0, 0)],
        consolidation: true,
        with_pending: true,
        reasons: true,
    };
    let result = sim::Reference.simulate(&mut cluster, &request);
    assert!(result.failures.is_empty(), "{:?}", result.failures);
    assert_eq!(
        result.placements,
        [(1, vec![PodRef::Bound { node: 0, pod: 0 }])]
    );
    assert!(cluster.sched.moving.is_empty());
}

/// No upstream test; rule from helpers.go `SimulateScheduling` lines 133-150 (a pod of a
/// deleting node that lands on a node not yet initialized is no `UninitializedNodeError`; v0.37
/// on). The NodePool offers zone 1 only. `going` (deleting, zone 1) holds `s`, anti-affine by
/// zone to `x` on `a` (zone 1): `s` fits nowhere while `x` is there (`b` in zone 2 has no room
/// for it). Simulating `a` away, `s` goes to `fresh` (zone 1, not initialized) and `x` to `b`:
/// `a` is deleted. We failed the simulation on `s` and kept `a`. The pool's requirement
/// `zone In [zone 1, zone 2]` (its types offer zone 1 only) makes zone 2 a domain of `s`'s
/// inverse anti-affinity group, which knows only the pools' domains (`topology.go`
/// `updateInverseAntiAffinity`, session 27): without it `x` could not go to `b`.
#[test]
fn a_deleting_nodes_pod_may_land_on_an_uninitialized_node() {
    let s = PodBuilder::new("s")
        .cpu("2")
        .label("app", "s")
        .anti_affinity(crate::model::labels::ZONE, &[("app", "x")])
        .build();
    let mut going = node("going", "large", vec![s]);
    going.claim.as_mut().unwrap().deleting = true;
    let mut fresh = node("fresh", "large", vec![]);
    fresh.node.initialized = false;
    let b = managed_node(
        "b",
        "default",
        &it("large"),
        Z2,
        ON_DEMAND,
        NOW,
        vec![pod("fill", "6500m")],
    );
    let x = PodBuilder::new("x").cpu("500m").label("app", "x").build();
    let mut p = pool();
    p.requirements
        .push(crate::model::requirements::NodeSelectorRequirement::new(
            crate::model::labels::ZONE,
            crate::model::requirements::Operator::In,
            &[ZONE, Z2],
        ));
    let r = evaluate(with_pool(
        p,
        vec![going, node("a", "large", vec![x]), b, fresh],
    ));
    let deleted: Vec<&str> = r
        .actions
        .iter()
        .filter(|a| a.decision == Decision::Delete)
        .flat_map(|a| a.nodes.iter().map(String::as_str))
        .collect();
    assert!(deleted.contains(&"a"), "{:#?}", r.nodes);
}

/// No upstream test; rule from helpers.go `SimulateScheduling` l.59 (the scheduler gets
/// `nodes.Active()` minus the candidates) with scheduling/topology.go `countDomains` (only those
/// nodes register their domains; `excludedPods` are not counted): candidate `a` is the only node
/// in zone 3, which no NodePool offers, and holds `web-3` of an `app=web` zone spread
/// (`maxSkew: 1`) with `web-1` in zone 1 and `web-2` in zone 2. Simulating `a` away, zone 3 is
/// no domain, the minimum is 1 and `web-3` joins zone 1 or 2: `a` is deleted. We kept zone 3 in
/// the universe (empty, minimum 0): `web-3` fitted nowhere and `a` stayed.
#[test]
fn a_candidates_zone_leaves_the_spread_universe() {
    let held = |name: &str, zone: &str, pods: Vec<Pod>| {
        let mut n = large_in(name, zone, pods);
        n.node
            .annotations
            .insert("karpenter.sh/do-not-disrupt".into(), "true".into());
        n
    };
    let r = evaluate(two_zones(vec![
        held("r1", ZONE, vec![pod("busy", "4"), spread_web("web-1")]),
        held("r2", Z2, vec![spread_web("web-2")]),
        large_in("a", "test-zone-3", vec![spread_web("web-3")]),
    ]));
    assert_eq!(r.actions.len(), 1, "{:#?}", r.nodes);
    assert_eq!(
        (r.actions[0].decision, r.actions[0].nodes.as_slice()),
        (Decision::Delete, &["a".to_string()][..])
    );
}
