//! The buffer controller's arithmetic and the virtual pods, each test citing its upstream It.

use super::*;

fn requests(pairs: &[(&str, &str)]) -> Resources {
    let mut r = Resources::from_pairs(pairs);
    r.set(PODS, 1000); // a model pod's requests hold its pod count, which no limit reads
    r
}

fn limits(pairs: &[(&str, &str)]) -> Vec<(String, i64)> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                crate::model::quantity::parse_milli(v).unwrap(),
            )
        })
        .collect()
}

fn template(pairs: &[(&str, &str)]) -> Pod {
    let mut pod = Pod::default();
    pod.requests = requests(pairs);
    pod
}

fn buffer(reference: BufferRef) -> CapacityBuffer {
    CapacityBuffer {
        namespace: "default".into(),
        name: "cb".into(),
        uid: "uid".into(),
        provisioning_strategy: "buffer.x-k8s.io/active-capacity".into(),
        reference,
        ..CapacityBuffer::default()
    }
}

fn deployment() -> BufferRef {
    BufferRef::Scalable {
        api_group: String::new(),
        kind: "Deployment".into(),
        name: "d".into(),
    }
}

/// Limits, requests, the replicas expected and the It.
type LimitCase<'a> = (
    &'a [(&'a str, &'a str)],
    &'a [(&'a str, &'a str)],
    Option<i32>,
    &'a str,
);

/// core v1.14.1 `pkg/controllers/capacitybuffer/helpers_test.go` "calculateLimitReplicas" (11 Its).
#[test]
fn upstream_limit_replicas() {
    let cases: &[LimitCase] = &[
        (
            &[("cpu", "4")],
            &[("cpu", "1")],
            Some(4),
            "should calculate replicas based on CPU limits",
        ),
        (
            &[("memory", "2Gi")],
            &[("memory", "512Mi")],
            Some(4),
            "should calculate replicas based on memory limits",
        ),
        (
            &[("cpu", "8"), ("memory", "4Gi")],
            &[("cpu", "1"), ("memory", "1Gi")],
            Some(4),
            "should take the minimum across multiple resources",
        ),
        (
            &[("cpu", "3")],
            &[("cpu", "1")],
            Some(3),
            "should sum requests across multiple containers (500m + 500m)",
        ),
        (
            &[("cpu", "8")],
            &[("cpu", "4")],
            Some(2),
            "should use init container max if larger than sum of containers",
        ),
        (
            &[("cpu", "6")],
            &[("cpu", "2")],
            Some(3),
            "should use container sum if larger than init containers",
        ),
        (
            &[("cpu", "4")],
            &[],
            None,
            "should return false when pod has no resource requests",
        ),
        (
            &[("memory", "4Gi")],
            &[("cpu", "1")],
            None,
            "should return false when no limit resources match pod requests",
        ),
        (
            &[("cpu", "10")],
            &[("cpu", "3")],
            Some(3),
            "should floor divide (no rounding up)",
        ),
        (
            &[("cpu", "1")],
            &[("cpu", "250m")],
            Some(4),
            "should handle millicore-level precision",
        ),
        (
            &[("cpu", "1")],
            &[("cpu", "2")],
            Some(0),
            "should return 0 when limit is smaller than a single pod request",
        ),
    ];
    for (lim, req, want, it) in cases {
        assert_eq!(limit_replicas(&limits(lim), &requests(req)), *want, "{it}");
    }
    // The pod count is no request (`RequestsForSpec`): a `pods` limit matches nothing.
    assert_eq!(
        limit_replicas(&limits(&[("pods", "3")]), &requests(&[("cpu", "1")])),
        None
    );
}

/// core v1.14.1 `helpers_test.go` "calculatePercentageReplicas" (8 Its).
#[test]
fn upstream_percentage_replicas() {
    for (replicas, pct, want, it) in [
        (10, 20, 2, "should calculate percentage and ceil"),
        (3, 10, 1, "should ceil fractional results"),
        (
            1,
            1,
            1,
            "should return at least 1 when percentage > 0 and replicas > 0",
        ),
        (0, 50, 0, "should return 0 when scalable has 0 replicas"),
        (10, 0, 0, "should return 0 when percentage is 0"),
        (5, 100, 5, "should handle 100 percent"),
        (5, 200, 10, "should handle large percentages (>100)"),
        (1000, 10, 100, "should handle large replica counts"),
    ] {
        assert_eq!(percentage_replicas(replicas, pct), want, "{it}");
    }
}

/// core v1.14.1 `pkg/controllers/capacitybuffer/suite_test.go` "Replica calculation" (9 Entries).
#[test]
fn upstream_replica_calculation() {
    let cpu = template(&[("cpu", "1")]);
    let none = template(&[]);
    let pt = || BufferRef::PodTemplate("pt".into());
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        BufferRef,
        Option<i32>,
        Option<i32>,
        &[(&str, &str)],
        &Pod,
        Option<i32>,
        i32,
        &str,
    )> = vec![
        (
            pt(),
            Some(7),
            None,
            &[],
            &none,
            None,
            7,
            "fixed replicas only",
        ),
        (
            pt(),
            Some(10),
            None,
            &[("cpu", "3")],
            &cpu,
            None,
            3,
            "replicas capped by binding limit",
        ),
        (
            pt(),
            Some(3),
            None,
            &[("cpu", "10")],
            &cpu,
            None,
            3,
            "non-binding limit does not reduce (podTemplateRef)",
        ),
        (
            pt(),
            None,
            None,
            &[("cpu", "5")],
            &cpu,
            None,
            5,
            "limits only",
        ),
        (
            deployment(),
            None,
            Some(20),
            &[],
            &none,
            Some(10),
            2,
            "percentage only",
        ),
        (
            deployment(),
            Some(5),
            Some(20),
            &[],
            &none,
            Some(10),
            5,
            "replicas > percentage",
        ),
        (
            deployment(),
            Some(5),
            Some(80),
            &[],
            &none,
            Some(10),
            8,
            "percentage > replicas",
        ),
        (
            deployment(),
            Some(5),
            Some(80),
            &[("cpu", "4")],
            &cpu,
            Some(10),
            4,
            "max of replicas and percentage capped by limit",
        ),
        (
            deployment(),
            None,
            Some(10),
            &[],
            &none,
            Some(1),
            1,
            "percentage rounds up to a minimum of 1",
        ),
    ];
    for (reference, replicas, percentage, lim, tpl, scalable, want, entry) in cases {
        let mut b = buffer(reference);
        b.replicas = replicas;
        b.percentage = percentage;
        b.limits = limits(lim);
        let found = Resolution::Found {
            template: tpl.clone(),
            scalable_replicas: scalable,
        };
        let s = status(&b, &found);
        assert_eq!(s.ready, ReadyReason::Resolved, "{entry}");
        assert_eq!(s.replicas, Some(want), "{entry}");
    }
}

/// core v1.14.1 `capacitybuffer/suite_test.go` "should set ReadyForProvisioning=False when
/// PodTemplate is not found", "… when scalable ref is not found", "should return error for
/// unsupported kind" / "… API group", "should not touch the cache when a buffer has neither ref
/// set" (`ResolutionFailed`, "Neither podTemplateRef nor scalableRef is set"); and a percentage
/// on a podTemplateRef buffer counts for nothing (`resolveAndUpdateStatus`).
/// Upstream It: "should include scalableRef buffers without Status.PodTemplateRef".
/// Upstream It: "should exclude buffers with neither PodTemplateRef nor ScalableRef".
/// Upstream It: "should exclude buffers with zero replicas".
/// Upstream It: "should exclude buffers without ReadyForProvisioning condition".
/// Upstream It: "should include podTemplateRef buffers with Status.PodTemplateRef set".
#[test]
fn upstream_unresolved_buffers_are_not_ready() {
    let pt = buffer(BufferRef::PodTemplate("pt".into()));
    assert_eq!(
        status(&pt, &Resolution::NotFound).ready,
        ReadyReason::PodTemplateNotFound
    );
    let d = buffer(deployment());
    assert_eq!(
        status(&d, &Resolution::NotFound).ready,
        ReadyReason::ScalableRefNotFound
    );
    let failed = status(&d, &Resolution::Failed("unsupported kind \"Job\"".into()));
    assert_eq!(failed.ready.code(), "ResolutionFailed");
    assert!(!failed.provisions());
    let neither = status(&buffer(BufferRef::None), &Resolution::NotFound);
    assert_eq!(
        neither.ready,
        ReadyReason::ResolutionFailed("Neither podTemplateRef nor scalableRef is set".into())
    );
    let mut pct = buffer(BufferRef::PodTemplate("pt".into()));
    pct.percentage = Some(50);
    let found = Resolution::Found {
        template: template(&[("cpu", "1")]),
        scalable_replicas: None,
    };
    let s = status(&pct, &found);
    assert_eq!((s.replicas, s.provisions()), (Some(0), false));
    assert_eq!(s.pod_template.as_deref(), Some("pt"));
}

/// core v1.14.1 `pkg/state/virtualpods/utilities_test.go` "should create the correct number of
/// pods with expected metadata", "should produce deterministic UIDs across calls", "should
/// return nil for zero replicas", "should drop PVC volumes and their mounts" / "ephemeral" /
/// "both", "should preserve tolerations, nodeSelector, and affinity".
/// Upstream It: "should create the correct number of pods with expected metadata".
/// Upstream It: "should return nil for zero replicas".
/// Upstream It: "should drop ephemeral volumes and their mounts".
/// Upstream It: "should drop both PVC and ephemeral volumes together".
/// Upstream It: "should create pods with expected metadata for scalableRef buffers".
#[test]
fn upstream_build_virtual_pods() {
    let b = buffer(BufferRef::PodTemplate("pt".into()));
    let mut tpl = template(&[("cpu", "1")]);
    tpl.labels.insert("app".into(), "web".into());
    tpl.node_selector.insert("zone".into(), "a".into());
    tpl.node_name = Some("n1".into());
    tpl.volumes.push(crate::model::pod::PodVolume {
        name: "data".into(),
        claim: crate::model::pod::ClaimSource::Named("pvc".into()),
    });
    let pods = virtual_pods(&b, &tpl, 3, "2026-01-01T00:00:00Z");
    let names: Vec<_> = pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "capacity-buffer-cb-1",
            "capacity-buffer-cb-2",
            "capacity-buffer-cb-3"
        ]
    );
    let uids: Vec<_> = pods.iter().map(|p| p.uid.as_str()).collect();
    assert_eq!(uids, ["uid-1", "uid-2", "uid-3"]);
    let p = &pods[0];
    assert_eq!(p.namespace, "default");
    assert_eq!(p.buffer.as_deref(), Some("default/cb"));
    assert_eq!(p.priority, Some(i32::MIN));
    assert!(p.is_provisionable());
    assert_eq!((p.node_name.as_deref(), p.volumes.len()), (None, 0));
    assert_eq!(p.labels.get("app").map(String::as_str), Some("web"));
    assert_eq!(p.node_selector.get("zone").map(String::as_str), Some("a"));
    assert_eq!(p.requests.get("cpu"), 1000);
    assert_eq!(
        virtual_pods(&b, &tpl, 3, "x"),
        virtual_pods(&b, &tpl, 3, "x")
    );
    assert!(virtual_pods(&b, &tpl, 0, "x").is_empty());
}
