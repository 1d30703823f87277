//! The same world read two ways (docs/spec.md §2, docs/commands.md): each world — example
//! manifests and public configurations of `tests/fixtures` — is applied to the loopback cluster
//! with `kubectl apply` (status written through the status subresource, as the controllers
//! would), then `provision --dry-run`, `drift check`, `consolidate` and `nodes` run live (the
//! cluster + moto) and offline on the cluster's own export (`kubectl get … -A -o yaml`: a `List`
//! with `managedFields`, `status`, defaults, `resourceVersion` and the
//! `last-applied-configuration` annotation), with `--now` the live report's clock. The decisions
//! must agree field by field; what legitimately differs (the mode, the clock, the AWS calls made,
//! prices where the live catalog is moto's) is normalised away below, each with its reason.

use std::collections::BTreeSet;

use serde_json::Value;

use kubectl_karpenter::testing::json_differences;

use crate::provision_live::Walk;
use crate::support::root;

/// What `kubectl get` exports for the offline side: docs/consolidation.md's dump command.
const EXPORT: &str = "nodes,nodeclaims,nodepools,ec2nodeclasses,pods,pdb,ds,pvc,pv,storageclass";

/// One world: files (under the crate root) applied in order, with the CRDs of `crds` (the
/// first decides the Karpenter generation) and `kinds` exported beside [`EXPORT`].
struct World {
    name: &'static str,
    crds: &'static [&'static str],
    files: &'static [&'static str],
    kinds: &'static str,
    /// Differences docs/commands.md documents as offline assumptions, tolerated: the start of
    /// the difference (`command: .path`) and the documented reason.
    documented: Vec<(&'static str, &'static str)>,
    /// `--catalog` (under tests/fixtures) for `consolidate` and `nodes` on both sides: the
    /// same prices live and offline.
    catalog: Option<&'static str>,
}

/// `drift check` and `nodes`' drift of a world whose classes carry no `status` and whose
/// NodeClaims no `status.imageID`: offline the AMI and subnet facts come from those only
/// (docs/commands.md `drift check`, "Offline (`-f`)"), live from SSM, EC2 and the instances.
const NO_DRIFT_FACTS: &[(&str, &str)] = &[
    (
        "drift check",
        "offline AMI facts come from status.amis / status.imageID",
    ),
    (
        "nodes -o: .nodes",
        "the same, in `nodes`' DRIFT and AMI columns",
    ),
    ("nodes -o: .nodePools[0].driftedNodes", "the same, counted"),
    ("nodes -o: .total.driftedNodes", "the same, counted"),
];

/// Splits a manifest into its documents (YAML `---` or one JSON object per document).
fn documents(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for doc in text.split("\n---") {
        let doc = doc.trim_start_matches('-').trim();
        if doc.is_empty()
            || doc
                .lines()
                .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue;
        }
        let v: Value = match serde_json::from_str(doc) {
            Ok(v) => v,
            Err(_) => serde_saphyr::from_str(doc).unwrap_or_else(|e| panic!("{e}: {doc}")),
        };
        if !v.is_null() {
            out.push(v);
        }
    }
    out
}

/// Applies a world as a user would: `kubectl apply`, then each object's `status` through the
/// status subresource (what the kubelet and the controllers write).
fn apply(walk: &Walk, world: &World) {
    for (i, file) in world.files.iter().enumerate() {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let mut docs = documents(&text);
        for d in &mut docs {
            same_world(walk, d);
        }
        let namespaces: BTreeSet<&str> = (docs.iter())
            .filter_map(|d| d["metadata"]["namespace"].as_str())
            .filter(|ns| *ns != "default")
            .collect();
        for ns in namespaces {
            walk.ok(&["create", "namespace", ns]);
        }
        let stream = docs
            .iter()
            .map(|d| serde_saphyr::to_string(d).unwrap())
            .collect::<Vec<_>>()
            .join("---\n");
        walk.apply(&format!("world-{i}.yaml"), &stream);
        for d in &docs {
            let Some(status) = d.get("status") else {
                continue;
            };
            let kind = d["kind"].as_str().unwrap().to_lowercase();
            let name = d["metadata"]["name"].as_str().unwrap();
            let mut args = vec!["patch", &kind, name, "--subresource=status", "--type=merge"];
            let ns = d["metadata"]["namespace"].as_str().unwrap_or("default");
            if !matches!(
                kind.as_str(),
                "node" | "nodeclaim" | "nodepool" | "ec2nodeclass"
            ) {
                args.extend(["-n", ns]);
            }
            let patch = serde_json::json!({ "status": status }).to_string();
            args.extend(["-p", &patch]);
            walk.ok(&args);
        }
    }
}

/// What makes the applied object the world the manifest describes on the loopback cluster:
/// - a Node's EC2 instance exists (moto runs one of its type in its zone, and its
///   `spec.providerID` names it): offline every instance is taken as running (docs/commands.md
///   `nodes -f`, the `consolidate -f` warning), live a node without one is gone;
/// - owner references name no object of the world (uid `u1`): the garbage collector would delete
///   the pod while the commands run, so they are left out (both sides read the same pod).
fn same_world(walk: &Walk, d: &mut Value) {
    if d["kind"] == "Node" {
        let Some(provider) = d["spec"]["providerID"].as_str() else {
            return;
        };
        let zone = provider
            .trim_start_matches("aws:///")
            .split('/')
            .next()
            .unwrap();
        let labels = &d["metadata"]["labels"];
        let itype = labels["node.kubernetes.io/instance-type"]
            .as_str()
            .unwrap_or("m5.large");
        let image = walk.moto.seed["images"]
            .as_array()
            .and_then(|i| i.iter().find(|i| i["architecture"] == "x86_64"))
            .and_then(|i| i["id"].as_str())
            .unwrap()
            .to_string();
        let id = crate::support::boto3(
            &walk.moto,
            &format!(
                "r = ec2.run_instances(ImageId='{image}', InstanceType='{itype}', MinCount=1, MaxCount=1, Placement={{'AvailabilityZone': '{zone}'}})\nprint(r['Instances'][0]['InstanceId'])"
            ),
        );
        d["spec"]["providerID"] = Value::String(format!("aws:///{zone}/{id}"));
    }
    if let Some(meta) = d["metadata"].as_object_mut() {
        meta.remove("ownerReferences");
    }
}

/// A command's JSON document (exit code kept apart: both sides must agree on it too).
fn doc(walk: &Walk, args: &[&str]) -> (i32, Value, String) {
    let out = walk.run(args);
    let v = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}\n{}", out.stdout, out.stderr));
    (out.code, v, out.stderr)
}

/// Keys that legitimately differ between the two readings, removed at every depth: the mode
/// and the clock (offline `--now` is the live report's, but `drift check` has no `--now` and
/// `nodes` runs later: ages are seconds apart), the AWS calls made, and `nodes`' `notes` (live
/// none; offline the documented "AWS not asked" note).
const VOLATILE: &[&str] = &[
    "mode",
    "now",
    "awsCalls",
    "generatedAt",
    "ageSeconds",
    "notes",
];

fn normalise(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in VOLATILE {
                m.remove(*k);
            }
            // A planned NodeClaim's name: live Karpenter's generated suffix, offline a counter.
            if m.contains_key("pods") && m.contains_key("instanceType") {
                m.remove("name");
            }
            for x in m.values_mut() {
                normalise(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// Runs the four commands live and offline on the export; returns the differences.
fn compare(walk: &Walk, world: &World) -> Vec<String> {
    let kinds = format!("{EXPORT}{}", world.kinds);
    let export = walk.ok(&["get", &kinds, "-A", "-o", "yaml"]);
    let file = walk.dir.join("export.yaml");
    std::fs::write(&file, &export).unwrap();
    let file = file.to_string_lossy().to_string();
    let catalog = world.catalog.map(crate::support::fixture);
    let catalog = catalog.map(|c| c.to_string_lossy().to_string());
    let mut first = vec!["karpenter", "consolidate", "-o", "json"];
    first.extend(
        catalog
            .as_deref()
            .map(|c| ["--catalog", c])
            .into_iter()
            .flatten(),
    );
    let (_, cons, _) = doc(walk, &first);
    let now = cons["now"].as_str().unwrap_or_default().to_string();
    let commands: [&[&str]; 4] = [
        &["provision", "--dry-run", "-o", "json"],
        &["drift", "check", "-o", "json"],
        &["consolidate", "-o", "json"],
        &["nodes", "-o", "json"],
    ];
    let mut diffs = Vec::new();
    for c in commands {
        let mut live_args = vec!["karpenter"];
        live_args.extend(c);
        if let Some(path) = catalog
            .as_deref()
            .filter(|_| matches!(c[0], "consolidate" | "nodes"))
        {
            live_args.extend(["--catalog", path]);
        }
        let (lc, mut live, lerr) = doc(walk, &live_args);
        let mut off_args = live_args.clone();
        // The live cluster says 1.25 (`Walk`'s); offline 1.32 is assumed unless given.
        off_args.extend([
            "-f",
            &file,
            "--region",
            "us-east-1",
            "--kubernetes-version",
            "1.25",
        ]);
        if matches!(c[0], "consolidate" | "nodes") {
            off_args.extend(["--now", &now]);
        }
        let (oc, mut off, oerr) = doc(walk, &off_args);
        let tag = format!("{} {}", world.name, c[..2].join(" "));
        std::fs::write(
            walk.dir.join(format!("{}-live.json", c[0])),
            format!("{live:#}\n{lerr}"),
        )
        .unwrap();
        std::fs::write(
            walk.dir.join(format!("{}-offline.json", c[0])),
            format!("{off:#}\n{oerr}"),
        )
        .unwrap();
        if lc != oc && !(world.documented.iter()).any(|(at, _)| at.starts_with(c[0])) {
            diffs.push(format!(
                "{tag}: exit live {lc} / offline {oc}\n{lerr}\n{oerr}"
            ));
        }
        normalise(&mut live);
        normalise(&mut off);
        let d = (json_differences(&live, &off).into_iter()).map(|d| format!("{tag}: {d}"));
        let documented = |d: &String| {
            (world.documented.iter()).any(|(at, _)| d.starts_with(&format!("{} {at}", world.name)))
        };
        diffs.extend(d.filter(|d| !documented(d)));
    }
    diffs
}

fn check(world: World) {
    let name = format!("offline-live-{}", world.name);
    let walk = Walk::with(&name, false, world.crds[0], |_| Vec::new());
    for crds in &world.crds[1..] {
        walk.ok(&[
            "apply",
            "-f",
            &crate::support::fixture(crds).to_string_lossy(),
        ]);
    }
    apply(&walk, &world);
    let diffs = compare(&walk, &world);
    assert!(
        diffs.is_empty(),
        "{}:\n{}",
        walk.dir.display(),
        diffs.join("\n")
    );
}

#[test]
fn the_consolidate_example_reads_the_same_offline_and_live() {
    check(World {
        name: "consolidate-example",
        crds: &["crds/v1"],
        files: &["examples/consolidate/cluster.yaml"],
        kinds: "",
        documented: vec![
            NO_DRIFT_FACTS[0],
            NO_DRIFT_FACTS[1],
            NO_DRIFT_FACTS[2],
            NO_DRIFT_FACTS[3],
        ],
        // A pool without a capacity-type requirement may launch spot: without one catalog,
        // moto's spot prices (live) make a spot replacement cheaper, while offline the embedded
        // catalog has none and spot is priced at on-demand (docs/commands.md, offline
        // assumptions). With the same `--catalog` both decide alike.
        catalog: Some("offline-live/m5-catalog.yaml"),
    });
}

#[test]
fn the_quickstart_reads_the_same_offline_and_live() {
    check(World {
        name: "quickstart",
        crds: &["crds/v1beta1"],
        files: &["examples/manifests/quickstart.yaml"],
        kinds: "",
        // A class without status.subnets: offline every zone of the region, live the zones of
        // the subnets its selector matches now (docs/commands.md, offline assumptions).
        documented: vec![
            (
                "provision --dry-run: .nodeClaims[0].zones",
                "zones without status.subnets",
            ),
            (
                "provision --dry-run: .nodeClaims[0].labels.topology.k8s.aws/zone-id",
                "the same",
            ),
        ],
        catalog: None,
    });
}

#[test]
fn a_v1_pool_with_zone_spread_and_a_pdb_reads_the_same_offline_and_live() {
    check(World {
        name: "general-purpose",
        crds: &["crds/v1"],
        files: &[
            "tests/fixtures/examples/v1/general-purpose.yaml",
            "tests/fixtures/examples/workloads/spread-zone.yaml",
            "tests/fixtures/examples/workloads/disruption-budget.yaml",
        ],
        kinds: "",
        documented: vec![],
        catalog: None,
    });
}

#[test]
fn a_public_statefulset_and_job_world_reads_the_same_offline_and_live() {
    check(World {
        name: "kafka-batch",
        crds: &["crds/v1"],
        files: &["tests/fixtures/public/s32/yarinago-kafka-batch.yaml"],
        kinds: "",
        documented: vec![],
        catalog: None,
    });
}

#[test]
fn a_public_overlay_world_reads_the_same_offline_and_live() {
    check(World {
        name: "slemify-gen6",
        crds: &["crds/v1", "crds/v1alpha1"],
        files: &["tests/fixtures/public/s32/slemify-gen6-world.yaml"],
        kinds: ",nodeoverlays",
        documented: vec![
            NO_DRIFT_FACTS[0],
            NO_DRIFT_FACTS[1],
            (
                "consolidate -o: .actions[0].replacement.zones",
                "zones without status.subnets",
            ),
        ],
        catalog: None,
    });
}

/// `nodes -f … --kubernetes-version 1.25`: the DRIFT column's SSM paths are 1.25's (the flag
/// was read live only; offline 1.32 was said whatever it was given).
#[test]
fn nodes_from_manifests_reads_the_kubernetes_version_flag() {
    let world = root().join("tests/fixtures/public/s32/slemify-gen6-world.yaml");
    let world = world.to_string_lossy();
    let args = ["nodes", "-f", &world, "--region", "us-east-1", "-o", "json"];
    let mut with = args.to_vec();
    with.extend(["--kubernetes-version", "1.25"]);
    let run = crate::support::karpenter(&with, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let detail = doc["nodes"][0]["drift"]["detail"].as_str().unwrap();
    assert!(detail.contains("aws-k8s-1.25/"), "{detail}");
    assert_eq!(
        doc["notes"][0],
        "-f: instance facts from the manifests only (AWS not asked; every instance taken as running)"
    );
    let run = crate::support::karpenter(&args, b"");
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let detail = doc["nodes"][0]["drift"]["detail"].as_str().unwrap();
    assert!(detail.contains("aws-k8s-1.32/"), "{detail}");
}
