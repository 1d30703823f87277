//! Conversion of every shared example, and the driver's rules (pass-through, summaries, errors,
//! JSON and Lists); helpers for the per-module tests.

pub(super) use super::*;
pub(super) use crate::api::{load_paths, load_str};
use crate::model::nodepool::NodePool as ModelPool;
use std::fmt;

pub(super) fn options() -> Options {
    Options::default()
}

pub(super) fn conv(text: &str) -> Conversion {
    convert_str("t.yaml", text, &options()).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn doc<'a>(c: &'a Conversion, kind: &str, name: &str) -> &'a Document {
    c.documents
        .iter()
        .find(|d| d.kind == kind && d.name == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in {:#?}", c.documents))
}

/// `a.b[2].c[dotted.key]` → steps.
pub(super) fn steps(path: &str) -> Vec<Result<usize, String>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').unwrap();
            let inner = &r[..end];
            out.push(inner.parse::<usize>().map_err(|_| inner.to_string()));
            rest = &r[end + 1..];
        } else {
            let rest2 = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest2.find(['.', '[']).unwrap_or(rest2.len());
            out.push(Err(rest2[..end].to_string()));
            rest = &rest2[end..];
        }
    }
    out
}

pub(super) fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for step in steps(path) {
        cur = match step {
            Ok(i) => cur.item(i)?,
            Err(k) => cur.get(k.as_str())?,
        };
    }
    Some(cur)
}

/// `a.b[2].c[dotted.key]` into a value.
pub(super) fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    lookup(v, path).unwrap_or_else(|| panic!("no {path} in {v:#?}"))
}

pub(super) fn text(v: &Value, path: &str) -> String {
    match at(v, path) {
        Value::String(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        Value::UInt(n) => n.to_string(),
        Value::Float(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => panic!("{path} is not a scalar: {other:?}"),
    }
}

pub(super) fn has(v: &Value, path: &str) -> bool {
    lookup(v, path).is_some()
}

/// The note on `field` whose message contains `needle`.
pub(super) fn note<'a>(d: &'a Document, field: &str, needle: &str) -> &'a Note {
    d.notes
        .iter()
        .find(|n| n.field == field && n.message.contains(needle))
        .unwrap_or_else(|| panic!("no note {field}: …{needle}… in {:#?}", d.notes))
}

pub(super) fn requirements(d: &Document) -> Vec<String> {
    at(&d.value, "spec.template.spec.requirements")
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| {
            let values: Vec<String> = r
                .get("values")
                .and_then(Value::as_sequence)
                .map(|vs| vs.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            format!(
                "{} {} {}",
                text(r, "key"),
                text(r, "operator"),
                values.join(",")
            )
        })
        .collect()
}

pub(super) fn yaml_files(dir: &str) -> Vec<String> {
    let dir = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

pub(super) fn sorted_debug<T: fmt::Debug>(items: &[T]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    v.sort();
    v
}

/// The planning-relevant parts of a pool agree before and after conversion.
pub(super) fn assert_same_pool(file: &str, before: &ModelPool, after: &ModelPool) {
    let ctx = format!("{file}: NodePool/{}", before.name);
    assert_eq!(
        sorted_debug(&before.requirements),
        sorted_debug(&after.requirements),
        "{ctx}: requirements"
    );
    assert_eq!(before.labels, after.labels, "{ctx}: labels");
    assert_eq!(before.taints, after.taints, "{ctx}: taints");
    assert_eq!(before.startup_taints, after.startup_taints, "{ctx}");
    assert_eq!(before.limits, after.limits, "{ctx}: limits");
    assert_eq!(before.weight, after.weight, "{ctx}: weight");
    assert_eq!(
        before.expire_after, after.expire_after,
        "{ctx}: expireAfter"
    );
    let policy = match before.disruption.consolidation_policy.as_str() {
        "WhenUnderutilized" => "WhenEmptyOrUnderutilized",
        p => p,
    };
    assert_eq!(policy, after.disruption.consolidation_policy, "{ctx}");
    if policy == "WhenEmpty" {
        assert_eq!(
            before.disruption.consolidate_after, after.disruption.consolidate_after,
            "{ctx}"
        );
    }
    if before.generation != Some(crate::model::nodepool::ApiGeneration::V1Alpha5) {
        // v1alpha5 had no budgets; v1's default applies (noted).
        assert_eq!(
            before.disruption.budgets, after.disruption.budgets,
            "{ctx}: budgets"
        );
    }
    assert_eq!(
        before.node_class_ref.as_ref().map(|r| r.name.clone()),
        after.node_class_ref.as_ref().map(|r| r.name.clone()),
        "{ctx}: node class"
    );
}

#[test]
fn every_example_converts_loads_back_and_keeps_what_planning_reads() {
    let mut count = 0;
    for dir in ["examples/v1alpha5", "examples/v1beta1"] {
        for file in yaml_files(dir) {
            let c = convert_paths(
                std::slice::from_ref(&file),
                &mut std::io::empty(),
                &options(),
            )
            .unwrap_or_else(|e| panic!("{file}: {e}"));
            let yaml = c.to_yaml();
            let after = load_str("converted.yaml", &yaml)
                .unwrap_or_else(|e| panic!("{file}: converted output does not load: {e}\n{yaml}"));
            after
                .check_references()
                .unwrap_or_else(|e| panic!("{file}: {e}\n{yaml}"));
            assert!(
                after
                    .node_pools
                    .iter()
                    .all(|p| p.generation == Some(crate::model::nodepool::ApiGeneration::V1)),
                "{file}"
            );
            assert!(
                after.node_classes.iter().all(|c| c.kind == "EC2NodeClass"),
                "{file}"
            );
            let before = load_paths(std::slice::from_ref(&file), &mut std::io::empty()).unwrap();
            assert_eq!(before.node_pools.len(), after.node_pools.len(), "{file}");
            assert_eq!(
                before.node_classes.len(),
                after.node_classes.len(),
                "{file}"
            );
            for pool in &before.node_pools {
                let converted = after
                    .node_pools
                    .iter()
                    .find(|p| p.name == pool.name)
                    .unwrap_or_else(|| panic!("{file}: {} lost", pool.name));
                assert_same_pool(&file, pool, converted);
            }
            for class in &before.node_classes {
                let converted = after
                    .node_classes
                    .iter()
                    .find(|c| c.name == class.name)
                    .unwrap_or_else(|| panic!("{file}: {} lost", class.name));
                let ctx = format!("{file}: {}/{}", class.kind, class.name);
                assert_eq!(class.user_data, converted.user_data, "{ctx}");
                assert_eq!(class.tags, converted.tags, "{ctx}");
                assert_eq!(class.role, converted.role, "{ctx}");
                assert_eq!(
                    class.subnet_selector_terms, converted.subnet_selector_terms,
                    "{ctx}"
                );
                assert_eq!(
                    class.security_group_selector_terms, converted.security_group_selector_terms,
                    "{ctx}"
                );
                if class.ami_family.as_deref() == Some("Ubuntu") {
                    assert_eq!(converted.ami_family.as_deref(), Some("AL2"), "{ctx}");
                } else {
                    assert_eq!(class.ami_family, converted.ami_family, "{ctx}");
                    assert_eq!(class.block_devices, converted.block_devices, "{ctx}");
                }
                if class.instance_profile.is_some() || class.role.is_some() {
                    assert_eq!(class.instance_profile, converted.instance_profile, "{ctx}");
                } else {
                    assert_eq!(
                        converted.instance_profile.as_deref(),
                        Some(INSTANCE_PROFILE_PLACEHOLDER),
                        "{ctx}"
                    );
                }
                if !class.ami_selector_terms.is_empty() {
                    assert_eq!(
                        class.ami_selector_terms, converted.ami_selector_terms,
                        "{ctx}"
                    );
                }
            }
            // Deterministic, and converting the output again changes nothing.
            let again = convert_paths(
                std::slice::from_ref(&file),
                &mut std::io::empty(),
                &options(),
            )
            .unwrap();
            assert_eq!(yaml, again.to_yaml(), "{file}: not deterministic");
            let round = convert_str("converted.yaml", &yaml, &options()).unwrap();
            assert!(round.documents.iter().all(|d| d.unchanged), "{file}");
            assert_eq!(round.notes().count(), 0, "{file}");
            count += 1;
        }
    }
    assert!(count >= 22, "only {count} examples");
}

pub(super) const PROVISIONER: &str = r#"
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
  annotations:
    karpenter.sh/provisioner-hash: "123"
    team: a
spec:
  labels:
    team: a
  annotations:
    example.com/owner: a
  taints:
    - key: dedicated
      value: a
      effect: NoSchedule
  startupTaints:
    - key: init
      effect: NoSchedule
  requirements:
    - key: karpenter.k8s.aws/instance-family
      operator: In
      values: [m5]
  kubeletConfiguration:
    maxPods: 50
    containerRuntime: dockerd
  limits:
    resources:
      cpu: 100
  weight: 10
  ttlSecondsAfterEmpty: 30
  ttlSecondsUntilExpired: 86400
  providerRef:
    name: tmpl
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: tmpl
spec:
  instanceProfile: KarpenterNodeInstanceProfile
  subnetSelector:
    aws-ids: subnet-1,subnet-2
  securityGroupSelector:
    karpenter.sh/discovery: "*"
"#;

pub(super) const V1BETA1: &str = r#"
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: a
spec:
  template:
    metadata:
      labels:
        team: a
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: Exists
          minValues: 3
      resources: {}
      kubelet:
        maxPods: 30
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: shared
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 24h
    budgets:
      - nodes: "20%"
  limits:
    cpu: 50
  weight: 5
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: b
spec:
  template:
    spec:
      requirements: []
      kubelet:
        maxPods: 60
      nodeClassRef:
        name: shared
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 5m
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: c
spec:
  template:
    spec:
      requirements: []
      nodeClassRef:
        name: shared
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: shared
  annotations:
    karpenter.k8s.aws/ec2nodeclass-hash: "1"
spec:
  amiFamily: AL2023
  role: NodeRole
  subnetSelectorTerms:
    - tags:
        a: b
  securityGroupSelectorTerms:
    - id: sg-1
  metadataOptions:
    httpTokens: optional
  tags:
    eks:eks-cluster-name: c
    team: a
"#;

#[test]
fn v1_objects_pass_through_exactly_and_kubelet_is_not_forced_into_them() {
    let v1 = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: k\nspec:\n  amiSelectorTerms:\n    - alias: al2023@latest\n  role: r\n  subnetSelectorTerms:\n    - id: subnet-1\n  securityGroupSelectorTerms:\n    - id: sg-1\n  futureField: kept\n";
    let pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n      kubelet:\n        maxPods: 10\n      nodeClassRef:\n        name: k\n      requirements: []\n";
    let c = conv(&format!("{v1}---\n{pool}"));
    let class = doc(&c, "EC2NodeClass", "k");
    assert!(class.unchanged);
    assert_eq!(text(&class.value, "spec.futureField"), "kept");
    assert!(!has(&class.value, "spec.kubelet"));
    let p = doc(&c, "NodePool", "p");
    note(p, "spec.template.spec.kubelet", "already v1");
    assert!(c
        .to_yaml()
        .starts_with("# unchanged: karpenter.k8s.aws/v1 EC2NodeClass/k"));
}

/// Found by the planting sweep (tests/e2e/fuzz_planted.rs): `convert` wrote the names its
/// `# converted from …` and `# note: …` comments quote with their control characters raw (a
/// BEL, an escape sequence; a newline only became a space), so the terminal obeyed them and
/// the YAML no longer read. Escaped now, as in error lines.
#[test]
fn comments_escape_what_the_names_they_quote_hold() {
    let line = super::result::comment("EC2NodeClass/evil\u{1b}[31m\nerror: forged\r\u{7}\u{7f}\u{9b}\u{202e}\u{200b}\u{feff} \"q\" é");
    assert_eq!(
        line,
        "# EC2NodeClass/evil\\u{1b}[31m\\nerror: forged\\r\\u{7}\\u{7f}\\u{9b}\\u{202e}\\u{200b}\\u{feff} \"q\" é\n"
    );
    let pool = V1BETA1.replacen(
        "metadata:\n  name: a\n",
        "metadata:\n  name: \"odd\\rcr\\abel\\e[31m\"\n",
        1,
    );
    assert_ne!(pool, V1BETA1);
    let yaml = conv(&pool).to_yaml();
    assert!(
        yaml.contains("NodePool/odd\\rcr\\u{7}bel\\u{1b}[31m by kubectl"),
        "{yaml}"
    );
    assert!(
        !yaml.chars().any(|c| c != '\n' && c.is_control()),
        "{yaml:?}"
    );
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).unwrap();
    assert_eq!(docs[0]["metadata"]["name"], "odd\rcr\u{7}bel\u{1b}[31m");
}

/// A NodeOverlay (one version, v1alpha1) goes along unchanged with the pools it prices.
#[test]
fn node_overlays_pass_through_unchanged() {
    let overlay = "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata:\n  name: d\nspec:\n  requirements: []\n  weight: 5\n  price: \"0.5\"\n";
    let c = conv(overlay);
    let o = doc(&c, "NodeOverlay", "d");
    assert!(o.unchanged);
    assert_eq!(text(&o.value, "spec.price"), "0.5");
    assert!(c
        .to_yaml()
        .starts_with("# unchanged: karpenter.sh/v1alpha1 NodeOverlay/d is current\n"));
}

#[test]
fn other_objects_are_summarised_and_nothing_karpenter_is_an_error() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: a\n";
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n";
    let claim = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: c1\nspec:\n  nodeClassRef:\n    group: karpenter.k8s.aws\n    kind: EC2NodeClass\n    name: x\n  requirements: []\n";
    let c = conv(&format!(
        "{V1BETA1}---\n{deployment}---\n{service}---\n{claim}"
    ));
    let summary = c.summary();
    assert_eq!(summary.len(), 2, "{summary:?}");
    assert!(
        summary[0].starts_with("not converted: NodeClaim/c1 (t.yaml (document 7))"),
        "{summary:?}"
    );
    assert!(
        summary[1].starts_with("not printed: 2 objects"),
        "{summary:?}"
    );
    assert!(summary[1].contains("Deployment/web") && summary[1].contains("Service/web"));
    assert!(!c.to_yaml().contains("kind: Deployment"));

    let e = convert_str("w.yaml", &format!("{deployment}---\n{service}"), &options())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("w.yaml: no Karpenter objects to convert"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn bad_input_is_the_loaders_error_and_name_clashes_are_refused() {
    let e = convert_str(
        "b.yaml",
        "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: x\n      requirements:\n        - key: a\n          operator: Inn\n",
        &options(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("b.yaml: NodePool/p: spec.template.spec.requirements[0].operator"),
        "{e}"
    );
    let e = convert_str("m.yaml", "a: [1,\n", &options())
        .unwrap_err()
        .to_string();
    assert!(e.contains("malformed YAML"), "{e}");
    // A Provisioner and a v1beta1 NodePool with the same name both become NodePool/default.
    let e = convert_str(
        "c.yaml",
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: t\n---\napiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: t\n      requirements: []\n",
        &options(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("converts to NodePool/default, as Provisioner/default"),
        "{e}"
    );
    // A Provisioner without any node class: the loader refuses it, as the v0.31 webhook did
    // (`validateProvider`), before a conversion starts.
    let e = convert_str(
        "d.yaml",
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: p\nspec: {}\n",
        &options(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("d.yaml: Provisioner/p: spec.providerRef: expected exactly one, got neither"),
        "{e}"
    );
}

#[test]
fn workloads_are_not_expanded_to_convert() {
    // Far more replicas than planning would expand: convert never looks at pods.
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: big}\nspec:\n  replicas: 100000000\n  template: {spec: {containers: [{name: a}]}}\n";
    let c = conv(&format!("{PROVISIONER}---\n{deployment}"));
    assert_eq!(c.not_printed, ["Deployment/big (t.yaml (document 3))"]);
}

#[test]
fn lists_and_json_convert_like_yaml() {
    let list = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"j"},"spec":{"template":{"spec":{"nodeClassRef":{"name":"x"},"requirements":[]}}}}]}"#;
    let c = convert_str("l.json", list, &options()).unwrap();
    let d = doc(&c, "NodePool", "j");
    assert_eq!(text(&d.value, "spec.template.spec.nodeClassRef.name"), "x");
    assert!(d.notes.iter().any(|n| n.source == "l.json"));
}
