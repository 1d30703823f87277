//! Karpenter's topology tests (core v1.14.1 `pkg/controllers/provisioning/scheduling/
//! topology_test.go`) replayed through the binary from manifests — the Its that
//! `upstream_scheduling_binary` (s19-bsched) did not replay: minDomains with existing pods,
//! `matchLabelKeys`, `nodeTaintsPolicy` / `nodeAffinityPolicy`, `ScheduleAnyway`, spreads over a
//! pool's subset, capacity types and custom keys, combined spreads, spreads counting existing
//! nodes and their bound pods, pod affinity and anti-affinity (namespaces, `namespaceSelector`,
//! preferences, the inverse anti-affinity of existing pods) and the volume-zone It.
//!
//! Each It's objects are planned by `provision --dry-run -f - -o json --catalog` against the fake
//! cloud provider's types (`tests/fixtures/s19-bsched/fake-catalog.yaml`). Where an It calls
//! `ExpectProvisioned` more than once, [`Cluster`] carries the cluster between the calls: every
//! NodeClaim the binary planned becomes a Node (its labels and taints, the allocatable of its
//! type) with its pods bound there and Running — what the next batch sees upstream.
//! `ExpectSkew` is [`Cluster::skew`]: pods matching `test: test` per domain over those nodes.
//! docs/upstream-tests.md "Topology Its through the binary (s21-btopo)" maps each It to its test.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::upstream_scheduling_binary::{
    assorted_catalog, deployment, plan, plan_on, pod, pod_affinity, pool, req, required, sized,
    spread, Plan, ARCH, CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, ZONE,
};

fn test_labels() -> Value {
    json!({"test": "test"})
}

/// `PodOptions.ObjectMeta.Labels`.
fn labelled(labels: Value) -> Value {
    json!({"metadata": {"labels": labels}})
}

/// A spread over pods labelled `test: test`, `whenUnsatisfiable` as given.
fn tsc(key: &str, max_skew: u32, when: &str) -> Value {
    let mut s = spread(key, max_skew);
    s["whenUnsatisfiable"] = json!(when);
    s
}

/// `n` pods `prefix-0 …` with `patch` (labels, constraints) and a CPU request when `cpu` is set.
fn pods(prefix: &str, n: usize, cpu: Option<&str>, patch: &Value) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let name = format!("{prefix}-{i}");
            match cpu {
                Some(c) => sized(&name, json!({ "cpu": c }), patch.clone()),
                None => pod(&name, patch.clone()),
            }
        })
        .collect()
}

/// Labelled `test: test` with these spread constraints (and `extra` merged into the pod).
fn spreading(constraints: Vec<Value>, extra: Value) -> Value {
    let mut p = json!({"metadata": {"labels": test_labels()},
        "spec": {"topologySpreadConstraints": constraints}});
    crate::support::merge(&mut p, extra);
    p
}

/// The topology suite's pool: `karpenter.sh/capacity-type Exists` and `extra` requirements.
fn suite_pool(extra: Vec<Value>) -> Value {
    let mut reqs = vec![req(CAPACITY_TYPE, "Exists", &[])];
    reqs.extend(extra);
    pool("default", reqs, json!({}))
}

/// A pool whose requirements were replaced (`nodePool.Spec.Template.Spec.Requirements = …`).
fn replaced(reqs: Vec<Value>) -> Value {
    pool("default", reqs, json!({}))
}

/// A pool whose requirements were replaced by `key In values` alone.
fn only(key: &str, values: &[&str]) -> Value {
    replaced(vec![req(key, "In", values)])
}

/// An unowned Node with these labels (hostname = name), taints and allocatable.
fn node(name: &str, labels: Value, allocatable: Value, taints: Value) -> Value {
    let mut l = json!({ HOSTNAME: name, "kubernetes.io/os": "linux" });
    crate::support::merge(&mut l, labels);
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": l},
        "spec": {"taints": taints},
        "status": {"allocatable": allocatable.clone(), "capacity": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// A full Node (no room left: only its labels count).
fn full_node(name: &str, labels: Value) -> Value {
    node(
        name,
        labels,
        json!({"cpu": "0", "memory": "0", "pods": "0"}),
        json!([]),
    )
}

/// A pod bound to `node`, Running, labelled `labels`.
fn bound(name: &str, node: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "i"}]},
        "status": {"phase": "Running"}})
}

/// The allocatable of a fake type (capacity less the fake's 100m / 10Mi kube-reserved), or of an
/// `InstanceTypesAssorted()` type named `C-cpu-M-mem-…`.
fn allocatable(instance_type: &str) -> Value {
    let (cpu, gib, pods) = match instance_type {
        "small-instance-type" => (2, 2, 5),
        "arm-instance-type" => (16, 128, 5),
        "single-pod-instance-type" => (4, 4, 1),
        "default-instance-type" | "gpu-vendor-instance-type" | "gpu-vendor-b-instance-type" => {
            (4, 4, 5)
        }
        other => {
            let parts: Vec<&str> = other.split('-').collect();
            (parts[0].parse().unwrap(), parts[2].parse().unwrap(), 5)
        }
    };
    json!({"cpu": format!("{}m", cpu * 1000 - 100), "memory": format!("{}Mi", gib * 1024 - 10),
        "pods": pods.to_string()})
}

/// The cluster between an It's `ExpectProvisioned` calls.
#[derive(Default)]
struct Cluster {
    /// Nodes made from earlier plans and the pods bound to them.
    objects: Vec<Value>,
    batches: usize,
}

impl Cluster {
    fn with(objects: Vec<Value>) -> Self {
        Cluster {
            objects,
            batches: 0,
        }
    }

    /// `ExpectProvisioned`: plans `objects` (pools, pods, …) with the cluster, then makes each
    /// planned NodeClaim a Node with its pods bound.
    fn provision(&mut self, objects: Vec<Value>) -> Plan {
        self.provision_on(None, objects)
    }

    fn provision_on(&mut self, catalog: Option<&std::path::Path>, objects: Vec<Value>) -> Plan {
        let pods: BTreeMap<String, Value> = objects
            .iter()
            .filter(|o| o["kind"] == "Pod")
            .map(|p| {
                let ns = p["metadata"]["namespace"].as_str().unwrap_or("default");
                (
                    format!("{ns}/{}", p["metadata"]["name"].as_str().unwrap()),
                    p.clone(),
                )
            })
            .collect();
        let mut all = self.objects.clone();
        all.extend(objects);
        let p = match catalog {
            Some(c) => plan_on(c, all),
            None => plan(all),
        };
        self.batches += 1;
        for c in p.claims() {
            let name = format!("b{}-{}", self.batches, c["name"].as_str().unwrap());
            // The NodeClaim's labels, `karpenter.sh/nodepool` included, as the launched node's.
            let labels = c["labels"].clone();
            let taints = c.get("taints").cloned().unwrap_or(json!([]));
            let it = c["instanceType"].as_str().unwrap();
            self.objects
                .push(node(&name, labels, allocatable(it), taints));
            // Pods of a Deployment are not bound here: no It reads them back.
            for key in c["pods"].as_array().unwrap() {
                let Some(pod) = pods.get(key.as_str().unwrap()) else {
                    continue;
                };
                let mut bound = pod.clone();
                bound["spec"]["nodeName"] = json!(name);
                bound["status"] = json!({"phase": "Running"});
                self.objects.push(bound);
            }
        }
        for e in p.json["existingNodes"].as_array().unwrap() {
            for key in e["pods"].as_array().unwrap() {
                let Some(pod) = pods.get(key.as_str().unwrap()) else {
                    continue;
                };
                let mut bound = pod.clone();
                bound["spec"]["nodeName"] = e["name"].clone();
                bound["status"] = json!({"phase": "Running"});
                self.objects.push(bound);
            }
        }
        p
    }

    /// `ExpectProvisioned` of `pool` and `n` pods `prefix-0 …` (see [`pods`]).
    fn batch(
        &mut self,
        pool: Value,
        prefix: &str,
        n: usize,
        cpu: Option<&str>,
        patch: &Value,
    ) -> Plan {
        let mut objects = vec![pool];
        objects.extend(pods(prefix, n, cpu, patch));
        self.provision(objects)
    }

    /// Removes the bound pods `drop` rejects (upstream's `ExpectDeleted`), keeping their nodes.
    fn delete_pods(&mut self, drop: impl Fn(&Value, &Value) -> bool) {
        let nodes: BTreeMap<String, Value> = self
            .objects
            .iter()
            .filter(|o| o["kind"] == "Node")
            .map(|n| {
                (
                    n["metadata"]["name"].as_str().unwrap().to_string(),
                    n.clone(),
                )
            })
            .collect();
        self.objects.retain(|o| {
            o["kind"] != "Pod" || !drop(o, &nodes[o["spec"]["nodeName"].as_str().unwrap()])
        });
    }

    /// `ExpectSkew(ctx, client, "default", {topologyKey: key, labelSelector: selector})`: pods
    /// in `default` whose labels hold `selector` (all when `None`), per domain of `key` over the
    /// nodes (`kubernetes.io/hostname`: per node), sorted.
    fn skew_of(&self, key: &str, selector: Option<&Value>) -> Vec<usize> {
        let nodes: BTreeMap<&str, &Value> = self
            .objects
            .iter()
            .filter(|o| o["kind"] == "Node")
            .map(|n| (n["metadata"]["name"].as_str().unwrap(), n))
            .collect();
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for p in self.objects.iter().filter(|o| o["kind"] == "Pod") {
            // `IgnoredForTopology`: terminal and terminating pods are not counted.
            let phase = p["status"]["phase"].as_str().unwrap_or("");
            if p["metadata"]["namespace"] != "default"
                || matches!(phase, "Failed" | "Succeeded")
                || !p["metadata"]["deletionTimestamp"].is_null()
            {
                continue;
            }
            if let Some(sel) = selector {
                let ok = sel
                    .as_object()
                    .unwrap()
                    .iter()
                    .all(|(k, v)| &p["metadata"]["labels"][k] == v);
                if !ok {
                    continue;
                }
            }
            let Some(n) = nodes.get(p["spec"]["nodeName"].as_str().unwrap()) else {
                continue;
            };
            let domain = if key == HOSTNAME {
                n["metadata"]["name"].as_str().map(str::to_string)
            } else {
                n["metadata"]["labels"][key].as_str().map(str::to_string)
            };
            if let Some(d) = domain {
                *by.entry(d).or_default() += 1;
            }
        }
        let mut counts: Vec<usize> = by.into_values().collect();
        counts.sort_unstable();
        counts
    }

    /// [`Cluster::skew_of`] over pods labelled `test: test`.
    fn skew(&self, key: &str) -> Vec<usize> {
        self.skew_of(key, Some(&test_labels()))
    }

    /// `ExpectMaxSkew`: the largest count less the smallest over the domains that hold pods.
    fn max_skew(&self, key: &str) -> usize {
        let s = self.skew(key);
        s.last().copied().unwrap_or(0) - s.first().copied().unwrap_or(0)
    }

    /// The node a bound pod is on.
    fn node_of(&self, pod: &str) -> &Value {
        let p = self
            .objects
            .iter()
            .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == pod)
            .unwrap_or_else(|| panic!("{pod} is not bound"));
        let name = &p["spec"]["nodeName"];
        self.objects
            .iter()
            .find(|o| o["kind"] == "Node" && &o["metadata"]["name"] == name)
            .unwrap()
    }
}

/// The plan in short, for failure messages: each NodeClaim's name, round, zone, capacity type,
/// type and pods; pods on existing nodes; pending pods.
fn brief(p: &Plan) -> String {
    let mut out = String::new();
    for c in p.claims() {
        out += &format!(
            "{} r{} {} {} {} {:?}\n",
            c["name"].as_str().unwrap_or(""),
            c["round"],
            c["zone"].as_str().unwrap_or("?"),
            c["capacityType"].as_str().unwrap_or("?"),
            c["instanceType"].as_str().unwrap_or("?"),
            c["pods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap_or(""))
                .collect::<Vec<_>>()
        );
    }
    out += &format!(
        "existing {}\npending {:?}",
        p.json["existingNodes"],
        p.pending()
    );
    out
}

/// `Plan::assert_pending` with the short plan in the message.
fn pending_are(p: &Plan, pods: &[&str]) {
    let mut got: Vec<String> = p.pending().into_iter().map(|(n, _)| n).collect();
    let mut want: Vec<String> = pods.iter().map(|n| n.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{}", brief(p));
    assert_eq!(p.code, i32::from(!pods.is_empty()), "{}", brief(p));
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// A one-batch plan's `ExpectSkew` (a fresh cluster).
fn once(objects: Vec<Value>) -> (Plan, Cluster) {
    let mut c = Cluster::default();
    let p = c.provision(objects);
    (p, c)
}

/// [`once`] of `pool` and `n` pods `prefix-0 …` (see [`pods`]).
fn once_with(
    pool: Value,
    prefix: &str,
    n: usize,
    cpu: Option<&str>,
    patch: &Value,
) -> (Plan, Cluster) {
    let mut objects = vec![pool];
    objects.extend(pods(prefix, n, cpu, patch));
    once(objects)
}

fn rr() -> Option<&'static str> {
    Some("1.1")
}

// ---- topology_test.go › Topology › Zonal ----

/// "should respect NodePool zonal constraints (existing pod)": a 1.1-CPU pod in test-zone-3,
/// then the pool narrowed to zones 1 and 2 and six spread pods → 1, 2, 2 (two pending).
#[test]
fn zonal_an_existing_pod_in_a_zone_the_pool_left_counts() {
    let mut c = Cluster::default();
    c.provision(vec![
        suite_pool(vec![]),
        sized(
            "first",
            json!({"cpu": "1.1"}),
            json!({"metadata": {"labels": test_labels()}, "spec": {"nodeSelector": {ZONE: "test-zone-3"}}}),
        ),
    ]);
    let mut objects = vec![only(ZONE, &["test-zone-1", "test-zone-2"])];
    objects.extend(pods(
        "web",
        6,
        rr(),
        &spreading(vec![spread(ZONE, 1)], json!({})),
    ));
    let p = c.provision(objects);
    assert_eq!(c.skew(ZONE), [1, 2, 2], "{}", brief(&p));
    assert_eq!(p.pending().len(), 2);
}

/// "should schedule to the non-minimum domain if its all that's available": maxSkew 5, one pod
/// each in zones 1 and 2 (pools narrowed in turn), then zone 3 only and ten pods → 1, 1, 6.
#[test]
fn zonal_the_only_domain_left_takes_up_to_max_skew() {
    let mut c = Cluster::default();
    let spec = spreading(vec![spread(ZONE, 5)], json!({}));
    for (i, zone) in ["test-zone-1", "test-zone-2"].into_iter().enumerate() {
        c.batch(only(ZONE, &[zone]), &format!("z{i}"), 1, rr(), &spec);
    }
    assert_eq!(c.skew(ZONE), [1, 1]);
    let p = c.batch(only(ZONE, &["test-zone-3"]), "web", 10, rr(), &spec);
    assert_eq!(c.skew(ZONE), [1, 1, 6], "{}", brief(&p));
    assert_eq!(p.pending().len(), 4);
}

/// "should only schedule to minimum domains if already violating max skew": nine pods → 3, 3,
/// 3; the pods outside test-zone-1 deleted (their nodes stay, with room); three more → 3, 1, 2.
#[test]
fn zonal_new_pods_go_to_the_minimum_domains_first() {
    let mut c = Cluster::default();
    let spec = spreading(vec![spread(ZONE, 1)], json!({}));
    c.batch(suite_pool(vec![]), "first", 9, rr(), &spec);
    assert_eq!(c.skew(ZONE), [3, 3, 3]);
    c.delete_pods(|_, n| n["metadata"]["labels"][ZONE] != "test-zone-1");
    assert_eq!(c.skew(ZONE), [3]);
    let p = c.batch(suite_pool(vec![]), "more", 3, rr(), &spec);
    assert_eq!(c.skew(ZONE), [1, 2, 3], "{}", brief(&p));
    pending_are(&p, &[]);
}

/// "should not violate max-skew when unsat = do not schedule" and "… (discover domains)" (the
/// first pod without the spread): one pod in test-zone-1, then zones 2 and 3 only and ten pods →
/// 1, 2, 2.
/// Upstream It: "should not violate max-skew when unsat = do not schedule (discover domains)".
#[test]
fn zonal_do_not_schedule_keeps_the_max_skew() {
    for first_spreads in [true, false] {
        let mut c = Cluster::default();
        let spec = spreading(vec![spread(ZONE, 1)], json!({}));
        let first = if first_spreads {
            spec.clone()
        } else {
            labelled(test_labels())
        };
        c.batch(only(ZONE, &["test-zone-1"]), "first", 1, rr(), &first);
        let mut objects = vec![only(ZONE, &["test-zone-2", "test-zone-3"])];
        objects.extend(pods("web", 10, rr(), &spec));
        let p = c.provision(objects);
        assert_eq!(c.skew(ZONE), [1, 2, 2], "{first_spreads}: {}", brief(&p));
        assert_eq!(p.pending().len(), 6);
    }
}

// ---- topology_test.go › Topology › CapacityType ----

/// "should not violate max-skew when unsat = do not schedule (capacity type)" (→ 1, 2) and
/// "should violate max-skew when unsat = schedule anyway (capacity type)" (→ 1, 5): one pod on
/// spot, then on-demand only and five pods.
#[test]
fn capacity_type_do_not_schedule_and_schedule_anyway() {
    for (when, want, pending) in [("DoNotSchedule", [1, 2], 3), ("ScheduleAnyway", [1, 5], 0)] {
        let mut c = Cluster::default();
        let spec = spreading(vec![tsc(CAPACITY_TYPE, 1, when)], json!({}));
        c.batch(only(CAPACITY_TYPE, &["spot"]), "first", 1, rr(), &spec);
        assert_eq!(c.skew(CAPACITY_TYPE), [1]);
        let p = c.batch(only(CAPACITY_TYPE, &["on-demand"]), "web", 5, rr(), &spec);
        assert_eq!(c.skew(CAPACITY_TYPE), want, "{when}: {}", brief(&p));
        assert_eq!(p.pending().len(), pending, "{when}");
    }
}

/// "should only count running/scheduled pods with matching labels scheduled to nodes with a
/// corresponding domain" (capacity type): spot counts 2, on-demand 1 → 2, 3. Upstream's two
/// unbound pods without the Unschedulable condition (plain, terminating) are not provisionable
/// there; a manifest pod without a node is taken as pending here, so they are left out, and a
/// terminating pod bound to the on-demand node stands for "ignored, terminating".
#[test]
fn capacity_type_only_running_matching_pods_on_labelled_nodes_count() {
    let t = test_labels();
    let phase = |mut p: Value, phase: &str| {
        p["status"]["phase"] = json!(phase);
        p
    };
    let mut other_ns = bound("other-ns", "first", t.clone());
    other_ns["metadata"]["namespace"] = json!("elsewhere");
    let mut c = Cluster::with(vec![
        full_node("first", json!({ CAPACITY_TYPE: "spot" })),
        full_node("second", json!({ CAPACITY_TYPE: "on-demand" })),
        full_node("third", json!({})),
        bound("unlabelled", "first", json!({})),
        bound("no-domain", "third", t.clone()),
        other_ns,
        phase(bound("failed", "first", t.clone()), "Failed"),
        phase(bound("succeeded", "first", t.clone()), "Succeeded"),
        bound("r1", "first", t.clone()),
        bound("r2", "first", t.clone()),
        bound("r3", "second", t.clone()),
    ]);
    let mut terminating = bound("terminating", "second", t.clone());
    terminating["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    c.objects.push(terminating);
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods(
        "web",
        2,
        None,
        &spreading(vec![spread(CAPACITY_TYPE, 1)], json!({})),
    ));
    let p = c.provision(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew(CAPACITY_TYPE), [2, 3], "{}", brief(&p));
}

/// "should match all pods when labelSelector is not specified" (→ 1) and "should handle
/// interdependent selectors" (five pods not matching their own hostname spread → one node),
/// in the CapacityType context.
#[test]
fn capacity_type_no_selector_and_interdependent_selectors() {
    let (p, c) = once(vec![suite_pool(vec![]), pod("p", json!({}))]);
    pending_are(&p, &[]);
    assert_eq!(c.skew_of(CAPACITY_TYPE, None), [1]);
    let (p, _) = once(vec![
        suite_pool(vec![]),
        deployment(
            "other",
            5,
            json!({"app": "other"}),
            json!({"topologySpreadConstraints": [spread(HOSTNAME, 1)]}),
        ),
    ]);
    pending_are(&p, &[]);
    assert_eq!(p.claims().len(), 1, "{}", brief(&p));
}

/// "should balance pods across capacity-types (node required affinity constrained)": an
/// on-demand pod in zone 1, then five spot pods required in zone 2 → 1, 5 (the on-demand node
/// does not match their affinity, so it is not counted).
#[test]
fn capacity_type_nodes_outside_the_pods_affinity_do_not_count() {
    let mut c = Cluster::default();
    c.provision(vec![
        suite_pool(vec![]),
        pod(
            "first",
            crate::upstream_scheduling_binary::both(
                labelled(test_labels()),
                required(vec![
                    req(ZONE, "In", &["test-zone-1"]),
                    req(CAPACITY_TYPE, "In", &["on-demand"]),
                ]),
            ),
        ),
    ]);
    let spec = spreading(
        vec![spread(CAPACITY_TYPE, 1)],
        required(vec![
            req(ZONE, "In", &["test-zone-2"]),
            req(CAPACITY_TYPE, "In", &["spot"]),
        ]),
    );
    let p = c.batch(suite_pool(vec![]), "web", 5, None, &spec);
    pending_are(&p, &[]);
    assert_eq!(c.skew(CAPACITY_TYPE), [1, 5], "{}", brief(&p));
}

/// "should balance pods across capacity-types (no constraints)" (an on-demand
/// single-pod-instance-type node, then spot only → 1, 2) and "should balance pods across arch (no
/// constraints)" (an amd64 node, then arm64 only → 1, 2).
#[test]
fn an_existing_node_of_the_other_domain_limits_the_new_ones() {
    for (key, first, narrowed) in [
        (CAPACITY_TYPE, "on-demand", "spot"),
        (ARCH, "amd64", "arm64"),
    ] {
        let mut c = Cluster::default();
        c.provision(vec![
            suite_pool(vec![]),
            pod(
                "first",
                crate::upstream_scheduling_binary::both(
                    json!({"metadata": {"labels": test_labels()},
                        "spec": {"nodeSelector": {INSTANCE_TYPE: "single-pod-instance-type"}}}),
                    required(vec![req(key, "In", &[first])]),
                ),
            ),
        ]);
        let mut objects = vec![only(key, &[narrowed])];
        objects.extend(pods(
            "web",
            5,
            Some("2"),
            &spreading(vec![spread(key, 1)], json!({})),
        ));
        let p = c.provision(objects);
        assert_eq!(c.skew(key), [1, 2], "{key}: {}", brief(&p));
        assert_eq!(p.pending().len(), 3, "{key}");
    }
}

// ---- topology_test.go › Topology › Combined Hostname and Zonal Topology ----

/// Runs batches of `sizes` spread pods through one cluster; after each, `check(cluster, i)`;
/// with `all_scheduled` (the It's `ExpectScheduled`), no pod may stay pending.
fn batches(
    sizes: &[usize],
    constraints: &[Value],
    all_scheduled: bool,
    check: impl Fn(&Cluster, usize),
) {
    let mut c = Cluster::default();
    for (i, n) in sizes.iter().enumerate() {
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(pods(
            &format!("b{i}"),
            *n,
            None,
            &spreading(constraints.to_vec(), json!({})),
        ));
        let p = c.provision(objects);
        if all_scheduled {
            pending_are(&p, &[]);
        }
        check(&c, i);
    }
}

/// Batches of 2, 3, 5, 11 pods spread on `key` (maxSkew 1) and hostname (maxSkew 3): the
/// counts per `key` domain after each batch are `want`, and no node holds more than 3.
fn spread_with_hostname_over_four_batches(key: &str, want: [Vec<usize>; 4]) {
    batches(
        &[2, 3, 5, 11],
        &[spread(key, 1), spread(HOSTNAME, 3)],
        true,
        |c, i| {
            assert_eq!(c.skew(key), want[i], "batch {i}");
            assert!(c.skew(HOSTNAME).iter().all(|n| *n <= 3), "batch {i}");
        },
    );
}

/// "should spread pods while respecting both constraints (hostname and zonal)": batches of 2,
/// 3, 5, 11 → zones 1, 1 / 2, 2, 1 / 4, 3, 3 / 7, 7, 7, no node above 3.
#[test]
fn zone_and_hostname_spread_over_four_batches() {
    spread_with_hostname_over_four_batches(
        ZONE,
        [vec![1, 1], vec![1, 2, 2], vec![3, 3, 4], vec![7, 7, 7]],
    );
}

/// Combined Hostname and Zonal › "should spread pods while respecting both constraints"
/// (capacity type maxSkew 1 and hostname maxSkew 3): batches of 2, 3, 5, 11 → 1, 1 / 3, 2 /
/// 5, 5 / 11, 10.
#[test]
fn capacity_type_and_hostname_spread_over_four_batches() {
    spread_with_hostname_over_four_batches(
        CAPACITY_TYPE,
        [vec![1, 1], vec![2, 3], vec![5, 5], vec![10, 11]],
    );
}

/// "should balance pods across NodePool requirements": a spot pool with
/// `capacity.spread.4-1 In [2..5]` and an on-demand pool with `In [1]`; twenty pods → 4 per
/// value, 16 spot and 4 on-demand.
#[test]
fn a_custom_key_spread_across_two_pools() {
    let key = "capacity.spread.4-1";
    let (p, c) = once(
        vec![
            pool(
                "spot",
                vec![
                    req(CAPACITY_TYPE, "In", &["spot"]),
                    req(key, "In", &["2", "3", "4", "5"]),
                ],
                json!({}),
            ),
            pool(
                "on-demand",
                vec![
                    req(CAPACITY_TYPE, "In", &["on-demand"]),
                    req(key, "In", &["1"]),
                ],
                json!({}),
            ),
        ]
        .into_iter()
        .chain(pods(
            "web",
            20,
            None,
            &spreading(vec![spread(key, 1)], json!({})),
        ))
        .collect(),
    );
    pending_are(&p, &[]);
    assert_eq!(c.skew(key), [4, 4, 4, 4, 4], "{}", brief(&p));
    assert_eq!(c.skew(CAPACITY_TYPE), [4, 16], "{}", brief(&p));
}

/// Combined Hostname and Zonal › "should spread pods while respecting both constraints" (zonal
/// DoNotSchedule, hostname ScheduleAnyway): the pool in zones 1 and 2, a second pool in zone 3
/// with `limits.cpu: 0` → one pod per zone, one per node, eight pending (zone 3 is a domain
/// nothing can launch into).
#[test]
fn a_pool_that_cannot_launch_still_brings_its_zone() {
    let b = pool(
        "b",
        vec![req(ZONE, "In", &["test-zone-3"])],
        json!({"pool": {"limits": {"cpu": "0"}}}),
    );
    let mut objects = vec![only(ZONE, &["test-zone-1", "test-zone-2"]), b];
    objects.extend(pods(
        "web",
        10,
        None,
        &spreading(
            vec![spread(ZONE, 1), tsc(HOSTNAME, 1, "ScheduleAnyway")],
            json!({}),
        ),
    ));
    let (p, c) = once(objects);
    assert_eq!(c.skew(ZONE), [1, 1], "{}", brief(&p));
    assert_eq!(c.skew(HOSTNAME), [1, 1], "{}", brief(&p));
    assert_eq!(p.pending().len(), 8);
}

// ---- topology_test.go › Topology › MatchLabelKeys ----

/// "should support matchLabelKeys" (two pods each of `test-label: value-a` / `value-b` → two
/// nodes of two) and "should ignore unknown labels specified in matchLabelKeys" (four pods →
/// four nodes).
#[test]
fn match_label_keys() {
    let mut s = spread(HOSTNAME, 1);
    s["matchLabelKeys"] = json!(["test-label"]);
    let mut objects = vec![suite_pool(vec![])];
    for v in ["value-a", "value-b"] {
        objects.extend(pods(
            v,
            2,
            None,
            &json!({"metadata": {"labels": {"test": "test", "test-label": v}},
                "spec": {"topologySpreadConstraints": [s.clone()]}}),
        ));
    }
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew(HOSTNAME), [2, 2], "{}", brief(&p));
    let (p, c) = once_with(
        suite_pool(vec![]),
        "web",
        4,
        None,
        &spreading(vec![s], json!({})),
    );
    assert_eq!(c.skew(HOSTNAME), [1, 1, 1, 1], "{}", brief(&p));
}

// ---- topology_test.go › Topology › NodeTaintsPolicy, NodeAffinityPolicy ----

fn fake_label_spread(policy: &str, value: &str) -> Value {
    let mut s = spread("fake-label", 1);
    s[policy] = json!(value);
    s
}

/// Plans `objects` with `n` pods spreading on `fake-label` under `policy` (`(field, value)`,
/// e.g. `("nodeTaintsPolicy", "Honor")`), each requesting `cpu`, with `extra` merged in; the
/// counts per `fake-label` domain, and the short plan.
fn fake_label_counts(
    mut objects: Vec<Value>,
    n: usize,
    cpu: Option<&str>,
    policy: (&str, &str),
    extra: Value,
) -> (Vec<usize>, String) {
    objects.extend(pods(
        "web",
        n,
        cpu,
        &spreading(vec![fake_label_spread(policy.0, policy.1)], extra),
    ));
    let (p, c) = once(objects);
    (c.skew("fake-label"), brief(&p))
}

/// "should balance pods across a label (NodeTaintsPolicy=ignore)" (→ 1) and "(…=honor)" (→ 5):
/// the pool labels `fake-label: baz`, two tainted 100m nodes hold `foo` and `bar`; five 1-CPU
/// pods.
/// Upstream It: "should balance pods across a label (NodeTaintsPolicy=honor)".
#[test]
fn node_taints_policy_on_existing_tainted_nodes() {
    for (policy, want) in [("Ignore", vec![1]), ("Honor", vec![5])] {
        let taint = json!([{"key": "taintname", "value": "taintvalue", "effect": "NoSchedule"}]);
        let objects = vec![
            pool(
                "default",
                vec![req(CAPACITY_TYPE, "Exists", &[])],
                json!({"metadata": {"labels": {"fake-label": "baz"}}}),
            ),
            node(
                "node1",
                json!({"fake-label": "foo"}),
                json!({"cpu": "100m"}),
                taint.clone(),
            ),
            node(
                "node2",
                json!({"fake-label": "bar"}),
                json!({"cpu": "100m"}),
                taint,
            ),
        ];
        let (counts, plan) = fake_label_counts(
            objects,
            5,
            Some("1"),
            ("nodeTaintsPolicy", policy),
            json!({}),
        );
        assert_eq!(counts, want, "{policy}: {plan}");
    }
}

/// "should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=
/// ignore)" (→ 1) and "(…=honor)" (→ 2): `fake-label In [foo]` on the pool, `In [bar]` on a
/// tainted pool; two pods.
#[test]
fn node_taints_policy_on_a_tainted_pools_domains() {
    for (policy, want) in [("Ignore", vec![1]), ("Honor", vec![2])] {
        let tainted = pool(
            "tainted",
            vec![
                req(CAPACITY_TYPE, "Exists", &[]),
                req("fake-label", "In", &["bar"]),
            ],
            json!({"spec": {"taints": [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]}}),
        );
        let objects = vec![suite_pool(vec![req("fake-label", "In", &["foo"])]), tainted];
        let (counts, plan) =
            fake_label_counts(objects, 2, None, ("nodeTaintsPolicy", policy), json!({}));
        assert_eq!(counts, want, "{policy}: {plan}");
    }
}

/// "should balance pods across a label when mutually exclusive NodePools (by taints) share
/// domains (NodeTaintsPolicy=honor)": pools tainted `nodepool-0` over foo, bar and `nodepool-1`
/// over foo, baz; two pods tolerate the first, four the second → 3, 2, 1.
#[test]
fn node_taints_policy_pools_sharing_a_domain() {
    let mut objects = Vec::new();
    for (i, domains) in [["foo", "bar"], ["foo", "baz"]].iter().enumerate() {
        let value = format!("nodepool-{i}");
        objects.push(pool(
            &format!("pool-{i}"),
            vec![
                req(CAPACITY_TYPE, "Exists", &[]),
                req("fake-label", "In", domains),
            ],
            json!({"spec": {"taints": [{"key": "taint-key", "value": value, "effect": "NoSchedule"}]}}),
        ));
        objects.extend(pods(
            &format!("d{i}"),
            (i + 1) * 2,
            None,
            &spreading(
                vec![fake_label_spread("nodeTaintsPolicy", "Honor")],
                json!({"spec": {"tolerations": [{"key": "taint-key", "effect": "NoSchedule", "value": value}]}}),
            ),
        ));
    }
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew("fake-label"), [1, 2, 3], "{}", brief(&p));
}

/// "should balance pods across a label (NodeAffinityPolicy=ignore)" (→ 1) and "(…=honor)" (→
/// 5): the pool labels `fake-label: baz, selector: value`, two 100m nodes hold foo and bar with
/// `selector: mismatch`; five 1-CPU pods select `selector: value`.
/// Upstream It: "should balance pods across a label (NodeAffinityPolicy=honor)".
#[test]
fn node_affinity_policy_on_nodes_the_pod_does_not_select() {
    for (policy, want) in [("Ignore", vec![1]), ("Honor", vec![5])] {
        let objects = vec![
            pool(
                "default",
                vec![req(CAPACITY_TYPE, "Exists", &[])],
                json!({"metadata": {"labels": {"fake-label": "baz", "selector": "value"}}}),
            ),
            node(
                "node1",
                json!({"fake-label": "foo", "selector": "mismatch"}),
                json!({"cpu": "100m"}),
                json!([]),
            ),
            node(
                "node2",
                json!({"fake-label": "bar", "selector": "mismatch"}),
                json!({"cpu": "100m"}),
                json!([]),
            ),
        ];
        let (counts, plan) = fake_label_counts(
            objects,
            5,
            Some("1"),
            ("nodeAffinityPolicy", policy),
            json!({"spec": {"nodeSelector": {"selector": "value"}}}),
        );
        assert_eq!(counts, want, "{policy}: {plan}");
    }
}

// ---- topology_test.go › Topology › Combined Zonal and Capacity Type; Hostname, Zonal and
// Capacity Type ----

/// Combined Zonal and Capacity Type › "should spread pods while respecting both constraints":
/// batches of 2, 3, 3, 11; no capacity type above 1, 3, 5, 11 and no zone above 1, 2, 4, 7 (the
/// It checks only these bounds, not that every pod schedules: after 2 and 3 here on-demand holds
/// 3 and spot 2, zones 2, 2, 1, so a pod must go to spot in test-zone-3, which the fake does
/// not offer, and the third batch stays pending — upstream reaches the same state when its
/// tie-breaks between equal domains, which iterate a map, pick as ours did).
#[test]
fn zone_and_capacity_type_spread_over_four_batches() {
    let ct_max = [1, 3, 5, 11];
    let zone_max = [1, 2, 4, 7];
    batches(
        &[2, 3, 3, 11],
        &[spread(CAPACITY_TYPE, 1), spread(ZONE, 1)],
        false,
        |c, i| {
            assert!(
                c.skew(CAPACITY_TYPE).iter().all(|n| *n <= ct_max[i]),
                "batch {i}: {:?}",
                c.skew(CAPACITY_TYPE)
            );
            assert!(
                c.skew(ZONE).iter().all(|n| *n <= zone_max[i]),
                "batch {i}: {:?}",
                c.skew(ZONE)
            );
        },
    );
}

/// Combined Hostname, Zonal, and Capacity Type › "should spread pods while respecting all
/// constraints": on `InstanceTypesAssorted()`, batches of 1 … 14 pods, each scheduled, max skew
/// at most 1 (capacity type), 2 (zone), 3 (hostname) after each.
/// Upstream It: "should spread pods while respecting all constraints".
#[test]
fn hostname_zone_and_capacity_type_spread_over_fourteen_batches() {
    let catalog = assorted_catalog("s21-btopo-assorted.json", |_| true);
    let constraints = vec![
        spread(CAPACITY_TYPE, 1),
        spread(ZONE, 2),
        spread(HOSTNAME, 3),
    ];
    let mut c = Cluster::default();
    for i in 1..15 {
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(pods(
            &format!("b{i}"),
            i,
            None,
            &spreading(constraints.clone(), json!({})),
        ));
        let p = c.provision_on(Some(&catalog), objects);
        pending_are(&p, &[]);
        assert!(
            c.max_skew(CAPACITY_TYPE) <= 1,
            "batch {i}: {:?}",
            c.skew(CAPACITY_TYPE)
        );
        assert!(c.max_skew(ZONE) <= 2, "batch {i}: {:?}", c.skew(ZONE));
        assert!(
            c.max_skew(HOSTNAME) <= 3,
            "batch {i}: {:?}",
            c.skew(HOSTNAME)
        );
    }
}

// ---- topology_test.go › Topology › Combined Zonal Topology and Node Affinity ----

/// "should limit spread options by nodeSelector" (5 in zone 1, 10 in zone 2 → 5, 10) and "…
/// by node requirements" (ten pods required in zones 1 and 2 → 5, 5).
#[test]
fn zone_spread_limited_by_selectors_and_requirements() {
    let mut objects = vec![suite_pool(vec![])];
    for (zone, n) in [("test-zone-1", 5), ("test-zone-2", 10)] {
        objects.extend(pods(
            zone,
            n,
            None,
            &spreading(
                vec![spread(ZONE, 1)],
                json!({"spec": {"nodeSelector": {ZONE: zone}}}),
            ),
        ));
    }
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew(ZONE), [5, 10], "{}", brief(&p));
    let (p, c) = once_with(
        suite_pool(vec![]),
        "web",
        10,
        None,
        &spreading(
            vec![spread(ZONE, 1)],
            required(vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])]),
        ),
    );
    pending_are(&p, &[]);
    assert_eq!(c.skew(ZONE), [5, 5], "{}", brief(&p));
}

/// "should limit spread options by required node affinity": six pods in zones 1, 2 → 3, 3;
/// the pool opened to all three zones, one pod in zones 2, 3 → 3, 3, 1 (zone 3 improves the
/// skew); five unconstrained pods → 4, 4, 4.
#[test]
fn zone_spread_limited_by_required_node_affinity() {
    let mut c = Cluster::default();
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods(
        "a",
        6,
        None,
        &spreading(
            vec![spread(ZONE, 1)],
            required(vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])]),
        ),
    ));
    c.provision(objects);
    assert_eq!(c.skew(ZONE), [3, 3]);
    let all = || only(ZONE, &["test-zone-1", "test-zone-2", "test-zone-3"]);
    let mut objects = vec![all()];
    objects.extend(pods(
        "b",
        1,
        None,
        &spreading(
            vec![spread(ZONE, 1)],
            required(vec![req(ZONE, "In", &["test-zone-2", "test-zone-3"])]),
        ),
    ));
    let p = c.provision(objects);
    assert_eq!(c.skew(ZONE), [1, 3, 3], "{}", brief(&p));
    let mut objects = vec![all()];
    objects.extend(pods(
        "c",
        5,
        None,
        &spreading(vec![spread(ZONE, 1)], json!({})),
    ));
    let p = c.provision(objects);
    assert_eq!(c.skew(ZONE), [4, 4, 4], "{}", brief(&p));
}

/// "should not limit spread options by preferred node affinity": six pods preferring zones 1
/// and 2 → 2, 2, 2.
#[test]
fn zone_spread_not_limited_by_preferred_node_affinity() {
    let (p, c) = once_with(
        suite_pool(vec![]),
        "web",
        6,
        None,
        &spreading(
            vec![spread(ZONE, 1)],
            crate::upstream_scheduling_binary::preferred(vec![req(
                ZONE,
                "In",
                &["test-zone-1", "test-zone-2"],
            )]),
        ),
    );
    pending_are(&p, &[]);
    assert_eq!(c.skew(ZONE), [2, 2, 2], "{}", brief(&p));
}

// ---- topology_test.go › Topology › Combined Capacity Type Topology and Node Affinity ----

/// "should limit spread options by nodeSelector" (ScheduleAnyway; 5 spot, 5 on-demand → 5, 5).
#[test]
fn capacity_type_spread_limited_by_selectors() {
    let mut objects = vec![suite_pool(vec![])];
    for ct in ["spot", "on-demand"] {
        objects.extend(pods(
            ct,
            5,
            None,
            &spreading(
                vec![tsc(CAPACITY_TYPE, 1, "ScheduleAnyway")],
                json!({"spec": {"nodeSelector": {CAPACITY_TYPE: ct}}}),
            ),
        ));
    }
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew(CAPACITY_TYPE), [5, 5], "{}", brief(&p));
}

/// "should limit spread options by node affinity (capacity type)": three spot pods → 3; one
/// pod in on-demand or spot → 3, 1; five unconstrained → 5, 4.
#[test]
fn capacity_type_spread_limited_by_required_node_affinity() {
    let mut c = Cluster::default();
    for (batch, n, cts, want) in [
        ("a", 3, Some(vec!["spot"]), vec![3]),
        ("b", 1, Some(vec!["on-demand", "spot"]), vec![1, 3]),
        ("c", 5, None, vec![4, 5]),
    ] {
        let extra = match cts {
            Some(v) => required(vec![req(CAPACITY_TYPE, "In", &v)]),
            None => json!({}),
        };
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(pods(
            batch,
            n,
            None,
            &spreading(vec![spread(CAPACITY_TYPE, 1)], extra),
        ));
        let p = c.provision(objects);
        pending_are(&p, &[]);
        assert_eq!(c.skew(CAPACITY_TYPE), want, "batch {batch}: {}", brief(&p));
    }
}

// ---- topology_test.go › Topology › Pod Affinity/Anti-Affinity ----

fn s2() -> Value {
    json!({"security": "s2"})
}

/// A required (`podAffinity` / `podAntiAffinity`) term on `key` over pods labelled `labels`.
fn term(kind: &str, labels: Value, key: &str) -> Value {
    pod_affinity(kind, labels, key)
}

/// A preferred term of weight `weight`.
fn preferred_term(kind: &str, weight: u32, labels: Value, key: &str) -> Value {
    json!({"spec": {"affinity": {kind: {"preferredDuringSchedulingIgnoredDuringExecution":
        [{"weight": weight, "podAffinityTerm": {"labelSelector": {"matchLabels": labels}, "topologyKey": key}}]}}}})
}

fn with(a: Value, b: Value) -> Value {
    crate::upstream_scheduling_binary::both(a, b)
}

/// "should respect self pod affinity for first empty topology domain only (hostname)": ten
/// self-affine pods → one node of five (the type's pod capacity), five pending; ten more in a
/// second batch (the first batch's pending five still pending) → none scheduled.
#[test]
fn self_affinity_takes_the_first_empty_domain_only() {
    let mut c = Cluster::default();
    let spec = with(labelled(s2()), term("podAffinity", s2(), HOSTNAME));
    let first = pods("a", 10, None, &spec);
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(first.clone());
    let p = c.provision(objects);
    assert_eq!(p.claims().len(), 1, "{}", brief(&p));
    assert_eq!(p.pending().len(), 5);
    let pending: BTreeSet<String> = p.pending().into_iter().map(|(n, _)| n).collect();
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(
        first
            .into_iter()
            .filter(|o| pending.contains(o["metadata"]["name"].as_str().unwrap())),
    );
    objects.extend(pods("b", 10, None, &spec));
    let p = c.provision(objects);
    assert!(p.claims().is_empty(), "{}", brief(&p));
    assert_eq!(p.pending().len(), 15);
}

/// "should respect self pod affinity for first empty topology domain only (hostname/constrained
/// zones)": a self-affine pod in test-zone-1, then ten required in zones 2, 3 → none scheduled.
#[test]
fn self_affinity_to_a_pod_in_a_zone_the_pods_exclude() {
    let mut c = Cluster::default();
    let aff = with(labelled(s2()), term("podAffinity", s2(), HOSTNAME));
    c.provision(vec![
        suite_pool(vec![]),
        pod(
            "first",
            with(
                aff.clone(),
                json!({"spec": {"nodeSelector": {ZONE: "test-zone-1"}}}),
            ),
        ),
    ]);
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods(
        "web",
        10,
        None,
        &with(
            aff,
            required(vec![req(ZONE, "In", &["test-zone-2", "test-zone-3"])]),
        ),
    ));
    let p = c.provision(objects);
    assert!(p.claims().is_empty(), "{}", brief(&p));
    assert_eq!(p.pending().len(), 10);
}

/// "should respect self pod affinity (zone)" (three pods, one node) and "(zone w/ constraint)"
/// (required in test-zone-3: one node there).
/// Upstream It: "should respect self pod affinity (zone w/ constraint)".
#[test]
fn self_affinity_on_zone() {
    for zone in [None, Some("test-zone-3")] {
        let mut spec = with(labelled(s2()), term("podAffinity", s2(), ZONE));
        if let Some(z) = zone {
            spec = with(spec, required(vec![req(ZONE, "In", &[z])]));
        }
        let (p, _) = once_with(suite_pool(vec![]), "web", 3, None, &spec);
        pending_are(&p, &[]);
        assert_eq!(p.claims().len(), 1, "{}", brief(&p));
        if let Some(z) = zone {
            assert_eq!(p.claims()[0]["labels"][ZONE], z);
        }
    }
}

/// "should allow two nodes to be created when two pods with matching affinities have
/// incompatible selectors": self zone affinity, one pod required in zone 2, one in zone 3.
#[test]
fn matching_affinities_with_incompatible_selectors_get_two_nodes() {
    let spec = |z: &str| {
        with(
            with(
                labelled(json!({"security": "s1"})),
                term("podAffinity", json!({"security": "s1"}), ZONE),
            ),
            required(vec![req(ZONE, "In", &[z])]),
        )
    };
    let (p, _) = once(vec![
        suite_pool(vec![]),
        pod("p1", spec("test-zone-2")),
        pod("p2", spec("test-zone-3")),
    ]);
    pending_are(&p, &[]);
    assert_eq!(p.label("p1", ZONE), Some("test-zone-2"));
    assert_eq!(p.label("p2", ZONE), Some("test-zone-3"));
    assert_eq!(p.claims().len(), 2);
}

/// "should allow violation of preferred pod affinity" (affinity to a missing pod, ten hostname
/// spread pods) and "should allow violation of preferred pod anti-affinity" (ten pods avoiding
/// three zonally spread pods).
#[test]
fn preferred_pod_affinity_and_anti_affinity_may_be_violated() {
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods(
        "web",
        10,
        None,
        &spreading(vec![spread(HOSTNAME, 1)], json!({})),
    ));
    objects.push(pod(
        "aff",
        preferred_term("podAffinity", 50, s2(), HOSTNAME),
    ));
    let (p, _) = once(objects);
    pending_are(&p, &[]);
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods(
        "web",
        3,
        None,
        &spreading(vec![spread(ZONE, 1)], json!({})),
    ));
    objects.extend(pods(
        "anti",
        10,
        None,
        &preferred_term("podAntiAffinity", 50, test_labels(), ZONE),
    ));
    let (p, _) = once(objects);
    pending_are(&p, &[]);
}

/// The scheduling round of the NodeClaim `pod` is on (`round` 1 is upstream's first batch; a
/// pod placed in round 2 was pending after it and scheduled by the next batch).
fn round_of(p: &Plan, pod: &str) -> u64 {
    p.claim(pod)["round"].as_u64().unwrap()
}

/// "should not violate pod anti-affinity on zone (other schedules first)": a 2-CPU target (its
/// zone undecided) and a pod anti-affine to it on zone → the latter pending after the batch
/// (round 1); the plan's round 2, as upstream's next batch once the target's node has a zone,
/// puts it in another zone.
#[test]
fn anti_affinity_to_a_pod_of_undecided_zone() {
    let (p, _) = once(vec![
        suite_pool(vec![]),
        sized("target", json!({"cpu": "2"}), labelled(s2())),
        pod("anti", term("podAntiAffinity", s2(), ZONE)),
    ]);
    pending_are(&p, &[]);
    assert_eq!(round_of(&p, "target"), 1, "{}", brief(&p));
    assert_eq!(round_of(&p, "anti"), 2, "{}", brief(&p));
    assert_ne!(p.label("target", ZONE), p.label("anti", ZONE));
}

/// "should not violate pod anti-affinity (arch)": an arm64 2-CPU pod and a 1-CPU pod
/// anti-affine to it on arch → different arches.
#[test]
fn anti_affinity_on_arch() {
    let tsc = json!({"spec": {"topologySpreadConstraints": [{"topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1, "labelSelector": {"matchLabels": s2()}}]}});
    let (p, _) = once(vec![
        suite_pool(vec![]),
        sized(
            "aff1",
            json!({"cpu": "2"}),
            with(
                with(labelled(s2()), tsc.clone()),
                json!({"spec": {"nodeSelector": {ARCH: "arm64"}}}),
            ),
        ),
        sized(
            "aff2",
            json!({"cpu": "1"}),
            with(
                with(labelled(s2()), tsc),
                term("podAntiAffinity", s2(), ARCH),
            ),
        ),
    ]);
    pending_are(&p, &[]);
    assert_ne!(
        p.label("aff1", ARCH),
        p.label("aff2", ARCH),
        "{}",
        brief(&p)
    );
}

/// Three 2-CPU pods, one per zone, anti-affine (required or preferred) on zone to `s2` pods.
fn zone_pods(preferred: bool) -> Vec<Value> {
    ["test-zone-1", "test-zone-2", "test-zone-3"]
        .iter()
        .enumerate()
        .map(|(i, z)| {
            let anti = if preferred {
                preferred_term("podAntiAffinity", 10, s2(), ZONE)
            } else {
                term("podAntiAffinity", s2(), ZONE)
            };
            sized(
                &format!("zone{}", i + 1),
                json!({"cpu": "2"}),
                with(anti, json!({"spec": {"nodeSelector": {ZONE: z}}})),
            )
        })
        .collect()
}

/// "should violate preferred pod anti-affinity on zone (inverse)" (the `s2` pod schedules) and
/// "should not violate pod anti-affinity on zone (inverse)" (it stays pending): one batch.
#[test]
fn inverse_anti_affinity_in_one_batch() {
    for (preferred, pending) in [(true, vec![]), (false, vec!["target"])] {
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(zone_pods(preferred));
        objects.push(pod("target", labelled(s2())));
        let (p, _) = once(objects);
        pending_are(&p, &pending);
    }
}

/// "should not violate pod anti-affinity on zone (inverse w/existing nodes)" (pending) and
/// "should violate preferred pod anti-affinity on zone (inverse w/existing nodes)" (scheduled):
/// the three zone pods first, then the `s2` pod.
#[test]
fn inverse_anti_affinity_of_existing_pods() {
    for (preferred, pending) in [(true, vec![]), (false, vec!["target"])] {
        let mut c = Cluster::default();
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(zone_pods(preferred));
        let p = c.provision(objects);
        pending_are(&p, &[]);
        let p = c.provision(vec![suite_pool(vec![]), pod("target", labelled(s2()))]);
        pending_are(&p, &pending);
    }
}

/// "should not violate pod anti-affinity on zone (Schrödinger)": a 2-CPU pod anti-affine on
/// zone (zone undecided) keeps the `s2` pod pending in the first batch (round 1); the second
/// batch (round 2), once its node is in a zone, puts the `s2` pod in another zone.
#[test]
fn anti_affinity_of_a_pod_of_undecided_zone_then_decided() {
    let (p, _) = once(vec![
        suite_pool(vec![]),
        sized(
            "anywhere",
            json!({"cpu": "2"}),
            term("podAntiAffinity", s2(), ZONE),
        ),
        pod("target", labelled(s2())),
    ]);
    pending_are(&p, &[]);
    assert_eq!(round_of(&p, "anywhere"), 1, "{}", brief(&p));
    assert_eq!(round_of(&p, "target"), 2, "{}", brief(&p));
    assert_ne!(p.label("anywhere", ZONE), p.label("target", ZONE));
}

/// "should allow violation of a pod affinity preference with a conflicting required
/// constraint": three hostname-spread pods preferring the `s2` pod's node → all scheduled, one
/// per node.
#[test]
fn an_affinity_preference_yields_to_a_required_spread() {
    let mut objects = vec![suite_pool(vec![]), pod("target", labelled(s2()))];
    objects.extend(pods(
        "web",
        3,
        None,
        &spreading(
            vec![spread(HOSTNAME, 1)],
            preferred_term("podAffinity", 50, s2(), HOSTNAME),
        ),
    ));
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew(HOSTNAME), [1, 1, 1], "{}", brief(&p));
}

/// "should support pod anti-affinity with a zone topology": upstream needs a batch per pod
/// (each batch places one, its zone undecided until launched; the pending ones are deleted):
/// → 1 / 1, 1 / 1, 1, 1. Here one plan's rounds 1, 2, 3 place one each in three zones; a
/// further batch of three places none.
#[test]
fn self_anti_affinity_on_zone_over_batches() {
    let mut c = Cluster::default();
    let spec = with(labelled(s2()), term("podAntiAffinity", s2(), ZONE));
    let p = c.batch(suite_pool(vec![]), "a", 3, None, &spec);
    pending_are(&p, &[]);
    let mut rounds: Vec<u64> = (0..3).map(|i| round_of(&p, &format!("a-{i}"))).collect();
    rounds.sort_unstable();
    assert_eq!(rounds, [1, 2, 3], "{}", brief(&p));
    assert_eq!(c.skew_of(ZONE, None), [1, 1, 1], "{}", brief(&p));
    let p = c.batch(suite_pool(vec![]), "b", 3, None, &spec);
    pending_are(&p, &["b-0", "b-1", "b-2"]);
}

/// "should not schedule pods with affinity to a non-existent pod" (ten pods, zone) and "should
/// fail to schedule pods with unsatisfiable dependencies" (one pod, hostname).
/// Upstream It: "should fail to schedule pods with unsatisfiable dependencies".
#[test]
fn affinity_to_a_missing_pod_stays_pending() {
    let (p, _) = once_with(
        suite_pool(vec![]),
        "aff",
        10,
        None,
        &term("podAffinity", s2(), ZONE),
    );
    assert_eq!(p.pending().len(), 10);
    assert!(p.claims().is_empty());
    let (p, _) = once(vec![
        suite_pool(vec![]),
        pod(
            "db",
            with(
                labelled(json!({"type": "db", "spread": "spread"})),
                term(
                    "podAffinity",
                    json!({"type": "web", "spread": "spread"}),
                    HOSTNAME,
                ),
            ),
        ),
    ]);
    pending_are(&p, &["db"]);
}

/// "should support pod affinity with zone topology (unconstrained target)": the target's zone
/// is undecided, so the ten affine pods wait for the next batch, then all join its zone → 11.
/// Here the target's NodeClaim is round 1 and the affine pods come in round 2 (those that join
/// the target's in-flight node are listed on its round-1 NodeClaim: the plan does not say a
/// pod's round, only a NodeClaim's).
#[test]
fn zone_affinity_to_an_unconstrained_target() {
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods("aff", 10, None, &term("podAffinity", s2(), ZONE)));
    objects.push(pod("target", labelled(s2())));
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(round_of(&p, "target"), 1, "{}", brief(&p));
    assert!(
        (0..10).any(|i| round_of(&p, &format!("aff-{i}")) == 2),
        "{}",
        brief(&p)
    );
    assert_eq!(c.skew_of(ZONE, None), [11], "{}", brief(&p));
}

/// "should support pod affinity with zone topology (constrained target)": the target required
/// in zone 1 → all eleven there.
#[test]
fn zone_affinity_to_a_constrained_target() {
    let mut objects = vec![suite_pool(vec![])];
    objects.extend(pods("aff", 10, None, &term("podAffinity", s2(), ZONE)));
    objects.push(pod(
        "target",
        with(
            labelled(s2()),
            required(vec![req(ZONE, "In", &["test-zone-1"])]),
        ),
    ));
    let (p, c) = once(objects);
    pending_are(&p, &[]);
    assert_eq!(c.skew_of(ZONE, None), [11], "{}", brief(&p));
}

/// "should handle multiple dependent affinities": db ← web ← cache ← ui on hostname, all
/// scheduled (upstream repeats it 50 times; here in both orders of the manifest).
#[test]
fn a_chain_of_dependent_affinities_schedules() {
    let l = |t: &str| json!({"type": t, "spread": "spread"});
    let chain = vec![
        pod("db", labelled(l("db"))),
        pod(
            "web",
            with(labelled(l("web")), term("podAffinity", l("db"), HOSTNAME)),
        ),
        pod(
            "cache",
            with(
                labelled(l("cache")),
                term("podAffinity", l("web"), HOSTNAME),
            ),
        ),
        pod(
            "ui",
            with(labelled(l("ui")), term("podAffinity", l("cache"), HOSTNAME)),
        ),
    ];
    for reversed in [false, true] {
        let mut pods = chain.clone();
        if reversed {
            pods.reverse();
        }
        let mut objects = vec![suite_pool(vec![])];
        objects.extend(pods);
        let (p, _) = once(objects);
        pending_are(&p, &[]);
    }
}

/// "should filter pod affinity topologies by namespace, no matching pods" (the target in
/// another namespace: pending), "… matching pods namespace list" (`namespaces: [other-ns-list]`:
/// same node), "… empty namespace selector" (`namespaceSelector: {}`: same node).
/// Upstream It: "should filter pod affinity topologies by namespace, matching pods namespace list".
/// Upstream It: "should filter pod affinity topologies by namespace, empty namespace selector".
#[test]
fn pod_affinity_namespaces() {
    for (ns, extra, same_node) in [
        ("other-ns-no-match", json!({}), false),
        (
            "other-ns-list",
            json!({"namespaces": ["other-ns-list"]}),
            true,
        ),
        ("empty-ns-selector", json!({"namespaceSelector": {}}), true),
    ] {
        let mut t = json!({"labelSelector": {"matchLabels": s2()}, "topologyKey": HOSTNAME});
        crate::support::merge(&mut t, extra);
        let mut target = pod("target", labelled(s2()));
        target["metadata"]["namespace"] = json!(ns);
        let mut objects = vec![
            suite_pool(vec![]),
            json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": {"foo": "bar"}}}),
            target,
            pod(
                "aff",
                json!({"spec": {"affinity": {"podAffinity":
                    {"requiredDuringSchedulingIgnoredDuringExecution": [t]}}}}),
            ),
        ];
        objects.extend(pods(
            "web",
            10,
            None,
            &spreading(vec![spread(HOSTNAME, 1)], json!({})),
        ));
        let (p, _) = once(objects);
        let target_node = p
            .claims()
            .iter()
            .find(|c| {
                c["pods"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == &json!(format!("{ns}/target")))
            })
            .map(|c| c["name"].clone());
        assert!(target_node.is_some(), "{ns}: {}", brief(&p));
        if same_node {
            pending_are(&p, &[]);
            assert_eq!(Some(p.claim("aff")["name"].clone()), target_node, "{ns}");
        } else {
            pending_are(&p, &["aff"]);
        }
    }
}

// ---- topology_test.go › Topology with Volume Requirements ----

/// "should schedule pod with PVC and TSC minDomains=3 when pods are spread across 3 zones": an
/// on-demand pool, three spread pods (minDomains 3) → 1, 1, 1; then a pod with a PVC bound to a
/// test-zone-1 volume → zone 1, 1, 1, 2.
#[test]
fn a_volume_zone_does_not_narrow_the_spreads_domains() {
    let labels = json!({"app": "test"});
    let mut s = json!({"topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1,
        "minDomains": 3, "labelSelector": {"matchLabels": labels.clone()}});
    let spec = json!({"metadata": {"labels": labels.clone()},
        "spec": {"topologySpreadConstraints": [s.take()]}});
    let on_demand = || only(CAPACITY_TYPE, &["on-demand"]);
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "test-pv"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions":
                [{"key": ZONE, "operator": "In", "values": ["test-zone-1"]}]}]}}}});
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "test-pvc", "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": "test-pv", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}}}});
    let mut c = Cluster::with(vec![pv, pvc]);
    let p = c.batch(on_demand(), "first", 3, None, &spec);
    pending_are(&p, &[]);
    assert_eq!(c.skew_of(ZONE, Some(&labels)), [1, 1, 1]);
    let with_pvc = with(
        spec,
        json!({"spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "test-pvc"}}]}}),
    );
    let p = c.provision(vec![on_demand(), pod("pvc", with_pvc)]);
    pending_are(&p, &[]);
    assert_eq!(
        c.node_of("pvc")["metadata"]["labels"][ZONE],
        "test-zone-1",
        "{}",
        brief(&p)
    );
    assert_eq!(sorted(c.skew_of(ZONE, Some(&labels))), [1, 1, 2]);
}
