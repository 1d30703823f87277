//! The fuzzer's findings, minimised to named cases (docs/upstream-tests/fuzzing.md,
//! "Plans checked against their own constraints (s32-fuzzplan)").

use super::check_plan;
use crate::model::instance_type::{Offering, ON_DEMAND, SPOT};
use crate::model::labels::ZONE;
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::requirements::Operator::*;
use crate::scheduling::tests::pool_input as pool_of;
use crate::scheduling::{solve_rounds, Input};
use crate::testing::*;

/// Offerings `zone/capacity type/price`, available unless the price is negative.
fn offers(list: &[(&str, &str, f64)]) -> Vec<Offering> {
    list.iter()
        .map(|(z, ct, price)| Offering {
            zone: z.to_string(),
            capacity_type: ct.to_string(),
            price: price.abs(),
            available: *price >= 0.0,
            reservation: None,
            zone_id: None,
        })
        .collect()
}

/// One pool of one 8-CPU type in one zone, the pod planned and the plan checked.
fn planned_and_checked(pod: crate::model::pod::Pod) -> crate::scheduling::Plan {
    let it = instance_type("t", "8", "32Gi", "16", offers(&[("z-b", ON_DEMAND, 0.35)]));
    let input = Input {
        pods: vec![pod],
        pools: vec![pool_of(node_pool("p0"), vec![it])],
        ..Default::default()
    };
    let plan = solve_rounds(&input);
    assert_eq!(check_plan(&input, &plan), vec![], "{plan:#?}");
    plan
}

/// Seed 1359, minimised: a pool with `minValues: 2` on the instance type and a zone
/// requirement; a 1-CPU pod only `large` holds cannot have a NodeClaim of its own (strict
/// `minValues`, core v1.14.1 `scheduling/nodeclaim.go` `CanAdd` →
/// `filterInstanceTypesByRequirements`), nor join the 100m pod's NodeClaim of `small` and
/// `large` (it would leave one type). The launch of that NodeClaim is spot, which only `large`
/// offers in its zones (aws v1.14.1 `pkg/providers/instance/instance.go` `getCapacityType`),
/// and the next batch binds the 1-CPU pod to the in-flight `large` node (`rounds.rs`; core
/// `provisioning/suite_test.go` "should not schedule to a nodepool after a scheduling round if
/// limits would be exceeded" for the second batch counting what was launched). The NodeClaim
/// keeps the options it was created with: the checker's mistake, not the planner's.
#[test]
fn a_pod_a_nodeclaims_options_cannot_all_hold_joins_it_as_launched_in_the_next_round() {
    let mut pool = with_requirement(node_pool("p0"), ZONE, In, &["z-a", "z-c"]);
    let mut mv =
        NodeSelectorRequirement::new("node.kubernetes.io/instance-type", Exists, &[] as &[&str]);
    mv.min_values = Some(2);
    pool.requirements.push(mv);
    let mut small = instance_type(
        "small",
        "1",
        "4Gi",
        "3",
        offers(&[
            ("z-a", ON_DEMAND, 0.054),
            ("z-b", ON_DEMAND, 0.054),
            ("z-b", SPOT, 0.019),
            ("z-c", ON_DEMAND, 0.052),
            ("z-c", SPOT, -0.018),
        ]),
    );
    small.overhead.kube_reserved =
        crate::model::resources::Resources::from_pairs(&[("cpu", "200m")]);
    let large = instance_type(
        "large",
        "4",
        "8Gi",
        "16",
        offers(&[
            ("z-a", ON_DEMAND, 0.204),
            ("z-c", ON_DEMAND, 0.206),
            ("z-c", SPOT, 0.081),
        ]),
    );
    let input = Input {
        pods: vec![
            PodBuilder::new("tiny").cpu("100m").build(),
            PodBuilder::new("one-cpu").cpu("1").build(),
        ],
        pools: vec![pool_of(pool, vec![small, large])],
        ..Default::default()
    };
    let plan = solve_rounds(&input);
    assert_eq!(check_plan(&input, &plan), vec![], "{plan:#?}");
    let [claim] = plan.node_claims.as_slice() else {
        panic!("{plan:#?}")
    };
    let options: Vec<&str> = claim.instance_types.iter().map(|o| &*o.name).collect();
    assert_eq!(options, ["small", "large"]);
    assert_eq!(
        (
            claim.launch.instance_type.as_str(),
            claim.launch.capacity_type.as_str()
        ),
        ("large", SPOT)
    );
    assert_eq!(claim.pods, ["default/tiny", "default/one-cpu"]);
    assert!(plan.unschedulable.is_empty());
}

/// One required term `tier In [gold]` and `tier Exists` (one key twice), a pool that does not
/// define `tier`. Core v1.14.1 `pkg/scheduling/requirements.go` `Add` intersects the two into
/// `tier In [gold]`, and `Compatible` refuses a custom key the NodeClaim does not define
/// (`label "…" does not have known values`): unschedulable.
#[test]
fn a_term_naming_a_custom_key_twice_is_intersected_not_overwritten() {
    let pod = PodBuilder::new("p")
        .cpu("500m")
        .required_term(&[
            ("example.com/tier", In, &["gold"]),
            ("example.com/tier", Exists, &[]),
        ])
        .build();
    let plan = planned_and_checked(pod);
    assert_eq!(plan.unschedulable.len(), 1, "{plan:#?}");
}

/// Seed 525, minimised: the pod of the case above also prefers `tier In [gold]` and `tier In
/// [silver]`. Karpenter adds the heaviest preference to the first required term
/// (`requirements.go` `newPodRequirements`): `In [gold]` ∩ `In []` is an empty `In`, which reads
/// as `DoesNotExist` (`requirement.go` `Operator`), compatible with a NodeClaim without `tier`:
/// Karpenter places the pod (kube-scheduler will not bind it: its required term never matches).
/// A Karpenter quirk the planner matches on purpose; the checker reads terms Karpenter's way.
#[test]
fn a_preference_contradicting_the_required_term_collapses_it_to_does_not_exist_as_karpenter_does() {
    let mut pod = PodBuilder::new("p")
        .cpu("500m")
        .required_term(&[
            ("example.com/tier", In, &["gold"]),
            ("example.com/tier", Exists, &[]),
        ])
        .preferred_term(
            24,
            &[
                ("example.com/tier", In, &["gold"]),
                ("example.com/tier", In, &["silver"]),
            ],
        )
        .build();
    pod.labels.clear();
    let plan = planned_and_checked(pod);
    assert!(plan.unschedulable.is_empty(), "{plan:#?}");
    let tier = plan.node_claims[0]
        .requirements
        .get_ref("example.com/tier")
        .expect("narrowed");
    assert!(
        !tier.is_complement() && tier.values().is_empty(),
        "{tier:?}"
    );
}

/// Seed 426, minimised: two pods spread on the capacity type (`maxSkew: 1`, `DoNotSchedule`)
/// whose first required term excludes on-demand and whose second does not. Karpenter reads the
/// first term (`requirements.go` `newPodRequirements`) for `podDomains`, so the minimum is over
/// spot alone (`topologygroup.go` `domainMinCount`) and both pods go to one spot NodeClaim;
/// kube-scheduler, counting every domain some term admits, would hold the second back. The
/// planner matches Karpenter; the checker's first reading (every term) was the mistake.
#[test]
fn spread_counts_only_the_domains_of_the_first_required_term() {
    let pods = (0..2)
        .map(|i| {
            PodBuilder::new(&format!("a-{i}"))
                .label("app", "a")
                .cpu("500m")
                .required_term(&[("karpenter.sh/capacity-type", NotIn, &["on-demand"])])
                .required_term(&[("karpenter.k8s.aws/instance-cpu", Gt, &["4"])])
                .spread("karpenter.sh/capacity-type", 1, true, &[("app", "a")])
                .build()
        })
        .collect();
    let mut it = instance_type(
        "t",
        "16",
        "64Gi",
        "8",
        offers(&[("z-a", ON_DEMAND, 0.8), ("z-a", SPOT, 0.3)]),
    );
    it.requirements
        .add(crate::model::requirements::Requirement::single(
            "karpenter.k8s.aws/instance-cpu",
            "16",
        ));
    let input = Input {
        pods,
        pools: vec![pool_of(node_pool("p0"), vec![it])],
        ..Default::default()
    };
    let plan = solve_rounds(&input);
    assert_eq!(check_plan(&input, &plan), vec![], "{plan:#?}");
    let [claim] = plan.node_claims.as_slice() else {
        panic!("{plan:#?}")
    };
    assert_eq!(claim.capacity_types, [SPOT]);
    assert_eq!(claim.pods.len(), 2);
}
