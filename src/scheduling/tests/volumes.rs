//! Volume topology and attach limits, case by case. Each test names the upstream test it mirrors
//! (`core v1.14.1: pkg/controllers/provisioning/suite_test.go` "Volume Topology Requirements" and
//! `pkg/controllers/provisioning/scheduling/suite_test.go` "VolumeUsage").

use std::sync::Arc;

use super::*;
use crate::model::pod::{ClaimSource, PodVolume};
use crate::model::requirements::NodeSelectorRequirement;
use crate::model::storage::{
    PersistentVolume, PersistentVolumeClaim, Storage, StorageClass, VolumeBindingMode,
};

/// The upstream suite's StorageClass: WaitForFirstConsumer, zones 2 and 3.
fn wait_class(name: &str, zones: &[&str]) -> StorageClass {
    StorageClass {
        name: name.into(),
        provisioner: "ebs.csi.aws.com".into(),
        binding_mode: VolumeBindingMode::WaitForFirstConsumer,
        allowed_topologies: vec![vec![NodeSelectorRequirement::new(ZONE, In, zones)]],
        ..Default::default()
    }
}

fn claim(name: &str, class: Option<&str>, volume: Option<&str>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        namespace: "default".into(),
        name: name.into(),
        storage_class: class.map(str::to_string),
        volume_name: volume.map(str::to_string),
        // `test.PersistentVolumeClaim` adds the annotation to claims that name a volume.
        bind_completed: volume.is_some(),
        ..Default::default()
    }
}

fn volume(name: &str, terms: Vec<Vec<NodeSelectorRequirement>>) -> PersistentVolume {
    PersistentVolume {
        name: name.into(),
        node_affinity: terms,
        csi_driver: Some("ebs.csi.aws.com".into()),
        ..Default::default()
    }
}

fn zone_term(zones: &[&str]) -> Vec<NodeSelectorRequirement> {
    vec![NodeSelectorRequirement::new(ZONE, In, zones)]
}

#[derive(Default)]
struct World {
    storage: Storage,
}

impl World {
    fn offline() -> Self {
        World {
            storage: Storage {
                claims_from_templates: true,
                ..Default::default()
            },
        }
    }
    fn class(mut self, c: StorageClass) -> Self {
        self.storage.classes.insert(c.name.clone(), c);
        self
    }
    fn claim(mut self, c: PersistentVolumeClaim) -> Self {
        self.storage
            .claims
            .insert((c.namespace.clone(), c.name.clone()), c);
        self
    }
    fn volume(mut self, v: PersistentVolume) -> Self {
        self.storage.volumes.insert(v.name.clone(), v);
        self
    }
    fn solve(&self, pods: Vec<Pod>) -> Plan {
        let mut inp = input(
            pods,
            vec![pool_input(node_pool("default"), small_catalog())],
        );
        inp.storage = Some(Arc::new(self.storage.clone()));
        solve(&inp)
    }
}

fn with_claims(b: PodBuilder, claims: &[&str]) -> Pod {
    let mut pod = b.build();
    pod.volumes = claims
        .iter()
        .enumerate()
        .map(|(i, c)| PodVolume {
            name: format!("vol-{i}"),
            claim: ClaimSource::Named(c.to_string()),
        })
        .collect();
    pod
}

fn with_ephemeral(b: PodBuilder, class: Option<&str>) -> Pod {
    let mut pod = b.build();
    pod.volumes = vec![PodVolume {
        name: "tmp".into(),
        claim: ClaimSource::Ephemeral {
            storage_class: class.map(str::to_string),
        },
    }];
    pod
}

fn zone_of(plan: &Plan, pod: &str) -> String {
    let c = plan
        .node_claims
        .iter()
        .find(|c| c.pods.iter().any(|p| p == pod))
        .unwrap_or_else(|| panic!("{pod} not placed: {:?}", plan.unschedulable));
    assert_eq!(c.zones.len(), 1, "{:?}", c.zones);
    c.zones[0].clone()
}

fn only_code(plan: &Plan) -> ReasonCode {
    assert!(plan.node_claims.is_empty(), "{:?}", plan.node_claims);
    assert_eq!(plan.unschedulable.len(), 1);
    plan.unschedulable[0].reason.code()
}

/// "should schedule to storage class zones if volume does not exist" and "should not schedule if
/// storage class zones are incompatible".
#[test]
fn an_unbound_claim_follows_its_storage_class_zones() {
    let w = World::default()
        .class(wait_class("sc", &["test-zone-2", "test-zone-3"]))
        .claim(claim("data", Some("sc"), None));
    let pod = |zones: &[&str]| {
        with_claims(
            PodBuilder::new("p")
                .cpu("1")
                .required_term(&[(ZONE, In, zones)]),
            &["data"],
        )
    };
    let plan = w.solve(vec![pod(&["test-zone-1", "test-zone-3"])]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-3");
    let plan = w.solve(vec![pod(&["test-zone-1"])]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeTopologyConflict);
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "NodePool default: volume topology: the pod's volumes need topology.kubernetes.io/zone \
         In [test-zone-2 test-zone-3]; the pod and the NodePool allow topology.kubernetes.io/zone \
         In [test-zone-1]"
    );
}

/// "... (ephemeral volume)": the claim `<pod>-<volume>` exists (live), or comes from the
/// template (manifests); a template without a class gets the default class ("should launch
/// nodes for pods with ephemeral volume using a default storage class").
#[test]
fn an_ephemeral_volume_follows_its_claim_or_template() {
    let class = wait_class("sc", &["test-zone-2"]);
    let w = World::offline().class(class.clone());
    let plan = w.solve(vec![with_ephemeral(
        PodBuilder::new("p").cpu("1"),
        Some("sc"),
    )]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-2");
    let mut default = wait_class("default-class", &["test-zone-3"]);
    default.is_default = true;
    let plan = World::offline()
        .class(class.clone())
        .class(default)
        .solve(vec![with_ephemeral(PodBuilder::new("p").cpu("1"), None)]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-3");
    // Live, Karpenter waits for the ephemeral-volume controller to create the claim.
    let live = World::default().class(class.clone());
    let pod = || with_ephemeral(PodBuilder::new("p").cpu("1"), Some("sc"));
    let plan = live.solve(vec![pod()]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeNotFound);
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "volume tmp: PersistentVolumeClaim default/p-tmp not found; Karpenter does not provision \
         for the pod until that changes"
    );
    let plan = World::default()
        .class(class)
        .claim(claim("p-tmp", Some("sc"), None))
        .solve(vec![pod()]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-2");
}

/// "should schedule to volume zones if volume already bound" and "should not schedule if volume
/// zones are incompatible"; the EBS CSI zone key counts as the zone label (the AWS provider's
/// NormalizedLabels).
#[test]
fn a_bound_claim_follows_its_volume_node_affinity() {
    let w = World::default()
        .class(wait_class("sc", &["test-zone-2", "test-zone-3"]))
        .volume(volume("pv", vec![zone_term(&["test-zone-3"])]))
        .claim(claim("data", Some("sc"), Some("pv")));
    let plan = w.solve(vec![with_claims(PodBuilder::new("p").cpu("1"), &["data"])]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-3");
    let plan = w.solve(vec![with_claims(
        PodBuilder::new("p")
            .cpu("1")
            .required_term(&[(ZONE, In, &["test-zone-1"])]),
        &["data"],
    )]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeTopologyConflict);
    let ebs = World::default()
        .volume(volume(
            "pv",
            vec![vec![NodeSelectorRequirement::new(
                "topology.ebs.csi.aws.com/zone",
                In,
                &["test-zone-1"],
            )]],
        ))
        .claim(claim("data", Some(""), Some("pv")));
    let plan = ebs.solve(vec![with_claims(PodBuilder::new("p").cpu("1"), &["data"])]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-1");
}

/// "should not relax an added volume topology zone node-selector away": the volume's zone holds
/// whatever required node-affinity term is tried.
#[test]
fn volume_topology_is_not_relaxed_with_the_pods_terms() {
    let w = World::default()
        .volume(volume("pv", vec![zone_term(&["test-zone-3"])]))
        .claim(claim("data", Some("sc"), Some("pv")));
    let pod = with_claims(
        PodBuilder::new("p")
            .cpu("1")
            .required_term(&[("example.com/label", In, &["unsupported"])])
            .required_term(&[(CAPACITY_TYPE, In, &["on-demand"])]),
        &["data"],
    );
    let plan = w.solve(vec![pod]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-3");
}

/// "should schedule pods using a PV with multiple zones" and "... StorageClass with multiple
/// zones in AllowedTopologies": each OR term is an alternative, so two pods with zonal
/// anti-affinity can take one zone each.
#[test]
fn each_or_term_of_a_volume_is_an_alternative() {
    let terms = vec![zone_term(&["test-zone-1"]), zone_term(&["test-zone-2"])];
    let pod = |i: usize| {
        with_claims(
            PodBuilder::new(&format!("p{i}"))
                .cpu("1")
                .label("app", "multi")
                .anti_affinity(ZONE, &[("app", "multi")]),
            &[&format!("pvc-{i}")],
        )
    };
    let mut w = World::default();
    for i in 0..2 {
        w = w
            .volume(volume(&format!("pv-{i}"), terms.clone()))
            .claim(claim(&format!("pvc-{i}"), None, Some(&format!("pv-{i}"))));
    }
    let plan = w.solve(vec![pod(0), pod(1)]);
    let (a, b) = (zone_of(&plan, "default/p0"), zone_of(&plan, "default/p1"));
    assert_ne!(a, b);
    assert!([a, b].iter().all(|z| z != "test-zone-3"));
    let mut class = wait_class("multi", &[]);
    class.allowed_topologies = terms;
    let w = World::default()
        .class(class)
        .claim(claim("pvc-0", Some("multi"), None))
        .claim(claim("pvc-1", Some("multi"), None));
    let plan = w.solve(vec![pod(0), pod(1)]);
    assert_ne!(zone_of(&plan, "default/p0"), zone_of(&plan, "default/p1"));
}

/// "should ignore hostname affinity scheduling when using local path volumes" and "should not
/// ignore hostname affinity when using non-local path volumes".
#[test]
fn a_local_volumes_hostname_is_ignored_any_other_holds() {
    let host = vec![vec![NodeSelectorRequirement::new(HOSTNAME, In, &["gone"])]];
    let mut local = volume("pv", host.clone());
    local.local = true;
    let pod = || with_claims(PodBuilder::new("p").cpu("1"), &["data"]);
    let plan = World::default()
        .volume(local)
        .claim(claim("data", Some("local-path"), Some("pv")))
        .solve(vec![pod()]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
    let plan = World::default()
        .volume(volume("pv", host))
        .claim(claim("data", Some("sc"), Some("pv")))
        .solve(vec![pod()]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeTopologyConflict);
    // The reason names the node the volume pins the pod to (thread
    // aws/karpenter-provider-aws#6540: it printed "the pod's volumes need ; the pod and the
    // NodePool allow kubernetes.io/hostname In [hostname-placeholder-…]").
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "NodePool default: volume topology: the pod's volumes need kubernetes.io/hostname In \
         [gone]; a new node has a hostname of its own, so only that node can take the pod"
    );
}

/// Karpenter's `ValidatePersistentVolumeClaims`: "should not schedule if invalid pvc", "... with
/// an empty storage class if the pvc is not bound", "... with a missing storage class if the pvc
/// is not bound", "should schedule with a missing storage class if the pvc is bound", "... unbound
/// volume for volumeBindingMode immediate", "... deleting persistentVolumeClaim", "... bound
/// persistentVolume that is marked for deletion", "... Lost persistentVolumeClaim".
#[test]
fn claims_karpenter_cannot_use_keep_the_pod_pending_with_a_reason() {
    let pod = || with_claims(PodBuilder::new("p").cpu("1"), &["data"]);
    let immediate = StorageClass {
        name: "gp2".into(),
        provisioner: "kubernetes.io/aws-ebs".into(),
        ..Default::default()
    };
    let cases: Vec<(World, ReasonCode, &str)> = vec![
        (
            World::default(),
            ReasonCode::VolumeNotFound,
            "PersistentVolumeClaim default/data not found",
        ),
        (
            World::default().claim(claim("data", Some(""), None)),
            ReasonCode::VolumeNotReady,
            "is unbound and names no StorageClass",
        ),
        (
            World::default().claim(claim("data", Some("missing"), None)),
            ReasonCode::VolumeNotFound,
            "StorageClass missing (of unbound PersistentVolumeClaim default/data) not found",
        ),
        (
            World::default()
                .class(immediate)
                .claim(claim("data", Some("gp2"), None)),
            ReasonCode::VolumeNotReady,
            "StorageClass gp2 binds Immediately",
        ),
        (
            World::default().claim(PersistentVolumeClaim {
                deleting: true,
                ..claim("data", Some("sc"), Some("pv"))
            }),
            ReasonCode::VolumeNotReady,
            "is being deleted",
        ),
        (
            World::default()
                .volume(PersistentVolume {
                    deleting: true,
                    ..volume("pv", vec![])
                })
                .claim(claim("data", Some("sc"), Some("pv"))),
            ReasonCode::VolumeNotReady,
            "PersistentVolume pv (bound to PersistentVolumeClaim default/data) is being deleted",
        ),
        (
            World::default().claim(PersistentVolumeClaim {
                lost: true,
                ..claim("data", Some("sc"), Some("pv"))
            }),
            ReasonCode::VolumeNotReady,
            "is Lost",
        ),
        (
            World::default()
                .volume(volume("pv", vec![]))
                .claim(PersistentVolumeClaim {
                    bind_completed: false,
                    ..claim("data", Some("sc"), Some("pv"))
                }),
            ReasonCode::VolumeNotReady,
            "is not bound yet (no pv.kubernetes.io/bind-completed annotation)",
        ),
        (
            World::default().claim(claim("data", Some("sc"), Some("nope"))),
            ReasonCode::VolumeNotFound,
            "PersistentVolume nope (bound to PersistentVolumeClaim default/data) not found",
        ),
    ];
    for (w, code, text) in cases {
        let plan = w.solve(vec![pod(), PodBuilder::new("fine").cpu("1").build()]);
        assert_eq!(plan.unschedulable.len(), 1, "{text}");
        let reason = &plan.unschedulable[0].reason;
        assert_eq!(reason.code(), code, "{reason}");
        assert!(reason.to_string().contains(text), "{reason}");
        assert_eq!(
            plan.node_claims.len(),
            1,
            "the other pod is placed ({text})"
        );
    }
    // A bound claim needs its volume, not its class.
    let plan = World::default()
        .volume(volume("pv", vec![]))
        .claim(claim("data", Some("missing"), Some("pv")))
        .solve(vec![pod()]);
    assert!(plan.unschedulable.is_empty(), "{:?}", plan.unschedulable);
}

/// An existing node (its attach limit is its CSINode's, in the storage view).
fn csi_node(name: &str) -> ExistingNode {
    ExistingNode {
        node: Node {
            name: name.into(),
            labels: labels_of(&[(HOSTNAME, name), (ZONE, "test-zone-1")]),
            allocatable: crate::model::resources::Resources::from_pairs(&[
                ("cpu", "64"),
                ("memory", "64Gi"),
                ("pods", "100"),
            ]),
            ready: true,
            initialized: true,
            ..Default::default()
        },
        pods: vec![],
    }
}

/// "should launch multiple nodes if required due to volume limits": a node whose CSINode allows
/// 10 volumes takes 5 pods with 2 claims each; the 6th needs a new node. And "should launch a
/// single node if all pods use the same PVC": a shared claim counts once.
#[test]
fn an_existing_nodes_attach_limit_is_respected() {
    let mut w = World::default().class(wait_class("sc", &["test-zone-1"]));
    w.storage.attach_limits.insert(
        "node-a".into(),
        [("ebs.csi.aws.com".to_string(), 10)].into(),
    );
    let mut pods = Vec::new();
    for i in 0..6 {
        w = w
            .claim(claim(&format!("a-{i}"), Some("sc"), None))
            .claim(claim(&format!("b-{i}"), Some("sc"), None));
        pods.push(with_claims(
            PodBuilder::new(&format!("p{i}")).cpu("100m"),
            &[&format!("a-{i}"), &format!("b-{i}")],
        ));
    }
    let mut inp = input(
        pods,
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(csi_node("node-a"));
    inp.storage = Some(Arc::new(w.storage.clone()));
    let plan = solve(&inp);
    assert_eq!(plan.existing_nodes[0].pods.len(), 5, "{plan:?}");
    assert_eq!(plan.node_claims.len(), 1);
    assert_eq!(plan.node_claims[0].pods.len(), 1);
    // The same claim for every pod: one volume.
    let mut shared = World::default()
        .class(wait_class("sc", &["test-zone-1"]))
        .volume(volume("pv", vec![zone_term(&["test-zone-1"])]))
        .claim(claim("shared", Some("sc"), Some("pv")));
    shared
        .storage
        .attach_limits
        .insert("node-a".into(), [("ebs.csi.aws.com".to_string(), 1)].into());
    let mut inp = input(
        (0..20)
            .map(|i| with_claims(PodBuilder::new(&format!("p{i}")).cpu("100m"), &["shared"]))
            .collect(),
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(csi_node("node-a"));
    inp.storage = Some(Arc::new(shared.storage));
    let plan = solve(&inp);
    assert_eq!(plan.existing_nodes[0].pods.len(), 20, "{plan:?}");
    assert!(plan.node_claims.is_empty());
}

/// Volumes of pods already on the node count against its limit (cluster state tracks them).
#[test]
fn bound_pods_volumes_count_against_the_limit() {
    let mut w = World::default()
        .class(wait_class("sc", &["test-zone-1"]))
        .claim(claim("old", Some("sc"), None))
        .claim(claim("new", Some("sc"), None));
    w.storage
        .attach_limits
        .insert("node-a".into(), [("ebs.csi.aws.com".to_string(), 1)].into());
    let mut node = csi_node("node-a");
    node.pods.push(with_claims(
        PodBuilder::new("old").cpu("100m").on_node("node-a"),
        &["old"],
    ));
    let mut inp = input(
        vec![with_claims(PodBuilder::new("p").cpu("100m"), &["new"])],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.existing_nodes.push(node);
    inp.storage = Some(Arc::new(w.storage));
    let plan = solve(&inp);
    assert!(plan.existing_nodes.is_empty(), "{plan:?}");
    assert_eq!(plan.node_claims.len(), 1);
}

/// Without a storage view (`storage: None`, e.g. a simulation), volumes are not looked at.
#[test]
fn without_storage_volumes_are_not_looked_at() {
    let mut inp = input(
        vec![with_claims(PodBuilder::new("p").cpu("1"), &["nowhere"])],
        vec![pool_input(node_pool("default"), small_catalog())],
    );
    inp.storage = None;
    assert!(solve(&inp).unschedulable.is_empty());
}

/// A volume in a zone where the pool offers no instance type (its subnets, say): named as a
/// volume topology conflict, not as a resource shortfall.
#[test]
fn a_volume_where_no_instance_type_is_offered_is_named() {
    let plan = World::default()
        .volume(volume("pv", vec![zone_term(&["test-zone-9"])]))
        .claim(claim("data", Some("sc"), Some("pv")))
        .solve(vec![with_claims(PodBuilder::new("p").cpu("1"), &["data"])]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeTopologyConflict);
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "NodePool default: volume topology: no instance type of the NodePool is offered where \
         the pod's volumes are (topology.kubernetes.io/zone In [test-zone-9])"
    );
}

/// core 7e9d42691 "fix: support volume topology scheduling alternatives (#2743)", its It "should
/// schedule pods when a valid multi-volume topology alternative remains after pruning disjoint
/// branches" (`scheduling/suite_test.go`): two claims, each with two allowed-topology terms over
/// the fake's well-known `special` label, played by the well-known `instance-category` (only the
/// large type carries it, `optional`; a label no NodePool defines must be well-known); of the four
/// combinations only (optional) × (zone-1, optional) is launchable, and the pod lands there.
#[test]
fn a_multi_volume_alternative_survives_pruning_of_disjoint_branches() {
    use crate::model::requirements::Requirement;
    const SPECIAL: &str = crate::model::labels::INSTANCE_CATEGORY;
    let mut catalog = small_catalog();
    for t in &mut catalog {
        if t.name == "large" {
            t.requirements.add(Requirement::single(SPECIAL, "optional"));
        } else {
            t.requirements.add(Requirement::new(
                SPECIAL,
                DoesNotExist,
                std::iter::empty::<String>(),
            ));
        }
    }
    let term = |pairs: &[(&str, &str)]| -> Vec<NodeSelectorRequirement> {
        pairs
            .iter()
            .map(|(k, v)| NodeSelectorRequirement::new(k, In, &[v]))
            .collect()
    };
    let mut a = wait_class("a", &[]);
    a.allowed_topologies = vec![
        term(&[(SPECIAL, "required")]),
        term(&[(SPECIAL, "optional")]),
    ];
    let mut b = wait_class("b", &[]);
    b.allowed_topologies = vec![
        term(&[(ZONE, "test-zone-1"), (SPECIAL, "optional")]),
        term(&[(ZONE, "test-zone-2"), (SPECIAL, "required")]),
    ];
    let w = World::default()
        .class(a)
        .class(b)
        .claim(claim("pvc-a", Some("a"), None))
        .claim(claim("pvc-b", Some("b"), None));
    let mut inp = input(
        vec![with_claims(
            PodBuilder::new("p").cpu("1"),
            &["pvc-a", "pvc-b"],
        )],
        vec![pool_input(node_pool("default"), catalog)],
    );
    inp.storage = Some(Arc::new(w.storage.clone()));
    let plan = solve(&inp);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-1");
    let names: Vec<&str> = plan.node_claims[0]
        .instance_types
        .iter()
        .map(|o| &*o.name)
        .collect();
    assert_eq!(names, ["large"]);
}

/// Thread aws/karpenter-provider-aws#4192 (also #4407, #7713): a pod mounting EBS volumes from
/// three zones. Karpenter v1.14.1 `volumetopology.go` `mergeVolumeRequirementAlternatives` keeps
/// the incompatible product when no branch intersects, which reads `topology.kubernetes.io/zone
/// DoesNotExist` in its log; the reporter asked what that means. The reason now names each
/// claim's zone; one zone apiece that intersects still schedules.
#[test]
fn volumes_in_different_zones_are_named_claim_by_claim() {
    let pod = || with_claims(PodBuilder::new("p").cpu("1"), &["a", "b"]);
    let plan = World::default()
        .volume(volume("pv-a", vec![zone_term(&["test-zone-1"])]))
        .volume(volume("pv-b", vec![zone_term(&["test-zone-2"])]))
        .claim(claim("a", Some("sc"), Some("pv-a")))
        .claim(claim("b", Some("sc"), Some("pv-b")))
        .solve(vec![pod()]);
    assert_eq!(only_code(&plan), ReasonCode::VolumeTopologyConflict);
    assert_eq!(
        plan.unschedulable[0].reason.to_string(),
        "NodePool default: volume topology: the pod's volumes cannot share a node: \
         PersistentVolumeClaim default/a needs topology.kubernetes.io/zone In [test-zone-1]; \
         PersistentVolumeClaim default/b needs topology.kubernetes.io/zone In [test-zone-2] \
         (together: topology.kubernetes.io/zone DoesNotExist)"
    );
    let plan = World::default()
        .volume(volume(
            "pv-a",
            vec![zone_term(&["test-zone-1", "test-zone-2"])],
        ))
        .volume(volume("pv-b", vec![zone_term(&["test-zone-2"])]))
        .claim(claim("a", Some("sc"), Some("pv-a")))
        .claim(claim("b", Some("sc"), Some("pv-b")))
        .solve(vec![pod()]);
    assert_eq!(zone_of(&plan, "default/p"), "test-zone-2");
}
