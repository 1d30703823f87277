//! `MinValuesPolicy`, mirroring `core: pkg/controllers/provisioning/suite_test.go`
//! Context "MinValuesPolicy" (v1.14.1): under Strict an unmet `minValues` leaves the pod
//! pending; under BestEffort a new NodeClaim's unmet `minValues` are lowered to what its types
//! provide and the NodeClaim is annotated `karpenter.sh/nodeclaim-min-values-relaxed: "true"`
//! (`scheduling/nodeclaim.go` `tryVolumeAlternative`, `scheduler.go` `addToNewNodeClaim`).

use super::selection::fake_type;
use super::*;
use crate::model::instance_type::InstanceType;
use crate::model::labels::{INSTANCE_TYPE, NODECLAIM_MIN_VALUES_RELAXED};
use crate::model::nodepool::NodePool;
use crate::model::requirements::NodeSelectorRequirement;

/// `fake.NewInstanceType` as the Context builds it: arm64 Linux, 4 CPU / 4Gi, spot offerings.
fn mv_type(name: &str, offerings: &[(&str, f64)]) -> InstanceType {
    let offerings = offerings.iter().map(|(z, p)| offer(z, SPOT, *p)).collect();
    fake_type(name, "arm64", &["linux"], "4", "4Gi", offerings, &[])
}

/// instance-type-1 in `test-zone-1-spot`, instance-type-2 in `test-zone-2-spot`, both 0.52.
fn two_types() -> Vec<InstanceType> {
    vec![
        mv_type("instance-type-1", &[("test-zone-1-spot", 0.52)]),
        mv_type("instance-type-2", &[("test-zone-2-spot", 0.52)]),
    ]
}

/// instance-type-1 alone, in `test-zone-1` (0.52) and `test-zone-2` (0.54).
fn one_type_two_zones() -> Vec<InstanceType> {
    vec![mv_type(
        "instance-type-1",
        &[("test-zone-1", 0.52), ("test-zone-2", 0.54)],
    )]
}

const THREE_TYPES: [&str; 3] = ["instance-type-1", "instance-type-2", "instance-type-3"];
const THREE_ZONES: [&str; 3] = ["test-zone-1", "test-zone-2", "test-zone-3"];

fn pool(name: &str, weight: i32, reqs: &[(&str, &[&str], Option<u32>)]) -> NodePool {
    let mut pool = node_pool(name);
    pool.weight = weight;
    for (key, values, min) in reqs {
        let mut r = NodeSelectorRequirement::new(key, In, values);
        r.min_values = *min;
        pool.requirements.push(r);
    }
    pool
}

/// A v1 pool's input: its controller writes the relaxed annotation.
fn recorded(pool: NodePool, types: Vec<InstanceType>) -> PoolInput {
    let mut p = pool_input(pool, types);
    p.claim_annotations.records_min_values = true;
    p
}

/// The Context's pod: 0.9 CPU, 0.9Gi.
fn the_pod() -> Vec<crate::model::pod::Pod> {
    vec![PodBuilder::new("p").cpu("900m").memory("922Mi").build()]
}

fn solve_with_policy(pools: Vec<PoolInput>, policy: MinValuesPolicy) -> Plan {
    let mut inp = input(the_pod(), pools);
    inp.options.min_values_policy = policy;
    solve(&inp)
}

/// Under Strict the pool takes no pod: `MinValuesUnmet`, no NodeClaim.
fn strict_leaves_the_pod_pending(pool: PoolInput) {
    let strict = solve_with_policy(vec![pool], MinValuesPolicy::Strict);
    assert!(strict.node_claims.is_empty(), "{:?}", strict.node_claims);
    assert_eq!(strict.unschedulable.len(), 1);
    assert_eq!(
        strict.unschedulable[0].reason.code(),
        ReasonCode::MinValuesUnmet
    );
}

fn relaxed(c: &PlannedNodeClaim) -> Option<&str> {
    c.annotations
        .get(NODECLAIM_MIN_VALUES_RELAXED)
        .map(String::as_str)
}

fn names(c: &PlannedNodeClaim) -> Vec<&str> {
    c.instance_type_requirement
        .names
        .iter()
        .map(|n| &**n)
        .collect()
}

/// Context "with instance type requirements": "should not schedule when minValues requirement
/// is not met" (Strict) and "should schedule even when minValues requirement is not met"
/// (BestEffort: instance-type-1 launched, `instance-type In [instance-type-1,
/// instance-type-2]` with `minValues: 2`, relaxed "true").
#[test]
fn best_effort_relaxes_an_instance_type_min_values_strict_does_not() {
    let p = || {
        recorded(
            pool("default", 100, &[(INSTANCE_TYPE, &THREE_TYPES, Some(3))]),
            two_types(),
        )
    };
    strict_leaves_the_pod_pending(p());

    let plan = solve_with_policy(vec![p()], MinValuesPolicy::BestEffort);
    relaxed_to_both_types(&plan);
}

/// The plan's one NodeClaim: instance-type-1 launched, `instance-type In [instance-type-1,
/// instance-type-2]` with `minValues: 2`, relaxed "true".
fn relaxed_to_both_types(plan: &Plan) -> &PlannedNodeClaim {
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let [c] = &plan.node_claims[..] else {
        panic!("{:?}", plan.node_claims)
    };
    assert_eq!(c.launch.instance_type, "instance-type-1");
    assert_eq!(relaxed(c), Some("true"));
    assert_eq!(names(c), ["instance-type-1", "instance-type-2"]);
    assert_eq!(c.instance_type_requirement.min_values, Some(2));
    c
}

/// "should relax minValues before falling back to other nodepools" (a weight-10 pool without
/// `minValues` could take the pod as it is) and "should choose nodepool with higher weight when
/// relaxing minValues" (the weight-10 pool needs 3 types too): the weight-100 pool's relaxed
/// NodeClaim wins either way.
#[test]
fn best_effort_relaxes_the_heavier_pool_before_falling_back() {
    for lower_min in [None, Some(3)] {
        let plan = solve_with_policy(
            vec![
                recorded(
                    pool("lower", 10, &[(INSTANCE_TYPE, &THREE_TYPES, lower_min)]),
                    two_types(),
                ),
                recorded(
                    pool("default", 100, &[(INSTANCE_TYPE, &THREE_TYPES, Some(3))]),
                    two_types(),
                ),
            ],
            MinValuesPolicy::BestEffort,
        );
        let c = relaxed_to_both_types(&plan);
        assert_eq!(c.node_pool, "default", "{lower_min:?}");
    }
}

/// Context "with zone requirements": "should not schedule when zone minValues requirement is
/// not met" (Strict) and "should schedule even when zone minValues requirement is not met"
/// (BestEffort: zone 1 or 2, `zone In [test-zone-1, test-zone-2, test-zone-3]` with
/// `minValues: 2`).
#[test]
fn best_effort_relaxes_a_zone_min_values_strict_does_not() {
    let p = || {
        recorded(
            pool("default", 0, &[(ZONE, &THREE_ZONES, Some(3))]),
            one_type_two_zones(),
        )
    };
    strict_leaves_the_pod_pending(p());

    let plan = solve_with_policy(vec![p()], MinValuesPolicy::BestEffort);
    let [c] = &plan.node_claims[..] else {
        panic!("{:?}", plan.node_claims)
    };
    assert_eq!(c.launch.instance_type, "instance-type-1");
    assert!(["test-zone-1", "test-zone-2"].contains(&c.labels[ZONE].as_str()));
    assert_eq!(relaxed(c), Some("true"));
    let zone = c.requirements.get_ref(ZONE).expect("zone requirement");
    assert_eq!(zone.operator(), In);
    assert_eq!(zone.values().iter().collect::<Vec<_>>(), THREE_ZONES);
    assert_eq!(zone.min_values, Some(2));
}

/// Context "with both instance type and zone requirements": "should schedule when minValues
/// requirement is not met" — both relaxed at once: `instance-type In [instance-type-1]`
/// `minValues: 1`, the zones `minValues: 2`.
#[test]
fn best_effort_relaxes_every_unmet_key_at_once() {
    let plan = solve_with_policy(
        vec![recorded(
            pool(
                "default",
                100,
                &[
                    (INSTANCE_TYPE, &THREE_TYPES, Some(3)),
                    (ZONE, &THREE_ZONES, Some(3)),
                ],
            ),
            one_type_two_zones(),
        )],
        MinValuesPolicy::BestEffort,
    );
    let [c] = &plan.node_claims[..] else {
        panic!("{:?}", plan.node_claims)
    };
    assert_eq!(relaxed(c), Some("true"));
    assert_eq!(names(c), ["instance-type-1"]);
    assert_eq!(c.instance_type_requirement.min_values, Some(1));
    assert_eq!(c.requirements.get_ref(ZONE).unwrap().min_values, Some(2));
}

/// A NodeClaim whose `minValues` hold is not relaxed under BestEffort: `"false"`, as under Strict
/// (`addToNewNodeClaim` compares the updated `minValues` with the template's).
#[test]
fn best_effort_annotates_false_when_nothing_was_relaxed() {
    for policy in [MinValuesPolicy::Strict, MinValuesPolicy::BestEffort] {
        let plan = solve_with_policy(
            vec![recorded(
                pool("default", 0, &[(INSTANCE_TYPE, &THREE_TYPES, Some(2))]),
                two_types(),
            )],
            policy,
        );
        let [c] = &plan.node_claims[..] else {
            panic!("{policy:?}: {:?}", plan.node_claims)
        };
        assert_eq!(relaxed(c), Some("false"), "{policy:?}");
        assert_eq!(
            c.instance_type_requirement.min_values,
            Some(2),
            "{policy:?}"
        );
    }
}

/// Only a new NodeClaim relaxes: a pod joining one in flight is held to its (relaxed) `minValues`
/// strictly (`addToInflightNode` passes `relaxMinValues=false`). The first pod (3 CPU) relaxes
/// `minValues: 4` to 3 (the three types); the second (1 CPU) would leave only the 8-CPU type on
/// that NodeClaim, below its 3, so it gets a NodeClaim of its own — relaxed to 3 too.
#[test]
fn best_effort_holds_an_inflight_nodeclaim_to_its_relaxed_min_values() {
    let t = |name: &str, cpu: &str, price: f64| {
        fake_type(
            name,
            "arm64",
            &["linux"],
            cpu,
            &format!("{cpu}Gi"),
            vec![offer("test-zone-1", SPOT, price)],
            &[],
        )
    };
    let types = vec![t("a", "4", 0.1), t("b", "4", 0.2), t("c", "8", 0.3)];
    let values = ["a", "b", "c", "d"];
    let mut inp = input(
        vec![
            PodBuilder::new("big").cpu("3").memory("1Gi").build(),
            PodBuilder::new("small").cpu("1").memory("1Gi").build(),
        ],
        vec![recorded(
            pool("default", 0, &[(INSTANCE_TYPE, &values, Some(4))]),
            types,
        )],
    );
    inp.options.min_values_policy = MinValuesPolicy::BestEffort;
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mins: Vec<Option<u32>> = plan
        .node_claims
        .iter()
        .map(|c| c.instance_type_requirement.min_values)
        .collect();
    assert_eq!(mins, [Some(3), Some(3)], "{:#?}", plan.node_claims);
}

/// `Truncate` checks `minValues` only under Strict (`cloudprovider/types.go`): a NodeClaim whose
/// options, cut to the cheapest one, no longer meet `minValues: 2` is dropped under Strict
/// ("schedule should fail if minimum number of InstanceTypes is not met … after truncation").
/// Under BestEffort the scheduler keeps it, not relaxed, but `ToNodeClaim` writes
/// `instance-type In [instance-type-1]` with `minValues: 2`, which the NodeClaim CRD refuses: the
/// pod stays pending either way (with the real `MaxInstanceTypes`, 600, and `minValues` at most
/// 50, truncation cannot get there).
#[test]
fn truncation_below_min_values_loses_the_nodeclaim_under_either_policy() {
    for policy in [MinValuesPolicy::Strict, MinValuesPolicy::BestEffort] {
        let mut inp = input(
            the_pod(),
            vec![recorded(
                pool("default", 0, &[(INSTANCE_TYPE, &THREE_TYPES, Some(2))]),
                two_types(),
            )],
        );
        inp.options.max_instance_types = 1;
        inp.options.min_values_policy = policy;
        let plan = solve(&inp);
        assert!(plan.node_claims.is_empty(), "{policy:?}");
        let [u] = &plan.unschedulable[..] else {
            panic!("{policy:?}: {:?}", plan.unschedulable)
        };
        assert_eq!(u.reason.code(), ReasonCode::MinValuesUnmet, "{policy:?}");
        let refused = u.reason.to_string().contains("refused by the API server");
        assert_eq!(
            refused,
            policy == MinValuesPolicy::BestEffort,
            "{}",
            u.reason
        );
    }
}

/// `SatisfiesMinValues` counts every value of the types' own requirement on the key, not only
/// those the NodeClaim admits (`it.Requirements.Get(req.Key).Values()`): a pod pinned to
/// `test-zone-1` on a pool asking three zones, whose type is offered in all three, meets the
/// zone `minValues` in the simulation — nothing to relax under BestEffort. (Before s17 only the
/// admitted zones counted.) But the NodeClaim it gets carries `zone In [test-zone-1]` with
/// `minValues: 3`, which the NodeClaim CRD refuses ("requirements with 'minValues' must have at
/// least that many values specified in the 'values' field", core v1.14.1
/// `pkg/apis/v1/nodeclaim.go`; `provisioner.go` `Create` fails): the pod stays pending under
/// either policy — kubernetes-sigs/karpenter#2999 (fixed after v1.14.1 by #3170). Until s22 we
/// planned the NodeClaim.
#[test]
fn a_pod_pinned_to_one_zone_meets_a_zone_min_values_but_its_nodeclaim_is_refused() {
    let types = vec![mv_type(
        "instance-type-1",
        &[
            ("test-zone-1", 0.52),
            ("test-zone-2", 0.52),
            ("test-zone-3", 0.52),
        ],
    )];
    for policy in [MinValuesPolicy::Strict, MinValuesPolicy::BestEffort] {
        let mut inp = input(
            vec![PodBuilder::new("p")
                .cpu("900m")
                .node_selector(ZONE, "test-zone-1")
                .build()],
            vec![recorded(
                pool("default", 0, &[(ZONE, &THREE_ZONES, Some(3))]),
                types.clone(),
            )],
        );
        inp.options.min_values_policy = policy;
        let plan = solve(&inp);
        assert!(
            plan.node_claims.is_empty(),
            "{policy:?}: {:?}",
            plan.node_claims
        );
        let [u] = &plan.unschedulable[..] else {
            panic!("{policy:?}: {:?}", plan.unschedulable)
        };
        assert_eq!(u.reason.code(), ReasonCode::MinValuesUnmet, "{policy:?}");
        let text = u.reason.to_string();
        assert!(
            text.contains("the NodeClaim would be refused by the API server")
                && text.contains("topology.kubernetes.io/zone In [test-zone-1] minValues 3"),
            "{policy:?}: {text}"
        );
    }
    // Unpinned, the NodeClaim keeps the three zones and is created.
    let plan = solve_with_policy(
        vec![recorded(
            pool("default", 0, &[(ZONE, &THREE_ZONES, Some(3))]),
            types,
        )],
        MinValuesPolicy::Strict,
    );
    let [c] = &plan.node_claims[..] else {
        panic!("{:?}", plan.unschedulable)
    };
    let zone = c.requirements.get_ref(ZONE).unwrap();
    assert_eq!(zone.values().len(), 3);
    assert_eq!(zone.min_values, Some(3));
}
