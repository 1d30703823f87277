//! The CRDs' `required:` lists, rule by rule and generation by generation (docs/upstream-tests.md
//! "Required fields, as the API server takes them (s31-required)"): each field the vendored CRD
//! of a generation lists as required (outside `status`, without the ones a `default` fills) is
//! taken out of a complete object, which is then refused naming that field (`Required value`,
//! as the API server says it), whatever `--validate` says; the table is checked against the
//! generated schema so a rule the CRDs add is not missed. Also the webhook rules of the same
//! kind: a v1beta1 NodePool template's `resources` and a Provisioner without a provider.

use serde_json::Value;

use super::{outcome, yaml_value};
use crate::api::schema::{self, with_validation, Validation};

/// One generation: its CRD file, a complete object, and the paths of its required fields
/// (`[0]` where the CRD has a list's items).
struct Generation {
    crd: &'static str,
    base: &'static str,
    required: &'static [&'static str],
}

const GENERATIONS: &[Generation] = &[
    Generation {
        crd: "tests/fixtures/crds/v1/karpenter.sh_nodepools.yaml (v1)",
        base: "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  disruption: {consolidateAfter: 30s, budgets: [{nodes: '10%'}]}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
      taints: [{key: a, effect: NoSchedule}]
      startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec",
            "spec.disruption.consolidateAfter",
            "spec.template",
            "spec.template.spec",
            "spec.template.spec.nodeClassRef",
            "spec.template.spec.nodeClassRef.group",
            "spec.template.spec.nodeClassRef.kind",
            "spec.template.spec.nodeClassRef.name",
            "spec.template.spec.requirements",
            "spec.template.spec.requirements[0].key",
            "spec.template.spec.requirements[0].operator",
            "spec.template.spec.startupTaints[0].effect",
            "spec.template.spec.startupTaints[0].key",
            "spec.template.spec.taints[0].effect",
            "spec.template.spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1beta1/karpenter.sh_nodepools.yaml (v1beta1)",
        base: "apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: p}
spec:
  disruption: {budgets: [{nodes: '10%'}]}
  template:
    spec:
      nodeClassRef: {name: c}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
      taints: [{key: a, effect: NoSchedule}]
      startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec",
            "spec.template",
            "spec.template.spec",
            "spec.template.spec.nodeClassRef",
            "spec.template.spec.nodeClassRef.name",
            "spec.template.spec.requirements",
            "spec.template.spec.requirements[0].key",
            "spec.template.spec.requirements[0].operator",
            "spec.template.spec.startupTaints[0].effect",
            "spec.template.spec.startupTaints[0].key",
            "spec.template.spec.taints[0].effect",
            "spec.template.spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1/karpenter.sh_nodeclaims.yaml (v1)",
        base: "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: c}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  taints: [{key: a, effect: NoSchedule}]
  startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec",
            "spec.nodeClassRef",
            "spec.nodeClassRef.group",
            "spec.nodeClassRef.kind",
            "spec.nodeClassRef.name",
            "spec.requirements",
            "spec.requirements[0].key",
            "spec.requirements[0].operator",
            "spec.startupTaints[0].effect",
            "spec.startupTaints[0].key",
            "spec.taints[0].effect",
            "spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1beta1/karpenter.sh_nodeclaims.yaml (v1beta1)",
        base: "apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: c}
spec:
  nodeClassRef: {name: c}
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  taints: [{key: a, effect: NoSchedule}]
  startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec",
            "spec.nodeClassRef",
            "spec.nodeClassRef.name",
            "spec.requirements",
            "spec.requirements[0].key",
            "spec.requirements[0].operator",
            "spec.startupTaints[0].effect",
            "spec.startupTaints[0].key",
            "spec.taints[0].effect",
            "spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1/karpenter.k8s.aws_ec2nodeclasses.yaml (v1)",
        base: "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: c}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: r
  securityGroupSelectorTerms: [{tags: {a: b}}]
  subnetSelectorTerms: [{tags: {a: b}}]
  networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}]
",
        required: &[
            "spec.amiSelectorTerms",
            "spec.networkInterfaces[0].deviceIndex",
            "spec.networkInterfaces[0].interfaceType",
            "spec.networkInterfaces[0].networkCardIndex",
            "spec.securityGroupSelectorTerms",
            "spec.subnetSelectorTerms",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1beta1/karpenter.k8s.aws_ec2nodeclasses.yaml (v1beta1)",
        base: "apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: c}
spec:
  amiFamily: AL2
  role: r
  securityGroupSelectorTerms: [{tags: {a: b}}]
  subnetSelectorTerms: [{tags: {a: b}}]
",
        required: &[
            "spec.amiFamily",
            "spec.securityGroupSelectorTerms",
            "spec.subnetSelectorTerms",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1alpha1/karpenter.sh_nodeoverlays.yaml (v1alpha1)",
        base: "apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: o}
spec:
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  price: '0.5'
",
        required: &[
            "spec",
            "spec.requirements",
            "spec.requirements[0].key",
            "spec.requirements[0].operator",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1alpha5/karpenter.sh_provisioners.yaml (v1alpha5)",
        base: "apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: p}
spec:
  providerRef: {name: t}
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  taints: [{key: a, effect: NoSchedule}]
  startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec.providerRef.name",
            "spec.requirements[0].key",
            "spec.requirements[0].operator",
            "spec.startupTaints[0].effect",
            "spec.startupTaints[0].key",
            "spec.taints[0].effect",
            "spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1alpha5/karpenter.sh_machines.yaml (v1alpha5)",
        base: "apiVersion: karpenter.sh/v1alpha5
kind: Machine
metadata: {name: m}
spec:
  machineTemplateRef: {name: t}
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  taints: [{key: a, effect: NoSchedule}]
  startupTaints: [{key: b, effect: NoSchedule}]
",
        required: &[
            "spec.machineTemplateRef.name",
            "spec.requirements[0].key",
            "spec.requirements[0].operator",
            "spec.startupTaints[0].effect",
            "spec.startupTaints[0].key",
            "spec.taints[0].effect",
            "spec.taints[0].key",
        ],
    },
    Generation {
        crd: "tests/fixtures/crds/v1alpha5/karpenter.k8s.aws_awsnodetemplates.yaml (v1alpha1)",
        base: "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata: {name: t}
spec:
  subnetSelector: {a: b}
  securityGroupSelector: {a: b}
",
        required: &[],
    },
    Generation {
        crd: "tests/fixtures/crds/autoscaling/autoscaling.x-k8s.io_capacitybuffers.yaml (v1beta1)",
        base: "apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: b}
spec:
  scalableRef: {kind: Deployment, name: web}
  percentage: 50
",
        required: &["spec", "spec.scalableRef.kind", "spec.scalableRef.name"],
    },
    Generation {
        crd: "tests/fixtures/crds/autoscaling/autoscaling.x-k8s.io_capacitybuffers.yaml (v1beta1)",
        base: "apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: b}
spec:
  podTemplateRef: {name: t}
  replicas: 2
",
        required: &["spec", "spec.podTemplateRef.name"],
    },
];

/// `object` without the field at `path` (`a.b[0].c`).
fn without(object: &Value, path: &str) -> Value {
    let mut out = object.clone();
    let mut at = &mut out;
    let steps: Vec<&str> = path.split('.').collect();
    for (i, step) in steps.iter().enumerate() {
        let (name, index) = match step.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (*step, None),
        };
        if i + 1 == steps.len() && index.is_none() {
            at.as_object_mut().unwrap().remove(name);
            return out;
        }
        at = &mut at[name];
        if let Some(n) = index {
            at = &mut at[n];
        }
    }
    out
}

fn mode_name(mode: Validation) -> &'static str {
    match mode {
        Validation::Strict => "strict",
        Validation::Warn => "warn",
        Validation::Ignore => "ignore",
    }
}

/// Each generation's complete object loads; without any one of its required fields it is
/// refused naming that field, under every `--validate` (the API server refuses it on create
/// whatever kubectl's field validation).
#[test]
fn each_required_field_of_each_generation_is_refused_when_missing() {
    let mut wrong = Vec::new();
    for g in GENERATIONS {
        let base = yaml_value(g.base);
        for mode in [Validation::Strict, Validation::Warn, Validation::Ignore] {
            with_validation(mode, || {
                if let Err(e) = outcome(&base) {
                    wrong.push(format!(
                        "{} ({}): the complete object: {e:?}",
                        g.crd,
                        mode_name(mode)
                    ));
                }
                for path in g.required {
                    let got = outcome(&without(&base, path));
                    let agrees = matches!(&got, Err((field, message))
                        if field == path && message.contains(&format!("{path}: Required value")));
                    if !agrees {
                        wrong.push(format!(
                            "{} ({}): without {path}: {got:?}",
                            g.crd,
                            mode_name(mode)
                        ));
                    }
                }
            });
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The table above is every rule the generated schema holds: a regenerated CRD that adds a
/// `required:` entry fails here until a case covers it.
#[test]
fn the_table_holds_every_required_rule_of_the_vendored_crds() {
    let mut by_kind: std::collections::BTreeMap<(String, String), (&str, Vec<String>)> =
        std::collections::BTreeMap::new();
    for g in GENERATIONS {
        let base = yaml_value(g.base);
        let text = |field: &str| base[field].as_str().unwrap().to_string();
        let entry = by_kind
            .entry((text("apiVersion"), text("kind")))
            .or_insert((g.crd, Vec::new()));
        entry
            .1
            .extend(g.required.iter().map(|p| p.replace("[0]", "[]")));
    }
    for ((api_version, kind), (crd, mut want)) in by_kind {
        want.sort();
        want.dedup();
        assert_eq!(schema::required_paths(&api_version, &kind), want, "{crd}");
    }
}

/// A `default` fills the field before the required check (a v1 budget's `nodes`, default
/// `10%`); `status` is dropped on create (a condition without `lastTransitionTime`), and an
/// empty list is written (`requirements: []`): all load.
#[test]
fn defaulted_fields_status_and_empty_lists_are_not_refused() {
    let v1 = yaml_value(GENERATIONS[0].base);
    let cases = [
        without(&v1, "spec.disruption.budgets[0].nodes"),
        without(&v1, "spec.disruption"),
        {
            let mut o = v1.clone();
            o["spec"]["template"]["spec"]["requirements"] = Value::Array(vec![]);
            o["status"] = yaml_value("conditions: [{type: Ready}]");
            o
        },
    ];
    for object in &cases {
        assert_eq!(outcome(object), Ok(()), "{object}");
    }
}

/// Kubernetes kinds' OpenAPI `required` lists are not enforced (decided: hand-written input the
/// plan reads well would be refused, docs/commands.md "Input"): a container's environment
/// variable without `name` (`EnvVar`'s `required: [name]`) still loads. (A container without
/// `name` is refused by a rule of its own, `api::pods::containers`.)
#[test]
fn kubernetes_kinds_are_not_held_to_their_openapi_required_lists() {
    let deployment = yaml_value(
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, env: [{value: x}]}]
",
    );
    assert_eq!(outcome(&deployment), Ok(()));
}

/// A v1beta1 NodePool's template `resources` with requests: the CRD's `maxProperties: 0` (and
/// the webhook's `NodeClaimTemplate.validate` `ErrDisallowedFields`, core v0.37.7); an empty
/// `resources: {}` passes. A Provisioner with neither `providerRef` nor `provider`: the v0.31
/// webhook's `validateProvider` (`ErrMissingOneOf`, core v0.31.4
/// pkg/apis/v1alpha5/provisioner_validation.go).
#[test]
fn the_webhook_rules_beside_them_are_refused() {
    let v1beta1 = yaml_value(GENERATIONS[1].base);
    let mut with = v1beta1.clone();
    with["spec"]["template"]["spec"]["resources"] = yaml_value("requests: {cpu: '1'}");
    let got = outcome(&with);
    assert!(
        matches!(&got, Err((field, message)) if field == "spec.template.spec.resources"
            && message.contains("Too many: 1: must have at most 0 items")),
        "{got:?}"
    );
    with["spec"]["template"]["spec"]["resources"] = yaml_value("{}");
    assert_eq!(outcome(&with), Ok(()));

    let provisioner = yaml_value(GENERATIONS[7].base);
    assert_eq!(provisioner["kind"], "Provisioner");
    let got = outcome(&without(&provisioner, "spec.providerRef"));
    assert!(
        matches!(&got, Err((field, message)) if field == "spec.providerRef"
            && message.contains("expected exactly one, got neither: spec.provider, spec.providerRef")),
        "{got:?}"
    );
}
