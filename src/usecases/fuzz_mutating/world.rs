//! Random small worlds for the mutating fuzzer: one NodePool (`default`, consolidating at once,
//! a random disruption budget), one to four managed nodes with their NodeClaims, pods of two
//! ReplicaSets (`web`, `db`) bound to them, some pending pods, perhaps a PodDisruptionBudget over
//! `db` (sometimes two over one pod: the API server's 500) and do-not-disrupt on pods or nodes.
//!
//! The world moves as the clock ticks, as the real one would: a kubelet registers a Ready Node
//! once for each instance 30 s after it runs and deletes the Node of an instance that stopped
//! (the cloud node lifecycle controller); kube-scheduler binds pending pods
//! (`usecases::testing`); each ReplicaSet makes its evicted pods again, pending.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::model::labels::DO_NOT_DISRUPT;
use crate::testing::Rng;
use crate::usecases::clock::FakeClock;
use crate::usecases::testing::{node_name, node_of, node_pool, pending_pod, World, START};

/// The ReplicaSets whose pods run on the nodes.
pub const GROUPS: [&str; 2] = ["web", "db"];

/// What the world was made with: what the invariants compare against.
#[derive(Debug, Clone, Default)]
pub struct Made {
    /// The managed nodes, by name.
    pub nodes: Vec<String>,
    /// The pool's budget (`nodes`), if any.
    pub budget: Option<String>,
    /// Pods annotated do-not-disrupt (`namespace/name`).
    pub keep_pods: BTreeSet<String>,
    /// Nodes annotated do-not-disrupt.
    pub keep_nodes: BTreeSet<String>,
    /// `maxUnavailable` of the PodDisruptionBudget over `db`, when there is one (and only one).
    pub db_max_unavailable: Option<i64>,
    /// Replicas per ReplicaSet.
    pub replicas: BTreeMap<String, usize>,
    /// Nodes whose NodeClaim has an `expireAfter`: when it runs out, in seconds from the
    /// clock's start (negative: expired before the case began).
    pub expires: BTreeMap<String, i64>,
    /// Nodes whose NodeClaim has a `terminationGracePeriod`, in seconds.
    pub grace: BTreeMap<String, i64>,
    /// `spec.replicas` of the pool when it is static.
    pub static_replicas: Option<usize>,
}

/// What a round-2 world adds to round 1's (`Shape::default()`: round 1's worlds, drawn from the
/// same random numbers).
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape {
    /// Two to four large nodes, at most one pod each: several to consolidate into one.
    pub sparse: bool,
    /// The pool static (`spec.replicas` = its nodes; core v1.14.1
    /// `pkg/controllers/static/`): never consolidated, replaced on drift.
    pub statik: bool,
    /// Some NodeClaims with `expireAfter` (expired or expiring within the case) and some with
    /// `terminationGracePeriod`.
    pub expiring: bool,
}

/// A world for one case, with the ticks installed.
pub fn make(rng: &mut Rng) -> (World, Made) {
    make_with(rng, Shape::default())
}

/// A world for one case of `shape`, with the ticks installed.
pub fn make_with(rng: &mut Rng, shape: Shape) -> (World, Made) {
    let mut world = World::new();
    // Long enough for every drain and ready timeout of a few nodes, short enough to end a loop.
    world.clock = FakeClock::at(START).with_limit(Duration::from_secs(6 * 3600));
    let mut made = Made::default();
    let budget = match rng.below(6) {
        0 => None,
        1 => Some("0"),
        2 | 3 => Some("1"),
        4 => Some("2"),
        _ => Some("50%"),
    };
    made.budget = budget.map(str::to_string);
    let mut disruption = json!({"consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s"});
    if let Some(b) = budget {
        disruption["budgets"] = json!([{"nodes": b}]);
    }
    world
        .cluster
        .put(node_pool("default", json!({"disruption": disruption})));
    let types = ["c6a.large", "c6a.xlarge", "c6a.2xlarge"];
    let mut next = 0usize;
    let count = match shape.sparse {
        true => 2 + rng.below(3),
        false => 1 + rng.below(4),
    };
    for _ in 0..count {
        let t = match shape.sparse {
            true => *rng.pick(&types[1..]),
            false => *rng.pick(&types),
        };
        let name = world.managed_node(t, &[]);
        // Karpenter's NodeClaims carry its termination finalizer.
        let claim = format!("claim-{name}");
        world
            .cluster
            .update("karpenter.sh/v1", "NodeClaim", None, &claim, |c| {
                c["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
            });
        let room = match (shape.sparse, t) {
            (true, _) => 1,
            (_, "c6a.large") => 1,
            (_, "c6a.xlarge") => 3,
            _ => 4,
        };
        for _ in 0..rng.below(room + 1) {
            let group = *rng.pick(&GROUPS);
            let pod = format!("{group}-{next}");
            next += 1;
            let keep = rng.below(8) == 0;
            world.cluster.put(bound_pod(&pod, group, &name, keep));
            if keep {
                made.keep_pods.insert(format!("default/{pod}"));
            }
            *made.replicas.entry(group.to_string()).or_default() += 1;
        }
        if rng.below(10) == 0 {
            world.cluster.update("v1", "Node", None, &name, |n| {
                n["metadata"]["annotations"] = json!({DO_NOT_DISRUPT: "true"});
            });
            made.keep_nodes.insert(name.clone());
        }
        if shape.expiring {
            expiring(&world, rng, &claim, &name, &mut made);
        }
        made.nodes.push(name);
    }
    if shape.statik {
        // Static pools take only `limits.nodes` and no consolidation (core v1.14.1 NodePool
        // CEL rules); the replicas are the nodes it runs.
        let replicas = made.nodes.len();
        world
            .cluster
            .update("karpenter.sh/v1", "NodePool", None, "default", |p| {
                p["spec"]["replicas"] = json!(replicas);
                p["spec"]["limits"] = json!({});
                p["spec"]["disruption"]["consolidationPolicy"] = json!("WhenEmpty");
            });
        made.static_replicas = Some(replicas);
    }
    if rng.below(2) == 0 {
        let max = rng.below(2) as i64;
        world.cluster.put(pdb("db", json!({"maxUnavailable": max})));
        made.db_max_unavailable = Some(max);
        if rng.below(12) == 0 {
            world.cluster.put(pdb("db-too", json!({"minAvailable": 0})));
            made.db_max_unavailable = None;
        }
    }
    for i in 0..rng.below(3) {
        let cpu = (1 + rng.below(4)).to_string();
        world.cluster.put(pending_pod(&format!("new-{i}"), &cpu));
    }
    kubelet(&world);
    world.scheduler();
    replica_sets(&world, made.replicas.clone());
    (world, made)
}

/// Perhaps an `expireAfter` on `claim` (expired an half-hour ago, or expiring half an hour
/// into the case: its NodeClaim was created an hour before the start), perhaps a
/// `terminationGracePeriod`.
fn expiring(world: &World, rng: &mut Rng, claim: &str, node: &str, made: &mut Made) {
    let expire = match rng.below(3) {
        0 => None,
        1 => Some(("30m", -1800)),
        _ => Some(("90m", 1800)),
    };
    let grace = match rng.below(3) {
        0 => Some(("2m", 120)),
        1 => Some(("1h", 3600)),
        _ => None,
    };
    world
        .cluster
        .update("karpenter.sh/v1", "NodeClaim", None, claim, |c| {
            if let Some((after, _)) = expire {
                c["spec"]["expireAfter"] = json!(after);
            }
            if let Some((g, _)) = grace {
                c["spec"]["terminationGracePeriod"] = json!(g);
            }
        });
    if let Some((_, at)) = expire {
        made.expires.insert(node.to_string(), at);
    }
    if let Some((_, seconds)) = grace {
        made.grace.insert(node.to_string(), seconds);
    }
}

/// A Running pod of ReplicaSet `group` (1 CPU) bound to `node`.
fn bound_pod(name: &str, group: &str, node: &str, keep: bool) -> Value {
    let mut pod = pending_pod(name, "1");
    pod["metadata"]["labels"] = json!({"app": group});
    pod["metadata"]["ownerReferences"][0]["name"] = json!(group);
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = json!("apps/v1");
    pod["metadata"]["ownerReferences"][0]["kind"] = json!("ReplicaSet");
    pod["metadata"]["ownerReferences"][0]["controller"] = json!(true);
    pod["metadata"]["ownerReferences"][0]["uid"] = json!(format!("rs-{group}"));
    if keep {
        pod["metadata"]["annotations"] = json!({DO_NOT_DISRUPT: "true"});
    }
    pod["spec"]["nodeName"] = json!(node);
    pod["status"] = json!({"phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}]});
    pod
}

/// A PodDisruptionBudget `name` over the pods of `db`, without a status: the fake computes the
/// disruptions allowed from its spec and the healthy pods, as the disruption controller would.
fn pdb(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": "db"}});
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

/// The kubelet: each running instance registers its Ready Node once, 30 s after it was first
/// seen; the Node of an instance no longer running is deleted. A Node deleted while its
/// instance runs does not come back: such an instance is an orphan the invariants see.
fn kubelet(world: &World) {
    let cluster = world.cluster.clone();
    let cloud = world.cloud.clone();
    let seen: RefCell<BTreeMap<String, Duration>> = RefCell::new(BTreeMap::new());
    let registered: RefCell<BTreeSet<String>> = RefCell::new(BTreeSet::new());
    for n in cluster.list("v1", "Node") {
        registered
            .borrow_mut()
            .insert(n["metadata"]["name"].as_str().unwrap_or_default().into());
    }
    world.clock.on_tick(move |now| {
        let instances = cloud.instances.borrow().clone();
        for i in &instances {
            let first = *seen.borrow_mut().entry(i.id.clone()).or_insert(now);
            let name = node_name(&i.id);
            let there = cluster.get("v1", "Node", None, &name).is_some();
            if i.state == "running" && now >= first + Duration::from_secs(30) {
                if registered.borrow_mut().insert(name.clone()) {
                    cluster.put(node_of(i));
                }
            } else if i.state != "running" && there {
                cluster.remove("v1", "Node", None, &name);
            }
        }
    });
}

/// The ReplicaSets: a group with fewer pods than its replicas gets new pending ones.
fn replica_sets(world: &World, replicas: BTreeMap<String, usize>) {
    let cluster = world.cluster.clone();
    // The ReplicaSets themselves, whose scale a PodDisruptionBudget expects (the fake's
    // `expected_scale`): a pod evicted and not yet made again still counts, unhealthy.
    for (group, want) in &replicas {
        cluster.put(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": group, "namespace": "default", "uid": format!("rs-{group}")},
            "spec": {"replicas": want, "selector": {"matchLabels": {"app": group}}}}));
    }
    let next = Rc::new(RefCell::new(0usize));
    world.clock.on_tick(move |_| {
        let pods = cluster.list("v1", "Pod");
        for (group, want) in &replicas {
            let have = pods
                .iter()
                .filter(|p| p["metadata"]["labels"]["app"] == group.as_str())
                .count();
            for _ in have..*want {
                let mut n = next.borrow_mut();
                let mut pod = bound_pod(&format!("{group}-r{n}"), group, "", false);
                *n += 1;
                pod["spec"]["nodeName"] = Value::Null;
                pod["status"] = json!({"phase": "Pending"});
                cluster.put(pod);
            }
        }
    });
}
