//! Karpenter's node termination (`core v1.14.1: pkg/controllers/node/termination/suite_test.go`,
//! `terminator/suite_test.go`) mirrored on the replace pipeline's drain, against the fakes
//! (docs/upstream-tests.md "Node termination and NodeClaim lifecycle (s17-term)").

use super::*;
use crate::disruption::replace::Holding;
use crate::k8s::Method as Http;
use crate::usecases::replace::steps::EXCLUDE_FROM_LOAD_BALANCERS;

/// The Eviction API's answer when several PDBs select the pod (a 500, `policy/v1`).
const MULTIPLE_PDBS: &str =
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// A pod of 100m on `node` with priority class `system-cluster-critical` (a ReplicaSet's).
fn critical_pod(world: &World, name: &str, node: &str) {
    put_bound(&world.cluster, name, node);
    world
        .cluster
        .update("v1", "Pod", Some("default"), name, |p| {
            p["metadata"]["labels"]["app"] = json!(name);
            p["spec"]["priorityClassName"] = json!("system-cluster-critical");
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("100m");
        });
}

/// "should evict pods in order and wait until pods are fully deleted", "should evict
/// non-critical pods first": a non-critical pod still terminating (deleted by someone else,
/// its grace period running until 90 s) keeps the critical pod waiting; the critical pod is
/// evicted only once the other is gone, and the terminating one is never evicted. **Differed,
/// fixed (s17)**: the critical pod was evicted on the drain's first pass.
#[test]
fn a_critical_pod_is_evicted_only_once_the_terminating_non_critical_pod_is_gone() {
    let world = world();
    let old = drifted(&world, 1);
    critical_pod(&world, "dns", &old[0]);
    let deleted_at = crate::model::time::format_rfc3339(world.clock.now() + 120);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "p0", |p| {
            p["metadata"]["deletionTimestamp"] = json!(deleted_at);
        });
    let cluster = world.cluster.clone();
    world.clock.on_tick(move |now| {
        if now >= secs(90) {
            cluster.remove("v1", "Pod", Some("default"), "p0");
        }
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let evicted: Vec<String> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/eviction"))
        .map(|r| r.path)
        .collect();
    assert_eq!(
        evicted,
        ["/api/v1/namespaces/default/pods/dns/eviction"],
        "the terminating pod is waited for, never evicted"
    );
    let when = run.when(&old[0], |s| matches!(s, NodeStep::Evicted { .. }));
    assert!(when >= secs(90), "dns waited for p0: {when:?}");
}

/// "should exclude nodes from load balancers when terminating": the node is labelled
/// `node.kubernetes.io/exclude-from-external-load-balancers=karpenter` as its drain begins
/// (after its replacement serves, before the first eviction) — not at the mark, so a node
/// rolled back was never taken out of its load balancers. **Differed, fixed (s17)**: the label
/// was never written.
#[test]
fn the_drain_takes_the_node_out_of_external_load_balancers_first() {
    let world = world();
    let old = drifted(&world, 1);
    // A PDB at zero holds the drain until 120 s (as upstream's It does), so the node can be
    // looked at while it drains; it appears once the node is cordoned (after the plan).
    let (cluster, node) = (world.cluster.clone(), old[0].clone());
    world.clock.on_tick(move |now| {
        let none = cluster.list("policy/v1", "PodDisruptionBudget").is_empty();
        if now < secs(120) && none && cordoned(&cluster, &node) {
            cluster.put(super::pdb("app", "app", 0, 0));
        }
        if now >= secs(120) && !none {
            cluster.remove("policy/v1", "PodDisruptionBudget", Some("default"), "app");
        }
    });
    let seen: Rc<RefCell<Option<Value>>> = Rc::default();
    let (keep, cluster, node) = (seen.clone(), world.cluster.clone(), old[0].clone());
    world.clock.on_tick(move |now| {
        if now >= secs(100) && keep.borrow().is_none() {
            *keep.borrow_mut() = cluster
                .get("v1", "Node", None, &node)
                .map(|n| n["metadata"]["labels"].clone());
        }
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let (key, value) = EXCLUDE_FROM_LOAD_BALANCERS;
    assert_eq!(
        seen.borrow().as_ref().unwrap()[key],
        value,
        "while draining"
    );
    let path = format!("/api/v1/nodes/{}", old[0]);
    let bodies: Vec<Value> = world
        .cluster
        .requests()
        .into_iter()
        .filter(|r| r.method == Http::Patch && r.path == path)
        .map(|r| r.body)
        .collect();
    let labelled = bodies
        .iter()
        .position(|b| b["metadata"]["labels"][key] == value)
        .expect("labelled");
    assert_eq!(
        bodies[labelled],
        json!({"metadata": {"labels": {key: value}}}),
        "the label alone"
    );
    assert_eq!(
        labelled, 2,
        "after the mark and the launch record: {bodies:?}"
    );
}

/// The rollback side of the same It: a node whose replacement never served is not labelled.
#[test]
fn a_node_rolled_back_was_never_taken_out_of_load_balancers() {
    let world = world();
    let old = drifted(&world, 1);
    for t in ["c6a.large", "c6a.xlarge", "c6a.2xlarge", "c6a.4xlarge"] {
        world.cloud.insufficient_capacity(t, "*");
    }
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::RolledBack);
    let labels = &node_json(&world, &old[0]).unwrap()["metadata"]["labels"];
    assert!(labels[EXCLUDE_FROM_LOAD_BALANCERS.0].is_null(), "{labels}");
}

/// `terminator/suite_test.go` "should return a NodeDrainError event when two PDBs refer to the
/// same pod" (the Eviction API's 500) and `eviction.go`'s requeue of every answer but 404/409:
/// a 500 is retried with the drain's backoff, reported once, and the pod goes once the server
/// lets it. **Differed, fixed (s17)**: a 500 from the Eviction API ended the whole run.
#[test]
fn an_eviction_answered_500_is_retried_until_it_goes_through() {
    let world = world();
    let old = drifted(&world, 1);
    evictions_answer(&world, 500, MULTIPLE_PDBS, 3);
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(evictions(&world), 4, "three 500s, then through");
    let refusals: Vec<NodeStep> = run
        .steps(&old[0])
        .into_iter()
        .filter(|s| matches!(s, NodeStep::EvictionRefused { .. }))
        .collect();
    assert_eq!(
        refusals,
        [NodeStep::EvictionRefused {
            pod: "default/p0".into(),
            message: MULTIPLE_PDBS.into()
        }]
    );
}

/// The same 500 for ever: the drain times out naming it (cordoned, resumable), as a PDB's
/// 429 does (`a_drain_that_times_out_stays_cordoned_and_a_rerun_finishes_it`).
#[test]
fn an_eviction_answered_500_until_the_timeout_names_it() {
    let world = world();
    let old = drifted(&world, 1);
    evictions_answer(&world, 500, MULTIPLE_PDBS, 1_000);
    let mut short = settings();
    short.drain_timeout = secs(60);
    let run = replace(&world, &old, &short);
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::Failed);
    assert!(
        matches!(&o.detail, Detail::DrainTimedOut { holding: Holding::Named(why), .. } if why == MULTIPLE_PDBS),
        "{:?}",
        o.detail
    );
    assert_eq!(
        node_json(&world, &old[0]).unwrap()["spec"]["unschedulable"],
        true
    );
}

/// A 403 (a missing `pods/eviction` permission) is not retried: the run ends naming it.
#[test]
fn an_eviction_answered_403_ends_the_run() {
    let world = world();
    let old = drifted(&world, 1);
    evictions_answer(&world, 403, "forbidden", 1_000);
    let (m, actions) = actions(&world, &old);
    let mut live = world.live();
    let preview = replace_pipeline::preview(&live, &m, actions, &settings()).unwrap();
    let err = replace_pipeline::run(&mut live, preview, &settings(), &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("403") || err.to_string().contains("forbidden"),
        "{err}"
    );
    assert_eq!(evictions(&world), 1);
}

/// The pod's namespace is being deleted: the Eviction API answers 403 with the
/// `NamespaceTerminating` cause (the NamespaceLifecycle admission) until the namespace
/// controller deletes the pod. Karpenter requeues every answer but 404/409 (`core v1.14.1:
/// terminator/eviction.go Reconcile`) and `kubectl drain` retries this one: the drain goes on
/// and the node is replaced once the pod is gone. **Differed, fixed (s29)**: the 403 ended the
/// whole run, as a missing permission does.
#[test]
fn an_eviction_refused_because_the_namespace_is_terminating_is_retried() {
    let world = world();
    let old = drifted(&world, 1);
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "default", "deletionTimestamp": "2024-06-24T12:00:00Z",
            "finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating"},
    }));
    let cluster = world.cluster.clone();
    world.clock.on_tick(move |_| {
        let refused = cluster
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/eviction"));
        if refused {
            cluster.remove("v1", "Pod", Some("default"), "p0");
        }
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(
        run.outcome(&old[0]).status,
        Status::Replaced,
        "{:?}",
        run.outcome(&old[0]).detail
    );
    let refusals: Vec<String> = run
        .steps(&old[0])
        .into_iter()
        .filter_map(|s| match s {
            NodeStep::EvictionRefused { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].contains("because it is being terminated"),
        "{refusals:?}"
    );
}

/// `terminator/suite_test.go` "should succeed with no event when the pod is not found" and "…
/// when the pod UID conflicts": a 404 or a 409 (the UID precondition: another pod of that name
/// now) is no refusal — nothing is reported, and the pod as read again next pass is evicted.
#[test]
fn an_eviction_answered_404_or_409_is_no_refusal() {
    for status in [404, 409] {
        let world = world();
        let old = drifted(&world, 1);
        evictions_answer(&world, status, "gone", 1);
        let run = replace(&world, &old, &settings());
        assert_eq!(run.outcome(&old[0]).status, Status::Replaced, "{status}");
        let steps = run.steps(&old[0]);
        assert!(
            !steps
                .iter()
                .any(|s| matches!(s, NodeStep::EvictionRefused { .. })),
            "{status}: {steps:?}"
        );
        assert_eq!(evictions(&world), 2, "{status}");
        assert_eq!(run.outcome(&old[0]).evicted.len(), 1, "{status}");
    }
}

/// A VolumeAttachment of `pv` (none: an inline volume) on `node`.
fn attachment(world: &World, name: &str, node: &str, pv: Option<&str>) {
    let source = match pv {
        Some(pv) => json!({"persistentVolumeName": pv}),
        None => {
            json!({"inlineVolumeSpec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}})
        }
    };
    world.cluster.put(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": "ebs.csi.aws.com", "nodeName": node, "source": source},
    }));
}

/// Removes VolumeAttachment `name` once `at` has passed.
fn detach_at(world: &World, name: &str, at: Duration) {
    let (cluster, name) = (world.cluster.clone(), name.to_string());
    world.clock.on_tick(move |now| {
        if now >= at {
            cluster.remove("storage.k8s.io/v1", "VolumeAttachment", None, &name);
        }
    });
}

/// "should wait for volume attachments": the node is drained (recorded so) and its instance
/// terminates only once its VolumeAttachment is gone (at 200 s); another node's attachment is
/// not waited for. **Differed, fixed (s18)**: the instance terminated as soon as the pods were
/// gone, the CSI detach still in flight.
#[test]
fn the_instance_terminates_only_once_the_nodes_volume_attachments_are_gone() {
    let world = world();
    let old = drifted(&world, 1);
    let instance = instance_of(&old[0]);
    attachment(&world, "csi-aaa", &old[0], Some("pv-data"));
    attachment(&world, "csi-other", "some-other-node", Some("pv-other"));
    detach_at(&world, "csi-aaa", secs(200));
    let terminated_early: Rc<RefCell<bool>> = Rc::default();
    let (seen, cloud) = (terminated_early.clone(), world.cloud.clone());
    world.clock.on_tick(move |now| {
        let state = cloud
            .instances
            .borrow()
            .iter()
            .find(|i| i.id == instance)
            .map(|i| i.state.clone());
        if now < secs(200) && state.as_deref() != Some("running") {
            *seen.borrow_mut() = true;
        }
    });
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    assert!(!*terminated_early.borrow(), "terminated before the detach");
    let drained = run.when(&old[0], |s| matches!(s, NodeStep::Drained { .. }));
    let awaiting = run.when(&old[0], |s| {
        matches!(s, NodeStep::AwaitingDetachment { .. })
    });
    let deleted = run.when(&old[0], |s| matches!(s, NodeStep::Deleted { .. }));
    assert!(drained <= awaiting && awaiting < secs(200) && deleted >= secs(200));
    assert!(run.steps(&old[0]).contains(&NodeStep::AwaitingDetachment {
        attachments: vec!["csi-aaa".into()]
    }));
    assert_eq!(
        run.steps(&old[0])
            .iter()
            .filter(|s| matches!(s, NodeStep::AwaitingDetachment { .. }))
            .count(),
        1,
        "reported once"
    );
}

/// `old` replaced, its instance terminated without awaiting any attachment.
fn replaced_without_awaiting_detachment(world: &World, old: &[String]) -> Run {
    let run = replace(world, old, &settings());
    assert_eq!(
        run.outcome(&old[0]).status,
        Status::Replaced,
        "{:?}",
        run.outcome(&old[0]).detail
    );
    assert!(
        !run.steps(&old[0])
            .iter()
            .any(|s| matches!(s, NodeStep::AwaitingDetachment { .. })),
        "{:?}",
        run.steps(&old[0])
    );
    run
}

/// "should only wait for volume attachments associated with drainable pods": a pod tolerating
/// the disruption taint stays on the node (never evicted), so its volume's attachment stays to
/// the end and is not waited for; nor is an inline volume's. Terminated at once after the drain.
#[test]
fn the_attachments_of_pods_the_drain_leaves_and_of_inline_volumes_are_not_waited_for() {
    let world = world();
    let old = drifted(&world, 1);
    put_bound(&world.cluster, "agent", &old[0]);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "agent", |p| {
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("100m");
            p["spec"]["tolerations"] =
                json!([{"key": "karpenter.sh/disrupted", "operator": "Exists"}]);
            p["spec"]["volumes"] = json!([{"name": "state",
                "persistentVolumeClaim": {"claimName": "agent-state"}}]);
        });
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "agent-state", "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": "pv-agent", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"},
    }));
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-agent"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "claimRef": {"namespace": "default", "name": "agent-state"},
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-agent"}},
        "status": {"phase": "Bound"},
    }));
    attachment(&world, "csi-agent", &old[0], Some("pv-agent"));
    attachment(&world, "csi-inline", &old[0], None);
    let run = replaced_without_awaiting_detachment(&world, &old);
    let drained = run.when(&old[0], |s| matches!(s, NodeStep::Drained { .. }));
    let deleted = run.when(&old[0], |s| matches!(s, NodeStep::Deleted { .. }));
    assert!(deleted - drained <= secs(1), "{drained:?} → {deleted:?}");
}

/// A finished pod (a Job's, `Succeeded`) that tolerates every taint keeps a claim whose
/// attachment stays: Karpenter's `filterVolumeAttachments` leaves out the volumes of pods
/// `!IsDrainable` — tolerating the disruption taint — whatever their phase (`core v1.14.1:
/// node/termination/controller.go`, `pkg/utils/pod/scheduling.go IsDrainable`), so the instance
/// terminates at once. **Differed, fixed (s29)**: ours named the pod `Finished` first and so
/// waited for its attachment until `--timeout`.
#[test]
fn a_finished_pod_tolerating_the_disruption_taint_holds_its_volume_and_is_not_waited_for() {
    let world = world();
    let old = drifted(&world, 1);
    put_bound(&world.cluster, "setup", &old[0]);
    world
        .cluster
        .update("v1", "Pod", Some("default"), "setup", |p| {
            p["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
            p["spec"]["volumes"] = json!([{"name": "state",
                "persistentVolumeClaim": {"claimName": "setup-state"}}]);
            p["status"]["phase"] = json!("Succeeded");
        });
    world.cluster.put(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "setup-state", "namespace": "default"},
        "spec": {"volumeName": "pv-setup", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"},
    }));
    attachment(&world, "csi-setup", &old[0], Some("pv-setup"));
    replaced_without_awaiting_detachment(&world, &old);
}

/// "should wait for volume attachments until the nodeclaim's termination grace period
/// expires": a NodeClaim with `terminationGracePeriod: 3m` — its instance terminates 3 minutes
/// after the drain began though the attachment stays, with a warning naming it.
#[test]
fn the_wait_ends_when_the_nodeclaims_termination_grace_period_runs_out() {
    let world = world();
    let old = drifted(&world, 1);
    let instance = instance_of(&old[0]);
    world.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-abcde", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": [], "terminationGracePeriod": "3m"},
        "status": {"nodeName": old[0], "providerID": format!("aws:///us-east-1a/{instance}")},
    }));
    attachment(&world, "csi-stuck", &old[0], Some("pv-data"));
    let run = replace(&world, &old, &settings());
    assert_eq!(run.outcome(&old[0]).status, Status::Replaced);
    let drained = run.when(&old[0], |s| matches!(s, NodeStep::Drained { .. }));
    let deleted = run.when(&old[0], |s| matches!(s, NodeStep::Deleted { .. }));
    assert!(
        deleted >= drained + secs(170) && deleted <= drained + secs(182),
        "{drained:?} → {deleted:?}"
    );
    assert!(run.events.iter().any(|(_, e)| matches!(e,
        Event::Warning(w) if w.contains("terminationGracePeriod") && w.contains("csi-stuck"))));
}

/// Karpenter without a grace period waits for ever; this tool until `--timeout`: then the node
/// stays drained and cordoned, its instance running, and a re-run resumes the wait (and
/// finishes once the attachment is gone).
#[test]
fn an_attachment_still_there_after_the_timeout_stops_the_node_and_a_rerun_resumes_the_wait() {
    let world = world();
    let old = drifted(&world, 1);
    let instance = instance_of(&old[0]);
    attachment(&world, "csi-stuck", &old[0], Some("pv-data"));
    let short = Settings {
        drain_timeout: secs(120),
        ..settings()
    };
    let run = replace(&world, &old, &short);
    let o = run.outcome(&old[0]);
    assert_eq!(o.status, Status::Failed);
    assert_eq!(
        o.detail,
        Detail::VolumesStillAttached {
            node: old[0].clone(),
            after: secs(120),
            attachments: vec!["csi-stuck".into()],
        }
    );
    assert_eq!(instance_state(&world, &instance), "running");
    assert!(cordoned(&world.cluster, &old[0]));
    assert_eq!(record_of(&world, &old[0]).unwrap().step, Step::Drained);
    let at = world.clock.monotonic() + secs(30);
    detach_at(&world, "csi-stuck", at);
    let again = replace(&world, &old, &short);
    assert_eq!(again.outcome(&old[0]).status, Status::Replaced);
    assert_eq!(
        again.steps(&old[0])[0],
        NodeStep::Resuming(Resume::Finishing)
    );
    assert!(again.when(&old[0], |s| matches!(s, NodeStep::Deleted { .. })) >= at);
    assert_eq!(instance_state(&world, &instance), "shutting-down");
}

/// Without `list volumeattachments.storage.k8s.io` (optional, docs/security.md) the run says
/// once that detachment is not awaited and terminates as before.
#[test]
fn without_permission_to_list_volume_attachments_the_detach_is_not_awaited() {
    let world = world();
    let old = drifted(&world, 2);
    attachment(&world, "csi-aaa", &old[0], Some("pv-data"));
    world.cluster.fail_with(
        Http::Get,
        "/apis/storage.k8s.io/v1/volumeattachments",
        100,
        403,
        "volumeattachments.storage.k8s.io is forbidden",
    );
    let run = replace(&world, &old, &settings());
    for node in &old {
        assert_eq!(run.outcome(node).status, Status::Replaced);
    }
    let warnings: Vec<&String> = run
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Warning(w) if w.contains("volumeattachments") => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}
