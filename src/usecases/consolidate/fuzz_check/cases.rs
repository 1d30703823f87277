//! The fuzzer's findings, minimised into named cases: each one a report the first checker
//! called a violation, decided against Karpenter's source (docs/upstream-tests/fuzzing.md
//! "Consolidation reports checked against their own rules (s32-fuzzcons)").

use super::gen::{Budget, Gen, NodeSpec, Owner, PodSpec, Policy, Pool, Rng, Spec};
use super::{check, manifests, report};
use crate::disruption::consolidation::{ConsolidationReport, Decision, Method, NodeDecision};

fn pool(policy: Policy, expire_after: Option<i64>) -> Pool {
    Pool {
        name: "pool-0".into(),
        policy,
        consolidate_after: Some(0),
        budgets: vec![Budget {
            percent: true,
            value: 100,
            reasons: Vec::new(),
            window: None,
        }],
        expire_after,
        types: vec!["m5.large", "m5.xlarge"],
        capacity_types: vec!["on-demand"],
        tainted: false,
        min_values: None,
    }
}

fn node(name: &str, itype: &'static str, age: i64, pods: Vec<PodSpec>) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        pool: 0,
        itype,
        capacity_type: "on-demand",
        zone: "us-east-1a",
        reservation: None,
        initialized: true,
        ready: true,
        age,
        last_pod_event_age: None,
        drifted: false,
        do_not_disrupt: false,
        pods,
    }
}

fn pod(name: &str, app: &str, cpu_m: u64) -> PodSpec {
    PodSpec {
        name: name.into(),
        app: app.into(),
        cpu_m,
        mem_mi: 128,
        owner: Owner::ReplicaSet,
        do_not_disrupt: false,
        tolerates: false,
        zone_selector: None,
        high_priority: false,
        spread: false,
        anti_affinity: false,
    }
}

/// A v1 cluster of `nodes` in one pool, the catalog of seed 1.
fn spec(pool: Pool, nodes: Vec<NodeSpec>) -> Spec {
    let mut s = super::gen::generate(&mut Rng::new(1));
    s.gen = Gen::V1;
    s.spot_to_spot = false;
    s.reservations = Vec::new();
    s.best_effort = false;
    s.pools = vec![pool];
    s.nodes = nodes;
    s.pdbs = Vec::new();
    s
}

fn run(s: &Spec) -> ConsolidationReport {
    let r = report(&manifests::objects(s), &manifests::catalog(s), s).unwrap();
    assert_eq!(check::check(s, &r), Vec::<String>::new(), "{r:#?}");
    r
}

fn row<'a>(
    r: &'a ConsolidationReport,
    name: &str,
) -> &'a crate::disruption::consolidation::NodeReport {
    r.nodes.iter().find(|n| n.name == name).unwrap()
}

/// Seeds 43, 134, 188, 301, 321 (v1alpha5, v1beta1): a PDB allowing 0 disruptions does not hold
/// a pod that tolerates every taint — it tolerates `karpenter.sh/disrupted:NoSchedule`, so it is
/// never evicted (core v1.14.1 `utils/pdb/pdb.go` `isEvictable` → `utils/pod/scheduling.go`
/// `IsEvictable`; v0.37.7 and v0.31.4 the same). The checker had counted it.
#[test]
fn a_pdb_at_zero_does_not_hold_a_pod_tolerating_the_disrupted_taint() {
    let mut tolerant = pod("p0", "app-0", 100);
    tolerant.tolerates = true;
    // node-b stays (its pod is do-not-disrupt) and has room for p0.
    let mut stays = pod("p1", "app-1", 1000);
    stays.do_not_disrupt = true;
    let mut s = spec(
        pool(Policy::Underutilized, None),
        vec![
            node("node-a", "m5.large", 90_000, vec![tolerant]),
            node("node-b", "m5.xlarge", 90_000, vec![stays]),
        ],
    );
    s.pdbs = vec![super::gen::Pdb {
        app: "app-0".into(),
        min_available: false,
        percent: false,
        value: 0,
    }];
    let r = run(&s);
    assert_ne!(row(&r, "node-a").decision, NodeDecision::None, "{r:#?}");
    // Without the toleration the same PDB holds the node.
    s.nodes[0].pods[0].tolerates = false;
    let r = run(&s);
    let reason = row(&r, "node-a").reason.as_ref().map(ToString::to_string);
    assert!(
        reason
            .as_deref()
            .is_some_and(|t| t.contains("default/pdb-0")),
        "{r:#?}"
    );
}

/// Seeds 31, 32, 35: v1 expiration deletes the NodeClaim (forceful) and the provisioner launches
/// for its pods: the action is a `delete` naming that launch, and the drain waits for a
/// do-not-disrupt pod instead of moving it (core v1.14.1 `nodeclaim/expiration/controller.go`;
/// `node/termination/terminator`; docs/spec.md §9 `drainWaitsFor`). The checker had required
/// a `replace` for a launch and every pod moved.
#[test]
fn v1_expiration_is_a_delete_naming_the_launch_and_waits_for_do_not_disrupt() {
    let mut held = pod("p1", "app-1", 100);
    held.do_not_disrupt = true;
    let s = spec(
        pool(Policy::WhenEmpty, Some(3600)),
        vec![node(
            "node-a",
            "m5.large",
            90_000,
            vec![pod("p0", "app-0", 1500), held],
        )],
    );
    let r = run(&s);
    let a = &r.actions[0];
    assert_eq!(
        (a.method, a.decision),
        (Method::Expiration, Decision::Delete),
        "{r:#?}"
    );
    assert!(a.replacement.is_some(), "{r:#?}");
    assert_eq!(
        row(&r, "node-a").drain_waits_for,
        vec!["default/p1".to_string()]
    );
}

/// Seed 305 (v1alpha5): Karpenter v0.31.4 finishes each action before its next pass, so a
/// replacement launched in pass 2 is an initialized node in pass 3 and may be consolidated
/// (docs/spec.md §9 Passes; engine `Release::V0_31`). The checker had called it a node not in
/// the input.
#[test]
fn v0_31_a_replacement_from_an_earlier_pass_is_a_candidate() {
    let r = run_seed(305);
    assert!(
        r.actions
            .iter()
            .any(|a| a.nodes.iter().any(|n| n.contains("-replacement-"))),
        "{r:#?}"
    );
}

fn run_seed(seed: u64) -> ConsolidationReport {
    assert_eq!(super::run_one(seed), Vec::<String>::new());
    let s = super::gen::generate(&mut Rng::new(seed));
    report(&manifests::objects(&s), &manifests::catalog(&s), &s).unwrap()
}

/// The checker's findings on `r` with one error planted by `edit`.
fn plant(
    s: &Spec,
    r: &ConsolidationReport,
    edit: &dyn Fn(&mut ConsolidationReport),
) -> Vec<String> {
    let mut bad = r.clone();
    edit(&mut bad);
    check::check(s, &bad)
}

/// Some finding says `what`.
fn expect(found: Vec<String>, what: &str) {
    assert!(found.iter().any(|v| v.contains(what)), "{what}: {found:?}");
}

/// The checker is not blind: errors planted in a consistent report are each reported.
#[test]
fn the_checker_reports_errors_planted_in_a_report() {
    let mut held = pod("p0", "app-0", 100);
    held.do_not_disrupt = true;
    let s = spec(
        pool(Policy::WhenEmpty, None),
        vec![
            node("node-a", "m5.large", 90_000, vec![held]),
            node("node-b", "m5.large", 90_000, vec![]),
        ],
    );
    let r = run(&s);
    assert_eq!(r.actions.len(), 1, "{r:#?}");
    let planted = |edit: &dyn Fn(&mut ConsolidationReport)| plant(&s, &r, edit);
    expect(planted(&|b| b.savings_per_hour += 1.0), "savingsPerHour");
    expect(planted(&|b| b.nodes[0].reason = None), "without a reason");
    expect(
        planted(&|b| b.actions[0].nodes = vec!["node-a".into()]),
        "do-not-disrupt pod",
    );
    expect(
        planted(&|b| b.actions[0].method = Method::Single),
        "WhenEmpty pool",
    );
    expect(
        planted(&|b| b.actions[0].pods.push("default/p9".into())),
        "unknown pod",
    );
}

/// Seed 30222 (round 2, s33-fuzzcons2): a node whose replacement has no type cheaper than it,
/// in a pool asking `instance-family` `minValues: 2`, was explained as "the cheaper types left
/// do not meet minValues: … needs 2, 0 left". Karpenter's `SatisfiesMinValues` runs over no
/// option and returns no error, so the node is "Can't replace with a cheaper node" (core v1.14.1
/// `cloudprovider/types.go`, `consolidation.go` `computeConsolidation`). An engine bug, fixed in
/// `disruption/consolidation/price.rs` (table test
/// `nothing_cheaper_is_not_cheaper_even_with_min_values`).
#[test]
fn an_empty_price_filter_is_not_cheaper_not_a_min_values_shortfall() {
    let r = run_seed(30222);
    let row = row(&r, "node-4");
    assert_eq!(
        row.reason.as_ref().map(|x| x.kind()),
        Some("not-cheaper"),
        "{r:#?}"
    );
}

fn rep_of(b: &mut ConsolidationReport) -> &mut crate::disruption::consolidation::Replacement {
    b.actions[0].replacement.as_mut().unwrap()
}

/// A broad spot pool with the gate on and one spot m5.2xlarge (its spot made dear) holding a
/// small pod: replaced spot-to-spot by the 15 cheapest options (consolidation_test.go "Spot to
/// Spot" "spot to spot consolidation should order the instance types by price before enforcing
/// minimum flexibility.").
fn spot_to_spot_spec() -> Spec {
    let mut p = pool(Policy::Underutilized, None);
    p.types = Vec::new();
    p.capacity_types = vec!["spot"];
    let mut n = node(
        "node-a",
        "m5.2xlarge",
        90_000,
        vec![pod("p0", "app-0", 500)],
    );
    n.capacity_type = "spot";
    let mut s = spec(p, vec![n]);
    s.spot_to_spot = true;
    for t in s.catalog.iter_mut().filter(|t| t.0 == "m5.2xlarge") {
        for o in t.3.iter_mut().filter(|o| o.1 == "spot") {
            o.2 = 1.0;
        }
    }
    s
}

/// The round-2 rules are not blind: a spot-to-spot replacement and a launch into a capacity
/// reservation, each consistent, then with one error planted at a time.
#[test]
fn the_checker_reports_round_two_errors_planted_in_a_report() {
    let s = spot_to_spot_spec();
    let r = run(&s);
    let rep = r.actions[0]
        .replacement
        .clone()
        .expect("a spot-to-spot replace");
    assert_eq!(
        (rep.capacity_type.as_str(), rep.instance_types.len()),
        ("spot", 15),
        "{r:#?}"
    );
    let planted = |edit: &dyn Fn(&mut ConsolidationReport)| plant(&s, &r, edit);
    expect(
        planted(&|b| {
            rep_of(b).instance_types.pop();
        }),
        "keeps 14 options",
    );
    expect(
        planted(&|b| rep_of(b).instance_types.reverse()),
        "not cheapest first",
    );
    expect(
        planted(&|b| rep_of(b).instance_types[14] = "m5.2xlarge".into()),
        "launches at up to",
    );
    expect(
        planted(&|b| rep_of(b).capacity_reservation_id = Some("cr-00009".into())),
        "names a reservation",
    );
    expect(
        planted(&|b| {
            b.actions.clear();
            b.savings_per_hour = 0.0;
            let row = b.nodes.iter_mut().find(|n| n.name == "node-a").unwrap();
            row.decision = NodeDecision::None;
            (
                row.method,
                row.pass,
                row.replacement_type,
                row.replacement_capacity_type,
            ) = (None, None, None, None);
            row.reason = Some(crate::disruption::consolidation::Reason::SpotToSpotTooFew {
                found: 3,
                needed: 15,
            });
        }),
        "cheaper spot types that hold its pods",
    );

    // An on-demand node next to a cheap selected reservation: replaced into it
    // (consolidation_test.go "Reserved Capacity" "can consolidate into reserved capacity",
    // from on-demand).
    let mut p = pool(Policy::Underutilized, None);
    p.capacity_types = vec!["reserved", "on-demand"];
    p.types = vec!["m5.2xlarge", "c5.large"];
    let mut s = spec(
        p,
        vec![node(
            "node-a",
            "m5.2xlarge",
            90_000,
            vec![pod("p0", "app-0", 500)],
        )],
    );
    s.reserved_gate = true;
    s.reservations = vec![super::gen::Reservation {
        id: "cr-00009".into(),
        itype: "c5.large",
        zone: "us-east-1a",
        count: 1,
        selected: true,
    }];
    let r = run(&s);
    let rep = r.actions[0]
        .replacement
        .as_ref()
        .expect("a reserved replace");
    assert_eq!(
        (
            rep.capacity_type.as_str(),
            rep.capacity_reservation_id.as_deref()
        ),
        ("reserved", Some("cr-00009")),
        "{r:#?}"
    );
    let mut none_left = s.clone();
    none_left.reservations[0].count = 0;
    expect(check::check(&none_left, &r), "which has 0 left");
    let mut gate_off = s.clone();
    gate_off.reserved_gate = false;
    expect(check::check(&gate_off, &r), "gate off");
}

/// Seed 2121 (round 2): node-0's pool asks no `minValues`, yet it is left alone for
/// "karpenter.k8s.aws/instance-family needs 9, 3 left": the replacement is planned from
/// another pool, the heaviest that takes its pods, and that pool asks it (core v1.14.1
/// `disruption/helpers.go` `SimulateScheduling` plans with every pool). The checker had looked
/// at the node's own pool.
#[test]
fn a_min_values_shortfall_is_the_replacement_pools_not_the_nodes() {
    let r = run_seed(2121);
    let s = super::gen::generate(&mut Rng::new(2121));
    let n = s.nodes.iter().find(|n| n.name == "node-0").unwrap();
    assert!(s.pools[n.pool].min_values.is_none());
    assert_eq!(
        row(&r, "node-0").reason.as_ref().map(|x| x.kind()),
        Some("min-values"),
        "{r:#?}"
    );
}

/// Seeds 3905, 4321, 8366 (round 2): a pass-1 action (drift, in 3905) launched into a
/// reservation with one instance left, and a pass-2 consolidation launched into it again. The
/// provider counts each launch (aws v1.14.1 `providers/capacityreservation` `MarkLaunched`), so
/// the next disruption loop's offering has none left and is unavailable
/// (`reserved_capacity_resolver.go`; core v1.14.1 consolidation_test.go "Reserved Capacity"
/// "can consolidate from one reserved offering to another" launches into the one with
/// instances). An engine bug, fixed in `disruption/consolidation/cluster.rs`
/// `use_reservation` (each launch takes one instance for the passes after it).
#[test]
fn a_reservation_with_one_instance_left_takes_one_launch_across_passes() {
    for seed in [3905, 4321, 8366] {
        let r = run_seed(seed);
        let s = super::gen::generate(&mut Rng::new(seed));
        for res in &s.reservations {
            let into = r
                .actions
                .iter()
                .flat_map(|a| a.replacement.iter().chain(&a.additional_replacements))
                .filter(|rep| rep.capacity_reservation_id.as_deref() == Some(res.id.as_str()))
                .count();
            assert!(into as u32 <= res.count, "seed {seed} {}: {r:#?}", res.id);
        }
    }
}

/// Round 3: a reservation used up by one pass's launch is no offering for the passes after it,
/// even though the solver's tracking memo prepared the pools while it still had one. Two drifted
/// on-demand nodes in a pool that allows only `reserved`, one reservation with one instance
/// left: the first drift launches into it; the second has nowhere to launch (the provider's
/// offering is unavailable once `MarkLaunched` takes the last instance, aws v1.14.1
/// `providers/capacityreservation`, `reserved_capacity_resolver.go`; core v1.14.1
/// `disruption/helpers.go` `SimulateScheduling` over the instance types of that moment).
#[test]
fn a_used_up_reservation_is_no_offering_for_a_later_pass() {
    let mut p = pool(Policy::Underutilized, None);
    p.types = vec!["m5.large"];
    p.capacity_types = vec!["reserved"];
    let mut nodes = Vec::new();
    for k in 0..2 {
        let mut n = node(
            &format!("node-{k}"),
            "m5.large",
            86_400,
            vec![pod(&format!("p{k}"), &format!("app-{k}"), 1500)],
        );
        n.drifted = true;
        nodes.push(n);
    }
    let mut s = spec(p, nodes);
    with_one_instance_left(&mut s, "m5.large", true);
    let r = run(&s);
    let into: Vec<_> = r
        .actions
        .iter()
        .flat_map(|a| a.replacement.iter().chain(&a.additional_replacements))
        .collect();
    assert_eq!(into.len(), 1, "{r:#?}");
    assert_eq!(into[0].capacity_reservation_id.as_deref(), Some("cr-00001"));
    assert_eq!(row(&r, "node-1").decision, NodeDecision::None, "{r:#?}");
}

/// s35-noticed: the solver's tracking memo prepares the pools' offerings once per evaluation;
/// a reservation an earlier pass's launch used up must leave the later replacements' options
/// too, not only their launch. Two drifted nodes, a pool that allows only `reserved`, an m5.large
/// reservation with one instance left and an m5.xlarge one with five: the first drift launches
/// into the m5.large one; the second lists only m5.xlarge — as Karpenter's next disruption loop
/// sees it (aws v1.14.1 `providers/capacityreservation` `MarkLaunched` takes the instance,
/// `reserved_capacity_resolver.go` makes the offering unavailable; core v1.14.1
/// `disruption/helpers.go` `SimulateScheduling` schedules over the instance types of that moment,
/// `scheduling/reservationmanager.go` is built afresh per simulation). With the memo kept, the
/// m5.large was still listed (priced last, no offering).
#[test]
fn a_used_up_reservation_is_no_option_of_a_later_replacement() {
    let mut p = pool(Policy::Underutilized, None);
    p.types = vec!["m5.large", "m5.xlarge"];
    p.capacity_types = vec!["reserved"];
    let nodes = (0..2)
        .map(|k| {
            let pods = vec![pod(&format!("p{k}"), &format!("app-{k}"), 1500)];
            let mut n = node(&format!("node-{k}"), "m5.large", 86_400, pods);
            n.drifted = true;
            n
        })
        .collect();
    let mut s = spec(p, nodes);
    with_one_instance_left(&mut s, "m5.large", true);
    s.reservations.push(super::gen::Reservation {
        id: "cr-00002".into(),
        itype: "m5.xlarge",
        zone: "us-east-1a",
        count: 5,
        selected: true,
    });
    let r = run(&s);
    let into: Vec<(Option<&str>, &[String])> = r
        .actions
        .iter()
        .flat_map(|a| a.replacement.iter().chain(&a.additional_replacements))
        .map(|rep| {
            let id = rep.capacity_reservation_id.as_deref();
            (id, rep.instance_types.as_slice())
        })
        .collect();
    let (large, xlarge) = ("m5.large".to_string(), "m5.xlarge".to_string());
    assert_eq!(
        into,
        [
            (Some("cr-00001"), &[large, xlarge.clone()][..]),
            (Some("cr-00002"), &[xlarge][..]),
        ],
        "{r:#?}"
    );
}

/// Three on-demand m5.xlarge nodes of one 1.5-vCPU pod each (node-2's of a higher priority, so
/// it ranks last by savings ratio) beside a cheap m5.large reservation with one instance left.
fn reservation_beside_three_nodes() -> Spec {
    let mut p = pool(Policy::Underutilized, None);
    p.capacity_types = vec!["reserved", "on-demand"];
    let nodes = (0..3)
        .map(|k| {
            let mut q = pod(&format!("p{k}"), &format!("app-{k}"), 1500);
            q.high_priority = k == 2;
            node(&format!("node-{k}"), "m5.xlarge", 86_400, vec![q])
        })
        .collect();
    let mut s = spec(p, nodes);
    with_one_instance_left(&mut s, "m5.large", true);
    s
}

/// Round 3: a simulation takes no reservation instance; only a launch does. The multi-node
/// search simulates several prefixes, each planning the m5.large reservation (one left); the
/// action it returns still launches into it, and nothing else does afterwards (aws v1.14.1
/// `providers/capacityreservation` `MarkLaunched` is called on a launch; core v1.14.1
/// `scheduling/reservationmanager.go` holds instances within one simulation only). The engine
/// takes the instance in `engine/state.rs` `apply`, after the decision.
#[test]
fn a_reservation_is_taken_by_a_launch_not_by_a_simulation() {
    let s = reservation_beside_three_nodes();
    let r = run(&s);
    let into: Vec<usize> = r
        .actions
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            a.replacement
                .iter()
                .chain(&a.additional_replacements)
                .any(|rep| rep.capacity_reservation_id.as_deref() == Some("cr-00001"))
        })
        .map(|(k, _)| k)
        .collect();
    assert_eq!(into, vec![0], "{r:#?}");
}

/// The round-3 checker is not blind: a first-pass multi-node action that skips a node ranking
/// above one it takes is reported.
#[test]
fn the_checker_reports_a_multi_node_action_that_is_no_prefix() {
    let s = reservation_beside_three_nodes();
    let r = run(&s);
    let a = &r.actions[0];
    assert_eq!(a.method, Method::Multi, "{r:#?}");
    assert_eq!(a.nodes, vec!["node-0", "node-1"], "{r:#?}");
    expect(
        plant(&s, &r, &|b| b.actions[0].nodes[1] = "node-2".into()),
        "not a prefix of the candidates by savings ratio",
    );
    expect(
        plant(&s, &r, &|b| b.actions[0].nodes.truncate(1)),
        "multi-node action of 1 nodes",
    );
}

/// Round 3: a reserved node with the `ReservedCapacity` gate off has no reserved offering, so
/// Karpenter prices it 0 (core v1.14.1 `disruption/types.go` `resolveNodePrice`) and no
/// replacement is below that (`consolidation.go` `sumCandidatePrices`,
/// `RemoveInstanceTypeOptionsByPriceAndMinValues`): it is never replaced by consolidation, however
/// much cheaper an on-demand type is. The checker holds every v1 replacement to it.
#[test]
fn a_reserved_node_with_the_gate_off_is_priced_zero_and_not_replaced() {
    let mut p = pool(Policy::Underutilized, None);
    p.capacity_types = vec!["reserved", "on-demand"];
    let mut n = node("node-0", "m5.xlarge", 86_400, vec![pod("p0", "app-0", 500)]);
    n.capacity_type = "reserved";
    n.reservation = Some("cr-00001".into());
    let mut s = spec(p, vec![n]);
    with_one_instance_left(&mut s, "m5.xlarge", false);
    let r = run(&s);
    assert_eq!(row(&r, "node-0").price_per_hour, None, "{r:#?}");
    assert_eq!(row(&r, "node-0").decision, NodeDecision::None, "{r:#?}");
    expect(
        plant(&s, &r, &|b| b.nodes[0].price_per_hour = Some(0.192)),
        "no reserved offering",
    );
}

/// Reservation `cr-00001` of `itype` in us-east-1a with one instance left, selected; the
/// `ReservedCapacity` gate `gate`.
fn with_one_instance_left(s: &mut Spec, itype: &'static str, gate: bool) {
    s.reserved_gate = gate;
    s.reservations = vec![super::gen::Reservation {
        id: "cr-00001".into(),
        itype,
        zone: "us-east-1a",
        count: 1,
        selected: true,
    }];
}

/// Seed 1188 (round 3): a reserved node in a reservation the class does not select is priced
/// by another selected reservation of its type and zone — Karpenter looks a node's price up by
/// zone and capacity type only (core v1.14.1 `cloudprovider/types.go` `OfferingPrice`, from
/// `disruption/types.go` `resolveNodePrice`), as the engine does. The checker had wanted the
/// node's own reservation.
#[test]
fn a_reserved_node_is_priced_by_any_reserved_offering_of_its_type_and_zone() {
    let r = run_seed(1188);
    assert!(row(&r, "node-1").price_per_hour.is_some(), "{r:#?}");
}
