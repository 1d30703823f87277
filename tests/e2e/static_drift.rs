//! StaticDrift live (`core v1.14.1: pkg/controllers/disruption/staticdrift.go`,
//! docs/karpenter.md §6.11): a static NodePool of 2 with one drifted node → `drift replace
//! --yes` replaces it by a bare replica of the pool's template; the pool has its 2 nodes again,
//! none drifted.

use serde_json::Value;

use crate::provision_live::Walk;

/// A static NodePool of `replicas` c-family on-demand nodes of `size`.
fn pool(replicas: usize, size: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: baseline
spec:
  replicas: {replicas}
  limits:
    nodes: \"10\"
  template:
    metadata: {{labels: {{role: baseline}}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      expireAfter: Never
      requirements:
      - {{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}}
      - {{key: karpenter.k8s.aws/instance-size, operator: In, values: [{size}]}}
      - {{key: kubernetes.io/arch, operator: In, values: [amd64]}}
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
"
    )
}

fn nodes(walk: &Walk) -> Vec<(String, String)> {
    walk.items(&["get", "nodes", "-l", "role=baseline"])
        .iter()
        .map(|n: &Value| {
            (
                n["metadata"]["name"].as_str().unwrap().to_string(),
                n["metadata"]["labels"]["karpenter.k8s.aws/instance-size"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn a_drifted_static_node_is_replaced_by_a_bare_replica() {
    let walk = Walk::with("static-drift", true, "crds/v1", |_| Vec::new());
    let class = crate::consolidate_commands::CLUSTER
        .split("---\n")
        .find(|d| d.starts_with("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass"))
        .unwrap();
    // One xlarge replica; then the template asks for 2xlarge and a second replica: the first
    // node has drifted (its size is no longer allowed), the second is launched as 2xlarge.
    walk.apply("static.yaml", &format!("{}---\n{class}", pool(1, "xlarge")));
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let first = nodes(&walk);
    assert_eq!(first.len(), 1, "{first:?}");
    walk.apply("static.yaml", &pool(2, "2xlarge"));
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(nodes(&walk).len(), 2);
    let check = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(
        check.code, 1,
        "one drifted: {}\n{}",
        check.stdout, check.stderr
    );
    assert!(check.stdout.contains(&first[0].0), "{}", check.stdout);

    let out = walk.run(&["karpenter", "drift", "replace", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // Without StaticDrift a node without pods would be replaced by nothing (its pods need
    // nothing): here one bare replica of the template is launched and Ready before it goes.
    assert!(out.stdout.contains("1 replaced"), "{}", out.stdout);
    let after = walk.eventually(60, "two 2xlarge baseline nodes", || {
        let n = nodes(&walk);
        (n.len() == 2
            && n.iter()
                .all(|(name, size)| name != &first[0].0 && size == "2xlarge"))
        .then_some(n)
    });
    assert_eq!(after.len(), 2);
    let again = walk.run(&["karpenter", "drift", "check"]);
    assert_eq!(
        again.code, 0,
        "nothing drifted: {}\n{}",
        again.stdout, again.stderr
    );
    assert_eq!(
        walk.launched().len(),
        2,
        "one replica launched, the drifted node's instance terminated"
    );
}
