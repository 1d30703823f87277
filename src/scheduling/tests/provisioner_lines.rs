//! The provisioner and the scheduler's loop read line by line against core v1.14.1
//! `pkg/controllers/provisioning/` (`provisioner.go` `Validate`, `scheduling/scheduler.go`
//! `NewScheduler`, `scheduling/preferences.go`): each test is a scenario where we differed
//! (docs/upstream-tests.md, "Provisioner, scheduler loop and preferences, line by line
//! (s28-lineprov)").

use super::*;
use crate::model::labels::NODEPOOL;

const Z1: &str = "test-zone-1";

fn one_pool(pods: Vec<crate::model::pod::Pod>) -> Input {
    input(
        pods,
        vec![pool_input(node_pool("default"), small_catalog())],
    )
}

fn refusal(plan: &Plan, pod: &str) -> Option<ReasonCode> {
    (plan.unschedulable.iter())
        .find(|u| u.pod == format!("default/{pod}"))
        .map(|u| u.reason.code())
}

/// No upstream test; rule from `provisioner.go` `validateKarpenterManagedLabelCanExist`, which
/// reads `scheduling.NewPodRequirements` (the node selector, the heaviest preferred term and the
/// first required term): a heaviest preference for `karpenter.sh/nodepool DoesNotExist` gets
/// the pod ignored ("configured to not run on a Karpenter provisioned node"). We only read the
/// required terms, relaxed the preference and launched a node.
#[test]
fn a_heaviest_preference_for_no_nodepool_opts_the_pod_out() {
    let plan = solve(&one_pool(vec![PodBuilder::new("p")
        .cpu("1")
        .preferred_term(1, &[(ZONE, In, &[Z1])])
        .preferred_term(10, &[(NODEPOOL, DoesNotExist, &[])])
        .build()]));
    assert!(plan.node_claims.is_empty(), "{plan:#?}");
    assert_eq!(refusal(&plan, "p"), Some(ReasonCode::OptsOutOfKarpenter));
    // The reason says a preference did it, and which (thread kubernetes-sigs/karpenter#1334:
    // "soft node affinity ... DoesNotExist ... getting ignored").
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist in its heaviest \
         preferred node affinity term, weight 10: Karpenter reads that preference as required \
         and ignores the pod)"
    );
    // A required opt-out says no more than before.
    let plan = solve(&one_pool(vec![PodBuilder::new("p")
        .cpu("1")
        .preferred_term(10, &[(NODEPOOL, DoesNotExist, &[])])
        .required_term(&[(NODEPOOL, DoesNotExist, &[])])
        .build()]));
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist)"
    );
    // A lighter such preference is not read: the pod is planned (the preference relaxed).
    let plan = solve(&one_pool(vec![PodBuilder::new("p")
        .cpu("1")
        .preferred_term(10, &[(ZONE, In, &[Z1])])
        .preferred_term(1, &[(NODEPOOL, DoesNotExist, &[])])
        .build()]));
    assert_eq!(plan.node_claims.len(), 1, "{plan:#?}");
}

/// As above, for a pod of a node being deleted (or of a consolidation candidate): `Schedule`
/// adds those pods after `GetPendingPods` validated the pending ones, so they are not
/// validated: the heaviest preference for no nodepool is relaxed and the pod gets a NodeClaim.
/// (Before this session's fix neither was refused; with the fix alone, both were.)
#[test]
fn a_deleting_nodes_pod_is_not_validated() {
    let pod = |name: &str| {
        PodBuilder::new(name)
            .cpu("1")
            .preferred_term(10, &[(NODEPOOL, DoesNotExist, &[])])
    };
    let plan = solve(&one_pool(vec![
        pod("moving").on_node("gone").build(),
        pod("pending").build(),
    ]));
    assert_eq!(plan.node_claims.len(), 1, "{plan:#?}");
    assert_eq!(plan.node_claims[0].pods, ["default/moving"]);
    assert_eq!(
        refusal(&plan, "pending"),
        Some(ReasonCode::OptsOutOfKarpenter)
    );
}

/// As above: only the first required term is read for opting out; `validateAffinity` checks
/// every term with `ValidateRequirement`, which allows the well-known `karpenter.sh/nodepool`.
/// A pod whose second OR term is `karpenter.sh/nodepool DoesNotExist` is planned by its first
/// term. We refused it.
#[test]
fn a_later_required_term_for_no_nodepool_does_not_opt_out() {
    let plan = solve(&one_pool(vec![PodBuilder::new("p")
        .cpu("1")
        .required_term(&[(ZONE, In, &[Z1])])
        .required_term(&[(NODEPOOL, DoesNotExist, &[])])
        .build()]));
    assert!(plan.unschedulable.is_empty(), "{plan:#?}");
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].zones, [Z1]);
}

/// As above: the node selector `karpenter.sh/nodepool: default` and a first required term
/// `karpenter.sh/nodepool NotIn [default]` intersect to `DoesNotExist`: opted out. We said
/// "incompatible requirements".
#[test]
fn a_selector_and_a_term_leaving_no_nodepool_opt_out() {
    let plan = solve(&one_pool(vec![PodBuilder::new("p")
        .cpu("1")
        .node_selector(NODEPOOL, "default")
        .required_term(&[(NODEPOOL, NotIn, &["default"])])
        .build()]));
    assert_eq!(refusal(&plan, "p"), Some(ReasonCode::OptsOutOfKarpenter));
}

/// No upstream test; rule from `provisioner.go` `validateNodeSelectorTerm` →
/// `nodeclaim_validation.go` `ValidateRequirement` → `validateWellKnownValues`: a pod whose node
/// selector or required term asks `karpenter.sh/capacity-type In` only values Karpenter does not
/// know (`on_demand`) is ignored with "no valid values found"; one known value is enough.
#[test]
fn a_pod_naming_no_known_capacity_type_is_refused_as_invalid() {
    let plan = solve(&one_pool(vec![
        PodBuilder::new("selector")
            .cpu("1")
            .node_selector(CAPACITY_TYPE, "on_demand")
            .build(),
        PodBuilder::new("term")
            .cpu("1")
            .required_term(&[(CAPACITY_TYPE, In, &["on_demand", "Spot"])])
            .build(),
        PodBuilder::new("one-known")
            .cpu("1")
            .required_term(&[(CAPACITY_TYPE, In, &["on_demand", "on-demand"])])
            .build(),
    ]));
    assert_eq!(
        refusal(&plan, "selector"),
        Some(ReasonCode::InvalidRequirement)
    );
    assert_eq!(refusal(&plan, "term"), Some(ReasonCode::InvalidRequirement));
    let msg = (plan.unschedulable.iter())
        .find(|u| u.pod == "default/selector")
        .map(|u| u.reason.to_string());
    assert_eq!(
        msg.as_deref(),
        Some("no valid values found in [on_demand] for karpenter.sh/capacity-type, expected one of: on-demand, spot, reserved")
    );
    assert_eq!(refusal(&plan, "one-known"), None, "{plan:#?}");
}

/// Session 28 (lead), the "left" row of s28-lineprov: a required term the API server takes but
/// `ValidateRequirement` refuses (`Gt [-1]`, loaded as `PodRefusal::InvalidRequirement`) makes
/// `validateAffinity` ignore the pending pod; the rest of the input is planned (we refused the
/// whole input, exit 2).
#[test]
fn a_pending_pod_with_a_term_karpenter_refuses_is_ignored_as_invalid() {
    let mut bad = PodBuilder::new("negative").cpu("1").build();
    bad.refusal = Some(Box::new(crate::model::pod::PodRefusal::InvalidRequirement(
        "key example.com/gen with operator Gt must have a single positive integer value, got \"-1\"".into(),
    )));
    let plan = solve(&one_pool(vec![
        bad,
        PodBuilder::new("fine").cpu("1").build(),
    ]));
    assert_eq!(
        refusal(&plan, "negative"),
        Some(ReasonCode::InvalidRequirement)
    );
    assert_eq!(refusal(&plan, "fine"), None, "{plan:#?}");
}

/// No upstream test; rule from `labels.go` `IsRestrictedLabel` with aws v1.14.1
/// `pkg/apis/v1/labels.go` (`RestrictedLabelDomains` gains `karpenter.k8s.aws`): a pod
/// requiring a label of that domain (or of a `karpenter.sh` subdomain) that is not well known is
/// ignored as restricted. We only refused `karpenter.sh/…` keys and called the others
/// "incompatible requirements" — and an existing node carrying the label took the pod.
#[test]
fn a_pod_requiring_a_reserved_domains_label_is_refused() {
    let mut inp = one_pool(vec![
        PodBuilder::new("aws")
            .cpu("1")
            .node_selector("karpenter.k8s.aws/team", "a")
            .build(),
        PodBuilder::new("sub")
            .cpu("1")
            .required_term(&[("x.karpenter.sh/team", In, &["a"])])
            .build(),
        PodBuilder::new("known")
            .cpu("1")
            .node_selector("karpenter.k8s.aws/instance-family", "c5")
            .build(),
    ]);
    let mut node = roomy_node("labelled");
    node.labels
        .insert("karpenter.k8s.aws/team".into(), "a".into());
    inp.existing_nodes = vec![ExistingNode { node, pods: vec![] }];
    let plan = solve(&inp);
    assert_eq!(refusal(&plan, "aws"), Some(ReasonCode::RestrictedLabel));
    assert_eq!(refusal(&plan, "sub"), Some(ReasonCode::RestrictedLabel));
    assert_eq!(refusal(&plan, "known"), None, "{plan:#?}");
    assert!(
        plan.existing_nodes.iter().all(|e| e.pods.is_empty()),
        "{plan:#?}"
    );
}

/// Node `soft` has the label the pod selects and a PreferNoSchedule taint; no pool has such a
/// taint and none offers the label.
fn prefer_no_schedule_node(pool_taint: bool) -> Input {
    let mut pool = node_pool("default");
    if pool_taint {
        pool.taints
            .push(taint("soft", "x", Effect::PreferNoSchedule));
    }
    let mut inp = input(
        vec![PodBuilder::new("p")
            .cpu("1")
            .node_selector("team", "a")
            .build()],
        vec![pool_input(pool, small_catalog())],
    );
    let mut node = roomy_node("soft");
    node.labels.insert("team".into(), "a".into());
    node.taints
        .push(taint("soft", "x", Effect::PreferNoSchedule));
    inp.existing_nodes = vec![ExistingNode { node, pods: vec![] }];
    inp
}

/// No upstream test; rule from `scheduler.go` `NewScheduler`: `toleratePreferNoSchedule` is set
/// from the NodePools' template taints only, so a PreferNoSchedule taint on an existing node is
/// never relaxed (`Taints.Tolerates` treats every effect alike): the pod stays pending. We
/// counted existing nodes' taints too and placed the pod on `soft`. With the taint on the pool,
/// the toleration is a relaxation step and `soft` takes the pod (both before and now).
#[test]
fn an_existing_nodes_prefer_no_schedule_taint_alone_is_never_tolerated() {
    let plan = solve(&prefer_no_schedule_node(false));
    assert!(
        plan.existing_nodes.iter().all(|e| e.pods.is_empty()),
        "{plan:#?}"
    );
    assert_eq!(plan.unschedulable.len(), 1);
    let plan = solve(&prefer_no_schedule_node(true));
    assert_eq!(plan.existing_nodes.len(), 1, "{plan:#?}");
    assert_eq!(plan.existing_nodes[0].pods, ["default/p"]);
}

/// As above, a not-Ready pool's PreferNoSchedule taint does not count: the pool is not given to
/// the scheduler (`provisioner.go NewScheduler`).
#[test]
fn a_not_ready_pools_prefer_no_schedule_taint_does_not_count() {
    let mut inp = prefer_no_schedule_node(false);
    let mut tainted = node_pool("tainted");
    tainted
        .taints
        .push(taint("soft", "x", Effect::PreferNoSchedule));
    let mut not_ready = pool_input(tainted, small_catalog());
    not_ready.not_ready = Some("its EC2NodeClass is not Ready".into());
    inp.pools.push(not_ready.clone());
    let plan = solve(&inp);
    assert!(
        plan.existing_nodes.iter().all(|e| e.pods.is_empty()),
        "{plan:#?}"
    );
    inp.pools.last_mut().unwrap().not_ready = None;
    let plan = solve(&inp);
    assert_eq!(plan.existing_nodes.len(), 1, "{plan:#?}");
}

/// No upstream test; rule from `preferences.go` `removeTopologySpreadScheduleAnyway`, which
/// removes a `ScheduleAnyway` constraint by moving the last one into its place: of `A`, `B`,
/// `C`, dropping `A` leaves `C`, `B`, so `C` goes next and `B` is kept. The pods select
/// `team: a`, which only nodes carry (no pool offers it); `n1` (rack 1, zone 1) and `n2` (rack 2,
/// zone 2) each run two `x` and two `y` pods, `n3` (rack 3, zone 3) takes no pod (a NoSchedule
/// taint) but brings empty domains. So `A` (by `rack` over `app: x`) and `C` (by zone over
/// `app: y`) fit no node, and `B` spreads `web` by hostname. Upstream keeps `B`: `web-1` goes to
/// `n1`, `web-2` to `n2`. We dropped `B` before `C`: both went to `n1`.
#[test]
fn schedule_anyway_spreads_are_dropped_in_gos_order() {
    let web = |name: &str| {
        PodBuilder::new(name)
            .cpu("1")
            .label("app", "web")
            .node_selector("team", "a")
            .spread("rack", 1, false, &[("app", "x")])
            .spread(HOSTNAME, 1, false, &[("app", "web")])
            .spread(ZONE, 1, false, &[("app", "y")])
            .build()
    };
    let mut inp = one_pool(vec![web("web-1"), web("web-2")]);
    let node = |name: &str, n: usize, apps: &[&str]| {
        let mut node = roomy_node(name);
        node.labels.insert("team".into(), "a".into());
        node.labels.insert("rack".into(), format!("r{n}"));
        node.labels.insert(ZONE.into(), format!("test-zone-{n}"));
        let pods = (apps.iter().enumerate())
            .map(|(i, app)| {
                PodBuilder::new(&format!("{name}-{i}"))
                    .cpu("100m")
                    .label("app", app)
                    .on_node(name)
                    .build()
            })
            .collect();
        ExistingNode { node, pods }
    };
    let apps = ["x", "x", "y", "y"];
    let mut n3 = node("n3", 3, &[]);
    n3.node
        .taints
        .push(taint("dedicated", "infra", Effect::NoSchedule));
    inp.existing_nodes = vec![node("n1", 1, &apps), node("n2", 2, &apps), n3];
    let plan = solve(&inp);
    assert!(plan.unschedulable.is_empty(), "{plan:#?}");
    let placed: Vec<(&str, usize)> = (plan.existing_nodes.iter())
        .filter(|e| !e.pods.is_empty())
        .map(|e| (e.node.as_str(), e.pods.len()))
        .collect();
    assert_eq!(placed, [("n1", 1), ("n2", 1)], "{plan:#?}");
}

/// A pool that requires zones its instance types are not offered in (its node class's subnets
/// are elsewhere): Karpenter has no instance type for it ("no instance type met the scheduling
/// requirements or had a required offering", aws#3211); the reason names the zones the types
/// are offered in, which the pool's requirement rules out.
#[test]
fn a_pool_requiring_zones_its_types_are_not_offered_in_names_the_offered_zones() {
    let pool = with_requirement(node_pool("default"), ZONE, In, &["elsewhere-1"]);
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(pool, small_catalog())],
    ));
    assert_eq!(
        refusal(&plan, "p"),
        Some(ReasonCode::NodePoolHasNoInstanceTypes)
    );
    let text = plan.unschedulable[0].reason.to_string();
    assert!(
        text.contains("offered only in zones [test-zone-1 test-zone-2 test-zone-3]"),
        "{text}"
    );
    // A pool whose zones are offered, but whose other requirements rule every type out, says
    // nothing of zones.
    let pool = with_requirement(
        node_pool("default"),
        "node.kubernetes.io/instance-type",
        In,
        &["none"],
    );
    let plan = solve(&input(
        vec![PodBuilder::new("p").cpu("1").build()],
        vec![pool_input(pool, small_catalog())],
    ));
    let text = plan.unschedulable[0].reason.to_string();
    assert!(!text.contains("offered only"), "{text}");
}
