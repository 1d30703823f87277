//! Reserved capacity (capacity reservations, `karpenter.sh/capacity-type: reserved`): at most
//! `count` NodeClaims per reservation in one simulation, preferred by price, pinned when
//! finalized, deferred when held, falling back in a later round. Mirrors `core v1.14.1:
//! pkg/controllers/provisioning/scheduling/suite_test.go` "Reserved Instance Types" (each test
//! names its upstream case); upstream calls `ExpectProvisioned` once per batch, here the batches
//! are the rounds of `solve_rounds`.

use super::*;
use crate::model::labels::{CAPACITY_RESERVATION_ID, INSTANCE_TYPE, NODEPOOL};
use crate::model::reservation::{ReservationType, ReservedCapacity};

/// A reserved offering of reservation `id` with `count` instances, priced as the AWS provider
/// prices it (the on-demand price / 10,000,000).
fn reserved(zone: &str, id: &str, count: u32, on_demand: f64) -> Offering {
    Offering {
        zone: zone.into(),
        capacity_type: crate::model::instance_type::RESERVED.into(),
        price: on_demand / 10_000_000.0,
        available: count > 0,
        reservation: Some(ReservedCapacity {
            id: id.into(),
            reservation_type: ReservationType::Default,
            interruptible: false,
            count,
        }),
        zone_id: None,
    }
}

/// Upstream's three types; `medium` and `small` also have one reserved instance each in zone 1
/// (`r-medium`, `r-small`).
fn catalog(extra_small: Vec<Offering>) -> Vec<crate::model::instance_type::InstanceType> {
    let z = &FAKE_ZONES;
    let with = |mut o: Vec<Offering>, more: Vec<Offering>| {
        o.extend(more);
        o
    };
    vec![
        instance_type("large", "6", "6Gi", "20", on_demand(z, 0.3)),
        instance_type(
            "medium",
            "3",
            "3Gi",
            "20",
            with(
                on_demand(z, 0.15),
                vec![reserved("test-zone-1", "cr-medium", 1, 0.15)],
            ),
        ),
        instance_type(
            "small",
            "2",
            "2Gi",
            "20",
            with(
                on_demand(z, 0.1),
                [
                    vec![reserved("test-zone-1", "cr-small", 1, 0.1)],
                    extra_small,
                ]
                .concat(),
            ),
        ),
    ]
}

/// `small` with a reservation of its own (`id`, one instance), for a second pool.
fn small_reserved_as(id: &str) -> Vec<crate::model::instance_type::InstanceType> {
    vec![instance_type(
        "small",
        "2",
        "2Gi",
        "20",
        [
            on_demand(&FAKE_ZONES, 0.1),
            vec![reserved("test-zone-1", id, 1, 0.1)],
        ]
        .concat(),
    )]
}

/// Two `small` pods that each need their own node, `p1` in pool `np-1` and `p2` in `np-2`.
fn one_pod_per_pool() -> Vec<crate::model::pod::Pod> {
    (1..=2)
        .map(|i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("1")
                .label("app", "test")
                .anti_affinity(HOSTNAME, &[("app", "test")])
                .node_selector(INSTANCE_TYPE, "small")
                .node_selector(NODEPOOL, &format!("np-{i}"))
                .build()
        })
        .collect()
}

/// Pods that each need their own node, of instance type `small` when `small_only`.
fn lonely(n: usize, cpu: &str, small_only: bool) -> Vec<crate::model::pod::Pod> {
    pods(n, |i| {
        let p = PodBuilder::new(&format!("p{i}"))
            .cpu(cpu)
            .label("app", "test")
            .anti_affinity(HOSTNAME, &[("app", "test")]);
        if small_only {
            p.node_selector(INSTANCE_TYPE, "small")
        } else {
            p
        }
    })
}

/// (round, instance type, capacity type, reservation) of each NodeClaim.
fn launches(plan: &Plan) -> Vec<(usize, String, String, Option<String>)> {
    plan.node_claims
        .iter()
        .map(|c| {
            (
                c.round,
                c.launch.instance_type.clone(),
                c.launch.capacity_type.clone(),
                c.launch.reservation.clone(),
            )
        })
        .collect()
}

fn want(
    rows: &[(usize, &str, &str, Option<&str>)],
) -> Vec<(usize, String, String, Option<String>)> {
    rows.iter()
        .map(|(r, t, ct, id)| (*r, t.to_string(), ct.to_string(), id.map(str::to_string)))
        .collect()
}

/// "shouldn't fallback to on-demand or spot when compatible reserved offerings are available":
/// a 1800m pod fits `small` and `medium`, so the first NodeClaim holds both reservations and the
/// others wait; it launches into the cheaper (`cr-small`), the next batch takes `cr-medium`, the
/// last falls back to on-demand `small`.
#[test]
fn reserved_capacity_is_preferred_and_never_overplanned() {
    let inp = input(
        lonely(3, "1800m", false),
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    );
    let one = solve(&inp);
    assert_eq!(
        one.node_claims.len(),
        1,
        "one NodeClaim holds both reservations"
    );
    assert_eq!(one.unschedulable.len(), 2);
    for u in &one.unschedulable {
        assert_eq!(u.reason.code(), ReasonCode::ReservedCapacityHeld);
        assert!(
            u.reason
                .to_string()
                .contains("capacity reservations cr-medium, cr-small are all held"),
            "{}",
            u.reason
        );
    }
    let claim = &one.node_claims[0];
    assert_eq!(
        claim
            .requirements
            .get(CAPACITY_TYPE)
            .values()
            .iter()
            .collect::<Vec<_>>(),
        ["reserved"],
        "pinned to reserved capacity"
    );
    assert_eq!(
        claim
            .requirements
            .get(CAPACITY_RESERVATION_ID)
            .values()
            .iter()
            .collect::<Vec<_>>(),
        ["cr-medium", "cr-small"]
    );
    assert_eq!(claim.labels[CAPACITY_RESERVATION_ID], "cr-small");
    assert_eq!(claim.labels[CAPACITY_TYPE], "reserved");
    assert_eq!(claim.zones, ["test-zone-1"]);

    let plan = solve_rounds(&inp);
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "reserved", Some("cr-small")),
            (2, "medium", "reserved", Some("cr-medium")),
            (3, "small", "on-demand", None),
        ])
    );
    assert!(plan.unschedulable.is_empty());
    assert!(!plan.node_claims[2]
        .labels
        .contains_key(CAPACITY_RESERVATION_ID));
}

/// A pod no reserved type fits (5 CPU: only `large`) goes to on-demand at once: no reserved
/// offering is compatible, so nothing is held or deferred.
#[test]
fn pods_no_reservation_fits_are_not_deferred() {
    let plan = solve(&input(
        lonely(1, "5", false),
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    ));
    assert_eq!(launches(&plan), want(&[(1, "large", "on-demand", None)]));
}

/// A NodePool that does not allow `reserved` never uses reservations.
#[test]
fn pools_without_the_reserved_capacity_type_do_not_use_reservations() {
    let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &[ON_DEMAND, SPOT]);
    let plan = solve_rounds(&input(
        lonely(2, "1800m", false),
        vec![pool_input(pool, catalog(vec![]))],
    ));
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "on-demand", None),
            (1, "small", "on-demand", None)
        ])
    );
}

/// "should correctly track reservations shared across nodepools": two pools offering the same
/// reservation share its one instance; the second pod waits for the next batch, then falls back.
#[test]
fn a_reservation_offered_to_two_pools_is_counted_once() {
    let pods = one_pod_per_pool();
    let pools = vec![
        pool_input(node_pool("np-1"), catalog(vec![])),
        pool_input(node_pool("np-2"), catalog(vec![])),
    ];
    let plan = solve_rounds(&input(pods, pools));
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "reserved", Some("cr-small")),
            (2, "small", "on-demand", None),
        ])
    );
}

/// "should correctly track reservations for multiple nodepools with distinct reservations for
/// the same instance pool": distinct reservations are distinct capacity; both pods go reserved
/// in one batch.
#[test]
fn distinct_reservations_of_one_type_are_separate_capacity() {
    let pods = one_pod_per_pool();
    let distinct = small_reserved_as("cr-distinct");
    let pools = vec![
        pool_input(node_pool("np-1"), catalog(vec![])),
        pool_input(node_pool("np-2"), distinct),
    ];
    let plan = solve_rounds(&input(pods, pools));
    let mut got = launches(&plan);
    got.sort();
    assert_eq!(
        got,
        want(&[
            (1, "small", "reserved", Some("cr-distinct")),
            (1, "small", "reserved", Some("cr-small")),
        ])
    );
}

/// "should correctly track multiple reservations for the same instance pool": `small` has
/// `cr-small` (1) and `cr-small-2` (2). Holding is pessimistic, so a batch places no more
/// NodeClaims than the largest reservation's count: 2, then 1, then the fourth pod falls back.
/// A launch picks, per zone, the reservation with the most instances left
/// (`ReservedOfferingFilter`).
#[test]
fn several_reservations_of_one_type_are_held_pessimistically() {
    let inp = input(
        lonely(4, "1", true),
        vec![pool_input(
            node_pool("default"),
            catalog(vec![reserved("test-zone-1", "cr-small-2", 2, 0.1)]),
        )],
    );
    let plan = solve_rounds(&inp);
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "reserved", Some("cr-small-2")),
            (1, "small", "reserved", Some("cr-small-2")),
            (2, "small", "reserved", Some("cr-small")),
            (3, "small", "on-demand", None),
        ])
    );
}

/// "shouldn't fallback to a lower weight NodePool if a reserved offering is available": the
/// heavier pool's reservation is held by the first NodeClaim, so the second pod is deferred —
/// not sent to the lighter pool's own reservation — and lands in the heavier pool on-demand in
/// the next batch.
#[test]
fn a_held_reservation_does_not_fall_back_to_a_lighter_pool() {
    let mut primary = node_pool("np-primary");
    primary.weight = 100;
    let mut fallback = node_pool("np-fallback");
    fallback.weight = 50;
    let fallback_types = small_reserved_as("cr-fallback");
    let inp = input(
        lonely(2, "1", true),
        vec![
            pool_input(primary, catalog(vec![])),
            pool_input(fallback, fallback_types),
        ],
    );
    let one = solve(&inp);
    assert_eq!(one.node_claims.len(), 1);
    assert_eq!(one.unschedulable.len(), 1);
    let reason = one.unschedulable[0].reason.to_string();
    assert!(
        !reason.contains("np-fallback"),
        "the lighter pool is not tried: {reason}"
    );
    let plan = solve_rounds(&inp);
    let pools: Vec<(&str, &str)> = plan
        .node_claims
        .iter()
        .map(|c| (c.node_pool.as_str(), c.launch.capacity_type.as_str()))
        .collect();
    assert_eq!(
        pools,
        [("np-primary", "reserved"), ("np-primary", "on-demand")]
    );
}

/// "shouldn't relax preferences when a pod fails to schedule due to a reserved offering error":
/// the deferred pod keeps its preference for `np-1` (relaxing it would have sent it to `np-2`'s
/// free reservation in the same batch) and lands in `np-1` on-demand in the next batch.
#[test]
fn a_deferred_pod_keeps_its_preferences() {
    let distinct = small_reserved_as("cr-distinct");
    let pods = pods(2, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1")
            .label("app", "test")
            .anti_affinity(HOSTNAME, &[("app", "test")])
            .node_selector(INSTANCE_TYPE, "small")
            .preferred_term(1, &[(NODEPOOL, In, &["np-1"])])
    });
    let inp = input(
        pods,
        vec![
            pool_input(node_pool("np-1"), catalog(vec![])),
            pool_input(node_pool("np-2"), distinct),
        ],
    );
    let plan = solve_rounds(&inp);
    let got: Vec<(usize, &str, &str)> = plan
        .node_claims
        .iter()
        .map(|c| {
            (
                c.round,
                c.node_pool.as_str(),
                c.launch.capacity_type.as_str(),
            )
        })
        .collect();
    assert_eq!(got, [(1, "np-1", "reserved"), (2, "np-1", "on-demand")]);
}

/// "should handle multiple pods on reserved nodes": pods that all require reserved `small` in
/// zone 1 share the one reserved NodeClaim.
#[test]
fn pods_share_a_reserved_node_claim() {
    let pods = pods(2, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("500m")
            .node_selector(INSTANCE_TYPE, "small")
            .node_selector(CAPACITY_TYPE, "reserved")
            .node_selector(ZONE, "test-zone-1")
    });
    let plan = solve_rounds(&input(
        pods,
        vec![pool_input(node_pool("np-1"), catalog(vec![]))],
    ));
    assert_eq!(
        launches(&plan),
        want(&[(1, "small", "reserved", Some("cr-small"))])
    );
    assert_eq!(plan.node_claims[0].pods.len(), 2);
}

/// A pod that requires a reservation id only gets that reservation (its offering is the only
/// one with the label; on-demand and spot offerings have none).
#[test]
fn a_pod_can_require_one_reservation() {
    let pods = pods(1, |_| {
        PodBuilder::new("p")
            .cpu("500m")
            .node_selector(CAPACITY_RESERVATION_ID, "cr-medium")
    });
    let plan = solve_rounds(&input(
        pods,
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    ));
    assert_eq!(
        launches(&plan),
        want(&[(1, "medium", "reserved", Some("cr-medium"))])
    );
}

/// A pod that requires a capacity block gets the capacity block, not the ODCR of the same type.
#[test]
fn a_pod_can_require_a_reservation_type() {
    let mut block = reserved("test-zone-1", "cr-block", 1, 0.1);
    if let Some(c) = block.reservation.as_mut() {
        c.reservation_type = ReservationType::CapacityBlock;
    }
    let pods = pods(1, |_| {
        PodBuilder::new("p")
            .cpu("500m")
            .node_selector(CAPACITY_TYPE, "reserved")
            .node_selector(
                crate::model::labels::CAPACITY_RESERVATION_TYPE,
                "capacity-block",
            )
    });
    let plan = solve_rounds(&input(
        pods,
        vec![pool_input(node_pool("default"), catalog(vec![block]))],
    ));
    assert_eq!(
        launches(&plan),
        want(&[(1, "small", "reserved", Some("cr-block"))])
    );
}

/// A static pool allowed reserved capacity launches its replicas into its reservations while
/// they last (one each), then on-demand; the pods planned after it see the reservations used up.
#[test]
fn static_replicas_use_reservations_while_they_last() {
    let mut pool = node_pool("fixed");
    pool.replicas = Some(3);
    let pool = with_requirement(pool, CAPACITY_TYPE, In, &["reserved", ON_DEMAND]);
    let dynamic = with_requirement(
        node_pool("dynamic"),
        CAPACITY_TYPE,
        In,
        &["reserved", ON_DEMAND],
    );
    let pod = PodBuilder::new("p")
        .cpu("1800m")
        .node_selector(NODEPOOL, "dynamic")
        .build();
    let inp = input(
        vec![pod],
        vec![
            pool_input(
                pool,
                catalog(vec![reserved("test-zone-1", "cr-small-2", 1, 0.1)]),
            ),
            pool_input(
                dynamic,
                catalog(vec![reserved("test-zone-1", "cr-small-2", 1, 0.1)]),
            ),
        ],
    );
    let plan = solve_rounds(&inp);
    let got: Vec<(&str, &str, Option<&str>)> = plan
        .node_claims
        .iter()
        .map(|c| {
            (
                c.node_pool.as_str(),
                c.launch.capacity_type.as_str(),
                c.launch.reservation.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("fixed", "reserved", Some("cr-small")),
            ("fixed", "reserved", Some("cr-small-2")),
            ("fixed", "reserved", Some("cr-medium")),
            ("dynamic", "on-demand", None),
        ],
        "the dynamic pool's pod finds every reservation used: on-demand at once, not deferred"
    );
}

/// Disruption's simulations run in fallback mode: with the reservation held, the next pod goes
/// on-demand in the same simulation instead of waiting.
#[test]
fn fallback_mode_sends_the_next_pod_to_on_demand_at_once() {
    let mut inp = input(
        lonely(2, "1", true),
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    );
    inp.options.reserved_fallback = true;
    let plan = solve(&inp);
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "reserved", Some("cr-small")),
            (1, "small", "on-demand", None),
        ])
    );
}

/// No upstream test; `aws v1.14.1: pkg/providers/instancetype/offering/base_resolver.go` gives
/// on-demand and spot offerings `karpenter.k8s.aws/capacity-reservation-type` (and `-id`,
/// `-interruptible`) `DoesNotExist`, and core `filterInstanceTypesByRequirements` keeps a type
/// only with an available offering `IsCompatible` with the NodeClaim: pods requiring
/// `capacity-reservation-type: default` take `cr-small` and `cr-medium` while they last (one
/// NodeClaim holds both, so the second pod waits a round), then nothing — the third pod stays
/// pending rather than going on-demand. Before s30-linecapres it went on-demand `small` in the
/// third round (only the reservation id was checked against on-demand offerings).
#[test]
fn a_pod_requiring_a_reservation_type_never_falls_back_to_on_demand() {
    let pods = pods(3, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("500m")
            .label("app", "test")
            .anti_affinity(HOSTNAME, &[("app", "test")])
            .node_selector(crate::model::labels::CAPACITY_RESERVATION_TYPE, "default")
    });
    let plan = solve_rounds(&input(
        pods,
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    ));
    assert_eq!(
        launches(&plan),
        want(&[
            (1, "small", "reserved", Some("cr-small")),
            (2, "medium", "reserved", Some("cr-medium")),
        ])
    );
    assert_eq!(plan.unschedulable.len(), 1, "{:?}", plan.unschedulable);
}

/// As above for `karpenter.k8s.aws/capacity-reservation-interruptible`: a pod requiring `"false"`
/// is reserved capacity only, while `NotIn ["true"]` (which an absent label satisfies) also
/// admits on-demand (`Requirements.IsCompatible` against the offerings' `DoesNotExist`).
#[test]
fn a_pod_requiring_non_interruptible_capacity_is_reserved_capacity_only() {
    let only_reserved = pods(1, |_| {
        PodBuilder::new("p")
            .cpu("500m")
            .node_selector(crate::model::labels::INSTANCE_TYPE, "large")
            .node_selector(
                crate::model::labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
                "false",
            )
    });
    let plan = solve_rounds(&input(
        only_reserved,
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    ));
    assert!(launches(&plan).is_empty(), "{:?}", launches(&plan));
    assert_eq!(plan.unschedulable.len(), 1);

    let not_interruptible = pods(1, |_| {
        PodBuilder::new("p")
            .cpu("500m")
            .node_selector(crate::model::labels::INSTANCE_TYPE, "large")
            .required_term(&[(
                crate::model::labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
                NotIn,
                &["true"],
            )])
    });
    let plan = solve_rounds(&input(
        not_interruptible,
        vec![pool_input(node_pool("default"), catalog(vec![]))],
    ));
    assert_eq!(launches(&plan), want(&[(1, "large", "on-demand", None)]));
}
