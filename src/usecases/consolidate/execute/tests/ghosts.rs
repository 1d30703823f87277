//! docs/reliability.md, the ghost node, for `consolidate`: a node whose EC2 instance is gone
//! (shutting down, terminated, or no longer described) is no place for a candidate's pods and
//! no candidate itself (`model::node::gone_nodes`; core v1.14.1:
//! `pkg/controllers/nodeclaim/garbagecollection/controller.go` deletes such a NodeClaim, and a
//! deleting node is not among `SimulateScheduling`'s `Active()` nodes, `disruption/helpers.go`).

use super::*;
use crate::cloud::types::CloudError;
use crate::model::node::{GoneInstance, InstanceGone};
use crate::usecases::testing::node_name;

/// The instance of `node`.
fn instance(world: &World, node: &str) -> String {
    world
        .cloud
        .instances
        .borrow()
        .iter()
        .find(|i| node_name(&i.id) == node)
        .map(|i| i.id.clone())
        .unwrap()
}

/// Sets the state of `node`'s instance (`None`: EC2 no longer describes it).
fn instance_goes(world: &World, node: &str, state: Option<&str>) {
    let id = instance(world, node);
    let mut instances = world.cloud.instances.borrow_mut();
    match state {
        Some(state) => {
            for i in instances.iter_mut().filter(|i| i.id == id) {
                i.state = state.into();
            }
        }
        None => instances.retain(|i| i.id != id),
    }
}

/// The method the first round would carry out on `node`, if any.
fn decided_for(world: &World, node: &str) -> Option<Method> {
    let round = decide(&world.live(), &Deciding::default()).unwrap();
    round
        .actions
        .iter()
        .find(|a| a.node.name == node)
        .map(|a| a.method)
}

/// A candidate whose pod fits only on a ghost — a Node this tool launched (no NodeClaim),
/// registered again by the kubelet of its terminated instance — is not deleted: without the
/// rule the pod "moves" onto the ghost and the node is deleted (the pod then pending); with it
/// the engine replaces the node by a cheaper one, its pipeline re-plan launching it.
#[test]
fn a_ghost_is_no_capacity_a_candidate_whose_pods_only_fit_there_is_not_deleted() {
    let world = world(1, json!([{"nodes": "100%"}]));
    let under_used = managed(&world, "c6a.xlarge", &["p0"]);
    let ghost = world.registered_node("default", "c6a.xlarge");
    // The ghost's instance running: the pod fits there and the node goes — what the rule stops.
    assert_eq!(
        decided_for(&world, &under_used),
        Some(Method::ConsolidationDelete)
    );

    instance_goes(&world, &ghost, Some("terminated"));
    let before = calls(&world, "EC2.DescribeInstances");
    let round = decide(&world.live(), &Deciding::default()).unwrap();
    // One DescribeInstances per round decided (the managed nodes' instances, by id).
    assert_eq!(calls(&world, "EC2.DescribeInstances"), before + 1);
    assert_eq!(
        round.gone[&ghost],
        GoneInstance {
            instance: instance(&world, &ghost),
            state: InstanceGone::Terminated,
            claimed: false,
        }
    );
    assert_eq!(
        round.settings(&settings()).gone_instances,
        [instance(&world, &ghost)].into(),
        "no capacity for the pipeline's re-plans either"
    );
    assert_eq!(
        decided_for(&world, &under_used),
        Some(Method::ConsolidationReplace)
    );
    let preview = pipeline::preview(
        &world.live(),
        &round.manifests,
        round.actions.clone(),
        &round.settings(&settings()),
    )
    .unwrap();
    assert_eq!(
        preview.outcomes()[0].replacements.len(),
        1,
        "the replacement is launched: {:?}",
        preview.outcomes()
    );
}

/// A node with a NodeClaim whose instance is terminated, or no longer described, is not a
/// candidate — the empty node is not "deleted by emptiness" — and its row says why, typed.
#[test]
fn a_ghost_is_not_a_candidate_and_its_row_names_the_instance() {
    for (state, gone, text) in [
        (
            Some("terminated"),
            InstanceGone::Terminated,
            "is terminated; Karpenter's garbage collection removes this node",
        ),
        (
            None,
            InstanceGone::NotFound,
            "no longer exists; Karpenter's garbage collection removes this node",
        ),
        (
            Some("shutting-down"),
            InstanceGone::ShuttingDown,
            "is shutting down; this node goes with it",
        ),
    ] {
        let world = world(0, json!([{"nodes": "100%"}]));
        let empty = managed(&world, "c6a.large", &[]);
        assert_eq!(decided_for(&world, &empty), Some(Method::EmptyDelete));
        let id = instance(&world, &empty);
        instance_goes(&world, &empty, state);
        assert_eq!(decided_for(&world, &empty), None, "{state:?}");
        let reason = why_not(&world, &empty);
        assert_eq!(
            reason,
            Reason::InstanceGone(GoneInstance {
                instance: id.clone(),
                state: gone,
                claimed: true,
            })
        );
        assert_eq!(reason.kind(), "instance-gone");
        assert_eq!(reason.to_string(), format!("instance {id} {text}"));
        // `--yes`: nothing done, nothing launched.
        let run = run(&world);
        assert!(run.outcomes.is_empty(), "{:?}", run.outcomes);
        assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
    }
}

/// Without `ec2:DescribeInstances` a live decision fails (exit 3) naming the action, with the
/// permission hint: deciding blind to ghosts could delete a node whose pods have nowhere to go.
#[test]
fn without_describe_instances_the_decision_fails_naming_the_action() {
    let world = world(0, json!([{"nodes": "100%"}]));
    managed(&world, "c6a.large", &[]);
    world.cloud.fail(
        "EC2.DescribeInstances",
        CloudError::Api {
            service: "EC2".into(),
            operation: "DescribeInstances".into(),
            code: "UnauthorizedOperation".into(),
            message: "You are not authorized to perform: ec2:DescribeInstances".into(),
        },
    );
    let err = decide(&world.live(), &Deciding::default()).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(err.to_string().contains("DescribeInstances"), "{err}");
    assert!(err.hint.unwrap().contains("deploy/iam-policy.json"));
    assert_eq!(calls(&world, "EC2.CreateFleet"), 0);
}
