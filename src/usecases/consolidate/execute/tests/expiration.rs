//! Expiration carried out by `consolidate --yes`: a v1 NodeClaim past its `expireAfter` goes
//! forcefully — whatever the budgets or a do-not-disrupt say (`core v1.x
//! pkg/controllers/nodeclaim/expiration/controller.go`, suite_test "should remove nodeclaims
//! that are expired") — with its pods' replacements, several NodeClaims if need be, launched and
//! Ready before it drains; a v1beta1 pool's expiration waits for its budget and is blocked by a
//! do-not-disrupt pod (`v0.37.7 pkg/controllers/disruption/expiration.go`, expiration_test
//! "should allow no empty nodes to be disrupted", "should ignore nodes that have pods with the
//! karpenter.sh/do-not-disrupt annotation", "can replace node for expiration with multiple
//! nodes").

use super::*;
use crate::k8s::fake::FakeCluster;

/// Sets `spec.expireAfter` of the node's NodeClaim (created an hour before the clock's start).
fn expire_after(world: &World, node: &str, after: &str) {
    world.cluster.update(
        "karpenter.sh/v1",
        "NodeClaim",
        None,
        &format!("claim-{node}"),
        |c| c["spec"]["expireAfter"] = json!(after),
    );
}

/// A v1 world (one `app` pod) whose pool never consolidates: only expiration acts.
fn expiring_world() -> World {
    let world = world(1, json!([{"nodes": "100%"}]));
    world.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}}),
    ));
    world
}

/// Puts PodDisruptionBudget `name` (namespace `default`) with `spec`, allowing no disruption now.
fn pdb_at_zero(world: &World, name: &str, spec: Value) {
    world.cluster.put(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"disruptionsAllowed": 0}
    }));
}

/// When (its place in the run's events) the first event matching `step` happened for `node`.
fn first(run: &Run, node: &str, step: impl Fn(&NodeStep) -> bool) -> usize {
    run.events
        .iter()
        .position(|e| matches!(e, Event::Node { node: n, step: s } if n == node && step(s)))
        .unwrap_or_else(|| panic!("no such step for {node}: {:#?}", run.events))
}

#[test]
fn a_v1_expired_node_goes_whatever_its_budget_and_do_not_disrupt_replaced_by_several_first() {
    // Budget zero for every reason; the pool launches only c6a.large (one 1-CPU pod each).
    let world = world(2, json!([{"nodes": "0"}]));
    world.cluster.put(node_pool(
        "default",
        json!({
            "template": {"metadata": {"labels": {"team": "a"}}, "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                    "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In",
                        "values": ["on-demand"]},
                    {"key": "node.kubernetes.io/instance-type", "operator": "In",
                        "values": ["c6a.large"]}]}},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s", "budgets": [{"nodes": "0"}]}
        }),
    ));
    let expired = managed(&world, "c6a.2xlarge", &["p0", "p1"]);
    expire_after(&world, &expired, "30m");
    world.cluster.update("v1", "Node", None, &expired, |n| {
        n["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
    });

    let run = run(&world);
    assert_eq!(run.rounds, [vec![expired.clone()]], "{:#?}", run.outcomes);
    let o = run.outcome(&expired);
    assert_eq!(o.status, Status::Replaced, "{o:?}");
    assert!(
        o.reason.starts_with("expiration: expireAfter reached"),
        "{}",
        o.reason
    );
    assert_eq!(recorded_methods(&world, &expired)[0], Method::Expiration);
    // Two NodeClaims for its two pods, both Ready before the first eviction.
    assert_eq!(instance_types_launched(&world), ["c6a.large", "c6a.large"]);
    let ready: Vec<usize> = run
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(e, Event::Node { node, step: NodeStep::ReplacementReady { .. } }
                if *node == expired)
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ready.len(), 2, "{:#?}", run.events);
    let evicted = first(&run, &expired, |s| matches!(s, NodeStep::Evicted { .. }));
    assert!(
        ready.iter().all(|&r| r < evicted),
        "replacements Ready first"
    );
    assert!(!present(&world.cluster, &expired));
    assert_eq!(pending(&world), Vec::<String>::new(), "no pod left pending");
    assert_eq!(replace::verdict(&run.outcomes).unwrap(), Exit::Ok);
}

#[test]
fn a_v1_expired_node_goes_even_when_its_pods_fit_nowhere_and_says_so() {
    let world = expiring_world();
    let expired = managed(&world, "c6a.2xlarge", &["p0"]);
    expire_after(&world, &expired, "30m");
    // Its pod asks for a label no node and no pool has: it fits nowhere else.
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["spec"]["nodeSelector"] = json!({"team": "b"});
        });

    let run = run(&world);
    assert_eq!(
        run.status(&expired),
        Status::Replaced,
        "{:#?}",
        run.outcomes
    );
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Warning(w) if w.contains("fit nowhere"))),
        "{:#?}",
        run.events
    );
    assert!(!present(&world.cluster, &expired));
    assert_eq!(pending(&world).len(), 1, "its pod waits for capacity");
}

#[test]
fn a_node_not_expired_yet_is_left_alone() {
    let world = expiring_world();
    let node = managed(&world, "c6a.large", &["p0"]);
    expire_after(&world, &node, "2h");
    let run = run(&world);
    assert!(run.outcomes.is_empty(), "{:#?}", run.outcomes);
    assert!(present(&world.cluster, &node));
}

/// A v1beta1 world: only the v1beta1 CRDs served, pool `default` expiring after 30 minutes
/// with `budget`, consolidation off; kubelet, scheduler and the `app` ReplicaSet of 1.
fn v1beta1_world(budget: &str) -> World {
    let mut world = World::new();
    world.cluster = FakeCluster::new().karpenter_v1beta1();
    world.cluster.put(json!({
        "apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-al2023"}],
            "role": "NodeRole",
            "subnetSelectorTerms": [{"tags": {"cluster": crate::usecases::testing::CLUSTER}}],
            "securityGroupSelectorTerms": [{"tags":
                {"cluster": crate::usecases::testing::CLUSTER}}]}
    }));
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {"metadata": {"labels": {"team": "a"}}, "spec": {
                "nodeClassRef": {"name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                    "values": ["on-demand"]}]}},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never",
                "expireAfter": "30m", "budgets": [{"nodes": budget}]},
            "limits": {"cpu": "100"}}
    }));
    world.kubelet(Duration::from_secs(30));
    world.scheduler();
    world.replica_set(1);
    world
}

/// A v1beta1 managed node (its NodeClaim created an hour ago) running pod `p0`.
fn v1beta1_node(world: &World) -> String {
    world.managed_node_of("karpenter.sh/v1beta1", "c6a.2xlarge", &["p0"])
}

#[test]
fn a_v1beta1_expired_node_waits_for_its_budget_then_is_replaced_gracefully() {
    let world = v1beta1_world("0");
    let node = v1beta1_node(&world);
    let run = run(&world);
    assert!(run.outcomes.is_empty(), "budget 0: {:#?}", run.outcomes);
    assert!(present(&world.cluster, &node));
    let reason = why_not(&world, &node);
    assert!(matches!(reason, Reason::Budget { .. }), "{reason:?}");

    let world = v1beta1_world("1");
    let node = v1beta1_node(&world);
    let run = super::run(&world);
    assert_eq!(run.status(&node), Status::Replaced, "{:#?}", run.outcomes);
    assert_eq!(recorded_methods(&world, &node)[0], Method::Expiration);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    assert!(!present(&world.cluster, &node));
    assert_eq!(pending(&world), Vec::<String>::new());
}

#[test]
fn a_v1beta1_expired_node_with_a_do_not_disrupt_pod_is_not_started() {
    let world = v1beta1_world("1");
    let node = v1beta1_node(&world);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
        });
    let run = run(&world);
    assert!(run.outcomes.is_empty(), "graceful: {:#?}", run.outcomes);
    assert!(present(&world.cluster, &node));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}

#[test]
fn killed_after_launching_an_expiration_it_adopts_and_finishes() {
    let world = expiring_world();
    let node = managed(&world, "c6a.2xlarge", &["p0"]);
    expire_after(&world, &node, "30m");
    let (_, id) = launched_before(&world, "c6a.large");
    killed_at(
        &world,
        &node,
        &record(
            Step::Launched,
            Method::Expiration,
            &["default-0123456789".into()],
            &[id],
        ),
    );
    let run = run(&world);
    assert_eq!(run.status(&node), Status::Replaced, "{:#?}", run.outcomes);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0, "adopted, not launched");
    assert!(!present(&world.cluster, &node));
    assert_eq!(pending(&world), Vec::<String>::new());
}

#[test]
fn a_v1_expired_node_behind_a_pdb_at_zero_starts_but_its_drain_respects_the_pdb() {
    let world = expiring_world();
    let expired = managed(&world, "c6a.2xlarge", &["p0"]);
    expire_after(&world, &expired, "30m");
    pdb_at_zero(
        &world,
        "app",
        json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "app"}}}),
    );

    let run = run(&world);
    let o = run.outcome(&expired);
    assert_eq!(o.status, Status::Failed, "{o:?}");
    assert!(
        matches!(&o.detail, Detail::DrainTimedOut { .. }),
        "{:?}",
        o.detail
    );
    assert_eq!(
        calls(&world, "EC2.CreateFleet"),
        1,
        "started: its replacement launched"
    );
    assert!(run.events.iter().any(|e| matches!(
        e,
        Event::Node { node, step: NodeStep::EvictionRefused { .. } } if *node == expired
    )));
    // Never evicted past the PDB: still there, cordoned, resumable.
    let node = world.cluster.get("v1", "Node", None, &expired).unwrap();
    assert_eq!(node["spec"]["unschedulable"], true);
    assert!(node["metadata"]["annotations"][REPLACEMENT].is_string());
    assert_eq!(pending(&world), Vec::<String>::new());
    assert!(replace::verdict(&run.outcomes).is_err(), "exit 3");
}

/// v1 expiration launches only for the pods Karpenter's provisioner would schedule again
/// (`core v1.14.1: pkg/controllers/provisioning/provisioner.go` `Schedule`:
/// `CurrentlyReschedulablePods` of the deleting nodes): a pod under an active do-not-disrupt
/// or a PDB that can never allow an eviction stays until the grace period and gets no
/// replacement capacity now (core#1789; the report's `drainWaitsFor`).
#[test]
fn a_v1_expired_node_launches_only_for_its_currently_reschedulable_pods() {
    let world = world(3, json!([{"nodes": "100%"}]));
    world.cluster.put(node_pool(
        "default",
        json!({
            "template": on_demand_template(json!([
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                    "values": ["c6a.large"]}])),
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}
        }),
    ));
    let expired = managed(&world, "c6a.2xlarge", &["p0", "p1", "p2"]);
    expire_after(&world, &expired, "30m");
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p1", |p| {
            p["metadata"]["annotations"] = json!({"karpenter.sh/do-not-disrupt": "true"});
        });
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p2", |p| {
            p["metadata"]["labels"]["guard"] = json!("full");
        });
    pdb_at_zero(
        &world,
        "guard",
        json!({"maxUnavailable": 0, "selector": {"matchLabels": {"guard": "full"}}}),
    );

    let run = run(&world);
    assert_eq!(
        instance_types_launched(&world),
        ["c6a.large"],
        "one replacement, for p0 only: {:#?}",
        run.events
    );
    // p2's PDB never allows its eviction: the drain waits on it (and on p1) as Karpenter's
    // termination does, while p0 already runs on its replacement.
    let o = run.outcome(&expired);
    assert_eq!(o.replacements.len(), 1, "{o:?}");
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Node { step: NodeStep::Evicted { pod }, .. } if pod == "default/p0")),
        "{:#?}",
        run.events
    );
}

/// Each expired v1 NodeClaim goes by itself (core v1.14.1 `nodeclaim/expiration/controller.go`
/// deletes every one; their drains run side by side): one whose drain a PDB at zero holds fails
/// its drain and stays cordoned, and the run still carries out the other's expiration. The
/// held one is resumed from a killed run's record, so it goes in a round of its own first
/// (found by the mutating fuzzer, round 2, seeds 620 and 794: the run stopped at its failure).
#[test]
fn a_resumed_expiration_a_pdb_holds_does_not_keep_the_next_expired_node() {
    let world = expiring_world();
    let held = managed(&world, "c6a.2xlarge", &["p0"]);
    let free = managed(&world, "c6a.2xlarge", &["p1"]);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["metadata"]["labels"]["hold"] = json!("yes")
        });
    expire_after(&world, &held, "30m");
    expire_after(&world, &free, "30m");
    pdb_at_zero(
        &world,
        "hold",
        json!({"minAvailable": 1, "selector": {"matchLabels": {"hold": "yes"}}}),
    );
    killed_at(
        &world,
        &held,
        &record(Step::Marked, Method::Expiration, &[], &[]),
    );

    let run = run(&world);
    assert_eq!(run.rounds.len(), 2, "{:?}", run.rounds);
    assert_eq!(run.status(&held), Status::Failed, "{:#?}", run.outcomes);
    assert_eq!(run.status(&free), Status::Replaced, "{:#?}", run.outcomes);
    assert!(!present(&world.cluster, &free));
    let node = world.cluster.get("v1", "Node", None, &held).unwrap();
    assert_eq!(
        node["spec"]["unschedulable"], true,
        "held, cordoned, resumable"
    );
}
