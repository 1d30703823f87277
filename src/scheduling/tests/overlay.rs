//! NodeOverlays on the pools' instance types (`scheduling::apply_overlays`), mirroring `core main:
//! pkg/controllers/nodeoverlay/suite_test.go` ("Instance Type Controller") and the plans they make.

use super::*;
use crate::model::labels;
use crate::model::overlay::{NodeOverlay, PriceChange};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::resources::Resources;

fn overlay(
    name: &str,
    weight: i32,
    reqs: &[(&str, crate::model::requirements::Operator, &[&str])],
) -> NodeOverlay {
    NodeOverlay {
        name: name.into(),
        weight,
        requirements: reqs
            .iter()
            .map(|(k, op, v)| NodeSelectorRequirement::new(k, *op, v))
            .collect(),
        ..NodeOverlay::default()
    }
}

fn priced(mut o: NodeOverlay, change: PriceChange) -> NodeOverlay {
    o.price = Some(change);
    o
}

/// One type with a spot offering in zone 1 ($1.02), on-demand in zone 2 ($2.02) and reserved in
/// zone 4 ($4.02), as the upstream table.
fn three_offerings() -> Vec<PoolInput> {
    vec![pool_input(
        node_pool("default"),
        vec![instance_type(
            "default-instance-type",
            "4",
            "8Gi",
            "20",
            vec![
                offer("test-zone-1", SPOT, 1.02),
                offer("test-zone-2", ON_DEMAND, 2.02),
                offer("test-zone-4", "reserved", 4.02),
            ],
        )],
    )]
}

fn prices(pools: &[PoolInput]) -> Vec<f64> {
    pools[0].instance_types[0]
        .offerings
        .iter()
        .map(|o| (o.price * 1e6).round() / 1e6)
        .collect()
}

/// "should update price updates offerings instance types from multiple overlays": two overlays
/// of one weight on disjoint offerings (zones 2 and 4; spot) both apply, by `price` and by
/// `priceAdjustment`.
#[test]
fn overlays_of_one_weight_on_different_offerings_both_apply() {
    let zones = overlay("a", 10, &[(ZONE, In, &["test-zone-2", "test-zone-4"])]);
    let spot = overlay("b", 10, &[(CAPACITY_TYPE, In, &["spot"])]);
    let mut pools = three_offerings();
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(zones.clone(), PriceChange::Set(121.421)),
            priced(spot.clone(), PriceChange::Set(165.421)),
        ],
    );
    assert!(conflicts.is_empty());
    assert_eq!(prices(&pools), [165.421, 121.421, 121.421]);

    let mut pools = three_offerings();
    apply_overlays(
        &mut pools,
        &[
            priced(zones, PriceChange::Add(201.0)),
            priced(spot, PriceChange::Add(-0.5)),
        ],
    );
    assert_eq!(prices(&pools), [0.52, 203.02, 205.02]);
}

/// "should fail with conflicting pricing updates overlays with overlapping requirements" and
/// "should pass with conflicting pricing update overlays with mutually exclusive weights": one
/// weight on one offering conflicts — the overlay later in order (same weight: the earlier name)
/// is not applied anywhere; different weights do not, and the heavier wins.
#[test]
fn overlays_of_one_weight_on_one_offering_conflict_and_the_heavier_wins_otherwise() {
    let all = |name: &str, weight: i32| {
        overlay(
            name,
            weight,
            &[(labels::INSTANCE_TYPE, In, &["default-instance-type"])],
        )
    };
    let mut pools = three_offerings();
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(all("a", 10), PriceChange::Set(1.0)),
            priced(all("b", 10), PriceChange::Set(2.0)),
        ],
    );
    assert_eq!(conflicts, ["a"]);
    assert_eq!(
        prices(&pools),
        [2.0, 2.0, 2.0],
        "b (later name) comes first"
    );

    let mut pools = three_offerings();
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(all("a", 20), PriceChange::Set(1.0)),
            priced(all("b", 10), PriceChange::Set(2.0)),
        ],
    );
    assert!(conflicts.is_empty());
    assert_eq!(prices(&pools), [1.0, 1.0, 1.0]);
}

/// "should only apply override for nodepool that defined in the overlay requirements" and
/// "should not apply adjustments for overlays that do not overlap with instance types
/// requirements": the pool name and template labels select; a key no type defines selects
/// nothing.
#[test]
fn overlays_select_by_pool_labels_and_defined_keys_only() {
    let mut team = node_pool("team");
    team.labels.insert("team".into(), "a".into());
    let mut pools = vec![
        pool_input(node_pool("default"), small_catalog()),
        pool_input(team, small_catalog()),
    ];
    apply_overlays(
        &mut pools,
        &[
            priced(
                overlay("by-label", 1, &[("team", In, &["a"])]),
                PriceChange::Set(9.0),
            ),
            priced(
                overlay("undefined", 1, &[("example.com/nothing", In, &["x"])]),
                PriceChange::Set(0.0),
            ),
        ],
    );
    assert!(pools[0].instance_types[0]
        .offerings
        .iter()
        .all(|o| o.price == 0.1));
    assert!(pools[1].instance_types[0]
        .offerings
        .iter()
        .all(|o| o.price == 9.0));

    let mut pools = vec![
        pool_input(node_pool("default"), small_catalog()),
        pool_input(node_pool("other"), small_catalog()),
    ];
    apply_overlays(
        &mut pools,
        &[priced(
            overlay("one-pool", 1, &[(labels::NODEPOOL, In, &["other"])]),
            PriceChange::Percent(-50.0),
        )],
    );
    assert_eq!(pools[0].instance_types[1].offerings[0].price, 0.2);
    assert_eq!(pools[1].instance_types[1].offerings[0].price, 0.1);
}

/// "should update capacity for instance types from multiple overlays with different weights" and
/// "should apply pricing and capacity adjustment from two overlays on the same instance type":
/// capacity adds extended resources, the heavier overlay's quantity wins per resource, a lighter
/// one still adds the others — and a pod requesting one now fits.
#[test]
fn capacity_overlays_add_extended_resources_that_pods_can_request() {
    let mut heavy = overlay("heavy", 20, &[(labels::INSTANCE_TYPE, In, &["large"])]);
    heavy.capacity = Resources::from_pairs(&[("smarter-devices/fuse", "2")]);
    let mut light = overlay("light", 10, &[(labels::INSTANCE_TYPE, In, &["large"])]);
    light.capacity =
        Resources::from_pairs(&[("smarter-devices/fuse", "9"), ("example.com/dongle", "1")]);
    let mut pools = vec![pool_input(node_pool("default"), small_catalog())];
    assert!(apply_overlays(&mut pools, &[light, heavy]).is_empty());
    let large = &pools[0].instance_types[2];
    assert_eq!(large.capacity.get("smarter-devices/fuse"), 2000);
    assert_eq!(large.capacity.get("example.com/dongle"), 1000);
    assert_eq!(
        pools[0].instance_types[0]
            .capacity
            .get("smarter-devices/fuse"),
        0
    );

    let plan = solve(&input(
        vec![PodBuilder::new("fuse")
            .cpu("1")
            .request("smarter-devices/fuse", "1")
            .build()],
        pools,
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims[0].launch.instance_type, "large");
}

/// A price overlay changes what is launched: `medium` at -90% is cheaper than `small`.
#[test]
fn a_price_overlay_changes_the_launch() {
    let mut pools = vec![pool_input(node_pool("default"), small_catalog())];
    apply_overlays(
        &mut pools,
        &[priced(
            overlay("discount", 1, &[(labels::INSTANCE_TYPE, In, &["medium"])]),
            PriceChange::Percent(-90.0),
        )],
    );
    let plan = solve(&input(vec![PodBuilder::new("p").cpu("1").build()], pools));
    let c = &plan.node_claims[0];
    assert_eq!(c.launch.instance_type, "medium");
    assert!((c.launch.price - 0.02).abs() < 1e-9);
    assert_eq!(
        &*c.instance_types[0].name, "medium",
        "options are ordered by the overlaid price"
    );
}

/// `core v1.14.1: pkg/controllers/nodeoverlay/store_test.go` — how the store's updates land on a
/// pool's instance types (`internalInstanceTypeStore.apply`), through the overlays that make
/// them:
/// - "Store Apply Correctness › should correctly apply price overlay to specific offerings":
///   `+0.01` on the zone-a offering only → 0.106 there, zone b keeps 0.096;
/// - "… › should correctly apply capacity overlay": `hugepages-2Mi: 100Mi` is added, memory and
///   cpu are kept;
/// - "Store Apply Isolation Between NodePools": `+10%` for pool a, `-5%` for pool b (by
///   `karpenter.sh/nodepool`) → 0.1056 and 0.0912 from one 0.096;
/// - "NodeOverlay Store Integration": a capacity overlay on `m5.large` leaves `m5.xlarge` alone;
/// - "Store Apply Selective Copy" (4 entries, whether Go shares or copies each field): no
///   overlay changes nothing, a price overlay changes prices only, a capacity overlay capacity
///   only, both both.
#[test]
fn the_store_changes_only_what_the_overlays_select() {
    use crate::model::instance_type::InstanceType;
    let m5 = |name: &str, od_b: bool| {
        let mut offers = vec![offer("us-west-2a", ON_DEMAND, 0.096)];
        if od_b {
            offers.push(offer("us-west-2b", ON_DEMAND, 0.096));
        }
        instance_type(name, "2", "8Gi", "29", offers)
    };
    let one_pool = |types: Vec<InstanceType>| vec![pool_input(node_pool("default"), types)];
    let price_of = |pools: &[PoolInput], p: usize, t: usize| -> Vec<f64> {
        pools[p].instance_types[t]
            .offerings
            .iter()
            .map(|o| (o.price * 1e6).round() / 1e6)
            .collect()
    };
    let zone_a = overlay("zone-a", 10, &[(ZONE, In, &["us-west-2a"])]);
    let mut huge = overlay("huge", 100, &[(labels::INSTANCE_TYPE, In, &["m5.large"])]);
    huge.capacity = Resources::from_pairs(&[("hugepages-2Mi", "100Mi")]);

    // Specific offerings.
    let mut pools = one_pool(vec![m5("m5.large", true)]);
    let before = pools[0].instance_types[0].clone();
    assert!(apply_overlays(
        &mut pools,
        &[priced(zone_a.clone(), PriceChange::Add(0.01))]
    )
    .is_empty());
    assert_eq!(price_of(&pools, 0, 0), [0.106, 0.096]);
    assert_eq!(pools[0].instance_types[0].capacity, before.capacity);
    assert_eq!(pools[0].instance_types[0].requirements, before.requirements);

    // Capacity, on one type of two; prices untouched.
    let mut pools = one_pool(vec![m5("m5.large", false), m5("m5.xlarge", false)]);
    let before = pools[0].instance_types.clone();
    assert!(apply_overlays(&mut pools, std::slice::from_ref(&huge)).is_empty());
    let large = &pools[0].instance_types[0];
    assert_eq!(
        large.capacity.get("hugepages-2Mi"),
        Resources::from_pairs(&[("hugepages-2Mi", "100Mi")]).get("hugepages-2Mi")
    );
    assert_eq!(
        large.capacity.get("memory"),
        before[0].capacity.get("memory")
    );
    assert_eq!(large.capacity.get("cpu"), before[0].capacity.get("cpu"));
    assert_eq!(large.offerings, before[0].offerings);
    assert_eq!(
        pools[0].instance_types[1], before[1],
        "m5.xlarge is not selected"
    );

    // Both; and none.
    let mut pools = one_pool(vec![m5("m5.large", true)]);
    apply_overlays(
        &mut pools,
        &[priced(zone_a.clone(), PriceChange::Add(0.01)), huge.clone()],
    );
    assert_eq!(price_of(&pools, 0, 0), [0.106, 0.096]);
    assert!(pools[0].instance_types[0].capacity.get("hugepages-2Mi") > 0);
    let mut pools = one_pool(vec![m5("m5.large", true)]);
    let before = pools[0].instance_types.clone();
    assert!(apply_overlays(&mut pools, &[]).is_empty());
    assert_eq!(pools[0].instance_types, before);

    // Isolation between pools.
    let mut pools = vec![
        pool_input(node_pool("nodepool-a"), vec![m5("m5.large", false)]),
        pool_input(node_pool("nodepool-b"), vec![m5("m5.large", false)]),
    ];
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(
                overlay("a", 10, &[(labels::NODEPOOL, In, &["nodepool-a"])]),
                PriceChange::Percent(10.0),
            ),
            priced(
                overlay("b", 10, &[(labels::NODEPOOL, In, &["nodepool-b"])]),
                PriceChange::Percent(-5.0),
            ),
        ],
    );
    assert!(conflicts.is_empty(), "one weight, but disjoint pools");
    assert_eq!(price_of(&pools, 0, 0), [0.1056]);
    assert_eq!(price_of(&pools, 1, 0), [0.0912]);
}

/// `core v1.14.1: pkg/controllers/nodeoverlay/controller.go` `getOverlaidOfferings`: the
/// offerings an overlay selects are those whose requirements are compatible with the overlay's
/// (`Offerings.Compatible`) — every label of the offering, not only zone and capacity type.
/// **Differed, fixed** — scenario: a type with an on-demand offering and two reservations'
/// offerings (`cr-a` in zone 1, `cr-b` in zone 2), an overlay `price: "0.5"` with
/// `karpenter.k8s.aws/capacity-reservation-id In [cr-a]` → upstream re-prices the `cr-a`
/// offering only (on-demand's id is `DoesNotExist`, `cr-b`'s another value); we re-priced all
/// three. Likewise `topology.k8s.aws/zone-id`.
#[test]
fn an_overlay_selects_offerings_by_every_label_of_the_offering() {
    use crate::model::labels::{CAPACITY_RESERVATION_ID, ZONE_ID};
    use crate::model::requirements::Requirement;
    use crate::model::reservation::{ReservationType, ReservedCapacity};
    let reserved = |zone: &str, id: &str| Offering {
        reservation: Some(ReservedCapacity {
            id: id.into(),
            reservation_type: ReservationType::Default,
            interruptible: false,
            count: 1,
        }),
        ..offer(zone, crate::model::instance_type::RESERVED, 0.2)
    };
    let mut it = instance_type(
        "default-instance-type",
        "4",
        "8Gi",
        "20",
        vec![
            Offering {
                zone_id: Some("az1".into()),
                ..offer("test-zone-1", ON_DEMAND, 1.0)
            },
            Offering {
                zone_id: Some("az1".into()),
                ..reserved("test-zone-1", "cr-a")
            },
            Offering {
                zone_id: Some("az2".into()),
                ..reserved("test-zone-2", "cr-b")
            },
        ],
    );
    it.requirements.add(Requirement::new(
        CAPACITY_RESERVATION_ID,
        In,
        ["cr-a", "cr-b"].map(String::from),
    ));
    it.requirements.add(Requirement::new(
        ZONE_ID,
        In,
        ["az1", "az2"].map(String::from),
    ));
    let run = |o: NodeOverlay| {
        let mut pools = vec![pool_input(node_pool("default"), vec![it.clone()])];
        assert!(apply_overlays(&mut pools, &[priced(o, PriceChange::Set(0.5))]).is_empty());
        prices(&pools)
    };
    assert_eq!(
        run(overlay(
            "cr-a",
            1,
            &[(CAPACITY_RESERVATION_ID, In, &["cr-a"])]
        )),
        [1.0, 0.5, 0.2]
    );
    // The type itself must be compatible first, and a type with reservations has
    // `capacity-reservation-id In [cr-a, cr-b]` (`aws: types.go computeRequirements`): `DoesNotExist`
    // selects none of its offerings, not even the on-demand one (`Intersects`).
    assert_eq!(
        run(overlay(
            "no-cr",
            1,
            &[(CAPACITY_RESERVATION_ID, DoesNotExist, &[])]
        )),
        [1.0, 0.2, 0.2]
    );
    assert_eq!(
        run(overlay("az1", 1, &[(ZONE_ID, In, &["az1"])])),
        [0.5, 0.5, 0.2]
    );
    assert_eq!(
        run(overlay("zone-2", 1, &[(ZONE, In, &["test-zone-2"])])),
        [1.0, 0.2, 0.5],
        "zone and capacity type, as before"
    );
}

/// No upstream It; `scheduling/nodeclaimtemplate.go ToNodeClaim` gives a static NodeClaim
/// neither the overlay-ordered types nor `karpenter.sh/price-overlay-applied`, so the AWS
/// provider's `Create` launches it `lowest-price` at EC2's prices (`instance.go` l.376); `Create`
/// still applies the overlays to the types (`aws v1.14.1: pkg/cloudprovider/cloudprovider.go`
/// l.131) and writes the overlaid capacity into the NodeClaim's status (`instanceToNodeClaim`,
/// found by s30-explain). A static pool's types keep their prices, get the added capacity, and
/// count for conflicts: an overlay of the same weight on the same offering is left out in the
/// dynamic pool too. Before s30-linestatic the static pool's replica was planned on the overlay's
/// cheaper type.
#[test]
fn a_static_pools_types_keep_their_prices_get_the_capacity_and_count_for_conflicts() {
    let mut fixed = three_offerings().remove(0);
    fixed.pool = node_pool("fixed");
    fixed.pool.replicas = Some(1);
    let mut pools = vec![fixed, three_offerings().remove(0)];
    let mut capacity = overlay("capacity", 10, &[]);
    capacity.capacity = Resources::from_pairs(&[("example.com/fuse", "4")]);
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(overlay("cheap", 10, &[]), PriceChange::Set(0.5)),
            capacity,
        ],
    );
    assert!(conflicts.is_empty());
    assert_eq!(prices(&pools), [1.02, 2.02, 4.02], "static: unchanged");
    assert!(
        pools[0].instance_types[0].capacity.get("example.com/fuse") > 0,
        "static: the overlaid capacity, as Create writes it"
    );
    assert_eq!(prices(&pools[1..]), [0.5, 0.5, 0.5], "dynamic: overlaid");
    assert!(pools[1].instance_types[0].capacity.get("example.com/fuse") > 0);

    // Only the static pool has the type an overlay of weight 10 prices twice: still a conflict.
    let mut fixed = three_offerings().remove(0);
    fixed.pool.replicas = Some(1);
    let mut pools = vec![fixed];
    let conflicts = apply_overlays(
        &mut pools,
        &[
            priced(overlay("a", 10, &[]), PriceChange::Set(0.5)),
            priced(overlay("b", 10, &[]), PriceChange::Set(0.7)),
        ],
    );
    assert_eq!(conflicts, ["a"]);
}
