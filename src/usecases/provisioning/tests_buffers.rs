//! CapacityBuffers in live plans and launches (docs/karpenter.md §6.13): core v1.14.1
//! `provisioning/provisioner.go` `GetPendingPods` adds the virtual pods behind the gate, and
//! `Reconcile` launches `results.NewNodeClaims` with no distinction — a NodeClaim made for
//! virtual pods only is an ordinary NodeClaim (`CreateNodeClaims`); `buffers.go`
//! `filterVirtualPodMapping` keeps them out of the pod decisions.

use serde_json::json;

use super::tests::all;
use super::*;
use crate::usecases::testing::World;

/// The world with the buffer CRD served, a PodTemplate of 1 CPU and a buffer of `replicas`.
fn world_with_a_buffer(replicas: u32) -> World {
    let world = World::new();
    let cluster = world
        .cluster
        .clone()
        .serve("autoscaling.x-k8s.io/v1beta1", &["capacitybuffers"]);
    cluster.put(json!({"apiVersion": "v1", "kind": "PodTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "template": {"metadata": {"labels": {"app": "buf"}},
                     "spec": {"containers": [{"name": "c", "image": "i",
                                              "resources": {"requests": {"cpu": "1"}}}]}}}));
    cluster.put(
        json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "spare", "namespace": "default"},
        "spec": {"podTemplateRef": {"name": "t"}, "replicas": replicas}}),
    );
    world
}

fn gate(on: Option<bool>) -> Selection {
    Selection {
        capacity_buffer_gate: on,
        ..all()
    }
}

fn listed_buffers(world: &World) -> bool {
    world
        .cluster
        .requests()
        .iter()
        .any(|r| r.path.contains("capacitybuffers"))
}

/// Gate off or unknown (`options.go`: default false): no buffer is listed, nothing is pending.
#[test]
fn with_the_gate_off_no_buffer_is_read_or_planned() {
    for on in [None, Some(false)] {
        let world = world_with_a_buffer(2);
        let round = world.live().plan_pending(&gate(on), &mut |_| {}).unwrap();
        assert!(round.is_none(), "{on:?}");
        assert!(!listed_buffers(&world), "{on:?}");
    }
}

/// **Differed, fixed** — scenario: the controller's `CapacityBuffer` gate on, a buffer of two
/// 1-CPU virtual pods and no pending pod → Karpenter's provisioner schedules the virtual pods
/// and launches a NodeClaim for them (`provisioner.go` `Reconcile` → `CreateNodeClaims`); the
/// live plan read no buffer and launched nothing. Now the NodeClaim is planned and launched,
/// named after the virtual pods (the same name for the same buffer: a retry adopts its
/// instance), with no pod to bind or wait for; the next plan finds the buffer's capacity in
/// flight and launches nothing more.
#[test]
fn with_the_gate_on_a_buffer_only_node_claim_is_launched_once() {
    let world = world_with_a_buffer(2);
    let mut live = world.live();
    let round = live
        .plan_pending(&gate(Some(true)), &mut |_| {})
        .unwrap()
        .expect("the buffer's capacity is planned");
    assert!(listed_buffers(&world));
    let plan = &round.plan;
    assert_eq!(plan.node_claims.len(), 1);
    let claim = &plan.node_claims[0];
    assert!(claim.pods.is_empty(), "virtual pods are not pods to bind");
    assert!(plan.unschedulable.is_empty());
    assert_eq!(plan.buffers.len(), 1);
    assert_eq!(plan.buffers[0].buffer, "default/spare");
    assert_eq!(plan.buffers[0].on_new(), 2);
    assert_eq!(plan.buffers[0].node_claims[0].node, claim.name);
    // The launch question counts them apart ("for 0 pod(s) and 2 CapacityBuffer virtual pod(s)").
    assert_eq!(plan.buffer_pods_on_new(), 2);
    // Deterministic: the same buffer plans the same name.
    let again = live
        .plan_pending(&gate(Some(true)), &mut |_| {})
        .unwrap()
        .unwrap();
    assert_eq!(again.plan.node_claims[0].name, claim.name);
    let launches = live
        .launch_in_rounds(&gate(Some(true)), &round, &mut |_| {})
        .unwrap();
    assert_eq!(launches.launched.len(), 1);
    assert!(launches.launched[0].pods.is_empty());
    assert_eq!(launches.launched[0].node_claim, claim.name);
    // In flight, the instance holds the buffer's virtual pods: nothing more to launch.
    let next = live
        .plan_pending(&gate(Some(true)), &mut |_| {})
        .unwrap()
        .unwrap();
    assert!(
        next.plan.node_claims.is_empty(),
        "{:?}",
        next.plan.node_claims
    );
    assert_eq!(next.plan.buffers[0].on_existing(), 2);
}

/// A bigger buffer is other virtual pods: another NodeClaim name, so the in-flight instance of
/// the smaller one is never adopted for it.
#[test]
fn buffer_only_node_claims_of_other_virtual_pods_have_other_names() {
    let name = |replicas| {
        let world = world_with_a_buffer(replicas);
        let round = world.live().plan_pending(&gate(Some(true)), &mut |_| {});
        round.unwrap().unwrap().plan.node_claims[0].name.clone()
    };
    assert_ne!(name(2), name(3));
}

/// A buffer naming a missing PodTemplate provisions nothing; said once, as offline.
#[test]
fn an_unresolvable_buffer_is_a_warning_and_no_capacity() {
    let world = world_with_a_buffer(2);
    world
        .cluster
        .remove("v1", "PodTemplate", Some("default"), "t");
    let mut warnings = Vec::new();
    let round = world
        .live()
        .plan_pending(&gate(Some(true)), &mut |e| {
            if let Event::Warning(w) = e {
                warnings.push(w);
            }
        })
        .unwrap();
    assert!(round.is_none());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("PodTemplate t is not in namespace default (ReadyForProvisioning=False, PodTemplateNotFound)"));
}

/// `--watch` with the gate on and no pending pod: the buffer's NodeClaim is launched once
/// (Karpenter's buffer controller triggers the provisioner), and its node, empty of real pods
/// past `consolidateAfter`, is kept — the last plan placed the buffer's virtual pods on it
/// (`emptiness.go` `ShouldDisrupt` → `HasBufferPods`; `emptiness_test.go` "Buffer pod
/// protection").
#[test]
fn watch_launches_for_a_buffer_and_keeps_its_empty_node() {
    let world = world_with_a_buffer(2);
    world.kubelet(std::time::Duration::from_secs(5));
    world.clock.stop_after(std::time::Duration::from_secs(60));
    let mut seen = Vec::new();
    world
        .live()
        .watch(&gate(Some(true)), &mut |e| seen.push(e))
        .unwrap();
    assert_eq!(world.running().len(), 1, "launched once, kept");
    let launched = seen
        .iter()
        .filter(|e| matches!(e, Event::Launched(_)))
        .count();
    assert_eq!(launched, 1);
    assert!(
        !seen.iter().any(|e| matches!(e, Event::NodeRemoved { .. })),
        "{seen:?}"
    );
    assert!(seen.iter().any(|e| matches!(
        e,
        Event::NodeHeld {
            hold: crate::disruption::emptiness::Hold::BufferPods,
            ..
        }
    )));
}

/// `drift replace` and `consolidate --yes`'s pipeline re-plans read the snapshot with the
/// buffers' virtual pods among the pending pods behind the gate (they take their room on
/// existing nodes first, as pending pods do), and nothing more with it off.
#[test]
fn replacement_snapshots_have_the_virtual_pods_behind_the_gate() {
    let world = world_with_a_buffer(2);
    let (m, said) =
        crate::usecases::replace::read_cluster_with_buffers(&world.cluster, true, 0).unwrap();
    assert!(said.is_empty(), "{said:?}");
    let pods: Vec<String> = m.pods.iter().map(|p| p.key()).collect();
    assert_eq!(
        pods,
        [
            "default/capacity-buffer-spare-1",
            "default/capacity-buffer-spare-2"
        ]
    );
    world.cluster.clear_requests();
    let (m, _) =
        crate::usecases::replace::read_cluster_with_buffers(&world.cluster, false, 0).unwrap();
    assert!(m.pods.is_empty());
    assert!(!listed_buffers(&world));
}
