//! Karpenter's drift Its through the binary (docs/upstream-tests.md, "Drift Its through the
//! binary (s19-drift)"): each It or Entry of core v1.14.1
//! `pkg/controllers/nodeclaim/disruption/drift_test.go` and aws v1.14.1
//! `pkg/cloudprovider/suite_test.go` "NodeClaim Drift" (with the static fields of
//! `pkg/apis/v1/ec2nodeclass_hash_test.go` and core's NodePool hash fields) written as
//! manifests — a NodePool and EC2NodeClass with status, a NodeClaim and its Node with the It's
//! labels, annotations, providerID, image id, subnet and security groups — and judged by
//! `drift check -f FILE -o json --catalog FILE` on the built binary, every case of a batch in
//! one call (its own NodePool `p<i>`, EC2NodeClass `c<i>`, NodeClaim `nc<i>`, Node `n<i>`).
//!
//! The hashes are the binary's own: a first call on the cases' launch-time NodePools and
//! classes, each annotated with a stale hash, reads the hash of each spec from the report's
//! notes ("… its spec hashes to H now"); the NodeClaims carry those hashes as Karpenter would
//! have written them at launch, and the second call sees the edited objects. EC2NodeClass hashes
//! are at version v4: offline, v5 mixes in the cluster's CA bundle, which no manifest has
//! (docs/drift.md) — the static fields are the same.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::support::{karpenter, write_temp};

/// Every NodeClaim's creation, well over the hour before which Karpenter does not look for
/// instance-type drift (`drift.go isDrifted`; the Its step the clock 2h).
const LAUNCHED: &str = "2024-01-01T00:00:00Z";
const AMD_AMI: &str = "ami-0amd";
const ARM_AMI: &str = "ami-0arm";

/// Instance types offline: `c6a.large` (amd64) on-demand and spot in zone-1 and zone-2,
/// `c6g.large` (arm64), `r5.large` only as spot. (An instance type without offerings, the
/// It "…if the instance type offerings doesn't exist", is no catalog: one offering is required.)
const CATALOG: &str = "instanceTypes:
- name: c6a.large
  capacity: {cpu: \"2\", memory: 4Gi, pods: \"29\"}
  offerings:
  - {zone: zone-1, capacityType: on-demand, price: 0.0765, available: true}
  - {zone: zone-1, capacityType: spot, price: 0.03, available: true}
  - {zone: zone-2, capacityType: on-demand, price: 0.0765, available: true}
- name: c6g.large
  labels: {kubernetes.io/arch: arm64}
  capacity: {cpu: \"2\", memory: 4Gi, pods: \"29\"}
  offerings:
  - {zone: zone-1, capacityType: on-demand, price: 0.068, available: true}
- name: r5.large
  capacity: {cpu: \"2\", memory: 16Gi, pods: \"29\"}
  offerings:
  - {zone: zone-1, capacityType: spot, price: 0.05, available: true}
";

/// One It: the launch-time NodePool template spec and class spec (hashed for the NodeClaim),
/// the objects as the It leaves them, the NodeClaim and Node, and the verdict (`None`: not
/// drifted; `Some(reason)`).
#[derive(Clone)]
pub(crate) struct Case {
    pub(crate) it: &'static str,
    pub(crate) launch_template: Value,
    pub(crate) launch_class: Value,
    pub(crate) template: Value,
    pub(crate) class: Value,
    pub(crate) class_status: Value,
    /// Node labels (the NodeClaim's too).
    pub(crate) labels: Value,
    /// The NodeClaim's `status.imageID`.
    pub(crate) image: Option<&'static str>,
    /// The instance's subnet and security groups (the Node's annotations offline).
    pub(crate) subnet: Option<&'static str>,
    pub(crate) groups: Option<&'static str>,
    /// Hash annotations of the NodeClaim (`None`: left out) and the objects' own annotations.
    pub(crate) claim_annotations: Option<Value>,
    pub(crate) pool_annotations: Value,
    pub(crate) class_annotations: Value,
    /// Extra NodeClaim fields (conditions, nodeClassRef).
    pub(crate) claim_conditions: Value,
    pub(crate) claim_class_ref: Option<Value>,
    /// The pool the Node names (`None`: its own `p<i>`).
    pub(crate) pool_name: Option<&'static str>,
    /// No EC2NodeClass in the files.
    pub(crate) no_class: bool,
    /// `spec.template.metadata` now (none at launch).
    pub(crate) with_meta: Option<Value>,
    pub(crate) expect: Option<&'static str>,
}

fn base_template() -> Value {
    json!({
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "CLASS"},
        "requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}
        ]
    })
}

/// aws v1.14.1 suite_test.go "Static Drift Detection" BeforeEach's class (its selectors as ids).
pub(crate) fn base_class() -> Value {
    json!({
        "role": "test-role",
        "amiFamily": "AL2023",
        "amiSelectorTerms": [{"id": AMD_AMI}, {"id": ARM_AMI}],
        "subnetSelectorTerms": [{"id": "subnet-1"}, {"id": "subnet-2"}],
        "securityGroupSelectorTerms": [{"id": "sg-1"}],
        "userData": "Fake Userdata",
        "tags": {"fakeKey": "fakeValue"},
        "context": "fake-context",
        "detailedMonitoring": false,
        "associatePublicIPAddress": false,
        "metadataOptions": {"httpEndpoint": "disabled", "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1, "httpTokens": "optional"},
        "blockDeviceMappings": [{"deviceName": "fakeName", "rootVolume": false, "ebs": {
            "deleteOnTermination": false, "encrypted": false, "iops": 0,
            "kmsKeyID": "fakeKMSKeyID", "snapshotID": "fakeSnapshot", "throughput": 0,
            "volumeSize": "2G", "volumeType": "standard"}}]
    })
}

fn base_status() -> Value {
    json!({
        "instanceProfile": "test-profile",
        "subnets": [{"id": "subnet-1", "zone": "zone-1"}, {"id": "subnet-2", "zone": "zone-2"}],
        "securityGroups": [{"id": "sg-1"}],
        "amis": [
            {"id": ARM_AMI, "name": "arm", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]},
            {"id": AMD_AMI, "name": "amd", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
        ]
    })
}

fn base_labels() -> Value {
    json!({
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "c6a.large",
        "topology.kubernetes.io/zone": "zone-1",
        "karpenter.sh/capacity-type": "on-demand"
    })
}

pub(crate) fn case(it: &'static str, expect: Option<&'static str>) -> Case {
    Case {
        it,
        launch_template: base_template(),
        launch_class: base_class(),
        template: base_template(),
        class: base_class(),
        class_status: base_status(),
        labels: base_labels(),
        image: Some(AMD_AMI),
        subnet: Some("subnet-1"),
        groups: Some("sg-1"),
        claim_annotations: None,
        pool_annotations: json!({}),
        class_annotations: json!({}),
        claim_conditions: json!([{"type": "Launched", "status": "True"}]),
        claim_class_ref: None,
        pool_name: None,
        no_class: false,
        with_meta: None,
        expect,
    }
}

/// Merges `patch` into `v` (objects key by key; anything else replaced), as the Its' `mergo`.
fn merge(v: &mut Value, patch: &Value) {
    match (v, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, pv) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), pv);
            }
        }
        (slot, p) => *slot = p.clone(),
    }
}

impl Case {
    /// The NodePool and class edited after launch (`mergo.Merge` of the Entry's fields).
    fn pool_edit(mut self, patch: Value) -> Case {
        merge(&mut self.template, &patch);
        self
    }

    pub(crate) fn class_edit(mut self, patch: Value) -> Case {
        merge(&mut self.class, &patch);
        self
    }

    fn requirements(mut self, launch: Value, now: Value, labels: Value) -> Case {
        self.launch_template["requirements"] = launch;
        self.template["requirements"] = now;
        merge(&mut self.labels, &labels);
        self
    }

    pub(crate) fn with(mut self, f: impl FnOnce(&mut Case)) -> Case {
        f(&mut self);
        self
    }
}

fn named(template: &Value, class: &str) -> Value {
    let mut t = template.clone();
    if t["nodeClassRef"]["name"] == "CLASS" {
        t["nodeClassRef"]["name"] = json!(class);
    }
    t
}

fn docs(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|o| format!("---\n{o}\n"))
        .collect::<String>()
}

fn check(name: &str, text: &str) -> Value {
    let path = write_temp(name, text.as_bytes());
    let catalog = write_temp(&format!("catalog-{name}"), CATALOG.as_bytes());
    let run = karpenter(
        &[
            "drift",
            "check",
            "-f",
            path.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-o",
            "json",
        ],
        b"",
    );
    assert!(
        run.code == 0 || run.code == 1,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// The binary's hashes of each case's launch-time NodePool template and class, by object name.
fn launch_hashes(batch: &str, cases: &[Case]) -> BTreeMap<String, String> {
    let mut objects = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        objects.push(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": format!("p{i}"), "annotations": {
                "karpenter.sh/nodepool-hash": "0", "karpenter.sh/nodepool-hash-version": "v3"}},
            "spec": {"template": {"spec": named(&c.launch_template, &format!("c{i}"))}}}));
        objects.push(
            json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": format!("c{i}"), "annotations": {
                "karpenter.k8s.aws/ec2nodeclass-hash": "0",
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4"}},
            "spec": c.launch_class}),
        );
    }
    objects.push(json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "hash-reader", "labels": {"karpenter.sh/nodepool": "p0"}},
        "spec": {"providerID": "aws:///zone-1/i-hash"}}));
    let name = format!("upstream-drift-hashes-{batch}.yaml");
    let report = check(&name, &docs(&objects));
    let mut hashes = BTreeMap::new();
    for note in report["notes"].as_array().unwrap() {
        let note = note.as_str().unwrap();
        let (Some(object), Some(hash)) = (
            note.split(':').next().and_then(|s| s.split(' ').nth(1)),
            note.split("hashes to ")
                .nth(1)
                .and_then(|s| s.split(' ').next()),
        ) else {
            continue;
        };
        hashes.insert(object.to_string(), hash.to_string());
    }
    assert_eq!(hashes.len(), 2 * cases.len(), "{hashes:#?}");
    hashes
}

/// Runs `cases` in one call; returns the mismatches (`it: want …, got …`).
fn run(batch: &str, cases: &[Case]) -> Vec<String> {
    let hashes = launch_hashes(batch, cases);
    let mut objects = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let (pool, class, claim, node) = (
            format!("p{i}"),
            format!("c{i}"),
            format!("nc{i}"),
            format!("n{i}"),
        );
        let mut template = json!({"spec": named(&c.template, &class)});
        if let Some(meta) = &c.with_meta {
            template["metadata"] = meta.clone();
        }
        objects.push(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": pool, "annotations": c.pool_annotations},
            "spec": {"template": template}}));
        if !c.no_class {
            objects.push(
                json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                "metadata": {"name": class, "annotations": c.class_annotations},
                "spec": c.class, "status": c.class_status}),
            );
        }
        let annotations = c.claim_annotations.clone().unwrap_or_else(|| {
            json!({
                "karpenter.sh/nodepool-hash": hashes[&pool],
                "karpenter.sh/nodepool-hash-version": "v3",
                "karpenter.k8s.aws/ec2nodeclass-hash": hashes[&class],
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4",
            })
        });
        let mut labels = c.labels.clone();
        labels["karpenter.sh/nodepool"] = json!(c.pool_name.unwrap_or(&pool));
        let labels = Value::Object(
            labels
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        let provider = format!("aws:///zone-1/i-{i:04}");
        let mut status = json!({"nodeName": node, "providerID": provider,
            "conditions": c.claim_conditions});
        if let Some(image) = c.image {
            status["imageID"] = json!(image);
        }
        let class_ref = c.claim_class_ref.clone().unwrap_or_else(
            || json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class}),
        );
        objects.push(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": claim, "labels": labels, "annotations": annotations,
                "creationTimestamp": LAUNCHED},
            "spec": {"nodeClassRef": class_ref, "requirements": []}, "status": status}));
        let mut facts = serde_json::Map::new();
        if let Some(s) = c.subnet {
            facts.insert("kubectl-karpenter.io/subnet-id".into(), json!(s));
        }
        if let Some(g) = c.groups {
            facts.insert("kubectl-karpenter.io/security-group-ids".into(), json!(g));
        }
        objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": labels, "annotations": facts,
                "creationTimestamp": LAUNCHED},
            "spec": {"providerID": provider},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    let report = check(&format!("upstream-drift-{batch}.yaml"), &docs(&objects));
    let mut wrong = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let name = format!("n{i}");
        let Some(n) = report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
        else {
            if c.expect.is_some() {
                wrong.push(format!(
                    "{}: want {:?}, node not in the report",
                    c.it, c.expect
                ));
            }
            continue;
        };
        let got = (n["drifted"] == true).then(|| n["reason"].as_str().unwrap_or("?").to_string());
        if got.as_deref() != c.expect {
            wrong.push(format!(
                "{}: want {:?}, got {got:?} ({} {})",
                c.it, c.expect, n["detail"], n["notChecked"]
            ));
        }
    }
    wrong
}

pub(crate) fn assert_all(batch: &str, cases: &[Case]) {
    let wrong = run(batch, cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn req(key: &str, op: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": op, "values": values})
}

const CT: &str = "karpenter.sh/capacity-type";
const ARCH: &str = "kubernetes.io/arch";
const OS: &str = "kubernetes.io/os";

/// core v1.14.1 `nodeclaim/disruption/drift_test.go`: the Its at the top, "NodeRequirement
/// Drift" (8 Entries and one It), "NodePool Static Drift" (7 Entries, 4 Its).
#[test]
fn core_drift_test_its_through_the_binary() {
    let od = |extra: Vec<Value>| {
        let mut r = vec![req(CT, "In", &["on-demand"])];
        r.extend(extra);
        json!(r)
    };
    let mut cases = vec![
        case("should detect drift (cloud provider drift: the AMI)", Some("AMIDrift"))
            .with(|c| c.image = Some("ami-0old")),
        case(
            "should ignore drift for NodeClaims not managed by this instance of Karpenter",
            None,
        )
        .with(|c| {
            c.image = Some("ami-0old");
            c.claim_class_ref = Some(json!({"group": "karpenter.test.sh",
                "kind": "UnmanagedNodeClass", "name": "default"}));
        }),
        case(
            "should detect stale instance type drift if the instance type label doesn't exist",
            Some("InstanceTypeNotFound"),
        )
        .with(|c| c.labels["node.kubernetes.io/instance-type"] = Value::Null),
        case(
            "should detect stale instance type drift if the instance type doesn't exist",
            Some("InstanceTypeNotFound"),
        )
        .with(|c| c.labels["node.kubernetes.io/instance-type"] = json!("x9.gone")),
        case(
            "should detect stale instance type drift if the instance type offerings aren't compatible with the nodeclaim",
            Some("InstanceTypeNotFound"),
        )
        .with(|c| c.labels["topology.kubernetes.io/zone"] = json!("zone-9")),
        case(
            "should detect static drift before cloud provider drift",
            Some("NodePoolDrifted"),
        )
        .pool_edit(json!({"expireAfter": "100m"}))
        .with(|c| c.image = Some("ami-0old")),
        case(
            "should detect node requirement drift before cloud provider drift",
            Some("RequirementsDrifted"),
        )
        .pool_edit(json!({"requirements": [req(CT, "In", &["spot"])]}))
        .with(|c| c.image = Some("ami-0old")),
        case(
            "should remove the status condition from the nodeClaim when the nodeClaim launch condition is unknown",
            None,
        )
        .with(|c| {
            c.image = Some("ami-0old");
            c.claim_conditions = json!([{"type": "Launched", "status": "Unknown"}]);
        }),
        case(
            "should remove the status condition from the nodeClaim when the nodeClaim launch condition is false",
            None,
        )
        .with(|c| {
            c.image = Some("ami-0old");
            c.claim_conditions = json!([{"type": "Launched", "status": "False"}]);
        }),
        case("should not detect drift if the nodePool does not exist", None).with(|c| {
            c.image = Some("ami-0old");
            c.pool_name = Some("gone");
        }),
        case(
            "should remove the status condition from the nodeClaim if the nodeClaim is no longer drifted",
            None,
        ),
    ];
    // NodeRequirement Drift: (launch requirements, now, claim labels, drifted).
    let linux = || req(OS, "In", &["linux"]);
    let requirement_entries = [
        (
            "should return drifted if the nodePool node requirement is updated",
            od(vec![req(ARCH, "In", &["amd64"]), linux()]),
            json!([req(CT, "In", &["spot"])]),
            json!({OS: "linux"}),
            true,
        ),
        (
            "should return drifted if a new node requirement is added",
            od(vec![linux()]),
            od(vec![linux(), req(ARCH, "In", &["arm64"])]),
            json!({OS: "linux"}),
            true,
        ),
        (
            "should return drifted if a node requirement is reduced",
            od(vec![req(OS, "In", &["linux", "windows"])]),
            od(vec![req(OS, "In", &["windows"])]),
            json!({OS: "linux"}),
            true,
        ),
        (
            "should not return drifted if a node requirement is expanded",
            od(vec![linux()]),
            od(vec![req(OS, "In", &["linux", "windows"])]),
            json!({OS: "linux"}),
            false,
        ),
        (
            "should not return drifted if a node requirement set to Exists",
            od(vec![linux()]),
            od(vec![req(OS, "Exists", &[])]),
            json!({OS: "linux"}),
            false,
        ),
        (
            "should return drifted if a node requirement set to DoesNotExists",
            od(vec![linux()]),
            od(vec![req(OS, "DoesNotExist", &[])]),
            json!({OS: "linux"}),
            true,
        ),
        (
            "should not return drifted if a nodeClaim is greater then node requirement",
            od(vec![req("test-label", "Gt", &["2"])]),
            od(vec![req("test-label", "Gt", &["10"])]),
            json!({"test-label": "5"}),
            true,
        ),
        (
            "should not return drifted if a nodeClaim is less then node requirement",
            od(vec![req("test-label", "Lt", &["5"])]),
            od(vec![req("test-label", "Lt", &["1"])]),
            json!({"test-label": "2"}),
            true,
        ),
    ];
    for (it, launch, now, labels, drifted) in requirement_entries {
        cases.push(
            case(it, drifted.then_some("RequirementsDrifted")).requirements(launch, now, labels),
        );
    }
    // "should return drifted only on NodeClaims that are drifted from an updated nodePool":
    // two NodeClaims, one on-demand, one spot; the pool narrowed to on-demand.
    let narrowed = od(vec![]);
    let both = json!([req(CT, "In", &["on-demand", "spot"])]);
    cases.push(
        case(
            "drifted only on the NodeClaims drifted (on-demand stays)",
            None,
        )
        .requirements(both.clone(), narrowed.clone(), json!({})),
    );
    cases.push(
        case(
            "drifted only on the NodeClaims drifted (spot drifts)",
            Some("RequirementsDrifted"),
        )
        .requirements(both, narrowed, json!({CT: "spot"})),
    );
    // NodePool Static Drift: each field edited after launch.
    let statics = [
        (
            "Annoations",
            json!({"metadata": {"annotations": {"keyAnnotationTest": "valueAnnotationTest"}}}),
        ),
        (
            "Labels",
            json!({"metadata": {"labels": {"keyLabelTest": "valueLabelTest"}}}),
        ),
        (
            "Taints",
            json!({"spec": {"taints": [{"key": "keytest2taint", "effect": "NoExecute"}]}}),
        ),
        (
            "StartupTaints",
            json!({"spec": {"startupTaints": [{"key": "keytest2taint", "effect": "NoExecute"}]}}),
        ),
        (
            "NodeClassRef Name",
            json!({"spec": {"nodeClassRef": {"name": "testName"}}}),
        ),
        ("ExpireAfter", json!({"spec": {"expireAfter": "100m"}})),
        (
            "TerminationGracePeriod",
            json!({"spec": {"terminationGracePeriod": "100m"}}),
        ),
    ];
    for (entry, patch) in statics {
        let mut c = case(entry, Some("NodePoolDrifted"));
        let (meta, spec) = (patch.get("metadata"), patch.get("spec"));
        if let Some(spec) = spec {
            c = c.pool_edit(spec.clone());
        }
        if let Some(meta) = meta {
            c.with_meta = Some(meta.clone());
        }
        cases.push(c);
    }
    cases.extend([
        // The NodePool's own annotation is not read: its hash is computed (docs/drift.md).
        case(
            "should not return drifted if karpenter.sh/nodepool-hash annotation is not present on the NodePool",
            None,
        ),
        case(
            "should not return drifted if karpenter.sh/nodepool-hash annotation is not present on the NodeClaim",
            None,
        )
        .pool_edit(json!({"expireAfter": "100m"}))
        .with(|c| {
            c.claim_annotations = Some(json!({"karpenter.sh/nodepool-hash-version": "v3"}));
        }),
        case(
            "should not return drifted if the NodeClaim's karpenter.sh/nodepool-hash-version annotation does not match the NodePool's",
            None,
        )
        .with(|c| {
            c.pool_annotations = json!({"karpenter.sh/nodepool-hash": "test-hash-1",
                "karpenter.sh/nodepool-hash-version": "test-version-1"});
            c.claim_annotations = Some(json!({"karpenter.sh/nodepool-hash": "test-hash-2",
                "karpenter.sh/nodepool-hash-version": "test-version-2"}));
        }),
        case(
            "should not return drifted if karpenter.sh/nodepool-hash-version annotation is not present on the NodeClaim",
            None,
        )
        .pool_edit(json!({"expireAfter": "100m"}))
        .with(|c| {
            c.claim_annotations = Some(json!({"karpenter.sh/nodepool-hash": "test-hash-2"}));
        }),
    ]);
    // Reserved Capacity, "InstanceTypeNotFound": a reserved NodeClaim (no reservation id here:
    // the provider's reservation check is aws's, below) fits an on-demand offering of its type.
    let reserved = |it: &'static str, drifted: bool, instance_type: &str, zone: &str| {
        let all = json!([req(CT, "In", &["on-demand", "spot", "reserved"])]);
        case(it, drifted.then_some("InstanceTypeNotFound"))
            .requirements(all.clone(), all, json!({CT: "reserved"}))
            .with(|c| {
                c.labels["node.kubernetes.io/instance-type"] = json!(instance_type);
                c.labels["topology.kubernetes.io/zone"] = json!(zone);
            })
    };
    cases.extend([
        reserved(
            "shouldn't drift when a matching instance type exists with on-demand offerings",
            false,
            "c6a.large",
            "zone-1",
        ),
        reserved(
            "should drift when a matching instance type exists but the only offering is spot",
            true,
            "r5.large",
            "zone-1",
        ),
        reserved(
            "should drift when a matching instance type exists but there are no compatible offerings",
            true,
            "c6a.large",
            "zone-9",
        ),
    ]);
    assert_all("core", &cases);
}

/// aws v1.14.1 `pkg/cloudprovider/suite_test.go` "NodeClaim Drift": the dynamic Its (AMI,
/// subnet, security groups, their errors), "Static Drift Detection" (every statically hashed
/// field of `ec2nodeclass_hash_test.go`, volumeSize, the dynamic selector fields, the hash
/// annotations).
#[test]
fn aws_nodeclaim_drift_its_through_the_binary() {
    let mut cases = vec![
        case("should not fail if NodeClass does not exist", None).with(|c| c.no_class = true),
        case("should not fail if NodePool does not exist", None)
            .with(|c| c.pool_name = Some("gone")),
        case("should return drifted if the AMI is not valid", Some("AMIDrift"))
            .with(|c| c.image = Some("ami-0invalid")),
        case("should return drifted if there are multiple drift reasons", Some("AMIDrift")).with(
            |c| {
                c.image = Some("ami-0invalid");
                c.subnet = Some("subnet-invalid");
                c.groups = Some("sg-invalid");
            },
        ),
        case("should return drifted if the subnet is not valid", Some("SubnetDrift"))
            .with(|c| c.subnet = Some("subnet-invalid")),
        case("should return an error if subnets are empty", None)
            .with(|c| c.class_status["subnets"] = json!([])),
        case("should not return drifted if the NodeClaim is valid", None),
        case("should return an error if the security groups are empty", None)
            .with(|c| c.class_status["securityGroups"] = json!([])),
        case(
            "should return drifted if the instance security groups doesn't match the discovered values",
            Some("SecurityGroupDrift"),
        )
        .with(|c| c.groups = Some("sg-invalid")),
        case(
            "should return drifted if there are more instance security groups present than in the discovered values",
            Some("SecurityGroupDrift"),
        )
        .with(|c| c.groups = Some("sg-1,sg-extra")),
        case(
            "should return drifted if more security groups are present than instance security groups then discovered from nodeclass",
            Some("SecurityGroupDrift"),
        )
        .with(|c| {
            c.class_status["securityGroups"] = json!([{"id": "sg-1"}, {"id": "sg-2"}]);
            c.class["securityGroupSelectorTerms"] = json!([{"id": "sg-1"}, {"id": "sg-2"}]);
            c.launch_class["securityGroupSelectorTerms"] = json!([{"id": "sg-1"}, {"id": "sg-2"}]);
        }),
        case("should not return drifted if the security groups match", None),
        case("should error if the NodeClaim doesn't have ImageID", None).with(|c| c.image = None),
        case(
            "should return drifted if the AMI no longer matches the existing NodeClaims instance type",
            Some("AMIDrift"),
        )
        .with(|c| {
            c.class_status["amis"] = json!([{"id": ARM_AMI, "name": "arm", "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}]);
        }),
    ];
    let statics = [
        ("UserData", json!({"userData": "userdata-test-2"})),
        (
            "Tags",
            json!({"tags": {"keyTag-test-3": "valueTag-test-3"}}),
        ),
        ("Context", json!({"context": "context-2"})),
        ("DetailedMonitoring", json!({"detailedMonitoring": true})),
        (
            "InstanceStorePolicy",
            json!({"instanceStorePolicy": "RAID0"}),
        ),
        (
            "AssociatePublicIPAddress",
            json!({"associatePublicIPAddress": true}),
        ),
        (
            "MetadataOptions HTTPEndpoint",
            json!({"metadataOptions": {"httpEndpoint": "enabled"}}),
        ),
        (
            "MetadataOptions HTTPProtocolIPv6",
            json!({"metadataOptions": {"httpProtocolIPv6": "enabled"}}),
        ),
        (
            "MetadataOptions HTTPPutResponseHopLimit",
            json!({"metadataOptions": {"httpPutResponseHopLimit": 10}}),
        ),
        (
            "MetadataOptions HTTPTokens",
            json!({"metadataOptions": {"httpTokens": "required"}}),
        ),
    ];
    for (entry, patch) in statics {
        cases.push(case(entry, Some("NodeClassDrift")).class_edit(patch));
    }
    let device = |patch: Value| {
        let mut d = base_class()["blockDeviceMappings"][0].clone();
        merge(&mut d, &patch);
        json!({"blockDeviceMappings": [d]})
    };
    let devices = [
        (
            "BlockDeviceMapping DeviceName",
            json!({"deviceName": "map-device-test-3"}),
        ),
        ("BlockDeviceMapping RootVolume", json!({"rootVolume": true})),
        (
            "BlockDeviceMapping DeleteOnTermination",
            json!({"ebs": {"deleteOnTermination": true}}),
        ),
        (
            "BlockDeviceMapping Encrypted",
            json!({"ebs": {"encrypted": true}}),
        ),
        ("BlockDeviceMapping IOPS", json!({"ebs": {"iops": 10}})),
        (
            "BlockDeviceMapping KMSKeyID",
            json!({"ebs": {"kmsKeyID": "test"}}),
        ),
        (
            "BlockDeviceMapping SnapshotID",
            json!({"ebs": {"snapshotID": "test"}}),
        ),
        (
            "BlockDeviceMapping Throughput",
            json!({"ebs": {"throughput": 10}}),
        ),
        (
            "BlockDeviceMapping VolumeType",
            json!({"ebs": {"volumeType": "io1"}}),
        ),
        (
            "should return drifted when updating blockDeviceMapping volumeSize",
            json!({"ebs": {"volumeSize": "10G"}}),
        ),
    ];
    for (entry, patch) in devices {
        cases.push(case(entry, Some("NodeClassDrift")).class_edit(device(patch)));
    }
    cases.extend([
        case("should not return drifted if dynamic fields are updated: AMI Drift", None).class_edit(
            json!({"amiSelectorTerms": [{"tags": {"ami-key-1": "ami-value-1"}}]}),
        ),
        case("should not return drifted if dynamic fields are updated: Subnet Drift", None)
            .class_edit(json!({"subnetSelectorTerms": [{"tags": {"sn-key-1": "sn-value-1"}}]})),
        case("should not return drifted if dynamic fields are updated: SecurityGroup Drift", None)
            .class_edit(json!({"securityGroupSelectorTerms": [{"tags": {"sg-key": "sg-value"}}]})),
        case(
            "should not return drifted if karpenter.k8s.aws/ec2nodeclass-hash annotation is not present on the NodeClaim",
            None,
        )
        .class_edit(json!({"tags": {"Test Key": "Test Value"}}))
        .with(|c| {
            c.claim_annotations =
                Some(json!({"karpenter.k8s.aws/ec2nodeclass-hash-version": "v4"}));
        }),
        case(
            "should not return drifted if the NodeClaim's karpenter.k8s.aws/ec2nodeclass-hash-version annotation does not match the EC2NodeClass's",
            None,
        )
        .with(|c| {
            c.class_annotations = json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-111111",
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "test-hash-version-1"});
            c.claim_annotations = Some(json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-222222",
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "test-hash-version-2"}));
        }),
        case(
            "should not return drifted if karpenter.k8s.aws/ec2nodeclass-hash-version annotation is not present on the NodeClass",
            None,
        )
        .class_edit(json!({"tags": {"Test Key": "Test Value"}}))
        .with(|c| {
            c.class_annotations = json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-111111"});
            c.claim_annotations = Some(json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-222222",
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "test-hash-version-2"}));
        }),
        case(
            "should not return drifted if karpenter.k8s.aws/ec2nodeclass-hash-version annotation is not present on the NodeClaim",
            None,
        )
        .class_edit(json!({"tags": {"Test Key": "Test Value"}}))
        .with(|c| {
            c.class_annotations = json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-111111",
                "karpenter.k8s.aws/ec2nodeclass-hash-version": "test-hash-version-1"});
            c.claim_annotations = Some(json!({"karpenter.k8s.aws/ec2nodeclass-hash": "test-hash-222222"}));
        }),
    ]);
    assert_all("aws", &cases);
}
