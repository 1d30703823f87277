//! Writes benchmark B7's cluster (`testing::b7_input`) as files, to time the whole
//! `consolidate -f` path — reading 150,000 pods, building the input, the evaluation, the
//! report — rather than the engine alone (`examples/b7.rs`):
//!
//! ```sh
//! cargo run --release --example b7_manifests -- 5000 /tmp/b7
//! /usr/bin/time -v target/release/kubectl-karpenter consolidate -f /tmp/b7/cluster.json \
//!     --catalog /tmp/b7/catalog.yaml --now 2026-01-01T00:00:00Z -o json > /dev/null
//! ```
//!
//! One JSON document per line (YAML reads it as flow style), as `kubectl get -o json` would
//! give them: NodePools, the EC2NodeClass, Nodes, NodeClaims and bound Pods.

use std::io::Write as _;

use serde_json::{json, Value};

use kubectl_karpenter::model::labels;
use kubectl_karpenter::model::time::format_rfc3339;
use kubectl_karpenter::testing::{b7_input, fake_catalog_yaml, fake_instance_types};

fn pool(name: &str, capacity_type: Option<&str>) -> Value {
    let requirements: Vec<Value> = capacity_type
        .map(|ct| json!({"key": labels::CAPACITY_TYPE, "operator": "In", "values": [ct]}))
        .into_iter()
        .collect();
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                           "consolidateAfter": "0s", "budgets": [{"nodes": "10%"}]},
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "expireAfter": "Never",
                "requirements": requirements}}}
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5000);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp/b7".into()));
    std::fs::create_dir_all(&dir).expect("create output dir");
    std::fs::write(
        dir.join("catalog.yaml"),
        fake_catalog_yaml(&fake_instance_types(400)),
    )
    .expect("write catalog");

    let input = b7_input(nodes, 30, 10, 7);
    let file = std::fs::File::create(dir.join("cluster.json")).expect("create cluster.json");
    let mut out = std::io::BufWriter::new(file);
    let mut doc = |v: Value| {
        writeln!(out, "---\n{v}").expect("write");
    };
    doc(pool("on-demand", Some("on-demand")));
    doc(pool("spot", Some("spot")));
    doc(pool("mixed", None));
    doc(json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                 "subnetSelectorTerms": [{"id": "subnet-a"}], "securityGroupSelectorTerms": [{"id": "sg-a"}]}
    }));
    let mut pods = 0;
    for n in &input.nodes {
        let node = &n.node;
        let zone = &node.labels[labels::ZONE];
        let provider_id = format!("aws:///{zone}/i-{}", node.name);
        let quantities = |r: &kubectl_karpenter::model::resources::Resources| {
            json!({"cpu": format!("{}m", r.cpu), "memory": format!("{}", r.memory / 1000),
                   "pods": format!("{}", r.pods / 1000)})
        };
        doc(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node.name, "labels": node.labels,
                         "creationTimestamp": format_rfc3339(input.now - 86_400)},
            "spec": {"providerID": provider_id},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "capacity": quantities(&node.capacity),
                       "allocatable": quantities(&node.allocatable)}
        }));
        let claim = n.claim.as_ref().expect("B7 nodes are managed");
        doc(json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": claim.name, "labels": {labels::NODEPOOL: node.labels[labels::NODEPOOL]},
                         "creationTimestamp": format_rfc3339(claim.created)},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                     "requirements": [], "expireAfter": "Never"},
            "status": {"nodeName": node.name, "providerID": provider_id,
                       "conditions": [{"type": "Initialized", "status": "True",
                                       "lastTransitionTime": format_rfc3339(claim.initialized_at.unwrap_or(claim.created))}]}
        }));
        for b in &n.pods {
            let p = &b.pod;
            pods += 1;
            let spread: Vec<Value> = p
                .topology_spread
                .iter()
                .map(|c| {
                    json!({"maxSkew": c.max_skew, "topologyKey": c.topology_key,
                           "whenUnsatisfiable": "DoNotSchedule",
                           "labelSelector": {"matchLabels": c.label_selector.as_ref().map(|s| &s.match_labels)}})
                })
                .collect();
            doc(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": p.name, "namespace": p.namespace, "labels": p.labels, "uid": p.uid},
                "spec": {"nodeName": node.name, "nodeSelector": p.node_selector,
                         "topologySpreadConstraints": spread,
                         "containers": [{"name": "app", "image": "pause",
                                         "resources": {"requests": {"cpu": format!("{}m", p.requests.cpu),
                                                                    "memory": format!("{}", p.requests.memory / 1000)}}}]},
                "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
            }));
        }
    }
    out.flush().expect("flush");
    eprintln!(
        "{} nodes, {pods} pods, now {}: {}",
        input.nodes.len(),
        format_rfc3339(input.now),
        dir.display()
    );
}
