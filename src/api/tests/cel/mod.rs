//! Karpenter's own tests of what the API server refuses (its CRDs' schemas, patterns and CEL
//! rules), mirrored case by case: each upstream `It`/`Entry` becomes a patch on the upstream
//! test's base object, loaded here as JSON and as YAML, and must be refused naming the field
//! where upstream expects `Create` to fail, and accepted where it expects it to succeed.
//! Ledger: docs/upstream-tests.md "Validation (CEL and schema)".

mod core_kinds;
mod ec2nodeclass;
mod line_by_line;
mod line_by_line_older;
mod nodeclaim;
mod nodeoverlay;
mod nodepool;
mod required;

use serde_json::Value;

use crate::api::{load_str, InputError};

/// What the API server does with the object.
#[derive(Debug, Clone, Copy)]
pub(super) enum Want {
    /// Accepted.
    Ok,
    /// Refused; we name this field (the error's field path starts with it).
    Refused(&'static str),
}
pub(super) use Want::{Ok as Accepted, Refused};

/// One upstream `It` or `Entry`: its text, the patch (YAML, applied as a JSON merge patch,
/// RFC 7386: objects merge, `null` removes, anything else replaces) and the outcome.
pub(super) type Case<'a> = (&'a str, &'a str, Want);

/// A case whose patch is built at run time.
pub(super) type Owned = (String, String, Want);

/// Owned cases as [`Case`]s.
pub(super) fn borrowed(owned: &[Owned]) -> Vec<Case<'_>> {
    owned
        .iter()
        .map(|(it, p, w)| (it.as_str(), p.as_str(), *w))
        .collect()
}

/// The requirement Its the NodePool, NodeClaim and NodeOverlay files share, word for word but
/// their names: the well-known labels, the kubernetes domains, the bounded operators' values,
/// and (`keys`) the invalid and too-long keys. `wrap` makes a patch whose only requirement is
/// its argument; `at` is that requirement's path, `key` its key's.
pub(super) struct RequirementIts {
    pub wrap: fn(&str) -> String,
    pub at: &'static str,
    pub key: &'static str,
    pub well_known: &'static [&'static str],
    /// The Its' names: kubernetes domains, kubernetes subdomains.
    pub domains: [&'static str; 2],
    /// Whether the file has "should fail for invalid requirement keys" and "should fail at
    /// runtime for requirement keys that are too long".
    pub keys: bool,
    /// Whether it has "should allow more than 50 values if minValues is not specified.".
    pub min_values: bool,
}

impl RequirementIts {
    pub(super) fn cases(&self) -> Vec<Owned> {
        let one = |r: String| (self.wrap)(&r);
        let mut out: Vec<Owned> = Vec::new();
        if self.keys {
            for k in [
                "'test.com.com}'",
                "Test.com/test",
                "test/test/test",
                "test/",
                "/test",
            ] {
                let it = format!("should fail for invalid requirement keys: {k}");
                out.push((
                    it,
                    one(format!("{{key: {k}, operator: Exists}}")),
                    Refused(self.key),
                ));
            }
            let long = "a".repeat(250);
            for k in [
                format!("test.com.test.{long}/test"),
                format!("test.com.test/test-{long}"),
            ] {
                let it =
                    "should fail at runtime for requirement keys that are too long".to_string();
                out.push((
                    it,
                    one(format!("{{key: {k}, operator: Exists}}")),
                    Refused(self.key),
                ));
            }
        }
        if self.min_values {
            let values: Vec<String> = (0..90).map(|i| format!("instance{i}")).collect();
            let r = format!(
                "{{key: node.kubernetes.io/instance-type, operator: In, values: [{}]}}",
                values.join(", ")
            );
            let it = "should allow more than 50 values if minValues is not specified.";
            out.push((it.into(), one(r), Accepted));
        }
        for label in self.well_known {
            let it = format!("should allow well known label exceptions: {label}");
            out.push((
                it,
                one(format!("{{key: {label}, operator: In, values: [test]}}")),
                Accepted,
            ));
        }
        for domain in ["kubernetes.io", "k8s.io"] {
            for (it, key) in [
                (self.domains[0], format!("{domain}/test")),
                (self.domains[1], format!("subdomain.{domain}/test")),
            ] {
                out.push((
                    format!("{it}: {key}"),
                    one(format!("{{key: {key}, operator: In, values: [test]}}")),
                    Accepted,
                ));
            }
        }
        for op in ["Gt", "Lt", "Gte", "Lte"] {
            for values in ["[]", "['1', '2']", "[a]", "['-1']"] {
                let it = match op.len() {
                    2 => "should fail with invalid GT or LT values",
                    _ => "should fail with invalid GTE or LTE values",
                };
                let r = format!(
                    "{{key: topology.kubernetes.io/zone, operator: {op}, values: {values}}}"
                );
                out.push((format!("{it}: {op} {values}"), one(r), Refused(self.at)));
            }
        }
        out
    }
}

/// Core's `WellKnownLabels` (`pkg/apis/v1/labels.go`) but the NodePool and capacity-type keys.
pub(super) const WELL_KNOWN: &[&str] = &[
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/windows-build",
];

fn yaml_value(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("bad test YAML {text:?}: {e}"))
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// `base` with `patch` merged in.
pub(super) fn patched(base: &str, patch: &str) -> Value {
    let mut object = yaml_value(base);
    merge(&mut object, &yaml_value(patch));
    object
}

/// Loads `object` as JSON and as YAML; both readers must agree. `Ok(())`, or the refused
/// field and the whole message.
pub(super) fn outcome(object: &Value) -> Result<(), (String, String)> {
    let json = serde_json::to_string_pretty(object).unwrap();
    let yaml = serde_saphyr::to_string(object).unwrap();
    let read = |name: &str, text: &str| match load_str(name, text) {
        Ok(_) => Ok(()),
        Err(e) => {
            let field = match &e {
                InputError::Invalid { field, .. } => field.clone(),
                _ => "<not a field error>".into(),
            };
            let message = e.to_string().replacen(name, "<file>", 1);
            assert!(!message.contains('\n'), "not one line: {message}");
            Err((field, message))
        }
    };
    let from_json = read("cel.json", &json);
    let from_yaml = read("cel.yaml", &yaml);
    assert_eq!(
        from_json, from_yaml,
        "JSON and YAML read differently:\n{yaml}"
    );
    from_json
}

/// Runs the cases against `base`, reporting every disagreement at once.
pub(super) fn check(base: &str, cases: &[Case]) {
    let mut wrong = Vec::new();
    for (it, patch, want) in cases {
        let got = outcome(&patched(base, patch));
        let agrees = match (want, &got) {
            (Want::Ok, Ok(())) => true,
            (Want::Refused(field), Err((named, _))) => named.starts_with(field),
            _ => false,
        };
        if !agrees {
            wrong.push(format!(
                "{it}\n    patch: {patch}\n    want {want:?}, got {got:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// Numbers where the CRDs (every generation) type a string: `values: [1]` and a budget's
/// `nodes: 10` fail `kubectl apply` ("must be of type string"), and were read as the text "1"
/// and "10". Quoted numbers are strings, and `minValues` is an integer.
#[test]
fn numbers_where_the_api_types_strings_are_refused() {
    let v1 = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}\n      requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE], minValues: 1}]\n  disruption: {consolidateAfter: 0s, budgets: [{nodes: NODES}]}\n";
    let v1beta1 = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: c}\n      requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE]}]\n  disruption: {consolidationPolicy: WhenUnderutilized, budgets: [{nodes: NODES}]}\n";
    let v1alpha5 = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\nspec:\n  providerRef: {name: c}\n  requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE]}]\n";
    let claim = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: p}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}\n  requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE]}]\n";
    let overlay = "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: p}\nspec:\n  requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE]}]\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [VALUE]}]}]}}}\n";
    let with =
        |text: &str, value: &str, nodes: &str| text.replace("VALUE", value).replace("NODES", nodes);
    for (text, values_at, nodes_at) in [
        (v1, "spec.template.spec.requirements[0].values[0]", Some("spec.disruption.budgets[0].nodes")),
        (v1beta1, "spec.template.spec.requirements[0].values[0]", Some("spec.disruption.budgets[0].nodes")),
        (v1alpha5, "spec.requirements[0].values[0]", None),
        (claim, "spec.requirements[0].values[0]", None),
        (overlay, "spec.requirements[0].values[0]", None),
        (pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", None),
    ] {
        load_str("ok.yaml", &with(text, "'4'", "'10'")).unwrap_or_else(|e| panic!("{e}"));
        load_str("ok.yaml", &with(text, "\"4\"", "10%")).unwrap_or_else(|e| panic!("{e}"));
        for (value, found) in [("4", "integer `4`"), ("4.5", "floating point `4.5`"), ("true", "boolean `true`")] {
            let yaml = with(text, value, "'10'");
            let json = serde_json::to_string(&yaml_value(&yaml)).unwrap();
            for (name, text) in [("in.yaml", &yaml), ("in.json", &json)] {
                match load_str(name, text) {
                    Err(InputError::Invalid { field, message, .. }) => {
                        assert_eq!(field, values_at, "{name}: {message}");
                        assert!(message.contains(&format!("invalid type: {found}, expected a string")), "{message}");
                    }
                    other => panic!("{name} {value}: {other:?}"),
                }
            }
        }
        if let Some(at) = nodes_at {
            for nodes in ["10", "0"] {
                match load_str("in.yaml", &with(text, "'4'", nodes)) {
                    Err(InputError::Invalid { field, .. }) => assert_eq!(field, at),
                    other => panic!("nodes {nodes}: {other:?}"),
                }
            }
        }
    }
}
