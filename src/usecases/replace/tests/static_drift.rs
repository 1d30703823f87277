//! A static NodePool's drifted node (`core v1.14.1: pkg/controllers/disruption/
//! staticdrift.go`): `drift replace` takes it with method `static-drift` and replaces it by one
//! bare NodeClaim of the pool's template — not by what its pods need — unless the pool is
//! above its replicas (scale-down first) or at its `limits.nodes`.

use super::select::verdict_of;
use super::*;
use crate::drift::{DriftReason, DriftSnapshot, Evaluation, Status as Verdict};
use crate::usecases::replace::select::select;

/// The `default` pool made static: `replicas`, a budget of 100%, `limits.nodes` if given.
fn static_pool(world: &World, replicas: i64, nodes_limit: Option<i64>) {
    let mut spec = json!({"replicas": replicas,
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
            "budgets": [{"nodes": "100%"}]}});
    // Static pools take only `limits.nodes` (the default pool's `cpu` limit goes).
    spec["limits"] = match nodes_limit {
        Some(l) => json!({"nodes": l.to_string()}),
        None => json!({}),
    };
    world.cluster.put(node_pool("default", spec));
}

/// `select` over the cluster as it is, `drifted` judged drifted and the others not.
fn selected(world: &World, nodes: &[String], drifted: &[&String]) -> (Vec<Action>, Vec<Event>) {
    let m = read_cluster(&world.cluster).unwrap();
    let evaluation = Evaluation {
        nodes: nodes
            .iter()
            .map(|n| {
                let status = if drifted.contains(&n) {
                    Verdict::Drifted
                } else {
                    Verdict::Ok
                };
                let reason = (status == Verdict::Drifted).then_some(DriftReason::AmiDrift);
                verdict_of(n, status, reason)
            })
            .collect(),
        ..Evaluation::default()
    };
    let mut events = Vec::new();
    let actions = select(&m, &DriftSnapshot::default(), &evaluation, &[], &mut |e| {
        events.push(e)
    });
    (actions, events)
}

/// Previews and runs `actions` against the cluster as it is now.
fn run_actions(world: &World, actions: Vec<Action>) -> Vec<NodeOutcome> {
    let m = read_cluster(&world.cluster).unwrap();
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
    replace_pipeline::run(&mut live, preview, &settings(), &mut |_: Event| {}).unwrap()
}

#[test]
fn a_drifted_static_node_is_replaced_by_a_bare_replica_and_the_pool_keeps_its_replicas() {
    let world = world();
    static_pool(&world, 2, None);
    replica_set(&world, 2);
    let n = drifted(&world, 2);
    let (actions, events) = selected(&world, &n, &[&n[0]]);
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].method, Method::StaticDrift);
    let outcomes = run_actions(&world, actions);
    let o = &outcomes[0];
    assert_eq!(o.status, Status::Replaced, "{o:?}");
    assert_eq!(o.replacements.len(), 1, "one bare replica: {o:?}");
    // Two nodes of the pool again: the undrifted one and the replica; the drifted one gone.
    let running = world.running();
    assert_eq!(running.len(), 2, "{running:?}");
    assert!(node_json(&world, &n[0]).is_none());
    assert!(node_json(&world, &n[1]).is_some());
    let replica = running
        .iter()
        .map(|i| crate::usecases::testing::node_name(&i.id))
        .find(|name| name != &n[1])
        .unwrap();
    let labels = &node_json(&world, &replica).unwrap()["metadata"]["labels"];
    assert_eq!(labels["karpenter.sh/nodepool"], "default");
    // The record on the node said which method, as each step wrote it.
    let recorded: Vec<Method> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with(&n[0]))
        .filter_map(|r| {
            Record::parse(r.body["metadata"]["annotations"][REPLACEMENT].as_str()?)
                .map(|rec| rec.method)
        })
        .collect();
    assert!(!recorded.is_empty());
    assert!(
        recorded.iter().all(|m| *m == Method::StaticDrift),
        "{recorded:?}"
    );
}

/// staticdrift_test.go "should wait until nodes are deprovisioned when we are overscaled".
#[test]
fn a_static_pool_above_its_replicas_scales_down_first() {
    let world = world();
    static_pool(&world, 1, None);
    let n = drifted(&world, 2);
    let (actions, events) = selected(&world, &n, &[&n[0]]);
    assert!(actions.is_empty(), "{actions:?}");
    assert_eq!(
        events,
        [Event::Warning(format!(
            "{}: left alone: NodePool default above replicas (2 running + 0 pending \
             disruption > 1): scale-down first",
            n[0]
        ))]
    );
}

/// staticdrift_test.go "should not drift nodes when we cannot acquire limits", and a node
/// already in a replacement counting as pending disruption.
#[test]
fn limits_nodes_and_replacements_in_flight_hold_static_drift() {
    let world = world();
    static_pool(&world, 2, Some(2));
    let n = drifted(&world, 2);
    let (actions, events) = selected(&world, &n, &[&n[0], &n[1]]);
    assert!(actions.is_empty(), "{actions:?}");
    assert_eq!(events.len(), 2);
    assert!(
        matches!(&events[0], Event::Warning(w) if w.contains("limits.nodes 2 of NodePool default reached")),
        "{events:?}"
    );
    // No limit, but n1 in a replacement: 1 running + 1 pending disruption = 2, not above.
    static_pool(&world, 2, None);
    let record = Record {
        step: Step::Marked,
        method: Method::StaticDrift,
        reason: "AMIDrift".into(),
        ..Record::default()
    };
    world.cluster.update("v1", "Node", None, &n[1], |j| {
        j["metadata"]["annotations"] = json!({REPLACEMENT: record.format()});
    });
    let (actions, _) = selected(&world, &n, &[&n[0], &n[1]]);
    let taken: Vec<(&str, Method)> = actions
        .iter()
        .map(|a| (a.node.name.as_str(), a.method))
        .collect();
    assert_eq!(
        taken,
        [
            (n[1].as_str(), Method::StaticDrift),
            (n[0].as_str(), Method::StaticDrift)
        ]
    );
}

/// A run killed right after marking a static node: the next run resumes it with its recorded
/// method, launching the bare replica under the recorded NodeClaim name.
#[test]
fn a_killed_static_drift_resumes_under_its_recorded_name() {
    use crate::disruption::replace::replacement_name;
    use crate::model::labels::NODECLAIM as NODECLAIM_TAG;
    const EARLIER: &str = "2023-11-14T20:00:00Z";
    let world = world();
    static_pool(&world, 2, None);
    let n = drifted(&world, 2);
    let m = read_cluster(&world.cluster).unwrap();
    let node = m.nodes.iter().find(|x| x.name == n[0]).unwrap().clone();
    let claim = replacement_name("default", 0, &node, EARLIER);
    let record = Record {
        step: Step::Marked,
        method: Method::StaticDrift,
        node_claims: vec![claim.clone()],
        reason: "AMIDrift".into(),
        started_at: EARLIER.into(),
        ..Record::default()
    };
    world.cluster.update("v1", "Node", None, &n[0], |j| {
        j["metadata"]["annotations"] = json!({REPLACEMENT: record.format()});
        j["spec"]["unschedulable"] = json!(true);
    });
    // Judged not drifted now: a recorded replacement is finished all the same.
    let (actions, _) = selected(&world, &n, &[]);
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].method, Method::StaticDrift);
    let outcomes = run_actions(&world, actions);
    assert_eq!(outcomes[0].status, Status::Replaced, "{:?}", outcomes[0]);
    assert_eq!(calls(&world, "EC2.CreateFleet"), 1);
    let tagged: Vec<String> = world
        .cloud
        .instances
        .borrow()
        .iter()
        .filter_map(|i| i.tags.get(NODECLAIM_TAG).cloned())
        .collect();
    assert!(tagged.contains(&claim), "{tagged:?}");
    assert_eq!(world.running().len(), 2);
}
