//! Required fields as the API server takes them (docs/upstream-tests.md "Required fields, as the
//! API server takes them (s31-required)"): a v1 NodePool without
//! `spec.template.spec.requirements` (the CRD's `required: [nodeClassRef, requirements]`,
//! tests/fixtures/crds/v1/karpenter.sh_nodepools.yaml) is refused with exit 2 and one line
//! naming the file, the object and the field, by every command that reads it and whatever
//! `--validate` says; with `requirements: []` it plans.

use crate::support::{karpenter, write_temp};

const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: node-role
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
";

#[test]
fn a_nodepool_without_requirements_is_refused_and_a_complete_one_plans() {
    let complete = write_temp("required-complete.yaml", POOL.as_bytes());
    let complete = complete.to_string_lossy();
    let plan = ["provision", "--dry-run", "--region", "us-east-1", "-f"];
    let run = karpenter(&[&plan[..], &[&complete]].concat(), b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(" 0 unschedulable"), "{}", run.stdout);

    let lacking = POOL.replace("      requirements: []\n", "");
    let lacking = write_temp("required-lacking.yaml", lacking.as_bytes());
    let lacking = lacking.to_string_lossy();
    let want = format!(
        "{lacking} (document 1): NodePool/default: spec.template.spec.requirements: Required value"
    );
    for (what, args) in [
        ("provision", &plan[..]),
        (
            "provision --validate=ignore",
            &[
                "--validate=ignore",
                "provision",
                "--dry-run",
                "--region",
                "us-east-1",
                "-f",
            ][..],
        ),
        (
            "provision --validate=warn",
            &[
                "--validate=warn",
                "provision",
                "--dry-run",
                "--region",
                "us-east-1",
                "-f",
            ][..],
        ),
        ("convert", &["convert", "-f"][..]),
    ] {
        let run = karpenter(&[args, &[&lacking]].concat(), b"");
        run.assert_refused_in_one_line(what, &want);
        assert!(run.stdout.is_empty(), "{what}: {}", run.stdout);
    }
}
