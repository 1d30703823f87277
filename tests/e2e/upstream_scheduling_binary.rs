//! Karpenter's scheduling tests (core v1.14.1 `pkg/controllers/provisioning/scheduling/
//! suite_test.go`, `topology_test.go`, `instance_selection_test.go` and
//! `pkg/controllers/provisioning/suite_test.go`) replayed through the binary from manifests:
//! each It's NodePool, EC2NodeClass, pods, Deployments and DaemonSets are written as Kubernetes
//! objects, planned by `provision --dry-run -f - -o json --catalog` against the fake cloud
//! provider's instance types (`tests/fixtures/s19-bsched/fake-catalog.yaml`), and the It's
//! assertions are checked on the plan (node count, labels, zone, capacity type, instance types,
//! pending pods). The engine-level mirrors of the same Its build the model directly; these
//! cover the manifest path (parsing, defaults, label and requirement derivation, DaemonSet
//! overhead, rendering). docs/upstream-tests.md "Scheduling Its through the binary
//! (s19-bsched)" maps each It to its test.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::support::{fixture, merge, provision_json};

pub(crate) const ZONE: &str = "topology.kubernetes.io/zone";
pub(crate) const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
pub(crate) const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
pub(crate) const ARCH: &str = "kubernetes.io/arch";
pub(crate) const HOSTNAME: &str = "kubernetes.io/hostname";
/// The fake's `integer` label (its CPU count) is played by this AWS well-known key.
pub(crate) const CPUS: &str = "karpenter.k8s.aws/instance-cpu";
/// The fake's `size` label (large above 4 CPUs and 8Gi, else small).
pub(crate) const SIZE: &str = "karpenter.k8s.aws/instance-size";

/// A node selector requirement.
pub(crate) fn req(key: &str, op: &str, values: &[&str]) -> Value {
    if values.is_empty() {
        json!({"key": key, "operator": op})
    } else {
        json!({"key": key, "operator": op, "values": values})
    }
}

/// The scheduling suite's `BeforeEach` pool requirement: every capacity type.
pub(crate) fn any_capacity() -> Value {
    req(CAPACITY_TYPE, "In", &["spot", "on-demand", "reserved"])
}

/// `test.NodePool`: `limits.cpu: 2000`, the default EC2NodeClass, these requirements; `extra` is
/// merged into `spec.template` (`metadata.labels`, `spec.taints`, …) and, under a `"pool"` key,
/// into the NodePool's `spec` (weight, limits).
pub(crate) fn pool(name: &str, requirements: Vec<Value>, extra: Value) -> Value {
    let mut p = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"limits": {"cpu": "2000"}, "template": {"spec": {"requirements": requirements,
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}});
    let mut extra = extra;
    if let Some(spec) = extra.as_object_mut().and_then(|m| m.remove("pool")) {
        merge(&mut p["spec"], spec);
    }
    merge(&mut p["spec"]["template"], extra);
    p
}

pub(crate) fn class() -> Value {
    json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "KarpenterNodeRole",
                 "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "test"}}],
                 "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "test"}}]}})
}

/// `test.UnschedulablePod`: one container, no requests; `patch` is merged into the pod (its
/// `metadata` and `spec`).
pub(crate) fn pod(name: &str, patch: Value) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause"}]}});
    merge(&mut p, patch);
    p
}

/// A pod whose container requests `requests`.
pub(crate) fn sized(name: &str, requests: Value, patch: Value) -> Value {
    let mut p = pod(name, patch);
    p["spec"]["containers"][0]["resources"] = json!({ "requests": requests });
    p
}

pub(crate) fn selector(pairs: &[(&str, &str)]) -> Value {
    let map: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    json!({"spec": {"nodeSelector": map}})
}

/// `PodOptions.NodeRequirements`: one required node-affinity term.
pub(crate) fn required(reqs: Vec<Value>) -> Value {
    json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": reqs}]}}}}})
}

/// `PodOptions.NodePreferences`: one preferred term of weight 1.
pub(crate) fn preferred(reqs: Vec<Value>) -> Value {
    json!({"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
        [{"weight": 1, "preference": {"matchExpressions": reqs}}]}}}})
}

pub(crate) fn both(mut a: Value, b: Value) -> Value {
    merge(&mut a, b);
    a
}

/// A Deployment of `replicas` pods labelled `labels`, whose template `spec` is merged with `spec`.
pub(crate) fn deployment(name: &str, replicas: u32, labels: Value, spec: Value) -> Value {
    let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause"}]}}}});
    merge(&mut d["spec"]["template"]["spec"], spec);
    d
}

/// A DaemonSet whose container requests `requests`; `spec` is merged into its pod template.
pub(crate) fn daemonset(name: &str, requests: Value, spec: Value) -> Value {
    let mut d = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"ds": name}},
            "template": {"metadata": {"labels": {"ds": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause",
                    "resources": {"requests": requests}}]}}}});
    merge(&mut d["spec"]["template"]["spec"], spec);
    d
}

/// A `DoNotSchedule` spread on `key` over pods labelled `test: test`.
pub(crate) fn spread(key: &str, max_skew: u32) -> Value {
    json!({"topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": max_skew,
           "labelSelector": {"matchLabels": {"test": "test"}}})
}

/// What the binary planned.
pub(crate) struct Plan {
    pub(crate) code: i32,
    pub(crate) json: Value,
}

impl Plan {
    pub(crate) fn claims(&self) -> &Vec<Value> {
        self.json["nodeClaims"].as_array().unwrap()
    }

    pub(crate) fn claim(&self, pod: &str) -> &Value {
        let name = format!("default/{pod}");
        self.claims()
            .iter()
            .find(|c| c["pods"].as_array().unwrap().iter().any(|p| p == &name))
            .unwrap_or_else(|| panic!("{pod} is on no NodeClaim: {:#}", self.json))
    }

    /// The label `key` of the NodeClaim `pod` is on.
    pub(crate) fn label(&self, pod: &str, key: &str) -> Option<&str> {
        self.claim(pod)["labels"][key].as_str()
    }

    /// `(pod, reasonCode)` of every pod left pending, in the plan's order.
    pub(crate) fn pending(&self) -> Vec<(String, String)> {
        self.json["unschedulable"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                let pod = u["pod"].as_str().unwrap();
                (
                    pod.trim_start_matches("default/").to_string(),
                    u["reasonCode"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    pub(crate) fn is_pending(&self, pod: &str) -> bool {
        self.pending().iter().any(|(p, _)| p == pod)
    }

    pub(crate) fn assert_pending(&self, pods: &[&str]) {
        let pending: Vec<String> = self.pending().into_iter().map(|(p, _)| p).collect();
        let mut want: Vec<String> = pods.iter().map(|p| p.to_string()).collect();
        let mut got = pending.clone();
        want.sort();
        got.sort();
        assert_eq!(got, want, "pending pods: {:#}", self.json);
        assert_eq!(self.code, i32::from(!pods.is_empty()), "{:#}", self.json);
    }

    /// Pods per domain of `key` over the new NodeClaims (`kubernetes.io/hostname`: per
    /// NodeClaim), sorted: upstream's `ExpectSkew(...).To(ConsistOf(...))`.
    pub(crate) fn skew(&self, key: &str) -> Vec<usize> {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for c in self.claims() {
            let domain = if key == HOSTNAME {
                c["name"].as_str().unwrap().to_string()
            } else {
                c["labels"][key].as_str().unwrap_or("").to_string()
            };
            *by.entry(domain).or_default() += c["pods"].as_array().unwrap().len();
        }
        let mut counts: Vec<usize> = by.into_values().collect();
        counts.sort_unstable();
        counts
    }
}

/// Plans `objects` (with the default EC2NodeClass) against the fake catalog.
pub(crate) fn plan(objects: Vec<Value>) -> Plan {
    plan_on(&fixture("s19-bsched/fake-catalog.yaml"), objects)
}

/// Plans `objects` (with the default EC2NodeClass) against the catalog at `catalog`.
pub(crate) fn plan_on(catalog: &std::path::Path, mut objects: Vec<Value>) -> Plan {
    objects.push(class());
    let (code, json) = provision_json(&["--catalog", catalog.to_str().unwrap()], objects);
    Plan { code, json }
}

/// The scheduling suite's pool (every capacity type) with `extra`, and `pods`.
pub(crate) fn sched(extra: Value, pods: Vec<Value>) -> Plan {
    let mut objects = vec![pool("default", vec![any_capacity()], extra)];
    objects.extend(pods);
    plan(objects)
}

/// A pool with exactly these requirements (the Its that replace the suite's), and `pods`.
pub(crate) fn with_reqs(requirements: Vec<Value>, pods: Vec<Value>) -> Plan {
    let mut objects = vec![pool("default", requirements, json!({}))];
    objects.extend(pods);
    plan(objects)
}

// ---- scheduling/suite_test.go › Custom Constraints › NodePool with Labels ----

fn test_labels() -> Value {
    json!({"metadata": {"labels": {"test-key": "test-value"}}})
}

/// "should schedule unconstrained pods that don't have matching node selectors".
#[test]
fn pool_labels_label_the_node_of_an_unconstrained_pod() {
    let p = sched(test_labels(), vec![pod("p", json!({}))]);
    p.assert_pending(&[]);
    assert_eq!(p.label("p", "test-key"), Some("test-value"));
}

/// "should not schedule pods that have conflicting node selectors", "should not schedule pods
/// that have node selectors with undefined key" (a second pool without the label), "should not
/// schedule pods that have conflicting requirements".
#[test]
fn pool_labels_refuse_other_values_and_undefined_keys() {
    let p = sched(
        test_labels(),
        vec![
            pod("conflict", selector(&[("test-key", "different-value")])),
            pod(
                "conflict-req",
                required(vec![req("test-key", "In", &["another-value"])]),
            ),
        ],
    );
    p.assert_pending(&["conflict", "conflict-req"]);
    let p = sched(
        json!({}),
        vec![pod("undefined", selector(&[("test-key", "test-value")]))],
    );
    p.assert_pending(&["undefined"]);
}

/// "should schedule pods that have matching requirements".
#[test]
fn pool_labels_admit_a_matching_requirement() {
    let p = sched(
        test_labels(),
        vec![pod(
            "p",
            required(vec![req(
                "test-key",
                "In",
                &["test-value", "another-value"],
            )]),
        )],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("p", "test-key"), Some("test-value"));
}

// ---- scheduling/suite_test.go › Custom Constraints › Well Known Labels ----

fn zones(values: &[&str]) -> Vec<Value> {
    vec![any_capacity(), req(ZONE, "In", values)]
}

/// "should use NodePool constraints".
#[test]
fn well_known_the_pools_zone_labels_the_node() {
    let p = with_reqs(zones(&["test-zone-2"]), vec![pod("p", json!({}))]);
    p.assert_pending(&[]);
    assert_eq!(p.label("p", ZONE), Some("test-zone-2"));
}

/// "should use node selectors".
#[test]
fn well_known_a_zone_selector_within_the_pool_is_used() {
    let p = with_reqs(
        zones(&["test-zone-1", "test-zone-2"]),
        vec![pod("p", selector(&[(ZONE, "test-zone-2")]))],
    );
    assert_eq!(p.label("p", ZONE), Some("test-zone-2"));
}

/// "should not schedule nodes with a hostname selector", "should not schedule the pod if
/// nodeselector unknown", "should not schedule if node selector outside of NodePool
/// constraints".
#[test]
fn well_known_hostname_unknown_and_outside_selectors_stay_pending() {
    let p = sched(
        json!({}),
        vec![pod("host", selector(&[(HOSTNAME, "red-node")]))],
    );
    p.assert_pending(&["host"]);
    let p = with_reqs(
        zones(&["test-zone-1"]),
        vec![
            pod("unknown", selector(&[(ZONE, "unknown")])),
            pod("outside", selector(&[(ZONE, "test-zone-2")])),
        ],
    );
    p.assert_pending(&["unknown", "outside"]);
}

/// "should schedule compatible requirements with Operator=In".
#[test]
fn well_known_in_picks_the_zone() {
    let p = sched(
        json!({}),
        vec![pod("p", required(vec![req(ZONE, "In", &["test-zone-3"])]))],
    );
    assert_eq!(p.label("p", ZONE), Some("test-zone-3"));
}

/// "should schedule compatible requirements with Operator=Gt / Lt / Gte / Lte" (the fake's
/// `integer` label is the instance-cpu label here: Gt 8 and Gte 16 → the 16-CPU type, Lt 8 and
/// Lte 2 → the 2-CPU type).
/// Upstream It: "should schedule compatible requirements with Operator=Lt".
/// Upstream It: "should schedule compatible requirements with Operator=Gte".
/// Upstream It: "should schedule compatible requirements with Operator=Lte".
#[test]
fn well_known_numeric_operators_pick_the_type() {
    for (op, value, cpus) in [
        ("Gt", "8", "16"),
        ("Lt", "8", "2"),
        ("Gte", "16", "16"),
        ("Lte", "2", "2"),
    ] {
        let p = with_reqs(
            vec![any_capacity(), req(CPUS, op, &[value])],
            vec![pod("p", json!({}))],
        );
        assert_eq!(p.label("p", CPUS), Some(cpus), "{op} {value}: {:#}", p.json);
    }
}

/// "should not schedule incompatible preferences and requirements with Operator=In / NotIn".
#[test]
fn well_known_unsatisfiable_requirements_stay_pending() {
    let p = sched(
        json!({}),
        vec![
            pod("in", required(vec![req(ZONE, "In", &["unknown"])])),
            pod(
                "notin",
                required(vec![req(
                    ZONE,
                    "NotIn",
                    &["test-zone-1", "test-zone-2", "test-zone-3", "unknown"],
                )]),
            ),
        ],
    );
    p.assert_pending(&["in", "notin"]);
}

/// "should schedule compatible requirements with Operator=NotIn".
#[test]
fn well_known_not_in_leaves_the_other_zone() {
    let p = sched(
        json!({}),
        vec![pod(
            "p",
            required(vec![req(
                ZONE,
                "NotIn",
                &["test-zone-1", "test-zone-2", "unknown"],
            )]),
        )],
    );
    assert_eq!(p.label("p", ZONE), Some("test-zone-3"));
}

fn all_zones_and_unknown() -> Value {
    req(
        ZONE,
        "In",
        &["test-zone-1", "test-zone-2", "test-zone-3", "unknown"],
    )
}

/// "should schedule compatible preferences and requirements with Operator=In / NotIn" (the
/// preference decides the zone) and "should schedule incompatible preferences and requirements
/// with Operator=In / NotIn" (the preference is relaxed).
#[test]
fn well_known_preferences_pick_the_zone_or_are_relaxed() {
    let p = sched(
        json!({}),
        vec![
            pod(
                "pref-in",
                both(
                    required(vec![all_zones_and_unknown()]),
                    preferred(vec![req(ZONE, "In", &["test-zone-2", "unknown"])]),
                ),
            ),
            pod(
                "pref-notin",
                both(
                    required(vec![all_zones_and_unknown()]),
                    preferred(vec![req(ZONE, "NotIn", &["test-zone-1", "test-zone-3"])]),
                ),
            ),
        ],
    );
    assert_eq!(p.label("pref-in", ZONE), Some("test-zone-2"));
    assert_eq!(p.label("pref-notin", ZONE), Some("test-zone-2"));
    let p = sched(
        json!({}),
        vec![
            pod(
                "bad-in",
                both(
                    required(vec![all_zones_and_unknown()]),
                    preferred(vec![req(ZONE, "In", &["unknown"])]),
                ),
            ),
            pod(
                "bad-notin",
                both(
                    required(vec![all_zones_and_unknown()]),
                    preferred(vec![req(
                        ZONE,
                        "NotIn",
                        &["test-zone-1", "test-zone-2", "test-zone-3"],
                    )]),
                ),
            ),
        ],
    );
    p.assert_pending(&[]);
}

/// "should schedule compatible node selectors, preferences and requirements" and "should combine
/// multidimensional node selectors, preferences and requirements".
#[test]
fn well_known_selectors_requirements_and_preferences_combine() {
    let three = ["test-zone-1", "test-zone-2", "test-zone-3"];
    let p = sched(
        json!({}),
        vec![pod(
            "p",
            both(
                selector(&[(ZONE, "test-zone-3")]),
                both(
                    required(vec![req(ZONE, "In", &three)]),
                    preferred(vec![req(ZONE, "In", &three)]),
                ),
            ),
        )],
    );
    assert_eq!(p.label("p", ZONE), Some("test-zone-3"));
    let p = sched(
        json!({}),
        vec![pod(
            "p",
            both(
                selector(&[(ZONE, "test-zone-3"), (INSTANCE_TYPE, "arm-instance-type")]),
                both(
                    required(vec![
                        req(ZONE, "In", &["test-zone-1", "test-zone-3"]),
                        req(
                            INSTANCE_TYPE,
                            "In",
                            &["default-instance-type", "arm-instance-type"],
                        ),
                    ]),
                    preferred(vec![
                        req(ZONE, "NotIn", &["unknown"]),
                        req(INSTANCE_TYPE, "NotIn", &["unknown"]),
                    ]),
                ),
            ),
        )],
    );
    assert_eq!(p.label("p", ZONE), Some("test-zone-3"));
    assert_eq!(p.label("p", INSTANCE_TYPE), Some("arm-instance-type"));
}

// ---- scheduling/suite_test.go › Custom Constraints › Constraints Validation ----

/// "should not schedule pods that have node selectors with restricted labels" (hostname) and
/// "… restricted domains" (`karpenter.sh/test`).
#[test]
fn restricted_labels_and_domains_stay_pending() {
    let p = sched(
        json!({}),
        vec![
            pod("host", required(vec![req(HOSTNAME, "In", &["test"])])),
            pod(
                "domain",
                required(vec![req("karpenter.sh/test", "In", &["test"])]),
            ),
        ],
    );
    p.assert_pending(&["host", "domain"]);
}

/// "should schedule pods that have node selectors with label in the kubernetes domains" and
/// "… in subdomain from kubernetes domains": the pool's requirements label the node.
#[test]
fn pool_requirements_in_kubernetes_domains_label_the_node() {
    let keys = [
        "kubernetes.io/test",
        "k8s.io/test",
        "subdomain.kubernetes.io/test",
        "subdomain.k8s.io/test",
    ];
    let mut reqs = vec![any_capacity()];
    reqs.extend(keys.iter().map(|k| req(k, "In", &["test-value"])));
    let p = with_reqs(reqs, vec![pod("p", json!({}))]);
    p.assert_pending(&[]);
    for k in keys {
        assert_eq!(p.label("p", k), Some("test-value"), "{k}: {:#}", p.json);
    }
}

/// "should schedule pods that have node selectors with label in wellknown label list".
#[test]
fn well_known_label_selectors_all_schedule() {
    let p = sched(
        json!({}),
        vec![
            pod("zone", selector(&[(ZONE, "test-zone-1")])),
            pod(
                "type",
                selector(&[(INSTANCE_TYPE, "default-instance-type")]),
            ),
            pod("arch", selector(&[(ARCH, "arm64")])),
            pod("os", selector(&[("kubernetes.io/os", "linux")])),
            pod("ct", selector(&[(CAPACITY_TYPE, "spot")])),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("arch", ARCH), Some("arm64"));
    assert_eq!(p.label("ct", CAPACITY_TYPE), Some("spot"));
}

// ---- scheduling/suite_test.go › Custom Constraints › Scheduling Logic ----

fn test_key_pool() -> Vec<Value> {
    vec![req("test-key", "In", &["test-value"])]
}

/// "should not schedule pods with nodePool which is not ready " (sic: the title ends in a space).
#[test]
fn a_pool_that_is_not_ready_takes_no_pod() {
    let mut np = pool("default", vec![any_capacity()], json!({}));
    np["status"] = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "NodePoolNotReady",
        "message": "Node Pool Not Ready", "lastTransitionTime": "2024-01-01T00:00:00Z"}]});
    let p = plan(vec![np, pod("p", json!({}))]);
    p.assert_pending(&["p"]);
}

/// "… with In operator and undefined key" (pending), "… NotIn operator and undefined key"
/// (scheduled, not labelled), "… Exists operator and undefined key" (pending), "… DoesNotExists
/// operator and undefined key" (scheduled, not labelled).
#[test]
fn operators_on_an_undefined_key() {
    let p = sched(
        json!({}),
        vec![
            pod("in", required(vec![req("test-key", "In", &["test-value"])])),
            pod(
                "notin",
                required(vec![req("test-key", "NotIn", &["test-value"])]),
            ),
            pod("exists", required(vec![req("test-key", "Exists", &[])])),
            pod("dne", required(vec![req("test-key", "DoesNotExist", &[])])),
        ],
    );
    p.assert_pending(&["in", "exists"]);
    assert_eq!(p.label("notin", "test-key"), None);
    assert_eq!(p.label("dne", "test-key"), None);
}

/// "should schedule unconstrained pods that don't have matching node selectors" (a pool
/// requirement `test-key In [test-value]` labels the node), "… matching value and In operator",
/// "… Exists operator and defined key", "… different value and NotIn operator" (scheduled and
/// labelled); "… matching value and NotIn operator", "… DoesNotExists operator and defined
/// key", "… different value and In operator" (pending).
#[test]
fn operators_on_a_key_the_pool_defines() {
    let p = with_reqs(
        test_key_pool(),
        vec![
            pod("plain", json!({})),
            pod("in", required(vec![req("test-key", "In", &["test-value"])])),
            pod("exists", required(vec![req("test-key", "Exists", &[])])),
            pod(
                "notin-other",
                required(vec![req("test-key", "NotIn", &["another-value"])]),
            ),
            pod(
                "notin-same",
                required(vec![req("test-key", "NotIn", &["test-value"])]),
            ),
            pod("dne", required(vec![req("test-key", "DoesNotExist", &[])])),
            pod(
                "in-other",
                required(vec![req("test-key", "In", &["another-value"])]),
            ),
        ],
    );
    p.assert_pending(&["notin-same", "dne", "in-other"]);
    for scheduled in ["plain", "in", "exists", "notin-other"] {
        assert_eq!(
            p.label(scheduled, "test-key"),
            Some("test-value"),
            "{scheduled}"
        );
    }
}

/// "should schedule compatible pods to the same node" and "should schedule incompatible pods to
/// the different node".
/// Upstream It: "should schedule incompatible pods to the different node".
#[test]
fn compatible_pods_share_a_node_incompatible_ones_do_not() {
    let two = vec![req("test-key", "In", &["test-value", "another-value"])];
    let p = with_reqs(
        two.clone(),
        vec![
            pod("a", required(vec![req("test-key", "In", &["test-value"])])),
            pod(
                "b",
                required(vec![req("test-key", "NotIn", &["another-value"])]),
            ),
        ],
    );
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(p.label("a", "test-key"), Some("test-value"));
    assert_eq!(p.label("b", "test-key"), Some("test-value"));
    let p = with_reqs(
        two,
        vec![
            pod("a", required(vec![req("test-key", "In", &["test-value"])])),
            pod(
                "b",
                required(vec![req("test-key", "In", &["another-value"])]),
            ),
        ],
    );
    assert_eq!(p.claims().len(), 2, "{:#}", p.json);
    assert_eq!(p.label("a", "test-key"), Some("test-value"));
    assert_eq!(p.label("b", "test-key"), Some("another-value"));
}

/// "Exists operator should not overwrite the existing value".
#[test]
fn exists_does_not_widen_an_in() {
    let p = sched(
        json!({}),
        vec![pod(
            "p",
            required(vec![
                req(ZONE, "In", &["non-existent-zone"]),
                req(ZONE, "Exists", &[]),
            ]),
        )],
    );
    p.assert_pending(&["p"]);
}

// ---- scheduling/suite_test.go › Preferential Fallback ----

/// A pod's required node affinity with these terms (ORed).
fn required_terms(terms: Vec<Vec<Value>>) -> Value {
    let terms: Vec<Value> = terms
        .into_iter()
        .map(|t| json!({ "matchExpressions": t }))
        .collect();
    json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": terms}}}}})
}

/// A pod's preferred node affinity: `(weight, expressions)` terms.
fn preferred_terms(terms: Vec<(u32, Vec<Value>)>) -> Value {
    let terms: Vec<Value> = terms
        .into_iter()
        .map(|(w, t)| json!({"weight": w, "preference": {"matchExpressions": t}}))
        .collect();
    json!({"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}})
}

/// Required: "should not relax the final term" and "should relax multiple terms".
#[test]
fn required_terms_are_tried_in_order_and_the_last_is_kept() {
    let p = with_reqs(
        vec![
            req(ZONE, "In", &["test-zone-1"]),
            req(INSTANCE_TYPE, "In", &["default-instance-type"]),
        ],
        vec![pod(
            "final",
            required_terms(vec![vec![req(ZONE, "In", &["invalid"])]]),
        )],
    );
    p.assert_pending(&["final"]);
    let p = sched(
        json!({}),
        vec![pod(
            "multi",
            required_terms(vec![
                vec![req(ZONE, "In", &["invalid"])],
                vec![req(ZONE, "In", &["invalid"])],
                vec![req(ZONE, "In", &["test-zone-1"])],
                vec![req(ZONE, "In", &["test-zone-2"])],
            ]),
        )],
    );
    assert_eq!(p.label("multi", ZONE), Some("test-zone-1"));
}

/// Preferred: "should relax all terms", "should relax to use lighter weights", "should schedule
/// even if preference is conflicting with requirement", "should schedule even if preference
/// requirements are conflicting".
#[test]
fn preferred_terms_are_relaxed_heaviest_first() {
    let p = sched(
        json!({}),
        vec![
            pod(
                "all",
                preferred_terms(vec![
                    (1, vec![req(ZONE, "In", &["invalid"])]),
                    (1, vec![req(INSTANCE_TYPE, "In", &["invalid"])]),
                ]),
            ),
            pod(
                "conflicting",
                both(
                    preferred_terms(vec![(1, vec![req(ZONE, "NotIn", &["test-zone-3"])])]),
                    required(vec![req(ZONE, "In", &["test-zone-3"])]),
                ),
            ),
            pod(
                "self-conflicting",
                preferred(vec![
                    req(ZONE, "In", &["invalid"]),
                    req(ZONE, "NotIn", &["invalid"]),
                ]),
            ),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("conflicting", ZONE), Some("test-zone-3"));
    let p = with_reqs(
        vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])],
        vec![pod(
            "lighter",
            preferred_terms(vec![
                (100, vec![req(INSTANCE_TYPE, "In", &["test-zone-3"])]),
                (50, vec![req(ZONE, "In", &["test-zone-2"])]),
                (1, vec![req(ZONE, "In", &["test-zone-1"])]),
            ]),
        )],
    );
    assert_eq!(p.label("lighter", ZONE), Some("test-zone-2"));
}

// ---- scheduling/suite_test.go › Instance Type Compatibility ----

fn arches() -> Vec<Value> {
    vec![req(ARCH, "In", &["arm64", "amd64"])]
}

/// "should not schedule if requesting more resources than any instance type has".
#[test]
fn more_cpu_than_any_type_stays_pending() {
    let p = sched(
        json!({}),
        vec![sized("p", json!({"cpu": "512"}), json!({}))],
    );
    p.assert_pending(&["p"]);
}

/// "should launch pods with different archs on different instances", "… different instance type
/// node selectors …" (the deprecated `beta.kubernetes.io/instance-type` key for one), "…
/// different zone selectors …".
/// Upstream It: "should launch pods with different instance type node selectors on different instances".
/// Upstream It: "should launch pods with different zone selectors on different instances".
#[test]
fn different_arch_type_or_zone_selectors_get_different_nodes() {
    for (a, b) in [
        (selector(&[(ARCH, "amd64")]), selector(&[(ARCH, "arm64")])),
        (
            selector(&[("beta.kubernetes.io/instance-type", "small-instance-type")]),
            selector(&[(INSTANCE_TYPE, "default-instance-type")]),
        ),
        (
            selector(&[(ZONE, "test-zone-1")]),
            selector(&[(ZONE, "test-zone-2")]),
        ),
    ] {
        let p = with_reqs(arches(), vec![pod("a", a), pod("b", b)]);
        p.assert_pending(&[]);
        assert_eq!(p.claims().len(), 2, "{:#}", p.json);
    }
}

/// "should exclude instance types that are not supported by the pod constraints (node
/// affinity/instance type)" and "… by the provider constraints (arch)" (a 14-CPU limit, which
/// is the request, fits only the arm type the pool excludes).
#[test]
fn a_pool_limited_to_amd64_excludes_the_arm_type() {
    let p = with_reqs(
        vec![req(ARCH, "In", &["amd64"])],
        vec![
            pod(
                "arm",
                required(vec![req(INSTANCE_TYPE, "In", &["arm-instance-type"])]),
            ),
            pod(
                "big",
                json!({"spec": {"containers": [{"name": "app", "image": "i",
                    "resources": {"limits": {"cpu": "14"}}}]}}),
            ),
        ],
    );
    p.assert_pending(&["arm", "big"]);
}

// ---- scheduling/suite_test.go › Binpacking ----

/// "should schedule a small pod on the smallest instance" (100M) and "… on the smallest
/// possible instance type" (2000M).
/// Upstream It: "should schedule a small pod on the smallest possible instance type".
#[test]
fn a_small_pod_gets_the_smallest_type() {
    for memory in ["100M", "2000M"] {
        let p = sched(
            json!({}),
            vec![sized("p", json!({ "memory": memory }), json!({}))],
        );
        assert_eq!(
            p.label("p", INSTANCE_TYPE),
            Some("small-instance-type"),
            "{memory}"
        );
    }
}

/// "should take pod runtime class into consideration": a RuntimeClass with 2 CPUs of pod
/// overhead makes a 1-CPU pod need the 4-CPU type.
#[test]
fn runtime_class_overhead_from_the_manifest_counts() {
    let rc = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "my-runtime-class"}, "handler": "default",
        "overhead": {"podFixed": {"cpu": "2"}}});
    let p = sched(
        json!({}),
        vec![
            rc,
            sized(
                "p",
                json!({"cpu": "1"}),
                json!({"spec": {"runtimeClassName": "my-runtime-class"}}),
            ),
        ],
    );
    assert_eq!(
        p.label("p", INSTANCE_TYPE),
        Some("default-instance-type"),
        "{:#}",
        p.json
    );
}

/// "should schedule multiple small pods on the smallest possible instance type" (5 × 10M, one
/// node).
#[test]
fn five_small_pods_share_the_smallest_type() {
    let p = sched(
        json!({}),
        vec![deployment(
            "small",
            5,
            json!({"app": "small"}),
            json!({"containers": [{"name": "app", "image": "i", "resources": {"requests": {"memory": "10M"}}}]}),
        )],
    );
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(p.claims()[0]["instanceType"], "small-instance-type");
}

fn amd64_memory_pods(name: &str, replicas: u32, memory: &str) -> Value {
    deployment(
        name,
        replicas,
        json!({ "app": name }),
        json!({"nodeSelector": {ARCH: "amd64"},
            "containers": [{"name": "app", "image": "i", "resources": {"requests": {"memory": memory}}}]}),
    )
}

/// "should create new nodes when a node is at capacity" (40 × 1.8G → 20 default-instance-type
/// nodes) and "should pack small and large pods together" (+ 20 × 400M → still 20).
#[test]
fn nodes_at_capacity_get_new_nodes_and_small_pods_fill_the_gaps() {
    let p = sched(json!({}), vec![amd64_memory_pods("large", 40, "1.8G")]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 20, "{:#}", p.json);
    assert!(p
        .claims()
        .iter()
        .all(|c| c["instanceType"] == "default-instance-type"));
    let p = sched(
        json!({}),
        vec![
            amd64_memory_pods("large", 40, "1.8G"),
            amd64_memory_pods("small", 20, "400M"),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 20, "{:#}", p.json);
    assert!(p
        .claims()
        .iter()
        .all(|c| c["instanceType"] == "default-instance-type"));
}

/// "should handle zero-quantity resource requests" and "should not schedule pods that exceed
/// every instance type's capacity" (2Ti).
/// Upstream It: "should not schedule pods that exceed every instance type's capacity".
#[test]
fn zero_quantities_are_free_and_two_terabytes_fit_nowhere() {
    let p = sched(
        json!({}),
        vec![
            pod(
                "zero",
                json!({"spec": {"containers": [{"name": "app", "image": "i", "resources": {
                    "requests": {"foo.com/weird-resources": "0"}, "limits": {"foo.com/weird-resources": "0"}}}]}}),
            ),
            sized("huge", json!({"memory": "2Ti"}), json!({})),
        ],
    );
    p.assert_pending(&["huge"]);
}

/// "should create new nodes when a node is at capacity due to pod limits per node" (25 pods, 5
/// per type → 5 small-instance-type nodes).
#[test]
fn the_pods_capacity_caps_each_node() {
    let p = sched(
        json!({}),
        vec![deployment(
            "tiny",
            25,
            json!({"app": "tiny"}),
            json!({"nodeSelector": {ARCH: "amd64"},
                "containers": [{"name": "app", "image": "i", "resources": {"requests": {"cpu": "1m", "memory": "1m"}}}]}),
        )],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 5, "{:#}", p.json);
    assert!(p
        .claims()
        .iter()
        .all(|c| c["instanceType"] == "small-instance-type"));
}

/// "should take into account initContainer resource requests when binpacking" and "should not
/// schedule pods when initContainer resource requests are greater than available instance
/// types".
/// Upstream It: "should not schedule pods when initContainer resource requests are greater than available instance types".
#[test]
fn init_containers_size_the_pod() {
    let init = |memory: &str| {
        json!({"spec": {"initContainers": [{"name": "init", "image": "i",
            "resources": {"requests": {"memory": memory, "cpu": "2"}}}]}})
    };
    let p = sched(
        json!({}),
        vec![
            sized("fits", json!({"memory": "1Gi", "cpu": "1"}), init("1Gi")),
            sized("never", json!({"memory": "1Gi", "cpu": "1"}), init("1Ti")),
        ],
    );
    p.assert_pending(&["never"]);
    assert_eq!(
        p.label("fits", INSTANCE_TYPE),
        Some("default-instance-type")
    );
}

// ---- scheduling/topology_test.go ----

/// The topology suite's pool: `karpenter.sh/capacity-type Exists`.
pub(crate) fn topo(requirements: Vec<Value>, extra: Value, objects: Vec<Value>) -> Plan {
    let mut reqs = vec![req(CAPACITY_TYPE, "Exists", &[])];
    reqs.extend(requirements);
    let mut all = vec![pool("default", reqs, extra)];
    all.extend(objects);
    plan(all)
}

/// A Deployment of `n` pods labelled `test: test` with these spread constraints and template
/// spec (`extra`).
pub(crate) fn spread_pods(name: &str, n: u32, constraints: Vec<Value>, extra: Value) -> Value {
    let mut spec = json!({ "topologySpreadConstraints": constraints });
    merge(&mut spec, extra);
    deployment(name, n, json!({"test": "test"}), spec)
}

/// "should ignore unknown topology keys": the pod spreading on `unknown` stays pending, the
/// other schedules.
#[test]
fn topology_an_unknown_key_keeps_its_pod_pending() {
    let p = topo(
        vec![],
        json!({}),
        vec![
            pod(
                "spread",
                json!({"metadata": {"labels": {"test": "test"}},
                    "spec": {"topologySpreadConstraints": [spread("unknown", 1)]}}),
            ),
            pod("plain", json!({})),
        ],
    );
    p.assert_pending(&["spread"]);
}

/// "should not spread when a nil label selector is defined" (2 pods, one domain) and "should
/// match all pods when labelSelector is not specified" (1 pod).
#[test]
fn topology_a_spread_without_selector_does_not_spread() {
    let nil = json!({"topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1});
    let p = topo(
        vec![],
        json!({}),
        vec![spread_pods("nil", 2, vec![nil.clone()], json!({}))],
    );
    p.assert_pending(&[]);
    assert_eq!(p.skew(ZONE), vec![2], "{:#}", p.json);
    let p = topo(
        vec![],
        json!({}),
        vec![pod(
            "one",
            json!({"spec": {"topologySpreadConstraints": [nil]}}),
        )],
    );
    assert_eq!(p.skew(ZONE), vec![1]);
}

/// Zonal: "should balance pods across zones (match labels)", "(match expressions)", "should
/// respect NodePool zonal constraints": 4 pods → 1, 1, 2.
/// Upstream It: "should balance pods across zones (match expressions)".
#[test]
fn topology_zonal_spread_balances_four_pods() {
    let expr = json!({"topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1,
        "labelSelector": {"matchExpressions": [{"key": "test", "operator": "In", "values": ["test"]}]}});
    for (reqs, constraint) in [
        (vec![], spread(ZONE, 1)),
        (vec![], expr),
        (
            vec![req(
                ZONE,
                "In",
                &["test-zone-1", "test-zone-2", "test-zone-3"],
            )],
            spread(ZONE, 1),
        ),
    ] {
        let p = topo(
            reqs,
            json!({}),
            vec![spread_pods("web", 4, vec![constraint], json!({}))],
        );
        p.assert_pending(&[]);
        assert_eq!(p.skew(ZONE), vec![1, 1, 2], "{:#}", p.json);
    }
}

/// Zonal: "… (subset) with requirements" (2, 2), "… (subset) with labels" (4), "… (subset)
/// with requirements and labels" (4).
#[test]
fn topology_zonal_spread_over_a_pools_subset() {
    let two = || vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])];
    let zone1 = json!({"metadata": {"labels": {ZONE: "test-zone-1"}}});
    for (reqs, extra, want) in [
        (two(), json!({}), vec![2, 2]),
        (vec![], zone1.clone(), vec![4]),
        (two(), zone1, vec![4]),
    ] {
        let p = topo(
            reqs,
            extra,
            vec![spread_pods("web", 4, vec![spread(ZONE, 1)], json!({}))],
        );
        p.assert_pending(&[]);
        assert_eq!(p.skew(ZONE), want, "{:#}", p.json);
    }
}

/// Zonal: "should respect NodePool zonal constraints (subset) with labels across NodePools":
/// one pool labelled zone 1, another zone 2 → 2, 2.
#[test]
fn topology_zonal_spread_across_two_labelled_pools() {
    let a = pool(
        "a",
        vec![
            req(CAPACITY_TYPE, "Exists", &[]),
            req(ZONE, "In", &["test-zone-1", "test-zone-2"]),
        ],
        json!({"metadata": {"labels": {ZONE: "test-zone-1"}}}),
    );
    let b = pool(
        "b",
        vec![],
        json!({"metadata": {"labels": {ZONE: "test-zone-2"}}}),
    );
    let p = plan(vec![
        a,
        b,
        spread_pods("web", 4, vec![spread(ZONE, 1)], json!({})),
    ]);
    p.assert_pending(&[]);
    assert_eq!(p.skew(ZONE), vec![2, 2], "{:#}", p.json);
}

/// An unowned Node in `zone` (none: no zone label) with room for anything.
fn node(name: &str, zone: Option<&str>) -> Value {
    let mut labels = json!({ HOSTNAME: name, ARCH: "amd64", "kubernetes.io/os": "linux" });
    if let Some(z) = zone {
        labels[ZONE] = json!(z);
    }
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "0", "memory": "0", "pods": "0"},
            "capacity": {"cpu": "0", "memory": "0", "pods": "0"},
            "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// A pod bound to `node` (`phase`), labelled `labels`, in `namespace`.
fn bound(name: &str, node: &str, labels: Value, namespace: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "i"}]},
        "status": {"phase": phase}})
}

/// Zonal: "should only count running/scheduled pods with matching labels scheduled to nodes
/// with a corresponding domain": zone 1 counts 2, zone 2 counts 1, so the two new pods leave
/// the zones at 2, 2, 1. The existing nodes have no room left (allocatable 0), so the
/// count is all that decides.
#[test]
fn topology_only_running_matching_pods_on_zoned_nodes_count() {
    let t = json!({"test": "test"});
    let objects = vec![
        node("first", Some("test-zone-1")),
        node("second", Some("test-zone-2")),
        node("third", None),
        bound("unlabelled", "first", json!({}), "default", "Running"),
        bound("no-domain", "third", t.clone(), "default", "Running"),
        bound("other-ns", "first", t.clone(), "elsewhere", "Running"),
        bound("failed", "first", t.clone(), "default", "Failed"),
        bound("succeeded", "first", t.clone(), "default", "Succeeded"),
        bound("r1", "first", t.clone(), "default", "Running"),
        bound("r2", "first", t.clone(), "default", "Running"),
        bound("r3", "second", t.clone(), "default", "Running"),
        spread_pods("web", 2, vec![spread(ZONE, 1)], json!({})),
    ];
    let p = topo(vec![], json!({}), objects);
    p.assert_pending(&[]);
    let mut by_zone: BTreeMap<&str, usize> =
        BTreeMap::from([("test-zone-1", 2), ("test-zone-2", 1)]);
    for c in p.claims() {
        let zone = c["labels"][ZONE].as_str().unwrap();
        *by_zone.entry(zone).or_default() += c["pods"].as_array().unwrap().len();
    }
    let mut counts: Vec<usize> = by_zone.into_values().collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 2, 2], "{:#}", p.json);
}

/// Zonal: "should handle interdependent selectors": pods that do not match their own spread's
/// selector pack onto one node.
#[test]
fn topology_interdependent_selectors_pack_onto_one_node() {
    let p = topo(
        vec![],
        json!({}),
        vec![deployment(
            "other",
            5,
            json!({"app": "other"}),
            json!({"topologySpreadConstraints": [spread(HOSTNAME, 1)]}),
        )],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}

/// Zonal: "should respect minDomains constraints" (two zones for minDomains 3: 1, 1 and one
/// pending), "satisfied minDomains constraints (equal)" and "(greater than minimum)" (11 pods
/// → 4, 4, 3).
/// Upstream It: "satisfied minDomains constraints (equal) should allow expected pod scheduling".
/// Upstream It: "satisfied minDomains constraints (greater than minimum) should allow expected pod scheduling".
#[test]
fn topology_min_domains() {
    let with_min = |min: u32| {
        let mut s = spread(ZONE, 1);
        s["minDomains"] = json!(min);
        s
    };
    let p = topo(
        vec![req(ZONE, "In", &["test-zone-1", "test-zone-2"])],
        json!({}),
        vec![spread_pods("web", 3, vec![with_min(3)], json!({}))],
    );
    assert_eq!(p.skew(ZONE), vec![1, 1], "{:#}", p.json);
    assert_eq!(p.pending().len(), 1);
    for min in [3, 2] {
        let p = topo(
            vec![req(
                ZONE,
                "In",
                &["test-zone-1", "test-zone-2", "test-zone-3"],
            )],
            json!({}),
            vec![spread_pods("web", 11, vec![with_min(min)], json!({}))],
        );
        p.assert_pending(&[]);
        assert_eq!(
            p.skew(ZONE),
            vec![3, 4, 4],
            "minDomains {min}: {:#}",
            p.json
        );
    }
}

/// Hostname: "should balance pods across nodes" (1, 1, 1, 1) and "should balance pods on the
/// same hostname up to maxskew" (4).
#[test]
fn topology_hostname_spread() {
    let p = topo(
        vec![],
        json!({}),
        vec![spread_pods("web", 4, vec![spread(HOSTNAME, 1)], json!({}))],
    );
    assert_eq!(p.skew(HOSTNAME), vec![1, 1, 1, 1], "{:#}", p.json);
    let p = topo(
        vec![],
        json!({}),
        vec![spread_pods("web", 4, vec![spread(HOSTNAME, 4)], json!({}))],
    );
    assert_eq!(p.skew(HOSTNAME), vec![4], "{:#}", p.json);
}

/// Hostname: "balance multiple deployments with hostname topology spread" (2 nodes) and "… &
/// varying arch" (4 nodes) — issue #1425.
#[test]
fn topology_two_deployments_spread_by_hostname() {
    let app = |name: &str, arch: Option<&str>| {
        let mut spec = json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": name}}}]});
        if let Some(a) = arch {
            spec["affinity"] = required(vec![req(ARCH, "In", &[a])])["spec"]["affinity"].clone();
        }
        deployment(name, 2, json!({ "app": name }), spec)
    };
    let p = topo(
        vec![],
        json!({}),
        vec![app("app1", None), app("app2", None)],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 2, "{:#}", p.json);
    let p = topo(
        vec![],
        json!({}),
        vec![app("app1", Some("amd64")), app("app2", Some("arm64"))],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 4, "{:#}", p.json);
}

/// CapacityType: "should balance pods across capacity types" and "should respect NodePool
/// capacity type constraints" (2, 2).
/// Upstream It: "should respect NodePool capacity type constraints".
#[test]
fn topology_capacity_type_spread() {
    for reqs in [
        vec![],
        vec![req(CAPACITY_TYPE, "In", &["spot", "on-demand"])],
    ] {
        let p = topo(
            reqs,
            json!({}),
            vec![spread_pods(
                "web",
                4,
                vec![spread(CAPACITY_TYPE, 1)],
                json!({}),
            )],
        );
        p.assert_pending(&[]);
        assert_eq!(p.skew(CAPACITY_TYPE), vec![2, 2], "{:#}", p.json);
    }
}

/// Pod Affinity: "should schedule a pod with empty pod affinity and anti-affinity".
#[test]
fn affinity_empty_terms_schedule() {
    let p = topo(
        vec![],
        json!({}),
        vec![pod(
            "p",
            json!({"spec": {"affinity": {"podAffinity": {}, "podAntiAffinity": {}}}}),
        )],
    );
    p.assert_pending(&[]);
}

pub(crate) fn pod_affinity(kind: &str, labels: Value, key: &str) -> Value {
    json!({"spec": {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution":
        [{"labelSelector": {"matchLabels": labels}, "topologyKey": key}]}}}})
}

/// Pod Affinity: "should respect pod affinity (hostname)" (among 10 spread pods, the two
/// share a node) and "should respect self pod affinity (hostname)" (3 pods, one node).
#[test]
fn affinity_on_hostname_collocates() {
    let s2 = json!({"security": "s2"});
    let p = topo(
        vec![],
        json!({}),
        vec![
            spread_pods("web", 10, vec![spread(HOSTNAME, 1)], json!({})),
            pod("aff1", json!({"metadata": {"labels": s2.clone()}})),
            pod("aff2", pod_affinity("podAffinity", s2.clone(), HOSTNAME)),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claim("aff1")["name"], p.claim("aff2")["name"]);
    let mut spec = pod_affinity("podAffinity", s2.clone(), HOSTNAME)["spec"].clone();
    spec["containers"] = json!([{"name": "app", "image": "i"}]);
    let p = topo(vec![], json!({}), vec![deployment("self", 3, s2, spec)]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
}

/// Pod Affinity: "should respect pod affinity (arch)": same arch, different nodes (their
/// hostname spread).
#[test]
fn affinity_on_arch_with_a_hostname_spread() {
    let s2 = json!({"security": "s2"});
    let tsc = json!([{"topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1,
        "labelSelector": {"matchLabels": s2.clone()}}]);
    let p = topo(
        vec![],
        json!({}),
        vec![
            sized(
                "aff1",
                json!({"cpu": "2"}),
                json!({"metadata": {"labels": s2.clone()},
                    "spec": {"topologySpreadConstraints": tsc.clone(), "nodeSelector": {ARCH: "arm64"}}}),
            ),
            sized(
                "aff2",
                json!({"cpu": "1"}),
                both(
                    json!({"metadata": {"labels": s2.clone()}, "spec": {"topologySpreadConstraints": tsc}}),
                    pod_affinity("podAffinity", s2, ARCH),
                ),
            ),
        ],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("aff1", ARCH), p.label("aff2", ARCH));
    assert_ne!(p.claim("aff1")["name"], p.claim("aff2")["name"]);
}

/// Pod Anti-Affinity: "should separate nodes using simple pod anti-affinity on hostname" and
/// "should not violate pod anti-affinity on zone" (three 2-CPU pods, one per zone, leave the
/// anti-affine pod no zone).
#[test]
fn anti_affinity_on_hostname_and_zone() {
    let s2 = json!({"security": "s2"});
    let p = topo(
        vec![],
        json!({}),
        vec![
            pod(
                "anti",
                pod_affinity("podAntiAffinity", s2.clone(), HOSTNAME),
            ),
            pod("target", json!({"metadata": {"labels": s2.clone()}})),
        ],
    );
    p.assert_pending(&[]);
    assert_ne!(p.claim("anti")["name"], p.claim("target")["name"]);
    let zonal = |name: &str, zone: &str| {
        sized(
            name,
            json!({"cpu": "2"}),
            json!({"metadata": {"labels": s2.clone()}, "spec": {"nodeSelector": {ZONE: zone}}}),
        )
    };
    let p = topo(
        vec![],
        json!({}),
        vec![
            zonal("z1", "test-zone-1"),
            zonal("z2", "test-zone-2"),
            zonal("z3", "test-zone-3"),
            pod("anti", pod_affinity("podAntiAffinity", s2.clone(), ZONE)),
        ],
    );
    p.assert_pending(&["anti"]);
}

/// "should taint nodes with NodePool taints", "should schedule pods that tolerate NodePool
/// constraints" (Exists and Equal tolerate; none, another key, a value mismatch do not),
/// "should provision nodes with taints and schedule pods if the taint is only a startup
/// taint", "should not generate taints for OpExists".
/// Upstream It: "should schedule pods that tolerate NodePool constraints".
#[test]
fn taints_and_tolerations_from_the_manifest() {
    let taint =
        json!({"taints": [{"key": "test-key", "value": "test-value", "effect": "NoSchedule"}]});
    let tol = |t: Value| json!({"spec": {"tolerations": [t]}});
    let p = topo(
        vec![],
        json!({ "spec": taint.clone() }),
        vec![
            pod(
                "exists",
                tol(json!({"key": "test-key", "operator": "Exists", "effect": "NoSchedule"})),
            ),
            pod(
                "equal",
                tol(
                    json!({"key": "test-key", "value": "test-value", "operator": "Equal", "effect": "NoSchedule"}),
                ),
            ),
            pod("none", json!({})),
            pod(
                "other-key",
                tol(json!({"key": "invalid", "operator": "Exists"})),
            ),
            pod(
                "other-value",
                tol(json!({"key": "test-key", "operator": "Equal", "effect": "NoSchedule"})),
            ),
        ],
    );
    p.assert_pending(&["none", "other-key", "other-value"]);
    assert_eq!(
        p.claim("exists")["taints"],
        json!([{"key": "test-key", "value": "test-value", "effect": "NoSchedule"}])
    );
    let p = topo(
        vec![],
        json!({"spec": {"startupTaints": [{"key": "ignore-me", "value": "nothing-to-see-here", "effect": "NoSchedule"}]}}),
        vec![pod("p", json!({}))],
    );
    p.assert_pending(&[]);
    let p = topo(
        vec![],
        json!({}),
        vec![pod(
            "p",
            tol(json!({"key": "test-key", "operator": "Exists", "effect": "NoExecute"})),
        )],
    );
    p.assert_pending(&[]);
    assert!(
        p.claim("p")["taints"].as_array().is_none_or(Vec::is_empty),
        "{:#}",
        p.json
    );
}

// ---- provisioning/suite_test.go ----

/// The provisioning suite's pool (`test.NodePool()`: no requirements) with `extra`, and
/// `objects`.
pub(crate) fn prov(extra: Value, objects: Vec<Value>) -> Plan {
    let mut all = vec![pool("default", vec![], extra)];
    all.extend(objects);
    plan(all)
}

pub(crate) fn cpu_mem(cpu: &str, memory: &str) -> Value {
    json!({"cpu": cpu, "memory": memory})
}

/// The 1 CPU / 1Gi pod of the DaemonSet Its.
fn one_cpu_pod(patch: Value) -> Value {
    sized("p", cpu_mem("1", "1Gi"), patch)
}

/// The CPUs of the type the NodeClaim of `pod` launches: 4 when the 2 CPU / 2Gi DaemonSet was
/// counted (the 4 CPU / 4Gi type), 2 when it was not (the 2 CPU / 2Gi type).
fn cpus_of(p: &Plan, pod: &str) -> String {
    p.label(pod, CPUS)
        .unwrap_or_else(|| panic!("{pod}: {:#}", p.json))
        .to_string()
}

/// Daemonsets: "should account for daemonsets", "… (with startup taint)", "should be able to
/// schedule pods if resource requests and limits are not defined".
/// Upstream It: "should account for daemonsets (with startup taint)".
/// Upstream It: "should be able to schedule pods if resource requests and limits are not defined".
#[test]
fn daemonsets_from_the_manifest_are_overhead() {
    let ds = daemonset("ds", cpu_mem("2", "2Gi"), json!({}));
    let p = prov(json!({}), vec![ds.clone(), one_cpu_pod(json!({}))]);
    assert_eq!(cpus_of(&p, "p"), "4");
    assert_eq!(p.claim("p")["requests"]["cpu"], "3", "{:#}", p.json);
    let startup =
        json!({"spec": {"startupTaints": [{"key": "foo.com/taint", "effect": "NoSchedule"}]}});
    let p = prov(startup, vec![ds, one_cpu_pod(json!({}))]);
    assert_eq!(cpus_of(&p, "p"), "4");
    let p = prov(
        json!({}),
        vec![
            daemonset("empty", json!({}), json!({})),
            pod("plain", json!({})),
        ],
    );
    p.assert_pending(&[]);
}

/// Daemonsets: "should account for daemonset hostports": the pod's port 8080 is the
/// DaemonSet's, so no node can take it.
#[test]
fn daemonset_host_ports_block_the_pod() {
    let ports = json!({"containers": [{"name": "app", "image": "i", "ports": [{"containerPort": 8080, "hostPort": 8080}],
        "resources": {"requests": cpu_mem("2", "2Gi")}}]});
    let p = prov(
        json!({}),
        vec![
            daemonset("ds", json!({}), ports),
            one_cpu_pod(json!({"spec": {"containers": [{"name": "app", "image": "i",
                "ports": [{"containerPort": 8080, "hostPort": 8080}], "resources": {"requests": cpu_mem("1", "1Gi")}}]}})),
        ],
    );
    p.assert_pending(&["p"]);
    assert!(p.claims().is_empty());
}

/// Daemonsets: "should not schedule if daemonset overhead is too large", "… if resource
/// requests are not defined and limits (requests) are too large", "… if combined max resources
/// are too large for any node", "… if initContainer resources are too large".
/// Upstream It: "should not schedule if resource requests are not defined and limits (requests) are too large".
/// Upstream It: "should not schedule if combined max resources are too large for any node".
/// Upstream It: "should not schedule if initContainer resources are too large".
#[test]
fn daemonsets_too_large_for_any_node_keep_pods_pending() {
    let huge = cpu_mem("10000", "10000Gi");
    let cases = [
        daemonset("requests", huge.clone(), json!({})),
        daemonset(
            "limits",
            json!({}),
            json!({"containers": [{"name": "app", "image": "i", "resources": {"limits": huge.clone(), "requests": {"cpu": "1"}}}]}),
        ),
        daemonset(
            "combined",
            json!({}),
            json!({"containers": [{"name": "app", "image": "i", "resources": {"limits": {"cpu": "10000", "memory": "1Gi"}, "requests": {"cpu": "1"}}}],
                "initContainers": [{"name": "init", "image": "i", "resources": {"limits": huge.clone(), "requests": {"cpu": "1"}}}]}),
        ),
        daemonset(
            "init",
            json!({}),
            json!({"initContainers": [{"name": "init", "image": "i", "resources": {"requests": huge}}]}),
        ),
    ];
    for ds in cases {
        let name = ds["metadata"]["name"].clone();
        let p = prov(json!({}), vec![ds, pod("p", json!({}))]);
        assert!(p.is_pending("p"), "{name}: {:#}", p.json);
    }
}

/// Daemonsets: "should schedule based on the max resource requests of containers and
/// initContainers": the init container's 3 CPU / 3Gi (limits as requests for memory) wins.
#[test]
fn a_daemonsets_init_container_sizes_its_overhead() {
    let ds = daemonset(
        "ds",
        json!({}),
        json!({"containers": [{"name": "app", "image": "i", "resources": {"limits": {"cpu": "10000", "memory": "1Gi"}, "requests": {"cpu": "1"}}}],
            "initContainers": [{"name": "init", "image": "i", "resources": {"limits": {"cpu": "10000", "memory": "3Gi"}, "requests": {"cpu": "3"}}}]}),
    );
    let p = prov(json!({}), vec![ds, pod("p", json!({}))]);
    assert_eq!(cpus_of(&p, "p"), "4");
}

/// Daemonsets: "should ignore daemonsets without matching tolerations", "… with an invalid
/// selector", "… when no instance types meet the daemonset requirements": the 2 CPU type.
#[test]
fn daemonsets_that_would_not_run_there_are_not_counted() {
    let taint =
        json!({"spec": {"taints": [{"key": "foo", "value": "bar", "effect": "NoSchedule"}]}});
    let p = prov(
        taint,
        vec![
            daemonset("ds", cpu_mem("2", "2Gi"), json!({})),
            one_cpu_pod(json!({"spec": {"tolerations": [{"operator": "Exists"}]}})),
        ],
    );
    assert_eq!(cpus_of(&p, "p"), "2");
    for spec in [
        json!({"nodeSelector": {"node": "invalid"}}),
        required(vec![req(
            INSTANCE_TYPE,
            "In",
            &["non-existent-instance-type"],
        )])["spec"]
            .clone(),
    ] {
        let p = prov(
            json!({}),
            vec![
                daemonset("ds", cpu_mem("2", "2Gi"), spec),
                one_cpu_pod(json!({})),
            ],
        );
        assert_eq!(cpus_of(&p, "p"), "2", "{:#}", p.json);
    }
}

/// Daemonsets: "should account for daemonsets with a custom label nodeSelector that matches the
/// nodepool", "should account daemonsets with NotIn operator and unspecified key", "should
/// consider a daemonset schedulable with multiple node affinity terms", "… with an
/// incompatible node affinity preference", "… with a PreferNoSchedule taint": the 4 CPU type.
#[test]
fn daemonsets_that_would_run_there_are_counted() {
    let ds2 = |spec: Value| daemonset("ds", cpu_mem("2", "2Gi"), spec);
    let purpose = json!({"metadata": {"labels": {"purpose": "monitoring"}}});
    let foo = json!({"metadata": {"labels": {"foo": "bar"}}});
    let prefer_no = json!({"spec": {"taints": [{"key": "test", "effect": "PreferNoSchedule"}]}});
    let cases = [
        (
            purpose,
            ds2(json!({"nodeSelector": {"purpose": "monitoring"}})),
            json!({}),
        ),
        (
            json!({}),
            ds2(required(vec![req("foo", "NotIn", &["bar"])])["spec"].clone()),
            required(vec![req(ZONE, "In", &["test-zone-2"])]),
        ),
        (
            foo,
            ds2(required_terms(vec![
                vec![req("foo", "In", &["voo"])],
                vec![req("foo", "In", &["bar"])],
            ])["spec"]
                .clone()),
            json!({}),
        ),
        (
            json!({}),
            ds2(preferred(vec![req("node", "In", &["invalid"])])["spec"].clone()),
            json!({}),
        ),
        (prefer_no, ds2(json!({})), json!({})),
    ];
    for (i, (extra, ds, patch)) in cases.into_iter().enumerate() {
        let p = prov(extra, vec![ds, one_cpu_pod(patch)]);
        assert_eq!(cpus_of(&p, "p"), "4", "case {i}: {:#}", p.json);
    }
}

/// Daemonsets: "should filter out daemonsets based on instance type requirements" (the small
/// types' 1 CPU DaemonSet counts, the large types' 10 CPU one does not) and "should not account
/// for daemonset hostports when daemonset would not schedule on selected node" (the large
/// types' DaemonSet holds port 8080, the pod on a small type takes it).
#[test]
fn daemonsets_are_counted_per_instance_type() {
    let sized_ds = |name: &str, size: &str, requests: Value, ports: Value| {
        let mut spec = required(vec![req(SIZE, "In", &[size])])["spec"].clone();
        spec["containers"] = json!([{"name": "app", "image": "i", "ports": ports, "resources": {"requests": requests}}]);
        daemonset(name, json!({}), spec)
    };
    let p = prov(
        json!({}),
        vec![
            sized_ds("small", "small", json!({"cpu": "1"}), json!([])),
            sized_ds("large", "large", json!({"cpu": "10"}), json!([])),
            one_cpu_pod(json!({})),
        ],
    );
    assert_eq!(cpus_of(&p, "p"), "4", "{:#}", p.json);
    let port = |n: u32| json!([{"containerPort": n, "hostPort": n}]);
    let p = prov(
        json!({}),
        vec![
            sized_ds("large", "large", cpu_mem("4", "4Gi"), port(8080)),
            sized_ds("small", "small", cpu_mem("2", "2Gi"), port(8081)),
            sized(
                "p",
                cpu_mem("1", "1Gi"),
                both(
                    required(vec![req(SIZE, "In", &["small"])]),
                    json!({"spec": {"containers": [{"name": "app", "image": "i", "ports": port(8080),
                        "resources": {"requests": cpu_mem("1", "1Gi")}}]}}),
                ),
            ),
        ],
    );
    assert_eq!(p.label("p", SIZE), Some("small"));
    assert_eq!(cpus_of(&p, "p"), "4", "{:#}", p.json);
}

/// Daemonsets: "should account for overhead using daemonset pod spec instead of daemonset
/// spec": the DaemonSet's running pod (2 CPU / 2Gi) is what counts, not its 4 CPU template.
#[test]
fn a_daemonsets_running_pod_is_its_overhead() {
    let ds = daemonset("ds", cpu_mem("4", "4Gi"), json!({}));
    let mut ds_pod = sized(
        "ds-abcde",
        cpu_mem("2", "2Gi"),
        json!({"metadata": {"labels": {"ds": "ds"}, "ownerReferences": [{"apiVersion": "apps/v1",
            "kind": "DaemonSet", "name": "ds", "uid": "u-1", "controller": true}]}}),
    );
    ds_pod["spec"]["nodeName"] = json!("elsewhere");
    ds_pod["status"] = json!({"phase": "Running"});
    let p = prov(
        json!({}),
        vec![
            ds,
            ds_pod,
            one_cpu_pod(json!({"spec": {"nodeSelector": {"karpenter.sh/nodepool": "default"}}})),
        ],
    );
    assert_eq!(cpus_of(&p, "p"), "4", "{:#}", p.json);
}

/// Annotations: "should annotate nodes"; Labels: "should label nodes" (template labels and
/// every requirement operator), "… with labels in the kubernetes domains".
/// Upstream It: "should label nodes with labels in the subdomain from kubernetes domains".
#[test]
fn the_templates_labels_annotations_and_requirements_reach_the_node() {
    let reqs = vec![
        req("test-key-2", "In", &["test-value-2"]),
        req("test-key-3", "NotIn", &["test-value-3"]),
        req("test-key-4", "Lt", &["4"]),
        req("test-key-5", "Gt", &["5"]),
        req("test-key-6", "Exists", &[]),
        req("test-key-7", "DoesNotExist", &[]),
    ];
    let np = pool(
        "default",
        reqs,
        json!({"metadata": {"labels": {"test-key-1": "test-value-1", "kubernetes.io/test": "test-value"},
            "annotations": {"karpenter.sh/do-not-disrupt": "true"}}}),
    );
    let p = plan(vec![
        np,
        pod(
            "p",
            required(vec![req("kubernetes.io/test", "In", &["test-value"])]),
        ),
    ]);
    p.assert_pending(&[]);
    let c = p.claim("p");
    assert_eq!(c["annotations"]["karpenter.sh/do-not-disrupt"], "true");
    let labels = &c["labels"];
    assert_eq!(labels["karpenter.sh/nodepool"], "default");
    assert_eq!(labels["test-key-1"], "test-value-1");
    assert_eq!(labels["test-key-2"], "test-value-2");
    assert_eq!(labels["kubernetes.io/test"], "test-value");
    for key in ["test-key-3", "test-key-4", "test-key-5", "test-key-6"] {
        assert!(labels[key].is_string(), "{key}: {labels:#}");
    }
    assert_ne!(labels["test-key-3"], "test-value-3");
    let four: i64 = labels["test-key-4"].as_str().unwrap().parse().unwrap();
    let five: i64 = labels["test-key-5"].as_str().unwrap().parse().unwrap();
    assert!(four < 4 && five > 5, "{labels:#}");
    assert!(labels.get("test-key-7").is_none());
}

/// Labels: "should not label nodes with well-known labels from requirements": `foo In [bar]`
/// labels the node, `node.kubernetes.io/windows-build NotIn [test-value]` (a well-known key)
/// does not get a made-up value.
#[test]
fn well_known_requirements_are_not_template_labels() {
    let p = with_reqs(
        vec![
            req("foo", "In", &["bar"]),
            req("node.kubernetes.io/windows-build", "NotIn", &["test-value"]),
        ],
        vec![pod("p", json!({}))],
    );
    p.assert_pending(&[]);
    assert_eq!(p.label("p", "foo"), Some("bar"));
    assert_ne!(
        p.label("p", "node.kubernetes.io/windows-build"),
        Some("test-value"),
        "{:#}",
        p.json
    );
}

/// NodeClaim Creation: "should create a nodeclaim with resource requests with daemon overhead"
/// and "should not double-count daemon overhead when multiple pods are scheduled to the same
/// nodeclaim".
#[test]
fn nodeclaim_requests_hold_the_pods_and_the_daemon_overhead_once() {
    let p = prov(
        json!({}),
        vec![
            daemonset("ds", cpu_mem("1", "1Gi"), json!({})),
            sized("a", cpu_mem("1", "1Gi"), json!({})),
            sized("b", cpu_mem("1", "1Gi"), json!({})),
        ],
    );
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    let r = &p.claims()[0]["requests"];
    assert_eq!(r["cpu"], "3", "{r:#}");
    assert_eq!(r["memory"], "3Gi", "{r:#}");
    assert_eq!(r["pods"], "3", "{r:#}");
}

/// Multiple NodePools: "should schedule to an explicitly selected NodePool", "… to a NodePool
/// by labels", "should not match NodePool with PreferNoSchedule taint when other NodePool
/// match"; Weighted: "… to the nodepool with the highest priority always", "… to explicitly
/// selected nodepool even if other nodePools are higher priority".
/// Upstream It: "should schedule to a NodePool by labels".
/// Upstream It: "should schedule to the nodepool with the highest priority always".
#[test]
fn multiple_and_weighted_nodepools() {
    let p = plan(vec![
        pool("a", vec![], json!({})),
        pool("b", vec![], json!({"metadata": {"labels": {"foo": "bar"}}})),
        pool(
            "c",
            vec![],
            json!({"spec": {"taints": [{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]}}),
        ),
        pod("explicit", selector(&[("karpenter.sh/nodepool", "a")])),
        pod("by-label", selector(&[("foo", "bar")])),
        pod("plain", json!({})),
    ]);
    p.assert_pending(&[]);
    assert_eq!(p.label("explicit", "karpenter.sh/nodepool"), Some("a"));
    assert_eq!(p.label("by-label", "karpenter.sh/nodepool"), Some("b"));
    assert_ne!(p.label("plain", "karpenter.sh/nodepool"), Some("c"));
    let weighted = |pods: Vec<Value>| {
        let mut objects = vec![
            pool("target", vec![], json!({})),
            pool("w20", vec![], json!({"pool": {"weight": 20}})),
            pool("w100", vec![], json!({"pool": {"weight": 100}})),
        ];
        objects.extend(pods);
        plan(objects)
    };
    let p = weighted(vec![
        pod("a", json!({})),
        pod("b", json!({})),
        pod("c", json!({})),
    ]);
    for pod in ["a", "b", "c"] {
        assert_eq!(p.label(pod, "karpenter.sh/nodepool"), Some("w100"), "{pod}");
    }
    let p = weighted(vec![pod(
        "explicit",
        selector(&[("karpenter.sh/nodepool", "target")]),
    )]);
    assert_eq!(p.label("explicit", "karpenter.sh/nodepool"), Some("target"));
}

/// Resource Limits: "should schedule if limits would be met" (1.75 CPU under `cpu: 2`), "should
/// not schedule if limits would be exceeded" (2.1), "should partially schedule if limits would
/// be exceeded" (two anti-affine 1.5 CPU pods under `cpu: 3`: one), "… (GPU)" (`pods: 1`).
/// Upstream It: "should not schedule if limits would be exceeded (GPU)".
#[test]
fn nodepool_limits_from_the_manifest() {
    let limited =
        |limits: Value, objects: Vec<Value>| prov(json!({ "pool": { "limits": limits } }), objects);
    let p = limited(
        json!({"cpu": "2"}),
        vec![sized("fits", json!({"cpu": "1.75"}), json!({}))],
    );
    p.assert_pending(&[]);
    let p = limited(
        json!({"cpu": "2"}),
        vec![sized("over", json!({"cpu": "2.1"}), json!({}))],
    );
    p.assert_pending(&["over"]);
    let anti = both(
        json!({"metadata": {"labels": {"app": "foo"}}}),
        pod_affinity("podAntiAffinity", json!({"app": "foo"}), HOSTNAME),
    );
    let p = limited(
        json!({"cpu": "3"}),
        vec![
            sized("a", json!({"cpu": "1.5"}), anti.clone()),
            sized("b", json!({"cpu": "1.5"}), anti),
        ],
    );
    assert_eq!(p.pending().len(), 1, "{:#}", p.json);
    assert_eq!(p.claims().len(), 1);
    let p = limited(
        json!({"pods": "1"}),
        vec![pod(
            "gpu",
            json!({"spec": {"containers": [{"name": "app", "image": "i",
                "resources": {"limits": {"fake.com/vendor-a": "1"}}}]}}),
        )],
    );
    p.assert_pending(&["gpu"]);
}

// ---- scheduling/instance_selection_test.go ----

/// One type of `fake.InstanceTypesAssorted()` (linux only: the EC2NodeClass's AL2023 runs no
/// Windows): CPUs, GiB, arch, zone, capacity type.
pub(crate) struct Assorted {
    pub(crate) cpu: u32,
    pub(crate) mem: u32,
    pub(crate) arch: &'static str,
    pub(crate) zone: &'static str,
    pub(crate) ct: &'static str,
}

impl Assorted {
    fn name(&self) -> String {
        format!(
            "{}-cpu-{}-mem-{}-linux-{}-{}",
            self.cpu, self.mem, self.arch, self.zone, self.ct
        )
    }

    /// `fake.PriceFromResources`: 0.1 per CPU and per GB.
    fn price(&self) -> f64 {
        0.1 * f64::from(self.cpu) + 0.1 * f64::from(self.mem) * 1_073_741_824.0 / 1e9
    }
}

fn assorted() -> Vec<Assorted> {
    let mut out = Vec::new();
    for cpu in [1, 2, 4, 8, 16, 32, 64] {
        for mem in [1, 2, 4, 8, 16, 32, 64, 128] {
            for zone in ["test-zone-1", "test-zone-2", "test-zone-3"] {
                for ct in ["spot", "on-demand"] {
                    for arch in ["amd64", "arm64"] {
                        out.push(Assorted {
                            cpu,
                            mem,
                            arch,
                            zone,
                            ct,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Writes the assorted types `keep` admits as a catalog; returns its path.
pub(crate) fn assorted_catalog(file: &str, keep: impl Fn(&Assorted) -> bool) -> std::path::PathBuf {
    let types: Vec<Value> = assorted()
        .iter()
        .filter(|t| keep(t))
        .map(|t| {
            json!({"name": t.name(),
                "capacity": {"cpu": t.cpu.to_string(), "memory": format!("{}Gi", t.mem), "pods": "5"},
                "overhead": {"cpu": "100m", "memory": "10Mi"},
                "labels": {ARCH: t.arch, "kubernetes.io/os": "linux"},
                "offerings": [{"zone": t.zone, "capacityType": t.ct, "price": t.price()}]})
        })
        .collect();
    crate::support::write_temp(
        file,
        json!({ "instanceTypes": types }).to_string().as_bytes(),
    )
}

/// The selection suite's pool (spot or on-demand, either arch) replaced by `requirements` when
/// given, planned against the assorted catalog at `catalog`.
pub(crate) fn select(
    catalog: &std::path::Path,
    requirements: Option<Vec<Value>>,
    pods: Vec<Value>,
) -> Plan {
    let reqs = requirements.unwrap_or_else(|| {
        vec![
            req(CAPACITY_TYPE, "In", &["spot", "on-demand"]),
            req(ARCH, "In", &["arm64", "amd64"]),
        ]
    });
    let mut objects = vec![pool("default", reqs, json!({}))];
    objects.extend(pods);
    plan_on(catalog, objects)
}

/// The cheapest price of the whole assorted catalog (1 CPU, 1 GiB).
fn min_price() -> f64 {
    Assorted {
        cpu: 1,
        mem: 1,
        arch: "amd64",
        zone: "",
        ct: "",
    }
    .price()
}

/// Every option of the NodeClaim of `pod` has `part` in its name (the arch, zone or capacity
/// type the type is built for), and the launched one is the cheapest of the catalog.
fn cheapest_with(p: &Plan, parts: &[&str]) {
    let c = p.claim("p");
    let price = c["pricePerHour"].as_f64().unwrap();
    assert!((price - min_price()).abs() < 1e-6, "{price}: {c:#}");
    for t in c["instanceTypes"].as_array().unwrap() {
        let name = t.as_str().unwrap();
        for part in parts {
            assert!(name.contains(part), "{name} lacks {part}");
        }
    }
}

/// A selection It: the pool's requirements (`None`: the suite's), the pod's patch, the name
/// parts every option must have.
type SelectionCase = (Option<Vec<Value>>, Value, Vec<&'static str>);

/// "should schedule on one of the cheapest instances" and its variants (pod arch = amd64 /
/// arm64; prov arch = amd64 / arm64; pod os = linux; prov zone = test-zone-2; pod zone =
/// test-zone-2; prov ct = spot; pod ct = spot; prov ct = ondemand, prov zone = test-zone-1;
/// pod ct = spot, pod zone = test-zone-1; prov ct = spot, pod zone = test-zone-2; prov =
/// spot/test-zone-2, pod = amd64/linux; pod ct = spot/test-zone-2/amd64/linux): the launched
/// type is the catalog's cheapest and every option admits the constraints.
/// Upstream It: "should schedule on one of the cheapest instances (pod arch = amd64)".
/// Upstream It: "should schedule on one of the cheapest instances (pod arch = arm64)".
/// Upstream It: "should schedule on one of the cheapest instances (prov arch = amd64)".
/// Upstream It: "should schedule on one of the cheapest instances (prov arch = arm64)".
/// Upstream It: "should schedule on one of the cheapest instances (pod os = linux)".
/// Upstream It: "should schedule on one of the cheapest instances (prov zone = test-zone-2)".
/// Upstream It: "should schedule on one of the cheapest instances (pod zone = test-zone-2)".
/// Upstream It: "should schedule on one of the cheapest instances (prov ct = spot)".
/// Upstream It: "should schedule on one of the cheapest instances (pod ct = spot)".
/// Upstream It: "should schedule on one of the cheapest instances (prov ct = ondemand, prov zone = test-zone-1)".
/// Upstream It: "should schedule on one of the cheapest instances (pod ct = spot, pod zone = test-zone-1)".
/// Upstream It: "should schedule on one of the cheapest instances (prov ct = spot, pod zone = test-zone-2)".
/// Upstream It: "should schedule on one of the cheapest instances (prov = spot/test-zone-2, pod = amd64/linux)".
/// Upstream It: "should schedule on one of the cheapest instances (pod ct = spot/test-zone-2/amd64/linux)".
#[test]
fn selection_the_cheapest_admitted_type_and_only_admitted_options() {
    let catalog = assorted_catalog("assorted.json", |_| true);
    let default_reqs = || {
        vec![
            req(CAPACITY_TYPE, "In", &["spot", "on-demand"]),
            req(ARCH, "In", &["arm64", "amd64"]),
        ]
    };
    let with = |extra: Vec<Value>| {
        let mut r = default_reqs();
        r.extend(extra);
        Some(r)
    };
    let cases: Vec<SelectionCase> = vec![
        (None, json!({}), vec![]),
        (
            None,
            required(vec![req(ARCH, "In", &["amd64"])]),
            vec!["amd64"],
        ),
        (
            None,
            required(vec![req(ARCH, "In", &["arm64"])]),
            vec!["arm64"],
        ),
        (
            Some(vec![req(ARCH, "In", &["amd64"])]),
            json!({}),
            vec!["amd64"],
        ),
        (
            Some(vec![req(ARCH, "In", &["arm64"])]),
            json!({}),
            vec!["arm64"],
        ),
        (
            None,
            required(vec![req("kubernetes.io/os", "In", &["linux"])]),
            vec!["linux"],
        ),
        (
            with(vec![req(ZONE, "In", &["test-zone-2"])]),
            json!({}),
            vec!["test-zone-2"],
        ),
        (
            None,
            required(vec![req(ZONE, "In", &["test-zone-2"])]),
            vec!["test-zone-2"],
        ),
        (
            with(vec![req(CAPACITY_TYPE, "In", &["spot"])]),
            json!({}),
            vec!["spot"],
        ),
        (
            None,
            required(vec![req(CAPACITY_TYPE, "In", &["spot"])]),
            vec!["spot"],
        ),
        (
            with(vec![
                req(CAPACITY_TYPE, "In", &["on-demand"]),
                req(ZONE, "In", &["test-zone-1"]),
            ]),
            json!({}),
            vec!["on-demand", "test-zone-1"],
        ),
        (
            None,
            required(vec![
                req(CAPACITY_TYPE, "In", &["spot"]),
                req(ZONE, "In", &["test-zone-1"]),
            ]),
            vec!["spot", "test-zone-1"],
        ),
        (
            with(vec![req(CAPACITY_TYPE, "In", &["spot"])]),
            required(vec![req(ZONE, "In", &["test-zone-2"])]),
            vec!["spot", "test-zone-2"],
        ),
        (
            with(vec![
                req(CAPACITY_TYPE, "In", &["spot"]),
                req(ZONE, "In", &["test-zone-2"]),
            ]),
            required(vec![
                req(ARCH, "In", &["amd64"]),
                req("kubernetes.io/os", "In", &["linux"]),
            ]),
            vec!["spot", "test-zone-2", "amd64"],
        ),
        (
            None,
            required(vec![
                req(CAPACITY_TYPE, "In", &["spot"]),
                req(ZONE, "In", &["test-zone-2"]),
                req(ARCH, "In", &["amd64"]),
                req("kubernetes.io/os", "In", &["linux"]),
            ]),
            vec!["spot", "test-zone-2", "amd64"],
        ),
    ];
    for (reqs, patch, parts) in cases {
        let p = select(&catalog, reqs, vec![pod("p", patch)]);
        p.assert_pending(&[]);
        cheapest_with(&p, &parts);
    }
}

/// "should not schedule if no instance type matches selector (pod arch = arm)", "(pod arch =
/// arm zone=test-zone-2)", "(prov arch = arm / pod zone=test-zone-2)".
/// Upstream It: "should not schedule if no instance type matches selector (prov arch = arm / pod zone=test-zone-2)".
#[test]
fn selection_no_type_matching_the_selector() {
    let amd = assorted_catalog("assorted-amd64.json", |t| t.arch == "amd64");
    let p = select(
        &amd,
        None,
        vec![pod("p", required(vec![req(ARCH, "In", &["arm64"])]))],
    );
    p.assert_pending(&["p"]);
    let no_arm_in_2 = assorted_catalog("assorted-no-arm-zone-2.json", |t| {
        t.zone != "test-zone-2" || t.arch == "amd64"
    });
    let p = select(
        &no_arm_in_2,
        None,
        vec![pod(
            "p",
            required(vec![
                req(ARCH, "In", &["arm64"]),
                req(ZONE, "In", &["test-zone-2"]),
            ]),
        )],
    );
    p.assert_pending(&["p"]);
    let p = select(
        &no_arm_in_2,
        Some(vec![req(ARCH, "In", &["arm64"])]),
        vec![pod("p", required(vec![req(ZONE, "In", &["test-zone-2"])]))],
    );
    p.assert_pending(&["p"]);
}

/// "should schedule on an instance with enough resources" (a sample of its cpu × memory grid):
/// three pods share one node, and every option holds them plus its overhead.
#[test]
fn selection_every_option_has_room_for_three_pods() {
    let catalog = assorted_catalog("assorted-room.json", |_| true);
    for (cpu, mem) in [
        (0.1, 0.1),
        (1.0, 4.0),
        (2.5, 2.0),
        (4.0, 16.0),
        (16.0, 32.0),
    ] {
        let pods: Vec<Value> = (0..3)
            .map(|i| {
                sized(
                    &format!("p{i}"),
                    json!({"cpu": format!("{cpu:.1}"), "memory": format!("{mem:.1}Gi")}),
                    json!({}),
                )
            })
            .collect();
        let p = select(&catalog, None, pods);
        p.assert_pending(&[]);
        assert_eq!(p.claims().len(), 1, "{cpu}/{mem}: {:#}", p.json);
        for t in p.claims()[0]["instanceTypes"].as_array().unwrap() {
            let name = t.as_str().unwrap();
            let mut parts = name.split('-');
            let type_cpu: f64 = parts.next().unwrap().parse().unwrap();
            let type_mem: f64 = parts.nth(1).unwrap().parse().unwrap();
            assert!(3.0 * cpu + 0.1 < type_cpu, "{name} for 3 × {cpu} CPU");
            assert!(
                3.0 * mem + 10.0 / 1024.0 < type_mem,
                "{name} for 3 × {mem}Gi"
            );
        }
    }
}

/// MinValues: "should schedule respecting the minValues from instance-type requirements" (two
/// 0.9 CPU pods would share instance-type-2, but `minValues: 2` keeps both types, so each gets
/// a node) and "schedule should fail if minimum number of InstanceTypes is not met as per the
/// minValues in the requirement" (10 types, `Exists` `minValues: 11`).
#[test]
fn selection_min_values() {
    let catalog = crate::support::write_temp(
        "min-values.yaml",
        b"instanceTypes:
- {name: instance-type-1, capacity: {cpu: \"1\", memory: 1Gi, pods: \"5\"}, overhead: {cpu: 100m, memory: 10Mi},
   labels: {kubernetes.io/arch: arm64}, offerings: [{zone: test-zone-1-spot, capacityType: spot, price: 0.52}]}
- {name: instance-type-2, capacity: {cpu: \"4\", memory: 4Gi, pods: \"5\"}, overhead: {cpu: 100m, memory: 10Mi},
   labels: {kubernetes.io/arch: arm64}, offerings: [{zone: test-zone-1-spot, capacityType: spot, price: 1.0}]}
",
    );
    let mut two = req(INSTANCE_TYPE, "In", &["instance-type-1", "instance-type-2"]);
    two["minValues"] = json!(2);
    let small = |name: &str| sized(name, cpu_mem("0.9", "0.9Gi"), json!({}));
    let p = select(&catalog, Some(vec![two]), vec![small("a"), small("b")]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 2, "{:#}", p.json);
    assert!(p.claims()[0]["instanceTypes"].as_array().unwrap().len() >= 2);
    let ten = assorted_catalog("assorted-ten.json", |t| {
        t.cpu == 1 && t.ct == "spot" && (t.mem == 1 || t.mem == 2 && t.zone != "test-zone-3")
    });
    let mut eleven = req(INSTANCE_TYPE, "Exists", &[]);
    eleven["minValues"] = json!(11);
    let p = select(&ten, Some(vec![eleven.clone()]), vec![pod("p", json!({}))]);
    p.assert_pending(&["p"]);
    assert_eq!(p.pending()[0].1, "MinValuesUnmet", "{:#}", p.json);
    eleven["minValues"] = json!(10);
    let p = select(&ten, Some(vec![eleven]), vec![pod("p", json!({}))]);
    p.assert_pending(&[]);
}

/// scheduling/suite_test.go › In-Flight Nodes › Daemonsets "Should properly handle DaemonSet
/// resources with Node Affinity for `karpenter.sh/initialized` and `karpenter.sh/registered`"
/// (the launch half): both 1 CPU DaemonSets count on a new node, so a 2 CPU pod needs the 16
/// CPU type (4 CPUs less 100m kube-reserved hold no 4 CPUs).
#[test]
fn daemonsets_selecting_registered_and_initialized_count_on_new_nodes() {
    let on = |key: &str| required(vec![req(key, "In", &["true"])])["spec"].clone();
    let p = sched(
        json!({}),
        vec![
            daemonset(
                "initialized",
                json!({"cpu": "1"}),
                on("karpenter.sh/initialized"),
            ),
            daemonset(
                "registered",
                json!({"cpu": "1"}),
                on("karpenter.sh/registered"),
            ),
            sized("p", json!({"cpu": "2"}), json!({})),
        ],
    );
    assert_eq!(p.label("p", CPUS), Some("16"), "{:#}", p.json);
}

/// A Ready, unowned Node with this allocatable, labelled like any node.
pub(crate) fn unowned_node(name: &str, allocatable: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, ARCH: "amd64", "kubernetes.io/os": "linux",
            ZONE: "test-zone-1"}},
        "status": {"allocatable": allocatable, "capacity": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// scheduling/suite_test.go › Existing Nodes: "should schedule a pod to an existing node
/// unowned by Karpenter" and "should schedule multiple pods to an existing node unowned by
/// Karpenter" (100 pods of 10m): no NodeClaim.
#[test]
fn existing_unowned_nodes_take_the_pods_first() {
    let ten_m = json!({"containers": [{"name": "app", "image": "i",
        "resources": {"requests": {"cpu": "10m"}, "limits": {"cpu": "10m"}}}]});
    for (replicas, memory) in [(1, "10Gi"), (100, "100Gi")] {
        let p = sched(
            json!({}),
            vec![
                unowned_node(
                    "existing",
                    json!({"cpu": "10", "memory": memory, "pods": "110"}),
                ),
                deployment("web", replicas, json!({"app": "web"}), ten_m.clone()),
            ],
        );
        p.assert_pending(&[]);
        assert!(p.claims().is_empty(), "{:#}", p.json);
        let on = &p.json["existingNodes"][0];
        assert_eq!(on["name"], "existing");
        assert_eq!(on["pods"].as_array().unwrap().len(), replicas as usize);
    }
}

/// The fake catalog plus `AddInstanceResources`' three types (10 CPU / 4Gi, 11 / 5Gi, 12 / 6Gi).
fn catalog_with_three_close_sizes() -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(fixture("s19-bsched/fake-catalog.yaml")).unwrap();
    for (cpu, mem) in [(10, 4), (11, 5), (12, 6)] {
        let price = 0.1 * f64::from(cpu) + 0.1 * f64::from(mem) * 1_073_741_824.0 / 1e9;
        text.push_str(&format!(
            "- name: close-{cpu}\n  capacity: {{cpu: \"{cpu}\", memory: {mem}Gi, pods: \"5\"}}\n  \
             overhead: {{cpu: 100m, memory: 10Mi}}\n  labels: {{kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n  \
             offerings:\n  - {{zone: test-zone-1, capacityType: on-demand, price: {price}}}\n"
        ));
    }
    crate::support::write_temp("close-sizes.yaml", text.as_bytes())
}

fn container(name: &str, cpu: &str, memory: &str, sidecar: bool) -> Value {
    let mut c = json!({"name": name, "image": "i",
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}});
    if sidecar {
        c["restartPolicy"] = json!("Always");
    }
    c
}

/// provisioning suite: "should schedule based on the max resource requests of containers and
/// initContainers with sidecar containers when initcontainer comes first", "… when sidecar
/// container comes first and init container resources are smaller than container resources",
/// "… bigger than container resources" (the 11 CPU / 5Gi type each time), "should schedule
/// based on the pod level resources requests" (the 10 CPU / 4Gi type).
/// Upstream It: "should schedule based on the pod level resources requests".
#[test]
fn sidecars_and_pod_level_resources_size_the_pod() {
    let catalog = catalog_with_three_close_sizes();
    let sized_pod = |main: (&str, &str), inits: Vec<Value>| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [container("app", main.0, main.1, false)], "initContainers": inits}})
    };
    let cases = [
        sized_pod(
            ("6", "2Gi"),
            vec![
                container("init", "10", "4Gi", false),
                container("sidecar", "4.9", "2.9Gi", true),
            ],
        ),
        sized_pod(
            ("6", "2Gi"),
            vec![
                container("sidecar", "4.9", "2.9Gi", true),
                container("init", "5", "1Gi", false),
            ],
        ),
        sized_pod(
            ("5", "1Gi"),
            vec![
                container("sidecar", "4.9", "2.9Gi", true),
                container("init", "6", "2Gi", false),
            ],
        ),
    ];
    for (i, p) in cases.into_iter().enumerate() {
        let plan = plan_on(&catalog, vec![pool("default", vec![], json!({})), p]);
        assert_eq!(
            plan.label("p", INSTANCE_TYPE),
            Some("close-11"),
            "case {i}: {:#}",
            plan.json
        );
    }
    let mut level = sized_pod(
        ("5", "1Gi"),
        vec![
            container("init", "6", "2Gi", false),
            container("sidecar", "4", "2Gi", true),
        ],
    );
    level["spec"]["resources"] = json!({"requests": {"cpu": "9.9", "memory": "3.9Gi"},
        "limits": {"cpu": "10", "memory": "4Gi"}});
    let plan = plan_on(&catalog, vec![pool("default", vec![], json!({})), level]);
    assert_eq!(
        plan.label("p", INSTANCE_TYPE),
        Some("close-10"),
        "{:#}",
        plan.json
    );
}

/// provisioning suite: "should provision nodes" (1 node), "Should provision nodes for multiple
/// pods" (100 pods: nodes, all placed), "should provision nodes for accelerators" (vendor A and
/// B GPUs), "should provision multiple nodes when maxPods is set" (the single-pod type: 3 pods →
/// 3 nodes).
#[test]
fn provisioning_basics_from_the_manifest() {
    let p = prov(json!({}), vec![pod("p", json!({}))]);
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 1);
    let p = prov(
        json!({}),
        vec![deployment("many", 100, json!({"app": "many"}), json!({}))],
    );
    p.assert_pending(&[]);
    assert!(!p.claims().is_empty());
    let gpu = |name: &str, resource: &str| {
        pod(
            name,
            json!({"spec": {"containers": [{"name": "app", "image": "i", "resources": {"limits": { resource: "1" }}}]}}),
        )
    };
    let p = prov(
        json!({}),
        vec![gpu("a", "fake.com/vendor-a"), gpu("b", "fake.com/vendor-b")],
    );
    p.assert_pending(&[]);
    assert_eq!(
        p.label("a", INSTANCE_TYPE),
        Some("gpu-vendor-instance-type")
    );
    assert_eq!(
        p.label("b", INSTANCE_TYPE),
        Some("gpu-vendor-b-instance-type")
    );
    let p = with_reqs(
        vec![req(INSTANCE_TYPE, "In", &["single-pod-instance-type"])],
        vec![deployment("three", 3, json!({"app": "three"}), json!({}))],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claims().len(), 3, "{:#}", p.json);
}

/// provisioning suite: "should provision nodes for pods with supported node selectors" and "…
/// node affinities": the nodepool, zone, instance type, arch and os selectors schedule; another
/// nodepool, an unknown zone, instance type, arch, os or capacity type, and an undefined label
/// do not.
/// Upstream It: "should provision nodes for pods with supported node affinities".
#[test]
fn supported_and_unsupported_selectors_and_affinities() {
    let good = [
        ("karpenter.sh/nodepool", "default"),
        (ZONE, "test-zone-1"),
        (INSTANCE_TYPE, "default-instance-type"),
        (ARCH, "arm64"),
        ("kubernetes.io/os", "linux"),
    ];
    let bad = [
        ("karpenter.sh/nodepool", "unknown"),
        (ZONE, "unknown"),
        (INSTANCE_TYPE, "unknown"),
        (ARCH, "unknown"),
        ("kubernetes.io/os", "unknown"),
        (CAPACITY_TYPE, "unknown"),
        ("foo", "bar"),
    ];
    for as_affinity in [false, true] {
        let make = |prefix: &str, i: usize, (k, v): (&str, &str)| {
            let patch = if as_affinity {
                required(vec![req(k, "In", &[v])])
            } else {
                selector(&[(k, v)])
            };
            pod(&format!("{prefix}{i}"), patch)
        };
        let p = prov(
            json!({}),
            good.iter()
                .enumerate()
                .map(|(i, kv)| make("good", i, *kv))
                .collect(),
        );
        p.assert_pending(&[]);
        let p = prov(
            json!({}),
            bad.iter()
                .enumerate()
                .map(|(i, kv)| make("bad", i, *kv))
                .collect(),
        );
        let want: Vec<String> = (0..bad.len()).map(|i| format!("bad{i}")).collect();
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        p.assert_pending(&want);
    }
}

/// provisioning suite › Preferential Fallback › Preferences: "should tolerate PreferNoSchedule
/// taint only after trying to relax Affinity terms" (the only pool's PreferNoSchedule taint is
/// on the node) and the table "should ignore node preferredDuringSchedulingIgnoredDuringExecution
/// affinity" (zone, hostname: a pod preferring `value-1` still shares the 2 CPU pod's node).
/// Upstream It: "should tolerate PreferNoSchedule taint only after trying to relax Affinity terms".
#[test]
fn preferences_are_relaxed_before_prefer_no_schedule_and_do_not_split_nodes() {
    let taint = json!({"key": "foo", "value": "bar", "effect": "PreferNoSchedule"});
    let p = prov(
        json!({"spec": {"taints": [taint.clone()]}}),
        vec![pod(
            "p",
            preferred_terms(vec![
                (1, vec![req(ZONE, "In", &["invalid"])]),
                (1, vec![req(INSTANCE_TYPE, "In", &["invalid"])]),
            ]),
        )],
    );
    p.assert_pending(&[]);
    assert_eq!(p.claim("p")["taints"], json!([taint]));
    for key in [ZONE, HOSTNAME] {
        let p = prov(
            json!({}),
            vec![
                sized(
                    "first",
                    json!({"cpu": "2"}),
                    json!({"metadata": {"labels": {"app": "foo"}}}),
                ),
                sized(
                    "prefers",
                    json!({"cpu": "1"}),
                    both(
                        json!({"metadata": {"labels": {"app": "baz"}}}),
                        preferred(vec![req(key, "In", &["value-1"])]),
                    ),
                ),
            ],
        );
        p.assert_pending(&[]);
        assert_eq!(p.claims().len(), 1, "{key}: {:#}", p.json);
    }
}

/// provisioning suite › Volume Topology Requirements: "should schedule to storage class zones if
/// volume does not exist" (+ "(ephemeral volume)": test-zone-3, the only zone both allow) and
/// "should not schedule if storage class zones are incompatible" (+ "(ephemeral volume)"), with
/// the suite's WaitForFirstConsumer class allowing test-zone-2 and test-zone-3.
/// Upstream It: "should not schedule if storage class zones are incompatible (ephemeral volume)".
#[test]
fn storage_class_zones_from_the_manifest() {
    let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
        "provisioner": "test-provisioner", "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["test-zone-2", "test-zone-3"]}]}]});
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}});
    let with_claim = json!({"spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}});
    let ephemeral = json!({"spec": {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
        "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]}});
    for (volume, zones, placed) in [
        (&with_claim, vec!["test-zone-1", "test-zone-3"], true),
        (&ephemeral, vec!["test-zone-1", "test-zone-3"], true),
        (&with_claim, vec!["test-zone-1"], false),
        (&ephemeral, vec!["test-zone-1"], false),
    ] {
        let p = prov(
            json!({}),
            vec![
                class.clone(),
                claim.clone(),
                pod(
                    "p",
                    both(volume.clone(), required(vec![req(ZONE, "In", &zones)])),
                ),
            ],
        );
        if placed {
            p.assert_pending(&[]);
            assert_eq!(p.label("p", ZONE), Some("test-zone-3"), "{:#}", p.json);
        } else {
            p.assert_pending(&["p"]);
        }
    }
}
