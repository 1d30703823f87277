//! Requirements and labels read line by line against core v1.14.1 `pkg/scheduling/`,
//! `pkg/apis/v1/labels.go` and aws v1.14.1 `pkg/apis/v1/labels.go` (docs/upstream-tests.md
//! "Requirements, labels and taints, line by line (s31-linereq)").

use super::*;
use crate::model::labels::EC2NODECLASS;

fn refusal(plan: &Plan, pod: &str) -> Option<ReasonCode> {
    (plan.unschedulable.iter())
        .find(|u| u.pod == format!("default/{pod}"))
        .map(|u| u.reason.code())
}

/// No upstream test; aws v1.14.1 `pkg/apis/v1/labels.go` `init` (the node class label is not
/// added to `WellKnownLabels`, its domain is restricted) and core `provisioner.go
/// validateNodeSelector` / `validateAffinity` → `ValidateRequirement` → `IsRestrictedLabel`: a
/// pod selecting `karpenter.k8s.aws/ec2nodeclass` is ignored, by a node selector or a required
/// term, even where an existing node carries the label. Before s31-linereq we counted it well
/// known: the pod got a NodeClaim of the pool whose class it named.
#[test]
fn a_pod_selecting_the_node_class_label_is_refused_as_restricted() {
    let mut inp = input(
        vec![
            PodBuilder::new("selector")
                .cpu("1")
                .node_selector(EC2NODECLASS, "default")
                .build(),
            PodBuilder::new("term")
                .cpu("1")
                .required_term(&[(EC2NODECLASS, In, &["default"])])
                .build(),
            PodBuilder::new("free").cpu("1").build(),
        ],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    let mut node = roomy_node("labelled");
    node.labels.insert(EC2NODECLASS.into(), "default".into());
    inp.existing_nodes = vec![ExistingNode { node, pods: vec![] }];
    let plan = solve(&inp);
    assert_eq!(
        refusal(&plan, "selector"),
        Some(ReasonCode::RestrictedLabel)
    );
    assert_eq!(refusal(&plan, "term"), Some(ReasonCode::RestrictedLabel));
    assert_eq!(refusal(&plan, "free"), None, "{plan:#?}");
    let placed: Vec<&str> = (plan.existing_nodes.iter())
        .flat_map(|e| e.pods.iter().map(String::as_str))
        .collect();
    assert_eq!(placed, ["default/free"], "{plan:#?}");
}
