//! Worlds with drift (docs/upstream-tests/fuzzing.md "Offline against live, drift
//! (s35-driftfuzz)"): a [`world::make`] world whose NodeClaims were launched, then whose NodePools
//! and node classes were edited — template labels, taints, requirements, kubelet, the AMI
//! selector, subnets, security groups, tags — with the controllers' hash annotations as they
//! would be: written at launch (nodepool-hash `v3`/`v2`, ec2nodeclass-hash `v5` with the cluster
//! CA, `v4`, `v3`, `v2`), on some NodeClaims of an older hash version (a v1beta1-era claim in a
//! v1 cluster), refreshed on the pool and class when a controller runs, stale or absent when it
//! does not. Some nodes run an older AMI (their NodeClaim's `status.imageID` says so, as
//! Karpenter writes it at launch). The class's `status` always follows its spec (the
//! controller resolves it), and the cloud the live side reads ([`cloud`]) holds what the status
//! says: offline reads the status, live asks EC2.

use serde_json::{json, Value};

use super::world::{self, World};
use crate::cloud::fake::FakeCloud;
use crate::cloud::types::{Image, SecurityGroup, Subnet};
use crate::drift::hash::{self, CaTerm};
use crate::testing::Rng;
use crate::usecases::consolidate::fuzz_check::gen::Gen;

/// The cluster CA (`kube-root-ca.crt`'s `ca.crt`), which ec2nodeclass-hash `v5` mixes in.
pub const CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIBdriftfuzz\n-----END CERTIFICATE-----\n";

/// The AMI every class resolves to now, an older one some nodes still run, and the one an edited
/// selector names.
const AMI_NOW: &str = "ami-0abc";
const AMI_OLD: &str = "ami-0old";
const AMI_NEW: &str = "ami-0new";

/// The world of `seed`, with drift.
pub fn make(seed: u64) -> World {
    let mut w = world::make(seed);
    let mut rng = Rng::new(seed ^ 0x0D21_F7F0);
    let gen = w.gen;
    // The controller's hash versions in this cluster, and the CA bundle v5 mixes in.
    let pool_version = if gen == Gen::V1 { "v3" } else { "v2" };
    let class_version = match gen {
        Gen::V1 => *rng.pick(&["v5", "v5", "v4", "v3"]),
        _ => "v2",
    };
    let at_launch = hashes(&w.objects, pool_version, class_version);
    let annotate_claims = rng.below(4) != 0;
    // Karpenter labels a NodeClaim as its Node (the type's and the pool's labels).
    let node_labels: Vec<(Value, Value)> = (w.objects.iter())
        .filter(|o| o["kind"] == "Node")
        .map(|n| {
            (
                n["spec"]["providerID"].clone(),
                n["metadata"]["labels"].clone(),
            )
        })
        .collect();
    for o in w.objects.iter_mut() {
        if let Some((_, l)) = (node_labels.iter()).find(|(p, _)| *p == o["status"]["providerID"]) {
            let mut l = l.clone();
            // And the type's own labels (`karpenter.k8s.aws/instance-category` and `-size`).
            let itype = l["node.kubernetes.io/instance-type"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if let Some((family, size)) = itype.split_once('.') {
                let category = family.get(..1).unwrap_or_default().to_string();
                l["karpenter.k8s.aws/instance-category"] = json!(category);
                l["karpenter.k8s.aws/instance-size"] = json!(size);
            }
            o["metadata"]["labels"] = l;
        }
    }
    for o in w.objects.iter_mut() {
        match o["kind"].as_str().unwrap_or_default() {
            "NodeClaim" | "Machine" => {
                if rng.below(4) == 0 {
                    o["status"]["imageID"] = json!(AMI_OLD);
                }
                if annotate_claims && rng.below(10) != 0 && gen != Gen::V1Alpha5 {
                    let pool = o["metadata"]["labels"]["karpenter.sh/nodepool"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    annotate_claim(o, &at_launch, &pool, &mut rng, gen);
                }
            }
            "NodePool" | "EC2NodeClass" if gen != Gen::V1Alpha5 => {
                set_hash(o, &at_launch);
            }
            _ => {}
        }
    }
    // Edited after launch.
    for o in w.objects.iter_mut() {
        match o["kind"].as_str().unwrap_or_default() {
            "NodePool" | "Provisioner" if rng.below(3) == 0 => edit_pool(o, gen, &mut rng),
            "EC2NodeClass" | "AWSNodeTemplate" if rng.below(2) == 0 => {
                edit_class(o, gen, &mut rng);
            }
            _ => {}
        }
    }
    // A running controller refreshes the pools' and classes' own annotations; else they stay
    // as written at launch, or were never there.
    match rng.below(3) {
        0 => {
            let now = hashes(&w.objects, pool_version, class_version);
            for o in w.objects.iter_mut() {
                set_hash(o, &now);
            }
        }
        1 => {
            for o in w.objects.iter_mut() {
                if let Some(a) = o["metadata"]["annotations"].as_object_mut() {
                    a.retain(|k, _| !k.ends_with("-hash") && !k.ends_with("-hash-version"));
                }
            }
        }
        _ => {}
    }
    w.objects
        .push(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kube-root-ca.crt", "namespace": "kube-system"},
        "data": {"ca.crt": CA_PEM}}));
    w
}

/// Each pool's and class's hash as the controller computes it: `(kind/name, hash, version)`.
type Hashes = Vec<(String, String, String)>;

fn hashes(objects: &[Value], pool_version: &str, class_version: &str) -> Hashes {
    let owners: Vec<&Value> = objects
        .iter()
        .filter(|o| matches!(o["kind"].as_str(), Some("NodePool" | "EC2NodeClass")))
        .collect();
    let text = json!({"apiVersion": "v1", "kind": "List", "items": owners}).to_string();
    let Ok(m) = crate::api::load_str("hash.json", &text) else {
        return Vec::new();
    };
    let bundle = base64_of(CA_PEM);
    let mut out = Vec::new();
    for p in &m.node_pools {
        if let Ok(h) = hash::node_pool_hash(p, pool_version) {
            out.push((format!("NodePool/{}", p.name), h, pool_version.into()));
        }
    }
    for c in &m.node_classes {
        let ca = Ok(CaTerm::of_bundle(&bundle));
        if let Ok(h) = hash::node_class_hash(c, class_version, ca) {
            out.push((format!("EC2NodeClass/{}", c.name), h, class_version.into()));
        }
    }
    out
}

fn base64_of(text: &str) -> String {
    use base64::prelude::{Engine as _, BASE64_STANDARD};
    BASE64_STANDARD.encode(text.as_bytes())
}

const POOL_HASH: (&str, &str) = (
    "karpenter.sh/nodepool-hash",
    "karpenter.sh/nodepool-hash-version",
);
const CLASS_HASH: (&str, &str) = (
    "karpenter.k8s.aws/ec2nodeclass-hash",
    "karpenter.k8s.aws/ec2nodeclass-hash-version",
);

fn keys_of(kind: &str) -> (&'static str, &'static str) {
    if kind == "NodePool" {
        POOL_HASH
    } else {
        CLASS_HASH
    }
}

/// The owner's own annotations, from `hashes`.
fn set_hash(o: &mut Value, hashes: &Hashes) {
    let kind = o["kind"].as_str().unwrap_or_default().to_string();
    let key = format!(
        "{kind}/{}",
        o["metadata"]["name"].as_str().unwrap_or_default()
    );
    if let Some((_, h, v)) = hashes.iter().find(|(k, _, _)| *k == key) {
        let (hk, vk) = keys_of(&kind);
        o["metadata"]["annotations"][hk] = json!(h);
        o["metadata"]["annotations"][vk] = json!(v);
    }
}

/// A NodeClaim's annotations as written at its launch (one in eight of an older hash version:
/// a claim launched by the previous Karpenter).
fn annotate_claim(o: &mut Value, hashes: &Hashes, pool: &str, rng: &mut Rng, gen: Gen) {
    for (owner, keys) in [
        (format!("NodePool/{pool}"), POOL_HASH),
        ("EC2NodeClass/default".to_string(), CLASS_HASH),
    ] {
        let Some((_, h, v)) = hashes.iter().find(|(k, _, _)| *k == owner) else {
            continue;
        };
        let version = match (rng.below(8), gen) {
            (0, Gen::V1) => "v2".to_string(),
            (0, _) => "v1".to_string(),
            _ => v.clone(),
        };
        o["metadata"]["annotations"][keys.0] = json!(h);
        o["metadata"]["annotations"][keys.1] = json!(version);
    }
}

fn edit_pool(o: &mut Value, gen: Gen, rng: &mut Rng) {
    let template = if gen == Gen::V1Alpha5 {
        &mut o["spec"]
    } else {
        &mut o["spec"]["template"]
    };
    match rng.below(6) {
        0 if gen != Gen::V1Alpha5 => {
            template["metadata"]["labels"]["team"] = json!(*rng.pick(&["a", "b"]));
        }
        1 => {
            let spec = if gen == Gen::V1Alpha5 {
                template
            } else {
                &mut template["spec"]
            };
            spec["taints"] = match spec["taints"].as_array().is_some_and(|t| t.is_empty()) {
                true => json!([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
                false => json!([]),
            };
        }
        2 | 3 => {
            let spec = if gen == Gen::V1Alpha5 {
                template
            } else {
                &mut template["spec"]
            };
            for r in spec["requirements"].as_array_mut().into_iter().flatten() {
                if r["key"] == "karpenter.sh/capacity-type" {
                    r["values"] = json!([*rng.pick(&["spot", "on-demand"])]);
                } else if r["key"] == "karpenter.k8s.aws/instance-size" {
                    r["values"] = json!(["xlarge", "2xlarge"]);
                }
            }
        }
        4 if gen == Gen::V1Beta1 => {
            template["spec"]["kubelet"] = json!({"maxPods": 20 + rng.below(3) * 10});
        }
        _ if gen == Gen::V1 => {
            template["spec"]["expireAfter"] = json!(*rng.pick(&["720h", "Never"]));
        }
        _ => {}
    }
}

fn edit_class(o: &mut Value, gen: Gen, rng: &mut Rng) {
    let v1alpha5 = gen == Gen::V1Alpha5;
    match rng.below(6) {
        0 if gen == Gen::V1 => {
            o["spec"]["kubelet"] = json!({"maxPods": 20 + rng.below(3) * 10});
        }
        1 | 0 if !v1alpha5 => {
            o["spec"]["tags"] = json!({"team": *rng.pick(&["a", "b"])});
        }
        2 => {
            // A new AMI by id: the controller's status follows.
            match gen {
                Gen::V1 | Gen::V1Beta1 => {
                    o["spec"]["amiSelectorTerms"] = json!([{"id": AMI_NEW}]);
                    if o["spec"]["amiFamily"].is_null() {
                        o["spec"]["amiFamily"] = json!("AL2023");
                    }
                }
                Gen::V1Alpha5 => o["spec"]["amiSelector"] = json!({"aws-ids": AMI_NEW}),
            }
            o["status"]["amis"] = json!([{"id": AMI_NEW, "name": "al2023-new",
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}]);
        }
        3 if !v1alpha5 => {
            o["spec"]["subnetSelectorTerms"] = json!([{"id": "subnet-b"}]);
            o["status"]["subnets"] =
                json!([{"id": "subnet-b", "zone": "us-east-1b", "zoneID": "use1-az2"}]);
        }
        4 if !v1alpha5 => {
            let (terms, status) = match rng.below(2) {
                0 => (
                    json!([{"id": "sg-b"}]),
                    json!([{"id": "sg-b", "name": "other"}]),
                ),
                _ => (
                    json!([{"id": "sg-a"}, {"id": "sg-b"}]),
                    json!([{"id": "sg-a", "name": "nodes"}, {"id": "sg-b", "name": "other"}]),
                ),
            };
            o["spec"]["securityGroupSelectorTerms"] = terms;
            o["status"]["securityGroups"] = status;
        }
        _ if gen == Gen::V1 => {
            o["spec"]["metadataOptions"] = json!({"httpPutResponseHopLimit": 2});
        }
        _ => {}
    }
}

fn image(id: &str, name: &str) -> Image {
    Image {
        id: id.into(),
        name: Some(name.into()),
        architecture: "x86_64".into(),
        creation_date: Some("2024-06-01T00:00:00Z".into()),
        state: Some("available".into()),
        ..Image::default()
    }
}

/// EC2 and SSM as the world's classes' status says: what the live side resolves.
pub fn cloud(base: FakeCloud) -> FakeCloud {
    let k = "/aws/service/eks/optimized-ami/1.29";
    let mut cloud = base
        .image(image(AMI_NOW, "al2023-ami"), None)
        .image(image(AMI_OLD, "al2023-ami-old"), None)
        .image(image(AMI_NEW, "al2023-new"), None)
        .parameter(
            &format!("{k}/amazon-linux-2023/x86_64/standard/recommended/image_id"),
            AMI_NOW,
        )
        .parameter(&format!("{k}/amazon-linux-2/recommended/image_id"), AMI_NOW);
    let tags = || [("karpenter.sh/discovery".to_string(), "c".to_string())].into();
    let (id, zone, zone_id) = world::SUBNET;
    cloud.subnets = vec![
        Subnet {
            id: id.into(),
            zone: zone.into(),
            zone_id: Some(zone_id.into()),
            available_ips: 100,
            tags: tags(),
            ..Subnet::default()
        },
        Subnet {
            id: "subnet-b".into(),
            zone: "us-east-1b".into(),
            zone_id: Some("use1-az2".into()),
            available_ips: 100,
            ..Subnet::default()
        },
    ];
    cloud.security_groups = vec![
        SecurityGroup {
            id: "sg-a".into(),
            name: "nodes".into(),
            tags: tags(),
            ..SecurityGroup::default()
        },
        SecurityGroup {
            id: "sg-b".into(),
            name: "other".into(),
            ..SecurityGroup::default()
        },
    ];
    cloud
}
