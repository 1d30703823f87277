//! Scheduling fidelity through `-f` manifests end to end (`provision --dry-run -o json`): volume
//! topology, claims Karpenter cannot use yet, a spread on a key without domains, and a node that
//! is not initialized yet (fixtures under `tests/fixtures/examples/scheduling/`).

use serde_json::Value;

use crate::support::{fixture, karpenter};

/// `provision --dry-run -f examples/scheduling/FILE -o json` with `extra` flags.
fn provision_example(file: &str, extra: &[&str]) -> crate::support::Run {
    let path = fixture(&format!("examples/scheduling/{file}"));
    let mut args = vec![
        "provision",
        "--dry-run",
        "-f",
        path.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    karpenter(&args, b"")
}

fn plan_of(file: &str, stdin: Option<&str>) -> (i32, Value) {
    let run = match stdin {
        None => provision_example(file, &[]),
        Some(text) => karpenter(
            &["provision", "--dry-run", "-f", "-", "-o", "json"],
            text.as_bytes(),
        ),
    };
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    (run.code, json)
}

fn claim_of<'a>(plan: &'a Value, pod: &str) -> &'a Value {
    plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["pods"].as_array().unwrap().iter().any(|p| p == pod))
        .unwrap_or_else(|| panic!("{pod} is on no new NodeClaim: {plan:#}"))
}

/// Upstream `provisioning/suite_test.go` "should schedule to storage class zones if volume does
/// not exist" / "should schedule to volume zones if volume already bound" / "should not schedule
/// if invalid pvc", and `topology_test.go` "should ignore unknown topology keys".
#[test]
fn pods_follow_their_volumes_and_unusable_claims_are_named() {
    let (code, plan) = plan_of("volume-topology.yaml", None);
    assert_eq!(code, 1, "three pods stay pending: {plan:#}");
    for pod in ["default/db-0", "default/db-1"] {
        let claim = claim_of(&plan, pod);
        assert_eq!(claim["zone"], "us-east-1c", "{claim:#}");
        assert_eq!(claim["zones"], serde_json::json!(["us-east-1c"]));
    }
    assert_eq!(claim_of(&plan, "default/reports-0")["zone"], "us-east-1b");
    let reasons: Vec<(String, String)> = plan["unschedulable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["pod"].as_str().unwrap().to_string(),
                u["reasonCode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("default/legacy", "VolumeNotReady"),
        ("default/orphan", "VolumeNotFound"),
        ("default/racked", "NoTopologyDomains"),
    ];
    assert_eq!(
        reasons,
        expected.map(|(p, c)| (p.to_string(), c.to_string())),
        "{plan:#}"
    );
    let orphan = &plan["unschedulable"][1]["reason"];
    assert!(
        orphan
            .as_str()
            .unwrap()
            .contains("PersistentVolumeClaim default/not-in-the-input not found"),
        "{orphan}"
    );
}

/// Upstream `scheduling/suite_test.go` "should assume pod will schedule to a tainted node with a
/// custom startup taint" and "... ephemeral taint ... when the node is uninitialized": the pods
/// go to the registered, not yet initialized node; once initialized its taints repel them.
#[test]
fn an_uninitialized_node_takes_pods_despite_its_startup_and_ephemeral_taints() {
    let (code, plan) = plan_of("uninitialized-node.yaml", None);
    assert_eq!(code, 0, "{plan:#}");
    assert!(
        plan["nodeClaims"].as_array().unwrap().is_empty(),
        "{plan:#}"
    );
    assert_eq!(
        plan["existingNodes"][0]["name"],
        "ip-10-0-1-23.ec2.internal"
    );
    assert_eq!(
        plan["existingNodes"][0]["pods"].as_array().unwrap().len(),
        4
    );
    let text = std::fs::read_to_string(fixture("examples/scheduling/uninitialized-node.yaml"))
        .unwrap()
        .replace(
            "    karpenter.sh/registered: \"true\"\n",
            "    karpenter.sh/registered: \"true\"\n    karpenter.sh/initialized: \"true\"\n",
        );
    let (code, plan) = plan_of("", Some(&text));
    assert_eq!(code, 0);
    assert!(
        plan["existingNodes"].as_array().unwrap().is_empty(),
        "{plan:#}"
    );
    assert_eq!(plan["nodeClaims"].as_array().unwrap().len(), 1);
}

/// `--min-values-policy` (the controller's `MIN_VALUES_POLICY`, core v1.14.1 `options.go`): a
/// NodePool asking `minValues: 3` of one real type leaves the pod pending under Strict (exit 1)
/// and, under BestEffort, plans a NodeClaim whose `minValues` is relaxed to 1 and annotated
/// `karpenter.sh/nodeclaim-min-values-relaxed: "true"` (aws `test/suites/scheduling/
/// scheduling.go` "should honor minValuesPolicy when provisioning a node"). A value Karpenter
/// does not know is a usage error (exit 2).
#[test]
fn the_min_values_policy_flag_decides_what_an_unmet_min_values_does() {
    let run = |policy: &[&str]| provision_example("min-values-policy.yaml", policy);
    let strict = run(&[]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    let explicit = run(&["--min-values-policy", "Strict"]);
    assert_eq!(explicit.stdout, strict.stdout);

    let relaxed = run(&["--min-values-policy=BestEffort"]);
    assert_eq!(relaxed.code, 0, "{}", relaxed.stderr);
    let plan: Value = serde_json::from_str(&relaxed.stdout).unwrap();
    let claim = claim_of(&plan, "default/p");
    assert_eq!(
        claim["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"],
        "true"
    );
    assert!(
        claim["requirements"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c5.large"], "minValues": 1})),
        "{claim:#}"
    );

    let bad = run(&["--min-values-policy", "besteffort"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--min-values-policy"), "{}", bad.stderr);
}

/// `--preference-policy` (the controller's `PREFERENCE_POLICY`, core v1.14.1 `options.go`;
/// provisioning suite "Ignore Preferences"): five replicas preferring hostname spread and
/// anti-affinity get five NodeClaims under Respect (the default) and one under Ignore. A value
/// Karpenter does not know is a usage error (exit 2).
#[test]
fn the_preference_policy_flag_decides_whether_preferences_count() {
    let run = |policy: &[&str]| provision_example("preference-policy.yaml", policy);
    let claims = |run: &crate::support::Run| {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan: Value = serde_json::from_str(&run.stdout).unwrap();
        plan["nodeClaims"].as_array().unwrap().len()
    };
    assert_eq!(claims(&run(&[])), 5);
    assert_eq!(claims(&run(&["--preference-policy", "Respect"])), 5);
    assert_eq!(claims(&run(&["--preference-policy=Ignore"])), 1);
    let bad = run(&["--preference-policy", "ignore"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--preference-policy"), "{}", bad.stderr);
}
