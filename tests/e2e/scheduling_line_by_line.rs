//! The scheduler's node and topology code read line by line against core v1.14.1
//! `pkg/controllers/provisioning/scheduling/` (docs/upstream-tests.md "Scheduler nodes and
//! topology, line by line (s27-linesched)"), replayed through the binary. Fixtures in
//! `tests/fixtures/scheduling-line-by-line/` (our own manifests, the embedded catalog in
//! us-east-1; the pool offers us-east-1a and us-east-1b only).

use serde_json::Value;

use crate::support::{claim_zones as claims, fixture, karpenter, names};

const NOW: &str = "2024-06-24T12:00:00Z";

/// `COMMAND -f FIXTURE --region us-east-1 -o json`, with `--dry-run` (`provision`) or `--now NOW`.
fn run(command: &str, name: &str) -> Value {
    let file = fixture(&format!("scheduling-line-by-line/{name}"));
    let file = file.to_string_lossy();
    let mut args = vec![command, "-f", &file, "--region", "us-east-1", "-o", "json"];
    match command {
        "provision" => args.push("--dry-run"),
        _ => args.extend(["--now", NOW]),
    }
    let run = karpenter(&args, b"");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr))
}

/// No upstream test; helpers.go `SimulateScheduling` l.59 (the scheduler gets the active nodes
/// minus the candidates) and topology.go `countDomains` (only those register their domains):
/// candidate `a` is the only node in us-east-1c, which the pool does not offer; its `web-3`
/// joins us-east-1a or us-east-1b (the spread's minimum is 1 there) and `a` is deleted. Before
/// s27-linesched us-east-1c stayed an empty domain: `web-3` fitted nowhere and `a` stayed.
#[test]
fn a_candidates_zone_leaves_the_spread_universe() {
    let doc = run("consolidate", "candidate-zone-spread.yaml");
    let actions: Vec<(String, Vec<String>)> = (doc["actions"].as_array().unwrap().iter())
        .map(|a| {
            (
                a["decision"].as_str().unwrap().to_string(),
                names(&a["nodes"]),
            )
        })
        .collect();
    assert_eq!(actions, [("delete".to_string(), vec!["a".to_string()])]);
}

/// No upstream test; provisioner.go `Schedule` l.403 (the scheduler gets `nodes.Active()`) and
/// topology.go `countDomains`: deleting `gone` is the only node in us-east-1c, so that zone is
/// no domain; `web-0` runs in us-east-1a, `web-1` goes to us-east-1b, then `web-2` to either.
/// Before s27-linesched us-east-1c (empty) held the minimum at 0 and `web-2` stayed pending.
#[test]
fn a_deleting_nodes_zone_is_no_spread_domain() {
    let plan = run("provision", "deleting-zone-spread.yaml");
    assert_eq!(
        plan["unschedulable"].as_array().map(Vec::len),
        Some(0),
        "{plan:#}"
    );
    let pods: usize = claims(&plan).iter().map(|(_, p)| p.len()).sum();
    let on_one: usize = (plan["existingNodes"].as_array().into_iter().flatten())
        .map(|e| e["pods"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(pods + on_one, 2, "{plan:#}");
    assert!(
        claims(&plan).iter().all(|(z, _)| z == "us-east-1b"),
        "{plan:#}"
    );
}

/// No upstream test; topology.go `updateInverseAntiAffinity` l.335 (an existing pod's inverse
/// anti-affinity group knows the pools' domains only; `countDomains` does not run for it) and
/// topologygroup.go `nextDomainAntiAffinity` (a pod it selects goes to its empty domains only):
/// `web` may not go to `far` in us-east-1c and gets a NodeClaim in us-east-1b. Before
/// s27-linesched the group knew every node's zone and `web` went to `far`.
#[test]
fn an_existing_pods_anti_affinity_knows_only_the_pools_zones() {
    let plan = run("provision", "inverse-anti-affinity-zones.yaml");
    assert_eq!(
        claims(&plan),
        [("us-east-1b".to_string(), vec!["default/web".to_string()])],
        "{plan:#}"
    );
}

/// No upstream test; core v1.14.1 `topology.go` keys a spread by `TopologyKey` as written while
/// `buildDomainGroups` knows only translated keys (`requirement.go` `NormalizedLabels`): with the
/// beta zone key and no node carrying it, no domain is known and every replica stays pending,
/// the reason naming the alias (s29, lead; docs/karpenter.md §6.5). Before s29 we translated the
/// key and spread the replicas over us-east-1a and us-east-1b.
#[test]
fn a_spread_on_the_beta_zone_key_knows_no_domain_offline() {
    let plan = run("provision", "beta-zone-spread.yaml");
    assert_eq!(
        plan["nodeClaims"].as_array().map(Vec::len),
        Some(0),
        "{plan:#}"
    );
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 3);
    assert_eq!(pending[0]["reasonCode"], "NoTopologyDomains", "{plan:#}");
    let message = pending[0]["reason"].as_str().unwrap_or_default();
    assert!(
        message.contains("an alias of topology.kubernetes.io/zone"),
        "{message}"
    );
}

/// No upstream test; core v1.14.1 `pkg/scheduling/taints.go Tolerates` calls `ToleratesTaint`
/// with comparison operators on (k8s.io/api v0.35: `Gt` tolerates a taint whose value is
/// greater): `Gt 900` lands on the `sla=950` pool, `Gt 960` stays pending on the taint (s29,
/// lead). Before s29 the `Gt` operator was refused as unknown (exit 2).
#[test]
fn numeric_tolerations_compare_the_taints_value() {
    let plan = run("provision", "numeric-toleration.yaml");
    let placed: Vec<String> = claims(&plan).into_iter().flat_map(|(_, p)| p).collect();
    assert_eq!(placed.len(), 1, "{plan:#}");
    assert!(placed[0].starts_with("default/silver-ok-"), "{placed:?}");
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{plan:#}");
    assert!(pending[0]["pod"]
        .as_str()
        .unwrap()
        .starts_with("default/platinum-only-"));
    assert!(pending[0]["reason"]
        .as_str()
        .unwrap()
        .contains("sla=950:NoSchedule"));
}
