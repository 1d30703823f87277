//! The contract, line by line (s32-linespec): docs/spec.md's sentences checked through the
//! binary — every command's `--help` states its exit codes (§2), `--dry-run` everywhere (§6:
//! `drift check --mark --dry-run` writes nothing), and the `-o json` documents of the live
//! commands carry the fields §5.6 names: the `ReplacementReport`'s `name`, `outcome`,
//! `blockedBy`, `evicted[]`, `durationSeconds`; a launched NodeClaim's `instanceId` and
//! `providerID`. Ledger: docs/upstream-tests/kubectl.md "The contract, line by line".

use serde_json::Value;

use crate::drift_live::{
    inflate_pdb_at_zero, narrow_to_category_m, one_pod_per_node, settle_team_nodes,
};
use crate::provision_live::Walk;
use crate::support::karpenter;

/// docs/spec.md §2: "Exit codes are a contract … Documented in `--help`": every command's own
/// help (not only the top level's) says which codes it exits with, and its usage shows
/// `kubectl karpenter`.
#[test]
fn every_commands_help_states_its_exit_codes() {
    let commands: &[&[&str]] = &[
        &[],
        &["provision"],
        &["drift", "check"],
        &["drift", "replace"],
        &["enable-drift"],
        &["disable-drift"],
        &["consolidate"],
        &["ami"],
        &["nodes"],
        &["convert"],
        &["completion"],
        &["version"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 0, "{command:?}: {}", run.stderr);
        assert!(
            run.stdout.contains("Usage: kubectl karpenter"),
            "{command:?}: {}",
            run.stdout
        );
        let codes = run
            .stdout
            .split_once("Exit codes")
            .unwrap_or_else(|| panic!("{command:?}: no exit codes in --help:\n{}", run.stdout))
            .1;
        assert!(
            codes.contains('0') && codes.contains('2'),
            "{command:?}: {codes}"
        );
    }
    // The ones that reach a cluster or AWS say 3 too; drift check (live, --mark) was missing it.
    let run = karpenter(&["drift", "check", "--help"], b"");
    assert!(
        run.stdout.contains("3 cluster or AWS error"),
        "{}",
        run.stdout
    );
}

/// docs/spec.md §6: "`--dry-run` everywhere" — `drift check` takes it too (it changes
/// nothing; with `--mark`, see the live test); offline the report is the same with or without.
#[test]
fn drift_check_takes_dry_run() {
    let input = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiFamily: AL2023\n  amiSelectorTerms: [{id: ami-0123456789abcdef0}]\n  role: KarpenterNodeRole\n  subnetSelectorTerms: [{id: subnet-0123}]\n  securityGroupSelectorTerms: [{id: sg-0123}]\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m5.large, kubernetes.io/arch: amd64}\n  annotations: {kubectl-karpenter.io/image-id: ami-0123456789abcdef0}\nspec:\n  providerID: aws:///us-east-1a/i-0123\n";
    let plain = karpenter(
        &["drift", "check", "-f", "-", "-o", "json"],
        input.as_bytes(),
    );
    let dry = karpenter(
        &["drift", "check", "-f", "-", "-o", "json", "--dry-run"],
        input.as_bytes(),
    );
    assert_eq!(dry.code, plain.code, "{}", dry.stderr);
    assert!(plain.code == 0 || plain.code == 1, "{}", plain.stderr);
    assert_eq!(dry.stdout, plain.stdout);
    // --mark stays refused offline, --dry-run or not.
    let run = karpenter(
        &["drift", "check", "-f", "-", "--mark", "--dry-run"],
        input.as_bytes(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// A `drift replace` document's node entry, as docs/spec.md §5.6 names its fields.
fn assert_contract_entry(entry: &Value, outcome: &str) {
    assert!(entry["name"].is_string(), "name: {entry}");
    assert_eq!(entry["outcome"], outcome, "{entry}");
    assert!(
        entry.get("blockedBy").is_some(),
        "blockedBy present: {entry}"
    );
    assert!(entry["replacements"].is_array(), "{entry}");
    assert!(entry["evicted"].is_array(), "evicted[]: {entry}");
    assert!(entry["durationSeconds"].is_number(), "{entry}");
}

/// docs/spec.md §5.6 through the loopback cluster + moto: `provision --yes -o json` gives each
/// launched NodeClaim its `instanceId`/`providerID`; `drift replace -o json` entries carry
/// `name`, `outcome`, `blockedBy` (the PDB named), `evicted[]` (the pods, by name) and
/// `durationSeconds`; `drift check --mark --dry-run` writes no marker (§6 "`--dry-run`
/// everywhere"), `--mark` does.
#[test]
fn the_live_documents_carry_the_fields_the_contract_names() {
    let walk = Walk::new_v1beta1("spec-line-by-line");
    walk.apply("pool.yaml", &one_pod_per_node("1", 1));
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes", "--wait", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["plan"]["kind"], "ProvisioningPlan", "{doc:#}");
    let claim = &doc["plan"]["nodeClaims"][0];
    let launched = &doc["launched"][0];
    let instance = launched["instanceId"].as_str().expect("instanceId");
    assert_eq!(claim["instanceId"], instance, "{doc:#}");
    let provider = format!("aws:///{}/{instance}", launched["zone"].as_str().unwrap());
    assert_eq!(claim["providerID"], provider.as_str(), "{doc:#}");
    assert_eq!(launched["providerID"], provider.as_str(), "{doc:#}");
    let nodes = settle_team_nodes(&walk, 1);
    assert_eq!(nodes[0]["spec"]["providerID"], provider.as_str());
    let node = nodes[0]["metadata"]["name"].as_str().unwrap().to_string();

    narrow_to_category_m(&walk);
    let marker = |walk: &Walk| {
        walk.json(&["get", "node", &node, "-o", "json"])["metadata"]["labels"]
            ["kubectl-karpenter.io/drifted"]
            .clone()
    };
    let out = walk.run(&["karpenter", "drift", "check", "--mark", "--dry-run"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("would update the drift marker of 1 node(s)")
            && out.stderr.contains(&node),
        "{}",
        out.stderr
    );
    assert!(marker(&walk).is_null(), "--dry-run wrote nothing");
    let out = walk.run(&["karpenter", "drift", "check", "--mark"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(marker(&walk), "RequirementsDrifted");

    // A PDB at zero: blocked, the PDB named in blockedBy; nothing evicted.
    inflate_pdb_at_zero(&walk);
    let out = walk.run(&["karpenter", "drift", "replace", "--yes", "-o", "json"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let entry = &doc["nodes"][0];
    assert_contract_entry(entry, "blocked");
    assert_eq!(entry["name"], node.as_str());
    assert!(
        entry["blockedBy"]
            .as_str()
            .is_some_and(|b| b.contains("PodDisruptionBudget default/inflate-pdb")),
        "{entry}"
    );
    assert_eq!(entry["evicted"], serde_json::json!([]));

    // The dry run: nothing done to it, so skipped.
    walk.ok(&["delete", "pdb", "inflate-pdb"]);
    let out = walk.run(&["karpenter", "drift", "replace", "--dry-run", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_contract_entry(&doc["nodes"][0], "skipped");
    assert!(doc["nodes"][0]["blockedBy"].is_null());
    // §2 `-o name`: the nodes it would replace, `node/<name>`, and no table.
    let out = walk.run(&["karpenter", "drift", "replace", "--dry-run", "-o", "name"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, format!("node/{node}\n"));

    // Replaced: the pod evicted, by name.
    let pod = walk.items(&["get", "pods", "-l", "app=inflate"])[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let out = walk.run(&["karpenter", "drift", "replace", "--yes", "-o", "json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let entry = &doc["nodes"][0];
    assert_contract_entry(entry, "replaced");
    assert!(entry["blockedBy"].is_null(), "{entry}");
    assert_eq!(
        entry["evicted"],
        serde_json::json!([format!("default/{pod}")])
    );
    assert_eq!(
        entry["status"], "replaced",
        "the finer status stays: {entry}"
    );
}

/// docs/spec.md §5.6: the `ProvisioningPlan`'s fields are there even when empty — each
/// NodeClaim's `taints` (`[]`) and `nodeClass`, the plan's `existingNodes` and `unschedulable`
/// (`[]`) — so a script can index them without checking first. The seed's quickstart offline.
#[test]
fn the_plans_named_fields_are_present_when_empty() {
    let manifest = crate::support::root().join("examples/manifests/quickstart.yaml");
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "--region",
            "us-east-1",
            "-f",
            &manifest.to_string_lossy(),
            "-o",
            "json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["kind"], "ProvisioningPlan");
    assert_eq!(plan["existingNodes"], serde_json::json!([]), "{plan:#}");
    assert_eq!(plan["unschedulable"], serde_json::json!([]), "{plan:#}");
    let claim = &plan["nodeClaims"][0];
    crate::support::assert_fields(
        claim,
        &crate::support::PLAN_NODECLAIM_FIELDS,
        "nodeClaims[]",
    );
    assert_eq!(claim["taints"], serde_json::json!([]), "{claim:#}");
    assert_eq!(claim["nodeClass"], "default", "{claim:#}");
    // Offline, nothing was launched: no instanceId/providerID yet.
    assert!(claim.get("instanceId").is_none() && claim.get("providerID").is_none());
}

/// docs/spec.md §2: `-o json|yaml|name` on every command — `convert` printed its commented
/// YAML whatever `-o` said; now `-o json` is one `v1` `List` of the converted objects (as
/// `kubectl get -o json` prints several) and `-o name` their `kind.group/name`.
#[test]
fn convert_honours_the_output_flag() {
    let input = crate::support::fixture("examples/v1alpha5/general-purpose.yaml");
    let input = input.to_string_lossy();
    let yaml = karpenter(&["convert", "-f", &input], b"");
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    assert!(yaml.stdout.contains("kind: NodePool"), "{}", yaml.stdout);
    let json = karpenter(&["convert", "-f", &input, "-o", "json"], b"");
    assert_eq!(json.code, 0, "{}", json.stderr);
    let list: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        (&list["apiVersion"], &list["kind"]),
        (&"v1".into(), &"List".into())
    );
    let kinds: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["NodePool", "EC2NodeClass"]);
    assert_eq!(list["items"][0]["apiVersion"], "karpenter.sh/v1");
    let name = karpenter(&["convert", "-f", &input, "-o", "name"], b"");
    assert_eq!(name.code, 0, "{}", name.stderr);
    assert_eq!(
        name.stdout,
        "nodepool.karpenter.sh/general\nec2nodeclass.karpenter.k8s.aws/general\n"
    );
}

/// docs/spec.md §2 ("`2` usage or input error") and §6 (bad input: one line, exit 2): a
/// malformed `--kubernetes-version`, `--request-timeout` or `--wait-for-lease` is refused on
/// every path. Before, an offline `provision --dry-run` never read them and exited 0, and a live
/// command failed a bad `--request-timeout` as a kubeconfig error (exit 3).
#[test]
fn malformed_global_flag_values_are_usage_errors_everywhere() {
    let manifest = crate::support::root().join("examples/manifests/quickstart.yaml");
    let manifest = manifest.to_string_lossy();
    let base = [
        "provision",
        "--dry-run",
        "--region",
        "us-east-1",
        "-f",
        &manifest,
    ];
    for (flag, want) in [
        ("--kubernetes-version=abc", "--kubernetes-version"),
        ("--request-timeout=bogus", "--request-timeout \"bogus\""),
        ("--wait-for-lease=bogus", "--wait-for-lease"),
    ] {
        let mut args = base.to_vec();
        args.push(flag);
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 2, "{flag}: {}", run.stderr);
        assert!(run.stderr.contains(want), "{flag}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{flag}: no plan");
    }
    // Live too, before any connection: exit 2, not a kubeconfig error.
    let run = karpenter(
        &[
            "nodes",
            "--kubeconfig",
            "/nonexistent",
            "--request-timeout",
            "-1s",
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Valid values (and an empty one: not given) still plan.
    for flag in [
        "--kubernetes-version=v1.30.2",
        "--request-timeout=500ms",
        "--request-timeout=",
        "--wait-for-lease=forever",
        "--wait-for-lease",
    ] {
        let mut args = base.to_vec();
        args.push(flag);
        let run = karpenter(&args, b"");
        assert_eq!(run.code, 0, "{flag}: {}", run.stderr);
    }
}
