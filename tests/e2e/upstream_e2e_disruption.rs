//! Karpenter's own end-to-end suites, disruption side, replayed offline through the built
//! binary: `drift check -f` (which nodes drifted and why) and `consolidate -f --now` (what the
//! disruption controller starts now, pass by pass, within the budgets).
//!
//! Upstream (v1.14.1) runs these against a live EKS cluster: the default NodePool and
//! EC2NodeClass of `aws: test/pkg/environment/aws/default_nodepool.yaml` and
//! `default_ec2nodeclass.yaml`, a workload, a change, then expectations on which nodes drift, go
//! or stay. Here the cluster is the manifests Karpenter would have left at that moment: Nodes
//! and their NodeClaims (labels, `status.imageID`, the hash annotations written at launch, the
//! `Drifted` condition once the nodeclaim disruption controller has set it), the pods, the
//! NodePool and the EC2NodeClass with its resolved `status`. Each test names its upstream file
//! and It; docs/upstream-tests.md ("Karpenter's e2e suites, disruption") has the ledger.

use serde_json::{json, Value};

use crate::support::{karpenter, manifest_stream, write_temp};

/// The report clock: 2024-06-24T12:00:00Z.
const NOW: &str = "2024-06-24T12:00:00Z";

const POOL_HASH: &str = "karpenter.sh/nodepool-hash";
const POOL_HASH_VERSION: &str = "karpenter.sh/nodepool-hash-version";
const CLASS_HASH: &str = "karpenter.k8s.aws/ec2nodeclass-hash";
const CLASS_HASH_VERSION: &str = "karpenter.k8s.aws/ec2nodeclass-hash-version";

/// `aws: test/pkg/environment/aws/default_nodepool.yaml`.
fn default_pool() -> Value {
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "Never",
                                "budgets": [{"nodes": "100%"}]},
                 "limits": {"cpu": "1000", "memory": "1000Gi"},
                 "template": {"spec": {"expireAfter": "Never", "requirements": [
                     {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                     {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                     {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                     {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["4"]},
                     {"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn", "values": ["a1"]}],
                     "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}})
}

/// An AMI of the class's `status.amis` for one architecture.
fn ami(id: &str, arch: &str) -> Value {
    json!({"id": id, "name": format!("al2023-{id}"),
           "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": [arch]}]})
}

/// `aws: test/pkg/environment/aws/default_ec2nodeclass.yaml` (AL2023, discovery-tag selectors)
/// with the AMI pinned by id (`ami-amd`, as the drift suite pins `amdAMI`) and the status the
/// controller resolved: subnet `subnet-0`, security group `sg-1`, the AMI for amd64.
fn default_class() -> Value {
    json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"amiFamily": "AL2023", "role": "KarpenterNodeRole-e2e",
                 "amiSelectorTerms": [{"id": "ami-amd"}],
                 "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "e2e"}}],
                 "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "e2e"}}]},
        "status": {"subnets": [{"id": "subnet-0", "zone": "us-east-1a"}],
                   "securityGroups": [{"id": "sg-1"}],
                   "amis": [ami("ami-amd", "amd64")]}})
}

/// A Node Karpenter launched from the default pool: every label its NodeClaim carries, the
/// offline facts of its instance (subnet `subnet-0`, security group `sg-1`) as annotations.
fn node(name: &str, instance_type: &str) -> Value {
    let (family, size) = instance_type.split_once('.').unwrap();
    let generation: String = family.chars().filter(char::is_ascii_digit).collect();
    let arch = if family.ends_with('g') {
        "arm64"
    } else {
        "amd64"
    };
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": "2024-06-01T00:00:00Z",
            "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true",
                "karpenter.sh/registered": "true", "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/zone": "us-east-1a", "topology.kubernetes.io/region": "us-east-1",
                "karpenter.sh/capacity-type": "on-demand", "kubernetes.io/arch": arch,
                "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
                "karpenter.k8s.aws/instance-category": &family[..1],
                "karpenter.k8s.aws/instance-generation": generation,
                "karpenter.k8s.aws/instance-family": family, "karpenter.k8s.aws/instance-size": size},
            "annotations": {"kubectl-karpenter.io/subnet-id": "subnet-0",
                            "kubectl-karpenter.io/security-group-ids": "sg-1"}},
        "spec": {"providerID": format!("aws:///us-east-1a/i-{name}")},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "capacity": {"cpu": "8", "memory": "32Gi", "pods": "58"},
                   "allocatable": {"cpu": "7910m", "memory": "30Gi", "pods": "58"}}})
}

/// The node's NodeClaim: its labels, launched on `ami-amd`, initialized.
fn claim(node: &Value) -> Value {
    let name = node["metadata"]["name"].as_str().unwrap();
    json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("{name}-claim"), "creationTimestamp": "2024-06-01T00:00:00Z",
                     "labels": node["metadata"]["labels"], "annotations": {}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "requirements": [], "expireAfter": "Never"},
        "status": {"nodeName": name, "providerID": node["spec"]["providerID"], "imageID": "ami-amd",
                   "conditions": [{"type": "Initialized", "status": "True",
                                   "lastTransitionTime": "2024-06-01T00:05:00Z"}]}})
}

/// A pod of a Deployment (`app` label), bound to `node`, requesting `cpu`.
fn pod(name: &str, node: &str, app: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app},
                     "creationTimestamp": "2024-06-01T00:10:00Z",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app,
                                          "uid": format!("uid-{app}"), "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                 "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"},
                                                       {"type": "Ready", "status": "True"}]}})
}

/// The cluster of one scenario.
#[derive(Clone)]
struct Cluster {
    objects: Vec<Value>,
}

impl Cluster {
    /// The default pool and class, and `nodes` nodes of `instance_type` (`n0`, `n1`, …) with
    /// their NodeClaims, without hash annotations yet.
    fn new(nodes: usize, instance_type: &str) -> Cluster {
        let mut objects = vec![default_pool(), default_class()];
        for i in 0..nodes {
            let n = node(&format!("n{i}"), instance_type);
            objects.push(claim(&n));
            objects.push(n);
        }
        Cluster { objects }
    }

    /// [`Cluster::new`] launched from the pool and class as they are now (hash annotations).
    fn launched(nodes: usize, instance_type: &str) -> Cluster {
        let mut c = Cluster::new(nodes, instance_type);
        c.stamp_hashes();
        c
    }

    fn find(&mut self, kind: &str, name: &str) -> &mut Value {
        self.objects
            .iter_mut()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    fn pool(&mut self) -> &mut Value {
        self.find("NodePool", "default")
    }

    fn class(&mut self) -> &mut Value {
        self.find("EC2NodeClass", "default")
    }

    fn claims(&mut self) -> impl Iterator<Item = &mut Value> {
        self.objects.iter_mut().filter(|o| o["kind"] == "NodeClaim")
    }

    fn yaml(&self) -> String {
        manifest_stream(&self.objects)
    }

    /// Writes on every NodeClaim the hash annotations Karpenter writes at launch, as the tool
    /// computes them from the pool's and class's specs now: the claims then look launched from
    /// this very pool and class. `nodepool-hash` is v1.14.1's v3; `ec2nodeclass-hash` is v4, the
    /// same spec fields as v1.14.1's v5 without the cluster CA bundle v5 mixes in, which is not
    /// known offline (docs/drift.md; v5 itself: [`v5_class_hash_is_compared_as_karpenter_does`]).
    fn stamp_hashes(&mut self) {
        for claim in self.claims() {
            let a = claim["metadata"]["annotations"].as_object_mut().unwrap();
            for (key, version) in [(POOL_HASH, "v3"), (CLASS_HASH, "v4")] {
                a.insert(key.into(), json!("0"));
                a.insert(format!("{key}-version"), json!(version));
            }
        }
        for _ in 0..3 {
            let report = self.drift();
            let mut changed = false;
            for n in report["nodes"].as_array().unwrap() {
                for ch in n["changes"].as_array().unwrap() {
                    let field = ch["field"].as_str().unwrap();
                    if field.ends_with("-hash") {
                        let name = n["nodeClaim"].as_str().unwrap();
                        self.find("NodeClaim", name)["metadata"]["annotations"][field] =
                            ch["new"].clone();
                        changed = true;
                    }
                }
            }
            if !changed {
                let clean = report["summary"]["drifted"] == 0;
                assert!(clean, "launched cluster drifted: {report:#}");
                return;
            }
        }
        panic!("hash annotations did not settle");
    }

    /// Sets the `Drifted` condition the nodeclaim disruption controller sets (`reason`, an
    /// hour ago) on every NodeClaim.
    fn mark_drifted(&mut self, reason: &str) {
        for claim in self.claims() {
            claim["status"]["conditions"].as_array_mut().unwrap().push(
                json!({"type": "Drifted", "status": "True", "reason": reason,
                             "lastTransitionTime": "2024-06-24T11:00:00Z"}),
            );
        }
    }

    /// Sets `pairs` among every NodeClaim's annotations.
    fn annotate_claims(&mut self, pairs: &[(&str, &str)]) {
        for claim in self.claims() {
            for (k, v) in pairs {
                claim["metadata"]["annotations"][*k] = json!(v);
            }
        }
    }

    /// One pod of `app` requesting `cpu` on each of n0 … n(count-1).
    fn pod_per_node(&mut self, count: usize, app: &str, cpu: &str) {
        for i in 0..count {
            self.push(pod(&format!("p{i}"), &format!("n{i}"), app, cpu));
        }
    }

    /// Adds `requirement` to the pool's template.
    fn require(&mut self, requirement: Value) {
        self.pool()["spec"]["template"]["spec"]["requirements"]
            .as_array_mut()
            .unwrap()
            .push(requirement);
    }

    fn push(&mut self, o: Value) {
        self.objects.push(o);
    }

    /// `drift check -f - -o json`.
    fn drift(&self) -> Value {
        self.report(&["drift", "check", "-f", "-", "-o", "json"])
    }

    /// The JSON report of `kubectl-karpenter ARGS` on this cluster (exit 0 or 1).
    fn report(&self, args: &[&str]) -> Value {
        let run = karpenter(args, self.yaml().as_bytes());
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr))
    }

    /// `consolidate -f - --now NOW -o json`.
    fn consolidate(&self) -> Value {
        self.consolidate_with(&[])
    }

    /// `consolidate -f - --now NOW -o json EXTRA...`.
    fn consolidate_with(&self, extra: &[&str]) -> Value {
        let mut args = vec!["consolidate", "-f", "-", "--now", NOW, "-o", "json"];
        args.extend_from_slice(extra);
        self.report(&args)
    }
}

/// The one node's drift reason ("-" when not drifted).
fn reason(report: &Value) -> String {
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{report:#}");
    nodes[0]["reason"].as_str().unwrap_or("-").to_string()
}

/// `(node, decision, method)` per node of a consolidation report, and the reason of those left.
fn decisions(report: &Value) -> Vec<(String, String, String)> {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["decision"].as_str().unwrap().to_string(),
                n["method"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| n["reason"].as_str().unwrap_or("-").to_string()),
            )
        })
        .collect()
}

/// How many nodes the report disrupts with `method`.
pub(crate) fn disrupted_by(report: &Value, method: &str) -> usize {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["method"] == method)
        .count()
}

// ---------------------------------------------------------------------------------------------
// aws: test/suites/drift/suite_test.go
// ---------------------------------------------------------------------------------------------

/// aws `test/suites/drift/suite_test.go` "should disrupt nodes that have drifted due to AMIs":
/// launched on the previous version's AMI (`ami-old`), the class now selects `amdAMI` only.
/// `amiSelectorTerms` is `hash:"ignore"` (aws `apis/v1/ec2nodeclass.go`), so the class hash
/// stays and the AMI check names it.
#[test]
fn aws_drift_ami_selector_change_is_ami_drift() {
    let mut c = Cluster::launched(1, "m5.large");
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-old"}]);
    c.class()["status"]["amis"] = json!([ami("ami-old", "amd64")]);
    for claim in c.claims() {
        claim["status"]["imageID"] = json!("ami-old");
    }
    assert_eq!(reason(&c.drift()), "-");
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-amd"}]);
    c.class()["status"]["amis"] = json!([ami("ami-amd", "amd64")]);
    let report = c.drift();
    assert_eq!(reason(&report), "AMIDrift", "{report:#}");
    assert_eq!(report["nodes"][0]["imageId"], "ami-old");
    assert_eq!(report["nodes"][0]["expectedImageIds"], json!(["ami-amd"]));
}

/// aws `test/suites/drift/suite_test.go` "should disrupt nodes for deprecated AMIs to
/// non-deprecated AMIs": launched on the deprecated AMI, the class then selects both; the
/// provider keeps one image per requirement set, the non-deprecated one (aws
/// `providers/amifamily/ami.go`), so `status.amis` holds only `amdAMI` and the node drifts.
#[test]
fn aws_drift_deprecated_ami_drifts_to_the_non_deprecated_one() {
    let mut c = Cluster::launched(1, "m5.large");
    let mut deprecated = ami("ami-dep", "amd64");
    deprecated["deprecated"] = json!(true);
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-dep"}]);
    c.class()["status"]["amis"] = json!([deprecated]);
    for claim in c.claims() {
        claim["status"]["imageID"] = json!("ami-dep");
    }
    assert_eq!(reason(&c.drift()), "-");
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-amd"}, {"id": "ami-dep"}]);
    c.class()["status"]["amis"] = json!([ami("ami-amd", "amd64")]);
    let report = c.drift();
    assert_eq!(reason(&report), "AMIDrift", "{report:#}");
}

/// aws `test/suites/drift/suite_test.go` "should return drifted if the AMI no longer matches
/// the existing NodeClaims instance type": an arm64 node (m6g.large) on `armAMI`, the class now
/// selects the amd64 AMI only: no AMI maps to the node's instance type.
#[test]
fn aws_drift_an_ami_of_another_architecture_is_ami_drift() {
    let mut c = Cluster::new(1, "m6g.large");
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-arm"}]);
    c.class()["status"]["amis"] = json!([ami("ami-arm", "arm64")]);
    for claim in c.claims() {
        claim["status"]["imageID"] = json!("ami-arm");
    }
    c.stamp_hashes();
    c.class()["spec"]["amiSelectorTerms"] = json!([{"id": "ami-amd"}]);
    c.class()["status"]["amis"] = json!([ami("ami-amd", "amd64")]);
    let report = c.drift();
    assert_eq!(reason(&report), "AMIDrift");
    let detail = report["nodes"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("no AMI for arm64"), "{detail}");
}

/// aws `test/suites/drift/suite_test.go` "should disrupt nodes that have drifted due to
/// securitygroup": launched with `security-group-drift` and the cluster's group; the class then
/// selects the cluster's group only (the instance's set differs from `status.securityGroups`).
#[test]
fn aws_drift_a_security_group_dropped_from_the_class_is_security_group_drift() {
    let mut c = Cluster::launched(1, "m5.large");
    c.class()["spec"]["securityGroupSelectorTerms"] = json!([{"id": "sg-drift"}, {"id": "sg-1"}]);
    c.class()["status"]["securityGroups"] = json!([{"id": "sg-drift"}, {"id": "sg-1"}]);
    c.find("Node", "n0")["metadata"]["annotations"]["kubectl-karpenter.io/security-group-ids"] =
        json!("sg-1,sg-drift");
    assert_eq!(reason(&c.drift()), "-");
    c.class()["spec"]["securityGroupSelectorTerms"] = json!([{"id": "sg-1"}]);
    c.class()["status"]["securityGroups"] = json!([{"id": "sg-1"}]);
    assert_eq!(reason(&c.drift()), "SecurityGroupDrift");
}

/// aws `test/suites/drift/suite_test.go` "should disrupt nodes that have drifted due to
/// subnets": launched in `subnets[0]`, the class then selects `subnets[1]` only.
#[test]
fn aws_drift_a_subnet_no_longer_selected_is_subnet_drift() {
    let mut c = Cluster::launched(1, "m5.large");
    c.class()["spec"]["subnetSelectorTerms"] = json!([{"id": "subnet-0"}]);
    assert_eq!(reason(&c.drift()), "-");
    c.class()["spec"]["subnetSelectorTerms"] = json!([{"id": "subnet-1"}]);
    c.class()["status"]["subnets"] = json!([{"id": "subnet-1", "zone": "us-east-1b"}]);
    assert_eq!(reason(&c.drift()), "SubnetDrift");
}

/// aws `test/suites/drift/suite_test.go` DescribeTable "EC2NodeClass", its 8 entries (UserData,
/// Tags, MetadataOptions, BlockDeviceMappings, DetailedMonitoring, AMIFamily, KubeletConfiguration,
/// NetworkInterfaces), with "should drift the EC2NodeClass on InstanceProfile", "should drift
/// nodeclaims when spec.role changes" and "should drift the EC2NodeClass on BlockDeviceMappings
/// volume size update": each edit of a hashed field is `NodeClassDrift`, the static check that
/// runs first (aws `cloudprovider/drift.go` isNodeClassDrifted → areStaticFieldsDrifted).
#[test]
fn aws_drift_each_hashed_ec2nodeclass_field_is_nodeclass_drift() {
    let bdm = |size: &str| {
        json!([{"deviceName": "/dev/xvda",
                "ebs": {"volumeSize": size, "volumeType": "gp3", "encrypted": true}}])
    };
    let entries: Vec<(&str, Value)> = vec![
        (
            "UserData",
            json!({"userData": "#!/bin/bash\necho \"Hello, AL2023\""}),
        ),
        (
            "Tags",
            json!({"tags": {"keyTag-test-3": "valueTag-test-3"}}),
        ),
        (
            "MetadataOptions",
            json!({"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 10}}),
        ),
        (
            "BlockDeviceMappings",
            json!({"blockDeviceMappings": bdm("20Gi")}),
        ),
        ("DetailedMonitoring", json!({"detailedMonitoring": true})),
        (
            "KubeletConfiguration",
            json!({"kubelet": {"evictionSoft": {"memory.available": "5%"},
                               "evictionSoftGracePeriod": {"memory.available": "1m"}}}),
        ),
        (
            "NetworkInterfaces",
            json!({"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0,
                                          "interfaceType": "interface"}]}),
        ),
        ("Role", json!({"role": "KarpenterNodeRole-e2e-2nd"})),
    ];
    for (entry, edit) in entries {
        let mut c = Cluster::launched(1, "m5.large");
        let spec = c.class()["spec"].as_object_mut().unwrap();
        spec.extend(edit.as_object().unwrap().clone());
        let report = c.drift();
        assert_eq!(reason(&report), "NodeClassDrift", "{entry}: {report:#}");
    }

    // InstanceProfile: a class with an instance profile (no role), then another profile.
    let mut c = Cluster::launched(1, "m5.large");
    let spec = c.class()["spec"].as_object_mut().unwrap();
    spec.remove("role");
    spec.insert(
        "instanceProfile".into(),
        json!("KarpenterNodeInstanceProfile-e2e"),
    );
    c.stamp_hashes();
    c.class()["spec"]["instanceProfile"] = json!("KarpenterNodeInstanceProfile-Drift-e2e");
    assert_eq!(reason(&c.drift()), "NodeClassDrift", "InstanceProfile");

    // BlockDeviceMappings volume size 20Gi → 100Gi.
    let mut c = Cluster::launched(1, "m5.large");
    c.class()["spec"]["blockDeviceMappings"] = bdm("20Gi");
    c.stamp_hashes();
    c.class()["spec"]["blockDeviceMappings"] = bdm("100Gi");
    assert_eq!(reason(&c.drift()), "NodeClassDrift", "volume size");
}

/// aws `test/suites/drift/suite_test.go` DescribeTable "EC2NodeClass" Entry "AMIFamily": the
/// class moves to `alias: bottlerocket@latest`; `AMIFamily()` (from the alias) is in the hash
/// (`[]any{spec, AMIFamily(), caBundle}`), so the class is statically drifted before its AMIs
/// are even resolved.
#[test]
fn aws_drift_an_ami_family_change_by_alias_is_nodeclass_drift() {
    let mut c = Cluster::launched(1, "m5.large");
    c.class()["spec"]["amiSelectorTerms"] = json!([{"alias": "al2023@latest"}]);
    c.class()["spec"]
        .as_object_mut()
        .unwrap()
        .remove("amiFamily");
    c.stamp_hashes();
    c.class()["spec"]["amiSelectorTerms"] = json!([{"alias": "bottlerocket@latest"}]);
    c.class()["status"]["amis"] = json!([ami("ami-br", "amd64")]);
    assert_eq!(reason(&c.drift()), "NodeClassDrift");
}

/// aws `test/suites/drift/suite_test.go` "should update the ec2nodeclass-hash annotation on the
/// ec2nodeclass and nodeclaim when the ec2nodeclass's ec2nodeclass-hash-version annotation does
/// not match the controller hash version", and core `test/suites/regression/drift_test.go` "should
/// update the nodepool-hash annotation on the nodepool and nodeclaim when the nodepool's
/// nodepool-hash-version annotation does not match the controller hash version": with the
/// NodeClaim's hash version not the controller's, a changed template or class does not drift
/// it (the hash controllers rewrite the claim's hash instead; `ConsistentlyExpectNodeClaimsNotDrifted`).
#[test]
fn a_hash_version_the_controller_does_not_write_never_drifts() {
    let mut c = Cluster::launched(1, "m5.large");
    c.annotate_claims(&[
        (CLASS_HASH, "test-hash-2"),
        (CLASS_HASH_VERSION, "test-hash-version-2"),
        (POOL_HASH, "test-hash-2"),
        (POOL_HASH_VERSION, "test-hash-version-2"),
    ]);
    c.class()["metadata"]["annotations"] =
        json!({CLASS_HASH: "test-hash-1", CLASS_HASH_VERSION: "test-hash-version-1"});
    c.class()["spec"]["tags"] = json!({"test-key": "test-value"});
    c.pool()["metadata"]["annotations"] =
        json!({POOL_HASH: "test-hash-1", POOL_HASH_VERSION: "test-hash-version-1"});
    c.pool()["spec"]["template"]["metadata"] = json!({"annotations": {"test-key": "test-value"}});
    let report = c.drift();
    assert_eq!(reason(&report), "-", "{report:#}");
}

/// A class's `status.capacityReservations` entry: a targeted reservation of `instance_type`.
fn reservation_status(id: &str, instance_type: &str) -> Value {
    json!({"id": id, "instanceType": instance_type, "availabilityZone": "us-east-1a",
           "ownerID": "012345678901", "instanceMatchCriteria": "targeted",
           "reservationType": "default", "state": "active"})
}

/// aws `test/suites/drift/suite_test.go` Context "Capacity Reservations": "should drift nodeclaim
/// when the reservation is no longer selected by the nodeclass" (`CapacityReservationDrift`) and
/// "should drift nodeclaim when the nodeclaim is demoted to on-demand" (the pool requires
/// `reserved`; the demoted claim is labelled on-demand: `RequirementsDrifted`).
#[test]
fn aws_drift_capacity_reservations() {
    let reserved = |c: &mut Cluster| {
        c.pool()["spec"]["template"]["spec"]["requirements"] = json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}]);
        for kind in ["Node", "NodeClaim"] {
            let name = if kind == "Node" { "n0" } else { "n0-claim" };
            let labels = &mut c.find(kind, name)["metadata"]["labels"];
            labels["karpenter.sh/capacity-type"] = json!("reserved");
            labels["karpenter.k8s.aws/capacity-reservation-id"] = json!("cr-large");
        }
        c.class()["spec"]["capacityReservationSelectorTerms"] = json!([{"id": "cr-large"}]);
        c.class()["status"]["capacityReservations"] =
            json!([reservation_status("cr-large", "m5.large")]);
    };
    let mut c = Cluster::launched(1, "m5.large");
    reserved(&mut c);
    assert_eq!(reason(&c.drift()), "-");
    let mut moved = c.clone();
    moved.class()["spec"]["capacityReservationSelectorTerms"] = json!([{"id": "cr-xlarge"}]);
    moved.class()["status"]["capacityReservations"] =
        json!([reservation_status("cr-xlarge", "m5.xlarge")]);
    assert_eq!(reason(&moved.drift()), "CapacityReservationDrift");

    let mut demoted = c.clone();
    for (kind, name) in [("Node", "n0"), ("NodeClaim", "n0-claim")] {
        let labels = demoted.find(kind, name)["metadata"]["labels"]
            .as_object_mut()
            .unwrap();
        labels.insert("karpenter.sh/capacity-type".into(), json!("on-demand"));
        labels.remove("karpenter.k8s.aws/capacity-reservation-id");
    }
    assert_eq!(reason(&demoted.drift()), "RequirementsDrifted");
}

/// aws `test/suites/drift/suite_test.go` DescribeTable "EC2NodeClass" at the hash version
/// v1.14.1 writes (v5, with the cluster CA bundle): offline the CA is not known, so the class's
/// own annotation — the controller refreshed it after the edit — is compared with the claim's,
/// as Karpenter's `areStaticFieldsDrifted` does, and the check not computed is named.
#[test]
fn v5_class_hash_is_compared_as_karpenter_does() {
    let mut c = Cluster::launched(1, "m5.large");
    c.annotate_claims(&[(CLASS_HASH, "1111"), (CLASS_HASH_VERSION, "v5")]);
    c.class()["metadata"]["annotations"] = json!({CLASS_HASH: "1111", CLASS_HASH_VERSION: "v5"});
    assert_eq!(reason(&c.drift()), "-");
    c.class()["spec"]["tags"] = json!({"keyTag-test-3": "valueTag-test-3"});
    c.class()["metadata"]["annotations"][CLASS_HASH] = json!("2222");
    let report = c.drift();
    assert_eq!(reason(&report), "NodeClassDrift", "{report:#}");
}

// ---------------------------------------------------------------------------------------------
// core: test/suites/regression/drift_test.go
// ---------------------------------------------------------------------------------------------

/// core `test/suites/regression/drift_test.go` DescribeTable "NodePool Drift", its 5 entries:
/// Annotations, Labels, Taints, Start-up Taints are in the template hash (`NodePoolDrifted`);
/// NodeRequirements (the template now requires spot; the claim is on-demand) is not hashed
/// and is `RequirementsDrifted` (core `nodeclaim/disruption/drift.go`).
#[test]
fn core_drift_nodepool_template_edits() {
    let taint = json!([{"key": "example.com/another-taint-2", "effect": "PreferNoSchedule"}]);
    // (entry, the template field set: "metadata" or a field of its spec, value, reason)
    let entries = [
        (
            "Annotations",
            "metadata",
            json!({"annotations": {"keyAnnotationTest": "valueAnnotationTest"}}),
            "NodePoolDrifted",
        ),
        (
            "Labels",
            "metadata",
            json!({"labels": {"keyLabelTest": "valueLabelTest"}}),
            "NodePoolDrifted",
        ),
        ("Taints", "taints", taint.clone(), "NodePoolDrifted"),
        ("Start-up Taints", "startupTaints", taint, "NodePoolDrifted"),
        (
            "NodeRequirements",
            "requirements",
            json!([{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]),
            "RequirementsDrifted",
        ),
    ];
    for (entry, field, value, want) in entries {
        let mut c = Cluster::launched(1, "m5.large");
        let template = &mut c.pool()["spec"]["template"];
        if field == "metadata" {
            template["metadata"] = value;
        } else {
            template["spec"][field] = value;
        }
        let report = c.drift();
        assert_eq!(reason(&report), want, "{entry}: {report:#}");
    }
}

/// A pool whose claims all drifted, with `budgets` and the nodes' pods.
fn drifted_pool(nodes: usize, budgets: Value) -> Cluster {
    let mut c = Cluster::launched(nodes, "m5.2xlarge");
    c.pool()["spec"]["disruption"]["budgets"] = budgets;
    c.pool()["spec"]["template"]["metadata"] = json!({"annotations": {"test": "annotation"}});
    c.mark_drifted("NodePoolDrifted");
    c
}

/// How many nodes drift now, and the reasons of the nodes left.
fn drift_pacing(report: &Value) -> (usize, Vec<String>) {
    (disrupted_by(report, "drift"), disrupted(report).1)
}

/// core `test/suites/regression/drift_test.go` "should respect budgets for empty drift": three
/// empty drifted nodes, budget 50% (of 3, rounded up: 2) — two go now, the third waits.
#[test]
fn core_drift_budgets_for_empty_drift() {
    let c = drifted_pool(3, json!([{"nodes": "50%"}]));
    let report = c.consolidate();
    let (now, held) = drift_pacing(&report);
    assert_eq!(now, 2, "{report:#}");
    assert_eq!(held.len(), 1);
    assert!(held[0].starts_with("budget Drifted"), "{held:?}");
}

/// core `test/suites/regression/drift_test.go` "should respect budgets for non-empty delete
/// drift": three drifted nodes with one pod each (the others have room), budget 50% — at most
/// two at a time.
#[test]
fn core_drift_budgets_for_non_empty_delete_drift() {
    let mut c = drifted_pool(3, json!([{"nodes": "50%"}]));
    c.pod_per_node(3, "large-app", "2100m");
    let report = c.consolidate();
    let (now, held) = drift_pacing(&report);
    assert_eq!(now, 2, "{report:#}");
    // The third is held: it receives the second's pod (the report names that first), and the
    // budget is spent anyway.
    assert_eq!(held.len(), 1, "{held:?}");
}

/// The report's replace actions.
fn replacements(report: &Value) -> Vec<&Value> {
    report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["decision"] == "replace")
        .collect()
}

/// One 1500m `small-app` pod on each of n0 … n(count-1), spread by hostname.
fn small_spread_pods(c: &mut Cluster, count: usize) {
    for i in 0..count {
        let p = pod(&format!("p{i}"), &format!("n{i}"), "small-app", "1500m");
        c.push(spread(p));
    }
}

/// A hostname topology spread (max skew 1) over the pod's own `app`.
fn spread(mut p: Value) -> Value {
    let app = p["metadata"]["labels"]["app"].clone();
    p["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}}}]);
    p
}

/// Hostname anti-affinity to pods labelled `app`.
fn anti_affine(mut p: Value, app: &str) -> Value {
    p["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": app}}}]}});
    p
}

/// core `test/suites/regression/drift_test.go` "should respect budgets for non-empty replace
/// drift": five drifted nodes, one pod each under hostname anti-affinity (each needs a
/// replacement), budget 3 — three replaced now, two wait.
#[test]
fn core_drift_budgets_for_non_empty_replace_drift() {
    let mut c = drifted_pool(5, json!([{"nodes": "3"}]));
    for i in 0..5 {
        c.push(anti_affine(
            pod(&format!("p{i}"), &format!("n{i}"), "large-app", "1"),
            "large-app",
        ));
    }
    let report = c.consolidate();
    let (now, held) = drift_pacing(&report);
    assert_eq!(now, 3, "{report:#}");
    assert_eq!(held.len(), 2, "{report:#}");
    let replaced = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["method"] == "drift" && !a["replacement"].is_null())
        .count();
    assert_eq!(replaced, 3, "{report:#}");
}

/// core `test/suites/regression/drift_test.go` "should not allow drift if the budget is fully
/// blocking" and "… during a scheduled time" (a 30-minute window that began 15 minutes ago);
/// outside the window the node drifts.
#[test]
fn core_drift_a_fully_blocking_budget_holds_drift() {
    for budgets in [
        json!([{"nodes": "0"}]),
        json!([{"nodes": "0", "schedule": "45 11 * * *", "duration": "30m"}]),
    ] {
        let mut c = drifted_pool(1, budgets.clone());
        c.push(pod("p0", "n0", "large-app", "1"));
        let report = c.consolidate();
        let (now, held) = drift_pacing(&report);
        assert_eq!(now, 0, "{budgets}: {report:#}");
        assert!(held[0].starts_with("budget Drifted"), "{held:?}");
    }
    let mut c = drifted_pool(
        1,
        json!([{"nodes": "0", "schedule": "0 13 * * *", "duration": "30m"}]),
    );
    c.push(pod("p0", "n0", "large-app", "1"));
    assert_eq!(drift_pacing(&c.consolidate()).0, 1);
}

/// core `test/suites/regression/drift_test.go` "should not drift any nodes if their
/// PodDisruptionBudgets are unhealthy": two drifted nodes, a pod each that never becomes Ready,
/// a PDB `minAvailable: 1` over them — no disruptions allowed, neither node drifts.
#[test]
fn core_drift_unhealthy_pdb_blocks_drift() {
    let mut c = drifted_pool(2, json!([{"nodes": "100%"}]));
    for i in 0..2 {
        let mut p = anti_affine(
            pod(&format!("p{i}"), &format!("n{i}"), "inflate", "1"),
            "inflate",
        );
        p["status"]["conditions"][1]["status"] = json!("False");
        c.push(p);
    }
    c.push(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "inflate", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "inflate"}}},
        "status": {"currentHealthy": 0, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 2}}));
    let report = c.consolidate();
    assert_eq!(disrupted_by(&report, "drift"), 0, "{report:#}");
    for n in report["nodes"].as_array().unwrap() {
        let why = n["reason"].as_str().unwrap();
        assert!(why.contains("default/inflate"), "{why}");
    }
}

// ---------------------------------------------------------------------------------------------
// core: test/suites/regression/expiration_test.go
// ---------------------------------------------------------------------------------------------

/// core `test/suites/regression/expiration_test.go` "should expire the node after the
/// expiration is reached" and "should replace expired node with a single node and schedule all
/// pods": the claim was launched with `expireAfter: 3m` (long past), the pool's expireAfter was
/// removed since (drift, held by a `Drifted` budget of 0), five pods under a PDB minAvailable 4
/// — expiration takes the node anyway (v1: forceful, no budget), with one replacement for the
/// five pods.
#[test]
fn core_expiration_expired_node_goes_whatever_the_drift_budget() {
    let mut c = drifted_pool(
        1,
        json!([{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "100%"}]),
    );
    for claim in c.claims() {
        claim["spec"]["expireAfter"] = json!("3m");
    }
    for i in 0..5 {
        c.push(pod(&format!("p{i}"), "n0", "my-app", "500m"));
    }
    c.push(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "my-app", "namespace": "default"},
        "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "my-app"}}},
        "status": {"currentHealthy": 5, "desiredHealthy": 4, "disruptionsAllowed": 1, "expectedPods": 5}}));
    let report = c.consolidate();
    assert_eq!(disrupted_by(&report, "expiration"), 1, "{report:#}");
    let action = &report["actions"][0];
    assert_eq!(action["method"], "expiration", "{report:#}");
    assert_eq!(action["pods"].as_array().unwrap().len(), 5, "{report:#}");
}

// ---------------------------------------------------------------------------------------------
// core: test/suites/regression/termination_test.go
// ---------------------------------------------------------------------------------------------

/// core `test/suites/regression/termination_test.go` Context "Emptiness": "should terminate an
/// empty node" (WhenEmpty, consolidateAfter 0s) and Context "Budgets" "should not allow
/// emptiness if the budget is fully blocking" / "… during a scheduled time".
#[test]
fn core_termination_emptiness_and_its_budgets() {
    let empty = |budgets: Value| {
        let mut c = Cluster::launched(1, "m5.large");
        c.pool()["spec"]["disruption"] = json!({"consolidationPolicy": "WhenEmpty",
            "consolidateAfter": "0s", "budgets": budgets});
        c.consolidate()
    };
    let report = empty(json!([{"nodes": "100%"}]));
    assert_eq!(
        decisions(&report),
        [("n0".into(), "delete".into(), "emptiness".into())]
    );
    for budgets in [
        json!([{"nodes": "0"}]),
        json!([{"nodes": "0", "schedule": "45 11 * * *", "duration": "30m"}]),
    ] {
        let report = empty(budgets.clone());
        let d = decisions(&report);
        assert_eq!(d[0].1, "none", "{budgets}: {report:#}");
        assert!(d[0].2.starts_with("budget Empty"), "{d:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// aws: test/suites/consolidation/suite_test.go (each It runs under both MinValuesPolicy entries;
// no scenario sets minValues, so one replay serves both)
// ---------------------------------------------------------------------------------------------

/// The default pool consolidating after 0s with `budgets`, `nodes` nodes of `instance_type`.
fn consolidating(nodes: usize, instance_type: &str, budgets: Value) -> Cluster {
    let mut c = Cluster::launched(nodes, instance_type);
    c.pool()["spec"]["disruption"]["consolidateAfter"] = json!("0s");
    c.pool()["spec"]["disruption"]["budgets"] = budgets;
    c
}

/// Nodes the report disrupts (any method), and the reasons of the nodes it leaves.
fn disrupted(report: &Value) -> (usize, Vec<String>) {
    let nodes = report["nodes"].as_array().unwrap();
    let left = nodes
        .iter()
        .filter(|n| n["decision"] == "none")
        .map(|n| n["reason"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>();
    (nodes.len() - left.len(), left)
}

/// aws `test/suites/consolidation/suite_test.go` Context "Budgets" "should respect budgets for
/// empty delete consolidation": five nodes, four of them empty, budget 40% (of 5: 2) — two go.
#[test]
fn aws_consolidation_budgets_for_empty_delete() {
    let mut c = consolidating(5, "m5.large", json!([{"nodes": "40%"}]));
    c.push(pod("p0", "n0", "regular-app", "1"));
    let report = c.consolidate();
    let (now, left) = disrupted(&report);
    assert_eq!(now, 2, "{report:#}");
    assert_eq!(disrupted_by(&report, "emptiness"), 2, "{report:#}");
    assert!(left.iter().any(|l| l.starts_with("budget")), "{left:?}");
}

/// aws `test/suites/consolidation/suite_test.go` Context "Budgets" "should respect budgets for
/// non-empty delete consolidation": three 2xlarge nodes with one 2100m pod each (all three fit on
/// one), budget 50% (2) — at most two go.
#[test]
fn aws_consolidation_budgets_for_non_empty_delete() {
    let mut c = consolidating(3, "m5.2xlarge", json!([{"nodes": "50%"}]));
    c.require(
        json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["2xlarge"]}),
    );
    c.pod_per_node(3, "large-app", "2100m");
    let report = c.consolidate();
    let (now, left) = disrupted(&report);
    assert_eq!(now, 2, "{report:#}");
    assert_eq!(left.len(), 1, "{report:#}");
}

/// aws `test/suites/consolidation/suite_test.go` Context "Budgets" "should respect budgets for
/// non-empty replace consolidation": five 2xlarge nodes, each with one 3-cpu pod pinned to its
/// own `test-partition` (the 3-cpu DaemonSet that sized them is gone), budget 3 — three are
/// replaced by smaller nodes now, two wait.
#[test]
fn aws_consolidation_budgets_for_non_empty_replace() {
    let mut c = consolidating(5, "m5.2xlarge", json!([{"nodes": "3"}]));
    let reqs = c.pool()["spec"]["template"]["spec"]["requirements"]
        .as_array_mut()
        .unwrap();
    reqs.push(json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["xlarge", "2xlarge"]}));
    reqs.push(json!({"key": "test-partition", "operator": "Exists"}));
    for i in 0..5 {
        let partition = json!(i.to_string());
        c.find("Node", &format!("n{i}"))["metadata"]["labels"]["test-partition"] =
            partition.clone();
        c.find("NodeClaim", &format!("n{i}-claim"))["metadata"]["labels"]["test-partition"] =
            partition.clone();
        let mut p = pod(&format!("p{i}"), &format!("n{i}"), "large-app", "3");
        p["spec"]["nodeSelector"] = json!({"test-partition": partition});
        c.push(p);
    }
    let report = c.consolidate();
    let (now, left) = disrupted(&report);
    assert_eq!(now, 3, "{report:#}");
    assert_eq!(left.len(), 2, "{report:#}");
    for a in report["actions"].as_array().unwrap() {
        assert_eq!(a["decision"], "replace", "{report:#}");
    }
}

/// aws `test/suites/consolidation/suite_test.go` Context "Budgets" "should not allow
/// consolidation if the budget is fully blocking" and "… during a scheduled time": five nodes,
/// four empty, budget 0 (always, or in a window that began 15 minutes ago) — none goes.
#[test]
fn aws_consolidation_a_fully_blocking_budget_holds_every_node() {
    for budgets in [
        json!([{"nodes": "0"}]),
        json!([{"nodes": "0", "schedule": "45 11 * * *", "duration": "30m"}]),
    ] {
        let mut c = consolidating(5, "m5.large", budgets.clone());
        c.push(pod("p0", "n0", "regular-app", "1"));
        let report = c.consolidate();
        assert_eq!(disrupted(&report).0, 0, "{budgets}: {report:#}");
    }
}

/// Sets every node's and claim's capacity type, and the pool's requirement.
fn capacity_type(c: &mut Cluster, ct: &str, allowed: &[&str]) {
    for o in c.objects.iter_mut() {
        if o["kind"] == "Node" || o["kind"] == "NodeClaim" {
            o["metadata"]["labels"]["karpenter.sh/capacity-type"] = json!(ct);
        }
    }
    for r in c.pool()["spec"]["template"]["spec"]["requirements"]
        .as_array_mut()
        .unwrap()
    {
        if r["key"] == "karpenter.sh/capacity-type" {
            r["values"] = json!(allowed);
        }
    }
}

/// aws `test/suites/consolidation/suite_test.go` DescribeTable "should consolidate nodes
/// (delete)", Entries on-demand and spot: sizes medium to xlarge, four xlarge nodes left at
/// under half their cpu (the deployment scaled from 100 to 40 pods) — consolidation packs them
/// onto fewer nodes, raising utilization (upstream: average cpu utilization above 0.6).
#[test]
fn aws_consolidation_delete_on_demand_and_spot() {
    for ct in ["on-demand", "spot"] {
        let mut c = consolidating(4, "m5.xlarge", json!([{"nodes": "100%"}]));
        capacity_type(&mut c, ct, &[ct]);
        c.require(
            json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In",
                         "values": ["medium", "large", "xlarge"]}),
        );
        for (i, n) in [0, 0, 1, 2, 3].into_iter().enumerate() {
            c.push(pod(&format!("p{i}"), &format!("n{n}"), "large-app", "1"));
        }
        let report = c.consolidate();
        let (gone, _) = disrupted(&report);
        let launched = report["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| !a["replacement"].is_null())
            .count();
        assert!(4 - gone + launched <= 2, "{ct}: {report:#}");
    }
}

/// aws `test/suites/consolidation/suite_test.go` DescribeTable "should consolidate nodes
/// (replace)", Entries on-demand and spot: three 2xlarge nodes (sizes large and 2xlarge
/// allowed), each left with one small pod under a hostname spread — each is replaced by a large.
/// Spot to spot needs `SpotToSpotConsolidation`, which the e2e environment turns on.
#[test]
fn aws_consolidation_replace_on_demand_and_spot() {
    for ct in ["on-demand", "spot"] {
        let mut c = consolidating(3, "m5.2xlarge", json!([{"nodes": "100%"}]));
        capacity_type(&mut c, ct, &[ct]);
        c.require(json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "2xlarge"]}));
        small_spread_pods(&mut c, 3);
        let report = c.consolidate_with(&["--feature-gates", "SpotToSpotConsolidation=true"]);
        let replaced = replacements(&report);
        assert_eq!(replaced.len(), 3, "{ct}: {report:#}");
        for a in replaced {
            let chosen = a["replacement"]["instanceType"].as_str().unwrap();
            assert!(chosen.ends_with(".large"), "{ct}: {a:#}");
            assert_eq!(a["replacement"]["capacityType"], ct, "{a:#}");
        }
    }
}

/// aws `test/suites/consolidation/suite_test.go` "should consolidate on-demand nodes to spot
/// (replace)": two on-demand large nodes, one pod each under a hostname spread; the pool then
/// allows spot too — each is replaced by a spot node.
#[test]
fn aws_consolidation_on_demand_to_spot() {
    let mut c = consolidating(2, "m5.large", json!([{"nodes": "100%"}]));
    capacity_type(&mut c, "on-demand", &["on-demand", "spot"]);
    c.require(
        json!({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large"]}),
    );
    small_spread_pods(&mut c, 2);
    let report = c.consolidate();
    let replaced = replacements(&report);
    assert_eq!(replaced.len(), 2, "{report:#}");
    for a in replaced {
        assert_eq!(a["replacement"]["capacityType"], "spot", "{a:#}");
    }
}

// ---------------------------------------------------------------------------------------------
// core: test/suites/regression/staticcapacity_test.go
// ---------------------------------------------------------------------------------------------

/// A static pool (`replicas`) of `nodes` nodes.
fn static_pool(nodes: usize, replicas: u32) -> Cluster {
    let mut c = Cluster::launched(nodes, "m5.large");
    c.pool()["spec"]["replicas"] = json!(replicas);
    c.pool()["spec"].as_object_mut().unwrap().remove("limits");
    c.stamp_hashes();
    c
}

/// The nodes `provision -f` scales a static pool down by (its `staticScaleDown`), in order.
fn scaled_down(c: &Cluster) -> Vec<String> {
    let plan = c.report(&["provision", "-f", "-", "-o", "json"]);
    plan["staticScaleDown"]
        .as_array()
        .map(|pools| {
            pools
                .iter()
                .flat_map(|p| p["remove"].as_array().unwrap())
                .map(|r| r["node"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// core `test/suites/regression/staticcapacity_test.go` Context "Deprovisioning": "should scale
/// down to zero" (replicas 3 → 0: every node goes) and "should terminate empty nodes first, then
/// nodes with least cost, then respect do-not-disrupt" (five nodes, pods on n0 and n1, a
/// do-not-disrupt pod on n2; replicas 3: the empty n3 and n4 go; then from n0–n2, replicas 1:
/// n2 stays). Karpenter's static deprovisioning controller is provisioning's side here:
/// `provision` plans the scale-down (docs/commands.md).
#[test]
fn core_static_capacity_scale_down() {
    let c = static_pool(3, 0);
    let mut all = scaled_down(&c);
    all.sort();
    assert_eq!(all, ["n0", "n1", "n2"]);

    let mut c = static_pool(5, 3);
    c.push(pod("p0", "n0", "a", "100m"));
    c.push(pod("p1", "n1", "b", "100m"));
    let mut keep = pod("p2", "n2", "c", "100m");
    keep["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
    c.push(keep);
    let mut gone = scaled_down(&c);
    gone.sort();
    assert_eq!(gone, ["n3", "n4"]);

    c.objects.retain(|o| {
        let name = o["metadata"]["name"].as_str().unwrap_or("");
        !name.starts_with("n3") && !name.starts_with("n4")
    });
    c.pool()["spec"]["replicas"] = json!(1);
    let mut gone = scaled_down(&c);
    gone.sort();
    assert_eq!(gone, ["n0", "n1"]);
}

/// core `test/suites/regression/staticcapacity_test.go` Context "Drift": ten drifted nodes of a
/// static pool (replicas 10) — "should replace drifted nodes" (budget 100%: all ten), "should
/// handle drift with node limits when budget allows" (budget 4, `limits.nodes` 12: room for two
/// replacements, two at a time) and "… when budget restricts" (budget 2, limit 15: two).
/// Upstream It: "should handle drift with node limits when budget restricts".
#[test]
fn core_static_capacity_drift_within_budget_and_node_limit() {
    let cases = [
        ("100%", None, 10),
        ("4", Some("12"), 2),
        ("2", Some("15"), 2),
    ];
    for (budget, limit, want) in cases {
        let mut c = static_pool(10, 10);
        c.pool()["spec"]["disruption"]["budgets"] = json!([{"nodes": budget}]);
        if let Some(l) = limit {
            c.pool()["spec"]["limits"] = json!({"nodes": l});
        }
        c.pool()["spec"]["template"]["metadata"] = json!({"annotations": {"test": "annotation"}});
        c.mark_drifted("NodePoolDrifted");
        let report = c.consolidate();
        assert_eq!(
            disrupted_by(&report, "static-drift"),
            want,
            "budget {budget}, limit {limit:?}: {report:#}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// core: test/suites/regression/integration_test.go, Describe "Validation" › Context "NodePool"
// ---------------------------------------------------------------------------------------------

/// One NodePool validation case: (It, template metadata, requirement replaced by key,
/// consolidateAfter, accepted).
type ValidationCase<'a> = (&'a str, Option<Value>, Option<Value>, Option<&'a str>, bool);

/// core `test/suites/regression/integration_test.go` Describe "Validation" › Context "NodePool",
/// its 17 Its: each edit of the default pool the API server refuses is refused by `drift check
/// -f` (exit 2, one line naming the NodePool), each it accepts is accepted. Requirements are
/// replaced by key as upstream's `test.ReplaceRequirements` does.
#[test]
fn core_integration_nodepool_validation() {
    let label = |k: &str, v: &str| json!({"labels": {k: v}});
    let req = |key: &str, op: &str, values: Value, min: Option<i64>| {
        let mut r = json!({"key": key, "operator": op, "values": values});
        if let Some(m) = min {
            r["minValues"] = json!(m);
        }
        r
    };
    let types = json!(["insance-type-1", "insance-type-2"]);
    let big = json!(["1000000", "2000000"]);
    let it_type = "node.kubernetes.io/instance-type";
    let cases: Vec<ValidationCase> = vec![
        (
            "restricted label karpenter.sh/nodepool",
            Some(label("karpenter.sh/nodepool", "my-custom-nodepool")),
            None,
            None,
            false,
        ),
        (
            "restricted label karpenter.sh/custom-label",
            Some(label("karpenter.sh/custom-label", "custom-value")),
            None,
            None,
            false,
        ),
        (
            "exception node-restriction.kubernetes.io/custom-label",
            Some(label(
                "node-restriction.kubernetes.io/custom-label",
                "custom-value",
            )),
            None,
            None,
            true,
        ),
        (
            "exception subdomainnode-restriction.kubernetes.io/custom-label",
            Some(label(
                "subdomainnode-restriction.kubernetes.io/custom-label",
                "custom-value",
            )),
            None,
            None,
            true,
        ),
        (
            "requirement on karpenter.sh/nodepool",
            None,
            Some(req("karpenter.sh/nodepool", "In", json!(["default"]), None)),
            None,
            false,
        ),
        (
            "In without values",
            None,
            Some(req(it_type, "In", json!([]), None)),
            None,
            false,
        ),
        (
            "unknown operator",
            None,
            Some(req(
                "karpenter.sh/capacity-type",
                "within",
                json!(["spot"]),
                None,
            )),
            None,
            false,
        ),
        (
            "Gt with two values",
            None,
            Some(req(it_type, "Gt", big.clone(), None)),
            None,
            false,
        ),
        (
            "Lt with two values",
            None,
            Some(req(it_type, "Lt", big.clone(), None)),
            None,
            false,
        ),
        (
            "Gte with two values",
            None,
            Some(req(it_type, "Gte", big.clone(), None)),
            None,
            false,
        ),
        (
            "Lte with two values",
            None,
            Some(req(it_type, "Lte", big, None)),
            None,
            false,
        ),
        ("negative consolidateAfter", None, None, Some("-1s"), false),
        (
            "WhenEmptyOrUnderutilized with consolidateAfter 1m",
            None,
            None,
            Some("1m"),
            true,
        ),
        (
            "minValues -1",
            None,
            Some(req(it_type, "In", types.clone(), Some(-1))),
            None,
            false,
        ),
        (
            "minValues 0",
            None,
            Some(req(it_type, "In", types.clone(), Some(0))),
            None,
            false,
        ),
        (
            "minValues 51",
            None,
            Some(req(it_type, "In", types.clone(), Some(51))),
            None,
            false,
        ),
        (
            "minValues above the In values",
            None,
            Some(req(it_type, "In", types, Some(3))),
            None,
            false,
        ),
    ];
    for (it, metadata, requirement, consolidate_after, accepted) in cases {
        let mut c = Cluster::new(1, "m5.large");
        let pool = c.pool();
        if let Some(m) = metadata {
            pool["spec"]["template"]["metadata"] = m;
        }
        if let Some(r) = requirement {
            let reqs = pool["spec"]["template"]["spec"]["requirements"]
                .as_array_mut()
                .unwrap();
            reqs.retain(|x| x["key"] != r["key"]);
            reqs.push(r);
        }
        if let Some(after) = consolidate_after {
            pool["spec"]["disruption"]["consolidateAfter"] = json!(after);
        }
        let run = karpenter(&["drift", "check", "-f", "-"], c.yaml().as_bytes());
        if accepted {
            assert!(run.code == 0 || run.code == 1, "{it}: {}", run.stderr);
        } else {
            assert_eq!(run.code, 2, "{it}: {}{}", run.stdout, run.stderr);
            let line = run.stderr.trim();
            assert!(line.contains("NodePool/default"), "{it}: {line}");
            assert_eq!(line.lines().count(), 1, "{it}: {line}");
        }
    }
}

/// One node of `instance_type` (32 vCPU) with one pod requesting `requests`, under `overlay`.
fn overlaid(instance_type: &str, overlay: Value, requests: Value) -> Cluster {
    let mut c = consolidating(1, instance_type, json!([{"nodes": "100%"}]));
    let node = c.find("Node", "n0");
    node["status"]["capacity"] = json!({"cpu": "32", "memory": "128Gi", "pods": "234"});
    node["status"]["allocatable"] = json!({"cpu": "31850m", "memory": "120Gi", "pods": "234"});
    let mut p = pod("p0", "n0", "app", "1");
    p["spec"]["containers"][0]["resources"] = requests;
    c.push(p);
    c.push(overlay);
    c
}

/// A NodeOverlay selecting one instance type, with `spec` merged in.
fn overlay(instance_type: &str, spec: Value) -> Value {
    let mut o = json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "overlay"},
        "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                   "values": [instance_type]}]}});
    o["spec"]
        .as_object_mut()
        .unwrap()
        .extend(spec.as_object().unwrap().clone());
    o
}

/// The one replacement's instance type.
fn replaced_by(report: &Value) -> String {
    let actions = report["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{report:#}");
    assert_eq!(actions[0]["decision"], "replace", "{report:#}");
    actions[0]["replacement"]["instanceType"]
        .as_str()
        .unwrap()
        .to_string()
}

/// aws `test/suites/consolidation/suite_test.go` Describe "Node Overlay": "should consolidate a
/// instance that is the cheepest based on a price adjustment node overlay applied" (-99.99…%)
/// and "… price override node overlay applied" (price 0.0000000232): the node launched as the
/// overlaid m7a.8xlarge; the overlay now selects c7a.8xlarge, which replaces it.
#[test]
fn aws_consolidation_follows_a_node_overlay_price() {
    let requests = json!({"requests": {"cpu": "1", "memory": "1Gi"}});
    for spec in [
        json!({"priceAdjustment": "-99.99999999999%"}),
        json!({"price": "0.0000000232"}),
    ] {
        let c = overlaid(
            "m7a.8xlarge",
            overlay("c7a.8xlarge", spec.clone()),
            requests.clone(),
        );
        assert_eq!(replaced_by(&c.consolidate()), "c7a.8xlarge", "{spec}");
    }
}

/// aws `test/suites/consolidation/suite_test.go` Describe "Node Overlay" "should consolidate a
/// node that matches hugepages resource requests": a c7a.8xlarge whose kubelet offers
/// `hugepages-2Mi: 4Gi` (user data), a pod requesting 100Mi of it; the capacity overlay now
/// selects c7a.2xlarge, the only smaller type with hugepages, which replaces it.
#[test]
fn aws_consolidation_follows_a_hugepages_capacity_overlay() {
    let requests = json!({"requests": {"cpu": "500m", "memory": "512Mi", "hugepages-2Mi": "100Mi"},
                          "limits": {"hugepages-2Mi": "100Mi"}});
    let mut c = overlaid(
        "c7a.8xlarge",
        overlay("c7a.2xlarge", json!({"capacity": {"hugepages-2Mi": "4Gi"}})),
        requests,
    );
    for key in ["capacity", "allocatable"] {
        c.find("Node", "n0")["status"][key]["hugepages-2Mi"] = json!("4Gi");
    }
    assert_eq!(replaced_by(&c.consolidate()), "c7a.2xlarge");
}

/// A custom catalog (docs/spec.md §5.5): m5.large and m5.xlarge on-demand in us-east-1a, with
/// the reservations `(id, type)` as reserved offerings of one instance each. Offline, reserved
/// capacity comes from a catalog, not from the class's `status.capacityReservations`.
fn reservations_catalog(reservations: &[(&str, &str)]) -> std::path::PathBuf {
    let mut text = String::from("instanceTypes:\n");
    for (name, cpu, mem, price) in [
        ("m5.large", "2", "8Gi", "0.096"),
        ("m5.xlarge", "4", "16Gi", "0.192"),
    ] {
        text.push_str(&format!(
            "- name: {name}\n  capacity: {{cpu: \"{cpu}\", memory: {mem}, pods: \"58\"}}\n  labels: {{kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n  offerings:\n  - {{zone: us-east-1a, capacityType: on-demand, price: {price}}}\n"
        ));
        for (id, _) in reservations.iter().filter(|(_, t)| *t == name) {
            text.push_str(&format!(
                "  - {{zone: us-east-1a, capacityType: reserved, reservationId: {id}, count: 1}}\n"
            ));
        }
    }
    let file = format!("e2e-reservations-{}.yaml", reservations.len());
    write_temp(&file, text.as_bytes())
}

/// aws `test/suites/consolidation/suite_test.go` Context "Capacity Reservations": "should
/// consolidate into a reserved offering" (an on-demand m5.large; the class now selects an
/// m5.xlarge reservation: the paid-for reserved m5.xlarge replaces it) and "should consolidate
/// between reserved offerings" (a reserved m5.xlarge; an m5.large reservation is added: the
/// reserved m5.large replaces it). The pool allows on-demand and reserved; the pod allows
/// m5.large and m5.xlarge.
#[test]
fn aws_consolidation_into_and_between_reserved_offerings() {
    let base = |instance_type: &str| {
        let mut c = consolidating(1, instance_type, json!([{"nodes": "100%"}]));
        c.pool()["spec"]["template"]["spec"]["requirements"] = json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "reserved"]}]);
        let mut p = pod("p0", "n0", "app", "100m");
        p["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
             "operator": "In", "values": ["m5.large", "m5.xlarge"]}]}]}}});
        c.push(p);
        c
    };
    let run = |c: &Cluster, catalog: &std::path::Path| -> Value {
        c.consolidate_with(&["--catalog", catalog.to_str().unwrap()])
    };
    let mut c = base("m5.large");
    c.class()["spec"]["capacityReservationSelectorTerms"] = json!([{"id": "cr-xlarge"}]);
    let report = run(&c, &reservations_catalog(&[("cr-xlarge", "m5.xlarge")]));
    assert_eq!(replaced_by(&report), "m5.xlarge", "{report:#}");
    assert_eq!(
        report["actions"][0]["replacement"]["capacityType"],
        "reserved"
    );

    let mut c = base("m5.xlarge");
    for (kind, name) in [("Node", "n0"), ("NodeClaim", "n0-claim")] {
        let labels = &mut c.find(kind, name)["metadata"]["labels"];
        labels["karpenter.sh/capacity-type"] = json!("reserved");
        labels["karpenter.k8s.aws/capacity-reservation-id"] = json!("cr-xlarge");
    }
    c.class()["spec"]["capacityReservationSelectorTerms"] =
        json!([{"id": "cr-xlarge"}, {"id": "cr-large"}]);
    let catalog = reservations_catalog(&[("cr-xlarge", "m5.xlarge"), ("cr-large", "m5.large")]);
    let report = run(&c, &catalog);
    assert_eq!(replaced_by(&report), "m5.large", "{report:#}");
    assert_eq!(
        report["actions"][0]["replacement"]["capacityType"],
        "reserved"
    );
}
