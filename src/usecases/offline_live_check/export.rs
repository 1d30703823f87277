//! Both readings of one world: the [`FakeCluster`] the live use cases read, and the manifest a
//! user's `kubectl get nodes,nodeclaims,nodepools,ec2nodeclasses,pods,pdb,ds,pvc,pv,storageclass
//! -A -o yaml` (docs/consolidation.md's dump) makes of that cluster — one `List`, each item with
//! the server's `uid`, `resourceVersion`, `creationTimestamp`, `managedFields` and `status`.

use serde_json::{json, Value};

use super::world::World;
use crate::k8s::fake::FakeCluster;
use crate::usecases::consolidate::fuzz_check::gen::{self, Gen};

/// The cluster serving the world's Karpenter generation, the objects stored.
pub fn cluster(world: &World) -> FakeCluster {
    let cluster = match world.gen {
        Gen::V1 => FakeCluster::new().karpenter_v1(),
        Gen::V1Beta1 => FakeCluster::new().karpenter_v1beta1(),
        Gen::V1Alpha5 => FakeCluster::new().karpenter_v1alpha5(),
    };
    cluster.put_all(world.objects.iter().cloned());
    cluster
}

/// The kinds exported, in `kubectl get`'s order of the resource list.
fn kinds(gen: Gen) -> Vec<(&'static str, &'static str)> {
    let karpenter = match gen {
        Gen::V1 => [
            ("karpenter.sh/v1", "NodeClaim"),
            ("karpenter.sh/v1", "NodePool"),
            ("karpenter.k8s.aws/v1", "EC2NodeClass"),
        ],
        Gen::V1Beta1 => [
            ("karpenter.sh/v1beta1", "NodeClaim"),
            ("karpenter.sh/v1beta1", "NodePool"),
            ("karpenter.k8s.aws/v1beta1", "EC2NodeClass"),
        ],
        Gen::V1Alpha5 => [
            ("karpenter.sh/v1alpha5", "Machine"),
            ("karpenter.sh/v1alpha5", "Provisioner"),
            ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate"),
        ],
    };
    let mut out = vec![("v1", "Node")];
    out.extend(karpenter);
    out.extend([
        ("v1", "Pod"),
        ("policy/v1", "PodDisruptionBudget"),
        ("apps/v1", "DaemonSet"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "PersistentVolume"),
        ("storage.k8s.io/v1", "StorageClass"),
    ]);
    out
}

/// The cluster's export, as YAML.
pub fn export(cluster: &FakeCluster, gen: Gen) -> String {
    let mut items = Vec::new();
    for (api_version, kind) in kinds(gen) {
        for mut item in cluster.list(api_version, kind) {
            item["metadata"]["managedFields"] = managed_fields(&item);
            items.push(item);
        }
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items,
                      "metadata": {"resourceVersion": ""}});
    serde_saphyr::to_string(&list).unwrap()
}

/// `kubectl apply`'s and the controllers' field managers, as the server lists them.
fn managed_fields(item: &Value) -> Value {
    let api_version = item["apiVersion"].clone();
    let at = gen::time(gen::NOW - 3600);
    let mut out = vec![json!({"apiVersion": api_version, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:annotations": {".": {},
            "f:kubectl.kubernetes.io/last-applied-configuration": {}}}, "f:spec": {}},
        "manager": "kubectl-client-side-apply", "operation": "Update", "time": at})];
    if item.get("status").is_some() {
        out.push(json!({"apiVersion": api_version, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {".": {}}}, "manager": "karpenter", "operation": "Update",
            "subresource": "status", "time": at}));
    }
    json!(out)
}
