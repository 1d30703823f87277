//! Scheduling behaviour, case by case (many adapted from Karpenter's scheduling suite).

use super::*;
use crate::model::instance_type::{Offering, ON_DEMAND, SPOT};
use crate::model::labels::{CAPACITY_TYPE, HOSTNAME, ZONE};
use crate::model::node::Node;
use crate::model::requirements::Operator::*;
use crate::model::taints::Effect;
use crate::testing::*;

mod audit_state;
mod constraints;
mod daemons;
mod existing;
mod existing_nodes;
mod inflight;
mod inflight_order;
mod launch;
mod line_by_line;
mod managed;
mod min_values_policy;
mod nodeclaims;
mod overlay;
mod performance_suites;
mod possibility;
mod provisioner_lines;
mod req_lines;
mod reserved;
mod rounds;
mod selection;
mod shapes;
mod spread;
mod statics;
mod tenancy;
mod topology;
mod topology_aliases;
mod topology_combined;
mod topology_suite;
mod volumes;

/// The solver under test: every case also checks that skipping what is known to refuse a pod
/// changes nothing (`Options::exhaustive`), and that leaving refusals unexplained
/// (`Options::unexplained`) changes nothing but the reasons.
fn solve(input: &Input) -> Plan {
    let plan = super::solve(input);
    let mut exhaustive = input.clone();
    exhaustive.options.exhaustive = true;
    assert_eq!(plan, super::solve(&exhaustive), "exhaustive search differs");
    let mut unexplained = input.clone();
    unexplained.options.unexplained = true;
    let mut quiet = super::solve(&unexplained);
    assert_eq!(quiet.unschedulable.len(), plan.unschedulable.len());
    for (q, p) in quiet.unschedulable.iter_mut().zip(&plan.unschedulable) {
        assert_eq!(q.pod, p.pod, "unexplained: another pod is unschedulable");
        q.reason = p.reason.clone();
    }
    assert_eq!(plan, quiet, "unexplained refusals change the plan");
    plan
}

fn small_catalog() -> Vec<crate::model::instance_type::InstanceType> {
    let z = &FAKE_ZONES;
    vec![
        instance_type("small", "2", "4Gi", "10", on_demand(z, 0.1)),
        instance_type("medium", "4", "8Gi", "20", on_demand(z, 0.2)),
        instance_type("large", "8", "16Gi", "40", on_demand(z, 0.4)),
    ]
}

pub(super) fn pool_input(
    pool: crate::model::nodepool::NodePool,
    types: Vec<crate::model::instance_type::InstanceType>,
) -> PoolInput {
    PoolInput {
        pool,
        node_class: Some("default".into()),
        instance_types: types,
        usage: Default::default(),
        claim_annotations: Default::default(),
        images: Vec::new(),
        not_ready: None,
        unlaunched: Default::default(),
    }
}

/// A Ready, initialized node with room (8 CPU, 16Gi, 10 pods), labelled with its hostname only.
fn roomy_node(name: &str) -> Node {
    Node {
        name: name.into(),
        labels: labels_of(&[(HOSTNAME, name)]),
        allocatable: crate::model::resources::Resources::from_pairs(&[
            ("cpu", "8"),
            ("memory", "16Gi"),
            ("pods", "10"),
        ]),
        ready: true,
        initialized: true,
        ..Default::default()
    }
}

fn input(pods: Vec<crate::model::pod::Pod>, pools: Vec<PoolInput>) -> Input {
    Input {
        pods,
        pools,
        ..Default::default()
    }
}

/// An available offering.
fn offer(zone: &str, capacity_type: &str, price: f64) -> Offering {
    Offering {
        zone: zone.into(),
        capacity_type: capacity_type.into(),
        price,
        available: true,
        reservation: None,
        zone_id: None,
    }
}

/// The input of the batch after `plan` (of `inp`): its NodeClaims in flight, renamed `node-N`
/// (so the next batch's names cannot collide), with `pods` to place.
fn next_batch(inp: &Input, plan: &Plan, pods: Vec<crate::model::pod::Pod>) -> Input {
    let mut next = super::rounds::after_round(
        inp,
        Some(&std::collections::BTreeSet::new()),
        &plan.existing_nodes,
        &plan.node_claims,
    );
    for (i, n) in next.existing_nodes.iter_mut().enumerate() {
        n.node.name = format!("node-{i}");
        n.node.labels.insert(HOSTNAME.into(), n.node.name.clone());
    }
    next.pods = pods;
    next
}

fn pods(n: usize, f: impl Fn(usize) -> PodBuilder) -> Vec<crate::model::pod::Pod> {
    (0..n).map(|i| f(i).build()).collect()
}

#[test]
fn packs_onto_the_cheapest_type_that_fits() {
    let plan = solve(&input(
        pods(3, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    let claim = &plan.node_claims[0];
    assert_eq!(
        claim.launch.instance_type, "medium",
        "3 CPU + overhead needs 4 vCPU"
    );
    assert_eq!(claim.pods.len(), 3);
    let names: Vec<&str> = claim.instance_types.iter().map(|o| &*o.name).collect();
    assert_eq!(
        names,
        ["medium", "large"],
        "every compatible option kept, cheapest first"
    );
    assert!(plan.unschedulable.is_empty());
    assert_eq!(claim.name, "default-1");
    assert!(claim
        .all_requirements()
        .get("node.kubernetes.io/instance-type")
        .has("large"));
}

#[test]
fn existing_capacity_is_used_first() {
    let node = Node {
        name: "node-a".into(),
        labels: labels_of(&[(HOSTNAME, "node-a"), (ZONE, "test-zone-1")]),
        allocatable: crate::model::resources::Resources::from_pairs(&[
            ("cpu", "2"),
            ("memory", "4Gi"),
            ("pods", "10"),
        ]),
        ready: true,
        initialized: true,
        ..Default::default()
    };
    let busy = PodBuilder::new("busy").cpu("1").on_node("node-a").build();
    let mut inp = input(
        pods(2, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(ExistingNode {
        node,
        pods: vec![busy],
    });
    let plan = solve(&inp);
    assert_eq!(plan.existing_nodes.len(), 1);
    assert_eq!(plan.existing_nodes[0].pods.len(), 1, "1 CPU left on node-a");
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods.len(), 1);
}

#[test]
fn pools_are_tried_by_weight_then_name_descending() {
    let mut heavy = node_pool("a-heavy");
    heavy.weight = 10;
    let plan = solve(&input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![
            pool_input(node_pool("z-light"), small_catalog()),
            pool_input(heavy, small_catalog()),
        ],
    ));
    assert_eq!(plan.node_claims[0].node_pool, "a-heavy");
    let plan = solve(&input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![
            pool_input(node_pool("alpha"), small_catalog()),
            pool_input(node_pool("beta"), small_catalog()),
        ],
    ));
    assert_eq!(
        plan.node_claims[0].node_pool, "beta",
        "equal weights: name descending"
    );
}

/// aws#6883 (core v1.14.1 `scheduling/scheduler.go` `add`: existing nodes, then NodeClaims
/// opened this round, then new ones by weight): an unselective pod joins the light pool's
/// NodeClaim a selective pod opened, though the heavy pool takes it too — and the plan says so.
#[test]
fn a_pod_joining_a_lighter_pools_open_nodeclaim_is_noted() {
    let mut heavy = node_pool("heavy");
    heavy.weight = 100;
    let mut light = node_pool("light");
    light.weight = 10;
    light.labels = labels_of(&[("team", "light")]);
    let plan = solve(&input(
        vec![
            PodBuilder::new("selective")
                .cpu("1")
                .node_selector("team", "light")
                .build(),
            PodBuilder::new("any").cpu("500m").build(),
        ],
        vec![
            pool_input(light, small_catalog()),
            pool_input(heavy, small_catalog()),
        ],
    ));
    assert_eq!(plan.node_claims.len(), 1, "{:#?}", plan.node_claims);
    let claim = &plan.node_claims[0];
    assert_eq!(claim.node_pool, "light");
    assert_eq!(
        claim.joined_before_weights,
        Some(JoinedBeforeWeights {
            pods: vec!["default/any".into()],
            weight: 10,
            higher_node_pool: "heavy".into(),
            higher_weight: 100,
        })
    );
    // A pod only the light pool takes, or one pool alone: no note.
    let plan = solve(&input(
        pods(2, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(node_pool("only"), small_catalog())],
    ));
    assert!(plan
        .node_claims
        .iter()
        .all(|c| c.joined_before_weights.is_none()));
}

#[test]
fn limits_are_enforced_pessimistically_and_named() {
    let mut pool = node_pool("default");
    pool.limits.insert("cpu".into(), 10_000);
    let plan = solve(&input(
        pods(20, |i| PodBuilder::new(&format!("p{i:02}")).cpu("1")),
        vec![pool_input(pool, small_catalog())],
    ));
    let cpu: i64 = plan
        .node_claims
        .iter()
        .map(|c| {
            let t = small_catalog()
                .into_iter()
                .find(|t| t.name == c.launch.instance_type)
                .unwrap();
            t.capacity.cpu
        })
        .sum();
    assert!(cpu <= 10_000, "planned capacity {cpu}m exceeds the limit");
    // 8-vCPU claim takes 7 pods, a 2-vCPU claim takes 1; the rest hit the limit.
    assert_eq!(plan.node_claims.len(), 2);
    assert_eq!(plan.unschedulable.len(), 12);
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::LimitReached);
    assert!(
        reason
            .to_string()
            .contains("NodePool default: limit cpu=10 reached"),
        "{reason}"
    );
}

#[test]
fn node_selector_must_match_pool_labels() {
    let mut pool = node_pool("default");
    pool.labels = labels_of(&[("team", "a")]);
    let plan = solve(&input(
        vec![
            PodBuilder::new("ok")
                .cpu("1")
                .node_selector("team", "a")
                .build(),
            PodBuilder::new("wrong")
                .cpu("1")
                .node_selector("team", "b")
                .build(),
            PodBuilder::new("unknown")
                .cpu("1")
                .node_selector("gpu", "yes")
                .build(),
        ],
        vec![pool_input(pool, small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].labels["team"], "a");
    let reasons: BTreeMap<&str, String> = plan
        .unschedulable
        .iter()
        .map(|u| (u.pod.as_str(), u.reason.to_string()))
        .collect();
    let codes: Vec<ReasonCode> = plan.unschedulable.iter().map(|u| u.reason.code()).collect();
    assert_eq!(codes, [ReasonCode::IncompatibleRequirements; 2]);
    assert!(
        reasons["default/wrong"].contains("team In [b] conflicts"),
        "{}",
        reasons["default/wrong"]
    );
    assert!(
        reasons["default/unknown"].contains("gpu"),
        "{}",
        reasons["default/unknown"]
    );
}

#[test]
fn required_node_affinity_terms_are_tried_in_order() {
    let pool = with_requirement(node_pool("default"), ZONE, In, &["test-zone-2"]);
    let pod = PodBuilder::new("p")
        .cpu("1")
        .required_term(&[(ZONE, In, &["test-zone-1"])])
        .required_term(&[(ZONE, In, &["test-zone-2"])])
        .build();
    let plan = solve(&input(vec![pod], vec![pool_input(pool, small_catalog())]));
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims[0].launch.zone, "test-zone-2");
}

#[test]
fn preferred_node_affinity_is_relaxed_when_unsatisfiable() {
    let pod = PodBuilder::new("p")
        .cpu("1")
        .preferred_term(10, &[("kubernetes.io/arch", In, &["arm64"])])
        .build();
    let plan = solve(&input(
        vec![pod],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    let pod = PodBuilder::new("p")
        .cpu("1")
        .preferred_term(10, &[(ZONE, In, &["test-zone-3"])])
        .build();
    let plan = solve(&input(
        vec![pod],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(
        plan.node_claims[0].launch.zone, "test-zone-3",
        "satisfiable preferences are honoured"
    );
}

/// Karpenter relaxes a pod all the way the first time it tries it (core v1.14.1 `scheduler.go`
/// `Solve` and `trySchedule`, since core #2119): a pod whose preferred arm64 fails in the zone
/// its spread picks drops that preference at once and lands there on amd64, and the pods behind
/// it still try arm64 first. Scenario (session 26 sweep, `bwagner5/karpenter-demos`
/// `scenarios/2_multi-arch.sh`): a zone spread, arm64 preferred (weight 50) over amd64 (1), one
/// zone without arm64 offerings. Karpenter: zones 1 and 2 get arm64, the third pod relaxes to
/// amd64 in zone 3, the next three still prefer arm64 and two of them join the arm64 claims;
/// the last finds zones 1 and 2 at the skew limit and relaxes into zone 3 (4 pods on arm64, 2
/// on amd64). We relaxed one step and sent the pod to the back: every arm64-preferring pod
/// behind it then failed in zone 3 too and was relaxed to amd64 (2 on arm64, 4 on amd64).
#[test]
fn a_pod_is_relaxed_all_the_way_at_once_and_the_next_keeps_its_preferences() {
    let mut arm = instance_type("arm", "4", "8Gi", "20", on_demand(&FAKE_ZONES[..2], 0.1));
    arm.requirements.remove(labels::ARCH);
    arm.requirements
        .add(crate::model::requirements::Requirement::single(
            labels::ARCH,
            "arm64",
        ));
    let x86 = instance_type("x86", "4", "8Gi", "20", on_demand(&FAKE_ZONES, 0.2));
    let pods = pods(6, |i| {
        PodBuilder::new(&format!("p{i}"))
            .cpu("1")
            .label("app", "demo")
            .spread(ZONE, 1, true, &[("app", "demo")])
            .preferred_term(1, &[(labels::ARCH, In, &["amd64"])])
            .preferred_term(50, &[(labels::ARCH, In, &["arm64"])])
    });
    let plan = solve(&input(
        pods,
        vec![pool_input(node_pool("default"), vec![arm, x86])],
    ));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let on = |t: &str| -> usize {
        plan.node_claims
            .iter()
            .filter(|c| c.launch.instance_type == t)
            .map(|c| c.pods.len())
            .sum()
    };
    assert_eq!((on("arm"), on("x86")), (4, 2), "{:#?}", plan.node_claims);
    let x86_zones: Vec<&str> = plan
        .node_claims
        .iter()
        .filter(|c| c.launch.instance_type == "x86")
        .map(|c| c.launch.zone.as_str())
        .collect();
    assert_eq!(x86_zones, ["test-zone-3"]);
}

#[test]
fn taints_need_tolerations() {
    let mut pool = node_pool("gpu");
    pool.taints
        .push(taint("dedicated", "gpu", Effect::NoSchedule));
    let plan = solve(&input(
        vec![
            PodBuilder::new("plain").cpu("1").build(),
            PodBuilder::new("tolerant")
                .cpu("1")
                .toleration("dedicated", "gpu", Effect::NoSchedule)
                .build(),
        ],
        vec![pool_input(pool, small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods, ["default/tolerant"]);
    assert_eq!(plan.unschedulable.len(), 1);
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::TaintNotTolerated);
    assert_eq!(
        reason.to_string(),
        "NodePool gpu: taint dedicated=gpu:NoSchedule not tolerated"
    );
}

#[test]
fn prefer_no_schedule_taints_are_relaxed_last() {
    let mut pool = node_pool("default");
    pool.taints
        .push(taint("soft", "x", Effect::PreferNoSchedule));
    let plan = solve(&input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![pool_input(pool, small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
}

#[test]
fn host_ports_conflict() {
    let plan = solve(&input(
        pods(2, |i| {
            PodBuilder::new(&format!("p{i}"))
                .cpu("100m")
                .host_port(8080)
        }),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 2);
}

#[test]
fn daemonset_overhead_is_reserved_on_new_nodes() {
    let mut inp = input(
        pods(1, |_| PodBuilder::new("p").cpu("1500m")),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.daemonsets
        .push(PodBuilder::new("ds").cpu("500m").daemonset("logs").build());
    let plan = solve(&inp);
    // small has 1900m allocatable: 1500m + 500m daemon does not fit.
    assert_eq!(plan.node_claims[0].launch.instance_type, "medium");
    assert_eq!(plan.node_claims[0].requests.cpu, 2000);
    // A daemon that does not tolerate the pool's taint adds nothing.
    let mut tainted = node_pool("default");
    tainted.taints.push(taint("only", "me", Effect::NoSchedule));
    inp.pools = vec![pool_input(tainted, small_catalog())];
    inp.pods = vec![PodBuilder::new("p")
        .cpu("1500m")
        .toleration("only", "me", Effect::NoSchedule)
        .build()];
    let plan = solve(&inp);
    assert_eq!(plan.node_claims[0].launch.instance_type, "small");
}

#[test]
fn extended_resources_select_types_that_have_them() {
    let mut gpu = instance_type("gpu", "8", "32Gi", "40", on_demand(&FAKE_ZONES, 3.0));
    gpu.capacity.set("nvidia.com/gpu", 1000);
    let mut types = small_catalog();
    types.push(gpu);
    let plan = solve(&input(
        vec![PodBuilder::new("train")
            .cpu("1")
            .request("nvidia.com/gpu", "1")
            .build()],
        vec![pool_input(node_pool("default"), types)],
    ));
    assert_eq!(plan.node_claims[0].launch.instance_type, "gpu");
    let plan = solve(&input(
        vec![PodBuilder::new("train")
            .cpu("1")
            .request("nvidia.com/gpu", "2")
            .build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::NoInstanceTypeFits);
    assert!(reason.to_string().contains("nvidia.com/gpu 2"), "{reason}");
}

#[test]
fn too_big_pods_get_a_precise_reason() {
    let plan = solve(&input(
        vec![PodBuilder::new("huge").cpu("96").build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::NoInstanceTypeFits);
    assert_eq!(
        reason.to_string(),
        "NodePool default: no instance type has cpu 96 (largest available after overhead: 7900m, \
         on large: capacity 8 less kube-reserved 100m)",
        "names the largest allocatable, its type and how its capacity shrinks to it"
    );
}

/// Threads core#1088 (c4.4xlarge, a 25Gi pod), core#1212 (i3en.24xlarge), aws#5676
/// (m6a.2xlarge, a 30Gi pod) and aws#3872 ("where is my ~9Gi?"): a pod that fits the type's
/// advertised memory but not Karpenter's allocatable. aws v1.14.1
/// `pkg/providers/instancetype/types.go` (`memory`: `VM_MEMORY_OVERHEAD_PERCENT` off the
/// advertised MiB; `kubeReservedResources`, `evictionThreshold`) and core
/// `pkg/cloudprovider/types.go` `computeAllocatable` give the figure; the reason now says which
/// type it is and what each share takes (issue-threads.md, "Issue threads, round 11").
#[test]
fn a_memory_shortfall_names_the_vm_share_and_the_reservations() {
    let mut it = instance_type(
        "c4.4xlarge",
        "16",
        "28416Mi",
        "234",
        on_demand(&FAKE_ZONES, 0.8),
    );
    it.requirements
        .add(crate::model::requirements::Requirement::single(
            crate::model::labels::INSTANCE_MEMORY,
            "30720",
        ));
    it.overhead.kube_reserved =
        crate::model::resources::Resources::from_pairs(&[("cpu", "110m"), ("memory", "2829Mi")]);
    it.overhead.eviction_threshold =
        crate::model::resources::Resources::from_pairs(&[("memory", "100Mi")]);
    let plan = solve(&input(
        vec![PodBuilder::new("ana").cpu("1").memory("25600Mi").build()],
        vec![pool_input(node_pool("default"), vec![it])],
    ));
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "NodePool default: no instance type has memory 25Gi (largest available after overhead: \
         25487Mi, on c4.4xlarge: capacity 28416Mi (30Gi less 7.5% for the VM) less kube-reserved \
         2829Mi and eviction threshold 100Mi)"
    );
}

/// A pool with limits whose first NodeClaim (8 CPU, for a 7-CPU pod) leaves only the small type
/// within them: a pod no type of the pool can hold (64Gi) is told so with the largest of all its
/// types, without naming the limits, which are not why (core v1.14.1 `scheduler.go`
/// `addToNewNodeClaim` names limits only when they leave no type; `nodeclaim.go`
/// `InstanceTypeFilterError` "no instance type which had enough resources"); a pod a left-out
/// type would have held (10Gi) names them.
#[test]
fn remaining_limits_are_named_only_when_they_are_why_no_type_fits() {
    let mut pool = node_pool("default");
    pool.limits.insert("cpu".into(), 10_000);
    let plan = solve(&input(
        vec![
            PodBuilder::new("seven").cpu("7").build(),
            PodBuilder::new("ten-gi").cpu("1").memory("10Gi").build(),
            PodBuilder::new("huge").cpu("100m").memory("64Gi").build(),
        ],
        vec![pool_input(pool, small_catalog())],
    ));
    let reasons: BTreeMap<&str, String> = plan
        .unschedulable
        .iter()
        .map(|u| (u.pod.as_str(), u.reason.to_string()))
        .collect();
    let (huge, ten) = (&reasons["default/huge"], &reasons["default/ten-gi"]);
    assert!(
        huge.starts_with("NodePool default: no instance type has memory 64Gi"),
        "{huge}"
    );
    assert!(
        ten.starts_with(
            "NodePool default: no instance type within its remaining limits has memory 10Gi"
        ),
        "{ten}"
    );
}

#[test]
fn min_values_keep_enough_distinct_types() {
    let mut pool = node_pool("default");
    let mut req = crate::model::requirements::NodeSelectorRequirement::new(
        "node.kubernetes.io/instance-type",
        Exists,
        &[],
    );
    req.min_values = Some(3);
    pool.requirements.push(req);
    // 5 CPU leaves only `large`: minValues 3 cannot hold, so the pods split.
    let plan = solve(&input(
        pods(5, |i| PodBuilder::new(&format!("p{i}")).cpu("1")),
        vec![pool_input(pool.clone(), small_catalog())],
    ));
    for c in &plan.node_claims {
        assert!(c.instance_types.len() >= 3, "{c:?}");
    }
    assert!(plan.unschedulable.is_empty());
    // A pod only `large` can hold is refused, naming minValues.
    let plan = solve(&input(
        vec![PodBuilder::new("big").cpu("6").build()],
        vec![pool_input(pool, small_catalog())],
    ));
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::MinValuesUnmet);
    assert!(reason.to_string().contains("minValues"), "{reason}");
}

#[test]
fn instance_types_are_truncated_to_the_cheapest() {
    let mut inp = input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![pool_input(node_pool("default"), fake_instance_types(50))],
    );
    inp.options.max_instance_types = 10;
    let plan = solve(&inp);
    let c = &plan.node_claims[0];
    assert_eq!(c.instance_types.len(), 10);
    assert_eq!(
        &*c.instance_types[0].name, "fake-it-1",
        "fake-it-0 has 1 vCPU: 900m after overhead"
    );
    assert!(c
        .instance_types
        .windows(2)
        .all(|w| w[0].price <= w[1].price));
}

#[test]
fn spot_is_chosen_when_allowed_and_cheaper_types_first() {
    let offerings = vec![
        Offering {
            zone: "test-zone-1".into(),
            capacity_type: SPOT.into(),
            price: 0.05,
            available: true,
            reservation: None,
            zone_id: None,
        },
        Offering {
            zone: "test-zone-1".into(),
            capacity_type: ON_DEMAND.into(),
            price: 0.2,
            available: true,
            reservation: None,
            zone_id: None,
        },
    ];
    let types = vec![instance_type("mixed", "4", "8Gi", "20", offerings)];
    let plan = solve(&input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![pool_input(node_pool("default"), types.clone())],
    ));
    assert_eq!(plan.node_claims[0].launch.capacity_type, "spot");
    let od = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &["on-demand"]);
    let plan = solve(&input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![pool_input(od, types)],
    ));
    assert_eq!(plan.node_claims[0].launch.capacity_type, "on-demand");
    assert_eq!(plan.node_claims[0].launch.price, 0.2);
}

#[test]
fn pods_opting_out_or_naming_hosts_are_refused_up_front() {
    let plan = solve(&input(
        vec![
            PodBuilder::new("pinned")
                .cpu("1")
                .node_selector(HOSTNAME, "x")
                .build(),
            PodBuilder::new("optout")
                .cpu("1")
                .required_term(&[("karpenter.sh/nodepool", DoesNotExist, &[])])
                .build(),
        ],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert!(plan.node_claims.is_empty());
    assert_eq!(plan.unschedulable.len(), 2);
}

#[test]
fn solving_is_deterministic() {
    let make = || {
        input(
            pods(40, |i| {
                PodBuilder::new(&format!("p{i}"))
                    .cpu(["100m", "500m", "1"][i % 3])
                    .label("app", ["a", "b"][i % 2])
                    .spread(ZONE, 1, true, &[("app", ["a", "b"][i % 2])])
            }),
            vec![pool_input(node_pool("default"), small_catalog())],
        )
    };
    assert_eq!(solve(&make()), solve(&make()));
}

#[test]
fn unschedulable_pods_are_listed_in_natural_order() {
    let plan = solve(&input(
        pods(12, |i| PodBuilder::new(&format!("p-{i}")).cpu("64")),
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    let names: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(names[..3], ["default/p-0", "default/p-1", "default/p-2"]);
    assert_eq!(names[11], "default/p-11");
}

#[test]
fn daemonset_host_ports_are_reserved_on_new_nodes() {
    let mut inp = input(
        vec![PodBuilder::new("web").cpu("100m").host_port(9100).build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.daemonsets.push(
        PodBuilder::new("exporter")
            .cpu("10m")
            .host_port(9100)
            .daemonset("node-exporter")
            .build(),
    );
    let plan = solve(&inp);
    assert!(plan.node_claims.is_empty());
    let reason = &plan.unschedulable[0].reason;
    assert_eq!(reason.code(), ReasonCode::HostPortConflict);
    assert_eq!(
        reason.to_string(),
        "NodePool default: host port 9100 already in use"
    );
}

/// core 6a9532040 "fix: Don't schedule a pod with DRA requirements (#2384)" — its
/// `scheduling/suite_test.go` "Dynamic Resource Allocation (DRA)": "should handle DRA pods
/// correctly" (a container's, an init container's or both claims ⇒ no NodeClaim, a DRA error; a
/// pod without claims ⇒ one NodeClaim) and "should handle DaemonSet pods with DRA requirements
/// based on IgnoreDRARequests flag value" (the default `true`: a 3-CPU DaemonSet pod with a
/// claim adds no overhead, so a 1-CPU pod gets the small type). Karpenter's default flag
/// refuses the pod before any placement and never relaxes it (`scheduler.go add`,
/// `IsDRAError`).
#[test]
fn pods_with_dra_claims_are_refused_and_dra_daemonsets_add_no_overhead() {
    let mut dra = PodBuilder::new("dra").cpu("1").build();
    dra.dra = true;
    let plan = solve(&input(
        vec![dra, PodBuilder::new("plain").cpu("1").build()],
        vec![pool_input(node_pool("default"), small_catalog())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods, ["default/plain"]);
    assert_eq!(plan.unschedulable.len(), 1);
    let refused = &plan.unschedulable[0];
    assert_eq!(refused.pod, "default/dra");
    assert_eq!(refused.reason.code(), ReasonCode::Unsupported);
    assert_eq!(
        refused.reason.to_string(),
        super::podreqs::DRA_REFUSAL,
        "{:?}",
        refused.reason
    );

    let mut inp = input(
        pods(1, |_| PodBuilder::new("p").cpu("1")),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let mut daemon = PodBuilder::new("ds")
        .cpu("3")
        .daemonset("gpu-agent")
        .build();
    daemon.dra = true;
    inp.daemonsets.push(daemon.clone());
    let plan = solve(&inp);
    assert_eq!(plan.node_claims[0].launch.instance_type, "small");
    assert_eq!(plan.node_claims[0].requests.cpu, 1000);
    // The same DaemonSet without a claim takes its 3 CPUs (medium leaves 3.9 allocatable).
    daemon.dra = false;
    inp.daemonsets = vec![daemon];
    let plan = solve(&inp);
    assert_eq!(plan.node_claims[0].launch.instance_type, "large");
}
