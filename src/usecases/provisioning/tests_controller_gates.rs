//! The running controller's `NodeOverlay` feature gate (core v1.14.1
//! `pkg/operator/options/suite_test.go` "should use the correct default values":
//! `NodeOverlay: false`; `pkg/controllers/controllers.go` and
//! `pkg/cloudprovider/overlay/cloudprovider.go` apply overlays only behind it).

use std::cell::RefCell;

use serde_json::json;

use super::tests::{all, world_with_an_overlay};
use super::*;
use crate::usecases::testing::World;

fn plan(world: &World, gate: Option<bool>) -> (String, Vec<String>) {
    let warnings = RefCell::new(Vec::new());
    let selection = Selection {
        node_overlay_gate: gate,
        ..all()
    };
    let round = world
        .live()
        .plan_pending(&selection, &mut |e| {
            if let Event::Warning(w) = e {
                warnings.borrow_mut().push(w.to_string());
            }
        })
        .unwrap()
        .expect("a plan");
    let it = round.plan.node_claims[0].launch.instance_type.clone();
    (it, warnings.into_inner())
}

/// **Differs, fixed** — scenario: a cluster whose Karpenter v1.14.1 controller runs with the
/// default gates and a NodeOverlay `priceAdjustment: -90%` on c6a.xlarge, one 1-CPU pod
/// pending → Karpenter ignores the overlay and launches the cheapest type as priced
/// (c6a.large); the plan applied the overlay and chose c6a.xlarge. With the gate on (or no
/// controller read) the overlay applies as before.
#[test]
fn node_overlays_apply_only_behind_the_controllers_gate() {
    let (it, warnings) = plan(&world_with_an_overlay(), Some(false));
    assert_eq!(it, "c6a.large");
    assert!(
        warnings.iter().any(
            |w| w.starts_with("NodeOverlay/xlarge-discount: not applied")
                && w.contains("NodeOverlay feature gate off")
        ),
        "{warnings:?}"
    );
    for gate in [Some(true), None] {
        let (it, warnings) = plan(&world_with_an_overlay(), gate);
        assert_eq!(it, "c6a.xlarge", "{gate:?}");
        assert!(
            !warnings.iter().any(|w| w.contains("feature gate off")),
            "{warnings:?}"
        );
    }
}

/// **Differs, fixed** — scenario: a controller with the default gates (`StaticCapacity=false`,
/// core v1.14.1 `options.go`) and a NodePool with `replicas: 2`, no pod pending → Karpenter
/// runs no static controller (`controllers.go`) and its provisioner skips static pools, so
/// nothing launches; the live plan launched the two replicas. With the gate on (or no
/// controller read) they are planned as before.
#[test]
fn static_pools_are_kept_only_behind_the_controllers_gate() {
    use crate::usecases::testing::node_pool;
    let world = World::new();
    world.cluster.put(node_pool(
        "fixed",
        json!({"replicas": 2, "limits": {"nodes": "5"}}),
    ));
    let plan = |gate: Option<bool>| {
        let warnings = RefCell::new(Vec::new());
        let selection = Selection {
            static_capacity_gate: gate,
            ..all()
        };
        let round = world.live().plan_pending(&selection, &mut |e| {
            if let Event::Warning(w) = e {
                warnings.borrow_mut().push(w.to_string());
            }
        });
        let claims = round.unwrap().map_or(0, |r| r.plan.node_claims.len());
        (claims, warnings.into_inner())
    };
    let (claims, warnings) = plan(Some(false));
    assert_eq!(claims, 0);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("NodePool/fixed: static (spec.replicas)")
                && w.contains("StaticCapacity feature gate off")),
        "{warnings:?}"
    );
    for gate in [Some(true), None] {
        assert_eq!(plan(gate).0, 2, "{gate:?}");
    }
}
