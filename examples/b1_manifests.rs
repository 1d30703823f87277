//! Writes benchmark B1 as files, to time the whole `provision --dry-run -f` path (parsing,
//! sizing, solving, rendering) rather than the solver alone:
//!
//! ```sh
//! cargo run --release --example b1_manifests -- 20000 /tmp/b1
//! /usr/bin/time -v target/release/kubectl-karpenter provision --dry-run \
//!     -f /tmp/b1/manifests.yaml --catalog /tmp/b1/catalog.yaml -o json > /dev/null
//! ```
use std::fmt::Write as _;

use kubectl_karpenter::model::pod::WhenUnsatisfiable;
use kubectl_karpenter::testing::{diverse_pods, fake_catalog_yaml, fake_instance_types};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp/b1".into()));
    std::fs::create_dir_all(&dir).expect("create output dir");

    let catalog = fake_catalog_yaml(&fake_instance_types(400));
    std::fs::write(dir.join("catalog.yaml"), catalog).expect("write catalog");

    let mut out = String::from(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n  role: node-role\n  subnetSelectorTerms: [{tags: {k: v}}]\n  securityGroupSelectorTerms: [{tags: {k: v}}]\n",
    );
    for pod in diverse_pods(n, 42) {
        let labels: Vec<String> = pod
            .labels
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        write!(
            out,
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {}\n  labels: {{{}}}\nspec:\n  containers:\n  - name: app\n    image: pause\n    resources:\n      requests: {{cpu: {}m, memory: {}Mi}}\n",
            pod.name,
            labels.join(", "),
            pod.requests.cpu,
            pod.requests.memory / 1000 / (1 << 20)
        )
        .unwrap();
        for c in &pod.topology_spread {
            let sel = c.label_selector.as_ref().unwrap();
            let (k, v) = sel.match_labels.iter().next().unwrap();
            let when = match c.when_unsatisfiable {
                WhenUnsatisfiable::DoNotSchedule => "DoNotSchedule",
                WhenUnsatisfiable::ScheduleAnyway => "ScheduleAnyway",
            };
            write!(
                out,
                "  topologySpreadConstraints:\n  - {{maxSkew: {}, topologyKey: {}, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{{k}: {v}}}}}}}\n",
                c.max_skew, c.topology_key
            )
            .unwrap();
        }
        let affinity = |kind: &str,
                        terms: &[kubectl_karpenter::model::pod::PodAffinityTerm],
                        out: &mut String| {
            if terms.is_empty() {
                return;
            }
            let t = &terms[0];
            let (k, v) = t
                .label_selector
                .as_ref()
                .unwrap()
                .match_labels
                .iter()
                .next()
                .unwrap();
            write!(
                out,
                "  affinity:\n    {kind}:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - {{topologyKey: {}, labelSelector: {{matchLabels: {{{k}: {v}}}}}}}\n",
                t.topology_key
            )
            .unwrap();
        };
        affinity("podAffinity", &pod.pod_affinity, &mut out);
        affinity("podAntiAffinity", &pod.pod_anti_affinity, &mut out);
    }
    std::fs::write(dir.join("manifests.yaml"), out).expect("write manifests");
    println!("wrote {n} pods to {}", dir.display());
}
