//! What a NodeClaim launches as: the AWS provider's launch-time filters, mirrored from
//! `aws: pkg/providers/instance/filter/filter_test.go` ("SpotOfferingFilter",
//! "ExoticInstanceFilter") and `instance.go` `getCapacityType`.

use super::*;

fn one_pod(types: Vec<crate::model::instance_type::InstanceType>) -> Plan {
    solve(&input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(node_pool("default"), types)],
    ))
}

/// (type, zone, price) of every offering the launch may use.
fn offerings(claim: &PlannedNodeClaim) -> Vec<(String, String, f64)> {
    claim
        .launch_offerings()
        .map(|(t, z, p)| (t.to_string(), z.to_string(), p))
        .collect()
}

/// "should reject instance types with no remaining offerings after filtering": the only spot
/// offerings cost more than the cheapest on-demand one, so the launch is on-demand — where the
/// capacity-type order alone (spot before on-demand) would pick the pricier spot.
#[test]
fn spot_priced_above_the_cheapest_on_demand_is_not_launched() {
    let plan = one_pod(vec![
        instance_type("od", "4", "8Gi", "20", vec![offer("z1", ON_DEMAND, 0.10)]),
        instance_type(
            "pricey-spot",
            "4",
            "8Gi",
            "20",
            vec![offer("z1", SPOT, 0.15), offer("z1", ON_DEMAND, 0.30)],
        ),
    ]);
    let c = &plan.node_claims[0];
    assert_eq!(c.launch.capacity_type, "on-demand");
    assert_eq!(c.launch.instance_type, "od");
    assert_eq!(c.launch.price, 0.10);
    assert_eq!(
        offerings(c),
        [
            ("od".to_string(), "z1".to_string(), 0.10),
            ("pricey-spot".to_string(), "z1".to_string(), 0.30)
        ]
    );
    // The NodeClaim itself still allows both capacity types and both types.
    assert_eq!(c.capacity_types, ["on-demand", "spot"]);
    assert_eq!(c.instance_types.len(), 2);
}

/// "should filter out expensive spot offerings while keeping instance types with remaining
/// offerings": spot stays the capacity type while a spot offering is at or below the cheapest
/// on-demand price; the pricier spot offerings are not fleet overrides.
#[test]
fn cheap_spot_is_launched_without_the_offerings_priced_above_on_demand() {
    let plan = one_pod(vec![
        instance_type("od", "4", "8Gi", "20", vec![offer("z1", ON_DEMAND, 0.10)]),
        instance_type(
            "mixed-spot",
            "4",
            "8Gi",
            "20",
            vec![offer("z1", SPOT, 0.04), offer("z2", SPOT, 0.12)],
        ),
        instance_type(
            "equal-spot",
            "4",
            "8Gi",
            "20",
            vec![offer("z2", SPOT, 0.10)],
        ),
    ]);
    let c = &plan.node_claims[0];
    assert_eq!(c.launch.capacity_type, "spot");
    assert_eq!(
        (c.launch.instance_type.as_str(), c.launch.zone.as_str()),
        ("mixed-spot", "z1")
    );
    assert_eq!(
        offerings(c),
        [
            ("mixed-spot".to_string(), "z1".to_string(), 0.04),
            ("equal-spot".to_string(), "z2".to_string(), 0.10)
        ],
        "mixed-spot/z2 at 0.12 is above on-demand's 0.10"
    );
}

/// "should not filter when requirements don't support both spot and on-demand" and "should not
/// filter when minValues is set".
#[test]
fn spot_is_not_filtered_without_on_demand_or_with_min_values() {
    let types = || {
        vec![
            instance_type("od", "4", "8Gi", "20", vec![offer("z1", ON_DEMAND, 0.10)]),
            instance_type("spot", "4", "8Gi", "20", vec![offer("z1", SPOT, 0.15)]),
        ]
    };
    let spot_only = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &["spot"]);
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(spot_only, types())],
    ));
    assert_eq!(plan.node_claims[0].launch.capacity_type, "spot");
    assert_eq!(plan.node_claims[0].launch.price, 0.15);

    let mut with_min = node_pool("default");
    let mut req = crate::model::requirements::NodeSelectorRequirement::new(
        "node.kubernetes.io/instance-type",
        Exists,
        &[],
    );
    req.min_values = Some(2);
    with_min.requirements.push(req);
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(with_min, types())],
    ));
    assert_eq!(plan.node_claims[0].launch.capacity_type, "spot");
    assert_eq!(plan.node_claims[0].launch.instance_type, "spot");
}

/// A generic 4-CPU type, on-demand at $0.20 in `z1`.
fn plain_on_demand() -> crate::model::instance_type::InstanceType {
    instance_type(
        "plain",
        "4",
        "8Gi",
        "20",
        vec![offer("z1", ON_DEMAND, 0.20)],
    )
}

/// The exotic filter runs before the capacity type is chosen (`filterInstanceTypes`, then
/// `getCapacityType`): spot offered only by a GPU type does not make a plain on-demand launch
/// a GPU spot one.
#[test]
fn the_capacity_type_is_chosen_after_exotic_types_are_dropped() {
    let mut gpu = instance_type("gpu", "4", "8Gi", "20", vec![offer("z1", SPOT, 0.05)]);
    gpu.capacity.set(
        crate::model::overhead::NVIDIA_GPU,
        crate::model::quantity::ONE,
    );
    let plan = one_pod(vec![plain_on_demand(), gpu]);
    let c = &plan.node_claims[0];
    assert_eq!(
        (
            c.launch.instance_type.as_str(),
            c.launch.capacity_type.as_str()
        ),
        ("plain", "on-demand")
    );
}

/// **Differs, fixed** (s27-lineaws) — aws v1.14.1 pkg/providers/instance/filter/filter_test.go
/// "ExoticInstanceFilter": DescribeTable "should reject instance types with exotic resources"
/// (every `WellKnownExoticResources` entry), "should not reject instance types with non-exotic
/// resources" (EFA, pod ENIs), "should reject metal instance types" — whose size *contains*
/// `metal` (`filter.go`: `strings.Contains`), so `c7i.metal-24xl` is exotic too. We took only
/// the size `metal` and the GPU/accelerator count labels: a `metal-24xl` size was a generic type
/// and a type labelled with an accelerator count but no exotic resource (dl2q's Qualcomm
/// accelerators) an exotic one.
#[test]
fn exotic_types_are_those_with_exotic_resources_or_a_metal_size() {
    use crate::model::labels::{INSTANCE_ACCELERATOR_COUNT, INSTANCE_SIZE};
    use crate::model::overhead::{
        AMD_GPU, AWS_NEURON, AWS_NEURON_CORE, EFA, HABANA_GAUDI, NVIDIA_GPU, POD_ENI,
    };
    use crate::model::quantity::ONE;
    use crate::model::requirements::Requirement;
    let cheap = || {
        instance_type(
            "cheap",
            "4",
            "8Gi",
            "20",
            vec![offer("z1", ON_DEMAND, 0.10)],
        )
    };
    let launched = |other: crate::model::instance_type::InstanceType| {
        one_pod(vec![plain_on_demand(), other]).node_claims[0]
            .launch
            .instance_type
            .clone()
    };
    for exotic in [
        NVIDIA_GPU,
        AMD_GPU,
        AWS_NEURON,
        AWS_NEURON_CORE,
        HABANA_GAUDI,
    ] {
        let mut t = cheap();
        t.capacity.set(exotic, ONE);
        assert_eq!(launched(t), "plain", "{exotic}");
    }
    for generic in [EFA, POD_ENI] {
        let mut t = cheap();
        t.capacity.set(generic, ONE);
        assert_eq!(launched(t), "cheap", "{generic}");
    }
    for (size, exotic) in [("metal", true), ("metal-24xl", true), ("24xlarge", false)] {
        let mut t = cheap();
        t.requirements.add(Requirement::single(INSTANCE_SIZE, size));
        let want = if exotic { "plain" } else { "cheap" };
        assert_eq!(launched(t), want, "{size}");
    }
    let mut qualcomm = cheap();
    qualcomm
        .requirements
        .add(Requirement::single(INSTANCE_ACCELERATOR_COUNT, "8"));
    assert_eq!(launched(qualcomm), "cheap", "an accelerator label alone");
}

/// A reserved offering of `kind` (interruptible or not) at `price` in `z1`, one instance left.
fn reserved_offer(id: &str, kind: ReservationKind, price: f64) -> Offering {
    let (reservation_type, interruptible) = kind;
    Offering {
        capacity_type: crate::model::instance_type::RESERVED.into(),
        available: true,
        reservation: Some(crate::model::reservation::ReservedCapacity {
            id: id.into(),
            reservation_type,
            interruptible,
            count: 1,
        }),
        ..offer("z1", crate::model::instance_type::RESERVED, price)
    }
}

type ReservationKind = (crate::model::reservation::ReservationType, bool);

/// aws v1.14.1 pkg/providers/instance/filter/filter_test.go › CapacityReservationTypeFilter:
/// DescribeTable "should prioritize the capacity reservation type with the cheapest offering"
/// (3 Entries: the kind of the cheapest offering keeps its types, the others go, even at that
/// price elsewhere) and "should break ties by priority" (3 Entries: ODCR before capacity block
/// before interruptible ODCR). A reserved-only pool, one pod: the launch's offerings.
#[test]
fn a_reserved_launch_keeps_the_reservation_kind_of_its_cheapest_offering() {
    use crate::model::reservation::ReservationType::{CapacityBlock, Default as Odcr};
    let kinds: [ReservationKind; 3] = [(Odcr, false), (CapacityBlock, false), (Odcr, true)];
    let name = |(t, i): ReservationKind| format!("{t:?}-{i}").to_lowercase();
    let launched = |types: Vec<crate::model::instance_type::InstanceType>| {
        let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &["reserved"]);
        let plan = solve(&input(
            vec![PodBuilder::new("p").cpu("1").build()],
            vec![pool_input(pool, types)],
        ));
        let mut names: Vec<String> = offerings(&plan.node_claims[0])
            .into_iter()
            .map(|(t, _, _)| t)
            .collect();
        names.sort();
        names.dedup();
        names
    };
    for selected in kinds {
        // The cheapest offering is `selected`'s: its kind stays (its pricier type too).
        let mut types = vec![
            instance_type(
                "cheap",
                "4",
                "8Gi",
                "20",
                vec![reserved_offer("cr-c", selected, 5.0)],
            ),
            instance_type(
                "pricey",
                "4",
                "8Gi",
                "20",
                vec![reserved_offer("cr-p", selected, 10.0)],
            ),
        ];
        for other in kinds.into_iter().filter(|k| *k != selected) {
            types.push(instance_type(
                &name(other),
                "4",
                "8Gi",
                "20",
                vec![reserved_offer(&format!("cr-{}", name(other)), other, 10.0)],
            ));
        }
        assert_eq!(launched(types), ["cheap", "pricey"], "{selected:?}");
    }
    for (winner, loser) in [
        (kinds[0], kinds[1]),
        (kinds[1], kinds[2]),
        (kinds[0], kinds[2]),
    ] {
        let types = vec![
            instance_type(
                &name(winner),
                "4",
                "8Gi",
                "20",
                vec![reserved_offer("cr-w", winner, 5.0)],
            ),
            instance_type(
                &name(loser),
                "4",
                "8Gi",
                "20",
                vec![reserved_offer("cr-l", loser, 5.0)],
            ),
        ];
        assert_eq!(launched(types), [name(winner)], "{winner:?} over {loser:?}");
    }
}
