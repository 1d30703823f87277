//! Public configurations swept in session 32 (docs/upstream-tests.md "Public configurations
//! swept (session 32)"), through the binary. Fixtures: `tests/fixtures/public/s32/`, each with
//! its source in its first comment.

use crate::support::{claims_launched as claims, fixture, fixture_json, karpenter, Run};
use serde_json::Value;

fn path(file: &str) -> String {
    fixture(&format!("public/s32/{file}"))
        .to_string_lossy()
        .into_owned()
}

fn json_of(args: &[&str], file: &str) -> (Run, Value) {
    fixture_json(args, &format!("public/s32/{file}"))
}

fn plan_of(file: &str) -> (Run, Value) {
    json_of(&["provision", "--dry-run"], file)
}

fn consolidate_of(file: &str) -> (Run, Value) {
    json_of(&["consolidate", "--now", "2024-06-03T12:00:00Z"], file)
}

/// The unschedulable pods and their reasons.
fn unschedulable(plan: &Value) -> Vec<(String, String)> {
    let text = |u: &Value, k: &str| u[k].as_str().unwrap_or_default().to_string();
    let list = plan["unschedulable"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    list.iter()
        .map(|u| (text(u, "pod"), text(u, "reason")))
        .collect()
}

/// A NodeOverlay of `requirements: []` adding 17 tensor-fusion resources of 36 (index id
/// 55611134349): a pod asking one `index_3` fits 36 to a node (overlay capacity, core
/// `nodeoverlay` store), so 40 workers take two g5.xlarge.
#[test]
fn an_overlay_without_requirements_gives_every_type_its_extended_resources() {
    let (run, plan) = plan_of("tensor-fusion-overlay.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<usize> = claims(&plan).iter().map(|c| c.2).collect();
    assert_eq!(got, [36, 4], "{plan:#}");
    assert!(claims(&plan).iter().all(|c| c.1 == "g5.xlarge"), "{plan:#}");
}

/// Consolidation's "not cheaper" text counted only the three pods it names: each node, whose
/// four workers have no room elsewhere (the other node's `index_3` is nearly full), read "… and
/// 2 more fit on no other node". Now every such pod is counted.
#[test]
fn the_not_cheaper_reason_counts_every_pod_left_without_room() {
    let (run, report) = consolidate_of("tensor-fusion-world.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(report["actions"], serde_json::json!([]), "{report:#}");
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{report:#}");
    for node in nodes {
        let reason = node["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains(" and 3 more fit on no other node"),
            "{reason}"
        );
    }
}

/// aws-samples/sample-slemify: `priceAdjustment` overlays of +45/+30/+15 % on generations
/// 5/6/7 of its pool make generation 8 the cheapest (core `nodeoverlay` price adjustment), and
/// consolidation compares the adjusted prices too (`cloudprovider/overlay` decorates
/// `GetInstanceTypes` for disruption as for provisioning): a c6g.xlarge ($0.136 + 30 %) is
/// replaced by a c8g.xlarge ($0.1595).
#[test]
fn price_adjustment_overlays_steer_launch_and_consolidation_to_generation_8() {
    let (run, plan) = plan_of("slemify-overlays.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [("slemify-slm".into(), "c8g.xlarge".into(), 1)]
    );
    let (run, report) = consolidate_of("slemify-gen6-world.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let action = &report["actions"][0];
    assert_eq!(action["decision"], "replace", "{report:#}");
    assert_eq!(action["replacement"]["instanceType"], "c8g.xlarge");
    assert_eq!(report["nodes"][0]["pricePerHour"], 0.1768);
}

/// A GPU workshop's pool with `limits: nvidia.com/gpu: "4"` on gr6.8xlarge (1 GPU each, index
/// id 69420999672): five one-GPU pods → four NodeClaims, the fifth held by the limit
/// (core `scheduler.go` `filterByRemainingResources`).
#[test]
fn a_gpu_limit_of_four_launches_four_single_gpu_nodes() {
    let (run, plan) = plan_of("gpu-workshop-gpu-limit.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(claims(&plan).len(), 4, "{plan:#}");
    assert_eq!(plan["unschedulable"][0]["reasonCode"], "LimitReached");
}

/// v1alpha5 Provisioners of a Terraform module (index id 46321324761): the Linux pods select no
/// OS, so the Windows 2022 pool — first by name at equal weight (core `nodepool.go`
/// `OrderByWeight`) — takes them with the Windows pods; `convert` writes the Windows aliases and
/// plans the same.
#[test]
fn windows_provisioners_take_pods_that_select_no_os_and_convert_the_same() {
    let (run, plan) = plan_of("windows-v1alpha5.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pools: Vec<String> = claims(&plan).into_iter().map(|c| c.0).collect();
    assert_eq!(pools, ["stateless-windows2022-provisioner"; 2]);
    let conv = karpenter(&["convert", "-f", &path("windows-v1alpha5.yaml")], b"");
    assert_eq!(conv.code, 0, "{}", conv.stderr);
    for alias in ["alias: windows2019@latest", "alias: windows2022@latest"] {
        assert!(conv.stdout.contains(alias), "{}", conv.stdout);
    }
}

/// A Windows AWSNodeTemplate mapping /dev/xvda (not the family's /dev/sda1): the ephemeral size
/// is the family default of 50Gi (aws `types.go` `ephemeralStorage`), so 100Gi waits, 40Gi fits.
#[test]
fn a_windows_class_mapping_xvda_keeps_the_default_50gi_ephemeral_storage() {
    let (run, plan) = plan_of("windows-xvda-ephemeral.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let pending = unschedulable(&plan);
    assert_eq!(pending.len(), 1, "{plan:#}");
    assert_eq!(pending[0].0, "default/win-scratch");
    assert!(
        pending[0].1.contains("ephemeral-storage 100Gi"),
        "{pending:?}"
    );
}

/// elamaran11/eks-platform-openclaw: the kata-qemu RuntimeClass's `scheduling.nodeSelector`
/// (`katacontainers.io/kata-runtime: "true"`) is admitted into the pod, and no pool sets that
/// label (the repository leaves it to kata-deploy on purpose), so the sandbox pod waits (core
/// `requirements.go` `Compatible`). With kata-deploy's RuntimeClass (overhead, no scheduling) it
/// lands on the nested-virtualization pool (weight 20, c8i with `nested-virtualization`, aws
/// `compatibility.go`), its requests raised by the overhead.
#[test]
fn a_runtime_class_selector_no_pool_sets_keeps_the_kata_sandbox_pending() {
    let (run, plan) = plan_of("kata-runtimeclass-selector.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let pending = unschedulable(&plan);
    assert!(
        pending[0].1.contains("katacontainers.io/kata-runtime"),
        "{pending:?}"
    );
    let (run, plan) = plan_of("kata-deploy-runtimeclass.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        [("kata-nested".into(), "c8i.2xlarge".into(), 1)]
    );
    assert_eq!(plan["nodeClaims"][0]["requests"]["cpu"], "850m");
}

/// The same chart rendered with values that lost `instanceTypes`: `values: null` under an `In`
/// requirement is refused as the CRD refuses it ("requirements with operator 'In' must have a
/// value defined"), one line, exit 2.
#[test]
fn a_helm_values_mismatch_rendering_null_values_is_refused_in_one_line() {
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &path("kata-values-mismatch.yaml"),
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("NodePool/kata-nested: spec.template.spec.requirements[0]")
            && run.stderr.contains("operator In needs at least one value"),
        "{}",
        run.stderr
    );
}

/// qezman/cost-optimized-eks-platform writes v1beta1's `disruption.expireAfter` in a v1 NodePool:
/// kubectl's strict validation refuses the unknown field; `--validate=warn` reads on.
#[test]
fn a_v1_pool_with_disruption_expire_after_is_refused_then_planned_with_warn() {
    let file = path("qezman-disruption-expireafter.yaml");
    let run = karpenter(&["provision", "--dry-run", "-f", &file], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("NodePool/default: spec.disruption.expireAfter: unknown field"),
        "{}",
        run.stderr
    );
    let (run, plan) = json_of(
        &["provision", "--dry-run", "--validate=warn"],
        "qezman-disruption-expireafter.yaml",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("unknown field"), "{}", run.stderr);
    assert_eq!(claims(&plan), [("default".into(), "t3a.small".into(), 6)]);
}

/// yarinago/K8S-Argo-Karpenter-Kafka-GithubAction: `general` limited to 8 CPU / 16Gi. Round 1's
/// NodeClaim counts its largest option against the limit (core `scheduler.go` `subtractMax`),
/// so each further broker (one per host) needs a later round with the launched c6a.large counted.
#[test]
fn three_brokers_under_an_eight_cpu_limit_take_three_rounds() {
    let (run, plan) = plan_of("yarinago-kafka-batch.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rounds: Vec<(String, u64)> = plan["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["nodePool"].as_str().unwrap().to_string(),
                c["round"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rounds,
        [
            ("batch".into(), 1),
            ("general".into(), 1),
            ("general".into(), 2),
            ("general".into(), 3)
        ]
    );
}

/// rhannachi/kubernetes-eks-Karpenter's class names the placeholder `ami-xxxxxxxxx` by id; nodes
/// launched from another image are AMI-drifted (aws `drift.go` `isAMIDrifted`).
#[test]
fn nodes_not_running_the_placeholder_ami_are_ami_drifted() {
    let (run, plan) = plan_of("rhannachi-inflate.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(claims(&plan).len(), 5, "{plan:#}");
    let (run, report) = json_of(&["drift", "check"], "rhannachi-world.yaml");
    assert_eq!(run.code, 1, "drifted nodes exit 1: {}", run.stderr);
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert!(
        nodes.iter().all(|n| n["reason"] == "AMIDrift"),
        "{report:#}"
    );
}

/// pengchao2022/aws-eks-cluster-karpenter: the v1alpha5 pair plans three t3.medium; the later
/// revision's `AWSNodeTemplate` in `karpenter.sh/v1alpha5` is refused (no such kind in that
/// group), and with the group corrected its unprefixed `instance-type` key is a custom label:
/// it does not constrain the instance type, and the NodeClaim carries one of its values.
#[test]
fn a_v1alpha5_node_template_in_the_wrong_group_and_a_custom_instance_type_key() {
    let (run, plan) = plan_of("pengchao-v1alpha5.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(claims(&plan).iter().all(|c| c.1 == "t3.medium"), "{plan:#}");
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &path("pengchao-awsnodetemplate-group.yaml"),
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("AWSNodeTemplate/default: unsupported kind (karpenter.sh/v1alpha5)"),
        "{}",
        run.stderr
    );
    let (run, plan) = plan_of("pengchao-instance-type-key.yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claim = &plan["nodeClaims"][0];
    assert_eq!(claim["instanceType"], "c6a.xlarge", "{plan:#}");
    assert!(
        ["t3.medium", "t3.large"].contains(&claim["labels"]["instance-type"].as_str().unwrap()),
        "{plan:#}"
    );
}

/// ikambarov/terraform-karpenter: twelve 1-CPU pods spread by hostname (`maxSkew: 2`,
/// DoNotSchedule) take two per xlarge NodeClaim; `limits.cpu: 20` counts each claim's largest
/// option (4 CPU), so five claims and two pods pending.
#[test]
fn a_hostname_spread_under_a_cpu_limit_of_twenty_leaves_two_pods() {
    let (run, plan) = plan_of("ikambarov-app-nodepool.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let got = claims(&plan);
    assert_eq!(got.len(), 5, "{plan:#}");
    assert!(got.iter().all(|c| c.2 == 2), "{plan:#}");
    assert_eq!(unschedulable(&plan).len(), 2);
    assert_eq!(plan["unschedulable"][0]["reasonCode"], "LimitReached");
}

/// CMS-Enterprise/eks-core's v1beta1 charts: the class template writes `kmsKeyId` (the CRD's
/// field is `kmsKeyID`), refused by strict validation with the right spelling suggested; read on
/// with `--validate=ignore`, its default `volumeSize: 300G` gives 279.4Gi less the kubelet's
/// reservations (aws `types.go` `ephemeralStorage`, core `computeAllocatable`): 250Gi fits,
/// 290Gi waits, and the reason says the size readably (it printed `262623299Ki` alone).
#[test]
fn a_kms_key_id_typo_and_a_300g_root_volume_from_a_v1beta1_chart() {
    let file = path("cms-eks-core-v1beta1.yaml");
    let run = karpenter(&["provision", "--dry-run", "-f", &file], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "spec.blockDeviceMappings[0].ebs.kmsKeyId: unknown field (did you mean kmsKeyID?)"
        ),
        "{}",
        run.stderr
    );
    let (run, plan) = json_of(
        &["provision", "--dry-run", "--validate=ignore"],
        "cms-eks-core-v1beta1.yaml",
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(claims(&plan), [("default".into(), "c5.xlarge".into(), 1)]);
    let pending = unschedulable(&plan);
    assert_eq!(pending[0].0, "default/scratch-290");
    assert!(
        pending[0].1.contains("262623299Ki (~250.5Gi)"),
        "{pending:?}"
    );
}
