//! `core v1.14.1: pkg/apis/v1/nodepool_validation_cel_test.go` ("CEL/Validation") and
//! `pkg/apis/v1/nodepool_default_test.go` ("CEL/Default"), against the v1 NodePool CRD
//! (`tests/fixtures/crds/v1/karpenter.sh_nodepools.yaml`). Upstream's base object, as a manifest.

use super::{borrowed, check, Accepted, Case, Refused, RequirementIts, WELL_KNOWN};

const BASE: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: cel}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: Exists}]
";

/// Context "Disruption".
#[test]
fn disruption() {
    let expire = "spec.template.spec.expireAfter";
    let after = "spec.disruption.consolidateAfter";
    let policy = "spec.disruption.consolidationPolicy";
    let cases: &[Case] = &[
        ("should succeed on a disabled expireAfter", "{spec: {template: {spec: {expireAfter: Never}}}}", Accepted),
        ("should succeed on a valid expireAfter: single unit", "{spec: {template: {spec: {expireAfter: 30s}}}}", Accepted),
        ("should succeed on a valid expireAfter: multiple units", "{spec: {template: {spec: {expireAfter: 1h30m5s}}}}", Accepted),
        ("should succeed on a valid expireAfter: never", "{spec: {template: {spec: {expireAfter: Never}}}}", Accepted),
        ("should fail on an invalid expireAfter: negative", "{spec: {template: {spec: {expireAfter: -1s}}}}", Refused(expire)),
        ("should fail on an invalid expireAfter: invalid unit", "{spec: {template: {spec: {expireAfter: 1hr}}}}", Refused(expire)),
        ("should fail on an invalid expireAfter: partial match", "{spec: {template: {spec: {expireAfter: FooNever}}}}", Refused(expire)),
        ("should succeed on a disabled consolidateAfter", "{spec: {disruption: {consolidateAfter: Never}}}", Accepted),
        ("should succeed on a valid consolidateAfter: single unit", "{spec: {disruption: {consolidateAfter: 30s}}}", Accepted),
        ("should succeed on a valid consolidateAfter: multiple units", "{spec: {disruption: {consolidateAfter: 1h30m5s}}}", Accepted),
        ("should succeed on a valid consolidateAfter: never", "{spec: {disruption: {consolidateAfter: Never}}}", Accepted),
        ("should fail on an invalid consolidateAfter: negative", "{spec: {disruption: {consolidateAfter: -1s}}}", Refused(after)),
        ("should fail on an invalid consolidateAfter: invalid unit", "{spec: {disruption: {consolidateAfter: 1hr}}}", Refused(after)),
        ("should fail on an invalid consolidateAfter: partial match", "{spec: {disruption: {consolidateAfter: FooNever}}}", Refused(after)),
        ("should succeed when setting consolidateAfter with consolidationPolicy=WhenEmpty", "{spec: {disruption: {consolidateAfter: 30s, consolidationPolicy: WhenEmpty}}}", Accepted),
        ("should succeed when setting consolidateAfter with consolidationPolicy=WhenUnderutilized", "{spec: {disruption: {consolidateAfter: 30s, consolidationPolicy: WhenEmptyOrUnderutilized}}}", Accepted),
        ("should succeed when setting consolidateAfter to 'Never' with consolidationPolicy=WhenUnderutilized", "{spec: {disruption: {consolidateAfter: Never, consolidationPolicy: WhenEmptyOrUnderutilized}}}", Accepted),
        ("should succeed when setting consolidateAfter to 'Never' with consolidationPolicy=WhenEmpty", "{spec: {disruption: {consolidateAfter: Never, consolidationPolicy: WhenEmpty}}}", Accepted),
        ("should succeed on a valid consolidationPolicy: WhenEmpty", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmpty}}}", Accepted),
        ("should succeed on a valid consolidationPolicy: WhenEmptyOrUnderutilized", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmptyOrUnderutilized}}}", Accepted),
        ("should succeed on a valid consolidationPolicy: Balanced", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: Balanced}}}", Accepted),
        ("should fail on an invalid consolidationPolicy: quoted 1", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '1'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: quoted 2", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '2'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: quoted 3", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '3'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: level 0", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '0'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: level 4", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '4'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: level 10", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: '10'}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: lowercase balanced", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: balanced}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: lowercase whenempty", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: whenempty}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: empty string", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: ''}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: WhenUnderutilized", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: WhenUnderutilized}}}", Refused(policy)),
        ("should fail on an invalid consolidationPolicy: arbitrary string", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: foo}}}", Refused(policy)),
        ("should pass RuntimeValidate for valid consolidationPolicy: WhenEmpty", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmpty}}}", Accepted),
        ("should pass RuntimeValidate for valid consolidationPolicy: WhenEmptyOrUnderutilized", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmptyOrUnderutilized}}}", Accepted),
        ("should pass RuntimeValidate for valid consolidationPolicy: Balanced", "{spec: {disruption: {consolidateAfter: 0s, consolidationPolicy: Balanced}}}", Accepted),
        // A Go metav1.Duration of 20m is written "20m0s".
        ("should fail when creating a budget with an invalid cron", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '*', duration: 20m0s}]}}}", Refused("spec.disruption.budgets[0].schedule")),
        ("should fail when creating a schedule with less than 5 entries", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * ', duration: 20m0s}]}}}", Refused("spec.disruption.budgets[0].schedule")),
        ("should fail when creating a budget with a negative duration", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: -20m0s}]}}}", Refused("spec.disruption.budgets[0].duration")),
        ("should fail when creating a budget with a seconds duration", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 30s}]}}}", Refused("spec.disruption.budgets[0].duration")),
        ("should fail when creating a budget with a negative value int", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '-10'}]}}}", Refused("spec.disruption.budgets[0].nodes")),
        ("should fail when creating a budget with a negative value percent", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '-10%'}]}}}", Refused("spec.disruption.budgets[0].nodes")),
        ("should fail when creating a budget with a value percent with more than 3 digits", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '1000%'}]}}}", Refused("spec.disruption.budgets[0].nodes")),
        ("should fail when creating a budget with a cron but no duration", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *'}]}}}", Refused("spec.disruption.budgets[0]")),
        ("should fail when creating a budget with a duration but no cron", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', duration: 20m0s}]}}}", Refused("spec.disruption.budgets[0]")),
        ("should succeed when creating a budget with both duration and cron", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s}]}}}", Accepted),
        ("should succeed when creating a budget with hours and minutes in duration", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 2h20m0s}]}}}", Accepted),
        ("should succeed when creating a budget with neither duration nor cron", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10'}]}}}", Accepted),
        ("should succeed when creating a budget with special cased crons", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '@annually', duration: 20m0s}]}}}", Accepted),
        ("should fail when creating two budgets where one has an invalid crontab", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '@annually', duration: 20m0s}, {nodes: '10', schedule: '*', duration: 20m0s}]}}}", Refused("spec.disruption.budgets[1].schedule")),
        ("should fail when creating multiple budgets where one doesn't have both schedule and duration", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', duration: 20m0s}, {nodes: '10', schedule: '* * * * *', duration: 20m0s}, {nodes: '10'}]}}}", Refused("spec.disruption.budgets[0]")),
        ("should succeed when creating a budget with valid reasons: Drifted", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [Drifted]}]}}}", Accepted),
        ("should succeed when creating a budget with valid reasons: Underutilized", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [Underutilized]}]}}}", Accepted),
        ("should succeed when creating a budget with valid reasons: Empty", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [Empty]}]}}}", Accepted),
        ("should fail when creating a budget with invalid reasons: invalid", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [invalid]}]}}}", Refused("spec.disruption.budgets[0].reasons[0]")),
        ("should fail when creating a budget with invalid reasons: expired", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [expired]}]}}}", Refused("spec.disruption.budgets[0].reasons[0]")),
        ("should fail when creating a budget with invalid reasons: empty", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: ['']}]}}}", Refused("spec.disruption.budgets[0].reasons[0]")),
        ("should allow setting multiple reasons", "{spec: {disruption: {consolidateAfter: 0s, budgets: [{nodes: '10', schedule: '* * * * *', duration: 20m0s, reasons: [Drifted, Empty]}]}}}", Accepted),
    ];
    check(BASE, cases);
}

/// Context "Taints". Upstream's "should fail at runtime for taint keys that are too long" is
/// accepted by the API server and refused by `RuntimeValidate` (the NodePool is then
/// `ValidationSucceeded=False` and never used): refused here, as every runtime refusal is.
#[test]
fn taints() {
    let key = "spec.template.spec.taints[0].key";
    let long = "a".repeat(250);
    let long_prefix = format!("{{spec: {{template: {{spec: {{taints: [{{key: test.com.test.{long}/test, effect: NoSchedule}}]}}}}}}}}");
    let long_name = format!("{{spec: {{template: {{spec: {{taints: [{{key: test.com.test/test-{long}, effect: NoSchedule}}]}}}}}}}}");
    let cases: &[Case] = &[
        ("should succeed for valid taints", "{spec: {template: {spec: {taints: [{key: a, value: b, effect: NoSchedule}, {key: c, value: d, effect: NoExecute}, {key: e, value: f, effect: PreferNoSchedule}, {key: Test, value: f, effect: PreferNoSchedule}, {key: test.com/Test, value: f, effect: PreferNoSchedule}, {key: test.com.com/test, value: f, effect: PreferNoSchedule}, {key: key-only, effect: NoExecute}]}}}}", Accepted),
        ("should fail for invalid taint keys: test.com.com}", "{spec: {template: {spec: {taints: [{key: 'test.com.com}', effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail for invalid taint keys: Test.com/test", "{spec: {template: {spec: {taints: [{key: Test.com/test, effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail for invalid taint keys: test/test/test", "{spec: {template: {spec: {taints: [{key: test/test/test, effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail for invalid taint keys: test/", "{spec: {template: {spec: {taints: [{key: test/, effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail for invalid taint keys: /test", "{spec: {template: {spec: {taints: [{key: /test, effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail at runtime for taint keys that are too long: prefix", &long_prefix, Refused(key)),
        ("should fail at runtime for taint keys that are too long: name", &long_name, Refused(key)),
        ("should fail for missing taint key", "{spec: {template: {spec: {taints: [{effect: NoSchedule}]}}}}", Refused(key)),
        ("should fail for invalid taint value", "{spec: {template: {spec: {taints: [{key: invalid-value, effect: NoSchedule, value: '???'}]}}}}", Refused("spec.template.spec.taints[0].value")),
        ("should fail for invalid taint effect", "{spec: {template: {spec: {taints: [{key: invalid-effect, effect: '???'}]}}}}", Refused("spec.template.spec.taints[0].effect")),
        ("should not fail for same key with different effects", "{spec: {template: {spec: {taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoExecute}]}}}}", Accepted),
    ];
    check(BASE, cases);
}

/// One requirement, as the only one of the template.
fn requirement(r: &str) -> String {
    format!("{{spec: {{template: {{spec: {{requirements: [{r}]}}}}}}}}")
}

/// Context "Requirements". The well-known labels are core's `WellKnownLabels` but the NodePool
/// and capacity-type keys (`pkg/apis/v1/labels.go`).
#[test]
fn requirements() {
    let at = "spec.template.spec.requirements[0]";
    let key = "spec.template.spec.requirements[0].key";
    let owned = RequirementIts {
        wrap: requirement,
        at,
        key,
        well_known: WELL_KNOWN,
        domains: [
            "should allow kubernetes domains",
            "should allow kubernetes subdomains exceptions",
        ],
        keys: true,
        min_values: true,
    }
    .cases();
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should succeed for valid requirement keys", "{spec: {template: {spec: {requirements: [{key: Test, operator: Exists}, {key: test.com/Test, operator: Exists}, {key: test.com.com/test, operator: Exists}, {key: key-only, operator: Exists}]}}}}", Accepted),
        ("should fail for the karpenter.sh/nodepool label", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/nodepool, operator: In, values: [silly]}]}}}}", Refused(key)),
        ("should allow supported ops", "{spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test]}, {key: topology.kubernetes.io/zone, operator: Gt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: Lt, values: ['1']}, {key: topology.kubernetes.io/zone, operator: NotIn}, {key: topology.kubernetes.io/zone, operator: Exists}]}}}}", Accepted),
        ("should fail for unsupported ops", "{spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]}}}}", Refused("spec.template.spec.requirements[0].operator")),
        ("should fail for restricted domains: karpenter.sh", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/test, operator: In, values: [test]}]}}}}", Refused(key)),
        ("should fail for restricted labels: kubernetes.io/hostname", "{spec: {template: {spec: {requirements: [{key: kubernetes.io/hostname/test, operator: In, values: [test]}]}}}}", Refused(key)),
        ("should allow non-empty set after removing overlapped value", "{spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test, foo]}, {key: topology.kubernetes.io/zone, operator: NotIn, values: [test, bar]}]}}}}", Accepted),
        ("should allow empty requirements", "{spec: {template: {spec: {requirements: []}}}}", Accepted),
        ("should error when minValues is negative", "{spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: -1}]}}}}", Refused("spec.template.spec.requirements[0].minValues")),
        ("should error when minValues is zero", "{spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 0}]}}}}", Refused("spec.template.spec.requirements[0].minValues")),
        ("should error when minValues is more than 50", "{spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 51}]}}}}", Refused("spec.template.spec.requirements[0].minValues")),
        ("should error when minValues is greater than the number of unique values specified within In operator", "{spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 2}]}}}}", Refused(at)),
    ]);
    check(BASE, &cases);
}

/// Context "Labels". "should fail for invalid label keys" and "should fail at runtime for label
/// keys that are too long" pass the API server and fail `RuntimeValidate`: refused here.
#[test]
fn labels() {
    let labels = "spec.template.metadata.labels";
    let long = "a".repeat(250);
    let long_prefix = format!(
        "{{spec: {{template: {{metadata: {{labels: {{test.com.test.{long}/test: silly}}}}}}}}}}"
    );
    let long_name = format!(
        "{{spec: {{template: {{metadata: {{labels: {{test.com.test/test-{long}: silly}}}}}}}}}}"
    );
    let cases: &[Case] = &[
        ("should allow unrecognized labels", "{spec: {template: {metadata: {labels: {foo: silly}}}}}", Accepted),
        ("should fail for the karpenter.sh/nodepool label", "{spec: {template: {metadata: {labels: {karpenter.sh/nodepool: silly}}}}}", Refused(labels)),
        ("should fail for invalid label keys", "{spec: {template: {metadata: {labels: {spaces are not allowed: silly}}}}}", Refused(labels)),
        ("should fail at runtime for label keys that are too long: prefix", &long_prefix, Refused(labels)),
        ("should fail at runtime for label keys that are too long: name", &long_name, Refused(labels)),
        ("should fail for invalid label values", "{spec: {template: {metadata: {labels: {silly: / is not allowed}}}}}", Refused(labels)),
        ("should fail for restricted label domains: karpenter.sh", "{spec: {template: {metadata: {labels: {karpenter.sh/unknown: silly}}}}}", Refused(labels)),
        ("should allow labels kOps require", "{spec: {template: {metadata: {labels: {kops.k8s.io/instancegroup: karpenter-nodes, kops.k8s.io/gpu: '1'}}}}}", Accepted),
        ("should allow labels in kubernetes domains: kubernetes.io", "{spec: {template: {metadata: {labels: {kubernetes.io: test-value}}}}}", Accepted),
        ("should allow labels in kubernetes domains: k8s.io", "{spec: {template: {metadata: {labels: {k8s.io: test-value}}}}}", Accepted),
        ("should allow labels prefixed with the kubernetes domain: kubernetes.io", "{spec: {template: {metadata: {labels: {kubernetes.io/key: test-value}}}}}", Accepted),
        ("should allow labels prefixed with the kubernetes domain: k8s.io", "{spec: {template: {metadata: {labels: {k8s.io/key: test-value}}}}}", Accepted),
        ("should allow subdomain labels in restricted domains exceptions list: kubernetes.io", "{spec: {template: {metadata: {labels: {subdomain.kubernetes.io: test-value}}}}}", Accepted),
        ("should allow subdomain labels in restricted domains exceptions list: k8s.io", "{spec: {template: {metadata: {labels: {subdomain.k8s.io: test-value}}}}}", Accepted),
        ("should allow subdomain labels prefixed with the kubernetes domain: kubernetes.io", "{spec: {template: {metadata: {labels: {subdomain.kubernetes.io/key: test-value}}}}}", Accepted),
        ("should allow subdomain labels prefixed with the kubernetes domain: k8s.io", "{spec: {template: {metadata: {labels: {subdomain.k8s.io/key: test-value}}}}}", Accepted),
    ];
    check(BASE, cases);
}

/// Contexts "TerminationGracePeriod" and "NodeClassRef" (the two mutation Its are updates of a
/// stored object, n.a.: this tool reads objects, it never updates one).
#[test]
fn termination_grace_period_and_node_class_ref() {
    let tgp = "spec.template.spec.terminationGracePeriod";
    let cases: &[Case] = &[
        (
            "should succeed on a valid terminationGracePeriod: single unit",
            "{spec: {template: {spec: {terminationGracePeriod: 30s}}}}",
            Accepted,
        ),
        (
            "should succeed on a valid terminationGracePeriod: multiple units",
            "{spec: {template: {spec: {terminationGracePeriod: 1h30m5s}}}}",
            Accepted,
        ),
        (
            "should fail on an invalid terminationGracePeriod: negative",
            "{spec: {template: {spec: {terminationGracePeriod: -1s}}}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: invalid unit",
            "{spec: {template: {spec: {terminationGracePeriod: 1hr}}}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: never",
            "{spec: {template: {spec: {terminationGracePeriod: Never}}}}",
            Refused(tgp),
        ),
        (
            "should fail on an invalid terminationGracePeriod: partial match",
            "{spec: {template: {spec: {terminationGracePeriod: FooNever}}}}",
            Refused(tgp),
        ),
        (
            "should fail if group is unset",
            "{spec: {template: {spec: {nodeClassRef: {group: ''}}}}}",
            Refused("spec.template.spec.nodeClassRef.group"),
        ),
        (
            "should fail if kind is unset",
            "{spec: {template: {spec: {nodeClassRef: {kind: ''}}}}}",
            Refused("spec.template.spec.nodeClassRef.kind"),
        ),
        (
            "should fail if name is unset",
            "{spec: {template: {spec: {nodeClassRef: {name: ''}}}}}",
            Refused("spec.template.spec.nodeClassRef.name"),
        ),
    ];
    check(BASE, cases);
}

/// Context "Replicas" (static NodePools). The four "Update Scenarios" are updates of a stored
/// object (the `has(self.replicas) == has(oldSelf.replicas)` transition rule): n.a.
#[test]
fn replicas() {
    let cases: &[Case] = &[
        ("should succeed when replicas is set to a positive value", "{spec: {replicas: 5}}", Accepted),
        ("should succeed when replicas is set to zero", "{spec: {replicas: 0}}", Accepted),
        ("should succeed when replicas is set to a large value", "{spec: {replicas: 1000}}", Accepted),
        ("should fail when replicas is set to a negative value", "{spec: {replicas: -100}}", Refused("spec.replicas")),
        ("should fail for incompatible fields: limits.cpu", "{spec: {replicas: 10, limits: {cpu: '1000'}}}", Refused("spec.limits")),
        ("should fail for incompatible fields: limits.memory", "{spec: {replicas: 10, limits: {memory: 2000Gi}}}", Refused("spec.limits")),
        ("should fail for incompatible fields: limits.pods", "{spec: {replicas: 10, limits: {pods: '10'}}}", Refused("spec.limits")),
        ("should fail for incompatible fields: limits.ephemeral-storage", "{spec: {replicas: 10, limits: {ephemeral-storage: 10Gi}}}", Refused("spec.limits")),
        ("should fail for incompatible fields: weight", "{spec: {replicas: 10, weight: 25}}", Refused("spec.weight")),
        ("should succeed for compatible fields: limits.nodes", "{spec: {replicas: 10, limits: {nodes: '100'}}}", Accepted),
        ("should succeed for compatible fields: disruption with multiple budgets", "{spec: {replicas: 10, disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m0s, budgets: [{nodes: 20%, schedule: '0 9 * * mon-fri', duration: 8h0m0s, reasons: [Drifted, Empty]}, {nodes: 30%, schedule: '0 22 * * sat,sun', duration: 4h0m0s, reasons: [Underutilized]}, {nodes: '5'}]}}}", Accepted),
        ("should succeed for compatible fields: template labels", "{spec: {replicas: 10, template: {metadata: {labels: {environment: production}}}}}", Accepted),
        ("should succeed for compatible fields: template annotations", "{spec: {replicas: 10, template: {metadata: {annotations: {example.com/last-updated: '2024-01-01'}}}}}", Accepted),
        ("should succeed for compatible fields: taints", "{spec: {replicas: 10, template: {spec: {taints: [{key: gpu-workload, value: enabled, effect: NoSchedule}]}}}}", Accepted),
        ("should succeed for compatible fields: startup taints", "{spec: {replicas: 10, template: {spec: {startupTaints: [{key: example.com/initializing, value: 'true', effect: NoSchedule}]}}}}", Accepted),
        ("should succeed for compatible fields: requirements", "{spec: {replicas: 10, template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, m5.2xlarge, c5.large, c5.xlarge, r5.large, r5.xlarge], minValues: 3}, {key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a, us-west-2b, us-west-2c]}, {key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]}, {key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-memory, operator: Gt, values: ['8192']}, {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ['64']}]}}}}", Accepted),
        ("should succeed for compatible fields: expireAfter", "{spec: {replicas: 10, template: {spec: {expireAfter: 72h}}}}", Accepted),
        ("should succeed for compatible fields: terminationGracePeriod", "{spec: {replicas: 10, template: {spec: {terminationGracePeriod: 5m0s}}}}", Accepted),
    ];
    check(BASE, cases);
}

/// `nodepool_default_test.go` "should default the disruption stanza when undefined": the CRD's
/// defaults, `consolidateAfter: 0s`, `WhenEmptyOrUnderutilized`, `budgets: [{nodes: 10%}]`.
#[test]
fn the_disruption_stanza_defaults_when_undefined() {
    let m = crate::api::load_str("np.yaml", BASE).unwrap();
    let d = &m.node_pools[0].disruption;
    assert_eq!(d.consolidate_after.as_deref(), Some("0s"));
    assert_eq!(d.consolidation_policy, "WhenEmptyOrUnderutilized");
    assert_eq!(d.budgets.len(), 1);
    assert_eq!(d.budgets[0].nodes, "10%");
    assert_eq!(
        (&d.budgets[0].schedule, &d.budgets[0].duration),
        (&None, &None)
    );
    assert!(d.budgets[0].reasons.is_empty());
}

/// The NodePool validation controller's well-known values (`core v1.14.1:
/// pkg/apis/v1/nodeclaim_validation.go` `validateWellKnownValues`, run by `RuntimeValidate`;
/// `pkg/controllers/nodepool/validation/suite_test.go` "should fail validation with only invalid
/// capacity types", "should fail open if invalid and valid capacity types are present"; aws
/// v1.14.1 `pkg/apis/v1/labels.go` adds `instance-tenancy`): an `In` naming only unknown
/// values leaves the NodePool `ValidationSucceeded=False` — never used — so it is refused here,
/// as every runtime refusal is. Seen in the wild:
/// https://github.com/kubernetes-sigs/karpenter/pull/2164 (`capacity-type In [xspot]`).
#[test]
fn well_known_values() {
    let values = "spec.template.spec.requirements[0].values";
    let cases: &[Case] = &[
        ("should fail validation with only invalid capacity types", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [xspot]}]}}}}", Refused(values)),
        ("should pass validation with valid capacity types", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}}}", Accepted),
        ("should fail open if invalid and valid capacity types are present", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, xspot]}]}}}}", Accepted),
        ("NotIn is not checked", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: NotIn, values: [xspot]}]}}}}", Accepted),
        ("minValues counts only the known values", "{spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot, xspot], minValues: 2}]}}}}", Refused(values)),
        ("aws: instance-tenancy has known values", "{spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-tenancy, operator: In, values: [host]}]}}}}", Refused(values)),
        ("aws: instance-tenancy dedicated", "{spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-tenancy, operator: In, values: [dedicated]}]}}}}", Accepted),
        // aws v1.14.1 `pkg/apis/v1/nodepool_validation_cel_test.go` › Requirements (s25-audit-apis).
        ("aws: should fail validation with only invalid tenancy types", "{spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-tenancy, operator: In, values: [xdedicated]}]}}}}", Refused(values)),
        ("aws: should pass validation with valid tenancy types", "{spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-tenancy, operator: In, values: [default]}]}}}}", Accepted),
        ("aws: should fail open if invalid and valid tenancy types are present", "{spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-tenancy, operator: In, values: [default, xdedicated]}]}}}}", Accepted),
    ];
    check(BASE, cases);
}

/// `spec.disruption` defaults to `{consolidateAfter: 0s}` only when it is absent; written without
/// `consolidateAfter` it is refused ("spec.disruption.consolidateAfter: Required value"; core
/// v1.14.1: pkg/apis/crds/karpenter.sh_nodepools.yaml, `disruption.required:
/// [consolidateAfter]`). Seen in the wild: https://github.com/luminartech/helm-charts-public/pull/380.
#[test]
fn consolidate_after_is_required_in_a_written_disruption() {
    let after = "spec.disruption.consolidateAfter";
    let cases: &[Case] = &[
        ("disruption absent: defaulted", "{spec: {}}", Accepted),
        (
            "disruption without consolidateAfter",
            "{spec: {disruption: {consolidationPolicy: WhenEmpty}}}",
            Refused(after),
        ),
        (
            "empty disruption",
            "{spec: {disruption: {}}}",
            Refused(after),
        ),
        (
            "disruption with budgets only",
            "{spec: {disruption: {budgets: [{nodes: '1'}]}}}",
            Refused(after),
        ),
    ];
    check(BASE, cases);
}
