//! The provisioner, the scheduler's loop and its preferences read line by line against core
//! v1.14.1 `pkg/controllers/provisioning/` (docs/upstream-tests.md "Provisioner, scheduler loop
//! and preferences, line by line (s28-lineprov)"), replayed through the binary. Fixtures in
//! `tests/fixtures/provisioner-line-by-line/` (our own manifests, the embedded catalog in
//! us-east-1; the pool offers us-east-1a and us-east-1b, and no `team` label).

use serde_json::Value;

use crate::support::{claim_zones as claims, names, plan_fixture};

/// (node, pods) of each existing node that takes pods.
fn existing(plan: &Value) -> Vec<(String, Vec<String>)> {
    (plan["existingNodes"].as_array().unwrap().iter())
        .map(|n| (n["name"].as_str().unwrap().to_string(), names(&n["pods"])))
        .filter(|(_, pods)| !pods.is_empty())
        .collect()
}

/// (pod, reasonCode) of each unschedulable pod.
fn refused(plan: &Value) -> Vec<(String, String)> {
    (plan["unschedulable"].as_array().unwrap().iter())
        .map(|u| {
            let code = u["reasonCode"].as_str().unwrap();
            (u["pod"].as_str().unwrap().to_string(), code.to_string())
        })
        .collect()
}

/// No upstream test; `provisioner.go` `Validate`: `validateKarpenterManagedLabelCanExist` reads
/// the requirements the scheduler starts from (`NewPodRequirements`: the heaviest preference
/// and the first required term), `validateAffinity` every required term with
/// `ValidateRequirement` (restricted domains, aws's `karpenter.k8s.aws` included;
/// `validateWellKnownValues`). `preferred-opt-out` (a heaviest preference for no nodepool) is
/// ignored: main launched a node for it. `second-term-opt-out` is planned by its first term in
/// us-east-1b: main refused it. `no-known-capacity-type` (`on_demand`) and `aws-domain-label`
/// are ignored as invalid / restricted: main called both "incompatible requirements".
#[test]
fn pending_pods_are_validated_as_the_provisioner_does() {
    let doc = plan_fixture("provisioner-line-by-line/validation.yaml");
    assert_eq!(
        claims(&doc),
        [(
            "us-east-1b".into(),
            vec!["default/second-term-opt-out".into()]
        )]
    );
    assert_eq!(
        refused(&doc),
        [
            ("default/aws-domain-label".into(), "RestrictedLabel".into()),
            (
                "default/no-known-capacity-type".into(),
                "InvalidRequirement".into()
            ),
            (
                "default/preferred-opt-out".into(),
                "OptsOutOfKarpenter".into()
            ),
        ]
    );
}

/// No upstream test; `scheduler.go` `NewScheduler`: only the NodePools' taints make the
/// PreferNoSchedule toleration a relaxation step. `picky` selects `team: a`, which only node
/// `soft` has, and `soft` has a PreferNoSchedule taint no pool has: the pod stays pending. Main
/// placed it on `soft`.
#[test]
fn an_existing_nodes_prefer_no_schedule_taint_alone_is_never_tolerated() {
    let doc = plan_fixture("provisioner-line-by-line/prefer-no-schedule-node.yaml");
    assert_eq!(existing(&doc), []);
    assert_eq!(
        refused(&doc),
        [("default/picky".into(), "IncompatibleRequirements".into())]
    );
}

/// No upstream test; `preferences.go` `removeTopologySpreadScheduleAnyway` moves the last
/// constraint into the removed one's place: after the `rack` spread (over `app: x`) is dropped,
/// the zone spread (over `app: y`, last) goes before the hostname spread of `web`, which is kept.
/// Neither `rack` nor zone can be met (`n3`, tainted, brings empty domains; `n1` and `n2` run
/// two `x` and two `y` pods each): one `web` pod goes to `n1`, the other to `n2`. Main dropped
/// the hostname spread second and put both on `n1`.
#[test]
fn schedule_anyway_spreads_are_dropped_in_gos_order() {
    let doc = plan_fixture("provisioner-line-by-line/spread-order.yaml");
    let placed = existing(&doc);
    let per_node: Vec<(&str, usize)> = (placed.iter())
        .map(|(n, pods)| (n.as_str(), pods.len()))
        .collect();
    assert_eq!(per_node, [("n1", 1), ("n2", 1)], "{placed:?}");
    assert_eq!(claims(&doc), []);
    assert_eq!(refused(&doc), []);
}

/// No upstream test; `pkg/utils/pod/scheduling.go` `IsOwnedBy` compares the owner's
/// `apiVersion` and kind: `kruise-agent-x1`, a pending pod of OpenKruise's Advanced DaemonSet
/// (`apps.kruise.io/v1alpha1`), is provisionable and gets a NodeClaim; `logs-x1` (an `apps/v1`
/// DaemonSet's) is set aside. The owner predicates came to main with s28-linecand; this is the
/// provisioning side, through the binary (before them, both pods were set aside).
#[test]
fn a_daemonset_of_another_api_group_is_provisioned_for() {
    let doc = plan_fixture("provisioner-line-by-line/other-group-daemonset.yaml");
    let pods: Vec<String> = claims(&doc).into_iter().flat_map(|(_, p)| p).collect();
    assert_eq!(pods, ["default/kruise-agent-x1"]);
    assert_eq!(refused(&doc), []);
}

/// No upstream test; `provisioner.go validateAffinity` → `ValidateRequirement`: `Gt [-1]` is no
/// label value and no non-negative integer, so the pending pod is ignored, while the API server
/// (which checks only the key, the operator and one value) takes it. `fine` is planned. Main
/// refused the whole input (exit 2, "invalid label value").
#[test]
fn a_pod_whose_required_term_karpenter_refuses_is_ignored_not_the_input() {
    let doc = plan_fixture("provisioner-line-by-line/invalid-term.yaml");
    assert_eq!(
        claims(&doc),
        [("us-east-1a".into(), vec!["default/fine".into()])]
    );
    assert_eq!(
        refused(&doc),
        [("default/negative-gt".into(), "InvalidRequirement".into())]
    );
}
