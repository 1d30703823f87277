//! Drift rules as tables and scenarios (docs/karpenter.md §4.2): every reason, their precedence, the
//! requirement-drift table, v1alpha5's AMI-only drift, and the explanation texts.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::IdSet;
use super::requirements::violations;
use super::*;
use crate::model::nodepool::{ApiGeneration, NodeClassRef};
use crate::model::requirements::{NodeSelectorRequirement, Operator, Requirement, Requirements};

const NOW: &str = "2024-06-24T12:00:00Z";

fn now() -> i64 {
    crate::model::time::parse_rfc3339(NOW).unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn req(key: &str, op: Operator, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement::new(key, op, values)
}

fn pool(generation: ApiGeneration, class: &str) -> NodePool {
    NodePool {
        name: "default".into(),
        generation: Some(generation),
        requirements: vec![req(labels::ARCH, Operator::In, &["amd64", "arm64"])],
        node_class_ref: Some(NodeClassRef {
            group: "karpenter.k8s.aws".into(),
            kind: if generation == ApiGeneration::V1Alpha5 {
                "AWSNodeTemplate".into()
            } else {
                "EC2NodeClass".into()
            },
            name: class.into(),
        }),
        ..NodePool::default()
    }
}

fn class(generation: ApiGeneration, name: &str) -> NodeClass {
    NodeClass {
        name: name.into(),
        kind: if generation == ApiGeneration::V1Alpha5 {
            "AWSNodeTemplate".into()
        } else {
            "EC2NodeClass".into()
        },
        generation: Some(generation),
        ..NodeClass::default()
    }
}

fn image(id: &str, name: &str, arch: &str, source: &str) -> ExpectedImage {
    ExpectedImage {
        id: id.into(),
        name: Some(name.into()),
        requirements: vec![
            req(labels::ARCH, Operator::In, &[arch]),
            req(labels::INSTANCE_GPU_COUNT, Operator::DoesNotExist, &[]),
        ],
        source: source.into(),
    }
}

const SSM_125: &str = "/aws/service/eks/optimized-ami/1.25/amazon-linux-2/recommended/image_id";

fn facts(images: Vec<ExpectedImage>) -> ClassFacts {
    ClassFacts {
        images: Fact::Known(images),
        subnets: Fact::Known(IdSet {
            ids: ["subnet-a", "subnet-b"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            source: "DescribeSubnets".into(),
        }),
        security_groups: Fact::Known(IdSet {
            ids: ["sg-a", "sg-b"].iter().map(|s| s.to_string()).collect(),
            source: "DescribeSecurityGroups".into(),
        }),
        placement_group: Fact::Known(None),
    }
}

fn node(pool_label: &str) -> ManagedNode {
    ManagedNode {
        node: Node {
            name: "ip-10-0-1-23".into(),
            labels: map(&[
                (pool_label, "default"),
                (labels::ARCH, "amd64"),
                (labels::INSTANCE_TYPE, "c6a.2xlarge"),
                (labels::ZONE, "us-east-1a"),
            ]),
            provider_id: Some("aws:///us-east-1a/i-0abc".into()),
            creation_timestamp: Some("2024-06-01T00:00:00Z".into()),
            ..Node::default()
        },
        node_claim: None,
        instance: Some(Instance {
            id: "i-0abc".into(),
            instance_type: "c6a.2xlarge".into(),
            zone: "us-east-1a".into(),
            subnet_id: Some("subnet-a".into()),
            image_id: "ami-0bb".into(),
            security_group_ids: vec!["sg-a".into(), "sg-b".into()],
            ..Instance::default()
        }),
    }
}

/// A v1 world where nothing drifted: node on ami-0bb (the newest amd64 image), in subnet-a
/// with sg-a+sg-b, c6a.2xlarge offered.
fn world() -> DriftSnapshot {
    let c = class(ApiGeneration::V1, "newnode");
    let mut class_facts = BTreeMap::new();
    class_facts.insert(
        class_key(&c.kind, &c.name),
        facts(vec![
            image("ami-0arm", "arm-node", "arm64", "SSM /arm"),
            image(
                "ami-0bb",
                "amazon-eks-node-1.25-v20230711",
                "amd64",
                &format!("SSM {SSM_125}"),
            ),
            image(
                "ami-0aa",
                "amazon-eks-node-1.24-v20230703",
                "amd64",
                "SSM /old",
            ),
        ]),
    );
    DriftSnapshot {
        nodes: vec![node(labels::NODEPOOL)],
        node_pools: vec![pool(ApiGeneration::V1, "newnode")],
        node_classes: vec![c],
        class_facts,
        instance_types: [(
            "default".to_string(),
            ["c6a.2xlarge", "m5.large"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        )]
        .into_iter()
        .collect(),
        offerings: Default::default(),
        image_names: map(&[("ami-0aa", "amazon-eks-node-1.24-v20230703")]),
        now: now(),
        notes: vec![],
        ca_bundle: None,
        instances_described_in: None,
    }
}

fn verdict(s: &DriftSnapshot) -> NodeDrift {
    let e = evaluate(s);
    assert_eq!(e.nodes.len(), 1);
    e.nodes[0].clone()
}

fn reason(s: &DriftSnapshot) -> Option<DriftReason> {
    verdict(s).reason
}

// Mutators, one per reason, so precedence can be tested by combining them.
fn drift_nodepool(s: &mut DriftSnapshot) {
    s.node_pools[0].annotations.extend(map(&[
        (labels::NODEPOOL_HASH, "222"),
        (labels::NODEPOOL_HASH_VERSION, "v3"),
    ]));
    s.nodes[0].node.annotations.extend(map(&[
        (labels::NODEPOOL_HASH, "111"),
        (labels::NODEPOOL_HASH_VERSION, "v3"),
    ]));
}
fn drift_requirements(s: &mut DriftSnapshot) {
    s.node_pools[0].requirements = vec![req(labels::ARCH, Operator::In, &["arm64"])];
}
fn drift_instance_type(s: &mut DriftSnapshot) {
    s.instance_types.insert("default".into(), BTreeSet::new());
}
fn drift_nodeclass(s: &mut DriftSnapshot) {
    s.node_classes[0].annotations.extend(map(&[
        (labels::NODECLASS_HASH, "9"),
        (labels::NODECLASS_HASH_VERSION, "v4"),
    ]));
    s.nodes[0].node.annotations.extend(map(&[
        (labels::NODECLASS_HASH, "8"),
        (labels::NODECLASS_HASH_VERSION, "v4"),
    ]));
}
fn drift_ami(s: &mut DriftSnapshot) {
    s.nodes[0].instance.as_mut().unwrap().image_id = "ami-0aa".into();
}
fn drift_sg(s: &mut DriftSnapshot) {
    s.nodes[0].instance.as_mut().unwrap().security_group_ids = vec!["sg-a".into(), "sg-c".into()];
}
fn drift_subnet(s: &mut DriftSnapshot) {
    s.nodes[0].instance.as_mut().unwrap().subnet_id = Some("subnet-x".into());
}
fn drift_reservation(s: &mut DriftSnapshot) {
    reserve(s, "cr-0old");
    s.node_classes[0].capacity_reservation_selector_terms = vec![id_term("cr-0new")];
}

/// The node launched into reservation `id`, as the AWS provider labels it.
fn reserve(s: &mut DriftSnapshot, id: &str) {
    s.nodes[0].node.labels.extend(map(&[
        (labels::CAPACITY_TYPE, "reserved"),
        (labels::CAPACITY_RESERVATION_ID, id),
        (labels::CAPACITY_RESERVATION_TYPE, "default"),
    ]));
}

fn id_term(id: &str) -> crate::model::reservation::CapacityReservationTerm {
    crate::model::reservation::CapacityReservationTerm {
        id: Some(id.into()),
        ..Default::default()
    }
}

#[test]
fn a_clean_node_is_ok() {
    let v = verdict(&world());
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert!(!v.drifted);
    assert_eq!(v.reason, None);
    assert!(v.not_checked.is_empty(), "{:?}", v.not_checked);
}

#[test]
fn every_reason_alone() {
    type Mutate = fn(&mut DriftSnapshot);
    let cases: [(Mutate, DriftReason); 8] = [
        (drift_nodepool, DriftReason::NodePoolDrifted),
        (drift_requirements, DriftReason::RequirementsDrifted),
        (drift_instance_type, DriftReason::InstanceTypeNotFound),
        (drift_nodeclass, DriftReason::NodeClassDrift),
        (drift_ami, DriftReason::AmiDrift),
        (drift_sg, DriftReason::SecurityGroupDrift),
        (drift_subnet, DriftReason::SubnetDrift),
        (drift_reservation, DriftReason::CapacityReservationDrift),
    ];
    for (mutate, want) in cases {
        let mut s = world();
        mutate(&mut s);
        let v = verdict(&s);
        assert_eq!(v.reason, Some(want), "{v:?}");
        assert_eq!(v.status, Status::Drifted);
        assert!(!v.detail.is_empty());
    }
}

#[test]
fn the_first_reason_in_karpenters_order_wins() {
    type Mutate = fn(&mut DriftSnapshot);
    let order: [(Mutate, DriftReason); 8] = [
        (drift_nodepool, DriftReason::NodePoolDrifted),
        (drift_requirements, DriftReason::RequirementsDrifted),
        (drift_instance_type, DriftReason::InstanceTypeNotFound),
        (drift_nodeclass, DriftReason::NodeClassDrift),
        (drift_ami, DriftReason::AmiDrift),
        (drift_sg, DriftReason::SecurityGroupDrift),
        (drift_subnet, DriftReason::SubnetDrift),
        (drift_reservation, DriftReason::CapacityReservationDrift),
    ];
    // Apply every mutation from position i on: the reason at i must win.
    for i in 0..order.len() {
        let mut s = world();
        for (mutate, _) in &order[i..] {
            mutate(&mut s);
        }
        assert_eq!(reason(&s), Some(order[i].1), "from {:?} on", order[i].1);
    }
    // Pairwise: the earlier one always wins.
    for i in 0..order.len() {
        for j in i + 1..order.len() {
            let mut s = world();
            (order[j].0)(&mut s);
            (order[i].0)(&mut s);
            assert_eq!(
                reason(&s),
                Some(order[i].1),
                "{:?} vs {:?}",
                order[i].1,
                order[j].1
            );
        }
    }
}

#[test]
fn requirement_drift_table() {
    use Operator::*;
    let labels_ = map(&[
        ("karpenter.k8s.aws/instance-category", "r"),
        ("karpenter.k8s.aws/instance-generation", "5"),
        ("team", "a"),
    ]);
    let cases: &[(&str, Operator, &[&str], bool, &str)] = &[
        (
            "karpenter.k8s.aws/instance-category",
            In,
            &["c", "m", "r"],
            false,
            "value still allowed",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            In,
            &["c", "m", "r", "x"],
            false,
            "widening",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            In,
            &["c", "m"],
            true,
            "narrowing past the value",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            NotIn,
            &["r"],
            true,
            "excluding the value",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            NotIn,
            &["c"],
            false,
            "excluding another value",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            Exists,
            &[],
            false,
            "Exists on a present key",
        ),
        (
            "karpenter.k8s.aws/instance-category",
            DoesNotExist,
            &[],
            true,
            "DoesNotExist on a present key",
        ),
        (
            "gpu",
            DoesNotExist,
            &[],
            false,
            "DoesNotExist on an absent key",
        ),
        ("gpu", NotIn, &["x"], false, "NotIn on an absent key"),
        ("gpu", In, &["x"], true, "new In on an absent key"),
        ("gpu", Exists, &[], true, "new Exists on an absent key"),
        ("gpu", Gt, &["1"], true, "new Gt on an absent key"),
        ("gpu", Lt, &["1"], true, "new Lt on an absent key"),
        (
            "karpenter.k8s.aws/instance-generation",
            Gt,
            &["4"],
            false,
            "5 > 4",
        ),
        (
            "karpenter.k8s.aws/instance-generation",
            Gt,
            &["5"],
            true,
            "5 > 5 fails",
        ),
        (
            "karpenter.k8s.aws/instance-generation",
            Lt,
            &["10"],
            false,
            "5 < 10 (integers, not strings)",
        ),
        (
            "karpenter.k8s.aws/instance-generation",
            Lt,
            &["5"],
            true,
            "5 < 5 fails",
        ),
        ("team", Gt, &["1"], true, "a non-integer never satisfies Gt"),
        (
            "kubernetes.io/arch",
            In,
            &["amd64"],
            true,
            "a well-known key is not allowed undefined in drift",
        ),
    ];
    for (key, op, values, drifted, why) in cases {
        let reqs = vec![req(key, *op, values)];
        let v = violations(&labels_, &reqs);
        assert_eq!(
            !v.is_empty(),
            *drifted,
            "{why}: {key} {op} {values:?} → {v:?}"
        );
        // Same answer as the algebra's Compatible with nothing allowed undefined.
        let compatible = Requirements::from_labels(labels_.iter())
            .compatible(&Requirements::from_selectors(&reqs), |_| false)
            .is_ok();
        assert_eq!(compatible, !*drifted, "algebra disagrees: {why}");
    }
}

#[test]
fn requirement_drift_names_the_key_and_the_new_rule() {
    let mut s = world();
    s.node_pools[0].requirements = vec![
        req("karpenter.sh/capacity-type", Operator::In, &["spot"]),
        req(labels::ARCH, Operator::In, &["arm64"]),
    ];
    let v = verdict(&s);
    assert_eq!(
        v.detail,
        "node has no karpenter.sh/capacity-type label but the NodePool now requires karpenter.sh/capacity-type In [spot]; \
kubernetes.io/arch=amd64 no longer matches kubernetes.io/arch In [arm64]"
    );
    assert_eq!(v.changes[1].old.as_deref(), Some("amd64"));
    // Labels read from the NodeClaim (Karpenter's source) are said to be missing there, not on
    // a Node that may well carry them (found by s30-docex).
    s.nodes[0].node_claim = Some(NodeClaim {
        name: "default-x7k2p".into(),
        labels: map(&[(labels::ARCH, "amd64")]),
        ..Default::default()
    });
    assert!(
        verdict(&s).detail.starts_with(
            "its NodeClaim has no karpenter.sh/capacity-type label but the NodePool now requires"
        ),
        "{}",
        verdict(&s).detail
    );
}

/// The rule a drifted label no longer meets is said as the NodePool writes it: `Gt 6`, not the
/// `Gte 7` Karpenter's algebra canonicalises it to (`core v1.14.1: pkg/scheduling/requirement.go
/// NewRequirementWithFlexibility`: "canonicalize GT N to GTE N+1"); two requirements on one key
/// (aliases included) are both named, in the pool's order. Found by s27-linesched, left; fixed by
/// s31-linereq.
#[test]
fn requirement_drift_says_the_rule_as_written() {
    use Operator::*;
    let generation = "karpenter.k8s.aws/instance-generation";
    type Written<'a> = &'a [(&'a str, Operator, &'a [&'a str])];
    let cases: &[(Written, &str)] = &[
        (&[(generation, Gt, &["6"])], "Gt 6"),
        (&[(generation, Lt, &["5"])], "Lt 5"),
        (&[(generation, Gte, &["7"])], "Gte 7"),
        (
            &[(generation, Gt, &["2"]), (generation, Lt, &["6"])],
            "Gt 2, Lt 6",
        ),
        (
            &[(generation, In, &["7", "8"]), (generation, NotIn, &["8"])],
            "In [7,8], NotIn [8]",
        ),
        (&[(generation, DoesNotExist, &[])], "DoesNotExist"),
    ];
    let labels_ = map(&[(generation, "6"), (labels::ZONE, "us-east-1a")]);
    for (written, rule) in cases {
        let reqs: Vec<NodeSelectorRequirement> = written
            .iter()
            .map(|(k, op, values)| req(k, *op, values))
            .collect();
        let v = violations(&labels_, &reqs);
        assert_eq!(v.len(), 1, "{written:?}");
        assert_eq!(v[0].requirement, *rule, "{written:?}");
        assert_eq!(
            v[0].explain("node"),
            format!("{generation}=6 no longer matches {generation} {rule}")
        );
    }
    // A beta alias is the same key: both spellings are named.
    let reqs = vec![
        req(
            "failure-domain.beta.kubernetes.io/zone",
            In,
            &["us-east-1b"],
        ),
        req(labels::ZONE, NotIn, &["us-east-1c"]),
    ];
    let v = violations(&labels_, &reqs);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].requirement, "In [us-east-1b], NotIn [us-east-1c]");
}

#[test]
fn nodepool_hash_drift_is_version_aware() {
    let mut s = world();
    drift_nodepool(&mut s);
    let v = verdict(&s);
    assert_eq!(
        v.detail,
        "NodePool default template changed since launch: karpenter.sh/nodepool-hash 111 (node) ≠ 222 (NodePool default), hash version v3"
    );
    // Different versions: not comparable, not drifted (Karpenter rehashes first).
    s.node_pools[0]
        .annotations
        .insert(labels::NODEPOOL_HASH_VERSION.into(), "v4".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    assert!(v.not_checked[0].contains("hash versions differ"));
    // Any annotation missing: not drifted.
    let mut s = world();
    drift_nodepool(&mut s);
    s.nodes[0]
        .node
        .annotations
        .remove(labels::NODEPOOL_HASH_VERSION);
    assert_eq!(verdict(&s).status, Status::Ok);
    // The NodeClaim's annotations are the ones Karpenter compares.
    let mut s = world();
    drift_nodepool(&mut s);
    s.nodes[0].node_claim = Some(NodeClaim {
        name: "default-x7k2p".into(),
        annotations: map(&[
            (labels::NODEPOOL_HASH, "222"),
            (labels::NODEPOOL_HASH_VERSION, "v3"),
        ]),
        ..Default::default()
    });
    assert_eq!(verdict(&s).status, Status::Ok, "the claim's hash matches");
}

#[test]
fn nodes_this_tool_launched_name_the_changed_template_fields() {
    let mut s = world();
    let mut old = s.node_pools[0].clone();
    old.node_class_ref.as_mut().unwrap().name = "oldnode".into();
    s.nodes[0].instance.as_mut().unwrap().tags = map(&[
        (labels::TOOL_TAG, "kubectl-karpenter"),
        (
            labels::TEMPLATE_RECORD_TAG,
            &TemplateRecord::of_pool(&old).encode(),
        ),
    ]);
    s.node_pools[0].labels = map(&[("team", "a")]);
    let v = verdict(&s);
    assert_eq!(v.reason, Some(DriftReason::NodePoolDrifted));
    assert_eq!(
        v.detail,
        "template changed since launch: nodeClassRef oldnode → newnode; labels +team=a"
    );
    assert_eq!(v.launched_by, "kubectl-karpenter");
    // The record wins over stale hash annotations: an unchanged template is not drifted.
    let mut s = world();
    drift_nodepool(&mut s);
    s.nodes[0].node.annotations.insert(
        labels::TEMPLATE_RECORD_TAG.into(),
        TemplateRecord::of_pool(&s.node_pools[0]).encode(),
    );
    assert_eq!(verdict(&s).status, Status::Ok);
}

#[test]
fn instance_type_not_found_waits_an_hour_and_is_v1_only() {
    let mut s = world();
    drift_instance_type(&mut s);
    assert_eq!(
        verdict(&s).detail,
        "instance type c6a.2xlarge is no longer offered to NodePool default (0 types are)"
    );
    s.nodes[0].node.creation_timestamp = Some("2024-06-24T11:30:00Z".into());
    assert_eq!(verdict(&s).status, Status::Ok, "younger than an hour");
    // `clock.Since(creation) > time.Hour` (drift.go l.95): exactly an hour is not yet.
    s.nodes[0].node.creation_timestamp = Some("2024-06-24T11:00:00Z".into());
    assert_eq!(verdict(&s).status, Status::Ok, "exactly an hour old");
    s.nodes[0].node.creation_timestamp = Some("2024-06-24T10:59:59Z".into());
    assert_eq!(verdict(&s).status, Status::Drifted, "an hour and a second");
    let mut s = world();
    drift_instance_type(&mut s);
    s.node_pools[0].generation = Some(ApiGeneration::V1Beta1);
    assert_eq!(
        verdict(&s).status,
        Status::Ok,
        "v1beta1 had no InstanceTypeNotFound"
    );
    let mut s = world();
    s.instance_types.clear();
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok, "unknown types do not decide");
    assert_eq!(v.not_checked.len(), 1);
}

#[test]
fn ami_drift_names_both_images_and_the_source() {
    let mut s = world();
    drift_ami(&mut s);
    let v = verdict(&s);
    assert_eq!(
        v.detail,
        format!(
            "runs ami-0aa (amazon-eks-node-1.24-v20230703); newnode resolves amd64 → ami-0bb (amazon-eks-node-1.25-v20230711) via SSM {SSM_125}"
        )
    );
    assert_eq!(v.image_id.as_deref(), Some("ami-0aa"));
    assert_eq!(v.expected_image_ids, ["ami-0bb"]);
    assert_eq!(v.changes[0].new.as_deref(), Some("ami-0bb"));
}

#[test]
fn only_the_newest_compatible_ami_counts() {
    // ami-0aa is still in the selection (older, amd64) but is not what the class gives amd64 now.
    let mut s = world();
    drift_ami(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::AmiDrift));
    // An arm64 node is judged against the arm64 image only.
    let mut s = world();
    s.nodes[0]
        .node
        .labels
        .insert(labels::ARCH.into(), "arm64".into());
    assert_eq!(reason(&s), Some(DriftReason::AmiDrift));
    s.nodes[0].instance.as_mut().unwrap().image_id = "ami-0arm".into();
    assert_eq!(verdict(&s).status, Status::Ok);
    // A GPU node has no standard-variant image: drifted, and the detail says so.
    let mut s = world();
    s.nodes[0]
        .node
        .labels
        .insert(labels::INSTANCE_GPU_COUNT.into(), "1".into());
    let v = verdict(&s);
    assert_eq!(
        v.detail,
        "runs ami-0bb; newnode has no AMI for amd64 gpu (it resolves ami-0aa,ami-0arm,ami-0bb)"
    );
}

#[test]
fn ami_drift_reads_the_nodeclaim_image_then_the_annotation() {
    let mut s = world();
    s.nodes[0].instance = None;
    s.nodes[0].node_claim = Some(NodeClaim {
        name: "default-abc".into(),
        image_id: Some("ami-0aa".into()),
        ..Default::default()
    });
    assert_eq!(reason(&s), Some(DriftReason::AmiDrift));
    s.nodes[0].node_claim = None;
    s.nodes[0]
        .node
        .annotations
        .insert(labels::IMAGE_ID_ANNOTATION.into(), "ami-0bb".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    // Without instance facts SG and subnet cannot be judged; that alone is not Unknown.
    assert_eq!(v.not_checked.len(), 2, "{:?}", v.not_checked);
    s.nodes[0].node.annotations.clear();
    let v = verdict(&s);
    assert_eq!(v.status, Status::Unknown);
    assert!(v
        .detail
        .starts_with("AMI drift not checked: the node's image is unknown"));
    assert_eq!(
        v.expected_image_ids,
        ["ami-0bb"],
        "still says what it should run"
    );
}

#[test]
fn unknown_when_the_pool_class_or_amis_are_missing() {
    let mut s = world();
    s.node_pools.clear();
    let v = verdict(&s);
    assert_eq!(v.status, Status::Unknown);
    assert_eq!(v.detail, "NodePool (or Provisioner) default not found");
    let mut s = world();
    s.node_classes.clear();
    let v = verdict(&s);
    assert_eq!(v.status, Status::Unknown);
    assert!(v.detail.starts_with("EC2NodeClass newnode not found"));
    let mut s = world();
    for f in s.class_facts.values_mut() {
        f.images = Fact::Unknown(
            "EC2NodeClass newnode has no status.amis and alias al2023@latest needs SSM".into(),
        );
    }
    let v = verdict(&s);
    assert_eq!(v.status, Status::Unknown);
    assert!(v.detail.contains("alias al2023@latest needs SSM"));
    // Something drifted anyway: Drifted beats Unknown.
    drift_requirements(&mut s);
    assert_eq!(verdict(&s).status, Status::Drifted);
}

#[test]
fn security_group_and_subnet_texts() {
    let mut s = world();
    drift_sg(&mut s);
    assert_eq!(
        verdict(&s).detail,
        "security groups sg-a,sg-c → sg-a,sg-b (sg-c left the selection; sg-b joined it)"
    );
    let mut s = world();
    s.nodes[0].instance.as_mut().unwrap().security_group_ids = vec!["sg-a".into()];
    assert_eq!(
        verdict(&s).detail,
        "security groups sg-a → sg-a,sg-b (sg-b joined it)"
    );
    let mut s = world();
    drift_subnet(&mut s);
    assert_eq!(
        verdict(&s).detail,
        "subnet subnet-x left the selection (now: subnet-a,subnet-b)"
    );
}

#[test]
fn a_launch_template_disables_ami_and_security_group_drift() {
    let mut s = world();
    drift_ami(&mut s);
    drift_sg(&mut s);
    s.node_classes[0].launch_template = Some("my-lt".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    drift_subnet(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::SubnetDrift));
}

/// v1alpha5 (the seed walkthrough): only AMI drift; requirement/hash changes do not count; a
/// Provisioner without providerRef is never drifted.
#[test]
fn v1alpha5_provisioners_only_drift_on_amis() {
    let mut s = world();
    s.node_pools = vec![pool(ApiGeneration::V1Alpha5, "newnode")];
    s.node_classes = vec![class(ApiGeneration::V1Alpha5, "newnode")];
    s.class_facts = [(
        "AWSNodeTemplate/newnode".to_string(),
        facts(vec![ExpectedImage {
            id: "ami-0bb".into(),
            name: None,
            requirements: vec![],
            source: "amiSelector aws::ids ami-0bb".into(),
        }]),
    )]
    .into_iter()
    .collect();
    s.nodes = vec![node(labels::PROVISIONER_NAME)];
    drift_requirements(&mut s);
    drift_nodepool(&mut s);
    drift_sg(&mut s);
    drift_subnet(&mut s);
    assert_eq!(
        verdict(&s).status,
        Status::Ok,
        "none of those count for v1alpha5"
    );
    drift_ami(&mut s);
    let v = verdict(&s);
    assert_eq!(v.reason, Some(DriftReason::AmiDrift));
    assert_eq!(
        v.detail,
        "runs ami-0aa (amazon-eks-node-1.24-v20230703); newnode resolves amd64 → ami-0bb via amiSelector aws::ids ami-0bb"
    );
    // Inline `spec.provider` (no providerRef): never drifted.
    s.node_pools[0].node_class_ref.as_mut().unwrap().kind = "Provisioner".into();
    assert_eq!(verdict(&s).status, Status::Ok);
    s.node_pools[0].node_class_ref = None;
    assert_eq!(verdict(&s).status, Status::Ok);
}

#[test]
fn pairing_keeps_managed_nodes_and_finds_claims() {
    let managed = node(labels::NODEPOOL).node;
    let mut plain = managed.clone();
    plain.name = "system".into();
    plain.labels.clear();
    plain.provider_id = None;
    let claim = NodeClaim {
        name: "default-abc".into(),
        provider_id: managed.provider_id.clone(),
        ..Default::default()
    };
    let inst = node(labels::NODEPOOL).instance.unwrap();
    let (nodes, unmanaged) = pair_nodes(&[plain, managed], &[claim], &[inst]);
    assert_eq!(unmanaged, 1);
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].node_claim.as_ref().unwrap().name, "default-abc");
    assert_eq!(nodes[0].instance.as_ref().unwrap().id, "i-0abc");
}

#[test]
fn reports_are_sorted_and_counted() {
    let mut s = world();
    let mut second = s.nodes[0].clone();
    second.node.name = "a-first".into();
    second.instance.as_mut().unwrap().image_id = "ami-0aa".into();
    s.nodes.push(second);
    let e = evaluate(&s);
    assert_eq!(e.nodes[0].name, "a-first");
    assert_eq!(
        (
            e.summary.total,
            e.summary.drifted,
            e.summary.ok,
            e.summary.unknown
        ),
        (2, 1, 1, 0)
    );
    assert!(e.any_drifted());
    let json = serde_json::to_value(&e.nodes[0]).unwrap();
    assert_eq!(json["reason"], "AMIDrift");
    assert_eq!(json["status"], "Drifted");
    assert_eq!(json["expectedImageIds"][0], "ami-0bb");
}

/// The EKS Auto Mode `general-purpose` template (`drift::hash` tests: nodepool-hash
/// 4012513481623584108 at v3), as the controller last hashed it.
fn hashed_pool_spec(expire_after: &str) -> serde_json::Value {
    serde_json::json!({"template": {"metadata": {}, "spec": {
        "expireAfter": expire_after,
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
        "requirements": [],
        "terminationGracePeriod": "24h0m0s"
    }}})
}

/// Hash annotations, as the controller writes them on both the owner and the NodeClaim.
fn hash_annotations(
    key: &str,
    version_key: &str,
    hash: &str,
    version: &str,
) -> BTreeMap<String, String> {
    map(&[(key, hash), (version_key, version)])
}

#[test]
fn an_edited_pool_drifts_though_no_controller_updated_its_annotation() {
    let mut s = world();
    let annotated = hash_annotations(
        labels::NODEPOOL_HASH,
        labels::NODEPOOL_HASH_VERSION,
        "4012513481623584108",
        "v3",
    );
    s.node_pools[0].raw_spec = Some(hashed_pool_spec("336h"));
    s.node_pools[0].annotations.extend(annotated.clone());
    s.nodes[0].node.annotations.extend(annotated);
    assert_eq!(verdict(&s).status, Status::Ok, "unedited: hashes agree");
    assert!(evaluate(&s).notes.is_empty());

    // `kubectl edit` with the controller scaled away: the annotation keeps the old hash.
    s.node_pools[0].raw_spec = Some(hashed_pool_spec("720h"));
    let v = verdict(&s);
    assert_eq!(v.reason, Some(DriftReason::NodePoolDrifted));
    assert!(
        v.detail.starts_with("NodePool default template changed since launch: karpenter.sh/nodepool-hash 4012513481623584108 (node) → "),
        "{}",
        v.detail
    );
    assert!(v.detail.contains("computed from its spec, hash version v3"));
    assert!(v
        .detail
        .contains("its own annotation still says 4012513481623584108"));
    let notes = evaluate(&s).notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("NodePool default: its karpenter.sh/nodepool-hash annotation (4012513481623584108) is stale"));

    // Karpenter's rule stands: different versions are never compared.
    s.node_pools[0]
        .annotations
        .insert(labels::NODEPOOL_HASH_VERSION.into(), "v4".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    assert!(v.not_checked[0].contains("hash versions differ"));
}

#[test]
fn an_edited_node_class_drifts_and_unknown_versions_are_listed_not_judged() {
    let mut s = world();
    let spec = serde_json::json!({"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}]});
    s.node_classes[0].raw_spec = Some(spec.clone());
    let launched = hash::node_class_hash(&s.node_classes[0], "v4", Err("unused")).unwrap();
    let annotated = hash_annotations(
        labels::NODECLASS_HASH,
        labels::NODECLASS_HASH_VERSION,
        &launched,
        "v4",
    );
    s.node_classes[0].annotations.extend(annotated.clone());
    s.nodes[0].node.annotations.extend(annotated);
    assert_eq!(verdict(&s).status, Status::Ok);

    let mut edited = spec;
    edited["userData"] = serde_json::json!("#!/bin/bash\necho hi");
    s.node_classes[0].raw_spec = Some(edited);
    let v = verdict(&s);
    assert_eq!(v.reason, Some(DriftReason::NodeClassDrift));
    assert!(
        v.detail
            .starts_with("EC2NodeClass newnode spec changed since launch"),
        "{}",
        v.detail
    );

    // v5 mixes in the CA bundle: offline, with one class, it cannot be confirmed. The check
    // falls back to the annotations (equal here) and says so instead of guessing.
    let v5 = (labels::NODECLASS_HASH_VERSION.to_string(), "v5".to_string());
    s.node_classes[0].annotations.extend([v5.clone()]);
    s.nodes[0].node.annotations.extend([v5]);
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    assert!(
        v.not_checked.iter().any(|n| n
            .starts_with("NodeClassDrift: the current hash was not computed")
            && n.contains("CA bundle")),
        "{:?}",
        v.not_checked
    );
}

#[test]
fn a_v5_class_is_judged_once_the_cluster_ca_bundle_is_confirmed() {
    let mut s = world();
    s.node_classes[0].raw_spec = Some(serde_json::json!({"role": "r", "amiFamily": "AL2023"}));
    let ca = hash::CaTerm::of_bundle("LS0tLS1CRUdJTi…");
    let launched = hash::node_class_hash(&s.node_classes[0], "v5", Ok(ca)).unwrap();
    let annotated = hash_annotations(
        labels::NODECLASS_HASH,
        labels::NODECLASS_HASH_VERSION,
        &launched,
        "v5",
    );
    s.node_classes[0].annotations.extend(annotated.clone());
    s.nodes[0].node.annotations.extend(annotated);
    // A second, unedited class confirms the bundle read from the cluster.
    let mut other = s.node_classes[0].clone();
    other.name = "other".into();
    s.node_classes.push(other);
    s.ca_bundle = Some("LS0tLS1CRUdJTi…".into());
    s.node_classes[0].raw_spec = Some(serde_json::json!({"role": "r2", "amiFamily": "AL2023"}));
    let v = verdict(&s);
    assert_eq!(v.reason, Some(DriftReason::NodeClassDrift), "{v:?}");
    assert!(v.detail.contains("hash version v5"), "{}", v.detail);
    // A bundle no class confirms is not used: not checked instead of a guess.
    s.ca_bundle = Some("some other CA".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    assert!(
        v.not_checked.iter().any(|n| n.contains("kube-root-ca.crt")),
        "{:?}",
        v.not_checked
    );
}

/// `CapacityReservationDrift` (`aws: pkg/cloudprovider/drift.go` `isCapacityReservationDrifted`;
/// upstream tests "should dynamically drift nodeclaims for capacity reservations" and "should not
/// drift when capacity reservation falls back to on-demand", `pkg/cloudprovider/suite_test.go`):
/// the class's status decides, its selector terms first where they alone can tell, and what
/// cannot be told offline is listed as not checked.
#[test]
fn capacity_reservation_drift_table() {
    use crate::model::nodepool::ReservationStatus;
    use crate::model::reservation::CapacityReservationTerm;
    let tags = CapacityReservationTerm {
        tags: map(&[("team", "ml")]),
        ..Default::default()
    };
    let status = |ids: &[&str]| {
        Some(
            ids.iter()
                .map(|id| ReservationStatus {
                    id: id.to_string(),
                    instance_type: "c6a.2xlarge".into(),
                    zone: "us-east-1a".into(),
                })
                .collect::<Vec<_>>(),
        )
    };
    type Case = (
        &'static str,
        Option<&'static str>,
        Vec<CapacityReservationTerm>,
        Option<Vec<ReservationStatus>>,
        Status,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        ("not reserved", None, vec![], None, Status::Ok, ""),
        (
            "selected and active",
            Some("cr-0a"),
            vec![id_term("cr-0a")],
            status(&["cr-0a"]),
            Status::Ok,
            "",
        ),
        (
            "no longer selected",
            Some("cr-0a"),
            vec![id_term("cr-0b")],
            status(&["cr-0a"]),
            Status::Drifted,
            "capacity reservation cr-0a is no longer selected by EC2NodeClass newnode's capacityReservationSelectorTerms (now: cr-0b)",
        ),
        (
            "terms removed",
            Some("cr-0a"),
            vec![],
            None,
            Status::Drifted,
            "capacity reservation cr-0a is no longer selected by EC2NodeClass newnode's capacityReservationSelectorTerms (now: none)",
        ),
        (
            "gone from the status",
            Some("cr-0a"),
            vec![id_term("cr-0a")],
            status(&["cr-0b"]),
            Status::Drifted,
            "capacity reservation cr-0a is not in EC2NodeClass newnode status.capacityReservations (now: cr-0b): no longer selected or no longer active",
        ),
        (
            "selected by tags, status says active",
            Some("cr-0a"),
            vec![tags.clone()],
            status(&["cr-0a"]),
            Status::Ok,
            "",
        ),
        (
            "selected by id, no status",
            Some("cr-0a"),
            vec![id_term("cr-0a")],
            None,
            Status::Ok,
            "CapacityReservationDrift: whether capacity reservation cr-0a is still active needs EC2NodeClass newnode's status.capacityReservations (DescribeCapacityReservations)",
        ),
        (
            "tags, no status",
            Some("cr-0a"),
            vec![tags],
            None,
            Status::Ok,
            "CapacityReservationDrift: whether capacity reservation cr-0a is selected by its tags and still active needs EC2NodeClass newnode's status.capacityReservations (DescribeCapacityReservations)",
        ),
    ];
    for (name, id, terms, st, want, text) in cases {
        let mut s = world();
        if let Some(id) = id {
            reserve(&mut s, id);
        }
        s.node_classes[0].capacity_reservation_selector_terms = terms;
        s.node_classes[0].status.capacity_reservations = st;
        let v = verdict(&s);
        assert_eq!(v.status, want, "{name}: {v:?}");
        match want {
            Status::Drifted => {
                assert_eq!(
                    v.reason,
                    Some(DriftReason::CapacityReservationDrift),
                    "{name}"
                );
                assert_eq!(v.detail, text, "{name}");
                assert_eq!(v.changes[0].old.as_deref(), id, "{name}");
            }
            _ if text.is_empty() => assert!(v.not_checked.is_empty(), "{name}: {v:?}"),
            _ => assert_eq!(v.not_checked, [text], "{name}"),
        }
    }
    // Reserved capacity without the reservation label: not checked, said so.
    let mut s = world();
    s.nodes[0]
        .node
        .labels
        .insert(labels::CAPACITY_TYPE.into(), "reserved".into());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok);
    assert_eq!(
        v.not_checked,
        ["CapacityReservationDrift: the node is reserved capacity without a karpenter.k8s.aws/capacity-reservation-id label"]
    );
}

/// `aws v1.14.1: pkg/cloudprovider/suite_test.go` "NodeClaim Drift", one row per It, on our
/// world given a NodeClaim whose `status.imageID` is the instance's image (ami-0bb). Upstream's
/// "should return an error if …" / "should error if …" leave the NodeClaim undrifted (the
/// controller keeps the condition it had): here not drifted either, the gap listed or filled from
/// the instance. The capacity-reservation Its are `capacity_reservation_drift_table`, the static
/// ones `an_edited_node_class_drifts_and_unknown_versions_are_listed_not_judged` and
/// `drift::hash::tests`.
#[test]
fn cloudprovider_suite_nodeclaim_drift() {
    fn claimed() -> DriftSnapshot {
        let mut s = world();
        s.nodes[0].node_claim = Some(NodeClaim {
            name: "default-abc".into(),
            image_id: Some("ami-0bb".into()),
            provider_id: Some("aws:///us-east-1a/i-0abc".into()),
            ..Default::default()
        });
        s
    }
    fn instance(s: &mut DriftSnapshot) -> &mut Instance {
        s.nodes[0].instance.as_mut().unwrap()
    }
    fn set_facts(s: &mut DriftSnapshot, f: impl Fn(&mut ClassFacts)) {
        s.class_facts.values_mut().for_each(f);
    }
    fn ids(list: &[&str]) -> Fact<IdSet> {
        Fact::Known(IdSet {
            ids: list.iter().map(|s| s.to_string()).collect(),
            source: "status".into(),
        })
    }
    type Mutate = fn(&mut DriftSnapshot);
    let cases: [(&str, Mutate, Status, Option<DriftReason>); 17] = [
        ("should not return drifted if the NodeClaim is valid", |_| {}, Status::Ok, None),
        ("should not return drifted if the security groups match", |_| {}, Status::Ok, None),
        ("should not fail if NodeClass does not exist", |s| s.node_classes.clear(), Status::Unknown, None),
        ("should not fail if NodePool does not exist", |s| s.node_pools.clear(), Status::Unknown, None),
        (
            "should return drifted if the AMI is not valid",
            |s| s.nodes[0].node_claim.as_mut().unwrap().image_id = Some("ami-0random".into()),
            Status::Drifted,
            Some(DriftReason::AmiDrift),
        ),
        (
            "should return drifted if there are multiple drift reasons",
            |s| {
                instance(s).image_id = "ami-0random".into();
                drift_subnet(s);
                instance(s).security_group_ids = vec!["sg-random".into()];
                drift_nodeclass(s);
            },
            Status::Drifted,
            Some(DriftReason::NodeClassDrift),
        ),
        ("should return drifted if the subnet is not valid", drift_subnet, Status::Drifted, Some(DriftReason::SubnetDrift)),
        (
            "should return an error if subnets are empty",
            |s| set_facts(s, |f| f.subnets = ids(&[])),
            Status::Ok,
            None,
        ),
        (
            "should return an error if the security groups are empty",
            |s| {
                set_facts(s, |f| f.security_groups = ids(&[]));
                instance(s).security_group_ids = vec!["sg-random".into()];
            },
            Status::Ok,
            None,
        ),
        (
            "should return drifted if the instance security groups doesn't match the discovered values",
            |s| instance(s).security_group_ids = vec!["sg-random".into()],
            Status::Drifted,
            Some(DriftReason::SecurityGroupDrift),
        ),
        (
            "should return drifted if there are more instance security groups present than in the discovered values",
            |s| instance(s).security_group_ids = vec!["sg-random".into(), "sg-a".into(), "sg-b".into()],
            Status::Drifted,
            Some(DriftReason::SecurityGroupDrift),
        ),
        (
            "should return drifted if more security groups are present than instance security groups then discovered from nodeclass",
            |s| set_facts(s, |f| f.security_groups = ids(&["sg-a", "sg-b", "sg-random"])),
            Status::Drifted,
            Some(DriftReason::SecurityGroupDrift),
        ),
        (
            "should error if the NodeClaim doesn't have the instance-type label",
            |s| {
                s.nodes[0].node.labels.remove(labels::INSTANCE_TYPE);
            },
            Status::Ok,
            None,
        ),
        (
            "should error if the NodeClaim doesn't have ImageID",
            |s| s.nodes[0].node_claim.as_mut().unwrap().image_id = None,
            Status::Ok,
            None,
        ),
        (
            "should error drift if NodeClaim doesn't have provider id",
            |s| s.nodes[0].node_claim.as_mut().unwrap().provider_id = None,
            Status::Ok,
            None,
        ),
        (
            "should error if the underlying NodeClaim doesn't exist",
            |s| s.nodes[0].instance = None,
            Status::Ok,
            None,
        ),
        (
            "should return drifted if the AMI no longer matches the existing NodeClaims instance type",
            |s| s.nodes[0].node_claim.as_mut().unwrap().image_id = Some("ami-0arm".into()),
            Status::Drifted,
            Some(DriftReason::AmiDrift),
        ),
    ];
    for (it, mutate, status, want) in cases {
        let mut s = claimed();
        mutate(&mut s);
        let v = verdict(&s);
        assert_eq!((v.status, v.reason), (status, want), "{it}: {v:?}");
    }
}

/// An empty security-group or subnet selection fails the provider's drift check (`aws v1.14.1:
/// pkg/cloudprovider/drift.go`), so the reasons after AMI drift are not reported. Differed:
/// class resolving no security group, instance in a subnet the class no longer selects →
/// upstream errors (no drift); we said `SubnetDrift`. v1beta1 (v0.37 computes every provider
/// reason first) does not report AMI drift then either.
#[test]
fn an_empty_security_group_or_subnet_selection_stops_the_provider_checks() {
    let empty = || {
        Fact::Known(IdSet {
            ids: BTreeSet::new(),
            source: "DescribeSecurityGroups".into(),
        })
    };
    let mut s = world();
    drift_subnet(&mut s);
    drift_reservation(&mut s);
    s.class_facts
        .values_mut()
        .for_each(|f| f.security_groups = empty());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert_eq!(
        v.not_checked,
        ["security-group, subnet and capacity-reservation drift not evaluated: EC2NodeClass newnode resolves no security group (Karpenter's drift check fails then)"]
    );
    // v1 judges AMI drift before; v1beta1 does not report it.
    drift_ami(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::AmiDrift));
    s.node_pools[0].generation = Some(ApiGeneration::V1Beta1);
    s.node_classes[0].generation = Some(ApiGeneration::V1Beta1);
    assert_eq!(verdict(&s).status, Status::Ok);
    // No subnet: the same, and sooner on v1 (no instance types either,
    // `a_class_resolving_no_subnet_lists_no_instance_type`).
    let mut s = world();
    drift_sg(&mut s);
    s.class_facts.values_mut().for_each(|f| f.subnets = empty());
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert!(v.not_checked[0].starts_with(
        "InstanceTypeNotFound not evaluated: EC2NodeClass newnode resolves no subnet"
    ));
    s.node_pools[0].generation = Some(ApiGeneration::V1Beta1);
    s.node_classes[0].generation = Some(ApiGeneration::V1Beta1);
    let v = verdict(&s);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert!(v.not_checked[0].ends_with("resolves no subnet (Karpenter's drift check fails then)"));
}

/// `PlacementGroupDrift` (`aws v1.14.1: pkg/cloudprovider/drift.go` `isPlacementGroupDrifted`,
/// no It of its own in v1.14.1): the node's `placement-group-id` label against the group the
/// class resolves to now — selector added, removed, changed (the group recreated under a new
/// id), unchanged, and not resolvable (listed, not judged).
#[test]
fn placement_group_drift_table() {
    type Case<'a> = (&'a str, Option<&'a str>, bool, Fact<Option<String>>, Status);
    let cases: [Case; 6] = [
        (
            "no selector, no label",
            None,
            false,
            Fact::Known(None),
            Status::Ok,
        ),
        (
            "selector removed",
            Some("pg-0a"),
            false,
            Fact::Known(None),
            Status::Drifted,
        ),
        (
            "selector added",
            None,
            true,
            Fact::Known(Some("pg-0a".into())),
            Status::Drifted,
        ),
        (
            "group recreated",
            Some("pg-0a"),
            true,
            Fact::Known(Some("pg-0b".into())),
            Status::Drifted,
        ),
        (
            "unchanged",
            Some("pg-0a"),
            true,
            Fact::Known(Some("pg-0a".into())),
            Status::Ok,
        ),
        (
            "unresolved",
            Some("pg-0a"),
            true,
            Fact::Unknown("PlacementGroupDrift: not resolved".into()),
            Status::Ok,
        ),
    ];
    for (name, label, selector, fact, want) in cases {
        let mut s = world();
        if let Some(id) = label {
            s.nodes[0]
                .node
                .labels
                .insert(labels::PLACEMENT_GROUP_ID.into(), id.into());
        }
        if selector {
            let spec = s.node_classes[0]
                .raw_spec
                .get_or_insert_with(|| serde_json::json!({}));
            spec["placementGroupSelector"] = serde_json::json!({"name": "pg"});
        }
        let key = class_key("EC2NodeClass", "newnode");
        s.class_facts.get_mut(&key).unwrap().placement_group = fact;
        let v = verdict(&s);
        assert_eq!(v.status, want, "{name}: {v:?}");
        if want == Status::Drifted {
            assert_eq!(v.reason, Some(DriftReason::PlacementGroupDrift), "{name}");
        }
        if name == "unresolved" {
            assert_eq!(v.not_checked, ["PlacementGroupDrift: not resolved"]);
        }
    }
}

/// core v1.14.1 `nodeclaim/disruption/drift_test.go`, the rules before any reason: a NodeClaim
/// whose `Launched` is Unknown or False, or whose `nodeClassRef` names another provider's class
/// (`UnmanagedNodeClass`), is not judged; one without conditions is (hand-written manifests).
/// And "…offerings aren't compatible with the nodeclaim" / "Reserved Capacity": the node's type is
/// offered, but no offering fits its zone and capacity type (a reserved node fits on-demand).
#[test]
fn unlaunched_and_unmanaged_claims_are_not_judged_and_offerings_must_fit() {
    let drifted_ami = || {
        let mut s = world();
        s.nodes[0].node_claim = Some(NodeClaim {
            name: "default-abc".into(),
            image_id: Some("ami-0random".into()),
            provider_id: Some("aws:///us-east-1a/i-0abc".into()),
            ..Default::default()
        });
        s
    };
    assert_eq!(reason(&drifted_ami()), Some(DriftReason::AmiDrift));
    for status in ["Unknown", "False"] {
        let mut s = drifted_ami();
        let claim = s.nodes[0].node_claim.as_mut().unwrap();
        claim.conditions.insert("Launched".into(), status.into());
        let v = verdict(&s);
        assert_eq!(
            (v.status, v.reason),
            (Status::Unknown, None),
            "{}",
            v.detail
        );
        assert!(
            v.detail.contains(&format!("Launched={status}")),
            "{}",
            v.detail
        );
    }
    let mut s = drifted_ami();
    s.nodes[0].node_claim.as_mut().unwrap().node_class_ref = Some(NodeClassRef {
        group: "karpenter.test.sh".into(),
        kind: "UnmanagedNodeClass".into(),
        name: "default".into(),
    });
    assert_eq!(verdict(&s).status, Status::Unknown);

    let offered = |zone: &str, capacity_type: &str| {
        let mut r = Requirements::new();
        r.add(Requirement::single(labels::ZONE, zone));
        r.add(Requirement::single(labels::CAPACITY_TYPE, capacity_type));
        r
    };
    let with = |node_ct: &str, offerings: Vec<Requirements>| {
        let mut s = world();
        s.nodes[0].node.creation_timestamp = Some("2020-01-01T00:00:00Z".into());
        s.nodes[0]
            .node
            .labels
            .insert(labels::CAPACITY_TYPE.into(), node_ct.into());
        s.offerings.insert(
            "default".into(),
            [("c6a.2xlarge".to_string(), offerings)]
                .into_iter()
                .collect(),
        );
        reason(&s)
    };
    assert_eq!(
        with("on-demand", vec![offered("us-east-1a", "on-demand")]),
        None
    );
    assert_eq!(
        with("on-demand", vec![offered("us-east-1b", "on-demand")]),
        Some(DriftReason::InstanceTypeNotFound)
    );
    assert_eq!(
        with("on-demand", vec![offered("us-east-1a", "spot")]),
        Some(DriftReason::InstanceTypeNotFound)
    );
    assert_eq!(
        with("reserved", vec![offered("us-east-1a", "on-demand")]),
        None
    );
    assert_eq!(
        with("reserved", vec![offered("us-east-1a", "spot")]),
        Some(DriftReason::InstanceTypeNotFound)
    );
}

/// aws v1.14.1 `pkg/cloudprovider/drift.go` `isAMIDrifted` fails when the class's `status.amis`
/// is empty ("no amis exist given constraints"; `controllers/nodeclass/ami.go` writes nil when the
/// selection matches nothing) and `isNodeClassDrifted` returns that error before the
/// security-group, subnet, capacity-reservation and placement-group checks: no verdict (v0.37's
/// `isAMIDrifted` fails the same way before its security-group and subnet checks). Differed: we
/// went on and said `SecurityGroupDrift`.
#[test]
fn a_class_resolving_no_ami_stops_the_provider_checks() {
    let no_ami = |generation: ApiGeneration| {
        let mut s = world();
        s.node_pools[0].generation = Some(generation);
        s.node_classes[0].generation = Some(generation);
        drift_sg(&mut s);
        drift_subnet(&mut s);
        drift_reservation(&mut s);
        s.class_facts
            .values_mut()
            .for_each(|f| f.images = Fact::Known(vec![]));
        s
    };
    for generation in [ApiGeneration::V1, ApiGeneration::V1Beta1] {
        let v = verdict(&no_ami(generation));
        assert_eq!((v.status, v.reason), (Status::Unknown, None), "{v:?}");
        assert_eq!(
            v.detail,
            "AMI drift not checked: EC2NodeClass newnode resolves no AMI"
        );
        assert_eq!(
            v.not_checked.last().unwrap(),
            "security-group, subnet, capacity-reservation and placement-group drift not evaluated: \
             EC2NodeClass newnode resolves no AMI (Karpenter's drift check fails at its AMI check then)"
        );
    }
    // The checks before the provider's still decide.
    let mut s = no_ami(ApiGeneration::V1);
    drift_requirements(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::RequirementsDrifted));
}

/// aws v1.14.1 `pkg/cloudprovider/drift.go` `isAMIDrifted` looks the NodeClaim's instance type up
/// in `GetInstanceTypes(nodePool)` and fails when it is not there ("finding node instance type"),
/// before every later provider check. Core's `InstanceTypeNotFound` (`nodeclaim/disruption/
/// drift.go isDrifted`) only judges NodeClaims older than an hour, so a younger node whose type
/// the class no longer offers gets no verdict at all. Differed: we judged its AMI and security
/// groups.
#[test]
fn a_young_node_whose_type_is_no_longer_offered_gets_no_provider_verdict() {
    let young = || {
        let mut s = world();
        s.nodes[0].node.creation_timestamp = Some("2024-06-24T11:30:00Z".into());
        drift_ami(&mut s);
        drift_sg(&mut s);
        s
    };
    assert_eq!(reason(&young()), Some(DriftReason::AmiDrift), "offered");
    let mut s = young();
    drift_instance_type(&mut s);
    let v = verdict(&s);
    // Not judged, as an empty security-group selection: OK with the checks listed.
    assert_eq!((v.status, v.reason), (Status::Ok, None), "{v:?}");
    assert_eq!(
        v.not_checked[0],
        "AMI drift not checked: instance type c6a.2xlarge is not among NodePool default's \
         instance types now (Karpenter's drift check fails then; InstanceTypeNotFound judges \
         the node once it is an hour old)"
    );
    assert_eq!(
        v.not_checked.last().unwrap(),
        "security-group, subnet, capacity-reservation and placement-group drift not evaluated: \
         instance type c6a.2xlarge is not among NodePool default's instance types now \
         (Karpenter's drift check fails at its AMI check then)"
    );
    // An hour old: InstanceTypeNotFound, as before.
    s.nodes[0].node.creation_timestamp = Some("2024-06-24T10:59:00Z".into());
    assert_eq!(reason(&s), Some(DriftReason::InstanceTypeNotFound));
    // The pool's types unknown: nothing to say, the checks run.
    let mut s = young();
    s.instance_types.clear();
    assert_eq!(reason(&s), Some(DriftReason::AmiDrift));
}

/// aws v1.14.1 `pkg/cloudprovider/cloudprovider.go` `resolveNodeClassFromNodePool` treats a
/// class being deleted as not found: `IsDrifted` returns no reason (no `NodeClassDrift`, AMI,
/// security-group, subnet, reservation or placement-group drift; v0.37 alike) and
/// `GetInstanceTypes` returns no types, so core's `instanceTypeNotFound`
/// (`nodeclaim/disruption/drift.go`) finds the NodeClaim's type missing once it is an hour old.
/// Differed: we judged the deleting class like any other (`AMIDrift` here, never
/// `InstanceTypeNotFound`).
#[test]
fn a_node_class_being_deleted_is_not_found() {
    let deleting = |created: &str, generation: ApiGeneration| {
        let mut s = world();
        s.node_pools[0].generation = Some(generation);
        s.node_classes[0].generation = Some(generation);
        s.node_classes[0].deleting = true;
        s.nodes[0].node.creation_timestamp = Some(created.into());
        drift_ami(&mut s);
        drift_nodeclass(&mut s);
        s
    };
    let v = verdict(&deleting("2024-06-24T10:00:00Z", ApiGeneration::V1));
    assert_eq!(v.reason, Some(DriftReason::InstanceTypeNotFound), "{v:?}");
    assert_eq!(
        v.detail,
        "EC2NodeClass newnode is being deleted: Karpenter lists no instance type for NodePool default"
    );
    let note = "node-class, AMI, security-group, subnet, capacity-reservation and placement-group \
                drift not evaluated: EC2NodeClass newnode is being deleted (Karpenter resolves it \
                as not found)";
    for (created, generation) in [
        ("2024-06-24T11:30:00Z", ApiGeneration::V1),
        ("2024-06-24T10:00:00Z", ApiGeneration::V1Beta1),
    ] {
        let v = verdict(&deleting(created, generation));
        assert_eq!((v.status, v.reason), (Status::Ok, None), "{v:?}");
        assert_eq!(v.not_checked, [note]);
    }
    // The NodePool's own checks still decide.
    let mut s = deleting("2024-06-24T11:30:00Z", ApiGeneration::V1);
    drift_requirements(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::RequirementsDrifted));
}

/// aws v1.14.1 `pkg/cloudprovider/drift.go` `isAMIDrifted` fails on a NodeClaim without
/// `status.imageID` ("no ami ID found in nodeClaim status") before the security-group check.
/// Differed: with nothing else telling the image, we went on and said `SecurityGroupDrift`. (With
/// the instance's `ImageId` known we still judge the AMI, docs/drift.md.)
#[test]
fn a_nodeclaim_without_an_image_gets_no_later_provider_verdict() {
    let mut s = world();
    drift_sg(&mut s);
    s.nodes[0].instance.as_mut().unwrap().image_id = String::new();
    s.nodes[0].node_claim = Some(NodeClaim {
        name: "default-abc".into(),
        ..Default::default()
    });
    let v = verdict(&s);
    assert_eq!((v.status, v.reason), (Status::Unknown, None), "{v:?}");
    assert!(v
        .detail
        .starts_with("AMI drift not checked: the node's image is unknown"));
    assert_eq!(
        v.not_checked.last().unwrap(),
        "security-group, subnet, capacity-reservation and placement-group drift not evaluated: \
         NodeClaim default-abc has no status.imageID (Karpenter's drift check fails at its AMI \
         check then)"
    );
    // The instance's image known: judged as before.
    s.nodes[0].instance.as_mut().unwrap().image_id = "ami-0bb".into();
    assert_eq!(reason(&s), Some(DriftReason::SecurityGroupDrift));
}

/// aws v1.14.1 `providers/instancetype/instancetype.go` `List` errs ("no subnets found") when the
/// class's `status.subnets` is empty (`ZoneInfo`), so `GetInstanceTypes` errs: for a NodeClaim
/// older than an hour core's `instanceTypeNotFound` step (`nodeclaim/disruption/drift.go
/// isDrifted`) returns that error before any provider check; for a younger one `isAMIDrifted`
/// does, after `NodeClassDrift`. Differed: we judged `InstanceTypeNotFound`, `NodeClassDrift`
/// and `AMIDrift` there.
#[test]
fn a_class_resolving_no_subnet_lists_no_instance_type() {
    let no_subnet = |created: &str| {
        let mut s = world();
        s.nodes[0].node.creation_timestamp = Some(created.into());
        s.class_facts.values_mut().for_each(|f| {
            f.subnets = Fact::Known(IdSet {
                ids: BTreeSet::new(),
                source: "DescribeSubnets".into(),
            })
        });
        drift_ami(&mut s);
        s
    };
    let why = "EC2NodeClass newnode resolves no subnet: Karpenter lists no instance type for \
               NodePool default (\"no subnets found\")";
    let old = "2024-06-24T10:00:00Z";
    for edit in [drift_nodeclass, drift_instance_type] {
        let mut s = no_subnet(old);
        edit(&mut s);
        let v = verdict(&s);
        assert_eq!((v.status, v.reason), (Status::Ok, None), "{v:?}");
        assert_eq!(
            v.not_checked,
            [
                format!("InstanceTypeNotFound not evaluated: {why}"),
                format!(
                    "node-class, AMI, security-group, subnet, capacity-reservation and \
                     placement-group drift not evaluated: {why} (Karpenter's drift check fails \
                     at its instance-type check then)"
                ),
            ]
        );
    }
    let mut s = no_subnet(old);
    drift_requirements(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::RequirementsDrifted));
    // Younger than an hour: NodeClassDrift is judged, the AMI check fails.
    let young = "2024-06-24T11:30:00Z";
    let v = verdict(&no_subnet(young));
    assert_eq!((v.status, v.reason), (Status::Ok, None), "{v:?}");
    assert_eq!(v.not_checked[0], format!("AMI drift not checked: {why}"));
    let mut s = no_subnet(young);
    drift_nodeclass(&mut s);
    assert_eq!(reason(&s), Some(DriftReason::NodeClassDrift));
}
