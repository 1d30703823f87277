//! AWS provider Its through the binary, part 3 (session 32; docs/upstream-tests/aws.md "AWS
//! provider Its through the binary, part 3 (s32-itaws3)"): Its of aws v1.14.1 whose titles no
//! earlier test named in full, replayed through `kubectl karpenter` — offline (`provision
//! --dry-run -o json`, the embedded catalog) and live (`provision --yes` against moto and the
//! loopback cluster, reading back the launch templates moto stores). Fixtures in
//! `tests/fixtures/aws-its3/` (our own manifests).

use serde_json::{json, Value};

use crate::ami_line_by_line::template_user_data;
use crate::aws_launch::all_template_data;
use crate::provision_live::Walk;
use crate::support::root;
use crate::upstream_aws_binary::{claim_of, lone, plan_items, requests};

/// `n` pods `<pool>-<i>` for the pool `pool` (made by [`lone`]), each requesting `r`.
fn more_pods(pool: &str, rs: &[Value]) -> Vec<Value> {
    rs.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut p = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{pool}-{i}"), "namespace": "default"},
                "spec": {"nodeSelector": {"karpenter.sh/nodepool": pool},
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause"}]}});
            crate::support::merge(&mut p, requests(r.clone()));
            p
        })
        .collect()
}

fn pinned(instance_type: &str) -> Vec<Value> {
    vec![
        json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [instance_type]}),
    ]
}

/// The NodeClaims of `plan` whose pods start with `default/<prefix>`: (instance type, pod count).
fn claims_of(plan: &Value, prefix: &str) -> Vec<(String, usize)> {
    let prefix = format!("default/{prefix}");
    let mut out: Vec<(String, usize)> = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let n = (c["pods"].as_array().unwrap().iter())
                .filter(|p| p.as_str().unwrap_or("").starts_with(&prefix))
                .count();
            (n > 0).then(|| (c["instanceType"].as_str().unwrap().to_string(), n))
        })
        .collect();
    out.sort();
    out
}

/// aws v1.14.1 pkg/providers/instancetype/suite_test.go
/// It: "should launch instances for nvidia.com/gpu resource requests" (1, 2 and 4 GPUs on g5.12xlarge: two nodes, the 4 alone).
/// Upstream's fake catalog has no larger GPU type, so the pool pins g5.12xlarge (the embedded
/// catalog's 8-GPU types would take all three pods on one node, as Karpenter would). Its neuron,
/// trn1 and inf2 siblings: `upstream_aws_binary2::accelerators_labels_and_classes_through_the_binary`.
#[test]
fn gpu_requests_pack_as_upstream() {
    let gpu = |n: &str| json!({"nvidia.com/gpu": n});
    let mut items = lone("gpu", pinned("g5.12xlarge"), json!({}), requests(gpu("1")));
    items.extend(more_pods("gpu", &[gpu("2"), gpu("4")]));
    let plan = plan_items(items);
    assert_eq!(
        claims_of(&plan, "gpu"),
        vec![
            ("g5.12xlarge".to_string(), 1),
            ("g5.12xlarge".to_string(), 2)
        ],
        "{plan:#}"
    );
    let four = claim_of(&plan, "gpu-1").unwrap();
    assert_eq!(four["pods"].as_array().unwrap().len(), 1, "{four:#}");
}

/// The AL2023 NodeConfig part of a MIME user data, parsed.
fn node_config(user_data: &str) -> Value {
    let start = user_data
        .find("# Karpenter Generated NodeConfig")
        .expect("NodeConfig");
    let part = &user_data[start..];
    let end = part.find("\n--").unwrap_or(part.len());
    serde_saphyr::from_str(&part[..end]).expect("NodeConfig YAML")
}

/// aws v1.14.1 pkg/providers/launchtemplate/suite_test.go "User Data", one `provision --yes` of
/// three pools (AL2, AL2023, Bottlerocket; `tests/fixtures/aws-its3/kubelet-user-data.yaml`),
/// each template's user data read back from moto:
/// AL2 (class `maxPods: 10`):
/// It: "should specify --use-max-pods=false when using ENI-based pod density"
/// It: "should specify --use-max-pods=false and --max-pods user value when user specifies maxPods in NodePool"
/// It: "should specify labels in the Kubelet flags when specified in NodePool" (AL2023 too)
/// It: "should specify labels in the Kubelet flags when single value requirements are specified in NodePool" (all three)
/// AL2023 NodeConfig `kubelet.config`:
/// It: "should specify podsPerCore with maxPods enabled"
/// It: "should specify systemReserved when overriding system reserved values"
/// It: "should pass evictionHard threshold values when specified"
/// It: "should pass evictionMaxPodGracePeriod when specified"
/// It: "should pass ImageGCHighThresholdPercent when specified", "should pass ImageGCLowThresholdPercent when specified"
/// It: "should pass cpuCFSQuota when specified"
/// It: "should specify taints in the KubeletConfiguration when specified in NodePool"
/// Bottlerocket `[settings.kubernetes]`:
/// It: "should override system reserved values in user data"
/// It: "should override soft eviction values in user data" (`1m` written `1m0s`, as Go prints it)
/// It: "should override max pod grace period in user data"
/// It: "should specify max pods value when passing maxPods in configuration"
/// It: "should pass CPUCFSQuota when specified" (`cpu-cfs-quota-enforced`)
/// And the templates: launchtemplate "should request that tags be applied to both network
/// interfaces and spot instance requests" (on-demand: the interfaces), instancetype "should set
/// metadata options on generated launch template from nodePool configuration" and "should
/// default metadata options on generated launch template".
#[test]
fn kubelet_settings_reach_each_familys_user_data() {
    let walk = Walk::with("aws-its3-kubelet", false, "crds/v1", |_| Vec::new());
    let manifest =
        std::fs::read_to_string(root().join("tests/fixtures/aws-its3/kubelet-user-data.yaml"))
            .unwrap();
    walk.apply("kubelet-user-data.yaml", &manifest);
    walk.wait_unschedulable(3);
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);

    let user_data = template_user_data(&walk);
    let of = |marker: &str| -> Vec<&String> {
        let found: Vec<&String> = user_data.iter().filter(|u| u.contains(marker)).collect();
        assert!(!found.is_empty(), "no {marker:?} template: {user_data:#?}");
        found
    };
    for ud in of("/etc/eks/bootstrap.sh") {
        for want in [
            "--use-max-pods false",
            "--max-pods=10",
            "test-label-1=value-1",
            "test-label-2=value-2",
        ] {
            assert!(ud.contains(want), "AL2 lacks {want:?}:\n{ud}");
        }
    }
    for ud in of("kind: NodeConfig") {
        let config = node_config(ud);
        let kubelet = &config["spec"]["kubelet"]["config"];
        assert_eq!(kubelet["podsPerCore"], 2, "{kubelet:#}");
        assert_eq!(kubelet["maxPods"], 100, "{kubelet:#}");
        assert_eq!(
            kubelet["systemReserved"],
            json!({"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2Gi"}),
            "{kubelet:#}"
        );
        assert_eq!(
            kubelet["evictionHard"],
            json!({"memory.available": "10%", "nodefs.available": "15%", "nodefs.inodesFree": "5%"}),
            "{kubelet:#}"
        );
        assert_eq!(kubelet["evictionMaxPodGracePeriod"], 300, "{kubelet:#}");
        assert_eq!(kubelet["imageGCHighThresholdPercent"], 50, "{kubelet:#}");
        assert_eq!(kubelet["imageGCLowThresholdPercent"], 20, "{kubelet:#}");
        assert_eq!(kubelet["cpuCFSQuota"], false, "{kubelet:#}");
        assert_eq!(
            kubelet["registerWithTaints"],
            json!([{"effect": "NoSchedule", "key": "test-taint", "value": "test-value"}]),
            "{kubelet:#}"
        );
        let flags = config["spec"]["kubelet"]["flags"].to_string();
        for want in ["test-label-1=value-1", "test-label-2=value-2"] {
            assert!(flags.contains(want), "AL2023 flags lack {want:?}: {flags}");
        }
    }
    for ud in of("[settings.kubernetes]") {
        for want in [
            "max-pods = 110",
            "eviction-max-pod-grace-period = 300",
            "cpu-cfs-quota-enforced = false",
            "image-gc-high-threshold-percent = \"50\"",
            "image-gc-low-threshold-percent = \"20\"",
            "[settings.kubernetes.system-reserved]\n\"cpu\" = \"500m\"\n\"ephemeral-storage\" = \"2Gi\"\n\"memory\" = \"1Gi\"",
            "[settings.kubernetes.eviction-soft]\n\"memory.available\" = \"10%\"",
            "[settings.kubernetes.eviction-soft-grace-period]\n\"memory.available\" = \"1m0s\"",
            "\"test-label-1\" = \"value-1\"",
            "\"test-label-2\" = \"value-2\"",
        ] {
            assert!(ud.contains(want), "Bottlerocket lacks {want:?}:\n{ud}");
        }
    }

    for data in all_template_data(&walk.moto) {
        let ud =
            kubectl_karpenter::cloud::userdata::base64_decode(data["UserData"].as_str().unwrap())
                .unwrap();
        let ud = String::from_utf8(ud).unwrap();
        let metadata = &data["MetadataOptions"];
        if ud.contains("kind: NodeConfig") {
            // The class's metadataOptions.
            assert_eq!(metadata["HttpTokens"], "optional", "{data:#}");
            assert_eq!(metadata["HttpProtocolIpv6"], "enabled", "{data:#}");
        } else {
            // The defaults (`ec2nodeclass_defaults.go`).
            assert_eq!(metadata["HttpEndpoint"], "enabled", "{data:#}");
            assert_eq!(metadata["HttpProtocolIpv6"], "disabled", "{data:#}");
            assert_eq!(metadata["HttpPutResponseHopLimit"], 1, "{data:#}");
            assert_eq!(metadata["HttpTokens"], "required", "{data:#}");
        }
        assert_eq!(metadata["InstanceMetadataTags"], "disabled", "{data:#}");
        if ud.contains("/etc/eks/bootstrap.sh") {
            let specs = data["TagSpecifications"].as_array().unwrap();
            let interfaces = specs
                .iter()
                .find(|s| s["ResourceType"] == "network-interface")
                .unwrap_or_else(|| panic!("{data:#}"));
            let tags = interfaces["Tags"].to_string();
            for want in ["tag1value", "tag2value"] {
                assert!(tags.contains(want), "{data:#}");
            }
            assert!(
                !specs
                    .iter()
                    .any(|s| s["ResourceType"] == "spot-instances-request"),
                "on-demand: no spot request tags {data:#}"
            );
        }
    }
}

/// aws v1.14.1 pkg/providers/launchtemplate/suite_test.go "Ephemeral Storage" (the suite's
/// al2023 class: a 20Gi root volume, 1Gi kube-reserved and a 10 % nodefs threshold leave 17Gi):
/// It: "should pack pods when a daemonset has an ephemeral-storage request"
/// It: "should pack pods with any ephemeral-storage request" (1G)
/// It: "should pack pods with large ephemeral-storage request" (10Gi)
/// It: "should not pack pods if the sum of pod ephemeral-storage and overhead exceeds node capacity" (19Gi)
/// It: "should pack pods if the pod's ephemeral-storage exceeds node capacity and instance storage is mounted" (RAID0, 5000Gi)
/// It: "should launch multiple nodes if sum of pod ephemeral-storage requests exceeds a single nodes capacity" (2 × 10Gi)
/// It: "should only pack pods with ephemeral-storage requests that will fit on an available node" (10Gi placed, 150Gi not)
/// It: "should not pack pod if no available instance types have enough storage" (150Gi)
/// It: "should pack pods using the blockdevicemappings from the provider spec when defined" (xvda 50G: 25Gi)
/// It: "should pack pods using blockdevicemappings for Custom AMIFamily" (the last mapping, xvdb 40G: 25Gi)
/// It: "should pack pods using the configured root volume in blockdevicemappings" (rootVolume xvdb 40G: 25Gi)
#[test]
fn ephemeral_storage_packs_as_upstream() {
    let eph = |q: &str| requests(json!({ "ephemeral-storage": q }));
    let ebs = |device: &str, size: &str, root: bool| json!({"deviceName": device, "ebs": {"volumeSize": size}, "rootVolume": root});
    let custom = |mappings: Vec<Value>| {
        json!({"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}],
            "userData": "#!/bin/bash\n", "blockDeviceMappings": mappings})
    };
    let mut items = Vec::new();
    let mut add =
        |name: &str, class: Value, pod: Value| items.extend(lone(name, vec![], class, pod));
    add("ds", json!({}), json!({}));
    add("any", json!({}), eph("1G"));
    add("large", json!({}), eph("10Gi"));
    add("over", json!({}), eph("19Gi"));
    add(
        "raid0",
        json!({"instanceStorePolicy": "RAID0"}),
        eph("5000Gi"),
    );
    add("two", json!({}), eph("10Gi"));
    add("fits", json!({}), eph("10Gi"));
    add("none", json!({}), eph("150Gi"));
    add(
        "bdm",
        json!({"blockDeviceMappings": [ebs("/dev/xvda", "50G", false), ebs("/dev/xvdb", "20G", false)]}),
        eph("25Gi"),
    );
    add(
        "custom",
        custom(vec![
            ebs("/dev/xvda", "20G", false),
            ebs("/dev/xvdb", "40G", false),
        ]),
        eph("25Gi"),
    );
    add(
        "rootvol",
        custom(vec![
            ebs("/dev/xvda", "20G", false),
            ebs("/dev/xvdb", "40G", true),
            ebs("/dev/xvdc", "20G", false),
        ]),
        eph("25Gi"),
    );
    items.extend(more_pods("two", &[json!({"ephemeral-storage": "10Gi"})]));
    items.extend(more_pods("fits", &[json!({"ephemeral-storage": "150Gi"})]));
    // The DaemonSet of the first It, on every node of pool `ds` (1 CPU, 1Gi, 1Gi ephemeral).
    items.push(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "ds"}}, "template": {
            "metadata": {"labels": {"app": "ds"}},
            "spec": {"nodeSelector": {"karpenter.sh/nodepool": "ds"},
                "containers": [{"name": "ds", "image": "registry.k8s.io/pause",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}}}]}}}}));
    let plan = plan_items(items);
    for placed in [
        "ds", "any", "large", "raid0", "two", "two-0", "fits", "bdm", "custom", "rootvol",
    ] {
        assert!(
            claim_of(&plan, placed).is_some(),
            "{placed} pending: {plan:#}"
        );
    }
    for pending in ["over", "fits-0", "none"] {
        assert!(
            claim_of(&plan, pending).is_none(),
            "{pending} placed: {plan:#}"
        );
    }
    assert_eq!(claims_of(&plan, "two").len(), 2, "{plan:#}");
    let ds = claim_of(&plan, "ds").unwrap();
    assert!(
        ds["requests"]["ephemeral-storage"].is_string(),
        "the DaemonSet's ephemeral storage counts: {ds:#}"
    );
}

/// aws v1.14.1 pkg/cloudprovider/suite_test.go › MinValues, on the fixture catalog of
/// `upstream_aws_binary2` (t3.small: 1 CPU; m5.xlarge: 4; c5.2xlarge: 8; two 0.9-CPU pods per pool):
/// It: "CreateFleet input should respect minValues for Exists Operator in requirement from NodePool"
/// (`instance-type Exists` minValues 2 beside `In [t3.small, c5.2xlarge]` minValues 1: two NodeClaims, each listing both),
/// It: "CreateFleet input should respect minValues from multiple keys in NodePool"
/// (`instance-type` minValues 2 and `instance-family` minValues 3 over three families: two NodeClaims, each listing all three).
#[test]
fn min_values_of_exists_and_of_several_keys_keep_every_type() {
    let both = json!({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]});
    let types = |values: &[&str], min: i64| json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": values, "minValues": min});
    let cpu = requests(json!({"cpu": "900m"}));
    let mut items = lone(
        "exists",
        vec![
            both.clone(),
            json!({"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 2}),
            types(&["t3.small", "c5.2xlarge"], 1),
        ],
        json!({}),
        cpu.clone(),
    );
    items.extend(more_pods("exists", &[json!({"cpu": "900m"})]));
    items.extend(lone(
        "keys",
        vec![
            both,
            types(&["t3.small", "m5.xlarge", "c5.2xlarge"], 2),
            json!({"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                "values": ["t3", "m5", "c5"], "minValues": 3}),
        ],
        json!({}),
        cpu,
    ));
    items.extend(more_pods("keys", &[json!({"cpu": "900m"})]));
    let plan = crate::upstream_aws_binary2::plan_catalog(items);
    for (pool, want) in [
        ("exists", vec!["c5.2xlarge", "t3.small"]),
        ("keys", vec!["c5.2xlarge", "m5.xlarge", "t3.small"]),
    ] {
        let a = claim_of(&plan, pool).unwrap_or_else(|| panic!("{pool}: {plan:#}"));
        let b = claim_of(&plan, &format!("{pool}-0")).unwrap_or_else(|| panic!("{pool}: {plan:#}"));
        assert_ne!(a["name"], b["name"], "{pool}: one NodeClaim {plan:#}");
        for c in [a, b] {
            let mut got: Vec<&str> = (c["instanceTypes"].as_array().unwrap().iter())
                .map(|t| t.as_str().unwrap())
                .collect();
            got.sort_unstable();
            assert_eq!(got, want, "{pool}: {c:#}");
        }
    }
}
