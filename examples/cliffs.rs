//! Writes the inputs that once made the solver fall off a cliff (BENCHMARKS.md, "Scaling
//! cliffs"): one Deployment of `N` replicas, a NodePool and its EC2NodeClass, planned against
//! the embedded catalog.
//!
//! ```sh
//! cargo run --release --example cliffs -- gpu 10000 > /tmp/gpu.yaml      # fits nowhere
//! cargo run --release --example cliffs -- spread 10000 > /tmp/spread.yaml # hostname spread
//! cargo run --release --example cliffs -- replicas 300000 > /tmp/r.yaml   # plain replicas
//! /usr/bin/time -v target/release/kubectl-karpenter provision --dry-run -f /tmp/gpu.yaml \
//!     -o json > /dev/null
//! ```
//!
//! * `gpu`: replicas requesting `nvidia.com/gpu: 1` while the NodePool allows only the c, m and
//!   r categories: every replica stays pending.
//! * `spread`: replicas with a `kubernetes.io/hostname` topology spread (maxSkew 1,
//!   DoNotSchedule) over themselves: one node each.
//! * `replicas`: small replicas packed many to a node.

const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: node-role
  subnetSelectorTerms: [{tags: {k: v}}]
  securityGroupSelectorTerms: [{tags: {k: v}}]
";

fn main() {
    let mut args = std::env::args().skip(1);
    let scenario = args.next().unwrap_or_default();
    let replicas: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let (requests, extra) = match scenario.as_str() {
        "gpu" => ("{cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"1\"}", ""),
        "spread" => (
            "{cpu: 250m, memory: 256Mi}",
            "      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: inflate}}
",
        ),
        "replicas" => ("{cpu: 100m, memory: 128Mi}", ""),
        other => {
            eprintln!("unknown scenario {other:?}: gpu, spread or replicas");
            std::process::exit(2);
        }
    };
    print!(
        "{POOL}---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: inflate}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: inflate}}}}
  template:
    metadata: {{labels: {{app: inflate}}}}
    spec:
{extra}      containers:
      - name: app
        image: pause
        resources:
          requests: {requests}
"
    );
}
