//! Subnets and security groups of node classes, resolved through the AWS adapter against moto
//! (docs/spec.md §5.2): v1 terms ORed, tags ANDed, `*` = tag key, ids; v1alpha1 selectors with
//! `aws-ids`/`aws::ids` and comma-split values.

use std::collections::BTreeSet;

use kubectl_karpenter::cloud::network::NetworkResolver;
use kubectl_karpenter::cloud::Cloud;
use kubectl_karpenter::model::nodepool::NodeClass;

use crate::moto::Moto;

fn class(manifest: &str) -> NodeClass {
    let m = kubectl_karpenter::api::load_str("class.yaml", manifest).expect("valid manifest");
    m.node_classes.into_iter().next().expect("one node class")
}

fn v1(subnet_terms: &str, group_terms: &str) -> NodeClass {
    class(&format!(
        "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: net
spec:
  amiSelectorTerms:
  - alias: al2023@latest
  role: KarpenterNodeRole-test
  subnetSelectorTerms:
{subnet_terms}
  securityGroupSelectorTerms:
{group_terms}
"
    ))
}

fn v1alpha1(subnet_selector: &str, group_selector: &str) -> NodeClass {
    class(&format!(
        "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: net
spec:
  subnetSelector:
{subnet_selector}
  securityGroupSelector:
{group_selector}
"
    ))
}

fn set(items: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    items.into_iter().collect()
}

#[test]
fn v1_subnet_terms_are_ored_with_tags_anded_and_ids_merged() {
    let moto = Moto::shared();
    let subnets = moto.subnets();
    let id = |name: &str| subnets[name].0.clone();
    let cloud = moto.cloud();
    let mut r = NetworkResolver::new(&cloud);

    // One tag term: the three private subnets, one per zone.
    let private = r
        .subnets(&v1(
            "  - tags: {karpenter.sh/discovery: test-cluster}",
            "  - tags: {team: other}",
        ))
        .unwrap();
    assert_eq!(
        set(private.items.iter().map(|s| s.id.clone())),
        set([
            "private-us-east-1a",
            "private-us-east-1b",
            "private-us-east-1c"
        ]
        .map(id))
    );
    let zones: BTreeSet<&str> = private.items.iter().map(|s| s.zone.as_str()).collect();
    assert_eq!(zones.len(), 3);
    // Sorted by free IPs (the /19s before the /20s), then id.
    let both = r
        .subnets(&v1(
            "  - tags: {alpha.eksctl.io/cluster-name: test-cluster}",
            "  - tags: {team: other}",
        ))
        .unwrap();
    assert_eq!(both.items.len(), 6);
    assert!(both
        .items
        .windows(2)
        .all(|w| w[0].available_ips >= w[1].available_ips));
    assert!(both.items[..3]
        .iter()
        .all(|s| s.tags["Name"].starts_with("private-")));
    // Tags within a term are ANDed; terms ORed; ids merged into one request.
    let anded = r
        .subnets(&v1(
            &format!(
                "  - tags: {{alpha.eksctl.io/cluster-name: test-cluster, kubernetes.io/role/elb: \"*\"}}\n  - id: {}",
                id("private-us-east-1a")
            ),
            "  - tags: {team: other}",
        ))
        .unwrap();
    assert_eq!(
        set(anded.items.iter().map(|s| s.id.clone())),
        set([
            "public-us-east-1a",
            "public-us-east-1b",
            "public-us-east-1c",
            "private-us-east-1a"
        ]
        .map(id))
    );
    assert_eq!(anded.sets.len(), 2);
    // v1 does not split tag values on commas.
    let literal = r
        .subnets(&v1(
            "  - tags: {Name: \"private-us-east-1a,private-us-east-1b\"}",
            "  - tags: {team: other}",
        ))
        .unwrap();
    assert!(literal.items.is_empty());
}

#[test]
fn v1_security_groups_by_tags_names_and_ids() {
    let moto = Moto::shared();
    let groups = moto.groups();
    let cloud = moto.cloud();
    let mut r = NetworkResolver::new(&cloud);
    let got = r
        .security_groups(&v1(
            "  - tags: {karpenter.sh/discovery: test-cluster}",
            &format!(
                "  - tags: {{kubernetes.io/cluster/test-cluster: owned}}\n  - name: other\n  - id: {}",
                groups["test-cluster-node"]
            ),
        ))
        .unwrap();
    assert_eq!(
        set(got.items.iter().map(|g| g.id.clone())),
        set(["test-cluster-node", "test-cluster-cluster", "other"].map(|n| groups[n].clone()))
    );
    assert_eq!(got.sets.len(), 3, "tags, ids, names: one request each");
    let mut ids: Vec<&str> = got.items.iter().map(|g| g.id.as_str()).collect();
    let sorted = {
        let mut s = ids.clone();
        s.sort();
        s
    };
    assert_eq!(ids, sorted);
    ids.clear();
}

#[test]
fn v1alpha1_selectors_split_commas_and_take_aws_ids() {
    let moto = Moto::shared();
    let subnets = moto.subnets();
    let groups = moto.groups();
    let cloud = moto.cloud();
    let mut r = NetworkResolver::new(&cloud);
    // Seed walkthrough 000's selectors.
    let seed = v1alpha1(
        "    alpha.eksctl.io/cluster-name: test-cluster",
        "    kubernetes.io/cluster/test-cluster: owned",
    );
    assert_eq!(r.subnets(&seed).unwrap().items.len(), 6);
    assert_eq!(
        set(r
            .security_groups(&seed)
            .unwrap()
            .items
            .iter()
            .map(|g| g.name.clone())),
        set([
            "test-cluster-node".to_string(),
            "test-cluster-cluster".to_string()
        ])
    );
    // Comma lists are ORed values of one tag filter; all keys ANDed in one request.
    let comma = v1alpha1(
        "    Name: \"private-us-east-1a, public-us-east-1b\"\n    kubernetes.io/role/elb: \"*\"",
        &format!(
            "    aws-ids: \"{}, {}\"",
            groups["other"], groups["test-cluster-node"]
        ),
    );
    let s = r.subnets(&comma).unwrap();
    assert_eq!(s.sets.len(), 1);
    assert_eq!(
        s.items.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        [subnets["public-us-east-1b"].0.clone()]
    );
    let g = r.security_groups(&comma).unwrap();
    assert_eq!(
        set(g.items.iter().map(|g| g.id.clone())),
        set([groups["other"].clone(), groups["test-cluster-node"].clone()])
    );
    let ids = v1alpha1(
        &format!(
            "    aws::ids: {},{}",
            subnets["private-us-east-1c"].0, subnets["public-us-east-1a"].0
        ),
        "    team: other",
    );
    assert_eq!(r.subnets(&ids).unwrap().items.len(), 2);
}

#[test]
fn identical_selectors_across_classes_cost_one_call() {
    let moto = Moto::shared();
    let cloud = moto.cloud();
    let mut r = NetworkResolver::new(&cloud);
    for _ in 0..3 {
        let c = v1(
            "  - tags: {karpenter.sh/discovery: test-cluster}",
            "  - tags: {karpenter.sh/discovery: test-cluster}",
        );
        r.subnets(&c).unwrap();
        r.security_groups(&c).unwrap();
    }
    let calls = cloud.call_counts();
    assert_eq!(calls.get("EC2.DescribeSubnets"), 1);
    assert_eq!(calls.get("EC2.DescribeSecurityGroups"), 1);
    assert_eq!(calls.total(), 2);
}
