use super::*;
use crate::cloud::Catalog;
use crate::model::node::Node;
use crate::model::taints::Effect;
use crate::scheduling::PreferencePolicy;

const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n      startupTaints: [{key: pool.example/agent, effect: NoSchedule}]\n";

fn node(labels: &str, taints: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {{karpenter.sh/nodepool: default{labels}}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n  taints: {taints}\n"
    )
}

const CLAIM: &str = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-x}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\n  taints: [{key: claim.example/t, effect: NoSchedule}]\n  startupTaints: [{key: claim.example/agent, effect: NoSchedule}]\nstatus: {nodeName: n1, providerID: aws:///us-east-1a/i-1}\n";

fn existing(text: &str) -> Node {
    let mut m = crate::api::load_str("in.yaml", text).unwrap();
    let input = assemble(&mut m, Vec::new(), Options::default());
    input.existing_nodes[0].node.clone()
}

fn keys(taints: &[crate::model::taints::Taint]) -> Vec<&str> {
    taints.iter().map(|t| t.key.as_str()).collect()
}

/// `statenode.go` `Taints()`: a node not initialized ignores its NodeClaim's startup taints
/// (its pool's without a NodeClaim); before registration the NodeClaim's taints stand for the
/// Node's.
#[test]
fn an_uninitialized_node_gets_its_claims_or_pools_startup_taints() {
    let taints =
        "[{key: claim.example/agent, effect: NoSchedule}, {key: other, effect: NoSchedule}]";
    let registered = ", karpenter.sh/registered: \"true\"";
    let n = existing(&format!("{POOL}{}{CLAIM}", node(registered, taints)));
    assert_eq!(keys(&n.startup_taints), ["claim.example/agent"]);
    assert_eq!(keys(&n.scheduling_taints()), ["other"]);
    // Not registered: the NodeClaim's taints.
    let n = existing(&format!("{POOL}{}{CLAIM}", node("", taints)));
    assert_eq!(keys(&n.scheduling_taints()), ["claim.example/t"]);
    // No NodeClaim in the input: the pool's startup taints.
    let n = existing(&format!(
        "{POOL}{}",
        node(
            registered,
            "[{key: pool.example/agent, effect: NoSchedule}]"
        )
    ));
    assert_eq!(keys(&n.startup_taints), ["pool.example/agent"]);
    assert!(n.scheduling_taints().is_empty());
    // Initialized: every taint holds.
    let n = existing(&format!(
        "{POOL}{}{CLAIM}",
        node(", karpenter.sh/initialized: \"true\"", taints)
    ));
    assert_eq!(n.scheduling_taints().len(), 2);
    assert_eq!(n.taints[0].effect, Effect::NoSchedule);
}

/// `core v1.14.1: pkg/controllers/state/suite_test.go` "StateNode Capacity" ("… for
/// uninitialized node with NodeClaim") and `statenode.go` `Allocatable()`: a registered node
/// not initialized yet offers what its NodeClaim reports for each resource its Node lists as
/// zero or not at all — a GPU whose device plugin has not started counts, so a GPU pod waits
/// for it rather than launching another node; the Node's own non-zero numbers stay. Once
/// initialized, only the Node's numbers hold.
#[test]
fn an_uninitialized_node_offers_what_its_nodeclaim_reports() {
    let claim = CLAIM.replace(
        "status: {",
        "status: {capacity: {cpu: \"8\", nvidia.com/gpu: \"1\"}, allocatable: {cpu: 7900m, memory: 30Gi, nvidia.com/gpu: \"1\"}, ",
    );
    let node_status = "status:\n  capacity: {cpu: \"8\", nvidia.com/gpu: \"0\"}\n  allocatable: {cpu: 7800m, nvidia.com/gpu: \"0\"}\n";
    let with =
        |labels: &str| existing(&format!("{POOL}{}{node_status}{claim}", node(labels, "[]")));
    let n = with(", karpenter.sh/registered: \"true\"");
    assert_eq!(n.allocatable.get("nvidia.com/gpu"), 1000);
    assert_eq!(n.capacity.get("nvidia.com/gpu"), 1000);
    assert_eq!(n.allocatable.get("memory"), 30 * 1024 * 1024 * 1024 * 1000);
    assert_eq!(
        n.allocatable.get("cpu"),
        7800,
        "the Node's own number stays"
    );
    let n = with(", karpenter.sh/initialized: \"true\"");
    assert_eq!(n.allocatable.get("nvidia.com/gpu"), 0);
    assert_eq!(n.allocatable.get("memory"), 0);
}

/// `core v1.14.1: pkg/controllers/state/suite_test.go` "NodePool Resources" — what counts
/// against a pool's limits is the capacity of its nodes, once each, plus `nodes: 1`
/// ("should calculate nodepool resources for multiple nodepools"); a node terminating
/// ("… when node is terminating (deletionTimestamp set)") or whose NodeClaim is deleting
/// ("… marked/unmarked for deletion", "should not double subtract …") no longer counts; a
/// NodeClaim without a Node counts its own capacity ("… when node inside of the state node
/// is removed"). **Differs, fixed**: a v1 pool's `status.resources` (the counter
/// controller's copy of that sum) was added on top, so a live pool with 8 CPU of nodes and
/// `limits.cpu: 10` was taken as using 16. v1beta1 keeps `status.resources` as a floor (its
/// `Create` refused a pool whose status exceeds the limits).
#[test]
fn a_pools_usage_counts_its_live_nodes_once() {
    let pool = format!("{POOL}status:\n  resources: {{cpu: \"8\", nodes: \"1\"}}\n");
    let node = |name: &str, extra_meta: &str| {
        format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/initialized: \"true\"}}\n{extra_meta}spec: {{providerID: aws:///us-east-1a/i-{name}}}\nstatus:\n  capacity: {{cpu: \"8\", memory: 16Gi}}\n")
    };
    let claim = |name: &str, node: &str, extra_meta: &str, status: &str| {
        format!("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default}}\n{extra_meta}spec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{providerID: aws:///us-east-1a/i-{node}{status}}}\n")
    };
    let usage = |text: String| {
        let mut m = crate::api::load_str("in.yaml", &text).unwrap();
        let pool = m.node_pools[0].clone();
        let input = assemble(&mut m, vec![(pool, Vec::new())], Options::default());
        let u = &input.pools[0].usage;
        (u.get("cpu") / 1000, u.get("nodes") / 1000)
    };
    assert_eq!(usage(format!("{pool}{}", node("a", ""))), (8, 1));
    let deleting =
        "  deletionTimestamp: \"2026-12-01T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n";
    assert_eq!(
        usage(format!("{pool}{}{}", node("a", ""), node("b", deleting))),
        (8, 1)
    );
    assert_eq!(
        usage(format!(
            "{pool}{}{}{}",
            node("a", ""),
            node("b", ""),
            claim("b", "b", deleting, ", nodeName: b")
        )),
        (8, 1)
    );
    // A NodeClaim launched, its Node not registered yet: its own capacity.
    let in_flight = claim(
        "c",
        "c",
        "",
        ", capacity: {cpu: \"4\"}, allocatable: {cpu: 3900m}",
    );
    assert_eq!(
        usage(format!("{pool}{}{in_flight}", node("a", ""))),
        (12, 2)
    );
    // Launched, capacity reported, no allocatable yet (provisioning suite "Resource Limits ›
    // should not schedule when limits are exceeded"): counted all the same; deleting, not.
    let reported = claim("d", "d", "", ", capacity: {cpu: \"100\"}");
    assert_eq!(
        usage(format!("{pool}{}{reported}", node("a", ""))),
        (108, 2)
    );
    let gone = claim("d", "d", deleting, ", capacity: {cpu: \"100\"}");
    assert_eq!(usage(format!("{pool}{}{gone}", node("a", ""))), (8, 1));
    // v1beta1: `status.resources` is a floor.
    let beta = format!("{pool}{}", node("a", ""))
        .replace(
            "karpenter.sh/v1\nkind: NodePool",
            "karpenter.sh/v1beta1\nkind: NodePool",
        )
        .replace(
            "group: karpenter.k8s.aws",
            "apiVersion: karpenter.k8s.aws/v1beta1",
        )
        .replace("cpu: \"8\", nodes", "cpu: \"12\", nodes");
    assert_eq!(usage(beta), (12, 1));
}

const V1_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n";
const V1_CLASS: &str = "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n";

/// Loads a pool `a` (with `pool_status` appended) and the class `default` (with
/// `class_extra` appended) and says why the pool is not ready.
fn readiness(pool_status: &str, class_extra: &str) -> Option<String> {
    let text = format!("{V1_POOL}{pool_status}{V1_CLASS}{class_extra}");
    let m = crate::api::load_str("in.yaml", &text).unwrap();
    not_ready(&m.node_pools[0], class_of(&m, &m.node_pools[0])).map(|r| r.to_string())
}

/// Scheduling suite "should not schedule pods with nodePool which is not ready"
/// (`core v1.14.1: pkg/controllers/provisioning/scheduling/suite_test.go`): a pool whose
/// `Ready` is False is left out; an absent status reads as ready offline; the readiness
/// controller's rules stand in for a missing `Ready` (`nodepool/readiness/controller.go`).
#[test]
fn a_pool_that_is_not_ready_is_left_out() {
    let status = |ready: &str| {
        format!("status:\n  conditions:\n  - {{type: Ready, status: \"{ready}\", reason: NodePoolNotReady, message: Node Pool Not Ready}}\n")
    };
    assert_eq!(
        readiness(&status("False"), "").as_deref(),
        Some("Ready=False, NodePoolNotReady: Node Pool Not Ready")
    );
    assert!(readiness(&status("Unknown"), "").is_some());
    assert_eq!(readiness(&status("True"), ""), None);
    // No status: ready (offline assumption).
    assert_eq!(readiness("", ""), None);
    // A pool Ready=True still launches nothing through a class Ready=False: the provider's
    // Create refuses it (aws cloudprovider/suite_test.go "should return NodeClassNotReady
    // error on creation if NodeClass is not ready").
    let class_false = "status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: SubnetsNotFound, message: SubnetSelector did not match any Subnets}\n";
    assert!(readiness(&status("True"), class_false)
        .unwrap()
        .contains("SubnetsNotFound"));
    // Without it: the class's Ready False (its reason and message), Unknown, or deletion.
    assert_eq!(
        readiness("", class_false).as_deref(),
        Some("NodeClassReady=False, EC2NodeClass/default is not Ready: Ready=False, SubnetsNotFound: SubnetSelector did not match any Subnets")
    );
    let unknown = "status:\n  conditions:\n  - {type: Ready, status: Unknown}\n";
    assert!(readiness("", unknown)
        .unwrap()
        .contains("NodeClassReadinessUnknown"));
    let text = format!("{V1_POOL}{}", V1_CLASS.replace("metadata: {name: default}", "metadata: {name: default, deletionTimestamp: \"2026-12-01T00:00:00Z\", finalizers: [x]}"));
    let m = crate::api::load_str("in.yaml", &text).unwrap();
    assert_eq!(
        not_ready(&m.node_pools[0], class_of(&m, &m.node_pools[0])),
        Some(NotReady::ClassTerminating {
            kind: "EC2NodeClass".into(),
            name: "default".into()
        })
    );
    // The pool's own sub-conditions without a Ready.
    let invalid = "status:\n  conditions:\n  - {type: ValidationSucceeded, status: \"False\", reason: NodePoolValidationFailed}\n";
    assert_eq!(
        readiness(invalid, "").as_deref(),
        Some("ValidationSucceeded=False, NodePoolValidationFailed")
    );
}

/// aws v1.14.1 cloudprovider/suite_test.go "should return NodeClassNotReady error when
/// observed generation doesn't match": a class `Ready=True` observed at generation 1 whose
/// `metadata.generation` is 2 launches nothing, whatever the pool's `Ready`; the same
/// generation, or a manifest without one of the numbers, is ready.
#[test]
fn a_class_whose_ready_is_of_an_older_generation_launches_nothing() {
    let stale = |pool_status: &str, generation: &str, observed: &str| {
        let class = V1_CLASS.replace(
            "metadata: {name: default}",
            &format!("metadata: {{name: default{generation}}}"),
        );
        let status =
            format!("status:\n  conditions:\n  - {{type: Ready, status: \"True\"{observed}}}\n");
        let text = format!("{V1_POOL}{pool_status}{class}{status}");
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        not_ready(&m.node_pools[0], class_of(&m, &m.node_pools[0])).map(|r| r.to_string())
    };
    let pool_ready = "status:\n  conditions:\n  - {type: Ready, status: \"True\"}\n";
    let want = "NodeClassNotReady: EC2NodeClass/default status has not been reconciled against the latest spec (Ready observed generation 1, metadata.generation 2)";
    for pool_status in ["", pool_ready] {
        assert_eq!(
            stale(pool_status, ", generation: 2", ", observedGeneration: 1").as_deref(),
            Some(want)
        );
        assert_eq!(
            stale(pool_status, ", generation: 2", ", observedGeneration: 2"),
            None
        );
        assert_eq!(stale(pool_status, "", ", observedGeneration: 1"), None);
        assert_eq!(stale(pool_status, ", generation: 2", ""), None);
    }
}

/// Pool `a` of `V1_POOL` allowing only the instance types `types` (comma-separated).
fn pool_of(types: &str) -> String {
    V1_POOL.replace(
        "requirements: []",
        &format!("requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]"),
    )
}

/// A pending pod of 100m.
const POD: &str = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n";

/// The plan of `text` (manifests) against the embedded catalog in us-east-1.
fn offline_plan(text: String) -> crate::scheduling::Plan {
    let catalog = Catalog::embedded().unwrap();
    let mut m = crate::api::load_str("in.yaml", &text).unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let selection = Selection {
        max_instance_types: 60,
        ..Selection::default()
    };
    crate::scheduling::solve(&build_input(&mut m, &selection, &mut sizing).unwrap())
}

/// `aws v1.14.1: pkg/providers/instancetype/suite_test.go` "NodeOverlay Preview Instance
/// Pricing" through the plan's input: r9g.medium has no price in the embedded snapshot, so a
/// pool of it leaves the pod pending; a NodeOverlay pricing it (one `instance-type In`
/// requirement, `price`) makes its offerings available at that price. An AL2023 class leaves
/// a1 types unavailable (`compatibility.go`).
#[test]
fn overlay_prices_and_class_compatibility_reach_the_sized_types() {
    let pool = pool_of("r9g.medium, a1.medium");
    let overlay = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: preview-price}\nspec:\n  price: \"98.32\"\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [r9g.medium]}]\n";
    let without = offline_plan(format!("{pool}{V1_CLASS}{POD}"));
    assert!(without.node_claims.is_empty(), "{:?}", without.node_claims);
    assert_eq!(without.unschedulable.len(), 1);
    let with = offline_plan(format!("{pool}{V1_CLASS}{POD}{overlay}"));
    assert_eq!(with.node_claims.len(), 1, "{:?}", with.unschedulable);
    assert_eq!(with.node_claims[0].launch.instance_type, "r9g.medium");
    assert_eq!(with.node_claims[0].launch.price, 98.32);
}

/// Swept from public EC2NodeClasses (docs/upstream-tests.md, session 13): `pid` is a valid
/// `kubeReserved` / `systemReserved` key (`aws v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`),
/// and Karpenter's allocatable is `resources.Subtract(capacity, overhead)` over the capacity's
/// resources only (`core v1.14.1: pkg/cloudprovider/types.go` `computeAllocatable`), so it
/// reserves nothing a pod asks for. We took it off an absent capacity: allocatable pid went
/// negative and every pod was "no single instance type fits".
#[test]
fn a_pid_reservation_leaves_the_pods_schedulable() {
    for field in ["kubeReserved", "systemReserved"] {
        let class = format!("{V1_CLASS}  kubelet:\n    {field}: {{cpu: 100m, pid: \"1000\"}}\n");
        let plan = offline_plan(format!("{}{class}{POD}", pool_of("m5.large")));
        assert_eq!(
            plan.node_claims.len(),
            1,
            "{field}: {:?}",
            plan.unschedulable
        );
        assert_eq!(plan.node_claims[0].launch.instance_type, "m5.large");
    }
}

/// Public configurations swept in session 22: two Deployments sharing `app: web` (a stable
/// and a canary release), each spread over hosts with `matchLabelKeys: [pod-template-hash]`,
/// the Kubernetes docs' pattern. Their ReplicaSets give the pods different hashes, the API
/// server merges each pod's own into the selector, and Karpenter (core v1.14.1
/// `pkg/controllers/provisioning/scheduling/topology.go` `newForTopologies`) counts each
/// Deployment apart: the canary pod shares a node with a stable one, 3 NodeClaims. Our pods
/// had no `pod-template-hash`, so one group spanned both: 4 NodeClaims.
#[test]
fn pod_template_hash_keeps_two_deployments_spreads_apart() {
    let deployment = |name: &str, replicas: u32| {
        format!("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web, track: {name}}}}}\n  template:\n    metadata: {{labels: {{app: web, track: {name}}}}}\n    spec:\n      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}, matchLabelKeys: [pod-template-hash]}}\n      containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]\n")
    };
    let manifests = format!(
        "{}{V1_CLASS}{}{}",
        pool_of("m5.large"),
        deployment("stable", 3),
        deployment("canary", 1)
    );
    let plan = offline_plan(manifests.clone());
    assert_eq!(plan.node_claims.len(), 3, "{:?}", plan.unschedulable);
    let joint = manifests.replace(", matchLabelKeys: [pod-template-hash]", "");
    assert_eq!(
        offline_plan(joint).node_claims.len(),
        4,
        "without the key: one group"
    );
}

/// Public configurations swept in session 17 (terraform-aws-modules/terraform-aws-eks
/// `examples/karpenter/main.tf` before v20, msfidelis/eks-karpenter-autonomous-cluster
/// `examples/spots/*/provision.yml`, aws-samples/aws-do-eks `provisioner-deploy-*.sh`): a
/// v1alpha5 Provisioner's workload selects it by `karpenter.sh/provisioner-name`, a
/// well-known label in v0.31 (`core v0.31.4: pkg/apis/v1alpha5/labels.go`
/// `WellKnownLabels`; `provisioner.go` `validateProvisionerNameCanExist` opts a pod requiring
/// it `DoesNotExist` out). We refused every such pod as "restricted" (v1.14.1's rule); a v1
/// pool's pod selecting the old key is still refused so.
#[test]
fn a_provisioners_pods_may_select_the_provisioner_name() {
    let legacy = "---\napiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\nspec:\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n  providerRef: {name: default}\n---\napiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: default}\nspec:\n  subnetSelector: {a: b}\n  securityGroupSelector: {a: b}\n";
    let selecting = POD.replace(
        "spec:\n",
        "spec:\n  nodeSelector: {karpenter.sh/provisioner-name: default}\n",
    );
    let plan = offline_plan(format!("{legacy}{selecting}"));
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims[0].launch.instance_type, "m5.large");
    let other = selecting.replace("provisioner-name: default", "provisioner-name: other");
    let plan = offline_plan(format!("{legacy}{other}"));
    assert!(plan.node_claims.is_empty());
    let opting_out = POD.replace("spec:\n", "spec:\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/provisioner-name, operator: DoesNotExist}]}]}}}\n");
    let plan = offline_plan(format!("{legacy}{opting_out}"));
    assert!(
        plan.unschedulable[0]
            .reason
            .to_string()
            .contains("opts out"),
        "{:?}",
        plan.unschedulable
    );
    let plan = offline_plan(format!("{}{V1_CLASS}{selecting}", pool_of("m5.large")));
    assert!(plan.node_claims.is_empty());
    assert!(
        plan.unschedulable[0]
            .reason
            .to_string()
            .contains("is restricted"),
        "{:?}",
        plan.unschedulable
    );
}

/// A NodeOverlay adding `hugepages-2Mi` capacity (the nodeoverlays concept page's example)
/// takes it off the type's allocatable memory (`core v1.14.1: pkg/cloudprovider/types.go`
/// `computeAllocatable`): m5.large (6903Mi allocatable) with 4Gi of hugepages no longer holds
/// a 4Gi pod, which we used to plan onto it.
#[test]
fn overlay_hugepages_come_off_allocatable_memory() {
    let pod = POD.replace("cpu: 100m", "cpu: 100m, memory: 4Gi");
    let overlay = "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: huge}\nspec:\n  capacity: {hugepages-2Mi: 4Gi}\n  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n";
    let without = offline_plan(format!("{}{V1_CLASS}{pod}", pool_of("m5.large")));
    assert_eq!(without.node_claims.len(), 1, "{:?}", without.unschedulable);
    let with = offline_plan(format!("{}{V1_CLASS}{pod}{overlay}", pool_of("m5.large")));
    assert!(with.node_claims.is_empty(), "{:?}", with.node_claims);
    assert_eq!(with.unschedulable.len(), 1);
}

/// core v1.14.1 `provisioning/suite_test.go` "should not use a different NodePool hash on
/// the NodeClaim if the NodePool changes during scheduling" (`nodeclaimtemplate.go`
/// `NewNodeClaimTemplate`): each planned NodeClaim carries its pool's nodepool-hash — the
/// value `drift check` computes for the pool, so a node launched from it is not drifted —
/// and `nodepool-hash-version: v3`; a template change moves the hash. `ToNodeClaim`:
/// `karpenter.sh/price-overlay-applied` / `capacity-overlay-applied: "true"` only on a
/// NodeClaim whose options include a type an overlay priced / resized (nodeoverlay
/// suite_test.go `IsPricingOverlayApplied`).
#[test]
fn planned_nodeclaims_carry_the_nodepool_hash_and_the_overlays_applied() {
    let pool_text = pool_of("c6a.large, m5.large");
    let m = crate::api::load_str("in.yaml", &format!("{pool_text}{V1_CLASS}")).unwrap();
    let hash = crate::drift::hash::node_pool_hash(&m.node_pools[0], "v3").unwrap();
    let plan = offline_plan(format!("{pool_text}{V1_CLASS}{POD}"));
    let a = &plan.node_claims[0].annotations;
    assert_eq!(a.get(labels::NODEPOOL_HASH), Some(&hash));
    assert_eq!(
        a.get(labels::NODEPOOL_HASH_VERSION).map(String::as_str),
        Some("v3")
    );
    assert!(!a.contains_key(crate::scheduling::PRICE_OVERLAY_APPLIED));
    let labelled = pool_text.replace(
        "  template:\n",
        "  template:\n    metadata: {labels: {new-label: new-value}}\n",
    );
    let moved = offline_plan(format!("{labelled}{V1_CLASS}{POD}"));
    assert_ne!(
        moved.node_claims[0].annotations.get(labels::NODEPOOL_HASH),
        Some(&hash),
        "{labelled}"
    );

    let overlay = |name: &str, spec: &str, types: &str| {
        format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: {name}}}\nspec:\n  {spec}\n  requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]\n")
    };
    // (price-overlay-applied, capacity-overlay-applied) of the plan with `overlay`; its
    // NodeClaim keeps the hash.
    let applied = |overlay: String| {
        let plan = offline_plan(format!("{pool_text}{V1_CLASS}{POD}{overlay}"));
        let a = &plan.node_claims[0].annotations;
        assert_eq!(a.get(labels::NODEPOOL_HASH), Some(&hash));
        let on = |key| a.get(key).map(String::as_str) == Some("true");
        (
            on(crate::scheduling::PRICE_OVERLAY_APPLIED),
            on(crate::scheduling::CAPACITY_OVERLAY_APPLIED),
        )
    };
    let cheaper = "priceAdjustment: \"-10%\"";
    assert_eq!(
        applied(overlay("cheaper", cheaper, "m5.large")),
        (true, false)
    );
    // An overlay on a type none of the NodeClaim's options is: no annotation.
    assert_eq!(
        applied(overlay("elsewhere", cheaper, "r5.large")),
        (false, false)
    );
    let widget = "capacity: {example.com/widget: \"1\"}";
    assert_eq!(applied(overlay("gpus", widget, "c6a.large")), (false, true));
}

/// A conflicting overlay prices nothing, unpriced types included: upstream's conflict check
/// (`core v1.14.1: pkg/controllers/nodeoverlay/controller.go`, suite_test.go "should fail
/// with conflicting pricing updates overlays with overlapping requirements") marks the
/// lighter-ordered of two equal-weight overlays on one type `ValidationSucceeded=False`,
/// and the AWS provider prices unpriced types only from validated overlays (`aws v1.14.1:
/// pkg/providers/instancetype/offering/offering.go` `GetOverlayPrice`). Here `b` (weight
/// 10) wins over `a` (weight 10, earlier by name) on r9g.medium, so `a` also gives
/// r9g.large (no price in the snapshot) no price, and a pool of r9g.large leaves the pod
/// pending. With different weights ("… mutually exclusive weights") nothing conflicts and
/// `a` prices r9g.large.
#[test]
fn a_conflicting_overlay_prices_no_unpriced_type() {
    let pool = pool_of("r9g.large");
    let overlay = |name: &str, weight: u32, price: &str, types: &str| {
        format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  price: \"{price}\"\n  requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}]\n")
    };
    let conflicting = format!(
        "{}{}",
        overlay("a", 10, "1.5", "r9g.medium, r9g.large"),
        overlay("b", 10, "2", "r9g.medium")
    );
    let mut both = pool_of("r9g.medium, r9g.large");
    both.push_str(&format!("{V1_CLASS}{POD}{conflicting}"));
    let plan = offline_plan(both);
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(
        (
            plan.node_claims[0].launch.instance_type.as_str(),
            plan.node_claims[0].launch.price
        ),
        ("r9g.medium", 2.0),
        "b prices r9g.medium; a (in conflict) prices nothing"
    );
    let plan = offline_plan(format!("{pool}{V1_CLASS}{POD}{conflicting}"));
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    let exclusive = format!(
        "{}{}",
        overlay("a", 10, "1.5", "r9g.medium, r9g.large"),
        overlay("b", 20, "2", "r9g.medium")
    );
    let plan = offline_plan(format!("{pool}{V1_CLASS}{POD}{exclusive}"));
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims[0].launch.price, 1.5);
}

/// A class whose only AMI is amd64 and an on-demand pool of both architectures: the scheduler
/// keeps the arm64 types among the NodeClaim's options, but the launch asks only for types an
/// AMI runs on, so the cheapest amd64 one is launched (aws v1.14.1 `amifamily/resolver.go`
/// `Resolve` → `MapToInstanceTypes`; `launchtemplate/suite_test.go` "should create multiple
/// launch templates when multiple amis are discovered with non-equivalent requirements"); with
/// an arm64-only pool nothing is left and the pod stays pending (`NoImage`; "should fail if no
/// instanceType matches ami requirements.").
#[test]
fn a_launch_asks_only_for_types_an_ami_of_the_class_runs_on() {
    let amd64_only = format!(
        "{V1_CLASS}status:\n  amis: [{{id: ami-amd, name: custom, requirements: [{{key: kubernetes.io/arch, operator: In, values: [amd64]}}]}}]\n"
    );
    let pool = |arches: &str| {
        V1_POOL.replace(
            "requirements: []",
            &format!("requirements: [{{key: kubernetes.io/arch, operator: In, values: [{arches}]}}, {{key: node.kubernetes.io/instance-type, operator: In, values: [t4g.medium, t3a.medium]}}, {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}]"),
        )
    };
    let both = offline_plan(format!("{}{amd64_only}{POD}", pool("amd64, arm64")));
    assert_eq!(both.node_claims.len(), 1, "{:?}", both.unschedulable);
    let claim = &both.node_claims[0];
    assert_eq!(claim.launch.instance_type, "t3a.medium");
    assert!(
        claim
            .instance_types
            .iter()
            .any(|o| &*o.name == "t4g.medium"),
        "the scheduler keeps the arm64 option"
    );
    // Spot allowed too, priced at on-demand offline: the spot filter's cap is the cheapest
    // on-demand offering a launch can use (t3a.medium's), not t4g.medium's.
    let spot_too = pool("amd64, arm64").replace("values: [on-demand]", "values: [spot, on-demand]");
    let spot_too = offline_plan(format!("{spot_too}{amd64_only}{POD}"));
    assert_eq!(
        (
            spot_too.node_claims[0].launch.instance_type.as_str(),
            spot_too.node_claims[0].launch.capacity_type.as_str()
        ),
        ("t3a.medium", "spot")
    );
    let without_status = offline_plan(format!("{}{V1_CLASS}{POD}", pool("amd64, arm64")));
    assert_eq!(
        without_status.node_claims[0].launch.instance_type, "t4g.medium",
        "no status.amis: the alias covers both architectures"
    );
    let arm = offline_plan(format!("{}{amd64_only}{POD}", pool("arm64")));
    assert!(arm.node_claims.is_empty());
    assert_eq!(
        arm.unschedulable[0].reason.code(),
        crate::scheduling::ReasonCode::NoImage
    );
}

/// A GPU pod on a pool of g5g (arm64) and g4dn (amd64) types whose AL2 class has no
/// `status.amis` yet: AL2 publishes no arm64 GPU image (aws v1.14.1 `amifamily/al2.go`
/// `DescribeImageQuery`: `amazon-linux-2-gpu` is x86_64, nvidia/neuron; `amazon-linux-2-arm64`
/// standard only), so a launch leaves the g5g options out (`resolver.go` `Resolve` →
/// `MapToInstanceTypes`; launchtemplate suite "should fail if no instanceType matches ami
/// requirements."); with only g5g allowed the launch fails. AL2023 publishes an arm64 nvidia
/// image, so there the g5g stays. Swept from SebastianScherer88/bettmensch.ai (session 33).
#[test]
fn an_al2_class_without_status_launches_no_arm64_gpu_type() {
    let pool = |types: &str| {
        V1_POOL.replace(
            "requirements: []",
            &format!("requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}, {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}]"),
        )
    };
    let al2 = V1_CLASS.replace("al2023@latest", "al2@latest");
    let gpu = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: g, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
    let both = offline_plan(format!("{}{al2}{gpu}", pool("g5g.xlarge, g4dn.xlarge")));
    assert_eq!(both.node_claims.len(), 1, "{:?}", both.unschedulable);
    assert_eq!(both.node_claims[0].launch.instance_type, "g4dn.xlarge");
    let arm_only = offline_plan(format!("{}{al2}{gpu}", pool("g5g.xlarge")));
    assert!(
        arm_only.node_claims.is_empty(),
        "{:?}",
        arm_only.node_claims
    );
    assert_eq!(
        arm_only.unschedulable[0].reason.code(),
        crate::scheduling::ReasonCode::NoImage
    );
    let al2023 = offline_plan(format!("{}{V1_CLASS}{gpu}", pool("g5g.xlarge")));
    assert_eq!(al2023.node_claims[0].launch.instance_type, "g5g.xlarge");
    // A pre-v1 AL2023 default attaches the architecture only (v0.37.7 `al2023.go`
    // `DefaultAMIs`): GPU types run its standard image.
    let v1beta1 = "---\napiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  amiFamily: AL2023\n  role: r\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n";
    let v1beta1 = offline_plan(format!("{}{v1beta1}{gpu}", pool("g5g.xlarge")));
    assert_eq!(v1beta1.node_claims.len(), 1, "{:?}", v1beta1.unschedulable);
}

/// A class whose `status.amis` are upstream's capacity suite's `nvidiaAMI` (GPU types) then
/// `standardAMI` (`ami_order` reverses them), a registered t3.medium node reporting
/// `memory` and its NodeClaim launched from `image`.
fn discovered(image: &str, memory: &str, ami_order: &[usize]) -> String {
    let amis = [
        "{id: ami-nvidia-test, name: nvidia-ami, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-gpu-count, operator: Exists}]}",
        "{id: ami-standard-test, name: standard-ami, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}]}",
    ];
    let amis: Vec<&str> = ami_order.iter().map(|i| amis[*i]).collect();
    format!(
        "{V1_CLASS}status:\n  amis: [{}]\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: test-node\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", karpenter.k8s.aws/ec2nodeclass: default, node.kubernetes.io/instance-type: t3.medium, kubernetes.io/arch: amd64}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n  unschedulable: true\nstatus:\n  capacity: {{memory: {memory}}}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {{name: test-nodeclaim}}\nspec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{nodeName: test-node, providerID: aws:///us-east-1a/i-1, imageID: {image}}}\n",
        amis.join(", ")
    )
}

/// t3.medium's memory capacity as sized for the class of `text`.
fn t3_medium_memory(text: &str) -> i64 {
    let catalog = Catalog::embedded().unwrap();
    let m = crate::api::load_str("in.yaml", &format!("{V1_POOL}{text}")).unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    sizing.discover_memory(&m);
    let types = sizing
        .instance_types(&m.node_pools[0], class_of(&m, &m.node_pools[0]))
        .unwrap();
    types
        .iter()
        .find(|t| t.name == "t3.medium")
        .unwrap()
        .capacity
        .memory
}

/// aws v1.14.1 `pkg/controllers/providers/instancetype/capacity/suite_test.go`:
/// "should update discovered capacity based on existing nodes" (a registered t3.medium
/// reporting 3840Mi, launched from the class's current AMI: the type's memory is 3840Mi),
/// "should use VM_MEMORY_OVERHEAD_PERCENT calculation after AMI update" (the NodeClaim's image
/// is no longer the class's: the estimate, 4096Mi − ceil(4096 × 0.075) = 3788Mi) and "should
/// properly update discovered capacity when matching AMI is not the first in the list" (the
/// GPU AMI listed first: the standard AMI still maps to t3.medium). The smallest report wins.
#[test]
fn registered_nodes_memory_replaces_the_estimate_for_their_type() {
    let mib = crate::model::quantity::MIB;
    // (the NodeClaim's image, the node's memory, the order of the class's AMIs, the type's
    // memory); a node launched from the GPU AMI, which the class maps to GPU types only, is
    // not recorded.
    let cases: [(&str, &str, &[usize], i64); 4] = [
        ("ami-standard-test", "3840Mi", &[1, 0], 3840),
        ("ami-new-test-id", "3840Mi", &[1, 0], 3788),
        ("ami-standard-test", "4Gi", &[0, 1], 4096),
        ("ami-nvidia-test", "3840Mi", &[0, 1], 3788),
    ];
    for (image, memory, order, want) in cases {
        let got = t3_medium_memory(&discovered(image, memory, order));
        assert_eq!(got, want * mib, "{image} {memory} {order:?}");
    }
    // Two nodes of the type: the smaller report.
    let second = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n  labels: {karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", node.kubernetes.io/instance-type: t3.medium, kubernetes.io/arch: amd64}\nspec: {providerID: aws:///us-east-1a/i-2}\nstatus:\n  capacity: {memory: 3700Mi}\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c2}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\nstatus: {nodeName: n2, providerID: aws:///us-east-1a/i-2, imageID: ami-standard-test}\n";
    let two = format!(
        "{}{second}",
        discovered("ami-standard-test", "3840Mi", &[1, 0])
    );
    assert_eq!(t3_medium_memory(&two), 3700 * mib);
}

/// The rule changes the plan: with a registered t3.medium reporting 3943Mi, a pod of 3300Mi
/// fits a new t3.medium (allocatable 3943 − 442 kube-reserved − 100 eviction = 3401Mi), as
/// Karpenter's discovered capacity has it; on the estimate (3246Mi) it took a t3.large.
#[test]
fn discovered_memory_lets_a_pod_fit_the_smaller_type() {
    let pool = pool_of("t3.medium, t3.large");
    let pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 100m, memory: 3300Mi}}}]\n";
    let with = offline_plan(format!(
        "{pool}{}{pod}",
        discovered("ami-standard-test", "3943Mi", &[1, 0])
    ));
    assert_eq!(with.node_claims.len(), 1, "{:?}", with.unschedulable);
    assert_eq!(with.node_claims[0].launch.instance_type, "t3.medium");
    let without = offline_plan(format!(
        "{pool}{}{pod}",
        discovered("ami-new-test-id", "3943Mi", &[1, 0])
    ));
    assert_eq!(without.node_claims[0].launch.instance_type, "t3.large");
}

/// An EC2NodeClass's `spec.networkInterfaces` reaches the sizing: 3 EFA-only interfaces are
/// more than m6idn.32xlarge has (2), so a pool of it leaves the pod pending
/// (`compatibility.go`; catalog test `network_interfaces_decide_efa_capacity_max_pods_and_availability`).
#[test]
fn the_classs_network_interfaces_reach_the_sized_types() {
    let pool = pool_of("m6idn.32xlarge");
    let nis = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}\n  - {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}\n  - {networkCardIndex: 2, deviceIndex: 0, interfaceType: efa-only}\n";
    assert_eq!(
        offline_plan(format!("{pool}{V1_CLASS}{POD}"))
            .node_claims
            .len(),
        1
    );
    let class = format!("{V1_CLASS}{nis}");
    let m = crate::api::load_str("in.yaml", &class[4..]).unwrap();
    assert_eq!(
        m.node_classes[0].network_interfaces().map(|n| n.len()),
        Some(4)
    );
    let with = offline_plan(format!("{pool}{class}{POD}"));
    assert!(with.node_claims.is_empty(), "{:?}", with.node_claims);
    // The checks the snapshot's card and ENA facts allow (`compatibility.go` (1), (2)):
    // m6idn.32xlarge has 2 network cards, so an interface on card 2 does not fit; t2.micro
    // has no ENA, so any `networkInterfaces` leaves it out.
    let card_2 = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 2, deviceIndex: 0, interfaceType: interface}\n";
    let on_card_2 = offline_plan(format!("{pool}{V1_CLASS}{card_2}{POD}"));
    assert!(
        on_card_2.node_claims.is_empty(),
        "{:?}",
        on_card_2.node_claims
    );
    let card_1 = card_2.replace("networkCardIndex: 2", "networkCardIndex: 1");
    let on_card_1 = offline_plan(format!("{pool}{V1_CLASS}{card_1}{POD}"));
    assert_eq!(
        on_card_1.node_claims.len(),
        1,
        "{:?}",
        on_card_1.unschedulable
    );
    let one = "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n";
    let t2 = pool_of("t2.micro");
    assert_eq!(
        offline_plan(format!("{t2}{V1_CLASS}{POD}"))
            .node_claims
            .len(),
        1
    );
    let no_ena = offline_plan(format!("{t2}{V1_CLASS}{one}{POD}"));
    assert!(no_ena.node_claims.is_empty(), "{:?}", no_ena.node_claims);
}

/// `topology.k8s.aws/zone-id`: the class's `status.subnets[].zoneID` pins a pod selecting a
/// zone id to that zone (`aws v1.14.1: pkg/providers/instancetype/offering/
/// base_resolver.go`, `types.go` `computeRequirements`; `instancetype/suite_test.go` "should
/// support individual instance type labels", `cloudprovider/suite_test.go` "should return
/// availability zone ID as a label on the nodeClaim"). Without zone ids (no status) the pod
/// is planned in any zone, as upstream with no zone info.
#[test]
fn a_pod_selecting_a_zone_id_is_planned_in_its_zone() {
    let pool = pool_of("m5.large");
    let status = "status:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b, zoneID: use1-az1}\n  - {id: subnet-c, zone: us-east-1c, zoneID: use1-az4}\n";
    let pod = |id: &str| {
        POD.replace(
            "spec:\n",
            &format!("spec:\n  nodeSelector: {{topology.k8s.aws/zone-id: {id}}}\n"),
        )
    };
    for (id, zone) in [("use1-az4", "us-east-1c"), ("use1-az1", "us-east-1b")] {
        let plan = offline_plan(format!("{pool}{V1_CLASS}{status}{}", pod(id)));
        assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
        let c = &plan.node_claims[0];
        assert_eq!(c.launch.zone, zone);
        assert_eq!(c.zones, vec![zone.to_string()]);
        assert!(c.launch_offerings().all(|(_, z, _)| z == zone));
        assert_eq!(c.labels.get(labels::ZONE_ID).map(String::as_str), Some(id));
        assert_eq!(c.labels.get(labels::ZONE).map(String::as_str), Some(zone));
    }
    // No subnet with that id: pending.
    let none = offline_plan(format!("{pool}{V1_CLASS}{status}{}", pod("use1-az2")));
    assert!(none.node_claims.is_empty(), "{:?}", none.node_claims);
    // An unselecting pod still gets its zone's id as a label.
    let any = offline_plan(format!("{pool}{V1_CLASS}{status}{POD}"));
    let c = &any.node_claims[0];
    let want = match c.launch.zone.as_str() {
        "us-east-1a" => "use1-az6",
        "us-east-1b" => "use1-az1",
        _ => "use1-az4",
    };
    assert_eq!(
        c.labels.get(labels::ZONE_ID).map(String::as_str),
        Some(want)
    );
    // The status without zoneID (and no status at all): no zone-id requirement, so the pod
    // is planned (in any zone) and the NodeClaim has no zone-id label.
    let no_ids = status
        .replace(", zoneID: use1-az6", "")
        .replace(", zoneID: use1-az1", "")
        .replace(", zoneID: use1-az4", "");
    for extra in [no_ids.as_str(), ""] {
        let plan = offline_plan(format!("{pool}{V1_CLASS}{extra}{}", pod("use1-az4")));
        assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
        assert!(!plan.node_claims[0].labels.contains_key(labels::ZONE_ID));
    }
}

/// A topology spread over `topology.k8s.aws/zone-id`: its domains are the types' zone ids
/// (`types.go` `computeRequirements`), and each NodeClaim narrowed to one id launches in
/// that id's zone.
#[test]
fn a_spread_over_zone_ids_puts_one_pod_in_each_zone() {
    let pool = pool_of("m5.large");
    let status = "status:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b, zoneID: use1-az1}\n  - {id: subnet-c, zone: us-east-1c, zoneID: use1-az4}\n";
    let pods: String = (0..3)
        .map(|i| {
            format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default, labels: {{app: s}}}}\nspec:\n  topologySpreadConstraints: [{{maxSkew: 1, topologyKey: topology.k8s.aws/zone-id, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: s}}}}}}]\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\n")
        })
        .collect();
    let plan = offline_plan(format!("{pool}{V1_CLASS}{status}{pods}"));
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let mut got: Vec<(String, String)> = plan
        .node_claims
        .iter()
        .map(|c| {
            assert_eq!(c.pods.len(), 1);
            (c.launch.zone.clone(), c.labels[labels::ZONE_ID].clone())
        })
        .collect();
    got.sort();
    let want: Vec<(String, String)> = [
        ("us-east-1a", "use1-az6"),
        ("us-east-1b", "use1-az1"),
        ("us-east-1c", "use1-az4"),
    ]
    .iter()
    .map(|(z, id)| (z.to_string(), id.to_string()))
    .collect();
    assert_eq!(got, want);
}

/// `status.subnets[].zoneID` is read from v1beta1 EC2NodeClasses too (the v0.37 CRD has it,
/// `tests/fixtures/crds/v1beta1`).
#[test]
fn v1beta1_status_subnets_carry_the_zone_id() {
    let class = "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  amiFamily: AL2\n  role: r\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\nstatus:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b}\n";
    let m = crate::api::load_str("in.yaml", class).unwrap();
    let ids: Vec<Option<&str>> = m.node_classes[0]
        .status
        .subnets
        .iter()
        .map(|s| s.zone_id.as_deref())
        .collect();
    assert_eq!(ids, vec![Some("use1-az6"), None]);
}

/// v1beta1 (v0.37) and v1alpha5 (v0.31) schedule with any pool: `provisioner.go` there has
/// no readiness filter.
#[test]
fn older_generations_have_no_readiness_filter() {
    let text = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: default}\n      requirements: []\nstatus:\n  conditions:\n  - {type: Ready, status: \"False\"}\n";
    let m = crate::api::load_str("in.yaml", text).unwrap();
    assert_eq!(not_ready(&m.node_pools[0], None), None);
}

/// A node `n1` (deleting when `deleting`), NodeClaim `c1` for it (deleting when
/// `claim_deleting`), and one pod `p` bound to it with `pod_extra` appended to its
/// metadata, plus `extra` documents.
fn deleting_world(
    deleting: bool,
    claim_deleting: bool,
    pod_meta: &str,
    pod_status: &str,
    extra: &str,
) -> Vec<String> {
    let gone =
        "deletionTimestamp: \"2026-12-04T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n  ";
    let text = format!(
        "{POOL}---\napiVersion: v1\nkind: Node\nmetadata:\n  {}name: n1\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", karpenter.sh/initialized: \"true\"}}\nspec:\n  providerID: aws:///us-east-1a/i-1\n---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  {}name: c1\nspec:\n  nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n  requirements: []\nstatus: {{nodeName: n1, providerID: aws:///us-east-1a/i-1}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n  labels: {{app: a}}\n{pod_meta}spec:\n  nodeName: n1\n  containers: [{{name: c, image: i}}]\nstatus: {{phase: {pod_status}}}\n{extra}",
        if deleting { gone } else { "" },
        if claim_deleting { gone } else { "" },
    );
    let mut m = crate::api::load_str("in.yaml", &text).unwrap();
    let mut input = assemble(&mut m, Vec::new(), Options::default());
    let moved = reschedule_deleting(&mut input, &m.pdbs, 1_800_000_000).unwrap();
    assert_eq!(
        input.existing_nodes[0].node.deleting,
        deleting || claim_deleting
    );
    let keys: Vec<String> = input.pods.iter().map(Pod::key).collect();
    assert_eq!(
        moved
            .iter()
            .flat_map(|e| e.pods.clone())
            .collect::<Vec<_>>(),
        keys
    );
    keys
}

/// Scheduling suite "Deleting Nodes" (`core v1.14.1:
/// pkg/controllers/provisioning/scheduling/suite_test.go`) and `provisioner.go` `Schedule`
/// (`nodes.Deleting().CurrentlyReschedulablePods`): which pods of a deleting node are
/// planned again.
#[test]
fn pods_of_a_deleting_node_are_planned_again_when_currently_reschedulable() {
    let p = vec!["default/p".to_string()];
    let none: Vec<String> = Vec::new();
    let terminating = "  deletionTimestamp: \"2026-12-04T00:00:00Z\"\n";
    let owner = |kind: &str| {
        format!("  ownerReferences: [{{apiVersion: apps/v1, kind: {kind}, name: o, uid: u, controller: true}}]\n")
    };
    let pdb = |spec: &str, name: &str| {
        format!("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: default}}\nspec: {{selector: {{matchLabels: {{app: a}}}}, {spec}}}\n")
    };
    // (It, pods planned again, node deleting, NodeClaim deleting, pod metadata, phase, more objects)
    type Case<'a> = (&'a str, Vec<String>, bool, bool, String, &'a str, String);
    let cases: Vec<Case> = vec![
        (
            "should re-schedule pods from a deleting node when pods are active",
            p.clone(),
            true,
            false,
            String::new(),
            "Running",
            String::new(),
        ),
        (
            "a node not deleting keeps its pods",
            none.clone(),
            false,
            false,
            String::new(),
            "Running",
            String::new(),
        ),
        (
            "statenode.go Deleted(): the NodeClaim deleting marks its node",
            p.clone(),
            false,
            true,
            String::new(),
            "Running",
            String::new(),
        ),
        (
            "should not re-schedule pods from a deleting node when pods are not active (terminal)",
            none.clone(),
            true,
            false,
            String::new(),
            "Succeeded",
            String::new(),
        ),
        (
            "should not re-schedule ... not active and they are owned by a ReplicaSet",
            none.clone(),
            true,
            false,
            format!("{terminating}{}", owner("ReplicaSet")),
            "Running",
            String::new(),
        ),
        (
            "should reschedule ... not active and they are owned by a StatefulSet",
            p.clone(),
            true,
            false,
            format!("{terminating}{}", owner("StatefulSet")),
            "Running",
            String::new(),
        ),
        (
            "should not re-schedule pods from a deleting node when pods are owned by a DaemonSet",
            none.clone(),
            true,
            false,
            owner("DaemonSet"),
            "Running",
            String::new(),
        ),
        (
            "do-not-disrupt (IsDisruptable)",
            none.clone(),
            true,
            false,
            "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n".into(),
            "Running",
            String::new(),
        ),
        (
            "a fully blocking PDB (maxUnavailable: 0)",
            none.clone(),
            true,
            false,
            String::new(),
            "Running",
            pdb("maxUnavailable: 0", "b"),
        ),
        (
            "a fully blocking PDB (minAvailable: 100%)",
            none.clone(),
            true,
            false,
            String::new(),
            "Running",
            pdb("minAvailable: \"100%\"", "b"),
        ),
        (
            "a PDB that is not fully blocking",
            p.clone(),
            true,
            false,
            String::new(),
            "Running",
            pdb("maxUnavailable: 1", "b"),
        ),
        (
            "several PDBs match the pod",
            none.clone(),
            true,
            false,
            String::new(),
            "Running",
            format!(
                "{}{}",
                pdb("maxUnavailable: 1", "b"),
                pdb("maxUnavailable: 2", "c")
            ),
        ),
    ];
    for (name, want, deleting, claim_deleting, meta, phase, extra) in cases {
        assert_eq!(
            deleting_world(deleting, claim_deleting, &meta, phase, &extra),
            want,
            "{name}"
        );
    }
}

/// The plan of `text` as `provision -f` makes it: the reschedulable pods of deleting nodes
/// planned again with the pending ones.
fn offline_plan_with_deleting(text: String) -> crate::scheduling::Plan {
    let catalog = Catalog::embedded().unwrap();
    let mut m = crate::api::load_str("in.yaml", &text).unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let mut input = build_input(&mut m, &Selection::default(), &mut sizing).unwrap();
    reschedule_deleting(&mut input, &m.pdbs, 1_800_000_000).unwrap();
    crate::scheduling::solve(&input)
}

/// A pod that stays on a deleting node (`karpenter.sh/do-not-disrupt`) still counts for
/// topology: Karpenter lists every pod the selector matches and skips only those it is
/// scheduling (`core v1.14.1 pkg/controllers/provisioning/scheduling/topology.go
/// countDomains` `excludedPods`; the inverse groups from `state/cluster.go
/// ForPodsWithAntiAffinity` likewise), so `web-0` keeps zone a taken and `web-1` zone b, and a
/// pending replica with required zone anti-affinity has no zone left in a pool of a and b. A
/// reschedulable pod of the same node is planned again and does not count there.
#[test]
fn a_pod_staying_on_a_deleting_node_counts_for_topology() {
    let pool = pool_of("m5.large").replace(
        "requirements: [",
        "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}, ",
    );
    let node = |name: &str, zone: &str, meta: &str| {
        format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n{meta}  labels: {{karpenter.sh/nodepool: a, karpenter.sh/registered: \"true\", karpenter.sh/initialized: \"true\", topology.kubernetes.io/zone: {zone}, node.kubernetes.io/instance-type: m5.large}}\nspec:\n  providerID: aws:///{zone}/i-{name}\nstatus:\n  allocatable: {{cpu: 1900m, memory: 7Gi, pods: \"29\"}}\n")
    };
    let deleting_meta =
        "  deletionTimestamp: \"2026-12-04T00:00:00Z\"\n  finalizers: [karpenter.sh/termination]\n";
    let web = |name: &str, node: Option<&str>, meta: &str| {
        let bound = node.map_or(String::new(), |n| format!("  nodeName: {n}\n"));
        let phase = if node.is_some() { "Running" } else { "Pending" };
        format!("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{app: web}}\n{meta}spec:\n{bound}  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - {{topologyKey: topology.kubernetes.io/zone, labelSelector: {{matchLabels: {{app: web}}}}}}\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\nstatus: {{phase: {phase}}}\n")
    };
    let stays = "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n";
    let world = |web0_meta: &str| {
        format!(
            "{pool}{V1_CLASS}{}{}{}{}{}",
            node("old", "us-east-1a", deleting_meta),
            node("live", "us-east-1b", ""),
            web("web-0", Some("old"), web0_meta),
            web("web-1", Some("live"), ""),
            web("web-2", None, ""),
        )
    };
    // web-0 stays on the deleting node in zone a: no zone is left for web-2.
    let plan = offline_plan_with_deleting(world(stays));
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    let pending: Vec<&str> = plan.unschedulable.iter().map(|u| u.pod.as_str()).collect();
    assert_eq!(pending, ["default/web-2"]);
    // web-0 moves: it and web-2 are both planned again, and only one of them gets zone a.
    let plan = offline_plan_with_deleting(world(""));
    assert_eq!(plan.node_claims.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(plan.node_claims[0].launch.zone, "us-east-1a");
    assert_eq!(plan.unschedulable.len(), 1);
}

/// The plan of `text` under the controller's `PreferencePolicy` `policy`.
fn plan_with_preferences(text: &str, policy: PreferencePolicy) -> crate::scheduling::Plan {
    let catalog = Catalog::embedded().unwrap();
    let mut m = crate::api::load_str("in.yaml", text).unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let selection = Selection {
        max_instance_types: 60,
        preference_policy: policy,
        ..Selection::default()
    };
    crate::scheduling::solve(&build_input(&mut m, &selection, &mut sizing).unwrap())
}

/// A pending pod `name` labelled `app: {app}`, requesting `cpu`, with `spec` lines added.
fn pref_pod(name: &str, app: &str, cpu: &str, spec: &str) -> String {
    format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: {app}}}}}\nspec:\n{spec}  containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n")
}

/// The NodeClaim `pod` was planned on.
fn claim_of<'p>(plan: &'p crate::scheduling::Plan, pod: &str) -> &'p str {
    let key = format!("default/{pod}");
    plan.node_claims
        .iter()
        .find(|c| c.pods.contains(&key))
        .map(|c| c.name.as_str())
        .unwrap_or_else(|| panic!("{pod} not planned: {:?}", plan.unschedulable))
}

/// Provisioning suite › "Ignore Preferences" (`core v1.14.1:
/// pkg/controllers/provisioning/suite_test.go`, `PreferencePolicy: Ignore`): "should ignore
/// node affinity preferences", "should ignore pod affinity preferences" — the preferring pod
/// joins the NodeClaim with fewer pods (in zone a) instead of the one its preference names
/// (zone b), which it joins under the default `Respect`.
#[test]
fn ignored_affinity_preferences_leave_the_pod_on_the_least_loaded_claim() {
    let pool = pool_of("m5.xlarge, m5.2xlarge, m5.4xlarge");
    let zoned = |name: &str, app: &str, cpu: &str, zone: &str| {
        pref_pod(
            name,
            app,
            cpu,
            &format!("  nodeSelector: {{topology.kubernetes.io/zone: {zone}}}\n"),
        )
    };
    let base = format!(
        "{pool}{V1_CLASS}{}{}{}",
        zoned("zone1", "foo", "2", "us-east-1a"),
        zoned("zone2-a", "bar", "3", "us-east-1b"),
        zoned("zone2-b", "bar", "3", "us-east-1b"),
    );
    let node_preference = "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b]}]}\n";
    let pod_preference = "  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: bar}}}\n";
    for preference in [node_preference, pod_preference] {
        let text = format!("{base}{}", pref_pod("prefers", "baz", "1", preference));
        let ignored = plan_with_preferences(&text, PreferencePolicy::Ignore);
        assert_eq!(claim_of(&ignored, "prefers"), claim_of(&ignored, "zone1"));
        let respected = plan_with_preferences(&text, PreferencePolicy::Respect);
        assert_eq!(
            claim_of(&respected, "prefers"),
            claim_of(&respected, "zone2-a")
        );
    }
}

/// Provisioning suite › "Ignore Preferences": "should ignore topologySpreadConstraint
/// preferences" and "should ignore pod anti-affinity preferences" (zone and hostname Entries):
/// the pods share one NodeClaim, where `Respect` spreads them — but for zonal anti-affinity,
/// whose first NodeClaim may be in any zone and so takes every zone from the others (they relax
/// and join it: `topology.go` `Record` records every domain of an anti-affinity placement).
#[test]
fn ignored_spread_and_anti_affinity_preferences_pack_the_pods() {
    let pool = pool_of("m5.large, m5.xlarge");
    for key in ["topology.kubernetes.io/zone", "kubernetes.io/hostname"] {
        let spread = format!("  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: {key}, whenUnsatisfiable: ScheduleAnyway, labelSelector: {{matchLabels: {{app: foo}}}}}}\n");
        let anti = format!("  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        podAffinityTerm: {{topologyKey: {key}, labelSelector: {{matchLabels: {{app: foo}}}}}}\n");
        let zonal = key == "topology.kubernetes.io/zone";
        for (spec, respected_claims) in [(spread, 3), (anti, if zonal { 1 } else { 3 })] {
            let pods: String = (0..3)
                .map(|i| pref_pod(&format!("p{i}"), "foo", "100m", &spec))
                .collect();
            let text = format!("{pool}{V1_CLASS}{pods}");
            let ignored = plan_with_preferences(&text, PreferencePolicy::Ignore);
            assert_eq!(
                ignored.node_claims.len(),
                1,
                "{key}: {:?}",
                ignored.node_claims
            );
            let respected = plan_with_preferences(&text, PreferencePolicy::Respect);
            assert_eq!(respected.node_claims.len(), respected_claims, "{key}");
        }
    }
}

/// t3.large's capacity and kube-reserved memory as `build_input` sizes it for `selection`'s
/// controller settings.
fn t3_large(selection: Selection) -> (i64, i64, i64) {
    use crate::model::quantity::{MIB, ONE};
    let catalog = Catalog::embedded().unwrap();
    let text = format!("{}{V1_CLASS}{POD}", pool_of("t3.large"));
    let mut m = crate::api::load_str("in.yaml", &text).unwrap();
    let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
    let input = build_input(&mut m, &selection, &mut sizing).unwrap();
    let t = input.pools[0]
        .instance_types
        .iter()
        .find(|t| t.name == "t3.large")
        .unwrap();
    (
        t.capacity.pods / ONE,
        t.capacity.memory / MIB,
        t.overhead.kube_reserved.memory / MIB,
    )
}

/// **Differs, fixed** (s27-lineaws) — `aws v1.14.1: pkg/providers/instancetype/suite_test.go`
/// DescribeTable "should reserve ENIs when aws.reservedENIs is set and use it in max-pods
/// calculation" (Entry "al2023": 24 pods, kube-reserved 640Mi from the unreserved 35), "… and
/// not go below 0 ENIs" (0 pods), and the `VMMemoryOverheadPercent: 0` of "Eviction
/// Thresholds" (t3.large's whole 8192Mi). The controller settings `RESERVED_ENIS` and
/// `VM_MEMORY_OVERHEAD_PERCENT` were not read: the plan always sized with 0 and 0.075. Now
/// `Selection::reserved_enis` / `vm_memory_overhead_percent` (`--reserved-enis`,
/// `--vm-memory-overhead-percent`, else the running controller's) reach the sizing.
#[test]
fn the_controllers_reserved_enis_and_vm_memory_overhead_size_the_types() {
    let default = t3_large(Selection::default());
    assert_eq!(
        default,
        (35, 8192 - 615, 640),
        "0.075: ceil(8192 × 0.075) = 615"
    );
    let reserved = t3_large(Selection {
        reserved_enis: Some(1),
        ..Selection::default()
    });
    assert_eq!((reserved.0, reserved.2), (24, 640));
    let none_left = t3_large(Selection {
        reserved_enis: Some(1_000_000),
        ..Selection::default()
    });
    assert_eq!(none_left.0, 0);
    let no_overhead = t3_large(Selection {
        vm_memory_overhead_percent: Some(0.0),
        ..Selection::default()
    });
    assert_eq!(no_overhead.1, 8192);
}

/// `core v1.14.1: state/informer/nodeclaim.go` keeps only NodeClaims `nodeclaimutils.IsManaged`
/// accepts (aws: `EC2NodeClass`), so a NodeClaim launched from EKS Auto Mode's `NodeClass` (or
/// another provider's class), with room and no Node yet, is no in-flight capacity: the pending
/// pod gets a NodeClaim of pool `a`. **Differed, fixed** (s29-linestate): the pod went onto the
/// Auto Mode claim. An `EC2NodeClass` claim takes it, as before.
#[test]
fn only_this_providers_nodeclaims_are_in_flight_capacity() {
    let claim = |group: &str, kind: &str| {
        format!("---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: flight\n  labels: {{karpenter.sh/nodepool: general-purpose, topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large, kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.sh/capacity-type: on-demand}}\nspec:\n  nodeClassRef: {{group: {group}, kind: {kind}, name: default}}\n  requirements: []\nstatus: {{providerID: aws:///us-east-1a/i-flight, capacity: {{cpu: \"2\", memory: 8Gi, pods: \"29\"}}, allocatable: {{cpu: 1930m, memory: 7Gi, pods: \"29\"}}}}\n")
    };
    let base = format!("{}{V1_CLASS}{POD}", pool_of("m5.large"));
    for (group, kind, launched) in [
        ("eks.amazonaws.com", "NodeClass", 1),
        ("karpenter.test.sh", "UnmanagedNodeClass", 1),
        ("karpenter.k8s.aws", "EC2NodeClass", 0),
    ] {
        let plan = offline_plan(format!("{base}{}", claim(group, kind)));
        assert!(plan.unschedulable.is_empty(), "{group}: {plan:#?}");
        assert_eq!(plan.node_claims.len(), launched, "{group}: {plan:#?}");
    }
}
