//! The AWS provider's suites through the binary, part 2: the Its of aws v1.14.1
//! `pkg/providers/instancetype/suite_test.go` that s19-binst (`upstream_aws_binary.rs`) did not
//! replay — offerings and zones (the class's `status.subnets`, zone IDs, local zones), spot and
//! on-demand availability (the ICE cache's marks as `available: false` offerings of a
//! `--catalog`), capacity blocks, accelerator labels and resources — and
//! `pkg/cloudprovider/suite_test.go`'s Its outside "NodeClaim Drift" that a plan shows (zone ID
//! label, capacity-reservation labels and counts, MinValues, EFA, a class selecting nothing).
//! Each test is one `provision --dry-run -f - -o json` call over a batch of scenarios, each in its
//! own NodePool and EC2NodeClass. docs/upstream-tests.md "AWS provider suites through the binary,
//! part 2 (s21-binst2)" maps each It to its test.

use serde_json::{json, Value};

use crate::support::{fixture, provision_json};
use crate::upstream_aws_binary::{
    claim_of, g4dn_labels, label_of, lone, node_selector, plan_items, requests,
};

/// The offerings fixture: ICE marks, spot prices, reservations, a local zone.
fn catalog() -> String {
    fixture("s21-binst2/catalog.yaml")
        .to_string_lossy()
        .into_owned()
}

/// Plans `items` offline in us-east-1 against the fixture catalog.
pub(crate) fn plan_catalog(items: Vec<Value>) -> Value {
    let cat = catalog();
    let (code, plan) = provision_json(&["--region", "us-east-1", "--catalog", &cat], items);
    assert!(code == 0 || code == 1, "exit {code}: {plan:#}");
    plan
}

fn req(key: &str, op: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": op, "values": values})
}

fn capacity(values: &[&str]) -> Value {
    req("karpenter.sh/capacity-type", "In", values)
}

fn instance_type(values: &[&str]) -> Value {
    req("node.kubernetes.io/instance-type", "In", values)
}

fn zone(values: &[&str]) -> Value {
    req("topology.kubernetes.io/zone", "In", values)
}

/// `status.subnets` of the class (the first object of a `lone` batch).
fn with_subnets(mut items: Vec<Value>, subnets: Value) -> Vec<Value> {
    items[0]["status"] = json!({ "subnets": subnets });
    items
}

/// `pod` is left pending (no NodeClaim holds it).
fn pending(plan: &Value, pod: &str) {
    assert!(
        claim_of(plan, pod).is_none(),
        "{pod} placed: {:#}",
        plan["nodeClaims"]
    );
}

/// The labels of the NodeClaim of `pod` (panics with the pending reasons when not placed).
fn labels_of(plan: &Value, pod: &str) -> Value {
    claim_of(plan, pod).unwrap_or_else(|| panic!("{pod} not placed: {:#}", plan["unschedulable"]))
        ["labels"]
        .clone()
}

/// aws: instancetype/suite_test.go › Insufficient Capacity Error Cache, CapacityType, "should
/// launch instances in local zones"; cloudprovider/suite_test.go "should return availability
/// zone ID as a label on the nodeClaim". The ICE cache's marks are `available: false` offerings.
#[test]
fn offerings_zones_and_capacity_types_through_the_binary() {
    let both = capacity(&["spot", "on-demand"]);
    let subnets = json!([{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"},
        {"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"}]);
    let cases: Vec<Vec<Value>> = vec![
        // "should launch on-demand capacity if flexible to both spot and on-demand, but spot is
        // unavailable" (m5.xlarge's spot pool in us-east-1a is marked).
        lone(
            "ice-spot",
            vec![
                both.clone(),
                zone(&["us-east-1a"]),
                instance_type(&["m5.xlarge"]),
            ],
            json!({}),
            json!({}),
        ),
        // "should fail to launch capacity when there is no zonal availability for spot" (m5.large
        // has a spot price in us-east-1a only).
        lone(
            "spot-nozone",
            vec![
                capacity(&["spot"]),
                instance_type(&["m5.large"]),
                zone(&["us-east-1b"]),
            ],
            json!({}),
            json!({}),
        ),
        // "should succeed to launch spot instance when zonal availability exists".
        lone(
            "spot-zone",
            vec![capacity(&["spot"]), instance_type(&["m5.large"])],
            json!({}),
            json!({}),
        ),
        // "should not return an offering / a zone when marking ... unavailable": m5.xlarge
        // on-demand in us-east-1c is marked; a pod pinned there stays pending.
        lone(
            "ice-zone",
            vec![instance_type(&["m5.xlarge"])],
            json!({}),
            node_selector("topology.kubernetes.io/zone", "us-east-1c"),
        ),
        // A zone the class has no subnet in offers nothing (status.subnets: 1a and 1b).
        with_subnets(
            lone(
                "no-subnet",
                vec![instance_type(&["m5.large"])],
                json!({}),
                node_selector("topology.kubernetes.io/zone", "us-east-1c"),
            ),
            subnets.clone(),
        ),
        // "should return availability zone ID as a label on the nodeClaim".
        with_subnets(
            lone(
                "zone-id",
                vec![instance_type(&["m5.large"])],
                json!({}),
                json!({}),
            ),
            subnets,
        ),
        // "should launch instances in local zones" (the class's only subnet is in the local zone).
        with_subnets(
            lone(
                "local",
                vec![],
                json!({}),
                node_selector("topology.kubernetes.io/zone", "us-east-1-bos-1a"),
            ),
            json!([{"id": "subnet-l", "zone": "us-east-1-bos-1a"}]),
        ),
    ];
    let plan = plan_catalog(cases.into_iter().flatten().collect());
    let l = labels_of(&plan, "ice-spot");
    assert_eq!(l["karpenter.sh/capacity-type"], "on-demand", "{l:#}");
    assert_eq!(l["topology.kubernetes.io/zone"], "us-east-1a");
    pending(&plan, "spot-nozone");
    let l = labels_of(&plan, "spot-zone");
    assert_eq!(l["karpenter.sh/capacity-type"], "spot");
    assert_eq!(l["topology.kubernetes.io/zone"], "us-east-1a");
    pending(&plan, "ice-zone");
    pending(&plan, "no-subnet");
    let l = labels_of(&plan, "zone-id");
    let zone_id = match l["topology.kubernetes.io/zone"].as_str() {
        Some("us-east-1a") => "use1-az1",
        Some("us-east-1b") => "use1-az2",
        other => panic!("zone {other:?} has no subnet: {l:#}"),
    };
    assert_eq!(l["topology.k8s.aws/zone-id"], zone_id, "{l:#}");
    let l = labels_of(&plan, "local");
    assert_eq!(l["node.kubernetes.io/instance-type"], "c5.large");
    assert_eq!(l["topology.kubernetes.io/zone"], "us-east-1-bos-1a");
}

/// aws: cloudprovider/suite_test.go › Capacity Reservations (DescribeTable "should include
/// capacity reservation labels", 3 Entries; "should mark capacity reservations as launched": a
/// reservation's count bounds its NodeClaims) and instancetype/suite_test.go › Capacity Blocks
/// ("should create an offering for a capacity block": one reserved offering, its zone, type and
/// id). A class that selects no reservation gets no reserved offering.
#[test]
fn capacity_reservations_through_the_binary() {
    let terms = json!({"capacityReservationSelectorTerms": [{"id": "cr-0m5default0false"},
        {"id": "cr-0m5default0true"}, {"id": "cr-0m5block0false"}, {"id": "cr-0c6gblock"}]});
    let reserved = capacity(&["reserved"]);
    let wants = |crt: &str, interruptible: &str| {
        json!({"spec": {"nodeSelector": {"karpenter.k8s.aws/capacity-reservation-type": crt,
            "karpenter.k8s.aws/capacity-reservation-interruptible": interruptible}}})
    };
    let mut cases: Vec<Vec<Value>> = vec![
        lone(
            "cr-df",
            vec![reserved.clone()],
            terms.clone(),
            wants("default", "false"),
        ),
        lone(
            "cr-dt",
            vec![reserved.clone()],
            terms.clone(),
            wants("default", "true"),
        ),
        lone(
            "cr-block",
            vec![reserved.clone(), instance_type(&["m5.large"])],
            terms.clone(),
            wants("capacity-block", "false"),
        ),
        // The c6g.large capacity block (count 1): the first pod takes it, the second (another
        // node by anti-affinity) has no reserved capacity left.
        lone(
            "cb-1",
            vec![reserved.clone(), instance_type(&["c6g.large"])],
            terms.clone(),
            json!({"metadata": {"labels": {"app": "cb"}}}),
        ),
        // Selecting nothing: no reserved offering.
        lone("cr-none", vec![reserved.clone()], json!({}), json!({})),
        // A reservation in a zone the class has no subnet in is not offered (upstream:
        // `reserved_capacity_resolver.go`, `itZones.Has(reservation.AvailabilityZone)`).
        with_subnets(
            lone(
                "cr-nozone",
                vec![reserved.clone()],
                terms.clone(),
                json!({}),
            ),
            json!([{"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"}]),
        ),
        // …and its zone's ID is the reserved NodeClaim's `topology.k8s.aws/zone-id`.
        with_subnets(
            lone(
                "cr-zoneid",
                vec![reserved.clone(), instance_type(&["m5.large"])],
                terms.clone(),
                json!({}),
            ),
            json!([{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"}]),
        ),
    ];
    let anti = json!({"metadata": {"labels": {"app": "cb"}}, "spec": {"nodeSelector":
        {"karpenter.sh/nodepool": "cb-1"}, "affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app": "cb"}}}]}}}});
    let mut second = lone("cb-2", vec![], json!({}), anti.clone());
    cases.push(vec![second.pop().unwrap()]);
    cases[3][2]["spec"]["affinity"] = anti["spec"]["affinity"].clone();
    let plan = plan_catalog(cases.into_iter().flatten().collect());
    for (pod, id, crt, interruptible) in [
        ("cr-df", "cr-0m5default0false", "default", "false"),
        ("cr-dt", "cr-0m5default0true", "default", "true"),
        ("cr-block", "cr-0m5block0false", "capacity-block", "false"),
    ] {
        let l = labels_of(&plan, pod);
        assert_eq!(l["karpenter.sh/capacity-type"], "reserved", "{pod}: {l:#}");
        assert_eq!(l["karpenter.k8s.aws/capacity-reservation-id"], id, "{pod}");
        assert_eq!(
            l["karpenter.k8s.aws/capacity-reservation-type"], crt,
            "{pod}"
        );
        assert_eq!(
            l["karpenter.k8s.aws/capacity-reservation-interruptible"], interruptible,
            "{pod}"
        );
        assert_eq!(
            claim_of(&plan, pod).unwrap()["capacityReservationId"],
            id,
            "{pod}"
        );
    }
    let l = labels_of(&plan, "cb-1");
    assert_eq!(
        l["karpenter.k8s.aws/capacity-reservation-id"],
        "cr-0c6gblock"
    );
    assert_eq!(l["topology.kubernetes.io/zone"], "us-east-1a");
    assert_eq!(
        l["karpenter.k8s.aws/capacity-reservation-type"],
        "capacity-block"
    );
    // A capacity block of count 1 takes one NodeClaim.
    pending(&plan, "cb-2");
    pending(&plan, "cr-nozone");
    let l = labels_of(&plan, "cr-zoneid");
    assert_eq!(l["topology.k8s.aws/zone-id"], "use1-az1", "{l:#}");
    pending(&plan, "cr-none");
}

/// aws: cloudprovider/suite_test.go › MinValues "CreateFleet input should respect minValues for
/// In operator requirement from NodePool": two types (1 and 8 CPUs, spot), `instance-type`
/// minValues 2, two 0.9-CPU pods ⇒ two NodeClaims, each listing both types; instancetype
/// "should not remove expensive metal instanceTypeOptions if any of the requirement with
/// minValues is provided" (the embedded catalog: the NodeClaim's types include a metal one).
#[test]
fn min_values_through_the_binary() {
    let mut items = lone(
        "mv",
        vec![
            capacity(&["spot"]),
            json!({"key": "node.kubernetes.io/instance-type", "operator": "In",
                "values": ["t3.small", "c5.2xlarge"], "minValues": 2}),
        ],
        json!({}),
        requests(json!({"cpu": "900m"})),
    );
    let mut second = items[2].clone();
    second["metadata"]["name"] = json!("mv-2");
    items.push(second);
    let plan = plan_catalog(items);
    let a = claim_of(&plan, "mv").expect("mv placed");
    let b = claim_of(&plan, "mv-2").expect("mv-2 placed");
    assert_ne!(a["name"], b["name"], "both pods on one NodeClaim");
    for c in [a, b] {
        let mut types: Vec<&str> = c["instanceTypes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        types.sort_unstable();
        assert_eq!(types, ["c5.2xlarge", "t3.small"], "{c:#}");
    }

    // The metal It: m5.metal's spot offering is the cheapest; without minValues the exotic
    // filter launches m5.large, with `capacity-type` minValues 1 the filter is skipped.
    let metal = |name: &str, min_values: bool| {
        let mut ct = capacity(&["spot"]);
        if min_values {
            ct["minValues"] = json!(1);
        }
        lone(
            name,
            vec![ct, instance_type(&["m5.large", "m5.metal"])],
            json!({}),
            requests(json!({"cpu": "1"})),
        )
    };
    let mut items = metal("mv-metal", true);
    items.extend(metal("no-mv-metal", false));
    let plan_metal = plan_catalog(items);

    // minValues on the AWS instance labels (embedded catalog): five families allowed, four
    // required; the CPU manufacturer Exists with minValues 3 (intel, amd, aws); minValues 10 on
    // it cannot be met ⇒ the pod stays pending (core: `Requirements.SatisfiesMinValues`).
    let mut items = lone(
        "mv-family",
        vec![
            json!({"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                "values": ["c5", "m5", "r5", "c6g", "m6a"], "minValues": 4}),
            json!({"key": "karpenter.k8s.aws/instance-cpu-manufacturer", "operator": "Exists", "minValues": 3}),
        ],
        json!({}),
        requests(json!({"cpu": "1"})),
    );
    items.extend(lone(
        "mv-unmet",
        vec![json!({"key": "karpenter.k8s.aws/instance-cpu-manufacturer", "operator": "Exists", "minValues": 10})],
        json!({}),
        requests(json!({"cpu": "1"})),
    ));
    let plan = plan_items(items);
    let c = claim_of(&plan, "mv-family").expect("mv-family placed");
    let mut families: Vec<&str> = c["instanceTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().split('.').next().unwrap())
        .collect();
    families.sort_unstable();
    families.dedup();
    assert!(families.len() >= 4, "{families:?}");
    assert!(
        families.iter().any(|f| f.ends_with('g')) && families.iter().any(|f| f.ends_with('a')),
        "not three CPU manufacturers: {families:?}"
    );
    pending(&plan, "mv-unmet");
    let plan = plan_metal;
    let launched = |pod: &str| claim_of(&plan, pod).expect("placed")["instanceType"].clone();
    assert_eq!(launched("mv-metal"), "m5.metal", "{:#}", plan["nodeClaims"]);
    assert_eq!(
        launched("no-mv-metal"),
        "m5.large",
        "{:#}",
        plan["nodeClaims"]
    );
}

/// The inf2.xlarge labels of aws: instancetype/suite_test.go "should support instance type
/// labels with accelerator" (the zone ID from `status.subnets`).
fn inf2_labels() -> Vec<(&'static str, &'static str)> {
    // The well-known labels both Its give the same value (region, zone, os, arch, capacity
    // type, tenancy, hypervisor, encryption in transit, flex, zone ID).
    let shared = [
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "karpenter.sh/capacity-type",
        "karpenter.k8s.aws/instance-tenancy",
        "karpenter.k8s.aws/instance-hypervisor",
        "karpenter.k8s.aws/instance-encryption-in-transit-supported",
        "karpenter.k8s.aws/instance-capability-flex",
        "topology.k8s.aws/zone-id",
    ];
    let mut out: Vec<_> = g4dn_labels()
        .into_iter()
        .filter(|(k, _)| shared.contains(k))
        .collect();
    out.extend([
        ("node.kubernetes.io/instance-type", "inf2.xlarge"),
        ("karpenter.k8s.aws/instance-category", "inf"),
        ("karpenter.k8s.aws/instance-generation", "2"),
        ("karpenter.k8s.aws/instance-family", "inf2"),
        ("karpenter.k8s.aws/instance-size", "xlarge"),
        ("karpenter.k8s.aws/instance-cpu", "4"),
        (
            "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
            "3600",
        ),
        ("karpenter.k8s.aws/instance-cpu-manufacturer", "amd"),
        ("karpenter.k8s.aws/instance-memory", "16384"),
        ("karpenter.k8s.aws/instance-ebs-bandwidth", "10000"),
        ("karpenter.k8s.aws/instance-network-bandwidth", "2083"),
        ("karpenter.k8s.aws/instance-accelerator-name", "inferentia2"),
        ("karpenter.k8s.aws/instance-accelerator-manufacturer", "aws"),
        ("karpenter.k8s.aws/instance-accelerator-count", "1"),
    ]);
    assert_eq!(out.len(), shared.len() + 14);
    out
}

/// aws: instancetype/suite_test.go "should support instance type labels with accelerator", the
/// accelerator resource Its ("aws.amazon.com/neuron": 2, 2, 4 on two inf2.24xlarge; "trn1 … neuron"; "inf2 … neuroncore"), cloudprovider
/// EFA ("should include vpc.amazonaws.com/efa on a nodeclaim if it requests it", "shouldn't …
/// if it doesn't"), Windows (amd64 only), an AMI's architecture and "should launch instances with an alternate NodePool
/// when a NodeClass selects 0 subnets, security groups, or amis".
#[test]
fn accelerators_labels_and_classes_through_the_binary() {
    let subnets = json!([{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"}]);
    let mut items = with_subnets(lone("acc", vec![], json!({}), json!({})), subnets);
    items.pop();
    let pod = |name: &str, selector: Value, extra: Value| {
        let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeSelector": selector,
                "containers": [{"name": "app", "image": "registry.k8s.io/pause"}]}});
        crate::support::merge(&mut p, extra);
        p
    };
    let labels = inf2_labels();
    let mut all = serde_json::Map::new();
    all.insert("karpenter.sh/nodepool".into(), json!("acc"));
    for (i, (k, v)) in labels.iter().enumerate() {
        items.push(pod(
            &format!("acc-{i}"),
            json!({"karpenter.sh/nodepool": "acc", *k: v}),
            json!({}),
        ));
        all.insert(k.to_string(), json!(v));
    }
    items.push(pod("acc-all", Value::Object(all), json!({})));
    // Accelerator resources, each in its own pool.
    let resource_pods = |name: &str, reqs: Vec<Value>, key: &str, counts: &[&str]| {
        let mut out = lone(name, reqs, json!({}), requests(json!({ key: counts[0] })));
        for (i, n) in counts.iter().enumerate().skip(1) {
            let mut p = out[2].clone();
            p["metadata"]["name"] = json!(format!("{name}-{i}"));
            crate::support::merge(&mut p, requests(json!({ key: n })));
            p["spec"]["nodeSelector"] = json!({ "karpenter.sh/nodepool": name });
            out.push(p);
        }
        out
    };
    items.extend(resource_pods(
        "neuron",
        // The fake provider's neuron types; the snapshot also has inf1.* and inf2.48xlarge,
        // which would take all three pods on one node.
        vec![instance_type(&["inf2.xlarge", "inf2.24xlarge"])],
        "aws.amazon.com/neuron",
        &["2", "2", "4"],
    ));
    items.extend(resource_pods(
        "trn1",
        vec![instance_type(&["trn1.2xlarge"])],
        "aws.amazon.com/neuron",
        &["1"],
    ));
    items.extend(resource_pods(
        "ncore",
        vec![instance_type(&["inf2.xlarge"])],
        "aws.amazon.com/neuroncore",
        &["2"],
    ));
    items.extend(resource_pods(
        "efa",
        vec![instance_type(&["p4d.24xlarge"])],
        "vpc.amazonaws.com/efa",
        &["1"],
    ));
    items.extend(lone(
        "noefa",
        vec![instance_type(&["p4d.24xlarge"])],
        json!({}),
        json!({}),
    ));
    // Windows runs amd64 types only.
    items.extend(lone(
        "win-arm",
        vec![],
        json!({"amiSelectorTerms": [{"alias": "windows2022@latest"}]}),
        node_selector("kubernetes.io/arch", "arm64"),
    ));
    items.extend(lone(
        "br-arm",
        vec![],
        json!({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}),
        node_selector("kubernetes.io/arch", "arm64"),
    ));
    // "…alternate NodePool when a NodeClass selects 0 subnets, security groups, or amis": the
    // misconfigured class (its status selects nothing) and a good pool with a lower weight.
    let mut bad = lone(
        "alt-bad",
        vec![],
        json!({"amiFamily": "Custom",
        "amiSelectorTerms": [{"tags": {"Name": "nothing"}}]}),
        json!({}),
    );
    bad[0]["status"] = json!({"subnets": [], "securityGroups": [], "amis": []});
    bad[1]["spec"]["weight"] = json!(100);
    bad[2]["spec"] = json!({"containers": [{"name": "app", "image": "registry.k8s.io/pause"}],
        "nodeSelector": {"alt": "yes"}});
    let mut good = lone("alt-good", vec![], json!({}), json!({}));
    good.pop();
    good[1]["spec"]["template"]["metadata"] = json!({"labels": {"alt": "yes"}});
    bad[1]["spec"]["template"]["metadata"] = json!({"labels": {"alt": "yes"}});
    items.extend(bad);
    items.extend(good);
    // amifamily/resolver.go `Resolve` + `MapToInstanceTypes`: with `status.amis` amd64 only and a
    // pool allowing both architectures, the launched type is one the AMI runs on (s19-binst's
    // t4g.nano case, since fixed in the launch choice).
    let mut amd = lone(
        "ami-amd",
        vec![req("kubernetes.io/arch", "In", &["amd64", "arm64"])],
        json!({"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-0aaaaaaaaaaaaaaa1"}]}),
        requests(json!({"cpu": "1"})),
    );
    amd[0]["status"] = json!({"amis": [{"id": "ami-0aaaaaaaaaaaaaaa1", "name": "al2023-amd64",
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}]});
    items.extend(amd);
    let plan = plan_items(items);

    // Each label's own pod, and the pod selecting them all, carry the It's value.
    let wrong: Vec<String> = labels
        .iter()
        .enumerate()
        .flat_map(|(i, (k, v))| [(format!("acc-{i}"), k, v), ("acc-all".to_string(), k, v)])
        .filter_map(|(pod, k, v)| {
            let got = label_of(&plan, &pod, k);
            (got.as_deref() != Some(*v)).then(|| format!("{pod}: {k}={v} (got {got:?})"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}\n{:#}", plan["unschedulable"]);
    let ty = |pod: &str| {
        labels_of(&plan, pod)["node.kubernetes.io/instance-type"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let claim_name = |pod: &str| claim_of(&plan, pod).unwrap()["name"].clone();
    for p in ["neuron", "neuron-1", "neuron-2"] {
        assert_eq!(ty(p), "inf2.24xlarge", "{p}");
    }
    let mut names: Vec<String> = ["neuron", "neuron-1", "neuron-2"]
        .iter()
        .map(|p| claim_name(p).to_string())
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 2, "neuron pods on {names:?}");
    assert_eq!(ty("trn1"), "trn1.2xlarge");
    assert_eq!(ty("ncore"), "inf2.xlarge");
    let efa = claim_of(&plan, "efa").expect("efa placed");
    assert_eq!(efa["requests"]["vpc.amazonaws.com/efa"], "1", "{efa:#}");
    let noefa = claim_of(&plan, "noefa").expect("noefa placed");
    assert!(
        noefa["requests"].get("vpc.amazonaws.com/efa").is_none(),
        "{noefa:#}"
    );
    let c = claim_of(&plan, "ami-amd").expect("ami-amd placed");
    assert_eq!(c["labels"]["kubernetes.io/arch"], "amd64", "{c:#}");
    pending(&plan, "win-arm");
    assert_eq!(labels_of(&plan, "br-arm")["kubernetes.io/arch"], "arm64");
    assert_eq!(
        claim_of(&plan, "alt-bad").map(|c| c["nodePool"].clone()),
        Some(json!("alt-good")),
        "{:#}",
        plan["unschedulable"]
    );
}

/// aws: instancetype/suite_test.go › NodeOverlay Preview Instance Pricing: p5e.48xlarge has no
/// price in the embedded snapshot (as the It's preview type has none in the pricing data). "should
/// mark offerings as available when a NodeOverlay defines a price for an unpriced instance type"
/// (placed, at the overlay's 98.32) and "should not mark offerings as available for unpriced
/// instance types without a NodeOverlay" (pending).
#[test]
fn unpriced_types_and_overlay_prices_through_the_binary() {
    let pin = vec![instance_type(&["p5e.48xlarge"])];
    let mut items = lone("preview", pin.clone(), json!({}), json!({}));
    items.push(
        json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "preview-price"},
        "spec": {"price": "98.32", "requirements": [instance_type(&["p5e.48xlarge"])]}}),
    );
    // The snapshot offers p5e.48xlarge in us-east-2 (not us-east-1).
    let plan_east2 = |items: Vec<Value>| {
        let (code, plan) = provision_json(&["--region", "us-east-2"], items);
        assert!(code == 0 || code == 1, "exit {code}: {plan:#}");
        plan
    };
    let plan = plan_east2(items);
    let c = claim_of(&plan, "preview")
        .unwrap_or_else(|| panic!("not placed: {:#}", plan["unschedulable"]));
    assert_eq!(c["instanceType"], "p5e.48xlarge");
    assert_eq!(c["pricePerHour"], 98.32, "{c:#}");
    let plan = plan_east2(lone("unpriced", pin, json!({}), json!({})));
    pending(&plan, "unpriced");
}

/// The AMI families' requirements on instance types (aws: instancetype/types.go
/// `computeRequirements`: `node.kubernetes.io/windows-build DoesNotExist` unless the family is
/// Windows, which sets its build — amifamily/windows.go; `kubernetes.io/os` windows): a pod
/// selecting a Windows build lands only on its family's class, a Linux class offers no build.
#[test]
fn ami_family_requirements_through_the_binary() {
    let build = |v: &str| node_selector("node.kubernetes.io/windows-build", v);
    let win = |alias: &str| json!({"amiSelectorTerms": [{"alias": alias}]});
    let cases: Vec<Vec<Value>> = vec![
        lone(
            "w2019",
            vec![],
            win("windows2019@latest"),
            build("10.0.17763"),
        ),
        lone(
            "w2022",
            vec![],
            win("windows2022@latest"),
            build("10.0.20348"),
        ),
        lone(
            "w2022-2019",
            vec![],
            win("windows2022@latest"),
            build("10.0.17763"),
        ),
        lone("al2023-build", vec![], json!({}), build("10.0.20348")),
        lone(
            "w2022-linux",
            vec![],
            win("windows2022@latest"),
            node_selector("kubernetes.io/os", "linux"),
        ),
        lone(
            "br-linux",
            vec![],
            win("bottlerocket@latest"),
            node_selector("kubernetes.io/os", "linux"),
        ),
    ];
    let plan = plan_items(cases.into_iter().flatten().collect());
    for (pod, b) in [("w2019", "10.0.17763"), ("w2022", "10.0.20348")] {
        let l = labels_of(&plan, pod);
        assert_eq!(l["node.kubernetes.io/windows-build"], b, "{pod}: {l:#}");
        assert_eq!(l["kubernetes.io/os"], "windows", "{pod}");
    }
    for pod in ["w2022-2019", "al2023-build", "w2022-linux"] {
        pending(&plan, pod);
    }
    assert_eq!(labels_of(&plan, "br-linux")["kubernetes.io/os"], "linux");
}
