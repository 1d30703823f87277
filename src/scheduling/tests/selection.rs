//! Instance type selection, mirroring Karpenter's
//! `core: pkg/controllers/provisioning/scheduling/instance_selection_test.go` ("Instance Type
//! Selection"): the cheapest compatible type is launched, every option handed to the launch obeys
//! the pool's and the pod's requirements, and `minValues` keeps enough distinct values.

use super::*;
use crate::model::instance_type::{InstanceType, Overhead};
use crate::model::labels::{ARCH, INSTANCE_TYPE, OS};
use crate::model::nodepool::NodePool;
use crate::model::requirements::{NodeSelectorRequirement, Operator, Requirement, Requirements};
use crate::model::resources::Resources;

/// Karpenter's `fake.NewInstanceType`: kube-reserved 100m CPU + 10Mi, 5 pods unless given,
/// `arch`, `oses`, and one requirement per extra (key, value).
pub(super) fn fake_type(
    name: &str,
    arch: &str,
    oses: &[&str],
    cpu: &str,
    memory: &str,
    offerings: Vec<Offering>,
    extra: &[(&str, &str)],
) -> InstanceType {
    let mut reqs = Requirements::new();
    reqs.add(Requirement::single(INSTANCE_TYPE, name));
    reqs.add(Requirement::single(ARCH, arch));
    reqs.add(Requirement::new(OS, In, oses.iter().map(|s| s.to_string())));
    let available = || offerings.iter().filter(|o| o.available);
    reqs.add(Requirement::new(
        ZONE,
        In,
        available().map(|o| o.zone.clone()),
    ));
    reqs.add(Requirement::new(
        CAPACITY_TYPE,
        In,
        available().map(|o| o.capacity_type.clone()),
    ));
    for (k, v) in extra {
        reqs.add(Requirement::single(k, v));
    }
    InstanceType {
        name: name.into(),
        requirements: reqs,
        capacity: Resources::from_pairs(&[("cpu", cpu), ("memory", memory), ("pods", "5")]),
        overhead: Overhead {
            kube_reserved: Resources::from_pairs(&[("cpu", "100m"), ("memory", "10Mi")]),
            ..Default::default()
        },
        offerings,
    }
}

/// One assorted type: its arch, OS, zone, capacity type and price.
struct Assorted {
    name: String,
    cpu: i64,
    mem: i64,
    arch: &'static str,
    os: &'static str,
    zone: &'static str,
    ct: &'static str,
    price: f64,
}

/// Karpenter's `fake.InstanceTypesAssorted()`: every (cpu, GiB, zone, capacity type, os, arch)
/// combination as a type with that single offering, priced `0.1 × vCPU + 0.1 × GB`.
fn assorted() -> Vec<Assorted> {
    let mut out = Vec::new();
    for cpu in [1, 2, 4, 8, 16, 32, 64] {
        for mem in [1, 2, 4, 8, 16, 32, 64, 128] {
            for zone in FAKE_ZONES {
                for ct in [SPOT, ON_DEMAND] {
                    for os in ["linux", "windows"] {
                        for arch in ["amd64", "arm64"] {
                            out.push(Assorted {
                                name: format!("{cpu}-cpu-{mem}-mem-{arch}-{os}-{zone}-{ct}"),
                                cpu,
                                mem,
                                arch,
                                os,
                                zone,
                                ct,
                                price: 0.1 * cpu as f64
                                    + 0.1 * (mem as f64 * 1024.0 * 1024.0 * 1024.0) / 1e9,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

fn to_types(assorted: &[Assorted]) -> Vec<InstanceType> {
    assorted
        .iter()
        .map(|a| {
            fake_type(
                &a.name,
                a.arch,
                &[a.os],
                &a.cpu.to_string(),
                &format!("{}Gi", a.mem),
                vec![offer(a.zone, a.ct, a.price)],
                &[],
            )
        })
        .collect()
}

/// The suite's NodePool: spot and on-demand, arm64 and amd64.
fn selection_pool() -> NodePool {
    let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &[SPOT, ON_DEMAND]);
    with_requirement(pool, ARCH, In, &["arm64", "amd64"])
}

/// What a pod or pool constrains, checked against each assorted type.
#[derive(Default, Clone, Copy)]
struct Want {
    arch: Option<&'static str>,
    os: Option<&'static str>,
    zone: Option<&'static str>,
    ct: Option<&'static str>,
}

impl Want {
    fn admits(&self, a: &Assorted) -> bool {
        self.arch.is_none_or(|v| v == a.arch)
            && self.os.is_none_or(|v| v == a.os)
            && self.zone.is_none_or(|v| v == a.zone)
            && self.ct.is_none_or(|v| v == a.ct)
    }
    fn terms(&self) -> Vec<(&'static str, Operator, [&'static str; 1])> {
        [
            (ARCH, self.arch),
            (OS, self.os),
            (ZONE, self.zone),
            (CAPACITY_TYPE, self.ct),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, In, [v])))
        .collect()
    }
}

/// Upstream's cheapest-instance cases: `pool` on the NodePool, `pod` as required node affinity.
/// The launch is at the cheapest price of the types both admit, and every option handed to the
/// launch is admitted by both.
fn expect_cheapest(case: &str, pool: Want, pod: Want) {
    let all = assorted();
    let mut np = selection_pool();
    for (k, op, v) in pool.terms() {
        np = with_requirement(np, k, op, &v);
    }
    let terms = pod.terms();
    let term: Vec<(&str, Operator, &[&str])> =
        terms.iter().map(|(k, op, v)| (*k, *op, &v[..])).collect();
    let mut builder = PodBuilder::new("p");
    if !term.is_empty() {
        builder = builder.required_term(&term);
    }
    let plan = solve(&input(
        vec![builder.build()],
        vec![pool_input(np, to_types(&all))],
    ));
    assert_eq!(
        plan.node_claims.len(),
        1,
        "{case}: {:?}",
        plan.unschedulable
    );
    let claim = &plan.node_claims[0];
    let admitted = |a: &Assorted| pool.admits(a) && pod.admits(a);
    let min = all
        .iter()
        .filter(|a| admitted(a))
        .map(|a| a.price)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(claim.launch.price, min, "{case}");
    for (name, zone, _) in claim.launch_offerings() {
        let a = all.iter().find(|a| a.name == name).unwrap();
        assert!(admitted(a) && a.zone == zone, "{case}: {name} in {zone}");
    }
    for o in claim.instance_types.iter() {
        let a = all.iter().find(|a| *a.name == *o.name).unwrap();
        assert!(admitted(a), "{case}: option {}", o.name);
    }
}

/// Upstream "should schedule on one of the cheapest instances" and its variants
/// "(pod arch = amd64)" … "(pod ct = spot/test-zone-2/amd64/linux)", 20 cases.
#[test]
fn the_cheapest_admitted_type_is_launched_and_every_option_is_admitted() {
    let none = Want::default();
    let w = |arch, os, zone, ct| Want { arch, os, zone, ct };
    let cases = [
        ("unconstrained", none, none),
        ("pod arch = amd64", none, w(Some("amd64"), None, None, None)),
        ("pod arch = arm64", none, w(Some("arm64"), None, None, None)),
        (
            "prov arch = amd64",
            w(Some("amd64"), None, None, None),
            none,
        ),
        (
            "prov arch = arm64",
            w(Some("arm64"), None, None, None),
            none,
        ),
        (
            "prov os = windows",
            w(None, Some("windows"), None, None),
            none,
        ),
        (
            "pod os = windows",
            none,
            w(None, Some("windows"), None, None),
        ),
        ("pod os = linux", none, w(None, Some("linux"), None, None)),
        ("prov os = linux", w(None, Some("linux"), None, None), none),
        (
            "prov zone = test-zone-2",
            w(None, None, Some("test-zone-2"), None),
            none,
        ),
        (
            "pod zone = test-zone-2",
            none,
            w(None, None, Some("test-zone-2"), None),
        ),
        ("prov ct = spot", w(None, None, None, Some(SPOT)), none),
        ("pod ct = spot", none, w(None, None, None, Some(SPOT))),
        (
            "prov ct = ondemand, prov zone = test-zone-1",
            w(None, None, Some("test-zone-1"), Some(ON_DEMAND)),
            none,
        ),
        (
            "pod ct = spot, pod zone = test-zone-1",
            none,
            w(None, None, Some("test-zone-1"), Some(SPOT)),
        ),
        (
            "prov ct = spot, pod zone = test-zone-2",
            w(None, None, None, Some(SPOT)),
            w(None, None, Some("test-zone-2"), None),
        ),
        (
            "prov ct = ondemand/test-zone-1/arm64/windows",
            w(
                Some("arm64"),
                Some("windows"),
                Some("test-zone-1"),
                Some(ON_DEMAND),
            ),
            none,
        ),
        (
            "prov = spot/test-zone-2, pod = amd64/linux",
            w(None, None, Some("test-zone-2"), Some(SPOT)),
            w(Some("amd64"), Some("linux"), None, None),
        ),
        (
            "pod ct = spot/test-zone-2/amd64/linux",
            none,
            w(
                Some("amd64"),
                Some("linux"),
                Some("test-zone-2"),
                Some(SPOT),
            ),
        ),
    ];
    for (case, pool, pod) in cases {
        expect_cheapest(case, pool, pod);
    }
}

/// Upstream "should not schedule if no instance type matches selector (pod arch = arm)",
/// "(pod arch = arm zone=test-zone-2)" and "(prov arch = arm / pod zone=test-zone-2)".
#[test]
fn no_type_matching_the_selector_leaves_the_pod_pending() {
    let all = assorted();
    let amd_only: Vec<Assorted> = assorted()
        .into_iter()
        .filter(|a| a.arch == "amd64")
        .collect();
    let no_arm_in_zone_2: Vec<Assorted> = all
        .into_iter()
        .filter(|a| a.zone != "test-zone-2" || a.arch == "amd64")
        .collect();
    let arm = PodBuilder::new("p").required_term(&[(ARCH, In, &["arm64"])]);
    let cases = [
        ("pod arch = arm", selection_pool(), arm.clone(), &amd_only),
        (
            "pod arch = arm zone=test-zone-2",
            selection_pool(),
            PodBuilder::new("p")
                .required_term(&[(ARCH, In, &["arm64"]), (ZONE, In, &["test-zone-2"])]),
            &no_arm_in_zone_2,
        ),
        (
            "prov arch = arm / pod zone=test-zone-2",
            with_requirement(node_pool("default"), ARCH, In, &["arm64"]),
            PodBuilder::new("p").required_term(&[(ZONE, In, &["test-zone-2"])]),
            &no_arm_in_zone_2,
        ),
    ];
    for (case, pool, pod, types) in cases {
        let plan = solve(&input(
            vec![pod.build()],
            vec![pool_input(pool, to_types(types))],
        ));
        assert!(plan.node_claims.is_empty(), "{case}");
        assert_eq!(plan.unschedulable.len(), 1, "{case}");
    }
}

/// Upstream "should schedule on an instance with enough resources": three identical pods always
/// share one NodeClaim, and every option's capacity exceeds their requests plus its overhead.
#[test]
fn every_option_has_room_for_the_pods_and_the_overhead() {
    let all = assorted();
    let types = to_types(&all);
    for cpu in ["100m", "1", "2", "2500m", "4", "8", "16"] {
        for mem in ["102Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi"] {
            let plan = super::super::solve(&input(
                pods(3, |i| {
                    PodBuilder::new(&format!("p{i}")).cpu(cpu).memory(mem)
                }),
                vec![pool_input(selection_pool(), types.clone())],
            ));
            assert_eq!(plan.node_claims.len(), 1, "{cpu}/{mem}");
            let claim = &plan.node_claims[0];
            for o in claim.instance_types.iter() {
                let t = types.iter().find(|t| t.name == *o.name).unwrap();
                let total = claim.requests.cpu + t.overhead.total().cpu;
                assert!(total < t.capacity.cpu, "{cpu}/{mem}: {}", o.name);
                let total = claim.requests.memory + t.overhead.total().memory;
                assert!(total < t.capacity.memory, "{cpu}/{mem}: {}", o.name);
            }
        }
    }
}

/// Upstream "should schedule on cheaper on-demand instance even when spot price ordering would
/// place other instance types first": an on-demand pool compares on-demand prices only.
#[test]
fn an_on_demand_pool_compares_on_demand_prices() {
    let t = |name: &str, on_demand: f64, spot: f64| {
        let offerings = vec![
            offer("test-zone-1a", ON_DEMAND, on_demand),
            offer("test-zone-1a", SPOT, spot),
        ];
        fake_type(name, "amd64", &["linux"], "1", "1Gi", offerings, &[])
    };
    let types = vec![t("test-instance1", 1.0, 0.2), t("test-instance2", 1.3, 0.1)];
    let pool = with_requirement(node_pool("default"), CAPACITY_TYPE, In, &[ON_DEMAND]);
    let plan = solve(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, types)],
    ));
    assert_eq!(plan.node_claims[0].launch.instance_type, "test-instance1");
}

const GENERATION: &str = "karpenter/numerical-value";

/// The minValues cases' types: arm64 Linux, one spot offering in `test-zone-1-spot`.
fn mv_type(
    name: &str,
    cpu: &str,
    price: f64,
    arch: &str,
    generation: Option<&str>,
) -> InstanceType {
    let extra: Vec<(&str, &str)> = generation.map(|g| (GENERATION, g)).into_iter().collect();
    fake_type(
        name,
        arch,
        &["linux"],
        cpu,
        &format!("{cpu}Gi"),
        vec![offer("test-zone-1-spot", SPOT, price)],
        &extra,
    )
}

fn mv_pool(reqs: &[(&str, Operator, &[&str], u32)]) -> NodePool {
    let mut pool = node_pool("default");
    for (k, op, v, min) in reqs {
        let mut r = NodeSelectorRequirement::new(k, *op, v);
        r.min_values = Some(*min);
        pool.requirements.push(r);
    }
    pool
}

/// Two pods of 0.9 CPU / 0.9Gi: together they only fit the bigger types.
fn mv_pods(f: impl Fn(PodBuilder) -> PodBuilder) -> Vec<crate::model::pod::Pod> {
    pods(2, |i| {
        f(PodBuilder::new(&format!("p{i}"))
            .cpu("900m")
            .memory("921Mi"))
    })
}

/// Both pods scheduled, on two NodeClaims, each keeping at least two types.
fn expect_split_over_two_types(case: &str, plan: &Plan) {
    assert!(
        plan.unschedulable.is_empty(),
        "{case}: {:?}",
        plan.unschedulable
    );
    assert_eq!(plan.node_claims.len(), 2, "{case}");
    for c in &plan.node_claims {
        assert!(
            c.instance_types.len() >= 2,
            "{case}: {:?}",
            c.instance_types
        );
    }
}

/// Upstream MinValues: "should schedule respecting the minValues from instance-type
/// requirements", "… in Gt operator", "… in Lt operator", "should schedule considering the max of
/// the minValues of In and NotIn operators …", "… of Gt and Lt operators.", "should schedule and
/// pick the max of minValues of InstanceTypes if multiple operators are used for the same
/// requirement." and "should schedule and respect multiple requirement keys with minValues".
#[test]
fn min_values_split_pods_rather_than_narrow_the_options() {
    let two = |a: f64, b: f64| {
        vec![
            mv_type("instance-type-1", "1", a, "arm64", None),
            mv_type("instance-type-2", "4", b, "arm64", None),
        ]
    };
    let gens = |sizes: &[(&str, &str)]| -> Vec<InstanceType> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, (cpu, g))| {
                mv_type(
                    &format!("instance-type-{}", i + 1),
                    cpu,
                    [0.52, 1.0, 1.2, 1.2][i],
                    "arm64",
                    Some(g),
                )
            })
            .collect()
    };
    let types_12 = &["instance-type-1", "instance-type-2"][..];
    let cases: Vec<(&str, NodePool, Vec<InstanceType>)> = vec![
        (
            "instance-type In, minValues 2",
            mv_pool(&[(INSTANCE_TYPE, In, types_12, 2)]),
            two(0.52, 1.0),
        ),
        (
            "Gt 2, minValues 2",
            mv_pool(&[(GENERATION, Gt, &["2"], 2)]),
            gens(&[("1", "2"), ("1", "3"), ("4", "4")]),
        ),
        (
            "Lt 4, minValues 2",
            mv_pool(&[(GENERATION, Lt, &["4"], 2)]),
            gens(&[("1", "2"), ("2", "3"), ("4", "4")]),
        ),
        (
            "In minValues 1 + NotIn minValues 2",
            mv_pool(&[
                (
                    INSTANCE_TYPE,
                    In,
                    &["instance-type-1", "instance-type-2", "instance-type-3"],
                    1,
                ),
                (INSTANCE_TYPE, NotIn, &["instance-type-3"], 2),
            ]),
            vec![
                mv_type("instance-type-1", "1", 0.52, "arm64", None),
                mv_type("instance-type-2", "2", 1.0, "arm64", None),
                mv_type("instance-type-3", "4", 1.2, "arm64", None),
            ],
        ),
        (
            "Gt 2 minValues 1 + Lt 5 minValues 2",
            mv_pool(&[(GENERATION, Gt, &["2"], 1), (GENERATION, Lt, &["5"], 2)]),
            gens(&[("1", "2"), ("1", "3"), ("4", "4"), ("4", "5")]),
        ),
        (
            "Exists minValues 1 + In minValues 2",
            mv_pool(&[
                (INSTANCE_TYPE, Exists, &[], 1),
                (INSTANCE_TYPE, In, types_12, 2),
            ]),
            two(0.52, 1.0),
        ),
        (
            "arch Exists minValues 2 + instance-type In minValues 1",
            mv_pool(&[(ARCH, Exists, &[], 2), (INSTANCE_TYPE, In, types_12, 1)]),
            vec![
                mv_type("instance-type-1", "1", 0.52, "arm64", None),
                mv_type("instance-type-2", "4", 1.0, "amd64", None),
            ],
        ),
    ];
    for (case, pool, types) in cases {
        let plan = solve(&input(mv_pods(|p| p), vec![pool_input(pool, types)]));
        expect_split_over_two_types(case, &plan);
    }
}

/// Upstream "scheduler should fail if the minValues in Gt operator is not satisfied", "… in Lt
/// operator is not satisfied", "schedule should fail if minimum number of InstanceTypes is not
/// met as per the minValues in the requirement" and "… after truncation".
#[test]
fn unmet_min_values_leave_the_pods_pending() {
    let gt = mv_pool(&[(GENERATION, Exists, &[], 2)]);
    let gt_types = vec![
        mv_type("instance-type-1", "1", 0.52, "arm64", Some("2")),
        mv_type("instance-type-2", "4", 1.0, "arm64", Some("3")),
    ];
    let plan = solve(&input(
        mv_pods(|p| p.required_term(&[(GENERATION, Gt, &["2"])])),
        vec![pool_input(gt, gt_types)],
    ));
    assert!(plan.node_claims.is_empty(), "Gt");
    for u in &plan.unschedulable {
        assert_eq!(u.reason.code(), ReasonCode::MinValuesUnmet, "{}", u.reason);
        assert!(u.reason.to_string().contains(GENERATION), "{}", u.reason);
    }

    let lt = mv_pool(&[(GENERATION, Lt, &["4"], 2)]);
    let lt_types = vec![
        mv_type("instance-type-1", "2", 0.52, "arm64", Some("2")),
        mv_type("instance-type-2", "4", 1.2, "arm64", Some("4")),
    ];
    let plan = solve(&input(mv_pods(|p| p), vec![pool_input(lt, lt_types)]));
    assert!(plan.node_claims.is_empty(), "Lt");
    assert_eq!(plan.unschedulable.len(), 2, "Lt");

    let ten: Vec<InstanceType> = fake_instance_types(10);
    let plan = solve(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(
            mv_pool(&[(INSTANCE_TYPE, Exists, &[], 11)]),
            ten,
        )],
    ));
    assert!(plan.node_claims.is_empty(), "11 of 10 types");

    let mut inp = input(
        mv_pods(|p| p),
        vec![pool_input(
            mv_pool(&[(
                INSTANCE_TYPE,
                In,
                &["instance-type-1", "instance-type-2"],
                2,
            )]),
            vec![
                mv_type("instance-type-1", "1", 0.52, "arm64", None),
                mv_type("instance-type-2", "4", 1.0, "arm64", None),
            ],
        )],
    );
    inp.options.max_instance_types = 1;
    let plan = solve(&inp);
    assert!(plan.node_claims.is_empty(), "truncated to 1");
    assert_eq!(plan.unschedulable.len(), 2, "truncated to 1");
}
