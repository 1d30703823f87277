//! Hash values pinned by upstream tests and read from real clusters.

use serde_json::{json, Value};

use super::{confirm_ca_term, node_class_hash, node_pool_hash, CaTerm};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};

fn class(spec: Value) -> NodeClass {
    NodeClass {
        name: "test".into(),
        kind: "EC2NodeClass".into(),
        generation: Some(ApiGeneration::V1),
        raw_spec: Some(spec),
        ..Default::default()
    }
}

fn pool(spec: Value) -> NodePool {
    NodePool {
        name: "test".into(),
        generation: Some(ApiGeneration::V1),
        raw_spec: Some(spec),
        ..Default::default()
    }
}

/// The base EC2NodeClass of aws/karpenter-provider-aws `pkg/apis/v1/ec2nodeclass_hash_test.go`
/// (v1.0.8, v1.11.3 and v1.14.1 share it), as JSON.
fn upstream_base() -> Value {
    json!({
        "role": "role-1",
        "tags": {"keyTag-1": "valueTag-1", "keyTag-2": "valueTag-2"},
        "context": "fake-context",
        "detailedMonitoring": false,
        "associatePublicIPAddress": false,
        "metadataOptions": {
            "httpEndpoint": "disabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "optional"
        },
        "blockDeviceMappings": [
            {
                "deviceName": "map-device-1",
                "rootVolume": false,
                "ebs": {
                    "deleteOnTermination": false,
                    "encrypted": false,
                    "iops": 0,
                    "kmsKeyID": "fakeKMSKeyID",
                    "snapshotID": "fakeSnapshot",
                    "throughput": 0,
                    "volumeSize": "2G",
                    "volumeType": "standard"
                }
            },
            {"deviceName": "map-device-2"}
        ],
        "userData": "userdata-test-1"
    })
}

/// The upstream table's `mergo.Merge(…, WithOverride, WithSliceDeepCopy)` changes: maps gain
/// keys, pointers to structs merge field by field, slices merge element by element.
fn upstream_change(name: &str) -> Value {
    let mut s = upstream_base();
    let bdm0 = |s: &mut Value| s["blockDeviceMappings"][0].clone();
    match name {
        "UserData" => s["userData"] = json!("userdata-test-2"),
        "Tags" => s["tags"]["keyTag-test-3"] = json!("valueTag-test-3"),
        "Context" => s["context"] = json!("context-2"),
        "DetailedMonitoring" => s["detailedMonitoring"] = json!(true),
        "InstanceStorePolicy" => s["instanceStorePolicy"] = json!("RAID0"),
        "AssociatePublicIPAddress" => s["associatePublicIPAddress"] = json!(true),
        "HTTPEndpoint" => s["metadataOptions"]["httpEndpoint"] = json!("enabled"),
        "HTTPProtocolIPv6" => s["metadataOptions"]["httpProtocolIPv6"] = json!("enabled"),
        "HTTPPutResponseHopLimit" => s["metadataOptions"]["httpPutResponseHopLimit"] = json!(10),
        "HTTPTokens" => s["metadataOptions"]["httpTokens"] = json!("required"),
        "DeviceName" => s["blockDeviceMappings"][0]["deviceName"] = json!("map-device-test-3"),
        "RootVolume" => s["blockDeviceMappings"][0]["rootVolume"] = json!(true),
        "DeleteOnTermination" => {
            s["blockDeviceMappings"][0]["ebs"]["deleteOnTermination"] = json!(true)
        }
        "Encrypted" => s["blockDeviceMappings"][0]["ebs"]["encrypted"] = json!(true),
        "IOPS" => s["blockDeviceMappings"][0]["ebs"]["iops"] = json!(10),
        "KMSKeyID" => s["blockDeviceMappings"][0]["ebs"]["kmsKeyID"] = json!("test"),
        "SnapshotID" => s["blockDeviceMappings"][0]["ebs"]["snapshotID"] = json!("test"),
        "Throughput" => s["blockDeviceMappings"][0]["ebs"]["throughput"] = json!(10),
        "VolumeType" => s["blockDeviceMappings"][0]["ebs"]["volumeType"] = json!("io1"),
        "VolumeSize" => s["blockDeviceMappings"][0]["ebs"]["volumeSize"] = json!("10G"),
        "TCPEstablishedTimeout" => s["connectionTracking"] = json!({"tcpEstablishedTimeout": 300}),
        "UDPStreamTimeout" => s["connectionTracking"] = json!({"udpStreamTimeout": 120}),
        "UDPTimeout" => s["connectionTracking"] = json!({"udpTimeout": 45}),
        "NestedVirtualization" => s["cpuOptions"] = json!({"nestedVirtualization": "enabled"}),
        "InstanceProfile" => {
            s.as_object_mut().unwrap().remove("role");
            s["instanceProfile"] = json!("test-instance-profile");
        }
        "ReorderBlockDevices" => {
            let first = bdm0(&mut s);
            s["blockDeviceMappings"][0] = s["blockDeviceMappings"][1].clone();
            s["blockDeviceMappings"][1] = first;
        }
        "AMISelector" => s["amiSelectorTerms"] = json!([{"tags": {"": "ami-test-value"}}]),
        "SubnetSelector" => {
            s["subnetSelectorTerms"] = json!([{"tags": {"subnet-test-key": "subnet-test-value"}}])
        }
        "SecurityGroupSelector" => {
            s["securityGroupSelectorTerms"] =
                json!([{"tags": {"security-group-test-key": "security-group-test-value"}}])
        }
        "Base" => {}
        other => panic!("no change {other}"),
    }
    s
}

#[test]
fn ec2nodeclass_v5_matches_provider_v1_14_1_static_hashes() {
    // aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass_hash_test.go, caBundle
    // "test-ca-bundle".
    let table = [
        ("Base", "2608468723537941485"),
        ("UserData", "2153344579995979450"),
        ("Tags", "4608386791045313156"),
        ("Context", "11612053647989098410"),
        ("DetailedMonitoring", "11845605438531206428"),
        ("InstanceStorePolicy", "6430637013089544585"),
        ("AssociatePublicIPAddress", "6811176403923819181"),
        ("HTTPEndpoint", "8158886403801636337"),
        ("HTTPProtocolIPv6", "12355196004817691031"),
        ("HTTPPutResponseHopLimit", "8968306366664488826"),
        ("HTTPTokens", "12408995450371615650"),
        ("DeviceName", "13986335469721503441"),
        ("RootVolume", "14242690863945643402"),
        ("DeleteOnTermination", "12316454167870753581"),
        ("Encrypted", "17753517657333560591"),
        ("IOPS", "2249322442135400321"),
        ("KMSKeyID", "12259594419287406661"),
        ("SnapshotID", "1149563513090550380"),
        ("Throughput", "12068199760789564545"),
        ("VolumeType", "16361719363399715944"),
        ("TCPEstablishedTimeout", "12177489405137904098"),
        ("UDPStreamTimeout", "17567831983996427"),
        ("UDPTimeout", "5078825826133662844"),
        ("NestedVirtualization", "17001101224536964682"),
        ("VolumeSize", "3564293065344858862"),
        ("InstanceProfile", "3585768058063247698"),
        ("ReorderBlockDevices", "2608468723537941485"),
        ("AMISelector", "2608468723537941485"),
        ("SubnetSelector", "2608468723537941485"),
        ("SecurityGroupSelector", "2608468723537941485"),
    ];
    for (change, want) in table {
        let got = node_class_hash(
            &class(upstream_change(change)),
            "v5",
            Ok(CaTerm::of_bundle("test-ca-bundle")),
        );
        assert_eq!(got.as_deref(), Ok(want), "{change}");
    }
}

#[test]
fn ec2nodeclass_v4_and_v3_match_provider_v1_11_3_and_v1_0_8_static_hashes() {
    // aws/karpenter-provider-aws v1.11.3 (hash v4) and v1.0.8 (hash v3)
    // pkg/apis/v1/ec2nodeclass_hash_test.go: the same values (the base sets no kubelet).
    let table = [
        ("Base", "4950366118253097694"),
        ("UserData", "9034828637236670345"),
        ("Tags", "6878220270322275255"),
        ("Context", "13953931752662869657"),
        ("DetailedMonitoring", "14187487647319890991"),
        ("InstanceStorePolicy", "4160809219257698490"),
        ("AssociatePublicIPAddress", "4469320567057431454"),
        ("HTTPEndpoint", "1277386558528601282"),
        ("HTTPProtocolIPv6", "14697047633165484196"),
        ("HTTPPutResponseHopLimit", "2086799014304536137"),
        ("HTTPTokens", "14750841460622248593"),
        ("DeviceName", "11716516558705174498"),
        ("RootVolume", "11900810786014401721"),
        ("DeleteOnTermination", "14586255897156659742"),
        ("Encrypted", "10872029821841773628"),
        ("IOPS", "9202874311950700210"),
        ("KMSKeyID", "14601456769467439478"),
        ("SnapshotID", "8031059801598053215"),
        ("Throughput", "14410045481146650034"),
        ("VolumeType", "9480251663542054235"),
        ("VolumeSize", "5906178522470964189"),
        ("InstanceProfile", "5855570904022890593"),
        ("ReorderBlockDevices", "4950366118253097694"),
        ("AMISelector", "4950366118253097694"),
    ];
    for version in ["v4", "v3"] {
        for (change, want) in table {
            let got = node_class_hash(&class(upstream_change(change)), version, Err("none"));
            assert_eq!(got.as_deref(), Ok(want), "{version} {change}");
        }
    }
}

#[test]
fn kubelet_is_hashed_from_v4_only() {
    let mut spec = upstream_base();
    spec["kubelet"] = json!({"maxPods": 110});
    let with = class(spec);
    assert_eq!(
        node_class_hash(&with, "v3", Err("none")).as_deref(),
        Ok("4950366118253097694")
    );
    assert_ne!(
        node_class_hash(&with, "v4", Err("none")).as_deref(),
        Ok("4950366118253097694")
    );
}

#[test]
fn nodepool_v3_matches_a_real_eks_auto_mode_cluster() {
    // `kubectl get nodepool general-purpose -o yaml` on EKS Auto Mode, as published in the
    // EKS workshop (aws-samples/eks-workshop-v2, "Inspect Karpenter configuration", and
    // identical copies in several public write-ups): nodepool-hash 4012513481623584108, v3.
    let spec = json!({
        "disruption": {
            "budgets": [{"nodes": "10%"}],
            "consolidateAfter": "30s",
            "consolidationPolicy": "WhenEmptyOrUnderutilized"
        },
        "template": {
            "metadata": {},
            "spec": {
                "expireAfter": "336h",
                "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    {"key": "eks.amazonaws.com/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                    {"key": "eks.amazonaws.com/instance-generation", "operator": "Gt", "values": ["4"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                ],
                "terminationGracePeriod": "24h0m0s"
            }
        }
    });
    assert_eq!(
        node_pool_hash(&pool(spec), "v3").as_deref(),
        Ok("4012513481623584108")
    );
}

#[test]
fn unknown_versions_and_generations_are_refused_with_a_reason() {
    let p = pool(json!({"template": {}}));
    assert!(node_pool_hash(&p, "v2").unwrap_err().contains("version v2"));
    let beta = NodePool {
        generation: Some(ApiGeneration::V1Beta1),
        ..p
    };
    assert!(node_pool_hash(&beta, "v2").unwrap_err().contains("v1beta1"));
    let c = class(upstream_base());
    assert!(node_class_hash(&c, "v5", Err("no CA bundle"))
        .unwrap_err()
        .contains("no CA bundle"));
    assert!(node_class_hash(&c, "v6", Err("none")).is_err());
    let bad = class(json!({"blockDeviceMappings": [{"ebs": {"volumeSize": "1.5Gi"}}]}));
    assert!(node_class_hash(&bad, "v4", Err("none"))
        .unwrap_err()
        .contains("1.5Gi"));
}

fn annotated(mut c: NodeClass, hash: &str, version: &str) -> NodeClass {
    c.annotations
        .insert(labels::NODECLASS_HASH.into(), hash.into());
    c.annotations
        .insert(labels::NODECLASS_HASH_VERSION.into(), version.into());
    c
}

#[test]
fn the_ca_term_counts_only_when_a_class_annotation_confirms_it() {
    let ca = CaTerm::of_bundle("test-ca-bundle");
    let unedited = annotated(class(upstream_base()), "2608468723537941485", "v5");
    let edited = annotated(
        class(upstream_change("UserData")),
        "2608468723537941485",
        "v5",
    );
    // The bundle read from the cluster, confirmed by an unedited class.
    assert_eq!(
        confirm_ca_term(&[edited.clone(), unedited.clone()], Some("test-ca-bundle")),
        Ok(ca)
    );
    // Only an edited class: the bundle cannot be told apart from a wrong one.
    assert!(confirm_ca_term(std::slice::from_ref(&edited), Some("test-ca-bundle")).is_err());
    assert!(confirm_ca_term(std::slice::from_ref(&unedited), Some("other")).is_err());
    // Offline: two unedited classes reveal the term; one does not.
    let mut second = annotated(
        class(upstream_change("Context")),
        "11612053647989098410",
        "v5",
    );
    second.name = "second".into();
    assert_eq!(confirm_ca_term(&[unedited.clone(), second], None), Ok(ca));
    assert!(confirm_ca_term(&[unedited, edited], None).is_err());
}
