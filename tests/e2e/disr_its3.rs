//! Disruption Its through the binary, part 3 (docs/upstream-tests/disruption.md "Disruption Its
//! through the binary, part 3 (s32-itdisr3)"): the Its of core v1.14.1 that earlier passes
//! mirrored only below the binary (engine, use case or api tests) — CapacityBuffer protection
//! in `pkg/controllers/disruption/{emptiness,consolidation}_test.go`, `pkg/utils/daemonset` and
//! `pkg/utils/nodepool`, `pkg/controllers/nodepool/readiness`, and the nodeclaim disruption
//! conditions of `pkg/controllers/nodeclaim/disruption/suite_test.go` — replayed from manifests
//! through the built binary (`consolidate -f`, `provision --dry-run -f`, `nodes -f`). Part 1's
//! catalog, NodePool, nodes and report helpers (`upstream_disruption_binary.rs`) and the
//! scheduling replay's plan helpers (`upstream_scheduling_binary.rs`) are reused.

use serde_json::{json, Value};

use crate::support::{fixture, merge, provision_json};
use crate::upstream_disruption_binary::{
    drift_pool, when_empty, Report, Sc, LEAST_SPOT, MOST, NOW,
};
use crate::upstream_scheduling_binary::{any_capacity, daemonset, plan, pool, sized};

/// Both gates: consolidation_test.go's `SpotToSpotConsolidation` and `CapacityBuffer` (off by
/// default, `pkg/operator/options/options.go`; buffers exist only behind it).
fn with_buffer_gate(mut sc: Sc) -> Sc {
    sc.flags = vec![
        "--feature-gates".into(),
        "SpotToSpotConsolidation=true,CapacityBuffer=true".into(),
    ];
    sc
}

/// A CapacityBuffer of `replicas` virtual pods of `cpu` each (its PodTemplate beside it). The
/// provisioner's pass places them; the nodes it places them on are the ones
/// `cluster.UpdateBufferPodCounts` marks in the Its.
fn buffer(sc: &mut Sc, replicas: u32, cpu: &str) {
    sc.push(json!({"apiVersion": "v1", "kind": "PodTemplate",
        "metadata": {"name": "spare", "namespace": "default"},
        "template": {"spec": {"containers": [{"name": "c", "image": "pause",
            "resources": {"requests": {"cpu": cpu}}}]}}}));
    sc.push(
        json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "spare", "namespace": "default"},
        "spec": {"podTemplateRef": {"name": "spare"}, "replicas": replicas}}),
    );
}

/// The nodes held for buffer pods (reason `BufferPods`).
fn held_for_buffers(r: &Report) -> Vec<String> {
    r.doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            n["decision"] == "none"
                && r.reason(n["name"].as_str().unwrap())
                    .contains("CapacityBuffer")
        })
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect()
}

/// emptiness_test.go "Buffer pod protection": "should not disrupt a node that hosts virtual
/// buffer pods", "should disrupt a node once buffer pods are cleared", "should only protect the
/// specific node with buffer pods, not others", "should not consider a node with real pods AND
/// buffer pods as empty", "should protect multiple nodes that each host buffer pods", "should not
/// protect a node with zero buffer pod count" (`emptiness.go ShouldDisrupt` → `HasBufferPods`).
#[test]
fn emptiness_leaves_the_nodes_buffer_pods_are_placed_on() {
    // One node, a buffer of three 1-CPU pods: they land on it, it stays.
    let mut sc = with_buffer_gate(when_empty());
    buffer(&mut sc, 3, "1");
    let r = sc.run("s32-empty-buffer");
    r.left_because("n0", &["CapacityBuffer"]);

    // Cleared (no buffer any more) and a buffer of zero replicas: the node goes.
    with_buffer_gate(when_empty())
        .run("s32-empty-buffer-cleared")
        .expect(&[("n0", "delete/emptiness")]);
    let mut sc = with_buffer_gate(when_empty());
    buffer(&mut sc, 0, "1");
    sc.run("s32-empty-buffer-zero")
        .expect(&[("n0", "delete/emptiness")]);

    // Two empty nodes, one 20-CPU buffer pod: only the node it is placed on stays.
    let mut sc = with_buffer_gate(when_empty());
    sc.node("n1", LEAST_SPOT);
    buffer(&mut sc, 1, "20");
    let r = sc.run("s32-empty-buffer-one-of-two");
    let held = held_for_buffers(&r);
    assert_eq!(held.len(), 1, "{:#}", r.doc);
    let other = if held[0] == "n0" { "n1" } else { "n0" };
    r.expect(&[(other, "delete/emptiness")]);

    // Two 20-CPU buffer pods on two 32-CPU nodes: one each, both stay.
    let mut sc = with_buffer_gate(when_empty());
    sc.node("n1", LEAST_SPOT);
    buffer(&mut sc, 2, "20");
    let r = sc.run("s32-empty-buffer-both");
    assert_eq!(held_for_buffers(&r), ["n0", "n1"], "{:#}", r.doc);

    // A real pod and buffer pods: not empty (WhenEmpty names the pod, not the buffer).
    let mut sc = with_buffer_gate(when_empty());
    sc.pod("p0", "n0", "");
    buffer(&mut sc, 2, "1");
    let r = sc.run("s32-empty-buffer-and-pod");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
    assert_eq!(r.actions().len(), 0, "{:#}", r.doc);
}

/// consolidation_test.go "Buffer Pods": "should not empty-consolidate a node with only buffer
/// pods", "should allow consolidation of a node with real pods and buffer pods to a cheaper
/// instance", "should skip buffer-only nodes in single-node consolidation but protect via
/// emptiness", "should consolidate a buffer node once buffer pods are cleared" (the
/// consolidation suite's pool: WhenEmptyOrUnderutilized, the most expensive type).
#[test]
fn consolidation_leaves_buffer_only_nodes_and_simulates_the_virtual_pods() {
    let mut sc = with_buffer_gate(Sc::new());
    sc.node("n0", MOST);
    buffer(&mut sc, 5, "1");
    let r = sc.run("s32-cons-buffer-only");
    r.left_because("n0", &["CapacityBuffer"]);
    assert!(r.actions().is_empty(), "{:#}", r.doc);

    let mut sc = with_buffer_gate(Sc::new());
    sc.node("n0", MOST);
    sc.run("s32-cons-buffer-cleared")
        .expect(&[("n0", "delete/emptiness")]);

    // A 1-CPU pod and two 1-CPU buffer pods on the most expensive node: a cheaper replacement
    // holds the pod and the virtual pods (they are pending in the simulation).
    let mut sc = with_buffer_gate(Sc::new());
    sc.node("n0", MOST).pod("p0", "n0", "1");
    buffer(&mut sc, 2, "1");
    let r = sc.run("s32-cons-buffer-replace");
    assert_eq!(r.of("n0"), "replace/single", "{:#}", r.doc);
    assert!(!r.actions().is_empty());

    // n0 buffer-only, n1 a 1-CPU pod and a buffer pod (20 CPU each: one per node): n0 is in no
    // command and stays.
    let mut sc = with_buffer_gate(Sc::new());
    sc.node("n0", MOST).node("n1", MOST).pod("p1", "n1", "1");
    buffer(&mut sc, 2, "20");
    let r = sc.run("s32-cons-buffer-skip");
    assert_eq!(r.of("n0"), "none", "{:#}", r.doc);
    for a in r.actions() {
        assert!(
            !a["nodes"].as_array().unwrap().iter().any(|n| n == "n0"),
            "{:#}",
            r.doc
        );
    }
}

/// utils/daemonset/suite_test.go "should merge resource limits into requests if no requests
/// exists for the given container" (`PodForDaemonSet`, containers and init containers) and
/// "should set unique Name and Namespace from the DaemonSet": a DaemonSet requesting 750m with
/// limits of 1 CPU and 1000Mi adds 750m and 1000Mi to the NodeClaim it is planned with.
#[test]
fn a_daemonsets_limits_stand_in_for_its_missing_requests() {
    let limited = json!({"requests": {"cpu": "750m"}, "limits": {"cpu": "1", "memory": "1000Mi"}});
    let mut ds = daemonset("agent", json!({"cpu": "750m"}), json!({}));
    ds["spec"]["template"]["spec"]["containers"][0]["resources"] = limited.clone();
    ds["spec"]["template"]["spec"]["initContainers"] =
        json!([{"name": "init", "image": "pause", "resources": limited}]);
    let p = plan(vec![
        pool("default", vec![any_capacity()], json!({})),
        ds,
        sized("p", json!({"cpu": "1"}), json!({})),
    ]);
    p.assert_pending(&[]);
    let requests = &p.claim("p")["requests"];
    assert_eq!(requests["cpu"], "1750m", "{:#}", p.json);
    assert_eq!(requests["memory"], "1000Mi", "{:#}", p.json);
}

/// utils/nodepool/suite_test.go "should order the NodePools by weight", "should order the
/// NodePools by name when the weights are the same" (`OrderByWeight`: weight descending, then
/// name descending); the provisioner takes the first pool that fits.
#[test]
fn pools_are_tried_by_weight_then_by_name_descending() {
    let weighted = |name: &str, weight: u32| {
        pool(
            name,
            vec![any_capacity()],
            json!({"pool": {"weight": weight}}),
        )
    };
    let p = plan(vec![
        weighted("alpha", 10),
        weighted("omega", 10),
        weighted("mid", 10),
        sized("p", json!({"cpu": "1"}), json!({})),
    ]);
    assert_eq!(p.claim("p")["nodePool"], "omega", "{:#}", p.json);
    let p = plan(vec![
        weighted("alpha", 50),
        weighted("omega", 10),
        weighted("zz", 1),
        sized("p", json!({"cpu": "1"}), json!({})),
    ]);
    assert_eq!(p.claim("p")["nodePool"], "alpha", "{:#}", p.json);
}

/// nodepool/readiness/suite_test.go "should have status condition on nodePool as not ready if
/// nodeClass is not ready", "should mark NodeClassReady status condition on nodePool as
/// NotReady if nodeClass is terminating", "should have status condition on nodePool as ready if
/// nodeClass is ready": the provisioner plans only with Ready pools (`provisioner.go`
/// `GetNodePools`, `NodeClassReady` follows the class: `readiness/controller.go`).
#[test]
fn a_pool_whose_class_is_not_ready_or_terminating_plans_nothing() {
    let catalog = fixture("s19-bsched/fake-catalog.yaml");
    let catalog = catalog.to_str().unwrap();
    let with_class = |class_patch: Value| {
        let mut class = crate::upstream_scheduling_binary::class();
        merge(&mut class, class_patch);
        provision_json(
            &["--catalog", catalog],
            vec![
                pool("default", vec![any_capacity()], json!({})),
                class,
                sized("p", json!({"cpu": "1"}), json!({})),
            ],
        )
    };
    let condition = |status: &str, reason: &str| {
        json!({"metadata": {"generation": 1}, "status": {"conditions": [{"type": "Ready",
            "status": status, "observedGeneration": 1, "lastTransitionTime": NOW,
            "reason": reason, "message": reason}]}})
    };
    let (code, ready) = with_class(condition("True", "Ready"));
    assert_eq!(code, 0, "{ready:#}");
    assert_eq!(
        ready["nodeClaims"].as_array().unwrap().len(),
        1,
        "{ready:#}"
    );
    for (tag, patch) in [
        ("not ready", condition("False", "SubnetsNotFound")),
        (
            "terminating",
            json!({"metadata": {"deletionTimestamp": NOW, "finalizers": ["karpenter.k8s.aws/termination"]}}),
        ),
    ] {
        let (code, plan) = with_class(patch);
        assert_eq!(code, 1, "{tag}: {plan:#}");
        assert!(
            plan["nodeClaims"].as_array().unwrap().is_empty(),
            "{tag}: {plan:#}"
        );
        assert_eq!(
            plan["unschedulable"][0]["pod"], "default/p",
            "{tag}: {plan:#}"
        );
    }
}

/// nodeclaim/disruption/suite_test.go "should set multiple disruption conditions
/// simultaneously": a drifted NodeClaim of a WhenEmpty pool (consolidateAfter 30s), empty and
/// initialized long enough, is both Drifted and Consolidatable — `nodes -f` shows both (DRIFT
/// from the condition, CONSOLIDATION deciding it; emptiness comes first in `NewMethods`).
#[test]
fn a_node_can_be_drifted_and_consolidatable_at_once() {
    let mut sc = when_empty();
    sc.disruption("default")["consolidateAfter"] = json!("30s");
    sc.drop_condition("n0", "Consolidatable");
    sc.condition("n0", "Drifted", "True", NOW);
    let doc = sc.nodes_doc("s33-drifted-consolidatable", &[]);
    let n0 = &doc["nodes"][0];
    assert_eq!(n0["drift"]["status"], "Drifted", "{doc:#}");
    assert_eq!(n0["consolidation"]["decision"], "delete", "{doc:#}");
    assert_eq!(n0["consolidation"]["method"], "emptiness", "{doc:#}");
}

/// drift_test.go "should drift one non-empty node at a time, starting with the earliest drift"
/// with a CapacityBuffer: the first drift's simulation places the buffer's virtual pod on the
/// second drifted node, which Karpenter does not nominate for it (`scheduler.go`
/// `Results.Record`: "Nominate nodes only for real pods"), so it drifts in the next pass.
/// **Differed, fixed**: the report held it ("receives pods from early (pass 1), which nominates
/// it").
#[test]
fn virtual_buffer_pods_nominate_no_node_for_later_passes() {
    let mut sc = with_buffer_gate(drift_pool());
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    sc.node_with("early", "default", MOST, &[("cpu", "2"), ("pods", "100")])
        .node_with("late", "default", MOST, &[("cpu", "8"), ("pods", "100")])
        .pod("e", "early", "1800m")
        .pod("l", "late", "6500m")
        .drifted("early", "2024-06-24T11:50:00Z")
        .drifted("late", "2024-06-24T11:59:00Z");
    buffer(&mut sc, 1, "100m");
    let r = sc.run("s32-drift-buffer");
    let order: Vec<(u64, String)> = r
        .actions()
        .iter()
        .map(|a| {
            (
                a["pass"].as_u64().unwrap(),
                a["nodes"][0].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [(1, "early".to_string()), (2, "late".to_string())],
        "{:#}",
        r.doc
    );
    r.expect(&[("early", "replace/drift"), ("late", "replace/drift")]);
}
