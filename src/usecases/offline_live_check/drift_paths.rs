//! `drift check -o json`, both ways, as `commands/drift.rs` runs it: live with `--catalog` — the
//! cluster's snapshot, [`drift_check::gather`] against EC2 and SSM, the CA bundle of
//! `kube-root-ca.crt`, the API server's version — and offline `-f export.yaml --catalog`
//! ([`drift_check::gather_offline`]); both [`drift_check::check`]. The report is compared but its
//! `mode` (live/offline by definition) and `kubernetes_version` (named offline only when a class
//! needed one, docs/commands.md `drift check`).

use serde_json::{json, Value};

use super::drift_world;
use super::paths::{self, Pair};
use super::world::World;
use crate::cloud::ami::KubeVersion;
use crate::cloud::Catalog;
use crate::k8s::fake::FakeCluster;
use crate::k8s::snapshot::{self, Scope};
use crate::usecases::consolidate::fuzz_check::gen::NOW;
use crate::usecases::drift_check::{self, Config, DriftReport, Mode};

/// The nodes' kubelet version (`world::with_server_state`): what the API server answers.
const VERSION: KubeVersion = KubeVersion::new(1, 29);

fn catalog(world: &World) -> Catalog {
    Catalog::from_custom_text("catalog.json", &world.catalog).unwrap()
}

/// The report's verdicts and notes, each detail without the names of images: live names every
/// image through DescribeImages, offline only those a class's `status.amis` lists (documented,
/// docs/commands.md `drift check`).
fn value(report: &DriftReport) -> Value {
    let mut nodes = json!(report.evaluation.nodes);
    for n in nodes.as_array_mut().into_iter().flatten() {
        n["detail"] = json!(unsourced(n["detail"].as_str().unwrap_or_default()));
    }
    json!({"summary": report.evaluation.summary, "nodes": nodes,
           "notes": report.evaluation.notes})
}

/// The checks offline cannot make, each listed in the node's `notChecked` (docs/commands.md
/// `drift check`): the instance's subnet and security groups (no DescribeInstances), whether a
/// capacity reservation is still active (no DescribeCapacityReservations: the class's
/// `status.capacityReservations` decides, absent here), and an ec2nodeclass-hash `v5` (the
/// cluster CA bundle is not in an export).
const OFFLINE_GAPS: &[&str] = &[
    "SecurityGroupDrift: the instance's security groups are unknown (no instance facts)",
    "SubnetDrift: the instance's subnet is unknown (no instance facts)",
    "CapacityReservationDrift: whether capacity reservation ",
    "NodeClassDrift: the current hash was not computed (EC2NodeClass default: ec2nodeclass-hash v5 mixes in the cluster CA bundle, which is not known offline",
];

/// Sets apart what offline documents it cannot know: each [`OFFLINE_GAPS`] line offline lists
/// and live does not is taken out, and a node live finds drifted for a reason offline lists as
/// not checked takes live's verdict. The names of those nodes (their `nodes` drift column is
/// reconciled alike, [`reconcile_nodes`]). Anything else still differs.
pub fn reconcile(live: &mut Value, offline: &mut Value) -> Vec<String> {
    let mut names = Vec::new();
    let (Some(l), Some(o)) = (live["nodes"].as_array(), offline["nodes"].as_array_mut()) else {
        return names;
    };
    for o in o.iter_mut() {
        let Some(l) = l.iter().find(|l| l["name"] == o["name"]) else {
            continue;
        };
        let live_lines = l["notChecked"].as_array().cloned().unwrap_or_default();
        let check = |line: &Value| {
            let text = line.as_str().unwrap_or_default();
            text.split_once(':').map_or(text, |(c, _)| c).to_string()
        };
        let mut gaps = Vec::new();
        if let Some(lines) = o["notChecked"].as_array_mut() {
            let mut kept = Vec::new();
            for line in lines.drain(..) {
                let text = line.as_str().unwrap_or_default();
                if !OFFLINE_GAPS.iter().any(|g| text.starts_with(g)) || live_lines.contains(&line) {
                    kept.push(line);
                } else if let Some(same) = live_lines.iter().find(|x| check(x) == check(&line)) {
                    // Not checked either way, for another reason (live: the bundle read but no
                    // class's own annotation confirms it).
                    kept.push(same.clone());
                } else {
                    gaps.push(text.to_string());
                }
            }
            *lines = kept;
        }
        // Drifted both ways for the class hash: live computed it with the CA bundle, offline
        // compared the NodeClaim's with the class's own annotation.
        if l["reason"] == "NodeClassDrift" && o["reason"] == "NodeClassDrift" {
            o["detail"] = l["detail"].clone();
        }
        let reason = l["reason"].as_str().unwrap_or("-");
        if l["drifted"] == true && gaps.iter().any(|g| g.starts_with(&format!("{reason}:"))) {
            *o = l.clone();
            names.push(l["name"].as_str().unwrap_or_default().to_string());
        }
    }
    // The counts follow the verdicts.
    for v in [&mut *live, &mut *offline] {
        v.as_object_mut().map(|m| m.remove("summary"));
    }
    names
}

/// `nodes`' drift column of the nodes [`reconcile`] gave live's verdict, and the drifted counts.
pub fn reconcile_nodes(names: &[String], live: &Value, offline: &mut Value) {
    if names.is_empty() {
        return;
    }
    offline["total"]["driftedNodes"] = live["total"]["driftedNodes"].clone();
    for (i, p) in (offline["nodePools"].as_array_mut().into_iter().flatten()).enumerate() {
        p["driftedNodes"] = live["nodePools"][i]["driftedNodes"].clone();
    }
    for o in offline["nodes"].as_array_mut().into_iter().flatten() {
        let name = o["name"].as_str().unwrap_or_default().to_string();
        if !names.contains(&name) {
            continue;
        }
        if let Some(l) =
            (live["nodes"].as_array().into_iter().flatten()).find(|l| l["name"] == o["name"])
        {
            o["drift"] = l["drift"].clone();
        }
    }
}

/// `text` without the ` (name)` after each `ami-…` id, and without where each expected image
/// was found (` via SSM …`, ` via DescribeImages …` live; ` via … status.amis` offline).
fn unsourced(text: &str) -> String {
    let text = unnamed(text);
    let mut out = String::new();
    for (i, part) in text.split(" or ").enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(part.split(" via ").next().unwrap_or_default());
    }
    out
}

/// `text` without the ` (name)` after each `ami-…` id.
pub(super) fn unnamed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("ami-") {
        let end = i + rest[i..]
            .find([' ', ',', ';', ')'])
            .unwrap_or(rest.len() - i);
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        if let Some(after) = rest.strip_prefix(" (") {
            rest = after.find(')').map_or(rest, |j| &after[j + 1..]);
        }
    }
    out.push_str(rest);
    out
}

/// `drift check -o json --catalog`, live then `-f`.
pub fn drift(world: &World, cluster: &FakeCluster, text: &str) -> Pair {
    let config = Config {
        catalog: Some("catalog.json".into()),
        ..Config::default()
    };
    let live = (|| -> Result<Value, String> {
        let read = snapshot::read(cluster, Scope::default()).map_err(|e| e.to_string())?;
        let cloud = drift_world::cloud(paths::instances(cluster));
        let mut snapshot = drift_check::gather(&read.manifests, &cloud, VERSION, NOW, &mut |_| {
            Ok(catalog(world))
        })
        .map_err(|e| e.to_string())?;
        snapshot.ca_bundle = drift_check::ca_bundle(cluster)?;
        let report = drift_check::check(&config, snapshot, Mode::Live, Some(VERSION))
            .map_err(|e| e.to_string())?;
        Ok(value(&report))
    })();
    let offline = (|| -> Result<Value, String> {
        let objects = crate::api::read_str("export.yaml", text).map_err(|e| e.to_string())?;
        let m = crate::api::Manifests::from_objects_in(objects, crate::api::Scope::NoPods)
            .map_err(|e| e.to_string())?;
        let offline = drift_check::gather_offline(&config, &m, Some(&catalog(world)), None, NOW)
            .map_err(|e| e.to_string())?;
        let report = drift_check::check(
            &config,
            offline.snapshot,
            Mode::Offline,
            offline.kubernetes_version,
        )
        .map_err(|e| e.to_string())?;
        Ok(value(&report))
    })();
    (live, offline)
}
