//! Each command's two readings, as its glue in `commands/` runs them (the glue may not be called
//! from a use case: these mirror it step by step, the same calls in the same order), each
//! reduced to its decisions: JSON values compared field by field.
//!
//! - `consolidate` (`commands/consolidate.rs`): live with `--catalog` — `gather_live`, the
//!   buffers, `build_input` with the controller found — and offline `-f --catalog` —
//!   `load_paths`, `assume_instances_running`, `build_input` without one; both `evaluate`.
//! - `provision --dry-run` (`commands/provision.rs`, `provision_live.rs`): live
//!   `Live::plan_pending` with `--catalog`, offline the steps of `provision -f --catalog`.

use serde_json::{json, Value};

use super::export;
use super::world::World;
use crate::api::Manifests;
use crate::cloud::fake::FakeCloud;
use crate::cloud::launch::ClusterInfo;
use crate::cloud::Catalog;
use crate::k8s::fake::FakeCluster;
use crate::scheduling::{self, Plan};
use crate::usecases::clock::FakeClock;
use crate::usecases::consolidate::fuzz_check::gen::NOW;
use crate::usecases::consolidate::{self, Config};
use crate::usecases::live::Live;
use crate::usecases::nodes;
use crate::usecases::provisioning::input::{build_input, reschedule_deleting, CatalogSizing};
use crate::usecases::provisioning::{buffers, statics, Selection};

const REGION: &str = "us-east-1";

/// Both readings of one command: `(live, offline)`, each its decisions or its error.
pub type Pair = (Result<Value, String>, Result<Value, String>);

fn catalog(world: &World) -> Catalog {
    Catalog::from_custom_text("catalog.json", &world.catalog).unwrap()
}

fn config(world: &World) -> Config {
    Config {
        now: NOW,
        spot_to_spot: Some(world.spot_to_spot),
        reserved_capacity: Some(world.reserved_gate),
        ..Config::default()
    }
}

/// The export read as `-f` reads a file.
pub fn offline_manifests(text: &str) -> Result<Manifests, String> {
    crate::api::load_str("export.yaml", text).map_err(|e| e.to_string())
}

/// `consolidate -o json`, both ways: the report.
pub fn consolidate(world: &World, cluster: &FakeCluster, text: &str) -> Pair {
    let config = config(world);
    let live = (|| -> Result<Value, String> {
        let (mut m, controller) = consolidate::gather_live(cluster).map_err(|e| e.to_string())?;
        consolidate::read_live_buffers(cluster, &config, controller.as_ref(), &mut m)
            .map_err(|e| e.to_string())?;
        let catalog = catalog(world);
        let mut sizing = CatalogSizing::new(&catalog, REGION);
        let input = consolidate::build_input(&mut m, &mut sizing, &config, controller.as_ref())
            .map_err(|e| e.to_string())?;
        let report = consolidate::evaluate(&config, input).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(report).unwrap())
    })();
    let offline = (|| -> Result<Value, String> {
        let mut m = offline_manifests(text)?;
        consolidate::assume_instances_running(&mut m);
        let catalog = catalog(world);
        let mut sizing = CatalogSizing::new(&catalog, REGION);
        let input = consolidate::build_input(&mut m, &mut sizing, &config, None)
            .map_err(|e| e.to_string())?;
        let report = consolidate::evaluate(&config, input).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(report).unwrap())
    })();
    (live, offline)
}

fn selection() -> Selection {
    Selection {
        max_instance_types: scheduling::DEFAULT_MAX_INSTANCE_TYPES,
        ..Selection::default()
    }
}

/// `provision --dry-run -o json`, both ways: the plan's decisions.
pub fn provision(world: &World, cluster: &FakeCluster, text: &str) -> Pair {
    let live = (|| -> Result<Value, String> {
        let cloud = FakeCloud::new();
        let clock = FakeClock::at(NOW);
        let live = Live::new(
            cluster,
            &cloud,
            &clock,
            ClusterInfo {
                name: "c".into(),
                ..ClusterInfo::default()
            },
            crate::cloud::ami::KubeVersion {
                major: 1,
                minor: 29,
            },
            catalog(world),
        );
        let round = live
            .plan_pending(&selection(), &mut |_| {})
            .map_err(|e| e.to_string())?;
        // Nothing pending: live says so and plans nothing; offline the plan is empty.
        Ok(round.map_or_else(|| decisions(&Plan::default()), |r| decisions(&r.plan)))
    })();
    let offline = (|| -> Result<Value, String> {
        let mut m = offline_manifests(text)?;
        m.check_references().map_err(|e| e.to_string())?;
        buffers::apply_gate(&mut m, false, NOW);
        let catalog = catalog(world);
        let mut sizing = CatalogSizing::new(&catalog, REGION);
        let mut input =
            build_input(&mut m, &selection(), &mut sizing).map_err(|e| e.to_string())?;
        let moved = reschedule_deleting(&mut input, &m.pdbs, NOW).map_err(|e| e.to_string())?;
        let mut plan = scheduling::solve_rounds(&input);
        plan.static_scale_down = statics::scale_downs(&m, &input, NOW);
        plan.from_deleting_nodes = moved;
        scheduling::split_buffers(&mut plan, &input.pods);
        Ok(decisions(&plan))
    })();
    (live, offline)
}

/// A plan's decisions: each NodeClaim (its name apart — live names it after its pods, offline
/// counts: docs/commands.md), the pods left pending and why, the existing nodes filled.
fn decisions(plan: &Plan) -> Value {
    let claims: Vec<Value> = plan
        .node_claims
        .iter()
        .map(|c| {
            let mut pods = c.pods.clone();
            pods.sort();
            json!({"nodePool": c.node_pool, "nodeClass": c.node_class,
                "instanceType": c.launch.instance_type, "zone": c.launch.zone,
                "capacityType": c.launch.capacity_type, "price": c.launch.price,
                "zones": c.zones, "capacityTypes": c.capacity_types, "pods": pods,
                "instanceTypes": c.instance_types.iter().map(|o| o.name.to_string()).collect::<Vec<_>>(),
                "requirements": format!("{:?}", c.requirements),
                "labels": c.labels})
        })
        .collect();
    let pending: Vec<Value> = plan
        .unschedulable
        .iter()
        .map(|u| json!({"pod": u.pod, "reason": u.reason.to_string()}))
        .collect();
    let existing: Vec<Value> = (plan.existing_nodes.iter())
        .map(|e| json!({"node": e.node, "pods": e.pods}))
        .collect();
    json!({"nodeClaims": claims, "unschedulable": pending, "existingNodes": existing,
           "staticScaleDown": format!("{:?}", plan.static_scale_down),
           "fromDeletingNodes": format!("{:?}", plan.from_deleting_nodes),
           "buffers": format!("{:?}", plan.buffers)})
}

/// The EC2 instance of each Node of the world (`spec.providerID`), running, as Karpenter
/// launched it (the image its NodeClaim's `status.imageID` records): what the live `nodes`
/// and `drift check` describe.
pub fn instances(cluster: &FakeCluster) -> FakeCloud {
    let cloud = FakeCloud::new();
    let claims: Vec<Value> = ["NodeClaim", "Machine"]
        .into_iter()
        .flat_map(|kind| {
            [
                "karpenter.sh/v1",
                "karpenter.sh/v1beta1",
                "karpenter.sh/v1alpha5",
            ]
            .into_iter()
            .flat_map(move |api| cluster.list(api, kind))
        })
        .collect();
    for node in cluster.list("v1", "Node") {
        let image = (claims.iter())
            .find(|c| c["status"]["providerID"] == node["spec"]["providerID"])
            .and_then(|c| c["status"]["imageID"].as_str())
            .unwrap_or("ami-0abc")
            .to_string();
        let Some((zone, id)) = (node["spec"]["providerID"].as_str())
            .and_then(|p| p.trim_start_matches("aws:///").split_once('/'))
        else {
            continue;
        };
        let label = |k: &str| {
            node["metadata"]["labels"][k]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let pool = ["karpenter.sh/nodepool", "karpenter.sh/provisioner-name"]
            .into_iter()
            .find(|k| !label(k).is_empty());
        let mut tags: std::collections::BTreeMap<String, String> =
            [("eks:eks-cluster-name".to_string(), "c".to_string())].into();
        if let Some(k) = pool {
            tags.insert(k.to_string(), label(k));
        }
        cloud
            .instances
            .borrow_mut()
            .push(crate::model::instance::Instance {
                id: id.to_string(),
                instance_type: label("node.kubernetes.io/instance-type"),
                zone: zone.to_string(),
                subnet_id: Some(super::world::SUBNET.0.into()),
                image_id: image,
                state: "running".into(),
                capacity_type: label("karpenter.sh/capacity-type"),
                security_group_ids: vec!["sg-a".into()],
                tags,
                partition: None,
            });
    }
    cloud
}

fn request() -> nodes::Request {
    nodes::Request {
        nodepools: Vec::new(),
        selector: None,
        image_names: true,
        kubernetes_version: crate::cloud::ami::KubeVersion {
            major: 1,
            minor: 29,
        },
        now: NOW,
    }
}

/// The view's decisions and facts (`notes` apart: live none, offline the documented "AWS not
/// asked" note, docs/commands.md `nodes`).
fn view_value(view: &nodes::NodeView) -> Value {
    json!({"nodes": view.nodes, "nodePools": view.node_pools, "total": view.total,
           "gone": format!("{:?}", view.gone)})
}

/// The steps of `commands/nodes.rs` after the read, alike both ways: the decision catalog, the
/// view, then the decisions in the first node's region.
fn nodes_view(
    world: &World,
    config: &Config,
    m: Manifests,
    ec2: nodes::Ec2<'_, FakeCloud>,
    controller: Option<&consolidate::Controller>,
) -> Result<Value, String> {
    let gate = consolidate::reserved_capacity_gate(config, controller);
    let (catalog, _) = nodes::decision_catalog(
        &ec2,
        catalog(world),
        &m.node_classes,
        NOW,
        gate,
        &mut |_| {},
    );
    let mut view =
        nodes::view(&m, ec2, &catalog, &request(), &mut |_| {}).map_err(|e| e.to_string())?;
    let region =
        (view.nodes.iter().find_map(|n| n.region.clone())).unwrap_or_else(|| REGION.into());
    nodes::with_decisions(
        &mut view,
        m,
        &catalog,
        &region,
        controller,
        config,
        &mut |_| {},
    )
    .map_err(|e| e.to_string())?;
    Ok(view_value(&view))
}

/// `nodes -o json`, both ways (`commands/nodes.rs`): live with EC2 connected and `--catalog`,
/// offline `-f --catalog`.
pub fn nodes(world: &World, cluster: &FakeCluster, text: &str) -> Pair {
    let config = config(world);
    let live = (|| -> Result<Value, String> {
        let (mut m, controller) = consolidate::gather_live(cluster).map_err(|e| e.to_string())?;
        let gate = consolidate::buffer_gate(&config, controller.as_ref());
        buffers::read_live_telling(cluster, gate, &mut m).map_err(|e| e.to_string())?;
        let cloud = instances(cluster);
        let ec2 = nodes::Ec2::Connected(&cloud);
        nodes_view(world, &config, m, ec2, controller.as_ref())
    })();
    let offline = (|| -> Result<Value, String> {
        let mut m = offline_manifests(text)?;
        consolidate::assume_instances_running(&mut m);
        nodes_view(world, &config, m, nodes::Ec2::<FakeCloud>::Manifests, None)
    })();
    (live, offline)
}

/// Builds both sides of `world`.
pub fn both(world: &World) -> (FakeCluster, String) {
    let cluster = export::cluster(world);
    let text = export::export(&cluster, world.gen);
    (cluster, text)
}
