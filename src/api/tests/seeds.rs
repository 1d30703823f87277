//! The two seed walkthroughs (000: v1alpha5, 001: v1beta1): their manifests exactly as written (the
//! 000 seed's lost indentation restored), `$CLUSTER_NAME` left literally.

use super::load_str;
use crate::model::requirements::{NodeSelectorRequirement, Operator};

/// Seed 001, `basic.yaml`.
const SEED_001_BASIC: &str = r#"apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidateAfter: 30s
    consolidationPolicy: WhenEmpty
    expireAfter: Never
  limits:
    cpu: "10"
  template:
    metadata:
        labels:
         eks-immersion-team: my-team
    spec:
      nodeClassRef:
        name: default
      requirements:
      - key: karpenter.k8s.aws/instance-category
        operator: In
        values: ["c", "m", "r"]
      - key: kubernetes.io/arch
        operator: In
        values: ["amd64"]
      - key: karpenter.sh/capacity-type # If not included, the webhook for the AWS cloud provider will default to on-demand
        operator: In
        values: ["on-demand"]
      - key: kubernetes.io/os
        operator: In
        values: ["linux"]

---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: karpenterNodeRole-$CLUSTER_NAME
  securityGroupSelectorTerms:
  - tags:
      alpha.eksctl.io/cluster-name: $CLUSTER_NAME
  subnetSelectorTerms:
  - tags:
      alpha.eksctl.io/cluster-name: $CLUSTER_NAME
  tags:
    intent: apps
    managed-by: karpenter
"#;

/// Seed 001, `basic-deploy.yaml` after `kubectl scale deployment inflate --replicas 5`.
const SEED_001_DEPLOY: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 5
  selector:
    matchLabels:
      app: inflate
  template:
    metadata:
      labels:
        app: inflate
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: inflate
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
          resources:
            requests:
              cpu: 1
      nodeSelector:
        eks-immersion-team: my-team
"#;

/// Seed 000, `oldnode_template.yaml` and `provisioner.yaml`, re-indented, shell variables left
/// as written.
const SEED_000: &str = r#"apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: oldnode
spec:
  amiSelector:
    aws::ids: $AMI_OLD
  subnetSelector:
    alpha.eksctl.io/cluster-name: ${CLUSTER_NAME}
  securityGroupSelector:
    kubernetes.io/cluster/${CLUSTER_NAME}: owned
  tags:
    managed-by: "karpenter"
    intent: "apps"
---
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  providerRef: # 在这里引用了oldnode
    name: oldnode
  labels:
    eks-immersion-team: my-team
  requirements:
    - key: "karpenter.k8s.aws/instance-category"
      operator: In
      values: ["c", "m", "r"]
    - key: "kubernetes.io/arch"
      operator: In
      values: ["amd64"]
    - key: "karpenter.sh/capacity-type" # If not included, the webhook for the AWS cloud provider will default to on-demand
      operator: In
      values: ["on-demand"]
  limits:
    resources:
      cpu: "1000"
      memory: 1000Gi
  consolidation:
    enabled: true
"#;

fn req(key: &str, op: Operator, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement::new(key, op, values)
}

#[test]
fn seed_001_nodepool_and_ec2nodeclass() {
    let m = load_str("basic.yaml", SEED_001_BASIC).unwrap();
    m.check_references().unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let p = &m.node_pools[0];
    assert_eq!(p.name, "default");
    assert_eq!(
        p.generation,
        Some(crate::model::nodepool::ApiGeneration::V1Beta1)
    );
    assert_eq!(
        p.labels.get("eks-immersion-team").map(String::as_str),
        Some("my-team")
    );
    assert_eq!(p.limits.get("cpu"), Some(&10_000));
    assert_eq!(p.disruption.consolidation_policy, "WhenEmpty");
    assert_eq!(p.disruption.consolidate_after.as_deref(), Some("30s"));
    assert_eq!(p.expire_after.as_deref(), Some("Never"));
    // As written, in order, and no v1alpha5 defaults added.
    assert_eq!(
        p.requirements,
        [
            req(
                "karpenter.k8s.aws/instance-category",
                Operator::In,
                &["c", "m", "r"]
            ),
            req("kubernetes.io/arch", Operator::In, &["amd64"]),
            req("karpenter.sh/capacity-type", Operator::In, &["on-demand"]),
            req("kubernetes.io/os", Operator::In, &["linux"]),
        ]
    );
    let r = p.node_class_ref.as_ref().unwrap();
    assert_eq!(
        (r.group.as_str(), r.kind.as_str(), r.name.as_str()),
        ("karpenter.k8s.aws", "EC2NodeClass", "default")
    );
    assert_eq!(p.origin.source, "basic.yaml");
    assert_eq!(p.origin.document, 0);

    let c = &m.node_classes[0];
    assert_eq!(
        (c.name.as_str(), c.kind.as_str()),
        ("default", "EC2NodeClass")
    );
    assert_eq!(c.ami_family.as_deref(), Some("AL2"));
    assert_eq!(c.role.as_deref(), Some("karpenterNodeRole-$CLUSTER_NAME"));
    assert_eq!(
        c.subnet_selector_terms[0].tags["alpha.eksctl.io/cluster-name"],
        "$CLUSTER_NAME"
    );
    assert_eq!(c.security_group_selector_terms.len(), 1);
    assert_eq!(c.tags["managed-by"], "karpenter");
    assert!(
        c.ami_selector_terms.is_empty(),
        "v1beta1 AL2 without terms uses the SSM default"
    );
    assert_eq!(c.origin.document, 1);
}

#[test]
fn seed_001_inflate_scaled_to_five() {
    let m = load_str("basic-deploy.yaml", SEED_001_DEPLOY).unwrap();
    assert_eq!(m.pods.len(), 5);
    for (i, p) in m.pods.iter().enumerate() {
        assert_eq!(p.name, format!("inflate-{i}"));
        assert_eq!(p.namespace, "default");
        assert_eq!(p.requests.cpu, 1000);
        assert_eq!(p.requests.pods, 1000);
        assert_eq!(p.requests.memory, 0);
        assert_eq!(
            p.node_selector
                .get("eks-immersion-team")
                .map(String::as_str),
            Some("my-team")
        );
        assert_eq!(p.labels.get("app").map(String::as_str), Some("inflate"));
        assert_eq!(p.termination_grace_period_seconds, Some(0));
        assert!(p.is_provisionable());
        assert_eq!(
            p.owner.as_ref().map(|o| o.kind.as_str()),
            Some("ReplicaSet")
        );
        assert_eq!(p.creation_timestamp, None);
    }
    let uids: std::collections::BTreeSet<_> = m.pods.iter().map(|p| p.uid.clone()).collect();
    assert_eq!(uids.len(), 5, "distinct synthetic uids");
    // Deterministic: loading again gives the same pods.
    assert_eq!(
        load_str("basic-deploy.yaml", SEED_001_DEPLOY).unwrap().pods,
        m.pods
    );
    // The walkthrough's starting point, replicas: 0, has no pods.
    let zero = SEED_001_DEPLOY.replace("replicas: 5", "replicas: 0");
    assert!(load_str("basic-deploy.yaml", &zero)
        .unwrap()
        .pods
        .is_empty());
}

#[test]
fn seed_000_provisioner_and_awsnodetemplate() {
    let m = load_str("provisioner.yaml", SEED_000).unwrap();
    m.check_references().unwrap();
    let p = &m.node_pools[0];
    assert_eq!(p.name, "default");
    assert_eq!(p.kind(), "Provisioner");
    // As written, then the webhook's os default; no instance-generation default because the
    // category is constrained.
    assert_eq!(
        p.requirements,
        [
            req(
                "karpenter.k8s.aws/instance-category",
                Operator::In,
                &["c", "m", "r"]
            ),
            req("kubernetes.io/arch", Operator::In, &["amd64"]),
            req("karpenter.sh/capacity-type", Operator::In, &["on-demand"]),
            req("kubernetes.io/os", Operator::In, &["linux"]),
        ]
    );
    assert_eq!(p.labels["eks-immersion-team"], "my-team");
    assert_eq!(p.limits["cpu"], 1_000_000);
    assert_eq!(p.limits["memory"], 1000 * crate::model::quantity::GIB);
    assert_eq!(p.disruption.consolidation_policy, "WhenUnderutilized");
    let r = p.node_class_ref.as_ref().unwrap();
    assert_eq!(
        (r.kind.as_str(), r.name.as_str()),
        ("AWSNodeTemplate", "oldnode")
    );
    // Labels count as requirements through the model.
    assert!(p
        .scheduling_requirements()
        .get("eks-immersion-team")
        .has("my-team"));

    let c = &m.node_classes[0];
    assert_eq!(
        (c.name.as_str(), c.kind.as_str()),
        ("oldnode", "AWSNodeTemplate")
    );
    assert_eq!(c.ami_family.as_deref(), Some("AL2"));
    assert_eq!(c.ami_selector_terms.len(), 1);
    assert_eq!(c.ami_selector_terms[0].id.as_deref(), Some("$AMI_OLD"));
    assert_eq!(c.legacy_selectors["amiSelector"]["aws::ids"], "$AMI_OLD");
    assert_eq!(
        c.subnet_selector_terms[0].tags["alpha.eksctl.io/cluster-name"],
        "${CLUSTER_NAME}"
    );
    assert_eq!(
        c.security_group_selector_terms[0].tags["kubernetes.io/cluster/${CLUSTER_NAME}"],
        "owned"
    );
    assert_eq!(c.tags["intent"], "apps");
}

#[test]
fn seed_000_switched_to_newnode_needs_that_template() {
    // `kubectl edit provisioner default` → providerRef newnode, with only oldnode in the input.
    let edited = SEED_000.replace("    name: oldnode\n  labels", "    name: newnode\n  labels");
    let m = load_str("provisioner.yaml", &edited).unwrap();
    let e = m.check_references().unwrap_err().to_string();
    assert_eq!(
        e,
        "provisioner.yaml (document 2): Provisioner/default: spec.providerRef: AWSNodeTemplate \"newnode\" is not in the input (loaded: AWSNodeTemplate/oldnode)"
    );
}

/// v1alpha5's AWSNodeTemplate CRD (`karpenter.k8s.aws/v1alpha1`) has no defaults and no enums
/// for `metadataOptions`: the fields as written (absent: none), only their types checked.
#[test]
fn aws_node_template_metadata_options_are_read_as_written() {
    use crate::model::nodepool::MetadataOptions;
    let template = |extra: &str| {
        format!("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {{name: c}}\nspec:\n  subnetSelector: {{a: b}}\n  securityGroupSelector: {{a: b}}\n{extra}")
    };
    let read = |extra: &str| {
        load_str("t.yaml", &template(extra))
            .map(|mut m| m.node_classes.remove(0).metadata_options)
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(""), Ok(None));
    assert_eq!(
        read("  metadataOptions: {httpTokens: optional, httpPutResponseHopLimit: 3}\n"),
        Ok(Some(MetadataOptions {
            http_endpoint: None,
            http_protocol_ipv6: None,
            http_put_response_hop_limit: Some(3),
            http_tokens: Some("optional".into()),
        }))
    );
    assert_eq!(
        read("  metadataOptions: {httpEndpoint: sometimes}\n").map(|o| o.unwrap().http_endpoint),
        Ok(Some("sometimes".into()))
    );
    assert_eq!(
        read("  metadataOptions: {httpPutResponseHopLimit: x}\n"),
        Err("t.yaml: AWSNodeTemplate/c: spec.metadataOptions.httpPutResponseHopLimit: must be an integer".into())
    );
    assert_eq!(
        read("  metadataOptions: {httpTokens: 1}\n"),
        Err("t.yaml: AWSNodeTemplate/c: spec.metadataOptions.httpTokens: must be a string".into())
    );
    assert_eq!(
        read("  metadataOptions: [1]\n"),
        Err("t.yaml: AWSNodeTemplate/c: spec.metadataOptions: must be an object".into())
    );
}

/// `metadataOptions` as the API server stores it (the v1 / v1beta1 CRDs default each field:
/// `enabled`, `disabled`, hop limit 1 in v1 and 2 in v1beta1, `required`), and the rest of a
/// block device's `ebs`, which the launch template carries (`aws v1.14.1:
/// pkg/providers/launchtemplate/suite_test.go` "Instance Metadata", "Block Device Mappings").
#[test]
fn node_class_metadata_options_take_the_crds_defaults_and_ebs_is_kept() {
    use crate::model::nodepool::MetadataOptions;
    let class = |api: &str, extra: &str| {
        let yaml = format!(
            "apiVersion: karpenter.k8s.aws/{api}\nkind: EC2NodeClass\nmetadata: {{name: c}}\nspec:\n  amiFamily: AL2023\n  amiSelectorTerms: [{{id: ami-0123456789abcdef0}}]\n  role: r\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n{extra}"
        );
        load_str("c.yaml", &yaml).unwrap().node_classes.remove(0)
    };
    let want = |hops: i64, tokens: &str| MetadataOptions {
        http_endpoint: Some("enabled".into()),
        http_protocol_ipv6: Some("disabled".into()),
        http_put_response_hop_limit: Some(hops),
        http_tokens: Some(tokens.into()),
    };
    assert_eq!(class("v1", "").metadata_options, Some(want(1, "required")));
    assert_eq!(
        class("v1beta1", "").metadata_options,
        Some(want(2, "required"))
    );
    let partial = class("v1", "  metadataOptions: {httpTokens: optional}\n");
    assert_eq!(partial.metadata_options, Some(want(1, "optional")));
    let c = class(
        "v1",
        "  detailedMonitoring: true\n  blockDeviceMappings:\n  - deviceName: /dev/xvda\n    rootVolume: true\n    ebs: {volumeSize: 100Gi, volumeType: io2, iops: 3000, encrypted: true, kmsKeyID: k, deleteOnTermination: false, throughput: 125, snapshotID: snap-1}\n",
    );
    assert_eq!(c.detailed_monitoring, Some(true));
    let b = &c.block_devices[0];
    assert_eq!(b.volume_size_gib(), Some(100));
    assert_eq!(b.ebs.volume_type.as_deref(), Some("io2"));
    assert_eq!(b.ebs.iops, Some(3000));
    assert_eq!(b.ebs.kms_key_id.as_deref(), Some("k"));
    assert_eq!(b.ebs.delete_on_termination, Some(false));
    assert_eq!(b.ebs.snapshot_id.as_deref(), Some("snap-1"));
}
