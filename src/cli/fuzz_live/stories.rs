//! The live worlds the fuzzer serves and the read-only commands it runs on them. Each story is
//! what the command's glue does after connecting (`commands::{provision_live, drift,
//! live::drift, nodes, consolidate, consolidate_live, drift_replace, drift_gate}`), step for
//! step, with the in-memory cluster behind the mutating proxy instead of kube-rs, the fake
//! cloud instead of the AWS SDK, the fake clock, and output rendered into buffers.

use serde_json::{json, Value};

use super::mutate::Mutating;
use crate::cli::render;
use crate::cli::render::gate::Console;
use crate::cli::{GlobalArgs, OutputFormat};
use crate::cloud::fake::FakeCloud;
use crate::cloud::launch::ClusterInfo;
use crate::drift;
use crate::error::{CommandError, CommandResult, Exit};
use crate::k8s::snapshot::{self, Scope};
use crate::usecases::clock::FakeClock;
use crate::usecases::consolidate::execute::{self, Deciding};
use crate::usecases::consolidate::{self, Config};
use crate::usecases::drift_check::{self, Mode};
use crate::usecases::drift_gate::{self, Action};
use crate::usecases::live::{fill_subnet_zones, Live};
use crate::usecases::nodes::{self, Ec2};
use crate::usecases::provisioning::input::CatalogSizing;
use crate::usecases::provisioning::{buffers, Selection};
use crate::usecases::replace::{self, pipeline, select, Settings};
use crate::usecases::testing::{node_pool, put_pending, World, CLUSTER, START};

/// The read-only live commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Story {
    /// `provision --dry-run`.
    Provision,
    /// `drift check`.
    DriftCheck,
    /// `nodes`.
    Nodes,
    /// `consolidate` (the report).
    Consolidate,
    /// `consolidate --dry-run`.
    ConsolidateDryRun,
    /// `drift replace --dry-run`.
    DriftReplace,
    /// `enable-drift --dry-run`.
    EnableDrift,
}

/// Every story.
pub const STORIES: [Story; 7] = [
    Story::Provision,
    Story::DriftCheck,
    Story::Nodes,
    Story::Consolidate,
    Story::ConsolidateDryRun,
    Story::DriftReplace,
    Story::EnableDrift,
];

/// The world's variants: what a real cluster holds beside the happy path.
pub const VARIANTS: usize = 4;

/// A v1 cluster with three managed nodes (one a claimless node this tool launched), pending and
/// bound pods, a DaemonSet, a PDB, a Node without status, a NodeClaim mid-creation, a node no
/// Karpenter manages and the Karpenter v1 controller; `variant` adds other generations side by
/// side (v1beta1 CRDs served too, v1alpha5 Provisioners and Machines, a NodeOverlay) or a
/// v0.32 controller.
pub fn world(variant: usize) -> World {
    let w = World::new();
    w.cluster.put(node_pool(
        "default",
        json!({"disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "0s", "budgets": [{"nodes": "50%"}]}}),
    ));
    let a = w.managed_node("c6a.xlarge", &["a-0", "a-1"]);
    w.managed_node("c6a.large", &["b-0"]);
    w.registered_node("default", "c6a.large");
    put_pending(&w.cluster, "p-0", "1");
    put_pending(&w.cluster, "p-1", "500m");
    w.cluster.put(json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "kube-system", "uid": "ds-1"},
        "spec": {"selector": {"matchLabels": {"app": "ds"}}, "template": {
            "metadata": {"labels": {"app": "ds"}},
            "spec": {"containers": [{"name": "c", "image": "agent",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                "tolerations": [{"operator": "Exists"}]}}}
    }));
    w.cluster.put(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "app"}}},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 1,
            "expectedPods": 3}
    }));
    // A node whose kubelet has not reported yet, and one no Karpenter manages.
    w.cluster.put(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "bare", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"providerID": "aws:///us-east-1a/i-0bare"}
    }));
    w.cluster.put(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "system", "labels": {"kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "m5.large",
            "topology.kubernetes.io/zone": "us-east-1b"}},
        "spec": {"taints": [{"key": "CriticalAddonsOnly", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "1930m", "memory": "7Gi", "pods": "29"},
            "conditions": [{"type": "Ready", "status": "True"}]}
    }));
    // A NodeClaim Karpenter just created: no status, no node yet.
    w.cluster.put(json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-new", "labels": {"karpenter.sh/nodepool": "default"},
            "creationTimestamp": crate::model::time::format_rfc3339(START - 5)},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
            "name": "default"}, "requirements": [{"key": "node.kubernetes.io/instance-type",
            "operator": "In", "values": ["c6a.large"]}]}
    }));
    w.cluster.update("v1", "Node", None, &a, |n| {
        n["metadata"]["annotations"] = json!({"karpenter.sh/nodepool-hash": "123",
            "karpenter.sh/nodepool-hash-version": "v3"});
    });
    let (version, image) = match variant {
        3 => ("0.32.10", "public.ecr.aws/karpenter/controller:v0.32.10"),
        _ => ("1.14.1", "public.ecr.aws/karpenter/controller:1.14.1"),
    };
    w.cluster.put(controller(version, image));
    match variant {
        1 => {
            let fake = w.cluster.clone().karpenter_v1beta1();
            fake.put(json!({
                "apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool",
                "metadata": {"name": "old"},
                "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"},
                    "kubelet": {"maxPods": 110}}},
                    "disruption": {"consolidationPolicy": "WhenUnderutilized"}}
            }));
        }
        2 => {
            let fake = w
                .cluster
                .clone()
                .karpenter_v1alpha5()
                .serve("karpenter.sh/v1alpha1", &["nodeoverlays"]);
            fake.put(json!({
                "apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
                "metadata": {"name": "legacy"},
                "spec": {"providerRef": {"name": "default"}, "ttlSecondsAfterEmpty": 30}
            }));
            fake.put(json!({
                "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
                "metadata": {"name": "cheaper"},
                "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type",
                    "operator": "In", "values": ["c6a.large"]}], "priceAdjustment": "-10%"}
            }));
        }
        _ => {}
    }
    w
}

/// The Karpenter controller's Deployment, ready.
fn controller(version: &str, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "karpenter", "generation": 1,
            "labels": {"app.kubernetes.io/name": "karpenter",
                "app.kubernetes.io/version": version}},
        "spec": {"replicas": 1, "template": {"metadata": {}, "spec": {"containers": [
            {"name": "controller", "image": image, "env": [
                {"name": "CLUSTER_NAME", "value": CLUSTER},
                {"name": "FEATURE_GATES", "value": "SpotToSpotConsolidation=true"}]}]}}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
            "availableReplicas": 1, "observedGeneration": 1}
    })
}

/// What a story printed.
#[derive(Default)]
pub struct Printed {
    /// stdout.
    pub out: Vec<u8>,
    /// stderr.
    pub err: Vec<u8>,
}

/// Runs `story` on `w` with the proxy `c` in front of its cluster.
pub fn run(story: Story, w: &World, c: &Mutating, json: bool, p: &mut Printed) -> CommandResult {
    let global = GlobalArgs {
        output: if json {
            OutputFormat::Json
        } else {
            OutputFormat::Table
        },
        region: Some("us-east-1".into()),
        ..GlobalArgs::default()
    };
    let cloud: &FakeCloud = &w.cloud;
    let clock: &FakeClock = &w.clock;
    let mut live = Live::new(
        c,
        cloud,
        clock,
        ClusterInfo {
            name: CLUSTER.into(),
            endpoint: "https://api.test-cluster.example".into(),
            ca_bundle: "Q0E=".into(),
            ..ClusterInfo::default()
        },
        crate::cloud::ami::KubeVersion {
            major: 1,
            minor: 29,
        },
        w.catalog.clone(),
    );
    let io = render::io_error;
    let config = Config {
        now: START,
        ..Config::default()
    };
    match story {
        Story::Provision => {
            let controller = settings_followed(c)?;
            let selection = Selection {
                max_instance_types: 60,
                node_overlay_gate: controller.as_ref().and_then(|c| c.node_overlay),
                ..Selection::default()
            };
            let Some(round) = live.plan_pending(&selection, &mut |_| {})? else {
                render::plan::nothing_pending(&mut p.out, &global, "us-east-1").map_err(io)?;
                return Ok(Exit::Ok);
            };
            render::plan::plan(&mut p.out, &global, &round.plan, "us-east-1").map_err(io)?;
            Ok(if round.plan.unschedulable.is_empty() {
                Exit::Ok
            } else {
                Exit::Finding
            })
        }
        Story::DriftCheck => {
            let check = drift_check::Config::default();
            let snapshot = gather(w, c)?;
            let report = drift_check::check(&check, snapshot, Mode::Live, Some(live.version))?;
            render::drift::report(&global, &mut p.out, &mut p.err, &report)?;
            Ok(if report.any_drifted() {
                Exit::Finding
            } else {
                Exit::Ok
            })
        }
        Story::Nodes => {
            let (mut manifests, controller) = consolidate::gather_live(c)?;
            let gate = consolidate::buffer_gate(&config, controller.as_ref());
            let _ = buffers::read_live_telling(c, gate, &mut manifests)?;
            let ec2 = if nodes::instance_ids(&manifests).is_empty() {
                Ec2::NothingToAsk
            } else {
                Ec2::Connected(cloud)
            };
            let gate = consolidate::reserved_capacity_gate(&config, controller.as_ref());
            let (catalog, _) = nodes::decision_catalog(
                &ec2,
                w.catalog.clone(),
                &manifests.node_classes,
                START,
                gate,
                &mut |_| {},
            );
            let request = nodes::Request {
                nodepools: Vec::new(),
                selector: None,
                image_names: json,
                kubernetes_version: live.version,
                now: START,
            };
            let mut view = nodes::view(&manifests, ec2, &catalog, &request, &mut |_| {})?;
            let region = "us-east-1";
            let told = &mut |_| {};
            let ctl = controller.as_ref();
            nodes::with_decisions(&mut view, manifests, &catalog, region, ctl, &config, told)?;
            render::nodes::view(&global, &mut p.out, &mut p.err, &view)?;
            Ok(Exit::Ok)
        }
        Story::Consolidate => {
            let (mut manifests, controller) = consolidate::gather_live(c)?;
            let gone = consolidate::gone_instances(cloud, &manifests)?;
            let gate = consolidate::reserved_capacity_gate(&config, controller.as_ref());
            let (catalog, _) = consolidate::decision_catalog(
                Some(cloud),
                w.catalog.clone(),
                &manifests.node_classes,
                START,
                gate,
            )?;
            let classes = &mut manifests.node_classes;
            let pools = &manifests.node_pools;
            let _ = fill_subnet_zones(cloud, classes, pools, START, &mut Default::default());
            let ctl = controller.as_ref();
            let _ = consolidate::read_live_buffers(c, &config, ctl, &mut manifests)?;
            let mut sizing = CatalogSizing::new(&catalog, "us-east-1");
            let mut input = consolidate::build_input(&mut manifests, &mut sizing, &config, ctl)?;
            consolidate::leave_out_gone(&mut input, &gone);
            let report = consolidate::evaluate(&config, input)?;
            render::consolidate::report(&global, &mut p.out, &mut p.err, &report)?;
            Ok(if report.actions.is_empty() {
                Exit::Ok
            } else {
                Exit::Finding
            })
        }
        Story::ConsolidateDryRun => {
            let deciding = Deciding {
                config: config.clone(),
                controller: consolidate::controller(c)?,
            };
            deciding.prepare(&mut live);
            let mut settings = settings();
            settings.capacity_buffers =
                consolidate::buffer_gate(&config, deciding.controller.as_ref());
            let round = execute::decide(&live, &deciding)?;
            let settings = round.settings(&settings);
            let preview = pipeline::preview(&live, &round.manifests, round.actions, &settings)?;
            render::consolidate::round(&mut p.out, true, 1, true, preview.outcomes())
                .map_err(io)?;
            let outcomes = preview.into_outcomes();
            render::replace::report(&mut p.out, &global, &outcomes, true).map_err(io)?;
            Ok(if outcomes.is_empty() {
                Exit::Ok
            } else {
                Exit::Finding
            })
        }
        Story::DriftReplace => {
            let controller = settings_followed(c)?;
            let mut settings = settings();
            settings.policies = consolidate::policies(&config, controller.as_ref());
            let (manifests, _) = replace::read_cluster_with_buffers(c, false, START)?;
            let check = drift_check::Config::default();
            let mut verdicts = gather(w, c)?;
            settings.gone_instances = replace::gone_instances(&verdicts);
            select::check_named(&verdicts, &[])?;
            drift_check::select_nodes(&check, &mut verdicts)?;
            let evaluation = drift::evaluate(&verdicts);
            let actions = select::select(&manifests, &verdicts, &evaluation, &[], &mut |_| {});
            let preview = pipeline::preview(&live, &manifests, actions, &settings)?;
            render::replace::table(&mut p.out, true, preview.outcomes()).map_err(io)?;
            let outcomes = preview.into_outcomes();
            render::replace::report(&mut p.out, &global, &outcomes, true).map_err(io)?;
            replace::verdict(&outcomes)
        }
        Story::EnableDrift => {
            let request = drift_gate::Request {
                action: Action::Enable,
                namespace: None,
                restart: true,
                dry_run: true,
                timeout: std::time::Duration::from_secs(300),
            };
            let mut console = Console::new(&global, &mut p.out, &mut p.err, Action::Enable, false);
            let outcome = drift_gate::run(c, clock, &request, &mut console)?;
            console.finish(&outcome, true, true)
        }
    }
}

/// `commands::live::drift::gather`: the cluster read, EC2 asked, the CA bundle.
fn gather(w: &World, c: &Mutating) -> Result<crate::drift::DriftSnapshot, CommandError> {
    let version = crate::cloud::ami::KubeVersion {
        major: 1,
        minor: 29,
    };
    let read = snapshot::read(c, Scope::default())?;
    let catalog = w.catalog.clone();
    let mut snapshot =
        drift_check::gather(&read.manifests, &*w.cloud, version, START, &mut |_| {
            Ok(catalog.clone())
        })?;
    snapshot.ca_bundle = drift_check::ca_bundle(c).ok().flatten();
    Ok(snapshot)
}

/// `commands::live::controller_policies` without policy flags: the running controller's
/// settings, none when they cannot be read (a note), a policy Karpenter refuses an error.
fn settings_followed(c: &Mutating) -> Result<Option<consolidate::Controller>, CommandError> {
    match consolidate::controller(c) {
        Ok(controller) => Ok(controller),
        Err(e) if e.exit == Exit::Input => Err(e),
        Err(_) => Ok(None),
    }
}

/// `drift replace`'s and `consolidate`'s defaults.
fn settings() -> Settings {
    Settings {
        max_parallel: 100,
        force: false,
        drain_timeout: std::time::Duration::from_secs(600),
        ready_timeout: std::time::Duration::from_secs(600),
        attempt: crate::model::time::format_rfc3339(START),
        gone_instances: Default::default(),
        policies: Default::default(),
        capacity_buffers: false,
    }
}
