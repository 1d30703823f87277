//! The provisioning-side Its the earlier replays left unmirrored (docs/upstream-tests.md
//! "Provisioning Its left unmirrored, audited (s24-audit-sched)"), each replayed by one
//! `provision --dry-run -f - -o json --catalog` run: core v1.14.1
//! `pkg/controllers/provisioning/scheduling/suite_test.go` (DRA pods under the default
//! `--ignore-dra-requests`), `pkg/cloudprovider/suite_test.go` (hugepages and allocatable), aws
//! v1.14.1 `pkg/cloudprovider/suite_test.go` (a node class not ready, unknown, or not reconciled).

use serde_json::{json, Value};

use crate::support::{fixture, provision_json};
use crate::upstream_scheduling_binary::{
    any_capacity, class, daemonset, plan, plan_on, pod, pool, selector, sized, Plan, INSTANCE_TYPE,
};

const NODEPOOL: &str = "karpenter.sh/nodepool";

/// A container's (or init container's) `resources.claims` entry.
fn claims(name: &str) -> Value {
    json!({"claims": [{"name": name}]})
}

/// scheduling/suite_test.go › Dynamic Resource Allocation (DRA) › DescribeTable "should handle
/// DRA pods correctly" (4 Entries): a pod with a container's resource claim, an init container's,
/// or both gets no NodeClaim and a DRA error (ours: `Unsupported`); a pod without claims gets
/// one NodeClaim. Under the default `--ignore-dra-requests=true` (`HasDRARequirements`).
#[test]
fn dra_pods_get_no_nodeclaim_under_the_default_ignore_dra_requests() {
    let cpu = json!({"cpu": "1", "memory": "1Gi"});
    let init = |claim: Option<&str>| {
        let mut c = json!({"name": "init", "image": "registry.k8s.io/pause",
            "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}});
        if let Some(name) = claim {
            c["resources"]["claims"] = claims(name)["claims"].clone();
        }
        json!({"spec": {"initContainers": [c]}})
    };
    let mut container = sized("container-dra", cpu.clone(), json!({}));
    container["spec"]["containers"][0]["resources"]["claims"] =
        claims("gpu-claim")["claims"].clone();
    container["spec"]["resourceClaims"] =
        json!([{"name": "gpu-claim", "resourceClaimName": "gpu"}]);
    // Only the init container's claim (no pod-level list: `HasDRARequirements` reads each).
    let init_only = sized(
        "init-container-dra",
        cpu.clone(),
        init(Some("gpu-init-claim")),
    );
    let mut both_claims = sized("both-dra", cpu.clone(), init(Some("storage-init-claim")));
    both_claims["spec"]["containers"][0]["resources"]["claims"] =
        claims("gpu-claim")["claims"].clone();
    let plain = sized("non-dra", cpu.clone(), init(None));
    // dra_test.go › Enablement gating (N) "should reject DRA pods with a DRAError when
    // IgnoreDRARequests is enabled (N1)": a pod-level claim only.
    let pod_level = sized(
        "pod-level-dra",
        cpu,
        json!({"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}}),
    );
    // "should handle DaemonSet pods with DRA requirements based on IgnoreDRARequests flag
    // value": a 3-CPU DaemonSet whose pods claim a device reserves nothing, so the 1-CPU pod
    // takes the 2-CPU type (counted, it would need 4 CPUs).
    let mut dra_daemon = daemonset("dra-daemon", json!({"cpu": "3"}), json!({}));
    dra_daemon["spec"]["template"]["spec"]["containers"][0]["resources"]["claims"] =
        claims("gpu-claim")["claims"].clone();
    let p = plan(vec![
        pool("default", vec![any_capacity()], json!({})),
        dra_daemon,
        container,
        init_only,
        both_claims,
        pod_level,
        plain,
    ]);
    p.assert_pending(&[
        "container-dra",
        "init-container-dra",
        "both-dra",
        "pod-level-dra",
    ]);
    for (pod, reason) in p.pending() {
        assert_eq!(reason, "Unsupported", "{pod}: {:#}", p.json);
    }
    assert_eq!(p.claims().len(), 1, "{:#}", p.json);
    assert_eq!(
        p.label("non-dra", INSTANCE_TYPE),
        Some("small-instance-type")
    );
}

/// core pkg/cloudprovider/suite_test.go › Instance Type: "should reserve additional capacity
/// memory for when HugePages is defined resources" (20Gi − 15Gi of hugepages − 1Gi kube-reserved
/// = 4Gi, cpu 4875m) and "should set memory to zero for when HugePages use all the memory on the
/// instance type" (60Gi of hugepages: 0, cpu still 4875m). A pod of exactly 4Gi / 4875m fits the
/// first, 4097Mi does not; on the second a pod asking any memory is refused, a CPU-only pod fits.
#[test]
fn hugepages_come_off_allocatable_memory_down_to_zero() {
    let on = |ty: &str| selector(&[(INSTANCE_TYPE, ty)]);
    let p = plan_on(
        &fixture("audit-sched/hugepages.yaml"),
        vec![
            pool("default", vec![any_capacity()], json!({})),
            sized(
                "some-exact",
                json!({"cpu": "4875m", "memory": "4Gi"}),
                on("hugepages-some"),
            ),
            sized(
                "some-over",
                json!({"memory": "4097Mi"}),
                on("hugepages-some"),
            ),
            sized("all-memory", json!({"memory": "1Mi"}), on("hugepages-all")),
            sized("all-cpu", json!({"cpu": "4875m"}), on("hugepages-all")),
        ],
    );
    p.assert_pending(&["some-over", "all-memory"]);
    assert_eq!(p.label("some-exact", INSTANCE_TYPE), Some("hugepages-some"));
    assert_eq!(p.label("all-cpu", INSTANCE_TYPE), Some("hugepages-all"));
}

/// An EC2NodeClass `name` (the suite's default spec) with `metadata.generation` 2 and a `Ready`
/// condition of `status`, observed at `observed`.
fn class_at(name: &str, status: &str, observed: i64) -> Value {
    let mut c = class();
    c["metadata"] = json!({"name": name, "generation": 2});
    c["status"] = json!({"conditions": [{"type": "Ready", "status": status,
        "reason": if status == "True" { "Ready" } else { "NodeClassNotReady" },
        "message": if status == "True" { "" } else { "NodeClass not ready" },
        "observedGeneration": observed}]});
    c
}

/// aws pkg/cloudprovider/suite_test.go: "should not proceed with instance creation if NodeClass
/// is unknown", "should return NodeClassNotReady error on creation if NodeClass is not ready",
/// "should return NodeClassNotReady error when observed generation doesn't match" — each pool
/// (its `Ready` True, as the readiness controller leaves it for a stale class) takes no pod; a
/// class observed at its generation launches.
#[test]
fn a_class_unknown_not_ready_or_not_reconciled_launches_nothing() {
    let on_class = |pool_name: &str, class_name: &str| {
        let mut p = pool(
            pool_name,
            vec![any_capacity()],
            json!({"spec": {"nodeClassRef": {"name": class_name}}}),
        );
        p["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        p
    };
    let to = |pool_name: &str| pod(pool_name, selector(&[(NODEPOOL, pool_name)]));
    let mut objects = vec![
        on_class("unknown", "unknown"),
        class_at("unknown", "Unknown", 2),
        on_class("not-ready", "not-ready"),
        class_at("not-ready", "False", 2),
        on_class("stale", "stale"),
        class_at("stale", "True", 1),
        on_class("fresh", "fresh"),
        class_at("fresh", "True", 2),
    ];
    objects.extend(["unknown", "not-ready", "stale", "fresh"].map(to));
    // The warnings naming why each pool was left out are on stderr.
    let run = crate::upstream_overlay_binary::run("s19-bsched/fake-catalog.yaml", objects);
    let p = Plan {
        code: run.code,
        json: run.json,
    };
    p.assert_pending(&["unknown", "not-ready", "stale"]);
    assert_eq!(p.label("fresh", NODEPOOL), Some("fresh"));
    for why in [
        "NodePool/unknown: not Ready (NodeClassReady=False, NodeClassReadinessUnknown",
        "NodePool/not-ready: not Ready (NodeClassReady=False, EC2NodeClass/not-ready is not Ready",
        "NodePool/stale: not Ready (NodeClassNotReady: EC2NodeClass/stale status has not been reconciled against the latest spec (Ready observed generation 1, metadata.generation 2))",
    ] {
        assert!(run.stderr.contains(why), "{why}\n{}", run.stderr);
    }
}

/// `provision --dry-run` of `objects` on the embedded catalog (the AWS types).
fn plan_embedded(objects: Vec<Value>) -> Plan {
    let (code, json) = provision_json(&["--region", "us-east-1"], objects);
    Plan { code, json }
}

/// aws pkg/providers/instancetype/compatibility/suite_test.go › AMIFamilyCompatibility,
/// DescribeTable "should handle various instance types across different AMI families" (6
/// Entries): a1.medium and a1.large run a Custom AMI, t3.medium a Custom or AL2023 AMI, a1.large
/// Bottlerocket, and a1.medium no AL2023. One pool per family allowing those three types; an
/// arm64 pod (the a1s) and a t3.medium pod on each.
#[test]
fn a1_types_run_every_ami_family_but_al2023() {
    let family = |name: &str, terms: Value| {
        let mut c = class();
        c["metadata"]["name"] = json!(name);
        c["spec"]["amiSelectorTerms"] = terms;
        if name == "custom" {
            c["spec"]["amiFamily"] = json!("Custom");
            c["spec"]["userData"] = json!("#!/bin/bash\n");
        }
        c
    };
    let types = crate::upstream_scheduling_binary::req(
        INSTANCE_TYPE,
        "In",
        &["a1.medium", "a1.large", "t3.medium"],
    );
    let mut objects = vec![
        family("custom", json!([{"id": "ami-0123456789abcdef0"}])),
        family("al2023", json!([{"alias": "al2023@latest"}])),
        family("bottlerocket", json!([{"alias": "bottlerocket@latest"}])),
    ];
    for name in ["custom", "al2023", "bottlerocket"] {
        objects.push(pool(
            name,
            vec![types.clone()],
            json!({"spec": {"nodeClassRef": {"name": name}}}),
        ));
        let on = |extra: (&str, &str)| selector(&[(NODEPOOL, name), extra]);
        objects.push(sized(
            &format!("{name}-a1"),
            json!({"cpu": "100m"}),
            on(("kubernetes.io/arch", "arm64")),
        ));
        objects.push(sized(
            &format!("{name}-t3"),
            json!({"cpu": "100m"}),
            on((INSTANCE_TYPE, "t3.medium")),
        ));
    }
    let p = plan_embedded(objects);
    p.assert_pending(&["al2023-a1"]);
    for pod in ["custom-a1", "bottlerocket-a1"] {
        let options = &p.claim(pod)["instanceTypes"];
        assert_eq!(
            options,
            &json!(["a1.medium", "a1.large"]),
            "{pod}: {:#}",
            p.json
        );
    }
    for pod in ["custom-t3", "al2023-t3", "bottlerocket-t3"] {
        assert_eq!(p.label(pod, INSTANCE_TYPE), Some("t3.medium"), "{pod}");
    }
}
