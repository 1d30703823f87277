//! The fuzzer's findings, minimised to named cases (docs/upstream-tests/fuzzing.md,
//! "Plans checked against their own constraints (s32-fuzzplan)").

use super::world::TIER;
use super::{check_plan, planned};
use crate::model::instance_type::{Offering, ON_DEMAND, SPOT};
use crate::model::labels::{CAPACITY_TYPE, HOSTNAME, NODEPOOL, ZONE};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::requirements::Operator::*;
use crate::scheduling::tests::pool_input as pool_of;
use crate::scheduling::{ExistingNode, Input};
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
    let planned = planned(&input);
    assert_eq!(check_plan(&input, &planned), vec![], "{:#?}", planned.plan);
    planned.plan
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
    let planned = planned(&input);
    let plan = &planned.plan;
    assert_eq!(check_plan(&input, &planned), vec![], "{plan:#?}");
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
    let planned = planned(&input);
    let plan = &planned.plan;
    assert_eq!(check_plan(&input, &planned), vec![], "{plan:#?}");
    let [claim] = plan.node_claims.as_slice() else {
        panic!("{plan:#?}")
    };
    assert_eq!(claim.capacity_types, [SPOT]);
    assert_eq!(claim.pods.len(), 2);
}

/// An initialized on-demand node `name` in `zone` of one 1-CPU type, holding `bound`.
fn node_in(name: &str, zone: &str, bound: Vec<crate::model::pod::Pod>) -> ExistingNode {
    let it = instance_type(name, "1", "4Gi", "8", offers(&[(zone, ON_DEMAND, 0.05)]));
    let node = crate::model::node::Node {
        name: name.into(),
        labels: labels_of(&[
            (ZONE, zone),
            (CAPACITY_TYPE, ON_DEMAND),
            (HOSTNAME, name),
            (NODEPOOL, "p0"),
        ]),
        capacity: it.capacity.clone(),
        allocatable: it.allocatable(),
        ready: true,
        initialized: true,
        ..Default::default()
    };
    let pods = bound
        .into_iter()
        .map(|p| PodBuilder::from_pod(p).on_node(name).build())
        .collect();
    ExistingNode { node, pods }
}

/// One pool `p0` of `types`, `pods` pending, `nodes` existing: planned, checked, returned.
fn checked(
    pods: Vec<crate::model::pod::Pod>,
    nodes: Vec<ExistingNode>,
    types: Vec<crate::model::instance_type::InstanceType>,
) -> super::Planned {
    let input = Input {
        pods,
        existing_nodes: nodes,
        pools: vec![pool_of(node_pool("p0"), types)],
        ..Default::default()
    };
    let planned = planned(&input);
    assert_eq!(check_plan(&input, &planned), vec![], "{:#?}", planned.plan);
    planned
}

/// Seed 2250, minimised: a pod of app `a` with required zone affinity to app `a` and a required
/// term `zone NotIn [z-a]`; the only pod of `a` runs in z-a. Karpenter bootstraps the group
/// anew: no domain with a selected pod is among the pod's own domains (core v1.14.1
/// `scheduling/topologygroup.go` `nextDomainAffinity` → `anyCompatiblePodDomain`), so a
/// self-selecting pod may pick a domain of its own (`topology_test.go` "should allow two nodes
/// to be created when two pods with matching affinities have incompatible selectors").
/// kube-scheduler would not bind it there; the planner matches Karpenter; the checker's first
/// reading (a selected pod must share the domain) was the mistake.
#[test]
fn a_self_affine_pod_whose_terms_exclude_every_selected_pods_zone_bootstraps_its_own() {
    let app = || PodBuilder::new("a").label("app", "a").cpu("100m");
    let pod = app()
        .required_term(&[(ZONE, NotIn, &["z-a"])])
        .affinity(ZONE, &[("app", "a")])
        .build();
    let bound = app().build();
    let it = instance_type(
        "t",
        "2",
        "8Gi",
        "16",
        offers(&[
            ("z-a", SPOT, -0.04),
            ("z-b", ON_DEMAND, 0.1),
            ("z-c", SPOT, 0.04),
        ]),
    );
    let planned = checked(vec![pod], vec![node_in("n1", "z-a", vec![bound])], vec![it]);
    let [claim] = planned.plan.node_claims.as_slice() else {
        panic!("{:#?}", planned.plan)
    };
    assert_eq!(claim.zones.len(), 1, "{claim:#?}");
    assert_ne!(claim.zones[0], "z-a");
}

/// Seed 2941, minimised: app `a` runs in z-a and z-c; a pending pod of `a` with required zone
/// affinity fits neither node. Every domain that holds a selected pod and the NodeClaim allows
/// is an option (`nextDomainAffinity`), so the NodeClaim keeps z-a and z-c: wherever it
/// launches, a pod of `a` is there. `Record` counts affinity only for a single domain, so the
/// pod is not counted yet. The checker asked for one domain; it now asks that each holds one.
#[test]
fn a_self_affine_pod_keeps_every_zone_its_group_already_holds() {
    let app = |name: &str, cpu: &str| PodBuilder::new(name).label("app", "a").cpu(cpu);
    let pod = app("a-big", "3").affinity(ZONE, &[("app", "a")]).build();
    let nodes = vec![
        node_in("n0", "z-a", vec![app("a-0", "100m").build()]),
        node_in("n1", "z-c", vec![app("a-1", "100m").build()]),
    ];
    let it = instance_type(
        "t",
        "16",
        "64Gi",
        "3",
        offers(&[
            ("z-a", ON_DEMAND, 0.736),
            ("z-b", SPOT, 0.381),
            ("z-c", ON_DEMAND, 0.672),
            ("z-c", SPOT, 0.269),
        ]),
    );
    let planned = checked(vec![pod], nodes, vec![it]);
    let [claim] = planned.plan.node_claims.as_slice() else {
        panic!("{:#?}", planned.plan)
    };
    assert_eq!(claim.zones, ["z-a", "z-c"]);
}

/// Seed 4635 (s32-fuzzplan's open anti-affinity seed), minimised: app `b` has required zone
/// anti-affinity and a capacity-type spread, app `a` hostname anti-affinity. In the first round
/// `b-1` joins a NodeClaim whose zone requirement still names z-b and z-c (`topology.go`
/// `Record` blocks every zone it may land in; its spread then leaves on-demand, offered in z-b
/// only), so `b-3` has no zone left and waits. The next batch sees that NodeClaim launched in
/// z-b only (`provisioner.go`: a later batch's in-flight nodes; `rounds.rs`) and `b-3` joins
/// the in-flight node of `a-2`'s NodeClaim, launched in z-c, though that NodeClaim still names
/// both zones. The checker, not knowing the pod's round, compared the planned zone sets; it
/// now reads each pod's round (`fuzz_check::planned`).
#[test]
fn a_zone_anti_affine_pod_of_a_later_round_sees_the_earlier_nodeclaims_as_launched() {
    let a = |name: &str| {
        PodBuilder::new(name)
            .label("app", "a")
            .cpu("1500m")
            .memory("128Mi")
            .anti_affinity(HOSTNAME, &[("app", "a")])
            .build()
    };
    let b = |name: &str| {
        PodBuilder::new(name)
            .label("app", "b")
            .cpu("3")
            .memory("1Gi")
            .spread(CAPACITY_TYPE, 1, true, &[("app", "b")])
            .anti_affinity(ZONE, &[("app", "b")])
            .build()
    };
    let it = instance_type(
        "t",
        "8",
        "16Gi",
        "16",
        offers(&[
            ("z-b", ON_DEMAND, 0.432),
            ("z-b", SPOT, 0.186),
            ("z-c", SPOT, 0.136),
        ]),
    );
    let planned = checked(
        vec![a("a-0"), b("b-1"), a("a-2"), b("b-3")],
        vec![],
        vec![it],
    );
    assert_eq!(
        planned.rounds.get("default/b-3"),
        Some(&2),
        "{:#?}",
        planned.plan
    );
}

/// Seed 1314 (s32-fuzzplan's open spread seed), minimised: two pods spread on the capacity type
/// (`maxSkew: 1`, `DoNotSchedule`, `nodeAffinityPolicy: Honor`) whose required term is
/// `tier In [gold]` ∧ `tier Exists`, preferring `tier DoesNotExist` ∧ `tier In [gold]`: the
/// preference collapses the term to `tier DoesNotExist`, and the pool has no `tier` (the case
/// above, `a_preference_contradicting_…`). Each pod lands on a NodeClaim its own spread filter
/// refuses (`topologynodefilter.go` `Matches`: `tier In [gold]` against the NodeClaim's
/// `DoesNotExist`), so `Record` does not count it (`topology.go` `Record` → `Counts`) and both
/// go on-demand. The checker counted pods on NodeClaims without the filter.
#[test]
fn a_pod_on_a_nodeclaim_its_own_spread_filter_refuses_is_not_counted() {
    let pods = (1..=2)
        .map(|i| {
            PodBuilder::new(&format!("a-{i}"))
                .label("app", "a")
                .cpu("1500m")
                .memory("3Gi")
                .required_term(&[(TIER, In, &["gold"]), (TIER, Exists, &[])])
                .preferred_term(2, &[(TIER, DoesNotExist, &[]), (TIER, In, &["gold"])])
                .spread(CAPACITY_TYPE, 1, true, &[("app", "a")])
                .build()
        })
        .collect();
    let it = instance_type(
        "t",
        "2",
        "8Gi",
        "8",
        offers(&[
            ("z-a", ON_DEMAND, 0.103),
            ("z-a", SPOT, -0.047),
            ("z-b", ON_DEMAND, 0.106),
            ("z-c", SPOT, 0.041),
        ]),
    );
    let planned = checked(pods, vec![], vec![it]);
    let cts: Vec<&str> = planned
        .plan
        .node_claims
        .iter()
        .map(|c| c.launch.capacity_type.as_str())
        .collect();
    assert_eq!(cts, [ON_DEMAND, ON_DEMAND], "{:#?}", planned.plan);
}

/// Seed 1641, minimised — a planner difference, mended: five pods with a zone spread
/// (`maxSkew: 1`, `minDomains: 4`, `nodeTaintsPolicy: Honor`); one zone's only node is
/// uninitialized and carries `node.kubernetes.io/not-ready`. Round 1 puts one pod in each zone,
/// one of them on that node, and leaves two pending. Karpenter's next batch places that pod again
/// and records it with the node's `cachedTaints`, which hide the not-ready taint before
/// initialization (core v1.14.1 `scheduling/existingnode.go` `Add` → `topology.go` `Record`), so
/// the zone counts one pod and the two stay pending. The planner's round 2 counted it as bound,
/// by the Node's own taints (`countDomains`), left it out under `Honor` and put a second pod in
/// that zone (skew 2 against a minimum of 0). Now a pod an earlier round placed is counted by
/// the taints scheduling sees (`topology.rs` `counted_taints`).
#[test]
fn a_pod_an_earlier_round_placed_on_an_uninitialized_node_counts_for_its_spread() {
    let pods = (1..=5)
        .map(|i| {
            PodBuilder::new(&format!("a-{i}"))
                .label("app", "a")
                .cpu("100m")
                .spread(ZONE, 1, true, &[("app", "a")])
                .spread_policies(true, None)
                .min_domains(Some(4))
                .build()
        })
        .collect();
    let mut warming = node_in("warming", "z-c", vec![]);
    warming.node.initialized = false;
    warming.node.taints = vec![taint(
        "node.kubernetes.io/not-ready",
        "",
        crate::model::taints::Effect::NoSchedule,
    )];
    let nodes = vec![node_in("ready", "z-a", vec![]), warming];
    let it = instance_type(
        "t",
        "4",
        "16Gi",
        "32",
        offers(&[
            ("z-a", ON_DEMAND, 0.16),
            ("z-b", ON_DEMAND, 0.16),
            ("z-c", ON_DEMAND, 0.16),
        ]),
    );
    let planned = checked(pods, nodes, vec![it]);
    let plan = &planned.plan;
    let on_warming: usize = (plan.existing_nodes.iter())
        .filter(|e| e.node == "warming")
        .map(|e| e.pods.len())
        .sum();
    let claims_in_z_c = (plan.node_claims.iter())
        .filter(|c| c.launch.zone == "z-c")
        .count();
    assert_eq!((on_warming, claims_in_z_c), (1, 0), "{plan:#?}");
    assert_eq!(plan.unschedulable.len(), 2, "{plan:#?}");
}
