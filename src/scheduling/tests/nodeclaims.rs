//! What a planned NodeClaim asks for, as upstream's "NodeClaim Creation" context checks it
//! (`core v1.14.1: pkg/controllers/provisioning/suite_test.go`), against the fake provider's
//! instance types: its requirements (every type the pod fits, the pool's name, the pool's own
//! requirements) and its resource requests (the pods', the DaemonSets' overhead once, `pods`).

use super::constraints::default_types;
use super::*;
use crate::model::resources::Resources;

fn plan_one(inp: &Input) -> PlannedNodeClaim {
    let plan = solve(inp);
    assert_eq!(plan.node_claims.len(), 1, "one CreateCall: {plan:?}");
    assert!(plan.unschedulable.is_empty());
    plan.node_claims.into_iter().next().unwrap()
}

fn values(claim: &PlannedNodeClaim, key: &str) -> Vec<String> {
    if key == crate::model::labels::INSTANCE_TYPE {
        // Kept apart from the other requirements, shared between NodeClaims.
        return claim
            .instance_type_requirement
            .names
            .iter()
            .map(|n| n.to_string())
            .collect();
    }
    claim
        .requirements
        .get(key)
        .values()
        .iter()
        .cloned()
        .collect()
}

/// "should create a nodeclaim request with expected requirements" and "… with additional
/// expected requirements": `node.kubernetes.io/instance-type In` every fake type (a pod without
/// requests fits them all), `karpenter.sh/nodepool In [pool]`, and the pool's custom keys.
#[test]
fn a_nodeclaim_carries_its_types_its_pool_and_the_pools_requirements() {
    let every: Vec<String> = {
        let mut v: Vec<String> = default_types().into_iter().map(|t| t.name).collect();
        v.sort();
        v
    };
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(node_pool("default"), default_types())],
    ));
    assert_eq!(values(&claim, crate::model::labels::INSTANCE_TYPE), every);
    assert_eq!(values(&claim, crate::model::labels::NODEPOOL), ["default"]);

    let mut pool = node_pool("default");
    for key in ["custom-requirement-key", "custom-requirement-key2"] {
        pool.requirements
            .push(crate::model::requirements::NodeSelectorRequirement::new(
                key,
                In,
                &["value"],
            ));
    }
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, default_types())],
    ));
    assert_eq!(values(&claim, crate::model::labels::INSTANCE_TYPE), every);
    assert_eq!(values(&claim, crate::model::labels::NODEPOOL), ["default"]);
    for key in ["custom-requirement-key", "custom-requirement-key2"] {
        assert_eq!(values(&claim, key), ["value"], "{key}");
    }
}

/// "should create a nodeclaim with resource requests" (cpu, memory, the GPU and `pods: 1`),
/// "… with daemon overhead" (a DaemonSet of 1 CPU / 1Mi: 2 CPU, 2Mi, 2 pods) and "should not
/// double-count daemon overhead when multiple pods are scheduled to the same nodeclaim" (two
/// pods and the DaemonSet: 3, 3Mi, 3 pods, not 4).
#[test]
fn a_nodeclaim_requests_its_pods_and_the_daemon_overhead_once() {
    let claim = plan_one(&input(
        vec![PodBuilder::new("p")
            .cpu("1")
            .memory("1Mi")
            .request("fake.com/vendor-a", "1")
            .build()],
        vec![pool_input(node_pool("default"), default_types())],
    ));
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[
            ("cpu", "1"),
            ("memory", "1Mi"),
            ("fake.com/vendor-a", "1"),
            ("pods", "1")
        ])
    );

    let small = |name: &str| PodBuilder::new(name).cpu("1").memory("1Mi");
    let mut inp = input(
        vec![small("p").build()],
        vec![pool_input(node_pool("default"), default_types())],
    );
    inp.daemonsets.push(small("ds").daemonset("logs").build());
    let claim = plan_one(&inp);
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[("cpu", "2"), ("memory", "2Mi"), ("pods", "2")])
    );

    inp.pods = vec![small("p1").build(), small("p2").build()];
    let claim = plan_one(&inp);
    assert_eq!(
        claim.requests,
        Resources::from_pairs(&[("cpu", "3"), ("memory", "3Mi"), ("pods", "3")])
    );
}

/// "Labels › should label nodes": the template's labels, the pool's name, and a value for every
/// custom requirement key the NodeClaim allows (`nodeclaimtemplate.go`
/// `resolveCustomLabelsFromRequirements`, `Requirement.Any`): In takes its value, NotIn / Lt /
/// Gt / Exists some other admitted value, DoesNotExist none.
#[test]
fn custom_requirements_label_the_node_with_an_admitted_value() {
    let mut pool = node_pool("default");
    pool.labels
        .insert("test-key-1".into(), "test-value-1".into());
    let pool = with_requirement(pool, "test-key-2", In, &["test-value-2"]);
    let pool = with_requirement(pool, "test-key-3", NotIn, &["test-value-3"]);
    let pool = with_requirement(pool, "test-key-4", Lt, &["4"]);
    let pool = with_requirement(pool, "test-key-5", Gt, &["5"]);
    let pool = with_requirement(pool, "test-key-6", Exists, &[]);
    let pool = with_requirement(pool, "test-key-7", DoesNotExist, &[]);
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, default_types())],
    ));
    let l = &claim.labels;
    assert_eq!(l["karpenter.sh/nodepool"], "default");
    assert_eq!(l["test-key-1"], "test-value-1");
    assert_eq!(l["test-key-2"], "test-value-2");
    assert_ne!(l["test-key-3"], "test-value-3");
    assert!(l["test-key-4"].parse::<i64>().unwrap() < 4);
    assert!(l["test-key-5"].parse::<i64>().unwrap() > 5);
    assert!(l.contains_key("test-key-6"));
    assert!(!l.contains_key("test-key-7"));
}

/// "Labels › should label nodes with labels in the kubernetes domains" and "… in the subdomain
/// from kubernetes domains": a template label in those domains labels the node and a pod
/// requiring it schedules. (Pool requirements on such keys: `constraints::constraints_validation`.)
#[test]
fn template_labels_in_kubernetes_domains_label_the_node() {
    for key in [
        "kubernetes.io/test",
        "k8s.io/test",
        "subdomain.kubernetes.io/test",
        "subdomain.k8s.io/test",
    ] {
        let mut pool = node_pool("default");
        pool.labels.insert(key.into(), "test-value".into());
        let pod = PodBuilder::new("p")
            .required_term(&[(key, In, &["test-value"])])
            .build();
        let claim = plan_one(&input(vec![pod], vec![pool_input(pool, default_types())]));
        assert_eq!(claim.labels[key], "test-value", "{key}");
    }
}

/// "Labels › should not label nodes with well-known labels from requirements": `foo In [bar]`
/// labels the node, `node.kubernetes.io/windows-build NotIn [test-value]` does not.
#[test]
fn well_known_requirements_do_not_label_the_node() {
    let pool = with_requirement(node_pool("default"), "foo", In, &["bar"]);
    let pool = with_requirement(
        pool,
        crate::model::labels::WINDOWS_BUILD,
        NotIn,
        &["test-value"],
    );
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, default_types())],
    ));
    assert_eq!(claim.labels["foo"], "bar");
    assert_ne!(
        claim
            .labels
            .get(crate::model::labels::WINDOWS_BUILD)
            .map(String::as_str),
        Some("test-value")
    );
}

/// "Taints › should schedule pods that tolerate taints": against `nvidia.com/gpu=true:NoSchedule`,
/// `Equal` with the value and effect, `Exists` with the effect, `Exists` on the key for every
/// effect, and `Exists` without a key all tolerate.
#[test]
fn every_form_of_toleration_is_honoured() {
    use crate::model::taints::Toleration;
    let mut pool = node_pool("default");
    pool.taints
        .push(taint("nvidia.com/gpu", "true", Effect::NoSchedule));
    let exists = |key: &str, effect: Option<Effect>| Toleration::exists(key, effect);
    let tolerations = [
        Toleration::equal("nvidia.com/gpu", "true", Some(Effect::NoSchedule)),
        exists("nvidia.com/gpu", Some(Effect::NoSchedule)),
        exists("nvidia.com/gpu", None),
        exists("", None),
    ];
    let pods: Vec<crate::model::pod::Pod> = tolerations
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let mut pod = PodBuilder::new(&format!("p{i}")).build();
            pod.tolerations.push(t);
            pod
        })
        .collect();
    let plan = solve(&input(pods, vec![pool_input(pool, default_types())]));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    assert_eq!(
        plan.node_claims.iter().map(|c| c.pods.len()).sum::<usize>(),
        4
    );
}

/// "Annotations › should annotate nodes" (`core v1.14.1: pkg/controllers/provisioning/
/// suite_test.go`): the template's annotations are the NodeClaim's (`nodeclaimtemplate.go`,
/// `NodePool.Spec.Template.ToNodeClaim`), which registration copies onto the Node
/// (`nodeclaim/lifecycle/registration.go` `syncNode`).
#[test]
fn template_annotations_annotate_the_nodeclaim() {
    let mut pool = node_pool("default");
    pool.template_annotations
        .insert(crate::model::labels::DO_NOT_DISRUPT.into(), "true".into());
    let claim = plan_one(&input(
        vec![PodBuilder::new("p").build()],
        vec![pool_input(pool, default_types())],
    ));
    assert_eq!(
        claim.annotations.get(crate::model::labels::DO_NOT_DISRUPT),
        Some(&"true".to_string())
    );
}
