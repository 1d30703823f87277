//! Strict field validation: the typos of issue #12 item 9, fields the API server knows but a
//! plan never reads, and the escape hatch.

use crate::api::{load_str, InputError};

const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: 10}
";

fn error_of(text: &str) -> String {
    match load_str("in.yaml", text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted:\n{text}"),
    }
}

fn invalid_field(text: &str) -> (String, String) {
    match load_str("in.yaml", text) {
        Err(InputError::Invalid { field, message, .. }) => (field, message),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_misspelt_karpenter_field_is_refused_with_its_path_and_a_suggestion() {
    let (field, message) =
        invalid_field(&POOL.replace("      requirements:", "      requirments:"));
    assert_eq!(field, "spec.template.spec.requirments");
    assert!(
        message.starts_with("unknown field (did you mean requirements?)"),
        "{message}"
    );
    let (field, message) = invalid_field(&POOL.replace("  limits:", "  limit:"));
    assert_eq!(field, "spec.limit");
    assert!(message.contains("did you mean limits?"), "{message}");
}

#[test]
fn a_misspelt_pod_field_is_refused_deep_in_a_workload() {
    let deployment = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeselector: {team: a}
      containers:
      - name: web
        image: nginx
        resources: {requets: {cpu: 1}}
";
    let (field, message) = invalid_field(deployment);
    assert_eq!(field, "spec.template.spec.nodeselector");
    assert!(message.contains("did you mean nodeSelector?"), "{message}");
    let (field, message) =
        invalid_field(&deployment.replace("      nodeselector: {team: a}\n", ""));
    assert_eq!(field, "spec.template.spec.containers[0].resources.requets");
    assert!(message.contains("did you mean requests?"), "{message}");
    let affinity = "apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, image: x}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecutio:
        nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]
";
    let (field, message) = invalid_field(affinity);
    assert_eq!(
        field,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecutio"
    );
    assert!(
        message.contains("did you mean requiredDuringSchedulingIgnoredDuringExecution?"),
        "{message}"
    );
}

#[test]
fn fields_the_api_server_knows_are_read_past_quietly() {
    let pod = "apiVersion: v1
kind: Pod
metadata: {name: p, finalizers: [x], managedFields: []}
spec:
  serviceAccountName: app
  volumes: [{name: data, emptyDir: {}}]
  securityContext: {runAsNonRoot: true}
  containers:
  - name: a
    image: x
    env: [{name: A, value: b}]
    ports: [{containerPort: 80}]
    livenessProbe: {httpGet: {path: /, port: 80}}
status: {phase: Pending, qosClass: BestEffort}
";
    let m = load_str("in.yaml", pod).unwrap();
    assert_eq!(m.pods.len(), 1);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    load_str("in.yaml", POOL).unwrap();
}

#[test]
fn a_v1_nodepool_kubelet_points_to_the_node_class() {
    let text = POOL.replace(
        "      requirements:",
        "      kubelet: {maxPods: 20}\n      requirements:",
    );
    let error = error_of(&text);
    assert!(
        error.contains("spec.template.spec.kubelet: unknown field: karpenter.sh/v1 NodePools have no kubelet settings; they moved to EC2NodeClass.spec.kubelet"),
        "{error}"
    );
}

#[test]
fn warn_and_ignore_read_on() {
    let text = POOL.replace("  limits:", "  limit:");
    super::set_validation(super::Validation::Warn);
    let warned = load_str("in.yaml", &text);
    super::set_validation(super::Validation::Ignore);
    let ignored = load_str("in.yaml", &text);
    super::set_validation(super::Validation::Strict);
    let warned = warned.unwrap();
    assert_eq!(
        warned.warnings,
        ["in.yaml: NodePool/default: spec.limit: unknown field (did you mean limits?)"]
    );
    assert!(ignored.unwrap().warnings.is_empty());
}

#[test]
fn suggestions_stay_close() {
    use super::{did_you_mean, generated};
    let pod_spec = |name: &str| {
        let root = super::root("v1", "Pod").unwrap();
        let spec = generated::TYPES[usize::from(root)]
            .iter()
            .find(|f| f.0 == "spec")
            .unwrap()
            .2;
        did_you_mean(name, generated::TYPES[usize::from(spec)])
    };
    assert_eq!(pod_spec("NODESELECTOR"), Some("nodeSelector"));
    assert_eq!(pod_spec("tolerations"), Some("tolerations"));
    assert_eq!(pod_spec("tolerashuns"), None);
    assert_eq!(pod_spec("xyz"), None);
}

/// Inside a field the plan never reads, a misspelt field is refused as `kubectl apply`
/// (strict field validation) refuses it. The scenario: aws `v1.14.1`
/// `examples/workloads/arm64.yaml` and `disruption-budget.yaml` write
/// `securityContext: {allowPrivilegedEscalation: false}` (for `allowPrivilegeEscalation`), which
/// the API server refuses ("strict decoding error: unknown field …"); it was read silently
/// because `serde_ignored` reports the unread `securityContext`, not the fields inside it.
#[test]
fn a_misspelt_field_inside_an_unread_known_field_is_refused() {
    let deployment = "apiVersion: apps/v1
kind: Deployment
metadata: {name: arm64}
spec:
  replicas: 1
  selector: {matchLabels: {app: arm64}}
  template:
    metadata: {labels: {app: arm64}}
    spec:
      securityContext: {runAsUser: 2000, runAsGroup: 3000, fsGroup: 2000}
      containers:
      - image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
        name: arm64
        resources: {requests: {cpu: '1', memory: 256M}}
        securityContext:
          allowPrivilegedEscalation: false
      nodeSelector: {kubernetes.io/arch: arm64}
";
    let (field, message) = invalid_field(deployment);
    assert_eq!(
        field,
        "spec.template.spec.containers[0].securityContext.allowPrivilegedEscalation"
    );
    assert!(
        message.contains("did you mean allowPrivilegeEscalation?"),
        "{message}"
    );
    // Deeper, and in lists of objects the plan does not read.
    let pod = "apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  volumes: [{name: data, emptyDir: {}}, {name: cfg, configMap: {nmae: app}}]
  containers:
  - name: a
    image: x
    livenessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 5}
";
    let (field, message) = invalid_field(pod);
    assert_eq!(field, "spec.volumes[1].configMap.nmae");
    assert!(message.contains("did you mean name?"), "{message}");
    let (field, _) = invalid_field(
        &pod.replace("{nmae: app}", "{name: app}")
            .replace("httpGet: {path", "httpGet: {pathh"),
    );
    assert_eq!(field, "spec.containers[0].livenessProbe.httpGet.pathh");
    // Every field the API server knows, at any depth, still reads quietly; --validate=warn
    // reads on.
    let fine = deployment.replace("allowPrivilegedEscalation", "allowPrivilegeEscalation");
    let m = load_str("in.yaml", &fine).unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let m = super::with_validation(super::Validation::Warn, || load_str("in.yaml", deployment))
        .unwrap();
    assert_eq!(m.pods.len(), 1);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("allowPrivilegedEscalation")),
        "{:?}",
        m.warnings
    );
}

/// Each version's schema comes from the CRD vendored for it: the v0.37.8 CRDs under
/// `crds/v1beta1/` also serve a pre-1.0 `v1`, which had replaced v1.14.1's (no `replicas`,
/// `placementGroupSelector`, `capacityReservationSelectorTerms`, … — the generator read it last).
#[test]
fn v1_schemas_are_v1_14_1s() {
    let known = |root: &str, steps: &[&str]| {
        let (group_version, kind) = root.rsplit_once('/').unwrap();
        let root = super::root(group_version, kind).unwrap();
        let steps: Vec<super::Step> = steps
            .iter()
            .map(|s| super::Step::Key(s.to_string()))
            .collect();
        !matches!(
            super::resolve(root, kind, &steps),
            super::Resolved::Unknown(_)
        )
    };
    assert!(known("karpenter.sh/v1/NodePool", &["spec", "replicas"]));
    for field in [
        "placementGroupSelector",
        "capacityReservationSelectorTerms",
        "ipPrefixCount",
        "cpuOptions",
    ] {
        assert!(
            known("karpenter.k8s.aws/v1/EC2NodeClass", &["spec", field]),
            "{field}"
        );
    }
    assert!(!known(
        "karpenter.sh/v1beta1/NodePool",
        &["spec", "replicas"]
    ));
}

/// Inside a field this tool reads free-form (as JSON), a misspelt field is refused like any
/// other (`kubectl apply --validate=strict`: "strict decoding error: unknown field"): a
/// Deployment's `selector.matchLabel`, a pod's `schedulingGates[0].nme` and a container's
/// `resources.claims[0].nam`, an EC2NodeClass's `placementGroupSelector.nam` and
/// `capacityReservationSelectorTerms[0].ownerId`, a PersistentVolume's `hostPath.pth`. Before,
/// `serde_ignored` never looked inside them and the typo was dropped.
#[test]
fn a_misspelt_field_inside_a_free_form_field_is_refused() {
    let deployment = "apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 1
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      schedulingGates: [{name: g}]
      containers:
      - {name: c, image: x, resources: {requests: {cpu: '1'}, claims: [{name: a}]}}
";
    assert!(load_str("in.yaml", deployment).is_ok());
    for (typo, fixed, path, suggestion) in [
        (
            "{matchLabel: {app: d}}",
            "{matchLabels: {app: d}}",
            "spec.selector.matchLabel",
            "matchLabels",
        ),
        (
            "[{nme: g}]",
            "[{name: g}]",
            "spec.template.spec.schedulingGates[0].nme",
            "name",
        ),
        (
            "[{nam: a}]",
            "[{name: a}]",
            "spec.template.spec.containers[0].resources.claims[0].nam",
            "name",
        ),
    ] {
        let (field, message) = invalid_field(&deployment.replace(fixed, typo));
        assert_eq!(field, path);
        assert!(
            message.contains(&format!("did you mean {suggestion}?")),
            "{message}"
        );
    }
    let class = "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: R
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{id: subnet-a}]
  securityGroupSelectorTerms: [{id: sg-a}]
  placementGroupSelector: {name: pg}
  capacityReservationSelectorTerms: [{ownerID: '123456789012', instanceMatchCriteria: open}]
";
    assert!(load_str("in.yaml", class).is_ok());
    let (field, message) = invalid_field(&class.replace("{name: pg}", "{name: pg, nam: x}"));
    assert_eq!(field, "spec.placementGroupSelector.nam");
    assert!(message.starts_with("unknown field"), "{message}");
    let (field, message) = invalid_field(&class.replace("ownerID:", "ownerId:"));
    assert_eq!(field, "spec.capacityReservationSelectorTerms[0].ownerId");
    assert!(message.contains("did you mean ownerID?"), "{message}");
    let pv = "apiVersion: v1
kind: PersistentVolume
metadata: {name: v}
spec:
  hostPath: {path: /data}
";
    assert!(load_str("in.yaml", pv).is_ok());
    let (field, _) = invalid_field(&pv.replace("{path:", "{pth:"));
    assert_eq!(field, "spec.hostPath.pth");
    // --validate=warn reads on, saying so.
    let m = super::with_validation(super::Validation::Warn, || {
        load_str("in.yaml", &deployment.replace("[{name: g}]", "[{nme: g}]"))
    })
    .unwrap();
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("schedulingGates[0].nme")),
        "{:?}",
        m.warnings
    );
}
