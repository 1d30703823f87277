//! The live buffer read (core v1.14.1 `pkg/utils/apps/resolve.go`, `capacitybuffer/
//! controller.go` `resolveAndUpdateStatus`; `capacitybuffer/suite_test.go` "PodTemplateRef" /
//! "ScalableRef" resolution) against the fake API.

use serde_json::{json, Value};

use super::*;
use crate::k8s::fake::FakeCluster;
use crate::k8s::Method;
use crate::model::buffer::ReadyReason;

fn buffer(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
           "metadata": {"name": name, "namespace": "team"}, "spec": spec})
}

fn template(cpu: &str) -> Value {
    json!({"metadata": {"labels": {"app": "buf"}},
           "spec": {"containers": [{"name": "c", "image": "i",
                                    "resources": {"requests": {"cpu": cpu}}}]}})
}

fn cluster() -> FakeCluster {
    let c = FakeCluster::new().serve("autoscaling.x-k8s.io/v1beta1", &["capacitybuffers"]);
    c.put(json!({"apiVersion": "v1", "kind": "PodTemplate",
                 "metadata": {"name": "t", "namespace": "team"}, "template": template("2")}));
    for (name, replicas) in [("web", 4), ("unrelated", 9)] {
        c.put(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": name, "namespace": "team"},
                     "spec": {"replicas": replicas, "template": template("1")}}));
    }
    c.put(buffer(
        "fixed",
        json!({"podTemplateRef": {"name": "t"}, "replicas": 2}),
    ));
    c.put(buffer(
        "half",
        json!({"scalableRef": {"kind": "Deployment", "name": "web"}, "percentage": 50}),
    ));
    c.put(buffer(
        "lost",
        json!({"scalableRef": {"kind": "Deployment", "name": "gone"}, "replicas": 1}),
    ));
    c.put(buffer(
        "job",
        json!({"scalableRef": {"apiGroup": "batch", "kind": "Job", "name": "j"}, "replicas": 1}),
    ));
    c
}

fn by_name<'a>(read: &'a LiveBuffers, name: &str) -> &'a ResolvedBuffer {
    read.buffers.iter().find(|b| b.buffer.name == name).unwrap()
}

/// Each buffer resolved as the controller does — PodTemplate, Deployment with a percentage,
/// a missing Deployment (`ScalableRefNotFound`), another group (`ResolutionFailed`) — reading
/// only the objects named, one GET each.
#[test]
fn buffers_are_resolved_reading_only_what_they_name() {
    let c = cluster();
    let read = read(&c).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    assert_eq!(by_name(&read, "fixed").status.replicas, Some(2));
    assert_eq!(by_name(&read, "half").status.replicas, Some(2));
    assert_eq!(
        by_name(&read, "half")
            .template
            .as_ref()
            .unwrap()
            .requests
            .get("cpu"),
        1000
    );
    assert_eq!(
        by_name(&read, "lost").status.ready,
        ReadyReason::ScalableRefNotFound
    );
    assert_eq!(
        by_name(&read, "job").status.ready,
        ReadyReason::ResolutionFailed("unsupported scalableRef API group \"batch\"".into())
    );
    let lines: Vec<String> = c.requests().iter().map(|r| r.line()).collect();
    assert_eq!(
        lines,
        [
            "GET /apis/autoscaling.x-k8s.io/v1beta1/capacitybuffers",
            "GET /apis/apps/v1/namespaces/team/deployments/gone",
            "GET /apis/apps/v1/namespaces/team/deployments/web",
            "GET /api/v1/namespaces/team/podtemplates/t",
        ]
    );
}

/// No CRD (404) or no permission to list (403): one warning, no buffer, no error.
#[test]
fn a_missing_crd_or_a_forbidden_list_is_one_warning() {
    let read = read(&FakeCluster::new()).unwrap();
    assert!(read.buffers.is_empty());
    assert_eq!(read.warnings.len(), 1);
    assert!(read.warnings[0].contains("serves no autoscaling.x-k8s.io/v1beta1 CapacityBuffers"));
    let c = cluster();
    c.fail_with(Method::Get, "capacitybuffers", 1, 403, "forbidden");
    let read = super::read(&c).unwrap();
    assert!(read.buffers.is_empty());
    assert_eq!(read.warnings.len(), 1);
    assert!(
        read.warnings[0].starts_with("cannot list capacitybuffers"),
        "{:?}",
        read.warnings
    );
}

/// A named object the identity may not read: its buffers are left out, said once.
#[test]
fn a_forbidden_reference_leaves_its_buffers_out() {
    let c = cluster();
    c.fail_with(Method::Get, "podtemplates/t", 1, 403, "forbidden");
    let read = read(&c).unwrap();
    assert!(read.buffers.iter().all(|b| b.buffer.name != "fixed"));
    assert_eq!(read.buffers.len(), 3);
    assert_eq!(read.warnings.len(), 1);
    assert!(
        read.warnings[0].starts_with("cannot read PodTemplate team/t"),
        "{:?}",
        read.warnings
    );
}
