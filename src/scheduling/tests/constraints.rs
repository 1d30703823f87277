//! Node selectors, node affinity and instance-type compatibility, mirroring Karpenter's
//! `core: pkg/controllers/provisioning/scheduling/suite_test.go` ("Custom Constraints",
//! "Preferential Fallback", "Instance Type Compatibility", "Binpacking") against the fake cloud
//! provider's default instance types.
//!
//! The fake provider's own labels (`size`, `special`, `integer`) are well-known only in its
//! tests; here the AWS well-known keys play their parts: `instance-size` (small/large),
//! `instance-gpu-name` (the exotic label only large types have) and `instance-cpu` (the vCPU
//! count as an integer).

use super::selection::fake_type;
use super::*;
use crate::model::instance_type::InstanceType;
use crate::model::labels::{
    ARCH, INSTANCE_CPU, INSTANCE_GPU_NAME, INSTANCE_SIZE, INSTANCE_TYPE, OS,
};
use crate::model::nodepool::NodePool;
use crate::model::requirements::{Operator, Requirement};

const SIZE: &str = INSTANCE_SIZE;
const SPECIAL: &str = INSTANCE_GPU_NAME;
const INTEGER: &str = INSTANCE_CPU;

/// The fake's default offerings: spot in zones 1–2, on-demand in zones 1–3, one price.
fn default_offerings(price: f64) -> Vec<Offering> {
    let mut out: Vec<Offering> = FAKE_ZONES[..2]
        .iter()
        .map(|z| offer(z, SPOT, price))
        .collect();
    out.extend(FAKE_ZONES.iter().map(|z| offer(z, ON_DEMAND, price)));
    out
}

/// `fake.NewInstanceType` with the fake's size/exotic/integer labels.
fn fake_it(name: &str, arch: &str, oses: &[&str], cpu: i64, gib: i64, pods: &str) -> InstanceType {
    let price = 0.1 * cpu as f64 + 0.1 * (gib as f64 * 1024.0 * 1024.0 * 1024.0) / 1e9;
    let large = cpu > 4 && gib > 8;
    let cpu_s = cpu.to_string();
    let mut t = fake_type(
        name,
        arch,
        oses,
        &cpu_s,
        &format!("{gib}Gi"),
        default_offerings(price),
        &[
            (INTEGER, &cpu_s),
            (SIZE, if large { "large" } else { "small" }),
        ],
    );
    if large {
        t.requirements.add(Requirement::single(SPECIAL, "optional"));
    } else {
        t.requirements.add(Requirement::new(
            SPECIAL,
            DoesNotExist,
            Vec::<String>::new(),
        ));
    }
    t.capacity
        .set("pods", crate::model::quantity::parse_milli(pods).unwrap());
    t
}

const DEFAULT_OSES: [&str; 3] = ["darwin", "linux", "windows"];

/// The fake cloud provider's default instance types (`core: pkg/cloudprovider/fake/
/// cloudprovider.go` `GetInstanceTypes`).
pub(super) fn default_types() -> Vec<InstanceType> {
    let mut gpu_a = fake_it(
        "gpu-vendor-instance-type",
        "amd64",
        &DEFAULT_OSES,
        4,
        4,
        "5",
    );
    gpu_a.capacity.set("fake.com/vendor-a", 2000);
    let mut gpu_b = fake_it(
        "gpu-vendor-b-instance-type",
        "amd64",
        &DEFAULT_OSES,
        4,
        4,
        "5",
    );
    gpu_b.capacity.set("fake.com/vendor-b", 2000);
    for (t, add) in [(&mut gpu_a, 1.0), (&mut gpu_b, 1.0)] {
        for o in &mut t.offerings {
            o.price += add;
        }
    }
    vec![
        fake_it("default-instance-type", "amd64", &DEFAULT_OSES, 4, 4, "5"),
        fake_it("small-instance-type", "amd64", &DEFAULT_OSES, 2, 2, "5"),
        gpu_a,
        gpu_b,
        fake_it(
            "arm-instance-type",
            "arm64",
            &["darwin", "ios", "linux", "windows"],
            16,
            128,
            "5",
        ),
        fake_it(
            "single-pod-instance-type",
            "amd64",
            &DEFAULT_OSES,
            4,
            4,
            "1",
        ),
    ]
}

/// `fake.InstanceTypes(n)` with the fake's labels.
fn incrementing_types(n: i64) -> Vec<InstanceType> {
    (0..n)
        .map(|i| {
            let cpu = i + 1;
            let pods = (10 * cpu).to_string();
            fake_it(
                &format!("fake-it-{i}"),
                "amd64",
                &DEFAULT_OSES,
                cpu,
                2 * cpu,
                &pods,
            )
        })
        .collect()
}

type Term<'a> = &'a [(&'a str, Operator, &'a [&'a str])];

/// A pod with a node selector, one required term and one preferred term (each may be empty).
fn constrained(selector: &[(&str, &str)], required: Term, preferred: Term) -> PodBuilder {
    let mut b = PodBuilder::new("p");
    for (k, v) in selector {
        b = b.node_selector(k, v);
    }
    if !required.is_empty() {
        b = b.required_term(required);
    }
    if !preferred.is_empty() {
        b = b.preferred_term(1, preferred);
    }
    b
}

/// Solves one pod against `pool` and the default types; `expect`: `None` = not scheduled,
/// `Some(pairs)` = scheduled on a NodeClaim whose node labels include `pairs`.
fn expect_one(
    case: &str,
    pool: NodePool,
    types: Vec<InstanceType>,
    pod: PodBuilder,
    expect: Option<&[(&str, &str)]>,
) {
    let plan = solve(&input(vec![pod.build()], vec![pool_input(pool, types)]));
    match expect {
        None => {
            assert!(
                plan.node_claims.is_empty(),
                "{case}: {:?}",
                plan.node_claims[0].labels
            );
            assert_eq!(plan.unschedulable.len(), 1, "{case}");
        }
        Some(pairs) => {
            assert_eq!(
                plan.node_claims.len(),
                1,
                "{case}: {:?}",
                plan.unschedulable
            );
            for (k, v) in pairs {
                assert_eq!(
                    value_of(&plan.node_claims[0], k).as_deref(),
                    Some(*v),
                    "{case}: {k}"
                );
            }
        }
    }
}

/// What the node will say for `key`: its label, or the one value the NodeClaim's requirements
/// leave (well-known labels such as the OS are the kubelet's to set, not the NodeClaim's).
fn value_of(claim: &PlannedNodeClaim, key: &str) -> Option<String> {
    if let Some(v) = claim.labels.get(key) {
        return Some(v.clone());
    }
    let r = claim.all_requirements().get(key);
    (r.operator() == In && r.values().len() == 1).then(|| r.values().iter().next().cloned())?
}

fn zones(pool: NodePool, z: &[&str]) -> NodePool {
    with_requirement(pool, ZONE, In, z)
}

/// Upstream "Custom Constraints" › "NodePool with Labels" (5 cases), "Well Known Labels"
/// (17 cases) and "Scheduling Logic" (the operator cases); each context appears twice upstream
/// with the same cases.
#[test]
fn custom_and_well_known_constraints() {
    let mut labelled = node_pool("default");
    labelled.labels = labels_of(&[("test-key", "test-value")]);
    let np = || node_pool("default");
    let z123 = &["test-zone-1", "test-zone-2", "test-zone-3", "unknown"][..];
    type Case<'a> = (
        &'a str,
        NodePool,
        PodBuilder,
        Option<&'a [(&'a str, &'a str)]>,
    );
    let cases: Vec<Case> = vec![
        (
            "should schedule unconstrained pods that don't have matching node selectors",
            labelled.clone(),
            PodBuilder::new("p"),
            Some(&[("test-key", "test-value")]),
        ),
        (
            "should not schedule pods that have conflicting node selectors",
            labelled.clone(),
            constrained(&[("test-key", "different-value")], &[], &[]),
            None,
        ),
        (
            "should not schedule pods that have node selectors with undefined key",
            np(),
            constrained(&[("test-key", "test-value")], &[], &[]),
            None,
        ),
        (
            "should schedule pods that have matching requirements",
            labelled.clone(),
            constrained(&[], &[("test-key", In, &["test-value", "another-value"])], &[]),
            Some(&[("test-key", "test-value")]),
        ),
        (
            "should not schedule pods that have conflicting requirements",
            labelled.clone(),
            constrained(&[], &[("test-key", In, &["another-value"])], &[]),
            None,
        ),
        (
            "should use NodePool constraints",
            zones(np(), &["test-zone-2"]),
            PodBuilder::new("p"),
            Some(&[(ZONE, "test-zone-2")]),
        ),
        (
            "should use node selectors",
            zones(np(), &["test-zone-1", "test-zone-2"]),
            constrained(&[(ZONE, "test-zone-2")], &[], &[]),
            Some(&[(ZONE, "test-zone-2")]),
        ),
        (
            "should not schedule nodes with a hostname selector",
            np(),
            constrained(&[(HOSTNAME, "red-node")], &[], &[]),
            None,
        ),
        (
            "should not schedule the pod if nodeselector unknown",
            zones(np(), &["test-zone-1"]),
            constrained(&[(ZONE, "unknown")], &[], &[]),
            None,
        ),
        (
            "should not schedule if node selector outside of NodePool constraints",
            zones(np(), &["test-zone-1"]),
            constrained(&[(ZONE, "test-zone-2")], &[], &[]),
            None,
        ),
        (
            "should schedule compatible requirements with Operator=In",
            np(),
            constrained(&[], &[(ZONE, In, &["test-zone-3"])], &[]),
            Some(&[(ZONE, "test-zone-3")]),
        ),
        (
            "should not schedule incompatible preferences and requirements with Operator=In",
            np(),
            constrained(&[], &[(ZONE, In, &["unknown"])], &[]),
            None,
        ),
        (
            "should schedule compatible requirements with Operator=NotIn",
            np(),
            constrained(
                &[],
                &[(ZONE, NotIn, &["test-zone-1", "test-zone-2", "unknown"])],
                &[],
            ),
            Some(&[(ZONE, "test-zone-3")]),
        ),
        (
            "should not schedule incompatible preferences and requirements with Operator=NotIn",
            np(),
            constrained(&[], &[(ZONE, NotIn, z123)], &[]),
            None,
        ),
        (
            "should schedule compatible preferences and requirements with Operator=In",
            np(),
            constrained(
                &[],
                &[(ZONE, In, z123)],
                &[(ZONE, In, &["test-zone-2", "unknown"])],
            ),
            Some(&[(ZONE, "test-zone-2")]),
        ),
        (
            "should schedule incompatible preferences and requirements with Operator=In",
            np(),
            constrained(&[], &[(ZONE, In, z123)], &[(ZONE, In, &["unknown"])]),
            Some(&[]),
        ),
        (
            "should schedule compatible preferences and requirements with Operator=NotIn",
            np(),
            constrained(
                &[],
                &[(ZONE, In, z123)],
                &[(ZONE, NotIn, &["test-zone-1", "test-zone-3"])],
            ),
            Some(&[(ZONE, "test-zone-2")]),
        ),
        (
            "should schedule incompatible preferences and requirements with Operator=NotIn",
            np(),
            constrained(&[], &[(ZONE, In, z123)], &[(ZONE, NotIn, &z123[..3])]),
            Some(&[]),
        ),
        (
            "should schedule compatible node selectors, preferences and requirements",
            np(),
            constrained(
                &[(ZONE, "test-zone-3")],
                &[(ZONE, In, &z123[..3])],
                &[(ZONE, In, &z123[..3])],
            ),
            Some(&[(ZONE, "test-zone-3")]),
        ),
        (
            "should combine multidimensional node selectors, preferences and requirements",
            np(),
            constrained(
                &[(ZONE, "test-zone-3"), (INSTANCE_TYPE, "arm-instance-type")],
                &[
                    (ZONE, In, &["test-zone-1", "test-zone-3"]),
                    (INSTANCE_TYPE, In, &["default-instance-type", "arm-instance-type"]),
                ],
                &[(ZONE, NotIn, &["unknown"]), (INSTANCE_TYPE, NotIn, &["unknown"])],
            ),
            Some(&[(ZONE, "test-zone-3"), (INSTANCE_TYPE, "arm-instance-type")]),
        ),
        // "Scheduling Logic"
        (
            "should not schedule pods that have node selectors with In operator and undefined key",
            np(),
            constrained(&[], &[("test-key", In, &["test-value"])], &[]),
            None,
        ),
        (
            "should schedule pods that have node selectors with NotIn operator and undefined key",
            np(),
            constrained(&[], &[("test-key", NotIn, &["test-value"])], &[]),
            Some(&[]),
        ),
        (
            "should not schedule pods that have node selectors with Exists operator and undefined key",
            np(),
            constrained(&[], &[("test-key", Exists, &[])], &[]),
            None,
        ),
        (
            "should schedule pods that with DoesNotExists operator and undefined key",
            np(),
            constrained(&[], &[("test-key", DoesNotExist, &[])], &[]),
            Some(&[]),
        ),
        (
            "should schedule pods that have node selectors with matching value and In operator",
            labelled.clone(),
            constrained(&[], &[("test-key", In, &["test-value"])], &[]),
            Some(&[("test-key", "test-value")]),
        ),
        (
            "should not schedule pods that have node selectors with matching value and NotIn operator",
            labelled.clone(),
            constrained(&[], &[("test-key", NotIn, &["test-value"])], &[]),
            None,
        ),
        (
            "should schedule the pod with Exists operator and defined key",
            labelled.clone(),
            constrained(&[], &[("test-key", Exists, &[])], &[]),
            Some(&[("test-key", "test-value")]),
        ),
        (
            "should not schedule the pod with DoesNotExists operator and defined key",
            labelled.clone(),
            constrained(&[], &[("test-key", DoesNotExist, &[])], &[]),
            None,
        ),
        (
            "should not schedule pods that have node selectors with different value and In operator",
            labelled.clone(),
            constrained(&[], &[("test-key", In, &["another-value"])], &[]),
            None,
        ),
        (
            "should schedule pods that have node selectors with different value and NotIn operator",
            labelled.clone(),
            constrained(&[], &[("test-key", NotIn, &["another-value"])], &[]),
            Some(&[("test-key", "test-value")]),
        ),
        (
            "Exists operator should not overwrite the existing value",
            np(),
            constrained(
                &[],
                &[(ZONE, In, &["non-existent-zone"]), (ZONE, Exists, &[])],
                &[],
            ),
            None,
        ),
    ];
    for (case, pool, pod, expect) in cases {
        expect_one(case, pool, default_types(), pod, expect);
    }
    // "should schedule compatible requirements with Operator=Gt|Lt|Gte|Lte" on the vCPU count.
    for (op, bound, want) in [
        (Gt, "8", "16"),
        (Lt, "8", "2"),
        (Gte, "16", "16"),
        (Lte, "2", "2"),
    ] {
        let pool = with_requirement(np(), INTEGER, op, &[bound]);
        let case = format!("Operator={op}");
        expect_one(
            &case,
            pool,
            default_types(),
            PodBuilder::new("p"),
            Some(&[(INTEGER, want)]),
        );
    }
}

/// Upstream "Scheduling Logic": "should schedule compatible pods to the same node" and "should
/// schedule incompatible pods to the different node".
#[test]
fn compatible_pods_share_a_node_and_incompatible_ones_do_not() {
    let mut pool = node_pool("default");
    pool.labels = labels_of(&[("test-key", "test-value")]);
    let pool = with_requirement(pool, "another-key", In, &["test-value", "another-value"]);
    let plan = solve(&input(
        vec![
            PodBuilder::new("a")
                .node_selector("test-key", "test-value")
                .build(),
            PodBuilder::new("b")
                .node_selector("test-key", "test-value")
                .build(),
        ],
        vec![pool_input(pool.clone(), default_types())],
    ));
    assert_eq!(plan.node_claims.len(), 1);
    let plan = solve(&input(
        vec![
            PodBuilder::new("a")
                .node_selector("another-key", "test-value")
                .build(),
            PodBuilder::new("b")
                .node_selector("another-key", "another-value")
                .build(),
        ],
        vec![pool_input(pool, default_types())],
    ));
    assert_eq!(plan.node_claims.len(), 2);
    let values: Vec<&str> = plan
        .node_claims
        .iter()
        .map(|c| c.labels["another-key"].as_str())
        .collect();
    assert_eq!(values.len(), 2);
    assert_ne!(values[0], values[1]);
}

/// Upstream "Constraints Validation": restricted labels and domains are refused; labels in the
/// kubernetes.io / k8s.io domains and their subdomains are not restricted (since Karpenter v1.10,
/// `core: pkg/apis/v1/labels.go` `RestrictedLabelDomains` is `karpenter.sh` only) and a pool
/// requirement on one labels the node; well-known labels schedule.
#[test]
fn constraints_validation() {
    for key in [HOSTNAME, "karpenter.sh/test", "sub.karpenter.sh/test"] {
        let pod = constrained(&[], &[(key, In, &["test"])], &[]);
        expect_one(key, node_pool("default"), default_types(), pod, None);
    }
    for key in [
        "kubernetes.io/test",
        "k8s.io/test",
        "subdomain.kubernetes.io/test",
        "subdomain.k8s.io/test",
    ] {
        let pool = with_requirement(node_pool("default"), key, In, &["test-value"]);
        let plan = solve(&input(
            vec![PodBuilder::new("p").build()],
            vec![pool_input(pool, default_types())],
        ));
        assert_eq!(
            plan.node_claims[0].labels.get(key).map(String::as_str),
            Some("test-value"),
            "{key}"
        );
    }
    for (k, v) in [
        (ZONE, "test-zone-1"),
        (INSTANCE_TYPE, "default-instance-type"),
        (ARCH, "arm64"),
        (OS, "linux"),
        (CAPACITY_TYPE, "spot"),
    ] {
        let pod = constrained(&[(k, v)], &[], &[]);
        expect_one(
            k,
            node_pool("default"),
            default_types(),
            pod,
            Some(&[(k, v)]),
        );
    }
}

/// Upstream "Preferential Fallback" › "Required": "should not relax the final term" and "should
/// relax multiple terms"; › "Preferred": "should relax all terms", "should relax to use lighter
/// weights", "should schedule even if preference is conflicting with requirement" and "should
/// schedule even if preference requirements are conflicting".
#[test]
fn preferential_fallback() {
    let pool = || {
        let p = with_requirement(
            node_pool("default"),
            ZONE,
            In,
            &["test-zone-1", "test-zone-2"],
        );
        with_requirement(p, INSTANCE_TYPE, In, &["default-instance-type"])
    };
    // Required: the last term is never relaxed.
    let pod = PodBuilder::new("p")
        .required_term(&[(ZONE, In, &["invalid"])])
        .required_term(&[(ZONE, In, &["invalid"])]);
    expect_one(
        "should not relax the final term",
        pool(),
        default_types(),
        pod,
        None,
    );
    let pod = PodBuilder::new("p")
        .required_term(&[(ZONE, In, &["invalid"])])
        .required_term(&[(ZONE, In, &["invalid"])])
        .required_term(&[(ZONE, In, &["test-zone-1"])])
        .required_term(&[(ZONE, In, &["test-zone-2"])]);
    expect_one(
        "should relax multiple terms",
        pool(),
        default_types(),
        pod,
        Some(&[(ZONE, "test-zone-1")]),
    );
    // Preferred.
    let pod = PodBuilder::new("p")
        .preferred_term(1, &[(ZONE, In, &["invalid"])])
        .preferred_term(1, &[(ZONE, In, &["invalid"])]);
    expect_one(
        "should relax all terms",
        pool(),
        default_types(),
        pod,
        Some(&[]),
    );
    let pod = PodBuilder::new("p")
        .preferred_term(100, &[(ZONE, In, &["test-zone-3"])])
        .preferred_term(50, &[(ZONE, In, &["test-zone-2"])])
        .preferred_term(1, &[(ZONE, In, &["test-zone-1"])]);
    expect_one(
        "should relax to use lighter weights",
        pool(),
        default_types(),
        pod,
        Some(&[(ZONE, "test-zone-2")]),
    );
    let pod = PodBuilder::new("p")
        .required_term(&[(ZONE, NotIn, &["test-zone-3"])])
        .preferred_term(1, &[(ZONE, In, &["test-zone-3"])]);
    expect_one(
        "should schedule even if preference is conflicting with requirement",
        pool(),
        default_types(),
        pod,
        Some(&[]),
    );
    let pod = PodBuilder::new("p")
        .preferred_term(1, &[(ZONE, In, &["invalid"]), (ZONE, NotIn, &["invalid"])]);
    expect_one(
        "should schedule even if preference requirements are conflicting",
        pool(),
        default_types(),
        pod,
        Some(&[]),
    );
}

/// Upstream "Instance Type Compatibility": pods of different archs, operating systems, instance
/// type selectors and zones go to different NodeClaims; resources no single type has are
/// refused; pod and pool constraints exclude types.
#[test]
fn instance_type_compatibility() {
    let np = || node_pool("default");
    // "should not schedule if requesting more resources than any instance type has"
    let pod = PodBuilder::new("p").cpu("512");
    expect_one("more than any type", np(), default_types(), pod, None);
    // "should launch pods with different archs on different instances"
    let two = |a: PodBuilder, b: PodBuilder| {
        solve(&input(
            vec![a.build(), b.build()],
            vec![pool_input(
                with_requirement(np(), ARCH, In, &["amd64", "arm64"]),
                default_types(),
            )],
        ))
    };
    for (case, key, x, y) in [
        ("archs", ARCH, "amd64", "arm64"),
        ("operating systems", OS, "linux", "windows"),
        (
            "instance type node selectors",
            INSTANCE_TYPE,
            "small-instance-type",
            "default-instance-type",
        ),
        ("zone selectors", ZONE, "test-zone-1", "test-zone-2"),
    ] {
        let plan = two(
            PodBuilder::new("a").node_selector(key, x),
            PodBuilder::new("b").node_selector(key, y),
        );
        assert_eq!(
            plan.node_claims.len(),
            2,
            "different {case}: {:?}",
            plan.unschedulable
        );
        let got: Vec<String> = plan
            .node_claims
            .iter()
            .filter_map(|c| value_of(c, key))
            .collect();
        assert!(
            got.contains(&x.to_string()) && got.contains(&y.to_string()),
            "{case}: {got:?}"
        );
    }
    // "should exclude instance types that are not supported by the pod constraints (node
    // affinity/instance type)": a pod asking for arm-instance-type gets it and only it.
    let pod = constrained(&[], &[(INSTANCE_TYPE, In, &["arm-instance-type"])], &[]);
    let plan = solve(&input(
        vec![pod.build()],
        vec![pool_input(np(), default_types())],
    ));
    let names: Vec<&str> = plan.node_claims[0]
        .instance_types
        .iter()
        .map(|o| &*o.name)
        .collect();
    assert_eq!(names, ["arm-instance-type"]);
    // "(node affinity/operating system)": only arm-instance-type offers ios.
    let pod = constrained(&[], &[(OS, In, &["ios"])], &[]);
    let plan = solve(&input(
        vec![pod.build()],
        vec![pool_input(np(), default_types())],
    ));
    let names: Vec<&str> = plan.node_claims[0]
        .instance_types
        .iter()
        .map(|o| &*o.name)
        .collect();
    assert_eq!(names, ["arm-instance-type"]);
    // "should exclude instance types that are not supported by the provider constraints (arch)"
    let pool = with_requirement(np(), ARCH, In, &["arm64"]);
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("2").build()],
        vec![pool_input(pool, default_types())],
    ));
    let names: Vec<&str> = plan.node_claims[0]
        .instance_types
        .iter()
        .map(|o| &*o.name)
        .collect();
    assert_eq!(names, ["arm-instance-type"]);
    // "should launch pods with resources that aren't on any single instance type on different
    // instances"
    let plan = solve(&input(
        vec![
            PodBuilder::new("a")
                .request("fake.com/vendor-a", "1")
                .build(),
            PodBuilder::new("b")
                .request("fake.com/vendor-b", "1")
                .build(),
        ],
        vec![pool_input(np(), default_types())],
    ));
    assert_eq!(plan.node_claims.len(), 2);
    // "should fail to schedule a pod with resources requests that aren't on a single instance type"
    let pod = PodBuilder::new("p")
        .request("fake.com/vendor-a", "1")
        .request("fake.com/vendor-b", "1");
    expect_one("vendor-a and vendor-b", np(), default_types(), pod, None);
}

/// Upstream "Instance Type Compatibility" › "Provider Specific Labels" (4 cases), against
/// `fake.InstanceTypes(5)`.
#[test]
fn provider_specific_labels() {
    let np = || node_pool("default");
    let types = || incrementing_types(5);
    let plan = solve(&input(
        vec![
            PodBuilder::new("a").node_selector(SIZE, "large").build(),
            PodBuilder::new("b").node_selector(SIZE, "small").build(),
        ],
        vec![pool_input(np(), types())],
    ));
    let by_pod: BTreeMap<&str, &str> = plan
        .node_claims
        .iter()
        .map(|c| (c.pods[0].as_str(), c.launch.instance_type.as_str()))
        .collect();
    assert_eq!(
        by_pod["default/a"], "fake-it-4",
        "should filter instance types that match labels"
    );
    assert_eq!(by_pod["default/b"], "fake-it-0");
    let plan = solve(&input(
        vec![
            PodBuilder::new("a")
                .node_selector(SIZE, "large")
                .node_selector(INSTANCE_TYPE, "fake-it-0")
                .build(),
            PodBuilder::new("b")
                .node_selector(SIZE, "small")
                .node_selector(INSTANCE_TYPE, "fake-it-4")
                .build(),
        ],
        vec![pool_input(np(), types())],
    ));
    assert!(
        plan.node_claims.is_empty(),
        "should not schedule with incompatible labels"
    );
    let pod = constrained(&[], &[(SPECIAL, Exists, &[])], &[]);
    expect_one(
        "should schedule optional labels",
        np(),
        types(),
        pod,
        Some(&[(INSTANCE_TYPE, "fake-it-4"), (SPECIAL, "optional")]),
    );
    let pod = constrained(&[], &[(SPECIAL, DoesNotExist, &[])], &[]);
    let plan = solve(&input(vec![pod.build()], vec![pool_input(np(), types())]));
    assert!(
        !plan.node_claims[0].labels.contains_key(SPECIAL),
        "should schedule without optional labels if disallowed"
    );
}

/// Upstream "Binpacking": "should schedule a small pod on the smallest instance", "… on the
/// smallest possible instance type", "should schedule multiple small pods on the smallest
/// possible instance type", "should create new nodes when a node is at capacity", "should pack
/// small and large pods together", "should handle zero-quantity resource requests", "should not
/// schedule pods that exceed every instance type's capacity" and "should create new nodes when
/// a node is at capacity due to pod limits per node".
#[test]
fn binpacking() {
    let np = || node_pool("default");
    let solve_pods = |pods: Vec<crate::model::pod::Pod>, types: Vec<InstanceType>| {
        solve(&input(pods, vec![pool_input(np(), types)]))
    };
    let plan = solve_pods(
        vec![PodBuilder::new("p").memory("100M").build()],
        default_types(),
    );
    assert_eq!(
        plan.node_claims[0].launch.instance_type,
        "small-instance-type"
    );
    let plan = solve_pods(
        vec![PodBuilder::new("p").memory("2000M").build()],
        default_types(),
    );
    assert_eq!(
        plan.node_claims[0].launch.instance_type, "small-instance-type",
        "1907Mi fits in 2038Mi"
    );
    let plan = solve_pods(
        pods(5, |i| PodBuilder::new(&format!("p{i}")).memory("10M")),
        default_types(),
    );
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(
        plan.node_claims[0].launch.instance_type,
        "small-instance-type"
    );
    // At capacity: two 1.8G pods per default-instance-type (amd64 only), 20 nodes.
    let amd = |name: &str, mem: &str| {
        PodBuilder::new(name)
            .node_selector(ARCH, "amd64")
            .memory(mem)
    };
    let plan = solve_pods(pods(40, |i| amd(&format!("p{i}"), "1.8G")), default_types());
    assert_eq!(plan.node_claims.len(), 20);
    assert!(plan
        .node_claims
        .iter()
        .all(|c| c.launch.instance_type == "default-instance-type"));
    // Small and large pods: each node's room left by two large pods takes one small pod.
    let mut both = pods(40, |i| amd(&format!("large{i}"), "1.8G"));
    both.extend(pods(20, |i| amd(&format!("small{i}"), "400M")));
    let plan = solve_pods(both, default_types());
    assert_eq!(plan.node_claims.len(), 20);
    assert!(plan
        .node_claims
        .iter()
        .all(|c| c.launch.instance_type == "default-instance-type"));
    // Zero-quantity requests are ignored.
    let plan = solve_pods(
        vec![PodBuilder::new("p")
            .request("foo.com/weird-resources", "0")
            .build()],
        default_types(),
    );
    assert_eq!(plan.node_claims.len(), 1);
    // Beyond every type.
    let plan = solve_pods(
        vec![PodBuilder::new("p").memory("2Ti").build()],
        default_types(),
    );
    assert!(plan.node_claims.is_empty());
    // Pod limits per node: 25 tiny pods, 5 per small-instance-type.
    let plan = solve_pods(
        pods(25, |i| amd(&format!("p{i}"), "1m").cpu("1m")),
        default_types(),
    );
    assert_eq!(plan.node_claims.len(), 5);
    assert!(plan
        .node_claims
        .iter()
        .all(|c| c.launch.instance_type == "small-instance-type"));
    // "should pack nodes tightly": 4.5 CPU and 1 CPU get different types.
    let plan = solve_pods(
        vec![
            PodBuilder::new("a").cpu("4500m").build(),
            PodBuilder::new("b").cpu("1").build(),
        ],
        incrementing_types(5),
    );
    assert_eq!(plan.node_claims.len(), 2);
    assert_ne!(
        plan.node_claims[0].launch.instance_type,
        plan.node_claims[1].launch.instance_type
    );
}

/// Upstream "Binpacking" › "should select for valid instance types, regardless of price": sizes
/// and prices do not correlate; every type is kept as an option and the cheapest launched.
#[test]
fn every_valid_type_is_an_option_and_the_cheapest_is_launched() {
    let t = |name, cpu, price| {
        fake_type(
            name,
            "amd64",
            &DEFAULT_OSES,
            cpu,
            &format!("{cpu}Gi"),
            vec![offer("test-zone-1a", ON_DEMAND, price)],
            &[],
        )
    };
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("1m").memory("1Mi").build()],
        vec![pool_input(
            node_pool("default"),
            vec![
                t("medium", "2", 3.0),
                t("small", "1", 2.0),
                t("large", "4", 1.0),
            ],
        )],
    ));
    assert_eq!(plan.node_claims[0].launch.instance_type, "large");
    let mut names: Vec<&str> = plan.node_claims[0]
        .instance_types
        .iter()
        .map(|o| &*o.name)
        .collect();
    names.sort();
    assert_eq!(names, ["large", "medium", "small"]);
}

/// Upstream `provisioning/suite_test.go` "Multiple NodePools": "should not match NodePool with
/// PreferNoSchedule taint when other NodePool match" (the soft taint is only tolerated once
/// nothing else is left to relax), "should schedule to the nodepool with the highest priority
/// always" and "should schedule to explicitly selected nodepool even if other nodePools are
/// higher priority".
#[test]
fn multiple_node_pools() {
    let mut tainted = node_pool("z-tainted");
    tainted
        .taints
        .push(taint("foo", "bar", Effect::PreferNoSchedule));
    let plan = solve(&input(
        vec![PodBuilder::new("p").build()],
        vec![
            pool_input(tainted, default_types()),
            pool_input(node_pool("a-plain"), default_types()),
        ],
    ));
    assert_eq!(plan.node_claims[0].node_pool, "a-plain");
    let weighted = |name: &str, w: i32| {
        let mut p = node_pool(name);
        p.weight = w;
        pool_input(p, default_types())
    };
    let pools = || {
        vec![
            weighted("target", 0),
            weighted("twenty", 20),
            weighted("hundred", 100),
        ]
    };
    let plan = solve(&input(
        pods(3, |i| PodBuilder::new(&format!("p{i}"))),
        pools(),
    ));
    assert!(plan.node_claims.iter().all(|c| c.node_pool == "hundred"));
    let pod = PodBuilder::new("p").node_selector("karpenter.sh/nodepool", "target");
    let plan = solve(&input(vec![pod.build()], pools()));
    assert_eq!(plan.node_claims[0].node_pool, "target");
}
