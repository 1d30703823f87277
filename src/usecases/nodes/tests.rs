//! The view: rows and totals (pure), and the whole assembly against the in-memory cluster and
//! cloud — with EC2, without (`--no-aws`), with EC2 unreachable — and the notes it tells.

use serde_json::{json, Value};

use super::*;
use crate::api::NodeClaim;
use crate::cloud::fake::FakeCloud;
use crate::cloud::types::{Cloud, CloudError, Image};
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::k8s::snapshot::{self, Scope};
use crate::model::node::Node;
use crate::model::pod::PodFields;

fn node(name: &str, pool: Option<&str>, cpu: &str, created: &str) -> ManagedNode {
    let mut labels = BTreeMap::new();
    if let Some(p) = pool {
        labels.insert(labels::NODEPOOL.to_string(), p.to_string());
    }
    labels.insert(labels::INSTANCE_TYPE.into(), "m5.large".into());
    labels.insert(labels::ZONE.into(), "us-east-1a".into());
    labels.insert(labels::REGION.into(), "us-east-1".into());
    labels.insert(labels::CAPACITY_TYPE.into(), ON_DEMAND.into());
    ManagedNode {
        node: Node {
            name: name.into(),
            labels,
            allocatable: Resources::from_pairs(&[("cpu", cpu), ("memory", "8Gi"), ("pods", "29")]),
            ready: true,
            creation_timestamp: Some(created.into()),
            ..Node::default()
        },
        ..ManagedNode::default()
    }
}

fn pod(name: &str, node: &str, cpu: &str, phase: &str) -> Pod {
    Pod::new(
        name,
        "",
        PodFields {
            namespace: "default".into(),
            node_name: Some(node.into()),
            phase: Some(phase.into()),
            requests: Resources::from_pairs(&[("cpu", cpu), ("memory", "1Gi"), ("pods", "1")]),
            ..PodFields::default()
        },
    )
}

/// Found by the input fuzzer (s30-fuzz): two nodes of one pool with an allocatable as large as
/// the API server takes made the pool's totals overflow (`nodes -f`: a panic in a debug build).
#[test]
fn pool_totals_saturate_where_two_nodes_hold_the_largest_quantity() {
    let mut total = Usage::default();
    let huge = Usage {
        cpu: i64::MAX,
        memory: i64::MAX,
        pods: i64::MAX,
    };
    total.add(&huge);
    total.add(&huge);
    assert_eq!(total.cpu, i64::MAX);
    assert_eq!(total.memory, i64::MAX);
    assert_eq!(total.pods, i64::MAX);
}

#[test]
fn entries_count_pods_price_nodes_and_sort_by_pool_then_name() {
    let now = crate::model::time::parse_rfc3339("2024-01-02T00:00:00Z").unwrap();
    let mut spot = node("b-spot", Some("batch"), "1930m", "2024-01-01T21:00:00Z");
    spot.node
        .labels
        .insert(labels::CAPACITY_TYPE.into(), "spot".into());
    spot.node_claim = Some(NodeClaim {
        name: "batch-x1".into(),
        conditions: [("Drifted".to_string(), "True".to_string())].into(),
        ..NodeClaim::default()
    });
    let nodes = vec![
        node("z-2", Some("default"), "1930m", "2024-01-01T00:00:00Z"),
        spot,
        node("a-1", Some("default"), "1930m", "2024-01-01T23:55:00Z"),
    ];
    let pods = vec![
        pod("p1", "a-1", "500m", "Running"),
        pod("p2", "a-1", "700m", "Pending"),
        pod("done", "a-1", "1", "Succeeded"),
        pod("p3", "z-2", "250m", "Running"),
        pod("elsewhere", "unmanaged", "1", "Running"),
    ];
    let catalog = Catalog::embedded().unwrap();
    let e = entries(
        &nodes,
        &pods,
        &Evaluation::default(),
        &catalog,
        &BTreeMap::new(),
        now,
    );
    let names: Vec<&str> = e.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        names,
        ["b-spot", "a-1", "z-2"],
        "batch < default, then by name"
    );
    let a1 = &e[1];
    assert_eq!(a1.pods, 2, "the Succeeded pod does not count");
    assert_eq!(a1.requests.cpu, 1200);
    assert_eq!(a1.requests.memory, 2 << 30);
    assert_eq!(a1.requests.pods, 2);
    assert_eq!(a1.allocatable.cpu, 1930);
    assert_eq!(a1.allocatable.memory, 8 << 30);
    assert_eq!(a1.price_per_hour, Some(0.096));
    assert_eq!(a1.age_seconds, Some(300));
    assert_eq!(a1.launched_by, LaunchedBy::Karpenter);
    assert_eq!(
        a1.drift,
        DriftInfo {
            status: Status::Unknown,
            reason: None,
            source: DriftSource::Evaluated,
            detail: String::new()
        },
        "not evaluated, no marker"
    );
    assert_eq!(e[0].price_per_hour, None, "no spot price offline");
    assert!(e[0].drift.drifted());
    assert_eq!(e[0].drift.source, DriftSource::NodeclaimCondition);
    assert_eq!(e[0].node_claim.as_deref(), Some("batch-x1"));

    let (pools, total) = totals(&e);
    assert_eq!(pools.len(), 2);
    assert_eq!(pools[1].name.as_deref(), Some("default"));
    assert_eq!(pools[1].nodes, 2);
    assert_eq!(pools[1].pods, 3);
    assert_eq!(pools[1].requests.cpu, 1450);
    assert_eq!(pools[1].allocatable.cpu, 3860);
    assert_eq!(pools[1].price_per_hour, 0.192);
    assert_eq!(pools[1].unpriced_nodes, 0);
    assert_eq!(pools[0].unpriced_nodes, 1);
    assert_eq!(pools[0].drifted_nodes, 1);
    assert_eq!(total.nodes, 3);
    assert_eq!(total.pods, 3);
    assert_eq!(total.price_per_hour, 0.192);
    assert_eq!(total.unpriced_nodes, 1);
    assert_eq!(price_notes(&e, &catalog), [Note::NoSpotPrices]);
}

#[test]
fn a_node_annotation_marks_a_v1alpha5_node_drifted() {
    let mut old = node("old", None, "2", "2024-01-01T00:00:00Z");
    old.node
        .annotations
        .insert(VOLUNTARY_DISRUPTION.into(), "drifted".into());
    let info = drift_info(&old, None);
    assert!(info.drifted());
    assert_eq!(info.source, DriftSource::NodeAnnotation);
    assert_eq!(info.detail, "marked drifted by the Karpenter controller");
}

#[test]
fn selection_by_pool_and_selector() {
    let mut nodes = vec![
        node("a", Some("default"), "1", "2024-01-01T00:00:00Z"),
        node("b", Some("gpu"), "1", "2024-01-01T00:00:00Z"),
    ];
    nodes[1].node.labels.insert("team".into(), "ml".into());
    let mut all = nodes.clone();
    select(&mut all, &[], None);
    assert_eq!(all.len(), 2);
    let mut by_pool = nodes.clone();
    select(&mut by_pool, &["gpu".to_string()], None);
    assert_eq!(by_pool[0].node.name, "b");
    let sel = LabelSelector::parse("team!=ml").unwrap();
    select(&mut nodes, &[], Some(&sel));
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].node.name, "a");
}

#[test]
fn zones_name_their_region() {
    assert_eq!(region_of("us-east-1a").as_deref(), Some("us-east-1"));
    assert_eq!(region_of("us-west-2-lax-1a").as_deref(), Some("us-west-2"));
    assert_eq!(region_of("z1"), None);
}

/// 2024-06-24T12:00:00Z.
const NOW: i64 = 1_719_230_400;

/// A v1 cluster with a Karpenter node (`karp`, on `i-karp`), a node this tool launched
/// (`tool`, no pool label: its instance's tags say), and a pod on each.
fn cluster() -> Manifests {
    let fake = FakeCluster::new().karpenter_v1();
    let node = |name: &str, instance: &str, labels: Value| {
        json!({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": labels, "creationTimestamp": "2024-06-24T11:00:00Z"},
               "spec": {"providerID": format!("aws:///us-east-1a/{instance}")},
               "status": {"conditions": [{"type": "Ready", "status": "True"}],
                          "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "29"}}})
    };
    let pod = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
               "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x",
                        "resources": {"requests": {"cpu": "500m"}}}]},
               "status": {"phase": "Running"}})
    };
    fake.put_all([
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
               "spec": {"template": {"spec": {"nodeClassRef":
                   {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []}}}}),
        node(
            "karp",
            "i-karp",
            json!({"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m5.large",
                   "topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "on-demand"}),
        ),
        node("tool", "i-tool", json!({})),
        pod("a", "karp"),
        pod("b", "tool"),
    ]);
    snapshot::read(&fake, Scope::PODS).unwrap().manifests
}

fn ec2() -> FakeCloud {
    let cloud = FakeCloud::new().image(
        Image {
            id: "ami-1".into(),
            name: Some("amazon-eks-node-al2023".into()),
            architecture: "x86_64".into(),
            ..Image::default()
        },
        None,
    );
    let instance = |id: &str, tags: &[(&str, &str)]| Instance {
        id: id.into(),
        instance_type: "m5.large".into(),
        zone: "us-east-1a".into(),
        image_id: "ami-1".into(),
        state: "running".into(),
        capacity_type: "on-demand".into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Instance::default()
    };
    cloud.instances.borrow_mut().extend([
        instance("i-karp", &[]),
        instance(
            "i-tool",
            &[
                ("kubectl-karpenter.io/launched-by", "kubectl-karpenter"),
                ("karpenter.sh/nodepool", "default"),
            ],
        ),
    ]);
    cloud
}

fn request() -> Request {
    Request {
        nodepools: Vec::new(),
        selector: None,
        image_names: true,
        kubernetes_version: KubeVersion::new(1, 29),
        now: NOW,
    }
}

/// Runs the view, returning it (or the error) and the notes told.
fn run(ec2: Ec2<'_, FakeCloud>, request: &Request) -> (Result<NodeView, CommandError>, Vec<Note>) {
    let mut told = Vec::new();
    let catalog = Catalog::embedded().unwrap();
    let view = view(&cluster(), ec2, &catalog, request, &mut |n| told.push(n));
    (view, told)
}

#[test]
fn ec2_finds_the_nodes_this_tool_launched_and_names_their_ami() {
    let cloud = ec2();
    let (view, told) = run(Ec2::Connected(&cloud), &request());
    let view = view.unwrap();
    let row = |n: &NodeEntry| {
        format!(
            "{} {:?} {:?} {:?} {:?}",
            n.name, n.node_pool, n.launched_by, n.image_id, n.image_name
        )
    };
    let rows: Vec<String> = view.nodes.iter().map(row).collect();
    assert_eq!(
        rows,
        [
            r#"karp Some("default") Karpenter Some("ami-1") Some("amazon-eks-node-al2023")"#,
            r#"tool Some("default") KubectlKarpenter Some("ami-1") Some("amazon-eks-node-al2023")"#,
        ]
    );
    assert_eq!(view.nodes[0].pods, 1);
    assert_eq!(view.nodes[0].requests.cpu, 500);
    assert_eq!(view.total.nodes, 2);
    assert_eq!(view.node_pools.len(), 1);
    let calls = cloud.call_counts();
    assert_eq!(calls.get("EC2.DescribeInstances"), 1);
    assert_eq!(calls.get("EC2.DescribeImages"), 1);
    assert!(view.notes.is_empty(), "{:?}", view.notes);
    assert!(!told.iter().any(|n| matches!(n, Note::AwsUnavailable(_))));

    // Names not wanted (a plain table): no DescribeImages.
    let cloud = ec2();
    let (view, _) = run(
        Ec2::Connected(&cloud),
        &Request {
            image_names: false,
            ..request()
        },
    );
    assert_eq!(view.unwrap().nodes[0].image_name, None);
    assert_eq!(cloud.call_counts().get("EC2.DescribeImages"), 0);
}

#[test]
fn without_ec2_the_cluster_s_facts_are_shown_and_the_document_says_why() {
    let (view, told) = run(Ec2::Off, &request());
    let view = view.unwrap();
    assert_eq!(view.notes, [Note::NoAws]);
    assert_eq!(told, [Note::NoAws, Note::Unmanaged(1)]);
    // From manifests (`-f`) the note says so, not `--no-aws` (s32-offlive: the offline and
    // live documents of one world differ only by this documented assumption).
    let (from_manifests, _) = run(Ec2::Manifests, &request());
    assert_eq!(from_manifests.unwrap().notes, [Note::Manifests]);
    assert_eq!(
        view.nodes.len(),
        1,
        "the tool's node is only found through EC2"
    );

    let (view, told) = run(Ec2::Unreachable("no region".into()), &request());
    assert_eq!(
        view.unwrap().notes,
        [Note::AwsUnavailable("no region".into())]
    );
    assert_eq!(told[0], Note::AwsUnavailable("no region".into()));

    let cloud = ec2();
    cloud.fail(
        "EC2.DescribeInstances",
        CloudError::Transport {
            service: "EC2".into(),
            operation: "DescribeInstances".into(),
            message: "connection refused".into(),
        },
    );
    let (view, _) = run(Ec2::Connected(&cloud), &request());
    let view = view.unwrap();
    assert!(
        matches!(&view.notes[0], Note::AwsUnavailable(m) if m.contains("connection refused")),
        "{:?}",
        view.notes
    );
    assert_eq!(view.nodes[0].image_id, None);
    assert_eq!(cloud.call_counts().get("EC2.DescribeImages"), 0);
}

#[test]
fn an_unknown_nodepool_is_an_input_error_told_after_the_aws_warning() {
    let (view, told) = run(
        Ec2::Unreachable("no region".into()),
        &Request {
            nodepools: vec!["gpu".into()],
            ..request()
        },
    );
    let err = view.unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert_eq!(
        err.message,
        "--nodepool gpu: no such NodePool or Provisioner"
    );
    assert_eq!(told[0], Note::AwsUnavailable("no region".into()));
}

/// `examples/consolidate/cluster.yaml`, read.
fn example_cluster() -> Manifests {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/consolidate/cluster.yaml"
    );
    crate::api::load_paths(&[path.to_string()], &mut std::io::empty()).unwrap()
}

/// The CONSOLIDATION column of `manifests` at the example's time (2024-06-24T12:00:00Z), with
/// the embedded catalog in us-east-1.
fn decide_example(
    manifests: Manifests,
    gone: &BTreeMap<String, GoneInstance>,
    told: &mut impl Sink<Note>,
) -> BTreeMap<String, Consolidation> {
    let catalog = Catalog::embedded().unwrap();
    decisions(
        manifests,
        &catalog,
        "us-east-1",
        None,
        &at(1_719_230_400),
        gone,
        told,
    )
    .unwrap()
}

/// The example cluster of `consolidate` (2024-06-24T12:00:00Z): the decisions `nodes` shows are
/// the report's, typed, with the why-not's kind.
#[test]
fn the_decision_column_is_the_consolidation_report_per_node() {
    let manifests = example_cluster();
    let decisions = decide_example(manifests, &Default::default(), &mut |_: Note| {});
    let empty = &decisions["empty"];
    assert_eq!(empty.decision, NodeDecision::Delete);
    assert_eq!(empty.method, Some(Method::Emptiness));
    assert_eq!(empty.pass, Some(1));
    let kept = &decisions["under-used"];
    assert_eq!(kept.decision, NodeDecision::None);
    assert_eq!(kept.reason_code, Some("receives-pods"));
    let doc = serde_json::to_value(kept).unwrap();
    assert_eq!(doc["decision"], "none");
    assert!(doc["reason"]
        .as_str()
        .unwrap()
        .starts_with("receives pods from busy"));
}

/// The CONSOLIDATION column leaves out the nodes whose instance EC2 says is gone, as
/// `consolidate` does (docs/reliability.md, the ghost node): the view finds them in the
/// DescribeInstances it makes anyway, and the decision names the instance.
#[test]
fn a_node_whose_instance_is_gone_is_no_candidate_in_the_column() {
    let cloud = ec2();
    for i in cloud.instances.borrow_mut().iter_mut() {
        if i.id == "i-karp" {
            i.state = "terminated".into();
        }
    }
    let (view, _) = run(Ec2::Connected(&cloud), &request());
    let view = view.unwrap();
    assert_eq!(view.gone.keys().collect::<Vec<_>>(), ["karp"]);
    assert_eq!(
        view.gone["karp"].state,
        crate::model::node::InstanceGone::Terminated
    );
    assert_eq!(cloud.call_counts().get("EC2.DescribeInstances"), 1);

    let manifests = example_cluster();
    let id = manifests
        .nodes
        .iter()
        .find(|n| n.name == "empty")
        .and_then(|n| n.instance_id())
        .unwrap()
        .to_string();
    let gone = BTreeMap::from([(
        "empty".to_string(),
        GoneInstance {
            instance: id,
            state: crate::model::node::InstanceGone::Terminated,
            claimed: true,
        },
    )]);
    let column = decide_example(manifests, &gone, &mut |_: Note| {});
    assert_eq!(column["empty"].decision, NodeDecision::None);
    assert_eq!(column["empty"].reason_code, Some("instance-gone"));
}

/// Over the limit the engine is not run: a note says so, documented and told.
#[test]
fn the_decision_is_left_out_of_a_large_cluster_with_a_note() {
    let manifests = Manifests {
        nodes: vec![Node::default(); DECISION_MAX_NODES + 1],
        ..Manifests::default()
    };
    let (node_pools, total) = totals(&[]);
    let mut view = NodeView {
        nodes: Vec::new(),
        node_pools,
        total,
        notes: Vec::new(),
        gone: Default::default(),
    };
    let mut told = Vec::new();
    let catalog = Catalog::embedded().unwrap();
    with_decisions(
        &mut view,
        manifests,
        &catalog,
        "us-east-1",
        None,
        &at(0),
        &mut |n: Note| told.push(n),
    )
    .unwrap();
    let note = Note::DecisionSkipped {
        nodes: DECISION_MAX_NODES + 1,
        limit: DECISION_MAX_NODES,
    };
    assert_eq!(told, std::slice::from_ref(&note));
    assert_eq!(view.notes, [note]);
}

/// The CONSOLIDATION column's catalog is `consolidate`'s (`decision_catalog`): the class selects
/// an ODCR of one c6a.xlarge (priced at on-demand / 10,000,000, docs/karpenter.md §6.12), so the
/// under-used c6a.2xlarge is replaced into the reservation — in the column as in
/// `consolidate`'s report — and not by the cheapest on-demand type, as without it.
#[test]
fn a_capacity_reservation_changes_the_column_as_it_changes_consolidate() {
    use crate::usecases::consolidate::{self as consolidate, Config};
    use crate::usecases::provisioning::input::CatalogSizing;
    use crate::usecases::testing::{odcr, World, START};

    let decide = |reserved: bool| {
        let world = World::new();
        let terms = if reserved {
            json!([{"id": "cr-0a1"}])
        } else {
            Value::Null
        };
        world.reserved_pool(
            terms,
            json!({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s", "budgets": [{"nodes": "100%"}]}),
            vec![odcr("cr-0a1", "c6a.xlarge", "us-east-1a", 1)],
        );
        let under_used = world.managed_node("c6a.2xlarge", &["p0"]);
        let (manifests, _) = consolidate::gather_live(&world.cluster).unwrap();
        let region = world.cloud.region();

        // `nodes`: the column, over EC2 as connected.
        let mut told = Vec::new();
        let (catalog, notes) = decision_catalog(
            &Ec2::Connected(world.cloud.as_ref()),
            world.catalog.clone(),
            &manifests.node_classes,
            START,
            None,
            &mut |n| told.push(n),
        );
        assert!(notes.is_empty() && told.is_empty(), "{told:?}");
        let column = decisions(
            manifests.clone(),
            &catalog,
            &region,
            None,
            &at(START),
            &Default::default(),
            &mut |_: Note| {},
        )
        .unwrap();
        let column = column[&under_used].clone();

        // `consolidate`: the report, from the same catalog path.
        let (catalog, _) = consolidate::decision_catalog(
            Some(world.cloud.as_ref()),
            world.catalog.clone(),
            &manifests.node_classes,
            START,
            None,
        )
        .unwrap();
        let config = Config {
            now: START,
            ..Config::default()
        };
        let mut manifests = manifests;
        let mut sizing = CatalogSizing::new(&catalog, &region);
        let input = consolidate::build_input(&mut manifests, &mut sizing, &config, None).unwrap();
        let report = consolidate::evaluate(&config, input).unwrap();
        let node = report.nodes.iter().find(|n| n.name == under_used).unwrap();
        // aws#7979: the row says the replacement's capacity type (reserved: a same-priced type
        // is cheaper there, aws v1.14.1 offering price on-demand / 10,000,000).
        let expected = if reserved { "reserved" } else { "on-demand" };
        assert_eq!(node.replacement_capacity_type.as_deref(), Some(expected));
        let decided = Consolidation::from(node.clone());
        assert_eq!(column, decided, "the column is consolidate's decision");
        column
    };
    let reserved = decide(true);
    assert_eq!(reserved.decision, NodeDecision::Replace);
    assert_eq!(reserved.replacement_type.as_deref(), Some("c6a.xlarge"));
    let plain = decide(false);
    assert_eq!(plain.decision, NodeDecision::Replace);
    assert_ne!(
        plain.replacement_type, reserved.replacement_type,
        "{plain:?}"
    );
}

/// The decision's configuration at `now`, gates unset (the controller's, else the defaults).
fn at(now: i64) -> crate::usecases::consolidate::Config {
    crate::usecases::consolidate::Config {
        now,
        ..Default::default()
    }
}

/// Live `nodes` when the API server's `/version` cannot be read: the view goes on with the
/// assumed version (the DRIFT column's AMI aliases follow it) and says why in a note; a
/// readable one is the cluster's, `--kubernetes-version` wins over both, and offline without
/// the flag the version is assumed silently.
#[test]
fn an_unreadable_version_is_assumed_and_said() {
    let fake = FakeCluster::new()
        .karpenter_v1()
        .with_version("v1.30.4-eks-1234");
    let cluster: &dyn crate::k8s::Cluster = &fake;
    let read = kubernetes_version(None, Some(cluster));
    assert_eq!(read, (KubeVersion::new(1, 30), None));
    let flag = Some(KubeVersion::new(1, 29));
    assert_eq!(
        kubernetes_version(flag, Some(cluster)),
        (KubeVersion::new(1, 29), None)
    );
    fake.fail_with(
        crate::k8s::Method::Get,
        "/version",
        5,
        503,
        "etcdserver: leader changed",
    );
    let (version, note) = kubernetes_version(None, Some(cluster));
    assert_eq!(version, crate::usecases::ami::ASSUMED_KUBERNETES_VERSION);
    match note {
        Some(Note::VersionUnavailable(why)) => {
            assert!(why.starts_with("GET /version: 503"), "{why}")
        }
        other => panic!("expected the version note, got {other:?}"),
    }
    // The note goes into the `-o json|yaml` document too, not only to stderr.
    assert!(Note::VersionUnavailable(String::new()).documented());
    assert_eq!(
        kubernetes_version(None, None),
        (crate::usecases::ami::ASSUMED_KUBERNETES_VERSION, None)
    );
}

/// The CONSOLIDATION column's input warnings are `consolidate`'s (thread
/// aws/karpenter-provider-aws#6861, session 34: a pod's `karpenter.sh/do-not-evict`, which core
/// v1.14.1 no longer reads — `pkg/utils/pod/scheduling.go` `IsDoNotDisruptActive`): `nodes` tells
/// each line the decision's input adds, once, and not one the command told already.
#[test]
fn the_decision_tells_the_inputs_warnings_once_as_consolidate_does() {
    let mut manifests = example_cluster();
    for p in manifests
        .bound_pods
        .iter_mut()
        .filter(|p| p.node_name.as_deref() == Some("under-used"))
    {
        p.do_not_evict = true;
    }
    let said = "already said by the command".to_string();
    manifests.warnings.push(said.clone());
    let mut told = Vec::new();
    decide_example(manifests, &Default::default(), &mut |n: Note| told.push(n));
    let input: Vec<&str> = told
        .iter()
        .filter_map(|n| match n {
            Note::Input(line) => Some(line.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(input.len(), 1, "{told:?}");
    assert!(
        input[0].contains("karpenter.sh/do-not-evict, which Karpenter v1 no longer reads"),
        "{}",
        input[0]
    );
    assert!(!input.contains(&said.as_str()));
    // Told on stderr as a warning (`-q` hides it), never in the document.
    assert!(!Note::Input(String::new()).documented());
}
