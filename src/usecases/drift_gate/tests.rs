//! Every branch of the gate workflow against the in-memory cluster and clock: each generation
//! on and off, the second run that changes nothing, `--dry-run`, `--no-restart`, the rollout
//! (finished, stuck, failed, interrupted), a concurrent edit, and refusals.

use serde_json::{json, Value};

use super::*;
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::k8s::{Method, Request as ApiRequest, Response};
use crate::karpenter_install::SPOT_TO_SPOT_CONSOLIDATION;
use crate::usecases::clock::FakeClock;

const NS: &str = "karpenter";
const CM: &str = "/api/v1/namespaces/karpenter/configmaps/karpenter-global-settings";
const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/karpenter/deployments/karpenter";
/// 2024-06-24T12:00:00Z.
const START: i64 = 1_719_230_400;

/// The fake plus what the API server itself does when a Deployment's spec changes: it bumps
/// `metadata.generation` (the fake stores patches as they come).
struct ApiServer(FakeCluster);

impl Cluster for ApiServer {
    fn send(&self, request: ApiRequest) -> Result<Response, ClusterError> {
        let deployment = request.method == Method::Patch && request.path.contains("/deployments/");
        let response = self.0.send(request)?;
        if deployment && response.ok() {
            self.0
                .update("apps/v1", "Deployment", Some(NS), "karpenter", |d| {
                    let g = d["metadata"]["generation"].as_i64().unwrap_or(1);
                    d["metadata"]["generation"] = json!(g + 1);
                });
        }
        Ok(response)
    }

    fn request_count(&self) -> u64 {
        self.0.request_count()
    }
}

/// A cluster, its clock, and the Deployment controller acting on each tick.
struct World {
    fake: FakeCluster,
    api: ApiServer,
    clock: FakeClock,
}

impl World {
    fn new(objects: Vec<Value>) -> World {
        World::with(FakeCluster::new(), objects)
    }

    fn with(fake: FakeCluster, objects: Vec<Value>) -> World {
        fake.put_all(objects);
        World {
            api: ApiServer(fake.clone()),
            fake,
            clock: FakeClock::at(START),
        }
    }

    /// The Deployment controller: a new generation is rolled out on the next tick.
    fn rolls_out(self) -> World {
        let fake = self.fake.clone();
        self.clock.on_tick(move |_| {
            let Some(d) = fake.get("apps/v1", "Deployment", Some(NS), "karpenter") else {
                return;
            };
            let generation = d["metadata"]["generation"].as_i64().unwrap_or(1);
            if d["status"]["observedGeneration"].as_i64() < Some(generation) {
                fake.update("apps/v1", "Deployment", Some(NS), "karpenter", |d| {
                    d["status"]["observedGeneration"] = json!(generation);
                });
            }
        });
        self
    }

    fn run(&self, request: &Request, operator: &mut Recorder) -> Result<Outcome, CommandError> {
        run(&self.api, &self.clock, request, operator)
    }

    fn deployment(&self) -> Value {
        self.fake
            .get("apps/v1", "Deployment", Some(NS), "karpenter")
            .unwrap()
    }

    fn drift_key(&self) -> Option<String> {
        self.fake
            .get("v1", "ConfigMap", Some(NS), "karpenter-global-settings")?
            .pointer("/data/featureGates.driftEnabled")?
            .as_str()
            .map(str::to_string)
    }

    fn feature_gates(&self) -> Option<String> {
        self.deployment()
            .pointer("/spec/template/spec/containers/0/env")?
            .as_array()?
            .iter()
            .find(|e| e["name"] == "FEATURE_GATES")?["value"]
            .as_str()
            .map(str::to_string)
    }
}

/// The operator: records what it is told as short lines, answers with `yes`, and runs
/// `meanwhile` when asked (another actor editing the cluster between reading and writing).
#[derive(Default)]
struct Recorder {
    yes: bool,
    told: Vec<String>,
    asked: Vec<String>,
    meanwhile: Option<Box<dyn FnMut()>>,
}

impl Recorder {
    fn yes() -> Recorder {
        Recorder {
            yes: true,
            ..Recorder::default()
        }
    }
}

impl Operator for Recorder {
    fn tell(&mut self, event: Event<'_>) -> Result<(), CommandError> {
        self.told.push(match event {
            Event::Guessed(i) => format!("guessed {}", i.generation.label()),
            Event::Found(i) => format!("found {} {}", i.controller.key(), i.generation.label()),
            Event::Proposed(changes) => format!("proposed {}", changes.len()),
            Event::Written(c) => format!("written {}", c.field),
            Event::RolloutStarted(c) => format!("rollout {}", c.name),
            Event::RolloutWaiting(m) => format!("waiting: {m}"),
            Event::RolledOut(c) => format!("rolled out {}", c.name),
        });
        Ok(())
    }

    fn confirm(&mut self, question: &Question<'_>) -> Result<bool, CommandError> {
        self.asked.push(format!(
            "{:?} {} restarts={} changes={}",
            question.action,
            question.controller.key(),
            question.restarts,
            question.changes.len()
        ));
        if let Some(meanwhile) = &mut self.meanwhile {
            meanwhile();
        }
        Ok(self.yes)
    }
}

fn request(action: Action) -> Request {
    Request {
        action,
        namespace: None,
        restart: true,
        dry_run: false,
        timeout: Duration::from_secs(300),
    }
}

/// The controller Deployment (rolled out) with a version label (`None`: none) and the
/// controller container's env (`Null`: no env list).
fn controller(version: Option<&str>, image: &str, env: Value) -> Value {
    let mut labels = json!({"app.kubernetes.io/name": "karpenter"});
    if let Some(v) = version {
        labels["app.kubernetes.io/version"] = json!(v);
    }
    let mut container = json!({"name": "controller", "image": image});
    if !env.is_null() {
        container["env"] = env;
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": NS, "generation": 1, "labels": labels},
        "spec": {"replicas": 1, "template": {"metadata": {}, "spec": {"containers": [container]}}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                   "availableReplicas": 1, "observedGeneration": 1}
    })
}

fn v027() -> Value {
    controller(
        Some("0.27.6"),
        "public.ecr.aws/karpenter/controller:v0.27.6",
        json!([{"name": "CLUSTER_NAME", "value": "demo"}]),
    )
}

fn v033(gates: Option<&str>) -> Value {
    let env = match gates {
        Some(g) => json!([{"name": "FEATURE_GATES", "value": g}]),
        None => Value::Null,
    };
    controller(
        Some("0.33.0"),
        "public.ecr.aws/karpenter/controller:0.33.0",
        env,
    )
}

/// `karpenter-global-settings` with `featureGates.driftEnabled` (`None`: without the key).
fn settings(drift: Option<&str>) -> Value {
    let mut data = json!({"aws.clusterName": "demo"});
    if let Some(d) = drift {
        data["featureGates.driftEnabled"] = json!(d);
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "karpenter-global-settings", "namespace": NS}, "data": data})
}

fn writes(w: &World) -> Vec<String> {
    w.fake.writes()
}

#[test]
fn v027_enable_patches_the_configmap_with_a_test_then_restarts_and_waits() {
    let w = World::new(vec![v027(), settings(Some("false"))]).rolls_out();
    let mut op = Recorder::yes();
    let out = w.run(&request(Action::Enable), &mut op).unwrap();
    assert_eq!(out.done, Done::Applied { restarted: true });
    assert_eq!(
        writes(&w),
        [format!("PATCH {CM}"), format!("PATCH {DEPLOYMENT}")]
    );
    let patches: Vec<(Value, &str)> = w
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.method == Method::Patch)
        .map(|r| (r.body, r.content_type))
        .collect();
    assert_eq!(
        patches[0],
        (
            json!([
                {"op": "test", "path": "/data/featureGates.driftEnabled", "value": "false"},
                {"op": "replace", "path": "/data/featureGates.driftEnabled", "value": "true"},
            ]),
            "application/json-patch+json"
        )
    );
    assert_eq!(patches[1].1, "application/strategic-merge-patch+json");
    assert_eq!(w.drift_key().as_deref(), Some("true"));
    assert_eq!(
        w.deployment()
            .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"),
        Some(&json!("2024-06-24T12:00:00Z"))
    );
    assert_eq!(
        op.told,
        [
            "found karpenter/karpenter v0.21-v0.31",
            "proposed 2",
            "written featureGates.driftEnabled",
            "written spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]",
            "rollout karpenter",
            "waiting: Waiting for deployment spec update to be observed...",
            "rolled out karpenter",
        ]
    );
    assert_eq!(
        op.asked,
        ["Enable karpenter/karpenter restarts=true changes=2"]
    );
    assert_eq!(out.changes[1].old, None);
    assert_eq!(out.install.detected_by, DetectedBy::Version);
}

#[test]
fn v027_a_second_run_changes_nothing_and_asks_nothing() {
    let w = World::new(vec![v027(), settings(Some("false"))]).rolls_out();
    w.run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    w.fake.clear_requests();
    let mut op = Recorder::yes();
    let out = w.run(&request(Action::Enable), &mut op).unwrap();
    assert_eq!(
        out.done,
        Done::Unchanged(Already::Setting(Some("true".into())))
    );
    assert!(out.changes.is_empty());
    assert!(writes(&w).is_empty());
    assert!(op.asked.is_empty());
    // Disabling a ConfigMap without the key: absent means off.
    let w = World::new(vec![v027(), settings(None)]);
    let out = w
        .run(&request(Action::Disable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(out.done, Done::Unchanged(Already::Setting(None)));
    assert!(writes(&w).is_empty());
}

#[test]
fn v027_disable_then_no_restart_only_edits_the_configmap() {
    let w = World::new(vec![v027(), settings(Some("true"))]);
    let mut op = Recorder::yes();
    let out = w
        .run(
            &Request {
                restart: false,
                ..request(Action::Disable)
            },
            &mut op,
        )
        .unwrap();
    assert_eq!(out.done, Done::Applied { restarted: false });
    assert_eq!(out.changes.len(), 1);
    assert_eq!(writes(&w), [format!("PATCH {CM}")]);
    assert_eq!(w.drift_key().as_deref(), Some("false"));
    assert!(op.told.iter().all(|t| !t.starts_with("rollout")));
    assert_eq!(
        op.asked,
        ["Disable karpenter/karpenter restarts=false changes=1"]
    );
}

#[test]
fn v027_without_the_settings_configmap_is_a_cluster_error() {
    let w = World::new(vec![v027()]);
    let err = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert_eq!(
        err.message,
        "ConfigMap karpenter/karpenter-global-settings not found: Karpenter 0.27.6 (v0.21-v0.31) reads featureGates.driftEnabled from it"
    );
    assert!(writes(&w).is_empty());
}

#[test]
fn dry_run_shows_the_changes_of_each_generation_and_writes_nothing() {
    for objects in [
        vec![v027(), settings(Some("false"))],
        vec![v033(Some("Drift=false"))],
    ] {
        let w = World::new(objects);
        let mut op = Recorder::yes();
        let out = w
            .run(
                &Request {
                    dry_run: true,
                    ..request(Action::Enable)
                },
                &mut op,
            )
            .unwrap();
        assert_eq!(out.done, Done::DryRun);
        assert!(!out.changes.is_empty());
        assert!(writes(&w).is_empty());
        assert!(op.asked.is_empty(), "a dry run asks nothing");
        assert_eq!(
            op.told.last().unwrap(),
            &format!("proposed {}", out.changes.len())
        );
    }
}

#[test]
fn saying_no_writes_nothing() {
    let w = World::new(vec![v033(Some("Drift=false"))]);
    let mut op = Recorder::default();
    let out = w.run(&request(Action::Enable), &mut op).unwrap();
    assert_eq!(out.done, Done::Declined);
    assert_eq!(op.asked.len(), 1);
    assert!(writes(&w).is_empty());
}

#[test]
fn v033_enable_rewrites_drift_keeping_the_other_gates_and_waits() {
    let w = World::new(vec![v033(Some("Drift=false,SpotToSpotConsolidation=true"))]).rolls_out();
    let mut op = Recorder::yes();
    let out = w.run(&request(Action::Enable), &mut op).unwrap();
    assert_eq!(out.done, Done::Applied { restarted: true });
    assert_eq!(writes(&w), [format!("PATCH {DEPLOYMENT}")]);
    assert_eq!(
        w.feature_gates().as_deref(),
        Some("Drift=true,SpotToSpotConsolidation=true")
    );
    assert_eq!(
        op.told,
        [
            "found karpenter/karpenter v0.33-v0.37",
            "proposed 1",
            "written containers[controller].env.FEATURE_GATES",
            "rollout karpenter",
            "waiting: Waiting for deployment spec update to be observed...",
            "rolled out karpenter",
        ]
    );
    assert_eq!(
        op.asked,
        ["Enable karpenter/karpenter restarts=true changes=1"]
    );
    // Again: nothing to do.
    w.fake.clear_requests();
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert!(matches!(out.done, Done::Unchanged(Already::Env { .. })));
    assert!(writes(&w).is_empty());
}

#[test]
fn v033_disable_adds_the_env_var_where_there_was_none() {
    let w = World::new(vec![v033(None)]).rolls_out();
    let out = w
        .run(&request(Action::Disable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(out.done, Done::Applied { restarted: true });
    assert_eq!(out.changes[0].old, None);
    assert_eq!(w.feature_gates().as_deref(), Some("Drift=false"));
    // Enabling without the env var: v0.33 defaults to on.
    let w = World::new(vec![v033(None)]);
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(
        out.done,
        Done::Unchanged(Already::Env {
            gates: FeatureGates::default(),
            default: true
        })
    );
}

#[test]
fn v033_no_restart_is_an_input_error_before_any_write() {
    let w = World::new(vec![v033(Some("Drift=false"))]);
    let err = w
        .run(
            &Request {
                restart: false,
                ..request(Action::Enable)
            },
            &mut Recorder::yes(),
        )
        .unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert!(err.message.starts_with("--no-restart:"), "{}", err.message);
    assert!(writes(&w).is_empty());
}

#[test]
fn v032_without_the_env_var_honours_the_configmap_key() {
    let v032 = || {
        controller(
            Some("0.32.3"),
            "public.ecr.aws/karpenter/controller:0.32.3",
            Value::Null,
        )
    };
    let w = World::new(vec![v032(), settings(Some("true"))]);
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(
        out.done,
        Done::Unchanged(Already::Env {
            gates: FeatureGates::default(),
            default: true
        })
    );
    // Without the key, v0.32 defaults to off: enabling adds the env var.
    let w = World::new(vec![v032(), settings(None)]).rolls_out();
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(out.done, Done::Applied { restarted: true });
    assert_eq!(w.feature_gates().as_deref(), Some("Drift=true"));
    assert_eq!(writes(&w), [format!("PATCH {DEPLOYMENT}")]);
}

fn v1(fake: FakeCluster, pools: Vec<Value>) -> World {
    let mut objects = vec![controller(
        Some("1.0.6"),
        "public.ecr.aws/karpenter/controller:1.0.6",
        Value::Null,
    )];
    objects.extend(pools);
    World::with(fake, objects)
}

#[test]
fn v1_has_no_gate_lists_the_drifted_budgets_and_writes_nothing() {
    let pool = |name: &str, disruption: Value| {
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
               "spec": {"disruption": disruption}})
    };
    for action in [Action::Enable, Action::Disable] {
        let w = v1(
            FakeCluster::new().karpenter_v1(),
            vec![
                pool("default", json!({})),
                pool(
                    "frozen",
                    json!({"budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "5", "reasons": ["Empty"]}]}),
                ),
            ],
        );
        let mut op = Recorder::yes();
        let out = w.run(&request(action), &mut op).unwrap();
        let Done::NoGate(NodePools::Listed(pools)) = &out.done else {
            panic!("{:?}", out.done);
        };
        assert_eq!(pools.len(), 2);
        assert_eq!(pools[0].budgets[0].nodes, "10%", "the CRD default");
        assert_eq!(pools[1].budgets.len(), 1, "only the budgets for Drifted");
        assert_eq!(pools[1].budgets[0].nodes, "0");
        assert!(pools[1].budgets[0].active);
        assert!(writes(&w).is_empty());
        assert!(op.asked.is_empty());
        assert_eq!(op.told, ["found karpenter/karpenter v1"]);
    }
    // A cluster that does not serve v1 NodePools.
    let w = v1(FakeCluster::new(), vec![]);
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(out.done, Done::NoGate(NodePools::NotServed));
}

#[test]
fn a_rollout_that_does_not_finish_times_out_saying_the_change_is_made() {
    let w = World::new(vec![v033(Some("Drift=false"))]);
    let err = w
        .run(
            &Request {
                timeout: Duration::from_secs(5),
                ..request(Action::Enable)
            },
            &mut Recorder::yes(),
        )
        .unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert_eq!(
        err.message,
        "Deployment karpenter/karpenter: the rollout did not finish within 5s (the change is made; last status: Waiting for deployment spec update to be observed...)"
    );
    assert_eq!(
        err.hint.as_deref(),
        Some("follow it with kubectl -n karpenter rollout status deployment/karpenter")
    );
    assert_eq!(w.feature_gates().as_deref(), Some("Drift=true"));
    assert!(w.clock.monotonic() >= Duration::from_secs(5));
}

#[test]
fn a_rollout_past_its_deadline_fails_and_ctrl_c_stops_the_wait() {
    let w = World::new(vec![v027(), settings(Some("false"))]);
    let fake = w.fake.clone();
    w.clock.on_tick(move |_| {
        fake.update("apps/v1", "Deployment", Some(NS), "karpenter", |d| {
            d["status"]["observedGeneration"] = d["metadata"]["generation"].clone();
            d["status"]["updatedReplicas"] = json!(0);
            d["status"]["conditions"] =
                json!([{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]);
        });
    });
    let err = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap_err();
    assert_eq!(
        err.message,
        "Deployment karpenter/karpenter: deployment \"karpenter\" exceeded its progress deadline"
    );

    let w = World::new(vec![v027(), settings(Some("false"))]);
    w.clock.stop_after(Duration::from_secs(2));
    let err = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap_err();
    assert!(err.message.contains("stopped waiting"), "{}", err.message);
    assert_eq!(w.clock.monotonic(), Duration::from_secs(2));
}

#[test]
fn an_edit_between_reading_and_writing_fails_the_test_and_stops() {
    let w = World::new(vec![v027(), settings(Some("false"))]);
    let fake = w.fake.clone();
    let mut op = Recorder::yes();
    op.meanwhile = Some(Box::new(move || {
        fake.update(
            "v1",
            "ConfigMap",
            Some(NS),
            "karpenter-global-settings",
            |cm| {
                cm["data"]["featureGates.driftEnabled"] = json!("False");
            },
        );
    }));
    let err = w.run(&request(Action::Enable), &mut op).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(
        err.message.starts_with(&format!(
            "ConfigMap karpenter/karpenter-global-settings: PATCH {CM}: 422 "
        )),
        "{}",
        err.message
    );
    assert_eq!(
        err.hint.as_deref(),
        Some("it changed while this command ran; run it again")
    );
    assert_eq!(writes(&w), [format!("PATCH {CM}")], "no restart after");
    assert_eq!(
        w.drift_key().as_deref(),
        Some("False"),
        "the other edit stands"
    );
}

#[test]
fn a_conflict_or_a_refusal_names_the_object() {
    // (the failing request, its status and message; what the error says; whether it hints RBAC)
    for (method, path, status, message, says, rbac) in [
        (
            Method::Patch,
            "/deployments/karpenter",
            409,
            "Operation cannot be fulfilled on deployments.apps \"karpenter\": the object has been modified",
            format!("Deployment karpenter/karpenter: PATCH {DEPLOYMENT}: 409 Operation"),
            false,
        ),
        (
            Method::Patch,
            "/deployments/karpenter",
            403,
            "forbidden",
            format!("Deployment karpenter/karpenter: PATCH {DEPLOYMENT}: 403 forbidden"),
            true,
        ),
        (
            Method::Get,
            "/apis/apps/v1/deployments",
            403,
            "forbidden",
            "GET /apis/apps/v1/deployments: 403 forbidden".to_string(),
            true,
        ),
    ] {
        let w = World::new(vec![v033(Some("Drift=false"))]).rolls_out();
        w.fake.fail_with(method, path, 1, status, message);
        let err = w
            .run(&request(Action::Enable), &mut Recorder::yes())
            .unwrap_err();
        assert_eq!(err.exit, Exit::Remote);
        assert!(err.message.starts_with(&says), "{}", err.message);
        assert_eq!(err.hint.is_some_and(|h| h.contains("RBAC")), rbac, "{says}");
        assert_eq!(w.feature_gates().as_deref(), Some("Drift=false"));
    }
}

#[test]
fn refusals_come_before_any_write() {
    let mut paused = v027();
    paused["spec"]["paused"] = json!(true);
    let mut flag = v033(None);
    flag["spec"]["template"]["spec"]["containers"][0]["args"] =
        json!(["--feature-gates=Drift=false"]);
    let mut value_from = v033(None);
    value_from["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "FEATURE_GATES", "valueFrom": {"configMapKeyRef": {"name": "g", "key": "k"}}}]);
    for (objects, want) in [
        (
            vec![paused, settings(Some("false"))],
            "Deployment karpenter/karpenter is paused: its pods would not be restarted",
        ),
        (
            vec![flag],
            "Deployment karpenter/karpenter: container controller passes --feature-gates, which overrides env FEATURE_GATES",
        ),
        (
            vec![value_from],
            "Deployment karpenter/karpenter: env FEATURE_GATES of container controller comes from valueFrom",
        ),
        (
            vec![controller(
                Some("0.20.1"),
                "public.ecr.aws/karpenter/controller:v0.20.1",
                Value::Null,
            )],
            "Deployment karpenter/karpenter: Karpenter v0.20.1 has no drift detection (it arrived in v0.21): upgrade Karpenter first",
        ),
    ] {
        let w = World::new(objects);
        let err = w
            .run(&request(Action::Enable), &mut Recorder::yes())
            .unwrap_err();
        assert_eq!(err.exit, Exit::Remote);
        assert_eq!(err.message, want);
        assert!(writes(&w).is_empty());
    }
}

#[test]
fn an_unreadable_version_goes_by_the_install_s_shape() {
    let latest = |env: Value| controller(None, "public.ecr.aws/karpenter/controller:latest", env);
    let w = World::new(vec![latest(Value::Null), settings(Some("true"))]);
    let mut op = Recorder::yes();
    let out = w.run(&request(Action::Enable), &mut op).unwrap();
    assert_eq!(out.install.detected_by, DetectedBy::Shape);
    assert_eq!(out.install.generation, Generation::Settings);
    assert_eq!(
        out.install.release(),
        "of unknown version (looks like v0.21-v0.31)"
    );
    assert_eq!(op.told[0], "guessed v0.21-v0.31");
    // The ConfigMap was read once, to tell the generation.
    let reads = w.fake.requests().iter().filter(|r| r.path == CM).count();
    assert_eq!(reads, 1);

    let w = World::new(vec![latest(
        json!([{"name": "FEATURE_GATES", "value": "Drift=true"}]),
    )]);
    let out = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap();
    assert_eq!(out.install.generation, Generation::FeatureGatesDefaultOn);

    let w = World::new(vec![latest(Value::Null)]);
    let err = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert!(err
        .message
        .contains("cannot tell which Karpenter release it runs"));
    assert!(err
        .hint
        .unwrap()
        .contains("app.kubernetes.io/version=X.Y.Z"));
}

#[test]
fn installed_exposes_the_release_and_feature_gates_reading_nothing_else() {
    let w = World::new(vec![controller(
        Some("v0.35.2"),
        "public.ecr.aws/karpenter/controller:0.35.2",
        json!([{"name": "FEATURE_GATES", "value": "Drift=true,SpotToSpotConsolidation=true"}]),
    )]);
    let install = installed(&w.api, None).unwrap();
    assert_eq!(
        install.version.map(|v| v.to_string()).as_deref(),
        Some("v0.35.2")
    );
    assert_eq!(install.release(), "v0.35.2");
    assert_eq!(install.generation, Generation::FeatureGatesDefaultOn);
    assert_eq!(
        install.feature_gates().get(SPOT_TO_SPOT_CONSOLIDATION),
        Some(Ok(true))
    );
    let paths: Vec<String> = w.fake.requests().iter().map(|r| r.line()).collect();
    assert_eq!(
        paths,
        [
            "GET /apis/apps/v1/deployments",
            &format!("GET {DEPLOYMENT}")
        ]
    );
}

fn found(ns: &str, name: &str) -> Controller {
    Controller {
        namespace: ns.into(),
        name: name.into(),
        ready_replicas: 1,
        image: "public.ecr.aws/karpenter/controller:v0.27.6".into(),
        version: Some("0.27.6".into()),
    }
}

#[test]
fn controller_selection() {
    let one = select_controller(vec![found("karpenter", "karpenter")], None).unwrap();
    assert_eq!(one.key(), "karpenter/karpenter");
    let none = select_controller(vec![], None).unwrap_err();
    assert_eq!(none.exit, Exit::Remote);
    assert_eq!(
        none.message,
        "no Karpenter controller Deployment in the cluster"
    );
    let two = || vec![found("a", "karpenter"), found("b", "karpenter")];
    let err = select_controller(two(), None).unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    assert_eq!(
        err.message,
        "2 Karpenter controller Deployments: a/karpenter, b/karpenter"
    );
    assert_eq!(
        select_controller(two(), Some("b")).unwrap().key(),
        "b/karpenter"
    );
    // Found by the live fuzzer: thousands of them (a proxy repeating a LIST) made one line of
    // tens of thousands of characters.
    let many: Vec<_> = (0..1200)
        .map(|i| found(&format!("ns{i}"), "karpenter"))
        .collect();
    let err = select_controller(many, None).unwrap_err();
    assert_eq!(
        err.message,
        "1200 Karpenter controller Deployments: ns0/karpenter, ns1/karpenter, ns2/karpenter, ns3/karpenter, ns4/karpenter and 1195 more"
    );
    let err = select_controller(two(), Some("c")).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    assert_eq!(
        err.message,
        "no Karpenter controller Deployment in namespace c (found: a/karpenter, b/karpenter)"
    );
    // Through the cluster: the namespace picks one of two.
    let mut other = v027();
    other["metadata"]["namespace"] = json!("other");
    let w = World::new(vec![v027(), other, settings(Some("true"))]);
    let err = w
        .run(&request(Action::Enable), &mut Recorder::yes())
        .unwrap_err();
    assert_eq!(err.exit, Exit::Input);
    let out = w
        .run(
            &Request {
                namespace: Some(NS.into()),
                ..request(Action::Enable)
            },
            &mut Recorder::yes(),
        )
        .unwrap();
    assert_eq!(out.install.controller.key(), "karpenter/karpenter");
}
