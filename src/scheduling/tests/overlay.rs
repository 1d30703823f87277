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
