//! Karpenter's own end-to-end suites, provisioning side, as offline scenarios (aws v1.14.1
//! `test/suites/scheduling/scheduling.go`, `test/suites/storage/suite_test.go`,
//! `test/suites/integration/{extended_resources,kubelet_config}_test.go`).
//!
//! Each upstream It creates the suite's default NodePool and EC2NodeClass
//! (`test/pkg/environment/common/environment.go` `DefaultNodePool`,
//! `test/pkg/environment/aws/environment.go` `DefaultEC2NodeClass`), a workload, and then checks
//! the launched node. Here the same objects go through the path `provision --dry-run -f … -o
//! json` takes (load, check references, size the catalog, solve, the JSON document) and the
//! checks are made on the planned NodeClaims. The ledger is `docs/upstream-tests.md` § "Karpenter's
//! e2e suites, provisioning (s16-e2e-sched)".

use serde_json::Value;

use crate::cli::render;
use crate::cloud::Catalog;
use crate::scheduling::{self, MinValuesPolicy};
use crate::usecases::provisioning::input::{build_input, CatalogSizing};
use crate::usecases::provisioning::Selection;

/// `DefaultNodePool`'s requirements, one flow map each.
const DEFAULT_REQS: [&str; 5] = [
    "{key: kubernetes.io/os, operator: In, values: [linux]}",
    "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
    "{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}",
    "{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: [\"4\"]}",
    "{key: karpenter.k8s.aws/instance-family, operator: NotIn, values: [a1]}",
];

/// The key of a requirement flow map.
fn key_of(req: &str) -> &str {
    req.trim_start_matches("{key: ")
        .split(',')
        .next()
        .unwrap_or_default()
}

/// `test.ReplaceRequirements`: the default requirements with those of `new`'s keys replaced
/// and the others appended.
fn requirements(new: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = DEFAULT_REQS
        .iter()
        .filter(|r| new.iter().all(|n| key_of(n) != key_of(r)))
        .map(|r| r.to_string())
        .collect();
    out.extend(new.iter().map(|r| r.to_string()));
    out
}

/// The scheduling suite's `BeforeEach`: category and generation `Exists`, plus `new`.
fn scheduling_requirements(new: &[&str]) -> Vec<String> {
    let mut all = vec![
        "{key: karpenter.k8s.aws/instance-category, operator: Exists}",
        "{key: karpenter.k8s.aws/instance-generation, operator: Exists}",
    ];
    all.extend_from_slice(new);
    requirements(&all)
}

/// A NodePool `name` on the class `default` with `reqs`; `template_meta` and `template_spec`
/// are extra lines under the template's `metadata` / `spec` (each indented as written).
fn pool(name: &str, reqs: &[String], template_meta: &str, template_spec: &str) -> String {
    let reqs: String = reqs.iter().map(|r| format!("      - {r}\n")).collect();
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  disruption: {{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never}}\n  limits: {{cpu: \"1000\", memory: 1000Gi}}\n  template:\n    metadata: {{{template_meta}}}\n    spec:\n      expireAfter: Never\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n{template_spec}      requirements:\n{reqs}"
    )
}

/// `DefaultEC2NodeClass` with `alias`, extra `spec` lines (two spaces) and a `status` block.
fn class(alias: &str, spec: &str, status: &str) -> String {
    format!(
        "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: default}}\nspec:\n  role: KarpenterNodeRole-test\n  amiSelectorTerms: [{{alias: \"{alias}\"}}]\n  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: test}}}}]\n  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: test}}}}]\n  tags: {{testing/cluster: test}}\n{spec}{status}"
    )
}

/// The default class (AL2023).
fn default_class() -> String {
    class("al2023@latest", "", "")
}

/// A pending pod `name` of 100m cpu with extra `spec` lines (two spaces).
fn pod(name: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{app: {name}}}}}\nspec:\n{spec}  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\n"
    )
}

/// A pending pod with labels `labels` (a flow map's inside), extra `spec` lines and `resources`
/// (a flow map) on its container.
fn pod_with(name: &str, labels: &str, spec: &str, resources: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, labels: {{{labels}}}}}\nspec:\n{spec}  containers: [{{name: c, image: i, resources: {resources}}}]\n"
    )
}

/// A Deployment `name` of `replicas` pods (label `app: name`) with extra pod `spec` lines (six
/// spaces) and container `resources`.
fn deployment(name: &str, replicas: u32, spec: &str, resources: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n{spec}      containers: [{{name: c, image: i, resources: {resources}}}]\n"
    )
}

/// A pod spec's `nodeSelector`, required and preferred node affinity all on `pairs` (the upstream
/// `NodeSelector` + `NodeRequirements` + `NodePreferences` of one map).
fn everywhere(pairs: &[(&str, &str)], indent: &str) -> String {
    let selector: String = pairs
        .iter()
        .map(|(k, v)| format!("{k}: \"{v}\", "))
        .collect();
    let exprs: String = pairs
        .iter()
        .map(|(k, v)| format!("{{key: {k}, operator: In, values: [\"{v}\"]}}, "))
        .collect();
    format!(
        "{indent}nodeSelector: {{{selector}}}\n{indent}affinity:\n{indent}  nodeAffinity:\n{indent}    requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{exprs}]}}]}}\n{indent}    preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{exprs}]}}}}]\n"
    )
}

/// A pod spec's required node affinity on `exprs` (flow maps).
fn required(exprs: &[&str], indent: &str) -> String {
    format!(
        "{indent}affinity:\n{indent}  nodeAffinity:\n{indent}    requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{}]}}]}}\n",
        exprs.join(", ")
    )
}

/// The `-o json` document of `provision --dry-run` for `text`, with `catalog` (custom catalog
/// YAML) or the embedded one, in us-east-1.
fn plan_with(text: &str, catalog: Option<&str>) -> Value {
    plan_with_policy(text, catalog, MinValuesPolicy::Strict)
}

/// [`plan_with`] under the controller option `MinValuesPolicy` (`--min-values-policy`).
fn plan_with_policy(text: &str, catalog: Option<&str>, policy: MinValuesPolicy) -> Value {
    let mut manifests =
        crate::api::load_str("suite.yaml", text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    manifests.check_references().unwrap();
    let catalog = match catalog {
        Some(c) => Catalog::from_custom_text("catalog.yaml", c).unwrap(),
        None => Catalog::embedded().unwrap(),
    };
    let selection = Selection {
        max_instance_types: 600,
        min_values_policy: policy,
        ..Selection::default()
    };
    let input = build_input(
        &mut manifests,
        &selection,
        &mut CatalogSizing::new(&catalog, "us-east-1"),
    )
    .unwrap();
    let plan = scheduling::solve_rounds(&input);
    serde_json::to_value(render::plan::plan_document(&plan, "us-east-1")).unwrap()
}

fn plan(text: &str) -> Value {
    plan_with(text, None)
}

fn claims(plan: &Value) -> &Vec<Value> {
    plan["nodeClaims"].as_array().unwrap()
}

fn pending(plan: &Value) -> Vec<(String, String)> {
    plan["unschedulable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["pod"].as_str().unwrap().to_string(),
                u["reasonCode"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The single NodeClaim of a plan that placed every pod.
fn only_claim(plan: &Value) -> &Value {
    assert!(pending(plan).is_empty(), "{plan:#}");
    let all = claims(plan);
    assert_eq!(all.len(), 1, "{plan:#}");
    &all[0]
}

fn label<'a>(claim: &'a Value, key: &str) -> &'a str {
    claim["labels"][key]
        .as_str()
        .unwrap_or_else(|| panic!("no label {key}: {claim:#}"))
}

/// The values of the NodeClaim's requirement on `key` (empty without one).
fn req_values(claim: &Value, key: &str) -> Vec<String> {
    claim["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .map(|r| {
            r["values"]
                .as_array()
                .map(|v| v.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

fn scheduling_pool(new: &[&str]) -> String {
    pool("default", &scheduling_requirements(new), "", "")
}

/// scheduling.go "should apply annotations to the node": the template's annotations are on the
/// NodeClaim (and so on the node), with the hash and, as the v1.14.1 scheduler writes on every
/// NodeClaim it creates (`scheduler.go` `add`), `karpenter.sh/nodeclaim-min-values-relaxed:
/// "false"` under the default `MinValuesPolicy` Strict.
#[test]
fn scheduling_annotations_reach_the_node() {
    let p = pool(
        "default",
        &scheduling_requirements(&[]),
        "annotations: {foo: bar, karpenter.sh/do-not-disrupt: \"true\"}",
        "",
    );
    let plan = plan(&format!("{p}{}{}", default_class(), pod("p", "")));
    let a = &only_claim(&plan)["annotations"];
    assert_eq!(a["foo"], "bar");
    assert_eq!(a["karpenter.sh/do-not-disrupt"], "true");
    assert_eq!(a["karpenter.sh/nodeclaim-min-values-relaxed"], "false");
    assert_eq!(a["karpenter.sh/nodepool-hash-version"], "v3");
}

/// scheduling.go Context "Labels": "should support well-known labels for instance type
/// selection", "… for topology and architecture", "… well-known deprecated labels", "… for a gpu
/// (nvidia)", "… for an accelerator (inferentia2)", "… for capacity tenancy" — each a Deployment of
/// one pod whose nodeSelector, required and preferred affinity all name the labels; one node
/// with those labels.
#[test]
fn scheduling_well_known_labels_select_the_instance_type() {
    let cases: [(&str, Vec<(&str, &str)>); 6] = [
        (
            "instance type",
            vec![
                ("karpenter.sh/nodepool", "default"),
                ("node.kubernetes.io/instance-type", "c5.large"),
                ("karpenter.k8s.aws/instance-hypervisor", "nitro"),
                ("karpenter.k8s.aws/instance-category", "c"),
                ("karpenter.k8s.aws/instance-generation", "5"),
                ("karpenter.k8s.aws/instance-family", "c5"),
                ("karpenter.k8s.aws/instance-size", "large"),
                ("karpenter.k8s.aws/instance-cpu", "2"),
                ("karpenter.k8s.aws/instance-cpu-manufacturer", "intel"),
                (
                    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
                    "3400",
                ),
                ("karpenter.k8s.aws/instance-memory", "4096"),
                ("karpenter.k8s.aws/instance-ebs-bandwidth", "4750"),
                ("karpenter.k8s.aws/instance-network-bandwidth", "750"),
            ],
        ),
        (
            "topology and architecture",
            vec![
                ("karpenter.sh/nodepool", "default"),
                ("topology.kubernetes.io/region", "us-east-1"),
                ("topology.kubernetes.io/zone", "us-east-1a"),
                ("kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "amd64"),
                ("karpenter.sh/capacity-type", "on-demand"),
            ],
        ),
        (
            "deprecated labels",
            vec![
                ("failure-domain.beta.kubernetes.io/region", "us-east-1"),
                ("failure-domain.beta.kubernetes.io/zone", "us-east-1a"),
                ("topology.ebs.csi.aws.com/zone", "us-east-1a"),
                ("beta.kubernetes.io/arch", "amd64"),
                ("beta.kubernetes.io/os", "linux"),
                ("beta.kubernetes.io/instance-type", "c5.large"),
            ],
        ),
        (
            "gpu (nvidia)",
            vec![
                ("karpenter.k8s.aws/instance-gpu-name", "t4"),
                ("karpenter.k8s.aws/instance-gpu-memory", "16384"),
                ("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
                ("karpenter.k8s.aws/instance-gpu-count", "1"),
            ],
        ),
        (
            "accelerator (inferentia)",
            vec![
                ("karpenter.k8s.aws/instance-accelerator-name", "inferentia"),
                ("karpenter.k8s.aws/instance-accelerator-manufacturer", "aws"),
                ("karpenter.k8s.aws/instance-accelerator-count", "1"),
            ],
        ),
        (
            "capacity tenancy",
            vec![("karpenter.k8s.aws/instance-tenancy", "dedicated")],
        ),
    ];
    for (what, pairs) in cases {
        let d = deployment("d", 1, &everywhere(&pairs, "      "), "{}");
        let plan = plan(&format!("{}{}{d}", scheduling_pool(&[]), default_class()));
        let claim = only_claim(&plan);
        for (k, v) in &pairs {
            // The deprecated keys are not labels Karpenter writes (the kubelet and the CSI
            // driver do); their stable counterparts are.
            let key = match *k {
                "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
                "failure-domain.beta.kubernetes.io/zone" | "topology.ebs.csi.aws.com/zone" => {
                    "topology.kubernetes.io/zone"
                }
                "beta.kubernetes.io/arch" => "kubernetes.io/arch",
                "beta.kubernetes.io/os" => "kubernetes.io/os",
                "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
                k => k,
            };
            assert_eq!(label(claim, key), *v, "{what}: {claim:#}");
        }
    }
}

/// scheduling.go "should support well-known labels for local NVME storage" and "… for
/// encryption in transit": `instance-local-nvme Gt 0` / `instance-encryption-in-transit-supported
/// In [true]` (required and preferred) land on a type that has them.
#[test]
fn scheduling_nvme_and_encryption_in_transit_labels() {
    for (expr, key) in [
        (
            "{key: karpenter.k8s.aws/instance-local-nvme, operator: Gt, values: [\"0\"]}",
            "karpenter.k8s.aws/instance-local-nvme",
        ),
        (
            "{key: karpenter.k8s.aws/instance-encryption-in-transit-supported, operator: In, values: [\"true\"]}",
            "karpenter.k8s.aws/instance-encryption-in-transit-supported",
        ),
    ] {
        let spec = format!(
            "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{expr}]}}]}}\n          preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 1, preference: {{matchExpressions: [{expr}]}}}}]\n"
        );
        let d = deployment("d", 1, &spec, "{}");
        let plan = plan(&format!("{}{}{d}", scheduling_pool(&[]), default_class()));
        let value = label(only_claim(&plan), key);
        if key.ends_with("nvme") {
            assert!(value.parse::<u64>().unwrap() > 0, "{value}");
        } else {
            assert_eq!(value, "true");
        }
    }
}

/// The three subnets (zone ↔ zone id) the zone-id Its read from `Env.GetSubnetInfo`, as the
/// class's status carries them.
const SUBNETS: &str = "status:\n  subnets:\n  - {id: subnet-a, zone: us-east-1a, zoneID: use1-az6}\n  - {id: subnet-b, zone: us-east-1b, zoneID: use1-az1}\n  - {id: subnet-c, zone: us-east-1c, zoneID: use1-az2}\n";

/// scheduling.go "should support well-known labels for zone id selection", "should provision a
/// node for a pod with overlapping zone and zone-id requirements" (zones a, b and ids of b, c:
/// only b satisfies both) and "should provision nodes for pods with zone-id requirements in the
/// correct zone" (a pool requirement `expected-zone-label Exists`, each pod In its zone and its
/// zone's id).
#[test]
fn scheduling_zone_ids_select_their_zones() {
    let class = class("al2023@latest", "", SUBNETS);
    let by_id = pod(
        "p",
        &required(
            &["{key: topology.k8s.aws/zone-id, operator: In, values: [use1-az6]}"],
            "  ",
        ),
    );
    let plan1 = plan(&format!("{}{class}{by_id}", scheduling_pool(&[])));
    let claim = only_claim(&plan1);
    assert_eq!(claim["zone"], "us-east-1a");
    assert_eq!(label(claim, "topology.k8s.aws/zone-id"), "use1-az6");

    let overlap = pod(
        "p",
        &required(
            &[
                "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}",
                "{key: topology.k8s.aws/zone-id, operator: In, values: [use1-az1, use1-az2]}",
            ],
            "  ",
        ),
    );
    let plan2 = plan(&format!("{}{class}{overlap}", scheduling_pool(&[])));
    let claim = only_claim(&plan2);
    assert_eq!(label(claim, "topology.kubernetes.io/zone"), "us-east-1b");
    assert_eq!(label(claim, "topology.k8s.aws/zone-id"), "use1-az1");

    let zones = [
        ("us-east-1a", "use1-az6"),
        ("us-east-1b", "use1-az1"),
        ("us-east-1c", "use1-az2"),
    ];
    let pods: String = zones
        .iter()
        .map(|(zone, id)| {
            let exprs = [
                format!("{{key: expected-zone-label, operator: In, values: [{zone}]}}"),
                format!("{{key: topology.k8s.aws/zone-id, operator: In, values: [{id}]}}"),
            ];
            let exprs: Vec<&str> = exprs.iter().map(String::as_str).collect();
            pod(&format!("p-{zone}"), &required(&exprs, "  "))
        })
        .collect();
    let p = scheduling_pool(&["{key: expected-zone-label, operator: Exists}"]);
    let plan3 = plan(&format!("{p}{class}{pods}"));
    assert!(pending(&plan3).is_empty(), "{plan3:#}");
    assert_eq!(claims(&plan3).len(), 3);
    for claim in claims(&plan3) {
        let expected = label(claim, "expected-zone-label");
        assert_eq!(label(claim, "topology.kubernetes.io/zone"), expected);
        let id = zones.iter().find(|(z, _)| *z == expected).unwrap().1;
        assert_eq!(label(claim, "topology.k8s.aws/zone-id"), id);
    }
}

/// scheduling.go "should support well-known labels for windows-build version": a Windows 2022
/// class, the pool's `kubernetes.io/os In [windows]`, a pod selecting the build and the OS.
#[test]
fn scheduling_windows_build_label() {
    let p = pool(
        "default",
        &scheduling_requirements(&["{key: kubernetes.io/os, operator: In, values: [windows]}"]),
        "",
        "",
    );
    let d = deployment(
        "d",
        1,
        &everywhere(
            &[
                ("node.kubernetes.io/windows-build", "10.0.20348"),
                ("kubernetes.io/os", "windows"),
            ],
            "      ",
        ),
        "{}",
    );
    let plan = plan(&format!("{p}{}{d}", class("windows2022@latest", "", "")));
    let claim = only_claim(&plan);
    assert_eq!(label(claim, "kubernetes.io/os"), "windows");
    assert_eq!(
        label(claim, "node.kubernetes.io/windows-build"),
        "10.0.20348"
    );
}

/// scheduling.go DescribeTable "should support restricted label domain exceptions" (3 Entries:
/// node-restriction.kuberentes.io, node.kubernetes.io, kops.k8s.io): the pool allows
/// `<domain>/team`, `<domain>/custom-label`, `subdomain.<domain>/custom-label` (Exists); the
/// pod's values become the node's labels.
#[test]
fn scheduling_restricted_label_domain_exceptions() {
    for domain in [
        "node-restriction.kuberentes.io",
        "node.kubernetes.io",
        "kops.k8s.io",
    ] {
        let keys = [
            format!("{domain}/team"),
            format!("{domain}/custom-label"),
            format!("subdomain.{domain}/custom-label"),
        ];
        let exists: Vec<String> = keys
            .iter()
            .map(|k| format!("{{key: {k}, operator: Exists}}"))
            .collect();
        let exists: Vec<&str> = exists.iter().map(String::as_str).collect();
        let pairs = [
            (keys[0].as_str(), "team-1"),
            (keys[1].as_str(), "custom-value"),
            (keys[2].as_str(), "custom-value"),
        ];
        let d = deployment("d", 1, &everywhere(&pairs, "      "), "{}");
        let plan = plan(&format!(
            "{}{}{d}",
            scheduling_pool(&exists),
            default_class()
        ));
        let claim = only_claim(&plan);
        for (k, v) in pairs {
            assert_eq!(label(claim, k), v, "{domain}: {claim:#}");
        }
    }
}

/// scheduling.go Context "Provisioning": "should provision a node for naked pods", "… for a
/// deployment" (50 replicas: at most 2 nodes), "… for a self-affinity deployment" (2 replicas,
/// hostname affinity: 1 node), "should provision three nodes for a zonal topology spread"
/// (`minDomains: 3`: 3 nodes in 3 zones).
#[test]
fn scheduling_provisioning_workloads() {
    let base = format!("{}{}", scheduling_pool(&[]), default_class());
    let naked = plan(&format!("{base}{}", pod("p", "")));
    only_claim(&naked);

    let fifty = plan(&format!(
        "{base}{}",
        deployment("d", 50, "", "{requests: {cpu: 100m}}")
    ));
    assert!(pending(&fifty).is_empty());
    assert!(claims(&fifty).len() <= 2, "{fifty:#}");

    let affinity = "      affinity:\n        podAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: d}}, topologyKey: kubernetes.io/hostname}]\n";
    let together = plan(&format!(
        "{base}{}",
        deployment("d", 2, affinity, "{requests: {cpu: 100m}}")
    ));
    assert_eq!(only_claim(&together)["pods"].as_array().unwrap().len(), 2);

    let spread = "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: d}}, minDomains: 3}]\n";
    let zonal = plan(&format!(
        "{base}{}",
        deployment("d", 3, spread, "{requests: {cpu: 100m}}")
    ));
    assert!(pending(&zonal).is_empty());
    let mut zones: Vec<&str> = claims(&zonal)
        .iter()
        .map(|c| c["zone"].as_str().unwrap())
        .collect();
    zones.sort();
    zones.dedup();
    assert_eq!(zones.len(), 3, "{zonal:#}");
}

/// scheduling.go "should honor minValuesPolicy when provisioning a node", Strict (the
/// scheduling-strict suite; the controller's default): `instance-type In [c5.large, two unknown
/// types]` with `minValues: 3` filters out every type, so the pod stays pending and no NodeClaim
/// is made (upstream: the NodePool event "NodePool requirements filtered out all compatible
/// available instance types due to minValues incompatibility").
#[test]
fn scheduling_min_values_strict_leaves_the_pod_pending() {
    let p = scheduling_pool(&["{key: node.kubernetes.io/instance-type, operator: In, values: [c5.large, invalid-instance-type-1, invalid-instance-type-2], minValues: 3}"]);
    let plan = plan(&format!("{p}{}{}", default_class(), pod("p", "")));
    assert!(claims(&plan).is_empty(), "{plan:#}");
    assert_eq!(
        pending(&plan),
        [("default/p".to_string(), "MinValuesUnmet".to_string())]
    );
}

/// The same It in the scheduling-besteffort suite (`MIN_VALUES_POLICY=BestEffort`,
/// `--min-values-policy BestEffort` here): one NodeClaim, annotated
/// `karpenter.sh/nodeclaim-min-values-relaxed: "true"`, whose requirements hold
/// `instance-type In [c5.large]` with `minValues: 1`.
#[test]
fn scheduling_min_values_best_effort_relaxes_them() {
    let p = scheduling_pool(&["{key: node.kubernetes.io/instance-type, operator: In, values: [c5.large, invalid-instance-type-1, invalid-instance-type-2], minValues: 3}"]);
    let text = format!("{p}{}{}", default_class(), pod("p", ""));
    let plan = plan_with_policy(&text, None, MinValuesPolicy::BestEffort);
    let claim = only_claim(&plan);
    assert_eq!(
        claim["annotations"][crate::model::labels::NODECLAIM_MIN_VALUES_RELAXED],
        "true",
        "{claim:#}"
    );
    let it = claim["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "node.kubernetes.io/instance-type")
        .unwrap_or_else(|| panic!("{claim:#}"));
    assert_eq!(
        *it,
        serde_json::json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c5.large"], "minValues": 1})
    );
}

/// scheduling.go "should provision a node using a NodePool with higher priority": pools of
/// weight 10 (t3.nano) and 100 (c5.large); the heavier one launches c5.large.
#[test]
fn scheduling_the_heavier_pool_wins() {
    let weighted = |name: &str, weight: u32, it: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n      - {{key: kubernetes.io/os, operator: In, values: [linux]}}\n      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{it}]}}\n"
        )
    };
    let plan = plan(&format!(
        "{}{}{}{}",
        default_class(),
        weighted("low", 10, "t3.nano"),
        weighted("high", 100, "c5.large"),
        pod("p", "")
    ));
    let claim = only_claim(&plan);
    assert_eq!(claim["instanceType"], "c5.large");
    assert_eq!(label(claim, "karpenter.sh/nodepool"), "high");
}

/// scheduling.go "should provision a flex node for a pod": `instance-capability-flex In [true]`.
#[test]
fn scheduling_flex_capability() {
    let p = scheduling_pool(&[
        "{key: karpenter.k8s.aws/instance-capability-flex, operator: In, values: [\"true\"]}",
    ]);
    let plan = plan(&format!("{p}{}{}", default_class(), pod("p", "")));
    let claim = only_claim(&plan);
    assert!(
        label(claim, "node.kubernetes.io/instance-type").contains("flex"),
        "{claim:#}"
    );
}

/// scheduling.go DescribeTable "should provision a right-sized node when a pod has
/// InitContainers (cpu)" (3 Entries) and "… (mixed resources)": the pool allows 4 or 8 vCPUs (not
/// `t`); a 3-cpu buffer pod and the pod (400m, init containers and a restartable sidecar) share
/// a node by hostname affinity; the node's `instance-cpu` is what the pod's effective request
/// needs (no DaemonSets offline: the buffer is the full 3).
#[test]
fn scheduling_init_containers_size_the_node() {
    let p = scheduling_pool(&[
        "{key: karpenter.k8s.aws/instance-cpu, operator: In, values: [\"4\", \"8\"]}",
        "{key: karpenter.k8s.aws/instance-category, operator: NotIn, values: [t]}",
    ]);
    let init = |cpu: &str, sidecar: bool, i: usize| {
        let restart = if sidecar {
            ", restartPolicy: Always"
        } else {
            ""
        };
        format!("{{name: init{i}, image: i{restart}, resources: {{requests: {{cpu: {cpu}}}}}}}")
    };
    let entries: [(&str, [(&str, bool); 3]); 3] = [
        // sidecar requirements + later init requirements do exceed container requirements
        ("8", [("300m", false), ("350m", true), ("1", false)]),
        // sidecar requirements + later init requirements do not exceed container requirements
        ("4", [("300m", false), ("350m", true), ("300m", false)]),
        // init container requirements exceed all later requests
        ("8", [("100m", true), ("1500m", false), ("100m", true)]),
    ];
    let affinity = "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {test: sized}}, topologyKey: kubernetes.io/hostname}]\n";
    for (cpus, inits) in entries {
        let inits: Vec<String> = inits
            .iter()
            .enumerate()
            .map(|(i, (cpu, sidecar))| init(cpu, *sidecar, i))
            .collect();
        let buffer = pod_with(
            "buffer",
            "test: sized",
            affinity,
            "{requests: {cpu: \"3\"}}",
        );
        let sized = pod_with(
            "p",
            "test: sized",
            &format!("{affinity}  initContainers: [{}]\n", inits.join(", ")),
            "{requests: {cpu: 400m}}",
        );
        let plan = plan(&format!("{p}{}{buffer}{sized}", default_class()));
        let claim = only_claim(&plan);
        assert_eq!(label(claim, "karpenter.k8s.aws/instance-cpu"), cpus);
    }
    let mixed = scheduling_pool(&[
        "{key: karpenter.k8s.aws/instance-category, operator: NotIn, values: [t]}",
    ]);
    let p = pod_with(
        "p",
        "app: p",
        "  initContainers:\n  - {name: sidecar, image: i, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 128Mi}}}\n  - {name: init, image: i, resources: {requests: {cpu: 50m, memory: 4Gi}}}\n",
        "{requests: {cpu: 100m, memory: 128Mi}}",
    );
    let plan = plan(&format!("{mixed}{}{p}", default_class()));
    let claim = only_claim(&plan);
    let memory: u64 = label(claim, "karpenter.k8s.aws/instance-memory")
        .parse()
        .unwrap();
    assert!(memory > 4 * 1024, "{claim:#}");
}

/// The custom catalog of the capacity-reservation Its: m5.large and m5.xlarge with the
/// reservations the suite creates in the first zone.
fn reservations_catalog(offerings: [&str; 2]) -> String {
    format!(
        "instanceTypes:\n- name: m5.large\n  capacity: {{cpu: \"2\", memory: 8Gi, pods: \"29\"}}\n  offerings:\n  - {{zone: us-east-1a, capacityType: on-demand, price: 0.096, available: true}}\n{}- name: m5.xlarge\n  capacity: {{cpu: \"4\", memory: 16Gi, pods: \"58\"}}\n  offerings:\n  - {{zone: us-east-1a, capacityType: on-demand, price: 0.192, available: true}}\n{}",
        offerings[0], offerings[1]
    )
}

fn reserved(id: &str, count: u32, interruptible: bool) -> String {
    format!("  - {{zone: us-east-1a, capacityType: reserved, reservationId: {id}, count: {count}, instanceMatchCriteria: targeted, interruptible: {interruptible}}}\n")
}

/// The reservation Contexts' pool (on-demand or reserved, linux) and a class selecting `ids`.
fn reservation_setup(ids: &[&str]) -> String {
    let terms: Vec<String> = ids.iter().map(|id| format!("{{id: {id}}}")).collect();
    let p = pool(
        "default",
        &[
            "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, reserved]}"
                .to_string(),
            "{key: kubernetes.io/os, operator: In, values: [linux]}".to_string(),
        ],
        "",
        "",
    );
    let c = class(
        "al2023@latest",
        &format!(
            "  capacityReservationSelectorTerms: [{}]\n",
            terms.join(", ")
        ),
        "",
    );
    format!("{p}{c}")
}

const LARGE: &str = "cr-0000000000000000a";
const XLARGE: &str = "cr-0000000000000000b";

/// scheduling.go Context "Capacity Reservations": "should schedule against a specific reservation
/// ID" (the xlarge one: the NodeClaim's reservation-id requirement is it; the node is reserved,
/// type default), "should schedule against a specific reservation type" (default, m5.xlarge) and
/// "should fall back when compatible capacity reservations are exhausted" (two anti-affine
/// m5.large pods, one reservation of one: one reserved NodeClaim on it, one not).
#[test]
fn scheduling_capacity_reservations() {
    let catalog = reservations_catalog([&reserved(LARGE, 1, false), &reserved(XLARGE, 2, false)]);
    let setup = reservation_setup(&[LARGE, XLARGE]);
    let id = "karpenter.k8s.aws/capacity-reservation-id";
    let by_id = pod(
        "p",
        &required(
            &[&format!("{{key: {id}, operator: In, values: [{XLARGE}]}}")],
            "  ",
        ),
    );
    let plan1 = plan_with(&format!("{setup}{by_id}"), Some(&catalog));
    let claim = only_claim(&plan1);
    assert_eq!(req_values(claim, id), [XLARGE]);
    assert_eq!(label(claim, "karpenter.sh/capacity-type"), "reserved");
    assert_eq!(
        label(claim, "karpenter.k8s.aws/capacity-reservation-type"),
        "default"
    );
    assert_eq!(label(claim, id), XLARGE);

    let by_type = pod(
        "p",
        &required(
            &[
                "{key: karpenter.k8s.aws/capacity-reservation-type, operator: In, values: [default]}",
                "{key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}",
            ],
            "  ",
        ),
    );
    let plan2 = plan_with(&format!("{setup}{by_type}"), Some(&catalog));
    let claim = only_claim(&plan2);
    assert_eq!(
        req_values(claim, "karpenter.k8s.aws/capacity-reservation-type"),
        ["default"]
    );
    assert_eq!(label(claim, "karpenter.sh/capacity-type"), "reserved");
    assert_eq!(label(claim, id), XLARGE);

    let anti = "  nodeSelector: {node.kubernetes.io/instance-type: m5.large}\n  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {foo: bar}}}]\n";
    let pods = format!(
        "{}{}",
        pod_with("p0", "foo: bar", anti, "{requests: {cpu: 100m}}"),
        pod_with("p1", "foo: bar", anti, "{requests: {cpu: 100m}}")
    );
    let plan3 = plan_with(&format!("{setup}{pods}"), Some(&catalog));
    assert!(pending(&plan3).is_empty(), "{plan3:#}");
    assert_eq!(claims(&plan3).len(), 2);
    let reserved: Vec<Vec<String>> = claims(&plan3)
        .iter()
        .map(|c| req_values(c, id))
        .filter(|v| !v.is_empty())
        .collect();
    assert_eq!(reserved, [vec![LARGE.to_string()]], "{plan3:#}");
}

const SOURCE: &str = "cr-0000000000000000c";
const INTERRUPTIBLE: &str = "cr-0000000000000000d";
const XLARGE_2: &str = "cr-0000000000000000e";

/// scheduling.go Context "Interruptible Capacity Resverations": DescribeTable "should schedule
/// against a specific reservation interruptibiltiy" (2 Entries), "should prioritize ODCR over
/// IODCR if price is equal" (the NodeClaim holds both, launches into the source ODCR) and
/// "should prioritize reservation with lower price" (m5.large IODCR and m5.xlarge ODCR: holds
/// both, launches into the cheaper m5.large IODCR).
#[test]
fn scheduling_interruptible_capacity_reservations() {
    let id = "karpenter.k8s.aws/capacity-reservation-id";
    let interruptible = "karpenter.k8s.aws/capacity-reservation-interruptible";
    let both = format!(
        "{}{}",
        reserved(SOURCE, 1, false),
        reserved(INTERRUPTIBLE, 1, true)
    );
    let catalog = reservations_catalog([&both, &reserved(XLARGE_2, 1, false)]);
    let setup = reservation_setup(&[SOURCE, INTERRUPTIBLE]);
    for (value, want) in [("true", INTERRUPTIBLE), ("false", SOURCE)] {
        let p = pod(
            "p",
            &required(
                &[&format!(
                    "{{key: {interruptible}, operator: In, values: [\"{value}\"]}}"
                )],
                "  ",
            ),
        );
        let plan = plan_with(&format!("{setup}{p}"), Some(&catalog));
        let claim = only_claim(&plan);
        assert_eq!(req_values(claim, id), [want]);
        assert_eq!(req_values(claim, interruptible), [value]);
        assert_eq!(label(claim, interruptible), value);
    }
    // The plan of a pod of `types` with the class selecting `ids`: its NodeClaim and the
    // reservations it holds, sorted.
    let held = |ids: &[&str], types: &str| {
        let p = pod(
            "p",
            &required(
                &[&format!(
                    "{{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}"
                )],
                "  ",
            ),
        );
        let plan = plan_with(&format!("{}{p}", reservation_setup(ids)), Some(&catalog));
        let claim = only_claim(&plan).clone();
        let mut held = req_values(&claim, id);
        held.sort();
        (claim, held)
    };
    let (claim, reservations) = held(&[SOURCE, INTERRUPTIBLE], "m5.large");
    assert_eq!(reservations, [SOURCE, INTERRUPTIBLE]);
    assert_eq!(label(&claim, interruptible), "false");
    assert_eq!(label(&claim, id), SOURCE);

    let (claim, reservations) = held(&[XLARGE_2, INTERRUPTIBLE], "m5.large, m5.xlarge");
    assert_eq!(reservations, [INTERRUPTIBLE, XLARGE_2]);
    assert_eq!(
        label(&claim, "node.kubernetes.io/instance-type"),
        "m5.large"
    );
    assert_eq!(label(&claim, interruptible), "true");
}

/// scheduling.go "should provision EFAs according to NodeClass configuration": a class with a
/// primary interface and an `efa-only` one; the pod (category m) is planned on a type that has an
/// EFA interface (`compatibility.go` `networkInterfaceCompatibility`).
#[test]
fn scheduling_efa_only_interfaces_need_efa_types() {
    let c = class(
        "al2023@latest",
        "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}\n",
        "",
    );
    let p = pod(
        "p",
        &required(
            &["{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}"],
            "  ",
        ),
    );
    let plan = plan(&format!("{}{c}{p}", scheduling_pool(&[])));
    let claim = only_claim(&plan);
    assert_eq!(label(claim, "karpenter.k8s.aws/instance-category"), "m");
    let catalog = Catalog::embedded().unwrap();
    let facts = catalog.aws_snapshot().unwrap();
    for name in claim["instanceTypes"].as_array().unwrap() {
        let t = facts
            .instance_types
            .iter()
            .find(|t| t.name == name.as_str().unwrap())
            .unwrap();
        assert!(t.efa_max_interfaces > 0, "{}", t.name);
    }
}

/// `RegisterNodeOverlayTests`: "should provision the instance that is the cheepest based on a
/// price adjustment node overlay applied" (m7a.8xlarge at -99.99999999999%), "… price override"
/// (c7a.8xlarge at 0.0000000232) and "should provision a node that matches hugepages resource
/// requests" (c7a.2xlarge given `hugepages-2Mi: 4Gi`).
#[test]
fn node_overlays_pick_the_overlaid_type() {
    let overlay = |spec: &str, it: &str| {
        format!("---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {{name: o}}\nspec:\n  {spec}\n  requirements: [{{key: node.kubernetes.io/instance-type, operator: In, values: [{it}]}}]\n")
    };
    let base = format!("{}{}", scheduling_pool(&[]), default_class());
    for (spec, it, annotation) in [
        (
            "priceAdjustment: \"-99.99999999999%\"",
            "m7a.8xlarge",
            "karpenter.sh/price-overlay-applied",
        ),
        (
            "price: \"0.0000000232\"",
            "c7a.8xlarge",
            "karpenter.sh/price-overlay-applied",
        ),
    ] {
        let plan = plan(&format!("{base}{}{}", overlay(spec, it), pod("p", "")));
        let claim = only_claim(&plan);
        assert_eq!(claim["instanceType"], it);
        assert_eq!(claim["annotations"][annotation], "true");
    }
    let huge = pod_with(
        "p",
        "app: p",
        "",
        "{requests: {cpu: \"1\", memory: 1Gi, hugepages-2Mi: 100Mi}, limits: {hugepages-2Mi: 100Mi}}",
    );
    let c = class(
        "al2023@latest",
        "  userData: \"#!/bin/bash\\necho hugepages\\n\"\n",
        "",
    );
    let plan = plan(&format!(
        "{}{c}{}{huge}",
        scheduling_pool(&[]),
        overlay("capacity: {hugepages-2Mi: 4Gi}", "c7a.2xlarge")
    ));
    let claim = only_claim(&plan);
    assert_eq!(claim["instanceType"], "c7a.2xlarge");
    assert_eq!(
        claim["annotations"]["karpenter.sh/capacity-overlay-applied"],
        "true"
    );
}

/// A PersistentVolume `name` of class `class` (CSI `test.driver`), bound to `claim` if given,
/// in `zone` if given (`test.PersistentVolume`).
fn volume(name: &str, class: &str, claim: Option<&str>, zone: Option<&str>) -> String {
    let claim_ref = claim
        .map(|c| format!("  claimRef: {{namespace: default, name: {c}}}\n"))
        .unwrap_or_default();
    let affinity = zone
        .map(|z| format!("  nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: [{{key: topology.kubernetes.io/zone, operator: In, values: [{z}]}}]}}]}}}}\n"))
        .unwrap_or_default();
    format!("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}}}\nspec:\n  capacity: {{storage: 10Gi}}\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"{class}\"\n  csi: {{driver: test.driver, volumeHandle: {name}}}\n{claim_ref}{affinity}")
}

/// A PersistentVolumeClaim `name` of `class`, bound to `volume` (with the
/// `pv.kubernetes.io/bind-completed` annotation `test.PersistentVolumeClaim` adds) if given.
fn claim(name: &str, class: &str, volume: Option<&str>) -> String {
    match volume {
        Some(v) => format!("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: default, annotations: {{pv.kubernetes.io/bind-completed: \"yes\"}}}}\nspec: {{accessModes: [ReadWriteOnce], storageClassName: \"{class}\", volumeName: {v}, resources: {{requests: {{storage: 10Gi}}}}}}\nstatus: {{phase: Bound}}\n"),
        None => format!("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: default}}\nspec: {{accessModes: [ReadWriteOnce], storageClassName: \"{class}\", resources: {{requests: {{storage: 10Gi}}}}}}\n"),
    }
}

fn pod_on_claim(name: &str, claim: &str) -> String {
    pod(
        name,
        &format!("  volumes: [{{name: v, persistentVolumeClaim: {{claimName: {claim}}}}}]\n"),
    )
}

/// The storage suite's EBS StorageClass (WaitForFirstConsumer), with `extra` lines.
fn storage_class(extra: &str) -> String {
    format!("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: test-storage-class}}\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n{extra}")
}

fn storage_base() -> String {
    format!(
        "{}{}",
        pool("default", &requirements(&[]), "", ""),
        default_class()
    )
}

/// storage/suite_test.go Context "Static": "should run a pod with a pre-bound persistent volume
/// (empty storage class)", "… (non-existent storage class)", "… while respecting topology
/// constraints" (the PV in one zone: the node there) and "should run a pod with a generic
/// ephemeral volume" (its claim `<pod>-<volume>`, bound by the PV controller, as the cluster has
/// it when Karpenter looks).
#[test]
fn storage_static_volumes() {
    let base = storage_base();
    for class in ["", "non-existent-storage-class"] {
        let text = format!(
            "{base}{}{}{}",
            volume("test-volume", class, Some("c"), None),
            claim("c", class, Some("test-volume")),
            pod_on_claim("p", "c")
        );
        only_claim(&plan(&text));
    }
    let text = format!(
        "{base}{}{}{}",
        volume(
            "v",
            "non-existent-storage-class",
            Some("c"),
            Some("us-east-1b")
        ),
        claim("c", "non-existent-storage-class", Some("v")),
        pod_on_claim("p", "c")
    );
    assert_eq!(only_claim(&plan(&text))["zone"], "us-east-1b");
    let ephemeral = pod(
        "p",
        "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: non-existent-storage-class, resources: {requests: {storage: 10Gi}}}}}}]\n",
    );
    let text = format!(
        "{base}{}{}{ephemeral}",
        volume("v", "non-existent-storage-class", Some("p-scratch"), None),
        claim("p-scratch", "non-existent-storage-class", Some("v")),
    );
    only_claim(&plan(&text));
}

/// storage/suite_test.go Context "Dynamic": "should run a pod with a dynamic persistent volume",
/// "… while respecting allowed topologies" (`topology.ebs.csi.aws.com/zone` of one zone: the
/// node there), "… while respecting volume limits" (a node whose CSINode allows one EBS volume
/// and holds one: the second pod gets a new node; with room for two it goes on that node) and
/// "should run a pod with a generic ephemeral volume".
#[test]
fn storage_dynamic_volumes() {
    let base = storage_base();
    only_claim(&plan(&format!(
        "{base}{}{}{}",
        storage_class(""),
        claim("c", "test-storage-class", None),
        pod_on_claim("p", "c")
    )));
    let zoned = storage_class("allowedTopologies: [{matchLabelExpressions: [{key: topology.ebs.csi.aws.com/zone, values: [us-east-1c]}]}]\n");
    let plan1 = plan(&format!(
        "{base}{zoned}{}{}",
        claim("c", "test-storage-class", None),
        pod_on_claim("p", "c")
    ));
    assert_eq!(only_claim(&plan1)["zone"], "us-east-1c");
    let ephemeral = pod(
        "p",
        "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: test-storage-class, resources: {requests: {storage: 10Gi}}}}}}]\n",
    );
    only_claim(&plan(&format!("{base}{}{ephemeral}", storage_class(""))));

    let node = |limit: u32| {
        format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {{karpenter.sh/nodepool: default, karpenter.sh/registered: \"true\", karpenter.sh/initialized: \"true\", node.kubernetes.io/instance-type: c5.large, topology.kubernetes.io/zone: us-east-1a, kubernetes.io/os: linux, kubernetes.io/arch: amd64, karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: n1}}\nspec: {{providerID: \"aws:///us-east-1a/i-0123456789abcdef0\"}}\nstatus:\n  capacity: {{cpu: \"2\", memory: 4Gi, pods: \"29\"}}\n  allocatable: {{cpu: 1930m, memory: 3Gi, pods: \"29\"}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {{name: n1}}\nspec:\n  drivers: [{{name: ebs.csi.aws.com, nodeID: i-0123456789abcdef0, allocatable: {{count: {limit}}}}}]\n")
    };
    let first = format!(
        "{}---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv0}}\nspec:\n  capacity: {{storage: 1Gi}}\n  accessModes: [ReadWriteOnce]\n  storageClassName: test-storage-class\n  csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-0}}\n  claimRef: {{namespace: default, name: c0}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p0, namespace: default}}\nspec:\n  nodeName: n1\n  volumes: [{{name: v, persistentVolumeClaim: {{claimName: c0}}}}]\n  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\nstatus: {{phase: Running}}\n",
        claim("c0", "test-storage-class", Some("pv0"))
    );
    let second = format!(
        "{}{}",
        claim("c1", "test-storage-class", None),
        pod_on_claim("p1", "c1")
    );
    let full = plan(&format!(
        "{base}{}{}{first}{second}",
        storage_class(""),
        node(1)
    ));
    assert_eq!(only_claim(&full)["pods"][0], "default/p1");
    let room = plan(&format!(
        "{base}{}{}{first}{second}",
        storage_class(""),
        node(2)
    ));
    assert!(claims(&room).is_empty(), "{room:#}");
    assert!(pending(&room).is_empty(), "{room:#}");
}

/// storage/suite_test.go "Ephemeral Storage" DescribeTable "should run a pod with instance-store
/// ephemeral storage that exceeds EBS root block device mappings" (AL2, AL2023, Bottlerocket):
/// `instanceStorePolicy: RAID0` makes the instance store the node's ephemeral storage
/// (`types.go` `ephemeralStorage`), so 100Gi fits a type with that much instance storage.
#[test]
fn storage_raid0_instance_store_holds_ephemeral_storage() {
    for alias in ["al2@latest", "al2023@latest", "bottlerocket@latest"] {
        let c = class(alias, "  instanceStorePolicy: RAID0\n", "");
        let p = pod_with("p", "app: p", "", "{requests: {ephemeral-storage: 100Gi}}");
        let plan = plan(&format!(
            "{}{c}{p}",
            pool("default", &requirements(&[]), "", "")
        ));
        let claim = only_claim(&plan);
        let catalog = Catalog::embedded().unwrap();
        let facts = catalog.aws_snapshot().unwrap();
        let t = facts
            .instance_types
            .iter()
            .find(|t| t.name == claim["instanceType"].as_str().unwrap())
            .unwrap();
        assert!(t.local_storage_gb >= 100, "{alias}: {}", t.name);
        // Without RAID0 the 20Gi root volume is the ephemeral storage: pending.
        let root = plan_without_raid(alias, &p);
        assert_eq!(pending(&root).len(), 1, "{alias}: {root:#}");
    }
}

fn plan_without_raid(alias: &str, pod: &str) -> Value {
    plan(&format!(
        "{}{}{pod}",
        pool("default", &requirements(&[]), "", ""),
        class(alias, "", "")
    ))
}

/// integration/extended_resources_test.go: "should provision nodes for a deployment that
/// requests nvidia.com/gpu" (and "(Bottlerocket)"; the pool's category `Exists`, family NotIn
/// g6f), "… aws.amazon.com/neuron" and "… aws.amazon.com/neuroncore" (category `Exists`,
/// generation In [2]: inf2/trn1), and DescribeTable "… vpc.amazonaws.com/efa" (2 Entries: the
/// type's EFA interfaces, or the class's `efa-only` interfaces; the pool labelled and tainted
/// `aws.amazon.com/efa`, the pod tolerating it).
#[test]
fn extended_resources_find_their_types() {
    let gpu_pool = pool(
        "default",
        &requirements(&[
            "{key: karpenter.k8s.aws/instance-category, operator: Exists}",
            "{key: karpenter.k8s.aws/instance-family, operator: NotIn, values: [g6f]}",
        ]),
        "",
        "",
    );
    let neuron_pool = pool(
        "default",
        &requirements(&[
            "{key: karpenter.k8s.aws/instance-category, operator: Exists}",
            "{key: karpenter.k8s.aws/instance-generation, operator: In, values: [\"2\"]}",
        ]),
        "",
        "",
    );
    let asks = |resource: &str| {
        deployment(
            "large-app",
            1,
            "",
            &format!("{{requests: {{{resource}: \"1\"}}, limits: {{{resource}: \"1\"}}}}"),
        )
    };
    for (p, c, resource, label_key) in [
        (
            &gpu_pool,
            default_class(),
            "nvidia.com/gpu",
            "karpenter.k8s.aws/instance-gpu-manufacturer",
        ),
        (
            &gpu_pool,
            class("bottlerocket@latest", "", ""),
            "nvidia.com/gpu",
            "karpenter.k8s.aws/instance-gpu-manufacturer",
        ),
        (
            &neuron_pool,
            default_class(),
            "aws.amazon.com/neuron",
            "karpenter.k8s.aws/instance-accelerator-manufacturer",
        ),
        (
            &neuron_pool,
            default_class(),
            "aws.amazon.com/neuroncore",
            "karpenter.k8s.aws/instance-accelerator-manufacturer",
        ),
    ] {
        let plan = plan(&format!("{p}{c}{}", asks(resource)));
        let claim = only_claim(&plan);
        let want = if resource == "nvidia.com/gpu" {
            "nvidia"
        } else {
            "aws"
        };
        assert_eq!(label(claim, label_key), want, "{resource}");
    }
    let efa_pool = pool(
        "default",
        &requirements(&[]),
        "labels: {aws.amazon.com/efa: \"true\"}",
        "      taints: [{key: aws.amazon.com/efa, effect: NoSchedule}]\n",
    );
    let efa_pod = deployment(
        "efa-app",
        1,
        "      tolerations: [{key: aws.amazon.com/efa, operator: Exists}]\n",
        "{requests: {vpc.amazonaws.com/efa: \"1\"}, limits: {vpc.amazonaws.com/efa: \"1\"}}",
    );
    for interfaces in [
        "",
        "  networkInterfaces:\n  - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}\n  - {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}\n",
    ] {
        let c = class("al2023@latest", interfaces, "");
        let plan = plan(&format!("{efa_pool}{c}{efa_pod}"));
        let claim = only_claim(&plan);
        assert_eq!(label(claim, "aws.amazon.com/efa"), "true");
    }
}

/// Whether every instance-type option of the planned NodeClaim is trunking-compatible in the
/// VPC resource controller's table (upstream's `supportsPodENI`: `Limits[type]` with
/// `IsTrunkingCompatible`).
fn all_options_support_pod_eni(claim: &Value) -> bool {
    let options = claim["instanceTypes"].as_array().unwrap();
    !options.is_empty()
        && options.iter().all(|t| {
            crate::cloud::catalog::vpc_limits::vpc_limits(t.as_str().unwrap())
                .is_some_and(|l| l.branch_enis > 0)
        })
}

/// integration/extended_resources_test.go: "should provision nodes for a deployment that
/// requests vpc.amazonaws.com/pod-eni (security groups for pods)". Upstream creates a
/// SecurityGroupPolicy selecting the Deployment; the VPC resource controller's webhook then adds
/// `vpc.amazonaws.com/pod-eni: 1` to each pod's requests and limits, which is what a pending pod
/// read from the cluster carries, so the Deployment here requests it. One NodeClaim of a
/// trunking-compatible type.
#[test]
fn extended_resources_pod_eni_finds_a_trunking_compatible_type() {
    let p = pool("default", &requirements(&[]), "", "");
    let d = deployment(
        "large-app",
        1,
        "",
        "{requests: {vpc.amazonaws.com/pod-eni: \"1\"}, limits: {vpc.amazonaws.com/pod-eni: \"1\"}}",
    );
    let plan = plan(&format!("{p}{}{d}", default_class()));
    let claim = only_claim(&plan);
    assert!(all_options_support_pod_eni(claim), "{claim:#}");
}

/// aws `pkg/providers/instancetype/suite_test.go` through the planning path: "should launch
/// vpc.amazonaws.com/pod-eni on a compatible instance type" (a pool admitting every type: every
/// option of the NodeClaim is trunking-compatible), "should not launch AWS Pod ENI on a t3" (the
/// pod selects t3.large: pending), "should launch vpc.amazonaws.com/PrivateIPv4Address on a
/// compatible instance type" (Windows 2022: planned on a type the table lists) and "should not
/// launch instance type for vpc.amazonaws.com/PrivateIPv4Address if VPC resource controller
/// doesn't advertise it" (upstream's fake type `test` is played by m8in.metal-48xl, newer than the
/// v1.14.1 table and priced: pending).
#[test]
fn instancetype_suite_vpc_resources_follow_the_vpc_limits_table() {
    let any = pool("default", &[], "", "");
    let eni = "{requests: {vpc.amazonaws.com/pod-eni: \"1\"}, limits: {vpc.amazonaws.com/pod-eni: \"1\"}}";
    let plan_eni = plan(&format!(
        "{any}{}{}",
        default_class(),
        pod_with("p", "app: p", "", eni)
    ));
    assert!(all_options_support_pod_eni(only_claim(&plan_eni)));

    let on_t3 = pod_with(
        "p",
        "app: p",
        "  nodeSelector: {node.kubernetes.io/instance-type: t3.large}\n",
        eni,
    );
    let plan_t3 = plan(&format!("{any}{}{on_t3}", default_class()));
    assert_eq!(pending(&plan_t3).len(), 1, "{plan_t3:#}");

    let ip = "{requests: {vpc.amazonaws.com/PrivateIPv4Address: \"1\"}, limits: {vpc.amazonaws.com/PrivateIPv4Address: \"1\"}}";
    let windows = class("windows2022@latest", "", "");
    let plan_ip = plan(&format!(
        "{any}{windows}{}",
        pod_with("p", "app: p", "", ip)
    ));
    let claim = only_claim(&plan_ip);
    let options = claim["instanceTypes"].as_array().unwrap();
    assert!(options.iter().all(|t| {
        crate::cloud::catalog::vpc_limits::vpc_limits(t.as_str().unwrap())
            .is_some_and(|l| l.ipv4_per_interface > 1)
    }));

    let unlisted = pool(
        "default",
        &[
            "{key: node.kubernetes.io/instance-type, operator: In, values: [m8in.metal-48xl]}"
                .to_string(),
        ],
        "",
        "",
    );
    let plan_unlisted = plan(&format!(
        "{unlisted}{windows}{}",
        pod_with("p", "app: p", "", ip)
    ));
    assert_eq!(pending(&plan_unlisted).len(), 1, "{plan_unlisted:#}");
    // Without the request the same pool plans a m8in.metal-48xl: the type itself is usable.
    let plain = plan(&format!("{unlisted}{windows}{}", pod("p", "")));
    assert_eq!(only_claim(&plain)["instanceType"], "m8in.metal-48xl");
}

/// The kubelet configuration of integration/kubelet_config_test.go Context "All kubelet
/// configuration set".
const ALL_KUBELET: &str = "  kubelet:\n    maxPods: 110\n    podsPerCore: 10\n    systemReserved: {cpu: 200m, memory: 200Mi, ephemeral-storage: 1Gi}\n    kubeReserved: {cpu: 200m, memory: 200Mi, ephemeral-storage: 1Gi}\n    evictionHard: {memory.available: 5%, nodefs.available: 5%, nodefs.inodesFree: 5%, imagefs.available: 5%, imagefs.inodesFree: 5%, pid.available: 3%}\n    evictionSoft: {memory.available: 10%, nodefs.available: 10%, nodefs.inodesFree: 10%, imagefs.available: 10%, imagefs.inodesFree: 10%, pid.available: 6%}\n    evictionSoftGracePeriod: {memory.available: 2m, nodefs.available: 2m, nodefs.inodesFree: 2m, imagefs.available: 2m, imagefs.inodesFree: 2m, pid.available: 2m}\n    evictionMaxPodGracePeriod: 120\n    imageGCHighThresholdPercent: 50\n    imageGCLowThresholdPercent: 10\n    cpuCFSQuota: false\n";

/// integration/kubelet_config_test.go DescribeTables "Linux AMIFamilies" (AL2, AL2023,
/// Bottlerocket) and "Windows AMIFamilies" (2019, 2022, 2025; the pool scoped to windows): with
/// every kubelet field set, an amd64 pod of the OS is planned.
#[test]
fn kubelet_configuration_all_set() {
    for (alias, os) in [
        ("al2@latest", "linux"),
        ("al2023@latest", "linux"),
        ("bottlerocket@latest", "linux"),
        ("windows2019@latest", "windows"),
        ("windows2022@latest", "windows"),
        ("windows2025@latest", "windows"),
    ] {
        let p = pool(
            "default",
            &requirements(&[&format!(
                "{{key: kubernetes.io/os, operator: In, values: [{os}]}}"
            )]),
            "",
            "",
        );
        let c = class(alias, ALL_KUBELET, "");
        let po = pod(
            "p",
            &format!("  nodeSelector: {{kubernetes.io/os: {os}, kubernetes.io/arch: amd64}}\n"),
        );
        let plan = plan(&format!("{p}{c}{po}"));
        let claim = only_claim(&plan);
        assert_eq!(label(claim, "kubernetes.io/os"), os, "{alias}");
    }
}

/// integration/kubelet_config_test.go "should schedule pods onto separate nodes when maxPods is
/// set" (maxPods 1 + no DaemonSets: 3 pods, 3 nodes), "… when podsPerCore is set" (2-vCPU types,
/// podsPerCore ceil((2 + 0)/2) = 1: 4 pods, 2 nodes) and "should ignore podsPerCore value when
/// Bottlerocket is used" (podsPerCore 1: 6 pods, 1 node).
#[test]
fn kubelet_max_pods_and_pods_per_core() {
    let d = |n: u32| deployment("large-app", n, "", "{requests: {cpu: 100m}}");
    let two_cpus = pool(
        "default",
        &requirements(&["{key: karpenter.k8s.aws/instance-cpu, operator: In, values: [\"2\"]}"]),
        "",
        "",
    );
    let cases = [
        (
            pool("default", &requirements(&[]), "", ""),
            class("al2023@latest", "  kubelet: {maxPods: 1}\n", ""),
            3,
            3,
        ),
        (
            two_cpus.clone(),
            class("al2023@latest", "  kubelet: {podsPerCore: 1}\n", ""),
            4,
            2,
        ),
        (
            two_cpus,
            class("bottlerocket@latest", "  kubelet: {podsPerCore: 1}\n", ""),
            6,
            1,
        ),
    ];
    for (p, c, pods, nodes) in cases {
        let plan = plan(&format!("{p}{c}{}", d(pods)));
        assert!(pending(&plan).is_empty(), "{plan:#}");
        assert_eq!(claims(&plan).len(), nodes, "{c}");
    }
}

/// integration/subnet_test.go "should use a subnet within the AZ requested": the pool requires
/// one of the class's zones; the NodeClaim is in it (the launch then takes a subnet of that
/// zone from `status.subnets`, `cloud::launch`).
#[test]
fn subnets_the_requested_zone_is_used() {
    let p = pool(
        "default",
        &requirements(&["{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1c]}"]),
        "",
        "",
    );
    let c = class("al2023@latest", "", SUBNETS);
    let plan = plan(&format!("{p}{c}{}", pod("p", "")));
    assert_eq!(only_claim(&plan)["zone"], "us-east-1c");
}

/// integration/validation_test.go Context "EC2NodeClass" (11 of 13 Its; the two that switch
/// between a managed and an unmanaged instance profile update a stored object, which an offline
/// read has none of): what the API server refuses is refused on reading (exit 2), what it
/// accepts plans.
#[test]
fn validation_of_the_node_class() {
    let refused = |what: &str, spec: &str| {
        let text = format!(
            "{}---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: default}}\nspec:\n{spec}{}",
            pool("default", &requirements(&[]), "", ""),
            pod("p", "")
        );
        let err = crate::api::load_str("suite.yaml", &text)
            .and_then(|m| m.check_references().map(|_| m))
            .err();
        assert!(err.is_some(), "{what}: accepted\n{spec}");
    };
    let terms = "  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]\n  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]\n";
    let role = "  role: KarpenterNodeRole-test\n";
    let alias = "  amiSelectorTerms: [{alias: al2023@latest}]\n";
    refused(
        "should error when amiSelectorTerms are not defined",
        &format!("{role}{terms}  amiFamily: AL2023\n  amiSelectorTerms: []\n"),
    );
    refused(
        "should fail for poorly formatted AMI ids",
        &format!(
            "{role}{terms}  amiFamily: AL2023\n  amiSelectorTerms: [{{id: must-start-with-ami}}]\n"
        ),
    );
    for tag in [
        "karpenter.sh/nodepool: custom-value",
        "eks:eks-cluster-name: test",
        "kubernetes.io/cluster/test: owned",
        "karpenter.sh/nodeclaim: custom-value",
        "karpenter.k8s.aws/ec2nodeclass: custom-value",
    ] {
        refused(
            "should error when tags contains a restricted key",
            &format!("{role}{terms}{alias}  tags: {{{tag}}}\n"),
        );
    }
    refused(
        "should fail when securityGroupSelectorTerms has id and other filters",
        &format!("{role}{alias}  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  securityGroupSelectorTerms: [{{tags: {{a: b}}, id: sg-12345}}]\n"),
    );
    refused(
        "should fail when subnetSelectorTerms has id and other filters",
        &format!("{role}{alias}  securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n  subnetSelectorTerms: [{{tags: {{a: b}}, id: subnet-12345}}]\n"),
    );
    refused(
        "should fail when amiSelectorTerms has id and other filters",
        &format!("{role}{terms}  amiFamily: AL2023\n  amiSelectorTerms: [{{tags: {{a: b}}, id: ami-12345}}]\n"),
    );
    refused(
        "should fail when specifying role and instanceProfile at the same time",
        &format!("{role}{terms}{alias}  instanceProfile: test-instance-profile\n"),
    );
    refused(
        "should fail when specifying none of role and instanceProfile",
        &format!("{terms}{alias}"),
    );
    refused(
        "should error if imageGCHighThresholdPercent is less than imageGCLowThresholdPercent",
        &format!("{role}{terms}{alias}  kubelet: {{imageGCHighThresholdPercent: 10, imageGCLowThresholdPercent: 60}}\n"),
    );
    for field in ["imageGCHighThresholdPercent", "imageGCLowThresholdPercent"] {
        refused(
            "should error if imageGCHighThresholdPercent or imageGCLowThresholdPercent is negative",
            &format!("{role}{terms}{alias}  kubelet: {{{field}: -10}}\n"),
        );
    }
    // "should succeed when tags don't contain restricted keys".
    let c = class(
        "al2023@latest",
        "  tags: {karpenter.sh/custom-key: custom-value, kubernetes.io/role/key: custom-value}\n",
        "",
    );
    let ok = plan(&format!(
        "{}{}{}",
        pool("default", &requirements(&[]), "", ""),
        c.replace("  tags: {testing/cluster: test}\n", ""),
        pod("p", "")
    ));
    only_claim(&ok);
}
