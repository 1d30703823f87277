//! Input building from manifests and from a live (fake) cluster, the controller's release and
//! gates, PDBs, selection.

use serde_json::{json, Value};

use super::*;
use crate::cloud::Catalog;
use crate::disruption::consolidation::{Method, NodeDecision, Reason};
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;

/// 2024-06-24T12:00:00Z.
const NOW: i64 = 1_719_230_400;

fn node(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": "2024-06-01T00:00:00Z", "labels": {
            "karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true",
            "karpenter.sh/registered": "true",
            "node.kubernetes.io/instance-type": "m5.xlarge", "topology.kubernetes.io/zone": "us-east-1a",
            "karpenter.sh/capacity-type": "on-demand", "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux", "kubernetes.io/hostname": name}},
        "spec": {"providerID": format!("aws:///us-east-1a/i-{name}")},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "capacity": {"cpu": "4", "memory": "16Gi", "pods": "58"},
                   "allocatable": {"cpu": "3920m", "memory": "14Gi", "pods": "58"}}
    })
}

fn claim(node: &str, conditions: Value) -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("{node}-claim"), "creationTimestamp": "2024-06-01T00:00:00Z",
                     "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "requirements": [], "expireAfter": "720h"},
        "status": {"nodeName": node, "providerID": format!("aws:///us-east-1a/i-{node}"),
                   "conditions": conditions}
    })
}

fn initialized() -> Value {
    json!([{"type": "Initialized", "status": "True", "lastTransitionTime": "2024-06-01T00:05:00Z"}])
}

fn pod(name: &str, node: &str, cpu: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name},
                     "creationTimestamp": "2024-06-01T00:10:00Z"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                 "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    })
}

/// Pool `default` (m5.xlarge and m5.large), nodes `empty` (no pod), `under-used` (one small
/// pod) and `busy` (room for the small pod), each with its initialized NodeClaim; the budget
/// lets every node go at once.
fn objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
               "spec": {"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
                                        "budgets": [{"nodes": "100%"}]},
                        "template": {"spec": {
                   "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                   "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                     "values": ["m5.xlarge", "m5.large"]}]}}}}),
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
               "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                        "subnetSelectorTerms": [{"id": "subnet-a"}],
                        "securityGroupSelectorTerms": [{"id": "sg-a"}]}}),
        node("empty"),
        node("under-used"),
        node("busy"),
        claim("empty", initialized()),
        claim("under-used", initialized()),
        claim("busy", initialized()),
        pod("small", "under-used", "500m"),
        pod("big", "busy", "2"),
    ]
}

fn manifests(objects: &[Value]) -> Manifests {
    let text: Vec<String> = objects
        .iter()
        .map(|o| serde_json::to_string(o).unwrap())
        .collect();
    crate::api::load_str("cluster.yaml", &text.join("\n---\n")).unwrap()
}

fn config() -> Config {
    Config {
        now: NOW,
        ..Config::default()
    }
}

fn report_of(
    mut m: Manifests,
    config: &Config,
    controller: Option<&Controller>,
) -> ConsolidationReport {
    let catalog = Catalog::embedded().unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let input = build_input(&mut m, &mut sizing, config, controller).unwrap();
    evaluate(config, input).unwrap()
}

fn decision(r: &ConsolidationReport, name: &str) -> (NodeDecision, Option<Method>) {
    let n = r.nodes.iter().find(|n| n.name == name).unwrap();
    (n.decision, n.method)
}

/// A node without a NodeClaim (one `provision` launched: the nodepool label, never labelled
/// initialized) is not Karpenter's, so initialized for the simulation (`statenode.go`
/// `Initialized()`): the under-used node's pod moves onto it and the node goes.
#[test]
fn a_node_without_a_nodeclaim_takes_pods_though_never_labelled_initialized() {
    let mut launched = node("launched");
    launched["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karpenter.sh/initialized");
    let mut objects = objects();
    objects.retain(|o| {
        let name = o["metadata"]["name"].as_str().unwrap_or("");
        !name.starts_with("empty") && !name.starts_with("busy") && name != "big"
    });
    objects.push(launched);
    let r = report_of(manifests(&objects), &config(), None);
    assert_eq!(
        decision(&r, "under-used"),
        (NodeDecision::Delete, Some(Method::Single)),
        "{r:#?}"
    );
}

/// The empty node goes by emptiness; of the two half-used nodes one takes the other's pod and
/// the other goes.
#[test]
fn from_manifests_the_empty_node_goes_and_the_under_used_one_is_consolidated() {
    let r = report_of(manifests(&objects()), &config(), None);
    assert_eq!(r.karpenter_version, "v1.14.1");
    assert_eq!(r.now, "2024-06-24T12:00:00Z");
    assert_eq!(
        decision(&r, "empty"),
        (NodeDecision::Delete, Some(Method::Emptiness))
    );
    let deleted: Vec<&str> = ["under-used", "busy"]
        .into_iter()
        .filter(|n| decision(&r, n) == (NodeDecision::Delete, Some(Method::Single)))
        .collect();
    assert_eq!(deleted.len(), 1, "{:#?}", r.nodes);
    let kept = if deleted[0] == "busy" {
        "under-used"
    } else {
        "busy"
    };
    let reason = r
        .nodes
        .iter()
        .find(|n| n.name == kept)
        .unwrap()
        .reason
        .clone();
    assert!(
        matches!(reason, Some(Reason::ReceivesPods { .. })),
        "{reason:?}"
    );
    assert!(
        (r.savings_per_hour - 2.0 * 0.192).abs() < 1e-9,
        "{}",
        r.savings_per_hour
    );
    assert_eq!(r.nodes.len(), 3);
}

/// `objects()` with a PDB `small` (minAvailable 1) over the `small` pod, `extra` merged into
/// its spec and `status` as its status; the report's reason for `under-used`.
fn under_used_with_pdb(
    extra: Value,
    status: Value,
    edit: impl FnOnce(&mut Vec<Value>),
) -> Option<Reason> {
    let mut objects = objects();
    let mut spec = json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "small"}}});
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let mut pdb = json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "small", "namespace": "default"},
        "spec": spec
    });
    if !status.is_null() {
        pdb["status"] = status;
    }
    objects.push(pdb);
    edit(&mut objects);
    let r = report_of(manifests(&objects), &config(), None);
    let n = r.nodes.iter().find(|n| n.name == "under-used").unwrap();
    n.reason.clone()
}

#[test]
fn a_pdb_at_zero_blocks_the_node_and_is_named() {
    let reason = under_used_with_pdb(json!({}), Value::Null, |_| {});
    let text = reason.as_ref().unwrap().to_string();
    assert!(text.contains("default/small"), "{text}");
    assert!(matches!(reason, Some(Reason::Pdb { .. })), "{reason:?}");
}

#[test]
fn the_pdb_status_wins_over_the_spec() {
    let reason = under_used_with_pdb(json!({}), json!({"disruptionsAllowed": 1}), |_| {});
    assert!(!matches!(reason, Some(Reason::Pdb { .. })), "{reason:?}");
}

/// consolidation_test.go "can replace nodes, considers PDB policy": the pod's Ready condition is
/// read from the manifest, so a PDB at zero with `unhealthyPodEvictionPolicy: AlwaysAllow` does
/// not hold an unready pod.
#[test]
fn an_always_allow_pdb_does_not_hold_an_unready_pod() {
    let reason = under_used_with_pdb(
        json!({"unhealthyPodEvictionPolicy": "AlwaysAllow"}),
        json!({"disruptionsAllowed": 0}),
        |objects| {
            let small = objects
                .iter_mut()
                .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == "small")
                .unwrap();
            small["status"]["conditions"]
                .as_array_mut()
                .unwrap()
                .push(json!({"type": "Ready", "status": "False"}));
        },
    );
    assert!(!matches!(reason, Some(Reason::Pdb { .. })), "{reason:?}");
}

#[test]
fn a_drifted_claim_is_replaced_by_drift_with_its_reason_and_time() {
    let mut objects = objects();
    objects[7] = claim(
        "busy",
        json!([{"type": "Initialized", "status": "True", "lastTransitionTime": "2024-06-01T00:05:00Z"},
               {"type": "Drifted", "status": "True", "reason": "AMIDrift",
                "lastTransitionTime": "2024-06-24T11:00:00Z"}]),
    );
    let mut m = manifests(&objects);
    let c = m
        .node_claims
        .iter()
        .find(|c| c.name == "busy-claim")
        .unwrap();
    let facts = claim_facts(c, &m.nodes[2]);
    assert_eq!(
        facts.drifted,
        Some(Drifted {
            since: NOW - 3600,
            reason: "AMIDrift".into()
        })
    );
    assert_eq!(facts.expire_after, Some(720 * 3600));
    assert_eq!(
        facts.initialized_at,
        Some(NOW - 23 * 86_400 - 11 * 3600 - 55 * 60)
    );
    m.node_claims.retain(|_| true);
    let r = report_of(m, &config(), None);
    assert_eq!(decision(&r, "busy").1, Some(Method::Drift));
}

/// The NodeClaim conditions the disruption controller reads as written (core v1.14.1
/// emptiness_test.go "should ignore nodes with the consolidatable status condition set to
/// false"; suite_test.go "should not consider nodes that have the terminating status condition
/// as part of disruption count"): an explicit `Consolidatable: False` holds the empty node, and
/// `InstanceTerminating: True` is read; without them the empty node goes by emptiness.
#[test]
fn consolidatable_false_and_instance_terminating_are_read_from_the_claim() {
    let mut objects = objects();
    objects[5] = claim(
        "empty",
        json!([{"type": "Initialized", "status": "True", "lastTransitionTime": "2024-06-01T00:05:00Z"},
               {"type": "Consolidatable", "status": "False", "lastTransitionTime": "2024-06-24T11:59:00Z"},
               {"type": "InstanceTerminating", "status": "True", "lastTransitionTime": "2024-06-24T11:59:00Z"}]),
    );
    let m = manifests(&objects);
    let c = m
        .node_claims
        .iter()
        .find(|c| c.name == "empty-claim")
        .unwrap();
    let facts = claim_facts(c, &m.nodes[0]);
    assert!(facts.consolidatable_false && facts.instance_terminating);
    let r = report_of(m, &config(), None);
    // Not a candidate; it takes the others' pods instead (they nominate it).
    assert_eq!(decision(&r, "empty"), (NodeDecision::None, None));

    let m = manifests(&self::objects());
    let facts = claim_facts(&m.node_claims[0], &m.nodes[0]);
    assert!(!facts.consolidatable_false && !facts.instance_terminating);
    let r = report_of(m, &config(), None);
    assert_eq!(decision(&r, "empty").1, Some(Method::Emptiness));
}

#[test]
fn selection_keeps_the_named_nodes_and_their_actions() {
    let config = Config {
        nodes: vec!["empty".into()],
        ..config()
    };
    let r = report_of(manifests(&objects()), &config, None);
    assert_eq!(r.nodes.len(), 1);
    assert!(r
        .actions
        .iter()
        .all(|a| a.nodes.contains(&"empty".to_string())));
    assert_eq!(
        r.savings_per_hour,
        r.actions.iter().map(|a| a.savings_per_hour).sum::<f64>()
    );
}

#[test]
fn unknown_nodes_and_pools_are_input_errors() {
    let catalog = Catalog::embedded().unwrap();
    for config in [
        Config {
            nodes: vec!["nope".into()],
            ..config()
        },
        Config {
            nodepools: vec!["nope".into()],
            ..config()
        },
    ] {
        let mut m = manifests(&objects());
        let input = build_input(
            &mut m,
            &mut CatalogSizing::new(&catalog, "us-east-1"),
            &config,
            None,
        )
        .unwrap();
        let e = evaluate(&config, input).unwrap_err();
        assert_eq!(e.exit, Exit::Input);
        assert!(e.message.contains("nope"), "{}", e.message);
    }
}

#[test]
fn a_malformed_pdb_is_an_input_error_naming_it() {
    let mut objects = objects();
    objects.push(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "odd", "namespace": "web"},
        "spec": {"maxUnavailable": "lots", "selector": {"matchLabels": {"app": "small"}}}
    }));
    let text: Vec<String> = objects.iter().map(|o| o.to_string()).collect();
    // Refused where it is read, as `kubectl apply` refuses it (`api::pdb`).
    let e = crate::api::load_str("cluster.yaml", &text.join("\n---\n")).unwrap_err();
    assert!(
        e.to_string()
            .contains("PodDisruptionBudget/web/odd: spec.maxUnavailable"),
        "{e}"
    );
    // One read from a cluster (which never holds it) is still refused by the input builder.
    let pdb: crate::api::core::PodDisruptionBudget =
        serde_json::from_value(objects.pop().unwrap()).unwrap();
    let e = super::pdb_input(&pdb).unwrap_err();
    assert_eq!(e.exit, Exit::Input);
    assert!(
        e.message
            .contains("PodDisruptionBudget web/odd: spec.maxUnavailable"),
        "{}",
        e.message
    );
}

#[test]
fn live_the_same_objects_give_the_same_report() {
    let fake = FakeCluster::new().karpenter_v1();
    fake.put_all(objects());
    let (m, controller) = gather_live(&fake).unwrap();
    assert_eq!(controller, None);
    let live = report_of(m, &config(), None);
    assert_eq!(live, report_of(manifests(&objects()), &config(), None));
}

/// A ready Karpenter controller Deployment of `version` whose container has `env`.
fn controller_deployment(version: &str, env: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system", "generation": 1,
                     "labels": {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/version": version}},
        "spec": {"replicas": 1, "template": {"metadata": {}, "spec": {"containers": [{
            "name": "controller", "image": format!("public.ecr.aws/karpenter/controller:{version}"),
            "env": env}]}}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                   "availableReplicas": 1, "observedGeneration": 1}
    })
}

/// s27-lineaws: the controller's `FEATURE_GATES` `ReservedCapacity` (on unless it says off,
/// core v1.14.1 `options.go`) and the AWS controller's `VM_MEMORY_OVERHEAD_PERCENT` /
/// `RESERVED_ENIS` (`aws v1.14.1: pkg/operator/options/options.go`) are read from its
/// Deployment; a value Karpenter refuses (negative, not a number) is bad input.
#[test]
fn live_the_controllers_reserved_capacity_gate_and_instance_type_settings_are_read() {
    let read = |env: Value| {
        let fake = FakeCluster::new().karpenter_v1();
        let mut objects = objects();
        objects.push(controller_deployment("1.14.1", env));
        fake.put_all(objects);
        gather_live(&fake)
    };
    let (_, c) = read(json!([])).unwrap();
    let c = c.unwrap();
    assert_eq!(
        (
            c.reserved_capacity,
            c.vm_memory_overhead_percent,
            c.reserved_enis
        ),
        (Some(true), None, None)
    );
    let (_, c) = read(json!([
        {"name": "FEATURE_GATES", "value": "ReservedCapacity=false"},
        {"name": "VM_MEMORY_OVERHEAD_PERCENT", "value": "0.1"},
        {"name": "RESERVED_ENIS", "value": "1"},
    ]))
    .unwrap();
    let c = c.unwrap();
    assert_eq!(
        (
            c.reserved_capacity,
            c.vm_memory_overhead_percent,
            c.reserved_enis
        ),
        (Some(false), Some(0.1), Some(1))
    );
    let err = read(json!([{"name": "RESERVED_ENIS", "value": "-1"}])).unwrap_err();
    assert_eq!(err.exit, crate::error::Exit::Input);
    assert!(
        err.message
            .contains("RESERVED_ENIS \"-1\" is not a non-negative integer"),
        "{}",
        err.message
    );
}

/// The controller's `MIN_VALUES_POLICY` (core v1.14.1 `options.go`) decides, `--min-values-policy`
/// wins, and a value Karpenter refuses is bad input naming the Deployment and container.
#[test]
fn live_the_controller_min_values_policy_decides_unless_the_flag_says() {
    use crate::scheduling::MinValuesPolicy;
    let with_env = |value: &str| {
        let fake = FakeCluster::new().karpenter_v1();
        let mut objects = objects();
        objects.push(controller_deployment(
            "1.14.1",
            json!([{"name": "MIN_VALUES_POLICY", "value": value}]),
        ));
        fake.put_all(objects);
        gather_live(&fake)
    };
    let (m, controller) = with_env("BestEffort").unwrap();
    let controller = controller.unwrap();
    assert_eq!(
        controller.min_values_policy,
        Some(MinValuesPolicy::BestEffort)
    );
    let catalog = Catalog::embedded().unwrap();
    let decide = |config: &Config| {
        build_input(
            &mut m.clone(),
            &mut CatalogSizing::new(&catalog, "us-east-1"),
            config,
            Some(&controller),
        )
        .unwrap()
        .min_values_policy
    };
    assert_eq!(decide(&config()), MinValuesPolicy::BestEffort);
    let flag = Config {
        min_values_policy: Some(MinValuesPolicy::Strict),
        ..config()
    };
    assert_eq!(decide(&flag), MinValuesPolicy::Strict);
    let err = with_env("besteffort").unwrap_err();
    assert_eq!(err.exit, crate::error::Exit::Input);
    assert!(
        err.message
            .contains("kube-system/karpenter container controller")
            && err.message.contains("\"besteffort\""),
        "{}",
        err.message
    );
}

#[test]
fn live_the_controller_release_and_feature_gates_decide() {
    let fake = FakeCluster::new().karpenter_v1();
    let mut objects = objects();
    objects.push(controller_deployment(
        "0.37.0",
        json!([{"name": "FEATURE_GATES", "value": "Drift=true,SpotToSpotConsolidation=true"}]),
    ));
    fake.put_all(objects);
    let (m, controller) = gather_live(&fake).unwrap();
    let controller = controller.unwrap();
    assert_eq!(controller.spot_to_spot, Some(true));
    assert_eq!(controller.drift, Some(true));
    let catalog = Catalog::embedded().unwrap();
    let input = build_input(
        &mut m.clone(),
        &mut CatalogSizing::new(&catalog, "us-east-1"),
        &config(),
        Some(&controller),
    )
    .unwrap();
    assert_eq!(input.release, Release::V0_37);
    assert!(input.feature_gates.spot_to_spot_consolidation);
    // The flag wins over the controller.
    let flag = Config {
        spot_to_spot: Some(false),
        ..config()
    };
    let input = build_input(
        &mut m.clone(),
        &mut CatalogSizing::new(&catalog, "us-east-1"),
        &flag,
        Some(&controller),
    )
    .unwrap();
    assert!(!input.feature_gates.spot_to_spot_consolidation);
}

#[test]
fn controller_versions_map_to_releases() {
    let v = |major, minor| Version {
        major,
        minor,
        patch: 0,
    };
    assert_eq!(release_of(v(0, 31)), Release::V0_31);
    assert_eq!(release_of(v(0, 32)), Release::V0_37);
    assert_eq!(release_of(v(0, 37)), Release::V0_37);
    assert_eq!(release_of(v(1, 0)), Release::V1_14);
}

/// Offline no instance is described: the report says it took every node's instance to be
/// running (docs/reliability.md, the ghost node), and decides as before.
#[test]
fn offline_every_instance_is_assumed_running() {
    let mut m = manifests(&objects());
    assume_instances_running(&mut m);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.starts_with("assuming: every node's EC2 instance is running")),
        "{:?}",
        m.warnings
    );
    let mut none = manifests(&objects()[..2]);
    assume_instances_running(&mut none);
    assert!(none.warnings.is_empty(), "no node, nothing assumed");
}

/// Live, a managed node whose instance is gone is left out of the report's input: the empty
/// node is not deleted by emptiness, and its row names the instance.
#[test]
fn a_gone_node_is_left_out_of_the_report() {
    let mut m = manifests(&objects());
    let catalog = Catalog::embedded().unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let config = config();
    let mut input = build_input(&mut m, &mut sizing, &config, None).unwrap();
    let gone = crate::model::node::GoneInstance {
        instance: "i-empty".into(),
        state: crate::model::node::InstanceGone::Terminated,
        claimed: true,
    };
    leave_out_gone(&mut input, &[("empty".to_string(), gone.clone())].into());
    let report = evaluate(&config, input).unwrap();
    let row = report.nodes.iter().find(|n| n.name == "empty").unwrap();
    assert_eq!(row.decision, NodeDecision::None);
    assert_eq!(row.reason, Some(Reason::InstanceGone(gone)));
}

/// `core v1.14.1: pkg/controllers/state/statenode.go` `Allocatable()` (`state/suite_test.go`
/// "StateNode Capacity"): a managed node not initialized yet offers, for each resource its Node
/// lists as zero or not at all, what its NodeClaim reports — a destination of the simulations
/// as in a plan; once initialized, the Node's numbers alone.
#[test]
fn an_uninitialized_node_offers_what_its_nodeclaim_reports() {
    let mut objects = objects();
    let mut fresh = node("fresh");
    fresh["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karpenter.sh/initialized");
    fresh["status"]["allocatable"] = json!({"cpu": "3920m", "pods": "58"});
    let mut fresh_claim = claim("fresh", json!([]));
    fresh_claim["status"]["allocatable"] =
        json!({"cpu": "3", "memory": "15Gi", "nvidia.com/gpu": "1"});
    objects.extend([fresh, fresh_claim]);
    let catalog = Catalog::embedded().unwrap();
    let input = build_input(
        &mut manifests(&objects),
        &mut CatalogSizing::new(&catalog, "us-east-1"),
        &config(),
        None,
    )
    .unwrap();
    let allocatable = |name: &str| {
        let n = input.nodes.iter().find(|n| n.node.name == name).unwrap();
        (
            n.node.allocatable.get("cpu"),
            n.node.allocatable.get("memory") >> 30,
            n.node.allocatable.get("nvidia.com/gpu"),
        )
    };
    assert_eq!(allocatable("fresh"), (3920, 15 * 1000, 1000));
    assert_eq!(allocatable("busy"), (3920, 14 * 1000, 0));
}

/// `core v1.14.1: pkg/controllers/state/suite_test.go` "should nominate the node until the
/// nomination time passes" with `scheduler.go` `Solve` (`NominateNodeForPod`): the existing
/// node the provisioner would place a pending pod on is nominated, so no candidate
/// (`ValidateNodeDisruptable`); the others are not. **Differs, fixed** — scenario: the nodes
/// `empty`, `under-used` and `busy`, a pending 3-CPU pod that only `empty` has room for →
/// upstream nominates `empty` (and keeps it while the pod is pending) and does not delete it;
/// we deleted it as empty.
#[test]
fn the_node_a_pending_pod_would_go_to_is_nominated() {
    let mut with_pod = objects();
    with_pod.push(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "waiting", "namespace": "default", "creationTimestamp": "2024-06-24T11:59:00Z"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "3"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    }));
    let catalog = Catalog::embedded().unwrap();
    let input = build_input(
        &mut manifests(&with_pod),
        &mut CatalogSizing::new(&catalog, "us-east-1"),
        &config(),
        None,
    )
    .unwrap();
    let nominated: Vec<&str> = input
        .nodes
        .iter()
        .filter(|n| n.nominated)
        .map(|n| n.node.name.as_str())
        .collect();
    assert_eq!(nominated, ["empty"]);
    let report = evaluate(&config(), input).unwrap();
    assert_ne!(decision(&report, "empty").0, NodeDecision::Delete);
    // Without the pending pod, nothing is nominated and `empty` goes.
    let report = report_of(manifests(&objects()), &config(), None);
    assert_eq!(decision(&report, "empty").0, NodeDecision::Delete);
}

/// **Differs, fixed** (session 23 sweep, karpenter-blueprints `disruption-budgets`: a pool with
/// `expireAfter: 720h` and a `nodes: "0"` budget all day, its plan written back as NodeClaims
/// without `spec.expireAfter`): the NodeClaim CRD defaults `expireAfter` to 720h (core v1.14.1
/// `pkg/apis/v1/nodeclaim.go` `+kubebuilder:default:="720h"`), so such a NodeClaim is stored
/// with it and `nodeclaim/expiration/controller.go` deletes it 720h after creation, budgets
/// or not (expiration suite_test.go "should remove nodeclaims that are expired"). We read
/// the absent field as "never": a 31-day-old node stayed. `Never` still never expires.
#[test]
fn a_nodeclaim_without_expire_after_expires_after_the_crds_default() {
    let mut all = objects();
    for claim in all.iter_mut().filter(|o| o["kind"] == "NodeClaim") {
        claim["spec"].as_object_mut().unwrap().remove("expireAfter");
    }
    all[7]["spec"]["expireAfter"] = json!("Never");
    let m = manifests(&all);
    let expire = |name: &str| {
        let c = m.node_claims.iter().find(|c| c.name == name).unwrap();
        let n = m
            .nodes
            .iter()
            .find(|n| n.name == name.trim_end_matches("-claim"))
            .unwrap();
        claim_facts(c, n).expire_after
    };
    assert_eq!(expire("empty-claim"), Some(720 * 3600));
    assert_eq!(expire("busy-claim"), None);
    // 2024-07-02: 31 days after creation, past the default.
    let config = Config {
        now: NOW + 8 * 86_400,
        ..Config::default()
    };
    let r = report_of(m, &config, None);
    assert_eq!(decision(&r, "under-used").1, Some(Method::Expiration));
    assert_ne!(decision(&r, "busy").1, Some(Method::Expiration));
    // Neither the claim nor its node has a creation time (the API server stamps one on apply):
    // the expiry is unknown, so not expired.
    let mut objects = objects();
    objects[3]["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    objects[6]["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("creationTimestamp");
    objects[6]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("expireAfter");
    let m = manifests(&objects);
    let c = m
        .node_claims
        .iter()
        .find(|c| c.name == "under-used-claim")
        .unwrap();
    assert_eq!(claim_facts(c, &m.nodes[1]).expire_after, None);
}

/// `objects()` with the pool's `Ready` False.
fn with_pool_not_ready(mut objects: Vec<Value>) -> Vec<Value> {
    objects[0]["status"] = json!({"conditions": [{"type": "Ready", "status": "False",
        "reason": "NodeClassNotReady", "message": "EC2NodeClass default is not ready"}]});
    objects
}

/// A NodePool that is not Ready still has its nodes disrupted (core v1.14.1
/// `disruption/helpers.go` `BuildNodePoolMap` lists every managed pool, whatever its
/// readiness), but the scheduling simulation creates no NodeClaim for it (`provisioner.go`
/// `NewScheduler` skips it): the empty node goes and one half-used node moves onto the other,
/// as with a Ready pool; a lone under-used node, which a Ready pool would replace with a
/// cheaper type, stays, its pod fitting nowhere else.
#[test]
fn a_not_ready_pools_nodes_are_deleted_but_never_replaced() {
    let mut m = manifests(&with_pool_not_ready(objects()));
    let catalog = Catalog::embedded().unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let input = build_input(&mut m, &mut sizing, &config(), None).unwrap();
    assert!(
        m.warnings.iter().any(|w| w
            .starts_with("NodePool/default: not Ready (Ready=False, NodeClassNotReady")
            && w.ends_with(
                "its nodes are still disruption candidates, but no replacement is launched for it"
            )),
        "{:?}",
        m.warnings
    );
    let r = evaluate(&config(), input).unwrap();
    assert_eq!(
        decision(&r, "empty"),
        (NodeDecision::Delete, Some(Method::Emptiness)),
        "{:#?}",
        r.nodes
    );
    let deleted = ["under-used", "busy"]
        .into_iter()
        .filter(|n| decision(&r, n) == (NodeDecision::Delete, Some(Method::Single)))
        .count();
    assert_eq!(deleted, 1, "{:#?}", r.nodes);

    let lone = |objects: Vec<Value>| {
        let kept: Vec<Value> = objects
            .into_iter()
            .filter(|o| {
                let name = o["metadata"]["name"].as_str().unwrap_or("");
                !name.starts_with("empty") && !name.starts_with("busy") && name != "big"
            })
            .collect();
        report_of(manifests(&kept), &config(), None)
    };
    let ready = lone(objects());
    assert_eq!(
        decision(&ready, "under-used"),
        (NodeDecision::Replace, Some(Method::Single)),
        "{:#?}",
        ready.nodes
    );
    let not_ready = lone(with_pool_not_ready(objects()));
    assert_eq!(decision(&not_ready, "under-used").0, NodeDecision::None);
    let reason = not_ready.nodes[0].reason.as_ref().unwrap().to_string();
    assert!(reason.contains("is not Ready"), "{reason}");
}

/// A PDB written with `namespace: ""` is in the default namespace, as the API server puts it
/// (and as a pod with that namespace is read).
#[test]
fn a_pdb_with_an_empty_namespace_is_in_the_default_namespace() {
    let pdb: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": ""},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}
    }))
    .unwrap();
    assert_eq!(pdb_input(&pdb).unwrap().namespace, "default");
}

/// The controller's `PREFERENCE_POLICY` (core v1.14.1 `options.go`, v1.4+) decides,
/// `--preference-policy` wins, a value Karpenter refuses is bad input, and a v0.37 controller
/// (which has no such option) honours preferences whatever the flag says.
#[test]
fn live_the_controller_preference_policy_decides_unless_the_flag_says() {
    use crate::scheduling::PreferencePolicy;
    let with_env = |version: &str, value: &str| {
        let fake = FakeCluster::new().karpenter_v1();
        let mut objects = objects();
        objects.push(controller_deployment(
            version,
            json!([{"name": "PREFERENCE_POLICY", "value": value}]),
        ));
        fake.put_all(objects);
        gather_live(&fake)
    };
    let (m, controller) = with_env("1.14.1", "Ignore").unwrap();
    let controller = controller.unwrap();
    assert_eq!(controller.preference_policy, Some(PreferencePolicy::Ignore));
    let catalog = Catalog::embedded().unwrap();
    let decide = |config: &Config, controller: &Controller| {
        build_input(
            &mut m.clone(),
            &mut CatalogSizing::new(&catalog, "us-east-1"),
            config,
            Some(controller),
        )
        .unwrap()
        .preference_policy
    };
    assert_eq!(decide(&config(), &controller), PreferencePolicy::Ignore);
    let flag = Config {
        preference_policy: Some(PreferencePolicy::Respect),
        ..config()
    };
    assert_eq!(decide(&flag, &controller), PreferencePolicy::Respect);
    let older = Controller {
        version: Some(crate::karpenter_install::release::parse_version("0.37.7").unwrap()),
        ..controller.clone()
    };
    assert_eq!(decide(&config(), &older), PreferencePolicy::Respect);
    let err = with_env("1.14.1", "ignore").unwrap_err();
    assert_eq!(err.exit, crate::error::Exit::Input);
    assert!(
        err.message
            .contains("PREFERENCE_POLICY \"ignore\" is not Respect or Ignore"),
        "{}",
        err.message
    );
}

/// The `empty` node alone, and a CapacityBuffer of one 3.5-CPU pod, which it holds.
fn with_buffer() -> Vec<Value> {
    let mut objects = objects();
    objects.retain(|o| {
        let name = o["metadata"]["name"].as_str().unwrap_or("");
        name == "default" || name.starts_with("empty")
    });
    objects.push(
        json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "spare"},
        "template": {"spec": {"containers": [{"name": "c", "image": "i",
            "resources": {"requests": {"cpu": "3500m"}}}]}}}),
    );
    objects.push(json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "spare"}, "spec": {"podTemplateRef": {"name": "spare"}, "replicas": 1}}));
    objects
}

/// core v1.14.1 `provisioning/provisioner.go` (the gate on: `GetPendingPods` adds the virtual
/// pods, the pass counts those placed on existing nodes, `bufferPodCountsFromResults`) and
/// `disruption/emptiness.go` `HasBufferPods`: the empty node that holds the buffer's pod is not
/// empty; with the gate off (its default, `options.go`) it goes. The flag wins over the
/// controller's gate, which is read like the others (`controller`).
#[test]
fn a_buffer_keeps_the_empty_node_it_fits_only_behind_the_gate() {
    let on = Config {
        capacity_buffer: Some(true),
        ..config()
    };
    let r = report_of(manifests(&with_buffer()), &on, None);
    let empty = r.nodes.iter().find(|n| n.name == "empty").unwrap();
    assert_eq!(empty.decision, NodeDecision::None, "{r:#?}");
    assert_eq!(empty.reason, Some(Reason::BufferPods));
    let controller = Controller {
        capacity_buffer: Some(true),
        ..Controller::default()
    };
    let r = report_of(manifests(&with_buffer()), &config(), Some(&controller));
    assert_eq!(decision(&r, "empty").0, NodeDecision::None);
    let r = report_of(manifests(&with_buffer()), &config(), None);
    assert_eq!(
        decision(&r, "empty"),
        (NodeDecision::Delete, Some(Method::Emptiness))
    );
}

/// Live, the same buffer read from the cluster decides the same (`read_live_buffers`, used by
/// the report, `consolidate --yes`'s rounds and `nodes`): the gate on keeps the empty node the
/// buffer's pod fits; off, no buffer is listed and the node goes.
#[test]
fn live_buffers_decide_as_the_manifests_do_only_behind_the_gate() {
    let fake = FakeCluster::new()
        .karpenter_v1()
        .serve("autoscaling.x-k8s.io/v1beta1", &["capacitybuffers"]);
    fake.put_all(with_buffer());
    let on = Config {
        capacity_buffer: Some(true),
        ..config()
    };
    let (mut m, controller) = gather_live(&fake).unwrap();
    let said = read_live_buffers(&fake, &on, controller.as_ref(), &mut m).unwrap();
    assert!(said.is_empty(), "{said:?}");
    assert_eq!(
        decision(&report_of(m, &on, None), "empty").0,
        NodeDecision::None
    );
    fake.clear_requests();
    let (mut m, controller) = gather_live(&fake).unwrap();
    read_live_buffers(&fake, &config(), controller.as_ref(), &mut m).unwrap();
    assert!(!fake
        .requests()
        .iter()
        .any(|r| r.path.contains("capacitybuffers")));
    assert_eq!(
        decision(&report_of(m, &config(), None), "empty"),
        (NodeDecision::Delete, Some(Method::Emptiness))
    );
}

/// `core v1.14.1: pkg/controllers/state/informer/nodeclaim.go` keeps only the NodeClaims
/// `nodeclaimutils.IsManaged` accepts (the provider's `GetSupportedNodeClasses`, aws:
/// `EC2NodeClass`), so a Node whose NodeClaim names EKS Auto Mode's `NodeClass`
/// (`eks.amazonaws.com`) is a state node without a NodeClaim: capacity, never a candidate
/// (`statenode.go ValidateNodeDisruptable`: "node isn't managed by karpenter"). **Differed,
/// fixed** (s29-linestate) — scenario: an empty Auto Mode node `auto` beside the `default`
/// pool's nodes → upstream leaves it to EKS; we deleted it by emptiness.
#[test]
fn an_eks_auto_mode_node_is_capacity_not_a_candidate() {
    let mut objects = objects();
    objects.push(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general-purpose"},
        "spec": {"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
                                "budgets": [{"nodes": "100%"}]},
                 "template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
                                       "requirements": []}}}}));
    let mut auto = node("auto");
    auto["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("general-purpose");
    let mut auto_claim = claim("auto", initialized());
    auto_claim["metadata"]["labels"]["karpenter.sh/nodepool"] = json!("general-purpose");
    auto_claim["spec"]["nodeClassRef"] =
        json!({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"});
    objects.extend([auto, auto_claim]);
    let r = report_of(manifests(&objects), &config(), None);
    let disrupted: Vec<&str> = (r.actions.iter())
        .flat_map(|a| a.nodes.iter().map(String::as_str))
        .collect();
    assert!(!disrupted.contains(&"auto"), "{r:#?}");
    assert!(r.nodes.iter().all(|n| n.name != "auto"), "{r:#?}");
    assert_eq!(
        decision(&r, "empty"),
        (NodeDecision::Delete, Some(Method::Emptiness))
    );
}

/// Thread aws/karpenter-provider-aws#6861: after the upgrade to v1.0, nodes whose pods carried
/// `karpenter.sh/do-not-evict: "true"` were consolidated. Core v1.14.1 reads only
/// `karpenter.sh/do-not-disrupt` (`pkg/utils/pod/scheduling.go` `IsDoNotDisruptActive`), so the
/// node is still deleted; the report now says why the annotation did not hold it. A pod that
/// also has do-not-disrupt is not named.
#[test]
fn an_unread_do_not_evict_is_named_in_a_warning() {
    annotated_small_pod_is_warned_and_moved(
        json!({"karpenter.sh/do-not-evict": "true"}),
        "pod default/small has karpenter.sh/do-not-evict, which Karpenter v1 no longer reads \
         (v0.31–v0.37 did): it does not hold the node from Karpenter's disruption \
         (karpenter.sh/do-not-disrupt does); this tool's own drain (--yes) still waits for such \
         a pod",
    );
}

/// Node `under-used` runs pod `small` with `annotations`, node `busy` pod `big` with the same and
/// `karpenter.sh/do-not-disrupt`: the input's only warning is `warning` (naming `small` only) and
/// `under-used` is still disrupted.
fn annotated_small_pod_is_warned_and_moved(annotations: serde_json::Value, warning: &str) {
    let mut objects = objects();
    let mut small = pod("small", "under-used", "500m");
    small["metadata"]["annotations"] = annotations.clone();
    let mut big = pod("big", "busy", "2");
    let mut both = annotations;
    both["karpenter.sh/do-not-disrupt"] = json!("true");
    big["metadata"]["annotations"] = both;
    objects.truncate(objects.len() - 2);
    objects.extend([small, big]);
    let mut m = manifests(&objects);
    let catalog = Catalog::embedded().unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let config = config();
    let input = build_input(&mut m, &mut sizing, &config, None).unwrap();
    assert_eq!(m.warnings, [warning]);
    let report = evaluate(&config, input).unwrap();
    let row = report
        .nodes
        .iter()
        .find(|n| n.name == "under-used")
        .unwrap();
    assert_ne!(row.decision, NodeDecision::None, "{row:?}");
}

/// Thread aws/karpenter-provider-aws#6394: a pod kept its node only by Cluster Autoscaler's
/// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`, and Karpenter consolidated the
/// node. Core v1.14.1 reads no such key (`pkg/utils/pod/scheduling.go` `IsDisruptable` reads
/// `karpenter.sh/do-not-disrupt` only), so the decision stands; the warning says why.
#[test]
fn an_unread_cluster_autoscaler_safe_to_evict_is_named_in_a_warning() {
    annotated_small_pod_is_warned_and_moved(
        json!({"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}),
        "pod default/small has cluster-autoscaler.kubernetes.io/safe-to-evict=false, which \
         Karpenter does not read: it does not hold the node from Karpenter's disruption \
         (karpenter.sh/do-not-disrupt: \"true\" does)",
    );
}
