//! The live gathering against the in-memory cluster and cloud (the calls it makes, what it
//! resolves), the selection, and `--mark` for each generation's marker.

use serde_json::{json, Value};

use super::*;
use crate::cloud::fake::FakeCloud;
use crate::cloud::types::{Cloud, CloudError, Image, Instance, SecurityGroup, Subnet};
use crate::cloud::Catalog;
use crate::drift::facts::Fact;
use crate::drift::{DriftReason, Status};
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::k8s::snapshot::{self, Scope};
use crate::model::labels::{DRIFTED_LABEL, VOLUNTARY_DISRUPTION};

/// 2024-06-24T12:00:00Z.
const NOW: i64 = 1_719_230_400;
const VERSION: KubeVersion = KubeVersion::new(1, 29);

fn node(name: &str, instance: &str, labels: Value) -> Value {
    let mut all = json!({
        "node.kubernetes.io/instance-type": "m5.large",
        "topology.kubernetes.io/zone": "us-east-1a",
        "topology.kubernetes.io/region": "us-east-1",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "karpenter.sh/capacity-type": "on-demand",
    });
    for (k, v) in labels.as_object().unwrap() {
        all[k] = v.clone();
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": all, "creationTimestamp": "2024-06-01T00:00:00Z"},
        "spec": {"providerID": format!("aws:///us-east-1a/{instance}")},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "29"}}
    })
}

/// A v1 cluster: pool `default` of class `default` (AMI `ami-new`), nodes `old` (on `ami-old`)
/// and `new` (on `ami-new`).
fn v1_cluster() -> FakeCluster {
    let fake = FakeCluster::new().karpenter_v1();
    fake.put_all([
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
               "spec": {"template": {"spec": {
                   "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                   "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}),
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
               "spec": {"role": "KarpenterNodeRole", "amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-new"}],
                        "subnetSelectorTerms": [{"id": "subnet-a"}],
                        "securityGroupSelectorTerms": [{"id": "sg-a"}]}}),
        node("old", "i-old", json!({"karpenter.sh/nodepool": "default"})),
        node("new", "i-new", json!({"karpenter.sh/nodepool": "default"})),
        node("system", "i-system", json!({})),
    ]);
    fake
}

/// A v1alpha5 cluster: Provisioner `default` of template `oldnode` (AMI `ami-new`), nodes
/// `old` and `new` as in [`v1_cluster`].
fn v1alpha5_cluster() -> FakeCluster {
    let fake = FakeCluster::new().karpenter_v1alpha5();
    fake.put_all([
        json!({"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": "default"},
               "spec": {"providerRef": {"name": "oldnode"}}}),
        json!({"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": {"name": "oldnode"},
               "spec": {"amiSelector": {"aws::ids": "ami-new"}, "subnetSelector": {"aws-ids": "subnet-a"},
                        "securityGroupSelector": {"aws-ids": "sg-a"}}}),
        node("old", "i-old", json!({"karpenter.sh/provisioner-name": "default"})),
        node("new", "i-new", json!({"karpenter.sh/provisioner-name": "default"})),
    ]);
    fake
}

fn image(id: &str, name: &str) -> Image {
    Image {
        id: id.into(),
        name: Some(name.into()),
        architecture: "x86_64".into(),
        creation_date: Some("2024-06-01T00:00:00Z".into()),
        ..Image::default()
    }
}

fn instance(id: &str, image: &str) -> Instance {
    Instance {
        id: id.into(),
        instance_type: "m5.large".into(),
        zone: "us-east-1a".into(),
        subnet_id: Some("subnet-a".into()),
        image_id: image.into(),
        state: "running".into(),
        capacity_type: "on-demand".into(),
        security_group_ids: vec!["sg-a".into()],
        ..Instance::default()
    }
}

fn cloud() -> FakeCloud {
    let mut cloud = FakeCloud::new()
        .image(image("ami-old", "amazon-eks-node-1.28-old"), None)
        .image(image("ami-new", "amazon-eks-node-1.29-new"), None);
    cloud.subnets = vec![Subnet {
        id: "subnet-a".into(),
        zone: "us-east-1a".into(),
        ..Subnet::default()
    }];
    cloud.security_groups = vec![SecurityGroup {
        id: "sg-a".into(),
        name: "nodes".into(),
        ..SecurityGroup::default()
    }];
    cloud.instances.borrow_mut().extend([
        instance("i-old", "ami-old"),
        instance("i-new", "ami-new"),
        instance("i-system", "ami-old"),
    ]);
    cloud
}

/// Gathers `cluster` with `cloud`; the number of catalog loads with the snapshot.
fn gather_live(cluster: &FakeCluster, cloud: &FakeCloud) -> (DriftSnapshot, usize) {
    let read = snapshot::read(cluster, Scope::default()).unwrap();
    let mut loads = 0;
    let snapshot = gather(&read.manifests, cloud, VERSION, NOW, &mut |_| {
        loads += 1;
        Ok(Catalog::embedded().unwrap())
    })
    .unwrap();
    (snapshot, loads)
}

fn verdicts(report: &DriftReport) -> Vec<(&str, Status, Option<DriftReason>)> {
    report
        .evaluation
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.status, n.reason))
        .collect()
}

#[test]
fn live_gather_resolves_the_used_classes_through_ec2_in_a_few_calls() {
    let cloud = cloud();
    let (snapshot, loads) = gather_live(&v1_cluster(), &cloud);
    let calls = cloud.call_counts();
    for (operation, count) in [
        ("EC2.DescribeInstances", 1),
        // The class's `id` term, then the names of the images the nodes run.
        ("EC2.DescribeImages", 2),
        ("EC2.DescribeSubnets", 1),
        ("EC2.DescribeSecurityGroups", 1),
    ] {
        assert_eq!(calls.get(operation), count, "{operation}: {calls:?}");
    }
    assert_eq!(loads, 1, "a v1 pool needs the catalog, once");
    assert_eq!(
        snapshot
            .nodes
            .iter()
            .map(|n| n.node.name.as_str())
            .collect::<Vec<_>>(),
        ["new", "old"],
        "the unmanaged node is left out"
    );
    assert!(snapshot.nodes.iter().all(|n| n.instance.is_some()));
    let facts = &snapshot.class_facts["EC2NodeClass/default"];
    let Fact::Known(images) = &facts.images else {
        panic!("{:?}", facts.images);
    };
    assert_eq!(
        images.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
        ["ami-new"]
    );
    assert!(matches!(&facts.subnets, Fact::Known(s) if s.source == "DescribeSubnets"));
    assert_eq!(
        snapshot.image_names.get("ami-old").map(String::as_str),
        Some("amazon-eks-node-1.28-old")
    );
    assert!(snapshot.instance_types["default"].contains("m5.large"));

    let report = check(&Config::default(), snapshot, Mode::Live, Some(VERSION)).unwrap();
    assert_eq!(
        verdicts(&report),
        [
            ("new", Status::Ok, None),
            ("old", Status::Drifted, Some(DriftReason::AmiDrift)),
        ]
    );
    assert!(report.any_drifted());
    assert!(
        report.evaluation.nodes[1]
            .detail
            .contains("amazon-eks-node-1.28-old"),
        "{}",
        report.evaluation.nodes[1].detail
    );
}

/// CapacityReservationDrift live: the class's reservations are read from EC2 as Karpenter's
/// nodeclass controller reads them into `status.capacityReservations` (`aws v1.14.1:
/// pkg/cloudprovider/suite_test.go` "should dynamically drift nodeclaims for capacity
/// reservations"): a node in a reservation EC2 no longer has active drifts, one in an active
/// selected reservation does not; without the permission the drift is not checked, said.
#[test]
fn live_gather_reads_the_reservations_capacity_reservation_drift_needs() {
    use crate::cloud::types::CapacityReservation;
    let cluster = v1_cluster();
    cluster.update(
        "karpenter.k8s.aws/v1",
        "EC2NodeClass",
        None,
        "default",
        |c| c["spec"]["capacityReservationSelectorTerms"] = json!([{"tags": {"team": "ml"}}]),
    );
    for (name, id) in [("old", "cr-gone"), ("new", "cr-live")] {
        cluster.update("v1", "Node", None, name, |n| {
            n["metadata"]["labels"]["karpenter.sh/capacity-type"] = json!("reserved");
            n["metadata"]["labels"]["karpenter.k8s.aws/capacity-reservation-id"] = json!(id);
        });
    }
    let cloud = cloud();
    // Both on the class's AMI: only the reservation tells them apart.
    cloud.instances.borrow_mut()[0].image_id = "ami-new".into();
    *cloud.reservations.borrow_mut() = vec![CapacityReservation {
        id: "cr-live".into(),
        instance_type: "m5.large".into(),
        zone: "us-east-1a".into(),
        owner_id: "123456789012".into(),
        instance_match_criteria: "targeted".into(),
        available: 0,
        state: "active".into(),
        tags: [("team".to_string(), "ml".to_string())].into(),
        ..CapacityReservation::default()
    }];
    let (snapshot, _) = gather_live(&cluster, &cloud);
    assert_eq!(
        cloud.call_counts().get("EC2.DescribeCapacityReservations"),
        1
    );
    let status = snapshot.node_classes[0]
        .status
        .capacity_reservations
        .clone();
    assert_eq!(
        status
            .unwrap()
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["cr-live"],
        "used up is still active"
    );
    let report = check(&Config::default(), snapshot, Mode::Live, Some(VERSION)).unwrap();
    let new = &report.evaluation.nodes[0];
    let old = &report.evaluation.nodes[1];
    assert_eq!(new.status, Status::Ok, "{}", new.detail);
    assert_eq!(
        (old.status, old.reason),
        (Status::Drifted, Some(DriftReason::CapacityReservationDrift)),
        "{}",
        old.detail
    );
    assert!(old.detail.contains("cr-gone"), "{}", old.detail);

    cloud.fail(
        "EC2.DescribeCapacityReservations",
        crate::cloud::CloudError::Api {
            service: "EC2".into(),
            operation: "DescribeCapacityReservations".into(),
            code: "UnauthorizedOperation".into(),
            message: "not authorized to perform: ec2:DescribeCapacityReservations".into(),
        },
    );
    let (snapshot, _) = gather_live(&cluster, &cloud);
    assert_eq!(snapshot.node_classes[0].status.capacity_reservations, None);
    assert!(
        snapshot.notes.iter().any(|n| n.starts_with(
            "EC2NodeClass default: its capacity reservations are unknown, CapacityReservationDrift is not checked"
        )),
        "{:?}",
        snapshot.notes
    );
}

#[test]
fn live_gather_without_v1_pools_or_unlabelled_tool_nodes_loads_no_catalog() {
    let (snapshot, loads) = gather_live(&v1alpha5_cluster(), &cloud());
    assert_eq!(loads, 0);
    assert!(snapshot.instance_types.is_empty());
    let report = check(&Config::default(), snapshot, Mode::Live, Some(VERSION)).unwrap();
    assert_eq!(
        verdicts(&report),
        [
            ("new", Status::Ok, None),
            ("old", Status::Drifted, Some(DriftReason::AmiDrift)),
        ]
    );
}

#[test]
fn an_ec2_failure_is_a_cloud_error_and_a_class_failure_an_unknown_fact() {
    let read = snapshot::read(&v1_cluster(), Scope::default()).unwrap();
    let denied = || CloudError::Api {
        service: "EC2".into(),
        operation: "DescribeInstances".into(),
        code: "UnauthorizedOperation".into(),
        message: "not authorized".into(),
    };
    let cloud = cloud();
    cloud.fail("EC2.DescribeInstances", denied());
    let err = gather(&read.manifests, &cloud, VERSION, NOW, &mut |_| {
        Ok(Catalog::embedded().unwrap())
    })
    .unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(err.hint.unwrap().contains("deploy/iam-policy.json"));

    let cloud = self::cloud();
    cloud.fail("EC2.DescribeSubnets", denied());
    let snapshot = gather(&read.manifests, &cloud, VERSION, NOW, &mut |_| {
        Ok(Catalog::embedded().unwrap())
    })
    .unwrap();
    assert!(matches!(
        snapshot.class_facts["EC2NodeClass/default"].subnets,
        Fact::Unknown(_)
    ));
    assert!(
        snapshot.notes.iter().any(|n| n.starts_with(
            "EC2NodeClass default: its subnets are unknown, their drift is not checked: EC2 "
        ) && n.contains("UnauthorizedOperation")),
        "{:?}",
        snapshot.notes
    );
}

#[test]
fn selection_by_name_pool_and_selector_and_unknown_names() {
    let (snapshot, _) = gather_live(&v1_cluster(), &cloud());
    let names = |config: &Config| {
        let mut s = snapshot.clone();
        select_nodes(config, &mut s).map(|()| {
            s.nodes
                .iter()
                .map(|n| n.node.name.clone())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(names(&Config::default()).unwrap(), ["new", "old"]);
    let by_name = Config {
        nodes: vec!["old".into()],
        ..Config::default()
    };
    assert_eq!(names(&by_name).unwrap(), ["old"]);
    let by_pool = Config {
        nodepools: vec!["default".into()],
        ..Config::default()
    };
    assert_eq!(names(&by_pool).unwrap().len(), 2);
    let by_selector = Config {
        selector: Some(LabelSelector::parse("kubernetes.io/arch!=amd64").unwrap()),
        ..Config::default()
    };
    assert!(names(&by_selector).unwrap().is_empty());
    let err = names(&Config {
        nodes: vec!["system".into()],
        ..Config::default()
    })
    .unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert!(err
        .message
        .starts_with("node \"system\" is not a managed node"));
    let err = names(&Config {
        nodepools: vec!["gpu".into()],
        ..Config::default()
    })
    .unwrap_err();
    assert_eq!(
        err.message,
        "--nodepool gpu: no such NodePool or Provisioner"
    );
}

/// The node's labels and annotations as the cluster has them now.
fn marker(cluster: &FakeCluster, name: &str) -> (Value, Value) {
    let n = cluster.get("v1", "Node", None, name).unwrap();
    (
        n["metadata"]["labels"][DRIFTED_LABEL].clone(),
        n["metadata"]["annotations"][VOLUNTARY_DISRUPTION].clone(),
    )
}

#[test]
fn mark_labels_v1_nodes_with_the_reason_and_takes_it_back() {
    let cluster = v1_cluster();
    let (snapshot, _) = gather_live(&cluster, &cloud());
    cluster.clear_requests();
    // docs/spec.md §6 "`--dry-run` everywhere": `--mark --dry-run` names the node, writes nothing.
    assert_eq!(mark(&cluster, &snapshot, true).unwrap(), ["old"]);
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
    assert_eq!(marker(&cluster, "old"), (Value::Null, Value::Null));
    assert_eq!(mark(&cluster, &snapshot, false).unwrap(), ["old"]);
    assert_eq!(cluster.writes(), ["PATCH /api/v1/nodes/old"]);
    assert_eq!(
        cluster.requests()[0].body,
        json!({"metadata": {"labels": {DRIFTED_LABEL: "AMIDrift"}}})
    );
    assert_eq!(marker(&cluster, "old"), (json!("AMIDrift"), Value::Null));
    assert_eq!(marker(&cluster, "new"), (Value::Null, Value::Null));

    // Again: nothing to write.
    cluster.clear_requests();
    let (snapshot, _) = gather_live(&cluster, &cloud());
    cluster.clear_requests();
    assert!(mark(&cluster, &snapshot, false).unwrap().is_empty());
    assert!(cluster.writes().is_empty());

    // The drift undone (the node runs the class's AMI now): the label goes.
    let undone = cloud();
    undone.instances.borrow_mut()[0].image_id = "ami-new".into();
    let (snapshot, _) = gather_live(&cluster, &undone);
    cluster.clear_requests();
    assert_eq!(mark(&cluster, &snapshot, false).unwrap(), ["old"]);
    assert_eq!(
        cluster.requests()[0].body,
        json!({"metadata": {"labels": {DRIFTED_LABEL: null}}})
    );
    assert_eq!(marker(&cluster, "old"), (Value::Null, Value::Null));
}

#[test]
fn mark_annotates_v1alpha5_nodes_and_leaves_karpenter_s_other_markers() {
    let cluster = v1alpha5_cluster();
    let (snapshot, _) = gather_live(&cluster, &cloud());
    cluster.clear_requests();
    assert_eq!(mark(&cluster, &snapshot, false).unwrap(), ["old"]);
    assert_eq!(
        cluster.requests()[0].body,
        json!({"metadata": {"annotations": {VOLUNTARY_DISRUPTION: "drifted"}}})
    );
    assert_eq!(marker(&cluster, "old"), (Value::Null, json!("drifted")));
    // s35-noticed: what the annotation means to Karpenter is said (core v0.29.0
    // `node/drift.go`, v0.30.0 `deprovisioning/drift.go`); a v1 node's label is the tool's own.
    let warning = provisioner_mark_warning(&snapshot, &["old".into()]).unwrap();
    assert!(
        warning.starts_with("--mark: karpenter.sh/voluntary-disruption on 1 Provisioner node(s)")
            && warning.contains("featureGates.driftEnabled")
            && warning.contains("v0.30–v0.32 read the Machine's Drifted condition"),
        "{warning}"
    );
    assert!(provisioner_mark_warning(&snapshot, &[]).is_none());
    let (v1, _) = gather_live(&v1_cluster(), &cloud());
    assert!(provisioner_mark_warning(&v1, &["old".into()]).is_none());

    let undone = cloud();
    undone.instances.borrow_mut()[0].image_id = "ami-new".into();
    let (snapshot, _) = gather_live(&cluster, &undone);
    cluster.clear_requests();
    assert_eq!(mark(&cluster, &snapshot, false).unwrap(), ["old"]);
    assert_eq!(marker(&cluster, "old"), (Value::Null, Value::Null));

    // Karpenter's own `expired` marker on a drifted node stays as it is.
    cluster.update("v1", "Node", None, "old", |n| {
        n["metadata"]["annotations"] = json!({VOLUNTARY_DISRUPTION: "expired"});
    });
    let (snapshot, _) = gather_live(&cluster, &cloud());
    cluster.clear_requests();
    assert!(mark(&cluster, &snapshot, false).unwrap().is_empty());
    assert_eq!(marker(&cluster, "old"), (Value::Null, json!("expired")));
}

#[test]
fn the_version_is_read_from_ssm_paths_when_not_given() {
    let mut c = Config::default();
    assert_eq!(
        kubernetes_version(&c),
        (ASSUMED_KUBERNETES_VERSION, VersionSource::Assumed)
    );
    c.ssm_params.insert(
        "/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id".into(),
        "ami-1".into(),
    );
    assert_eq!(
        kubernetes_version(&c),
        (KubeVersion::new(1, 25), VersionSource::Flag)
    );
    c.ssm_params.insert(
        "/aws/service/bottlerocket/aws-k8s-1.26/x86_64/latest/image_id".into(),
        "ami-2".into(),
    );
    assert_eq!(
        kubernetes_version(&c).1,
        VersionSource::Assumed,
        "two versions: ambiguous"
    );
    c.kubernetes_version = Some((KubeVersion::new(1, 30), VersionSource::Flag));
    assert_eq!(kubernetes_version(&c).0, KubeVersion::new(1, 30));
}

/// What-if: the cluster's nodes against the NodePools and classes of files, with the rollout
/// at the pools' budgets.
#[test]
fn what_if_checks_the_clusters_nodes_against_the_files_pools_and_classes() {
    let cluster = v1_cluster();
    for name in ["old", "new"] {
        cluster.update("v1", "Node", None, name, |n| {
            n["metadata"]["labels"]["karpenter.sh/initialized"] = json!("true");
        });
    }
    let mut read = snapshot::read(&cluster, Scope::default()).unwrap();
    let files = crate::api::load_str(
        "changed.yaml",
        "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiFamily: AL2023
  amiSelectorTerms: [{id: ami-old}]
  subnetSelectorTerms: [{id: subnet-a}]
  securityGroupSelectorTerms: [{id: sg-a}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  disruption: {consolidateAfter: 0s, budgets: [{nodes: '1'}]}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
",
    )
    .unwrap();
    what_if(&mut read.manifests, &files).unwrap();
    assert_eq!(read.manifests.node_pools.len(), 1);
    assert_eq!(read.manifests.node_classes.len(), 1);
    let snapshot = gather(&read.manifests, &cloud(), VERSION, NOW, &mut |_| {
        Ok(Catalog::embedded().unwrap())
    })
    .unwrap();
    let report = check(&Config::default(), snapshot, Mode::WhatIf, Some(VERSION)).unwrap();
    // The class now selects ami-old: the node on ami-new would drift, the other not.
    assert_eq!(
        verdicts(&report),
        [
            ("new", Status::Drifted, Some(DriftReason::AmiDrift)),
            ("old", Status::Ok, None),
        ]
    );
    assert_eq!(
        report.rollout,
        [PoolRollout {
            node_pool: "default".into(),
            drifted: 1,
            nodes: 2,
            at_once: Some(1),
            rounds: Some(1),
        }]
    );
    // Files with nothing to put in place are not a what-if.
    let pods_only = crate::api::load_str(
        "pods.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}\n",
    )
    .unwrap();
    let err = what_if(&mut read.manifests, &pods_only).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
}

/// A node whose instance EC2 no longer knows (terminated about an hour ago, its Node still
/// registered): EC2 fails a query by ids as a whole (`InvalidInstanceID.NotFound`, as moto and
/// the fake do), so the instances are described through an `instance-id` filter — the other
/// nodes are still checked, and the forgotten one has no instance.
#[test]
fn a_node_whose_instance_ec2_forgot_does_not_fail_the_check() {
    let cloud = cloud();
    cloud.instances.borrow_mut().retain(|i| i.id != "i-old");
    let ids = ["i-old".to_string(), "i-new".to_string()];
    let by_ids = crate::cloud::launch::describe_all(&cloud, &ids).unwrap_err();
    assert_eq!(by_ids.code(), Some("InvalidInstanceID.NotFound"));
    let (snapshot, _) = gather_live(&v1_cluster(), &cloud);
    let instance = |name: &str| {
        snapshot
            .nodes
            .iter()
            .find(|n| n.node.name == name)
            .map(|n| n.instance.as_ref().map(|i| i.id.clone()))
    };
    assert_eq!(instance("old"), Some(None));
    assert_eq!(instance("new"), Some(Some("i-new".to_string())));
}

/// What-if's rollout counts a pool's nodes as budgets do: core v1.14.1
/// `disruption/helpers.go BuildDisruptionBudgetMapping` leaves out a node whose NodeClaim is
/// `InstanceTerminating=True`. 10 drifted nodes, `nodes: 50%`, one terminating (NotReady,
/// being deleted): 9 counted, 5 at once, not 10 counted and 4.
#[test]
fn the_rollout_leaves_out_a_node_whose_instance_is_terminating() {
    use crate::model::node::Node;
    use crate::model::nodeclaim::NodeClaim;
    use crate::model::nodepool::{ApiGeneration, Budget};
    let mut pool = NodePool {
        name: "default".into(),
        generation: Some(ApiGeneration::V1),
        ..NodePool::default()
    };
    pool.disruption.budgets = vec![Budget {
        nodes: "50%".into(),
        ..Budget::default()
    }];
    let rollout_with = |terminating: &str| {
        let nodes = (0..10)
            .map(|i| {
                let name = format!("n{i}");
                let last = i == 9;
                ManagedNode {
                    node: Node {
                        name: name.clone(),
                        labels: [("karpenter.sh/nodepool".to_string(), "default".to_string())]
                            .into_iter()
                            .collect(),
                        ready: !last,
                        deleting: last,
                        initialized: true,
                        ..Node::default()
                    },
                    node_claim: Some(NodeClaim {
                        name: format!("claim-{name}"),
                        node_name: Some(name),
                        conditions: [(
                            "InstanceTerminating".to_string(),
                            if last { terminating } else { "False" }.to_string(),
                        )]
                        .into_iter()
                        .collect(),
                        ..NodeClaim::default()
                    }),
                    instance: None,
                }
            })
            .collect();
        let snapshot = DriftSnapshot {
            nodes,
            node_pools: vec![pool.clone()],
            now: NOW,
            ..DriftSnapshot::default()
        };
        let mut evaluation = drift::evaluate(&snapshot);
        for n in &mut evaluation.nodes {
            n.drifted = true;
            n.node_pool = Some("default".into());
        }
        let r = rollout(&snapshot, &evaluation);
        (r[0].nodes, r[0].at_once)
    };
    assert_eq!(rollout_with("True"), (9, Some(5)));
    assert_eq!(rollout_with("False"), (10, Some(4)));
}

/// Live, a class whose subnet selection finds nothing in EC2 (aws v1.14.1
/// `providers/instancetype/instancetype.go List` "no subnets found": `GetInstanceTypes` errs, and
/// core's drift check with it, s28-linedrift): the node on the old AMI gets no reason, the checks
/// listed. Before, `AMIDrift`.
#[test]
fn live_a_class_finding_no_subnet_gets_no_provider_verdict() {
    let mut cloud = cloud();
    cloud.subnets.clear();
    let (snapshot, _) = gather_live(&v1_cluster(), &cloud);
    let report = check(&Config::default(), snapshot, Mode::Live, Some(VERSION)).unwrap();
    assert_eq!(
        verdicts(&report),
        [("new", Status::Ok, None), ("old", Status::Ok, None)]
    );
    assert_eq!(
        report.evaluation.nodes[1].not_checked[0],
        "InstanceTypeNotFound not evaluated: EC2NodeClass default resolves no subnet: Karpenter \
         lists no instance type for NodePool default (\"no subnets found\")"
    );
}
