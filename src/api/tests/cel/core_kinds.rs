//! The API server's own rules for the core kinds this tool reads (not Karpenter's CRDs): what
//! `kubectl apply --dry-run=server` refuses of a Pod, a workload's template, a Job and a
//! PodDisruptionBudget, from `k8s.io/kubernetes pkg/apis/core/validation/validation.go`,
//! `pkg/apis/apps/validation`, `pkg/apis/batch/validation`, `pkg/apis/policy/validation` and
//! `k8s.io/apimachinery pkg/api/validation` / `pkg/apis/meta/v1/validation` (the functions are
//! named per group). Same harness as Karpenter's CEL Its: a merge patch on a valid base, read as
//! JSON and as YAML. Ledger: docs/upstream-tests.md "API validation, defaults and settings left
//! unmirrored, audited (s25-audit-apis)".

use super::{check, Accepted, Case, Refused};

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: a}}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]\n";

/// `ValidateObjectMeta` (`ValidateLabels`, `ValidateAnnotations`) for every kind.
#[test]
fn object_meta_labels_and_annotations() {
    let cases: &[Case] = &[
        (
            "label key with two slashes",
            "{metadata: {labels: {a/b/c: x}}}",
            Refused("metadata.labels[a/b/c]"),
        ),
        (
            "label value starting with '-'",
            "{metadata: {labels: {app: -bad}}}",
            Refused("metadata.labels.app"),
        ),
        (
            "label value of 64 characters",
            &"{metadata: {labels: {app: AAAA}}}".replace("AAAA", &"a".repeat(64)),
            Refused("metadata.labels.app"),
        ),
        (
            "empty label value",
            "{metadata: {labels: {app: ''}}}",
            Accepted,
        ),
        (
            "annotation key with a space",
            "{metadata: {annotations: {'a b': x}}}",
            Refused("metadata.annotations[a b]"),
        ),
        (
            "annotation key in upper case (lower-cased before the check)",
            "{metadata: {annotations: {Example.COM/Key: x}}}",
            Accepted,
        ),
        (
            "annotation value is free text",
            "{metadata: {annotations: {a: '-- any text --'}}}",
            Accepted,
        ),
    ];
    check(POD, cases);
    // A Karpenter object's metadata too (the API server validates a custom resource's).
    let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}\n      requirements: []\n";
    check(
        pool,
        &[(
            "NodePool label value",
            "{metadata: {labels: {team: a_}}}",
            Refused("metadata.labels.team"),
        )],
    );
}

/// `ValidatePodSpecificAnnotations`: `controller.kubernetes.io/pod-deletion-cost` must be a
/// 32bit integer written plainly (`pkg/apis/core/helper GetDeletionCostFromPodAnnotations`),
/// on a Pod and on a workload's template; Karpenter's `EvictionCost` (core v1.14.1
/// `pkg/utils/disruption/disruption.go`) only ever reads such a value (s28-linecand).
#[test]
fn pod_deletion_cost_is_a_32bit_integer() {
    let at = Refused("metadata.annotations[controller.kubernetes.io/pod-deletion-cost]");
    let cost = |v: &str| {
        format!(
            "{{metadata: {{annotations: {{controller.kubernetes.io/pod-deletion-cost: '{v}'}}}}}}"
        )
    };
    let owned: Vec<(String, String, super::Want)> = vec![
        ("a fraction".into(), cost("1.5"), at),
        ("a leading plus".into(), cost("+10"), at),
        ("a leading zero".into(), cost("008"), at),
        ("beyond int32".into(), cost("2147483648"), at),
        ("not a number".into(), cost("high"), at),
        ("empty".into(), cost(""), at),
        ("zero".into(), cost("0"), Accepted),
        ("negative".into(), cost("-100"), Accepted),
        ("int32 maximum".into(), cost("2147483647"), Accepted),
    ];
    check(POD, &super::borrowed(&owned));
}

/// `ValidateTolerations`, `ValidateTopologySpreadConstraints` (`ValidateSpreadConstraintNotRepeat`,
/// `validateMinDomains`, `ValidateTopologyKey`), `validatePodAffinityTerm`, `ValidateNodeSelector`,
/// `ValidateLabelSelector`.
#[test]
fn scheduling_terms() {
    let spread = |extra: &str| {
        format!("{{spec: {{topologySpreadConstraints: [{{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: a}}}}{extra}}}]}}}}")
    };
    let anti = |term: &str| {
        format!("{{spec: {{affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}}}}}}}")
    };
    let owned: Vec<(String, String, super::Want)> = vec![
        ("toleration key with a space".into(), "{spec: {tolerations: [{key: 'a b', operator: Exists}]}}".into(), Refused("spec.tolerations[0].key")),
        ("tolerationSeconds with NoSchedule".into(), "{spec: {tolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]}}".into(), Refused("spec.tolerations[0].effect")),
        ("tolerationSeconds with NoExecute".into(), "{spec: {tolerations: [{key: a, operator: Exists, effect: NoExecute, tolerationSeconds: 5}]}}".into(), Accepted),
        ("Equal toleration value not a label value".into(), "{spec: {tolerations: [{key: a, operator: Equal, value: -x-}]}}".into(), Refused("spec.tolerations[0].operator")),
        ("minDomains with ScheduleAnyway".into(), "{spec: {topologySpreadConstraints: [{maxSkew: 1, minDomains: 2, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]}}".into(), Refused("spec.topologySpreadConstraints[0].minDomains")),
        ("minDomains with DoNotSchedule".into(), spread(", minDomains: 2"), Accepted),
        ("two spreads on one key and action".into(), "{spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}}".into(), Refused("spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}")),
        ("two spreads on one key, different actions".into(), "{spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}}".into(), Accepted),
        ("a spread's topologyKey is only required, not checked".into(), "{spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: 'a b', whenUnsatisfiable: ScheduleAnyway}]}}".into(), Accepted),
        ("selector matchLabels value".into(), spread("").replace("{app: a}", "{app: -a}"), Refused("spec.topologySpreadConstraints[0].labelSelector.matchLabels.app")),
        ("selector expression key".into(), spread("").replace("matchLabels: {app: a}", "matchExpressions: [{key: 'a b', operator: Exists}]"), Refused("spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].key")),
        ("selector expression value".into(), spread("").replace("matchLabels: {app: a}", "matchExpressions: [{key: a, operator: In, values: [-x]}]"), Refused("spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values[0]")),
        ("affinity topologyKey with a space".into(), anti("{topologyKey: 'a b', labelSelector: {matchLabels: {app: a}}}"), Refused("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey")),
        ("affinity namespace not a namespace name".into(), anti("{topologyKey: kubernetes.io/hostname, namespaces: [Bad_NS], labelSelector: {matchLabels: {app: a}}}"), Refused("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]")),
        ("required node affinity without terms".into(), "{spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}}}".into(), Refused("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")),
    ];
    check(POD, &super::borrowed(&owned));
}

/// `validateContainers`, `validateInitContainers`, `validateContainerPorts`, `validateHostNetwork`,
/// `validateRestartPolicy`.
#[test]
fn containers_ports_and_restart_policy() {
    let port = |p: &str| format!("{{spec: {{containers: [{{name: c, image: i, ports: [{p}]}}]}}}}");
    let owned: Vec<(String, String, super::Want)> = vec![
        ("container name in upper case".into(), "{spec: {containers: [{name: C, image: i}]}}".into(), Refused("spec.containers[0].name")),
        ("container without a name".into(), "{spec: {containers: [{image: i}]}}".into(), Refused("spec.containers[0].name")),
        ("restartPolicy Sometimes".into(), "{spec: {restartPolicy: Sometimes}}".into(), Refused("spec.restartPolicy")),
        ("restartPolicy Never".into(), "{spec: {restartPolicy: Never}}".into(), Accepted),
        ("init container restartPolicy Never".into(), "{spec: {initContainers: [{name: i, image: i, restartPolicy: Never}]}}".into(), Refused("spec.initContainers[0].restartPolicy")),
        ("sidecar (init container restartPolicy Always)".into(), "{spec: {initContainers: [{name: i, image: i, restartPolicy: Always}]}}".into(), Accepted),
        ("containerPort 0".into(), port("{containerPort: 0}"), Refused("spec.containers[0].ports[0].containerPort")),
        ("containerPort 70000".into(), port("{containerPort: 70000}"), Refused("spec.containers[0].ports[0].containerPort")),
        ("protocol in lower case".into(), port("{containerPort: 80, protocol: tcp}"), Refused("spec.containers[0].ports[0].protocol")),
        ("port name of 16 characters".into(), port("{containerPort: 80, name: abcdefghijklmnop}"), Refused("spec.containers[0].ports[0].name")),
        ("two ports named alike".into(), port("{containerPort: 80, name: web}, {containerPort: 81, name: web}"), Refused("spec.containers[0].ports[1].name")),
        ("hostNetwork with hostPort unlike containerPort".into(), "{spec: {hostNetwork: true, containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 81}]}]}}".into(), Refused("spec.containers[0].ports[0].hostPort")),
        ("hostNetwork with hostPort = containerPort".into(), "{spec: {hostNetwork: true, containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 80}]}]}}".into(), Accepted),
    ];
    check(POD, &super::borrowed(&owned));
}

/// `ValidateDeploymentSpec` / `ValidateDaemonSetSpec` (selector required, not empty; pods
/// restart Always), `validateJobSpec` (pods restart OnFailure or Never).
#[test]
fn controllers_select_their_pods_and_restart_them_their_way() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: default}\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: c, image: i}]}\n";
    check(
        deployment,
        &[
            (
                "no selector",
                "{spec: {selector: null}}",
                Refused("spec.selector"),
            ),
            (
                "template label value (ValidatePodTemplateSpec)",
                "{spec: {template: {metadata: {labels: {tier: -x}}}}}",
                Refused("spec.template.metadata.labels.tier"),
            ),
            (
                "template restartPolicy Never",
                "{spec: {template: {spec: {restartPolicy: Never}}}}",
                Refused("spec.template.spec.restartPolicy"),
            ),
            (
                "template restartPolicy Always",
                "{spec: {template: {spec: {restartPolicy: Always}}}}",
                Accepted,
            ),
        ],
    );
    // A merge patch cannot empty a map: these edit the base.
    for empty in ["{}", "{matchLabels: {}}", "{matchExpressions: []}"] {
        let base = deployment.replace("{matchLabels: {app: a}}", empty);
        check(&base, &[(empty, "{}", Refused("spec.selector"))]);
    }
    let daemonset = deployment.replace("kind: Deployment", "kind: DaemonSet");
    check(
        &daemonset,
        &[(
            "DaemonSet template restartPolicy OnFailure",
            "{spec: {template: {spec: {restartPolicy: OnFailure}}}}",
            Refused("spec.template.spec.restartPolicy"),
        )],
    );
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\nspec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}\n";
    check(
        job,
        &[
            (
                "Job restartPolicy unset (the pod default, Always)",
                "{spec: {template: {spec: {restartPolicy: null}}}}",
                Refused("spec.template.spec.restartPolicy"),
            ),
            (
                "Job restartPolicy Always",
                "{spec: {template: {spec: {restartPolicy: Always}}}}",
                Refused("spec.template.spec.restartPolicy"),
            ),
            (
                "Job restartPolicy OnFailure",
                "{spec: {template: {spec: {restartPolicy: OnFailure}}}}",
                Accepted,
            ),
        ],
    );
}

/// `ValidatePodDisruptionBudgetSpec` (`ValidatePositiveIntOrPercent`, `IsNotMoreThan100Percent`).
#[test]
fn pod_disruption_budgets() {
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: default}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: a}}}\n";
    check(
        pdb,
        &[
            (
                "minAvailable and maxUnavailable",
                "{spec: {minAvailable: 1}}",
                Refused("spec"),
            ),
            (
                "negative maxUnavailable",
                "{spec: {maxUnavailable: -1}}",
                Refused("spec.maxUnavailable"),
            ),
            (
                "150%",
                "{spec: {maxUnavailable: 150%}}",
                Refused("spec.maxUnavailable"),
            ),
            ("100%", "{spec: {maxUnavailable: 100%}}", Accepted),
            (
                "a count as text",
                "{spec: {maxUnavailable: '1'}}",
                Refused("spec.maxUnavailable"),
            ),
            (
                "x%",
                "{spec: {maxUnavailable: x%}}",
                Refused("spec.maxUnavailable"),
            ),
            (
                "minAvailable 0%",
                "{spec: {maxUnavailable: null, minAvailable: 0%}}",
                Accepted,
            ),
            (
                "unknown unhealthyPodEvictionPolicy",
                "{spec: {unhealthyPodEvictionPolicy: Sometimes}}",
                Refused("spec.unhealthyPodEvictionPolicy"),
            ),
            (
                "AlwaysAllow",
                "{spec: {unhealthyPodEvictionPolicy: AlwaysAllow}}",
                Accepted,
            ),
            (
                "selector value",
                "{spec: {selector: {matchLabels: {app: -a}}}}",
                Refused("spec.selector.matchLabels.app"),
            ),
        ],
    );
}

/// `ValidatePersistentVolume` › `ValidateNodeSelector`.
#[test]
fn a_persistent_volumes_required_node_affinity_needs_a_term() {
    let pv = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {accessModes: [ReadWriteOnce], capacity: {storage: 1Gi}, csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}}\n";
    check(pv, &[
        ("nodeSelectorTerms: []", "{spec: {nodeAffinity: {required: {nodeSelectorTerms: []}}}}", Refused("spec.nodeAffinity.required.nodeSelectorTerms")),
        ("one term", "{spec: {nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]}]}}}}", Accepted),
    ]);
}

/// `ValidatePersistentVolumeClaimSpec` (a claim object; a StatefulSet's claim templates are
/// not checked) and `pkg/apis/storage/validation` `ValidateStorageClass`.
#[test]
fn claims_and_storage_classes() {
    let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: default}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
    check(
        pvc,
        &[
            (
                "no access mode",
                "{spec: {accessModes: null}}",
                Refused("spec.accessModes"),
            ),
            (
                "unknown access mode",
                "{spec: {accessModes: [ReadWriteSome]}}",
                Refused("spec.accessModes[0]"),
            ),
            (
                "ReadWriteOncePod",
                "{spec: {accessModes: [ReadWriteOncePod]}}",
                Accepted,
            ),
            (
                "no storage request",
                "{spec: {resources: null}}",
                Refused("spec.resources.requests[storage]"),
            ),
            (
                "storage 0",
                "{spec: {resources: {requests: {storage: '0'}}}}",
                Refused("spec.resources.requests[storage]"),
            ),
            (
                "volumeMode Disk",
                "{spec: {volumeMode: Disk}}",
                Refused("spec.volumeMode"),
            ),
            ("volumeMode Block", "{spec: {volumeMode: Block}}", Accepted),
        ],
    );
    let sc = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: ebs.csi.aws.com\n";
    check(
        sc,
        &[
            (
                "provisioner with a space",
                "{provisioner: 'a b'}",
                Refused("provisioner"),
            ),
            (
                "provisioner in upper case (lower-cased first)",
                "{provisioner: EBS.CSI.AWS.COM}",
                Accepted,
            ),
            (
                "reclaimPolicy Keep",
                "{reclaimPolicy: Keep}",
                Refused("reclaimPolicy"),
            ),
            ("reclaimPolicy Retain", "{reclaimPolicy: Retain}", Accepted),
        ],
    );
    check(
        POD,
        &[
            (
                "nodeName not a node's name",
                "{spec: {nodeName: A_b}}",
                Refused("spec.nodeName"),
            ),
            (
                "two volumes named alike",
                "{spec: {volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]}}",
                Refused("spec.volumes[1].name"),
            ),
        ],
    );
}
