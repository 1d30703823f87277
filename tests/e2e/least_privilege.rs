//! Least privilege, proven by the peers (issue #13): the shipped IAM policy
//! (`deploy/iam-policy.json`) and RBAC roles (`deploy/rbac.yaml`) are enough for every command
//! and no more.
//!
//! One scenario — the first walkthrough's NodePool (v1beta1), `inflate` pending, then
//! `ami`, `provision --dry-run`, `provision`, `nodes`, drift (a security group added to the
//! class), `drift check`, `drift replace --dry-run`, `drift replace`, the node emptied and
//! handed to Karpenter for `consolidate --dry-run` and `consolidate --yes` (emptiness deletes
//! it), a Karpenter controller and `drift replace --via-controller`,
//! `enable-drift`/`disable-drift` — runs once, against one moto and one loopback cluster that
//! both enforce:
//! - **IAM**: moto enforces IAM (`tests/moto/server.py --iam-users`); each command runs as an
//!   IAM user holding exactly the policy, and as users holding it without one action;
//! - **RBAC**: the cluster authorizes bearer tokens with RBAC; each command runs as a
//!   ServiceAccount bound to exactly the roles, and as ones bound to them without one rule.
//!
//! A run with everything is the IAM user holding the policy and the ServiceAccount bound to the
//! roles, checked against both tables; a run without one action has all the roles, a run
//! without one rule the whole policy.
//!
//! The documentation is the specification: `docs/security.md` has a table per side (between
//! `<!-- proof: iam -->`/`<!-- proof: rbac -->` and `<!-- /proof -->`) naming, per command,
//! what it needs and what it can do without (with a warning). The proof:
//! - with the whole policy and roles every command succeeds, and what each peer recorded it
//!   using (moto's authorization audit; the cluster's RBAC decisions) is all its row needs and
//!   nothing outside its row (the instance-type catalog is cached across runs, as for a user);
//! - without any one action/rule its row needs, the command fails with exit 3 and one error
//!   line naming what is missing (the action, or the request that was forbidden, and the
//!   hint); without an optional one (proven once) it succeeds and says what it did without.
//!   Mutating commands are proven only for what their `--dry-run` does not already prove (the
//!   same code path runs first);
//! - every action and rule of the files is needed by some command (nothing unused).
//!
//! Besides, the IAM conditions are proven to scope: the terminate statements allow this
//! cluster's NodePool and Provisioner instances and nothing else. And the IAM side plans once
//! more, on a second moto and loopback cluster with v1 CRDs, for a class selecting capacity
//! reservations and a placement group (`ec2:DescribeCapacityReservations`,
//! `ec2:DescribePlacementGroups`, which the v1beta1 walkthrough cannot use): the row
//! [`RESERVATIONS`]. `pricing:GetProducts` (the catalog's on-demand prices) is served and
//! authorized by `tests/moto/server.py` itself (moto has no Pricing API), with the same
//! policy evaluation and audit as the EC2 calls.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use kubectl_karpenter::cloud::aws::{AwsCloud, AwsOptions};
use kubectl_karpenter::cloud::types::Compute;

use crate::drift_live::{hand_to_karpenter, install_controller, settle_team_nodes, team_nodes};
use crate::provision_live::{walkthrough_manifest, Out, Walk};
use crate::support::root;
use crate::test_cluster::rbac::{rule_allows, Attributes};

const ACCOUNT: &str = "123456789012";
const CLUSTER: &str = "my-cluster";
const WHEN_SERVED: &str = " (when served)";

/// One row of a documentation table.
#[derive(Debug, Default, Clone)]
struct Row {
    needs: BTreeSet<String>,
    optional: BTreeSet<String>,
}

/// The table of `docs/security.md` for `side` (`iam`, `rbac`), by command.
fn documented(side: &str) -> BTreeMap<String, Row> {
    let text = std::fs::read_to_string(root().join("docs/security.md")).unwrap();
    let start = text
        .find(&format!("<!-- proof: {side} -->"))
        .unwrap_or_else(|| panic!("docs/security.md has no {side} table"));
    let end = start + text[start..].find("<!-- /proof -->").unwrap();
    let list = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(|s| s.trim().trim_matches('`').to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    text[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            // "(when served)": needed where the cluster serves the resource; the scenario's
            // cluster (v1beta1 CRDs) does not, so the command does without it.
            let (conditional, needs): (BTreeSet<String>, BTreeSet<String>) = list(cells[2])
                .into_iter()
                .partition(|e| e.ends_with(WHEN_SERVED));
            let mut optional = list(cells.get(3).copied().unwrap_or(""));
            optional.extend(
                conditional
                    .iter()
                    .map(|e| e.trim_end_matches(WHEN_SERVED).to_string()),
            );
            (
                cells[1].trim_matches('`').to_string(),
                Row { needs, optional },
            )
        })
        .collect()
}

/// What is proven on which peer.
enum Side {
    /// Units are actions; identities are IAM users (name → keys).
    Iam {
        policy: Value,
        keys: BTreeMap<String, (String, String)>,
        audit: std::path::PathBuf,
    },
    /// Units are rules (`role[index]`); identities are ServiceAccounts with a kubeconfig each.
    Rbac {
        rules: BTreeMap<String, Value>,
        kubeconfigs: BTreeMap<String, String>,
    },
}

struct Proof<'a> {
    walk: &'a Walk,
    side: Side,
    /// The other side's everything (its identity's environment), for every run of this side.
    other: Vec<(&'static str, String)>,
    table: BTreeMap<String, Row>,
    /// Rows run with the whole policy.
    run: BTreeSet<String>,
    /// Units shown needed (or optional) by a run without them.
    proven: BTreeSet<String>,
    failures: Vec<String>,
}

/// The identity holding everything.
const FULL: &str = "full";

fn identity(unit: &str) -> String {
    format!(
        "without-{}",
        unit.replace([':', '[', ']'], "-").trim_end_matches('-')
    )
}

impl Proof<'_> {
    fn units(&self) -> BTreeSet<String> {
        match &self.side {
            Side::Iam { policy, .. } => statements(policy).iter().flat_map(actions).collect(),
            Side::Rbac { rules, .. } => rules.keys().cloned().collect(),
        }
    }

    /// The units that grant an entry of the table.
    fn granting(&self, entry: &str) -> BTreeSet<String> {
        match &self.side {
            Side::Iam { .. } => BTreeSet::from([entry.to_string()]),
            Side::Rbac { rules, .. } => rules
                .iter()
                .filter(|(_, rule)| rule_allows(rule, &attributes(entry, rule)))
                .map(|(unit, _)| unit.clone())
                .collect(),
        }
    }

    /// Runs the binary as `who`; `-v` for runs without a permission (optional ones say so in
    /// notes). The instance-type catalog is cached for every run (fetching it from moto takes
    /// seconds) but those with `fresh_catalog`, which fetch it (and show what it lacks).
    fn karpenter(&self, who: &str, args: &[&str], fresh_catalog: bool) -> Out {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-karpenter"));
        let cache = self
            .walk
            .dir
            .join("cache")
            .join(if fresh_catalog { who } else { "shared" });
        if fresh_catalog {
            let _ = std::fs::remove_dir_all(&cache);
        }
        cmd.args(args)
            .args(if who == FULL { &[][..] } else { &["-v"][..] })
            .arg("--cluster-name")
            .arg(CLUSTER)
            .env("KUBECONFIG", &self.walk.kubeconfig)
            .env("HOME", &self.walk.dir)
            .env("XDG_CACHE_HOME", &cache)
            .env("AWS_ENDPOINT_URL", &self.walk.moto.url)
            .env("AWS_REGION", self.walk.moto.region())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd.envs(self.other.iter().map(|(k, v)| (k, v)));
        match &self.side {
            Side::Iam { keys, .. } => {
                let (id, secret) = &keys[who];
                cmd.env("AWS_ACCESS_KEY_ID", id)
                    .env("AWS_SECRET_ACCESS_KEY", secret);
            }
            Side::Rbac { kubeconfigs, .. } => {
                cmd.env("KUBECONFIG", &kubeconfigs[who]);
            }
        }
        // Every run finds no operator lease, as the first run on a cluster does: it reads,
        // creates, renews and releases it (each rule of the lease Role in use).
        self.walk.ok(&[
            "delete",
            "lease",
            "-n",
            "kube-system",
            "kubectl-karpenter",
            "--ignore-not-found",
        ]);
        let started = std::time::Instant::now();
        let out = cmd.output().expect("run kubectl-karpenter");
        eprintln!(
            "least privilege: {who}: {} → exit {:?} in {:.1} s",
            args.join(" "),
            out.status.code(),
            started.elapsed().as_secs_f64()
        );
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// What the peer recorded `who` using since the last call, in the tables' notation.
    fn used(&self, who: &str) -> BTreeSet<String> {
        match &self.side {
            Side::Iam { audit, .. } => {
                let text = std::fs::read_to_string(audit).unwrap_or_default();
                std::fs::write(audit, "").unwrap();
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .filter(|d| d["user"] == who && d["allowed"] == true)
                    .map(|d| d["action"].as_str().unwrap().to_string())
                    .collect()
            }
            Side::Rbac { .. } => {
                let user = format!("system:serviceaccount:default:{who}");
                self.walk
                    .cluster
                    .take_decisions()
                    .into_iter()
                    .filter(|d| d.user == user && d.allowed && d.attributes.path.is_none())
                    .map(|d| notation(&d.attributes))
                    .collect()
            }
        }
    }

    fn fail(&mut self, message: String) {
        eprintln!("least privilege: {message}");
        self.failures.push(message);
    }

    /// `label`'s run with everything (`out`): its expected exit code, and its row used — all it
    /// needs, and nothing the row does not have (the optional catalog calls are spared by the
    /// cache).
    fn check_full(&mut self, label: &str, code: i32, out: &Out) {
        let used = self.used(FULL);
        self.run.insert(label.to_string());
        if out.code != code {
            self.fail(format!(
                "{label}: exit {} (want {code}) with everything:\n{}{}",
                out.code, out.stdout, out.stderr
            ));
        }
        let row = self.table.get(label).cloned().unwrap_or_default();
        let documented: BTreeSet<String> = row.needs.union(&row.optional).cloned().collect();
        if !row.needs.is_subset(&used) || !used.is_subset(&documented) {
            self.fail(format!(
                "{label}: used {:?}, documented {:?}",
                used.iter().collect::<Vec<_>>(),
                documented.iter().collect::<Vec<_>>()
            ));
        }
    }

    /// `label` without each unit that grants `entries` of its row (all of them when empty): a
    /// needed one fails the command with exit 3, one error line naming it and the hint; an
    /// optional one — proven once, the first row that has it — leaves it succeeding (exit 0
    /// or 1) and saying what it did without.
    fn without(&mut self, label: &str, args: &[&str], entries: &[String]) {
        let row = self.table.get(label).cloned().unwrap_or_default();
        let entries: Vec<String> = if entries.is_empty() {
            row.needs.union(&row.optional).cloned().collect()
        } else {
            entries.to_vec()
        };
        let units_shipped = self.units();
        let mut units: BTreeMap<String, bool> = BTreeMap::new();
        for entry in &entries {
            for unit in self.granting(entry) {
                let needed = row.needs.contains(entry);
                *units.entry(unit).or_insert(false) |= needed;
            }
        }
        for (unit, needed) in units {
            if !needed && self.proven.contains(&unit) {
                continue;
            }
            if !units_shipped.contains(&unit) {
                self.fail(format!("{label}: {unit} is documented but not shipped"));
                continue;
            }
            let who = identity(&unit);
            self.used(&who);
            // An optional action may be a catalog call, which the cache would spare; no rule is.
            let fresh = !needed && matches!(self.side, Side::Iam { .. });
            let out = self.karpenter(&who, args, fresh);
            let errors = out
                .stderr
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count();
            let named = match &self.side {
                Side::Iam { .. } => out.stderr.contains(unit.as_str()),
                Side::Rbac { .. } => out.stderr.contains("is forbidden"),
            };
            let hint = out
                .stderr
                .contains("hint: the AWS identity lacks a permission")
                || out
                    .stderr
                    .contains("hint: the Kubernetes identity lacks an RBAC permission");
            let ok = if needed {
                out.code == 3 && errors == 1 && named && hint
            } else {
                out.code < 2 && named
            };
            if ok {
                self.proven.insert(unit.clone());
            } else {
                self.fail(format!(
                    "{label} without {unit} ({}): exit {}:\n{}{}",
                    if needed { "needed" } else { "optional" },
                    out.code,
                    out.stdout,
                    out.stderr
                ));
            }
        }
    }

    /// Every row run, every unit needed by some command: the failures.
    fn finish(mut self) -> Vec<String> {
        for label in self.table.keys().cloned().collect::<Vec<_>>() {
            if !self.run.contains(&label) {
                self.fail(format!("the table's row {label} is not in the scenario"));
            }
        }
        let documented: BTreeSet<String> = self
            .table
            .values()
            .flat_map(|r| r.needs.union(&r.optional).cloned().collect::<Vec<_>>())
            .flat_map(|e| self.granting(&e))
            .collect();
        for unit in self.units() {
            if !documented.contains(&unit) {
                self.fail(format!("{unit} is not needed by any command"));
            } else if !self.proven.contains(&unit) {
                self.fail(format!("{unit} is never shown needed by a run without it"));
            }
        }
        self.failures
    }
}

/// The IAM and the RBAC proof on one walk: each command runs once with everything, checked by
/// both; each side's removals run with the other side's everything.
struct Proofs<'a> {
    iam: Proof<'a>,
    rbac: Proof<'a>,
}

impl<'a> Proofs<'a> {
    fn both(&mut self) -> [&mut Proof<'a>; 2] {
        [&mut self.iam, &mut self.rbac]
    }

    /// `label` with everything, checked by both sides.
    fn full(&mut self, label: &str, args: &[&str], code: i32) {
        for p in self.both() {
            p.used(FULL);
        }
        let out = self.iam.karpenter(FULL, args, false);
        for p in self.both() {
            p.check_full(label, code, &out);
        }
    }

    /// `label` without each unit its rows name, on each side.
    fn without_row(&mut self, label: &str, args: &[&str]) {
        for p in self.both() {
            p.without(label, args, &[]);
        }
    }

    fn finish(self) {
        let mut failures = self.iam.finish();
        failures.extend(self.rbac.finish());
        assert!(
            failures.is_empty(),
            "{} least-privilege failure(s):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// The IAM row of a class selecting capacity reservations and a placement group.
const RESERVATIONS: &str =
    "provision --dry-run (capacityReservationSelectorTerms, placementGroupSelector)";

/// [`RESERVATIONS`] on `walk` (v1 CRDs, moto seeded with a reservation, a placement group and
/// the same IAM users): a class selecting the reservation by id and the group by name, a pod
/// pending; without `ec2:DescribeCapacityReservations` the plan fails naming it, without
/// `ec2:DescribePlacementGroups` it plans without the group and says so. The proof's walk and
/// keys are `walk`'s meanwhile.
fn reservations<'a>(proof: &mut Proof<'a>, walk: &'a Walk) {
    walk.apply(
        "reserved.yaml",
        &crate::reservations::manifest("id: cr-0a1b2c3d4e5f60001", 1, "7").replace(
            "  capacityReservationSelectorTerms:\n",
            "  placementGroupSelector: {name: spread-out}\n  capacityReservationSelectorTerms:\n",
        ),
    );
    walk.wait_unschedulable(1);
    let keys_of = |walk: &Walk, names: Vec<String>| -> BTreeMap<String, (String, String)> {
        names
            .into_iter()
            .map(|name| {
                let c = &walk.moto.seed["credentials"][&name];
                let key = |k: &str| c[k].as_str().unwrap().to_string();
                (name, (key("accessKeyId"), key("secretAccessKey")))
            })
            .collect()
    };
    let saved = proof.walk;
    if let Side::Iam { keys, .. } = &mut proof.side {
        *keys = keys_of(walk, keys.keys().cloned().collect());
    }
    proof.walk = walk;
    // That cluster does not enforce RBAC: its own kubeconfig.
    let other = std::mem::take(&mut proof.other);
    let dry = ["provision", "--dry-run"];
    proof.without(
        RESERVATIONS,
        &dry,
        &[
            "ec2:DescribeCapacityReservations".to_string(),
            "ec2:DescribePlacementGroups".to_string(),
        ],
    );
    proof.used(FULL);
    let out = proof.karpenter(FULL, &dry, false);
    proof.check_full(RESERVATIONS, 0, &out);
    proof.walk = saved;
    proof.other = other;
    if let Side::Iam { keys, .. } = &mut proof.side {
        *keys = keys_of(saved, keys.keys().cloned().collect());
    }
}

fn statements(policy: &Value) -> Vec<Value> {
    policy["Statement"].as_array().unwrap().clone()
}

fn actions(statement: &Value) -> Vec<String> {
    match &statement["Action"] {
        Value::String(a) => vec![a.clone()],
        Value::Array(list) => list
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect(),
        other => panic!("Action {other}"),
    }
}

/// `verb resource[/subresource][.group]`.
fn notation(a: &Attributes) -> String {
    let mut text = format!("{} {}", a.verb, a.resource);
    if !a.subresource.is_empty() {
        text.push('/');
        text.push_str(&a.subresource);
    }
    if !a.group.is_empty() {
        text.push('.');
        text.push_str(&a.group);
    }
    text
}

/// The attributes an entry stands for, named as `rule` names (so names never decide).
fn attributes(entry: &str, rule: &Value) -> Attributes {
    let (verb, rest) = entry.split_once(' ').unwrap();
    let (resource, group) = rest.split_once('.').unwrap_or((rest, ""));
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    Attributes {
        verb: verb.into(),
        group: group.into(),
        resource: resource.into(),
        subresource: subresource.into(),
        namespace: String::new(),
        name: rule["resourceNames"][0].as_str().unwrap_or("").into(),
        path: None,
    }
}

/// The shipped policy with this account and cluster.
fn shipped_policy() -> Value {
    let text = std::fs::read_to_string(root().join("deploy/iam-policy.json"))
        .unwrap()
        .replace("${AWS_ACCOUNT_ID}", ACCOUNT)
        .replace("${CLUSTER_NAME}", CLUSTER);
    serde_json::from_str(&text).unwrap()
}

/// The policy without `action`, or without the statement `Sid`.
fn policy_without(policy: &Value, unit: &str) -> Value {
    let kept: Vec<Value> = statements(policy)
        .into_iter()
        .filter(|s| s["Sid"] != unit)
        .filter_map(|mut s| {
            let left: Vec<String> = actions(&s).into_iter().filter(|a| a != unit).collect();
            s["Action"] = json!(left);
            (!left.is_empty()).then_some(s)
        })
        .collect();
    json!({"Version": policy["Version"], "Statement": kept})
}

/// The shipped roles' rules by `role[index]`, and the role documents.
fn shipped_roles() -> (BTreeMap<String, Value>, Vec<Value>) {
    let text = std::fs::read_to_string(root().join("deploy/rbac.yaml")).unwrap();
    let mut rules = BTreeMap::new();
    let mut roles = Vec::new();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    for doc in docs {
        if !matches!(doc["kind"].as_str(), Some("ClusterRole" | "Role")) {
            continue;
        }
        let name = doc["metadata"]["name"].as_str().unwrap();
        for (i, rule) in doc["rules"].as_array().unwrap().iter().enumerate() {
            rules.insert(format!("{name}[{i}]"), rule.clone());
        }
        roles.push(doc);
    }
    (rules, roles)
}

/// The walkthrough's NodePool and class (security groups by the cluster's tag), `inflate`
/// pending with 5 replicas.
fn setup(walk: &Walk) {
    walk.apply(
        "quickstart.yaml",
        &walkthrough_manifest().replace("replicas: 0", "replicas: 5"),
    );
    walk.wait_unschedulable(5);
}

/// Drift: the class selects one more security group than its nodes have (or one less).
fn toggle_security_groups(walk: &Walk, wide: bool) {
    let tags = if wide {
        format!(r#"{{"kubernetes.io/cluster/{CLUSTER}":"owned"}}"#)
    } else {
        format!(r#"{{"alpha.eksctl.io/cluster-name":"{CLUSTER}"}}"#)
    };
    walk.ok(&[
        "patch",
        "ec2nodeclass",
        "default",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"spec":{{"securityGroupSelectorTerms":[{{"tags":{tags}}}]}}}}"#),
    ]);
}

/// The team node, once Karpenter counts it. The replacement the stand-in controller launched
/// for the previous handover has its pods bound again before the controller labels it
/// `karpenter.sh/initialized`; until then the pool counts no node, so its budget (10% of 0)
/// allows no disruption and `--via-controller` rightly waits on it without deleting anything
/// — which is not the step a run without `delete nodeclaims` is meant to reach (upstream
/// `pkg/controllers/disruption/helpers.go` `BuildDisruptionBudgetMapping` skips uninitialized
/// nodes).
fn initialized_team_node(walk: &Walk) -> Value {
    walk.eventually(60, "an initialized team node", || {
        let mut nodes = team_nodes(walk);
        let initialized = |n: &Value| n["metadata"]["labels"]["karpenter.sh/initialized"] == "true";
        (nodes.len() == 1 && initialized(&nodes[0])).then(|| nodes.remove(0))
    })
}

/// The Karpenter controller (its stand-in provisioner runs with everything) for
/// `--via-controller`.
fn start_controller(walk: &Walk) -> Child {
    install_controller(walk);
    let mut provisioner = walk.command(&[
        "karpenter",
        "provision",
        "--watch",
        "--yes",
        "--force",
        "--cluster-name",
        CLUSTER,
        // The stand-in is the controller, not an operator: its lease is not the operators'.
        "--lease-namespace",
        "default",
    ]);
    provisioner.stdout(Stdio::null()).stderr(Stdio::null());
    provisioner.spawn().expect("spawn the stand-in provisioner")
}

fn stop(mut child: Child) {
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
}

/// The entries of `label`'s row that the rows `before` do not have: what only it does.
fn only_in(proof: &Proof, label: &str, before: &[&str]) -> Vec<String> {
    entries_only_in(proof, label, before, |row| &row.needs)
}

/// The optional entries of `label`'s row that no row of `before` has.
fn optional_only_in(proof: &Proof, label: &str, before: &[&str]) -> Vec<String> {
    entries_only_in(proof, label, before, |row| &row.optional)
}

fn entries_only_in(
    proof: &Proof,
    label: &str,
    before: &[&str],
    of: impl Fn(&Row) -> &BTreeSet<String>,
) -> Vec<String> {
    let known: BTreeSet<&String> = before
        .iter()
        .flat_map(|b| proof.table[*b].needs.union(&proof.table[*b].optional))
        .collect();
    of(&proof.table[label])
        .iter()
        .filter(|e| !known.contains(e))
        .cloned()
        .collect()
}

/// The scenario: each command with everything, and without each thing it needs. Removals
/// that fail only after the command changed something run after its full run, on a state
/// made again for them.
fn scenario(proofs: &mut Proofs) {
    let walk = proofs.iam.walk;
    let mut wide = false;
    let mut drift = |walk: &Walk| {
        wide = !wide;
        toggle_security_groups(walk, wide);
    };
    setup(walk);
    proofs.without_row("ami", &["ami"]);
    proofs.full("ami", &["ami"], 0);
    let dry = ["provision", "--dry-run"];
    proofs.without_row("provision --dry-run", &dry);
    proofs.full("provision --dry-run", &dry, 0);
    let provision = ["provision", "--yes", "--wait", "--timeout", "120s"];
    // Without an AWS action the launch fails before anything exists.
    let launch = only_in(&proofs.iam, "provision", &["provision --dry-run"]);
    proofs.iam.without("provision", &provision, &launch);
    proofs.full("provision", &provision, 0);
    // Without `get nodes`/`get pods` it fails only once it has launched, so that rule is shown
    // needed by `drift replace --via-controller`; without a lease rule it fails before
    // anything, whatever the state.
    let lease: Vec<String> = only_in(&proofs.rbac, "provision", &["provision --dry-run"])
        .into_iter()
        .filter(|e| e.contains("leases"))
        .collect();
    proofs.rbac.without("provision", &provision, &lease);
    proofs.without_row("nodes", &["nodes", "-o", "wide"]);
    proofs.full("nodes", &["nodes", "-o", "wide"], 0);
    drift(walk);
    proofs.without_row("drift check", &["drift", "check"]);
    proofs.full("drift check", &["drift", "check"], 1);
    let replace_dry = ["drift", "replace", "--dry-run"];
    proofs.without_row("drift replace --dry-run", &replace_dry);
    proofs.full("drift replace --dry-run", &replace_dry, 0);
    let replace = ["drift", "replace", "--yes", "--timeout", "120s"];
    proofs.full("drift replace", &replace, 0);
    let before = ["provision", "drift replace --dry-run"];
    for proof in proofs.both() {
        // The optional rules only a replacement's end uses (list volumeattachments: the drained
        // node's volumes awaited) are proven here too: the run goes on, saying what it skipped.
        let mut entries = only_in(proof, "drift replace", &before);
        entries.extend(optional_only_in(proof, "drift replace", &before));
        // The kube-dns Service, read before a run's first launch: optional in `provision`'s row
        // too (whose RBAC proof removes only the lease), so proven here, where a replacement
        // launches.
        let dns = "get services".to_string();
        if proof.table["drift replace"].optional.contains(&dns) && !entries.contains(&dns) {
            entries.push(dns);
        }
        for entry in entries {
            // Drift again, so that it gets as far as `entry`; then finish what was cut short.
            drift(walk);
            proof.without("drift replace", &replace, &[entry]);
            let out = proof.karpenter(FULL, &replace, false);
            assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        }
    }
    consolidate(proofs);
    let provisioner = start_controller(walk);
    let via_label = "drift replace --via-controller";
    let via = [
        "drift",
        "replace",
        "--via-controller",
        "--yes",
        "--timeout",
        "120s",
    ];
    let hand_over = |walk: &Walk, claim: &str| {
        hand_to_karpenter(walk, &initialized_team_node(walk), claim);
    };
    hand_over(walk, "default-proof0");
    drift(walk);
    let mut late = Vec::new();
    for (side, proof) in proofs.both().into_iter().enumerate() {
        let after = only_in(proof, via_label, &["drift replace --dry-run"]);
        let early: Vec<String> = proof.table[via_label]
            .needs
            .iter()
            .filter(|e| !after.contains(e))
            .cloned()
            .collect();
        if !early.is_empty() {
            proof.without(via_label, &via, &early);
        }
        late.extend(after.into_iter().map(|entry| (side, entry)));
    }
    proofs.full(via_label, &via, 0);
    for (i, (side, entry)) in late.into_iter().enumerate() {
        hand_over(walk, &format!("default-proof{}", i + 1));
        drift(walk);
        proofs.both()[side].without(via_label, &via, &[entry]);
    }
    stop(provisioner);
    for (label, args) in [
        ("enable-drift --dry-run", &["enable-drift", "--dry-run"][..]),
        ("enable-drift", &["enable-drift", "--yes"][..]),
        ("disable-drift", &["disable-drift", "--yes"][..]),
    ] {
        proofs.without_row(label, args);
        proofs.full(label, args, 0);
    }
}

/// `consolidate` (no controller runs yet: it would refuse beside one): the team node emptied
/// and handed to Karpenter (a NodeClaim), which Karpenter's emptiness deletes. The removals
/// its `--dry-run` does not prove each get a node of their own, and a full run finishes what
/// they cut short. The pool's `consolidateAfter` is 0s meanwhile (a NodeClaim made here has no
/// pod-event time, so the wait would count from its creation); the walkthrough's `inflate`
/// and node are back at the end.
fn consolidate(proofs: &mut Proofs) {
    let walk = proofs.iam.walk;
    set_consolidate_after(walk, "0s");
    empty_karpenter_node(walk, "default-empty0");
    let dry = ["consolidate", "--dry-run"];
    proofs.without_row("consolidate --dry-run", &dry);
    proofs.full("consolidate --dry-run", &dry, 1);
    let yes = ["consolidate", "--yes", "--timeout", "120s"];
    proofs.full("consolidate", &yes, 0);
    let mut claims = 0;
    for proof in proofs.both() {
        // One run per unit: entries another entry's unit already covers (`patch nodes`,
        // `delete nodes`: one rule) are not run again.
        let mut covered = BTreeSet::new();
        for entry in only_in(proof, "consolidate", &["consolidate --dry-run"]) {
            let units = proof.granting(&entry);
            if units.is_subset(&covered) {
                continue;
            }
            covered.extend(units);
            claims += 1;
            launch_team_node(proof);
            empty_karpenter_node(walk, &format!("default-empty{claims}"));
            proof.without("consolidate", &yes, &[entry]);
            let out = proof.karpenter(FULL, &yes, false);
            assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        }
    }
    set_consolidate_after(walk, "30s");
    launch_team_node(&proofs.iam);
}

fn set_consolidate_after(walk: &Walk, after: &str) {
    walk.ok(&[
        "patch",
        "nodepool",
        "default",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"spec":{{"disruption":{{"consolidateAfter":"{after}"}}}}}}"#),
    ]);
}

/// `inflate` at 5 replicas on a team node `provision` launched (with everything).
fn launch_team_node(proof: &Proof) {
    let walk = proof.walk;
    settle_team_nodes(walk, 0);
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "5"]);
    walk.wait_unschedulable(5);
    let out = proof.karpenter(
        FULL,
        &["provision", "--yes", "--wait", "--timeout", "120s"],
        false,
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// The team node without pods, handed to Karpenter as `claim`: what emptiness removes.
fn empty_karpenter_node(walk: &Walk, claim: &str) {
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "0"]);
    walk.eventually(30, "inflate gone", || {
        walk.items(&["get", "pods", "-l", "app=inflate"])
            .is_empty()
            .then_some(())
    });
    hand_to_karpenter(walk, &initialized_team_node(walk), claim);
}

#[test]
fn iam_policy_and_rbac_roles_are_enough_for_every_command_and_no_more() {
    let policy = shipped_policy();
    let mut users = BTreeMap::from([(FULL.to_string(), policy.clone())]);
    let mut units: BTreeSet<String> = statements(&policy).iter().flat_map(actions).collect();
    units.extend(
        statements(&policy)
            .iter()
            .filter_map(|s| s["Sid"].as_str().map(str::to_string))
            .filter(|sid| sid.starts_with("Terminate")),
    );
    for unit in &units {
        users.insert(identity(unit), policy_without(&policy, unit));
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("least-privilege");
    std::fs::create_dir_all(&dir).unwrap();
    let users_file = dir.join("users.json");
    std::fs::write(&users_file, serde_json::to_string(&users).unwrap()).unwrap();
    let audit = dir.join("audit.jsonl");
    std::fs::write(&audit, "").unwrap();
    let (users_arg, audit_arg) = (
        users_file.to_string_lossy().into_owned(),
        audit.to_string_lossy().into_owned(),
    );
    // One moto enforcing IAM, one cluster enforcing RBAC.
    let walk = Walk::build(
        "least-privilege",
        &["--iam-users", &users_arg, "--audit", &audit_arg],
        "crds/v1beta1",
        |moto, config| crate::test_cluster::Config {
            ec2_endpoint: Some(moto.url.clone()),
            rbac: true,
            ..config
        },
    );
    // The second peer of the reservations row: same users, same audit.
    let reserved = Walk::build(
        "least-privilege-iam-reservations",
        &[
            "--iam-users",
            &users_arg,
            "--audit",
            &audit_arg,
            "--capacity-reservation",
            r#"{"id": "cr-0a1b2c3d4e5f60001", "instanceType": "c5.xlarge", "zone": "us-east-1b"}"#,
            "--placement-group",
            r#"{"id": "pg-0a1b2c3d4e5f60002", "name": "spread-out", "strategy": "spread"}"#,
        ],
        "crds/v1",
        |_, config| config,
    );
    let keys: BTreeMap<String, (String, String)> = users
        .keys()
        .map(|name| {
            let c = &walk.moto.seed["credentials"][name];
            (
                name.clone(),
                (
                    c["accessKeyId"].as_str().unwrap().to_string(),
                    c["secretAccessKey"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    let (rules, kubeconfigs) = service_accounts(&walk);
    let (id, secret) = keys[FULL].clone();
    let proof = |side: Side, table: &str, other: Vec<(&'static str, String)>| Proof {
        walk: &walk,
        side,
        other,
        table: documented(table),
        run: BTreeSet::new(),
        proven: BTreeSet::new(),
        failures: Vec::new(),
    };
    let mut proofs = Proofs {
        iam: proof(
            Side::Iam {
                policy,
                keys,
                audit,
            },
            "iam",
            vec![("KUBECONFIG", kubeconfigs[FULL].clone())],
        ),
        rbac: proof(
            Side::Rbac { rules, kubeconfigs },
            "rbac",
            vec![("AWS_ACCESS_KEY_ID", id), ("AWS_SECRET_ACCESS_KEY", secret)],
        ),
    };
    scenario(&mut proofs);
    terminate_conditions_scope(&mut proofs.iam);
    reservations(&mut proofs.iam, &reserved);
    proofs.finish();
}

/// The terminate statements: this cluster's NodePool and Provisioner instances, each by its
/// own statement; another cluster's never.
fn terminate_conditions_scope(proof: &mut Proof) {
    let Side::Iam { keys, .. } = &proof.side else {
        unreachable!()
    };
    let launch = |tags: &[(&str, &str)]| -> String {
        let tags: Vec<Value> = tags
            .iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        crate::support::boto3(
            &proof.walk.moto,
            &format!(
                "import json\nimage = ec2.describe_images(Owners=['amazon'])['Images'][0]['ImageId']\nr = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType='m5.large', TagSpecifications=[{{'ResourceType': 'instance', 'Tags': json.loads({:?})}}])\nprint(r['Instances'][0]['InstanceId'])",
                serde_json::to_string(&tags).unwrap()
            ),
        )
    };
    let owned = format!("kubernetes.io/cluster/{CLUSTER}");
    let terminate = |who: &str, id: &str| -> bool {
        let (key, secret) = &keys[who];
        AwsCloud::connect(&AwsOptions {
            region: Some(proof.walk.moto.region().to_string()),
            endpoint_url: Some(proof.walk.moto.url.clone()),
            static_credentials: Some((key.clone(), secret.clone())),
            ..AwsOptions::default()
        })
        .unwrap()
        .terminate_instances(&[id.to_string()])
        .is_ok()
    };
    let nodepool = [
        (owned.as_str(), "owned"),
        ("karpenter.sh/nodepool", "default"),
    ];
    let provisioner = [
        (owned.as_str(), "owned"),
        ("karpenter.sh/provisioner-name", "default"),
    ];
    let other = [
        ("kubernetes.io/cluster/other", "owned"),
        ("karpenter.sh/nodepool", "default"),
    ];
    let cases = [
        (FULL.to_string(), &nodepool[..], true),
        (FULL.to_string(), &provisioner[..], true),
        (FULL.to_string(), &other[..], false),
        (
            identity("TerminateTheClustersNodePoolInstances"),
            &nodepool[..],
            false,
        ),
        (
            identity("TerminateTheClustersNodePoolInstances"),
            &provisioner[..],
            true,
        ),
        (
            identity("TerminateTheClustersProvisionerInstances"),
            &provisioner[..],
            false,
        ),
        (
            identity("TerminateTheClustersProvisionerInstances"),
            &nodepool[..],
            true,
        ),
    ];
    let wrong: Vec<String> = cases
        .into_iter()
        .filter(|(who, tags, allowed)| terminate(who, &launch(tags)) != *allowed)
        .map(|(who, tags, allowed)| {
            format!("{who} terminating an instance tagged {tags:?}: want allowed={allowed}")
        })
        .collect();
    for message in wrong {
        proof.fail(message);
    }
}

/// The shipped roles on `walk`'s cluster (which enforces RBAC), and for each rule a copy of its
/// role without it; a ServiceAccount bound to all roles, and one per rule bound to them with
/// that copy instead; a kubeconfig each (by identity). `kubectl auth can-i` agrees.
fn service_accounts(walk: &Walk) -> (BTreeMap<String, Value>, BTreeMap<String, String>) {
    let (rules, roles) = shipped_roles();
    let mut docs: Vec<Value> = roles.clone();
    let mut accounts: Vec<(String, Option<String>)> = vec![(FULL.to_string(), None)];
    for unit in rules.keys() {
        let (role, index) = unit.trim_end_matches(']').split_once('[').unwrap();
        let index: usize = index.parse().unwrap();
        let mut copy = roles
            .iter()
            .find(|r| r["metadata"]["name"] == role)
            .unwrap()
            .clone();
        copy["metadata"]["name"] = json!(identity(unit));
        copy["rules"].as_array_mut().unwrap().remove(index);
        docs.push(copy);
        accounts.push((identity(unit), Some(unit.clone())));
    }
    let mut kubeconfigs = BTreeMap::new();
    let admin = std::fs::read_to_string(&walk.kubeconfig).unwrap();
    for (account, without) in &accounts {
        docs.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": account, "namespace": "default"}}));
        for role in &roles {
            let name = role["metadata"]["name"].as_str().unwrap();
            let replaced = without
                .as_ref()
                .is_some_and(|u| u.starts_with(&format!("{name}[")));
            let role_name = if replaced {
                identity(without.as_ref().unwrap())
            } else {
                name.to_string()
            };
            let subject =
                json!([{"kind": "ServiceAccount", "name": account, "namespace": "default"}]);
            let binding = format!("{account}-{name}");
            docs.push(match role["kind"].as_str() {
                Some("Role") => json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": binding, "namespace": role["metadata"]["namespace"]},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
                    "subjects": subject}),
                _ => json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": binding},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
                    "subjects": subject}),
            });
        }
    }
    let stream: Vec<String> = docs
        .iter()
        .map(|d| serde_saphyr::to_string(d).unwrap())
        .collect();
    walk.apply("roles.yaml", &stream.join("---\n"));
    for (account, _) in &accounts {
        // `kubectl create token` (TokenRequest) for the first, the same API directly after.
        let token = if account == FULL {
            walk.ok(&["create", "token", account]).trim().to_string()
        } else {
            walk.cluster.token("default", account)
        };
        let path = walk.dir.join(format!("kubeconfig-{account}"));
        std::fs::write(
            &path,
            admin.replace("user: {}", &format!("user: {{token: {token}}}")),
        )
        .unwrap();
        kubeconfigs.insert(account.clone(), path.to_string_lossy().into_owned());
    }
    // `kubectl auth can-i` agrees with the roles.
    let user = format!("system:serviceaccount:default:{FULL}");
    for (args, want) in [
        (
            &["create", "pods", "--subresource=eviction", "-n", "default"][..],
            "yes",
        ),
        (&["list", "nodepools.karpenter.sh"][..], "yes"),
        (&["delete", "deployments.apps", "-n", "karpenter"][..], "no"),
        (&["get", "configmaps/other", "-n", "karpenter"][..], "no"),
        (
            &[
                "get",
                "configmaps/karpenter-global-settings",
                "-n",
                "karpenter",
            ][..],
            "yes",
        ),
    ] {
        let out = walk.run(&[&["auth", "can-i", "--as", &user], args].concat());
        assert_eq!(
            out.stdout.trim(),
            want,
            "can-i {args:?}: {}\n{:#?}",
            out.stderr,
            walk.cluster.take_decisions()
        );
    }
    walk.cluster.take_decisions();
    (rules, kubeconfigs)
}
