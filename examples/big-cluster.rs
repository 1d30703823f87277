//! docs/performance.md B4's cluster: the local test cluster seeded with N nodes and M pods (default 5,000
//! and 150,000, plus some pending), serving until killed, for measuring the memory of live
//! commands against it (`scripts/bench-b4.sh` runs the whole measurement).
//!
//! ```text
//! cargo run --release --example big-cluster -- --listen 127.0.0.1:18090 \
//!     --write-kubeconfig /tmp/big.kubeconfig [--nodes 5000] [--pods 150000] [--pending 200] \
//!     [--provider-ids FILE] [--pools default[,b,c]]
//! ```
//!
//! `--provider-ids FILE` gives the nodes real EC2 instance ids (one `i-…` per line, e.g. moto's
//! `bulkInstances` from `tests/moto/server.py --instances N`), node *n* taking line *n*, so a
//! live `drift check` finds an instance behind every node (docs/performance.md B3); without it the ids are
//! made up (`i-000…n`) and DescribeInstances finds none of them. `--pools` spreads the nodes
//! round-robin over NodePools (their `karpenter.sh/nodepool` label), default `default`.
//!
//! `--objects FILE --crds DIR` also writes every object of FILE (one JSON object per line, the
//! way `examples/b7_manifests.rs` writes a cluster) straight into the store, status included,
//! after registering the CustomResourceDefinitions in DIR — so the live commands read exactly
//! the objects `-f FILE` reads (docs/performance.md B7 live; `scripts/bench-b7-live.sh`).
//!
//! Pods are bare (a garbage collector would remove pods of absent ReplicaSets). Nodes and pods
//! are written straight into the store (creating 150k pods through the API would
//! take longer than the measurement); Karpenter's CRDs, the NodePool and the class are applied
//! with kubectl by the script, like a user would.

#[path = "../tests/cluster/mod.rs"]
mod cluster;

use serde_json::json;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.windows(2).find(|w| w[0] == name).map(|w| w[1].clone())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let listen = arg(&args, "--listen").unwrap_or_else(|| "127.0.0.1:18090".into());
    let kubeconfig =
        arg(&args, "--write-kubeconfig").unwrap_or_else(|| "/tmp/big.kubeconfig".into());
    let nodes: usize = arg(&args, "--nodes")
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let pods: usize = arg(&args, "--pods")
        .and_then(|s| s.parse().ok())
        .unwrap_or(150_000);
    let pending: usize = arg(&args, "--pending")
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let provider_ids: Vec<String> = match arg(&args, "--provider-ids") {
        Some(path) => std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("--provider-ids {path}: {e}"))
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    if !provider_ids.is_empty() && provider_ids.len() < nodes {
        panic!(
            "--provider-ids has {} ids for {nodes} nodes",
            provider_ids.len()
        );
    }
    let pools: Vec<String> = arg(&args, "--pools")
        .unwrap_or_else(|| "default".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let cluster = cluster::TestCluster::start_on(
        listen.parse().expect("--listen HOST:PORT"),
        cluster::Config {
            kubernetes_version: "1.30".into(),
            ..cluster::Config::default()
        },
    )
    .expect("start");
    cluster
        .write_kubeconfig(std::path::Path::new(&kubeconfig))
        .expect("kubeconfig");
    let now = "2026-12-01T00:00:00Z";
    cluster.with_store(|st| {
        st.history_cap = 16;
        let node_res = st.registry.find("", "v1", "nodes").cloned().unwrap();
        let pod_res = st.registry.find("", "v1", "pods").cloned().unwrap();
        for n in 0..nodes {
            let name = format!("ip-10-{}-{}-{}.ec2.internal", n / 65536, (n / 256) % 256, n % 256);
            let zone = ["us-east-1a", "us-east-1b", "us-east-1c"][n % 3];
            let id = provider_ids
                .get(n)
                .cloned()
                .unwrap_or_else(|| format!("i-{n:017x}"));
            let pool = &pools[n % pools.len()];
            st.insert(
                &node_res,
                json!({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "uid": format!("node-{n}"), "creationTimestamp": now,
                        "labels": {"karpenter.sh/nodepool": pool, "kubernetes.io/arch": "amd64",
                            "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.4xlarge",
                            "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "us-east-1",
                            "karpenter.sh/capacity-type": "on-demand", "kubernetes.io/hostname": name,
                            "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}},
                    "spec": {"providerID": format!("aws:///{zone}/{id}")},
                    "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "234", "ephemeral-storage": "20Gi"},
                        "allocatable": {"cpu": "15890m", "memory": "61Gi", "pods": "234", "ephemeral-storage": "18Gi"},
                        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
                }),
            );
        }
        let total = pods + pending;
        for p in 0..total {
            let bound = p < pods;
            let node = p % nodes.max(1);
            let node_name = format!("ip-10-{}-{}-{}.ec2.internal", node / 65536, (node / 256) % 256, node % 256);
            let app = format!("app-{}", p % 500);
            let mut pod = json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{app}-{p:06}"), "namespace": format!("team-{}", p % 50),
                    "uid": format!("pod-{p}"), "creationTimestamp": now,
                    "labels": {"app": app, "pod-template-hash": "5d9c7b8f6d", "team": format!("t{}", p % 50)},
                    "annotations": {"kubectl.kubernetes.io/restartedAt": now}},
                "spec": {"containers": [{"name": "main", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1.2.3",
                        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                        "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "PORT", "value": "8080"}],
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}]}],
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                    "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            });
            if bound {
                pod["spec"]["nodeName"] = json!(node_name);
            } else {
                // No existing (m5) node matches: only a new c6a NodeClaim can take them.
                pod["spec"]["nodeSelector"] = json!({"karpenter.k8s.aws/instance-family": "c6a"});
                pod["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]});
            }
            st.insert(&pod_res, pod);
        }
    });
    if let Some(path) = arg(&args, "--objects") {
        let crds = arg(&args, "--crds").expect("--objects needs --crds DIR (their kinds' CRDs)");
        let count = seed_objects(&cluster, &path, &crds);
        eprintln!("seeded {count} objects from {path}");
    }
    eprintln!("seeded {nodes} nodes and {pods} bound + {pending} pending pods; serving {listen}");
    println!("{}", cluster.url());
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// Registers the CRDs of `crds` and writes each JSON object line of `path` into the store.
fn seed_objects(cluster: &cluster::TestCluster, path: &str, crds: &str) -> usize {
    let text = std::fs::read_to_string(path).expect("--objects FILE");
    let mut crd_files: Vec<_> = std::fs::read_dir(crds)
        .expect("--crds DIR")
        .map(|e| e.expect("--crds DIR").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    crd_files.sort();
    cluster.with_store(|st| {
        let crd_res = st
            .registry
            .find("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned()
            .expect("the CRD resource");
        for file in &crd_files {
            let yaml = std::fs::read_to_string(file).expect("a CRD file");
            let crd: serde_json::Value = serde_saphyr::from_str(&yaml).expect("a CRD");
            st.registry.register_crd(&crd).expect("register the CRD");
            st.insert(&crd_res, crd);
        }
        let mut count = 0;
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let mut obj: serde_json::Value = serde_json::from_str(line).expect("a JSON object");
            let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
            let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
            let kind = obj["kind"].as_str().unwrap_or_default().to_string();
            let res = st
                .registry
                .by_kind(group, &kind)
                .cloned()
                .unwrap_or_else(|| panic!("no resource for {api_version} {kind}"));
            if obj["metadata"]["uid"].is_null() {
                let name = obj["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                obj["metadata"]["uid"] = json!(format!("{kind}-{name}"));
            }
            st.insert(&res, obj);
            count += 1;
        }
        count
    })
}
