//! Placement groups live (docs/karpenter.md §6.2 "Placement groups"): moto seeded with a
//! partition group (`tests/moto/server.py --placement-group`, which answers
//! DescribePlacementGroups), the loopback cluster with consolidate's story whose v1 EC2NodeClass
//! selects it by name and whose three 7-CPU pods spread over
//! `karpenter.k8s.aws/placement-group-partition` (minDomains 3): `provision --dry-run` plans one
//! NodeClaim per partition, each labelled with the group (aws v1.14.1
//! `offering/offering.go` `InjectOfferings`, `cloudprovider.go` `instanceToNodeClaim`).

use serde_json::json;

use crate::provision_live::Walk;
use crate::test_cluster::Config;

#[test]
fn a_live_plan_resolves_the_partition_group_and_spreads_over_it() {
    let group = json!({
        "id": "pg-0a1b2c3d4e5f60001",
        "name": "analytics",
        "strategy": "partition",
        "partitionCount": 3,
    })
    .to_string();
    let walk = Walk::build(
        "placement-groups",
        &["--placement-group", &group],
        "crds/v1",
        |moto, config| Config {
            ec2_endpoint: Some(moto.url.clone()),
            ..config
        },
    );
    let spread = "      topologySpreadConstraints:\n      - {maxSkew: 1, minDomains: 3, topologyKey: karpenter.k8s.aws/placement-group-partition, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: inflate}}}\n      nodeSelector:";
    let manifest = crate::consolidate_commands::CLUSTER
        .replace(
            "  subnetSelectorTerms:\n",
            "  placementGroupSelector: {name: analytics}\n  subnetSelectorTerms:\n",
        )
        .replace("      nodeSelector:", spread);
    walk.apply("placement.yaml", &manifest);
    walk.wait_unschedulable(3);

    let plan = walk.json(&["karpenter", "provision", "--dry-run", "-o", "json"]);
    let claims = plan["nodeClaims"].as_array().expect("nodeClaims");
    assert_eq!(claims.len(), 3, "{plan:#}");
    let mut partitions: Vec<&str> = claims
        .iter()
        .map(|c| {
            assert_eq!(
                c["labels"]["karpenter.k8s.aws/placement-group-id"], "pg-0a1b2c3d4e5f60001",
                "{plan:#}"
            );
            c["labels"]["karpenter.k8s.aws/placement-group-partition"]
                .as_str()
                .unwrap_or_default()
        })
        .collect();
    partitions.sort();
    assert_eq!(partitions, ["1", "2", "3"], "{plan:#}");
}
