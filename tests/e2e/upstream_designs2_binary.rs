//! Part 2 of Karpenter's design documents (`designs/*.md` of core and provider at v1.14.1)
//! replayed through the built binary: `consolidate -f - --now T -o json --catalog FILE`,
//! `provision --dry-run -f - -o json` and `drift check -f -`. As in part 1
//! (upstream_designs_binary), the v1.14.1 code each design led to is the contract; where the
//! document says otherwise the test says which and follows the code.
//! docs/upstream-tests.md "Design documents through the binary, part 2 (s23-designs2)" maps each
//! example to its test.

use serde_json::{json, Value};

use crate::support::{karpenter, merge, provision_json, write_temp, Run};
use crate::upstream_designs_binary::unmanaged;
use crate::upstream_disruption_binary::{fake_type, offering, pool as disruption_pool, Sc, MOST};
use crate::upstream_scheduling_binary::{
    class as sched_class, pool as sched_pool, req, sized, Plan, CAPACITY_TYPE, INSTANCE_TYPE,
};

// ---------------------------------------------------------------------------------------------
// core designs/balanced-consolidation.md (code: core v1.14.1 pkg/controllers/disruption/
// balanced.go ScoreMove, EvaluateBalancedMove, CanPassThreshold, computeNodePoolTotals;
// types.go PerNodeBaseDisruptionCost, computeRescheduleDisruptionCost; v1.BalancedK = 2)
//
// The document's pool: eight m7i.xlarge ($4.84/day) and two m7i.2xlarge ($9.68/day), 80 pods.
// Its examples sum pod costs only (80, 107); the code adds 1.0 per node (`PerNodeBaseDisruptionCost`,
// `StateNode.DisruptionCost`), as the document's own "NodePool Totals" says — the scores move,
// no decision does. Nodes that are not the example's are full and annotated do-not-disrupt:
// not candidates, still counted in the pool's totals ("Non-candidate nodes still contribute").
// ---------------------------------------------------------------------------------------------

const LARGE: &str = "m7i.large-on-demand";
const XL: &str = "m7i.xlarge-on-demand";
const XXL: &str = "m7i.2xlarge-on-demand";

/// m7i.large / xlarge / 2xlarge at their us-east-1 on-demand prices (0.1008 $/h per 2 CPUs),
/// 110 pods each.
fn m7i() -> Value {
    let types: Vec<Value> = [
        (LARGE, 2, 8, 0.1008),
        (XL, 4, 16, 0.2016),
        (XXL, 8, 32, 0.4032),
    ]
    .iter()
    .map(|&(name, cpu, mem, price)| {
        let mut t = fake_type(
            name,
            cpu,
            mem,
            vec![offering("test-zone-1", "on-demand", price, true)],
        );
        t["capacity"]["pods"] = json!("110");
        t
    })
    .collect();
    json!({ "instanceTypes": types })
}

/// Millicores a node of `it` offers (the fake type's 100m overhead taken off).
fn alloc_milli(it: &str) -> u32 {
    match it {
        LARGE => 1900,
        XL => 3900,
        _ => 7900,
    }
}

/// A Balanced pool on the m7i catalog.
fn balanced() -> Sc {
    let mut sc = Sc::new().catalog(m7i());
    sc.disruption("default")["consolidationPolicy"] = json!("Balanced");
    sc
}

/// A node of `it` with pods `{name}-p0…` of the given millicores.
fn node_with_pods(sc: &mut Sc, name: &str, it: &str, pods: &[u32]) {
    let cpu = format!("{}m", alloc_milli(it));
    sc.node_with(name, "default", it, &[("cpu", &cpu), ("pods", "110")]);
    for (i, m) in pods.iter().enumerate() {
        sc.pod(&format!("{name}-p{i}"), name, &format!("{m}m"));
    }
}

/// A full node of `it` (100m left) with `count` pods, annotated do-not-disrupt.
fn filler(sc: &mut Sc, name: &str, it: &str, count: usize) {
    let each = (alloc_milli(it) - 100) / count as u32;
    node_with_pods(sc, name, it, &vec![each; count]);
    sc.annotate_node(name, "karpenter.sh/do-not-disrupt", "true");
}

/// Full fillers `f0…`: `(type, nodes, pods each)` groups.
fn fillers(sc: &mut Sc, groups: &[(&str, usize, usize)]) {
    let nodes = groups
        .iter()
        .flat_map(|&(it, n, pods)| std::iter::repeat_n((it, pods), n));
    for (i, (it, count)) in nodes.enumerate() {
        filler(sc, &format!("f{i}"), it, count);
    }
}

/// A Balanced pool: node `x` of `it` with `pods`, and the fillers.
fn design_pool(it: &str, pods: &[u32], groups: &[(&str, usize, usize)]) -> Sc {
    let mut sc = balanced();
    node_with_pods(&mut sc, "x", it, pods);
    fillers(&mut sc, groups);
    sc
}

/// "Oversized Node (approved)": a 2xlarge with 3 pods (1.5 CPU) → an m7i.large. Code: savings
/// 0.3024 / 2.4192 = 12.5 %, disruption (1 + 3) / 90 = 4.4 %, score 2.81 (the document: 3.33).
#[test]
fn balanced_oversized_node_is_replaced() {
    let sc = design_pool(XXL, &[500; 3], &[(XXL, 1, 9), (XL, 4, 9), (XL, 4, 8)]);
    let r = sc.run("s23-designs2-balanced-oversized");
    r.expect(&[("x", "replace/single")]);
    assert_eq!(r.replacement_types("x"), [LARGE, XL]);
    assert_eq!(r.actions()[0]["replacement"]["instanceType"], LARGE);
}

/// "Spare Capacity Delete (approved)": an xlarge with 4 pods (1.5 CPU), another node has room.
/// Code: 0.2016 / 2.4192 = 8.3 %, (1 + 4) / 90 = 5.6 %, score 1.5 (the document: 1.67).
#[test]
fn balanced_spare_capacity_delete_is_approved() {
    let mut sc = design_pool(XL, &[375; 4], &[(XXL, 2, 9), (XL, 6, 9)]);
    node_with_pods(&mut sc, "spare", XL, &[500; 4]);
    sc.annotate_node("spare", "karpenter.sh/do-not-disrupt", "true");
    sc.run("s23-designs2-balanced-spare")
        .expect(&[("x", "delete/single")]);
}

/// The marginal move's pool: an xlarge's 8 pods (1.8 CPU) fit an m7i.large.
fn marginal() -> Sc {
    design_pool(XL, &[225; 8], &[(XXL, 2, 8), (XL, 7, 8)])
}

/// "Marginal Move (rejected)": an xlarge's 8 pods (1.8 CPU) fit an m7i.large; saving 4.2 % for
/// (1 + 8) / 90 = 10 % scores 0.417 < 0.5 (the document: 0.42).
#[test]
fn balanced_marginal_move_is_rejected() {
    marginal()
        .run("s23-designs2-balanced-marginal")
        .left_because("x", &["Balanced", "0.417", "0.500"]);
}

/// "Well-Packed Node (rejected)": 10 pods, 3.5 CPU — the only type that holds them is the
/// node's own; no move, at any threshold.
#[test]
fn balanced_well_packed_node_stays() {
    let sc = design_pool(XL, &[350; 10], &[(XXL, 2, 7), (XL, 7, 8)]);
    let r = sc.run("s23-designs2-balanced-packed");
    r.expect(&[("x", "none")]);
    assert!(!r.reason("x").contains("Balanced"), "{}", r.reason("x"));
}

/// "Uniform Pool Replace (approved)": ten xlarge, one's 8 pods fit an m7i.large: 0.1008 / 2.016
/// = 5 %, (1 + 8) / 90 = 10 %: exactly 0.5, approved (`Approved`: score >= 1/k).
#[test]
fn balanced_uniform_pool_replace_sits_on_the_threshold() {
    let r = design_pool(XL, &[225; 8], &[(XL, 9, 8)]).run("s23-designs2-balanced-uniform");
    r.expect(&[("x", "replace/single")]);
    assert_eq!(r.replacement_types("x"), [LARGE]);
}

/// "Heterogeneous Disruption Cost": A (4 default pods) and B (1 default + 3 with
/// `pod-deletion-cost: 2147483647`, `EvictionCost` clamped to 10) can both be deleted. Code's
/// totals: 72 + 4 + 31 + 10 nodes = 117. A alone: 8.3 % / (5 / 117) = 1.95, approved; B alone:
/// 8.3 % / (32 / 117) = 0.305, rejected (`CanPassThreshold`: not even a delete passes).
fn heterogeneous(spare_cpu_for_both: bool) -> Sc {
    let mut sc = balanced();
    node_with_pods(&mut sc, "a", XL, &[375; 4]);
    node_with_pods(&mut sc, "b", XL, &[375; 4]);
    for i in 1..4 {
        sc.pod_mut(&format!("b-p{i}"))["metadata"]["annotations"]
            ["controller.kubernetes.io/pod-deletion-cost"] = json!("2147483647");
    }
    // The spare node: room for one node's pods (1.5 CPU) or for both (3 CPU).
    let (spare_it, spare_pods) = if spare_cpu_for_both {
        (XXL, [400; 9].to_vec())
    } else {
        (XL, [200; 9].to_vec())
    };
    node_with_pods(&mut sc, "spare", spare_it, &spare_pods);
    sc.annotate_node("spare", "karpenter.sh/do-not-disrupt", "true");
    // Eight xlarge and two 2xlarge in all, 80 pods.
    let (xl, xxl) = if spare_cpu_for_both { (6, 1) } else { (5, 2) };
    fillers(&mut sc, &[(XL, xl, 9), (XXL, xxl, 9)]);
    sc
}

#[test]
fn balanced_heterogeneous_disruption_cost_rejects_the_expensive_node() {
    // With a budget of one node, single-node consolidation takes A (its ratio sorts first).
    let mut one = heterogeneous(false);
    one.disruption("default")["budgets"] = json!([{"nodes": "1"}]);
    one.run("s23-designs2-balanced-hetero-a")
        .expect(&[("a", "delete/single"), ("b", "none")]);
    // A kept (do-not-disrupt): B alone is scored and refused.
    let mut b_only = heterogeneous(false);
    b_only.annotate_node("a", "karpenter.sh/do-not-disrupt", "true");
    b_only
        .run("s23-designs2-balanced-hetero-b")
        .left_because("b", &["Balanced", "0.305", "0.500"]);
}

/// Not in the document, what the code does with its example: when one node has room for both
/// A's and B's pods, multi-node consolidation scores the pair as one move — 16.7 % savings for
/// (5 + 32) / 117 = 31.6 % disruption, 0.527 ≥ 0.5 — and deletes B with A (the "Binary Search
/// Monotonicity" limitation: a below-threshold node rides along an above-threshold one).
#[test]
fn balanced_multi_node_move_carries_the_expensive_node_along() {
    heterogeneous(true)
        .run("s23-designs2-balanced-hetero-multi")
        .expect(&[("a", "delete/multi"), ("b", "delete/multi")]);
}

/// "Single-Node Pool": a delete scores exactly 1.0 (all of the pool's cost, all of its
/// disruption) and passes; its pods go to a node outside the pool ("Cross-pool DELETEs require
/// scheduling simulation to confirm pods fit on the destination").
#[test]
fn balanced_single_node_pool_delete_scores_one() {
    let mut sc = balanced();
    node_with_pods(&mut sc, "only", XL, &[500; 3]);
    sc.push(unmanaged());
    sc.run("s23-designs2-balanced-single")
        .expect(&[("only", "delete/single")]);
}

/// "WhenEmpty … a node whose pods all have large negative `pod-deletion-cost` … qualifies as
/// 'empty'" (code: types.go `IsEmpty`: RescheduleDisruptionCost <= PerNodeBaseDisruptionCost;
/// emptiness.go). Under WhenEmpty such a node goes by emptiness; one default pod keeps it.
#[test]
fn when_empty_takes_a_node_whose_pods_cost_nothing_to_evict() {
    let scenario = |cost: Option<&str>| {
        let mut sc = Sc::new().catalog(m7i());
        sc.disruption("default")["consolidationPolicy"] = json!("WhenEmpty");
        node_with_pods(&mut sc, "x", XL, &[500, 500]);
        if let Some(cost) = cost {
            for p in ["x-p0", "x-p1"] {
                sc.pod_mut(p)["metadata"]["annotations"]
                    ["controller.kubernetes.io/pod-deletion-cost"] = json!(cost);
            }
        }
        sc.push(unmanaged());
        sc
    };
    scenario(Some("-2147483648"))
        .run("s23-designs2-when-empty-negative")
        .expect(&[("x", "delete/emptiness")]);
    scenario(None)
        .run("s23-designs2-when-empty-default")
        .expect(&[("x", "none")]);
}

/// The marginal move of "Marginal Move (rejected)" under `WhenEmptyOrUnderutilized` ("any
/// positive savings (k=+inf)"): replaced.
#[test]
fn when_empty_or_underutilized_takes_the_marginal_move() {
    let mut sc = marginal();
    sc.disruption("default")["consolidationPolicy"] = json!("WhenEmptyOrUnderutilized");
    sc.run("s23-designs2-underutilized-marginal")
        .expect(&[("x", "replace/single")]);
}

// ---------------------------------------------------------------------------------------------
// core designs/do-not-disrupt-grace-period.md (code: core v1.14.1 pkg/utils/pod/scheduling.go
// IsDoNotDisruptActive, parseDoNotDisrupt; pkg/controllers/state/statenode.go
// ValidateNodeDisruptable — the node's annotation blocks only when it is "true")
// ---------------------------------------------------------------------------------------------

/// The examples in one cluster: one node per annotation, each with one pod that an unmanaged
/// node has room for. Protected: "2h" started an hour ago (Example 1, within its window), "true"
/// started a day ago (Example 3). Not protected: "2h" started three hours ago (Example 1, after
/// the window), "30m" started 31 minutes ago (Example 4), and the "Invalid Values" — "forever",
/// "0s", "-1h" — "treated as if it doesn't have the do-not-disrupt annotation". A duration on
/// the Node (not the pod) does not block either: the node check compares with "true" only.
#[test]
fn do_not_disrupt_durations_count_from_the_pods_start() {
    let mut sc = Sc::new();
    let cases = [
        ("two-hours-young", "2h", "2024-06-24T11:00:00Z", true),
        ("indefinite", "true", "2024-06-23T12:00:00Z", true),
        ("two-hours-old", "2h", "2024-06-24T09:00:00Z", false),
        ("thirty-minutes", "30m", "2024-06-24T11:29:00Z", false),
        ("forever", "forever", "2024-06-24T11:59:00Z", false),
        ("zero", "0s", "2024-06-24T11:59:00Z", false),
        ("negative", "-1h", "2024-06-24T11:59:00Z", false),
    ];
    for (node, value, started, _) in cases {
        sc.node_with(node, "default", XL, &[("cpu", "3900m"), ("pods", "110")]);
        let pod = format!("{node}-p");
        sc.pod(&pod, node, "500m");
        let p = sc.pod_mut(&pod);
        p["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = json!(value);
        p["status"]["startTime"] = json!(started);
    }
    sc.node_with(
        "node-level",
        "default",
        XL,
        &[("cpu", "3900m"), ("pods", "110")],
    )
    .pod("node-level-p", "node-level", "500m")
    .annotate_node("node-level", "karpenter.sh/do-not-disrupt", "2h");
    sc.push(unmanaged());
    let sc = sc.catalog(m7i());
    let r = sc.run("s23-designs2-dnd-durations");
    for (node, value, _, protected) in cases {
        if protected {
            r.left_because(node, &["do-not-disrupt", value]);
        } else {
            assert_ne!(r.of(node), "none", "{node} ({value}): {:#}", r.doc);
        }
    }
    assert_ne!(r.of("node-level"), "none", "{:#}", r.doc);
}

// ---------------------------------------------------------------------------------------------
// Provisioning: `provision --dry-run -f - -o json --catalog FILE` on catalogs built here.
// ---------------------------------------------------------------------------------------------

/// Plans `objects` against `catalog` (written as `s23-designs2-{tag}.json`).
fn plan_with(tag: &str, catalog: Value, objects: Vec<Value>) -> Plan {
    let path = write_temp(
        &format!("s23-designs2-{tag}.json"),
        serde_json::to_string(&catalog).unwrap().as_bytes(),
    );
    let (code, json) = provision_json(&["--catalog", path.to_str().unwrap()], objects);
    Plan { code, json }
}

/// `provision --dry-run -f - -o json` on a `kind: List` of `items`, with `flags`.
fn dry_run(flags: &[&str], items: Vec<Value>) -> Run {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let mut args = vec!["provision", "--dry-run", "-f", "-", "-o", "json"];
    args.extend_from_slice(flags);
    karpenter(&args, list.to_string().as_bytes())
}

/// A catalog type (amd64, linux) of `cpu` CPUs and 4 GiB per CPU with these offerings.
fn shape(name: &str, cpu: u32, offerings: Vec<Value>) -> Value {
    json!({"name": name,
           "capacity": {"cpu": cpu.to_string(), "memory": format!("{}Gi", cpu * 4), "pods": "50"},
           "overhead": {"cpu": "100m", "memory": "10Mi"},
           "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
           "offerings": offerings})
}

fn reserved(id: &str, count: u32, kind: Option<&str>) -> Value {
    let mut o = json!({"zone": "test-zone-1", "capacityType": "reserved", "reservationId": id,
                       "count": count});
    if let Some(kind) = kind {
        o["reservationType"] = json!(kind);
    }
    o
}

/// The default class, selecting the reservations `ids`.
fn class_selecting(ids: &[&str]) -> Value {
    let mut c = sched_class();
    c["spec"]["capacityReservationSelectorTerms"] =
        ids.iter().map(|id| json!({ "id": id })).collect();
    c
}

/// A pool of these requirements (no limits), with the default class.
fn pool_of(requirements: Vec<Value>) -> Value {
    let mut p = sched_pool("default", requirements, json!({}));
    p["spec"].as_object_mut().unwrap().remove("limits");
    p
}

/// `count` 500m pods `p0…` labelled `app: web`, each refusing a node another has
/// (hostname anti-affinity): one NodeClaim each.
fn spread_pods(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            sized(
                &format!("p{i}"),
                json!({"cpu": "500m"}),
                json!({"metadata": {"labels": {"app": "web"}},
                       "spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                           {"topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}}}]}}}}),
            )
        })
        .collect()
}

/// (capacity type, reservation id) of each NodeClaim, sorted.
fn claim_kinds(plan: &Plan) -> Vec<(String, String)> {
    let mut kinds: Vec<(String, String)> = plan
        .claims()
        .iter()
        .map(|c| {
            (
                c["capacityType"].as_str().unwrap().to_string(),
                c["capacityReservationId"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    kinds.sort();
    kinds
}

/// core designs/capacity-reservations.md "Only launch nodes using reserved capacity", "…
/// falling back to on-demand", "… falling back to on-demand and spot" (and aws odcr.md's
/// NodePool API, the same three) with a reservation of one c5.large and three pods that each
/// need their own node — "the scheduler never schedules more offerings of an instance type for a
/// capacity type than are available" (code: core v1.14.1 pkg/controllers/provisioning/scheduling/
/// reservationmanager.go; aws v1.14.1 pkg/providers/instancetype/offering: reserved priced at
/// on-demand / 10,000,000): one reserved NodeClaim, the rest pending / on-demand / spot.
#[test]
fn capacity_reservations_are_used_first_and_never_over_their_count() {
    let catalog = || {
        json!({"instanceTypes": [shape("c5.large", 2, vec![
            offering("test-zone-1", "on-demand", 0.085, true),
            offering("test-zone-1", "spot", 0.0315, true),
            reserved("cr-1", 1, None)])]})
    };
    let with = |tag: &str, types: &[&str]| {
        let reqs = if types.is_empty() {
            vec![]
        } else {
            vec![req(CAPACITY_TYPE, "In", types)]
        };
        let mut objects = vec![pool_of(reqs), class_selecting(&["cr-1"])];
        objects.extend(spread_pods(3));
        plan_with(tag, catalog(), objects)
    };
    let reserved_one = ("reserved".to_string(), "cr-1".to_string());
    let only = with("reserved-only", &["reserved"]);
    assert_eq!(
        claim_kinds(&only),
        std::slice::from_ref(&reserved_one),
        "{:#}",
        only.json
    );
    assert_eq!(only.pending().len(), 2, "{:#}", only.json);
    let od = with("reserved-on-demand", &["on-demand", "reserved"]);
    let od_kinds = claim_kinds(&od);
    assert_eq!(od_kinds.len(), 3, "{:#}", od.json);
    assert_eq!(od_kinds[2], reserved_one);
    assert!(od_kinds[..2].iter().all(|(ct, _)| ct == "on-demand"));
    let all = with("reserved-all", &[]);
    let all_kinds = claim_kinds(&all);
    assert_eq!(all_kinds[0], reserved_one, "{:#}", all.json);
    assert!(all_kinds[1..].iter().all(|(ct, _)| ct == "spot"));
    assert_eq!(all_kinds.len(), 3);
}

/// aws designs/capacity-block-support.md: `capacity-reservation-type In [capacity-block]` on
/// the pool, or as a pod's node selector, takes the capacity block; a NodeClaim compatible with
/// both an ODCR and a capacity block at the same price — the design: "If there is a tie between
/// a default and capacity-block offering, we will prioritize the capacity-block offering". The
/// code (aws v1.14.1 pkg/providers/instance/filter/filter.go `capacityReservationTypeFilter`:
/// priorities default 0, capacity-block 1, interruptible default 2) takes the ODCR: doc and code
/// disagree, the test follows the code.
#[test]
fn capacity_blocks_by_selection_and_the_tie_goes_to_the_odcr() {
    let catalog = || {
        json!({"instanceTypes": [shape("p5.48xlarge", 192, vec![
            offering("test-zone-1", "on-demand", 98.32, true),
            reserved("cr-foo", 2, None),
            reserved("cr-bar", 2, Some("capacity-block"))])]})
    };
    let run = |tag: &str, requirements: Vec<Value>, selector: Value| {
        let pod = sized(
            "p0",
            json!({"cpu": "1"}),
            json!({"spec": {"nodeSelector": selector}}),
        );
        let objects = vec![
            pool_of(requirements),
            class_selecting(&["cr-foo", "cr-bar"]),
            pod,
        ];
        let plan = plan_with(tag, catalog(), objects);
        let c = plan.claim("p0").clone();
        (
            c["capacityReservationId"].as_str().unwrap().to_string(),
            c["labels"]["karpenter.k8s.aws/capacity-reservation-type"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let block_type = "karpenter.k8s.aws/capacity-reservation-type";
    assert_eq!(
        run(
            "block-pool",
            vec![req(block_type, "In", &["capacity-block"])],
            json!({})
        ),
        ("cr-bar".to_string(), "capacity-block".to_string())
    );
    assert_eq!(
        run("block-pod", vec![], json!({ block_type: "capacity-block" })),
        ("cr-bar".to_string(), "capacity-block".to_string())
    );
    assert_eq!(
        run(
            "block-tie",
            vec![req(CAPACITY_TYPE, "In", &["reserved"])],
            json!({})
        ),
        ("cr-foo".to_string(), "default".to_string())
    );
}

/// The provider's instance filtering at launch (aws v1.14.1 pkg/providers/instance/filter/
/// filter.go `SpotOfferingFilter`, test "should filter out spot offerings that are more
/// expensive than the cheapest on-demand offering"; instance.go `getCapacityType`): with spot
/// and on-demand allowed, a spot offering priced above the cheapest on-demand one is not used —
/// the NodeClaim launches on-demand where the capacity-type order alone (spot first) would take
/// the dearer spot; a spot offering below it is still taken.
#[test]
fn spot_priced_above_the_cheapest_on_demand_is_not_launched() {
    let plan_for = |tag: &str, types: Vec<Value>| {
        let objects = vec![
            pool_of(vec![req(CAPACITY_TYPE, "In", &["spot", "on-demand"])]),
            sched_class(),
            sized("p0", json!({"cpu": "1"}), json!({})),
        ];
        let plan = plan_with(tag, json!({ "instanceTypes": types }), objects);
        let c = plan.claim("p0").clone();
        (
            c["instanceType"].as_str().unwrap().to_string(),
            c["capacityType"].as_str().unwrap().to_string(),
        )
    };
    let od = |p: f64| offering("test-zone-1", "on-demand", p, true);
    let spot = |p: f64| offering("test-zone-1", "spot", p, true);
    assert_eq!(
        plan_for(
            "spot-above",
            vec![
                shape("a.large", 2, vec![od(0.10)]),
                shape("b.large", 2, vec![od(0.30), spot(0.15)]),
            ]
        ),
        ("a.large".to_string(), "on-demand".to_string())
    );
    assert_eq!(
        plan_for(
            "spot-below",
            vec![
                shape("a.large", 2, vec![od(0.10)]),
                shape("b.large", 2, vec![od(0.30), spot(0.09)]),
            ]
        ),
        ("b.large".to_string(), "spot".to_string())
    );
}

// ---------------------------------------------------------------------------------------------
// core designs/no-schedule-taint.md (v1: `karpenter.sh/disrupted:NoSchedule`, core v1.14.1
// pkg/apis/v1/taints.go; disruption/controller.go removes it from nodes neither queued nor
// deleting — "some nodes can be left tainted" by a restart)
// ---------------------------------------------------------------------------------------------

/// A node left tainted `karpenter.sh/disrupted:NoSchedule` by a controller that restarted
/// mid-action (not deleting): `consolidate` treats it as the controller does after its
/// clean-up — an ordinary candidate (empty: emptiness).
#[test]
fn a_node_left_tainted_disrupted_is_an_ordinary_candidate() {
    let mut sc = Sc::new();
    sc.nodes(2, MOST);
    sc.node_obj("n0")["spec"]["taints"] =
        json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    sc.run("s23-designs2-left-tainted")
        .expect(&[("n0", "delete/emptiness"), ("n1", "delete/emptiness")]);
}

// ---------------------------------------------------------------------------------------------
// core designs/static-capacity.md "Validation rules" (code: core v1.14.1 pkg/apis/v1/
// nodepool.go CEL: "only 'limits.nodes' is supported on static NodePools", "'weight' is not
// supported on static NodePools")
// ---------------------------------------------------------------------------------------------

/// "if replicas != nil: limits other than limits.nodes must not be set; weight must not be
/// set": bad input naming the field; `limits.nodes` and consolidation settings ("simply
/// ignored") are accepted and the two replicas planned.
#[test]
fn static_pools_refuse_weight_and_resource_limits() {
    let static_pool = |extra: Value| {
        let mut p = pool_of(vec![req(INSTANCE_TYPE, "In", &["c5.large"])]);
        p["spec"]["replicas"] = json!(2);
        merge(&mut p["spec"], extra);
        p
    };
    let catalog = json!({"instanceTypes": [shape("c5.large", 2, vec![
        offering("test-zone-1", "on-demand", 0.085, true)])]});
    let path = write_temp(
        "s23-designs2-static.json",
        serde_json::to_string(&catalog).unwrap().as_bytes(),
    );
    for (extra, field) in [
        (json!({"weight": 10}), "spec.weight"),
        (json!({"limits": {"cpu": "100"}}), "spec.limits.cpu"),
    ] {
        let run = dry_run(
            &["-q", "--catalog", path.to_str().unwrap()],
            vec![static_pool(extra), sched_class()],
        );
        assert_eq!(run.code, 2, "{field}: {}", run.stderr);
        assert!(run.stderr.contains(field), "{}", run.stderr);
    }
    let accepted = static_pool(json!({"limits": {"nodes": "4"},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1m"}}));
    let plan = plan_with("static-ok", catalog, vec![accepted, sched_class()]);
    assert_eq!(plan.claims().len(), 2, "{:#}", plan.json);
}

// ---------------------------------------------------------------------------------------------
// core designs/capacity-buffers.md (code: core v1.14.1 pkg/controllers/capacitybuffer,
// pkg/controllers/provisioning/buffers.go — registered only with the CapacityBuffer feature gate,
// off by default: pkg/operator/options/options.go, pkg/controllers/controllers.go)
// ---------------------------------------------------------------------------------------------

/// Example 3 ("Active Buffer with PodTemplate", 5 replicas of 4 CPU / 16Gi) beside one pending
/// pod: with the default gates Karpenter adds no virtual pods, so the plan is the pod's alone;
/// the buffer is listed as ignored (a note, `-v`), naming the gate (it was refused as an
/// unsupported kind).
#[test]
fn a_capacity_buffer_changes_no_plan_with_the_default_gates() {
    let template = json!({"apiVersion": "v1", "kind": "PodTemplate",
        "metadata": {"name": "batch-job-template", "namespace": "default"},
        "template": {"spec": {"containers": [{"name": "processor", "image": "batch-processor:v2",
            "resources": {"requests": {"cpu": "4", "memory": "16Gi"}}}]}}});
    let buffer = json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "batch-job-capacity", "namespace": "default"},
        "spec": {"provisioningStrategy": "buffer.x-k8s.io/active-capacity",
                 "podTemplateRef": {"name": "batch-job-template"}, "replicas": 5}});
    let items = vec![
        pool_of(vec![req(CAPACITY_TYPE, "In", &["on-demand"])]),
        sched_class(),
        template,
        buffer,
        sized("p0", json!({"cpu": "1"}), json!({})),
    ];
    let run = dry_run(&["-v", "--region", "us-east-1"], items);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let claims = plan["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{plan:#}");
    assert_eq!(claims[0]["pods"], json!(["default/p0"]));
    assert!(
        run.stderr.contains("CapacityBuffer/batch-job-capacity")
            && run
                .stderr
                .contains("CapacityBuffer feature gate (off by default)"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// core designs/in-place-pod-vertical-scaling.md Part 1 (code: core v1.14.1 pkg/utils/resources/
// resources.go Ceiling, `UseStatusResources: true`) and noderegistrationhealthy-status-
// condition.md (code: pkg/apis/v1/nodepool_status.go — not one of the NodePool's Ready
// conditions; the provisioner does not read it)
// ---------------------------------------------------------------------------------------------

/// Part 1's "Node-B (target): 8 vCPU, Pod-Z: spec.requests = 2 (resize down in progress,
/// allocated = 6) … Scheduler sees: used=6, free=2": a 3-CPU pod on a pool node cannot move to
/// Node-B while the kubelet still holds 6 (and no cheaper type holds it: the node stays); once
/// the resize is done (status 2) it moves and the node is deleted.
#[test]
fn a_resize_in_progress_holds_what_the_kubelet_holds() {
    let scenario = |held: &str| {
        let mut sc = balanced();
        sc.disruption("default")["consolidationPolicy"] = json!("WhenEmptyOrUnderutilized");
        node_with_pods(&mut sc, "x", XL, &[3000]);
        sc.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-b", "creationTimestamp": "2024-06-24T11:00:00Z",
                         "labels": {"kubernetes.io/hostname": "node-b", "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64"}},
            "spec": {"providerID": "aws:///test-zone-1/i-node-b"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "allocatable": {"cpu": "8", "pods": "100"}, "capacity": {"cpu": "8", "pods": "100"}}}));
        sc.pod("pod-z", "node-b", "2");
        sc.pod_mut("pod-z")["status"]["containerStatuses"] = json!([{"name": "c", "ready": true,
            "restartCount": 0, "image": "pause", "imageID": "", "state": {"running": {}},
            "resources": {"requests": {"cpu": held}}, "allocatedResources": {"cpu": held}}]);
        sc
    };
    scenario("6")
        .run("s23-designs2-resize-down")
        .expect(&[("x", "none")]);
    scenario("2")
        .run("s23-designs2-resize-done")
        .expect(&[("x", "delete/single")]);
}

/// "A NodePool marked with `NodeRegistrationHealthy: False` can still be used for provisioning
/// workloads, as this status isn't a precondition for readiness."
#[test]
fn a_pool_whose_registrations_failed_still_provisions() {
    let mut pool = pool_of(vec![req(CAPACITY_TYPE, "In", &["on-demand"])]);
    pool["status"] = json!({"conditions": [
        {"type": "Ready", "status": "True", "reason": "Ready", "message": "",
         "lastTransitionTime": "2024-06-24T11:00:00Z"},
        {"type": "NodeRegistrationHealthy", "status": "False", "reason": "RegistrationFailed",
         "message": "Failed to launch node", "lastTransitionTime": "2024-06-24T11:00:00Z"}]});
    let catalog = json!({"instanceTypes": [shape("c5.large", 2, vec![
        offering("test-zone-1", "on-demand", 0.085, true)])]});
    let plan = plan_with(
        "registration-unhealthy",
        catalog,
        vec![
            pool,
            sched_class(),
            sized("p0", json!({"cpu": "1"}), json!({})),
        ],
    );
    assert_eq!(plan.claim("p0")["nodePool"], "default", "{:#}", plan.json);
}

// ---------------------------------------------------------------------------------------------
// core designs/karpenter-integration-testing.md's DaemonSet list (the regression suite,
// core v1.14.1 test/suites/regression/integration_test.go "should account for LimitRange
// Default / DefaultRequest on daemonSet pods for resources"; code: provisioner.go
// getDaemonSetPods — the DaemonSet's admitted pod where there is one)
// ---------------------------------------------------------------------------------------------

/// A LimitRange of `default` (or `defaultRequest`) 2 CPU / 1Gi in `default`, a DaemonSet whose
/// container sets only a 1Gi memory limit, one Deployment pod requesting 4 bytes of memory: the
/// DaemonSet's pods and the Deployment's pod are admitted with 2 CPU each, and one node is
/// launched for both ("Eventually expect a single node … both … schedule to it").
/// Upstream It: "should account for LimitRange Default on daemonSet pods for resources".
/// Upstream It: "should account for LimitRange DefaultRequest on daemonSet pods for resources".
#[test]
fn limit_range_defaults_count_in_daemonset_overhead() {
    for item in ["default", "defaultRequest"] {
        let limit_range = json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "limitrange", "namespace": "default"},
            "spec": {"limits": [{"type": "Container", item: {"cpu": "2", "memory": "1Gi"}}]}});
        let daemonset = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "ds", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "ds"}},
                "template": {"metadata": {"labels": {"app": "ds"}},
                    "spec": {"containers": [{"name": "c", "image": "pause",
                        "resources": {"limits": {"memory": "1Gi"}}}]}}}});
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "large-app", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "large-app"}},
                "template": {"metadata": {"labels": {"app": "large-app"}},
                    "spec": {"containers": [{"name": "c", "image": "pause",
                        "resources": {"requests": {"memory": "4"}}}]}}}});
        let (code, plan) = provision_json(
            &["--region", "us-east-1"],
            vec![
                limit_range,
                daemonset,
                deployment,
                pool_of(vec![req(CAPACITY_TYPE, "In", &["on-demand"])]),
                sched_class(),
            ],
        );
        assert_eq!(code, 0, "{item}: {plan:#}");
        let claims = plan["nodeClaims"].as_array().unwrap();
        assert_eq!(claims.len(), 1, "{item}: {plan:#}");
        assert_eq!(claims[0]["requests"]["cpu"], "4", "{item}: {plan:#}");
    }
}

/// balanced-consolidation.md "Cross-NodePool: On-Demand and Spot": an on-demand pool of ten
/// xlarge ($4.84/day) and a spot pool of ten spot xlarge ($1.45/day), 80 pods each; the
/// on-demand node's 3 pods and (the document's second case) the spot node's 8 can go elsewhere.
/// Each pool is scored against its own totals ("Per-NodePool normalization"): on-demand 10 % of
/// its cost for (1 + 3) / 90 of its disruption, 2.25 (the document, without the per-node cost:
/// 2.67); spot 10 % for (1 + 8) / 90, 1.0 (the document: 1.0) — both approved, where totals
/// over the whole cluster would refuse the spot node (2.3 % of $/h for 5 % of disruption). With
/// room for both on one node, multi-node consolidation takes the two as one command, each pool
/// approving its share (`EvaluateBalancedMove`).
#[test]
fn balanced_pools_are_scored_against_their_own_totals() {
    const SPOT_XL: &str = "m7i.xlarge-spot";
    let mut catalog = m7i();
    let mut spot = fake_type(
        SPOT_XL,
        4,
        16,
        vec![offering("test-zone-1", "spot", 0.0604, true)],
    );
    spot["capacity"]["pods"] = json!("110");
    catalog["instanceTypes"].as_array_mut().unwrap().push(spot);
    let mut sc = balanced().catalog(catalog);
    let mut spot_pool = disruption_pool("spot");
    spot_pool["spec"]["disruption"]["consolidationPolicy"] = json!("Balanced");
    sc.push(spot_pool);
    for (pool, it, prefix) in [("default", XL, "od"), ("spot", SPOT_XL, "sp")] {
        let place = |sc: &mut Sc, name: &str, pods: &[u32]| {
            sc.node_with(name, pool, it, &[("cpu", "3900m"), ("pods", "110")]);
            for (i, m) in pods.iter().enumerate() {
                sc.pod(&format!("{name}-p{i}"), name, &format!("{m}m"));
            }
        };
        let on_demand = pool == "default";
        place(
            &mut sc,
            prefix,
            if on_demand { &[300; 3] } else { &[200; 8] },
        );
        for i in 0..9 {
            let name = format!("{prefix}-f{i}");
            // 80 pods in each pool; full nodes but the last on-demand one (2.9 CPU free).
            let pods = match (i, on_demand) {
                (8, true) => vec![200; 5],
                (_, true) => vec![422; 9],
                _ => vec![475; 8],
            };
            place(&mut sc, &name, &pods);
            sc.annotate_node(&name, "karpenter.sh/do-not-disrupt", "true");
        }
    }
    sc.run("s23-designs2-balanced-cross-pool")
        .expect(&[("od", "delete/multi"), ("sp", "delete/multi")]);
}
