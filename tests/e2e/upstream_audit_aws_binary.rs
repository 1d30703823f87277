//! The AWS launch-side Its the earlier replays left unmirrored (docs/upstream-tests.md "AWS
//! launch-side Its left unmirrored, audited (s25-audit-aws)"), replayed through `provision --yes`
//! against moto and the loopback cluster. moto keeps neither a CreateFleet's `Context` nor its
//! allocation strategy, so its launcher writes every CreateFleet request it receives to a file
//! (`tests/moto/server.py --fleet-requests`), which is what each scenario reads.

use serde_json::Value;

use crate::provision_live::Walk;
use crate::support::fixture;
use crate::test_cluster::Config;

/// The CreateFleet requests moto received so far, in order.
fn fleet_requests(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (instance type, zone, priority) of each override of a request, as sent.
fn overrides(request: &Value) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for config in request["LaunchTemplateConfigs"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for o in config["Overrides"].as_array().into_iter().flatten() {
            out.push((
                o["InstanceType"].as_str().unwrap_or_default().to_string(),
                o["AvailabilityZone"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                o["Priority"]
                    .as_f64()
                    .or_else(|| o["Priority"].as_str().and_then(|p| p.parse().ok()))
                    .unwrap_or(f64::NAN),
            ));
        }
    }
    out
}

/// Scales deployment `name` to `replicas`.
fn scale(walk: &Walk, name: &str, replicas: usize) {
    walk.ok(&[
        "scale",
        "deployment",
        name,
        &format!("--replicas={replicas}"),
    ]);
}

/// aws v1.14.1 pkg/cloudprovider/suite_test.go › "EC2 Context" ("should set context on the
/// CreateFleet request if specified on the NodePool", "should not set context … when min values
/// are relaxed …") and "Subnet Compatibility › should default to the cluster's subnets" (every
/// zone's subnet, `Priority` the offering's price); pkg/providers/instance/suite_test.go "should
/// use lowest price allocation stragaty by default for on-demand nodeclaims" and "should use
/// priotiztied allocation stragaty for an on-demand nodeclaim using nodeoverlay pricing".
/// launchtemplate/suite_test.go "should set the capacity reservation specification according to
/// the capacity reservation feature flag" (Entry "enabled"). Three `provision --yes` runs: a plain one, one after a NodeOverlay priced m5.large, one for a
/// pool whose `minValues` (3 families of two types) only `--min-values-policy BestEffort` relaxes.
#[test]
fn fleet_context_allocation_and_priorities_through_the_binary() {
    let requests = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("audit-aws-fleets.jsonl");
    let _ = std::fs::remove_file(&requests);
    let flag = requests.to_string_lossy().into_owned();
    let walk = Walk::build(
        "audit-aws-fleets",
        &["--fleet-requests", &flag],
        "crds/v1",
        |moto, config| Config {
            ec2_endpoint: Some(moto.url.clone()),
            ..config
        },
    );
    walk.ok(&["apply", "-f", &fixture("crds/v1alpha1").to_string_lossy()]);
    walk.ok(&[
        "apply",
        "-f",
        &fixture("audit-aws/fleet-requests.yaml").to_string_lossy(),
    ]);
    walk.wait_unschedulable(1);

    // 1. The class's context; lowest-price; one override per (type, zone), priority = price.
    walk.ok(&["karpenter", "provision", "--yes"]);
    let sent = fleet_requests(&requests);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    assert_eq!(sent[0]["Context"], "context-1234", "{:#}", sent[0]);
    assert_eq!(
        sent[0]["OnDemandOptions"]["AllocationStrategy"], "lowest-price",
        "{:#}",
        sent[0]
    );
    let first = overrides(&sent[0]);
    let zones: std::collections::BTreeSet<&str> = first.iter().map(|o| o.1.as_str()).collect();
    assert!(
        zones.len() > 1,
        "every zone of the class's subnets: {first:?}"
    );
    for (instance_type, _, priority) in &first {
        let price = if instance_type == "c5.large" {
            0.085
        } else {
            0.096
        };
        assert_eq!(*priority, price, "{:#}", sent[0]);
    }
    assert_eq!(first[0].0, "c5.large", "cheapest first: {first:?}");
    // launchtemplate/suite_test.go "should set the capacity reservation specification according
    // to the capacity reservation feature flag" (enabled): an on-demand template opts out of
    // open ODCRs.
    for config in sent[0]["LaunchTemplateConfigs"].as_array().unwrap() {
        let name = config["LaunchTemplateSpecification"]["LaunchTemplateName"]
            .as_str()
            .unwrap();
        let data = crate::aws_launch::template_data(&walk.moto, name);
        assert_eq!(
            data["CapacityReservationSpecification"],
            serde_json::json!({"CapacityReservationPreference": "none"}),
            "{data:#}"
        );
    }

    // 2. m5.large priced by a NodeOverlay: prioritized, the overlay's price its priority.
    walk.ok(&[
        "apply",
        "-f",
        &fixture("audit-aws/price-overlay.yaml").to_string_lossy(),
    ]);
    scale(&walk, "od", 2);
    walk.wait_unschedulable(1);
    walk.ok(&["karpenter", "provision", "--yes"]);
    let sent = fleet_requests(&requests);
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(
        sent[1]["OnDemandOptions"]["AllocationStrategy"], "prioritized",
        "{:#}",
        sent[1]
    );
    assert_eq!(sent[1]["Context"], "context-1234");
    let second = overrides(&sent[1]);
    assert_eq!(second[0].0, "m5.large", "{second:?}");
    assert!(
        second
            .iter()
            .all(|o| o.2 == if o.0 == "m5.large" { 0.01 } else { 0.085 }),
        "{second:?}"
    );

    // 3. Three families asked of two types, relaxed under BestEffort: no context.
    scale(&walk, "relaxed", 1);
    walk.wait_unschedulable(1);
    walk.ok(&[
        "karpenter",
        "provision",
        "--yes",
        "--min-values-policy",
        "BestEffort",
    ]);
    let sent = fleet_requests(&requests);
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(sent[2]["Context"].is_null(), "{:#}", sent[2]);
    assert_eq!(overrides(&sent[2]).len(), second.len(), "{:#}", sent[2]);
}
