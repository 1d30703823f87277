//! What consolidation reads of the running controller's settings (core v1.14.1
//! `pkg/operator/options/suite_test.go`): `--feature-gates` wins over `FEATURE_GATES`, and the
//! `NodeOverlay` gate (off by default) decides whether NodeOverlays count.

use serde_json::{json, Value};

use super::*;
use crate::cloud::Catalog;
use crate::k8s::fake::FakeCluster;

fn deployment(env: Value, args: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system", "generation": 1,
                     "labels": {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/version": "1.14.1"}},
        "spec": {"replicas": 1, "template": {"metadata": {}, "spec": {"containers": [{
            "name": "controller", "image": "public.ecr.aws/karpenter/controller:1.14.1",
            "env": env, "args": args}]}}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                   "availableReplicas": 1, "observedGeneration": 1}
    })
}

fn cluster(env: Value, args: Value) -> FakeCluster {
    let fake = FakeCluster::new()
        .karpenter_v1()
        .serve("karpenter.sh/v1alpha1", &["nodeoverlays"]);
    fake.put_all(vec![
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
               "spec": {"template": {"spec": {
                   "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                   "requirements": []}}}}),
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
               "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                        "subnetSelectorTerms": [{"id": "subnet-a"}],
                        "securityGroupSelectorTerms": [{"id": "sg-a"}]}}),
        json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
               "metadata": {"name": "discount"},
               "spec": {"priceAdjustment": "-50%", "requirements": []}}),
        deployment(env, args),
    ]);
    fake
}

/// "shouldn't overwrite CLI flags with environment variables", "should use environment
/// variables when CLI flags aren't set", "should use the correct default values" (the gates
/// the decision reads: SpotToSpotConsolidation, NodeOverlay and StaticCapacity, all off by
/// default).
#[test]
fn the_controllers_gates_are_its_flag_else_its_env_else_the_defaults() {
    let read = |env: Value, args: Value| {
        let (_, c) = gather_live(&cluster(env, args)).unwrap();
        let c = c.unwrap();
        (c.spot_to_spot, c.node_overlay, c.static_capacity)
    };
    assert_eq!(read(json!([]), json!([])), (None, Some(false), Some(false)));
    let env = json!([{"name": "FEATURE_GATES", "value": "SpotToSpotConsolidation=true,NodeOverlay=true,StaticCapacity=true"}]);
    assert_eq!(
        read(env.clone(), json!([])),
        (Some(true), Some(true), Some(true))
    );
    assert_eq!(
        read(
            env,
            json!(["--feature-gates", "SpotToSpotConsolidation=false"])
        ),
        (Some(false), Some(false), Some(false))
    );
}

/// **Differs, fixed** (the consolidation side): a controller with the NodeOverlay gate off
/// ignores the cluster's NodeOverlays; consolidation's prices left them out too, saying so.
#[test]
fn node_overlays_are_left_out_when_the_controllers_gate_is_off() {
    let catalog = Catalog::embedded().unwrap();
    for (env, applied) in [
        (json!([]), false),
        (
            json!([{"name": "FEATURE_GATES", "value": "NodeOverlay=true"}]),
            true,
        ),
    ] {
        let (mut m, c) = gather_live(&cluster(env, json!([]))).unwrap();
        assert_eq!(m.node_overlays.len(), 1);
        let config = Config {
            now: 1_767_225_600,
            ..Config::default()
        };
        build_input(
            &mut m,
            &mut CatalogSizing::new(&catalog, "us-east-1"),
            &config,
            c.as_ref(),
        )
        .unwrap();
        let said = m
            .warnings
            .iter()
            .any(|w| w.starts_with("NodeOverlay/discount: not applied"));
        assert_eq!(said, !applied, "{:?}", m.warnings);
        assert_eq!(m.node_overlays.len(), usize::from(applied));
    }
}
