//! Public configurations swept in session 33 (docs/upstream-tests.md "Public configurations
//! swept (session 33)"), through the binary. Fixtures: `tests/fixtures/public/s33/`, each with
//! its source in its first comment.

use crate::support::{claims_launched as claims, fixture, fixture_json, karpenter, Run};
use serde_json::Value;

fn path(file: &str) -> String {
    fixture(&format!("public/s33/{file}"))
        .to_string_lossy()
        .into_owned()
}

fn json_of(args: &[&str], file: &str) -> (Run, Value) {
    fixture_json(args, &format!("public/s33/{file}"))
}

fn plan_of(file: &str) -> (Run, Value) {
    json_of(&["provision", "--dry-run"], file)
}

fn consolidate_at(now: &str, file: &str) -> (Run, Value) {
    json_of(&["consolidate", "--now", now], file)
}

/// The nodes each action of a consolidation report disrupts, with its decision.
fn actions(report: &Value) -> Vec<(String, Vec<String>)> {
    report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let nodes = a["nodes"].as_array().unwrap();
            (
                a["decision"].as_str().unwrap().to_string(),
                nodes
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

/// A refusal: exit 2, one line on stderr holding every `needle`.
fn refused(args: &[&str], file: &str, needles: &[&str]) {
    let file = path(file);
    let mut all = args.to_vec();
    all.extend(["-f", &file]);
    assert_refused(karpenter(&all, b""), needles);
}

/// Exit 2 and one line on stderr holding every `needle`.
fn assert_refused(run: Run, needles: &[&str]) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    for needle in needles {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
}

/// SebastianScherer88/bettmensch.ai: a v1beta1 AL2 class without `status.amis` and a GPU pool
/// with no architecture requirement. Two one-GPU pods fit one two-GPU node; the cheapest is a
/// g5g.16xlarge, but AL2 publishes no arm64 GPU image (aws v1.14.1 `amifamily/al2.go`; v0.37.7
/// `DefaultAMIs`), so a launch never asks for a g5g (`resolver.go` `Resolve` →
/// `MapToInstanceTypes`) and takes the g4dn.12xlarge. The CPU pool's 20 pods fit one c6g.8xlarge.
#[test]
fn an_al2_class_launches_no_arm64_gpu_type_for_the_gpu_pool() {
    let (run, plan) = plan_of("bettmensch-v1beta1-pools.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [
            ("default-cpu".into(), "c6g.8xlarge".into(), 20),
            ("default-gpu".into(), "g4dn.12xlarge".into(), 2)
        ]
    );
    let options: Vec<&str> = plan["nodeClaims"][1]["instanceTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        options.contains(&"g5g.16xlarge"),
        "the scheduler keeps it: {options:?}"
    );
}

/// A cost guide (index id 51982703921): its v1beta1 EC2NodeClass names neither `role` nor
/// `instanceProfile` (v0.37 CRD: exactly one is required) — refused in one line. Completed, its
/// AL2023 class without `amiSelectorTerms` takes v0.37's default images, which carry the
/// architecture only (v0.37.7 `al2023.go` `DefaultAMIs`): the GPU pod launches a g6.xlarge, and
/// a g6 node running the x86_64 standard image is not AMI-drifted (before: "default has no AMI
/// for amd64 gpu").
#[test]
fn a_v1beta1_al2023_default_image_runs_gpu_types_and_a_class_without_role_is_refused() {
    refused(
        &["provision", "--dry-run"],
        "cost-guide-v1beta1-no-role.yaml",
        &["EC2NodeClass/default", "role or instanceProfile"],
    );
    let (run, plan) = plan_of("cost-guide-v1beta1-completed.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [
            ("default".into(), "c6g.2xlarge".into(), 4),
            ("gpu".into(), "g6.xlarge".into(), 1)
        ]
    );
    let eks = "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023";
    let amd = format!("{eks}/x86_64/standard/recommended/image_id=ami-0a1b2c3d4e5f60001");
    let arm = format!("{eks}/arm64/standard/recommended/image_id=ami-0a1b2c3d4e5f60002");
    let (run, report) = json_of(
        &[
            "drift",
            "check",
            "--kubernetes-version",
            "1.30",
            "--ssm-param",
            &amd,
            "--ssm-param",
            &arm,
        ],
        "cost-guide-v1beta1-world.yaml",
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(report["summary"]["drifted"], 0, "{report:#}");
}

/// stxkxs/eks-gitops, production overlay rendered (the patch's requirements list replaces the
/// base's): 12 pods of 1 CPU / 2Gi on one c6a.4xlarge. Its world of three c6a.large with one
/// 500m pod each: on Monday 12:00 UTC the `nodes: "0"` budget (Mon-Fri 09:00 for 8h) blocks
/// consolidation; at 18:00 only `10%` is active — one node of three (rounded up, core
/// `nodepool.go` `GetAllowedDisruptions`) — so one single-node deletion, not a multi-node one.
#[test]
fn a_business_hours_budget_of_zero_then_ten_percent_paces_consolidation() {
    let (run, plan) = plan_of("stxkxs-production-budgets.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [("default".into(), "c6a.4xlarge".into(), 12)]
    );
    let (run, report) = consolidate_at("2024-06-03T12:00:00Z", "stxkxs-world.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(actions(&report).is_empty(), "{report:#}");
    assert!(
        report["nodes"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("0 of 0 now, in its window \"0 9 * * 1-5\""),
        "{report:#}"
    );
    let (run, report) = consolidate_at("2024-06-03T18:00:00Z", "stxkxs-world.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        actions(&report),
        [("delete".into(), vec!["default-1".to_string()])]
    );
    assert_eq!(report["actions"][0]["method"], "single");
}

/// An architecture guide's Graviton pool (index id 71548337664) whose only budget, `nodes: 10%`,
/// is active Mon-Fri 09:00 for 8h: six 2-CPU pods spread by host take six c6g.xlarge (the last
/// claim's options cut by the CPU limit, core `scheduler.go` `subtractMax`). With three nodes
/// emptied: at 10:00 Monday one of six may go (10% rounded up); at 20:00 no budget is active, so
/// none limits emptiness and all three go (core `nodepool.go` `GetAllowedDisruptionsByReason`:
/// an inactive budget allows `MaxInt32`).
#[test]
fn a_budget_outside_its_window_leaves_emptiness_unlimited() {
    let (run, plan) = plan_of("graviton-business-hours-budget.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got = claims(&plan);
    assert_eq!(got.len(), 6, "{plan:#}");
    assert!(
        got.iter().all(|c| c.1 == "c6g.xlarge" && c.2 == 1),
        "{got:?}"
    );
    assert_eq!(
        plan["nodeClaims"][5]["instanceTypes"]
            .as_array()
            .unwrap()
            .len(),
        24
    );
    let (run, report) = consolidate_at("2024-06-03T10:00:00Z", "graviton-world.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        actions(&report),
        [("delete".into(), vec!["general-compute-4".to_string()])]
    );
    let (run, report) = consolidate_at("2024-06-03T20:00:00Z", "graviton-world.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let all: Vec<String> = (4..=6).map(|n| format!("general-compute-{n}")).collect();
    assert_eq!(actions(&report), [("delete".into(), all)]);
    assert_eq!(report["actions"][0]["method"], "emptiness");
}

/// fabio-lasso/aws-karpenter's production pools name an EKS Auto Mode `NodeClass`
/// (`eks.amazonaws.com`): EKS provisions for them, Karpenter's controller does not (core
/// `IsManaged`), so the six replicas wait with reason code `AutoModeNodePool`.
#[test]
fn auto_mode_production_pools_plan_nothing() {
    let (run, plan) = plan_of("fabio-lasso-auto-mode-prod.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 6, "{plan:#}");
    assert!(pending
        .iter()
        .all(|u| u["reasonCode"] == "AutoModeNodePool"));
}

/// aws-samples/terraform-eks-code's v1alpha5 Provisioner with an inline `provider`: the v0.31
/// webhook defaults (amd64, linux, c/m/r, generation > 2) hold five 1-CPU pods on one
/// c6a.2xlarge; `convert` moves the provider into an EC2NodeClass (`al2@latest`) and, with the
/// workload, plans the same.
#[test]
fn an_inline_provider_provisioner_plans_and_converts_the_same() {
    let (run, plan) = plan_of("terraform-eks-code-v1alpha5.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(claims(&plan), [("default".into(), "c6a.2xlarge".into(), 5)]);
    let conv = karpenter(
        &["convert", "-f", &path("terraform-eks-code-v1alpha5.yaml")],
        b"",
    );
    assert_eq!(conv.code, 0, "{}", conv.stderr);
    assert!(conv.stdout.contains("alias: al2@latest"), "{}", conv.stdout);
    assert!(conv
        .stderr
        .contains("spec.provider: became EC2NodeClass/default"));
    let workload = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: inflate}\nspec:\n  replicas: 5\n  selector: {matchLabels: {app: inflate}}\n  template:\n    metadata: {labels: {app: inflate}}\n    spec:\n      containers: [{name: inflate, image: pause, resources: {requests: {cpu: 1}}}]\n";
    let input = format!("{}\n---\n{workload}", conv.stdout);
    let run = karpenter(
        &["provision", "--dry-run", "-o", "json", "-f", "-"],
        input.as_bytes(),
    );
    let again: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        claims(&again),
        [("default".into(), "c6a.2xlarge".into(), 5)]
    );
}

/// gersontpc/aws_eks: a v1alpha5 AWSNodeTemplate launching from `launchTemplate` with no
/// security group selector (v0.31 allows it with a launch template): four 500m / 1Gi pods take
/// two t3.medium (three fit one: 2 vCPU less 70m reserved); `convert` drops the launch template
/// with a note naming it and writes a placeholder security group selector.
#[test]
fn a_launch_template_node_template_plans_and_converts_with_notes() {
    let (run, plan) = plan_of("gersontpc-launch-template.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [
            ("my-cluster".into(), "t3.medium".into(), 3),
            ("my-cluster".into(), "t3.medium".into(), 1)
        ]
    );
    let conv = karpenter(
        &["convert", "-f", &path("gersontpc-launch-template.yaml")],
        b"",
    );
    assert_eq!(conv.code, 0, "{}", conv.stderr);
    assert!(
        conv.stderr
            .contains("spec.launchTemplate: dropped: v1 cannot launch from a launch template (\"my-cluster-karpenter\")"),
        "{}",
        conv.stderr
    );
    assert!(conv.stderr.contains("spec.securityGroupSelector: absent"));
}

/// IgorKurylo1988/karpenter-pulse: t3.micro / t2.micro with 10 pods of 100m / 128Mi: the ENI
/// limit of a t3.micro (4 pods, aws `types.go` `ENILimitedPods`) makes three NodeClaims (4, 4,
/// 2).
#[test]
fn micro_types_hold_four_pods_each_by_their_eni_limit() {
    let (run, plan) = plan_of("karpenter-pulse-micro.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<usize> = claims(&plan).iter().map(|c| c.2).collect();
    assert_eq!(got, [4, 4, 2]);
    assert!(claims(&plan).iter().all(|c| c.1 == "t3.micro"));
}

/// A CAS-to-Karpenter migration guide (index id 9040106531): pods requiring
/// `karpenter.sh/nodepool Exists` fit both of its pools; at equal weight the pool later by name,
/// `general`, is tried first (core `nodepoolutils.OrderByWeight`), so one m5a.xlarge takes all
/// five.
#[test]
fn a_nodepool_exists_affinity_takes_the_pool_first_by_name() {
    let (run, plan) = plan_of("cas-migration-nodepool-exists.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(claims(&plan), [("general".into(), "m5a.xlarge".into(), 5)]);
}

/// A cost guide's v1 NodePool (index id 62804140433) names its class with v1beta1's
/// `nodeClassRef.apiVersion`: strict field validation refuses the unknown field, and without it
/// (`--validate=ignore`) the CRD's required `group` refuses it — one line each, exit 2. Written
/// with `group`, its `instance-family In [c, m, r]` (category letters) matches no type: pending.
#[test]
fn a_v1_pool_with_node_class_api_version_and_family_letters() {
    refused(
        &["provision", "--dry-run"],
        "goldilocks-guide-family-letters.yaml",
        &[
            "NodePool/default",
            "spec.template.spec.nodeClassRef.apiVersion: unknown field",
        ],
    );
    refused(
        &["provision", "--dry-run", "--validate=ignore"],
        "goldilocks-guide-family-letters.yaml",
        &["spec.template.spec.nodeClassRef.group: Required value"],
    );
    let (run, plan) = plan_of("goldilocks-guide-family-letters-group.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 2, "{plan:#}");
    assert!(pending[0]["reason"]
        .as_str()
        .unwrap()
        .contains("karpenter.k8s.aws/instance-family In [c m r]"));
}

/// A Spot guide (index id 61030910213) writes its pool as v1 with v1beta1's
/// `disruption.expireAfter`, `nodeClassRef.apiVersion` and `WhenUnderutilized`, and a budget
/// `schedule: "@every 6h"` without `duration`: refused at each layer in one line, exit 2 — the
/// unknown field (strict), then the CRD's required `group`; corrected step by step (fixtures
/// built from it in the test), the `consolidationPolicy` enum, the budget rule "'schedule' must be
/// set with 'duration'", and the schedule pattern (v1.14.1 `karpenter.sh_nodepools.yaml`).
#[test]
fn a_v1beta1_shaped_pool_with_an_every_6h_budget_is_refused_at_each_layer() {
    let file = "spot-guide-every-6h-budget.yaml";
    refused(
        &["provision", "--dry-run"],
        file,
        &[
            "NodePool/spot-mixed",
            "spec.disruption.expireAfter: unknown field",
        ],
    );
    refused(
        &["provision", "--dry-run", "--validate=warn"],
        file,
        &["spec.template.spec.nodeClassRef.group: Required value"],
    );
    let text = std::fs::read_to_string(path(file)).unwrap();
    let (_, body) = text.split_once("\napiVersion: karpenter.sh/v1\n").unwrap();
    let body = format!("apiVersion: karpenter.sh/v1\n{body}")
        .replace(
            "        apiVersion: karpenter.k8s.aws/v1beta1\n",
            "        group: karpenter.k8s.aws\n",
        )
        .replace(
            "    expireAfter: 168h  # 7 days\n",
            "    consolidateAfter: 0s\n",
        );
    let fixed_policy = body.replace("WhenUnderutilized", "WhenEmptyOrUnderutilized");
    let with_duration =
        fixed_policy.replace("\"@every 6h\"", "\"@every 6h\"\n        duration: 6h");
    for (input, needle) in [
        (
            &body,
            "consolidationPolicy: unknown policy \"WhenUnderutilized\"",
        ),
        (
            &fixed_policy,
            "budgets[0]: schedule and duration must be set together",
        ),
        (
            &with_duration,
            "budgets[0].schedule: invalid value \"@every 6h\"",
        ),
    ] {
        let run = karpenter(&["provision", "--dry-run", "-f", "-"], input.as_bytes());
        assert_refused(run, &[needle]);
    }
}

/// panicboat/platform's system-components pool (arm64 m, generation > 5, medium..4xlarge) on an
/// AL2023 class with a 30Gi root: four small pods fit one m6g.medium; a pod asking 28Gi of
/// ephemeral storage waits, the volume leaving 26Gi after kube-reserved (1Gi) and
/// `nodefs.available` (10 %) (aws `types.go` `ephemeralStorage`, core `computeAllocatable`).
#[test]
fn a_thirty_gi_root_volume_leaves_twenty_six_gi_of_ephemeral_storage() {
    let (run, plan) = plan_of("panicboat-system-components.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [("system-components".into(), "m6g.medium".into(), 4)]
    );
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{plan:#}");
    assert_eq!(pending[0]["pod"], "kube-system/cache");
    assert!(pending[0]["reason"]
        .as_str()
        .unwrap()
        .contains("largest available after overhead: 26Gi"));
}
