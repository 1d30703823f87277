//! Hash values pinned by upstream tests and read from real clusters.

use serde_json::{json, Value};

use super::{confirm_ca_term, node_class_hash, node_pool_hash, spec_hash_without_ca, CaTerm};
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

pub(super) fn pool(spec: Value) -> NodePool {
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
fn nodepool_v3_matches_a_published_self_managed_default_pool() {
    // A self-managed Karpenter v1 cluster's `kubectl get nodepools -o yaml`, as published in
    // public docs (found in session 13's sweep; docs/upstream-tests.md): the getting-started
    // pool (no template metadata, no terminationGracePeriod, an EC2NodeClass reference),
    // nodepool-hash 6821555240594823858, v3. Requirements, limits and disruption are not hashed.
    let spec = json!({
        "disruption": {
            "budgets": [{"nodes": "10%"}],
            "consolidateAfter": "1m",
            "consolidationPolicy": "WhenEmptyOrUnderutilized"
        },
        "limits": {"cpu": 1000},
        "template": {
            "spec": {
                "expireAfter": "720h",
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]}
                ]
            }
        }
    });
    assert_eq!(
        node_pool_hash(&pool(spec.clone()), "v3").as_deref(),
        Ok("6821555240594823858")
    );
    // expireAfter's CRD default is 720h: leaving it out hashes the same.
    let mut defaulted = spec;
    defaulted["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("expireAfter");
    assert_eq!(
        node_pool_hash(&pool(defaulted), "v3").as_deref(),
        Ok("6821555240594823858")
    );
}

#[test]
fn nodepool_v3_matches_a_pool_with_a_template_label_posted_in_an_issue() {
    // aws/karpenter-provider-aws#8986 (2026-02): a v1 pool migrated from v1beta1, posted with
    // nodepool-hash 9287886404796875480, v3; the template has one label and `expireAfter`
    // as the API server returns it (`720h0m0s`). The post is cut after `node…`: completed
    // with an EC2NodeClass reference to `default` (its compatibility annotation names it), no
    // taints and no terminationGracePeriod — the 64-bit match confirms the completion.
    // `core v1.14.1 pkg/apis/v1/nodepool.go` `Hash()`; requirements, limits, budgets unhashed.
    let spec = json!({
        "disruption": {
            "budgets": [{"nodes": "30%"}],
            "consolidateAfter": "1m",
            "consolidationPolicy": "WhenEmptyOrUnderutilized"
        },
        "limits": {"cpu": 500, "memory": "2000Gi"},
        "template": {
            "metadata": {"labels": {"role": "default"}},
            "spec": {
                "expireAfter": "720h0m0s",
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
            }
        }
    });
    assert_eq!(
        node_pool_hash(&pool(spec.clone()), "v3").as_deref(),
        Ok("9287886404796875480")
    );
    // The label is hashed: another value is another hash (NodePoolDrifted on a relabel).
    let mut relabelled = spec;
    relabelled["template"]["metadata"]["labels"]["role"] = json!("batch");
    assert_ne!(
        node_pool_hash(&pool(relabelled), "v3").as_deref(),
        Ok("9287886404796875480")
    );
}

/// `core v1.14.1: pkg/apis/v1/nodepool.go` `Hash()` hashes the whole `spec.template`, its
/// `metadata.annotations` included (`nodeclaim/disruption/drift_test.go` "NodePool Static Drift ›
/// should detect drift on changes to the static fields", the Annotations entry): adding,
/// changing or removing a template annotation changes the hash; the order of the keys does not.
#[test]
fn template_annotations_are_in_the_nodepool_hash() {
    let with = |annotations: Value| {
        let spec = json!({
            "template": {
                "metadata": {"annotations": annotations, "labels": {"keyLabel": "valueLabel"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": []
                }
            }
        });
        node_pool_hash(&pool(spec), "v3").unwrap()
    };
    let base = with(json!({"keyAnnotation": "valueAnnotation"}));
    assert_eq!(
        base,
        with(json!({"keyAnnotation": "valueAnnotation"})),
        "stable"
    );
    for changed in [
        json!({"keyAnnotation": "valueAnnotation", "keyAnnotation2": "valueAnnotation2"}),
        json!({"keyAnnotation": "other"}),
        json!({}),
    ] {
        assert_ne!(with(changed.clone()), base, "{changed}");
    }
    assert_eq!(
        with(json!({"b": "2", "a": "1"})),
        with(json!({"a": "1", "b": "2"}))
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
    assert!(node_pool_hash(&beta, "v3").unwrap_err().contains("v1beta1"));
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

/// The Its of `aws v1.14.1: pkg/apis/v1/ec2nodeclass_hash_test.go` beside its value table, and
/// of `pkg/controllers/nodeclass/hash/suite_test.go` (what the controller's hash follows), as
/// invariances of the v5 hash: "should change hash when instanceProfile is updated", "should not
/// change hash when tags are re-ordered", "should not change hash when behavior/dynamic fields are
/// updated" (the four selector terms, capacity reservations included), "should expect two
/// EC2NodeClasses with the same spec to have the same hash"; the controller's "should update the
/// drift hash when static field is updated" (7 Entries on `test.EC2NodeClass`: no metadataOptions,
/// so the CRD default `httpEndpoint: enabled`), "… when the CA bundle changes", "should not update
/// the drift hash when dynamic field is updated" (id terms); and `pkg/cloudprovider/suite_test.go`
/// "should not return drifted if dynamic fields are updated" › "AMI Drift" (`amiFamily: AL2023`
/// with tag terms hashes as the alias `al2023@latest` it replaces: `AMIFamily()` is hashed, not
/// the field).
#[test]
fn ec2nodeclass_hash_follows_the_providers_invariances() {
    let ca = || Ok(CaTerm::of_bundle("test-ca-bundle"));
    let v5 = |spec: Value| node_class_hash(&class(spec), "v5", ca()).unwrap();
    let base = v5(upstream_base());
    let mut profile = upstream_change("InstanceProfile");
    let with_profile = v5(profile.clone());
    profile["instanceProfile"] = json!("other-instance-profile");
    assert_ne!(v5(profile), with_profile, "instanceProfile updated");
    let mut reordered = upstream_base();
    reordered["tags"] = json!({"keyTag-2": "valueTag-2", "keyTag-1": "valueTag-1"});
    assert_eq!(v5(reordered), base, "tags re-ordered");
    let mut dynamic = upstream_base();
    dynamic["subnetSelectorTerms"] = json!([{"tags": {"subnet-test-key": "subnet-test-value"}}]);
    dynamic["securityGroupSelectorTerms"] = json!([{"tags": {"sg-test-key": "sg-test-value"}}]);
    dynamic["amiSelectorTerms"] = json!([{"tags": {"ami-test-key": "ami-test-value"}}]);
    dynamic["capacityReservationSelectorTerms"] =
        json!([{"tags": {"cr-test-key": "cr-test-value"}}]);
    dynamic["ipPrefixCount"] = json!(2);
    assert_eq!(v5(dynamic), base, "behavior/dynamic fields");
    let mut other = class(upstream_base());
    other.name = "other".into();
    assert_eq!(
        node_class_hash(&other, "v5", ca()).unwrap(),
        base,
        "same spec"
    );
    assert_ne!(
        node_class_hash(
            &class(upstream_base()),
            "v5",
            Ok(CaTerm::of_bundle("new-ca-bundle"))
        )
        .unwrap(),
        base,
        "CA bundle changed"
    );

    // The controller suite's class: wildcard terms, Custom family.
    let controller = || {
        json!({
            "role": "role",
            "amiFamily": "Custom",
            "amiSelectorTerms": [{"tags": {"*": "*"}}],
            "subnetSelectorTerms": [{"tags": {"*": "*"}}],
            "securityGroupSelectorTerms": [{"tags": {"*": "*"}}]
        })
    };
    let plain = v5(controller());
    let changes: [(&str, Value); 7] = [
        ("UserData", json!({"userData": "userdata-test-2"})),
        (
            "Tags",
            json!({"tags": {"keyTag-test-3": "valueTag-test-3"}}),
        ),
        (
            "BlockDeviceMappings",
            json!({"blockDeviceMappings": [{"deviceName": "map-device-test-3"}]}),
        ),
        ("DetailedMonitoring", json!({"detailedMonitoring": true})),
        (
            "MetadataOptions",
            json!({"metadataOptions": {"httpEndpoint": "disabled"}}),
        ),
        ("Context", json!({"context": "context-2"})),
        (
            "CPUOptions",
            json!({"cpuOptions": {"nestedVirtualization": "enabled"}}),
        ),
    ];
    for (name, change) in changes {
        let mut spec = controller();
        for (k, v) in change.as_object().unwrap() {
            spec[k] = v.clone();
        }
        assert_ne!(v5(spec), plain, "{name} Drift");
    }
    let mut ids = controller();
    ids["subnetSelectorTerms"] = json!([{"id": "subnet-test1"}]);
    ids["securityGroupSelectorTerms"] = json!([{"id": "sg-test1"}]);
    ids["amiSelectorTerms"] = json!([{"tags": {"ami-test-key": "ami-test-value"}}]);
    assert_eq!(v5(ids), plain, "dynamic fields (id terms)");

    // cloudprovider suite, Static Drift Detection: the alias's family is what is hashed.
    let mut alias = upstream_base();
    alias["amiSelectorTerms"] = json!([{"alias": "al2023@latest"}]);
    let mut family = upstream_base();
    family["amiFamily"] = json!("AL2023");
    family["amiSelectorTerms"] = json!([{"tags": {"ami-key-1": "ami-value-1"}}]);
    assert_eq!(v5(family.clone()), v5(alias), "AMI Drift entry");
    family["amiFamily"] = json!("Bottlerocket");
    assert_ne!(v5(family), base, "a different family is static");
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

fn beta_class(spec: Value) -> NodeClass {
    NodeClass {
        generation: Some(ApiGeneration::V1Beta1),
        ..class(spec)
    }
}

#[test]
fn v1beta1_ec2nodeclass_v2_matches_provider_v0_37_7_static_hashes() {
    // aws/karpenter-provider-aws v0.37.7 pkg/apis/v1beta1/ec2nodeclass_hash_test.go: the v1
    // base with `amiFamily: AL2023` (hashed in v1beta1), merged the same way.
    let table = [
        ("Base", "10790156025840984195"),
        ("UserData", "18317182711135792962"),
        ("Tags", "7254882043893135054"),
        ("Context", "17271601354348855032"),
        ("DetailedMonitoring", "3320998103335094348"),
        ("InstanceStorePolicy", "15591048753403695860"),
        ("AssociatePublicIPAddress", "8788624850560996180"),
        ("HTTPEndpoint", "12130088184516131939"),
        ("HTTPProtocolIPv6", "9851778617676567202"),
        ("HTTPPutResponseHopLimit", "10114972825726256442"),
        ("HTTPTokens", "15328515228245883488"),
        ("DeviceName", "14855383487702710824"),
        ("RootVolume", "9591488558660758449"),
        ("DeleteOnTermination", "2802222466202766732"),
        ("Encrypted", "16743053872042184219"),
        ("IOPS", "17284705682110195253"),
        ("KMSKeyID", "9151019926310241707"),
        ("SnapshotID", "5250341140179985875"),
        ("Throughput", "16711481758638864953"),
        ("VolumeType", "488614640133725370"),
        ("VolumeSize", "4802236799448001710"),
        ("InstanceProfile", "7914642030762404205"),
        ("ReorderBlockDevices", "10790156025840984195"),
        ("AMISelector", "10790156025840984195"),
    ];
    for (change, want) in table {
        let mut spec = upstream_change(change);
        spec["amiFamily"] = json!("AL2023");
        let got = node_class_hash(&beta_class(spec), "v2", Err("none"));
        assert_eq!(got.as_deref(), Ok(want), "{change}");
    }
    let mut bottlerocket = upstream_base();
    bottlerocket["amiFamily"] = json!("Bottlerocket");
    assert_eq!(
        node_class_hash(&beta_class(bottlerocket), "v2", Err("none")).as_deref(),
        Ok("11029247967399146065")
    );
}

#[test]
fn v1beta1_ec2nodeclass_v1_matches_provider_v0_35_12_static_hashes() {
    // aws/karpenter-provider-aws v0.35.12 pkg/apis/v1beta1/ec2nodeclass_hash_test.go (hash v1;
    // `mergo.Merge(…, WithOverride)`: maps gain keys, slices are replaced).
    let base = || {
        json!({
            "amiFamily": "AL2",
            "context": "context-1",
            "role": "role-1",
            "tags": {"keyTag-1": "valueTag-1", "keyTag-2": "valueTag-2"},
            "metadataOptions": {"httpEndpoint": "test-metadata-1"},
            "blockDeviceMappings": [{"deviceName": "map-device-1"}, {"deviceName": "map-device-2"}],
            "userData": "userdata-test-1",
            "detailedMonitoring": false
        })
    };
    let mut table: Vec<(Value, &str)> = vec![(base(), "16608948681250225098")];
    let mut add = |f: &dyn Fn(&mut Value), want: &'static str| {
        let mut s = base();
        f(&mut s);
        table.push((s, want));
    };
    add(
        &|s| s["userData"] = json!("userdata-test-2"),
        "588756456110800812",
    );
    add(
        &|s| s["tags"]["keyTag-test-3"] = json!("valueTag-test-3"),
        "2471764681523766508",
    );
    add(
        &|s| s["metadataOptions"]["httpEndpoint"] = json!("test-metadata-2"),
        "11030161632375731908",
    );
    add(
        &|s| s["blockDeviceMappings"] = json!([{"deviceName": "map-device-test-3"}]),
        "436753305915039702",
    );
    add(
        &|s| s["context"] = json!("context-2"),
        "3729470655588343019",
    );
    add(
        &|s| s["detailedMonitoring"] = json!(true),
        "17892305444040067573",
    );
    add(
        &|s| s["amiFamily"] = json!("Bottlerocket"),
        "9493798894326942407",
    );
    add(
        &|s| {
            s.as_object_mut().unwrap().remove("role");
            s["instanceProfile"] = json!("test-instance-profile");
        },
        "15756064858220068103",
    );
    // Upstream hashes the struct as built, without CRD defaults (`metadataOptions` has only
    // `httpEndpoint`), so the spec is hashed as written here.
    for (spec, want) in table {
        let got = spec_hash_without_ca(
            spec.as_object().unwrap(),
            Some(ApiGeneration::V1Beta1),
            "v1",
        )
        .map(|h| h.to_string());
        assert_eq!(got.as_deref(), Ok(want), "{spec}");
    }
    // v1 hashed volumeSize as a Quantity struct: refused rather than guessed.
    let mut sized = base();
    sized["blockDeviceMappings"] = json!([{"ebs": {"volumeSize": "20Gi"}}]);
    assert!(node_class_hash(&beta_class(sized), "v1", Err("none"))
        .unwrap_err()
        .contains("Quantity struct"));
}

#[test]
fn v1beta1_nodepool_v2_matches_real_clusters() {
    let beta = |template: Value| NodePool {
        generation: Some(ApiGeneration::V1Beta1),
        ..pool(json!({ "template": template }))
    };
    // AKS node auto-provisioning (Karpenter v1beta1), `default` NodePool as read back from a
    // cluster and published in a public deployment script: nodepool-hash 12393960163388511505.
    let aks = beta(json!({"spec": {
        "nodeClassRef": {"name": "default"},
        "requirements": [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}
        ]
    }}));
    assert_eq!(
        node_pool_hash(&aks, "v2").as_deref(),
        Ok("12393960163388511505")
    );
    // Karpenter's own docs (website v0.37 "NodeClaims" concept page): a NodeClaim of the
    // getting-started NodePool, nodepool-hash 15093649574832938182 at v2, whose template
    // sets only the nodeClassRef (and requirements, which are not hashed).
    let docs = beta(json!({"spec": {
        "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "default"},
        "requirements": []
    }}));
    assert_eq!(
        node_pool_hash(&docs, "v2").as_deref(),
        Ok("15093649574832938182")
    );
    // v1 differs from v2 only in how kubelet reserved resources are hashed.
    assert_eq!(
        node_pool_hash(&aks, "v1").as_deref(),
        Ok("12393960163388511505")
    );
}

/// Real clusters, session 15's sweep of public write-ups (docs/upstream-tests.md, "Real hash
/// values"): each object as the API server stores it (status and server-set metadata dropped,
/// CRD defaults kept), with the annotation the controller wrote for it.
#[test]
fn ec2nodeclass_v3_matches_a_published_self_managed_default_class() {
    // `kubectl get ec2nodeclasses -o yaml` of an eksdemo-built cluster "blue" on Karpenter
    // v1.0 (public GitBook notes "Default EC2NodeClass", beside the NodePool of
    // nodepool_v3_matches_a_published_self_managed_default_pool, same creation time):
    // ec2nodeclass-hash 3511393923618188278, v3, generation 1.
    let spec = json!({
        "amiFamily": "AL2",
        "amiSelectorTerms": [{"id": "ami-01637a5ffbb75ef5c"}, {"id": "ami-0f9b86b5fcf375aca"}],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required"
        },
        "role": "KarpenterNodeRole-blue",
        "securityGroupSelectorTerms": [{"tags": {"aws:eks:cluster-name": "blue"}}],
        "subnetSelectorTerms": [{"tags": {"Name": "eksctl-blue-cluster/SubnetPrivate*"}}],
        "tags": {"eksdemo.io/version": "0.16.0"}
    });
    assert_eq!(
        node_class_hash(&class(spec), "v3", Err("none")).as_deref(),
        Ok("3511393923618188278")
    );
}

#[test]
fn ec2nodeclass_v4_and_nodepool_v3_match_a_published_al2023_cluster() {
    // "Karpenter Configuration (Layer 4)" (a public EKS course's notes, 2026-07): the applied
    // manifests and `kubectl describe` of the stored objects, generation 1, annotations
    // ec2nodeclass-hash 6409880261969345973 (v4) and nodepool-hash 11142864721958693070 (v3)
    // on both NodePools. The manifest sets only httpTokens and the hop limit; the CRD filled
    // httpEndpoint and httpProtocolIPv6 (describe shows them), kept here as stored.
    let spec = json!({
        "amiFamily": "AL2023",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "blockDeviceMappings": [{
            "deviceName": "/dev/xvda",
            "ebs": {"deleteOnTermination": true, "encrypted": true, "volumeSize": "20Gi", "volumeType": "gp3"}
        }],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 2,
            "httpTokens": "required"
        },
        "role": "arn:aws:iam::088354478627:role/drwp-dev-karpenter-node-role",
        "securityGroupSelectorTerms": [{"tags": {"kubernetes.io/cluster/eks-control-plane": "owned"}}],
        "subnetSelectorTerms": [{"tags": {
            "kubernetes.io/cluster/eks-control-plane": "owned",
            "kubernetes.io/role/internal-elb": "1"
        }}],
        "tags": {"karpenter.sh/discovery": "eks-control-plane"}
    });
    assert_eq!(
        node_class_hash(&class(spec), "v4", Err("none")).as_deref(),
        Ok("6409880261969345973")
    );
    // Both pools write `taints: []` and `startupTaints: []`: empty but non-nil slices, which
    // hashstructure does not skip as zero values. Requirements, limits and disruption (the
    // only differences between the on-demand and the spot pool) are not hashed.
    for (capacity, zone) in [("on-demand", "us-east-2a"), ("spot", "us-east-1a")] {
        let spec = json!({
            "disruption": {"budgets": [{"nodes": "10%"}], "consolidateAfter": "30s", "consolidationPolicy": "WhenEmptyOrUnderutilized"},
            "limits": {"cpu": "50"},
            "template": {"spec": {
                "expireAfter": "720h",
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default-ec2nodeclass"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
                ],
                "startupTaints": [],
                "taints": []
            }}
        });
        assert_eq!(
            node_pool_hash(&pool(spec.clone()), "v3").as_deref(),
            Ok("11142864721958693070"),
            "{capacity}"
        );
        // Without the empty lists the hash differs: they are part of the value.
        let mut bare = spec;
        let t = bare["template"]["spec"].as_object_mut().unwrap();
        t.remove("taints");
        t.remove("startupTaints");
        assert_ne!(
            node_pool_hash(&pool(bare), "v3").as_deref(),
            Ok("11142864721958693070")
        );
    }
}

#[test]
fn ec2nodeclass_v4_and_nodepool_v3_match_a_published_gpu_node() {
    // github.com/gnosia93/training-on-eks (a public EKS training workshop, 2025-12): a p4d
    // node's `kubectl describe node` carries ec2nodeclass-hash 9766261846345886753 (v4) and
    // nodepool-hash 3665531442370852411 (v3), written at launch; the workshop's
    // `nodepool-gpu.yaml` holds both objects. The class sets no metadataOptions: the CRD
    // default (enabled, disabled, hop limit 1, required) is what was stored and hashed.
    let spec = json!({
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "300Gi", "volumeType": "gp3"}}],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required"
        },
        "role": "eksctl-KarpenterNodeRole-training-on-eks",
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "training-on-eks"}}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "training-on-eks"}}]
    });
    assert_eq!(
        node_class_hash(&class(spec), "v4", Err("none")).as_deref(),
        Ok("9766261846345886753")
    );
    // The pool as the node was launched from: the posted manifest today also sets a template
    // label `nodeType: nvidia` that the node does not carry (added after the launch); without
    // it the launch hash is reproduced, with it the hash is the "drifted" one.
    let template = |labels: Option<Value>| {
        let mut t = json!({"spec": {
            "expireAfter": "720h",
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
            "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g", "p"]}],
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        }});
        if let Some(labels) = labels {
            t["metadata"] = json!({ "labels": labels });
        }
        pool(json!({"limits": {"cpu": 1000}, "template": t}))
    };
    assert_eq!(
        node_pool_hash(&template(None), "v3").as_deref(),
        Ok("3665531442370852411")
    );
    assert_ne!(
        node_pool_hash(&template(Some(json!({"nodeType": "nvidia"}))), "v3").as_deref(),
        Ok("3665531442370852411")
    );
}

#[test]
fn nodepool_v3_matches_the_nodeclaim_of_karpenters_v1_docs() {
    // Karpenter's docs, "NodeClaims" concept page (v1.0 and later): `kubectl describe
    // nodeclaim default-x9wxq`, nodepool-hash 377058807571762610 (v3), written at launch on
    // 2024-08-07. Its spec shows the template as launched: expireAfter 720h, terminationGracePeriod
    // 1h, a nodeClassRef with an empty group (a pool converted from v1beta1). The page also shows
    // taints `app.dev/example` and `app.dev/example-startup`, edited into the example later: with
    // them the value is not reproduced, without them it is.
    let template = |taints: bool| {
        let mut spec = json!({
            "expireAfter": "720h",
            "nodeClassRef": {"group": "", "kind": "EC2NodeClass", "name": "default"},
            "terminationGracePeriod": "1h0m0s"
        });
        if taints {
            spec["taints"] = json!([{"key": "app.dev/example", "effect": "NoSchedule"}]);
            spec["startupTaints"] =
                json!([{"key": "app.dev/example-startup", "effect": "NoSchedule"}]);
        }
        pool(json!({ "template": { "spec": spec } }))
    };
    assert_eq!(
        node_pool_hash(&template(false), "v3").as_deref(),
        Ok("377058807571762610")
    );
    assert_ne!(
        node_pool_hash(&template(true), "v3").as_deref(),
        Ok("377058807571762610")
    );
}
