//! Karpenter v1.14.1 Its that no test cited by text, replayed through the binary
//! (docs/upstream-tests/scheduling.md "Scheduling Its through the binary, part 3
//! (s32-itsched3)"): core `test/suites/regression/{integration,staticcapacity}_test.go`,
//! `pkg/utils/resources/suite_test.go`, `pkg/controllers/provisioning/suite_test.go` and
//! `scheduling/suite_test.go`. Each It's world is written as manifests and planned by
//! `provision --dry-run -f - -o json --catalog` against the fake cloud provider's types
//! (`tests/fixtures/s19-bsched/fake-catalog.yaml`); the It's expectation is checked on the plan
//! or on the exit status and the one-line error.

use serde_json::{json, Value};

use crate::support::{fixture, karpenter, Run};
use crate::upstream_scheduling_binary::{
    any_capacity, class, deployment, pod, pool, preferred, req, required, sched, sized, spread,
    Plan, ARCH, CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, ZONE,
};

/// `provision --dry-run -q -f - -o json --catalog FAKE` of `objects` and the default class.
fn run(objects: Vec<Value>) -> Run {
    run_with(&[], objects)
}

/// [`run`] with more flags.
fn run_with(extra: &[&str], mut objects: Vec<Value>) -> Run {
    objects.push(class());
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let catalog = fixture("s19-bsched/fake-catalog.yaml");
    let mut args: Vec<&str> = "provision --dry-run -q -f - -o json --catalog"
        .split(' ')
        .collect();
    args.push(catalog.to_str().unwrap());
    args.extend_from_slice(extra);
    karpenter(&args, list.to_string().as_bytes())
}

/// [`run`] parsed as a plan.
fn planned(objects: Vec<Value>) -> Plan {
    planned_with(&[], objects)
}

/// [`run_with`] parsed as a plan.
fn planned_with(extra: &[&str], objects: Vec<Value>) -> Plan {
    let r = run_with(extra, objects);
    let json = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    Plan { code: r.code, json }
}

// ---- test/suites/regression/integration_test.go › Validation › NodePool ----

/// The regression suite's NodePool validation (`env.Client.Create` refused by the CRD's schema
/// and CEL rules, or accepted): a refused pool is bad input here — exit 2, one line naming the
/// NodePool, nothing planned; an accepted one plans its pod.
/// Upstream It: "should error when a restricted label is used in labels (karpenter.sh/nodepool)".
/// Upstream It: "should error when a restricted label is used in labels (karpenter.sh/custom-label)".
/// Upstream It: "should allow a restricted label exception to be used in labels (node-restriction.kubernetes.io/custom-label)".
/// Upstream It: "should allow a restricted label exception to be used in labels ([*].node-restriction.kubernetes.io/custom-label)".
/// Upstream It: "should error when a requirement references a restricted label (karpenter.sh/nodepool)".
/// Upstream It: "should error when a requirement uses In but has no values".
/// Upstream It: "should error when a requirement uses an unknown operator".
/// Upstream It: "should error when Gt is used with multiple integer values".
/// Upstream It: "should error when Lt is used with multiple integer values".
/// Upstream It: "should error when Gte is used with multiple integer values".
/// Upstream It: "should error when Lte is used with multiple integer values".
/// Upstream It: "should error when consolidateAfter is negative".
/// Upstream It: "should succeed when ConsolidationPolicy=WhenEmptyOrUnderutilized is used with consolidateAfter".
/// Upstream It: "should error when minValues for a requirement key is negative".
/// Upstream It: "should error when minValues for a requirement key is zero".
/// Upstream It: "should error when minValues for a requirement key is more than 50".
/// Upstream It: "should error when minValues for a requirement key is greater than the values specified within In operator".
#[test]
fn regression_nodepool_validation() {
    let labelled = |k: &str| {
        let labels = json!({"metadata": {"labels": {k: "custom-value"}}});
        pool("default", vec![any_capacity()], labels)
    };
    let with_req = |r: Value| pool("default", vec![any_capacity(), r], json!({}));
    let min_values = |n: i64| {
        let mut r = req(INSTANCE_TYPE, "In", &["insance-type-1", "insance-type-2"]);
        r["minValues"] = json!(n);
        with_req(r)
    };
    let big = ["1000000", "2000000"];
    let disruption = |policy: &str, after: &str| {
        let patch = json!({"pool": {"disruption": {"consolidationPolicy": policy, "consolidateAfter": after}}});
        pool("default", vec![any_capacity()], patch)
    };
    let mut unknown = with_req(json!(null));
    unknown["spec"]["template"]["spec"]["requirements"] =
        json!([req(CAPACITY_TYPE, "within", &["spot"])]);
    let refused = [
        (
            "labels karpenter.sh/nodepool",
            labelled("karpenter.sh/nodepool"),
        ),
        (
            "labels karpenter.sh/custom-label",
            labelled("karpenter.sh/custom-label"),
        ),
        (
            "requirement karpenter.sh/nodepool",
            with_req(req("karpenter.sh/nodepool", "In", &["default"])),
        ),
        (
            "In without values",
            with_req(json!({"key": INSTANCE_TYPE, "operator": "In", "values": []})),
        ),
        ("unknown operator", unknown),
        (
            "Gt with two values",
            with_req(req(INSTANCE_TYPE, "Gt", &big)),
        ),
        (
            "Lt with two values",
            with_req(req(INSTANCE_TYPE, "Lt", &big)),
        ),
        (
            "Gte with two values",
            with_req(req(INSTANCE_TYPE, "Gte", &big)),
        ),
        (
            "Lte with two values",
            with_req(req(INSTANCE_TYPE, "Lte", &big)),
        ),
        ("consolidateAfter -1s", disruption("WhenEmpty", "-1s")),
        ("minValues -1", min_values(-1)),
        ("minValues 0", min_values(0)),
        ("minValues 51", min_values(51)),
        ("minValues 3 of 2 values", min_values(3)),
    ];
    for (it, pool) in refused {
        let r = run(vec![pool, pod("p", json!({}))]);
        r.assert_refused_in_one_line(it, "NodePool/default: spec.");
    }
    let accepted = [
        labelled("node-restriction.kubernetes.io/custom-label"),
        labelled("subdomainnode-restriction.kubernetes.io/custom-label"),
        disruption("WhenEmptyOrUnderutilized", "1m"),
    ];
    for pool in accepted {
        let p = planned(vec![pool, pod("p", json!({}))]);
        p.assert_pending(&[]);
    }
}

// ---- test/suites/regression/integration_test.go › DaemonSet, Utilization ----

/// Upstream It: "should correctly account for host ports of uncached daemonset pods targeting different instance types".
/// Two DaemonSets selecting `testing/karpenter-node: true` (the pool's template label): `ds1` on
/// amd64 holds host port 8000, `ds2` on arm64 holds 9000. The pod asking for 8000 requires arm64
/// and the one asking for 9000 requires amd64: each gets a node of its arch, none stays pending
/// (the DaemonSets' host ports count per instance type, `daemonOverhead` by type).
#[test]
fn daemonset_host_ports_count_per_instance_type() {
    let label = json!({"metadata": {"labels": {"testing/karpenter-node": "true"}}});
    let ds = |name: &str, arch: &str, port: u16| {
        let mut d = crate::upstream_scheduling_binary::daemonset(
            name,
            json!({}),
            json!({
            "nodeSelector": {"testing/karpenter-node": "true"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [req(ARCH, "In", &[arch])]}]}}}}),
        );
        d["spec"]["template"]["spec"]["containers"][0]["ports"] =
            json!([{"containerPort": port, "hostPort": port}]);
        d
    };
    let wants = |name: &str, arch: &str, port: u16| {
        let mut p = sized(
            name,
            json!({"cpu": "100m"}),
            required(vec![req(ARCH, "In", &[arch])]),
        );
        p["spec"]["containers"][0]["ports"] = json!([{"containerPort": port, "hostPort": port}]);
        p
    };
    let p = planned(vec![
        pool("default", vec![any_capacity()], label),
        ds("ds1", "amd64", 8000),
        ds("ds2", "arm64", 9000),
        wants("port-8000", "arm64", 8000),
        wants("port-9000", "amd64", 9000),
    ]);
    p.assert_pending(&[]);
    assert_eq!(p.label("port-8000", ARCH), Some("arm64"), "{:#}", p.json);
    assert_eq!(p.label("port-9000", ARCH), Some("amd64"), "{:#}", p.json);
}

/// Upstream It: "should provision one pod per node".
/// A Deployment (20 replicas here, 100 upstream) of 1.8-CPU pods with `do-not-disrupt` and a
/// hostname anti-affinity on their own label → one NodeClaim per pod.
#[test]
fn one_pod_per_node() {
    let label = json!({"app": "large-app"});
    let mut d = deployment(
        "large-app",
        20,
        label.clone(),
        json!({
        "containers": [{"name": "app", "image": "i", "resources": {"requests": {"cpu": "1800m"}}}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            [{"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": label}}]}}}),
    );
    d["spec"]["template"]["metadata"]["annotations"] =
        json!({"karpenter.sh/do-not-disrupt": "true"});
    let p = planned(vec![pool("default", vec![any_capacity()], json!({})), d]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 20, "{:#}", p.json);
    assert!(p
        .claims()
        .iter()
        .all(|c| c["pods"].as_array().unwrap().len() == 1));
}

// ---- test/suites/regression/staticcapacity_test.go ----

/// The plan's NodeClaims of NodePool `name`.
fn of_pool<'a>(p: &'a Plan, name: &str) -> Vec<&'a Value> {
    (p.claims().iter())
        .filter(|c| c["nodePool"] == name)
        .collect()
}

/// A static NodePool `static` (`replicas`), the fake catalog's small type, `spec` merged in (as
/// [`pool`]'s `extra`).
fn static_pool(replicas: u32, spec: Value) -> Value {
    let mut patch = json!({"pool": {"replicas": replicas}});
    crate::support::merge(&mut patch, spec);
    let mut p = pool(
        "static",
        vec![req(INSTANCE_TYPE, "In", &["small-instance-type"])],
        patch,
    );
    // Only `limits.nodes` is allowed on a static pool (the CRD's CEL rule): no `limits.cpu`.
    if let Some(limits) = p["spec"]["limits"].as_object_mut() {
        limits.remove("cpu");
    }
    p
}

/// Upstream It: "should create static NodeClaims to meet desired replicas".
/// Upstream It: "should respect node limits when provisioning".
/// Upstream It: "should create static NodeClaim propagating all the NodePool spec details".
/// Upstream It: "should handle NodePool deletion gracefully".
/// Replicas 10 → ten NodeClaims of the pool, each labelled with it; replicas 10 under
/// `limits.nodes: 5` → five; the template's label, annotation and two taints reach the
/// NodeClaim; a pool being deleted gets none (its nodes' teardown is the termination
/// controller's, not a plan).
#[test]
fn static_pools_replicas_limits_template_and_deletion() {
    let p = planned(vec![static_pool(10, json!({}))]);
    let claims = of_pool(&p, "static");
    assert_eq!(claims.len(), 10, "{:#}", p.json);
    assert!(claims
        .iter()
        .all(|c| c["labels"]["karpenter.sh/nodepool"] == "static"));

    let p = planned(vec![static_pool(
        10,
        json!({"pool": {"limits": {"nodes": "5"}}}),
    )]);
    assert_eq!(of_pool(&p, "static").len(), 5, "{:#}", p.json);

    let p = planned(vec![static_pool(
        1,
        json!({"metadata": {"annotations": {"custom-annotation": "custom-value"},
                            "labels": {"custom-label": "custom-value"}},
               "spec": {"taints": [
                   {"key": "custom-taint", "effect": "NoSchedule", "value": "custom-value"},
                   {"key": "other-custom-taint", "effect": "NoExecute", "value": "other-custom-value"}]}}),
    )]);
    let claims = of_pool(&p, "static");
    assert_eq!(claims.len(), 1, "{:#}", p.json);
    let c = claims[0];
    assert_eq!(c["labels"]["custom-label"], "custom-value", "{c:#}");
    assert_eq!(
        c["annotations"]["custom-annotation"], "custom-value",
        "{c:#}"
    );
    let taints: Vec<(String, String, String)> = (c["taints"].as_array().unwrap().iter())
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or_default().to_string();
            (s("key"), s("value"), s("effect"))
        })
        .collect();
    for want in [
        ("custom-taint", "custom-value", "NoSchedule"),
        ("other-custom-taint", "other-custom-value", "NoExecute"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(taints.contains(&want), "{want:?} not in {taints:?}");
    }

    let mut deleting = static_pool(3, json!({}));
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    deleting["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    let p = planned(vec![deleting]);
    assert!(of_pool(&p, "static").is_empty(), "{:#}", p.json);
}

// ---- pkg/utils/resources/suite_test.go › Resource Calculations ----

/// A container requesting (and limited to) `spec`'s `CPU/MEMORY`; a sidecar when `spec` starts
/// with `s` (`s1/1Gi`).
fn container(name: &str, spec: &str) -> Value {
    let (cpu, memory) = spec.trim_start_matches('s').split_once('/').unwrap();
    let mut c = json!({"name": name, "image": "i",
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}});
    if spec.starts_with('s') {
        c["restartPolicy"] = json!("Always");
    }
    c
}

/// `resources.Ceiling` per resource, read from the one NodeClaim's `requests` (the pod alone,
/// no DaemonSet): the app container, the init containers in order (`true` = sidecar) and the
/// pod-level `spec.resources`.
/// Upstream It: "should calculate resource requests when the first initContainer exceeds cpu for sidecarContainers and containers but not memory".
/// Upstream It: "should calculate resource requests when the first initContainer exceeds memory for sidecarContainers and containers but not cpu".
/// Upstream It: "should calculate resource requests when there is an initContainer after a sidecarContainer that exceeds cpu for containers but not memory".
/// Upstream It: "should calculate resource requests when there is an initContainer after a sidecarContainer that exceeds memory for containers but not cpu".
/// Upstream It: "should calculate resource requests when the pod level resources is specified".
/// Upstream It: "should calculate resource requests when only the pod level resources request is specified".
/// Upstream It: "should calculate resource requests when the pod level resources requests is defaulted from limits".
#[test]
fn resource_ceilings_per_resource_through_the_plan() {
    let both = |r: &str, l: &str| {
        let (rc, rm) = r.split_once('/').unwrap();
        let mut level = json!({"requests": {"cpu": rc, "memory": rm}});
        if let Some((lc, lm)) = l.split_once('/') {
            level["limits"] = json!({"cpu": lc, "memory": lm});
        }
        level
    };
    // (It, app container, init containers in order (`s` = sidecar), pod-level resources, want)
    let cases = [
        (
            "init exceeds cpu not memory",
            "3/3Gi",
            "25/4Gi s1/1Gi s5/5Gi",
            json!(null),
            "25/9Gi",
        ),
        (
            "init exceeds memory not cpu",
            "3/3Gi",
            "4/25Gi s1/1Gi s5/5Gi",
            json!(null),
            "9/25Gi",
        ),
        (
            "init after sidecar exceeds cpu",
            "2/4Gi",
            "s4/2Gi 10/2Gi",
            json!(null),
            "14/6Gi",
        ),
        (
            "init after sidecar exceeds memory",
            "10/2Gi",
            "s4/2Gi 2/4Gi",
            json!(null),
            "14/6Gi",
        ),
        (
            "pod level requests and limits",
            "1/1Gi",
            "",
            both("2/2Gi", "4/4Gi"),
            "2/2Gi",
        ),
        (
            "only pod level requests",
            "1/1Gi",
            "s1/1Gi",
            both("2/2Gi", ""),
            "2/2Gi",
        ),
        (
            "pod level defaulted from limits",
            "1/1Gi",
            "s1/1Gi",
            both("10/10Gi", "10/10Gi"),
            "10/10Gi",
        ),
    ];
    let big = r#"{"instanceTypes": [{"name": "huge", "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
        "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
        "offerings": [{"zone": "test-zone-1", "capacityType": "on-demand", "price": 1.0}]}]}"#;
    let catalog = crate::support::write_temp("its3-huge.json", big.as_bytes());
    for (it, app, inits, level, want) in cases {
        let inits: Vec<Value> = (inits.split_whitespace().enumerate())
            .map(|(i, spec)| container(&format!("init-{i}"), spec))
            .collect();
        let mut p = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [container("app", app)], "initContainers": inits}});
        if !level.is_null() {
            p["spec"]["resources"] = level;
        }
        let plan = crate::upstream_scheduling_binary::plan_on(
            &catalog,
            vec![pool("default", vec![], json!({})), p],
        );
        let claim = plan.claim("p");
        let got = format!(
            "{}/{}",
            claim["requests"]["cpu"].as_str().unwrap_or_default(),
            claim["requests"]["memory"].as_str().unwrap_or_default(),
        );
        assert_eq!(got, want, "{it}: {claim:#}");
    }
}

// ---- pkg/controllers/provisioning/suite_test.go › Preferential Fallback ----

/// Upstream It: "should relax all node affinity terms".
/// Two preferred terms (zone `invalid`, instance type `invalid`) are both dropped and the pod
/// schedules.
#[test]
fn every_preferred_node_affinity_term_is_relaxed() {
    let mut patch = preferred(vec![req(ZONE, "In", &["invalid"])]);
    patch["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        .as_array_mut()
        .unwrap()
        .push(json!({"weight": 1, "preference": {"matchExpressions": [req(INSTANCE_TYPE, "In", &["invalid"])]}}));
    let p = sched(json!({}), vec![pod("p", patch)]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}

/// Upstream It: "should ignore node affinity preferences".
/// Under `--preference-policy Ignore` (the It's `PreferencePolicy: Ignore`): a 2-CPU pod selecting
/// test-zone-1, two 3-CPU pods selecting test-zone-2, and a 1-CPU pod preferring test-zone-2 —
/// the last joins the test-zone-1 pod's NodeClaim, not a test-zone-2 one.
#[test]
fn ignored_node_affinity_preferences_do_not_steer_the_pod() {
    let zone = |name: &str, cpu: &str, z: &str| {
        sized(
            name,
            json!({"cpu": cpu}),
            json!({"spec": {"nodeSelector": {ZONE: z}}}),
        )
    };
    let prefers = sized(
        "prefers",
        json!({"cpu": "1"}),
        preferred(vec![req(ZONE, "In", &["test-zone-2"])]),
    );
    let p = planned_with(
        &["--preference-policy", "Ignore"],
        vec![
            pool("default", vec![], json!({})),
            zone("zone1", "2", "test-zone-1"),
            zone("zone2-a", "3", "test-zone-2"),
            zone("zone2-b", "3", "test-zone-2"),
            prefers,
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(
        p.claim("prefers")["name"],
        p.claim("zone1")["name"],
        "{:#}",
        p.json
    );
    assert_ne!(p.claim("prefers")["name"], p.claim("zone2-a")["name"]);
}

// ---- pkg/controllers/provisioning/scheduling/topology_test.go › Zonal ----

/// Upstream It: "should limit spread options by node requirements".
/// Ten pods spreading on the zone (maxSkew 1) and requiring test-zone-1 or test-zone-2 → 5, 5.
#[test]
fn a_spread_is_limited_to_the_zones_the_pods_require() {
    let pods: Vec<Value> = (0..10)
        .map(|i| {
            let mut patch = required(vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])]);
            patch["metadata"] = json!({"labels": {"test": "test"}});
            patch["spec"]["topologySpreadConstraints"] = json!([spread(ZONE, 1)]);
            pod(&format!("p-{i}"), patch)
        })
        .collect();
    let p = sched(json!({}), pods);
    p.assert_pending(&[]);
    assert_eq!(p.skew(ZONE), [5, 5], "{:#}", p.json);
}

// ---- pkg/controllers/provisioning/scheduling/suite_test.go › Deleting Nodes ----

/// A deleting Node `n1` (small-instance-type) holding one terminating pod (evicted:
/// `deletionTimestamp` set) of `owner`.
fn deleting_node_with(owner: &str) -> Vec<Value> {
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1",
        "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["karpenter.sh/termination"],
        "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true",
            "karpenter.sh/initialized": "true", INSTANCE_TYPE: "small-instance-type",
            ZONE: "test-zone-1", CAPACITY_TYPE: "spot", ARCH: "amd64", "kubernetes.io/os": "linux"}},
        "spec": {"providerID": "fake:///n1"},
        "status": {"capacity": {"cpu": "2", "memory": "2Gi", "pods": "5"},
            "allocatable": {"cpu": "1900m", "memory": "2038Mi", "pods": "5"}}});
    let mut p = sized(
        "p",
        json!({"memory": "100M"}),
        json!({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}),
    );
    p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": owner,
        "name": "owner", "uid": "u1", "controller": true, "blockOwnerDeletion": true}]);
    vec![pool("default", vec![any_capacity()], json!({})), node, p]
}

/// Upstream It: "should not reschedule pods from a deleting node when pods are not active and they are owned by a ReplicaSet".
/// Upstream It: "should reschedule pods from a deleting node when pods are not active and they are owned by a StatefulSet".
/// The ReplicaSet's terminating pod is not planned again (its replacement will be a new pod);
/// the StatefulSet's is (it comes back under the same name), on a small-instance-type node.
#[test]
fn terminating_pods_of_a_deleting_node_by_owner() {
    let p = planned(deleting_node_with("ReplicaSet"));
    assert!(p.claims().is_empty(), "{:#}", p.json);
    let p = planned(deleting_node_with("StatefulSet"));
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(
        p.label("p", INSTANCE_TYPE),
        Some("small-instance-type"),
        "{:#}",
        p.json
    );
}
