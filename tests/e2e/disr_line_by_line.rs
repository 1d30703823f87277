//! Disruption execution, line by line (s29-linedisr, docs/upstream-tests.md): how a decision is
//! carried out (core v1.14.1 `pkg/controllers/disruption/queue.go`), through the binary against
//! the loopback cluster + moto. Fixtures: `tests/fixtures/disr-line-by-line/`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::drift_live::{old_node, switch_to_new, AMI_124, AMI_125};
use crate::provision_live::Walk;
use crate::support::fixture;
use kubectl_karpenter::cloud::aws::{AwsCloud, AwsOptions};
use kubectl_karpenter::cloud::types::{Compute, Filter, InstanceQuery};

/// A replacement whose instance is terminated (a spot reclaim, a failed boot) while it is
/// awaited rolls its node back at once, not after `--ready-timeout`: `queue.go
/// waitOrTerminate`, a replacement NodeClaim gone is an `UnrecoverableError` ("replacement was
/// deleted") and the command's candidates are untainted.
#[test]
fn a_replacement_terminated_while_awaited_rolls_the_node_back_at_once() {
    // Instances of the 1.25 AMI never join: the replacement is awaited until it goes.
    let walk = Walk::with("disr-line-gone", true, "crds/v1alpha5", |moto| {
        vec![moto.param(AMI_125)]
    });
    let (old, new) = (walk.moto.param(AMI_124), walk.moto.param(AMI_125));
    walk.ok(&[
        "apply",
        "-f",
        &fixture("disr-line-by-line/profile.yaml").to_string_lossy(),
    ]);
    let old_name = old_node(&walk, &old);
    switch_to_new(&walk, &new);

    // Plays EC2 reclaiming the replacement: terminated as soon as it runs.
    let done = Arc::new(AtomicBool::new(false));
    let reclaimer = {
        let (done, url, region, image) = (
            done.clone(),
            walk.moto.url.clone(),
            walk.moto.region().to_string(),
            new.clone(),
        );
        std::thread::spawn(move || {
            let cloud = AwsCloud::connect(&AwsOptions {
                region: Some(region),
                endpoint_url: Some(url),
                static_credentials: Some(("testing".into(), "testing".into())),
                ..AwsOptions::default()
            })
            .expect("connect to moto");
            while !done.load(Ordering::Relaxed) {
                let running: Vec<String> = cloud
                    .describe_instances(&InstanceQuery::Filters(vec![
                        Filter::new("image-id", [image.as_str()]),
                        Filter::new("instance-state-name", ["pending", "running"]),
                    ]))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|i| i.id)
                    .collect();
                if !running.is_empty() {
                    let _ = cloud.terminate_instances(&running);
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let started = Instant::now();
    let out = walk.run(&[
        "karpenter",
        "drift",
        "replace",
        "--yes",
        "--ready-timeout",
        "120s",
        "-o",
        "json",
    ]);
    done.store(true, Ordering::Relaxed);
    reclaimer.join().unwrap();
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let node = &doc["nodes"][0];
    assert_eq!(node["status"], "rolled-back", "{doc}");
    let detail = node["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("terminated before it served"),
        "rolled back for the instance gone, not the ready timeout: {doc}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(110),
        "long before the ready timeout: {:?}",
        started.elapsed()
    );
    let live = walk.json(&["get", "node", &old_name, "-o", "json"]);
    assert_ne!(live["spec"]["unschedulable"], true, "uncordoned: {live}");
    assert!(
        live["metadata"]["annotations"]["kubectl-karpenter.io/replacement"].is_null(),
        "the record is cleared: {live}"
    );
}
