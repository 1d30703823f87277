//! The embedded catalog's supplement types (g4ad, dl1: `catalog/supplement-instance-types.json`,
//! types moto's EC2 data lacks) through the binary, offline, without `--catalog`: the aws v1.14.1
//! Its that name them (`pkg/providers/instancetype/suite_test.go`, `pkg/cloudprovider/suite_test.go`)
//! and aws/karpenter-provider-aws#7754. One `provision --dry-run -f - -o json` call per test, each
//! scenario in its own NodePool and EC2NodeClass. docs/upstream-tests.md "Embedded catalog
//! supplement (s23-catalog)" maps each It to its test.

use serde_json::{json, Value};

use crate::upstream_aws_binary::{claim_of, lone, plan_items, requests};

fn instance_type(values: &[&str]) -> Value {
    json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": values})
}

/// One pool `name` (`reqs`, class patched with `class`) and a pod per count of `resource`:
/// `name`, `name-1`, … each selecting the pool.
fn pods_of(
    name: &str,
    reqs: Vec<Value>,
    class: Value,
    resource: &str,
    counts: &[&str],
) -> Vec<Value> {
    let mut out = lone(name, reqs, class, requests(json!({ resource: counts[0] })));
    for (i, n) in counts.iter().enumerate().skip(1) {
        let mut p = out[2].clone();
        p["metadata"]["name"] = json!(format!("{name}-{i}"));
        p["spec"]["containers"][0]["resources"] =
            json!({"requests": { resource: n }, "limits": { resource: n }});
        out.push(p);
    }
    out
}

/// The instance type of the NodeClaim holding `pod` (panics with the pending reasons when none).
fn type_of(plan: &Value, pod: &str) -> String {
    claim_of(plan, pod).unwrap_or_else(|| panic!("{pod} not placed: {:#}", plan["unschedulable"]))
        ["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .unwrap()
        .to_string()
}

/// How many NodeClaims hold `pods`.
fn claims_holding(plan: &Value, pods: &[&str]) -> usize {
    let mut names: Vec<String> = pods
        .iter()
        .map(|p| claim_of(plan, p).unwrap()["name"].to_string())
        .collect();
    names.sort();
    names.dedup();
    names.len()
}

fn pending(plan: &Value, pod: &str) {
    assert!(
        claim_of(plan, pod).is_none(),
        "{pod} placed: {:#}",
        plan["nodeClaims"]
    );
}

/// aws: instancetype/suite_test.go "should launch instances for amd.com/gpu resource requests"
/// (1, 2 and 4 GPUs ⇒ two g4ad.16xlarge: the 1- and 2-GPU pods share one); the g4ad labels
/// (`types.go` `computeRequirements`, from the It's type); aws#7754 (`instance-family In [g4ad]`,
/// `instance-size In [2xlarge]`: an `nvidia.com/gpu` pod stays pending, an `amd.com/gpu` one takes
/// g4ad.2xlarge).
#[test]
fn amd_gpu_requests_take_g4ad() {
    let g4ad_2x = vec![
        json!({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g4ad"]}),
        json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["2xlarge"]}),
    ];
    let mut items = pods_of("amd", vec![], json!({}), "amd.com/gpu", &["1", "2", "4"]);
    items.extend(pods_of(
        "g4ad-nv",
        g4ad_2x.clone(),
        json!({}),
        "nvidia.com/gpu",
        &["1"],
    ));
    items.extend(pods_of(
        "g4ad-amd",
        g4ad_2x,
        json!({}),
        "amd.com/gpu",
        &["1"],
    ));
    let plan = plan_items(items);

    for p in ["amd", "amd-1", "amd-2"] {
        assert_eq!(type_of(&plan, p), "g4ad.16xlarge", "{p}");
    }
    assert_eq!(claims_holding(&plan, &["amd", "amd-1", "amd-2"]), 2);
    let labels = &claim_of(&plan, "amd-2").unwrap()["labels"];
    for (k, v) in [
        ("karpenter.k8s.aws/instance-family", "g4ad"),
        ("karpenter.k8s.aws/instance-gpu-name", "radeon-pro-v520"),
        ("karpenter.k8s.aws/instance-gpu-manufacturer", "amd"),
        ("karpenter.k8s.aws/instance-gpu-count", "4"),
        ("karpenter.k8s.aws/instance-gpu-memory", "8192"),
        ("karpenter.k8s.aws/instance-cpu-manufacturer", "amd"),
        ("karpenter.k8s.aws/instance-network-bandwidth", "25000"),
        ("karpenter.k8s.aws/instance-local-nvme", "2400"),
        ("karpenter.k8s.aws/instance-hypervisor", "nitro"),
    ] {
        assert_eq!(labels[k], v, "{k}: {labels:#}");
    }
    pending(&plan, "g4ad-nv");
    assert_eq!(type_of(&plan, "g4ad-amd"), "g4ad.2xlarge");
}

/// aws: instancetype/suite_test.go "should launch instances for habana.ai/gaudi resource requests"
/// (1, 2 and 4 ⇒ one dl1.24xlarge), "should launch instances for vpc.amazonaws.com/efa resource
/// requests" (pool pinned to dl1.24xlarge, 1 and 2 EFAs ⇒ one node); cloudprovider/suite_test.go
/// › EFA: the NodeClaim requests `vpc.amazonaws.com/efa` only when a pod does; with EFA-only
/// interfaces in the class the type offers that many EFAs (`types.go` `efas`), with only ENA
/// interfaces none.
#[test]
fn gaudi_and_efa_requests_take_dl1() {
    let dl1 = || vec![instance_type(&["dl1.24xlarge"])];
    let efa_only = json!({"networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]});
    let ena_only = json!({"networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "interface"}]});
    let mut items = pods_of(
        "gaudi",
        vec![],
        json!({}),
        "habana.ai/gaudi",
        &["1", "2", "4"],
    );
    items.extend(pods_of(
        "efa",
        dl1(),
        json!({}),
        "vpc.amazonaws.com/efa",
        &["1", "2"],
    ));
    items.extend(lone("noefa", dl1(), json!({}), json!({})));
    items.extend(pods_of(
        "efaonly",
        dl1(),
        efa_only,
        "vpc.amazonaws.com/efa",
        &["1", "1"],
    ));
    items.extend(pods_of(
        "enaonly",
        dl1(),
        ena_only.clone(),
        "vpc.amazonaws.com/efa",
        &["1"],
    ));
    items.extend(lone("enaonly-plain", dl1(), ena_only, json!({})));
    let plan = plan_items(items);

    for p in [
        "gaudi",
        "gaudi-1",
        "gaudi-2",
        "efa",
        "efa-1",
        "noefa",
        "efaonly",
        "enaonly-plain",
    ] {
        assert_eq!(type_of(&plan, p), "dl1.24xlarge", "{p}");
    }
    assert_eq!(claims_holding(&plan, &["gaudi", "gaudi-1", "gaudi-2"]), 1);
    assert_eq!(claims_holding(&plan, &["efa", "efa-1"]), 1);
    let efa = claim_of(&plan, "efa").unwrap();
    assert_eq!(efa["requests"]["vpc.amazonaws.com/efa"], "3", "{efa:#}");
    let noefa = claim_of(&plan, "noefa").unwrap();
    assert!(
        noefa["requests"].get("vpc.amazonaws.com/efa").is_none(),
        "{noefa:#}"
    );
    // One EFA-only interface: one EFA per node, so the second pod needs a second node.
    assert_eq!(claims_holding(&plan, &["efaonly", "efaonly-1"]), 2);
    pending(&plan, "enaonly");
}

/// aws: instancetype/suite_test.go › Instance Type and NodeClass Compatibility › Network
/// Interfaces "should mark instance type offering as available when it supports network interface
/// configuration" (an interface and an EFA-only interface on card 0: dl1.24xlarge launched) and
/// "… unavailable when it does not support …" (five EFA-only interfaces on cards 0–4: dl1.24xlarge
/// has 4 EFAs and 4 cards, the pod stays pending); `compatibility.go` `networkInterfaces`.
#[test]
fn network_interfaces_decide_dl1_offerings() {
    let dl1 = || vec![instance_type(&["dl1.24xlarge"])];
    let nic = |card: i64, device: i64, kind: &str| json!({"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind});
    let supported = json!({"networkInterfaces": [nic(0, 0, "interface"), nic(0, 1, "efa-only")]});
    let unsupported = json!({"networkInterfaces": [nic(0, 0, "interface"), nic(0, 1, "efa-only"),
        nic(1, 0, "efa-only"), nic(2, 0, "efa-only"), nic(3, 0, "efa-only"), nic(4, 0, "efa-only")]});
    let mut items = lone("nic-ok", dl1(), supported, json!({}));
    items.extend(lone("nic-bad", dl1(), unsupported, json!({})));
    let plan = plan_items(items);

    assert_eq!(type_of(&plan, "nic-ok"), "dl1.24xlarge");
    pending(&plan, "nic-bad");
}
